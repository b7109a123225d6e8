/* fit_internal: what the files of src/fit/ share; nothing outside the
 * folder includes it. fit.c runs the estimate (fit.h says the method) with
 * fit_prefill.c (the requests alone: the prefill, its table, waking an idle
 * server) and fit_decode.c (the gaps between tokens: the step table and
 * the jitter); fit_util.c holds the small statistics they share. */
#ifndef SERVELAB_FIT_INTERNAL_H
#define SERVELAB_FIT_INTERNAL_H

#include "fit/fit.h"

#include <jansson.h>
#include <stddef.h>

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

typedef struct span {
    double a, b;
    size_t i;
} span;

/* What the runs give, gathered run by run: the requests alone, and the
 * clean gaps between tokens by batch. */
typedef struct acc {
    pre_obs *pre;
    size_t n_pre, cap_pre;
    double **gaps; /* by batch */
    size_t *n_gaps, *cap_gaps;
    int max_batch;
    size_t all_gaps, clean;
    int max_decoding;
    /* the most streams seen decoding in a clean gap while a request sent
     * two steps before it still had no first token (held: no prompt was
     * computed in that gap), and in how many gaps */
    int held_b;
    size_t held_n;
    /* the gaps that were one step computing one other request's prompt:
     * the streams decoding in it, the gap, that prompt's fitted prefill */
    struct mixed_gap {
        int b;
        double g, p;
    } * mixed;
    size_t n_mixed, cap_mixed;
} acc;

/* ---- fit_util.c ---- */
int fit_cmp_d(const void *a, const void *b);
/* The q-quantile (0..1) of v[0..n), sorting it; NAN when empty. */
double fit_quantile(double *v, size_t n, double q);
/* qsort order of spans by a. */
int fit_by_a(const void *x, const void *y);
/* How many of the sorted v[0..n) are < x (or <= x with le). */
size_t fit_count_below(const double *v, size_t n, double x, int le);
/* Sets p[key] to the formatted text: a figure's provenance. */
void fit_prov(json_t *p, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- fit_prefill.c ---- */
/* The run's requests alone into a->pre. */
void fit_lone_requests(const fit_run *run, acc *a);
/* The prefill from a->pre into r->doc.engine (decode_base_ms, the line,
 * the table, the waking cost) and its residuals into r, the provenance of
 * the prefill's figures into pv. */
void fit_prefill(acc *a, fit_result *r, json_t *pv);

/* ---- fit_decode.c ---- */
/* The run's clean gaps into a, by batch; e holds the prefill fitted
 * already, to know how long before its first token a request was
 * computing its prompt. */
void fit_decode_gaps(const fit_run *run, const engine_params *e, acc *a);
/* The table's points (batches with min_gaps gaps) into r and
 * r->doc.engine (step table, jitter), the provenance into pv (where: the
 * runs, in words); frees the gaps. The points' count. */
int fit_decode(acc *a, fit_result *r, int min_gaps, const char *where, json_t *pv);
/* When every lone request had one prompt length (and the server gave no
 * prompt time of its own), their TTFT cannot be parted into a step's fixed
 * cost and what the prompt adds: what the steps that computed one prompt
 * while streams decoded took over the table's decode (the median of
 * a->mixed's gap - decode(b)) is the prompt's part, the rest of the TTFT
 * the fixed cost (decode_base_ms); a->mixed's prefills follow. */
void fit_split_one_length(acc *a, fit_result *r, json_t *pv);
/* The cost of a step that computes a prompt while others decode, from
 * a->mixed, into r and r->doc.engine (mixed_per_seq_ms, when it fits those
 * gaps better than the table does); frees them. */
void fit_mixed(acc *a, fit_result *r, json_t *pv);

#endif
