/* conversation: multi-turn chats. Conversations arrive open-loop (the
 * schedule is theirs: one due time a conversation); within one, turn k+1
 * is sent when turn k's answer has ended plus the think time, and carries
 * the whole history: every earlier turn's user message and its reply.
 *
 * The replies in the history are the conversation's own (ShareGPT's
 * assistant turns, or, for synthetic turns, words of one token each, as
 * many as the turn's max_tokens), not the text the server sent: so a
 * turn's prompt is known before the run, the same for every server and
 * seed, and its token count exact; an answer of the same length (with
 * --ignore-eos, exactly) stands in for it.
 *
 * Request indices run conversation by conversation: conversation c's turns
 * are first[c], first[c] + 1, ... in order. */
#ifndef SERVELAB_CONVERSATION_H
#define SERVELAB_CONVERSATION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define CONV_NONE UINT32_MAX
#define CONV_MAX_TURNS 1000

/* What workload.h keeps of the plan. */
typedef struct conv_plan {
    size_t n_conv;     /* 0: single-turn requests */
    size_t n_requests; /* every turn of every conversation */
    uint32_t *first;   /* by conversation: its first turn's request index */
    uint32_t *conv;    /* by request index: its conversation */
    uint16_t *turn;    /* by request index: 1, 2, ... */
    uint32_t *next;    /* by request index: the next turn's; CONV_NONE for the last */
    int64_t think_us;  /* the wait from a turn's end to the next one's sending */
    int all_turns;     /* ShareGPT's own turns (each request's item is its conversation) */
    int max_tokens;    /* --max-tokens: every synthetic reply's length; 0: per request */
} conv_plan;

struct workload;

/* Plans n_conv conversations of `turns` turns each (0: every turn of each
 * ShareGPT conversation), assigns every turn its prompt with the seed, and
 * returns how many requests that is; 0 with err when it cannot (all turns
 * of a source that has none). Replaces workload_assign. */
size_t workload_plan_conversations(struct workload *w, size_t n_conv, int turns, double think_s,
                                   int max_tokens, uint64_t seed, char *err, int errlen);
/* Whether the workload is multi-turn. */
int workload_multi_turn(const struct workload *w);

/* For workload.c: the prompt of turn `req` with its history (a messages
 * array for chat; a string or token ids for completions), shaped with the
 * conversation's prefix and nonce; its tokens by servelab's rule; and the
 * answer's length a ShareGPT turn asks for (0: the usual rules). */
json_t *conversation_prompt(const struct workload *w, size_t req, int chat);
int conversation_prompt_tokens(const struct workload *w, size_t req);
int conversation_reply_tokens(const struct workload *w, size_t req);

#endif
