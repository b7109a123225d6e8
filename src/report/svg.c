/* svg: axes, ticks, lines, bars and legends as plain SVG. Ranges come from
 * the finite data; ticks fall on 1-2-5 steps (decades on log axes). */
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

const char *svg_color(int i) {
    return palette[(i < 0 ? 0 : i) % 10];
}

typedef struct scale {
    double lo, hi; /* data range (log10 when log) */
    int log;
    double p0, p1; /* pixel range */
} scale;

static double to_px(const scale *s, double v) {
    double x = s->log ? log10(v) : v;
    return s->p0 + (x - s->lo) / (s->hi - s->lo) * (s->p1 - s->p0);
}

static int usable(double v, int log) {
    return isfinite(v) && (!log || v > 0);
}

static double nice_step(double span) {
    double raw = span / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void finish_range(scale *s, double lo, double hi, int zero) {
    if (!(lo <= hi)) { /* no data */
        lo = s->log ? 1 : 0;
        hi = s->log ? 10 : 1;
    }
    if (s->log) {
        lo = floor(log10(lo));
        hi = ceil(log10(hi));
        if (hi <= lo)
            hi = lo + 1;
    } else {
        if (zero && lo > 0)
            lo = 0;
        if (hi == lo) {
            hi = lo + (lo == 0 ? 1 : fabs(lo) * 0.1);
        }
        double st = nice_step(hi - lo);
        lo = floor(lo / st) * st;
        hi = ceil(hi / st) * st;
    }
    s->lo = lo;
    s->hi = hi;
}

static void fmt_tick(char *buf, size_t n, double v) {
    if (fabs(v) >= 1e6 || (fabs(v) < 1e-3 && v != 0))
        snprintf(buf, n, "%.0e", v);
    else
        snprintf(buf, n, "%g", fabs(v) < 1e-12 ? 0.0 : v);
}

/* Ticks along one axis; horizontal when vertical == 0. */
static void draw_ticks(strbuf *o, const scale *s, int vertical, double other0, double other1,
                       int right) {
    double vals[64];
    int n = 0;
    if (s->log) {
        for (double d = s->lo; d <= s->hi + 1e-9 && n < 64; d++)
            vals[n++] = pow(10, d);
    } else {
        double st = nice_step(s->hi - s->lo);
        for (double v = s->lo; v <= s->hi + st * 1e-6 && n < 64; v += st)
            vals[n++] = v;
    }
    for (int i = 0; i < n; i++) {
        double px = to_px(s, vals[i]);
        char lab[32];
        fmt_tick(lab, sizeof lab, vals[i]);
        if (!vertical) {
            sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n",
                      px, other0, px, other1);
            sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", px,
                      other0 + 16, lab);
        } else if (!right) {
            sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n",
                      other0, px, other1, px);
            sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", other0 - 6,
                      px + 4, lab);
        } else {
            sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">%s</text>\n",
                      other1 + 6, px + 4, lab);
        }
    }
}

/* A vertical bar with short caps from ylo to yhi at each point that has
 * both ends. */
static void draw_error_bars(strbuf *o, const plot_series *s, const double *lo, const double *hi,
                            const scale *xs, const scale *ys, const char *col) {
    for (size_t i = 0; i < s->n; i++) {
        if (!usable(s->x[i], xs->log) || !usable(lo[i], ys->log) || !usable(hi[i], ys->log))
            continue;
        double px = to_px(xs, s->x[i]), y0 = to_px(ys, lo[i]), y1 = to_px(ys, hi[i]);
        sb_printf(o,
                  "<path d=\"M%.1f,%.1fV%.1fM%.1f,%.1fh8M%.1f,%.1fh8\" stroke=\"%s\" "
                  "stroke-width=\"1.2\" fill=\"none\"/>\n",
                  px, y0, y1, px - 4, y0, px - 4, y1, col);
    }
}

/* Bands first, then the lines over them, each label beside its line: a
 * bound's at the right end above it, a marker's at the foot (away from
 * the bounds' labels, which sit high on a latency plot). */
static void draw_rules(strbuf *o, const plot_spec *sp, const scale *xs, const scale *ys, double L,
                       double R, double T, double B) {
    for (size_t k = 0; k < sp->n_rules; k++) {
        const plot_rule *u = &sp->rules[k];
        const scale *sc = u->vertical ? xs : ys;
        if (!usable(u->band_lo, sc->log) || !usable(u->band_hi, sc->log))
            continue;
        double a = to_px(sc, u->band_lo), b = to_px(sc, u->band_hi);
        if (u->vertical)
            sb_printf(o,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                      "fill-opacity=\"0.15\"/>\n",
                      fmin(a, b), T, fmax(fabs(b - a), 1), B - T, svg_color(u->color));
        else
            sb_printf(o,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                      "fill-opacity=\"0.15\"/>\n",
                      L, fmin(a, b), R - L, fmax(fabs(b - a), 1), svg_color(u->color));
    }
    for (size_t k = 0; k < sp->n_rules; k++) {
        const plot_rule *u = &sp->rules[k];
        const scale *sc = u->vertical ? xs : ys;
        if (!usable(u->at, sc->log))
            continue;
        double p = to_px(sc, u->at);
        const char *col = svg_color(u->color), *dash = u->dashed ? " stroke-dasharray=\"5 3\"" : "";
        if (u->vertical)
            sb_printf(o,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                      "stroke-width=\"1.5\"%s/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" ",
                      p, T, p, B, col, dash, p > R - 160 ? p - 4 : p + 4, B - 6,
                      p > R - 160 ? "end" : "start");
        else
            sb_printf(o,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                      "stroke-width=\"1.5\"%s/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" ",
                      L, p, R, p, col, dash, R - 4, p - 4);
        sb_printf(o,
                  "font-size=\"11\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"3\" "
                  "paint-order=\"stroke\">",
                  col);
        sb_escape(o, u->label ? u->label : "");
        sb_puts(o, "</text>\n");
    }
}

static void draw_series(strbuf *o, const plot_spec *sp, const plot_series *s, const scale *xs,
                        const scale *ys, int idx) {
    const char *col = svg_color(s->color >= 0 ? s->color : idx);
    int open = 0;
    double prev_y = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!usable(s->x[i], xs->log) || !usable(s->y[i], ys->log)) {
            if (open)
                sb_puts(o, "\"/>\n");
            open = 0;
            continue;
        }
        double px = to_px(xs, s->x[i]), py = to_px(ys, s->y[i]);
        if (!open) {
            sb_printf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"",
                      col, s->dashed ? " stroke-dasharray=\"6 4\"" : "");
            open = 1;
        } else if (s->step) {
            sb_printf(o, "%.1f,%.1f ", px, prev_y);
        }
        sb_printf(o, "%.1f,%.1f ", px, py);
        prev_y = py;
    }
    if (open)
        sb_puts(o, "\"/>\n");
    if (sp->err_lo && sp->err_hi && sp->err_lo[idx] && sp->err_hi[idx])
        draw_error_bars(o, s, sp->err_lo[idx], sp->err_hi[idx], xs, ys, col);
    if (s->markers)
        for (size_t i = 0; i < s->n; i++)
            if (usable(s->x[i], xs->log) && usable(s->y[i], ys->log))
                sb_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                          to_px(xs, s->x[i]), to_px(ys, s->y[i]), col);
}

/* The ranges of the three axes from the finite data (the bars count on the
 * left-hand axis), rounded out to whole ticks. */
static void fit_scales(const plot_spec *sp, const plot_series *s, int ns, scale *xs, scale *ys,
                       scale *y2) {
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY, y2lo = INFINITY,
           y2hi = -INFINITY;
    for (int i = 0; i < ns; i++)
        for (size_t k = 0; k < s[i].n; k++) {
            if (!usable(s[i].x[k], sp->logx) || !usable(s[i].y[k], sp->logy))
                continue;
            xlo = fmin(xlo, s[i].x[k]);
            xhi = fmax(xhi, s[i].x[k]);
            double lo = s[i].y[k], hi = s[i].y[k];
            const double *el = sp->err_lo ? sp->err_lo[i] : NULL,
                         *eh = sp->err_hi ? sp->err_hi[i] : NULL;
            if (el && eh && usable(el[k], sp->logy) && usable(eh[k], sp->logy)) {
                lo = fmin(lo, el[k]);
                hi = fmax(hi, eh[k]);
            }
            if (s[i].right_axis) {
                y2lo = fmin(y2lo, lo);
                y2hi = fmax(y2hi, hi);
            } else {
                ylo = fmin(ylo, lo);
                yhi = fmax(yhi, hi);
            }
        }
    for (size_t k = 0; k < sp->n_rules; k++) {
        const plot_rule *u = &sp->rules[k];
        const double v[3] = {u->at, u->band_lo, u->band_hi};
        for (int j = 0; j < 3; j++) {
            if (!usable(v[j], u->vertical ? sp->logx : sp->logy))
                continue;
            if (u->vertical) {
                xlo = fmin(xlo, v[j]);
                xhi = fmax(xhi, v[j]);
            } else {
                ylo = fmin(ylo, v[j]);
                yhi = fmax(yhi, v[j]);
            }
        }
    }
    for (size_t k = 0; k < sp->n_bars; k++) {
        const plot_bar *b = &sp->bars[k];
        if (!isfinite(b->x0) || !isfinite(b->x1) || !isfinite(b->y))
            continue;
        xlo = fmin(xlo, b->x0);
        xhi = fmax(xhi, b->x1);
        ylo = fmin(ylo, b->y);
        yhi = fmax(yhi, b->y + sp->bar_height);
    }
    finish_range(xs, xlo, xhi, 0);
    finish_range(ys, ylo, yhi, sp->ymin_zero > 0);
    finish_range(y2, y2lo, y2hi, 1);
}

/* The legend, three entries to a row under the x label: the bar colours
 * first, then the series, each drawn as its line is. */
static void draw_legend(strbuf *o, const plot_spec *sp, const plot_series *s, int ns, double L,
                        double R, double B) {
    int item = 0;
    double ly = B + 52;
    if (sp->bar_legend)
        for (int i = 0; sp->bar_legend[i]; i++, item++) {
            double lx = L + (item % 3) * ((R - L) / 3);
            double yy = ly + (item / 3) * 18;
            sb_printf(o,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\">",
                      lx, yy - 9, svg_color(i), lx + 20, yy);
            sb_escape(o, sp->bar_legend[i]);
            sb_puts(o, "</text>\n");
        }
    for (int i = 0; i < ns; i++, item++) {
        double lx = L + (item % 3) * ((R - L) / 3);
        double yy = ly + (item / 3) * 18;
        sb_printf(o,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                  "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\">",
                  lx, yy - 4, lx + 16, yy - 4, svg_color(s[i].color >= 0 ? s[i].color : i),
                  s[i].dashed ? " stroke-dasharray=\"6 4\"" : "", lx + 20, yy);
        sb_escape(o, s[i].name ? s[i].name : "");
        if (s[i].right_axis)
            sb_puts(o, " (right axis)");
        sb_puts(o, "</text>\n");
    }
}

void svg_plot(strbuf *o, const plot_spec *sp, const plot_series *s, int ns) {
    int W = sp->width ? sp->width : 720, H = sp->height ? sp->height : 400;
    int has_y2 = 0;
    for (int i = 0; i < ns; i++)
        has_y2 |= s[i].right_axis;
    int legend_items = ns;
    if (sp->bar_legend)
        for (int i = 0; sp->bar_legend[i]; i++)
            legend_items++;
    int legend_rows = (legend_items + 2) / 3;
    double L = 72, R = W - (has_y2 ? 72 : 24), T = 36, B = H - 48 - 18 * legend_rows;

    scale xs = {.log = sp->logx, .p0 = L, .p1 = R};
    scale ys = {.log = sp->logy, .p0 = B, .p1 = T};
    scale y2 = {.log = 0, .p0 = B, .p1 = T};
    fit_scales(sp, s, ns, &xs, &ys, &y2);

    sb_printf(o,
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
              "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
              "<style>.grid{stroke:#e4e4e4;stroke-width:1}.axis{stroke:#333;stroke-width:1}"
              "text{fill:#222}</style>\n"
              "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
              W, H, W, H, W, H);
    sb_printf(o,
              "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" "
              "font-weight=\"bold\">",
              W / 2);
    sb_escape(o, sp->title ? sp->title : "");
    sb_puts(o, "</text>\n");
    draw_ticks(o, &xs, 0, B, T, 0);
    draw_ticks(o, &ys, 1, L, R, 0);
    if (has_y2)
        draw_ticks(o, &y2, 1, L, R, 1);
    sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", L, B,
              R, B);
    sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", L, T,
              L, B);
    if (has_y2)
        sb_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", R,
                  T, R, B);
    sb_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (L + R) / 2, B + 34);
    sb_escape(o, sp->xlabel ? sp->xlabel : "");
    sb_puts(o, "</text>\n");
    sb_printf(o, "<text transform=\"translate(16,%.1f) rotate(-90)\" text-anchor=\"middle\">",
              (T + B) / 2);
    sb_escape(o, sp->ylabel ? sp->ylabel : "");
    sb_puts(o, "</text>\n");
    if (has_y2) {
        sb_printf(o, "<text transform=\"translate(%d,%.1f) rotate(90)\" text-anchor=\"middle\">",
                  W - 12, (T + B) / 2);
        sb_escape(o, sp->y2label ? sp->y2label : "");
        sb_puts(o, "</text>\n");
    }
    for (size_t k = 0; k < sp->n_bars; k++) {
        const plot_bar *b = &sp->bars[k];
        if (!isfinite(b->x0) || !isfinite(b->x1) || !isfinite(b->y))
            continue;
        double x0 = to_px(&xs, b->x0), x1 = to_px(&xs, b->x1);
        double y0 = to_px(&ys, b->y + sp->bar_height), y1 = to_px(&ys, b->y);
        sb_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                  x0, y0, fmax(x1 - x0, 0.5), fmax(y1 - y0, 0.5), svg_color(b->color));
    }
    draw_rules(o, sp, &xs, &ys, L, R, T, B);
    for (int i = 0; i < ns; i++)
        draw_series(o, sp, &s[i], &xs, s[i].right_axis ? &y2 : &ys, i);
    draw_legend(o, sp, s, ns, L, R, B);
    sb_puts(o, "</svg>\n");
}
