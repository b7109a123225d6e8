/* sweep_shards: the files through which a sharded sweep's processes agree
 * (see sweep_shards.h). Each holds one number, {"value": N}, written whole
 * under a temporary name and renamed into place (write_json_atomic), so a
 * reader sees all of it or none; readers poll every 20 ms. */
#include "sweep/sweep_shards.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/stop.h"
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

/* Polls NAME until its number passes `test` (> since), for up to wait_s. */
static long long wait_for(const char *out, const char *name, long long since, double wait_s) {
    int64_t end = wall_us() + (int64_t)(wait_s * 1e6);
    for (;;) {
        long long v = get(out, name);
        if (v > since)
            return v;
        if (wall_us() > end || stop_signal())
            return 0;
        nap();
    }
}

int shards_announce_ready(const char *out, int64_t started_unix_us) {
    return put(out, "ready", (long long)started_unix_us);
}

int shards_wait_ready(const char *out, int64_t since_unix_us, char *err, int errlen) {
    /* shard 0 may have started a little before this one: 10 s of slack */
    if (wait_for(out, "ready", (long long)since_unix_us - 10000000LL, SHARDS_WAIT_S))
        return 0;
    snprintf(err, errlen,
             "shard 0 did not announce %s/shards/ready within %d s (is it running, "
             "with the same --out on a shared file system?)",
             out, SHARDS_WAIT_S);
    return -1;
}

static void step_name(char *buf, size_t n, const char *what, const char *run, int k, int index) {
    if (index < 0)
        snprintf(buf, n, "%s-%s-rep-%d", what, run, k);
    else
        snprintf(buf, n, "%s-%s-rep-%d-shard-%d", what, run, k, index);
}

int64_t shards_publish_start(const char *out, const shard_spec *s, const char *prev_run, int prev_k,
                             const char *run, int k, double lead_s, char *err, int errlen) {
    if (prev_run && shards_wait_done(out, s, prev_run, prev_k, SHARDS_WAIT_S, err, errlen))
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

int64_t shards_wait_start(const char *out, const char *run, int k, char *err, int errlen) {
    char name[600];
    step_name(name, sizeof name, "start", run, k, -1);
    long long at = wait_for(out, name, 0, SHARDS_WAIT_S);
    if (!at)
        snprintf(err, errlen, "no start for %s rep-%d from shard 0 within %d s", run, k,
                 SHARDS_WAIT_S);
    return at;
}

void shards_part_dir(char *buf, size_t n, const char *out, int index, const char *run, int k) {
    snprintf(buf, n, "%s/shards/shard-%d/%s/rep-%d", out, index, run, k);
}

int shards_mark_done(const char *out, int index, const char *run, int k) {
    char name[600];
    step_name(name, sizeof name, "done", run, k, index);
    return put(out, name, 1);
}

int shards_wait_done(const char *out, const shard_spec *s, const char *run, int k, double wait_s,
                     char *err, int errlen) {
    for (int i = 0; i < s->count; i++) {
        char name[600];
        step_name(name, sizeof name, "done", run, k, i);
        if (!wait_for(out, name, 0, wait_s)) {
            snprintf(err, errlen, "shard %d of %d did not finish %s rep-%d within %.0f s", i,
                     s->count, run, k, wait_s);
            return -1;
        }
    }
    return 0;
}
