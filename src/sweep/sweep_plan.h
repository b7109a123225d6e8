/* sweep_plan: what `servelab sweep --dry-run` prints: the campaign as
 * resolved (its target, every run x repetition with its load, length,
 * seed and server_args) and about how many requests and how long the
 * arrivals take, written to the FILE the command gives. */
#ifndef SERVELAB_SWEEP_PLAN_H
#define SERVELAB_SWEEP_PLAN_H

#include "sweep/campaign.h"

#include <stdio.h>

/* The plan of campaign c, its output going to `out`, on f. */
void sweep_plan_print(FILE *f, const campaign *c, const char *out);
/* "url", "sim" or "server", as the plan and campaign.json name a target. */
const char *sweep_plan_target_name(target_kind k);

#endif
