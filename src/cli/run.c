/* cli/run: `servelab run`, one load run: reads the command line against
 * run_options (run/run_options.c), checks the whole set, and hands it to
 * run_execute (run/run.c), whose result is the exit code. */
#include "cli/commands.h"
#include "run/run.h"

#include <stdio.h>

static int run_main(int argc, char **argv) {
    run_opts o;
    run_opts_defaults(&o);
    int rc = cli_parse(&cmd_run, argc, argv, &o, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    char err[512];
    if (run_opts_validate(&o, err, sizeof err))
        return cli_fail(&cmd_run, "%s", err);
    run_result r;
    int code = run_execute(&o, run_command_line_json(argc + 1, argv - 1), NULL, &r);
    if (r.error[0])
        fprintf(stderr, "servelab: run: %s\n", r.error);
    return code;
}

const command cmd_run = {
    .name = "run",
    .run = run_main,
    .usage = "run --url URL [options]",
    .about = "one load run against a server",
    .text = "One open-loop load run; rows in --out DIR, the summary on stdout. Arrivals follow\n"
            "an absolute seeded schedule (poisson, gamma, constant, inf); every request ends\n"
            "as a row of requests.csv, every streamed chunk as a row of chunks.csv, with\n"
            "meta.json, summary.json and, when available, server_metrics.csv and gpu.csv.\n"
            "Plain http:// goes through servelab's own HTTP/1.1 client, which times each\n"
            "chunk by the kernel's receive timestamp; https://, proxies and --http-client\n"
            "libcurl go through libcurl (times taken when the bytes are handed over).",
    .options = run_options,
};
