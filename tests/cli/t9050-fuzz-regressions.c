/* Regression tests for what the fuzzers in tests/fuzz/ found (scripts/fuzz.sh).
 * Each test feeds the exact minimised input that failed, through the same
 * API as its fuzz target, and checks the behaviour the fix gives; where the
 * minimised bytes are cryptic a readable variant follows. Run them under
 * `make asan` too: some of the original failures were reads out of bounds or
 * undefined conversions that only a sanitizer reports. */
#include "analysis/summary.h"
#include "report/load.h"
#include "support.h"
#include "test.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A requests.csv that loads: three rows, the columns servelab writes. */
static const char good_requests[] =
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"
    "req-0,long,0.000,0.217,116.107,376.203,376.330,1518,26,115.890,10.404,376.113,stop,200,,26,"
    "0.151\n"
    "req-1,short,163.315,163.387,175.193,422.493,422.553,32,24,11.806,10.752,259.166,stop,200,,24,"
    "0.026\n"
    "req-2,short,170.000,170.100,,,171.000,32,,,,1.000,,0,connect,0,0.010\n";

static void put_file(const char *dir, const char *name, const char *data, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(data, 1, n, f) == n);
    CHECK(fclose(f) == 0);
}

typedef struct loaded {
    int rc;
    char err[512];
    run_rows rows;
    run_files files;
} loaded;

/* load_run on a fresh directory holding `name` (and the good requests.csv
 * unless `name` is requests.csv). */
static void load_with(const char *name, const char *data, size_t n, loaded *out) {
    char *dir = temp_dir();
    if (strcmp(name, "requests.csv"))
        put_file(dir, "requests.csv", good_requests, sizeof good_requests - 1);
    put_file(dir, name, data, n);
    memset(out, 0, sizeof *out);
    out->rc = load_run(dir, 0, &out->rows, &out->files, out->err, sizeof out->err);
    free(dir);
}

static void loaded_free(loaded *l) {
    run_files_free(&l->files);
    for (int i = 0; i < l->rows.n_classes; i++)
        free((char *)l->rows.classes[i]);
    rows_free(&l->rows);
}

/* fuzz_csv: a server_metrics.csv line with more than 64 fields made the
 * reader take the value from f[n - 1], past the 64 fields split() keeps (a
 * stack read out of bounds). Such a line is now skipped. */
TEST(fuzz_metrics_line_with_more_than_64_fields_is_skipped) {
    static const char input[] =
        "\n,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,";
    loaded l;
    load_with("server_metrics.csv", input, sizeof input - 1, &l);
    CHECK_INT(l.rc, 0);
    CHECK_INT(l.files.metrics.n, 0);
    loaded_free(&l);

    /* A good line next to a 70-field one with a wanted name: only the good one counts. */
    char page[1024] = "t_ms,name,labels,value\n"
                      "1.5,vllm:num_requests_running,\"model_name=\"\"m\"\"\",3\n"
                      "2.5,vllm:num_requests_running";
    for (int i = 0; i < 68; i++)
        strcat(page, ",1");
    strcat(page, "\n");
    load_with("server_metrics.csv", page, strlen(page), &l);
    CHECK_INT(l.rc, 0);
    const series *s = series_find(&l.files.metrics, "vllm:num_requests_running");
    CHECK(s != NULL);
    CHECK_INT(s->n, 1);
    CHECK_NEAR(s->v[0], 3, 0);
    loaded_free(&l);
}

/* fuzz_csv: prompt_tokens 1e38 was converted to int32_t (undefined, and a
 * garbage count in the report). Token counts must now fit: empty, or a
 * whole number 0..INT32_MAX. */
TEST(fuzz_requests_token_counts_must_fit) {
    static const char input[] =
        "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"
        "output_tokens,rr,,error,,\n,,0,7,17,6,,1e38,,,vm,,5,r";
    loaded l;
    load_with("requests.csv", input, sizeof input - 1, &l);
    CHECK_INT(l.rc, -1);
    CHECK_MSG(strstr(l.err, "requests.csv:2: bad value in column prompt_tokens"), "err: %s", l.err);
    loaded_free(&l);

    const char *bad[] = {"inf", "-inf", "3e9", "-2", "1e300"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char csv[1024];
        snprintf(csv, sizeof csv, "%sreq-3,short,180,180.1,181,182,183,32,%s,,,,,200,,1,0\n",
                 good_requests, bad[i]);
        load_with("requests.csv", csv, strlen(csv), &l);
        CHECK_MSG(l.rc == -1, "output_tokens %s accepted", bad[i]);
        CHECK_MSG(strstr(l.err, "requests.csv:5: bad value in column output_tokens"), "err: %s",
                  l.err);
        loaded_free(&l);
    }
    load_with("requests.csv", good_requests, sizeof good_requests - 1, &l);
    CHECK_INT(l.rc, 0);
    CHECK_INT(l.rows.n, 3);
    CHECK_INT(l.rows.r[2].output_tokens, -1); /* empty: unknown */
    loaded_free(&l);
}

/* fuzz_csv: a chunks.csv row claiming 1e8 tokens became 1e8 inter-token
 * gaps in memory (and inf tokens an undefined int conversion); a gap past
 * FLT_MAX an undefined float conversion. A chunk now carries at most a
 * million tokens, its time must be finite, and a huge gap is +inf. */
TEST(fuzz_chunk_rows_are_bounded) {
    static const char input[] = "\nre,,3,1\nre,,4,1e8";
    loaded l;
    load_with("chunks.csv", input, sizeof input - 1, &l);
    CHECK_INT(l.rc, -1);
    CHECK_MSG(strstr(l.err, "chunks.csv:3: expected request_id,index,t_ms,tokens"), "err: %s",
              l.err);
    loaded_free(&l);

    const char *bad[] = {"req-0,1,2,inf\n", "req-0,1,2,1000001\n", "req-0,1,inf,1\n",
                         "req-0,1,nan,1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char csv[256];
        snprintf(csv, sizeof csv, "request_id,index,t_ms,tokens\nreq-0,0,1,1\n%s", bad[i]);
        load_with("chunks.csv", csv, strlen(csv), &l);
        CHECK_MSG(l.rc == -1, "accepted: %s", bad[i]);
        CHECK_MSG(strstr(l.err, "chunks.csv:3:"), "err: %s", l.err);
        loaded_free(&l);
    }

    static const char huge_gap[] =
        "request_id,index,t_ms,tokens\nreq-0,0,-1e300,1\nreq-0,1,1e300,1\n";
    load_with("chunks.csv", huge_gap, sizeof huge_gap - 1, &l);
    CHECK_INT(l.rc, 0);
    CHECK_INT(l.rows.n_itl, 1);
    CHECK(isinf(l.rows.itl_ms[0]) && l.rows.itl_ms[0] > 0);
    loaded_free(&l);
}

/* fuzz_prompts: jansson's message for a bad ShareGPT file quotes the bytes
 * it stopped at ("invalid escape near '"\<newline>'"), so the error that
 * workload.h promises to be one line had a newline in it. */
TEST(fuzz_prompt_file_errors_are_one_line) {
    static const char input[] = "\"\\\n"; /* the file: a quote, a backslash, a newline */
    char *dir = temp_dir();
    put_file(dir, "p.json", input, sizeof input - 1);
    char spec[600];
    snprintf(spec, sizeof spec, "sharegpt:%s/p.json", dir);
    workload w;
    char err[512] = "";
    CHECK_INT(workload_load(&w, spec, NULL, err, sizeof err), -1);
    CHECK(err[0] != '\0');
    CHECK_MSG(strpbrk(err, "\r\n\t") == NULL, "err: %s", err);
    workload_free(&w);

    /* The same for a JSONL line with a tab and a CR, and a random: spec. */
    static const char jsonl[] = "{\"prompt\":\"ok\"}\n{\"prompt\":\t\r\"x\" x}\n";
    put_file(dir, "p.jsonl", jsonl, sizeof jsonl - 1);
    snprintf(spec, sizeof spec, "%s/p.jsonl", dir);
    CHECK_INT(workload_load(&w, spec, NULL, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "p.jsonl:2:") && !strpbrk(err, "\r\n\t"), "err: %s", err);
    workload_free(&w);
    CHECK_INT(workload_load(&w, "random:1\n:2", NULL, err, sizeof err), -1);
    CHECK_MSG(!strpbrk(err, "\r\n\t"), "err: %s", err);
    workload_free(&w);
    free(dir);
}

/* fuzz_csv: chunk rows whose request_id is empty compared it with the
 * previous one's copy, which an empty id never made (memcmp of a null
 * pointer: undefined behaviour, on which the fuzz target's UBSan stopped).
 * Two such rows are one request's. */
TEST(fuzz_chunk_rows_with_empty_request_ids) {
    static const char input[] = "request_id,index,t_ms,tokens,coalesced\n,0,1,1,0\n,1,3,1,0\n";
    loaded l;
    load_with("chunks.csv", input, sizeof input - 1, &l);
    CHECK_INT(l.rc, 0);
    CHECK_INT(l.rows.n_itl, 1);
    CHECK(fabs(l.rows.itl_ms[0] - 2) < 1e-6);
    loaded_free(&l);
}
