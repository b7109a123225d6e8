/* fit_decode: the decode step by batch from the clean gaps between tokens
 * (fit.h says the method), and the jitter. */
#include "fit/fit_internal.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_gap(acc *a, int b, double g) {
    if (b < 1 || b >= ENGINE_STEP_POINTS * 16)
        return;
    if (b > a->max_batch) {
        a->gaps = xrealloc(a->gaps, (size_t)(b + 1) * sizeof *a->gaps);
        a->n_gaps = xrealloc(a->n_gaps, (size_t)(b + 1) * sizeof *a->n_gaps);
        a->cap_gaps = xrealloc(a->cap_gaps, (size_t)(b + 1) * sizeof *a->cap_gaps);
        for (int k = a->max_batch + 1; k <= b; k++) {
            a->gaps[k] = NULL;
            a->n_gaps[k] = a->cap_gaps[k] = 0;
        }
        a->max_batch = b;
    }
    if (a->n_gaps[b] == a->cap_gaps[b])
        a->gaps[b] =
            xrealloc(a->gaps[b], (a->cap_gaps[b] = a->cap_gaps[b] ? 2 * a->cap_gaps[b] : 256) *
                                     sizeof **a->gaps);
    a->gaps[b][a->n_gaps[b]++] = g;
}

static void add_mixed(acc *a, int b, double g, double p) {
    if (a->n_mixed == a->cap_mixed)
        a->mixed = xrealloc(a->mixed, (a->cap_mixed = a->cap_mixed ? 2 * a->cap_mixed : 256) *
                                          sizeof *a->mixed);
    a->mixed[a->n_mixed++] = (struct mixed_gap){b, g, p};
}

void fit_decode_gaps(const fit_run *run, const engine_params *e, acc *a) {
    size_t n = 0;
    double *firsts = xmalloc((run->n_req + 1) * sizeof *firsts);
    double *lasts = xmalloc((run->n_req + 1) * sizeof *lasts);
    double *sents = xmalloc((run->n_req + 1) * sizeof *sents);
    span *win = xmalloc((run->n_req + 1) * sizeof *win); /* prefill windows, by their end */
    size_t nw = 0;
    double longest = 0;
    /* once the client cut a request short (a probe stopped as lost, a
     * timeout), the server may go on with it unseen: the streams decoding
     * are no longer known, and no gap after its sending is kept */
    double cutoff = INFINITY;
    for (size_t i = 0; i < run->n_req; i++)
        if (run->req[i].cut && run->req[i].sent < cutoff)
            cutoff = run->req[i].sent;
    for (size_t i = 0; i < run->n_req; i++) {
        const fit_req *q = &run->req[i];
        if (!q->ok)
            continue;
        firsts[n] = q->first;
        lasts[n] = q->last;
        sents[n] = isnan(q->sent) ? q->first : q->sent;
        n++;
        double p = engine_prefill_ms(e, q->prompt) - engine_prefill_ms(e, q->cached);
        if (p < 0)
            p = 0;
        if (p > longest)
            longest = p;
        win[nw++] = (span){q->first, q->first - p, i}; /* a: end, b: start */
    }
    qsort(firsts, n, sizeof *firsts, fit_cmp_d);
    qsort(lasts, n, sizeof *lasts, fit_cmp_d);
    qsort(sents, n, sizeof *sents, fit_cmp_d);
    qsort(win, nw, sizeof *win, fit_by_a);
    double *wend = xmalloc((nw + 1) * sizeof *wend);
    for (size_t k = 0; k < nw; k++)
        wend[k] = win[k].a;
    for (size_t i = 0; i < run->n_req; i++) {
        const fit_req *q = &run->req[i];
        if (!q->ok || q->n_chunks < 2)
            continue;
        for (int j = 1; j < q->n_chunks; j++) {
            double t0 = run->chunk_t[q->chunk0 + j - 1], t1 = run->chunk_t[q->chunk0 + j];
            if (!(t1 > t0) || run->chunk_tokens[q->chunk0 + j] != 1 || t1 > cutoff)
                continue;
            a->all_gaps++;
            double g = t1 - t0, mid = (t0 + t1) / 2;
            /* a prompt computed in the gap: a window that ends after t0 and
             * starts before t1 (its end within the gap plus the longest
             * prefill; a tenth of the gap either side for the clocks) */
            double slack = 0.1 * g;
            size_t k = fit_count_below(wend, nw, t0 + slack, 1);
            int dirty = 0;
            size_t last = 0;
            for (; k < nw && wend[k] <= t1 + longest + slack && dirty < 2; k++)
                if (win[k].i != i && win[k].b - slack < t1) {
                    dirty++;
                    last = k;
                }
            if (dirty == 1 && fabs(wend[last] - t1) <= slack) {
                /* one step that was one other prompt's and this stream's */
                int b =
                    (int)(fit_count_below(firsts, n, mid, 0) - fit_count_below(lasts, n, mid, 0));
                if (b >= 1)
                    add_mixed(a, b, g, win[last].a - win[last].b);
            }
            if (dirty)
                continue;
            int b = (int)(fit_count_below(firsts, n, mid, 0) - fit_count_below(lasts, n, mid, 0));
            if (b > a->max_decoding)
                a->max_decoding = b;
            /* sent two steps ago or more and no first token yet, in a gap
             * that computed no prompt: held back (at least this many) */
            long held = (long)fit_count_below(sents, n, mid - 2 * g, 0) -
                        (long)fit_count_below(firsts, n, mid, 1);
            if (held > 0 && b > a->held_b) {
                a->held_b = b;
                a->held_n = 0;
            }
            a->held_n += held > 0 && b == a->held_b;
            a->clean++;
            add_gap(a, b, g);
        }
    }
    free(firsts);
    free(lasts);
    free(sents);
    free(win);
    free(wend);
}

int fit_decode(acc *a, fit_result *r, int min_gaps, const char *where, json_t *pv) {
    engine_params *e = &r->doc.engine;
    /* every point's gaps as relative deviations from its median, pooled */
    size_t n_dev = 0;
    for (int b = 1; b <= a->max_batch; b++)
        n_dev += a->n_gaps[b];
    double *dev = xmalloc((n_dev ? n_dev : 1) * sizeof *dev);
    size_t ns = 0;
    for (int b = 1; b <= a->max_batch && r->n_points < ENGINE_STEP_POINTS; b++) {
        if (a->n_gaps[b] < (size_t)min_gaps)
            continue;
        fit_point *p = &r->points[r->n_points++];
        p->batch = b;
        p->gaps = a->n_gaps[b];
        p->p10 = fit_quantile(a->gaps[b], a->n_gaps[b], 0.1);
        p->p90 = fit_quantile(a->gaps[b], a->n_gaps[b], 0.9);
        p->median = fit_quantile(a->gaps[b], a->n_gaps[b], 0.5);
        /* the mean, not the median: a TPOT is a mean of gaps, and a real
         * step's time leans right (the odd slow step); the slowest 0.1%
         * left out, the network's hiccups */
        double top = fit_quantile(a->gaps[b], a->n_gaps[b], 0.999), sum = 0;
        size_t in = 0;
        for (size_t k = 0; k < a->n_gaps[b]; k++)
            if (a->gaps[b][k] <= top) {
                sum += a->gaps[b][k];
                in++;
            }
        p->mean = in ? sum / (double)in : p->median;
        for (size_t k = 0; k < a->n_gaps[b]; k++)
            dev[ns++] = fabs(a->gaps[b][k] - p->mean) / p->mean;
    }
    for (int b = 0; b <= a->max_batch; b++)
        free(a->gaps[b]);
    free(a->gaps);
    free(a->n_gaps);
    free(a->cap_gaps);
    if (r->n_points == 0) {
        free(dev);
        return 0;
    }
    e->n_step_points = r->n_points;
    strbuf counts = {0};
    for (int i = 0; i < r->n_points; i++) {
        e->step_batch[i] = r->points[i].batch;
        e->step_ms[i] = r->points[i].mean;
        sb_printf(&counts, "%s%d: %zu", i ? ", " : "", r->points[i].batch, r->points[i].gaps);
    }
    fit_prov(pv, "step_ms_by_batch",
             "the mean gap between two tokens of a stream (its slowest 0.1%% left out), by the "
             "streams decoding in its middle, with no prompt computed in it; %zu of %zu gaps of %s "
             "(by batch: %s)",
             a->clean, a->all_gaps, where, counts.s);
    sb_free(&counts);
    /* a robust sd first (1.4826 x MAD), then the root mean square of the
     * deviations within 4 of it: as steady as a plain sd on a normal step,
     * and deaf to the odd gap the network stretched */
    double s0 = ns ? 1.4826 * fit_quantile(dev, ns, 0.5) : 0, ss = 0;
    size_t in = 0;
    for (size_t k = 0; k < ns; k++)
        if (dev[k] <= 4 * s0) {
            ss += dev[k] * dev[k];
            in++;
        }
    e->jitter = in ? sqrt(ss / (double)in) : 0;
    free(dev);
    if (e->jitter > 0.5)
        e->jitter = 0.5;
    fit_prov(pv, "jitter",
             "the root mean square of (gap - its point's mean) / that mean over the table's "
             "gaps, those beyond 4 robust sd left out");
    return r->n_points;
}

#define MIXED_MIN 20 /* the steps with a prompt that fit_split_one_length and fit_mixed need */

void fit_split_one_length(acc *a, fit_result *r, json_t *pv) {
    engine_params *e = &r->doc.engine;
    size_t n = a->n_mixed;
    if (!r->one_length || r->prefill_from_server || e->n_prefill_points > 0 || n < MIXED_MIN ||
        !(r->one_length_tokens > 0))
        return;
    double tokens = r->one_length_tokens, old_p = engine_prefill_ms(e, tokens);
    double ttft = e->decode_base_ms + old_p;
    double *extra = xmalloc(n * sizeof *extra);
    for (size_t k = 0; k < n; k++)
        extra[k] = a->mixed[k].g - engine_decode_ms(e, a->mixed[k].b);
    double p = fit_quantile(extra, n, 0.5);
    free(extra);
    p = p < 0 ? 0 : p > ttft ? ttft : p;
    e->prefill_per_token_ms = p / tokens;
    e->prefill_ctx_per_1k_ms = 0;
    e->decode_base_ms = ttft - p;
    for (size_t k = 0; k < n; k++)
        a->mixed[k].p = old_p > 0 ? a->mixed[k].p * p / old_p : p;
    fit_prov(pv, "prefill_per_token_ms",
             "the lone requests had one prompt length (%g tokens), which cannot part their TTFT "
             "(%.3f ms) into a step's fixed cost and the prompt's: the prompt's part is the median "
             "of what %zu steps that computed one prompt while streams decoded took over the "
             "table's decode (%.3f ms), over its tokens",
             tokens, ttft, n, p);
    fit_prov(pv, "prefill_ctx_per_1k_ms", "0: one prompt length shows none");
    fit_prov(pv, "decode_base_ms", "the lone requests' TTFT less the prompt's part (%.3f ms)", p);
}

/* Least squares through the origin of the residual (gap - decode_base -
 * the prompt's prefill) on the decoding streams, once with all and once
 * without those beyond 4 robust sd of it; taken when it fits the gaps
 * better than the table's decode(b) + prefill and rests on MIXED_MIN gaps. */

void fit_mixed(acc *a, fit_result *r, json_t *pv) {
    engine_params *e = &r->doc.engine;
    size_t n = a->n_mixed;
    r->mixed_gaps = n;
    double m = 0;
    size_t kept = 0;
    double sse_table = 0, sse_mixed = 0;
    if (n > 0) {
        double *dev = xmalloc(n * sizeof *dev);
        double sby = 0, sbb = 0;
        for (size_t k = 0; k < n; k++) {
            const struct mixed_gap *x = &a->mixed[k];
            sby += x->b * (x->g - e->decode_base_ms - x->p);
            sbb += (double)x->b * x->b;
        }
        double m0 = sby / sbb;
        for (size_t k = 0; k < n; k++) {
            const struct mixed_gap *x = &a->mixed[k];
            dev[k] = fabs(x->g - e->decode_base_ms - x->p - m0 * x->b);
        }
        double s0 = 1.4826 * fit_quantile(dev, n, 0.5); /* sorts dev: recompute below */
        sby = sbb = 0;
        for (size_t k = 0; k < n; k++) {
            const struct mixed_gap *x = &a->mixed[k];
            double rsd = x->g - e->decode_base_ms - x->p;
            if (fabs(rsd - m0 * x->b) > 4 * s0)
                continue;
            sby += x->b * rsd;
            sbb += (double)x->b * x->b;
            kept++;
        }
        m = sbb > 0 ? sby / sbb : 0;
        for (size_t k = 0; k < n; k++) {
            const struct mixed_gap *x = &a->mixed[k];
            double rsd = x->g - e->decode_base_ms - x->p;
            if (fabs(rsd - m0 * x->b) > 4 * s0)
                continue;
            double dt = x->g - engine_decode_ms(e, x->b) - x->p, dm = rsd - m * x->b;
            sse_table += dt * dt;
            sse_mixed += dm * dm;
        }
        free(dev);
    }
    free(a->mixed);
    a->mixed = NULL;
    r->mixed_kept = kept;
    r->mixed_per_seq = m;
    r->mixed_rms_table = kept ? sqrt(sse_table / (double)kept) : NAN;
    r->mixed_rms = kept ? sqrt(sse_mixed / (double)kept) : NAN;
    if (kept >= MIXED_MIN && m > 0 && sse_mixed < sse_table) {
        e->mixed_per_seq_ms = m;
        fit_prov(pv, "mixed_step_per_seq_ms",
                 "least squares of (gap - decode_base_ms - the prompt's prefill) on the streams "
                 "decoding, over the %zu gaps of a stream that were one step with another "
                 "request's prompt (of %zu; beyond 4 robust sd left out): rms error %.2f ms, "
                 "against %.2f ms for the step table's decode(b) + prefill",
                 kept, n, r->mixed_rms, r->mixed_rms_table);
    }
}
