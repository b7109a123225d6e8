/* answer: tool calls and JSON answers, gathered and checked. */
#include "client/answer.h"
#include "common/json_schema.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void append(char **buf, size_t *n, size_t *cap, const char *s, size_t k, int *cut) {
    if (*n + k > ANSWER_MAX_BYTES) {
        *cut = 1;
        return;
    }
    if (*n + k + 1 > *cap) {
        *cap = (*n + k + 1) * 2;
        *buf = xrealloc(*buf, *cap);
    }
    memcpy(*buf + *n, s, k);
    *n += k;
    (*buf)[*n] = 0;
}

static void take_calls(answer_buf *a, const json_t *calls) {
    for (size_t i = 0; i < json_array_size(calls); i++) {
        const json_t *c = json_array_get(calls, i);
        const json_t *idx = json_object_get(c, "index");
        long k = json_is_integer(idx) ? (long)json_integer_value(idx) : (long)i;
        if (k < 0 || k >= ANSWER_MAX_CALLS) {
            a->cut = 1;
            continue;
        }
        if (k + 1 > a->n_calls)
            a->n_calls = (int)k + 1;
        answer_call *ac = &a->calls[k];
        const json_t *f = json_object_get(c, "function");
        const char *name = json_string_value(json_object_get(f, "name"));
        if (name && *name)
            snprintf(ac->name, sizeof ac->name, "%s", name);
        const json_t *args = json_object_get(f, "arguments");
        if (json_is_string(args))
            append(&ac->args, &ac->n, &ac->cap, json_string_value(args), json_string_length(args),
                   &a->cut);
        else if (json_is_object(args)) { /* a server that sends the arguments as an object */
            char *s = json_dumps(args, JSON_COMPACT);
            append(&ac->args, &ac->n, &ac->cap, s, strlen(s), &a->cut);
            free(s);
        }
    }
}

static void take_message(answer_buf *a, const json_t *m) {
    const json_t *content = json_object_get(m, "content");
    if (json_is_string(content))
        append(&a->content, &a->n, &a->cap, json_string_value(content), json_string_length(content),
               &a->cut);
    take_calls(a, json_object_get(m, "tool_calls"));
}

void answer_take(answer_buf *a, const char *data, size_t len) {
    json_t *root = json_loadb(data, len, 0, NULL);
    const json_t *c = json_array_get(json_object_get(root, "choices"), 0);
    if (c) {
        take_message(a, json_object_get(c, "delta"));
        take_message(a, json_object_get(c, "message"));
        const json_t *text = json_object_get(c, "text");
        if (json_is_string(text))
            append(&a->content, &a->n, &a->cap, json_string_value(text), json_string_length(text),
                   &a->cut);
    } else if (json_is_string(json_object_get(root, "content"))) { /* llama.cpp native */
        const json_t *t = json_object_get(root, "content");
        append(&a->content, &a->n, &a->cap, json_string_value(t), json_string_length(t), &a->cut);
    }
    json_decref(root);
}

static const json_t *tool_schema(const json_t *tools, const char *name, int *found) {
    *found = 0;
    for (size_t i = 0; i < json_array_size(tools); i++) {
        const json_t *f = json_object_get(json_array_get(tools, i), "function");
        const char *n = json_string_value(json_object_get(f, "name"));
        if (n && !strcmp(n, name)) {
            *found = 1;
            return json_object_get(f, "parameters");
        }
    }
    return NULL;
}

/* 1 when text is JSON matching schema (NULL: any JSON). */
static int json_matches(const char *text, size_t n, const json_t *schema, const char *what,
                        char *why, size_t whylen) {
    json_error_t je;
    json_t *v = json_loadb(text ? text : "", n, JSON_DECODE_ANY, &je);
    if (!v) {
        snprintf(why, whylen, "%s is not JSON (%s)", what, je.text);
        return 0;
    }
    char w[256];
    int ok = !schema || json_schema_check(schema, v, w, sizeof w);
    if (!ok)
        snprintf(why, whylen, "%s does not match its schema: %s", what, w);
    json_decref(v);
    return ok;
}

int answer_verdict(const answer_buf *a, const answer_ask *ask, char *why, size_t whylen) {
    if (why && whylen)
        why[0] = 0;
    if (!ask->tools && !ask->schema)
        return -1;
    if (a->cut) {
        snprintf(why, whylen, "the answer was longer than servelab keeps");
        return 0;
    }
    if (ask->tools && a->n_calls > 0) {
        for (int i = 0; i < a->n_calls; i++) {
            const answer_call *c = &a->calls[i];
            int found;
            const json_t *schema = tool_schema(ask->tools, c->name, &found);
            if (!found) {
                snprintf(why, whylen, "call %d names '%.100s', which is not a declared tool", i,
                         c->name);
                return 0;
            }
            char what[160];
            snprintf(what, sizeof what, "the arguments of %s", c->name);
            if (!json_matches(c->args, c->n, schema, what, why, whylen))
                return 0;
        }
        return 1;
    }
    if (ask->schema)
        return json_matches(a->content, a->n, ask->schema, "the answer", why, whylen);
    snprintf(why, whylen, "no tool was called");
    return 0;
}

void answer_free(answer_buf *a) {
    free(a->content);
    for (int i = 0; i < ANSWER_MAX_CALLS; i++)
        free(a->calls[i].args);
    memset(a, 0, sizeof *a);
}
