/* answer: the one sentence a report opens with, for a campaign with an
 * SLO: the load at which users start waiting, that is the highest load at
 * which at least `goal` of the requests (0.99 unless capacity.json says
 * otherwise) meet the SLO. It comes from capacity.json (`servelab
 * capacity`) when the report's first input directory holding one has it,
 * else it is interpolated between the two runs of the load line that
 * bracket the goal, else it says the goal was never missed ("not reached
 * at the highest load tried") or already missed at the lowest load. */
#ifndef SERVELAB_REPORT_ANSWER_H
#define SERVELAB_REPORT_ANSWER_H

#include "analysis/summary.h"

#include <jansson.h>

#define ANSWER_DEFAULT_GOAL 0.99

typedef struct report_answer {
    int present;     /* 0: no SLO anywhere, no sentence (nothing else is set) */
    char source[24]; /* "capacity.json" or "interpolated" */
    char status[24]; /* "found", "not_reached", "missed_at_lowest", "no_load" */
    char by[16];     /* "rate" or "concurrency": the unit of the values below */
    double goal;
    slo_spec slo;
    char binding[8];                 /* "ttft", "tpot", "e2e", or "" when no bound binds */
    double value, ci_low, ci_high;   /* the capacity; NAN where unknown */
    double bracket_lo, bracket_hi;   /* interpolated: the loads either side (NAN else) */
    double lowest, highest;          /* the lowest and highest load tried */
    double share_at_lo, share_at_hi; /* interpolated: their shares meeting the SLO */
    int runs_on_line;                /* interpolated: runs the answer was read from */
    int probes;                      /* capacity.json: how many probes it ran */
    double wall_s;                   /* capacity.json: its search's wall time */
    double at_in_flight, at_goodput_rps, at_tokens_per_s; /* capacity.json's at_answer */
    char sentence[768];
} report_answer;

struct report;

/* Fill r->answer from capacity.json under paths[0..n) (the first that has
 * one) or from the runs of the load line. A capacity.json that does not
 * parse is left aside with the reason in the sentence's note. */
void answer_build(struct report *r, char *const *paths, int n_paths);
/* Read DIR/capacity.json into *a: 1 when read, 0 when there is none, -1
 * when it is there but unusable (why in err). In capacity_read.c. */
int capacity_read(const char *dir, report_answer *a, char *err, int errlen);
/* The SLO's bounds as "TTFT <= 750 ms, TPOT <= 40 ms" (only = one bound's). */
void answer_slo_text(const slo_spec *slo, const char *only, char *buf, size_t cap);
/* The sentence from the fields (status, values, binding, source). */
void answer_compose(report_answer *a);
/* summary.json's "answer" object; null when there is no answer. */
json_t *answer_json(const report_answer *a);

#endif
