/* report: discovery, pooling and rendering. Tables are built once as plain
 * cell grids and rendered twice (Markdown and HTML), so the two can never
 * disagree; figures are SVG strings kept both as files and inline. */
#include "report/report.h"
#include "analysis/stats.h"
#include "common/files.h"
#include "common/util.h"
#include "report/svg.h"

#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BOOTSTRAP_REPS 2000
#define BOOTSTRAP_SEED 0

/* ---------- discovery ---------- */

typedef struct dir_list {
    char **d;
    int n, cap;
} dir_list;

static void dl_add(dir_list *l, const char *s) {
    if (l->n == l->cap)
        l->d = xrealloc(l->d, (size_t)(l->cap = l->cap ? l->cap * 2 : 16) * sizeof *l->d);
    l->d[l->n++] = xstrdup(s);
}

static int is_file(const char *dir, const char *name) {
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every directory holding a requests.csv, depth first, in sorted order. */
static void find_runs(const char *dir, dir_list *out, int depth) {
    if (depth > 8)
        return;
    if (is_file(dir, "requests.csv")) {
        dl_add(out, dir);
        return;
    }
    DIR *d = opendir(dir);
    if (!d)
        return;
    dir_list kids = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            dl_add(&kids, p);
    }
    closedir(d);
    if (kids.n > 1)
        qsort(kids.d, (size_t)kids.n, sizeof *kids.d, cmp_str);
    for (int i = 0; i < kids.n; i++) {
        find_runs(kids.d[i], out, depth + 1);
        free(kids.d[i]);
    }
    free(kids.d);
}

static int is_rep_dir(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "rep-", 4) || !b[4])
        return 0;
    for (const char *p = b + 4; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* Group key: the parent for rep-K directories, else the directory. */
static void group_key(const char *path, char *key, size_t cap, char *name, size_t ncap) {
    snprintf(key, cap, "%s", path);
    if (is_rep_dir(path)) {
        char *slash = strrchr(key, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(key, cap, ".");
    }
    const char *b = strrchr(key, '/');
    snprintf(name, ncap, "%.200s", b ? b + 1 : key);
}

/* ---------- building ---------- */

static double meta_rate(json_t *meta) {
    json_t *r = json_object_get(json_object_get(meta, "config"), "rate");
    if (json_is_number(r))
        return json_number_value(r);
    return INFINITY; /* "inf" or unknown */
}

static void subset(const run_rows *all, int by_part, int key, run_rows *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < all->n; i++)
        if ((by_part ? all->r[i].part : all->r[i].cls) == key) {
            req_rec r = all->r[i];
            if (!by_part)
                r.part = all->r[i].part;
            rows_add(out, &r);
        }
}

static void sorted_metric(const run_rows *rows, int tpot, double **out, size_t *n) {
    double *v = xmalloc((rows->n ? rows->n : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->error != ERR_NONE || isnan(r->first_ms))
            continue;
        if (!tpot)
            v[k++] = r->first_ms - r->sent_ms;
        else if (r->output_tokens >= 2)
            v[k++] = (r->last_ms - r->first_ms) / (r->output_tokens - 1);
    }
    sort_doubles(v, k);
    *out = v;
    *n = k;
}

static int build_run(report_run *rr, const report_opts *o, char *err, int errlen) {
    rr->files = xcalloc((size_t)rr->n_reps, sizeof *rr->files);
    for (int k = 0; k < rr->n_reps; k++)
        if (load_run(rr->rep_dirs[k], k, &rr->rows, &rr->files[k], err, errlen))
            return -1;
    json_t *meta = rr->files[0].meta;
    json_t *cfg = json_object_get(meta, "config");
    rr->params.offered_rps = meta ? meta_rate(meta) : NAN;
    rr->params.client_cpu_s = -1;
    const char *slo = o->slo;
    if (!slo && json_is_string(json_object_get(cfg, "slo")))
        slo = json_string_value(json_object_get(cfg, "slo"));
    if (slo && slo_parse(slo, &rr->params.slo, err, errlen))
        return -1;
    json_t *cost = json_object_get(cfg, "cost_per_hour");
    rr->params.cost_per_hour = o->cost_per_hour > 0   ? o->cost_per_hour
                               : json_is_number(cost) ? json_number_value(cost)
                                                      : 0;
    rr->fixture = json_is_true(json_object_get(meta, "fixture"));
    /* What, besides the offered load, distinguishes this run. */
    json_t *sa = json_object_get(json_object_get(meta, "campaign"), "server_args");
    const char *keys[] = {"api", "prompts", "mix", "max_tokens", "concurrency", "ignore_eos"};
    size_t vl = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char *v = json_dumps(json_object_get(cfg, keys[i]), JSON_ENCODE_ANY | JSON_COMPACT);
        vl += (size_t)snprintf(rr->variant + vl, sizeof rr->variant - vl, "%s=%s;", keys[i],
                               v ? v : "null");
        free(v);
        if (vl >= sizeof rr->variant)
            vl = sizeof rr->variant - 1;
    }
    snprintf(rr->variant + vl, sizeof rr->variant - vl, "server_args=%s",
             json_is_string(sa) ? json_string_value(sa) : "");
    rr->server = rr->files[0].server;
    for (int k = 1; k < rr->n_reps; k++)
        server_stats_pool(&rr->server, &rr->files[k].server);
    summarize(&rr->rows, &rr->params, &rr->pooled);
    if (!meta) /* no nominal rate known: the schedule's own */
        rr->pooled.offered_rps = rr->params.offered_rps = rr->pooled.realized_offered_rps;
    rr->per_rep = xcalloc((size_t)rr->n_reps, sizeof *rr->per_rep);
    for (int k = 0; k < rr->n_reps; k++) {
        run_rows sub;
        subset(&rr->rows, 1, k, &sub);
        for (size_t i = 0; i < sub.n; i++)
            sub.r[i].part = 0;
        summarize(&sub, &rr->params, &rr->per_rep[k]);
        rows_free(&sub);
    }
    rr->per_class = xcalloc((size_t)rr->rows.n_classes + 1, sizeof *rr->per_class);
    for (int c = 0; c < rr->rows.n_classes; c++) {
        run_rows sub;
        subset(&rr->rows, 0, c, &sub);
        summarize(&sub, &rr->params, &rr->per_class[c]);
        rows_free(&sub);
    }
    for (int m = 0; m < 2; m++) {
        double *v;
        size_t n;
        sorted_metric(&rr->rows, m, &v, &n);
        bootstrap_percentile_ci(v, n, 50, BOOTSTRAP_REPS, BOOTSTRAP_SEED, &rr->ci[2 * m][0],
                                &rr->ci[2 * m][1]);
        bootstrap_percentile_ci(v, n, 95, BOOTSTRAP_REPS, BOOTSTRAP_SEED, &rr->ci[2 * m + 1][0],
                                &rr->ci[2 * m + 1][1]);
        free(v);
    }
    return 0;
}

static int cmp_runs(const void *a, const void *b) {
    const report_run *x = a, *y = b;
    double ox = x->params.offered_rps, oy = y->params.offered_rps;
    if (ox != oy && !(isnan(ox) && isnan(oy)))
        return isnan(ox) ? 1 : isnan(oy) ? -1 : (ox > oy) - (ox < oy);
    return strcmp(x->name, y->name);
}

/* Length of the report argument a found directory lies under, with its
 * slash, so that files never name the path the report was called with. */
static int root_len_of(const char *dir, char *const *paths, int n_paths) {
    for (int i = 0; i < n_paths; i++) {
        size_t n = strlen(paths[i]);
        while (n > 1 && paths[i][n - 1] == '/')
            n--;
        if (!strncmp(dir, paths[i], n) && dir[n] == '/')
            return (int)n + 1;
    }
    const char *b = strrchr(dir, '/'); /* the argument was the run itself */
    return b ? (int)(b - dir) + 1 : 0;
}

int report_build(char *const *paths, int n_paths, const report_opts *o, report *r, char *err,
                 int errlen) {
    memset(r, 0, sizeof *r);
    dir_list dirs = {0};
    for (int i = 0; i < n_paths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "report: %s: not a directory", paths[i]);
            return -1;
        }
        find_runs(paths[i], &dirs, 0);
    }
    if (dirs.n == 0) {
        snprintf(err, errlen, "report: no run directories (with requests.csv) under %s%s", paths[0],
                 n_paths > 1 ? " and the other paths" : "");
        return -1;
    }
    char **keys = xcalloc((size_t)dirs.n, sizeof *keys);
    for (int i = 0; i < dirs.n; i++) {
        char key[4096], name[256];
        group_key(dirs.d[i], key, sizeof key, name, sizeof name);
        report_run *rr = NULL;
        for (int k = 0; k < r->n_runs && !rr; k++)
            if (!strcmp(keys[k], key))
                rr = &r->runs[k];
        if (!rr) {
            r->runs = xrealloc(r->runs, (size_t)(r->n_runs + 1) * sizeof *r->runs);
            keys[r->n_runs] = xstrdup(key);
            rr = &r->runs[r->n_runs++];
            memset(rr, 0, sizeof *rr);
            snprintf(rr->name, sizeof rr->name, "%s", name);
            rr->root_len = root_len_of(dirs.d[i], paths, n_paths);
        }
        rr->rep_dirs = xrealloc(rr->rep_dirs, (size_t)(rr->n_reps + 1) * sizeof *rr->rep_dirs);
        rr->rep_dirs[rr->n_reps++] = xstrdup(dirs.d[i]);
        free(dirs.d[i]);
    }
    for (int k = 0; k < r->n_runs; k++)
        free(keys[k]);
    free(keys);
    free(dirs.d);
    for (int k = 0; k < r->n_runs; k++)
        if (build_run(&r->runs[k], o, err, errlen))
            return -1;
    qsort(r->runs, (size_t)r->n_runs, sizeof *r->runs, cmp_runs);
    return 0;
}

void report_free(report *r) {
    for (int k = 0; k < r->n_runs; k++) {
        report_run *rr = &r->runs[k];
        for (int i = 0; i < rr->n_reps; i++) {
            free(rr->rep_dirs[i]);
            if (rr->files)
                run_files_free(&rr->files[i]);
        }
        for (int c = 0; c < rr->rows.n_classes; c++)
            free((char *)rr->rows.classes[c]);
        free(rr->rep_dirs);
        free(rr->files);
        free(rr->per_rep);
        free(rr->per_class);
        rows_free(&rr->rows);
    }
    free(r->runs);
    memset(r, 0, sizeof *r);
}

/* ---------- tables (rendered as Markdown and as HTML) ---------- */

typedef struct table {
    int cols, rows;
    char **cell; /* rows+1 (header) x cols */
} table;

static table *tbl_new(int cols, const char *const *header) {
    table *t = xcalloc(1, sizeof *t);
    t->cols = cols;
    t->cell = xcalloc((size_t)cols, sizeof *t->cell);
    for (int c = 0; c < cols; c++)
        t->cell[c] = xstrdup(header[c]);
    return t;
}

static void tbl_row(table *t, const char *const *cells) {
    t->rows++;
    t->cell = xrealloc(t->cell, (size_t)(t->rows + 1) * (size_t)t->cols * sizeof *t->cell);
    for (int c = 0; c < t->cols; c++)
        t->cell[t->rows * t->cols + c] = xstrdup(cells[c]);
}

static void tbl_free(table *t) {
    for (int i = 0; i < (t->rows + 1) * t->cols; i++)
        free(t->cell[i]);
    free(t->cell);
    free(t);
}

static void tbl_md(strbuf *o, const table *t) {
    for (int r = 0; r <= t->rows; r++) {
        sb_puts(o, "|");
        for (int c = 0; c < t->cols; c++) {
            sb_puts(o, " ");
            sb_puts(o, t->cell[r * t->cols + c]);
            sb_puts(o, " |");
        }
        sb_puts(o, "\n");
        if (r == 0) {
            sb_puts(o, "|");
            for (int c = 0; c < t->cols; c++)
                sb_puts(o, c ? " ---: |" : " --- |");
            sb_puts(o, "\n");
        }
    }
    sb_puts(o, "\n");
}

static void tbl_html(strbuf *o, const table *t) {
    sb_puts(o, "<table>\n<tr>");
    for (int c = 0; c < t->cols; c++) {
        sb_puts(o, "<th>");
        sb_escape(o, t->cell[c]);
        sb_puts(o, "</th>");
    }
    sb_puts(o, "</tr>\n");
    for (int r = 1; r <= t->rows; r++) {
        sb_puts(o, "<tr>");
        for (int c = 0; c < t->cols; c++) {
            sb_puts(o, c ? "<td class=\"n\">" : "<td>");
            sb_escape(o, t->cell[r * t->cols + c]);
            sb_puts(o, "</td>");
        }
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
}

/* A number with fixed decimals; "" when unknown, "inf" when infinite. */
static const char *fnum(char *buf, double v, int dec) {
    if (isnan(v))
        buf[0] = 0;
    else if (isinf(v))
        snprintf(buf, 32, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, 32, "%.*f", dec, fabs(v) < 0.5 * pow(10, -dec) ? 0.0 : v);
    return buf;
}

/* ---------- summary.csv ---------- */

static const char *csv_cols[] = {"run",
                                 "offered_rps",
                                 "requests",
                                 "ttft_p50_ms",
                                 "ttft_p95_ms",
                                 "tpot_p50_ms",
                                 "tpot_p95_ms",
                                 "output_tokens_per_s",
                                 "goodput_rps",
                                 "goodput_fraction",
                                 "cost_per_million_output_tokens",
                                 "repetitions",
                                 "completed",
                                 "failed",
                                 "duration_s",
                                 "realized_offered_rps",
                                 "achieved_rps",
                                 "achieved_rps_arrival_window",
                                 "output_tokens_per_s_arrival_window",
                                 "total_tokens_per_s",
                                 "ttft_mean_ms",
                                 "ttft_p90_ms",
                                 "ttft_p99_ms",
                                 "ttft_p99_9_ms",
                                 "ttft_sched_p50_ms",
                                 "ttft_sched_p95_ms",
                                 "ttft_sched_p99_ms",
                                 "tpot_p99_ms",
                                 "itl_p50_ms",
                                 "itl_p95_ms",
                                 "itl_p99_ms",
                                 "e2e_p50_ms",
                                 "e2e_p95_ms",
                                 "e2e_p99_ms",
                                 "e2e_sched_p50_ms",
                                 "e2e_sched_p99_ms",
                                 "ttft_p50_ci_lo_ms",
                                 "ttft_p50_ci_hi_ms",
                                 "ttft_p95_ci_lo_ms",
                                 "ttft_p95_ci_hi_ms",
                                 "tpot_p50_ci_lo_ms",
                                 "tpot_p50_ci_hi_ms",
                                 "tpot_p95_ci_lo_ms",
                                 "tpot_p95_ci_hi_ms",
                                 "ttft_p50_rep_min_ms",
                                 "ttft_p50_rep_max_ms",
                                 "ttft_p95_rep_min_ms",
                                 "ttft_p95_rep_max_ms",
                                 "errors_connect",
                                 "errors_timeout",
                                 "errors_http",
                                 "errors_disconnect",
                                 "errors_malformed",
                                 "errors_cancelled",
                                 "server_preemptions",
                                 "server_peak_running",
                                 "server_peak_waiting",
                                 "server_peak_kv_usage",
                                 "server_queue_share_of_ttft",
                                 "gpu_energy_j_per_output_token"};
#define N_CSV_COLS ((int)(sizeof csv_cols / sizeof *csv_cols))

static void rep_range(const report_run *rr, int p95, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < rr->n_reps; k++) {
        double v = p95 ? rr->per_rep[k].ttft.p95 : rr->per_rep[k].ttft.p50;
        if (isnan(v))
            continue;
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
    if (*lo > *hi)
        *lo = *hi = NAN;
}

static void csv_values(const report_run *rr, char v[][32]) {
    const run_summary *s = &rr->pooled;
    double lo50, hi50, lo95, hi95;
    rep_range(rr, 0, &lo50, &hi50);
    rep_range(rr, 1, &lo95, &hi95);
    double vals[] = {s->offered_rps,
                     (double)s->requests,
                     s->ttft.p50,
                     s->ttft.p95,
                     s->tpot.p50,
                     s->tpot.p95,
                     s->output_tokens_per_s,
                     s->goodput_rps,
                     s->goodput_fraction,
                     s->cost_per_million_output_tokens,
                     rr->n_reps,
                     (double)s->completed,
                     (double)s->failed,
                     s->duration_s,
                     s->realized_offered_rps,
                     s->achieved_rps,
                     s->achieved_rps_window,
                     s->output_tokens_per_s_window,
                     s->total_tokens_per_s,
                     s->ttft.mean,
                     s->ttft.p90,
                     s->ttft.p99,
                     s->ttft.p999,
                     s->ttft_sched.p50,
                     s->ttft_sched.p95,
                     s->ttft_sched.p99,
                     s->tpot.p99,
                     s->itl.p50,
                     s->itl.p95,
                     s->itl.p99,
                     s->e2e.p50,
                     s->e2e.p95,
                     s->e2e.p99,
                     s->e2e_sched.p50,
                     s->e2e_sched.p99,
                     rr->ci[0][0],
                     rr->ci[0][1],
                     rr->ci[1][0],
                     rr->ci[1][1],
                     rr->ci[2][0],
                     rr->ci[2][1],
                     rr->ci[3][0],
                     rr->ci[3][1],
                     lo50,
                     hi50,
                     lo95,
                     hi95,
                     (double)s->errors[ERR_CONNECT],
                     (double)s->errors[ERR_TIMEOUT],
                     (double)s->errors[ERR_HTTP],
                     (double)s->errors[ERR_DISCONNECT],
                     (double)s->errors[ERR_MALFORMED],
                     (double)s->errors[ERR_CANCELLED],
                     rr->server.preemptions,
                     rr->server.peak_running,
                     rr->server.peak_waiting,
                     rr->server.peak_kv_usage,
                     rr->server.queue_share_of_ttft,
                     s->output_tokens > 0 ? rr->server.gpu_energy_j / s->output_tokens : NAN};
    /* decimals by column meaning */
    for (int c = 1; c < N_CSV_COLS; c++) {
        const char *name = csv_cols[c];
        int dec = 3;
        if (strstr(name, "rps") || strstr(name, "fraction"))
            dec = 4;
        else if (strstr(name, "tokens_per_s"))
            dec = 2;
        else if (strstr(name, "cost"))
            dec = 6;
        else if (!strcmp(name, "requests") || !strcmp(name, "repetitions") ||
                 !strcmp(name, "completed") || !strcmp(name, "failed") ||
                 !strncmp(name, "errors_", 7) || !strcmp(name, "server_preemptions") ||
                 !strncmp(name, "server_peak_r", 13) || !strncmp(name, "server_peak_w", 13))
            dec = 0;
        else if (!strcmp(name, "server_peak_kv_usage") || strstr(name, "share"))
            dec = 4;
        fnum(v[c], vals[c - 1], dec);
    }
}

static void render_csv(const report *r, strbuf *o) {
    for (int c = 0; c < N_CSV_COLS; c++)
        sb_printf(o, "%s%s", c ? "," : "", csv_cols[c]);
    sb_puts(o, "\n");
    char v[N_CSV_COLS][32];
    for (int k = 0; k < r->n_runs; k++) {
        csv_values(&r->runs[k], v);
        sb_puts(o, r->runs[k].name);
        for (int c = 1; c < N_CSV_COLS; c++)
            sb_printf(o, ",%s", v[c]);
        sb_puts(o, "\n");
    }
}

/* ---------- summary.json ---------- */

static void render_json(const report *r, strbuf *o) {
    json_t *runs = json_array();
    for (int k = 0; k < r->n_runs; k++) {
        const report_run *rr = &r->runs[k];
        json_t *j = json_object();
        json_object_set_new(j, "run", json_string(rr->name));
        json_object_set_new(j, "repetitions", json_integer(rr->n_reps));
        json_object_set_new(j, "fixture", json_boolean(rr->fixture));
        json_object_set_new(j, "pooled", summary_json(&rr->pooled));
        json_object_set_new(j, "server", server_stats_json(&rr->server, rr->pooled.output_tokens));
        json_t *reps = json_array();
        for (int i = 0; i < rr->n_reps; i++) {
            json_t *rep = summary_json(&rr->per_rep[i]);
            json_object_set_new(rep, "directory", json_string(rr->rep_dirs[i] + rr->root_len));
            json_array_append_new(reps, rep);
        }
        json_object_set_new(j, "per_repetition", reps);
        json_t *cls = json_object();
        for (int c = 0; c < rr->rows.n_classes; c++)
            json_object_set_new(cls, rr->rows.classes[c], summary_json(&rr->per_class[c]));
        json_object_set_new(j, "by_class", cls);
        const char *ci_names[] = {"ttft_p50_ms", "ttft_p95_ms", "tpot_p50_ms", "tpot_p95_ms"};
        json_t *ci = json_object();
        for (int m = 0; m < 4; m++)
            json_object_set_new(
                ci, ci_names[m],
                isnan(rr->ci[m][0]) ? json_null() : json_pack("[f,f]", rr->ci[m][0], rr->ci[m][1]));
        json_object_set_new(j, "bootstrap_ci95", ci);
        json_array_append_new(runs, j);
    }
    json_t *root = json_pack("{s:o,s:{s:i,s:i}}", "runs", runs, "bootstrap", "replicates",
                             BOOTSTRAP_REPS, "seed", BOOTSTRAP_SEED);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    sb_puts(o, s);
    sb_puts(o, "\n");
    free(s);
    json_decref(root);
}

/* ---------- metadata ---------- */

static void meta_rows(const report *r, table *t) {
    json_t *meta = r->runs[0].files[0].meta;
    char buf[512];
    int fixture = 1;
    for (int k = 0; k < r->n_runs; k++)
        fixture &= r->runs[k].fixture;
    const char *cells[2];
    cells[0] = "rows";
    cells[1] = fixture ? "fixture: every run was against servelab sim (simulated server)"
                       : "measured against a real server";
    tbl_row(t, cells);
    json_t *gpus = json_object_get(meta, "gpus");
    if (json_array_size(gpus) > 0) {
        json_t *g = json_array_get(gpus, 0);
        snprintf(buf, sizeof buf, "%zu x %s, driver %s, CUDA %s", json_array_size(gpus),
                 json_string_value(json_object_get(g, "name")) ?: "?",
                 json_string_value(json_object_get(g, "driver")) ?: "?",
                 json_string_value(json_object_get(g, "cuda")) ?: "?");
    } else {
        snprintf(buf, sizeof buf, "none recorded");
    }
    cells[0] = "GPU";
    cells[1] = buf;
    tbl_row(t, cells);
    json_t *server = json_object_get(meta, "server");
    json_t *ver = json_object_get(json_object_get(server, "version"), "version");
    json_t *hdr = json_object_get(server, "server_header");
    snprintf(buf, sizeof buf, "%s%s%s", json_is_string(ver) ? json_string_value(ver) : "unknown",
             json_is_string(hdr) ? ", Server: " : "",
             json_is_string(hdr) ? json_string_value(hdr) : "");
    cells[0] = "server";
    cells[1] = buf;
    tbl_row(t, cells);
    json_t *cfg = json_object_get(meta, "config");
    json_t *model = json_object_get(cfg, "model");
    cells[0] = "model";
    cells[1] = json_is_string(model) ? json_string_value(model) : "unknown";
    tbl_row(t, cells);
    cells[0] = "API";
    json_t *api = json_object_get(cfg, "api");
    cells[1] = json_is_string(api) ? json_string_value(api) : "unknown";
    tbl_row(t, cells);
    const slo_spec *slo = &r->runs[0].params.slo;
    buf[0] = 0;
    if (slo->ttft_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "TTFT <= %g ms ", slo->ttft_ms);
    if (slo->tpot_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "TPOT <= %g ms ", slo->tpot_ms);
    if (slo->e2e_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "E2E <= %g ms ", slo->e2e_ms);
    cells[0] = "SLO";
    cells[1] = buf[0] ? buf : "none (every successful request counts as good)";
    tbl_row(t, cells);
    json_t *host = json_object_get(meta, "host");
    snprintf(buf, sizeof buf, "%s, %d cores, kernel %s",
             json_string_value(json_object_get(host, "cpu_model")) ?: "unknown",
             (int)json_integer_value(json_object_get(host, "cores")),
             json_string_value(json_object_get(host, "kernel")) ?: "?");
    cells[0] = "client host";
    cells[1] = buf;
    tbl_row(t, cells);
    json_t *tool = json_object_get(meta, "tool");
    snprintf(buf, sizeof buf, "servelab %s (%s)",
             json_string_value(json_object_get(tool, "version")) ?: "?",
             json_string_value(json_object_get(tool, "git_commit")) ?: "?");
    cells[0] = "measured with";
    cells[1] = buf;
    tbl_row(t, cells);
}

static table *meta_table(const report *r) {
    const char *h[] = {"", ""};
    table *t = tbl_new(2, h);
    meta_rows(r, t);
    return t;
}

static table *overview_table(const report *r) {
    const char *h[] = {"run",
                       "offered rps",
                       "realized rps",
                       "requests",
                       "failed",
                       "TTFT p50 ms",
                       "TTFT p95 ms",
                       "TPOT p50 ms",
                       "TPOT p95 ms",
                       "output tok/s",
                       "goodput rps",
                       "goodput %",
                       "$ / M output tok",
                       "server queueing % of TTFT",
                       "preemptions"};
    table *t = tbl_new(15, h);
    for (int k = 0; k < r->n_runs; k++) {
        const run_summary *s = &r->runs[k].pooled;
        char b[15][32];
        snprintf(b[0], 32, "%.31s", r->runs[k].name);
        fnum(b[1], s->offered_rps, 2);
        fnum(b[2], s->realized_offered_rps, 2);
        snprintf(b[3], 32, "%zu", s->requests);
        snprintf(b[4], 32, "%zu", s->failed);
        fnum(b[5], s->ttft.p50, 1);
        fnum(b[6], s->ttft.p95, 1);
        fnum(b[7], s->tpot.p50, 2);
        fnum(b[8], s->tpot.p95, 2);
        fnum(b[9], s->output_tokens_per_s, 1);
        fnum(b[10], s->goodput_rps, 3);
        fnum(b[11], 100 * s->goodput_fraction, 1);
        fnum(b[12], s->cost_per_million_output_tokens, 4);
        fnum(b[13], 100 * r->runs[k].server.queue_share_of_ttft, 1);
        fnum(b[14], r->runs[k].server.preemptions, 0);
        const char *cells[15];
        for (int c = 0; c < 15; c++)
            cells[c] = b[c];
        tbl_row(t, cells);
    }
    return t;
}

static void dist_row(table *t, const char *name, const dist *d) {
    char b[8][32];
    const char *cells[9] = {name};
    double v[] = {d->mean, d->p50, d->p90, d->p95, d->p99, d->p999, d->max};
    for (int i = 0; i < 7; i++)
        cells[i + 1] = fnum(b[i], d->n ? v[i] : NAN, 2);
    snprintf(b[7], 32, "%zu", d->n);
    cells[8] = b[7];
    tbl_row(t, cells);
}

static table *latency_table(const report_run *rr) {
    const char *h[] = {"ms", "mean", "p50", "p90", "p95", "p99", "p99.9", "max", "n"};
    table *t = tbl_new(9, h);
    const run_summary *s = &rr->pooled;
    dist_row(t, "TTFT (from send)", &s->ttft);
    dist_row(t, "TTFT (from scheduled arrival)", &s->ttft_sched);
    dist_row(t, "TPOT", &s->tpot);
    dist_row(t, "inter-token (per token)", &s->itl);
    dist_row(t, "E2E (from send)", &s->e2e);
    dist_row(t, "E2E (from scheduled arrival)", &s->e2e_sched);
    dist_row(t, "client schedule lag", &s->lag);
    return t;
}

static table *detail_table(const report_run *rr) {
    const char *h[] = {"figure", "value"};
    table *t = tbl_new(2, h);
    const run_summary *s = &rr->pooled;
    char b[64], c[64];
    const char *cells[2];
#define ROW(label, ...)                                                                            \
    do {                                                                                           \
        snprintf(b, sizeof b, __VA_ARGS__);                                                        \
        cells[0] = label;                                                                          \
        cells[1] = b;                                                                              \
        tbl_row(t, cells);                                                                         \
    } while (0)
    ROW("repetitions pooled", "%d", rr->n_reps);
    ROW("duration (t=0 to last end, summed over repetitions)", "%.3f s", s->duration_s);
    ROW("arrival window (t=0 to last arrival)", "%.3f s", s->arrival_window_s);
    ROW("offered rate, as asked", "%s req/s", fnum(c, s->offered_rps, 3));
    ROW("offered rate, realized by the schedule", "%s req/s", fnum(c, s->realized_offered_rps, 3));
    ROW("achieved rate, whole run (includes the drain tail)", "%s req/s",
        fnum(c, s->achieved_rps, 3));
    ROW("achieved rate, arrival window only", "%s req/s", fnum(c, s->achieved_rps_window, 3));
    ROW("output tokens/s, whole run", "%s", fnum(c, s->output_tokens_per_s, 1));
    ROW("output tokens/s, arrival window only", "%s", fnum(c, s->output_tokens_per_s_window, 1));
    ROW("total tokens/s (prompt + output)", "%s", fnum(c, s->total_tokens_per_s, 1));
    ROW("completed / failed", "%zu / %zu", s->completed, s->failed);
    for (int e = 1; e < ERR_COUNT; e++)
        if (s->errors[e]) {
            char label[64];
            snprintf(label, sizeof label, "errors: %s", err_class_name(e));
            ROW(label, "%zu", s->errors[e]);
        }
    ROW("met the SLO", "%zu of %zu (%s%%)", s->meeting_slo, s->requests,
        fnum(c, 100 * s->goodput_fraction, 1));
    ROW("goodput", "%s req/s", fnum(c, s->goodput_rps, 3));
    if (isfinite(s->cost_per_million_output_tokens))
        ROW("cost per million output tokens", "$%.4f at $%.2f/hour",
            s->cost_per_million_output_tokens, s->cost_per_hour);
    const server_stats *sv = &rr->server;
    if (sv->has_metrics) {
        ROW("server: preemptions during the run", "%s", fnum(c, sv->preemptions, 0));
        ROW("server: prompt / generation tokens", "%.0f / %.0f", sv->prompt_tokens,
            sv->generation_tokens);
        ROW("server: peak running / waiting", "%.0f / %.0f", sv->peak_running, sv->peak_waiting);
        ROW("server: peak KV-cache use", "%s%%", fnum(c, 100 * sv->peak_kv_usage, 1));
        ROW("server: share of TTFT spent queued", "%s%%",
            fnum(c, 100 * sv->queue_share_of_ttft, 1));
    } else {
        ROW("server metrics", "%s", "not sampled (no /metrics)");
    }
    if (sv->has_gpu) {
        ROW("GPU energy per output token", "%s J",
            fnum(c, s->output_tokens > 0 ? sv->gpu_energy_j / s->output_tokens : NAN, 4));
        ROW("GPU utilisation (mean)", "%s%%", fnum(c, sv->gpu_util_mean_pct, 1));
    }
    const char *ci_names[] = {"TTFT p50 95% CI (bootstrap)", "TTFT p95 95% CI (bootstrap)",
                              "TPOT p50 95% CI (bootstrap)", "TPOT p95 95% CI (bootstrap)"};
    for (int m = 0; m < 4; m++) {
        char lo[32], hi[32];
        ROW(ci_names[m], "%s - %s ms", fnum(lo, rr->ci[m][0], 2), fnum(hi, rr->ci[m][1], 2));
    }
    if (rr->n_reps > 1) {
        double a, z, lo95, hi95;
        char x1[32], x2[32], x3[32], x4[32];
        rep_range(rr, 0, &a, &z);
        rep_range(rr, 1, &lo95, &hi95);
        ROW("TTFT p50 across repetitions (min - max)", "%s - %s ms", fnum(x1, a, 2),
            fnum(x2, z, 2));
        ROW("TTFT p95 across repetitions (min - max)", "%s - %s ms", fnum(x3, lo95, 2),
            fnum(x4, hi95, 2));
    }
#undef ROW
    return t;
}

static table *reps_table(const report_run *rr) {
    const char *h[] = {"repetition", "requests", "failed",   "TTFT p50",
                       "TTFT p95",   "TPOT p50", "TPOT p95", "output tok/s"};
    table *t = tbl_new(8, h);
    for (int k = 0; k < rr->n_reps; k++) {
        const run_summary *s = &rr->per_rep[k];
        char b[8][32];
        const char *name = strrchr(rr->rep_dirs[k], '/');
        snprintf(b[0], 32, "%.31s", name ? name + 1 : rr->rep_dirs[k]);
        snprintf(b[1], 32, "%zu", s->requests);
        snprintf(b[2], 32, "%zu", s->failed);
        fnum(b[3], s->ttft.p50, 2);
        fnum(b[4], s->ttft.p95, 2);
        fnum(b[5], s->tpot.p50, 2);
        fnum(b[6], s->tpot.p95, 2);
        fnum(b[7], s->output_tokens_per_s, 1);
        const char *cells[8];
        for (int c = 0; c < 8; c++)
            cells[c] = b[c];
        tbl_row(t, cells);
    }
    return t;
}

static table *class_table(const report_run *rr) {
    const char *h[] = {
        "class",    "requests", "failed", "prompt tok (mean)", "output tok (mean)", "TTFT p50",
        "TTFT p95", "TPOT p50", "E2E p50"};
    table *t = tbl_new(9, h);
    for (int c = 0; c < rr->rows.n_classes; c++) {
        const run_summary *s = &rr->per_class[c];
        char b[9][32];
        snprintf(b[0], 32, "%.31s", rr->rows.classes[c]);
        snprintf(b[1], 32, "%zu", s->requests);
        snprintf(b[2], 32, "%zu", s->failed);
        fnum(b[3], s->completed ? s->prompt_tokens / s->completed : NAN, 1);
        fnum(b[4], s->completed ? s->output_tokens / s->completed : NAN, 1);
        fnum(b[5], s->ttft.p50, 2);
        fnum(b[6], s->ttft.p95, 2);
        fnum(b[7], s->tpot.p50, 2);
        fnum(b[8], s->e2e.p50, 1);
        const char *cells[9];
        for (int k = 0; k < 9; k++)
            cells[k] = b[k];
        tbl_row(t, cells);
    }
    return t;
}

/* ---------- figures ---------- */

typedef struct figure {
    char file[200]; /* figures/NAME.svg */
    char caption[1600];
    strbuf svg;
} figure;

static void safe_name(char *out, size_t cap, const char *in) {
    size_t k = 0;
    for (; *in && k + 1 < cap; in++)
        out[k++] =
            (isalnum((unsigned char)*in) || *in == '-' || *in == '_' || *in == '.') ? *in : '_';
    out[k] = 0;
}

static figure *fig_add(figure **f, int *n, const char *file, const char *caption) {
    *f = xrealloc(*f, (size_t)(*n + 1) * sizeof **f);
    figure *g = &(*f)[(*n)++];
    memset(g, 0, sizeof *g);
    snprintf(g->file, sizeof g->file, "figures/%s.svg", file);
    snprintf(g->caption, sizeof g->caption, "%s", caption);
    return g;
}

/* The runs that differ only by offered load: the largest such group (the
 * first on ties). The others stay in the tables but off the load lines. */
static int main_variant(const report *r, int *in, char *left_out, size_t cap) {
    int best = 0, best_n = 0;
    for (int k = 0; k < r->n_runs; k++) {
        int c = 0;
        for (int j = 0; j < r->n_runs; j++)
            c += !strcmp(r->runs[j].variant, r->runs[k].variant);
        if (c > best_n) {
            best_n = c;
            best = k;
        }
    }
    left_out[0] = 0;
    for (int k = 0; k < r->n_runs; k++) {
        in[k] = !strcmp(r->runs[k].variant, r->runs[best].variant);
        if (!in[k])
            snprintf(left_out + strlen(left_out), cap - strlen(left_out), "%s%s",
                     left_out[0] ? ", " : "", r->runs[k].name);
    }
    return best_n;
}

static void fig_load(const report *r, figure **figs, int *nf) {
    int *in = xcalloc((size_t)r->n_runs, sizeof *in);
    char left_out[1024], note[1200] = "";
    main_variant(r, in, left_out, sizeof left_out);
    if (left_out[0])
        snprintf(note, sizeof note,
                 " Runs with other settings (%s) are in the tables, not on these lines.", left_out);
    int n = 0;
    const report_run **rs = xcalloc((size_t)r->n_runs, sizeof *rs);
    for (int k = 0; k < r->n_runs; k++)
        if (in[k])
            rs[n++] = &r->runs[k];
    double *x = xcalloc((size_t)n + 1, sizeof *x);
    double *y[8];
    for (int i = 0; i < 8; i++)
        y[i] = xcalloc((size_t)n + 1, sizeof *y[i]);
    for (int k = 0; k < n; k++) {
        const run_summary *s = &rs[k]->pooled;
        x[k] = s->offered_rps;
        y[0][k] = s->ttft.p50;
        y[1][k] = s->ttft.p95;
        y[2][k] = s->ttft.p99;
        y[3][k] = s->tpot.p50;
        y[4][k] = s->tpot.p95;
        y[5][k] = s->output_tokens_per_s;
        y[6][k] = s->achieved_rps;
        y[7][k] = s->goodput_rps;
    }
    plot_series lat[] = {
        {"TTFT p50", x, y[0], (size_t)n, 0, 0, 1, 0, 0},
        {"TTFT p95", x, y[1], (size_t)n, 0, 0, 1, 0, 1},
        {"TTFT p99", x, y[2], (size_t)n, 0, 0, 1, 0, 3},
        {"TPOT p50", x, y[3], (size_t)n, 0, 1, 1, 0, 2},
        {"TPOT p95", x, y[4], (size_t)n, 0, 1, 1, 0, 4},
    };
    plot_spec sp = {.title = "Latency vs offered load (where TTFT leaves the floor is the knee)",
                    .xlabel = "offered load (requests/s)",
                    .ylabel = "latency (ms, log scale)",
                    .logy = 1};
    char cap[1600];
    snprintf(cap, sizeof cap,
             "TTFT and TPOT percentiles against offered load, one point per run.%s", note);
    figure *f = fig_add(figs, nf, "latency_vs_load", cap);
    svg_plot(&f->svg, &sp, lat, 5);
    plot_series thr[] = {
        {"output tokens/s", x, y[5], (size_t)n, 0, 0, 1, 0, 0},
        {"achieved requests/s", x, y[6], (size_t)n, 1, 0, 1, 0, 2},
        {"goodput requests/s", x, y[7], (size_t)n, 1, 1, 1, 0, 1},
    };
    plot_spec sp2 = {.title = "Throughput vs offered load",
                     .xlabel = "offered load (requests/s)",
                     .ylabel = "output tokens/s",
                     .y2label = "requests/s",
                     .ymin_zero = 1};
    snprintf(cap, sizeof cap,
             "Output token throughput (left) and achieved and goodput request rates (right).%s",
             note);
    f = fig_add(figs, nf, "throughput_vs_load", cap);
    svg_plot(&f->svg, &sp2, thr, 3);
    int have_share = 0;
    for (int k = 0; k < n; k++) {
        y[0][k] = 100 * rs[k]->server.queue_share_of_ttft;
        y[1][k] = 100 * rs[k]->server.peak_kv_usage;
        have_share |= isfinite(y[0][k]);
    }
    if (have_share) {
        plot_series q[] = {{"server queueing share of TTFT", x, y[0], (size_t)n, 0, 0, 1, 0, 1},
                           {"peak KV-cache use", x, y[1], (size_t)n, 0, 1, 1, 0, 0}};
        plot_spec sp3 = {.title = "Why TTFT rises: time queued in the server, KV-cache pressure",
                         .xlabel = "offered load (requests/s)",
                         .ylabel = "percent",
                         .ymin_zero = 1};
        snprintf(cap, sizeof cap,
                 "Share of the server's TTFT spent waiting in its queue (from vLLM's queue-time "
                 "and TTFT histograms) and peak KV-cache use, per run.%s",
                 note);
        f = fig_add(figs, nf, "queueing_vs_load", cap);
        svg_plot(&f->svg, &sp3, q, 2);
    }
    free(x);
    free(in);
    free(rs);
    for (int i = 0; i < 8; i++)
        free(y[i]);
}

#define CDF_POINTS 400

static void fig_cdf(const report *r, figure **figs, int *nf) {
    plot_series *s = xcalloc((size_t)r->n_runs, sizeof *s);
    double **xs = xcalloc((size_t)r->n_runs, sizeof *xs),
           **ys = xcalloc((size_t)r->n_runs, sizeof *ys);
    for (int k = 0; k < r->n_runs; k++) {
        double *v;
        size_t n;
        sorted_metric(&r->runs[k].rows, 0, &v, &n);
        size_t m = n < CDF_POINTS ? n : CDF_POINTS;
        xs[k] = xcalloc(m + 1, sizeof **xs);
        ys[k] = xcalloc(m + 1, sizeof **ys);
        for (size_t i = 0; i < m; i++) {
            size_t idx = m == n ? i : (size_t)((double)(i + 1) / (double)m * (double)(n - 1));
            xs[k][i] = v[idx];
            ys[k][i] = (double)(idx + 1) / (double)n;
        }
        s[k] = (plot_series){r->runs[k].name, xs[k], ys[k], m, 0, 0, 0, 1, -1};
        free(v);
    }
    plot_spec sp = {.title = "TTFT distribution per run",
                    .xlabel = "time to first token (ms, log scale)",
                    .ylabel = "fraction of successful requests",
                    .logx = 1,
                    .ymin_zero = 1};
    figure *f = fig_add(figs, nf, "ttft_cdf", "Cumulative distribution of TTFT (from send).");
    svg_plot(&f->svg, &sp, s, r->n_runs);
    for (int k = 0; k < r->n_runs; k++) {
        free(xs[k]);
        free(ys[k]);
    }
    free(xs);
    free(ys);
    free(s);
}

#define TIMELINE_MAX 1500

static int cmp_sched(const void *a, const void *b) {
    const req_rec *x = *(req_rec *const *)a, *y = *(req_rec *const *)b;
    return (x->scheduled_ms > y->scheduled_ms) - (x->scheduled_ms < y->scheduled_ms);
}

static void fig_timeline(const report_run *rr, figure **figs, int *nf) {
    size_t n = 0;
    req_rec **p = xmalloc((rr->rows.n ? rr->rows.n : 1) * sizeof *p);
    for (size_t i = 0; i < rr->rows.n; i++)
        if (rr->rows.r[i].part == 0)
            p[n++] = &rr->rows.r[i];
    qsort(p, n, sizeof *p, cmp_sched);
    size_t m = n < TIMELINE_MAX ? n : TIMELINE_MAX;
    plot_bar *bars = xcalloc(3 * m + 1, sizeof *bars);
    size_t nb = 0;
    for (size_t j = 0; j < m; j++) {
        const req_rec *r = p[m == n ? j : (size_t)((double)j / (double)m * (double)n)];
        double y = (double)j, s0 = r->scheduled_ms / 1000, s1 = r->sent_ms / 1000,
               f = r->first_ms / 1000, e = r->end_ms / 1000;
        if (r->error != ERR_NONE) {
            bars[nb++] = (plot_bar){s0, isnan(e) ? s0 : e, y, 1};
            continue;
        }
        if (s1 > s0)
            bars[nb++] = (plot_bar){s0, s1, y, 8};
        bars[nb++] = (plot_bar){s1, isnan(f) ? e : f, y, 3};
        if (!isnan(f))
            bars[nb++] = (plot_bar){f, e, y, 0};
    }
    /* legend entries are palette slots 0.. in order: name them by colour */
    static const char *const legend[] = {"decode (first token to end)", "failed", NULL};
    plot_spec sp = {.title = NULL,
                    .xlabel = "time since the run started (s)",
                    .ylabel = "request (in arrival order)",
                    .bars = bars,
                    .n_bars = nb,
                    .bar_height = 0.8,
                    .bar_legend = legend,
                    .height = 460};
    /* orange (3) and grey (8) keep their meaning through the series legend */
    double zx[1] = {NAN}, zy[1] = {NAN};
    plot_series keys[] = {{"time to first token", zx, zy, 1, 0, 0, 0, 0, 3},
                          {"waiting in the client (cap)", zx, zy, 1, 0, 0, 0, 0, 8}};
    char title[320], file[200], safe[128];
    snprintf(title, sizeof title, "Timeline of %.200s%s: each request's wait, TTFT and decode",
             rr->name, rr->n_reps > 1 ? " (first repetition)" : "");
    sp.title = title;
    safe_name(safe, sizeof safe, rr->name);
    snprintf(file, sizeof file, "timeline-%s", safe);
    figure *f = fig_add(figs, nf, file,
                        m < n ? "Every request's life, sampled evenly (too many to draw all)."
                              : "Every request's life in the run.");
    svg_plot(&f->svg, &sp, keys, 2);
    free(bars);
    free(p);
}

static void fig_server(const report_run *rr, figure **figs, int *nf) {
    const run_files *rf = &rr->files[0];
    plot_series s[8];
    int ns = 0;
    double *kvpct = NULL;
    const series *run = series_find(&rf->metrics, "vllm:num_requests_running");
    const series *wait = series_find(&rf->metrics, "vllm:num_requests_waiting");
    const series *kv = series_find(&rf->metrics, "vllm:kv_cache_usage_perc");
    if (!run)
        run = series_find(&rf->metrics, "llamacpp:requests_processing");
    if (!wait)
        wait = series_find(&rf->metrics, "llamacpp:requests_deferred");
    double *tsec[8] = {0};
    const series *src[4] = {run, wait, kv, NULL};
    const char *names[3] = {"requests running", "requests waiting", "KV cache used (%)"};
    for (int i = 0; i < 3; i++) {
        if (!src[i] || !src[i]->n)
            continue;
        tsec[ns] = xmalloc(src[i]->n * sizeof(double));
        for (size_t k = 0; k < src[i]->n; k++)
            tsec[ns][k] = src[i]->t_ms[k] / 1000;
        const double *yv = src[i]->v;
        if (i == 2) {
            kvpct = xmalloc(src[i]->n * sizeof *kvpct);
            for (size_t k = 0; k < src[i]->n; k++)
                kvpct[k] = 100 * src[i]->v[k];
            yv = kvpct;
        }
        s[ns] = (plot_series){names[i], tsec[ns], yv, src[i]->n, i == 2, 0, 0, 1, i};
        ns++;
    }
    for (int g = 0; g < rf->gpu.n && ns < 8; g++) {
        const series *gs = &rf->gpu.s[g];
        if (!strstr(gs->name, "util_pct"))
            continue;
        tsec[ns] = xmalloc(gs->n * sizeof(double));
        for (size_t k = 0; k < gs->n; k++)
            tsec[ns][k] = gs->t_ms[k] / 1000;
        s[ns] = (plot_series){gs->name, tsec[ns], gs->v, gs->n, 1, 1, 0, 1, 3 + g};
        ns++;
    }
    if (ns > 0) {
        char title[320], file[200], safe[128];
        snprintf(title, sizeof title, "Server and GPU during %.200s%s", rr->name,
                 rr->n_reps > 1 ? " (first repetition)" : "");
        safe_name(safe, sizeof safe, rr->name);
        snprintf(file, sizeof file, "server-%s", safe);
        plot_spec sp = {.title = title,
                        .xlabel = "time since the run started (s)",
                        .ylabel = "requests",
                        .y2label = "percent",
                        .ymin_zero = 1};
        figure *f = fig_add(figs, nf, file,
                            "Queue depth and KV-cache use from the server's /metrics, GPU "
                            "utilisation from NVML, sampled during the run.");
        svg_plot(&f->svg, &sp, s, ns);
    }
    for (int i = 0; i < ns; i++)
        free(tsec[i]);
    free(kvpct);
}

/* ---------- the documents ---------- */

static const char *html_head =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<title>servelab report</title>\n<style>\n"
    "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\n"
    "table{border-collapse:collapse;margin:0.6em 0 1.2em}\n"
    "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}\n"
    "th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "figure{margin:1em 0}figcaption{font-size:13px;color:#555}\n"
    "svg{max-width:100%;height:auto;border:1px solid #eee}\n"
    ".note{font-size:13px;color:#555}\n</style>\n</head>\n<body>\n";

static void html_figure(strbuf *h, const figure *f) {
    sb_puts(h, "<figure>\n");
    sb_puts(h, f->svg.s);
    sb_puts(h, "<figcaption>");
    sb_escape(h, f->caption);
    sb_puts(h, " (");
    sb_escape(h, f->file);
    sb_puts(h, ")</figcaption>\n</figure>\n");
}

static out_file *add_out(out_file **o, int *n, const char *name) {
    *o = xrealloc(*o, (size_t)(*n + 1) * sizeof **o);
    out_file *f = &(*o)[(*n)++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    return f;
}

static const char *definitions =
    "Definitions: TTFT and E2E are measured from when each request was sent (comparable with "
    "vLLM's bench) and from when it was due by the arrival schedule (what a user arriving on "
    "schedule waits). Percentiles interpolate linearly between closest ranks (numpy's default). "
    "A request meets the SLO when it succeeded and every stated bound holds; failures count as "
    "misses and stay in every denominator. The run's duration runs from the first scheduled "
    "arrival to the end of the last request; rates over the arrival window leave out the drain "
    "tail. Confidence intervals: 2000 bootstrap replicates of the percentile, seed 0.";

void report_render(const report *r, out_file **files, int *n_files) {
    *files = NULL;
    *n_files = 0;
    figure *figs = NULL;
    int nf = 0;
    fig_load(r, &figs, &nf);
    fig_cdf(r, &figs, &nf);
    int *first_fig = xcalloc((size_t)r->n_runs + 1, sizeof *first_fig);
    int *last_fig = xcalloc((size_t)r->n_runs + 1, sizeof *last_fig);
    for (int k = 0; k < r->n_runs; k++) {
        first_fig[k] = nf;
        fig_timeline(&r->runs[k], &figs, &nf);
        fig_server(&r->runs[k], &figs, &nf);
        last_fig[k] = nf;
    }

    render_csv(r, &add_out(files, n_files, "summary.csv")->body);
    render_json(r, &add_out(files, n_files, "summary.json")->body);

    /* the documents are built in their own buffers: adding files may move
     * the array */
    strbuf md_buf = {0}, h_buf = {0};
    strbuf *md = &md_buf, *h = &h_buf;
    sb_puts(md, "# servelab report\n\n");
    sb_puts(h, html_head);
    sb_puts(h, "<h1>servelab report</h1>\n");
    table *t = meta_table(r);
    tbl_md(md, t);
    tbl_html(h, t);
    tbl_free(t);
    sb_puts(md, "## Runs\n\n");
    sb_puts(h, "<h2>Runs</h2>\n");
    t = overview_table(r);
    tbl_md(md, t);
    tbl_html(h, t);
    tbl_free(t);
    sb_printf(md, "%s\n\n", definitions);
    sb_puts(h, "<p class=\"note\">");
    sb_escape(h, definitions);
    sb_puts(h, "</p>\n<h2>Figures</h2>\n");
    for (int i = 0; i < first_fig[0] && i < nf; i++) {
        html_figure(h, &figs[i]);
        sb_printf(md, "![%s](%s)\n\n", figs[i].caption, figs[i].file);
    }
    for (int k = 0; k < r->n_runs; k++) {
        const report_run *rr = &r->runs[k];
        sb_printf(md, "## Run %s\n\n", rr->name);
        sb_puts(h, "<h2>Run ");
        sb_escape(h, rr->name);
        sb_puts(h, "</h2>\n");
        table *parts[4] = {detail_table(rr), latency_table(rr), reps_table(rr), class_table(rr)};
        const char *heads[4] = {"Key figures", "Latency", "Repetitions", "By prompt class"};
        for (int i = 0; i < 4; i++) {
            sb_printf(md, "### %s\n\n", heads[i]);
            sb_printf(h, "<h3>%s</h3>\n", heads[i]);
            tbl_md(md, parts[i]);
            tbl_html(h, parts[i]);
            tbl_free(parts[i]);
        }
        for (int i = first_fig[k]; i < last_fig[k]; i++) {
            html_figure(h, &figs[i]);
            sb_printf(md, "![%s](%s)\n\n", figs[i].caption, figs[i].file);
        }
    }
    sb_puts(h, "</body>\n</html>\n");
    add_out(files, n_files, "summary.md")->body = md_buf;
    add_out(files, n_files, "report.html")->body = h_buf;
    for (int i = 0; i < nf; i++) {
        out_file *f = add_out(files, n_files, figs[i].file);
        f->body = figs[i].svg;
    }
    free(figs);
    free(first_fig);
    free(last_fig);
}

static int write_file(const char *dir, const out_file *f) {
    char path[4400], tmp[4500];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *o = fopen(tmp, "wb");
    if (!o)
        return -1;
    size_t ok = fwrite(f->body.s ? f->body.s : "", 1, f->body.n, o);
    if (fclose(o) != 0 || ok != f->body.n) {
        remove(tmp);
        return -1;
    }
    return rename(tmp, path);
}

int report_write(const char *out, const out_file *files, int n_files, char *err, int errlen) {
    char figs[4200];
    snprintf(figs, sizeof figs, "%s/figures", out);
    if (mkdir_p(figs)) {
        snprintf(err, errlen, "--out %s: cannot create: %s", out, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n_files; i++)
        if (write_file(out, &files[i])) {
            snprintf(err, errlen, "cannot write %s/%s: %s", out, files[i].name, strerror(errno));
            return -1;
        }
    return 0;
}

void out_files_free(out_file *f, int n) {
    for (int i = 0; i < n; i++)
        sb_free(&f[i].body);
    free(f);
}
