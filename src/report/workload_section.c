/* workload_section: the workload table, read from the first repetition's
 * meta.json (the repetitions of a run share their settings), with the
 * dates of the first and the last repetition. The end is the last
 * repetition's t=0 (t0_utc, else started_utc) plus its duration, that is
 * when its last request ended: meta.json records no end of its own. */
#include "report/workload_section.h"
#include "common/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void add(table *t, const char *name, const char *value) {
    const char *cells[2] = {name, value};
    table_add_row(t, cells);
}

/* A JSON value as text: strings bare, null as `none`, others compact. */
static void value_text(json_t *v, const char *none, char *buf, size_t cap) {
    if (!v || json_is_null(v)) {
        snprintf(buf, cap, "%s", none);
    } else if (json_is_string(v)) {
        snprintf(buf, cap, "%s", json_string_value(v));
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(buf, cap, "%s", s ? s : "?");
        free(s);
    }
}

/* The arrival process and its rate (burstiness: gamma's coefficient of
 * variation, 1 for Poisson), or the closed loop's concurrency. */
static void arrivals_text(json_t *cfg, char *buf, size_t cap) {
    json_t *rate = json_object_get(cfg, "rate"), *conc = json_object_get(cfg, "concurrency");
    const char *proc = json_string_value(json_object_get(cfg, "arrival"));
    double c = json_is_number(conc) ? json_number_value(conc) : 0;
    char r[64], b[64], capped[64] = "";
    value_text(rate, "unknown", r, sizeof r);
    if (json_is_number(rate))
        snprintf(r, sizeof r, "%g req/s", json_number_value(rate));
    value_text(json_object_get(cfg, "burstiness"), "unknown", b, sizeof b);
    if (c > 0)
        snprintf(capped, sizeof capped, ", at most %g in flight", c);
    if (!json_is_number(rate) && c > 0)
        snprintf(buf, cap, "closed loop: %g requests in flight, each sent when one ends", c);
    else
        snprintf(buf, cap, "%s at %s, burstiness %s%s", proc ? proc : "unknown process", r, b,
                 capped);
}

/* "2026-11-30T05:07:06.971Z" plus `plus_s` seconds, in the same form (to
 * the millisecond); "unknown" when it does not read. */
static void utc_plus(const char *iso, double plus_s, char *buf, size_t cap) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest || !isfinite(plus_s)) {
        snprintf(buf, cap, "unknown");
        return;
    }
    double frac = *rest == '.' ? atof(rest) : 0;
    double t = (double)timegm(&tm) + frac + plus_s;
    time_t whole = (time_t)floor(t);
    int ms = (int)floor((t - floor(t)) * 1000 + 0.5);
    if (ms == 1000) {
        whole++;
        ms = 0;
    }
    struct tm out;
    char date[40];
    gmtime_r(&whole, &out);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &out);
    snprintf(buf, cap, "%s.%03dZ", date, ms);
}

static void command_line_text(json_t *argv, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < json_array_size(argv) && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? " " : "",
                                 json_string_value(json_array_get(argv, i)) ?: "?");
    if (!json_array_size(argv))
        snprintf(buf, cap, "unknown");
}

static void dates_rows(const report_run *rr, table *t) {
    char buf[96];
    json_t *first = rr->files[0].meta, *last = rr->files[rr->n_reps - 1].meta;
    utc_plus(json_string_value(json_object_get(first, "started_utc")), 0, buf, sizeof buf);
    add(t, rr->n_reps > 1 ? "started (first repetition)" : "started", buf);
    const char *t0 = json_string_value(json_object_get(last, "t0_utc"));
    if (!t0)
        t0 = json_string_value(json_object_get(last, "started_utc"));
    utc_plus(t0, rr->per_rep[rr->n_reps - 1].duration_s, buf, sizeof buf);
    add(t, rr->n_reps > 1 ? "ended (last repetition's last request)" : "ended (last request)", buf);
}

/* A JSON value as short text ("null" when absent). Eight buffers take
 * turns, so one printf may hold up to eight of these. */
static const char *json_dumps_text(json_t *v) {
    static char bufs[8][200];
    static int k;
    char *b = bufs[k++ % 8];
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(b, 200, "%s", s ? s : "null");
    free(s);
    return b;
}

table *workload_table(const report_run *rr) {
    const char *h[] = {"setting", "value"};
    table *t = table_new(2, h);
    json_t *meta = rr->files[0].meta, *cfg = json_object_get(meta, "config");
    char buf[2048];
    json_t *replay = json_object_get(meta, "replay");
    arrivals_text(cfg, buf, sizeof buf);
    add(t, "arrivals",
        replay ? "the trace's own timestamps"
        : meta ? buf
               : "unknown (no meta.json)");
    const char *plan = json_string_value(json_object_get(cfg, "rate_plan"));
    if (plan) /* the rate above is then the plan's mean */
        add(t, "rate plan (the rate above is its mean)", plan);
    if (replay) { /* the trace is the schedule and the prompts: the rows below are its */
        snprintf(buf, sizeof buf, "%s (%s), %s of its %s records, time scale %s",
                 json_dumps_text(json_object_get(replay, "file")),
                 json_dumps_text(json_object_get(replay, "format")),
                 json_dumps_text(json_object_get(replay, "records")),
                 json_dumps_text(json_object_get(replay, "records_in_file")),
                 json_dumps_text(json_object_get(replay, "time_scale")));
        add(t, "replayed trace (its timestamps and lengths are the workload)", buf);
    }
    json_t *turns = json_object_get(cfg, "turns");
    if (json_is_string(turns) && strcmp(json_string_value(turns), "1")) {
        json_t *think = json_object_get(cfg, "think_time_s");
        snprintf(buf, sizeof buf, "%s turns a conversation, %g s think time, %s conversations",
                 json_string_value(turns), json_is_number(think) ? json_number_value(think) : 0,
                 json_dumps_text(json_object_get(cfg, "conversations")));
        add(t, "multi-turn", buf);
    }
    json_t *dur = json_object_get(cfg, "duration_s");
    if (json_is_number(dur))
        snprintf(buf, sizeof buf, "for %g s", json_number_value(dur));
    else
        value_text(json_object_get(cfg, "requests"), "unknown", buf, sizeof buf);
    add(t, json_is_number(dur) ? "length" : "requests (per repetition)", buf);
    static const char *const keys[] = {"prompts", "mix", "max_tokens", "ignore_eos",
                                       "warmup",  "api", "model"};
    static const char *const names[] = {
        "prompts", "mix",  "max tokens", "ignore EOS", "warmup requests (not counted)",
        "API",     "model"};
    static const char *const none[] = {"unknown",
                                       "the prompts' own (builtin: short 0.5, "
                                       "medium 0.3, long 0.2)",
                                       "none",
                                       "unknown",
                                       "0",
                                       "unknown",
                                       "unknown"};
    for (size_t i = replay ? 2 : 0; i < sizeof keys / sizeof *keys; i++) { /* a trace's own */
        value_text(json_object_get(cfg, keys[i]), none[i], buf, sizeof buf);
        add(t, names[i], buf);
    }
    value_text(json_object_get(meta, "seed"), "unknown", buf, sizeof buf);
    add(t, "seed", buf);
    json_t *camp = json_object_get(meta, "campaign");
    if (camp) {
        const char *sa = json_string_value(json_object_get(camp, "server_args"));
        add(t, "server args (sweep)", sa && sa[0] ? sa : "none beyond the target's");
    }
    command_line_text(json_object_get(meta, "command_line"), buf, sizeof buf);
    add(t, "command line", buf);
    dates_rows(rr, t);
    return t;
}
