/* server_metrics_kept: server_metrics.csv holds a series' sample only when
 * it changed (histogram buckets once in a while), and what the report reads
 * back from it is what every sample gave. Against `servelab sim` under
 * load: the sampler's own pages are kept in the test, the file is read as
 * the report reads it (load_samples) and compared series by series and
 * figure by figure with every sample, and its size with the rows that
 * writing every sample makes. And `--metrics-interval auto` samples a burst
 * (--rate inf, a schedule of length 0) less often as it goes on. */
#include "client/sampler.h"
#include "monitor/prom.h"
#include "report/load.h"
#include "run/run.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/* Every sample of every page, as the test saw it. */
typedef struct seen {
    char key[600]; /* name,labels as the file writes them */
    double t_ms, v;
    int bucket;
} seen;

typedef struct pages {
    seen *s;
    size_t n, cap;
    size_t full_bytes; /* what writing every sample would have written */
    double t_ms;
} pages;

static void on_page_sample(void *ud, const prom_sample *ps) {
    pages *p = ud;
    char labels[4096], key[600];
    prom_labels_format(ps, labels, sizeof labels);
    size_t q = (size_t)snprintf(key, sizeof key, "%s,", ps->name);
    if (ps->n_labels) {
        key[q++] = '"';
        for (const char *c = labels; *c && q < sizeof key - 3; c++) {
            if (*c == '"')
                key[q++] = '"';
            key[q++] = *c;
        }
        key[q++] = '"';
    }
    key[q] = 0;
    char row[800];
    p->full_bytes += (size_t)snprintf(row, sizeof row, "%.3f,%s,%.17g\n", p->t_ms, key, ps->value);
    if (p->n == p->cap)
        p->s = realloc(p->s, (p->cap = p->cap ? 2 * p->cap : 1024) * sizeof *p->s);
    seen *e = &p->s[p->n++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->t_ms = round(p->t_ms * 1000) / 1000; /* as %.3f writes it */
    e->v = ps->value;
    e->bucket = strstr(ps->name, "_bucket") != NULL;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The file's rows, key and time and value. */
static seen *file_rows(const char *path, size_t *n) {
    char *text = read_file(path, NULL);
    CHECK_MSG(text != NULL, "no %s", path);
    seen *rows = NULL;
    size_t cap = 0;
    *n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "t_ms,", 5))
            continue;
        char *first = strchr(line, ','), *last = strrchr(line, ',');
        CHECK(first && last && last > first);
        if (*n == cap)
            rows = realloc(rows, (cap = cap ? 2 * cap : 1024) * sizeof *rows);
        seen *r = &rows[(*n)++];
        r->t_ms = atof(line);
        r->v = strtod(last + 1, NULL);
        snprintf(r->key, sizeof r->key, "%.*s", (int)(last - first - 1), first + 1);
        r->bucket = strstr(r->key, "_bucket") != NULL;
    }
    free(text);
    return rows;
}

/* The file's value of `key` at t_ms read as steps: its last row at or
 * before then; NAN when none. */
static double step_value(const seen *rows, size_t n, const char *key, double t_ms) {
    double v = NAN;
    for (size_t i = 0; i < n && rows[i].t_ms <= t_ms; i++)
        if (!strcmp(rows[i].key, key))
            v = rows[i].v;
    return v;
}

static int same(double a, double b) {
    return (isnan(a) && isnan(b)) || a == b;
}

static void check_stats_equal(const server_stats *a, const server_stats *b) {
    const double *x = &a->preemptions, *y = &b->preemptions;
    size_t k = (size_t)(&a->gpu_util_mean_pct - &a->preemptions) + 1;
    for (size_t i = 0; i < k; i++)
        CHECK_MSG(same(x[i], y[i]),
                  "server figure %zu: %.17g from every sample, %.17g from the file", i, x[i], y[i]);
    CHECK_INT(a->has_metrics, b->has_metrics);
}

TEST_ALONE(server_metrics_keeps_changes_and_reads_back_every_sample) {
    char *dir = temp_dir(), url[200], cmd[1600];
    sim_proc sim = sim_start("--max-num-seqs 4 --decode-base-ms 4");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", sim.port);
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --url http://127.0.0.1:%d --requests 120 --rate 40 "
             "--prompts random:16:24 --ignore-eos --out %s/load >/dev/null 2>&1",
             servelab_bin(), sim.port, dir);
    pid_t load = spawn_sh(cmd, PROC_INHERIT, PROC_INHERIT);
    series_set live = {0};
    int samples = 0;
    sampler s = {.dir = dir,
                 .url = url,
                 .metrics = &live,
                 .metrics_samples = &samples,
                 .buckets_every_s = 0.5};
    pages pg = {0};
    double t0 = now_ms();
    for (int k = 0; k < 60; k++) { /* 3 s at 50 ms, as the run's loop fetches */
        sleep_ms(50);
        CURL *e = sampler_metrics_start(&s);
        CHECK(e != NULL);
        CURLcode rc = curl_easy_perform(e);
        pg.t_ms = now_ms() - t0;
        sampler_metrics_done(&s, rc, pg.t_ms);
        prom_parse(s.body, s.len, on_page_sample, &pg, NULL, NULL);
    }
    int st;
    waitpid(load, &st, 0);
    pg.t_ms = now_ms() - t0; /* the last page, written whole */
    sampler_metrics_now(&s, pg.t_ms);
    prom_parse(s.body, s.len, on_page_sample, &pg, NULL, NULL);
    sampler_close(&s);
    CHECK_INT(samples, 61);
    sim_stop(&sim);

    char p[1600];
    snprintf(p, sizeof p, "%s/server_metrics.csv", dir);
    size_t file_bytes = 0, nrows;
    char *text = read_file(p, &file_bytes);
    free(text);
    printf("    server_metrics.csv: %zu bytes; every sample: %zu bytes (%.1fx)\n", file_bytes,
           pg.full_bytes, (double)pg.full_bytes / (double)file_bytes);
    CHECK_MSG(file_bytes * 4 < pg.full_bytes, "%zu bytes against %zu for every sample", file_bytes,
              pg.full_bytes);

    /* read as steps, every series but the buckets has every page's value;
     * the buckets have theirs at the first and last pages */
    seen *rows = file_rows(p, &nrows);
    double first_t = pg.s[0].t_ms, last_t = pg.s[pg.n - 1].t_ms;
    for (size_t i = 0; i < pg.n; i++) {
        const seen *e = &pg.s[i];
        if (e->bucket && e->t_ms != first_t && e->t_ms != last_t)
            continue;
        double v = step_value(rows, nrows, e->key, e->t_ms);
        CHECK_MSG(same(v, e->v), "%s at %.3f ms: %.17g on the page, %.17g in the file", e->key,
                  e->t_ms, e->v, v);
    }
    /* and every page's time is in the file */
    for (size_t i = 0, r = 0; i < pg.n; i++) {
        while (r < nrows && rows[r].t_ms < pg.s[i].t_ms)
            r++;
        CHECK_MSG(r < nrows && rows[r].t_ms == pg.s[i].t_ms, "no row at %.3f ms", pg.s[i].t_ms);
    }

    /* the report's reader: the series it keeps, sample for sample, and the
     * server figures, equal to those it reads from every sample (the file
     * the sampler wrote before, made here from the pages) */
    char full[1400];
    snprintf(full, sizeof full, "%s/full", dir);
    CHECK(mkdir(full, 0755) == 0);
    snprintf(p, sizeof p, "%s/server_metrics.csv", full);
    FILE *ff = fopen(p, "w");
    CHECK(ff != NULL);
    fputs("t_ms,name,labels,value\n", ff);
    for (size_t i = 0; i < pg.n; i++)
        fprintf(ff, "%.3f,%s,%.17g\n", pg.s[i].t_ms, pg.s[i].key, pg.s[i].v);
    CHECK(fclose(ff) == 0);
    run_files f = {0}, ref = {0};
    load_samples(dir, &f);
    load_samples(full, &ref);
    CHECK(live.n > 5);
    CHECK_INT(f.metrics.n, live.n);
    CHECK_INT(ref.metrics.n, live.n);
    for (int i = 0; i < live.n; i++) {
        const series *a = series_find(&ref.metrics, live.s[i].name),
                     *b = series_find(&f.metrics, live.s[i].name);
        CHECK_MSG(a && b, "%s not read back", live.s[i].name);
        CHECK_MSG(a->n == b->n && a->n == live.s[i].n, "%s: %zu samples, %zu and %zu read back",
                  a->name, live.s[i].n, a->n, b->n);
        for (size_t k = 0; k < a->n; k++)
            CHECK_MSG(a->t_ms[k] == b->t_ms[k] && same(a->v[k], b->v[k]),
                      "%s[%zu]: %.3f %.17g from every sample, %.3f %.17g from the file", a->name, k,
                      a->t_ms[k], a->v[k], b->t_ms[k], b->v[k]);
    }
    check_stats_equal(&ref.server, &f.server);
    /* and those the run computes from its live samples, as its summary
     * prints them */
    server_stats every;
    server_stats_compute(&live, NULL, &every);
    json_t *a = server_stats_json(&every, 1), *b = server_stats_json(&f.server, 1);
    char *ta = json_dumps(a, JSON_SORT_KEYS | JSON_REAL_PRECISION(12)),
         *tb = json_dumps(b, JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
    CHECK_STR(tb, ta);
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
    CHECK(every.peak_running >= 1 && every.generation_tokens > 0);
    run_files_free(&ref);
    run_files_free(&f);
    series_set_free(&live);
    free(rows);
    free(pg.s);
    free(dir);
}

/* A value of a summary.json "server" object, as text. */
static char *server_json(const char *path, const char *where) {
    json_t *j = json_load_file(path, 0, NULL);
    CHECK_MSG(j != NULL, "no %s", path);
    json_t *s = where ? json_object_get(json_array_get(json_object_get(j, "runs"), 0), "server")
                      : json_object_get(j, "server");
    CHECK_MSG(s != NULL, "%s: no server object", path);
    char *text = json_dumps(s, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    return text;
}

/* A burst (--rate inf) of several seconds: auto starts at the shortest
 * interval and lengthens it with the time since t=0, so the samples are
 * about METRICS_AUTO_SAMPLES per elapsed span, not one per 0.1 s; the
 * report's server figures from the file are those the run computed from
 * every sample. */
TEST_ALONE(metrics_interval_auto_grows_over_a_burst) {
    char *dir = temp_dir(), cmd[1600], p[1400];
    sim_proc sim = sim_start("--max-num-seqs 4 --decode-base-ms 10");
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --requests 32 --rate inf "
             "--prompts random:16:64 --ignore-eos --out %s/r",
             sim.port, dir);
    char *out = NULL;
    CHECK_MSG(servelab_cmd(cmd, &out) == 0, "%s", out);
    free(out);
    sim_stop(&sim);
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    json_t *meta = json_load_file(p, 0, NULL);
    CHECK(meta != NULL);
    int n = (int)json_integer_value(
        json_object_get(json_object_get(meta, "sampling"), "metrics_samples"));
    json_decref(meta);
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    json_t *sum = json_load_file(p, 0, NULL);
    double dur = json_number_value(json_object_get(sum, "duration_s"));
    json_decref(sum);
    /* 0.1 s until 2 s, then elapsed / 20: 20 + 20 ln(T / 2) samples, the
     * last one and the timer's rounding besides */
    double bound = METRICS_AUTO_SAMPLES * (1 + log(fmax(dur, 2) / 2)) + 3;
    printf("    a %.1f s burst: %d samples of /metrics (at most %.0f; %.0f at 0.1 s)\n", dur, n,
           bound, dur / METRICS_AUTO_MIN_S);
    CHECK_MSG(dur > 4, "the burst took %.1f s", dur);
    CHECK_MSG(n <= bound && n >= METRICS_AUTO_SAMPLES, "%d samples in %.1f s", n, dur);
    CHECK(n < 0.8 * dur / METRICS_AUTO_MIN_S);

    snprintf(cmd, sizeof cmd, "report %s/r --out %s/rep", dir, dir);
    CHECK_MSG(servelab_cmd(cmd, &out) == 0, "%s", out);
    free(out);
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    char *live = server_json(p, NULL);
    snprintf(p, sizeof p, "%s/rep/summary.json", dir);
    char *file = server_json(p, "runs");
    CHECK_STR(file, live);
    CHECK(strstr(live, "\"peak_waiting\":") && !strstr(live, "\"peak_waiting\":null"));
    free(live);
    free(file);
    free(dir);
}
