/* sim_proc: a fresh simulator per run (see sim_proc.h), started through
 * server_proc with the command template it fills ({port}, {server_args}). */
#include "target/sim_proc.h"

#include <stdio.h>

int sim_proc_start(server_proc *sim, const char *self, const char *sim_args, const char *dir,
                   const char *server_args, char *err, int errlen) {
    char tmpl[16384], log[4200];
    snprintf(tmpl, sizeof tmpl, "%s sim --port {port} --trace %s/trace.csv %s {server_args}", self,
             dir, sim_args);
    snprintf(log, sizeof log, "%s/server.log", dir);
    return server_proc_start(sim, tmpl, server_args, "/health", 30, log, err, errlen);
}
