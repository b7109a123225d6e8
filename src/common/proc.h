/* proc: starting other programs, the one way servelab does it (the
 * simulator per run, a managed server, calibrate's children).
 *
 * posix_spawn rather than fork and exec: the child needs no code of ours
 * between the two (so nothing of this process runs twice and no exit path
 * is needed there), and a program that cannot be started is reported to the
 * caller as an error instead of a child that dies at once.
 *
 * A server servelab starts must not outlive it, however servelab ends. A
 * stop signal lets the sweep stop it in order; for SIGKILL, which nothing
 * can catch, proc_guard starts a small watchdog (a forked child of this
 * process that runs no program, reading a pipe only this process holds
 * open): when this process is gone, for whatever reason, the pipe closes
 * and the watchdog kills the server's whole process group, so it holds
 * across the shell of a user's server command and whatever the server
 * started itself.
 *
 * Nothing here goes through a shell: a child gets an argv, and what the
 * caller adds to its environment is set there, never written as text. */
#ifndef SERVELAB_PROC_H
#define SERVELAB_PROC_H

#include <sys/types.h>

#define PROC_INHERIT (-1)
#define PROC_DEVNULL (-2)

typedef struct proc_spec {
    char *const *argv; /* argv[0] is the program: a path, or a name looked up in PATH */
    int in, out, err;  /* descriptors for 0, 1, 2: PROC_INHERIT, PROC_DEVNULL or an fd */
    int own_group;     /* in a process group of its own, whose id is its pid */
    char *const *env;  /* NAME=value entries set in its environment over this process's
                          (a later one wins); NULL: this process's as it is */
} proc_spec;

/* Starts it with default signal dispositions and mask: its pid, or -1 with
 * the reason in err. */
pid_t proc_spawn(const proc_spec *s, char *err, int errlen);

typedef struct proc_guard {
    pid_t pid; /* the watchdog; 0 when none */
    int fd;    /* the pipe's end only this process holds */
} proc_guard;

/* Kill process group `pgid` with SIGKILL once this process is gone.
 * 0, or -1 with the reason in err (the group is then unguarded). */
int proc_guard_start(proc_guard *g, pid_t pgid, char *err, int errlen);
/* The group was stopped in order: end the watchdog without it killing. */
void proc_guard_stop(proc_guard *g);

#endif
