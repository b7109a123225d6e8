/* merge_check: the shards checked before a merge writes anything (see
 * merge_check.h).
 *
 * The settings compared are those meta.json's config records under the
 * option table's `meta` names (run/run_options.c), which are not always the
 * flags' names (--replay-start is replay_start_s): a name that matches no
 * key would compare two absent values and pass everything, so a test reads
 * a real shard's meta.json and checks that each name below is there. */
#include "sweep/merge_check.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The shards of one schedule may differ in no setting that makes the
 * schedule (when each request is due) or its requests (prompts, lengths,
 * bodies). The shards' cache-bust salt does differ (it is drawn per run
 * unless given), and only keeps nonces unique. */
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
                                           NULL};

/* ---- meta.json ---- */

static long long int_of(json_t *o, const char *k) {
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* "2026-12-01T10:50:58.123456Z" in microseconds since the epoch; 0 when
 * it is not such a string. */
static long long utc_us(json_t *v) {
    const char *t = json_string_value(v);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = t ? strptime(t, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest)
        return 0;
    long long us = 0;
    if (*rest == '.') {
        int digits = 0;
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
            if (digits < 6)
                us = us * 10 + (*rest - '0');
        for (; digits < 6; digits++)
            us *= 10;
    }
    return (long long)timegm(&tm) * 1000000 + us;
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

static int read_shard(shard_in *s, char *err, int errlen) {
    char p[4200];
    snprintf(p, sizeof p, "%s/meta.json", s->dir);
    if (!(s->meta = json_load_file(p, 0, NULL))) {
        snprintf(err, errlen, "merge: %s has no readable meta.json: is it a run directory?",
                 s->dir);
        return -1;
    }
    json_t *sh = json_object_get(s->meta, "shard");
    if (!json_is_object(sh)) {
        snprintf(err, errlen,
                 "merge: %s is not a shard (its meta.json has no shard: run it with "
                 "--shard I/N)",
                 s->dir);
        return -1;
    }
    s->index = (int)int_of(sh, "index");
    s->count = (int)int_of(sh, "count");
    s->schedule = int_of(sh, "schedule_requests");
    s->t0_us = utc_us(json_object_get(s->meta, "t0_utc"));
    s->start_at = utc_us(json_object_get(s->meta, "start_at_utc"));
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
    if (what)
        snprintf(err, errlen,
                 "merge: %s is a shard of another schedule than %s: its %s is %s, %s's is %s",
                 b->dir, a->dir, what, vb, a->dir, va);
    return what != NULL;
}

/* Each index once, none missing (the count is every shard's). */
static int check_indices(const shard_in *s, int n, char *err, int errlen) {
    int count = s[0].count;
    char *seen = xcalloc((size_t)count, 1);
    for (int i = 0; i < n; i++) {
        if (s[i].index < 0 || s[i].index >= count || seen[s[i].index]) {
            int j = 0;
            while (j < i && s[j].index != s[i].index)
                j++;
            snprintf(err, errlen, "merge: %s and %s are both shard %d of %d", s[j].dir, s[i].dir,
                     s[i].index, count);
            free(seen);
            return -1;
        }
        seen[s[i].index] = 1;
    }
    for (int k = 0; k < count; k++)
        if (!seen[k]) {
            snprintf(err, errlen, "merge: shard %d of %d is missing (%d given)", k, count, n);
            free(seen);
            return -1;
        }
    free(seen);
    return 0;
}

/* Each shard moved by its t=0's offset from shard 0's on the wall clock,
 * unless all started at one --start-at. */
static int align(shard_in *s, int n, merge_times *t, char *err, int errlen) {
    (void)err;
    (void)errlen;
    t->same_start = s[0].start_at != 0;
    for (int i = 1; i < n; i++)
        t->same_start &= s[i].start_at == s[0].start_at;
    t->earliest = 0;
    for (int i = 0; i < n; i++)
        if (s[i].index == 0)
            t->earliest = i;
    const shard_in *ref = &s[t->earliest];
    for (int i = 0; i < n; i++)
        s[i].shift_ms = t->same_start || !s[i].t0_us || !ref->t0_us
                            ? 0
                            : (double)(s[i].t0_us - ref->t0_us) / 1000.0;
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
