/* vengine: the engine with a virtual clock (see vengine.h). The clock is
 * the caller's: a step is begun at the instant it is asked for (a submit
 * to an idle engine, or the end of the step before), and its end time is
 * kept until the caller ends it. A request is a vreq holding the engine's
 * seq and its block hashes; it is freed once its last token has been told,
 * or when it is cancelled. */
#include "sim/vengine.h"
#include "common/util.h"
#include "sim/prompt_ids.h"
#include "sim/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vreq {
    seq s;
    uint64_t *block_hashes;
    void *user;
    struct vreq *prev, *next; /* the requests alive, so that vengine_free frees them */
};

struct vengine {
    engine *eng;
    const char *model;
    int eos_min_frac_pct;
    uint64_t seed;
    int64_t step_end; /* -1: no step running */
    vreq *alive;
    vengine_token_fn token;
    void *ud;
};

static void vreq_free(vengine *v, vreq *r) {
    if (r->prev)
        r->prev->next = r->next;
    else
        v->alive = r->next;
    if (r->next)
        r->next->prev = r->prev;
    free(r->block_hashes);
    free(r);
}

static void on_emit(seq *s, int64_t now_us, void *ud) {
    vengine *v = ud;
    vreq *r = s->user;
    const char *finish = NULL;
    if (s->state == SEQ_FINISHED)
        finish = s->finish == FINISH_STOP ? "stop" : "length";
    v->token(r->user, now_us, s->generated, finish, v->ud);
    if (finish)
        vreq_free(v, r);
}

vengine *vengine_new(const engine_params *p, int eos_min_frac_pct, uint64_t seed, const char *model,
                     vengine_token_fn token, void *ud, char *err, int errlen) {
    vengine *v = xcalloc(1, sizeof *v);
    v->eng = engine_new(p, on_emit, v, err, errlen);
    if (!v->eng) {
        free(v);
        return NULL;
    }
    v->model = model;
    v->eos_min_frac_pct = eos_min_frac_pct;
    v->seed = seed;
    v->step_end = -1;
    v->token = token;
    v->ud = ud;
    return v;
}

void vengine_free(vengine *v) {
    if (!v)
        return;
    while (v->alive) {
        engine_abort(v->eng, &v->alive->s, 0); /* its block list is the engine's */
        vreq_free(v, v->alive);
    }
    engine_free(v->eng);
    free(v);
}

/* A step begins at t when there is work and none runs (kick_engine). */
static void begin_at(vengine *v, int64_t t) {
    if (v->step_end >= 0)
        return;
    int64_t d = engine_step_begin(v->eng, t);
    v->step_end = d < 0 ? -1 : t + d;
}

/* A body read into ask (or refused) becomes a request in the engine. */
static int submit(vengine *v, int refused, completion_ask *ask, const request_error *rerr,
                  const char *request_id, int64_t now_us, void *user, vreq **out, char *msg,
                  size_t msglen) {
    const engine_params *ep = engine_get_params(v->eng);
    *out = NULL;
    if (refused) {
        snprintf(msg, msglen, "%s", rerr->message);
        return rerr->status;
    }
    vreq *r = xcalloc(1, sizeof *r);
    r->user = user;
    r->next = v->alive;
    if (v->alive)
        v->alive->prev = r;
    v->alive = r;
    /* completion.c's draw: a hash of the request id and the seed */
    uint64_t h = hash_bytes(request_id, strlen(request_id), v->seed);
    request_plan_output(ask, ep->max_model_len, v->eos_min_frac_pct, h, &r->s);
    r->s.user = r;
    if (ep->enable_prefix_caching) {
        r->block_hashes =
            prompt_block_hashes(&ask->ids, ep->block_size, ask->cache_salt, &r->s.n_block_hashes);
        r->s.block_hashes = r->block_hashes;
    }
    request_ask_free(ask);
    engine_add(v->eng, &r->s, now_us);
    begin_at(v, now_us);
    *out = r;
    return 0;
}

int vengine_submit(vengine *v, const char *body, size_t len, int chat, const char *request_id,
                   int64_t now_us, void *user, vreq **out, char *msg, size_t msglen) {
    completion_ask ask;
    request_error rerr;
    int refused = request_parse(body, len, chat, v->model, engine_get_params(v->eng)->max_model_len,
                                &ask, &rerr);
    return submit(v, refused, &ask, &rerr, request_id, now_us, user, out, msg, msglen);
}

int vengine_submit_object(vengine *v, json_t *body, int chat, const char *request_id,
                          int64_t now_us, void *user, vreq **out, char *msg, size_t msglen) {
    completion_ask ask;
    request_error rerr;
    int refused = request_parse_object(body, chat, v->model,
                                       engine_get_params(v->eng)->max_model_len, &ask, &rerr);
    return submit(v, refused, &ask, &rerr, request_id, now_us, user, out, msg, msglen);
}

int vreq_prompt_tokens(const vreq *r) {
    return r->s.prompt_tokens;
}

int vreq_cached_tokens(const vreq *r) {
    return r->s.cached_tokens;
}

void vengine_cancel(vengine *v, vreq *r, int64_t now_us) {
    engine_abort(v->eng, &r->s, now_us);
    vreq_free(v, r);
}

int64_t vengine_next_event(const vengine *v) {
    return v->step_end;
}

void vengine_step(vengine *v) {
    int64_t t = v->step_end;
    if (t < 0)
        return;
    v->step_end = -1;
    engine_step_end(v->eng, t);
    begin_at(v, t);
}

engine_stats vengine_stats(const vengine *v) {
    return engine_get_stats(v->eng);
}
