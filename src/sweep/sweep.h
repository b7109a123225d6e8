/* sweep: runs a campaign: every run x repetition in order, each exactly a
 * `servelab run`, against a running server, the simulator (a fresh child
 * process per run, with its ground-truth trace in the run's directory), or
 * a managed server restarted whenever a run's server_args differ from the
 * running one's (or before every run with restart: always). Writes
 * OUT/RUN/rep-K/, OUT/campaign.json with each run's status, and the report
 * in OUT/report.
 *
 * Nothing a run does ends the campaign: a run that fails (bad input, a
 * server that does not start, one that dies mid-run and leaves the rest of
 * its requests as error rows) is recorded in campaign.json with why, and the
 * campaign goes on. A stop signal (SIGINT, SIGTERM, SIGHUP) ends the run in
 * flight as interrupted, skips the rest, and still stops the server,
 * records everything and writes the report. A server servelab started never
 * outlives it, even when servelab is killed with SIGKILL (server_proc.h). */
#ifndef SERVELAB_SWEEP_H
#define SERVELAB_SWEEP_H

#include "sweep/campaign.h"

typedef struct sweep_opts {
    const char *out; /* default out/NAME */
    int dry_run;
    int quiet;
    int force;            /* replace what an earlier campaign left in out (rundir/outdir.h) */
    int resume;           /* keep its finished repetitions that this campaign would repeat */
    const char *self;     /* path of the servelab binary, for the simulator */
    const char *target;   /* auto | server | sim (campaign_use_sim); NULL: auto */
    double speedup;       /* with target sim: campaign_use_sim's K; 0 or 1: none */
    const char *shard;    /* I/N or auto: this process is one shard (sweep/sweep_shards.h) */
    opt_list metadata;    /* --metadata KEY=VALUE: added to every run's (campaign_add_metadata) */
    double shards_wait_s; /* how long a shard waits for the others beyond the run's
                             timeout; 0 (the command line): SHARDS_WAIT_S */
} sweep_opts;

/* Returns the exit code: 0 ok, 1 some run failed, 2 when it could not start
 * (err says why: e.g. the output directory), 128 + signal when stopped. */
int sweep_execute(const campaign *c, const sweep_opts *o, char *err, int errlen);

#endif
