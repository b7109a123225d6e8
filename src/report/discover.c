/* discover: the walk that finds run directories and the grouping of rep-K
 * directories into runs. The walk is depth first and bounded (8 levels), so
 * that a symbolic link loop ends, and it stops at the first directory
 * holding a run's rows (rundir/rundir.h's RUNDIR_IS_RUN): a run's own
 * subfolders are never runs, nor is a campaign's shards/ folder (a sharded
 * sweep's parts, merged beside it). A run directory reached more than once
 * (through a symbolic link, or named by two arguments) is one directory by
 * its device and inode, and is kept under the path that needs no link when
 * there is one, else the first.
 *
 * A path that is a file is a result file of vLLM's client, one run named
 * after the file (report/vllm_import.h).
 *
 * A report over more than one campaign names each run after its campaign
 * ("A/load-8rps"): two sweeps of the same plan have runs of the same names,
 * and only the campaign tells them apart. A run's campaign is the nearest
 * directory above it (up to the argument it was found under) that holds a
 * campaign.json, else that argument; it is called by its campaign.json's
 * name, else by its directory's, and by its path where two campaigns would
 * share a name. */
#include "report/discover.h"
#include "common/util.h"
#include "rundir/rundir.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
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
    if (rundir_holds(dir, NULL, 0) & RUNDIR_IS_RUN) { /* rundir/rundir.h decides */
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
        /* a sharded sweep's parts (sweep/sweep_shards.h): its runs are the
         * merged ones beside them */
        if (!strcmp(e->d_name, "shards") && is_file(dir, "campaign.json"))
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
    size_t n = strlen(name);
    if (n > 5 && !strcmp(name + n - 5, ".json")) /* vLLM's result file: named without it */
        name[n - 5] = 0;
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

/* The length of `arg` without its trailing slashes when `path` lies
 * strictly below it, else 0. */
static size_t below(const char *path, const char *arg) {
    size_t n = strlen(arg);
    while (n > 1 && arg[n - 1] == '/')
        n--;
    return !strncmp(path, arg, n) && path[n] == '/' ? n : 0;
}

/* The directory of the campaign of the run at `key` into out, "" for none:
 * see the top of this file. A run given as an argument itself has the
 * campaign of its parent when that holds a campaign.json, else none. */
static void campaign_dir_of(const char *key, char *const *paths, int n_paths, char *out,
                            size_t cap) {
    size_t top = 0;
    for (int i = 0; i < n_paths && !top; i++)
        top = below(key, paths[i]);
    snprintf(out, cap, "%s", key);
    char *slash;
    while ((slash = strrchr(out, '/')) && slash != out) {
        *slash = 0;
        if (is_file(out, "campaign.json"))
            return;
        if (!top || strlen(out) <= top)
            break;
    }
    if (!top && !slash && is_file(".", "campaign.json")) {
        snprintf(out, cap, ".");
        return;
    }
    if (!top)
        out[0] = 0;
}

/* What a campaign is called: its campaign.json's name, else the name of
 * its directory (the real one for "." or ".."). */
static void campaign_label(const char *dir, char *out, size_t cap) {
    char p[4200];
    snprintf(p, sizeof p, "%s/campaign.json", dir);
    json_t *doc = json_load_file(p, 0, NULL);
    json_t *name = json_object_get(doc, "name");
    if (json_is_string(name) && json_string_value(name)[0]) {
        snprintf(out, cap, "%s", json_string_value(name));
        json_decref(doc);
        return;
    }
    json_decref(doc);
    char real[PATH_MAX];
    const char *d = dir;
    const char *b = strrchr(d, '/');
    b = b ? b + 1 : d;
    if ((!strcmp(b, ".") || !strcmp(b, "..")) && realpath(dir, real)) {
        d = real;
        b = strrchr(d, '/');
        b = b && b[1] ? b + 1 : d;
    }
    snprintf(out, cap, "%.255s", b);
}

/* The last `parts` components of a path (all of it when it has fewer). */
static const char *path_tail(const char *path, int parts) {
    const char *p = path + strlen(path);
    while (p > path && parts > 0)
        if (*--p == '/' && --parts == 0)
            return p + 1;
    return path;
}

/* Campaigns that share a label are called by the shortest tails of their
 * directories' paths that tell them apart ("A" and "B"; "v1/fixture" and
 * "v2/fixture"), so a label never depends on where the report ran from
 * more than it must. first[k] == k marks campaign k's entry. */
static void distinguish_labels(int n, const int *first, char (*dirs)[4096], char (*labels)[256]) {
    int *clash = xcalloc((size_t)n, sizeof *clash);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            clash[k] |= j != k && first[j] == j && first[k] == k && labels[k][0] &&
                        !strcmp(labels[j], labels[k]);
    for (int parts = 1; parts <= 16; parts++) {
        int unique = 1;
        for (int k = 0; k < n && unique; k++)
            for (int j = 0; j < k && unique; j++)
                unique = !clash[k] || !clash[j] ||
                         strcmp(path_tail(dirs[j], parts), path_tail(dirs[k], parts)) ||
                         parts == 16;
        if (!unique)
            continue;
        for (int k = 0; k < n; k++)
            if (clash[k])
                snprintf(labels[k], sizeof labels[k], "%.255s", path_tail(dirs[k], parts));
        break;
    }
    free(clash);
}

/* Names the runs after their campaigns when they come from more than one
 * (keys[k]: run k's directory, or its repetitions' parent). */
static void name_by_campaign(report *r, char **keys, char *const *paths, int n_paths) {
    char(*dirs)[4096] = xcalloc((size_t)r->n_runs, sizeof *dirs);
    char(*labels)[256] = xcalloc((size_t)r->n_runs, sizeof *labels);
    int *first = xcalloc((size_t)r->n_runs, sizeof *first); /* index of the first of its campaign */
    r->n_campaigns = 0;
    for (int k = 0; k < r->n_runs; k++) {
        campaign_dir_of(keys[k], paths, n_paths, dirs[k], sizeof dirs[k]);
        for (size_t n = strlen(dirs[k]); n > 1 && dirs[k][n - 1] == '/';)
            dirs[k][--n] = 0; /* "A/" (an argument given so) is "A" */
        first[k] = k;
        for (int j = 0; j < k && first[k] == k; j++)
            if (!strcmp(dirs[j], dirs[k]))
                first[k] = first[j];
        if (first[k] == k) {
            r->runs[k].campaign_index = r->n_campaigns++;
            if (dirs[k][0])
                campaign_label(dirs[k], labels[k], sizeof labels[k]);
        } else {
            r->runs[k].campaign_index = r->runs[first[k]].campaign_index;
        }
    }
    distinguish_labels(r->n_runs, first, dirs, labels);
    for (int k = 0; k < r->n_runs && r->n_campaigns > 1; k++) {
        report_run *rr = &r->runs[k];
        const char *label = labels[first[k]];
        if (!label[0])
            continue;
        char name[sizeof rr->name * 2 + 2];
        snprintf(name, sizeof name, "%s/%s", label, rr->name);
        snprintf(rr->name, sizeof rr->name, "%.255s", name);
        snprintf(rr->campaign, sizeof rr->campaign, "%s", label);
    }
    if (r->n_campaigns <= 1)
        for (int k = 0; k < r->n_runs; k++)
            r->runs[k].campaign_index = 0;
    free(dirs);
    free(labels);
    free(first);
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
        if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode)) { /* vLLM's result file */
            dl_add(&dirs, paths[i]);
            dirs.st[dirs.n - 1] = st;
            continue;
        }
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "report: %s: neither a directory nor a file", paths[i]);
            dir_list_free(&dirs);
            return -1;
        }
        char top[4096]; /* "A/" is "A": its runs' paths then hold no "//" */
        snprintf(top, sizeof top, "%s", paths[i]);
        for (size_t n = strlen(top); n > 1 && top[n - 1] == '/';)
            top[--n] = 0;
        find_runs(top, &dirs, 0, 0);
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
    name_by_campaign(r, keys, paths, n_paths);
    for (int k = 0; k < r->n_runs; k++)
        free(keys[k]);
    free(keys);
    free(dirs.d);
    free(dirs.st);
    free(dirs.linked);
    return 0;
}
