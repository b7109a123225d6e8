/* capacity_read: OUT/capacity.json, as `servelab capacity` or `predict
 * --capacity` writes it, read back into the answer it was written from
 * (model/answer.h's answer_read), so the report says the same sentence.
 * Beside it the report keeps the lowest and highest load tried: each
 * probe's load is its first number among rate_rps, offered_rps, rate and
 * concurrency (predict's levels: load). */
#include "report/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void read_loads(const json_t *probes, report_answer *a) {
    static const char *const keys[] = {"rate_rps", "offered_rps", "rate", "concurrency", "load"};
    a->lowest = INFINITY;
    a->highest = -INFINITY;
    for (size_t i = 0; i < json_array_size(probes); i++) {
        json_t *p = json_array_get(probes, i);
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            json_t *v = json_object_get(p, keys[k]);
            if (json_is_number(v) && isfinite(json_number_value(v))) {
                a->lowest = fmin(a->lowest, json_number_value(v));
                a->highest = fmax(a->highest, json_number_value(v));
                break;
            }
        }
    }
    if (a->lowest > a->highest)
        a->lowest = a->highest = NAN;
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
    if (answer_read(root, &a->a, err, errlen)) {
        json_decref(root);
        return -1;
    }
    a->present = 1;
    if (!(a->a.goal > 0 && a->a.goal < 1))
        a->a.goal = ANSWER_DEFAULT_GOAL;
    json_t *probes = json_object_get(root, "probes");
    read_loads(probes ? probes : json_object_get(root, "levels"), a);
    answer_sentence(&a->a, a->sentence, sizeof a->sentence);
    json_decref(root);
    return 1;
}
