/* t3295-hostile-clients: servelab sim against clients that misbehave.
 *
 * Raw sockets against `servelab sim` with tight limits (slowloris floods,
 * silent and dripping connections, oversized heads and bodies, malformed
 * request lines, pipelined garbage and pipelined floods, clients that reset
 * mid-stream). The simulator must hold no more than --max-connections,
 * close what is slow after --request-timeout-ms, keep answering real
 * clients meanwhile, free the sequences of clients that left, and keep its
 * resident memory bounded.
 *
 * The misbehaving servers against servelab run are in
 * t5040-hostile-servers.c. Every loop here is bounded in count and in time. */
#include "raw_conn.h"
#include "support.h"
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define SIM_RSS_LIMIT_KB (100 * 1024)

static long proc_status_kb(pid_t pid, const char *field) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    /* /proc files say they are empty: read them with read(), not read_file() */
    char s[8192];
    int fd = open(path, O_RDONLY);
    CHECK_MSG(fd >= 0, "%s unreadable: is the simulator still alive?", path);
    ssize_t n = read(fd, s, sizeof s - 1);
    close(fd);
    s[n > 0 ? n : 0] = 0;
    const char *at = strstr(s, field);
    CHECK_MSG(at != NULL, "no %s in %s", field, path);
    return atol(at + strlen(field) + 1);
}

/* The simulator's peak resident set stays under the bound. */
static void check_sim_memory(const sim_proc *p) {
    long hwm = proc_status_kb(p->pid, "VmHWM");
    CHECK_MSG(hwm < SIM_RSS_LIMIT_KB, "simulator peak RSS %ld kB", hwm);
}

/* Sockets the simulator holds open (its listener included). */
static int sim_sockets(const sim_proc *p) {
    char path[64], link[128];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)p->pid);
    DIR *d = opendir(path);
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    for (int i = 0; i < 1000000 && (e = readdir(d)); i++) {
        char fp[400];
        snprintf(fp, sizeof fp, "%s/%s", path, e->d_name);
        ssize_t r = readlink(fp, link, sizeof link - 1);
        if (r > 0 && !strncmp(link, "socket:", 7))
            n++;
    }
    closedir(d);
    return n;
}

/* Wait (bounded) until the simulator holds only its listener. */
static int wait_sim_sockets(const sim_proc *p, int want, int limit_ms) {
    int n = sim_sockets(p);
    for (int i = 0; i < limit_ms / 10 && n != want; i++) {
        sleep_ms(10);
        n = sim_sockets(p);
    }
    return n;
}

static void raise_fd_limit_to(rlim_t want) {
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK_MSG(rl.rlim_cur >= want, "need %ld open files, the limit is %ld", (long)want,
              (long)rl.rlim_cur);
}

typedef struct exchange {
    char resp[65536];
    size_t len;
    int closed; /* the simulator closed the connection */
    double ms;  /* from connect to close (or to the limit) */
} exchange;

/* One connection: send these bytes, read until the simulator closes. */
static void exchange_bytes(int port, const char *req, size_t n, int limit_ms, exchange *x) {
    double t0 = now_ms();
    int fd = tcp_open(port, 1000);
    CHECK_MSG(fd >= 0, "cannot connect to the simulator");
    send_within(fd, req, n, limit_ms);
    x->len = read_until_close(fd, x->resp, sizeof x->resp, limit_ms, &x->closed);
    x->ms = now_ms() - t0;
    close(fd);
}

static void exchange_str(int port, const char *req, int limit_ms, exchange *x) {
    exchange_bytes(port, req, strlen(req), limit_ms, x);
}

/* A well-formed request on a fresh connection gets 200 and a close. */
static void check_answers_health(int port) {
    static exchange x;
    exchange_str(port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 2000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 200", 12) && x.closed,
              "GET /health: '%.80s' (closed %d, %.0f ms)", x.resp, x.closed, x.ms);
}

/* A /metrics value, read on its own connection. */
static double metric(int port, const char *name) {
    static exchange x;
    exchange_str(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 2000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 200", 12), "GET /metrics: '%.80s'", x.resp);
    char key[128];
    snprintf(key, sizeof key, "\n%s{", name);
    const char *at = strstr(x.resp, key);
    CHECK_MSG(at != NULL, "metric %s missing", name);
    return atof(strchr(at, '}') + 1);
}

enum { SLOW_N = 1100, SLOW_LIMIT = 200, SLOW_TIMEOUT_MS = 1000, SLACK_MS = 800 };

typedef struct slow_conn {
    int fd;
    double opened, closed; /* closed: when the simulator closed it, 0 while open */
    int got_408;
} slow_conn;

static const char slow_partial[] = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ";

static void slow_open(slow_conn *s, int port) {
    memset(s, 0, sizeof *s);
    s->fd = tcp_open(port, 1000);
    CHECK_MSG(s->fd >= 0, "cannot connect to the simulator");
    s->opened = now_ms();
    send_within(s->fd, slow_partial, sizeof slow_partial - 1, 100);
}

/* Notice which connections the simulator closed (reading any 408 first). */
static int slow_poll(slow_conn *s, int n, int wait_ms) {
    static struct pollfd pfd[SLOW_N];
    int open_n = 0;
    for (int i = 0; i < n; i++) {
        pfd[i].fd = s[i].closed ? -1 : s[i].fd;
        pfd[i].events = POLLIN;
        pfd[i].revents = 0;
        open_n += !s[i].closed;
    }
    if (open_n == 0 || poll(pfd, (nfds_t)n, wait_ms) <= 0)
        return 0;
    int closed_now = 0;
    for (int i = 0; i < n; i++) {
        if (!pfd[i].revents)
            continue;
        char buf[1024];
        for (int k = 0; k < 16; k++) {
            ssize_t r = read(s[i].fd, buf, sizeof buf - 1);
            if (r > 0) {
                buf[r] = 0;
                s[i].got_408 |= !strncmp(buf, "HTTP/1.1 408", 12);
                continue;
            }
            if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                s[i].closed = now_ms();
                close(s[i].fd);
                closed_now++;
            }
            break;
        }
    }
    return closed_now;
}

/* Slowloris: 1,100 connections that send part of a request line and then
 * nothing, against --max-connections 200. The simulator never holds more
 * than 200 connections, keeps answering well-formed requests from other
 * connections while the flood holds every slot (it evicts the connection
 * that has waited longest for its request), and closes each slow connection
 * within --request-timeout-ms of its opening. */
TEST_ALONE(hostile_sim_slowloris_bounded_and_real_clients_served) {
    raise_fd_limit_to(SLOW_N + 256);
    char args[128];
    snprintf(args, sizeof args, "--max-connections %d --request-timeout-ms %d", SLOW_LIMIT,
             SLOW_TIMEOUT_MS);
    sim_proc p = sim_start(args);
    int base = sim_sockets(&p); /* the listener */
    static slow_conn s[SLOW_N];
    int max_sockets = 0;
    for (int i = 0; i < SLOW_N; i++) {
        slow_open(&s[i], p.port);
        if (i % 100 == 99) {
            int n = sim_sockets(&p);
            max_sockets = n > max_sockets ? n : max_sockets;
        }
    }
    /* While the flood holds every slot: real requests, the flood topped up
     * between them (at most 50 new slow connections each time). */
    int served = 0, reopened = 0;
    for (int r = 0; r < 20; r++) {
        slow_poll(s, SLOW_N, 0);
        for (int i = 0, k = 0; i < SLOW_N && k < 50; i++)
            if (s[i].closed) {
                slow_open(&s[i], p.port);
                k++;
                reopened++;
            }
        static exchange x;
        exchange_str(p.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1000,
                     &x);
        served += !strncmp(x.resp, "HTTP/1.1 200", 12) && x.closed;
        int n = sim_sockets(&p);
        max_sockets = n > max_sockets ? n : max_sockets;
    }
    printf("    %d of 20 real requests served during the flood, %d slow connections reopened, "
           "at most %d sockets held\n",
           served, reopened, max_sockets);
    fflush(stdout);
    /* + 1: a connection just accepted, before the one it evicts is closed */
    CHECK_MSG(max_sockets <= base + SLOW_LIMIT + 1, "the simulator held %d sockets (%d idle)",
              max_sockets, base);
    CHECK_INT(served, 20);
    /* The flood stops: every slow connection is closed, none later than the
     * request timeout after its opening; those that lived that long got a
     * 408 first. */
    double end = now_ms() + SLOW_TIMEOUT_MS + 2 * SLACK_MS;
    int left = 0;
    for (int i = 0; i < 10000 && now_ms() < end; i++) {
        slow_poll(s, SLOW_N, 20);
        left = 0;
        for (int k = 0; k < SLOW_N; k++)
            left += !s[k].closed;
        if (!left)
            break;
    }
    CHECK_MSG(left == 0, "%d slow connections still open", left);
    int n_408 = 0;
    double longest = 0;
    for (int i = 0; i < SLOW_N; i++) {
        double life = s[i].closed - s[i].opened;
        longest = life > longest ? life : longest;
        if (s[i].got_408) {
            n_408++;
            CHECK_MSG(life >= SLOW_TIMEOUT_MS - 10, "408 after %.0f ms", life);
        }
    }
    printf("    longest slow connection %.0f ms, %d got 408\n", longest, n_408);
    fflush(stdout);
    CHECK_MSG(longest <= SLOW_TIMEOUT_MS + SLACK_MS, "a slow connection lived %.0f ms", longest);
    CHECK_MSG(n_408 >= 1 && n_408 <= SLOW_LIMIT, "%d got 408", n_408);
    CHECK_INT(wait_sim_sockets(&p, base, 1000), base);
    check_answers_health(p.port);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* Connections that connect and send nothing are closed, silently, after the
 * request timeout (not after the 5-minute keep-alive idle timeout). */
TEST_ALONE(hostile_sim_silent_connections_closed_after_request_timeout) {
    sim_proc p = sim_start("--max-connections 200 --request-timeout-ms 1000");
    enum { N = 50 };
    static slow_conn s[N];
    for (int i = 0; i < N; i++) {
        s[i].fd = tcp_open(p.port, 1000);
        CHECK(s[i].fd >= 0);
        s[i].opened = now_ms();
        s[i].closed = 0;
    }
    check_answers_health(p.port);
    double end = now_ms() + 1000 + 2 * SLACK_MS;
    int left = N;
    for (int i = 0; i < 10000 && left && now_ms() < end; i++) {
        left -= slow_poll(s, N, 20);
    }
    CHECK_MSG(left == 0, "%d silent connections still open after %d ms", left, 1000 + 2 * SLACK_MS);
    for (int i = 0; i < N; i++) {
        double life = s[i].closed - s[i].opened;
        CHECK_MSG(life >= 990 && life <= 1000 + SLACK_MS, "closed after %.0f ms", life);
        CHECK(!s[i].got_408);
    }
    CHECK_INT(wait_sim_sockets(&p, 1, 1000), 1);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* A request head dripped one byte every 100 ms (it would take 4 s) is cut
 * off with 408 at the request timeout, counted from the connection's start. */
TEST_ALONE(hostile_sim_slow_header_drip_gets_408) {
    sim_proc p = sim_start("--request-timeout-ms 1000");
    const char *req = "GET /health HTTP/1.1\r\nHost: x\r\nX-Drip: abcdefghij\r\n\r\n";
    double t0 = now_ms();
    int fd = tcp_open(p.port, 1000);
    CHECK(fd >= 0);
    char resp[4096];
    size_t got = 0;
    int closed = 0;
    for (size_t i = 0; req[i] && !closed && i < 200; i++) {
        send_within(fd, req + i, 1, 100);
        got += read_until_close(fd, resp + got, sizeof resp - got, 100, &closed);
    }
    if (!closed)
        got += read_until_close(fd, resp + got, sizeof resp - got, 1000, &closed);
    double ms = now_ms() - t0;
    close(fd);
    CHECK_MSG(!strncmp(resp, "HTTP/1.1 408", 12) && closed, "got '%.60s'", resp);
    CHECK_MSG(ms >= 990 && ms <= 1000 + SLACK_MS, "408 after %.0f ms", ms);
    check_answers_health(p.port);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* Heads over --max-header-bytes get 431 and a close: one endless header
 * line, a long request line, too many header fields; the limit is exact. */
TEST(hostile_sim_oversized_headers_get_431) {
    sim_proc p = sim_start("--max-header-bytes 4096 --request-timeout-ms 1000");
    static char req[65536];
    static exchange x;
    /* a header line that never ends */
    int n = snprintf(req, sizeof req, "GET /health HTTP/1.1\r\nHost: x\r\nX-Long: ");
    memset(req + n, 'a', 20000);
    exchange_bytes(p.port, req, (size_t)n + 20000, 2000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 431", 12) && x.closed, "got '%.60s'", x.resp);
    CHECK_MSG(x.ms < 500, "431 after %.0f ms", x.ms);
    /* a request line of 8 KB */
    memcpy(req, "GET /", 5);
    memset(req + 5, 'p', 8000);
    snprintf(req + 8005, sizeof req - 8005, " HTTP/1.1\r\nHost: x\r\n\r\n");
    exchange_str(p.port, req, 2000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 431", 12) && x.closed, "got '%.60s'", x.resp);
    /* 100 small header fields, under the byte limit */
    n = snprintf(req, sizeof req, "GET /health HTTP/1.1\r\n");
    for (int i = 0; i < 100; i++)
        n += snprintf(req + n, sizeof req - (size_t)n, "X-%d: v\r\n", i);
    snprintf(req + n, sizeof req - (size_t)n, "\r\n");
    CHECK(strlen(req) < 4096);
    exchange_str(p.port, req, 2000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 431", 12) && x.closed, "got '%.60s'", x.resp);
    /* exactly at the limit passes, one byte over does not */
    for (int over = 0; over <= 1; over++) {
        const char *pre = "GET /health HTTP/1.1\r\nConnection: close\r\nX-Pad: ";
        n = snprintf(req, sizeof req, "%s", pre);
        int pad = 4096 + over - n - 4;
        memset(req + n, 'b', (size_t)pad);
        snprintf(req + n + pad, sizeof req - (size_t)(n + pad), "\r\n\r\n");
        CHECK_INT(strlen(req), 4096 + over);
        exchange_str(p.port, req, 2000, &x);
        CHECK_MSG(!strncmp(x.resp, over ? "HTTP/1.1 431" : "HTTP/1.1 200", 12) && x.closed,
                  "%d bytes: got '%.60s'", 4096 + over, x.resp);
    }
    check_answers_health(p.port);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* Bodies over --max-body-bytes get 413 as soon as the head says so, whether
 * or not the body follows; the client sees the 413 even when it sent a
 * large body the simulator will never read. */
TEST(hostile_sim_oversized_bodies_get_413) {
    sim_proc p = sim_start("--max-body-bytes 1000 --request-timeout-ms 1000");
    static exchange x;
    const char *head_only =
        "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n";
    exchange_str(p.port, head_only, 2000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 413", 12) && x.closed, "got '%.60s'", x.resp);
    CHECK_MSG(x.ms < 500, "413 after %.0f ms", x.ms);
    /* a 4 MB body sent whole, with the head */
    size_t body = 4 << 20;
    char *req = malloc(body + 256);
    int n = snprintf(
        req, 256, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", body);
    memset(req + n, 'z', body);
    exchange_bytes(p.port, req, (size_t)n + body, 3000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 413", 12) && x.closed, "got '%.60s' (%zu bytes)", x.resp,
              x.len);
    free(req);
    /* numbers that are not a length */
    const char *bad[] = {"99999999999999999999999", "-1", "+12", "12 12", "0x10"};
    for (int i = 0; i < 5; i++) {
        char r[256];
        snprintf(r, sizeof r,
                 "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %s\r\n\r\n", bad[i]);
        exchange_str(p.port, r, 2000, &x);
        CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 400", 12) && x.closed,
                  "Content-Length %s: got '%.60s'", bad[i], x.resp);
    }
    check_answers_health(p.port);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* Malformed request lines and header lines get 400 and a close, at once:
 * none of them waits for the request timeout. */
TEST(hostile_sim_malformed_requests_get_400) {
    sim_proc p = sim_start("--request-timeout-ms 3000");
    static const struct {
        const char *bytes;
        size_t n;
    } bad[] = {
#define B(s) {s, sizeof s - 1}
        B("GARBAGE\r\n\r\n"),
        B("GET\r\n\r\n"),
        B("GET /health\r\n\r\n"),
        B("GET  /health HTTP/1.1\r\n\r\n"),
        B("GET /health HTTP/2.0\r\n\r\n"),
        B("GET /health HTTP/1.1 extra\r\n\r\n"),
        B("GET /health HTTP/1.1\r\nNoColonHere\r\n\r\n"),
        B("GET /health HTTP/1.1\r\nBad Name: x\r\n\r\n"),
        B("GET /health HTTP/1.1\r\n: no name\r\n\r\n"),
        B("GET /health HTTP/1.1\r\nX-A: b\r\n  folded\r\n\r\n"),
        B("GET /health HTTP/1.1\r\nX-A: b\0c\r\nContent-Length: 5\r\n\r\nhello"),
        B("POST /v1/completions HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 50\r\n\r\nhello"),
        /* bytes that cannot begin a request line, and no line end at all */
        B("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"),
        B("\x00\x00\x00\x00\x00\x00\x00\x00"),
        B("get-me-something-long-without-a-space"),
#undef B
    };
    static exchange x;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        exchange_bytes(p.port, bad[i].bytes, bad[i].n, 4000, &x);
        CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 400", 12) && x.closed &&
                      count_of(x.resp, "HTTP/1.1") == 1,
                  "case %zu: got '%.60s' (closed %d)", i, x.resp, x.closed);
        CHECK_MSG(x.ms < 1000, "case %zu: 400 after %.0f ms", i, x.ms);
    }
    /* the simulator still answers, and kept nothing */
    check_answers_health(p.port);
    CHECK_INT(wait_sim_sockets(&p, 1, 1000), 1);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* Garbage pipelined after a good request: the good one is answered in
 * full, then 400, then the connection closes. */
TEST(hostile_sim_pipelined_garbage_after_good_request) {
    sim_proc p = sim_start("--request-timeout-ms 3000");
    static exchange x;
    exchange_str(p.port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n", 4000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 200", 12) && x.closed, "got '%.60s'", x.resp);
    CHECK_INT(count_of(x.resp, "HTTP/1.1 "), 2);
    CHECK(strstr(x.resp, "HTTP/1.1 400") != NULL);
    CHECK(x.ms < 1000);
    /* binary bytes with no line end after the good request */
    exchange_str(p.port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03\x01\x02\x00\x01", 4000,
                 &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 200", 12) && x.closed, "got '%.60s'", x.resp);
    CHECK_INT(count_of(x.resp, "HTTP/1.1 "), 2);
    CHECK(strstr(x.resp, "HTTP/1.1 400") != NULL);
    CHECK_MSG(x.ms < 1000, "%.0f ms", x.ms);
    /* after a whole streamed completion */
    const char *body = "{\"prompt\":\"hi\",\"max_tokens\":8,\"ignore_eos\":true,\"stream\":true}";
    char req[512];
    snprintf(
        req, sizeof req,
        "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%sGARBAGE\r\n\r\n",
        strlen(body), body);
    exchange_str(p.port, req, 4000, &x);
    CHECK_MSG(!strncmp(x.resp, "HTTP/1.1 200", 12) && x.closed, "got '%.60s'", x.resp);
    char *bad = strstr(x.resp, "HTTP/1.1 400");
    CHECK(bad != NULL);
    CHECK_INT(count_of(x.resp, "text_completion"), 8);
    char *done = strstr(x.resp, "data: [DONE]");
    CHECK(done != NULL && done < bad);
    CHECK(strstr(x.resp, "\r\n0\r\n\r\n") < bad);
    CHECK_INT(metric(p.port, "vllm:num_requests_running"), 0);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* A client that pipelines 20,000 requests for /metrics (7 KB answers each)
 * and never reads: the simulator must not queue 140 MB of answers. It stops
 * reading that connection while its answers wait, stays responsive to
 * others, and drops the connection after the request timeout. */
TEST(hostile_sim_pipelined_flood_without_reading_stays_bounded) {
    sim_proc p = sim_start("--request-timeout-ms 1000");
    long rss0 = proc_status_kb(p.pid, "VmRSS");
    enum { N = 20000 };
    const char *one = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t len = strlen(one);
    char *flood = malloc(len * N);
    for (int i = 0; i < N; i++)
        memcpy(flood + (size_t)i * len, one, len);
    int fd = tcp_open(p.port, 1000);
    CHECK(fd >= 0);
    int rcv = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    size_t sent = send_within(fd, flood, len * N, 1500);
    check_answers_health(p.port);
    sleep_ms(500); /* time to take (or, when paused, not take) the rest */
    check_answers_health(p.port);
    long hwm = proc_status_kb(p.pid, "VmHWM");
    printf("    sent %zu of %zu bytes without reading; simulator RSS %ld kB -> peak %ld kB\n", sent,
           len * N, rss0, hwm);
    fflush(stdout);
    CHECK_MSG(hwm - rss0 < 32 * 1024, "simulator grew %ld kB", hwm - rss0);
    /* the simulator gives up on the connection */
    char buf[4096];
    int closed = 0;
    double t0 = now_ms();
    for (int i = 0; i < 100000 && !closed && now_ms() - t0 < 5000; i++) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) > 0) {
            ssize_t r = read(fd, buf, sizeof buf);
            closed = r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR);
            if (r > 0)
                usleep(2000); /* a very slow reader */
        }
    }
    CHECK_MSG(closed, "the simulator kept the connection of a client that does not read");
    close(fd);
    free(flood);
    CHECK_INT(wait_sim_sockets(&p, 1, 1000), 1);
    check_answers_health(p.port);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* Clients that reset their connection mid-stream: the simulator frees every
 * sequence at once (nothing running or waiting, no KV blocks held, each one
 * counted as aborted) and keeps no socket. */
TEST(hostile_sim_reset_mid_stream_frees_sequences) {
    sim_proc p = sim_start("--decode-base-ms 20 --request-timeout-ms 1000");
    enum { N = 20 };
    int fd[N];
    const char *body =
        "{\"prompt\":\"hello\",\"max_tokens\":500,\"ignore_eos\":true,\"stream\":true}";
    char req[512];
    snprintf(req, sizeof req,
             "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    for (int i = 0; i < N; i++) {
        fd[i] = tcp_open(p.port, 1000);
        CHECK(fd[i] >= 0);
        CHECK_INT(send_within(fd[i], req, strlen(req), 1000), strlen(req));
    }
    /* each reads its first token, then resets */
    for (int i = 0; i < N; i++) {
        char buf[8192];
        size_t got = 0;
        double end = now_ms() + 3000;
        while (now_ms() < end && got + 1 < sizeof buf) {
            struct pollfd pfd = {fd[i], POLLIN, 0};
            if (poll(&pfd, 1, 100) <= 0)
                continue;
            ssize_t r = read(fd[i], buf + got, sizeof buf - 1 - got);
            if (r <= 0)
                break;
            got += (size_t)r;
            buf[got] = 0;
            if (strstr(buf, "text_completion"))
                break;
        }
        CHECK_MSG(strstr(buf, "text_completion") != NULL, "stream %d: no token", i);
        struct linger lg = {1, 0};
        setsockopt(fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(fd[i]);
    }
    /* and one that resets halfway through sending its request */
    int half = tcp_open(p.port, 1000);
    send_within(half, req, strlen(req) / 2, 1000);
    sleep_ms(50);
    struct linger lg = {1, 0};
    setsockopt(half, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(half);
    CHECK_INT(wait_sim_sockets(&p, 1, 1000), 1);
    CHECK_INT(metric(p.port, "vllm:num_requests_running"), 0);
    CHECK_INT(metric(p.port, "vllm:num_requests_waiting"), 0);
    CHECK_INT(metric(p.port, "vllm:kv_cache_usage_perc"), 0);
    CHECK_INT(metric(p.port, "vllm:num_requests_aborted_total"), N);
    CHECK(metric(p.port, "vllm:generation_tokens_total") < N * 100);
    check_answers_health(p.port);
    check_sim_memory(&p);
    sim_stop(&p);
}

/* One request on a kept-alive connection; its answer read whole (by its
 * Content-Length). Returns the status, 0 when the connection closed first. */
static int keepalive_get(int fd, const char *path, int limit_ms) {
    char req[256], buf[16384];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    if (send_within(fd, req, strlen(req), limit_ms) != strlen(req))
        return 0;
    size_t got = 0;
    double end = now_ms() + limit_ms;
    while (got + 1 < sizeof buf && now_ms() < end) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 20) <= 0)
            continue;
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            return 0;
        if (r < 0)
            continue;
        got += (size_t)r;
        buf[got] = 0;
        const char *sep = strstr(buf, "\r\n\r\n");
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        if (sep && cl && got >= (size_t)(sep + 4 - buf) + (size_t)atol(cl + 17))
            return atoi(buf + 9);
    }
    return 0;
}

/* Whether the simulator closed this connection within limit_ms. */
static int closed_within(int fd, int limit_ms) {
    char buf[4096];
    int closed = 0;
    read_until_close(fd, buf, sizeof buf, limit_ms, &closed);
    return closed;
}

/* A streaming completion whose first token has arrived. */
static int open_stream(int port) {
    const char *body =
        "{\"prompt\":\"hi\",\"max_tokens\":1000,\"ignore_eos\":true,\"stream\":true}";
    char req[512], buf[4096];
    snprintf(req, sizeof req,
             "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    int fd = tcp_open(port, 1000);
    CHECK(fd >= 0);
    CHECK_INT(send_within(fd, req, strlen(req), 1000), strlen(req));
    size_t got = 0;
    double end = now_ms() + 3000;
    while (now_ms() < end && got + 1 < sizeof buf && !strstr(buf, "text_completion")) {
        buf[got] = 0;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        CHECK_MSG(r != 0, "stream closed before its first token");
        if (r > 0)
            got += (size_t)r;
        buf[got] = 0;
    }
    CHECK_MSG(strstr(buf, "text_completion") != NULL, "no first token");
    return fd;
}

/* At --max-connections a new connection evicts the connection that has
 * waited longest for its next request (here an idle keep-alive one), never
 * one that is answering a request; when all are answering, the new one is
 * refused. */
TEST(hostile_sim_connection_limit_evicts_longest_waiting_first) {
    sim_proc p = sim_start("--max-connections 4 --decode-base-ms 20");
    int a = tcp_open(p.port, 1000), b = tcp_open(p.port, 1000), c = tcp_open(p.port, 1000);
    CHECK(a >= 0 && b >= 0 && c >= 0);
    CHECK_INT(keepalive_get(a, "/health", 1000), 200);
    CHECK_INT(keepalive_get(b, "/health", 1000), 200);
    CHECK_INT(keepalive_get(c, "/health", 1000), 200);
    int d = open_stream(p.port);  /* 4 connections: a, b, c idle; d answering */
    check_answers_health(p.port); /* the 5th evicts a, the longest idle */
    CHECK_MSG(closed_within(a, 500), "the longest-waiting connection was not evicted");
    CHECK_INT(keepalive_get(b, "/health", 1000), 200); /* b and c kept, now b waited less */
    CHECK_INT(keepalive_get(c, "/health", 1000), 200);
    int f = open_stream(p.port); /* 4 again: b, c idle; d, f answering */
    CHECK(!closed_within(b, 100) && !closed_within(c, 100));
    int g = open_stream(p.port); /* evicts b */
    CHECK_MSG(closed_within(b, 500), "b should have made room for g");
    CHECK(!closed_within(c, 100));
    int h = open_stream(p.port); /* evicts c */
    CHECK_MSG(closed_within(c, 500), "c should have made room for h");
    /* every connection is answering a request: a new one is refused */
    static exchange x;
    exchange_str(p.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1000, &x);
    CHECK_MSG(x.closed && x.len == 0, "got '%.60s' (closed %d)", x.resp, x.closed);
    /* and the streams were never touched */
    CHECK(!closed_within(d, 100) && !closed_within(f, 100) && !closed_within(g, 100) &&
          !closed_within(h, 100));
    int fds[] = {a, b, c, d, f, g, h};
    for (int i = 0; i < 7; i++)
        close(fds[i]);
    CHECK_INT(wait_sim_sockets(&p, 1, 1000), 1);
    check_answers_health(p.port);
    CHECK_INT(metric(p.port, "vllm:num_requests_running"), 0);
    sim_stop(&p);
}

/* An idle keep-alive connection stays while its requests come within
 * --idle-timeout-ms of each other, and is closed, silently, after that. */
TEST_ALONE(hostile_sim_idle_keep_alive_closed_after_idle_timeout) {
    sim_proc p = sim_start("--idle-timeout-ms 300 --request-timeout-ms 5000");
    int fd = tcp_open(p.port, 1000);
    CHECK(fd >= 0);
    for (int i = 0; i < 3; i++) {
        CHECK_INT(keepalive_get(fd, "/health", 1000), 200);
        sleep_ms(200);
    }
    CHECK_INT(keepalive_get(fd, "/health", 1000), 200);
    double t0 = now_ms();
    char buf[256];
    int closed = 0;
    size_t got = read_until_close(fd, buf, sizeof buf, 2000, &closed);
    double ms = now_ms() - t0;
    close(fd);
    CHECK_MSG(closed && got == 0, "closed %d, got '%s'", closed, buf);
    CHECK_MSG(ms >= 290 && ms <= 300 + SLACK_MS, "closed after %.0f ms", ms);
    sim_stop(&p);
}
