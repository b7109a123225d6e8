/* slo_check: a request's misses bound by bound (see slo_check.h). */
#include "capacity/slo_check.h"

#include <math.h>
#include <stdio.h>

int slo_misses(const req_rec *r, const slo_spec *slo) {
    if (r->error != ERR_NONE)
        return MISS_FAILED;
    int m = 0;
    if (slo->ttft_ms > 0 && !(r->first_ms - r->sent_ms <= slo->ttft_ms))
        m |= MISS_TTFT;
    if (slo->tpot_ms > 0 && r->output_tokens >= 2 &&
        !((r->last_ms - r->first_ms) / (r->output_tokens - 1) <= slo->tpot_ms))
        m |= MISS_TPOT;
    if (slo->e2e_ms > 0 && !(r->end_ms - r->sent_ms <= slo->e2e_ms))
        m |= MISS_E2E;
    return m;
}

const char *slo_bound_name(int bound) {
    static const char *const names[] = {"ttft", "tpot", "e2e"};
    return bound >= 0 && bound < 3 ? names[bound] : "ttft";
}

const char *slo_bound_text(const slo_spec *slo, int bound, char *buf, int n) {
    static const char *const upper[] = {"TTFT", "TPOT", "E2E"};
    double ms = bound == 1 ? slo->tpot_ms : bound == 2 ? slo->e2e_ms : slo->ttft_ms;
    if (bound < 0 || bound > 2)
        bound = 0;
    if (ms >= 10000 && fmod(ms, 1000) == 0)
        snprintf(buf, (size_t)n, "%s <= %g s", upper[bound], ms / 1000);
    else
        snprintf(buf, (size_t)n, "%s <= %g ms", upper[bound], ms);
    return buf;
}
