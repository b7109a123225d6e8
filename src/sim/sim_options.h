/* sim_options: every option of `servelab sim`, once (common/opt.h says what
 * a row drives). The engine's rows have no default of their own: they
 * override the chosen profile's values (sim/profiles.c), so the profile is
 * read first (sim_opts_init) and the other options applied on top. The KV
 * cache's size is settled last, in sim_opts_finish: --kv-blocks when given,
 * else computed from the profile's model at --gpu-memory-utilization
 * (sim/kv_sizing.h), since the block size may have changed too. A
 * campaign's target.sim keys are these rows' keys (kv_blocks for
 * --kv-blocks), checked with the same parser before anything runs. */
#ifndef SERVELAB_SIM_OPTIONS_H
#define SERVELAB_SIM_OPTIONS_H

#include "common/opt.h"
#include "sim/api.h"

typedef struct sim_opts {
    sim_config cfg;
    const char *profile;           /* a name sim/profiles.c knows, or the file's name */
    const char *profile_file;      /* --profile-file: the profile's file; NULL: a built-in */
    struct profile_doc *file;      /* what it holds (provenance), sim_opts_free frees it */
    const char *step_table;        /* --step-ms-by-batch B:MS,...; NULL: the profile's */
    int per_seq_given;             /* --decode-per-seq-ms was given: the line, no table */
    const char *prefill_table;     /* --prefill-ms-by-tokens N:MS,...; NULL: the profile's */
    int per_token_given;           /* --prefill-per-token-ms was given: no prefill table */
    const char *fault;             /* --fault SPEC, parsed into cfg.faults by sim_opts_finish */
    const char *cpus;              /* pin the simulator to these CPUs; NULL: no pinning */
    int realtime;                  /* ask for SCHED_FIFO (common/cpus.h) */
    int kv_blocks_given;           /* --kv-blocks was given: it overrides the computed size */
    double gpu_memory_utilization; /* 0: the profile's */
    int no_prefix_caching;
    double speedup;     /* every step this many times shorter (a rehearsal); 1: as modelled */
    double spec_accept; /* --spec-accept, into the engine by sim_opts_finish */
} sim_opts;

extern const opt_def sim_options[];

/* Every option at its default and the engine at profile `name`'s values:
 * 0, or -1 when the profile is unknown. */
int sim_opts_init(sim_opts *o, const char *name);
/* Every option at its default and the engine at the profile in file `path`
 * (sim/profile_file.h): 0, or -1 with "PATH:LINE: KEY: what" in err. */
int sim_opts_init_file(sim_opts *o, const char *path, char *err, int errlen);
/* The profile a command line chose: --profile NAME or --profile-file FILE
 * (not both; neither: tiny). 0; -1 with why in err (both given, or a file
 * that does not read); 1 when NAME is unknown (o is then at tiny). */
int sim_opts_init_chosen(sim_opts *o, const char *profile, const char *file, char *err, int errlen);
/* What sim_opts_init_file kept. */
void sim_opts_free(sim_opts *o);
/* After the options were applied: the fault spec, the KV cache's size and
 * the last checks. 0, or -1 with a message naming the flag. */
int sim_opts_finish(sim_opts *o, char *err, int errlen);

#endif
