/* inflight: counts of requests in a state over time, as bin means. Each
 * state is an interval of a request's life ([sent, end) for in flight); the
 * intervals' starts and ends are sorted into one list of +1 and -1 steps,
 * and one walk through it accumulates the area under the count, read off at
 * every bin edge. A bin's value is its area over its width, the mean number
 * of requests in that state during the bin: a count that rose and fell
 * within a bin still shows, where an instantaneous sample could miss it. */
#include "report/inflight.h"
#include "analysis/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Which interval of a request's life each state is: its start and end in
 * ms, or 0 when the request was never in it. A request that never reached
 * the interval's end (a failure, or a run cut short) stays in the state to
 * its own end, or to the run's end when it has none. */
static int interval_of(const req_rec *r, int state, double run_end, double *a, double *b) {
    double end = isnan(r->end_ms) ? run_end : r->end_ms;
    switch (state) {
    case 0: /* in flight */
        *a = r->sent_ms;
        *b = end;
        break;
    case 1: /* no first token yet */
        *a = r->sent_ms;
        *b = isnan(r->first_ms) ? end : r->first_ms;
        break;
    default: /* waiting in the client */
        *a = r->scheduled_ms;
        *b = isnan(r->sent_ms) ? end : r->sent_ms;
        break;
    }
    return !isnan(*a) && !isnan(*b) && *b > *a;
}

/* The bin means of one state into v[0..nb). */
static void bin_state(const run_rows *rows, int part, int state, double run_end, double step_ms,
                      size_t nb, double *v) {
    /* the entries and the exits, each sorted, walked together in time
     * order (which of two at one instant comes first adds no area) */
    double *in = xmalloc((rows->n + 1) * sizeof *in), *out = xmalloc((rows->n + 1) * sizeof *out);
    size_t ns = 0;
    for (size_t i = 0; i < rows->n; i++) {
        double a, b;
        if (rows->r[i].part != part || !interval_of(&rows->r[i], state, run_end, &a, &b))
            continue;
        in[ns] = a;
        out[ns++] = b;
    }
    sort_doubles(in, ns);
    sort_doubles(out, ns);
    size_t ji = 0, jo = 0;
    int count = 0;
    double area = 0, t = 0, edge_area = 0; /* area up to t, and up to the last edge */
    for (size_t k = 0; k < nb; k++) {
        double edge = (double)(k + 1) * step_ms;
        for (;;) {
            int take_in = ji < ns && in[ji] <= edge && (jo >= ns || in[ji] <= out[jo]);
            int take_out = !take_in && jo < ns && out[jo] <= edge;
            if (!take_in && !take_out)
                break;
            double at = take_in ? in[ji] : out[jo];
            if (at > t) {
                area += count * (at - t);
                t = at;
            }
            count += take_in ? 1 : -1;
            ji += take_in;
            jo += take_out;
        }
        area += count * (edge - t);
        t = edge;
        v[k] = (area - edge_area) / step_ms;
        edge_area = area;
    }
    free(in);
    free(out);
}

void client_counts_of(const run_rows *rows, int part, client_counts *out) {
    memset(out, 0, sizeof *out);
    double run_end = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->part != part)
            continue;
        const double t[3] = {r->scheduled_ms, r->sent_ms, r->end_ms};
        for (int k = 0; k < 3; k++)
            if (!isnan(t[k]) && t[k] > run_end)
                run_end = t[k];
    }
    if (run_end <= 0)
        return;
    double step_ms = fmin(INFLIGHT_STEP_MAX_S * 1000, run_end / 200);
    step_ms = fmax(fmax(step_ms, 1), run_end / 4000);
    size_t nb = (size_t)ceil(run_end / step_ms);
    out->n = nb;
    out->step_s = step_ms / 1000;
    out->t_s = xmalloc(nb * sizeof *out->t_s);
    double **v[3] = {&out->in_flight, &out->no_first, &out->waiting};
    for (int state = 0; state < 3; state++) {
        *v[state] = xmalloc(nb * sizeof **v[state]);
        bin_state(rows, part, state, run_end, step_ms, nb, *v[state]);
    }
    for (size_t k = 0; k < nb; k++) {
        out->t_s[k] = ((double)k + 0.5) * out->step_s;
        out->peak_waiting = fmax(out->peak_waiting, out->waiting[k]);
    }
}

void client_counts_free(client_counts *c) {
    free(c->t_s);
    free(c->in_flight);
    free(c->no_first);
    free(c->waiting);
    memset(c, 0, sizeof *c);
}
