/* csv_quoting: RFC 4180 quoting in the CSV servelab writes and reads. A
 * field holding a comma, a double quote, CR or LF is written quoted (inner
 * quotes doubled) in requests.csv and summary.csv; the strict reader
 * (common/csv.h) unquotes such fields, keeps line numbers right when a field
 * holds a line break, and says what is wrong with a badly quoted row. A run
 * directory named `a,b` with a class `sh,ort` goes through run, report and
 * report --check. */
#include "client/rowwriter.h"
#include "common/csv.h"
#include "model/record.h"
#include "report/load.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *put_temp(const char *dir, const char *name, const char *text, size_t n) {
    static char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, n, f) == n);
    CHECK(fclose(f) == 0);
    return path;
}

static int field_is(const csv_row *row, int i, const char *want) {
    return i < row->n && row->len[i] == strlen(want) && !memcmp(row->f[i], want, row->len[i]);
}

TEST(csv_quoting_reader_unquotes_fields) {
    static const char text[] = "a,b,c\n"
                               "1,\"x,y\",\"say \"\"hi\"\"\"\n"
                               "\"two\nlines\",\"\",\"cr\r\nlf\"\r\n"
                               "\"\"\"\",plain\"quote,\"end\"\n"
                               "4,5,\"last\"";
    char *dir = temp_dir();
    csv_file c;
    CHECK_INT(csv_open(&c, put_temp(dir, "q.csv", text, sizeof text - 1)), 0);
    csv_row row;
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(row.n, 3);
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(c.line, 2);
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 1, "x,y"));
    CHECK(field_is(&row, 2, "say \"hi\""));
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(c.line, 3); /* the line the row starts on */
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 0, "two\nlines"));
    CHECK(field_is(&row, 1, ""));
    CHECK(field_is(&row, 2, "cr\r\nlf")); /* inside quotes CR and LF are data */
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(c.line, 6); /* two line breaks were inside the row before */
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 0, "\""));
    CHECK(field_is(&row, 1, "plain\"quote")); /* a quote inside an unquoted field is data */
    CHECK(field_is(&row, 2, "end"));
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(c.line, 7);
    CHECK(field_is(&row, 2, "last"));
    double v;
    CHECK_INT(csv_number(&row, 0, &v), 0);
    CHECK_INT(csv_next(&c, &row), 0);
    csv_close(&c);

    /* a quoted number is a number */
    static const char num[] = "\"12.5\",\"-3\"\n";
    CHECK_INT(csv_open(&c, put_temp(dir, "n.csv", num, sizeof num - 1)), 0);
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(csv_number(&row, 0, &v), 0);
    CHECK_NEAR(v, 12.5, 1e-12);
    CHECK_INT(csv_number(&row, 1, &v), 0);
    CHECK_NEAR(v, -3, 0);
    csv_close(&c);
    free(dir);
}

#define HDR                                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"

static void load_expect_error(const char *rows, const char *want) {
    char *dir = temp_dir();
    put_temp(dir, "requests.csv", rows, strlen(rows));
    run_rows rr;
    run_files files;
    memset(&rr, 0, sizeof rr);
    char err[512] = "";
    CHECK_MSG(load_run(dir, 0, &rr, &files, err, sizeof err) == -1, "loaded: %s", rows);
    CHECK_MSG(strstr(err, want) != NULL, "want '%s' in: %s", want, err);
    run_files_free(&files);
    for (int i = 0; i < rr.n_classes; i++)
        free((char *)rr.classes[i]);
    rows_free(&rr);
    free(dir);
}

/* A badly quoted row is an error naming the file and the line it starts on. */
TEST(csv_quoting_bad_quotes_are_errors_with_their_line) {
    load_expect_error(HDR
                      "req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,,,,stop,200,,2,0.010\n"
                      "req-1,\"sh,ort,0.000,0.100,5.000,7.000,8.000,10,2,,,,stop,200,,2,0.010\n",
                      "requests.csv:3: a quoted field is not closed");
    load_expect_error(HDR
                      "req-0,\"sh\"ort,0.000,0.100,5.000,7.000,8.000,10,2,,,,stop,200,,2,0.010\n",
                      "requests.csv:2: text after a closing quote");
    /* a line break inside a quoted class moves the next row's line number */
    load_expect_error(HDR "req-0,\"a\nb\",0.000,0.100,5.000,7.000,8.000,10,2,,,,stop,200,,2,0.010\n"
                          "req-1,short,x,0.100,5.000,7.000,8.000,10,2,,,,stop,200,,2,0.010\n",
                      "requests.csv:4: bad value in column scheduled_ms");
}

/* Classes and finish reasons with commas, quotes and line breaks are
 * quoted in requests.csv and read back as they were. */
TEST(csv_quoting_row_writer_quotes_text_fields) {
    const char *classes[] = {"sh,ort", "say \"x\"", "two\nlines", "cr\rhere", "plain"};
    char *dir = temp_dir();
    row_writer w;
    char err[512];
    CHECK_MSG(row_writer_open(&w, dir, err, sizeof err) == 0, "%s", err);
    int64_t t[2] = {5000, 7000};
    for (int i = 0; i < 5; i++) {
        request_row r = {.index = (uint32_t)i,
                         .cls = classes[i],
                         .scheduled_us = 0,
                         .dispatched_us = 10,
                         .sent_us = 100,
                         .first_us = 5000,
                         .last_us = 7000,
                         .end_us = 8000,
                         .prompt_tokens = 10,
                         .output_tokens = 2,
                         .finish_reason = i == 0 ? "st,op" : "length",
                         .http_status = 200,
                         .error = ERR_NONE,
                         .chunks = 2,
                         .first_answer_us = 5000,
                         .reasoning_server = -1,
                         .first_tool_us = -1,
                         .tool_calls = -1,
                         .answer_valid = -1,
                         .server_draft_n = -1,
                         .server_draft_accepted = -1};
        row_writer_request(&w, &r);
        row_writer_chunks(&w, (uint32_t)i, t, NULL, NULL, 2);
    }
    CHECK_INT(row_writer_close(&w), 0);
    char path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    char *raw = read_file(path, NULL);
    CHECK_MSG(strstr(raw, "\nreq-0,\"sh,ort\",") && strstr(raw, ",\"st,op\",200,") &&
                  strstr(raw, "\nreq-1,\"say \"\"x\"\"\",") && strstr(raw, "\nreq-4,plain,"),
              "%s", raw);
    run_rows rr;
    run_files files;
    memset(&rr, 0, sizeof rr);
    CHECK_MSG(load_run(dir, 0, &rr, &files, err, sizeof err) == 0, "%s", err);
    CHECK_INT(rr.n, 5);
    CHECK_INT(rr.n_classes, 5);
    for (int i = 0; i < 5; i++) {
        CHECK_STR(rr.classes[rr.r[i].cls], classes[i]);
        CHECK_INT(rr.r[i].output_tokens, 2);
    }
    run_files_free(&files);
    for (int i = 0; i < rr.n_classes; i++)
        free((char *)rr.classes[i]);
    rows_free(&rr);
    free(raw);
    free(dir);
}

/* A run directory `a,b` and a class `sh,ort`: run, report, report --check. */
TEST(csv_quoting_run_named_with_a_comma_end_to_end) {
    char *dir = temp_dir();
    char prompts[1200];
    snprintf(prompts, sizeof prompts, "%s/p.jsonl", dir);
    static const char jsonl[] = "{\"prompt\":\"hello there\",\"class\":\"sh,ort\"}\n"
                                "{\"prompt\":\"a longer question\",\"class\":\"long\"}\n";
    put_temp(dir, "p.jsonl", jsonl, sizeof jsonl - 1);
    sim_proc p = sim_start(NULL);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --rate 50 --requests 20 --prompts %s "
             "--max-tokens 4 --out '%s/runs/a,b'",
             p.port, prompts, dir);
    char *out = NULL;
    int code = servelab_cmd(cmd, &out);
    sim_stop(&p);
    CHECK_MSG(code == 0, "run: exit %d: %s", code, out);
    free(out);
    snprintf(cmd, sizeof cmd, "report '%s/runs' --out '%s/rep'", dir, dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "report: exit %d: %s", code, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/rep/summary.csv", dir);
    char *csv = read_file(cmd, NULL);
    CHECK_MSG(csv && strstr(csv, "\n\"a,b\",") != NULL, "summary.csv:\n%s", csv);
    csv_file c;
    CHECK_INT(csv_open(&c, cmd), 0);
    csv_row row, header;
    CHECK_INT(csv_next(&c, &header), 1);
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(row.n, header.n);
    CHECK(field_is(&row, 0, "a,b"));
    csv_close(&c);
    snprintf(cmd, sizeof cmd, "%s/rep/summary.json", dir);
    char *json = read_file(cmd, NULL);
    CHECK_MSG(json && strstr(json, "\"sh,ort\"") && strstr(json, "\"a,b\""), "%s", json);
    snprintf(cmd, sizeof cmd, "report '%s/runs' --out '%s/rep' --check", dir, dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "report --check: exit %d: %s", code, out);
    free(out);
    free(csv);
    free(json);
    free(dir);
}

/* A file larger than what the reader keeps resident (it hands back what it
 * has read every 32 MiB): every row reads, in order, and a field of the
 * first row, kept to the end, still reads as it did. */
TEST(csv_quoting_a_large_file_reads_whole_and_early_fields_stay) {
    char *dir = temp_dir(), path[1200];
    snprintf(path, sizeof path, "%s/big.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    const int rows = 1500000; /* ~45 MB */
    fputs("request_id,index,t_ms,tokens\n", f);
    for (int i = 0; i < rows; i++)
        fprintf(f, "req-%d,%d,%d.%03d,1\n", i, i % 8, i / 7, i % 1000);
    fclose(f);
    csv_file c;
    CHECK(csv_open(&c, path) == 0);
    csv_row r;
    const char *first = NULL;
    size_t first_len = 0;
    int n = 0, ok = 1;
    while (csv_next(&c, &r)) {
        if (c.line == 1)
            continue;
        if (n == 0) {
            first = r.f[0];
            first_len = r.len[0];
        }
        char want[32];
        int len = snprintf(want, sizeof want, "req-%d", n);
        double t;
        ok &= r.n == 4 && r.len[0] == (size_t)len && !memcmp(r.f[0], want, (size_t)len) &&
              csv_number(&r, 2, &t) == 0 &&
              fabs(t - ((double)(n / 7) + (n % 1000) / 1000.0)) < 1e-9;
        n++;
    }
    CHECK(ok);
    CHECK_INT(n, rows);
    CHECK(first_len == 5 && !memcmp(first, "req-0", 5));
    csv_close(&c);
    free(dir);
}
