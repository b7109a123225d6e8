/* chunk_timings: what a server reports of a request itself, as chunk_parse
 * reads it: llama.cpp's "timings" object (on the final chunk of its /v1
 * streams and native /completion stream, and in its non-streamed bodies)
 * and usage.prompt_tokens_details.cached_tokens. The recorded llama.cpp
 * exchanges give the exact values; hand-written chunks cover values that
 * are absent, null, negative, huge or not numbers, which are dropped (-1,
 * NAN for a duration) without making the chunk malformed.
 *
 * Every input goes through parse_both (chunk_both.h), so the fast scanner
 * and the jansson reference must agree on all of it. */
#include "chunk_both.h"
#include "protocol/chunk.h"
#include "protocol/sse.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_EVENTS 64

typedef struct events {
    int n;
    chunk_info ci[MAX_EVENTS];
} events;

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    events *e = ud;
    (void)type;
    CHECK_MSG(e->n < MAX_EVENTS, "more than %d events", MAX_EVENTS);
    parse_both(data, len, &e->ci[e->n++]);
}

/* A recorded stream, one chunk_info per SSE event. */
static void parse_stream(const char *stem, events *e) {
    char path[256];
    snprintf(path, sizeof path, TRANSCRIPTS "%s.body.txt", stem);
    size_t n;
    char *body = read_file(path, &n);
    CHECK_MSG(body, "cannot read %s", path);
    memset(e, 0, sizeof *e);
    sse_parser p;
    sse_init(&p, 1 << 20, on_event, e);
    CHECK_INT(sse_feed(&p, body, n), 0);
    sse_finish(&p);
    sse_release(&p);
    free(body);
}

/* A recorded body read as one payload (the non-streamed answers). */
static void parse_body(const char *stem, chunk_info *c) {
    char path[256];
    snprintf(path, sizeof path, TRANSCRIPTS "%s.body.txt", stem);
    size_t n;
    char *body = read_file(path, &n);
    CHECK_MSG(body, "cannot read %s", path);
    parse_both(body, n, c);
    free(body);
}

/* No timing value read (a "timings" object may still have been there). */
static int no_timing_values(const chunk_info *c) {
    return isnan(c->timings_prompt_ms) && isnan(c->timings_predicted_ms) &&
           c->timings_prompt_n == -1 && c->timings_predicted_n == -1 && c->timings_cache_n == -1;
}

/* Nothing reported: how every chunk but the one with "timings" reads. */
static int no_timings(const chunk_info *c) {
    return !c->has_timings && no_timing_values(c);
}

/* The values are those of the recorded bodies (grep '"timings"'); the
 * doubles compare exactly, as the compiler and strtod both round a decimal
 * to the nearest double. */
static void check_timings(const chunk_info *c, long cache_n, long prompt_n, double prompt_ms,
                          long predicted_n, double predicted_ms) {
    CHECK(c->has_timings);
    CHECK_INT(c->timings_cache_n, cache_n);
    CHECK_INT(c->timings_prompt_n, prompt_n);
    CHECK_MSG(c->timings_prompt_ms == prompt_ms, "prompt_ms %.17g, want %.17g",
              c->timings_prompt_ms, prompt_ms);
    CHECK_INT(c->timings_predicted_n, predicted_n);
    CHECK_MSG(c->timings_predicted_ms == predicted_ms, "predicted_ms %.17g, want %.17g",
              c->timings_predicted_ms, predicted_ms);
}

/* Only event `last` of the stream reports timings (and cached_tokens when
 * cached >= 0 is given for it). */
static void check_only_event(const events *e, int last, long cached) {
    for (int i = 0; i < e->n; i++) {
        if (i == last)
            continue;
        CHECK_MSG(no_timings(&e->ci[i]), "event %d reports timings", i);
        CHECK_MSG(e->ci[i].cached_tokens == -1, "event %d: cached_tokens %ld", i,
                  e->ci[i].cached_tokens);
    }
    CHECK_INT(e->ci[last].cached_tokens, cached);
}

TEST(chunk_timings_llamacpp_completions_streams) {
    /* 11_ and 12_: the final chunk (text "", finish_reason "length") carries
     * usage with prompt_tokens_details and the timings; [DONE] follows. */
    events e;
    parse_stream("11_v1_completions_stream_usage_ignore_eos", &e);
    CHECK_INT(e.n, 18);
    check_only_event(&e, 16, 6);
    check_timings(&e.ci[16], 6, 1, 19.771, 16, 128.374);
    CHECK(e.ci[16].has_usage && e.ci[16].completion_tokens == 16 && !e.ci[16].malformed);
    CHECK(e.ci[17].done);

    parse_stream("12_v1_completions_stream_no_usage", &e);
    CHECK_INT(e.n, 18);
    check_only_event(&e, 16, 6);
    check_timings(&e.ci[16], 6, 1, 9.37, 16, 126.96);
}

TEST(chunk_timings_llamacpp_chat_streams) {
    /* 13_: the usage-only chunk (choices []) carries the timings; 18_, with
     * no usage asked for, puts them on the finish_reason chunk. */
    events e;
    parse_stream("13_v1_chat_completions_stream_usage", &e);
    CHECK_INT(e.n, 20);
    check_only_event(&e, 18, 0);
    check_timings(&e.ci[18], 0, 35, 47.56, 16, 121.555);

    parse_stream("18_v1_chat_completions_stream_no_usage", &e);
    CHECK_INT(e.n, 19);
    check_only_event(&e, 17, -1);
    check_timings(&e.ci[17], 22, 1, 9.73, 16, 145.023);
    CHECK_STR(e.ci[17].finish_reason, "length");
}

TEST(chunk_timings_llamacpp_native_stream) {
    /* 15_: the "stop": true event carries them (beside generation_settings,
     * whose "timings_per_token" and "tokens_cached" are other keys); no
     * usage, so no cached_tokens. */
    events e;
    parse_stream("15_completion_native_stream", &e);
    CHECK_INT(e.n, 17);
    check_only_event(&e, 16, -1);
    CHECK(e.ci[16].native_stop);
    check_timings(&e.ci[16], 6, 1, 7.979, 16, 119.97);
}

TEST(chunk_timings_llamacpp_non_streamed_bodies) {
    chunk_info c;
    parse_body("10_v1_completions_nonstream", &c);
    check_timings(&c, 0, 7, 17.085, 16, 126.532);
    CHECK_INT(c.cached_tokens, 0);
    parse_body("14_v1_chat_completions_nonstream", &c);
    check_timings(&c, 0, 23, 27.968, 16, 117.017);
    CHECK_INT(c.cached_tokens, 0);
    parse_body("16_completion_native_nonstream", &c);
    check_timings(&c, 6, 1, 11.358, 16, 123.911);
    CHECK_INT(c.cached_tokens, -1);
    /* an error body reports nothing */
    parse_body("25_bad_prompt_longer_than_context", &c);
    CHECK(c.error && no_timings(&c) && c.cached_tokens == -1);
    /* 22_: llama.cpp ignores the model name, so this is a full answer */
    parse_body("22_bad_wrong_model_name", &c);
    CHECK(!c.error && c.has_timings && c.cached_tokens == 6);
}

/* Values no timing or count can be: each is dropped, alone, and the chunk
 * keeps its output and usage. */
static const char *const not_counts[] = {
    "null",  "-1",   "-0.5",  "1.5", "2147483648", "1e10",      "100000000000000000000",
    "1e308", "true", "\"6\"", "{}",  "[1]",        "{\"n\":1}", "2147483647.5",
};
static const char *const not_durations[] = {
    "null", "-1", "-0.001", "-1e308", "true", "false", "\"9.37\"", "{}", "[]", "[9.37]",
};
static const char *const timing_keys[] = {"prompt_ms", "predicted_ms", "prompt_n", "predicted_n",
                                          "cache_n"};

/* The field of c that the timings key reads into, as a double. */
static double timing_field(const chunk_info *c, int key) {
    switch (key) {
    case 0: return c->timings_prompt_ms;
    case 1: return c->timings_predicted_ms;
    case 2: return (double)c->timings_prompt_n;
    case 3: return (double)c->timings_predicted_n;
    default: return (double)c->timings_cache_n;
    }
}

/* A final chunk with text, usage and every timing good, but `key` set to value. */
static void chunk_with_timing(char *buf, size_t cap, int key, const char *value) {
    static const char *const good[] = {"9.37", "126.96", "1", "16", "6"};
    int n = snprintf(buf, cap,
                     "{\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}],\"usage\":"
                     "{\"completion_tokens\":16,\"prompt_tokens\":7},\"timings\":{");
    for (int k = 0; k < 5; k++)
        n += snprintf(buf + n, cap - (size_t)n, "%s\"%s\":%s", k ? "," : "", timing_keys[k],
                      k == key ? value : good[k]);
    snprintf(buf + n, cap - (size_t)n, "}}");
}

static void check_others_kept(const chunk_info *c, int key, const char *value) {
    static const double good[] = {9.37, 126.96, 1, 16, 6};
    CHECK_MSG(!c->malformed && c->has_output && c->has_usage && c->completion_tokens == 16,
              "%s %s spoiled the chunk", timing_keys[key], value);
    CHECK_MSG(c->has_timings, "%s %s: no timings", timing_keys[key], value);
    for (int k = 0; k < 5; k++)
        if (k != key)
            CHECK_MSG(timing_field(c, k) == good[k], "%s %s changed %s", timing_keys[key], value,
                      timing_keys[k]);
}

TEST(chunk_timings_values_that_cannot_be_true_are_dropped) {
    char buf[512];
    chunk_info c;
    for (int key = 0; key < 5; key++) {
        int duration = key < 2;
        size_t n = duration ? sizeof not_durations / sizeof *not_durations
                            : sizeof not_counts / sizeof *not_counts;
        for (size_t i = 0; i < n; i++) {
            const char *value = duration ? not_durations[i] : not_counts[i];
            chunk_with_timing(buf, sizeof buf, key, value);
            parse_str(buf, &c);
            check_others_kept(&c, key, value);
            if (duration)
                CHECK_MSG(isnan(timing_field(&c, key)), "%s %s read", timing_keys[key], value);
            else
                CHECK_MSG(timing_field(&c, key) == -1, "%s %s read", timing_keys[key], value);
        }
        /* absent: the key left out altogether */
        chunk_with_timing(buf, sizeof buf, key, "0");
        char *at = strstr(buf, timing_keys[key]) - 1;
        char *end = strpbrk(at + 1, ",}");
        memmove(at, *end == ',' ? end + 1 : end, strlen(end) + 1);
        if (at[-1] == ',' && at[0] == '}')
            memmove(at - 1, at, strlen(at) + 1);
        parse_str(buf, &c);
        check_others_kept(&c, key, "(absent)");
        CHECK_MSG(duration ? isnan(timing_field(&c, key)) : timing_field(&c, key) == -1,
                  "%s absent read", timing_keys[key]);
    }
}

TEST(chunk_timings_edge_values) {
    chunk_info c;
    /* Large but true values are kept: any finite duration, counts up to 2^31 - 1. */
    parse_str("{\"timings\":{\"prompt_ms\":1e308,\"predicted_ms\":0,\"prompt_n\":2147483647,"
              "\"predicted_n\":2147483647.0,\"cache_n\":0}}",
              &c);
    CHECK(!c.malformed && c.has_timings);
    CHECK(c.timings_prompt_ms == 1e308 && c.timings_predicted_ms == 0);
    CHECK(c.timings_prompt_n == 2147483647 && c.timings_predicted_n == 2147483647);
    CHECK_INT(c.timings_cache_n, 0);
    /* -0 reads as 0, not as a negative duration */
    parse_str("{\"timings\":{\"prompt_ms\":-0,\"predicted_ms\":-0.0,\"cache_n\":-0}}", &c);
    CHECK(c.timings_prompt_ms == 0 && !signbit(c.timings_prompt_ms));
    CHECK(c.timings_predicted_ms == 0 && !signbit(c.timings_predicted_ms));
    CHECK_INT(c.timings_cache_n, 0);
    /* Integers written as reals, exponents, long digit strings. */
    parse_str("{\"timings\":{\"prompt_ms\":12,\"predicted_ms\":1.2e2,\"prompt_n\":1e1,"
              "\"predicted_n\":16.000000000000001,\"cache_n\":"
              "6.0000000000000000000000000000000000000000000000000000000000000000000000}}",
              &c);
    CHECK(c.timings_prompt_ms == 12 && c.timings_predicted_ms == 120);
    CHECK(c.timings_prompt_n == 10 && c.timings_predicted_n == 16 && c.timings_cache_n == 6);
    parse_str("{\"timings\":{\"prompt_ms\":"
              "9.3700000000000000000000000000000000000000000000000000000000000000000001}}",
              &c);
    CHECK(c.timings_prompt_ms == 9.37);
    /* A number too big for a double makes the JSON itself invalid, as anywhere. */
    parse_str("{\"timings\":{\"prompt_ms\":1e309}}", &c);
    CHECK(c.malformed && no_timings(&c));
    /* An empty object is timings with nothing in it; other types are none. */
    parse_str("{\"timings\":{}}", &c);
    CHECK(c.has_timings && no_timing_values(&c));
    const char *not_objects[] = {"null", "[]", "\"x\"", "1", "true"};
    char buf[128];
    for (size_t i = 0; i < sizeof not_objects / sizeof *not_objects; i++) {
        snprintf(buf, sizeof buf, "{\"choices\":[{\"text\":\"a\"}],\"timings\":%s}",
                 not_objects[i]);
        parse_str(buf, &c);
        CHECK_MSG(!c.malformed && c.has_output && no_timings(&c), "timings %s", not_objects[i]);
    }
}

TEST(chunk_timings_keys) {
    chunk_info c;
    /* Keys compare decoded; the last of a repeated key counts, the whole
     * object included; timings anywhere but the top level are not read. */
    parse_str("{\"t\\u0069mings\":{\"prompt\\u005fms\":1.5,\"cache_\\u006e\":3}}", &c);
    CHECK(c.has_timings && c.timings_prompt_ms == 1.5 && c.timings_cache_n == 3);
    parse_str("{\"timings\":{\"prompt_ms\":1.5,\"prompt_ms\":null,\"cache_n\":3,\"cache_n\":4}}",
              &c);
    CHECK(isnan(c.timings_prompt_ms) && c.timings_cache_n == 4);
    parse_str("{\"timings\":{\"prompt_ms\":1.5},\"timings\":{\"cache_n\":2}}", &c);
    CHECK(c.has_timings && isnan(c.timings_prompt_ms) && c.timings_cache_n == 2);
    parse_str("{\"timings\":{\"prompt_ms\":1.5},\"timings\":null}", &c);
    CHECK(no_timings(&c));
    parse_str("{\"choices\":[{\"text\":\"a\",\"timings\":{\"prompt_ms\":1}}],\"usage\":"
              "{\"completion_tokens\":1,\"timings\":{\"prompt_ms\":1}},\"x\":{\"timings\":{}}}",
              &c);
    CHECK(!c.malformed && no_timings(&c));
    parse_str("{\"timings_per_token\":{\"prompt_ms\":1},\"timing\":{\"prompt_ms\":1},"
              "\"Timings\":{\"prompt_ms\":1},\"timings\":{\"prompt_ms \":1,\"Prompt_ms\":2,"
              "\"prompt_per_token_ms\":3,\"predicted_per_second\":4}}",
              &c);
    CHECK(c.has_timings && no_timing_values(&c));
    /* Malformed JSON elsewhere, an error, [DONE]: nothing reported. */
    parse_str("{\"timings\":{\"prompt_ms\":1.5},\"x\":}", &c);
    CHECK(c.malformed && no_timings(&c));
    parse_str("{\"timings\":{\"prompt_ms\":1.5},\"error\":{\"message\":\"m\"}}", &c);
    CHECK(c.error && no_timings(&c));
    parse_str("[DONE]", &c);
    CHECK(c.done && no_timings(&c) && c.cached_tokens == -1);
    parse_both(NULL, 0, &c);
    CHECK(c.malformed && no_timings(&c) && c.cached_tokens == -1);
}

/* A usage with prompt_tokens_details, its cached_tokens set to value. */
static void cached(const char *value, chunk_info *c) {
    char buf[256];
    snprintf(buf, sizeof buf,
             "{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":16,"
             "\"prompt_tokens_details\":{\"audio_tokens\":1,\"cached_tokens\":%s}}}",
             value);
    parse_str(buf, c);
}

TEST(chunk_cached_tokens) {
    chunk_info c;
    cached("6", &c);
    CHECK_INT(c.cached_tokens, 6);
    CHECK(c.has_usage && c.prompt_tokens == 7 && no_timings(&c));
    cached("0", &c);
    CHECK_INT(c.cached_tokens, 0);
    cached("2147483647", &c);
    CHECK_INT(c.cached_tokens, 2147483647);
    cached("-0", &c);
    CHECK_INT(c.cached_tokens, 0);
    cached("6.0", &c);
    CHECK_INT(c.cached_tokens, 6);
    for (size_t i = 0; i < sizeof not_counts / sizeof *not_counts; i++) {
        cached(not_counts[i], &c);
        CHECK_MSG(!c.malformed && c.has_usage && c.completion_tokens == 16 && c.prompt_tokens == 7,
                  "cached_tokens %s spoiled the chunk", not_counts[i]);
        CHECK_MSG(c.cached_tokens == -1, "cached_tokens %s read as %ld", not_counts[i],
                  c.cached_tokens);
    }
    /* Any level missing or of another type: absent. */
    const char *shapes[] = {
        "{\"choices\":[]}",
        "{\"usage\":null}",
        "{\"usage\":{\"completion_tokens\":1}}",
        "{\"usage\":{\"completion_tokens\":1,\"prompt_tokens_details\":null}}",
        "{\"usage\":{\"completion_tokens\":1,\"prompt_tokens_details\":[6]}}",
        "{\"usage\":{\"completion_tokens\":1,\"prompt_tokens_details\":{}}}",
        "{\"usage\":{\"completion_tokens\":1,\"cached_tokens\":6}}",
        "{\"prompt_tokens_details\":{\"cached_tokens\":6}}",
        "{\"usage\":{\"completion_tokens\":1,\"completion_tokens_details\":{\"cached_tokens\":6}}}",
        "{\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":6}},\"usage\":{}}",
        "{\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":6},\"prompt_tokens_details\":1}}",
        "{\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":6,\"cached_tokens\":null}}}",
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        parse_str(shapes[i], &c);
        CHECK_MSG(!c.malformed && c.cached_tokens == -1, "%s: %ld", shapes[i], c.cached_tokens);
    }
    /* Without completion_tokens it is read all the same, escaped keys too. */
    parse_str("{\"usage\":{\"prompt_tokens_d\\u0065tails\":{\"cached_\\u0074okens\":5}}}", &c);
    CHECK(!c.has_usage && c.cached_tokens == 5);
    /* A usage count that cannot be true still makes the chunk malformed,
     * reporting nothing. */
    parse_str("{\"usage\":{\"completion_tokens\":-1,\"prompt_tokens_details\":{\"cached_tokens\":"
              "6}},\"timings\":{\"prompt_ms\":1}}",
              &c);
    CHECK(c.malformed && c.bad_count && c.cached_tokens == -1 && no_timings(&c));
}
