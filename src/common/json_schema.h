/* json_schema: whether a JSON value matches a JSON Schema, for what tool
 * parameters and structured-output formats use: type (a name or a list),
 * enum, const; minimum, maximum, exclusiveMinimum, exclusiveMaximum,
 * multipleOf; minLength, maxLength (in UTF-8 characters), pattern;
 * items, prefixItems, minItems, maxItems, uniqueItems; properties,
 * required, additionalProperties, patternProperties, propertyNames,
 * minProperties, maxProperties; allOf, anyOf, oneOf, not, if/then/else;
 * $ref to this schema's own parts ($defs, definitions); boolean schemas.
 * Annotations (title, description, default, examples, format, ...) ask
 * nothing of a value. A schema with any other keyword, a type that is not
 * JSON Schema's, a pattern that cannot be read as POSIX would read it, or
 * a $ref that leads nowhere is refused when it is loaded
 * (json_schema_usable), so an answer is never called valid against what
 * was not checked. Ours: jansson parses, nothing in Debian validates.
 * Shared by the client (checking answers) and the simulator (writing
 * them), so it sits at the bottom. */
#ifndef SERVELAB_JSON_SCHEMA_H
#define SERVELAB_JSON_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

/* 1 when `value` matches `schema`; 0 with the first mismatch, as a path
 * and a reason ("$.city: expected string"), in why (may be NULL). */
int json_schema_check(const json_t *schema, const json_t *value, char *why, size_t whylen);

/* 1 when servelab can check answers against the schema whole; 0 with what
 * stops it, as a path and a reason ("$.properties.a: keyword 'contains'
 * is not one servelab checks"), in why. */
int json_schema_usable(const json_t *schema, char *why, size_t whylen);

/* Two JSON values are one as JSON Schema compares them: numbers by value
 * (1 and 1.0 are equal), strings byte for byte, arrays and objects member
 * by member. */
int json_schema_same(const json_t *a, const json_t *b);

#endif
