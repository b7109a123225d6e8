/* json_schema: the subset of JSON Schema that structured output uses. */
#include "common/json_schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int fail(char *why, size_t n, const char *path, const char *what) {
    if (why && n)
        snprintf(why, n, "%s: %s", path, what);
    return 0;
}

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
    if (!json_is_array(type))
        return 1;
    for (size_t i = 0; i < json_array_size(type); i++)
        if (json_is_string(json_array_get(type, i)) &&
            type_is(v, json_string_value(json_array_get(type, i))))
            return 1;
    return 0;
}

static size_t utf8_chars(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int in_enum(const json_t *e, const json_t *v) {
    for (size_t i = 0; i < json_array_size(e); i++)
        if (json_equal(json_array_get(e, i), (json_t *)v))
            return 1;
    return 0;
}

static int check(const json_t *s, const json_t *v, const char *path, char *why, size_t n);

static int check_object(const json_t *s, const json_t *v, const char *path, char *why, size_t n) {
    const json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required");
    const json_t *extra = json_object_get(s, "additionalProperties");
    char sub[512];
    for (size_t i = 0; i < json_array_size(req); i++) {
        const char *k = json_string_value(json_array_get(req, i));
        if (k && !json_object_get(v, k)) {
            snprintf(sub, sizeof sub, "missing required '%s'", k);
            return fail(why, n, path, sub);
        }
    }
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        snprintf(sub, sizeof sub, "%s.%s", path, k);
        const json_t *ps = json_object_get(props, k);
        if (ps && !check(ps, x, sub, why, n))
            return 0;
        if (!ps && json_is_false(extra))
            return fail(why, n, sub, "not an allowed property");
        if (!ps && json_is_object(extra) && !check(extra, x, sub, why, n))
            return 0;
    }
    return 1;
}

static int check_array(const json_t *s, const json_t *v, const char *path, char *why, size_t n) {
    const json_t *items = json_object_get(s, "items");
    const json_t *lo = json_object_get(s, "minItems"), *hi = json_object_get(s, "maxItems");
    size_t len = json_array_size(v);
    if (json_is_number(lo) && (double)len < json_number_value(lo))
        return fail(why, n, path, "fewer items than minItems");
    if (json_is_number(hi) && (double)len > json_number_value(hi))
        return fail(why, n, path, "more items than maxItems");
    char sub[512];
    for (size_t i = 0; json_is_object(items) && i < len; i++) {
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        if (!check(items, json_array_get(v, i), sub, why, n))
            return 0;
    }
    return 1;
}

static int check(const json_t *s, const json_t *v, const char *path, char *why, size_t n) {
    if (json_is_true(s) || !json_is_object(s))
        return 1;
    const json_t *type = json_object_get(s, "type");
    if (type && !type_ok(type, v)) {
        char what[160];
        snprintf(what, sizeof what, "expected %s",
                 json_is_string(type) ? json_string_value(type) : "one of the types listed");
        return fail(why, n, path, what);
    }
    const json_t *e = json_object_get(s, "enum"), *c = json_object_get(s, "const");
    if (json_is_array(e) && !in_enum(e, v))
        return fail(why, n, path, "not one of enum");
    if (c && !json_equal((json_t *)c, (json_t *)v))
        return fail(why, n, path, "not the const");
    if (json_is_number(v)) {
        const json_t *lo = json_object_get(s, "minimum"), *hi = json_object_get(s, "maximum");
        double x = json_number_value(v);
        if (json_is_number(lo) && x < json_number_value(lo))
            return fail(why, n, path, "below minimum");
        if (json_is_number(hi) && x > json_number_value(hi))
            return fail(why, n, path, "above maximum");
    }
    if (json_is_string(v)) {
        const json_t *lo = json_object_get(s, "minLength"), *hi = json_object_get(s, "maxLength");
        double len = (double)utf8_chars(json_string_value(v));
        if (json_is_number(lo) && len < json_number_value(lo))
            return fail(why, n, path, "shorter than minLength");
        if (json_is_number(hi) && len > json_number_value(hi))
            return fail(why, n, path, "longer than maxLength");
    }
    if (json_is_object(v))
        return check_object(s, v, path, why, n);
    if (json_is_array(v))
        return check_array(s, v, path, why, n);
    return 1;
}

int json_schema_check(const json_t *schema, const json_t *value, char *why, size_t whylen) {
    if (why && whylen)
        why[0] = 0;
    return check(schema, value, "$", why, whylen);
}

static const char *const known[] = {"type",     "properties", "required",    "additionalProperties",
                                    "items",    "enum",       "const",       "minimum",
                                    "maximum",  "minLength",  "maxLength",   "minItems",
                                    "maxItems", "title",      "description", "default",
                                    "$schema",  "examples",   NULL};

const char *json_schema_unsupported(const json_t *s) {
    if (!json_is_object(s))
        return NULL;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        int ok = 0;
        for (int i = 0; known[i] && !ok; i++)
            ok = !strcmp(k, known[i]);
        if (!ok)
            return k;
        const char *sub = NULL;
        if (!strcmp(k, "properties")) {
            const char *pk;
            json_t *ps;
            json_object_foreach(v, pk, ps) if (!sub) sub = json_schema_unsupported(ps);
        } else if (!strcmp(k, "items") || !strcmp(k, "additionalProperties")) {
            sub = json_schema_unsupported(v);
        }
        if (sub)
            return sub;
    }
    return NULL;
}
