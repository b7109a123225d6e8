/* A run cut short or copied in part (no meta.json, or no summary.json) is
 * marked incomplete in every table, in summary.csv, summary.json and the
 * HTML, and what only those files know is left unknown, never guessed: no
 * offered rate made up from the schedule, no claim about where it ran. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TEST(report_marks_incomplete_runs_and_guesses_nothing) {
    char *dir = temp_dir(), cmd[2048], p[1400], *out;
    sim_proc s = sim_start(NULL);
    const char *names[] = {"whole", "nometa", "nosummary"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd,
                 "run --quiet --no-sampling --url http://127.0.0.1:%d --rate 50 --requests 10 "
                 "--max-tokens 4 --out %s/runs/%s",
                 s.port, dir, names[i]);
        CHECK_INT(servelab_cmd(cmd, NULL), 0);
    }
    sim_stop(&s);
    snprintf(p, sizeof p, "%s/runs/nometa/meta.json", dir);
    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/runs/nosummary/summary.json", dir);
    CHECK(unlink(p) == 0);
    snprintf(cmd, sizeof cmd, "report %s/runs", dir);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    snprintf(p, sizeof p, "%s/runs/report/summary.md", dir);
    char *md = read_file(p, NULL);
    CHECK_MSG(strstr(md, "| nometa (incomplete: no meta.json) |") &&
                  strstr(md, "| nosummary (incomplete: no summary.json) |") &&
                  strstr(md, "| whole |") && strstr(md, "| incomplete runs |"),
              "%s", md);
    CHECK_MSG(!strstr(md, "measured against a real server") && !strstr(md, "fixture: every run"),
              "%s", md);
    snprintf(p, sizeof p, "%s/runs/report/report.html", dir);
    char *html = read_file(p, NULL);
    CHECK(strstr(html, "nometa (incomplete: no meta.json)") != NULL);
    snprintf(p, sizeof p, "%s/runs/report/summary.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 3);
    for (int i = 0; i < t->n_rows; i++) {
        const char *run = csv_get(t, i, "run"), *inc = csv_get(t, i, "incomplete");
        if (!strcmp(run, "nometa")) {
            CHECK_STR(inc, "no meta.json");
            CHECK_STR(csv_get(t, i, "offered_rps"), ""); /* unknown, not the realized rate */
            CHECK(strcmp(csv_get(t, i, "realized_offered_rps"), "") != 0);
        } else if (!strcmp(run, "nosummary")) {
            CHECK_STR(inc, "no summary.json");
            CHECK_STR(csv_get(t, i, "offered_rps"), "50.0000");
        } else {
            CHECK_STR(inc, "");
        }
    }
    snprintf(p, sizeof p, "%s/runs/report/summary.json", dir);
    char *sj = read_file(p, NULL);
    CHECK(strstr(sj, "\"incomplete\": \"no meta.json\"") && strstr(sj, "\"incomplete\": null"));
}
