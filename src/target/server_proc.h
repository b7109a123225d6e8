/* server_proc: a server that servelab starts and stops itself (a managed
 * server in a campaign, or the simulator as a child process). The command
 * template gets {port} (a free loopback port picked here) and
 * {server_args}; the server's output and servelab's own notes on starting
 * and stopping it go to one log file; readiness is its health path
 * answering 200 (a stop signal ends the wait); stopping is SIGTERM to its
 * process group, then SIGKILL after a grace period. It never outlives
 * servelab: a watchdog kills its group when servelab is gone, even after a
 * SIGKILL. */
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

/* Start and wait until ready. On failure returns -1 with a one-line reason
 * (the process is gone by then; its log path is kept for the caller, who
 * ends with server_proc_stop either way). */
int server_proc_start(server_proc *sp, const char *cmd_template, const char *server_args,
                      const char *health_path, double ready_timeout_s, const char *log_path,
                      char *err, int errlen);
int server_proc_alive(server_proc *sp);
void server_proc_stop(server_proc *sp, double grace_s);
/* Append a line "[servelab] ..." to the server's log. */
void server_proc_note(const server_proc *sp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A free TCP port on 127.0.0.1 (0 on failure). */
int server_proc_free_port(void);

#endif
