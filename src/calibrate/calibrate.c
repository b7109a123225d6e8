/* calibrate: the simulator and the client as child processes, then a join
 * of the client's chunks.csv with the simulator's per-token trace, request
 * by request (a burst runs two or more requests a stream, so a stream is not a
 * request). */
#include "calibrate/calibrate.h"
#include "calibrate/verdict.h"
#include "analysis/stats.h"
#include "rundir/summary_file.h"
#include "common/notice.h"
#include "common/clock.h"
#include "common/csv.h"
#include "common/proc.h"
#include "common/util.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child with stdout and stderr where asked (PROC_INHERIT to leave them),
 * in a process group of its own that `guard` kills if calibrate dies first;
 * -1 with the reason in err. */
static pid_t spawn(char *const argv[], int out_fd, int err_fd, proc_guard *guard, char *err,
                   int errlen) {
    proc_spec s = {.argv = argv, .in = PROC_INHERIT, .out = out_fd, .err = err_fd, .own_group = 1};
    pid_t pid = proc_spawn(&s, err, errlen);
    memset(guard, 0, sizeof *guard);
    guard->fd = -1;
    if (pid > 0 && proc_guard_start(guard, pid, err, errlen)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static double cpu_s(const struct rusage *ru) {
    return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 + ru->ru_stime.tv_sec +
           ru->ru_stime.tv_usec / 1e6;
}

/* Per-request arrays of chunk times, indexed [request * n_tokens + index],
 * from a CSV file whose rows carry "req-N", the index and the time in
 * columns id_col, idx_col and t_col (chunks.csv and the simulator's token
 * trace both do). Rows that name no request of the level are skipped. */
static void load_times(const char *path, int id_col, int idx_col, int t_col, double *t, int n_req,
                       int n_tok, size_t *count) {
    csv_file f;
    csv_row row;
    *count = 0;
    if (csv_open(&f, path))
        return;
    int need = id_col > idx_col ? id_col : idx_col;
    need = need > t_col ? need : t_col;
    for (int header = 1; csv_next(&f, &row); header = 0) {
        double idx, when;
        if (header || row.n <= need || row.len[id_col] < 5 || strncmp(row.f[id_col], "req-", 4) ||
            csv_number(&row, idx_col, &idx) || csv_number(&row, t_col, &when))
            continue;
        int r = atoi(row.f[id_col] + 4), i = (int)idx;
        if (r < 0 || r >= n_req || i < 0 || i >= n_tok || isnan(when))
            continue;
        t[(size_t)r * (size_t)n_tok + (size_t)i] = when;
        (*count)++;
    }
    csv_close(&f);
}

void calibrate_placement(calib_opts *o, char *sim_buf, char *client_buf) {
    cpu_set_t set;
    o->sim_cpus = o->client_cpus = NULL;
    int threads = o->threads > 0 ? o->threads : 1;
    if (o->sim_threads > 1 || sched_getaffinity(0, sizeof set, &set) ||
        CPU_COUNT(&set) < threads + 1)
        return;
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            last = c;
    snprintf(sim_buf, 64, "%d", last);
    size_t n = 0;
    client_buf[0] = 0;
    for (int c = 0; c < last; c++)
        if (CPU_ISSET(c, &set) && n + 8 < 64)
            n += (size_t)snprintf(client_buf + n, 64 - n, "%s%d", n ? "," : "", c);
    o->sim_cpus = sim_buf;
    o->client_cpus = client_buf;
}

/* The client's chunk rate while every stream was open: from the last
 * stream's first chunk to the first stream's last one (the ramp up and down
 * would otherwise count as a lower rate). The whole span if that window is
 * under a fifth of it. */
static double steady_rate(const double *ct, int streams, int n_tok, double tmin, double tmax,
                          size_t total) {
    double open_all = -INFINITY, close_first = INFINITY;
    for (int r = 0; r < streams; r++) {
        const double *c = ct + (size_t)r * (size_t)n_tok;
        double first = NAN, last = NAN;
        for (int i = 0; i < n_tok; i++)
            if (isfinite(c[i])) {
                if (isnan(first))
                    first = c[i];
                last = c[i];
            }
        if (isnan(first))
            continue;
        open_all = fmax(open_all, first);
        close_first = fmin(close_first, last);
    }
    if (!(close_first - open_all > (tmax - tmin) / 5))
        return tmax > tmin ? total / ((tmax - tmin) / 1000.0) : NAN;
    size_t in = 0;
    for (size_t i = 0; i < (size_t)streams * (size_t)n_tok; i++)
        if (ct[i] >= open_all && ct[i] < close_first)
            in++;
    return in / ((close_first - open_all) / 1000.0);
}

/* Appends a flag, and its value when not NULL, to a NULL-padded argv. */
static void argv_add(char **argv, const char *flag, const char *value) {
    int n = 0;
    while (argv[n])
        n++;
    argv[n++] = (char *)flag;
    if (value)
        argv[n++] = (char *)value;
    argv[n] = NULL;
}

/* --cpus LIST (when pinned) and --realtime (when asked). */
static void add_placement(char **argv, const char *cpus, int realtime) {
    if (cpus)
        argv_add(argv, "--cpus", cpus);
    if (realtime)
        argv_add(argv, "--realtime", NULL);
}

int calibrate_level_requests(const calib_level *lv) {
    return lv->streams * (lv->rounds > 0 ? lv->rounds : 1);
}

/* One level's simulator: every stream gets one token per step, whatever
 * the batch. Its URL into url[64] once it listens; -1 with why. */
static pid_t start_sim(const calib_opts *o, const calib_level *lv, const char *dir, char *url,
                       proc_guard *guard, char *err, int errlen) {
    char trace[1200], tokens[1200], step[32], seqs[32], sim_threads[16];
    snprintf(trace, sizeof trace, "%s/trace.csv", dir);
    snprintf(tokens, sizeof tokens, "%s/tokens.csv", dir);
    snprintf(step, sizeof step, "%g", lv->step_ms);
    snprintf(seqs, sizeof seqs, "%d", lv->streams + 16);
    char *argv[32] = {(char *)o->self,
                      "sim",
                      "--port",
                      "0",
                      "--profile",
                      "tiny",
                      "--max-num-seqs",
                      seqs,
                      "--kv-blocks",
                      "4000000",
                      "--max-model-len",
                      "100000",
                      "--max-num-batched-tokens",
                      "10000000",
                      "--decode-base-ms",
                      step,
                      "--decode-per-seq-ms",
                      "0",
                      "--prefill-per-token-ms",
                      "0",
                      "--max-connections",
                      "60000",
                      "--trace",
                      trace,
                      "--trace-tokens",
                      tokens};
    add_placement(argv, o->sim_cpus, o->realtime);
    if (o->sim_threads > 1) {
        snprintf(sim_threads, sizeof sim_threads, "%d", o->sim_threads);
        argv_add(argv, "--threads", sim_threads);
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t sim = spawn(argv, pfd[1], PROC_INHERIT, guard, err, errlen);
    close(pfd[1]);
    char line[256] = "";
    size_t n = 0;
    struct pollfd p = {pfd[0], POLLIN, 0};
    while (sim > 0 && n + 1 < sizeof line && poll(&p, 1, 10000) > 0 &&
           read(pfd[0], line + n, 1) == 1 && line[n] != '\n')
        n++;
    line[n] = 0;
    close(pfd[0]);
    const char *colon = strrchr(line, ':');
    if (sim > 0 && (strncmp(line, "listening on ", 13) || !colon)) {
        kill(sim, SIGKILL);
        waitpid(sim, NULL, 0);
        proc_guard_stop(guard);
        snprintf(err, errlen, "the simulator did not start (got '%s')", line);
        return -1;
    }
    if (sim > 0)
        snprintf(url, 64, "http://127.0.0.1:%d", atoi(colon + 1));
    return sim;
}

/* The client: arrivals spread evenly over one second, or all at t=0 with
 * at most STREAMS in flight; its rows in `out`. Its exit status and
 * resource use; -1 when it could not start. */
static int run_client(const calib_opts *o, const calib_level *lv, int n_tok, const char *url,
                      const char *out, struct rusage *ru, double *wall_s, char *err, int errlen) {
    char prompts[64], rate[32], reqs[32], threads[16];
    snprintf(prompts, sizeof prompts, "random:8:%d", n_tok);
    snprintf(rate, sizeof rate, "%d", lv->streams);
    snprintf(reqs, sizeof reqs, "%d", calibrate_level_requests(lv));
    snprintf(threads, sizeof threads, "%d", o->threads > 0 ? o->threads : 1);
    char *argv[32] = {(char *)o->self, "run",       "--quiet",   "--url",     (char *)url,
                      "--requests",    reqs,        "--prompts", prompts,     "--ignore-eos",
                      "--no-sampling", "--timeout", "120",       "--threads", threads,
                      "--out",         (char *)out};
    if (lv->burst) {
        argv_add(argv, "--rate", "inf");
        argv_add(argv, "--concurrency", rate);
    } else {
        argv_add(argv, "--rate", rate);
        argv_add(argv, "--arrival", "constant");
    }
    add_placement(argv, o->client_cpus, o->realtime);
    if (o->http_client)
        argv_add(argv, "--http-client", o->http_client);
    if (o->client_progress) {                  /* drawn as often as on a terminal, into /dev/null */
        argv_add(argv, "--progress", "plain"); /* plain prints despite --quiet */
        argv_add(argv, "--progress-interval", "0.5");
    }
    int64_t t0 = mono_us();
    proc_guard guard;
    pid_t run = spawn(argv, PROC_DEVNULL, PROC_DEVNULL, &guard, err, errlen);
    if (run < 0)
        return -1;
    int st;
    wait4(run, &st, 0, ru);
    proc_guard_stop(&guard);
    *wall_s = (mono_us() - t0) / 1e6;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "the client exited with status %d at %d streams", st, lv->streams);
        return -1;
    }
    return 0;
}

/* Lag and failures from the run's own summary. */
static void read_run_summary(const char *out, calib_result *res) {
    json_t *sum = rundir_summary_read(out);
    json_t *lag = json_object_get(json_object_get(sum, "client"), "schedule_lag_ms");
    res->lag_p50_ms = json_number_value(json_object_get(lag, "p50"));
    res->lag_p99_ms = json_number_value(json_object_get(lag, "p99"));
    res->requests = (size_t)json_integer_value(json_object_get(sum, "requests"));
    res->failed = (size_t)json_integer_value(json_object_get(sum, "failed"));
    json_decref(sum);
}

/* The client's chunk times against the simulator's token times (ct, st:
 * n_req x n_tok, NAN where missing): TTFT error after aligning the two
 * clocks by the median first-token offset, inter-token error gap against
 * gap, and the steady chunk rate of the first `streams` requests (the
 * ones that start together; in a burst the later ones replace them). */
static void compare_with_truth(const double *ct, const double *st, int n_req, int streams,
                               int n_tok, size_t chunks, calib_result *res) {
    size_t cells = (size_t)n_req * (size_t)n_tok, nf = 0, ng = 0;
    double *first = xmalloc((size_t)n_req * sizeof *first);
    double *gaps = xmalloc(cells * sizeof *gaps);
    double tmin = INFINITY, tmax = -INFINITY;
    for (int r = 0; r < n_req; r++) {
        const double *c = ct + (size_t)r * (size_t)n_tok, *s = st + (size_t)r * (size_t)n_tok;
        if (isfinite(c[0]) && isfinite(s[0]))
            first[nf++] = c[0] - s[0];
        for (int i = 0; i < n_tok; i++) {
            if (isfinite(c[i])) {
                tmin = fmin(tmin, c[i]);
                tmax = fmax(tmax, c[i]);
            }
            if (i > 0 && isfinite(c[i]) && isfinite(c[i - 1]) && isfinite(s[i]) &&
                isfinite(s[i - 1]))
                gaps[ng++] = fabs((c[i] - c[i - 1]) - (s[i] - s[i - 1]));
        }
    }
    res->joined = nf;
    sort_doubles(first, nf);
    double offset = percentile_sorted(first, nf, 50);
    for (size_t i = 0; i < nf; i++)
        first[i] = fabs(first[i] - offset);
    sort_doubles(first, nf);
    res->ttft_err_p50_ms = percentile_sorted(first, nf, 50);
    res->ttft_err_p99_ms = percentile_sorted(first, nf, 99);
    sort_doubles(gaps, ng);
    res->itl_err_p50_ms = percentile_sorted(gaps, ng, 50);
    res->itl_err_p99_ms = percentile_sorted(gaps, ng, 99);
    res->achieved_chunks_per_s = steady_rate(ct, streams, n_tok, tmin, tmax, chunks);
    free(first);
    free(gaps);
}

/* Join the client's chunks.csv with the simulator's per-token trace, both
 * indexed by request ("req-N"). */
static void join_level(const char *out, const char *dir, int n_req, int streams, int n_tok,
                       calib_result *res) {
    size_t cells = (size_t)n_req * (size_t)n_tok, nc, ns;
    double *ct = xmalloc(cells * sizeof *ct), *st = xmalloc(cells * sizeof *st);
    for (size_t i = 0; i < cells; i++)
        ct[i] = st[i] = NAN;
    char path[1400];
    snprintf(path, sizeof path, "%s/chunks.csv", out);
    load_times(path, 0, 1, 2, ct, n_req, n_tok, &nc);
    snprintf(path, sizeof path, "%s/tokens.csv", dir);
    load_times(path, 0, 1, 2, st, n_req, n_tok, &ns);
    res->chunks = nc;
    compare_with_truth(ct, st, n_req, streams, n_tok, nc, res);
    free(ct);
    free(st);
}

/* Repetition k of level li, in a directory of its own: level-LI, then
 * level-LI-2, ... (a run refuses an --out that holds a run). */
static int level_run(const calib_opts *o, int li, int k, calib_result *res, char *err, int errlen) {
    const calib_level *lv = &o->levels[li];
    memset(res, 0, sizeof *res);
    res->level = *lv;
    res->seconds = o->seconds;
    int n_tok = (int)ceil(o->seconds * 1000.0 / lv->step_ms);
    if (n_tok < 2)
        n_tok = 2;
    res->offered_chunks_per_s = lv->streams * 1000.0 / lv->step_ms;
    char dir[1024], out[1200], url[64];
    if (k == 0)
        snprintf(dir, sizeof dir, "%s/level-%d", o->work, li);
    else
        snprintf(dir, sizeof dir, "%s/level-%d-%d", o->work, li, k + 1);
    mkdir(dir, 0755);
    proc_guard guard;
    pid_t sim = start_sim(o, lv, dir, url, &guard, err, errlen);
    if (sim < 0)
        return -1;
    snprintf(out, sizeof out, "%s/run", dir);
    struct rusage ru_run, ru_sim;
    double run_wall = 0;
    int rc = run_client(o, lv, n_tok, url, out, &ru_run, &run_wall, err, errlen);
    kill(sim, SIGTERM);
    wait4(sim, NULL, 0, &ru_sim);
    proc_guard_stop(&guard);
    if (rc)
        return -1;
    res->client_cpu_pct = 100 * cpu_s(&ru_run) / run_wall;
    res->sim_cpu_pct = 100 * cpu_s(&ru_sim) / run_wall;
    res->client_rss_mib = ru_run.ru_maxrss / 1024.0;
    res->sim_rss_mib = ru_sim.ru_maxrss / 1024.0;
    res->sim_threads = o->sim_threads > 1 ? o->sim_threads : 1;
    read_run_summary(out, res);
    join_level(out, dir, calibrate_level_requests(lv), lv->streams, n_tok, res);
    res->runs = 1;
    res->within_1ms = calibrate_within_1ms(res);
    return 0;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of field `off` (a double) over n results. */
static double median_field(calib_result *r, int n, size_t off) {
    double v[64];
    for (int i = 0; i < n; i++)
        v[i] = *(double *)((char *)&r[i] + off);
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int calibrate_run(const calib_opts *o, calib_result *results, char *err, int errlen) {
    int rep = o->repeat < 1 ? 1 : o->repeat > 64 ? 64 : o->repeat;
    calib_result *tries = xcalloc((size_t)rep, sizeof *tries);
    for (int i = 0; i < o->n_levels; i++) {
        for (int k = 0; k < rep; k++) {
            if (!o->quiet)
                notice(notice_default(), NOTICE_PROGRESS,
                       "calibrate: %d streams%s, a chunk every %g ms each (%d/%d) ...",
                       o->levels[i].streams, o->levels[i].burst ? " started together" : "",
                       o->levels[i].step_ms, k + 1, rep);
            if (level_run(o, i, k, &tries[k], err, errlen)) {
                free(tries);
                return -1;
            }
        }
        calib_result *m = &results[i];
        *m = tries[0];
        static const size_t fields[] = {offsetof(calib_result, achieved_chunks_per_s),
                                        offsetof(calib_result, lag_p50_ms),
                                        offsetof(calib_result, lag_p99_ms),
                                        offsetof(calib_result, ttft_err_p50_ms),
                                        offsetof(calib_result, ttft_err_p99_ms),
                                        offsetof(calib_result, itl_err_p50_ms),
                                        offsetof(calib_result, itl_err_p99_ms),
                                        offsetof(calib_result, client_cpu_pct),
                                        offsetof(calib_result, client_rss_mib),
                                        offsetof(calib_result, sim_cpu_pct),
                                        offsetof(calib_result, sim_rss_mib)};
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            *(double *)((char *)m + fields[f]) = median_field(tries, rep, fields[f]);
        for (int k = 1; k < rep; k++) {
            m->failed += tries[k].failed;
            if (tries[k].joined < m->joined) /* the worst repetition's join */
                m->joined = tries[k].joined;
        }
        m->runs = rep;
        m->within_1ms = calibrate_within_1ms(m);
    }
    free(tries);
    /* memory per stream: growth over the first level of the same arrivals
     * (a burst keeps each round's rows) */
    for (int i = 0; i < o->n_levels; i++) {
        const calib_result *b = &results[0];
        for (int j = 0; j < i && b->level.burst != results[i].level.burst; j++)
            b = &results[j + 1];
        int ds = results[i].level.streams - b->level.streams;
        results[i].bytes_per_stream =
            ds > 0 ? (results[i].client_rss_mib - b->client_rss_mib) * 1048576.0 / ds : NAN;
    }
    return 0;
}

void calibrate_print_table(FILE *f, const calib_result *r, int n) {
    fprintf(f, "%8s %-8s %8s %10s %10s %8s %8s %9s %9s %9s %9s %7s %8s %9s %7s %8s %s\n", "streams",
            "arrivals", "step ms", "chunks/s", "achieved", "lag p50", "lag p99", "ttft p50",
            "ttft p99", "itl p50", "itl p99", "cli cpu", "cli MiB", "B/stream", "sim cpu ",
            "sim MiB", "within 1 ms");
    for (int i = 0; i < n; i++) {
        char bps[32];
        if (isfinite(r[i].bytes_per_stream))
            snprintf(bps, sizeof bps, "%.0f", r[i].bytes_per_stream);
        else
            snprintf(bps, sizeof bps, "-");
        fprintf(f,
                "%8d %-8s %8g %10.0f %10.0f %8.3f %8.3f %9.3f %9.3f %9.3f %9.3f %6.0f%% %8.1f %9s "
                "%6.0f%%%s %8.1f %s\n",
                r[i].level.streams, r[i].level.burst ? "burst" : "spread", r[i].level.step_ms,
                r[i].offered_chunks_per_s, r[i].achieved_chunks_per_s, r[i].lag_p50_ms,
                r[i].lag_p99_ms, r[i].ttft_err_p50_ms, r[i].ttft_err_p99_ms, r[i].itl_err_p50_ms,
                r[i].itl_err_p99_ms, r[i].client_cpu_pct, r[i].client_rss_mib, bps,
                r[i].sim_cpu_pct, calibrate_sim_bound(&r[i]) ? "!" : " ", r[i].sim_rss_mib,
                r[i].within_1ms ? "yes" : "no");
    }
}

static json_t *jnum(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *calibrate_json(const calib_result *r, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "streams", json_integer(r[i].level.streams));
        json_object_set_new(o, "arrivals", json_string(r[i].level.burst ? "burst" : "spread"));
        json_object_set_new(o, "rounds", json_integer(r[i].level.rounds));
        json_object_set_new(o, "step_ms", jnum(r[i].level.step_ms));
        json_object_set_new(o, "seconds", jnum(r[i].seconds));
        json_object_set_new(o, "offered_chunks_per_s", jnum(r[i].offered_chunks_per_s));
        json_object_set_new(o, "achieved_chunks_per_s", jnum(r[i].achieved_chunks_per_s));
        json_object_set_new(o, "requests", json_integer((json_int_t)r[i].requests));
        json_object_set_new(o, "failed", json_integer((json_int_t)r[i].failed));
        json_object_set_new(o, "chunks", json_integer((json_int_t)r[i].chunks));
        json_object_set_new(o, "joined", json_integer((json_int_t)r[i].joined));
        json_object_set_new(o, "lag_p50_ms", jnum(r[i].lag_p50_ms));
        json_object_set_new(o, "lag_p99_ms", jnum(r[i].lag_p99_ms));
        json_object_set_new(o, "ttft_err_p50_ms", jnum(r[i].ttft_err_p50_ms));
        json_object_set_new(o, "ttft_err_p99_ms", jnum(r[i].ttft_err_p99_ms));
        json_object_set_new(o, "itl_err_p50_ms", jnum(r[i].itl_err_p50_ms));
        json_object_set_new(o, "itl_err_p99_ms", jnum(r[i].itl_err_p99_ms));
        json_object_set_new(o, "client_cpu_pct", jnum(r[i].client_cpu_pct));
        json_object_set_new(o, "client_rss_mib", jnum(r[i].client_rss_mib));
        json_object_set_new(o, "client_bytes_per_stream", jnum(r[i].bytes_per_stream));
        json_object_set_new(o, "sim_cpu_pct", jnum(r[i].sim_cpu_pct));
        json_object_set_new(o, "sim_rss_mib", jnum(r[i].sim_rss_mib));
        json_object_set_new(o, "sim_threads", json_integer(r[i].sim_threads));
        json_object_set_new(o, "sim_bound", json_boolean(calibrate_sim_bound(&r[i])));
        json_object_set_new(o, "within_1ms", json_boolean(r[i].within_1ms));
        json_array_append_new(a, o);
    }
    return a;
}
