/* sampler: what the server and the GPUs were doing while a run went on.
 * /metrics is fetched on the run's own event loop and curl multi handle
 * (never blocking a request) and written row by row to server_metrics.csv
 * (t_ms,name,labels,value, labels in Prometheus form and CSV-quoted); the
 * GPUs are read through NVML into gpu.csv; the server's process tree
 * (given its pid) through /proc into server_proc.csv. A server without
 * /metrics, a machine without a GPU, or no pid, simply gives no file.
 *
 * server_metrics.csv keeps what changed: the first page (a blocking fetch
 * just before t=0, written at t=0) and the last one (the blocking fetch at
 * the run's end) are written whole; a page between
 * them writes a series (a name with its labels) only when its value
 * differs from the last one written for that series, and when none does,
 * its first sample anyway, so that every page's time is in the file. A
 * series missing at a page's time had its last written value then (a step
 * function): report/load.c reads it back so, and gets every sample of the
 * series it keeps. Histograms' buckets (`_bucket` rows; their `_sum` and
 * `_count` are ordinary series) move with every request under load, so
 * they are written on one page in SAMPLER_BUCKETS_EVERY_S seconds (or
 * buckets_every_s), the
 * first and last included: read as steps they are the histogram as of
 * their last page, and exact at the run's ends (deltas over the run).
 * The series kept in memory (`metrics`) get every sample of every page. */
#ifndef SERVELAB_SAMPLER_H
#define SERVELAB_SAMPLER_H

#include "client/metric_memo.h"
#include "common/series.h"
#include "monitor/gpu.h"
#include "monitor/procstat.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>

#define SAMPLER_BUCKETS_EVERY_S 10.0

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
    metric_memo written;    /* each series' last value written */
    double buckets_t_ms;    /* the last page whose buckets were written */
    double buckets_every_s; /* 0: SAMPLER_BUCKETS_EVERY_S */
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
/* One fetch done start to end, blocking: the run's last sample, written
 * whole. */
void sampler_metrics_now(sampler *s, double t_ms);
void sampler_gpu_now(sampler *s, double t_ms);
/* One reading of the server's process tree; a tree that is gone gives no
 * row (the server died: the sweep says how). */
void sampler_proc_now(sampler *s, double t_ms);
void sampler_close(sampler *s);

#endif
