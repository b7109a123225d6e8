/* report_names: what a report calls its runs and their figure files. A
 * figure's file name comes from the run's name by an injective mapping
 * (bytes outside [A-Za-z0-9._-] escaped), so runs named `a_b` and `a,b`
 * never share an SVG; two runs of the same name get files of their own; and
 * a run reached twice (a symbolic link to it beside it) is one run. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR                                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"
#define ROW "req-0,short,0.000,0.100,5.000,7.000,8.000,10,2,4.900,2.000,7.900,length,200,,2,0.010\n"

static void make_run(const char *root, const char *name) {
    char d[2048], p[2200];
    snprintf(d, sizeof d, "%s/%s", root, name);
    CHECK_MSG(mkdir(d, 0755) == 0, "mkdir %s", d);
    snprintf(p, sizeof p, "%s/requests.csv", d);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(HDR ROW, f);
    fclose(f);
}

TEST(report_figure_names_never_collide) {
    char *root = temp_dir(), *other = temp_dir();
    const char *names[] = {"a_b", "a,b", "a b", "a~2Cb", "a~b", "r\xc3\xa9sum\xc3\xa9"};
    for (int i = 0; i < 6; i++)
        make_run(root, names[i]);
    make_run(other, "a_b"); /* the same name as a run of root */
    char args[4096], figs[2200], list[4096];
    snprintf(args, sizeof args, "report %s %s --out %s/rep", root, other, root);
    servelab_ok(args);
    snprintf(figs, sizeof figs, "%s/rep/figures", root);
    int n = files_with_prefix(figs, "timeline-", list, sizeof list);
    CHECK_MSG(n == 7, "%d timeline figures for 7 runs:\n%s", n, list);
    snprintf(args, sizeof args, "%s/rep/summary.md", root);
    char *md = read_file(args, NULL);
    for (char *p = md; (p = strstr(p, "](figures/")); p++) {
        char file[600];
        CHECK(sscanf(p + 2, "%599[^)]", file) == 1);
        snprintf(args, sizeof args, "%s/rep/%s", root, file);
        CHECK_MSG(access(args, R_OK) == 0, "summary.md links to %s, not written", file);
    }
    free(md);
    snprintf(args, sizeof args, "report %s %s --out %s/rep --check", root, other, root);
    servelab_ok(args);
    /* names of safe characters keep their file name (in a report of one
     * campaign: of two, each name starts with its campaign's) */
    snprintf(args, sizeof args, "report %s --out %s/rep1", root, root);
    servelab_ok(args);
    snprintf(figs, sizeof figs, "%s/rep1/figures", root);
    files_with_prefix(figs, "timeline-", list, sizeof list);
    CHECK_MSG(strstr(list, "timeline-a_b.svg\n") != NULL, "%s", list);
    free(root);
    free(other);
}

/* A very long name still gives a file name the file system takes, distinct
 * from a name that shares its first 200 bytes. */
TEST(report_figure_names_of_long_run_names) {
    char *root = temp_dir();
    char a[256], b[256];
    memset(a, ',', 240);
    a[240] = 0;
    memcpy(b, a, 241);
    b[239] = 'x';
    make_run(root, a);
    make_run(root, b);
    char args[4096], figs[2200], list[4096];
    snprintf(args, sizeof args, "report %s --out %s/rep", root, root);
    servelab_ok(args);
    snprintf(figs, sizeof figs, "%s/rep/figures", root);
    int n = files_with_prefix(figs, "timeline-", list, sizeof list);
    CHECK_MSG(n == 2, "%d timeline figures for 2 runs:\n%s", n, list);
    free(root);
}

TEST(report_run_reached_through_a_symlink_is_listed_once) {
    char *root = temp_dir();
    char runs[1200], link[1300], args[4096];
    snprintf(runs, sizeof runs, "%s/runs", root);
    CHECK(mkdir(runs, 0755) == 0);
    make_run(runs, "one");
    make_run(runs, "two");
    snprintf(link, sizeof link, "%s/link-to-one", runs);
    CHECK(symlink("one", link) == 0);
    snprintf(args, sizeof args, "report %s %s --out %s/rep", runs, link, root);
    servelab_ok(args);
    snprintf(args, sizeof args, "%s/rep/summary.csv", root);
    char *csv = read_file(args, NULL);
    int rows = 0;
    for (char *p = csv; *p; p++)
        rows += *p == '\n';
    CHECK_MSG(rows == 3, "want the header and 2 runs:\n%s", csv);
    CHECK_MSG(strstr(csv, "\none,") && strstr(csv, "\ntwo,"), "%s", csv);
    free(csv);
    free(root);
}
