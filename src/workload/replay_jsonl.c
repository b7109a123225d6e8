/* replay_jsonl: the JSON-lines traces into records (see replay_read.h):
 * Mooncake's ({timestamp (ms), input_length, output_length, hash_ids})
 * and servelab's plain JSONL ({timestamp_ms, input_tokens, output_tokens,
 * [prefix_id [, prefix_tokens] | hash_ids], [prompt | messages]}). Each
 * line is one JSON object, read with jansson; every value is checked where
 * it is read, and the first bad one ends the reading with its line. A hash
 * id or a prefix id names a shared block, their keys seeded apart; a
 * prefix_id keeps one length through the file, and a record's own prompt
 * is kept as written. */
#include "workload/replay_read_internal.h"
#include "model/tokens.h"
#include "common/util.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys of the two kinds of shared block differ in their seed, so a
 * hash id never stands for the same block as a prefix id of that text. */
#define KEY_SEED_HASH_ID 0x6d6f6f6e63616b65ULL
#define KEY_SEED_PREFIX_ID 0x7072656669786964ULL

/* A timestamp field in `unit_us` microseconds (1000: ms): NULL, or what
 * is wrong with it. */
static const char *json_time(json_t *o, const char *key, double unit_us, int64_t *us, char *why,
                             size_t n) {
    json_t *v = json_object_get(o, key);
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    if (!v)
        snprintf(why, n, "no \"%s\"", key);
    else if (!isfinite(d) || d < 0)
        snprintf(why, n, "\"%s\" must be a number of %s >= 0", key, unit_us == 1000 ? "ms" : "s");
    else if (d * unit_us > MAX_TIME_US)
        snprintf(why, n, "\"%s\" %g is past the latest time a trace may hold (%g %s, 317 years)",
                 key, d, MAX_TIME_US / unit_us, unit_us == 1000 ? "ms" : "s");
    else {
        *us = llround(d * unit_us);
        return NULL;
    }
    return why;
}

/* A whole number from lo to hi into *out: an integer, or a real with no
 * fraction (10.0, 1e3: what a trace written by a float-minded tool
 * holds). 0, or -1 when v is not one. */
static int json_whole(json_t *v, long long lo, long long hi, long long *out) {
    double d = json_is_integer(v) ? (double)json_integer_value(v)
               : json_is_real(v)  ? json_real_value(v)
                                  : NAN;
    if (!(d >= (double)lo && d <= (double)hi) || d != floor(d))
        return -1;
    *out = json_is_integer(v) ? (long long)json_integer_value(v) : (long long)d;
    return 0;
}

/* A token count: 0 to REPLAY_MAX_TOKENS, stored as at least 1 (a prompt
 * costs its first token even when empty; a reply of 0 tokens is a failed
 * request, asked for as 1). NULL, or what is wrong. */
static const char *json_count(json_t *o, const char *key, int32_t *out, char *why, size_t n) {
    json_t *v = json_object_get(o, key);
    if (!v) {
        snprintf(why, n, "no \"%s\"", key);
        return why;
    }
    long long c;
    if (json_whole(v, 0, REPLAY_MAX_TOKENS, &c)) {
        snprintf(why, n, "\"%s\" must be a whole number of tokens from 0 to %d", key,
                 REPLAY_MAX_TOKENS);
        return why;
    }
    *out = (int32_t)(c < 1 ? 1 : c);
    return NULL;
}

static const char *json_hash_ids(replay_trace *t, replay_record *r, json_t *ids, char *why,
                                 size_t n) {
    if (!json_is_array(ids)) {
        snprintf(why, n, "\"hash_ids\" must be a list of integers");
        return why;
    }
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        if (!json_is_integer(v)) {
            snprintf(why, n, "\"hash_ids\" item %zu is not an integer", i + 1);
            return why;
        }
        replay_read_add_block(t, r,
                              mix64(KEY_SEED_HASH_ID ^ mix64((uint64_t)json_integer_value(v))));
    }
    return NULL;
}

/* Mooncake: {"timestamp": ms, "input_length", "output_length", "hash_ids"}. */
static const char *mooncake_record(replay_trace *t, json_t *o, int line, char *why, size_t n) {
    replay_record *r = replay_read_new_record(t, line);
    const char *bad = json_time(o, "timestamp", 1000, &r->t_us, why, n);
    if (!bad)
        bad = json_count(o, "input_length", &r->input_tokens, why, n);
    if (!bad)
        bad = json_count(o, "output_length", &r->output_tokens, why, n);
    json_t *ids = json_object_get(o, "hash_ids");
    if (!bad && ids)
        bad = json_hash_ids(t, r, ids, why, n);
    return bad;
}

/* Each item of a "messages" list is a chat message: an object with a
 * string role and a string content. NULL, or what is wrong. */
static const char *check_messages(json_t *msgs, char *why, size_t n) {
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        if (!json_is_string(json_object_get(m, "role")) ||
            !json_is_string(json_object_get(m, "content"))) {
            snprintf(why, n,
                     "\"messages\" item %zu must be an object with a string \"role\" and a "
                     "string \"content\"",
                     i + 1);
            return why;
        }
    }
    return NULL;
}

/* A record's own prompt ("prompt" text or "messages"), sent as written. */
static const char *own_prompt(replay_trace *t, replay_record *r, json_t *prompt, json_t *msgs,
                              char *why, size_t n) {
    if (prompt && msgs)
        snprintf(why, n, "give \"prompt\" or \"messages\", not both");
    else if (prompt && !json_is_string(prompt))
        snprintf(why, n, "\"prompt\" must be a string");
    else if (msgs && !(json_is_array(msgs) && json_array_size(msgs)))
        snprintf(why, n, "\"messages\" must be a non-empty list");
    else if (msgs && check_messages(msgs, why, n))
        return why;
    else {
        if (t->n_given == t->cap_given)
            t->given = xrealloc(t->given, (t->cap_given = t->cap_given ? t->cap_given * 2 : 64) *
                                              sizeof *t->given);
        replay_prompt_text *g = &t->given[t->n_given];
        if (prompt) {
            g->text = xstrdup(json_string_value(prompt));
            json_t *m = json_pack("[{s:s,s:O}]", "role", "user", "content", prompt);
            g->messages_json = json_dumps(m, JSON_COMPACT);
            json_decref(m);
        } else {
            g->text = workload_messages_text(msgs); /* what the completions API is sent */
            g->messages_json = json_dumps(msgs, JSON_COMPACT);
        }
        size_t tokens = count_text_tokens(g->text, strlen(g->text));
        r->input_tokens = (int32_t)(tokens < 1                   ? 1
                                    : tokens > REPLAY_MAX_TOKENS ? REPLAY_MAX_TOKENS
                                                                 : tokens);
        r->given = (uint32_t)t->n_given++;
        return NULL;
    }
    return why;
}

/* A prefix_id's length and the line that first gave it. */
typedef struct prefix_len {
    uint64_t key;
    int32_t tokens;
    uint32_t line; /* 0: a free slot */
} prefix_len;

/* What reading one JSONL file keeps besides the records: every prefix_id
 * seen, so that one id is one prefix (a table open-addressed by the
 * block key, its size a power of two, at most half full). */
typedef struct jsonl_reader {
    replay_trace *t;
    prefix_len *seen;
    size_t n_seen, cap_seen;
} jsonl_reader;

/* The entry of `key`: the one that holds it, or the free slot it goes in. */
static prefix_len *prefix_slot(prefix_len *tab, size_t cap, uint64_t key) {
    size_t i = (size_t)mix64(key) & (cap - 1);
    while (tab[i].line && tab[i].key != key)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

/* The length an earlier record gave prefix `key`, when it is not `tokens`
 * (its line in *line); 0 when none did or it was the same, and the key
 * is now known to have this length. */
static int32_t prefix_conflict(jsonl_reader *j, uint64_t key, int32_t tokens, uint32_t line,
                               uint32_t *earlier) {
    if (2 * (j->n_seen + 1) > j->cap_seen) {
        size_t cap = j->cap_seen ? j->cap_seen * 2 : 64;
        prefix_len *tab = xcalloc(cap, sizeof *tab);
        for (size_t i = 0; i < j->cap_seen; i++)
            if (j->seen[i].line)
                *prefix_slot(tab, cap, j->seen[i].key) = j->seen[i];
        free(j->seen);
        j->seen = tab;
        j->cap_seen = cap;
    }
    prefix_len *p = prefix_slot(j->seen, j->cap_seen, key);
    if (p->line) {
        *earlier = p->line;
        return p->tokens == tokens ? 0 : p->tokens;
    }
    *p = (prefix_len){.key = key, .tokens = tokens, .line = line};
    j->n_seen++;
    return 0;
}

/* prefix_id (a string or an integer, the same id either way) and its
 * optional prefix_tokens: one shared block, no longer than the prompt,
 * and of one length wherever the id is named. */
static const char *prefix_block(jsonl_reader *j, replay_record *r, json_t *id, json_t *len,
                                char *why, size_t n) {
    char text[64];
    const char *s = text;
    size_t k;
    long long want = j->t->block_tokens;
    if (json_is_string(id)) {
        s = json_string_value(id);
        k = json_string_length(id);
    } else if (json_is_integer(id)) {
        k = (size_t)snprintf(text, sizeof text, "%lld", (long long)json_integer_value(id));
    } else {
        snprintf(why, n, "\"prefix_id\" must be a string or an integer");
        return why;
    }
    if (len && json_whole(len, 1, REPLAY_MAX_TOKENS, &want)) {
        snprintf(why, n, "\"prefix_tokens\" must be a whole number from 1 to %d",
                 REPLAY_MAX_TOKENS);
        return why;
    }
    if (len && want > r->input_tokens) {
        snprintf(why, n, "\"prefix_tokens\" %lld is more than \"input_tokens\" %d", want,
                 (int)r->input_tokens);
        return why;
    }
    uint64_t key = hash_bytes(s, k, KEY_SEED_PREFIX_ID);
    uint32_t earlier;
    int32_t other = prefix_conflict(j, key, (int32_t)want, r->line, &earlier);
    if (other) {
        snprintf(why, n, "prefix_id \"%.*s\" is %lld tokens long here and %d on line %u", (int)k, s,
                 want, (int)other, earlier);
        return why;
    }
    r->prefix_tokens = (int32_t)want;
    replay_read_add_block(j->t, r, key);
    return NULL;
}

/* Plain JSONL: {timestamp_ms, input_tokens, output_tokens, [prefix_id
 * [, prefix_tokens] | hash_ids], [prompt | messages]}. */
static const char *jsonl_record(jsonl_reader *j, json_t *o, int line, char *why, size_t n) {
    replay_trace *t = j->t;
    replay_record *r = replay_read_new_record(t, line);
    json_t *prompt = json_object_get(o, "prompt"), *msgs = json_object_get(o, "messages");
    json_t *pid = json_object_get(o, "prefix_id"), *plen = json_object_get(o, "prefix_tokens");
    json_t *ids = json_object_get(o, "hash_ids");
    const char *bad = json_time(o, "timestamp_ms", 1000, &r->t_us, why, n);
    if (!bad)
        bad = json_count(o, "output_tokens", &r->output_tokens, why, n);
    if (bad)
        return bad;
    if (pid && ids)
        snprintf(why, n, "give \"prefix_id\" or \"hash_ids\", not both");
    else if (plen && !pid)
        snprintf(why, n, "\"prefix_tokens\" needs a \"prefix_id\"");
    else if ((prompt || msgs) && (pid || ids))
        snprintf(why, n,
                 "a record with its own prompt shares no generated blocks: drop "
                 "\"prefix_id\" and \"hash_ids\"");
    else if (prompt || msgs)
        return own_prompt(t, r, prompt, msgs, why, n);
    else if (!(bad = json_count(o, "input_tokens", &r->input_tokens, why, n)))
        return pid   ? prefix_block(j, r, pid, plen, why, n)
               : ids ? json_hash_ids(t, r, ids, why, n)
                     : NULL;
    return why;
}

/* Every record of a JSONL trace, from the line `r` holds on. */
int replay_jsonl_read(replay_trace *t, replay_lines *r, int mooncake, char *err, int errlen) {
    jsonl_reader j = {.t = t};
    char why[256];
    int rc;
    for (;;) {
        json_error_t je;
        json_t *o = json_loadb(r->buf, r->len, 0, &je);
        const char *bad = !o                   ? je.text
                          : !json_is_object(o) ? "each line must be a JSON object"
                          : mooncake           ? mooncake_record(t, o, r->lineno, why, sizeof why)
                                               : jsonl_record(&j, o, r->lineno, why, sizeof why);
        if (bad)
            snprintf(err, errlen, "%s:%d: %s", r->path, r->lineno, bad);
        json_decref(o);
        if (bad) {
            rc = -1;
            break;
        }
        if ((rc = replay_lines_next(r, err, errlen)) != 1)
            break; /* 0 at the end of the file, -1 on a read error */
    }
    free(j.seen);
    return rc;
}
