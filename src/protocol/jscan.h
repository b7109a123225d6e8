/* jscan: a validating JSON lexer that allocates nothing and builds no tree.
 * It accepts exactly the documents jansson 2.14's json_loadb accepts with
 * JSON_DECODE_INT_AS_REAL (strict UTF-8, no \u0000, paired surrogates only,
 * numbers that overflow a double rejected, values nested at most 2048 deep,
 * and jansson's one quirk: a single NUL byte right after a number or
 * true/false/null is skipped). The caller walks the document with these
 * calls, looks closely at the few values it cares about and skips the rest;
 * skipping is iterative, so no input can exhaust the stack. Strings and
 * numbers come back as spans of the input, decoded only when asked. */
#ifndef SERVELAB_JSCAN_H
#define SERVELAB_JSCAN_H

#include <stddef.h>

#define JSCAN_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH; the top value is depth 1 */

typedef struct jscan {
    const unsigned char *p;   /* next unread byte */
    const unsigned char *end; /* one past the last byte */
} jscan;

/* A string as it appears in the input, between the quotes. */
typedef struct jscan_str {
    const char *raw;
    size_t len;  /* raw bytes; the decoded string is empty exactly when this is 0 */
    int escaped; /* holds a backslash escape, so raw is not the decoded text */
    int has_nul; /* holds \u0000 (allowed in a value, refused in a key) */
} jscan_str;

/* A number as it appears in the input. When is_int, its value is exact:
 * negative ? -magnitude : magnitude (no fraction or exponent, at most 15 digits). */
typedef struct jscan_num {
    const char *raw;
    size_t len;
    int is_int;
    int negative;
    long magnitude;
} jscan_num;

enum jscan_literal { JSCAN_TRUE = 1, JSCAN_FALSE, JSCAN_NULL };

void jscan_init(jscan *s, const char *data, size_t len);

/* Skip whitespace; the next byte, or -1 at the end of the input. */
static inline int jscan_peek(jscan *s) {
    while (s->p < s->end) {
        unsigned char c = *s->p;
        if (c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r'))
            return c;
        s->p++;
    }
    return -1;
}

/* Each reader below starts at the value's first byte (after jscan_peek)
 * and returns 0, or -1 when the input is not valid JSON there. */
int jscan_string(jscan *s, jscan_str *out);
int jscan_number(jscan *s, jscan_num *out);
/* true, false or null: returns its enum jscan_literal, or -1. */
int jscan_literal(jscan *s);
/* Any value, validated and dropped; depth is the value's own depth. */
int jscan_skip(jscan *s, int depth);

/* Containers: consume the '{' or '[' with jscan_enter and set first = 1.
 * jscan_next_key returns 1 with *key read and the ':' consumed (the value
 * follows), 0 once the closing '}' is consumed, -1 on bad input;
 * jscan_next_item likewise for an array's elements and ']'. */
static inline void jscan_enter(jscan *s) {
    s->p++;
}
int jscan_next_key(jscan *s, int *first, jscan_str *key);
int jscan_next_item(jscan *s, int *first);

/* Only whitespace remains: returns 0, else -1. */
int jscan_finish(jscan *s);

/* Write the first bytes (at most cap) of the decoded string to dst, not
 * NUL-terminated; returns how many were written (cap when it is longer). */
size_t jscan_decode(const jscan_str *str, char *dst, size_t cap);
/* The decoded string equals the NUL-terminated lit. */
int jscan_str_eq(const jscan_str *str, const char *lit);
/* The number as a double, converted the way jansson does (strtod after
 * putting the locale's decimal point in place of '.'); -1 when the text is
 * too long for the local buffer (the caller then needs another way). */
int jscan_num_double(const jscan_num *num, double *out);

#endif
