/* cli/predict: `servelab predict`, a run against the simulator's engine in
 * virtual time: the workload and schedule options of `servelab run` and
 * the engine options of `servelab sim`, and the same files in --out as a
 * run against `servelab sim` would leave (run/virtual_client.h). With
 * --capacity it gives the long run's capacity of that engine instead
 * (capacity/longrun.h). Its options: its own rows below, then run's that
 * make sense without a server (a predict_opts starts with its run_opts, so
 * they apply as they are), then sim's engine rows moved onto the sim_opts
 * inside it. */
#include "capacity/longrun.h"
#include "cli/commands.h"
#include "common/util.h"
#include "model/answer.h"
#include "run/run.h"
#include "run/virtual_client.h"
#include "sim/sim_options.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct predict_opts {
    run_opts run; /* first: run's rows apply as they are */
    sim_opts sim;
    int64_t sim_seed;
    int chunks;
    int capacity;
    const char *by;
    double goal, precision;
    int64_t capacity_requests;
} predict_opts;

#define PRED(field) OPT_AT(predict_opts, field)
static const opt_def predict_options[] = {
    {.name = "sim-seed",
     .type = OPT_INT,
     PRED(sim_seed),
     .arg = "N",
     .def = "0",
     .group = "engine",
     .help = "the simulator's --seed: output lengths and step jitter"},
    {.name = "chunks",
     .type = OPT_FLAG,
     PRED(chunks),
     .help = "also write chunks.csv (a token a row) and the ITL figures"},
    {.name = "capacity",
     .type = OPT_FLAG,
     PRED(capacity),
     .group = "long-run capacity",
     .help = "the highest rate whose long run meets --slo for --goal of requests"},
    {.name = "by",
     .type = OPT_CHOICE,
     PRED(by),
     .choices = "rate|concurrency",
     .def = "rate",
     .help = "with --capacity: offered open-loop rate, or closed-loop users"},
    {.name = "goal",
     .type = OPT_NUMBER,
     PRED(goal),
     .arg = "F",
     .min = 0.5,
     .max = 0.9999,
     .def = "0.99",
     .help = "with --capacity: the share of requests that must meet the SLO"},
    {.name = "precision",
     .type = OPT_NUMBER,
     PRED(precision),
     .arg = "F",
     .min = 0.0001,
     .max = 0.5,
     .def = "0.002",
     .help = "with --capacity: bisect until the bracket is this narrow (relative)"},
    {.name = "capacity-requests",
     .type = OPT_INT,
     PRED(capacity_requests),
     .arg = "N",
     .min = 1000,
     .max = 100000000,
     .def = "200000",
     .help = "with --capacity: requests of each virtual run"},
    {0}};

/* run's options that need a server, a network or real time. */
static int not_for_predict(const char *name) {
    static const char *const names[] = {"url",
                                        "api-key-env",
                                        "header",
                                        "insecure",
                                        "http-client",
                                        "threads",
                                        "shard",
                                        "shard-count",
                                        "start-at",
                                        "metrics-listen",
                                        "preconnect",
                                        "metrics-interval",
                                        "no-sampling",
                                        "server-pid",
                                        "cpus",
                                        "realtime",
                                        "progress",
                                        "progress-interval",
                                        "warmup",
                                        "save-vllm-json",
                                        "metric-percentiles",
                                        "max-event-bytes",
                                        "max-chunks",
                                        "tools", /* the engine writes no text to check */
                                        "response-format",
                                        NULL};
    for (const char *const *n = names; *n; n++)
        if (!strcmp(name, *n))
            return 1;
    return 0;
}

/* sim's rows that model the engine (not its sockets, faults or trace);
 * --model and --seed are run's (the served id is the one asked for) and
 * --sim-seed. */
static int engine_row(const char *name) {
    static const char *const names[] = {"profile",
                                        "profile-file",
                                        "max-num-seqs",
                                        "kv-blocks",
                                        "gpu-memory-utilization",
                                        "no-prefix-caching",
                                        "block-size",
                                        "max-model-len",
                                        "max-num-batched-tokens",
                                        "decode-base-ms",
                                        "decode-per-seq-ms",
                                        "step-ms-by-batch",
                                        "prefill-per-token-ms",
                                        "prefill-ctx-per-1k-ms",
                                        "prefill-ms-by-tokens",
                                        "mixed-step-per-seq-ms",
                                        "idle-wake-ms",
                                        "idle-after-ms",
                                        "jitter",
                                        "speedup",
                                        "eos-min-frac-pct",
                                        "num-speculative-tokens",
                                        "spec-accept",
                                        "reasoning-tokens",
                                        "reasoning-usage",
                                        NULL};
    for (const char *const *n = names; *n; n++)
        if (!strcmp(name, *n))
            return 1;
    return 0;
}

static size_t table_len(const opt_def *t) {
    size_t n = 0;
    while (t[n].name)
        n++;
    return n;
}

/* This command's rows, run's it keeps, and sim's engine rows moved onto
 * predict_opts.sim. */
static opt_def *full_table(void) {
    size_t n_own = table_len(predict_options), n_run = table_len(run_options),
           n_sim = table_len(sim_options);
    opt_def *t = xcalloc(n_own + n_run + n_sim + 1, sizeof *t);
    size_t k = 0;
    const char *heading = NULL; /* the heading of a row left out passes to the next one */
    for (size_t i = 0; i < n_run; i++) {
        const opt_def *d = &run_options[i];
        if (d->group)
            heading = d->group;
        if (d->key_only || not_for_predict(d->name))
            continue;
        t[k] = *d;
        t[k].group = heading;
        t[k].key = NULL;
        heading = NULL;
        k++;
    }
    size_t shift = offsetof(predict_opts, sim);
    int first = 1;
    for (size_t i = 0; i < n_sim; i++) {
        const opt_def *d = &sim_options[i];
        if (!engine_row(d->name))
            continue;
        t[k] = *d;
        t[k].at += shift;
        if (t[k].seen)
            t[k].seen += shift;
        t[k].key = t[k].meta = NULL;
        t[k].group = first ? "engine (servelab sim's)" : NULL;
        first = 0;
        k++;
    }
    memcpy(t + k, predict_options, n_own * sizeof *t);
    return t;
}

/* The profile first, as `servelab sim` reads it: the engine's flags
 * override its values. 0, or -1 with why (a profile file that does not
 * read, or two profiles). */
static int init_profile(predict_opts *o, const opt_def *table, int argc, char **argv, char *err,
                        int errlen) {
    opt_args args;
    sim_opts_init(&o->sim, "tiny");
    if (opt_scan(table, argc, argv, &args, err, (size_t)errlen) != 0)
        return 0; /* cli_parse reports it */
    /* an unknown name (1) is cli_parse's to report, like any bad value */
    int rc = sim_opts_init_chosen(&o->sim, opt_value(&args, "profile"),
                                  opt_value(&args, "profile-file"), err, errlen);
    opt_args_free(&args);
    return rc < 0 ? -1 : 0;
}

static int predict_capacity(const predict_opts *o, const virtual_target *vt) {
    longrun_opts lo = {.run = &o->run,
                       .target = vt,
                       .by_concurrency = !strcmp(o->by, "concurrency"),
                       .goal = o->goal,
                       .precision = o->precision,
                       .requests = (long)o->capacity_requests,
                       .progress = o->run.quiet ? NULL : cli_notices()}; /* each load tried */
    char err[1024];
    if (o->run.out && longrun_out_check(o->run.out, o->run.force, err, sizeof err))
        return cli_fail(&cmd_predict, "%s", err); /* before the search, not after it */
    longrun_result r;
    outcome got = longrun_capacity(&lo, &r, err, sizeof err);
    if (got == OUTCOME_BAD_INPUT)
        return cli_fail(&cmd_predict, "%s", err);
    if (got == OUTCOME_FAILED) {
        fprintf(stderr, "servelab: predict: %s\n", err);
        return 1;
    }
    if (got == OUTCOME_STOPPED)
        return cli_exit_code(got);
    char sentence[1024];
    answer_sentence(&r.ans, sentence, sizeof sentence);
    printf("%s\n", sentence);
    if (o->run.out && longrun_write(o->run.out, &lo, &r, o->run.force, err, sizeof err)) {
        fprintf(stderr, "servelab: predict: %s\n", err);
        return 1;
    }
    return 0;
}

/* The command once its options are read into o. */
static int predict_parsed(predict_opts *o, int argc, char **argv) {
    char err[1024];
    o->sim.cfg.seed = (uint64_t)o->sim_seed;
    o->sim.cfg.model = o->run.model ? o->run.model : "sim-model";
    if (sim_opts_finish(&o->sim, err, sizeof err))
        return cli_fail(&cmd_predict, "%s", err);
    virtual_target vt = {.engine = o->sim.cfg.engine,
                         .eos_min_frac_pct = o->sim.cfg.eos_min_frac_pct,
                         .seed = o->sim.cfg.seed,
                         .model = o->sim.cfg.model,
                         .profile = o->sim.profile,
                         .profile_file = o->sim.profile_file,
                         .chunks = o->chunks,
                         .reasoning_tokens = o->sim.cfg.reasoning_tokens,
                         .reasoning_usage = o->sim.cfg.reasoning_usage};
    engine_stats stats = {0};
    vt.stats = &stats;
    o->run.predict = &vt;
    o->run.progress = "off";
    if (run_opts_validate(&o->run, err, sizeof err))
        return cli_fail(&cmd_predict, "%s", err);
    if (o->capacity)
        return predict_capacity(o, &vt);
    run_result r;
    outcome done = run_execute(&o->run, run_command_line_json(argc + 1, argv - 1), NULL, &r);
    if (r.error[0])
        fprintf(stderr, "servelab: predict: %s\n", r.error);
    return cli_exit_code(done);
}

static int predict_main(int argc, char **argv) {
    predict_opts o;
    memset(&o, 0, sizeof o);
    run_opts_defaults(&o.run);
    o.run.summary_to = stdout; /* the run's table */
    opt_def *table = full_table();
    command with_all = cmd_predict;
    with_all.options = table;
    char err[1024];
    if (init_profile(&o, table, argc, argv, err, sizeof err)) {
        free(table);
        return cli_fail(&cmd_predict, "%s", err);
    }
    opt_defaults(predict_options, &o);
    int rc = cli_parse(&with_all, argc, argv, &o, 0, NULL);
    free(table);
    int code = rc ? (rc > 0 ? 0 : 2) : predict_parsed(&o, argc, argv);
    sim_opts_free(&o.sim);
    return code;
}

const command cmd_predict = {
    .name = "predict",
    .run = predict_main,
    .usage = "predict [--profile NAME] [engine options] [run options] [--capacity --slo SLO]",
    .about = "the simulator's engine in virtual time: the rows a run would have",
    .text = "Sends a run's schedule (the arrival, workload and length options of servelab\n"
            "run) to the simulator's engine (the profile and engine options of servelab sim)\n"
            "in virtual time: no sockets, no real clock, the CPU's speed. It writes the files\n"
            "a run against servelab sim would leave in --out (requests.csv with the same\n"
            "columns, meta.json, summary.json; chunks.csv with --chunks) and prints the\n"
            "summary. With --capacity it finds instead the highest rate whose long run (virtual\n"
            "runs of --capacity-requests requests, by bisection) meets --slo for --goal of\n"
            "the requests: the measuring rod of servelab capacity (docs/predict.md).",
    .options = predict_options,
    .notes = "--seed is the schedule's, as for servelab run; --sim-seed the simulator's. The\n"
             "served model is --model (default sim-model).\n",
};
