/* vllm_export: the figures of vLLM's client, recomputed from a run's rows.
 * vLLM's definitions (vllm/benchmarks/serve.py and
 * benchmarks/lib/endpoint_request_func.py), as followed here:
 * - a request completed when it ended without error and streamed at least
 *   one chunk of output (vLLM fails a 200 answer that never streamed one);
 * - ttft: first chunk - sent; latency: last chunk - sent (vLLM's clock
 *   stops at the last chunk with choices, not at the end of the answer);
 *   tpot: (latency - ttft) / (output tokens - 1), for more than one token;
 *   itl: every gap between consecutive chunks, pooled over requests (not
 *   divided by the tokens a chunk carried, as servelab's own ITL is);
 * - mean, median, std (population) and percentiles as numpy computes them
 *   (linear interpolation), 0 when there is no value;
 * - duration: t=0 to the end of the last request (servelab's run duration;
 *   vLLM's runs from just before its first request to after its last);
 *   throughputs divide completed requests and tokens by it; failed
 *   requests add no tokens; total_input_tokens counts completed requests';
 * - request_goodput: completed requests within every bound of the run's
 *   SLO (inclusive; tpot counts as 0 for one token; e2e against latency)
 *   per second, null without an SLO;
 * - max_output_tokens_per_s: the most chunks (vLLM counts each as one
 *   token) landing in one whole second counted from the first start;
 *   max_concurrent_requests: the most completed requests between their
 *   start and start + latency at one instant (an end before a start at a
 *   tie);
 * - per-request arrays in schedule order, failed ones as vLLM leaves
 *   them: ttft and latency 0, no itls, output length 0. start_times are
 *   seconds from the run's t=0 (vLLM's are its process's perf_counter). */
#include "report/vllm_export.h"
#include "rundir/summary_file.h"
#include "analysis/spec_decode.h"
#include "report/vllm_import.h"
#include "analysis/stats.h"
#include "analysis/summary.h"
#include "common/csv.h"
#include "common/files.h"
#include "model/record.h"
#include "common/util.h"
#include "model/slo.h"
#include "rundir/columns.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct vreq {
    char *id;
    size_t row; /* its row in requests.csv, for a stable order */
    double sched, sent, first, last, end;
    double ptok, otok, status;
    int error;     /* err_class, ERR_NONE when it succeeded */
    double *chunk; /* chunk times, ms */
    size_t n_chunks, cap;
} vreq;

typedef struct vrun {
    vreq *r;
    size_t n, cap;
    vreq **by_id; /* sorted by id, for chunks.csv */
} vrun;

static char *field_dup(const csv_row *row, int i) {
    char *s = xmalloc(row->len[i] + 1);
    memcpy(s, row->f[i], row->len[i]);
    s[row->len[i]] = 0;
    return s;
}

static int read_request(const csv_row *row, const int *col, vreq *q) {
    double *dst[] = {&q->sched, &q->sent, &q->first, &q->last,
                     &q->end,   &q->ptok, &q->otok,  &q->status};
    const int which[] = {RQ_scheduled_ms, RQ_sent_ms,       RQ_first_token_ms, RQ_last_token_ms,
                         RQ_end_ms,       RQ_prompt_tokens, RQ_output_tokens,  RQ_http_status};
    for (int k = 0; k < 8; k++) {
        *dst[k] = NAN;
        if (col[which[k]] >= 0 && csv_number(row, col[which[k]], dst[k]))
            return -1;
    }
    char e[32];
    snprintf(e, sizeof e, "%.*s",
             (int)(row->len[col[RQ_error]] < 31 ? row->len[col[RQ_error]] : 31),
             row->f[col[RQ_error]]);
    q->error = err_class_parse(e);
    return q->error < 0 || isnan(q->sched) ? -1 : 0;
}

static int read_requests(const char *dir, vrun *v, char *err, int errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    csv_file c;
    int rc = csv_open(&c, path);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, rc > 0 ? "missing" : file_why(errno));
        return -1;
    }
    csv_row row;
    int col[RQ_N], ncols = 0;
    rc = 0;
    while (!rc && csv_next(&c, &row)) {
        if (c.line == 1) {
            ncols = row.n;
            rc = rundir_columns_find(&rundir_requests, &row, col, path, err, errlen);
            continue;
        }
        if (csv_row_blank(&row))
            continue;
        if (v->n == v->cap)
            v->r = xrealloc(v->r, (v->cap = v->cap ? v->cap * 2 : 256) * sizeof *v->r);
        vreq *q = memset(&v->r[v->n], 0, sizeof *v->r);
        if (row.error || row.n != ncols || read_request(&row, col, q)) {
            snprintf(err, errlen, "%s:%d: a row that does not read", path, c.line);
            rc = -1;
            break;
        }
        q->id = field_dup(&row, col[RQ_request_id]);
        q->row = v->n++;
    }
    csv_close(&c);
    return rc;
}

static int by_id_cmp(const void *a, const void *b) {
    return strcmp((*(vreq *const *)a)->id, (*(vreq *const *)b)->id);
}

static vreq *find_id(const vrun *v, const char *id) {
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v->by_id[mid]->id, id);
        if (!c)
            return v->by_id[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* chunks.csv's times onto their requests (a run without it has none). */
static int read_chunks(const char *dir, vrun *v, char *err, int errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    csv_file c;
    int rc = csv_open(&c, path);
    if (rc > 0)
        return 0;
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, file_why(errno));
        return -1;
    }
    v->by_id = xmalloc((v->n ? v->n : 1) * sizeof *v->by_id);
    for (size_t i = 0; i < v->n; i++)
        v->by_id[i] = &v->r[i];
    qsort(v->by_id, v->n, sizeof *v->by_id, by_id_cmp);
    csv_row row;
    vreq *q = NULL;
    while (csv_next(&c, &row)) {
        double t;
        if (c.line == 1 || csv_row_blank(&row))
            continue;
        if (row.error || row.n < 4 || csv_number(&row, 2, &t) || !isfinite(t)) {
            snprintf(err, errlen, "%s:%d: expected request_id,index,t_ms,tokens", path, c.line);
            rc = -1;
            break;
        }
        char *id = field_dup(&row, 0);
        if (!q || strcmp(q->id, id)) /* one request's chunks are contiguous */
            q = find_id(v, id);
        free(id);
        if (!q)
            continue;
        if (q->n_chunks == q->cap)
            q->chunk = xrealloc(q->chunk, (q->cap = q->cap ? q->cap * 2 : 64) * sizeof *q->chunk);
        q->chunk[q->n_chunks++] = t;
    }
    csv_close(&c);
    return rc;
}

static int sched_cmp(const void *a, const void *b) {
    const vreq *x = a, *y = b;
    if (x->sched != y->sched)
        return x->sched < y->sched ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static void vrun_free(vrun *v) {
    for (size_t i = 0; i < v->n; i++) {
        free(v->r[i].id);
        free(v->r[i].chunk);
    }
    free(v->r);
    free(v->by_id);
}

/* vLLM's success: no error and a first chunk of output. */
static int completed(const vreq *q) {
    return q->error == ERR_NONE && !isnan(q->first) && !isnan(q->sent);
}

static double latency_s(const vreq *q) {
    return ((isnan(q->last) ? q->first : q->last) - q->sent) / 1000.0;
}

static double ttft_s(const vreq *q) {
    return (q->first - q->sent) / 1000.0;
}

static double out_len(const vreq *q) {
    return completed(q) ? (q->otok >= 0 ? q->otok : (double)q->n_chunks) : 0;
}

/* tpot in seconds; 0 when one token or none (what vLLM's goodput uses). */
static double tpot_s(const vreq *q) {
    double n = out_len(q);
    return n > 1 ? (latency_s(q) - ttft_s(q)) / (n - 1) : 0;
}

/* "mean_X_ms", "median_X_ms", "std_X_ms", "pP_X_ms" of seconds in x. */
static void put_stats(json_t *o, const char *name, double *x, size_t n,
                      const vllm_export_opts *opt) {
    dist d = dist_of(x, n); /* sorts x: the percentiles below read it */
    char key[64];
    snprintf(key, sizeof key, "mean_%s_ms", name);
    json_object_set_new(o, key, json_real(n ? d.mean * 1000 : 0));
    snprintf(key, sizeof key, "median_%s_ms", name);
    json_object_set_new(o, key, json_real(n ? d.p50 * 1000 : 0));
    snprintf(key, sizeof key, "std_%s_ms", name);
    json_object_set_new(o, key, json_real(n ? d.sd * 1000 : 0));
    for (int k = 0; k < opt->n_percentiles; k++) {
        double p = opt->percentiles[k];
        snprintf(key, sizeof key, "p%.15g_%s_ms", p, name);
        json_object_set_new(o, key, json_real(n ? percentile_sorted(x, n, p) * 1000 : 0));
    }
}

typedef struct event {
    double t;
    int d; /* +1 a start, -1 an end */
} event;

/* By time, an end before a start at a tie (intervals are half open). */
static int event_cmp(const void *a, const void *b) {
    const event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d;
}

/* The most chunks in one whole second from the first start, and the most
 * completed requests in flight at one instant. */
static void peaks(const vrun *v, double *max_tok_s, int *max_conc) {
    double t0 = INFINITY, t1 = -INFINITY;
    size_t n_ok = 0;
    for (size_t i = 0; i < v->n; i++)
        if (completed(&v->r[i])) {
            t0 = fmin(t0, v->r[i].sent / 1000.0);
            t1 = fmax(t1, v->r[i].sent / 1000.0 + latency_s(&v->r[i]));
            n_ok++;
        }
    *max_tok_s = 0;
    *max_conc = 0;
    if (!n_ok)
        return;
    /* each chunk's whole second from t0, sorted: the longest run of one
     * second is the peak (memory as the chunks, whatever the run's span) */
    size_t n_sec = 0, cap = 0;
    double *sec = NULL;
    event *ev = xmalloc(2 * n_ok * sizeof *ev);
    size_t ne = 0;
    for (size_t i = 0; i < v->n; i++) {
        const vreq *q = &v->r[i];
        if (!completed(q))
            continue;
        for (size_t k = 0; k < (q->n_chunks ? q->n_chunks : 1); k++) {
            double t = (q->n_chunks ? q->chunk[k] : q->first) / 1000.0 - t0;
            if (!(t >= 0 && t <= t1 - t0))
                continue;
            if (n_sec == cap)
                sec = xrealloc(sec, (cap = cap ? cap * 2 : 1024) * sizeof *sec);
            sec[n_sec++] = floor(t);
        }
        ev[ne++] = (event){q->sent / 1000.0, 1};
        ev[ne++] = (event){q->sent / 1000.0 + latency_s(q), -1};
    }
    sort_doubles(sec, n_sec);
    for (size_t i = 0, run = 0; i < n_sec; i++) {
        run = i > 0 && sec[i] == sec[i - 1] ? run + 1 : 1;
        *max_tok_s = fmax(*max_tok_s, (double)run);
    }
    free(sec);
    qsort(ev, ne, sizeof *ev, event_cmp);
    int cur = 0;
    for (size_t i = 0; i < ne; i++)
        if ((cur += ev[i].d) > *max_conc)
            *max_conc = cur;
    free(ev);
}

/* vLLM's "date" (%Y%m%d-%H%M%S) from the run's t0_utc (else started_utc):
 * when the run began, in UTC, where vLLM writes its local time at saving. */
static json_t *date_json(json_t *meta) {
    json_t *t = json_object_get(meta, "t0_utc");
    if (!json_is_string(t))
        t = json_object_get(meta, "started_utc");
    const char *s = json_string_value(t);
    int y, mo, d, h, mi, se;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &se) != 6)
        return json_null();
    char buf[32];
    snprintf(buf, sizeof buf, "%04d%02d%02d-%02d%02d%02d", y % 10000, mo % 100, d % 100, h % 100,
             mi % 100, se % 100);
    return json_string(buf);
}

/* The model asked for, else the server's first (what servelab then used). */
static json_t *model_json(json_t *meta) {
    json_t *m = json_object_get(json_object_get(meta, "config"), "model");
    if (json_is_string(m))
        return json_incref(m);
    json_t *data =
        json_object_get(json_object_get(json_object_get(meta, "server"), "models"), "data");
    m = json_object_get(json_array_get(data, 0), "id");
    return json_is_string(m) ? json_incref(m) : json_null();
}

/* vLLM's model_id: the model the server loaded (its /v1/models `root`, the
 * path `vllm serve` was given, which vLLM's client writes), else the id. */
static json_t *model_root_json(json_t *meta) {
    json_t *id = model_json(meta);
    json_t *data =
        json_object_get(json_object_get(json_object_get(meta, "server"), "models"), "data");
    size_t i;
    json_t *m;
    json_array_foreach(data, i, m) {
        json_t *root = json_object_get(m, "root");
        if (json_is_string(root) && json_string_length(root) &&
            json_equal(json_object_get(m, "id"), id)) {
            json_decref(id);
            return json_incref(root);
        }
    }
    return id;
}

/* A rate plan of one ramp is vLLM's linear ramp-up (--ramp-up-strategy
 * linear --ramp-up-start-rps A --ramp-up-end-rps B); other plans have no
 * vLLM form and keep only their mean rate in request_rate. */
static void put_ramp(json_t *o, json_t *meta) {
    json_t *stages = json_object_get(json_object_get(meta, "rate_plan"), "stages");
    json_t *st = json_array_get(stages, 0);
    if (json_array_size(stages) != 1 ||
        strcmp(json_string_value(json_object_get(st, "kind")) ?: "", "ramp"))
        return;
    json_object_set_new(o, "ramp_up_strategy", json_string("linear"));
    json_object_set(o, "ramp_up_start_rps", json_object_get(st, "from_rps"));
    json_object_set(o, "ramp_up_end_rps", json_object_get(st, "to_rps"));
}

/* --metadata KEY=VALUE, each a top-level string key as vLLM's --metadata
 * writes them; the file's own keys, set after, win (as in vLLM). */
static void put_metadata(json_t *o, json_t *meta) {
    json_t *list = json_object_get(json_object_get(meta, "config"), "metadata");
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *kv = json_string_value(item), *eq = kv ? strchr(kv, '=') : NULL;
        if (!eq || eq == kv)
            continue;
        char key[80];
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv) < 79 ? (int)(eq - kv) : 79, kv);
        json_object_set_new(o, key, json_string(eq + 1));
    }
}

/* vLLM's burstiness is the gamma distribution's shape: 1 for Poisson;
 * servelab's --burstiness is the gaps' coefficient of variation CV, and a
 * gamma of shape k has CV 1/sqrt(k). Constant gaps are vLLM's inf, which
 * JSON cannot hold: null. */
static json_t *burstiness_json(json_t *cfg) {
    const char *a = json_string_value(json_object_get(cfg, "arrival"));
    double cv = json_number_value(json_object_get(cfg, "burstiness"));
    if (!a || !strcmp(a, "poisson"))
        return json_real(1.0);
    if (!strcmp(a, "gamma") && cv > 0)
        return json_real(1.0 / (cv * cv));
    return json_null();
}

static void put_setup(json_t *o, json_t *meta, const char *dir, const vllm_export_opts *opt,
                      size_t n, double realized_rps) {
    json_t *cfg = json_object_get(meta, "config");
    const char *api = json_string_value(json_object_get(cfg, "api"));
    const char *backend = api && !strcmp(api, "chat") ? "openai-chat" : "openai";
    const char *base = strrchr(dir, '/');
    const char *given = json_string_value(json_object_get(cfg, "label"));
    char label[256];
    snprintf(label, sizeof label, "%s",
             opt->label        ? opt->label
             : given           ? given
             : base && base[1] ? base + 1
                               : dir);
    json_t *rate = json_object_get(cfg, "rate"), *conc = json_object_get(cfg, "concurrency");
    int replay = json_is_object(json_object_get(meta, "replay"));
    put_metadata(o, meta);
    json_object_set_new(o, "date", date_json(meta));
    json_object_set_new(o, "endpoint_type", json_string(backend));
    json_object_set_new(o, "backend", json_string(backend));
    json_object_set_new(o, "label", json_string(label));
    json_object_set_new(o, "model_id", model_root_json(meta));
    /* output tokens are the server's own count (usage), so its model's tokenizer */
    json_object_set_new(o, "tokenizer_id", model_root_json(meta));
    json_object_set_new(o, "num_prompts", json_integer((json_int_t)n));
    /* a replay's rate is its trace's: the schedule's realized rate, and no
     * arrival process of vLLM's */
    json_object_set_new(
        o, "request_rate",
        replay ? (isfinite(realized_rps) ? json_real(realized_rps) : json_string("inf"))
        : json_is_number(rate) ? json_incref(rate)
                               : json_string("inf"));
    json_object_set_new(o, "burstiness", replay ? json_null() : burstiness_json(cfg));
    json_object_set_new(o, "max_concurrency",
                        json_integer_value(conc) > 0 ? json_incref(conc) : json_null());
    put_ramp(o, meta);
}

/* errors[i]: "" for a completed request, else servelab's class (with the
 * HTTP status for http), or why vLLM would fail it. */
static json_t *error_text(const vreq *q) {
    char buf[96];
    if (completed(q))
        return json_string("");
    if (q->error == ERR_NONE)
        return json_string("no chunk of output (vLLM fails such a request)");
    if (q->error == ERR_HTTP && !isnan(q->status))
        snprintf(buf, sizeof buf, "http %.0f", q->status);
    else
        snprintf(buf, sizeof buf, "%s", err_class_name(q->error));
    return json_string(buf);
}

/* The per-request arrays, in schedule order. */
static void put_arrays(json_t *o, const vrun *v) {
    const char *names[] = {"input_lens", "output_lens", "ttfts",       "itls",
                           "latencies",  "start_times", "queue_times", "errors"};
    json_t *a[8];
    for (int k = 0; k < 8; k++)
        a[k] = json_array();
    for (size_t i = 0; i < v->n; i++) {
        const vreq *q = &v->r[i];
        int ok = completed(q);
        json_t *gaps = json_array();
        for (size_t k = 1; ok && k < q->n_chunks; k++)
            json_array_append_new(gaps, json_real((q->chunk[k] - q->chunk[k - 1]) / 1000.0));
        json_array_append_new(a[0], json_integer(q->ptok >= 0 ? (json_int_t)q->ptok : 0));
        json_array_append_new(a[1], json_integer((json_int_t)out_len(q)));
        json_array_append_new(a[2], json_real(ok ? ttft_s(q) : 0));
        json_array_append_new(a[3], gaps);
        json_array_append_new(a[4], json_real(ok ? latency_s(q) : 0));
        json_array_append_new(a[5],
                              json_real(isnan(q->sent) ? q->sched / 1000.0 : q->sent / 1000.0));
        json_array_append_new(a[6], json_real(isnan(q->sent) ? 0 : (q->sent - q->sched) / 1000.0));
        json_array_append_new(a[7], error_text(q));
    }
    for (int k = 0; k < 8; k++)
        json_object_set_new(o, names[k], a[k]);
}

static int meets(const vreq *q, const slo_spec *s) {
    return completed(q) && (s->ttft_ms <= 0 || ttft_s(q) * 1000 <= s->ttft_ms) &&
           (s->tpot_ms <= 0 || tpot_s(q) * 1000 <= s->tpot_ms) &&
           (s->e2e_ms <= 0 || latency_s(q) * 1000 <= s->e2e_ms);
}

/* The run's duration: t=0 to the end of its last request. */
static double duration_s(const vrun *v) {
    double end = 0;
    for (size_t i = 0; i < v->n; i++) {
        const vreq *q = &v->r[i];
        double t = !isnan(q->end) ? q->end : !isnan(q->last) ? q->last : q->sent;
        if (!isnan(t))
            end = fmax(end, t);
    }
    return end / 1000.0;
}

static void put_totals(json_t *o, const vrun *v, json_t *meta, const vllm_export_opts *opt) {
    size_t ok = 0, good = 0, n_itl = 0;
    double in = 0, out = 0, dur = duration_s(v);
    slo_spec slo = {0};
    const char *st = json_string_value(json_object_get(json_object_get(meta, "config"), "slo"));
    char e[128];
    int have_slo = st && !slo_parse(st, &slo, e, sizeof e);
    for (size_t i = 0; i < v->n; i++) {
        const vreq *q = &v->r[i];
        out += out_len(q);
        if (!completed(q))
            continue;
        ok++;
        in += q->ptok >= 0 ? q->ptok : 0;
        good += have_slo && meets(q, &slo);
        n_itl += q->n_chunks > 1 ? q->n_chunks - 1 : 0;
    }
    double per = dur > 0 ? 1 / dur : 0;
    json_object_set_new(o, "duration", json_real(dur));
    json_object_set_new(o, "completed", json_integer((json_int_t)ok));
    json_object_set_new(o, "failed", json_integer((json_int_t)(v->n - ok)));
    json_object_set_new(o, "total_input_tokens", json_integer((json_int_t)in));
    json_object_set_new(o, "total_output_tokens", json_integer((json_int_t)out));
    json_object_set_new(o, "request_throughput", json_real((double)ok * per));
    json_object_set_new(o, "request_goodput",
                        have_slo ? json_real((double)good * per) : json_null());
    json_object_set_new(o, "output_throughput", json_real(out * per));
    json_object_set_new(o, "total_token_throughput", json_real((in + out) * per));
    double max_tok;
    int max_conc;
    peaks(v, &max_tok, &max_conc);
    json_object_set_new(o, "max_output_tokens_per_s", json_real(max_tok));
    json_object_set_new(o, "max_concurrent_requests", json_integer(max_conc));
    json_object_set_new(o, "rtfx", json_real(0));
    /* the four distributions, in seconds, then vLLM's statistics of each */
    double *x[4];
    size_t n[4] = {0};
    for (int k = 0; k < 4; k++)
        x[k] = xmalloc(((k == 2 ? n_itl : v->n) + 1) * sizeof *x[k]);
    for (size_t i = 0; i < v->n; i++) {
        const vreq *q = &v->r[i];
        if (!completed(q))
            continue;
        x[0][n[0]++] = ttft_s(q);
        if (out_len(q) > 1)
            x[1][n[1]++] = tpot_s(q);
        for (size_t k = 1; k < q->n_chunks; k++)
            x[2][n[2]++] = (q->chunk[k] - q->chunk[k - 1]) / 1000.0;
        x[3][n[3]++] = latency_s(q);
    }
    const char *names[] = {"ttft", "tpot", "itl", "e2el"};
    for (int k = 0; k < 4; k++) {
        put_stats(o, names[k], x[k], n[k], opt);
        free(x[k]);
    }
}

int vllm_percentiles_parse(const char *text, vllm_export_opts *o, char *err, int errlen) {
    o->n_percentiles = 0;
    const char *p = text ? text : "99";
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !(v >= 0 && v <= 100) || (*end && *end != ',')) {
            snprintf(err, errlen,
                     "--metric-percentiles: expected numbers in 0-100 split by "
                     "commas (99 or 50,90,99), got '%s'",
                     text);
            return -1;
        }
        if (o->n_percentiles == VLLM_MAX_PERCENTILES) {
            snprintf(err, errlen, "--metric-percentiles: at most %d", VLLM_MAX_PERCENTILES);
            return -1;
        }
        o->percentiles[o->n_percentiles++] = v;
        p = *end ? end + 1 : end;
        if (*end && !*p) {
            snprintf(err, errlen, "--metric-percentiles: nothing after the last comma in '%s'",
                     text);
            return -1;
        }
    }
    if (!o->n_percentiles) {
        snprintf(err, errlen, "--metric-percentiles: empty");
        return -1;
    }
    return 0;
}

json_t *vllm_export(const char *dir, const vllm_export_opts *opt, char *err, int errlen) {
    vllm_export_opts def = {.percentiles = {99}, .n_percentiles = 1};
    if (!opt || !opt->n_percentiles) {
        def.label = opt ? opt->label : NULL;
        opt = &def;
    }
    vrun v = {0};
    if (read_requests(dir, &v, err, errlen) || read_chunks(dir, &v, err, errlen)) {
        vrun_free(&v);
        return NULL;
    }
    qsort(v.r, v.n, sizeof *v.r, sched_cmp);
    json_t *meta = rundir_meta_read(dir);
    json_t *o = json_object();
    double span = v.n > 1 ? (v.r[v.n - 1].sched - v.r[0].sched) / 1000.0 : 0;
    put_setup(o, meta, dir, opt, v.n, span > 0 ? (double)(v.n - 1) / span : INFINITY);
    put_totals(o, &v, meta, opt);
    json_t *spec = spec_decode_of_metas(&meta, 1); /* the keys vllm bench serve adds */
    spec_decode_vllm_keys(spec, o);
    json_decref(spec);
    put_arrays(o, &v);
    json_decref(meta);
    vrun_free(&v);
    return o;
}

int vllm_export_file(const char *dir, const char *path, const vllm_export_opts *o, char *err,
                     int errlen) {
    json_t *j = vllm_export(dir, o, err, errlen);
    if (!j)
        return -1;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
    int rc = json_dump_file(j, tmp, JSON_REAL_PRECISION(17));
    json_decref(j);
    if (rc || rename(tmp, path)) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int vllm_report_files(const report *r, const vllm_export_opts *o, out_file **files, int *n_files,
                      char *err, int errlen) {
    for (int k = 0; k < r->n_runs; k++) {
        const report_run *rr = &r->runs[k];
        for (int i = 0; i < rr->n_reps; i++) {
            if (vllm_import_is_file(rr->rep_dirs[i])) /* already vLLM's file */
                continue;
            char name[256], label[256];
            snprintf(label, sizeof label, "%s", rr->name);
            for (char *p = label; *p; p++)
                if (*p == '/')
                    *p = '_';
            const char *rep = strrchr(rr->rep_dirs[i], '/');
            if (rr->n_reps > 1)
                snprintf(name, sizeof name, "vllm-%.120s-%.100s.json", label, rep ? rep + 1 : "");
            else
                snprintf(name, sizeof name, "vllm-%.200s.json", label);
            vllm_export_opts one = *o;
            one.label = rr->name;
            json_t *j = vllm_export(rr->rep_dirs[i], &one, err, errlen);
            if (!j)
                return -1;
            char *text = json_dumps(j, JSON_REAL_PRECISION(17));
            json_decref(j);
            out_file *f = out_files_add(files, n_files, name);
            sb_puts(&f->body, text);
            sb_puts(&f->body, "\n");
            free(text);
        }
    }
    return 0;
}
