/* `servelab sim --close-after-stream`: the llama.cpp-like mode where every
 * streamed answer ends its connection. Checked on the wire with a raw
 * keep-alive client (the head says Connection: close, EOF follows the last
 * chunk; whole answers keep the connection) and end to end: a `servelab
 * run` against it gets every request through with the same token counts as
 * against a simulator that keeps connections. */
#include "csv_util.h"
#include "raw_conn.h"
#include "support.h"
#include "test.h"

#include <string.h>
#include <unistd.h>

/* What one request on an open keep-alive connection got back within
 * limit_ms: the bytes, and whether the server closed after them. */
typedef struct exchange {
    char resp[65536];
    int closed;
} exchange;

static void ask(int fd, const char *body, int limit_ms, exchange *x) {
    char req[1024];
    snprintf(req, sizeof req,
             "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    CHECK(send_within(fd, req, strlen(req), 1000) == strlen(req));
    read_until_close(fd, x->resp, sizeof x->resp, limit_ms, &x->closed);
}

static const char *const streamed =
    "{\"prompt\":\"hi\",\"max_tokens\":4,\"ignore_eos\":true,\"stream\":true}";
static const char *const whole = "{\"prompt\":\"hi\",\"max_tokens\":4,\"ignore_eos\":true}";

/* The head of a response: up to its blank line, NUL-ended in place. */
static const char *head_of(char *resp) {
    char *end = strstr(resp, "\r\n\r\n");
    CHECK_MSG(end != NULL, "no head in: %.200s", resp);
    end[2] = 0;
    return resp;
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

TEST(sim_close_after_stream_closes_after_streamed_answer) {
    sim_proc p = sim_start("--close-after-stream");
    int fd = tcp_open(p.port, 1000);
    CHECK(fd >= 0);
    static exchange x;
    /* a whole answer keeps the connection: nothing closes within the wait */
    ask(fd, whole, 400, &x);
    CHECK_MSG(!x.closed, "closed after a whole answer: %.300s", x.resp);
    CHECK(strstr(x.resp, "text_completion") != NULL);
    CHECK(strstr(head_of(x.resp), "Connection: close") == NULL);
    /* the streamed one on the same connection ends it */
    ask(fd, streamed, 5000, &x);
    CHECK_MSG(x.closed, "still open after the stream: %.300s", x.resp);
    CHECK_MSG(ends_with(x.resp, "data: [DONE]\n\n\r\n0\r\n\r\n"), "tail: %s", x.resp);
    CHECK_MSG(strstr(head_of(x.resp), "\r\nConnection: close\r\n") != NULL, "head: %s", x.resp);
    close(fd);
    sim_stop(&p);
}

TEST(sim_keeps_connection_after_stream_by_default) {
    sim_proc p = sim_start(NULL);
    int fd = tcp_open(p.port, 1000);
    CHECK(fd >= 0);
    static exchange x;
    for (int i = 0; i < 2; i++) { /* both on the one connection */
        ask(fd, streamed, 400, &x);
        CHECK_MSG(!x.closed, "closed after stream %d: %.300s", i, x.resp);
        CHECK(ends_with(x.resp, "data: [DONE]\n\n\r\n0\r\n\r\n"));
        CHECK(strstr(head_of(x.resp), "Connection: close") == NULL);
    }
    close(fd);
    sim_stop(&p);
}

/* `servelab run` against a simulator started with sim_args; its rows. */
static csv_table *run_against(const char *sim_args, const char *dir, const char *name) {
    sim_proc p = sim_start(sim_args);
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --rate 50 --requests 60 "
             "--prompts random:64:32 --out %s/%s",
             p.port, dir, name);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "run exit %d: %s", code, out);
    free(out);
    sim_stop(&p);
    snprintf(cmd, sizeof cmd, "%s/%s/requests.csv", dir, name);
    csv_table *t = csv_read(cmd);
    CHECK_MSG(t != NULL, "no %s", cmd);
    return t;
}

static int row_of(const csv_table *t, const char *id) {
    for (int i = 0; i < t->n_rows; i++)
        if (!strcmp(csv_get(t, i, "request_id"), id))
            return i;
    return -1;
}

TEST(run_against_close_after_stream_gets_same_tokens) {
    char *dir = temp_dir();
    csv_table *kept = run_against(NULL, dir, "kept");
    csv_table *closed = run_against("--close-after-stream", dir, "closed");
    CHECK_INT(kept->n_rows, 60);
    CHECK_INT(closed->n_rows, 60);
    for (int i = 0; i < closed->n_rows; i++) {
        const char *id = csv_get(closed, i, "request_id");
        CHECK_MSG(!strcmp(csv_get(closed, i, "error"), ""), "%s: %s", id,
                  csv_get(closed, i, "error"));
        CHECK_STR(csv_get(closed, i, "http_status"), "200");
        int k = row_of(kept, id);
        CHECK_MSG(k >= 0, "%s only in the closing run", id);
        CHECK_STR(csv_get(closed, i, "prompt_tokens"), csv_get(kept, k, "prompt_tokens"));
        CHECK_STR(csv_get(closed, i, "output_tokens"), csv_get(kept, k, "output_tokens"));
        CHECK_STR(csv_get(closed, i, "finish_reason"), csv_get(kept, k, "finish_reason"));
    }
    csv_free(kept);
    csv_free(closed);
    free(dir);
}
