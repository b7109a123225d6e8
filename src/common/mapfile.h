/* mapfile: a file mapped read-only for a pass over it, and the pages a pass
 * has left behind handed back as it goes (madvise DONTNEED: they leave the
 * process's resident set and stay in the page cache, so a later touch reads
 * the same bytes back). A reader of a 2 GB file then holds tens of MiB of
 * it resident, not 2 GB. Used by the CSV reader (common/csv.h) and by
 * merge's reading of its shards. */
#ifndef SERVELAB_MAPFILE_H
#define SERVELAB_MAPFILE_H

#include <stddef.h>

typedef struct mapfile {
    const char *map; /* NULL when not mapped */
    size_t size;
    size_t released; /* the first bytes handed back */
} mapfile;

/* path mapped into *f: 0; 1 when it does not exist or is empty (f->map is
 * then NULL); -1 with errno. */
int mapfile_open(mapfile *f, const char *path);
/* The pages wholly before byte upto of the mapping at map handed back,
 * once at least step bytes more than *released are (*released moves on). */
void mapfile_release(const char *map, size_t *released, size_t upto, size_t step);
/* Unmapped (also when never mapped). */
void mapfile_close(mapfile *f);

#endif
