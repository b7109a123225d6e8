/* load_line: the runs that differ only by offered load, found by their
 * variant string (pool.c writes it from the settings besides the load). */
#include "report/load_line.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

/* The first run of campaign c's largest group of one variant; -1 when
 * the campaign has no run. */
static int best_of(const report *r, int c, int *best_n) {
    int best = -1;
    *best_n = 0;
    for (int k = 0; k < r->n_runs; k++) {
        if (r->runs[k].campaign_index != c)
            continue;
        int n = 0;
        for (int j = 0; j < r->n_runs; j++)
            n += r->runs[j].campaign_index == c && !strcmp(r->runs[j].variant, r->runs[k].variant);
        if (n > *best_n) {
            *best_n = n;
            best = k;
        }
    }
    return best;
}

int load_line_runs(const report *r, int campaign, int *in, char *left_out, size_t cap) {
    int total = 0, n_campaigns = r->n_campaigns > 0 ? r->n_campaigns : 1;
    for (int k = 0; k < r->n_runs; k++)
        in[k] = 0;
    for (int c = 0; c < n_campaigns; c++) {
        if (campaign >= 0 && c != campaign)
            continue;
        int n, best = best_of(r, c, &n);
        for (int k = 0; best >= 0 && k < r->n_runs; k++)
            in[k] |= r->runs[k].campaign_index == c &&
                     !strcmp(r->runs[k].variant, r->runs[best].variant);
        total += best >= 0 ? n : 0;
    }
    left_out[0] = 0;
    for (int k = 0; k < r->n_runs; k++)
        if (!in[k] && (campaign < 0 || r->runs[k].campaign_index == campaign))
            snprintf(left_out + strlen(left_out), cap - strlen(left_out), "%s%s",
                     left_out[0] ? ", " : "", r->runs[k].name);
    return total;
}
