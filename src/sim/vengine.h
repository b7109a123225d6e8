/* vengine: the simulator's engine on a virtual clock, with no sockets.
 *
 * `servelab sim` runs its engine (engine.h) from real timers and answers
 * over HTTP. Here the same engine runs with neither: the caller submits
 * request bodies at virtual instants, asks when the running step ends,
 * ends it, and hears every token the moment the engine emits it. Each
 * request is read and planned by the code the server uses (request.c's
 * checks, token ids and prefix-cache block hashes; the output length drawn
 * from the request's id and the seed exactly as completion.c draws it),
 * and steps follow one another as engine_clock.c runs them: the next step
 * begins when one ends, or when a request reaches an idle engine. A virtual
 * run and a real one against `servelab sim` with the same seeds differ
 * only by what the network and the real clock add (docs/predict.md).
 * There are no faults: they belong to the HTTP server, not the engine. */
#ifndef SERVELAB_VENGINE_H
#define SERVELAB_VENGINE_H

#include "sim/engine.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct vengine vengine;
typedef struct vreq vreq;

/* Called for every token the engine emits for the request submitted with
 * `user`: `generated` counts it; `finish` is NULL before the last token and
 * "stop" or "length" on it, after which the request is gone. */
typedef void (*vengine_token_fn)(void *user, int64_t t_us, int generated, const char *finish,
                                 void *ud);

/* The engine's parameters, the share of max_tokens an answer without
 * ignore_eos lasts at least (profiles.h's eos_min_frac_pct), the server's
 * seed and the model id it serves. NULL with a message when the
 * parameters are impossible. */
vengine *vengine_new(const engine_params *p, int eos_min_frac_pct, uint64_t seed, const char *model,
                     vengine_token_fn token, void *ud, char *err, int errlen);
void vengine_free(vengine *v);

/* A request's body arrives at now_us with its X-Request-Id. 0 with *out
 * (the engine's until its last token or vengine_cancel), or the HTTP status
 * the server would refuse it with (400, 404) and its message. */
int vengine_submit(vengine *v, const char *body, size_t len, int chat, const char *request_id,
                   int64_t now_us, void *user, vreq **out, char *msg, size_t msglen);
/* The same for a body already read into an object (the caller's). */
int vengine_submit_object(vengine *v, json_t *body, int chat, const char *request_id,
                          int64_t now_us, void *user, vreq **out, char *msg, size_t msglen);
/* The prompt tokens an accepted request is charged, and of them those the
 * prefix cache served (known once its first token came). */
int vreq_prompt_tokens(const vreq *r);
int vreq_cached_tokens(const vreq *r);
/* The client went away (a timeout, a stop): the request leaves the engine
 * and is freed; no more tokens come for it. */
void vengine_cancel(vengine *v, vreq *r, int64_t now_us);

/* When the running step ends; -1 when the engine is idle. */
int64_t vengine_next_event(const vengine *v);
/* Ends the running step at its end (its tokens emitted through the
 * callback) and begins the next one there. */
void vengine_step(vengine *v);

engine_stats vengine_stats(const vengine *v);

#endif
