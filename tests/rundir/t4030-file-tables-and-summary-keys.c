/* t4030-file-tables-and-summary-keys: the run directory's tables (src/rundir/) drive what is
 * written and documented: the row writer writes requests.csv's fields in
 * the table's order (a row of distinct values read back by the table's
 * names), and docs/files.md's tables are what the tables print now. */
#include "client/rowwriter.h"
#include "common/strbuf.h"
#include "csv_util.h"
#include "report/load.h"
#include "rundir/columns.h"
#include "rundir/docs.h"
#include "rundir/summary_keys.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* docs/files.md's generated tables are current (`make docs` prints them). */
TEST(rundir_files_md_is_current) {
    size_t n;
    char *committed = read_file("docs/files.md", &n), err[256];
    CHECK_MSG(committed != NULL, "docs/files.md missing");
    strbuf now = {0};
    CHECK_MSG(rundir_docs_splice(committed, &now, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(strstr(committed, "<!-- BEGIN generated: requests.csv -->") != NULL,
              "docs/files.md has no generated requests.csv table");
    CHECK_MSG(!strcmp(now.s, committed), "docs/files.md is not current: run make docs");
    sb_free(&now);
    free(committed);
}

/* A request row whose every field differs from its neighbours'. */
static request_row distinct_row(void) {
    request_row r = {.index = 7,
                     .cls = "cls",
                     .scheduled_us = 1000,
                     .dispatched_us = 1700,
                     .sent_us = 2500,
                     .first_us = 4100,
                     .last_us = 10100,
                     .end_us = 12345,
                     .prompt_tokens = 11,
                     .output_tokens = 13,
                     .finish_reason = "stop",
                     .http_status = 200,
                     .error = ERR_HTTP,
                     .chunks = 3,
                     .connect_us = 21,
                     .written_us = 2600,
                     .first_byte_us = 3900,
                     .coalesced = 2,
                     .first_coalesced = 1,
                     .server_prompt_ms = 31.5,
                     .server_decode_ms = 32.25,
                     .server_prompt_n = 41,
                     .server_decode_n = 42,
                     .server_cache_n = 43,
                     .cached_tokens = 44,
                     .conversation = 5,
                     .turn = 6,
                     .trace_line = 8,
                     .first_answer_us = 4200,
                     .reasoning_counted = 9,
                     .reasoning_server = -1,
                     .first_tool_us = 4300,
                     .tool_calls = 14,
                     .answer_valid = 1,
                     .server_draft_n = 51,
                     .server_draft_accepted = 52};
    return r;
}

/* What each column of that row must hold, by the table's names. */
static const char *const expected[][2] = {{"request_id", "req-7"},
                                          {"class", "cls"},
                                          {"scheduled_ms", "1.000"},
                                          {"sent_ms", "2.500"},
                                          {"first_token_ms", "4.100"},
                                          {"last_token_ms", "10.100"},
                                          {"end_ms", "12.345"},
                                          {"prompt_tokens", "11"},
                                          {"output_tokens", "13"},
                                          {"ttft_ms", "1.600"},
                                          {"tpot_ms", "0.500"},
                                          {"e2e_ms", "9.845"},
                                          {"finish_reason", "stop"},
                                          {"http_status", "200"},
                                          {"error", "http"},
                                          {"chunks", "3"},
                                          {"lag_ms", "0.700"},
                                          {"connect_ms", "0.021"},
                                          {"written_ms", "2.600"},
                                          {"first_byte_ms", "3.900"},
                                          {"coalesced", "2"},
                                          {"first_coalesced", "1"},
                                          {"server_prompt_ms", "31.500"},
                                          {"server_decode_ms", "32.250"},
                                          {"server_prompt_n", "41"},
                                          {"server_decode_n", "42"},
                                          {"server_cache_n", "43"},
                                          {"cached_tokens", "44"},
                                          {"conversation_id", "5"},
                                          {"turn", "6"},
                                          {"trace_line", "8"},
                                          {"first_answer_ms", "4.200"},
                                          {"reasoning_tokens", "9"},
                                          {"reasoning_from", "counted"},
                                          {"tool_calls", "14"},
                                          {"first_tool_ms", "4.300"},
                                          {"answer_valid", "1"},
                                          {"server_draft_n", "51"},
                                          {"server_draft_accepted", "52"}};

/* The writer's fields are in the table's order: a row read back by the
 * header's names (the table's) has each value under its own column, and
 * every column of the table has a value here. Adding a column to the table
 * without writing it (or writing it elsewhere) fails this test. */
TEST(rundir_row_writer_follows_the_table) {
    char *dir = temp_dir(), err[256], path[1200];
    row_writer w;
    CHECK_MSG(row_writer_open(&w, dir, err, sizeof err) == 0, "%s", err);
    request_row r = distinct_row();
    row_writer_request(&w, &r);
    int64_t t[3] = {4100, 7100, 10100};
    row_writer_chunks(&w, 7, t, NULL, NULL, 3);
    CHECK_INT(row_writer_close(&w), 0);
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    csv_table *c = csv_read(path);
    CHECK(c != NULL);
    CHECK_INT(c->n_cols, RQ_N);
    CHECK_INT(c->n_rows, 1);
    CHECK_INT((int)(sizeof expected / sizeof *expected), RQ_N);
    for (int i = 0; i < RQ_N; i++) {
        CHECK_STR(c->header[i], rundir_requests.col[i].name);
        CHECK_STR(expected[i][0], rundir_requests.col[i].name);
        CHECK_MSG(!strcmp(csv_get(c, 0, expected[i][0]), expected[i][1]),
                  "column %s holds '%s', not '%s'", expected[i][0], csv_get(c, 0, expected[i][0]),
                  expected[i][1]);
    }
    csv_free(c);
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    c = csv_read(path);
    CHECK(c != NULL);
    CHECK_INT(c->n_cols, CH_N);
    for (int i = 0; i < CH_N; i++)
        CHECK_STR(c->header[i], rundir_chunks.col[i].name);
    csv_free(c);
    free(dir);
}

/* A reader refuses a requests.csv without a contract column, naming it,
 * and reads one without an extra column. */
TEST(rundir_reader_needs_the_contract_columns) {
    char *dir = temp_dir(), err[512], path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,"
          "prompt_tokens,output_tokens,error\nreq-0,c,0,1,2,3,4,5,6,\n",
          f);
    fclose(f);
    run_rows rows = {0};
    run_files files;
    CHECK_MSG(load_run(dir, 0, &rows, &files, err, sizeof err) == 0, "%s", err);
    CHECK_INT(rows.n, 1);
    run_files_free(&files);
    free((char *)rows.classes[0]);
    rows_free(&rows);
    f = fopen(path, "w");
    fputs("request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,"
          "prompt_tokens,error\nreq-0,c,0,1,2,3,4,5,\n",
          f);
    fclose(f);
    memset(&rows, 0, sizeof rows);
    CHECK(load_run(dir, 0, &rows, &files, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "missing column output_tokens") != NULL, "%s", err);
    rows_free(&rows);
    free(dir);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every key path of v under prefix ("client.within_1ms", "ttft_ms.p50"),
 * appended to *b one a line; arrays are looked into at their first item. */
static void key_paths(json_t *v, const char *prefix, strbuf *b) {
    if (json_is_array(v) && json_array_size(v) > 0) {
        char p[512];
        snprintf(p, sizeof p, "%s[]", prefix);
        key_paths(json_array_get(v, 0), p, b);
        return;
    }
    const char *k;
    json_t *x;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, x) {
        char p[512];
        snprintf(p, sizeof p, "%s%s%s", prefix, *prefix ? "." : "", k);
        sb_printf(b, "%s\n", p);
        key_paths(x, p, b);
    }
}

/* The sorted key paths of DIR/summary.json. */
static char *summary_keys_of(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    CHECK_MSG(j != NULL, "%s does not read", path);
    strbuf b = {0};
    key_paths(j, "", &b);
    json_decref(j);
    /* sorted, so that the order keys were set in does not count */
    int n = 0;
    char *lines[4096], *save = NULL;
    for (char *t = strtok_r(b.s, "\n", &save); t && n < 4096; t = strtok_r(NULL, "\n", &save))
        lines[n++] = t;
    qsort(lines, (size_t)n, sizeof *lines, cmp_str);
    strbuf out = {0};
    for (int i = 0; i < n; i++)
        sb_printf(&out, "%s\n", lines[i]);
    sb_free(&b);
    return out.s;
}

/* Whether key is a row of k. */
static int in_table(const rundir_keys *k, const char *key) {
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->key[i].name, key))
            return 1;
    return 0;
}

/* Every key of DIR/summary.json, at the top and in `client`, is a row of
 * rundir/summary_keys.h: a key written without its row is not documented. */
static void keys_in_tables(const char *dir) {
    char path[1400];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL), *v;
    const char *k;
    json_object_foreach(j, k, v) {
        CHECK_MSG(in_table(&rundir_summary_keys, k), "summary.json's %s is not in the table", k);
    }
    json_object_foreach(json_object_get(j, "client"), k, v) {
        CHECK_MSG(in_table(&rundir_client_keys, k), "summary.json's client.%s is not in the table",
                  k);
    }
    json_decref(j);
}

/* The first line where two key lists part, for the message. */
static const char *parting(const char *a, const char *b) {
    while (*a && *a == *b)
        a++, b++;
    while (a > b && a[-1] != '\n')
        a--;
    return a;
}

/* A run, a merge of two shards and a prediction write summary.json with
 * the same keys, all the way down: one writer (rundir/summary_file.h)
 * fills what a merge or a prediction cannot know with null. A merged
 * run's `client` had 2 of the run's 15 keys. */
TEST(rundir_run_merge_and_predict_have_the_same_summary_keys) {
    char *dir = temp_dir(), cmd[4096];
    const char *work = "--prompts random:16:4 --max-tokens 4 --ignore-eos --rate 40 --requests 12 "
                       "--seed 3 --quiet";
    sim_proc sim = sim_start("--profile tiny");
    snprintf(cmd, sizeof cmd, "run --url http://127.0.0.1:%d %s --no-sampling --out %s/run",
             sim.port, work, dir);
    servelab_ok(cmd);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "run --url http://127.0.0.1:%d %s --no-sampling --shard %d/2 --out %s/s%d",
                 sim.port, work, i, dir, i);
        servelab_ok(cmd);
    }
    sim_stop(&sim);
    snprintf(cmd, sizeof cmd, "merge %s/s0 %s/s1 --out %s/merged", dir, dir, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "predict --profile tiny %s --out %s/pred", work, dir);
    servelab_ok(cmd);
    const char *names[] = {"merged", "pred"};
    char path[1200];
    snprintf(path, sizeof path, "%s/run", dir);
    char *run = summary_keys_of(path);
    CHECK_MSG(strstr(run, "client.within_1ms\n") != NULL, "a run's summary has no within_1ms");
    keys_in_tables(path);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *other = summary_keys_of(path);
        CHECK_MSG(!strcmp(run, other),
                  "%s's summary.json keys differ from a run's at: %.80s (a run: %.80s)", names[i],
                  parting(other, run), parting(run, other));
        free(other);
    }
    free(run);

    /* merge reads each shard's header by the table: one without a contract
     * column is refused up front, naming it, and nothing is written */
    snprintf(path, sizeof path, "%s/s0/requests.csv", dir);
    size_t n;
    char *rows = read_file(path, &n), *at = strstr(rows, "output_tokens");
    CHECK(at != NULL);
    at[strlen("output_tokens") - 1] = 'z';
    FILE *f = fopen(path, "w");
    fwrite(rows, 1, n, f);
    fclose(f);
    free(rows);
    char *out = NULL;
    snprintf(cmd, sizeof cmd, "merge %s/s0 %s/s1 --out %s/refused", dir, dir, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code != 0 && strstr(out, "requests.csv:1: missing column output_tokens"),
              "exit %d: %s", code, out);
    snprintf(path, sizeof path, "%s/refused", dir);
    CHECK_MSG(access(path, F_OK) != 0, "a refused merge made %s", path);
    free(out);
    free(dir);
}
