/* tokens: servelab's documented stand-in for a tokenizer.
 *
 * The simulator has no real vocabulary, yet it must count prompt tokens the
 * same way every time, and /tokenize must agree with what a completion
 * request is charged. The rule (about 4 characters a token on English text,
 * close to the BPE tokenizers of 7B-class models):
 *   - a run of ASCII letters and digits is ceil(len / 4) tokens; spaces and
 *     tabs before it are absorbed into it;
 *   - every newline, every other ASCII symbol, and every non-ASCII UTF-8
 *     character is one token;
 *   - spaces and tabs on their own cost nothing.
 * Token ids are a hash of the piece into [100, 32100), stable across runs.
 * Chat messages cost 4 tokens each for the template plus their role and
 * content, plus 3 for the assistant turn (OpenAI's published accounting). */
#ifndef SERVELAB_TOKENS_H
#define SERVELAB_TOKENS_H

#include <stddef.h>
#include <stdint.h>

/* Number of tokens in `text` (length n) by the rule above. */
size_t count_text_tokens(const char *text, size_t n);
/* Fill up to `cap` token ids for `text`; return the token count (may be
 * larger than cap). */
size_t tokenize_text(const char *text, size_t n, int32_t *ids, size_t cap);

#define CHAT_TOKENS_PER_MESSAGE 4
#define CHAT_TOKENS_REPLY_PRIMING 3

#endif
