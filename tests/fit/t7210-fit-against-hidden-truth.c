/* t7210-fit-against-hidden-truth: `servelab fit` against a ground truth it cannot see. The
 * simulator's engine is given a hidden step table that is far from linear
 * in the batch, a prefill that grows with the context and 3% jitter; a
 * campaign of its runs (random arrivals, prompts of five lengths, loads
 * from nearly idle to saturated) goes to fit, and every figure of the
 * profile it writes must come back within 2%: the step table, the fixed
 * cost, the prefill's line and its table by prompt length, the jitter. The fitted profile then
 * predicts a workload it was not fitted on as the hidden one does. Runs of
 * two models are refused with one line, and so is an --out that exists. */
#include "sim/profile_file.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN                                                                                     \
    "--max-num-seqs 6 --kv-blocks 6000 --block-size 16 --max-model-len 4096 "                      \
    "--max-num-batched-tokens 4096 --decode-base-ms 4 "                                            \
    "--step-ms-by-batch 1:7,2:9,3:12.5,4:17,5:23,6:30 --prefill-per-token-ms 0.03 "                \
    "--prefill-ctx-per-1k-ms 0.015 --jitter 0.03"

static const int hidden_batch[] = {1, 2, 3, 4, 5, 6};
static const double hidden_ms[] = {7, 9, 12.5, 17, 23, 30};

static void predict_with(const char *engine, const char *dir, const char *name, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "predict %s --api completions --ignore-eos --chunks --quiet --out %s/%s %s", engine,
             dir, name, args);
    servelab_ok(cmd);
}

static void predict(const char *dir, const char *name, const char *args) {
    predict_with(HIDDEN, dir, name, args);
}

/* The hidden engine's campaign: prompts of five lengths at a rate that
 * leaves most requests alone, and four loads of one shape. */
static void campaign_of(const char *engine, const char *dir) {
    static const int lens[] = {64, 400, 1200, 2400, 3600};
    char name[64], args[256];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "campaign/alone-%d", lens[i]);
        snprintf(args, sizeof args, "--prompts random:%d:16 --requests 200 --rate 1 --seed %d",
                 lens[i], i + 1);
        predict_with(engine, dir, name, args);
    }
    static const char *rates[] = {"0.5", "1.5", "3", "6"};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "campaign/load-%s", rates[i]);
        snprintf(args, sizeof args,
                 "--prompts random:256:48 --requests 300 --rate %s --seed %d --sim-seed %d",
                 rates[i], 10 + i, 20 + i);
        predict_with(engine, dir, name, args);
    }
}

static void campaign(const char *dir) {
    campaign_of(HIDDEN, dir);
}

#define WITHIN(got, want, rel)                                                                     \
    CHECK_MSG(fabs((got) - (want)) <= (rel)*fabs(want), "%s: fitted %g, hidden %g (%.2f%% off)",   \
              #want, (double)(got), (double)(want), 100 * fabs((got) - (want)) / fabs(want))

TEST(fit_recovers_a_hidden_nonlinear_engine_within_2pct) {
    char *dir = temp_dir();
    campaign(dir);
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "fit %s/campaign --out %s/fitted.yaml --name hidden", dir, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    CHECK_MSG(strstr(out, "decode step by batch") && strstr(out, "residuals"), "%s", out);
    char path[1200], err[512];
    snprintf(path, sizeof path, "%s/fitted.yaml", dir);
    profile_doc d;
    CHECK_MSG(profile_file_read(path, &d, err, sizeof err) == 0, "%s", err);
    const engine_params *e = &d.engine;
    CHECK_INT(e->max_num_seqs, 6);
    CHECK_INT(e->kv_blocks, 6000);
    CHECK_INT(e->block_size, 16);
    CHECK_INT(e->max_model_len, 4096);
    CHECK_INT(e->max_batched_tokens, 4096);
    CHECK_INT(e->n_step_points, 6);
    for (int i = 0; i < 6 && i < e->n_step_points; i++) {
        CHECK_INT(e->step_batch[i], hidden_batch[i]);
        WITHIN(e->step_ms[i], hidden_ms[i], 0.02);
    }
    WITHIN(e->decode_base_ms, 4.0, 0.02);
    WITHIN(e->prefill_per_token_ms, 0.03, 0.02);
    WITHIN(e->prefill_ctx_per_1k_ms, 0.015, 0.02);
    /* and the prefill as measured, at the five prompt lengths */
    CHECK(e->n_prefill_points >= 5); /* the loads add their 259-token prompts alone */
    for (int i = 0; i < e->n_prefill_points; i++) {
        double n = e->prefill_tokens[i], hidden = 0.03 * n + 0.015 * n * (n - 1) / 2000;
        WITHIN(e->prefill_ms[i], hidden, 0.02);
    }
    WITHIN(e->jitter, 0.03, 0.02);
    /* its steps with a prompt cost what the table says plus the prefill:
     * no separate cost of a mixed step */
    CHECK_MSG(e->mixed_per_seq_ms == 0, "mixed_step_per_seq_ms %g", e->mixed_per_seq_ms);
    /* every figure says where it came from */
    static const char *const figures[] = {"max_num_seqs",         "kv_blocks",
                                          "max_model_len",        "step_ms_by_batch",
                                          "prefill_per_token_ms", "prefill_ctx_per_1k_ms",
                                          "decode_base_ms",       "jitter"};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        CHECK_MSG(json_is_string(json_object_get(d.provenance, figures[i])), "no provenance: %s",
                  figures[i]);
    profile_doc_free(&d);
}

/* An engine whose step with a prompt in it does not cost decode(b) plus
 * the prefill but decode_base + 2.5 ms a decoding stream + the prefill
 * (cheaper than the table's step, more so as the batch grows): the fit
 * finds that cost within 5% from the gaps alone and keeps the table. */
TEST(fit_recovers_a_hidden_engines_cost_of_a_mixed_step) {
    char *dir = temp_dir();
    campaign_of(HIDDEN " --mixed-step-per-seq-ms 2.5", dir);
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "fit %s/campaign --out %s/fitted.yaml", dir, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    CHECK_MSG(strstr(out, "a step with a prompt and b streams decoding"), "%s", out);
    char path[1200], err[512];
    snprintf(path, sizeof path, "%s/fitted.yaml", dir);
    profile_doc d;
    CHECK_MSG(profile_file_read(path, &d, err, sizeof err) == 0, "%s", err);
    WITHIN(d.engine.mixed_per_seq_ms, 2.5, 0.05);
    for (int i = 0; i < 6 && i < d.engine.n_step_points; i++)
        WITHIN(d.engine.step_ms[i], hidden_ms[i], 0.02);
    CHECK(json_is_string(json_object_get(d.provenance, "mixed_step_per_seq_ms")));
    profile_doc_free(&d);
}

static double p(const char *dir, const char *run, const char *metric, const char *q) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/summary.json", dir, run);
    json_t *s = json_load_file(path, 0, NULL);
    CHECK_MSG(s, "no %s", path);
    double v = json_number_value(json_object_get(json_object_get(s, metric), q));
    json_decref(s);
    return v;
}

/* A workload the fit never saw (longer prompts and answers, near the
 * hidden engine's capacity): the fitted profile's prediction is the hidden
 * one's within 3% at p50 and p95. */
TEST(fit_profile_predicts_an_unseen_workload_like_the_hidden_engine) {
    char *dir = temp_dir();
    campaign(dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "fit %s/campaign --out %s/fitted.yaml --quiet", dir, dir);
    servelab_ok(cmd);
    const char *work = "--api completions --ignore-eos --prompts random:900:120 --requests 400 "
                       "--rate 1.6 --seed 77 --sim-seed 5 --quiet";
    snprintf(cmd, sizeof cmd, "predict " HIDDEN " %s --out %s/truth", work, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "predict --profile-file %s/fitted.yaml %s --out %s/twin", dir, work,
             dir);
    servelab_ok(cmd);
    static const char *const metrics[] = {"ttft_ms", "tpot_ms", "e2e_ms"};
    static const char *const qs[] = {"p50", "p95"};
    for (int m = 0; m < 3; m++)
        for (int q = 0; q < 2; q++) {
            double want = p(dir, "truth", metrics[m], qs[q]),
                   got = p(dir, "twin", metrics[m], qs[q]);
            CHECK_MSG(want > 0 && fabs(got - want) <= 0.03 * want, "%s %s: twin %g, truth %g",
                      metrics[m], qs[q], got, want);
        }
    char meta[1200];
    snprintf(meta, sizeof meta, "%s/twin/meta.json", dir);
    char *text = read_file(meta, NULL);
    CHECK(text && strstr(text, "fitted.yaml") && strstr(text, "\"sha256\""));
    free(text);
}

TEST(fit_refuses_runs_of_two_models_and_an_existing_out) {
    char *dir = temp_dir();
    predict(dir, "a", "--model model-a --prompts random:64:16 --requests 20 --rate 1");
    predict(dir, "b", "--model model-b --prompts random:64:16 --requests 20 --rate 1");
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "fit %s/a %s/b --out %s/p.yaml", dir, dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "different models") && count_of(out, "\n") == 1, "%s", out);
    char path[1200];
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    CHECK(read_file(path, NULL) == NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "fit %s/a --out %s/p.yaml --min-gaps 5 --quiet", dir, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "fit %s/a --out %s/p.yaml --min-gaps 5", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "exists") && count_of(out, "\n") == 1, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "fit %s/nothing-here --out %s/q.yaml", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(count_of(out, "\n") == 1, "%s", out);
    free(out);
}

#define LINEAR                                                                                     \
    "--max-num-seqs 16 --decode-base-ms 8 --decode-per-seq-ms 0.25 --prefill-per-token-ms 0.02"

static profile_doc fit_of(const char *dir, const char *runs) {
    char cmd[4096], *out, path[1200], err[512];
    snprintf(cmd, sizeof cmd, "fit %s --out %s/fitted.yaml --force", runs, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/fitted.yaml", dir);
    profile_doc d;
    CHECK_MSG(profile_file_read(path, &d, err, sizeof err) == 0, "%s", err);
    return d;
}

/* Requests the client cut short (timed out, or a capacity probe stopped
 * as lost) may still be computed by the server, unseen: the streams
 * decoding beside a gap are then more than the rows show, and every gap
 * from the first such request's sending on would read a larger batch's
 * step as a smaller one's (3 streams at 10.3 ms where the engine takes
 * 8.75). They are left out, and the table comes back exact. */
TEST(fit_leaves_out_gaps_once_a_request_was_cut_short) {
    char *dir = temp_dir(), runs[2048];
    predict_with(LINEAR, dir, "over",
                 "--prompts random:512:400 --max-tokens 400 --rate 3 --requests 120 --timeout 6");
    predict_with(LINEAR, dir, "idle",
                 "--prompts random:512:400 --max-tokens 400 --rate 0.2 "
                 "--requests 8");
    snprintf(runs, sizeof runs, "%s/over %s/idle", dir, dir);
    profile_doc d = fit_of(dir, runs);
    CHECK(d.engine.n_step_points >= 8);
    for (int i = 0; i < d.engine.n_step_points; i++)
        WITHIN(d.engine.step_ms[i], 8 + 0.25 * d.engine.step_batch[i], 0.01);
    profile_doc_free(&d);
}

/* Prompts of one length cannot part a lone request's TTFT into the step's
 * fixed cost and the prompt's own; the steps that computed a prompt while
 * streams decoded can. An engine whose step costs 10 ms whatever joins it
 * (no prefill cost) is fitted with the 10 ms as the fixed cost, not as the
 * prompt's (which would make every step with a prompt cost 20 ms), and
 * so its capacity comes back. */
TEST(fit_parts_one_prompt_lengths_ttft_by_the_steps_with_a_prompt) {
    char *dir = temp_dir(), runs[2048];
    const char *engine = "--max-num-seqs 8 --decode-base-ms 10 --decode-per-seq-ms 0 "
                         "--prefill-per-token-ms 0";
    predict_with(engine, dir, "busy",
                 "--prompts random:8:50 --max-tokens 50 --rate 14 --requests 2000");
    predict_with(engine, dir, "idle",
                 "--prompts random:8:50 --max-tokens 50 --rate 0.5 "
                 "--requests 10");
    snprintf(runs, sizeof runs, "%s/busy %s/idle", dir, dir);
    profile_doc d = fit_of(dir, runs);
    WITHIN(d.engine.decode_base_ms, 10.0, 0.01);
    CHECK_MSG(d.engine.prefill_per_token_ms < 0.01, "%g ms a token", d.engine.prefill_per_token_ms);
    CHECK_MSG(strstr(json_string_value(json_object_get(d.provenance, "prefill_per_token_ms")),
                     "one prompt length"),
              "%s", json_string_value(json_object_get(d.provenance, "prefill_per_token_ms")));
    profile_doc_free(&d);
}
