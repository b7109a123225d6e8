/* report_values: values in requests.csv that cannot be true are errors
 * naming the file, the line and the column, like any other bad value: a
 * time or duration that is infinite or not a number, a negative time, and
 * times in an order that makes a duration negative (a first token before
 * the request was sent is a negative TTFT). */
#include "report/load.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR                                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"

/* load_run on a requests.csv of the header and one row; the error or "". */
static char *load_row(const char *row) {
    char *dir = temp_dir();
    char path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f, HDR "%s\n", row);
    fclose(f);
    run_rows rows;
    run_files files;
    memset(&rows, 0, sizeof rows);
    char *err = calloc(1, 512);
    if (load_run(dir, 0, &rows, &files, err, 512) == 0)
        err[0] = 0;
    run_files_free(&files);
    for (int i = 0; i < rows.n_classes; i++)
        free((char *)rows.classes[i]);
    rows_free(&rows);
    free(dir);
    return err;
}

static void expect_bad(const char *row, const char *column) {
    char *err = load_row(row);
    CHECK_MSG(strstr(err, "requests.csv:2:") && strstr(err, column), "row %s: want %s, got '%s'",
              row, column, err);
    free(err);
}

TEST(report_rejects_negative_durations_and_non_finite_values) {
    /* the good row, and the same with what may be missing left empty */
    const char *good[] = {
        "req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,4.900,2.000,7.900,length,200,,2,0.010",
        "req-0,short,0.000,0.100,,,1.000,10,,,,0.900,,,connect,0,0.001",
        "req-0,short,0.000,,,,,10,,,,,,,cancelled,0,",
    };
    for (int i = 0; i < 3; i++) {
        char *err = load_row(good[i]);
        CHECK_MSG(err[0] == 0, "row %s: %s", good[i], err);
        free(err);
    }
    expect_bad("req-0,short,inf,0.100,5.000,7.000,8.000,10,2,,,,length,200,,2,0.010",
               "scheduled_ms");
    expect_bad("req-0,short,0.000,1e999,5.000,7.000,8.000,10,2,,,,length,200,,2,0.010", "sent_ms");
    expect_bad("req-0,short,0.000,0.100,nan,7.000,8.000,10,2,,,,length,200,,2,0.010",
               "first_token_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,-inf,8.000,10,2,,,,length,200,,2,0.010",
               "last_token_ms");
    expect_bad("req-0,short,-1.000,0.100,5.000,7.000,8.000,10,2,,,,length,200,,2,0.010",
               "scheduled_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,,,,length,200,,2,-0.010", "lag_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,,,,length,200,,2,inf", "lag_ms");
    /* durations that come out negative */
    expect_bad("req-0,short,0.000,6.000,5.000,7.000,8.000,10,2,,,,length,200,,2,0.010",
               "first_token_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,4.000,8.000,10,2,,,,length,200,,2,0.010",
               "last_token_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,7.000,6.000,10,2,,,,length,200,,2,0.010", "end_ms");
    expect_bad("req-0,short,9.000,0.100,5.000,7.000,8.000,10,2,,,,length,200,,2,0.010", "sent_ms");
    /* the durations written beside the times */
    expect_bad(
        "req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,-4.900,2.000,7.900,length,200,,2,0.010",
        "ttft_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,4.900,inf,7.900,length,200,,2,0.010",
               "tpot_ms");
    expect_bad("req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,4.900,2.000,nan,length,200,,2,0.010",
               "e2e_ms");
}
