/* fit_prefill: the prefill from the requests that had the server to
 * themselves (fit.h says the method): the line by least squares with no
 * negative term, the table by prompt length, and what waking an idle
 * server costs. */
#include "fit/fit_internal.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Weighted least squares of y on the columns in `mask` (bit 0: 1, bit 1:
 * tokens, bit 2: context / 1000) over the kept points; the others are 0.
 * 0, or -1 when singular. */
static int lsq(const pre_obs *o, const char *keep, size_t m, int mask, double beta[3]) {
    int col[3], cols = 0;
    for (int c = 0; c < 3; c++)
        if (mask & (1 << c))
            col[cols++] = c;
    double A[3][4] = {{0}};
    for (size_t i = 0; i < m; i++) {
        if (!keep[i])
            continue;
        double all[3] = {1, o[i].n, o[i].ctx / 1000.0}, x[3];
        for (int c = 0; c < cols; c++)
            x[c] = all[col[c]];
        for (int r = 0; r < cols; r++) {
            for (int c = 0; c < cols; c++)
                A[r][c] += o[i].w * x[r] * x[c];
            A[r][3] += o[i].w * x[r] * o[i].y;
        }
    }
    for (int c = 0; c < cols; c++) { /* Gaussian elimination, partial pivoting */
        int piv = c;
        for (int r = c + 1; r < cols; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c]))
                piv = r;
        if (fabs(A[piv][c]) < 1e-12 * (1 + fabs(A[c][c])))
            return -1;
        for (int k = 0; k < 4; k++) {
            double t = A[c][k];
            A[c][k] = A[piv][k];
            A[piv][k] = t;
        }
        for (int r = 0; r < cols; r++) {
            if (r == c)
                continue;
            double f = A[r][c] / A[c][c];
            for (int k = c; k < 4; k++)
                A[r][k] -= f * A[c][k];
        }
    }
    beta[0] = beta[1] = beta[2] = 0;
    for (int c = 0; c < cols; c++)
        beta[col[c]] = A[c][3] / A[c][c];
    return 0;
}

static double predict_pre(const double b[3], const pre_obs *o) {
    return b[0] + b[1] * o->n + b[2] * o->ctx / 1000.0;
}

/* The best fit with no negative cost: of the column sets the prompt
 * lengths can tell apart (three lengths for all three columns, two for
 * two), the one with every coefficient >= 0 and the least weighted
 * squared error. Its mask, or 0 (beta all 0) when none fits. */
static int best_fit(const pre_obs *o, const char *keep, size_t m, int distinct, double beta[3]) {
    int best = 0;
    double best_sse = INFINITY, b[3];
    beta[0] = beta[1] = beta[2] = 0;
    for (int mask = 1; mask < 8; mask++) {
        int bits = (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1);
        if (bits > (distinct >= 3 ? 3 : distinct) || lsq(o, keep, m, mask, b) || b[0] < 0 ||
            b[1] < 0 || b[2] < 0)
            continue;
        double sse = 0;
        for (size_t i = 0; i < m; i++)
            if (keep[i]) {
                double e = o[i].y - predict_pre(b, &o[i]);
                sse += o[i].w * e * e;
            }
        if (sse < best_sse) {
            best_sse = sse;
            best = mask;
            memcpy(beta, b, sizeof b);
        }
    }
    return best;
}

/* How many prompt lengths o[0..m) holds, lengths within 2% one. */
static int distinct_lengths(const pre_obs *o, size_t m) {
    double *lens = xmalloc((m ? m : 1) * sizeof *lens);
    for (size_t i = 0; i < m; i++)
        lens[i] = o[i].n;
    qsort(lens, m, sizeof *lens, fit_cmp_d);
    int distinct = 0;
    for (size_t i = 0; i < m; i++)
        distinct += i == 0 || lens[i] > lens[i - 1] * 1.02 + 0.5;
    free(lens);
    return distinct;
}

/* Fits beta (see best_fit): by ordinary least squares, then weighted by
 * 1 / fitted^2 (a step's jitter is a share of it, so a long prompt's first
 * token is noisier by as much), then once more without the points whose
 * relative residual is beyond 3.5 robust sd. Returns the columns' mask. */
static int fit_prefill_model(pre_obs *o, size_t m, double beta[3]) {
    char *keep = xmalloc(m ? m : 1);
    memset(keep, 1, m ? m : 1);
    int distinct = distinct_lengths(o, m); /* they decide what can be told apart */
    for (size_t i = 0; i < m; i++)
        o[i].w = 1;
    int mask = 0;
    for (int pass = 0; pass < 3; pass++) {
        mask = best_fit(o, keep, m, distinct, beta);
        if (pass == 2)
            break;
        for (size_t i = 0; i < m; i++) {
            double f = predict_pre(beta, &o[i]);
            o[i].w = f > 1e-9 ? 1 / (f * f) : 1;
        }
        if (pass == 1) {
            double *res = xmalloc((m ? m : 1) * sizeof *res);
            for (size_t i = 0; i < m; i++)
                res[i] = fabs(o[i].y - predict_pre(beta, &o[i])) * sqrt(o[i].w);
            double mad = fit_quantile(res, m, 0.5);
            for (size_t i = 0; i < m; i++)
                keep[i] = fabs(o[i].y - predict_pre(beta, &o[i])) * sqrt(o[i].w) <=
                          3.5 * 1.4826 * mad + 1e-12;
            free(res);
        }
    }
    free(keep);
    return mask;
}

/* Which columns the prefill fit kept, in words. */
static const char *distinct_phrase(int mask) {
    switch (mask) {
    case 1: return "a fixed cost only";
    case 2: return "a cost per token only";
    case 3: return "a fixed cost and one per token";
    default: return "too few prompt lengths";
    }
}

/* What waking costs: the requests alone that came after the server had
 * been idle longer than WARM_MS, against the warm ones' prefill. For each
 * threshold T of a grid, the waking cost W_T is the median excess of those
 * idle T or longer; the threshold kept is the one whose split (no excess
 * below it, W_T from it) leaves the least absolute error, when W_T is
 * positive and both sides have 5 requests. */
static void idle_wake(pre_obs *o, size_t warm, size_t all, engine_params *e, json_t *pv,
                      size_t *cold) {
    static const double grid[] = {20, 50, 100, 150, 200, 300, 500, 1000, 2000};
    size_t m = all - warm;
    *cold = 0;
    if (warm == all || m < 5)
        return;
    double *x = xmalloc(m * sizeof *x), *idle = xmalloc(m * sizeof *idle),
           *v = xmalloc(m * sizeof *v);
    size_t k = 0;
    for (size_t i = warm; i < all; i++) {
        if (!isfinite(o[i].idle))
            continue;
        double n = o[i].n, c = (o[i].ctx - n * (n - 1) / 2) / n;
        x[k] = o[i].y - (e->decode_base_ms + engine_prefill_ms(e, c + n) - engine_prefill_ms(e, c));
        idle[k++] = o[i].idle;
    }
    double best = INFINITY, best_w = 0, best_t = 0;
    for (size_t g = 0; g < sizeof grid / sizeof *grid; g++) {
        size_t nv = 0, below = 0;
        for (size_t i = 0; i < k; i++)
            if (idle[i] >= grid[g])
                v[nv++] = x[i];
            else
                below++;
        if (nv < 5)
            continue;
        double w = fit_quantile(v, nv, 0.5), cost = 0;
        for (size_t i = 0; i < k; i++)
            cost += fabs(idle[i] >= grid[g] ? x[i] - w : x[i]);
        if (w > 0 && cost < best) {
            best = cost;
            best_w = w;
            best_t = grid[g];
            *cold = nv;
        }
    }
    if (best_w > 0) {
        e->idle_wake_ms = best_w;
        e->idle_after_ms = best_t;
        fit_prov(
            pv, "idle_wake_ms",
            "the median TTFT beyond the warm prefill of the %zu requests alone that came after "
            "the server had been idle idle_after_ms or longer",
            *cold);
        fit_prov(pv, "idle_after_ms",
                 "of %.0f-2000 ms, the idle time that best parts the %zu requests that came to an "
                 "idle server into those that paid idle_wake_ms and those that did not",
                 grid[0], k);
    }
    free(x);
    free(idle);
    free(v);
}

/* The prefill as measured, by prompt length: for each length that at
 * least 5 requests alone had (lengths within 2% are one), the median TTFT
 * less the fixed cost c0, at the median length; a table when there are two
 * or more (a point no higher than the one before is left out). */
static void prefill_table(pre_obs *o, size_t m, double c0, engine_params *e, json_t *pv) {
    span *s = xmalloc((m ? m : 1) * sizeof *s);
    for (size_t i = 0; i < m; i++)
        s[i] = (span){o[i].n, o[i].y, 0};
    qsort(s, m, sizeof *s, fit_by_a);
    double *v = xmalloc((m ? m : 1) * sizeof *v), *ln = xmalloc((m ? m : 1) * sizeof *ln);
    int k = 0;
    strbuf counts = {0};
    for (size_t i = 0; i < m && k < ENGINE_STEP_POINTS;) {
        size_t j = i;
        while (j < m && s[j].a <= s[i].a * 1.02 + 0.5)
            j++;
        if (j - i >= 5) {
            for (size_t q = i; q < j; q++) {
                v[q - i] = s[q].b;
                ln[q - i] = s[q].a;
            }
            int len = (int)lround(fit_quantile(ln, j - i, 0.5));
            double f = fit_quantile(v, j - i, 0.5) - c0;
            if (f < 0)
                f = 0;
            /* a point no higher than the one before is noise: left out */
            if (len >= 1 &&
                (k == 0 || (len > e->prefill_tokens[k - 1] && f > e->prefill_ms[k - 1]))) {
                e->prefill_tokens[k] = len;
                e->prefill_ms[k] = f;
                sb_printf(&counts, "%s%d: %zu", k ? ", " : "", len, j - i);
                k++;
            }
        }
        i = j;
    }
    if (k >= 2) {
        e->n_prefill_points = k;
        fit_prov(pv, "prefill_ms_by_tokens",
                 "the median TTFT less decode_base_ms of the requests alone at each prompt length "
                 "(tokens: requests %s); in place of the two per-token terms, which stay as the "
                 "fitted line",
                 counts.s);
    }
    sb_free(&counts);
    free(s);
    free(v);
    free(ln);
}

void fit_lone_requests(const fit_run *run, acc *a) {
    span *s = xmalloc((run->n_req ? run->n_req : 1) * sizeof *s);
    size_t m = 0;
    for (size_t i = 0; i < run->n_req; i++) {
        const fit_req *q = &run->req[i];
        if (isfinite(q->sent) && isfinite(q->last))
            s[m++] = (span){q->sent, q->last, i};
        else if (isfinite(q->sent)) /* failed: it held the server until it ended, unknown */
            s[m++] = (span){q->sent, INFINITY, i};
    }
    qsort(s, m, sizeof *s, fit_by_a);
    double reach = -INFINITY; /* the latest end among those sent before */
    for (size_t k = 0; k < m; k++) {
        const fit_req *q = &run->req[s[k].i];
        int alone = reach <= q->sent && (k + 1 == m || s[k + 1].a >= q->first);
        double idle = isfinite(reach) ? q->sent - reach : NAN;
        if (s[k].b > reach)
            reach = s[k].b;
        if (!alone || !q->ok)
            continue;
        int n = q->prompt - q->cached, c = q->cached;
        int server = isfinite(q->server_prompt_ms) && q->server_prompt_n > 0;
        if (server) {
            n = q->server_prompt_n;
            c = q->prompt > n ? q->prompt - n : 0;
        }
        if (n < 1)
            continue;
        if (a->n_pre == a->cap_pre)
            a->pre =
                xrealloc(a->pre, (a->cap_pre = a->cap_pre ? 2 * a->cap_pre : 256) * sizeof *a->pre);
        a->pre[a->n_pre++] = (pre_obs){(double)n,
                                       (double)n * c + (double)n * (n - 1) / 2.0,
                                       q->first - q->sent,
                                       server ? q->server_prompt_ms : NAN,
                                       idle,
                                       q->prompt,
                                       1};
    }
    free(s);
}

/* Whether the requests that came to an idle server took plainly longer
 * than the warm ones against one fit of all of them: for some threshold
 * of the grid, the median relative excess of those idle that long beats
 * the warm ones' by 2% and by three standard errors. */
static int wake_evident(const pre_obs *o, size_t warm, size_t all, const double beta[3]) {
    static const double grid[] = {20, 50, 100, 200, 500, 1000};
    double *w = xmalloc((warm ? warm : 1) * sizeof *w), *c = xmalloc((all ? all : 1) * sizeof *c);
    for (size_t i = 0; i < warm; i++)
        w[i] = (o[i].y - predict_pre(beta, &o[i])) / o[i].y;
    double mw = fit_quantile(w, warm, 0.5);
    for (size_t i = 0; i < warm; i++)
        w[i] = fabs(w[i] - mw);
    double madw = fit_quantile(w, warm, 0.5);
    int evident = 0;
    for (size_t g = 0; g < sizeof grid / sizeof *grid && !evident; g++) {
        size_t nc = 0;
        for (size_t i = warm; i < all; i++)
            if (isfinite(o[i].idle) && o[i].idle >= grid[g])
                c[nc++] = (o[i].y - predict_pre(beta, &o[i])) / o[i].y;
        if (nc < 5)
            continue;
        double mc = fit_quantile(c, nc, 0.5);
        for (size_t i = 0; i < nc; i++)
            c[i] = fabs(c[i] - mc);
        double madc = fit_quantile(c, nc, 0.5);
        /* a median's standard error: 1.2533 sd / sqrt(n), sd ~ 1.4826 MAD */
        double se = 1.2533 * 1.4826 * sqrt(madc * madc / (double)nc + madw * madw / (double)warm);
        evident = mc - mw > 0.02 && mc - mw > 3 * se;
    }
    free(w);
    free(c);
    return evident;
}

void fit_prefill(acc *a, fit_result *r, json_t *pv) {
    /* the warm ones first (the server busy until just before they came):
     * the prefill is theirs, and the others tell what an idle server's
     * waking costs */
    size_t n_warm = 0;
    for (size_t i = 0; i < a->n_pre; i++)
        if (a->pre[i].idle <= WARM_MS) {
            pre_obs t = a->pre[n_warm];
            a->pre[n_warm++] = a->pre[i];
            a->pre[i] = t;
        }
    size_t n_all = a->n_pre;
    int d_warm = distinct_lengths(a->pre, n_warm), d_all = distinct_lengths(a->pre, n_all);
    double beta[3];
    /* the warm ones alone fit the prefill only when there are enough of
     * them to tell it by length and the others plainly paid for waking */
    if (n_warm >= 20 && d_warm >= (d_all < 3 ? d_all : 3)) {
        fit_prefill_model(a->pre, n_all, beta);
        if (wake_evident(a->pre, n_warm, n_all, beta))
            a->n_pre = n_warm;
    }
    int mask = fit_prefill_model(a->pre, a->n_pre, beta);
    r->one_length = a->n_pre > 0 && distinct_lengths(a->pre, a->n_pre) == 1;
    if (r->one_length) {
        double *lens = xmalloc(a->n_pre * sizeof *lens);
        for (size_t i = 0; i < a->n_pre; i++)
            lens[i] = a->pre[i].n;
        r->one_length_tokens = fit_quantile(lens, a->n_pre, 0.5);
        free(lens);
    }
    /* what the server's own prompt time leaves out of the TTFT (HTTP, the
     * queue to its slot, the first sampling): told, not fitted, since the
     * twin's first token must be the user's */
    double *over = xmalloc(a->n_pre * sizeof *over);
    size_t n_over = 0;
    for (size_t i = 0; i < a->n_pre; i++)
        if (isfinite(a->pre[i].server_ms))
            over[n_over++] = a->pre[i].y - a->pre[i].server_ms;
    int server = n_over > 0;
    r->prefill_from_server = server;
    r->overhead_ms = server ? fit_quantile(over, n_over, 0.5) : NAN;
    free(over);
    double base = beta[0];
    r->lone = a->n_pre;
    engine_params *e = &r->doc.engine;
    e->decode_base_ms = base;
    e->prefill_per_token_ms = beta[1];
    e->prefill_ctx_per_1k_ms = beta[2];
    prefill_table(a->pre, a->n_pre, base, e, pv);
    idle_wake(a->pre, a->n_pre, n_all, e, pv, &r->cold);
    /* residuals of the first token, in TTFT terms */
    double *res = xmalloc(a->n_pre * sizeof *res), *abs_res = xmalloc(a->n_pre * sizeof *abs_res);
    span *by_len = xmalloc(a->n_pre * sizeof *by_len);
    for (size_t i = 0; i < a->n_pre; i++) {
        double n = a->pre[i].n, c = (a->pre[i].ctx - n * (n - 1) / 2) / n;
        double fitted = base + engine_prefill_ms(e, c + n) - engine_prefill_ms(e, c);
        res[i] = (fitted - a->pre[i].y) / a->pre[i].y;
        abs_res[i] = fabs(res[i]);
        by_len[i] = (span){a->pre[i].n, res[i], 0};
    }
    r->resid_p50 = fit_quantile(abs_res, a->n_pre, 0.5);
    r->resid_p90 = fit_quantile(abs_res, a->n_pre, 0.9);
    qsort(by_len, a->n_pre, sizeof *by_len, fit_by_a);
    int bins = a->n_pre >= 60 ? 6 : a->n_pre >= 20 ? 3 : 1;
    for (int b = 0; b < bins; b++) {
        size_t lo = a->n_pre * (size_t)b / (size_t)bins,
               hi = a->n_pre * (size_t)(b + 1) / (size_t)bins;
        size_t k = 0;
        for (size_t i = lo; i < hi; i++)
            res[k++] = by_len[i].b;
        r->bin_lo[b] = (int)by_len[lo].a;
        r->bin_hi[b] = (int)by_len[hi - 1].a;
        r->bin_n[b] = hi - lo;
        r->bin_err[b] = fit_quantile(res, k, 0.5);
    }
    r->n_bins = bins;
    free(res);
    free(abs_res);
    free(by_len);
    r->mask = mask;
    fit_prov(
        pv, "prefill_per_token_ms",
        "weighted least squares of the TTFT of %zu requests that had the server to themselves, "
        "on their computed prompt tokens%s",
        a->n_pre, mask & 4 ? " and the context those attend to" : "");
    if (mask & 4)
        fit_prov(pv, "prefill_ctx_per_1k_ms", "with prefill_per_token_ms (same fit)");
    else
        fit_prov(pv, "prefill_ctx_per_1k_ms", "0: the requests alone do not show one (%s)",
                 distinct_phrase(mask));
    fit_prov(pv, "decode_base_ms",
             "that fit's intercept: a step's fixed cost and the request's own overhead together%s",
             r->prefill_from_server ? "" : " (the TTFT alone cannot part them)");
    if (r->prefill_from_server) {
        char t[160];
        snprintf(t, sizeof t,
                 " (of it, %.3f ms at the median is outside the server's own prompt_ms)",
                 r->overhead_ms);
        json_t *pb = json_object_get(pv, "decode_base_ms");
        char buf[1200];
        snprintf(buf, sizeof buf, "%s%s", json_string_value(pb), t);
        json_object_set_new(pv, "decode_base_ms", json_string(buf));
    }
}
