/* tokenizer: the server's own token counts, before a run, through its
 * tokenize endpoint: vLLM's and servelab sim's `POST /tokenize` with
 * {"prompt": ...} and llama.cpp's with {"content": ...} (one request names
 * both; each server reads its own field and leaves the other). Used to
 * keep, of workload/words.h's common words, those that are one token on
 * this server, so that synthetic text of N words is N tokens on it. */
#ifndef SERVELAB_TOKENIZER_H
#define SERVELAB_TOKENIZER_H

#include <curl/curl.h>

typedef struct server_tokenizer {
    const char *base; /* the server's base URL */
    struct curl_slist *headers;
    int insecure;
    const char *model; /* NULL: none named */
} server_tokenizer;

/* The tokens of `text` on the server, without special tokens: 0 and
 * *count, or -1 (no such endpoint, or an answer without a count). */
int tokenizer_count(const server_tokenizer *t, const char *text, int *count);

/* Of the n candidate words, those that are one token between spaces on
 * the server, into kept (room for n; pointers into words); their number, or
 * -1 when the server cannot tokenize. One request when every word passes
 * (the words joined count n), else one a word. */
int tokenizer_keep_words(const server_tokenizer *t, const char *const *words, int n,
                         const char **kept);

/* The same with another counter (`servelab predict` counts by the
 * simulator's rule, with no server to ask): count(arg, text, &n) is 0 with
 * n, or -1 when it cannot count. */
typedef int (*tokenizer_count_fn)(void *arg, const char *text, int *count);
int tokenizer_keep_words_by(tokenizer_count_fn count, void *arg, const char *const *words, int n,
                            const char **kept);

#endif
