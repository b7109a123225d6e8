/* rowwriter: requests.csv and chunks.csv as the run goes. A request's row is
 * written with one write() the moment it finishes, so a run killed with
 * SIGKILL keeps every finished row whole. Chunk rows are buffered and only
 * whole lines are ever written. A failed write (disk full) is remembered
 * and reported; rows already written stay intact. */
#ifndef SERVELAB_ROWWRITER_H
#define SERVELAB_ROWWRITER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define REQUESTS_CSV_HEADER                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"
#define CHUNKS_CSV_HEADER "request_id,index,t_ms,tokens\n"

typedef struct request_row {
    uint32_t index;
    const char *cls;
    int64_t scheduled_us, dispatched_us, sent_us, first_us, last_us, end_us; /* -1 unset */
    int prompt_tokens, output_tokens;                                        /* -1 unknown */
    const char *finish_reason;
    int http_status; /* 0: no response */
    int error;       /* ERR_* from common/record.h */
    int chunks;
} request_row;

typedef struct row_writer {
    int req_fd, chunk_fd;
    int owns_fds;         /* clones share the owner's files, each with its own buffer */
    pthread_mutex_t lock; /* the owner's; clones use it through `shared` */
    pthread_mutex_t *shared;
    char *buf;
    size_t n, cap;
    int write_error; /* errno of the first failed write, 0 if none */
} row_writer;

int row_writer_open(row_writer *w, const char *dir, char *err, int errlen);
/* A writer on the same files (opened O_APPEND: one write() a row or a
 * buffer of whole lines, so threads never interleave inside a line). */
void row_writer_clone(const row_writer *owner, row_writer *w);
void row_writer_request(row_writer *w, const request_row *r);
/* One request's chunk rows; tokens NULL: one token each. */
void row_writer_chunks(row_writer *w, uint32_t index, const int64_t *t_us, const int32_t *tokens,
                       int n);
/* Flush buffered chunk rows and close; returns 0 or the first write errno. */
int row_writer_close(row_writer *w);
/* The request id for index i ("req-i"), into buf. */
int request_id_format(char *buf, size_t cap, uint32_t index);

#endif
