/* rows: the row writer (client/rowwriter.h) on its own. Every row it writes
 * is one whole line whatever the fields hold (no fixed buffer to overflow),
 * and the files it writes read back through the report's loader with the
 * values that went in. */
#include "client/rowwriter.h"
#include "model/record.h"
#include "report/load.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static request_row sample_row(uint32_t index, const char *cls) {
    request_row r = {.index = index,
                     .cls = cls,
                     .scheduled_us = 1000,
                     .dispatched_us = 1010,
                     .sent_us = 1100,
                     .first_us = 5100,
                     .last_us = 9100,
                     .end_us = 9200,
                     .prompt_tokens = 12,
                     .output_tokens = 3,
                     .finish_reason = "length",
                     .http_status = 200,
                     .error = ERR_NONE,
                     .chunks = 3,
                     .first_answer_us = 5100,
                     .reasoning_server = -1,
                     .first_tool_us = -1,
                     .tool_calls = -1,
                     .answer_valid = -1,
                     .server_draft_n = -1,
                     .server_draft_accepted = -1};
    return r;
}

static void write_rows(const char *dir, const char *cls, int n) {
    row_writer w;
    char err[256];
    CHECK_MSG(row_writer_open(&w, dir, err, sizeof err) == 0, "%s", err);
    int64_t t[3] = {5100, 7100, 9100};
    for (int i = 0; i < n; i++) {
        request_row r = sample_row((uint32_t)i, cls);
        row_writer_request(&w, &r);
        row_writer_chunks(&w, (uint32_t)i, t, NULL, NULL, 3);
    }
    CHECK_INT(row_writer_close(&w), 0);
}

static size_t count_lines(const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k;
}

/* A class of 3,000 bytes wrote rows with NUL bytes in them, one of 200,000
 * was a SIGSEGV before any row: the row writer no longer trusts a field to
 * fit a fixed buffer. */
TEST(rows_long_class_gives_whole_rows) {
    size_t sizes[] = {63, 64, 65, 3000, 200000};
    for (int s = 0; s < 5; s++) {
        char *dir = temp_dir();
        char *cls = malloc(sizes[s] + 1);
        memset(cls, 'c', sizes[s]);
        cls[sizes[s]] = 0;
        write_rows(dir, cls, 4);
        char path[1200];
        snprintf(path, sizeof path, "%s/requests.csv", dir);
        size_t len;
        char *raw = read_file(path, &len);
        CHECK(raw && len > 0 && raw[len - 1] == '\n');
        CHECK_MSG(memchr(raw, 0, len) == NULL, "a NUL byte in requests.csv (class of %zu)",
                  sizes[s]);
        CHECK_INT(count_lines(raw, len), 5);
        run_rows rows;
        run_files files;
        memset(&rows, 0, sizeof rows);
        char err[512];
        CHECK_MSG(load_run(dir, 0, &rows, &files, err, sizeof err) == 0, "%s", err);
        CHECK_INT(rows.n, 4);
        CHECK_INT(rows.n_classes, 1);
        CHECK_STR(rows.classes[0], cls);
        CHECK_INT(rows.r[3].output_tokens, 3);
        CHECK_INT(rows.n_itl, 8);
        run_files_free(&files);
        free((char *)rows.classes[0]);
        rows_free(&rows);
        free(raw);
        free(cls);
        free(dir);
    }
}

/* The request's chunk rows are on disk when its request row is: the row
 * writer holds nothing back that a SIGKILL could lose once a request row
 * is written (the files are read here before the writer is closed). */
TEST(rows_chunk_rows_are_on_disk_with_their_request_row) {
    char *dir = temp_dir();
    row_writer w;
    char err[256];
    CHECK_MSG(row_writer_open(&w, dir, err, sizeof err) == 0, "%s", err);
    int64_t t[3] = {5100, 7100, 9100};
    int32_t tok[3] = {1, 2, 1};
    char req[1200], chunks[1200];
    snprintf(req, sizeof req, "%s/requests.csv", dir);
    snprintf(chunks, sizeof chunks, "%s/chunks.csv", dir);
    for (int i = 0; i < 3; i++) {
        request_row r = sample_row((uint32_t)i, "short");
        row_writer_request(&w, &r);
        row_writer_chunks(&w, (uint32_t)i, t, tok, NULL, 3);
        size_t rn, cn;
        char *rs = read_file(req, &rn), *cs = read_file(chunks, &cn);
        CHECK_INT(count_lines(rs, rn), 2 + i);
        CHECK_MSG(count_lines(cs, cn) == 1 + 3 * (size_t)(i + 1), "after request %d:\n%s", i, cs);
        free(rs);
        free(cs);
    }
    CHECK_INT(row_writer_close(&w), 0);
    size_t cn;
    char *cs = read_file(chunks, &cn);
    CHECK_STR(cs, "request_id,index,t_ms,tokens,coalesced\n"
                  "req-0,0,5.100,1,0\nreq-0,1,7.100,2,0\nreq-0,2,9.100,1,0\n"
                  "req-1,0,5.100,1,0\nreq-1,1,7.100,2,0\nreq-1,2,9.100,1,0\n"
                  "req-2,0,5.100,1,0\nreq-2,1,7.100,2,0\nreq-2,2,9.100,1,0\n");
    free(cs);
    free(dir);
}
