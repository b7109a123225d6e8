/* run_measure: the run's traffic: the warmup (its own schedule, not
 * counted), then the measured schedule through loadgen on one or several
 * threads or, for a prediction, through the engine in virtual time; with
 * the watchers that read the live counters while it goes (the progress
 * display, --metrics-listen), the server's speculative-decoding counters
 * before and after, and the client's own CPU time. */
#include "client/live.h"
#include "common/clock.h"
#include "common/notice.h"
#include "common/util.h"
#include "run/metrics_listen.h"
#include "run/progress.h"
#include "run/run_ctx.h"
#include "run/virtual_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* --progress plain prints, even with --quiet (asked for by name); auto
 * draws on a terminal only, unless --quiet (a sweep's runs are quiet, and
 * the sweep says with --progress off whether their progress shows). */
static progress_mode progress_mode_of(const run_opts *o) {
    if (!o->progress || !strcmp(o->progress, "off"))
        return PROGRESS_OFF;
    if (!strcmp(o->progress, "plain"))
        return PROGRESS_PLAIN;
    return (!o->quiet || o->progress_label) && isatty(2) ? PROGRESS_DRAW : PROGRESS_OFF;
}

/* The live counters, only when something watches them (the progress
 * display, --metrics-listen); /metrics answers from here on, the warmup
 * included (its requests are not counted). */
void run_measure_watchers(run_ctx *x) {
    if (progress_mode_of(&x->o) == PROGRESS_OFF && !x->ml)
        return;
    x->live = live_new(x->n);
    if (x->ml) {
        char *url = redact_url(x->o.url); /* never a password in a label */
        metrics_listen_start(x->ml, x->live, x->o.progress_label ? x->o.progress_label : x->o.out,
                             url);
        free(url);
    }
}

/* The warmup requests: their own schedule (seed + 1) and request indices
 * after the measured ones, no rows. */
void run_measure_warmup(run_ctx *x) {
    if (x->o.warmup <= 0)
        return;
    int64_t *wdue;
    size_t wn = arrivals_generate(&x->arrivals, (uint64_t)x->o.seed + 1, (size_t)x->o.warmup,
                                  INT64_MAX, &wdue);
    loadgen_config wc = x->lc;
    wc.due_us = wdue;
    wc.n = wn;
    wc.first_index = x->n_all; /* after the whole schedule's, sharded or not */
    wc.indices = NULL;
    if (workload_multi_turn(&x->w)) /* the first turns of the warmup's conversations, alone */
        wc.indices = x->w.conv.first + x->n;
    wc.out_dir = NULL;
    wc.live = NULL; /* the warmup is not counted */
    loadgen_result wr;
    char err[512];
    if (loadgen_run(&wc, &wr, err, sizeof err))
        notice_warn("warmup: %s", err);
    rows_free(&wr.rows);
    series_set_free(&wr.metrics);
    series_set_free(&wr.gpu);
    free(wdue);
}

static double process_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* A prediction's speculative-decoding counters, as a server's /metrics
 * would give them (client/probe.h's object): the engine's at the end, or
 * zeros for the start. NULL when the engine drafts nothing. */
static json_t *predicted_spec_counters(const virtual_target *t, int at_end) {
    if (!t->stats || t->engine.spec_tokens <= 0)
        return NULL;
    const engine_stats *st = t->stats;
    json_t *per = json_array();
    for (int i = 0; i < t->engine.spec_tokens; i++)
        json_array_append_new(per, json_real(at_end ? (double)st->spec_accepted_per_pos[i] : 0));
    return json_pack("{s:s,s:f,s:f,s:f,s:o}", "source", "vllm", "num_drafts",
                     at_end ? (double)st->spec_drafts_total : 0, "num_draft_tokens",
                     at_end ? (double)st->spec_draft_tokens_total : 0, "num_accepted_tokens",
                     at_end ? (double)st->spec_accepted_total : 0, "num_accepted_tokens_per_pos",
                     per);
}

/* The measured schedule; -1 when it could not start (its output files). */
int run_measure(run_ctx *x, run_result *rr) {
    char err[512];
    x->lc.due_us = x->due;
    x->lc.n = x->n;
    x->lc.out_dir = x->o.out;
    run_schedule_turns(x);
    if (x->shard_idx)
        x->lc.indices = x->shard_idx;
    if (x->start_at_us) {
        x->lc.t0_us = mono_at_wall(x->start_at_us);
        if (x->lc.t0_us < mono_us())
            notice_warn(
                "--start-at: t=0 passed %.3f s ago (during the warmup?): the first requests "
                "go late, and their lag_ms says by how much",
                (mono_us() - x->lc.t0_us) / 1e6);
    }
    if (x->o.watch &&
        (x->o.threads <= 1 || x->o.predict)) { /* not for the warmup, which copied lc before */
        x->lc.watch = x->o.watch->fn;
        x->lc.watch_arg = x->o.watch->arg;
    }
    /* the watchers: the progress display and --metrics-listen */
    if (x->live)
        live_set_total(x->live, x->lc.total ? x->lc.total : x->n);
    x->lc.live = x->live;
    progress_opts po = {.mode = progress_mode_of(&x->o),
                        .interval_s = x->o.progress_interval_s,
                        .label = x->o.progress_label,
                        .last_due_s = x->n ? x->due[x->n - 1] / 1e6 : 0};
    progress *pg = progress_start(x->live, &po);
    int counters = !x->o.predict && !x->o.no_sampling;
    if (counters)
        x->spec_before = probe_spec_counters(x->metrics_url, x->headers, x->o.insecure);
    double cpu0 = process_cpu_s();
    int rc = x->o.predict ? virtual_client_run(&x->lc, x->o.predict, &x->res, err, sizeof err)
             : x->o.threads <= 1 ? loadgen_run(&x->lc, &x->res, err, sizeof err)
                                 : run_threads(&x->lc, x->o.threads, &x->res, err, sizeof err);
    progress_stop(pg);
    if (counters && x->spec_before)
        x->spec_after = probe_spec_counters(x->metrics_url, x->headers, x->o.insecure);
    if (x->o.predict && rc == 0) {
        x->spec_before = predicted_spec_counters(x->o.predict, 0);
        x->spec_after = predicted_spec_counters(x->o.predict, 1);
    }
    double listen_cpu_s = metrics_listen_close(x->ml); /* the listener's, not the client's */
    x->ml = NULL;
    x->lc.live = NULL;
    live_free(x->live);
    x->live = NULL;
    if (rc)
        return run_fail(rr, "%s", err);
    x->have_res = 1;
    x->res.cpu_s = process_cpu_s() - cpu0 - listen_cpu_s;
    return 0;
}
