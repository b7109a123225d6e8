/* loadgen: the open-loop client on one libevent loop, one thread.
 *
 * Requests go out through servelab's own HTTP/1.1 client (client/h1.c) for
 * plain http://, or through libcurl's multi_socket API (https, proxies,
 * --http-client libcurl; its glue is loadgen_curl.c). Both hand the same
 * three things back: the response head, body bytes as they arrive, and how
 * the transfer ended; response.c reads the answer from them. This file is
 * the loop: our own timer dispatches requests at their due times, and a
 * finished request becomes its row.
 *
 * A request in flight owns an easy handle, its body, its SSE parser and its
 * chunk times; all of it is freed the moment the request's row is written,
 * so memory follows what is in flight, not what has finished. */
#include "client/loadgen.h"
#include "client/live.h"
#include "client/loadgen_ctx.h"
#include "common/clock.h"
#include "common/stop.h"
#include "common/util.h"
#include "workload/conversation.h"

#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int64_t lg_now(const lg *g) {
    return mono_us() - g->t0;
}

/* A timer due at once: it runs in the loop's next turn, after the reads
 * that turn finds. */
static void run_soon(struct event *timer) {
    struct timeval now = {0, 0};
    evtimer_add(timer, &now);
}

/* Requests started at one go: from the timer, and between two reads. A
 * burst is sent in slices so that no stream's data waits behind hundreds
 * of connects and writes: after each slice the loop reads what came. */
#define DISPATCH_SLICE 32
#define DISPATCH_BETWEEN_READS 4

static void start_request(lg *g, inflight *f);
static inflight *new_turn(lg *g, uint32_t index, int64_t due_us);
static void finish_request(lg *g, inflight *f, int error);
static int64_t earliest_due(const lg *g);
static void arm_due_timer(lg *g);
static int slot_free(const lg *g);
static void dispatch_due(lg *g, int64_t now, int most);
static void promote(lg *g, int64_t now);

static void active_add(lg *g, inflight *f) {
    f->aprev = NULL;
    f->anext = g->active;
    if (g->active)
        g->active->aprev = f;
    g->active = f;
}

static void active_remove(lg *g, inflight *f) {
    if (f->aprev)
        f->aprev->anext = f->anext;
    else
        g->active = f->anext;
    if (f->anext)
        f->anext->aprev = f->aprev;
    f->aprev = f->anext = NULL;
}

static void free_inflight(inflight *f) {
    if (f->easy)
        curl_easy_cleanup(f->easy);
    if (f->hx)
        h1_cancel(f->hx);
    curl_slist_free_all(f->hdrs);
    free(f->body);
    free(f->json);
    free(f->words);
    sse_release(&f->sse);
    free(f->t_us);
    free(f->tok);
    free(f->coal);
    if (f->ans)
        answer_free(f->ans);
    free(f->ans);
    free(f);
}

/* A failed request in the run's error log, with the server's words, or
 * the system's when the server said nothing. */
static void note_error(lg *g, inflight *f, int error) {
    const char *words = f->words;
    size_t len = f->words_len;
    char buf[128];
    if (!words && f->os_errno) {
        words = strerror_r(f->os_errno, buf, sizeof buf); /* GNU's: threads each their own */
        len = strlen(words);
    }
    errorlog_note(&g->res->errors, error, f->row.http_status, f->row.index, words, len);
}

/* The prompt's tokens: the server's usage; else its timings (llama.cpp:
 * those it processed plus those it took from its cache); else our own
 * estimate from the prompt. */
static int prompt_tokens_of(const inflight *f, const loadgen_config *c) {
    const request_row *r = &f->row;
    if (f->usage_prompt > 0)
        return (int)f->usage_prompt;
    if (r->server_prompt_n >= 0 && r->server_cache_n >= 0 &&
        r->server_prompt_n + r->server_cache_n > 0 &&
        r->server_prompt_n + r->server_cache_n <= INT32_MAX)
        return (int)(r->server_prompt_n + r->server_cache_n);
    return workload_prompt_tokens(c->w, r->index);
}

/* The request is over: its row, its figures, its memory. */
static void finish_request(lg *g, inflight *f, int error) {
    const loadgen_config *c = g->cfg;
    request_row *r = &f->row;
    r->error = error;
    r->chunks = f->n_chunks;
    if (r->end_us < 0 && (r->sent_us >= 0 || error == ERR_CANCELLED))
        r->end_us = lg_now(g); /* a request never sent ends when the run gave it up */
    if (f->n_chunks == 0)
        r->last_us = -1;
    long counted = 0;
    for (int i = 0; i < f->n_chunks; i++)
        counted += response_chunk_tokens(f, i);
    if (f->saw_usage) {
        r->output_tokens = (int)f->usage_completion;
        g->res->usage_counted++;
    } else if (r->sent_us >= 0 && (f->n_chunks > 0 || error == ERR_NONE)) {
        r->output_tokens = (int)counted;
        g->res->chunk_counted++;
    }
    r->prompt_tokens = prompt_tokens_of(f, c);
    if (f->ans && r->sent_us >= 0) {
        char why[256];
        r->tool_calls = f->ans->n_calls;
        r->answer_valid =
            error == ERR_NONE ? answer_verdict(f->ans, &c->answers, why, sizeof why) : 0;
    }
    r->finish_reason = f->finish[0] ? f->finish : (error ? "" : "");
    if (error)
        note_error(g, f, error);
    selfcheck_request(g, f);
    if (g->writing) {
        row_writer_request(&g->rw, r);
        row_writer_chunks(&g->rw, r->index, f->t_us, f->tok, f->coal, f->n_chunks);
    }
    req_rec rec = request_row_record(r); /* compact record for the summary */
    rows_add(&g->res->rows, &rec);
    if (c->live) {
        double tpot =
            rec.output_tokens > 1 ? (rec.last_ms - rec.first_ms) / (rec.output_tokens - 1) : NAN;
        live_ended(c->live, error, r->sent_us >= 0, rec.first_ms - rec.sent_ms, tpot,
                   rec.end_ms - rec.sent_ms, r->output_tokens, r->end_us);
    }
    for (int i = 0; i < f->n_chunks; i++) {
        if (f->t_us[i] <= g->last_due)
            g->res->rows.window_output_tokens += response_chunk_tokens(f, i);
        if (i > 0) {
            int32_t k_tok = response_chunk_tokens(f, i);
            double whole = (f->t_us[i] - f->t_us[i - 1]) / 1000.0;
            rows_add_chunk_gap(&g->res->rows, (float)(whole / k_tok), k_tok, (float)whole);
        }
    }
    g->finished++;
    uint32_t next = c->next_turn ? c->next_turn[r->index] : CONV_NONE;
    int64_t next_due = (r->end_us >= 0 ? r->end_us : lg_now(g)) + c->think_us;
    int went_well = error == ERR_NONE && !g->stopping;
    free_inflight(f);
    if (next != CONV_NONE && went_well) {
        turns_push(&g->later, next_due, next);
        /* the timer may have nothing left to wait for; never later than a
         * slice already waiting to go */
        if (g->queue_head && slot_free(g))
            run_soon(g->due_timer);
        else
            arm_due_timer(g);
    } else if (next != CONV_NONE) /* the conversation ends here: its later turns are rows too */
        finish_request(g, new_turn(g, next, next_due), ERR_CANCELLED);
}

/* ---- the end of a transfer ---- */

/* A transfer is over: its error class is decided, its slot freed for a
 * request held back by the concurrency cap, and its row written soon. */
void lg_transfer_ended(lg *g, inflight *f, xfer_end end) {
    f->row.end_us = lg_now(g);
    int error = response_end(f, end);
    g->in_flight--;
    active_remove(g, f);
    /* Its row is written in the next slice of ends, not from inside this
     * read: a wave of answers ending together (a burst's streams all end
     * at once) would otherwise write a wave of rows before the loop reads
     * again, and the first tokens of the requests that follow them would
     * wait unread until the next chunk came on top of them. */
    f->final_error = error;
    f->next = NULL;
    if (g->ended_tail)
        g->ended_tail->next = f;
    else
        g->ended_head = f;
    g->ended_tail = f;
    run_soon(g->finish_timer);
    /* The next request goes in the next slice, not from here: a wave of
     * answers ending together would otherwise send a wave of requests
     * before the loop reads again. Its wait counts from now. */
    promote(g, lg_now(g));
    if (g->queue_head && slot_free(g) && !g->stopping) {
        run_soon(g->due_timer);
    }
}

/* ---- our own client's callbacks ---- */

static void h1_on_head(void *ud, int status, const char *content_type,
                       const char *content_encoding) {
    response_head(ud, status, content_type, content_encoding);
}

/* Reads of streams awaiting a first token come first, but never for long:
 * libevent runs only the highest priority that has work in each turn, so
 * a wave of thousands of new streams could starve the streaming ones past
 * their next chunk. When urgent reads have run this long with no ordinary
 * work between them, every stream is settled to the ordinary priority, and new
 * ones start there, until ordinary work runs again. */
#define URGENT_MOST_US 15000

static void demote_all(lg *g) {
    if (!g->h1)
        return;
    for (inflight *f = g->active; f; f = f->anext)
        if (!f->settled && f->hx) {
            h1_settle(f->hx);
            f->settled = 1;
        }
    h1_urgency(g->h1, 0);
    g->demoted = 1;
}

/* Ordinary work ran (a streaming read, the dispatch timer): nothing is
 * starved, and streams awaiting a first token may come first again. */
static void ordinary_ran(lg *g) {
    g->ordinary_us = lg_now(g);
    if (g->demoted) {
        h1_urgency(g->h1, 1);
        g->demoted = 0;
    }
}

/* Body bytes; then, if a request fell due meanwhile, it goes out now
 * rather than after the rest of this wakeup's sockets (at 5,000 streams
 * one wakeup can hold thousands of them, and the timer would wait for
 * them all). One comparison per read. */
static size_t h1_on_body(void *ud, const char *p, size_t n, int64_t arrived_us) {
    inflight *f = ud;
    lg *g = f->g;
    size_t used = response_body(f, p, n, arrived_us - g->t0);
    if (f->settled)
        ordinary_ran(g);
    else if (lg_now(g) - g->ordinary_us > URGENT_MOST_US)
        demote_all(g);
    if (!f->settled && f->row.first_us >= 0 && f->hx) {
        h1_settle(f->hx); /* its first token came: its reads wait their turn now */
        f->settled = 1;
    }
    if (!g->stopping && (g->next_due < g->cfg->n || g->later.n || g->queue_head)) {
        int64_t now = lg_now(g);
        if (earliest_due(g) <= now || (g->queue_head && slot_free(g)))
            dispatch_due(g, now, DISPATCH_BETWEEN_READS);
    }
    return used;
}

/* Where the transfer's time went, as offsets from t=0 (the handshake's
 * length as it is). */
static void h1_on_phases(void *ud, const h1_times *t) {
    inflight *f = ud;
    lg *g = f->g;
    f->row.connect_us = t->connect_us;
    f->row.written_us = t->written_us >= 0 ? t->written_us - g->t0 : -1;
    f->row.first_byte_us = t->first_byte_us >= 0 ? t->first_byte_us - g->t0 : -1;
}

static void h1_on_done(void *ud, h1_result r, int os_errno) {
    inflight *f = ud;
    lg *g = f->g;
    f->hx = NULL; /* gone with this call */
    f->os_errno = os_errno;
    xfer_end end = r == H1_OK        ? XFER_OK
                   : r == H1_CONNECT ? XFER_CONNECT
                   : r == H1_CLIENT  ? XFER_CLIENT
                   : r == H1_TIMEOUT ? XFER_TIMEOUT
                                     : XFER_BROKEN;
    lg_transfer_ended(g, f, end);
    lg_check_done(g);
}

/* ---- dispatch ---- */

static void start_request(lg *g, inflight *f) {
    const loadgen_config *c = g->cfg;
    size_t len;
    f->body = workload_body(c->w, f->row.index, &c->body, &len);
    f->body_len = len;
    char idh[64];
    snprintf(idh, sizeof idh, "X-Request-Id: ");
    request_id_format(idh + strlen(idh), sizeof idh - strlen(idh), f->row.index);
    response_begin(f);
    f->row.sent_us = lg_now(g);
    if (c->live)
        live_sent(c->live, f->row.dispatched_us >= 0
                               ? (f->row.dispatched_us - f->row.scheduled_us) / 1000.0
                               : NAN);
    g->in_flight++;
    active_add(g, f);
    if (g->h1) {
        f->hx = h1_start(g->h1, idh, f->body, len, c->timeout_s, f);
        return;
    }
    curl_glue_start(g, f);
}

/* A request with its row's fields unknown, due at due_us. */
static inflight *new_row(lg *g, size_t slot, uint32_t index, int64_t due_us) {
    const loadgen_config *c = g->cfg;
    inflight *f = xcalloc(1, sizeof *f);
    f->g = g;
    f->slot = slot;
    request_row_init(&f->row, c->w, index, due_us);
    f->ready_us = -1;
    return f;
}

/* Schedule slot `slot`'s request. */
static inflight *new_inflight(lg *g, size_t slot) {
    const loadgen_config *c = g->cfg;
    uint32_t index = c->indices ? c->indices[slot] : (uint32_t)(c->first_index + slot);
    return new_row(g, slot, index, c->due_us[slot]);
}

/* A conversation's later turn (not in the schedule). */
static inflight *new_turn(lg *g, uint32_t index, int64_t due_us) {
    return new_row(g, SIZE_MAX, index, due_us);
}

/* The earliest time a request not yet taken in is due: the schedule's
 * next, or a later turn's; INT64_MAX: none. */
static int64_t earliest_due(const lg *g) {
    int64_t later = turns_next_due(&g->later);
    if (g->next_due < g->cfg->n && g->cfg->due_us[g->next_due] < later)
        return g->cfg->due_us[g->next_due];
    return later;
}

/* The FIFO of requests taken in but not yet sent: held by the cap, or
 * waiting for the next slice of a burst. */
static int slot_free(const lg *g) {
    return g->cfg->concurrency <= 0 || g->in_flight < g->cfg->concurrency;
}

/* Whether one more queued request has a slot waiting for it. */
static int slot_for_one_more(const lg *g) {
    return g->cfg->concurrency <= 0 || g->in_flight + g->n_ready < g->cfg->concurrency;
}

/* Queued requests that now have a slot are ready from `now`. */
static void promote(lg *g, int64_t now) {
    while (g->first_unready && slot_for_one_more(g)) {
        g->first_unready->ready_us = now;
        g->n_ready++;
        g->first_unready = g->first_unready->next;
    }
}

static void enqueue(lg *g, inflight *f, int64_t now) {
    promote(g, now);
    f->ready_us = -1;
    if (!g->first_unready && slot_for_one_more(g)) {
        f->ready_us = now;
        g->n_ready++;
    } else if (!g->first_unready) {
        g->first_unready = f;
    }
    if (g->queue_tail)
        g->queue_tail->next = f;
    else
        g->queue_head = f;
    g->queue_tail = f;
}

static inflight *dequeue(lg *g) {
    inflight *f = g->queue_head;
    g->queue_head = f->next;
    if (!g->queue_head)
        g->queue_tail = NULL;
    if (f->ready_us >= 0)
        g->n_ready--;
    if (g->first_unready == f)
        g->first_unready = f->next;
    f->next = NULL;
    return f;
}

static void arm_due_timer(lg *g) {
    int64_t due = earliest_due(g);
    if (due == INT64_MAX || g->stopping)
        return;
    int64_t wait = due - lg_now(g);
    if (wait < 0)
        wait = 0;
    struct timeval tv = {(time_t)(wait / 1000000), (suseconds_t)(wait % 1000000)};
    evtimer_add(g->due_timer, &tv);
}

/* Starts the requests whose time has come, at most `most` (so a burst
 * does not starve the sockets), and arms the timer for the next: at once
 * when more are due, which lets the loop read first. */
static void dispatch_due(lg *g, int64_t now, int most) {
    const loadgen_config *c = g->cfg;
    for (int64_t due; (due = earliest_due(g)) <= now;) {
        inflight *f;
        if (g->next_due < c->n && c->due_us[g->next_due] == due) {
            f = new_inflight(g, g->next_due++);
        } else {
            uint32_t index = turns_pop(&g->later, &due);
            f = new_turn(g, index, due);
        }
        f->row.dispatched_us = now; /* taken in: what waits from here is the cap or a slice */
        enqueue(g, f, now);
    }
    int started = 0;
    for (; started < most && g->queue_head && slot_free(g); started++) {
        inflight *f = dequeue(g);
        if (f->ready_us < 0)
            f->ready_us = now;
        start_request(g, f);
    }
    if (started && !g->h1)
        curl_glue_kick(g);
    if (g->queue_head && slot_free(g) && !g->stopping) {
        run_soon(g->due_timer); /* the rest of the slice after the loop has read */
    } else {
        arm_due_timer(g);
    }
}

static void on_due(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    ordinary_ran(g);
    dispatch_due(g, lg_now(g), DISPATCH_SLICE);
}

void lg_check_done(lg *g) {
    if (g->next_due >= g->cfg->n && g->in_flight == 0 && !g->queue_head && !g->ended_head &&
        !g->later.n)
        event_base_loopbreak(g->base);
}

/* Rows of ended transfers, at most `most` (all when < 0). */
static void write_ended(lg *g, int most) {
    for (int k = 0; g->ended_head && (most < 0 || k < most); k++) {
        inflight *f = g->ended_head;
        g->ended_head = f->next;
        if (!g->ended_head)
            g->ended_tail = NULL;
        finish_request(g, f, f->final_error);
    }
}

static void on_finish_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    write_ended(g, DISPATCH_SLICE);
    if (g->ended_head) {
        run_soon(g->finish_timer);
    }
    lg_check_done(g);
}

/* A stop signal (common/stop.h), or the config's watch saying so: stop
 * scheduling; what is queued, in flight or not yet due ends as a cancelled
 * row. Every loop polls the flag the handler sets (every 10 ms), which works
 * the same with one thread or many. */
static void on_stop_poll(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    if (stop_signal())
        g->res->interrupted = 1;
    else if (g->cfg->watch && g->cfg->watch(g->cfg->watch_arg, g->res, g->in_flight, lg_now(g)))
        g->res->watch_stopped = 1;
    else
        return;
    g->stopping = 1;
    evtimer_del(g->due_timer);
    event_base_loopbreak(g->base);
}

/* After a stop signal every scheduled request still becomes a row: those in
 * flight, those queued behind the cap, and those not yet due. */
static void cancel_everything(lg *g) {
    write_ended(g, -1); /* those that ended before the stop keep their own ends */
    while (g->active) {
        inflight *f = g->active;
        active_remove(g, f);
        if (f->easy)
            curl_multi_remove_handle(g->multi, f->easy);
        g->in_flight--;
        f->row.end_us = lg_now(g);
        finish_request(g, f, ERR_CANCELLED);
    }
    while (g->queue_head) {
        inflight *q = g->queue_head;
        g->queue_head = q->next;
        finish_request(g, q, ERR_CANCELLED);
    }
    g->queue_tail = NULL;
    while (g->next_due < g->cfg->n)
        finish_request(g, new_inflight(g, g->next_due++), ERR_CANCELLED);
    while (g->later.n) { /* turns waiting for their time, and the turns after them */
        int64_t due;
        uint32_t index = turns_pop(&g->later, &due);
        finish_request(g, new_turn(g, index, due), ERR_CANCELLED);
    }
}

/* The time to the next sample (loadgen.h: sample_per_elapsed). */
static struct timeval sample_wait(const lg *g) {
    const loadgen_config *c = g->cfg;
    double iv = c->sample_interval_s > 0 ? c->sample_interval_s : 1.0;
    if (c->sample_per_elapsed > 0) {
        double grown = (double)lg_now(g) / 1e6 / c->sample_per_elapsed;
        iv = fmax(iv, fmin(grown, fmax(iv, c->sample_interval_max_s)));
    }
    return (struct timeval){(time_t)iv, (suseconds_t)((iv - (time_t)iv) * 1e6)};
}

static void on_sample_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    struct timeval tv = sample_wait(g);
    evtimer_add(g->sample_timer, &tv); /* before this sample: its own time is not added */
    CURL *e = sampler_metrics_start(&g->smp);
    if (e) {
        curl_multi_add_handle(g->multi, e);
        int running;
        curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    sampler_gpu_now(&g->smp, lg_now(g) / 1000.0);
    sampler_proc_now(&g->smp, lg_now(g) / 1000.0);
}

/* The loop: precise timers, two priorities (streams awaiting their first
 * token are read first, h1.h), and back to epoll after at most 1 ms of
 * ordinary callbacks, so that a wave of streams ending together (rows to
 * write, requests to start) cannot keep a first token unread until the
 * next one arrives on top of it. (A limit on the callbacks' count instead
 * made the loop poll thousands of ready sockets again every few reads.) */
static struct event_base *client_base(void) {
    struct event_config *ec = event_config_new();
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
    struct timeval most = {0, 1000};
    event_config_set_max_dispatch_interval(ec, &most, -1, 1);
    struct event_base *base = event_base_new_with_config(ec);
    event_config_free(ec);
    event_base_priority_init(base, 2);
    return base;
}

/* Opens cfg->preconnect connections before t=0 and waits (at most 10 s,
 * or until a stop signal) for them to be open or to have failed. */
static void on_tick(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    (void)arg;
}

static void preconnect(lg *g) {
    h1_preconnect(g->h1, g->cfg->preconnect);
    struct event *tick = evtimer_new(g->base, on_tick, NULL);
    int64_t give_up = mono_us() + 10000000;
    while (h1_preconnecting(g->h1) > 0 && mono_us() < give_up && !stop_signal()) {
        struct timeval tv = {0, 10000};
        evtimer_add(tick, &tv); /* the loop below returns within 10 ms */
        event_base_loop(g->base, EVLOOP_ONCE);
    }
    event_free(tick);
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

int loadgen_run(const loadgen_config *cfg, loadgen_result *res, char *err, int errlen) {
    memset(res, 0, sizeof *res);
    rows_reserve(&res->rows, cfg->n);
    lg g;
    memset(&g, 0, sizeof g);
    g.cfg = cfg;
    g.res = res;
    if (cfg->shared_rows) {
        row_writer_clone(cfg->shared_rows, &g.rw);
        g.writing = 1;
    } else if (cfg->out_dir) {
        if (row_writer_open(&g.rw, cfg->out_dir, err, errlen))
            return -1;
        g.writing = 1;
    }
    g.base = client_base();
    g.curl_read_us = -1;
    curl_glue_init(&g);
    if (cfg->client == HTTP_CLIENT_BUILTIN) {
        size_t nh = 0;
        for (struct curl_slist *h = cfg->headers; h; h = h->next)
            nh++;
        const char **hv = xcalloc(nh + 1, sizeof *hv);
        nh = 0;
        for (struct curl_slist *h = cfg->headers; h; h = h->next)
            hv[nh++] = h->data;
        static const h1_handlers handlers = {h1_on_head, h1_on_body, h1_on_done, h1_on_phases};
        g.h1 = h1_client_new(g.base, cfg->endpoint, hv, &handlers);
        free(hv);
    }
    g.due_timer = evtimer_new(g.base, on_due, &g);
    g.finish_timer = evtimer_new(g.base, on_finish_timer, &g);
    g.stop_poll = event_new(g.base, -1, EV_PERSIST, on_stop_poll, &g);
    struct timeval poll_tv = {0, 10000};
    evtimer_add(g.stop_poll, &poll_tv);
    g.last_due = cfg->n ? cfg->due_us[cfg->n - 1] : 0;
    int sampling = cfg->out_dir && (cfg->metrics_url || cfg->gpu || cfg->server_pid > 0);
    if (sampling) {
        g.smp = (sampler){.dir = cfg->out_dir,
                          .url = cfg->metrics_url,
                          .headers = cfg->metrics_headers,
                          .metrics = &res->metrics,
                          .metrics_samples = &res->metrics_samples,
                          .gpu = cfg->gpu,
                          .gpu_series = &res->gpu,
                          .gpu_samples = &res->gpu_samples,
                          .server_pid = cfg->server_pid,
                          .proc = &res->server_proc};
        g.sample_timer = evtimer_new(g.base, on_sample_timer, &g); /* armed at t=0 */
    }
    double cpu0 = cpu_seconds();
    if (g.h1 && cfg->preconnect > 0)
        preconnect(&g);
    /* The first /metrics page is read before t=0, waiting for it: the
     * run's counter deltas (prompt and generation tokens, successes,
     * preemptions) then start before its first request, whatever the
     * server's answer time. Fetched at t=0 beside the first requests, it
     * could land after a prefill had been counted. */
    if (sampling)
        sampler_metrics_now(&g.smp, 0.0);
    g.t0 = cfg->t0_when_ready ? cfg->t0_when_ready(cfg->t0_arg)
           : cfg->t0_us       ? cfg->t0_us
                              : mono_us();
    /* t=0 on the wall clock: a packet capture's times, which are the wall
     * clock's, can then be read against the rows */
    res->t0_unix_us = wall_at_mono(g.t0);
    if (cfg->live)
        live_start(cfg->live, g.t0);
    if (sampling) { /* the GPU and process samples at t=0; the timer's first /metrics page after one
                       interval */
        sampler_gpu_now(&g.smp, 0.0);
        sampler_proc_now(&g.smp, 0.0);
        struct timeval tv = sample_wait(&g);
        evtimer_add(g.sample_timer, &tv);
    }
    if (stop_signal()) { /* stopped before it began (in the warmup, say): nothing is sent */
        g.stopping = 1;
        res->interrupted = 1;
    } else if (cfg->n > 0) {
        arm_due_timer(&g);
        event_base_dispatch(g.base);
    }
    write_ended(&g, -1); /* every ended transfer's row, whatever ended the loop */
    if (g.stopping)
        cancel_everything(&g);
    if (sampling) {
        /* the last sample closes the run's deltas */
        if (g.smp.easy) {
            curl_multi_remove_handle(g.multi, g.smp.easy);
            curl_easy_cleanup(g.smp.easy);
            g.smp.easy = NULL;
        }
        double t_end = lg_now(&g) / 1000.0;
        sampler_metrics_now(&g.smp, t_end);
        sampler_gpu_now(&g.smp, t_end);
        sampler_proc_now(&g.smp, t_end);
        sampler_close(&g.smp);
        event_free(g.sample_timer);
    }
    res->cpu_s = cpu_seconds() - cpu0;
    curl_glue_free(&g);
    h1_client_free(g.h1);
    event_free(g.due_timer);
    event_free(g.finish_timer);
    event_free(g.curl_timer);
    event_free(g.stop_poll);
    event_base_free(g.base);
    turns_free(&g.later);
    if (g.writing)
        res->write_error = row_writer_close(&g.rw);
    if (g.writing && !cfg->shared_rows && errorlog_write(cfg->out_dir, &res->errors) &&
        !res->write_error)
        res->write_error = errno ? errno : EIO;
    return 0;
}
