/* sweep: the campaign runner (see sweep.h). One repetition at a time: its directory,
 * its server (a fresh simulator, or the managed server started or restarted as
 * needed), the run itself through run_execute, its status in campaign.json
 * (rewritten after every repetition, so an interrupted campaign still says how
 * far it got); then the server stopped and the report written, however it ended. */
#include "sweep/sweep.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/notice.h"
#include "common/stop.h"
#include "common/util.h"
#include "report/report.h"
#include "rundir/outdir.h"
#include "rundir/summary_file.h"
#include "sweep/merge.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_shards.h"
#include "target/managed_server.h"
#include "target/server_death.h"
#include "target/server_proc.h"
#include "target/sim_proc.h"
#include "target/vllm_server.h"
#include "workload/workload.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sweep {
    const campaign *c;
    const sweep_opts *o;
    const char *out;
    json_t *doc, *status;     /* campaign.json and its status array */
    server_proc managed;      /* TARGET_SERVER, TARGET_VLLM: the server now running */
    json_t *vllm_launched;    /* TARGET_VLLM: what it was started with (vllm_server.h) */
    const char *vllm_version; /* its package's version, asked once; NULL: unknown */
    json_t *kept;             /* repetitions kept from an earlier campaign (--resume) */
    int lock_fd;              /* the lock on out, held for the sweep */
    int n_servers;
    int total, done, failures;
    shard_spec shard;     /* sweep --shard: count > 1 when sharded */
    const char *prev_run; /* the repetition before (sharded: its parts must be done) */
    int prev_k;
    int shards_lost; /* a shard did not come: the campaign stops (sweep_shards.h) */
} sweep;

/* The target is a server servelab starts and keeps across runs. */
static int is_managed(const campaign *c) {
    return c->target == TARGET_SERVER || c->target == TARGET_VLLM;
}

/* How long a shard waits for the others, beyond a run's own timeout. */
static double shards_wait_s(const sweep *s) {
    return s->o->shards_wait_s > 0 ? s->o->shards_wait_s : SHARDS_WAIT_S;
}

/* Every run's prompts and mix, loaded as the run will load them, before
 * anything runs: a problem is named now (the run is still tried, and
 * recorded as failed, so the others go ahead). Returns how many runs have
 * one. */
static int check_workloads(const campaign *c, const notice_sink *notices) {
    int bad = 0;
    for (int i = 0; i < c->n_runs; i++) {
        const run_opts *p = &c->runs[i].p;
        workload w;
        char why[1024];
        if (workload_load(&w, p->prompts, p->mix, why, sizeof why)) {
            notice(notices, NOTICE_WARNING, "%s: runs[%d] (%s): %s", c->path ? c->path : "campaign",
                   i, c->runs[i].name, why);
            bad++;
        } else {
            workload_free(&w);
        }
    }
    return bad;
}

static void write_campaign_json(const sweep *s) {
    if (write_json_atomic(s->out, "campaign.json", s->doc))
        notice(s->o->notices, NOTICE_WARNING, "cannot write %s/campaign.json: %s", s->out,
               strerror(errno));
}

/* A run as resolved: its name and every option a campaign may set, as the
 * option tables record them. */
static json_t *resolved_run_json(const campaign_run *r) {
    json_t *j = json_pack("{s:s}", "name", r->name);
    json_t *opts = opt_json(run_options, &r->p);
    json_t *extra = opt_json(campaign_run_keys, r);
    json_object_update(j, opts);
    json_object_update(j, extra);
    json_decref(opts);
    json_decref(extra);
    return j;
}

static json_t *target_json(const campaign *c) {
    json_t *target = json_pack("{s:s}", "kind", sweep_plan_target_name(c->target));
    if (c->target == TARGET_URL)
        json_object_set_new(target, "url", json_string(c->url));
    else if (c->target == TARGET_SIM)
        json_object_set_new(target, "sim",
                            json_pack("{s:s,s:s}", "profile", c->sim_profile, "args", c->sim_args));
    if (c->target == TARGET_SIM && c->server_command) /* sweep --target sim */
        json_object_set_new(target, "stands_in_for", json_string(c->server_command));
    else if (c->target == TARGET_SIM && c->vllm.model) { /* a target.vllm campaign's rehearsal */
        char what[4200];
        snprintf(what, sizeof what, "vLLM (target.vllm) serving %s", c->vllm.model);
        json_object_set_new(target, "stands_in_for", json_string(what));
    } else
        json_object_set_new(target, "server",
                            json_pack("{s:s,s:s,s:f,s:f,s:s}", "command", c->server_command,
                                      "health", c->health_path, "ready_timeout_s",
                                      c->ready_timeout_s, "stop_grace_s", c->stop_grace_s,
                                      "restart", c->restart));
    if (c->target == TARGET_VLLM) {
        const vllm_spec *v = &c->vllm;
        json_t *j = json_pack("{s:s,s:s,s:s?,s:f,s:f}", "python", v->python, "model", v->model,
                              "dtype", v->dtype, "ready_timeout_s", c->ready_timeout_s,
                              "stop_grace_s", c->stop_grace_s);
        const char *names[] = {"max_num_seqs", "max_model_len", "max_num_batched_tokens",
                               "kv_cache_gib", "gpu_blocks"};
        const int64_t values[] = {v->max_num_seqs, v->max_model_len, v->max_num_batched_tokens,
                                  v->kv_cache_gib, v->gpu_blocks};
        for (int i = 0; i < 5; i++)
            if (values[i] > 0)
                json_object_set_new(j, names[i], json_integer((json_int_t)values[i]));
        if (v->prefix_caching)
            json_object_set_new(j, "prefix_caching", json_string(v->prefix_caching));
        if (v->chunked_prefill)
            json_object_set_new(j, "chunked_prefill", json_string(v->chunked_prefill));
        json_object_set_new(target, "vllm", j);
    }
    if (c->n_env) {
        json_t *env = json_object();
        for (int i = 0; i < c->n_env; i++)
            json_object_set_new(env, c->env_names[i], json_string(c->env_values[i]));
        json_t *server = json_object_get(target, "server");
        json_object_set_new(server ? server : target, "env", env);
    }
    return target;
}

static json_t *campaign_doc(const campaign *c, json_t *status) {
    char started[40];
    utc_now_iso(started, sizeof started);
    json_t *resolved = json_array();
    for (int i = 0; i < c->n_runs; i++)
        json_array_append_new(resolved, resolved_run_json(&c->runs[i]));
    return json_pack("{s:s,s:s?,s:s,s:o,s:o,s:o}", "name", c->name, "file", c->path, "started_utc",
                     started, "target", target_json(c), "runs", resolved, "status", status);
}

/* The managed server for a run with `args`: kept when it runs with the same
 * arguments, else (re)started. 0, or -1 with why in err. */
static int managed_server(sweep *s, const char *args, int *restarted, char *err, int errlen) {
    const campaign *c = s->c;
    int alive = s->managed.pid > 0 && server_proc_alive(&s->managed);
    if (alive && !c->restart_always && !strcmp(s->managed.args, args))
        return 0;
    if (s->managed.log_path) {
        server_proc_note(&s->managed, "restarting: %s",
                         !alive              ? "the server is not running"
                         : c->restart_always ? "restart: always"
                                             : "server_args changed");
        server_proc_stop(&s->managed, c->stop_grace_s);
    }
    char dir[4096], log[4200];
    snprintf(dir, sizeof dir, "%s/servers", s->out);
    mkdir_p(dir);
    snprintf(log, sizeof log, "%s/server-%d.log", dir, ++s->n_servers);
    *restarted = 1;
    if (c->target == TARGET_VLLM) {
        if (!s->o->quiet)
            notice(s->o->notices, NOTICE_PROGRESS,
                   "sweep: starting vLLM (%s%s%s); it takes minutes to load: waiting up to %.0f "
                   "s for /health",
                   c->vllm.model, args[0] ? ", " : "", args, c->ready_timeout_s);
        json_t *launched;
        int rc = vllm_server_start(&s->managed, &c->vllm, args, log, c->ready_timeout_s, &launched,
                                   err, errlen);
        if (launched) {
            json_decref(s->vllm_launched);
            s->vllm_launched = launched;
        }
        return rc;
    }
    managed_server_spec m = {.command = c->server_command,
                             .env_names = c->env_names,
                             .env_values = c->env_values,
                             .n_env = c->n_env,
                             .health_path = c->health_path,
                             .ready_timeout_s = c->ready_timeout_s};
    return managed_server_start(&s->managed, &m, args, log, err, errlen);
}

/* A fresh simulator per run: clean metrics, its own trace in `dir`. */
static int start_sim(sweep *s, server_proc *sim, const char *dir, const char *args, char *err,
                     int errlen) {
    /* the profile, unless a --profile-file is among the arguments */
    int file = strstr(s->c->sim_args, "--profile-file") || (args && strstr(args, "--profile-file"));
    return sim_proc_start(sim, s->o->self, file ? NULL : s->c->sim_profile, s->c->sim_args, dir,
                          args, err, errlen);
}

/* What became of a repetition, for campaign.json; *death gets how a managed
 * server died during it (NULL otherwise). */
static const char *run_status(sweep *s, const run_result *rr, json_t **death, char *err,
                              int errlen) {
    *death = NULL;
    if (rr->interrupted || stop_signal())
        return "interrupted";
    if (is_managed(s->c) && !server_proc_alive(&s->managed)) {
        char how[700];
        *death = server_death_of(&s->managed, rr->server_peak_rss_bytes, how, sizeof how);
        snprintf(err, errlen, "the server exited during the run (%s): see %s", how,
                 s->managed.log_path ? s->managed.log_path : "its log");
        return "server_died";
    }
    if (rr->done != OUTCOME_OK) {
        if (!err[0])
            snprintf(err, errlen, "%s", rr->error[0] ? rr->error : "the run failed");
        return "failed";
    }
    return "ok";
}

/* `death` (stolen, may be NULL): how the managed server died in the run. */
static void record(sweep *s, const campaign_run *cr, int k, const char *dir, const char *status,
                   const char *args, int restarted, const run_result *rr, const char *err,
                   json_t *death) {
    int exit_code = outcome_exit_code(rr->done, stop_signal()); /* as `servelab run` gives */
    json_t *e = json_pack("{s:s,s:i,s:s,s:s,s:s,s:b,s:i,s:I,s:I,s:I,s:f,s:s?}", "run", cr->name,
                          "repetition", k, "dir", dir + strlen(s->out) + 1, "status", status,
                          "server_args", args, "server_restarted", restarted, "exit_code",
                          exit_code, "requests", (json_int_t)rr->requests, "completed",
                          (json_int_t)rr->completed, "failed", (json_int_t)rr->failed, "duration_s",
                          rr->duration_s, "error", err[0] ? err : NULL);
    if (death)
        json_object_set_new(e, "server_death", death);
    json_array_append_new(s->status, e);
    write_campaign_json(s);
    if (strcmp(status, "ok") && strcmp(status, "interrupted"))
        s->failures++;
    s->done++;
    if (!s->o->quiet)
        notice(s->o->notices, NOTICE_PROGRESS, "sweep:        %s: %zu/%zu completed in %.1f s%s%s",
               status, rr->completed, rr->requests, rr->duration_s, err[0] ? ": " : "", err);
}

/* A server that did not start fails its run at once: the reason and the end
 * of the server's log are said, the log kept with the run, and nothing is
 * sent. */
static void server_failed(sweep *s, const campaign_run *cr, int k, const char *dir,
                          const char *args, server_proc *sp, const char *err) {
    notice(s->o->notices, NOTICE_INFO, "sweep: %s rep-%d: %s; the end of its log:", cr->name, k,
           err);
    char *tail = server_proc_log_tail(sp, 10);
    for (char *line = tail, *next; *line; line = next) { /* each "    LINE" as it is */
        next = line + strcspn(line, "\n");
        if (*next)
            *next++ = 0;
        notice(s->o->notices, NOTICE_PROGRESS, "%s", line);
    }
    free(tail);
    if (sp == &s->managed && sp->log_path)
        server_proc_copy_log(sp, dir);
    run_result rr = {.done = OUTCOME_FAILED};
    /* a server that died while loading: how (killed, out of memory, its
     * exit code), as for one that dies during a run */
    char how[256], why[5000];
    json_t *death = sp == &s->managed ? server_death_of(sp, 0, how, sizeof how) : NULL;
    snprintf(why, sizeof why, "%s%s%s", err, death ? ": " : "", death ? how : "");
    record(s, cr, k, dir, stop_signal() ? "interrupted" : "server_start_failed", args, 1, &rr, why,
           death);
    if (sp != &s->managed)
        server_proc_stop(sp, 5);
}

/* The run's options as `servelab run` would take them for repetition k. */
static void run_options_for(const campaign_run *cr, int k, const char *url, const char *dir,
                            run_opts *ro) {
    *ro = cr->p;
    ro->url = url;
    ro->out = dir;
    ro->quiet = 1;
    ro->print_summary = 0;
    ro->seed = (int64_t)((uint64_t)cr->p.seed + (uint64_t)(k - 1)); /* each repetition its own */
}

/* A repetition kept from the earlier campaign (--resume): recorded again,
 * marked kept, and not run. */
static int keep_repetition(sweep *s, const campaign_run *cr, int k) {
    json_t *e = outdir_kept(s->kept, cr->name, k);
    if (!e)
        return 0;
    json_t *copy = json_deep_copy(e);
    json_object_set_new(copy, "kept", json_true());
    json_array_append_new(s->status, copy);
    write_campaign_json(s);
    s->done++;
    if (!s->o->quiet)
        notice(s->o->notices, NOTICE_PROGRESS,
               "sweep: [%d/%d] %s rep-%d kept from the earlier campaign", s->done, s->total,
               cr->name, k);
    return 1;
}

/* "I/N" and the start instant as --shard and --start-at take them. */
static void shard_flags(const shard_spec *sh, int64_t at, char *shard, size_t n1, char *start,
                        size_t n2) {
    snprintf(shard, n1, "%d/%d", sh->index, sh->count);
    snprintf(start, n2, "%lld.%06lld", (long long)(at / 1000000), (long long)(at % 1000000));
}

/* Shard 0's repetition of a sharded sweep (sweep_shards.h): the start
 * published, its own part run, the others' awaited, all merged into dir. */
static void lead_sharded(sweep *s, const campaign_run *cr, int k, const char *dir, run_opts *ro,
                         json_t *cmdline, json_t *extra, run_result *rr) {
    char part[4400], flag[32], start[48], why[1024];
    const notice_sink *progress = s->o->quiet ? NULL : s->o->notices;
    int64_t at = shards_publish_start(s->out, &s->shard, s->prev_run, s->prev_k, cr->name, k, 3.0,
                                      shards_wait_s(s), progress, why, sizeof why);
    s->prev_run = cr->name;
    s->prev_k = k;
    if (!at) {
        json_decref(cmdline);
        json_decref(extra);
        rr->done = OUTCOME_FAILED;
        snprintf(rr->error, sizeof rr->error, "%.500s", why);
        s->shards_lost = !stop_signal();
        return;
    }
    shards_part_dir(part, sizeof part, s->out, 0, cr->name, k);
    shard_flags(&s->shard, at, flag, sizeof flag, start, sizeof start);
    ro->out = part;
    ro->shard = flag;
    ro->start_at = start;
    ro->force = 1; /* the part's directory is this campaign's own */
    mkdir_p(part);
    run_execute(ro, cmdline, extra, rr);
    shards_mark_done(s->out, 0, cr->name, k);
    if (shards_wait_done(s->out, &s->shard, cr->name, k, ro->timeout_s + shards_wait_s(s), progress,
                         why, sizeof why)) {
        rr->done = OUTCOME_FAILED;
        snprintf(rr->error, sizeof rr->error, "%.500s", why);
        s->shards_lost = !stop_signal(); /* the next ones would wait for it in vain */
        return;
    }
    char **dirs = xcalloc((size_t)s->shard.count, sizeof *dirs);
    for (int i = 0; i < s->shard.count; i++) {
        dirs[i] = xmalloc(4400);
        shards_part_dir(dirs[i], 4400, s->out, i, cr->name, k);
    }
    merge_opts mo = {.out = dir, .force = 1};
    if (merge_shards(dirs, s->shard.count, &mo, why, sizeof why)) {
        rr->done = OUTCOME_FAILED;
        snprintf(rr->error, sizeof rr->error, "%.500s", why);
    } else { /* the repetition's counts are the merged run's */
        json_t *sum = rundir_summary_read(dir);
        rr->requests = (size_t)json_integer_value(json_object_get(sum, "requests"));
        rr->completed = (size_t)json_integer_value(json_object_get(sum, "completed"));
        rr->failed = (size_t)json_integer_value(json_object_get(sum, "failed"));
        rr->duration_s = json_number_value(json_object_get(sum, "duration_s"));
        json_decref(sum);
    }
    for (int i = 0; i < s->shard.count; i++)
        free(dirs[i]);
    free(dirs);
}

/* A shard other than 0 of a sharded sweep: waits for shard 0 to prepare
 * the output, then runs its part of every repetition when shard 0 says,
 * and marks each done. */
static outcome follow_sharded(sweep *s, char *err, int errlen) {
    const campaign *c = s->c;
    int64_t started = wall_us();
    double wait_s = shards_wait_s(s);
    if (shards_wait_ready(s->out, started, wait_s, err, errlen)) {
        notice(s->o->notices, NOTICE_INFO, "sweep: shard %d/%d: %s", s->shard.index, s->shard.count,
               err);
        return OUTCOME_FAILED;
    }
    stop_install();
    int failed = 0;
    for (int i = 0; i < c->n_runs && !stop_signal(); i++)
        for (int k = 1; k <= c->runs[i].repetitions && !stop_signal(); k++) {
            const campaign_run *cr = &c->runs[i];
            int64_t at = shards_wait_start(s->out, cr->name, k, wait_s, err, errlen);
            if (!at) {
                notice(s->o->notices, NOTICE_INFO, "sweep: shard %d/%d: %s", s->shard.index,
                       s->shard.count, err);
                return OUTCOME_FAILED;
            }
            char part[4400], flag[32], start[48];
            shards_part_dir(part, sizeof part, s->out, s->shard.index, cr->name, k);
            shard_flags(&s->shard, at, flag, sizeof flag, start, sizeof start);
            mkdir_p(part);
            run_opts ro;
            run_options_for(cr, k, c->url, part, &ro);
            ro.shard = flag;
            ro.start_at = start;
            ro.force = 1;
            json_t *extra = json_pack("{s:{s:s,s:s,s:i,s:i}}", "campaign", "name", c->name, "run",
                                      cr->name, "repetition", k, "shard", s->shard.index);
            run_result rr = {0};
            if (!s->o->quiet)
                notice(s->o->notices, NOTICE_PROGRESS, "sweep: shard %d/%d: %s rep-%d ...",
                       s->shard.index, s->shard.count, cr->name, k);
            run_execute(&ro, json_pack("[s,s,s]", "servelab", "sweep", c->path ? c->path : "-"),
                        extra, &rr);
            failed |= rr.done != OUTCOME_OK;
            shards_mark_done(s->out, s->shard.index, cr->name, k);
        }
    return stop_signal() ? OUTCOME_STOPPED : failed ? OUTCOME_FAILED : OUTCOME_OK;
}

static void run_repetition(sweep *s, const campaign_run *cr, int k) {
    const campaign *c = s->c;
    char dir[4096], err[4600] = "";
    if (keep_repetition(s, cr, k))
        return;
    snprintf(dir, sizeof dir, "%s/%s/rep-%d", s->out, cr->name, k);
    const char *args = cr->server_args;
    run_result rr = {0};
    if (mkdir_p(dir)) {
        snprintf(err, sizeof err, "cannot create %s: %s", dir, strerror(errno));
        record(s, cr, k, dir, "failed", args, 0, &rr, err, NULL);
        return;
    }
    int restarted = 0, server_ok = 1;
    server_proc sim = {0};
    const char *url = c->url;
    if (c->target == TARGET_SIM) {
        server_ok = start_sim(s, &sim, dir, args, err, sizeof err) == 0;
        url = sim.url;
        restarted = 1;
    } else if (is_managed(c)) {
        server_ok = managed_server(s, args, &restarted, err, sizeof err) == 0;
        url = s->managed.url;
    }
    if (!s->o->quiet)
        notice(s->o->notices, NOTICE_PROGRESS, "sweep: [%d/%d] %s rep-%d%s ...", s->done + 1,
               s->total, cr->name, k,
               restarted && server_ok && is_managed(c) ? " (server started)" : "");
    if (!server_ok) { /* no schedule is sent to a server that is not there */
        server_failed(s, cr, k, dir, args, c->target == TARGET_SIM ? &sim : &s->managed, err);
        return;
    }
    run_opts ro;
    run_options_for(cr, k, url, dir, &ro);
    char label[400];
    snprintf(label, sizeof label, "sweep run %d of %d: %.255s, repetition %d of %d", s->done + 1,
             s->total, cr->name, k, cr->repetitions);
    ro.progress_label = label;
    if (s->o->quiet)
        ro.progress = "off";
    ro.server_pid = c->target == TARGET_SIM ? (int)sim.pid
                    : is_managed(c)         ? (int)s->managed.pid
                                            : 0; /* its processes into server_proc.csv */
    json_t *extra =
        json_pack("{s:{s:s,s:s,s:i,s:s,s:b}}", "campaign", "name", c->name, "run", cr->name,
                  "repetition", k, "server_args", args, "server_restarted", restarted);
    if (c->target == TARGET_VLLM) /* what vLLM runs with, and where each side runs */
        json_object_set_new(extra, "vllm",
                            vllm_server_meta(s->vllm_launched, s->vllm_version, s->managed.pid));
    json_t *cmdline = json_pack("[s,s,s]", "servelab", "sweep", c->path ? c->path : "-");
    if (s->shard.count > 1)
        lead_sharded(s, cr, k, dir, &ro, cmdline, extra, &rr);
    else
        run_execute(&ro, cmdline, extra, &rr);
    json_t *death;
    const char *status = run_status(s, &rr, &death, err, sizeof err);
    if (is_managed(c) && s->managed.log_path)
        server_proc_copy_log(&s->managed, dir);
    if (c->target == TARGET_SIM)
        server_proc_stop(&sim, 5);
    record(s, cr, k, dir, status, args, restarted, &rr, err, death);
}

/* A table cell: the number, "inf", or "-" when there is none. */
static void cell(char *buf, double v, int precision) {
    if (isnan(v))
        snprintf(buf, 32, "-");
    else if (isinf(v))
        snprintf(buf, 32, "inf");
    else
        snprintf(buf, 32, "%.*f", precision, v);
}

/* The table's header (k -1) or run k's line, as in summary.md; "-" where
 * a run has no figure. */
static void print_table_line(FILE *f, const report *r, int k) {
    if (k < 0) {
        fprintf(f, "%-24s %11s %12s %8s %7s %11s %11s %11s %11s %11s %9s\n", "run", "offered rps",
                "realized rps", "requests", "failed", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms",
                "TPOT p95 ms", "out tok/s", "preempt");
        return;
    }
    const run_summary *rs = &r->runs[k].pooled;
    char c[7][32];
    cell(c[0], rs->offered_rps, 2);
    cell(c[1], rs->realized_offered_rps, 2);
    cell(c[2], rs->ttft.p50, 1);
    cell(c[3], rs->ttft.p95, 1);
    cell(c[4], rs->tpot.p50, 2);
    cell(c[5], rs->tpot.p95, 2);
    cell(c[6], rs->output_tokens_per_s, 1);
    fprintf(f, "%-24s %11s %12s %8zu %7zu %11s %11s %11s %11s %11s %9.0f\n", r->runs[k].name, c[0],
            c[1], rs->requests, rs->failed, c[2], c[3], c[4], c[5], c[6],
            isnan(r->runs[k].server.preemptions) ? 0 : r->runs[k].server.preemptions);
}

/* The report of whatever ran, and its table on the command's output. 0,
 * or -1. */
static int write_report(const sweep *s) {
    char rep_out[4096], err[1024];
    snprintf(rep_out, sizeof rep_out, "%s/report", s->out);
    report r;
    char *paths[1] = {(char *)s->out};
    report_opts ropts = {0};
    if (report_build(paths, 1, &ropts, &r, err, sizeof err)) {
        notice(s->o->notices, NOTICE_INFO, "sweep: %s", err); /* err names the report */
        return -1;
    }
    out_file *files;
    int nf;
    report_render(&r, &files, &nf);
    if (report_write(rep_out, files, nf, err, sizeof err))
        notice(s->o->notices, NOTICE_INFO, "sweep: report: %s", err);
    /* the summary table, as in summary.md; "-" where a run has no figure */
    FILE *f = s->o->text_out;
    for (int k = 0; f && k <= r.n_runs; k++)
        print_table_line(f, &r, k - 1);
    if (f)
        fprintf(f, "report: %s/report.html\n", rep_out);
    out_files_free(files, nf);
    report_free(&r);
    return 0;
}
/* The output directory: short enough for every file name under it, made,
 * and locked for the sweep. 0, or -1 with err. */
static int prepare_out(sweep *s, char *err, int errlen) {
    size_t room = OUT_DIR_MAX - 300; /* a run's name and rep-K fit under it */
    if (strlen(s->out) > room) {
        snprintf(err, errlen, "--out: the path has %zu characters (at most %zu)", strlen(s->out),
                 room);
        return -1;
    }
    if (mkdir_p(s->out)) {
        snprintf(err, errlen, "--out %s: cannot create: %s", s->out, strerror(errno));
        return -1;
    }
    char why[4400];
    if (dir_lock(s->out, &s->lock_fd, why, sizeof why)) {
        snprintf(err, errlen, "--out %s", why);
        return -1;
    }
    return 0;
}

/* A sharded campaign that ends early: when a shard did not come
 * (sweep_shards.h), after the repetition that waited for it, said once;
 * either way, or at a stop signal, the other shards are told, so that none
 * waits for a start that will not come. */
static void shards_end_early(const sweep *s) {
    if (s->shards_lost) {
        json_t *last = json_array_get(s->status, json_array_size(s->status) - 1);
        const char *why = json_string_value(json_object_get(last, "error"));
        notice(s->o->notices, NOTICE_INFO,
               "sweep: %s; the campaign stops here (%d of %d repetitions not run)",
               why ? why : "a shard did not come", s->total - s->done, s->total);
    }
    if (shards_announce_stopped(s->out))
        notice(s->o->notices, NOTICE_WARNING, "cannot write %s/shards/stopped: %s", s->out,
               strerror(errno));
}

outcome sweep_execute(const campaign *c, const sweep_opts *o, char *err, int errlen) {
    char out_default[512];
    sweep s = {.c = c, .o = o, .out = o->out, .lock_fd = -1};
    if (!s.out) {
        snprintf(out_default, sizeof out_default, "out/%s", c->name);
        s.out = out_default;
    }
    const char *shard = o->shard ? o->shard : c->shards ? "auto" : NULL;
    int want = c->shards && strcmp(c->shards, "auto") ? atoi(c->shards) : 0;
    if (shard && !o->dry_run) {
        if (shard_parse(shard, want, getenv, &s.shard, err, errlen))
            return OUTCOME_BAD_INPUT;
        if (want && s.shard.count != want) {
            snprintf(err, errlen,
                     "--shard: the campaign says shards: %d, but this is shard %d of "
                     "%d",
                     want, s.shard.index, s.shard.count);
            return OUTCOME_BAD_INPUT;
        }
        if (s.shard.count > 1 && c->target != TARGET_URL) {
            snprintf(err, errlen,
                     "--shard: a sharded campaign needs a target.url (every shard "
                     "sends to the same server)");
            return OUTCOME_BAD_INPUT;
        }
        if (s.shard.count > 1 && o->resume) {
            snprintf(err, errlen, "--shard: cannot --resume a sharded campaign");
            return OUTCOME_BAD_INPUT;
        }
        if (s.shard.count > 1 && s.shard.index > 0 && !o->dry_run)
            return follow_sharded(&s, err, errlen);
    }
    int no_program =
        c->target == TARGET_SERVER && managed_server_check_program(c->server_command, err, errlen);
    if (c->target == TARGET_VLLM && !no_program)
        no_program = vllm_server_check(&c->vllm, err, errlen) != 0;
    if (no_program && !o->dry_run)
        return OUTCOME_BAD_INPUT;
    int bad_workloads = check_workloads(c, o->notices);
    if (o->dry_run) {
        if (o->text_out)
            sweep_plan_print(o->text_out, c, s.out);
        if (bad_workloads && !no_program)
            snprintf(err, errlen, "%d run%s would fail on %s workload (above)", bad_workloads,
                     bad_workloads > 1 ? "s" : "", bad_workloads > 1 ? "their" : "its");
        return bad_workloads || no_program ? OUTCOME_BAD_INPUT : OUTCOME_OK;
    }
    if (prepare_out(&s, err, errlen))
        return OUTCOME_BAD_INPUT;
    stop_install();
    s.status = json_array();
    s.doc = campaign_doc(c, s.status);
    if (outdir_prepare(s.out, json_object_get(s.doc, "runs"), json_object_get(s.doc, "target"),
                       o->force, o->resume, &s.kept, err, (size_t)errlen)) {
        json_decref(s.doc);
        json_decref(s.kept);
        dir_unlock(s.lock_fd);
        return OUTCOME_BAD_INPUT;
    }
    json_object_set_new(s.doc, "kept_from_earlier",
                        json_integer((json_int_t)json_array_size(s.kept)));
    write_campaign_json(&s);
    char shards_dir[4200]; /* an earlier sharded campaign's starts and marks go first */
    snprintf(shards_dir, sizeof shards_dir, "%s/shards", s.out);
    if (s.shard.count > 1 && ((access(shards_dir, F_OK) == 0 && remove_tree(shards_dir)) ||
                              shards_announce_ready(s.out, wall_us()))) {
        snprintf(err, errlen, "--out %s: cannot write shards/ready: %s", s.out, strerror(errno));
        json_decref(s.doc);
        json_decref(s.kept);
        dir_unlock(s.lock_fd);
        return OUTCOME_BAD_INPUT;
    }
    for (int i = 0; i < c->n_runs; i++)
        s.total += c->runs[i].repetitions;
    char version[64], why[512];
    if (c->target == TARGET_VLLM) {
        if (vllm_server_package_version(c->vllm.python, version, sizeof version, why, sizeof why))
            notice(o->notices, NOTICE_WARNING, "sweep: %s", why);
        else
            s.vllm_version = version;
    }
    for (int i = 0; i < c->n_runs && !stop_signal() && !s.shards_lost; i++)
        for (int k = 1; k <= c->runs[i].repetitions && !stop_signal() && !s.shards_lost; k++)
            run_repetition(&s, &c->runs[i], k);
    if (s.shard.count > 1 && (s.shards_lost || stop_signal()))
        shards_end_early(&s);
    if (s.managed.log_path)
        server_proc_stop(&s.managed, c->stop_grace_s);
    char fin[40];
    utc_now_iso(fin, sizeof fin);
    json_object_set_new(s.doc, "finished_utc", json_string(fin));
    json_object_set_new(s.doc, "interrupted", json_boolean(stop_signal() != 0));
    write_campaign_json(&s);
    json_decref(s.doc);
    json_decref(s.kept);
    json_decref(s.vllm_launched);
    int report_rc = write_report(&s);
    dir_unlock(s.lock_fd);
    if (stop_signal())
        return OUTCOME_STOPPED;
    return s.failures || report_rc ? OUTCOME_FAILED : OUTCOME_OK;
}
