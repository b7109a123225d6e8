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
 * outlives it, even when servelab is killed with SIGKILL (target/server_proc.h). */
#ifndef SERVELAB_SWEEP_H
#define SERVELAB_SWEEP_H

#include "common/notice.h"
#include "common/outcome.h"
#include "sweep/campaign.h"

#include <stdio.h>

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
    /* What the sweep tells the user, none of which it prints itself:
     * lines as they are (NOTICE_PROGRESS): where it is ("sweep: [2/6] RUN
     * rep-1 ...", each repetition's status, a shard's waits; none with
     * quiet) and the end of the log of a server that did not start, one
     * "    LINE" each; what went wrong with a repetition or a shard while
     * the campaign goes on, as servelab's (NOTICE_INFO, "sweep: ..."); and
     * warnings. NULL: none. */
    const notice_sink *notices;
    FILE *text_out; /* the command's output: the dry run's plan, the table of runs; NULL: none */
} sweep_opts;

/* OUTCOME_OK, OUTCOME_FAILED when some run failed (or the report could not
 * be written), OUTCOME_BAD_INPUT when it could not start (err says why:
 * e.g. the output directory; a dry run whose plan would fail),
 * OUTCOME_STOPPED at a stop signal. */
outcome sweep_execute(const campaign *c, const sweep_opts *o, char *err, int errlen);

#endif
