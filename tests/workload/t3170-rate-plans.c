/* rate_plan: --rate-plan's stages (workload/rate_plan.h), their schedule
 * (arrivals_generate_plan) and their summaries (analysis/stages.h).
 *   - specs parse to their stages; a bad one is refused before any
 *     traffic, exit 2, with one line naming the stage;
 *   - the same seed draws the same schedule, and one constant stage draws
 *     --rate's own;
 *   - over plans of tens of thousands of arrivals each stage's count is
 *     within 3% of its rate x duration, for poisson, gamma and constant,
 *     constant and ramping stages alike, and a ramp's halves hold what its
 *     linear rate says (a quarter and three quarters from 0);
 *   - the per-stage summary counts, rates and latencies exactly;
 *   - against the simulator, summary.json's stages agree with the rows,
 *     and the report shows them (a table, marks in the timeline). */
#include "analysis/stages.h"
#include "csv_util.h"
#include "support.h"
#include "sweep/campaign.h"
#include "test.h"
#include "workload/arrivals.h"
#include "workload/rate_plan.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rate_plan plan_of(const char *spec) {
    rate_plan p;
    char err[512];
    CHECK_MSG(!rate_plan_parse(spec, &p, err, sizeof err), "'%s': %s", spec, err);
    return p;
}

TEST(rate_plan_parses_constant_and_ramp_stages) {
    rate_plan p = plan_of("2@60s,4@60,ramp:1-16@2m, 8@500ms ,ramp:1e-3-2@1s,ramp:9-3@10s");
    CHECK_INT(p.n, 6);
    CHECK_NEAR(p.duration_s, 60 + 60 + 120 + 0.5 + 1 + 10, 1e-9);
    CHECK_NEAR(p.stage[1].start_s, 60, 1e-12);
    CHECK_NEAR(p.stage[2].start_s, 120, 1e-12);
    CHECK(p.stage[2].ramp && !p.stage[0].ramp);
    CHECK_NEAR(p.stage[2].from_rps, 1, 0);
    CHECK_NEAR(p.stage[2].to_rps, 16, 0);
    CHECK_NEAR(p.stage[3].from_rps, 8, 0);
    CHECK_NEAR(p.stage[3].to_rps, 8, 0);
    CHECK_NEAR(p.stage[3].duration_s, 0.5, 1e-12);
    CHECK_NEAR(p.stage[4].from_rps, 0.001, 1e-15);
    CHECK_NEAR(p.stage[5].to_rps, 3, 0);
    CHECK_NEAR(rate_stage_expected(&p.stage[2]), 8.5 * 120, 1e-9);
    rate_plan q = plan_of("0@10s,ramp:0-10@10s");
    CHECK_NEAR(rate_plan_expected(&q), 50, 1e-9);
    CHECK_NEAR(rate_plan_mean_rps(&q), 2.5, 1e-12);
}

/* A stage's integral and its inverse agree, rising, falling, from 0. */
TEST(rate_plan_time_at_inverts_the_integral) {
    rate_stage st[] = {{2, 2, 0, 10, 0}, {0, 10, 0, 4, 1}, {9, 3, 0, 6, 1}, {5, 0, 0, 2, 1}};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k <= 20; k++) {
            double x = st[i].duration_s * k / 20, a = st[i].from_rps, b = st[i].to_rps;
            double n = a * x + (b - a) * x * x / (2 * st[i].duration_s);
            CHECK_NEAR(rate_stage_time_at(&st[i], n), x, 1e-9);
        }
}

/* `servelab run ARGS` exits 2 with a single line holding `want`. */
static void refused(const char *args, const char *want) {
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "run --url http://127.0.0.1:1 --out never-made %s", args);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2, "%s: exit %d: %s", args, code, out);
    CHECK_MSG(strstr(out, want), "%s: '%s' not in: %s", args, want, out);
    char *nl = strchr(out, '\n');
    CHECK_MSG(nl && !nl[1], "%s: more than one line: %s", args, out);
    free(out);
}

TEST(rate_plan_bad_specs_exit_2_naming_the_stage) {
    refused("--rate-plan '2@60s,ramp:4@60s'", "--rate-plan: stage 2 'ramp:4@60s': expected "
                                              "ramp:FROM-TO@DURATION");
    refused("--rate-plan '2@60s,4'", "stage 2 '4': expected RATE@DURATION");
    refused("--rate-plan 'x@60s'", "stage 1 'x@60s': the rate: expected a number >= 0, got 'x'");
    refused("--rate-plan '1@1s,ramp:1-y@2s'", "stage 2 'ramp:1-y@2s': the final rate: expected");
    refused("--rate-plan 'ramp:-1-4@2s'", "stage 1 'ramp:-1-4@2s': the starting rate: expected");
    refused("--rate-plan 'inf@10s'", "stage 1 'inf@10s': the rate: expected a number");
    refused("--rate-plan '2@0s'", "stage 1 '2@0s': the duration: expected seconds > 0");
    refused("--rate-plan '2@10parsecs'", "stage 1 '2@10parsecs': the duration");
    refused("--rate-plan '2@1s,,3@1s'", "stage 2 is empty");
    refused("--rate-plan '2@1s,'", "stage 2 is empty");
    refused("--rate-plan ''", "--rate-plan: expected a non-empty string");
    refused("--rate-plan ' '", "--rate-plan: expected stages such as");
    refused("--rate-plan '0@10s,0@5s'", "the plan offers no requests");
    refused("--rate-plan '1@700000s'", "the stages last 700000 s in all, more than 7 days");
    refused("--rate-plan '1e9@1s'", "more than 100000000");
    refused("--rate-plan '2@1s' --rate 2", "give --rate or --rate-plan, not both");
    refused("--rate-plan '2@1s' --duration 5", "give neither --requests nor --duration");
    refused("--rate-plan '2@1s' --requests 5", "give neither --requests nor --duration");
}

static arrival_spec kind(arrival_kind k, double cv) {
    return (arrival_spec){k, INFINITY, cv};
}

TEST(rate_plan_same_seed_same_schedule_and_one_stage_is_rate) {
    rate_plan p = plan_of("5@20s,ramp:5-50@10s,0@1s,20@5s");
    arrival_spec po = kind(ARRIVAL_POISSON, 1);
    int64_t *x, *y, *z;
    size_t n = arrivals_generate_plan(&po, &p, 3, SIZE_MAX, &x);
    CHECK_INT(arrivals_generate_plan(&po, &p, 3, SIZE_MAX, &y), n);
    size_t nz = arrivals_generate_plan(&po, &p, 4, SIZE_MAX, &z);
    CHECK(memcmp(x, y, n * sizeof *x) == 0);
    CHECK(nz != n || memcmp(x, z, n * sizeof *x) != 0);
    CHECK_INT(x[0], 0);
    for (size_t i = 0; i < n; i++) { /* in order, before the end, none in the pause */
        CHECK(i == 0 || x[i] >= x[i - 1]);
        CHECK(x[i] < 36000000);
        CHECK(x[i] < 30000000 || x[i] >= 31000000);
    }
    free(x);
    free(y);
    free(z);
    /* one stage of 40 req/s for 100 s is --rate 40 --duration 100's schedule */
    arrival_spec kinds[] = {po, kind(ARRIVAL_GAMMA, 2.5), kind(ARRIVAL_CONSTANT, 1)};
    rate_plan one = plan_of("40@100s");
    for (int k = 0; k < 3; k++) {
        arrival_spec a = kinds[k];
        a.rate = 40;
        size_t m = arrivals_generate_plan(&kinds[k], &one, 9, SIZE_MAX, &x);
        size_t m2 = arrivals_generate(&a, 9, SIZE_MAX, 100000000 - 1, &y);
        CHECK_MSG(m + 1 >= m2 && m2 + 1 >= m && m > 3000, "kind %d: %zu vs %zu", k, m, m2);
        for (size_t i = 0; i < m && i < m2; i++)
            CHECK_MSG(llabs(x[i] - y[i]) <= 1, "kind %d arrival %zu: %lld vs %lld us", k, i,
                      (long long)x[i], (long long)y[i]);
        free(x);
        free(y);
    }
    /* a plan that starts with a pause starts when it offers something */
    rate_plan pause = plan_of("0@2s,ramp:0-4@1s");
    CHECK_INT(arrivals_generate_plan(&po, &pause, 0, 1, &x), 1);
    CHECK_INT(x[0], 2000000);
    free(x);
}

/* Arrivals in [from, to) seconds. */
static size_t count_in(const int64_t *due, size_t n, double from, double to) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += due[i] >= llround(from * 1e6) && due[i] < llround(to * 1e6);
    return c;
}

/* Each stage's count within 3% (constant: within 1) of what the plan
 * expects, and each ramp's halves too. */
static void check_counts(const char *spec, arrival_spec a, uint64_t seed, int exact) {
    rate_plan p = plan_of(spec);
    int64_t *due;
    size_t n = arrivals_generate_plan(&a, &p, seed, SIZE_MAX, &due);
    CHECK_MSG(n >= 2000, "%s: %zu arrivals", spec, n);
    for (int k = 0; k < p.n; k++) {
        const rate_stage *st = &p.stage[k];
        double t0 = st->start_s, half = st->duration_s / 2, mid = st->from_rps / 2 + st->to_rps / 2;
        double want[3] = {rate_stage_expected(st), (st->from_rps + mid) / 2 * half,
                          (mid + st->to_rps) / 2 * half};
        size_t got[3] = {count_in(due, n, t0, t0 + st->duration_s), count_in(due, n, t0, t0 + half),
                         count_in(due, n, t0 + half, t0 + st->duration_s)};
        for (int j = 0; j < (st->ramp ? 3 : 1); j++)
            CHECK_MSG(exact ? fabs((double)got[j] - want[j]) <= 1
                            : fabs((double)got[j] - want[j]) <= 0.03 * want[j],
                      "%s kind %d seed %llu stage %d part %d: %zu arrivals, %.1f planned", spec,
                      (int)a.kind, (unsigned long long)seed, k + 1, j, got[j], want[j]);
    }
    free(due);
}

/* 3% of a stage's N arrivals is 4 standard deviations of a Poisson count
 * at N = 17,800 (sd sqrt N), and of a gamma one with CV 2 at 71,000 (sd
 * about CV sqrt N): the plans' stages and ramps' halves are that large or
 * larger, so a pass is no luck of the seed. */
TEST(rate_plan_stages_realize_their_rates_within_3_percent) {
    const char *base =
        "200@100s,ramp:300-700@100s,ramp:800-200@100s,0@10s,300@100s,ramp:0-1600@100s";
    const char *big = "800@100s,ramp:1200-2800@100s,ramp:3200-800@100s,0@10s,1200@100s,"
                      "ramp:0-6400@100s";
    for (uint64_t seed = 0; seed < 3; seed++) {
        check_counts(base, kind(ARRIVAL_POISSON, 1), seed, 0);
        check_counts(base, kind(ARRIVAL_GAMMA, 0.5), seed, 0);
        check_counts(big, kind(ARRIVAL_GAMMA, 2), seed, 0);
    }
    check_counts(base, kind(ARRIVAL_CONSTANT, 1), 0, 1);
    check_counts("3@1000s,ramp:3-1@1000s,ramp:0.5-4.5@1000s", kind(ARRIVAL_CONSTANT, 1), 0, 1);
}

static req_rec row_at(double sched, double sent, double first, double end, int err, int turn) {
    req_rec r = req_rec_unknown();
    r.scheduled_ms = sched;
    r.sent_ms = sent;
    r.first_ms = first;
    r.last_ms = end;
    r.end_ms = end;
    r.output_tokens = 2;
    r.error = (uint8_t)err;
    r.turn = (uint16_t)turn;
    return r;
}

TEST(rate_plan_stage_summary_counts_and_latencies) {
    stage_window w[2] = {{0, 1, 4, 4, 0}, {1, 3, 2, 6, 1}};
    run_rows rows = {0};
    req_rec r[] = {
        row_at(0, 1, 11, 21, ERR_NONE, 0),           /* stage 1, ends in it */
        row_at(500, 600, 630, 1200, ERR_NONE, 0),    /* stage 1, ends in stage 2 */
        row_at(999, 1001, 1010, 1100, ERR_NONE, 0),  /* stage 1, sent in stage 2 */
        row_at(1000, 1000, 1040, 1300, ERR_NONE, 0), /* stage 2 starts at 1 s exactly */
        row_at(2000, 2001, NAN, 2500, ERR_HTTP, 0),  /* stage 2, failed */
        row_at(2500, 2500, 2520, 2900, ERR_NONE, 2), /* a later turn: latencies only */
        row_at(3000, 3000, 3010, 3100, ERR_NONE, 0), /* after the plan: in no stage */
    };
    for (size_t i = 0; i < sizeof r / sizeof *r; i++)
        rows_add(&rows, &r[i]);
    stage_summary s[2];
    stages_summarize(&rows, w, 2, s);
    CHECK_INT(s[0].scheduled, 3);
    CHECK_INT(s[0].sent, 2);
    CHECK_INT(s[0].completions, 1);
    CHECK_INT(s[0].latencies.requests, 3);
    CHECK_NEAR(s[0].offered_rps, 4, 0);
    CHECK_NEAR(s[0].planned, 4, 0);
    CHECK_NEAR(s[0].realized_rps, 3, 1e-12);
    CHECK_NEAR(s[0].arrived_rps, 2, 1e-12);
    CHECK_NEAR(s[0].completed_rps, 1, 1e-12);
    CHECK_NEAR(s[0].latencies.ttft.p50, 10, 1e-9); /* of 10, 30, 9 */
    CHECK_INT(s[1].scheduled, 2);
    CHECK_INT(s[1].sent, 2);
    CHECK_INT(s[1].completions, 4); /* 1200, 1100, 1300, 2900 */
    CHECK_INT(s[1].latencies.requests, 3);
    CHECK_INT(s[1].latencies.failed, 1);
    CHECK_NEAR(s[1].offered_rps, 4, 0);
    CHECK_NEAR(s[1].planned, 8, 0);
    CHECK_NEAR(s[1].realized_rps, 1, 1e-12);
    CHECK_NEAR(s[1].completed_rps, 2, 1e-12);
    CHECK_NEAR(s[1].latencies.ttft.p50, 30, 1e-9); /* of 40, 20 */
    CHECK_NEAR(s[1].latencies.e2e.p99, 400 - (400 - 300) * 0.01, 1e-9);
    json_t *j = stages_json(s, 2);
    CHECK_INT(json_array_size(j), 2);
    json_t *second = json_array_get(j, 1);
    CHECK_STR(json_string_value(json_object_get(second, "kind")), "ramp");
    CHECK_INT(json_integer_value(json_object_get(second, "stage")), 2);
    CHECK_INT(json_integer_value(json_object_get(second, "scheduled_requests")), 2);
    json_decref(j);
    /* pooled repetitions: the counts add up, the rates are per repetition */
    for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
        r[i].part = 1;
        rows_add(&rows, &r[i]);
    }
    stages_summarize(&rows, w, 2, s);
    CHECK_INT(s[0].scheduled, 6);
    CHECK_NEAR(s[0].realized_rps, 3, 1e-12);
    CHECK_NEAR(s[1].completed_rps, 2, 1e-12);
    /* meta.json's windows read back as they were written */
    stage_window back[4];
    json_t *wj = stage_windows_json(w, 2);
    CHECK_INT(stages_from_json(wj, back, 4), 2);
    CHECK(back[1].ramp && back[1].to_rps == 6 && back[1].start_s == 1 && back[1].end_s == 3);
    json_decref(wj);
    rows_free(&rows);
}

/* ---- campaigns ---- */

TEST(rate_plan_campaign_key) {
    campaign c;
    char err[512] = "";
    const char *yaml = "name: t\ntarget: {url: http://127.0.0.1:8000}\n"
                       "runs:\n  - {name: a, rate_plan: '2@1s,ramp:2-4@1s'}\n";
    CHECK_MSG(!campaign_load_string(yaml, "t.yaml", &c, err, sizeof err), "%s", err);
    CHECK_STR(c.runs[0].p.rate_plan, "2@1s,ramp:2-4@1s");
    campaign_free(&c);
    yaml = "name: t\ntarget: {url: http://127.0.0.1:8000}\n"
           "runs:\n  - {name: a, rate_plan: '2@1s,ramp:2@1s'}\n";
    CHECK(campaign_load_string(yaml, "t.yaml", &c, err, sizeof err));
    CHECK_MSG(!strncmp(err, "t.yaml:4: runs[0].rate_plan: stage 2 'ramp:2@1s': expected", 58), "%s",
              err);
}

/* ---- against the simulator ---- */

static json_t *json_in(const char *dir, const char *name) {
    char p[2300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    json_error_t e;
    json_t *j = json_load_file(p, 0, &e);
    CHECK_MSG(j, "%s: %s", p, e.text);
    return j;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's linear percentile of n values (sorted here). */
static double pct(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_double);
    double h = (double)(n - 1) * p / 100;
    size_t lo = (size_t)floor(h);
    return lo + 1 < n ? v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]) : v[lo];
}

static double stage_num(json_t *st, const char *key) {
    return json_number_value(json_object_get(st, key));
}

/* One stage of summary.json against requests.csv: its counts exactly, its
 * TTFT percentiles to the rows' rounding. */
static void check_stage_against_rows(json_t *st, const csv_table *t) {
    double from = stage_num(st, "start_s") * 1000, to = stage_num(st, "end_s") * 1000;
    size_t scheduled = 0, sent = 0, ended = 0, nt = 0;
    double *ttft = malloc(((size_t)t->n_rows + 1) * sizeof *ttft);
    for (int i = 0; i < t->n_rows; i++) {
        double s = csv_num(t, i, "scheduled_ms"), x = csv_num(t, i, "sent_ms"),
               e = csv_num(t, i, "end_ms");
        int ok = !*csv_get(t, i, "error");
        if (ok && e >= from && e < to)
            ended++;
        if (!(s >= from && s < to))
            continue;
        scheduled++;
        sent += x >= from && x < to;
        if (ok)
            ttft[nt++] = csv_num(t, i, "ttft_ms");
    }
    double len = (to - from) / 1000;
    CHECK_INT(json_integer_value(json_object_get(st, "scheduled_requests")), scheduled);
    CHECK_INT(json_integer_value(json_object_get(st, "sent_requests")), sent);
    CHECK_INT(json_integer_value(json_object_get(st, "completions")), ended);
    CHECK_NEAR(stage_num(st, "realized_rps"), scheduled / len, 1e-9);
    CHECK_NEAR(stage_num(st, "arrived_rps"), sent / len, 1e-9);
    CHECK_NEAR(stage_num(st, "completed_rps"), ended / len, 1e-9);
    json_t *d = json_object_get(st, "ttft_ms");
    CHECK_INT(json_integer_value(json_object_get(d, "n")), nt);
    const char *keys[] = {"p50", "p95", "p99"};
    const double ps[] = {50, 95, 99};
    for (int k = 0; k < 3 && nt; k++)
        CHECK_NEAR(json_number_value(json_object_get(d, keys[k])), pct(ttft, nt, ps[k]), 0.002);
    free(ttft);
}

TEST(rate_plan_run_against_the_simulator_summarizes_its_stages) {
    char *dir = temp_dir(), run[2200], args[4096];
    sim_proc p = sim_start("--profile tiny");
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --prompts random:16:8 --ignore-eos --seed 1 "
             "--rate-plan 30@1s,ramp:30-90@1s,0@300ms,60@700ms --out %s",
             p.port, run);
    servelab_ok(args);
    sim_stop(&p);
    json_t *meta = json_in(run, "meta.json"), *sum = json_in(run, "summary.json");
    json_t *plan = json_object_get(meta, "rate_plan"), *stages = json_object_get(sum, "stages");
    CHECK_STR(json_string_value(json_object_get(plan, "spec")),
              "30@1s,ramp:30-90@1s,0@300ms,60@700ms");
    CHECK_NEAR(json_number_value(json_object_get(plan, "duration_s")), 3, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(plan, "expected_requests")), 132, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(meta, "config"), "rate")), 44,
               1e-9);
    CHECK_NEAR(json_number_value(json_object_get(sum, "offered_rps")), 44, 1e-9);
    CHECK_INT(json_array_size(stages), 4);
    snprintf(args, sizeof args, "%s/requests.csv", run);
    csv_table *t = csv_read(args);
    CHECK(t);
    const double offered[] = {30, 60, 0, 60};
    long total = 0;
    for (size_t k = 0; k < 4; k++) {
        json_t *st = json_array_get(stages, k);
        CHECK_NEAR(stage_num(st, "offered_rps"), offered[k], 1e-9);
        check_stage_against_rows(st, t);
        total += (long)json_integer_value(json_object_get(st, "scheduled_requests"));
    }
    CHECK_INT(total, t->n_rows);
    CHECK_INT(json_integer_value(json_object_get(json_array_get(stages, 2), "scheduled_requests")),
              0);
    csv_free(t);
    /* the report: the same stages from requests.csv, a table, the marks */
    snprintf(args, sizeof args, "report %s --out %s/rep", run, dir);
    servelab_ok(args);
    snprintf(args, sizeof args, "%s/rep", dir);
    json_t *rep = json_in(args, "summary.json");
    json_t *rstages = json_object_get(json_array_get(json_object_get(rep, "runs"), 0), "stages");
    CHECK_INT(json_array_size(rstages), 4);
    for (size_t k = 0; k < 4; k++)
        CHECK_INT(
            json_integer_value(json_object_get(json_array_get(rstages, k), "scheduled_requests")),
            json_integer_value(json_object_get(json_array_get(stages, k), "scheduled_requests")));
    snprintf(args, sizeof args, "%s/rep/summary.md", dir);
    char *md = read_file(args, NULL);
    CHECK(md && strstr(md, "### By stage (rate plan") &&
          strstr(md, "| 2 | ramp 30-90 req/s | 1-2 |"));
    snprintf(args, sizeof args, "%s/rep/figures/timeline-run.svg", dir);
    char *svg = read_file(args, NULL);
    CHECK_MSG(svg, "no %s", args);
    CHECK(strstr(svg, ">stage 2: ramp 30-90 req/s<") && strstr(svg, ">stage 4: 60 req/s<") &&
          strstr(svg, ">plan ends<"));
    free(md);
    free(svg);
    json_decref(rep);
    json_decref(meta);
    json_decref(sum);
}

/* The bar: over a run of 2,000+ requests every stage reaches the
 * server at its rate, within 3%. Constant arrivals, so the schedule holds
 * each stage's rate x duration exactly and what is measured is the client
 * sending on time (poisson's schedule is checked above, without a server:
 * its counts vary by sqrt N, 4% at a stage of 600). */
TEST_SLOW_ALONE(rate_plan_a_2000_request_run_realizes_each_stage_within_3_percent) {
    char *dir = temp_dir(), run[2200], args[4096];
    sim_proc p = sim_start("--profile tiny");
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --prompts random:8:4 --ignore-eos "
             "--arrival constant --rate-plan 120@5s,ramp:120-300@4s,300@2s --out %s",
             p.port, run);
    servelab_ok(args);
    sim_stop(&p);
    json_t *sum = json_in(run, "summary.json"), *stages = json_object_get(sum, "stages");
    CHECK_INT(json_integer_value(json_object_get(sum, "requests")), 600 + 840 + 600);
    CHECK_INT(json_array_size(stages), 3);
    for (size_t k = 0; k < 3; k++) {
        json_t *st = json_array_get(stages, k);
        double planned = stage_num(st, "planned_requests"), offered = stage_num(st, "offered_rps");
        CHECK_NEAR(json_integer_value(json_object_get(st, "scheduled_requests")), planned, 1);
        CHECK_MSG(fabs(stage_num(st, "arrived_rps") / offered - 1) <= 0.03,
                  "stage %zu: %.2f req/s arrived, %.2f offered", k + 1,
                  stage_num(st, "arrived_rps"), offered);
        CHECK_MSG(fabs(stage_num(st, "completed_rps") / offered - 1) <= 0.03,
                  "stage %zu: %.2f req/s completed, %.2f offered", k + 1,
                  stage_num(st, "completed_rps"), offered);
    }
    json_decref(sum);
}
