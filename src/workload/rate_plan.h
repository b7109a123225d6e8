/* rate_plan: a schedule's offered rate as a sequence of stages, so that one
 * run can step or ramp its load (--rate-plan "2@60s,ramp:2-16@120s").
 *   R@D          a constant R requests/s for D (a duration as every option
 *                takes it: 60, 60s, 500ms, 2m)
 *   ramp:A-B@D   a rate rising (or falling) linearly from A to B over D
 * Stages follow one another on the schedule clock from t=0. A plan is the
 * intensity lambda(t) of an arrival process; arrivals.c draws the arrivals
 * from its integral (the expected arrivals by t), which is kept here with
 * its inverse, stage by stage, so that both sides read one definition. */
#ifndef SERVELAB_RATE_PLAN_H
#define SERVELAB_RATE_PLAN_H

#include <stddef.h>

#define RATE_PLAN_MAX_STAGES 256
/* More arrivals than this is a mistake in the plan (a rate of 1e9), not a
 * benchmark: the run's other schedules stop there too. */
#define RATE_PLAN_MAX_REQUESTS 100000000

typedef struct rate_stage {
    double from_rps, to_rps; /* equal for a constant stage */
    double start_s, duration_s;
    int ramp; /* written as ramp:A-B (a ramp from A to A is still one) */
} rate_stage;

typedef struct rate_plan {
    rate_stage stage[RATE_PLAN_MAX_STAGES];
    int n;
    double duration_s; /* the stages' total: the schedule's length */
} rate_plan;

/* Parse a spec: 0, or -1 with a one-line message naming the stage that is
 * wrong ("stage 2 'ramp:4@60s': expected ramp:FROM-TO@DURATION") in err.
 * A plan must offer something (some stage's rate above 0), last at most
 * ARRIVALS_MAX_S and expect at most RATE_PLAN_MAX_REQUESTS arrivals. */
int rate_plan_parse(const char *spec, rate_plan *p, char *err, size_t errlen);

/* A stage's mean rate, its expected arrivals (the integral of its rate),
 * and the seconds into it at which `arrivals` (0 to the expected count) are
 * expected: the inverse of the integral, exact for a linear rate. */
double rate_stage_mean_rps(const rate_stage *s);
double rate_stage_expected(const rate_stage *s);
double rate_stage_time_at(const rate_stage *s, double arrivals);
/* The whole plan's expected arrivals, and its mean rate over its length. */
double rate_plan_expected(const rate_plan *p);
double rate_plan_mean_rps(const rate_plan *p);

#endif
