/* sampler: what the server and the GPUs were doing while a run went on.
 * /metrics is fetched on the run's own event loop and curl multi handle
 * (never blocking a request) and written row by row to server_metrics.csv
 * (t_ms,name,labels,value, labels in Prometheus form and CSV-quoted); the
 * GPUs are read through NVML into gpu.csv; the server's process tree
 * (given its pid) through /proc into server_proc.csv. A server without
 * /metrics, a machine without a GPU, or no pid, simply gives no file. */
#ifndef SERVELAB_SAMPLER_H
#define SERVELAB_SAMPLER_H

#include "common/series.h"
#include "monitor/gpu.h"
#include "monitor/procstat.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sampler {
    const char *dir;
    /* metrics */
    const char *url;
    struct curl_slist *headers;
    CURL *easy; /* the fetch in flight, NULL when none */
    char *body;
    size_t len, cap;
    int disabled;
    FILE *metrics_csv;
    series_set *metrics;
    int *metrics_samples;
    /* gpu */
    gpu_monitor *gpu;
    FILE *gpu_csv;
    series_set *gpu_series;
    int *gpu_samples;
    /* the server's process tree (0: none) */
    pid_t server_pid;
    FILE *proc_csv;
    procstat_summary *proc;
    double proc_last_t_ms, proc_last_cpu_s;
} sampler;

/* An easy handle for /metrics, to be added to the run's multi; NULL when
 * sampling is off or a fetch is still in flight. */
CURL *sampler_metrics_start(sampler *s);
/* The fetch ended (from the multi's message). */
void sampler_metrics_done(sampler *s, CURLcode rc, double t_ms);
/* One fetch done start to end, blocking (the final sample). */
void sampler_metrics_now(sampler *s, double t_ms);
void sampler_gpu_now(sampler *s, double t_ms);
/* One reading of the server's process tree; a tree that is gone gives no
 * row (the server died: the sweep says how). */
void sampler_proc_now(sampler *s, double t_ms);
void sampler_close(sampler *s);

#endif
