/* sim_proc: the simulator as a child process for one run: a fresh
 * `servelab sim` on a free loopback port, its ground-truth trace and its
 * log in the run's directory, so every run starts with an empty engine and
 * clean metrics. Used by the campaign runner (sweep.c) and by `servelab
 * capacity` (capacity/probe.c), one child per run or probe. */
#ifndef SERVELAB_SIM_PROC_H
#define SERVELAB_SIM_PROC_H

#include "target/server_proc.h"

/* Starts `self sim --port P --trace DIR/trace.csv SIM_ARGS SERVER_ARGS`
 * with its log in DIR/server.log and waits (30 s at most) for /health. 0, or
 * -1 with why in err (the process is gone by then). */
int sim_proc_start(server_proc *sim, const char *self, const char *sim_args, const char *dir,
                   const char *server_args, char *err, int errlen);

#endif
