/* shaping: what servelab adds in front of every prompt it builds, so that
 * a prefix cache sees exactly what the experiment means it to see:
 *   - a shared prefix (--prefix-tokens N --prefix-groups G): each request
 *     starts with one of G prefixes of exactly N tokens by servelab's
 *     token rule (model/tokens.h), its group a seeded draw per request;
 *     for chat either a system message of its own or the start of the
 *     first message;
 *   - a cache-busting nonce (--cache-bust, on by default): 3 tokens unique
 *     to the request and the run (a salt recorded in meta.json), after the
 *     shared prefix, so repeated prompts do not hit a prefix cache by
 *     accident while a deliberate shared prefix still does.
 * The text forms are words (words.h) joined by spaces, and a newline:
 * their tokens add up exactly under the rule, whatever follows them. */
#ifndef SERVELAB_SHAPING_H
#define SERVELAB_SHAPING_H

#include "workload/words.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SHAPING_NONCE_TOKENS 3

typedef struct shaping {
    int cache_bust;           /* add the nonce */
    uint64_t salt;            /* the run's: makes nonces differ between runs of one seed */
    int prefix_tokens;        /* 0: no shared prefix */
    int prefix_groups;        /* >= 1 when prefix_tokens */
    int prefix_system;        /* chat: the prefix is a system message of its own */
    uint64_t seed;            /* the run's seed: the group draw */
    const word_source *words; /* the prefix's words; NULL: random letters */
} shaping;

/* The shared-prefix group of request `req` (0..groups-1); -1 without one. */
int shaping_group(const shaping *s, size_t req);
/* Tokens shaping adds to request `req`'s prompt by servelab's rule (the
 * chat template's own tokens for an added system message not counted, as
 * for every other message). */
int shaping_extra_tokens(const shaping *s, size_t req);
/* A completions text prompt with the prefix and nonce in front (malloc'd). */
char *shaping_text(const shaping *s, size_t req, const char *text);
/* A completions token-id prompt: the ids of the prefix and the nonce put
 * in front of `ids` (modified in place). */
void shaping_ids(const shaping *s, size_t req, json_t *ids);
/* A chat messages array: the prefix as a system message in front (or at
 * the start of the first message) and the nonce at the start of the first
 * message after the prefix (modified in place). */
void shaping_messages(const shaping *s, size_t req, json_t *messages);

#endif
