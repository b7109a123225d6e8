/* sweep: the campaign runner (see sweep.h). */
#include "sweep/sweep.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/util.h"
#include "report/report.h"
#include "run/run.h"
#include "sweep/server_proc.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *target_name(target_kind k) {
    return k == TARGET_URL ? "url" : k == TARGET_SIM ? "sim" : "server";
}

static void print_plan(const campaign *c, const char *out) {
    int total = 0;
    printf("campaign %s (%s), target %s", c->name, c->path ? c->path : "-", target_name(c->target));
    if (c->target == TARGET_URL)
        printf(" %s", c->url);
    else if (c->target == TARGET_SIM)
        printf(" (profile %s%s%s)", c->sim_profile, c->sim_args[0] ? " " : "", c->sim_args);
    else
        printf(" (%s)", c->server_command);
    printf(", output %s\n", out);
    for (int i = 0; i < c->n_runs; i++) {
        const run_params *p = &c->runs[i].p;
        for (int k = 1; k <= p->repetitions; k++) {
            char rate[32];
            if (isinf(p->rate))
                snprintf(rate, sizeof rate, "inf");
            else
                snprintf(rate, sizeof rate, "%g", p->rate);
            printf("  %-24s rep-%d  api %s, rate %s/s %s, ", c->runs[i].name, k, p->api, rate,
                   p->arrival);
            if (p->duration_s > 0)
                printf("duration %gs", p->duration_s);
            else
                printf("%ld requests", p->requests);
            printf(", warmup %d, seed %llu, prompts %s%s%s", p->warmup,
                   (unsigned long long)(p->seed + (uint64_t)(k - 1)), p->prompts,
                   p->mix ? " mix " : "", p->mix ? p->mix : "");
            if (p->max_tokens)
                printf(", max_tokens %d", p->max_tokens);
            if (p->concurrency)
                printf(", concurrency %d", p->concurrency);
            if (p->server_args && p->server_args[0])
                printf(", server_args \"%s\"", p->server_args);
            printf("\n");
            total++;
        }
    }
    printf("%d planned runs\n", total);
}

static void fill_opts(const run_params *p, const char *url, const char *dir, run_opts *o) {
    run_opts_defaults(o);
    o->url = url;
    o->api = p->api;
    o->model = p->model;
    o->prompts = p->prompts;
    o->mix = p->mix;
    o->max_tokens = p->max_tokens;
    o->ignore_eos = p->ignore_eos;
    if (p->duration_s > 0) {
        o->duration_s = p->duration_s;
        o->have_duration = 1;
    } else {
        o->requests = p->requests;
        o->have_requests = 1;
    }
    o->rate = p->rate;
    arrival_kind_parse(p->arrival ? p->arrival : "poisson", &o->arrival);
    o->burstiness = p->burstiness;
    o->concurrency = p->concurrency;
    o->warmup = p->warmup;
    o->seed = p->seed;
    o->timeout_s = p->timeout_s;
    o->cost = p->cost_per_hour;
    o->metrics_interval_s = p->metrics_interval_s;
    o->threads = p->threads > 0 ? p->threads : 1;
    o->http_client = p->http_client ? p->http_client : "auto";
    o->out = dir;
    o->quiet = 1;
    o->print_summary = 0;
    if (p->slo) {
        char err[256];
        if (slo_parse(p->slo, &o->slo, err, sizeof err) == 0)
            o->slo_text = p->slo;
    }
}

/* Copy the managed server's log (so far) into the run's directory. */
static void copy_log(const char *from, const char *dir) {
    char to[4096];
    snprintf(to, sizeof to, "%s/server.log", dir);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (in && out) {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

static void write_campaign_json(const char *out, json_t *doc) {
    if (write_json_atomic(out, "campaign.json", doc))
        warnx_("cannot write %s/campaign.json: %s", out, strerror(errno));
}

static json_t *resolved_run_json(const campaign_run *r) {
    const run_params *p = &r->p;
    return json_pack("{s:s,s:s,s:s?,s:s,s:s?,s:i,s:b,s:I,s:f,s:o,s:s,s:f,s:i,s:i,s:I,s:f,s:s?,"
                     "s:f,s:s,s:f,s:i,s:i,s:s}",
                     "name", r->name, "api", p->api, "model", p->model, "prompts", p->prompts,
                     "mix", p->mix, "max_tokens", p->max_tokens, "ignore_eos", p->ignore_eos,
                     "requests", (json_int_t)p->requests, "duration_s", p->duration_s, "rate",
                     isinf(p->rate) ? json_string("inf") : json_real(p->rate), "arrival",
                     p->arrival, "burstiness", p->burstiness, "concurrency", p->concurrency,
                     "warmup", p->warmup, "seed", (json_int_t)p->seed, "timeout_s", p->timeout_s,
                     "slo", p->slo, "cost_per_hour", p->cost_per_hour, "server_args",
                     p->server_args ? p->server_args : "", "metrics_interval_s",
                     p->metrics_interval_s, "repetitions", p->repetitions, "threads", p->threads,
                     "http_client", p->http_client ? p->http_client : "auto");
}

int sweep_execute(const campaign *c, const sweep_opts *o) {
    char out_default[512];
    const char *out = o->out;
    if (!out) {
        snprintf(out_default, sizeof out_default, "out/%s", c->name);
        out = out_default;
    }
    if (o->dry_run) {
        print_plan(c, out);
        return 0;
    }
    if (mkdir_p(out))
        die(2, "sweep: --out %s: cannot create: %s", out, strerror(errno));

    char started[40];
    utc_now_iso(started, sizeof started);
    json_t *runs_status = json_array();
    json_t *resolved = json_array();
    for (int i = 0; i < c->n_runs; i++)
        json_array_append_new(resolved, resolved_run_json(&c->runs[i]));
    json_t *target = json_pack("{s:s}", "kind", target_name(c->target));
    if (c->target == TARGET_URL)
        json_object_set_new(target, "url", json_string(c->url));
    else if (c->target == TARGET_SIM)
        json_object_set_new(target, "sim",
                            json_pack("{s:s,s:s}", "profile", c->sim_profile, "args", c->sim_args));
    else
        json_object_set_new(target, "server",
                            json_pack("{s:s,s:s,s:f,s:f,s:s}", "command", c->server_command,
                                      "health", c->health_path, "ready_timeout_s",
                                      c->ready_timeout_s, "stop_grace_s", c->stop_grace_s,
                                      "restart", c->restart_always ? "always" : "on_change"));
    json_t *doc =
        json_pack("{s:s,s:s?,s:s,s:o,s:o,s:o}", "name", c->name, "file", c->path, "started_utc",
                  started, "target", target, "runs", resolved, "status", runs_status);
    write_campaign_json(out, doc);

    server_proc managed = {0};
    int n_servers = 0, failures = 0, interrupted = 0;
    char servers_dir[600];
    snprintf(servers_dir, sizeof servers_dir, "%s/servers", out);
    int total = 0, done = 0;
    for (int i = 0; i < c->n_runs; i++)
        total += c->runs[i].p.repetitions;

    for (int i = 0; i < c->n_runs && !interrupted; i++) {
        const campaign_run *cr = &c->runs[i];
        for (int k = 1; k <= cr->p.repetitions && !interrupted; k++) {
            char dir[1024];
            snprintf(dir, sizeof dir, "%s/%s/rep-%d", out, cr->name, k);
            if (mkdir_p(dir))
                die(1, "sweep: cannot create %s: %s", dir, strerror(errno));
            const char *args = cr->p.server_args ? cr->p.server_args : "";
            const char *url = c->url;
            char err[1024] = "";
            int restarted = 0, server_ok = 1;
            server_proc sim = {0};
            char log[1200];
            if (c->target == TARGET_SIM) {
                /* a fresh simulator per run: clean metrics, its own trace */
                char tmpl[4096];
                snprintf(tmpl, sizeof tmpl,
                         "%s sim --port {port} --profile %s --trace %s/trace.csv %s {server_args}",
                         o->self, c->sim_profile, dir, c->sim_args);
                snprintf(log, sizeof log, "%s/server.log", dir);
                if (server_proc_start(&sim, tmpl, args, "/health", 30, log, err, sizeof err))
                    server_ok = 0;
                url = sim.url;
                restarted = 1;
            } else if (c->target == TARGET_SERVER) {
                int alive = managed.pid > 0 && server_proc_alive(&managed);
                if (!alive || c->restart_always || strcmp(managed.args, args)) {
                    if (managed.log_path) {
                        server_proc_note(&managed, "restarting: %s",
                                         !alive              ? "the server is not running"
                                         : c->restart_always ? "restart: always"
                                                             : "server_args changed");
                        server_proc_stop(&managed, c->stop_grace_s);
                    }
                    mkdir_p(servers_dir);
                    snprintf(log, sizeof log, "%s/server-%d.log", servers_dir, ++n_servers);
                    if (server_proc_start(&managed, c->server_command, args, c->health_path,
                                          c->ready_timeout_s, log, err, sizeof err))
                        server_ok = 0;
                    restarted = 1;
                }
                url = managed.url;
            }
            if (!o->quiet)
                fprintf(stderr, "sweep: [%d/%d] %s rep-%d%s ...\n", done + 1, total, cr->name, k,
                        restarted && c->target == TARGET_SERVER ? " (server started)" : "");
            run_opts ro;
            fill_opts(&cr->p, url, dir, &ro);
            ro.seed = cr->p.seed + (uint64_t)(k - 1); /* each repetition its own sample */
            json_t *extra =
                json_pack("{s:{s:s,s:s,s:i,s:s,s:b}}", "campaign", "name", c->name, "run", cr->name,
                          "repetition", k, "server_args", args, "server_restarted", restarted);
            run_result rr;
            json_t *cmdline = json_pack("[s,s,s]", "servelab", "sweep", c->path ? c->path : "-");
            run_execute(&ro, cmdline, extra, &rr);
            const char *status = "ok";
            if (!server_ok) {
                status = "server_start_failed";
            } else if (c->target == TARGET_SERVER && !server_proc_alive(&managed)) {
                status = "server_died";
                snprintf(err, sizeof err, "the server exited during the run: see %s",
                         managed.log_path ? managed.log_path : "its log");
            } else if (rr.interrupted) {
                status = "interrupted";
                interrupted = 1;
            } else if (rr.code != 0) {
                status = "failed";
            }
            if (strcmp(status, "ok") && strcmp(status, "interrupted"))
                failures++;
            if (c->target == TARGET_SERVER && managed.log_path)
                copy_log(managed.log_path, dir);
            if (c->target == TARGET_SIM)
                server_proc_stop(&sim, 5);
            json_array_append_new(
                runs_status,
                json_pack("{s:s,s:i,s:s,s:s,s:s,s:b,s:i,s:I,s:I,s:I,s:f,s:s?}", "run", cr->name,
                          "repetition", k, "dir", dir + strlen(out) + 1, "status", status,
                          "server_args", args, "server_restarted", restarted, "exit_code", rr.code,
                          "requests", (json_int_t)rr.requests, "completed",
                          (json_int_t)rr.completed, "failed", (json_int_t)rr.failed, "duration_s",
                          rr.duration_s, "error", err[0] ? err : NULL));
            write_campaign_json(out, doc);
            done++;
            if (!o->quiet)
                fprintf(stderr, "sweep:        %s: %zu/%zu completed in %.1f s%s%s\n", status,
                        rr.completed, rr.requests, rr.duration_s, err[0] ? ": " : "", err);
        }
    }
    if (managed.log_path)
        server_proc_stop(&managed, c->stop_grace_s);
    char fin[40];
    utc_now_iso(fin, sizeof fin);
    json_object_set_new(doc, "finished_utc", json_string(fin));
    json_object_set_new(doc, "interrupted", json_boolean(interrupted));
    write_campaign_json(out, doc);
    json_decref(doc);

    /* the report */
    char rep_out[700], err[1024];
    snprintf(rep_out, sizeof rep_out, "%s/report", out);
    report r;
    char *paths[1] = {(char *)out};
    report_opts ropts = {0};
    if (report_build(paths, 1, &ropts, &r, err, sizeof err)) {
        fprintf(stderr, "servelab: sweep: report: %s\n", err);
        return 1;
    }
    out_file *files;
    int nf;
    report_render(&r, &files, &nf);
    if (report_write(rep_out, files, nf, err, sizeof err))
        fprintf(stderr, "servelab: sweep: report: %s\n", err);
    /* the summary table, as in summary.md */
    printf("%-24s %9s %9s %8s %7s %10s %10s %10s %10s %11s %9s\n", "run", "offered", "realized",
           "requests", "failed", "TTFT p50", "TTFT p95", "TPOT p50", "TPOT p95", "out tok/s",
           "preempt");
    for (int k = 0; k < r.n_runs; k++) {
        const run_summary *s = &r.runs[k].pooled;
        printf("%-24s %9.2f %9.2f %8zu %7zu %10.1f %10.1f %10.2f %10.2f %11.1f %9.0f\n",
               r.runs[k].name, s->offered_rps, s->realized_offered_rps, s->requests, s->failed,
               s->ttft.p50, s->ttft.p95, s->tpot.p50, s->tpot.p95, s->output_tokens_per_s,
               isnan(r.runs[k].server.preemptions) ? 0 : r.runs[k].server.preemptions);
    }
    printf("report: %s/report.html\n", rep_out);
    out_files_free(files, nf);
    report_free(&r);
    return interrupted ? 130 : failures ? 1 : 0;
}
