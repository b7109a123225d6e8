/* cli/merge: `servelab merge SHARD_DIR... --out DIR`: the shards of one
 * schedule (run --shard I/N) into one run (sweep/merge.h does the work). */
#include "cli/commands.h"
#include "common/stop.h"
#include "sweep/merge.h"

#include <stdio.h>

#define MERGE(field) OPT_AT(merge_opts, field)
static const opt_def merge_options[] = {
    {.name = "out",
     .type = OPT_STRING,
     MERGE(out),
     .arg = "DIR",
     .help = "the merged run (required)"},
    {.name = "force",
     .type = OPT_FLAG,
     MERGE(force),
     .help = "replace what an earlier run or merge left in --out"},
    {0}};

static int merge_main(int argc, char **argv) {
    merge_opts o = {0};
    opt_defaults(merge_options, &o);
    opt_args args;
    int rc = cli_parse(&cmd_merge, argc, argv, &o, -1, &args);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (!o.out || args.n_positional < 1) {
        opt_args_free(&args);
        return cli_fail(&cmd_merge, "give the shards' directories and --out DIR (see servelab "
                                    "merge --help)");
    }
    char err[8192];
    int n = args.n_positional;
    stop_install(); /* a stop signal ends the merge with its temporary files removed */
    rc = merge_shards(args.positional, n, &o, err, sizeof err);
    opt_args_free(&args);
    if (rc) {
        fprintf(stderr, "servelab: %s\n", err);
        return stop_signal() ? cli_exit_code(OUTCOME_STOPPED) : 2;
    }
    printf("merged %d shards into %s\n", n, o.out);
    return 0;
}

const command cmd_merge = {
    .name = "merge",
    .run = merge_main,
    .usage = "merge SHARD_DIR... --out DIR [--force]",
    .about = "the shards of one schedule (run --shard I/N) into one run",
    .text = "Merges the run directories of every shard of one schedule (servelab run --shard\n"
            "I/N, on one machine or many) into one run that servelab report reads like any\n"
            "other: every row under its global id, times on the common t=0, the shards'\n"
            "hosts, clocks and client health in meta.json, summary.json from all rows.\n"
            "Refuses a missing shard, a shard given twice and a shard of another schedule.",
    .options = merge_options,
};
