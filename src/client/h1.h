/* h1: servelab's own HTTP/1.1 client for plain http:// servers.
 *
 * Why not libcurl everywhere: profiled at 5,000 streams against the
 * simulator, libcurl took 34% of the client's CPU per chunk (per-transfer
 * bookkeeping, progress and timer updates, a poll() per wakeup) against 8%
 * for all of servelab's own parsing, and the client must be faster per chunk
 * than the server it measures or its own queue shows up as the server's
 * latency. This module does only what a load test of an OpenAI server
 * needs: one POST per connection at a time, keep-alive reuse, Content-Length,
 * chunked and close-delimited bodies, one recv() per readiness and no copy
 * of the body. libcurl stays in use for https://, proxies, URLs with
 * credentials, the /metrics sampler and `run --http-client libcurl`.
 *
 * Arrival times are the kernel's: each socket asks for SO_TIMESTAMPNS, so
 * the time of a read is when its last segment was received, not when this
 * process got round to reading it. A client busy with other streams, or
 * preempted by another process, then delays its reading but not its
 * figures, unless it is so late that a stream's next chunk arrived too:
 * one read then returns both with the later one's stamp (the caller sees
 * them in one body call and can say so). (Without the kernel's stamp, the
 * read's own time is used.)
 *
 * Every transfer ends with exactly one call of `done`, never from inside
 * h1_start, and after it the transfer is gone. */
#ifndef SERVELAB_H1_H
#define SERVELAB_H1_H

#include <event2/event.h>
#include <stddef.h>

typedef enum {
    H1_OK,      /* the whole response arrived */
    H1_CONNECT, /* no connection could be made (refused, unreachable, unresolved) */
    H1_TIMEOUT, /* the transfer's time ran out */
    H1_BROKEN,  /* the connection failed, or the response was not HTTP/1.x */
    H1_ABORTED, /* the body callback asked to stop */
    H1_CLIENT   /* this machine could not open a connection: out of descriptors, memory
                   or local ports (EMFILE, ENFILE, ENOMEM, ENOBUFS, EADDRNOTAVAIL) */
} h1_result;

/* Where a transfer's time went (CLOCK_MONOTONIC µs; -1: not reached). */
typedef struct h1_times {
    int64_t connect_us;    /* how long its TCP handshake took; 0 on a pooled connection */
    int64_t written_us;    /* its request's last byte handed to the kernel */
    int64_t first_byte_us; /* the first byte of the answer reached this machine (the
                              kernel's stamp, as body times) */
} h1_times;

typedef struct h1_handlers {
    /* the final (non-1xx) response head; content_type and content_encoding
     * (the body is passed on as it came, never decoded) may be NULL */
    void (*head)(void *ud, int status, const char *content_type, const char *content_encoding);
    /* body bytes as they arrive (dechunked), with the time they reached this
     * machine's socket (CLOCK_MONOTONIC µs; see below); return n to go on,
     * less to abort */
    size_t (*body)(void *ud, const char *p, size_t n, int64_t arrived_us);
    /* the end; os_errno is the system's error behind H1_CONNECT, H1_CLIENT or
     * H1_BROKEN when there was one (ECONNREFUSED, EMFILE, ECONNRESET), else 0 */
    void (*done)(void *ud, h1_result r, int os_errno);
    /* optional (may be NULL): the transfer's phases, just before `done` */
    void (*phases)(void *ud, const h1_times *t);
} h1_handlers;

typedef struct h1_client h1_client;
typedef struct h1_xfer h1_xfer;

/* Whether `url` can go through this client: plain http://, no credentials
 * in it, and no proxy variable in the environment that libcurl would use. */
int h1_usable(const char *url);

/* A client posting to `url` with `headers` ("Name: value" lines, NULL
 * terminated; an empty value removes the header as in libcurl). The host is
 * resolved now; when that fails, every transfer ends with H1_CONNECT. */
h1_client *h1_client_new(struct event_base *base, const char *url, const char *const *headers,
                         const h1_handlers *h);
void h1_client_free(h1_client *c);

/* Starts a POST of `body` (not copied: it must live until `done`), with one
 * extra header line (without CRLF, may be NULL). timeout_s 0: none. */
h1_xfer *h1_start(h1_client *c, const char *extra_header, const char *body, size_t len,
                  double timeout_s, void *ud);

/* Ends a transfer without calling `done` (SIGINT). */
void h1_cancel(h1_xfer *x);

/* Opens n connections now, into the keep-alive pool, so that requests
 * started later only write (a burst then costs no handshakes). They are
 * ordinary pooled connections: a server that closes one is noticed and it
 * leaves the pool. */
void h1_preconnect(h1_client *c, int n);
/* How many of them are still connecting. */
int h1_preconnecting(const h1_client *c);

/* Read priority. A transfer starts urgent: its connection's reads come
 * before other streams' (the base needs two priorities,
 * event_base_priority_init(base, 2)); once its first token came the caller
 * settles it to the ordinary priority. A base with one priority ignores
 * both. */
void h1_settle(h1_xfer *x);
/* Whether transfers started from now on start urgent (the default) or at
 * the ordinary priority. */
void h1_urgency(h1_client *c, int on);

#endif
