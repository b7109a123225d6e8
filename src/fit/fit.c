/* fit: the estimation behind `servelab fit` (see fit.h for the method). */
#include "fit/fit.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n), sorting it; NAN when empty. */
static double quantile(double *v, size_t n, double q) {
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_d);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

/* ---- prefill ---- */

/* A request alone is warm when the server had been busy until at most
 * this long before it came. */
#define WARM_MS 20.0

typedef struct pre_obs {
    double n, ctx, y; /* y: the TTFT */
    double server_ms; /* the server's own prompt time; NAN unknown */
    double idle;      /* how long the server had been idle when it came, ms; NAN unknown */
    int len;
    double w; /* its weight in the least squares */
} pre_obs;

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
    qsort(lens, m, sizeof *lens, cmp_d);
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
            double mad = quantile(res, m, 0.5);
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

/* ---- the runs, one at a time ---- */

typedef struct span {
    double a, b;
    size_t i;
} span;

static int by_a(const void *x, const void *y) {
    const span *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* How many of the sorted v[0..n) are < x (or <= x with le). */
static size_t count_below(const double *v, size_t n, double x, int le) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x || (le && v[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct acc {
    pre_obs *pre;
    size_t n_pre, cap_pre;
    double **gaps; /* by batch */
    size_t *n_gaps, *cap_gaps;
    int max_batch;
    size_t all_gaps, clean;
    int max_decoding;
} acc;

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

/* The lone requests of a run: no other request's [sent, last] meets their
 * [sent, first]. */
static void lone_requests(const fit_run *run, acc *a) {
    span *s = xmalloc((run->n_req ? run->n_req : 1) * sizeof *s);
    size_t m = 0;
    for (size_t i = 0; i < run->n_req; i++) {
        const fit_req *q = &run->req[i];
        if (isfinite(q->sent) && isfinite(q->last))
            s[m++] = (span){q->sent, q->last, i};
        else if (isfinite(q->sent)) /* failed: it held the server until it ended, unknown */
            s[m++] = (span){q->sent, INFINITY, i};
    }
    qsort(s, m, sizeof *s, by_a);
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

/* The run's clean decode gaps, by batch. e holds the prefill fitted
 * already, to know how long before its first token a request was computing
 * its prompt. */
static void decode_gaps(const fit_run *run, const engine_params *e, acc *a) {
    size_t n = 0;
    double *firsts = xmalloc((run->n_req + 1) * sizeof *firsts);
    double *lasts = xmalloc((run->n_req + 1) * sizeof *lasts);
    span *win = xmalloc((run->n_req + 1) * sizeof *win); /* prefill windows, by their end */
    size_t nw = 0;
    double longest = 0;
    for (size_t i = 0; i < run->n_req; i++) {
        const fit_req *q = &run->req[i];
        if (!q->ok)
            continue;
        firsts[n] = q->first;
        lasts[n] = q->last;
        n++;
        double p = engine_prefill_ms(e, q->prompt) - engine_prefill_ms(e, q->cached);
        if (p < 0)
            p = 0;
        if (p > longest)
            longest = p;
        win[nw++] = (span){q->first, q->first - p, i}; /* a: end, b: start */
    }
    qsort(firsts, n, sizeof *firsts, cmp_d);
    qsort(lasts, n, sizeof *lasts, cmp_d);
    qsort(win, nw, sizeof *win, by_a);
    double *wend = xmalloc((nw + 1) * sizeof *wend);
    for (size_t k = 0; k < nw; k++)
        wend[k] = win[k].a;
    for (size_t i = 0; i < run->n_req; i++) {
        const fit_req *q = &run->req[i];
        if (!q->ok || q->n_chunks < 2)
            continue;
        for (int j = 1; j < q->n_chunks; j++) {
            double t0 = run->chunk_t[q->chunk0 + j - 1], t1 = run->chunk_t[q->chunk0 + j];
            if (!(t1 > t0) || run->chunk_tokens[q->chunk0 + j] != 1)
                continue;
            a->all_gaps++;
            double g = t1 - t0, mid = (t0 + t1) / 2;
            /* a prompt computed in the gap: a window that ends after t0 and
             * starts before t1 (its end within the gap plus the longest
             * prefill; a tenth of the gap either side for the clocks) */
            double slack = 0.1 * g;
            size_t k = count_below(wend, nw, t0 + slack, 1);
            int dirty = 0;
            for (; k < nw && wend[k] <= t1 + longest + slack && !dirty; k++)
                dirty = win[k].i != i && win[k].b - slack < t1;
            if (dirty)
                continue;
            int b = (int)(count_below(firsts, n, mid, 0) - count_below(lasts, n, mid, 0));
            if (b > a->max_decoding)
                a->max_decoding = b;
            a->clean++;
            add_gap(a, b, g);
        }
    }
    free(firsts);
    free(lasts);
    free(win);
    free(wend);
}

/* ---- limits ---- */

/* The most common nonzero value of field `off` over the runs (the larger
 * on a tie), with how many runs gave it and the first one's source. */
static int common_limit(const fit_run *runs, int n, size_t off, size_t from_off, int *agree,
                        int *given, const char **from) {
    int best = 0, best_n = 0;
    *given = 0;
    *from = NULL;
    for (int i = 0; i < n; i++) {
        int v = *(const int *)((const char *)&runs[i] + off);
        if (v <= 0)
            continue;
        (*given)++;
        int c = 0;
        for (int k = 0; k < n; k++)
            c += *(const int *)((const char *)&runs[k] + off) == v;
        if (c > best_n || (c == best_n && v > best)) {
            best = v;
            best_n = c;
            *from = from_off ? (const char *)&runs[i] + from_off : NULL;
        }
    }
    *agree = best_n;
    return best;
}

static void prov(json_t *p, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void prov(json_t *p, const char *key, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_object_set_new(p, key, json_string(buf));
}

/* "the 3 runs under results/x" or "results/x/a, results/x/b": where the
 * figures came from, short. */
static void runs_phrase(const fit_run *runs, int n, char *buf, size_t cap) {
    if (n == 1) {
        snprintf(buf, cap, "%s", runs[0].dir);
        return;
    }
    size_t common = strlen(runs[0].dir);
    for (int i = 1; i < n; i++) {
        size_t k = 0;
        while (k < common && runs[i].dir[k] == runs[0].dir[k])
            k++;
        common = k;
    }
    while (common > 0 && runs[0].dir[common - 1] != '/')
        common--;
    if (common > 1)
        snprintf(buf, cap, "%d runs under %.*s", n, (int)common - 1, runs[0].dir);
    else
        snprintf(buf, cap, "%d runs", n);
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
    double *x = xmalloc(m * sizeof *x), *idle = xmalloc(m * sizeof *idle), *v = xmalloc(m * sizeof *v);
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
        double w = quantile(v, nv, 0.5), cost = 0;
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
        prov(pv, "idle_wake_ms",
             "the median TTFT beyond the warm prefill of the %zu requests alone that came after "
             "the server had been idle idle_after_ms or longer",
             *cold);
        prov(pv, "idle_after_ms",
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
    qsort(s, m, sizeof *s, by_a);
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
            int len = (int)lround(quantile(ln, j - i, 0.5));
            double f = quantile(v, j - i, 0.5) - c0;
            if (f < 0)
                f = 0;
            /* a point no higher than the one before is noise: left out */
            if (len >= 1 && (k == 0 || (len > e->prefill_tokens[k - 1] && f > e->prefill_ms[k - 1]))) {
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
        prov(pv, "prefill_ms_by_tokens",
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

int fit_estimate(const fit_run *runs, int n, const fit_opts *o, fit_result *r, char *err,
                 size_t errlen) {
    memset(r, 0, sizeof *r);
    r->overhead_ms = NAN;
    for (int i = 1; i < n; i++) {
        if (strcmp(runs[i].server, runs[0].server)) {
            snprintf(err, errlen, "runs of different servers: %s (%s) and %s (%s)", runs[0].server,
                     runs[0].dir, runs[i].server, runs[i].dir);
            return -1;
        }
        if (strcmp(runs[i].model, runs[0].model)) {
            snprintf(err, errlen, "runs of different models: %s (%s) and %s (%s)", runs[0].model,
                     runs[0].dir, runs[i].model, runs[i].dir);
            return -1;
        }
    }
    int min_gaps = o->min_gaps > 0 ? o->min_gaps : 30;
    acc a = {.max_batch = 0};
    a.gaps = xcalloc(1, sizeof *a.gaps);
    a.n_gaps = xcalloc(1, sizeof *a.n_gaps);
    a.cap_gaps = xcalloc(1, sizeof *a.cap_gaps);
    for (int i = 0; i < n; i++) {
        lone_requests(&runs[i], &a);
        r->requests += runs[i].n_req;
    }
    r->runs = (size_t)n;
    char where[600];
    runs_phrase(runs, n, where, sizeof where);
    if (a.n_pre < 3) {
        snprintf(err, errlen,
                 "%zu requests had the server to themselves (3 are needed to fit the prefill); "
                 "add a run at a low rate or --concurrency 1",
                 a.n_pre);
        free(a.pre);
        free(a.gaps);
        free(a.n_gaps);
        free(a.cap_gaps);
        return -1;
    }
    /* the warm ones first (the server busy until just before they came):
     * the prefill is theirs, and the others tell what an idle server's
     * waking costs */
    size_t n_warm = 0;
    for (size_t i = 0; i < a.n_pre; i++)
        if (a.pre[i].idle <= WARM_MS) {
            pre_obs t = a.pre[n_warm];
            a.pre[n_warm++] = a.pre[i];
            a.pre[i] = t;
        }
    size_t n_all = a.n_pre;
    int d_warm = distinct_lengths(a.pre, n_warm), d_all = distinct_lengths(a.pre, n_all);
    if (n_warm >= 20 && d_warm >= (d_all < 3 ? d_all : 3))
        a.n_pre = n_warm; /* else the warm ones cannot tell the prefill by length */
    double beta[3];
    int mask = fit_prefill_model(a.pre, a.n_pre, beta);
    /* what the server's own prompt time leaves out of the TTFT (HTTP, the
     * queue to its slot, the first sampling): told, not fitted, since the
     * twin's first token must be the user's */
    double *over = xmalloc(a.n_pre * sizeof *over);
    size_t n_over = 0;
    for (size_t i = 0; i < a.n_pre; i++)
        if (isfinite(a.pre[i].server_ms))
            over[n_over++] = a.pre[i].y - a.pre[i].server_ms;
    int server = n_over > 0;
    r->prefill_from_server = server;
    r->overhead_ms = server ? quantile(over, n_over, 0.5) : NAN;
    free(over);
    double base = beta[0];
    r->lone = a.n_pre;
    json_t *pv = json_object(); /* the provenance, figure by figure */
    engine_params *e = &r->doc.engine;
    e->decode_base_ms = base;
    e->prefill_per_token_ms = beta[1];
    e->prefill_ctx_per_1k_ms = beta[2];
    prefill_table(a.pre, a.n_pre, base, e, pv);
    idle_wake(a.pre, a.n_pre, n_all, e, pv, &r->cold);
    /* residuals of the first token, in TTFT terms */
    double *res = xmalloc(a.n_pre * sizeof *res), *abs_res = xmalloc(a.n_pre * sizeof *abs_res);
    span *by_len = xmalloc(a.n_pre * sizeof *by_len);
    for (size_t i = 0; i < a.n_pre; i++) {
        double n = a.pre[i].n, c = (a.pre[i].ctx - n * (n - 1) / 2) / n;
        double fitted = base + engine_prefill_ms(e, c + n) - engine_prefill_ms(e, c);
        res[i] = (fitted - a.pre[i].y) / a.pre[i].y;
        abs_res[i] = fabs(res[i]);
        by_len[i] = (span){a.pre[i].n, res[i], 0};
    }
    r->resid_p50 = quantile(abs_res, a.n_pre, 0.5);
    r->resid_p90 = quantile(abs_res, a.n_pre, 0.9);
    qsort(by_len, a.n_pre, sizeof *by_len, by_a);
    int bins = a.n_pre >= 60 ? 6 : a.n_pre >= 20 ? 3 : 1;
    for (int b = 0; b < bins; b++) {
        size_t lo = a.n_pre * (size_t)b / (size_t)bins,
               hi = a.n_pre * (size_t)(b + 1) / (size_t)bins;
        size_t k = 0;
        for (size_t i = lo; i < hi; i++)
            res[k++] = by_len[i].b;
        r->bin_lo[b] = (int)by_len[lo].a;
        r->bin_hi[b] = (int)by_len[hi - 1].a;
        r->bin_n[b] = hi - lo;
        r->bin_err[b] = quantile(res, k, 0.5);
    }
    r->n_bins = bins;
    free(res);
    free(abs_res);
    free(by_len);

    for (int i = 0; i < n; i++)
        decode_gaps(&runs[i], e, &a);
    r->gaps = a.all_gaps;
    r->clean_gaps = a.clean;
    /* every point's gaps as relative deviations from its median, pooled */
    size_t n_dev = 0;
    for (int b = 1; b <= a.max_batch; b++)
        n_dev += a.n_gaps[b];
    double *dev = xmalloc((n_dev ? n_dev : 1) * sizeof *dev);
    size_t ns = 0;
    for (int b = 1; b <= a.max_batch && r->n_points < ENGINE_STEP_POINTS; b++) {
        if (a.n_gaps[b] < (size_t)min_gaps)
            continue;
        fit_point *p = &r->points[r->n_points++];
        p->batch = b;
        p->gaps = a.n_gaps[b];
        p->p10 = quantile(a.gaps[b], a.n_gaps[b], 0.1);
        p->p90 = quantile(a.gaps[b], a.n_gaps[b], 0.9);
        p->median = quantile(a.gaps[b], a.n_gaps[b], 0.5);
        /* the mean, not the median: a TPOT is a mean of gaps, and a real
         * step's time leans right (the odd slow step); the slowest 0.1%
         * left out, the network's hiccups */
        double top = quantile(a.gaps[b], a.n_gaps[b], 0.999), sum = 0;
        size_t in = 0;
        for (size_t k = 0; k < a.n_gaps[b]; k++)
            if (a.gaps[b][k] <= top) {
                sum += a.gaps[b][k];
                in++;
            }
        p->mean = in ? sum / (double)in : p->median;
        for (size_t k = 0; k < a.n_gaps[b]; k++)
            dev[ns++] = fabs(a.gaps[b][k] - p->mean) / p->mean;
    }
    for (int b = 0; b <= a.max_batch; b++)
        free(a.gaps[b]);
    free(a.gaps);
    free(a.n_gaps);
    free(a.cap_gaps);
    if (r->n_points == 0) {
        snprintf(err, errlen,
                 "no batch had %d clean gaps between tokens (%zu gaps, %zu clean); give runs with "
                 "chunks.csv and longer answers, or a lower --min-gaps",
                 min_gaps, a.all_gaps, a.clean);
        free(dev);
        free(a.pre);
        json_decref(pv);
        r->doc.engine = (engine_params){0};
        return -1;
    }

    profile_doc *d = &r->doc;
    d->provenance = pv;
    d->name = xstrdup(o->name ? o->name : "fitted");
    d->server = xstrdup(runs[0].server);
    d->model = xstrdup(runs[0].model);
    char about[1024];
    snprintf(about, sizeof about, "fitted by servelab fit from %s", where);
    d->about = xstrdup(about);
    /* limits */
    int agree, given;
    const char *from;
    e->max_num_seqs = common_limit(runs, n, offsetof(fit_run, slots), offsetof(fit_run, slots_from),
                                   &agree, &given, &from);
    if (e->max_num_seqs > 0)
        prov(pv, "max_num_seqs", "%s, in %d of %d runs%s", from, agree, n,
             agree < given ? " (the others differ: give --max-num-seqs to choose)" : "");
    else {
        e->max_num_seqs = a.max_decoding > 0 ? a.max_decoding : 1;
        prov(pv, "max_num_seqs",
             "no run reported it: the most streams seen decoding at once, a lower bound");
    }
    int bs = common_limit(runs, n, offsetof(fit_run, block_size), 0, &agree, &given, &from);
    e->block_size = bs > 0 ? bs : 16;
    e->max_model_len = common_limit(runs, n, offsetof(fit_run, max_model_len),
                                    offsetof(fit_run, len_from), &agree, &given, &from);
    const char *len_from = from;
    int len_agree = agree, len_given = given;
    e->kv_blocks = common_limit(runs, n, offsetof(fit_run, kv_blocks), offsetof(fit_run, kv_from),
                                &agree, &given, &from);
    if (e->kv_blocks > 0)
        prov(pv, "kv_blocks", "%s, in %d of %d runs", from, agree, n);
    int longest = 0;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < runs[i].n_req; k++)
            if (runs[i].req[k].prompt + runs[i].req[k].output > longest)
                longest = runs[i].req[k].prompt + runs[i].req[k].output;
    if (e->max_model_len > 0)
        prov(pv, "max_model_len", "%s, in %d of %d runs", len_from, len_agree, n);
    else {
        e->max_model_len = longest > 2 ? longest : 2048;
        prov(pv, "max_model_len", "no run reported it: the longest request seen (%d tokens)",
             longest);
    }
    (void)len_given;
    if (e->kv_blocks <= 0) {
        e->kv_blocks = (e->max_model_len * e->max_num_seqs + e->block_size - 1) / e->block_size;
        prov(pv, "kv_blocks", "no run reported it: room for max_model_len x max_num_seqs");
    }
    if ((long long)e->kv_blocks * e->block_size < e->max_model_len)
        e->max_model_len = e->kv_blocks * e->block_size;
    prov(pv, "block_size", bs > 0 ? "with kv_blocks" : "vLLM's and llama.cpp's 16 (not reported)");
    e->max_batched_tokens = common_limit(runs, n, offsetof(fit_run, batch_tokens),
                                         offsetof(fit_run, batch_from), &agree, &given, &from);
    if (e->max_batched_tokens > 0)
        prov(pv, "max_num_batched_tokens", "%s, in %d of %d runs", from, agree, n);
    else {
        e->max_batched_tokens = e->max_model_len > 2048 ? e->max_model_len : 2048;
        prov(pv, "max_num_batched_tokens",
             "not reported: %d, so that every prompt seen is one step", e->max_batched_tokens);
    }
    /* steps */
    e->decode_base_ms = base;
    e->n_step_points = r->n_points;
    strbuf counts = {0};
    for (int i = 0; i < r->n_points; i++) {
        e->step_batch[i] = r->points[i].batch;
        e->step_ms[i] = r->points[i].mean;
        sb_printf(&counts, "%s%d: %zu", i ? ", " : "", r->points[i].batch, r->points[i].gaps);
    }
    prov(pv, "step_ms_by_batch",
         "the mean gap between two tokens of a stream (its slowest 0.1%% left out), by the "
         "streams decoding in its middle, with no prompt computed in it; %zu of %zu gaps of %s (by batch: %s)",
         a.clean, a.all_gaps, where, counts.s);
    sb_free(&counts);
    prov(pv, "prefill_per_token_ms",
         "weighted least squares of the TTFT of %zu requests that had the server to themselves, "
         "on their computed prompt tokens%s",
         a.n_pre, mask & 4 ? " and the context those attend to" : "");
    if (mask & 4)
        prov(pv, "prefill_ctx_per_1k_ms", "with prefill_per_token_ms (same fit)");
    else
        prov(pv, "prefill_ctx_per_1k_ms", "0: the requests alone do not show one (%s)",
             distinct_phrase(mask));
    prov(pv, "decode_base_ms",
         "that fit's intercept: a step's fixed cost and the request's own overhead together%s",
         server ? "" : " (the TTFT alone cannot part them)");
    if (server) {
        char t[160];
        snprintf(t, sizeof t,
                 " (of it, %.3f ms at the median is outside the server's own prompt_ms)",
                 r->overhead_ms);
        json_t *pb = json_object_get(pv, "decode_base_ms");
        char buf[1200];
        snprintf(buf, sizeof buf, "%s%s", json_string_value(pb), t);
        json_object_set_new(pv, "decode_base_ms", json_string(buf));
    }
    /* a robust sd first (1.4826 x MAD), then the root mean square of the
     * deviations within 4 of it: as steady as a plain sd on a normal step,
     * and deaf to the odd gap the network stretched */
    double s0 = ns ? 1.4826 * quantile(dev, ns, 0.5) : 0, ss = 0;
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
    prov(pv, "jitter",
         "the root mean square of (gap - its point's mean) / that mean over the table's "
         "gaps, those beyond 4 robust sd left out");
    e->enable_prefix_caching = 1;
    prov(pv, "no_prefix_caching", "false: vLLM's default (llama.cpp's prompt cache stands in)");
    /* output length without --ignore-eos */
    double sum = 0;
    size_t cnt = 0;
    for (int i = 0; i < n; i++) {
        if (runs[i].ignore_eos || runs[i].max_tokens <= 0)
            continue;
        for (size_t k = 0; k < runs[i].n_req; k++)
            if (runs[i].req[k].ok && runs[i].req[k].output > 0) {
                sum += (double)runs[i].req[k].output / runs[i].max_tokens;
                cnt++;
            }
    }
    if (cnt >= 10) {
        double p = 2 * sum / (double)cnt - 1;
        d->eos_min_frac_pct = (int)lround(100 * (p < 0 ? 0 : p > 1 ? 1 : p));
        prov(pv, "eos_min_frac_pct", "2 x the mean of output / max_tokens - 1, over %zu requests",
             cnt);
    } else {
        d->eos_min_frac_pct = 50;
        prov(pv, "eos_min_frac_pct", "50, the simulator's: no run let the server end its answers");
    }
    /* the record */
    json_t *rec = d->fit = json_object();
    json_t *rl = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(rl, json_string(runs[i].dir));
    json_object_set_new(rec, "runs", rl);
    json_object_set_new(rec, "requests", json_integer((json_int_t)r->requests));
    json_object_set_new(rec, "gaps", json_integer((json_int_t)a.all_gaps));
    json_object_set_new(rec, "clean_gaps", json_integer((json_int_t)a.clean));
    json_t *pts = json_array();
    for (int i = 0; i < r->n_points; i++)
        json_array_append_new(pts, json_pack("{s:i,s:I,s:f,s:f,s:f,s:f}", "batch",
                                             r->points[i].batch, "gaps",
                                             (json_int_t)r->points[i].gaps, "mean_ms",
                                             r->points[i].mean, "median_ms",
                                             r->points[i].median, "p10_ms", r->points[i].p10,
                                             "p90_ms", r->points[i].p90));
    json_object_set_new(rec, "decode", pts);
    json_t *pre = json_pack("{s:I,s:s,s:f,s:f}", "requests", (json_int_t)a.n_pre, "from",
                            "ttft", "abs_err_p50", r->resid_p50,
                            "abs_err_p90", r->resid_p90);
    json_t *bl = json_array();
    for (int b = 0; b < r->n_bins; b++)
        json_array_append_new(bl, json_pack("{s:i,s:i,s:I,s:f}", "tokens_from", r->bin_lo[b],
                                            "tokens_to", r->bin_hi[b], "requests",
                                            (json_int_t)r->bin_n[b], "median_err", r->bin_err[b]));
    json_object_set_new(pre, "by_length", bl);
    if (server)
        json_object_set_new(pre, "ttft_less_prompt_ms_p50", json_real(r->overhead_ms));
    json_object_set_new(rec, "prefill", pre);
    free(a.pre);
    return 0;
}

void fit_print(FILE *f, const fit_result *r) {
    const engine_params *e = &r->doc.engine;
    fprintf(f, "fit: %zu runs, %zu requests; %zu gaps between tokens, %zu with no prompt in them\n",
            r->runs, r->requests, r->gaps, r->clean_gaps);
    fprintf(f, "server: %s; model: %s\n\n", r->doc.server, r->doc.model);
    fprintf(f, "decode step by batch (ms; the table is the mean)\n"
               "  batch      gaps      mean    median       p10       p90\n");
    for (int i = 0; i < r->n_points; i++)
        fprintf(f, "  %5d  %8zu  %8.3f  %8.3f  %8.3f  %8.3f\n", r->points[i].batch,
                r->points[i].gaps, r->points[i].mean, r->points[i].median, r->points[i].p10,
                r->points[i].p90);
    fprintf(f,
            "\nprefill from %zu requests alone (%s): first token = %.3f ms + %.5f ms a prompt "
            "token + %.5f ms a token per 1000 before it (the fitted line)\n",
            r->lone, "their TTFT",
            e->decode_base_ms, e->prefill_per_token_ms, e->prefill_ctx_per_1k_ms);
    if (e->n_prefill_points > 0) {
        fprintf(f, "  as measured, the twin's (the cost of a prompt's first N tokens, ms):");
        for (int i = 0; i < e->n_prefill_points; i++)
            fprintf(f, "%s %d: %.2f", i ? "," : "", e->prefill_tokens[i], e->prefill_ms[i]);
        fprintf(f, "\n");
    }
    if (e->idle_wake_ms > 0)
        fprintf(f, "  after %.0f ms idle or more the next step takes %.2f ms more (%zu requests)\n",
                e->idle_after_ms, e->idle_wake_ms, r->cold);
    else
        fprintf(f, "  no cost of waking an idle server seen\n");
    if (r->prefill_from_server)
        fprintf(f, "  of which outside the server's own prompt_ms: %.3f ms at the median\n",
                r->overhead_ms);
    fprintf(f, "  residuals |fitted - measured| / measured TTFT: p50 %.1f%%, p90 %.1f%%\n",
            100 * r->resid_p50, 100 * r->resid_p90);
    fprintf(f, "  by prompt tokens:");
    for (int b = 0; b < r->n_bins; b++)
        fprintf(f, "%s %d-%d (%zu) %+.1f%%", b ? "," : "", r->bin_lo[b], r->bin_hi[b], r->bin_n[b],
                100 * r->bin_err[b]);
    fprintf(f,
            "\n\nlimits: max_num_seqs %d, kv_blocks %d x %d tokens, max_model_len %d, "
            "max_num_batched_tokens %d; jitter %.3f; eos_min_frac_pct %d\n",
            e->max_num_seqs, e->kv_blocks, e->block_size, e->max_model_len, e->max_batched_tokens,
            e->jitter, r->doc.eos_min_frac_pct);
}

void fit_result_free(fit_result *r) {
    profile_doc_free(&r->doc);
}
