/* outbox: how the engine thread hands tokens to the I/O thread that owns a
 * request's connection (`sim --threads N`, N > 1), internal to src/sim/.
 * api.c sets each I/O side's outbox up and frees it; the engine's emit
 * callback posts tokens and disconnect faults; a dying connection posts the
 * GONE record. Posting takes the outbox's own lock and is always done with
 * the engine lock held, which is what orders a request's records. */
#ifndef SERVELAB_SIM_OUTBOX_H
#define SERVELAB_SIM_OUTBOX_H

#include "sim/server.h"

/* Its lock and its wake event on f's loop. */
void outbox_init(sim_front *f);
void outbox_free(sim_front *f);

/* A token: `snap` is the sequence right after it (the engine goes on
 * changing the sequence itself). */
void outbox_post_token(sim_front *f, sim_request *r, const seq *snap);
/* The disconnect fault fired at this point: the thread drops the
 * connection and ends the request. */
void outbox_post_drop(sim_front *f, sim_request *r, const seq *snap);
/* The connection died and the sequence is aborted: marks the request
 * dropped, so records still queued for it are skipped, and queues the
 * record that ends it, after all of them. */
void outbox_post_gone(sim_front *f, sim_request *r);

#endif
