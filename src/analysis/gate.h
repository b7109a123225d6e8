/* gate: compare's --fail-on, the regressions a pull request may not bring.
 * A gate is FIGURE>+N% (a latency grew by more than N% of the base),
 * FIGURE<-N% (a throughput or goodput shrank by more than N%), or the same
 * with N in the figure's own unit: ms, s or us for a latency, tok/s for
 * output_tokens_per_s, req/s for achieved_rps and goodput_rps, pp
 * (percentage points) for goodput_fraction. Only the worse direction can
 * be gated (a latency with '>', the others with '<'); the sign may be left
 * out, and blanks are ignored. A gate trips on a compared run when the figure's change is
 * significantly worse (its 95% interval leaves out 0 on the worse side)
 * and its point change is beyond the threshold. */
#ifndef SERVELAB_GATE_H
#define SERVELAB_GATE_H

#include "analysis/compare.h"

#define GATE_MAX 32

typedef struct gate {
    int fig;
    int relative;     /* threshold in % of the base, else in the figure's unit */
    double threshold; /* >= 0: %, or ms, tok/s, req/s, or a fraction (pp / 100) */
    char text[64];    /* as given, for messages */
} gate;

/* The comma-separated gates of `spec` into g[0..GATE_MAX): their count, or
 * -1 with "'ttft_p95>10': ..." (the item and what is wrong with it) in
 * err. */
int gate_parse(const char *spec, gate *g, char *err, int errlen);
/* Whether the gate trips on this change. */
int gate_tripped(const gate *g, const figure_change *c);

#endif
