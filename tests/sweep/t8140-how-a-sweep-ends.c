/* How a sweep ends: a run that cannot start is recorded and the campaign goes
 * on; SIGTERM, SIGHUP and SIGINT end it like Ctrl-C (the run in flight
 * interrupted with every request a row, campaign.json and the report
 * written, exit 128 + signal); and whatever the end, SIGKILL included, no
 * process it started is left running. */
#include "csv_util.h"
#include "client/rowwriter.h"
#include "rundir/columns.h"
#include "support.h"
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *write_file(const char *dir, const char *name, const char *text) {
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    return p;
}

/* Processes (other than this one) whose command line holds `marker`. */
static int processes_with(const char *marker) {
    DIR *d = opendir("/proc");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid())
            continue;
        char path[64], buf[8192];
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len <= 0)
            continue;
        for (ssize_t i = 0; i < len; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[len] = 0;
        n += strstr(buf, marker) != NULL;
    }
    closedir(d);
    return n;
}

/* Wait up to `ms` for no process with the marker; returns how many are left. */
static int wait_none_with(const char *marker, int ms) {
    int n = processes_with(marker);
    for (int waited = 0; n && waited < ms; waited += 50) {
        sleep_ms(50);
        n = processes_with(marker);
    }
    return n;
}

/* `servelab sweep --quiet CFG --out OUT` in the background, its output in LOG. */
static pid_t start_sweep(const char *cfg, const char *out, const char *log) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s sweep --quiet %s --out %s", servelab_bin(), cfg, out);
    pid_t pid = spawn_sh(cmd, fd, fd);
    close(fd);
    return pid;
}

/* Until the run's requests.csv holds a finished row: the run is under way. */
static void wait_mid_run(const char *rows, pid_t sweep) {
    struct stat st;
    char header[1024];
    off_t header_n = (off_t)rundir_header(&rundir_requests, header, sizeof header);
    for (int i = 0; i < 600; i++) {
        if (stat(rows, &st) == 0 && st.st_size > header_n + 100)
            return;
        CHECK_MSG(waitpid(sweep, NULL, WNOHANG) == 0, "the sweep ended before its run");
        sleep_ms(50);
    }
    CHECK_MSG(0, "no rows in %s after 30 s", rows);
}

static int wait_exit(pid_t pid, int ms) {
    int st = 0;
    for (int waited = 0; waitpid(pid, &st, WNOHANG) == 0; waited += 20) {
        CHECK_MSG(waited < ms, "pid %d still running after %d ms", (int)pid, ms);
        sleep_ms(20);
    }
    return st;
}

/* A campaign against a managed server (the simulator, named by `marker` so
 * that its processes can be found), or against the simulator per run. */
static char *long_campaign(const char *dir, const char *marker, int managed) {
    char text[2048];
    if (managed)
        snprintf(text, sizeof text,
                 "name: s\ntarget:\n  server:\n"
                 "    command: \"%s sim --port {port} --model %s --decode-base-ms 5\"\n"
                 "    stop_grace_s: 5\n",
                 servelab_bin(), marker);
    else
        snprintf(text, sizeof text, "name: s\ntarget: {sim: {model: %s, decode_base_ms: 5}}\n",
                 marker);
    strcat(text, "workload: {prompts: \"random:8:20\"}\nrequests: 400\nrate: 20\n"
                 "metrics_interval: 0.1\nruns:\n  - {name: long}\n  - {name: never}\n");
    return write_file(dir, "c.yaml", text);
}

TEST(sweep_failed_run_is_recorded_and_the_campaign_goes_on) {
    char *dir = temp_dir();
    char marker[64], text[2048];
    snprintf(marker, sizeof marker, "mark-fail-%d", (int)getpid());
    snprintf(text, sizeof text,
             "name: f\ntarget: {sim: {model: %s}}\n"
             "workload: {prompts: \"random:8:4\"}\nrequests: 10\nrate: 100\n"
             "runs:\n  - {name: first}\n"
             "  - {name: second, workload: {prompts: %s/missing.jsonl}}\n"
             "  - {name: third}\n",
             marker, dir);
    char *cfg = write_file(dir, "c.yaml", text);
    char args[2048], *out, p[2048];
    snprintf(args, sizeof args, "sweep --quiet %s --out %s/o", cfg, dir);
    int code = servelab_cmd(args, &out);
    CHECK_MSG(code == 1, "exit %d (want 1: a run failed): %s", code, out);
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    char *cj = read_file(p, NULL);
    CHECK(cj != NULL);
    CHECK_MSG(strstr(cj, "\"status\": \"failed\"") && strstr(cj, "missing.jsonl"), "%s", cj);
    /* each run's exit code as `servelab run` gives it: 2 for the missing file */
    CHECK_MSG(strstr(cj, "\"exit_code\": 2") && strstr(cj, "\"exit_code\": 0"), "%s", cj);
    /* the first and third ran */
    snprintf(p, sizeof p, "%s/o/first/rep-1/requests.csv", dir);
    CHECK_INT(csv_read(p)->n_rows, 10);
    snprintf(p, sizeof p, "%s/o/third/rep-1/requests.csv", dir);
    CHECK_INT(csv_read(p)->n_rows, 10);
    snprintf(p, sizeof p, "%s/o/report/summary.csv", dir);
    csv_table *s = csv_read(p);
    CHECK_MSG(s && s->n_rows == 2, "the report holds the two runs that ran");
    CHECK_INT(wait_none_with(marker, 2000), 0);
}

/* A long campaign's sweep, under way: its folders, the marker its server's
 * command line carries, and its pid. */
typedef struct long_sweep {
    char marker[64], out[1200], log[1200], rows[1400];
    pid_t pid;
} long_sweep;

static void long_sweep_start(long_sweep *ls, const char *what, int managed) {
    char *dir = temp_dir();
    snprintf(ls->marker, sizeof ls->marker, "mark-%s-%d-%d", what, managed, (int)getpid());
    char *cfg = long_campaign(dir, ls->marker, managed);
    snprintf(ls->out, sizeof ls->out, "%s/o", dir);
    snprintf(ls->log, sizeof ls->log, "%s/sweep.log", dir);
    snprintf(ls->rows, sizeof ls->rows, "%s/long/rep-1/requests.csv", ls->out);
    ls->pid = start_sweep(cfg, ls->out, ls->log);
    wait_mid_run(ls->rows, ls->pid);
    CHECK(processes_with(ls->marker) >= 1);
}

/* A stop signal mid-run: the run interrupted, every request a row, the
 * rest skipped, campaign.json and the report written, the server stopped. */
static void stopped_by(int sig, int managed) {
    long_sweep ls;
    char what[16], p[1400];
    snprintf(what, sizeof what, "sig%d", sig);
    long_sweep_start(&ls, what, managed);
    kill(ls.pid, sig);
    int st = wait_exit(ls.pid, 20000);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig, "status %d: %s", st,
              read_file(ls.log, NULL));
    CHECK_INT(csv_read(ls.rows)->n_rows, 400);
    snprintf(p, sizeof p, "%s/campaign.json", ls.out);
    char *cj = read_file(p, NULL);
    CHECK_MSG(strstr(cj, "\"status\": \"interrupted\"") && strstr(cj, "\"interrupted\": true") &&
                  strstr(cj, "\"finished_utc\"") && !strstr(cj, "\"run\": \"never\""),
              "%s", cj);
    snprintf(p, sizeof p, "%s/report/summary.csv", ls.out);
    CHECK_MSG(read_file(p, NULL) != NULL, "no report");
    CHECK_INT(wait_none_with(ls.marker, 2000), 0);
}

TEST(sweep_sigterm_stops_run_and_server_and_writes_everything) {
    stopped_by(SIGTERM, 1);
}

TEST(sweep_sighup_stops_run_and_server_and_writes_everything) {
    stopped_by(SIGHUP, 1);
}

TEST(sweep_sigint_stops_the_simulator_it_started) {
    stopped_by(SIGINT, 0);
}

/* SIGKILL can be neither caught nor handled: the watchdog kills the
 * server's process group once the sweep is gone, and then ends itself. */
static void killed(int managed) {
    long_sweep ls;
    long_sweep_start(&ls, "kill", managed);
    kill(ls.pid, SIGKILL);
    wait_exit(ls.pid, 5000);
    CHECK_MSG(wait_none_with(ls.marker, 5000) == 0, "a server outlived the sweep");
    /* rows written before the kill are whole */
    csv_table *t = csv_read(ls.rows);
    CHECK(t && t->n_rows > 0 && t->n_rows < 400);
}

TEST(sweep_sigkill_leaves_no_managed_server) {
    killed(1);
}

TEST(sweep_sigkill_leaves_no_simulator) {
    killed(0);
}
