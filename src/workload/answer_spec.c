/* answer_spec: --tools and --response-format, read and checked. */
#include "workload/answer_spec.h"
#include "common/files.h"
#include "common/json_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file read whole (a regular file only: a FIFO is never waited on). */
static json_t *load(const char *flag, const char *path, char *why, size_t whylen) {
    size_t len;
    char *text = read_whole_file(path, &len);
    if (!text) {
        snprintf(why, whylen, "%s %s: cannot read: %s", flag, path, file_why(errno));
        return NULL;
    }
    json_error_t je;
    json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!v)
        snprintf(why, whylen, "%s %s: %s", flag, path, je.text);
    return v;
}

/* A schema answers can be checked against whole (common/json_schema.h):
 * 0, or -1 with why naming what is not. */
static int schema_usable(const char *flag, const char *path, const char *what, const json_t *schema,
                         char *why, size_t whylen) {
    char w[700];
    if (json_schema_usable(schema, w, sizeof w))
        return 0;
    snprintf(why, whylen,
             "%s %s: %s: %s (servelab would judge answers by part of it; docs/answers.md lists "
             "what it checks)",
             flag, path, what, w);
    return -1;
}

/* Each tool a function with a unique non-empty name and, if any, an object
 * of parameters. */
static int check_tools(const char *path, const json_t *tools, char *why, size_t whylen) {
    if (!json_is_array(tools) || json_array_size(tools) == 0) {
        snprintf(why, whylen, "--tools %s: expected a non-empty array of tools", path);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(tools); i++) {
        const json_t *t = json_array_get(tools, i), *f = json_object_get(t, "function");
        const char *type = json_string_value(json_object_get(t, "type"));
        const char *name = json_string_value(json_object_get(f, "name"));
        const json_t *params = json_object_get(f, "parameters");
        const char *bad = !type || strcmp(type, "function") ? "is not {\"type\": \"function\", ...}"
                          : !name || !*name                 ? "has no function.name"
                          : params && !json_is_object(params)
                              ? "has function.parameters that is not an object"
                              : NULL;
        for (size_t j = 0; !bad && j < i; j++) {
            const char *other = json_string_value(
                json_object_get(json_object_get(json_array_get(tools, j), "function"), "name"));
            if (other && !strcmp(other, name))
                bad = "repeats an earlier tool's name";
        }
        if (bad) {
            snprintf(why, whylen, "--tools %s: tool %zu %s", path, i, bad);
            return -1;
        }
        char what[200];
        snprintf(what, sizeof what, "the parameters of %.150s", name);
        if (params && schema_usable("--tools", path, what, params, why, whylen))
            return -1;
    }
    return 0;
}

static int check_choice(const char *path, const json_t *choice, const json_t *tools, char *why,
                        size_t whylen) {
    if (!choice)
        return 0;
    if (json_is_string(choice)) {
        const char *c = json_string_value(choice);
        if (!strcmp(c, "auto") || !strcmp(c, "none") || !strcmp(c, "required"))
            return 0;
    } else {
        const char *want =
            json_string_value(json_object_get(json_object_get(choice, "function"), "name"));
        for (size_t i = 0; want && i < json_array_size(tools); i++) {
            const char *n = json_string_value(
                json_object_get(json_object_get(json_array_get(tools, i), "function"), "name"));
            if (n && !strcmp(n, want))
                return 0;
        }
    }
    snprintf(why, whylen,
             "--tools %s: tool_choice must be auto, none, required or "
             "{\"type\":\"function\",\"function\":{\"name\":...}} naming a declared tool",
             path);
    return -1;
}

static int load_tools(const char *path, answer_spec *s, char *why, size_t whylen) {
    json_t *v = load("--tools", path, why, whylen);
    if (!v)
        return -1;
    if (json_is_object(v)) {
        s->tools = json_incref(json_object_get(v, "tools"));
        s->tool_choice = json_incref(json_object_get(v, "tool_choice"));
        json_decref(v);
    } else {
        s->tools = v;
    }
    if (check_tools(path, s->tools, why, whylen) ||
        check_choice(path, s->tool_choice, s->tools, why, whylen))
        return -1;
    return 0;
}

static int load_format(const char *path, answer_spec *s, char *why, size_t whylen) {
    json_t *v = load("--response-format", path, why, whylen);
    if (!v)
        return -1;
    s->response_format = v;
    const char *type = json_string_value(json_object_get(v, "type"));
    if (type && !strcmp(type, "json_schema")) {
        json_t *schema = json_object_get(json_object_get(v, "json_schema"), "schema");
        if (json_is_object(schema)) {
            if (schema_usable("--response-format", path, "its schema", schema, why, whylen))
                return -1;
            s->schema = json_incref(schema);
            return 0;
        }
        snprintf(why, whylen,
                 "--response-format %s: json_schema needs json_schema.schema, an "
                 "object",
                 path);
        return -1;
    }
    if (type && !strcmp(type, "json_object")) {
        s->schema = json_pack("{s:s}", "type", "object");
        return 0;
    }
    snprintf(why, whylen,
             "--response-format %s: expected {\"type\": \"json_schema\", \"json_schema\": "
             "{\"schema\": {...}}} or {\"type\": \"json_object\"}",
             path);
    return -1;
}

int answer_spec_load(const char *tools_path, const char *format_path, answer_spec *s, char *why,
                     size_t whylen) {
    memset(s, 0, sizeof *s);
    if ((tools_path && load_tools(tools_path, s, why, whylen)) ||
        (format_path && load_format(format_path, s, why, whylen))) {
        answer_spec_free(s);
        return -1;
    }
    return 0;
}

void answer_spec_apply(const answer_spec *s, json_t *body) {
    if (s->tools)
        json_object_set(body, "tools", s->tools);
    if (s->tool_choice)
        json_object_set(body, "tool_choice", s->tool_choice);
    if (s->response_format)
        json_object_set(body, "response_format", s->response_format);
}

void answer_spec_free(answer_spec *s) {
    json_decref(s->tools);
    json_decref(s->tool_choice);
    json_decref(s->response_format);
    json_decref(s->schema);
    memset(s, 0, sizeof *s);
}
