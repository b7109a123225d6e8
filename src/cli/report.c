/* cli/report: `servelab report DIR... [--out DIR] [--check]`. Builds the
 * report in memory, then either writes it (each file through a temporary
 * name) or compares it with what is already in --out and prints the lines
 * that differ. */
#include "cli/commands.h"
#include "common/util.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *b = xmalloc(cap);
    size_t k;
    while ((k = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (len + 1 >= cap)
            b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    b[len] = 0;
    *n = len;
    return b;
}

/* Print up to `max` differing lines; returns 1 when the texts differ. */
static int diff_lines(const char *name, const char *want, size_t wn, const char *have, size_t hn,
                      int max) {
    if (wn == hn && !memcmp(want, have, wn))
        return 0;
    const char *a = want, *b = have, *ae = want + wn, *be = have + hn;
    int line = 0, shown = 0;
    while ((a < ae || b < be) && shown < max) {
        line++;
        const char *an = a < ae ? memchr(a, '\n', (size_t)(ae - a)) : NULL;
        const char *bn = b < be ? memchr(b, '\n', (size_t)(be - b)) : NULL;
        size_t al = a < ae ? (size_t)((an ? an : ae) - a) : 0;
        size_t bl = b < be ? (size_t)((bn ? bn : be) - b) : 0;
        if (al != bl || memcmp(a, b, al)) {
            printf("%s:%d: on disk:     %.*s\n", name, line, (int)(bl > 300 ? 300 : bl), b);
            printf("%s:%d: from the rows: %.*s\n", name, line, (int)(al > 300 ? 300 : al), a);
            shown++;
        }
        a = an ? an + 1 : ae;
        b = bn ? bn + 1 : be;
    }
    return 1;
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
        int drift = 0;
        for (int i = 0; i < n; i++) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", out, files[i].name);
            size_t hn;
            char *have = slurp(path, &hn);
            if (!have) {
                printf("%s: missing\n", path);
                drift = 1;
                continue;
            }
            drift |= diff_lines(path, files[i].body.s, files[i].body.n, have, hn, 10);
            free(have);
        }
        if (drift) {
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
