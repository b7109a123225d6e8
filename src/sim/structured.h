/* structured: the simulator's answers to requests that ask for a tool call
 * (`tools`, `tool_choice`) or for JSON (`response_format` json_schema or
 * json_object), internal to src/sim/. The answer is made from the schema:
 * a value that matches it (every property, the first of an enum, numbers
 * within their bounds, strings of words within their lengths), written
 * compact and streamed four bytes a token, so its length in tokens is the
 * text's and an answer cut short by max_tokens is JSON that does not
 * parse, as a real one would be. With --invalid-json-pct P, P% of them
 * (drawn from the request's seed) are made wrong on purpose: a required
 * property left out, or where there is none the text cut in half. A tool
 * call names the tool tool_choice names, else the first declared; with
 * tool_choice "none" the answer is ordinary text. */
#ifndef SERVELAB_SIM_STRUCTURED_H
#define SERVELAB_SIM_STRUCTURED_H

#include <jansson.h>
#include <stdint.h>

#define STRUCTURED_PIECE 4 /* bytes of the text a token carries */

typedef struct structured_plan {
    char *text;          /* the arguments of the call, or the JSON answer; NULL: neither */
    char tool_name[128]; /* the function called; "" for a JSON answer */
    int valid;           /* 1: written to match; 0: made wrong on purpose, or a bound of the
                            schema it could not meet (too deep, too many items, min > max) */
    int n_pieces;        /* tokens of the text */
} structured_plan;

/* The plan for a request with these fields of its body (each may be
 * NULL), its seed and the share made wrong. 0, or -1 with why (a tool_choice
 * naming no declared tool, a response_format of no known type). */
int structured_plan_make(const json_t *tools, const json_t *tool_choice,
                         const json_t *response_format, uint64_t seed, int invalid_pct,
                         structured_plan *p, char *why, size_t whylen);
/* Piece i of the text (at most STRUCTURED_PIECE bytes, not NUL-ended), its
 * length in *n. */
const char *structured_piece(const structured_plan *p, int i, int *n);
void structured_plan_free(structured_plan *p);

#endif
