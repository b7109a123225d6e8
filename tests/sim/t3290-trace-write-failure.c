/* The simulator's ground truth is complete or says it is not: a trace file
 * it cannot write (here /dev/full, every write of which fails with ENOSPC)
 * is reported on stderr when it happens and makes the simulator exit 1. */
#include "support.h"
#include "test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void unwritable_trace(const char *flag) {
    char *dir = temp_dir(), log[1200], cmd[2400], args[256];
    snprintf(log, sizeof log, "%s/sim.err", dir);
    FILE *f = fopen(log, "w");
    CHECK(f != NULL);
    int fd = fileno(f);
    snprintf(args, sizeof args, "%s /dev/full", flag);
    /* sim_start's simulator, but with its stderr kept */
    int fds[2];
    CHECK(pipe2(fds, O_CLOEXEC) == 0);
    snprintf(cmd, sizeof cmd, "exec %s sim --port 0 %s", servelab_bin(), args);
    pid_t pid = spawn_sh(cmd, fds[1], fd);
    close(fds[1]);
    char line[256] = "";
    ssize_t n = read(fds[0], line, sizeof line - 1);
    close(fds[0]);
    line[n > 0 ? n : 0] = 0;
    const char *colon = strrchr(line, ':');
    CHECK_MSG(colon && !strncmp(line, "listening on", 12), "%s", line);
    snprintf(cmd, sizeof cmd,
             "run --quiet --no-sampling --url http://127.0.0.1:%d --rate 200 --requests 20 "
             "--max-tokens 4 --out %s/run",
             atoi(colon + 1), dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 0);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    fclose(f);
    char *err = read_file(log, NULL);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d: %s", st, err);
    char want[128];
    snprintf(want, sizeof want, "%s /dev/full: writing failed: No space left on device", flag);
    CHECK_MSG(strstr(err, want) && strstr(err, "the trace is incomplete"), "%s", err);
}

TEST(sim_trace_write_failure_reported_and_exit_1) {
    unwritable_trace("--trace");
}

TEST(sim_token_trace_write_failure_reported_and_exit_1) {
    unwritable_trace("--trace-tokens");
}
