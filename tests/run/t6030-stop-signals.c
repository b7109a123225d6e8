/* SIGTERM (what Kubernetes and `kill` send) and SIGHUP (a dropped SSH
 * session) end a run the way Ctrl-C does: what is left is cancelled, every
 * scheduled request is a row, meta.json and summary.json are written marked
 * interrupted, and the exit code is 128 + the signal. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static void stopped_by(int sig) {
    char *dir = temp_dir(), cmd[2048], p[1200];
    sim_proc s = sim_start("--decode-base-ms 5");
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --no-sampling --url http://127.0.0.1:%d --rate 50 "
             "--requests 200 --max-tokens 8 --out %s/r",
             servelab_bin(), s.port, dir);
    pid_t pid = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    snprintf(p, sizeof p, "%s/r/requests.csv", dir);
    for (int i = 0; i < 300; i++) { /* until the run is under way */
        char *rows = read_file(p, NULL);
        const char *header_end = rows ? strchr(rows, '\n') : NULL; /* the file may be empty yet */
        int under_way = header_end && strchr(header_end + 1, '\n');
        free(rows);
        if (under_way)
            break;
        sleep_ms(10);
    }
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig, "signal %d: status %d", sig, st);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 200);
    int cancelled = 0;
    for (int i = 0; i < t->n_rows; i++)
        cancelled += !strcmp(csv_get(t, i, "error"), "cancelled");
    CHECK_MSG(cancelled > 0 && cancelled < 200, "%d cancelled", cancelled);
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    char *meta = read_file(p, NULL);
    CHECK(meta && strstr(meta, "\"interrupted\": true"));
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    CHECK(read_file(p, NULL) != NULL);
    sim_stop(&s);
}

TEST(run_sigterm_ends_like_sigint_with_143) {
    stopped_by(SIGTERM);
}

TEST(run_sighup_ends_like_sigint_with_129) {
    stopped_by(SIGHUP);
}
