/* virtual_client: a run's schedule sent to the simulator's engine in
 * virtual time (sim/vengine.h) in place of a server: the bodies loadgen
 * would send, the rows it would write (requests.csv with the same columns,
 * errors.csv, chunks.csv when asked), the same watch every 10 ms (of
 * virtual time), the concurrency cap, later turns and timeouts, at the
 * speed of the CPU. `servelab predict` runs through it, and so do the
 * probes of a virtual capacity search. Requests reach the engine the
 * instant they are sent and their tokens the instant they are emitted:
 * what a network would add is not modelled. */
#ifndef SERVELAB_VIRTUAL_CLIENT_H
#define SERVELAB_VIRTUAL_CLIENT_H

#include "client/loadgen.h"
#include "sim/engine.h"

/* The engine a virtual run is sent to: `servelab sim`'s settings that the
 * engine reads. */
typedef struct virtual_target {
    engine_params engine;
    int eos_min_frac_pct;
    uint64_t seed; /* the simulator's --seed */
    const char *model;
    const char *profile;      /* for meta.json */
    const char *profile_file; /* the profile's file (meta.json keeps its hash); NULL: built in */
    int chunks;               /* write chunks.csv and keep every gap for ITL */
    /* chat answers that think first, as the simulator's --reasoning-tokens
     * (and --reasoning-usage: the server counts them) */
    int reasoning_tokens, reasoning_usage;
    engine_stats *stats; /* the caller's: the engine's counters at the end; NULL: not wanted */
} virtual_target;

/* Runs cfg's schedule against the target as loadgen_run does against a
 * server (cfg's endpoint, headers, client and sampling are not used).
 * Returns 0, or -1 with a message when it could not start (its files, an
 * impossible engine). */
int virtual_client_run(const loadgen_config *cfg, const virtual_target *t, loadgen_result *res,
                       char *err, int errlen);

#endif
