/* summary_file: the one writer (and the readers) of a run directory's
 * meta.json and summary.json, for `run` (and so `predict` and the probes of `capacity`,
 * which are runs) and for `merge`. summary.json is the rows' summary
 * (analysis/summary.h), the server's figures and whatever the writer knew
 * besides; every key rundir/summary_keys.h says a run always has is there,
 * null when this writer could not know it, so a run, a merge and a
 * prediction have the same keys (a test compares them). */
#ifndef SERVELAB_RUNDIR_SUMMARY_FILE_H
#define SERVELAB_RUNDIR_SUMMARY_FILE_H

#include "analysis/serverstats.h"
#include "analysis/summary.h"

#include <jansson.h>

typedef struct rundir_summary {
    const run_summary *s;       /* the rows' summary */
    const server_stats *server; /* the samples' figures */
    /* The rest are taken (the writer drops its reference) and may be NULL:
     * client: keys of `client` beyond the rows' own (a run's verdicts on
     * itself, a merge's from its shards); the others: top-level keys,
     * absent when NULL. */
    json_t *client, *server_process, *spec_decode, *stages;
    int interrupted;
} rundir_summary;

/* DIR/summary.json through a temporary name: 0, or -1 with errno. */
int rundir_summary_write(const char *dir, const rundir_summary *in);
/* DIR/meta.json through a temporary name: 0, or -1 with errno. */
int rundir_meta_write(const char *dir, json_t *meta);
/* DIR/summary.json and DIR/meta.json read back (new references), or NULL
 * when missing or not JSON. */
json_t *rundir_summary_read(const char *dir);
json_t *rundir_meta_read(const char *dir);

#endif
