/* run_schedule: what a run sends and when, before any traffic: the
 * workload and its prompts (the shared prefix, the cache-busting nonce,
 * multi-turn conversations), the arrivals (--rate, --duration,
 * --rate-plan) or a replayed trace's window, and this shard's part of the
 * schedule (--shard, --start-at). Bad prompts, plans and traces fail here
 * (run.c's prepare phase). */
#include "common/clock.h"
#include "common/notice.h"
#include "common/util.h"
#include "monitor/procstat.h"
#include "run/run_ctx.h"
#include "run/start_at.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The shared prefix and the cache-busting nonce (workload/shaping.h). A
 * salt not given is drawn from the clock and the process, and recorded
 * in meta.json's config like any option, so a body can be rebuilt. */
static void shape_prompts(run_ctx *x) {
    run_opts *o = &x->o;
    shaping *sh = &x->w.shape;
    sh->cache_bust = !strcmp(o->cache_bust, "on");
    if (!o->cache_bust_salt) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        uint64_t v = mix64((uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec) ^
                     mix64((uint64_t)getpid() ^ (uint64_t)mono_us());
        snprintf(x->salt, sizeof x->salt, "%016llx", (unsigned long long)v);
        o->cache_bust_salt = x->salt;
    }
    sh->salt = strtoull(o->cache_bust_salt, NULL, 16);
    sh->prefix_tokens = o->prefix_tokens;
    sh->prefix_groups = o->prefix_groups;
    sh->prefix_system = !strcmp(o->prefix_mode, "system");
    sh->words = &x->w.words;
}

/* Every request its prompt: one a scheduled request (and a warmup one
 * after them), or, multi-turn, one a turn of the conversations the
 * schedule starts (and of the warmup's, whose first turns only are sent). */
static int plan_prompts(run_ctx *x, uint64_t seed, char *err, int errlen) {
    const run_opts *o = &x->o;
    if (!strcmp(o->turns, "1")) {
        workload_assign(&x->w, x->n + (size_t)o->warmup, seed);
        return 0;
    }
    int turns = !strcmp(o->turns, "all") ? 0 : atoi(o->turns);
    size_t total = workload_plan_conversations(&x->w, x->n + (size_t)o->warmup, turns,
                                               o->think_time_s, o->max_tokens, seed, err, errlen);
    if (!total)
        return -1;
    const conv_plan *p = &x->w.conv;
    if (p->n_requests > UINT32_MAX - 1) {
        snprintf(err, errlen, "--turns: %zu requests in all is more than a run holds", total);
        return -1;
    }
    return 0;
}

/* Multi-turn: the schedule starts conversations; their later turns follow
 * in the client (loadgen.h). */
void run_schedule_turns(run_ctx *x) {
    const conv_plan *p = &x->w.conv;
    if (!workload_multi_turn(&x->w))
        return;
    x->lc.next_turn = p->next;
    x->lc.think_us = p->think_us;
    x->lc.indices = p->first;
    x->lc.total = x->n < p->n_conv ? p->first[x->n] : p->n_requests;
}

/* --rate-plan's schedule (workload/arrivals.h). What the run offered on the
 * whole, the plan's mean rate, stands in for --rate from here on: in
 * meta.json's config, summary.json's offered_rps and the warmup's pace. */
static size_t plan_arrivals(run_ctx *x, uint64_t seed) {
    size_t n =
        arrivals_generate_plan(&x->arrivals, &x->plan, seed, RATE_PLAN_MAX_REQUESTS, &x->due);
    x->o.rate = x->arrivals.rate = rate_plan_mean_rps(&x->plan);
    return n;
}

/* --replay: the trace's window is the schedule and the prompts, with no
 * nonce (the run records cache_bust off); a bad file fails here. */
static int prepare_replay(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char err[1024];
    replay_format f = REPLAY_AUTO;
    replay_format_parse(o->replay_format, &f); /* the option's choices are the names */
    replay_trace *t = xcalloc(1, sizeof *t);
    replay_window win = {.start_s = o->replay_start_s,
                         .duration_s = o->replay_duration_s,
                         .time_scale = o->time_scale,
                         .max_records = o->have_requests ? (size_t)o->requests : 0};
    if (replay_load(t, o->replay, f, o->replay_block_tokens, err, sizeof err) ||
        replay_select(t, &win, err, sizeof err)) {
        replay_free(t);
        free(t);
        return run_fail(rr, "%s", err);
    }
    shape_prompts(x); /* the run's salt, drawn if not given */
    replay_set_salt(t, x->w.shape.salt);
    workload_use_replay(&x->w, t);
    t->words = &x->w.words; /* --tokenize fills it before the first body */
    x->w_loaded = 1;
    x->o.cache_bust = "off";
    x->n = replay_due_times(t, &x->due);
    if (t->uncovered)
        notice_warn(
            "--replay: %zu of %zu records have hash_ids that do not number ceil(input / %d): "
            "is the trace cut in blocks of another size (--replay-block-tokens)?",
            t->uncovered, t->n, t->block_tokens);
    x->o.metrics_interval_s = run_metrics_interval_s(o, (double)x->due[x->n - 1] / 1e6);
    return 0;
}

/* --shard (run/shard.h): this shard's part of the whole schedule, and
 * --start-at's instant. Multi-turn conversations are not split. */
static int prepare_shard(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char why[512];
    x->n_all = x->n;
    x->shard.count = 1;
    if (o->start_at && start_at_parse(o->start_at, wall_us(), &x->start_at_us, why, sizeof why))
        return run_fail(rr, "--start-at: %s", why);
    if (!o->shard)
        return 0;
    if (shard_parse(o->shard, o->shard_count, getenv, &x->shard, why, sizeof why))
        return run_fail(rr, "--shard: %s", why);
    if (o->replay && x->salt[0]) /* drawn here: each shard would draw its own */
        return run_fail(rr,
                        "--shard with --replay: give every shard the same --cache-bust-salt HEX, "
                        "so that the prompts the trace shares are the same on every shard");
    if (workload_multi_turn(&x->w))
        return run_fail(rr,
                        "--shard: a multi-turn run (--turns) cannot be split yet: give --turns 1");
    x->n = shard_select(&x->shard, x->due, x->n, &x->shard_idx);
    return 0;
}

/* Every request's row stays in memory until the run's summary is made (a
 * req_rec, and the schedule's time and prompt besides), so a schedule whose
 * rows cannot fit is refused before anything is made or sent, with the
 * arithmetic, not aborted out of memory at its start (10^8 requests are
 * 17 GB). Its inter-token gaps come on top: the bound is a floor. */
#define ROW_BYTES (sizeof(req_rec) + 32)

static int rows_fit(const run_opts *o, run_result *rr) {
    double n = o->rate_plan ? 0 : o->have_duration ? o->rate * o->duration_s : (double)o->requests;
    if (n > 1e8)
        n = 1e8; /* arrivals_generate's own cap */
    const char *which;
    double room = procstat_memory_room(&which), need = n * (double)ROW_BYTES;
    if (isnan(room) || need <= 0.8 * room)
        return 0;
    return run_fail(rr,
                    "%.0f requests keep %.1f GB of rows in memory (%zu bytes each), more than "
                    "%s leaves this process (%.1f GB): at most %.0f requests a run (split "
                    "the schedule with --shard I/N across processes or machines)",
                    n, need / 1e9, (size_t)ROW_BYTES, which, room / 1e9,
                    floor(0.8 * room / (double)ROW_BYTES));
}

/* The workload and the schedule: bad prompts fail here. */
int run_schedule_prepare(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char err[1024];
    if (o->replay)
        return prepare_replay(x, rr) || prepare_shard(x, rr);
    if (rows_fit(o, rr))
        return -1;
    if (workload_load(&x->w, o->prompts, o->mix, err, sizeof err))
        return run_fail(rr, "%s", err);
    x->w_loaded = 1;
    shape_prompts(x);
    arrival_kind_parse(o->arrival, &x->arrivals.kind);
    x->arrivals.rate = o->rate;
    x->arrivals.burstiness = o->burstiness;
    uint64_t seed = (uint64_t)o->seed;
    if (o->rate_plan && rate_plan_parse(o->rate_plan, &x->plan, err, sizeof err))
        return run_fail(rr, "--rate-plan: %s", err); /* a sweep's value was checked when read */
    x->n = o->rate_plan ? plan_arrivals(x, seed)
           : o->have_duration
               ? arrivals_generate(&x->arrivals, seed, (size_t)100000000,
                                   llround(o->duration_s * 1e6), &x->due)
               : arrivals_generate(&x->arrivals, seed, (size_t)o->requests, INT64_MAX, &x->due);
    if (!o->rate_plan && !o->have_duration && x->n < (size_t)o->requests)
        return run_fail(rr, "--rate %g: %lld requests would take more than %d days to arrive",
                        o->rate, (long long)o->requests, ARRIVALS_MAX_S / 86400);
    if (plan_prompts(x, seed, err, sizeof err))
        return run_fail(rr, "%s", err);
    double schedule_s = o->rate_plan       ? x->plan.duration_s
                        : o->have_duration ? o->duration_s
                        : x->n             ? (double)x->due[x->n - 1] / 1e6
                                           : 0;
    x->o.metrics_interval_s = run_metrics_interval_s(o, schedule_s);
    return prepare_shard(x, rr);
}
