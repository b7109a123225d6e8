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
#include "client/loadgen_ctx.h"
#include "common/clock.h"
#include "common/stop.h"
#include "common/util.h"

#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int64_t lg_now(const lg *g) {
    return mono_us() - g->t0;
}

static void start_request(lg *g, inflight *f);
static void dispatch_due(lg *g, int64_t now);

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

/* The request is over: its row, its figures, its memory. */
static void finish_request(lg *g, inflight *f, int error) {
    const loadgen_config *c = g->cfg;
    request_row *r = &f->row;
    r->error = error;
    r->chunks = f->n_chunks;
    if (r->end_us < 0 && r->sent_us >= 0)
        r->end_us = lg_now(g);
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
    r->prompt_tokens =
        f->usage_prompt > 0 ? (int)f->usage_prompt : workload_prompt_tokens(c->w, r->index);
    r->finish_reason = f->finish[0] ? f->finish : (error ? "" : "");
    if (error)
        note_error(g, f, error);
    if (g->writing) {
        row_writer_request(&g->rw, r);
        row_writer_chunks(&g->rw, r->index, f->t_us, f->tok, f->n_chunks);
    }
    /* compact record for the summary */
    req_rec rec;
    rec.scheduled_ms = r->scheduled_us / 1000.0;
    rec.sent_ms = r->sent_us >= 0 ? r->sent_us / 1000.0 : NAN;
    rec.first_ms = r->first_us >= 0 ? r->first_us / 1000.0 : NAN;
    rec.last_ms = r->last_us >= 0 ? r->last_us / 1000.0 : NAN;
    rec.end_ms = r->end_us >= 0 ? r->end_us / 1000.0 : NAN;
    rec.lag_ms = r->dispatched_us >= 0 ? (r->dispatched_us - r->scheduled_us) / 1000.0 : NAN;
    rec.prompt_tokens = r->prompt_tokens;
    rec.output_tokens = r->output_tokens;
    rec.error = (uint8_t)error;
    rec.cls = 0;
    rec.part = 0;
    rows_add(&g->res->rows, &rec);
    for (int i = 0; i < f->n_chunks; i++) {
        if (f->t_us[i] <= g->last_due)
            g->res->rows.window_output_tokens += response_chunk_tokens(f, i);
        if (i > 0) {
            int32_t k_tok = response_chunk_tokens(f, i);
            float gap = (float)((f->t_us[i] - f->t_us[i - 1]) / 1000.0 / k_tok);
            for (int k = 0; k < k_tok; k++)
                rows_add_itl(&g->res->rows, gap);
        }
    }
    g->finished++;
    free_inflight(f);
}

/* ---- the end of a transfer ---- */

/* A transfer is over: the row is decided and written, and a request held
 * back by the concurrency cap takes its place. */
void lg_transfer_ended(lg *g, inflight *f, xfer_end end) {
    f->row.end_us = lg_now(g);
    int error = response_end(f, end);
    g->in_flight--;
    active_remove(g, f);
    finish_request(g, f, error);
    if (g->queue_head && !g->stopping) {
        inflight *q = g->queue_head;
        g->queue_head = q->next;
        if (!g->queue_head)
            g->queue_tail = NULL;
        start_request(g, q);
    }
}

/* ---- our own client's callbacks ---- */

static void h1_on_head(void *ud, int status, const char *content_type,
                       const char *content_encoding) {
    response_head(ud, status, content_type, content_encoding);
}

/* Body bytes; then, if a request fell due meanwhile, it goes out now
 * rather than after the rest of this wakeup's sockets (at 5,000 streams
 * one wakeup can hold thousands of them, and the timer would wait for
 * them all). One comparison per read. */
static size_t h1_on_body(void *ud, const char *p, size_t n, int64_t arrived_us) {
    inflight *f = ud;
    lg *g = f->g;
    size_t used = response_body(f, p, n, arrived_us - g->t0);
    if (g->next_due < g->cfg->n && !g->stopping) {
        int64_t now = lg_now(g);
        if (g->cfg->due_us[g->next_due] <= now)
            dispatch_due(g, now);
    }
    return used;
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
    g->in_flight++;
    active_add(g, f);
    if (g->h1) {
        f->hx = h1_start(g->h1, idh, f->body, len, c->timeout_s, f);
        return;
    }
    curl_glue_start(g, f);
}

static inflight *new_inflight(lg *g, size_t slot) {
    const loadgen_config *c = g->cfg;
    inflight *f = xcalloc(1, sizeof *f);
    f->g = g;
    f->slot = slot;
    request_row *r = &f->row;
    r->index = c->indices ? c->indices[slot] : (uint32_t)(c->first_index + slot);
    r->cls = workload_class_of(c->w, r->index);
    r->scheduled_us = c->due_us[slot];
    r->dispatched_us = r->sent_us = r->first_us = r->last_us = r->end_us = -1;
    r->prompt_tokens = r->output_tokens = -1;
    return f;
}

static void arm_due_timer(lg *g) {
    if (g->next_due >= g->cfg->n || g->stopping)
        return;
    int64_t wait = g->cfg->due_us[g->next_due] - lg_now(g);
    if (wait < 0)
        wait = 0;
    struct timeval tv = {(time_t)(wait / 1000000), (suseconds_t)(wait % 1000000)};
    evtimer_add(g->due_timer, &tv);
}

/* Starts every request whose time has come (at most 256 at once, so a
 * burst does not starve the sockets) and arms the timer for the next. */
static void dispatch_due(lg *g, int64_t now) {
    const loadgen_config *c = g->cfg;
    int started = 0;
    while (g->next_due < c->n && c->due_us[g->next_due] <= now) {
        inflight *f = new_inflight(g, g->next_due++);
        f->row.dispatched_us = now;
        if (c->concurrency > 0 && g->in_flight >= c->concurrency) {
            if (g->queue_tail)
                g->queue_tail->next = f;
            else
                g->queue_head = f;
            g->queue_tail = f;
        } else {
            start_request(g, f);
            started++;
        }
        if (started >= 256)
            break;
    }
    if (started && !g->h1)
        curl_glue_kick(g);
    arm_due_timer(g);
}

static void on_due(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    dispatch_due(g, lg_now(g));
}

void lg_check_done(lg *g) {
    if (g->next_due >= g->cfg->n && g->in_flight == 0 && !g->queue_head)
        event_base_loopbreak(g->base);
}

/* A stop signal (common/stop.h): stop scheduling; what is queued, in flight
 * or not yet due ends as a cancelled row. Every loop polls the flag the
 * handler sets (every 10 ms), which works the same with one thread or many. */
static void on_stop_poll(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    if (!stop_signal())
        return;
    g->stopping = 1;
    g->res->interrupted = 1;
    evtimer_del(g->due_timer);
    event_base_loopbreak(g->base);
}

/* After a stop signal every scheduled request still becomes a row: those in
 * flight, those queued behind the cap, and those not yet due. */
static void cancel_everything(lg *g) {
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
}

static void on_progress(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    fprintf(stderr, "\r%zu/%zu done, %d in flight, %.1f s   ", g->finished, g->cfg->n, g->in_flight,
            lg_now(g) / 1e6);
}

static void on_sample_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    CURL *e = sampler_metrics_start(&g->smp);
    if (e) {
        curl_multi_add_handle(g->multi, e);
        int running;
        curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    sampler_gpu_now(&g->smp, lg_now(g) / 1000.0);
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
    g.base = event_base_precise();
    curl_glue_init(&g);
    if (cfg->client == HTTP_CLIENT_BUILTIN) {
        size_t nh = 0;
        for (struct curl_slist *h = cfg->headers; h; h = h->next)
            nh++;
        const char **hv = xcalloc(nh + 1, sizeof *hv);
        nh = 0;
        for (struct curl_slist *h = cfg->headers; h; h = h->next)
            hv[nh++] = h->data;
        static const h1_handlers handlers = {h1_on_head, h1_on_body, h1_on_done};
        g.h1 = h1_client_new(g.base, cfg->endpoint, hv, &handlers);
        free(hv);
    }
    g.due_timer = evtimer_new(g.base, on_due, &g);
    g.stop_poll = event_new(g.base, -1, EV_PERSIST, on_stop_poll, &g);
    struct timeval poll_tv = {0, 10000};
    evtimer_add(g.stop_poll, &poll_tv);
    if (cfg->progress) {
        g.progress_timer = event_new(g.base, -1, EV_PERSIST, on_progress, &g);
        struct timeval tv = {1, 0};
        evtimer_add(g.progress_timer, &tv);
    }
    g.last_due = cfg->n ? cfg->due_us[cfg->n - 1] : 0;
    int sampling = cfg->out_dir && (cfg->metrics_url || cfg->gpu);
    if (sampling) {
        g.smp = (sampler){.dir = cfg->out_dir,
                          .url = cfg->metrics_url,
                          .headers = cfg->metrics_headers,
                          .metrics = &res->metrics,
                          .metrics_samples = &res->metrics_samples,
                          .gpu = cfg->gpu,
                          .gpu_series = &res->gpu,
                          .gpu_samples = &res->gpu_samples};
        g.sample_timer = event_new(g.base, -1, EV_PERSIST, on_sample_timer, &g);
        double iv = cfg->sample_interval_s > 0 ? cfg->sample_interval_s : 1.0;
        struct timeval tv = {(time_t)iv, (suseconds_t)((iv - (time_t)iv) * 1e6)};
        evtimer_add(g.sample_timer, &tv);
    }
    double cpu0 = cpu_seconds();
    g.t0 = cfg->t0_us ? cfg->t0_us : mono_us();
    if (sampling)
        on_sample_timer(-1, 0, &g); /* the sample at t=0 */
    if (stop_signal()) { /* stopped before it began (in the warmup, say): nothing is sent */
        g.stopping = 1;
        res->interrupted = 1;
    } else if (cfg->n > 0) {
        arm_due_timer(&g);
        event_base_dispatch(g.base);
    }
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
        sampler_close(&g.smp);
        event_free(g.sample_timer);
    }
    res->cpu_s = cpu_seconds() - cpu0;
    if (cfg->progress)
        fputc('\n', stderr);
    curl_glue_free(&g);
    h1_client_free(g.h1);
    event_free(g.due_timer);
    event_free(g.curl_timer);
    event_free(g.stop_poll);
    if (g.progress_timer)
        event_free(g.progress_timer);
    event_base_free(g.base);
    if (g.writing)
        res->write_error = row_writer_close(&g.rw);
    if (g.writing && !cfg->shared_rows && errorlog_write(cfg->out_dir, &res->errors) &&
        !res->write_error)
        res->write_error = errno ? errno : EIO;
    return 0;
}
