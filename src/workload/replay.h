/* replay: a production trace as the run's requests (`servelab run
 * --replay FILE`). Each record of the trace is one request, sent at the
 * record's own time and asking for its own lengths:
 *   - arrival: the first replayed record at t=0, each later one at its
 *     timestamp minus the first's, divided by the time scale (2: twice as
 *     fast); a window (start and duration, in the trace's time, from its
 *     earliest record) and a cap on the count choose which records;
 *   - output: max_tokens is the trace's output length;
 *   - input: a prompt of exactly the trace's input length by servelab's
 *     token rule (model/tokens.h): token ids for the completions API
 *     (exact on any server whose vocabulary has 30,000 ids), words of one
 *     token each for chat; or the record's own prompt when it has one.
 * What the trace says is shared is shared token for token: a Mooncake
 * record's hash_ids name its blocks of `block_tokens` tokens, and block i
 * of the prompt is generated from hash_ids[i] and the run's salt alone (a
 * seeded generator keyed by both), so two records whose first k hash ids
 * agree have the same first k x block_tokens tokens, and two runs of
 * other salts have none in common; the last block is cut to the input
 * length, and tokens past the last named block are the record's own. A
 * plain JSONL record's prefix_id is one such block keyed by the id, of
 * prefix_tokens tokens (default block_tokens).
 *
 * The formats, as their sources define them:
 *   mooncake  JSONL {timestamp (ms), input_length, output_length, hash_ids}
 *   burstgpt  CSV Timestamp (s),Model,Request tokens,Response tokens,Total tokens,Log Type
 *   azure     CSV TIMESTAMP (a date-time),ContextTokens,GeneratedTokens
 *   jsonl     {timestamp_ms, input_tokens, output_tokens,
 *              [prefix_id [, prefix_tokens] | hash_ids], [prompt | messages]}
 * auto tells them apart by the first line. Records keep their line in the
 * file (a CSV's header is line 1), and every request row says it. */
#ifndef SERVELAB_REPLAY_H
#define SERVELAB_REPLAY_H

#include <jansson.h>
#include "workload/words.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    REPLAY_AUTO,
    REPLAY_MOONCAKE,
    REPLAY_BURSTGPT,
    REPLAY_AZURE,
    REPLAY_JSONL
} replay_format;

#define REPLAY_NONE UINT32_MAX
/* The longest input or output a record may ask for: a length past it is a
 * misread column, not a prompt. */
#define REPLAY_MAX_TOKENS 10000000
/* Token ids a generated prompt draws from: valid in any vocabulary of
 * 30,001 ids or more (random:IN:OUT draws the same). */
#define REPLAY_ID_MIN 100
#define REPLAY_ID_MAX 30000

typedef struct replay_record {
    int64_t t_us;          /* the trace's timestamp in microseconds, on its own clock */
    uint32_t line;         /* the record's line in the file, from 1 */
    int32_t input_tokens;  /* the prompt's length (a given prompt's by the token rule) */
    int32_t output_tokens; /* max_tokens */
    uint32_t first_block;  /* its shared blocks: block_keys[first_block, +n_blocks) */
    uint32_t n_blocks;
    int32_t prefix_tokens; /* > 0: its one block has this length (prefix_id); 0: block_tokens */
    uint32_t given;        /* its own prompt: given[given]; REPLAY_NONE: generated */
} replay_record;

typedef struct replay_prompt_text {
    char *text;          /* completions */
    char *messages_json; /* chat */
} replay_prompt_text;

typedef struct replay_trace {
    char path[512];
    replay_format format; /* what the file was read as (never AUTO) */
    replay_record *rec;   /* in time order once loaded; the window's once selected */
    size_t n, cap;
    size_t n_in_file;     /* records the file held */
    uint64_t *block_keys; /* a block's key: from a hash id, or from a prefix id */
    size_t n_keys, cap_keys;
    replay_prompt_text *given;
    size_t n_given, cap_given;
    int block_tokens;
    size_t uncovered; /* records whose blocks do not span their input as ceil(input/block) would */
    /* what replay_select chose */
    double time_scale, start_s, duration_s; /* duration 0: to the end */
    int64_t window_first_us;  /* the first replayed record's time, on the trace's clock */
    const word_source *words; /* chat words (words.h); NULL or empty: the ids' own letters */
    uint64_t salt;            /* the run's: seeds every generated token with its key (0 at load) */
} replay_trace;

typedef struct replay_window {
    double start_s;     /* from the trace's earliest record, in trace time */
    double duration_s;  /* 0: to the end */
    double time_scale;  /* > 0 */
    size_t max_records; /* 0: all */
} replay_window;

/* "auto" | "mooncake" | "burstgpt" | "azure" | "jsonl"; -1 when unknown. */
int replay_format_parse(const char *s, replay_format *out);
const char *replay_format_name(replay_format f);

/* Reads `path` as `format` (AUTO: told by the first line), every record,
 * in time order (records of one time keep the file's order). On a bad
 * file returns -1 with one line "path:line: what is wrong" in err, and t
 * holds nothing to free. */
int replay_load(replay_trace *t, const char *path, replay_format format, int block_tokens,
                char *err, int errlen);
/* The run's salt (the run's --cache-bust-salt): every generated token of
 * every record is drawn from it together with its block's key or its
 * record's line, so the records of one run that share a hash id share its
 * tokens, and two runs of other salts share nothing (two traces whose
 * hash ids both count from 0 would otherwise share prompts no trace
 * shares). The same salt gives the same tokens. */
void replay_set_salt(replay_trace *t, uint64_t salt);
/* Keeps the records of the window, at most max_records of them. -1 with
 * a message when none is left, when the start is past the trace's last
 * record (a duration past it reaches the trace's end), or when the
 * window's span, scaled, is longer than ARRIVALS_MAX_S (7 days). */
int replay_select(replay_trace *t, const replay_window *w, char *err, int errlen);
/* The scaled due times of the kept records (microseconds from t=0, the
 * first at 0), malloc'd into *due; returns their count. */
size_t replay_due_times(const replay_trace *t, int64_t **due);
/* The schedule's mean rate: records after the first over the scaled span
 * (INFINITY for a single record or a span of 0). */
double replay_offered_rps(const replay_trace *t);

/* Record k's line in the file; -1 when t is NULL or k is not a record. */
long replay_trace_line(const replay_trace *t, size_t k);
int replay_prompt_tokens(const replay_trace *t, size_t k);
int replay_output_tokens(const replay_trace *t, size_t k);
/* The prompt builder: record k's generated prompt as token ids, exactly
 * replay_prompt_tokens(t, k) of them, into ids (room for that many);
 * returns the count (0 for a record with its own prompt). */
size_t replay_token_ids(const replay_trace *t, size_t k, int32_t *ids);
/* Record k's prompt as the JSON text of the body's "prompt" (token ids,
 * or its own text) or, for chat, "messages" (generated: one user message
 * of one-token words, word i standing for id i): malloc'd, its length in
 * *len. Written directly, in one pass, since a prompt of 100,000 tokens
 * would take jansson milliseconds to build. */
char *replay_prompt_json(const replay_trace *t, size_t k, int chat, size_t *len);
/* The same as a jansson value (for tests and tools; slower). */
json_t *replay_prompt(const replay_trace *t, size_t k, int chat);
/* meta.json's account of the replay: file, format, window, counts. */
json_t *replay_json(const replay_trace *t);
void replay_free(replay_trace *t);

#endif
