/* run: one measured run, from resolved options to files on disk. The CLI
 * (`servelab run`) and the campaign runner (`servelab sweep`) both come
 * here, so a run in a sweep is exactly a `servelab run`. */
#ifndef SERVELAB_RUN_H
#define SERVELAB_RUN_H

#include "analysis/summary.h"
#include "workload/arrivals.h"

#include <jansson.h>
#include <stdint.h>

typedef struct run_opts {
    const char *url, *api, *model, *key_env, *prompts, *mix, *out, *cusage;
    const char *http_client; /* auto|builtin|libcurl */
    const char *cpus;        /* pin the client to these CPUs; NULL: no pinning */
    int realtime;            /* ask for SCHED_FIFO (common/cpus.h) */
    const char *headers[64];
    int n_headers;
    int insecure, ignore_eos, quiet;
    double rate, burstiness, duration_s, timeout_s, cost, fail_fraction;
    arrival_kind arrival;
    long requests, concurrency, max_tokens, warmup, max_event_bytes;
    uint64_t seed;
    int have_requests, have_duration, fail_on_slo;
    slo_spec slo;
    const char *slo_text;
    double metrics_interval_s; /* sampling of /metrics and GPUs; <= 0: 1 s */
    int no_sampling;           /* neither /metrics nor GPUs */
    int print_summary;         /* the table on stdout */
    int threads;               /* client threads (>= 1) */
} run_opts;

typedef struct run_result {
    size_t requests, completed, failed;
    int interrupted;
    double duration_s;
    int code; /* the exit code `servelab run` would give */
} run_result;

void run_opts_defaults(run_opts *o);
/* Checks that need the whole set (e.g. --duration with a finite rate);
 * -1 with a message. */
int run_opts_validate(const run_opts *o, char *err, int errlen);
/* Runs it. `command_line` (stolen) goes into meta.json as is; `extra_meta`
 * (stolen, may be NULL) is merged into meta.json. Bad input exits with 2
 * before any traffic. */
int run_execute(const run_opts *o, json_t *command_line, json_t *extra_meta, run_result *res);
/* meta.json's command line with --header values redacted. */
json_t *run_command_line_json(int argc, char **argv);

#endif
