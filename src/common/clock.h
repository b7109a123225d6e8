/* clock: the one monotonic clock every timestamp in servelab comes from.
 * Microseconds as int64 keep arithmetic exact; ms conversions are for output. */
#ifndef SERVELAB_CLOCK_H
#define SERVELAB_CLOCK_H

#include <stdint.h>

struct event_base;

/* CLOCK_MONOTONIC in microseconds. */
int64_t mono_us(void);
/* CLOCK_REALTIME (the wall clock) in microseconds since the epoch. */
int64_t wall_us(void);
/* The wall clock at monotonic time `mono`, and the monotonic time at
 * wall-clock instant `wall` (both µs), through one reading of each clock. */
int64_t wall_at_mono(int64_t mono);
int64_t mono_at_wall(int64_t wall);
/* Wall-clock UTC as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (>= 32 bytes). */
void utc_now_iso(char *buf, int n);
/* A libevent loop whose timers run on that clock to the microsecond
 * (EVENT_BASE_FLAG_PRECISE_TIMER); every loop that schedules or times
 * traffic is made here. */
struct event_base *event_base_precise(void);

#endif
