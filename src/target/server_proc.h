/* server_proc: a server that servelab starts and stops itself (a managed
 * server in a campaign, target/managed_server.h, or the simulator as a
 * child process, target/sim_proc.h), the one way sweep, capacity and the
 * demo start the server under test. It picks a free loopback port first
 * (server_proc_init), so the caller can put it in the server's argv or
 * environment; it then starts that argv, with what the caller adds to its
 * environment, in a process group of its own (common/proc.h: posix_spawn,
 * no shell). The server's output and servelab's own notes on starting and
 * stopping it go to one log file; readiness is its health path answering
 * 200 (a stop signal ends the wait); stopping is SIGTERM to its process
 * group, then SIGKILL after a grace period. It never outlives servelab: a
 * watchdog kills its group when servelab is gone, even after a SIGKILL. */
#ifndef SERVELAB_SERVER_PROC_H
#define SERVELAB_SERVER_PROC_H

#include "common/proc.h"
#include "monitor/procstat.h"

#include <sys/types.h>

typedef struct server_proc {
    pid_t pid; /* 0 when not running */
    int port;
    char url[64];
    char *args; /* the server_args it was started with */
    char *log_path;
    pid_t pgid;      /* its process group, kept after it exits: what it left is stopped too */
    int exited;      /* it exited on its own (pid is then 0): */
    int exit_status; /* as from waitpid */
    int died_pid;    /* the pid it had */
    procstat_limits limits;  /* the memory limits it ran under, read when it became ready */
    long oom_kills_at_ready; /* its cgroup's OOM kills then; -1: unknown */
    proc_guard guard;        /* kills its process group if servelab dies first */
} server_proc;

/* How to start it, once its port is known. */
typedef struct server_proc_launch {
    char *const *argv;       /* the program and its words, NULL-terminated */
    char *const *env;        /* NAME=value entries set in its environment; NULL: none */
    const char *logged;      /* the command in the log; NULL: the argv, quoted */
    const char *shown;       /* the command in messages; NULL: as logged */
    const char *health_path; /* it is ready when this answers 200 */
    double ready_timeout_s;
} server_proc_launch;

/* Its port (a free one on loopback), URL and log, before anything starts:
 * the caller builds the argv from sp->port. 0, or -1 with why (then
 * server_proc_stop releases what was set). */
int server_proc_init(server_proc *sp, const char *server_args, const char *log_path, char *err,
                     int errlen);
/* Start it and wait until ready; the log says what was started and what
 * was set in its environment, each value quoted as a shell would need it
 * (so a `$(...)` in one reads as the text it is). On failure returns -1
 * with a one-line reason (the process is gone by then; its log path is
 * kept for the caller, who ends with server_proc_stop either way). */
int server_proc_start(server_proc *sp, const server_proc_launch *l, char *err, int errlen);
int server_proc_alive(server_proc *sp);
void server_proc_stop(server_proc *sp, double grace_s);
/* Append a line "[servelab] ..." to the server's log. */
void server_proc_note(const server_proc *sp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The last `n` lines (at most 16) of its log, each "    LINE" and joined
 * by newlines, malloc'd ("" when there is no log). */
char *server_proc_log_tail(const server_proc *sp, int n);
/* Copy its log (so far) to DIR/server.log. */
void server_proc_copy_log(const server_proc *sp, const char *dir);
/* A free TCP port on 127.0.0.1 (0 on failure). */
int server_proc_free_port(void);

#endif
