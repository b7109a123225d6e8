/* replay_lines: a trace's lines, read from the one open stream the trace
 * is read from (see replay_read.c), a block at a time: each line's end
 * found with memchr, as getline does.
 *
 * A reader of our own rather than getline, because getline's failure
 * looks like the end of the file (a line it cannot hold would end the
 * trace there without a word) and it has no bound (`--replay /dev/zero`
 * would be read until memory runs out): this one stops at LINE_MAX_BYTES
 * and at a read error, and says which. It also ends a line at a CR alone,
 * as old Mac files do, and can tell that a file did (the CSV readers,
 * whose common/csv ends rows at LF, name such a file). */
#include "workload/replay_read_internal.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest line a trace may hold: 6 times Mooncake's longest record
 * (10 MB for 1.2 million hash ids reads fine), far below a machine's
 * memory. */
#define LINE_MAX_BYTES ((size_t)64 << 20)

#define READ_AHEAD_BYTES (64 * 1024)

/* s[0, n) added to the line: 0, or -1 with a message past the cap or out
 * of memory (the line's number is the next one's). */
static int line_add(replay_lines *r, const char *s, size_t n, char *err, int errlen) {
    if (n > LINE_MAX_BYTES - r->len) {
        snprintf(err, errlen,
                 "%s:%d: a line longer than %zu MiB: not a trace (no record is this long)", r->path,
                 r->lineno + 1, LINE_MAX_BYTES >> 20);
        return -1;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        cap = cap < LINE_MAX_BYTES + 1 ? cap : LINE_MAX_BYTES + 1;
        char *p = realloc(r->buf, cap);
        if (!p) {
            snprintf(err, errlen, "%s:%d: out of memory holding a line of %zu MiB", r->path,
                     r->lineno + 1, (r->len + n) >> 20);
            return -1;
        }
        r->buf = p;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, s, n);
    r->len += n;
    return 0;
}

/* More bytes read ahead: 1, 0 at the end of the file, -1 with a message
 * on a read error (which is not the end of the file). */
static int read_ahead(replay_lines *r, char *err, int errlen) {
    if (!r->io)
        r->io = xmalloc(READ_AHEAD_BYTES);
    r->at = 0;
    r->n = fread(r->io, 1, READ_AHEAD_BYTES, r->f);
    if (r->n)
        return 1;
    if (!ferror(r->f))
        return 0;
    snprintf(err, errlen, "%s:%d: cannot read: %s", r->path, r->lineno + 1, strerror(errno));
    return -1;
}

/* The next line, ended by LF, CRLF or a CR alone: 1, 0 at the end of the
 * file, or -1 with a message. */
static int read_line(replay_lines *r, char *err, int errlen) {
    int any = 0, got;
    r->len = 0;
    for (;;) {
        if (r->at == r->n && (got = read_ahead(r, err, errlen)) <= 0) {
            if (got < 0)
                return -1;
            break;
        }
        const char *p = r->io + r->at, *e = r->io + r->n;
        if (r->after_cr) { /* a CR ended the last line: an LF just after it is that end's */
            r->after_cr = 0;
            r->bare_cr |= *p != '\n';
            if (*p == '\n') {
                r->at++;
                continue;
            }
        }
        any = 1;
        const char *end = memchr(p, '\n', (size_t)(e - p));
        const char *cr = memchr(p, '\r', (size_t)((end ? end : e) - p));
        end = cr ? cr : end;
        if (line_add(r, p, (size_t)((end ? end : e) - p), err, errlen))
            return -1;
        r->at = end ? (size_t)(end - r->io) + 1 : r->n;
        if (end) {
            r->after_cr = end == cr;
            break;
        }
    }
    if (!any || line_add(r, "", 0, err, errlen))
        return any ? -1 : 0;
    r->buf[r->len] = 0;
    r->lineno++;
    return 1;
}

/* Whether the line last read ended at a CR with no LF after it. */
int replay_lines_bare_cr(replay_lines *r, char *err, int errlen) {
    if (!r->after_cr)
        return r->bare_cr;
    if (r->at == r->n && read_ahead(r, err, errlen) <= 0)
        return r->bare_cr; /* the file ends at that CR */
    return r->io[r->at] != '\n';
}

/* The next line that is not blank, without a leading BOM on line 1: 1,
 * 0 at the end of the file, or -1 with a message. */
int replay_lines_next(replay_lines *r, char *err, int errlen) {
    int got;
    while ((got = read_line(r, err, errlen)) == 1) {
        char *s = r->buf;
        if (r->lineno == 1 && r->len >= 3 && !memcmp(s, BOM, 3))
            memmove(s, s + 3, (r->len -= 3) + 1);
        if (strspn(s, " \t") != r->len)
            return 1;
    }
    return got;
}
