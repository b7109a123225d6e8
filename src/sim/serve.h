/* serve: runs the simulator until SIGINT, SIGTERM or SIGHUP: its event loop,
 * the call that says where it listens (the command prints the first stdout
 * line from it), and the trace flushed on the way out. What `servelab sim`
 * does once its options are read. */
#ifndef SERVELAB_SERVE_H
#define SERVELAB_SERVE_H

#include "common/outcome.h"
#include "sim/api.h"

/* Called once, when the server listens, with its URL
 * ("http://127.0.0.1:8000", brackets around an IPv6 host). */
typedef void (*sim_listening_fn)(void *arg, const char *url);

/* OUTCOME_OK after a clean stop; OUTCOME_BAD_INPUT with a message in err
 * when it could not start (e.g. the port is taken); OUTCOME_FAILED when a
 * trace file could not be written whole (its rows are then incomplete). */
outcome sim_serve(const sim_config *cfg, sim_listening_fn listening, void *arg, char *err,
                  int errlen);

#endif
