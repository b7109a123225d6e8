/* selfcheck: what the client knows of its own delay, request by request
 * (docs/accuracy.md, "What the self-check promises"): how late it sent
 * each request after it could have gone, how long it took to hand over
 * the last byte beyond the handshake, and which chunks reached it in one
 * read with a later one. The run's summary.json judges from these counts
 * (run/run_files.c); kept apart from the loop, which only calls it as each
 * request ends. */
#include "client/loadgen_ctx.h"

#include <stdint.h>

/* Keeps request `id` among the named if it is one of the worst. */
static void keep_worst(client_check *k, uint32_t id, float ms) {
    int at = k->n_named;
    if (at == CLIENT_DELAY_NAMED) {
        at = 0;
        for (int i = 1; i < k->n_named; i++)
            if (k->named_ms[i] < k->named_ms[at])
                at = i;
        if (k->named_ms[at] >= ms)
            return;
    } else {
        k->n_named++;
    }
    k->named[at] = id;
    k->named_ms[at] = ms;
}

void client_check_merge(client_check *a, const client_check *b) {
    a->first_tokens += b->first_tokens;
    a->first_coalesced += b->first_coalesced;
    a->chunks += b->chunks;
    a->coalesced += b->coalesced;
    a->delayed += b->delayed;
    a->late_sent += b->late_sent;
    a->slow_written += b->slow_written;
    if (b->max_delay_ms > a->max_delay_ms)
        a->max_delay_ms = b->max_delay_ms;
    for (int i = 0; i < b->n_named; i++)
        keep_worst(a, b->named[i], b->named_ms[i]);
}

void client_check_sort(client_check *k) {
    for (int i = 1; i < k->n_named; i++)
        for (int j = i; j > 0 && k->named_ms[j] > k->named_ms[j - 1]; j--) {
            uint32_t id = k->named[j];
            float ms = k->named_ms[j];
            k->named[j] = k->named[j - 1];
            k->named_ms[j] = k->named_ms[j - 1];
            k->named[j - 1] = id;
            k->named_ms[j - 1] = ms;
        }
}

/* The client's own delay in one request (µs, -1 unknown), of two kinds:
 * its lateness in sending (the timer's, or a burst's slices: TTFT from the
 * schedule holds it, TTFT from send does not), and its time between
 * sending and handing over the last byte that the handshake does not
 * explain (TTFT from send holds that too). */
static int64_t late_send_us(const inflight *f) {
    const request_row *r = &f->row;
    int64_t d = r->dispatched_us >= 0 ? r->dispatched_us - r->scheduled_us : -1;
    /* When it could have gone: from its due time when a slot was free as
     * soon as it was taken in (the timer's lateness and the send's add up),
     * else from when a slot freed for it. */
    int64_t could = f->ready_us;
    if (could < 0 || (r->dispatched_us >= 0 && could <= r->dispatched_us))
        could = r->scheduled_us;
    if (r->sent_us >= 0 && r->sent_us - could > d)
        d = r->sent_us - could;
    return d;
}

static int64_t slow_write_us(const request_row *r) {
    if (r->written_us < 0 || r->sent_us < 0 || r->connect_us < 0)
        return -1;
    return r->written_us - r->sent_us - r->connect_us;
}

/* The row's coalescing counts, and what the run's self-check keeps. */
void selfcheck_request(lg *g, inflight *f) {
    request_row *r = &f->row;
    client_check *k = &g->res->check;
    r->coalesced = 0;
    for (int i = 0; f->coal && i < f->n_chunks; i++)
        r->coalesced += f->coal[i];
    r->first_coalesced = f->coal && f->n_chunks > 0 && f->coal[0];
    k->chunks += (size_t)f->n_chunks;
    k->coalesced += (size_t)r->coalesced;
    if (r->first_us >= 0) {
        k->first_tokens++;
        k->first_coalesced += (size_t)r->first_coalesced;
    }
    int64_t late = late_send_us(f), slow = slow_write_us(r), d = late > slow ? late : slow;
    k->late_sent += late > 1000;
    k->slow_written += slow > 1000;
    if (d > 1000) {
        k->delayed++;
        keep_worst(k, r->index, (float)(d / 1000.0));
    }
    if (d >= 0 && d / 1000.0 > k->max_delay_ms)
        k->max_delay_ms = d / 1000.0;
}
