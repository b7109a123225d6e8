/* files: the ways servelab puts results on disk besides the row files:
 * directories made with their parents, JSON documents written through a
 * temporary name and renamed, so a reader never sees half a file, and
 * scratch directories removed whole. */
#ifndef SERVELAB_FILES_H
#define SERVELAB_FILES_H

#include <jansson.h>

/* mkdir -p; 0 or -1 with errno. */
int mkdir_p(const char *path);
/* DIR/NAME from obj, indented and with sorted keys; 0 or -1 with errno. */
int write_json_atomic(const char *dir, const char *name, json_t *obj);

/* rm -r: the directory and everything under it (symbolic links are removed,
 * never followed); 0 or -1 with errno. */
int remove_tree(const char *path);

#endif
