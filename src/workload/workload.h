/* workload: what each request asks. Loads the prompt source (the built-in
 * set, a JSONL file, a ShareGPT file, or synthetic random:IN:OUT; or a
 * trace to replay, whose records are the requests: replay.h), assigns
 * every request index a prompt with a seeded draw (a class by --mix, then a
 * prompt in it), and builds the JSON body at send time so that a million
 * requests cost no memory before they are sent. Same seed, same assignment,
 * byte for byte. */
#ifndef SERVELAB_WORKLOAD_H
#define SERVELAB_WORKLOAD_H

#include "workload/conversation.h"
#include "workload/replay.h"
#include "workload/shaping.h"
#include "workload/words.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct prompt_item {
    int cls;             /* index into workload.class_names */
    char *text;          /* completions prompt */
    char *messages_json; /* chat messages array, JSON */
    int max_tokens;      /* 0: the class or run default */
    int prompt_tokens;   /* by servelab's token rule (see model/tokens.h) */
    char *turns_json;    /* ShareGPT: every turn, user and assistant alternating; else NULL */
    int n_turns;         /* ShareGPT: user turns followed by a reply */
    int *reply_tokens;   /* ShareGPT: each reply's tokens by the rule, at least 4 */
} prompt_item;

#define WORKLOAD_MAX_CLASSES 32
#define WORKLOAD_MAX_CLASS_BYTES 64 /* a class is a name: longer ones are refused */

typedef struct workload {
    char source[512];
    prompt_item *items;
    size_t n_items;
    const char *class_names[WORKLOAD_MAX_CLASSES];
    int class_default_max_tokens[WORKLOAD_MAX_CLASSES];
    int n_classes;
    double mix[WORKLOAD_MAX_CLASSES]; /* normalised weights */
    /* random:IN:OUT: prompts are generated per request, not stored */
    int random_in, random_out;
    /* assignment: request index -> item (or class for random) */
    uint32_t *assign;
    size_t n_requests;
    uint64_t seed;
    /* the shared prefix and the cache-busting nonce (shaping.h): set after
     * workload_load, before the first body; its seed is the assignment's */
    shaping shape;
    conv_plan conv;       /* multi-turn (conversation.h); n_conv 0: single-turn */
    word_source words;    /* synthetic text's words (words.h); set before the first body */
    replay_trace *replay; /* --replay: request k is the trace's record k (replay.h); else NULL */
} workload;

typedef struct body_opts {
    int chat;
    const char *model;
    int include_usage;
    int continuous_usage;
    int ignore_eos;
    int max_tokens; /* 0: per item/class default */
    json_t *extra;  /* --extra-body's object, its keys added to every body; NULL: none */
} body_opts;

/* --extra-body: a JSON object of fields added to every request's body (a
 * server's own, like llama.cpp's cache_prompt). It may not set what
 * servelab sets itself (model, prompt, messages, max_tokens, stream,
 * stream_options). NULL with a one-line reason in why when it is not such
 * an object; the caller owns what it returns. */
json_t *workload_extra_body(const char *text, char *why, size_t whylen);

/* Load `spec` (builtin | FILE.jsonl | sharegpt:FILE.json | random:IN:OUT)
 * and the optional mix ("short=0.5,..."). On error returns -1 with a
 * one-line message (file:line when it applies) in err, and w holds nothing
 * to free. */
int workload_load(workload *w, const char *spec, const char *mix, char *err, int errlen);
/* --replay: the requests are the trace's kept records, in order, with
 * neither a shared prefix nor a nonce (the trace says what is shared); w
 * takes the trace over and workload_free frees it. In place of
 * workload_load and workload_assign. */
void workload_use_replay(workload *w, replay_trace *t);
/* Assign prompts to n requests with the seed. */
void workload_assign(workload *w, size_t n, uint64_t seed);
const char *workload_class_of(const workload *w, size_t req);
int workload_max_tokens(const workload *w, size_t req, const body_opts *o);
/* Prompt tokens by servelab's rule, with the prefix and nonce. */
int workload_prompt_tokens(const workload *w, size_t req);
/* One turn's own prompt, unshaped and without history (conversation.c
 * builds histories from them): a messages array for chat, a string or
 * token ids for completions; and its tokens by servelab's rule. */
json_t *workload_turn_prompt(const workload *w, size_t req, int chat);
int workload_turn_tokens(const workload *w, size_t req);
/* A chat messages array as one completions text: the string contents
 * joined by newlines (malloc'd). Every place that sends a chat prompt to
 * the completions API, and counts it, uses this one. */
char *workload_messages_text(json_t *msgs);
/* The request's JSON body (malloc'd, NUL-terminated). */
char *workload_body(const workload *w, size_t req, const body_opts *o, size_t *len);
/* The same body as an object (the caller's), for a reader in the same
 * process that need not parse its text (servelab predict); NULL for a
 * replay, whose prompt only goes into the text. */
json_t *workload_body_object(const workload *w, size_t req, const body_opts *o);
void workload_free(workload *w);

#endif
