/* managed_server: a campaign's target.server, the server under test that
 * servelab starts from the user's command line and restarts as the runs
 * need (docs/campaign.md).
 *
 * The command is the user's shell command line, documented as one (users
 * write pipelines, `cd dir && ...`, `VAR=x prog`), so it is the one thing
 * servelab runs through /bin/sh; nothing servelab adds is ever pasted into
 * its text. {port} becomes "$SERVELAB_PORT" (quoted) and {server_args}
 * becomes $SERVELAB_SERVER_ARGS (unquoted: split into words at blanks, as
 * users expect), with those variables set in the server's environment;
 * target.server.env's NAME: value pairs are set in its environment too,
 * each value exactly as written (a `$(...)` in one is those characters,
 * never run). */
#ifndef SERVELAB_MANAGED_SERVER_H
#define SERVELAB_MANAGED_SERVER_H

#include "target/server_proc.h"

typedef struct managed_server_spec {
    const char *command;          /* the shell command line, with {port} and maybe {server_args} */
    const char *const *env_names; /* target.server.env, set in its environment as written */
    const char *const *env_values;
    int n_env;
    const char *health_path; /* ready when this answers 200 */
    double ready_timeout_s;
} managed_server_spec;

/* Starts it with `server_args`, its output and servelab's notes in
 * log_path, and waits until it is ready. 0, or -1 with why (end with
 * server_proc_stop either way). */
int managed_server_start(server_proc *sp, const managed_server_spec *m, const char *server_args,
                         const char *log_path, char *err, int errlen);
/* The program the command starts (after any VAR=value words) is here: a
 * path that can be run, or a name on PATH. A shell builtin at the start
 * (cd, exec, ...) is not checked. 0, or -1 with why. */
int managed_server_check_program(const char *command, char *err, int errlen);

#endif
