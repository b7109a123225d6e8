/* fit_data: finding runs and reading requests.csv, chunks.csv and
 * meta.json for the fit (see fit_data.h). Chunks are joined to their
 * request by request_id through a small open-addressing table. */
#include "fit/fit_data.h"
#include "rundir/summary_file.h"
#include "common/files.h"
#include "common/csv.h"
#include "common/util.h"
#include "rundir/columns.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct id_table {
    char **id;
    size_t *at, cap;
} id_table;

static void ids_init(id_table *t, size_t n) {
    t->cap = 16;
    while (t->cap < 2 * n + 16)
        t->cap *= 2;
    t->id = xcalloc(t->cap, sizeof *t->id);
    t->at = xcalloc(t->cap, sizeof *t->at);
}

static size_t ids_slot(const id_table *t, const char *s, size_t len) {
    size_t h = (size_t)hash_bytes(s, len, 7) & (t->cap - 1);
    while (t->id[h] && (strlen(t->id[h]) != len || memcmp(t->id[h], s, len)))
        h = (h + 1) & (t->cap - 1);
    return h;
}

static void ids_free(id_table *t) {
    for (size_t i = 0; i < t->cap; i++)
        free(t->id[i]);
    free(t->id);
    free(t->at);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_file(const char *dir, const char *name) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every run under `path`, in name order, appended to *list. */
static void find_runs(const char *path, int depth, char ***list, int *n, int *cap) {
    if (has_file(path, "requests.csv")) {
        if (*n == *cap)
            *list = xrealloc(*list, (size_t)(*cap = *cap ? 2 * *cap : 16) * sizeof **list);
        (*list)[(*n)++] = xstrdup(path);
        return;
    }
    if (depth > 5)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    char **names = NULL;
    int k = 0, kc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (!is_dir(p))
            continue;
        if (k == kc)
            names = xrealloc(names, (size_t)(kc = kc ? 2 * kc : 16) * sizeof *names);
        names[k++] = xstrdup(p);
    }
    closedir(d);
    qsort(names, (size_t)k, sizeof *names, cmp_str);
    for (int i = 0; i < k; i++) {
        find_runs(names[i], depth + 1, list, n, cap);
        free(names[i]);
    }
    free(names);
}

static double num(const csv_row *r, int c) {
    double v;
    return c >= 0 && csv_number(r, c, &v) == 0 ? v : NAN;
}

static int read_requests(fit_run *run, id_table *ids, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/requests.csv", run->dir);
    csv_file f;
    if (csv_open(&f, path)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, file_why(errno));
        return -1;
    }
    csv_row h, r;
    if (!csv_next(&f, &h)) {
        snprintf(err, errlen, "%s: empty", path);
        csv_close(&f);
        return -1;
    }
    int c[RQ_N]; /* by the table's names (rundir/columns.h), the contract ones needed */
    if (rundir_columns_find(&rundir_requests, &h, c, path, err, (int)errlen)) {
        csv_close(&f);
        return -1;
    }
    int c_id = c[RQ_request_id], c_sent = c[RQ_sent_ms], c_first = c[RQ_first_token_ms],
        c_last = c[RQ_last_token_ms], c_prompt = c[RQ_prompt_tokens], c_out = c[RQ_output_tokens],
        c_err = c[RQ_error];
    int c_sp = c[RQ_server_prompt_ms], c_sn = c[RQ_server_prompt_n], c_cache = c[RQ_server_cache_n],
        c_cached = c[RQ_cached_tokens];
    size_t cap = 1024;
    run->req = xmalloc(cap * sizeof *run->req);
    char **keys = NULL;
    size_t nk = 0, kcap = 0;
    while (csv_next(&f, &r)) {
        if (csv_row_blank(&r))
            continue;
        if (r.error || r.n != h.n) {
            snprintf(err, errlen, "%s:%d: %s", path, f.line,
                     r.error ? r.error : "wrong field count");
            csv_close(&f);
            for (size_t i = 0; i < nk; i++)
                free(keys[i]);
            free(keys);
            return -1;
        }
        if (run->n_req == cap)
            run->req = xrealloc(run->req, (cap *= 2) * sizeof *run->req);
        fit_req *q = &run->req[run->n_req];
        memset(q, 0, sizeof *q);
        q->sent = num(&r, c_sent);
        q->first = num(&r, c_first);
        q->last = num(&r, c_last);
        double p = num(&r, c_prompt), o = num(&r, c_out);
        q->prompt = isfinite(p) ? (int)p : -1;
        q->output = isfinite(o) ? (int)o : -1;
        q->server_prompt_ms = num(&r, c_sp);
        double sn = num(&r, c_sn), cn = num(&r, c_cache), ct = num(&r, c_cached);
        q->server_prompt_n = isfinite(sn) ? (int)sn : -1;
        q->cached = isfinite(cn) && cn > 0 ? (int)cn : isfinite(ct) && ct > 0 ? (int)ct : 0;
        q->ok = r.len[c_err] == 0 && isfinite(q->sent) && isfinite(q->first) && isfinite(q->last) &&
                q->prompt > 0;
        if (q->ok && !(q->first >= q->sent && q->last >= q->first)) {
            q->ok = 0; /* times out of order: no clock of a run makes them */
            run->disordered++;
        }
        q->cut = (r.len[c_err] == 9 && !memcmp(r.f[c_err], "cancelled", 9)) ||
                 (r.len[c_err] == 7 && !memcmp(r.f[c_err], "timeout", 7));
        if (nk == kcap)
            keys = xrealloc(keys, (kcap = kcap ? 2 * kcap : 1024) * sizeof *keys);
        keys[nk] = xmalloc(r.len[c_id] + 1);
        memcpy(keys[nk], r.f[c_id], r.len[c_id]);
        keys[nk][r.len[c_id]] = 0;
        nk++;
        run->n_req++;
    }
    csv_close(&f);
    ids_init(ids, nk);
    for (size_t i = 0; i < nk; i++) {
        size_t s = ids_slot(ids, keys[i], strlen(keys[i]));
        if (!ids->id[s]) {
            ids->id[s] = keys[i];
            ids->at[s] = i;
        } else {
            free(keys[i]);
        }
    }
    free(keys);
    return 0;
}

typedef struct chunk_in {
    size_t req;
    int index, tokens;
    double t;
} chunk_in;

static int by_req_index(const void *a, const void *b) {
    const chunk_in *x = a, *y = b;
    if (x->req != y->req)
        return x->req < y->req ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* chunks.csv into the run, grouped by request; a run without one keeps
 * its requests (they still tell the prefill) and no gaps. */
static int read_chunks(fit_run *run, const id_table *ids, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/chunks.csv", run->dir);
    csv_file f;
    int o = csv_open(&f, path);
    if (o == 1)
        return 0;
    if (o) {
        snprintf(err, errlen, "%s: cannot read: %s", path, file_why(errno));
        return -1;
    }
    csv_row h, r;
    if (!csv_next(&f, &h)) {
        csv_close(&f);
        return 0;
    }
    int cols[CH_N];
    if (rundir_columns_find(&rundir_chunks, &h, cols, path, err, (int)errlen)) {
        csv_close(&f);
        return -1;
    }
    int c_id = cols[CH_request_id], c_i = cols[CH_index], c_t = cols[CH_t_ms],
        c_tok = cols[CH_tokens];
    size_t n = 0, cap = 4096;
    chunk_in *c = xmalloc(cap * sizeof *c);
    while (csv_next(&f, &r)) {
        if (csv_row_blank(&r))
            continue;
        if (r.error || r.n != h.n) {
            snprintf(err, errlen, "%s:%d: %s", path, f.line,
                     r.error ? r.error : "wrong field count");
            csv_close(&f);
            free(c);
            return -1;
        }
        size_t s = ids_slot(ids, r.f[c_id], r.len[c_id]);
        if (!ids->id[s])
            continue; /* a chunk of no request: nothing to join it to */
        if (n == cap)
            c = xrealloc(c, (cap *= 2) * sizeof *c);
        double ix = num(&r, c_i), tok = num(&r, c_tok);
        c[n++] = (chunk_in){ids->at[s], isfinite(ix) ? (int)ix : 0, isfinite(tok) ? (int)tok : 1,
                            num(&r, c_t)};
    }
    csv_close(&f);
    qsort(c, n, sizeof *c, by_req_index);
    run->chunk_t = xmalloc((n ? n : 1) * sizeof *run->chunk_t);
    run->chunk_tokens = xmalloc((n ? n : 1) * sizeof *run->chunk_tokens);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || c[i].req != c[i - 1].req) {
            run->req[c[i].req].chunk0 = i;
            run->req[c[i].req].n_chunks = 0;
        }
        run->req[c[i].req].n_chunks++;
        run->chunk_t[i] = c[i].t;
        run->chunk_tokens[i] = c[i].tokens;
    }
    run->n_chunks = n;
    free(c);
    return 0;
}

/* The value after `flag` among the words of `args`, as an int; 0: none. */
/* A flag's value in a server's arguments: the last one given, as the
 * servers' own parsers keep it (0: none). */
static int arg_int(const char *args, const char *flag) {
    size_t fl = strlen(flag);
    int found = 0;
    for (const char *p = args; p && (p = strstr(p, flag)); p += fl) {
        if ((p != args && p[-1] != ' ') || (p[fl] != ' ' && p[fl] != '='))
            continue;
        long v = strtol(p + fl + 1, NULL, 10);
        if (v > 0 && v < 1000000000)
            found = (int)v;
    }
    return found;
}

/* A vLLM started by a campaign (meta.json's vllm.argv): its whole command,
 * the flags servelab built from target.vllm and the run's server_args, as
 * one line; NULL for any other server. */
static const char *vllm_args(json_t *meta, char *buf, size_t len) {
    json_t *argv = json_object_get(json_object_get(meta, "vllm"), "argv"), *w;
    size_t i, used = 0;
    if (!json_is_array(argv))
        return NULL;
    buf[0] = 0;
    json_array_foreach(argv, i, w) {
        const char *s = json_string_value(w);
        if (s && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", s);
    }
    return buf;
}

static void set_from(char *dst, const char *what) {
    snprintf(dst, 128, "%s", what);
}

static void read_meta(fit_run *run) {
    json_t *m = rundir_meta_read(run->dir);
    if (!m)
        return;
    json_t *srv = json_object_get(m, "server"), *pred = json_object_get(m, "server");
    const char *hdr = json_string_value(json_object_get(srv, "server_header"));
    const char *sha = json_string_value(json_object_get(json_object_get(srv, "binary"), "sha256"));
    const char *ver =
        json_string_value(json_object_get(json_object_get(srv, "version"), "version"));
    json_t *props = json_object_get(srv, "llamacpp_props");
    const char *build = json_string_value(json_object_get(props, "build_info"));
    if (json_is_true(json_object_get(pred, "predicted")))
        hdr = "servelab predict";
    snprintf(run->server, sizeof run->server, "%s%s%s%s%s", hdr ? hdr : "unknown server",
             build ? " build " : "", build ? build : "",
             sha   ? " binary sha256 "
             : ver ? " version "
                   : "",
             sha   ? sha
             : ver ? ver
                   : "");
    json_t *cfg = json_object_get(m, "config");
    const char *model = json_string_value(json_object_get(cfg, "model"));
    if (json_is_integer(json_object_get(cfg, "max_tokens")))
        run->max_tokens = (int)json_integer_value(json_object_get(cfg, "max_tokens"));
    run->ignore_eos = json_is_true(json_object_get(cfg, "ignore_eos"));
    json_t *first = json_array_get(json_object_get(json_object_get(srv, "models"), "data"), 0);
    if (!model)
        model = json_string_value(json_object_get(first, "id"));
    if (!model)
        model = json_string_value(json_object_get(srv, "model"));
    snprintf(run->model, sizeof run->model, "%s", model ? model : "unknown model");
    char vargs[4096];
    const char *args = vllm_args(m, vargs, sizeof vargs);
    if (!args)
        args = json_string_value(json_object_get(json_object_get(m, "campaign"), "server_args"));
    json_t *eng = json_object_get(srv, "engine"); /* a prediction's engine */
    json_t *cc = json_object_get(srv, "vllm_cache_config");
    /* slots */
    json_t *ts = json_object_get(props, "total_slots");
    int v;
    if (json_is_integer(ts)) {
        run->slots = (int)json_integer_value(ts);
        set_from(run->slots_from, "llama.cpp /props total_slots");
    } else if ((v = arg_int(args, "--parallel")) || (v = arg_int(args, "-np")) ||
               (v = arg_int(args, "--max-num-seqs"))) {
        run->slots = v;
        set_from(run->slots_from, "the server's arguments");
    } else if (json_is_integer(json_object_get(eng, "max_num_seqs"))) {
        run->slots = (int)json_integer_value(json_object_get(eng, "max_num_seqs"));
        set_from(run->slots_from, "the prediction's engine (meta.json)");
    }
    /* the KV cache */
    json_t *nctx = json_object_get(props, "n_ctx");
    if (json_is_integer(nctx)) {
        /* a slot's context (default_generation_settings.n_ctx): the slots
         * share -c, each holding its own share */
        run->n_ctx = (int)json_integer_value(nctx);
        run->block_size = 16;
        run->max_model_len = run->n_ctx;
        set_from(run->len_from, "llama.cpp /props n_ctx (a slot's context)");
        long long kb = (long long)run->n_ctx * (run->slots > 0 ? run->slots : 1) / 16;
        run->kv_blocks = kb > INT_MAX ? INT_MAX : kb < 0 ? 0 : (int)kb; /* a product past int */
        set_from(run->kv_from, "llama.cpp /props n_ctx x total_slots, in blocks of 16");
    } else if (cc && json_object_get(cc, "num_gpu_blocks")) {
        const char *nb = json_string_value(json_object_get(cc, "num_gpu_blocks")),
                   *bs = json_string_value(json_object_get(cc, "block_size"));
        long long kb = nb ? strtoll(nb, NULL, 10) : 0;
        run->kv_blocks = kb > INT_MAX ? INT_MAX : kb < 0 ? 0 : (int)kb;
        run->block_size = bs ? atoi(bs) : 16;
        set_from(run->kv_from, "vLLM's cache_config_info (num_gpu_blocks, block_size)");
    } else if (json_is_integer(json_object_get(eng, "kv_blocks"))) {
        run->kv_blocks = (int)json_integer_value(json_object_get(eng, "kv_blocks"));
        run->block_size = (int)json_integer_value(json_object_get(eng, "block_size"));
        set_from(run->kv_from, "the prediction's engine (meta.json)");
    }
    if (!run->max_model_len) {
        json_t *ml = json_object_get(first, "max_model_len");
        if (!json_is_integer(ml))
            ml = json_object_get(eng, "max_model_len");
        if (json_is_integer(ml)) {
            run->max_model_len = (int)json_integer_value(ml);
            set_from(run->len_from, json_object_get(first, "max_model_len")
                                        ? "/v1/models max_model_len"
                                        : "the prediction's engine (meta.json)");
        }
    }
    if ((v = arg_int(args, "-b")) || (v = arg_int(args, "--batch-size")) ||
        (v = arg_int(args, "--max-num-batched-tokens"))) {
        run->batch_tokens = v;
        set_from(run->batch_from, "the server's arguments");
    } else if (json_is_integer(json_object_get(eng, "max_num_batched_tokens"))) {
        run->batch_tokens = (int)json_integer_value(json_object_get(eng, "max_num_batched_tokens"));
        set_from(run->batch_from, "the prediction's engine (meta.json)");
    } else if (props) {
        run->batch_tokens = 2048;
        set_from(run->batch_from, "llama.cpp's default -b 2048");
    }
    json_decref(m);
}

/* One run reached twice (named twice, or through a link) would count its
 * rows twice: -1 with both names. */
static int same_run_twice(char *const *dirs, int n, char *err, size_t errlen) {
    struct stat *st = xcalloc((size_t)n, sizeof *st);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (stat(dirs[i], &st[i]))
            continue;
        for (int k = 0; k < i && !rc; k++)
            if (st[k].st_dev == st[i].st_dev && st[k].st_ino == st[i].st_ino) {
                snprintf(err, errlen,
                         "%s and %s are the same run (given twice, or reached through a link): "
                         "its rows would count twice",
                         dirs[k], dirs[i]);
                rc = -1;
            }
    }
    free(st);
    return rc;
}

int fit_load(char *const *paths, int n_paths, fit_run **out, int *n_out, char *err, size_t errlen) {
    char **dirs = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < n_paths; i++) {
        if (!is_dir(paths[i])) {
            snprintf(err, errlen, "%s: not a directory", paths[i]);
            for (int k = 0; k < n; k++)
                free(dirs[k]);
            free(dirs);
            return -1;
        }
        int before = n;
        find_runs(paths[i], 0, &dirs, &n, &cap);
        if (n == before) {
            snprintf(err, errlen, "%s: no runs in it (no requests.csv below it)", paths[i]);
            for (int k = 0; k < n; k++)
                free(dirs[k]);
            free(dirs);
            return -1;
        }
    }
    if (same_run_twice(dirs, n, err, errlen)) {
        for (int k = 0; k < n; k++)
            free(dirs[k]);
        free(dirs);
        return -1;
    }
    fit_run *runs = xcalloc((size_t)n, sizeof *runs);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        runs[i].dir = dirs[i];
        id_table ids = {0};
        if (!rc && (read_requests(&runs[i], &ids, err, errlen) ||
                    read_chunks(&runs[i], &ids, err, errlen)))
            rc = -1;
        if (ids.cap)
            ids_free(&ids);
        if (!rc)
            read_meta(&runs[i]);
    }
    free(dirs);
    size_t bad = 0, all = 0;
    for (int i = 0; !rc && i < n; i++) {
        bad += runs[i].disordered;
        all += runs[i].n_req;
    }
    if (!rc && bad * 10 > all) {
        snprintf(err, errlen,
                 "%zu of %zu rows have their first token before the request was sent, or the "
                 "last before the first: these are not times a run's clock makes (rows edited, "
                 "or clocks mixed?)",
                 bad, all);
        rc = -1;
    }
    if (rc) {
        fit_runs_free(runs, n);
        return -1;
    }
    *out = runs;
    *n_out = n;
    return 0;
}

void fit_runs_free(fit_run *runs, int n) {
    for (int i = 0; i < n; i++) {
        free(runs[i].dir);
        free(runs[i].req);
        free(runs[i].chunk_t);
        free(runs[i].chunk_tokens);
    }
    free(runs);
}
