/* fuzz_h1: libFuzzer target for the client's own HTTP/1.1 client
 * (client/h1.c): the input is what a server answers, over a real loopback
 * socket.
 *
 * A listening socket on 127.0.0.1 is made once. Per input a fresh h1 client
 * posts one request with a 15 ms timeout; the harness accepts the
 * connection, reads the request, writes the input as the answer and closes
 * (or keeps the connection open, so the timeout path runs). Checks beyond
 * "no crash": `done` comes exactly once, never from inside h1_start; no
 * more body bytes are delivered than the input holds; after the client is
 * freed the process holds exactly the descriptors it held before.
 *
 * Input: one mode byte, then the answer.
 *   mode & 1   write the answer in two parts with a 1 ms pause between, at a
 *              point derived from the input (framing split across reads)
 *   mode & 2   keep the connection open after the answer (incomplete
 *              answers end by the timeout; complete ones go to the pool)
 *   mode & 4   abort from the body callback on its second call */
#include "client/h1.h"
#include "fuzz_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static struct event_base *base;
static int listen_fd;
static char url[64];

typedef struct state {
    int dones, heads, body_calls, in_start, abort_second;
    size_t body_bytes;
    h1_result result;
} state;

static void on_head(void *ud, int status, const char *ct, const char *ce) {
    state *s = ud;
    FUZZ_CHECK(s->dones == 0);
    FUZZ_CHECK(status >= 100 && status <= 999);
    (void)ct;
    (void)ce;
    s->heads++;
}

static size_t on_body(void *ud, const char *p, size_t n, int64_t arrived) {
    state *s = ud;
    FUZZ_CHECK(s->dones == 0 && n > 0 && p != NULL && arrived > 0);
    s->body_calls++;
    s->body_bytes += n;
    if (s->abort_second && s->body_calls == 2)
        return 0;
    return n;
}

static void on_done(void *ud, h1_result r, int os_errno) {
    state *s = ud;
    (void)os_errno;
    FUZZ_CHECK(!s->in_start);
    s->dones++;
    s->result = r;
    event_base_loopbreak(base);
}

static const h1_handlers handlers = {on_head, on_body, on_done, NULL};

static void pause_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    base = event_base_new();
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    FUZZ_CHECK(base && listen_fd >= 0);
    FUZZ_CHECK(bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    FUZZ_CHECK(listen(listen_fd, 16) == 0);
    socklen_t sl = sizeof sa;
    FUZZ_CHECK(getsockname(listen_fd, (struct sockaddr *)&sa, &sl) == 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", ntohs(sa.sin_port));
    return 0;
}

/* Reads the request head and its 2-byte body (blocking, bounded). */
static void drain_request(int fd) {
    char buf[4096];
    size_t n = 0;
    struct timeval tv = {0, 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (n < sizeof buf - 1) {
        ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
        if (r <= 0)
            return;
        n += (size_t)r;
        buf[n] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        if (end && (size_t)(end + 4 - buf) + 2 <= n)
            return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 16)
        return 0;
    int mode = data[0];
    const uint8_t *answer = data + 1;
    size_t len = size - 1;
    int fds_before = fuzz_count_fds();

    h1_client *c = h1_client_new(base, url, NULL, &handlers);
    state s = {0};
    s.abort_second = mode & 4;
    s.in_start = 1;
    h1_start(c, "X-Request-Id: req-1", "{}", 2, 0.015, &s);
    s.in_start = 0;

    /* the client connects at once (non-blocking); the kernel completes it */
    int fd = accept(listen_fd, NULL, NULL);
    FUZZ_CHECK(fd >= 0);
    /* let the client send its request */
    for (int i = 0; i < 20 && !s.dones; i++) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        pause_ms(0);
    }
    drain_request(fd);
    size_t cut = mode & 1 && len > 1 ? 1 + (size_t)answer[len / 2] % (len - 1) : len;
    if (send(fd, answer, cut, MSG_NOSIGNAL) >= 0 && cut < len) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        pause_ms(1);
        (void)!send(fd, answer + cut, len - cut, MSG_NOSIGNAL);
    }
    if (!(mode & 2)) {
        close(fd);
        fd = -1;
    }
    while (!s.dones)
        event_base_loop(base, EVLOOP_ONCE); /* the 15 ms timeout bounds this */
    FUZZ_CHECK(s.dones == 1);
    FUZZ_CHECK(s.heads <= 1);
    FUZZ_CHECK(s.body_bytes <= len);
    if (s.result == H1_OK)
        FUZZ_CHECK(s.heads == 1);
    if (fd >= 0)
        close(fd);
    h1_client_free(c);
    event_base_loop(base, EVLOOP_NONBLOCK);
    FUZZ_CHECK(fuzz_count_fds() == fds_before);
    FUZZ_CHECK(s.dones == 1);
    return 0;
}
