/* chunk: reduces one streamed event to the few facts the measurement needs.
 * The dialects differ mostly in where output lives: completions put it in
 * choices[].text, chat in choices[].delta (content, reasoning_content or
 * reasoning, tool_calls), llama.cpp's native stream in a top-level
 * "content". A chunk counts as output only when one of these is non-empty,
 * so chat's opening role chunk and the closing chunk that only carries
 * finish_reason or usage are not mistaken for tokens.
 *
 * Two readings of one contract live here. chunk_parse is the hot path (one
 * call per streamed chunk, 100,000+ a second): a single pass of jscan over
 * the bytes that validates the whole payload exactly as jansson would and
 * keeps only spans of the few values of interest, with no allocation and
 * no tree. chunk_parse_reference is the plain jansson reading it replaced,
 * kept as the definition of the results: the tests run both over recorded
 * streams and hundreds of thousands of mutated chunks and demand identical
 * chunk_info, and chunk_parse itself defers to it for the rare error body
 * whose description is the error printed back as JSON.
 *
 * Numbers are read as doubles (JSON_DECODE_INT_AS_REAL) so that a huge
 * integer anywhere in an otherwise good chunk (a seed, a timestamp) does not
 * make the chunk malformed. A usage token count is another matter: it is a
 * measurement, so one that cannot be true (not a whole number in
 * [0, COUNT_MAX], what a row's count holds) makes the chunk malformed
 * rather than being cut to fit or ignored; null counts as absent. Where a
 * key repeats, the last one counts, as in jansson. */
#include "client/chunk.h"
#include "client/jscan.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
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

/* ---- The reference reading: jansson ---- */

static int nonempty_string(const json_t *v) {
    return json_is_string(v) && json_string_length(v) > 0;
}

/* The largest token count there can be: what requests.csv and the records
 * hold (int32_t). */
#define COUNT_MAX INT32_MAX

/* What a usage count key held: nothing (absent or null), a count, or a
 * value no count can be. */
enum count_state { COUNT_ABSENT, COUNT_OK, COUNT_BAD };

/* A count as a double (how jansson reads every number here): a whole
 * number in [0, COUNT_MAX]; -0 is 0. */
static enum count_state count_of_double(double d, long *out) {
    if (!(d >= 0 && d <= COUNT_MAX) || (double)(long)d != d)
        return COUNT_BAD;
    *out = (long)d;
    return COUNT_OK;
}

static enum count_state get_count(const json_t *v, long *out) {
    if (!v || json_is_null(v))
        return COUNT_ABSENT;
    if (!json_is_number(v))
        return COUNT_BAD;
    return count_of_double(json_number_value(v), out);
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

/* usage's counts into *out; -1 when one of them cannot be true. */
static int read_usage(const json_t *root, chunk_info *out) {
    const json_t *usage = json_object_get(root, "usage");
    long completion = 0, prompt = 0;
    if (!json_is_object(usage))
        return 0;
    enum count_state c = get_count(json_object_get(usage, "completion_tokens"), &completion);
    enum count_state p = get_count(json_object_get(usage, "prompt_tokens"), &prompt);
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

/* A chunk whose usage cannot be true: malformed, and nothing else. */
static void bad_count(chunk_info *out) {
    memset(out, 0, sizeof *out);
    out->malformed = 1;
    out->bad_count = 1;
}

/* Not in chunk.h: the tests and bench/chunk_parse.c declare it. */
void chunk_parse_reference(const char *data, size_t len, chunk_info *out) {
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
        if (read_usage(root, out) < 0)
            bad_count(out);
    }
    json_decref(root);
}

/* ---- The fast reading: one pass of jscan over the bytes ---- */

/* Copy a decoded string into a fixed field that is all zeros, cut like
 * copy_text, and leave zeros after it as copy_text does. */
static void copy_decoded(char *dst, size_t cap, const jscan_str *str) {
    size_t written = jscan_decode(str, dst, cap), n = written;
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)dst[n] & 0xC0) == 0x80)
            n--;
    }
    memset(dst + n, 0, written - n + (written < cap));
}

/* The keys looked at, wherever they appear. */
enum key {
    K_OTHER,
    K_CHOICES,
    K_CODE,
    K_COMPLETION_TOKENS,
    K_CONTENT,
    K_DELTA,
    K_ERROR,
    K_FINISH_REASON,
    K_MESSAGE,
    K_OBJECT,
    K_PROMPT_TOKENS,
    K_REASONING,
    K_REASONING_CONTENT,
    K_STOP,
    K_TEXT,
    K_TOKENS,
    K_TOOL_CALLS,
    K_TYPE,
    K_USAGE,
};

/* Keys compare decoded, as jansson stores them ("te\u0078t" is "text"). */
static enum key key_of(const jscan_str *k) {
    char buf[20]; /* longer than any known key */
    const char *s = k->raw;
    size_t n = k->len;
    if (k->escaped) {
        n = jscan_decode(k, buf, sizeof buf);
        s = buf;
    }
#define IS(lit) (memcmp(s, lit, sizeof lit - 1) == 0)
    switch (n) {
    case 4:
        return IS("text")   ? K_TEXT
               : IS("stop") ? K_STOP
               : IS("type") ? K_TYPE
               : IS("code") ? K_CODE
                            : K_OTHER;
    case 5: return IS("delta") ? K_DELTA : IS("usage") ? K_USAGE : IS("error") ? K_ERROR : K_OTHER;
    case 6: return IS("object") ? K_OBJECT : IS("tokens") ? K_TOKENS : K_OTHER;
    case 7:
        return IS("choices")   ? K_CHOICES
               : IS("content") ? K_CONTENT
               : IS("message") ? K_MESSAGE
                               : K_OTHER;
    case 9: return IS("reasoning") ? K_REASONING : K_OTHER;
    case 10: return IS("tool_calls") ? K_TOOL_CALLS : K_OTHER;
    case 13:
        return IS("finish_reason")   ? K_FINISH_REASON
               : IS("prompt_tokens") ? K_PROMPT_TOKENS
                                     : K_OTHER;
    case 17:
        return IS("completion_tokens")   ? K_COMPLETION_TOKENS
               : IS("reasoning_content") ? K_REASONING_CONTENT
                                         : K_OTHER;
    default: return K_OTHER;
    }
#undef IS
}

/* What describe_error reads of an object: its "message", "type" and "code". */
enum { ABSENT, IS_STRING, IS_OTHER };
typedef struct err_fields {
    int msg; /* ABSENT, IS_STRING or IS_OTHER (present, any other type) */
    jscan_str msg_str;
    int type_is_string;
    jscan_str type_str;
    int code_is_number;
    jscan_num code;
} err_fields;

/* Everything chunk_info is made of, as found in the chunk. Duplicate keys
 * are possible and jansson keeps the last, so each key's reading replaces
 * the earlier one's. */
typedef struct scanned {
    int error; /* the root's "error": ABSENT (or null, false), IS_STRING, IS_OTHER, or: */
#define ERROR_OBJECT 3
    jscan_str error_str;
    err_fields error_obj; /* when it is an object */
    err_fields root;      /* the root's own message/type/code */
    int object_is_error;  /* "object": "error" */
    int choices_output;
    int finish_is_string; /* choices[0].finish_reason */
    jscan_str finish;
    int content; /* the root's "content": ABSENT, IS_STRING, IS_OTHER */
    size_t content_len;
    int tokens_is_array;
    size_t tokens;
    int stop; /* "stop": true */
    int usage_is_object;
    enum count_state completion_state, prompt_state;
    long completion, prompt;
    int need_reference; /* a value only jansson's reading can turn into a field */
} scanned;

/* The value at the cursor as a string (returns 1), or skipped (0), or -1. */
static int scan_string(jscan *s, int depth, jscan_str *str) {
    if (jscan_peek(s) == '"')
        return jscan_string(s, str) < 0 ? -1 : 1;
    return jscan_skip(s, depth) < 0 ? -1 : 0;
}

/* A non-empty string (1), anything else (0), or -1. */
static int scan_nonempty(jscan *s, int depth) {
    jscan_str str;
    int r = scan_string(s, depth, &str);
    return r == 1 ? str.len > 0 : r;
}

/* get_count's rule, read from the number's text. */
static enum count_state count_of(const jscan_num *num, long *out, int *need_reference) {
    if (num->is_int && !num->negative) {
        if (num->magnitude > COUNT_MAX)
            return COUNT_BAD;
        *out = num->magnitude;
        return COUNT_OK;
    }
    double d;
    if (jscan_num_double(num, &d) < 0) {
        *need_reference = 1;
        return COUNT_ABSENT;
    }
    return count_of_double(d, out);
}

static int scan_count(jscan *s, int depth, enum count_state *state, long *value,
                      int *need_reference) {
    int c = jscan_peek(s);
    if (c == '-' || (c >= '0' && c <= '9')) {
        jscan_num num;
        if (jscan_number(s, &num) < 0)
            return -1;
        *state = count_of(&num, value, need_reference);
        return 0;
    }
    *state = c == 'n' ? COUNT_ABSENT : COUNT_BAD; /* null, or a value no count is */
    return jscan_skip(s, depth);
}

/* One of "message", "type", "code" of an error object (or of the root). */
static int scan_err_field(jscan *s, int depth, enum key k, err_fields *f) {
    int r, c;
    switch (k) {
    case K_MESSAGE:
        r = scan_string(s, depth, &f->msg_str);
        f->msg = r == 1 ? IS_STRING : IS_OTHER;
        return r < 0 ? -1 : 0;
    case K_TYPE:
        r = scan_string(s, depth, &f->type_str);
        f->type_is_string = r == 1;
        return r < 0 ? -1 : 0;
    case K_CODE:
        c = jscan_peek(s);
        f->code_is_number = c == '-' || (c >= '0' && c <= '9');
        if (f->code_is_number)
            return jscan_number(s, &f->code);
        return jscan_skip(s, depth);
    default: return jscan_skip(s, depth);
    }
}

static int scan_error_object(jscan *s, int depth, err_fields *f) {
    jscan_str key;
    int first = 1, r;
    memset(f, 0, sizeof *f);
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1)
        if (scan_err_field(s, depth + 1, key_of(&key), f) < 0)
            return -1;
    return r;
}

/* The root's "error": null and false mean none. */
static int scan_error_value(jscan *s, int depth, scanned *sc) {
    int c = jscan_peek(s);
    if (c == '"') {
        sc->error = IS_STRING;
        return jscan_string(s, &sc->error_str);
    }
    if (c == '{') {
        sc->error = ERROR_OBJECT;
        return scan_error_object(s, depth, &sc->error_obj);
    }
    if (c == 'n' || c == 'f' || c == 't') {
        int lit = jscan_literal(s);
        sc->error = lit == JSCAN_TRUE ? IS_OTHER : ABSENT;
        return lit < 0 ? -1 : 0;
    }
    sc->error = IS_OTHER;
    return jscan_skip(s, depth);
}

/* A non-empty array (1), anything else (0), or -1; validated either way. */
static int scan_nonempty_array(jscan *s, int depth) {
    if (jscan_peek(s) != '[')
        return jscan_skip(s, depth) < 0 ? -1 : 0;
    int first = 1, r, n = 0;
    jscan_enter(s);
    while ((r = jscan_next_item(s, &first)) == 1) {
        if (jscan_skip(s, depth + 1) < 0)
            return -1;
        n = 1;
    }
    return r < 0 ? -1 : n;
}

/* A chat delta or message: 1 when it carries output (message_has_output). */
static int scan_message(jscan *s, int depth) {
    if (jscan_peek(s) != '{')
        return jscan_skip(s, depth) < 0 ? -1 : 0;
    int content = 0, reasoning_content = 0, reasoning = 0, tools = 0;
    jscan_str key;
    int first = 1, r;
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1) {
        int v;
        switch (key_of(&key)) {
        case K_CONTENT: v = content = scan_nonempty(s, depth + 1); break;
        case K_REASONING_CONTENT: v = reasoning_content = scan_nonempty(s, depth + 1); break;
        case K_REASONING: v = reasoning = scan_nonempty(s, depth + 1); break;
        case K_TOOL_CALLS: v = tools = scan_nonempty_array(s, depth + 1); break;
        default: v = jscan_skip(s, depth + 1);
        }
        if (v < 0)
            return -1;
    }
    if (r < 0)
        return -1;
    return content || reasoning_content || reasoning || tools;
}

/* One element of "choices", an object: does it carry output, and its
 * finish_reason when a string. */
static int scan_choice(jscan *s, int depth, int *output, int *finish_is_string, jscan_str *finish) {
    int text = 0, delta = 0, message = 0;
    jscan_str key;
    int first = 1, r;
    *finish_is_string = 0;
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1) {
        int v;
        switch (key_of(&key)) {
        case K_TEXT: v = text = scan_nonempty(s, depth + 1); break;
        case K_DELTA: v = delta = scan_message(s, depth + 1); break;
        case K_MESSAGE: v = message = scan_message(s, depth + 1); break;
        case K_FINISH_REASON:
            v = scan_string(s, depth + 1, finish);
            *finish_is_string = v == 1;
            break;
        default: v = jscan_skip(s, depth + 1);
        }
        if (v < 0)
            return -1;
    }
    *output = text || delta || message;
    return r;
}

static int scan_choices(jscan *s, int depth, scanned *sc) {
    sc->choices_output = 0;
    sc->finish_is_string = 0;
    if (jscan_peek(s) != '[')
        return jscan_skip(s, depth);
    int first = 1, r;
    size_t i = 0;
    jscan_enter(s);
    while ((r = jscan_next_item(s, &first)) == 1) {
        if (jscan_peek(s) == '{') {
            int output, finish_is_string;
            jscan_str finish;
            if (scan_choice(s, depth + 1, &output, &finish_is_string, &finish) < 0)
                return -1;
            if (i == 0 && finish_is_string) {
                sc->finish_is_string = 1;
                sc->finish = finish;
            }
            sc->choices_output |= output;
        } else if (jscan_skip(s, depth + 1) < 0) {
            return -1;
        }
        i++;
    }
    return r;
}

static int scan_tokens(jscan *s, int depth, scanned *sc) {
    sc->tokens_is_array = jscan_peek(s) == '[';
    sc->tokens = 0;
    if (!sc->tokens_is_array)
        return jscan_skip(s, depth);
    int first = 1, r;
    jscan_enter(s);
    while ((r = jscan_next_item(s, &first)) == 1) {
        if (jscan_skip(s, depth + 1) < 0)
            return -1;
        sc->tokens++;
    }
    return r;
}

static int scan_usage(jscan *s, int depth, scanned *sc) {
    sc->usage_is_object = jscan_peek(s) == '{';
    sc->completion_state = sc->prompt_state = COUNT_ABSENT;
    if (!sc->usage_is_object)
        return jscan_skip(s, depth);
    jscan_str key;
    int first = 1, r;
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1) {
        enum key k = key_of(&key);
        int v;
        if (k == K_COMPLETION_TOKENS)
            v = scan_count(s, depth + 1, &sc->completion_state, &sc->completion,
                           &sc->need_reference);
        else if (k == K_PROMPT_TOKENS)
            v = scan_count(s, depth + 1, &sc->prompt_state, &sc->prompt, &sc->need_reference);
        else
            v = jscan_skip(s, depth + 1);
        if (v < 0)
            return -1;
    }
    return r;
}

/* The whole chunk: 0 when it is a valid JSON object, else -1. */
static int scan_chunk(const char *data, size_t len, scanned *sc) {
    jscan s;
    jscan_str key, str;
    int first = 1, r;
    memset(sc, 0, sizeof *sc);
    jscan_init(&s, data, len);
    if (jscan_peek(&s) != '{')
        return -1;
    jscan_enter(&s);
    while ((r = jscan_next_key(&s, &first, &key)) == 1) {
        int v;
        switch (key_of(&key)) {
        case K_ERROR: v = scan_error_value(&s, 2, sc); break;
        case K_OBJECT:
            v = scan_string(&s, 2, &str);
            sc->object_is_error = v == 1 && jscan_str_eq(&str, "error");
            break;
        case K_CHOICES: v = scan_choices(&s, 2, sc); break;
        case K_CONTENT:
            v = scan_string(&s, 2, &str);
            sc->content = v == 1 ? IS_STRING : IS_OTHER;
            sc->content_len = v == 1 ? str.len : 0;
            break;
        case K_TOKENS: v = scan_tokens(&s, 2, sc); break;
        case K_STOP:
            if (jscan_peek(&s) == 't') {
                v = jscan_literal(&s);
                sc->stop = v == JSCAN_TRUE;
            } else {
                v = jscan_skip(&s, 2);
                sc->stop = 0;
            }
            break;
        case K_USAGE: v = scan_usage(&s, 2, sc); break;
        case K_MESSAGE:
        case K_TYPE:
        case K_CODE: v = scan_err_field(&s, 2, key_of(&key), &sc->root); break;
        default: v = jscan_skip(&s, 2);
        }
        if (v < 0)
            return -1;
    }
    if (r < 0)
        return -1;
    return jscan_finish(&s);
}

/* describe_error from the scanned fields; -1 when the answer is the error
 * printed back as JSON (or a code that is not a plain integer), which is
 * left to the reference. */
static int describe_scanned(const err_fields *f, chunk_info *out) {
    if (f->msg == IS_STRING) {
        copy_decoded(out->error_message, sizeof out->error_message, &f->msg_str);
    } else if (f->type_is_string) {
        copy_decoded(out->error_message, sizeof out->error_message, &f->type_str);
    } else if (f->code_is_number && f->msg == ABSENT && f->code.is_int &&
               (f->code.magnitude || !f->code.negative)) {
        snprintf(out->error_message, sizeof out->error_message, "error code %s%ld",
                 f->code.negative ? "-" : "", f->code.magnitude);
    } else {
        return -1;
    }
    return 0;
}

/* chunk_info from the scanned fields, in the reference's order. */
static int fill(const scanned *sc, chunk_info *out) {
    if (sc->error != ABSENT || sc->object_is_error) {
        out->error = 1;
        if (sc->error == IS_STRING) {
            copy_decoded(out->error_message, sizeof out->error_message, &sc->error_str);
            return 0;
        }
        return describe_scanned(sc->error == ERROR_OBJECT ? &sc->error_obj : &sc->root, out);
    }
    out->has_output = sc->choices_output;
    if (sc->finish_is_string)
        copy_decoded(out->finish_reason, sizeof out->finish_reason, &sc->finish);
    if (sc->content == IS_STRING) {
        if (sc->content_len > 0)
            out->has_output = 1;
        if (sc->tokens_is_array)
            out->output_tokens = sc->tokens > INT_MAX ? INT_MAX : (int)sc->tokens;
    }
    if (sc->stop) {
        out->native_stop = 1;
        if (!out->finish_reason[0])
            copy_text(out->finish_reason, sizeof out->finish_reason, "stop");
    }
    if (sc->usage_is_object &&
        (sc->completion_state == COUNT_BAD || sc->prompt_state == COUNT_BAD)) {
        bad_count(out);
        return 0;
    }
    if (sc->usage_is_object && sc->completion_state == COUNT_OK) {
        out->has_usage = 1;
        out->completion_tokens = sc->completion;
        if (sc->prompt_state == COUNT_OK)
            out->prompt_tokens = sc->prompt;
    }
    return 0;
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
    scanned sc;
    if (scan_chunk(data, len, &sc) < 0) {
        out->malformed = 1;
        return;
    }
    if (sc.need_reference || fill(&sc, out) < 0)
        chunk_parse_reference(data, len, out);
}
