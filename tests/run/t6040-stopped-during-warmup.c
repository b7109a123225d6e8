/* A run stopped during its warmup loses nothing and sends nothing more:
 * every measured request becomes a cancelled row without reaching the
 * server, and meta.json and summary.json are written, marked interrupted. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

TEST(run_sigint_during_warmup_writes_everything_and_sends_nothing_more) {
    char *dir = temp_dir(), cmd[2048], p[1200];
    char trace[1100];
    snprintf(trace, sizeof trace, "%s/trace.csv", dir);
    snprintf(cmd, sizeof cmd, "--trace %s", trace);
    sim_proc s = sim_start(cmd);
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --no-sampling --url http://127.0.0.1:%d --rate 20 "
             "--requests 30 --warmup 200 --max-tokens 2 --out %s/r",
             servelab_bin(), s.port, dir);
    pid_t pid = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    sleep_ms(700); /* well inside the 10 s warmup */
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    char *meta = read_file(p, NULL);
    CHECK_MSG(meta && strstr(meta, "\"interrupted\": true"), "%s", meta ? meta : "no meta.json");
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    char *summary = read_file(p, NULL);
    CHECK_MSG(summary && strstr(summary, "\"interrupted\": true"), "%s",
              summary ? summary : "no summary.json");
    snprintf(p, sizeof p, "%s/r/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 30);
    for (int i = 0; i < t->n_rows; i++)
        CHECK_STR(csv_get(t, i, "error"), "cancelled");
    sim_stop(&s);
    /* the server saw warmup requests only (their ids come after the 30) */
    csv_table *tr = csv_read(trace);
    CHECK(tr && tr->n_rows > 0);
    for (int i = 0; i < tr->n_rows; i++)
        CHECK_MSG(atoi(tr->rows[i][0] + 4) >= 30, "measured request %s was sent", tr->rows[i][0]);
}
