/* merge_check: the shards checked before a merge writes anything (see
 * merge_check.h).
 *
 * The settings compared are those meta.json's config records under the
 * option table's `meta` names (run/run_options.c), which are not always the
 * flags' names (--replay-start is replay_start_s): a name that matches no
 * key would compare two absent values and pass everything, so a test reads
 * a real shard's meta.json and checks that each name below is there.
 *
 * The rows are read here by the report's own reader (load_run) only when
 * the merged rows did not read back (sweep/merge.c): a merge of good shards
 * reads each row once, and a bad row is still named by the shard's file and
 * line. */
#include "sweep/merge_check.h"
#include "common/csv.h"
#include "common/util.h"
#include "report/load.h"
#include "rundir/summary_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The shards of one schedule may differ in no setting that makes the
 * schedule (when each request is due) or its requests (prompts, lengths,
 * bodies). The shards' cache-bust salt may differ (it is drawn per run
 * unless given) where it only keeps nonces unique; a replay's must not
 * (its tokens are drawn with it; see differs()). */
const char *const merge_schedule_keys[] = {"seed",
                                           "rate",
                                           "rate_plan",
                                           "arrival",
                                           "burstiness",
                                           "duration_s",
                                           "warmup",
                                           "prompts",
                                           "mix",
                                           "max_tokens",
                                           "ignore_eos",
                                           "api",
                                           "model",
                                           "extra_body",
                                           "tokenize",
                                           "cache_bust",
                                           "prefix_tokens",
                                           "prefix_groups",
                                           "prefix_mode",
                                           "turns",
                                           "think_time_s",
                                           "replay",
                                           "replay_format",
                                           "time_scale",
                                           "replay_start_s",
                                           "replay_duration_s",
                                           "replay_block_tokens",
                                           "tools",
                                           "response_format",
                                           NULL};

/* Shards started further apart than this on the wall clock are refused:
 * not one schedule's, or a clock (or a t0_utc) far off. */
#define MERGE_MAX_APART_US (86400LL * 1000000)
#define SHARDS_MAX 100000 /* run --shard's own bound */

/* ---- meta.json ---- */

/* "2026-12-01T10:50:58.123456Z" (the fraction optional) into *us since the
 * epoch: 0; 1 when v is absent or null; -1 when it does not read as such a
 * time (a date that does not exist included); -2 when it is not after the
 * epoch (0 is what a run writes as null). */
static int utc_read(json_t *v, long long *us) {
    *us = 0;
    if (!v || json_is_null(v))
        return 1;
    const char *t = json_string_value(v);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = t ? strptime(t, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest || tm.tm_year > 9999 - 1900)
        return -1;
    long long frac = 0;
    int digits = 0;
    if (*rest == '.') {
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
            if (digits < 6)
                frac = frac * 10 + (*rest - '0');
        if (!digits)
            return -1;
    }
    for (; digits < 6; digits++)
        frac *= 10;
    struct tm norm = tm, back;
    time_t secs = timegm(&norm);
    if (strcmp(rest, "Z") || !gmtime_r(&secs, &back) || back.tm_year != tm.tm_year ||
        back.tm_mon != tm.tm_mon || back.tm_mday != tm.tm_mday || back.tm_hour != tm.tm_hour ||
        back.tm_min != tm.tm_min || back.tm_sec != tm.tm_sec)
        return -1;
    *us = (long long)secs * 1000000 + frac;
    return *us > 0 ? 0 : -2;
}

/* v as JSON text for a message ("absent" when missing), at most 80 bytes;
 * single: in single quotes ('soon', not "soon"), for a message that is
 * about one value. */
static void value_text(json_t *v, int single, char *buf, size_t n) {
    char *t = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
    snprintf(buf, n, "%.80s%s", t ? t : "absent", t && strlen(t) > 80 ? "..." : "");
    for (char *c = buf; single && *c; c++)
        *c = *c == '"' ? '\'' : *c;
    free(t);
}

/* shard.KEY, a whole number in [lo, hi], into *v: 0, or -1 with err. */
static int shard_int(const shard_in *s, const char *key, long long lo, long long hi, long long *v,
                     char *err, int errlen) {
    json_t *j = json_object_get(json_object_get(s->meta, "shard"), key);
    *v = json_is_integer(j) ? (long long)json_integer_value(j) : LLONG_MIN;
    if (*v >= lo && *v <= hi)
        return 0;
    char shown[100];
    value_text(j, 0, shown, sizeof shown);
    snprintf(err, errlen, "merge: %s/meta.json: shard.%s is %s, not a whole number in %lld-%lld",
             s->dir, key, shown, lo, hi);
    return -1;
}

static int read_shard(shard_in *s, char *err, int errlen) {
    if (!(s->meta = rundir_meta_read(s->dir))) {
        snprintf(err, errlen, "merge: %s has no readable meta.json: is it a run directory?",
                 s->dir);
        return -1;
    }
    if (!json_is_object(json_object_get(s->meta, "shard"))) {
        snprintf(err, errlen,
                 "merge: %s is not a shard (its meta.json has no shard: run it with "
                 "--shard I/N)",
                 s->dir);
        return -1;
    }
    long long count, index;
    if (shard_int(s, "count", 1, SHARDS_MAX, &count, err, errlen) ||
        shard_int(s, "index", 0, SHARDS_MAX - 1, &index, err, errlen) ||
        shard_int(s, "schedule_requests", 0, LLONG_MAX, &s->schedule, err, errlen) ||
        shard_int(s, "requests", 0, s->schedule, &s->requests, err, errlen))
        return -1;
    if (index >= count) {
        snprintf(err, errlen,
                 "merge: %s/meta.json: shard index %lld is not below the shard count %lld", s->dir,
                 index, count);
        return -1;
    }
    s->index = (int)index;
    s->count = (int)count;
    json_t *at = json_object_get(s->meta, "start_at_utc");
    if (utc_read(at, &s->start_at) < 0) {
        char shown[100];
        value_text(at, 1, shown, sizeof shown);
        snprintf(err, errlen,
                 "merge: %s/meta.json: start_at_utc %s does not read as a UTC time after 1970 "
                 "(YYYY-MM-DDTHH:MM:SS.ffffffZ)",
                 s->dir, shown);
        return -1;
    }
    return 0;
}

/* Whether b's schedule differs from a's; if so, one line in err naming the
 * setting and both values. */
static int differs(const shard_in *a, const shard_in *b, char *err, int errlen) {
    const char *what = a->count != b->count         ? "shard count"
                       : a->schedule != b->schedule ? "schedule length"
                                                    : NULL;
    char va[100], vb[100];
    if (what) {
        snprintf(va, sizeof va, "%lld", a->count != b->count ? (long long)a->count : a->schedule);
        snprintf(vb, sizeof vb, "%lld", a->count != b->count ? (long long)b->count : b->schedule);
    }
    json_t *ca = json_object_get(a->meta, "config"), *cb = json_object_get(b->meta, "config");
    for (int i = 0; !what && merge_schedule_keys[i]; i++) {
        json_t *ja = json_object_get(ca, merge_schedule_keys[i]),
               *jb = json_object_get(cb, merge_schedule_keys[i]);
        int a_none = !ja || json_is_null(ja), b_none = !jb || json_is_null(jb);
        if (a_none == b_none && (a_none || json_equal(ja, jb)))
            continue;
        what = merge_schedule_keys[i];
        value_text(ja, 0, va, sizeof va);
        value_text(jb, 0, vb, sizeof vb);
    }
    /* a replay's tokens are drawn with the run's salt: its shards need one */
    json_t *sa = json_object_get(ca, "cache_bust_salt"),
           *sb = json_object_get(cb, "cache_bust_salt");
    if (!what && json_is_string(json_object_get(ca, "replay")) && !json_equal(sa, sb)) {
        what = "cache_bust_salt";
        value_text(sa, 0, va, sizeof va);
        value_text(sb, 0, vb, sizeof vb);
    }
    if (what)
        snprintf(err, errlen,
                 "merge: %s is a shard of another schedule than %s: its %s is %s, %s's is %s",
                 b->dir, a->dir, what, vb, a->dir, va);
    return what != NULL;
}

/* Each index once, none missing (the count is every shard's). */
static int check_indices(const shard_in *s, int n, char *err, int errlen) {
    int count = s[0].count, rc = 0;
    int *seen = xmalloc((size_t)count * sizeof *seen); /* which shard has index k, or -1 */
    for (int k = 0; k < count; k++)
        seen[k] = -1;
    for (int i = 0; i < n && !rc; i++) {
        if (seen[s[i].index] >= 0) {
            snprintf(err, errlen, "merge: %s and %s are both shard %d of %d",
                     s[seen[s[i].index]].dir, s[i].dir, s[i].index, count);
            rc = -1;
        }
        seen[s[i].index] = i;
    }
    for (int k = 0; k < count && !rc; k++)
        if (seen[k] < 0) {
            snprintf(err, errlen, "merge: shard %d of %d is missing (%d given)", k, count, n);
            rc = -1;
        }
    free(seen);
    return rc;
}

/* t=0 at the earliest shard's t=0 and each shard moved by its offset from
 * it, unless all started at one --start-at. */
static int align(shard_in *s, int n, merge_times *t, char *err, int errlen) {
    t->same_start = s[0].start_at != 0;
    for (int i = 1; i < n; i++)
        t->same_start &= s[i].start_at == s[0].start_at;
    t->earliest = 0;
    for (int i = 0; i < n; i++)
        if (s[i].index == 0)
            t->earliest = i;
    if (t->same_start)
        return 0;
    for (int i = 0; i < n; i++) {
        json_t *v = json_object_get(s[i].meta, "t0_utc");
        int rc = utc_read(v, &s[i].t0_us);
        if (rc) {
            char shown[100];
            value_text(v, 1, shown, sizeof shown);
            snprintf(err, errlen,
                     "merge: %s/meta.json: %s%s%s, so its times cannot be put on the other "
                     "shards' (they did not all start at one --start-at)",
                     s[i].dir, rc == 1 ? "no t0_utc" : "t0_utc ", rc == 1 ? "" : shown,
                     rc == -1   ? " does not read as a UTC time (YYYY-MM-DDTHH:MM:SS.ffffffZ)"
                     : rc == -2 ? " is not after the epoch"
                                : "");
            return -1;
        }
    }
    int latest = 0;
    t->earliest = 0;
    for (int i = 1; i < n; i++) {
        if (s[i].t0_us < s[t->earliest].t0_us)
            t->earliest = i;
        if (s[i].t0_us > s[latest].t0_us)
            latest = i;
    }
    const shard_in *e = &s[t->earliest], *l = &s[latest];
    if (l->t0_us - e->t0_us > MERGE_MAX_APART_US) {
        snprintf(err, errlen,
                 "merge: %s's t=0 (t0_utc %s) and %s's (%s) are more than a day apart: not the "
                 "shards of one run, or a clock far off (start them with one --start-at)",
                 l->dir, json_string_value(json_object_get(l->meta, "t0_utc")), e->dir,
                 json_string_value(json_object_get(e->meta, "t0_utc")));
        return -1;
    }
    for (int i = 0; i < n; i++)
        s[i].shift_ms = (double)(s[i].t0_us - e->t0_us) / 1000.0;
    return 0;
}

int merge_check_shards(shard_in *s, int n, merge_times *t, char *err, int errlen) {
    for (int i = 0; i < n; i++)
        if (read_shard(&s[i], err, errlen))
            return -1;
    for (int i = 1; i < n; i++)
        if (differs(&s[0], &s[i], err, errlen))
            return -1;
    if (check_indices(s, n, err, errlen))
        return -1;
    return align(s, n, t, err, errlen);
}

/* ---- rows ---- */

/* The shard's rows as the report reads them (its own messages name the
 * shard's file and line). */
static int rows_read(const shard_in *s, char *err, int errlen) {
    run_rows rows;
    run_files files;
    memset(&rows, 0, sizeof rows);
    memset(&files, 0, sizeof files);
    char why[4600];
    int rc = load_run(s->dir, 0, &rows, &files, why, sizeof why);
    if (rc)
        snprintf(err, errlen, "merge: %s", why);
    run_files_free(&files);
    for (int c = 0; c < rows.n_classes; c++) /* load_run interned them */
        free((char *)rows.classes[c]);
    rows_free(&rows);
    return rc;
}

int merge_check_rows(const shard_in *s, int n, char *err, int errlen) {
    for (int i = 0; i < n; i++)
        if (rows_read(&s[i], err, errlen))
            return -1;
    return 0;
}
