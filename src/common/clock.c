/* clock: monotonic microseconds and a UTC timestamp string. */
#include "common/clock.h"

#include <event2/event.h>

#include <stdio.h>
#include <time.h>

int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t wall_at_mono(int64_t mono) {
    int64_t wall = wall_us();
    return wall - (mono_us() - mono);
}

int64_t mono_at_wall(int64_t wall) {
    int64_t mono = mono_us();
    return mono + (wall - wall_us());
}

void utc_now_iso(char *buf, int n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

struct event_base *event_base_precise(void) {
    struct event_config *ec = event_config_new();
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
    struct event_base *base = event_base_new_with_config(ec);
    event_config_free(ec);
    return base;
}
