/* metrics_listen: one thread answers every scrape, with non-blocking
 * sockets and one poll() over the listening socket and the open
 * connections (at most METRICS_LISTEN_CONNS at once, taken from the
 * backlog at most METRICS_LISTEN_RATE a second: a scrape costs ~0.15 ms of
 * this thread and the kernel's work on its connection, which a flood of
 * them would take from the client's loop). A connection has METRICS_LISTEN_DEADLINE_MS from its
 * accept to send its request line and take the answer, then is closed whatever it did: a scraper
 * that trickles a byte a second, or never reads, holds its own slot for that long and no one else's
 * turn, and the run's end never waits on it (a pipe wakes the poll, and nothing else blocks). The
 * answer is built from one snapshot, so its counters agree with each other; each histogram's
 * buckets are written cumulative (`le`), with _sum and _count, as the exposition format wants.
 * Label values are escaped (backslash, quote, newline). The thread is a
 * watcher (cpus_watcher_thread: the idle priority), so on busy cores the
 * scrapes wait for them rather than the client for the scrapes. */
#include "run/metrics_listen.h"
#include "common/notice.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct metrics_listen {
    int fd, port;
    int wake[2];     /* a byte in wake[1] ends the thread's poll */
    char where[300]; /* "http://HOST:PORT/metrics", as bound */
    int announced;
    pthread_t tid;
    int started;
    atomic_int stop;
    live_reader *live;
    int64_t next_accept_us; /* no connection is taken before (the rate bound) */
    double cpu_s;           /* the thread's CPU time, taken as it ends */
    char run[256], url[512];
};

metrics_listen *metrics_listen_open(const char *host_port, char *err, size_t errlen) {
    const char *colon = strrchr(host_port, ':');
    long port;
    char host[256], ps[16];
    int digits = colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1);
    if (!colon || colon == host_port || (size_t)(colon - host_port) >= sizeof host || !digits ||
        parse_int(colon + 1, &port) || port < 0 || port > 65535) {
        snprintf(err, errlen, "--metrics-listen: expected HOST:PORT (127.0.0.1:9400), got '%s'",
                 host_port);
        return NULL;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - host_port), host_port);
    snprintf(ps, sizeof ps, "%ld", port);
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, ps, &hints, &ai)) {
        snprintf(err, errlen, "--metrics-listen %s: no such IPv4 host %s", host_port, host);
        return NULL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN)) {
        snprintf(err, errlen, "--metrics-listen %s: cannot listen: %s", host_port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return NULL;
    }
    freeaddrinfo(ai);
    metrics_listen *m = xcalloc(1, sizeof *m);
    m->fd = fd;
    if (pipe2(m->wake, O_CLOEXEC)) {
        snprintf(err, errlen, "--metrics-listen %s: %s", host_port, strerror(errno));
        close(fd);
        free(m);
        return NULL;
    }
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    char addr[INET_ADDRSTRLEN] = "?";
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof addr);
    m->port = ntohs(sa.sin_port);
    snprintf(m->where, sizeof m->where, "http://%s:%d/metrics", addr, m->port);
    if (port == 0) /* nothing else can tell which port it picked */
        metrics_listen_announce(m);
    return m;
}

void metrics_listen_announce(metrics_listen *m) {
    if (m->announced)
        return;
    m->announced = 1;
    notice(notice_default(), NOTICE_INFO, "metrics on %s", m->where);
}

const char *metrics_listen_url(const metrics_listen *m) {
    return m->where;
}

int metrics_listen_port(const metrics_listen *m) {
    return m->port;
}

static void label_value(strbuf *b, const char *v) {
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            sb_printf(b, "\\%c", *v);
        else if (*v == '\n')
            sb_puts(b, "\\n");
        else
            sb_putn(b, v, 1);
    }
}

static void head(strbuf *b, const char *name, const char *type, const char *help) {
    sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void hist(strbuf *b, const char *name, const char *help, const live_hist *h) {
    head(b, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < h->n_bounds; i++) {
        cum += h->counts[i];
        sb_printf(b, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i], (unsigned long long)cum);
    }
    sb_printf(b, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
    sb_printf(b, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name, (unsigned long long)h->count);
}

void metrics_text(const live_snapshot *s, const char *run, const char *url, char **text,
                  size_t *len) {
    strbuf b = {0};
    head(&b, "servelab_run_info", "gauge", "The run being measured (always 1).");
    sb_puts(&b, "servelab_run_info{run=\"");
    label_value(&b, run ? run : "");
    sb_puts(&b, "\",url=\"");
    label_value(&b, url ? url : "");
    sb_puts(&b, "\"} 1\n");
    head(&b, "servelab_requests_scheduled", "gauge", "Requests the run's schedule holds.");
    sb_printf(&b, "servelab_requests_scheduled %zu\n", s->total);
    head(&b, "servelab_requests_sent_total", "counter", "Requests sent to the server.");
    sb_printf(&b, "servelab_requests_sent_total %zu\n", s->sent);
    head(&b, "servelab_requests_in_flight", "gauge", "Requests sent and not ended.");
    sb_printf(&b, "servelab_requests_in_flight %zu\n", s->sent > s->done ? s->sent - s->done : 0);
    head(&b, "servelab_requests_total", "counter",
         "Requests that ended, by outcome (ok or the error class).");
    for (int e = 0; e < ERR_COUNT; e++)
        sb_printf(&b, "servelab_requests_total{outcome=\"%s\"} %zu\n",
                  e == ERR_NONE ? "ok" : err_class_name(e), s->by_error[e]);
    head(&b, "servelab_output_tokens_total", "counter", "Output tokens of the requests ended.");
    sb_printf(&b, "servelab_output_tokens_total %.0f\n", s->output_tokens);
    head(&b, "servelab_run_elapsed_seconds", "gauge", "Seconds since the run's t=0.");
    sb_printf(&b, "servelab_run_elapsed_seconds %.3f\n", s->elapsed_s);
    hist(&b, "servelab_time_to_first_token_seconds",
         "Time from sending to the first output chunk, successful requests.", &s->hist[LIVE_TTFT]);
    hist(&b, "servelab_time_per_output_token_seconds",
         "(last - first output chunk) / (output tokens - 1), successful requests.",
         &s->hist[LIVE_TPOT]);
    hist(&b, "servelab_e2e_request_latency_seconds",
         "Time from sending to the end of the answer, successful requests.", &s->hist[LIVE_E2E]);
    hist(&b, "servelab_schedule_lag_seconds",
         "How late the client took each request in after it was due.", &s->hist[LIVE_LAG]);
    *text = b.s;
    *len = b.n;
}

/* One scrape's connection: its request line read into req, then its
 * answer sent from out; gone at its deadline whatever it has done. */
typedef struct scrape {
    int fd; /* -1: a free slot */
    int64_t deadline_us;
    char req[2048];
    size_t n;
    strbuf out;
    size_t sent;
    int answering; /* the request line came: out holds the answer */
} scrape;

static void scrape_close(scrape *s) {
    close(s->fd);
    s->fd = -1;
    sb_free(&s->out);
}

/* The answer to a request line, into s->out. */
static void build_answer(metrics_listen *m, scrape *s) {
    if (!strncmp(s->req, "GET /metrics ", 13) || !strncmp(s->req, "GET /metrics?", 13)) {
        live_snapshot snap;
        live_read(m->live, mono_us(), &snap);
        char *text;
        size_t len;
        metrics_text(&snap, m->run, m->url, &text, &len);
        sb_printf(&s->out,
                  "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                  len);
        sb_putn(&s->out, text, len);
        free(text);
    } else {
        sb_puts(&s->out, "HTTP/1.1 404 Not Found\r\nContent-Length: 22\r\nConnection: close\r\n\r\n"
                         "only GET /metrics here");
    }
    s->answering = 1;
}

/* The connection is ready: reads what came (the request line, however it
 * comes), or sends what the socket takes. 1 while it goes on, 0 when done
 * with (answered, gone, or a request line longer than 2,047 bytes). */
static int scrape_step(metrics_listen *m, scrape *s) {
    if (!s->answering) {
        ssize_t r = read(s->fd, s->req + s->n, sizeof s->req - 1 - s->n);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return 1;
        if (r <= 0)
            return 0;
        s->n += (size_t)r;
        s->req[s->n] = 0;
        if (!strstr(s->req, "\r\n"))
            return s->n < sizeof s->req - 1;
        build_answer(m, s);
    }
    while (s->sent < s->out.n) {
        ssize_t w = send(s->fd, s->out.s + s->sent, s->out.n - s->sent, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            return 1;
        if (w <= 0)
            return 0;
        s->sent += (size_t)w;
    }
    return 0;
}

/* A new connection into a free slot (the caller saw one); the next not
 * before 1/METRICS_LISTEN_RATE s after this one was allowed. The accepts
 * keep to that grid, so a thread the host woke late takes the ones it owes
 * at once (at most METRICS_LISTEN_BURST of them): on a busy machine the
 * flood is still answered at the rate, not at the rate less the lateness
 * of every wake-up. */
static void scrape_accept(metrics_listen *m, scrape *conns) {
    int fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    int64_t now = mono_us(), period = 1000000 / METRICS_LISTEN_RATE;
    int64_t next = m->next_accept_us + period, earliest = now - METRICS_LISTEN_BURST * period;
    m->next_accept_us = next > earliest ? next : earliest;
    for (int i = 0; i < METRICS_LISTEN_CONNS; i++)
        if (conns[i].fd < 0) {
            conns[i] = (scrape){.fd = fd, .deadline_us = now + METRICS_LISTEN_DEADLINE_MS * 1000};
            return;
        }
    close(fd);
}

/* The poll set: the wake pipe, every connection, and the socket while a
 * slot is free and the rate allows; the wait until the nearest deadline
 * or the next accept allowed (ms). */
static int poll_set(metrics_listen *m, scrape *conns, struct pollfd *p, int *np) {
    int n = 0, open = 0;
    int64_t now = mono_us(), first = now + 60000000;
    p[n++] = (struct pollfd){m->wake[0], POLLIN, 0};
    for (int i = 0; i < METRICS_LISTEN_CONNS; i++) {
        scrape *s = &conns[i];
        if (s->fd < 0)
            continue;
        open++;
        if (s->deadline_us < first)
            first = s->deadline_us;
        p[n++] = (struct pollfd){s->fd, s->answering ? POLLOUT : POLLIN, 0};
    }
    if (open < METRICS_LISTEN_CONNS && now >= m->next_accept_us)
        p[n++] = (struct pollfd){m->fd, POLLIN, 0};
    else if (open < METRICS_LISTEN_CONNS && m->next_accept_us < first)
        first = m->next_accept_us;
    *np = n;
    return first <= now ? 0 : (int)((first - now + 999) / 1000);
}

/* One thread, many connections at once (non-blocking, one poll): a slow
 * or silent scraper holds its own slot until its deadline and nobody
 * else's turn; a flood of scrapers waits in the backlog, taken at
 * METRICS_LISTEN_RATE a second. */
static void *listen_main(void *arg) {
    metrics_listen *m = arg;
    cpus_watcher_thread();
    scrape conns[METRICS_LISTEN_CONNS];
    for (int i = 0; i < METRICS_LISTEN_CONNS; i++)
        conns[i] = (scrape){.fd = -1};
    struct pollfd p[METRICS_LISTEN_CONNS + 2];
    while (!atomic_load(&m->stop)) {
        int n, wait_ms = poll_set(m, conns, p, &n);
        if (poll(p, (nfds_t)n, wait_ms) < 0 && errno != EINTR)
            break;
        int64_t now = mono_us();
        for (int i = 0, k = 1; i < METRICS_LISTEN_CONNS; i++) {
            scrape *s = &conns[i];
            if (s->fd < 0)
                continue;
            short ev = p[k++].revents;
            if (now >= s->deadline_us || (ev && !scrape_step(m, s)))
                scrape_close(s);
        }
        if (p[n - 1].fd == m->fd && (p[n - 1].revents & POLLIN))
            scrape_accept(m, conns);
    }
    for (int i = 0; i < METRICS_LISTEN_CONNS; i++)
        if (conns[i].fd >= 0)
            scrape_close(&conns[i]);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    m->cpu_s = ts.tv_sec + ts.tv_nsec / 1e9;
    return NULL;
}

void metrics_listen_start(metrics_listen *m, live_stats *l, const char *run, const char *url) {
    m->live = live_reader_new(l);
    snprintf(m->run, sizeof m->run, "%s", run ? run : "");
    snprintf(m->url, sizeof m->url, "%s", url ? url : "");
    m->started = pthread_create(&m->tid, NULL, listen_main, m) == 0;
}

/* The thread never blocks but in its poll, which the wake pipe ends: the
 * join waits for one round of it, however slow its scrapers. */
double metrics_listen_close(metrics_listen *m) {
    if (!m)
        return 0;
    if (m->started) {
        atomic_store(&m->stop, 1);
        ssize_t w = write(m->wake[1], "x", 1);
        (void)w;
        pthread_join(m->tid, NULL);
    }
    close(m->wake[0]);
    close(m->wake[1]);
    close(m->fd);
    live_reader_free(m->live);
    double cpu_s = m->cpu_s;
    free(m);
    return cpu_s;
}
