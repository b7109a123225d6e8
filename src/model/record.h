/* record: the data every layer shares: one compact record per request
 * (filled by the client as requests finish, or by the report from
 * requests.csv), the growable arrays of them that a run or a pooled set of
 * repetitions keeps, and the error classes a failed request ends in. It sits
 * at the bottom so that the client, the analysis and the report all speak of
 * the same rows without including one another. */
#ifndef SERVELAB_RECORD_H
#define SERVELAB_RECORD_H

#include <stddef.h>
#include <stdint.h>

enum {
    ERR_NONE,
    ERR_CONNECT,
    ERR_TIMEOUT,
    ERR_HTTP,
    ERR_DISCONNECT,
    ERR_MALFORMED,
    ERR_CANCELLED,
    ERR_CLIENT, /* this machine failed, not the server: out of descriptors, memory or ports */
    ERR_COUNT
};
const char *err_class_name(int e);
/* -1 when unknown; "" is ERR_NONE. */
int err_class_parse(const char *s);

/* The fields are ordered so that none needs padding (136 bytes): a
 * report of ten million requests holds ten million of these. */
typedef struct req_rec {
    double scheduled_ms, sent_ms, first_ms, last_ms, end_ms; /* NAN when missing */
    double lag_ms;                                           /* client lateness; NAN unknown */
    int32_t prompt_tokens, output_tokens;                    /* -1 unknown */
    int16_t cls;
    uint8_t error;
    int8_t first_coalesced; /* 1: the first token's chunk was read with a later one; -1 unknown */
    uint16_t part;          /* repetition within pooled rows (0 for a single run) */
    uint16_t turn;          /* multi-turn: the turn in its conversation, from 1; 0: none */
    /* Where the time to the first token went (NAN unknown). The two
     * instants are offsets from t=0 like the times above, so doubles (a
     * float loses the microsecond after a few minutes); the durations are
     * floats, exact enough for what they hold. */
    double written_ms;    /* the request's last byte handed to the kernel */
    double first_byte_ms; /* the answer's first byte arrived */
    float connect_ms;     /* the handshake: 0 on a pooled connection */
    /* the server's own account (llama.cpp's `timings`): NAN, -1 unknown */
    float server_prompt_ms, server_decode_ms;
    int32_t server_decode_n, server_prompt_n, cached_tokens;
    double first_answer_ms;   /* a reasoning model's first chunk of answer (NAN: none, unknown) */
    int32_t reasoning_tokens; /* -1 unknown */
    int8_t reasoning_server;  /* 1: the server's usage counted them; 0: the client did */
    int8_t answer_valid;      /* a tool call or JSON answer as asked: 1, 0; -1: not asked */
    int16_t tool_calls;       /* -1: not asked */
    double first_tool_ms;     /* the first tool call's chunk (NAN: none) */
    int32_t server_draft_n, server_draft_accepted; /* llama.cpp's timings: -1 not given */
} req_rec;

/* A record with every field unknown (times NAN, counts -1, no error, part
 * 0): what a record is before anything is known of its request, so that a
 * field left unfilled never reads as a measured 0. */
req_rec req_rec_unknown(void);

typedef struct run_rows {
    req_rec *r;
    size_t n, cap;
    float *itl_ms; /* every inter-chunk gap, per token (a k-token chunk's gap / k, k times) */
    size_t n_itl, cap_itl;
    /* Where each request's gaps begin in itl_ms, one entry per request that
     * has any, in the order they were added (filled by the report's loader;
     * none from a live run). They hold only until itl_ms is sorted, which
     * summarize() does: a bootstrap that resamples requests' gaps reads
     * them before. */
    size_t *itl_starts;
    size_t n_itl_starts, cap_itl_starts;
    /* Every gap between chunks, whole, once some chunk carried more than
     * one token (NULL until then: the gaps so far are itl_ms's); n_icl
     * counts the gaps either way. */
    float *icl_ms;
    size_t n_icl, cap_icl;
    double window_output_tokens; /* output tokens streamed before each part's last arrival */
    const char *classes[32];
    int n_classes;
} run_rows;

/* Room for n records at once (no doubling slack when n is known). */
void rows_reserve(run_rows *rows, size_t n);
void rows_add(run_rows *rows, const req_rec *r);
void rows_add_itl(run_rows *rows, float gap_ms);
/* A gap between two chunks of one stream, the later of k tokens: k
 * per-token gaps of per_token_ms into itl_ms, and the whole gap (whole_ms)
 * into icl_ms once some chunk has had other than one token. */
void rows_add_chunk_gap(run_rows *rows, float per_token_ms, int k, float whole_ms);
/* src's gaps after dst's (one client thread's rows into the run's). */
void rows_add_gaps_of(run_rows *dst, const run_rows *src);
/* The gaps added from now on are another request's (itl_starts). */
void rows_start_itl_request(run_rows *rows);
void rows_free(run_rows *rows);

#endif
