/* replay: a trace's records in time order, the window the run replays,
 * its scaled schedule and each record's prompt (see replay.h). A prompt
 * is built when its request is sent, from the record alone, so a trace of
 * a million records costs its records' memory and nothing more, and a
 * block's tokens depend on its key and the run's salt and nothing else:
 * every record of the run that names a block has the same tokens there,
 * whichever was built first, and another run (another salt) has others,
 * so that two traces whose hash ids both count from 0 share nothing. */
#include "workload/replay.h"
#include "common/rng.h"
#include "common/util.h"
#include "workload/arrivals.h"
#include "workload/replay_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The seed of a record's own tokens (those no block names), with its line. */
#define OWN_TOKENS_SEED 0x6f776e746f6b656eULL
/* Mixed with the run's salt before it meets a key. */
#define SALT_SEED 0x73616c7472756e73ULL

static const char *format_names[] = {"auto", "mooncake", "burstgpt", "azure", "jsonl"};

int replay_format_parse(const char *s, replay_format *out) {
    for (int i = 0; i < (int)(sizeof format_names / sizeof *format_names); i++)
        if (!strcmp(s, format_names[i])) {
            *out = (replay_format)i;
            return 0;
        }
    return -1;
}

const char *replay_format_name(replay_format f) {
    return f >= REPLAY_AUTO && f <= REPLAY_JSONL ? format_names[f] : "?";
}

/* Time order; records of one time in the file's order (lines are unique). */
static int by_time(const void *a, const void *b) {
    const replay_record *x = a, *y = b;
    if (x->t_us != y->t_us)
        return x->t_us < y->t_us ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Records whose hash ids do not number ceil(input / block): a trace cut
 * in blocks of another size than --replay-block-tokens says. */
static size_t count_uncovered(const replay_trace *t) {
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const replay_record *r = &t->rec[i];
        int64_t want = ((int64_t)r->input_tokens + t->block_tokens - 1) / t->block_tokens;
        n += r->n_blocks && !r->prefix_tokens && r->n_blocks != want;
    }
    return n;
}

int replay_load(replay_trace *t, const char *path, replay_format format, int block_tokens,
                char *err, int errlen) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->block_tokens = block_tokens > 0 ? block_tokens : 512;
    t->time_scale = 1;
    if (replay_read(t, path, format, err, errlen)) {
        replay_free(t);
        return -1;
    }
    if (!t->n) {
        snprintf(err, errlen, "%s: no records in the file", path);
        replay_free(t);
        return -1;
    }
    qsort(t->rec, t->n, sizeof *t->rec, by_time);
    t->n_in_file = t->n;
    t->uncovered = count_uncovered(t);
    t->window_first_us = t->rec[0].t_us;
    return 0;
}

/* The window's bounds on the trace's clock, [*from, *to): -1 with a
 * message for a start past the trace's last record; a duration past it
 * is the trace's end. Compared as doubles first, so that no value
 * (1e300) can overflow into a window that holds the whole trace. */
static int window_bounds(const replay_trace *t, const replay_window *w, int64_t *from, int64_t *to,
                         char *err, int errlen) {
    int64_t earliest = t->rec[0].t_us, last = t->rec[t->n - 1].t_us;
    double span_s = (double)(last - earliest) / 1e6;
    if (!(w->start_s <= span_s)) {
        snprintf(err, errlen,
                 "--replay %s: no records in the window (--replay-start %g s is past the "
                 "trace's last record; the trace spans %.3f s from its first record)",
                 t->path, w->start_s, span_s);
        return -1;
    }
    *from = earliest + llround(w->start_s * 1e6);
    *to = w->duration_s > 0 && w->duration_s * 1e6 <= (double)(last - *from)
              ? *from + llround(w->duration_s * 1e6)
              : INT64_MAX;
    return 0;
}

/* The kept records' span once scaled must fit the schedule's cap (7
 * days, as every servelab schedule): 0, or -1 with a message. */
static int check_scaled_span(const replay_trace *t, double scale, char *err, int errlen) {
    double span_s = (double)(t->rec[t->n - 1].t_us - t->rec[0].t_us) / 1e6;
    if (span_s / scale <= ARRIVALS_MAX_S)
        return 0;
    snprintf(err, errlen,
             "--time-scale %g: the window's %.3f s of trace would take %.3g s to replay, more "
             "than %d days: give a --time-scale of at least %.3g, or a shorter window "
             "(--replay-duration, --requests)",
             scale, span_s, span_s / scale, ARRIVALS_MAX_S / 86400, span_s / ARRIVALS_MAX_S);
    return -1;
}

int replay_select(replay_trace *t, const replay_window *w, char *err, int errlen) {
    int64_t from, to;
    if (window_bounds(t, w, &from, &to, err, errlen))
        return -1;
    double span_s = (double)(t->rec[t->n - 1].t_us - t->rec[0].t_us) / 1e6;
    size_t kept = 0, n = t->n;
    for (size_t i = 0; i < n; i++) {
        if (t->rec[i].t_us < from || t->rec[i].t_us >= to)
            continue;
        if (w->max_records && kept == w->max_records)
            break;
        t->rec[kept++] = t->rec[i];
    }
    if (!kept) {
        snprintf(err, errlen,
                 "--replay %s: no records in the window (--replay-start %g s%s; the trace "
                 "spans %.3f s from its first record)",
                 t->path, w->start_s, w->duration_s > 0 ? ", with --replay-duration" : "", span_s);
        return -1;
    }
    t->n = kept;
    double scale = w->time_scale > 0 ? w->time_scale : 1;
    if (check_scaled_span(t, scale, err, errlen))
        return -1;
    t->time_scale = scale;
    t->start_s = w->start_s;
    t->duration_s = to == INT64_MAX ? 0 : w->duration_s; /* 0: it came to the trace's end */
    t->window_first_us = t->rec[0].t_us;
    t->uncovered = count_uncovered(t);
    return 0;
}

size_t replay_due_times(const replay_trace *t, int64_t **due) {
    *due = xmalloc((t->n ? t->n : 1) * sizeof **due);
    for (size_t i = 0; i < t->n; i++)
        (*due)[i] = llround((double)(t->rec[i].t_us - t->window_first_us) / t->time_scale);
    return t->n;
}

double replay_offered_rps(const replay_trace *t) {
    if (t->n < 2)
        return INFINITY;
    double span_s = (double)(t->rec[t->n - 1].t_us - t->window_first_us) / 1e6 / t->time_scale;
    return span_s > 0 ? (double)(t->n - 1) / span_s : INFINITY;
}

long replay_trace_line(const replay_trace *t, size_t k) {
    return t && k < t->n ? (long)t->rec[k].line : -1;
}

int replay_prompt_tokens(const replay_trace *t, size_t k) {
    return t->rec[k].input_tokens;
}

int replay_output_tokens(const replay_trace *t, size_t k) {
    return t->rec[k].output_tokens;
}

/* `n` ids from the generator seeded with `seed`, at ids[at..]. */
static size_t draw_ids(uint64_t seed, int32_t *ids, size_t at, size_t n) {
    rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        ids[at + i] = (int32_t)rng_range(&r, REPLAY_ID_MIN, REPLAY_ID_MAX);
    return at + n;
}

void replay_set_salt(replay_trace *t, uint64_t salt) {
    t->salt = salt;
}

/* The seed of the tokens `key` stands for in this run: the key and the
 * run's salt together. */
static uint64_t salted(const replay_trace *t, uint64_t key) {
    return mix64(key ^ mix64(t->salt ^ SALT_SEED));
}

size_t replay_token_ids(const replay_trace *t, size_t k, int32_t *ids) {
    const replay_record *r = &t->rec[k];
    if (r->given != REPLAY_NONE)
        return 0;
    size_t want = (size_t)r->input_tokens, at = 0;
    size_t block = (size_t)(r->prefix_tokens > 0 ? r->prefix_tokens : t->block_tokens);
    for (uint32_t b = 0; b < r->n_blocks && at < want; b++) {
        size_t len = want - at < block ? want - at : block; /* the last is cut to the input */
        at = draw_ids(salted(t, t->block_keys[r->first_block + b]), ids, at, len);
    }
    if (at < want)
        at = draw_ids(salted(t, OWN_TOKENS_SEED ^ mix64(r->line)), ids, at, want - at);
    return at;
}

/* Id `id` as a word of 1-4 lowercase letters (ids map to distinct words:
 * bijective base 26, enough for 475,254 ids), one token by the rule. */
static size_t id_word(const word_source *ws, int32_t id, char *out) {
    long v = (long)id - REPLAY_ID_MIN;
    if (ws && ws->words && ws->n > 0) { /* words the server counts one token each */
        const char *w = ws->words[v % ws->n];
        size_t n = strlen(w) < WORD_MAX_BYTES ? strlen(w) : WORD_MAX_BYTES;
        memcpy(out, w, n);
        return n;
    }
    char rev[8];
    size_t n = 0;
    do {
        rev[n++] = (char)('a' + v % 26);
        v = v / 26 - 1;
    } while (v >= 0 && n < 4);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

/* An id in decimal (ids have at most 5 digits). */
static size_t id_digits(int32_t id, char *out) {
    char rev[12];
    size_t n = 0;
    uint32_t v = (uint32_t)id;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

#define CHAT_OPEN "[{\"role\":\"user\",\"content\":\""
#define CHAT_CLOSE "\"}]"

/* The generated prompt written out in one pass: building it as jansson
 * values costs about 0.6 ms for 7,000 ids, time the request would be sent
 * late by; these bytes need no escaping (digits, or letters and spaces). */
static char *generated_json(const replay_trace *t, const int32_t *ids, size_t n, int chat,
                            size_t *len) {
    char *out = xmalloc(n * 6 + sizeof CHAT_OPEN + sizeof CHAT_CLOSE + 2), *p = out;
    if (chat) {
        memcpy(p, CHAT_OPEN, sizeof CHAT_OPEN - 1);
        p += sizeof CHAT_OPEN - 1;
    } else {
        *p++ = '[';
    }
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = chat ? ' ' : ',';
        p += chat ? id_word(t->words, ids[i], p) : id_digits(ids[i], p);
    }
    if (chat) {
        memcpy(p, CHAT_CLOSE, sizeof CHAT_CLOSE - 1);
        p += sizeof CHAT_CLOSE - 1;
    } else {
        *p++ = ']';
    }
    *p = 0;
    *len = (size_t)(p - out);
    return out;
}

char *replay_prompt_json(const replay_trace *t, size_t k, int chat, size_t *len) {
    const replay_record *r = &t->rec[k];
    if (r->given != REPLAY_NONE) {
        const replay_prompt_text *g = &t->given[r->given];
        if (chat) {
            *len = strlen(g->messages_json);
            return xstrdup(g->messages_json);
        }
        json_t *s = json_string(g->text);
        char *out = json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT);
        json_decref(s);
        *len = strlen(out);
        return out;
    }
    int32_t *ids = xmalloc((size_t)r->input_tokens * sizeof *ids);
    char *out = generated_json(t, ids, replay_token_ids(t, k, ids), chat, len);
    free(ids);
    return out;
}

json_t *replay_prompt(const replay_trace *t, size_t k, int chat) {
    size_t len;
    char *text = replay_prompt_json(t, k, chat, &len);
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY, NULL);
    free(text);
    return j;
}

json_t *replay_json(const replay_trace *t) {
    json_t *j = json_object();
    json_object_set_new(j, "file", json_string(t->path));
    json_object_set_new(j, "format", json_string(replay_format_name(t->format)));
    json_object_set_new(j, "records_in_file", json_integer((json_int_t)t->n_in_file));
    json_object_set_new(j, "records", json_integer((json_int_t)t->n));
    json_object_set_new(j, "window_start_s", json_real(t->start_s));
    json_object_set_new(j, "window_duration_s",
                        t->duration_s > 0 ? json_real(t->duration_s) : json_null());
    json_object_set_new(j, "time_scale", json_real(t->time_scale));
    double span = t->n ? (double)(t->rec[t->n - 1].t_us - t->window_first_us) / 1e6 : 0;
    json_object_set_new(j, "trace_span_s", json_real(span));
    json_object_set_new(j, "schedule_span_s", json_real(span / t->time_scale));
    json_object_set_new(j, "block_tokens", json_integer(t->block_tokens));
    json_object_set_new(j, "records_blocks_not_matching_input",
                        json_integer((json_int_t)t->uncovered));
    json_object_set_new(j, "cache_bust",
                        json_string("off: the trace says what is shared (its tokens are drawn "
                                    "with the run's cache_bust_salt)"));
    return j;
}

void replay_free(replay_trace *t) {
    for (size_t i = 0; i < t->n_given; i++) {
        free(t->given[i].text);
        free(t->given[i].messages_json);
    }
    free(t->given);
    free(t->rec);
    free(t->block_keys);
    memset(t, 0, sizeof *t);
}
