/* search: `servelab capacity`: the highest offered rate (or the most
 * closed-loop users) at which, in the long run, at least `goal` of the
 * requests meet the SLO, with a 95% interval. It brackets (doubles the
 * load from the start until a probe fails), measures what the server
 * completes when kept busy (random arrivals), asks a twin fitted to the
 * probes for the answer and probes it (search_twin.c; `twin`), else
 * bisects with probes long enough for an overload of the precision to
 * show, repeats the probes at the ends of the interval until their
 * verdicts are clear at 95%, and runs
 * the answer once more before saying it (`confirm`); it stops at
 * `precision` (relative) or `max_time_s`, planning its probes to fit. Every
 * probe is a run directory OUT/probe-NN-VALUE (or, with `vt`, a run on the
 * simulator's engine in virtual time); OUT/capacity.json holds the answer
 * (capacity/answer.h); docs/capacity.md explains the search and the
 * interval and measures how often it covers the exact answer. */
#ifndef SERVELAB_SEARCH_H
#define SERVELAB_SEARCH_H

#include "common/notice.h"
#include "common/outcome.h"
#include "model/answer.h"
#include "run/run.h"
#include "run/virtual_client.h"

/* the confirmation run (--confirm on): this many full probes' requests
 * (the help says it through CAPACITY_TEXT: one source for both) */
#define CAPACITY_CONFIRM_PROBES 3
#define CAPACITY_TEXT_(x) #x
#define CAPACITY_TEXT(x) CAPACITY_TEXT_(x)

typedef struct capacity_opts {
    run_opts run;   /* first: run's option rows apply to a capacity_opts as they are */
    const char *by; /* rate|concurrency */
    double goal;
    double precision;
    double start_rate;
    int64_t start_concurrency;
    double max_time_s;
    double drain_max_s;       /* --drain-timeout: the longest wait for an idle server (drain.h) */
    int confirm;              /* run the answer once more, longer, before saying it */
    int twin;                 /* --twin on: a twin fitted to the probes proposes the answer */
    const char *twin_text;    /* --twin on|off */
    const char *confirm_text; /* --confirm on|off */
    int virtual_time;         /* --virtual */
    const virtual_target *vt; /* --virtual: the probes on the engine in virtual time */
    const char *sim;          /* the simulator's arguments; NULL: run.url */
    const char *self;         /* this binary, for the simulator */
    /* each probe's line (NOTICE_PROGRESS, unless run.quiet) and the
     * warnings about the answer (NOTICE_WARNING); NULL: none */
    const notice_sink *notices;
} capacity_opts;

/* Checks what needs the whole set (an SLO, a target, the run's own checks);
 * -1 with a message. */
int capacity_opts_validate(const capacity_opts *o, char *err, int errlen);
/* Runs the search. OUTCOME_OK when it found the capacity; OUTCOME_FAILED
 * when not (not reached, missed at the lowest load, or a probe that could
 * not run: err says why); OUTCOME_BAD_INPUT before any traffic (err says
 * why); OUTCOME_STOPPED by a signal (capacity.json holds what was found so
 * far). Once a probe ran, *said is the answer (said->tries > 0; say it with
 * answer_sentence). `command_line` (stolen) goes into each probe's
 * meta.json. */
outcome capacity_execute(const capacity_opts *o, json_t *command_line, capacity_answer *said,
                         char *err, int errlen);

#endif
