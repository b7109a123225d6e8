/* t3300-engine-inputs-bounded: what the engine is told cannot kill it or
 * wrap its clock (round 3's C3: --kv-blocks 2147483647 allocated 51 GB up
 * front and aborted; L5: a step cost of 1e16 ms wrapped the clock, and
 * predict said TTFT 0.00 ms; M1: predict refused an impossible engine only
 * after making --out, with exit 1), and a schema cannot wedge the
 * simulator (H1: 12 items 8 levels deep, 4.3e8 values built on the serving
 * thread, /health dead, SIGTERM ignored) nor make it call an answer valid
 * that is not (L7: maxItems ignored, and the answer called valid). */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TEST(a_huge_kv_pool_costs_what_a_run_uses_of_it) {
    char *dir = temp_dir(), cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s exec %s predict --kv-blocks 2147483647 --requests 20 --rate 10 --out %s/p "
             "--quiet 2>&1",
             servelab_is_sanitized() ? "" : "ulimit -v 2000000;", servelab_bin(), dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    char path[4200];
    snprintf(path, sizeof path, "%s/p/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 20);
    for (int i = 0; t && i < t->n_rows; i++)
        CHECK_STR(csv_get(t, i, "error"), "");
    csv_free(t);
    free(dir);
}

TEST(step_costs_past_an_hour_are_refused_before_anything_is_made) {
    char *dir = temp_dir(), cmd[8800], path[4200], *out = NULL;
    const char *flags[] = {"--decode-base-ms 1e16", "--prefill-per-token-ms 1e300",
                           "--idle-wake-ms 1e308", "--jitter 2"};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "predict %s --requests 5 --out %s/p%d --quiet", flags[i], dir, i);
        CHECK_MSG(servelab_cmd(cmd, &out) == 2 && strchr(out, '\n') == strrchr(out, '\n'), "%s: %s",
                  flags[i], out);
        free(out);
        snprintf(path, sizeof path, "%s/p%d", dir, i);
        CHECK_MSG(access(path, F_OK) != 0, "%s: --out made", flags[i]);
        snprintf(cmd, sizeof cmd, "sim --port 0 %s", flags[i]);
        CHECK_MSG(servelab_cmd(cmd, &out) == 2, "sim %s: %s", flags[i], out);
        free(out);
    }
    /* a profile file's step table past an hour: the same */
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("name: big\nengine:\n  max_num_seqs: 4\n  kv_blocks: 1000\n  block_size: 16\n"
          "  max_model_len: 2048\n  max_num_batched_tokens: 2048\n  decode_base_ms: 1\n"
          "  step_ms_by_batch: \"1:1e308,2:1e308\"\n  prefill_per_token_ms: 0.1\n"
          "  prefill_ctx_per_1k_ms: 0\n  idle_wake_ms: 0\n  idle_after_ms: 0\n  jitter: 0\n"
          "  eos_min_frac_pct: 0\n  no_prefix_caching: false\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "predict --profile-file %s --requests 5 --out %s/pf --quiet", path,
             dir);
    CHECK_MSG(servelab_cmd(cmd, &out) == 2 && strstr(out, "an hour"), "%s", out);
    free(out);
    free(dir);
}

/* A step under an hour that adds up to eternity (a long prompt at the
 * most per token): every request times out, none is answered at 0 ms. */
TEST(a_step_that_adds_up_to_eternity_times_out_rather_than_wraps) {
    char *dir = temp_dir(), cmd[4096], path[4200];
    snprintf(cmd, sizeof cmd,
             "predict --prefill-per-token-ms 3600000 --decode-base-ms 3600000 --requests 5 "
             "--timeout 60 --out %s/p --quiet",
             dir);
    int code = servelab_cmd(cmd, NULL);
    CHECK_MSG(code == 1, "exit %d (every request timed out: 1)", code);
    snprintf(path, sizeof path, "%s/p/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 5);
    for (int i = 0; t && i < t->n_rows; i++)
        CHECK_STR(csv_get(t, i, "error"), "timeout");
    csv_free(t);
    free(dir);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

TEST(a_schema_bomb_is_answered_at_once_and_its_truth_is_invalid) {
    char *dir = temp_dir(), path[4200], args[4096];
    /* arrays of 12 items, 8 levels deep: 12^8 values if built whole */
    char nest[2048] = "{\"type\":\"integer\"}";
    for (int i = 0; i < 8; i++) {
        char next[4096];
        snprintf(next, sizeof next, "{\"type\":\"array\",\"minItems\":12,\"items\":%s}", nest);
        snprintf(nest, sizeof nest, "%.2000s", next);
    }
    char fmt[4096];
    snprintf(fmt, sizeof fmt,
             "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"n\",\"schema\":{\"type\":"
             "\"object\",\"properties\":{\"a\":%s},\"required\":[\"a\"]}}}",
             nest);
    snprintf(path, sizeof path, "%s/nest.json", dir);
    write_text(path, fmt);
    snprintf(path, sizeof path, "%s/max.json", dir);
    write_text(path, "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"m\",\"schema\":"
                     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"maxItems\":"
                     "1,\"items\":{\"type\":\"integer\"}},\"s\":{\"type\":\"string\","
                     "\"minLength\":30}},\"required\":[\"a\",\"s\"]}}}");
    snprintf(args, sizeof args, "--profile tiny --trace %s/trace.csv", dir);
    sim_proc p = sim_start(args);
    const char *files[] = {"nest.json", "max.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args,
                 "run --quiet --url http://127.0.0.1:%d --api chat --response-format %s/%s "
                 "--requests 2 --max-tokens 64 --timeout 20 --prompts random:8:8 --out %s/r%d",
                 p.port, dir, files[i], dir, i);
        int code = servelab_cmd(args, NULL);
        CHECK_MSG(code == 0, "%s: exit %d (the simulator must answer)", files[i], code);
    }
    http_result h;
    CHECK(http_request_raw(p.port, "GET", "/health", "", NULL, &h) == 0 && h.status == 200);
    http_result_free(&h);
    sim_stop(&p);
    /* the trace's truth and the client's verdict agree on every answer:
     * the bomb cannot be met (too deep), a maxItems of 1 is now met, and
     * so is a minLength of 30 with no maxLength (cut to 24 before) */
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 4);
    int valid_truth = 0;
    for (int i = 0; t && i < t->n_rows; i++)
        valid_truth += !strcmp(csv_get(t, i, "structured"), "valid");
    csv_free(t);
    int valid_seen[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/r%d/requests.csv", dir, i);
        t = csv_read(path);
        CHECK(t && t->n_rows == 2);
        for (int k = 0; t && k < t->n_rows; k++)
            valid_seen[i] += !strcmp(csv_get(t, k, "answer_valid"), "1");
        csv_free(t);
    }
    CHECK_INT(valid_seen[0], 0);
    CHECK_INT(valid_seen[1], 2);
    CHECK_INT(valid_truth, 2);
    free(dir);
}
