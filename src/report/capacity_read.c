/* capacity_read: OUT/capacity.json, as `servelab capacity` writes it, read
 * into the report's answer. Only the keys the sentence and summary.json
 * need are read; a missing number is NAN (unknown), never 0. The probes
 * give the lowest and highest load tried: each probe's load is its first
 * number among rate_rps, offered_rps, rate and concurrency. */
#include "report/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static double num_or_nan(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void copy_string(char *dst, size_t cap, json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    snprintf(dst, cap, "%s", s ? s : "");
}

static void read_probes(json_t *probes, report_answer *a) {
    static const char *const keys[] = {"rate_rps", "offered_rps", "rate", "concurrency"};
    a->lowest = INFINITY;
    a->highest = -INFINITY;
    a->probes = (int)json_array_size(probes);
    for (size_t i = 0; i < json_array_size(probes); i++) {
        json_t *p = json_array_get(probes, i);
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            double v = num_or_nan(p, keys[k]);
            if (isfinite(v)) {
                a->lowest = fmin(a->lowest, v);
                a->highest = fmax(a->highest, v);
                break;
            }
        }
    }
    if (a->lowest > a->highest)
        a->lowest = a->highest = NAN;
}

/* The status and the unit; -1 with the reason when either is not one
 * servelab writes. */
static int read_kind(json_t *root, report_answer *a, char *err, int errlen) {
    copy_string(a->status, sizeof a->status, root, "status");
    copy_string(a->by, sizeof a->by, root, "by");
    if (!a->by[0])
        snprintf(a->by, sizeof a->by, "rate");
    if (strcmp(a->by, "rate") && strcmp(a->by, "concurrency")) {
        snprintf(err, errlen, "\"by\" is \"%s\", not rate or concurrency", a->by);
        return -1;
    }
    if (strcmp(a->status, "found") && strcmp(a->status, "not_reached") &&
        strcmp(a->status, "missed_at_lowest")) {
        snprintf(err, errlen, "\"status\" is \"%s\", not found, not_reached or missed_at_lowest",
                 a->status);
        return -1;
    }
    return 0;
}

int capacity_read(const char *dir, report_answer *a, char *err, int errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/capacity.json", dir);
    if (access(path, F_OK))
        return 0;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!json_is_object(root)) {
        snprintf(err, errlen, "%s: %s", path, root ? "not an object" : je.text);
        json_decref(root);
        return -1;
    }
    memset(a, 0, sizeof *a);
    if (read_kind(root, a, err, errlen)) {
        json_decref(root);
        return -1;
    }
    int conc = !strcmp(a->by, "concurrency");
    a->present = 1;
    snprintf(a->source, sizeof a->source, "capacity.json");
    a->goal = num_or_nan(root, "goal");
    if (!(a->goal > 0 && a->goal < 1))
        a->goal = ANSWER_DEFAULT_GOAL;
    json_t *slo = json_object_get(root, "slo");
    double b[4] = {num_or_nan(slo, "ttft_ms"), num_or_nan(slo, "tpot_ms"),
                   num_or_nan(slo, "e2e_ms"), num_or_nan(slo, "ttfa_ms")};
    a->slo = (slo_spec){b[0] > 0 ? b[0] : 0, b[1] > 0 ? b[1] : 0, b[2] > 0 ? b[2] : 0,
                        b[3] > 0 ? b[3] : 0};
    copy_string(a->binding, sizeof a->binding, root, "binding");
    a->value = num_or_nan(root, conc ? "max_concurrency" : "max_rate_rps");
    a->ci_low = num_or_nan(root, conc ? "ci_low_concurrency" : "ci_low_rps");
    a->ci_high = num_or_nan(root, conc ? "ci_high_concurrency" : "ci_high_rps");
    a->bracket_lo = a->bracket_hi = a->share_at_lo = a->share_at_hi = NAN;
    json_t *at = json_object_get(root, "at_answer");
    a->at_in_flight = num_or_nan(at, "concurrency_in_flight");
    a->at_goodput_rps = num_or_nan(at, "goodput_rps");
    a->at_tokens_per_s = num_or_nan(at, "output_tokens_per_s");
    a->wall_s = num_or_nan(root, "wall_s");
    read_probes(json_object_get(root, "probes"), a);
    json_decref(root);
    return 1;
}
