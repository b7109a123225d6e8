/* engine_clock: one step after another, as long as there is work.
 *
 * A step is planned (engine_step_begin says how long it lasts), a timer
 * fires at its end, and the step's tokens are emitted then
 * (engine_step_end). The next step starts when the last one ended, not
 * after its tokens were written: as in vLLM, where the engine runs the next
 * step while the API server streams the last one's output, writing
 * thousands of chunks does not stretch the step period (unless it takes
 * longer than a step). With threads, the next step waits while the I/O
 * threads are too far behind (see backlogged). It starts when the last one
 * was due to end, not when its timer fired: a timer fires some tens of
 * microseconds late, and steps begun at the firing would make every step
 * that much longer than the model says, so that 8 slots of 20 ms steps
 * served 19.9 requests/s instead of 20 (a queue at the knee that the model
 * does not have). Only a step that ends later than a tenth of its length
 * (at most STEP_LATE_US: the loop was held up, by its writes say) starts
 * the next one where it is, and the time it ran behind the model is
 * counted (servelab_sim_step_late_seconds_total on /metrics: a simulator
 * on a busy host says so). The timers run on the engine's loop and take
 * the engine lock. */
#include "sim/engine_clock.h"

#include <time.h>

#define STEP_LATE_US 2000

static void begin_step_at(sim_server *s, int64_t start_us) {
    int64_t d = engine_step_begin(s->eng, start_us);
    if (d < 0)
        return;
    s->step_end_us = start_us + d;
    s->step_len_us = d;
    int64_t wait = start_us + d - now_rel(s);
    if (wait < 0)
        wait = 0;
    struct timeval tv = {(time_t)(wait / 1000000), (suseconds_t)(wait % 1000000)};
    evtimer_add(s->step_timer, &tv);
}

/* Threaded: more than a step's worth of tokens not yet written. The next
 * step then waits (polled every 0.2 ms) as it does with one thread, where
 * the writes hold up the loop: the outboxes stay bounded and the step
 * period stretches exactly when the I/O side cannot keep up. */
static int backlogged(sim_server *s) {
    if (!s->threaded)
        return 0; /* one loop: the writes themselves held the step back */
    size_t pending = __atomic_load_n(&s->pending, __ATOMIC_RELAXED);
    size_t running = (size_t)engine_get_stats(s->eng).running;
    return pending > (running > 256 ? running : 256);
}

static void hold_or_begin(sim_server *s, int64_t start_us) {
    if (backlogged(s)) {
        s->held = 1;
        struct timeval tv = {0, 200};
        evtimer_add(s->hold_timer, &tv);
        return;
    }
    s->held = 0;
    begin_step_at(s, start_us);
}

static void on_step(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    sim_server *s = arg;
    eng_lock(s);
    int64_t now = now_rel(s);
    if (now < s->step_end_us) { /* the loop's cached clock fired it early: not yet */
        int64_t wait = s->step_end_us - now;
        struct timeval tv = {(time_t)(wait / 1000000), (suseconds_t)(wait % 1000000)};
        evtimer_add(s->step_timer, &tv);
        eng_unlock(s);
        return;
    }
    /* the step ends, and the next begins, when it was due to end (the
     * engine's clock: admissions, finishes), when it is only a timer's
     * lateness behind; a loop held up by its writes for longer stretches
     * the steps, as before (the writes are then the limit) */
    int64_t late = now - s->step_end_us, slack = s->step_len_us / 10;
    int64_t end = late <= (slack < STEP_LATE_US ? slack : STEP_LATE_US) ? s->step_end_us : now;
    if (end == now && late > 0)
        s->metrics.step_late_us += (uint64_t)late;
    engine_step_end(s->eng, end);
    hold_or_begin(s, end);
    eng_unlock(s);
}

static void on_hold(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    sim_server *s = arg;
    eng_lock(s);
    int64_t now = now_rel(s), last_end = s->step_end_us;
    hold_or_begin(s, now);
    /* a step held back since the last one ended (not an engine left idle) */
    if (!s->held && engine_in_step(s->eng) && now > last_end)
        s->metrics.step_late_us += (uint64_t)(now - last_end);
    eng_unlock(s);
}

void kick_engine(sim_server *s) {
    if (!engine_in_step(s->eng) && !s->held)
        begin_step_at(s, now_rel(s));
}

void engine_clock_start(sim_server *s) {
    s->step_timer = evtimer_new(s->base, on_step, s);
    s->hold_timer = evtimer_new(s->base, on_hold, s);
}

void engine_clock_free(sim_server *s) {
    if (s->step_timer)
        event_free(s->step_timer);
    if (s->hold_timer)
        event_free(s->hold_timer);
}
