/* fuzz_rows: libFuzzer target for the path a prompt class takes to the
 * rows: the JSONL prompt loader (workload/workload.h), the row writer
 * (client/rowwriter.h) and the report's loader (report/load.h) with the
 * strict CSV reader (common/csv.h).
 *
 * Input: one mode byte, then a JSONL prompt file.
 *   mode & 15  the run has 1 + (mode & 15) requests
 *   mode >> 4  picks finish reasons (some with commas, quotes, line breaks)
 * A file that loads is assigned to the requests, and each request's rows
 * are written as loadgen writes them (row_writer_request, then
 * row_writer_chunks) with its class, times that run forward from its
 * schedule (or are unset where a failed request has none), token counts
 * and an error class drawn from a hash of the input, and now and then a
 * first answer, reasoning tokens, tool calls and a draft's acceptance. Then:
 * - both files are whole CSV lines: no NUL byte, a final LF, every row
 *   read by the strict reader without a quoting error and with the
 *   header's field count;
 * - the class and finish_reason fields read back byte for byte;
 * - load_run reads the rows back with the same classes, times, token
 *   counts, error classes, answers and drafts, and as many inter-token gaps as the chunks'
 *   tokens give;
 * - the writer reports no error and leaves no descriptor open.
 * A file that does not load must say why in one line. */
#include "client/rowwriter.h"
#include "common/csv.h"
#include "model/record.h"
#include "fuzz_common.h"
#include "report/load.h"
#include "workload/workload.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_REQUESTS 16
#define MAX_CHUNKS 12

static const char *const finishes[] = {"stop",      "length",      "",   NULL, "a,b",
                                       "say \"x\"", "line\nbreak", "\r", "\"", ","};

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct planned {
    request_row r;
    int64_t t_us[MAX_CHUNKS];
    int32_t tok[MAX_CHUNKS];
    int n_chunks;
} planned;

/* Where its TTFT went and what the server said, as far as it got: a
 * handshake (often none), the request written, the first byte, and now and
 * then the server's own timings. */
static void plan_phases(request_row *r, int stage, uint64_t *s) {
    r->connect_us = r->written_us = r->first_byte_us = -1;
    r->server_prompt_ms = r->server_decode_ms = -1;
    r->server_prompt_n = r->server_decode_n = r->server_cache_n = r->cached_tokens = -1;
    if (stage >= 1) {
        r->connect_us = next(s) % 3 ? 0 : (int64_t)(next(s) % 5000);
        r->written_us = r->sent_us + r->connect_us + (int64_t)(next(s) % 100);
    }
    if (stage >= 2)
        r->first_byte_us = r->written_us + (int64_t)(next(s) % 100000);
    if (stage >= 3 && next(s) % 2) {
        r->server_prompt_ms = (double)(next(s) % 100000) / 1000.0;
        r->server_decode_ms = (double)(next(s) % 100000) / 1000.0;
        r->server_prompt_n = (long)(next(s) % 5000);
        r->server_decode_n = (long)(next(s) % 5000);
        r->server_cache_n = r->cached_tokens = (long)(next(s) % 5000);
    }
}

/* A reasoning model's first answer chunk, a tool call, a draft's
 * acceptance, now and then: each at one of the chunks' times. */
static void plan_answer(planned *p, uint64_t *s) {
    request_row *r = &p->r;
    if (next(s) % 2) {
        r->first_answer_us = p->t_us[next(s) % (uint64_t)p->n_chunks];
        r->reasoning_counted = (long)(next(s) % 3000);
        r->reasoning_server = next(s) % 2 ? -1 : (long)(next(s) % 3000);
    }
    if (next(s) % 3 == 0) {
        r->tool_calls = (int)(next(s) % 4);
        r->first_tool_us = r->tool_calls ? p->t_us[next(s) % (uint64_t)p->n_chunks] : -1;
        r->answer_valid = (int)(next(s) % 2);
    }
    if (next(s) % 4 == 0) {
        r->server_draft_n = (long)(next(s) % 5000);
        r->server_draft_accepted = (long)(next(s) % (uint64_t)(r->server_draft_n + 1));
    }
}

/* One request as loadgen would finish it: times in order from the
 * schedule, unset from where a failed request stopped. */
static void plan(planned *p, uint32_t index, const workload *w, uint64_t *s, uint8_t mode) {
    memset(p, 0, sizeof *p);
    request_row *r = &p->r;
    int64_t t = (int64_t)(next(s) % 1000000000ULL);
    request_row_init(r, w, index, t);
    r->finish_reason = finishes[(mode >> 4) % (sizeof finishes / sizeof *finishes)];
    r->error = (int)(next(s) % ERR_COUNT);
    r->dispatched_us = t += (int64_t)(next(s) % 5000);
    int stage = r->error == ERR_NONE ? 4 : (int)(next(s) % 5); /* how far it got */
    r->sent_us = r->first_us = r->last_us = r->end_us = -1;
    if (stage >= 1)
        r->sent_us = t += (int64_t)(next(s) % 5000);
    if (stage >= 3) {
        p->n_chunks = 1 + (int)(next(s) % MAX_CHUNKS);
        for (int i = 0; i < p->n_chunks; i++) {
            p->t_us[i] = t += (int64_t)(next(s) % 200000);
            p->tok[i] = (int32_t)(next(s) % 4);
        }
        r->first_us = p->t_us[0];
        r->last_us = p->t_us[p->n_chunks - 1];
        plan_answer(p, s);
    }
    if (stage >= 1)
        r->end_us = t += (int64_t)(next(s) % 5000);
    r->prompt_tokens = workload_prompt_tokens(w, index);
    r->output_tokens = stage >= 3 ? (int)(next(s) % 5000) : -1;
    r->http_status = stage >= 2 ? 200 : 0;
    r->chunks = p->n_chunks;
    plan_phases(r, stage, s);
}

static int same_ms(double got, int64_t us) {
    if (us < 0)
        return isnan(got);
    return fabs(got - (double)us / 1000.0) < 1e-6;
}

static int field_is(const csv_row *row, int i, const char *want) {
    size_t n = want ? strlen(want) : 0;
    return i < row->n && row->len[i] == n && (n == 0 || !memcmp(row->f[i], want, n));
}

/* Whole lines, read by the strict reader; requests.csv's text fields as written. */
static void check_files(const char *dir, const planned *p, int n) {
    const char *names[] = {"requests.csv", "chunks.csv"};
    for (int k = 0; k < 2; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        FILE *f = fopen(path, "rb");
        FUZZ_CHECK(f != NULL);
        int c, last = 0;
        while ((c = fgetc(f)) != EOF) {
            FUZZ_CHECK(c != 0);
            last = c;
        }
        fclose(f);
        FUZZ_CHECK(last == '\n');
        csv_file cf;
        FUZZ_CHECK(csv_open(&cf, path) == 0);
        csv_row row;
        int rows = 0, width = 0;
        while (csv_next(&cf, &row)) {
            FUZZ_CHECK(row.error == NULL);
            if (rows == 0)
                width = row.n;
            FUZZ_CHECK(row.n == width);
            if (k == 0 && rows > 0) {
                FUZZ_CHECK(rows <= n);
                FUZZ_CHECK(field_is(&row, 1, p[rows - 1].r.cls));
                FUZZ_CHECK(field_is(&row, 12, p[rows - 1].r.finish_reason));
            }
            rows++;
        }
        csv_close(&cf);
        if (k == 0)
            FUZZ_CHECK(rows == n + 1);
    }
}

/* What the report's loader makes of the rows. */
static void check_loaded(const char *dir, const planned *p, int n) {
    run_rows rows;
    run_files files;
    memset(&rows, 0, sizeof rows);
    char err[1024] = "";
    int rc = load_run(dir, 0, &rows, &files, err, sizeof err);
    if (rc)
        fprintf(stderr, "fuzz_rows: %s\n", err);
    FUZZ_CHECK(rc == 0);
    FUZZ_CHECK(rows.n == (size_t)n);
    size_t gaps = 0;
    for (int i = 0; i < n; i++) {
        const request_row *r = &p[i].r;
        const req_rec *g = &rows.r[i];
        FUZZ_CHECK(!strcmp(rows.classes[g->cls], r->cls));
        FUZZ_CHECK(same_ms(g->scheduled_ms, r->scheduled_us) && same_ms(g->sent_ms, r->sent_us) &&
                   same_ms(g->first_ms, r->first_us) && same_ms(g->last_ms, r->last_us) &&
                   same_ms(g->end_ms, r->end_us));
        FUZZ_CHECK(same_ms(g->lag_ms, r->dispatched_us - r->scheduled_us));
        FUZZ_CHECK(g->prompt_tokens == r->prompt_tokens && g->output_tokens == r->output_tokens);
        FUZZ_CHECK(g->error == r->error);
        FUZZ_CHECK(same_ms(g->connect_ms, r->connect_us) && same_ms(g->written_ms, r->written_us) &&
                   same_ms(g->first_byte_ms, r->first_byte_us));
        FUZZ_CHECK(same_ms(g->first_answer_ms, r->first_answer_us) &&
                   same_ms(g->first_tool_ms, r->first_tool_us));
        FUZZ_CHECK(g->reasoning_tokens == request_row_reasoning(r));
        FUZZ_CHECK(g->tool_calls == r->tool_calls && g->answer_valid == r->answer_valid);
        FUZZ_CHECK(g->server_draft_n == r->server_draft_n &&
                   g->server_draft_accepted == r->server_draft_accepted);
        FUZZ_CHECK(g->first_coalesced == (p[i].n_chunks > 0 ? 0 : -1));
        FUZZ_CHECK(g->server_decode_n == r->server_decode_n &&
                   g->cached_tokens == r->cached_tokens);
        FUZZ_CHECK(r->server_prompt_ms < 0
                       ? isnan(g->server_prompt_ms)
                       : fabs(g->server_prompt_ms - r->server_prompt_ms) < 1e-2);
        for (int k = 1; k < p[i].n_chunks; k++)
            gaps += (size_t)p[i].tok[k];
    }
    FUZZ_CHECK(files.has_chunks && rows.n_itl == gaps);
    run_files_free(&files);
    for (int i = 0; i < rows.n_classes; i++)
        free((char *)rows.classes[i]);
    rows_free(&rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 20)
        return 0;
    uint8_t mode = data[0];
    const char *dir = fuzz_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/prompts.jsonl", dir);
    fuzz_write_file(path, data + 1, size - 1);
    workload w;
    char err[512] = "";
    if (workload_load(&w, path, NULL, err, sizeof err)) {
        FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
        workload_free(&w);
        return 0;
    }
    uint64_t s = fuzz_hash(0, data, size);
    int n = 1 + (mode & 15);
    workload_assign(&w, (size_t)n, s);
    static planned p[MAX_REQUESTS];
    int fds = fuzz_count_fds();
    row_writer rw;
    FUZZ_CHECK(row_writer_open(&rw, dir, err, sizeof err) == 0);
    for (int i = 0; i < n; i++) {
        plan(&p[i], (uint32_t)i, &w, &s, mode);
        row_writer_request(&rw, &p[i].r);
        row_writer_chunks(&rw, (uint32_t)i, p[i].t_us, p[i].tok, NULL, p[i].n_chunks);
    }
    FUZZ_CHECK(row_writer_close(&rw) == 0);
    FUZZ_CHECK(fuzz_count_fds() == fds);
    check_files(dir, p, n);
    check_loaded(dir, p, n);
    workload_free(&w);
    return 0;
}
