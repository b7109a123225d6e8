/* discover: the walk that finds run directories and the grouping of rep-K
 * directories into runs. The walk is depth first and bounded (8 levels), so
 * that a symbolic link loop ends, and it stops at the first directory
 * holding a requests.csv: a run's own subfolders are never runs. A run
 * directory reached more than once (through a symbolic link, or named by
 * two arguments) is one directory by its device and inode, and is kept
 * under the path that needs no link when there is one, else the first. */
#include "report/discover.h"
#include "common/util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct dir_list {
    char **d;
    int n, cap;
    /* for run directories: which directory each is, and whether the walk
     * went through a symbolic link to reach it */
    struct stat *st;
    int *linked;
} dir_list;

static void dl_add(dir_list *l, const char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->d = xrealloc(l->d, (size_t)l->cap * sizeof *l->d);
        l->st = xrealloc(l->st, (size_t)l->cap * sizeof *l->st);
        l->linked = xrealloc(l->linked, (size_t)l->cap * sizeof *l->linked);
    }
    memset(&l->st[l->n], 0, sizeof l->st[l->n]);
    l->linked[l->n] = 0;
    l->d[l->n++] = xstrdup(s);
}

static int is_link(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static int is_file(const char *dir, const char *name) {
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every directory holding a requests.csv, depth first, in sorted order;
 * linked: a symbolic link led here. */
static void find_runs(const char *dir, dir_list *out, int depth, int linked) {
    if (depth > 8)
        return;
    linked |= is_link(dir);
    if (is_file(dir, "requests.csv")) {
        dl_add(out, dir);
        stat(dir, &out->st[out->n - 1]);
        out->linked[out->n - 1] = linked;
        return;
    }
    DIR *d = opendir(dir);
    if (!d)
        return;
    dir_list kids = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            dl_add(&kids, p);
    }
    closedir(d);
    if (kids.n > 1)
        qsort(kids.d, (size_t)kids.n, sizeof *kids.d, cmp_str);
    for (int i = 0; i < kids.n; i++) {
        find_runs(kids.d[i], out, depth + 1, linked);
        free(kids.d[i]);
    }
    free(kids.d);
    free(kids.st);
    free(kids.linked);
}

static int same_dir(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Each run directory once: of the paths to one directory, the first that
 * needs no symbolic link, else the first. The others are dropped, in place. */
static void drop_duplicates(dir_list *l) {
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        int drop = 0;
        for (int j = 0; j < l->n && !drop; j++) {
            if (j == i || !same_dir(&l->st[i], &l->st[j]))
                continue;
            /* j wins when it needs no link and i does, or both alike and j is first */
            drop = l->linked[j] < l->linked[i] || (l->linked[j] == l->linked[i] && j < i);
        }
        if (drop) {
            free(l->d[i]);
            continue;
        }
        l->d[kept] = l->d[i];
        l->st[kept] = l->st[i];
        l->linked[kept] = l->linked[i];
        kept++;
    }
    l->n = kept;
}

static int is_rep_dir(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "rep-", 4) || !b[4])
        return 0;
    for (const char *p = b + 4; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* Group key: the parent for rep-K directories, else the directory. */
static void group_key(const char *path, char *key, size_t cap, char *name, size_t ncap) {
    snprintf(key, cap, "%s", path);
    if (is_rep_dir(path)) {
        char *slash = strrchr(key, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(key, cap, ".");
    }
    const char *b = strrchr(key, '/');
    snprintf(name, ncap, "%.255s", b ? b + 1 : key); /* a file name: at most 255 bytes */
}

/* Length of the report argument a found directory lies under, with its
 * slash, so that files never name the path the report was called with. */
static int root_len_of(const char *dir, char *const *paths, int n_paths) {
    for (int i = 0; i < n_paths; i++) {
        size_t n = strlen(paths[i]);
        while (n > 1 && paths[i][n - 1] == '/')
            n--;
        if (!strncmp(dir, paths[i], n) && dir[n] == '/')
            return (int)n + 1;
    }
    const char *b = strrchr(dir, '/'); /* the argument was the run itself */
    return b ? (int)(b - dir) + 1 : 0;
}

/* The run named by `key`, added (named, its root found) when not yet there. */
static report_run *run_for_key(report *r, char **keys, const char *key, const char *name,
                               const char *dir, char *const *paths, int n_paths) {
    for (int k = 0; k < r->n_runs; k++)
        if (!strcmp(keys[k], key))
            return &r->runs[k];
    r->runs = xrealloc(r->runs, (size_t)(r->n_runs + 1) * sizeof *r->runs);
    keys[r->n_runs] = xstrdup(key);
    report_run *rr = &r->runs[r->n_runs++];
    memset(rr, 0, sizeof *rr);
    snprintf(rr->name, sizeof rr->name, "%s", name);
    rr->root_len = root_len_of(dir, paths, n_paths);
    return rr;
}

static void dir_list_free(dir_list *l) {
    for (int i = 0; i < l->n; i++)
        free(l->d[i]);
    free(l->d);
    free(l->st);
    free(l->linked);
    memset(l, 0, sizeof *l);
}

int discover_runs(char *const *paths, int n_paths, report *r, char *err, int errlen) {
    memset(r, 0, sizeof *r);
    dir_list dirs = {0};
    for (int i = 0; i < n_paths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "report: %s: not a directory", paths[i]);
            dir_list_free(&dirs);
            return -1;
        }
        find_runs(paths[i], &dirs, 0, 0);
    }
    drop_duplicates(&dirs);
    if (dirs.n == 0) {
        snprintf(err, errlen, "report: no run directories (with requests.csv) under %s%s", paths[0],
                 n_paths > 1 ? " and the other paths" : "");
        dir_list_free(&dirs);
        return -1;
    }
    char **keys = xcalloc((size_t)dirs.n, sizeof *keys);
    for (int i = 0; i < dirs.n; i++) {
        char key[4096], name[256];
        group_key(dirs.d[i], key, sizeof key, name, sizeof name);
        report_run *rr = run_for_key(r, keys, key, name, dirs.d[i], paths, n_paths);
        rr->rep_dirs = xrealloc(rr->rep_dirs, (size_t)(rr->n_reps + 1) * sizeof *rr->rep_dirs);
        rr->rep_dirs[rr->n_reps++] = xstrdup(dirs.d[i]);
        free(dirs.d[i]);
    }
    for (int k = 0; k < r->n_runs; k++)
        free(keys[k]);
    free(keys);
    free(dirs.d);
    free(dirs.st);
    free(dirs.linked);
    return 0;
}
