/* sweep_plan: the dry run's plan (see sweep_plan.h). The arithmetic of a
 * repetition's length follows what run/ will do with the same options: a
 * rate plan's duration and expected count, a duration x rate, or a number
 * of requests at a rate; the warmup's arrivals come first. */
#include "sweep/sweep_plan.h"
#include "common/files.h"
#include "common/shellwords.h"
#include "workload/rate_plan.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

const char *sweep_plan_target_name(target_kind k) {
    return k == TARGET_URL ? "url" : k == TARGET_SIM ? "sim" : k == TARGET_VLLM ? "vllm" : "server";
}

static void print_run_plan(FILE *f, const campaign_run *r, int k) {
    const run_opts *p = &r->p;
    char rate[32];
    if (isinf(p->rate))
        snprintf(rate, sizeof rate, "inf");
    else
        snprintf(rate, sizeof rate, "%g", p->rate);
    if (p->rate_plan)
        fprintf(f, "  %-24s rep-%d  api %s, rate plan \"%s\" %s, ", r->name, k, p->api,
                p->rate_plan, p->arrival);
    else
        fprintf(f, "  %-24s rep-%d  api %s, rate %s/s %s, ", r->name, k, p->api, rate, p->arrival);
    if (p->rate_plan)
        fprintf(f, "as many requests as the plan draws");
    else if (p->duration_s > 0)
        fprintf(f, "duration %gs", p->duration_s);
    else
        fprintf(f, "%lld requests", (long long)p->requests);
    fprintf(f, ", warmup %lld, seed %llu, prompts %s%s%s", (long long)p->warmup,
            (unsigned long long)((uint64_t)p->seed + (uint64_t)(k - 1)), p->prompts,
            p->mix ? " mix " : "", p->mix ? p->mix : "");
    if (p->max_tokens)
        fprintf(f, ", max_tokens %lld", (long long)p->max_tokens);
    if (p->concurrency)
        fprintf(f, ", concurrency %lld", (long long)p->concurrency);
    if (p->slo)
        fprintf(f, ", slo %s", p->slo);
    if (r->server_args[0])
        fprintf(f, ", server_args \"%s\"", r->server_args);
    fprintf(f, "\n");
}

/* How long a repetition's arrivals take, in seconds (its warmup's too);
 * NAN when all arrive at once (their length is the server's). */
static double arrivals_s(const run_opts *p) {
    rate_plan plan;
    char why[256];
    if (p->rate_plan && !rate_plan_parse(p->rate_plan, &plan, why, sizeof why)) {
        double mean = rate_plan_mean_rps(&plan), d = plan.duration_s;
        return d + (p->warmup > 1 && mean > 0 ? (double)(p->warmup - 1) / mean : 0);
    }
    if (p->duration_s > 0)
        return p->duration_s + (p->warmup > 1 ? (double)(p->warmup - 1) / p->rate : 0);
    if (isinf(p->rate))
        return NAN;
    return (double)(p->requests - 1 + (p->warmup > 1 ? p->warmup - 1 : 0)) / p->rate;
}

/* How many requests a repetition schedules, about: a rate plan's expected
 * count, a duration's rate x length, or --requests. */
static double planned_requests(const run_opts *p) {
    rate_plan plan;
    char why[256];
    if (p->rate_plan && !rate_plan_parse(p->rate_plan, &plan, why, sizeof why)) {
        return rate_plan_expected(&plan);
    }
    return p->duration_s > 0 ? p->duration_s * p->rate : (double)p->requests;
}

/* The vLLM command as it will start, {port} for the port servelab picks;
 * then, on a line of its own, the dtype and why. */
static void print_vllm(FILE *f, const campaign *c) {
    size_t len;
    char *cpuinfo = read_whole_file("/proc/cpuinfo", &len), why[512];
    vllm_command cmd;
    if (vllm_server_command(&c->vllm, "{port}", "", cpuinfo, &cmd, why, sizeof why) == 0) {
        char *line = shellwords_join(cmd.argv);
        fprintf(f, " (");
        for (int i = 0; i < cmd.n_env; i++)
            fprintf(f, "%s ", cmd.env[i]);
        fprintf(f, "%s [+ each run's server_args]; --dtype %s: %s)", line, cmd.dtype,
                cmd.dtype_why);
        free(line);
    }
    vllm_command_free(&cmd);
    free(cpuinfo);
}

void sweep_plan_print(FILE *f, const campaign *c, const char *out) {
    int total = 0, unknown = 0;
    double requests = 0, seconds = 0;
    fprintf(f, "campaign %s (%s), target %s", c->name, c->path ? c->path : "-",
            sweep_plan_target_name(c->target));
    if (c->target == TARGET_URL)
        fprintf(f, " %s", c->url);
    else if (c->target == TARGET_SIM)
        fprintf(f, " (profile %s%s%s)", c->sim_profile, c->sim_args[0] ? " " : "", c->sim_args);
    else if (c->target == TARGET_VLLM)
        print_vllm(f, c);
    else
        fprintf(f, " (%s)", c->server_command);
    fprintf(f, ", output %s\n", out);
    for (int i = 0; i < c->n_runs; i++)
        for (int k = 1; k <= c->runs[i].repetitions; k++, total++) {
            const run_opts *p = &c->runs[i].p;
            print_run_plan(f, &c->runs[i], k);
            double s = arrivals_s(p);
            requests += planned_requests(p);
            if (isnan(s))
                unknown++;
            else
                seconds += s;
        }
    fprintf(f, "%d planned runs, about %.0f requests; arrivals take %.0f s (%.1f h)", total,
            requests, seconds, seconds / 3600);
    if (unknown)
        fprintf(f, " plus the runs whose requests all arrive at once (%d)", unknown);
    fprintf(f, ", plus the time the last answers and the server starts take\n");
}
