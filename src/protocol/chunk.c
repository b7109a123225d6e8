/* chunk: reduces one streamed event to the few facts the measurement needs.
 * The dialects differ mostly in where output lives: completions put it in
 * choices[].text, chat in choices[].delta (content, reasoning_content or
 * reasoning, tool_calls), llama.cpp's native stream in a top-level
 * "content". A chunk counts as output only when one of these is non-empty,
 * so chat's opening role chunk and the closing chunk that only carries
 * finish_reason or usage are not mistaken for tokens.
 *
 * This file holds chunk_parse, the hot path (one call per streamed chunk,
 * 100,000+ a second): a single pass of jscan over the bytes that validates
 * the whole payload exactly as jansson would and keeps only spans of the few
 * values of interest, with no allocation and no tree. chunk_reference.c
 * holds the plain jansson reading it replaced, kept as the definition of the
 * results: the tests run both over recorded streams and hundreds of
 * thousands of mutated chunks and demand identical chunk_info, and
 * chunk_parse itself defers to it for the rare error body whose description
 * is the error printed back as JSON, or a number too long to convert here.
 *
 * Numbers are read as doubles (JSON_DECODE_INT_AS_REAL) so that a huge
 * integer anywhere in an otherwise good chunk (a seed, a timestamp) does not
 * make the chunk malformed. A usage token count is another matter: it is a
 * measurement, so one that cannot be true (not a whole number in
 * [0, CHUNK_COUNT_MAX], what a row's count holds) makes the chunk malformed
 * rather than being cut to fit or ignored; null counts as absent. Where a
 * key repeats, the last one counts, as in jansson.
 *
 * What a server reports of itself (llama.cpp's "timings", the cached prompt
 * tokens of usage.prompt_tokens_details) is a side note, not the
 * measurement: a value there that cannot be true is dropped (read as -1,
 * or NAN for a duration) and the chunk keeps its meaning. */
#include "protocol/chunk.h"
#include "protocol/chunk_rules.h"
#include "protocol/jscan.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Copy a decoded string into a fixed field that is all zeros, cut like
 * copy_text, and leave zeros after it as copy_text does. */
static void copy_decoded(char *dst, size_t cap, const jscan_str *str) {
    size_t written = jscan_decode(str, dst, cap), n = written;
    const char *nul = str->has_nul ? memchr(dst, 0, written) : NULL;
    if (nul) /* a C string ends at its first NUL, as the reference's does */
        n = (size_t)(nul - dst);
    else if (n >= cap) {
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
    K_COMPLETION_TOKENS_DETAILS,
    K_CONTENT,
    K_DELTA,
    K_ERROR,
    K_FINISH_REASON,
    K_MESSAGE,
    K_OBJECT,
    K_PROMPT_TOKENS,
    K_PROMPT_TOKENS_DETAILS,
    K_REASONING,
    K_REASONING_CONTENT,
    K_STOP,
    K_TEXT,
    K_TIMINGS,
    K_TOKENS,
    K_TOOL_CALLS,
    K_TYPE,
    K_USAGE,
};

/* Keys compare decoded, as jansson stores them ("te\u0078t" is "text"). */
static enum key key_of(const jscan_str *k) {
    char buf[32]; /* longer than any known key */
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
               : IS("timings") ? K_TIMINGS
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
    case 21: return IS("prompt_tokens_details") ? K_PROMPT_TOKENS_DETAILS : K_OTHER;
    case 25: return IS("completion_tokens_details") ? K_COMPLETION_TOKENS_DETAILS : K_OTHER;
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

/* A "timings" object as scanned: its fields as chunk_info holds them. */
typedef struct timings_fields {
    int present; /* it was an object */
    double prompt_ms, predicted_ms;
    long prompt_n, predicted_n, cache_n, draft_n, draft_accepted;
} timings_fields;

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
    int choices_output;   /* OUT_* or'd over the choices */
    int finish_is_string; /* choices[0].finish_reason */
    jscan_str finish;
    int content; /* the root's "content": ABSENT, IS_STRING, IS_OTHER */
    size_t content_len;
    int tokens_is_array;
    size_t tokens;
    int stop; /* "stop": true */
    int usage_is_object;
    enum chunk_count completion_state, prompt_state;
    long completion, prompt;
    long cached_tokens;    /* usage.prompt_tokens_details.cached_tokens, or -1 */
    long reasoning_tokens; /* usage.completion_tokens_details.reasoning_tokens, or -1 */
    timings_fields timings;
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
static enum chunk_count count_of(const jscan_num *num, long *out, int *need_reference) {
    if (num->is_int && !num->negative) {
        if (num->magnitude > CHUNK_COUNT_MAX)
            return COUNT_BAD;
        *out = num->magnitude;
        return COUNT_OK;
    }
    double d;
    if (jscan_num_double(num, &d) < 0) {
        *need_reference = 1;
        return COUNT_ABSENT;
    }
    return chunk_count_of_double(d, out);
}

static int scan_count(jscan *s, int depth, enum chunk_count *state, long *value,
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

/* What a chat delta or message carries (chunk_reference.c's message_output):
 * OUT_ANSWER, OUT_REASONING, OUT_TOOL or'd. */
enum { OUT_ANSWER = 1, OUT_REASONING = 2, OUT_TOOL = 4 };
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
    return (content ? OUT_ANSWER : 0) | (reasoning_content || reasoning ? OUT_REASONING : 0) |
           (tools ? OUT_TOOL : 0);
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
    *output = (text ? OUT_ANSWER : 0) | delta | message;
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

/* A number the server reports of itself, at the cursor: 1 with *num read,
 * 0 when the value is no number (skipped), -1 on bad input. */
static int scan_reported(jscan *s, int depth, jscan_num *num) {
    int c = jscan_peek(s);
    if (c == '-' || (c >= '0' && c <= '9'))
        return jscan_number(s, num) < 0 ? -1 : 1;
    return jscan_skip(s, depth) < 0 ? -1 : 0;
}

static int scan_reported_count(jscan *s, int depth, long *value, int *need_reference) {
    jscan_num num;
    long n;
    int r = scan_reported(s, depth, &num);
    *value = r == 1 && count_of(&num, &n, need_reference) == COUNT_OK ? n : -1;
    return r < 0 ? -1 : 0;
}

static int scan_duration(jscan *s, int depth, double *value, int *need_reference) {
    jscan_num num;
    double d;
    int r = scan_reported(s, depth, &num);
    *value = NAN;
    if (r == 1 && jscan_num_double(&num, &d) < 0)
        *need_reference = 1;
    else if (r == 1)
        *value = chunk_duration_of_double(d);
    return r < 0 ? -1 : 0;
}

/* One key of "timings" and its value. Its keys are looked for only here,
 * so that key_of, which every key of every chunk goes through, stays short;
 * the other half of its keys (prompt_per_second and the like) are longer
 * than any of these, and are passed over at once. */
static int scan_timing(jscan *s, int depth, const jscan_str *key, timings_fields *t,
                       int *need_reference) {
    if (!key->escaped && key->len > sizeof "draft_n_accepted" - 1)
        return jscan_skip(s, depth);
    if (jscan_str_eq(key, "prompt_ms"))
        return scan_duration(s, depth, &t->prompt_ms, need_reference);
    if (jscan_str_eq(key, "predicted_ms"))
        return scan_duration(s, depth, &t->predicted_ms, need_reference);
    if (jscan_str_eq(key, "prompt_n"))
        return scan_reported_count(s, depth, &t->prompt_n, need_reference);
    if (jscan_str_eq(key, "predicted_n"))
        return scan_reported_count(s, depth, &t->predicted_n, need_reference);
    if (jscan_str_eq(key, "cache_n"))
        return scan_reported_count(s, depth, &t->cache_n, need_reference);
    if (jscan_str_eq(key, "draft_n"))
        return scan_reported_count(s, depth, &t->draft_n, need_reference);
    if (jscan_str_eq(key, "draft_n_accepted"))
        return scan_reported_count(s, depth, &t->draft_accepted, need_reference);
    return jscan_skip(s, depth);
}

static int scan_timings(jscan *s, int depth, scanned *sc) {
    timings_fields *t = &sc->timings;
    t->present = jscan_peek(s) == '{';
    t->prompt_ms = t->predicted_ms = NAN;
    t->prompt_n = t->predicted_n = t->cache_n = t->draft_n = t->draft_accepted = -1;
    if (!t->present)
        return jscan_skip(s, depth);
    jscan_str key;
    int first = 1, r;
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1)
        if (scan_timing(s, depth + 1, &key, t, &sc->need_reference) < 0)
            return -1;
    return r;
}

/* usage.prompt_tokens_details: its cached_tokens. */
static int scan_prompt_details(jscan *s, int depth, scanned *sc) {
    sc->cached_tokens = -1;
    if (jscan_peek(s) != '{')
        return jscan_skip(s, depth);
    jscan_str key;
    int first = 1, r;
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1) {
        int v = jscan_str_eq(&key, "cached_tokens")
                    ? scan_reported_count(s, depth + 1, &sc->cached_tokens, &sc->need_reference)
                    : jscan_skip(s, depth + 1);
        if (v < 0)
            return -1;
    }
    return r;
}

/* usage.completion_tokens_details: its reasoning_tokens. */
static int scan_completion_details(jscan *s, int depth, scanned *sc) {
    sc->reasoning_tokens = -1;
    if (jscan_peek(s) != '{')
        return jscan_skip(s, depth);
    jscan_str key;
    int first = 1, r;
    jscan_enter(s);
    while ((r = jscan_next_key(s, &first, &key)) == 1) {
        int v = jscan_str_eq(&key, "reasoning_tokens")
                    ? scan_reported_count(s, depth + 1, &sc->reasoning_tokens, &sc->need_reference)
                    : jscan_skip(s, depth + 1);
        if (v < 0)
            return -1;
    }
    return r;
}

static int scan_usage(jscan *s, int depth, scanned *sc) {
    sc->usage_is_object = jscan_peek(s) == '{';
    sc->completion_state = sc->prompt_state = COUNT_ABSENT;
    sc->cached_tokens = sc->reasoning_tokens = -1;
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
        else if (k == K_PROMPT_TOKENS_DETAILS)
            v = scan_prompt_details(s, depth + 1, sc);
        else if (k == K_COMPLETION_TOKENS_DETAILS)
            v = scan_completion_details(s, depth + 1, sc);
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
    sc->cached_tokens = sc->reasoning_tokens = -1;
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
        case K_TIMINGS: v = scan_timings(&s, 2, sc); break;
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
    out->has_output = sc->choices_output != 0;
    out->has_answer = (sc->choices_output & (OUT_ANSWER | OUT_TOOL)) != 0;
    out->has_tool_call = (sc->choices_output & OUT_TOOL) != 0;
    if (sc->finish_is_string)
        copy_decoded(out->finish_reason, sizeof out->finish_reason, &sc->finish);
    if (sc->content == IS_STRING) {
        if (sc->content_len > 0)
            out->has_output = out->has_answer = 1;
        if (sc->tokens_is_array)
            out->output_tokens = sc->tokens > INT_MAX ? INT_MAX : (int)sc->tokens;
    }
    if (sc->stop) {
        out->native_stop = 1;
        if (!out->finish_reason[0])
            chunk_copy_text(out->finish_reason, sizeof out->finish_reason, "stop");
    }
    if (sc->timings.present) {
        out->has_timings = 1;
        out->timings_prompt_ms = sc->timings.prompt_ms;
        out->timings_predicted_ms = sc->timings.predicted_ms;
        out->timings_prompt_n = sc->timings.prompt_n;
        out->timings_predicted_n = sc->timings.predicted_n;
        out->timings_cache_n = sc->timings.cache_n;
        out->timings_draft_n = sc->timings.draft_n;
        out->timings_draft_accepted = sc->timings.draft_accepted;
    }
    out->cached_tokens = sc->cached_tokens;
    out->reasoning_tokens = sc->reasoning_tokens;
    if (sc->usage_is_object &&
        (sc->completion_state == COUNT_BAD || sc->prompt_state == COUNT_BAD)) {
        chunk_bad_count(out);
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
    chunk_no_server_report(out);
    if (!data) {
        data = "";
        len = 0;
    }
    if (chunk_is_done(data, len)) {
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
