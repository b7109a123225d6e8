/* prom: Prometheus text format 0.0.4, read line by line (see prom.h).
 *
 * The page is never copied or NUL-terminated: each line is a cursor over
 * [start, end) of the caller's bytes, and every read checks the end first,
 * so a truncated or corrupted page can only produce bad lines. A line is
 * either blank, a comment, a `# HELP`/`# TYPE` descriptor or a sample; a
 * line that fails to parse is skipped whole, so one odd metric never hides
 * the rest of the page.
 *
 * What counts as valid follows Prometheus' own Go parser (expfmt), which is
 * what the servers are tested against: `# HELP name` or `# TYPE name` with
 * nothing after is accepted, TYPE keywords are case-insensitive, HELP text
 * allows only the \\ and \n escapes, label values only \\ \" \n, the label
 * name `__name__` and repeated label names are refused, and a value is what
 * Go's ParseFloat reads minus hex and underscores (expfmt refuses those):
 * decimal with optional exponent, NaN, [+-]Inf and [+-]Infinity in any case;
 * a value that overflows a double is refused. We are a little kinder in two
 * places: trailing blanks after the last token and a CR before the LF.
 *
 * Types: TYPE lines are remembered as (name, type) pairs pointing into the
 * page. A sample takes the type of the latest TYPE line with its exact name,
 * else of the latest histogram or summary whose name it extends with
 * `_bucket` (histogram only), `_sum` or `_count`, else "untyped". */
#include "monitor/prom.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = {"counter", "gauge", "histogram", "summary", "untyped"};
#define TYPE_HISTOGRAM (type_names[2])
#define TYPE_SUMMARY (type_names[3])
#define TYPE_UNTYPED (type_names[4])

/* Room for a metric name, NUL included. */
#define NAME_CAP sizeof(((prom_sample *)0)->name)

/* One line's unread bytes. */
typedef struct cursor {
    const char *p, *end;
} cursor;

/* A `# TYPE` declaration seen so far; `name` points into the page. */
typedef struct family {
    const char *name;
    size_t len;
    const char *type;
} family;

typedef struct family_list {
    family *v;
    int n, cap;
} family_list;

enum line_kind { LINE_BLANK, LINE_COMMENT, LINE_SAMPLE, LINE_BAD };

static int at_end(const cursor *c) {
    return c->p >= c->end;
}

/* The next byte, or -1 at the end of the line. */
static int peek(const cursor *c) {
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

static int is_blank(int ch) {
    return ch == ' ' || ch == '\t';
}

static void skip_blanks(cursor *c) {
    while (c->p < c->end && is_blank((unsigned char)*c->p))
        c->p++;
}

/* Length of the token at the cursor: up to the next blank or the end. */
static size_t token_len(const cursor *c) {
    const char *q = c->p;
    while (q < c->end && !is_blank((unsigned char)*q))
        q++;
    return (size_t)(q - c->p);
}

static int is_alpha_(int ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int is_digit(int ch) {
    return ch >= '0' && ch <= '9';
}

/* Metric names may contain ':' (reserved for recording rules, used by vLLM
 * and llama.cpp anyway); label names may not. */
static int is_name_char(int ch, int first, int colon) {
    return is_alpha_(ch) || (colon && ch == ':') || (!first && is_digit(ch));
}

/* Length of the name at the cursor (0 when there is none); does not move. */
static size_t name_len(const cursor *c, int colon) {
    const char *q = c->p;
    while (q < c->end && is_name_char((unsigned char)*q, q == c->p, colon))
        q++;
    return (size_t)(q - c->p);
}

/* Read a name into out[cap]. -1 when there is none or it does not fit. */
static int read_name(cursor *c, char *out, size_t cap, int colon) {
    size_t n = name_len(c, colon);
    if (n == 0 || n >= cap)
        return -1;
    memcpy(out, c->p, n);
    out[n] = '\0';
    c->p += n;
    return 0;
}

/* A double-quoted label value, unescaped into out[cap]. */
static int read_quoted(cursor *c, char *out, size_t cap) {
    if (peek(c) != '"')
        return -1;
    c->p++;
    size_t n = 0;
    while (!at_end(c)) {
        char ch = *c->p++;
        if (ch == '"') {
            out[n] = '\0';
            return 0;
        }
        if (ch == '\\') {
            int e = peek(c);
            if (e == 'n')
                ch = '\n';
            else if (e == '\\' || e == '"')
                ch = (char)e;
            else
                return -1;
            c->p++;
        } else if (ch == '\0') {
            return -1; /* would cut the C string short */
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = ch;
    }
    return -1; /* unterminated */
}

static int equals_nocase(const char *p, size_t n, const char *word) {
    return n == strlen(word) && strncasecmp(p, word, n) == 0;
}

/* Is p[0..n) a decimal float as Go writes one: [+-] digits [. digits]
 * [(e|E) [+-] digits], with at least one mantissa digit on either side of
 * the point? */
static int is_decimal(const char *p, size_t n) {
    size_t i = 0, digits = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        i++;
    for (; i < n && is_digit((unsigned char)p[i]); i++)
        digits++;
    if (i < n && p[i] == '.')
        for (i++; i < n && is_digit((unsigned char)p[i]); i++)
            digits++;
    if (digits == 0)
        return 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        size_t exp_digits = 0;
        for (; i < n && is_digit((unsigned char)p[i]); i++)
            exp_digits++;
        if (exp_digits == 0)
            return 0;
    }
    return i == n;
}

/* A sample value. strtod only ever sees text already checked to be plain
 * decimal (it would also take hex, "nan(...)" and locale decimal points). */
static int parse_value(const char *p, size_t n, double *out) {
    size_t sign = n > 0 && (p[0] == '+' || p[0] == '-');
    if (equals_nocase(p + sign, n - sign, "inf") || equals_nocase(p + sign, n - sign, "infinity")) {
        *out = p[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    if (equals_nocase(p, n, "nan")) {
        *out = NAN;
        return 0;
    }
    if (!is_decimal(p, n))
        return -1;
    char small[64];
    char *s = n < sizeof small ? small : xmalloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    errno = 0;
    double v = strtod(s, NULL);
    int overflow = errno == ERANGE && isinf(v); /* underflow to 0 is fine, as in Go */
    if (s != small)
        free(s);
    if (overflow)
        return -1;
    *out = v;
    return 0;
}

/* A timestamp: a signed decimal int64, as Go's ParseInt(s, 10, 64). */
static int parse_int64(const char *p, size_t n, int64_t *out) {
    size_t i = 0;
    int neg = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        neg = p[i++] == '-';
    if (i == n)
        return -1;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    for (; i < n; i++) {
        if (!is_digit((unsigned char)p[i]))
            return -1;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

static int label_index(const prom_sample *s, const char *name) {
    for (int i = 0; i < s->n_labels; i++)
        if (!strcmp(s->labels[i].name, name))
            return i;
    return -1;
}

/* `{` name="value", ... `}` with blanks anywhere between tokens and an
 * optional comma before the closing brace. */
static int parse_labels(cursor *c, prom_sample *s) {
    c->p++; /* '{' */
    for (;;) {
        skip_blanks(c);
        if (peek(c) == '}')
            break;
        if (s->n_labels == PROM_MAX_LABELS)
            return -1;
        prom_label *l = &s->labels[s->n_labels];
        if (read_name(c, l->name, sizeof l->name, 0) < 0)
            return -1;
        if (!strcmp(l->name, "__name__") || label_index(s, l->name) >= 0)
            return -1;
        skip_blanks(c);
        if (peek(c) != '=')
            return -1;
        c->p++;
        skip_blanks(c);
        if (read_quoted(c, l->value, sizeof l->value) < 0)
            return -1;
        s->n_labels++;
        skip_blanks(c);
        if (peek(c) == ',') {
            c->p++;
            continue;
        }
        if (peek(c) != '}')
            return -1;
        break;
    }
    c->p++; /* '}' */
    return 0;
}

/* name [labels] value [timestamp], the cursor at the name. */
static int parse_sample(cursor *c, prom_sample *s) {
    if (read_name(c, s->name, sizeof s->name, 1) < 0)
        return -1;
    int ch = peek(c);
    if (ch != '{' && !is_blank(ch))
        return -1; /* a stray byte in the name, or no value at all */
    skip_blanks(c);
    if (peek(c) == '{') {
        if (parse_labels(c, s) < 0)
            return -1;
        skip_blanks(c);
    }
    size_t n = token_len(c);
    if (n == 0 || parse_value(c->p, n, &s->value) < 0)
        return -1;
    c->p += n;
    skip_blanks(c);
    if (at_end(c))
        return 0;
    n = token_len(c);
    if (parse_int64(c->p, n, &s->timestamp_ms) < 0)
        return -1;
    s->has_timestamp = 1;
    c->p += n;
    skip_blanks(c);
    return at_end(c) ? 0 : -1;
}

static void family_add(family_list *f, const char *name, size_t len, const char *type) {
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 32;
        f->v = xrealloc(f->v, (size_t)f->cap * sizeof *f->v);
    }
    f->v[f->n++] = (family){name, len, type};
}

static int has_suffix(const char *name, size_t len, const family *m, const char *suffix) {
    size_t sl = strlen(suffix);
    return len == m->len + sl && !memcmp(name, m->name, m->len) &&
           !memcmp(name + m->len, suffix, sl);
}

static const char *family_type(const family_list *f, const char *name) {
    size_t len = strlen(name);
    for (int i = f->n - 1; i >= 0; i--)
        if (f->v[i].len == len && !memcmp(f->v[i].name, name, len))
            return f->v[i].type;
    for (int i = f->n - 1; i >= 0; i--) {
        const family *m = &f->v[i];
        if (m->type != TYPE_HISTOGRAM && m->type != TYPE_SUMMARY)
            continue;
        if (has_suffix(name, len, m, "_sum") || has_suffix(name, len, m, "_count") ||
            (m->type == TYPE_HISTOGRAM && has_suffix(name, len, m, "_bucket")))
            return m->type;
    }
    return TYPE_UNTYPED;
}

/* HELP text: anything, but the only escapes are \\ and \n. */
static int help_text_ok(const cursor *c) {
    for (const char *q = c->p; q < c->end; q++)
        if (*q == '\\') {
            if (q + 1 == c->end || (q[1] != '\\' && q[1] != 'n'))
                return -1;
            q++;
        }
    return 0;
}

/* A line starting with '#': a plain comment, or `# HELP name text` or
 * `# TYPE name type`, whose type is then remembered. */
static int parse_comment(cursor *c, family_list *f) {
    c->p++; /* '#' */
    skip_blanks(c);
    size_t kw = token_len(c);
    int help = kw == 4 && !memcmp(c->p, "HELP", 4);
    int type = kw == 4 && !memcmp(c->p, "TYPE", 4);
    if (!help && !type)
        return 0; /* just a comment */
    c->p += kw;
    skip_blanks(c);
    const char *name = c->p;
    size_t len = name_len(c, 1);
    if (len >= NAME_CAP)
        return -1; /* no sample could carry it */
    c->p += len;
    if (at_end(c))
        return 0; /* "# HELP" or "# TYPE name" with nothing after: allowed */
    if (len == 0 || !is_blank(peek(c)))
        return -1;
    skip_blanks(c);
    if (help)
        return help_text_ok(c);
    if (at_end(c))
        return 0; /* "# TYPE name " */
    const char *end = c->end;
    while (end > c->p && is_blank((unsigned char)end[-1]))
        end--;
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (equals_nocase(c->p, (size_t)(end - c->p), type_names[i])) {
            family_add(f, name, len, type_names[i]);
            return 0;
        }
    return -1; /* unknown type */
}

static enum line_kind parse_line(cursor *c, prom_sample *s, family_list *f) {
    skip_blanks(c);
    if (at_end(c))
        return LINE_BLANK;
    if (*c->p == '#')
        return parse_comment(c, f) == 0 ? LINE_COMMENT : LINE_BAD;
    /* Reset what a sample always sets; labels past n_labels are not looked at
     * (clearing all of them would cost 5 KiB a line). */
    s->name[0] = '\0';
    s->n_labels = 0;
    s->value = 0;
    s->has_timestamp = 0;
    s->timestamp_ms = 0;
    s->type = TYPE_UNTYPED;
    if (parse_sample(c, s) < 0)
        return LINE_BAD;
    s->type = family_type(f, s->name);
    return LINE_SAMPLE;
}

int prom_parse(const char *text, size_t n, prom_sample_fn fn, void *ud, int *bad_lines,
               int *first_bad_line) {
    family_list families = {0};
    prom_sample s;
    int samples = 0, bad = 0, first_bad = 0, line = 0;
    const char *p = text, *end = text ? text + n : text;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        cursor c = {p, nl ? nl : end};
        if (c.end > c.p && c.end[-1] == '\r')
            c.end--;
        line++;
        switch (parse_line(&c, &s, &families)) {
        case LINE_SAMPLE:
            samples++;
            if (fn)
                fn(ud, &s);
            break;
        case LINE_BAD:
            if (bad++ == 0)
                first_bad = line;
            break;
        default: break;
        }
        p = nl ? nl + 1 : end;
    }
    free(families.v);
    if (bad_lines)
        *bad_lines = bad;
    if (first_bad_line)
        *first_bad_line = first_bad;
    return samples;
}

/* Append one byte, counting it even when it does not fit. */
static void put(char *buf, size_t cap, size_t *len, char ch) {
    if (*len + 1 < cap)
        buf[*len] = ch;
    (*len)++;
}

static void put_str(char *buf, size_t cap, size_t *len, const char *s) {
    for (; *s; s++)
        put(buf, cap, len, *s);
}

size_t prom_labels_format(const prom_sample *s, char *buf, size_t cap) {
    size_t len = 0;
    for (int i = 0; i < s->n_labels; i++) {
        if (i > 0)
            put(buf, cap, &len, ',');
        put_str(buf, cap, &len, s->labels[i].name);
        put_str(buf, cap, &len, "=\"");
        for (const char *v = s->labels[i].value; *v; v++) {
            if (*v == '\\' || *v == '"')
                put(buf, cap, &len, '\\');
            if (*v == '\n') {
                put_str(buf, cap, &len, "\\n");
                continue;
            }
            put(buf, cap, &len, *v);
        }
        put(buf, cap, &len, '"');
    }
    if (cap > 0)
        buf[len < cap ? len : cap - 1] = '\0';
    return len;
}

const char *prom_label_get(const prom_sample *s, const char *name) {
    int i = label_index(s, name);
    return i < 0 ? NULL : s->labels[i].value;
}
