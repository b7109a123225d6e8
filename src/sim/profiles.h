/* profiles: named parameter sets for the simulator's engine, each value with
 * where it comes from (see profiles.c and docs/simulator.md). */
#ifndef SERVELAB_PROFILES_H
#define SERVELAB_PROFILES_H

#include "sim/engine.h"
#include "sim/kv_sizing.h"

typedef struct sim_profile {
    const char *name;
    const char *about;
    engine_params engine; /* kv_blocks 0 when `memory` names a model: computed */
    model_memory memory;  /* the model and GPU the KV blocks come from; layers 0: none */
    int eos_min_frac_pct; /* without ignore_eos, output length is drawn
                             uniformly in [max(min_tokens,1, max_tokens*pct/100), max_tokens] */
    const char *file;     /* a fitted file's path in the source tree (profiles/); NULL: a table */
} sim_profile;

/* NULL when unknown. */
const sim_profile *sim_profile_find(const char *name);
/* The profile's engine, its KV blocks computed from its model at its
 * default utilisation when it names one. */
engine_params sim_profile_engine(const sim_profile *p);
/* Comma-separated list of names for help text. */
const char *sim_profile_names(void);

#endif
