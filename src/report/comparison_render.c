/* comparison_render: the three forms of a comparison. The cells of a
 * figure's row are formatted once (cells_of) and laid out as a padded
 * terminal table or a Markdown one, so the two can never disagree. */
#include "report/comparison_render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct row_cells {
    char base[40], new_[40], change[40], ci[64];
} row_cells;

/* A value in the figure's unit; "-" when unknown. */
static void value_text(int fig, double v, char *buf, size_t n) {
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return;
    }
    switch (figure_unit_of(fig)) {
    case UNIT_MS: snprintf(buf, n, v >= 100 ? "%.1f ms" : v >= 1 ? "%.2f ms" : "%.3f ms", v); break;
    case UNIT_TOK_S: snprintf(buf, n, "%.1f tok/s", v); break;
    case UNIT_REQ_S: snprintf(buf, n, v >= 1 ? "%.2f req/s" : "%.3f req/s", v); break;
    default: snprintf(buf, n, "%.1f%%", 100 * v); break;
    }
}

/* A change in the figure's unit, signed: "+1.20 ms", "-0.5 pp". */
static void diff_text(int fig, double d, char *buf, size_t n) {
    switch (figure_unit_of(fig)) {
    case UNIT_MS: snprintf(buf, n, "%+.3g ms", d); break;
    case UNIT_TOK_S: snprintf(buf, n, "%+.1f tok/s", d); break;
    case UNIT_REQ_S: snprintf(buf, n, "%+.3g req/s", d); break;
    default: snprintf(buf, n, "%+.1f pp", 100 * d); break;
    }
}

static void cells_of(int fig, const figure_change *c, row_cells *out) {
    value_text(fig, c->base, out->base, sizeof out->base);
    value_text(fig, c->new_, out->new_, sizeof out->new_);
    if (c->v == VERDICT_NA || c->v == VERDICT_GONE) {
        snprintf(out->change, sizeof out->change, "-");
        snprintf(out->ci, sizeof out->ci, "-");
    } else if (isfinite(c->rel) && isfinite(c->rel_lo) && isfinite(c->rel_hi)) {
        snprintf(out->change, sizeof out->change, "%+.1f%%", 100 * c->rel);
        snprintf(out->ci, sizeof out->ci, "[%+.1f%%, %+.1f%%]", 100 * c->rel_lo, 100 * c->rel_hi);
    } else { /* a base of 0: no relative change */
        char lo[24], hi[24];
        diff_text(fig, c->diff, out->change, sizeof out->change);
        diff_text(fig, c->diff_lo, lo, sizeof lo);
        diff_text(fig, c->diff_hi, hi, sizeof hi);
        snprintf(out->ci, sizeof out->ci, "[%s, %s]", lo, hi);
    }
}

/* Goodput rows only where the pair is judged by an SLO. */
static int shown(const compared_run *r, int fig) {
    return (fig != FIG_GOODPUT_RPS && fig != FIG_GOODPUT_FRACTION) || r->base.has_slo;
}

static void requests_text(const run_summary *s, char *buf, size_t n) {
    if (s->failed)
        snprintf(buf, n, "%zu requests (%zu failed)", s->requests, s->failed);
    else
        snprintf(buf, n, "%zu requests", s->requests);
}

static void header_line(const comparison *c, strbuf *b, int md) {
    const char *q = md ? "`" : "";
    sb_printf(b,
              "%sase %s%s%s, new %s%s%s: 95%% bootstrap intervals of the change, %d resamples, "
              "seed %llu\n",
              md ? "B" : "compare: b", q, c->base_dir, q, q, c->new_dir, q, c->resamples,
              (unsigned long long)c->seed);
}

/* "load-8rps (tpot_p50 +15.2%, 95% CI [+12.0%, +18.4%])" for each run the
 * gate trips on, the change in ms (or the figure's unit) for a gate in
 * one. */
static void tripped_runs(const comparison *c, const gate *g, strbuf *b, int md) {
    int first = 1;
    for (int k = 0; k < c->n_runs; k++) {
        const compared_run *r = &c->runs[k];
        if (!gate_tripped(g, &r->fig[g->fig]))
            continue;
        row_cells cells;
        const figure_change *fc = &r->fig[g->fig];
        cells_of(g->fig, fc, &cells);
        if (!g->relative && fc->v != VERDICT_GONE) { /* the change in the gate's terms */
            char lo[24], hi[24];
            diff_text(g->fig, fc->diff, cells.change, sizeof cells.change);
            diff_text(g->fig, fc->diff_lo, lo, sizeof lo);
            diff_text(g->fig, fc->diff_hi, hi, sizeof hi);
            snprintf(cells.ci, sizeof cells.ci, "[%s, %s]", lo, hi);
        }
        if (fc->v == VERDICT_GONE)
            sb_printf(b, "%s%s%s%s (%s: %s)", first ? "" : "; ", md ? "`" : "", r->name,
                      md ? "`" : "", figure_name(g->fig), verdict_name(fc->v));
        else
            sb_printf(b, "%s%s%s%s (%s %s, 95%% CI %s)", first ? "" : "; ", md ? "`" : "", r->name,
                      md ? "`" : "", figure_name(g->fig), cells.change, cells.ci);
        first = 0;
    }
    if (first)
        sb_puts(b, "passed");
}

static int trips_any(const comparison *c, const gate *g) {
    for (int k = 0; k < c->n_runs; k++)
        if (gate_tripped(g, &c->runs[k].fig[g->fig]))
            return 1;
    return 0;
}

static void only_line(strbuf *b, const char *side, char **names, int n, int md) {
    if (!n)
        return;
    sb_printf(b, "%sonly in %s (not compared): ", md ? "\nO" : "\no", side);
    for (int i = 0; i < n; i++)
        sb_printf(b, "%s%s%s%s", i ? ", " : "", md ? "`" : "", names[i], md ? "`" : "");
    sb_puts(b, md ? ".\n" : "\n");
}

static void text_run(const compared_run *r, strbuf *b) {
    char rb[64], rn[64];
    requests_text(&r->base, rb, sizeof rb);
    requests_text(&r->new_, rn, sizeof rn);
    sb_printf(b, "\n%s: base %s, new %s\n", r->name, rb, rn);
    if (r->note[0])
        sb_printf(b, "  note: %s\n", r->note);
    sb_printf(b, "  %-20s %15s %15s %9s  %-20s %s\n", "figure", "base", "new", "change",
              "95% CI of change", "verdict");
    for (int f = 0; f < FIG_COUNT; f++) {
        if (!shown(r, f))
            continue;
        row_cells cells;
        cells_of(f, &r->fig[f], &cells);
        sb_printf(b, "  %-20s %15s %15s %9s  %-20s %s\n", figure_name(f), cells.base, cells.new_,
                  cells.change, cells.ci, verdict_name(r->fig[f].v));
    }
}

void comparison_text(const comparison *c, const gate *g, int n_gates, strbuf *out) {
    header_line(c, out, 0);
    for (int k = 0; k < c->n_runs; k++)
        text_run(&c->runs[k], out);
    only_line(out, "base", c->only_base, c->n_only_base, 0);
    only_line(out, "new", c->only_new, c->n_only_new, 0);
    if (!n_gates)
        return;
    sb_puts(out, "\nfail-on\n");
    for (int i = 0; i < n_gates; i++) {
        sb_printf(out, "  %-24s %s", g[i].text, trips_any(c, &g[i]) ? "tripped: " : "");
        tripped_runs(c, &g[i], out, 0);
        sb_puts(out, "\n");
    }
    int tripped = 0;
    for (int i = 0; i < n_gates; i++)
        tripped += trips_any(c, &g[i]);
    if (tripped)
        sb_printf(out, "regressed beyond --fail-on: %d of %d gate%s tripped\n", tripped, n_gates,
                  n_gates == 1 ? "" : "s");
    else
        sb_puts(out, "no regression beyond --fail-on\n");
}

/* A run's name in a Markdown cell or heading: '|' would end the cell. */
static void md_name(strbuf *b, const char *s) {
    for (; *s; s++)
        if (*s == '|')
            sb_puts(b, "\\|");
        else
            sb_putn(b, s, 1);
}

static void md_run(const compared_run *r, strbuf *b) {
    char rb[64], rn[64];
    requests_text(&r->base, rb, sizeof rb);
    requests_text(&r->new_, rn, sizeof rn);
    sb_puts(b, "\n#### ");
    md_name(b, r->name);
    sb_printf(b, "\n\nBase %s, new %s.", rb, rn);
    if (r->note[0])
        sb_printf(b, " Note: %s.", r->note);
    sb_puts(b, "\n\n| figure | base | new | change | 95% CI | verdict |\n"
               "| --- | ---: | ---: | ---: | :---: | --- |\n");
    for (int f = 0; f < FIG_COUNT; f++) {
        if (!shown(r, f))
            continue;
        row_cells cells;
        cells_of(f, &r->fig[f], &cells);
        verdict v = r->fig[f].v;
        const char *em = v == VERDICT_WORSE || v == VERDICT_BETTER || v == VERDICT_GONE ? "**" : "";
        sb_printf(b, "| `%s` | %s | %s | %s | %s | %s%s%s |\n", figure_name(f), cells.base,
                  cells.new_, cells.change, cells.ci, em, verdict_name(v), em);
    }
}

void comparison_markdown(const comparison *c, const gate *g, int n_gates, strbuf *out) {
    sb_puts(out, "### servelab compare\n\n");
    header_line(c, out, 1);
    for (int k = 0; k < c->n_runs; k++)
        md_run(&c->runs[k], out);
    only_line(out, "base", c->only_base, c->n_only_base, 1);
    only_line(out, "new", c->only_new, c->n_only_new, 1);
    if (!n_gates)
        return;
    int trips = comparison_trips(c, g, n_gates);
    sb_printf(out, "\n#### --fail-on: %s\n\n| gate | result |\n| --- | --- |\n",
              trips ? "regressed" : "passed");
    for (int i = 0; i < n_gates; i++) {
        sb_printf(out, "| `%s` | %s", g[i].text, trips_any(c, &g[i]) ? "**tripped**: " : "");
        tripped_runs(c, &g[i], out, 1);
        sb_puts(out, " |\n");
    }
}

static json_t *num(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *figure_json(const figure_change *c) {
    return json_pack("{s:o,s:o,s:o,s:o,s:[o,o],s:[o,o],s:s}", "base", num(c->base), "new",
                     num(c->new_), "change", num(c->diff), "change_pct", num(100 * c->rel), "ci",
                     num(c->diff_lo), num(c->diff_hi), "ci_pct", num(100 * c->rel_lo),
                     num(100 * c->rel_hi), "verdict", verdict_name(c->v));
}

static json_t *run_json(const compared_run *r) {
    json_t *figs = json_object();
    for (int f = 0; f < FIG_COUNT; f++)
        if (shown(r, f))
            json_object_set_new(figs, figure_name(f), figure_json(&r->fig[f]));
    return json_pack("{s:s,s:I,s:I,s:o,s:o}", "name", r->name, "base_requests",
                     (json_int_t)r->base.requests, "new_requests", (json_int_t)r->new_.requests,
                     "note", r->note[0] ? json_string(r->note) : json_null(), "figures", figs);
}

static json_t *names_json(char **names, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

json_t *comparison_json(const comparison *c, const gate *g, int n_gates) {
    json_t *runs = json_array(), *gates = json_array();
    for (int k = 0; k < c->n_runs; k++)
        json_array_append_new(runs, run_json(&c->runs[k]));
    for (int i = 0; i < n_gates; i++) {
        json_t *by = json_array();
        for (int k = 0; k < c->n_runs; k++)
            if (gate_tripped(&g[i], &c->runs[k].fig[g[i].fig]))
                json_array_append_new(by, json_string(c->runs[k].name));
        json_array_append_new(gates, json_pack("{s:s,s:o}", "gate", g[i].text, "tripped_by", by));
    }
    return json_pack("{s:s,s:s,s:i,s:I,s:f,s:o,s:o,s:o,s:o,s:b}", "base", c->base_dir, "new",
                     c->new_dir, "resamples", c->resamples, "seed", (json_int_t)c->seed,
                     "confidence", 0.95, "runs", runs, "only_in_base",
                     names_json(c->only_base, c->n_only_base), "only_in_new",
                     names_json(c->only_new, c->n_only_new), "fail_on", gates, "regressed",
                     comparison_trips(c, g, n_gates) > 0);
}
