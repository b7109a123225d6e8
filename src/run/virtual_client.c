/* virtual_client: loadgen's loop on a virtual clock (see virtual_client.h).
 *
 * One loop takes the earliest of five kinds of event, in this order when
 * they fall on the same microsecond: the end of the engine's step (its
 * tokens), a request's timeout, an arrival (the schedule's next, or a later
 * turn), and the 10 ms tick of the watch. An arrival is sent at once when
 * the concurrency cap has room, else it waits in a FIFO for a slot, as in
 * loadgen. The requests sent and not finished are a list in the order they
 * were sent: with one timeout for all, its head is always the next to time
 * out. A request's row is written the moment it ends, its chunk rows with
 * it when chunks are kept; a stop signal or the watch ends the run with
 * every request not finished a cancelled row, so every scheduled request
 * ends as exactly one row. */
#include "run/virtual_client.h"
#include "client/rowwriter.h"
#include "client/turns.h"
#include "common/stop.h"
#include "common/util.h"
#include "sim/vengine.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCH_TICK_US 10000

typedef struct vflight {
    request_row row;
    vreq *h; /* in the engine; NULL once out of it */
    int64_t *t_us;
    int32_t *tok; /* tokens of each chunk, once one had other than one (NULL until then) */
    int n_t, cap_t;
    int n_chunks;                /* emissions so far, kept or not */
    int64_t prev_us;             /* the last token's time (-1: none yet) */
    struct vflight *prev, *next; /* the sent list, or the FIFO (next only) */
} vflight;

typedef struct vc {
    const loadgen_config *cfg;
    const virtual_target *t;
    loadgen_result *res;
    vengine *eng;
    row_writer rw;
    int writing;
    int64_t now, last_due;
    size_t next_due; /* the schedule's next slot */
    turn_heap later;
    vflight *sent_head, *sent_tail; /* sent, not finished, in the order sent */
    vflight *q_head, *q_tail;       /* arrived, waiting for a slot */
    int in_flight;
    int stopping;
    char finish[8]; /* the last token's finish reason, for its row */
} vc;

static vflight *new_flight(vc *g, uint32_t index, int64_t due_us) {
    const loadgen_config *c = g->cfg;
    vflight *f = xcalloc(1, sizeof *f);
    request_row_init(&f->row, c->w, index, due_us);
    f->row.finish_reason = "";
    f->prev_us = -1;
    return f;
}

static void sent_remove(vc *g, vflight *f) {
    if (f->prev)
        f->prev->next = f->next;
    else
        g->sent_head = f->next;
    if (f->next)
        f->next->prev = f->prev;
    else
        g->sent_tail = f->prev;
    f->prev = f->next = NULL;
}

static void dispatch_queued(vc *g);

/* The request is over: its row, its record, its next turn. */
static void finish_flight(vc *g, vflight *f, int error) {
    const loadgen_config *c = g->cfg;
    request_row *r = &f->row;
    r->error = error;
    r->chunks = f->n_chunks;
    if (g->t->reasoning_usage && r->chunks > 0 && g->cfg->body.chat && g->t->reasoning_tokens > 0)
        r->reasoning_server =
            r->output_tokens < g->t->reasoning_tokens ? r->output_tokens : g->t->reasoning_tokens;
    if (r->end_us < 0 && (r->sent_us >= 0 || error == ERR_CANCELLED))
        r->end_us = g->now; /* a request never sent ends when the run gave it up */
    if (r->sent_us >= 0 && r->prompt_tokens < 0)
        r->prompt_tokens = workload_prompt_tokens(c->w, r->index);
    if (g->writing) {
        row_writer_request(&g->rw, r);
        row_writer_chunks(&g->rw, r->index, f->t_us, f->tok, NULL, g->t->chunks ? f->n_t : 0);
    }
    req_rec rec = request_row_record(r);
    rows_add(&g->res->rows, &rec);
    if (r->sent_us >= 0)
        g->res->usage_counted++;
    uint32_t next = c->next_turn ? c->next_turn[r->index] : CONV_NONE;
    int64_t next_due = (r->end_us >= 0 ? r->end_us : g->now) + c->think_us;
    int went_well = error == ERR_NONE && !g->stopping;
    free(f->t_us);
    free(f->tok);
    free(f);
    if (next != CONV_NONE && went_well)
        turns_push(&g->later, next_due, next);
    else if (next != CONV_NONE) /* the conversation ends here: its later turns are rows too */
        finish_flight(g, new_flight(g, next, next_due), ERR_CANCELLED);
}

/* A token of f's request (vengine's callback). */
static void on_token(void *user, int64_t t_us, int generated, const char *finish, void *ud) {
    vc *g = ud;
    vflight *f = user;
    request_row *r = &f->row;
    int k = generated - (r->output_tokens > 0 ? r->output_tokens : 0); /* this emission's */
    if (r->first_us < 0)
        r->first_us = t_us;
    r->last_us = t_us;
    r->output_tokens = generated;
    /* a reasoning answer begins with the chunk past its thinking, as the
     * client reads the simulator's stream (a chunk that crosses is the answer's) */
    int think = g->cfg->body.chat ? g->t->reasoning_tokens : 0;
    if (r->first_answer_us < 0 && generated > think)
        r->first_answer_us = t_us;
    else if (r->first_answer_us < 0)
        r->reasoning_counted += k;
    f->n_chunks++;
    if (f->prev_us >= 0 && g->t->chunks) {
        double whole = (t_us - f->prev_us) / 1000.0;
        rows_add_chunk_gap(&g->res->rows, (float)(whole / k), k, (float)whole);
    }
    f->prev_us = t_us;
    if (t_us <= g->last_due)
        g->res->rows.window_output_tokens += k;
    if (g->t->chunks) {
        if (f->n_t == f->cap_t) {
            f->cap_t = f->cap_t ? 2 * f->cap_t : 16;
            f->t_us = xrealloc(f->t_us, (size_t)f->cap_t * sizeof *f->t_us);
            if (f->tok)
                f->tok = xrealloc(f->tok, (size_t)f->cap_t * sizeof *f->tok);
        }
        if (k != 1 && !f->tok) {
            f->tok = xmalloc((size_t)f->cap_t * sizeof *f->tok);
            for (int i = 0; i < f->n_t; i++)
                f->tok[i] = 1;
        }
        if (f->tok)
            f->tok[f->n_t] = k;
        f->t_us[f->n_t++] = t_us;
    }
    if (!finish) {
        if (r->prompt_tokens < 0) { /* the first token: the prefix cache has been looked up */
            r->prompt_tokens = vreq_prompt_tokens(f->h);
            r->cached_tokens = vreq_cached_tokens(f->h);
        }
        return;
    }
    r->prompt_tokens = vreq_prompt_tokens(f->h);
    r->cached_tokens = vreq_cached_tokens(f->h);
    snprintf(g->finish, sizeof g->finish, "%s", finish);
    r->finish_reason = g->finish; /* written before the next token can come */
    r->http_status = 200;
    r->end_us = t_us;
    f->h = NULL;
    g->in_flight--;
    sent_remove(g, f);
    finish_flight(g, f, ERR_NONE);
}

/* Sends f now: into the engine, or refused as the server would. */
static void send_flight(vc *g, vflight *f) {
    const loadgen_config *c = g->cfg;
    request_row *r = &f->row;
    r->sent_us = g->now;
    char id[32], msg[512];
    request_id_format(id, sizeof id, r->index);
    int status;
    json_t *obj = workload_body_object(c->w, r->index, &c->body);
    if (obj) { /* the same body, not dumped to be read again */
        status =
            vengine_submit_object(g->eng, obj, c->body.chat, id, g->now, f, &f->h, msg, sizeof msg);
        json_decref(obj);
    } else {
        size_t len;
        char *body = workload_body(c->w, r->index, &c->body, &len);
        status =
            vengine_submit(g->eng, body, len, c->body.chat, id, g->now, f, &f->h, msg, sizeof msg);
        free(body);
    }
    if (status) {
        r->http_status = status;
        r->end_us = g->now;
        errorlog_note(&g->res->errors, ERR_HTTP, status, r->index, msg, strlen(msg));
        finish_flight(g, f, ERR_HTTP);
        return;
    }
    g->in_flight++;
    f->prev = g->sent_tail;
    f->next = NULL;
    if (g->sent_tail)
        g->sent_tail->next = f;
    else
        g->sent_head = f;
    g->sent_tail = f;
}

static int slot_free(const vc *g) {
    return g->cfg->concurrency <= 0 || g->in_flight < g->cfg->concurrency;
}

static void dispatch_queued(vc *g) {
    while (g->q_head && slot_free(g)) {
        vflight *f = g->q_head;
        g->q_head = f->next;
        if (!g->q_head)
            g->q_tail = NULL;
        f->next = NULL;
        send_flight(g, f);
    }
}

/* A request arrives: sent, or queued behind the cap. */
static void arrive(vc *g, vflight *f) {
    f->row.dispatched_us = g->now; /* taken in: what waits from here is the cap */
    if (!g->q_head && slot_free(g)) {
        send_flight(g, f);
        return;
    }
    if (g->q_tail)
        g->q_tail->next = f;
    else
        g->q_head = f;
    g->q_tail = f;
}

static int64_t next_arrival(const vc *g) {
    int64_t later = turns_next_due(&g->later);
    if (g->next_due < g->cfg->n && g->cfg->due_us[g->next_due] < later)
        return g->cfg->due_us[g->next_due];
    return later;
}

static void take_arrival(vc *g) {
    const loadgen_config *c = g->cfg;
    int64_t later = turns_next_due(&g->later);
    if (g->next_due < c->n && c->due_us[g->next_due] < later) {
        size_t slot = g->next_due++;
        uint32_t index = c->indices ? c->indices[slot] : (uint32_t)(c->first_index + slot);
        arrive(g, new_flight(g, index, c->due_us[slot]));
        return;
    }
    int64_t due;
    uint32_t index = turns_pop(&g->later, &due);
    arrive(g, new_flight(g, index, due));
}

static int64_t next_timeout(const vc *g) {
    if (!g->sent_head || g->cfg->timeout_s <= 0)
        return INT64_MAX;
    return g->sent_head->row.sent_us + llround(g->cfg->timeout_s * 1e6);
}

/* The request at the head of the sent list has waited too long. */
static void time_out(vc *g) {
    vflight *f = g->sent_head;
    vengine_cancel(g->eng, f->h, g->now);
    f->h = NULL;
    g->in_flight--;
    sent_remove(g, f);
    errorlog_note(&g->res->errors, ERR_TIMEOUT, f->row.first_us >= 0 ? 200 : 0, f->row.index, NULL,
                  0);
    if (f->row.first_us >= 0)
        f->row.http_status = 200;
    finish_flight(g, f, ERR_TIMEOUT);
}

/* A stop: whatever is not finished becomes a cancelled row. */
static void cancel_everything(vc *g) {
    g->stopping = 1;
    while (g->sent_head) {
        vflight *f = g->sent_head;
        vengine_cancel(g->eng, f->h, g->now);
        f->h = NULL;
        g->in_flight--;
        sent_remove(g, f);
        if (f->row.first_us >= 0)
            f->row.http_status = 200;
        finish_flight(g, f, ERR_CANCELLED);
    }
    while (g->q_head) {
        vflight *f = g->q_head;
        g->q_head = f->next;
        finish_flight(g, f, ERR_CANCELLED);
    }
    g->q_tail = NULL;
    const loadgen_config *c = g->cfg;
    while (g->next_due < c->n) {
        size_t slot = g->next_due++;
        uint32_t index = c->indices ? c->indices[slot] : (uint32_t)(c->first_index + slot);
        finish_flight(g, new_flight(g, index, c->due_us[slot]), ERR_CANCELLED);
    }
    while (g->later.n) {
        int64_t due;
        uint32_t index = turns_pop(&g->later, &due);
        finish_flight(g, new_flight(g, index, due), ERR_CANCELLED);
    }
}

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* The loop: the earliest event, until every request has its row. */
static void run_loop(vc *g) {
    const loadgen_config *c = g->cfg;
    int64_t tick = WATCH_TICK_US;
    unsigned long events = 0;
    for (;;) {
        if ((++events & 1023) == 0 && stop_signal()) {
            g->res->interrupted = 1;
            cancel_everything(g);
            return;
        }
        int64_t t_step = vengine_next_event(g->eng);
        if (t_step < 0)
            t_step = INT64_MAX;
        int64_t t_out = next_timeout(g), t_arr = next_arrival(g);
        int64_t t = min64(min64(t_step, t_out), t_arr);
        if (t == INT64_MAX)
            return; /* nothing sent, queued or to come: every row is written */
        if (c->watch && tick <= t) {
            g->now = tick;
            tick += WATCH_TICK_US;
            if (c->watch(c->watch_arg, g->res, g->in_flight, g->now)) {
                g->res->watch_stopped = 1;
                cancel_everything(g);
                return;
            }
            continue;
        }
        g->now = t;
        if (t == t_step)
            vengine_step(g->eng);
        else if (t == t_out)
            time_out(g);
        else
            take_arrival(g);
        dispatch_queued(g);
    }
}

int virtual_client_run(const loadgen_config *cfg, const virtual_target *t, loadgen_result *res,
                       char *err, int errlen) {
    memset(res, 0, sizeof *res);
    vc g = {.cfg = cfg, .t = t, .res = res};
    g.eng =
        vengine_new(&t->engine, t->eos_min_frac_pct, t->seed, t->model, on_token, &g, err, errlen);
    if (!g.eng)
        return -1;
    rows_reserve(&res->rows, cfg->total ? cfg->total : cfg->n);
    if (cfg->out_dir) {
        if (row_writer_open_rows(&g.rw, cfg->out_dir, t->chunks, err, errlen)) {
            vengine_free(g.eng);
            return -1;
        }
        g.writing = 1;
    }
    g.last_due = cfg->n ? cfg->due_us[cfg->n - 1] : 0;
    if (stop_signal()) {
        res->interrupted = 1;
        cancel_everything(&g);
    } else {
        run_loop(&g);
    }
    if (t->stats)
        *t->stats = vengine_stats(g.eng);
    vengine_free(g.eng);
    turns_free(&g.later);
    if (g.writing)
        res->write_error = row_writer_close(&g.rw);
    if (g.writing && errorlog_write(cfg->out_dir, &res->errors) && !res->write_error)
        res->write_error = errno ? errno : EIO;
    return 0;
}
