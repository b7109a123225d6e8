/* answer: a tool call's or a JSON answer's text gathered as it streams,
 * and whether it is what was asked for. Kept only for runs that ask for
 * one (--tools, --response-format): the text of every other answer is
 * never held. Each chunk is read again with jansson (the hot path's scan
 * keeps no strings), which such runs can afford: their answers are short.
 * A call is valid when it names a declared tool and its arguments are
 * JSON that matches the tool's parameters; a JSON answer when it parses
 * and matches the schema (common/json_schema.h's subset). */
#ifndef SERVELAB_CLIENT_ANSWER_H
#define SERVELAB_CLIENT_ANSWER_H

#include <jansson.h>
#include <stddef.h>

#define ANSWER_MAX_CALLS 8
#define ANSWER_MAX_BYTES (1 << 20) /* past this an answer is cut, and invalid */

typedef struct answer_call {
    long long index; /* the server's tool_calls index */
    char name[128];
    char *args;
    size_t n, cap;
} answer_call;

typedef struct answer_buf {
    char *content;
    size_t n, cap;
    answer_call calls[ANSWER_MAX_CALLS];
    int n_calls; /* distinct tool_calls indices seen, in calls[] in the order they came */
    int cut;     /* more than ANSWER_MAX_BYTES, or more calls than kept */
} answer_buf;

/* What was asked: the declared tools (an array; NULL: none), their
 * tool_choice (NULL: none given, which is "auto") and the answer's schema
 * (response_format's json_schema.schema, or {} for json_object; NULL:
 * none). */
typedef struct answer_ask {
    const json_t *tools;
    const json_t *schema;
    const json_t *tool_choice;
} answer_ask;

/* One chunk's JSON (or a whole non-streamed body): its content and its
 * tool_calls deltas appended. */
void answer_take(answer_buf *a, const char *data, size_t len);
/* 1 when the answer is what was asked for, 0 when not (why says what is
 * wrong), -1 when nothing was asked. With tools, tool_choice says what is
 * right: "required" or a named tool, a call (to that tool); "none", text;
 * "auto" (or none given), either. Text where text may come is judged
 * against the schema when one was asked, else it is right. */
int answer_verdict(const answer_buf *a, const answer_ask *ask, char *why, size_t whylen);
void answer_free(answer_buf *a);

#endif
