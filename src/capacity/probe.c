/* probe: one probe of the search (see probe.h). The verdict is read back
 * from requests.csv rather than taken from the run in memory, so that
 * what the search decided is what `servelab report` shows for the same
 * directory. */
#include "capacity/probe.h"
#include "capacity/binomial.h"
#include "capacity/saturation.h"
#include "common/clock.h"
#include "common/csv.h"
#include "common/files.h"
#include "common/stop.h"
#include "common/util.h"
#include "report/load.h"
#include "target/sim_proc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most common failure in the probe's errors.csv, in the server's (or
 * the system's) words: "connect: Connection refused", "http 500: ...".
 * Nothing when it has none. */
static void read_error_words(const char *dir, probe *p) {
    if (strlen(dir) > 4200)
        return;
    char path[4300];
    snprintf(path, sizeof path, "%s/errors.csv", dir);
    csv_file f;
    if (csv_open(&f, path))
        return;
    csv_row row;
    double best = 0;
    int first = 1;
    while (csv_next(&f, &row)) {
        if (first || row.n < 5 || row.error) { /* the header, or not a row of ours */
            first = 0;
            continue;
        }
        double count = 0, status_v = 0;
        csv_number(&row, 2, &count);
        csv_number(&row, 1, &status_v);
        if (!(count > best) || !strncmp(row.f[0], "cancelled", row.len[0]))
            continue;
        best = count;
        size_t body = row.len[4];
        const char *nl = memchr(row.f[4], '\n', body);
        if (nl)
            body = (size_t)(nl - row.f[4]);
        int status = isnan(status_v) ? 0 : (int)status_v;
        char st[16] = "";
        if (status > 0)
            snprintf(st, sizeof st, " %d", status);
        snprintf(p->error_words, sizeof p->error_words, "%.*s%s%s%.*s", (int)row.len[0], row.f[0],
                 st, body ? ": " : "", (int)(body > 120 ? 120 : body), row.f[4]);
    }
    csv_close(&f);
}

/* How the misses fall over MISS_BATCHES slices of arrival time: the share
 * of them in the slice that has most. Near a server's limit misses come in
 * bursts, when a queue builds, and a run with one such burst among long
 * quiet stretches says little of how often the long run has them. */
#define MISS_BATCHES 8
static double misses_in_one_slice(const req_rec *r, size_t n, double last_due,
                                  const slo_spec *slo) {
    long missed[MISS_BATCHES] = {0}, all = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].error == ERR_CANCELLED || !request_slo_misses(&r[i], slo))
            continue;
        int b = last_due > 0 ? (int)(r[i].scheduled_ms / last_due * MISS_BATCHES) : 0;
        b = b < 0 ? 0 : b >= MISS_BATCHES ? MISS_BATCHES - 1 : b;
        missed[b]++;
        all++;
    }
    for (int b = 0; b < MISS_BATCHES; b++)
        most = missed[b] > most ? missed[b] : most;
    return all ? (double)most / (double)all : 0;
}

/* The probe's batches for its level (search.c): a run that went the whole
 * way in MISS_BATCHES slices of its arrival time, each its requests and
 * misses; a run stopped as lost as one batch of the requests whose verdict
 * it shows (those cut short with no verdict yet are left out). */
static void batch_counts(const req_rec *r, size_t n, double last_due, const slo_spec *slo,
                         probe *p) {
    memset(p->batch_n, 0, sizeof p->batch_n);
    memset(p->batch_missed, 0, sizeof p->batch_missed);
    if (p->stopped) {
        p->n_batches = 1;
        p->batch_n[0] = p->requests - p->unfinished;
        p->batch_missed[0] = p->requests - p->met - p->unfinished;
        return;
    }
    p->n_batches = MISS_BATCHES;
    for (size_t i = 0; i < n; i++) {
        int b = last_due > 0 ? (int)(r[i].scheduled_ms / last_due * MISS_BATCHES) : 0;
        b = b < 0 ? 0 : b >= MISS_BATCHES ? MISS_BATCHES - 1 : b;
        p->batch_n[b]++;
        p->batch_missed[b] += request_slo_misses(&r[i], slo) != 0;
    }
}

static int cmp_event(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    double ax = fabs(x), ay = fabs(y);
    if (ax != ay)
        return ax < ay ? -1 : 1;
    return (x < 0) - (y < 0); /* an end (negative) before a start at the same instant */
}

/* The most requests in flight at once: sends (+t) and ends (-t) in time order. */
static long peak_in_flight(const run_rows *rows) {
    double *ev = xmalloc((2 * rows->n + 1) * sizeof *ev);
    size_t k = 0;
    for (size_t i = 0; i < rows->n; i++)
        if (!isnan(rows->r[i].sent_ms) && !isnan(rows->r[i].end_ms)) {
            ev[k++] = rows->r[i].sent_ms + 1e-9; /* never -0 */
            ev[k++] = -(rows->r[i].end_ms + 1e-9);
        }
    qsort(ev, k, sizeof *ev, cmp_event);
    long now = 0, most = 0;
    for (size_t i = 0; i < k; i++) {
        now += ev[i] > 0 ? 1 : -1;
        most = now > most ? now : most;
    }
    free(ev);
    return most;
}

/* A request the stop cut short: 1 when what it shows already misses the
 * SLO (it waited past the TTFT, TTFA or E2E bound, or its first token came
 * late), 0 when its verdict is unknown. */
static int cut_short_missed(const req_rec *r, const slo_spec *slo) {
    if (isnan(r->sent_ms) || isnan(r->end_ms))
        return 0; /* never sent: it shows nothing */
    double waited = r->end_ms - r->sent_ms;
    if (slo->e2e_ms > 0 && waited > slo->e2e_ms)
        return 1;
    if (slo->ttft_ms > 0 && (isnan(r->first_ms) ? waited : r->first_ms - r->sent_ms) > slo->ttft_ms)
        return 1;
    return slo->ttfa_ms > 0 && isnan(request_answer_ms(r)) && waited > slo->ttfa_ms;
}

static int cmp_due(const void *a, const void *b) {
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return x < y ? -1 : x > y;
}

double probe_badness(const req_rec *r, size_t n_rows, long n_planned, const slo_spec *slo,
                     double goal) {
    double *due = xmalloc((2 * n_rows + 1) * sizeof *due); /* (due, missed) pairs */
    for (size_t i = 0; i < n_rows; i++) {
        int m = request_slo_misses(&r[i], slo) != 0;
        if (r[i].error == ERR_CANCELLED)
            m = cut_short_missed(&r[i], slo);
        due[2 * i] = isnan(r[i].scheduled_ms) ? INFINITY : r[i].scheduled_ms;
        due[2 * i + 1] = m;
    }
    qsort(due, n_rows, 2 * sizeof *due, cmp_due);
    double allowed = (1 - goal) * (double)n_planned, missed = 0;
    for (size_t i = 0; i < n_rows; i++) {
        missed += due[2 * i + 1];
        if (missed > allowed) {
            free(due);
            return (double)n_planned + (double)n_planned - (double)i;
        }
    }
    free(due);
    return missed;
}

/* The rows judged: met, missed by bound, cut short with no verdict; and
 * the figures at this load. */
static int judge(const probe_setup *ps, const char *dir, double unloaded_ttft_ms, probe *p,
                 char *err, int errlen) {
    run_rows rows = {0};
    run_files files;
    if (load_run(dir, 0, &rows, &files, err, errlen)) {
        for (int c = 0; c < rows.n_classes; c++)
            free((char *)rows.classes[c]);
        rows_free(&rows);
        return -1;
    }
    double busy_ms = 0;
    long ok = 0;
    for (size_t i = 0; i < rows.n; i++) {
        const req_rec *r = &rows.r[i];
        int m = request_slo_misses(r, &ps->slo);
        if (!m)
            p->met++;
        else if (r->error == ERR_CANCELLED && p->stopped && !cut_short_missed(r, &ps->slo))
            p->unfinished++;
        if (r->error != ERR_NONE)
            p->failed[r->error]++;
        for (int b = 0; b < SLO_BOUNDS; b++)
            p->missed[b] += (m >> b) & 1;
        if (!isnan(r->sent_ms) && !isnan(r->end_ms))
            busy_ms += r->end_ms - r->sent_ms;
        if (r->error == ERR_NONE) {
            p->ttft_mean_ms += r->first_ms - r->sent_ms;
            p->e2e_mean_ms += r->end_ms - r->sent_ms;
            ok++;
        }
    }
    p->ttft_mean_ms = ok ? p->ttft_mean_ms / ok : NAN;
    p->e2e_mean_ms = ok ? p->e2e_mean_ms / ok : NAN;
    summary_params sp = {.offered_rps = p->rate_rps, .slo = ps->slo, .client_cpu_s = -1};
    run_summary s;
    summarize(&rows, &sp, &s);
    p->requests = (long)rows.n;
    p->duration_s = s.duration_s;
    double last_due = 0;
    for (size_t i = 0; i < rows.n; i++)
        if (rows.r[i].scheduled_ms > last_due)
            last_due = rows.r[i].scheduled_ms;
    p->steady = steady_of(rows.r, rows.n, last_due);
    p->miss_burst = misses_in_one_slice(rows.r, rows.n, last_due, &ps->slo);
    batch_counts(rows.r, rows.n, last_due, &ps->slo, p);
    p->badness = probe_badness(rows.r, rows.n, p->requests, &ps->slo, ps->goal);
    p->not_steady = ps->keep_up_fails && !p->stopped && !ps->by_concurrency && !p->max_users &&
                    steady_growing(&p->steady, ps->wait_budget_ms, ps->horizon_s);
    if (p->max_users)
        p->tp = throughput_of(rows.r, rows.n, p->max_users, unloaded_ttft_ms);
    p->goodput_rps = s.goodput_rps;
    p->output_tokens_per_s = s.output_tokens_per_s;
    p->in_flight = s.duration_s > 0 ? busy_ms / 1000.0 / s.duration_s : NAN;
    p->peak_in_flight = peak_in_flight(&rows);
    for (int c = 0; c < rows.n_classes; c++)
        free((char *)rows.classes[c]); /* the loader's copies of the class names */
    rows_free(&rows);
    run_files_free(&files);
    return 0;
}

/* The run's options for this probe: the user's, with the load, the count,
 * the seed and the directory the search sets. */
static void probe_options(const probe_setup *ps, const probe_spec *sp, const char *url,
                          const char *dir, run_opts *ro) {
    *ro = *ps->base;
    ro->url = url;
    ro->out = dir;
    ro->quiet = 1;
    ro->quiet_client = 1; /* the search says it once, of all its probes */
    ro->print_summary = 0;
    ro->force = 0;
    ro->requests = sp->requests;
    ro->have_requests = 1;
    ro->have_duration = 0;
    ro->duration_s = 0;
    ro->seed = sp->seed;
    ro->fail_on_slo = 0;
    if (ps->by_concurrency || sp->max_users) {
        ro->rate = INFINITY;
        ro->concurrency = sp->max_users ? sp->max_users : (int64_t)sp->value;
    } else {
        ro->rate = sp->value;
        ro->concurrency = 0;
    }
}

static void name_dir(const probe_setup *ps, int number, double value, long users, probe *p) {
    if (users)
        snprintf(p->dir, sizeof p->dir, "probe-%02d-max-c%ld", number, users);
    else if (ps->by_concurrency)
        snprintf(p->dir, sizeof p->dir, "probe-%02d-c%ld", number, (long)value);
    else
        snprintf(p->dir, sizeof p->dir, "probe-%02d-%.4grps", number, value);
}

/* The verdict from the counts: the share of the requests whose verdict
 * it shows, its interval, passed. */
static void verdict(const probe_setup *ps, probe *p) {
    double shown = (double)(p->requests - p->unfinished);
    wilson_interval((double)p->met, shown > 0 ? shown : 1, BINOMIAL_Z95, &p->ci_low, &p->ci_high);
    if (!(shown > 0))
        p->ci_low = 0, p->ci_high = 1; /* it shows nothing */
    p->passed = !p->stopped && !p->not_steady && p->requests > 0 &&
                (double)p->met >= ps->goal * (double)p->requests;
}

int probe_run(const probe_setup *ps, const probe_spec *sp, probe *p, char *err, int errlen) {
    memset(p, 0, sizeof *p);
    int number = sp->number;
    double value = sp->value;
    long n = sp->requests;
    name_dir(ps, number, value, sp->max_users, p);
    p->rate_rps = ps->by_concurrency || sp->max_users ? INFINITY : value;
    p->concurrency = sp->max_users ? sp->max_users : ps->by_concurrency ? (long)value : 0;
    p->max_users = sp->max_users;
    p->seed = sp->seed;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", ps->out, p->dir);
    if (mkdir_p(dir)) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    double t0 = mono_us() / 1e6;
    server_proc sim = {0};
    const char *url = ps->base->url;
    /* the simulator's seed is the probe's, so that repeats at one load are
     * fresh evidence and not the same run counted again */
    char seed_arg[48];
    snprintf(seed_arg, sizeof seed_arg, "--seed %lld", (long long)sp->seed);
    if (ps->sim_args && !ps->vt) {
        if (sim_proc_start(&sim, ps->self, NULL, ps->sim_args, dir, seed_arg, err, errlen)) {
            server_proc_stop(&sim, 0);
            return 1;
        }
        url = sim.url;
    }
    saturation sat = {.slo = ps->slo,
                      .goal = ps->goal,
                      .planned = (size_t)n,
                      .arrivals_us =
                          ps->by_concurrency ? 0 : (int64_t)((double)(n - 1) / value * 1e6),
                      .watch_growth = !ps->by_concurrency,
                      /* near its limit a queue fills from empty for much longer than a
                       * request's latency: the first quarter of the arrivals is its fill */
                      .min_ramp_ms = ps->by_concurrency ? 0 : (double)(n - 1) / value * 250};
    saturation_init(&sat);
    if (!ps->sim_args && !ps->vt && url) { /* a server the search did not start: idle first */
        char metrics[4200];
        run_metrics_url(url, metrics, sizeof metrics);
        drain_wait(metrics, ps->headers, ps->base->insecure, ps->drain_max_s, &p->drain);
        if (p->drain.state == DRAIN_NO_GAUGES && ps->lone.url)
            drain_lone(&ps->lone, sp->lone_baseline_ms, ps->drain_max_s, &p->drain);
    } else {
        p->drain.lone_ms = p->drain.baseline_ms = NAN;
    }
    run_opts ro;
    probe_options(ps, sp, url, dir, &ro);
    ro.watch = sp->max_users ? NULL : &sat.watch; /* the throughput probe is meant to fall behind */
    virtual_target vt;
    if (ps->vt) {
        vt = *ps->vt;
        vt.seed = vt.engine.seed = (uint64_t)sp->seed;
        vt.chunks = 1; /* as a real probe keeps them: the twin is fitted to its gaps */
        ro.predict = &vt;
    }
    if (ps->sim_args && !ps->vt)
        ro.server_pid = (int)sim.pid; /* its process tree into server_proc.csv */
    json_t *extra = json_pack("{s:{s:i,s:f,s:b}}", "capacity_probe", "number", number, "value",
                              value, "by_concurrency", ps->by_concurrency);
    run_result rr;
    outcome done = run_execute(&ro, json_deep_copy(ps->command_line), extra, &rr);
    int code = outcome_exit_code(done, stop_signal()); /* probe_run's codes (probe.h) */
    if (ps->sim_args && !ps->vt)
        server_proc_stop(&sim, 5);
    p->wall_s = mono_us() / 1e6 - t0;
    p->stopped = sat.stopped;
    p->client_flagged = rr.client_flagged;
    p->client_worst_ms = rr.client_worst_ms;
    snprintf(p->why, sizeof p->why, "%s", sat.why);
    saturation_free(&sat);
    if (code == 2 || (code == 1 && rr.requests == 0)) {
        snprintf(err, errlen, "%s", rr.error[0] ? rr.error : "the probe did not run");
        return code;
    }
    if (rr.write_failed) { /* its rows are not all on disk: no verdict can be read from them */
        snprintf(err, errlen, "probe %d: %s", number, rr.error);
        p->write_failed = 1;
        return 1;
    }
    if (rr.interrupted)
        return code;
    if (judge(ps, dir, sp->unloaded_ttft_ms, p, err, errlen))
        return 1;
    verdict(ps, p);
    read_error_words(dir, p);
    return 0;
}
