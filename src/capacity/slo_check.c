/* slo_check: a request's misses bound by bound (see slo_check.h). */
#include "capacity/slo_check.h"

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
