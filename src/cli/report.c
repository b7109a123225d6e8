/* cli/report: `servelab report DIR... [--out DIR] [--check]`. Builds the
 * report in memory, then either writes it (each file through a temporary
 * name) or compares it with what is already in --out, which prints the
 * lines that differ. The work is the report module's (report/report.h):
 * here are the options, the help and the exit code. */
#include "cli/commands.h"
#include "report/report.h"
#include "report/vllm_import.h"
#include "run/run.h"
#include "report/vllm_export.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct report_cli {
    const char *out;
    int check;
    int vllm_json;
    const char *metric_percentiles;
    report_opts ro;
} report_cli;

#define REPORT(field) OPT_AT(report_cli, field)
static const opt_def report_options[] = {
    {.name = "out",
     .type = OPT_STRING,
     REPORT(out),
     .arg = "DIR",
     .help = "where to write (default: FIRST_DIR/report)"},
    {.name = "check",
     .type = OPT_FLAG,
     REPORT(check),
     .help = "regenerate in memory, compare with --out, exit 1 on drift"},
    {.name = "vllm-json",
     .type = OPT_FLAG,
     REPORT(vllm_json),
     .help = "also write each run as vLLM's bench serve result file (vllm-RUN.json)"},
    {.name = "metric-percentiles",
     .type = OPT_STRING,
     REPORT(metric_percentiles),
     .arg = "P[,P...]",
     .def = "99",
     .help = "the percentiles of those files (as vLLM's option)"},
    {.name = "slo",
     .type = OPT_STRING,
     REPORT(ro.slo),
     .arg = "SPEC",
     .help = "judge goodput against this SLO instead of the runs' own"},
    {.name = "cost-per-hour",
     .type = OPT_NUMBER,
     REPORT(ro.cost_per_hour),
     .arg = "USD",
     .help = "cost basis instead of the runs' own"},
    {0}};

/* Compare with what is on disk: 1 on drift. */
static int check(const char *out, const out_file *files, int n) {
    if (report_check(out, files, n, stdout)) {
        fprintf(stderr, "servelab: report --check: %s no longer matches the rows\n", out);
        return 1;
    }
    printf("report --check: %d files in %s match the rows\n", n, out);
    return 0;
}

/* A report's files never go into a run's or a campaign's own directory:
 * its summary.json would replace the run's. A run's directory is one that
 * holds its rows or its meta.json (a report's own holds a summary.json
 * too, and may be written again). 1 with why, or 0. */
static int out_is_a_run(const char *out, char *err, size_t errlen) {
    static const char *const own[] = {"requests.csv", "meta.json", "chunks.csv", "campaign.json"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", out, own[i]);
        if (access(path, F_OK) == 0) {
            snprintf(err, errlen,
                     "--out %.600s is a run's directory (it holds %s): give the report one of its "
                     "own (the default is RUN/report)",
                     out, own[i]);
            return 1;
        }
    }
    return 0;
}

static int report_main(int argc, char **argv) {
    report_cli o = {0};
    opt_args args;
    int rc = cli_parse(&cmd_report, argc, argv, &o, -1, &args);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (args.n_positional < 1) {
        opt_args_free(&args);
        return cli_fail(&cmd_report,
                        "give at least one run directory (see servelab report --help)");
    }
    char out_default[4000], err[1024];
    vllm_export_opts vo = {0};
    if (vllm_percentiles_parse(o.metric_percentiles, &vo, err, sizeof err)) {
        opt_args_free(&args);
        return cli_fail(&cmd_report, "%s", err);
    }
    if (!o.out) { /* beside a vLLM file given first, inside a directory */
        const char *first = args.positional[0];
        size_t len = strlen(first);
        if (vllm_import_is_file(first))
            snprintf(out_default, sizeof out_default, "%.*s-report",
                     (int)(len > 5 && !strcmp(first + len - 5, ".json") ? len - 5 : len), first);
        else
            snprintf(out_default, sizeof out_default, "%s/report", first);
        o.out = out_default;
    }
    if (out_is_a_run(o.out, err, sizeof err)) {
        opt_args_free(&args);
        return cli_fail(&cmd_report, "%s", err);
    }
    report r;
    rc = report_build(args.positional, args.n_positional, &o.ro, &r, err, sizeof err);
    opt_args_free(&args);
    if (rc) {
        fprintf(stderr, "servelab: %s\n", err);
        return 2;
    }
    out_file *files;
    int n, code = 0;
    report_render(&r, &files, &n);
    if (o.vllm_json && vllm_report_files(&r, &vo, &files, &n, err, sizeof err)) {
        fprintf(stderr, "servelab: report --vllm-json: %s\n", err);
        code = 2;
    } else if (o.check) {
        code = check(o.out, files, n);
    } else if (report_write(o.out, files, n, err, sizeof err)) {
        fprintf(stderr, "servelab: report: %s\n", err);
        code = 1;
    } else {
        printf("report: %d run%s, %d files in %s (open %s/report.html)\n", r.n_runs,
               r.n_runs == 1 ? "" : "s", n, o.out, o.out);
    }
    out_files_free(files, n);
    report_free(&r);
    return code;
}

const command cmd_report = {
    .name = "report",
    .run = report_main,
    .usage = "report DIR... [--out DIR] [--check]",
    .about = "tables, figures and HTML from raw rows",
    .text = "Tables, figures and a self-contained HTML report from the raw rows of every run\n"
            "directory (one holding requests.csv) under the given paths. Repetitions (rep-K\n"
            "directories of one run) are pooled.",
    .options = report_options,
};
