/* cli/fit: `servelab fit DIR... --out PROFILE.yaml`: the simulator's step
 * model fitted from the rows of runs against one server (fit/fit.h does
 * the work), written as a profile file that `sim --profile-file` and
 * `predict --profile-file` read. */
#include "cli/commands.h"
#include "fit/fit.h"
#include "rundir/rundir.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct fit_cli {
    const char *out;
    const char *name;
    int min_gaps;
    int force;
    int quiet;
} fit_cli;

#define FIT(field) OPT_AT(fit_cli, field)
static const opt_def fit_options[] = {
    {.name = "out",
     .type = OPT_STRING,
     FIT(out),
     .arg = "FILE",
     .help = "the profile file to write (required)"},
    {.name = "name",
     .type = OPT_STRING,
     FIT(name),
     .arg = "NAME",
     .def = "fitted",
     .help = "the profile's name"},
    {.name = "min-gaps",
     .type = OPT_INT,
     FIT(min_gaps),
     .arg = "N",
     .min = 1,
     .max = INT_MAX,
     .def = "30",
     .help = "clean gaps between tokens a batch size needs to be a point of the table"},
    {.name = "force", .type = OPT_FLAG, FIT(force), .help = "replace --out when it exists"},
    {.name = "quiet", .type = OPT_FLAG, FIT(quiet), .help = "print nothing but errors"},
    {0}};

static int fit_main(int argc, char **argv) {
    fit_cli o = {0};
    opt_defaults(fit_options, &o);
    opt_args args;
    int rc = cli_parse(&cmd_fit, argc, argv, &o, -1, &args);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (!o.out || args.n_positional < 1) {
        opt_args_free(&args);
        return cli_fail(&cmd_fit, "give the runs' directories and --out FILE (see servelab fit "
                                  "--help)");
    }
    if (!o.force && access(o.out, F_OK) == 0) {
        opt_args_free(&args);
        return cli_fail(&cmd_fit, "--out %s exists (give --force to replace it)", o.out);
    }
    /* a file in a run's directory is the run's (its rows, maybe this fit's
     * own input): not with --force either */
    char where[4096], names[256] = "";
    snprintf(where, sizeof where, "%s", o.out);
    char *slash = strrchr(where, '/');
    if (!slash)
        snprintf(where, sizeof where, ".");
    else
        slash[slash == where] = 0; /* "/x" keeps "/" */
    if (rundir_holds(where, names, sizeof names) &
        (RUNDIR_REQUESTS | RUNDIR_CHUNKS | RUNDIR_META)) {
        opt_args_free(&args);
        return cli_fail(&cmd_fit,
                        "--out %s is in a run's directory (%s holds %s): give a file elsewhere",
                        o.out, where, names);
    }
    char err[2048];
    fit_run *runs;
    int n;
    if (fit_load(args.positional, args.n_positional, &runs, &n, err, sizeof err)) {
        opt_args_free(&args);
        return cli_fail(&cmd_fit, "%s", err);
    }
    opt_args_free(&args);
    fit_opts fo = {.min_gaps = o.min_gaps, .name = o.name};
    fit_result r;
    rc = fit_estimate(runs, n, &fo, &r, err, sizeof err);
    fit_runs_free(runs, n);
    if (rc)
        return cli_fail(&cmd_fit, "%s", err);
    if (!o.quiet)
        fit_print(stdout, &r);
    rc = profile_file_write(o.out, &r.doc, o.force, err, sizeof err);
    fit_result_free(&r);
    if (rc)
        return cli_fail(&cmd_fit, "%s", err);
    if (!o.quiet)
        printf("\nwrote %s\n", o.out);
    return 0;
}

const command cmd_fit = {
    .name = "fit",
    .run = fit_main,
    .usage = "fit DIR... --out PROFILE.yaml [--name NAME] [--force]",
    .about = "the simulator's step model fitted from measured runs: a profile file",
    .text = "Reads runs (or folders of them: campaigns, capacity searches) against one server\n"
            "and estimates the simulator's engine from their rows: the decode step by how many\n"
            "streams were decoding (from the gaps between tokens with no prompt computed in\n"
            "them), the prefill by prompt length and the context it attends to (from the\n"
            "requests that had the server to themselves: the server's prompt_ms where it gives\n"
            "one, else the TTFT), and the limits the server reported (llama.cpp's /props,\n"
            "vLLM's cache config). Prints the fit and its residuals and writes the profile,\n"
            "each figure with its provenance, for sim --profile-file and predict --profile-file.\n"
            "Refuses runs of different servers or models (docs/simulator.md).",
    .options = fit_options,
};
