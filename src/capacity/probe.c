/* probe: one probe of the search (see probe.h). The verdict is read back
 * from requests.csv rather than taken from the run in memory, so that
 * what the search decided is what `servelab report` shows for the same
 * directory. */
#include "capacity/probe.h"
#include "capacity/binomial.h"
#include "capacity/saturation.h"
#include "capacity/slo_check.h"
#include "common/clock.h"
#include "common/files.h"
#include "report/load.h"
#include "sweep/sim_proc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rows judged: met, missed by bound, cancelled; and the figures at
 * this load. */
static int judge(const probe_setup *ps, const char *dir, probe *p, char *err, int errlen) {
    run_rows rows = {0};
    run_files files;
    if (load_run(dir, 0, &rows, &files, err, errlen)) {
        for (int c = 0; c < rows.n_classes; c++)
            free((char *)rows.classes[c]);
        rows_free(&rows);
        return -1;
    }
    double busy_ms = 0;
    for (size_t i = 0; i < rows.n; i++) {
        const req_rec *r = &rows.r[i];
        int m = slo_misses(r, &ps->slo);
        if (!m)
            p->met++;
        else if (r->error == ERR_CANCELLED && p->stopped)
            p->unfinished++;
        for (int b = 0; b < 3; b++)
            p->missed[b] += (m >> b) & 1;
        if (!isnan(r->sent_ms) && !isnan(r->end_ms))
            busy_ms += r->end_ms - r->sent_ms;
    }
    summary_params sp = {.offered_rps = p->rate_rps, .slo = ps->slo, .client_cpu_s = -1};
    run_summary s;
    summarize(&rows, &sp, &s);
    p->requests = (long)rows.n;
    p->goodput_rps = s.goodput_rps;
    p->output_tokens_per_s = s.output_tokens_per_s;
    p->in_flight = s.duration_s > 0 ? busy_ms / 1000.0 / s.duration_s : NAN;
    for (int c = 0; c < rows.n_classes; c++)
        free((char *)rows.classes[c]); /* the loader's copies of the class names */
    rows_free(&rows);
    run_files_free(&files);
    return 0;
}

/* The run's options for this probe: the user's, with the load, the count,
 * the seed and the directory the search sets. */
static void probe_options(const probe_setup *ps, double value, long n, int64_t seed,
                          const char *url, const char *dir, run_opts *ro) {
    *ro = *ps->base;
    ro->url = url;
    ro->out = dir;
    ro->quiet = 1;
    ro->quiet_client = 1; /* the search says it once, of all its probes */
    ro->print_summary = 0;
    ro->force = 0;
    ro->requests = n;
    ro->have_requests = 1;
    ro->have_duration = 0;
    ro->duration_s = 0;
    ro->seed = seed;
    ro->fail_on_slo = 0;
    if (ps->by_concurrency) {
        ro->rate = INFINITY;
        ro->concurrency = (int64_t)value;
    } else {
        ro->rate = value;
        ro->concurrency = 0;
    }
}

static void name_dir(const probe_setup *ps, int number, double value, probe *p) {
    if (ps->by_concurrency)
        snprintf(p->dir, sizeof p->dir, "probe-%02d-c%ld", number, (long)value);
    else
        snprintf(p->dir, sizeof p->dir, "probe-%02d-%.4grps", number, value);
}

/* The verdict from the counts: the share, its interval, passed. */
static void verdict(const probe_setup *ps, probe *p) {
    double n = p->requests > 0 ? (double)p->requests : 1;
    double lo, hi, lo2, hi2;
    wilson_interval((double)p->met, n, BINOMIAL_Z95, &lo, &hi);
    wilson_interval((double)(p->met + p->unfinished), n, BINOMIAL_Z95, &lo2, &hi2);
    p->ci_low = lo;
    p->ci_high = hi2;
    p->passed = !p->stopped && p->requests > 0 && (double)p->met >= ps->goal * n;
}

int probe_run(const probe_setup *ps, int number, double value, long n, int64_t seed, probe *p,
              char *err, int errlen) {
    memset(p, 0, sizeof *p);
    name_dir(ps, number, value, p);
    p->rate_rps = ps->by_concurrency ? INFINITY : value;
    p->concurrency = ps->by_concurrency ? (long)value : 0;
    p->seed = seed;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", ps->out, p->dir);
    if (mkdir_p(dir)) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    double t0 = mono_us() / 1e6;
    server_proc sim = {0};
    const char *url = ps->base->url;
    if (ps->sim_args) {
        if (sim_proc_start(&sim, ps->self, ps->sim_args, dir, "", err, errlen)) {
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
                      .watch_growth = !ps->by_concurrency};
    saturation_init(&sat);
    run_opts ro;
    probe_options(ps, value, n, seed, url, dir, &ro);
    ro.watch = &sat.watch;
    if (ps->sim_args)
        ro.server_pid = (int)sim.pid; /* its process tree into server_proc.csv */
    json_t *extra = json_pack("{s:{s:i,s:f,s:b}}", "capacity_probe", "number", number, "value",
                              value, "by_concurrency", ps->by_concurrency);
    run_result rr;
    int code = run_execute(&ro, json_deep_copy(ps->command_line), extra, &rr);
    if (ps->sim_args)
        server_proc_stop(&sim, 5);
    p->wall_s = mono_us() / 1e6 - t0;
    p->stopped = sat.stopped;
    p->client_flagged = rr.client_flagged;
    snprintf(p->why, sizeof p->why, "%s", sat.why);
    saturation_free(&sat);
    if (code == 2 || (code == 1 && rr.requests == 0)) {
        snprintf(err, errlen, "%s", rr.error[0] ? rr.error : "the probe did not run");
        return code;
    }
    if (rr.interrupted)
        return code;
    if (judge(ps, dir, p, err, errlen))
        return 1;
    verdict(ps, p);
    return 0;
}
