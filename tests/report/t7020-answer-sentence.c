/* report_answer: the capacity sentence a report opens with, and the load
 * figures that show it. Runs are written by hand (requests.csv and
 * meta.json), so every share meeting the SLO, and so every answer, is
 * known: interpolated between the bracketing runs, not reached, already
 * missed at the lowest load, read from a hand-written capacity.json (and
 * one left aside), none without an SLO. The latency figure's SLO lines,
 * capacity marker, error bars and knee; the throughput figure's arrival-
 * window rates (a drain tail does not move them); the Workload section. */
#include "report/knee.h"
#include "report/report.h"
#include "report/steady_rates.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REQ_HDR                                                                                    \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,error\n"

typedef struct run_spec {
    const char *name;
    double rate;
    int n;           /* requests */
    int miss_ttft;   /* the last ones: TTFT 900 ms */
    int miss_tpot;   /* before them: TPOT 100 ms */
    double tail_ms;  /* the last request ends this much later (a drain tail) */
    const char *slo; /* NULL: none */
} run_spec;

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* ROOT/NAME/requests.csv and meta.json: n requests at `rate`, each sent on
 * schedule, 11 output tokens; TTFT 50 ms and TPOT 10 ms unless it misses. */
static void make_run(const char *root, const run_spec *s) {
    char dir[1400], path[1500];
    snprintf(dir, sizeof dir, "%s/%s", root, s->name);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(REQ_HDR, f);
    for (int i = 0; i < s->n; i++) {
        double t = i * 1000.0 / s->rate, ttft = 50, tpot = 10;
        if (i >= s->n - s->miss_ttft)
            ttft = 900;
        else if (i >= s->n - s->miss_ttft - s->miss_tpot)
            tpot = 100;
        double first = t + ttft, last = first + 10 * tpot;
        double end = last + 1 + (i == s->n - 1 ? s->tail_ms : 0);
        fprintf(f, "req-%d,short,%.3f,%.3f,%.3f,%.3f,%.3f,20,11,\n", i, t, t, first, last, end);
    }
    fclose(f);
    char meta[2048], slo[128] = "null";
    if (s->slo)
        snprintf(slo, sizeof slo, "\"%s\"", s->slo);
    snprintf(
        meta, sizeof meta,
        "{\"config\": {\"rate\": %g, \"slo\": %s, \"arrival\": \"gamma\", \"burstiness\": 2.0,"
        " \"requests\": %d, \"prompts\": \"builtin\", \"mix\": \"short=1\", \"max_tokens\": 11,"
        " \"warmup\": 3, \"concurrency\": 0, \"api\": \"chat\", \"ignore_eos\": false},"
        " \"campaign\": {\"server_args\": \"--kv-blocks 900\"},"
        " \"command_line\": [\"servelab\", \"run\", \"--rate\", \"%g\"],"
        " \"seed\": 7, \"started_utc\": \"2026-11-30T05:07:06.500Z\"}\n",
        s->rate, slo, s->n, s->rate);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    write_text(path, meta);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    write_text(path, "{}\n");
}

static void build(const char *root, report *r) {
    char *paths[1] = {(char *)root}, err[512];
    report_opts o = {0};
    CHECK_MSG(report_build(paths, 1, &o, r, err, sizeof err) == 0, "report_build: %s", err);
}

/* The rendered file `name` (a copy to free), or NULL. */
static char *rendered(const report *r, const char *name) {
    out_file *files;
    int n;
    report_render(r, &files, &n);
    char *body = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(files[i].name, name))
            body = strdup(files[i].body.s ? files[i].body.s : "");
    out_files_free(files, n);
    return body;
}

#define SLO "ttft=300ms,tpot=40ms"

TEST(report_answer_interpolated_between_the_bracketing_runs) {
    char *root = temp_dir();
    /* shares meeting the SLO: 1.0, 0.995, 0.9 (goal 0.99) */
    run_spec runs[] = {{"load-2", 2, 200, 0, 0, 0, SLO},
                       {"load-4", 4, 200, 1, 0, 0, SLO},
                       {"load-8", 8, 200, 20, 0, 0, SLO}};
    for (int i = 0; i < 3; i++)
        make_run(root, &runs[i]);
    report r;
    build(root, &r);
    const report_answer *a = &r.answer;
    CHECK(a->present);
    CHECK_INT(a->a.status, ANSWER_FOUND);
    CHECK_INT(a->a.source, ANSWER_INTERPOLATED);
    CHECK_INT(a->a.binding, 0);
    CHECK_NEAR(a->a.max, 4 + (0.995 - 0.99) / (0.995 - 0.9) * 4, 1e-9);
    CHECK(isnan(a->a.ci_low) && isnan(a->a.ci_high));
    /* the sentence says it is not a capacity search, and what it rests on:
     * the two runs either side, their requests and those that missed */
    CHECK_STR(a->sentence,
              "users start waiting at about 4.21 req/s: above it more than 1% of requests miss "
              "TTFT <= 300 ms; not a capacity search: interpolated between the runs at 4 req/s, "
              "where 1 of 200 requests missed the SLO, and 8 req/s, where 20 of 200 did (3 runs "
              "on the load line; no confidence interval)");
    /* at the top of both documents, and in summary.json */
    char *md = rendered(&r, "summary.md"), *html = rendered(&r, "report.html"),
         *js = rendered(&r, "summary.json");
    CHECK_MSG(!strncmp(md, "# servelab report\n\n**users start waiting at about 4.21", 53),
              "%.120s", md);
    char *p = strstr(html, "<p class=\"answer\">users start waiting at about 4.21");
    CHECK(p != NULL && p < strstr(html, "<table"));
    json_t *sj = json_loads(js, 0, NULL), *ans = json_object_get(sj, "answer");
    CHECK_STR(json_string_value(json_object_get(ans, "source")), "interpolated");
    CHECK_STR(json_string_value(json_object_get(ans, "status")), "found");
    CHECK_NEAR(json_number_value(json_object_get(ans, "capacity")), a->a.max, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(ans, "runs")), 3);
    CHECK_NEAR(json_number_value(json_array_get(json_object_get(ans, "bracket"), 1)), 8, 0);
    CHECK_STR(json_string_value(json_object_get(ans, "sentence")), a->sentence);
    json_decref(sj);
    free(md);
    free(html);
    free(js);
    report_free(&r);
    free(root);
}

TEST(report_answer_names_the_bound_that_binds) {
    char *root = temp_dir();
    run_spec runs[] = {{"load-2", 2, 100, 0, 0, 0, SLO}, {"load-8", 8, 100, 1, 10, 0, SLO}};
    for (int i = 0; i < 2; i++)
        make_run(root, &runs[i]);
    report r;
    build(root, &r);
    CHECK_INT(r.answer.a.binding, 1);
    CHECK_MSG(strstr(r.answer.sentence, "more than 1% of requests miss TPOT <= 40 ms"), "%s",
              r.answer.sentence);
    report_free(&r);
    free(root);
}

TEST(report_answer_not_reached_and_missed_at_lowest) {
    char *root = temp_dir();
    run_spec ok[] = {{"load-2", 2, 100, 0, 0, 0, SLO}, {"load-8", 8, 100, 1, 0, 0, SLO}};
    for (int i = 0; i < 2; i++)
        make_run(root, &ok[i]);
    report r;
    build(root, &r);
    CHECK_INT(r.answer.a.status, ANSWER_NOT_REACHED);
    CHECK(isnan(r.answer.a.max));
    CHECK_STR(r.answer.sentence,
              "not reached: at 8 req/s, the most tried, at least 99% of requests still met TTFT "
              "<= 300 ms, TPOT <= 40 ms; not a capacity search: read from 2 runs on the load "
              "line");
    report_free(&r);
    char *root2 = temp_dir();
    run_spec bad[] = {{"load-2", 2, 100, 2, 0, 0, SLO}, {"load-8", 8, 100, 50, 0, 0, SLO}};
    for (int i = 0; i < 2; i++)
        make_run(root2, &bad[i]);
    build(root2, &r);
    CHECK_INT(r.answer.a.status, ANSWER_MISSED_AT_LOWEST);
    CHECK_MSG(strstr(r.answer.sentence, "already missed at the lowest load: at 2 req/s more than "
                                        "1% of requests miss TTFT <= 300 ms; not a capacity "
                                        "search"),
              "%s", r.answer.sentence);
    report_free(&r);
    free(root);
    free(root2);
}

TEST(report_answer_absent_without_an_slo) {
    char *root = temp_dir();
    run_spec runs[] = {{"load-2", 2, 50, 0, 0, 0, NULL}, {"load-8", 8, 50, 5, 0, 0, NULL}};
    for (int i = 0; i < 2; i++)
        make_run(root, &runs[i]);
    report r;
    build(root, &r);
    CHECK(!r.answer.present);
    char *md = rendered(&r, "summary.md"), *js = rendered(&r, "summary.json"),
         *svg = rendered(&r, "figures/latency_vs_load.svg");
    CHECK(strstr(md, "users start") == NULL && strstr(md, "not reached") == NULL);
    json_t *sj = json_loads(js, 0, NULL);
    CHECK(json_is_null(json_object_get(sj, "answer")));
    CHECK(strstr(svg, "SLO:") == NULL && strstr(svg, "capacity") == NULL);
    json_decref(sj);
    free(md);
    free(js);
    free(svg);
    report_free(&r);
    free(root);
}

static const char *capacity_json =
    "{\"by\": \"rate\", \"goal\": 0.99, \"slo\": {\"ttft_ms\": 750, \"tpot_ms\": null, "
    "\"e2e_ms\": null}, \"status\": \"found\", \"max_rate_rps\": 23.4, \"ci_low_rps\": 22.1, "
    "\"ci_high_rps\": 24.6, \"max_concurrency\": null, \"ci_low_concurrency\": null, "
    "\"ci_high_concurrency\": null, \"binding\": \"ttft\", \"at_answer\": "
    "{\"concurrency_in_flight\": 11.5, \"goodput_rps\": 23.2, \"output_tokens_per_s\": 2900.5}, "
    "\"sentence\": \"users start waiting at 23.4 req/s\", \"probes\": [{\"rate_rps\": 8}, "
    "{\"rate_rps\": 32}, {\"rate_rps\": 16}, {\"rate_rps\": 24}, {\"rate_rps\": 20}], "
    "\"wall_s\": 84.0}\n";

TEST(report_answer_from_capacity_json) {
    char *root = temp_dir();
    run_spec runs[] = {{"load-8", 8, 100, 0, 0, 0, SLO}, {"load-32", 32, 100, 30, 0, 0, SLO}};
    for (int i = 0; i < 2; i++)
        make_run(root, &runs[i]);
    char path[1300];
    snprintf(path, sizeof path, "%s/capacity.json", root);
    write_text(path, capacity_json);
    report r;
    build(root, &r);
    const report_answer *a = &r.answer;
    CHECK_INT(a->a.source, ANSWER_SEARCHED);
    /* a file from before the sentence's fields were all in it: its sentence */
    CHECK_STR(a->sentence, "users start waiting at 23.4 req/s");
    CHECK_INT(a->a.tries, 5);
    CHECK_NEAR(a->lowest, 8, 0);
    CHECK_NEAR(a->highest, 32, 0);
    char *js = rendered(&r, "summary.json"), *svg = rendered(&r, "figures/latency_vs_load.svg");
    json_t *sj = json_loads(js, 0, NULL), *ans = json_object_get(sj, "answer");
    CHECK_NEAR(json_number_value(json_object_get(ans, "ci_low")), 22.1, 1e-12);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(ans, "at_answer"), "goodput_rps")),
               23.2, 1e-12);
    /* the marker, its shaded interval, and the bound of capacity.json's SLO */
    CHECK(strstr(svg, "capacity 23.4 req/s (95% CI 22.1-24.6)") != NULL);
    CHECK(strstr(svg, "fill-opacity=\"0.15\"") != NULL);
    CHECK(strstr(svg, "SLO: TTFT &lt;= 750 ms") != NULL);
    json_decref(sj);
    free(js);
    free(svg);
    report_free(&r);
    /* one that servelab would not write is left aside, and said to be */
    write_text(path, "{\"by\": \"rate\", \"status\": \"maybe\"}\n");
    build(root, &r);
    CHECK_INT(r.answer.a.source, ANSWER_INTERPOLATED);
    CHECK_MSG(strstr(r.answer.sentence, "(capacity.json left aside:") != NULL, "%s",
              r.answer.sentence);
    report_free(&r);
    free(root);
}

static int count(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

TEST(report_latency_figure_draws_slo_marker_and_error_bars) {
    char *root = temp_dir();
    run_spec runs[] = {{"load-2", 2, 200, 0, 0, 0, SLO},
                       {"load-4", 4, 200, 1, 0, 0, SLO},
                       {"load-8", 8, 200, 20, 0, 0, SLO}};
    for (int i = 0; i < 3; i++)
        make_run(root, &runs[i]);
    report r;
    build(root, &r);
    char *svg = rendered(&r, "figures/latency_vs_load.svg");
    CHECK(strstr(svg, "SLO: TTFT &lt;= 300 ms") != NULL);
    CHECK(strstr(svg, "SLO: TPOT &lt;= 40 ms") != NULL);
    char want[64]; /* three significant digits of the interpolated answer (4.2 and a bit) */
    snprintf(want, sizeof want, "capacity ~%.3g req/s (interpolated)", r.answer.a.max);
    CHECK_MSG(r.answer.a.max > 4.15 && r.answer.a.max < 4.25 && strstr(svg, want) != NULL, "%g: %s",
              r.answer.a.max, want);
    /* error bars: TTFT and TPOT p50 and p95 at each of the three runs
     * whose interval has two ends (TTFT p95 of load-8 spans 50 to 900) */
    CHECK_MSG(count(svg, "<path d=\"M") >= 9, "%d error bars", count(svg, "<path d=\"M"));
    /* TTFT p95: 50, 50, 900 ms: a rise, but no third lower load to make a
     * trend at load-8? Two lower loads make one: a knee at 8 req/s */
    CHECK_MSG(strstr(svg, "Latency vs offered load: TTFT p95 knee at 8 req/s") != NULL, "%.300s",
              strstr(svg, "<text"));
    free(svg);
    report_free(&r);
    /* two runs make no trend: the title names no knee */
    char *root2 = temp_dir();
    run_spec two[] = {{"load-2", 2, 200, 0, 0, 0, SLO}, {"load-8", 8, 200, 20, 0, 0, SLO}};
    for (int i = 0; i < 2; i++)
        make_run(root2, &two[i]);
    build(root2, &r);
    svg = rendered(&r, "figures/latency_vs_load.svg");
    CHECK(strstr(svg, ">Latency vs offered load</text>") != NULL);
    CHECK(strstr(svg, "knee") == NULL);
    free(svg);
    report_free(&r);
    free(root);
    free(root2);
}

TEST(report_knee_only_where_the_trend_breaks) {
    double x[] = {1, 2, 3, 4, 5};
    double flat_jump[] = {10, 11, 10, 40, 80}; /* floor, then x4 */
    CHECK_INT(knee_find(x, flat_jump, NULL, NULL, 5, NULL), 3);
    double linear[] = {10, 20, 30, 40, 50}; /* rising from the first point, on its trend */
    CHECK_INT(knee_find(x, linear, NULL, NULL, 5, NULL), -1);
    double steady_rise[] = {100, 200, 450, 800, 1500}; /* under twice the trend at each step */
    CHECK_INT(knee_find(x, steady_rise, NULL, NULL, 5, NULL), -1);
    /* a jump the intervals cannot tell from noise is no knee */
    double lo[] = {5, 5, 5, 5, 5}, hi[] = {60, 60, 60, 60, 60};
    CHECK_INT(knee_find(x, flat_jump, lo, hi, 5, NULL), -1);
    double lo2[] = {9, 10, 9, 35, 70}, hi2[] = {11, 12, 11, 45, 90};
    double pred = 0;
    CHECK_INT(knee_find(x, flat_jump, lo2, hi2, 5, &pred), 3);
    CHECK_NEAR(pred, 11, 1e-9); /* the trend says 10; the largest lower value 11 */
    /* unknown points are skipped, not counted as a trend */
    double gaps[] = {10, NAN, 10, 50, 60};
    CHECK_INT(knee_find(x, gaps, NULL, NULL, 5, NULL), 3);
}

/* The throughput figure plots arrival-window rates: a drain tail (the last
 * request ending 20 s late) halves the whole-run rate, not the figure's,
 * which stays at the offered rate but for that one request. */
TEST(report_throughput_figure_plots_arrival_window_rates) {
    char *a = temp_dir();
    run_spec ra[] = {{"load-2", 2, 40, 0, 0, 0, SLO}, {"load-8", 8, 40, 0, 0, 20000, SLO}};
    for (int i = 0; i < 2; i++)
        make_run(a, &ra[i]);
    report r;
    build(a, &r);
    const run_summary *s = &r.runs[1].pooled;
    CHECK_NEAR(s->realized_offered_rps, 8, 1e-9); /* 39 gaps of 125 ms */
    CHECK(s->achieved_rps < 0.5 * 8);
    double req_s, tok_s;
    steady_rates(&r.runs[1], &req_s, &tok_s);
    CHECK_NEAR(req_s, 39 / 4.875, 1e-9); /* all but the late one */
    CHECK_NEAR(tok_s, 11 * 39 / 4.875, 1e-9);
    char *svg = rendered(&r, "figures/throughput_vs_load.svg"), *md = rendered(&r, "summary.md");
    CHECK(strstr(svg, "Throughput vs offered load (over the arrival window, shifted)") != NULL);
    CHECK(strstr(svg, "achieved req/s") != NULL);
    CHECK(strstr(md, "each over the run's arrival window") != NULL);
    free(md);
    free(svg);
    report_free(&r);
    free(a);
}

TEST(report_workload_section_from_meta_json) {
    char *root = temp_dir();
    run_spec run = {"load-2", 2, 20, 0, 0, 0, SLO};
    make_run(root, &run);
    report r;
    build(root, &r);
    char *md = rendered(&r, "summary.md"), *html = rendered(&r, "report.html");
    char *w = strstr(md, "### Workload");
    CHECK(w != NULL && w < strstr(md, "### Key figures"));
    const char *rows[] = {
        "| arrivals | gamma at 2 req/s, burstiness 2.0 |", "| requests (per repetition) | 20 |",
        "| prompts | builtin |", "| mix | short=1 |", "| max tokens | 11 |",
        "| warmup requests (not counted) | 3 |", "| seed | 7 |",
        "| server args (sweep) | --kv-blocks 900 |", "| command line | servelab run --rate 2 |",
        "| started | 2026-11-30T05:07:06.500Z |",
        /* the last request ends at 9.5 s + 50 + 100 + 1 ms */
        "| ended (last request) | 2026-11-30T05:07:16.151Z |"};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        CHECK_MSG(strstr(w, rows[i]) != NULL, "missing %s", rows[i]);
    CHECK(strstr(html, "<h3>Workload</h3>") != NULL);
    CHECK(strstr(html, "gamma at 2 req/s, burstiness 2.0") != NULL);
    free(md);
    free(html);
    report_free(&r);
    free(root);
}
