/* report_phases: where TTFT went and the server's own account. A run
 * directory written by hand, whose phase and server columns give known
 * figures, must give exactly those figures; a run from before those
 * columns reports as it always did (no phases, no tables); bad values in
 * the new columns are errors naming file and line; and a real run against
 * servelab sim on pooled connections shows no handshake at the median and
 * a server that took some time, the same in its own summary.json as in the
 * report's. */
#include "analysis/summary.h"
#include "report/load.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLD_HDR                                                                                    \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms"
#define NEW_HDR                                                                                    \
    OLD_HDR ",connect_ms,written_ms,first_byte_ms,coalesced,first_coalesced,server_prompt_ms,"     \
            "server_decode_ms,server_prompt_n,server_decode_n,server_cache_n,cached_tokens"

/* Four requests (times in ms):
 *   req-0  dispatch 0.5, connect 1, client write 0.5, server 10, stream 8;
 *          TTFT 19.5 against the server's 15; 10 tokens in 10 ms both ways;
 *          25 of 100 prompt tokens cached
 *   req-1  dispatch 1, pooled (0), write 0.5, server 18.5, stream 10, its
 *          first token coalesced; TTFT 29 against 25; client 1000 tok/s,
 *          server 20 in 40 ms (500 tok/s); 100 of 200 cached
 *   req-2  failed: left out of every figure
 *   req-3  dispatch 0, connect unknown (so no client write), server 2,
 *          stream 2; the server said nothing */
static const char *known_rows =
    NEW_HDR "\n"
            "req-0,short,0.000,0.500,20.000,30.000,31.000,100,11,19.500,1.000,30.500,stop,200,,"
            "11,0.010,1.000,2.000,12.000,0,0,15.000,10.000,100,10,0,25\n"
            "req-1,short,10.000,11.000,40.000,60.000,61.000,200,21,29.000,1.000,50.000,stop,200,,"
            "21,0.010,0.000,11.500,30.000,2,1,25.000,40.000,200,20,100,100\n"
            "req-2,short,20.000,20.000,,,25.000,50,,,,5.000,,500,http,0,0.010,0.000,20.200,24.000,"
            ",,,,,,,\n"
            "req-3,short,30.000,30.000,35.000,35.000,36.000,50,1,5.000,,6.000,stop,200,,1,0.010,,"
            "31.000,33.000,0,0,,,,,,\n";

/* dir/requests.csv holding text. */
static void write_requests(const char *dir, const char *text) {
    char path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* load_run into rows; the error, or "" when it loaded. */
static char *load_dir(const char *dir, run_rows *rows) {
    run_files files;
    memset(rows, 0, sizeof *rows);
    char *err = calloc(1, 512);
    if (load_run(dir, 0, rows, &files, err, 512) == 0)
        err[0] = 0;
    run_files_free(&files);
    return err;
}

static void free_rows(run_rows *rows) {
    for (int i = 0; i < rows->n_classes; i++)
        free((char *)rows->classes[i]);
    rows_free(rows);
}

static void summarize_dir(const char *dir, run_summary *s) {
    run_rows rows;
    char *err = load_dir(dir, &rows);
    CHECK_MSG(err[0] == 0, "%s", err);
    free(err);
    summary_params p = {.offered_rps = 1, .client_cpu_s = -1};
    summarize(&rows, &p, s);
    free_rows(&rows);
}

TEST(report_phases_known_figures_from_known_columns) {
    char *dir = temp_dir();
    write_requests(dir, known_rows);
    run_summary s;
    summarize_dir(dir, &s);
    const ttft_phases *p = &s.phases;
    CHECK(p->present);
    CHECK_INT(p->dispatch.n, 3);
    CHECK_NEAR(p->dispatch.p50, 0.5, 1e-9);
    CHECK_INT(p->connect.n, 2);
    CHECK_NEAR(p->connect.p50, 0.5, 1e-9);
    CHECK_INT(p->client_write.n, 2);
    CHECK_NEAR(p->client_write.p50, 0.5, 1e-9);
    CHECK_INT(p->server.n, 3);
    CHECK_NEAR(p->server.p50, 10, 1e-9);
    CHECK_NEAR(p->server.p95, 10 + 0.9 * 8.5, 1e-9); /* rank 1.9 of 2, 10, 18.5 */
    CHECK_INT(p->stream.n, 3);
    CHECK_NEAR(p->stream.p50, 8, 1e-9);
    CHECK_INT(p->first_tokens, 3);
    CHECK_INT(p->first_coalesced, 1);
    const server_reported *r = &s.server_rep;
    CHECK(r->present);
    CHECK_INT(r->ttft_minus_prompt.n, 2);
    CHECK_NEAR(r->ttft_minus_prompt.p50, 4.25, 1e-9);
    CHECK_INT(r->client_decode_tok_s.n, 2);
    CHECK_NEAR(r->client_decode_tok_s.p50, 1000, 1e-6);
    /* (predicted_n - 1) / predicted_ms: 9 / 10 ms and 19 / 40 ms */
    CHECK_NEAR(r->server_decode_tok_s.p50, (900 + 475) / 2.0, 1e-6);
    CHECK_NEAR(r->decode_ratio.p50, (1000 / 900.0 + 1000 / 475.0) / 2, 1e-9);
    /* prompt_n / prompt_ms: 100 / 15 ms and 200 / 25 ms */
    CHECK_INT(r->server_prefill_tok_s.n, 2);
    CHECK_NEAR(r->server_prefill_tok_s.p50, (100 / 0.015 + 200 / 0.025) / 2, 1e-6);
    CHECK_INT(r->cached_n, 2);
    CHECK_NEAR(r->cached_share, 0.375, 1e-9);
    /* summary.json has both objects */
    json_t *j = summary_json(&s);
    json_t *ph = json_object_get(j, "ttft_phases");
    CHECK(ph != NULL);
    CHECK_NEAR(json_real_value(json_object_get(json_object_get(ph, "server_ms"), "p50")), 10, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(ph, "first_tokens_coalesced")), 1);
    json_t *sr = json_object_get(j, "server_reported");
    CHECK(sr != NULL);
    CHECK_NEAR(json_real_value(json_object_get(sr, "cached_prompt_share")), 0.375, 1e-9);
    json_decref(j);
    /* the run's table says the same in a line each */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    summary_print(f, &s);
    fclose(f);
    CHECK_MSG(strstr(text, "TTFT phases     p50 ms: dispatch 0.500, connect 0.500, write 0.500, "
                           "server 10.000, first byte to token 8.000; 1 of 3 first tokens "
                           "coalesced\n") &&
                  strstr(text, "server's own    TTFT - prompt_ms p50 4.250 ms; decode p50 client "
                               "1000.000 tok/s, server 687.500 tok/s; 37.5% of prompt tokens "
                               "cached\n") &&
                  !strstr(text, "nan"),
              "%s", text);
    free(text);
    /* and the report prints both tables, with the note that they need not add up */
    char cmd[2048], *out, path[1200];
    snprintf(cmd, sizeof cmd, "report %s --out %s/report", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    snprintf(path, sizeof path, "%s/report/summary.md", dir);
    char *md = read_file(path, NULL);
    CHECK(md != NULL);
    CHECK(strstr(md, "## Where TTFT went") != NULL);
    CHECK(strstr(md, "need not add up to the TTFT median") != NULL);
    CHECK_MSG(strstr(md, "| 0.500 | ") && strstr(md, "| 10.000 | 17.650 | ") &&
                  strstr(md, "| 1 of 3 |"),
              "%s", md);
    CHECK(strstr(md, "## Server's own account") != NULL);
    CHECK_MSG(strstr(md, "| 4.250 | ") && strstr(md, "| 37.5 |"), "%s", md);
    snprintf(path, sizeof path, "%s/report/report.html", dir);
    char *html = read_file(path, NULL);
    CHECK(html && strstr(html, "<h2>Where TTFT went</h2>") &&
          strstr(html, "<h2>Server's own account</h2>"));
}

TEST(report_phases_absent_from_an_older_run) {
    char *dir = temp_dir();
    write_requests(dir, OLD_HDR "\n"
                                "req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,4.900,2.000,7.900,"
                                "length,200,,2,0.010\n");
    run_summary s;
    summarize_dir(dir, &s);
    CHECK(!s.phases.present && !s.server_rep.present);
    json_t *j = summary_json(&s);
    CHECK(json_object_get(j, "ttft_phases") == NULL);
    CHECK(json_object_get(j, "server_reported") == NULL);
    json_decref(j);
    char cmd[2048], *out, path[1200];
    snprintf(cmd, sizeof cmd, "report %s --out %s/report", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    snprintf(path, sizeof path, "%s/report/summary.md", dir);
    char *md = read_file(path, NULL);
    CHECK(md && !strstr(md, "Where TTFT went") && !strstr(md, "Server's own account"));
    snprintf(path, sizeof path, "%s/report/summary.json", dir);
    char *js = read_file(path, NULL);
    CHECK(js && !strstr(js, "ttft_phases") && !strstr(js, "server_reported"));
}

/* A good row with column `col` (counted from 0 after chunks,lag_ms's
 * 0.010, i.e. connect_ms is 0) replaced by `value`: the error must name
 * line 2 and the column. */
static void expect_bad_phase(int col, const char *value, const char *column) {
    const char *fields[] = {"1.000",  "2.000", "12.000", "0", "0", "15.000",
                            "10.000", "100",   "10",     "0", "25"};
    char row[1024];
    int n = snprintf(row, sizeof row,
                     "%s\nreq-0,short,0.000,0.500,20.000,30.000,31.000,100,11,,,,"
                     "stop,200,,11,0.010",
                     NEW_HDR);
    for (int i = 0; i < 11; i++)
        n += snprintf(row + n, sizeof row - (size_t)n, ",%s", i == col ? value : fields[i]);
    snprintf(row + n, sizeof row - (size_t)n, "\n");
    char *dir = temp_dir();
    write_requests(dir, row);
    run_rows rows;
    char *err = load_dir(dir, &rows);
    if (col < 0)
        CHECK_MSG(err[0] == 0, "the good row: %s", err);
    else
        CHECK_MSG(strstr(err, "requests.csv:2:") && strstr(err, column), "%s=%s: want %s, got '%s'",
                  column, value, column, err);
    free(err);
    free_rows(&rows);
}

TEST(report_phases_bad_values_name_file_line_and_column) {
    expect_bad_phase(-1, "", "");
    expect_bad_phase(0, "-1.000", "connect_ms");
    expect_bad_phase(0, "inf", "connect_ms");
    expect_bad_phase(0, "1e39", "connect_ms"); /* past what the record's float holds */
    expect_bad_phase(1, "nan", "written_ms");
    expect_bad_phase(1, "-0.5", "written_ms");
    expect_bad_phase(2, "1e999", "first_byte_ms");
    expect_bad_phase(2, "soon", "first_byte_ms");
    expect_bad_phase(3, "-1", "coalesced");
    expect_bad_phase(4, "2", "first_coalesced");
    expect_bad_phase(4, "-1", "first_coalesced");
    expect_bad_phase(5, "-15", "server_prompt_ms");
    expect_bad_phase(6, "inf", "server_decode_ms");
    expect_bad_phase(7, "-100", "server_prompt_n");
    expect_bad_phase(8, "3e10", "server_decode_n");
    expect_bad_phase(9, "nan", "server_cache_n");
    expect_bad_phase(10, "-25", "cached_tokens");
}

/* summary.json's ttft_phases.NAME.FIGURE, or NAN. */
static double phase_figure(json_t *summary, const char *name, const char *figure) {
    json_t *v =
        json_object_get(json_object_get(json_object_get(summary, "ttft_phases"), name), figure);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

TEST(run_against_sim_shows_ttft_phases) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char cmd[2048], *out, path[1200];
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --rate 100 --requests 60 --max-tokens 6 "
             "--out %s/load-100rps",
             p.port, dir);
    int code = servelab_cmd(cmd, &out);
    sim_stop(&p);
    CHECK_MSG(code == 0, "run exit %d: %s", code, out);
    CHECK_MSG(strstr(out, "TTFT phases     p50 ms: dispatch ") != NULL, "%s", out);
    snprintf(path, sizeof path, "%s/load-100rps/summary.json", dir);
    json_t *run = json_load_file(path, 0, NULL);
    CHECK(run != NULL);
    CHECK_MSG(json_object_get(run, "ttft_phases") != NULL, "no ttft_phases in %s", path);
    /* the connections are pooled: most requests reuse one */
    CHECK_NEAR(phase_figure(run, "connect_ms", "p50"), 0, 0);
    CHECK_INT((int)phase_figure(run, "connect_ms", "n"), 60);
    CHECK_MSG(phase_figure(run, "server_ms", "p50") > 0, "server p50 %g",
              phase_figure(run, "server_ms", "p50"));
    CHECK(phase_figure(run, "stream_to_first_token_ms", "p50") > 0);
    /* the sim sends no timings, only usage's cached_tokens: with the
     * default cache-busting nonce no prompt hits its prefix cache */
    json_t *rep_by_server = json_object_get(run, "server_reported");
    CHECK(rep_by_server != NULL);
    CHECK_INT((int)json_integer_value(json_object_get(
                  json_object_get(rep_by_server, "ttft_minus_server_prompt_ms"), "n")),
              0);
    CHECK_INT((int)json_integer_value(json_object_get(rep_by_server, "cached_prompt_share_n")), 60);
    CHECK_NEAR(json_number_value(json_object_get(rep_by_server, "cached_prompt_share")), 0, 0);
    /* the report computes the same figures from requests.csv */
    snprintf(cmd, sizeof cmd, "report %s --out %s/report", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    snprintf(path, sizeof path, "%s/report/summary.json", dir);
    json_t *rep = json_load_file(path, 0, NULL);
    CHECK(rep != NULL);
    json_t *pooled = json_object_get(json_array_get(json_object_get(rep, "runs"), 0), "pooled");
    const char *names[] = {"dispatch_ms", "connect_ms", "client_write_ms", "server_ms",
                           "stream_to_first_token_ms"};
    for (int i = 0; i < 5; i++)
        CHECK_NEAR(phase_figure(pooled, names[i], "p95"), phase_figure(run, names[i], "p95"), 1e-9);
    snprintf(path, sizeof path, "%s/report/summary.md", dir);
    char *md = read_file(path, NULL);
    CHECK(md && strstr(md, "## Where TTFT went") && strstr(md, "| load-100rps | 100.00 |"));
    json_decref(run);
    json_decref(rep);
}
