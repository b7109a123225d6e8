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

/* The call the server numbers index: its slot, a new one the first time
 * (the indices need not start at 0 nor follow each other); NULL when more
 * calls came than are kept. */
static answer_call *call_at(answer_buf *a, long long index) {
    for (int i = 0; i < a->n_calls; i++)
        if (a->calls[i].index == index)
            return &a->calls[i];
    if (a->n_calls == ANSWER_MAX_CALLS)
        return NULL;
    answer_call *c = &a->calls[a->n_calls++];
    c->index = index;
    return c;
}

static void take_calls(answer_buf *a, const json_t *calls) {
    for (size_t i = 0; i < json_array_size(calls); i++) {
        const json_t *c = json_array_get(calls, i);
        const json_t *idx = json_object_get(c, "index");
        long long k = json_is_integer(idx) ? (long long)json_integer_value(idx) : (long long)i;
        answer_call *ac = k < 0 ? NULL : call_at(a, k);
        if (!ac) {
            a->cut = 1;
            continue;
        }
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
    /* any valid JSON: a \u0000 in a string (llama.cpp sends them), and an
     * integer past int64 read as a number */
    json_error_t je;
    json_t *v = json_loadb(text ? text : "", n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!v)
        v = json_loadb(text ? text : "", n,
                       JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
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

/* The tool tool_choice names ({"type": "function", "function": {"name":
 * ...}}), or NULL; *need: a call is needed ("required" or a named tool),
 * *no: none may come ("none"). */
static const char *choice_of(const json_t *choice, int *need, int *no) {
    const char *c = json_string_value(choice);
    *need = c && !strcmp(c, "required");
    *no = c && !strcmp(c, "none");
    const char *named =
        json_string_value(json_object_get(json_object_get(choice, "function"), "name"));
    *need |= named != NULL;
    return named;
}

/* Every call names a declared tool (the named one, when tool_choice names
 * one) and its arguments match that tool's parameters. */
static int calls_valid(const answer_buf *a, const answer_ask *ask, const char *named, char *why,
                       size_t whylen) {
    for (int i = 0; i < a->n_calls; i++) {
        const answer_call *c = &a->calls[i];
        int found;
        const json_t *schema = tool_schema(ask->tools, c->name, &found);
        if (!found) {
            snprintf(why, whylen, "call %d names '%.100s', which is not a declared tool", i,
                     c->name);
            return 0;
        }
        if (named && strcmp(named, c->name)) {
            snprintf(why, whylen, "call %d names '%.100s', where tool_choice named '%.100s'", i,
                     c->name, named);
            return 0;
        }
        char what[160];
        snprintf(what, sizeof what, "the arguments of %s", c->name);
        if (!json_matches(c->args, c->n, schema, what, why, whylen))
            return 0;
    }
    return 1;
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
    int need = 0, no = 0;
    const char *named = ask->tools ? choice_of(ask->tool_choice, &need, &no) : NULL;
    if (ask->tools && a->n_calls > 0) {
        if (no) {
            snprintf(why, whylen, "a tool was called where tool_choice was \"none\"");
            return 0;
        }
        return calls_valid(a, ask, named, why, whylen);
    }
    if (need) {
        snprintf(why, whylen, "no tool was called (tool_choice %s)",
                 named ? "named one" : "\"required\"");
        return 0;
    }
    if (ask->schema)
        return json_matches(a->content, a->n, ask->schema, "the answer", why, whylen);
    return 1; /* text, where tool_choice let text come */
}

void answer_free(answer_buf *a) {
    free(a->content);
    for (int i = 0; i < ANSWER_MAX_CALLS; i++)
        free(a->calls[i].args);
    memset(a, 0, sizeof *a);
}
