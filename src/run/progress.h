/* progress: what a run has done so far, on stderr while it goes. On a
 * terminal a block of four lines is redrawn about twice a second: requests
 * done of all, in flight and failed by error class, elapsed time and an
 * estimate of what is left, the achieved rate and output tokens a second,
 * and the last 10 seconds' TTFT p50/p95 and TPOT p50 (and, in a sweep,
 * which run and repetition of how many). Off a terminal, `--progress
 * plain` prints the same as one line every --progress-interval seconds.
 * Drawing runs on a thread of its own that reads the client's live
 * counters (client/live.h): the client's loop never waits on a write to
 * the terminal. */
#ifndef SERVELAB_PROGRESS_H
#define SERVELAB_PROGRESS_H

#include "client/live.h"

#include <stdio.h>

typedef enum { PROGRESS_OFF, PROGRESS_DRAW, PROGRESS_PLAIN } progress_mode;

typedef struct progress_opts {
    progress_mode mode;
    double interval_s; /* PROGRESS_PLAIN's; the drawing is every 0.5 s */
    const char *label; /* "run 2/5 load-8rps, repetition 1/2"; NULL: none */
    double last_due_s; /* the schedule's last arrival, for the estimate */
    double rate_rps;   /* as asked (INFINITY, or NAN for none) */
    FILE *to;          /* stderr */
} progress_opts;

typedef struct progress progress;

/* NULL for PROGRESS_OFF. */
progress *progress_start(live_stats *l, const progress_opts *o);
/* The last picture (a final line), then the thread ends. NULL is fine. */
void progress_stop(progress *p);

/* The plain line of a snapshot, for tests and for the last line. */
void progress_line(const live_snapshot *s, const progress_opts *o, char *buf, size_t n);

#endif
