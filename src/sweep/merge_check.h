/* merge_check: what `servelab merge` checks before it writes anything
 * (sweep/merge.h is the command's whole story), and where it puts each
 * shard's times.
 *
 * Each shard's meta.json must read and say it is shard I of N (0 <= I < N);
 * every setting that makes the schedule or its prompts must be the first
 * shard's (refused naming the setting and both values); each index must be
 * given once, none missing. Times: when all started at one --start-at they
 * are already on one t=0; otherwise t=0 becomes the earliest shard's t=0
 * and every shard is moved by its offset from it on the wall clock, which
 * needs each t0_utc to read and the shards to have started within a day of
 * each other. Rows: each shard's requests.csv and chunks.csv must read as
 * `servelab report` reads a run (the ids are checked as the rows are
 * copied: sweep/merge_rows.h). */
#ifndef SERVELAB_MERGE_CHECK_H
#define SERVELAB_MERGE_CHECK_H

#include <jansson.h>

/* One shard, as its meta.json describes it. */
typedef struct shard_in {
    const char *dir;
    json_t *meta;
    int index, count;
    long long schedule; /* the whole schedule's requests */
    long long requests; /* its own rows (shard.requests) */
    long long t0_us;    /* its t=0 on its wall clock; 0: none recorded */
    long long start_at; /* its --start-at; 0: none */
    double shift_ms;    /* what is added to its times */
} shard_in;

/* How the shards' times were put on one t=0. */
typedef struct merge_times {
    int same_start; /* all started at one --start-at: times as recorded */
    int earliest;   /* the shard (an index into the array) whose t=0 is the merge's */
} merge_times;

/* The names in meta.json's config of the settings that make a schedule and
 * its requests, NULL-ended: shards that differ in any are refused. */
extern const char *const merge_schedule_keys[];

/* Reads every shard's meta.json (s[i].dir given) and checks that they are
 * the shards of one schedule, each once, none missing; sets each shift_ms.
 * 0, or -1 with one line in err. The caller json_decref()s each meta, set
 * or not (NULL is fine). */
int merge_check_shards(shard_in *s, int n, merge_times *t, char *err, int errlen);

/* Every shard's rows as the report reads them: 0, or -1 with "FILE:LINE:
 * what" (the shard's file) in err. Reads the files and writes nothing. */
int merge_check_rows(const shard_in *s, int n, char *err, int errlen);

#endif
