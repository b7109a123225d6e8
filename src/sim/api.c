/* api: request handling for `servelab sim`.
 *
 * A completion request becomes a sim_request holding the engine's `seq`.
 * The engine's emit callback turns each token into an SSE event written at
 * once (or appends it to the whole answer when not streaming). When the
 * request ends, however it ends, one trace row is written with the times
 * as the server saw them: first_token_ms is read right after the first
 * token's bytes went to the socket.
 *
 * Threads (`sim --threads N`, N > 1): one engine behind N I/O threads. The
 * engine, its step timer and the /metrics counters stay on the main thread
 * under one lock (the model is the same code, so it stays exact); each I/O
 * thread has its own event loop and listener on the same port
 * (SO_REUSEPORT) and owns its connections. At a step's end the engine
 * thread only copies each token's sequence state into the owning thread's
 * outbox; that thread formats and writes the chunks (the write() calls, most
 * of the simulator's time, then run in parallel) and records when they left.
 * A connection that dies posts a GONE record after aborting its sequence,
 * under the engine lock, so it always comes after that sequence's last
 * token record and the request ends exactly once.
 *
 * The wire format follows vLLM's OpenAI server: `text_completion` chunks,
 * `chat.completion.chunk` with a role-only first delta, the finish reason on
 * the last token's chunk, an optional usage-only chunk with empty `choices`,
 * per-chunk usage with `continuous_usage_stats`, then `data: [DONE]`. */
#include "sim/api.h"
#include "common/clock.h"
#include "common/tokens.h"
#include "common/util.h"
#include "sim/completion.h"
#include "sim/engine_clock.h"
#include "sim/metrics.h"
#include "sim/outbox.h"
#include "sim/output.h"
#include "sim/request.h"
#include "sim/server.h"
#include "sim/trace.h"

#include <event2/buffer.h>
#include <event2/thread.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void request_free(sim_request *r) {
    if (r->stall_timer)
        event_free(r->stall_timer);
    if (r->text)
        evbuffer_free(r->text);
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

/* Client vanished mid-response: free the sequence and its KV blocks now. */
static void on_conn_gone(void *arg) {
    sim_request *r = arg;
    sim_server *s = r->srv;
    eng_lock(s);
    engine_abort(s->eng, &r->s, now_rel(s));
    if (r->s.state != SEQ_ABORTED) { /* never reached the engine (stall), or its last
                                        token has not been written yet */
        r->s.state = SEQ_ABORTED;
        r->s.finish = FINISH_ABORT;
    }
    if (s->threaded) { /* after every record the engine posted for it */
        outbox_post_gone(r->front, r);
        eng_unlock(s);
        return;
    }
    eng_unlock(s);
    request_end(r);
}

static void on_flush(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    sim_server_flush(arg);
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
    request_plan_output(ask, engine_get_params(s->eng)->max_model_len, s->cfg.eos_min_frac_pct, h,
                        &r->s);
    r->s.user = r;

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

static void handle_completion(sim_front *f, http_conn *c, const http_request *req, int chat) {
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

static void handle_tokenize(sim_server *s, http_conn *c, const http_request *req) {
    json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
    const char *why = NULL;
    json_t *tokens = json_array();
    int count = 0;
    json_t *prompt = body ? json_object_get(body, "prompt") : NULL;
    json_t *messages = body ? json_object_get(body, "messages") : NULL;
    if (!body || !json_is_object(body)) {
        why = "invalid JSON body";
    } else if (json_is_string(prompt)) {
        size_t len = json_string_length(prompt);
        size_t cap = len + 1;
        int32_t *ids = xmalloc(cap * sizeof *ids);
        count = (int)tokenize_text(json_string_value(prompt), len, ids, cap);
        for (int i = 0; i < count; i++)
            json_array_append_new(tokens, json_integer(ids[i]));
        free(ids);
    } else if (messages) {
        count = count_chat_tokens(messages, &why);
    } else {
        why = "field required: prompt (a string) or messages";
    }
    json_decref(body);
    if (why) {
        json_decref(tokens);
        reply_error(c, 400, why);
        return;
    }
    reply_json(c, json_pack("{s:i,s:i,s:o}", "count", count, "max_model_len",
                            engine_get_params(s->eng)->max_model_len, "tokens", tokens));
}

static void handle(http_conn *c, const http_request *req, void *ud) {
    sim_front *f = ud;
    sim_server *s = f->srv;
    const char *m = req->method, *p = req->path;
    int get = !strcmp(m, "GET"), post = !strcmp(m, "POST");
    const char *q = strchr(p, '?');
    size_t plen = q ? (size_t)(q - p) : strlen(p);
#define PATH_IS(x) (plen == strlen(x) && !strncmp(p, x, plen))
    if (PATH_IS("/health") && get) {
        http_reply(c, 200, "application/json", "", 0, NULL);
    } else if (PATH_IS("/version") && get) {
        const char *v = "{\"version\":\"" SERVELAB_VERSION "-servelab-sim\"}";
        http_reply(c, 200, "application/json", v, strlen(v), NULL);
    } else if (PATH_IS("/v1/models") && get) {
        json_t *model = json_pack("{s:s,s:s,s:i,s:s,s:s,s:n,s:i}", "id", s->cfg.model, "object",
                                  "model", "created", (json_int_t)time(NULL), "owned_by",
                                  "servelab-sim", "root", s->cfg.model, "parent", "max_model_len",
                                  engine_get_params(s->eng)->max_model_len);
        reply_json(c, json_pack("{s:s,s:[o]}", "object", "list", "data", model));
    } else if (PATH_IS("/metrics") && get) {
        struct evbuffer *b = evbuffer_new();
        eng_lock(s);
        engine_stats st = engine_get_stats(s->eng);
        sim_metrics_render(&s->metrics, &st, s->cfg.model, b);
        eng_unlock(s);
        size_t n = evbuffer_get_length(b);
        http_reply(c, 200, "text/plain; version=0.0.4; charset=utf-8",
                   (const char *)evbuffer_pullup(b, -1), n, NULL);
        evbuffer_free(b);
    } else if (PATH_IS("/v1/completions") && post) {
        handle_completion(f, c, req, 0);
    } else if (PATH_IS("/v1/chat/completions") && post) {
        handle_completion(f, c, req, 1);
    } else if (PATH_IS("/tokenize") && post) {
        handle_tokenize(s, c, req);
    } else if (PATH_IS("/health") || PATH_IS("/version") || PATH_IS("/v1/models") ||
               PATH_IS("/metrics") || PATH_IS("/v1/completions") ||
               PATH_IS("/v1/chat/completions") || PATH_IS("/tokenize")) {
        const char *b = "{\"detail\":\"Method Not Allowed\"}";
        http_reply(c, 405, "application/json", b, strlen(b), NULL);
    } else {
        const char *b = "{\"detail\":\"Not Found\"}";
        http_reply(c, 404, "application/json", b, strlen(b), NULL);
    }
#undef PATH_IS
}

static void *front_main(void *arg) {
    sim_front *f = arg;
    event_base_loop(f->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

/* The I/O sides: one on the engine's own loop, or (threaded) one loop and
 * listener per thread on the same port, connections split by the kernel. */
static int start_fronts(sim_server *s, char *err, int errlen) {
    const sim_config *cfg = &s->cfg;
    s->n_fronts = cfg->threads > 1 ? cfg->threads : 1;
    s->threaded = s->n_fronts > 1;
    s->fronts = xcalloc((size_t)s->n_fronts, sizeof *s->fronts);
    httpd_limits lim = cfg->limits;
    if (s->threaded) {
        lim.reuse_port = 1;
        lim.max_connections = (lim.max_connections + s->n_fronts - 1) / s->n_fronts;
    }
    int port = cfg->port;
    for (int i = 0; i < s->n_fronts; i++) {
        sim_front *f = &s->fronts[i];
        f->srv = s;
        if (s->threaded) {
            f->base = event_base_precise();
            outbox_init(f);
        } else {
            f->base = s->base;
        }
        f->http = httpd_start(f->base, cfg->host, port, &lim, handle, f, err, errlen);
        if (!f->http)
            return -1;
        port = httpd_port(f->http); /* the others share the first one's port */
    }
    return 0;
}

sim_server *sim_server_start(struct event_base *base, const sim_config *cfg, char *err,
                             int errlen) {
    sim_server *s = xcalloc(1, sizeof *s);
    s->base = base;
    s->cfg = *cfg;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->out_mu, NULL);
    s->eng = engine_new(&cfg->engine, output_on_emit, s, err, errlen);
    if (!s->eng) {
        free(s);
        return NULL;
    }
    if (trace_open(s, err, errlen)) {
        sim_server_free(s);
        return NULL;
    }
    json_t *m = json_string(cfg->model);
    s->model_json = json_dumps(m, JSON_ENCODE_ANY);
    json_decref(m);
    sim_metrics_init(&s->metrics);
    if (start_fronts(s, err, errlen)) {
        sim_server_free(s);
        return NULL;
    }
    engine_clock_start(s);
    s->flush_timer = event_new(base, -1, EV_PERSIST, on_flush, s);
    struct timeval tv = {0, 100000};
    evtimer_add(s->flush_timer, &tv);
    s->t0_us = mono_us();
    for (int i = 0; i < s->n_fronts; i++) {
        sim_front *f = &s->fronts[i];
        if (s->threaded && pthread_create(&f->thread, NULL, front_main, f) == 0)
            f->has_thread = 1;
    }
    return s;
}

int sim_server_port(const sim_server *s) {
    return httpd_port(s->fronts[0].http);
}

void sim_server_flush(sim_server *s) {
    trace_flush(s);
}

void sim_server_free(sim_server *s) {
    if (!s)
        return;
    for (int i = 0; i < s->n_fronts; i++) {
        sim_front *f = &s->fronts[i];
        if (f->has_thread) {
            event_base_loopbreak(f->base);
            pthread_join(f->thread, NULL);
        }
    }
    for (int i = 0; i < s->n_fronts; i++) {
        sim_front *f = &s->fronts[i];
        httpd_free(f->http);
        if (s->threaded) {
            outbox_free(f);
            if (f->base)
                event_base_free(f->base);
        }
    }
    free(s->fronts);
    trace_close(s);
    engine_clock_free(s);
    if (s->flush_timer)
        event_free(s->flush_timer);
    engine_free(s->eng);
    free(s->model_json);
    free(s);
}
