/* sampler: /metrics, NVML and /proc samples into CSV files and series. */
#include "client/sampler.h"
#include "common/util.h"
#include "monitor/prom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_MAX_BYTES (8 << 20)

static size_t on_body(char *p, size_t sz, size_t nm, void *ud) {
    sampler *s = ud;
    size_t n = sz * nm;
    if (s->len + n > METRICS_MAX_BYTES)
        return 0; /* absurd page: give up on this sample */
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->body = xrealloc(s->body, s->cap);
    }
    memcpy(s->body + s->len, p, n);
    s->len += n;
    return n;
}

static CURL *new_fetch(sampler *s) {
    CURL *e = curl_easy_init();
    s->len = 0;
    curl_easy_setopt(e, CURLOPT_URL, s->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 5000L);
    return e;
}

CURL *sampler_metrics_start(sampler *s) {
    if (!s->url || s->disabled || s->easy)
        return NULL;
    s->easy = new_fetch(s);
    return s->easy;
}

typedef struct row_ctx {
    sampler *s;
    double t_ms;
    int every;   /* write every sample, changed or not (the first and last pages) */
    int buckets; /* write the histograms' buckets that changed (else none) */
    int written; /* rows written for this page */
    char *first; /* the page's first row, written when no other is */
} row_ctx;

static int is_bucket(const prom_sample *ps) {
    size_t n = strlen(ps->name);
    return !strcmp(ps->type, "histogram") && n > 7 && !strcmp(ps->name + n - 7, "_bucket");
}

static void on_sample(void *ud, const prom_sample *ps) {
    row_ctx *rc = ud;
    sampler *s = rc->s;
    char labels[4096], series[8400], row[8500];
    prom_labels_format(ps, labels, sizeof labels);
    size_t q = (size_t)snprintf(series, sizeof series, "%s,", ps->name);
    if (ps->n_labels) {
        series[q++] = '"';
        for (const char *p = labels; *p && q < sizeof series - 3; p++) {
            if (*p == '"')
                series[q++] = '"';
            series[q++] = *p;
        }
        series[q++] = '"';
    }
    series[q] = 0;
    snprintf(row, sizeof row, "%.3f,%s,%.17g\n", rc->t_ms, series, ps->value);
    if (!rc->buckets && is_bucket(ps))
        ; /* not this page: the bucket keeps its last row */
    else if (metric_memo_changed(&s->written, series, q, ps->value) || rc->every) {
        fputs(row, s->metrics_csv);
        rc->written++;
    } else if (!rc->first)
        rc->first = xstrdup(row);
    if (server_metric_wanted(ps->name))
        series_add(s->metrics, ps->name, rc->t_ms, ps->value);
}

static void take_page(sampler *s, long status, CURLcode rc, double t_ms, int last) {
    if (rc != CURLE_OK || status != 200) {
        /* no /metrics here (or not now): the first failure turns sampling
         * off, later ones just lose that sample */
        if (*s->metrics_samples == 0)
            s->disabled = 1;
        return;
    }
    if (!s->metrics_csv) {
        char path[4096];
        snprintf(path, sizeof path, "%s/server_metrics.csv", s->dir);
        s->metrics_csv = fopen(path, "w");
        if (!s->metrics_csv) {
            s->disabled = 1;
            return;
        }
        fputs("t_ms,name,labels,value\n", s->metrics_csv);
    }
    int every = last || *s->metrics_samples == 0;
    double every_s = s->buckets_every_s > 0 ? s->buckets_every_s : SAMPLER_BUCKETS_EVERY_S;
    int buckets = every || t_ms - s->buckets_t_ms >= every_s * 1000;
    if (buckets)
        s->buckets_t_ms = t_ms;
    row_ctx ctx = {s, t_ms, every, buckets, 0, NULL};
    int bad = 0;
    prom_parse(s->body ? s->body : "", s->len, on_sample, &ctx, &bad, NULL);
    if (!ctx.written && ctx.first) /* nothing changed: the page's time is still kept */
        fputs(ctx.first, s->metrics_csv);
    free(ctx.first);
    fflush(s->metrics_csv);
    (*s->metrics_samples)++;
}

void sampler_metrics_done(sampler *s, CURLcode rc, double t_ms) {
    long status = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
    take_page(s, status, rc, t_ms, 0);
    curl_easy_cleanup(s->easy);
    s->easy = NULL;
}

void sampler_metrics_now(sampler *s, double t_ms) {
    if (!s->url || s->disabled || s->easy)
        return;
    CURL *e = new_fetch(s);
    CURLcode rc = curl_easy_perform(e);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    take_page(s, status, rc, t_ms, 1);
    curl_easy_cleanup(e);
}

void sampler_gpu_now(sampler *s, double t_ms) {
    if (!s->gpu)
        return;
    int n = gpu_count(s->gpu);
    gpu_sample *g = xcalloc((size_t)n, sizeof *g);
    if (gpu_sample_all(s->gpu, g) == 0) {
        if (!s->gpu_csv) {
            char path[4096];
            snprintf(path, sizeof path, "%s/gpu.csv", s->dir);
            s->gpu_csv = fopen(path, "w");
            if (s->gpu_csv)
                fputs("t_ms,gpu,util_pct,mem_used_mib,power_w,sm_clock_mhz,temp_c\n", s->gpu_csv);
        }
        for (int i = 0; i < n && s->gpu_csv; i++) {
            fprintf(s->gpu_csv, "%.3f,%d,%.1f,%.1f,%.3f,%.0f,%.0f\n", t_ms, i, g[i].util_pct,
                    g[i].mem_used_mib, g[i].power_w, g[i].sm_clock_mhz, g[i].temp_c);
            char name[64];
            snprintf(name, sizeof name, "gpu%d util_pct", i);
            series_add(s->gpu_series, name, t_ms, g[i].util_pct);
            snprintf(name, sizeof name, "gpu%d power_w", i);
            if (isfinite(g[i].power_w))
                series_add(s->gpu_series, name, t_ms, g[i].power_w);
        }
        if (s->gpu_csv)
            fflush(s->gpu_csv);
        (*s->gpu_samples)++;
    }
    free(g);
}

/* CPU% is over the time since the previous row, so the first row has
 * none (an empty cell). */
void sampler_proc_now(sampler *s, double t_ms) {
    procstat_sample x;
    if (s->server_pid <= 0 || procstat_tree(s->server_pid, &x))
        return;
    if (!s->proc_csv) {
        char path[4096];
        snprintf(path, sizeof path, "%s/server_proc.csv", s->dir);
        s->proc_csv = fopen(path, "w");
        if (!s->proc_csv) {
            s->server_pid = 0;
            return;
        }
        fputs("t_ms,rss_bytes,cpu_s,cpu_pct,threads,processes\n", s->proc_csv);
    }
    char pct[32] = "";
    if (s->proc->samples > 0 && t_ms > s->proc_last_t_ms)
        snprintf(pct, sizeof pct, "%.1f",
                 100 * (x.cpu_s - s->proc_last_cpu_s) / ((t_ms - s->proc_last_t_ms) / 1000));
    fprintf(s->proc_csv, "%.3f,%.0f,%.2f,%s,%d,%d\n", t_ms, x.rss_bytes, x.cpu_s, pct, x.threads,
            x.processes);
    fflush(s->proc_csv);
    procstat_summary_add(s->proc, t_ms, &x);
    s->proc_last_t_ms = t_ms;
    s->proc_last_cpu_s = x.cpu_s;
}

void sampler_close(sampler *s) {
    if (s->easy)
        curl_easy_cleanup(s->easy);
    s->easy = NULL;
    if (s->metrics_csv)
        fclose(s->metrics_csv);
    if (s->gpu_csv)
        fclose(s->gpu_csv);
    if (s->proc_csv)
        fclose(s->proc_csv);
    s->metrics_csv = s->gpu_csv = s->proc_csv = NULL;
    free(s->body);
    s->body = NULL;
    metric_memo_free(&s->written);
}
