/* record: error class names and the growable row arrays (see record.h). */
#include "model/record.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *err_names[ERR_COUNT] = {"",           "connect",   "timeout",   "http",
                                           "disconnect", "malformed", "cancelled", "client"};

const char *err_class_name(int e) {
    return e >= 0 && e < ERR_COUNT ? err_names[e] : "";
}

int err_class_parse(const char *s) {
    for (int i = 0; i < ERR_COUNT; i++)
        if (!strcmp(s, err_names[i]))
            return i;
    return -1;
}

req_rec req_rec_unknown(void) {
    req_rec r = {.scheduled_ms = NAN,
                 .sent_ms = NAN,
                 .first_ms = NAN,
                 .last_ms = NAN,
                 .end_ms = NAN,
                 .lag_ms = NAN,
                 .prompt_tokens = -1,
                 .output_tokens = -1,
                 .error = ERR_NONE,
                 .written_ms = NAN,
                 .first_byte_ms = NAN,
                 .connect_ms = NAN,
                 .server_prompt_ms = NAN,
                 .server_decode_ms = NAN,
                 .server_decode_n = -1,
                 .first_answer_ms = NAN,
                 .reasoning_tokens = -1,
                 .answer_valid = -1,
                 .tool_calls = -1,
                 .first_tool_ms = NAN,
                 .server_draft_n = -1,
                 .server_draft_accepted = -1,
                 .server_prompt_n = -1,
                 .cached_tokens = -1,
                 .first_coalesced = -1};
    return r;
}

void rows_reserve(run_rows *rows, size_t n) {
    if (n > rows->cap) {
        rows->r = xrealloc(rows->r, n * sizeof *rows->r);
        rows->cap = n;
    }
}

void rows_add(run_rows *rows, const req_rec *r) {
    if (rows->n == rows->cap)
        rows->r = xrealloc(rows->r, (rows->cap = rows->cap ? rows->cap * 2 : 1024) * sizeof *r);
    rows->r[rows->n++] = *r;
}

void rows_add_itl(run_rows *rows, float gap_ms) {
    if (rows->n_itl == rows->cap_itl)
        rows->itl_ms =
            xrealloc(rows->itl_ms, (rows->cap_itl = rows->cap_itl ? rows->cap_itl * 2 : 4096) *
                                       sizeof *rows->itl_ms);
    rows->itl_ms[rows->n_itl++] = gap_ms;
}

/* icl_ms from now on: every gap so far was one token's, so itl_ms's. */
static void keep_icl(run_rows *rows) {
    if (rows->icl_ms)
        return;
    rows->cap_icl = rows->n_itl + 4096;
    rows->icl_ms = xmalloc(rows->cap_icl * sizeof *rows->icl_ms);
    if (rows->n_itl)
        memcpy(rows->icl_ms, rows->itl_ms, rows->n_itl * sizeof *rows->icl_ms);
    rows->n_icl = rows->n_itl;
}

static void add_icl(run_rows *rows, float gap_ms) {
    if (!rows->icl_ms) {
        rows->n_icl++;
        return;
    }
    if (rows->n_icl == rows->cap_icl)
        rows->icl_ms = xrealloc(rows->icl_ms, (rows->cap_icl *= 2) * sizeof *rows->icl_ms);
    rows->icl_ms[rows->n_icl++] = gap_ms;
}

void rows_add_chunk_gap(run_rows *rows, float per_token_ms, int k, float whole_ms) {
    if (k != 1)
        keep_icl(rows);
    add_icl(rows, whole_ms);
    for (int i = 0; i < k; i++)
        rows_add_itl(rows, per_token_ms);
}

void rows_add_gaps_of(run_rows *dst, const run_rows *src) {
    if (src->icl_ms)
        keep_icl(dst);
    if (dst->icl_ms) {
        const float *g = src->icl_ms ? src->icl_ms : src->itl_ms;
        for (size_t i = 0; i < src->n_icl; i++)
            add_icl(dst, g[i]);
    } else {
        dst->n_icl += src->n_icl;
    }
    for (size_t i = 0; i < src->n_itl; i++)
        rows_add_itl(dst, src->itl_ms[i]);
}

void rows_start_itl_request(run_rows *rows) {
    if (rows->n_itl_starts == rows->cap_itl_starts)
        rows->itl_starts = xrealloc(
            rows->itl_starts,
            (rows->cap_itl_starts = rows->cap_itl_starts ? rows->cap_itl_starts * 2 : 1024) *
                sizeof *rows->itl_starts);
    rows->itl_starts[rows->n_itl_starts++] = rows->n_itl;
}

void rows_free(run_rows *rows) {
    free(rows->r);
    free(rows->itl_ms);
    free(rows->icl_ms);
    free(rows->itl_starts);
    memset(rows, 0, sizeof *rows);
}
