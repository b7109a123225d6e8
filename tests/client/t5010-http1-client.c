/* Tests of the HTTP/1.1 client (src/client/h1.c) against a scripted raw
 * server: framing (chunked split at every byte, Content-Length,
 * close-delimited, 1xx), keep-alive reuse and the retry of a dead pooled
 * connection, failures (refused, unresolved, truncated, not HTTP, head too
 * large, timeout, abort), the request it sends, and that arrival times are
 * the kernel's rather than when the client got round to reading. */
#include "client/h1.h"
#include "common/clock.h"
#include "hostile_server.h"
#include "support.h"
#include "test.h"
#include "transcripts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the scripted server ---- */

/* '\x01' in an answer: pause 30 ms there. */
#define PAUSE '\x01'

typedef struct raw_script {
    const char *answers[4]; /* the answer to each request on a connection, in turn */
    int n_answers;
    int drip;        /* write one byte at a time */
    int close_after; /* close after this many answers on a connection (0: n_answers) */
    int silent;      /* read the request, never answer */
} raw_script;

typedef struct raw_seen {
    int connections, requests;
    char last_head[4096];
} raw_seen;

typedef struct raw_server {
    pid_t pid;
    int port;
    raw_seen *seen;
} raw_server;

/* Reads one request head and its Content-Length body; -1 at EOF. */
static int read_one(int fd, raw_seen *seen) {
    char head[4096];
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        if (n + 1 >= sizeof head)
            return -1;
        ssize_t r = read(fd, head + n, sizeof head - 1 - n);
        if (r <= 0)
            return -1;
        n += (size_t)r;
        head[n] = 0;
        end = strstr(head, "\r\n\r\n");
    }
    size_t head_len = (size_t)(end - head) + 4;
    const char *cl = strcasestr(head, "\r\nContent-Length:");
    long long left = (cl ? atoll(cl + 17) : 0) - (long long)(n - head_len);
    char sink[4096];
    while (left > 0) {
        ssize_t r = read(fd, sink, left < (long long)sizeof sink ? (size_t)left : sizeof sink);
        if (r <= 0)
            return -1;
        left -= r;
    }
    end[2] = 0;
    snprintf(seen->last_head, sizeof seen->last_head, "%s", head);
    __atomic_add_fetch(&seen->requests, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static void write_answer(int fd, const char *a, int drip) {
    for (const char *p = a; *p;) {
        if (*p == PAUSE) {
            sleep_ms(30);
            p++;
            continue;
        }
        size_t n = drip ? 1 : strcspn(p, "\x01");
        if (write(fd, p, n) < 0)
            return;
        p += n;
        if (drip && (p - a) % 8 == 0)
            sleep_ms(1);
    }
}

static raw_server raw_start(const raw_script *s) {
    raw_server h = {0, 0, NULL};
    h.seen = mmap(NULL, sizeof *h.seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(h.seen != MAP_FAILED);
    memset(h.seen, 0, sizeof *h.seen);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(lfd, 64) == 0);
    socklen_t sl = sizeof sa;
    CHECK(getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    h.port = ntohs(sa.sin_port);
    fflush(stdout);
    h.pid = fork();
    CHECK(h.pid >= 0);
    if (h.pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(20);
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
            int fd = accept(lfd, NULL, NULL);
            if (fd < 0)
                continue;
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            __atomic_add_fetch(&h.seen->connections, 1, __ATOMIC_SEQ_CST);
            int limit = s->close_after ? s->close_after : s->n_answers;
            for (int k = 0; k < limit; k++) {
                if (read_one(fd, h.seen))
                    break;
                if (s->silent) {
                    sleep_ms(20000);
                    break;
                }
                write_answer(fd, s->answers[k % s->n_answers], s->drip);
            }
            close(fd);
        }
    }
    close(lfd);
    return h;
}

static void raw_stop(raw_server *h) {
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
    munmap(h->seen, sizeof *h->seen);
}

/* ---- the client side ---- */

typedef struct outcome {
    int heads, status, dones;
    h1_result result;
    int os_errno;
    char ctype[64], cenc[32];
    char body[8192];
    size_t body_len;
    int64_t arrived[16];
    int n_arrived;
    int abort_after;    /* return less than asked on this body call (1-based; 0: never) */
    int sleep_first_ms; /* in the first body call: a client busy elsewhere */
    int body_calls;
    int in_start; /* set while h1_start runs: done must not come then */
    int done_in_start;
    /* started from done: a second transfer on the same client */
    h1_client *client;
    struct outcome *next;
    const char *next_body;
} outcome;

static void on_head(void *ud, int status, const char *ct, const char *ce) {
    outcome *o = ud;
    snprintf(o->cenc, sizeof o->cenc, "%s", ce ? ce : "");
    o->heads++;
    o->status = status;
    snprintf(o->ctype, sizeof o->ctype, "%s", ct ? ct : "");
}

static size_t on_body(void *ud, const char *p, size_t n, int64_t arrived) {
    outcome *o = ud;
    o->body_calls++;
    if (o->n_arrived < 16)
        o->arrived[o->n_arrived++] = arrived;
    if (o->sleep_first_ms && o->body_calls == 1)
        sleep_ms(o->sleep_first_ms);
    if (o->abort_after && o->body_calls >= o->abort_after)
        return 0;
    size_t k = n < sizeof o->body - 1 - o->body_len ? n : sizeof o->body - 1 - o->body_len;
    memcpy(o->body + o->body_len, p, k);
    o->body_len += k;
    o->body[o->body_len] = 0;
    return n;
}

static void on_done(void *ud, h1_result r, int os_errno) {
    outcome *o = ud;
    o->os_errno = os_errno;
    o->dones++;
    o->result = r;
    o->done_in_start |= o->in_start;
    if (o->next) {
        o->next->client = o->client;
        o->next->in_start = 1;
        h1_start(o->client, NULL, o->next_body, strlen(o->next_body), 5, o->next);
        o->next->in_start = 0;
    }
}

static const h1_handlers handlers = {on_head, on_body, on_done, NULL};

/* Runs transfers on one client until every one is done (or 10 s). */
static void run_transfers(const char *url, const char *const *headers, outcome **os, int n,
                          double timeout_s) {
    struct event_base *base = event_base_new();
    h1_client *c = h1_client_new(base, url, headers, &handlers);
    for (int i = 0; i < n; i++) {
        os[i]->client = c;
        os[i]->in_start = 1;
        h1_start(c, "X-Request-Id: req-7", "{\"prompt\":\"hi\"}", 15, timeout_s, os[i]);
        os[i]->in_start = 0;
    }
    int64_t t0 = mono_us();
    for (;;) {
        int all = 1;
        for (int i = 0; i < n; i++)
            for (outcome *o = os[i]; o; o = o->next)
                all &= o->dones == 1;
        if (all || mono_us() - t0 > 10000000)
            break;
        event_base_loop(base, EVLOOP_ONCE);
    }
    h1_client_free(c);
    event_base_free(base);
}

/* One transfer (and those chained from it) to the scripted server; `o`
 * may come with its test knobs set. */
static void run_one(const raw_server *h, const char *const *headers, double timeout_s, outcome *o) {
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", h->port);
    run_transfers(url, headers, &o, 1, timeout_s);
    CHECK_INT(o->dones, 1);
    CHECK_INT(o->done_in_start, 0);
}

static outcome one(const raw_server *h, const char *const *headers, double timeout_s) {
    outcome o = {0};
    run_one(h, headers, timeout_s, &o);
    return o;
}

static const char sse_body[] = "data: {\"choices\":[{\"text\":\" a\"}]}\n\n"
                               "data: {\"choices\":[{\"text\":\" b\"}]}\n\ndata: [DONE]\n\n";

/* ---- tests ---- */

TEST(h1_chunked_body_split_at_every_byte) {
    /* sizes in mixed case, an extension, a trailer */
    char answer[1024];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
             "Transfer-Encoding: chunked\r\n\r\n"
             "%zx;ext=1\r\n%.*s\r\n%zX\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n",
             (size_t)37, 37, sse_body, strlen(sse_body) - 37, sse_body + 37);
    raw_script s = {{answer}, 1, 1, 0, 0};
    raw_server h = raw_start(&s);
    outcome o = one(&h, NULL, 5);
    CHECK_INT(o.result, H1_OK);
    CHECK_INT(o.heads, 1);
    CHECK_INT(o.status, 200);
    CHECK_STR(o.ctype, "text/event-stream");
    CHECK_STR(o.body, sse_body);
    CHECK_MSG(o.body_calls > 5, "only %d body calls: the bytes were not split", o.body_calls);
    raw_stop(&h);
}

TEST(h1_content_length_bodies_reuse_one_connection) {
    char answer[512];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(sse_body), sse_body);
    raw_script s = {{answer}, 1, 0, 3, 0};
    raw_server h = raw_start(&s);
    outcome a = {0}, b = {0}, c = {0};
    a.next = &b;
    a.next_body = "{}";
    b.next = &c;
    b.next_body = "{}";
    run_one(&h, NULL, 5, &a);
    outcome *all[] = {&a, &b, &c};
    for (int i = 0; i < 3; i++) {
        CHECK_INT(all[i]->dones, 1);
        CHECK_INT(all[i]->result, H1_OK);
        CHECK_STR(all[i]->body, sse_body);
    }
    CHECK_INT(hostile_count(&h.seen->requests), 3);
    CHECK_INT(hostile_count(&h.seen->connections), 1);
    raw_stop(&h);
}

TEST(h1_dead_pooled_connection_is_retried_on_a_fresh_one) {
    /* the server closes after each answer although it said keep-alive */
    char answer[512];
    snprintf(answer, sizeof answer, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(sse_body), sse_body);
    raw_script s = {{answer}, 1, 0, 1, 0};
    raw_server h = raw_start(&s);
    outcome a = {0}, b = {0};
    a.next = &b; /* started from a's done: the close may not have been seen yet */
    a.next_body = "{}";
    run_one(&h, NULL, 5, &a);
    CHECK_INT(a.result, H1_OK);
    CHECK_INT(b.dones, 1);
    CHECK_INT(b.result, H1_OK);
    CHECK_STR(b.body, sse_body);
    CHECK_INT(hostile_count(&h.seen->connections), 2);
    raw_stop(&h);
}

/* An answer, then 30 ms later a second one nobody asked for, while the
 * client is still busy with the first (its body callback sleeps). The next
 * transfer, started from the first one's done, must not take the unasked
 * answer as its own: the connection that spoke out of turn is closed
 * unused and the request goes out on a fresh one. */
TEST(h1_unasked_answer_on_a_pooled_connection_is_not_taken) {
    static const char extra_body[] = "data: {\"choices\":[{\"text\":\" unasked\"}]}\n\n";
    char answer[1024];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s%c"
             "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(sse_body), sse_body, PAUSE, strlen(extra_body), extra_body);
    raw_script s = {{answer}, 1, 0, 0, 0};
    raw_server h = raw_start(&s);
    outcome a = {0}, b = {0};
    a.sleep_first_ms = 80; /* the unasked answer arrives meanwhile */
    a.next = &b;
    a.next_body = "{}";
    run_one(&h, NULL, 5, &a);
    CHECK_INT(a.result, H1_OK);
    CHECK_STR(a.body, sse_body);
    CHECK_INT(b.dones, 1);
    CHECK_INT(b.result, H1_OK);
    CHECK_STR(b.body, sse_body);
    CHECK_INT(hostile_count(&h.seen->connections), 2);
    CHECK_INT(hostile_count(&h.seen->requests), 2);
    raw_stop(&h);
}

TEST(h1_close_delimited_body_and_1xx_heads) {
    char answer[512];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n"
             "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n%s",
             sse_body);
    raw_script s = {{answer}, 1, 0, 0, 0};
    raw_server h = raw_start(&s);
    outcome o = one(&h, NULL, 5);
    CHECK_INT(o.result, H1_OK);
    CHECK_INT(o.heads, 1);
    CHECK_INT(o.status, 200);
    CHECK_STR(o.body, sse_body);
    raw_stop(&h);
}

TEST(h1_truncated_or_foreign_answers_are_broken) {
    char big[80 * 1024];
    snprintf(big, sizeof big, "HTTP/1.1 200 OK\r\nX-Big: ");
    size_t n = strlen(big);
    memset(big + n, 'x', sizeof big - n - 1);
    big[sizeof big - 1] = 0;
    const char *cases[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this",             /* short body */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", /* no last chunk */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n",
        "SSH-2.0-OpenSSH_9.2\r\n\r\n",          /* not HTTP */
        "HTTP/1.1 200 OK\r\nContent-Length: 5", /* head never ends */
        big,                                    /* head over 64 KiB */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        raw_script s = {{cases[i]}, 1, 0, 0, 0};
        raw_server h = raw_start(&s);
        outcome o = one(&h, NULL, 5);
        CHECK_MSG(o.result == H1_BROKEN, "case %zu: result %d, want broken", i, o.result);
        raw_stop(&h);
    }
}

TEST(h1_refused_and_hostless_are_connect_failures_reported_later) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(sa.sin_port));
    close(fd);                                 /* bound once, now nobody listens there */
    const char *urls[] = {url, "http://:80/"}; /* no host: nothing to resolve */
    for (int i = 0; i < 2; i++) {
        outcome o = {0};
        outcome *p = &o;
        run_transfers(urls[i], NULL, &p, 1, 5);
        CHECK_INT(o.dones, 1);
        CHECK_INT(o.done_in_start, 0);
        CHECK_MSG(o.result == H1_CONNECT, "%s: result %d", urls[i], o.result);
        CHECK_INT(o.heads, 0);
    }
}

/* Out of descriptors (every one below the limit taken): the client's own
 * failure, with its errno, reported later like any other; not a failure
 * to connect. (The test runs in its own child: the limit dies with it.) */
TEST(h1_out_of_descriptors_is_a_client_failure) {
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", 9); /* never reached */
    struct event_base *base = event_base_new();
    h1_client *c = h1_client_new(base, url, NULL, &handlers);
    struct rlimit rl = {64, 64};
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    int fds[64], n = 0;
    while (n < 64 && (fds[n] = dup(0)) >= 0)
        n++;
    CHECK(n < 64 && errno == EMFILE);
    outcome o = {0};
    o.in_start = 1;
    h1_start(c, NULL, "{}", 2, 5, &o);
    o.in_start = 0;
    for (int i = 0; i < 100 && !o.dones; i++)
        event_base_loop(base, EVLOOP_ONCE);
    CHECK_INT(o.dones, 1);
    CHECK_INT(o.done_in_start, 0);
    CHECK_MSG(o.result == H1_CLIENT, "result %d", o.result);
    CHECK_INT(o.os_errno, EMFILE);
    while (n > 0)
        close(fds[--n]);
    h1_client_free(c);
    event_base_free(base);
}

TEST_ALONE(h1_silent_server_times_out_on_time) {
    raw_script s = {{"unused"}, 1, 0, 0, 1};
    raw_server h = raw_start(&s);
    int64_t t0 = mono_us();
    outcome o = one(&h, NULL, 0.3);
    double took = (mono_us() - t0) / 1000.0;
    CHECK_INT(o.result, H1_TIMEOUT);
    CHECK_MSG(took >= 290 && took < 2000, "timed out after %.0f ms (timeout 300 ms)", took);
    raw_stop(&h);
}

TEST(h1_body_callback_can_abort) {
    char answer[512];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n\x01"
             "6\r\nsecond\r\n\x01"
             "0\r\n\r\n");
    raw_script s = {{answer}, 1, 0, 0, 0};
    raw_server h = raw_start(&s);
    outcome o = {0};
    o.abort_after = 2;
    run_one(&h, NULL, 5, &o);
    CHECK_INT(o.result, H1_ABORTED);
    CHECK_INT(o.body_calls, 2);
    CHECK_STR(o.body, "first");
    raw_stop(&h);
}

TEST(h1_sends_the_request_head_with_user_headers) {
    char answer[256];
    snprintf(answer, sizeof answer, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    raw_script s = {{answer}, 1, 0, 0, 0};
    raw_server h = raw_start(&s);
    const char *headers[] = {"Authorization: Bearer sk-test", "Content-Type: application/x-test",
                             "Accept:", "X-Empty:   ", NULL};
    outcome o = one(&h, headers, 5);
    CHECK_INT(o.result, H1_OK);
    const char *head = h.seen->last_head;
    char host[64];
    snprintf(host, sizeof host, "\r\nHost: 127.0.0.1:%d\r\n", h.port);
    CHECK_MSG(!strncmp(head, "POST /v1/completions HTTP/1.1\r\n", 31), "head: %s", head);
    CHECK_MSG(strstr(head, host), "no Host in: %s", head);
    CHECK_MSG(strstr(head, "\r\nAuthorization: Bearer sk-test\r\n"), "head: %s", head);
    CHECK_MSG(strstr(head, "\r\nContent-Type: application/x-test\r\n"), "head: %s", head);
    CHECK_MSG(!strstr(head, "application/json"), "our Content-Type was not replaced: %s", head);
    CHECK_MSG(!strstr(head, "Accept:"), "Accept was not removed: %s", head);
    CHECK_MSG(!strstr(head, "X-Empty"), "an empty header was sent: %s", head);
    CHECK_MSG(strstr(head, "\r\nX-Request-Id: req-7\r\n"), "head: %s", head);
    CHECK_MSG(strstr(head, "\r\nContent-Length: 15\r\n"), "head: %s", head);
    raw_stop(&h);
}

/* The second chunk reaches the socket 30 ms after the first, while the
 * client is busy for 200 ms with the first: its time must be the kernel's
 * arrival (about 30 ms later), not the read (about 200 ms later). */
TEST_ALONE(h1_arrival_times_are_the_kernels_not_the_reads) {
    char answer[512];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n\x01"
             "6\r\nsecond\r\n0\r\n\r\n");
    raw_script s = {{answer}, 1, 0, 0, 0};
    raw_server h = raw_start(&s);
    outcome o = {0};
    o.sleep_first_ms = 200;
    int64_t t0 = mono_us();
    run_one(&h, NULL, 5, &o);
    CHECK_INT(o.result, H1_OK);
    CHECK_MSG(o.n_arrived >= 2, "%d body calls", o.n_arrived);
    double gap = (o.arrived[1] - o.arrived[0]) / 1000.0;
    CHECK_MSG(gap > 25 && gap < 120, "second chunk %.1f ms after the first (sent 30 ms after)",
              gap);
    CHECK_MSG(o.arrived[0] >= t0 && o.arrived[1] <= mono_us(), "times outside the run");
    raw_stop(&h);
}

TEST(h1_usable_only_for_plain_http_without_credentials_or_proxy) {
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    CHECK(h1_usable("http://127.0.0.1:8000/v1/completions"));
    CHECK(h1_usable("HTTP://[::1]:8000/v1/completions"));
    CHECK(!h1_usable("https://127.0.0.1:8000/v1/completions"));
    CHECK(!h1_usable("http://user:pw@127.0.0.1:8000/v1/completions"));
    setenv("http_proxy", "http://proxy:3128", 1);
    CHECK(!h1_usable("http://127.0.0.1:8000/v1/completions"));
    unsetenv("http_proxy");
}

typedef struct replay_count {
    int replayed, chunked;
} replay_count;

static void replay(const transcript *t, void *arg) {
    replay_count *c = arg;
    raw_script s = {{t->answer}, 1, 0, 0, 0};
    raw_server h = raw_start(&s);
    outcome o = one(&h, NULL, 5);
    CHECK_MSG(o.result == H1_OK, "%s: result %d", t->stem, o.result);
    CHECK_MSG(o.status == t->status, "%s: status %d, want %d", t->stem, o.status, t->status);
    size_t kept = t->body_len < sizeof o.body - 1 ? t->body_len : sizeof o.body - 1; /* o keeps */
    CHECK_MSG(o.body_len == kept && !memcmp(o.body, t->body, kept),
              "%s: body differs (%zu of %zu bytes)", t->stem, o.body_len, t->body_len);
    raw_stop(&h);
    c->replayed++;
    c->chunked += t->chunked;
}

/* Every llama.cpp exchange in tests/data/transcripts, replayed as the server
 * sent it (tests/lib/transcripts.h): the client reads each whole, with the
 * recorded status and the body byte for byte. */
TEST(h1_replays_every_llamacpp_transcript) {
    replay_count c = {0, 0};
    transcripts_each(replay, &c);
    int replayed = c.replayed, chunked = c.chunked;
    printf("    %d exchanges replayed, %d of them chunked\n", replayed, chunked);
    CHECK(replayed >= 40 && chunked >= 5);
}
