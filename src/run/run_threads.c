/* run_threads: `run --threads N`: the measured schedule split over N client
 * threads. Request i goes to thread i % N (deterministic), each thread with
 * its own event loop and connections, all writing the same row files and
 * sharing one t=0, agreed on once every thread has opened its connections
 * (--preconnect): t=0 is then a few milliseconds ahead, so every thread
 * is waiting for it. Their records are merged for the summary. Only the
 * first thread samples /metrics and the GPUs. */
#include "client/errorlog.h"
#include "client/rowwriter.h"
#include "common/clock.h"
#include "common/util.h"
#include "run/run_ctx.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The threads' meeting point before t=0. */
typedef struct start_line {
    pthread_barrier_t ready, agreed;
    int64_t t0;
    int preset; /* t0 was given (--start-at) */
} start_line;

static int64_t agree_t0(void *arg) {
    start_line *s = arg;
    if (pthread_barrier_wait(&s->ready) == PTHREAD_BARRIER_SERIAL_THREAD && !s->preset)
        s->t0 = mono_us() + 5000;
    pthread_barrier_wait(&s->agreed);
    return s->t0;
}

typedef struct lg_thread {
    pthread_t tid;
    loadgen_config cfg;
    loadgen_result res;
    int64_t *due;
    uint32_t *idx;
    char err[256];
    int rc;
} lg_thread;

static void *thread_main(void *arg) {
    lg_thread *t = arg;
    t->rc = loadgen_run(&t->cfg, &t->res, t->err, sizeof t->err);
    return NULL;
}

int run_threads(const loadgen_config *base, int n_threads, loadgen_result *res, char *err,
                int errlen) {
    row_writer shared;
    if (row_writer_open(&shared, base->out_dir, err, errlen))
        return -1;
    lg_thread *t = xcalloc((size_t)n_threads, sizeof *t);
    start_line line;
    pthread_barrier_init(&line.ready, NULL, (unsigned)n_threads);
    pthread_barrier_init(&line.agreed, NULL, (unsigned)n_threads);
    line.t0 = base->t0_us;
    line.preset = base->t0_us != 0;
    int share = (base->preconnect + n_threads - 1) / n_threads;
    for (int k = 0; k < n_threads; k++) {
        size_t cnt = 0;
        for (size_t i = (size_t)k; i < base->n; i += (size_t)n_threads)
            cnt++;
        t[k].due = xmalloc((cnt ? cnt : 1) * sizeof *t[k].due);
        t[k].idx = xmalloc((cnt ? cnt : 1) * sizeof *t[k].idx);
        size_t j = 0;
        for (size_t i = (size_t)k; i < base->n; i += (size_t)n_threads, j++) {
            t[k].due[j] = base->due_us[i];
            t[k].idx[j] = base->indices ? base->indices[i] : (uint32_t)(base->first_index + i);
        }
        t[k].cfg = *base;
        t[k].cfg.due_us = t[k].due;
        t[k].cfg.n = cnt;
        t[k].cfg.indices = t[k].idx;
        t[k].cfg.t0_when_ready = agree_t0;
        t[k].cfg.t0_arg = &line;
        t[k].cfg.preconnect = share < (int)cnt ? share : (int)cnt;
        t[k].cfg.shared_rows = &shared;
        if (k > 0) {
            t[k].cfg.metrics_url = NULL;
            t[k].cfg.gpu = NULL;
            t[k].cfg.server_pid = 0;
        }
    }
    for (int k = 0; k < n_threads; k++)
        pthread_create(&t[k].tid, NULL, thread_main, &t[k]);
    for (int k = 0; k < n_threads; k++)
        pthread_join(t[k].tid, NULL);
    memset(res, 0, sizeof *res);
    int rc = 0;
    for (int k = 0; k < n_threads; k++) {
        loadgen_result *r = &t[k].res;
        if (t[k].rc && !rc) {
            snprintf(err, errlen, "%s", t[k].err);
            rc = -1;
        }
        for (size_t i = 0; i < r->rows.n; i++)
            rows_add(&res->rows, &r->rows.r[i]);
        rows_add_gaps_of(&res->rows, &r->rows);
        res->rows.window_output_tokens += r->rows.window_output_tokens;
        res->usage_counted += r->usage_counted;
        res->chunk_counted += r->chunk_counted;
        res->interrupted |= r->interrupted;
        client_check_merge(&res->check, &r->check);
        errorlog_merge(&res->errors, &r->errors);
        if (!res->write_error)
            res->write_error = r->write_error;
        if (k == 0) { /* the sampler's series move over */
            res->t0_unix_us = r->t0_unix_us;
            res->metrics = r->metrics;
            res->gpu = r->gpu;
            res->metrics_samples = r->metrics_samples;
            res->gpu_samples = r->gpu_samples;
            res->server_proc = r->server_proc;
        }
        rows_free(&r->rows);
        free(t[k].due);
        free(t[k].idx);
    }
    int werr = row_writer_close(&shared);
    if (errorlog_write(base->out_dir, &res->errors) && !werr)
        werr = errno ? errno : EIO;
    if (!res->write_error)
        res->write_error = werr;
    pthread_barrier_destroy(&line.ready);
    pthread_barrier_destroy(&line.agreed);
    free(t);
    return rc;
}
