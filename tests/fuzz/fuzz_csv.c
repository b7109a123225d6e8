/* fuzz_csv: libFuzzer target for the report's run reader (report/load.h,
 * load_run), which parses the CSV files a run left on disk.
 *
 * Input: one mode byte, then a file's bytes, written into a fresh run
 * directory.
 *   mode % 4   0: the bytes are requests.csv
 *              1: chunks.csv, next to a small good requests.csv
 *              2: server_metrics.csv, next to the good requests.csv
 *              3: gpu.csv, next to the good requests.csv
 * What loads is then summarised as the report would (summarize, and the
 * summary as JSON), so values the reader lets through reach the statistics.
 * A load that fails must name the file and a line. */
#include "analysis/summary.h"
#include "fuzz_common.h"
#include "report/load.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const char good_requests[] =
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"
    "req-0,long,0.000,0.217,116.107,376.203,376.330,1518,26,115.890,10.404,376.113,stop,200,,26,"
    "0.151\n"
    "req-1,short,163.315,163.387,175.193,422.493,422.553,32,24,11.806,10.752,259.166,stop,200,,24,"
    "0.026\n"
    "req-2,short,170.000,170.100,,,171.000,32,,,,1.000,,0,connect,0,0.010\n";

static const char *const names[] = {"requests.csv", "chunks.csv", "server_metrics.csv", "gpu.csv"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    int mode = data[0] % 4;
    const char *dir = fuzz_dir();
    char path[512];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    if (mode != 0) {
        snprintf(path, sizeof path, "%s/requests.csv", dir);
        fuzz_write_file(path, (const uint8_t *)good_requests, sizeof good_requests - 1);
    }
    snprintf(path, sizeof path, "%s/%s", dir, names[mode]);
    fuzz_write_file(path, data + 1, size - 1);

    run_rows rows;
    run_files files;
    memset(&rows, 0, sizeof rows);
    char err[1024] = "";
    if (load_run(dir, 0, &rows, &files, err, sizeof err) == 0) {
        if (mode != 0)
            FUZZ_CHECK(rows.n == 3);
        summary_params sp = {.offered_rps = INFINITY,
                             .slo = {.ttft_ms = 500, .tpot_ms = 50, .e2e_ms = 0},
                             .cost_per_hour = 2.5,
                             .client_cpu_s = -1};
        run_summary s;
        summarize(&rows, &sp, &s);
        FUZZ_CHECK(s.requests == rows.n && s.completed + s.failed == s.requests);
        json_t *j = summary_json(&s);
        char *text = json_dumps(j, JSON_COMPACT);
        FUZZ_CHECK(text != NULL);
        free(text);
        json_decref(j);
    } else {
        FUZZ_CHECK(strstr(err, names[mode]) != NULL);
        FUZZ_CHECK(strchr(err, '\n') == NULL);
    }
    run_files_free(&files);
    for (int i = 0; i < rows.n_classes; i++) /* the caller owns the interned names */
        free((char *)rows.classes[i]);
    rows_free(&rows);
    return 0;
}
