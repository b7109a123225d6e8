/* loadgen_curl: the load generator's libcurl transport (https://, proxies,
 * --http-client libcurl) and the /metrics sampler's transfers. The glue is
 * the usual multi_socket one: curl tells us which sockets to watch
 * (socket_cb) and when to call it back (timer_cb); libevent tells curl when
 * a socket is ready; a finished transfer's message ends its request. */
#include "client/loadgen_ctx.h"
#include "common/util.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

typedef struct sock_ctx {
    struct event *ev;
    lg *g;
} sock_ctx;

static size_t curl_on_write(char *p, size_t size, size_t nmemb, void *ud) {
    inflight *f = ud;
    if (!f->status_known) {
        long code = 0;
        char *ct = NULL;
        curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(f->easy, CURLINFO_CONTENT_TYPE, &ct);
        response_head(f, (int)code, ct, f->coding);
    }
    /* one socket event's bytes share its time, as one read of our own
     * client does, so that chunks that came together are seen so */
    int64_t t = f->g->curl_read_us >= 0 ? f->g->curl_read_us : lg_now(f->g);
    return response_body(f, p, size * nmemb, t);
}

/* Whether a transfer failed for want of something on this machine: curl's
 * own out-of-memory, or a socket or local port the system refused. */
static int client_side(CURLcode rc, long os_errno) {
    if (rc == CURLE_OUT_OF_MEMORY)
        return 1;
    int e = (int)os_errno;
    return rc != CURLE_OK &&
           (e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOBUFS || e == EADDRNOTAVAIL);
}

/* Header lines, for the one curl does not report: Content-Encoding (of the
 * last head, as a 1xx head comes before the final one). */
static size_t curl_on_header(char *p, size_t size, size_t nmemb, void *ud) {
    inflight *f = ud;
    size_t n = size * nmemb;
    if (n >= 5 && !strncmp(p, "HTTP/", 5))
        f->coding[0] = 0;
    else if (n > 17 && !strncasecmp(p, "Content-Encoding:", 17)) {
        const char *v = p + 17, *end = p + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        size_t len = 0;
        while (v + len < end && v[len] != '\r' && v[len] != '\n')
            len++;
        if (len >= sizeof f->coding)
            len = sizeof f->coding - 1;
        memcpy(f->coding, v, len);
        f->coding[len] = 0;
    }
    return n;
}

/* curl's own socket() with its errno kept: curl reports a socket it could
 * not open as a failure to connect, and does not say why. */
static curl_socket_t curl_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a) {
    (void)purpose;
    inflight *f = ud;
    curl_socket_t s = socket(a->family, a->socktype, a->protocol);
    if (s == CURL_SOCKET_BAD)
        f->os_errno = errno;
    f->own_fd[1] = f->own_fd[0];
    f->own_fd[0] = s;
    return s;
}

static xfer_end curl_end(CURLcode rc, long os_errno) {
    if (client_side(rc, os_errno))
        return XFER_CLIENT;
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

/* Which socket holds local port p (curl's prerequest callback names a
 * connection only by its ports): learned when curl first asks us to watch
 * a socket, checked with getsockname() when used, so a stale entry (the
 * socket closed, its number reused) is never trusted. */
static int local_port(curl_socket_t s) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(s, (struct sockaddr *)&ss, &len))
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

static void note_socket(lg *g, curl_socket_t s) {
    int port = local_port(s);
    if (port < 0)
        return;
    if (!g->port_fd)
        g->port_fd = xcalloc(65536, sizeof *g->port_fd);
    g->port_fd[port] = (int)s + 1;
}

static curl_socket_t socket_at(const lg *g, int port) {
    if (!g->port_fd || port < 0 || port > 65535 || !g->port_fd[port])
        return CURL_SOCKET_BAD;
    curl_socket_t s = g->port_fd[port] - 1;
    return local_port(s) == port ? s : CURL_SOCKET_BAD;
}

/* Before a request goes out on a connection curl reuses: anything waiting
 * to be read there (an answer nobody asked for, which curl would take as
 * this request's, or a TLS close) came before the request. curl does not
 * look, so we do, with two small syscalls per reuse; a connection curl
 * opened for this transfer is not looked at (a fresh TLS one may hold
 * session tickets). Aborting here closes that connection before a byte of
 * the request was sent, and the request starts again. */
static int curl_prereq(void *ud, char *primary_ip, char *local_ip, int primary_port,
                       int local_port_) {
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    inflight *f = ud;
    curl_socket_t s = socket_at(f->g, local_port_);
    if (s == CURL_SOCKET_BAD || s == f->own_fd[0] || s == f->own_fd[1])
        return CURL_PREREQFUNC_OK;
    char b;
    ssize_t r = recv(s, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return CURL_PREREQFUNC_OK;
    f->stale_conns++;
    return CURL_PREREQFUNC_ABORT;
}

/* The request again, on a new handle (the aborted one closed the stale
 * connection). After a few such connections in a row it ends malformed:
 * the server keeps answering what was never asked. */
static void restart_on_fresh(lg *g, inflight *f) {
    curl_easy_cleanup(f->easy);
    f->easy = NULL;
    curl_slist_free_all(f->hdrs);
    f->hdrs = NULL;
    if (f->stale_conns >= 4) {
        f->unasked = 1;
        lg_transfer_ended(g, f, XFER_BROKEN);
        return;
    }
    curl_glue_start(g, f);
}

/* Where the transfer's time went, from curl's own timers (µs from the
 * transfer's start, about when it was sent): the handshake (none when
 * curl reused a connection), the request's start of sending (curl tells
 * no later moment: so written_ms is when it began to write) and the
 * answer's first byte. */
static void take_phases(inflight *f) {
    curl_off_t lookup = 0, connect = 0, pre = 0, first = 0;
    long connects = 0;
    curl_easy_getinfo(f->easy, CURLINFO_NUM_CONNECTS, &connects);
    curl_easy_getinfo(f->easy, CURLINFO_NAMELOOKUP_TIME_T, &lookup);
    curl_easy_getinfo(f->easy, CURLINFO_CONNECT_TIME_T, &connect);
    curl_easy_getinfo(f->easy, CURLINFO_PRETRANSFER_TIME_T, &pre);
    curl_easy_getinfo(f->easy, CURLINFO_STARTTRANSFER_TIME_T, &first);
    request_row *r = &f->row;
    if (r->sent_us < 0)
        return;
    r->connect_us = connects > 0 && connect >= lookup ? connect - lookup : connects > 0 ? -1 : 0;
    r->written_us = pre > 0 ? r->sent_us + pre : -1;
    r->first_byte_us = first > 0 ? r->sent_us + first : -1;
}

static void drain_messages(lg *g) {
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(g->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        if (g->smp.easy && m->easy_handle == g->smp.easy) {
            curl_multi_remove_handle(g->multi, g->smp.easy);
            sampler_metrics_done(&g->smp, m->data.result, lg_now(g) / 1000.0);
            continue;
        }
        inflight *f;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&f);
        CURLcode rc = m->data.result;
        curl_multi_remove_handle(g->multi, f->easy);
        if (rc == CURLE_ABORTED_BY_CALLBACK && f->stale_conns && !f->unasked) {
            restart_on_fresh(g, f); /* nothing was sent: it starts again */
            continue;
        }
        if (!f->status_known) {
            long code = 0;
            curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &code);
            f->row.http_status = (int)code;
        }
        take_phases(f);
        long os_errno = 0;
        if (rc != CURLE_OK)
            curl_easy_getinfo(f->easy, CURLINFO_OS_ERRNO, &os_errno);
        if (os_errno)
            f->os_errno = (int)os_errno;
        lg_transfer_ended(g, f, curl_end(rc, f->os_errno));
    }
    lg_check_done(g);
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg) {
    lg *g = arg;
    int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    g->curl_read_us = lg_now(g);
    curl_multi_socket_action(g->multi, fd, flags, &running);
    g->curl_read_us = -1;
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
        note_socket(g, s);
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
    curl_glue_kick(arg);
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

void curl_glue_init(lg *g) {
    g->multi = curl_multi_init();
    curl_multi_setopt(g->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(g->multi, CURLMOPT_SOCKETDATA, g);
    curl_multi_setopt(g->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(g->multi, CURLMOPT_TIMERDATA, g);
    curl_multi_setopt(g->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    curl_multi_setopt(g->multi, CURLMOPT_MAXCONNECTS, 100000L);
    g->curl_timer = evtimer_new(g->base, on_curl_timer, g);
}

void curl_glue_free(lg *g) {
    curl_multi_cleanup(g->multi);
    free(g->port_fd);
}

void curl_glue_kick(lg *g) {
    int running;
    curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_messages(g);
}

void curl_glue_start(lg *g, inflight *f) {
    const loadgen_config *c = g->cfg;
    char idh[64];
    snprintf(idh, sizeof idh, "X-Request-Id: ");
    request_id_format(idh + strlen(idh), sizeof idh - strlen(idh), f->row.index);
    f->own_fd[0] = f->own_fd[1] = CURL_SOCKET_BAD;
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
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)f->body_len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->hdrs);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, curl_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, f);
    curl_easy_setopt(e, CURLOPT_PRIVATE, f);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, curl_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, f);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, curl_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, f);
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
