/* servelab compare, end to end: two runs of one seed against one simulator
 * profile show no significant change and exit 0, also under --fail-on;
 * against a simulator 15% slower the latencies are named worse and
 * --fail-on exits 1 naming the gate; campaigns pair by name, pool their
 * repetitions as the report does (the values are the report's) and list
 * the runs of one side only; bad input is one line and exit 2. */
#include "analysis/compare.h"
#include "common/rng.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SLOWER 1.15 /* the slower simulator's step costs, times the base's */
/* The base profile: tiny's roomy engine with steps long enough that the
 * machine's scheduling noise is small beside them, and a cost per
 * sequence so that TPOT and ITL spread with the batch. */
#define DECODE_BASE_MS 5.0
#define DECODE_PER_SEQ_MS 0.5
#define PREFILL_PER_TOKEN_MS 0.02
#define LOAD                                                                                       \
    "--requests 100 --rate 20 --prompts random:128:32 --seed 1 --slo ttft=1s,tpot=100ms "          \
    "--realtime"
/* A pair is run again when it misses, this many times at most: a stall of
 * this shared machine that hits one run of a pair more than the other is a
 * real difference, which compare rightly reports. A compare that always
 * misses fails every time. */
#define ATTEMPTS 3

/* A simulator whose step costs are the base's times `slower`. */
static sim_proc start_sim(double slower) {
    char args[512];
    snprintf(args, sizeof args,
             "--profile tiny --seed 1 --realtime --decode-base-ms %g --decode-per-seq-ms %g "
             "--prefill-per-token-ms %g",
             DECODE_BASE_MS * slower, DECODE_PER_SEQ_MS * slower, PREFILL_PER_TOKEN_MS * slower);
    return sim_start(args);
}

/* Two runs of LOAD at the same time, each against a fresh simulator of its
 * own (step costs times slower_a and slower_b), into dir_a and dir_b: run
 * together, the two meet whatever else loads this machine alike, which
 * one after the other they would not (a busy minute slows a simulator's
 * steps by more than the 15% these tests look for). */
static void run_pair(double slower_a, const char *dir_a, double slower_b, const char *dir_b) {
    sim_proc sa = start_sim(slower_a), sb = start_sim(slower_b);
    char cmd[2048], log[1300];
    snprintf(log, sizeof log, "%s.log", dir_a);
    snprintf(cmd, sizeof cmd,
             "exec %s run --url http://127.0.0.1:%d " LOAD " --quiet --force --out %s >%s 2>&1",
             servelab_bin(), sa.port, dir_a, log);
    pid_t first = spawn_sh(cmd, PROC_INHERIT, PROC_INHERIT);
    snprintf(cmd, sizeof cmd, "run --url http://127.0.0.1:%d " LOAD " --quiet --force --out %s",
             sb.port, dir_b);
    servelab_ok(cmd);
    int st;
    CHECK(waitpid(first, &st, 0) == first);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run: %s", read_file(log, NULL));
    sim_stop(&sa);
    sim_stop(&sb);
}

/* The table line of `fig` in compare's terminal output, into buf ("" when
 * there is none). */
static const char *figure_line(const char *out, const char *fig, char *buf, size_t n) {
    char want[64];
    snprintf(want, sizeof want, "\n  %s ", fig);
    const char *p = strstr(out, want);
    buf[0] = 0;
    if (p) {
        const char *end = strchr(p + 1, '\n');
        snprintf(buf, n, "%.*s", (int)(end ? end - p - 1 : (long)strlen(p + 1)), p + 1);
    }
    return buf;
}

/* The figure's value in a summary.json object (a run's, or a report
 * run's "pooled"). */
static double summary_value(json_t *s, int fig) {
    if (fig > FIG_E2E_P99)
        return json_number_value(json_object_get(s, figure_name(fig)));
    static const char *const dists[] = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"};
    static const char *const pcts[] = {"p50", "p95", "p99"};
    return json_number_value(json_object_get(json_object_get(s, dists[fig / 3]), pcts[fig % 3]));
}

/* compare --json's figures of its first run agree with these summaries. */
static void values_are_the_summaries(const char *json_text, json_t *base, json_t *new_) {
    json_error_t e;
    json_t *doc = json_loads(json_text, 0, &e);
    CHECK_MSG(doc, "compare --json: %s", e.text);
    json_t *figs = json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "figures");
    for (int f = 0; f < FIG_COUNT; f++) {
        json_t *c = json_object_get(figs, figure_name(f));
        CHECK_MSG(c, "no %s in compare --json", figure_name(f));
        double b = json_number_value(json_object_get(c, "base"));
        double n = json_number_value(json_object_get(c, "new"));
        double want_b = summary_value(base, f), want_n = summary_value(new_, f);
        CHECK_MSG(fabs(b - want_b) <= 1e-9 * fabs(want_b), "%s base %.12g, summary %.12g",
                  figure_name(f), b, want_b);
        CHECK_MSG(fabs(n - want_n) <= 1e-9 * fabs(want_n), "%s new %.12g, summary %.12g",
                  figure_name(f), n, want_n);
    }
    json_decref(doc);
}

static json_t *load_json(const char *dir, const char *name) {
    char path[1600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = json_load_file(path, 0, NULL);
    CHECK_MSG(j, "%s does not read", path);
    return j;
}

/* Every figure without a significant change, and the gates passed. */
static int nothing_changed(const char *out) {
    return count_of(out, "no significant change") == FIG_COUNT && !strstr(out, "worse") &&
           !strstr(out, "better") && strstr(out, "no regression beyond --fail-on");
}

TEST_ALONE(compare_same_seed_same_sim_no_significant_change) {
    char *dir = temp_dir(), base[1200], same[1200], cmd[3000], *out = NULL;
    snprintf(base, sizeof base, "%s/base", dir);
    snprintf(same, sizeof same, "%s/same", dir);
    snprintf(cmd, sizeof cmd, "compare %s %s --fail-on 'ttft_p95>+10%%,goodput_fraction<-1%%'",
             base, same);
    int code = -1, ok = 0;
    for (int attempt = 1; attempt <= ATTEMPTS && !ok; attempt++) {
        run_pair(1, base, 1, same);
        free(out);
        code = servelab_cmd(cmd, &out);
        ok = code == 0 && nothing_changed(out);
        printf("attempt %d: exit %d\n%s\n", attempt, code, out);
    }
    CHECK_MSG(ok, "exit %d:\n%s", code, out);
    free(out);

    snprintf(cmd, sizeof cmd, "compare %s %s --markdown", base, same);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    CHECK_MSG(strstr(out, "\n| figure | base | new | change | 95% CI | verdict |\n| --- |"), "%s",
              out);
    CHECK_INT(count_of(out, "| no significant change |"), FIG_COUNT);
    free(out);

    snprintf(cmd, sizeof cmd, "compare %s %s --json", base, same);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    json_t *sb = load_json(base, "summary.json"), *sn = load_json(same, "summary.json");
    values_are_the_summaries(out, sb, sn);
    json_decref(sb);
    json_decref(sn);
    free(out);
    free(dir);
}

/* The slower pair's compare names the regressed latencies and the gate. */
static int regressions_named(const char *out) {
    const char *worse[] = {"tpot_p50", "itl_p50", "e2e_p50"};
    char line[256];
    for (int i = 0; i < 3; i++) {
        figure_line(out, worse[i], line, sizeof line);
        size_t n = strlen(line);
        if (n < 5 || strcmp(line + n - 5, "worse"))
            return 0;
    }
    return strstr(out, "\n  tpot_p50>+5%") && strstr(out, "(tpot_p50 +") &&
           strstr(out, "servelab: compare: regressed beyond --fail-on: tpot_p50>+5%");
}

TEST_ALONE(compare_slower_sim_names_the_regressed_figures_and_exits_1) {
    char *dir = temp_dir(), base[1200], slow[1200], cmd[3000], *out = NULL;
    snprintf(base, sizeof base, "%s/base", dir);
    snprintf(slow, sizeof slow, "%s/slow", dir);
    snprintf(cmd, sizeof cmd, "compare %s %s --fail-on 'tpot_p50>+5%%'", base, slow);
    int code = -1, ok = 0;
    for (int attempt = 1; attempt <= ATTEMPTS && !ok; attempt++) {
        run_pair(1, base, SLOWER, slow);
        free(out);
        code = servelab_cmd(cmd, &out);
        ok = code == 1 && regressions_named(out);
        printf("attempt %d: exit %d\n%s\n", attempt, code, out);
    }
    CHECK_MSG(ok, "exit %d:\n%s", code, out);
    free(out);

    /* without a gate the same changes are reported and the exit is 0 */
    snprintf(cmd, sizeof cmd, "compare %s %s --markdown", base, slow);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    CHECK_MSG(strstr(out, "| `tpot_p50` |") && strstr(out, "| **worse** |"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "compare %s %s --markdown --fail-on 'tpot_p50>+5%%'", base, slow);
    CHECK_INT(servelab_cmd(cmd, &out), 1);
    CHECK_MSG(strstr(out, "#### --fail-on: regressed") && strstr(out, "**tripped**"), "%s", out);
    free(out);
    free(dir);
}

/* mkdir -p */
static void make_dirs(const char *path) {
    char p[1400];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    mkdir(p, 0755);
}

/* A run directory written here: n requests 50 ms apart, spread latencies
 * (the same for the same seed), each streamed a chunk a token; meta.json
 * records the rate and, with_slo, an SLO. */
static void write_run(const char *dir, int n, uint64_t seed, int with_slo) {
    char path[1500];
    make_dirs(dir);
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    FILE *req = fopen(path, "w");
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    FILE *chunks = fopen(path, "w");
    CHECK(req && chunks);
    fputs("request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,"
          "prompt_tokens,output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error\n",
          req);
    fputs("request_id,index,t_ms,tokens\n", chunks);
    rng g;
    rng_seed(&g, seed);
    for (int i = 0; i < n; i++) {
        double sent = 50.0 * i, first = sent + 20 + 20 * rng_uniform(&g);
        double tpot = 5 + 3 * rng_uniform(&g);
        int tokens = 8 + (int)rng_range(&g, 0, 8);
        double last = first + tpot * (tokens - 1);
        fprintf(req, "req-%d,short,%.3f,%.3f,%.3f,%.3f,%.3f,100,%d,,,,length,200,\n", i, sent, sent,
                first, last, last, tokens);
        for (int k = 0; k < tokens; k++)
            fprintf(chunks, "req-%d,%d,%.3f,1\n", i, k, first + tpot * k);
    }
    fclose(req);
    fclose(chunks);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    FILE *meta = fopen(path, "w");
    CHECK(meta);
    fprintf(meta, "{\"config\": {\"rate\": 20%s}}\n",
            with_slo ? ", \"slo\": \"ttft=1s,tpot=100ms\"" : "");
    fclose(meta);
}

/* A campaign of the runs named (two repetitions each) under dir. */
static void write_campaign(const char *dir, const char *const *runs, int n_runs, uint64_t seed) {
    for (int r = 0; r < n_runs; r++)
        for (int k = 0; k < 2; k++) {
            char rep[1400];
            snprintf(rep, sizeof rep, "%s/%s/rep-%d", dir, runs[r], k);
            write_run(rep, 40, seed + (uint64_t)(10 * r + k), 1);
        }
}

TEST(compare_campaigns_pair_runs_by_name_pool_reps_and_list_the_rest) {
    char *dir = temp_dir(), base[1200], new_[1200], rep[1300], cmd[3000], *out;
    snprintf(base, sizeof base, "%s/base", dir);
    snprintf(new_, sizeof new_, "%s/new", dir);
    const char *in_base[] = {"load-a", "load-b"}, *in_new[] = {"load-a", "load-c"};
    write_campaign(base, in_base, 2, 1);
    write_campaign(new_, in_new, 2, 100);
    snprintf(cmd, sizeof cmd, "compare %s %s", base, new_);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    CHECK_MSG(strstr(out, "\nload-a: base 80 requests, new 80 requests\n"), "%s", out);
    CHECK_MSG(strstr(out, "only in base (not compared): load-b\n") &&
                  strstr(out, "only in new (not compared): load-c\n"),
              "%s", out);
    CHECK_INT(count_of(out, "\n  ttft_p50 "), 1);
    free(out);

    snprintf(cmd, sizeof cmd, "compare %s %s --markdown", base, new_);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    CHECK_MSG(strstr(out, "#### load-a\n") &&
                  strstr(out, "\n| figure | base | new | change | 95% CI | verdict |\n"),
              "%s", out);
    free(out);

    /* the values are the report's, repetitions pooled */
    snprintf(cmd, sizeof cmd, "report %s --out %s/rb", base, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "report %s --out %s/rn", new_, dir);
    servelab_ok(cmd);
    snprintf(rep, sizeof rep, "%s/rb", dir);
    json_t *rb = load_json(rep, "summary.json");
    snprintf(rep, sizeof rep, "%s/rn", dir);
    json_t *rn = load_json(rep, "summary.json");
    json_t *pb = json_object_get(json_array_get(json_object_get(rb, "runs"), 0), "pooled");
    json_t *pn = json_object_get(json_array_get(json_object_get(rn, "runs"), 0), "pooled");
    snprintf(cmd, sizeof cmd, "compare %s %s --json", base, new_);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    values_are_the_summaries(out, pb, pn);
    json_t *doc = json_loads(out, 0, NULL);
    CHECK_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "name")),
        "load-a");
    CHECK_STR(json_string_value(json_array_get(json_object_get(doc, "only_in_base"), 0)), "load-b");
    json_decref(doc);
    json_decref(rb);
    json_decref(rn);
    free(out);
    free(dir);
}

/* `compare ARGS` exits 2 with one line on stderr holding `want`. */
static void refused(const char *args, const char *want) {
    char cmd[4000], *out;
    snprintf(cmd, sizeof cmd, "compare %s", args);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2, "%s: exit %d: %s", args, code, out);
    CHECK_MSG(count_of(out, "\n") == 1 && !strncmp(out, "servelab: compare: ", 19),
              "%s: not one line: %s", args, out);
    CHECK_MSG(strstr(out, want), "%s: '%s' lacks '%s'", args, out, want);
    free(out);
}

TEST(compare_bad_input_is_one_line_and_exit_2) {
    char *dir = temp_dir(), a[1200], b[1200], plain[1200], empty[1200], args[4000];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(plain, sizeof plain, "%s/plain", dir);
    snprintf(empty, sizeof empty, "%s/empty", dir);
    write_run(a, 40, 1, 1);
    write_run(b, 40, 2, 1);
    write_run(plain, 40, 3, 0);
    make_dirs(empty);
    snprintf(args, sizeof args, "%s %s --fail-on 'ttft_p95>10'", a, b);
    refused(args, "--fail-on: 'ttft_p95>10': the threshold needs a unit");
    snprintf(args, sizeof args, "%s %s --fail-on 'ttft_p95>+10%%,nope<-1%%'", a, b);
    refused(args, "unknown figure 'nope'");
    snprintf(args, sizeof args, "%s %s --fail-on 'achieved_rps>+1%%'", a, b);
    refused(args, "achieved_rps is worse when it shrinks");
    snprintf(args, sizeof args, "%s %s/missing", a, dir);
    refused(args, "/missing: no such directory");
    snprintf(args, sizeof args, "%s %s", empty, b);
    refused(args, "/empty: not a run or campaign directory");
    snprintf(args, sizeof args, "%s %s --fail-on 'goodput_fraction<-1%%'", plain, plain);
    refused(args, "no compared run measures goodput_fraction");
    snprintf(args, sizeof args, "%s", a);
    refused(args, "give two directories");
    snprintf(args, sizeof args, "%s %s --json --markdown", a, b);
    refused(args, "give one of them");
    /* two campaigns with no run of the same name */
    char cb[1200], cn[1200];
    snprintf(cb, sizeof cb, "%s/cb", dir);
    snprintf(cn, sizeof cn, "%s/cn", dir);
    const char *runs_b[] = {"x", "y"}, *runs_n[] = {"z", "w"};
    write_campaign(cb, runs_b, 2, 1);
    write_campaign(cn, runs_n, 2, 1);
    snprintf(args, sizeof args, "%s %s", cb, cn);
    refused(args, "no run in common");
    free(dir);
}

/* Every figure compare knows is named in its --help, so --fail-on's
 * names can be found there. */
TEST(compare_help_names_every_figure) {
    char *out;
    CHECK_INT(servelab_cmd("compare --help", &out), 0);
    for (int f = 0; f < FIG_COUNT; f++)
        CHECK_MSG(strstr(out, figure_name(f)), "--help lacks %s", figure_name(f));
    free(out);
}

/* A new run in which every request failed measures no latency at all: the
 * base's figures are "worse: none in new", and a gate on one trips. */
TEST(compare_new_run_with_every_request_failed_trips_the_gate) {
    char *dir = temp_dir(), base[1300], fail_dir[1300], path[1400], args[3000], *out;
    snprintf(base, sizeof base, "%s/base", dir);
    write_run(base, 40, 7, 0);
    snprintf(fail_dir, sizeof fail_dir, "%s/failed", dir);
    make_dirs(fail_dir);
    snprintf(path, sizeof path, "%s/requests.csv", fail_dir);
    FILE *req = fopen(path, "w");
    CHECK(req);
    fputs("request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,"
          "prompt_tokens,output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error\n",
          req);
    for (int i = 0; i < 40; i++)
        fprintf(req, "req-%d,short,%.3f,%.3f,,,%.3f,100,,,,,,0,connect\n", i, 50.0 * i, 50.0 * i,
                50.0 * i + 1);
    fclose(req);
    snprintf(args, sizeof args, "compare %s %s --fail-on 'ttft_p95>+10%%'", base, fail_dir);
    CHECK_INT(servelab_cmd(args, &out), 1);
    CHECK_MSG(strstr(out, "worse: none in new") && strstr(out, "tripped"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "compare %s %s", base, base); /* the same run: no change */
    CHECK_INT(servelab_cmd(args, &out), 0);
    CHECK(!strstr(out, "worse"));
    free(out);
    free(dir);
}
