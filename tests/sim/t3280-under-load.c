/* Simulator under load (one loop, and I/O threads behind the one engine):
 * 1,000 concurrent streaming requests all complete,
 * /metrics never shows more running than max_num_seqs, and the trace's
 * admitted..finished intervals never overlap more than that either; a
 * simulator held up by its host says for how long. */
#include "common/proc.h"
#include "support.h"
#include "test.h"

#include <curl/curl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

enum { N = 1000 }; /* concurrent streams in one run */

typedef struct stream {
    int chunks_done; /* saw [DONE] */
    size_t bytes;
    char tail[8];
} stream;

static size_t on_data(char *p, size_t sz, size_t n, void *ud) {
    stream *s = ud;
    size_t len = sz * n;
    s->bytes += len;
    if (len >= 8 && memmem(p, len, "[DONE]", 6))
        s->chunks_done = 1;
    return len;
}

typedef struct sink {
    char buf[65536];
    size_t n;
} sink;

static size_t on_metrics(char *p, size_t sz, size_t n, void *ud) {
    sink *k = ud;
    size_t len = sz * n;
    if (k->n + len < sizeof k->buf - 1) {
        memcpy(k->buf + k->n, p, len);
        k->n += len;
        k->buf[k->n] = 0;
    }
    return len;
}

/* The trace agrees: never more than 64 between admission and finish. */
static void check_trace_in_flight(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[512];
    static double ev_t[2 * N];
    static int ev_d[2 * N];
    int ne = 0, rows = 0;
    CHECK(fgets(line, sizeof line, f) != NULL);
    while (fgets(line, sizeof line, f)) {
        char id[64];
        double arr, adm, first, fin;
        if (sscanf(line, "%63[^,],%lf,%lf,%lf,%lf", id, &arr, &adm, &first, &fin) == 5) {
            ev_t[ne] = adm;
            ev_d[ne++] = 1;
            ev_t[ne] = fin;
            ev_d[ne++] = -1;
        }
        rows++;
    }
    fclose(f);
    CHECK_INT(rows, N);
    /* sort events by time, finishes before admissions at equal times */
    for (int i = 1; i < ne; i++)
        for (int j = i;
             j > 0 && (ev_t[j] < ev_t[j - 1] || (ev_t[j] == ev_t[j - 1] && ev_d[j] < ev_d[j - 1]));
             j--) {
            double t = ev_t[j];
            ev_t[j] = ev_t[j - 1];
            ev_t[j - 1] = t;
            int d = ev_d[j];
            ev_d[j] = ev_d[j - 1];
            ev_d[j - 1] = d;
        }
    int cur = 0, peak = 0;
    for (int i = 0; i < ne; i++) {
        cur += ev_d[i];
        if (cur > peak)
            peak = cur;
    }
    CHECK_MSG(peak <= 64, "trace peak in flight %d", peak);
    CHECK(peak >= 32);
}

static void thousand_streams(int io_threads) {
    char *dir = temp_dir();
    char args[512];
    snprintf(args, sizeof args,
             "--max-num-seqs 64 --decode-base-ms 2 --threads %d --trace %s/trace.csv", io_threads,
             dir);
    sim_proc p = sim_start(args);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 2000L);
    static stream st[N];
    char url[128], murl[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", p.port);
    snprintf(murl, sizeof murl, "http://127.0.0.1:%d/metrics", p.port);
    const char *body = "{\"prompt\":\"hello world\",\"max_tokens\":16,\"ignore_eos\":true,"
                       "\"stream\":true}";
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    for (int i = 0; i < N; i++) {
        CURL *e = curl_easy_init();
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &st[i]);
        curl_easy_setopt(e, CURLOPT_PRIVATE, &st[i]);
        curl_multi_add_handle(m, e);
    }
    int running = 1, ok = 0, polls = 0;
    double peak_running = 0;
    sink *k = calloc(1, sizeof *k);
    CURL *mh = NULL;
    while (running) {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *e = msg->easy_handle;
            if (e == mh) {
                char *at = strstr(k->buf, "\nvllm:num_requests_running{");
                if (at) {
                    double v = atof(strchr(at, '}') + 1);
                    if (v > peak_running)
                        peak_running = v;
                    polls++;
                }
                mh = NULL;
            } else {
                long code = 0;
                curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
                stream *s;
                curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&s);
                if (msg->data.result == CURLE_OK && code == 200 && s->chunks_done)
                    ok++;
            }
            curl_multi_remove_handle(m, e);
            curl_easy_cleanup(e);
        }
        if (!mh && running) { /* keep one /metrics poll in flight */
            k->n = 0;
            mh = curl_easy_init();
            curl_easy_setopt(mh, CURLOPT_URL, murl);
            curl_easy_setopt(mh, CURLOPT_WRITEFUNCTION, on_metrics);
            curl_easy_setopt(mh, CURLOPT_WRITEDATA, k);
            curl_multi_add_handle(m, mh);
            running = 1;
        }
        curl_multi_poll(m, NULL, 0, 50, NULL);
    }
    curl_multi_cleanup(m);
    curl_slist_free_all(hdrs);
    CHECK_INT(ok, N);
    CHECK(polls > 5);
    CHECK_MSG(peak_running <= 64 && peak_running > 0, "peak running %g", peak_running);
    sim_stop(&p);

    check_trace_in_flight(dir);
}

TEST_ALONE(sim_1000_concurrent_streams_complete_within_max_num_seqs) {
    thousand_streams(1);
}

/* The same with three I/O threads behind the one engine. */
TEST_ALONE(sim_threads_1000_concurrent_streams_complete_within_max_num_seqs) {
    thousand_streams(3);
}

/* Where t falls in a step of `step` ms, in [-step/2, step/2). */
static double step_phase(double t, double step) {
    double d = fmod(t, step);
    if (d < 0)
        d += step;
    return d < step / 2 ? d : d - step;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* With I/O threads the model is the same engine: 20 requests with a 20 ms
 * step and no per-sequence cost get their tokens 20 ms apart. The trace's
 * step_ms (when the step that made a token ended, the simulator's own
 * record) is on the 20 ms grid to the microsecond, but for what a held-up
 * host moved it by, which the simulator counts; every token is written
 * after its step, half of them within 1.5 ms (the rest wait for the host:
 * a loaded machine, AddressSanitizer). */
TEST_ALONE(sim_threads_keep_the_engine_step_exact) {
    char *dir = temp_dir();
    char args[1024];
    snprintf(args, sizeof args,
             "--threads 2 --decode-base-ms 20 --decode-per-seq-ms 0 --prefill-per-token-ms 0 "
             "--trace-tokens %s/tokens.csv",
             dir);
    sim_proc p = sim_start(args);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --rate inf --requests 20 --prompts "
             "random:8:12 --ignore-eos --no-sampling --out %s/run",
             p.port, dir);
    CHECK_INT(servelab_cmd(args, NULL), 0);
    /* how far a held-up host moved the steps off the model's grid, as the
     * simulator counted it of itself (0 on a quiet machine) */
    double late_ms = 1000 * sim_metric(p.port, "servelab_sim_step_late_seconds_total");
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/tokens.csv", dir);
    FILE *f = fopen(args, "r");
    CHECK(f != NULL);
    static double t[20][12], step[20][12];
    int seen = 0;
    char line[256];
    CHECK(fgets(line, sizeof line, f) != NULL);
    CHECK_MSG(!strcmp(line, "request_id,index,t_ms,step_ms\n"), "header %s", line);
    while (fgets(line, sizeof line, f)) {
        int r, k;
        double ms, step_ms;
        if (sscanf(line, "req-%d,%d,%lf,%lf", &r, &k, &ms, &step_ms) == 4 && r >= 0 && r < 20 &&
            k >= 0 && k < 12) {
            t[r][k] = ms;
            step[r][k] = step_ms;
            seen++;
        }
    }
    fclose(f);
    CHECK_INT(seen, 20 * 12);
    double gaps[20 * 11];
    int ng = 0;
    for (int r = 0; r < 20; r++)
        for (int k = 1; k < 12; k++)
            gaps[ng++] = t[r][k] - t[r][k - 1];
    qsort(gaps, (size_t)ng, sizeof *gaps, cmp_double);
    double med = gaps[ng / 2];
    CHECK_MSG(med > 19 && med < 21.5, "median token gap %.2f ms, step 20 ms", med);
    double s0 = 1e18, worst_step = 0, waits[20 * 12];
    for (int r = 0; r < 20; r++)
        s0 = step[r][0] < s0 ? step[r][0] : s0;
    int nw = 0;
    for (int r = 0; r < 20; r++)
        for (int k = 0; k < 12; k++) {
            double off = fabs(step_phase(step[r][k] - s0, 20.0));
            worst_step = off > worst_step ? off : worst_step;
            waits[nw++] = t[r][k] - step[r][k];
        }
    CHECK_MSG(worst_step <= 0.002 + late_ms, "a step %.3f ms off the grid (steps %.3f ms late)",
              worst_step, late_ms);
    qsort(waits, (size_t)nw, sizeof *waits, cmp_double);
    CHECK_MSG(waits[0] >= 0, "a token written %.3f ms before its step ended", -waits[0]);
    CHECK_MSG(waits[nw / 2] < 1.5, "the median token written %.3f ms after its step (p95 %.3f)",
              waits[nw / 2], waits[nw * 95 / 100]);
    free(dir);
}

/* A simulator the host holds up (stopped for 300 ms mid-stream, as a busy
 * machine would) counts the time its steps ran behind the model on
 * /metrics, and one left alone counts next to none. */
TEST_ALONE(sim_held_up_counts_its_late_steps) {
    sim_proc p = sim_start("--decode-base-ms 20 --decode-per-seq-ms 0 --prefill-per-token-ms 0");
    pid_t run = sim_backlog(&p, 4);
    double before = sim_metric(p.port, "servelab_sim_step_late_seconds_total");
    CHECK(kill(p.pid, SIGSTOP) == 0);
    sleep_ms(300);
    CHECK(kill(p.pid, SIGCONT) == 0);
    int status = 0;
    CHECK(waitpid(run, &status, 0) == run);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the run ended with status %d",
              status);
    double late = sim_metric(p.port, "servelab_sim_step_late_seconds_total");
    sim_stop(&p);
    /* 60 steps of 20 ms: the stop falls inside them */
    CHECK_MSG(late - before >= 0.28 && late < 1.2, "late %.3f s (%.3f s before the stop)", late,
              before);
}
