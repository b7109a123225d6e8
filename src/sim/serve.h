/* serve: runs the simulator until SIGINT, SIGTERM or SIGHUP: its event loop, the
 * first stdout line that says where it listens, and the trace flushed on the
 * way out. What `servelab sim` does once its options are read. */
#ifndef SERVELAB_SERVE_H
#define SERVELAB_SERVE_H

#include "sim/api.h"

/* Returns the exit code: 0 after a clean stop; 2 with a message in err when
 * it could not start (e.g. the port is taken); 1 when a trace file could not
 * be written whole (its rows are then incomplete). */
int sim_serve(const sim_config *cfg, char *err, int errlen);

#endif
