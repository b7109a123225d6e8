/* json_schema: JSON Schema as tool parameters and structured output use it
 * (see json_schema.h). Numbers compare by value (1 and 1.0 are one value),
 * a boolean schema is itself (false: no value), $ref follows local JSON
 * pointers, and a pattern is an ECMA-262 regular expression, translated
 * for POSIX regcomp where the two differ in the common classes (\d \w \s);
 * one that does not translate is refused when the schema is loaded, so
 * no answer is judged by a pattern read another way. */
#include "common/json_schema.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH_MOST 256         /* schemas entered for one value: a $ref loop ends here */
#define PATTERN_DEPTH 8        /* groups nested in a pattern */
#define PATTERN_MOST 512       /* a pattern's bytes */
#define PATTERN_REPEATS 100000 /* its intervals' counts, multiplied */

typedef struct ctx {
    const json_t *root;
    char *why;
    size_t n;
    int depth;
} ctx;

/* A message of one line: a key or a value may hold any byte. */
static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static int fail(ctx *c, const char *path, const char *what) {
    if (c->why && c->n) {
        snprintf(c->why, c->n, "%s: %s", path, what);
        one_line(c->why);
    }
    return 0;
}

/* ---- values ---- */

int json_schema_same(const json_t *a, const json_t *b) {
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_string(a))
        return json_string_length(a) == json_string_length(b) &&
               !memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!json_schema_same(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)a, k, x) {
            const json_t *y = json_object_get(b, k);
            if (!y || !json_schema_same(x, y))
                return 0;
        }
        return 1;
    }
    return 1; /* true, false, null: the type says it */
}

static const char *const type_names[] = {"object", "array",   "string", "integer",
                                         "number", "boolean", "null",   NULL};

static int type_is(const json_t *v, const char *t) {
    if (!strcmp(t, "object"))
        return json_is_object(v);
    if (!strcmp(t, "array"))
        return json_is_array(v);
    if (!strcmp(t, "string"))
        return json_is_string(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
    if (!strcmp(t, "number"))
        return json_is_number(v);
    if (!strcmp(t, "boolean"))
        return json_is_boolean(v);
    if (!strcmp(t, "null"))
        return json_is_null(v);
    return 0;
}

static int type_ok(const json_t *type, const json_t *v) {
    if (json_is_string(type))
        return type_is(v, json_string_value(type));
    for (size_t i = 0; i < json_array_size(type); i++)
        if (json_is_string(json_array_get(type, i)) &&
            type_is(v, json_string_value(json_array_get(type, i))))
            return 1;
    return 0;
}

static size_t utf8_chars(const json_t *v) {
    const char *s = json_string_value(v);
    size_t n = 0, len = json_string_length(v);
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static int in_enum(const json_t *e, const json_t *v) {
    for (size_t i = 0; i < json_array_size(e); i++)
        if (json_schema_same(json_array_get(e, i), v))
            return 1;
    return 0;
}

/* ---- patterns ---- */

/* An ECMA-262 pattern as POSIX extended: \d \w \s (and, outside brackets,
 * \D \W \S) as their classes, any other escaped character as itself. 0, or
 * -1 when it cannot be said so (a lookaround, a non-capturing group, a
 * backreference, a negated class inside brackets), or when regcomp could
 * not compile it in bounded memory (a pattern from a schema is outside
 * input): longer than PATTERN_MOST bytes, groups nested past
 * PATTERN_DEPTH, intervals whose counts multiply past PATTERN_REPEATS
 * ({1,255} is fine, (a{100}){100} is not), or a quantifier on a quantifier (a syntax error in
 * ECMA-262 too, but for a lazy '?', which POSIX lacks). */
static int translate(const char *p, char *out, size_t cap) {
    size_t o = 0;
    int in_brackets = 0, depth = 0, quantified = 0;
    double repeats = 1; /* the intervals' largest counts, multiplied */
    if (strlen(p) > PATTERN_MOST)
        return -1;
    for (; *p; p++) {
        const char *add = NULL;
        char one[3] = {0};
        size_t span = 1;
        if (!in_brackets) {
            int q = *p == '*' || *p == '+' || *p == '?' || *p == '{';
            if (q && quantified)
                return -1;
            quantified = q;
            if (*p == '(' && ++depth > PATTERN_DEPTH)
                return -1;
            if (*p == ')')
                depth--;
        }
        if (*p == '{' && !in_brackets) { /* {m}, {m,}, {m,n}: copied whole */
            const char *e = strchr(p, '}');
            if (!e || (size_t)(e - p) > 16)
                return -1;
            long most = 0;
            for (const char *d = p + 1; d < e; d++)
                if (*d >= '0' && *d <= '9') {
                    long v = strtol(d, (char **)&d, 10);
                    most = v > most ? v : most;
                    d--;
                }
            repeats *= most > 1 ? (double)most : 1;
            if (repeats > PATTERN_REPEATS)
                return -1; /* regcomp spells each repeat out */
            span = (size_t)(e - p) + 1;
            add = p;
        } else if (*p == '\\' && p[1]) {
            char e = *++p;
            if (e == 'd')
                add = in_brackets ? "0-9" : "[0-9]";
            else if (e == 'w')
                add = in_brackets ? "A-Za-z0-9_" : "[A-Za-z0-9_]";
            else if (e == 's')
                add = in_brackets ? "[:space:]" : "[[:space:]]";
            else if ((e == 'D' || e == 'W' || e == 'S') && !in_brackets)
                add = e == 'D' ? "[^0-9]" : e == 'W' ? "[^A-Za-z0-9_]" : "[^[:space:]]";
            else if ((e >= '0' && e <= '9') || e == 'D' || e == 'W' || e == 'S' || e == 'b' ||
                     e == 'B' || e == 'u' || e == 'x' || e == 'p' || e == 'P')
                return -1;
            else if (e == 'n' || e == 't' || e == 'r')
                one[0] = e == 'n' ? '\n' : e == 't' ? '\t' : '\r';
            else if (in_brackets)
                one[0] = e; /* POSIX brackets take it as it is */
            else {
                one[0] = '\\';
                one[1] = e;
            }
        } else {
            if (*p == '(' && p[1] == '?')
                return -1;
            if (*p == '[' && !in_brackets)
                in_brackets = 1;
            else if (*p == ']' && in_brackets)
                in_brackets = 0;
            one[0] = *p;
        }
        const char *s = add ? add : one;
        size_t k = add == p ? span : strlen(s);
        if (o + k + 1 > cap)
            return -1;
        memcpy(out + o, s, k);
        o += k;
        if (add == p)
            p += span - 1;
    }
    out[o] = 0;
    return 0;
}

/* The pattern compiled into *re: 0, or -1. */
static int pattern_compile(const char *p, regex_t *re) {
    char ere[4096];
    if (translate(p, ere, sizeof ere))
        return -1;
    return regcomp(re, ere, REG_EXTENDED | REG_NOSUB) ? -1 : 0;
}

/* 1 when s holds a match of the pattern (unanchored, as JSON Schema asks);
 * -1 when the pattern does not compile. */
static int pattern_matches(const char *p, const char *s) {
    regex_t re;
    if (pattern_compile(p, &re))
        return -1;
    int m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

/* ---- $ref ---- */

/* A local reference ("#", "#/$defs/name", with ~0 and ~1) in root, or NULL. */
static const json_t *resolve(const json_t *root, const char *ref) {
    if (!ref || ref[0] != '#')
        return NULL;
    const json_t *at = root;
    const char *p = ref + 1;
    while (at && *p == '/') {
        p++;
        char key[512];
        size_t k = 0;
        for (; *p && *p != '/' && k < sizeof key - 1; p++) {
            if (*p == '~' && (p[1] == '0' || p[1] == '1')) {
                key[k++] = p[1] == '0' ? '~' : '/';
                p++;
            } else {
                key[k++] = *p;
            }
        }
        key[k] = 0;
        if (json_is_array(at)) {
            char *end;
            long i = strtol(key, &end, 10);
            at = *key && !*end && i >= 0 ? json_array_get(at, (size_t)i) : NULL;
        } else {
            at = json_object_get(at, key);
        }
    }
    return *p ? NULL : at;
}

/* ---- checking ---- */

static int check(ctx *c, const json_t *s, const json_t *v, const char *path);

/* v checked against s without a word (if, anyOf, oneOf, not). */
static int quietly(ctx *c, const json_t *s, const json_t *v, const char *path) {
    ctx q = {c->root, NULL, 0, c->depth};
    return check(&q, s, v, path);
}

static int check_number(ctx *c, const json_t *s, const json_t *v, const char *path) {
    double x = json_number_value(v);
    const json_t *lo = json_object_get(s, "minimum"), *hi = json_object_get(s, "maximum");
    const json_t *xlo = json_object_get(s, "exclusiveMinimum"),
                 *xhi = json_object_get(s, "exclusiveMaximum");
    const json_t *mult = json_object_get(s, "multipleOf");
    int lo_x = json_is_true(xlo), hi_x = json_is_true(xhi); /* draft 4's boolean form */
    if (json_is_number(lo) && (lo_x ? x <= json_number_value(lo) : x < json_number_value(lo)))
        return fail(c, path, "below minimum");
    if (json_is_number(hi) && (hi_x ? x >= json_number_value(hi) : x > json_number_value(hi)))
        return fail(c, path, "above maximum");
    if (json_is_number(xlo) && x <= json_number_value(xlo))
        return fail(c, path, "not above exclusiveMinimum");
    if (json_is_number(xhi) && x >= json_number_value(xhi))
        return fail(c, path, "not below exclusiveMaximum");
    if (json_is_number(mult) && json_number_value(mult) > 0) {
        double q = x / json_number_value(mult);
        if (fabs(q - nearbyint(q)) > 1e-9 * fmax(1, fabs(q)))
            return fail(c, path, "not a multiple of multipleOf");
    }
    return 1;
}

static int check_string(ctx *c, const json_t *s, const json_t *v, const char *path) {
    const json_t *lo = json_object_get(s, "minLength"), *hi = json_object_get(s, "maxLength");
    double len = (double)utf8_chars(v);
    if (json_is_number(lo) && len < json_number_value(lo))
        return fail(c, path, "shorter than minLength");
    if (json_is_number(hi) && len > json_number_value(hi))
        return fail(c, path, "longer than maxLength");
    const char *pat = json_string_value(json_object_get(s, "pattern"));
    if (pat) {
        int m = pattern_matches(pat, json_string_value(v));
        if (m < 0)
            return fail(c, path, "a pattern servelab cannot read");
        if (!m)
            return fail(c, path, "does not match pattern");
    }
    return 1;
}

/* Whether key k of an object falls under patternProperties: checked there
 * (0 with why when it fails; *matched set when any pattern matched). */
static int check_pattern_props(ctx *c, const json_t *pp, const char *k, const json_t *x,
                               const char *sub, int *matched) {
    const char *pk;
    json_t *ps;
    *matched = 0;
    json_object_foreach((json_t *)pp, pk, ps) {
        if (pattern_matches(pk, k) != 1)
            continue;
        *matched = 1;
        if (!check(c, ps, x, sub))
            return 0;
    }
    return 1;
}

static int check_object(ctx *c, const json_t *s, const json_t *v, const char *path) {
    const json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required");
    const json_t *extra = json_object_get(s, "additionalProperties");
    const json_t *pp = json_object_get(s, "patternProperties");
    const json_t *names = json_object_get(s, "propertyNames");
    const json_t *lo = json_object_get(s, "minProperties"),
                 *hi = json_object_get(s, "maxProperties");
    char sub[512];
    double count = (double)json_object_size(v);
    if (json_is_number(lo) && count < json_number_value(lo))
        return fail(c, path, "fewer properties than minProperties");
    if (json_is_number(hi) && count > json_number_value(hi))
        return fail(c, path, "more properties than maxProperties");
    for (size_t i = 0; i < json_array_size(req); i++) {
        const char *k = json_string_value(json_array_get(req, i));
        if (k && !json_object_get(v, k)) {
            snprintf(sub, sizeof sub, "missing required '%.200s'", k);
            return fail(c, path, sub);
        }
    }
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        snprintf(sub, sizeof sub, "%.300s.%.200s", path, k);
        if (names) {
            json_t *name = json_string(k);
            int ok = check(c, names, name, sub);
            json_decref(name);
            if (!ok)
                return 0;
        }
        const json_t *ps = json_object_get(props, k);
        int matched = 0;
        if (ps && !check(c, ps, x, sub))
            return 0;
        if (pp && !check_pattern_props(c, pp, k, x, sub, &matched))
            return 0;
        if (!ps && !matched && extra && !check(c, extra, x, sub))
            return json_is_false(extra) ? fail(c, sub, "not an allowed property") : 0;
    }
    return 1;
}

static int check_array(ctx *c, const json_t *s, const json_t *v, const char *path) {
    const json_t *items = json_object_get(s, "items"), *prefix = json_object_get(s, "prefixItems");
    const json_t *lo = json_object_get(s, "minItems"), *hi = json_object_get(s, "maxItems");
    size_t len = json_array_size(v), first = json_array_size(prefix);
    if (json_is_number(lo) && (double)len < json_number_value(lo))
        return fail(c, path, "fewer items than minItems");
    if (json_is_number(hi) && (double)len > json_number_value(hi))
        return fail(c, path, "more items than maxItems");
    char sub[512];
    for (size_t i = 0; i < len; i++) {
        snprintf(sub, sizeof sub, "%.400s[%zu]", path, i);
        const json_t *is = i < first ? json_array_get(prefix, i) : items;
        if (is && !check(c, is, json_array_get(v, i), sub))
            return 0;
    }
    if (json_is_true(json_object_get(s, "uniqueItems")))
        for (size_t i = 0; i < len; i++)
            for (size_t j = i + 1; j < len; j++)
                if (json_schema_same(json_array_get(v, i), json_array_get(v, j)))
                    return fail(c, path, "items not unique (uniqueItems)");
    return 1;
}

/* allOf, anyOf, oneOf, not, if/then/else. */
static int check_combined(ctx *c, const json_t *s, const json_t *v, const char *path) {
    const json_t *all = json_object_get(s, "allOf"), *any = json_object_get(s, "anyOf");
    const json_t *one = json_object_get(s, "oneOf"), *not = json_object_get(s, "not");
    for (size_t i = 0; i < json_array_size(all); i++)
        if (!check(c, json_array_get(all, i), v, path))
            return 0;
    if (any) {
        int ok = 0;
        for (size_t i = 0; i < json_array_size(any) && !ok; i++)
            ok = quietly(c, json_array_get(any, i), v, path);
        if (!ok)
            return fail(c, path, "matches none of anyOf");
    }
    if (one) {
        int k = 0;
        for (size_t i = 0; i < json_array_size(one); i++)
            k += quietly(c, json_array_get(one, i), v, path);
        if (k != 1)
            return fail(c, path, k ? "matches more than one of oneOf" : "matches none of oneOf");
    }
    if (not &&quietly(c, not, v, path))
        return fail(c, path, "matches what not forbids");
    const json_t *cond = json_object_get(s, "if");
    if (cond) {
        const json_t *then = json_object_get(s, "then"), *els = json_object_get(s, "else");
        const json_t *next = quietly(c, cond, v, path) ? then : els;
        if (next && !check(c, next, v, path))
            return 0;
    }
    return 1;
}

static int check(ctx *c, const json_t *s, const json_t *v, const char *path) {
    if (json_is_true(s) || !json_is_object(s))
        return json_is_false(s) ? fail(c, path, "no value is allowed here") : 1;
    if (++c->depth > DEPTH_MOST) {
        c->depth--;
        return fail(c, path, "the schema nests too deep (a $ref loop?)");
    }
    int ok = 1;
    const json_t *ref = json_object_get(s, "$ref");
    if (ref) {
        const json_t *to = resolve(c->root, json_string_value(ref));
        ok = to ? check(c, to, v, path) : fail(c, path, "a $ref servelab cannot follow");
    }
    const json_t *type = json_object_get(s, "type");
    const json_t *e = json_object_get(s, "enum"), *k = json_object_get(s, "const");
    if (ok && type && !type_ok(type, v)) {
        char what[160];
        snprintf(what, sizeof what, "expected %s",
                 json_is_string(type) ? json_string_value(type) : "one of the types listed");
        ok = fail(c, path, what);
    }
    if (ok && json_is_array(e) && !in_enum(e, v))
        ok = fail(c, path, "not one of enum");
    if (ok && k && !json_schema_same(k, v))
        ok = fail(c, path, "not the const");
    if (ok && json_is_number(v))
        ok = check_number(c, s, v, path);
    if (ok && json_is_string(v))
        ok = check_string(c, s, v, path);
    if (ok && json_is_object(v))
        ok = check_object(c, s, v, path);
    if (ok && json_is_array(v))
        ok = check_array(c, s, v, path);
    if (ok)
        ok = check_combined(c, s, v, path);
    c->depth--;
    return ok;
}

int json_schema_check(const json_t *schema, const json_t *value, char *why, size_t whylen) {
    if (why && whylen)
        why[0] = 0;
    ctx c = {schema, why, whylen, 0};
    return check(&c, schema, value, "$");
}

/* ---- what a schema may hold ---- */

static const char *const known[] = {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "enum",
    "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties",
    "maxProperties", "patternProperties", "propertyNames", "allOf", "anyOf", "oneOf", "not", "if",
    "then", "else", "$ref", "$defs", "definitions",
    /* annotations: they ask nothing of a value (format is one by default) */
    "title", "description", "default", "examples", "$schema", "$id", "$comment", "format",
    "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "strict", "name",
    NULL};

static int is_known(const char *k) {
    for (int i = 0; known[i]; i++)
        if (!strcmp(k, known[i]))
            return 1;
    return 0;
}

static int bad(char *why, size_t n, const char *path, const char *fmt, const char *what) {
    char w[300];
    snprintf(w, sizeof w, fmt, what);
    snprintf(why, n, "%.250s: %.250s", path, w);
    one_line(why);
    return 0;
}

static int usable(const json_t *root, const json_t *s, const char *path, int depth, char *why,
                  size_t n);

/* Each member of the object or array v (keyed by name or index) usable. */
static int usable_each(const json_t *root, const json_t *v, const char *path, int depth, char *why,
                       size_t n) {
    char sub[512];
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(sub, sizeof sub, "%.400s[%zu]", path, i);
            if (!usable(root, json_array_get(v, i), sub, depth + 1, why, n))
                return 0;
        }
        return 1;
    }
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        snprintf(sub, sizeof sub, "%.300s.%.200s", path, k);
        if (!usable(root, x, sub, depth + 1, why, n))
            return 0;
    }
    return 1;
}

static int usable_types(const json_t *type, const char *path, char *why, size_t n) {
    const json_t *one = type;
    for (size_t i = 0; json_is_array(type) ? i < json_array_size(type) : i < 1; i++) {
        if (json_is_array(type))
            one = json_array_get(type, i);
        const char *t = json_string_value(one);
        int ok = 0;
        for (int j = 0; t && type_names[j] && !ok; j++)
            ok = !strcmp(t, type_names[j]);
        if (!ok)
            return bad(why, n, path, "type '%s' is not a JSON Schema type", t ? t : "(not a name)");
    }
    return 1;
}

static int usable(const json_t *root, const json_t *s, const char *path, int depth, char *why,
                  size_t n) {
    if (json_is_boolean(s))
        return 1;
    if (!json_is_object(s))
        return bad(why, n, path, "%s", "a schema must be an object or a boolean");
    if (depth > DEPTH_MOST)
        return bad(why, n, path, "%s", "the schema nests too deep");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        char sub[512];
        snprintf(sub, sizeof sub, "%.300s.%.200s", path, k);
        if (!is_known(k))
            return bad(why, n, path, "keyword '%s' is not one servelab checks", k);
        if (!strcmp(k, "type") && !usable_types(v, sub, why, n))
            return 0;
        if (!strcmp(k, "pattern")) {
            regex_t re;
            if (!json_is_string(v) || pattern_compile(json_string_value(v), &re))
                return bad(why, n, sub, "pattern '%s' is a regular expression servelab cannot read",
                           json_is_string(v) ? json_string_value(v) : "?");
            regfree(&re);
        }
        if (!strcmp(k, "$ref") && !resolve(root, json_string_value(v)))
            return bad(why, n, sub, "$ref '%s' is not a reference into this schema",
                       json_is_string(v) ? json_string_value(v) : "?");
        int each = !strcmp(k, "properties") || !strcmp(k, "patternProperties") ||
                   !strcmp(k, "$defs") || !strcmp(k, "definitions") || !strcmp(k, "prefixItems") ||
                   !strcmp(k, "allOf") || !strcmp(k, "anyOf") || !strcmp(k, "oneOf");
        int one = !strcmp(k, "additionalProperties") || !strcmp(k, "items") || !strcmp(k, "not") ||
                  !strcmp(k, "if") || !strcmp(k, "then") || !strcmp(k, "else") ||
                  !strcmp(k, "propertyNames");
        if (each && !usable_each(root, v, sub, depth, why, n))
            return 0;
        if (one && !usable(root, v, sub, depth + 1, why, n))
            return 0;
        if (!strcmp(k, "patternProperties")) {
            const char *pk;
            json_t *ps;
            json_object_foreach(v, pk, ps) {
                regex_t re;
                if (pattern_compile(pk, &re))
                    return bad(why, n, sub,
                               "pattern '%s' is a regular expression servelab cannot read", pk);
                regfree(&re);
            }
        }
    }
    return 1;
}

int json_schema_usable(const json_t *schema, char *why, size_t whylen) {
    if (why && whylen)
        why[0] = 0;
    char w[600];
    int ok = usable(schema, schema, "$", 0, w, sizeof w);
    if (!ok && why)
        snprintf(why, whylen, "%s", w);
    return ok;
}
