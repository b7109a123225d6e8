/* request: a completions or chat completions body read into what the
 * simulator is asked to do, internal to src/sim/.
 *
 * The completion handler calls request_parse on every POST body: it checks
 * the body the way vLLM's OpenAI server does (in the same order, so the
 * first problem found is the one reported, with the same messages) and
 * either fills a completion_ask or says which status and message to answer
 * with. request_plan_output then turns the ask into the output length the
 * engine will generate. The prompt is read into its token ids
 * (prompt_ids.h), which the prefix cache matches and whose count the
 * request is charged; api.c's /tokenize uses the same functions, so it
 * agrees with what a request is charged. Nothing here touches the server
 * or the network. */
#ifndef SERVELAB_SIM_REQUEST_H
#define SERVELAB_SIM_REQUEST_H

#include "sim/engine.h"
#include "sim/prompt_ids.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* What a valid body asks for. */
typedef struct completion_ask {
    int chat;
    int prompt_tokens;   /* at least 1: ids.n */
    prompt_ids ids;      /* the prompt's token ids (request_ask_free frees them) */
    uint64_t cache_salt; /* hash of the body's cache_salt; 0 without one */
    long max_tokens;     /* 0 when absent */
    long min_tokens;
    int stream, include_usage, continuous_usage, ignore_eos;
    /* a tool call or a JSON answer asked for (sim/structured.h): the body's
     * own values, referenced (NULL when absent) */
    json_t *tools, *tool_choice, *response_format;
} completion_ask;

/* Why a body was refused. */
typedef struct request_error {
    int status; /* 400, or 404 for an unknown model */
    char message[512];
} request_error;

/* Reads `body` (n bytes) of a completions (`chat` 0) or chat completions
 * (`chat` 1) request for `model`: 0 with `ask` filled (free it with
 * request_ask_free), or -1 with `err` (nothing to free). */
int request_parse(const char *body, size_t n, int chat, const char *model, int max_model_len,
                  completion_ask *ask, request_error *err);
/* The same for a body already read into an object (servelab predict's). */
int request_parse_object(json_t *body, int chat, const char *model, int max_model_len,
                         completion_ask *ask, request_error *err);
void request_ask_free(completion_ask *ask);

/* The sequence's prompt and output length: exactly max_tokens with
 * ignore_eos, else a draw seeded by `h` (the request's hash) between
 * eos_min_frac_pct of the cap and the cap, never past max_model_len. */
void request_plan_output(const completion_ask *ask, int max_model_len, int eos_min_frac_pct,
                         uint64_t h, seq *s);

#endif
