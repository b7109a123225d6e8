/* files: the ways servelab puts results on disk besides the row files:
 * directories made with their parents, JSON documents written through a
 * temporary name and renamed, so a reader never sees half a file, and
 * scratch directories removed whole. */
#ifndef SERVELAB_FILES_H
#define SERVELAB_FILES_H

#include <jansson.h>
#include <stddef.h>
#include <sys/stat.h>

/* The most read_whole_file reads: a profile, a campaign, a doc. */
#define READ_WHOLE_FILE_MAX (64L << 20)
#define READ_WHOLE_FILE_MAX_TEXT "64 MiB"
/* The whole regular file at path, NUL-terminated (malloc'd), its length
 * in *len; NULL with errno when it cannot be read: EINVAL when it is not a
 * regular file (a FIFO, a device), EISDIR for a directory, EFBIG when it
 * is larger than READ_WHOLE_FILE_MAX. It never waits on a FIFO. */
char *read_whole_file(const char *path, size_t *len);
/* path opened read-only, close-on-exec, without waiting (a FIFO with no
 * writer would block the open), its status in *st: the descriptor, or -1
 * with errno: EISDIR for a directory, EINVAL for what is not a regular file
 * (a FIFO, a device such as /dev/zero, a socket). Every reader of a file
 * servelab expects (read_whole_file, csv.h, mapfile.h) opens through it. */
int open_regular(const char *path, struct stat *st);
/* An errno of these readers in words: "not a regular file", "larger than
 * 64 MiB", else strerror's. */
const char *file_why(int e);
/* mkdir -p; 0 or -1 with errno. */
int mkdir_p(const char *path);
/* DIR/NAME from obj, indented, with sorted keys and numbers to 12
 * significant digits (241.812, not 241.81200000000172: no figure servelab
 * measures means more); 0 or -1 with errno. */
int write_json_atomic(const char *dir, const char *name, json_t *obj);
/* The n bytes of data as the file at path, whole or not at all: written to
 * PATH.tmp-PID, every byte checked (a full disk is ENOSPC, not a short
 * file), synced, and renamed over path, so an earlier file there is kept
 * when it fails. 0, or -1 with errno. */
int write_bytes_atomic(const char *path, const char *data, size_t n);

/* The longest output directory servelab takes: file names are added to it
 * in buffers of PATH_MAX (4096) bytes, so a longer one would be cut short
 * instead of refused. */
#define OUT_DIR_MAX 3000

/* The lock file's name in a locked directory. */
#define DIR_LOCK_FILE ".servelab.lock"
/* An exclusive lock on directory `dir` (the file DIR/.servelab.lock, which
 * holds the PID of its holder), held until dir_unlock or the end of the
 * process, however it ends. Two runs never write one directory at once.
 * 0 with *fd set, or -1 with why in err ("in use by servelab pid N"). */
int dir_lock(const char *dir, int *fd, char *err, size_t errlen);
void dir_unlock(int fd);

/* rm -r: the directory and everything under it (symbolic links are removed,
 * never followed); 0 or -1 with errno. */
int remove_tree(const char *path);

#endif
