/* answer: what the capacity search found, with the probes behind it: the
 * answer itself (model/answer.h: its sentence, its keys of capacity.json)
 * filled from the search, and capacity.json as a whole, which adds every
 * probe, the confirmation, the throughput probe and the levels (their keys
 * are fixed: the report reads them; docs/capacity.md lists them). */
#ifndef SERVELAB_CAPACITY_ANSWER_H
#define SERVELAB_CAPACITY_ANSWER_H

#include "capacity/probe.h"
#include "model/answer.h"

#include <jansson.h>

typedef struct capacity_result {
    capacity_answer ans; /* what is said */
    int best;            /* the best passing probe at the answer; -1: none */
    int confirm_probe;   /* the confirmation run at the answer; -1: none */
    int tp_probe;        /* the throughput probe; -1: none */
    int tp_used;         /* its lower end failed every load from it on */
    double tp_bound;
    double budget_ms; /* the wait an overload must push past */
    const probe *probes;
    int n_probes;
} capacity_result;

/* The bound most missed at the failing probes (at all of them when none
 * failed; the first stated bound when nothing missed), or ANSWER_FAILURES
 * when at least half of their misses were requests that failed. */
int capacity_result_binding(const capacity_result *r);
/* The answer's fields that come from the probes: binding (and the failure's
 * words), the confirmation, the figures at the answer, whether no request
 * succeeded at the first probe; after r's other fields are set. */
void capacity_result_finish(capacity_result *r);
/* capacity.json's object. */
json_t *capacity_result_json(const capacity_result *r);

#endif
