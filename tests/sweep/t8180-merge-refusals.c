/* servelab merge, the round-2 defects: shards of another replay window or
 * block size (D7), shards started apart without --start-at and a later
 * shard first, a truncated shard, a failed merge leaving nothing behind
 * (D8), request ids repeated, of another shard, past the schedule, or a
 * shard short of rows (D9), and a t=0 that does not read, is the epoch or is
 * centuries off, and a shard index not below the count (M3). Round 3's: a
 * shard whose chunks.csv is missing, empty or /dev/zero (D2), shards that
 * asked for other answers (D1), and what a merge killed mid-way left in
 * --out (M2). Each test
 * makes real shards against the simulator, then copies and alters them the
 * way a truncated copy or a hand edit would. */
#include "common/files.h"
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

static char *meta_string(const char *dir, const char *name, const char *key) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/meta.json", dir, name);
    json_t *m = json_load_file(p, 0, NULL);
    CHECK_MSG(m != NULL, "%s", p);
    const char *s = json_string_value(json_object_get(m, key));
    char *out = strdup(s ? s : "");
    json_decref(m);
    return out;
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
    char p[4600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* DIR/NAME/requests.csv with its last row replaced by LINE (NULL: dropped). */
static void replace_last_row(const char *dir, const char *name, const char *line) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/requests.csv", dir, name);
    char *text = read_file(p, NULL);
    CHECK(text && strlen(text) > 2);
    char *end = text + strlen(text) - 1; /* the last LF */
    while (end > text && end[-1] != '\n')
        end--;
    *end = 0;
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fprintf(f, "%s%s%s", text, line ? line : "", line ? "\n" : "");
    fclose(f);
    free(text);
}

/* Row K (from 1, after the header) of DIR/NAME/requests.csv, without its LF. */
static char *row_of(const char *dir, const char *name, int k) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/requests.csv", dir, name);
    char *text = read_file(p, NULL), *s = text;
    CHECK(text != NULL);
    for (int i = 0; i < k && s; i++)
        s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
    CHECK_MSG(s && *s, "%s has no row %d", p, k);
    char *row = strndup(s, strcspn(s, "\n"));
    free(text);
    return row;
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
    snprintf(replay, sizeof replay,
             "--replay %s --time-scale 10 --requests 4 --cache-bust-salt 5a17", p);
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

TEST(defects_merge_d8_t0_at_the_earliest_shard_when_a_later_shard_started_first) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096], p[1200];
    shard(&sim, dir, "v1", 1, SHORT "--rate 40 --requests 10"); /* the later shard starts first */
    sleep_ms(300);
    shard(&sim, dir, "v0", 0, SHORT "--rate 40 --requests 10");
    snprintf(args, sizeof args, "merge %s/v0 %s/v1 --out %s/m", dir, dir, dir);
    servelab_ok(args);
    snprintf(args, sizeof args, "report %s/m", dir);
    servelab_ok(args);
    snprintf(p, sizeof p, "%s/m/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK(t && t->n_rows == 10);
    for (int i = 0; i < t->n_rows; i++) {
        CHECK_MSG(csv_num(t, i, "scheduled_ms") >= 0, "row %d", i);
        char want[32];
        snprintf(want, sizeof want, "req-%d", i);
        CHECK_STR(csv_get(t, i, "request_id"), want);
    }
    /* shard 0 started some 300 ms later: its rows are moved by that, shard 1's not at all */
    double later = csv_num(t, 0, "scheduled_ms");
    CHECK_MSG(later >= 250 && later < 5000, "req-0 scheduled at %.3f ms", later);
    csv_free(t);
    char *t0 = meta_string(dir, "m", "t0_utc"), *t0_v1 = meta_string(dir, "v1", "t0_utc");
    CHECK_STR(t0, t0_v1);
    sim_stop(&sim);
}

TEST(defects_merge_d8_a_failed_merge_leaves_nothing_half_written) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096], p[4400];
    shard(&sim, dir, "v0", 0, SHORT "--rate 40 --requests 10");
    shard(&sim, dir, "v1", 1, SHORT "--rate 40 --requests 10");
    snprintf(args, sizeof args, "merge %s/v0 %s/v1 --out %s/m", dir, dir, dir);
    servelab_ok(args);
    snprintf(args, sizeof args, "report %s/m", dir);
    servelab_ok(args);
    snprintf(p, sizeof p, "%s/m/requests.csv", dir);
    char *before = read_file(p, NULL);

    /* a shard cut mid-row: refused naming its own file and line; nothing written */
    copy(dir, "v1", "tr1");
    snprintf(p, sizeof p, "%s/tr1/requests.csv", dir);
    size_t len;
    free(read_file(p, &len));
    CHECK(truncate(p, (off_t)len - 20) == 0);
    snprintf(args, sizeof args, "%s/v0 %s/tr1 --out %s/mt", dir, dir, dir);
    merge_refused(args, "tr1/requests.csv:6: ", NULL);
    CHECK_MSG(!exists(dir, "mt"), "a failed merge left its --out");
    /* and over an earlier merge with --force: the earlier one stays whole */
    snprintf(args, sizeof args, "%s/v0 %s/tr1 --out %s/m --force", dir, dir, dir);
    merge_refused(args, "tr1/requests.csv:6: ", NULL);
    snprintf(p, sizeof p, "%s/m/requests.csv", dir);
    char *after = read_file(p, NULL);
    CHECK_MSG(after && !strcmp(before, after), "the earlier merge's rows changed");
    char names[1000];
    snprintf(p, sizeof p, "%s/m", dir);
    CHECK_MSG(files_with_prefix(p, ".merge", names, sizeof names) == 0, "left: %s", names);
    CHECK(exists(dir, "m/summary.json") && exists(dir, "m/meta.json"));
    snprintf(args, sizeof args, "report %s/m --check", dir);
    servelab_ok(args);
    /* --out one of the shards: refused, the shard kept */
    char *first0 = row_of(dir, "v0", 1);
    snprintf(args, sizeof args, "%s/v0 %s/v1 --out %s/v0 --force", dir, dir, dir);
    merge_refused(args, "is one of the shards", NULL);
    char *kept = row_of(dir, "v0", 1);
    CHECK_STR(kept, first0);
    sim_stop(&sim);
}

TEST(defects_merge_d9_each_request_once_and_in_its_own_shard) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096];
    shard(&sim, dir, "s0", 0, SHORT "--rate 200 --requests 10");
    shard(&sim, dir, "s1", 1, SHORT "--rate 200 --requests 10");
    char *first0 = row_of(dir, "s0", 1), *first1 = row_of(dir, "s1", 1), want[200];
    long long id0 = atoll(first0 + 4), id1 = atoll(first1 + 4); /* rows are in no set order */

    copy(dir, "s1", "dup"); /* as many rows as it should have, one of them twice */
    replace_last_row(dir, "dup", first1);
    snprintf(args, sizeof args, "%s/s0 %s/dup --out %s/m", dir, dir, dir);
    snprintf(want, sizeof want, "dup/requests.csv:6: req-%lld again (first on line 2)", id1);
    merge_refused(args, want, NULL);

    copy(dir, "s1", "foreign"); /* a row of shard 0's in shard 1 */
    replace_last_row(dir, "foreign", first0);
    snprintf(args, sizeof args, "%s/s0 %s/foreign --out %s/m", dir, dir, dir);
    snprintf(want, sizeof want,
             "foreign/requests.csv:6: req-%lld is shard 0's (%lld mod 2), not 1's", id0, id0);
    merge_refused(args, want, NULL);

    copy(dir, "s1", "chunk"); /* a chunk of shard 0's request in shard 1's chunks.csv */
    char cp[4400];
    snprintf(cp, sizeof cp, "%s/chunk/chunks.csv", dir);
    FILE *f = fopen(cp, "a");
    CHECK(f != NULL);
    fprintf(f, "req-%lld,0,1.000,1,0\n", id0);
    fclose(f);
    snprintf(args, sizeof args, "%s/s0 %s/chunk --out %s/m", dir, dir, dir);
    snprintf(want, sizeof want, "is shard 0's (%lld mod 2), not 1's", id0);
    merge_refused(args, "chunk/chunks.csv:", want);

    copy(dir, "s1", "past"); /* an id of shard 1's residue beyond the schedule */
    char *row = row_of(dir, "s1", 5), *c = strchr(row, ','), moved[4200];
    snprintf(moved, sizeof moved, "req-11%s", c);
    replace_last_row(dir, "past", moved);
    snprintf(args, sizeof args, "%s/s0 %s/past --out %s/m", dir, dir, dir);
    merge_refused(args, "past/requests.csv:6: req-11 is past the schedule's 10 requests", NULL);

    copy(dir, "s1", "short");
    replace_last_row(dir, "short", NULL);
    snprintf(args, sizeof args, "%s/s0 %s/short --out %s/m", dir, dir, dir);
    merge_refused(args, "short/requests.csv holds 4 rows", "its meta.json's shard.requests is 5");
    CHECK_MSG(!exists(dir, "m"), "a refused merge made its --out");

    snprintf(args, sizeof args, "merge %s/s0 %s/s1 --out %s/m", dir, dir, dir);
    servelab_ok(args);
    free(row);
    sim_stop(&sim);
}

TEST(defects_merge_m3_t0_that_cannot_align_and_an_index_past_the_count) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096];
    shard(&sim, dir, "s0", 0, SHORT "--rate 200 --requests 6");
    shard(&sim, dir, "s1", 1, SHORT "--rate 200 --requests 6");
    const char *bad[][2] = {{"\"garbage\"", "t0_utc 'garbage' does not read"},
                            {"\"1970-01-01T00:00:00Z\"", "is not after the epoch"},
                            {"\"2026-12-01T10:50:58.1234567Zjunk\"", "does not read"},
                            {"null", "no t0_utc"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        copy(dir, "s1", "x1");
        set_meta(dir, "x1", NULL, "t0_utc", bad[k][0]);
        snprintf(args, sizeof args, "%s/s0 %s/x1 --out %s/m", dir, dir, dir);
        merge_refused(args, "x1/meta.json: ", bad[k][1]);
    }
    copy(dir, "s1", "x1"); /* 973 years on */
    set_meta(dir, "x1", NULL, "t0_utc", "\"2999-01-01T00:00:00.000000Z\"");
    snprintf(args, sizeof args, "%s/s0 %s/x1 --out %s/m", dir, dir, dir);
    merge_refused(args, "more than a day apart", "x1");
    CHECK_MSG(!exists(dir, "m"), "a refused merge made its --out");

    copy(dir, "s1", "x1");
    set_meta(dir, "x1", "shard", "index", "7");
    snprintf(args, sizeof args, "%s/s0 %s/x1 --out %s/m", dir, dir, dir);
    merge_refused(args, "x1/meta.json: shard index 7 is not below the shard count 2", NULL);

    /* one --start-at for both: their t0_utc is not needed, and not read */
    copy(dir, "s0", "a0");
    copy(dir, "s1", "a1");
    set_meta(dir, "a0", NULL, "start_at_utc", "\"2026-12-01T10:50:58.000000Z\"");
    set_meta(dir, "a1", NULL, "start_at_utc", "\"2026-12-01T10:50:58.000000Z\"");
    set_meta(dir, "a1", NULL, "t0_utc", "\"garbage\"");
    snprintf(args, sizeof args, "merge %s/a0 %s/a1 --out %s/m", dir, dir, dir);
    servelab_ok(args);
    set_meta(dir, "a1", NULL, "start_at_utc", "\"soon\"");
    snprintf(args, sizeof args, "%s/a0 %s/a1 --out %s/m2", dir, dir, dir);
    merge_refused(args, "a1/meta.json: start_at_utc 'soon' does not read", NULL);
    sim_stop(&sim);
}

/* A sharded replay: its tokens are drawn with the run's salt, so every
 * shard must be given the same one, and merge refuses shards of two. */
TEST(defects_merge_sharded_replays_share_one_salt) {
    char *dir = temp_dir(), p[4300], cmd[9000], *out = NULL;
    sim_proc sim = sim_start("");
    snprintf(p, sizeof p, "%s/t.jsonl", dir);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 6; i++)
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 40, \"output_length\": 2}\n", i * 50);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --replay %s --shard 0/2 --out %s/x --quiet "
             "--no-sampling",
             sim.port, p, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(out && strstr(out, "the same --cache-bust-salt"), "%s", out);
    free(out);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "run --url http://127.0.0.1:%d --replay %s --shard %d/2 --cache-bust-salt %s "
                 "--out %s/s%d --quiet --no-sampling",
                 sim.port, p, i, i ? "beef" : "cafe", dir, i);
        servelab_ok(cmd);
    }
    sim_stop(&sim);
    snprintf(cmd, sizeof cmd, "merge %s/s0 %s/s1 --out %s/m", dir, dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(out && strstr(out, "its cache_bust_salt is"), "%s", out);
    free(out);
    free(dir);
}

TEST(defects_merge_r3_d2_a_shard_without_its_chunks_is_refused) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096], p[4400];
    shard(&sim, dir, "c0", 0, SHORT "--rate 40 --requests 10");
    shard(&sim, dir, "c1", 1, SHORT "--rate 40 --requests 10");
    sim_stop(&sim);
    const char *how[][2] = {
        {"rm '%s/%s/chunks.csv'", "missing or empty"},
        {": > '%s/%s/chunks.csv'", "missing or empty"},
        {"rm '%s/%s/chunks.csv' && ln -s /dev/zero '%s/%s/chunks.csv'", "not a regular file"}};
    for (int i = 0; i < 3; i++) {
        copy(dir, "c1", "x1");
        char cmd[4096];
        snprintf(cmd, sizeof cmd, how[i][0], dir, "x1", dir, "x1");
        int code;
        free(run_capture(cmd, &code));
        CHECK_INT(code, 0);
        snprintf(args, sizeof args, "%s/c0 %s/x1 --out %s/m%d", dir, dir, dir, i);
        merge_refused(args, "x1/chunks.csv", how[i][1]);
        snprintf(p, sizeof p, "m%d", i);
        CHECK_MSG(!exists(dir, p), "a refused merge left %s", p);
    }
    free(dir);
}

TEST(defects_merge_r3_d1_shards_that_asked_for_other_answers_are_refused) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096], p[1200];
    snprintf(p, sizeof p, "%s/t.json", dir);
    FILE *f = fopen(p, "w");
    fputs("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":"
          "{\"type\":\"object\"}}}]",
          f);
    fclose(f);
    snprintf(p, sizeof p, "%s/f.json", dir);
    f = fopen(p, "w");
    fputs("{\"type\":\"json_object\"}", f);
    fclose(f);
    char a0[1400], a1[1400];
    snprintf(a0, sizeof a0, SHORT "--api chat --rate 40 --requests 10 --response-format %s/f.json",
             dir);
    snprintf(a1, sizeof a1, SHORT "--api chat --rate 40 --requests 10 --tools %s/t.json", dir);
    shard(&sim, dir, "a0", 0, a0);
    shard(&sim, dir, "a1", 1, a1);
    sim_stop(&sim);
    snprintf(args, sizeof args, "%s/a0 %s/a1 --out %s/m", dir, dir, dir);
    merge_refused(args, "tools", NULL);
    free(dir);
}

TEST(defects_merge_r3_m2_what_a_dead_merge_left_is_removed) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[4096], p[4400], names[1000];
    shard(&sim, dir, "d0", 0, SHORT "--rate 40 --requests 10");
    shard(&sim, dir, "d1", 1, SHORT "--rate 40 --requests 10");
    sim_stop(&sim);
    /* a merge killed mid-way (a power cut) leaves its temporary directory */
    snprintf(p, sizeof p, "%s/m/.merge-AbC123", dir);
    CHECK_INT(mkdir_p(p), 0);
    snprintf(p, sizeof p, "%s/m/.merge-AbC123/requests.csv", dir);
    FILE *f = fopen(p, "w");
    fputs("partial", f);
    fclose(f);
    snprintf(args, sizeof args, "merge %s/d0 %s/d1 --out %s/m", dir, dir, dir);
    servelab_ok(args);
    snprintf(p, sizeof p, "%s/m", dir);
    CHECK_MSG(files_with_prefix(p, ".merge", names, sizeof names) == 0, "left: %s", names);
    CHECK(exists(dir, "m/summary.json"));
    /* SIGTERM to a merge: it ends 143 with no temporary directory left
     * (or it finished first: then nothing is left either) */
    char cmd[4200];
    snprintf(cmd, sizeof cmd,
             "%s merge %s/d0 %s/d1 --out %s/m2 2>/dev/null & pid=$!; kill -TERM $pid; wait $pid; "
             "echo $?",
             servelab_bin(), dir, dir, dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(strstr(out, "143") || strstr(out, "\n0\n") || !strncmp(out, "0", 1) ||
                  strstr(out, "merged"),
              "%s", out);
    free(out);
    snprintf(p, sizeof p, "%s/m2", dir);
    if (exists(dir, "m2"))
        CHECK_MSG(files_with_prefix(p, ".merge", names, sizeof names) == 0, "left: %s", names);
    free(dir);
}
