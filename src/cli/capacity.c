/* cli/capacity: `servelab capacity`: the highest offered rate (or the most
 * closed-loop users) at which at least --goal of the requests meet the
 * SLO, with its 95% interval (capacity/search.c does the work). Its own
 * options are the table below; every other option of `servelab run`
 * passes to each probe, read with run's own rows (a capacity_opts starts
 * with its run_opts, so those rows apply as they are), except the ones
 * that set the load, which the search sets itself. */
#include "capacity/search.h"
#include "cli/commands.h"
#include "common/shellwords.h"
#include "common/util.h"
#include "model/answer.h"
#include "sim/sim_options.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP(field) OPT_AT(capacity_opts, field)
static const opt_def capacity_options[] = {
    {.name = "url",
     .type = OPT_STRING,
     CAP(run.url),
     .arg = "BASE",
     .group = "target",
     .help = "the server's base URL, or"},
    {.name = "sim",
     .type = OPT_STRING,
     CAP(sim),
     .arg = "ARGS",
     .help = "the simulator: a fresh `servelab sim ARGS` per probe (e.g. \"--profile gpu-7b\")"},
    {.name = "slo",
     .type = OPT_STRING,
     CAP(run.slo),
     .arg = "ttft=750ms,tpot=100ms[,e2e=30s]",
     .group = "search",
     .help = "the bounds a request must meet (required)"},
    {.name = "goal",
     .type = OPT_NUMBER,
     CAP(goal),
     .arg = "F",
     .min = 0.5,
     .max = 0.9999,
     .def = "0.99",
     .help = "the share of requests that must meet the SLO"},
    {.name = "by",
     .type = OPT_CHOICE,
     CAP(by),
     .choices = "rate|concurrency",
     .def = "rate",
     .help = "offered open-loop rate, or closed-loop users (--rate inf --concurrency N)"},
    {.name = "start-rate",
     .type = OPT_NUMBER,
     CAP(start_rate),
     .arg = "R",
     .min = 0,
     .above = 1,
     .def = "1",
     .help = "the first probe's rate in req/s (doubled until the goal fails)"},
    {.name = "start-concurrency",
     .type = OPT_INT,
     CAP(start_concurrency),
     .arg = "N",
     .min = 1,
     .def = "1",
     .help = "the first probe's users with --by concurrency"},
    {.name = "precision",
     .type = OPT_NUMBER,
     CAP(precision),
     .arg = "F",
     .min = 0.001,
     .max = 1,
     .def = "0.03",
     .help = "stop when the highest passing and lowest failing loads are this close (relative)"},
    {.name = "max-time",
     .type = OPT_SECONDS,
     CAP(max_time_s),
     .arg = "S",
     .min = 0,
     .above = 1,
     .def = "15m",
     .help = "start no probe after this long; probes are planned to fit in it (with --virtual: "
             "the probes' time in virtual time)"},
    {.name = "drain-timeout",
     .type = OPT_SECONDS,
     CAP(drain_max_s),
     .arg = "S",
     .min = 0,
     .def = "120s",
     .help =
         "against --url: before each probe, wait at most this long for the server's /metrics to "
         "show nothing running or waiting"},
    {.name = "requests",
     .type = OPT_INT,
     CAP(run.requests),
     OPT_SEEN(capacity_opts, run.have_requests),
     .arg = "N",
     .min = 1,
     .help = "requests of every probe (default: from the goal, docs/capacity.md; 381 at 0.99)"},
    {.name = "seed",
     .type = OPT_INT,
     CAP(run.seed),
     .arg = "N",
     .def = "0",
     .help = "the first probe's seed; probe K has seed + K - 1"},
    {.name = "out",
     .type = OPT_STRING,
     CAP(run.out),
     .arg = "DIR",
     .help = "capacity.json and the probes' run directories (out/capacity)"},
    {.name = "force",
     .type = OPT_FLAG,
     CAP(run.force),
     .help = "replace the search an earlier one left in --out"},
    {.name = "confirm",
     .type = OPT_CHOICE,
     CAP(confirm_text),
     .choices = "on|off",
     .def = "on",
     .help = "run the answer once more, " CAPACITY_TEXT(
         CAPACITY_CONFIRM_PROBES) " full probes long, before saying it"},
    {.name = "twin",
     .type = OPT_CHOICE,
     CAP(twin_text),
     .choices = "on|off",
     .def = "on",
     .help = "once the probes bracket the answer, fit the server's step model to their rows and "
             "probe the capacity it predicts (off: bisection alone)"},
    {.name = "virtual",
     .type = OPT_FLAG,
     CAP(virtual_time),
     .help = "with --sim: probes on the simulator's engine in virtual time (a rehearsal)"},
    {.name = "quiet", .type = OPT_FLAG, CAP(run.quiet), .help = "no progress on stderr"},
    {0}};

/* run's options that set the load or the verdict: the search sets them. */
static int set_by_search(const char *name) {
    static const char *const names[] = {"rate",        "duration", "concurrency",
                                        "fail-on-slo", "progress", NULL};
    for (const char *const *n = names; *n; n++)
        if (!strcmp(name, *n))
            return 1;
    return 0;
}

/* This command's rows, then run's that it does not replace or refuse. */
static opt_def *full_table(void) {
    size_t n_own = 0, n_run = 0;
    while (capacity_options[n_own].name)
        n_own++;
    while (run_options[n_run].name)
        n_run++;
    opt_def *t = xcalloc(n_own + n_run + 1, sizeof *t);
    memcpy(t, capacity_options, n_own * sizeof *t);
    size_t k = n_own;
    const char *heading = NULL; /* the heading of a run row left out passes to the next one */
    for (size_t i = 0; i < n_run; i++) {
        const opt_def *d = &run_options[i];
        if (d->group)
            heading = d->group;
        if (d->key_only || set_by_search(d->name) || opt_find(capacity_options, d->name))
            continue;
        t[k] = *d;
        t[k].group = heading;
        t[k].key = t[k].meta = NULL;
        heading = NULL;
        k++;
    }
    return t;
}

/* --virtual: the simulator's arguments read as `servelab sim` reads them
 * (split as a simulator probe's are, common/shellwords.h: no expansion),
 * into the engine a virtual probe runs on. *words keeps the words the
 * options point into (shellwords_free it). 0, or -1 with err. */
static int virtual_target_of(const char *args, char ***words, sim_opts *so, virtual_target *vt,
                             char *err, int errlen) {
    int n;
    char why[512];
    if (shellwords_split(args, words, &n, why, sizeof why)) {
        snprintf(err, errlen, "--sim \"%s\": %s", args, why);
        return -1;
    }
    char **argv = xcalloc((size_t)n + 2, sizeof *argv);
    argv[0] = "sim";
    for (int i = 0; i < n; i++)
        argv[i + 1] = (*words)[i];
    opt_args a;
    int rc = opt_scan(sim_options, n + 1, argv, &a, why, sizeof why);
    free(argv);
    if (rc) {
        snprintf(err, errlen, "--sim: %s", why);
        return -1;
    }
    const char *profile = opt_value(&a, "profile");
    int chosen = sim_opts_init_chosen(so, profile, opt_value(&a, "profile-file"), why, sizeof why);
    if (chosen < 0) {
        snprintf(err, errlen, "--sim: %s", why);
        rc = -1;
    } else if (chosen > 0) {
        snprintf(err, errlen, "--sim: unknown profile '%s'", profile);
        rc = -1;
    } else if (a.n_positional) {
        snprintf(err, errlen, "--sim: unexpected '%s'", a.positional[0]);
        rc = -1;
    } else if (opt_apply(&a, so, why, sizeof why) || sim_opts_finish(so, why, sizeof why)) {
        snprintf(err, errlen, "--sim: %s", why);
        rc = -1;
    }
    opt_args_free(&a);
    if (rc)
        return -1;
    *vt = (virtual_target){.engine = so->cfg.engine,
                           .eos_min_frac_pct = so->cfg.eos_min_frac_pct,
                           .seed = so->cfg.seed,
                           .model = so->cfg.model,
                           .profile = so->profile,
                           .profile_file = so->profile_file};
    return 0;
}

/* The answer's sentence on stdout (once a probe ran), then what went wrong. */
static int say_outcome(outcome got, const capacity_answer *said, const char *err) {
    if (said->tries > 0) {
        char sentence[1024];
        answer_sentence(said, sentence, sizeof sentence);
        printf("%s%s\n", got == OUTCOME_STOPPED ? "stopped before the search ended: so far, " : "",
               sentence);
    }
    if (got == OUTCOME_FAILED && err[0])
        fprintf(stderr, "servelab: capacity: %s\n", err);
    else if (got == OUTCOME_BAD_INPUT)
        cli_fail(&cmd_capacity, "%s", err);
    return cli_exit_code(got);
}

static int capacity_main(int argc, char **argv) {
    capacity_opts o;
    memset(&o, 0, sizeof o);
    run_opts_defaults(&o.run);
    o.run.print_summary = 0;
    opt_def *table = full_table();
    opt_defaults(capacity_options, &o);
    command with_run = cmd_capacity;
    with_run.options = table;
    int rc = cli_parse(&with_run, argc, argv, &o, 0, NULL);
    if (rc) {
        free(table);
        return rc > 0 ? 0 : 2;
    }
    char err[1024] = "";
    o.confirm = !strcmp(o.confirm_text, "on");
    o.twin = !strcmp(o.twin_text, "on");
    if (capacity_opts_validate(&o, err, sizeof err)) {
        free(table);
        return cli_fail(&cmd_capacity, "%s", err);
    }
    char **words = NULL;
    sim_opts so = {0};
    virtual_target vt;
    if (o.virtual_time && !o.sim) {
        free(table);
        return cli_fail(&cmd_capacity, "--virtual needs --sim ARGS (the engine to run on)");
    }
    if (o.virtual_time && virtual_target_of(o.sim, &words, &so, &vt, err, sizeof err)) {
        shellwords_free(words);
        sim_opts_free(&so);
        free(table);
        return cli_fail(&cmd_capacity, "%s", err);
    }
    if (o.virtual_time)
        o.vt = &vt;
    o.self = cli_self_path(argv[0]);
    o.notices = cli_notices(); /* a probe's line as it is, warnings as every command's */
    capacity_answer said;
    outcome got =
        capacity_execute(&o, run_command_line_json(argc + 1, argv - 1), &said, err, sizeof err);
    int code = say_outcome(got, &said, err);
    if (o.virtual_time)
        shellwords_free(words);
    sim_opts_free(&so);
    free(table);
    return code;
}

const command cmd_capacity = {
    .name = "capacity",
    .run = capacity_main,
    .usage = "capacity (--url URL | --sim ARGS) --slo SLO [--goal F] [--by rate|concurrency] "
             "[options]",
    .about = "the load at which users start waiting, with its 95% interval",
    .text = "Finds the highest offered request rate (or, with --by concurrency, the most\n"
            "closed-loop users) at which, in the long run, at least --goal of the requests\n"
            "meet the SLO: doubles the load until a probe fails, measures what the server\n"
            "completes when kept busy (random arrivals fail at or above it), fits the\n"
            "server's step model to the probes' rows and probes the capacity that twin\n"
            "predicts and a --precision step above it (--twin), else bisects with\n"
            "probes long enough for an overload of --precision to push waits past the SLO,\n"
            "repeats the probes at the ends whose verdict is not clear at 95%, and runs the\n"
            "answer once more, three probes long (--confirm). A probe already lost is stopped\n"
            "early. Every probe is a run directory OUT/probe-NN-LOAD; OUT/capacity.json holds\n"
            "the answer, its interval and every probe; one sentence on stdout says it. Exit 0\n"
            "found, 1 not found, 2 bad input.",
    .options = capacity_options,
    .notes = "Every other option of servelab run (servelab run --help) is taken as well and\n"
             "passes to each probe: prompts, mix, max tokens, arrival, api, headers, warmup,\n"
             "timeout, sampling. Not --rate, --duration, --concurrency or --fail-on-slo: the\n"
             "search sets the load. docs/capacity.md explains the search and the interval.\n",
};
