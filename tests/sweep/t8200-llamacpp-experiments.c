/* The llama.cpp experiments (configs/experiments/, results/llamacpp-cpu/
 * and results/llamacpp-cpu-2026/):
 * every config also runs against the simulator that stands in for its
 * server (sweep --target sim, sped up), and its output passes report
 * --check; every committed experiment's report still matches its rows;
 * and in the committed load campaign each request's output tokens and TPOT
 * agree with what llama.cpp's own timings say. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <dirent.h>
#include <jansson.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const experiments[] = {"load",   "context", "precision", "quantization",
                                          "prefix", "slots",   "failure",   NULL};

/* Runs configs/experiments/NAME.yaml on the simulator, `speedup` times
 * faster; returns the output directory and the sweep's exit code. */
static char *rehearse(const char *name, int speedup, int *code) {
    char *dir = temp_dir(), cmd[2048], *out;
    snprintf(cmd, sizeof cmd,
             "sweep configs/experiments/%s.yaml --target sim --speedup %d --quiet --out %s/o", name,
             speedup, dir);
    *code = servelab_cmd(cmd, &out);
    char p[1200], *cj;
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    CHECK_MSG((cj = read_file(p, NULL)) != NULL, "%s: no campaign.json: %s", name, out);
    CHECK_MSG(strstr(cj, "\"stands_in_for\": \"") && strstr(cj, "--port {port}"),
              "%s: campaign.json does not say what the simulator stood in for", name);
    CHECK_MSG(strstr(cj, "--speedup") != NULL, "%s: the speedup is not recorded", name);
    snprintf(cmd, sizeof cmd, "report %s/o --check", dir);
    int rc = servelab_cmd(cmd, &out);
    CHECK_MSG(rc == 0, "%s: report --check on the rehearsal: %s", name, out);
    free(cj);
    static char keep[1100];
    snprintf(keep, sizeof keep, "%s/o", dir);
    return keep;
}

/* How many of a campaign's runs ended with status ok. */
static int runs_ok(const char *out) {
    char p[1200];
    snprintf(p, sizeof p, "%s/campaign.json", out);
    char *cj = read_file(p, NULL);
    int n = count_of(cj, "\"status\": \"ok\"");
    free(cj);
    return n;
}

#define REHEARSAL(name, runs)                                                                      \
    TEST_SLOW(experiment_##name##_config_runs_on_the_simulator) {                                  \
        int code;                                                                                  \
        const char *o = rehearse(#name, 50, &code);                                                \
        CHECK_MSG(code == 0, #name ": sweep exit %d", code);                                       \
        CHECK_INT(runs_ok(o), runs);                                                               \
    }
REHEARSAL(load, 8)
REHEARSAL(context, 5)
REHEARSAL(precision, 3)
REHEARSAL(quantization, 4)
REHEARSAL(prefix, 2)
REHEARSAL(slots, 4)

/* The failure search's smallest contexts fail on the simulator too: the
 * campaign exits 1, its largest context passes and its smallest does not. */
TEST_SLOW(experiment_failure_config_runs_on_the_simulator) {
    int code;
    const char *o = rehearse("failure", 50, &code);
    CHECK_MSG(code == 1, "failure: sweep exit %d (some run should fail)", code);
    char p[1200];
    snprintf(p, sizeof p, "%s/ctx-4096/rep-1/summary.json", o);
    char *s = read_file(p, NULL);
    CHECK_MSG(s && strstr(s, "\"failed\": 0"), "ctx-4096 lost requests on the simulator");
    free(s);
    snprintf(p, sizeof p, "%s/ctx-0512/rep-1/requests.csv", o);
    csv_table *t = csv_read(p);
    CHECK(t != NULL);
    int failed = 0;
    for (int i = 0; i < t->n_rows; i++)
        failed += strcmp(csv_get(t, i, "error"), "") != 0;
    CHECK_MSG(failed > 0, "ctx-0512: every request fitted a 128-token context");
    csv_free(t);
}

/* The two builds' results: llama.cpp build 4748 (2025, the made-up
 * vocabulary) and a 2026 build (Llama 3's tokenizer; and, for a
 * like-for-like pair, some experiments again with 2025's model files). */
static const char *const roots[] = {"results/llamacpp-cpu", "results/llamacpp-cpu-2026", NULL};
static const char *const like_for_like[] = {"made-up-vocab/context", "made-up-vocab/slots",
                                            "made-up-vocab/failure", NULL};

static void check_regenerates(const char *root, const char *name) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "report %s/%s --check", root, name);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s/%s: %s", root, name, out);
    free(out);
}

/* Every committed experiment of both builds is there, and its report is
 * the one its rows make (the test fails if a table drifts from the rows). */
TEST(llamacpp_results_regenerate_from_their_rows) {
    for (int r = 0; roots[r]; r++) {
        for (int i = 0; experiments[i]; i++)
            check_regenerates(roots[r], experiments[i]);
        check_regenerates(roots[r], "load-capacity");
    }
    for (int i = 0; like_for_like[i]; i++)
        check_regenerates(roots[1], like_for_like[i]);
}

/* Per request of a committed load campaign: servelab's output tokens are
 * llama.cpp's predicted_n, and its TPOT (last - first token) / (tokens - 1)
 * is within 1% of predicted_ms / (predicted_n - 1). */
static void check_load_rows_agree(const char *root) {
    glob_t g;
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/load/*/rep-*/requests.csv", root);
    CHECK_INT(glob(pattern, 0, NULL, &g), 0);
    CHECK_MSG(g.gl_pathc >= 8, "%zu repetitions", g.gl_pathc);
    int rows = 0, compared = 0;
    double worst = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        csv_table *t = csv_read(g.gl_pathv[f]);
        CHECK(t != NULL);
        for (int i = 0; i < t->n_rows; i++, rows++) {
            CHECK_MSG(!strcmp(csv_get(t, i, "error"), ""), "%s row %d failed", g.gl_pathv[f], i);
            double out = csv_num(t, i, "output_tokens"), n = csv_num(t, i, "server_decode_n");
            CHECK_MSG(out == n, "%s row %d: %g output tokens, the server says %g", g.gl_pathv[f], i,
                      out, n);
            if (n < 3)
                continue;
            double ours = csv_num(t, i, "tpot_ms");
            double theirs = csv_num(t, i, "server_decode_ms") / (n - 1);
            double rel = ours / theirs - 1;
            CHECK_MSG(fabs(rel) <= 0.01, "%s row %d: TPOT %.3f ms, the server's %.3f ms (%+.2f%%)",
                      g.gl_pathv[f], i, ours, theirs, 100 * rel);
            if (fabs(rel) > fabs(worst))
                worst = rel;
            compared++;
        }
        csv_free(t);
    }
    globfree(&g);
    CHECK_MSG(compared == rows && rows >= 80, "%d of %d rows compared", compared, rows);
    printf("  %s: %d requests: output tokens equal, TPOT within %+.2f%% of the server's\n", root,
           rows, 100 * worst);
}

TEST(llamacpp_load_rows_agree_with_the_server) {
    for (int r = 0; roots[r]; r++)
        check_load_rows_agree(roots[r]);
}

/* The README's results tables are what scripts/results_tables.py makes of
 * the committed results (it picks figures from the reports that the test
 * above holds to their rows). */
TEST(readme_results_tables_are_made_from_the_results) {
    int code;
    char *out =
        run_capture("python3 scripts/results_tables.py --check README.md docs/vllm.md 2>&1", &code);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
}

/* The committed default search against llama.cpp of 2026
 * (scripts/experiments.sh capacity-default, 2 slots): found and confirmed
 * within --max-time's default 15 minutes; 3,000 requests at its answer met
 * the goal on a fresh server, and 3,000 at 10% above it did not. */
TEST(llamacpp_default_capacity_holds_for_3000_requests) {
    const char *files[] = {"capacity-default/capacity.json", "capacity-at-answer/summary.json",
                           "capacity-plus-10pct/summary.json"};
    json_t *j[3];
    for (int i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "results/llamacpp-cpu-2026/%s", files[i]);
        json_error_t je;
        j[i] = json_load_file(path, 0, &je);
        CHECK_MSG(j[i] != NULL, "%s: %s", path, je.text);
    }
    if (!j[0] || !j[1] || !j[2])
        return;
    double answer = json_number_value(json_object_get(j[0], "max_rate_rps"));
    double goal = json_number_value(json_object_get(j[0], "goal"));
    CHECK_STR(json_string_value(json_object_get(j[0], "status")), "found");
    CHECK(json_is_true(json_object_get(j[0], "confirmed")));
    CHECK(json_number_value(json_object_get(j[0], "wall_s")) <= 15 * 60);
    double at = json_number_value(json_object_get(j[1], "offered_rps"));
    double above = json_number_value(json_object_get(j[2], "offered_rps"));
    CHECK(at == answer && fabs(above - 1.1 * answer) < 0.01);
    CHECK(json_number_value(json_object_get(j[1], "requests")) >= 3000);
    CHECK(json_number_value(json_object_get(j[2], "requests")) >= 3000);
    double met_at = json_number_value(json_object_get(j[1], "goodput_fraction"));
    double met_above = json_number_value(json_object_get(j[2], "goodput_fraction"));
    CHECK_MSG(met_at >= goal, "at %g req/s: %.4f met", answer, met_at);
    CHECK_MSG(met_above < goal, "at %g req/s: %.4f met", above, met_above);
    for (int i = 0; i < 3; i++)
        json_decref(j[i]);
}
