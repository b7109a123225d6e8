/* knee: the rule of knee.h, in one pass over the loads. */
#include "report/knee.h"

#include <math.h>
#include "common/util.h"

#include <stdlib.h>

/* The least-squares line through (x[i], y[i]) for the usable i in idx[0,m),
 * evaluated at at. */
static double trend_at(const double *x, const double *y, const int *idx, int m, double at) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < m; i++) {
        sx += x[idx[i]];
        sy += y[idx[i]];
        sxx += x[idx[i]] * x[idx[i]];
        sxy += x[idx[i]] * y[idx[i]];
    }
    double den = m * sxx - sx * sx;
    if (!(fabs(den) > 0))
        return sy / m; /* every lower load the same: a flat trend */
    double slope = (m * sxy - sx * sy) / den;
    return (sy - slope * sx) / m + slope * at;
}

int knee_find(const double *x, const double *y, const double *lo, const double *hi, int n,
              double *predicted) {
    int *idx = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    int m = 0, knee = -1;
    for (int k = 0; k < n && knee < 0; k++) {
        if (!isfinite(x[k]) || !isfinite(y[k]))
            continue;
        if (m >= 2) {
            double top = 0;
            for (int i = 0; i < m; i++)
                top = fmax(top, y[idx[i]]);
            double expect = fmax(trend_at(x, y, idx, m, x[k]), top);
            int prev = idx[m - 1];
            int clear = !lo || !hi || !isfinite(lo[k]) || !isfinite(hi[prev]) || lo[k] > hi[prev];
            if (y[k] > KNEE_FACTOR * expect && clear) {
                knee = k;
                if (predicted)
                    *predicted = expect;
            }
        }
        idx[m++] = k;
    }
    free(idx);
    return knee;
}
