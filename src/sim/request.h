/* request: a completions or chat completions body read into what the
 * simulator is asked to do, internal to src/sim/.
 *
 * The completion handler calls request_parse on every POST body: it checks
 * the body the way vLLM's OpenAI server does (in the same order, so the
 * first problem found is the one reported, with the same messages) and
 * either fills a completion_ask or says which status and message to answer
 * with. request_plan_output then turns the ask into the output length the
 * engine will generate. api.c's /tokenize counts chat messages with
 * count_chat_tokens, so it agrees with what a chat request is charged.
 * Nothing here touches the server or the network. */
#ifndef SERVELAB_SIM_REQUEST_H
#define SERVELAB_SIM_REQUEST_H

#include "sim/engine.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* What a valid body asks for. */
typedef struct completion_ask {
    int chat;
    int prompt_tokens; /* at least 1 */
    long max_tokens;   /* 0 when absent */
    long min_tokens;
    int stream, include_usage, continuous_usage, ignore_eos;
} completion_ask;

/* Why a body was refused. */
typedef struct request_error {
    int status; /* 400, or 404 for an unknown model */
    char message[512];
} request_error;

/* Reads `body` (n bytes) of a completions (`chat` 0) or chat completions
 * (`chat` 1) request for `model`: 0 with `ask` filled, or -1 with `err`. */
int request_parse(const char *body, size_t n, int chat, const char *model, int max_model_len,
                  completion_ask *ask, request_error *err);

/* The sequence's prompt and output length: exactly max_tokens with
 * ignore_eos, else a draw seeded by `h` (the request's hash) between
 * eos_min_frac_pct of the cap and the cap, never past max_model_len. */
void request_plan_output(const completion_ask *ask, int max_model_len, int eos_min_frac_pct,
                         uint64_t h, seq *s);

/* Prompt tokens of a chat `messages` list; -1 with a static message in
 * *msg when it is malformed. */
int count_chat_tokens(json_t *messages, const char **msg);

#endif
