/* Defects of `run --metrics-listen` (round 2): a scraper that trickles its
 * request line a byte every 0.9 s held the one answering thread, so every
 * other scrape queued behind it and the run could not end until it
 * stopped (H1). The slow scrapers here are written in C, on their own
 * threads, against the listener in this process. */
#include "client/live.h"
#include "common/clock.h"
#include "raw_conn.h"
#include "run/metrics_listen.h"
#include "support.h"
#include "test.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A scraper that sends "GET /metrics HTTP/1.1" a byte every interval_ms
 * (never the line's end) for up to duration_ms, and notes when the server
 * closed on it. */
typedef struct trickler {
    int port, interval_ms, duration_ms;
    double connected_ms, closed_ms; /* now_ms(); closed_ms -1: still open at the end */
    pthread_t tid;
} trickler;

static void *trickle(void *arg) {
    trickler *t = arg;
    const char *line = "GET /metrics HTTP/1.1";
    int fd = tcp_open(t->port, 1000);
    t->connected_ms = now_ms();
    t->closed_ms = -1;
    for (size_t i = 0; fd >= 0 && now_ms() - t->connected_ms < t->duration_ms; i++) {
        if (send(fd, line + i % strlen(line), 1, MSG_NOSIGNAL) != 1) {
            t->closed_ms = now_ms();
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        char b[256];
        if (poll(&p, 1, t->interval_ms) == 1 && read(fd, b, sizeof b) <= 0) {
            t->closed_ms = now_ms();
            break;
        }
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void trickler_start(trickler *t, int port, int duration_ms) {
    *t = (trickler){.port = port, .interval_ms = 900, .duration_ms = duration_ms};
    CHECK(pthread_create(&t->tid, NULL, trickle, t) == 0);
}

/* One whole scrape on a fresh connection within limit_ms: its bytes into
 * buf, and how long it took (ms). */
static double scrape(int port, char *buf, size_t cap, int limit_ms) {
    double t0 = now_ms();
    int fd = tcp_open(port, limit_ms), closed = 0;
    CHECK_MSG(fd >= 0, "no connection to port %d", port);
    const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    send_within(fd, req, strlen(req), limit_ms);
    read_until_close(fd, buf, cap, limit_ms, &closed);
    close(fd);
    return now_ms() - t0;
}

/* The listener in this process: a scrape beside a trickling one is
 * answered at once, the trickler is cut off at its deadline (it would have
 * gone on for 6 s), and closing the listener while another trickles (for
 * 6 s more) takes no time. Before the fix the scrape waited for the
 * trickler and the close joined a thread stuck on it. */
TEST(defects_listen_slow_scraper_holds_no_one_and_close_never_waits) {
    live_stats *l = live_new(4);
    live_start(l, mono_us());
    char err[256];
    metrics_listen *m = metrics_listen_open("127.0.0.1:0", err, sizeof err);
    CHECK_MSG(m, "%s", err);
    int port = metrics_listen_port(m);
    CHECK(port > 0);
    metrics_listen_start(m, l, "r", "http://x");
    trickler slow;
    trickler_start(&slow, port, 6000);
    sleep_ms(300);
    static char buf[1 << 16];
    double took = scrape(port, buf, sizeof buf, 3000);
    CHECK_MSG(strstr(buf, "HTTP/1.1 200 OK") && strstr(buf, "servelab_requests_scheduled 4\n"),
              "scrape beside a slow one: %.200s", buf);
    CHECK_MSG(took < 500, "a scrape beside a slow scraper took %.0f ms", took);
    pthread_join(slow.tid, NULL);
    double held = slow.closed_ms < 0 ? -1 : slow.closed_ms - slow.connected_ms;
    CHECK_MSG(held >= 0 && held < METRICS_LISTEN_DEADLINE_MS + 1000,
              "a scraper trickling a byte every 0.9 s was held %.0f ms (-1: never cut off)", held);
    /* a silent connection and a trickling one while the run ends */
    int silent = tcp_open(port, 1000);
    trickler_start(&slow, port, 6000);
    sleep_ms(300);
    double t0 = now_ms();
    metrics_listen_close(m);
    double closing = now_ms() - t0;
    CHECK_MSG(closing < 300, "metrics_listen_close took %.0f ms beside a slow scraper", closing);
    pthread_join(slow.tid, NULL);
    CHECK_MSG(slow.closed_ms > 0 && slow.closed_ms - t0 < 1500,
              "the slow scraper's connection outlived the listener");
    close(silent);
    live_free(l);
}

/* Sixty-four connections that never send a byte fill every slot: a scrape
 * after them waits in the backlog for their deadline and no longer. */
TEST(defects_listen_every_slot_held_waits_one_deadline) {
    live_stats *l = live_new(1);
    live_start(l, mono_us());
    char err[256];
    metrics_listen *m = metrics_listen_open("127.0.0.1:0", err, sizeof err);
    CHECK_MSG(m, "%s", err);
    int port = metrics_listen_port(m), idle[METRICS_LISTEN_CONNS];
    metrics_listen_start(m, l, "r", "http://x");
    for (int i = 0; i < METRICS_LISTEN_CONNS; i++)
        idle[i] = tcp_open(port, 1000);
    sleep_ms(100);
    static char buf[1 << 16];
    double took = scrape(port, buf, sizeof buf, 6000);
    CHECK_MSG(strstr(buf, "HTTP/1.1 200 OK"), "no answer behind full slots: %.200s", buf);
    CHECK_MSG(took < METRICS_LISTEN_DEADLINE_MS + 1000, "the scrape behind them took %.0f ms",
              took);
    for (int i = 0; i < METRICS_LISTEN_CONNS; i++)
        close(idle[i]);
    metrics_listen_close(m);
    live_free(l);
}
