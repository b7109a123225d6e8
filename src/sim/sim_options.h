/* sim_options: every option of `servelab sim`, once (common/opt.h says what
 * a row drives). The engine's rows have no default of their own: they
 * override the chosen profile's values (sim/profiles.c), so the profile is
 * read first (sim_opts_profile) and the other options applied on top. A
 * campaign's target.sim keys are these rows' keys (kv_blocks for
 * --kv-blocks), checked with the same parser before anything runs. */
#ifndef SERVELAB_SIM_OPTIONS_H
#define SERVELAB_SIM_OPTIONS_H

#include "common/opt.h"
#include "sim/api.h"

typedef struct sim_opts {
    sim_config cfg;
    const char *profile; /* a name sim/profiles.c knows */
    const char *fault;   /* --fault SPEC, parsed into cfg.faults by sim_opts_finish */
    const char *cpus;    /* pin the simulator to these CPUs; NULL: no pinning */
    int realtime;        /* ask for SCHED_FIFO (common/cpus.h) */
} sim_opts;

extern const opt_def sim_options[];

/* Every option at its default and the engine at profile `name`'s values:
 * 0, or -1 when the profile is unknown. */
int sim_opts_init(sim_opts *o, const char *name);
/* After the options were applied: the fault spec and the last checks.
 * 0, or -1 with a message naming the flag. */
int sim_opts_finish(sim_opts *o, char *err, int errlen);

#endif
