/* merge: the shards of one schedule into one run directory (see merge.h).
 *
 * The checks that need no rows come first and write nothing
 * (sweep/merge_check.h): every shard's meta.json, the settings that make
 * the schedule, the shards' indices, where their times go. Then the rows,
 * each shard's read once and checked as they are copied
 * (sweep/merge_rows.h): requests.csv and chunks.csv in global request
 * order, errors.csv summed by (error, status), and the server's samples of
 * shard 0 (every shard samples the same server). Time columns are moved by
 * a shard's offset from the earliest shard's t=0 unless all started at one
 * --start-at. Last, summary.json is made by the same summary that `run`
 * and `report` make (summarize_requests, then summarize_chunks), from the
 * merged rows as the report's reader reads them, handed over as they are
 * written; a row that reader refuses is then looked for shard by shard, so
 * that the refusal names the shard's own file and line.
 *
 * Everything is written into a temporary directory inside --out
 * (.merge-XXXXXX) and moved into --out, summary.json last, only once all of
 * it is written and summary.json was made from the merged files: a merge
 * that fails (a full disk, a row the merged run's reader refuses) leaves
 * --out as it was, an earlier run there included, and the files are moved
 * by rename within one file system, so none is seen half written. */
#include "sweep/merge.h"
#include "sweep/merge_check.h"
#include "sweep/merge_rows.h"
#include "analysis/serverstats.h"
#include "analysis/summary.h"
#include "common/csv.h"
#include "common/files.h"
#include "common/mapfile.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "report/load.h"
#include "run/run.h"
#include "rundir/columns.h"
#include "rundir/outdir.h"
#include "rundir/rundir.h"
#include "rundir/summary_file.h"
#include "rundir/summary_keys.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the small files: errors.csv and the server's samples ---- */

typedef struct line {
    char *text; /* the row with its LF */
} line;

/* One row as CSV (merge_row_text), in a string of its own. */
static char *row_text(const csv_row *r, const int *is_time, double shift_ms) {
    char *line = NULL;
    size_t cap = 0;
    merge_row_text(&line, &cap, r, is_time, shift_ms, NULL);
    return line;
}

/* Appends FILE's rows of every shard (only shard 0's: only_first) to
 * *lines (its header into *header); `times` names the time columns. 0, or
 * -1 with err. */
static int gather(const shard_in *s, int n, const char *file, const char *const *times,
                  int only_first, char **header, line **lines, size_t *nl, char *err, int errlen) {
    size_t cap = *nl;
    for (int k = 0; k < n; k++) {
        if (only_first && s[k].index != 0)
            continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", s[k].dir, file);
        csv_file c;
        int rc = csv_open(&c, p);
        if (rc == 1)
            continue;
        if (rc < 0) {
            snprintf(err, errlen, "merge: %s: %s", p, file_why(errno));
            return -1;
        }
        csv_row hdr, r;
        int is_time[CSV_MAX_FIELDS] = {0};
        if (csv_next(&c, &hdr)) {
            merge_time_columns(&hdr, times, is_time);
            if (!*header)
                *header = row_text(&hdr, (int[CSV_MAX_FIELDS]){0}, 0);
        }
        while (csv_next(&c, &r)) {
            if (csv_row_blank(&r))
                continue;
            if (r.error) {
                snprintf(err, errlen, "merge: %s:%d: %s", p, c.line, r.error);
                csv_close(&c);
                return -1;
            }
            if (*nl == cap)
                *lines = xrealloc(*lines, (cap = cap ? 2 * cap : 1024) * sizeof **lines);
            (*lines)[(*nl)++] = (line){row_text(&r, is_time, s[k].shift_ms)};
        }
        csv_close(&c);
    }
    return 0;
}

static int write_lines(const char *out, const char *file, const char *header, line *lines,
                       size_t n) {
    if (!header)
        return 0;
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", out, file);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs(header, f);
    for (size_t i = 0; i < n; i++)
        fputs(lines[i].text, f);
    return fclose(f);
}

static void free_lines(line *l, size_t n, char *header) {
    for (size_t i = 0; i < n; i++)
        free(l[i].text);
    free(l);
    free(header);
}

/* One of the server's sample files: shard 0's, gathered and written. */
static int merge_samples(const shard_in *s, int n, const char *out, const char *file, char *err,
                         int errlen) {
    static const char *const times[] = {"t_ms", NULL};
    char *header = NULL;
    line *lines = NULL;
    size_t nl = 0;
    int rc = gather(s, n, file, times, 1, &header, &lines, &nl, err, errlen);
    if (!rc && write_lines(out, file, header, lines, nl)) {
        snprintf(err, errlen, "merge: writing %s/%s: %s", out, file, strerror(errno));
        rc = -1;
    }
    free_lines(lines, nl, header);
    return rc;
}

/* errors.csv: counts summed by (error, http_status), the first example kept. */
static int merge_errors(const shard_in *s, int n, const char *out, char *err, int errlen) {
    static const char *const none[] = {NULL};
    char *header = NULL;
    line *lines = NULL;
    size_t nl = 0;
    if (gather(s, n, "errors.csv", none, 0, &header, &lines, &nl, err, errlen))
        return -1;
    json_t *counts = json_object(), *first = json_object();
    strbuf b = {0};
    for (size_t i = 0; i < nl; i++) {
        char kind[256];
        long count = 0;
        const char *t = lines[i].text;
        const char *c1 = strchr(t, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        if (!c2)
            continue;
        snprintf(kind, sizeof kind, "%.*s", (int)(c2 - t), t);
        count = strtol(c2 + 1, NULL, 10);
        json_t *had = json_object_get(counts, kind);
        json_object_set_new(counts, kind,
                            json_integer((had ? json_integer_value(had) : 0) + count));
        if (!json_object_get(first, kind))
            json_object_set_new(first, kind, json_string(strchr(c2 + 1, ',') ?: "\n"));
    }
    const char *kind;
    json_t *v;
    json_object_foreach(counts, kind, v) {
        sb_printf(&b, "%s,%lld%s", kind, (long long)json_integer_value(v),
                  json_string_value(json_object_get(first, kind)));
    }
    int rc = 0;
    if (header) {
        char p[4400];
        snprintf(p, sizeof p, "%s/errors.csv", out);
        FILE *f = fopen(p, "w");
        rc = !f || fputs(header, f) < 0 || (b.s && fputs(b.s, f) < 0);
        if (f && fclose(f))
            rc = 1;
        if (rc)
            snprintf(err, errlen, "merge: writing %s: %s", p, strerror(errno));
    }
    sb_free(&b);
    json_decref(counts);
    json_decref(first);
    free_lines(lines, nl, header);
    return rc ? -1 : 0;
}

/* ---- meta.json and summary.json ---- */

static json_t *shard_entry(const shard_in *s) {
    json_t *sum = rundir_summary_read(s->dir);
    json_t *sh = json_object_get(s->meta, "shard");
    json_t *e =
        json_pack("{s:s,s:i,s:O?,s:O?,s:O?,s:O?,s:f}", "dir", s->dir, "index", s->index, "host",
                  json_object_get(s->meta, "host"), "clock", json_object_get(s->meta, "clock"),
                  "t0_utc", json_object_get(s->meta, "t0_utc"), "requests",
                  json_object_get(sh, "requests"), "shift_ms", s->shift_ms);
    json_object_set(e, "completed", json_object_get(sum, "completed") ?: json_null());
    json_object_set(e, "failed", json_object_get(sum, "failed") ?: json_null());
    json_object_set(e, "errors", json_object_get(sum, "errors") ?: json_null());
    json_object_set(e, "client", json_object_get(sum, "client") ?: json_null());
    json_decref(sum);
    return e;
}

/* meta.json: shard 0's, with `shard` null, `merged` listing every shard,
 * t0_utc the merged run's t=0 (the earliest shard's, when they were moved)
 * and the requests of all. */
static int write_meta(const shard_in *s, int n, const merge_times *t, size_t rows,
                      const char *out) {
    const shard_in *ref = &s[0];
    for (int i = 0; i < n; i++)
        if (s[i].index == 0)
            ref = &s[i];
    json_t *meta = json_deep_copy(ref->meta);
    json_t *list = json_array();
    for (int k = 0; k < ref->count; k++)
        for (int i = 0; i < n; i++)
            if (s[i].index == k)
                json_array_append_new(list, shard_entry(&s[i]));
    json_object_set_new(meta, "shard", json_null());
    json_object_set_new(meta, "merged",
                        json_pack("{s:i,s:s,s:o}", "shards", ref->count, "times",
                                  t->same_start ? "one --start-at: as recorded"
                                                : "moved by each shard's wall-clock "
                                                  "t=0 offset from the earliest shard's",
                                  "from", list));
    if (!t->same_start)
        json_object_set(meta, "t0_utc", json_object_get(s[t->earliest].meta, "t0_utc"));
    json_object_set_new(json_object_get(meta, "config"), "requests",
                        json_integer((json_int_t)rows));
    int rc = rundir_meta_write(out, meta);
    json_decref(meta);
    return rc;
}

/* The shards' `client` objects in index order (a shard without a
 * summary.json: NULL), for rundir_client_merge. */
static json_t *shard_clients(const shard_in *s, int n, json_t **sums, json_t **clients) {
    for (int k = 0; k < n; k++) {
        sums[k] = clients[k] = NULL;
        for (int i = 0; i < n; i++)
            if (s[i].index == k) {
                sums[k] = rundir_summary_read(s[i].dir);
                clients[k] = json_object_get(sums[k], "client");
            }
    }
    return rundir_client_merge(clients, n);
}

/* summary.json from the merged rows' summary (made as they were written),
 * the merged server samples and the shards' `client` keys (each by its
 * rule: rundir/summary_keys.h). */
static int write_summary(const shard_in *sh, int n, const char *out, const run_summary *s,
                         char *err, int errlen) {
    run_files files;
    memset(&files, 0, sizeof files);
    load_samples(out, &files);
    json_t **sums = xcalloc((size_t)n, sizeof *sums),
           **clients = xcalloc((size_t)n, sizeof *clients);
    rundir_summary sj = {
        .s = s, .server = &files.server, .client = shard_clients(sh, n, sums, clients)};
    int rc = rundir_summary_write(out, &sj);
    if (rc)
        snprintf(err, errlen, "merge: writing %s/summary.json: %s", out, strerror(errno));
    for (int i = 0; i < n; i++)
        json_decref(sums[i]);
    free(sums);
    free(clients);
    run_files_free(&files);
    return rc ? -1 : 0;
}

/* ---- --out ---- */

/* --out may take the merge: not too long, not one of the shards, and
 * holding no run unless --force. Nothing is written. */
static int check_out(const merge_opts *o, const shard_in *s, int n, char *err, int errlen) {
    if (strlen(o->out) > OUT_DIR_MAX) {
        snprintf(err, errlen, "merge: --out: the path has %zu characters (at most %d)",
                 strlen(o->out), OUT_DIR_MAX);
        return -1;
    }
    struct stat out, sh;
    if (stat(o->out, &out))
        return 0; /* made later */
    for (int i = 0; i < n; i++)
        if (!stat(s[i].dir, &sh) && sh.st_dev == out.st_dev && sh.st_ino == out.st_ino) {
            snprintf(err, errlen,
                     "merge: --out %s is one of the shards (%s): give the merge a directory of "
                     "its own",
                     o->out, s[i].dir);
            return -1;
        }
    char names[256];
    if (!o->force && (rundir_holds(o->out, names, sizeof names) & RUNDIR_ANY)) {
        snprintf(err, errlen,
                 "merge: --out %s already holds a run (%s): add --force to replace it, or give "
                 "another --out",
                 o->out, names);
        return -1;
    }
    return 0;
}

/* The merged files from tmp into --out (an earlier run's there removed
 * first, with --force), summary.json last; tmp removed. */
static int move_in(const char *tmp, const merge_opts *o, char *err, int errlen) {
    char why[4500];
    if (outdir_take(o->out, o->force, why, sizeof why)) {
        snprintf(err, errlen, "merge: --out %s", why);
        return -1;
    }
    for (int last = 0; last < 2; last++)
        for (const char *const *f = rundir_file_names; *f; f++) {
            if (last != !strcmp(*f, "summary.json"))
                continue;
            char from[4400], to[4400];
            snprintf(from, sizeof from, "%s/%s", tmp, *f);
            snprintf(to, sizeof to, "%s/%s", o->out, *f);
            if (access(from, F_OK) == 0 && rename(from, to)) {
                snprintf(err, errlen, "merge: moving %s to %s: %s", from, to, strerror(errno));
                return -1;
            }
        }
    rmdir(tmp);
    return 0;
}

/* One merged file written by a thread of its own. */
typedef struct rows_job {
    merge_index *idx;
    rows_feed *feed;
    int rc;
    char err[4600];
} rows_job;

static void *write_job(void *arg) {
    rows_job *j = arg;
    j->rc = merge_rows_write(j->idx, j->feed, j->err, sizeof j->err);
    return NULL;
}

/* requests.csv and chunks.csv: both read and checked first, then written
 * at once, chunks.csv by a thread of its own (the feed's chunk window is
 * the requests' last scheduled time, known from their reading); the
 * requests' half of the summary is made while the chunks are still being
 * written, and the chunks' half after. 0, or merge_rows's -1 or -2 with
 * err, requests.csv's error before chunks.csv's. */
static int write_rows(const shard_in *s, int n, const char *tmp, const merge_rows_file *req,
                      const merge_rows_file *chk, rows_feed *feed, const summary_params *sp,
                      run_summary *sum, char *err, int errlen) {
    merge_index *ir = NULL, *ic = NULL;
    int rc = merge_rows_index(s, n, tmp, req, &ir, err, errlen);
    if (!rc)
        rc = merge_rows_index(s, n, tmp, chk, &ic, err, errlen);
    if (!rc) {
        double last = merge_index_max(ir);
        feed->window_ms = last > 0 ? last : 0;
        feed->window_given = 1;
        rows_job j = {.idx = ic, .feed = feed};
        pthread_t t;
        int threaded = pthread_create(&t, NULL, write_job, &j) == 0;
        rc = merge_rows_write(ir, feed, err, errlen);
        if (!rc)
            summarize_requests(feed->rows, sp, sum); /* the chunk feed adds no request */
        if (threaded)
            pthread_join(t, NULL);
        else
            write_job(&j);
        if (!rc && j.rc) {
            rc = j.rc;
            snprintf(err, errlen, "%s", j.err);
        }
        if (!rc)
            summarize_chunks(feed->rows, sum);
    }
    merge_index_free(ir);
    merge_index_free(ic);
    return rc;
}

/* Every merged file into tmp. The rows are checked as they are copied
 * (merge_rows.h) and handed, as written, to the report's reader
 * (report/load.h's feed), whose rows make summary.json: a row that reader
 * refuses is then looked for in each shard, to be named by the shard's
 * file and line. */
static int write_all(const shard_in *s, int n, const merge_times *t, const char *tmp, char *err,
                     int errlen) {
    /* the time columns (moved by a shard's shift) are the tables' TIME ones */
    const char *req_times[RQ_N + 1], *chunk_times[CH_N + 1];
    rundir_names_of_type(&rundir_requests, RUNDIR_TIME, req_times, RQ_N + 1);
    rundir_names_of_type(&rundir_chunks, RUNDIR_TIME, chunk_times, CH_N + 1);
    const merge_rows_file requests = {rundir_requests.file,
                                      &rundir_requests,
                                      req_times,
                                      0,
                                      1,
                                      rundir_requests.col[RQ_scheduled_ms].name,
                                      feed_requests_header,
                                      feed_request},
                          chunks = {
                              rundir_chunks.file, &rundir_chunks, chunk_times, 1, 0, NULL, NULL,
                              feed_chunk};
    run_rows rows = {0};
    rows_feed feed = {.rows = &rows};
    char why[4600];
    summary_params sp = {0};
    meta_summary_params(s[0].meta, NULL, 0, &sp, why, sizeof why); /* the shards' SLO was checked */
    run_summary sum;
    int rc = write_rows(s, n, tmp, &requests, &chunks, &feed, &sp, &sum, why, sizeof why);
    /* a row the report's reader refused (-2) is named below by the shard's
     * own file and line; the merge's own refusals already name them */
    int refused = rc == -2;
    if (rc == -1)
        snprintf(err, errlen, "%s", why);
    if (!rc && (merge_errors(s, n, tmp, err, errlen) ||
                merge_samples(s, n, tmp, "server_metrics.csv", err, errlen) ||
                merge_samples(s, n, tmp, "gpu.csv", err, errlen) ||
                merge_samples(s, n, tmp, "server_proc.csv", err, errlen)))
        rc = -1;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)s[i].requests; /* merge_rows counted them */
    if (!rc && write_meta(s, n, t, total, tmp)) {
        snprintf(err, errlen, "merge: writing %s/meta.json: %s", tmp, strerror(errno));
        rc = -1;
    }
    if (!rc)
        rc = write_summary(s, n, tmp, &sum, err, errlen);

    feed_free(&feed);
    for (int c = 0; c < rows.n_classes; c++) /* the feed interned them */
        free((char *)rows.classes[c]);
    rows_free(&rows);
    if (refused && merge_check_rows(s, n, err, errlen) == 0) /* not a shard's row: servelab's bug */
        snprintf(err, errlen, "merge: the merged rows do not read back: %s", why);
    return rc ? -1 : 0;
}

/* What a merge that died (a signal, a power cut) left in dir: its
 * .merge-XXXXXX directories. Called with dir locked, so none is another
 * merge's at work. */
static void remove_debris(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, ".merge-", 7) && strlen(e->d_name) == 13) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (!lstat(path, &st) && S_ISDIR(st.st_mode))
                remove_tree(path);
        }
    closedir(d);
}

typedef struct merge_job {
    const shard_in *s;
    int n;
    const merge_times *t;
    const merge_opts *o;
    const char *tmp;
    char *err;
    int errlen;
} merge_job;

static int merge_job_run(void *arg) {
    merge_job *j = arg;
    return write_all(j->s, j->n, j->t, j->tmp, j->err, j->errlen) ||
                   move_in(j->tmp, j->o, j->err, j->errlen)
               ? -1
               : 0;
}

/* The merge written into a temporary directory inside --out (locked for
 * it) and moved in; on failure (a shard cut short under its mapping, a stop
 * signal included) the temporary directory is removed, and --out too when
 * this merge made it. */
static int write_merge(const shard_in *s, int n, const merge_times *t, const merge_opts *o,
                       char *err, int errlen) {
    int made = access(o->out, F_OK) != 0, lock = -1;
    char why[4400];
    if (mkdir_p(o->out)) {
        snprintf(err, errlen, "merge: --out %s: cannot create directory: %s", o->out,
                 strerror(errno));
        return -1;
    }
    if (dir_lock(o->out, &lock, why, sizeof why)) {
        snprintf(err, errlen, "merge: --out %s", why);
        if (made)
            rmdir(o->out);
        return -1;
    }
    remove_debris(o->out);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/.merge-XXXXXX", o->out);
    int have_tmp = mkdtemp(tmp) != NULL, rc = -1;
    if (!have_tmp)
        snprintf(err, errlen, "merge: --out %s: cannot create a directory in it: %s", o->out,
                 strerror(errno));
    else {
        merge_job j = {s, n, t, o, tmp, err, errlen};
        rc = mapfile_guard(merge_job_run, &j, why, sizeof why);
        if (rc && !err[0])
            snprintf(err, errlen, "merge: %s", why);
    }
    if (rc && have_tmp)
        remove_tree(tmp); /* this merge's own: links in it are removed, not followed */
    if (rc && made) {
        char lockfile[4400];
        snprintf(lockfile, sizeof lockfile, "%s/" DIR_LOCK_FILE, o->out);
        unlink(lockfile);
        rmdir(o->out);
    }
    dir_unlock(lock);
    return rc;
}

int merge_shards(char *const *dirs, int n, const merge_opts *o, char *err, int errlen) {
    err[0] = 0;
    shard_in *s = xcalloc((size_t)n, sizeof *s);
    for (int i = 0; i < n; i++)
        s[i].dir = dirs[i];
    merge_times t = {0};
    int rc = merge_check_shards(s, n, &t, err, errlen) || check_out(o, s, n, err, errlen) ||
                     write_merge(s, n, &t, o, err, errlen)
                 ? -1
                 : 0;
    for (int i = 0; i < n; i++)
        json_decref(s[i].meta);
    free(s);
    return rc;
}
