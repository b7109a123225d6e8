/* loadgen_ctx: what the load generator's own files share (loadgen.c: the
 * loop, dispatch and rows; response.c: one request's answer as it arrives;
 * loadgen_curl.c: the libcurl glue; selfcheck.c: the client's account of
 * its own delay). Nothing outside these includes it: loadgen.h is the
 * module's interface. */
#ifndef SERVELAB_LOADGEN_CTX_H
#define SERVELAB_LOADGEN_CTX_H

#include "client/h1.h"
#include "client/loadgen.h"
#include "client/turns.h"
#include "client/rowwriter.h"
#include "client/sampler.h"
#include "protocol/sse.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lg lg;

typedef struct inflight {
    lg *g;
    size_t slot; /* position in the schedule */
    request_row row;
    CURL *easy;  /* libcurl's transfer, or */
    h1_xfer *hx; /* our own client's */
    struct curl_slist *hdrs;
    char *body;
    size_t body_len;
    curl_socket_t own_fd[2]; /* the last sockets curl opened for this transfer (one per
                                address family when it races both); a reused one is neither */
    int stale_conns;         /* reused curl connections found speaking out of turn */
    int unasked;             /* only such connections were offered: the row is malformed */
    sse_parser sse;
    int64_t *t_us;
    int32_t *tok;
    uint8_t *coal;    /* 1: the chunk's read also held a later one (NULL while none did) */
    int64_t last_raw; /* the arrival time of the last chunk's read, as the client gave it */
    int64_t read_raw; /* that of the read being parsed */
    int n_chunks, cap_chunks;
    int settled;          /* our client was told the first token came (h1_settle) */
    int64_t ready_us;     /* when it could have gone: due, with a slot free for it (-1: not
                             yet); what it waited from then on was the client's own doing */
    long last_completion; /* cumulative usage.completion_tokens seen so far */
    long long event_bytes, chunk_tokens; /* what the events carried, and the tokens counted */
    int saw_done, saw_finish, saw_usage, failed_parse, error_event;
    long usage_prompt, usage_completion;
    char finish[24];
    char *words; /* the server's words when it failed (errorlog.h); NULL: none kept */
    size_t words_len;
    int status_known;
    int encoded;     /* a 200 in a Content-Encoding nobody asked for: malformed */
    char coding[16]; /* libcurl's transfers: the Content-Encoding seen in the head */
    int os_errno;    /* the system's error behind a failed transfer; 0: none known */
    /* a server that answers a streaming request with one whole JSON body */
    int whole_json;
    char *json;
    size_t json_len, json_cap;
    int64_t json_first_us;
    int final_error;                /* its error class, decided when the transfer ended */
    answer_buf *ans;                /* the answer's text, when it is to be checked; else NULL */
    struct inflight *next;          /* waiting queue, then the ended list */
    struct inflight *aprev, *anext; /* active list (sent, not finished) */
} inflight;

struct lg {
    const loadgen_config *cfg;
    loadgen_result *res;
    struct event_base *base;
    CURLM *multi;
    h1_client *h1; /* NULL: requests go through libcurl */
    struct event *due_timer, *curl_timer, *stop_poll;
    int64_t t0;
    size_t next_due; /* next schedule slot to dispatch */
    size_t finished; /* rows written */
    int in_flight;
    inflight *queue_head, *queue_tail; /* taken in, not yet sent (the cap, or a slice) */
    inflight *first_unready;           /* the first of them still waiting for a slot */
    int n_ready;                       /* queued ones with a slot: a prefix of the queue */
    inflight *active;                  /* sent and not finished */
    row_writer rw;
    int writing;
    int64_t last_due;
    int stopping;
    sampler smp;
    struct event *sample_timer;
    int *port_fd;         /* curl's sockets by local port, + 1 (loadgen_curl.c); NULL: none yet */
    int64_t curl_read_us; /* the time of the socket event curl is acting on; -1: none */
    int64_t ordinary_us;  /* when ordinary work last ran (loadgen.c) */
    inflight *ended_head, *ended_tail; /* transfers over, rows not yet written */
    struct event *finish_timer;
    int demoted;     /* new transfers start at the ordinary priority for now */
    turn_heap later; /* conversations' next turns, due when the turn before ends */
};

/* How a transfer ended, whichever client carried it. */
typedef enum { XFER_OK, XFER_CONNECT, XFER_TIMEOUT, XFER_BROKEN, XFER_CLIENT } xfer_end;

/* ---- loadgen.c ---- */

/* Microseconds since the run's t=0. */
int64_t lg_now(const lg *g);
/* A transfer is over: its row is decided, and written (the request freed)
 * in the next slice of ends. */
void lg_transfer_ended(lg *g, inflight *f, xfer_end end);
/* Ends the loop once every request has its row. */
void lg_check_done(lg *g);

/* ---- selfcheck.c ---- */

/* The ended request's coalescing counts (into its row) and its delays
 * (into the run's client_check). */
void selfcheck_request(lg *g, inflight *f);

/* ---- response.c ---- */

/* Before the request is sent: its event-stream parser. */
void response_begin(inflight *f);
/* The response head: its status, content type and content encoding (either
 * may be NULL). */
void response_head(inflight *f, int status, const char *content_type, const char *content_encoding);
/* Body bytes as they arrive at time t (µs since t=0); returns n, or 0 when
 * the row is decided and the transfer should stop. */
size_t response_body(inflight *f, const char *p, size_t n, int64_t t);
/* The transfer ended: the last event is read and the error class decided. */
int response_end(inflight *f, xfer_end end);
/* The tokens of chunk i. */
int32_t response_chunk_tokens(const inflight *f, int i);

/* ---- loadgen_curl.c ---- */

/* The multi handle, wired to the loop. */
void curl_glue_init(lg *g);
/* Starts f's POST (f->body, f->body_len) through curl. */
void curl_glue_start(lg *g, inflight *f);
/* The multi handle and what the glue kept. */
void curl_glue_free(lg *g);
/* Lets curl act on what became due (after requests were added). */
void curl_glue_kick(lg *g);

#endif
