/* loadgen: the open-loop client on one libevent loop, one thread.
 *
 * Requests go out through servelab's own HTTP/1.1 client (client/h1.c) for
 * plain http://, or through libcurl's multi_socket API (https, proxies,
 * --http-client libcurl). Both hand the same three things back: the
 * response head, body bytes as they arrive, and how the transfer ended.
 * For curl the glue is the usual one: curl tells us which sockets to watch
 * (socket_cb) and when to call it back (timer_cb); libevent tells curl when
 * a socket is ready. Our own timer dispatches requests at their due times.
 * A request in flight owns an easy handle, its body, its SSE parser and its
 * chunk times; all of it is freed the moment the request's row is written,
 * so memory follows what is in flight, not what has finished. */
#include "client/loadgen.h"
#include "client/chunk.h"
#include "client/h1.h"
#include "client/rowwriter.h"
#include "client/sampler.h"
#include "client/sse.h"
#include "common/clock.h"
#include "common/stop.h"
#include "common/util.h"

#include <event2/event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct lg lg;

typedef struct inflight {
    lg *g;
    size_t slot; /* position in the schedule */
    request_row row;
    CURL *easy;  /* libcurl's transfer, or */
    h1_xfer *hx; /* our own client's */
    struct curl_slist *hdrs;
    char *body;
    sse_parser sse;
    int64_t *t_us;
    int32_t *tok;
    int n_chunks, cap_chunks;
    long last_completion; /* cumulative usage.completion_tokens seen so far */
    int saw_done, saw_finish, saw_usage, failed_parse, error_event;
    long usage_prompt, usage_completion;
    char finish[24];
    char errbody[512];
    size_t errlen;
    int status_known;
    /* a server that answers a streaming request with one whole JSON body */
    int whole_json;
    char *json;
    size_t json_len, json_cap;
    int64_t json_first_us;
    struct inflight *next;          /* waiting queue */
    struct inflight *aprev, *anext; /* active list (sent, not finished) */
} inflight;

struct lg {
    const loadgen_config *cfg;
    loadgen_result *res;
    struct event_base *base;
    CURLM *multi;
    h1_client *h1; /* NULL: requests go through libcurl */
    struct event *due_timer, *curl_timer, *stop_poll, *progress_timer;
    int64_t t0;
    size_t next_due; /* next schedule slot to dispatch */
    size_t finished; /* rows written */
    int in_flight;
    inflight *queue_head, *queue_tail; /* held back by the concurrency cap */
    inflight *active;                  /* sent and not finished */
    row_writer rw;
    int writing;
    int64_t last_due;
    int stopping;
    sampler smp;
    struct event *sample_timer;
};

typedef struct sock_ctx {
    struct event *ev;
    lg *g;
} sock_ctx;

static int64_t now_rel(const lg *g) {
    return mono_us() - g->t0;
}

static void check_done(lg *g);
static void start_request(lg *g, inflight *f);
static void dispatch_due(lg *g, int64_t now);

/* ---- per-request bookkeeping ---- */

/* Chunk times are kept until the row is written; token counts only once a
 * chunk carries other than one token (tok stays NULL while all are 1, which
 * is a third of the memory of a long stream). */
static void add_chunk(inflight *f, int64_t t, int32_t tokens) {
    if (f->n_chunks == f->cap_chunks) {
        f->cap_chunks = f->cap_chunks ? f->cap_chunks * 2 : 32;
        f->t_us = xrealloc(f->t_us, (size_t)f->cap_chunks * sizeof *f->t_us);
        if (f->tok)
            f->tok = xrealloc(f->tok, (size_t)f->cap_chunks * sizeof *f->tok);
    }
    if (tokens != 1 && !f->tok) {
        f->tok = xmalloc((size_t)f->cap_chunks * sizeof *f->tok);
        for (int i = 0; i < f->n_chunks; i++)
            f->tok[i] = 1;
    }
    f->t_us[f->n_chunks] = t;
    if (f->tok)
        f->tok[f->n_chunks] = tokens;
    f->n_chunks++;
}

static int32_t chunk_tokens(const inflight *f, int i) {
    return f->tok ? f->tok[i] : 1;
}

/* The server's own token counts, when it sends them. */
static void take_usage(inflight *f, const chunk_info *ci) {
    if (!ci->has_usage)
        return;
    f->saw_usage = 1;
    f->usage_completion = ci->completion_tokens;
    if (ci->prompt_tokens > 0)
        f->usage_prompt = ci->prompt_tokens;
}

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    inflight *f = ud;
    chunk_info ci;
    chunk_parse(data, len, &ci);
    if (ci.done) {
        f->saw_done = 1;
        return;
    }
    if (ci.malformed) {
        f->failed_parse = 1;
        return;
    }
    if (ci.error || !strcmp(type, "error")) {
        f->error_event = 1;
        return;
    }
    int64_t t = f->row.last_us; /* set by the write callback to this read's time */
    take_usage(f, &ci);
    if (ci.has_output) {
        int32_t k = 1;
        if (ci.output_tokens > 0)
            k = ci.output_tokens;
        else if (ci.has_usage && ci.completion_tokens > f->last_completion)
            k = (int32_t)(ci.completion_tokens - f->last_completion);
        if (f->row.first_us < 0)
            f->row.first_us = t;
        add_chunk(f, t, k);
    }
    if (ci.has_usage)
        f->last_completion = ci.completion_tokens;
    if (ci.finish_reason[0]) {
        f->saw_finish = 1;
        snprintf(f->finish, sizeof f->finish, "%s", ci.finish_reason);
    }
}

/* The response head: its status, and whether a 200 is a whole JSON answer
 * rather than an event stream. */
static void take_head(inflight *f, int status, const char *content_type) {
    f->row.http_status = status;
    f->status_known = 1;
    f->whole_json = status == 200 && content_type && strstr(content_type, "json") &&
                    !strstr(content_type, "event-stream");
}

/* Body bytes as they arrive; returns n, or 0 when the row is decided and
 * the transfer should stop. */
static size_t take_body(inflight *f, const char *p, size_t n, int64_t t) {
    /* times of one stream never go back, nor before the request left */
    if (t < f->row.last_us)
        t = f->row.last_us;
    if (t < f->row.sent_us)
        t = f->row.sent_us;
    if (f->whole_json) { /* kept whole, read when the transfer ends */
        if (f->json_len + n > f->g->cfg->max_event_bytes) {
            f->failed_parse = 1;
            return 0;
        }
        if (f->json_len == 0)
            f->json_first_us = t;
        if (f->json_len + n + 1 > f->json_cap) {
            f->json_cap = (f->json_len + n + 1) * 2;
            f->json = xrealloc(f->json, f->json_cap);
        }
        memcpy(f->json + f->json_len, p, n);
        f->json_len += n;
        return n;
    }
    if (f->row.http_status != 200) { /* keep the start of an error body */
        size_t room = sizeof f->errbody - 1 - f->errlen;
        size_t k = n < room ? n : room;
        memcpy(f->errbody + f->errlen, p, k);
        f->errlen += k;
        f->errbody[f->errlen] = 0;
        return n;
    }
    int64_t prev_last = f->row.last_us;
    f->row.last_us = t; /* on_event reads the arrival time from here */
    int before = f->n_chunks;
    if (sse_feed(&f->sse, p, n) < 0)
        f->failed_parse = 1;
    if (f->n_chunks == before)
        f->row.last_us = prev_last;
    if (f->failed_parse || f->error_event)
        return 0; /* abort the transfer: the row is decided */
    return n;
}

static size_t curl_on_write(char *p, size_t size, size_t nmemb, void *ud) {
    inflight *f = ud;
    if (!f->status_known) {
        long code = 0;
        char *ct = NULL;
        curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(f->easy, CURLINFO_CONTENT_TYPE, &ct);
        take_head(f, (int)code, ct);
    }
    return take_body(f, p, size * nmemb, now_rel(f->g));
}

/* How a transfer ended, whichever client carried it. */
typedef enum { XFER_OK, XFER_CONNECT, XFER_TIMEOUT, XFER_BROKEN } xfer_end;

static xfer_end curl_end(CURLcode rc) {
    switch (rc) {
    case CURLE_OK: return XFER_OK;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: return XFER_CONNECT;
    case CURLE_OPERATION_TIMEDOUT: return XFER_TIMEOUT;
    default: return XFER_BROKEN;
    }
}

static int classify(inflight *f, xfer_end end) {
    if (f->failed_parse)
        return ERR_MALFORMED;
    if (f->error_event)
        return ERR_HTTP;
    switch (end) {
    case XFER_OK: break;
    case XFER_CONNECT: return ERR_CONNECT;
    case XFER_TIMEOUT: return ERR_TIMEOUT;
    default: return f->row.http_status >= 400 ? ERR_HTTP : ERR_DISCONNECT;
    }
    if (f->row.http_status != 200)
        return ERR_HTTP;
    if (!f->saw_done && !f->saw_finish)
        return ERR_DISCONNECT; /* the stream ended before the answer did */
    return ERR_NONE;
}

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
    sse_release(&f->sse);
    free(f->t_us);
    free(f->tok);
    free(f);
}

/* The request is over: its row, its figures, its memory. */
static void finish_request(lg *g, inflight *f, int error) {
    const loadgen_config *c = g->cfg;
    request_row *r = &f->row;
    r->error = error;
    r->chunks = f->n_chunks;
    if (r->end_us < 0 && r->sent_us >= 0)
        r->end_us = now_rel(g);
    if (f->n_chunks == 0)
        r->last_us = -1;
    long counted = 0;
    for (int i = 0; i < f->n_chunks; i++)
        counted += chunk_tokens(f, i);
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
            g->res->rows.window_output_tokens += chunk_tokens(f, i);
        if (i > 0) {
            int32_t k_tok = chunk_tokens(f, i);
            float gap = (float)((f->t_us[i] - f->t_us[i - 1]) / 1000.0 / k_tok);
            for (int k = 0; k < k_tok; k++)
                rows_add_itl(&g->res->rows, gap);
        }
    }
    g->finished++;
    free_inflight(f);
}

/* A whole (non-streamed) completion: its output all arrives at once, so its
 * one "chunk" is timed at the body's first byte and carries every token. */
static void take_whole_json(inflight *f) {
    chunk_info ci;
    chunk_parse(f->json ? f->json : "", f->json_len, &ci);
    if (ci.malformed) {
        f->failed_parse = 1;
        return;
    }
    if (ci.error) {
        f->error_event = 1;
        return;
    }
    take_usage(f, &ci);
    if (ci.has_output) {
        int32_t k = ci.has_usage && ci.completion_tokens > 0 ? (int32_t)ci.completion_tokens : 1;
        f->row.first_us = f->row.last_us = f->json_first_us;
        add_chunk(f, f->json_first_us, k);
    }
    f->saw_finish = 1; /* the body is complete: nothing more is coming */
    if (ci.finish_reason[0])
        snprintf(f->finish, sizeof f->finish, "%s", ci.finish_reason);
}

/* ---- curl glue ---- */

/* A transfer is over: the row is decided and written, and a request held
 * back by the concurrency cap takes its place. */
static void transfer_ended(lg *g, inflight *f, xfer_end end) {
    f->row.end_us = now_rel(g);
    /* An unterminated last event is the server's own ending only when the
     * transfer ended cleanly; after a broken connection it is just a
     * cut-off fragment (the row says disconnect, not malformed). */
    if (end == XFER_OK && f->whole_json)
        take_whole_json(f);
    else if (end == XFER_OK)
        sse_finish(&f->sse);
    g->in_flight--;
    active_remove(g, f);
    finish_request(g, f, classify(f, end));
    if (g->queue_head && !g->stopping) {
        inflight *q = g->queue_head;
        g->queue_head = q->next;
        if (!g->queue_head)
            g->queue_tail = NULL;
        start_request(g, q);
    }
}

static void drain_messages(lg *g) {
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(g->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        if (g->smp.easy && m->easy_handle == g->smp.easy) {
            curl_multi_remove_handle(g->multi, g->smp.easy);
            sampler_metrics_done(&g->smp, m->data.result, now_rel(g) / 1000.0);
            continue;
        }
        inflight *f;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&f);
        CURLcode rc = m->data.result;
        curl_multi_remove_handle(g->multi, f->easy);
        if (!f->status_known) {
            long code = 0;
            curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &code);
            f->row.http_status = (int)code;
        }
        transfer_ended(g, f, curl_end(rc));
    }
    check_done(g);
}

/* ---- our own client's callbacks ---- */

static void h1_on_head(void *ud, int status, const char *content_type) {
    take_head(ud, status, content_type);
}

/* Body bytes; then, if a request fell due meanwhile, it goes out now
 * rather than after the rest of this wakeup's sockets (at 5,000 streams
 * one wakeup can hold thousands of them, and the timer would wait for
 * them all). One comparison per read. */
static size_t h1_on_body(void *ud, const char *p, size_t n, int64_t arrived_us) {
    inflight *f = ud;
    lg *g = f->g;
    size_t used = take_body(f, p, n, arrived_us - g->t0);
    if (g->next_due < g->cfg->n && !g->stopping) {
        int64_t now = now_rel(g);
        if (g->cfg->due_us[g->next_due] <= now)
            dispatch_due(g, now);
    }
    return used;
}

static void h1_on_done(void *ud, h1_result r) {
    inflight *f = ud;
    lg *g = f->g;
    f->hx = NULL; /* gone with this call */
    xfer_end end = r == H1_OK        ? XFER_OK
                   : r == H1_CONNECT ? XFER_CONNECT
                   : r == H1_TIMEOUT ? XFER_TIMEOUT
                                     : XFER_BROKEN;
    transfer_ended(g, f, end);
    check_done(g);
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg) {
    lg *g = arg;
    int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    curl_multi_socket_action(g->multi, fd, flags, &running);
    drain_messages(g);
}

static int socket_cb(CURL *e, curl_socket_t s, int what, void *userp, void *socketp) {
    (void)e;
    lg *g = userp;
    sock_ctx *sc = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sc) {
            event_free(sc->ev);
            free(sc);
            curl_multi_assign(g->multi, s, NULL);
        }
        return 0;
    }
    short ev =
        EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
    if (!sc) {
        sc = xcalloc(1, sizeof *sc);
        sc->g = g;
        curl_multi_assign(g->multi, s, sc);
    } else {
        event_free(sc->ev);
    }
    sc->ev = event_new(g->base, s, ev, on_socket_event, g);
    event_add(sc->ev, NULL);
    return 0;
}

static void on_curl_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    int running;
    curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_messages(g);
}

static int timer_cb(CURLM *m, long timeout_ms, void *userp) {
    (void)m;
    lg *g = userp;
    if (timeout_ms < 0) {
        evtimer_del(g->curl_timer);
    } else {
        struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        evtimer_add(g->curl_timer, &tv);
    }
    return 0;
}

/* ---- dispatch ---- */

static void start_request(lg *g, inflight *f) {
    const loadgen_config *c = g->cfg;
    size_t len;
    f->body = workload_body(c->w, f->row.index, &c->body, &len);
    char idh[64];
    snprintf(idh, sizeof idh, "X-Request-Id: ");
    request_id_format(idh + strlen(idh), sizeof idh - strlen(idh), f->row.index);
    sse_init(&f->sse, c->max_event_bytes, on_event, f);
    f->row.sent_us = now_rel(g);
    g->in_flight++;
    active_add(g, f);
    if (g->h1) {
        f->hx = h1_start(g->h1, idh, f->body, len, c->timeout_s, f);
        return;
    }
    f->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    f->hdrs = curl_slist_append(f->hdrs, "Accept: text/event-stream");
    f->hdrs = curl_slist_append(f->hdrs, "Expect:");
    f->hdrs = curl_slist_append(f->hdrs, idh);
    for (struct curl_slist *h = c->headers; h; h = h->next)
        f->hdrs = curl_slist_append(f->hdrs, h->data);
    CURL *e = curl_easy_init();
    f->easy = e;
    curl_easy_setopt(e, CURLOPT_URL, c->endpoint);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, f->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->hdrs);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(e, CURLOPT_PRIVATE, f);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL);
    if (c->timeout_s > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->timeout_s * 1000));
    if (c->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    curl_multi_add_handle(g->multi, e);
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
    int64_t wait = g->cfg->due_us[g->next_due] - now_rel(g);
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
    if (started && !g->h1) {
        int running;
        curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        drain_messages(g);
    }
    arm_due_timer(g);
}

static void on_due(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    lg *g = arg;
    dispatch_due(g, now_rel(g));
}

static void check_done(lg *g) {
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
        f->row.end_us = now_rel(g);
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
            now_rel(g) / 1e6);
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
    sampler_gpu_now(&g->smp, now_rel(g) / 1000.0);
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
    g.multi = curl_multi_init();
    curl_multi_setopt(g.multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(g.multi, CURLMOPT_SOCKETDATA, &g);
    curl_multi_setopt(g.multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(g.multi, CURLMOPT_TIMERDATA, &g);
    curl_multi_setopt(g.multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    curl_multi_setopt(g.multi, CURLMOPT_MAXCONNECTS, 100000L);
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
    g.curl_timer = evtimer_new(g.base, on_curl_timer, &g);
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
    if (cfg->n > 0) {
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
        double t_end = now_rel(&g) / 1000.0;
        sampler_metrics_now(&g.smp, t_end);
        sampler_gpu_now(&g.smp, t_end);
        sampler_close(&g.smp);
        event_free(g.sample_timer);
    }
    res->cpu_s = cpu_seconds() - cpu0;
    if (cfg->progress)
        fputc('\n', stderr);
    curl_multi_cleanup(g.multi);
    h1_client_free(g.h1);
    event_free(g.due_timer);
    event_free(g.curl_timer);
    event_free(g.stop_poll);
    if (g.progress_timer)
        event_free(g.progress_timer);
    event_base_free(g.base);
    if (g.writing)
        res->write_error = row_writer_close(&g.rw);
    return 0;
}
