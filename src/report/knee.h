/* knee: where a latency percentile stops following the trend of the lower
 * loads. A knee is named only where one is found, by this rule: at the
 * k-th load (k >= 2: two lower loads make a trend), the trend is the least-
 * squares line through the lower loads' values, and what it predicts is
 * taken no lower than the largest lower value (a falling trend predicts no
 * drop). Load k is the knee when its value is more than KNEE_FACTOR times
 * that prediction and, where the intervals are known, its interval's low
 * end lies above the interval's high end of the load before (a rise the
 * noise could not make). The first such load is the knee. */
#ifndef SERVELAB_REPORT_KNEE_H
#define SERVELAB_REPORT_KNEE_H

#define KNEE_FACTOR 2.0

/* x ascending; y the percentile at each; lo and hi its 95% interval (NULL,
 * or NAN entries: unknown). Points with a non-finite x or y are skipped.
 * The index of the knee, or -1; *predicted (when not NULL) the trend's
 * prediction there. */
int knee_find(const double *x, const double *y, const double *lo, const double *hi, int n,
              double *predicted);

#endif
