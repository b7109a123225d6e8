/* httpd: connection state machine for the simulator's HTTP/1.1 server.
 *
 * A connection is READING (waiting for a whole request: headers, then
 * Content-Length bytes of body), BUSY (the handler owns the open response;
 * reads continue only to notice EOF and to buffer a pipelined request) or
 * dead. Output goes through an evbuffer that is written to the socket at
 * once; only what the kernel does not take waits for EV_WRITE.
 *
 * Death is deferred: the socket is closed immediately but the struct is
 * freed, and `on_gone` called, from a zero-delay event, so no caller ever
 * sees its connection vanish underneath it.
 *
 * Hostile peers. Every connection has one timer, of one of three kinds:
 * REQUEST (the request being received must be whole by then; armed at
 * accept, so a connection that sends nothing, or a slowloris dripping its
 * head, is closed after the request timeout), IDLE (a keep-alive connection
 * between requests) and DRAIN (the peer must take the answers we have
 * queued). Pipelined requests are taken in a loop, never by recursion, and
 * only while less than HTTP_OUT_HIGH_WATER of answers wait for the peer:
 * past that, reading stops until the peer reads, so a client that pipelines
 * without reading cannot make us queue answers without bound. Bytes that
 * cannot begin a request line are refused at once. At --max-connections a
 * new connection evicts the one that has waited longest for its next
 * request (the wait list, longest first; a connection answering a request
 * is never on it), so a flood of idle or slow connections cannot lock real
 * clients out; only when every connection is answering a request is the
 * new one refused. */
#include "sim/httpd.h"
#include "common/util.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct httpd {
    struct event_base *base;
    struct evconnlistener *listener;
    httpd_limits lim;
    http_handler_fn handler;
    void *ud;
    int port;
    int n_conns;                      /* open sockets */
    http_conn *wait_head, *wait_tail; /* not answering a request; waited longest first */
};

typedef enum { CONN_READING, CONN_BUSY } conn_state;
typedef enum { TIMER_REQUEST, TIMER_IDLE, TIMER_DRAIN } timer_kind;

/* Queued answers past which a connection's pipelined requests wait (and its
 * reading stops) until the peer has read them down to a quarter of it. */
#define HTTP_OUT_HIGH_WATER (256 * 1024)

struct http_conn {
    httpd *srv;
    int fd;
    conn_state state;
    int dead;
    int response_open;
    int close_after_flush;
    int keep_alive;
    struct evbuffer *in, *out;
    struct event *rev, *wev, *timer;
    struct event *more; /* zero-delay: take pipelined input after an answer */
    void (*on_gone)(void *);
    void *gone_arg;
    char *head; /* current request's header block (parsed in place) */
    char *body; /* current request's body */
    timer_kind timer_kind;
    int paused;    /* reading stopped until queued answers drain */
    int continued; /* "100 Continue" sent for the request being received */
    int waiting;   /* on the server's wait list */
    http_conn *wprev, *wnext;
};

const char *http_status_text(int status) {
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

const char *http_header_get(const http_request *req, const char *name) {
    for (int i = 0; i < req->n_headers; i++)
        if (!strcasecmp(req->headers[i].name, name))
            return req->headers[i].value;
    return NULL;
}

/* The wait list: connections not answering a request, in the order they
 * began to wait (accept, or the end of their last answer). Those closing
 * after an error answer go first: they are done. */
static void wait_remove(http_conn *c) {
    httpd *h = c->srv;
    if (!c->waiting)
        return;
    if (c->wprev)
        c->wprev->wnext = c->wnext;
    else
        h->wait_head = c->wnext;
    if (c->wnext)
        c->wnext->wprev = c->wprev;
    else
        h->wait_tail = c->wprev;
    c->wprev = c->wnext = NULL;
    c->waiting = 0;
}

static void wait_add(http_conn *c, int first) {
    httpd *h = c->srv;
    wait_remove(c);
    c->waiting = 1;
    if (first) {
        c->wprev = NULL;
        c->wnext = h->wait_head;
        if (h->wait_head)
            h->wait_head->wprev = c;
        else
            h->wait_tail = c;
        h->wait_head = c;
    } else {
        c->wnext = NULL;
        c->wprev = h->wait_tail;
        if (h->wait_tail)
            h->wait_tail->wnext = c;
        else
            h->wait_head = c;
        h->wait_tail = c;
    }
}

static void conn_free_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    http_conn *c = arg;
    if (c->response_open && c->on_gone)
        c->on_gone(c->gone_arg);
    evbuffer_free(c->in);
    evbuffer_free(c->out);
    event_free(c->rev);
    event_free(c->wev);
    event_free(c->timer);
    event_free(c->more);
    free(c->head);
    free(c->body);
    free(c);
}

/* Close now, free later (see the file comment). */
static void conn_kill(http_conn *c) {
    if (c->dead)
        return;
    c->dead = 1;
    event_del(c->rev);
    event_del(c->wev);
    event_del(c->timer);
    event_del(c->more);
    close(c->fd);
    c->fd = -1;
    c->srv->n_conns--;
    wait_remove(c);
    struct timeval zero = {0, 0};
    event_base_once(c->srv->base, -1, EV_TIMEOUT, conn_free_cb, c, &zero);
}

static void arm_timer(http_conn *c, timer_kind kind) {
    const httpd_limits *lim = &c->srv->lim;
    int ms = kind == TIMER_IDLE ? lim->idle_timeout_ms : lim->request_timeout_ms;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    c->timer_kind = kind;
    event_add(c->timer, &tv);
}

/* Go on with buffered input from the event loop, not from inside the
 * answer that just ended (which may be deep in the engine's callbacks). */
static void schedule_input(http_conn *c) {
    if (!c->dead && evbuffer_get_length(c->in) > 0)
        event_active(c->more, EV_TIMEOUT, 0);
}

/* The peer is not reading its answers: stop taking its requests. */
static void pause_reading(http_conn *c) {
    if (c->paused)
        return;
    c->paused = 1;
    event_del(c->rev);
    arm_timer(c, TIMER_DRAIN);
}

static void resume_reading(http_conn *c) {
    c->paused = 0;
    event_add(c->rev, NULL);
    arm_timer(c, TIMER_IDLE);
    schedule_input(c);
}

/* Write what we can; the rest waits for EV_WRITE. */
static void conn_flush(http_conn *c) {
    if (c->dead)
        return;
    while (evbuffer_get_length(c->out) > 0) {
        int n = evbuffer_write(c->out, c->fd);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            conn_kill(c);
            return;
        }
        if (n == 0)
            break;
    }
    size_t left = evbuffer_get_length(c->out);
    if (left > 0) {
        event_add(c->wev, NULL);
    } else {
        event_del(c->wev);
        if (c->close_after_flush) {
            conn_kill(c);
            return;
        }
    }
    if (c->paused && left <= HTTP_OUT_HIGH_WATER / 4 && !c->close_after_flush)
        resume_reading(c);
}

static void process_input(http_conn *c);

static void response_done(http_conn *c) {
    c->response_open = 0;
    c->on_gone = NULL;
    c->state = CONN_READING;
    free(c->head);
    free(c->body);
    c->head = c->body = NULL;
    if (!c->keep_alive)
        c->close_after_flush = 1;
    conn_flush(c);
    if (c->dead)
        return;
    if (c->close_after_flush) { /* the rest of the answer gets a deadline */
        wait_add(c, 1);
        arm_timer(c, TIMER_DRAIN);
        return;
    }
    wait_add(c, 0);
    if (!c->paused)
        arm_timer(c, TIMER_IDLE);
    schedule_input(c);
}

static void put_head(http_conn *c, int status, const char *ctype, const char *framing,
                     const char *extra) {
    evbuffer_add_printf(c->out,
                        "HTTP/1.1 %d %s\r\nServer: servelab-sim/" SERVELAB_VERSION
                        "\r\nContent-Type: %s\r\n%s%s%s\r\n",
                        status, http_status_text(status), ctype, framing, extra ? extra : "",
                        c->keep_alive ? "" : "Connection: close\r\n");
}

void http_reply(http_conn *c, int status, const char *content_type, const char *body, size_t n,
                const char *extra_headers) {
    if (!c->response_open)
        return;
    if (!c->dead) {
        char framing[64];
        snprintf(framing, sizeof framing, "Content-Length: %zu\r\n", n);
        put_head(c, status, content_type, framing, extra_headers);
        evbuffer_add(c->out, body, n);
    }
    response_done(c);
}

void http_stream_start(http_conn *c, int status, const char *content_type,
                       const char *extra_headers) {
    if (c->dead || !c->response_open)
        return;
    if (c->srv->lim.close_after_stream)
        c->keep_alive = 0; /* the head says Connection: close; response_done closes */
    put_head(c, status, content_type, "Transfer-Encoding: chunked\r\n", extra_headers);
    conn_flush(c);
}

int http_stream_send(http_conn *c, const char *data, size_t n) {
    if (c->dead || !c->response_open)
        return -1;
    if (n == 0)
        return 0; /* a zero-length chunk would end the body */
    evbuffer_add_printf(c->out, "%zx\r\n", n);
    evbuffer_add(c->out, data, n);
    evbuffer_add(c->out, "\r\n", 2);
    conn_flush(c);
    return c->dead ? -1 : 0;
}

void http_stream_finish(http_conn *c) {
    if (!c->response_open)
        return;
    if (!c->dead)
        evbuffer_add(c->out, "0\r\n\r\n", 5);
    response_done(c);
}

void http_conn_drop(http_conn *c) {
    c->response_open = 0;
    c->on_gone = NULL;
    /* RST rather than FIN so the client sees a broken connection. */
    if (!c->dead) {
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    conn_kill(c);
}

void http_conn_on_gone(http_conn *c, void (*fn)(void *arg), void *arg) {
    c->on_gone = fn;
    c->gone_arg = arg;
}

/* An error answered by the server itself, then the connection closes. */
static void reject(http_conn *c, int status, const char *message) {
    char body[256];
    int n = snprintf(body, sizeof body,
                     "{\"error\":{\"message\":\"%s\",\"type\":\"BadRequestError\",\"param\":null,"
                     "\"code\":%d}}",
                     message, status);
    c->keep_alive = 0;
    c->response_open = 1;
    c->state = CONN_BUSY;
    http_reply(c, status, "application/json", body, (size_t)n, NULL);
    evbuffer_drain(c->in, evbuffer_get_length(c->in));
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = 0;
    return s;
}

/* Parse the header block in c->head (NUL-terminated, CRLF lines). */
static int parse_head(http_conn *c, http_request *req, long long *content_length) {
    char *save = NULL;
    char *line = strtok_r(c->head, "\r\n", &save);
    if (!line)
        return 400;
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1)
        return 400;
    *sp1 = *sp2 = 0;
    req->method = line;
    req->path = sp1 + 1;
    const char *version = sp2 + 1;
    if (!strcmp(version, "HTTP/1.1"))
        req->keep_alive = 1;
    else if (!strcmp(version, "HTTP/1.0"))
        req->keep_alive = 0;
    else
        return 400;
    *content_length = 0;
    int chunked = 0, have_length = 0;
    while ((line = strtok_r(NULL, "\r\n", &save))) {
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            return 400;
        *colon = 0;
        for (char *p = line; *p; p++)
            if (*p == ' ' || *p == '\t' || (unsigned char)*p < 33)
                return 400;
        if (req->n_headers == HTTP_MAX_HEADERS)
            return 431;
        char *value = trim(colon + 1);
        req->headers[req->n_headers].name = line;
        req->headers[req->n_headers].value = value;
        req->n_headers++;
        if (!strcasecmp(line, "Content-Length")) {
            /* 1*DIGIT, and the same value if repeated: anything else could
             * make us and a proxy in front disagree on where a body ends */
            size_t len = strlen(value);
            if (len == 0 || len > 18 || strspn(value, "0123456789") != len)
                return 400;
            long long v = strtoll(value, NULL, 10);
            if (have_length && v != *content_length)
                return 400;
            have_length = 1;
            *content_length = v;
        } else if (!strcasecmp(line, "Transfer-Encoding")) {
            chunked = 1;
        } else if (!strcasecmp(line, "Connection")) {
            if (!strcasecmp(value, "close"))
                req->keep_alive = 0;
            else if (!strcasecmp(value, "keep-alive"))
                req->keep_alive = 1;
        }
    }
    if (chunked)
        return 411;
    return 0;
}

/* RFC 9110 tchar: what a method is made of. */
static int is_tchar(unsigned char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Whether the bytes so far cannot begin a request line (a method is a short
 * token, then a space; empty lines before it are allowed). Garbage such as
 * a TLS hello then gets its 400 at once instead of holding a connection
 * until the request timeout. */
static int cannot_be_request(struct evbuffer *in) {
    unsigned char b[32];
    ev_ssize_t n = evbuffer_copyout(in, b, sizeof b), i = 0;
    while (i < n && (b[i] == '\r' || b[i] == '\n'))
        i++;
    for (ev_ssize_t start = i; i < n; i++) {
        if (b[i] == ' ')
            return i == start;
        if (!is_tchar(b[i]) || i - start >= 20)
            return 1;
    }
    return 0;
}

/* Take whole requests from the input and hand them over, one at a time. */
static void process_input(http_conn *c) {
    while (!c->dead && c->state == CONN_READING && !c->close_after_flush) {
        size_t avail = evbuffer_get_length(c->in);
        if (avail == 0)
            return;
        if (evbuffer_get_length(c->out) > HTTP_OUT_HIGH_WATER) {
            pause_reading(c);
            return;
        }
        struct evbuffer_ptr end = evbuffer_search(c->in, "\r\n\r\n", 4, NULL);
        if (end.pos < 0) {
            if (avail > c->srv->lim.max_header_bytes)
                reject(c, 431, "request header fields too large");
            else if (cannot_be_request(c->in))
                reject(c, 400, "malformed HTTP request");
            else if (c->timer_kind != TIMER_REQUEST)
                arm_timer(c, TIMER_REQUEST);
            return;
        }
        size_t head_len = (size_t)end.pos + 4;
        if (head_len > c->srv->lim.max_header_bytes) {
            reject(c, 431, "request header fields too large");
            return;
        }
        /* Parse a copy of the head; only drain it once the body is here. */
        free(c->head);
        c->head = xmalloc(head_len + 1);
        evbuffer_copyout(c->in, c->head, head_len);
        c->head[head_len] = 0;
        http_request req;
        memset(&req, 0, sizeof req);
        long long clen = 0;
        /* a NUL would hide the rest of the head from the parser */
        int bad = memchr(c->head, 0, head_len) ? 400 : parse_head(c, &req, &clen);
        if (bad) {
            reject(c, bad,
                   bad == 411   ? "chunked request bodies are not supported"
                   : bad == 431 ? "too many header fields"
                                : "malformed HTTP request");
            return;
        }
        if ((unsigned long long)clen > c->srv->lim.max_body_bytes) {
            reject(c, 413, "request body too large");
            return;
        }
        const char *expect = http_header_get(&req, "Expect");
        if (avail < head_len + (size_t)clen) {
            if (expect && !strcasecmp(expect, "100-continue") && avail == head_len &&
                !c->continued) {
                c->continued = 1;
                evbuffer_add_printf(c->out, "HTTP/1.1 100 Continue\r\n\r\n");
                conn_flush(c);
            }
            if (c->timer_kind != TIMER_REQUEST)
                arm_timer(c, TIMER_REQUEST);
            return;
        }
        evbuffer_drain(c->in, head_len);
        free(c->body);
        c->body = xmalloc((size_t)clen + 1);
        evbuffer_remove(c->in, c->body, (size_t)clen);
        c->body[clen] = 0;
        req.body = c->body;
        req.body_len = (size_t)clen;
        c->keep_alive = req.keep_alive;
        c->state = CONN_BUSY;
        c->response_open = 1;
        c->continued = 0;
        c->timer_kind = TIMER_IDLE; /* the next request's clock starts at its first byte */
        event_del(c->timer);
        wait_remove(c);
        c->srv->handler(c, &req, c->srv->ud);
        /* The handler either replied (state back to READING: loop for a
         * pipelined request) or owns an open stream (BUSY: stop). */
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    http_conn *c = arg;
    size_t cap = c->srv->lim.max_header_bytes + c->srv->lim.max_body_bytes + 4096;
    int n = evbuffer_read(c->in, fd, 65536);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        conn_kill(c); /* EOF or error: the peer is gone */
        return;
    }
    if (c->close_after_flush) { /* answered and closing: what it sends is dropped */
        evbuffer_drain(c->in, evbuffer_get_length(c->in));
        return;
    }
    if (evbuffer_get_length(c->in) > cap) {
        if (c->state == CONN_READING)
            reject(c, 413, "request too large");
        else
            conn_kill(c); /* flooding us while we answer */
        return;
    }
    if (c->state == CONN_READING)
        process_input(c);
}

static void on_write(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    conn_flush(arg);
}

static void on_more(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    http_conn *c = arg;
    if (!c->paused)
        process_input(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    http_conn *c = arg;
    if (c->state != CONN_READING)
        return;
    if (c->timer_kind == TIMER_REQUEST && evbuffer_get_length(c->in) > 0)
        reject(c, 408, "request not received in time");
    else
        conn_kill(c); /* idle, silent since accept, or not reading its answers */
}

/* At the limit: close the connection that has waited longest for its next
 * request. 0 when every connection is answering one. */
static int evict_one(httpd *h) {
    if (!h->wait_head)
        return 0;
    conn_kill(h->wait_head);
    return 1;
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg) {
    (void)l;
    (void)sa;
    (void)len;
    httpd *h = arg;
    if (h->n_conns >= h->lim.max_connections && !evict_one(h)) {
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    http_conn *c = xcalloc(1, sizeof *c);
    c->srv = h;
    c->fd = fd;
    c->state = CONN_READING;
    c->keep_alive = 1;
    c->in = evbuffer_new();
    c->out = evbuffer_new();
    c->rev = event_new(h->base, fd, EV_READ | EV_PERSIST, on_read, c);
    c->wev = event_new(h->base, fd, EV_WRITE | EV_PERSIST, on_write, c);
    c->timer = evtimer_new(h->base, on_timer, c);
    c->more = evtimer_new(h->base, on_more, c);
    event_add(c->rev, NULL);
    arm_timer(c, TIMER_REQUEST); /* the first request is due from now */
    h->n_conns++;
    wait_add(c, 0);
}

httpd *httpd_start(struct event_base *base, const char *host, int port, const httpd_limits *lim,
                   http_handler_fn handler, void *ud, char *err, int errlen) {
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "--host %s: %s", host, gai_strerror(rc));
        return NULL;
    }
    httpd *h = xcalloc(1, sizeof *h);
    h->base = base;
    h->lim = *lim;
    h->handler = handler;
    h->ud = ud;
    unsigned flags = LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE;
    if (lim->reuse_port)
        flags |= LEV_OPT_REUSEABLE_PORT;
    h->listener =
        evconnlistener_new_bind(base, on_accept, h, flags, 4096, ai->ai_addr, (int)ai->ai_addrlen);
    freeaddrinfo(ai);
    if (!h->listener) {
        snprintf(err, errlen, "cannot listen on %s:%d: %s", host, port, strerror(errno));
        free(h);
        return NULL;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(evconnlistener_get_fd(h->listener), (struct sockaddr *)&ss, &sl);
    h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    return h;
}

int httpd_port(const httpd *h) {
    return h->port;
}

void httpd_free(httpd *h) {
    if (!h)
        return;
    evconnlistener_free(h->listener);
    free(h);
}
