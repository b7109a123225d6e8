/* outdir: refuse, clear or resume a sweep's output directory (see
 * outdir.h). A run directory is OUT/NAME/rep-K holding a file a run or the
 * sweep writes there; only those files are removed, and a directory only
 * when it is then empty. */
#include "sweep/outdir.h"
#include "common/files.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a sweep adds to a run's own files in a run directory. */
static const char *const sweep_files[] = {"trace.csv", "server.log", NULL};

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *path) {
    return access(path, F_OK) == 0;
}

/* Is DIR a run directory? It holds what every run writes first (rows,
 * meta.json) or what a sweep adds to one (a trace, a server log); a report
 * folder, which has a summary.json too, is not one. */
static int is_run_dir(const char *dir) {
    static const char *const marks[] = {"requests.csv", "chunks.csv", "meta.json",
                                        "trace.csv",    "server.log", NULL};
    for (const char *const *f = marks; *f; f++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/%s", dir, *f);
        if (exists(path))
            return 1;
    }
    return 0;
}

/* Removes a run directory's files; the lock file too, but never the one of
 * `out` itself, which this sweep holds. */
static void clear_run_dir(const char *dir, const char *out) {
    run_dir_clear(dir);
    for (const char *const *f = sweep_files; *f; f++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/%s", dir, *f);
        unlink(path);
    }
    if (strcmp(dir, out)) {
        char lock[4800];
        snprintf(lock, sizeof lock, "%s/.servelab.lock", dir);
        unlink(lock);
        rmdir(dir); /* only when nothing else is in it */
    }
}

/* Calls fn (when not NULL) on every run directory at or under `dir`, down
 * to `depth` more levels (a sweep writes OUT/RUN/rep-K; anything else that
 * holds run files would be pooled by the report all the same); returns how
 * many. With fn, directories left empty are removed on the way back. */
static int walk(const char *dir, int depth, void (*fn)(const char *dir, void *arg), void *arg) {
    int n = 0;
    if (is_run_dir(dir)) {
        n++;
        if (fn)
            fn(dir, arg);
    }
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        char sub[4600];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || !is_dir(sub))
            continue;
        n += walk(sub, depth - 1, fn, arg);
        if (fn)
            rmdir(sub); /* only when empty */
    }
    if (d)
        closedir(d);
    return n;
}

static int each_run_dir(const char *out, void (*fn)(const char *dir, void *arg), void *arg) {
    return walk(out, 3, fn, arg);
}

/* The earlier campaign.json, or NULL. */
static json_t *earlier(const char *out) {
    char path[4200];
    snprintf(path, sizeof path, "%s/campaign.json", out);
    return json_load_file(path, 0, NULL);
}

static json_t *run_named(json_t *runs, const char *name) {
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        const char *n = json_string_value(json_object_get(r, "name"));
        if (n && !strcmp(n, name))
            return r;
    }
    return NULL;
}

json_t *outdir_kept(json_t *kept, const char *name, int k) {
    size_t i;
    json_t *e;
    json_array_foreach(kept, i, e) {
        const char *n = json_string_value(json_object_get(e, "run"));
        if (n && !strcmp(n, name) && json_integer_value(json_object_get(e, "repetition")) == k)
            return e;
    }
    return NULL;
}

/* The earlier campaign's finished repetitions that this one would repeat
 * exactly: same resolved run, same target, rows still there. */
static json_t *keepable(const char *out, json_t *old, json_t *runs, json_t *target) {
    json_t *kept = json_array();
    if (!old || !json_equal(json_object_get(old, "target"), target))
        return kept;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(old, "status"), i, e) {
        const char *name = json_string_value(json_object_get(e, "run"));
        const char *dir = json_string_value(json_object_get(e, "dir"));
        const char *status = json_string_value(json_object_get(e, "status"));
        if (!name || !dir || !status || strcmp(status, "ok"))
            continue;
        json_t *was = run_named(json_object_get(old, "runs"), name), *now = run_named(runs, name);
        char rows[4600];
        snprintf(rows, sizeof rows, "%s/%s/requests.csv", out, dir);
        if (was && now && json_equal(was, now) && exists(rows))
            json_array_append(kept, e);
    }
    return kept;
}

typedef struct clear_ctx {
    const char *out;
    json_t *kept;
} clear_ctx;

/* Clears a run directory unless a kept entry names it. */
static void clear_unless_kept(const char *dir, void *arg) {
    const clear_ctx *c = arg;
    size_t i;
    json_t *e;
    json_array_foreach(c->kept, i, e) {
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", c->out, json_string_value(json_object_get(e, "dir")));
        if (!strcmp(path, dir))
            return;
    }
    clear_run_dir(dir, c->out);
}

static void clear_sweep_files(const char *out) {
    char path[4200];
    snprintf(path, sizeof path, "%s/campaign.json", out);
    unlink(path);
    snprintf(path, sizeof path, "%s/report", out);
    remove_tree(path);
    snprintf(path, sizeof path, "%s/servers", out);
    remove_tree(path);
}

int outdir_prepare(const char *out, json_t *runs, json_t *target, int force, int resume,
                   json_t **kept, char *err, size_t errlen) {
    *kept = json_array();
    char path[4200];
    snprintf(path, sizeof path, "%s/campaign.json", out);
    int has_campaign = exists(path), n_dirs = each_run_dir(out, NULL, NULL);
    if (!has_campaign && !n_dirs)
        return 0;
    if (!force && !resume) {
        snprintf(err, errlen,
                 "--out %s already holds %s (%s%d run director%s): add --resume to keep its "
                 "finished runs, --force to replace it, or give another --out",
                 out, has_campaign ? "a campaign" : "results",
                 has_campaign ? "campaign.json, " : "", n_dirs, n_dirs == 1 ? "y" : "ies");
        return -1;
    }
    if (resume) {
        json_t *old = earlier(out);
        json_decref(*kept);
        *kept = keepable(out, old, runs, target);
        json_decref(old);
    }
    clear_ctx c = {out, *kept};
    each_run_dir(out, clear_unless_kept, &c);
    clear_sweep_files(out);
    return 0;
}
