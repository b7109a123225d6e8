/* cli/run: `servelab run`, one load run: reads the command line against
 * run_options (run/run_options.c), checks the whole set, and hands it to
 * run_execute (run/run.c), whose result is the exit code. With
 * --save-vllm-json the run's rows are then also written as vLLM's result
 * file (report/vllm_export.h); its settings are checked before any
 * traffic, like every other option. */
#include "cli/commands.h"
#include "report/vllm_export.h"
#include "run/run.h"
#include "rundir/rundir.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --save-vllm-json's folder exists and --metric-percentiles reads: 0, or
 * -1 with why in err. */
static int vllm_json_check(const run_opts *o, vllm_export_opts *v, char *err, int errlen) {
    if (vllm_percentiles_parse(o->metric_percentiles ? o->metric_percentiles : "99", v, err,
                               errlen))
        return -1;
    if (!o->save_vllm_json)
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s", o->save_vllm_json);
    struct stat st;
    const char *folder = dirname(path);
    if (!o->save_vllm_json[0] || stat(folder, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--save-vllm-json %s: no folder %s to write it in", o->save_vllm_json,
                 folder);
        return -1;
    }
    if (access(folder, W_OK | X_OK)) {
        snprintf(err, errlen, "--save-vllm-json %s: cannot write in %s", o->save_vllm_json, folder);
        return -1;
    }
    if (lstat(o->save_vllm_json, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--save-vllm-json %s: not a file (a directory, a link?)",
                 o->save_vllm_json);
        return -1;
    }
    /* never among a run's own files (its own --out's, or another run's) */
    char names[256], real_folder[PATH_MAX], real_out[PATH_MAX];
    int own = o->out && realpath(folder, real_folder) && realpath(o->out, real_out) &&
              !strcmp(real_folder, real_out);
    if (own || (rundir_holds(folder, names, sizeof names) & RUNDIR_ANY)) {
        snprintf(err, errlen,
                 "--save-vllm-json %s: %s is a run's directory%s%s%s: write the file elsewhere",
                 o->save_vllm_json, folder, own ? " (this run's --out)" : " (it holds ",
                 own ? "" : names, own ? "" : ")");
        return -1;
    }
    if (lstat(o->save_vllm_json, &st) == 0 && !o->force) {
        snprintf(err, errlen,
                 "--save-vllm-json %s: the file exists: add --force to replace it, or name another",
                 o->save_vllm_json);
        return -1;
    }
    return 0;
}

static int run_main(int argc, char **argv) {
    run_opts o;
    run_opts_defaults(&o);
    o.summary_to = stdout; /* the run's table */
    int rc = cli_parse(&cmd_run, argc, argv, &o, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    char err[4600];
    vllm_export_opts v = {0};
    if (run_opts_validate(&o, err, sizeof err) || vllm_json_check(&o, &v, err, sizeof err))
        return cli_fail(&cmd_run, "%s", err);
    run_result r;
    outcome done = run_execute(&o, run_command_line_json(argc + 1, argv - 1), NULL, &r);
    int code = cli_exit_code(done);
    if (r.error[0])
        fprintf(stderr, "servelab: run: %s\n", r.error);
    if (o.save_vllm_json && done != OUTCOME_BAD_INPUT && r.out[0]) {
        if (vllm_export_file(r.out, o.save_vllm_json, &v, err, sizeof err)) {
            fprintf(stderr, "servelab: run: --save-vllm-json: %s\n", err);
            return code ? code : 1;
        }
        if (!o.quiet)
            fprintf(stderr, "servelab: run: vLLM's result file in %s\n", o.save_vllm_json);
    }
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
