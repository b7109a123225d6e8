/* cli/report: `servelab report DIR... [--out DIR] [--check]`. Builds the
 * report in memory, then either writes it (each file through a temporary
 * name) or compares it with what is already in --out, which prints the
 * lines that differ. The work is the report module's (report/report.h):
 * here are the options, the help and the exit code. */
#include "cli/commands.h"
#include "common/util.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>

static void report_usage(FILE *f) {
    fputs("usage: servelab report DIR... [--out DIR] [--check]\n"
          "Tables, figures and a self-contained HTML report from the raw rows of every run\n"
          "directory (one holding requests.csv) under the given paths. Repetitions (rep-K\n"
          "directories of one run) are pooled.\n\n"
          "  --out DIR            where to write (default: FIRST_DIR/report)\n"
          "  --check              regenerate in memory, compare with --out, exit 1 on drift\n"
          "  --slo SPEC           judge goodput against this SLO instead of the runs' own\n"
          "  --cost-per-hour USD  cost basis instead of the runs' own\n",
          f);
}

int cmd_report(int argc, char **argv) {
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'}, {"check", no_argument, 0, 'c'},
        {"slo", required_argument, 0, 's'}, {"cost-per-hour", required_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    const char *out = NULL;
    int check = 0, c;
    report_opts ro = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'c': check = 1; break;
        case 's': ro.slo = optarg; break;
        case 'p':
            if (parse_double(optarg, &ro.cost_per_hour) || ro.cost_per_hour < 0)
                die(2, "report: --cost-per-hour: expected a number, got '%s'", optarg);
            break;
        case 'h': report_usage(stdout); return 0;
        default: die(2, "report: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        die(2, "report: give at least one run directory (see servelab report --help)");
    char out_default[4000];
    if (!out) {
        snprintf(out_default, sizeof out_default, "%s/report", argv[optind]);
        out = out_default;
    }
    char err[1024];
    report r;
    if (report_build(argv + optind, argc - optind, &ro, &r, err, sizeof err))
        die(2, "%s", err);
    out_file *files;
    int n;
    report_render(&r, &files, &n);
    int code = 0;
    if (check) {
        if (report_check(out, files, n, stdout)) {
            fprintf(stderr, "servelab: report --check: %s no longer matches the rows\n", out);
            code = 1;
        } else {
            printf("report --check: %d files in %s match the rows\n", n, out);
        }
    } else {
        if (report_write(out, files, n, err, sizeof err))
            die(1, "report: %s", err);
        printf("report: %d runs, %d files in %s (open %s/report.html)\n", r.n_runs, n, out, out);
    }
    out_files_free(files, n);
    report_free(&r);
    return code;
}
