/* outcome: how a piece of work ended, as the library says it. Only
 * src/cli/ turns an outcome into the process's exit code
 * (cli_exit_code: 0, 1, 2, or 128 + the stop signal); below it nothing
 * chooses exit codes (docs/architecture.md). The mapping has one home,
 * outcome_exit_code, which cli_exit_code uses and a campaign also reads
 * to record each run's "exit_code" in campaign.json. */
#ifndef SERVELAB_OUTCOME_H
#define SERVELAB_OUTCOME_H

typedef enum {
    OUTCOME_OK,        /* done, and what was asked held */
    OUTCOME_FAILED,    /* a run that failed, a check that found drift, an SLO missed under a gate */
    OUTCOME_BAD_INPUT, /* refused before any traffic or file: the input was bad (err says what) */
    OUTCOME_STOPPED,   /* a stop signal ended it (common/stop.h says which), files written */
} outcome;

/* The exit code `servelab` gives for work that ended so: 0 ok, 1 failed,
 * 2 bad input, 128 + `stop_signal` when stopped (SIGTERM's, 143, when
 * `stop_signal` is 0). */
int outcome_exit_code(outcome o, int stop_signal);

#endif
