/* metrics_listen: a blocking accept loop on its own thread, woken every
 * 200 ms by poll() to see whether the run ended. The answer is built from
 * one snapshot, so its counters agree with each other; each histogram's
 * buckets are written cumulative (`le`), with _sum and _count, as the
 * exposition format wants. Label values are escaped (backslash, quote,
 * newline). */
#include "run/metrics_listen.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <errno.h>
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
#include <unistd.h>

struct metrics_listen {
    int fd, port;
    pthread_t tid;
    int started;
    atomic_int stop;
    live_reader *live;
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
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
        snprintf(err, errlen, "--metrics-listen %s: cannot listen: %s", host_port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return NULL;
    }
    freeaddrinfo(ai);
    metrics_listen *m = xcalloc(1, sizeof *m);
    m->fd = fd;
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    m->port = ntohs(sa.sin_port);
    return m;
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

/* Reads the request line (enough of it), answers, closes. */
static void answer(metrics_listen *m, int c) {
    char req[2048];
    size_t n = 0;
    req[0] = 0;
    while (n < sizeof req - 1 && !strstr(req, "\r\n")) { /* the request line, however it comes */
        struct pollfd p = {c, POLLIN, 0};
        ssize_t r = poll(&p, 1, 1000) == 1 ? read(c, req + n, sizeof req - 1 - n) : -1;
        if (r <= 0)
            break;
        n += (size_t)r;
        req[n] = 0;
    }
    if (!strstr(req, "\r\n")) {
        close(c);
        return;
    }
    strbuf out = {0};
    if (!strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13)) {
        live_snapshot s;
        live_read(m->live, mono_us(), &s);
        char *text;
        size_t len;
        metrics_text(&s, m->run, m->url, &text, &len);
        sb_printf(&out,
                  "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                  len);
        sb_putn(&out, text, len);
        free(text);
    } else {
        sb_puts(&out, "HTTP/1.1 404 Not Found\r\nContent-Length: 22\r\nConnection: close\r\n\r\n"
                      "only GET /metrics here");
    }
    for (size_t off = 0; off < out.n;) {
        ssize_t w = send(c, out.s + off, out.n - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    sb_free(&out);
    close(c);
}

static void *listen_main(void *arg) {
    metrics_listen *m = arg;
    cpus_watcher_thread();
    while (!atomic_load(&m->stop)) {
        struct pollfd p = {m->fd, POLLIN, 0};
        if (poll(&p, 1, 200) != 1)
            continue;
        int c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);
        if (c >= 0)
            answer(m, c);
    }
    return NULL;
}

void metrics_listen_start(metrics_listen *m, live_stats *l, const char *run, const char *url) {
    m->live = live_reader_new(l);
    snprintf(m->run, sizeof m->run, "%s", run ? run : "");
    snprintf(m->url, sizeof m->url, "%s", url ? url : "");
    m->started = pthread_create(&m->tid, NULL, listen_main, m) == 0;
}

void metrics_listen_close(metrics_listen *m) {
    if (!m)
        return;
    if (m->started) {
        atomic_store(&m->stop, 1);
        pthread_join(m->tid, NULL);
    }
    close(m->fd);
    live_reader_free(m->live);
    free(m);
}
