/* columns: the columns of the run directory's CSV files, one table per
 * file, the one place that names them. Each row is a column in the order
 * it is written: its name, its type, its unit, whether a reader needs it
 * (the contract columns every run has written since the format began; the
 * others came later, and a run without them still reads), and what it
 * holds in a line of docs/files.md.
 *
 * The tables drive the writers' headers (client/rowwriter.c,
 * client/errorlog.c), every reader's columns (report/load.c finds each by
 * its name and refuses a file without a contract column), merge's time
 * columns (the TIME ones are moved by a shard's offset) and the tables of
 * docs/files.md (rundir/docs.h; a test keeps them current). Adding a
 * column to requests.csv is a row here plus the code that computes its
 * value (client/rowwriter.c's format_request, in the same order: a test
 * reads a row back through the table by name). The rows are X-macros so
 * that the enum of column positions and the table come from one list. */
#ifndef SERVELAB_RUNDIR_COLUMNS_H
#define SERVELAB_RUNDIR_COLUMNS_H

#include <stddef.h>

typedef enum rundir_type {
    RUNDIR_TEXT,     /* as written (quoted as RFC 4180 has it when needed) */
    RUNDIR_TIME,     /* ms since the run's t=0, three decimals; a merge moves it */
    RUNDIR_DURATION, /* ms between two moments; a merge leaves it */
    RUNDIR_COUNT,    /* a whole number not below 0 */
    RUNDIR_FLAG,     /* 0 or 1 */
} rundir_type;

typedef struct rundir_column {
    const char *name;
    rundir_type type;
    const char *unit;    /* "ms", "tokens", "count", "0/1" or "" */
    int contract;        /* a reader refuses a file without it */
    const char *meaning; /* one line of markdown for docs/files.md */
} rundir_column;

typedef struct rundir_table {
    const char *file; /* "requests.csv" */
    const rundir_column *col;
    int n;
} rundir_table;

/* X(name, type, unit, contract, meaning), in the order written. */
#define RUNDIR_REQUESTS_COLUMNS(X)                                                                 \
    X(request_id, RUNDIR_TEXT, "", 1,                                                              \
      "`req-N`, where N is the request's place in the schedule, from 0. It is also sent to the "   \
      "server as the `X-Request-Id` header.")                                                      \
    X(class, RUNDIR_TEXT, "", 1,                                                                   \
      "the prompt class: `short`, `medium` or `long` for the built-in prompts, a JSONL line's "    \
      "`class` (default `file`; at most 64 bytes, a longer one is refused when the file is "       \
      "loaded), `sharegpt`, `random`, or `replay` for `--replay`")                                 \
    X(scheduled_ms, RUNDIR_TIME, "ms", 1, "when the request was due by the arrival schedule")      \
    X(sent_ms, RUNDIR_TIME, "ms", 1,                                                               \
      "when the client started the request. A new connection, if one is needed, is opened after "  \
      "this, so TTFT includes connection setup. Empty if the request was never sent.")             \
    X(first_token_ms, RUNDIR_TIME, "ms", 1,                                                        \
      "when the first chunk that carried output arrived (see below)")                              \
    X(last_token_ms, RUNDIR_TIME, "ms", 1, "when the last chunk that carried output arrived")      \
    X(end_ms, RUNDIR_TIME, "ms", 1,                                                                \
      "when the client saw the response end, fail or get cancelled; for a request never sent and " \
      "cancelled (a stop, a conversation that ended), when the run gave it up, which may be "      \
      "before its `scheduled_ms`")                                                                 \
    X(prompt_tokens, RUNDIR_COUNT, "tokens", 1,                                                    \
      "the server's `usage.prompt_tokens` when it sent one, else servelab's own count of the "     \
      "prompt (the [token rule](simulator.md#token-counting-srccommontokensc))")                   \
    X(output_tokens, RUNDIR_COUNT, "tokens", 1,                                                    \
      "the server's last `usage.completion_tokens` when it sent usage, else the sum of the "       \
      "`tokens` of the request's chunks. Empty when there is neither (a request that failed "      \
      "before any output).")                                                                       \
    X(ttft_ms, RUNDIR_DURATION, "ms", 0, "`first_token_ms - sent_ms`")                             \
    X(tpot_ms, RUNDIR_DURATION, "ms", 0,                                                           \
      "`(last_token_ms - first_token_ms) / (output_tokens - 1)`; empty when `output_tokens < 2`")  \
    X(e2e_ms, RUNDIR_DURATION, "ms", 0, "`end_ms - sent_ms`")                                      \
    X(finish_reason, RUNDIR_TEXT, "", 0,                                                           \
      "the last `finish_reason` the server sent (`stop`, `length`, ...); empty when it sent none") \
    X(http_status, RUNDIR_COUNT, "", 0,                                                            \
      "the status of the response; empty when no response arrived")                                \
    X(error, RUNDIR_TEXT, "", 1, "empty on success, else one of the classes below")                \
    X(chunks, RUNDIR_COUNT, "count", 0,                                                            \
      "chunks that carried output (this request's rows in `chunks.csv`)")                          \
    X(lag_ms, RUNDIR_DURATION, "ms", 0,                                                            \
      "how late the client took the request off its schedule: the time it dispatched it minus "    \
      "`scheduled_ms`. Empty when the request was cancelled before it was due.")                   \
    X(connect_ms, RUNDIR_DURATION, "ms", 0,                                                        \
      "how long this request's TCP handshake took (the kernel's round trip from SYN to SYN-ACK, "  \
      "[accuracy.md](accuracy.md#where-each-requests-time-went)): 0 when it went on a connection " \
      "already open (pooled, or opened before t=0 by `--preconnect`), empty when unknown (the "    \
      "request never got a connection)")                                                           \
    X(written_ms, RUNDIR_TIME, "ms", 0,                                                            \
      "when the request's last byte was handed to the kernel (an offset from t=0, like the times " \
      "above; libcurl tells no later moment than when it began to send); empty when it never was") \
    X(first_byte_ms, RUNDIR_TIME, "ms", 0,                                                         \
      "when the answer's first byte arrived: the kernel's receive stamp (libcurl: when libcurl "   \
      "saw it); empty when no byte came")                                                          \
    X(coalesced, RUNDIR_COUNT, "count", 0,                                                         \
      "chunks of this answer whose read also held a later chunk of it, so that their time is an "  \
      "upper bound (they arrived no later, perhaps earlier); empty when no chunk carried output")  \
    X(first_coalesced, RUNDIR_FLAG, "0/1", 0,                                                      \
      "1 when the first token's chunk is one of them, so that TTFT is an upper bound too; empty "  \
      "when no chunk carried output")                                                              \
    X(server_prompt_ms, RUNDIR_DURATION, "ms", 0,                                                  \
      "the server's own account, where it gives one: llama.cpp's final-chunk `timings.prompt_ms` " \
      "(its time on the prompt). Empty when not sent, as are the five after it")                   \
    X(server_decode_ms, RUNDIR_DURATION, "ms", 0,                                                  \
      "`timings.predicted_ms`: the server's time generating the output")                           \
    X(server_prompt_n, RUNDIR_COUNT, "tokens", 0,                                                  \
      "`timings.prompt_n`: prompt tokens the server processed (not those taken from its cache)")   \
    X(server_decode_n, RUNDIR_COUNT, "tokens", 0,                                                  \
      "`timings.predicted_n`: output tokens the server generated")                                 \
    X(server_cache_n, RUNDIR_COUNT, "tokens", 0,                                                   \
      "`timings.cache_n`: prompt tokens the server reused from its cache")                         \
    X(cached_tokens, RUNDIR_COUNT, "tokens", 0,                                                    \
      "`usage.prompt_tokens_details.cached_tokens` (the OpenAI field; vLLM and others): prompt "   \
      "tokens served from the cache")                                                              \
    X(conversation_id, RUNDIR_COUNT, "", 0,                                                        \
      "multi-turn runs (`--turns`): the request's conversation, from 0; empty otherwise")          \
    X(turn, RUNDIR_COUNT, "", 0,                                                                   \
      "multi-turn runs: the request's turn in its conversation, from 1; empty otherwise")          \
    X(trace_line, RUNDIR_COUNT, "", 0,                                                             \
      "`--replay` runs: the line of the request's record in the trace file, from 1 (a CSV's "      \
      "header is line 1); empty otherwise ([replay.md](replay.md))")                               \
    X(first_answer_ms, RUNDIR_TIME, "ms", 0,                                                       \
      "when the first chunk that carried other than reasoning arrived: answer text, content or a " \
      "tool call ([answers.md](answers.md)). Equal to `first_token_ms` for a model that does not " \
      "reason; empty when no answer came (a reasoning model that spent `max_tokens` thinking)")    \
    X(reasoning_tokens, RUNDIR_COUNT, "tokens", 0,                                                 \
      "the server's `usage.completion_tokens_details.reasoning_tokens` where it sends one, else "  \
      "the tokens of the chunks before `first_answer_ms` that carried reasoning only "             \
      "(`delta.reasoning` or `delta.reasoning_content`); empty when no chunk carried output")      \
    X(reasoning_from, RUNDIR_TEXT, "", 0,                                                          \
      "`server` or `counted`: which of the two `reasoning_tokens` is")                             \
    X(tool_calls, RUNDIR_COUNT, "count", 0,                                                        \
      "`--tools` runs: the tool calls the answer made (distinct `tool_calls[].index`); empty "     \
      "otherwise")                                                                                 \
    X(first_tool_ms, RUNDIR_TIME, "ms", 0,                                                         \
      "when the first chunk with a tool call arrived; empty when none did")                        \
    X(answer_valid, RUNDIR_FLAG, "0/1", 0,                                                         \
      "`--tools` and `--response-format` runs: 1 when the answer was what was asked (every call "  \
      "names a declared tool and its arguments match its parameters; the JSON answer parses and "  \
      "matches the schema), 0 when not or when the request failed; empty otherwise")               \
    X(server_draft_n, RUNDIR_COUNT, "tokens", 0,                                                   \
      "llama.cpp's final-chunk `timings.draft_n`: the draft tokens speculative decoding proposed " \
      "for this request; empty when the server did not say (it says only when it drafted)")        \
    X(server_draft_accepted, RUNDIR_COUNT, "tokens", 0,                                            \
      "`timings.draft_n_accepted`: of them, those the model accepted")

#define RUNDIR_CHUNKS_COLUMNS(X)                                                                   \
    X(request_id, RUNDIR_TEXT, "", 1, "as in `requests.csv`")                                      \
    X(index, RUNDIR_COUNT, "", 1, "the chunk's place in its response, from 0")                     \
    X(t_ms, RUNDIR_TIME, "ms", 1,                                                                  \
      "when the chunk arrived (same clock and rules as `first_token_ms`)")                         \
    X(tokens, RUNDIR_COUNT, "tokens", 1,                                                           \
      "how many tokens the chunk carried: the length of llama.cpp's native `tokens` array, else "  \
      "the rise of the cumulative `usage.completion_tokens` since the previous chunk (vLLM with "  \
      "`continuous_usage_stats`), else 1")                                                         \
    X(coalesced, RUNDIR_FLAG, "0/1", 0,                                                            \
      "1 when the read that brought this chunk also held a later chunk of the answer, so that "    \
      "`t_ms` is an upper bound. Runs from before this column have four")

#define RUNDIR_ERRORS_COLUMNS(X)                                                                   \
    X(error, RUNDIR_TEXT, "", 1, "the class, as in `requests.csv`")                                \
    X(http_status, RUNDIR_TEXT, "", 1,                                                             \
      "as in `requests.csv` (empty: no response); `other` for the overflow row of a class, which " \
      "counts the pairs past the first 32")                                                        \
    X(count, RUNDIR_COUNT, "", 1, "requests that ended in this class with this status")            \
    X(first_request_id, RUNDIR_TEXT, "", 1,                                                        \
      "the first request that ended so and left words (the first one of all when none did)")       \
    X(body, RUNDIR_TEXT, "", 1,                                                                    \
      "what that request's server said, at most 4 KiB: the start of its error body "               \
      "(`{\"error\":{\"message\":\"The model ... does not exist.\"...}}`), the data of its error " \
      "event, or of the event that could not be read; when the server said nothing but the "       \
      "system did, the system's message (`Connection refused`, `Too many open files`); else "      \
      "empty. Quoted as RFC 4180 has it when it holds a comma, quote, CR or LF (quotes doubled); " \
      "a NUL byte is written as a space")

#define RUNDIR_COLUMN_ENUM(prefix, name, ...) prefix##name,
#define RUNDIR_RQ(name, ...) RUNDIR_COLUMN_ENUM(RQ_, name)
#define RUNDIR_CH(name, ...) RUNDIR_COLUMN_ENUM(CH_, name)
#define RUNDIR_ER(name, ...) RUNDIR_COLUMN_ENUM(ER_, name)
/* Each column's place in its file as written: RQ_sent_ms, CH_t_ms, ... */
enum { RUNDIR_REQUESTS_COLUMNS(RUNDIR_RQ) RQ_N };
enum { RUNDIR_CHUNKS_COLUMNS(RUNDIR_CH) CH_N };
enum { RUNDIR_ERRORS_COLUMNS(RUNDIR_ER) ER_N };

extern const rundir_table rundir_requests, rundir_chunks, rundir_errors;

/* The file's header line, "name,name,...\n", NUL-ended in buf: its length
 * (without the NUL), or 0 when cap is too small. */
size_t rundir_header(const rundir_table *t, char *buf, size_t cap);
/* The names of t's columns of one type into names (NULL-ended; cap counts
 * the NULL): how many. */
int rundir_names_of_type(const rundir_table *t, rundir_type type, const char **names, int cap);
/* Every column of t found in a file's header by its name, into col
 * (t->n of them; -1: not there): 0, or -1 with "PATH:1: missing column
 * NAME" in err when a contract column is not there. */
struct csv_row;
int rundir_columns_find(const rundir_table *t, const struct csv_row *header, int *col,
                        const char *path, char *err, int errlen);
/* The type's word for docs/files.md ("time", "count", ...). */
const char *rundir_type_name(rundir_type type);

#endif
