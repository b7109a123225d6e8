/* t5090-reasoning-and-speculative-decoding: what a reasoning model and speculative decoding do
 * to the figures, against the simulator's ground truth. The simulator
 * thinks for a set number of tokens (streamed in delta.reasoning or
 * delta.reasoning_content) and drafts K tokens a decode, accepting each
 * with a set chance; its token trace says when every token left and its
 * /metrics counts the drafts. servelab's first answer token, reasoning
 * tokens, tokens per chunk and acceptance figures must be those, under
 * Poisson arrivals, through HTTP and in virtual time; a TTFA bound of the
 * SLO must count what the rows say; bad settings are refused before any
 * traffic. */
#include "protocol/chunk.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THINK 5

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Per request, the token trace's write time of token `index` (ms), from
 * a file of request_id,index,t_ms rows; NAN when absent. */
static double token_time(const char *trace, const char *id, int index) {
    char want[64];
    int n = snprintf(want, sizeof want, "\n%s,%d,", id, index);
    const char *p = strstr(trace, want);
    return p ? atof(p + n) : NAN;
}

static json_t *load_json(const char *dir, const char *name) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = json_load_file(path, 0, NULL);
    CHECK_MSG(j != NULL, "no %s", path);
    return j;
}

static double jnum(const json_t *o, const char *a, const char *b) {
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_number_value(v);
}

/* Through HTTP: 80 chat requests at random instants from a simulator that
 * thinks for THINK tokens and drafts 3 a decode (accept 0.6), with the
 * server's own reasoning count in its usage. */
TEST_ALONE(reasoning_and_spec_decode_match_the_simulators_ground_truth) {
    char *dir = temp_dir();
    char args[1024];
    snprintf(args, sizeof args,
             "--reasoning-tokens %d --reasoning-usage --num-speculative-tokens 3 "
             "--spec-accept 0.6 --seed 7 --trace-tokens %s/tokens.csv",
             THINK, dir);
    sim_proc p = sim_start(args);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --api chat --rate 20 --requests 80 --seed 3 "
             "--prompts random:24:20 --ignore-eos --out %s/run --save-vllm-json %s/vllm.json",
             p.port, dir, dir);
    CHECK_INT(servelab_cmd(args, NULL), 0);
    double drafts = sim_metric(p.port, "vllm:spec_decode_num_drafts_total");
    double draft_tokens = sim_metric(p.port, "vllm:spec_decode_num_draft_tokens_total");
    double accepted = sim_metric(p.port, "vllm:spec_decode_num_accepted_tokens_total");
    sim_stop(&p);
    CHECK(drafts > 0 && accepted > 0);

    char path[1200];
    snprintf(path, sizeof path, "%s/tokens.csv", dir);
    char *trace = read_file(path, NULL);
    CHECK(trace != NULL);
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 80);
    double tokens = 0, off[80];
    for (int i = 0; i < t->n_rows; i++) {
        const char *id = csv_get(t, i, "request_id");
        CHECK_MSG(!strcmp(csv_get(t, i, "error"), ""), "%s failed", id);
        tokens += csv_num(t, i, "output_tokens");
        CHECK_INT((int)csv_num(t, i, "reasoning_tokens"), THINK);
        CHECK_MSG(!strcmp(csv_get(t, i, "reasoning_from"), "server"), "%s: %s", id,
                  csv_get(t, i, "reasoning_from"));
        /* the answer began when the simulator wrote token THINK: the two
         * clocks differ by one offset, so each request's first answer less
         * that write is the offset, give or take the client's own delay */
        double truth = token_time(trace, id, THINK);
        CHECK_MSG(!isnan(truth), "%s: no token %d in the trace", id, THINK);
        off[i] = csv_num(t, i, "first_answer_ms") - truth;
        /* the simulator wrote the answer after the reasoning began; the
         * client saw it no sooner (at once, when a busy host had it read
         * both in one go) */
        CHECK(truth > token_time(trace, id, 0));
        CHECK(csv_num(t, i, "first_answer_ms") >= csv_num(t, i, "first_token_ms"));
    }
    double sorted[80];
    memcpy(sorted, off, sizeof sorted);
    qsort(sorted, 80, sizeof *sorted, cmp_double);
    double median = (sorted[39] + sorted[40]) / 2;
    int off_1ms = 0;
    for (int i = 0; i < t->n_rows; i++)
        off_1ms += fabs(off[i] - median) > 1.0;
    /* within 1 ms of the simulator's write, but for the few the client read
     * late (another test's work on the same cores) */
    CHECK_MSG(off_1ms <= 4, "%d of 80 first answers more than 1 ms from the simulator's write",
              off_1ms);
    /* every token is a request's first, a decode's own or an accepted draft */
    CHECK_MSG(tokens == 80 + drafts + accepted, "%.0f tokens, 80 + %.0f drafts + %.0f accepted",
              tokens, drafts, accepted);

    json_t *s = load_json(dir, "run/summary.json");
    const json_t *sd = json_object_get(s, "spec_decode");
    CHECK_MSG(sd != NULL, "summary.json has no spec_decode");
    CHECK(jnum(sd, "num_drafts", NULL) == drafts);
    CHECK(jnum(sd, "draft_tokens", NULL) == draft_tokens);
    CHECK(jnum(sd, "accepted_tokens", NULL) == accepted);
    CHECK(fabs(jnum(sd, "acceptance_rate", NULL) - accepted / draft_tokens) < 1e-9);
    double length = 1 + accepted / drafts;
    CHECK(fabs(jnum(sd, "acceptance_length", NULL) - length) < 1e-9);
    CHECK_INT((int)json_array_size(json_object_get(sd, "per_position_acceptance_rates")), 3);
    /* a decode's chunk is its token and its accepted drafts: the tokens a
     * chunk after the first are the acceptance length */
    double per_chunk = jnum(s, "tokens_per_chunk", NULL);
    CHECK_MSG(fabs(per_chunk - length) < 1e-9, "tokens per chunk %.6f, acceptance length %.6f",
              per_chunk, length);
    CHECK(jnum(s, "inter_chunk_ms", "p50") > jnum(s, "itl_ms", "p50"));
    CHECK(jnum(s, "ttfa_ms", "p50") > jnum(s, "ttft_ms", "p50"));
    CHECK(jnum(s, "reasoning", "tokens") == 80 * THINK);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(s, "reasoning"), "counted_by")),
                  "server"));
    json_decref(s);

    /* the vLLM file carries the keys vllm bench serve writes */
    json_t *v = load_json(dir, "vllm.json");
    CHECK(fabs(jnum(v, "spec_decode_acceptance_rate", NULL) - 100 * accepted / draft_tokens) <
          1e-9);
    CHECK(fabs(jnum(v, "spec_decode_acceptance_length", NULL) - length) < 1e-9);
    CHECK(jnum(v, "spec_decode_num_drafts", NULL) == drafts);
    CHECK(jnum(v, "spec_decode_accepted_tokens", NULL) == accepted);
    json_decref(v);
    csv_free(t);
    free(trace);

    /* the report reads the same back from the rows and meta.json */
    snprintf(args, sizeof args, "report %s/run --out %s/rep", dir, dir);
    servelab_ok(args);
    json_t *r = load_json(dir, "rep/summary.json");
    const json_t *run = json_array_get(json_object_get(r, "runs"), 0);
    CHECK(jnum(run, "spec_decode", "num_drafts") == drafts);
    CHECK(fabs(jnum(json_object_get(run, "pooled"), "tokens_per_chunk", NULL) - length) < 1e-9);
    json_decref(r);
}

/* Without the server's count the client counts the reasoning chunks: one
 * token each here, so exactly; the older field name reads the same; an
 * answer that spends max_tokens thinking has no first answer. */
TEST(reasoning_counted_from_the_stream_in_either_field) {
    char *dir = temp_dir();
    char args[1024];
    sim_proc p = sim_start("--reasoning-tokens 12 --reasoning-field reasoning_content --seed 2");
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --api chat --rate 30 --requests 60 --seed 5 "
             "--prompts random:16:20 --max-tokens 20 --out %s/run",
             p.port, dir);
    CHECK_INT(servelab_cmd(args, NULL), 0);
    sim_stop(&p);
    char path[1200];
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 60);
    int thought_only = 0;
    for (int i = 0; i < t->n_rows; i++) {
        double out = csv_num(t, i, "output_tokens"), think = out < 12 ? out : 12;
        CHECK_MSG(csv_num(t, i, "reasoning_tokens") == think, "%s: %g reasoning tokens of %g",
                  csv_get(t, i, "request_id"), csv_num(t, i, "reasoning_tokens"), out);
        CHECK(!strcmp(csv_get(t, i, "reasoning_from"), "counted"));
        int answered = !isnan(csv_num(t, i, "first_answer_ms"));
        CHECK_MSG(answered == (out > 12), "%s: %g tokens, answer %s", csv_get(t, i, "request_id"),
                  out, answered ? "began" : "never began");
        thought_only += !answered;
    }
    csv_free(t);
    json_t *s = load_json(dir, "run/summary.json");
    CHECK_INT((int)jnum(s, "reasoning", "no_answer"), thought_only);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(s, "reasoning"), "counted_by")),
                  "client"));
    CHECK(json_object_get(s, "spec_decode") == NULL);    /* no drafts: no figures */
    CHECK(json_object_get(s, "inter_chunk_ms") == NULL); /* one token a chunk */
    json_decref(s);
}

/* A TTFA bound: in virtual time, with the bound between the fastest and
 * the slowest first answer, the requests meeting the SLO are those the rows
 * say, and a request that never answers misses. */
TEST(slo_ttfa_counts_what_the_rows_say) {
    char *dir = temp_dir();
    char args[1024];
    snprintf(args, sizeof args,
             "predict --quiet --profile gpu-7b --api chat --reasoning-tokens 8 "
             "--num-speculative-tokens 2 "
             "--spec-accept 0.5 --rate 40 --requests 300 --seed 9 --prompts random:64:24 "
             "--max-tokens 24 --chunks --slo ttfa=80ms --out %s/p",
             dir);
    servelab_ok(args);
    char path[1200];
    snprintf(path, sizeof path, "%s/p/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 300);
    int meet = 0, missed = 0;
    for (int i = 0; i < t->n_rows; i++) {
        double ttfa = csv_num(t, i, "first_answer_ms") - csv_num(t, i, "sent_ms");
        int ok = !strcmp(csv_get(t, i, "error"), "") && ttfa <= 80;
        meet += ok;
        missed += !ok;
    }
    csv_free(t);
    CHECK_MSG(meet > 0 && missed > 0, "the bound splits nothing: %d met, %d missed", meet, missed);
    json_t *s = load_json(dir, "p/summary.json");
    CHECK_INT((int)jnum(s, "meeting_slo", NULL), meet);
    CHECK(jnum(s, "slo", "ttfa_ms") == 80);
    /* virtual time's counters are the engine's: chunks carry the accepted drafts */
    CHECK(fabs(jnum(s, "tokens_per_chunk", NULL) - jnum(s, "spec_decode", "acceptance_length")) <
          1e-9);
    json_decref(s);
}

TEST(reasoning_and_spec_bad_settings_exit_2) {
    char *dir = temp_dir(), args[1024], *out;
    static const char *const bad[] = {
        "--slo ttfa=40",     "--slo ttfa=1s,ttfa=2s",      "--num-speculative-tokens 17",
        "--spec-accept 1.5", "--reasoning-field thoughts", "--reasoning-tokens -1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "predict --quiet --requests 5 %s --out %s/p%zu", bad[i], dir,
                 i);
        int code = servelab_cmd(args, &out);
        CHECK_MSG(code == 2 && strchr(out, '\n') == strrchr(out, '\n'), "%s: exit %d: %s", bad[i],
                  code, out);
        free(out);
    }
}

/* What a chunk says of reasoning, answers and tool calls, in both of the
 * client's readers (the fast one and the jansson one it is checked by). */
TEST(chunk_tells_reasoning_from_answer_and_tool_calls) {
    static const struct {
        const char *data;
        int output, answer, tool;
        long reasoning;
    } cases[] = {
        {"{\"choices\":[{\"delta\":{\"reasoning\":\" hm\"}}]}", 1, 0, 0, -1},
        {"{\"choices\":[{\"delta\":{\"reasoning_content\":\" hm\"}}]}", 1, 0, 0, -1},
        {"{\"choices\":[{\"delta\":{\"reasoning\":\" so\",\"content\":\" yes\"}}]}", 1, 1, 0, -1},
        {"{\"choices\":[{\"delta\":{\"content\":\"\",\"reasoning\":\"\"}}]}", 0, 0, 0, -1},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\"}}]}}]"
         "}",
         1, 1, 1, -1},
        {"{\"choices\":[{\"text\":\" a\"}]}", 1, 1, 0, -1},
        {"{\"content\":\" a\",\"stop\":false}", 1, 1, 0, -1},
        {"{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":9,"
         "\"completion_tokens_details\":{\"reasoning_tokens\":7}}}",
         0, 0, 0, 7},
        {"{\"choices\":[],\"usage\":{\"completion_tokens\":9,"
         "\"completion_tokens_details\":{\"reasoning_tokens\":-2}}}",
         0, 0, 0, -1},
        {"{\"choices\":[{\"message\":{\"reasoning\":\"x\",\"content\":\"y\"}}],\"usage\":{"
         "\"completion_tokens\":2,\"completion_tokens_d\\u0065tails\":{\"reasoning_tokens\":1}}}",
         1, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int ref = 0; ref < 2; ref++) {
            chunk_info ci;
            (ref ? chunk_parse_reference : chunk_parse)(cases[i].data, strlen(cases[i].data), &ci);
            CHECK_MSG(ci.has_output == cases[i].output && ci.has_answer == cases[i].answer &&
                          ci.has_tool_call == cases[i].tool &&
                          ci.reasoning_tokens == cases[i].reasoning,
                      "%s (%s): output %d answer %d tool %d reasoning %ld", cases[i].data,
                      ref ? "reference" : "fast", ci.has_output, ci.has_answer, ci.has_tool_call,
                      ci.reasoning_tokens);
        }
    }
}
