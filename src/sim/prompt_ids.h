/* prompt_ids: the token ids of a prompt, internal to src/sim/.
 *
 * The simulator's prefix cache (kv_cache.c) matches prompts by their token
 * ids, block by block, so every prompt needs ids, and they must be as many
 * as the tokens the request is charged (model/tokens.h's rule):
 *   - a completions prompt given as text: tokenize_text's ids; an empty
 *     text is its BOS token alone;
 *   - a completions prompt given as token ids: those ids as they are;
 *   - chat messages: per message a template of 4 tokens whose ids depend on
 *     the role (the start and end of a turn, as a chat template writes
 *     them), the role's own tokens and the content's, in the order a
 *     template lays them out, then the 3 tokens that prime the reply. Two
 *     identical histories therefore have identical ids, and a conversation's
 *     next turn starts with the ids of the one before.
 * request.c reads prompts with these; api.c's /tokenize answers with them.
 * prompt_block_hashes chains a hash over each full block, as vLLM's
 * automatic prefix caching does: a block's hash covers its ids and the
 * hash of the block before it, so equal hashes mean an equal whole prefix. */
#ifndef SERVELAB_SIM_PROMPT_IDS_H
#define SERVELAB_SIM_PROMPT_IDS_H

#include <jansson.h>
#include <stdint.h>

typedef struct prompt_ids {
    int64_t *id;
    int n, cap;
} prompt_ids;

/* A completions `prompt` (text, ids, or a list of one of those) into `out`
 * (zeroed by the caller): 0, or -1 with a static message in *msg. */
int prompt_ids_of_completion(json_t *prompt, prompt_ids *out, const char **msg);
/* A chat `messages` list, likewise. */
int prompt_ids_of_chat(json_t *messages, prompt_ids *out, const char **msg);
void prompt_ids_free(prompt_ids *p);

/* The chained hashes of the prompt's full blocks of `block_size` ids (a
 * partial last block has none), seeded by `salt` (a request's cache_salt
 * hash, 0 without one): malloc'd, their count in *n_blocks; NULL when 0. */
uint64_t *prompt_block_hashes(const prompt_ids *p, int block_size, uint64_t salt, int *n_blocks);

#endif
