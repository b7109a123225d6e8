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
    if (slo->ttfa_ms > 0 && !(request_answer_ms(r) - r->sent_ms <= slo->ttfa_ms))
        m |= MISS_TTFA;
    return m;
}

double slo_bound_ms(const slo_spec *slo, int b) {
    return b == 1 ? slo->tpot_ms : b == 2 ? slo->e2e_ms : b == 3 ? slo->ttfa_ms : slo->ttft_ms;
}

const char *slo_bound_name(int bound) {
    static const char *const names[] = {"ttft", "tpot", "e2e", "ttfa"};
    return bound >= 0 && bound < SLO_BOUNDS ? names[bound] : "ttft";
}

const char *slo_bound_text(const slo_spec *slo, int bound, char *buf, int n) {
    static const char *const upper[] = {"TTFT", "TPOT", "E2E", "TTFA"};
    if (bound < 0 || bound >= SLO_BOUNDS)
        bound = 0;
    double ms = slo_bound_ms(slo, bound);
    if (ms >= 10000 && fmod(ms, 1000) == 0)
        snprintf(buf, (size_t)n, "%s <= %g s", upper[bound], ms / 1000);
    else
        snprintf(buf, (size_t)n, "%s <= %g ms", upper[bound], ms);
    return buf;
}
