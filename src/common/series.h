/* series: named time series of sampled values (the server's /metrics and
 * the GPUs), as the client samples them during a run and as the report reads
 * them back from server_metrics.csv and gpu.csv. Shared by both, so it sits
 * at the bottom. */
#ifndef SERVELAB_SERIES_H
#define SERVELAB_SERIES_H

#include <stddef.h>

/* One named time series (t in ms from the run's start). */
typedef struct series {
    char name[64];
    double *t_ms, *v;
    size_t n, cap;
} series;

typedef struct series_set {
    series *s;
    int n;
} series_set;

void series_add(series_set *set, const char *name, double t_ms, double v);
const series *series_find(const series_set *set, const char *name);
void series_set_free(series_set *set);
/* The metric names servelab keeps from /metrics (others are only written). */
int server_metric_wanted(const char *name);

#endif
