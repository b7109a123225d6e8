/* binomial: Wilson's interval rather than the normal one (p +- z se):
 * near a goal of 0.99 the share sits against 1, where the normal
 * interval collapses to nothing for a probe without misses and pokes past
 * 1; Wilson's stays inside [0, 1] and keeps its coverage at small counts. */
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
