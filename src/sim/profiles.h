/* profiles: named parameter sets for the simulator's engine, each value with
 * where it comes from (see profiles.c and docs/simulator.md). */
#ifndef SERVELAB_PROFILES_H
#define SERVELAB_PROFILES_H

#include "sim/engine.h"

typedef struct sim_profile {
    const char *name;
    const char *about;
    engine_params engine;
    int eos_min_frac_pct; /* without ignore_eos, output length is drawn
                             uniformly in [max(min_tokens,1, max_tokens*pct/100), max_tokens] */
} sim_profile;

/* NULL when unknown. */
const sim_profile *sim_profile_find(const char *name);
/* Comma-separated list of names for help text. */
const char *sim_profile_names(void);

#endif
