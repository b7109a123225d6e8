/* server_proc_section: server_proc.csv into a report (see the header). The
 * file is read again for the rows and for the figure: it is small (a row
 * per metrics interval), and the report's own structures stay as they are. */
#include "report/server_proc_section.h"
#include "common/csv.h"
#include "common/util.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* One repetition's rows: t (s), RSS (MiB), CPU (%), with the peaks and the
 * mean CPU% (its CPU seconds over its span). */
typedef struct proc_rows {
    double *t_s, *rss_mib, *cpu_pct;
    size_t n;
    double peak_rss_mib, mean_cpu_pct;
    int peak_threads;
} proc_rows;

static void take_row(proc_rows *p, const double *v, double *first_cpu_s, double *first_t_s) {
    p->t_s = xrealloc(p->t_s, (p->n + 1) * sizeof *p->t_s);
    p->rss_mib = xrealloc(p->rss_mib, (p->n + 1) * sizeof *p->rss_mib);
    p->cpu_pct = xrealloc(p->cpu_pct, (p->n + 1) * sizeof *p->cpu_pct);
    double t = v[0] / 1000, rss = v[1] / 1048576;
    if (p->n == 0) {
        *first_t_s = t;
        *first_cpu_s = v[2];
    }
    p->t_s[p->n] = t;
    p->rss_mib[p->n] = rss;
    p->cpu_pct[p->n] = v[3];
    p->n++;
    if (rss > p->peak_rss_mib)
        p->peak_rss_mib = rss;
    if ((int)v[4] > p->peak_threads)
        p->peak_threads = (int)v[4];
    p->mean_cpu_pct = t > *first_t_s ? 100 * (v[2] - *first_cpu_s) / (t - *first_t_s) : NAN;
}

/* t_ms,rss_bytes,cpu_s,cpu_pct,threads,processes; 0 rows when none. */
static void read_rows(const char *dir, proc_rows *p) {
    char path[4200];
    snprintf(path, sizeof path, "%s/server_proc.csv", dir);
    *p = (proc_rows){.mean_cpu_pct = NAN};
    csv_file c;
    if (csv_open(&c, path))
        return;
    csv_row row;
    double first_cpu_s = 0, first_t_s = 0;
    while (csv_next(&c, &row)) {
        double v[5];
        int bad = c.line == 1 || row.error || row.n < 6;
        for (int i = 0; i < 5 && !bad; i++)
            bad = csv_number(&row, i, &v[i]) || (i != 3 && isnan(v[i]));
        if (!bad)
            take_row(p, v, &first_cpu_s, &first_t_s);
    }
    csv_close(&c);
}

static void free_rows(proc_rows *p) {
    free(p->t_s);
    free(p->rss_mib);
    free(p->cpu_pct);
}

static void add_row(table *t, const char *label, const char *value) {
    const char *cells[2] = {label, value};
    table_add_row(t, cells);
}

void server_proc_rows(const report_run *rr, table *t) {
    double peak = 0, cpu_sum = 0;
    int threads = 0, reps = 0, cpu_n = 0;
    for (int k = 0; k < rr->n_reps; k++) {
        proc_rows p;
        read_rows(rr->rep_dirs[k], &p);
        if (p.n) {
            reps++;
            peak = p.peak_rss_mib > peak ? p.peak_rss_mib : peak;
            threads = p.peak_threads > threads ? p.peak_threads : threads;
            if (!isnan(p.mean_cpu_pct)) {
                cpu_sum += p.mean_cpu_pct;
                cpu_n++;
            }
        }
        free_rows(&p);
    }
    if (!reps)
        return;
    char b[128], c[32];
    snprintf(b, sizeof b, "%s MiB", format_number(c, peak, 1));
    add_row(t, "server process: peak RSS (its tree, the largest repetition's)", b);
    snprintf(b, sizeof b, "%s%%", cpu_n ? format_number(c, cpu_sum / cpu_n, 1) : "");
    add_row(t, "server process: mean CPU (100% is one core; mean of the repetitions)", b);
    snprintf(b, sizeof b, "%d", threads);
    add_row(t, "server process: peak threads", b);
}

int server_proc_figure(const report_run *rr, strbuf *svg, char *cap, size_t caplen) {
    proc_rows p;
    read_rows(rr->rep_dirs[0], &p);
    if (p.n < 2) {
        free_rows(&p);
        return 0;
    }
    char title[320];
    snprintf(title, sizeof title, "Server process during %.200s%s", rr->name,
             rr->n_reps > 1 ? " (first repetition)" : "");
    plot_spec sp = {.title = title,
                    .xlabel = "time since the run started (s)",
                    .ylabel = "RSS (MiB)",
                    .y2label = "CPU (% of one core)",
                    .ymin_zero = 1};
    plot_series s[2] = {
        {.name = "RSS (MiB)", .x = p.t_s, .y = p.rss_mib, .n = p.n, .color = 0},
        /* the first row has no CPU% (nothing before it): the line starts at the second */
        {.name = "CPU %",
         .x = p.t_s + 1,
         .y = p.cpu_pct + 1,
         .n = p.n - 1,
         .right_axis = 1,
         .color = 1}};
    svg_plot(svg, &sp, s, 2);
    snprintf(cap, caplen,
             "The server's process and its descendants, from server_proc.csv: resident memory "
             "summed over the tree (left) and CPU over each sample interval (right, 100%% is one "
             "core), %zu samples.",
             p.n);
    free_rows(&p);
    return 1;
}
