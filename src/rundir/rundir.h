/* rundir: what a run directory is. The room src/rundir/ is the only code
 * that decides it: the files a run writes there (this header), their
 * columns and keys (columns.h, summary_keys.h), the one writer of its JSON
 * files (summary_file.h) and the --out policy (outdir.h: never overwrite
 * without --force, never follow a link, never mix runs).
 *
 * "Is this a run directory?" has one answer, rundir_holds_at: which of the
 * files a run or a sweep writes in it are there (a symbolic link counts as
 * there and is never followed). Each caller asks its question of that with
 * one of the masks below, so that a report folder (which has a
 * summary.json) is not taken for a run, and a run directory that lost its
 * rows is still not written over. */
#ifndef SERVELAB_RUNDIR_H
#define SERVELAB_RUNDIR_H

#include <stddef.h>

/* The files a run writes in its directory, NULL-ended: bit k of a mask is
 * rundir_file_names[k]. A run refuses a directory that holds any of them
 * (unless --force), so two runs' rows are never mixed. */
extern const char *const rundir_file_names[];
enum {
    RUNDIR_REQUESTS = 1u << 0, /* requests.csv */
    RUNDIR_CHUNKS = 1u << 1,   /* chunks.csv */
    RUNDIR_META = 1u << 2,     /* meta.json */
    RUNDIR_FILES = (1u << 8) - 1,
    RUNDIR_SWEEP = 1u << 8, /* trace.csv or server.log: what a sweep adds to a run directory */
};
/* What a sweep adds to a run's own files in a run directory, NULL-ended. */
extern const char *const rundir_sweep_files[];
/* The questions callers ask:
 *   RUNDIR_IS_RUN  a run to read: its rows are there (report's walk)
 *   RUNDIR_MARKS   a run or a sweep's run was here: what only they write
 *                  (a sweep's clearing; not summary.json, which a report
 *                  folder has too)
 *   RUNDIR_ANY     something of a run that a new run would mix with or
 *                  overwrite (run's and merge's --out) */
#define RUNDIR_IS_RUN RUNDIR_REQUESTS
#define RUNDIR_MARKS (RUNDIR_REQUESTS | RUNDIR_CHUNKS | RUNDIR_META | RUNDIR_SWEEP)
#define RUNDIR_ANY RUNDIR_FILES

/* Which of the files the directory open as dfd holds, as a mask. */
unsigned rundir_holds_at(int dfd);
/* The same of the directory `dir` (0 when it cannot be opened), and the
 * names of the run's files it holds, "requests.csv, meta.json", into
 * names (n bytes; NULL: not asked). */
unsigned rundir_holds(const char *dir, char *names, size_t n);

#endif
