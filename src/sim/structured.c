/* structured: tool calls and JSON answers made from their schemas. */
#include "sim/structured.h"
#include "common/json_schema.h"
#include "common/rng.h"
#include "common/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const words[] = {"alpha", "river", "stone", "cloud", "north",
                                    "amber", "delta", "maple", "orbit", "quartz"};

static const char *first_type(const json_t *s) {
    const json_t *t = json_object_get(s, "type");
    if (json_is_array(t))
        t = json_array_get(t, 0);
    if (json_is_string(t))
        return json_string_value(t);
    return json_object_get(s, "properties") ? "object" : "string";
}

/* The making of one answer: its random draws, and the values it may still
 * make (a schema can ask for 12 items 8 levels deep, or a billion items:
 * the answer is cut at max_tokens anyway, so making stops at a budget and
 * the request is served at once). A bound the maker cannot meet (too deep,
 * past the budget, min over max) leaves a value that does not match, and
 * the checker (common/json_schema.h) says so: the trace's ground truth is
 * its verdict. */
typedef struct gen {
    rng *g;
    long budget;
} gen;

#define GEN_VALUES 4096 /* values one answer is made of, at most */
#define GEN_STRING 4096 /* a string's characters, at most */
#define GEN_DEPTH 8     /* levels; deeper objects and arrays are left empty */

/* A non-negative integer keyword, or def when absent or not one. */
static long count_kw(const json_t *s, const char *key, long def) {
    const json_t *v = json_object_get(s, key);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (long)json_integer_value(v) : def;
}

static json_t *make_string(const json_t *s, gen *m) {
    long min = count_kw(s, "minLength", 1), max = count_kw(s, "maxLength", GEN_STRING);
    if (min > GEN_STRING)
        min = GEN_STRING; /* made short all the same: no answer is that long */
    char buf[GEN_STRING + 16] = "";
    long n = 0;
    while (n < min || n == 0) {
        const char *w = words[rng_range(m->g, 0, 9)];
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s", n ? " " : "", w);
        if (n >= GEN_STRING)
            break;
    }
    if (n > GEN_STRING)
        n = GEN_STRING;
    if (max < n)
        n = max;
    buf[n] = 0;
    return json_string(buf);
}

static json_t *make_value(const json_t *s, gen *m, int depth);

static json_t *make_object(const json_t *s, gen *m, int depth) {
    json_t *o = json_object();
    const char *k;
    json_t *ps;
    json_object_foreach((json_t *)json_object_get(s, "properties"), k, ps) {
        if (depth < GEN_DEPTH && m->budget > 0)
            json_object_set_new(o, k, make_value(ps, m, depth + 1));
    }
    return o;
}

static json_t *make_array(const json_t *s, gen *m, int depth) {
    json_t *arr = json_array();
    long min = count_kw(s, "minItems", 0), max = count_kw(s, "maxItems", LONG_MAX);
    long n = min > 2 ? min : 2;
    if (n > max)
        n = max;
    for (long i = 0; i < n && depth < GEN_DEPTH && m->budget > 0; i++)
        json_array_append_new(arr, make_value(json_object_get(s, "items"), m, depth + 1));
    return arr;
}

static json_t *make_value(const json_t *s, gen *m, int depth) {
    m->budget--;
    const json_t *e = json_object_get(s, "enum"), *c = json_object_get(s, "const");
    if (c)
        return json_deep_copy(c);
    if (json_is_array(e) && json_array_size(e))
        return json_deep_copy(json_array_get(e, 0));
    const char *t = first_type(s);
    const json_t *lo = json_object_get(s, "minimum"), *hi = json_object_get(s, "maximum");
    double a = json_is_number(lo) ? json_number_value(lo) : 0;
    double b = json_is_number(hi) ? json_number_value(hi) : a + 100;
    if (!strcmp(t, "object"))
        return make_object(s, m, depth);
    if (!strcmp(t, "array"))
        return make_array(s, m, depth);
    if (!strcmp(t, "integer")) {
        double lo_i = ceil(a), hi_i = floor(b);
        if (!(lo_i <= hi_i) || fabs(lo_i) > 9e15 || fabs(hi_i) > 9e15)
            return json_integer(0); /* no integer to draw: the checker calls it wrong */
        return json_integer(
            (json_int_t)(lo_i + (double)rng_range(m->g, 0, (int64_t)(hi_i - lo_i))));
    }
    if (!strcmp(t, "number"))
        return json_real(a + (b - a) * rng_uniform(m->g));
    if (!strcmp(t, "boolean"))
        return json_true();
    if (!strcmp(t, "null"))
        return json_null();
    return make_string(s, m);
}

/* The schema the answer must match, and (for a tool call) the tool. */
static int pick(const json_t *tools, const json_t *choice, const json_t *fmt, const json_t **schema,
                const char **name, char *why, size_t whylen) {
    *schema = NULL;
    *name = NULL;
    if (json_is_array(tools) && json_array_size(tools) &&
        !(json_is_string(choice) && !strcmp(json_string_value(choice), "none"))) {
        const char *want =
            json_string_value(json_object_get(json_object_get(choice, "function"), "name"));
        for (size_t i = 0; i < json_array_size(tools); i++) {
            const json_t *f = json_object_get(json_array_get(tools, i), "function");
            const char *n = json_string_value(json_object_get(f, "name"));
            if (n && (!want || !strcmp(n, want))) {
                *name = n;
                *schema = json_object_get(f, "parameters");
                return 0;
            }
        }
        snprintf(why, whylen, "tool_choice names no declared tool");
        return -1;
    }
    if (!fmt)
        return 0;
    const char *type = json_string_value(json_object_get(fmt, "type"));
    if (type && !strcmp(type, "json_schema")) {
        *schema = json_object_get(json_object_get(fmt, "json_schema"), "schema");
        if (!json_is_object(*schema)) {
            snprintf(why, whylen, "response_format json_schema has no schema object");
            return -1;
        }
        return 0;
    }
    if (type && !strcmp(type, "json_object"))
        return 0; /* any object: the schema below is {} */
    if (type && !strcmp(type, "text"))
        return 1;
    snprintf(why, whylen, "response_format type must be json_schema, json_object or text");
    return -1;
}

int structured_plan_make(const json_t *tools, const json_t *tool_choice,
                         const json_t *response_format, uint64_t seed, int invalid_pct,
                         structured_plan *p, char *why, size_t whylen) {
    memset(p, 0, sizeof *p);
    const json_t *schema;
    const char *name;
    int r = pick(tools, tool_choice, response_format, &schema, &name, why, whylen);
    if (r < 0)
        return -1;
    if (r > 0 || (!name && !response_format))
        return 0; /* an ordinary answer */
    rng g;
    rng_seed(&g, mix64(seed ^ 0x57c0ULL));
    gen m = {&g, GEN_VALUES};
    json_t *v = schema ? make_value(schema, &m, 0) : json_object();
    if (!schema) /* json_object: an object of one word */
        json_object_set_new(v, "answer", json_string(words[rng_range(&g, 0, 9)]));
    p->valid = !(invalid_pct > 0 && rng_range(&g, 0, 99) < invalid_pct);
    /* the ground truth is the checker's: what the maker cannot meet (a
     * pattern, anyOf, a bound past its budget) is not called valid */
    int made_ok = !schema || json_schema_check(schema, v, NULL, 0);
    const json_t *req = json_object_get(schema, "required");
    int cut = 0;
    if (!p->valid && json_is_object(v) && json_is_string(json_array_get(req, 0)))
        json_object_del(v, json_string_value(json_array_get(req, 0)));
    else if (!p->valid)
        cut = 1;
    p->text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    if (cut)
        p->text[strlen(p->text) / 2] = 0;
    p->valid &= made_ok;
    if (name)
        snprintf(p->tool_name, sizeof p->tool_name, "%s", name);
    size_t len = strlen(p->text);
    p->n_pieces = (int)((len + STRUCTURED_PIECE - 1) / STRUCTURED_PIECE);
    if (p->n_pieces < 1)
        p->n_pieces = 1;
    return 0;
}

const char *structured_piece(const structured_plan *p, int i, int *n) {
    size_t len = strlen(p->text), at = (size_t)i * STRUCTURED_PIECE;
    if (at >= len) {
        *n = 0;
        return p->text + len;
    }
    *n = (int)(len - at < STRUCTURED_PIECE ? len - at : STRUCTURED_PIECE);
    return p->text + at;
}

void structured_plan_free(structured_plan *p) {
    free(p->text);
    memset(p, 0, sizeof *p);
}
