/* conversation: multi-turn plans and the history each turn carries (see
 * conversation.h). A turn's body is rebuilt from the plan when it is sent
 * (its history is the earlier turns' prompts and replies, all derived from
 * request indices and the seed), so a run of long conversations holds no
 * histories in memory. */
#include "workload/conversation.h"
#include "common/rng.h"
#include "model/tokens.h"
#include "common/util.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int workload_multi_turn(const workload *w) {
    return w->conv.n_conv > 0;
}

static void plan_alloc(conv_plan *p, size_t n_conv, size_t n_req) {
    p->n_conv = n_conv;
    p->n_requests = n_req;
    p->first = xmalloc((n_conv ? n_conv : 1) * sizeof *p->first);
    p->conv = xmalloc((n_req ? n_req : 1) * sizeof *p->conv);
    p->turn = xmalloc((n_req ? n_req : 1) * sizeof *p->turn);
    p->next = xmalloc((n_req ? n_req : 1) * sizeof *p->next);
}

/* Conversation c's turns at indices at, at + 1, ... at + turns - 1. */
static void plan_conversation(conv_plan *p, size_t c, size_t at, int turns) {
    p->first[c] = (uint32_t)at;
    for (int k = 0; k < turns; k++) {
        p->conv[at + (size_t)k] = (uint32_t)c;
        p->turn[at + (size_t)k] = (uint16_t)(k + 1);
        p->next[at + (size_t)k] = k + 1 < turns ? (uint32_t)(at + (size_t)k + 1) : CONV_NONE;
    }
}

/* ShareGPT's own turns: each conversation an item (a seeded permutation,
 * cycled, as single-turn runs draw them), every request of it that item. */
static size_t plan_all_turns(workload *w, size_t n_conv, uint64_t seed, char *err, int errlen) {
    size_t usable = 0;
    for (size_t i = 0; i < w->n_items; i++)
        usable += w->items[i].n_turns > 0;
    if (!usable) {
        snprintf(err, errlen, "--turns all: %s has no conversation with a turn and its reply",
                 w->source);
        return 0;
    }
    uint32_t *pick = xmalloc(usable * sizeof *pick);
    usable = 0;
    for (size_t i = 0; i < w->n_items; i++)
        if (w->items[i].n_turns > 0)
            pick[usable++] = (uint32_t)i;
    rng r;
    rng_seed(&r, seed ^ 0xc0417ULL);
    for (size_t i = usable; i > 1; i--) {
        size_t j = (size_t)rng_range(&r, 0, (int64_t)i - 1);
        uint32_t t = pick[i - 1];
        pick[i - 1] = pick[j];
        pick[j] = t;
    }
    size_t total = 0;
    for (size_t c = 0; c < n_conv; c++) {
        int t = w->items[pick[c % usable]].n_turns;
        total += (size_t)(t > CONV_MAX_TURNS ? CONV_MAX_TURNS : t);
    }
    plan_alloc(&w->conv, n_conv, total);
    w->assign = xmalloc((total ? total : 1) * sizeof *w->assign);
    size_t at = 0;
    for (size_t c = 0; c < n_conv; c++) {
        uint32_t item = pick[c % usable];
        int t = w->items[item].n_turns > CONV_MAX_TURNS ? CONV_MAX_TURNS : w->items[item].n_turns;
        plan_conversation(&w->conv, c, at, t);
        for (int k = 0; k < t; k++)
            w->assign[at + (size_t)k] = item;
        at += (size_t)t;
    }
    free(pick);
    w->n_requests = total;
    w->seed = seed;
    w->shape.seed = seed;
    w->conv.all_turns = 1;
    return total;
}

size_t workload_plan_conversations(workload *w, size_t n_conv, int turns, double think_s,
                                   int max_tokens, uint64_t seed, char *err, int errlen) {
    if (turns == 0 && strncmp(w->source, "sharegpt:", 9)) {
        snprintf(err, errlen, "--turns all needs --prompts sharegpt:FILE (its own turns)");
        return 0;
    }
    size_t total;
    if (turns == 0) {
        total = plan_all_turns(w, n_conv, seed, err, errlen);
        if (!total)
            return 0;
    } else {
        total = n_conv * (size_t)turns;
        workload_assign(w, total, seed);
        plan_alloc(&w->conv, n_conv, total);
        for (size_t c = 0; c < n_conv; c++)
            plan_conversation(&w->conv, c, c * (size_t)turns, turns);
    }
    w->conv.think_us = llround(think_s * 1e6);
    w->conv.max_tokens = max_tokens;
    return total;
}

/* ---- the history ---- */

/* A synthetic reply of n tokens: words (words.h) joined by spaces. */
static char *reply_words(const workload *w, size_t req, int n) {
    rng r;
    rng_seed(&r, mix64(w->seed ^ (0x4e91e5ULL + req)));
    char *text = xmalloc((size_t)n * (WORD_MAX_BYTES + 1) + 1);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (i)
            text[len++] = ' ';
        len += word_put(&w->words, &r, text + len);
    }
    text[len] = 0;
    return text;
}

/* The same reply as token ids, for completions prompts of token ids. */
static json_t *reply_ids(const workload *w, size_t req, int n) {
    rng r;
    rng_seed(&r, mix64(w->seed ^ (0x1d5e91ULL + req)));
    json_t *ids = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(ids, json_integer(rng_range(&r, 100, 30000)));
    return ids;
}

/* The length of a synthetic turn's reply in the history. */
static int synthetic_reply_tokens(const workload *w, size_t req) {
    if (w->conv.max_tokens > 0)
        return w->conv.max_tokens;
    body_opts none = {0};
    return workload_max_tokens(w, req, &none);
}

int conversation_reply_tokens(const workload *w, size_t req) {
    if (!w->conv.all_turns)
        return 0;
    return w->items[w->assign[req]].reply_tokens[w->conv.turn[req] - 1];
}

/* ShareGPT's first 2k - 1 messages: turn k's history and its question. */
static json_t *own_history(const workload *w, size_t req) {
    const prompt_item *it = &w->items[w->assign[req]];
    json_t *all = json_loads(it->turns_json, 0, NULL);
    size_t keep = 2 * (size_t)w->conv.turn[req] - 1;
    while (json_array_size(all) > keep)
        json_array_remove(all, json_array_size(all) - 1);
    return all;
}

/* Synthetic turns as chat: the first turn's messages whole (a system
 * message with them), later turns' without their system message, each
 * earlier turn followed by its reply. */
static json_t *synthetic_messages(const workload *w, size_t req) {
    size_t first = w->conv.first[w->conv.conv[req]];
    json_t *msgs = json_array();
    for (size_t j = first; j <= req; j++) {
        json_t *turn = workload_turn_prompt(w, j, 1);
        size_t i;
        json_t *m;
        json_array_foreach(turn, i, m) {
            const char *role = json_string_value(json_object_get(m, "role"));
            if (j == first || !role || strcmp(role, "system"))
                json_array_append(msgs, m);
        }
        json_decref(turn);
        if (j < req) {
            char *reply = reply_words(w, j, synthetic_reply_tokens(w, j));
            json_array_append_new(msgs,
                                  json_pack("{s:s,s:s}", "role", "assistant", "content", reply));
            free(reply);
        }
    }
    return msgs;
}

/* Synthetic turns of token ids (random:IN:OUT for completions): each
 * turn's ids, each earlier turn followed by its reply's. */
static json_t *synthetic_ids(const workload *w, size_t req) {
    size_t first = w->conv.first[w->conv.conv[req]];
    json_t *ids = json_array();
    for (size_t j = first; j <= req; j++) {
        json_t *turn = workload_turn_prompt(w, j, 0);
        json_array_extend(ids, turn);
        json_decref(turn);
        if (j < req) {
            json_t *reply = reply_ids(w, j, synthetic_reply_tokens(w, j));
            json_array_extend(ids, reply);
            json_decref(reply);
        }
    }
    return ids;
}

/* Synthetic turns as one completions text: each turn's own text (as a
 * single-turn request sends it), each earlier turn followed by its reply,
 * joined by newlines: its tokens add up, one for each newline. */
static char *synthetic_text(const workload *w, size_t req) {
    size_t first = w->conv.first[w->conv.conv[req]], n = 1;
    for (size_t j = first; j <= req; j++)
        n += strlen(w->items[w->assign[j]].text) + 2 +
             (size_t)synthetic_reply_tokens(w, j) * (WORD_MAX_BYTES + 1);
    char *text = xmalloc(n), *at = text;
    for (size_t j = first; j <= req; j++) {
        const char *own = w->items[w->assign[j]].text;
        at += sprintf(at, "%s%s", j > first ? "\n" : "", own);
        if (j < req) {
            char *reply = reply_words(w, j, synthetic_reply_tokens(w, j));
            at += sprintf(at, "\n%s", reply);
            free(reply);
        }
    }
    return text;
}

json_t *conversation_prompt(const workload *w, size_t req, int chat) {
    size_t key = w->conv.first[w->conv.conv[req]]; /* one prefix and nonce a conversation */
    if (!chat && w->random_in && !w->conv.all_turns) {
        json_t *ids = synthetic_ids(w, req);
        shaping_ids(&w->shape, key, ids);
        return ids;
    }
    if (chat) {
        json_t *msgs = w->conv.all_turns ? own_history(w, req) : synthetic_messages(w, req);
        shaping_messages(&w->shape, key, msgs);
        return msgs;
    }
    char *joined;
    if (w->conv.all_turns) {
        json_t *msgs = own_history(w, req);
        joined = workload_messages_text(msgs);
        json_decref(msgs);
    } else {
        joined = synthetic_text(w, req);
    }
    char *text = shaping_text(&w->shape, key, joined);
    json_t *j = json_string(text);
    free(joined);
    free(text);
    return j;
}

int conversation_prompt_tokens(const workload *w, size_t req) {
    size_t key = w->conv.first[w->conv.conv[req]];
    int extra = shaping_extra_tokens(&w->shape, key);
    if (w->conv.all_turns) {
        json_t *msgs = own_history(w, req);
        char *text = workload_messages_text(msgs);
        int n = (int)count_text_tokens(text, strlen(text));
        json_decref(msgs);
        free(text);
        return n + extra;
    }
    size_t first = w->conv.first[w->conv.conv[req]];
    long n = 0;
    for (size_t j = first; j <= req; j++) {
        n += workload_turn_tokens(w, j);
        if (j < req) /* its reply, and (as text) the newlines before and after it */
            n += synthetic_reply_tokens(w, j) + (w->random_in ? 0 : 2);
    }
    return (int)n + extra;
}
