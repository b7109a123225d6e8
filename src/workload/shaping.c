/* shaping: shared prefixes and the cache-busting nonce (see shaping.h).
 * Everything is derived from (seed, group) or (salt, request) by a hash,
 * not drawn from a running generator, so a request's body does not depend
 * on which requests were built before it. */
#include "workload/shaping.h"
#include "common/rng.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shaping_group(const shaping *s, size_t req) {
    if (s->prefix_tokens <= 0)
        return -1;
    return (int)(mix64(s->seed ^ (0x9f1e5ULL + (uint64_t)req * 0x100000001b3ULL)) %
                 (uint64_t)s->prefix_groups);
}

static uint64_t nonce_of(const shaping *s, size_t req) {
    return mix64(s->salt ^ mix64(0xb05700ULL + (uint64_t)req));
}

int shaping_extra_tokens(const shaping *s, size_t req) {
    (void)req;
    return (s->prefix_tokens > 0 ? s->prefix_tokens : 0) +
           (s->cache_bust ? SHAPING_NONCE_TOKENS : 0);
}

/* The prefix of a group as words: N words of 1-4 letters, each one token,
 * each followed by a space (absorbed by whatever word comes next, free on
 * its own). Into buf (room for WORD_MAX_BYTES + 1 a word). */
static size_t prefix_words(const shaping *s, int group, char *buf) {
    rng r;
    rng_seed(&r, mix64(s->seed ^ (0x5a4ed0ULL + (uint64_t)group)));
    size_t n = 0;
    for (int i = 0; i < s->prefix_tokens; i++) {
        n += word_put(s->words, &r, buf + n);
        buf[n++] = ' ';
    }
    return n;
}

/* The nonce as text: "x" and 7 hex digits (8 letters and digits: 2 tokens)
 * and a newline (1 token): 3 tokens. */
static size_t nonce_text(const shaping *s, size_t req, char *buf) {
    snprintf(buf, 11, "x%07llx\n", (unsigned long long)(nonce_of(s, req) & 0xfffffffULL));
    return 9;
}

/* The text in front of a prompt: the prefix words (unless `no_prefix`)
 * then the nonce. malloc'd, NUL-terminated. */
static char *front_text(const shaping *s, size_t req, int no_prefix) {
    int words = no_prefix ? 0 : s->prefix_tokens;
    char *buf = xmalloc((size_t)(words > 0 ? words : 0) * (WORD_MAX_BYTES + 1) + 16);
    size_t n = 0;
    if (words > 0)
        n = prefix_words(s, shaping_group(s, req), buf);
    if (s->cache_bust)
        n += nonce_text(s, req, buf + n);
    buf[n] = 0;
    return buf;
}

char *shaping_text(const shaping *s, size_t req, const char *text) {
    char *front = front_text(s, req, 0);
    size_t a = strlen(front), b = strlen(text);
    char *out = xmalloc(a + b + 1);
    memcpy(out, front, a);
    memcpy(out + a, text, b + 1);
    free(front);
    return out;
}

void shaping_ids(const shaping *s, size_t req, json_t *ids) {
    size_t at = 0;
    if (s->prefix_tokens > 0) {
        rng r;
        rng_seed(&r, mix64(s->seed ^ (0x1d5ULL + (uint64_t)shaping_group(s, req))));
        for (int i = 0; i < s->prefix_tokens; i++)
            json_array_insert_new(ids, at++, json_integer(rng_range(&r, 100, 30000)));
    }
    if (s->cache_bust) {
        uint64_t v = nonce_of(s, req);
        for (int i = 0; i < SHAPING_NONCE_TOKENS; i++, v = mix64(v))
            json_array_insert_new(ids, at++, json_integer(100 + (json_int_t)(v % 29900)));
    }
}

/* Put `front` at the start of message i's content. */
static void prepend_content(json_t *messages, size_t i, const char *front) {
    json_t *m = json_array_get(messages, i);
    json_t *c = json_object_get(m, "content");
    const char *old = json_is_string(c) ? json_string_value(c) : "";
    size_t a = strlen(front), b = strlen(old);
    char *joined = xmalloc(a + b + 1);
    memcpy(joined, front, a);
    memcpy(joined + a, old, b + 1);
    json_object_set_new(m, "content", json_string(joined));
    free(joined);
}

void shaping_messages(const shaping *s, size_t req, json_t *messages) {
    if (!json_array_size(messages))
        return;
    if (s->prefix_tokens > 0 && s->prefix_system) {
        char *words = xmalloc((size_t)s->prefix_tokens * (WORD_MAX_BYTES + 1) + 1);
        size_t n = prefix_words(s, shaping_group(s, req), words);
        while (n && words[n - 1] == ' ')
            n--; /* a message of its own ends at its last word */
        words[n] = 0;
        json_array_insert_new(messages, 0,
                              json_pack("{s:s,s:s}", "role", "system", "content", words));
        free(words);
        if (s->cache_bust) {
            char *front = front_text(s, req, 1);
            prepend_content(messages, 1, front);
            free(front);
        }
        return;
    }
    char *front = front_text(s, req, 0);
    if (front[0])
        prepend_content(messages, 0, front);
    free(front);
}
