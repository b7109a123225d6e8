/* answer: the capacity sentence. Read from capacity.json when there is
 * one; else from the runs of the load line (report/load_line.h), ordered
 * by load: the first run whose share of requests meeting the SLO falls
 * below the goal, and the run before it, bracket the answer, which is
 * interpolated linearly in that share between them. A later run that meets
 * the goal again does not move it: users already waited below it. The
 * bound that binds is the one the most successful requests of that first
 * failing run miss. */
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
static int line_points(const report *r, int campaign, line_point *pts, char *by, size_t cap) {
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
    snprintf(by, cap, "%s", all_rate ? "rate" : "concurrency");
    for (int i = 0; i < n; i++)
        pts[i].x = all_rate ? r->runs[pts[i].run].params.offered_rps
                            : run_concurrency(&r->runs[pts[i].run]);
    qsort(pts, (size_t)n, sizeof *pts, cmp_points);
    return n;
}

/* The bound the most successful requests of rr miss; "" when none do
 * (the misses are all failures). */
static void binding_bound(const report_run *rr, const slo_spec *slo, char *out, size_t cap) {
    size_t miss[4] = {0};
    for (size_t i = 0; i < rr->rows.n; i++) {
        const req_rec *q = &rr->rows.r[i];
        if (q->error != ERR_NONE)
            continue;
        miss[0] += slo->ttft_ms > 0 && !(q->first_ms - q->sent_ms <= slo->ttft_ms);
        miss[1] += slo->tpot_ms > 0 && q->output_tokens >= 2 &&
                   !((q->last_ms - q->first_ms) / (q->output_tokens - 1) <= slo->tpot_ms);
        miss[2] += slo->e2e_ms > 0 && !(q->end_ms - q->sent_ms <= slo->e2e_ms);
        miss[3] += slo->ttfa_ms > 0 && !(request_answer_ms(q) - q->sent_ms <= slo->ttfa_ms);
    }
    static const char *const names[] = {"ttft", "tpot", "e2e", "ttfa"};
    int best = -1;
    for (int b = 0; b < 4; b++)
        if (miss[b] && (best < 0 || miss[b] > miss[best]))
            best = b;
    snprintf(out, cap, "%s", best >= 0 ? names[best] : "");
}

static void interpolate(const report *r, int campaign, report_answer *a) {
    line_point *pts = xcalloc((size_t)r->n_runs + 1, sizeof *pts);
    int n = line_points(r, campaign, pts, a->by, sizeof a->by);
    snprintf(a->source, sizeof a->source, "interpolated");
    a->runs_on_line = n;
    a->value = a->ci_low = a->ci_high = NAN;
    a->bracket_lo = a->bracket_hi = a->share_at_lo = a->share_at_hi = NAN;
    a->lowest = n ? pts[0].x : NAN;
    a->highest = n ? pts[n - 1].x : NAN;
    int miss = 0;
    while (miss < n && pts[miss].share >= a->goal)
        miss++;
    if (n == 0)
        snprintf(a->status, sizeof a->status, "no_load");
    else if (miss == n)
        snprintf(a->status, sizeof a->status, "not_reached");
    else if (miss == 0)
        snprintf(a->status, sizeof a->status, "missed_at_lowest");
    else {
        const line_point *lo = &pts[miss - 1], *hi = &pts[miss];
        snprintf(a->status, sizeof a->status, "found");
        a->bracket_lo = lo->x;
        a->bracket_hi = hi->x;
        a->share_at_lo = lo->share;
        a->share_at_hi = hi->share;
        a->value = lo->x + (lo->share - a->goal) / (lo->share - hi->share) * (hi->x - lo->x);
    }
    if (miss < n)
        binding_bound(&r->runs[pts[miss].run], &a->slo, a->binding, sizeof a->binding);
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
        if (got > 0) {
            answer_compose(a);
            return;
        }
        if (got < 0)
            break;
    }
    memset(a, 0, sizeof *a);
    for (int k = 0; k < r->n_runs && !a->present; k++) {
        const slo_spec *s = &r->runs[k].params.slo;
        if (s->ttft_ms > 0 || s->tpot_ms > 0 || s->e2e_ms > 0) {
            a->present = 1;
            a->slo = *s;
        }
    }
    if (!a->present)
        return;
    a->goal = ANSWER_DEFAULT_GOAL;
    interpolate(r, 0, a);
    answer_compose(a);
    if (r->n_campaigns > 1) { /* one answer a campaign, each saying whose */
        r->campaign_answers = xcalloc((size_t)r->n_campaigns, sizeof *r->campaign_answers);
        for (int c = 0; c < r->n_campaigns; c++) {
            report_answer *ca = &r->campaign_answers[c];
            *ca = *a;
            if (c > 0) {
                interpolate(r, c, ca);
                answer_compose(ca);
            }
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
