/* outdir: the --out policy, once for every command that writes a run
 * directory: never overwrite without --force, never follow a link, never
 * mix runs.
 *
 * A run's (and a merge's) --out: taken when it holds none of a run's files
 * (rundir/rundir.h), else refused unless --force, which removes them first
 * (and only them).
 *
 * A sweep's: what it finds in its output directory before it starts, and
 * what it does about it. A campaign never mixes with another's files: the
 * report pools every run directory under OUT, so an old rep-2 beside a new
 * rep-1 would be pooled as one run. So a directory that holds a campaign
 * (campaign.json, or run directories RUN/rep-K) is refused, unless
 *   force   everything the earlier campaign wrote is removed first
 *           (campaign.json, report/, servers/, the run directories);
 *   resume  its finished repetitions (status ok) whose resolved run and
 *           target are exactly this campaign's are kept, and everything
 *           else it wrote is removed, to be run again.
 * Files servelab did not write are left alone. A symbolic link inside OUT
 * (down to OUT/RUN/rep-K/FILE) is refused, by name, whatever the flags: it
 * is never followed nor removed, so nothing outside OUT is touched. */
#ifndef SERVELAB_RUNDIR_OUTDIR_H
#define SERVELAB_RUNDIR_OUTDIR_H

#include <jansson.h>
#include <stddef.h>

/* A run's files may go into dir: it holds none of them, or, with force,
 * they were removed. 0, or -1 with "DIR already holds a run (...): add
 * --force ..." or why they could not be removed in err. */
int outdir_take(const char *dir, int force, char *err, size_t errlen);
/* Removes a run's files from dir, and their temporary files: 0, or -1
 * with errno. */
int outdir_clear(const char *dir);

/* A sweep's: `runs` and `target` are this campaign's resolved runs and target, as
 * campaign.json records them. With resume, *kept (new reference) is the
 * array of the earlier status entries kept; else an empty array. 0, or -1
 * with err. */
int outdir_prepare(const char *out, json_t *runs, json_t *target, int force, int resume,
                   json_t **kept, char *err, size_t errlen);
/* The kept entry of run `name`, repetition k, or NULL. */
json_t *outdir_kept(json_t *kept, const char *name, int k);

#endif
