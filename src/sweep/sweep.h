/* sweep: runs a campaign: every run x repetition in order, each exactly a
 * `servelab run`, against a running server, the simulator (a fresh child
 * process per run, with its ground-truth trace in the run's directory), or
 * a managed server restarted whenever a run's server_args differ from the
 * running one's (or before every run with restart: always). Writes
 * OUT/RUN/rep-K/, OUT/campaign.json with each run's status, and the report
 * in OUT/report. A server that dies mid-run leaves that run's remaining
 * requests as error rows; the campaign records it and goes on. */
#ifndef SERVELAB_SWEEP_H
#define SERVELAB_SWEEP_H

#include "sweep/campaign.h"

typedef struct sweep_opts {
    const char *out; /* default out/NAME */
    int dry_run;
    int quiet;
    const char *self; /* path of the servelab binary, for the simulator */
} sweep_opts;

/* Returns the exit code: 0 ok, 1 some run failed, 130 interrupted. */
int sweep_execute(const campaign *c, const sweep_opts *o);

#endif
