/* slo_check: which bounds of the SLO one request missed, by the same
 * definition as the run's goodput (analysis/summary.h: a failed request
 * misses, TTFT and E2E from sending, TPOT over requests of two tokens or
 * more), but bound by bound, so that the search can name the bound that
 * binds. */
#ifndef SERVELAB_SLO_CHECK_H
#define SERVELAB_SLO_CHECK_H

#include "analysis/summary.h"
#include "common/record.h"
#include "model/slo.h"

/* bound b's bit is 1 << b: ttft, tpot, e2e, ttfa (model/slo.h's order) */
enum { MISS_TTFT = 1, MISS_TPOT = 2, MISS_E2E = 4, MISS_TTFA = 8, MISS_FAILED = 16 };

/* The bounds r missed (MISS_* bits); 0 when it met the SLO. */
int slo_misses(const req_rec *r, const slo_spec *slo);

#endif
