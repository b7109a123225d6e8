/* slo: the SLO's text, YAML, human and JSON forms (see slo.h). The bounds
 * are walked through one table, so that a fifth bound would be one row. */
#include "model/slo.h"

#include "common/util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[SLO_BOUNDS] = {"ttft", "tpot", "e2e", "ttfa"};
static const char *const upper[SLO_BOUNDS] = {"TTFT", "TPOT", "E2E", "TTFA"};
static const char *const ms_keys[SLO_BOUNDS] = {"ttft_ms", "tpot_ms", "e2e_ms", "ttfa_ms"};

static double *bound_at(slo_spec *s, int b) {
    return b == 1 ? &s->tpot_ms : b == 2 ? &s->e2e_ms : b == 3 ? &s->ttfa_ms : &s->ttft_ms;
}

double slo_bound_ms(const slo_spec *slo, int b) {
    return *bound_at((slo_spec *)slo, b);
}

int slo_has_bound(const slo_spec *slo) {
    for (int b = 0; b < SLO_BOUNDS; b++)
        if (slo_bound_ms(slo, b) > 0)
            return 1;
    return 0;
}

const char *slo_bound_name(int b) {
    return b >= 0 && b < SLO_BOUNDS ? names[b] : names[0];
}

static int bound_of(const char *name, const char *const *table) {
    for (int b = 0; b < SLO_BOUNDS; b++)
        if (!strcmp(name, table[b]))
            return b;
    return -1;
}

/* A bound's duration: a finite number > 0 with its unit (ms, s, m or us);
 * a bare number is refused, since "ttft=500" reads as 500 ms to some and
 * 500 s to others. */
static int slo_duration(const char *s, double *ms) {
    size_t n = strlen(s);
    int unit = (n > 2 && (!strcmp(s + n - 2, "ms") || !strcmp(s + n - 2, "us"))) ||
               (n > 1 && (s[n - 1] == 's' || s[n - 1] == 'm'));
    return unit && !parse_duration_ms(s, ms) && isfinite(*ms) && *ms > 0 ? 0 : -1;
}

int slo_parse(const char *text, slo_spec *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    char *copy = xstrdup(text), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        double ms;
        if (!eq || slo_duration(eq + 1, &ms)) {
            snprintf(err, errlen,
                     "--slo: '%s' is not NAME=DURATION with a unit (e.g. ttft=750ms, e2e=30s)", t);
            rc = -1;
            break;
        }
        *eq = 0;
        int b = bound_of(t, names);
        if (b < 0) {
            snprintf(err, errlen, "--slo: unknown bound '%s' (ttft, tpot, e2e, ttfa)", t);
            rc = -1;
        } else if (*bound_at(out, b) > 0) {
            snprintf(err, errlen, "--slo: %s is given twice", t);
            rc = -1;
        } else {
            *bound_at(out, b) = ms;
        }
    }
    free(copy);
    return rc;
}

/* The map form's keys: the bounds in ms, then as durations. */
static const char *const map_keys[] = {"ttft_ms", "tpot_ms", "e2e_ms", "ttfa_ms", "ttft",
                                       "tpot",    "e2e",     "ttfa",   NULL};

static const opt_def ms_rows[SLO_BOUNDS] = {
    {.name = "ttft_ms", .type = OPT_NUMBER, OPT_AT(slo_spec, ttft_ms), .above = 1},
    {.name = "tpot_ms", .type = OPT_NUMBER, OPT_AT(slo_spec, tpot_ms), .above = 1},
    {.name = "e2e_ms", .type = OPT_NUMBER, OPT_AT(slo_spec, e2e_ms), .above = 1},
    {.name = "ttfa_ms", .type = OPT_NUMBER, OPT_AT(slo_spec, ttfa_ms), .above = 1},
};

/* One pair of the map form into *slo; `given` keeps the bounds this map
 * set, so that ttft_ms and ttft in one map are refused. */
static int read_pair(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *path,
                     slo_spec *slo, int *given) {
    const char *name = yread_text(k);
    int b = bound_of(name, ms_keys), in_ms = b >= 0;
    if (!in_ms)
        b = bound_of(name, names);
    if (*given & (1 << b))
        return yread_fail(y, k, path, "the %s bound is given twice", names[b]);
    *given |= 1 << b;
    if (in_ms)
        return yread_set(y, k, v, path, &ms_rows[b], slo);
    const char *text = yread_scalar(y, k, v, path, "a duration with its unit (e.g. 750ms)");
    double ms;
    if (!text)
        return -1;
    if (slo_duration(text, &ms))
        return yread_fail(y, k, path,
                          "expected a duration with its unit (e.g. 750ms, 30s), got '%s'", text);
    *bound_at(slo, b) = ms;
    return 0;
}

int slo_read_yaml(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                  slo_spec *slo) {
    if (v->type == YAML_SCALAR_NODE && !yread_is_null(v)) {
        char err[512];
        if (slo_parse(yread_text(v), slo, err, sizeof err))
            return yread_fail(y, k, key, "%s", err + strlen("--slo: "));
        return 0;
    }
    if (v->type != YAML_MAPPING_NODE)
        return yread_expected(y, k, key, v, "a text like \"ttft=750ms,tpot=100ms\" or a map");
    if (yread_check_keys(y, v, key, map_keys))
        return -1;
    int given = 0;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *pk = yread_node(y, p->key), *pv = yread_node(y, p->value);
        char path[KEY_PATH_LEN];
        yread_join(path, key, yread_text(pk));
        if (read_pair(y, pk, pv, path, slo, &given))
            return -1;
    }
    return 0;
}

/* ms in the fewest digits (%g's six, or more) that read back as ms. */
static void shortest(double ms, char *buf, size_t n) {
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, ms);
        if (strtod(buf, NULL) == ms)
            return;
    }
}

void slo_format(const slo_spec *slo, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int b = 0; b < SLO_BOUNDS && used < n; b++)
        if (slo_bound_ms(slo, b) > 0) {
            char num[32];
            shortest(slo_bound_ms(slo, b), num, sizeof num);
            used +=
                (size_t)snprintf(buf + used, n - used, "%s%s=%sms", used ? "," : "", names[b], num);
        }
}

void slo_bound_human(const slo_spec *slo, int b, char *buf, size_t n) {
    if (b < 0 || b >= SLO_BOUNDS)
        b = 0;
    double ms = slo_bound_ms(slo, b);
    if (ms >= 10000 && fmod(ms, 1000) == 0)
        snprintf(buf, n, "%s <= %g s", upper[b], ms / 1000);
    else
        snprintf(buf, n, "%s <= %g ms", upper[b], ms);
}

void slo_human(const slo_spec *slo, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int b = 0; b < SLO_BOUNDS && used < n; b++)
        if (slo_bound_ms(slo, b) > 0) {
            char one[64];
            slo_bound_human(slo, b, one, sizeof one);
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", one);
        }
}

json_t *slo_json(const slo_spec *slo, int form) {
    json_t *j = json_object();
    for (int b = 0; b < SLO_BOUNDS; b++) {
        double ms = slo_bound_ms(slo, b);
        if (ms > 0)
            json_object_set_new(j, ms_keys[b], json_real(ms));
        else if (form == SLO_JSON_THREE && b < 3)
            json_object_set_new(j, ms_keys[b], json_null());
    }
    return j;
}

void slo_from_json(const json_t *j, slo_spec *slo) {
    memset(slo, 0, sizeof *slo);
    for (int b = 0; b < SLO_BOUNDS; b++) {
        json_t *v = json_object_get(j, ms_keys[b]);
        if (json_is_number(v) && json_number_value(v) > 0)
            *bound_at(slo, b) = json_number_value(v);
    }
}
