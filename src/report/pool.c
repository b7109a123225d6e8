/* pool: loading a run's repetitions and computing its summaries. Each
 * repetition's rows keep their repetition number in req_rec.part, so one
 * pooled row set serves both the pooled summary and, split again by part,
 * the per-repetition ones. */
#include "report/pool.h"
#include "analysis/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BY_CLASS, BY_PART, BY_TURN };

static void subset(const run_rows *all, int by, int key, run_rows *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < all->n; i++) {
        const req_rec *r = &all->r[i];
        int k = by == BY_PART ? r->part : by == BY_CLASS ? r->cls : r->turn;
        if (k == key)
            rows_add(out, r);
    }
}

void pool_sorted_metric(const run_rows *rows, int tpot, double **out, size_t *n) {
    double *v = xmalloc((rows->n ? rows->n : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->error != ERR_NONE || isnan(r->first_ms))
            continue;
        if (!tpot)
            v[k++] = r->first_ms - r->sent_ms;
        else if (r->output_tokens >= 2)
            v[k++] = (r->last_ms - r->first_ms) / (r->output_tokens - 1);
    }
    sort_doubles(v, k);
    *out = v;
    *n = k;
}

/* The offered rate, the SLO and the cost basis (the options first, then
 * meta.json), and whether the rows came from the simulator. */
static int read_settings(report_run *rr, const report_opts *o, char *err, int errlen) {
    json_t *meta = rr->files[0].meta;
    if (meta_summary_params(meta, o->slo, o->cost_per_hour, &rr->params, err, errlen))
        return -1;
    json_t *fx = json_object_get(meta, "fixture"); /* -1: unknown (a vLLM file) */
    rr->fixture = json_is_true(fx) ? 1 : json_is_false(fx) ? 0 : -1;
    return 0;
}

/* What, besides the offered load, distinguishes this run. */
static void describe_variant(report_run *rr) {
    json_t *meta = rr->files[0].meta;
    json_t *cfg = json_object_get(meta, "config");
    json_t *sa = json_object_get(json_object_get(meta, "campaign"), "server_args");
    const char *keys[] = {"api", "prompts", "mix", "max_tokens", "concurrency", "ignore_eos"};
    size_t vl = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char *v = json_dumps(json_object_get(cfg, keys[i]), JSON_ENCODE_ANY | JSON_COMPACT);
        vl += (size_t)snprintf(rr->variant + vl, sizeof rr->variant - vl, "%s=%s;", keys[i],
                               v ? v : "null");
        free(v);
        if (vl >= sizeof rr->variant)
            vl = sizeof rr->variant - 1;
    }
    snprintf(rr->variant + vl, sizeof rr->variant - vl, "server_args=%s",
             json_is_string(sa) ? json_string_value(sa) : "");
}

/* One summary per repetition (its rows renumbered as part 0), one per
 * prompt class and, multi-turn, one per turn (repetitions kept apart). */
static void summarize_parts(report_run *rr) {
    rr->per_rep = xcalloc((size_t)rr->n_reps, sizeof *rr->per_rep);
    if (rr->n_reps == 1) { /* every row is part 0: the rows themselves, without their gaps */
        run_rows view = rr->rows;
        view.itl_ms = view.icl_ms = NULL;
        view.n_itl = view.n_icl = 0;
        view.itl_starts = NULL;
        view.n_itl_starts = 0;
        view.window_output_tokens = 0;
        summarize(&view, &rr->params, &rr->per_rep[0]);
    }
    for (int k = 0; k < rr->n_reps && rr->n_reps > 1; k++) {
        run_rows sub;
        subset(&rr->rows, BY_PART, k, &sub);
        for (size_t i = 0; i < sub.n; i++)
            sub.r[i].part = 0;
        summarize(&sub, &rr->params, &rr->per_rep[k]);
        rows_free(&sub);
    }
    rr->per_class = xcalloc((size_t)rr->rows.n_classes + 1, sizeof *rr->per_class);
    for (int c = 0; c < rr->rows.n_classes; c++) {
        run_rows sub;
        subset(&rr->rows, BY_CLASS, c, &sub);
        summarize(&sub, &rr->params, &rr->per_class[c]);
        rows_free(&sub);
    }
    for (size_t i = 0; i < rr->rows.n; i++)
        if (rr->rows.r[i].turn > rr->n_turns)
            rr->n_turns = rr->rows.r[i].turn;
    rr->per_turn = xcalloc((size_t)rr->n_turns + 1, sizeof *rr->per_turn);
    for (int t = 1; t <= rr->n_turns; t++) {
        run_rows sub;
        subset(&rr->rows, BY_TURN, t, &sub);
        summarize(&sub, &rr->params, &rr->per_turn[t - 1]);
        rows_free(&sub);
    }
}

/* rr->ci: TTFT p50, TTFT p95, TPOT p50, TPOT p95 over the pooled rows. */
static void bootstrap_cis(report_run *rr) {
    for (int m = 0; m < 2; m++) {
        double *v;
        size_t n;
        pool_sorted_metric(&rr->rows, m, &v, &n);
        bootstrap_percentile_ci(v, n, 50, BOOTSTRAP_REPS, BOOTSTRAP_SEED, &rr->ci[2 * m][0],
                                &rr->ci[2 * m][1]);
        bootstrap_percentile_ci(v, n, 95, BOOTSTRAP_REPS, BOOTSTRAP_SEED, &rr->ci[2 * m + 1][0],
                                &rr->ci[2 * m + 1][1]);
        free(v);
    }
}

/* Which of its files a repetition lacks. Without meta.json the offered
 * rate stays unknown (NAN: an empty cell), rather than the schedule's own
 * being shown as if it had been asked. */
static void note_incomplete(report_run *rr) {
    int no_meta = 0, no_summary = 0, stopped = 0;
    for (int k = 0; k < rr->n_reps; k++) {
        no_meta |= !rr->files[k].meta;
        no_summary |= !rr->files[k].has_summary;
        stopped |= json_is_true(json_object_get(rr->files[k].meta, "interrupted"));
    }
    snprintf(rr->incomplete, sizeof rr->incomplete, "%s%s%s%s%s", no_meta ? "no meta.json" : "",
             no_meta && no_summary ? ", " : "", no_summary ? "no summary.json" : "",
             (no_meta || no_summary) && stopped ? ", " : "", stopped ? "interrupted" : "");
}

int pool_load(report_run *rr, const report_opts *o, char *err, int errlen) {
    rr->files = xcalloc((size_t)rr->n_reps, sizeof *rr->files);
    for (int k = 0; k < rr->n_reps; k++)
        if (load_run(rr->rep_dirs[k], k, &rr->rows, &rr->files[k], err, errlen))
            return -1;
    return read_settings(rr, o, err, errlen);
}

void pool_unload(report_run *rr) {
    for (int k = 0; rr->files && k < rr->n_reps; k++)
        run_files_free(&rr->files[k]);
    free(rr->files);
    rr->files = NULL;
    for (int c = 0; c < rr->rows.n_classes; c++)
        free((char *)rr->rows.classes[c]);
    rows_free(&rr->rows);
}

int pool_run(report_run *rr, const report_opts *o, char *err, int errlen) {
    if (pool_load(rr, o, err, errlen))
        return -1;
    describe_variant(rr);
    rr->server = rr->files[0].server;
    for (int k = 1; k < rr->n_reps; k++)
        server_stats_pool(&rr->server, &rr->files[k].server);
    summarize(&rr->rows, &rr->params, &rr->pooled);
    note_incomplete(rr);
    summarize_parts(rr);
    bootstrap_cis(rr);
    return 0;
}

void pool_rep_range(const report_run *rr, int p95, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < rr->n_reps; k++) {
        double v = p95 ? rr->per_rep[k].ttft.p95 : rr->per_rep[k].ttft.p50;
        if (isnan(v))
            continue;
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
    if (*lo > *hi)
        *lo = *hi = NAN;
}
