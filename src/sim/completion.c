/* completion: from a POST body to the trace row.
 *
 * A request that request.c accepts becomes a sim_request holding the
 * engine's `seq`. Everything about it that could vary is drawn from a hash
 * of its id (the X-Request-Id header when usable, else a counter) and the
 * seed: the response id, the output text, the output length, the fault. So
 * the same requests get the same answers and faults in every run. Its
 * prompt's token ids become the hashes of its full blocks, which the
 * engine's prefix cache matches. It then
 * goes to the engine (after a pause, with the stall fault); the engine's
 * tokens reach output.c, and when the answer is over, or the connection
 * dies first, request_end writes one trace row and frees it. */
#include "sim/completion.h"
#include "common/util.h"
#include "sim/engine_clock.h"
#include "sim/outbox.h"
#include "sim/output.h"
#include "sim/request.h"
#include "sim/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void request_free(sim_request *r) {
    if (r->stall_timer)
        event_free(r->stall_timer);
    if (r->text)
        evbuffer_free(r->text);
    structured_plan_free(&r->plan);
    free(r->block_hashes);
    free(r);
}

void request_end(sim_request *r) {
    sim_server *s = r->srv;
    eng_lock(s);
    if (r->s.finished_us < 0)
        r->s.finished_us = now_rel(s);
    if (r->s.state == SEQ_FINISHED) {
        s->metrics.requests_success_total++;
        histogram_observe(&s->metrics.ttft, (r->s.first_token_us - r->s.arrived_us) / 1e6);
        histogram_observe(&s->metrics.queue_time, (r->s.admitted_us - r->s.arrived_us) / 1e6);
        histogram_observe(&s->metrics.e2e, (r->s.finished_us - r->s.arrived_us) / 1e6);
    } else if (r->s.state == SEQ_ABORTED) {
        s->metrics.requests_aborted_total++;
    }
    eng_unlock(s);
    trace_request(s, r);
    request_free(r);
}

/* Client vanished mid-response: free the sequence and its KV blocks now.
 * Threaded, the owning thread ends the request when it takes the GONE
 * record, after every record the engine posted for it. */
static void on_conn_gone(void *arg) {
    sim_request *r = arg;
    sim_server *s = r->srv;
    eng_lock(s);
    if (s->cfg.keep_abandoned && (r->s.state == SEQ_WAITING || r->s.state == SEQ_RUNNING)) {
        /* the engine goes on; output.c drops what it makes and ends the
         * request at its last token */
        r->abandoned = 1;
        r->conn = NULL;
        eng_unlock(s);
        return;
    }
    engine_abort(s->eng, &r->s, now_rel(s));
    if (r->s.state != SEQ_ABORTED) { /* never reached the engine (stall), or its last
                                        token has not been written yet */
        r->s.state = SEQ_ABORTED;
        r->s.finish = FINISH_ABORT;
    }
    if (s->threaded) {
        outbox_post_gone(r->front, r);
        eng_unlock(s);
        return;
    }
    eng_unlock(s);
    request_end(r);
}

/* Its names: the trace's request id (the client's X-Request-Id when it is
 * usable in a CSV row, else srv-N), the response id, and the seed of its
 * text. Returns the hash every later draw is seeded from. */
static uint64_t name_request(sim_request *r, const http_request *req) {
    sim_server *s = r->srv;
    uint64_t n = __atomic_add_fetch(&s->counter, 1, __ATOMIC_RELAXED);
    const char *rid = http_header_get(req, "X-Request-Id");
    if (rid && *rid && strlen(rid) < sizeof r->request_id && !strpbrk(rid, ",\"\r\n"))
        snprintf(r->request_id, sizeof r->request_id, "%s", rid);
    else
        snprintf(r->request_id, sizeof r->request_id, "srv-%llu", (unsigned long long)n);
    uint64_t h = hash_bytes(r->request_id, strlen(r->request_id), s->cfg.seed);
    snprintf(r->id, sizeof r->id, "%s%016llx", r->chat ? "chatcmpl-" : "cmpl-",
             (unsigned long long)(h ^ n));
    r->token_seed = mix64(h);
    return h;
}

static sim_request *request_new(sim_front *f, http_conn *c, const http_request *req,
                                const completion_ask *ask, int64_t arrived) {
    sim_server *s = f->srv;
    sim_request *r = xcalloc(1, sizeof *r);
    r->srv = s;
    r->front = f;
    r->conn = c;
    r->chat = ask->chat;
    r->status = 200;
    r->stream = ask->stream;
    r->include_usage = ask->include_usage;
    r->continuous_usage = ask->continuous_usage;
    r->created = (long)time(NULL);
    r->first_write_us = r->last_write_us = -1;
    uint64_t h = name_request(r, req);
    const engine_params *ep = engine_get_params(s->eng);
    request_plan_output(ask, ep->max_model_len, s->cfg.eos_min_frac_pct, h, &r->s);
    char why[256]; /* checked by request_parse */
    structured_plan_make(ask->tools, ask->tool_choice, ask->response_format, h,
                         s->cfg.invalid_json_pct, &r->plan, why, sizeof why);
    if (r->plan.text) { /* the answer is as long as its text, cut at max_tokens */
        int n = r->plan.n_pieces + (r->plan.tool_name[0] ? 1 : 0);
        r->s.target_tokens = ask->max_tokens > 0 && n > ask->max_tokens ? (int)ask->max_tokens : n;
        r->s.at_target = r->s.target_tokens < n ? FINISH_LENGTH : FINISH_STOP;
    }
    r->s.user = r;
    if (ep->enable_prefix_caching) {
        r->block_hashes =
            prompt_block_hashes(&ask->ids, ep->block_size, ask->cache_salt, &r->s.n_block_hashes);
        r->s.block_hashes = r->block_hashes;
    }

    /* Fault injection, drawn from the request id so runs repeat. */
    rng fr;
    rng_seed(&fr, mix64(h ^ 0xfa17ULL));
    r->fault = fault_pick(&s->cfg.faults, rng_uniform(&fr));
    r->fault_at = r->s.target_tokens / 2;
    r->s.arrived_us = arrived;
    r->s.admitted_us = r->s.first_token_us = r->s.finished_us = -1;
    return r;
}

static void on_stall_over(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    sim_request *r = arg;
    if (r->dropped)
        return;
    eng_lock(r->srv);
    engine_add(r->srv->eng, &r->s, now_rel(r->srv));
    kick_engine(r->srv);
    eng_unlock(r->srv);
}

/* The stall fault: headers sent, then nothing for stall_ms before the
 * request even reaches the engine. */
static void stall(sim_request *r) {
    const sim_config *cfg = &r->srv->cfg;
    r->stall_timer = evtimer_new(r->front->base, on_stall_over, r);
    struct timeval tv = {cfg->stall_ms / 1000, (cfg->stall_ms % 1000) * 1000};
    evtimer_add(r->stall_timer, &tv);
}

void completion_handle(sim_front *f, http_conn *c, const http_request *req, int chat) {
    sim_server *s = f->srv;
    int64_t arrived = now_rel(s);
    completion_ask ask;
    request_error err;
    if (request_parse(req->body, req->body_len, chat, s->cfg.model,
                      engine_get_params(s->eng)->max_model_len, &ask, &err)) {
        reply_error(c, err.status, err.message);
        return;
    }
    sim_request *r = request_new(f, c, req, &ask, arrived);
    request_ask_free(&ask);
    if (r->fault == FAULT_HTTP429 || r->fault == FAULT_HTTP500) {
        output_injected_error(r);
        request_end(r);
        return;
    }
    http_conn_on_gone(c, on_conn_gone, r);
    output_begin(r);
    if (r->fault == FAULT_STALL) {
        stall(r);
        return;
    }
    eng_lock(s);
    engine_add(s->eng, &r->s, arrived);
    kick_engine(s);
    eng_unlock(s);
}
