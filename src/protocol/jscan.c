/* jscan: validating JSON lexer for the client's hot path (see jscan.h).
 *
 * Why not jansson: building a tree of mallocs for every streamed chunk, only
 * to read four fields, costs far more than the bytes are worth at 100,000+
 * chunks a second. Why not a lenient scanner: a chunk that jansson rejects
 * must still be reported as malformed, so every rule jansson applies is
 * applied here too, in one pass:
 *   - strings: no raw byte below 0x20, only the escapes \" \\ \/ \b \f \n
 *     \r \t \uXXXX, \u0000 in values but not in keys (as jansson with
 *     JSON_ALLOW_NUL: a server may stream a NUL character, as llama.cpp's
 *     does when a model samples the byte token 0x00), a high surrogate
 *     escape must be followed
 *     by a low one and a low one must not stand alone, and raw bytes must
 *     be strict UTF-8 (no overlong forms, no surrogates, nothing past
 *     U+10FFFF);
 *   - numbers: RFC 8259 grammar; with JSON_DECODE_INT_AS_REAL every number
 *     goes through strtod, so one that rounds to infinity is an error. That
 *     is decided here without strtod by comparing the digits with
 *     2^1024 - 2^970, the smallest decimal that rounds past DBL_MAX;
 *   - depth: jansson counts every value, scalars too, and fails past 2048;
 *   - jansson's lexer "ungets" the byte after a number or a literal through
 *     a buffer where NUL means empty, so one NUL there is silently dropped
 *     ({"a":1<NUL>} is accepted). Matched, so that results agree byte for
 *     byte with the reference implementation kept in chunk_reference.c.
 * The string loop looks at 8 bytes at a time for the bytes that need a
 * closer look (quote, backslash, control, non-ASCII). */
#include "protocol/jscan.h"

#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 2^1024 - 2^970: a decimal number at or above it rounds to infinity. */
static const char overflow_digits[] =
    "1797693134862315807937289714053034150799341327100378269361737789804449682927647509466490"
    "1797758720709633028641669288791094655554785194040263065748867150582068190890200070838367"
    "6273854845817711531764475730270069855571366959622842914819860834936475292719074168444365"
    "510704342711559699508093042880177904174497792";

static int is_digit(int c) {
    return c >= '0' && c <= '9';
}

static int is_alpha(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int hex_value(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The four hex digits at p (p + 4 <= end checked by the caller), or -1. */
static long hex4(const unsigned char *p) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

void jscan_init(jscan *s, const char *data, size_t len) {
    s->p = (const unsigned char *)data;
    s->end = s->p + len;
}

/* ---- strings ---- */

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* A nonzero mask iff one of the 8 bytes is '"', '\\', below 0x20 or above
 * 0x7F; the lowest flagged byte is the first such byte (flags above it may
 * be false, from borrows). */
static uint64_t special_bytes(uint64_t v) {
    uint64_t q = v ^ (ONES * '"');
    uint64_t b = v ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((v - ONES * 0x20) & ~v) | v) & HIGHS;
}

/* How many bytes of the word come before the first flagged one. A
 * big-endian machine may get a smaller count (false flags lie below there);
 * the byte loop then just walks over the ordinary bytes. */
static size_t plain_prefix(uint64_t mask) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(mask) >> 3;
#else
    return (size_t)__builtin_clzll(mask) >> 3;
#endif
}

/* One escape at *pp (the backslash); advances past it. */
/* One escape at *pp; *nul set when it is \u0000. */
static int scan_escape(const unsigned char **pp, const unsigned char *end, int *nul) {
    const unsigned char *p = *pp + 1;
    if (p >= end)
        return -1;
    switch (*p) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': *pp = p + 1; return 0;
    case 'u': break;
    default: return -1;
    }
    if (end - p < 5)
        return -1;
    long v = hex4(p + 1);
    p += 5;
    if (v < 0) /* bad hex */
        return -1;
    if (v == 0)
        *nul = 1;
    if (v >= 0xD800 && v <= 0xDBFF) {
        if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
            return -1;
        long w = hex4(p + 2);
        if (w < 0xDC00 || w > 0xDFFF)
            return -1;
        p += 6;
    } else if (v >= 0xDC00 && v <= 0xDFFF) {
        return -1;
    }
    *pp = p;
    return 0;
}

/* One UTF-8 character at *pp (a byte >= 0x80), by jansson's utf.c rules. */
static int scan_utf8(const unsigned char **pp, const unsigned char *end) {
    const unsigned char *p = *pp;
    unsigned c = p[0];
    size_t n;
    unsigned long v;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        v = c & 0x07;
    } else {
        return -1;
    }
    if ((size_t)(end - p) < n)
        return -1;
    for (size_t i = 1; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF)
            return -1;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return -1;
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000)) /* overlong (2 bytes: C0, C1 above) */
        return -1;
    *pp = p + n;
    return 0;
}

int jscan_string(jscan *s, jscan_str *out) {
    const unsigned char *p = s->p + 1, *end = s->end;
    int escaped = 0, nul = 0;
    out->raw = (const char *)p;
    for (;;) {
        while (end - p >= 8) {
            uint64_t word;
            memcpy(&word, p, 8);
            uint64_t mask = special_bytes(word);
            if (mask) {
                p += plain_prefix(mask);
                break;
            }
            p += 8;
        }
        if (p >= end)
            return -1;
        unsigned char c = *p;
        if (c == '"')
            break;
        if (c == '\\') {
            escaped = 1;
            if (scan_escape(&p, end, &nul) < 0)
                return -1;
        } else if (c >= 0x80) {
            if (scan_utf8(&p, end) < 0)
                return -1;
        } else if (c < 0x20) {
            return -1;
        } else {
            p++;
        }
    }
    out->len = (size_t)(p - (const unsigned char *)out->raw);
    out->escaped = escaped;
    out->has_nul = nul;
    s->p = p + 1;
    return 0;
}

/* ---- numbers ---- */

/* Does the number (integer digits ip[0..il), fraction fp[0..fl), exponent
 * exp) round to infinity as a double? Write it as 0.DDD x 10^mag: below
 * mag 309 it is under 1e308, above it over 1e309; at 309 compare the digits
 * with overflow_digits (equal rounds up: DBL_MAX's last bit is odd). */
static int overflows(const unsigned char *ip, size_t il, const unsigned char *fp, size_t fl,
                     long long exp) {
    long long mag;
    size_t skip = 0; /* leading zeros of the fraction when the integer part is 0 */
    int int_zero = il == 1 && ip[0] == '0';
    if (!int_zero) {
        mag = (long long)il + exp;
    } else {
        while (skip < fl && fp[skip] == '0')
            skip++;
        if (skip == fl)
            return 0; /* zero */
        mag = exp - (long long)skip;
    }
    if (mag != 309)
        return mag > 309;
    size_t k = 0, nd = sizeof overflow_digits - 1;
    size_t i = int_zero ? il : 0, j = skip;
    for (; k < nd; k++) {
        int d;
        if (i < il)
            d = ip[i++];
        else if (j < fl)
            d = fp[j++];
        else
            d = '0';
        if (d != overflow_digits[k])
            return d > overflow_digits[k];
    }
    return 1; /* equal to the threshold, or above it */
}

int jscan_number(jscan *s, jscan_num *out) {
    const unsigned char *p = s->p, *end = s->end;
    int negative = 0;
    if (*p == '-') {
        negative = 1;
        p++;
    }
    if (p >= end || !is_digit(*p))
        return -1;
    const unsigned char *ip = p;
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p))
            return -1;
    } else {
        while (p < end && is_digit(*p))
            p++;
    }
    size_t il = (size_t)(p - ip);
    const unsigned char *fp = p;
    size_t fl = 0;
    int is_int = 1;
    if (p < end && *p == '.') {
        fp = ++p;
        while (p < end && is_digit(*p))
            p++;
        fl = (size_t)(p - fp);
        if (fl == 0)
            return -1;
        is_int = 0;
    }
    long long exp = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        int exp_negative = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            exp_negative = *p++ == '-';
        if (p >= end || !is_digit(*p))
            return -1;
        while (p < end && is_digit(*p)) {
            if (exp < 1000000000) /* saturate: far beyond any double's range */
                exp = exp * 10 + (*p - '0');
            p++;
        }
        if (exp_negative)
            exp = -exp;
        is_int = 0;
    }
    if (overflows(ip, il, fp, fl, exp))
        return -1;
    out->raw = (const char *)s->p;
    out->len = (size_t)(p - s->p);
    out->negative = negative;
    out->is_int = is_int && il <= 15;
    out->magnitude = 0;
    if (out->is_int)
        for (size_t i = 0; i < il; i++)
            out->magnitude = out->magnitude * 10 + (ip[i] - '0');
    if (p < end && *p == '\0') /* jansson drops it (see the top of the file) */
        p++;
    s->p = p;
    return 0;
}

int jscan_num_double(const jscan_num *num, double *out) {
    char buf[64];
    if (num->len >= sizeof buf)
        return -1;
    memcpy(buf, num->raw, num->len);
    buf[num->len] = '\0';
    const char *point = localeconv()->decimal_point;
    if (*point != '.') {
        char *dot = strchr(buf, '.');
        if (dot)
            *dot = *point;
    }
    *out = strtod(buf, NULL);
    return 0;
}

/* ---- literals, containers ---- */

int jscan_literal(jscan *s) {
    const unsigned char *p = s->p;
    size_t left = (size_t)(s->end - p), n;
    int kind;
    if (left >= 4 && memcmp(p, "true", 4) == 0) {
        n = 4;
        kind = JSCAN_TRUE;
    } else if (left >= 5 && memcmp(p, "false", 5) == 0) {
        n = 5;
        kind = JSCAN_FALSE;
    } else if (left >= 4 && memcmp(p, "null", 4) == 0) {
        n = 4;
        kind = JSCAN_NULL;
    } else {
        return -1;
    }
    p += n;
    if (p < s->end && is_alpha(*p)) /* "nullx" is one bad word to jansson */
        return -1;
    if (p < s->end && *p == '\0') /* dropped, as after a number */
        p++;
    s->p = p;
    return kind;
}

int jscan_next_key(jscan *s, int *first, jscan_str *key) {
    int c = jscan_peek(s);
    if (c == '}') {
        s->p++;
        return 0;
    }
    if (*first) {
        *first = 0;
    } else {
        if (c != ',')
            return -1;
        s->p++;
        c = jscan_peek(s);
    }
    if (c != '"' || jscan_string(s, key) < 0 || key->has_nul || jscan_peek(s) != ':')
        return -1;
    s->p++;
    return 1;
}

int jscan_next_item(jscan *s, int *first) {
    int c = jscan_peek(s);
    if (c == ']') {
        s->p++;
        return 0;
    }
    if (*first) {
        *first = 0;
        return 1;
    }
    if (c != ',')
        return -1;
    s->p++;
    return 1;
}

/* One scalar at the next byte c. */
static int skip_scalar(jscan *s, int c) {
    if (c == '"') {
        jscan_str str;
        return jscan_string(s, &str);
    }
    if (c == '-' || is_digit(c)) {
        jscan_num num;
        return jscan_number(s, &num);
    }
    return jscan_literal(s) < 0 ? -1 : 0;
}

/* Iterative: the open containers are a stack of their closing bytes. */
int jscan_skip(jscan *s, int depth) {
    unsigned char open[JSCAN_MAX_DEPTH];
    int top = 0, want_key = 0;
    for (;;) {
        if (want_key) {
            jscan_str key;
            if (jscan_peek(s) != '"' || jscan_string(s, &key) < 0 || key.has_nul ||
                jscan_peek(s) != ':')
                return -1;
            s->p++;
        }
        /* a value, at depth + top */
        if (depth + top > JSCAN_MAX_DEPTH)
            return -1;
        int c = jscan_peek(s);
        if (c == '{' || c == '[') {
            unsigned char close = c == '{' ? '}' : ']';
            s->p++;
            if (jscan_peek(s) != close) {
                open[top++] = close;
                want_key = close == '}';
                continue;
            }
            s->p++;
        } else if (skip_scalar(s, c) < 0) {
            return -1;
        }
        /* after a value: close what ends here, then a comma and the next member */
        for (;;) {
            if (top == 0)
                return 0;
            c = jscan_peek(s);
            if (c != open[top - 1])
                break;
            s->p++;
            top--;
        }
        if (c != ',')
            return -1;
        s->p++;
        want_key = open[top - 1] == '}';
    }
}

int jscan_finish(jscan *s) {
    return jscan_peek(s) == -1 ? 0 : -1;
}

/* ---- decoding ---- */

static size_t utf8_encode(unsigned long v, unsigned char *u) {
    if (v < 0x80) {
        u[0] = (unsigned char)v;
        return 1;
    }
    if (v < 0x800) {
        u[0] = (unsigned char)(0xC0 | (v >> 6));
        u[1] = (unsigned char)(0x80 | (v & 0x3F));
        return 2;
    }
    if (v < 0x10000) {
        u[0] = (unsigned char)(0xE0 | (v >> 12));
        u[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (v & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | (v >> 18));
    u[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3F));
    u[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
    u[3] = (unsigned char)(0x80 | (v & 0x3F));
    return 4;
}

/* The string was validated by jscan_string, so escapes are well formed. */
size_t jscan_decode(const jscan_str *str, char *dst, size_t cap) {
    const unsigned char *p = (const unsigned char *)str->raw, *end = p + str->len;
    size_t n = 0;
    if (!str->escaped) {
        n = str->len < cap ? str->len : cap;
        memcpy(dst, p, n);
        return n;
    }
    while (p < end && n < cap) {
        if (*p != '\\') {
            dst[n++] = (char)*p++;
            continue;
        }
        unsigned char c = p[1];
        p += 2;
        switch (c) {
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'n': dst[n++] = '\n'; break;
        case 'r': dst[n++] = '\r'; break;
        case 't': dst[n++] = '\t'; break;
        case 'u': {
            unsigned long v = (unsigned long)hex4(p);
            p += 4;
            if (v >= 0xD800 && v <= 0xDBFF) {
                v = ((v - 0xD800) << 10) + ((unsigned long)hex4(p + 2) - 0xDC00) + 0x10000;
                p += 6;
            }
            unsigned char u[4];
            size_t k = utf8_encode(v, u);
            for (size_t i = 0; i < k && n < cap; i++)
                dst[n++] = (char)u[i];
            break;
        }
        default: /* " \ / */ dst[n++] = (char)c;
        }
    }
    return n;
}

int jscan_str_eq(const jscan_str *str, const char *lit) {
    size_t n = strlen(lit);
    if (!str->escaped)
        return str->len == n && memcmp(str->raw, lit, n) == 0;
    char buf[64];
    if (n >= sizeof buf || str->len < n) /* an escape never decodes longer than it is */
        return 0;
    return jscan_decode(str, buf, n + 1) == n && memcmp(buf, lit, n) == 0;
}
