/* The server's resources from /proc (server_proc.csv, summary.json's
 * server_process) and the class of a managed server's death in
 * campaign.json (signal, exit code; target/server_death.h). The fake servers
 * are shell scripts: a `servelab sim` in the background answers, and the
 * shell, which is the managed pid, dies its own way while the run goes on. */
#include "csv_util.h"
#include "monitor/procstat.h"
#include "support.h"
#include "target/server_death.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(server_proc_run_samples_the_sims_tree) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), cmd[2048], p[1200], *out;
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --server-pid %d --requests 30 --rate 30 "
             "--prompts random:8:20 --metrics-interval 0.1 --out %s/o",
             sim.port, (int)sim.pid, dir);
    int code = servelab_cmd(cmd, &out);
    int sim_pid = (int)sim.pid;
    sim_stop(&sim);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    CHECK_MSG(strstr(out, "server process") != NULL, "%s", out);
    snprintf(p, sizeof p, "%s/o/server_proc.csv", dir);
    csv_table *t = csv_read(p);
    CHECK(t != NULL);
    CHECK_MSG(t->n_rows >= 5, "%d samples", t->n_rows);
    double peak = 0;
    int peak_threads = 0;
    for (int i = 0; i < t->n_rows; i++) {
        double rss = atof(csv_get(t, i, "rss_bytes"));
        int threads = atoi(csv_get(t, i, "threads"));
        CHECK_MSG(rss > 0, "row %d: rss %g", i, rss);
        CHECK_MSG(threads >= 1, "row %d: threads %d", i, threads);
        CHECK_INT(atoi(csv_get(t, i, "processes")), 1);
        CHECK(i == 0 ? !strcmp(csv_get(t, i, "cpu_pct"), "") : csv_get(t, i, "cpu_pct")[0] != 0);
        peak = rss > peak ? rss : peak;
        peak_threads = threads > peak_threads ? threads : peak_threads;
    }
    snprintf(p, sizeof p, "%s/o/summary.json", dir);
    json_t *sj = json_load_file(p, 0, NULL);
    json_t *sp = json_object_get(sj, "server_process");
    CHECK(sp != NULL);
    CHECK_MSG(json_number_value(json_object_get(sp, "peak_rss_bytes")) == peak, "peak %g, csv %g",
              json_number_value(json_object_get(sp, "peak_rss_bytes")), peak);
    CHECK_INT(json_integer_value(json_object_get(sp, "peak_threads")), peak_threads);
    CHECK_INT(json_integer_value(json_object_get(sp, "samples")), t->n_rows);
    CHECK_INT(json_integer_value(json_object_get(sp, "pid")), sim_pid);
    CHECK(json_is_number(json_object_get(sp, "mean_cpu_pct")));
}

/* A shell that forks a child: two processes, and the RSS the sum of both
 * processes' own (each read from its /proc/N/stat's rss, the 24th field). */
static double resident_bytes(pid_t pid) {
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    CHECK(f != NULL);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *q = strrchr(buf, ')') + 2; /* field 3 */
    for (int field = 3; field < 24; field++)
        q = strchr(q, ' ') + 1;
    return atof(q) * (double)sysconf(_SC_PAGESIZE);
}

TEST(server_proc_tree_sums_a_child) {
    char *dir = temp_dir(), cmd[1400], p[1200];
    snprintf(p, sizeof p, "%s/child", dir);
    snprintf(cmd, sizeof cmd, "sleep 30 & echo $! > %s; wait", p);
    pid_t sh = spawn_sh(cmd, -1, -1);
    pid_t child = 0;
    for (int i = 0; i < 200 && !child; i++) {
        char *txt = read_file(p, NULL);
        if (txt && atoi(txt) > 0)
            child = atoi(txt);
        else
            sleep_ms(10);
    }
    CHECK(child > 0);
    sleep_ms(100); /* the child has exec'd sleep by now */
    procstat_sample x;
    CHECK_INT(procstat_tree(sh, &x), 0);
    double want = resident_bytes(sh) + resident_bytes(child);
    kill(child, SIGKILL);
    kill(sh, SIGKILL);
    waitpid(sh, NULL, 0);
    CHECK_INT(x.processes, 2);
    CHECK_INT(x.threads, 2);
    CHECK_MSG(x.rss_bytes == want, "tree %g, sum of the two %g", x.rss_bytes, want);
    CHECK_INT(procstat_tree(sh, &x), -1); /* gone */
}

/* One campaign of one run whose server (a shell with a sim behind it) ends
 * after `end` 1 s into the run; campaign.json's server_death of that run. */
static json_t *death_of(const char *end, char **cj_out, char *dir) {
    char cfg[1200], text[2048], cmd[2600], p[1200], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    snprintf(text, sizeof text,
             "name: d\ntarget:\n  server:\n"
             "    command: \"sh -c '%s sim --port {port} & echo $! > %s/sim.pid; sleep 1.5; %s'\"\n"
             "    stop_grace_s: 2\n"
             "workload: {prompts: \"random:8:4\"}\nrequests: 40\nrate: 10\ntimeout: 5\n"
             "runs: [{name: r}]\n",
             servelab_bin(), dir, end);
    FILE *f = fopen(cfg, "w");
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s/o", cfg, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 1, "exit %d: %s", code, out);
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    json_t *cj = json_load_file(p, 0, NULL);
    *cj_out = read_file(p, NULL);
    json_t *st = json_array_get(json_object_get(cj, "status"), 0);
    CHECK_MSG(!strcmp(json_string_value(json_object_get(st, "status")), "server_died"), "%s",
              *cj_out);
    /* what the dead shell left behind (its sim) is stopped with the server */
    snprintf(p, sizeof p, "%s/sim.pid", dir);
    char *pid = read_file(p, NULL);
    CHECK(pid && atoi(pid) > 0);
    CHECK_MSG(kill(atoi(pid), 0) != 0, "the server's sim %d outlived the campaign", atoi(pid));
    /* the managed server's tree was sampled: the shell, its sim (and its sleep) */
    snprintf(p, sizeof p, "%s/o/r/rep-1/server_proc.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_MSG(t && t->n_rows >= 2, "no server_proc.csv: %s", *cj_out);
    CHECK_MSG(atoi(csv_get(t, 0, "processes")) >= 2, "%s processes", csv_get(t, 0, "processes"));
    json_t *d = json_object_get(st, "server_death");
    CHECK_MSG(d != NULL, "%s", *cj_out);
    return d;
}

TEST(server_proc_death_by_sigkill) {
    char *cj;
    json_t *d = death_of("kill -KILL $$", &cj, temp_dir());
    CHECK_MSG(!strcmp(json_string_value(json_object_get(d, "class")), "signal"), "%s", cj);
    CHECK_INT(json_integer_value(json_object_get(d, "signal")), SIGKILL);
    CHECK_STR(json_string_value(json_object_get(d, "signal_name")), "SIGKILL");
    CHECK_MSG(strstr(cj, "the server exited during the run (killed by SIGKILL)"), "%s", cj);
}

TEST(server_proc_death_by_sigterm) {
    char *cj;
    json_t *d = death_of("kill -TERM $$", &cj, temp_dir());
    CHECK_MSG(!strcmp(json_string_value(json_object_get(d, "class")), "signal"), "%s", cj);
    CHECK_INT(json_integer_value(json_object_get(d, "signal")), SIGTERM);
    CHECK_STR(json_string_value(json_object_get(d, "signal_name")), "SIGTERM");
}

TEST(server_proc_death_by_exit_code) {
    char *cj;
    json_t *d = death_of("exit 3", &cj, temp_dir());
    CHECK_MSG(!strcmp(json_string_value(json_object_get(d, "class")), "exit_code"), "%s", cj);
    CHECK_INT(json_integer_value(json_object_get(d, "exit_code")), 3);
    CHECK(json_object_get(d, "signal") == NULL);
    CHECK_MSG(strstr(cj, "(exit code 3)"), "%s", cj);
}

/* The allocation failure in its log makes a death out of memory: what a
 * server under `ulimit -v` says when malloc returns NULL. */
TEST(server_proc_death_out_of_memory_from_its_log) {
    char *cj;
    json_t *d = death_of("echo ggml: failed to allocate buffer >&2; exit 1", &cj, temp_dir());
    CHECK_MSG(!strcmp(json_string_value(json_object_get(d, "class")), "out_of_memory"), "%s", cj);
    CHECK_INT(json_integer_value(json_object_get(d, "exit_code")), 1);
    CHECK_MSG(strstr(json_string_value(json_object_get(d, "evidence")), "allocation failed"), "%s",
              cj);
}

/* SIGKILL with the sampled RSS at 90% or more of a limit it ran under is
 * out of memory; well under it, or with no limit known, it stays a signal
 * (the facts as the sweep has them, no process needed). */
static const char *class_of(int wait_status, double as, double cgroup, double peak, char *words) {
    procstat_limits lim = {.as_bytes = as, .cgroup_bytes = cgroup};
    server_death_facts f = {.wait_status = wait_status,
                            .pid = 999999999,
                            .lim = &lim,
                            .oom_kills_at_start = -1,
                            .peak_rss_bytes = peak};
    json_t *j = server_death_json(&f, words, 512);
    static char cls[32];
    snprintf(cls, sizeof cls, "%s", json_string_value(json_object_get(j, "class")));
    json_decref(j);
    return cls;
}

TEST(server_proc_death_sigkill_at_the_limit_is_out_of_memory) {
    char w[512];
    int killed = SIGKILL; /* a wait status of "killed by SIGKILL" */
    CHECK_STR(class_of(killed, NAN, 100e6, 95e6, w), "out_of_memory");
    CHECK_MSG(strstr(w, "out of memory: killed by SIGKILL; SIGKILL with its RSS at") &&
                  strstr(w, "cgroup"),
              "%s", w);
    CHECK_STR(class_of(killed, 200e6, NAN, 190e6, w), "out_of_memory");
    CHECK_MSG(strstr(w, "RLIMIT_AS"), "%s", w);
    CHECK_STR(class_of(killed, NAN, 100e6, 50e6, w), "signal");
    CHECK_STR(w, "killed by SIGKILL");
    CHECK_STR(class_of(killed, NAN, NAN, 95e6, w), "signal");
    CHECK_STR(class_of(SIGTERM, NAN, 100e6, 99e6, w),
              "signal"); /* only SIGKILL is the OOM killer's */
    CHECK_STR(class_of(3 << 8, NAN, NAN, 0, w), "exit_code");
    CHECK_STR(w, "exit code 3");
}

/* A sweep against the simulator samples the sim's process in every
 * repetition, and its report says the peak RSS (the largest of the
 * repetitions' csv rows) in the run's key figures, with a figure. */
TEST(server_proc_sim_sweep_in_the_report) {
    char *dir = temp_dir(), cfg[1200], cmd[2600], p[1400], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fputs("name: p\ntarget: {sim: {profile: tiny}}\nworkload: {prompts: \"random:8:20\"}\n"
          "requests: 20\nrate: 20\nrepetitions: 2\nruns: [{name: a}]\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s/o", cfg, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    double peak = 0;
    for (int k = 1; k <= 2; k++) {
        snprintf(p, sizeof p, "%s/o/a/rep-%d/server_proc.csv", dir, k);
        csv_table *t = csv_read(p);
        CHECK_MSG(t && t->n_rows >= 2, "rep-%d: no samples", k);
        for (int i = 0; i < t->n_rows; i++) {
            double rss = atof(csv_get(t, i, "rss_bytes")) / 1048576;
            peak = rss > peak ? rss : peak;
        }
    }
    snprintf(p, sizeof p, "%s/o/report/summary.md", dir);
    char *md = read_file(p, NULL), want[200];
    snprintf(want, sizeof want,
             "| server process: peak RSS (its tree, the largest repetition's) | %.1f MiB |", peak);
    CHECK_MSG(md && strstr(md, want), "want %s in\n%s", want, md);
    snprintf(p, sizeof p, "%s/o/report/figures/server_proc-a.svg", dir);
    CHECK(read_file(p, NULL) != NULL);
    snprintf(cmd, sizeof cmd, "report %s/o --check", dir);
    servelab_ok(cmd);
}

/* A server that dies while loading: campaign.json says how, as for one
 * that dies during a run (server_start_failed, with its server_death). */
static json_t *start_death_of(const char *end, char **cj_out, char *dir) {
    char cfg[1200], text[2048], cmd[2600], p[1200], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    snprintf(
        text, sizeof text,
        "name: d\ntarget:\n  server:\n    command: \"sh -c 'echo port {port}; sleep 0.3; %s'\"\n"
        "    ready_timeout_s: 20\n"
        "requests: 4\nrate: 10\nruns: [{name: r}]\n",
        end);
    FILE *f = fopen(cfg, "w");
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s/o", cfg, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 1, "exit %d: %s", code, out);
    free(out);
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    json_t *cj = json_load_file(p, 0, NULL);
    *cj_out = read_file(p, NULL);
    json_t *st = json_array_get(json_object_get(cj, "status"), 0);
    CHECK_MSG(!strcmp(json_string_value(json_object_get(st, "status")), "server_start_failed"),
              "%s", *cj_out);
    json_t *d = json_object_get(st, "server_death");
    CHECK_MSG(d != NULL, "%s", *cj_out);
    return d;
}

TEST(server_proc_death_while_loading_by_sigkill) {
    char *cj;
    json_t *d = start_death_of("kill -KILL $$", &cj, temp_dir());
    CHECK_MSG(!strcmp(json_string_value(json_object_get(d, "class")), "signal"), "%s", cj);
    CHECK_STR(json_string_value(json_object_get(d, "signal_name")), "SIGKILL");
    CHECK_MSG(strstr(cj, "before it was ready") && strstr(cj, "killed by SIGKILL"), "%s", cj);
}

TEST(server_proc_death_while_loading_out_of_memory_from_its_log) {
    char *cj;
    json_t *d = start_death_of("echo ggml: failed to allocate buffer >&2; exit 1", &cj, temp_dir());
    CHECK_MSG(!strcmp(json_string_value(json_object_get(d, "class")), "out_of_memory"), "%s", cj);
    CHECK_MSG(strstr(cj, "out of memory"), "%s", cj);
}
