/* cli/sweep: `servelab sweep CONFIG.yaml [--out DIR] [--dry-run]`. */
#include "cli/commands.h"
#include "common/util.h"
#include "sweep/sweep.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void sweep_usage(FILE *f) {
    fputs("usage: servelab sweep CONFIG.yaml [--out DIR] [--dry-run]\n"
          "Runs a campaign: every run x repetition, with warmup, server restarts when a run's\n"
          "server_args change, server metrics and GPU samples, then the report.\n\n"
          "  --out DIR    output directory (out/NAME)\n"
          "  --dry-run    print the resolved plan and exit\n"
          "  --quiet      no progress on stderr\n",
          f);
}

/* The path of this binary, for starting the simulator as a child. */
static const char *self_path(const char *argv0) {
    static char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = 0;
        return buf;
    }
    return argv0;
}

int cmd_sweep(int argc, char **argv) {
    static const struct option opts[] = {{"out", required_argument, 0, 'o'},
                                         {"dry-run", no_argument, 0, 'n'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    sweep_opts so = {0};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': so.out = optarg; break;
        case 'n': so.dry_run = 1; break;
        case 'q': so.quiet = 1; break;
        case 'h': sweep_usage(stdout); return 0;
        default: die(2, "sweep: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        die(2, "sweep: give exactly one campaign file (see servelab sweep --help)");
    campaign cp;
    char err[1024];
    if (campaign_load(argv[optind], &cp, err, sizeof err))
        die(2, "%s", err);
    so.self = self_path(argv[0]);
    int code = sweep_execute(&cp, &so);
    campaign_free(&cp);
    return code;
}
