/* tokenizer: the server's own token counts, before a run, through its
 * tokenize endpoint: vLLM's and servelab sim's `POST /tokenize` with
 * {"prompt": ...} and llama.cpp's with {"content": ...} (one request names
 * both; each server reads its own field and leaves the other). Used to
 * keep, of workload/words.h's common words, those that are one token on
 * this server, so that synthetic text of N words is N tokens on it. */
#ifndef SERVELAB_TOKENIZER_H
#define SERVELAB_TOKENIZER_H

#include <curl/curl.h>

/* A probe of the server's words takes at most this long in all, and one
 * request at most TOKENIZER_CALL_S of it. */
#define TOKENIZER_BUDGET_S 15.0
#define TOKENIZER_CALL_S 10.0

/* What tokenizer_keep_words returns instead of a number of words. */
enum {
    TOKENIZER_CANNOT = -1,   /* the server has no /tokenize that answers */
    TOKENIZER_TOO_SLOW = -2, /* its answers took longer than the budget in all */
    TOKENIZER_STOPPED = -3   /* a stop signal came (common/stop.h) */
};

typedef struct server_tokenizer {
    const char *base; /* the server's base URL */
    struct curl_slist *headers;
    int insecure;
    const char *model; /* NULL: none named */
} server_tokenizer;

/* The tokens of `text` on the server, without special tokens: 0 and
 * *count, or -1 (no such endpoint, or an answer without a count, or none
 * within TOKENIZER_CALL_S). */
int tokenizer_count(const server_tokenizer *t, const char *text, int *count);

/* Of the n candidate words, those that are one token between spaces on
 * the server, into kept (room for n; pointers into words); their number, or
 * TOKENIZER_CANNOT, TOKENIZER_TOO_SLOW or TOKENIZER_STOPPED (at once, the
 * request under way abandoned). Two requests when every word passes (the
 * words joined count n), else one a word more, after "servelab: --tokenize
 * auto: asking the server about N words one at a time" on stderr; past the
 * budget it gives up and says so there. */
int tokenizer_keep_words(const server_tokenizer *t, const char *const *words, int n,
                         const char **kept);

/* The same within other limits (tokenizer_keep_words: TOKENIZER_BUDGET_S,
 * not quiet). */
typedef struct tokenizer_limits {
    double budget_s; /* the probe's time in all */
    int quiet;       /* 1: nothing on stderr */
} tokenizer_limits;
int tokenizer_keep_words_within(const server_tokenizer *t, const tokenizer_limits *lim,
                                const char *const *words, int n, const char **kept);

/* The same with another counter (`servelab predict` counts by the
 * simulator's rule, with no server to ask; no budget, nothing printed):
 * count(arg, text, &n) is 0 with n, or -1 when it cannot count, or one of
 * the TOKENIZER_ codes above to end the probe with it. A stop signal ends
 * it between two counts. */
typedef int (*tokenizer_count_fn)(void *arg, const char *text, int *count);
int tokenizer_keep_words_by(tokenizer_count_fn count, void *arg, const char *const *words, int n,
                            const char **kept);

#endif
