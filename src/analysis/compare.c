/* compare: the figures' bootstrap intervals of change (compare.h says what
 * is resampled for which figure, and why). A side keeps, sorted once, the
 * values each figure is a percentile of, each ITL gap with the request it
 * belongs to, and each request's share of the rates; every resample is
 * then O(1) for a TTFT, TPOT or E2E percentile, O(requests + gaps) for the
 * three ITL percentiles together and O(requests) for the four rates. */
#include "analysis/compare.h"
#include "analysis/stats.h"
#include "common/rng.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    figure_unit unit;
} figures[FIG_COUNT] = {
    {"ttft_p50", UNIT_MS},
    {"ttft_p95", UNIT_MS},
    {"ttft_p99", UNIT_MS},
    {"tpot_p50", UNIT_MS},
    {"tpot_p95", UNIT_MS},
    {"tpot_p99", UNIT_MS},
    {"itl_p50", UNIT_MS},
    {"itl_p95", UNIT_MS},
    {"itl_p99", UNIT_MS},
    {"e2e_p50", UNIT_MS},
    {"e2e_p95", UNIT_MS},
    {"e2e_p99", UNIT_MS},
    {"output_tokens_per_s", UNIT_TOK_S},
    {"achieved_rps", UNIT_REQ_S},
    {"goodput_rps", UNIT_REQ_S},
    {"goodput_fraction", UNIT_FRACTION},
};

/* The percentile each latency figure is, by its place in its group of three. */
static const double pcts[3] = {50, 95, 99};

const char *figure_name(int fig) {
    return fig >= 0 && fig < FIG_COUNT ? figures[fig].name : "";
}

int figure_find(const char *name) {
    for (int f = 0; f < FIG_COUNT; f++)
        if (!strcmp(name, figures[f].name))
            return f;
    return -1;
}

int figure_lower_is_better(int fig) {
    return figures[fig].unit == UNIT_MS;
}

figure_unit figure_unit_of(int fig) {
    return figures[fig].unit;
}

static double dist_pct(const dist *d, int k) {
    return k == 0 ? d->p50 : k == 1 ? d->p95 : d->p99;
}

double figure_value(const run_summary *s, int fig) {
    if (fig <= FIG_E2E_P99) {
        const dist *d[] = {&s->ttft, &s->tpot, &s->itl, &s->e2e};
        return d[fig / 3]->n ? dist_pct(d[fig / 3], fig % 3) : NAN;
    }
    switch (fig) {
    case FIG_OUTPUT_TOKENS_PER_S: return s->output_tokens_per_s;
    case FIG_ACHIEVED_RPS: return s->achieved_rps;
    case FIG_GOODPUT_RPS: return s->has_slo ? s->goodput_rps : NAN;
    case FIG_GOODPUT_FRACTION: return s->has_slo ? s->goodput_fraction : NAN;
    }
    return NAN;
}

const char *verdict_name(verdict v) {
    switch (v) {
    case VERDICT_FEW: return "too few requests";
    case VERDICT_GONE: return "worse: none in new";
    case VERDICT_SAME: return "no significant change";
    case VERDICT_BETTER: return "better";
    case VERDICT_WORSE: return "worse";
    default: return "n/a";
    }
}

/* One request's part in the rates. */
typedef struct rate_unit {
    double end_ms; /* 0 when unknown, as summarize() reads it */
    double tokens; /* output tokens of a success, else 0 */
    uint8_t ok, meets;
} rate_unit;

typedef struct itl_gap {
    float gap_ms;
    uint32_t req; /* the request it belongs to, 0-based over the requests with gaps */
} itl_gap;

/* The sorted gaps [from, to) around one ITL percentile, and how many of
 * each request's gaps lie before `from`: a resample's percentile almost
 * always falls inside, so only the window is walked (see itl_at). */
typedef struct itl_window {
    size_t from, to;
    uint32_t *below;
} itl_window;

struct compare_side {
    double *lat[3]; /* TTFT, TPOT, E2E of the successful requests, sorted */
    size_t n_lat[3];
    itl_gap *gaps; /* sorted by gap */
    size_t n_gaps;
    uint32_t *req_gaps; /* gaps of each request that has any */
    size_t n_gap_reqs;
    itl_window win[3];  /* around each ITL percentile */
    rate_unit *units;   /* every request, repetition by repetition */
    size_t *part_start; /* repetition j: units[part_start[j] .. part_start[j + 1]) */
    int parts;
};

/* The latencies as summarize() takes them: TTFT of a success with a first
 * token, TPOT of one with two tokens or more, E2E of every success. */
static void take_latencies(compare_side *s, const run_rows *rows) {
    for (int k = 0; k < 3; k++)
        s->lat[k] = xmalloc((rows->n ? rows->n : 1) * sizeof *s->lat[k]);
    for (size_t i = 0; i < rows->n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->error != ERR_NONE)
            continue;
        if (!isnan(r->first_ms))
            s->lat[0][s->n_lat[0]++] = r->first_ms - r->sent_ms;
        if (r->output_tokens >= 2 && !isnan(r->first_ms))
            s->lat[1][s->n_lat[1]++] = (r->last_ms - r->first_ms) / (r->output_tokens - 1);
        s->lat[2][s->n_lat[2]++] = r->end_ms - r->sent_ms;
    }
    for (int k = 0; k < 3; k++)
        sort_doubles(s->lat[k], s->n_lat[k]);
}

static int cmp_gap(const void *a, const void *b) {
    float x = ((const itl_gap *)a)->gap_ms, y = ((const itl_gap *)b)->gap_ms;
    return (x > y) - (x < y);
}

/* Window q: the gaps from quantile p - d to p + d, d eight standard errors
 * of a quantile estimated from as many independent draws as there are
 * requests (a request's gaps count once: they are not independent). */
static void take_window(compare_side *s, int q) {
    itl_window *w = &s->win[q];
    double p = pcts[q] / 100, m = (double)(s->n_gap_reqs ? s->n_gap_reqs : 1);
    double d = 8 * sqrt(p * (1 - p) / m) + 1e-9;
    double n = (double)s->n_gaps;
    w->from = (size_t)fmax(0, floor(n * (p - d)));
    w->to = (size_t)fmin(n, ceil(n * (p + d)) + 1);
    w->below = xcalloc(s->n_gap_reqs ? s->n_gap_reqs : 1, sizeof *w->below);
    for (size_t i = 0; i < w->from; i++)
        w->below[s->gaps[i].req]++;
}

/* Each gap with its request. Rows without request starts (not from the
 * loader) count every gap as a request of its own. */
static void take_gaps(compare_side *s, const run_rows *rows) {
    size_t n = rows->n_itl, starts = rows->n_itl_starts;
    s->n_gap_reqs = starts ? starts : n;
    s->gaps = xmalloc((n ? n : 1) * sizeof *s->gaps);
    s->req_gaps = xcalloc(s->n_gap_reqs ? s->n_gap_reqs : 1, sizeof *s->req_gaps);
    size_t req = 0;
    for (size_t i = 0; i < n; i++) {
        if (!starts)
            req = i;
        else
            while (req + 1 < starts && rows->itl_starts[req + 1] <= i)
                req++;
        s->gaps[i].gap_ms = rows->itl_ms[i];
        s->gaps[i].req = (uint32_t)req;
        s->req_gaps[req]++;
    }
    s->n_gaps = n;
    qsort(s->gaps, n, sizeof *s->gaps, cmp_gap);
    for (int q = 0; q < 3; q++)
        take_window(s, q);
}

static void take_rates(compare_side *s, const run_rows *rows, const slo_spec *slo) {
    for (size_t i = 0; i < rows->n; i++)
        if (rows->r[i].part + 1 > s->parts)
            s->parts = rows->r[i].part + 1;
    s->part_start = xcalloc((size_t)s->parts + 2, sizeof *s->part_start);
    for (size_t i = 0; i < rows->n; i++)
        s->part_start[rows->r[i].part + 2]++;
    for (int j = 2; j <= s->parts + 1; j++)
        s->part_start[j] += s->part_start[j - 1];
    s->units = xmalloc((rows->n ? rows->n : 1) * sizeof *s->units);
    for (size_t i = 0; i < rows->n; i++) { /* a counting sort by repetition */
        const req_rec *r = &rows->r[i];
        int ok = r->error == ERR_NONE;
        rate_unit u = {.end_ms = r->end_ms > 0 ? r->end_ms : 0,
                       .tokens = ok && r->output_tokens > 0 ? r->output_tokens : 0,
                       .ok = (uint8_t)ok,
                       .meets = (uint8_t)request_meets_slo(r, slo)};
        s->units[s->part_start[r->part + 1]++] = u;
    }
}

compare_side *compare_side_new(const run_rows *rows, const slo_spec *slo) {
    compare_side *s = xcalloc(1, sizeof *s);
    take_latencies(s, rows);
    take_gaps(s, rows);
    take_rates(s, rows, slo);
    return s;
}

void compare_side_free(compare_side *s) {
    if (!s)
        return;
    for (int k = 0; k < 3; k++)
        free(s->lat[k]);
    free(s->gaps);
    free(s->req_gaps);
    for (int q = 0; q < 3; q++)
        free(s->win[q].below);
    free(s->units);
    free(s->part_start);
    free(s);
}

/* The values at ranks r0 <= r1 (0-based) of the resample weighted by w,
 * walking the sorted gaps [from, to) with `below` gaps before them: 0, or
 * -1 when a rank lies outside. */
static int itl_at(const compare_side *s, const uint32_t *w, size_t from, size_t to, double below,
                  double r0, double r1, double *v0, double *v1) {
    if (r0 < below)
        return -1;
    int found = 0;
    for (size_t i = from; i < to && found < 2; i++) {
        below += w[s->gaps[i].req];
        if (!found && r0 < below) {
            *v0 = s->gaps[i].gap_ms;
            found = 1;
        }
        if (found == 1 && r1 < below) {
            *v1 = s->gaps[i].gap_ms;
            found = 2;
        }
    }
    return found == 2 ? 0 : -1;
}

/* One resample of the requests with gaps: the three ITL percentiles of
 * their pooled gaps, each request weighted by how often it was drawn.
 * numpy's linear rule on that multiset: rank h = (N - 1) p / 100, the
 * values at floor h and the next rank, looked up in the percentile's
 * window, or in all the gaps when the window misses it. */
static void itl_resample(const compare_side *s, uint32_t *w, rng *r, double *out) {
    size_t m = s->n_gap_reqs;
    memset(w, 0, m * sizeof *w);
    double total = 0, below[3] = {0, 0, 0};
    for (size_t k = 0; k < m; k++) {
        size_t j = (size_t)rng_range(r, 0, (int64_t)m - 1);
        w[j]++;
        total += s->req_gaps[j];
    }
    for (size_t j = 0; j < m; j++)
        for (int q = 0; q < 3 && w[j]; q++)
            below[q] += (double)w[j] * s->win[q].below[j];
    for (int q = 0; q < 3; q++) {
        double h = (total - 1) * pcts[q] / 100.0, r0 = floor(h), r1 = fmin(r0 + 1, total - 1);
        double v0 = NAN, v1 = NAN;
        const itl_window *win = &s->win[q];
        if (itl_at(s, w, win->from, win->to, below[q], r0, r1, &v0, &v1))
            itl_at(s, w, 0, s->n_gaps, 0, r0, r1, &v0, &v1);
        out[q] = v0 + (h - r0) * (v1 - v0);
    }
}

/* One resample of every repetition's requests within it: the four rates,
 * each over the resample's own duration. */
static void rates_resample(const compare_side *s, rng *r, double *out) {
    double tokens = 0, done = 0, meeting = 0, duration_ms = 0;
    size_t n = 0;
    for (int j = 0; j < s->parts; j++) {
        size_t first = s->part_start[j], m = s->part_start[j + 1] - first;
        double end = 0;
        for (size_t k = 0; k < m; k++) {
            const rate_unit *u = &s->units[first + (size_t)rng_range(r, 0, (int64_t)m - 1)];
            end = fmax(end, u->end_ms);
            tokens += u->tokens;
            done += u->ok;
            meeting += u->meets;
        }
        duration_ms += end;
        n += m;
    }
    double d = duration_ms > 0 ? duration_ms / 1000.0 : NAN;
    out[0] = tokens / d;
    out[1] = done / d;
    out[2] = meeting / d;
    out[3] = n ? meeting / (double)n : NAN;
}

/* Every figure's resamples: reps[fig * count + i]. */
static void side_resamples(const compare_side *s, int count, uint64_t seed, double *reps) {
    for (int f = 0; f <= FIG_E2E_P99; f++) {
        if (f >= FIG_ITL_P50 && f <= FIG_ITL_P99)
            continue;
        int k = f / 3 - (f > FIG_ITL_P99); /* TTFT, TPOT, then E2E after ITL's group */
        bootstrap_percentile_reps(s->lat[k], s->n_lat[k], pcts[f % 3], count,
                                  mix64(seed + (uint64_t)f), reps + (size_t)f * count);
    }
    rng r;
    rng_seed(&r, mix64(seed + FIG_ITL_P50));
    uint32_t *w = xmalloc((s->n_gap_reqs ? s->n_gap_reqs : 1) * sizeof *w);
    for (int i = 0; i < count; i++) {
        double v[3] = {NAN, NAN, NAN};
        if (s->n_gaps)
            itl_resample(s, w, &r, v);
        for (int q = 0; q < 3; q++)
            reps[(size_t)(FIG_ITL_P50 + q) * count + i] = v[q];
    }
    free(w);
    rng_seed(&r, mix64(seed + FIG_OUTPUT_TOKENS_PER_S));
    for (int i = 0; i < count; i++) {
        double v[4];
        rates_resample(s, &r, v);
        for (int q = 0; q < 4; q++)
            reps[(size_t)(FIG_OUTPUT_TOKENS_PER_S + q) * count + i] = v[q];
    }
}

/* The 2.5th and 97.5th percentiles of the finite values among x[0..n)
 * (reordered); NAN for both when there are none. */
static void interval_of(double *x, int n, double *lo, double *hi) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]))
            x[k++] = x[i];
    sort_doubles(x, (size_t)k);
    *lo = k ? percentile_sorted(x, (size_t)k, 2.5) : NAN;
    *hi = k ? percentile_sorted(x, (size_t)k, 97.5) : NAN;
}

/* How many values a side resamples for the figure. */
static size_t side_count(const compare_side *s, int fig) {
    if (fig >= FIG_ITL_P50 && fig <= FIG_ITL_P99)
        return s->n_gap_reqs;
    if (fig <= FIG_E2E_P99)
        return s->n_lat[fig / 3 - (fig > FIG_ITL_P99)];
    return s->part_start[s->parts];
}

static void judge(int fig, const double *b, const double *n, int count, double *tmp,
                  figure_change *c) {
    c->diff = c->new_ - c->base;
    c->rel = c->base != 0 ? c->new_ / c->base - 1 : NAN;
    for (int i = 0; i < count; i++)
        tmp[i] = n[i] - b[i];
    interval_of(tmp, count, &c->diff_lo, &c->diff_hi);
    for (int i = 0; i < count; i++)
        tmp[i] = b[i] != 0 ? n[i] / b[i] - 1 : NAN;
    interval_of(tmp, count, &c->rel_lo, &c->rel_hi);
    if (isfinite(c->base) && c->n_base >= COMPARE_MIN_SAMPLES && !isfinite(c->new_))
        c->v = VERDICT_GONE;
    else if (!isfinite(c->base) || !isfinite(c->new_) || isnan(c->diff_lo))
        c->v = VERDICT_NA;
    else if (c->n_base < COMPARE_MIN_SAMPLES || c->n_new < COMPARE_MIN_SAMPLES)
        c->v = VERDICT_FEW;
    else if (c->diff_lo > 0)
        c->v = figure_lower_is_better(fig) ? VERDICT_WORSE : VERDICT_BETTER;
    else if (c->diff_hi < 0)
        c->v = figure_lower_is_better(fig) ? VERDICT_BETTER : VERDICT_WORSE;
    else
        c->v = VERDICT_SAME;
}

void compare_figures(const compare_side *base, const run_summary *sb, const compare_side *new_,
                     const run_summary *sn, int resamples, uint64_t seed, figure_change *out) {
    size_t cells = (size_t)FIG_COUNT * (size_t)resamples;
    double *rb = xmalloc(cells * sizeof *rb), *rn = xmalloc(cells * sizeof *rn);
    double *tmp = xmalloc((size_t)resamples * sizeof *tmp);
    /* two independent streams: the sides are resampled apart */
    side_resamples(base, resamples, mix64(seed), rb);
    side_resamples(new_, resamples, mix64(seed ^ 0x6e6577ULL), rn);
    for (int f = 0; f < FIG_COUNT; f++) {
        figure_change *c = &out[f];
        memset(c, 0, sizeof *c);
        c->base = figure_value(sb, f);
        c->new_ = figure_value(sn, f);
        c->n_base = side_count(base, f);
        c->n_new = side_count(new_, f);
        size_t at = (size_t)f * (size_t)resamples;
        judge(f, rb + at, rn + at, resamples, tmp, c);
    }
    free(rb);
    free(rn);
    free(tmp);
}
