/* h1parse: the HTTP/1.1 response parser of servelab's own client (h1.c),
 * kept apart from the sockets so that it can be tested and fuzzed in
 * process, byte by byte.
 *
 * No I/O and no allocation: the caller owns every buffer and hands the
 * parser bytes. The head is parsed where it lies (the caller keeps a head
 * that came in several reads and hands all of it again, saying how much
 * was already seen); the body decoder hands back where the body bytes lie
 * in what it was given, so no body byte is copied. Body framing is one of
 * Content-Length, chunked (a named-state machine, one byte at a time for
 * the framing and in bulk for the data) or "until the server closes".
 *
 * The rules are lenient where servers are sloppy and strict where a wrong
 * guess would misframe the body: any HTTP/1.x status line with three
 * digits; 1xx heads (but 101) skipped; bare LF line ends; a head of at
 * most H1P_MAX_HEAD bytes; Transfer-Encoding "chunked" over Content-Length;
 * a Content-Length that does not parse is an error. Content-Encoding is
 * reported, not decoded: what to make of it is the caller's. */
#ifndef SERVELAB_H1PARSE_H
#define SERVELAB_H1PARSE_H

#include <stddef.h>
#include <stdint.h>

/* A head may be this long; one more byte is allowed only if it ends it. */
#define H1P_MAX_HEAD (64 * 1024)

#define H1P_ERROR (-1)     /* not HTTP/1.x, or framing that cannot be trusted */
#define H1P_INCOMPLETE (0) /* the head has not ended yet: hand more bytes */

typedef enum {
    H1P_LENGTH,  /* Content-Length bytes (0 for 204 and 304) */
    H1P_CHUNKED, /* Transfer-Encoding: chunked */
    H1P_CLOSE    /* everything until the server closes */
} h1p_framing;

typedef struct h1p_head {
    int status;               /* 100-999; 1xx: an interim head, the rest unset */
    int keep_alive;           /* the connection may carry another request */
    h1p_framing framing;      /* how the body is delimited */
    long long length;         /* H1P_LENGTH: the body's bytes */
    const char *content_type; /* its value in the caller's buffer, or NULL */
    size_t content_type_len;  /* up to the CR or LF (or NUL) that ends it */
    /* Content-Encoding's value the same way, or NULL: a body the client
     * never asked to be encoded (it sends no Accept-Encoding) and does not
     * decode, so anything but "identity" is not the bytes its type says */
    const char *content_encoding;
    size_t content_encoding_len;
} h1p_head;

/* Parses the head at the start of buf[0..len), of which the first `from`
 * bytes were already handed without ending it (0 the first time). Returns
 * its length (blank line included) with *h filled in, H1P_INCOMPLETE, or
 * H1P_ERROR. */
long h1p_parse_head(const char *buf, size_t len, size_t from, h1p_head *h);

/* Where a chunked body is: one named state per part of the chunk grammar,
 * so that a read may end anywhere and the next one goes on from there. */
typedef enum {
    H1P_CHUNK_SIZE_FIRST,   /* the first hex digit of a chunk-size line */
    H1P_CHUNK_SIZE,         /* more hex digits, or what ends them */
    H1P_CHUNK_EXT,          /* a chunk extension, skipped to its LF */
    H1P_CHUNK_SIZE_LF,      /* the LF after the size line's CR */
    H1P_CHUNK_DATA,         /* chunk data */
    H1P_CHUNK_DATA_CR,      /* the CR after the data (or a bare LF) */
    H1P_CHUNK_DATA_LF,      /* the LF after that CR */
    H1P_CHUNK_TRAILER,      /* the start of a trailer line: an empty one ends the body */
    H1P_CHUNK_TRAILER_LINE, /* inside a trailer field line */
    H1P_CHUNK_DONE          /* the last chunk and its trailer are over */
} h1p_chunk_state;

typedef struct h1p_body {
    h1p_framing framing;
    h1p_chunk_state state; /* H1P_CHUNKED only */
    uint64_t left;         /* Content-Length bytes, or the current chunk's, still to come */
} h1p_body;

/* Starts decoding the body that the final head `h` announces. */
void h1p_body_start(h1p_body *b, const h1p_head *h);

/* Decodes body bytes p[0..n), stopping after the first run of body data:
 * returns the bytes used, or H1P_ERROR; *data, *data_len is that run (within
 * the bytes used; length 0 when there is none). */
long h1p_body_feed(h1p_body *b, const char *p, size_t n, const char **data, size_t *data_len);

/* Returns 1 once the body is whole (it then uses no more bytes), else 0. */
int h1p_body_done(const h1p_body *b);

/* Returns 1 when the body ends where the server closes the connection. */
int h1p_body_until_close(const h1p_body *b);

#endif
