/* outcome: how a piece of work ended, as the library says it. Only
 * src/cli/ turns an outcome into the process's exit code
 * (cli_exit_code: 0, 1, 2, or 128 + the stop signal); below it nothing
 * chooses exit codes (docs/architecture.md). */
#ifndef SERVELAB_OUTCOME_H
#define SERVELAB_OUTCOME_H

typedef enum {
    OUTCOME_OK,        /* done, and what was asked held */
    OUTCOME_FAILED,    /* a run that failed, a check that found drift, an SLO missed under a gate */
    OUTCOME_BAD_INPUT, /* refused before any traffic or file: the input was bad (err says what) */
    OUTCOME_STOPPED,   /* a stop signal ended it (common/stop.h says which), files written */
} outcome;

#endif
