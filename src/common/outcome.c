/* outcome: the one mapping from how work ended to an exit code
 * (outcome.h says who reads it). */
#include "common/outcome.h"

#include <signal.h>

int outcome_exit_code(outcome o, int stop_signal) {
    switch (o) {
    case OUTCOME_OK: return 0;
    case OUTCOME_FAILED: return 1;
    case OUTCOME_BAD_INPUT: return 2;
    case OUTCOME_STOPPED: return 128 + (stop_signal ? stop_signal : SIGTERM);
    }
    return 1;
}
