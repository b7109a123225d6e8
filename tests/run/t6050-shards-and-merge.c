/* run --shard I/N, --start-at and servelab merge: the rank read from each
 * scheduler's variables, four shards of one schedule merged into exactly
 * the single-process run's schedule, and merge refusing a missing, a
 * doubled and a foreign shard. */
#include "csv_util.h"
#include "run/shard.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static const char *const *fake_env;
static char *fake_get(const char *name) {
    for (int i = 0; fake_env[i]; i += 2)
        if (!strcmp(fake_env[i], name))
            return (char *)fake_env[i + 1];
    return NULL;
}

static void parse_ok(const char *spec, int hint, const char *const *env, int index, int count,
                     const char *source) {
    shard_spec s;
    char why[256] = "";
    fake_env = env;
    CHECK_MSG(shard_parse(spec, hint, fake_get, &s, why, sizeof why) == 0, "%s: %s", spec, why);
    CHECK_INT(s.index, index);
    CHECK_INT(s.count, count);
    CHECK_STR(s.source, source);
}

static void parse_bad(const char *spec, int hint, const char *const *env, const char *want) {
    shard_spec s;
    char why[256] = "";
    fake_env = env;
    CHECK_MSG(shard_parse(spec, hint, fake_get, &s, why, sizeof why) != 0, "%s accepted", spec);
    CHECK_MSG(strstr(why, want) != NULL, "%s: '%s' lacks '%s'", spec, why, want);
}

TEST(shard_rank_from_each_scheduler) {
    const char *none[] = {NULL};
    const char *slurm[] = {"SLURM_PROCID", "3", "SLURM_NTASKS", "4", NULL};
    const char *k8s[] = {"JOB_COMPLETION_INDEX", "1", NULL};
    const char *mpi[] = {"OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2", NULL};
    const char *pmi[] = {"PMI_RANK", "5", "PMI_SIZE", "8", NULL};
    const char *bad[] = {"SLURM_PROCID", "4", "SLURM_NTASKS", "4", NULL};
    parse_ok("2/4", 0, none, 2, 4, "flag");
    parse_ok("0/1", 0, none, 0, 1, "flag");
    parse_ok("auto", 0, slurm, 3, 4, "SLURM_PROCID");
    parse_ok("auto", 3, k8s, 1, 3, "JOB_COMPLETION_INDEX");
    parse_ok("auto", 0, mpi, 0, 2, "OMPI_COMM_WORLD_RANK");
    parse_ok("auto", 0, pmi, 5, 8, "PMI_RANK");
    parse_bad("4/4", 0, none, "expected I/N with 0 <= I < N");
    parse_bad("1/0", 0, none, "expected I/N");
    parse_bad("x/2", 0, none, "expected I/N");
    parse_bad("auto", 0, none, "no rank in the environment");
    parse_bad("auto", 0, k8s, "give --shard-count N");
    parse_bad("auto", 0, bad, "SLURM_PROCID is '4', expected 0 to 3");

    shard_spec s = {.index = 1, .count = 3};
    int64_t due[7] = {0, 10, 20, 30, 40, 50, 60};
    uint32_t *idx;
    CHECK_INT((int)shard_select(&s, due, 7, &idx), 2);
    CHECK(due[0] == 10 && due[1] == 40 && idx[0] == 1 && idx[1] == 4);
    free(idx);
}

static int by_text(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* request_id,class,scheduled_ms of a run's rows, sorted, one line each. */
static char *schedule_of(const char *dir) {
    char p[1200];
    snprintf(p, sizeof p, "%s/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_MSG(t != NULL, "no %s", p);
    size_t cap = (size_t)t->n_rows * 64 + 1, n = 0;
    char **lines = malloc((size_t)t->n_rows * sizeof *lines), *out = malloc(cap);
    for (int i = 0; i < t->n_rows; i++) {
        lines[i] = malloc(64);
        snprintf(lines[i], 64, "%s,%s,%s", csv_get(t, i, "request_id"), csv_get(t, i, "class"),
                 csv_get(t, i, "scheduled_ms"));
    }
    qsort(lines, (size_t)t->n_rows, sizeof *lines, by_text);
    out[0] = 0;
    for (int i = 0; i < t->n_rows; i++) {
        n += (size_t)snprintf(out + n, cap - n, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    csv_free(t);
    return out;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

TEST_SLOW(shard_four_shards_merge_into_the_single_run) {
    sim_proc sim = sim_start("--profile tiny --max-num-seqs 256");
    char *dir = temp_dir(), cmd[4096], *out;
    const char *common = "--prompts random:16:8 --ignore-eos --rate 100 --requests 120 --seed 5 "
                         "--quiet --no-sampling";
    snprintf(cmd, sizeof cmd, "run --url http://127.0.0.1:%d %s --out %s/single", sim.port, common,
             dir);
    servelab_ok(cmd);
    pid_t pids[4];
    long long at = (long long)time(NULL) + 3; /* one instant for all four */
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd,
                 "exec %s run --url http://127.0.0.1:%d %s --shard %d/4 --start-at %lld --out "
                 "%s/shard-%d >/dev/null",
                 servelab_bin(), sim.port, common, i, at, dir, i);
        pids[i] = spawn_sh(cmd, -1, -1);
    }
    for (int i = 0; i < 4; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shard %d: status %d", i, st);
    }
    snprintf(cmd, sizeof cmd, "merge %s/shard-2 %s/shard-0 %s/shard-3 %s/shard-1 --out %s/merged",
             dir, dir, dir, dir, dir);
    servelab_ok(cmd);
    char p[1200];
    snprintf(p, sizeof p, "%s/single", dir);
    char *single = schedule_of(p);
    snprintf(p, sizeof p, "%s/merged", dir);
    char *merged = schedule_of(p);
    CHECK_INT(count_lines(merged), 120);
    CHECK_MSG(!strcmp(single, merged), "the merged schedule differs from the single run's");
    snprintf(p, sizeof p, "%s/merged/meta.json", dir);
    char *meta = read_file(p, NULL);
    CHECK_MSG(meta && strstr(meta, "\"one --start-at: as recorded\""), "%s", meta);
    snprintf(p, sizeof p, "%s/merged/summary.json", dir);
    char *sum = read_file(p, NULL);
    CHECK_MSG(sum && strstr(sum, "\"completed\": 120"), "%s", sum);
    snprintf(cmd, sizeof cmd, "report %s/merged", dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "report %s/merged --check", dir);
    servelab_ok(cmd);

    /* a missing shard, a doubled one and one of another schedule: one line each, exit 2 */
    snprintf(cmd, sizeof cmd, "merge %s/shard-0 %s/shard-1 %s/shard-3 --out %s/m2", dir, dir, dir,
             dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && strstr(out, "shard 2 of 4 is missing") && count_lines(out) == 1, "%s",
              out);
    snprintf(cmd, sizeof cmd, "merge %s/shard-0 %s/shard-1 %s/shard-1 %s/shard-3 --out %s/m2", dir,
             dir, dir, dir, dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && strstr(out, "are both shard 1 of 4"), "%s", out);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --prompts random:16:8 --ignore-eos --rate 100 "
             "--requests 120 --seed 6 --quiet --no-sampling --shard 2/4 --out %s/foreign",
             sim.port, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "merge %s/shard-0 %s/shard-1 %s/foreign %s/shard-3 --out %s/m2", dir,
             dir, dir, dir, dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && strstr(out, "is a shard of another schedule") &&
                  strstr(out, "its seed is 6, ") && count_lines(out) == 1,
              "%s", out);
    snprintf(cmd, sizeof cmd, "merge %s/single --out %s/m3", dir, dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && strstr(out, "is not a shard"), "%s", out);
    sim_stop(&sim);
}

/* A sharded campaign: four sweep processes with one --out, one of them
 * (shard 0) merging every repetition; the campaign reads as if one sweep
 * had run it. */
TEST_SLOW(shard_sweep_four_processes_make_one_campaign) {
    sim_proc sim = sim_start("--profile tiny --max-num-seqs 256");
    char *dir = temp_dir(), cfg[1200], cmd[4096], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fprintf(f,
            "name: sharded\ntarget: {url: 'http://127.0.0.1:%d'}\nshards: 4\nno_sampling: true\n"
            "workload: {prompts: 'random:16:8', ignore_eos: true}\nrequests: 40\nrate: 100\n"
            "runs: [{name: a}, {name: b, rate: 200, repetitions: 2}]\n",
            sim.port);
    fclose(f);
    pid_t pids[4];
    for (int i = 3; i >= 0; i--) { /* the followers first: they wait for shard 0 */
        snprintf(cmd, sizeof cmd,
                 "exec %s sweep %s --shard %d/4 --out %s/o --quiet >/dev/null 2>&1", servelab_bin(),
                 cfg, i, dir);
        pids[i] = spawn_sh(cmd, -1, -1);
    }
    for (int i = 0; i < 4; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sweep shard %d: status %d", i, st);
    }
    char p[1200];
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    char *cj = read_file(p, NULL);
    int ok = count_of(cj, "\"status\": \"ok\"");
    CHECK_MSG(ok == 3, "%d of 3 repetitions ok: %s", ok, cj);
    free(cj);
    const char *reps[] = {"a/rep-1", "b/rep-1", "b/rep-2"};
    for (int r = 0; r < 3; r++) {
        snprintf(p, sizeof p, "%s/o/%s/requests.csv", dir, reps[r]);
        csv_table *t = csv_read(p);
        CHECK_MSG(t != NULL, "no %s", p);
        CHECK_INT(t->n_rows, 40);
        for (int i = 0; i < t->n_rows; i++) {
            char want[32];
            snprintf(want, sizeof want, "req-%d", i);
            CHECK_STR(csv_get(t, i, "request_id"), want);
        }
        csv_free(t);
    }
    snprintf(cmd, sizeof cmd, "report %s/o --check", dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    sim_stop(&sim);
}
