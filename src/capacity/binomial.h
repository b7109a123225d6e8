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
/* The design effect of k runs' shares: how many times the variance of
 * the pooled share, estimated from the spread of the runs' own shares
 * (met[i] of n[i]), exceeds the binomial variance of the pooled count,
 * at least 1. Requests within one run are not independent (a burst makes
 * several miss together), so a pooled count of N requests holds only
 * N / deff requests' worth of evidence. 1 when k < 2 or the pooled share
 * is 0 or 1 (no spread to measure). */
double design_effect(const double *met, const double *n, int k);

#endif
