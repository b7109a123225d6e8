/* drain: wait for an idle server before a probe (drain.h). */
#include "capacity/drain.h"
#include "client/probe.h"
#include "common/clock.h"
#include "common/stop.h"

#include <time.h>

void drain_wait(const char *metrics_url, struct curl_slist *headers, int insecure, double max_s,
                drain_result *r) {
    *r = (drain_result){.state = DRAIN_NO_GAUGES};
    double t0 = mono_us() / 1e6;
    for (;;) {
        busy_gauges b;
        if (probe_busy(metrics_url, headers, insecure, &b) || !b.found)
            break; /* nothing (more) to read: NO_GAUGES, or the last reading stands */
        r->running = b.running;
        r->waiting = b.waiting;
        r->waited_s = mono_us() / 1e6 - t0;
        if (b.running <= 0 && b.waiting <= 0) {
            r->state = DRAIN_IDLE;
            return;
        }
        r->state = DRAIN_BUSY;
        if (r->waited_s >= max_s)
            return;
        if (stop_signal()) {
            r->state = DRAIN_STOPPED;
            return;
        }
        struct timespec ts = {0, DRAIN_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    r->waited_s = mono_us() / 1e6 - t0;
}

const char *drain_state_name(drain_state s) {
    switch (s) {
    case DRAIN_NOT_CHECKED: return "not checked";
    case DRAIN_IDLE: return "idle";
    case DRAIN_NO_GAUGES: return "no gauges";
    case DRAIN_BUSY: return "busy";
    case DRAIN_STOPPED: return "stopped";
    }
    return "?";
}
