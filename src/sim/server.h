/* server: the state the simulator's own files share, internal to src/sim/.
 *
 * api.c builds a sim_server (an engine, its I/O sides, the trace) and the
 * other parts work on it: request.c has no state and does not need this,
 * completion.c makes and ends sim_requests, output.c writes their answers,
 * outbox.c hands tokens between threads, engine_clock.c runs the step timers
 * and trace.c writes the trace files. Nothing outside src/sim/ includes it;
 * the rest of the program sees only sim/api.h.
 *
 * The two locks matter only with `--threads N` (N > 1): `mu` guards the
 * engine, the /metrics counters and the request counter, `out_mu` the two
 * trace files. With one thread every call below runs on one loop and the
 * lock helpers do nothing. */
#ifndef SERVELAB_SIM_SERVER_H
#define SERVELAB_SIM_SERVER_H

#include "common/clock.h"
#include "sim/structured.h"
#include "sim/api.h"
#include "sim/metrics.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sim_request sim_request;
typedef struct emit_rec emit_rec; /* an outbox entry (outbox.c) */

/* An I/O side: a loop, its listener and connections, and (threaded) the
 * outbox the engine fills. */
typedef struct sim_front {
    sim_server *srv;
    struct event_base *base;
    httpd *http;
    pthread_t thread;
    int has_thread;
    struct event *wake;
    pthread_mutex_t mu; /* guards recs */
    emit_rec *recs;
    size_t n_recs, cap_recs;
} sim_front;

struct sim_server {
    struct event_base *base; /* the engine's loop */
    sim_config cfg;
    engine *eng;
    sim_front *fronts;
    int n_fronts;
    int threaded;
    pthread_mutex_t mu;     /* threaded: the engine, metrics, counter */
    pthread_mutex_t out_mu; /* threaded: the two trace files */
    size_t pending;         /* threaded: records posted and not yet acted on (atomic) */
    int held;               /* threaded: the next step waits for the outboxes */
    struct event *step_timer, *flush_timer, *hold_timer;
    int64_t step_end_us; /* when the running step is due to end (engine_clock.c) */
    int64_t step_len_us; /* and how long it was planned to last */
    int64_t t0_us;
    sim_metrics metrics;
    FILE *trace;
    FILE *token_trace;
    char trace_error[512]; /* the first failed write of a trace file ("" when none) */
    char *model_json;      /* model id as a JSON string literal, quotes included */
    uint64_t counter;
};

/* One completion request, from its parsed body to its trace row. */
struct sim_request {
    sim_server *srv;
    sim_front *front; /* the thread that owns conn */
    http_conn *conn;
    int dropped;   /* threaded: the connection died; only GONE ends it */
    int abandoned; /* --keep-abandoned: the connection died (conn is NULL), the engine goes on */
    seq s;
    uint64_t *block_hashes; /* the prompt's full blocks, for the prefix cache (s points here) */
    int chat, stream, include_usage, continuous_usage;
    char id[40];
    char request_id[128];
    long created;
    fault_kind fault;
    int fault_at;
    int status;
    struct evbuffer *text; /* the whole answer, when not streaming */
    struct event *stall_timer;
    int64_t first_write_us; /* server-relative, -1 until the first token left */
    int64_t last_write_us;  /* the last token's bytes, -1 until then */
    uint64_t token_seed;
    structured_plan plan; /* a tool call or JSON answer; plan.text NULL: ordinary text */
};

static inline void eng_lock(sim_server *s) {
    if (s->threaded)
        pthread_mutex_lock(&s->mu);
}

static inline void eng_unlock(sim_server *s) {
    if (s->threaded)
        pthread_mutex_unlock(&s->mu);
}

static inline void out_lock(sim_server *s) {
    if (s->threaded)
        pthread_mutex_lock(&s->out_mu);
}

static inline void out_unlock(sim_server *s) {
    if (s->threaded)
        pthread_mutex_unlock(&s->out_mu);
}

/* Microseconds since the server started: every time the engine and the
 * trace see. */
static inline int64_t now_rel(const sim_server *s) {
    return mono_us() - s->t0_us;
}

#endif
