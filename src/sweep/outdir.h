/* outdir: what a sweep finds in its output directory before it starts, and
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
#ifndef SERVELAB_OUTDIR_H
#define SERVELAB_OUTDIR_H

#include <jansson.h>
#include <stddef.h>

/* `runs` and `target` are this campaign's resolved runs and target, as
 * campaign.json records them. With resume, *kept (new reference) is the
 * array of the earlier status entries kept; else an empty array. 0, or -1
 * with err. */
int outdir_prepare(const char *out, json_t *runs, json_t *target, int force, int resume,
                   json_t **kept, char *err, size_t errlen);
/* The kept entry of run `name`, repetition k, or NULL. */
json_t *outdir_kept(json_t *kept, const char *name, int k);

#endif
