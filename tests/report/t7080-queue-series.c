/* report_series: the queue in a run's server figure. The client's own
 * counts (in flight, no first token yet, waiting to be sent) come from the
 * rows at fine resolution and are exact bin means; they are drawn beside
 * the server's /metrics series always, and instead of them when the server
 * was sampled too few times in the run to show a queue (1-second samples of
 * a 3-second run read "0 waiting" beside "73.7% of TTFT queued"); and
 * `run --metrics-interval auto`, the default, samples a short run often
 * enough (about 20 times) for the server's own series to show a queue. */
#include "report/inflight.h"
#include "run/run.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static req_rec row(double sched, double sent, double first, double end) {
    req_rec r = req_rec_unknown();
    r.scheduled_ms = sched;
    r.sent_ms = sent;
    r.first_ms = first;
    r.last_ms = end;
    r.end_ms = end;
    r.part = 0;
    return r;
}

/* The mean count over the bins covering [a, b) ms. */
static double mean_over(const client_counts *c, const double *v, double a, double b) {
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < c->n; k++) {
        double lo = (double)k * c->step_s * 1000, hi = lo + c->step_s * 1000;
        if (lo >= a && hi <= b) {
            sum += v[k];
            n++;
        }
    }
    CHECK_MSG(n > 0, "no bin within [%g, %g) ms", a, b);
    return sum / n;
}

TEST(client_counts_are_exact_bin_means) {
    run_rows rows = {0};
    req_rec a = row(0, 0, 500, 1000), b = row(0, 200, 600, 900), other = row(0, 0, 10, 20);
    other.part = 1; /* another repetition: not counted */
    rows_add(&rows, &a);
    rows_add(&rows, &b);
    rows_add(&rows, &other);
    client_counts c;
    client_counts_of(&rows, 0, &c);
    CHECK_NEAR(c.step_s, 0.005, 1e-12); /* a 1 s run: bins of a 200th of it */
    CHECK_INT((long)c.n, 200);
    CHECK_NEAR(mean_over(&c, c.in_flight, 0, 200), 1, 1e-9);
    CHECK_NEAR(mean_over(&c, c.in_flight, 200, 900), 2, 1e-9);
    CHECK_NEAR(mean_over(&c, c.in_flight, 900, 1000), 1, 1e-9);
    CHECK_NEAR(mean_over(&c, c.no_first, 200, 500), 2, 1e-9);
    CHECK_NEAR(mean_over(&c, c.no_first, 500, 600), 1, 1e-9);
    CHECK_NEAR(mean_over(&c, c.no_first, 600, 1000), 0, 1e-9);
    CHECK_NEAR(mean_over(&c, c.waiting, 0, 200), 1, 1e-9);
    CHECK_NEAR(mean_over(&c, c.waiting, 200, 1000), 0, 1e-9);
    CHECK_NEAR(c.peak_waiting, 1, 1e-9);
    /* a bin a change falls inside holds the mean, not a sample: the area
     * under each count is the requests' total time in that state */
    double area = 0;
    for (size_t k = 0; k < c.n; k++)
        area += c.in_flight[k] * c.step_s * 1000;
    CHECK_NEAR(area, 1000 + 700, 1e-6);
    client_counts_free(&c);
    /* a long run: bins of at most 100 ms, and at most 4000 of them */
    rows.n = 0;
    req_rec l = row(0, 0, 100, 60e3), m = row(0, 0, 100, 3600e3);
    rows_add(&rows, &l);
    client_counts_of(&rows, 0, &c);
    CHECK_NEAR(c.step_s, 0.1, 1e-12);
    client_counts_free(&c);
    rows_add(&rows, &m);
    client_counts_of(&rows, 0, &c);
    CHECK_INT((long)c.n, 4000);
    client_counts_free(&c);
    rows_free(&rows);
}

#define HDR                                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"

/* A 3-second run of 30 requests, each 600 ms to its first token, and
 * `samples` /metrics samples spread over it that always read 0 waiting. */
static void make_run(const char *dir, int samples) {
    char p[1400];
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(p, sizeof p, "%s/requests.csv", dir);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(HDR, f);
    for (int k = 0; k < 30; k++) {
        double s = k * 100.0;
        fprintf(f,
                "req-%d,short,%.3f,%.3f,%.3f,%.3f,%.3f,10,4,600.000,20.000,660.000,length,200,,"
                "4,0.010\n",
                k, s, s, s + 600, s + 660, s + 660);
    }
    fclose(f);
    snprintf(p, sizeof p, "%s/server_metrics.csv", dir);
    f = fopen(p, "w");
    CHECK(f != NULL);
    fputs("t_ms,name,labels,value\n", f);
    for (int k = 0; k < samples; k++) {
        double t = k * 3500.0 / (samples - 1);
        fprintf(f, "%.3f,vllm:num_requests_running,,%d\n", t, k ? 6 : 0);
        fprintf(f, "%.3f,vllm:num_requests_waiting,,0\n", t);
    }
    fclose(f);
}

static char *server_figure(const char *root, const char *run) {
    char p[1400];
    snprintf(p, sizeof p, "%s/rep/figures/server-%s.svg", root, run);
    char *svg = read_file(p, NULL);
    CHECK_MSG(svg != NULL, "no %s", p);
    return svg;
}

TEST(report_server_figure_draws_the_clients_queue) {
    char *root = temp_dir(), d[1200], args[4096], p[1400], *out = NULL;
    snprintf(d, sizeof d, "%s/runs", root);
    CHECK(mkdir(d, 0755) == 0);
    snprintf(d, sizeof d, "%s/runs/sparse", root);
    make_run(d, 4); /* 1-second samples */
    snprintf(d, sizeof d, "%s/runs/dense", root);
    make_run(d, 40);
    snprintf(args, sizeof args, "report %s/runs --out %s/rep", root, root);
    CHECK_MSG(servelab_cmd(args, &out) == 0, "%s", out);
    free(out);
    char *sparse = server_figure(root, "sparse"), *dense = server_figure(root, "dense");
    /* too few samples: the server's "0 waiting" is not drawn, the client's
     * queue is, and says it is the client's */
    CHECK_MSG(!strstr(sparse, "server: requests waiting") &&
                  !strstr(sparse, "server: requests running"),
              "the server's 4 samples drawn as its queue");
    CHECK(strstr(sparse, "client: no first token yet") && strstr(sparse, "client: in flight"));
    /* enough samples: the server's series, and the client's beside them */
    CHECK(strstr(dense, "server: requests waiting") && strstr(dense, "server: requests running"));
    CHECK(strstr(dense, "client: no first token yet") && strstr(dense, "client: in flight"));
    snprintf(p, sizeof p, "%s/rep/summary.md", root);
    char *md = read_file(p, NULL);
    CHECK_MSG(strstr(md, "sampled 4 times in this 3.6 s run, too few to show its queue"), "%s", md);
    free(md);
    free(sparse);
    free(dense);
    free(root);
}

/* --metrics-interval auto: its first interval is the schedule's length / 20 within [0.1, 1] s;
 * an explicit value is kept whatever the schedule. */
TEST(metrics_interval_auto_follows_the_schedule) {
    run_opts o;
    run_opts_defaults(&o);
    CHECK_STR(o.metrics_interval, "auto");
    CHECK_NEAR(run_metrics_interval_s(&o, 0), 0.1, 1e-12); /* a burst */
    CHECK_NEAR(run_metrics_interval_s(&o, 1), 0.1, 1e-12);
    CHECK_NEAR(run_metrics_interval_s(&o, 3), 0.15, 1e-12);
    CHECK_NEAR(run_metrics_interval_s(&o, 600), 1, 1e-12);
    o.metrics_interval = "0.5";
    CHECK_NEAR(run_metrics_interval_s(&o, 3), 0.5, 1e-12);
    o.metrics_interval = "250ms";
    CHECK_NEAR(run_metrics_interval_s(&o, 600), 0.25, 1e-12);
}

/* What meta.json says of the sampling of a 30-request run at 10/s. */
static void sampled(int port, const char *dir, const char *extra, double *interval, int *n) {
    char cmd[2048], p[1400];
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --rate 10 --requests 30 --max-tokens 4 "
             "--seed 3 %s --out %s",
             port, extra, dir);
    char *out = NULL;
    CHECK_MSG(servelab_cmd(cmd, &out) == 0, "%s", out);
    free(out);
    snprintf(p, sizeof p, "%s/meta.json", dir);
    json_t *meta = json_load_file(p, 0, NULL);
    CHECK_MSG(meta != NULL, "no %s", p);
    json_t *s = json_object_get(meta, "sampling");
    *interval = json_number_value(json_object_get(s, "interval_s"));
    *n = (int)json_integer_value(json_object_get(s, "metrics_samples"));
    json_decref(meta);
}

/* A 3-second run is sampled about 20 times by default (it was 4 times, a
 * sample a second), and --metrics-interval 1 still samples once a second. */
TEST_ALONE(run_samples_a_short_run_often_enough) {
    char *root = temp_dir(), d[1200];
    sim_proc s = sim_start(NULL);
    double interval;
    int n;
    snprintf(d, sizeof d, "%s/auto", root);
    sampled(s.port, d, "", &interval, &n);
    CHECK_MSG(interval >= 0.1 && interval <= 0.25, "auto interval %g s", interval);
    CHECK_MSG(n >= 18, "%d samples of /metrics at %g s", n, interval);
    snprintf(d, sizeof d, "%s/fixed", root);
    sampled(s.port, d, "--metrics-interval 1", &interval, &n);
    CHECK_NEAR(interval, 1, 1e-12);
    CHECK_MSG(n <= 6, "%d samples at 1 s", n);
    sim_stop(&s);
    free(root);
}
