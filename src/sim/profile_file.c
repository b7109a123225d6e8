/* profile_file: reading and writing a profile's YAML file (see
 * profile_file.h). The engine's keys are parsed by sim_options' rows into a
 * scratch sim_opts, so a file and the command line share every check; the
 * writer prints the same keys back, strings in double quotes (JSON's
 * escapes, which YAML reads the same). */
#include "sim/profile_file.h"
#include "common/files.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/yamlread.h"
#include "sim/sim_options.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const top_keys[] = {"name",   "about",      "server", "model",
                                       "engine", "provenance", "fit",    NULL};
static const char *const engine_keys[] = {"max_num_seqs",
                                          "kv_blocks",
                                          "block_size",
                                          "max_model_len",
                                          "max_num_batched_tokens",
                                          "decode_base_ms",
                                          "decode_per_seq_ms",
                                          "step_ms_by_batch",
                                          "prefill_per_token_ms",
                                          "prefill_ctx_per_1k_ms",
                                          "prefill_ms_by_tokens",
                                          "mixed_step_per_seq_ms",
                                          "idle_wake_ms",
                                          "idle_after_ms",
                                          "jitter",
                                          "eos_min_frac_pct",
                                          "no_prefix_caching",
                                          NULL};
/* the engine keys a file must give */
static const char *const required_keys[] = {
    "max_num_seqs",           "kv_blocks",      "block_size",           "max_model_len",
    "max_num_batched_tokens", "decode_base_ms", "prefill_per_token_ms", NULL};

/* "K:V,K:V,..." into keys/vals (at most ENGINE_STEP_POINTS): their count,
 * or -1 with what is wrong. */
static int parse_pairs(const char *text, int *keys, double *vals, char *err, size_t errlen) {
    int n = 0;
    const char *s = text;
    while (*s) {
        char *end;
        long k = strtol(s, &end, 10);
        if (end == s || *end != ':' || k < 1 || k > 100000000) {
            snprintf(err, errlen, "'%s' is not N:MS,... (e.g. 1:38.2,2:97.1)", text);
            return -1;
        }
        s = end + 1;
        double ms = strtod(s, &end);
        if (end == s || !(ms >= 0) || !isfinite(ms) || (*end && *end != ',') ||
            (*end == ',' && !end[1])) {
            snprintf(err, errlen, "'%s' is not N:MS,... (e.g. 1:38.2,2:97.1)", text);
            return -1;
        }
        if (n == ENGINE_STEP_POINTS) {
            snprintf(err, errlen, "'%s' has more than %d points", text, ENGINE_STEP_POINTS);
            return -1;
        }
        keys[n] = (int)k;
        vals[n] = ms;
        n++;
        s = *end ? end + 1 : end;
    }
    if (n == 0) {
        snprintf(err, errlen, "'%s': no points", text);
        return -1;
    }
    return n;
}

/* "K:V,..." into a table (keys, values, count) of a copy of *p, kept when
 * the engine finds the tables well formed: 0, or -1 with what is wrong. */
static int table_parse(const char *text, engine_params *p, int step, char *err, size_t errlen) {
    engine_params q = *p;
    int n = parse_pairs(text, step ? q.step_batch : q.prefill_tokens,
                        step ? q.step_ms : q.prefill_ms, err, errlen);
    if (n < 0)
        return -1;
    *(step ? &q.n_step_points : &q.n_prefill_points) = n;
    const char *why = engine_step_table_check(&q);
    if (why) {
        snprintf(err, errlen, "'%s': %s", text, why);
        return -1;
    }
    *p = q;
    return 0;
}

int profile_step_table_parse(const char *text, engine_params *p, char *err, size_t errlen) {
    return table_parse(text, p, 1, err, errlen);
}

int profile_prefill_table_parse(const char *text, engine_params *p, char *err, size_t errlen) {
    return table_parse(text, p, 0, err, errlen);
}

/* keys[0..n) and vals as "K:V,..." into buf. */
static void table_format(const int *keys, const double *vals, int n, char *buf, size_t cap) {
    strbuf b = {0};
    for (int i = 0; i < n; i++)
        sb_printf(&b, "%s%d:%.6g", i ? "," : "", keys[i], vals[i]);
    snprintf(buf, cap, "%s", b.s ? b.s : "");
    sb_free(&b);
}

void profile_prefill_table_format(const engine_params *p, char *buf, size_t cap) {
    table_format(p->prefill_tokens, p->prefill_ms, p->n_prefill_points, buf, cap);
}

void profile_step_table_format(const engine_params *p, char *buf, size_t cap) {
    table_format(p->step_batch, p->step_ms, p->n_step_points, buf, cap);
}

/* ---- reading ---- */

typedef struct reader {
    yread y;
    profile_doc *d;
    sim_opts scratch;
} reader;

static char *dup_scalar(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key) {
    const char *s = yread_scalar(y, k, v, key, "a string");
    return s ? xstrdup(s) : NULL;
}

static int read_engine(reader *r, const yaml_node_t *k, const yaml_node_t *m) {
    yread *y = &r->y;
    if (yread_want_map(y, k, m, "engine") || yread_check_keys(y, m, "engine", engine_keys))
        return -1;
    int seen[32] = {0};
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *nk = yread_node(y, pr->key), *nv = yread_node(y, pr->value);
        const char *key = yread_text(nk);
        char path[KEY_PATH_LEN];
        yread_join(path, "engine", key);
        for (int i = 0; engine_keys[i]; i++)
            if (!strcmp(engine_keys[i], key))
                seen[i] = 1;
        if (!strcmp(key, "step_ms_by_batch") || !strcmp(key, "prefill_ms_by_tokens")) {
            int step = key[0] == 's';
            const char *t = yread_scalar(y, nk, nv, path, step ? "BATCH:MS,..." : "TOKENS:MS,...");
            char why[256];
            if (!t)
                return -1;
            if ((step ? profile_step_table_parse
                      : profile_prefill_table_parse)(t, &r->scratch.cfg.engine, why, sizeof why))
                return yread_fail(y, nk, path, "%s", why);
            continue;
        }
        if (yread_set(y, nk, nv, path, opt_find_key(sim_options, key), &r->scratch))
            return -1;
    }
    for (int q = 0; required_keys[q]; q++)
        for (int i = 0; engine_keys[i]; i++)
            if (!strcmp(engine_keys[i], required_keys[q]) && !seen[i])
                return yread_fail(y, k, "engine", "missing required key '%s'", required_keys[q]);
    return 0;
}

static int read_provenance(reader *r, const yaml_node_t *k, const yaml_node_t *m) {
    yread *y = &r->y;
    if (yread_want_map(y, k, m, "provenance") || yread_check_keys(y, m, "provenance", NULL))
        return -1;
    r->d->provenance = json_object();
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *nk = yread_node(y, pr->key), *nv = yread_node(y, pr->value);
        char path[KEY_PATH_LEN];
        yread_join(path, "provenance", yread_text(nk));
        const char *s = yread_scalar(y, nk, nv, path, "where the figure comes from");
        if (!s)
            return -1;
        json_object_set_new(r->d->provenance, yread_text(nk), json_string(s));
    }
    return 0;
}

static int read_root(yread *y, const yaml_node_t *root, void *arg) {
    reader *r = arg;
    if (!root)
        return yread_fail_line(y, 1, NULL, "the file is empty");
    if (root->type != YAML_MAPPING_NODE)
        return yread_fail(y, root, NULL, "expected a map of name, engine, provenance, ...");
    if (yread_check_keys(y, root, "", top_keys))
        return -1;
    const yaml_node_t *engine_k = NULL;
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        const char *key = yread_text(k);
        char **slot = !strcmp(key, "name")     ? &r->d->name
                      : !strcmp(key, "about")  ? &r->d->about
                      : !strcmp(key, "server") ? &r->d->server
                      : !strcmp(key, "model")  ? &r->d->model
                                               : NULL;
        if (slot) {
            if (!(*slot = dup_scalar(y, k, v, key)))
                return -1;
        } else if (!strcmp(key, "engine")) {
            engine_k = k;
            if (read_engine(r, k, v))
                return -1;
        } else if (!strcmp(key, "provenance")) {
            if (read_provenance(r, k, v))
                return -1;
        } /* fit: a record of the fit, not read back */
    }
    if (!r->d->name || !*r->d->name)
        return yread_fail(y, root, NULL, "missing required key 'name'");
    if (!engine_k)
        return yread_fail(y, root, NULL, "missing required key 'engine'");
    return 0;
}

int profile_file_read(const char *path, profile_doc *d, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    size_t len;
    char *buf = read_whole_file(path, &len);
    if (!buf) {
        snprintf(err, errlen, "%s: cannot read: %s", path, file_why(errno));
        return -1;
    }
    int rc = profile_file_parse(buf, len, path, d, err, errlen);
    free(buf);
    return rc;
}

int profile_file_parse(const char *buf, size_t len, const char *path, profile_doc *d, char *err,
                       size_t errlen) {
    memset(d, 0, sizeof *d);
    reader r = {.d = d};
    r.y.name = path;
    r.y.err = err;
    r.y.errlen = errlen;
    /* engine figures start at nothing: the required ones must be given */
    r.scratch.cfg.eos_min_frac_pct = 50;
    int rc = yread_document(&r.y, buf, len, read_root, &r);
    for (int i = 0; i < r.y.n_strings; i++)
        free(r.y.strings[i]);
    free(r.y.strings);
    if (rc) {
        profile_doc_free(d);
        return -1;
    }
    d->engine = r.scratch.cfg.engine;
    d->engine.enable_prefix_caching = !r.scratch.no_prefix_caching;
    d->eos_min_frac_pct = r.scratch.cfg.eos_min_frac_pct;
    return 0;
}

void profile_doc_free(profile_doc *d) {
    free(d->name);
    free(d->about);
    free(d->server);
    free(d->model);
    json_decref(d->provenance);
    json_decref(d->fit);
    memset(d, 0, sizeof *d);
}

/* ---- writing ---- */

static void put_string(strbuf *b, const char *s) {
    json_t *j = json_string(s ? s : "");
    char *q = json_dumps(j, JSON_ENCODE_ANY);
    sb_printf(b, "%s", q);
    free(q);
    json_decref(j);
}

/* A JSON value as YAML, block style, at `indent` spaces. */
static void put_yaml(strbuf *b, json_t *v, int indent) {
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        if (json_object_size(v) == 0) {
            sb_printf(b, " {}\n");
            return;
        }
        sb_printf(b, "\n");
        json_object_foreach(v, k, x) {
            sb_printf(b, "%*s%s:", indent, "", k);
            put_yaml(b, x, indent + 2);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        if (json_array_size(v) == 0) {
            sb_printf(b, " []\n");
            return;
        }
        sb_printf(b, "\n");
        json_array_foreach(v, i, x) {
            sb_printf(b, "%*s-", indent, "");
            if (json_is_object(x) || json_is_array(x)) {
                char *flow = json_dumps(x, JSON_COMPACT | JSON_REAL_PRECISION(6));
                sb_printf(b, " %s\n", flow);
                free(flow);
            } else {
                put_yaml(b, x, indent + 2);
            }
        }
    } else if (json_is_string(v)) {
        sb_printf(b, " ");
        put_string(b, json_string_value(v));
        sb_printf(b, "\n");
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        if (isfinite(x))
            sb_printf(b, " %.6g\n", x);
        else
            sb_printf(b, " null\n");
    } else if (json_is_integer(v)) {
        sb_printf(b, " %lld\n", (long long)json_integer_value(v));
    } else if (json_is_boolean(v)) {
        sb_printf(b, " %s\n", json_is_true(v) ? "true" : "false");
    } else {
        sb_printf(b, " null\n");
    }
}

int profile_file_write(const char *path, const profile_doc *d, int force, char *err,
                       size_t errlen) {
    const engine_params *e = &d->engine;
    strbuf b = {0};
    sb_printf(&b, "# A servelab simulator profile: `servelab sim --profile-file FILE` and\n"
                  "# `servelab predict --profile-file FILE` read it. Each figure's provenance\n"
                  "# is below it; docs/simulator.md says what every key means.\n");
    const char *texts[] = {
        "name",  d->name ? d->name : "fitted", "about", d->about, "server", d->server, "model",
        d->model};
    for (int i = 0; i < 8; i += 2)
        if (texts[i + 1]) {
            sb_printf(&b, "%s: ", texts[i]);
            put_string(&b, texts[i + 1]);
            sb_printf(&b, "\n");
        }
    char table[2048], ptable[2048];
    profile_step_table_format(e, table, sizeof table);
    profile_prefill_table_format(e, ptable, sizeof ptable);
    sb_printf(&b,
              "engine:\n"
              "  max_num_seqs: %d\n"
              "  kv_blocks: %d\n"
              "  block_size: %d\n"
              "  max_model_len: %d\n"
              "  max_num_batched_tokens: %d\n"
              "  decode_base_ms: %.6g\n",
              e->max_num_seqs, e->kv_blocks, e->block_size, e->max_model_len, e->max_batched_tokens,
              e->decode_base_ms);
    if (e->n_step_points > 0)
        sb_printf(&b, "  step_ms_by_batch: \"%s\"\n", table);
    else
        sb_printf(&b, "  decode_per_seq_ms: %.6g\n", e->decode_per_seq_ms);
    sb_printf(&b,
              "  prefill_per_token_ms: %.6g\n"
              "  prefill_ctx_per_1k_ms: %.6g\n"
              "%s%s%s",
              e->prefill_per_token_ms, e->prefill_ctx_per_1k_ms,
              e->n_prefill_points ? "  prefill_ms_by_tokens: \"" : "",
              e->n_prefill_points ? ptable : "", e->n_prefill_points ? "\"\n" : "");
    if (e->mixed_per_seq_ms > 0)
        sb_printf(&b, "  mixed_step_per_seq_ms: %.6g\n", e->mixed_per_seq_ms);
    sb_printf(&b,
              "  idle_wake_ms: %.6g\n"
              "  idle_after_ms: %.6g\n"
              "  jitter: %.6g\n"
              "  eos_min_frac_pct: %d\n"
              "  no_prefix_caching: %s\n",
              e->idle_wake_ms, e->idle_after_ms, e->jitter, d->eos_min_frac_pct,
              e->enable_prefix_caching ? "false" : "true");
    if (d->provenance) {
        sb_printf(&b, "provenance:");
        put_yaml(&b, d->provenance, 2);
    }
    if (d->fit) {
        sb_printf(&b, "fit:");
        put_yaml(&b, d->fit, 2);
    }
    /* whole or not at all: a full disk keeps the earlier profile */
    int rc = 0;
    if (!force && access(path, F_OK) == 0) {
        snprintf(err, errlen, "%s: %s (give --force to replace it)", path, strerror(EEXIST));
        rc = -1;
    } else if (write_bytes_atomic(path, b.s, b.n)) {
        snprintf(err, errlen, "%s: cannot write: %s (an earlier file there is kept)", path,
                 strerror(errno));
        rc = -1;
    }
    sb_free(&b);
    return rc;
}
