/* load: a run directory read back into rows, through the strict CSV
 * reader (common/csv.h). requests.csv and chunks.csv are the run's
 * measurements, so any bad row there is an error naming file and line;
 * server_metrics.csv and gpu.csv are samples beside it, so a row there
 * that does not read is skipped. */
#include "report/load.h"
#include "report/vllm_import.h"
#include "common/files.h"
#include "common/csv.h"
#include "rundir/columns.h"
#include "rundir/summary_file.h"
#include "common/util.h"
#include "model/slo.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A token count as servelab writes it: empty (NAN) or a whole number that
 * fits the record's int32_t. */
static int count_ok(double v) {
    return isnan(v) || (v >= 0 && v <= INT32_MAX);
}

static int class_id(run_rows *rows, const char *s, size_t n) {
    for (int i = 0; i < rows->n_classes; i++)
        if (strlen(rows->classes[i]) == n && !memcmp(rows->classes[i], s, n))
            return i;
    if (rows->n_classes == 32)
        return 31;
    char *c = xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    rows->classes[rows->n_classes] = c;
    return rows->n_classes++;
}

/* A column's name (rundir/columns.h's table), for messages. */
static const char *requests_cols(int k) {
    return rundir_requests.col[k].name;
}

/* A time (ms since the run's start) or a duration: empty (NAN, missing),
 * or a finite number not below 0. Text that reads as NaN is not empty. */
static int time_of(const csv_row *row, int col, double *v) {
    if (csv_number(row, col, v))
        return -1;
    if (isnan(*v))
        return row->len[col] ? -1 : 0;
    return isfinite(*v) && *v >= 0 ? 0 : -1;
}

/* A request's times come in this order (each where present), so that no
 * duration the report computes from them (the wait to be sent, TTFT, the
 * decode, E2E, from sending or from the schedule) is negative: the first
 * column out of order, or NULL; *after says which column it precedes. */
static const char *out_of_order(const req_rec *r, const char **after) {
    const double t[] = {r->scheduled_ms, r->sent_ms, r->first_ms, r->last_ms, r->end_ms};
    const int cols[] = {RQ_scheduled_ms, RQ_sent_ms, RQ_first_token_ms, RQ_last_token_ms,
                        RQ_end_ms};
    int prev = -1;
    for (int i = 0; i < 5; i++) {
        if (isnan(t[i]))
            continue;
        /* a request never sent ended when the run gave it up, which may be
         * before it was due (a stop, a conversation that ended) */
        if (i == 4 && prev == 0 && isnan(r->sent_ms))
            continue;
        if (prev >= 0 && t[i] < t[prev]) {
            *after = requests_cols(cols[prev]);
            return requests_cols(cols[i]);
        }
        prev = i;
    }
    return NULL;
}

/* The times, the lag and the durations written beside them: the first
 * column whose value is bad, or NULL. */
static const char *read_times(const csv_row *row, const int *col, req_rec *r) {
    double *dst[] = {&r->scheduled_ms, &r->sent_ms, &r->first_ms,
                     &r->last_ms,      &r->end_ms,  &r->lag_ms};
    const int which[] = {RQ_scheduled_ms,  RQ_sent_ms, RQ_first_token_ms,
                         RQ_last_token_ms, RQ_end_ms,  RQ_lag_ms};
    r->lag_ms = NAN;
    for (int i = 0; i < 6; i++)
        if (col[which[i]] >= 0 && time_of(row, col[which[i]], dst[i]))
            return requests_cols(which[i]);
    if (isnan(r->scheduled_ms))
        return requests_cols(RQ_scheduled_ms);
    _Static_assert(RQ_tpot_ms == RQ_ttft_ms + 1 && RQ_e2e_ms == RQ_tpot_ms + 1,
                   "the three durations are written side by side");
    for (int k = RQ_ttft_ms; k <= RQ_e2e_ms; k++) {
        double d;
        if (col[k] >= 0 && time_of(row, col[k], &d))
            return requests_cols(k);
    }
    return NULL;
}

/* A count column, where present: empty (-1) or a count that fits an
 * int32_t. */
static int count_of(const csv_row *row, int col, int32_t *v) {
    double d;
    *v = -1;
    if (col < 0)
        return 0;
    if (csv_number(row, col, &d) || !count_ok(d) || (isnan(d) && row->len[col]))
        return -1;
    if (!isnan(d))
        *v = (int32_t)d;
    return 0;
}

/* A phase or server column holding a time or a duration, where present. */
static int phase_time_of(const csv_row *row, int col, double *v) {
    *v = NAN;
    return col >= 0 ? time_of(row, col, v) : 0;
}

/* Where TTFT went and the server's own account: the first column whose
 * value is bad, or NULL. Counts the record does not keep are only checked;
 * first_coalesced is empty, 0 or 1. A duration past what a float holds is
 * bad (no server or handshake takes 10^38 ms). */
static const char *read_phases(const csv_row *row, const int *col, req_rec *r) {
    double t[5];
    const int times[] = {RQ_connect_ms, RQ_written_ms, RQ_first_byte_ms, RQ_server_prompt_ms,
                         RQ_server_decode_ms};
    for (int i = 0; i < 5; i++)
        if (phase_time_of(row, col[times[i]], &t[i]) ||
            ((i == 0 || i >= 3) && !isnan(t[i]) && t[i] > FLT_MAX))
            return requests_cols(times[i]);
    r->connect_ms = (float)t[0];
    r->written_ms = t[1];
    r->first_byte_ms = t[2];
    r->server_prompt_ms = (float)t[3];
    r->server_decode_ms = (float)t[4];
    int32_t n[6];
    const int counts[] = {RQ_coalesced,       RQ_first_coalesced, RQ_server_prompt_n,
                          RQ_server_decode_n, RQ_server_cache_n,  RQ_cached_tokens};
    for (int i = 0; i < 6; i++)
        if (count_of(row, col[counts[i]], &n[i]) || (i == 1 && n[i] > 1))
            return requests_cols(counts[i]);
    r->first_coalesced = (int8_t)n[1];
    r->server_decode_n = n[3];
    r->server_prompt_n = n[2];
    r->cached_tokens = n[5];
    int32_t turn;
    if (count_of(row, col[RQ_turn], &turn) || turn == 0 || turn > UINT16_MAX)
        return requests_cols(RQ_turn);
    r->turn = (uint16_t)(turn > 0 ? turn : 0);
    if (phase_time_of(row, col[RQ_first_answer_ms], &r->first_answer_ms))
        return requests_cols(RQ_first_answer_ms);
    if (!isnan(r->first_answer_ms) && !(r->first_answer_ms >= r->first_ms))
        return requests_cols(
            RQ_first_answer_ms); /* an answer before the first token, or without one */
    if (count_of(row, col[RQ_reasoning_tokens], &r->reasoning_tokens))
        return requests_cols(RQ_reasoning_tokens);
    int from = col[RQ_reasoning_from];
    r->reasoning_server = from >= 0 && row->len[from] == 6 && !memcmp(row->f[from], "server", 6);
    int32_t calls, valid;
    if (count_of(row, col[RQ_tool_calls], &calls) || calls > INT16_MAX)
        return requests_cols(RQ_tool_calls);
    r->tool_calls = (int16_t)calls;
    if (phase_time_of(row, col[RQ_first_tool_ms], &r->first_tool_ms))
        return requests_cols(RQ_first_tool_ms);
    if (count_of(row, col[RQ_answer_valid], &valid) || valid > 1)
        return requests_cols(RQ_answer_valid);
    r->answer_valid = (int8_t)valid;
    if (count_of(row, col[RQ_server_draft_n], &r->server_draft_n))
        return requests_cols(RQ_server_draft_n);
    if (count_of(row, col[RQ_server_draft_accepted], &r->server_draft_accepted))
        return requests_cols(RQ_server_draft_accepted);
    return NULL;
}

/* One row's times, token counts and error class into *r (its part and
 * class left to the caller); NULL, or the first column whose value is bad,
 * in column order, and only then the first time out of order (*why then
 * names the column it comes before). */
static const char *parse_request(const csv_row *row, const int *col, req_rec *r, const char **why) {
    double ptok, otok;
    const char *bad = read_times(row, col, r), *after = NULL;
    *why = NULL;
    if (!bad && (csv_number(row, col[RQ_prompt_tokens], &ptok) || !count_ok(ptok)))
        bad = requests_cols(RQ_prompt_tokens);
    else if (!bad && (csv_number(row, col[RQ_output_tokens], &otok) || !count_ok(otok)))
        bad = requests_cols(RQ_output_tokens);
    char ebuf[32];
    size_t el =
        row->len[col[RQ_error]] < sizeof ebuf - 1 ? row->len[col[RQ_error]] : sizeof ebuf - 1;
    memcpy(ebuf, row->f[col[RQ_error]], el);
    ebuf[el] = 0;
    int e = err_class_parse(ebuf);
    if (!bad && e < 0)
        bad = requests_cols(RQ_error);
    if (!bad)
        bad = read_phases(row, col, r);
    if (!bad && (bad = out_of_order(r, &after))) /* every value reads: are they in order? */
        *why = after;
    if (bad)
        return bad;
    r->prompt_tokens = isnan(ptok) ? -1 : (int32_t)ptok;
    r->output_tokens = isnan(otok) ? -1 : (int32_t)otok;
    r->error = (uint8_t)e;
    return NULL;
}

_Static_assert(RQ_N <= ROWS_FEED_COLUMNS, "rows_feed holds every column the loader reads");

int feed_requests_header(rows_feed *f, const csv_row *header, const char *path, char *err,
                         int errlen) {
    f->ncols = header->n;
    f->header_read = 1;
    /* a contract column must be there; the others are optional (runs from
     * before lag_ms or the phases lack them, and the durations are only
     * checked: the report computes them from the times) */
    return rundir_columns_find(&rundir_requests, header, f->col, path, err, errlen);
}

int feed_request(rows_feed *f, const csv_row *row, const char *path, int line, char *err,
                 int errlen) {
    if (row->error) {
        snprintf(err, errlen, "%s:%d: %s", path, line, row->error);
        return -1;
    }
    if (csv_row_blank(row))
        return 0;
    if (row->n != f->ncols) {
        snprintf(err, errlen, "%s:%d: %d fields, the header has %d", path, line, row->n, f->ncols);
        return -1;
    }
    req_rec r = req_rec_unknown();
    const char *why, *bad = parse_request(row, f->col, &r, &why);
    if (bad) {
        snprintf(err, errlen, "%s:%d: bad value in column %s%s%s%s", path, line, bad,
                 why ? " (before " : "", why ? why : "", why ? ": a negative duration)" : "");
        return -1;
    }
    r.part = (uint16_t)f->part;
    r.cls = (int16_t)class_id(f->rows, row->f[f->col[RQ_class]], row->len[f->col[RQ_class]]);
    if (r.scheduled_ms > f->last_sched)
        f->last_sched = r.scheduled_ms;
    rows_add(f->rows, &r);
    return 0;
}

static int load_requests(const char *path, rows_feed *f, char *err, int errlen) {
    csv_file c;
    int rc = csv_open(&c, path);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, rc > 0 ? "missing" : file_why(errno));
        return -1;
    }
    csv_row row;
    rc = 0;
    while (!rc && csv_next(&c, &row))
        rc = c.line == 1 ? feed_requests_header(f, &row, path, err, errlen)
                         : feed_request(f, &row, path, c.line, err, errlen);
    if (!rc && c.line == 0) {
        snprintf(err, errlen, "%s:1: empty file (no header)", path);
        rc = -1;
    }
    csv_close(&c);
    return rc;
}

/* A chunk's token count: not negative and at most a million (no server
 * streams more in one event), because each token becomes one inter-token gap
 * in memory. */
static int chunk_tokens_ok(double v) {
    return v >= 0 && v <= 1e6;
}

/* A double as a float without the undefined behaviour of an out-of-range
 * conversion: too large becomes infinite. */
static float to_float(double v) {
    if (v > FLT_MAX)
        return INFINITY;
    if (v < -FLT_MAX)
        return -INFINITY;
    return (float)v;
}

/* chunks.csv: per-token inter-chunk gaps and tokens inside the window.
 * Rows of one request are contiguous (servelab writes them together), so
 * each request's gaps are contiguous too, and where they start is kept
 * (rows->itl_starts) for a bootstrap that resamples requests. The
 * fifth column, coalesced, came later: runs written before it have four. */
int feed_chunk(rows_feed *f, const csv_row *row, const char *path, int line, char *err,
               int errlen) {
    if (csv_row_blank(row))
        return 0;
    double t, tok;
    if (row->error) {
        snprintf(err, errlen, "%s:%d: %s", path, line, row->error);
        return -1;
    }
    /* by place: chunks.csv's columns have not moved since it began */
    if ((row->n != CH_coalesced && row->n != CH_N) || csv_number(row, CH_t_ms, &t) ||
        !isfinite(t) || csv_number(row, CH_tokens, &tok) || !chunk_tokens_ok(tok)) {
        snprintf(err, errlen, "%s:%d: expected request_id,index,t_ms,tokens[,coalesced]", path,
                 line);
        return -1;
    }
    run_rows *rows = f->rows;
    if (t <= (f->window_given ? f->window_ms : f->last_sched))
        rows->window_output_tokens += tok;
    int same = f->have_prev && f->prev_len == row->len[0] &&
               (!row->len[0] || !memcmp(f->prev_id, row->f[0], row->len[0])); /* "" has no copy */
    f->gaps_started &= same;
    if (same && tok >= 1) {
        float gap = to_float((t - f->prev_t) / tok);
        if (!f->gaps_started) /* the request's first gap: its gaps start here */
            rows_start_itl_request(rows);
        f->gaps_started = 1;
        rows_add_chunk_gap(rows, gap, (int)tok, to_float(t - f->prev_t));
    }
    if (!same) { /* a copy: a quoted field lasts only until the next row */
        if (row->len[0] > f->prev_cap)
            f->prev_id = xrealloc(f->prev_id, f->prev_cap = row->len[0] * 2);
        if (row->len[0])
            memcpy(f->prev_id, row->f[0], row->len[0]);
        f->prev_len = row->len[0];
    }
    f->have_prev = 1;
    f->prev_t = t;
    return 0;
}

static int load_chunks(const char *path, rows_feed *f, int *present, char *err, int errlen) {
    csv_file c;
    int rc = csv_open(&c, path);
    *present = rc == 0;
    if (rc > 0)
        return 0;
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, file_why(errno));
        return -1;
    }
    csv_row row;
    rc = 0;
    while (!rc && csv_next(&c, &row))
        rc = c.line == 1 ? 0 : feed_chunk(f, &row, path, c.line, err, errlen);
    csv_close(&c);
    return rc;
}

void feed_free(rows_feed *f) {
    free(f->prev_id);
    f->prev_id = NULL;
    f->prev_cap = 0;
}

/* server_metrics.csv: t_ms,name,labels,value. Only the gauges and counters
 * the report draws are kept (labels ignored: one model per server). The
 * file may hold a series' sample only when it changed (client/sampler.h):
 * a series kept, missing at a page's time (a time some row has), had its
 * last value then, so each page's rows are gathered and every series kept
 * gets a sample at every page's time from its first one on. A file of
 * every sample reads the same. */
typedef struct kept_series {
    char name[64];
    char *key; /* name and labels */
    double v;  /* its last value */
} kept_series;

typedef struct kept_set {
    kept_series *k;
    int n;
} kept_set;

/* The kept series `key` (n bytes), added when new. */
static kept_series *kept_of(kept_set *ks, const char *name, const char *key, size_t n) {
    for (int i = 0; i < ks->n; i++)
        if (!strncmp(ks->k[i].key, key, n) && !ks->k[i].key[n])
            return &ks->k[i];
    ks->k = xrealloc(ks->k, (size_t)(ks->n + 1) * sizeof *ks->k);
    kept_series *k = &ks->k[ks->n++];
    snprintf(k->name, sizeof k->name, "%s", name);
    k->key = xmalloc(n + 1);
    memcpy(k->key, key, n);
    k->key[n] = 0;
    return k;
}

/* The page at t_ms ended: every kept series' value then. */
static void page_end(const kept_set *ks, double t_ms, run_files *rf) {
    for (int i = 0; i < ks->n; i++)
        series_add(&rf->metrics, ks->k[i].name, t_ms, ks->k[i].v);
}

/* A row of a kept series: its name and labels (the fields between the time
 * and the value) into key. */
static size_t row_key(const csv_row *row, char *key, size_t cap) {
    size_t n = 0;
    for (int i = 1; i < row->n - 1; i++)
        n += (size_t)snprintf(key + n, n < cap ? cap - n : 0, "%s%.*s", i > 1 ? "\x1f" : "",
                              (int)row->len[i], row->f[i]);
    return n;
}

static void load_metrics(const char *path, run_files *rf) {
    csv_file c;
    if (csv_open(&c, path))
        return;
    kept_set ks = {0};
    double page_t = NAN;
    csv_row row;
    while (csv_next(&c, &row)) {
        /* The value is the last field (the labels may hold commas); a line
         * with more fields than a row keeps has no last field to read. */
        int n = row.n;
        if (c.line == 1 || row.error || n < 4 || n > CSV_MAX_FIELDS)
            continue;
        double t, v;
        if (csv_number(&row, 0, &t) || isnan(t))
            continue;
        if (t != page_t && !isnan(page_t))
            page_end(&ks, page_t, rf);
        page_t = t;
        char name[64], key[8400];
        if (csv_number(&row, n - 1, &v) || row.len[1] >= sizeof name)
            continue;
        memcpy(name, row.f[1], row.len[1]);
        name[row.len[1]] = 0;
        if (!server_metric_wanted(name))
            continue;
        size_t kn = row_key(&row, key, sizeof key);
        if (kn < sizeof key)
            kept_of(&ks, name, key, kn)->v = v;
    }
    if (!isnan(page_t))
        page_end(&ks, page_t, rf);
    for (int i = 0; i < ks.n; i++)
        free(ks.k[i].key);
    free(ks.k);
    csv_close(&c);
}

/* gpu.csv: t_ms,gpu,util_pct,mem_used_mib,power_w,sm_clock_mhz,temp_c */
static void load_gpu(const char *path, run_files *rf) {
    csv_file c;
    if (csv_open(&c, path))
        return;
    csv_row row;
    while (csv_next(&c, &row)) {
        if (c.line == 1 || row.error || row.n < 5)
            continue;
        double t, util, power;
        if (csv_number(&row, 0, &t) || csv_number(&row, 2, &util) || csv_number(&row, 4, &power))
            continue;
        char name[48];
        snprintf(name, sizeof name, "gpu%.*s util_pct", (int)row.len[1], row.f[1]);
        series_add(&rf->gpu, name, t, util);
        snprintf(name, sizeof name, "gpu%.*s power_w", (int)row.len[1], row.f[1]);
        series_add(&rf->gpu, name, t, power);
    }
    csv_close(&c);
}

int meta_summary_params(json_t *meta, const char *slo, double cost_per_hour, summary_params *p,
                        char *err, int errlen) {
    json_t *cfg = json_object_get(meta, "config");
    json_t *rate = json_object_get(cfg, "rate"), *cost = json_object_get(cfg, "cost_per_hour");
    p->offered_rps = !meta                  ? NAN
                     : json_is_number(rate) ? json_number_value(rate)
                                            : INFINITY; /* "inf" or unknown */
    p->client_cpu_s = -1;
    if (!slo && json_is_string(json_object_get(cfg, "slo")))
        slo = json_string_value(json_object_get(cfg, "slo"));
    if (slo && slo_parse(slo, &p->slo, err, errlen))
        return -1;
    p->cost_per_hour = cost_per_hour > 0      ? cost_per_hour
                       : json_is_number(cost) ? json_number_value(cost)
                                              : 0;
    return 0;
}

int load_run(const char *dir, int part, run_rows *rows, run_files *files, char *err, int errlen) {
    char path[4096];
    if (vllm_import_is_file(dir)) /* vLLM's result file, not a run directory */
        return vllm_import(dir, part, rows, files, err, errlen);
    memset(files, 0, sizeof *files);
    files->meta = rundir_meta_read(dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    files->has_summary = access(path, F_OK) == 0;
    rows_feed f = {.rows = rows, .part = part};
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    int rc = load_requests(path, &f, err, errlen);
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    if (!rc)
        rc = load_chunks(path, &f, &files->has_chunks, err, errlen);
    feed_free(&f);
    if (rc)
        return -1;
    load_samples(dir, files);
    return 0;
}

void load_samples(const char *dir, run_files *files) {
    char path[4096];
    snprintf(path, sizeof path, "%s/server_metrics.csv", dir);
    load_metrics(path, files);
    snprintf(path, sizeof path, "%s/gpu.csv", dir);
    load_gpu(path, files);
    server_stats_compute(&files->metrics, &files->gpu, &files->server);
}

void run_files_free(run_files *f) {
    json_decref(f->meta);
    series_set_free(&f->metrics);
    series_set_free(&f->gpu);
    memset(f, 0, sizeof *f);
}
