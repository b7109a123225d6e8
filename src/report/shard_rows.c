/* shard_rows: a merged run's shards as key-figure rows (see shard_rows.h). */
#include "report/shard_rows.h"
#include "report/load.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>

static double num(json_t *v) {
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void shard_rows(const report_run *rr, table *t) {
    if (rr->n_reps < 1 || !rr->files || !rr->files[0].meta)
        return;
    json_t *from = json_object_get(json_object_get(rr->files[0].meta, "merged"), "from");
    size_t i;
    json_t *e;
    json_array_foreach(from, i, e) {
        json_t *client = json_object_get(e, "client"), *clock = json_object_get(e, "clock");
        json_t *host = json_object_get(json_object_get(e, "host"), "hostname");
        double lag = num(json_object_get(json_object_get(client, "schedule_lag_ms"), "p99"));
        json_t *within = json_object_get(client, "within_1ms"),
               *synced = json_object_get(clock, "synchronized");
        char label[64], b[512], lag_s[32] = "-", err_s[48] = "";
        if (isfinite(lag))
            snprintf(lag_s, sizeof lag_s, "%.3f ms", lag);
        if (json_is_number(json_object_get(clock, "est_error_us")))
            snprintf(err_s, sizeof err_s, ", est. error %.0f us",
                     num(json_object_get(clock, "est_error_us")));
        snprintf(label, sizeof label, "shard %d",
                 (int)json_integer_value(json_object_get(e, "index")));
        snprintf(b, sizeof b,
                 "%s: %lld requests, %lld failed, schedule lag p99 %s, client within 1 ms: %s; "
                 "clock %s%s; times moved %.3f ms",
                 json_is_string(host) ? json_string_value(host) : "host unknown",
                 (long long)json_integer_value(json_object_get(e, "requests")),
                 (long long)json_integer_value(json_object_get(e, "failed")), lag_s,
                 json_is_true(within)    ? "yes"
                 : json_is_false(within) ? "no"
                                         : "unknown",
                 json_is_true(synced)    ? "synchronized"
                 : json_is_false(synced) ? "not synchronized"
                                         : "state unknown",
                 err_s, num(json_object_get(e, "shift_ms")));
        const char *cells[2] = {label, b};
        table_add_row(t, cells);
    }
}
