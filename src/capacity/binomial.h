/* binomial: the statistics of a probe's share of requests that met the
 * SLO: its Wilson score interval, and how many requests a probe needs for
 * its verdict to mean something at a given goal (docs/capacity.md). */
#ifndef SERVELAB_BINOMIAL_H
#define SERVELAB_BINOMIAL_H

/* z of a two-sided 95% interval. */
#define BINOMIAL_Z95 1.959964

/* The Wilson score interval of k successes in n trials at z (n > 0). */
void wilson_interval(double k, double n, double z, double *lo, double *hi);
/* The fewest requests with which a probe where every request met the SLO
 * shows at 95% that the share is at least `goal`: the smallest n with
 * Wilson's lower end of n of n at or above the goal, n >= z^2 goal/(1-goal).
 * At that n the standard error of the miss fraction, at the goal, is
 * (1-goal)/z: about half of what the goal allows to miss. */
long requests_for_goal(double goal);

#endif
