/* chunk: reads one event's JSON with jansson and reduces it to the few facts
 * the measurement needs. The dialects differ mostly in where output lives:
 * completions put it in choices[].text, chat in choices[].delta (content,
 * reasoning_content or reasoning, tool_calls), llama.cpp's native stream in
 * a top-level "content". A chunk counts as output only when one of these is
 * non-empty, so chat's opening role chunk and the closing chunk that only
 * carries finish_reason or usage are not mistaken for tokens.
 *
 * Numbers are decoded as doubles (JSON_DECODE_INT_AS_REAL) so that a huge
 * integer anywhere in an otherwise good chunk (a seed, a timestamp) does not
 * make jansson reject the whole chunk; token counts are then accepted when
 * they are whole, non-negative and exact in a double. */
#include "client/chunk.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_done(const char *s, size_t len) {
    while (len > 0 && is_blank(*s)) {
        s++;
        len--;
    }
    while (len > 0 && is_blank(s[len - 1]))
        len--;
    return len == 6 && memcmp(s, "[DONE]", 6) == 0;
}

/* Copy a string into a fixed field, cutting it before a partial UTF-8
 * character rather than in the middle of one. */
static void copy_text(char *dst, size_t cap, const char *s) {
    size_t n = strlen(s);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static int nonempty_string(const json_t *v) {
    return json_is_string(v) && json_string_length(v) > 0;
}

/* A token count: a whole number in [0, 2^53] (and in a long). */
static int get_count(const json_t *v, long *out) {
    if (!json_is_number(v))
        return 0;
    double d = json_number_value(v);
    if (!(d >= 0 && d <= 9007199254740992.0 && d <= (double)LONG_MAX))
        return 0;
    if ((double)(long)d != d)
        return 0;
    *out = (long)d;
    return 1;
}

/* The human-readable part of an error object: its message, else its type,
 * else its code, else the whole object as JSON (numbers read as doubles
 * print as "500.0" there, hence the code first). */
static void describe_error(const json_t *err, chunk_info *out) {
    const json_t *msg = json_object_get(err, "message");
    const json_t *type = json_object_get(err, "type");
    const json_t *code = json_object_get(err, "code");
    if (json_is_string(msg)) {
        copy_text(out->error_message, sizeof out->error_message, json_string_value(msg));
    } else if (json_is_string(type)) {
        copy_text(out->error_message, sizeof out->error_message, json_string_value(type));
    } else if (json_is_number(code) && !msg) {
        snprintf(out->error_message, sizeof out->error_message, "error code %.0f",
                 json_number_value(code));
    } else {
        char *dump = json_dumps(msg ? msg : err, JSON_COMPACT | JSON_ENCODE_ANY);
        if (dump)
            copy_text(out->error_message, sizeof out->error_message, dump);
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
            copy_text(out->error_message, sizeof out->error_message, json_string_value(err));
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

/* A chat delta (or a non-streamed message) that carries generated output. */
static int message_has_output(const json_t *m) {
    if (!json_is_object(m))
        return 0;
    const json_t *tools = json_object_get(m, "tool_calls");
    return nonempty_string(json_object_get(m, "content")) ||
           nonempty_string(json_object_get(m, "reasoning_content")) ||
           nonempty_string(json_object_get(m, "reasoning")) ||
           (json_is_array(tools) && json_array_size(tools) > 0);
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
            copy_text(out->finish_reason, sizeof out->finish_reason, json_string_value(finish));
        if (nonempty_string(json_object_get(c, "text")) ||
            message_has_output(json_object_get(c, "delta")) ||
            message_has_output(json_object_get(c, "message")))
            out->has_output = 1;
    }
}

/* llama.cpp's native /completion: {"content": "...", "tokens": [..], "stop": false}. */
static void read_native(const json_t *root, chunk_info *out) {
    const json_t *content = json_object_get(root, "content");
    const json_t *tokens = json_object_get(root, "tokens");
    if (nonempty_string(content))
        out->has_output = 1;
    if (json_is_string(content) && json_is_array(tokens)) {
        size_t n = json_array_size(tokens);
        out->output_tokens = n > INT_MAX ? INT_MAX : (int)n;
    }
    if (json_is_true(json_object_get(root, "stop"))) {
        out->native_stop = 1;
        if (!out->finish_reason[0])
            copy_text(out->finish_reason, sizeof out->finish_reason, "stop");
    }
}

static void read_usage(const json_t *root, chunk_info *out) {
    const json_t *usage = json_object_get(root, "usage");
    long completion, prompt;
    if (!json_is_object(usage) ||
        !get_count(json_object_get(usage, "completion_tokens"), &completion))
        return;
    out->has_usage = 1;
    out->completion_tokens = completion;
    if (get_count(json_object_get(usage, "prompt_tokens"), &prompt))
        out->prompt_tokens = prompt;
}

void chunk_parse(const char *data, size_t len, chunk_info *out) {
    memset(out, 0, sizeof *out);
    if (!data) {
        data = "";
        len = 0;
    }
    if (is_done(data, len)) {
        out->done = 1;
        return;
    }
    json_t *root = json_loadb(data, len, JSON_DECODE_INT_AS_REAL, NULL);
    if (!json_is_object(root)) {
        out->malformed = 1;
        json_decref(root);
        return;
    }
    if (!read_error(root, out)) {
        read_choices(root, out);
        read_native(root, out);
        read_usage(root, out);
    }
    json_decref(root);
}
