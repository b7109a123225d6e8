/* output: everything a request sends back, internal to src/sim/.
 *
 * For api.c: the JSON replies of the small endpoints (reply_json,
 * reply_error) and output_on_emit, the engine's emit callback. For the
 * completion handler: the start of an answer (output_begin) and the
 * injected 429/500 faults. For outbox.c: deliver_token, which an I/O thread
 * calls for each token the engine thread handed it. The wire format follows
 * vLLM's OpenAI server (see output.c). */
#ifndef SERVELAB_SIM_OUTPUT_H
#define SERVELAB_SIM_OUTPUT_H

#include "sim/server.h"

#include <jansson.h>

/* A 200 with `obj` as its compact JSON body; takes the reference. */
void reply_json(http_conn *c, json_t *obj);
/* An OpenAI-style error body with the type that goes with `status`. */
void reply_error(http_conn *c, int status, const char *message);

/* The answer's head: streaming, the SSE response's status line and
 * headers; otherwise the buffer the whole answer collects in. */
void output_begin(sim_request *r);
/* The http429 and http500 faults: the error reply, with the request's
 * status set to match. */
void output_injected_error(sim_request *r);

/* A token leaves: written at once when streaming, else kept for the whole
 * answer; after the last one the answer is finished and the request ended.
 * `sq` is the sequence as it was right after this token. */
void deliver_token(sim_request *r, const seq *sq);

/* The engine's emit callback (engine_emit_fn; `ud` is the sim_server), on
 * the engine thread with its lock held: the disconnect fault, else the
 * token to deliver_token, directly or (threaded) through the owning
 * thread's outbox. */
void output_on_emit(seq *sq, int64_t now_us, void *ud);

#endif
