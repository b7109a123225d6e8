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
