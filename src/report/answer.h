/* answer: the one sentence a report opens with, for a campaign with an
 * SLO: the load at which users start waiting, that is the highest load at
 * which at least `goal` of the requests (0.99 unless capacity.json says
 * otherwise) meet the SLO. The answer is model/answer.h's, said by its one
 * sentence: read back from capacity.json (`servelab capacity` or `predict
 * --capacity`) when the report's first input directory holding one has it,
 * so the report says what the search said, byte for byte; else it is
 * interpolated between the two runs of the load line that bracket the
 * goal, and says so, else it says the goal was never missed ("not reached
 * at the highest load tried") or already missed at the lowest load. */
#ifndef SERVELAB_REPORT_ANSWER_H
#define SERVELAB_REPORT_ANSWER_H

#include "model/answer.h"

#include <jansson.h>

#define ANSWER_DEFAULT_GOAL 0.99

typedef struct report_answer {
    int present;            /* 0: no SLO anywhere, no sentence (nothing else is set) */
    capacity_answer a;      /* the answer (source: searched, predicted or interpolated) */
    double lowest, highest; /* the lowest and highest load tried */
    char sentence[1280];    /* a's, after "CAMPAIGN: " when there are several */
} report_answer;

struct report;

/* Fill r->answer from capacity.json under paths[0..n) (the first that has
 * one) or from the runs of the load line. A capacity.json that does not
 * parse is left aside with the reason after the sentence. */
void answer_build(struct report *r, char *const *paths, int n_paths);
/* Read DIR/capacity.json into *a: 1 when read, 0 when there is none, -1
 * when it is there but unusable (why in err). In capacity_read.c. */
int capacity_read(const char *dir, report_answer *a, char *err, int errlen);
/* summary.json's "answer" object; null when there is no answer. In
 * answer_summary.c. */
json_t *answer_summary_json(const report_answer *a);

#endif
