/* httpd: a small HTTP/1.1 server on libevent for the simulator.
 *
 * Why not evhttp: the simulator's trace must record when a token's bytes
 * left for the socket, it must answer oversized headers with 431, bound its
 * connections, time out slow request senders, and notice at once when a
 * client goes away mid-stream. A direct write() per chunk on a non-blocking
 * socket with TCP_NODELAY gives all of that in a few hundred lines.
 *
 * Keep-alive and pipelining are supported (one response at a time; while
 * answers wait for a peer that does not read them, its next requests wait
 * too), except after a streamed answer under `close_after_stream`. A
 * response is either whole (`http_reply`) or streamed with chunked transfer
 * encoding (`http_stream_*`). When the peer disappears while a response is
 * open, the handler is told through the `on_gone` callback, always from the
 * event loop and never from inside one of these calls, so a handler can keep
 * its state alive until then. */
#ifndef SERVELAB_HTTPD_H
#define SERVELAB_HTTPD_H

#include <event2/event.h>
#include <stddef.h>

#define HTTP_MAX_HEADERS 64

typedef struct http_header {
    const char *name, *value;
} http_header;

typedef struct http_request {
    const char *method, *path;
    http_header headers[HTTP_MAX_HEADERS];
    int n_headers;
    const char *body; /* NUL-terminated for convenience */
    size_t body_len;
    int keep_alive;
} http_request;

typedef struct httpd_limits {
    size_t max_header_bytes; /* request line + headers; over -> 431 */
    size_t max_body_bytes;   /* Content-Length over -> 413 */
    int max_connections;     /* at the limit a new connection evicts the one that has waited
                                longest for its next request; it is refused only when every
                                connection is answering a request */
    int request_timeout_ms;  /* a connection's first request must arrive whole within this of
                                the accept, a later one within this of its first byte (else 408,
                                or a silent close when nothing came); a peer that leaves this
                                long unread answers to its pipelined requests is closed */
    int idle_timeout_ms;     /* an idle keep-alive connection is closed after this */
    int reuse_port;          /* SO_REUSEPORT: several servers (threads) share the port */
    int close_after_stream;  /* a streamed answer says Connection: close and the connection
                                closes once it is written (llama.cpp's server does this, so
                                each of its clients' requests pays a new connect); whole
                                answers and errors keep the connection as usual */
} httpd_limits;

typedef struct httpd httpd;
typedef struct http_conn http_conn;
typedef void (*http_handler_fn)(http_conn *c, const http_request *req, void *ud);

/* Case-insensitive header lookup; NULL when absent. */
const char *http_header_get(const http_request *req, const char *name);

httpd *httpd_start(struct event_base *base, const char *host, int port, const httpd_limits *lim,
                   http_handler_fn handler, void *ud, char *err, int errlen);
int httpd_port(const httpd *h);
void httpd_free(httpd *h);

/* A complete response. `extra_headers` is "" or lines each ending in CRLF. */
void http_reply(http_conn *c, int status, const char *content_type, const char *body, size_t n,
                const char *extra_headers);
/* Streaming response with chunked encoding. send returns -1 once the
 * connection is dead (nothing more will be delivered). */
void http_stream_start(http_conn *c, int status, const char *content_type,
                       const char *extra_headers);
int http_stream_send(http_conn *c, const char *data, size_t n);
void http_stream_finish(http_conn *c);
/* Close the connection abruptly, response unfinished (fault injection). */
void http_conn_drop(http_conn *c);
/* Tell `fn(arg)` if the peer goes away while this response is open. */
void http_conn_on_gone(http_conn *c, void (*fn)(void *arg), void *arg);

const char *http_status_text(int status);

#endif
