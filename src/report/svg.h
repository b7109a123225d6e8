/* svg: servelab's small plotting module. Line and scatter plots with
 * readable axes (1-2-5 ticks, optional log scales, units in the labels), a
 * legend, an optional right-hand axis, horizontal bars for timelines,
 * error bars, and labelled reference lines and bands (bounds, markers).
 * Output is self-contained SVG text: no fonts, scripts or links to fetch. */
#ifndef SERVELAB_SVG_H
#define SERVELAB_SVG_H

#include "common/strbuf.h"

#include <stddef.h>

typedef struct plot_series {
    const char *name;
    const double *x, *y;
    size_t n;
    int right_axis; /* plotted against the right-hand axis */
    int dashed;
    int markers; /* draw points */
    int step;    /* CDF-style steps */
    int color;   /* palette index; -1: by series order */
} plot_series;

typedef struct plot_bar {
    double x0, x1, y; /* a horizontal segment at height y */
    int color;
} plot_bar;

/* A reference line across the plot: horizontal at y = at on the left-hand
 * axis (a bound), or vertical at x = at (a marker), with an optional
 * shaded band from band_lo to band_hi (its interval) and a label. */
typedef struct plot_rule {
    int vertical;
    double at, band_lo, band_hi; /* the band's ends NAN: no band */
    const char *label;
    int color;
    int dashed;
} plot_rule;

typedef struct plot_spec {
    const char *title, *xlabel, *ylabel, *y2label;
    int logx, logy;
    int width, height;
    double ymin_zero; /* 1: y axis starts at 0 */
    const plot_bar *bars;
    size_t n_bars;
    double bar_height;             /* in y units */
    const char *const *bar_legend; /* names of bar colours 0..n, NULL-terminated */
    const plot_rule *rules;        /* drawn behind the series; their values widen the axes */
    size_t n_rules;
    /* Error bars: NULL, or one entry per series: NULL (no bars) or that
     * series' interval ends, err_lo[i][k] to err_hi[i][k] at its point k (a
     * non-finite end: no bar there). */
    const double *const *err_lo, *const *err_hi;
} plot_spec;

/* Append one <svg> element. */
void svg_plot(strbuf *out, const plot_spec *spec, const plot_series *s, int ns);
const char *svg_color(int i);

#endif
