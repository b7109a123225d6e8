/* chunk_counts: token counts a server sends that cannot be true. A usage
 * completion_tokens or prompt_tokens that is not a whole number in
 * [0, 2^31 - 1] (what a row's count holds) makes the chunk malformed, in the
 * fast reader and the reference alike, instead of being cut to fit (2^31
 * left the requests.csv column blank, 2^32 + 1 recorded 1) or ignored; and
 * `servelab run` ends such a request as `malformed`, with either HTTP
 * client. A tiny scripted server here sends the counts. */
#include "chunk_both.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const bad_counts[] = {"2147483648",  "4294967297", "9007199254740993",
                                         "1e10",        "-1",         "2.5",
                                         "-0.5",        "\"16\"",     "true",
                                         "{}",          "[1]",        "100000000000000000000",
                                         "2147483647.5"};
static const char *const good_counts[] = {"0", "2147483647", "16.0", "1e3", "-0", "null"};

TEST(chunk_usage_counts_that_cannot_be_true_are_malformed) {
    char buf[256];
    chunk_info c;
    for (size_t i = 0; i < sizeof bad_counts / sizeof *bad_counts; i++) {
        snprintf(buf, sizeof buf, "{\"choices\":[],\"usage\":{\"completion_tokens\":%s}}",
                 bad_counts[i]);
        parse_str(buf, &c);
        CHECK_MSG(c.malformed && !c.has_usage, "completion_tokens %s", bad_counts[i]);
        snprintf(buf, sizeof buf,
                 "{\"choices\":[],\"usage\":{\"prompt_tokens\":%s,\"completion_tokens\":3}}",
                 bad_counts[i]);
        parse_str(buf, &c);
        CHECK_MSG(c.malformed && !c.has_usage, "prompt_tokens %s", bad_counts[i]);
        /* on a chunk that carries output too: the whole chunk is malformed */
        snprintf(buf, sizeof buf,
                 "{\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":%s}}",
                 bad_counts[i]);
        parse_str(buf, &c);
        CHECK_MSG(c.malformed && !c.has_output, "with output, completion_tokens %s", bad_counts[i]);
    }
    for (size_t i = 0; i < sizeof good_counts / sizeof *good_counts; i++) {
        snprintf(buf, sizeof buf,
                 "{\"choices\":[],\"usage\":{\"prompt_tokens\":%s,\"completion_tokens\":%s}}",
                 good_counts[i], good_counts[i]);
        parse_str(buf, &c);
        CHECK_MSG(!c.malformed, "count %s", good_counts[i]);
        CHECK(c.has_usage == (strcmp(good_counts[i], "null") != 0));
    }
    parse_str("{\"usage\":{\"completion_tokens\":2147483647,\"prompt_tokens\":1e3}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 2147483647 && c.prompt_tokens == 1000);
    /* the last of a repeated key counts, as before */
    parse_str("{\"usage\":{\"completion_tokens\":-1,\"completion_tokens\":4}}", &c);
    CHECK(!c.malformed && c.has_usage && c.completion_tokens == 4);
    parse_str("{\"usage\":{\"completion_tokens\":4,\"completion_tokens\":-1}}", &c);
    CHECK(c.malformed);
    /* an error body is an error, whatever its usage says */
    parse_str("{\"error\":{\"message\":\"x\"},\"usage\":{\"completion_tokens\":-1}}", &c);
    CHECK(c.error && !c.malformed);
}

/* ---- a server that sends the counts ---- */

/* Request req-N gets completion and prompt counts usage_of[N % 6]. */
static const char *const usage_of[][2] = {{"2", "8"},          {"2147483648", "8"},
                                          {"4294967297", "8"}, {"2", "2147483648"},
                                          {"2.5", "8"},        {"-1", "8"}};

static int read_request(int fd, char *head, size_t cap) {
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (n + 1 >= cap || poll(&pfd, 1, 5000) <= 0)
            return -1;
        ssize_t r = read(fd, head + n, cap - 1 - n);
        if (r <= 0)
            return -1;
        n += (size_t)r;
        head[n] = 0;
        end = strstr(head, "\r\n\r\n");
    }
    const char *cl = strcasestr(head, "\r\nContent-Length:");
    long left = cl ? atol(cl + 17) - (long)(n - (size_t)(end + 4 - head)) : 0;
    char sink[4096];
    while (left > 0) {
        ssize_t r = read(fd, sink, sizeof sink);
        if (r <= 0)
            return -1;
        left -= r;
    }
    return 0;
}

static void send_text(int fd, const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void answer(int fd) {
    static char head[65536];
    if (read_request(fd, head, sizeof head))
        return;
    if (!strncmp(head, "GET /v1/models", 14)) {
        static const char body[] =
            "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\"}]}";
        char resp[512];
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n%s",
                 sizeof body - 1, body);
        send_text(fd, resp);
        return;
    }
    if (strncmp(head, "POST ", 5)) {
        send_text(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    const char *idh = strcasestr(head, "\r\nX-Request-Id: req-");
    long id = idh ? atol(idh + 20) : 0;
    const char *const *u = usage_of[id % 6];
    char ev[1024];
    send_text(fd,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    for (int i = 0; i < 2; i++) {
        snprintf(ev, sizeof ev,
                 "data: {\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                 "\"text\":\" t%d\",\"finish_reason\":%s}]}\n\n",
                 i, i ? "\"length\"" : "null");
        send_text(fd, ev);
    }
    snprintf(ev, sizeof ev,
             "data: {\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[],"
             "\"usage\":{\"prompt_tokens\":%s,\"completion_tokens\":%s}}\n\ndata: [DONE]\n\n",
             u[1], u[0]);
    send_text(fd, ev);
}

/* Serves one connection at a time until killed (or its parent dies). */
static pid_t counts_server(int *port) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lfd >= 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(lfd, 128) == 0);
    socklen_t sl = sizeof sa;
    CHECK(getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    *port = ntohs(sa.sin_port);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(60);
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
            int fd = accept(lfd, NULL, NULL);
            if (fd < 0)
                continue;
            answer(fd);
            shutdown(fd, SHUT_WR);
            close(fd);
        }
    }
    close(lfd);
    return pid;
}

static void run_against_counts(const char *client) {
    int port;
    pid_t srv = counts_server(&port);
    char *dir = temp_dir();
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --model m --no-sampling --prompts random:8:2 "
             "--rate 50 --requests 12 --timeout 5 --http-client %s --out %s/run",
             port, client, dir);
    char *out = NULL;
    int code = servelab_cmd(cmd, &out);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    CHECK_MSG(code == 0, "run: exit %d: %s", code, out);
    char path[1200];
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK_MSG(t != NULL, "no %s", path);
    CHECK_INT(t->n_rows, 12);
    for (int i = 0; i < t->n_rows; i++) {
        const char *id = csv_get(t, i, "request_id");
        int k = atoi(id + 4) % 6;
        const char *want = k == 0 ? "" : "malformed";
        CHECK_MSG(!strcmp(csv_get(t, i, "error"), want),
                  "%s (%s client; completion %s, prompt %s): error '%s', output_tokens '%s', "
                  "prompt_tokens '%s'",
                  id, client, usage_of[k][0], usage_of[k][1], csv_get(t, i, "error"),
                  csv_get(t, i, "output_tokens"), csv_get(t, i, "prompt_tokens"));
        if (k == 0)
            CHECK_STR(csv_get(t, i, "output_tokens"), "2");
    }
    csv_free(t);
    free(out);
    free(dir);
}

TEST(run_usage_counts_that_cannot_be_true_end_as_malformed) {
    run_against_counts("builtin");
    run_against_counts("libcurl");
}
