/* serve: runs the simulator until SIGINT, SIGTERM or SIGHUP: its event loop, the
 * first stdout line that says where it listens, and the trace flushed on the
 * way out. What `servelab sim` does once its options are read. */
#ifndef SERVELAB_SERVE_H
#define SERVELAB_SERVE_H

#include "sim/api.h"

/* Returns 0 after a clean stop, or -1 with a message in err when it could
 * not start (e.g. the port is taken). */
int sim_serve(const sim_config *cfg, char *err, int errlen);

#endif
