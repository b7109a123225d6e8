/* Results are never mixed or overwritten: a run or a sweep refuses an
 * output directory that already holds results (unless --force, or --resume
 * for a sweep), two processes never write one directory at once, and a path
 * too long for servelab's buffers is refused instead of cut short. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int exists(const char *dir, const char *rel) {
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

static int run_into(int port, const char *out, const char *extra, char **msg) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "run --quiet --url http://127.0.0.1:%d --rate 100 --requests 10 --max-tokens 4 "
             "--metrics-interval 0.05 --out %s %s",
             port, out, extra);
    return servelab_cmd(cmd, msg);
}

TEST(outdir_run_refuses_earlier_results_unless_force) {
    char *dir = temp_dir(), out[1024], *msg;
    snprintf(out, sizeof out, "%s/r", dir);
    sim_proc p = sim_start(NULL);
    CHECK_INT(run_into(p.port, out, "", &msg), 0);
    CHECK(exists(out, "server_metrics.csv"));
    /* again: refused, naming what is there, nothing touched */
    CHECK_INT(run_into(p.port, out, "", &msg), 2);
    CHECK_MSG(strstr(msg, "already holds a run (requests.csv") && strstr(msg, "--force"), "%s",
              msg);
    /* --force: the earlier run's files go, so no old series stays beside a
     * run that samples nothing */
    CHECK_INT(run_into(p.port, out, "--force --no-sampling --requests 7", &msg), 0);
    CHECK(!exists(out, "server_metrics.csv"));
    char rows[1100];
    snprintf(rows, sizeof rows, "%s/requests.csv", out);
    CHECK_INT(csv_read(rows)->n_rows, 7);
    sim_stop(&p);
}

TEST(outdir_two_runs_never_write_one_directory) {
    char *dir = temp_dir(), out[1024], cmd[2048], *msg;
    snprintf(out, sizeof out, "%s/r", dir);
    sim_proc p = sim_start("--decode-base-ms 20");
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --url http://127.0.0.1:%d --rate 20 --requests 40 "
             "--max-tokens 8 --out %s",
             servelab_bin(), p.port, out);
    pid_t first = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    for (int i = 0; i < 200 && !exists(out, "requests.csv"); i++)
        sleep_ms(20);
    CHECK(exists(out, "requests.csv"));
    CHECK_INT(run_into(p.port, out, "--force", &msg), 2);
    char pid[64];
    snprintf(pid, sizeof pid, "in use by servelab pid %d", (int)first);
    CHECK_MSG(strstr(msg, pid) != NULL, "%s", msg);
    int st;
    waitpid(first, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char rows[1100];
    snprintf(rows, sizeof rows, "%s/requests.csv", out);
    csv_table *t = csv_read(rows);
    CHECK_INT(t->n_rows, 40);
    for (int i = 0; i < t->n_rows; i++) /* every id once: nothing interleaved */
        for (int j = i + 1; j < t->n_rows; j++)
            CHECK(strcmp(csv_get(t, i, "request_id"), csv_get(t, j, "request_id")) != 0);
    sim_stop(&p);
}

static char *campaign_file(const char *dir, const char *runs) {
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/c.yaml", dir);
    FILE *f = fopen(p, "w");
    fprintf(f,
            "name: t\ntarget: {sim: {}}\nworkload: {prompts: \"random:8:4\"}\n"
            "requests: 10\nrate: 100\nrepetitions: 2\nruns:\n%s",
            runs);
    fclose(f);
    return p;
}

static int sweep_into(const char *cfg, const char *out, const char *extra, char **msg) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s %s", cfg, out, extra);
    return servelab_cmd(cmd, msg);
}

TEST(outdir_sweep_refuses_resumes_and_forces) {
    char *dir = temp_dir(), out[1024], p[1400], *msg;
    snprintf(out, sizeof out, "%s/o", dir);
    char *cfg = campaign_file(dir, "  - {name: a}\n  - {name: b}\n  - {name: c}\n");
    CHECK_INT(sweep_into(cfg, out, "", &msg), 0);
    CHECK_INT(sweep_into(cfg, out, "", &msg), 2);
    CHECK_MSG(strstr(msg, "already holds a campaign (campaign.json, 6 run directories)"), "%s",
              msg);
    /* --resume with b changed and c gone: a kept, b run again, c removed */
    cfg = campaign_file(dir, "  - {name: a}\n  - {name: b, requests: 12}\n");
    CHECK_INT(sweep_into(cfg, out, "--resume", &msg), 0);
    snprintf(p, sizeof p, "%s/campaign.json", out);
    char *cj = read_file(p, NULL);
    CHECK_INT(count_of(cj, "\"kept\": true"), 2);
    CHECK(strstr(cj, "\"kept_from_earlier\": 2") != NULL);
    CHECK(!exists(out, "c/rep-1/requests.csv") && !exists(out, "c"));
    snprintf(p, sizeof p, "%s/b/rep-2/requests.csv", out);
    CHECK_INT(csv_read(p)->n_rows, 12);
    snprintf(p, sizeof p, "%s/report/summary.csv", out);
    csv_table *s = csv_read(p);
    CHECK_INT(s->n_rows, 2); /* a and b only: nothing of c pooled */
    /* --force: nothing kept */
    CHECK_INT(sweep_into(cfg, out, "--force", &msg), 0);
    snprintf(p, sizeof p, "%s/campaign.json", out);
    cj = read_file(p, NULL);
    CHECK_INT(count_of(cj, "\"kept\": true"), 0);
    CHECK(strstr(cj, "\"kept_from_earlier\": 0") != NULL);
}

TEST(outdir_two_sweeps_never_write_one_directory) {
    char *dir = temp_dir(), out[1024], cmd[2048], *msg;
    snprintf(out, sizeof out, "%s/o", dir);
    char *cfg = campaign_file(dir, "  - {name: slow, requests: 60, rate: 20}\n");
    snprintf(cmd, sizeof cmd, "exec %s sweep --quiet %s --out %s", servelab_bin(), cfg, out);
    pid_t first = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    for (int i = 0; i < 300 && !exists(out, "campaign.json"); i++)
        sleep_ms(20);
    CHECK_INT(sweep_into(cfg, out, "--force", &msg), 2);
    char pid[64];
    snprintf(pid, sizeof pid, "in use by servelab pid %d", (int)first);
    CHECK_MSG(strstr(msg, pid) != NULL, "%s", msg);
    kill(first, SIGTERM);
    waitpid(first, NULL, 0);
}

TEST(outdir_path_too_long_is_refused) {
    char *dir = temp_dir(), out[4200], *msg;
    int n = snprintf(out, sizeof out, "%s/", dir);
    memset(out + n, 'x', 4083 - (size_t)n);
    out[4083] = 0;
    CHECK_INT(run_into(1, out, "", &msg), 2);
    CHECK_MSG(strstr(msg, "--out: the path has 4083 characters (at most 3000)"), "%s", msg);
    char cfg[1024];
    snprintf(cfg, sizeof cfg, "%s", campaign_file(dir, "  - {name: a}\n"));
    CHECK_INT(sweep_into(cfg, out, "", &msg), 2);
    CHECK_MSG(strstr(msg, "--out: the path has 4083 characters"), "%s", msg);
}

/* A sweep refuses an --out that holds a plain run (the report would pool it
 * with the campaign), a run refuses a campaign's directory, and --force and
 * --resume are one or the other. */
TEST(outdir_run_and_campaign_never_share_a_directory) {
    char *dir = temp_dir(), out[1024], *msg;
    snprintf(out, sizeof out, "%s/o", dir);
    sim_proc p = sim_start(NULL);
    CHECK_INT(run_into(p.port, out, "", &msg), 0);
    char *cfg = campaign_file(dir, "  - {name: a}\n");
    CHECK_INT(sweep_into(cfg, out, "", &msg), 2);
    CHECK_MSG(strstr(msg, "already holds results (1 run directory)"), "%s", msg);
    CHECK_INT(sweep_into(cfg, out, "--force --resume", &msg), 2);
    CHECK_MSG(strstr(msg, "give --force or --resume, not both"), "%s", msg);
    CHECK_INT(sweep_into(cfg, out, "--force", &msg), 0);
    CHECK(!exists(out, "requests.csv") && exists(out, "a/rep-1/requests.csv"));
    CHECK_INT(run_into(p.port, out, "--force", &msg), 2);
    CHECK_MSG(strstr(msg, "holds a campaign (campaign.json)"), "%s", msg);
    sim_stop(&p);
}

/* The demo replaces its own output, and nothing else's. */
TEST(outdir_demo_keeps_what_is_not_a_demo) {
    char *dir = temp_dir(), p[1100], cmd[1200], *msg;
    snprintf(p, sizeof p, "%s/campaign.json", dir);
    FILE *f = fopen(p, "w");
    fputs("{\"name\": \"mine\"}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "demo --out %s", dir);
    CHECK_INT(servelab_cmd(cmd, &msg), 2);
    CHECK_MSG(strstr(msg, "holds results that are not a demo's"), "%s", msg);
    CHECK(exists(dir, "campaign.json"));
}
