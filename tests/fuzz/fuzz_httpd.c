/* fuzz_httpd: libFuzzer target for the simulator's request handling: the
 * HTTP/1.1 server (sim/httpd.c) and the OpenAI endpoints behind it
 * (sim/api.c and the files it assembles), over a real loopback socket.
 *
 * The simulated server runs in this process on its own libevent base,
 * bound to 127.0.0.1 on a free port, started once with the tiny profile,
 * short timeouts (request 4 ms, idle 8 ms) so the timer paths run too, and
 * every fault enabled (10 ms stalls) so their paths run as well; a request
 * that sets X-Request-Id draws the same fault every time. Per input, a
 * non-blocking client socket on the same base connects, writes the request
 * and reads whatever comes back until the server closes; then the harness
 * checks that the process holds exactly the descriptors it held before,
 * i.e. the server closed its side of the connection.
 *
 * Input: one mode byte, then the rest.
 *   mode & 3   0: the rest is raw bytes for the socket
 *              1: raw bytes, written in two parts with a pause between, at
 *                 a point derived from the input (requests arriving in parts)
 *              2: the rest is a JSON body POSTed to /v1/completions
 *              3: the same to /v1/chat/completions
 *   mode & 4   wait: keep the write side open until the server has said
 *              nothing for 10 ms (so responses stream and timeouts fire);
 *              otherwise shut it down right after the last byte (so the
 *              server sees the client leave mid-request or mid-response)
 * Every input ends within about 60 ms, however long the answer would be. */
#include "fuzz_common.h"
#include "sim/api.h"
#include "sim/profiles.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define QUIET_MS 10
#define PAUSE_MS 1
#define DEADLINE_MS 60

static struct event_base *base;
static sim_server *srv;

typedef struct client {
    int fd;
    const uint8_t *buf;
    size_t len, sent, pause_at;
    int wait, shut, done, eof, paused;
    struct event *rev, *wev, *quiet, *resume, *deadline;
} client;

static void tv_ms(struct timeval *tv, int ms) {
    tv->tv_sec = ms / 1000;
    tv->tv_usec = (ms % 1000) * 1000;
}

static void finish(client *c) {
    c->done = 1;
    event_base_loopbreak(base);
}

static void shut_write(client *c) {
    if (!c->shut) {
        shutdown(c->fd, SHUT_WR);
        c->shut = 1;
    }
    event_del(c->wev);
}

static void on_quiet(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    shut_write(arg);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    finish(arg);
}

static void on_resume(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    client *c = arg;
    c->paused = 0;
    event_add(c->wev, NULL);
}

/* All bytes are out (or the server stopped taking them). */
static void written(client *c) {
    event_del(c->wev);
    if (!c->wait) {
        shut_write(c);
    } else {
        struct timeval tv;
        tv_ms(&tv, QUIET_MS);
        event_add(c->quiet, &tv);
    }
}

static void on_write(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    client *c = arg;
    size_t limit = c->pause_at > c->sent ? c->pause_at : c->len;
    while (c->sent < limit) {
        ssize_t n = send(fd, c->buf + c->sent, limit - c->sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return;
            c->sent = c->len; /* the server closed on us: keep reading */
            written(c);
            return;
        }
        c->sent += (size_t)n;
    }
    if (c->sent == c->pause_at && c->sent < c->len) {
        event_del(c->wev);
        c->paused = 1;
        struct timeval tv;
        tv_ms(&tv, PAUSE_MS);
        event_add(c->resume, &tv);
        return;
    }
    if (c->sent == c->len)
        written(c);
}

static void on_read(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    client *c = arg;
    static char scratch[65536];
    for (;;) {
        ssize_t n = recv(fd, scratch, sizeof scratch, 0);
        if (n > 0) {
            if (c->wait && c->sent == c->len && !c->shut) {
                struct timeval tv;
                tv_ms(&tv, QUIET_MS);
                event_add(c->quiet, &tv);
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        c->eof = 1; /* EOF or reset: the server closed the connection */
        finish(c);
        return;
    }
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    base = event_base_new();
    const sim_profile *prof = sim_profile_find("tiny");
    FUZZ_CHECK(base && prof);
    sim_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.host = "127.0.0.1";
    cfg.port = 0;
    cfg.model = "sim-model";
    cfg.profile_name = prof->name;
    cfg.engine = prof->engine;
    cfg.eos_min_frac_pct = prof->eos_min_frac_pct;
    cfg.stall_ms = 10;
    cfg.limits = (httpd_limits){.max_header_bytes = 4096,
                                .max_body_bytes = 1 << 16,
                                .max_connections = 16,
                                .request_timeout_ms = 4,
                                .idle_timeout_ms = 8};
    char err[256];
    if (fault_spec_parse("http429=0.05,http500=0.05,disconnect=0.1,malformed=0.1,stall=0.1",
                         &cfg.faults, err, sizeof err)) {
        fprintf(stderr, "fuzz_httpd: %s\n", err);
        abort();
    }
    srv = sim_server_start(base, &cfg, err, sizeof err);
    if (!srv) {
        fprintf(stderr, "fuzz_httpd: %s\n", err);
        abort();
    }
    return 0;
}

/* The request bytes for this input (malloc'd). */
static uint8_t *make_request(const uint8_t *data, size_t size, size_t *len) {
    int kind = data[0] & 3;
    if (kind < 2) {
        uint8_t *r = malloc(size);
        memcpy(r, data + 1, size - 1);
        *len = size - 1;
        return r;
    }
    char head[256];
    int hn = snprintf(head, sizeof head,
                      "POST %s HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      kind == 2 ? "/v1/completions" : "/v1/chat/completions", size - 1);
    uint8_t *r = malloc((size_t)hn + size);
    memcpy(r, head, (size_t)hn);
    memcpy(r + hn, data + 1, size - 1);
    *len = (size_t)hn + size - 1;
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 17)
        return 0;
    int fds_before = fuzz_count_fds();
    client c;
    memset(&c, 0, sizeof c);
    c.buf = make_request(data, size, &c.len);
    c.wait = (data[0] & 4) != 0;
    c.pause_at = (data[0] & 3) == 1 && c.len > 1 ? 1 + fuzz_hash(0, data, size) % (c.len - 1) : 0;

    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(c.fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(sim_server_port(srv))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = connect(c.fd, (struct sockaddr *)&sa, sizeof sa);
    FUZZ_CHECK(rc == 0 || errno == EINPROGRESS);
    c.rev = event_new(base, c.fd, EV_READ | EV_PERSIST, on_read, &c);
    c.wev = event_new(base, c.fd, EV_WRITE | EV_PERSIST, on_write, &c);
    c.quiet = evtimer_new(base, on_quiet, &c);
    c.resume = evtimer_new(base, on_resume, &c);
    c.deadline = evtimer_new(base, on_deadline, &c);
    struct timeval tv;
    tv_ms(&tv, DEADLINE_MS);
    event_add(c.deadline, &tv);
    event_add(c.rev, NULL);
    if (c.len > 0)
        event_add(c.wev, NULL);
    else
        written(&c);
    while (!c.done)
        event_base_loop(base, 0);

    if (!c.eof) { /* the deadline: leave abruptly */
        struct linger lg = {1, 0};
        setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    event_free(c.rev);
    event_free(c.wev);
    event_free(c.quiet);
    event_free(c.resume);
    event_free(c.deadline);
    close(c.fd);
    free((void *)c.buf);

    /* The server must let go of the connection: its descriptor closes (the
     * struct is freed from a zero-delay event right after). */
    int64_t give_up = now_ms() + 2000;
    while (fuzz_count_fds() != fds_before) {
        if (now_ms() > give_up) {
            fprintf(stderr,
                    "fuzz_httpd: the server still holds %d descriptor(s) 2 s after "
                    "the client closed\n",
                    fuzz_count_fds() - fds_before);
            abort();
        }
        event_base_loop(base, EVLOOP_NONBLOCK);
        struct timespec ms = {0, 200000};
        nanosleep(&ms, NULL);
    }
    for (int i = 0; i < 3; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    return 0;
}
