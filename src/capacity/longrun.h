/* longrun: the long-run capacity of an engine, found in virtual time
 * (`servelab predict --capacity`): the highest offered rate (or the most
 * closed-loop users) at which at least `goal` of the requests of a long
 * run meet the SLO. Each load is one virtual run of `requests` requests
 * (run_predict_rows) with the same seed, so that the loads differ by the
 * load alone (the schedule at rate r is the one at rate 1, scaled; the
 * answers are the same); its first 5% of the schedule's span, the engine
 * filling from empty, is not counted. It doubles the load until a run
 * fails, then bisects to `precision`. Being an exact engine and not a
 * measurement, it is the truth servelab capacity's answers are checked
 * against (docs/predict.md). */
#ifndef SERVELAB_LONGRUN_H
#define SERVELAB_LONGRUN_H

#include "analysis/summary.h"
#include "common/notice.h"
#include "common/outcome.h"
#include "model/answer.h"
#include "run/run.h"
#include "run/virtual_client.h"

#define LONGRUN_MAX_LEVELS 96

typedef struct longrun_opts {
    const run_opts *run; /* the workload, arrival, seed and --slo; its rate is the search's */
    const virtual_target *target;
    int by_concurrency;
    double goal, precision;
    long requests;
    double start;                /* the first load; 0: 1 */
    const notice_sink *progress; /* a line a load tried ("predict: 2 req/s: ..."); NULL: none */
} longrun_opts;

typedef struct longrun_level {
    double load;
    long scheduled;    /* its requests (fewer than asked at a low rate: a week at most) */
    long counted, met; /* the requests counted (after the warm-up) and those that met */
    long missed[4];    /* of them, missed ttft, tpot, e2e, ttfa (request_slo_misses) */
    long failed;       /* of them, failed (never a latency; not in missed) */
    int first_error;   /* the first failed one's error class (ERR_NONE: none) */
    int stopped;       /* the run was stopped once it could no longer pass */
    double wall_s;
} longrun_level;

typedef struct longrun_result {
    /* the answer (model/answer.h, ANSWER_PREDICTED): max is the highest load
     * that passed, fail_load the lowest that failed above it (NAN: none) */
    capacity_answer ans;
    longrun_level levels[LONGRUN_MAX_LEVELS];
    int n_levels;
} longrun_result;

/* One virtual run of `run`'s workload, arrivals and seed on `target`:
 * n requests at `load` (a rate, or closed-loop users), watched by `watch`
 * (NULL: none), its rows in memory (the caller rows_free()s them) and no
 * files. run_predict_rows's outcome. */
outcome longrun_rows(const run_opts *run, const virtual_target *target, int by_concurrency,
                     double load, long n, const run_watch *watch, run_rows *rows, char *err,
                     int errlen);
/* OUTCOME_OK with r->ans filled (found or not); OUTCOME_BAD_INPUT (err
 * says what), OUTCOME_FAILED when a run could not be made, OUTCOME_STOPPED
 * by a signal. */
outcome longrun_capacity(const longrun_opts *o, longrun_result *r, char *err, int errlen);
/* Before the search: --out DIR may not hold a run or a campaign (a
 * report of it would open with the engine's answer as theirs), nor
 * capacity.json unless force. 0, or -1 with err. */
int longrun_out_check(const char *dir, int force, char *err, int errlen);
/* DIR/capacity.json (capacity.json's keys, with "predicted": true and every
 * level); an existing one only with force. 0, or -1 with err. */
int longrun_write(const char *dir, const longrun_opts *o, const longrun_result *r, int force,
                  char *err, int errlen);

#endif
