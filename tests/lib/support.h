/* support: helpers for tests that run the real binary: start `servelab sim`
 * on a free port, make blocking HTTP requests, and split SSE streams. */
#ifndef SERVELAB_TEST_SUPPORT_H
#define SERVELAB_TEST_SUPPORT_H

#include "common/proc.h"

#include <stddef.h>
#include <sys/types.h>

typedef struct sim_proc {
    pid_t pid;
    int port;
} sim_proc;

/* Path of the servelab binary under test ($SERVELAB or ./servelab). */
const char *servelab_bin(void);
/* Whether that binary is built with AddressSanitizer (`make asan`): its
 * code runs a few times slower and holds more memory, which bounds on
 * time and memory must allow for. */
int servelab_is_sanitized(void);
/* Start `servelab sim --port 0 ARGS`; fails the test if it does not come up. */
sim_proc sim_start(const char *args);
/* SIGTERM and wait (the trace is flushed on the way out). */
void sim_stop(sim_proc *p);
/* Another client: `servelab run` of n requests of 60 output tokens sent at
 * once to the simulator, in the background (its output dropped, its run
 * in a folder of its own); returns its pid once the simulator's /metrics
 * show a request running (or after 3 s). */
pid_t sim_backlog(const sim_proc *sim, int n);

typedef struct http_result {
    int status;
    char *headers; /* raw header block */
    char *body;    /* de-chunked, NUL-terminated */
    size_t body_len;
} http_result;

/* One request on a fresh connection (Connection: close). `extra_headers`
 * is "" or CRLF-terminated lines. Returns -1 on a connection error. */
int http_request_raw(int port, const char *method, const char *path, const char *extra_headers,
                     const char *body, http_result *out);
/* Send raw bytes, read until close or timeout; returns bytes read. */
size_t http_send_bytes(int port, const char *data, size_t n, char *resp, size_t cap,
                       int timeout_ms);
void http_result_free(http_result *r);
/* The value of the simulator's metric NAME (its first labelled sample) from
 * GET /metrics; fails the test when it is missing. */
double sim_metric(int port, const char *name);

/* Collect the `data:` payloads of an SSE body; returns their count. */
int sse_events(const char *body, char ***out);
void sse_free(char **ev, int n);

/* `sh -c CMD` in the background through servelab's own spawn (common/proc),
 * stdout and stderr to out_fd and err_fd (PROC_INHERIT: the test's, or an
 * fd); fails the test when it cannot start. Start CMD with `exec` for the
 * pid to be the command's own. */
pid_t spawn_sh(const char *cmd, int out_fd, int err_fd);
/* Run a shell command, capture stdout into a malloc'd string. */
char *run_capture(const char *cmd, int *exit_code);
/* Run `servelab SUBCOMMAND_AND_ARGS` with stderr joined to stdout; returns
 * the exit code and, when out is not NULL, the output (malloc'd). */
int servelab_cmd(const char *subcommand_and_args, char **out);
/* servelab_cmd that must exit 0; fails the test with its output else. */
void servelab_ok(const char *subcommand_and_args);
/* How many files in dir have names starting with prefix; their names, one
 * a line, into names. Fails the test when dir cannot be read. */
int files_with_prefix(const char *dir, const char *prefix, char *names, size_t cap);
/* How many times needle occurs in hay, not overlapping. */
int count_of(const char *hay, const char *needle);
/* Read a whole file; NULL if missing. */
char *read_file(const char *path, size_t *len);
/* A fresh temporary directory, inside $SERVELAB_TEST_DIR (the test's own
 * folder, which the runner removes when the test passes) when it is set. */
char *temp_dir(void);
/* Sleep ms milliseconds, whatever signals arrive meanwhile. */
void sleep_ms(int ms);

#endif
