/* files: mkdir -p, atomic JSON files, rm -r. */
#include "common/files.h"
#include "common/util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int mkdir_p(const char *path) {
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    }
    int rc = mkdir(p, 0755);
    free(p);
    return rc == 0 || errno == EEXIST ? 0 : -1;
}

int write_json_atomic(const char *dir, const char *name, json_t *obj) {
    char tmp[4200], path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    if (json_dump_file(obj, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
        if (!errno)
            errno = EIO;
        remove(tmp);
        return -1;
    }
    return rename(tmp, path);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int remove_tree(const char *path) {
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
