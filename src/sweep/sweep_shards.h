/* sweep_shards: `servelab sweep FILE --shard I/N|auto`, the campaign run by
 * N sweep processes at once (started by Slurm, MPI, a Kubernetes Job), each
 * sending its part of every run (run --shard, run/shard.h), against one
 * target.url, with the output directory on a file system all of them see.
 *
 * Shard 0 leads: it prepares OUT as a sweep does (campaign.json, --force,
 * --resume), then for each repetition publishes a start instant in
 * OUT/shards/ once every shard has finished the one before, runs its own
 * part, waits for the others' parts and merges them (sweep/merge.h) into
 * OUT/RUN/rep-K, which campaign.json and the report then read like any
 * repetition. The other shards wait for shard 0's announcement that OUT is
 * ready (newer than their own start, so an earlier campaign's files are
 * never taken for this one's), then for each start instant, run their part
 * into OUT/shards/shard-I/RUN/rep-K and mark it done. Every wait is bounded,
 * and a shard that never comes fails the campaign, saying which: shard 0
 * stops after the repetition it waited for in vain (it says, as progress, which
 * shards it still waits for, and for how long), and tells the others so
 * (OUT/shards/stopped), which then stop waiting for the next start. */
#ifndef SERVELAB_SWEEP_SHARDS_H
#define SERVELAB_SWEEP_SHARDS_H

#include "common/notice.h"
#include "run/shard.h"

#include <stddef.h>
#include <stdint.h>

/* How long a shard waits for the others (beyond the runs themselves). */
#define SHARDS_WAIT_S 600
/* Shard 0's line on what it still waits for: first after this many
 * seconds of waiting (parts of one repetition end about together), then
 * every SHARDS_NOTE_EVERY_S. */
#define SHARDS_NOTE_FIRST_S 2
#define SHARDS_NOTE_EVERY_S 10

/* OUT/shards/ready with shard 0's start, after it prepared OUT. 0, or -1. */
int shards_announce_ready(const char *out, int64_t started_unix_us);
/* Waits (up to wait_s) for a ready newer than `since_unix_us`. 0, or -1
 * with err. */
int shards_wait_ready(const char *out, int64_t since_unix_us, double wait_s, char *err, int errlen);

/* Shard 0: waits (up to wait_s, as shards_wait_done) until every shard
 * marked run/k-1 done (k > 1, or the previous run's last repetition:
 * `prev_run`/`prev_k`, NULL for the first), then publishes the start of
 * run/k, `lead_s` from now. Returns the instant (µs since the epoch), or 0
 * with err. */
int64_t shards_publish_start(const char *out, const shard_spec *s, const char *prev_run, int prev_k,
                             const char *run, int k, double lead_s, double wait_s,
                             const notice_sink *progress, char *err, int errlen);
/* The others: waits (up to wait_s) for run/k's start. The instant, or 0
 * with err (also at once when shard 0 announced it stopped). */
int64_t shards_wait_start(const char *out, const char *run, int k, double wait_s, char *err,
                          int errlen);
/* Shard 0: OUT/shards/stopped, the campaign ends here. 0, or -1. */
int shards_announce_stopped(const char *out);

/* OUT/shards/shard-I/RUN/rep-K: where shard I's part of run/k goes. */
void shards_part_dir(char *buf, size_t n, const char *out, int index, const char *run, int k);
/* Marks shard I's part of run/k done (whatever became of it). */
int shards_mark_done(const char *out, int index, const char *run, int k);
/* Waits until every shard's part of run/k is done, for up to wait_s in
 * all; to `progress` (NULL: silent), from SHARDS_NOTE_FIRST_S on and then
 * every SHARDS_NOTE_EVERY_S, "sweep: waiting for shards 1-3 of 4 to finish
 * RUN rep-K (N s left)". 0, or -1 with err naming the shards missing. */
int shards_wait_done(const char *out, const shard_spec *s, const char *run, int k, double wait_s,
                     const notice_sink *progress, char *err, int errlen);

#endif
