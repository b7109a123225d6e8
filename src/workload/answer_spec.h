/* answer_spec: what a run asks its answers to be: `--tools FILE` (OpenAI
 * tools, a JSON array, or an object {"tools": [...], "tool_choice": ...})
 * and `--response-format FILE` (the response_format object: {"type":
 * "json_schema", "json_schema": {"name": ..., "schema": {...}}} or
 * {"type": "json_object"}). Read and checked before any traffic; their
 * keys go into every request's body, and the client checks every answer
 * against them (client/answer.h). */
#ifndef SERVELAB_ANSWER_SPEC_H
#define SERVELAB_ANSWER_SPEC_H

#include <jansson.h>
#include <stddef.h>

typedef struct answer_spec {
    json_t *tools;           /* NULL: none */
    json_t *tool_choice;     /* NULL: the server's default */
    json_t *response_format; /* NULL: none */
    json_t *schema;          /* the answer's: json_schema.schema, or {"type":"object"} */
} answer_spec;

/* Either path may be NULL. 0, or -1 with a one-line reason naming the
 * flag and the file in why (s then holds nothing). */
int answer_spec_load(const char *tools_path, const char *format_path, answer_spec *s, char *why,
                     size_t whylen);
/* The spec's keys set into a request body object. */
void answer_spec_apply(const answer_spec *s, json_t *body);
void answer_spec_free(answer_spec *s);

#endif
