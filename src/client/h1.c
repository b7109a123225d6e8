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
 * stream costs its structs and, until its head is whole, the head's bytes.
 * The response head is kept until "\r\n\r\n" (64 KiB at most); chunked
 * framing is decoded byte by byte for the size lines and in bulk for the
 * data, so no body byte is copied here. */
#include "client/h1.h"
#include "common/clock.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define H1_READ_BUF (64 * 1024)
#define H1_MAX_HEAD (64 * 1024)

typedef struct h1_conn h1_conn;

struct h1_client {
    struct event_base *base;
    h1_handlers h;
    struct addrinfo *addrs; /* NULL: the host did not resolve */
    int n_addrs, good_addr; /* the address that last connected, tried first */
    char *head_start;       /* "POST /path HTTP/1.1\r\nHost: ...\r\n<headers>" */
    size_t head_start_len;
    h1_conn *idle;      /* the keep-alive pool */
    int64_t arrived_us; /* the current read's arrival (monotonic) */
    char buf[H1_READ_BUF];
};

typedef enum {
    R_HEAD,    /* collecting the response head */
    R_LENGTH,  /* Content-Length body */
    R_CHUNKED, /* chunked body */
    R_CLOSE    /* body until the server closes */
} read_state;

typedef enum {
    C_SIZE,    /* hex digits of a chunk size */
    C_EXT,     /* chunk extension, skipped to the end of the line */
    C_SIZE_LF, /* LF after the size line's CR */
    C_DATA,    /* chunk data */
    C_DATA_CR, /* CR after the data */
    C_DATA_LF, /* LF after the data */
    C_TRAILER  /* trailer lines up to an empty one */
} chunk_state;

struct h1_conn {
    h1_client *c;
    int fd;
    int addr_i;    /* address being connected to */
    int connected; /* the TCP handshake completed */
    int reused;    /* carried a transfer before this one */
    int pooled;    /* in the idle pool */
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
    int retried;
    /* the request: head (owned) then body (the caller's) */
    char *head;
    size_t head_len;
    const char *body;
    size_t body_len;
    size_t sent;
    /* the response */
    read_state rs;
    char *rhead;
    size_t rhead_len, rhead_cap;
    size_t got; /* response bytes seen, head included */
    int status, keep_alive;
    long long left; /* Content-Length bytes or chunk bytes still to come */
    chunk_state cs;
    int size_digits;
    size_t trailer_line;
};

/* ---- URL and environment ---- */

int h1_usable(const char *url) {
    if (strncasecmp(url, "http://", 7))
        return 0;
    const char *auth = url + 7, *end = auth + strcspn(auth, "/?#");
    if (memchr(auth, '@', (size_t)(end - auth)))
        return 0;
    const char *const proxies[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++) {
        const char *v = getenv(proxies[i]);
        if (v && *v)
            return 0;
    }
    return 1;
}

/* Splits http://host[:port][/path] (host may be [v6]); returns -1 when the
 * URL is not of that form. */
static int split_url(const char *url, char *host, size_t hostlen, char *port, size_t portlen,
                     const char **path) {
    const char *p = url + 7, *end = p + strcspn(p, "/?#");
    const char *hs = p, *he, *colon = NULL;
    if (*p == '[') {
        hs = p + 1;
        he = memchr(hs, ']', (size_t)(end - hs));
        if (!he)
            return -1;
        if (he + 1 < end && he[1] == ':')
            colon = he + 1;
    } else {
        colon = memchr(p, ':', (size_t)(end - p));
        he = colon ? colon : end;
    }
    if (he == hs || (size_t)(he - hs) >= hostlen)
        return -1;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = 0;
    if (colon && colon + 1 < end) {
        if ((size_t)(end - colon - 1) >= portlen)
            return -1;
        memcpy(port, colon + 1, (size_t)(end - colon - 1));
        port[end - colon - 1] = 0;
    } else {
        snprintf(port, portlen, "80");
    }
    *path = *end ? end : "/";
    return 0;
}

/* ---- client ---- */

static int header_is(const char *line, const char *name) {
    size_t n = strlen(name);
    return !strncasecmp(line, name, n) && line[n] == ':';
}

h1_client *h1_client_new(struct event_base *base, const char *url, const char *const *headers,
                         const h1_handlers *h) {
    h1_client *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->h = *h;
    char host[256] = "", port[16] = "80"; /* as they stay when the URL does not split */
    const char *path = "/";
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    if (split_url(url, host, sizeof host, port, sizeof port, &path) == 0 &&
        getaddrinfo(host, port, &hints, &c->addrs) == 0) {
        for (struct addrinfo *a = c->addrs; a; a = a->ai_next)
            c->n_addrs++;
    } else {
        c->addrs = NULL;
    }
    /* The fixed part of every request's head. A user header replaces ours
     * of the same name; "Name:" with nothing after it removes it. */
    static const struct {
        const char *name, *value;
    } ours[] = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
    int user_host = 0;
    size_t cap = strlen(path) + strlen(host) + 256;
    for (const char *const *u = headers; u && *u; u++) {
        cap += strlen(*u) + 2;
        user_host |= header_is(*u, "Host");
    }
    c->head_start = xmalloc(cap);
    char *w = c->head_start;
    w += sprintf(w, "POST %s HTTP/1.1\r\n", path);
    if (!user_host) {
        int v6 = strchr(host, ':') != NULL;
        w += sprintf(w, "Host: %s%s%s%s%s\r\n", v6 ? "[" : "", host, v6 ? "]" : "",
                     strcmp(port, "80") ? ":" : "", strcmp(port, "80") ? port : "");
    }
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++) {
        int replaced = 0;
        for (const char *const *u = headers; u && *u; u++)
            replaced |= header_is(*u, ours[i].name);
        if (!replaced)
            w += sprintf(w, "%s: %s\r\n", ours[i].name, ours[i].value);
    }
    for (const char *const *u = headers; u && *u; u++) {
        const char *colon = strchr(*u, ':');
        if (!colon || header_is(*u, "Content-Length") || header_is(*u, "Transfer-Encoding"))
            continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (!*v)
            continue; /* removes the header */
        w += sprintf(w, "%s\r\n", *u);
    }
    c->head_start_len = (size_t)(w - c->head_start);
    return c;
}

static void conn_close(h1_conn *k);

void h1_client_free(h1_client *c) {
    if (!c)
        return;
    while (c->idle)
        conn_close(c->idle);
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

/* Closes a connection that carries no transfer. */
static void conn_close(h1_conn *k) {
    if (k->pooled)
        idle_remove(k);
    if (k->rev)
        event_free(k->rev);
    if (k->wev)
        event_free(k->wev);
    if (k->fd >= 0)
        close(k->fd);
    free(k);
}

static void on_readable(evutil_socket_t fd, short what, void *arg);
static void on_writable(evutil_socket_t fd, short what, void *arg);

/* Opens a socket to address `i` and starts connecting; -1 if it failed at
 * once (the caller tries the next address). */
static int conn_open(h1_conn *k, int i) {
    h1_client *c = k->c;
    struct addrinfo *a = c->addrs;
    for (int j = 0; j < i; j++)
        a = a->ai_next;
    k->addr_i = i;
    k->fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (k->fd < 0)
        return -1;
    int one = 1;
    setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(k->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    if (connect(k->fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
        close(k->fd);
        k->fd = -1;
        return -1;
    }
    k->rev = event_new(c->base, k->fd, EV_READ | EV_PERSIST, on_readable, k);
    k->wev = event_new(c->base, k->fd, EV_WRITE | EV_PERSIST, on_writable, k);
    event_add(k->wev, NULL);
    return 0;
}

/* Tries the addresses not yet tried (the `tried`-th after the one that last
 * connected, wrapping, each once); -1 when none could even start. */
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
            idle_add(k);
        } else {
            conn_close(k);
        }
    }
    void *ud = x->ud;
    xfer_free(x);
    c->h.done(ud, r);
}

static void reset_response(h1_xfer *x) {
    x->rs = R_HEAD;
    x->rhead_len = 0;
    x->got = 0;
    x->sent = 0;
    x->status = 0;
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
    }
    event_del(k->wev);
}

static void on_writable(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    h1_conn *k = arg;
    h1_xfer *x = k->x;
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
            if (conn_try_from(k, tried) < 0)
                finish(x, H1_CONNECT, 0);
            return;
        }
        k->connected = 1;
        k->c->good_addr = k->addr_i;
        event_add(k->rev, NULL);
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
        free(k);
        x->pending = H1_CONNECT;
        x->has_pending = 1;
        struct timeval now = {0, 0};
        event_add(x->timer, &now);
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
    if (c->idle) {
        h1_conn *k = c->idle;
        idle_remove(k);
        k->x = x;
        x->conn = k;
        send_request(x);
    } else {
        attach_new_conn(x);
    }
    return x;
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

/* The value of header `name` in the head (lines after the status line), or
 * NULL; the value is cut at CR/LF in place. */
static char *head_value(char *head, const char *name) {
    size_t n = strlen(name);
    for (char *line = strchr(head, '\n'); line; line = strchr(line, '\n')) {
        line++;
        if (!strncasecmp(line, name, n) && line[n] == ':') {
            char *v = line + n + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

static int value_has(const char *v, const char *token) {
    if (!v)
        return 0;
    size_t n = strlen(token), end = strcspn(v, "\r\n");
    for (size_t i = 0; i + n <= end; i++)
        if (!strncasecmp(v + i, token, n))
            return 1;
    return 0;
}

/* Reads the whole head in x->rhead (NUL-terminated). Returns 0 when the
 * body follows, 1 for a 1xx head to skip, -1 when it is not HTTP/1.x. */
static int take_head(h1_xfer *x) {
    char *h = x->rhead;
    if (strncmp(h, "HTTP/1.", 7) || !isdigit((unsigned char)h[7]) || h[8] != ' ' ||
        !isdigit((unsigned char)h[9]) || !isdigit((unsigned char)h[10]) ||
        !isdigit((unsigned char)h[11]))
        return -1;
    x->status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
    if (x->status < 100)
        return -1;
    if (x->status < 200)
        return x->status == 101 ? -1 : 1;
    int http10 = h[7] == '0';
    const char *conn = head_value(h, "Connection");
    x->keep_alive = http10 ? value_has(conn, "keep-alive") : !value_has(conn, "close");
    const char *te = head_value(h, "Transfer-Encoding");
    const char *cl = head_value(h, "Content-Length");
    if (x->status == 204 || x->status == 304) {
        x->rs = R_LENGTH;
        x->left = 0;
    } else if (te && value_has(te, "chunked")) {
        x->rs = R_CHUNKED;
        x->cs = C_SIZE;
        x->left = 0;
        x->size_digits = 0;
    } else if (cl) {
        char *end;
        errno = 0;
        long long v = strtoll(cl, &end, 10);
        if (errno || v < 0 || end == cl)
            return -1;
        x->rs = R_LENGTH;
        x->left = v;
    } else {
        x->rs = R_CLOSE;
        x->keep_alive = 0;
    }
    char *ct = head_value(h, "Content-Type");
    if (ct)
        ct[strcspn(ct, "\r\n")] = 0;
    x->c->h.head(x->ud, x->status, ct);
    return 0;
}

/* Appends head bytes; returns how many of p were used, with *ready set
 * once "\r\n\r\n" (or "\n\n") closed the head. */
static size_t head_bytes(h1_xfer *x, const char *p, size_t n, int *ready) {
    size_t i = 0;
    *ready = 0;
    while (i < n) {
        if (x->rhead_len + 2 > x->rhead_cap) {
            x->rhead_cap = x->rhead_cap ? x->rhead_cap * 2 : 512;
            x->rhead = xrealloc(x->rhead, x->rhead_cap);
        }
        char ch = p[i++];
        x->rhead[x->rhead_len++] = ch;
        if (ch == '\n') {
            size_t l = x->rhead_len;
            if ((l >= 2 && x->rhead[l - 2] == '\n') ||
                (l >= 3 && x->rhead[l - 2] == '\r' && x->rhead[l - 3] == '\n')) {
                x->rhead[l] = 0;
                *ready = 1;
                return i;
            }
        }
        if (x->rhead_len > H1_MAX_HEAD)
            return i;
    }
    return i;
}

/* Decodes chunked framing; body bytes go to the callback. Returns the bytes
 * used (a count, never negative); *end says how it stopped: 0 all bytes
 * used and more to come, 1 at the last chunk's end, -1 on bad framing, -2
 * when the callback aborted. */
static size_t chunked_bytes(h1_xfer *x, const char *p, size_t n, int *end) {
    size_t i = 0;
    *end = 0;
    while (i < n) {
        char ch = p[i];
        switch (x->cs) {
        case C_SIZE: {
            int d = isdigit((unsigned char)ch) ? ch - '0'
                    : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                    : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                               : -1;
            if (d >= 0) {
                if (x->left > (1LL << 40)) {
                    *end = -1;
                    return i;
                }
                x->left = x->left * 16 + d;
                x->size_digits++;
            } else if (!x->size_digits) {
                *end = -1;
                return i;
            } else if (ch == ';' || ch == ' ' || ch == '\t') {
                x->cs = C_EXT;
            } else if (ch == '\r') {
                x->cs = C_SIZE_LF;
            } else if (ch == '\n') {
                x->cs = x->left ? C_DATA : C_TRAILER;
                x->trailer_line = 0;
            } else {
                *end = -1;
                return i;
            }
            i++;
            break;
        }
        case C_EXT:
        case C_SIZE_LF:
            if (ch == '\n') {
                x->cs = x->left ? C_DATA : C_TRAILER;
                x->trailer_line = 0;
            } else if (x->cs == C_SIZE_LF) {
                *end = -1;
                return i;
            }
            i++;
            break;
        case C_DATA: {
            size_t k = n - i < (unsigned long long)x->left ? n - i : (size_t)x->left;
            if (x->c->h.body(x->ud, p + i, k, x->c->arrived_us) != k) {
                *end = -2;
                return i;
            }
            i += k;
            x->left -= (long long)k;
            if (!x->left)
                x->cs = C_DATA_CR;
            break;
        }
        case C_DATA_CR:
        case C_DATA_LF:
            if (ch == '\n') {
                x->cs = C_SIZE;
                x->size_digits = 0;
            } else if (ch == '\r' && x->cs == C_DATA_CR) {
                x->cs = C_DATA_LF;
            } else {
                *end = -1;
                return i;
            }
            i++;
            break;
        case C_TRAILER:
            i++;
            if (ch == '\n') {
                if (x->trailer_line == 0) {
                    *end = 1;
                    return i;
                }
                x->trailer_line = 0;
            } else if (ch != '\r') {
                x->trailer_line++;
            }
            break;
        }
    }
    return i;
}

/* Takes n received bytes. Returns 0 to go on reading, or 1 when the
 * transfer was finished (and must not be touched again). */
static int take_bytes(h1_xfer *x, const char *p, size_t n) {
    size_t i = 0;
    x->got += n;
    while (i < n) {
        if (x->rs == R_HEAD) {
            int ready;
            i += head_bytes(x, p + i, n - i, &ready);
            if (!ready) {
                if (x->rhead_len > H1_MAX_HEAD) {
                    finish(x, H1_BROKEN, 0);
                    return 1;
                }
                continue;
            }
            int r = take_head(x);
            x->rhead_len = 0;
            if (r < 0) {
                finish(x, H1_BROKEN, 0);
                return 1;
            }
            if (r == 1)
                continue; /* 1xx: the real head follows */
            if (x->rs == R_LENGTH && x->left == 0) {
                finish(x, H1_OK, x->keep_alive && i == n);
                return 1;
            }
        } else if (x->rs == R_LENGTH) {
            size_t k = n - i < (unsigned long long)x->left ? n - i : (size_t)x->left;
            if (x->c->h.body(x->ud, p + i, k, x->c->arrived_us) != k) {
                finish(x, H1_ABORTED, 0);
                return 1;
            }
            i += k;
            x->left -= (long long)k;
            if (!x->left) {
                finish(x, H1_OK, x->keep_alive && i == n);
                return 1;
            }
        } else if (x->rs == R_CHUNKED) {
            int end;
            i += chunked_bytes(x, p + i, n - i, &end);
            if (end) {
                finish(x,
                       end == 1    ? H1_OK
                       : end == -2 ? H1_ABORTED
                                   : H1_BROKEN,
                       end == 1 && x->keep_alive && i == n);
                return 1;
            }
        } else {
            if (x->c->h.body(x->ud, p + i, n - i, x->c->arrived_us) != n - i) {
                finish(x, H1_ABORTED, 0);
                return 1;
            }
            i = n;
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
            if (retry_fresh(x))
                return;
            int clean_end = n == 0 && x->rs == R_CLOSE;
            finish(x, clean_end ? H1_OK : H1_BROKEN, 0);
            return;
        }
        if (take_bytes(x, c->buf, (size_t)n))
            return;
        if ((size_t)n < sizeof c->buf)
            return; /* level-triggered: the rest, if any, wakes us again */
    }
}
