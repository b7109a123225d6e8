/* cli/demo: `servelab demo`: the whole tool in one command with no setup:
 * the simulator with the gpu-7b profile, a built-in campaign of four
 * offered loads plus one with the KV cache cut to 900 blocks (gpu-7b has
 * 17,361) and only long prompts
 * (so that preemption shows), two repetitions each, and the report. Sized
 * to finish in about a minute on two cores. */
#include "cli/commands.h"
#include "sweep/sweep.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define DEMO_CAMPAIGN                                                                              \
    "name: demo\n"                                                                                 \
    "target:\n"                                                                                    \
    "  sim: {profile: gpu-7b, seed: 1}\n"                                                          \
    "api: chat\n"                                                                                  \
    "workload: {prompts: builtin, mix: {short: 0.5, medium: 0.3, long: 0.2}, max_tokens: 128}\n"   \
    "requests: 40\n"                                                                               \
    "repetitions: 2\n"                                                                             \
    "warmup: 2\n"                                                                                  \
    "seed: 0\n"                                                                                    \
    "slo: {ttft_ms: 500, tpot_ms: 30}\n"                                                           \
    "cost_per_hour: 0.40\n"                                                                        \
    "runs:\n"                                                                                      \
    "  - {name: load-08rps, rate: 8}\n"                                                            \
    "  - {name: load-16rps, rate: 16}\n"                                                           \
    "  - {name: load-24rps, rate: 24}\n"                                                           \
    "  - {name: load-32rps, rate: 32}\n"                                                           \
    "  - name: load-08rps-kv-900-long\n"                                                           \
    "    rate: 8\n"                                                                                \
    "    server_args: \"--kv-blocks 900\"\n"                                                       \
    "    workload: {mix: {long: 1}}\n"

static const char demo_campaign[] = DEMO_CAMPAIGN;

#define DEMO(field) OPT_AT(sweep_opts, field)
static const opt_def demo_options[] = {{.name = "out",
                                        .type = OPT_STRING,
                                        DEMO(out),
                                        .arg = "DIR",
                                        .def = "demo-out",
                                        .help = "output directory"},
                                       {.name = "dry-run",
                                        .type = OPT_FLAG,
                                        DEMO(dry_run),
                                        .help = "print the resolved plan and exit"},
                                       {0}};

/* The demo replaces its own earlier output, and only that: a directory
 * holding another campaign, or a run, is not the demo's to wipe. */
static int holds_other_results(const char *out) {
    char path[4200];
    snprintf(path, sizeof path, "%s/campaign.json", out);
    json_t *c = json_load_file(path, 0, NULL);
    const char *name = json_string_value(json_object_get(c, "name"));
    int other = c && (!name || strcmp(name, "demo"));
    json_decref(c);
    snprintf(path, sizeof path, "%s/requests.csv", out);
    return other || access(path, F_OK) == 0;
}

static int demo_main(int argc, char **argv) {
    sweep_opts so = {.force = 1}; /* the demo replaces its own earlier output */
    opt_defaults(demo_options, &so);
    int rc = cli_parse(&cmd_demo, argc, argv, &so, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (!so.dry_run && holds_other_results(so.out))
        return cli_fail(&cmd_demo,
                        "--out %s holds results that are not a demo's: give another --out", so.out);
    campaign cp;
    char err[1024];
    if (campaign_load_string(demo_campaign, "(built-in demo campaign)", &cp, err, sizeof err))
        return cli_fail(&cmd_demo, "%s", err);
    so.self = cli_self_path(argv[0]);
    so.notices = cli_notices();
    so.text_out = stdout;
    outcome o = sweep_execute(&cp, &so, err, sizeof err);
    if (o == OUTCOME_BAD_INPUT)
        cli_fail(&cmd_demo, "%s", err);
    campaign_free(&cp);
    return cli_exit_code(o);
}

const command cmd_demo = {
    .name = "demo",
    .run = demo_main,
    .usage = "demo [--out DIR] [--dry-run]",
    .about = "embedded simulator + small sweep + report, no setup",
    .text = "The simulator (gpu-7b), a built-in campaign and its report; no setup. It replaces\n"
            "what an earlier demo left in --out.",
    .options = demo_options,
    .notes = "The campaign:\n\n" DEMO_CAMPAIGN,
};
