/* completion: a completion request's life, internal to src/sim/: api.c
 * routes /v1/completions and /v1/chat/completions here; output.c and
 * outbox.c call request_end once the answer is over, however it ends. */
#ifndef SERVELAB_SIM_COMPLETION_H
#define SERVELAB_SIM_COMPLETION_H

#include "sim/server.h"

/* A POST to /v1/completions (`chat` 0) or /v1/chat/completions (`chat` 1)
 * on the I/O side `f`: refused at once, or a request started. */
void completion_handle(sim_front *f, http_conn *c, const http_request *req, int chat);

/* The request is over: its metrics, its trace row, its memory. On the
 * thread that owns its connection. */
void request_end(sim_request *r);

#endif
