/* servelab merge, the round-2 defects: shards of another replay window or
 * block size (D7). Each test makes real shards against the simulator, then
 * copies and alters them the way a hand edit would. */
#include "csv_util.h"
#include "support.h"
#include "sweep/merge_check.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const q = "--quiet --no-sampling";
#define SHORT "--prompts random:16:4 --max-tokens 4 --ignore-eos " /* quick requests */

/* Shard I of 2 of a schedule of seed 3 in DIR/NAME; EXTRA says the rest. */
static void shard(const sim_proc *sim, const char *dir, const char *name, int i,
                  const char *extra) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --seed 3 %s --shard %d/2 --out %s/%s %s", sim->port,
             extra, i, dir, name, q);
    servelab_ok(cmd);
}

static void sh(const char *fmt, const char *a, const char *b) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    int code;
    free(run_capture(cmd, &code));
    CHECK_MSG(code == 0, "%s: exit %d", cmd, code);
}

/* DIR/TO, a copy of DIR/FROM. */
static void copy(const char *dir, const char *from, const char *to) {
    char a[1200], b[1200];
    snprintf(a, sizeof a, "%s/%s", dir, from);
    snprintf(b, sizeof b, "%s/%s", dir, to);
    sh("rm -rf '%2$s' && cp -r '%1$s' '%2$s'", a, b);
}

/* Sets DIR/NAME/meta.json's OBJ.KEY (OBJ NULL: the top level) to the JSON text VALUE. */
static void set_meta(const char *dir, const char *name, const char *obj, const char *key,
                     const char *value) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/meta.json", dir, name);
    json_t *m = json_load_file(p, 0, NULL), *v = json_loads(value, JSON_DECODE_ANY, NULL);
    CHECK_MSG(m && v, "%s or %s does not read", p, value);
    json_object_set_new(obj ? json_object_get(m, obj) : m, key, v);
    CHECK(json_dump_file(m, p, JSON_INDENT(2)) == 0);
    json_decref(m);
}

/* `servelab merge ARGS` exits 2 with one line holding WANT (and WANT2). */
static void merge_refused(const char *args, const char *want, const char *want2) {
    char cmd[4096], *out;
    snprintf(cmd, sizeof cmd, "merge %s", args);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && count_of(out, "\n") == 1 && strstr(out, want) &&
                  (!want2 || strstr(out, want2)),
              "merge %s: exit %d, '%s' (wanted '%s'%s%s)", args, code, out, want,
              want2 ? " and " : "", want2 ? want2 : "");
    free(out);
}

static int exists(const char *dir, const char *name) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

TEST(defects_merge_d7_replay_window_and_block_tokens_are_the_schedules) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), p[1200], args[4096];
    snprintf(p, sizeof p, "%s/t.jsonl", dir);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 10; i++)
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 20, \"output_length\": 2}\n", i * 100);
    fclose(f);
    char replay[1400], other[1500];
    snprintf(replay, sizeof replay, "--replay %s --time-scale 10 --requests 4", p);
    shard(&sim, dir, "s0", 0, replay);
    shard(&sim, dir, "s1", 1, replay);
    snprintf(other, sizeof other, "%s --replay-start 0.5", replay);
    shard(&sim, dir, "start", 1, other);
    snprintf(other, sizeof other, "%s --replay-block-tokens 7", replay);
    shard(&sim, dir, "blocks", 1, other);

    snprintf(args, sizeof args, "%s/s0 %s/start --out %s/m", dir, dir, dir);
    merge_refused(args, "its replay_start_s is 0.5", "s0's is 0.0");
    snprintf(args, sizeof args, "%s/s0 %s/blocks --out %s/m", dir, dir, dir);
    merge_refused(args, "its replay_block_tokens is 7", "s0's is 512");
    CHECK_MSG(!exists(dir, "m"), "a refused merge made its --out");

    /* the names compared are meta.json's own (replay_start_s, not replay_start) */
    snprintf(p, sizeof p, "%s/s0/meta.json", dir);
    json_t *meta = json_load_file(p, 0, NULL), *config = json_object_get(meta, "config");
    CHECK(config != NULL);
    for (int k = 0; merge_schedule_keys[k]; k++)
        CHECK_MSG(json_object_get(config, merge_schedule_keys[k]), "meta.json has no config.%s",
                  merge_schedule_keys[k]);
    json_decref(meta);

    /* every other setting that makes the schedule or the prompts */
    const char *keys[][2] = {{"replay_duration_s", "0.3"}, {"replay_format", "\"jsonl\""},
                             {"time_scale", "2.0"},        {"think_time_s", "1.0"},
                             {"extra_body", "\"{}\""},     {"tokenize", "\"off\""},
                             {"cache_bust", "\"on\""},     {"model", "\"other\""},
                             {"prefix_tokens", "8"},       {"warmup", "2"}};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        copy(dir, "s1", "x1");
        set_meta(dir, "x1", "config", keys[k][0], keys[k][1]);
        char want[200];
        snprintf(want, sizeof want, "its %s is %s", keys[k][0], keys[k][1]);
        snprintf(args, sizeof args, "%s/s0 %s/x1 --out %s/m", dir, dir, dir);
        merge_refused(args, want, "s0's is");
    }
    snprintf(args, sizeof args, "merge %s/s0 %s/s1 --out %s/m", dir, dir, dir);
    servelab_ok(args);
    sim_stop(&sim);
}
