/* cli/demo: `servelab demo`: the whole tool in one command with no setup:
 * the simulator with the gpu-7b profile, a built-in campaign of four
 * offered loads plus one with the KV cache halved and only long prompts
 * (so that preemption shows), two repetitions each, and the report. Sized
 * to finish in about a minute on two cores. */
#include "cli/commands.h"
#include "common/util.h"
#include "sweep/sweep.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

static const char demo_campaign[] =
    "name: demo\n"
    "target:\n"
    "  sim: {profile: gpu-7b, seed: 1}\n"
    "api: chat\n"
    "workload: {prompts: builtin, mix: {short: 0.5, medium: 0.3, long: 0.2}, max_tokens: 128}\n"
    "requests: 40\n"
    "repetitions: 2\n"
    "warmup: 2\n"
    "seed: 0\n"
    "slo: {ttft_ms: 500, tpot_ms: 30}\n"
    "cost_per_hour: 0.40\n"
    "runs:\n"
    "  - {name: load-08rps, rate: 8}\n"
    "  - {name: load-16rps, rate: 16}\n"
    "  - {name: load-24rps, rate: 24}\n"
    "  - {name: load-32rps, rate: 32}\n"
    "  - name: load-08rps-kv-half-long\n"
    "    rate: 8\n"
    "    server_args: \"--kv-blocks 900\"\n"
    "    workload: {mix: {long: 1}}\n";

int cmd_demo(int argc, char **argv) {
    static const struct option opts[] = {{"out", required_argument, 0, 'o'},
                                         {"dry-run", no_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    sweep_opts so = {.out = "demo-out"};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': so.out = optarg; break;
        case 'n': so.dry_run = 1; break;
        case 'h':
            printf("usage: servelab demo [--out DIR] [--dry-run]\n"
                   "The simulator (gpu-7b), a built-in campaign and its report; no setup.\n"
                   "The campaign:\n\n%s",
                   demo_campaign);
            return 0;
        default: die(2, "demo: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    campaign cp;
    char err[1024];
    if (campaign_load_string(demo_campaign, "(built-in demo campaign)", &cp, err, sizeof err))
        die(1, "demo: %s", err);
    static char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    so.self = n > 0 ? self : argv[0];
    int code = sweep_execute(&cp, &so);
    campaign_free(&cp);
    return code;
}
