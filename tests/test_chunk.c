/* Chunk interpretation tests: the recorded llama.cpp server streams run
 * through the SSE parser and chunk_parse (event counts, which events are
 * output, where usage and the end markers are, the error bodies), then
 * hand-written chunks in the vLLM, OpenAI, SGLang, TGI and Ollama dialects,
 * and inputs that must not crash: truncations, garbage, wrong JSON types,
 * numbers out of range.
 *
 * chunk_parse is a hand-written scanner that must agree exactly with the
 * jansson reading it replaced (chunk_parse_reference), so every input here
 * goes through both and the two chunk_info must be identical: the recorded
 * streams, each hand-written chunk, JSON edge cases (escaped and repeated
 * keys, nesting at jansson's depth limit, numbers at the edge of a double,
 * surrogates, bad UTF-8) and a seeded stream of mutated chunks. */
#include "client/chunk.h"
#include "client/sse.h"
#include "support.h"
#include "test.h"

#include <glob.h>
#include <stdint.h>
#include <string.h>

/* The jansson reading, defined in chunk.c (not part of chunk.h). */

#define TRANSCRIPTS "tests/data/transcripts/llama.cpp-server/"
#define MAX_EV 64

/* The input, printable, for a failure message. */
static const char *show(const char *data, size_t len) {
    static char buf[700];
    size_t n = 0;
    if (!data)
        return "(null)";
    for (size_t i = 0; i < len && n < sizeof buf - 8; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c >= 0x20 && c < 0x7F && c != '\\')
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, sizeof buf - n, "\\x%02X", c);
    }
    if (n >= sizeof buf - 8)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "...");
    buf[n] = '\0';
    return buf;
}

/* chunk_parse into *c, failing the test unless chunk_parse_reference reads
 * the same input into the same chunk_info, field by field. */
static void parse_both(const char *data, size_t len, chunk_info *c) {
    chunk_info r;
    memset(c, 0xA5, sizeof *c); /* both must write every field */
    memset(&r, 0x5A, sizeof r);
    /* An exact-size copy, so that AddressSanitizer sees any read past len. */
    char *copy = data ? malloc(len ? len : 1) : NULL;
    if (copy)
        memcpy(copy, data, len);
    chunk_parse(copy, len, c);
    chunk_parse_reference(copy, len, &r);
    free(copy);
#define SAME_INT(f)                                                                                \
    CHECK_MSG(c->f == r.f, "%s: fast %ld, jansson %ld, on '%s'", #f, (long)c->f, (long)r.f,        \
              show(data, len))
#define SAME_STR(f)                                                                                \
    CHECK_MSG(memcmp(c->f, r.f, sizeof r.f) == 0, "%s: fast '%s', jansson '%s', on '%s'", #f,      \
              c->f, r.f, show(data, len))
    SAME_INT(done);
    SAME_INT(malformed);
    SAME_INT(error);
    SAME_STR(error_message);
    SAME_INT(has_output);
    SAME_INT(output_tokens);
    SAME_INT(has_usage);
    SAME_INT(prompt_tokens);
    SAME_INT(completion_tokens);
    SAME_STR(finish_reason);
    SAME_INT(native_stop);
#undef SAME_INT
#undef SAME_STR
}

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

static void parse_str(const char *s, chunk_info *c) {
    parse_both(s, strlen(s), c);
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

    const char *bad_usage[] = {
        "{\"usage\":{\"completion_tokens\":100000000000000000000}}",
        "{\"usage\":{\"completion_tokens\":-1}}",
        "{\"usage\":{\"completion_tokens\":1.5}}",
        "{\"usage\":{\"completion_tokens\":\"16\"}}",
        "{\"usage\":{\"completion_tokens\":null}}",
        "{\"usage\":[16]}",
        "{\"usage\":16}",
    };
    for (size_t i = 0; i < sizeof bad_usage / sizeof bad_usage[0]; i++) {
        parse_str(bad_usage[i], &c);
        CHECK_MSG(!c.malformed && !c.has_usage, "'%s'", bad_usage[i]);
    }
    parse_str("{\"usage\":{\"completion_tokens\":9007199254740992,\"prompt_tokens\":1e3}}", &c);
    CHECK(c.has_usage);
    CHECK_INT(c.completion_tokens, 9007199254740992LL);
    CHECK_INT(c.prompt_tokens, 1000);
    parse_str("{\"usage\":{\"completion_tokens\":16.0,\"prompt_tokens\":-3}}", &c);
    CHECK(c.has_usage);
    CHECK_INT(c.completion_tokens, 16);
    CHECK_INT(c.prompt_tokens, 0);
}

/* The fast scanner against the jansson reading. */

/* The string literal's bytes, NULs included. */
#define PARSE_LIT(lit, c) parse_both(lit, sizeof lit - 1, c)

static void on_event_both(void *ud, const char *type, const char *data, size_t len) {
    (void)type;
    chunk_info c;
    parse_both(data, len, &c);
    (*(int *)ud)++;
}

TEST(chunk_fast_matches_reference_on_transcripts) {
    /* Every recorded body, as one payload (the plain JSON answers) and
     * split into SSE events (the streams). */
    glob_t g;
    CHECK_INT(glob(TRANSCRIPTS "*.body.txt", 0, NULL, &g), 0);
    CHECK(g.gl_pathc >= 20);
    int events = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t n;
        char *body = read_file(g.gl_pathv[i], &n);
        CHECK_MSG(body, "cannot read %s", g.gl_pathv[i]);
        chunk_info c;
        parse_both(body, n, &c);
        sse_parser p;
        sse_init(&p, 1 << 20, on_event_both, &events);
        CHECK_INT(sse_feed(&p, body, n), 0);
        sse_finish(&p);
        sse_release(&p);
        free(body);
    }
    globfree(&g);
    CHECK(events >= 100);
}

TEST(chunk_fast_json_edge_cases) {
    chunk_info c;
    /* jansson drops one NUL right after a number or literal (its lexer
     * "ungets" through a NUL-terminated buffer); not after a string or
     * container, and not two. */
    PARSE_LIT("{\"a\":1\0,\"choices\":[{\"text\":\"x\"}]}", &c);
    CHECK(!c.malformed && c.has_output);
    PARSE_LIT("{\"a\":true\0}", &c);
    CHECK(!c.malformed);
    PARSE_LIT("{\"a\":[null\0,-0.5e3\0]}", &c);
    CHECK(!c.malformed);
    PARSE_LIT("{\"a\":1\0\0}", &c);
    CHECK(c.malformed);
    PARSE_LIT("{\"a\":\"x\"\0}", &c);
    CHECK(c.malformed);
    PARSE_LIT("{\"a\":{}\0}", &c);
    CHECK(c.malformed);
    PARSE_LIT("{\"a\":1}\0", &c);
    CHECK(c.malformed);

    /* Keys compare decoded; the last of a repeated key counts. */
    parse_str("{\"choices\":[{\"te\\u0078t\":\"a\"}]}", &c);
    CHECK(c.has_output);
    parse_str("{\"\\u0063hoices\":[{\"delta\":{\"cont\\u0065nt\":\"a\"}}],"
              "\"usage\":{\"completion\\u005ftokens\":3}}",
              &c);
    CHECK(c.has_output && c.has_usage && c.completion_tokens == 3);
    parse_str("{\"choices\":[{\"text\":\"a\"}],\"choices\":[]}", &c);
    CHECK(!c.has_output);
    parse_str("{\"choices\":[{\"text\":\"a\",\"text\":\"\"}]}", &c);
    CHECK(!c.has_output);
    parse_str("{\"choices\":[{\"finish_reason\":\"stop\",\"finish_reason\":null}]}", &c);
    CHECK_STR(c.finish_reason, "");
    parse_str("{\"error\":{\"message\":\"x\"},\"error\":null,\"choices\":[{\"text\":\"a\"}]}", &c);
    CHECK(!c.error && c.has_output);
    parse_str("{\"usage\":{\"completion_tokens\":3,\"completion_tokens\":\"3\"}}", &c);
    CHECK(!c.has_usage);
    parse_str("{\"content\":\"a\",\"tokens\":[1],\"content\":null}", &c);
    CHECK(!c.has_output && c.output_tokens == 0);

    /* Decoded text: escapes in finish_reason and error messages. */
    parse_str("{\"choices\":[{\"finish_reason\":\"st\\u006fp\\n\\u00e9\\ud83d\\ude00\"}]}", &c);
    CHECK_STR(c.finish_reason, "stop\n\xC3\xA9\xF0\x9F\x98\x80");
    parse_str("{\"choices\":[{\"finish_reason\":\"abcdefghijklmnopqrstuv\\u00e9\"}]}", &c);
    CHECK_STR(c.finish_reason, "abcdefghijklmnopqrstuv"); /* é would straddle the cut */
    parse_str("{\"error\":\"a\\\"b\\\\c\\/d\\b\\f\\r\\t\"}", &c);
    CHECK_STR(c.error_message, "a\"b\\c/d\b\f\r\t");
    parse_str("{\"object\":\"\\u0065rror\",\"type\":\"t\"}", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "t");
    parse_str("{\"choices\":[{\"text\":\"\\u0020\"}]}", &c);
    CHECK(c.has_output);

    /* Strings jansson refuses. */
    const char *bad[] = {
        "{\"a\":\"\\u0000\"}",
        "{\"\\u0000\":1}",
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\\ud800\\ud800\"}",
        "{\"a\":\"\\ud800\\n\"}",
        "{\"a\":\"\\ud800x\"}",
        "{\"a\":\"\\u12\"}",
        "{\"a\":\"\\u12g4\"}",
        "{\"a\":\"\\x41\"}",
        "{\"a\":\"\\'\"}",
        "{\"a\":\"\t\"}",
        "{\"a\":\"\x7F\x1F\"}",
        "{\"a\":\"\xC0\x80\"}",
        "{\"a\":\"\xC1\xBF\"}",
        "{\"a\":\"\xE0\x80\xAF\"}",
        "{\"a\":\"\xED\xA0\x80\"}",
        "{\"a\":\"\xF0\x80\x80\x80\"}",
        "{\"a\":\"\xF4\x90\x80\x80\"}",
        "{\"a\":\"\xF5\x80\x80\x80\"}",
        "{\"a\":\"\xC3\"}",
        "{\"a\":\"\xC3\"",
        "{\"a\":\"\xE2\x82\"}",
        "{\"a\":\"\x80\"}",
        "{\"a\xC3\xA9\":1,\xC3\xA9}",
        "{\"a\":1,}",
        "{\"a\":[1,]}",
        "{,\"a\":1}",
        "{\"a\" 1}",
        "{\"a\":01}",
        "{\"a\":-}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":1e}",
        "{\"a\":1e+}",
        "{\"a\":+1}",
        "{\"a\":truex}",
        "{\"a\":nul}",
        "{\"a\":True}",
        "{\"a\":1}}",
        "{\"a\":1]",
        "\xEF\xBB\xBF{}",
        "{\"a\":[}",
        "{\"a\":{\"b\"}}",
        "{\"a\":{\"b\":}}",
        "{\"a\":\"\xE0\x9F\xBF\"}",
        "{\"a\":\"\xF0\x8F\xBF\xBF\"}",
        "{\"a\":\"\xED\xBF\xBF\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        parse_str(bad[i], &c);
        CHECK_MSG(c.malformed, "'%s' accepted", show(bad[i], strlen(bad[i])));
    }
    /* Strings jansson takes. */
    const char *good[] = {
        "{\"a\":\"\\ud83d\\ude00 \\uD83D\\uDE00 \\u00E9 \\u20AC \\uFFFF\"}",
        "{\"a\":\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\"}",
        "{\"a\":\"\x7F\"}",
        "{\"a\":\"\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xF0\x90\x80\x80\xC2\x80\"}",
        " \t\r\n{ \"a\" : [ 1 , -0 , 0.5 , 1E+2 , 1e-2 , true , false , null , { } , [ ] ] } \n",
        "{\"a\":1e-400,\"b\":-1e-99999999999999999999,\"c\":0.0000e99999999999}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        parse_str(good[i], &c);
        CHECK_MSG(!c.malformed, "'%s' refused", show(good[i], strlen(good[i])));
    }
}

TEST(chunk_fast_numbers_at_the_edge_of_a_double) {
    /* 2^1024 - 2^970 is the first decimal that rounds to infinity. */
    static const char t[] =
        "179769313486231580793728971405303415079934132710037826936173778980444968"
        "292764750946649017977587207096330286416692887910946555547851940402630657"
        "488671505820681908902000708383676273854845817711531764475730270069855571"
        "366959622842914819860834936475292719074168444365510704342711559699508093"
        "042880177904174497792";
    const char *forms[] = {
        "%s",         "%s.0",        "%s.0000000000000000000001",
        "-%s",        "%.308s.99e1", "%.308s",
        "%.309s1",    "0.%se309",    "0.000%se312",
        "%.20se289",  "%.20s9e289",  "%.25se284",
        "%.19s2e290",
    };
    char buf[800], num[700];
    chunk_info c;
    int accepted = 0, refused = 0;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(num, sizeof num, forms[i], t);
        for (int d = 0; d < 3; d++) {
            /* the number, and one unit in its last place below and above */
            snprintf(buf, sizeof buf, "{\"usage\":{\"completion_tokens\":1,\"x\":%s}}", num);
            parse_str(buf, &c);
            accepted += !c.malformed;
            refused += c.malformed;
            char *last = strpbrk(num, "eE");
            last = last ? last - 1 : num + strlen(num) - 1;
            if (*last == '0' || *last == '9' || *last == '.')
                break;
            *last = (char)(*last + (d == 0 ? -1 : 2));
        }
    }
    CHECK(accepted > 5 && refused > 5);
    parse_str("{\"a\":1.7976931348623157e308}", &c); /* DBL_MAX */
    CHECK(!c.malformed);
    parse_str("{\"a\":1.7976931348623159e308}", &c);
    CHECK(c.malformed);
    parse_str("{\"a\":-1e309}", &c);
    CHECK(c.malformed);

    /* Token counts: what a double makes of the number decides. */
    parse_str("{\"usage\":{\"completion_tokens\":9007199254740993,\"prompt_tokens\":-0}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 9007199254740992LL && c.prompt_tokens == 0);
    parse_str("{\"usage\":{\"completion_tokens\":9007199254740995}}", &c);
    CHECK(!c.has_usage);
    parse_str("{\"usage\":{\"completion_tokens\":16.000000000000001,\"prompt_tokens\":2E1}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 16 && c.prompt_tokens == 20);
    parse_str("{\"usage\":{\"completion_tokens\":-1e-400,\"prompt_tokens\":0.5}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 0 && c.prompt_tokens == 0);
    parse_str(
        "{\"usage\":{\"completion_tokens\":4.00000000000000000000000000000000000000000000000000"
        "000000000000000000000000000000000000000000000000000000000000000000000000000}}",
        &c);
    CHECK(c.has_usage && c.completion_tokens == 4);

    /* Error codes: the plain integers directly, the rest as jansson prints them. */
    parse_str("{\"error\":{\"code\":-42}}", &c);
    CHECK_STR(c.error_message, "error code -42");
    parse_str("{\"error\":{\"code\":-0}}", &c);
    CHECK_STR(c.error_message, "error code -0");
    parse_str("{\"error\":{\"code\":5e2}}", &c);
    CHECK_STR(c.error_message, "error code 500");
    parse_str("{\"error\":{\"code\":1234567890123456789}}", &c);
    CHECK_STR(c.error_message, "error code 1234567890123456768");
    parse_str("{\"error\":{\"message\":null,\"code\":500}}", &c);
    CHECK_STR(c.error_message, "null");
    parse_str("{\"error\":{\"message\":{\"k\":[1,\"\\u00e9\"]}}}", &c);
    CHECK_STR(c.error_message, "{\"k\":[1.0,\"\xC3\xA9\"]}");
    parse_str("{\"error\":[1],\"message\":7,\"code\":1}", &c);
    CHECK_STR(c.error_message, "7.0");
    parse_str("{\"object\":\"error\",\"code\":503}", &c);
    CHECK_STR(c.error_message, "error code 503");
}

/* Nesting at jansson's limit: every value counts, the root object is depth
 * 1, and the limit is 2048. */
static char *nested(const char *prefix, int levels, const char *open, const char *inner,
                    const char *close, const char *suffix, size_t *len) {
    size_t cap = strlen(prefix) + strlen(suffix) + strlen(inner) +
                 (size_t)levels * (strlen(open) + strlen(close)) + 1;
    char *s = malloc(cap);
    CHECK(s != NULL);
    char *p = s;
    size_t lo = strlen(open), lc = strlen(close);
    memcpy(p, prefix, strlen(prefix));
    p += strlen(prefix);
    for (int i = 0; i < levels; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, inner, strlen(inner));
    p += strlen(inner);
    for (int i = 0; i < levels; i++, p += lc)
        memcpy(p, close, lc);
    memcpy(p, suffix, strlen(suffix));
    p += strlen(suffix);
    *p = 0;
    *len = (size_t)(p - s);
    return s;
}

TEST(chunk_fast_depth_limit) {
    static const struct {
        const char *prefix, *open, *inner, *close, *suffix;
        int deepest_ok; /* most levels jansson still takes */
    } shapes[] = {
        {"{\"a\":", "[", "", "]", "}", 2047},  /* "a" is depth 2 */
        {"{\"a\":", "[", "1", "]", "}", 2046}, /* and the scalar counts too */
        {"{\"a\":", "{\"b\":", "1", "}", "}", 2046},
        {"{\"a\":", "{\"b\":", "{}", "}", "}", 2046},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":", "[", "", "]", "}}]}", 2044},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":[", "[", "\"x\"", "]", "]}}]}", 2042},
        {"{\"error\":{\"message\":", "[", "", "]", "}}", 2046},
        {"{\"usage\":{\"x\":", "[", "", "]", "}}", 2046},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int levels = shapes[i].deepest_ok - 1; levels <= shapes[i].deepest_ok + 1; levels++) {
            size_t len;
            char *s = nested(shapes[i].prefix, levels, shapes[i].open, shapes[i].inner,
                             shapes[i].close, shapes[i].suffix, &len);
            chunk_info c;
            parse_both(s, len, &c);
            CHECK_MSG(c.malformed == (levels > shapes[i].deepest_ok), "shape %zu, %d levels: %d", i,
                      levels, c.malformed);
            free(s);
        }
    }
    /* Far too deep, inside the fields that are read closely: refused
     * without recursion. */
    size_t len;
    char *s = nested("{\"choices\":[{\"message\":{\"content\":\"x\",\"tool_calls\":", 300000,
                     "[{\"a\":", "1", "}]", "}}]}", &len);
    chunk_info c;
    parse_both(s, len, &c);
    CHECK(c.malformed);
    free(s);
}

/* A deterministic xorshift64. */
static uint64_t next_rand(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Fragments that tend to turn a chunk into a JSON edge case. */
static const char *const splices[] = {
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    " ",
    "\n",
    "\t",
    "0",
    "-",
    ".",
    "e",
    "E+",
    "1e309",
    "-0",
    "01",
    "1.",
    "9007199254740993",
    "16.0",
    "1e3",
    "-1",
    "true",
    "false",
    "null",
    "nul",
    "\\u",
    "\\u0000",
    "\\u0041",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\\ud800",
    "\\udc00",
    "\\ud800\\u0041",
    "\\n",
    "\\x",
    "\xC3\xA9",
    "\xC3",
    "\xE2\x82\xAC",
    "\xE2\x82",
    "\xF0\x9F\x98\x80",
    "\xED\xA0\x80",
    "\xF4\x90\x80\x80",
    "\xC0\x80",
    "\xFF",
    "\x80",
    "\x01",
    "\x7F",
    "[DONE]",
    "\"text\":\"x\",",
    "\"content\":\"\",",
    "\"tool_calls\":[],",
    "\"finish_reason\":\"stop\",",
    "\"usage\":{\"completion_tokens\":7},",
    "\"error\":null,",
    "\"error\":{\"code\":500},",
    "\"error\":{\"message\":[1]},",
    "\"object\":\"error\",",
    "\"stop\":true,",
    "\"tokens\":[1,2],",
    "\"choices\":[],",
    "\"delta\":{\"reasoning\":\"r\"},",
    "\"message\":{\"content\":\"m\"},",
};

/* One random edit of buf (len bytes, room for cap). */
static size_t mutate(char *buf, size_t len, size_t cap, uint64_t *x) {
    size_t pos = len ? (size_t)(next_rand(x) % (len + 1)) : 0;
    switch (next_rand(x) % 8) {
    case 0: /* truncate */ return pos;
    case 1: /* any byte */
        if (pos < len)
            buf[pos] = (char)next_rand(x);
        return len;
    case 2: /* a NUL */
        if (pos < len)
            buf[pos] = '\0';
        return len;
    case 3: { /* delete a few bytes */
        size_t n = 1 + (size_t)(next_rand(x) % 4);
        if (pos + n > len)
            n = len - pos;
        memmove(buf + pos, buf + pos + n, len - pos - n);
        return len - n;
    }
    case 4: { /* a letter as its \u escape, so that keys and texts decode */
        if (pos < len && buf[pos] >= 'a' && buf[pos] <= 'z' && len + 5 < cap) {
            char esc[7];
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned char)buf[pos]);
            memmove(buf + pos + 6, buf + pos + 1, len - pos - 1);
            memcpy(buf + pos, esc, 6);
            return len + 5;
        }
        return len;
    }
    default: { /* insert a fragment */
        const char *f = splices[next_rand(x) % (sizeof splices / sizeof splices[0])];
        size_t n = strlen(f);
        if (len + n > cap)
            return len;
        memmove(buf + pos + n, buf + pos, len - pos);
        memcpy(buf + pos, f, n);
        return len + n;
    }
    }
}

typedef struct corpus {
    char **s;
    size_t *len;
    int n, cap;
} corpus;

static void corpus_add(corpus *c, const char *s, size_t len) {
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->s = realloc(c->s, (size_t)c->cap * sizeof *c->s);
        c->len = realloc(c->len, (size_t)c->cap * sizeof *c->len);
    }
    c->s[c->n] = malloc(len + 1);
    memcpy(c->s[c->n], s, len);
    c->s[c->n][len] = '\0';
    c->len[c->n++] = len;
}

static void on_event_corpus(void *ud, const char *type, const char *data, size_t len) {
    (void)type;
    corpus_add(ud, data, len);
}

TEST(chunk_fast_matches_reference_on_mutations) {
    corpus co = {0};
    glob_t g;
    CHECK_INT(glob(TRANSCRIPTS "*.body.txt", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t n;
        char *body = read_file(g.gl_pathv[i], &n);
        CHECK(body);
        if (n < 4096)
            corpus_add(&co, body, n);
        sse_parser p;
        sse_init(&p, 1 << 20, on_event_corpus, &co);
        sse_feed(&p, body, n);
        sse_finish(&p);
        sse_release(&p);
        free(body);
    }
    globfree(&g);
    static const char *const dialects[] = {
        "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"text\":\" the\",\"logprobs\":null,\"finish_reason\":null,"
        "\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":5,\"total_tokens\":9,"
        "\"completion_tokens\":4}}",
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\","
        "\"reasoning_content\":null,\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
        "\"{\\\"a\\\":1}\"}}]},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}",
        "{\"index\":0,\"content\":\" tok\",\"tokens\":[5,6],\"stop\":true,\"stop_type\":\"eos\"}",
        "{\"error\":{\"object\":\"error\",\"message\":\"engine "
        "dead\",\"type\":\"t\",\"code\":500}}",
        "{\"object\":\"error\",\"message\":\"y\",\"type\":\"BadRequestError\",\"param\":null,"
        "\"code\":400}",
        "{\"error\":\"Input validation error\",\"error_type\":\"validation\"}",
        "{\"error\":{\"code\":500,\"type\":null}}",
        "{\"choices\":[{\"message\":{\"content\":null,\"reasoning\":\"r\"},\"finish_reason\":"
        "\"length\"},{\"text\":\"x\"}],\"usage\":{\"completion_tokens\":1.0,\"prompt_tokens\":"
        "1e1}}",
    };
    for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
        corpus_add(&co, dialects[i], strlen(dialects[i]));
    CHECK(co.n > 100);

    enum { CAP = 8192, ROUNDS = 250000 };
    char *buf = malloc(CAP);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int malformed = 0, output = 0, errors = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int k = (int)(next_rand(&x) % (uint64_t)co.n);
        size_t len = co.len[k] < CAP ? co.len[k] : CAP;
        memcpy(buf, co.s[k], len);
        int edits = 1 + (int)(next_rand(&x) % 3);
        for (int e = 0; e < edits; e++)
            len = mutate(buf, len, CAP, &x);
        chunk_info c;
        parse_both(buf, len, &c);
        malformed += c.malformed;
        output += c.has_output;
        errors += c.error;
    }
    /* The mutations reach both sides of the line. */
    CHECK_MSG(malformed > ROUNDS / 10 && malformed < ROUNDS * 9 / 10, "%d malformed", malformed);
    CHECK_MSG(output > ROUNDS / 10 && errors > ROUNDS / 100, "%d output, %d errors", output,
              errors);
    free(buf);
    for (int i = 0; i < co.n; i++)
        free(co.s[i]);
    free(co.s);
    free(co.len);
}
