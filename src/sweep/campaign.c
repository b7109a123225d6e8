/* campaign: loads a sweep's YAML file and validates it completely before
 * anything runs (see campaign.h for the resolved form).
 *
 * Two passes over the text. The first streams libyaml's events only to catch
 * what its document loader would hide: syntax errors (with their line),
 * aliases (the loader silently shares the anchored node, and YAML's `<<`
 * merge key is not implemented, so they would not mean what a reader
 * expects) and a second document (the loader would read only the first). The
 * second pass loads the node tree and walks it against a fixed schema.
 *
 * libyaml hands every scalar over as an untyped string, so each key decides
 * its own type: integers through parse_int, numbers through parse_double,
 * seconds through parse_duration_ms. Quoting does not matter, except that an
 * unquoted empty value, ~ or null counts as no value. libyaml also accepts
 * duplicate keys, so every map's keys are checked (known, not repeated)
 * before any of its values is read.
 *
 * Resolution: the top-level keys fill campaign.defaults; each run starts from
 * a deep copy of them and applies its own keys on top, so workload and slo
 * override key by key. requests and duration exclude each other: a map that
 * sets one clears the other it inherited.
 *
 * The first error stops the load. Its message is one line,
 * "PATH:LINE: KEY: what is wrong", where KEY is a dotted path (runs[2].rate)
 * and LINE the line of that key; a missing key is reported at the line of
 * the map that lacks it, with the map's path as KEY. */
#include "sweep/campaign.h"
#include "common/util.h"
#include "common/strbuf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define KEY_PATH_LEN 256

typedef struct ctx {
    yaml_document_t *doc;
    const char *name; /* the file, in messages */
    char *err;
    size_t errlen;
} ctx;

/* One map of parameters (the top level or a run) while it is read. */
typedef struct level {
    run_params *p;
    double slo[3];                  /* ttft, tpot, e2e in ms; 0 = unset */
    const yaml_node_t *requests_at; /* this map's own requests key, if any */
    const yaml_node_t *duration_at;
} level;

/* The keys a run may set, which the top level sets as defaults. */
#define PARAM_KEYS                                                                                 \
    "api", "model", "workload", "requests", "duration", "rate", "arrival", "burstiness",           \
        "concurrency", "repetitions", "warmup", "seed", "timeout", "slo", "cost_per_hour",         \
        "server_args", "metrics_interval", "threads", "http_client"

static const char *const top_keys[] = {"name", "target", PARAM_KEYS, "runs", NULL};
static const char *const run_keys[] = {"name", PARAM_KEYS, NULL};
static const char *const workload_keys[] = {"prompts", "mix", "max_tokens", "ignore_eos", NULL};
static const char *const slo_keys[] = {"ttft_ms", "tpot_ms", "e2e_ms", NULL};
static const char *const slo_names[] = {"ttft", "tpot", "e2e"};
static const char *const target_keys[] = {"url", "sim", "server", NULL};
static const char *const server_keys[] = {"command",      "health",  "ready_timeout_s",
                                          "stop_grace_s", "restart", NULL};
static const char *const api_names[] = {"completions", "chat", NULL};
static const char *const arrival_names[] = {"poisson", "gamma", "constant", NULL};
static const char *const restart_names[] = {"on_change", "always", NULL};
static const char *const http_client_names[] = {"auto", "builtin", "libcurl", NULL};

/* ---- messages ---- */

static int line_of(const yaml_node_t *n) {
    return n ? (int)n->start_mark.line + 1 : 1;
}

static int vfail(ctx *x, int line, const char *key, const char *fmt, va_list ap) {
    if (!x->err || !x->errlen)
        return -1;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (key && *key)
        snprintf(x->err, x->errlen, "%s:%d: %s: %s", x->name, line, key, msg);
    else
        snprintf(x->err, x->errlen, "%s:%d: %s", x->name, line, msg);
    /* Keys and values quoted from the file may hold newlines or tabs. */
    for (char *s = x->err; *s; s++)
        if ((unsigned char)*s < 0x20)
            *s = ' ';
    return -1;
}

__attribute__((format(printf, 4, 5))) static int fail_line(ctx *x, int line, const char *key,
                                                           const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(x, line, key, fmt, ap);
    va_end(ap);
    return -1;
}

/* An error at node `at` (a key, for anything about that key's value). */
__attribute__((format(printf, 4, 5))) static int fail(ctx *x, const yaml_node_t *at,
                                                      const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(x, line_of(at), key, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- nodes ---- */

static yaml_node_t *node(ctx *x, int index) {
    return yaml_document_get_node(x->doc, index);
}

static const char *text(const yaml_node_t *n) {
    return (const char *)n->data.scalar.value;
}

/* An unquoted empty value, ~ or null: YAML's null, which no key accepts
 * (except target.sim, where it means "all defaults"). */
static int is_null(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = text(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* "prefix.key" (or "key" at the top level) into out[KEY_PATH_LEN], cut short
 * if it must be. */
static void join(char *out, const char *prefix, const char *key) {
    size_t n = 0;
    for (const char *s = prefix; *s && n < KEY_PATH_LEN - 1; s++)
        out[n++] = *s;
    if (*prefix && n < KEY_PATH_LEN - 1)
        out[n++] = '.';
    for (const char *s = key; *s && n < KEY_PATH_LEN - 1; s++)
        out[n++] = *s;
    out[n] = 0;
}

static int in_list(const char *const *list, const char *s) {
    for (; *list; list++)
        if (!strcmp(*list, s))
            return 1;
    return 0;
}

/* "expected WHAT, got 'value'" (or "got a map", "got a list", "got no value"). */
static int expected(ctx *x, const yaml_node_t *at, const char *key, const yaml_node_t *v,
                    const char *what) {
    if (v->type == YAML_MAPPING_NODE)
        return fail(x, at, key, "expected %s, got a map", what);
    if (v->type == YAML_SEQUENCE_NODE)
        return fail(x, at, key, "expected %s, got a list", what);
    if (is_null(v))
        return fail(x, at, key, "expected %s, got no value", what);
    const char *s = text(v);
    return fail(x, at, key, "expected %s, got '%.60s%s'", what, s, strlen(s) > 60 ? "..." : "");
}

/* The text of scalar `v` (the value of key `k`), or NULL with the error when
 * it is not a scalar, is null, or hides a NUL byte (a "\0" escape). */
static const char *scalar(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                          const char *what) {
    if (v->type != YAML_SCALAR_NODE || is_null(v)) {
        expected(x, k, key, v, what);
        return NULL;
    }
    if (strlen(text(v)) != v->data.scalar.length) {
        fail(x, k, key, "contains a NUL character");
        return NULL;
    }
    return text(v);
}

/* Every key of map `m` is a scalar, named in `known` (NULL: any name), and
 * given once. */
static int check_keys(ctx *x, const yaml_node_t *m, const char *prefix, const char *const *known) {
    yaml_node_pair_t *start = m->data.mapping.pairs.start;
    for (yaml_node_pair_t *pr = start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key);
        if (k->type != YAML_SCALAR_NODE)
            return fail(x, k, prefix, "keys must be plain names, got a %s",
                        k->type == YAML_MAPPING_NODE ? "map" : "list");
        char path[KEY_PATH_LEN];
        join(path, prefix, text(k));
        if (known && !in_list(known, text(k))) {
            strbuf names = {0};
            for (const char *const *s = known; *s; s++)
                sb_printf(&names, "%s%s", s == known ? "" : ", ", *s);
            fail(x, k, path, "unknown key (known: %s)", names.s);
            sb_free(&names);
            return -1;
        }
        for (yaml_node_pair_t *q = start; q < pr; q++) {
            yaml_node_t *prev = node(x, q->key);
            if (!strcmp(text(prev), text(k)))
                return fail(x, k, path, "duplicate key (first at line %d)", line_of(prev));
        }
    }
    return 0;
}

static int want_map(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key) {
    return v->type == YAML_MAPPING_NODE ? 0 : expected(x, k, key, v, "a map");
}

/* ---- typed values ---- */

static int get_string(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                      int allow_empty, char **out) {
    const char *s = scalar(x, k, v, key, "a string");
    if (!s)
        return -1;
    if (!*s && !allow_empty)
        return fail(x, k, key, "expected a non-empty string");
    free(*out);
    *out = xstrdup(s);
    return 0;
}

static int get_int(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key, long min,
                   long max, long *out) {
    char what[48];
    snprintf(what, sizeof what, "an integer >= %ld", min);
    const char *s = scalar(x, k, v, key, what);
    if (!s)
        return -1;
    long n;
    if (parse_int(s, &n) || n < min)
        return expected(x, k, key, v, what);
    if (n > max)
        return fail(x, k, key, "%ld is too large (at most %ld)", n, max);
    *out = n;
    return 0;
}

/* A finite number, > min when `strict`, else >= min. */
static int get_number(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                      double min, int strict, double *out) {
    char what[48];
    snprintf(what, sizeof what, "a number %s %g", strict ? ">" : ">=", min);
    const char *s = scalar(x, k, v, key, what);
    if (!s)
        return -1;
    double d;
    if (parse_double(s, &d) || !isfinite(d) || d < min || (strict && d == min))
        return expected(x, k, key, v, what);
    *out = d;
    return 0;
}

/* Seconds > 0: a number, or a duration such as "90s", "2m", "500ms". */
static int get_seconds(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                       double *out) {
    const char *what = "seconds > 0 (a number, or like 90s, 2m)";
    const char *s = scalar(x, k, v, key, what);
    if (!s)
        return -1;
    double ms;
    if (parse_duration_ms(s, &ms) || !isfinite(ms) || ms <= 0)
        return expected(x, k, key, v, what);
    *out = ms / 1000;
    return 0;
}

/* true or false only: YAML 1.1's yes/no/on/off are too easy to write by
 * accident (a run named "no"). */
static int get_bool(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key, int *out) {
    const char *s = scalar(x, k, v, key, "true or false");
    if (!s)
        return -1;
    if (strcmp(s, "true") && strcmp(s, "false"))
        return expected(x, k, key, v, "true or false");
    *out = !strcmp(s, "true");
    return 0;
}

static int get_choice(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                      const char *const *choices, char **out) {
    strbuf what = {0};
    sb_puts(&what, "one of ");
    for (const char *const *c = choices; *c; c++)
        sb_printf(&what, "%s%s", c == choices ? "" : ", ", *c);
    const char *s = scalar(x, k, v, key, what.s);
    int rc = -1;
    if (s && in_list(choices, s)) {
        free(*out);
        *out = xstrdup(s);
        rc = 0;
    } else if (s) {
        expected(x, k, key, v, what.s);
    }
    sb_free(&what);
    return rc;
}

/* A positive number or "inf" (every request at t=0). */
static int get_rate(ctx *x, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                    double *out) {
    const char *what = "a positive number or inf";
    const char *s = scalar(x, k, v, key, what);
    if (!s)
        return -1;
    if (!strcmp(s, "inf")) {
        *out = INFINITY;
        return 0;
    }
    double d;
    if (parse_double(s, &d) || !isfinite(d) || d <= 0)
        return expected(x, k, key, v, what);
    *out = d;
    return 0;
}

/* Letters, digits and "._-", as in run names and mix classes (they end up
 * in directory names and in "a=0.5,b=0.5"). */
static int is_word(const char *s) {
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* ---- run parameters ---- */

static char *dup_or_null(const char *s) {
    return s ? xstrdup(s) : NULL;
}

static void params_init(run_params *p) {
    memset(p, 0, sizeof *p);
    p->api = xstrdup("completions");
    p->prompts = xstrdup("builtin");
    p->requests = 100;
    p->rate = INFINITY;
    p->arrival = xstrdup("poisson");
    p->burstiness = 1;
    p->timeout_s = 600;
    p->server_args = xstrdup("");
    p->metrics_interval_s = 1;
    p->repetitions = 1;
    p->threads = 1;
    p->http_client = xstrdup("auto");
}

static void params_copy(run_params *dst, const run_params *src) {
    *dst = *src;
    dst->api = dup_or_null(src->api);
    dst->model = dup_or_null(src->model);
    dst->prompts = dup_or_null(src->prompts);
    dst->mix = dup_or_null(src->mix);
    dst->arrival = dup_or_null(src->arrival);
    dst->slo = dup_or_null(src->slo);
    dst->server_args = dup_or_null(src->server_args);
    dst->http_client = dup_or_null(src->http_client);
}

static void params_free(run_params *p) {
    free(p->api);
    free(p->model);
    free(p->prompts);
    free(p->mix);
    free(p->arrival);
    free(p->slo);
    free(p->server_args);
    free(p->http_client);
    memset(p, 0, sizeof *p);
}

/* workload.mix: class -> weight >= 0, not all zero, kept as "a=0.5,b=0.3". */
static int read_mix(ctx *x, const yaml_node_t *mk, const yaml_node_t *m, const char *prefix,
                    char **out) {
    if (want_map(x, mk, m, prefix) || check_keys(x, m, prefix, NULL))
        return -1;
    strbuf b = {0};
    double sum = 0;
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        char path[KEY_PATH_LEN];
        join(path, prefix, text(k));
        double w;
        if (!is_word(text(k))) {
            sb_free(&b);
            return fail(x, k, path, "class names are letters, digits, '.', '_' or '-'");
        }
        if (get_number(x, k, v, path, 0, 0, &w)) {
            sb_free(&b);
            return -1;
        }
        sum += w;
        sb_printf(&b, "%s%s=%g", b.n ? "," : "", text(k), w);
    }
    if (!(sum > 0)) {
        sb_free(&b);
        return fail(x, mk, prefix, "expected at least one class with a weight > 0");
    }
    free(*out);
    *out = b.s;
    return 0;
}

static int read_workload(ctx *x, level *lv, const yaml_node_t *wk, const yaml_node_t *w,
                         const char *prefix) {
    if (want_map(x, wk, w, prefix) || check_keys(x, w, prefix, workload_keys))
        return -1;
    run_params *p = lv->p;
    for (yaml_node_pair_t *pr = w->data.mapping.pairs.start; pr < w->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        const char *key = text(k);
        char path[KEY_PATH_LEN];
        join(path, prefix, key);
        long n;
        int rc;
        if (!strcmp(key, "prompts")) {
            rc = get_string(x, k, v, path, 0, &p->prompts);
        } else if (!strcmp(key, "mix")) {
            rc = read_mix(x, k, v, path, &p->mix);
        } else if (!strcmp(key, "max_tokens")) {
            rc = get_int(x, k, v, path, 1, INT_MAX, &n);
            if (!rc)
                p->max_tokens = (int)n;
        } else {
            rc = get_bool(x, k, v, path, &p->ignore_eos);
        }
        if (rc)
            return -1;
    }
    return 0;
}

static int read_slo(ctx *x, level *lv, const yaml_node_t *sk, const yaml_node_t *s,
                    const char *prefix) {
    if (want_map(x, sk, s, prefix) || check_keys(x, s, prefix, slo_keys))
        return -1;
    for (yaml_node_pair_t *pr = s->data.mapping.pairs.start; pr < s->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        char path[KEY_PATH_LEN];
        join(path, prefix, text(k));
        int i = 0;
        while (strcmp(slo_keys[i], text(k)))
            i++;
        if (get_number(x, k, v, path, 0, 1, &lv->slo[i]))
            return -1;
    }
    return 0;
}

/* One parameter key (already checked to be known) of a level's map. */
static int apply_param(ctx *x, level *lv, const char *prefix, const yaml_node_t *k,
                       const yaml_node_t *v) {
    run_params *p = lv->p;
    const char *key = text(k);
    char path[KEY_PATH_LEN];
    join(path, prefix, key);
    long n;
    int rc;
    if (!strcmp(key, "api"))
        return get_choice(x, k, v, path, api_names, &p->api);
    if (!strcmp(key, "model"))
        return get_string(x, k, v, path, 0, &p->model);
    if (!strcmp(key, "workload"))
        return read_workload(x, lv, k, v, path);
    if (!strcmp(key, "requests") || !strcmp(key, "duration")) {
        int is_req = key[0] == 'r';
        const yaml_node_t *other = is_req ? lv->duration_at : lv->requests_at;
        if (other)
            return fail(x, k, path, "cannot be combined with %s (line %d): give one of them",
                        is_req ? "duration" : "requests", line_of(other));
        if (is_req) {
            rc = get_int(x, k, v, path, 1, LONG_MAX, &n);
            p->requests = rc ? p->requests : n;
            lv->requests_at = k;
        } else {
            rc = get_seconds(x, k, v, path, &p->duration_s);
            lv->duration_at = k;
        }
        return rc;
    }
    if (!strcmp(key, "rate"))
        return get_rate(x, k, v, path, &p->rate);
    if (!strcmp(key, "arrival"))
        return get_choice(x, k, v, path, arrival_names, &p->arrival);
    if (!strcmp(key, "burstiness"))
        return get_number(x, k, v, path, 0, 1, &p->burstiness);
    if (!strcmp(key, "concurrency") || !strcmp(key, "repetitions") || !strcmp(key, "warmup")) {
        int *out = key[0] == 'c' ? &p->concurrency : key[0] == 'r' ? &p->repetitions : &p->warmup;
        rc = get_int(x, k, v, path, key[0] == 'w' ? 0 : 1, INT_MAX, &n);
        *out = rc ? *out : (int)n;
        return rc;
    }
    if (!strcmp(key, "seed")) {
        rc = get_int(x, k, v, path, 0, LONG_MAX, &n);
        p->seed = rc ? p->seed : (uint64_t)n;
        return rc;
    }
    if (!strcmp(key, "timeout"))
        return get_seconds(x, k, v, path, &p->timeout_s);
    if (!strcmp(key, "slo"))
        return read_slo(x, lv, k, v, path);
    if (!strcmp(key, "cost_per_hour"))
        return get_number(x, k, v, path, 0, 0, &p->cost_per_hour);
    if (!strcmp(key, "server_args"))
        return get_string(x, k, v, path, 1, &p->server_args);
    if (!strcmp(key, "metrics_interval"))
        return get_seconds(x, k, v, path, &p->metrics_interval_s);
    if (!strcmp(key, "threads")) {
        rc = get_int(x, k, v, path, 1, 64, &n);
        p->threads = rc ? p->threads : (int)n;
        return rc;
    }
    if (!strcmp(key, "http_client"))
        return get_choice(x, k, v, path, http_client_names, &p->http_client);
    return fail(x, k, path, "internal error: key not handled");
}

/* After a level's map: the requests/duration choice and the slo string. */
static void finish_level(level *lv) {
    run_params *p = lv->p;
    if (lv->duration_at)
        p->requests = 0;
    if (lv->requests_at)
        p->duration_s = 0;
    free(p->slo);
    p->slo = NULL;
    strbuf b = {0};
    for (int i = 0; i < 3; i++)
        if (lv->slo[i] > 0)
            sb_printf(&b, "%s%s=%gms", b.n ? "," : "", slo_names[i], lv->slo[i]);
    p->slo = b.s;
}

/* ---- target ---- */

static int read_sim(ctx *x, campaign *c, const yaml_node_t *sk, const yaml_node_t *s) {
    const char *prefix = "target.sim";
    c->target = TARGET_SIM;
    c->sim_profile = xstrdup("tiny");
    c->sim_args = xstrdup("");
    if (is_null(s))
        return 0;
    if (want_map(x, sk, s, prefix) || check_keys(x, s, prefix, NULL))
        return -1;
    strbuf args = {0};
    for (yaml_node_pair_t *pr = s->data.mapping.pairs.start; pr < s->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        const char *key = text(k);
        char path[KEY_PATH_LEN];
        join(path, prefix, key);
        int ok = *key && strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(key);
        if (!ok) {
            sb_free(&args);
            return fail(x, k, path, "sim keys are lowercase letters, digits and '_'");
        }
        if (!strcmp(key, "profile")) {
            if (get_string(x, k, v, path, 0, &c->sim_profile)) {
                sb_free(&args);
                return -1;
            }
            continue;
        }
        /* The value becomes one command-line word; true is the bare flag
         * (realtime: true -> --realtime) and false leaves it out. */
        const char *val = scalar(x, k, v, path, "a single value");
        if (!val || !*val || strpbrk(val, " \t\r\n")) {
            if (val)
                expected(x, k, path, v, "a single word");
            sb_free(&args);
            return -1;
        }
        if (!strcmp(val, "false"))
            continue;
        sb_printf(&args, "%s--", args.n ? " " : "");
        for (const char *q = key; *q; q++)
            sb_putn(&args, *q == '_' ? "-" : q, 1);
        if (strcmp(val, "true"))
            sb_printf(&args, " %s", val);
    }
    if (args.s) {
        free(c->sim_args);
        c->sim_args = args.s;
    }
    return 0;
}

static int read_server(ctx *x, campaign *c, const yaml_node_t *sk, const yaml_node_t *s) {
    const char *prefix = "target.server";
    c->target = TARGET_SERVER;
    c->health_path = xstrdup("/health");
    c->ready_timeout_s = 600;
    c->stop_grace_s = 10;
    if (want_map(x, sk, s, prefix) || check_keys(x, s, prefix, server_keys))
        return -1;
    for (yaml_node_pair_t *pr = s->data.mapping.pairs.start; pr < s->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        const char *key = text(k);
        char path[KEY_PATH_LEN];
        join(path, prefix, key);
        if (!strcmp(key, "command")) {
            if (get_string(x, k, v, path, 0, &c->server_command))
                return -1;
            if (!strstr(c->server_command, "{port}"))
                return fail(x, k, path,
                            "must contain {port} (servelab picks the port), got '%.60s'",
                            c->server_command);
        } else if (!strcmp(key, "health")) {
            if (get_string(x, k, v, path, 0, &c->health_path))
                return -1;
            if (c->health_path[0] != '/')
                return fail(x, k, path, "expected a path starting with '/', got '%.60s'",
                            c->health_path);
        } else if (!strcmp(key, "ready_timeout_s")) {
            if (get_number(x, k, v, path, 0, 1, &c->ready_timeout_s))
                return -1;
        } else if (!strcmp(key, "stop_grace_s")) {
            if (get_number(x, k, v, path, 0, 0, &c->stop_grace_s))
                return -1;
        } else {
            char *r = NULL;
            if (get_choice(x, k, v, path, restart_names, &r))
                return -1;
            c->restart_always = !strcmp(r, "always");
            free(r);
        }
    }
    if (!c->server_command)
        return fail(x, s, prefix, "missing required key 'command'");
    return 0;
}

static int read_target(ctx *x, campaign *c, const yaml_node_t *tk, const yaml_node_t *t) {
    if (want_map(x, tk, t, "target") || check_keys(x, t, "target", target_keys))
        return -1;
    const yaml_node_t *kind = NULL;
    for (yaml_node_pair_t *pr = t->data.mapping.pairs.start; pr < t->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        const char *key = text(k);
        if (kind)
            return fail(x, k, "target", "give only one of url, sim, server (got %s and %s)",
                        text(kind), key);
        kind = k;
        int rc;
        if (!strcmp(key, "url")) {
            c->target = TARGET_URL;
            rc = get_string(x, k, v, "target.url", 0, &c->url);
            if (!rc && strncmp(c->url, "http://", 7) && strncmp(c->url, "https://", 8))
                rc = fail(x, k, "target.url",
                          "expected a URL starting with http:// or https://, "
                          "got '%.60s'",
                          c->url);
        } else if (!strcmp(key, "sim")) {
            rc = read_sim(x, c, k, v);
        } else {
            rc = read_server(x, c, k, v);
        }
        if (rc)
            return -1;
    }
    if (!kind)
        return fail(x, t, "target", "missing required key: one of url, sim, server");
    return 0;
}

/* ---- runs and the campaign ---- */

static int read_run(ctx *x, campaign *c, int i, const yaml_node_t *r, const level *defaults) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "runs[%d]", i);
    if (r->type != YAML_MAPPING_NODE)
        return expected(x, r, prefix, r, "a map");
    if (check_keys(x, r, prefix, run_keys))
        return -1;
    campaign_run *run = &c->runs[i];
    c->n_runs = i + 1; /* from here on campaign_free releases it */
    run->line = line_of(r);
    params_copy(&run->p, defaults->p);
    level lv = {.p = &run->p};
    memcpy(lv.slo, defaults->slo, sizeof lv.slo);
    for (yaml_node_pair_t *pr = r->data.mapping.pairs.start; pr < r->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        if (strcmp(text(k), "name")) {
            if (apply_param(x, &lv, prefix, k, v))
                return -1;
            continue;
        }
        char path[KEY_PATH_LEN];
        join(path, prefix, "name");
        if (get_string(x, k, v, path, 0, &run->name))
            return -1;
        if (!is_word(run->name) || strspn(run->name, ".") == strlen(run->name))
            return fail(x, k, path,
                        "expected letters, digits, '.', '_' or '-' (it names a "
                        "directory), got '%.60s'",
                        run->name);
        for (int j = 0; j < i; j++)
            if (!strcmp(c->runs[j].name, run->name))
                return fail(x, k, path, "duplicate run name '%s' (first at line %d)", run->name,
                            c->runs[j].line);
    }
    finish_level(&lv);
    if (!run->name)
        return fail(x, r, prefix, "missing required key 'name'");
    if (run->p.duration_s > 0 && isinf(run->p.rate))
        return fail(x, r, prefix, "duration (%gs) needs a finite rate, but rate is inf",
                    run->p.duration_s);
    return 0;
}

static int read_runs(ctx *x, campaign *c, const yaml_node_t *k, const yaml_node_t *v,
                     const level *defaults) {
    if (v->type != YAML_SEQUENCE_NODE)
        return expected(x, k, "runs", v, "a list of runs");
    int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n == 0)
        return fail(x, k, "runs", "expected at least one run");
    c->runs = xcalloc((size_t)n, sizeof *c->runs);
    for (int i = 0; i < n; i++)
        if (read_run(x, c, i, node(x, v->data.sequence.items.start[i]), defaults))
            return -1;
    return 0;
}

static int read_campaign(ctx *x, campaign *c, const yaml_node_t *root) {
    const char *what = "a map with name, target and runs";
    if (!root || is_null(root))
        return fail_line(x, 1, NULL, "empty document: expected %s", what);
    if (root->type != YAML_MAPPING_NODE)
        return expected(x, root, NULL, root, what);
    if (check_keys(x, root, "", top_keys))
        return -1;
    params_init(&c->defaults);
    level lv = {.p = &c->defaults};
    const yaml_node_t *target = NULL, *runs_k = NULL, *runs_v = NULL;
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
        const char *key = text(k);
        int rc = 0;
        if (!strcmp(key, "name")) {
            rc = get_string(x, k, v, "name", 0, &c->name);
        } else if (!strcmp(key, "target")) {
            target = k;
            rc = read_target(x, c, k, v);
        } else if (!strcmp(key, "runs")) {
            runs_k = k;
            runs_v = v;
        } else {
            rc = apply_param(x, &lv, "", k, v);
        }
        if (rc)
            return -1;
    }
    finish_level(&lv);
    if (!c->name)
        return fail(x, root, NULL, "missing required key 'name'");
    if (!target)
        return fail(x, root, NULL, "missing required key 'target'");
    if (!runs_v)
        return fail(x, root, NULL, "missing required key 'runs'");
    return read_runs(x, c, runs_k, runs_v, &lv);
}

/* ---- parsing ---- */

static int syntax_error(ctx *x, const yaml_parser_t *p, const char *buf, size_t len) {
    if (p->error == YAML_MEMORY_ERROR)
        return fail_line(x, 1, NULL, "out of memory while parsing YAML");
    int line;
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors (bad encoding, control characters) carry a byte
         * offset, not a mark. */
        line = 1;
        for (size_t i = 0; i < p->problem_offset && i < len; i++)
            line += buf[i] == '\n';
    } else {
        line = (int)p->problem_mark.line + 1;
    }
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->context)
        return fail_line(x, line, NULL, "YAML syntax error: %s (%s at line %d)", problem,
                         p->context, (int)p->context_mark.line + 1);
    return fail_line(x, line, NULL, "YAML syntax error: %s", problem);
}

/* The event pass: syntax errors, aliases and extra documents. */
static int scan_events(ctx *x, const char *buf, size_t len) {
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return fail_line(x, 1, NULL, "out of memory while parsing YAML");
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    int rc = 0, docs = 0;
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            rc = syntax_error(x, &p, buf, len);
            break;
        }
        yaml_event_type_t type = e.type;
        int line = (int)e.start_mark.line + 1;
        if (type == YAML_ALIAS_EVENT)
            rc = fail_line(x, line, NULL, "aliases (*%s) are not supported: write the value out",
                           (const char *)e.data.alias.anchor);
        else if (type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
            rc = fail_line(x, line, NULL, "a second YAML document: a campaign is one document");
        yaml_event_delete(&e);
        if (rc || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    return rc;
}

static int load_buffer(const char *buf, size_t len, campaign *c, ctx *x) {
    if (scan_events(x, buf, len))
        return -1;
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        return fail_line(x, 1, NULL, "out of memory while parsing YAML");
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    int rc;
    if (!yaml_parser_load(&p, &doc)) {
        rc = syntax_error(x, &p, buf, len);
    } else {
        x->doc = &doc;
        rc = read_campaign(x, c, yaml_document_get_root_node(&doc));
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&p);
    return rc;
}

static int load(const char *buf, size_t len, const char *name, campaign *c, char *err, int errlen) {
    ctx x = {.name = name, .err = err, .errlen = err && errlen > 0 ? (size_t)errlen : 0};
    c->path = xstrdup(name);
    if (load_buffer(buf, len, c, &x)) {
        campaign_free(c);
        return -1;
    }
    return 0;
}

int campaign_load_string(const char *yaml, const char *name, campaign *c, char *err, int errlen) {
    memset(c, 0, sizeof *c);
    return load(yaml, strlen(yaml), name ? name : "<string>", c, err, errlen);
}

int campaign_load(const char *path, campaign *c, char *err, int errlen) {
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    strbuf b = {0};
    int e = 0;
    if (f) {
        char chunk[8192];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
            sb_putn(&b, chunk, n);
        if (ferror(f))
            e = errno ? errno : EIO;
        fclose(f);
    } else {
        e = errno;
    }
    if (e) {
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, strerror(e));
        sb_free(&b);
        return -1;
    }
    int rc = load(b.s ? b.s : "", b.n, path, c, err, errlen);
    sb_free(&b);
    return rc;
}

void campaign_free(campaign *c) {
    if (!c)
        return;
    free(c->name);
    free(c->path);
    free(c->url);
    free(c->sim_profile);
    free(c->sim_args);
    free(c->server_command);
    free(c->health_path);
    params_free(&c->defaults);
    for (int i = 0; i < c->n_runs; i++) {
        free(c->runs[i].name);
        params_free(&c->runs[i].p);
    }
    free(c->runs);
    memset(c, 0, sizeof *c);
}
