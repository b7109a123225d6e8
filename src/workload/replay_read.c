/* replay_read: Mooncake, BurstGPT, Azure and plain JSONL traces into
 * records (see replay_read.h). Every value is checked where it is read,
 * and the first bad one ends the reading with its file and line.
 *
 * The file is opened once: the format is told from the first line the
 * reader already holds, and a JSONL trace goes on from there, so a pipe
 * or a FIFO (`--replay <(zcat trace.jsonl.gz)`) loses nothing. Lines are
 * read by a reader of our own rather than getline, because getline's
 * failure looks like the end of the file (a line it cannot hold would
 * end the trace there without a word) and it has no bound (`--replay
 * /dev/zero` would be read until memory runs out): this one stops at
 * LINE_MAX_BYTES and at a read error, and says which. It also ends a line
 * at a CR alone, as old Mac files do. The CSVs are mapped by common/csv,
 * which needs a regular file: one from a pipe is refused, saying so. */
#include "workload/replay_read.h"
#include "common/csv.h"
#include "common/tokens.h"
#include "common/util.h"
#include "workload/workload.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

/* The keys of the two kinds of shared block differ in their seed, so a
 * hash id never stands for the same block as a prefix id of that text. */
#define KEY_SEED_HASH_ID 0x6d6f6f6e63616b65ULL
#define KEY_SEED_PREFIX_ID 0x7072656669786964ULL
/* The latest timestamp a trace may hold, in microseconds (about 317
 * years): far past any trace, and far from int64_t's end when scaled. */
#define MAX_TIME_US 1e16
/* The longest line a trace may hold: 6 times Mooncake's longest record
 * (10 MB for 1.2 million hash ids reads fine), far below a machine's
 * memory. */
#define LINE_MAX_BYTES ((size_t)64 << 20)

static const char BOM[] = "\xEF\xBB\xBF";

static replay_record *new_record(replay_trace *t, int line) {
    if (t->n == t->cap)
        t->rec = xrealloc(t->rec, (t->cap = t->cap ? t->cap * 2 : 256) * sizeof *t->rec);
    replay_record *r = &t->rec[t->n++];
    memset(r, 0, sizeof *r);
    r->line = (uint32_t)line;
    r->given = REPLAY_NONE;
    r->first_block = (uint32_t)t->n_keys;
    return r;
}

static void add_block(replay_trace *t, replay_record *r, uint64_t key) {
    if (t->n_keys == t->cap_keys)
        t->block_keys =
            xrealloc(t->block_keys,
                     (t->cap_keys = t->cap_keys ? t->cap_keys * 2 : 1024) * sizeof *t->block_keys);
    t->block_keys[t->n_keys++] = key;
    r->n_blocks++;
}

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
        add_block(t, r, mix64(KEY_SEED_HASH_ID ^ mix64((uint64_t)json_integer_value(v))));
    }
    return NULL;
}

/* Mooncake: {"timestamp": ms, "input_length", "output_length", "hash_ids"}. */
static const char *mooncake_record(replay_trace *t, json_t *o, int line, char *why, size_t n) {
    replay_record *r = new_record(t, line);
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
    add_block(j->t, r, key);
    return NULL;
}

/* Plain JSONL: {timestamp_ms, input_tokens, output_tokens, [prefix_id
 * [, prefix_tokens] | hash_ids], [prompt | messages]}. */
static const char *jsonl_record(jsonl_reader *j, json_t *o, int line, char *why, size_t n) {
    replay_trace *t = j->t;
    replay_record *r = new_record(t, line);
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

/* A trace's lines, read from one open stream (see the top of the file),
 * a block at a time: each line's end found with memchr, as getline does. */
typedef struct line_reader {
    FILE *f;
    const char *path;
    char *buf; /* the line last read, NUL-terminated, without its end */
    size_t len, cap;
    char *io; /* read ahead: io[at, n) is still to be looked at */
    size_t at, n;
    int lineno;   /* the line last read, from 1 */
    int after_cr; /* that line ended at a CR: an LF first now ends it too */
    int bare_cr;  /* a line so far ended at a CR alone */
} line_reader;

#define READ_AHEAD_BYTES (64 * 1024)

/* s[0, n) added to the line: 0, or -1 with a message past the cap or out
 * of memory (the line's number is the next one's). */
static int line_add(line_reader *r, const char *s, size_t n, char *err, int errlen) {
    if (n > LINE_MAX_BYTES - r->len) {
        snprintf(err, errlen,
                 "%s:%d: a line longer than %zu MiB: not a trace (no record is this long)", r->path,
                 r->lineno + 1, LINE_MAX_BYTES >> 20);
        return -1;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        cap = cap < LINE_MAX_BYTES + 1 ? cap : LINE_MAX_BYTES + 1;
        char *p = realloc(r->buf, cap);
        if (!p) {
            snprintf(err, errlen, "%s:%d: out of memory holding a line of %zu MiB", r->path,
                     r->lineno + 1, (r->len + n) >> 20);
            return -1;
        }
        r->buf = p;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, s, n);
    r->len += n;
    return 0;
}

/* More bytes read ahead: 1, 0 at the end of the file, -1 with a message
 * on a read error (which is not the end of the file). */
static int read_ahead(line_reader *r, char *err, int errlen) {
    if (!r->io)
        r->io = xmalloc(READ_AHEAD_BYTES);
    r->at = 0;
    r->n = fread(r->io, 1, READ_AHEAD_BYTES, r->f);
    if (r->n)
        return 1;
    if (!ferror(r->f))
        return 0;
    snprintf(err, errlen, "%s:%d: cannot read: %s", r->path, r->lineno + 1, strerror(errno));
    return -1;
}

/* The next line, ended by LF, CRLF or a CR alone: 1, 0 at the end of the
 * file, or -1 with a message. */
static int read_line(line_reader *r, char *err, int errlen) {
    int any = 0, got;
    r->len = 0;
    for (;;) {
        if (r->at == r->n && (got = read_ahead(r, err, errlen)) <= 0) {
            if (got < 0)
                return -1;
            break;
        }
        const char *p = r->io + r->at, *e = r->io + r->n;
        if (r->after_cr) { /* a CR ended the last line: an LF just after it is that end's */
            r->after_cr = 0;
            r->bare_cr |= *p != '\n';
            if (*p == '\n') {
                r->at++;
                continue;
            }
        }
        any = 1;
        const char *end = memchr(p, '\n', (size_t)(e - p));
        const char *cr = memchr(p, '\r', (size_t)((end ? end : e) - p));
        end = cr ? cr : end;
        if (line_add(r, p, (size_t)((end ? end : e) - p), err, errlen))
            return -1;
        r->at = end ? (size_t)(end - r->io) + 1 : r->n;
        if (end) {
            r->after_cr = end == cr;
            break;
        }
    }
    if (!any || line_add(r, "", 0, err, errlen))
        return any ? -1 : 0;
    r->buf[r->len] = 0;
    r->lineno++;
    return 1;
}

/* Whether the line last read ended at a CR with no LF after it. */
static int ended_at_bare_cr(line_reader *r, char *err, int errlen) {
    if (!r->after_cr)
        return r->bare_cr;
    if (r->at == r->n && read_ahead(r, err, errlen) <= 0)
        return r->bare_cr; /* the file ends at that CR */
    return r->io[r->at] != '\n';
}

/* The next line that is not blank, without a leading BOM on line 1: 1,
 * 0 at the end of the file, or -1 with a message. */
static int next_line(line_reader *r, char *err, int errlen) {
    int got;
    while ((got = read_line(r, err, errlen)) == 1) {
        char *s = r->buf;
        if (r->lineno == 1 && r->len >= 3 && !memcmp(s, BOM, 3))
            memmove(s, s + 3, (r->len -= 3) + 1);
        if (strspn(s, " \t") != r->len)
            return 1;
    }
    return got;
}

/* Every record of a JSONL trace, from the line `r` holds on. */
static int read_jsonl(replay_trace *t, line_reader *r, int mooncake, char *err, int errlen) {
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
        if ((rc = next_line(r, err, errlen)) != 1)
            break; /* 0 at the end of the file, -1 on a read error */
    }
    free(j.seen);
    return rc;
}

/* Header field i, without a leading BOM and the spaces around it. */
static const char *header_field(const csv_row *h, int i, size_t *len) {
    const char *f = h->f[i];
    *len = h->len[i];
    if (i == 0 && *len >= 3 && !memcmp(f, BOM, 3))
        f += 3, *len -= 3;
    while (*len && isspace((unsigned char)*f))
        f++, (*len)--;
    while (*len && isspace((unsigned char)f[*len - 1]))
        (*len)--;
    return f;
}

/* The header's column named `name` (any case, spaces around it and a
 * leading BOM ignored): its index, -1 when none is, or -2 when two are
 * (their numbers from 1 in dup[0], dup[1]: which one is meant?). */
static int column(const csv_row *h, const char *name, int dup[2]) {
    int found = -1;
    for (int i = 0; i < h->n && i < CSV_MAX_FIELDS; i++) {
        size_t len;
        const char *f = header_field(h, i, &len);
        if (len != strlen(name) || strncasecmp(f, name, len))
            continue;
        if (found >= 0) {
            dup[0] = found + 1;
            dup[1] = i + 1;
            return -2;
        }
        found = i;
    }
    return found;
}

/* A CSV token count (see json_count). */
static const char *csv_count(const csv_row *row, int col, const char *name, int32_t *out, char *why,
                             size_t n) {
    double v;
    if (csv_number(row, col, &v) || isnan(v) || v < 0 || v > REPLAY_MAX_TOKENS || v != floor(v)) {
        snprintf(why, n, "%s must be a whole number of tokens from 0 to %d", name,
                 REPLAY_MAX_TOKENS);
        return why;
    }
    *out = (int32_t)(v < 1 ? 1 : v);
    return NULL;
}

/* The three columns each CSV format reads: a time, the input, the output. */
typedef struct csv_shape {
    const char *cols[3];
    const char *header; /* the source's header, for messages */
} csv_shape;

static const csv_shape burstgpt_shape = {
    {"Timestamp", "Request tokens", "Response tokens"},
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"};
static const csv_shape azure_shape = {{"TIMESTAMP", "ContextTokens", "GeneratedTokens"},
                                      "TIMESTAMP,ContextTokens,GeneratedTokens"};

static const char *csv_record(replay_trace *t, const csv_row *row, int line, const int *col,
                              const csv_shape *s, char *why, size_t n) {
    if (row->error) {
        snprintf(why, n, "%s", row->error);
        return why;
    }
    replay_record *r = new_record(t, line);
    double sec;
    if (col[0] >= row->n || col[1] >= row->n || col[2] >= row->n) {
        snprintf(why, n, "%d fields, fewer than the header's columns", row->n);
        return why;
    }
    if (s == &azure_shape) {
        if (replay_parse_datetime(row->f[col[0]], row->len[col[0]], &r->t_us)) {
            snprintf(why, n, "TIMESTAMP '%.*s' is not a date-time (2023-11-16 18:17:03.97996)",
                     (int)(row->len[col[0]] < 40 ? row->len[col[0]] : 40), row->f[col[0]]);
            return why;
        }
    } else if (csv_number(row, col[0], &sec) || !isfinite(sec) || sec < 0 ||
               sec * 1e6 > MAX_TIME_US) {
        snprintf(why, n, "Timestamp must be a number of seconds >= 0");
        return why;
    } else {
        r->t_us = llround(sec * 1e6);
    }
    const char *bad = csv_count(row, col[1], s->cols[1], &r->input_tokens, why, n);
    return bad ? bad : csv_count(row, col[2], s->cols[2], &r->output_tokens, why, n);
}

/* The header's columns of the three that `s` reads into col: 0, or -1
 * with a message. */
static int csv_columns(const csv_row *h, const csv_shape *s, const char *path, int line, int *col,
                       char *err, int errlen) {
    for (int k = 0; k < 3; k++) {
        int dup[2];
        col[k] = column(h, s->cols[k], dup);
        if (col[k] == -1)
            snprintf(err, errlen, "%s:%d: no column '%s' (the header is %s)", path, line,
                     s->cols[k], s->header);
        else if (col[k] == -2)
            snprintf(err, errlen, "%s:%d: two columns named '%s' (columns %d and %d)", path, line,
                     s->cols[k], dup[0], dup[1]);
        if (col[k] < 0)
            return -1;
    }
    return 0;
}

static int read_csv(replay_trace *t, const char *path, const csv_shape *s, char *err, int errlen) {
    csv_file c;
    int rc = csv_open(&c, path);
    if (rc) {
        snprintf(err, errlen, "--replay %s: cannot open: %s", path,
                 rc > 0 ? "no such file" : strerror(errno));
        return -1;
    }
    csv_row row;
    int col[3], ok = csv_next(&c, &row);
    if (!ok)
        snprintf(err, errlen, "%s:1: an empty file (the header is %s)", path, s->header);
    rc = ok ? csv_columns(&row, s, path, c.line, col, err, errlen) : -1;
    char why[256];
    while (!rc && csv_next(&c, &row)) {
        if (csv_row_blank(&row))
            continue;
        const char *bad = csv_record(t, &row, c.line, col, s, why, sizeof why);
        if (bad) {
            snprintf(err, errlen, "%s:%d: %s", path, c.line, bad);
            rc = -1;
        }
    }
    csv_close(&c);
    return rc;
}

/* A CSV header line holding `name` as one of its fields. */
static int header_has(const char *line, const char *name) {
    size_t n = strlen(name);
    for (const char *p = line; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        while (*p == ' ' || *p == '"')
            p++;
        if (!strncasecmp(p, name, n) && strchr(",\" \r", p[n] ? p[n] : ','))
            return 1;
    }
    return 0;
}

/* The format a trace's first line that is not blank says: REPLAY_AUTO
 * when it says none. */
static replay_format detect(const char *line, size_t len) {
    const char *s = line + strspn(line, " \t");
    replay_format found = REPLAY_AUTO;
    if (*s == '{') {
        json_t *o = json_loadb(s, len - (size_t)(s - line), 0, NULL);
        found = json_object_get(o, "input_length")   ? REPLAY_MOONCAKE
                : json_object_get(o, "timestamp_ms") ? REPLAY_JSONL
                                                     : REPLAY_AUTO;
        json_decref(o);
    } else {
        found = header_has(s, "Request tokens")  ? REPLAY_BURSTGPT
                : header_has(s, "ContextTokens") ? REPLAY_AZURE
                                                 : REPLAY_AUTO;
    }
    return found;
}

/* A CSV trace whose first line `r` has read: mapped from its path, which
 * a regular file allows and a pipe does not; a file of CR line ends is
 * named as such (common/csv ends rows at LF). */
static int read_csv_trace(replay_trace *t, line_reader *r, int regular, char *err, int errlen) {
    const csv_shape *s = t->format == REPLAY_AZURE ? &azure_shape : &burstgpt_shape;
    if (!regular) {
        snprintf(err, errlen,
                 "--replay %s: a %s trace (CSV) is read from a regular file, not a pipe or a "
                 "FIFO: save it to a file first",
                 r->path, replay_format_name(t->format));
        return -1;
    }
    if (ended_at_bare_cr(r, err, errlen)) {
        snprintf(err, errlen,
                 "%s:%d: the file ends its lines with CR alone (old Mac line ends): convert "
                 "them to LF (tr '\\r' '\\n')",
                 r->path, r->lineno);
        return -1;
    }
    return read_csv(t, r->path, s, err, errlen);
}

int replay_read(replay_trace *t, const char *path, replay_format format, char *err, int errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--replay %s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int regular = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
    line_reader r = {.f = f, .path = path};
    int got = next_line(&r, err, errlen), rc = got < 0 ? -1 : 0;
    int csv = format == REPLAY_BURSTGPT || format == REPLAY_AZURE;
    if (got == 0 && csv) {
        snprintf(err, errlen, "%s:1: an empty file (the header is %s)", path,
                 format == REPLAY_AZURE ? azure_shape.header : burstgpt_shape.header);
        rc = -1;
    } else if (got == 1 && format == REPLAY_AUTO &&
               (format = detect(r.buf, r.len)) == REPLAY_AUTO) {
        snprintf(err, errlen,
                 "%s:%d: cannot tell the trace's format from this line (a Mooncake record has "
                 "input_length, a JSONL one timestamp_ms; a BurstGPT header names Request tokens, "
                 "an Azure one ContextTokens): give --replay-format",
                 path, r.lineno);
        rc = -1;
    } else if (got == 1) {
        t->format = format;
        rc = format == REPLAY_MOONCAKE || format == REPLAY_JSONL
                 ? read_jsonl(t, &r, format == REPLAY_MOONCAKE, err, errlen)
                 : read_csv_trace(t, &r, regular, err, errlen);
    }
    free(r.buf);
    free(r.io);
    fclose(f);
    return rc;
}

/* n digits at s[*i] into *v. */
static int digits(const char *s, size_t len, size_t *i, int n, int *v) {
    *v = 0;
    for (int k = 0; k < n; k++, (*i)++) {
        if (*i >= len || !isdigit((unsigned char)s[*i]))
            return -1;
        *v = *v * 10 + (s[*i] - '0');
    }
    return 0;
}

/* The zone after the time: none or Z (UTC), or +HH:MM / -HH:MM / +HHMM,
 * as seconds east of UTC. */
static int zone_seconds(const char *s, size_t n, size_t *i, long *east) {
    *east = 0;
    if (*i < n && (s[*i] == 'Z' || s[*i] == 'z')) {
        (*i)++;
        return 0;
    }
    if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
        return 0;
    int sign = s[(*i)++] == '-' ? -1 : 1, hh, mm;
    if (digits(s, n, i, 2, &hh))
        return -1;
    if (*i < n && s[*i] == ':')
        (*i)++;
    if (digits(s, n, i, 2, &mm) || hh > 23 || mm > 59)
        return -1;
    *east = sign * (hh * 3600L + mm * 60L);
    return 0;
}

int replay_parse_datetime(const char *s, size_t n, int64_t *us) {
    size_t i = 0;
    int y, mo, d, h, mi, se;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (digits(s, n, &i, 4, &y) || i >= n || s[i++] != '-' || digits(s, n, &i, 2, &mo) || i >= n ||
        s[i++] != '-' || digits(s, n, &i, 2, &d) || i >= n || (s[i] != ' ' && s[i] != 'T') ||
        (++i, digits(s, n, &i, 2, &h)) || i >= n || s[i++] != ':' || digits(s, n, &i, 2, &mi) ||
        i >= n || s[i++] != ':' || digits(s, n, &i, 2, &se))
        return -1;
    long frac_us = 0, scale = 100000;
    if (i < n && s[i] == '.') {
        size_t start = ++i;
        for (; i < n && isdigit((unsigned char)s[i]); i++, scale /= 10)
            frac_us += scale * (s[i] - '0'); /* past the sixth digit scale is 0 */
        if (i == start)
            return -1;
    }
    long east;
    if (zone_seconds(s, n, &i, &east) || i != n)
        return -1;
    /* A leap second (23:59:60, or :60 of any minute in a zone's own time)
     * is read as the second after :59, the next minute's :00: time stays
     * in order, and the day it ends is not taken for a day too many. */
    int leap = se == 60;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = se - leap};
    time_t when = timegm(&tm);
    /* timegm moves a day past the month's end into the next: refuse it */
    if (tm.tm_mday != d || tm.tm_mon != mo - 1 || h > 23 || mi > 59 || se > 60 || when < 0)
        return -1;
    *us = ((int64_t)when + leap - east) * 1000000 + frac_us;
    return 0;
}
