/* proc: posix_spawn with descriptors, a process group, clean signal state
 * and the caller's additions to the environment, and the watchdog that
 * kills a group once this process is gone (see proc.h for why).
 *
 * The watchdog is a fork() of this process that never execs, so no shell
 * and no program path is involved. This process may have threads whose
 * locks the child inherits held, so the child calls only async-signal-safe
 * functions (no malloc, no stdio); it closes every descriptor but its pipe
 * at once, so it holds no socket, lock or other watchdog's pipe open. It
 * shares this process's memory pages copy-on-write while it waits, and
 * costs only the pages this process writes afterwards. */
#include "common/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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

/* The length of NAME in a NAME=value entry. */
static size_t name_len(const char *entry) {
    return strcspn(entry, "=");
}

/* Whether `entry`'s name is set again by env[from...]. */
static int set_later(const char *entry, char *const *env) {
    size_t n = name_len(entry);
    for (char *const *e = env; e && *e; e++)
        if (name_len(*e) == n && !strncmp(*e, entry, n))
            return 1;
    return 0;
}

/* This process's environment with `env`'s entries set over it (a later
 * entry wins); the strings are borrowed, the array is malloc'd. */
static char **child_environment(char *const *env) {
    size_t n = 0, m = 0;
    while (environ && environ[n])
        n++;
    while (env && env[m])
        m++;
    char **out = malloc((n + m + 1) * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!set_later(environ[i], env))
            out[k++] = environ[i];
    for (size_t i = 0; i < m; i++)
        if (!set_later(env[i], env + i + 1))
            out[k++] = env[i];
    out[k] = NULL;
    return out;
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
    char **envp = s->env ? child_environment(s->env) : environ;
    if (!envp)
        rc = ENOMEM;
    if (!rc)
        rc = strchr(s->argv[0], '/') ? posix_spawn(&pid, s->argv[0], &fa, &at, s->argv, envp)
                                     : posix_spawnp(&pid, s->argv[0], &fa, &at, s->argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (envp != environ)
        free(envp);
    if (rc) {
        snprintf(err, errlen, "cannot start %s: %s", s->argv[0], strerror(rc));
        return -1;
    }
    return pid;
}

/* Every descriptor but `keep` closed; `max_fd` bounds the loop where the
 * kernel has no close_range (before Linux 5.9). Async-signal-safe. */
static void close_all_but(int keep, int max_fd) {
    if ((keep == 0 || close_range(0, (unsigned)keep - 1, 0) == 0) &&
        close_range((unsigned)keep + 1, ~0U, 0) == 0)
        return;
    for (int fd = 0; fd < max_fd; fd++)
        if (fd != keep)
            close(fd);
}

/* The watchdog's whole life, in the forked child: it ignores the signals
 * that stop servelab (they are not its to obey), leaves servelab's process
 * group (a Ctrl-C at the terminal is not for it either), waits for the
 * pipe to close, and kills the group. Async-signal-safe calls only. */
static void watchdog(int fd, pid_t pgid, int max_fd) {
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, NULL);
    sigaction(SIGTERM, &ignore, NULL);
    sigaction(SIGHUP, &ignore, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    prctl(PR_SET_NAME, "servelab-watch"); /* in ps and top: not a second servelab */
    close_all_but(fd, max_fd);
    char byte;
    ssize_t r;
    while ((r = read(fd, &byte, 1)) > 0 || (r < 0 && errno == EINTR))
        ;
    kill(-pgid, SIGKILL);
    _exit(0);
}

int proc_guard_start(proc_guard *g, pid_t pgid, char *err, int errlen) {
    memset(g, 0, sizeof *g);
    g->fd = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    struct rlimit rl;
    int max_fd =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
    pid_t pid = fork();
    if (pid == 0)
        watchdog(fds[0], pgid, max_fd);
    close(fds[0]);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start the watchdog: %s", strerror(errno));
        close(fds[1]);
        return -1;
    }
    g->pid = pid;
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
