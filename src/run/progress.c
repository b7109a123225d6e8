/* progress: a thread that wakes every 100 ms to see whether the run ended
 * and draws when its period is up. The drawn block is rewritten in place:
 * the cursor goes back up over the lines drawn last time and each line is
 * cleared before it is written, so output from elsewhere (a warning) only
 * pushes the block down. The estimate of what is left is the schedule's
 * remaining arrivals plus the recent median E2E for the last of them to
 * finish: an open-loop run ends when its last request does, whatever the
 * rate of ends so far. */
#include "run/progress.h"
#include "common/notice.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct progress {
    live_reader *live;
    progress_opts o;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    int drawn; /* lines of the block on the screen */
};

static void ms_text(double ms, char *b, size_t n) {
    if (isnan(ms))
        snprintf(b, n, "-");
    else if (ms < 10)
        snprintf(b, n, "%.2f ms", ms);
    else if (ms < 10000)
        snprintf(b, n, "%.0f ms", ms);
    else
        snprintf(b, n, "%.1f s", ms / 1000);
}

static void failed_text(const live_snapshot *s, char *b, size_t n) {
    size_t k = (size_t)snprintf(b, n, "%zu failed", s->failed);
    const char *sep = " (";
    for (int e = 1; e < ERR_COUNT && k < n; e++)
        if (s->by_error[e]) {
            k += (size_t)snprintf(b + k, n - k, "%s%s %zu", sep, err_class_name(e), s->by_error[e]);
            sep = ", ";
        }
    if (s->failed && k < n)
        snprintf(b + k, n - k, ")");
}

/* Seconds left: the arrivals still to come, then the recent median E2E. */
static double eta_s(const live_snapshot *s, const progress_opts *o) {
    if (s->done >= s->total)
        return 0;
    double arrivals = fmax(0, o->last_due_s - s->elapsed_s);
    double tail = isnan(s->recent_e2e_p50_ms) ? 0 : s->recent_e2e_p50_ms / 1000;
    return arrivals + tail;
}

static void parts(const live_snapshot *s, const progress_opts *o, char (*p)[160]) {
    char failed[120], t50[24], t95[24], tp[24];
    failed_text(s, failed, sizeof failed);
    size_t in_flight = s->sent > s->done ? s->sent - s->done : 0;
    snprintf(p[0], 160, "%zu/%zu done, %zu in flight, %s", s->done, s->total, in_flight, failed);
    double rate = s->elapsed_s > 0 ? (double)s->sent / s->elapsed_s : 0;
    snprintf(p[1], 160, "%.1f s elapsed, ETA %.0f s, %.2f req/s sent, %.0f output tok/s",
             s->elapsed_s, eta_s(s, o), rate,
             s->elapsed_s > 0 ? s->output_tokens / s->elapsed_s : 0);
    ms_text(s->recent_ttft_p50_ms, t50, sizeof t50);
    ms_text(s->recent_ttft_p95_ms, t95, sizeof t95);
    ms_text(s->recent_tpot_p50_ms, tp, sizeof tp);
    snprintf(p[2], 160, "last 10 s: TTFT p50 %s, p95 %s, TPOT p50 %s (%zu requests)", t50, t95, tp,
             s->recent_n);
}

void progress_line(const live_snapshot *s, const progress_opts *o, char *buf, size_t n) {
    char p[3][160];
    parts(s, o, p);
    snprintf(buf, n, "servelab: %s%s%s; %s; %s", o->label ? o->label : "", o->label ? ": " : "",
             p[0], p[1], p[2]);
}

static void draw(progress *g, const live_snapshot *s) {
    char p[3][160];
    parts(s, &g->o, p);
    FILE *f = g->o.to;
    if (g->drawn)
        fprintf(f, "\r\033[%dA", g->drawn);
    fprintf(f, "\r\033[Kservelab run%s%s\n", g->o.label ? " - " : "", g->o.label ? g->o.label : "");
    fprintf(f, "\033[K  requests  %s\n", p[0]);
    fprintf(f, "\033[K  time      %s\n", p[1]);
    fprintf(f, "\033[K  latency   %s\n", p[2]);
    fflush(f);
    g->drawn = 4;
}

static void show(progress *g) {
    live_snapshot s;
    live_read(g->live, mono_us(), &s);
    if (!s.started)
        return;
    if (g->o.mode == PROGRESS_DRAW) {
        draw(g, &s);
        return;
    }
    char line[600];
    progress_line(&s, &g->o, line, sizeof line);
    fprintf(g->o.to, "%s\n", line);
    fflush(g->o.to);
}

static void *progress_main(void *arg) {
    progress *g = arg;
    cpus_watcher_thread();
    double period = g->o.mode == PROGRESS_DRAW ? 0.5 : g->o.interval_s;
    int64_t next = mono_us() + (int64_t)(period * 1e6);
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cond, &g->lock, &ts);
        if (g->stop || mono_us() < next)
            continue;
        pthread_mutex_unlock(&g->lock);
        show(g);
        next += (int64_t)(period * 1e6);
        if (next < mono_us())
            next = mono_us() + (int64_t)(period * 1e6);
        pthread_mutex_lock(&g->lock);
    }
    pthread_mutex_unlock(&g->lock);
    show(g); /* the run's last state */
    return NULL;
}

progress *progress_start(live_stats *l, const progress_opts *o) {
    if (o->mode == PROGRESS_OFF || !l)
        return NULL;
    progress *g = xcalloc(1, sizeof *g);
    g->live = live_reader_new(l);
    g->o = *o;
    if (!g->o.to && notice_default())
        g->o.to = notice_default()->term;
    pthread_mutex_init(&g->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&g->tid, NULL, progress_main, g)) {
        pthread_cond_destroy(&g->cond);
        pthread_mutex_destroy(&g->lock);
        live_reader_free(g->live);
        free(g);
        return NULL;
    }
    return g;
}

void progress_stop(progress *g) {
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->tid, NULL);
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
    live_reader_free(g->live);
    free(g);
}
