/* rows: the row writer (client/rowwriter.h) on its own. Every row it writes
 * is one whole line whatever the fields hold (no fixed buffer to overflow),
 * and the files it writes read back through the report's loader with the
 * values that went in. */
#include "client/rowwriter.h"
#include "common/record.h"
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
                     .chunks = 3};
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
        row_writer_chunks(&w, (uint32_t)i, t, NULL, 3);
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
