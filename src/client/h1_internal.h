/* h1_internal: what the HTTP/1.1 client's two files share; nothing outside
 * them includes it (h1.h is the module's interface). h1.c opens the
 * connections, keeps the idle pool, sends the request and ends the
 * transfer; h1_read.c reads the answer off the socket: one stamped recv()
 * per readiness into the client's buffer, the head gathered, the body
 * handed on. Each side calls the other at a connection's or a transfer's
 * edges only (a read event set up, a transfer ended), never once per read,
 * so the split costs the per-read path nothing. */
#ifndef SERVELAB_H1_INTERNAL_H
#define SERVELAB_H1_INTERNAL_H

#include "client/h1.h"
#include "protocol/h1parse.h"

#include <event2/event.h>
#include <netdb.h>
#include <stddef.h>
#include <stdint.h>

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

/* h1.c */

/* Closes a connection that carries no transfer. */
void h1_conn_close(h1_conn *k);
/* The end of a transfer: its connection goes back to the pool (reuse) or
 * is closed, then `done` is called and the transfer is gone. */
void h1_xfer_finish(h1_xfer *x, h1_result r, int reuse);
/* A pooled connection died before any answer: once, try a fresh one (1),
 * else 0 and the caller ends the transfer. */
int h1_xfer_retry_fresh(h1_xfer *x);

/* h1_read.c */

/* A connection's read event (EV_READ | EV_PERSIST, arg the h1_conn): the
 * answer of its transfer, or an idle connection closing or speaking out of
 * turn. */
void h1_read_on_readable(evutil_socket_t fd, short what, void *arg);

#endif
