/* h1_read: the HTTP/1.1 client's read side (h1.c opens the connections
 * and sends; h1.h says why the client is servelab's own): a transfer's
 * answer read off its socket, and an idle connection's close noticed.
 *
 * One recv() per readiness into a buffer the whole client shares (bodies
 * are handed to the callback straight from it), so an in-flight stream
 * costs its structs and, while its head is split across reads, the head's
 * bytes. Each read carries the kernel's receive stamp (recv_stamped). The
 * response is parsed by h1parse.c: a head that came in one read is parsed
 * where it lies; one split across reads is gathered a line at a time (so
 * no body byte is copied) and parsed once whole. The body decoder says
 * where the body bytes lie in the read, and those go to the callback as
 * they are. A success that comes while the request is still being written
 * is no answer to it (unasked_head): it is read and dropped, and the
 * answer after it taken. This is the per-read path: all of the client's
 * own code it runs for each read lives in this file (h1.c is called only
 * when a transfer or an idle connection ends). */
#include "client/h1_internal.h"
#include "protocol/h1parse.h"
#include "common/util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

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
                h1_xfer_finish(x, H1_BROKEN, 0);
                return 1;
            }
        } else {
            const char *data;
            size_t len;
            used = h1p_body_feed(&x->decoder, p + i, n - i, &data, &len);
            if (used < 0) {
                h1_xfer_finish(x, H1_BROKEN, 0);
                return 1;
            }
            if (len && !x->dropping && x->c->h.body(x->ud, data, len, x->c->arrived_us) != len) {
                h1_xfer_finish(x, H1_ABORTED, 0);
                return 1;
            }
        }
        i += (size_t)used;
        if (x->in_body && h1p_body_done(&x->decoder) && x->dropping) {
            x->in_body = x->dropping = 0; /* the request's own answer comes next */
            x->t.first_byte_us = -1;
        } else if (x->in_body && h1p_body_done(&x->decoder)) {
            h1_xfer_finish(x, H1_OK, x->keep_alive && i == n);
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

void h1_read_on_readable(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    h1_conn *k = arg;
    h1_client *c = k->c;
    h1_xfer *x = k->x;
    for (;;) {
        ssize_t n = recv_stamped(fd, c->buf, sizeof c->buf, &c->arrived_us);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (!x) { /* an idle connection: closed, reset, or talking out of turn */
            h1_conn_close(k);
            return;
        }
        if (n <= 0) {
            if (n < 0)
                x->os_errno = errno;
            if (h1_xfer_retry_fresh(x))
                return;
            int clean_end =
                n == 0 && x->in_body && !x->dropping && h1p_body_until_close(&x->decoder);
            h1_xfer_finish(x, clean_end ? H1_OK : H1_BROKEN, 0);
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
