/* load_line: the runs that differ only by offered load, found by their
 * variant string (pool.c writes it from the settings besides the load). */
#include "report/load_line.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

int load_line_runs(const report *r, int *in, char *left_out, size_t cap) {
    int best = 0, best_n = 0;
    for (int k = 0; k < r->n_runs; k++) {
        int c = 0;
        for (int j = 0; j < r->n_runs; j++)
            c += !strcmp(r->runs[j].variant, r->runs[k].variant);
        if (c > best_n) {
            best_n = c;
            best = k;
        }
    }
    left_out[0] = 0;
    for (int k = 0; k < r->n_runs; k++) {
        in[k] = !strcmp(r->runs[k].variant, r->runs[best].variant);
        if (!in[k])
            snprintf(left_out + strlen(left_out), cap - strlen(left_out), "%s%s",
                     left_out[0] ? ", " : "", r->runs[k].name);
    }
    return best_n;
}
