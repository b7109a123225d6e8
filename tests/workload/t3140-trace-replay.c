/* replay: trace replay (workload/replay.h). Each format read from a small
 * file written here; bad files named by file and line; the window, the
 * time scale and the cap; the prompt builder (shared hash ids give the
 * same leading token ids, block for block, and the rest differs); and a
 * Mooncake trace replayed against the simulator, every request sent
 * within 1 ms of its scaled timestamp and charged exactly the trace's
 * input length, and its prefix-cache hits exactly the blocks the trace
 * shares. */
#include "model/tokens.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"
#include "workload/replay.h"
#include "workload/replay_read.h"
#include "workload/workload.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *write_trace(const char *name, const char *text) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void load_ok(replay_trace *t, const char *path, replay_format f, int block) {
    char err[512];
    CHECK_MSG(replay_load(t, path, f, block, err, sizeof err) == 0, "%s", err);
}

/* The error replay_load gives for `text` read as `f`. */
static const char *load_error(const char *text, replay_format f) {
    static char err[512];
    replay_trace t;
    const char *path = write_trace("bad.trace", text);
    CHECK_MSG(replay_load(&t, path, f, 512, err, sizeof err) == -1, "loaded: %s", text);
    CHECK_MSG(!strncmp(err, path, strlen(path)), "error without the file: %s", err);
    return err + strlen(path);
}

TEST(replay_reads_mooncake_in_time_order_with_its_lines) {
    const char *path =
        write_trace("mc.jsonl", "{\"timestamp\": 3052, \"input_length\": 700, "
                                "\"output_length\": 5, \"hash_ids\": [0, 9]}\n"
                                "\n"
                                "{\"timestamp\": 0, \"input_length\": 1200, \"output_length\": "
                                "8, \"hash_ids\": [0, 1, 2]}\n"
                                "{\"timestamp\": 3052, \"input_length\": 0, \"output_length\": "
                                "0, \"hash_ids\": [5, 6]}\n");
    replay_trace t;
    load_ok(&t, path, REPLAY_AUTO, 512);
    CHECK_INT(t.format, REPLAY_MOONCAKE);
    CHECK_INT(t.n, 3);
    /* the earliest first; two of one time in the file's order */
    CHECK_INT(t.rec[0].line, 3);
    CHECK_INT(t.rec[0].t_us, 0);
    CHECK_INT(t.rec[0].input_tokens, 1200);
    CHECK_INT(t.rec[0].output_tokens, 8);
    CHECK_INT(t.rec[0].n_blocks, 3);
    CHECK_INT(t.rec[1].line, 1);
    CHECK_INT(t.rec[1].t_us, 3052000);
    CHECK_INT(t.rec[1].n_blocks, 2);
    CHECK_INT(t.rec[2].line, 4);
    CHECK_INT(t.rec[2].input_tokens, 1); /* an empty prompt costs its first token */
    CHECK_INT(t.rec[2].output_tokens, 1);
    CHECK_INT(t.uncovered, 1); /* line 4's two blocks for one token; 2 for 700 and 3 for 1200 fit */
    replay_free(&t);
}

TEST(replay_reads_burstgpt_and_azure_csvs) {
    const char *b = write_trace(
        "burst.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                     "5,ChatGPT,472,18,490,Conversation log\n"
                     "45.5,GPT-4,1087,0,1087,API log\n");
    replay_trace t;
    load_ok(&t, b, REPLAY_AUTO, 512);
    CHECK_INT(t.format, REPLAY_BURSTGPT);
    CHECK_INT(t.n, 2);
    CHECK_INT(t.rec[0].line, 2); /* the header is line 1 */
    CHECK_INT(t.rec[0].t_us, 5000000);
    CHECK_INT(t.rec[0].input_tokens, 472);
    CHECK_INT(t.rec[1].t_us, 45500000);
    CHECK_INT(t.rec[1].output_tokens, 1); /* a failed request's 0, asked for as 1 */
    replay_free(&t);

    const char *a = write_trace("azure.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                             "2023-11-16 18:17:03.9799600,4808,10\r\n"
                                             "2023-11-16 18:17:04.0319600,3180,8\r\n"
                                             "2023-11-16 20:17:04.5+02:00,110,27\r\n");
    load_ok(&t, a, REPLAY_AUTO, 512);
    CHECK_INT(t.format, REPLAY_AZURE);
    CHECK_INT(t.n, 3);
    CHECK_INT(t.rec[1].t_us - t.rec[0].t_us, 52000);
    CHECK_INT(t.rec[2].t_us - t.rec[0].t_us, 520040); /* 20:17 at +02:00 is 18:17 UTC */
    CHECK_INT(t.rec[2].line, 4);
    CHECK_INT(t.rec[0].input_tokens, 4808);
    CHECK_INT(t.rec[0].output_tokens, 10);
    replay_free(&t);
}

TEST(replay_reads_plain_jsonl_prefixes_and_own_prompts) {
    const char *p = write_trace(
        "plain.jsonl",
        "{\"timestamp_ms\": 0, \"input_tokens\": 40, \"output_tokens\": 3, \"prefix_id\": "
        "\"sys\", \"prefix_tokens\": 32}\n"
        "{\"timestamp_ms\": 2.5, \"output_tokens\": 4, \"prompt\": \"Hello there, friend\"}\n"
        "{\"timestamp_ms\": 7, \"output_tokens\": 2, \"messages\": [{\"role\": \"user\", "
        "\"content\": \"Hi\"}]}\n"
        "{\"timestamp_ms\": 9, \"input_tokens\": 50, \"output_tokens\": 3, \"prefix_id\": "
        "\"sys\", \"prefix_tokens\": 32}\n"
        "{\"timestamp_ms\": 11, \"input_tokens\": 20, \"output_tokens\": 3, \"hash_ids\": [4]}\n");
    replay_trace t;
    load_ok(&t, p, REPLAY_AUTO, 16);
    CHECK_INT(t.format, REPLAY_JSONL);
    CHECK_INT(t.n, 5);
    CHECK_INT(t.rec[1].t_us, 2500);
    CHECK_INT(t.rec[1].input_tokens, 7); /* by the rule: Hello 2, there 2, the comma 1, friend 2 */
    CHECK(t.rec[1].given != REPLAY_NONE);
    json_t *text = replay_prompt(&t, 1, 0), *msgs = replay_prompt(&t, 2, 1);
    CHECK_STR(json_string_value(text), "Hello there, friend");
    CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "content")), "Hi");
    json_decref(text);
    json_decref(msgs);
    /* records 0 and 3 share their 32-token prefix, then differ */
    int32_t a[64], b[64];
    CHECK_INT(replay_token_ids(&t, 0, a), 40);
    CHECK_INT(replay_token_ids(&t, 3, b), 50);
    CHECK(!memcmp(a, b, 32 * sizeof *a));
    CHECK(memcmp(a + 32, b + 32, 8 * sizeof *a));
    CHECK_INT(replay_token_ids(&t, 4, a), 20); /* one block of 16 (the block size), 4 its own */
    replay_free(&t);
}

TEST(replay_bad_files_name_the_file_and_line) {
    CHECK(strstr(load_error("{\"timestamp\": 0, \"input_length\": 10}\n", REPLAY_MOONCAKE),
                 ":1: no \"output_length\""));
    CHECK(strstr(load_error("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n"
                            "{\"timestamp\": -5, \"input_length\": 10, \"output_length\": 1}\n",
                            REPLAY_MOONCAKE),
                 ":2: \"timestamp\" must be a number of ms >= 0"));
    CHECK(strstr(load_error("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, "
                            "\"hash_ids\": [1, \"x\"]}\n",
                            REPLAY_MOONCAKE),
                 ":1: \"hash_ids\" item 2 is not an integer"));
    CHECK(strstr(load_error("{\"timestamp\": 0, \"input_length\": 10.5, \"output_length\": 1}\n",
                            REPLAY_MOONCAKE),
                 ":1: \"input_length\" must be a whole number"));
    CHECK(strstr(load_error("{\"timestamp\": 0, \"input_length\": 1\n", REPLAY_MOONCAKE), ":1: "));
    CHECK(strstr(load_error("{\"timestamp_ms\": 0, \"input_tokens\": 5, \"output_tokens\": 1, "
                            "\"prefix_id\": 1, \"hash_ids\": [1]}\n",
                            REPLAY_JSONL),
                 ":1: give \"prefix_id\" or \"hash_ids\", not both"));
    CHECK(strstr(
        load_error("{\"timestamp_ms\": 0, \"output_tokens\": 1, \"prompt\": 7}\n", REPLAY_JSONL),
        ":1: \"prompt\" must be a string"));
    CHECK(strstr(load_error("Timestamp,Model,Request tokens,Response tokens\n"
                            "1,ChatGPT,10,5\n"
                            "2,ChatGPT,ten,5\n",
                            REPLAY_BURSTGPT),
                 ":3: Request tokens must be a whole number"));
    CHECK(strstr(load_error("Timestamp,Model,Response tokens\n1,ChatGPT,5\n", REPLAY_BURSTGPT),
                 ":1: no column 'Request tokens'"));
    CHECK(strstr(load_error("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                            "2023-11-16 18:17:03.97,10,5\n"
                            "2023-02-30 18:17:03.97,10,5\n",
                            REPLAY_AZURE),
                 ":3: TIMESTAMP '2023-02-30 18:17:03.97' is not a date-time"));
    CHECK(strstr(load_error("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,10\n",
                            REPLAY_AZURE),
                 ":2: 2 fields, fewer than the header's columns"));
    CHECK(strstr(load_error("time,in,out\n1,2,3\n", REPLAY_AUTO), ":1: cannot tell the trace's"));
    CHECK(strstr(load_error("TIMESTAMP,ContextTokens,GeneratedTokens\n", REPLAY_AZURE),
                 ": no records in the file"));
}

TEST(replay_datetimes_read_as_utc_microseconds) {
    int64_t us;
    const char *s = "1970-01-01 00:00:01.5";
    CHECK(replay_parse_datetime(s, strlen(s), &us) == 0);
    CHECK_INT(us, 1500000);
    s = "2024-05-10T00:00:00.009930+00:00";
    CHECK(replay_parse_datetime(s, strlen(s), &us) == 0);
    CHECK_INT(us, 1715299200009930LL);
    s = "2024-05-10 01:30:00-0130Z";
    CHECK(replay_parse_datetime(s, strlen(s), &us) == -1);
    s = "2024-05-10 01:30:00.1234567Z";
    CHECK(replay_parse_datetime(s, strlen(s), &us) == 0);
    CHECK_INT(us, 1715304600123456LL);
    const char *bad[] = {"2024-05-10",           "2024-13-10 00:00:00",      "2024-05-10 24:00:00",
                         "2024-05-10 00:00:00.", "2024-05-10 00:00:00 junk", "5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_MSG(replay_parse_datetime(bad[i], strlen(bad[i]), &us) == -1, "read '%s'", bad[i]);
}

TEST(replay_window_scale_and_cap_choose_the_schedule) {
    const char *path = write_trace("w.jsonl", "{\"timestamp_ms\": 1000, \"input_tokens\": 4, "
                                              "\"output_tokens\": 1}\n"
                                              "{\"timestamp_ms\": 1500, \"input_tokens\": 4, "
                                              "\"output_tokens\": 1}\n"
                                              "{\"timestamp_ms\": 2200, \"input_tokens\": 4, "
                                              "\"output_tokens\": 1}\n"
                                              "{\"timestamp_ms\": 3000, \"input_tokens\": 4, "
                                              "\"output_tokens\": 1}\n"
                                              "{\"timestamp_ms\": 4000, \"input_tokens\": 4, "
                                              "\"output_tokens\": 1}\n");
    replay_trace t;
    char err[512];
    load_ok(&t, path, REPLAY_JSONL, 512);
    /* from 0.5 s after the first record, for 2 s: 1500, 2200, 3000 */
    replay_window w = {.start_s = 0.5, .duration_s = 2, .time_scale = 2};
    CHECK_MSG(replay_select(&t, &w, err, sizeof err) == 0, "%s", err);
    int64_t *due;
    CHECK_INT(replay_due_times(&t, &due), 3);
    CHECK_INT(due[0], 0); /* the window's first record at t=0 */
    CHECK_INT(due[1], 350000);
    CHECK_INT(due[2], 750000);
    CHECK_INT(replay_trace_line(&t, 0), 2);
    CHECK_INT(replay_trace_line(&t, 3), -1);
    CHECK_NEAR(replay_offered_rps(&t), 2 / 0.75, 1e-9);
    free(due);
    replay_free(&t);

    load_ok(&t, path, REPLAY_JSONL, 512);
    w = (replay_window){.time_scale = 1, .max_records = 2};
    CHECK(replay_select(&t, &w, err, sizeof err) == 0);
    CHECK_INT(t.n, 2);
    CHECK_INT(replay_trace_line(&t, 1), 2);
    replay_free(&t);

    load_ok(&t, path, REPLAY_JSONL, 512);
    w = (replay_window){.start_s = 3.5, .time_scale = 1};
    CHECK(replay_select(&t, &w, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "no records in the window") && strstr(err, "spans 3.000 s"), "%s", err);
    replay_free(&t);
}

/* Mooncake lines of `in` tokens with these hash ids, one a millisecond. */
static void mooncake_line(char *buf, size_t cap, int t_ms, int in, int out, const char *ids) {
    snprintf(buf + strlen(buf), cap - strlen(buf),
             "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": "
             "[%s]}\n",
             t_ms, in, out, ids);
}

TEST(replay_shared_hash_ids_give_the_same_leading_token_ids) {
    char text[2048] = "";
    mooncake_line(text, sizeof text, 0, 1400, 4, "7, 8, 9");
    mooncake_line(text, sizeof text, 1, 1300, 4, "7, 8, 10");
    mooncake_line(text, sizeof text, 2, 600, 4, "7, 8");   /* its second block cut to 88 */
    mooncake_line(text, sizeof text, 3, 1500, 4, "11, 8"); /* block 8 at 1 after another 0 */
    mooncake_line(text, sizeof text, 4, 1100, 4, "7");     /* past its one block, its own */
    mooncake_line(text, sizeof text, 5, 512, 4, "8");      /* block 8 first */
    replay_trace t;
    load_ok(&t, write_trace("shared.jsonl", text), REPLAY_MOONCAKE, 512);
    int32_t *ids[6];
    for (size_t k = 0; k < 6; k++) {
        ids[k] = malloc(1500 * sizeof **ids);
        CHECK_INT(replay_token_ids(&t, k, ids[k]), t.rec[k].input_tokens);
        for (int i = 0; i < t.rec[k].input_tokens; i++)
            CHECK(ids[k][i] >= REPLAY_ID_MIN && ids[k][i] <= REPLAY_ID_MAX);
    }
    size_t block = 512 * sizeof **ids;
    CHECK(!memcmp(ids[0], ids[1], 2 * block));            /* first 2 x 512 equal */
    CHECK(memcmp(ids[0] + 1024, ids[1] + 1024, 276 * 4)); /* block 9 vs 10 */
    CHECK(!memcmp(ids[0], ids[2], 600 * sizeof **ids));   /* all of the shorter one */
    CHECK(memcmp(ids[0], ids[3], block));                 /* 11 is not 7 */
    CHECK(!memcmp(ids[0] + 512, ids[3] + 512, block));    /* block 8 is block 8 anywhere */
    CHECK(!memcmp(ids[0], ids[4], block));
    CHECK(memcmp(ids[0] + 512, ids[4] + 512, block)); /* its own tokens, not block 8 */
    CHECK(!memcmp(ids[0] + 512, ids[5], block));      /* a block's tokens are its id's alone */
    /* the chat form: one word a token, the same words where the ids are the same */
    json_t *m0 = replay_prompt(&t, 0, 1), *m1 = replay_prompt(&t, 1, 1);
    const char *w0 = json_string_value(json_object_get(json_array_get(m0, 0), "content"));
    const char *w1 = json_string_value(json_object_get(json_array_get(m1, 0), "content"));
    CHECK_INT(count_text_tokens(w0, strlen(w0)), 1400);
    CHECK_INT(count_text_tokens(w1, strlen(w1)), 1300);
    size_t same = 0;
    while (w0[same] && w0[same] == w1[same])
        same++;
    int32_t tok[1400];
    CHECK_INT(tokenize_text(w0, same, tok, 1400), 1024 + (w0[same - 1] != ' '));
    json_decref(m0);
    json_decref(m1);
    /* the completions form is the ids themselves */
    json_t *p = replay_prompt(&t, 4, 0);
    CHECK_INT(json_array_size(p), 1100);
    CHECK_INT(json_integer_value(json_array_get(p, 1099)), ids[4][1099]);
    json_decref(p);
    for (size_t k = 0; k < 6; k++)
        free(ids[k]);
    replay_free(&t);
}

/* `run --replay PATH --ignore-eos EXTRA` against a simulator of its own
 * (`--profile tiny`, prefix caching on) into DIR/run; its rows. */
static csv_table *replay_on_a_fresh_simulator(const char *path, const char *extra,
                                              const char *dir) {
    sim_proc p = sim_start("--profile tiny");
    char args[2048];
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --replay %s --ignore-eos %s --out %s/run",
             p.port, path, extra, dir);
    servelab_ok(args);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(args);
    CHECK_MSG(t, "no %s", args);
    return t;
}

/* The Done-when line: a Mooncake trace written here replays with every
 * arrival within 1 ms of its scaled timestamp, and each request is charged
 * exactly the trace's input length (the simulator's usage count). */
TEST_ALONE(replay_mooncake_arrivals_within_1ms_of_their_scaled_timestamps) {
    enum { N = 60 };
    static char text[N * 128];
    int t_ms[N], in[N], out[N];
    text[0] = 0;
    for (int i = 0; i < N; i++) {
        t_ms[i] = 20 + i * 37 + (i % 3 == 0) * 11; /* uneven gaps */
        if (i % 10 == 4)
            t_ms[i] = t_ms[i - 1]; /* two at once now and then */
        in[i] = 100 + (i * 131) % 1500;
        out[i] = 2 + i % 5;
        char ids[64]; /* a block of 512 a hash id: the first shared by every fourth record */
        int n = snprintf(ids, sizeof ids, "%d", i % 4);
        for (int b = 1; b < (in[i] + 511) / 512; b++)
            n += snprintf(ids + n, sizeof ids - (size_t)n, ", %d", 1000 * (i + 1) + b);
        mooncake_line(text, sizeof text, t_ms[i], in[i], out[i], ids);
    }
    const char *path = write_trace("trace.jsonl", text);
    char *dir = temp_dir(), args[2048];
    csv_table *t = replay_on_a_fresh_simulator(path, "--time-scale 2", dir);
    CHECK_INT(t->n_rows, N);
    double worst = 0;
    /* Every send within 1 ms of its scaled time (5 ms for AddressSanitizer's
     * slower code), except where the host held the client off its CPU for a
     * moment (2-4 ms, in about 1 run in 10 of this test on a quiet machine,
     * 1 to 3 of the 60 beside two busy loops): then the run itself must have
     * caught it and named the request (summary.json's client), and counted
     * it; and such sends stay a few, at most 6 of the 60. */
    double bound = servelab_is_sanitized() ? 5.0 : 1.0;
    snprintf(args, sizeof args, "%s/run/summary.json", dir);
    char *summary = read_file(args, NULL);
    CHECK(summary);
    int excused = 0;
    for (int r = 0; r < t->n_rows; r++) {
        int line = (int)csv_num(t, r, "trace_line"), i = line - 1;
        CHECK_MSG(i >= 0 && i < N, "row %d: trace_line %d", r, line);
        double due = (t_ms[i] - t_ms[0]) / 2.0, sent = csv_num(t, r, "sent_ms");
        CHECK_NEAR(csv_num(t, r, "scheduled_ms"), due, 0.0005);
        CHECK_MSG(sent >= due, "line %d: sent at %.3f ms, before its time %.3f", line, sent, due);
        if (sent - due > bound) {
            char named[64];
            snprintf(named, sizeof named, "\"%s\"", csv_get(t, r, "request_id"));
            CHECK_MSG(strstr(summary, named) && strstr(summary, "\"within_1ms\": false"),
                      "line %d: sent %.3f ms late, and the run did not say so", line, sent - due);
            excused++;
        } else {
            worst = sent - due > worst ? sent - due : worst;
        }
        CHECK_STR(csv_get(t, r, "error"), "");
        CHECK_INT((int)csv_num(t, r, "prompt_tokens"), in[i]);
        CHECK_INT((int)csv_num(t, r, "output_tokens"), out[i]);
    }
    CHECK_MSG(excused <= N / 10, "%d of %d sends more than %.0f ms late", excused, N, bound);
    json_t *sj = json_loads(summary, 0, NULL);
    json_t *late = json_object_get(json_object_get(sj, "client"), "late_sent_requests");
    CHECK_MSG(json_is_integer(late) && json_integer_value(late) >= excused,
              "%d sends more than %.0f ms late, the run counted %lld", excused, bound,
              json_is_integer(late) ? (long long)json_integer_value(late) : -1LL);
    json_decref(sj);
    free(summary);
    printf("worst lateness %.3f ms (%d late and named by the run)\n", worst, excused);
    csv_free(t);
    snprintf(args, sizeof args, "%s/run/meta.json", dir);
    char *meta = read_file(args, NULL);
    CHECK(meta && strstr(meta, "\"format\": \"mooncake\"") && strstr(meta, "\"records\": 60,"));
    CHECK(strstr(meta, "\"records_blocks_not_matching_input\": 0"));
    CHECK(strstr(meta, "\"cache_bust\": \"off\""));
    free(meta);
}

/* A bad trace stops the run before any traffic: exit 2, the file and line
 * named, no rows. */
TEST(replay_a_bad_trace_sends_nothing) {
    const char *path = write_trace("bad.jsonl", "{\"timestamp\": 0, \"input_length\": 10, "
                                                "\"output_length\": 1}\n"
                                                "{\"timestamp\": 5, \"input_length\": 10}\n");
    char *dir = temp_dir(), args[2048], *out;
    snprintf(args, sizeof args, "run --quiet --url http://127.0.0.1:9 --replay %s --out %s/run",
             path, dir);
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "bad.jsonl:2: no \"output_length\""), "%s", out);
    free(out);
    snprintf(args, sizeof args, "%s/run/requests.csv", dir);
    CHECK(access(args, F_OK) != 0);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:9 --replay %s --rate 5 --out %s/run", path, dir);
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "--rate does not apply"), "%s", out);
    free(out);
}

/* A replayed request's body: the trace's lengths, valid JSON, and no
 * nonce or shared prefix of servelab's own even when shaping is asked
 * for (the trace says what is shared). */
TEST(replay_bodies_carry_the_trace_lengths_and_nothing_else) {
    char text[512] = "";
    mooncake_line(text, sizeof text, 0, 700, 9, "1, 2");
    replay_trace *t = calloc(1, sizeof *t);
    load_ok(t, write_trace("body.jsonl", text), REPLAY_MOONCAKE, 512);
    workload w;
    workload_use_replay(&w, t);
    w.shape.cache_bust = 1;
    w.shape.prefix_tokens = 10;
    w.shape.prefix_groups = 1;
    CHECK_STR(workload_class_of(&w, 0), "replay");
    for (int chat = 0; chat < 2; chat++) {
        body_opts o = {.chat = chat, .model = "m", .include_usage = 1, .ignore_eos = 1};
        size_t len;
        char *body = workload_body(&w, 0, &o, &len);
        CHECK_INT(strlen(body), len);
        json_error_t je;
        json_t *j = json_loads(body, 0, &je);
        CHECK_MSG(j, "%s: %s", je.text, body);
        CHECK_INT(json_integer_value(json_object_get(j, "max_tokens")), 9);
        CHECK(json_is_true(json_object_get(j, "ignore_eos")));
        CHECK_STR(json_string_value(json_object_get(j, "model")), "m");
        if (chat) {
            json_t *m = json_object_get(j, "messages");
            CHECK_INT(json_array_size(m), 1);
            const char *c = json_string_value(json_object_get(json_array_get(m, 0), "content"));
            CHECK_INT(count_text_tokens(c, strlen(c)), 700);
        } else {
            CHECK_INT(json_array_size(json_object_get(j, "prompt")), 700);
        }
        CHECK_INT(workload_prompt_tokens(&w, 0), 700);
        json_decref(j);
        free(body);
    }
    workload_free(&w);
}

/* The Done-when line's other half: with caching on and KV to spare, the
 * simulator's prefix-cache hits are exactly the blocks the trace shares.
 * A record shares, with the records before it, the longest run of leading
 * hash ids one of them has: that many blocks of 512 tokens. The simulator
 * (like vLLM) hits whole blocks of 16 and always computes a prompt's last
 * token, so a prompt shared whole hits all but its last 16; the trace's
 * records are far enough apart for each to find the ones before it cached. */
TEST(replay_prefix_cache_hits_equal_the_blocks_the_trace_shares) {
    enum { N = 8 };
    static const int ids[N][4] = {{1, 2, 3}, {1, 2, 4}, {1, 5},       {6},
                                  {1, 2, 3}, {6, 7},    {1, 2, 4, 8}, {9}};
    static const int n_ids[N] = {3, 3, 2, 1, 3, 2, 4, 1};
    static char text[N * 128];
    text[0] = 0;
    for (int i = 0; i < N; i++) {
        char list[64];
        int n = 0;
        for (int b = 0; b < n_ids[i]; b++)
            n += snprintf(list + n, sizeof list - (size_t)n, "%s%d", b ? ", " : "", ids[i][b]);
        mooncake_line(text, sizeof text, i * 150, 512 * n_ids[i], 2, list);
    }
    const char *path = write_trace("shared.jsonl", text);
    csv_table *t = replay_on_a_fresh_simulator(path, "--no-sampling", temp_dir());
    CHECK(t->n_rows == N);
    for (int r = 0; r < t->n_rows; r++) {
        int i = (int)csv_num(t, r, "trace_line") - 1;
        CHECK(i >= 0 && i < N);
        int shared = 0; /* blocks */
        for (int j = 0; j < i; j++) {
            int k = 0;
            while (k < n_ids[i] && k < n_ids[j] && ids[i][k] == ids[j][k])
                k++;
            shared = k > shared ? k : shared;
        }
        int tokens = 512 * n_ids[i], want = 512 * shared;
        if (want > (tokens - 1) / 16 * 16)
            want = (tokens - 1) / 16 * 16;
        CHECK_MSG((int)csv_num(t, r, "cached_tokens") == want, "line %d: %g cached, %d shared",
                  i + 1, csv_num(t, r, "cached_tokens"), want);
    }
    csv_free(t);
}
