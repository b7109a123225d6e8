/* sse: the event-stream parser as a byte-at-a-time state machine that never
 * holds a whole line. A line is either the start of a field name, the name
 * itself (kept only up to a few bytes: we act on "data" and "event" alone),
 * or its value, which is copied straight from the caller's buffer into the
 * event's data or type buffer, or skipped (comments, "id", "retry", unknown
 * fields). Values are copied in runs up to the next CR/LF, so the common case
 * is one memcpy per line. Because nothing is buffered per line, the only
 * memory is the event being built, bounded by max_event_bytes; a line is
 * still limited to the same size so that a server that never ends a line
 * fails the stream instead of being read forever.
 *
 * Line ends are LF, CRLF or CR. After a CR we remember it (`after_cr`) so
 * that an LF at the start of the next piece closes nothing new. Data lines
 * are joined with "\n" by inserting the separator when the second and later
 * data lines begin, rather than appending LF and stripping it at dispatch as
 * the spec describes; the result is the same. */
#include "protocol/sse.h"
#include "common/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ST_LINE_START, ST_NAME, ST_VALUE_START, ST_VALUE };
enum { TO_DISCARD, TO_DATA, TO_TYPE };

static const unsigned char utf8_bom[3] = {0xEF, 0xBB, 0xBF};

void sse_init(sse_parser *p, size_t max_event_bytes, sse_event_fn fn, void *ud) {
    memset(p, 0, sizeof *p);
    p->fn = fn;
    p->ud = ud;
    /* Room for the NUL must not overflow. */
    p->max_bytes = max_event_bytes > SIZE_MAX / 2 ? SIZE_MAX / 2 : max_event_bytes;
    p->state = ST_LINE_START;
}

void sse_reset(sse_parser *p) {
    p->data_len = p->type_len = p->line_len = p->name_len = 0;
    p->state = ST_LINE_START;
    p->target = TO_DISCARD;
    p->has_data = p->after_cr = p->bom_state = p->failed = 0;
}

void sse_release(sse_parser *p) {
    free(p->data);
    free(p->type);
    p->data = p->type = NULL;
    p->data_cap = p->type_cap = 0;
    sse_reset(p);
}

static int fail(sse_parser *p) {
    p->failed = 1;
    p->data_len = p->type_len = 0;
    return -1;
}

/* Make room for `need` bytes (content plus NUL) in *buf; need is at most
 * max_bytes + 1, and so is the capacity this leaves. */
static void reserve(sse_parser *p, char **buf, size_t *cap, size_t need) {
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap * 2 : 64;
    if (c < need)
        c = need;
    if (c > p->max_bytes + 1)
        c = p->max_bytes + 1;
    *buf = xrealloc(*buf, c);
    *cap = c;
}

/* Append to the current event (data or type), or fail when the event's
 * buffered bytes would exceed the limit. */
static int append(sse_parser *p, int to, const char *s, size_t n) {
    if (to == TO_DISCARD || n == 0)
        return 0;
    if (n > p->max_bytes - p->data_len - p->type_len)
        return fail(p);
    if (to == TO_DATA) {
        reserve(p, &p->data, &p->data_cap, p->data_len + n + 1);
        memcpy(p->data + p->data_len, s, n);
        p->data_len += n;
    } else {
        reserve(p, &p->type, &p->type_cap, p->type_len + n + 1);
        memcpy(p->type + p->type_len, s, n);
        p->type_len += n;
    }
    return 0;
}

static int name_is(const sse_parser *p, const char *s) {
    size_t n = strlen(s);
    return p->name_len == n && memcmp(p->name, s, n) == 0;
}

/* The field name is complete (at its colon, or at the end of a line without
 * one); decide where the value goes and start the field. A comment
 * (":keep-alive") has the empty name, which matches no field. */
static int begin_field(sse_parser *p) {
    p->target = TO_DISCARD;
    if (name_is(p, "data")) {
        if (p->has_data && append(p, TO_DATA, "\n", 1) < 0)
            return -1;
        p->has_data = 1;
        p->target = TO_DATA;
    } else if (name_is(p, "event")) {
        p->type_len = 0; /* the last "event:" line of an event wins */
        p->target = TO_TYPE;
    }
    return 0;
}

static void dispatch(sse_parser *p) {
    if (p->has_data) {
        reserve(p, &p->data, &p->data_cap, p->data_len + 1);
        p->data[p->data_len] = '\0';
        const char *type = "message";
        if (p->type_len > 0) {
            p->type[p->type_len] = '\0'; /* append() left room */
            type = p->type;
        }
        p->fn(p->ud, type, p->data, p->data_len);
    }
    p->data_len = p->type_len = 0;
    p->has_data = 0;
}

static int end_line(sse_parser *p) {
    int rc = 0;
    if (p->state == ST_LINE_START)
        dispatch(p); /* a blank line */
    else if (p->state == ST_NAME)
        rc = begin_field(p); /* "data" alone: an empty data line */
    p->state = ST_LINE_START;
    p->line_len = 0;
    return rc;
}

/* Count line bytes against the limit. */
static int grow_line(sse_parser *p, size_t n) {
    if (n > p->max_bytes - p->line_len)
        return fail(p);
    p->line_len += n;
    return 0;
}

static int feed_bytes(sse_parser *p, const char *buf, size_t n) {
    size_t i = 0;
    while (i < n) {
        char c = buf[i];
        if (p->after_cr) {
            p->after_cr = 0;
            if (c == '\n') { /* the LF of a CRLF */
                i++;
                continue;
            }
        }
        if (c == '\r' || c == '\n') {
            if (end_line(p) < 0)
                return -1;
            p->after_cr = c == '\r';
            i++;
            continue;
        }
        switch (p->state) {
        case ST_LINE_START:
            p->state = ST_NAME;
            p->name_len = 0;
            /* fall through */
        case ST_NAME:
            if (grow_line(p, 1) < 0)
                return -1;
            if (c == ':') {
                if (begin_field(p) < 0)
                    return -1;
                p->state = ST_VALUE_START;
            } else {
                if (p->name_len < sizeof p->name)
                    p->name[p->name_len] = c;
                p->name_len++;
            }
            i++;
            break;
        case ST_VALUE_START:
            p->state = ST_VALUE;
            if (c == ' ') { /* one space after the colon is not part of the value */
                if (grow_line(p, 1) < 0)
                    return -1;
                i++;
                break;
            }
            /* fall through */
        case ST_VALUE: {
            size_t j = i;
            while (j < n && buf[j] != '\n' && buf[j] != '\r')
                j++;
            if (grow_line(p, j - i) < 0 || append(p, p->target, buf + i, j - i) < 0)
                return -1;
            i = j;
            break;
        }
        }
    }
    return 0;
}

/* A BOM matched only in part turned out not to be one: its bytes are data. */
static int flush_partial_bom(sse_parser *p) {
    int matched = p->bom_state;
    p->bom_state = -1;
    return matched > 0 ? feed_bytes(p, (const char *)utf8_bom, (size_t)matched) : 0;
}

int sse_feed(sse_parser *p, const char *buf, size_t n) {
    if (p->failed)
        return -1;
    while (p->bom_state >= 0 && n > 0) {
        if ((unsigned char)*buf == utf8_bom[p->bom_state]) {
            buf++;
            n--;
            if (++p->bom_state == 3)
                p->bom_state = -1;
        } else if (flush_partial_bom(p) < 0) {
            return -1;
        }
    }
    if (n > 0 && feed_bytes(p, buf, n) < 0)
        return -1;
    return 0;
}

void sse_finish(sse_parser *p) {
    if (p->failed || flush_partial_bom(p) < 0)
        return;
    if (p->state != ST_LINE_START && end_line(p) < 0)
        return;
    p->after_cr = 0;
    dispatch(p);
}
