/* sse: an incremental Server-Sent Events parser (WHATWG "event stream"
 * rules). Feed it the response body in whatever pieces the network delivers;
 * it calls back once per complete event with the event type and the joined
 * `data` lines. No allocation per event: the data and type buffers grow to
 * the largest event seen (never past max_event_bytes) and are reused. */
#ifndef SERVELAB_SSE_H
#define SERVELAB_SSE_H

#include <stddef.h>

/* One dispatched event. `event_type` is "message" when the event had no
 * "event:" field; `data` is NUL-terminated (len excludes the NUL) and holds
 * the event's data lines joined with "\n". Both point into the parser and
 * are valid only during the call. The callback must not call back into the
 * parser (to stop at "[DONE]", ignore what follows). */
typedef void (*sse_event_fn)(void *ud, const char *event_type, const char *data, size_t len);

typedef struct sse_parser {
    sse_event_fn fn;
    void *ud;
    size_t max_bytes; /* bound on one line and on one event's buffered bytes */
    char *data;       /* the current event's data, data_len bytes + NUL room */
    size_t data_len, data_cap;
    char *type; /* the current event's "event:" value */
    size_t type_len, type_cap;
    size_t line_len; /* bytes of the current line so far */
    char name[8];    /* field name of the current line (only short ones matter) */
    size_t name_len; /* may exceed sizeof name: then it is an unknown field */
    int state;       /* where in a line we are (sse.c) */
    int target;      /* where the current value goes (sse.c) */
    int has_data;    /* the current event has at least one data line */
    int after_cr;    /* the last byte was CR: an LF right after it is the same line end */
    int bom_state;   /* bytes of a leading UTF-8 BOM matched so far; -1 once past it */
    int failed;      /* a line or event went over max_bytes */
} sse_parser;

/* max_event_bytes bounds both one line and one event's data plus type. */
void sse_init(sse_parser *p, size_t max_event_bytes, sse_event_fn fn, void *ud);
/* Returns 0, or -1 once a line/event exceeded max_event_bytes (parser then
 * stays failed, memory stays bounded: never buffers more than
 * max_event_bytes). */
int sse_feed(sse_parser *p, const char *buf, size_t n);
/* End of stream: ends an unterminated last line and dispatches a pending
 * event that was not terminated by a blank line (some servers end without
 * one). */
void sse_finish(sse_parser *p);
/* Reuse for another stream, keeping the buffers. */
void sse_reset(sse_parser *p);
/* Free the buffers; the parser may be sse_init'ed again. */
void sse_release(sse_parser *p);

#endif
