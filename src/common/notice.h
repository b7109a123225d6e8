/* notice: how code below src/cli/ tells the user something that is not
 * the answer it returns: a warning, a progress line, a note. The library
 * never writes to the terminal itself (curl's habit: Curl_failf writes
 * only where the caller asked); a command in src/cli/ gives the sink, and
 * what reaches it is the command's to print, colour, count or drop.
 *
 * Errors do not come this way: a function that fails fills the caller's
 * `char *err, int errlen` buffer with one line and returns -1, and the
 * command maps that to its exit code.
 *
 * Two ways to reach a sink:
 *   - notice(sink, kind, fmt, ...): a sink passed down with the request
 *     (sweep, capacity, run carry one in their options); NULL drops.
 *   - notice_warn(fmt, ...): for code too deep to be handed one, the
 *     process's sink, which the command sets once with notice_set_default
 *     before it starts work; none set (a test, an in-process caller that
 *     did not ask) drops the text.
 * A sink may be called from any thread; the process's default must be
 * safe for that (cli's is: one fputs of a whole line). */
#ifndef SERVELAB_NOTICE_H
#define SERVELAB_NOTICE_H

#include <stdio.h>

typedef enum {
    NOTICE_WARNING,  /* something the user should know and may act on */
    NOTICE_PROGRESS, /* where a long command is, a line as it is (no "servelab: ") */
    NOTICE_INFO,     /* a fact worth a line, said as servelab's (a run's status in a campaign) */
    NOTICE_FATAL,    /* the process cannot go on (out of memory); abort follows */
} notice_kind;

typedef struct notice_sink {
    void (*fn)(void *ctx, notice_kind kind, const char *text); /* text has no newline */
    void *ctx;
    FILE *term; /* where a live display may draw itself (the command's stderr); NULL: none */
} notice_sink;

/* Format and hand one line to `sink` (NULL, or one without fn: dropped). */
void notice(const notice_sink *sink, notice_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, to the process's default sink, as a warning. */
void notice_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The process's default sink (copied); NULL: none. Set before threads start. */
void notice_set_default(const notice_sink *sink);
/* The process's default sink, or NULL when none was set. */
const notice_sink *notice_default(void);

#endif
