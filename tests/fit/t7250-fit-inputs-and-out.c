/* t7250-fit-inputs-and-out: what `servelab fit` reads and where it writes.
 * One run reached twice (named twice, or through a link) is refused, not
 * counted twice; an --out in a run's directory is refused even with
 * --force (it would overwrite the run's rows, maybe its own input); and a
 * profile that cannot be written whole leaves the earlier one as it was. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A virtual run with chunks, enough to fit. */
static void a_run(const char *dir) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "predict --max-num-seqs 4 --api completions --ignore-eos --chunks --prompts "
             "random:64:16 --requests 300 --rate 3 --quiet --out %s",
             dir);
    servelab_ok(cmd);
}

TEST(fit_refuses_one_run_twice) {
    char *dir = temp_dir(), run[1100], link[1100], cmd[4096], *out;
    snprintf(run, sizeof run, "%s/runs/lone", dir);
    a_run(run);
    snprintf(cmd, sizeof cmd, "fit %s %s --out %s/f.yaml --min-gaps 5", run, run, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "are the same run") && count_of(out, "\n") == 1, "%s", out);
    free(out);
    snprintf(link, sizeof link, "%s/also", dir);
    CHECK_INT(symlink(run, link), 0);
    snprintf(cmd, sizeof cmd, "fit %s/runs %s --out %s/f.yaml --min-gaps 5", dir, link, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "are the same run"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "fit %s --out %s/f.yaml --min-gaps 5 --quiet", run, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 0); /* once is fine */
}

TEST(fit_out_never_in_a_runs_directory) {
    char *dir = temp_dir(), run[1100], cmd[4096], p[1200], *out;
    snprintf(run, sizeof run, "%s/run", dir);
    a_run(run);
    snprintf(p, sizeof p, "%s/requests.csv", run);
    char *before = read_file(p, NULL);
    snprintf(cmd, sizeof cmd, "fit %s --out %s/requests.csv --force --min-gaps 5", run, run);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "is in a run's directory"), "%s", out);
    free(out);
    char *after = read_file(p, NULL);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
}

TEST(fit_profile_written_whole_or_not_at_all) {
    char *dir = temp_dir(), run[1100], cmd[4096], p[1200], *out;
    snprintf(run, sizeof run, "%s/run", dir);
    a_run(run);
    snprintf(p, sizeof p, "%s/p.yaml", dir);
    snprintf(cmd, sizeof cmd, "fit %s --out %s --min-gaps 5 --quiet", run, p);
    servelab_ok(cmd);
    char *kept = read_file(p, NULL);
    CHECK(kept && strlen(kept) > 2048);
    /* files of at most 1 KiB (the profile is longer): the write fails */
    snprintf(cmd, sizeof cmd,
             "ulimit -f 2; trap '' XFSZ; exec %s fit %s --out %s --min-gaps 5 --quiet --force 2>&1",
             servelab_bin(), run, p);
    int code;
    out = run_capture(cmd, &code);
    CHECK_MSG(code != 0 && strstr(out, "cannot write") && strstr(out, "kept") &&
                  !strstr(out, "Success"),
              "exit %d: %s", code, out);
    free(out);
    char *now = read_file(p, NULL);
    CHECK_MSG(now && !strcmp(now, kept), "the earlier profile was changed");
    free(now);
    free(kept);
    char left[256];
    CHECK_INT(files_with_prefix(dir, "p.yaml.tmp", left, sizeof left), 0); /* none left behind */
}

/* Rows whose first token comes before the request was sent (or whose last
 * comes before the first) are no run's clock: a fit of mostly such rows is
 * refused, not written with every residual 100% (round 3's Q3). */
TEST(fit_refuses_rows_whose_times_are_out_of_order) {
    char *dir = temp_dir(), run[1100], cmd[4096], *out;
    snprintf(run, sizeof run, "%s/run", dir);
    a_run(run);
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import csv,sys; p=sys.argv[1]; r=list(csv.reader(open(p))); "
             "i=r[0].index('first_token_ms'); "
             "[x.__setitem__(i, '%%.3f' %% (float(x[i]) - 1000)) for x in r[1:] if x[i]]; "
             "csv.writer(open(p, 'w'), lineterminator='\\n').writerows(r)\" %s/requests.csv",
             run);
    int code;
    free(run_capture(cmd, &code));
    CHECK_INT(code, 0);
    snprintf(cmd, sizeof cmd, "fit %s --out %s/f.yaml --min-gaps 5", run, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "first token before the request was sent") && count_of(out, "\n") == 1,
              "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/f.yaml", dir);
    CHECK(access(cmd, F_OK) != 0);
}

/* The server a fit names: its Server header and its version apart (round
 * 3's M6: "servelab-sim/0.1.00.1.0-servelab-sim"). */
TEST(fit_names_the_server_and_its_version_apart) {
    char *dir = temp_dir(), cmd[4096], *out;
    sim_proc p = sim_start("--profile tiny --max-num-seqs 4");
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --api completions --ignore-eos --prompts "
             "random:32:16 --requests 60 --rate 6 --out %s/run",
             p.port, dir);
    servelab_ok(cmd);
    sim_stop(&p);
    snprintf(cmd, sizeof cmd, "fit %s/run --out %s/f.yaml --min-gaps 5", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    const char *line = strstr(out, "server: ");
    CHECK_MSG(line && strstr(line, " version ") && !strstr(out, "0.1.00.1.0"), "%s", out);
    free(out);
}
