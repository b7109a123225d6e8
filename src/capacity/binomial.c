/* binomial: Wilson's interval rather than the normal one (p +- z se):
 * near a goal of 0.99 the share sits against 1, where the normal
 * interval collapses to nothing for a probe without misses and pokes past
 * 1; Wilson's stays inside [0, 1] and keeps its coverage at small counts.
 * The design effect is the ratio estimator's between-run variance
 * (k/(k-1) sum (m_i - p n_i)^2 / N^2) over p(1-p)/N. */
#include "capacity/binomial.h"

#include <math.h>

void wilson_interval(double k, double n, double z, double *lo, double *hi) {
    double p = k / n, z2 = z * z;
    double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    double half = z / (1 + z2 / n) * sqrt(p * (1 - p) / n + z2 / (4 * n * n));
    *lo = centre - half < 0 ? 0 : centre - half;
    *hi = centre + half > 1 ? 1 : centre + half;
    if (k >= n) /* exact: the rounding above may leave 1 - 1e-16 */
        *hi = 1;
    if (k <= 0)
        *lo = 0;
}

long requests_for_goal(double goal) {
    double z2 = BINOMIAL_Z95 * BINOMIAL_Z95;
    return (long)ceil(z2 * goal / (1 - goal) - 1e-9);
}

double design_effect(const double *met, const double *n, int k) {
    double m_all = 0, n_all = 0;
    for (int i = 0; i < k; i++) {
        m_all += met[i];
        n_all += n[i];
    }
    if (k < 2 || n_all <= 0)
        return 1;
    double p = m_all / n_all;
    if (p <= 0 || p >= 1)
        return 1;
    double ss = 0;
    for (int i = 0; i < k; i++)
        ss += (met[i] - p * n[i]) * (met[i] - p * n[i]);
    double between = (double)k / (k - 1) * ss / (n_all * n_all);
    double binomial = p * (1 - p) / n_all;
    return between > binomial ? between / binomial : 1;
}
