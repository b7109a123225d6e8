/* rowwriter: requests.csv and chunks.csv as the run goes. A finished
 * request's rows are written the moment it finishes: its chunk rows with one
 * write(), then its request row with another, so a run killed with SIGKILL
 * keeps every finished row whole and every request row it keeps has all of
 * its chunk rows. Only whole lines are ever written. A failed write (disk
 * full) is remembered and reported; rows already written stay intact. */
#ifndef SERVELAB_ROWWRITER_H
#define SERVELAB_ROWWRITER_H

#include "model/record.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The columns are rundir/columns.h's tables: the header is written from
 * them, and format_request (rowwriter.c) writes the fields in their order
 * (test_rundir reads a row back by the table's names). */
typedef struct request_row {
    uint32_t index;
    const char *cls;
    int64_t scheduled_us, dispatched_us, sent_us, first_us, last_us, end_us; /* -1 unset */
    int prompt_tokens, output_tokens;                                        /* -1 unknown */
    const char *finish_reason;
    int http_status; /* 0: no response */
    int error;       /* ERR_* from model/record.h */
    int chunks;
    /* where the time to the first byte went (µs; -1 unknown): the handshake's
     * length (0 on a pooled connection), and when the request's last byte
     * left and the answer's first byte came (offsets from t=0) */
    int64_t connect_us, written_us, first_byte_us;
    int coalesced;       /* chunks whose read also held a later chunk of this answer */
    int first_coalesced; /* the first token's chunk is one of them */
    /* the server's own account, when it gives one (llama.cpp's `timings`;
     * usage.prompt_tokens_details.cached_tokens): -1 when not given */
    double server_prompt_ms, server_decode_ms;
    long server_prompt_n, server_decode_n, server_cache_n, cached_tokens;
    long conversation, turn; /* multi-turn: its conversation (from 0) and turn (from 1); -1 */
    long trace_line;         /* --replay: its record's line in the trace, from 1; 0 or -1: none */
    /* a reasoning model's answer: its first chunk of other than reasoning
     * (content or a tool call; -1: none came), and its reasoning tokens,
     * as the server's usage.completion_tokens_details says (reasoning_server,
     * -1: it did not) or else as counted from the reasoning-only chunks */
    int64_t first_answer_us;
    long reasoning_counted, reasoning_server;
    /* --tools, --response-format: the tool calls the answer made, when
     * its first came (-1: none), and whether the answer was what was asked
     * (answer.h: 1, 0; -1 when nothing was asked or it was never sent) */
    int64_t first_tool_us;
    int tool_calls, answer_valid;
    /* llama.cpp's timings.draft_n and draft_n_accepted: the request's
     * speculative draft tokens and those accepted (-1: not given) */
    long server_draft_n, server_draft_accepted;
} request_row;

typedef struct row_writer {
    int req_fd, chunk_fd;
    int owns_fds;         /* clones share the owner's files, each with its own buffer */
    pthread_mutex_t lock; /* the owner's; clones use it through `shared` */
    pthread_mutex_t *shared;
    char *buf; /* the finished request's chunk rows, not yet written */
    size_t n, cap;
    char *row; /* its request row, written after them */
    size_t row_n, row_cap;
    int write_error; /* errno of the first failed write, 0 if none */
} row_writer;

int row_writer_open(row_writer *w, const char *dir, char *err, int errlen);
/* The same, with chunks.csv only when `chunks` (without it, chunk rows
 * given to row_writer_chunks are dropped and no chunks.csv is made). */
int row_writer_open_rows(row_writer *w, const char *dir, int chunks, char *err, int errlen);
/* A writer on the same files (opened O_APPEND: one write() a row or a
 * buffer of whole lines, so threads never interleave inside a line). */
void row_writer_clone(const row_writer *owner, row_writer *w);
/* A finished request: its row, then (right after, even with n = 0) its chunk
 * rows; tokens NULL: one token each; coalesced (1: the chunk's read also held
 * a later chunk, so its time is that later one's) NULL: none. The request row is held until its
 * chunk rows come, and the chunks call writes both, chunk rows first. (A
 * row whose chunks call never comes is written alone by the next call.) */
void row_writer_request(row_writer *w, const request_row *r);
void row_writer_chunks(row_writer *w, uint32_t index, const int64_t *t_us, const int32_t *tokens,
                       const uint8_t *coalesced, int n);
/* Write what is held and close; returns 0 or the first write errno. */
int row_writer_close(row_writer *w);
struct workload;
/* Request `index` of the schedule, due at due_us, as a row with every field
 * unknown (times and counts -1) but its class, turn and trace line. */
void request_row_init(request_row *r, const struct workload *w, uint32_t index, int64_t due_us);
/* The compact record of a finished request's row (model/record.h), as
 * the summary reads it: its times in ms, unknowns as NAN and -1, and the
 * server's figures only where requests.csv writes them. */
req_rec request_row_record(const request_row *r);
/* Its reasoning tokens as requests.csv writes them: the server's count,
 * else the counted one; -1 when no output came. */
long request_row_reasoning(const request_row *r);
/* The request id for index i ("req-i"), into buf. */
int request_id_format(char *buf, size_t cap, uint32_t index);

#endif
