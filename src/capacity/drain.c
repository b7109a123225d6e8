/* drain: wait for an idle server before a probe (drain.h): by its
 * /metrics gauges, or, without them, by timing a lone request. */
#include "capacity/drain.h"
#include "client/probe.h"
#include "common/clock.h"
#include "common/stop.h"

#include <math.h>
#include <time.h>

static void pause_poll(void) {
    struct timespec ts = {0, DRAIN_POLL_MS * 1000000L};
    nanosleep(&ts, NULL);
}

void drain_wait(const char *metrics_url, struct curl_slist *headers, int insecure, double max_s,
                drain_result *r) {
    *r = (drain_result){.state = DRAIN_NO_GAUGES, .lone_ms = NAN, .baseline_ms = NAN};
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
        pause_poll();
    }
    r->waited_s = mono_us() / 1e6 - t0;
}

void drain_lone(const drain_lone_req *q, double baseline_ms, double max_s, drain_result *r) {
    double t0 = mono_us() / 1e6, waited0 = r->waited_s;
    if (isnan(baseline_ms)) { /* the idle server's: the fastest of 3 */
        double best = NAN;
        for (int i = 0; i < 3 && !stop_signal(); i++) {
            int timed_out;
            double ms = probe_post_ms(q->url, q->body, q->headers, q->insecure, max_s, &timed_out);
            if (isnan(ms) || timed_out) {
                r->state = DRAIN_LONE_FAILED;
                return;
            }
            best = isnan(best) || ms < best ? ms : best;
        }
        r->state = DRAIN_LONE_BASE;
        r->lone_ms = r->baseline_ms = best;
        r->waited_s = waited0 + mono_us() / 1e6 - t0;
        return;
    }
    r->baseline_ms = baseline_ms;
    for (;;) {
        int timed_out;
        double ms = probe_post_ms(q->url, q->body, q->headers, q->insecure,
                                  max_s - (mono_us() / 1e6 - t0), &timed_out);
        r->waited_s = waited0 + mono_us() / 1e6 - t0;
        r->lone_ms = ms;
        if (isnan(ms)) {
            r->state = DRAIN_LONE_FAILED;
            return;
        }
        if (!timed_out && ms <= DRAIN_LONE_FACTOR * baseline_ms + DRAIN_LONE_SLACK_MS) {
            r->state = DRAIN_LONE_IDLE;
            return;
        }
        r->state = DRAIN_BUSY;
        if (r->waited_s >= max_s)
            return;
        if (stop_signal()) {
            r->state = DRAIN_STOPPED;
            return;
        }
        pause_poll();
    }
}

const char *drain_state_name(drain_state s) {
    switch (s) {
    case DRAIN_NOT_CHECKED: return "not checked";
    case DRAIN_IDLE: return "idle";
    case DRAIN_NO_GAUGES: return "no gauges";
    case DRAIN_BUSY: return "busy";
    case DRAIN_STOPPED: return "stopped";
    case DRAIN_LONE_IDLE: return "idle (lone request)";
    case DRAIN_LONE_BASE: return "baseline";
    case DRAIN_LONE_FAILED: return "lone request failed";
    }
    return "?";
}
