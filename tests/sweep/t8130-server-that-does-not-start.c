/* A managed server that does not start fails its run at once: nothing is
 * sent to its port, the end of its log is shown, "(server started)" is not
 * said, and the campaign goes on to the next run. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TEST(sweep_server_that_does_not_start_fails_its_run_at_once) {
    char *dir = temp_dir(), cfg[1024], cmd[2400], p[1400], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fputs("name: t\ntarget:\n  server:\n"
          "    command: \"sh -c 'echo starting on {port}; echo oops: no such model >&2; exit 3'\"\n"
          "    ready_timeout_s: 5\n"
          "workload: {prompts: \"random:8:4\"}\nrequests: 10\nrate: 100\n"
          "runs: [{name: a}, {name: b}]\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep %s --out %s/o", cfg, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 1, "exit %d: %s", code, out);
    CHECK_MSG(strstr(out, "oops: no such model") && !strstr(out, "(server started)"), "%s", out);
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    char *cj = read_file(p, NULL);
    CHECK_INT(count_of(cj, "\"status\": \"server_start_failed\""), 2);
    CHECK_INT(count_of(cj, "\"requests\": 0"), 2);
    struct stat st;
    snprintf(p, sizeof p, "%s/o/a/rep-1/requests.csv", dir);
    CHECK_MSG(stat(p, &st) != 0, "a schedule was sent to a server that did not start");
    snprintf(p, sizeof p, "%s/o/a/rep-1/server.log", dir);
    char *log = read_file(p, NULL);
    CHECK(log && strstr(log, "oops: no such model"));
}

/* The sweep's table has units in its headers and says "-", never nan, for
 * a run that has no figure (every request failed). */
TEST(sweep_table_units_and_no_nan) {
    char *dir = temp_dir(), cfg[1024], cmd[2400], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fputs("name: t\ntarget: {url: http://127.0.0.1:1}\nno_sampling: true\n"
          "workload: {prompts: \"random:8:4\"}\nrequests: 5\nrate: 100\nruns: [{name: dead}]\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s/o", cfg, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 1, "exit %d: %s", code, out);
    CHECK_MSG(strstr(out, "TTFT p50 ms") && strstr(out, "offered rps"), "%s", out);
    const char *row = strstr(out, "\ndead ");
    CHECK_MSG(row != NULL, "%s", out);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
    CHECK_MSG(!strstr(line, "nan") && strstr(line, " - "), "%s", line);
    /* campaign.json says why the run failed, not only that it did */
    char p[1400];
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    char *cj = read_file(p, NULL);
    CHECK_MSG(cj && strstr(cj, "\"error\": \"5 of 5 requests failed\""), "%s", cj);
}
