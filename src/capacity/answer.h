/* answer: what the capacity search found, as capacity.json (its keys are
 * fixed: the report reads them; docs/capacity.md lists them) and as the
 * one sentence on stdout that says when users start waiting. */
#ifndef SERVELAB_ANSWER_H
#define SERVELAB_ANSWER_H

#include "analysis/summary.h"
#include "capacity/probe.h"

#include <jansson.h>
#include <stddef.h>

enum { CAP_FOUND, CAP_NOT_REACHED, CAP_MISSED_AT_LOWEST };
/* capacity_answer.binding beyond the SLO's three bounds: most of the
 * misses at the failing probes were requests that failed. */
#define BINDING_FAILURES 3

typedef struct capacity_answer {
    int by_concurrency;
    double goal;
    slo_spec slo;
    int status;                  /* CAP_* */
    double max, ci_low, ci_high; /* req/s or users; the highest passing load and its interval */
    double reached;              /* not reached: the highest load probed (it passed) */
    double lowest;               /* missed at lowest: the load probed first */
    int binding;                 /* 0 ttft, 1 tpot, 2 e2e, BINDING_FAILURES */
    int best;                    /* the best passing probe; -1: none */
    int stopped_by_time;         /* --max-time ended the search before the precision */
    int confirm_asked;           /* --confirm on */
    int confirm_probe;           /* the confirmation run at the answer; -1: none */
    int upper_bound;             /* probes shorter than the precision needs (--max-time) */
    double budget_ms;            /* the wait an overload must push past */
    double need_s, full_s;       /* a full probe's arrivals: needed, and given */
    double precision;
    int tp_probe; /* the throughput probe; -1: none */
    int tp_used;  /* its lower end failed every load from it on */
    double tp_bound;
    const probe *probes;
    int n_probes;
    double wall_s;
} capacity_answer;

/* The bound most missed at the failing probes (at all of them when none
 * failed; the first stated bound when nothing missed), or BINDING_FAILURES
 * when at least half of their misses were requests that failed. */
int capacity_answer_binding(const capacity_answer *a);
/* The answer was run once more, longer, and held. */
int capacity_answer_confirmed(const capacity_answer *a);
/* capacity.json's object. */
json_t *capacity_answer_json(const capacity_answer *a);
/* The sentence, without a newline. */
void capacity_answer_sentence(const capacity_answer *a, char *buf, size_t n);

#endif
