/* session: one `servelab calibrate` from its options to its output: the
 * levels, a scratch directory (or --keep's), the placement, the runs
 * (calibrate.c), then the table and sentence (or JSON) on s->out and the
 * result saved (~/.cache/servelab/calibration.json by default). */
#ifndef SERVELAB_SESSION_H
#define SERVELAB_SESSION_H

#include "calibrate/calibrate.h"

#include <stddef.h>
#include <stdio.h>

typedef struct calib_session {
    calib_opts o;       /* seconds, repeat, threads, realtime, http_client, sim_threads, self */
    const char *levels; /* "STREAMS@STEP_MS,burst:STREAMS@STEP_MS,..."; NULL: the defaults */
    const char *save;   /* NULL: the cache (~/.cache/servelab/calibration.json) */
    const char *keep;   /* keep rows and traces here; NULL: a scratch directory, removed */
    int json;           /* print JSON instead of the table */
    int no_pin;         /* do not put the simulator and the client on separate CPUs */
    int burst_rounds;   /* requests each burst stream runs; 0: CALIB_BURST_ROUNDS */
    FILE *out;          /* where the table and sentence (or JSON) go: the command's stdout */
} calib_session;

/* The levels of a list such as "10@1,1000@10,burst:1000@10" (a level is
 * STREAMS@STEP_MS, arrivals spread over a second, or burst:STREAMS@STEP_MS,
 * all started together; spread: may be written too) into *out
 * (malloc'd): their count, or -1 with the level that is wrong. */
int calibrate_levels_parse(const char *text, calib_level **out, char *err, size_t errlen);
/* The list is well formed: 0, or -1 with what is wrong. */
int calibrate_levels_check(const char *text, char *err, size_t errlen);
/* Runs it: 0, or -1 with the reason in err. */
int calibrate_session(calib_session *s, char *err, int errlen);

#endif
