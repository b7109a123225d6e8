/* cli/run: `servelab run`, the command line of one load run: parses and
 * checks the options, then hands them to run_execute (run/run.c). */
#include "cli/commands.h"
#include "common/util.h"
#include "run/run.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void run_usage(FILE *f) {
    fputs("usage: servelab run --url URL [options]\n"
          "One open-loop load run; rows in --out DIR, the summary on stdout.\n\n"
          "target:\n"
          "  --url BASE              server base URL, e.g. http://127.0.0.1:8000\n"
          "  --api completions|chat  endpoint (completions)\n"
          "  --model NAME            model id (default: the first from /v1/models)\n"
          "  --api-key-env VAR       send $VAR as a Bearer token (default OPENAI_API_KEY if set)\n"
          "  --header 'K: V'         extra request header (repeatable)\n"
          "  --insecure              do not verify TLS certificates\n"
          "arrivals:\n"
          "  --rate R                requests/s, or inf for all at t=0 (inf)\n"
          "  --arrival KIND          poisson|gamma|constant (poisson)\n"
          "  --burstiness CV         gamma's coefficient of variation (1)\n"
          "  --requests N            how many requests (100), or\n"
          "  --duration S            schedule arrivals for S seconds\n"
          "  --concurrency N         cap on requests in flight (none: open loop)\n"
          "  --seed N                seed of schedule and prompt choice (0)\n"
          "workload:\n"
          "  --prompts SRC           builtin | FILE.jsonl | sharegpt:FILE.json | random:IN:OUT\n"
          "  --mix short=0.5,...     class weights (builtin: short=0.5,medium=0.3,long=0.2)\n"
          "  --max-tokens N          output cap for every request (default per class)\n"
          "  --ignore-eos            ask the server to generate exactly max_tokens\n"
          "  --continuous-usage M    auto|on|off: ask for per-chunk usage (auto: vLLM-like)\n"
          "run:\n"
          "  --warmup N              requests sent first and not counted (0)\n"
          "  --timeout S             per-request timeout in seconds (600)\n"
          "  --slo ttft=750ms,tpot=100ms[,e2e=30s]   goodput bounds\n"
          "  --fail-on-slo[=F]       exit 1 when under fraction F met the SLO (F=1)\n"
          "  --cost-per-hour USD     for cost per million output tokens\n"
          "  --out DIR               where rows and summaries go (out/run-UTCTIME)\n"
          "  --max-event-bytes N     largest SSE event accepted (16777216)\n"
          "  --metrics-interval S    sample /metrics and GPUs every S seconds (1)\n"
          "  --no-sampling           sample neither /metrics nor GPUs\n"
          "  --threads N             client threads, each its own loop and connections (1)\n"
          "  --http-client C         auto|builtin|libcurl (auto: builtin for plain http://)\n"
          "  --cpus LIST             run the client on these CPUs only, e.g. 0 or 0-1\n"
          "  --realtime              SCHED_FIFO when allowed, else nice -10\n"
          "  --quiet                 no progress line\n",
          f);
}

enum {
    O_URL = 1000,
    O_API,
    O_MODEL,
    O_KEYENV,
    O_HEADER,
    O_INSECURE,
    O_RATE,
    O_ARRIVAL,
    O_BURST,
    O_REQUESTS,
    O_DURATION,
    O_CONC,
    O_SEED,
    O_PROMPTS,
    O_MIX,
    O_MAXTOK,
    O_IGNORE_EOS,
    O_CUSAGE,
    O_WARMUP,
    O_TIMEOUT,
    O_SLO,
    O_FAILSLO,
    O_COST,
    O_OUT,
    O_MAXEV,
    O_QUIET,
    O_HELP,
    O_MINTERVAL,
    O_NOSAMPLE,
    O_THREADS,
    O_HTTPCLIENT,
    O_CPUS,
    O_REALTIME
};

static const struct option long_opts[] = {{"url", required_argument, 0, O_URL},
                                          {"api", required_argument, 0, O_API},
                                          {"model", required_argument, 0, O_MODEL},
                                          {"api-key-env", required_argument, 0, O_KEYENV},
                                          {"header", required_argument, 0, O_HEADER},
                                          {"insecure", no_argument, 0, O_INSECURE},
                                          {"rate", required_argument, 0, O_RATE},
                                          {"arrival", required_argument, 0, O_ARRIVAL},
                                          {"burstiness", required_argument, 0, O_BURST},
                                          {"requests", required_argument, 0, O_REQUESTS},
                                          {"duration", required_argument, 0, O_DURATION},
                                          {"concurrency", required_argument, 0, O_CONC},
                                          {"seed", required_argument, 0, O_SEED},
                                          {"prompts", required_argument, 0, O_PROMPTS},
                                          {"mix", required_argument, 0, O_MIX},
                                          {"max-tokens", required_argument, 0, O_MAXTOK},
                                          {"ignore-eos", no_argument, 0, O_IGNORE_EOS},
                                          {"continuous-usage", required_argument, 0, O_CUSAGE},
                                          {"warmup", required_argument, 0, O_WARMUP},
                                          {"timeout", required_argument, 0, O_TIMEOUT},
                                          {"slo", required_argument, 0, O_SLO},
                                          {"fail-on-slo", optional_argument, 0, O_FAILSLO},
                                          {"cost-per-hour", required_argument, 0, O_COST},
                                          {"out", required_argument, 0, O_OUT},
                                          {"max-event-bytes", required_argument, 0, O_MAXEV},
                                          {"quiet", no_argument, 0, O_QUIET},
                                          {"metrics-interval", required_argument, 0, O_MINTERVAL},
                                          {"no-sampling", no_argument, 0, O_NOSAMPLE},
                                          {"threads", required_argument, 0, O_THREADS},
                                          {"http-client", required_argument, 0, O_HTTPCLIENT},
                                          {"cpus", required_argument, 0, O_CPUS},
                                          {"realtime", no_argument, 0, O_REALTIME},
                                          {"help", no_argument, 0, O_HELP},
                                          {0, 0, 0, 0}};

static long opt_long(const char *flag, const char *v, long lo) {
    long x;
    if (parse_int(v, &x) || x < lo)
        die(2, "run: --%s: expected an integer >= %ld, got '%s'", flag, lo, v);
    return x;
}

static double opt_double(const char *flag, const char *v, double lo) {
    double x;
    if (parse_double(v, &x) || x < lo)
        die(2, "run: --%s: expected a number >= %g, got '%s'", flag, lo, v);
    return x;
}

static void parse_opts(int argc, char **argv, run_opts *o) {
    run_opts_defaults(o);
    char err[512];
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        const char *name = NULL;
        for (const struct option *lo = long_opts; lo->name; lo++)
            if (lo->val == c)
                name = lo->name;
        switch (c) {
        case O_URL: o->url = optarg; break;
        case O_API:
            if (strcmp(optarg, "completions") && strcmp(optarg, "chat"))
                die(2, "run: --api: expected completions or chat, got '%s'", optarg);
            o->api = optarg;
            break;
        case O_MODEL: o->model = optarg; break;
        case O_KEYENV: o->key_env = optarg; break;
        case O_HEADER:
            if (!strchr(optarg, ':') || optarg[0] == ':')
                die(2, "run: --header: expected 'Name: value', got '%s'", optarg);
            if (o->n_headers == 64)
                die(2, "run: --header: at most 64 headers");
            o->headers[o->n_headers++] = optarg;
            break;
        case O_INSECURE: o->insecure = 1; break;
        case O_RATE:
            if (!strcasecmp(optarg, "inf"))
                o->rate = INFINITY;
            else if (parse_double(optarg, &o->rate) || o->rate <= 0)
                die(2, "run: --rate: expected a positive number or inf, got '%s'", optarg);
            break;
        case O_ARRIVAL:
            if (arrival_kind_parse(optarg, &o->arrival))
                die(2, "run: --arrival: expected poisson, gamma or constant, got '%s'", optarg);
            break;
        case O_BURST: o->burstiness = opt_double(name, optarg, 1e-3); break;
        case O_REQUESTS:
            o->requests = opt_long(name, optarg, 1);
            o->have_requests = 1;
            break;
        case O_DURATION: {
            double ms;
            if (parse_duration_ms(optarg, &ms) || ms <= 0)
                die(2, "run: --duration: expected seconds (e.g. 60 or 2m), got '%s'", optarg);
            o->duration_s = ms / 1000;
            o->have_duration = 1;
            break;
        }
        case O_CONC: o->concurrency = opt_long(name, optarg, 1); break;
        case O_SEED: o->seed = (uint64_t)opt_long(name, optarg, 0); break;
        case O_PROMPTS: o->prompts = optarg; break;
        case O_MIX: o->mix = optarg; break;
        case O_MAXTOK: o->max_tokens = opt_long(name, optarg, 1); break;
        case O_IGNORE_EOS: o->ignore_eos = 1; break;
        case O_CUSAGE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "on") && strcmp(optarg, "off"))
                die(2, "run: --continuous-usage: expected auto, on or off, got '%s'", optarg);
            o->cusage = optarg;
            break;
        case O_WARMUP: o->warmup = opt_long(name, optarg, 0); break;
        case O_TIMEOUT: {
            double ms;
            if (parse_duration_ms(optarg, &ms) || ms <= 0)
                die(2, "run: --timeout: expected seconds, got '%s'", optarg);
            o->timeout_s = ms / 1000;
            break;
        }
        case O_SLO:
            if (slo_parse(optarg, &o->slo, err, sizeof err))
                die(2, "run: %s", err);
            o->slo_text = optarg;
            break;
        case O_FAILSLO:
            o->fail_on_slo = 1;
            if (optarg && (parse_double(optarg, &o->fail_fraction) || o->fail_fraction < 0 ||
                           o->fail_fraction > 1))
                die(2, "run: --fail-on-slo: expected a fraction in [0,1], got '%s'", optarg);
            break;
        case O_COST: o->cost = opt_double(name, optarg, 0); break;
        case O_OUT: o->out = optarg; break;
        case O_CPUS: o->cpus = optarg; break;
        case O_REALTIME: o->realtime = 1; break;
        case O_HTTPCLIENT:
            if (strcmp(optarg, "auto") && strcmp(optarg, "builtin") && strcmp(optarg, "libcurl"))
                die(2, "run: --http-client: expected auto, builtin or libcurl, got '%s'", optarg);
            o->http_client = optarg;
            break;
        case O_MAXEV: o->max_event_bytes = opt_long(name, optarg, 1024); break;
        case O_QUIET: o->quiet = 1; break;
        case O_MINTERVAL: {
            double ms;
            if (parse_duration_ms(optarg, &ms) || ms < 10)
                die(2, "run: --metrics-interval: expected seconds >= 0.01, got '%s'", optarg);
            o->metrics_interval_s = ms / 1000;
            break;
        }
        case O_NOSAMPLE: o->no_sampling = 1; break;
        case O_THREADS:
            o->threads = (int)opt_long(name, optarg, 1);
            if (o->threads > 64)
                die(2, "run: --threads: at most 64");
            break;
        case O_HELP:
        case 'h': run_usage(stdout); exit(0);
        default:
            die(2, "run: unknown or incomplete option '%s' (see servelab run --help)",
                argv[optind - 1]);
        }
    }
    if (optind < argc)
        die(2, "run: unexpected argument '%s'", argv[optind]);
    if (run_opts_validate(o, err, sizeof err))
        die(2, "run: %s", err);
}

int cmd_run(int argc, char **argv) {
    run_opts o;
    parse_opts(argc, argv, &o);
    run_result r;
    return run_execute(&o, run_command_line_json(argc + 1, argv - 1), NULL, &r);
}
