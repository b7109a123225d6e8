/* Chunk interpretation tests: the recorded llama.cpp server streams run
 * through the SSE parser and chunk_parse (event counts, which events are
 * output, where usage and the end markers are, the error bodies), then
 * hand-written chunks in the vLLM, OpenAI, SGLang, TGI and Ollama dialects,
 * and inputs that must not crash: truncations, garbage, wrong JSON types,
 * numbers out of range.
 *
 * Every input goes through parse_both (chunk_both.h): the hand-written
 * scanner and the jansson reading it replaced must agree exactly. The
 * scanner's own edge cases against jansson are in t3040-chunk-fast-scanner-agrees.c. */
#include "chunk_both.h"
#include "protocol/chunk.h"
#include "protocol/sse.h"
#include "support.h"
#include "test.h"

#include <stdint.h>
#include <string.h>

#define MAX_EV 64

/* One streamed body, parsed: each event's chunk_info and its data. */
typedef struct stream {
    int n;
    chunk_info ci[MAX_EV];
    int outputs, dones, usages, malformed, errors;
} stream;

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    stream *s = ud;
    CHECK_STR(type, "message");
    CHECK_MSG(s->n < MAX_EV, "more than %d events", MAX_EV);
    chunk_info *c = &s->ci[s->n++];
    parse_both(data, len, c);
    s->outputs += c->has_output;
    s->dones += c->done;
    s->usages += c->has_usage;
    s->malformed += c->malformed;
    s->errors += c->error;
}

static void parse_stream(const char *name, stream *s) {
    char path[256];
    snprintf(path, sizeof path, TRANSCRIPTS "%s.body.txt", name);
    size_t n;
    char *body = read_file(path, &n);
    CHECK_MSG(body, "cannot read %s", path);
    memset(s, 0, sizeof *s);
    sse_parser p;
    sse_init(&p, 1 << 20, on_event, s);
    CHECK_INT(sse_feed(&p, body, n), 0);
    sse_finish(&p);
    sse_release(&p);
    free(body);
}

static void parse_body(const char *name, chunk_info *c) {
    char path[256];
    snprintf(path, sizeof path, TRANSCRIPTS "%s.body.txt", name);
    size_t n;
    char *body = read_file(path, &n);
    CHECK_MSG(body, "cannot read %s", path);
    parse_both(body, n, c);
    free(body);
}

/* The counts below were read off the files once (each event is one
 * "data: ..." line followed by a blank line; every body ends in "\n\n") by
 * counting the data lines and those whose JSON has non-empty
 * choices[].text, delta.content or top-level content. They are fixed data. */

TEST(chunk_llamacpp_completions_stream_usage) {
    /* 11_: 16 tokens (ignore_eos), include_usage. 16 text chunks, then the
     * final chunk (text "", finish_reason "length", usage), then [DONE]. */
    stream s;
    parse_stream("11_v1_completions_stream_usage_ignore_eos", &s);
    CHECK_INT(s.n, 18);
    CHECK_INT(s.outputs, 16);
    CHECK_INT(s.malformed + s.errors, 0);
    for (int i = 0; i < 16; i++) {
        CHECK_MSG(s.ci[i].has_output, "event %d is not output", i);
        CHECK_STR(s.ci[i].finish_reason, "");
        CHECK(!s.ci[i].has_usage);
    }
    /* Usage rides on the final chunk; no separate usage-only chunk. */
    CHECK_INT(s.usages, 1);
    CHECK(!s.ci[16].has_output);
    CHECK(s.ci[16].has_usage);
    CHECK_INT(s.ci[16].completion_tokens, 16);
    CHECK_INT(s.ci[16].prompt_tokens, 7);
    CHECK_STR(s.ci[16].finish_reason, "length");
    CHECK_INT(s.dones, 1);
    CHECK(s.ci[17].done);
}

TEST(chunk_llamacpp_completions_stream_no_stream_options) {
    /* 12_: no stream_options, yet the final chunk still carries usage. */
    stream s;
    parse_stream("12_v1_completions_stream_no_usage", &s);
    CHECK_INT(s.n, 18);
    CHECK_INT(s.outputs, 16);
    CHECK_INT(s.usages, 1);
    CHECK(s.ci[16].has_usage);
    CHECK_INT(s.ci[16].completion_tokens, 16);
    CHECK_STR(s.ci[16].finish_reason, "length");
    CHECK(s.ci[17].done);
}

TEST(chunk_llamacpp_completions_stream_include_usage_false) {
    /* 19_: 8 tokens, include_usage false: usage is sent all the same. */
    stream s;
    parse_stream("19_v1_completions_stream_usage_false", &s);
    CHECK_INT(s.n, 10);
    CHECK_INT(s.outputs, 8);
    CHECK_INT(s.usages, 1);
    CHECK(s.ci[8].has_usage && !s.ci[8].has_output);
    CHECK_INT(s.ci[8].completion_tokens, 8);
    CHECK_INT(s.ci[8].prompt_tokens, 7);
    CHECK(s.ci[9].done);
}

TEST(chunk_llamacpp_chat_stream_usage) {
    /* 13_: role chunk (content null), 16 content deltas, an empty delta with
     * finish_reason, a usage-only chunk (choices []), [DONE]. */
    stream s;
    parse_stream("13_v1_chat_completions_stream_usage", &s);
    CHECK_INT(s.n, 20);
    CHECK_INT(s.outputs, 16);
    CHECK_INT(s.malformed + s.errors, 0);
    CHECK(!s.ci[0].has_output); /* {"role":"assistant","content":null} */
    for (int i = 1; i <= 16; i++)
        CHECK_MSG(s.ci[i].has_output, "event %d is not output", i);
    CHECK(!s.ci[17].has_output);
    CHECK_STR(s.ci[17].finish_reason, "length");
    CHECK(!s.ci[17].has_usage);
    CHECK_INT(s.usages, 1);
    CHECK(s.ci[18].has_usage && !s.ci[18].has_output);
    CHECK_INT(s.ci[18].completion_tokens, 16);
    CHECK_INT(s.ci[18].prompt_tokens, 35);
    CHECK_STR(s.ci[18].finish_reason, "");
    CHECK_INT(s.dones, 1);
    CHECK(s.ci[19].done);
}

TEST(chunk_llamacpp_chat_stream_no_usage) {
    /* 18_: chat without include_usage: no usage anywhere. */
    stream s;
    parse_stream("18_v1_chat_completions_stream_no_usage", &s);
    CHECK_INT(s.n, 19);
    CHECK_INT(s.outputs, 16);
    CHECK_INT(s.usages, 0);
    CHECK(!s.ci[0].has_output);
    CHECK_STR(s.ci[17].finish_reason, "length");
    CHECK(s.ci[18].done);
}

TEST(chunk_llamacpp_native_completion_stream) {
    /* 15_: native /completion: 16 content events with "tokens":[id] each,
     * then a final "stop": true event with empty content; no [DONE]. */
    stream s;
    parse_stream("15_completion_native_stream", &s);
    CHECK_INT(s.n, 17);
    CHECK_INT(s.outputs, 16);
    CHECK_INT(s.dones, 0);
    CHECK_INT(s.usages, 0);
    CHECK_INT(s.malformed + s.errors, 0);
    int tokens = 0;
    for (int i = 0; i < 16; i++) {
        CHECK(!s.ci[i].native_stop);
        CHECK_INT(s.ci[i].output_tokens, 1);
        tokens += s.ci[i].output_tokens;
    }
    CHECK_INT(tokens, 16);
    const chunk_info *last = &s.ci[16];
    CHECK(last->native_stop);
    CHECK(!last->has_output);
    CHECK_INT(last->output_tokens, 0);
    CHECK_STR(last->finish_reason, "stop");
}

TEST(chunk_llamacpp_error_bodies) {
    /* Plain JSON answers, not SSE, even for 26_ which asked to stream. */
    static const struct {
        const char *name, *message;
    } bad[] = {
        {"20_bad_invalid_json",
         "[json.exception.parse_error.101] parse error at line 1, column 49: "
         "syntax error while parsing object key - unexpected end of input; "
         "expected string literal"},
        {"23_bad_missing_prompt", "[json.exception.out_of_range.403] key 'prompt' not found"},
        {"24_bad_chat_missing_messages", "'messages' is required"},
        {"25_bad_prompt_longer_than_context",
         "request (9801 tokens) exceeds the available context size (1024 tokens), try increasing "
         "it"},
        {"26_bad_prompt_longer_than_context_stream",
         "request (9801 tokens) exceeds the available context size (1024 tokens), try increasing "
         "it"},
        {"28_bad_max_tokens_string",
         "Field 'max_tokens': [json.exception.type_error.302] type must be number, but is string"},
        {"29_bad_max_tokens_negative",
         "Field 'max_tokens': Value must be between -1 <= value <= 2147483647, but got -5"},
        {"31_bad_unknown_path", "File Not Found"},
        {"32_bad_wrong_method", "File Not Found"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        chunk_info c;
        parse_body(bad[i].name, &c);
        CHECK_MSG(c.error, "%s: not an error", bad[i].name);
        CHECK_MSG(!c.malformed && !c.has_output && !c.done, "%s: wrong flags", bad[i].name);
        CHECK_STR(c.error_message, bad[i].message);
    }
    /* 30_: an empty request body is a 500, like invalid JSON (20_). */
    chunk_info c;
    parse_body("30_bad_empty_body", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "[json.exception.parse_error.101] parse error at line 1, column 1: "
                               "attempting to parse an empty input; check that your input string "
                               "or stream contains the expected JSON");

    /* The stream-requested error has no SSE events at all: the caller must
     * look at the status line, not wait for data. */
    stream s;
    parse_stream("26_bad_prompt_longer_than_context_stream", &s);
    CHECK_INT(s.n, 0);
}

TEST(chunk_llamacpp_model_field_errors_are_not_errors) {
    /* 21_/22_: llama.cpp ignores "model": a missing or wrong one still gets
     * a normal 200 completion. */
    const char *names[] = {"21_bad_missing_model_field", "22_bad_wrong_model_name"};
    for (int i = 0; i < 2; i++) {
        chunk_info c;
        parse_body(names[i], &c);
        CHECK_MSG(!c.error && !c.malformed, "%s", names[i]);
        CHECK(c.has_output);
        CHECK(c.has_usage);
        CHECK_INT(c.completion_tokens, 8);
        CHECK_INT(c.prompt_tokens, 7);
        CHECK_STR(c.finish_reason, "length");
    }
}

TEST(chunk_llamacpp_non_streamed_bodies) {
    chunk_info c;
    parse_body("10_v1_completions_nonstream", &c);
    CHECK(c.has_output && c.has_usage && !c.error);
    CHECK_INT(c.completion_tokens, 16);
    CHECK_STR(c.finish_reason, "length");

    parse_body("14_v1_chat_completions_nonstream", &c); /* choices[].message */
    CHECK(c.has_output && c.has_usage);
    CHECK_INT(c.prompt_tokens, 23);

    parse_body("16_completion_native_nonstream", &c);
    CHECK(c.has_output && c.native_stop && !c.has_usage);
    CHECK_STR(c.finish_reason, "stop");

    parse_body("33_bad_n_2", &c); /* two choices, under-reported usage */
    CHECK(c.has_output);
    CHECK_INT(c.completion_tokens, 4);
}

/* Hand-written chunks in the other servers' dialects. */

TEST(chunk_completions_text) {
    chunk_info c;
    parse_str("{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
              "\"choices\":[{\"index\":0,\"text\":\" Hello\",\"logprobs\":null,"
              "\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}",
              &c);
    CHECK(c.has_output);
    CHECK(!c.has_usage && !c.error && !c.malformed && !c.done && !c.native_stop);
    CHECK_INT(c.output_tokens, 0);
    CHECK_STR(c.finish_reason, "");

    parse_str("{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":null}]}", &c);
    CHECK(!c.has_output);
    parse_str("{\"choices\":[{\"index\":0,\"text\":null}]}", &c);
    CHECK(!c.has_output);
    /* n > 1: output in any choice counts. */
    parse_str("{\"choices\":[{\"index\":0,\"text\":\"\"},{\"index\":1,\"text\":\"x\"}]}", &c);
    CHECK(c.has_output);
}

TEST(chunk_chat_content_delta) {
    chunk_info c;
    parse_str("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
              "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},"
              "\"logprobs\":null,\"finish_reason\":null}]}",
              &c);
    CHECK(c.has_output);
    /* Ollama and TGI send the role on every delta, with the content. */
    parse_str("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"llama3\","
              "\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":"
              "{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}",
              &c);
    CHECK(c.has_output);
    parse_str("{\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":1,\"model\":\"tgi\","
              "\"system_fingerprint\":\"2.0.1-native\",\"choices\":[{\"index\":0,\"delta\":"
              "{\"role\":\"assistant\",\"content\":\"Hello\",\"tool_calls\":null},"
              "\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}",
              &c);
    CHECK(c.has_output && !c.has_usage);
}

TEST(chunk_reasoning_deltas) {
    chunk_info c;
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Let me\"},"
              "\"finish_reason\":null}]}",
              &c);
    CHECK(c.has_output);
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning\":\"think\"}}]}",
              &c);
    CHECK(c.has_output);
    parse_str(
        "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\",\"reasoning_content\":\"\"}}]}",
        &c);
    CHECK(!c.has_output);
}

TEST(chunk_tool_calls_delta) {
    chunk_info c;
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"tool_calls\":[{\"index\":0,"
              "\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
              "\"arguments\":\"\"}}]},\"finish_reason\":null}]}",
              &c);
    CHECK(c.has_output);
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
              "{\"arguments\":\"{\\\"city\\\":\"}}]}}]}",
              &c);
    CHECK(c.has_output);
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[]}}]}", &c);
    CHECK(!c.has_output);
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":null}}]}", &c);
    CHECK(!c.has_output);
}

TEST(chunk_role_only_delta_is_not_output) {
    const char *role_only[] = {
        "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
        "\"logprobs\":null,\"finish_reason\":null}]}",
        "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}",
        "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}",
        "{\"choices\":[{\"index\":0,\"delta\":{}}]}",
        "{\"choices\":[{\"index\":0,\"delta\":null}]}",
        "{\"choices\":[{\"index\":0,\"delta\":{\"content\":42}}]}",
    };
    for (size_t i = 0; i < sizeof role_only / sizeof role_only[0]; i++) {
        chunk_info c;
        parse_str(role_only[i], &c);
        CHECK_MSG(!c.has_output, "case %zu counted as output", i);
        CHECK_MSG(!c.malformed && !c.error, "case %zu", i);
    }
}

TEST(chunk_usage_only_chunk) {
    chunk_info c;
    parse_str("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
              "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,"
              "\"total_tokens\":140,\"completion_tokens\":128}}",
              &c);
    CHECK(!c.has_output);
    CHECK(c.has_usage);
    CHECK_INT(c.prompt_tokens, 12);
    CHECK_INT(c.completion_tokens, 128);
    CHECK_STR(c.finish_reason, "");

    /* OpenAI with include_usage: "usage": null on every other chunk. */
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\"usage\":null}", &c);
    CHECK(c.has_output && !c.has_usage);
    /* Without completion_tokens there is no usable usage. */
    parse_str("{\"choices\":[],\"usage\":{\"prompt_tokens\":12}}", &c);
    CHECK(!c.has_usage);
    CHECK_INT(c.prompt_tokens, 0);
    /* prompt_tokens is optional. */
    parse_str("{\"choices\":[],\"usage\":{\"completion_tokens\":3}}", &c);
    CHECK(c.has_usage);
    CHECK_INT(c.completion_tokens, 3);
    CHECK_INT(c.prompt_tokens, 0);
}

TEST(chunk_continuous_usage_on_content_chunk) {
    /* vLLM's continuous_usage_stats: cumulative usage on every chunk. */
    chunk_info c;
    parse_str("{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
              "\"choices\":[{\"index\":0,\"text\":\" the\",\"logprobs\":null,"
              "\"finish_reason\":null,\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":5,"
              "\"total_tokens\":9,\"completion_tokens\":4}}",
              &c);
    CHECK(c.has_output);
    CHECK(c.has_usage);
    CHECK_INT(c.completion_tokens, 4);
    CHECK_INT(c.prompt_tokens, 5);
    CHECK_INT(c.output_tokens, 0); /* the caller takes differences */
}

TEST(chunk_finish_reason_on_last_chunk) {
    chunk_info c;
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
              "\"finish_reason\":\"stop\",\"stop_reason\":null}]}",
              &c);
    CHECK_STR(c.finish_reason, "stop");
    CHECK(!c.has_output);
    /* Last token and finish_reason together (SGLang, TGI). */
    parse_str("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},"
              "\"finish_reason\":\"length\"}]}",
              &c);
    CHECK_STR(c.finish_reason, "length");
    CHECK(c.has_output);
    /* Only the first choice's; a long one is cut to the field. */
    parse_str("{\"choices\":[{\"finish_reason\":\"tool_calls\"},{\"finish_reason\":\"stop\"}]}",
              &c);
    CHECK_STR(c.finish_reason, "tool_calls");
    parse_str("{\"choices\":[{\"finish_reason\":\"abcdefghijklmnopqrstuvwxyz0123\"}]}", &c);
    CHECK_STR(c.finish_reason, "abcdefghijklmnopqrstuvw");
    parse_str("{\"choices\":[{\"finish_reason\":7}]}", &c);
    CHECK_STR(c.finish_reason, "");
}

TEST(chunk_native_stop_event) {
    chunk_info c;
    parse_str("{\"index\":0,\"content\":\" tok\",\"tokens\":[5,6],\"stop\":false}", &c);
    CHECK(c.has_output && !c.native_stop);
    CHECK_INT(c.output_tokens, 2);
    parse_str("{\"index\":0,\"content\":\"\",\"tokens\":[],\"stop\":true,\"stop_type\":\"eos\"}",
              &c);
    CHECK(!c.has_output && c.native_stop);
    CHECK_STR(c.finish_reason, "stop");
    parse_str("{\"content\":\"x\",\"stop\":\"yes\"}", &c); /* not the boolean */
    CHECK(c.has_output && !c.native_stop);
    CHECK_INT(c.output_tokens, 0);
    parse_str("{\"tokens\":[1,2,3]}", &c); /* /tokenize, not a stream chunk */
    CHECK_INT(c.output_tokens, 0);
}

TEST(chunk_error_objects) {
    chunk_info c;
    parse_str("{\"error\":{\"message\":\"x\"}}", &c);
    CHECK(c.error && !c.malformed && !c.has_output);
    CHECK_STR(c.error_message, "x");

    /* vLLM / SGLang ErrorResponse. */
    parse_str("{\"object\":\"error\",\"message\":\"y\",\"type\":\"BadRequestError\","
              "\"param\":null,\"code\":400}",
              &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "y");

    /* vLLM's mid-stream error, nested. */
    parse_str("{\"error\":{\"object\":\"error\",\"message\":\"engine dead\",\"code\":500}}", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "engine dead");

    /* TGI: the error as a string. */
    parse_str("{\"error\":\"Input validation error: too long\",\"error_type\":\"validation\"}", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "Input validation error: too long");

    /* No message: the type, else the code, else the object itself. */
    parse_str("{\"error\":{\"type\":\"overloaded_error\",\"code\":529}}", &c);
    CHECK_STR(c.error_message, "overloaded_error");
    parse_str("{\"error\":{\"code\":500}}", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "error code 500");
    parse_str("{\"error\":{\"message\":[\"a\",\"b\"]}}", &c);
    CHECK_STR(c.error_message, "[\"a\",\"b\"]");
    parse_str("{\"error\":true}", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "{\"error\":true}");

    /* A null (or false) error is no error; output still counts. */
    parse_str("{\"error\":null,\"choices\":[{\"text\":\"a\"}]}", &c);
    CHECK(!c.error && c.has_output);
    parse_str(
        "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}", &c);
    CHECK(!c.error && c.has_output);
}

TEST(chunk_long_error_message_cut_at_character) {
    /* 300 two-byte characters: the cut must not split one. */
    char msg[700] = "{\"error\":{\"message\":\"";
    for (int i = 0; i < 300; i++)
        strcat(msg, "\xC3\xA9");
    strcat(msg, "\"}}");
    chunk_info c;
    parse_str(msg, &c);
    CHECK(c.error);
    size_t n = strlen(c.error_message);
    CHECK_INT(n, 254); /* 127 whole characters fit in 255 bytes */
    CHECK((n % 2) == 0 && (unsigned char)c.error_message[n - 1] == 0xA9);
}

TEST(chunk_done_marker) {
    chunk_info c;
    parse_str("[DONE]", &c);
    CHECK(c.done && !c.malformed && !c.error && !c.has_output);
    parse_str(" [DONE]\r\n", &c);
    CHECK(c.done);
    parse_both("[DONE]garbage", 6, &c); /* only len bytes are read */
    CHECK(c.done);
    parse_str("[DONE]x", &c);
    CHECK(!c.done && c.malformed);
    parse_str("[done]", &c);
    CHECK(!c.done && c.malformed);
    parse_str("\"[DONE]\"", &c);
    CHECK(!c.done && c.malformed);
}

TEST(chunk_malformed_inputs) {
    const char *bad[] = {
        "{\"id\":",
        "",
        "   ",
        "garbage",
        "null",
        "42",
        "\"str\"",
        "true",
        "[]",
        "[{\"choices\":[{\"text\":\"a\"}]}]",
        "{\"a\":1} {\"b\":2}",
        "{\"a\":1} x",
        "{'a':1}",
        "{\"choices\":[{\"text\":\"unterminated}]}",
        "data: {\"a\":1}",
        "{\"a\":1e400}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        chunk_info c;
        parse_str(bad[i], &c);
        CHECK_MSG(c.malformed, "'%s' not malformed", bad[i]);
        CHECK_MSG(!c.has_output && !c.done && !c.error && !c.has_usage, "'%s' has flags", bad[i]);
    }
    chunk_info c;
    parse_both(NULL, 0, &c);
    CHECK(c.malformed);
    parse_both("{\"a\":\"x\0y\"}", 11, &c); /* a NUL inside */
    CHECK(c.malformed);
    parse_both("\xFF\xFE{}", 4, &c);
    CHECK(c.malformed);

    /* Deep nesting must not overflow the stack. */
    size_t depth = 200000;
    char *deep = malloc(depth * 2 + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    parse_both(deep, depth * 2, &c);
    CHECK(c.malformed);
    free(deep);
}

TEST(chunk_every_truncation_and_byte_flip_is_safe) {
    const char *good = "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\","
                       "\"tool_calls\":[{\"index\":0}]},\"finish_reason\":\"stop\"}],"
                       "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}";
    size_t n = strlen(good);
    chunk_info c;
    for (size_t len = 0; len < n; len++) {
        parse_both(good, len, &c);
        CHECK_MSG(c.malformed, "prefix of %zu bytes parsed", len);
    }
    parse_both(good, n, &c);
    CHECK(c.has_output && c.has_usage && !c.malformed);

    /* Each byte replaced by each of a few troublesome values; and a
     * deterministic stream of random inputs. */
    char buf[512];
    const char subst[] = {'\0', '"', '\\', '{', '}', '[', ']', ':', ',', '\n', (char)0xC3, '9'};
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof subst; k++) {
            memcpy(buf, good, n);
            buf[i] = subst[k];
            parse_both(buf, n, &c);
            CHECK(c.finish_reason[sizeof c.finish_reason - 1] == '\0');
        }
    }
    static const char alphabet[] = "{}[]\":,0123456789eE.-+ \\tnulrfasDONE"; /* and NUL */
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t want = x % sizeof buf;
        while (len < want) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[len++] = alphabet[x % sizeof alphabet];
        }
        parse_both(buf, len, &c);
        CHECK(c.error_message[sizeof c.error_message - 1] == '\0');
    }
}

TEST(chunk_numbers_out_of_range) {
    chunk_info c;
    /* A huge integer in an unrelated field does not spoil the chunk. */
    parse_str("{\"created\":123456789012345678901234567890,\"seed\":18446744073709551615,"
              "\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
              &c);
    CHECK(!c.malformed && c.has_output);

    /* A count that cannot be true makes the chunk malformed (see also
     * t3050-chunk-impossible-counts.c); a usage that is not an object, or a null count,
     * is no usage. */
    const char *bad_usage[] = {
        "{\"usage\":{\"completion_tokens\":100000000000000000000}}",
        "{\"usage\":{\"completion_tokens\":-1}}",
        "{\"usage\":{\"completion_tokens\":1.5}}",
        "{\"usage\":{\"completion_tokens\":\"16\"}}",
        "{\"usage\":{\"completion_tokens\":9007199254740992,\"prompt_tokens\":1e3}}",
        "{\"usage\":{\"completion_tokens\":16.0,\"prompt_tokens\":-3}}",
    };
    for (size_t i = 0; i < sizeof bad_usage / sizeof bad_usage[0]; i++) {
        parse_str(bad_usage[i], &c);
        CHECK_MSG(c.malformed && c.bad_count && !c.has_usage, "'%s'", bad_usage[i]);
    }
    const char *no_usage[] = {
        "{\"usage\":{\"completion_tokens\":null}}",
        "{\"usage\":[16]}",
        "{\"usage\":16}",
    };
    for (size_t i = 0; i < sizeof no_usage / sizeof no_usage[0]; i++) {
        parse_str(no_usage[i], &c);
        CHECK_MSG(!c.malformed && !c.has_usage, "'%s'", no_usage[i]);
    }
    parse_str("{\"usage\":{\"completion_tokens\":2147483647,\"prompt_tokens\":1e3}}", &c);
    CHECK(c.has_usage);
    CHECK_INT(c.completion_tokens, 2147483647);
    CHECK_INT(c.prompt_tokens, 1000);
    parse_str("{\"usage\":{\"completion_tokens\":16.0,\"prompt_tokens\":null}}", &c);
    CHECK(c.has_usage);
    CHECK_INT(c.completion_tokens, 16);
    CHECK_INT(c.prompt_tokens, 0);
}
