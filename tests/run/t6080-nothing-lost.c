/* Nothing lost: a fault matrix of 5,000 requests whose error counts equal
 * what the simulator says it injected (plus the requests sent while nothing
 * listened), a disk that fills up mid-run, and an --out that cannot be
 * written. */
#include "csv_util.h"
#include "support.h"
#include "target/server_proc.h"
#include "test.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void fault_matrix(int sim_threads) {
    char *dir = temp_dir();
    int port = server_proc_free_port();
    CHECK(port > 0);
    char cmd[4096];
    /* the client starts first: for its first 0.6 s nothing listens */
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --url http://127.0.0.1:%d --model sim-model --rate 1000 "
             "--requests 5000 --prompts random:8:6 --ignore-eos --timeout 1 --out %s/run "
             ">%s/run.out 2>&1",
             servelab_bin(), port, dir, dir);
    pid_t run = spawn_sh(cmd, PROC_INHERIT, PROC_INHERIT);
    usleep(600000);
    snprintf(cmd, sizeof cmd,
             "exec %s sim --port %d --threads %d --trace %s/trace.csv --stall-ms 3000 --fault "
             "http429=0.04,http500=0.03,disconnect=0.03,malformed=0.02,stall=0.01 >/dev/null",
             servelab_bin(), port, sim_threads, dir);
    pid_t sim = spawn_sh(cmd, PROC_INHERIT, PROC_INHERIT);
    int st;
    waitpid(run, &st, 0);
    kill(sim, SIGTERM);
    waitpid(sim, NULL, 0);
    char p[2048];
    snprintf(p, sizeof p, "%s/run.out", dir);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run: %s", read_file(p, NULL));
    snprintf(p, sizeof p, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 5000);
    snprintf(p, sizeof p, "%s/trace.csv", dir);
    csv_table *tr = csv_read(p);
    int fcol = csv_col(tr, "fault");
    int injected[6] = {0}; /* none, 429, 500, disconnect, malformed, stall */
    const char *names[] = {"", "http429", "http500", "disconnect", "malformed", "stall"};
    for (int i = 0; i < tr->n_rows; i++)
        for (int k = 0; k < 6; k++)
            if (!strcmp(tr->rows[i][fcol], names[k]))
                injected[k]++;
    int got_http = 0, got_disc = 0, got_mal = 0, got_timeout = 0, got_connect = 0, got_ok = 0,
        other = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const char *e = csv_get(t, i, "error");
        if (!strcmp(e, "http"))
            got_http++;
        else if (!strcmp(e, "disconnect"))
            got_disc++;
        else if (!strcmp(e, "malformed"))
            got_mal++;
        else if (!strcmp(e, "timeout"))
            got_timeout++;
        else if (!strcmp(e, "connect"))
            got_connect++;
        else if (!strcmp(e, ""))
            got_ok++;
        else
            other++;
    }
    printf("    injected: 429 %d, 500 %d, disconnect %d, malformed %d, stall %d; refused %d\n",
           injected[1], injected[2], injected[3], injected[4], injected[5], 5000 - tr->n_rows);
    CHECK(injected[1] > 50 && injected[3] > 50 && injected[5] > 10);
    CHECK(5000 - tr->n_rows > 100); /* the refused phase happened */
    CHECK_INT(got_http, injected[1] + injected[2]);
    CHECK_INT(got_disc, injected[3]);
    CHECK_INT(got_mal, injected[4]);
    CHECK_INT(got_timeout, injected[5]);
    CHECK_INT(got_connect, 5000 - tr->n_rows);
    CHECK_INT(got_ok, injected[0]);
    CHECK_INT(other, 0);
}

TEST_SLOW_ALONE(fault_matrix_5000_requests_counts_match_trace) {
    fault_matrix(1);
}

/* The same against a simulator with three I/O threads behind its engine. */
TEST_SLOW_ALONE(fault_matrix_sim_threads_counts_match_trace) {
    fault_matrix(3);
}

/* A 64 KiB filesystem fills up mid-run: a clear error, exit 1, and every
 * row already on disk whole. A private mount namespace keeps the mount from
 * outliving the test. */
TEST(disk_full_mid_run_keeps_every_written_row_whole) {
    char *dir = temp_dir();
    sim_proc sp = sim_start(NULL);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "unshare -rm sh -c 'mkdir -p %s/small && mount -t tmpfs -o size=64k tmpfs "
             "%s/small && %s run --quiet --url http://127.0.0.1:%d --rate 2000 --requests 3000 "
             "--prompts random:8:4 --ignore-eos --out %s/small/run; echo \"exit=$?\"; "
             "cp %s/small/run/requests.csv %s/requests.csv' 2>&1",
             dir, dir, servelab_bin(), sp.port, dir, dir, dir);
    int code;
    char *out = run_capture(cmd, &code);
    sim_stop(&sp);
    CHECK_MSG(strstr(out, "exit=1") != NULL, "want exit 1: %s", out);
    CHECK_MSG(strstr(out, "No space left on device") != NULL, "no clear error: %s", out);
    char p[2048];
    snprintf(p, sizeof p, "%s/requests.csv", dir);
    size_t len;
    char *raw = read_file(p, &len);
    CHECK(raw && len > 1000);
    CHECK(raw[len - 1] == '\n');
    csv_table *t = csv_read(p); /* fails on any torn line */
    CHECK(t->n_rows > 100 && t->n_rows < 3000);
}

TEST(unwritable_out_is_a_clear_error) {
    char *dir = temp_dir();
    char p[1200], cmd[4096];
    snprintf(p, sizeof p, "%s/file", dir);
    FILE *f = fopen(p, "w");
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s run --url http://127.0.0.1:1 --model m --requests 3 --out %s/sub 2>&1",
             servelab_bin(), p);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_INT(code, 2);
    CHECK_MSG(strstr(out, "--out") && strstr(out, "file/sub"), "%s", out);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
}
