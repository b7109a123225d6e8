/* chunk_reference: chunk_parse_reference, the plain jansson reading of a
 * chunk that chunk_parse (chunk.c) replaced on the hot path. It is kept as
 * the definition of the results: the tests and the fuzz target demand that
 * both readings fill chunk_info identically, bench/chunk_parse measures one
 * against the other, and chunk_parse itself defers to it for the rare error
 * body whose description is the error printed back as JSON.
 *
 * Numbers are read as doubles (JSON_DECODE_INT_AS_REAL) so that a huge
 * integer anywhere in an otherwise good chunk (a seed, a timestamp) does not
 * make the chunk malformed; what a count or a duration may be is decided by
 * chunk_rules. A NUL character (\u0000) is allowed in a value
 * (JSON_ALLOW_NUL), as valid JSON: llama.cpp's server streams one when a
 * model samples the byte token 0x00. Where a key repeats, jansson keeps
 * the last one. */
#include "protocol/chunk.h"
#include "protocol/chunk_rules.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nonempty_string(const json_t *v) {
    return json_is_string(v) && json_string_length(v) > 0;
}

static enum chunk_count get_count(const json_t *v, long *out) {
    if (!v || json_is_null(v))
        return COUNT_ABSENT;
    if (!json_is_number(v))
        return COUNT_BAD;
    return chunk_count_of_double(json_number_value(v), out);
}

static double get_duration(const json_t *v) {
    return json_is_number(v) ? chunk_duration_of_double(json_number_value(v)) : NAN;
}

/* A reported count: what get_count takes as a count, else -1. */
static long get_reported_count(const json_t *v) {
    long n;
    return get_count(v, &n) == COUNT_OK ? n : -1;
}

/* The human-readable part of an error object: its message, else its type,
 * else its code, else the whole object as JSON (numbers read as doubles
 * print as "500.0" there, hence the code first). */
static void describe_error(const json_t *err, chunk_info *out) {
    const json_t *msg = json_object_get(err, "message");
    const json_t *type = json_object_get(err, "type");
    const json_t *code = json_object_get(err, "code");
    if (json_is_string(msg)) {
        chunk_copy_text(out->error_message, sizeof out->error_message, json_string_value(msg));
    } else if (json_is_string(type)) {
        chunk_copy_text(out->error_message, sizeof out->error_message, json_string_value(type));
    } else if (json_is_number(code) && !msg) {
        snprintf(out->error_message, sizeof out->error_message, "error code %.0f",
                 json_number_value(code));
    } else {
        char *dump = json_dumps(msg ? msg : err, JSON_COMPACT | JSON_ENCODE_ANY);
        if (dump)
            chunk_copy_text(out->error_message, sizeof out->error_message, dump);
        free(dump);
    }
}

/* {"error": {...}} (OpenAI, newer vLLM, llama.cpp), {"error": "text"} (TGI)
 * or {"object": "error", "message": ...} (older vLLM, SGLang). */
static int read_error(const json_t *root, chunk_info *out) {
    const json_t *err = json_object_get(root, "error");
    const json_t *object = json_object_get(root, "object");
    if (err && !json_is_null(err) && !json_is_false(err)) {
        if (json_is_string(err))
            chunk_copy_text(out->error_message, sizeof out->error_message, json_string_value(err));
        else if (json_is_object(err))
            describe_error(err, out);
        else
            describe_error(root, out);
    } else if (json_is_string(object) && strcmp(json_string_value(object), "error") == 0) {
        describe_error(root, out);
    } else {
        return 0;
    }
    out->error = 1;
    return 1;
}

/* What a chat delta (or a non-streamed message) carries: OUT_ANSWER
 * (content), OUT_REASONING (reasoning_content or reasoning), OUT_TOOL
 * (tool_calls), or'd; 0 for none. */
enum { OUT_ANSWER = 1, OUT_REASONING = 2, OUT_TOOL = 4 };
static int message_output(const json_t *m) {
    if (!json_is_object(m))
        return 0;
    const json_t *tools = json_object_get(m, "tool_calls");
    return (nonempty_string(json_object_get(m, "content")) ? OUT_ANSWER : 0) |
           (nonempty_string(json_object_get(m, "reasoning_content")) ||
                    nonempty_string(json_object_get(m, "reasoning"))
                ? OUT_REASONING
                : 0) |
           (json_is_array(tools) && json_array_size(tools) > 0 ? OUT_TOOL : 0);
}

static void read_choices(const json_t *root, chunk_info *out) {
    const json_t *choices = json_object_get(root, "choices");
    if (!json_is_array(choices))
        return;
    for (size_t i = 0; i < json_array_size(choices); i++) {
        const json_t *c = json_array_get(choices, i);
        if (!json_is_object(c))
            continue;
        const json_t *finish = json_object_get(c, "finish_reason");
        if (i == 0 && json_is_string(finish))
            chunk_copy_text(out->finish_reason, sizeof out->finish_reason,
                            json_string_value(finish));
        int o = (nonempty_string(json_object_get(c, "text")) ? OUT_ANSWER : 0) |
                message_output(json_object_get(c, "delta")) |
                message_output(json_object_get(c, "message"));
        if (o)
            out->has_output = 1;
        if (o & (OUT_ANSWER | OUT_TOOL))
            out->has_answer = 1;
        if (o & OUT_TOOL)
            out->has_tool_call = 1;
    }
}

/* llama.cpp's native /completion: {"content": "...", "tokens": [..], "stop": false}. */
static void read_native(const json_t *root, chunk_info *out) {
    const json_t *content = json_object_get(root, "content");
    const json_t *tokens = json_object_get(root, "tokens");
    if (nonempty_string(content))
        out->has_output = out->has_answer = 1;
    if (json_is_string(content) && json_is_array(tokens)) {
        size_t n = json_array_size(tokens);
        out->output_tokens = n > INT_MAX ? INT_MAX : (int)n;
    }
    if (json_is_true(json_object_get(root, "stop"))) {
        out->native_stop = 1;
        if (!out->finish_reason[0])
            chunk_copy_text(out->finish_reason, sizeof out->finish_reason, "stop");
    }
}

/* llama.cpp's "timings": {"cache_n":6,"prompt_n":1,"prompt_ms":9.37,...}. */
static void read_timings(const json_t *root, chunk_info *out) {
    const json_t *t = json_object_get(root, "timings");
    if (!json_is_object(t))
        return;
    out->has_timings = 1;
    out->timings_prompt_ms = get_duration(json_object_get(t, "prompt_ms"));
    out->timings_predicted_ms = get_duration(json_object_get(t, "predicted_ms"));
    out->timings_prompt_n = get_reported_count(json_object_get(t, "prompt_n"));
    out->timings_predicted_n = get_reported_count(json_object_get(t, "predicted_n"));
    out->timings_cache_n = get_reported_count(json_object_get(t, "cache_n"));
    out->timings_draft_n = get_reported_count(json_object_get(t, "draft_n"));
    out->timings_draft_accepted = get_reported_count(json_object_get(t, "draft_n_accepted"));
}

/* usage.prompt_tokens_details.cached_tokens (json_object_get of a
 * non-object is NULL, so any missing level reads as absent). */
static void read_cached_tokens(const json_t *root, chunk_info *out) {
    const json_t *usage = json_object_get(root, "usage");
    const json_t *details = json_object_get(usage, "prompt_tokens_details");
    out->cached_tokens = get_reported_count(json_object_get(details, "cached_tokens"));
    const json_t *cdetails = json_object_get(usage, "completion_tokens_details");
    out->reasoning_tokens = get_reported_count(json_object_get(cdetails, "reasoning_tokens"));
}

/* usage's counts into *out; -1 when one of them cannot be true. */
static int read_usage(const json_t *root, chunk_info *out) {
    const json_t *usage = json_object_get(root, "usage");
    long completion = 0, prompt = 0;
    if (!json_is_object(usage))
        return 0;
    enum chunk_count c = get_count(json_object_get(usage, "completion_tokens"), &completion);
    enum chunk_count p = get_count(json_object_get(usage, "prompt_tokens"), &prompt);
    if (c == COUNT_BAD || p == COUNT_BAD)
        return -1;
    if (c == COUNT_OK) {
        out->has_usage = 1;
        out->completion_tokens = completion;
        if (p == COUNT_OK)
            out->prompt_tokens = prompt;
    }
    return 0;
}

void chunk_parse_reference(const char *data, size_t len, chunk_info *out) {
    memset(out, 0, sizeof *out);
    chunk_no_server_report(out);
    if (!data) {
        data = "";
        len = 0;
    }
    if (chunk_is_done(data, len)) {
        out->done = 1;
        return;
    }
    json_t *root = json_loadb(data, len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(root)) {
        out->malformed = 1;
        json_decref(root);
        return;
    }
    if (!read_error(root, out)) {
        read_choices(root, out);
        read_native(root, out);
        read_timings(root, out);
        read_cached_tokens(root, out);
        if (read_usage(root, out) < 0)
            chunk_bad_count(out);
    }
    json_decref(root);
}
