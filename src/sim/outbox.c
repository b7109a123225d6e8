/* outbox: records from the engine thread to an I/O thread.
 *
 * At a step's end the engine thread only copies each token's sequence
 * state into the owning thread's outbox; that thread formats and writes
 * the chunks (the write() calls, most of the simulator's time, then run in
 * parallel). The first record into an empty outbox wakes the thread, which
 * takes the whole outbox at once and acts on it in order.
 *
 * The GONE handshake: a request must end exactly once, on the thread that
 * owns it, and never before the records already posted for it are taken
 * (they point at it). A connection that dies aborts its sequence and posts
 * GONE under the engine lock, so GONE comes after that sequence's last
 * token record, and the engine posts nothing for it afterwards. Until GONE
 * is taken, the `dropped` flag makes the thread skip the records before it.
 *
 * The server's `pending` counts records posted and not yet acted on; the
 * engine's clock reads it to hold the next step when the I/O side falls
 * behind. */
#include "sim/outbox.h"
#include "common/util.h"
#include "sim/completion.h"
#include "sim/output.h"

#include <stdlib.h>

/* What the engine said about one sequence: TOKEN (a token; `snap` is the
 * sequence right after it), DROP (the disconnect fault fired), GONE (the
 * connection died). */
typedef enum { REC_TOKEN, REC_DROP, REC_GONE } rec_kind;
struct emit_rec {
    sim_request *r;
    seq snap;
    rec_kind kind;
};

/* Engine side (or a dying connection, on its own thread), engine lock held. */
static void post(sim_front *f, sim_request *r, const seq *snap, rec_kind kind) {
    pthread_mutex_lock(&f->mu);
    if (f->n_recs == f->cap_recs) {
        f->cap_recs = f->cap_recs ? f->cap_recs * 2 : 256;
        f->recs = xrealloc(f->recs, f->cap_recs * sizeof *f->recs);
    }
    f->recs[f->n_recs++] = (emit_rec){r, *snap, kind};
    int first = f->n_recs == 1;
    __atomic_add_fetch(&f->srv->pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&f->mu);
    if (first)
        event_active(f->wake, EV_READ, 0);
}

void outbox_post_token(sim_front *f, sim_request *r, const seq *snap) {
    post(f, r, snap, REC_TOKEN);
}

void outbox_post_drop(sim_front *f, sim_request *r, const seq *snap) {
    post(f, r, snap, REC_DROP);
}

void outbox_post_gone(sim_front *f, sim_request *r) {
    r->dropped = 1;
    post(f, r, &r->s, REC_GONE);
}

static void act_on(const emit_rec *rec) {
    sim_request *r = rec->r;
    switch (rec->kind) {
    case REC_TOKEN:
        if (!r->dropped)
            deliver_token(r, &rec->snap);
        break;
    case REC_DROP:
        if (!r->dropped) {
            if (r->conn) /* NULL: abandoned (--keep-abandoned) */
                http_conn_drop(r->conn);
            request_end(r);
        }
        break;
    case REC_GONE: request_end(r); break;
    }
}

/* I/O side: takes the whole outbox and acts on it in order. */
static void on_wake(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    sim_front *f = arg;
    pthread_mutex_lock(&f->mu);
    emit_rec *recs = f->recs;
    size_t n = f->n_recs;
    f->recs = NULL;
    f->n_recs = f->cap_recs = 0;
    pthread_mutex_unlock(&f->mu);
    for (size_t i = 0; i < n; i++)
        act_on(&recs[i]);
    __atomic_sub_fetch(&f->srv->pending, n, __ATOMIC_RELAXED);
    free(recs);
}

void outbox_init(sim_front *f) {
    pthread_mutex_init(&f->mu, NULL);
    f->wake = event_new(f->base, -1, EV_READ, on_wake, f);
}

void outbox_free(sim_front *f) {
    if (f->wake)
        event_free(f->wake);
    free(f->recs);
    pthread_mutex_destroy(&f->mu);
}
