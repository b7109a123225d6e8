/* answer: the report's capacity answer. Read from capacity.json when there
 * is one; else from the runs of the load line (report/load_line.h),
 * ordered by load: the first run whose share of requests meeting the SLO
 * falls below the goal, and the run before it, bracket the answer, which
 * is interpolated linearly in that share between them. A later run that
 * meets the goal again does not move it: users already waited below it.
 * The bound that binds is the one the most successful requests of that
 * first failing run miss (ANSWER_FAILURES when they all met it). Either
 * way the sentence is model/answer.h's. */
#include "report/answer.h"
#include "common/util.h"
#include "report/load_line.h"
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct line_point {
    double x, share;
    int run;
} line_point;

static int cmp_points(const void *a, const void *b) {
    const line_point *p = a, *q = b;
    return (p->x > q->x) - (p->x < q->x);
}

static double run_concurrency(const report_run *rr) {
    json_t *c = json_object_get(json_object_get(rr->files[0].meta, "config"), "concurrency");
    return json_is_number(c) ? json_number_value(c) : 0;
}

/* The runs of the load line with a load and a share, by load: offered rate
 * when every one has a finite rate, else concurrency when every one is a
 * closed loop with one; none otherwise. */
static int line_points(const report *r, int campaign, line_point *pts, int *by_concurrency) {
    int *in = xcalloc((size_t)r->n_runs + 1, sizeof *in);
    char left_out[1024];
    load_line_runs(r, campaign, in, left_out, sizeof left_out);
    int n = 0, all_rate = 1, all_conc = 1;
    for (int k = 0; k < r->n_runs; k++) {
        if (!in[k] || !isfinite(r->runs[k].pooled.goodput_fraction))
            continue;
        all_rate &= isfinite(r->runs[k].params.offered_rps) && r->runs[k].params.offered_rps > 0;
        all_conc &= run_concurrency(&r->runs[k]) > 0;
        pts[n++] = (line_point){0, r->runs[k].pooled.goodput_fraction, k};
    }
    free(in);
    if (!all_rate && !all_conc)
        return 0;
    *by_concurrency = !all_rate;
    for (int i = 0; i < n; i++)
        pts[i].x = all_rate ? r->runs[pts[i].run].params.offered_rps
                            : run_concurrency(&r->runs[pts[i].run]);
    qsort(pts, (size_t)n, sizeof *pts, cmp_points);
    return n;
}

/* The bound the most successful requests of rr miss; ANSWER_FAILURES when
 * none do (the misses are all failures). */
static int binding_bound(const report_run *rr, const slo_spec *slo) {
    size_t miss[SLO_BOUNDS] = {0};
    for (size_t i = 0; i < rr->rows.n; i++) {
        int m = request_slo_misses(&rr->rows.r[i], slo);
        for (int b = 0; b < SLO_BOUNDS && m != SLO_MISSED_FAILED; b++)
            miss[b] += (m >> b) & 1;
    }
    int best = -1;
    for (int b = 0; b < SLO_BOUNDS; b++)
        if (miss[b] && (best < 0 || miss[b] > miss[best]))
            best = b;
    return best >= 0 ? best : ANSWER_FAILURES;
}

/* A bracketing run: its load, its requests and those that missed. */
static answer_run side_of(const report *r, const line_point *p) {
    const run_summary *s = &r->runs[p->run].pooled;
    return (answer_run){p->x, (long)s->requests, (long)(s->requests - s->meeting_slo)};
}

static void interpolate(const report *r, int campaign, report_answer *ra) {
    capacity_answer *a = &ra->a;
    line_point *pts = xcalloc((size_t)r->n_runs + 1, sizeof *pts);
    a->by_concurrency = 0;
    int n = line_points(r, campaign, pts, &a->by_concurrency);
    slo_spec slo = a->slo;
    double goal = a->goal;
    answer_init(a, ANSWER_INTERPOLATED);
    a->slo = slo;
    a->goal = goal;
    a->by_concurrency = n ? a->by_concurrency : 0;
    a->runs = n;
    ra->lowest = a->lowest = n ? pts[0].x : NAN;
    ra->highest = a->reached = n ? pts[n - 1].x : NAN;
    int miss = 0;
    while (miss < n && pts[miss].share >= a->goal)
        miss++;
    if (n == 0)
        a->status = ANSWER_NO_LOAD;
    else if (miss == n)
        a->status = ANSWER_NOT_REACHED;
    else if (miss == 0)
        a->status = ANSWER_MISSED_AT_LOWEST;
    else {
        const line_point *lo = &pts[miss - 1], *hi = &pts[miss];
        a->status = ANSWER_FOUND;
        a->below = side_of(r, lo);
        a->above = side_of(r, hi);
        a->max = lo->x + (lo->share - a->goal) / (lo->share - hi->share) * (hi->x - lo->x);
    }
    if (miss < n)
        a->binding = binding_bound(&r->runs[pts[miss].run], &a->slo);
    answer_sentence(a, ra->sentence, sizeof ra->sentence);
    free(pts);
}

/* "base: " before campaign c's sentence. */
static void name_campaign(const report *r, int c, report_answer *a) {
    const char *label = "";
    for (int k = 0; k < r->n_runs && !*label; k++)
        if (r->runs[k].campaign_index == c)
            label = r->runs[k].campaign;
    size_t p = strlen(label) + 2, n = strlen(a->sentence);
    if (p + n < sizeof a->sentence) {
        memmove(a->sentence + p, a->sentence, n + 1);
        memcpy(a->sentence, label, p - 2);
        memcpy(a->sentence + p - 2, ": ", 2);
    }
}

void answer_build(report *r, char *const *paths, int n_paths) {
    report_answer *a = &r->answer;
    memset(a, 0, sizeof *a);
    char why[512] = "";
    for (int i = 0; i < n_paths; i++) {
        int got = capacity_read(paths[i], a, why, sizeof why);
        if (got > 0)
            return;
        if (got < 0)
            break;
    }
    memset(a, 0, sizeof *a);
    for (int k = 0; k < r->n_runs && !a->present; k++) {
        const slo_spec *s = &r->runs[k].params.slo;
        if (slo_has_bound(s)) {
            a->present = 1;
            a->a.slo = *s;
        }
    }
    if (!a->present)
        return;
    a->a.goal = ANSWER_DEFAULT_GOAL;
    interpolate(r, 0, a);
    if (r->n_campaigns > 1) { /* one answer a campaign, each saying whose */
        r->campaign_answers = xcalloc((size_t)r->n_campaigns, sizeof *r->campaign_answers);
        for (int c = 0; c < r->n_campaigns; c++) {
            report_answer *ca = &r->campaign_answers[c];
            *ca = *a;
            if (c > 0)
                interpolate(r, c, ca);
            name_campaign(r, c, ca);
        }
        *a = r->campaign_answers[0];
    }
    if (why[0]) {
        size_t used = strlen(a->sentence);
        snprintf(a->sentence + used, sizeof a->sentence - used, " (capacity.json left aside: %s)",
                 why);
    }
}
