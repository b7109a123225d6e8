/* turns: multi-turn conversations (workload/conversation.h). Against the
 * simulator: every turn is a row with its conversation and turn; a turn is
 * sent no sooner than the think time after the turn before it ended, so a
 * conversation never overlaps itself; turn k's prompt holds the whole
 * history, exactly (the simulator's own count of token ids); a failed turn
 * ends its conversation, whose later turns are cancelled rows. And the
 * history's text adds up to the count servelab records for it. */
#include "model/tokens.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"
#include "workload/workload.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static csv_table *rows_in(const char *dir) {
    char p[2200];
    snprintf(p, sizeof p, "%s/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_MSG(t, "no %s", p);
    return t;
}

/* The row of (conversation c, turn k); -1 none. */
static int row_of(const csv_table *t, int c, int k) {
    for (int i = 0; i < t->n_rows; i++)
        if ((int)csv_num(t, i, "conversation_id") == c && (int)csv_num(t, i, "turn") == k)
            return i;
    return -1;
}

TEST_ALONE(turns_follow_each_other_and_carry_the_whole_history) {
    char *dir = temp_dir();
    sim_proc p = sim_start("--profile tiny");
    char args[2048];
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --prompts random:16:8 --ignore-eos "
             "--turns 3 --think-time 50ms --requests 8 --rate 40 --out %s/run",
             p.port, dir);
    servelab_ok(args);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_in(args);
    CHECK_INT(t->n_rows, 24);
    for (int c = 0; c < 8; c++)
        for (int k = 1; k <= 3; k++) {
            int i = row_of(t, c, k);
            CHECK_MSG(i >= 0, "conversation %d has no turn %d", c, k);
            CHECK_STR(csv_get(t, i, "error"), "");
            /* k turns of 16 ids, k - 1 replies of 8, and the nonce's 3 */
            CHECK_INT((int)csv_num(t, i, "prompt_tokens"), 16 * k + 8 * (k - 1) + 3);
            CHECK_INT((int)csv_num(t, i, "output_tokens"), 8);
            if (k == 1)
                continue;
            int before = row_of(t, c, k - 1);
            double end = csv_num(t, before, "end_ms"), sent = csv_num(t, i, "sent_ms");
            CHECK_NEAR(csv_num(t, i, "scheduled_ms"), end + 50, 0.002);
            CHECK_MSG(sent >= end + 50 - 0.002,
                      "conversation %d turn %d sent at %.3f, %.3f ms "
                      "after the turn before ended",
                      c, k, sent, sent - end);
        }
    csv_free(t);
}

TEST(turns_a_failed_turn_ends_its_conversation_with_rows) {
    char *dir = temp_dir();
    sim_proc p = sim_start("--profile tiny --fault http500=0.3");
    char args[2048];
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --prompts random:8:4 --ignore-eos "
             "--turns 4 --requests 20 --rate 100 --out %s/run",
             p.port, dir);
    char *out;
    servelab_cmd(args, &out); /* failed requests may make the exit code 1 */
    free(out);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_in(args);
    CHECK_INT(t->n_rows, 80); /* every turn of every conversation is a row */
    int ended_early = 0;
    for (int c = 0; c < 20; c++) {
        int failed_at = 0;
        for (int k = 1; k <= 4; k++) {
            int i = row_of(t, c, k);
            CHECK(i >= 0);
            const char *err = csv_get(t, i, "error");
            if (failed_at) {
                CHECK_STR(err, "cancelled");
                CHECK(isnan(csv_num(t, i, "sent_ms")));
            } else if (*err) {
                failed_at = k;
                ended_early += k < 4;
            }
        }
    }
    CHECK_MSG(ended_early > 0, "no conversation failed before its last turn (30%% faults)");
    csv_free(t);
}

/* The text form of a synthetic history: its tokens are what servelab
 * records for the turn (the simulator counts text by the same rule). */
TEST(turns_history_text_adds_up) {
    workload w;
    char err[256];
    CHECK(workload_load(&w, "builtin", NULL, err, sizeof err) == 0);
    CHECK(workload_plan_conversations(&w, 10, 4, 0, 0, 5, err, sizeof err) == 40);
    w.shape.cache_bust = 1;
    w.shape.salt = 9;
    body_opts o = {0};
    for (size_t r = 0; r < 40; r++) {
        char *body = workload_body(&w, r, &o, NULL);
        json_t *j = json_loads(body, 0, NULL);
        json_t *p = json_object_get(j, "prompt");
        CHECK_INT((int)count_text_tokens(json_string_value(p), json_string_length(p)),
                  workload_prompt_tokens(&w, r));
        if (w.conv.turn[r] > 1) { /* it starts with the conversation's first turn, nonce and all */
            char *first = workload_body(&w, w.conv.first[w.conv.conv[r]], &o, NULL);
            json_t *fj = json_loads(first, 0, NULL);
            const char *ft = json_string_value(json_object_get(fj, "prompt"));
            CHECK(!strncmp(json_string_value(p), ft, strlen(ft)));
            json_decref(fj);
            free(first);
        }
        json_decref(j);
        free(body);
    }
    workload_free(&w);
}

TEST(turns_sharegpt_all_turns_in_order) {
    char *dir = temp_dir();
    char path[1200];
    snprintf(path, sizeof path, "%s/sg.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("[{\"conversations\":[{\"from\":\"human\",\"value\":\"one two\"},"
          "{\"from\":\"gpt\",\"value\":\"three four five six\"},"
          "{\"from\":\"human\",\"value\":\"seven\"},{\"from\":\"gpt\",\"value\":\"eight nine\"}]},"
          "{\"conversations\":[{\"from\":\"human\",\"value\":\"solo\"},"
          "{\"from\":\"gpt\",\"value\":\"reply here\"}]}]",
          f);
    fclose(f);
    workload w;
    char err[256], spec[1300];
    snprintf(spec, sizeof spec, "sharegpt:%s", path);
    CHECK(workload_load(&w, spec, NULL, err, sizeof err) == 0);
    size_t n = workload_plan_conversations(&w, 2, 0, 0, 0, 1, err, sizeof err);
    CHECK_INT((int)n, 3); /* 2 turns + 1 turn */
    body_opts o = {.chat = 1};
    int two_turn_seen = 0;
    for (size_t r = 0; r < n; r++) {
        char *body = workload_body(&w, r, &o, NULL);
        json_t *j = json_loads(body, 0, NULL);
        json_t *m = json_object_get(j, "messages");
        CHECK_INT((int)json_array_size(m), 2 * w.conv.turn[r] - 1);
        if (w.conv.turn[r] == 2) {
            two_turn_seen = 1;
            CHECK_STR(json_string_value(json_object_get(json_array_get(m, 1), "content")),
                      "three four five six");
            CHECK_STR(json_string_value(json_object_get(json_array_get(m, 2), "content")), "seven");
            CHECK_INT((int)json_integer_value(json_object_get(j, "max_tokens")), 4);
        }
        json_decref(j);
        free(body);
    }
    CHECK(two_turn_seen);
    workload_free(&w);
    CHECK(workload_load(&w, "builtin", NULL, err, sizeof err) == 0);
    CHECK(workload_plan_conversations(&w, 2, 0, 0, 0, 1, err, sizeof err) == 0);
    CHECK(strstr(err, "--turns all") != NULL);
    workload_free(&w);
}
