/* merge: `servelab merge SHARD_DIR... --out DIR`: the shards of one
 * schedule (run --shard I/N, run/shard.h) made into one run directory that
 * `report` reads like any other: every row (global request ids, times on
 * the common t=0), chunks.csv, errors.csv, the server's samples (shard
 * 0's), a meta.json listing each shard's host, clock and client health,
 * and a summary.json computed from all the rows.
 *
 * It refuses, with one line naming it, a directory that is no shard, a
 * shard of another schedule (a setting that makes the schedule or its
 * prompts differs: its name and both values), a shard given twice, a
 * missing shard, a row that does not read (the shard's file and line), a
 * request id that is not the shard's own (I mod N, below the schedule's
 * length), repeated, or a shard with fewer or more rows than its meta.json
 * says (sweep/merge_check.h). Times: when every shard started at one
 * --start-at, each shard's times are already on that instant and are
 * copied as they are; otherwise t=0 is the earliest shard's, and each
 * shard is moved by its t=0's offset from it on the wall clock (so the
 * merge is then only as good as the machines' clocks: a t0_utc that does
 * not read, or shards more than a day apart, are refused), and meta.json
 * says which. The rows are checked as they are copied into a temporary
 * directory inside --out, and --out gets the merged files only once all of
 * them are written and read back: a merge that fails removes what it
 * wrote and leaves --out as it was. */
#ifndef SERVELAB_MERGE_H
#define SERVELAB_MERGE_H

typedef struct merge_opts {
    const char *out;
    int force; /* replace what an earlier run or merge left in out */
} merge_opts;

/* 0, or -1 with one line in err (2 is the exit code for both a bad shard and
 * a bad --out: a merge that fails leaves --out as it was). */
int merge_shards(char *const *dirs, int n, const merge_opts *o, char *err, int errlen);

#endif
