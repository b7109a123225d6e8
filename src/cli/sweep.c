/* cli/sweep: `servelab sweep CONFIG.yaml`: loads and checks the campaign
 * (sweep/campaign.c), then runs it (sweep/sweep.c). */
#include "cli/commands.h"
#include "sweep/sweep.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define SWEEP(field) OPT_AT(sweep_opts, field)
static const opt_def sweep_options[] = {
    {.name = "out",
     .type = OPT_STRING,
     SWEEP(out),
     .arg = "DIR",
     .help = "output directory (out/NAME)"},
    {.name = "dry-run",
     .type = OPT_FLAG,
     SWEEP(dry_run),
     .help = "print the resolved plan and exit"},
    {.name = "quiet", .type = OPT_FLAG, SWEEP(quiet), .help = "no progress on stderr"},
    {.name = "target",
     .type = OPT_CHOICE,
     SWEEP(target),
     .choices = "auto|server|sim",
     .def = "auto",
     .help = "sim: run against the campaign's target.sim in place of its server"},
    {.name = "speedup",
     .type = OPT_NUMBER,
     SWEEP(speedup),
     .arg = "K",
     .min = 1,
     .def = "1",
     .help = "with --target sim: the simulator and every run K times faster (a rehearsal)"},
    {.name = "shard",
     .type = OPT_STRING,
     SWEEP(shard),
     .arg = "I/N|auto",
     .help = "this process is shard I of N (auto: from Slurm, MPI, a Kubernetes Indexed Job); "
             "shard 0 merges every repetition and writes the report"},
    {.name = "metadata",
     .type = OPT_LIST,
     SWEEP(metadata),
     .arg = "KEY=VALUE",
     .help = "recorded in every run's meta.json, e.g. the server's build (repeatable)"},
    {.name = "force",
     .type = OPT_FLAG,
     SWEEP(force),
     .help = "replace what an earlier campaign left in --out"},
    {.name = "resume",
     .type = OPT_FLAG,
     SWEEP(resume),
     .help = "keep the earlier campaign's finished runs that this one repeats exactly"},
    {0}};

static int sweep_main(int argc, char **argv) {
    sweep_opts so = {0};
    opt_defaults(sweep_options, &so);
    opt_args args;
    int rc = cli_parse(&cmd_sweep, argc, argv, &so, -1, &args);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (so.force && so.resume) {
        opt_args_free(&args);
        return cli_fail(&cmd_sweep, "give --force or --resume, not both");
    }
    if (args.n_positional != 1) {
        opt_args_free(&args);
        return cli_fail(&cmd_sweep, "give exactly one campaign file (see servelab sweep --help)");
    }
    campaign cp;
    char err[1024];
    rc = campaign_load(args.positional[0], &cp, err, sizeof err);
    opt_args_free(&args);
    if (rc) {
        fprintf(stderr, "servelab: %s\n", err);
        return 2;
    }
    for (int i = 0; i < so.metadata.n; i++)
        if (campaign_add_metadata(&cp, so.metadata.v[i], err, sizeof err)) {
            campaign_free(&cp);
            return cli_fail(&cmd_sweep, "%s", err);
        }
    if (so.speedup > 1 && strcmp(so.target, "sim")) {
        campaign_free(&cp);
        return cli_fail(&cmd_sweep, "--speedup needs --target sim (it scales the simulator)");
    }
    if (!strcmp(so.target, "sim") && campaign_use_sim(&cp, so.speedup, err, sizeof err)) {
        campaign_free(&cp);
        fprintf(stderr, "servelab: %s\n", err);
        return 2;
    }
    if (!strcmp(so.target, "server") && cp.target != TARGET_SERVER && cp.target != TARGET_VLLM) {
        campaign_free(&cp);
        return cli_fail(&cmd_sweep,
                        "--target server: the campaign's target has no server: or vllm: key");
    }
    so.self = cli_self_path(argv[0]);
    so.notices = cli_notices();
    so.text_out = stdout;
    outcome o = sweep_execute(&cp, &so, err, sizeof err);
    if (o == OUTCOME_BAD_INPUT)
        cli_fail(&cmd_sweep, "%s", err);
    campaign_free(&cp);
    return cli_exit_code(o);
}

const command cmd_sweep = {
    .name = "sweep",
    .run = sweep_main,
    .usage = "sweep CONFIG.yaml [--out DIR] [--dry-run] [--force | --resume] [--target sim "
             "[--speedup K]] [--metadata KEY=VALUE]",
    .about = "a campaign: runs x repetitions, warmup, server restarts",
    .text = "Runs a campaign: every run x repetition, with warmup, server restarts when a run's\n"
            "server_args change, server metrics and GPU samples, then the report. A failed run\n"
            "is recorded in campaign.json and the campaign goes on.",
    .options = sweep_options,
};
