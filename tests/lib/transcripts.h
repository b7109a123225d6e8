/* transcripts: the llama.cpp exchanges in tests/data/transcripts, each
 * rebuilt as the server sent it: the recorded head, and the body chunked
 * again in pieces of up to 100 bytes when the head says chunked, else with
 * its Content-Length set to the body's length (the recorded one may differ:
 * the model's path was shortened). The HTTP client's tests replay them over
 * loopback, the parser's parse them in process. */
#ifndef SERVELAB_TEST_TRANSCRIPTS_H
#define SERVELAB_TEST_TRANSCRIPTS_H

#include <stddef.h>

typedef struct transcript {
    const char *stem; /* e.g. 13_v1_chat_completions_stream_usage */
    int status;       /* the recorded status */
    const char *body; /* the body as recorded (de-chunked) */
    size_t body_len;
    const char *answer; /* the whole answer rebuilt, NUL-terminated */
    size_t answer_len;
    int chunked;
} transcript;

/* Calls fn for each exchange; returns how many there were. */
int transcripts_each(void (*fn)(const transcript *t, void *arg), void *arg);

#endif
