/* report: from run directories to every file `servelab report` writes.
 * Building (report_build) finds the runs, pools their repetitions and
 * computes all figures; rendering (report_render) produces the files in
 * memory, so that --check (report_check) can compare them with what is on
 * disk byte for byte. Nothing in the output depends on the time or the
 * machine of the report itself: the same rows always give the same files. */
#ifndef SERVELAB_REPORT_H
#define SERVELAB_REPORT_H

#include "analysis/summary.h"
#include "report/answer.h"
#include "report/load.h"
#include "common/strbuf.h"

#include <stdio.h>

typedef struct report_run {
    char name[256];
    char **rep_dirs;
    int n_reps;
    int root_len;  /* rep_dirs[i] + root_len: the path below the report's argument */
    run_rows rows; /* all repetitions pooled (req_rec.part = repetition) */
    run_files *files;
    summary_params params;
    run_summary pooled;
    run_summary *per_rep;
    run_summary *per_class; /* rows.n_classes entries */
    run_summary *per_turn;  /* multi-turn: n_turns entries (turn 1 first); else none */
    int n_turns;
    double ci[4][2];     /* 95% CI: ttft p50, ttft p95, tpot p50, tpot p95 */
    server_stats server; /* /metrics and GPU figures, repetitions pooled */
    int fixture;
    char variant[512]; /* settings other than the load: runs sharing it form a line */
    /* "" when every repetition has its meta.json and summary.json; else what
     * is missing ("no meta.json, no summary.json"): the run was cut short or
     * copied in part, and what those files say (its offered rate, where it
     * ran) is unknown, never guessed. */
    char incomplete[64];
    /* The campaign the run came from, when the report covers more than one
     * (its campaign.json's name, else its directory's; "" when there is only
     * one): its name then starts with it ("A/load-8rps"). campaign_index
     * numbers the campaigns from 0 in the order they were found (0 for all
     * when there is only one): runs of one index form one campaign's lines. */
    char campaign[256];
    int campaign_index;
} report_run;

typedef struct report {
    report_run *runs;
    int n_runs;
    report_answer answer; /* the capacity sentence (report/answer.h), set by report_build */
    report_answer *campaign_answers; /* several campaigns: one each (answer is the first's) */
    int n_campaigns; /* distinct campaigns among the runs (1 when the runs name none) */
} report;

typedef struct report_opts {
    const char *slo; /* overrides the runs' own SLO when set */
    double cost_per_hour;
} report_opts;

typedef struct out_file {
    char name[256]; /* relative to the output directory */
    strbuf body;
} out_file;

/* 0, or -1 with a message naming the file and line; r then holds nothing
 * to free. */
int report_build(char *const *paths, int n_paths, const report_opts *o, report *r, char *err,
                 int errlen);
void report_render(const report *r, out_file **files, int *n_files);
/* Write the files into `out` (made with its figures/ folder), each through a
 * temporary name; -1 with a message naming the file. */
int report_write(const char *out, const out_file *files, int n_files, char *err, int errlen);
/* Compare the files with those already in `out`, byte for byte. Every
 * missing file, and up to 10 differing lines of each file that differs (as
 * on disk, then as rendered), are printed to `to`. 1 when anything differs,
 * else 0. */
int report_check(const char *out, const out_file *files, int n_files, FILE *to);
void report_free(report *r);
/* A new empty file named `name` at the end of the list. */
out_file *out_files_add(out_file **files, int *n_files, const char *name);
void out_files_free(out_file *f, int n);

#endif
