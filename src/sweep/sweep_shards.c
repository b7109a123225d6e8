/* sweep_shards: the files through which a sharded sweep's processes agree
 * (see sweep_shards.h). Each holds one number, {"value": N}, written whole
 * under a temporary name and renamed into place (write_json_atomic), so a
 * reader sees all of it or none; readers poll every 20 ms. Shard 0's wait
 * for the others says (as progress) which it still waits for, and how long it
 * will, so a shard that was never started is not ten minutes of silence. */
#include "sweep/sweep_shards.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/stop.h"
#include "common/util.h"
#include "run/start_at.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* `value` into OUT/shards/NAME as {"value": N}, atomically (common/files.h). */
static int put(const char *out, const char *name, long long value) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/shards", out);
    if (mkdir_p(dir))
        return -1;
    json_t *o = json_pack("{s:I}", "value", (json_int_t)value);
    int rc = write_json_atomic(dir, name, o);
    json_decref(o);
    return rc;
}

/* The number in OUT/shards/NAME; 0 when it is not there (yet). */
static long long get(const char *out, const char *name) {
    char p[4400];
    snprintf(p, sizeof p, "%s/shards/%s", out, name);
    json_t *o = json_load_file(p, 0, NULL);
    long long v = (long long)json_integer_value(json_object_get(o, "value"));
    json_decref(o);
    return v;
}

static void nap(void) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Polls NAME until its number passes `test` (> since), for up to wait_s;
 * gives up early when `abort` (a name, or NULL) appears. */
static long long wait_for(const char *out, const char *name, long long since, double wait_s,
                          const char *abort) {
    int64_t end = mono_us() + (int64_t)(wait_s * 1e6);
    for (;;) {
        long long v = get(out, name);
        if (v > since)
            return v;
        if (mono_us() > end || stop_signal() || (abort && get(out, abort)))
            return 0;
        nap();
    }
}

int shards_announce_ready(const char *out, int64_t started_unix_us) {
    return put(out, "ready", (long long)started_unix_us);
}

int shards_wait_ready(const char *out, int64_t since_unix_us, double wait_s, char *err,
                      int errlen) {
    /* shard 0 may have started a little before this one: 10 s of slack */
    if (wait_for(out, "ready", (long long)since_unix_us - 10000000LL, wait_s, NULL))
        return 0;
    snprintf(err, errlen,
             "shard 0 did not announce %s/shards/ready within %.0f s (is it running, "
             "with the same --out on a shared file system?)",
             out, wait_s);
    return -1;
}

static void step_name(char *buf, size_t n, const char *what, const char *run, int k, int index) {
    if (index < 0)
        snprintf(buf, n, "%s-%s-rep-%d", what, run, k);
    else
        snprintf(buf, n, "%s-%s-rep-%d-shard-%d", what, run, k, index);
}

int64_t shards_publish_start(const char *out, const shard_spec *s, const char *prev_run, int prev_k,
                             const char *run, int k, double lead_s, double wait_s,
                             const notice_sink *progress, char *err, int errlen) {
    if (prev_run && shards_wait_done(out, s, prev_run, prev_k, wait_s, progress, err, errlen))
        return 0;
    int64_t at = wall_us() + (int64_t)(lead_s * 1e6);
    char name[600];
    step_name(name, sizeof name, "start", run, k, -1);
    if (put(out, name, (long long)at)) {
        snprintf(err, errlen, "cannot write %s/shards/%s: %s", out, name, strerror(errno));
        return 0;
    }
    return at;
}

int64_t shards_wait_start(const char *out, const char *run, int k, double wait_s, char *err,
                          int errlen) {
    char name[600];
    step_name(name, sizeof name, "start", run, k, -1);
    long long at = wait_for(out, name, 0, wait_s, "stopped");
    if (!at && get(out, "stopped"))
        snprintf(err, errlen, "shard 0 stopped the campaign before %s rep-%d (see its output)", run,
                 k);
    else if (!at)
        snprintf(err, errlen, "no start for %s rep-%d from shard 0 within %.0f s", run, k, wait_s);
    return at;
}

int shards_announce_stopped(const char *out) {
    return put(out, "stopped", 1);
}

void shards_part_dir(char *buf, size_t n, const char *out, int index, const char *run, int k) {
    snprintf(buf, n, "%s/shards/shard-%d/%s/rep-%d", out, index, run, k);
}

int shards_mark_done(const char *out, int index, const char *run, int k) {
    char name[600];
    step_name(name, sizeof name, "done", run, k, index);
    return put(out, name, 1);
}

/* "1-3", "1, 3", "2-5, 7, ..." : the shards not done (done[i] 0), cut
 * short to fit n bytes. */
static void missing_text(const char *done, int count, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < count; i++) {
        if (done[i])
            continue;
        int j = i;
        while (j + 1 < count && !done[j + 1])
            j++;
        char part[40];
        if (j > i)
            snprintf(part, sizeof part, "%s%d-%d", used ? ", " : "", i, j);
        else
            snprintf(part, sizeof part, "%s%d", used ? ", " : "", i);
        if (used + strlen(part) + 6 > n) {
            snprintf(buf + used, n - used, ", ...");
            return;
        }
        used += (size_t)snprintf(buf + used, n - used, "%s", part);
        i = j;
    }
}

/* Marks done[i] for every shard whose part of run/k is done; returns how
 * many are not. */
static int poll_done(const char *out, const shard_spec *s, const char *run, int k, char *done) {
    int left = 0;
    for (int i = 0; i < s->count; i++) {
        if (!done[i]) {
            char name[600];
            step_name(name, sizeof name, "done", run, k, i);
            done[i] = get(out, name) != 0;
        }
        left += !done[i];
    }
    return left;
}

int shards_wait_done(const char *out, const shard_spec *s, const char *run, int k, double wait_s,
                     const notice_sink *progress, char *err, int errlen) {
    char *done = xcalloc((size_t)s->count, 1), which[200];
    int64_t start = mono_us(), end = start + (int64_t)(wait_s * 1e6);
    int64_t next_note = start + SHARDS_NOTE_FIRST_S * 1000000LL;
    int left;
    while ((left = poll_done(out, s, run, k, done)) && mono_us() <= end && !stop_signal()) {
        int64_t now = mono_us();
        if (progress && now >= next_note) {
            missing_text(done, s->count, which, sizeof which);
            notice(progress, NOTICE_PROGRESS,
                   "sweep: waiting for shard%s %s of %d to finish %s rep-%d (%.0f s left)",
                   left > 1 ? "s" : "", which, s->count, run, k, (double)(end - now) / 1e6);
            next_note = now + SHARDS_NOTE_EVERY_S * 1000000LL;
        }
        nap();
    }
    if (left) {
        missing_text(done, s->count, which, sizeof which);
        if (stop_signal())
            snprintf(err, errlen, "stopped while waiting for %s %s of %d to finish %s rep-%d",
                     left > 1 ? "shards" : "shard", which, s->count, run, k);
        else
            snprintf(err, errlen, "%s %s of %d did not finish %s rep-%d within %.0f s",
                     left > 1 ? "shards" : "shard", which, s->count, run, k, wait_s);
    }
    free(done);
    return left ? -1 : 0;
}
