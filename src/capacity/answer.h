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

typedef struct capacity_answer {
    int by_concurrency;
    double goal;
    slo_spec slo;
    int status;                  /* CAP_* */
    double max, ci_low, ci_high; /* req/s or users; the highest passing load and its interval */
    double reached;              /* not reached: the highest load probed (it passed) */
    double lowest;               /* missed at lowest: the load probed first */
    int binding;                 /* 0 ttft, 1 tpot, 2 e2e */
    int best;                    /* the best passing probe; -1: none */
    int stopped_by_time;         /* --max-time ended the search before the precision */
    const probe *probes;
    int n_probes;
    double wall_s;
} capacity_answer;

/* The bound most missed at the failing probes (at all of them when none
 * failed; the first stated bound when nothing missed). */
int capacity_answer_binding(const capacity_answer *a);
/* capacity.json's object. */
json_t *capacity_answer_json(const capacity_answer *a);
/* The sentence, without a newline. */
void capacity_answer_sentence(const capacity_answer *a, char *buf, size_t n);

#endif
