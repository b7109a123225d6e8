/* outdir: refuse, clear or resume an output directory (see outdir.h). A
 * run's --out is taken when it holds none of a run's files, or they were
 * removed with --force. A sweep's: a run directory is OUT/NAME/rep-K holding a file a run or the
 * sweep writes there; only those files are removed, and a directory only
 * when it is then empty.
 *
 * The walk never leaves OUT through a symbolic link: every directory below
 * OUT is opened with openat(O_NOFOLLOW) under its parent's descriptor and
 * every file removed with unlinkat under its own, as rsync and git do, so
 * a link that appears between the look and the removal is not followed
 * either. A link the walk meets is not followed, not counted, not removed:
 * the sweep refuses the directory instead, naming it, since the report
 * would pool the runs behind it and the sweep would write through it. */
#include "rundir/outdir.h"
#include "common/notice.h"
#include "common/files.h"
#include "common/util.h"
#include "rundir/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *path) {
    return access(path, F_OK) == 0;
}

/* Is the directory open as dfd a run directory? It holds what every run
 * writes first (rows, meta.json) or what a sweep adds to one (a trace, a
 * server log); a report folder, which has a summary.json too, is not one. */
static int is_run_dir(int dfd) {
    return (rundir_holds_at(dfd) & RUNDIR_MARKS) != 0;
}

/* Removes a run directory's files (outdir_clear's list, and the sweep's),
 * each by unlinkat under dfd; the lock file too, but never the one of OUT
 * itself, which this sweep holds. */
static void clear_run_dir(int dfd, int is_out) {
    for (const char *const *f = rundir_file_names; *f; f++) {
        char tmp[300];
        snprintf(tmp, sizeof tmp, ".%s.tmp", *f); /* write_json_atomic's */
        unlinkat(dfd, *f, 0);
        unlinkat(dfd, tmp, 0);
    }
    for (const char *const *f = rundir_sweep_files; *f; f++)
        unlinkat(dfd, *f, 0);
    if (!is_out)
        unlinkat(dfd, DIR_LOCK_FILE, 0);
}

/* A walk of OUT: fn (when not NULL) on every run directory, with the
 * directory open as dfd and its path; n counts them; link gets the first
 * symbolic link met (empty when none). */
typedef struct walker {
    void (*fn)(int dfd, const char *path, void *arg);
    void *arg;
    int n;
    char link[4600];
} walker;

/* The run directories at or under the directory open as dfd (path names
 * it), down to `depth` more levels (a sweep writes OUT/RUN/rep-K; anything
 * else that holds run files would be pooled by the report all the same).
 * With fn, directories left empty are removed on the way back. */
static void walk(walker *w, int dfd, const char *path, int depth) {
    if (is_run_dir(dfd)) {
        w->n++;
        if (w->fn)
            w->fn(dfd, path, w->arg);
    }
    /* its own descriptor for readdir, so dfd's stays the caller's */
    int rfd = depth > 0 ? openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (!d && rfd >= 0)
        close(rfd);
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
            continue;
        char sub[4600];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (S_ISLNK(st.st_mode) && !w->link[0])
            snprintf(w->link, sizeof w->link, "%s", sub);
        if (!S_ISDIR(st.st_mode))
            continue;
        int sfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
            continue;
        walk(w, sfd, sub, depth - 1);
        close(sfd);
        if (w->fn)
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR); /* only when empty */
    }
    if (d)
        closedir(d);
}

/* Walks OUT (followed: it is the directory the user named) 3 levels down.
 * -1 when OUT cannot be opened. */
static int each_run_dir(const char *out, walker *w) {
    int fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    walk(w, fd, out, 3);
    close(fd);
    return 0;
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

/* The directory a status entry stands for, RUN/rep-K into dir, from its
 * run and repetition (never from its dir, which is only checked to say the
 * same): 0, or -1 with why when the entry is not one this campaign could
 * have written (its dir differs, or K is not one of the run's
 * repetitions). */
static int entry_dir(json_t *e, json_t *run, char *dir, size_t n, char *why, size_t whylen) {
    const char *name = json_string_value(json_object_get(e, "run"));
    const char *said = json_string_value(json_object_get(e, "dir"));
    json_t *rep = json_object_get(e, "repetition");
    json_int_t k = json_integer_value(rep);
    json_int_t reps = json_integer_value(json_object_get(run, "repetitions"));
    snprintf(dir, n, "%s/rep-%lld", name, (long long)k);
    if (!json_is_integer(rep)) {
        snprintf(why, whylen, "an entry of %.200s has no repetition number", name);
        return -1;
    }
    if (k < 1 || k > reps) {
        snprintf(why, whylen, "an entry of %.200s says repetition %lld, but it has %lld", name,
                 (long long)k, (long long)reps);
        return -1;
    }
    if (said && !strcmp(said, dir))
        return 0;
    snprintf(why, whylen, "the entry of %.200s rep-%lld says dir '%.200s', not %.200s", name,
             (long long)k, said ? said : "(none)", dir);
    return -1;
}

/* The earlier campaign's finished repetitions that this one would repeat
 * exactly: same resolved run, same target, its directory the one its run
 * and repetition name (a hand-edited dir is not trusted), rows still
 * there, each once. */
static json_t *keepable(const char *out, json_t *old, json_t *runs, json_t *target) {
    json_t *kept = json_array();
    if (!old || !json_equal(json_object_get(old, "target"), target))
        return kept;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(old, "status"), i, e) {
        const char *name = json_string_value(json_object_get(e, "run"));
        const char *status = json_string_value(json_object_get(e, "status"));
        if (!name || !status || strcmp(status, "ok"))
            continue;
        json_t *was = run_named(json_object_get(old, "runs"), name), *now = run_named(runs, name);
        if (!was || !now || !json_equal(was, now))
            continue;
        char dir[400], rows[4600], why[700];
        if (entry_dir(e, now, dir, sizeof dir, why, sizeof why)) {
            notice_warn("%s/campaign.json: %s: not kept, run again", out, why);
            continue;
        }
        snprintf(rows, sizeof rows, "%s/%s/requests.csv", out, dir);
        int k = (int)json_integer_value(json_object_get(e, "repetition"));
        if (exists(rows) && !outdir_kept(kept, name, k))
            json_array_append(kept, e);
    }
    return kept;
}

typedef struct clear_ctx {
    const char *out;
    json_t *kept;
} clear_ctx;

/* Clears a run directory unless a kept entry names it. */
static void clear_unless_kept(int dfd, const char *dir, void *arg) {
    const clear_ctx *c = arg;
    size_t i;
    json_t *e;
    json_array_foreach(c->kept, i, e) {
        char path[4600];
        snprintf(path, sizeof path, "%s/%s/rep-%lld", c->out,
                 json_string_value(json_object_get(e, "run")),
                 (long long)json_integer_value(json_object_get(e, "repetition")));
        if (!strcmp(path, dir))
            return;
    }
    clear_run_dir(dfd, !strcmp(dir, c->out));
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
    walker look = {0};
    if (each_run_dir(out, &look)) {
        snprintf(err, errlen, "--out %s: cannot open: %s", out, strerror(errno));
        return -1;
    }
    if (look.link[0]) {
        snprintf(err, errlen,
                 "--out %s: %s is a symbolic link, which a sweep neither follows nor removes: "
                 "remove it, or give another --out",
                 out, look.link);
        return -1;
    }
    int has_campaign = exists(path), n_dirs = look.n;
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
    walker clear = {.fn = clear_unless_kept, .arg = &c};
    each_run_dir(out, &clear);
    clear_sweep_files(out);
    return 0;
}

int outdir_clear(const char *dir) {
    int rc = 0;
    for (const char *const *f = rundir_file_names; *f; f++) {
        char path[4800], tmp[4800];
        snprintf(path, sizeof path, "%s/%s", dir, *f);
        snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, *f);
        if (unlink(path) && errno != ENOENT)
            rc = -1;
        unlink(tmp);
    }
    return rc;
}

int outdir_take(const char *dir, int force, char *err, size_t errlen) {
    char names[256];
    unsigned held = rundir_holds(dir, names, sizeof names) & RUNDIR_ANY;
    if (held && !force) {
        snprintf(err, errlen,
                 "%s already holds a run (%s): add --force to replace it, or give another --out",
                 dir, names);
        return -1;
    }
    if (held && outdir_clear(dir)) {
        snprintf(err, errlen, "%s: cannot remove the earlier run's files: %s", dir,
                 strerror(errno));
        return -1;
    }
    return 0;
}
