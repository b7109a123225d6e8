/* api: the simulator's OpenAI-compatible endpoints on top of httpd, wired to
 * the engine. Owns the engine's real-time step timer, the ground-truth trace
 * and the fault injection. */
#ifndef SERVELAB_SIM_API_H
#define SERVELAB_SIM_API_H

#include "sim/engine.h"
#include "sim/faults.h"
#include "sim/httpd.h"

#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sim_config {
    const char *host;
    int port;
    const char *model;
    const char *profile_name;
    engine_params engine;
    double gpu_memory_utilization; /* what kv_blocks was computed at; 0: given as a count */
    int eos_min_frac_pct;
    /* chat answers that think first: their first reasoning_tokens output
     * tokens stream in delta.<reasoning_field> ("reasoning" or
     * "reasoning_content"), and with reasoning_usage the final usage says
     * completion_tokens_details.reasoning_tokens */
    int reasoning_tokens;
    const char *reasoning_field;
    int reasoning_usage;
    int invalid_json_pct; /* tool calls and JSON answers made wrong on purpose, % */
    uint64_t seed;
    const char *trace_path;       /* NULL: no trace */
    const char *token_trace_path; /* per-token write times; NULL: none */
    fault_spec faults;
    int stall_ms;
    /* a request whose client went away goes on to its last token (its
     * output dropped), as some servers do, instead of being aborted */
    int keep_abandoned;
    int no_metrics; /* /metrics is a 404, as on a server with no Prometheus page */
    httpd_limits limits;
    int threads; /* I/O threads behind the one engine; <= 1: all on the caller's loop.
                    More than 1 needs evthread_use_pthreads() before any loop exists. */
} sim_config;

typedef struct sim_server sim_server;

/* Binds and prepares everything; NULL with a message in err on failure. */
sim_server *sim_server_start(struct event_base *base, const sim_config *cfg, char *err, int errlen);
int sim_server_port(const sim_server *s);
/* Flush the trace (also done periodically). */
void sim_server_flush(sim_server *s);
/* The first failed write of a trace file (said on stderr when it
 * happened), or NULL when every row reached its file. */
const char *sim_server_trace_error(const sim_server *s);
void sim_server_free(sim_server *s);

#endif
