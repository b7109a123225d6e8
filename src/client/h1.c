/* h1: the HTTP/1.1 client for plain http:// (see h1.h for why it exists).
 *
 * A connection is CONNECTING (trying the resolved addresses in turn),
 * then carries one transfer at a time, then waits in the idle pool for the
 * next one (keep-alive) or is closed. An idle connection keeps its read
 * event: a server closing it is noticed at once and the connection leaves
 * the pool. A request that meets a dead pooled connection before any byte
 * of its answer is retried once on a fresh one, as libcurl does.
 *
 * Reading: one recv() per readiness into a buffer the whole client shares
 * (bodies are handed to the callback straight from it), so an in-flight
 * stream costs its structs and, while its head is split across reads, the
 * head's bytes. The response is parsed by h1parse.c: a head that came in
 * one read is parsed where it lies; one split across reads is gathered a
 * line at a time (so no body byte is copied) and parsed once whole. The
 * body decoder says where the body bytes lie in the read, and those go to
 * the callback as they are. A success that comes while the request is
 * still being written is no answer to it (unasked_head): it is read and
 * dropped, and the answer after it taken. */
#include "client/h1.h"
#include "protocol/h1parse.h"
#include "client/h1target.h"
#include "common/clock.h"
#include "common/util.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define H1_READ_BUF (64 * 1024)

typedef struct h1_conn h1_conn;

struct h1_client {
    struct event_base *base;
    h1_handlers h;
    struct addrinfo *addrs; /* NULL: the host did not resolve */
    int n_addrs, good_addr; /* the address that last connected, tried first */
    h1_conn *pre;           /* h1_preconnect's connections not yet open */
    int preconnecting;      /* how many */
    int no_urgency;         /* h1_urgency(c, 0): transfers start at the ordinary priority */
    char *head_start;       /* "POST /path HTTP/1.1\r\nHost: ...\r\n<headers>" */
    size_t head_start_len;
    h1_conn *idle;      /* the keep-alive pool */
    int64_t arrived_us; /* the current read's arrival (monotonic) */
    char buf[H1_READ_BUF];
};

struct h1_conn {
    h1_client *c;
    int fd;
    int addr_i;               /* address being connected to */
    int connected;            /* the TCP handshake completed */
    int reused;               /* carried a transfer before this one */
    int pooled;               /* in the idle pool */
    int err;                  /* errno of the last address that failed */
    int preconnect;           /* opened by h1_preconnect, for the pool; still connecting */
    int64_t connect_start_us; /* the first connect() of this connection (0: none yet) */
    int64_t connect_done_us;  /* when its handshake was seen complete (0: not yet) */
    struct event *rev, *wev;
    h1_xfer *x; /* NULL while idle */
    h1_conn *next_idle, *prev_idle;
};

struct h1_xfer {
    h1_client *c;
    h1_conn *conn;
    void *ud;
    struct event *timer;
    h1_result pending; /* a failure decided in h1_start, reported from the timer */
    int has_pending;
    int os_errno; /* the system's error behind a failure, for `done` */
    int retried;
    /* the request: head (owned) then body (the caller's) */
    char *head;
    size_t head_len;
    const char *body;
    size_t body_len;
    size_t sent;
    /* the response */
    int in_body;  /* the final head was taken; `decoder` reads what follows */
    int dropping; /* that head and its body are an answer nobody asked for (unasked_head) */
    char *rhead;  /* a head split across reads, gathered (rhead_len 0: none) */
    size_t rhead_len, rhead_cap;
    size_t got; /* response bytes seen, head included */
    int keep_alive;
    h1_times t;
    h1p_body decoder; /* the response body's framing */
};

/* ---- client ---- */

h1_client *h1_client_new(struct event_base *base, const char *url, const char *const *headers,
                         const h1_handlers *h) {
    h1_client *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->h = *h;
    h1_target t;
    h1_target_init(&t, url, headers);
    c->addrs = t.addrs;
    c->n_addrs = t.n_addrs;
    c->head_start = t.head_start;
    c->head_start_len = t.head_start_len;
    return c;
}

static void conn_close(h1_conn *k);

void h1_client_free(h1_client *c) {
    if (!c)
        return;
    while (c->idle)
        conn_close(c->idle);
    while (c->pre)
        conn_close(c->pre);
    if (c->addrs)
        freeaddrinfo(c->addrs);
    free(c->head_start);
    free(c);
}

/* ---- connections ---- */

static void idle_remove(h1_conn *k) {
    h1_client *c = k->c;
    k->pooled = 0;
    if (k->prev_idle)
        k->prev_idle->next_idle = k->next_idle;
    else if (c->idle == k)
        c->idle = k->next_idle;
    if (k->next_idle)
        k->next_idle->prev_idle = k->prev_idle;
    k->next_idle = k->prev_idle = NULL;
}

static void idle_add(h1_conn *k) {
    h1_client *c = k->c;
    k->pooled = 1;
    k->next_idle = c->idle;
    k->prev_idle = NULL;
    if (c->idle)
        c->idle->prev_idle = k;
    c->idle = k;
}

/* Read priorities (h1.h): 0 for a transfer awaiting its first token, 1
 * for the rest. Fails harmlessly on a base with one priority. */
static void conn_priority(h1_conn *k, int urgent) {
    if (urgent && k->c->no_urgency)
        urgent = 0;
    if (k->rev && event_base_get_npriorities(k->c->base) > 1)
        event_priority_set(k->rev, urgent ? 0 : 1);
}

/* h1_preconnect's list of connections still connecting (the pool's links:
 * such a connection is not pooled yet). */
static void pre_add(h1_conn *k) {
    h1_client *c = k->c;
    k->preconnect = 1;
    k->next_idle = c->pre;
    k->prev_idle = NULL;
    if (c->pre)
        c->pre->prev_idle = k;
    c->pre = k;
    c->preconnecting++;
}

static void pre_remove(h1_conn *k) {
    h1_client *c = k->c;
    k->preconnect = 0;
    c->preconnecting--;
    if (k->prev_idle)
        k->prev_idle->next_idle = k->next_idle;
    else
        c->pre = k->next_idle;
    if (k->next_idle)
        k->next_idle->prev_idle = k->prev_idle;
    k->next_idle = k->prev_idle = NULL;
}

/* Closes a connection that carries no transfer. */
static void conn_close(h1_conn *k) {
    if (k->pooled)
        idle_remove(k);
    if (k->preconnect)
        pre_remove(k);
    if (k->rev)
        event_free(k->rev);
    if (k->wev)
        event_free(k->wev);
    if (k->fd >= 0)
        close(k->fd);
    free(k);
}

/* Whether nothing waits to be read on an idle connection. Anything there
 * (bytes, or the server's FIN) came before our request: an answer nobody
 * asked for, which would be taken as the next request's, or a close. */
static int conn_quiet(const h1_conn *k) {
    char b;
    ssize_t r = recv(k->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A pooled connection for the next transfer, or NULL. The read event
 * closes an idle connection that speaks, but only once the loop polls: a
 * request started before that (from another transfer's `done`) looks
 * first, one recv() per reuse, and such a connection is closed unused. */
static h1_conn *idle_take(h1_client *c) {
    while (c->idle) {
        h1_conn *k = c->idle;
        idle_remove(k);
        if (conn_quiet(k))
            return k;
        conn_close(k);
    }
    return NULL;
}

static void on_readable(evutil_socket_t fd, short what, void *arg);
static void on_writable(evutil_socket_t fd, short what, void *arg);

/* Whether a failure to connect is this machine's own: no descriptor, no
 * memory, no local port left. The server is not to blame, and no other
 * address of it would do better. */
static int is_client_errno(int e) {
    return e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOBUFS || e == EADDRNOTAVAIL;
}

/* Opens a socket to address `i` and starts connecting; -1 with k->err if it
 * failed at once (the caller tries the next address). */
static int conn_open(h1_conn *k, int i) {
    h1_client *c = k->c;
    struct addrinfo *a = c->addrs;
    for (int j = 0; j < i; j++)
        a = a->ai_next;
    k->addr_i = i;
    k->fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (k->fd < 0) {
        k->err = errno;
        return -1;
    }
    int one = 1;
    setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(k->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    if (!k->connect_start_us)
        k->connect_start_us = mono_us();
    int rc = connect(k->fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno != EINPROGRESS) {
        k->err = errno;
        close(k->fd);
        k->fd = -1;
        return -1;
    }
    /* Over loopback (and often a LAN) the handshake is over when connect()
     * returns: look at once, so that its length is the handshake's and not
     * how long the loop took to come back to this socket. */
    struct pollfd p = {k->fd, POLLOUT, 0};
    if (rc == 0 || (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && !(p.revents & POLLERR)))
        k->connect_done_us = mono_us();
    k->rev = event_new(c->base, k->fd, EV_READ | EV_PERSIST, on_readable, k);
    k->wev = event_new(c->base, k->fd, EV_WRITE | EV_PERSIST, on_writable, k);
    event_add(k->wev, NULL);
    return 0;
}

/* Tries the addresses not yet tried (the `tried`-th after the one that last
 * connected, wrapping, each once); -1 when none could even start, or when
 * this machine ran out of something (k->err says which). */
static int conn_try_from(h1_conn *k, int tried) {
    h1_client *c = k->c;
    for (; tried < c->n_addrs; tried++) {
        if (k->rev) {
            event_free(k->rev);
            event_free(k->wev);
            k->rev = k->wev = NULL;
        }
        if (k->fd >= 0) {
            close(k->fd);
            k->fd = -1;
        }
        if (conn_open(k, (c->good_addr + tried) % c->n_addrs) == 0)
            return tried;
        if (is_client_errno(k->err))
            return -1;
    }
    return -1;
}

/* ---- transfers ---- */

static void xfer_free(h1_xfer *x) {
    if (x->timer)
        event_free(x->timer);
    free(x->head);
    free(x->rhead);
    free(x);
}

/* The end of a transfer: its connection goes back to the pool or is
 * closed, then `done` is called and the transfer is gone. */
static void finish(h1_xfer *x, h1_result r, int reuse) {
    h1_conn *k = x->conn;
    h1_client *c = x->c;
    if (x->sent < x->head_len + x->body_len)
        reuse = 0; /* answered before our body was all sent: the rest would follow */
    if (k) {
        k->x = NULL;
        x->conn = NULL;
        if (reuse) {
            event_del(k->wev);
            k->reused = 1;
            conn_priority(k, 0);
            idle_add(k);
        } else {
            conn_close(k);
        }
    }
    void *ud = x->ud;
    int os_errno = x->os_errno;
    h1_times t = x->t;
    xfer_free(x);
    if (c->h.phases)
        c->h.phases(ud, &t);
    c->h.done(ud, r, os_errno);
}

static void reset_response(h1_xfer *x) {
    x->in_body = 0;
    x->dropping = 0;
    x->rhead_len = 0;
    x->got = 0;
    x->sent = 0;
    x->os_errno = 0;
    x->t = (h1_times){-1, -1, -1};
}

static void attach_new_conn(h1_xfer *x);

/* A pooled connection died before any answer: once, try a fresh one. */
static int retry_fresh(h1_xfer *x) {
    h1_conn *k = x->conn;
    if (!k || !k->reused || x->retried || x->got > 0)
        return 0;
    x->retried = 1;
    k->x = NULL;
    x->conn = NULL;
    conn_close(k);
    reset_response(x);
    attach_new_conn(x);
    return 1;
}

static void send_request(h1_xfer *x) {
    h1_conn *k = x->conn;
    while (x->sent < x->head_len + x->body_len) {
        struct iovec iov[2];
        int n = 0;
        if (x->sent < x->head_len)
            iov[n++] = (struct iovec){x->head + x->sent, x->head_len - x->sent};
        size_t boff = x->sent > x->head_len ? x->sent - x->head_len : 0;
        if (x->body_len > boff)
            iov[n++] = (struct iovec){(char *)x->body + boff, x->body_len - boff};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        int64_t handed = mono_us(); /* loopback delivers inside the call: before it, then */
        ssize_t w = sendmsg(k->fd, &m, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                event_add(k->wev, NULL);
                return;
            }
            /* The peer is gone; its answer (or EOF) is what the read side
             * will see, so stop writing and let it decide. */
            break;
        }
        x->sent += (size_t)w;
        if (x->t.written_us < 0 && x->sent == x->head_len + x->body_len)
            x->t.written_us = handed;
    }
    event_del(k->wev);
}

/* One of h1_preconnect's connections finished connecting: into the pool,
 * or closed when it failed. */
static void preconnected(h1_conn *k, int fd) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    pre_remove(k);
    if (err) {
        conn_close(k);
        return;
    }
    k->connected = 1;
    k->reused = 1; /* a pooled connection: it may die while idle, and is retried then */
    event_del(k->wev);
    conn_priority(k, 0);
    event_add(k->rev, NULL);
    idle_add(k);
}

/* The handshake's length: the kernel's own measure of it (the round trip
 * from our SYN to the server's SYN-ACK, TCP_INFO's first RTT sample, in µs)
 * when it has one, else from connect() to when we saw it done, which also
 * holds the system call's and the loop's own time. */
static int64_t handshake_us(const h1_conn *k) {
    int64_t seen = (k->connect_done_us ? k->connect_done_us : mono_us()) - k->connect_start_us;
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (getsockopt(k->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_rtt > 0 &&
        (int64_t)ti.tcpi_rtt <= seen)
        return ti.tcpi_rtt;
    return seen;
}

/* The handshake of a transfer's own connection is over: reads start, and
 * its length is the transfer's connect time. */
static void conn_established(h1_conn *k) {
    h1_xfer *x = k->x;
    k->connected = 1;
    k->c->good_addr = k->addr_i;
    x->t.connect_us = handshake_us(k);
    conn_priority(k, 1);
    event_add(k->rev, NULL);
}

static void on_writable(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    h1_conn *k = arg;
    h1_xfer *x = k->x;
    if (!x && k->preconnect) {
        preconnected(k, fd);
        return;
    }
    if (!x) {
        event_del(k->wev);
        return;
    }
    if (!k->connected) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            h1_client *c = k->c;
            int tried = (k->addr_i - c->good_addr + c->n_addrs) % c->n_addrs + 1;
            k->err = err;
            if (!is_client_errno(err) && conn_try_from(k, tried) >= 0)
                return;
            x->os_errno = k->err;
            finish(x, is_client_errno(k->err) ? H1_CLIENT : H1_CONNECT, 0);
            return;
        }
        conn_established(k);
    }
    send_request(x);
}

static void attach_new_conn(h1_xfer *x) {
    h1_client *c = x->c;
    h1_conn *k = xcalloc(1, sizeof *k);
    k->c = c;
    k->fd = -1;
    k->x = x;
    x->conn = k;
    if (conn_try_from(k, 0) < 0) {
        x->conn = NULL;
        x->os_errno = k->err;
        x->pending = is_client_errno(k->err) ? H1_CLIENT : H1_CONNECT;
        free(k);
        x->has_pending = 1;
        struct timeval now = {0, 0};
        event_add(x->timer, &now);
    } else if (k->connect_done_us) {
        conn_established(k); /* connected already: the request goes now, not a loop later */
        send_request(x);
    }
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    h1_xfer *x = arg;
    finish(x, x->has_pending ? x->pending : H1_TIMEOUT, 0);
}

h1_xfer *h1_start(h1_client *c, const char *extra_header, const char *body, size_t len,
                  double timeout_s, void *ud) {
    h1_xfer *x = xcalloc(1, sizeof *x);
    x->c = c;
    x->ud = ud;
    x->body = body;
    x->body_len = len;
    x->t = (h1_times){-1, -1, -1};
    size_t extra = extra_header ? strlen(extra_header) + 2 : 0;
    x->head = xmalloc(c->head_start_len + extra + 48);
    memcpy(x->head, c->head_start, c->head_start_len);
    char *w = x->head + c->head_start_len;
    if (extra_header)
        w += sprintf(w, "%s\r\n", extra_header);
    w += sprintf(w, "Content-Length: %zu\r\n\r\n", len);
    x->head_len = (size_t)(w - x->head);
    x->timer = evtimer_new(c->base, on_timer, x);
    if (timeout_s > 0) {
        /* from now, not from when this loop pass began (libevent's cached
         * time): the row's e2e counts from the send, and a busy pass would
         * otherwise end the request early by the pass's length */
        event_base_update_cache_time(c->base);
        struct timeval tv = {(time_t)timeout_s,
                             (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)};
        event_add(x->timer, &tv);
    }
    if (!c->addrs) {
        x->pending = H1_CONNECT;
        x->has_pending = 1;
        struct timeval now = {0, 0};
        event_add(x->timer, &now);
        return x;
    }
    h1_conn *k = idle_take(c);
    if (k) {
        k->x = x;
        x->conn = k;
        x->t.connect_us = 0;
        conn_priority(k, 1);
        send_request(x);
    } else {
        attach_new_conn(x);
    }
    return x;
}

void h1_preconnect(h1_client *c, int n) {
    for (int i = 0; i < n && c->addrs; i++) {
        h1_conn *k = xcalloc(1, sizeof *k);
        k->c = c;
        k->fd = -1;
        if (conn_try_from(k, 0) < 0) {
            free(k);
            break; /* out of descriptors or ports: requests will say so themselves */
        }
        pre_add(k);
    }
}

int h1_preconnecting(const h1_client *c) {
    return c->preconnecting;
}

void h1_urgency(h1_client *c, int on) {
    c->no_urgency = !on;
}

void h1_settle(h1_xfer *x) {
    if (x->conn)
        conn_priority(x->conn, 0);
}

void h1_cancel(h1_xfer *x) {
    h1_conn *k = x->conn;
    if (k) {
        k->x = NULL;
        conn_close(k);
    }
    xfer_free(x);
}

/* ---- the response ---- */

/* Appends p[0..n) to the gathered head. */
static void rhead_append(h1_xfer *x, const char *p, size_t n) {
    if (x->rhead_len + n > x->rhead_cap) {
        size_t cap = x->rhead_cap ? x->rhead_cap : 512;
        while (cap < x->rhead_len + n)
            cap *= 2;
        x->rhead = xrealloc(x->rhead, cap);
        x->rhead_cap = cap;
    }
    memcpy(x->rhead + x->rhead_len, p, n);
    x->rhead_len += n;
}

/* Adds p[0..n) to a head an earlier read began, up to the line that ends
 * it: returns the bytes of p used, with *len what h1p_parse_head said. */
static size_t gather_head(h1_xfer *x, const char *p, size_t n, h1p_head *h, long *len) {
    size_t used = 0;
    do {
        size_t from = x->rhead_len, room = H1P_MAX_HEAD + 1 - from;
        const char *lf = memchr(p + used, '\n', n - used);
        size_t take = lf ? (size_t)(lf - p) + 1 - used : n - used;
        if (take > room)
            take = room; /* the parser then says it is too long */
        rhead_append(x, p + used, take);
        used += take;
        *len = h1p_parse_head(x->rhead, x->rhead_len, from, h);
    } while (*len == H1P_INCOMPLETE && used < n);
    return used;
}

/* A field's value cut in place, in the head's own bytes (at its CR, LF or
 * NUL); NULL when the head has no such field. */
static char *cut_value(char *head, const char *value, size_t len) {
    if (!value)
        return NULL;
    char *v = head + (value - head);
    v[len] = 0;
    return v;
}

/* Whether a final head cannot be the answer to the transfer's request: a
 * success that came before the request's last byte was handed to the
 * kernel. An OpenAI server reads the whole prompt before it answers (an
 * error such as 413 may come early, and is taken), so such a 2xx is a
 * server answering out of turn, most likely a second answer to the
 * request before on this kept-alive connection; taken, it would be this
 * request's answer (the same bytes arriving after the last write cannot be
 * told apart in HTTP/1.1, and are taken). */
static int unasked_head(const h1_xfer *x, const h1p_head *h) {
    return h->status >= 200 && h->status < 300 && x->sent < x->head_len + x->body_len;
}

/* The final head: the caller learns of it, the body decoder starts; an
 * unasked one's body is read and dropped, and the head after it taken. */
static void take_final_head(h1_xfer *x, char *head, const h1p_head *h) {
    char *ct = cut_value(head, h->content_type, h->content_type_len);
    char *ce = cut_value(head, h->content_encoding, h->content_encoding_len);
    x->keep_alive = h->keep_alive;
    h1p_body_start(&x->decoder, h);
    x->in_body = 1;
    x->dropping = unasked_head(x, h);
    if (x->dropping)
        return;
    if (x->t.first_byte_us < 0)
        x->t.first_byte_us = x->c->arrived_us; /* after a dropped answer: this read's */
    x->c->h.head(x->ud, h->status, ct, ce);
}

/* Takes response-head bytes from p[0..n): returns the bytes used, or -1
 * when the answer is not HTTP/1.x (or its head is too long). A head whole
 * in this read is parsed where it lies, else gathered in x->rhead. */
static long head_bytes(h1_xfer *x, char *p, size_t n) {
    h1p_head h;
    char *head = p;
    long len;
    size_t used;
    if (!x->rhead_len) {
        len = h1p_parse_head(p, n, 0, &h);
        if (len == H1P_INCOMPLETE)
            rhead_append(x, p, n);
        used = len > 0 ? (size_t)len : n;
    } else {
        head = x->rhead;
        used = gather_head(x, p, n, &h, &len);
        if (len != H1P_INCOMPLETE)
            x->rhead_len = 0;
    }
    if (len < 0)
        return -1;
    if (len > 0 && h.status >= 200)
        take_final_head(x, head, &h); /* a 1xx head is skipped: the real one follows */
    return (long)used;
}

/* Takes n received bytes. Returns 0 to go on reading, or 1 when the
 * transfer was finished (and must not be touched again). */
static int take_bytes(h1_xfer *x, char *p, size_t n) {
    size_t i = 0;
    x->got += n;
    while (i < n) {
        long used;
        if (!x->in_body) {
            used = head_bytes(x, p + i, n - i);
            if (used < 0) {
                finish(x, H1_BROKEN, 0);
                return 1;
            }
        } else {
            const char *data;
            size_t len;
            used = h1p_body_feed(&x->decoder, p + i, n - i, &data, &len);
            if (used < 0) {
                finish(x, H1_BROKEN, 0);
                return 1;
            }
            if (len && !x->dropping && x->c->h.body(x->ud, data, len, x->c->arrived_us) != len) {
                finish(x, H1_ABORTED, 0);
                return 1;
            }
        }
        i += (size_t)used;
        if (x->in_body && h1p_body_done(&x->decoder) && x->dropping) {
            x->in_body = x->dropping = 0; /* the request's own answer comes next */
            x->t.first_byte_us = -1;
        } else if (x->in_body && h1p_body_done(&x->decoder)) {
            finish(x, H1_OK, x->keep_alive && i == n);
            return 1;
        }
    }
    return 0;
}

/* recv() with the kernel's receive time of what it returned, converted
 * from CLOCK_REALTIME (the only clock socket stamps use) to our monotonic
 * clock; the read's own time when there is no stamp or it is implausible. */
static ssize_t recv_stamped(int fd, char *buf, size_t cap, int64_t *arrived_us) {
    struct iovec iov = {buf, cap};
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(fd, &m, 0);
    if (n <= 0)
        return n;
    struct timespec real, mono;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    int64_t now = (int64_t)mono.tv_sec * 1000000 + mono.tv_nsec / 1000;
    *arrived_us = now;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
            continue;
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        int64_t behind =
            ((int64_t)real.tv_sec - ts.tv_sec) * 1000000 + (real.tv_nsec - ts.tv_nsec) / 1000;
        if (behind >= 0 && behind < 60000000) /* a wall-clock step would not be */
            *arrived_us = now - behind;
    }
    return n;
}

static void on_readable(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    h1_conn *k = arg;
    h1_client *c = k->c;
    h1_xfer *x = k->x;
    for (;;) {
        ssize_t n = recv_stamped(fd, c->buf, sizeof c->buf, &c->arrived_us);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (!x) { /* an idle connection: closed, reset, or talking out of turn */
            conn_close(k);
            return;
        }
        if (n <= 0) {
            if (n < 0)
                x->os_errno = errno;
            if (retry_fresh(x))
                return;
            int clean_end =
                n == 0 && x->in_body && !x->dropping && h1p_body_until_close(&x->decoder);
            finish(x, clean_end ? H1_OK : H1_BROKEN, 0);
            return;
        }
        if (x->got == 0)
            x->t.first_byte_us = c->arrived_us;
        if (take_bytes(x, c->buf, (size_t)n))
            return;
        if ((size_t)n < sizeof c->buf)
            return; /* level-triggered: the rest, if any, wakes us again */
    }
}
