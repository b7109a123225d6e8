/* hostile_server: a scripted, misbehaving HTTP/1.1 server for the client's
 * hostile-peer tests. It listens on 127.0.0.1 (a free port), answers the
 * client's probe (`GET /v1/models`, `/version`) like a normal
 * OpenAI-compatible server, and answers every completion request in the way
 * its script says: a well-behaved stream, or one of the ways a broken or
 * malicious server can fail (endless lines, silence, trickling bytes,
 * truncated chunks, HTML errors, error events).
 *
 * The server runs in a forked child and forks again per connection, so each
 * connection is plain blocking code that can sleep and write at its own pace.
 * Every process has an alarm and dies with its parent: nothing outlives the
 * test. Counters live in shared memory so the test can see what the server
 * saw. */
#ifndef SERVELAB_TEST_HOSTILE_SERVER_H
#define SERVELAB_TEST_HOSTILE_SERVER_H

#include <stddef.h>
#include <sys/types.h>

typedef enum hostile_mode {
    HOSTILE_GOOD,         /* 200, chunked SSE: 4 tokens 20 ms apart, usage, [DONE] */
    HOSTILE_HUGE_LINE,    /* 200 SSE, then "data: " and huge_bytes with no line end */
    HOSTILE_HUGE_EVENT,   /* 200 SSE, one event of huge_bytes in 1 KiB data lines, no blank
                             line */
    HOSTILE_SILENT,       /* reads the request, never answers */
    HOSTILE_HEADERS_ONLY, /* 200 with 200 header lines and the blank line, then nothing */
    HOSTILE_HEADERS_OPEN, /* status line and 200 header lines, no blank line, then nothing */
    HOSTILE_TRICKLE,      /* the GOOD stream (close-delimited), one byte every trickle_ms */
    HOSTILE_PARTIAL_FIN,  /* chunked: one whole token chunk, half a chunk, then FIN */
    HOSTILE_PARTIAL_RST,  /* the same, then RST */
    HOSTILE_HTML_500,     /* 500 with an HTML body */
    HOSTILE_JSON_WHOLE,   /* 200 application/json: a whole non-streamed completion */
    HOSTILE_ERROR_EVENT,  /* 2 tokens, `event: error` with an error object, more tokens */
    HOSTILE_ERROR_DATA,   /* 2 tokens, `data: {"error":...}` (vLLM's mid-stream error) */
    HOSTILE_TWO_ANSWERS,  /* the GOOD stream, then after extra_ms a second whole answer nobody
                             asked for (2 tokens, finish_reason "stop"), keeping the connection */
    HOSTILE_MANY_EVENTS,  /* 200 SSE (close-delimited): many_events one-token events of 37
                             bytes as fast as the socket takes them, then [DONE] */
    HOSTILE_GZIP_SSE,     /* the GOOD stream gzip-encoded (Content-Encoding: gzip, stored
                             blocks: the events lie in it as they are), which no one asked for */
    HOSTILE_NOT_FOUND,    /* 404 application/json, an OpenAI-style error object over several
                             lines ("The model `gpt-4` does not exist.") */
    HOSTILE_TWO_IN_ONE,   /* the GOOD stream, but its first two tokens sent in one write, 20 ms
                             after the head (they reach the client in one read) */
    HOSTILE_TIMINGS,      /* the GOOD tokens, then llama.cpp's final chunk: finish_reason,
                             `timings` (cache_n 6, prompt_n 1, prompt_ms 9.37, predicted_n 4,
                             predicted_ms 126.96) and no usage, then [DONE] */
    HOSTILE_CACHED,       /* the GOOD stream with usage.prompt_tokens_details.cached_tokens 5 */
    HOSTILE_EVENTS,       /* 200 chunked SSE: each of the script's events as `data: E`, 5 ms
                             apart, then [DONE] */
    HOSTILE_N_MODES
} hostile_mode;

typedef struct hostile_script {
    hostile_mode modes[8]; /* request req-N is answered by modes[N % n_modes] */
    int n_modes;
    size_t huge_bytes;         /* HUGE_LINE, HUGE_EVENT */
    int trickle_ms;            /* TRICKLE */
    int extra_ms;              /* TWO_ANSWERS: the pause between the answer and the unasked one */
    long many_events;          /* MANY_EVENTS */
    int models_status;         /* GET /v1/models: 0 the list (model "m"), -1 never answered, else
                                  that status with a JSON error */
    int picky_tokenizer;       /* POST /tokenize: 1 token a word of 1-2 letters, 2 a longer one */
    const char *const *events; /* EVENTS: each event's data (JSON), NULL-terminated */
} hostile_script;

/* What the server saw, shared with the test. */
typedef struct hostile_stats {
    int connections;
    int completions;                       /* completion requests read whole */
    int by_mode[HOSTILE_N_MODES];          /* completion requests answered per mode */
    long long bytes_sent[HOSTILE_N_MODES]; /* response bytes the kernel took, per mode */
} hostile_stats;

typedef struct hostile_server {
    pid_t pid;
    int port;
    hostile_stats *stats; /* read with hostile_stat() */
} hostile_server;

/* Start the server; fails the test when it cannot. */
hostile_server hostile_start(const hostile_script *s);
/* Kill the server and every connection handler. */
void hostile_stop(hostile_server *h);
/* Atomic reads of the shared counters. */
int hostile_count(const int *counter);
long long hostile_bytes(const long long *counter);

/* What NOT_FOUND answers. */
#define HOSTILE_NOT_FOUND_BODY                                                                     \
    "{\n  \"error\": {\n    \"message\": \"The model `gpt-4` does not exist.\",\n"                 \
    "    \"type\": \"invalid_request_error\",\n    \"param\": \"model\",\n"                        \
    "    \"code\": \"model_not_found\"\n  }\n}\n"

/* The data payloads of the GOOD stream's token chunks say this many tokens. */
#define HOSTILE_GOOD_TOKENS 4

#endif
