/* sim_proc: the simulator as a child process for one run: a fresh
 * `servelab sim` on a free loopback port, its ground-truth trace and its
 * log in the run's directory, so every run starts with an empty engine and
 * clean metrics. Used by the campaign runner (sweep.c) and by `servelab
 * capacity` (capacity/probe.c), one child per run or probe.
 *
 * It is started with an argv, never through a shell: the run's directory
 * (under a user's --out, which may hold spaces, quotes or `$(...)`) and the
 * binary's path are single words of it, and the simulator's arguments
 * (a campaign's sim args and server_args, `capacity --sim "..."`) are split
 * into words by common/shellwords.h, which expands nothing. */
#ifndef SERVELAB_SIM_PROC_H
#define SERVELAB_SIM_PROC_H

#include "target/server_proc.h"

/* Starts `SELF sim --port P --trace DIR/trace.csv [--profile PROFILE]
 * SIM_ARGS SERVER_ARGS` (PROFILE NULL: none; the last two split into
 * words) with its log in DIR/server.log and waits (30 s at most) for
 * /health. 0, or -1 with why in err (the process is gone by then; end with
 * server_proc_stop either way). */
int sim_proc_start(server_proc *sim, const char *self, const char *profile, const char *sim_args,
                   const char *dir, const char *server_args, char *err, int errlen);

#endif
