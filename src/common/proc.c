/* proc: posix_spawn with descriptors, a process group and clean signal
 * state, and the watchdog that kills a group once this process is gone
 * (see proc.h for why). */
#include "common/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Descriptor `fd` of the child from `from` (PROC_INHERIT: leave it). */
static int redirect(posix_spawn_file_actions_t *fa, int from, int fd) {
    if (from == PROC_INHERIT)
        return 0;
    if (from == PROC_DEVNULL)
        return posix_spawn_file_actions_addopen(fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
    return posix_spawn_file_actions_adddup2(fa, from, fd);
}

pid_t proc_spawn(const proc_spec *s, char *err, int errlen) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    int rc = redirect(&fa, s->in, 0);
    if (!rc)
        rc = redirect(&fa, s->out, 1);
    if (!rc)
        rc = redirect(&fa, s->err, 2);
    /* servelab ignores SIGPIPE and catches its stop signals: a child starts
     * with every signal at its default and none blocked. */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (s->own_group) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&at, 0);
    }
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, flags);
    pid_t pid = -1;
    if (!rc)
        rc = strchr(s->argv[0], '/') ? posix_spawn(&pid, s->argv[0], &fa, &at, s->argv, environ)
                                     : posix_spawnp(&pid, s->argv[0], &fa, &at, s->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc) {
        snprintf(err, errlen, "cannot start %s: %s", s->argv[0], strerror(rc));
        return -1;
    }
    return pid;
}

int proc_guard_start(proc_guard *g, pid_t pgid, char *err, int errlen) {
    memset(g, 0, sizeof *g);
    g->fd = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    /* The watchdog ignores the signals that stop servelab (they are not its
     * to obey), waits for the pipe to close, and kills the group. */
    char script[160];
    snprintf(script, sizeof script, "trap '' INT TERM HUP; read _ ; kill -KILL -%d 2>/dev/null",
             (int)pgid);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    proc_spec s = {
        .argv = argv, .in = fds[0], .out = PROC_DEVNULL, .err = PROC_DEVNULL, .own_group = 1};
    g->pid = proc_spawn(&s, err, errlen);
    close(fds[0]);
    if (g->pid < 0) {
        close(fds[1]);
        g->pid = 0;
        return -1;
    }
    g->fd = fds[1];
    return 0;
}

void proc_guard_stop(proc_guard *g) {
    if (g->pid > 0) {
        kill(g->pid, SIGKILL);
        waitpid(g->pid, NULL, 0);
    }
    if (g->fd >= 0)
        close(g->fd);
    g->pid = 0;
    g->fd = -1;
}
