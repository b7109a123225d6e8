/* prompt_ids: a prompt's token ids and its block hashes (see prompt_ids.h).
 *
 * Text ids come from model/tokens.h (always in [100, 32100)), so the ids
 * below 100 are free for the tokens a tokenizer adds itself: BOS, the chat
 * template's four tokens a message (ids that depend on its role) and the
 * reply priming. The counts are the ones model/tokens.h documents: a
 * message is CHAT_TOKENS_PER_MESSAGE plus its role's and content's tokens,
 * the reply priming CHAT_TOKENS_REPLY_PRIMING. */
#include "sim/prompt_ids.h"
#include "model/tokens.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define BOS_ID 1
/* A message's template: 10 * role code + 0..3, so roles never share ids. */
#define TEMPLATE_BASE 10
static const int64_t reply_priming[CHAT_TOKENS_REPLY_PRIMING] = {90, 91, 92};

static void push(prompt_ids *p, int64_t id) {
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->id = xrealloc(p->id, (size_t)p->cap * sizeof *p->id);
    }
    p->id[p->n++] = id;
}

/* The text's ids, in one walk: a text of len bytes has at most len tokens. */
static void push_text(prompt_ids *p, const char *text, size_t len) {
    if (len == 0)
        return;
    int32_t *ids = xmalloc(len * sizeof *ids);
    size_t n = tokenize_text(text, len, ids, len);
    if ((size_t)(p->cap - p->n) < n) {
        p->cap = p->n + (int)n + 256;
        p->id = xrealloc(p->id, (size_t)p->cap * sizeof *p->id);
    }
    for (size_t i = 0; i < n; i++)
        p->id[p->n++] = ids[i];
    free(ids);
}

void prompt_ids_free(prompt_ids *p) {
    free(p->id);
    memset(p, 0, sizeof *p);
}

int prompt_ids_of_completion(json_t *prompt, prompt_ids *out, const char **msg) {
    if (json_is_string(prompt)) {
        push_text(out, json_string_value(prompt), json_string_length(prompt));
        if (out->n == 0)
            push(out, BOS_ID); /* an empty text still costs its BOS token */
        return 0;
    }
    if (json_is_array(prompt)) {
        size_t n = json_array_size(prompt);
        if (n == 0) {
            *msg = "prompt must not be empty";
            return -1;
        }
        json_t *first = json_array_get(prompt, 0);
        if (json_is_integer(first)) {
            size_t i;
            json_t *v;
            json_array_foreach(prompt, i, v) {
                if (!json_is_integer(v) || json_integer_value(v) < 0) {
                    *msg = "prompt token ids must be non-negative integers";
                    return -1;
                }
                push(out, (int64_t)json_integer_value(v));
            }
            return 0;
        }
        if (n == 1)
            return prompt_ids_of_completion(first, out, msg);
        *msg = "batched prompts are not supported by the simulator; send one prompt a request";
        return -1;
    }
    *msg = "prompt must be a string, a list of token ids, or a list of one of those";
    return -1;
}

/* A message's `content`: a string, a list of parts (their `text` counts),
 * or null. */
static int push_content(prompt_ids *p, json_t *content, const char **msg) {
    if (json_is_string(content)) {
        push_text(p, json_string_value(content), json_string_length(content));
        return 0;
    }
    if (json_is_array(content)) {
        size_t k;
        json_t *part;
        json_array_foreach(content, k, part) {
            json_t *t = json_object_get(part, "text");
            if (json_is_string(t))
                push_text(p, json_string_value(t), json_string_length(t));
        }
        return 0;
    }
    if (!json_is_null(content)) {
        *msg = "message content must be a string, a list of parts, or null";
        return -1;
    }
    return 0;
}

static int64_t role_code(const char *role) {
    static const char *const known[] = {"system", "user", "assistant", "tool", "developer"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(role, known[i]))
            return i + 1;
    return 6; /* any other role: one more template */
}

int prompt_ids_of_chat(json_t *messages, prompt_ids *out, const char **msg) {
    if (!json_is_array(messages) || json_array_size(messages) == 0) {
        *msg = "messages must be a non-empty list";
        return -1;
    }
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        json_t *role = json_object_get(m, "role");
        if (!json_is_string(role)) {
            *msg = "each message needs a string role";
            return -1;
        }
        /* start-of-turn, the role, a separator, the content, end-of-turn,
         * a newline: the shape of a ChatML-style template */
        int64_t t = TEMPLATE_BASE * role_code(json_string_value(role));
        push(out, t);
        push_text(out, json_string_value(role), json_string_length(role));
        push(out, t + 1);
        if (push_content(out, json_object_get(m, "content"), msg))
            return -1;
        push(out, t + 2);
        push(out, t + 3);
    }
    for (int k = 0; k < CHAT_TOKENS_REPLY_PRIMING; k++)
        push(out, reply_priming[k]);
    return 0;
}

/* One block's hash over its ids and its parent's: a multiply-xorshift a
 * 64-bit id and a final mix (equal hashes must mean equal prefixes; the
 * values themselves are never shown). */
static uint64_t block_hash(const int64_t *id, int n, uint64_t parent) {
    uint64_t x = parent;
    for (int i = 0; i < n; i++) {
        x = (x ^ (uint64_t)id[i]) * 0x9e3779b97f4a7c15ULL;
        x ^= x >> 29;
    }
    return mix64(x);
}

uint64_t *prompt_block_hashes(const prompt_ids *p, int block_size, uint64_t salt, int *n_blocks) {
    *n_blocks = block_size > 0 ? p->n / block_size : 0;
    if (*n_blocks == 0)
        return NULL;
    uint64_t *h = xmalloc((size_t)*n_blocks * sizeof *h);
    uint64_t parent = mix64(0x9e3779b97f4a7c15ULL ^ salt); /* the root: no block before */
    for (int b = 0; b < *n_blocks; b++) {
        parent = block_hash(p->id + (size_t)b * block_size, block_size, parent);
        h[b] = parent;
    }
    return h;
}
