/* words: where the words of servelab's synthetic text come from (random
 * chat prompts, shared prefixes, the replies in a multi-turn history).
 * By default a word is 1-4 random letters: exactly one token by servelab's
 * rule (model/tokens.h), which the simulator follows, but a real
 * tokenizer splits "qzx" into pieces. When the server can tokenize, the run
 * keeps, from a list of common short English words, those that are one
 * token on that server with a space before them (client/tokenizer.h), and
 * text is built from them: one token a word on the server and by the rule
 * alike, so IN tokens asked for are IN tokens sent. */
#ifndef SERVELAB_WORDS_H
#define SERVELAB_WORDS_H

#include "common/rng.h"

#include <stddef.h>

#define WORD_MAX_BYTES 4

typedef struct word_source {
    const char **words; /* NULL: random letters */
    int n;
} word_source;

/* One word into buf (at least WORD_MAX_BYTES bytes, no NUL); its length. */
size_t word_put(const word_source *ws, rng *r, char *buf);

/* The common short words the run tries on the server's tokenizer. */
extern const char *const common_words[];
extern const int n_common_words;

#endif
