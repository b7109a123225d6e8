/* h1: the HTTP/1.1 client for plain http:// (see h1.h for why it exists):
 * its connections, the idle pool, and a transfer from start to end up to
 * its answer, which h1_read.c reads off the socket (h1_internal.h holds
 * what the two share).
 *
 * A connection is CONNECTING (trying the resolved addresses in turn),
 * then carries one transfer at a time, then waits in the idle pool for the
 * next one (keep-alive) or is closed. An idle connection keeps its read
 * event: a server closing it is noticed at once and the connection leaves
 * the pool. A request that meets a dead pooled connection before any byte
 * of its answer is retried once on a fresh one, as libcurl does. */
#include "client/h1_internal.h"
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
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

void h1_client_free(h1_client *c) {
    if (!c)
        return;
    while (c->idle)
        h1_conn_close(c->idle);
    while (c->pre)
        h1_conn_close(c->pre);
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
void h1_conn_close(h1_conn *k) {
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
        h1_conn_close(k);
    }
    return NULL;
}

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
    k->rev = event_new(c->base, k->fd, EV_READ | EV_PERSIST, h1_read_on_readable, k);
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
void h1_xfer_finish(h1_xfer *x, h1_result r, int reuse) {
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
            h1_conn_close(k);
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
int h1_xfer_retry_fresh(h1_xfer *x) {
    h1_conn *k = x->conn;
    if (!k || !k->reused || x->retried || x->got > 0)
        return 0;
    x->retried = 1;
    k->x = NULL;
    x->conn = NULL;
    h1_conn_close(k);
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
        h1_conn_close(k);
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
            h1_xfer_finish(x, is_client_errno(k->err) ? H1_CLIENT : H1_CONNECT, 0);
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
    h1_xfer_finish(x, x->has_pending ? x->pending : H1_TIMEOUT, 0);
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
        h1_conn_close(k);
    }
    xfer_free(x);
}
