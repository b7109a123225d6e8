/* output: what a request sends back, internal to src/sim/. For now only
 * deliver_token is shared: an I/O thread calls it for each token the engine
 * thread handed it through its outbox (outbox.c). */
#ifndef SERVELAB_SIM_OUTPUT_H
#define SERVELAB_SIM_OUTPUT_H

#include "sim/server.h"

/* A token leaves: written at once when streaming, else kept for the whole
 * answer; after the last one the answer is finished and the request ended.
 * `sq` is the sequence as it was right after this token. */
void deliver_token(sim_request *r, const seq *sq);

#endif
