/* completion: a completion request's life, internal to src/sim/. For now
 * only its end is shared: the outboxes (outbox.c) end a request when its
 * answer is over, however it ends. */
#ifndef SERVELAB_SIM_COMPLETION_H
#define SERVELAB_SIM_COMPLETION_H

#include "sim/server.h"

/* The request is over: its metrics, its trace row, its memory. On the
 * thread that owns its connection. */
void request_end(sim_request *r);

#endif
