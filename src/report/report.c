/* report: the report's lifecycle. Building is discovery (report/discover.h)
 * then pooling each run (report/pool.h), the runs ordered by offered load
 * and then by name; rendering (render.c), writing (write.c) and checking
 * (check.c) work on what this builds. */
#include "report/report.h"
#include "report/discover.h"
#include "report/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_runs(const void *a, const void *b) {
    const report_run *x = a, *y = b;
    double ox = x->params.offered_rps, oy = y->params.offered_rps;
    if (ox != oy && !(isnan(ox) && isnan(oy)))
        return isnan(ox) ? 1 : isnan(oy) ? -1 : (ox > oy) - (ox < oy);
    return strcmp(x->name, y->name);
}

int report_build(char *const *paths, int n_paths, const report_opts *o, report *r, char *err,
                 int errlen) {
    if (discover_runs(paths, n_paths, r, err, errlen))
        return -1;
    for (int k = 0; k < r->n_runs; k++)
        if (pool_run(&r->runs[k], o, err, errlen)) {
            report_free(r); /* what was built before the error */
            return -1;
        }
    qsort(r->runs, (size_t)r->n_runs, sizeof *r->runs, cmp_runs);
    answer_build(r, paths, n_paths);
    return 0;
}

void report_free(report *r) {
    for (int k = 0; k < r->n_runs; k++) {
        report_run *rr = &r->runs[k];
        for (int i = 0; i < rr->n_reps; i++) {
            free(rr->rep_dirs[i]);
            if (rr->files)
                run_files_free(&rr->files[i]);
        }
        for (int c = 0; c < rr->rows.n_classes; c++)
            free((char *)rr->rows.classes[c]);
        free(rr->rep_dirs);
        free(rr->files);
        free(rr->per_rep);
        free(rr->per_class);
        free(rr->per_turn);
        rows_free(&rr->rows);
    }
    free(r->runs);
    free(r->campaign_answers);
    memset(r, 0, sizeof *r);
}
