/* mapfile: a file mapped read-only for a pass over it, and the pages a pass
 * has left behind handed back as it goes (madvise DONTNEED: they leave the
 * process's resident set and stay in the page cache, so a later touch reads
 * the same bytes back). A reader of a 2 GB file then holds tens of MiB of
 * it resident, not 2 GB. Used by the CSV reader (common/csv.h) and by
 * merge's reading of its shards.
 *
 * A mapped file that another process truncates while it is read would kill
 * the reader with SIGBUS at the first page past its new end (a run being
 * rewritten with --force, a shard copied into place again). mapfile_guard
 * turns that into an error naming the file: every pass over a mapping runs
 * inside one. */
#ifndef SERVELAB_MAPFILE_H
#define SERVELAB_MAPFILE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* Which file a mapping was of, to tell whether a second mapping of the same
 * path is of the same bytes. */
typedef struct mapfile_id {
    dev_t dev;
    ino_t ino;
    size_t size;
    struct timespec mtime;
} mapfile_id;

typedef struct mapfile {
    const char *map; /* NULL when not mapped */
    size_t size;
    size_t released; /* the first bytes handed back */
    mapfile_id id;
} mapfile;

/* path mapped into *f: 0; 1 when it does not exist or is empty (f->map is
 * then NULL); -1 with errno (common/files.h's open_regular: a FIFO, a
 * device or a directory is refused, never waited on). */
int mapfile_open(mapfile *f, const char *path);
/* The pages wholly before byte upto of the mapping at map handed back,
 * once at least step bytes more than *released are (*released moves on). */
void mapfile_release(const char *map, size_t *released, size_t upto, size_t step);
/* Unmapped (also when never mapped). */
void mapfile_close(mapfile *f);
/* Two ids of one file, unchanged between them. */
int mapfile_same(const mapfile_id *a, const mapfile_id *b);

/* fn(arg) run so that a SIGBUS on one of the mappings this thread reads
 * (this file's or csv.h's) ends it: fn's value, or -1 with err "PATH
 * changed while it was read (truncated ...)". After such a stop what fn had
 * open or allocated is not given back: the caller ends its command. Guards
 * nest; each thread that reads a mapping runs under a guard of its own. */
int mapfile_guard(int (*fn)(void *), void *arg, char *err, int errlen);
/* A mapping made elsewhere (csv.h's) made known to mapfile_guard's message
 * until it is forgotten. */
void mapfile_note(const void *map, size_t size, const char *path);
void mapfile_forget(const void *map);

#endif
