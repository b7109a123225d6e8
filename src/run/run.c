/* run: executes one run in phases, each returning an error rather than
 * ending the process (a sweep goes on to its next run):
 *   prepare  placement, workload and schedule (run_schedule.c), output
 *            directory, headers, the server probe and the GPUs
 *            (run_target.c): all bad input is found here, before any
 *            traffic (OUTCOME_BAD_INPUT)
 *   warmup   requests sent first and not counted (run_measure.c)
 *   measure  the schedule through loadgen, on one or several threads,
 *            with its watchers (run_measure.c)
 *   finish   meta.json and summary.json, each through a temporary name
 *            (run_files.c), and the outcome.
 * A prediction's rows in memory (run_predict_rows) take the same steps
 * without files. This file holds the order of the phases, the output
 * directory and what a run releases. */
#include "run/run.h"
#include "client/fdbudget.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/files.h"
#include "common/stop.h"
#include "common/util.h"
#include "run/metrics_listen.h"
#include "run/run_ctx.h"
#include "run/virtual_client.h"
#include "rundir/outdir.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int run_fail(run_result *rr, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rr->error, sizeof rr->error, fmt, ap);
    va_end(ap);
    return -1;
}

/* --out: made, locked for this run, and holding no earlier run's files (or
 * cleared of them with --force), so two runs' rows never mix. */
static int prepare_out(run_ctx *x, run_result *rr) {
    if (!x->o.out) {
        char ts[40];
        utc_now_iso(ts, sizeof ts);
        for (char *p = ts; *p; p++)
            if (*p == ':' || *p == '.')
                *p = '-';
        snprintf(x->out_default, sizeof x->out_default, "out/run-%s", ts);
        x->o.out = x->out_default;
    }
    const char *out = x->o.out;
    snprintf(rr->out, sizeof rr->out, "%s", out);
    char err[4400];
    if (strlen(out) > OUT_DIR_MAX)
        return run_fail(rr, "--out: the path has %zu characters (at most %d)", strlen(out),
                        OUT_DIR_MAX);
    if (mkdir_p(out))
        return run_fail(rr, "--out %s: cannot create directory: %s", out, strerror(errno));
    if (dir_lock(out, &x->lock_fd, err, sizeof err))
        return run_fail(rr, "--out %s", err);
    char campaign[4200];
    snprintf(campaign, sizeof campaign, "%s/campaign.json", out);
    if (access(campaign, F_OK) == 0) /* a sweep's: its report would pool this run */
        return run_fail(rr,
                        "--out %s holds a campaign (campaign.json): give the run a directory of "
                        "its own",
                        out);
    if (outdir_take(out, x->o.force, err, sizeof err))
        return run_fail(rr, "--out %s", err);
    return 0;
}

/* Everything before traffic; -1 means bad input (OUTCOME_BAD_INPUT). */
static int prepare(run_ctx *x, run_result *rr) {
    char err[512];
    if (run_opts_validate(&x->o, err, sizeof err)) /* a sweep's runs come here unchecked */
        return run_fail(rr, "%s", err);
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    stop_install();
    /* Placement first: the client threads inherit both. */
    if (x->o.cpus && cpus_pin(x->o.cpus, err, sizeof err))
        return run_fail(rr, "%s", err);
    x->priority = x->o.realtime ? cpus_realtime() : "off";
    if (run_schedule_prepare(x, rr))
        return -1;
    fd_demand fds = {(int)x->o.concurrency, x->o.threads, x->due, x->n, x->o.timeout_s};
    if (!x->o.predict && fd_budget_check(&fds, err, sizeof err))
        return run_fail(rr, "%s", err);
    /* every connection the run may hold, before any thread exists (util.h) */
    if (!x->o.predict)
        fd_table_reserve(
            256 + (long)(x->o.concurrency > 0 ? x->o.concurrency * x->o.threads : (int64_t)x->n));
    if (run_target_headers(x, rr) || prepare_out(x, rr))
        return -1;
    if (x->o.metrics_listen && !(x->ml = metrics_listen_open(x->o.metrics_listen, err, sizeof err)))
        return run_fail(rr, "%s", err);
    if (x->ml) {
        x->ml_port = metrics_listen_port(x->ml);
        if (!x->o.quiet)
            metrics_listen_announce(x->ml);
    }
    run_measure_watchers(x);
    run_target_prepare(x);
    run_target_words(x);
    utc_now_iso(x->started, sizeof x->started);
    return 0;
}

static void release(run_ctx *x) {
    metrics_listen_close(x->ml); /* before the counters it reads */
    live_free(x->live);
    if (x->have_res) {
        rows_free(&x->res.rows);
        series_set_free(&x->res.metrics);
        series_set_free(&x->res.gpu);
    }
    gpu_close(x->gpu);
    if (x->probed)
        probe_free(&x->probe);
    curl_slist_free_all(x->headers);
    json_decref(x->extra_body);
    answer_spec_free(&x->answers);
    json_decref(x->spec_before);
    json_decref(x->spec_after);
    if (x->w_loaded)
        workload_free(&x->w);
    free(x->due);
    free(x->shard_idx);
    free(x->base);
    free(x->kept_words);
    json_decref(x->tokenizer);
    dir_unlock(x->lock_fd);
}

outcome run_execute(const run_opts *opts, json_t *cmdline, json_t *extra_meta, run_result *rr) {
    memset(rr, 0, sizeof *rr);
    run_ctx *x = xcalloc(1, sizeof *x);
    x->o = *opts;
    x->lock_fd = -1;
    if (prepare(x, rr)) {
        rr->done = OUTCOME_BAD_INPUT;
    } else {
        /* A stop during the warmup still measures: loadgen then sends
         * nothing, every scheduled request becomes a cancelled row, and
         * meta.json and summary.json are written, marked interrupted. */
        run_measure_warmup(x);
        if (run_measure(x, rr)) {
            rr->done = OUTCOME_FAILED;
        } else {
            int meta_rc = run_write_meta(x, cmdline, extra_meta);
            cmdline = extra_meta = NULL; /* stolen */
            rr->done = run_write_summary(x, meta_rc, rr);
            rr->watch_stopped = x->res.watch_stopped;
        }
    }
    json_decref(cmdline);
    json_decref(extra_meta);
    release(x);
    free(x);
    return rr->done;
}

outcome run_predict_rows(const run_opts *opts, run_rows *rows, char *err, int errlen) {
    memset(rows, 0, sizeof *rows);
    run_ctx *x = xcalloc(1, sizeof *x);
    run_result rr;
    memset(&rr, 0, sizeof rr);
    x->o = *opts;
    x->lock_fd = -1;
    outcome done = OUTCOME_OK;
    if (run_opts_validate(&x->o, rr.error, sizeof rr.error) || run_schedule_prepare(x, &rr) ||
        run_target_headers(x, &rr))
        done = OUTCOME_BAD_INPUT;
    if (done == OUTCOME_OK) {
        run_target_prepare(x);
        run_target_words(x);
        x->lc.due_us = x->due;
        x->lc.n = x->n;
        run_schedule_turns(x);
        if (x->o.watch) {
            x->lc.watch = x->o.watch->fn;
            x->lc.watch_arg = x->o.watch->arg;
        }
        if (virtual_client_run(&x->lc, x->o.predict, &x->res, rr.error, sizeof rr.error))
            done = OUTCOME_FAILED;
        else {
            *rows = x->res.rows; /* the caller's now */
            memset(&x->res.rows, 0, sizeof x->res.rows);
            x->have_res = 1;
            if (x->res.interrupted)
                done = OUTCOME_STOPPED;
        }
    }
    if (done != OUTCOME_OK)
        snprintf(err, errlen, "%s", rr.error);
    release(x);
    free(x);
    return done;
}
