/* engine_clock: the timers that run the engine's steps in real time,
 * internal to src/sim/. api.c starts and frees them; the completion handler
 * calls kick_engine after adding a sequence, so an idle engine starts a
 * step. */
#ifndef SERVELAB_SIM_ENGINE_CLOCK_H
#define SERVELAB_SIM_ENGINE_CLOCK_H

#include "sim/server.h"

/* The step and hold timers on the engine's loop (s->base). */
void engine_clock_start(sim_server *s);
void engine_clock_free(sim_server *s);

/* Engine lock held: begin a step now unless one is running or held. */
void kick_engine(sim_server *s);

#endif
