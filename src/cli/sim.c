/* cli/sim: `servelab sim`, option parsing and the event loop around the
 * simulated server. Every profile parameter has its own override flag. */
#include "cli/commands.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/util.h"
#include "sim/api.h"
#include "sim/profiles.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sim_usage(FILE *f) {
    fprintf(f,
            "usage: servelab sim [options]\n"
            "A simulated vLLM-like OpenAI-compatible server: continuous batching, paged KV\n"
            "cache, preemption, vLLM metric names. Prints 'listening on http://HOST:PORT'.\n\n"
            "  --host H                  bind address (127.0.0.1)\n"
            "  --port N                  port (8000; 0 picks a free one)\n"
            "  --profile NAME            %s (tiny)\n"
            "  --model NAME              served model id (sim-model)\n"
            "  --seed N                  seed for output lengths, jitter, faults (0)\n"
            "  --trace FILE              ground-truth CSV, one row per request\n"
            "  --trace-tokens FILE       when each token's bytes were written (benchmarks)\n"
            "  --fault SPEC              e.g. http429=0.05,http500=0.02,disconnect=0.02,\n"
            "                            malformed=0.01,stall=0.01\n"
            "  --stall-ms MS             how long a stall fault lasts (60000)\n"
            "  --threads N               I/O threads behind the one engine (1)\n"
            "  --cpus LIST               run on these CPUs only, e.g. 1 or 2-3\n"
            "  --realtime                SCHED_FIFO when allowed, else nice -10\n"
            "engine overrides (defaults from the profile):\n"
            "  --max-num-seqs N  --kv-blocks N  --block-size N  --max-model-len N\n"
            "  --max-num-batched-tokens N  --decode-base-ms MS  --decode-per-seq-ms MS\n"
            "  --prefill-per-token-ms MS  --jitter FRAC  --eos-min-frac-pct PCT\n"
            "limits:\n"
            "  --max-connections N (10000)  --max-body-bytes N (8388608)\n"
            "  --max-header-bytes N (16384)  --request-timeout-ms MS (30000)\n"
            "  --idle-timeout-ms MS (300000)\n"
            "  A request must arrive whole within the request timeout (the first one\n"
            "  counted from the connection's accept); an idle keep-alive connection\n"
            "  closes after the idle timeout; at the connection limit a new connection\n"
            "  evicts the one that has waited longest for its next request.\n",
            sim_profile_names());
}

enum {
    O_HOST = 1000,
    O_PORT,
    O_PROFILE,
    O_MODEL,
    O_SEED,
    O_TRACE,
    O_FAULT,
    O_STALL,
    O_SEQS,
    O_BLOCKS,
    O_BSIZE,
    O_MAXLEN,
    O_BATCHED,
    O_DBASE,
    O_DSEQ,
    O_PREFILL,
    O_JITTER,
    O_EOS,
    O_MAXCONN,
    O_MAXBODY,
    O_MAXHEAD,
    O_REQTIMEOUT,
    O_IDLETIMEOUT,
    O_HELP,
    O_TTRACE,
    O_CPUS,
    O_REALTIME,
    O_THREADS
};

static const struct option long_opts[] = {
    {"host", required_argument, 0, O_HOST},
    {"port", required_argument, 0, O_PORT},
    {"profile", required_argument, 0, O_PROFILE},
    {"model", required_argument, 0, O_MODEL},
    {"seed", required_argument, 0, O_SEED},
    {"trace", required_argument, 0, O_TRACE},
    {"trace-tokens", required_argument, 0, O_TTRACE},
    {"fault", required_argument, 0, O_FAULT},
    {"stall-ms", required_argument, 0, O_STALL},
    {"max-num-seqs", required_argument, 0, O_SEQS},
    {"kv-blocks", required_argument, 0, O_BLOCKS},
    {"block-size", required_argument, 0, O_BSIZE},
    {"max-model-len", required_argument, 0, O_MAXLEN},
    {"max-num-batched-tokens", required_argument, 0, O_BATCHED},
    {"decode-base-ms", required_argument, 0, O_DBASE},
    {"decode-per-seq-ms", required_argument, 0, O_DSEQ},
    {"prefill-per-token-ms", required_argument, 0, O_PREFILL},
    {"jitter", required_argument, 0, O_JITTER},
    {"eos-min-frac-pct", required_argument, 0, O_EOS},
    {"max-connections", required_argument, 0, O_MAXCONN},
    {"max-body-bytes", required_argument, 0, O_MAXBODY},
    {"max-header-bytes", required_argument, 0, O_MAXHEAD},
    {"request-timeout-ms", required_argument, 0, O_REQTIMEOUT},
    {"idle-timeout-ms", required_argument, 0, O_IDLETIMEOUT},
    {"cpus", required_argument, 0, O_CPUS},
    {"realtime", no_argument, 0, O_REALTIME},
    {"threads", required_argument, 0, O_THREADS},
    {"help", no_argument, 0, O_HELP},
    {0, 0, 0, 0}};

static long need_int(const char *flag, const char *v, long lo) {
    long x;
    if (parse_int(v, &x) || x < lo)
        die(2, "sim: --%s: expected an integer >= %ld, got '%s'", flag, lo, v);
    return x;
}

static double need_double(const char *flag, const char *v) {
    double x;
    if (parse_double(v, &x) || x < 0)
        die(2, "sim: --%s: expected a non-negative number, got '%s'", flag, v);
    return x;
}

static struct event_base *loop_base;

static void on_signal(evutil_socket_t sig, short what, void *arg) {
    (void)sig;
    (void)what;
    (void)arg;
    event_base_loopbreak(loop_base);
}

int cmd_sim(int argc, char **argv) {
    sim_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.host = "127.0.0.1";
    cfg.port = 8000;
    cfg.model = "sim-model";
    cfg.stall_ms = 60000;
    cfg.limits = (httpd_limits){.max_header_bytes = 16384,
                                .max_body_bytes = 8 << 20,
                                .max_connections = 10000,
                                .request_timeout_ms = 30000,
                                .idle_timeout_ms = 300000};
    /* First pass: the profile, so that overrides apply on top of it. */
    const char *profile = "tiny";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--profile") && i + 1 < argc)
            profile = argv[i + 1];
        else if (!strncmp(argv[i], "--profile=", 10))
            profile = argv[i] + 10;
    }
    const sim_profile *prof = sim_profile_find(profile);
    if (!prof)
        die(2, "sim: --profile: unknown profile '%s' (known: %s)", profile, sim_profile_names());
    cfg.profile_name = prof->name;
    cfg.engine = prof->engine;
    cfg.eos_min_frac_pct = prof->eos_min_frac_pct;

    char err[256];
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        const char *name = NULL;
        for (const struct option *o = long_opts; o->name; o++)
            if (o->val == c)
                name = o->name;
        switch (c) {
        case O_HOST: cfg.host = optarg; break;
        case O_PORT: cfg.port = (int)need_int(name, optarg, 0); break;
        case O_PROFILE: break;
        case O_MODEL: cfg.model = optarg; break;
        case O_SEED: cfg.seed = (uint64_t)need_int(name, optarg, 0); break;
        case O_TRACE: cfg.trace_path = optarg; break;
        case O_TTRACE: cfg.token_trace_path = optarg; break;
        case O_FAULT:
            if (fault_spec_parse(optarg, &cfg.faults, err, sizeof err))
                die(2, "sim: %s", err);
            break;
        case O_STALL: cfg.stall_ms = (int)need_int(name, optarg, 0); break;
        case O_SEQS: cfg.engine.max_num_seqs = (int)need_int(name, optarg, 1); break;
        case O_BLOCKS: cfg.engine.kv_blocks = (int)need_int(name, optarg, 1); break;
        case O_BSIZE: cfg.engine.block_size = (int)need_int(name, optarg, 1); break;
        case O_MAXLEN: cfg.engine.max_model_len = (int)need_int(name, optarg, 2); break;
        case O_BATCHED: cfg.engine.max_batched_tokens = (int)need_int(name, optarg, 1); break;
        case O_DBASE: cfg.engine.decode_base_ms = need_double(name, optarg); break;
        case O_DSEQ: cfg.engine.decode_per_seq_ms = need_double(name, optarg); break;
        case O_PREFILL: cfg.engine.prefill_per_token_ms = need_double(name, optarg); break;
        case O_JITTER: cfg.engine.jitter = need_double(name, optarg); break;
        case O_EOS: cfg.eos_min_frac_pct = (int)need_int(name, optarg, 0); break;
        case O_MAXCONN: cfg.limits.max_connections = (int)need_int(name, optarg, 1); break;
        case O_MAXBODY: cfg.limits.max_body_bytes = (size_t)need_int(name, optarg, 1); break;
        case O_MAXHEAD: cfg.limits.max_header_bytes = (size_t)need_int(name, optarg, 256); break;
        case O_REQTIMEOUT: cfg.limits.request_timeout_ms = (int)need_int(name, optarg, 1); break;
        case O_IDLETIMEOUT: cfg.limits.idle_timeout_ms = (int)need_int(name, optarg, 1); break;
        case O_CPUS:
            if (cpus_pin(optarg, err, sizeof err))
                die(2, "sim: %s", err);
            break;
        case O_REALTIME: cpus_realtime(); break;
        case O_THREADS:
            cfg.threads = (int)need_int(name, optarg, 1);
            if (cfg.threads > 64)
                die(2, "sim: --threads: at most 64");
            break;
        case O_HELP:
        case 'h': sim_usage(stdout); return 0;
        default:
            die(2, "sim: unknown or incomplete option '%s' (see servelab sim --help)",
                argv[optind - 1]);
        }
    }
    if (optind < argc)
        die(2, "sim: unexpected argument '%s'", argv[optind]);
    if (cfg.eos_min_frac_pct > 100)
        die(2, "sim: --eos-min-frac-pct must be at most 100");
    cfg.engine.seed = cfg.seed;

    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    if (cfg.threads > 1)
        evthread_use_pthreads();
    struct event_base *base = event_base_precise();
    loop_base = base;
    sim_server *srv = sim_server_start(base, &cfg, err, sizeof err);
    if (!srv)
        die(2, "sim: %s", err);
    struct event *sigint = evsignal_new(base, SIGINT, on_signal, NULL);
    struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, NULL);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    int v6 = strchr(cfg.host, ':') != NULL;
    printf("listening on http://%s%s%s:%d\n", v6 ? "[" : "", cfg.host, v6 ? "]" : "",
           sim_server_port(srv));
    fflush(stdout);
    event_base_dispatch(base);
    sim_server_flush(srv);
    sim_server_free(srv);
    event_free(sigint);
    event_free(sigterm);
    event_base_free(base);
    return 0;
}
