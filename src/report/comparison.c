/* comparison: discovery of both sides (report/discover.h), the pairing of
 * their runs, and for each pair the rows loaded as the report loads them
 * (report/pool.h), resampled (analysis/compare.h) and summarised by the
 * report's own summarize(), then let go before the next pair. */
#include "report/comparison.h"
#include "report/discover.h"
#include "report/pool.h"
#include "common/util.h"
#include "model/slo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The runs under dir, found as the report finds them (a file is vLLM's
 * result file, one run: report/vllm_import.h). */
static int discover_side(const char *dir, report *r, char *err, int errlen) {
    char *paths[1] = {(char *)dir}, why[1024];
    if (discover_runs(paths, 1, r, why, sizeof why) == 0)
        return 0;
    struct stat st;
    if (stat(dir, &st) != 0)
        snprintf(err, errlen, "%s: no such directory", dir);
    else
        snprintf(err, errlen, "%s: not a run or campaign directory (no requests.csv under it)",
                 dir);
    return -1;
}

static int slo_same(const slo_spec *a, const slo_spec *b) {
    for (int k = 0; k < SLO_BOUNDS; k++)
        if (slo_bound_ms(a, k) != slo_bound_ms(b, k))
            return 0;
    return 1;
}

/* An SLO as --slo writes it ("ttft=750ms,tpot=100ms"), or "none". */
static void slo_words(const slo_spec *s, char *buf, size_t n) {
    slo_format(s, buf, n);
    if (!buf[0])
        snprintf(buf, n, "none");
}

/* One SLO for both runs of a pair (comparison.h), and the note when a run
 * is judged by another than its own. */
static void one_slo(report_run *b, report_run *n, const comparison_opts *o, compared_run *out) {
    int from_base = slo_has_bound(&b->params.slo);
    slo_spec slo = from_base ? b->params.slo : n->params.slo;
    report_run *other = from_base ? n : b;
    if (!o->slo && !slo_same(&slo, &other->params.slo)) {
        char own[128], used[128];
        slo_words(&other->params.slo, own, sizeof own);
        slo_words(&slo, used, sizeof used);
        snprintf(out->note, sizeof out->note, "the %s run's own SLO is %s; both are judged by %s",
                 from_base ? "new" : "base", own, used);
    }
    b->params.slo = n->params.slo = slo;
}

/* When the two runs were not of one workload (meta.json's config: the API,
 * the prompts, their mix and length, the arrival and the cap), a note that
 * says which and how, after any note already made: a change between them is
 * then the workload's as much as the server's. */
static void workload_note(report_run *b, report_run *n, compared_run *out) {
    static const char *const keys[] = {"api",         "prompts",       "mix",     "max_tokens",
                                       "ignore_eos",  "replay",        "arrival", "burstiness",
                                       "concurrency", "prefix_tokens", "turns",   NULL};
    json_t *cb = json_object_get(b->files[0].meta, "config"),
           *cn = json_object_get(n->files[0].meta, "config");
    if (!cb || !cn)
        return;
    char diff[300] = "";
    size_t len = 0;
    for (int i = 0; keys[i]; i++) {
        json_t *x = json_object_get(cb, keys[i]), *y = json_object_get(cn, keys[i]);
        if (json_equal(x, y) || (!x && !y))
            continue;
        char *xs = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
        char *ys = json_dumps(y, JSON_ENCODE_ANY | JSON_COMPACT);
        if (len < sizeof diff)
            len += (size_t)snprintf(diff + len, sizeof diff - len, "%s%s %.40s vs %.40s",
                                    len ? ", " : "", keys[i], xs ? xs : "none", ys ? ys : "none");
        free(xs);
        free(ys);
    }
    if (!diff[0])
        return;
    size_t at = strlen(out->note);
    snprintf(out->note + at, sizeof out->note - at,
             "%sthe two runs are of different workloads (%s): a change is the workload's as "
             "much as the server's",
             at ? "; " : "", diff);
}

static int compare_pair(report_run *b, report_run *n, const comparison_opts *o, compared_run *out,
                        char *err, int errlen) {
    report_opts ro = {.slo = o->slo};
    if (pool_load(b, &ro, err, errlen) || pool_load(n, &ro, err, errlen)) {
        pool_unload(b);
        pool_unload(n);
        return -1;
    }
    one_slo(b, n, o, out);
    workload_note(b, n, out);
    /* the sides first: summarize() sorts the gaps they read per request */
    compare_side *sb = compare_side_new(&b->rows, &b->params.slo);
    compare_side *sn = compare_side_new(&n->rows, &n->params.slo);
    summarize(&b->rows, &b->params, &out->base);
    summarize(&n->rows, &n->params, &out->new_);
    compare_figures(sb, &out->base, sn, &out->new_, o->resamples, o->seed, out->fig);
    compare_side_free(sb);
    compare_side_free(sn);
    pool_unload(b);
    pool_unload(n);
    return 0;
}

static void add_name(char ***list, int *n, const char *name) {
    *list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
    (*list)[(*n)++] = xstrdup(name);
}

/* "2 runs: load-1rps, load-8rps" into buf, the first five names at most. */
static void names_of(const report *r, char *buf, size_t n) {
    size_t at = (size_t)snprintf(buf, n, "%d run%s: ", r->n_runs, r->n_runs == 1 ? "" : "s");
    for (int k = 0; k < r->n_runs && k < 5 && at < n; k++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? ", " : "", r->runs[k].name);
    if (r->n_runs > 5 && at < n)
        snprintf(buf + at, n - at, ", ...");
}

/* The new side's run paired with base run k, or -1: the first of its name
 * not yet paired (two runs of one name, from two campaigns under one
 * directory, pair in order). */
static int partner(const report *rb, const report *rn, int k, const int *paired) {
    if (rb->n_runs == 1 && rn->n_runs == 1)
        return 0;
    for (int j = 0; j < rn->n_runs; j++)
        if (!paired[j] && !strcmp(rb->runs[k].name, rn->runs[j].name))
            return j;
    return -1;
}

/* Every pair compared, in the base's order; the runs of one side only
 * listed. */
static int pair_runs(report *rb, report *rn, const comparison_opts *o, comparison *c, char *err,
                     int errlen) {
    int *paired = xcalloc((size_t)rn->n_runs, sizeof *paired);
    c->runs = xcalloc((size_t)rb->n_runs, sizeof *c->runs);
    int rc = 0;
    for (int k = 0; k < rb->n_runs && !rc; k++) {
        int j = partner(rb, rn, k, paired);
        if (j < 0) {
            add_name(&c->only_base, &c->n_only_base, rb->runs[k].name);
            continue;
        }
        paired[j] = 1;
        compared_run *cr = &c->runs[c->n_runs++];
        const char *bn = rb->runs[k].name, *nn = rn->runs[j].name;
        if (strcmp(bn, nn))
            snprintf(cr->name, sizeof cr->name, "%s vs %s", bn, nn);
        else
            snprintf(cr->name, sizeof cr->name, "%s", bn);
        rc = compare_pair(&rb->runs[k], &rn->runs[j], o, cr, err, errlen);
    }
    for (int j = 0; j < rn->n_runs && !rc; j++)
        if (!paired[j])
            add_name(&c->only_new, &c->n_only_new, rn->runs[j].name);
    free(paired);
    if (!rc && c->n_runs == 0) {
        char bn[400], nn[400];
        names_of(rb, bn, sizeof bn);
        names_of(rn, nn, sizeof nn);
        snprintf(err, errlen, "no run in common (%s has %s; %s has %s)", c->base_dir, bn,
                 c->new_dir, nn);
        rc = -1;
    }
    return rc;
}

int comparison_build(const char *base_dir, const char *new_dir, const comparison_opts *o,
                     comparison *c, char *err, int errlen) {
    memset(c, 0, sizeof *c);
    c->base_dir = base_dir;
    c->new_dir = new_dir;
    c->resamples = o->resamples;
    c->seed = o->seed;
    report rb, rn;
    if (discover_side(base_dir, &rb, err, errlen))
        return -1;
    if (discover_side(new_dir, &rn, err, errlen)) {
        report_free(&rb);
        return -1;
    }
    int rc = pair_runs(&rb, &rn, o, c, err, errlen);
    report_free(&rb);
    report_free(&rn);
    if (rc)
        comparison_free(c);
    return rc;
}

void comparison_free(comparison *c) {
    for (int i = 0; i < c->n_only_base; i++)
        free(c->only_base[i]);
    for (int i = 0; i < c->n_only_new; i++)
        free(c->only_new[i]);
    free(c->only_base);
    free(c->only_new);
    free(c->runs);
    memset(c, 0, sizeof *c);
}

int comparison_trips(const comparison *c, const gate *g, int n_gates) {
    int n = 0;
    for (int i = 0; i < n_gates; i++)
        for (int k = 0; k < c->n_runs; k++)
            n += gate_tripped(&g[i], &c->runs[k].fig[g[i].fig]);
    return n;
}

int comparison_unmeasured_gate(const comparison *c, const gate *g, int n_gates) {
    for (int i = 0; i < n_gates; i++) {
        int measured = 0;
        for (int k = 0; k < c->n_runs; k++)
            measured |= c->runs[k].fig[g[i].fig].v != VERDICT_NA;
        if (!measured)
            return i;
    }
    return -1;
}
