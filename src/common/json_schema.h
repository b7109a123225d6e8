/* json_schema: whether a JSON value matches a JSON Schema, for the subset
 * that tool parameters and structured-output formats use: type (a name or
 * a list), properties, required, additionalProperties (false, or a schema),
 * items, enum, const, minimum / maximum, minLength / maxLength (in UTF-8
 * characters) and minItems / maxItems. Other keywords ($ref, anyOf,
 * pattern, format, ...) are not checked, and the schema_supported call
 * says so, so a report never calls an answer valid against what it did
 * not check. Ours: jansson parses, nothing in Debian validates, and the
 * subset is small. Shared by the client (checking answers) and the
 * simulator (writing them), so it sits at the bottom. */
#ifndef SERVELAB_JSON_SCHEMA_H
#define SERVELAB_JSON_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

/* 1 when `value` matches `schema`; 0 with the first mismatch, as a path
 * and a reason ("$.city: expected string"), in why (may be NULL). */
int json_schema_check(const json_t *schema, const json_t *value, char *why, size_t whylen);

/* NULL when every keyword of the schema (at any depth) is one of the subset
 * above; else the first that is not (its name, static or in the schema). */
const char *json_schema_unsupported(const json_t *schema);

#endif
