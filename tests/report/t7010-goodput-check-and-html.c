/* report: goodput and summary edge cases against hand-computed values,
 * --check on the committed fixture (and its failure after a hand edit),
 * robustness to odd run directories, well-formed SVG, and the HTML report
 * rendered by headless Chromium. */
#include "analysis/summary.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

static req_rec ok_rec(double sched, double sent, double first, double last, double end, int out) {
    req_rec r = req_rec_unknown(); /* no phase or server columns, as in an older run */
    r.scheduled_ms = sched;
    r.sent_ms = sent;
    r.first_ms = first;
    r.last_ms = last;
    r.end_ms = end;
    r.lag_ms = 0;
    r.prompt_tokens = 10;
    r.output_tokens = out;
    return r;
}

TEST(summary_goodput_n1_n2_and_all_failed) {
    summary_params p = {.offered_rps = 1, .slo = {.ttft_ms = 100, .tpot_ms = 10}};
    run_rows rows = {0};
    req_rec a = ok_rec(0, 0, 50, 140, 150, 10); /* ttft 50, tpot 10: meets */
    rows_add(&rows, &a);
    run_summary s;
    summarize(&rows, &p, &s);
    CHECK_INT(s.meeting_slo, 1);
    CHECK_NEAR(s.duration_s, 0.150, 1e-12);
    CHECK_NEAR(s.goodput_rps, 1 / 0.150, 1e-9);
    CHECK_NEAR(s.goodput_fraction, 1, 0);
    CHECK_NEAR(s.output_tokens_per_s, 10 / 0.150, 1e-9);
    /* n=2: the second misses TTFT (120 > 100) */
    req_rec b = ok_rec(1000, 1000, 1120, 1200, 1210, 5);
    rows_add(&rows, &b);
    summarize(&rows, &p, &s);
    CHECK_INT(s.meeting_slo, 1);
    CHECK_NEAR(s.goodput_fraction, 0.5, 0);
    CHECK_NEAR(s.goodput_rps, 1 / 1.210, 1e-9);
    CHECK_NEAR(s.ttft.p50, 85, 1e-9);
    CHECK_NEAR(s.realized_offered_rps, 1.0, 1e-12); /* (2-1) / 1 s */
    /* a failure stays in the denominator */
    req_rec c = ok_rec(2000, 2000, NAN, NAN, 2100, -1);
    c.error = ERR_TIMEOUT;
    rows_add(&rows, &c);
    summarize(&rows, &p, &s);
    CHECK_INT(s.failed, 1);
    CHECK_NEAR(s.goodput_fraction, 1.0 / 3, 1e-12);
    CHECK_INT(s.errors[ERR_TIMEOUT], 1);
    rows_free(&rows);
    /* all failed: zero goodput, no latency figures, nothing divided by zero */
    for (int i = 0; i < 3; i++) {
        req_rec f = ok_rec(i * 100, i * 100, NAN, NAN, i * 100 + 5, -1);
        f.error = ERR_CONNECT;
        rows_add(&rows, &f);
    }
    summarize(&rows, &p, &s);
    CHECK_INT(s.completed, 0);
    CHECK_NEAR(s.goodput_fraction, 0, 0);
    CHECK_NEAR(s.goodput_rps, 0, 0);
    CHECK(isnan(s.ttft.p50));
    CHECK_INT(s.ttft.n, 0);
    rows_free(&rows);
}

TEST(summary_tpot_slo_and_cost) {
    summary_params p = {.offered_rps = 2, .slo = {.tpot_ms = 10}, .cost_per_hour = 3.6};
    run_rows rows = {0};
    req_rec a = ok_rec(0, 0, 10, 10 + 11 * 9, 1000, 10); /* tpot 11 > 10 */
    rows_add(&rows, &a);
    run_summary s;
    summarize(&rows, &p, &s);
    CHECK_INT(s.meeting_slo, 0);
    CHECK_NEAR(s.tpot.p50, 11, 1e-9);
    /* $3.6/h for 1 s = $0.001 for 10 tokens = $100 per million */
    CHECK_NEAR(s.cost_per_million_output_tokens, 100, 1e-9);
    rows_free(&rows);
}

static int report_cmd(const char *args, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "report %s", args);
    return servelab_cmd(cmd, out);
}

TEST(report_fixture_check_passes_and_catches_edits) {
    char *out;
    int code = report_cmd("results/fixture --check", &out);
    CHECK_MSG(code == 0, "fixture drifted:\n%s", out);
    /* a copy with one figure edited by hand */
    char *dir = temp_dir();
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cp -r results/fixture %s/f && awk -F, -v OFS=, 'NR==2{$4=\"999.999\"}1' "
             "%s/f/report/summary.csv > %s/s && mv %s/s %s/f/report/summary.csv",
             dir, dir, dir, dir, dir);
    CHECK_INT(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/f --check", dir);
    code = report_cmd(cmd, &out);
    CHECK_INT(code, 1);
    CHECK_MSG(strstr(out, "summary.csv:2:") != NULL, "no diff line: %s", out);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

#define HDR                                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"

static char *make_run(const char *root, const char *name, const char *rows, int with_chunks) {
    char *d = malloc(2048);
    snprintf(d, 2048, "%s/%s", root, name);
    mkdir(d, 0755);
    char p[2200];
    snprintf(p, sizeof p, "%s/requests.csv", d);
    write_text(p, rows);
    if (with_chunks) {
        snprintf(p, sizeof p, "%s/chunks.csv", d);
        write_text(p, "request_id,index,t_ms,tokens\nreq-0,0,5.000,1\nreq-0,1,7.000,1\n");
    }
    return d;
}

TEST(report_handles_odd_runs) {
    char *root = temp_dir();
    char *out;
    make_run(root, "empty", HDR, 0);
    make_run(root, "allfailed",
             HDR "req-0,short,0.000,0.100,,,1.000,10,,,,0.900,,,connect,0,0.001\n"
                 "req-1,short,10.000,10.100,,,11.000,10,,,,0.900,,500,http,0,0.001\n",
             0);
    make_run(root, "single",
             HDR "req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,4.900,2.000,7.900,length,200,,2,"
                 "0.010\n",
             1);
    char args[1024];
    snprintf(args, sizeof args, "%s --out %s/rep", root, root);
    int code = report_cmd(args, &out);
    CHECK_MSG(code == 0, "report failed: %s", out);
    snprintf(args, sizeof args, "%s/rep/summary.csv", root);
    char *csv = read_file(args, NULL);
    CHECK(strstr(csv, "\nempty,") && strstr(csv, "\nallfailed,") && strstr(csv, "\nsingle,"));
    /* the single request: TTFT 4.9 ms exactly, goodput fraction 1 */
    /* without meta.json the offered rate is unknown (an empty cell), not the schedule's */
    CHECK_MSG(strstr(csv, "\nsingle,,1,4.900,4.900,2.000,2.000,") != NULL, "%s", csv);
    snprintf(args, sizeof args, "%s/rep --check", root);
    (void)args;
    /* a malformed row: a clear error naming file and line */
    char *bad = temp_dir();
    make_run(bad, "bad", HDR "req-0,short,0.000,abc,,,1.000,10,,,,,,,,0,\n", 0);
    snprintf(args, sizeof args, "%s", bad);
    code = report_cmd(args, &out);
    CHECK_INT(code, 2);
    CHECK_MSG(strstr(out, "bad/requests.csv:2:") && strstr(out, "sent_ms"), "got: %s", out);
    make_run(bad, "bad", HDR "req-0,short,0.000\n", 0);
    code = report_cmd(args, &out);
    CHECK_INT(code, 2);
    CHECK(strstr(out, "requests.csv:2:") != NULL);
    code = report_cmd("/nonexistent-dir", &out);
    CHECK_INT(code, 2);
    char *emptydir = temp_dir();
    code = report_cmd(emptydir, &out);
    CHECK_INT(code, 2);
    CHECK(strstr(out, "no run directories") != NULL);
}

TEST(report_svgs_are_well_formed_xml) {
    char *dir = temp_dir();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "results/fixture --out %s/rep", dir);
    CHECK_INT(report_cmd(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "ls %s/rep/figures/*.svg | wc -l", dir);
    char *n = run_capture(cmd, NULL);
    CHECK(atoi(n) >= 5);
    snprintf(cmd, sizeof cmd, "xmllint --noout %s/rep/figures/*.svg 2>&1", dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "xmllint: %s", out);
}

static size_t file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (size_t)st.st_size : 0;
}

static int screenshot(const char *html, const char *png, const char *log) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic "
             "--no-first-run --disable-background-networking --disable-component-update "
             "--disable-sync --user-data-dir=%s.profile --enable-logging=stderr --v=0 "
             "--window-size=1200,2400 --screenshot=%s file://%s > %s 2>&1",
             png, png, html, log);
    return system(cmd);
}

TEST(report_html_renders_in_chromium_without_errors) {
    char *dir = temp_dir();
    char args[1024], html[1200], png[1200], log[1200];
    snprintf(args, sizeof args, "results/fixture --out %s/rep", dir);
    CHECK_INT(report_cmd(args, NULL), 0);
    snprintf(html, sizeof html, "%s/rep/report.html", dir);
    char *page = read_file(html, NULL);
    /* self-contained: every figure inline, nothing fetched */
    snprintf(args, sizeof args, "ls %s/rep/figures/*.svg | wc -l", dir);
    int n_fig = atoi(run_capture(args, NULL));
    int n_svg = 0;
    for (char *p = page; (p = strstr(p, "<svg ")); p++)
        n_svg++;
    CHECK_INT(n_svg, n_fig);
    for (char *p = page; (p = strstr(p, "http")); p++)
        CHECK_MSG(!strncmp(p, "http://www.w3.org/2000/svg", 26), "external reference: %.60s", p);
    CHECK(strstr(page, "<script") == NULL && strstr(page, "<link") == NULL);
    snprintf(png, sizeof png, "%s/report.png", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    CHECK_INT(screenshot(html, png, log), 0);
    char *l = read_file(log, NULL);
    CHECK_MSG(strstr(l, "CONSOLE") == NULL, "console output: %s", l);
    /* a blank page for comparison */
    char blank[1200], bpng[1200];
    snprintf(blank, sizeof blank, "%s/blank.html", dir);
    FILE *f = fopen(blank, "w");
    fputs("<!DOCTYPE html><html><body></body></html>\n", f);
    fclose(f);
    snprintf(bpng, sizeof bpng, "%s/blank.png", dir);
    CHECK_INT(screenshot(blank, bpng, log), 0);
    size_t full = file_size(png), empty = file_size(bpng);
    printf("    screenshot %zu bytes, blank page %zu bytes\n", full, empty);
    CHECK(empty > 0);
    CHECK_MSG(full > 10 * empty, "report screenshot looks blank (%zu vs %zu bytes)", full, empty);
}
