/* api: the simulated server's assembly: its endpoints and its start and stop.
 *
 * One engine behind one or more I/O sides. The engine, its step timer
 * (engine_clock.c) and the /metrics counters stay on the caller's loop.
 * With `sim --threads N` (N > 1) each I/O thread has its own event loop and
 * listener on the same port (SO_REUSEPORT) and owns its connections; the
 * engine reaches them through their outboxes (outbox.c), under one engine
 * lock, so the model is the same code and stays exact.
 *
 * The small endpoints (/health, /version, /v1/models, /metrics, /tokenize)
 * are answered here; a completion goes to completion.c, which reads its body
 * with request.c and writes its answer with output.c; trace.c keeps the
 * ground-truth trace. server.h holds the state they share. */
#include "sim/api.h"
#include "common/clock.h"
#include "common/util.h"
#include "sim/completion.h"
#include "sim/engine_clock.h"
#include "sim/outbox.h"
#include "sim/output.h"
#include "sim/prompt_ids.h"
#include "sim/server.h"
#include "sim/trace.h"

#include <event2/buffer.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the endpoints ---- */

static void reply_models(sim_server *s, http_conn *c) {
    json_t *model =
        json_pack("{s:s,s:s,s:i,s:s,s:s,s:n,s:i}", "id", s->cfg.model, "object", "model", "created",
                  (json_int_t)time(NULL), "owned_by", "servelab-sim", "root", s->cfg.model,
                  "parent", "max_model_len", engine_get_params(s->eng)->max_model_len);
    reply_json(c, json_pack("{s:s,s:[o]}", "object", "list", "data", model));
}

static void reply_metrics(sim_server *s, http_conn *c) {
    struct evbuffer *b = evbuffer_new();
    eng_lock(s);
    engine_stats st = engine_get_stats(s->eng);
    sim_metrics_render(&s->metrics, &st, s->cfg.model, b);
    eng_unlock(s);
    size_t n = evbuffer_get_length(b);
    http_reply(c, 200, "text/plain; version=0.0.4; charset=utf-8",
               (const char *)evbuffer_pullup(b, -1), n, NULL);
    evbuffer_free(b);
}

/* /tokenize: a prompt's or a chat's token ids, the ones a completion is
 * charged and cached by (prompt_ids.c). */
static void handle_tokenize(sim_server *s, http_conn *c, const http_request *req) {
    json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
    const char *why = NULL;
    prompt_ids ids = {0};
    json_t *prompt = body ? json_object_get(body, "prompt") : NULL;
    json_t *messages = body ? json_object_get(body, "messages") : NULL;
    if (!body || !json_is_object(body))
        why = "invalid JSON body";
    else if (json_is_string(prompt))
        prompt_ids_of_completion(prompt, &ids, &why);
    else if (messages)
        prompt_ids_of_chat(messages, &ids, &why);
    else
        why = "field required: prompt (a string) or messages";
    json_decref(body);
    if (why) {
        prompt_ids_free(&ids);
        reply_error(c, 400, why);
        return;
    }
    json_t *tokens = json_array();
    for (int i = 0; i < ids.n; i++)
        json_array_append_new(tokens, json_integer(ids.id[i]));
    reply_json(c, json_pack("{s:i,s:i,s:o}", "count", ids.n, "max_model_len",
                            engine_get_params(s->eng)->max_model_len, "tokens", tokens));
    prompt_ids_free(&ids);
}

/* The router: the path without its query, then the method; a known path
 * with the wrong method is a 405, anything else a 404. */
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
        reply_models(s, c);
    } else if (PATH_IS("/metrics") && s->cfg.no_metrics) {
        const char *b = "{\"detail\":\"Not Found\"}";
        http_reply(c, 404, "application/json", b, strlen(b), NULL);
    } else if (PATH_IS("/metrics") && get) {
        reply_metrics(s, c);
    } else if (PATH_IS("/v1/completions") && post) {
        completion_handle(f, c, req, 0);
    } else if (PATH_IS("/v1/chat/completions") && post) {
        completion_handle(f, c, req, 1);
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

/* ---- start and stop ---- */

static void on_flush(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    sim_server_flush(arg);
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
    s->metrics.spec_tokens = cfg->engine.spec_tokens;
    s->metrics.started_s = (int64_t)time(NULL);
    s->metrics.cache = (sim_cache_config){
        .block_size = cfg->engine.block_size,
        .num_gpu_blocks = cfg->engine.kv_blocks,
        .enable_prefix_caching = cfg->engine.enable_prefix_caching,
        .gpu_memory_utilization = cfg->gpu_memory_utilization,
    };
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

const char *sim_server_trace_error(const sim_server *s) {
    return trace_error(s);
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
