/* t6160-server-binary-behind-a-wrapper: the server binary a run records is
 * the server's, not the shell's that started it (round 3's L6: a server
 * started as `sh -c 'a; servelab sim ...'` was recorded as /usr/bin/dash,
 * so two server builds behind one shell read as one server to fit). The
 * shell is kept as `wrapper`. */
#include "support.h"
#include "test.h"

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(the_server_binary_is_the_servers_behind_a_shell) {
    int fds[2];
    CHECK(pipe2(fds, O_CLOEXEC) == 0);
    char cmd[4096];
    /* two commands: the shell forks the simulator and stays its parent */
    snprintf(cmd, sizeof cmd, "%s sim --port 0 --profile tiny; true", servelab_bin());
    pid_t sh = spawn_sh(cmd, fds[1], PROC_INHERIT);
    close(fds[1]);
    char line[256] = "";
    size_t n = 0;
    struct pollfd pfd = {fds[0], POLLIN, 0};
    while (n < sizeof line - 1 && poll(&pfd, 1, 10000) > 0 && read(fds[0], line + n, 1) == 1 &&
           line[n] != '\n')
        n++;
    line[n] = 0;
    close(fds[0]);
    const char *colon = strrchr(line, ':');
    CHECK_MSG(colon && !strncmp(line, "listening on http://", 20), "'%s'", line);
    int port = colon ? atoi(colon + 1) : 0;
    char *dir = temp_dir(), args[4096];
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --requests 3 --server-pid %d --out %s/r", port,
             (int)sh, dir);
    CHECK_INT(servelab_cmd(args, NULL), 0);
    snprintf(args, sizeof args, "pkill -TERM -P %d", (int)sh);
    int code;
    free(run_capture(args, &code));
    int status;
    waitpid(sh, &status, 0);
    snprintf(args, sizeof args, "%s/r/meta.json", dir);
    json_t *m = json_load_file(args, 0, NULL);
    json_t *b = json_object_get(json_object_get(m, "server"), "binary");
    const char *path = json_string_value(json_object_get(b, "path"));
    const char *wrapper = json_string_value(json_object_get(b, "wrapper"));
    char real[PATH_MAX];
    CHECK(realpath(servelab_bin(), real) != NULL);
    CHECK_MSG(path && !strcmp(path, real), "binary %s, the server is %s", path ? path : "(none)",
              real);
    CHECK_MSG(wrapper && strstr(wrapper, "sh"), "wrapper %s", wrapper ? wrapper : "(none)");
    json_decref(m);
    free(dir);
}
