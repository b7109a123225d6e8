/* The sweep's defects of the second adversarial round (D1, D2, D10, H3,
 * M7, C1), a test each, named in its comment; every one of them failed
 * before its fix. */
#include "run/shard.h"
#include "support.h"
#include "sweep/campaign.h"
#include "sweep/sweep.h"
#include "test.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const no_env[] = {NULL};
static char *no_get(const char *name) {
    (void)name;
    return NULL;
}
static const char *const *env_now = no_env;
static char *env_get(const char *name) {
    for (int i = 0; env_now[i]; i += 2)
        if (!strcmp(env_now[i], name))
            return (char *)env_now[i + 1];
    return NULL;
}

/* M7: --shard is digits, a slash, digits; no spaces, no sign. */
TEST(defects_sweep_shard_with_spaces_or_a_sign_is_refused) {
    const char *bad[] = {" 1/2", "1/2 ", "1/ 2", "1 /2", "+1/2", "1/+2", "\t0/2", NULL};
    for (int i = 0; bad[i]; i++) {
        shard_spec s;
        char why[256] = "";
        CHECK_MSG(shard_parse(bad[i], 0, no_get, &s, why, sizeof why) != 0, "'%s' accepted",
                  bad[i]);
        CHECK_MSG(strstr(why, "expected I/N") && !strchr(why, '\n'), "'%s': %s", bad[i], why);
    }
    const char *slurm[] = {"SLURM_PROCID", " 1", "SLURM_NTASKS", "2", NULL};
    env_now = slurm;
    shard_spec s;
    char why[256] = "";
    CHECK_MSG(shard_parse("auto", 0, env_get, &s, why, sizeof why) != 0, "SLURM_PROCID ' 1'");
    CHECK(shard_parse("1/2", 0, no_get, &s, why, sizeof why) == 0 && s.index == 1);
    campaign c;
    char err[512] = "";
    int rc = campaign_load_string("name: t\ntarget: {url: http://127.0.0.1:8000}\nshards: ' 2'\n"
                                  "runs: [{name: a}]\n",
                                  "t.yaml", &c, err, sizeof err);
    CHECK_MSG(rc != 0 && strstr(err, "t.yaml:3: shards: expected auto or a number"), "%s", err);
}

static int exists(const char *dir, const char *rel) {
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return lstat(p, &st) == 0;
}

static char *write_text(const char *dir, const char *name, const char *text) {
    char *p = malloc(1200);
    snprintf(p, 1200, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK_MSG(f != NULL, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
    return p;
}

/* A campaign on a simulator the sweep starts itself, 3 requests a run. */
static char *sim_campaign(const char *dir, const char *runs) {
    char text[2048];
    snprintf(text, sizeof text,
             "name: t\ntarget: {sim: {}}\nworkload: {prompts: \"random:8:4\"}\n"
             "requests: 3\nrate: 100\nno_sampling: true\nruns:\n%s",
             runs);
    return write_text(dir, "c.yaml", text);
}

static int sweep_into(const char *cfg, const char *out, const char *extra, char **msg) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s %s", cfg, out, extra);
    return servelab_cmd(cmd, msg);
}

/* D2: the names of the sweep's own folders and files, and hidden names
 * (the report and --force skip them), are refused as run names when the
 * campaign is read, at their line. */
TEST(defects_sweep_run_names_of_the_sweeps_own_folders_are_refused) {
    const char *names[] = {"report", "servers", "shards", "campaign.json", ".a"};
    for (int i = 0; i < 5; i++) {
        char yaml[512], want[256], err[512] = "";
        snprintf(yaml, sizeof yaml,
                 "name: t\ntarget: {url: http://127.0.0.1:8000}\nruns:\n  - {name: ok1}\n"
                 "  - {name: \"%s\"}\n",
                 names[i]);
        campaign c;
        int rc = campaign_load_string(yaml, "t.yaml", &c, err, sizeof err);
        snprintf(want, sizeof want, "t.yaml:5: runs[1].name: '%s' ", names[i]);
        CHECK_MSG(rc != 0 && !strncmp(err, want, strlen(want)) && !strchr(err, '\n'),
                  "run name %s: rc %d, '%s'", names[i], rc, err);
    }
    campaign c;
    char err[512] = "";
    CHECK_MSG(!campaign_load_string("name: t\ntarget: {url: http://127.0.0.1:8000}\nruns:\n"
                                    "  - {name: reports}\n  - {name: a.report}\n",
                                    "t.yaml", &c, err, sizeof err),
              "%s", err);
    campaign_free(&c);
    /* from the command line: exit 2, before anything runs */
    char *dir = temp_dir(), out[1024], *msg;
    snprintf(out, sizeof out, "%s/out", dir);
    char *cfg = sim_campaign(dir, "  - {name: report}\n  - {name: ok1}\n");
    CHECK_INT(sweep_into(cfg, out, "", &msg), 2);
    CHECK_MSG(strstr(msg, "c.yaml:8: runs[0].name: 'report' is the name of the sweep's own"), "%s",
              msg);
    CHECK(!exists(out, "campaign.json"));
}

static void load_fails(const char *yaml, const char *want) {
    campaign c;
    char err[512] = "";
    int rc = campaign_load_string(yaml, "t.yaml", &c, err, sizeof err);
    CHECK_MSG(rc != 0, "loaded; expected '%s'", want);
    CHECK_MSG(!strncmp(err, want, strlen(want)) && !strchr(err, '\n'), "'%s'\n  wanted '%s'", err,
              want);
}

#define HEAD "name: t\ntarget: {url: http://127.0.0.1:8000}\n"

/* M7: at most 100,000 run directories (runs x repetitions) a campaign, named
 * at the repetitions key that goes over. */
TEST(defects_sweep_campaign_caps_run_directories) {
    load_fails(HEAD "repetitions: 2000000000\nruns: [{name: a}]\n",
               "t.yaml:3: repetitions: the campaign would make 2000000000 run directories "
               "(runs x repetitions), at most 100000");
    load_fails(HEAD "repetitions: 40000\nruns: [{name: a}, {name: b}, {name: c}]\n",
               "t.yaml:3: repetitions: the campaign would make 120000 run directories");
    load_fails(HEAD "runs:\n  - {name: a, repetitions: 100000}\n  - {name: b}\n",
               "t.yaml:5: runs[1].repetitions: the campaign would make 100001 run directories");
    load_fails(HEAD "runs:\n  - {name: a}\n  - name: b\n    repetitions: 100000\n",
               "t.yaml:6: runs[1].repetitions: the campaign would make 100001");
    campaign c;
    char err[512] = "";
    CHECK_MSG(!campaign_load_string(HEAD "repetitions: 50000\nruns: [{name: a}, {name: b}]\n",
                                    "t.yaml", &c, err, sizeof err),
              "%s", err);
    campaign_free(&c);
    char *dir = temp_dir(), *msg, cmd[2048];
    char *cfg = sim_campaign(dir, "  - {name: a, repetitions: 100001}\n");
    snprintf(cmd, sizeof cmd, "sweep %s --dry-run", cfg);
    CHECK_INT(servelab_cmd(cmd, &msg), 2);
    CHECK_MSG(count_of(msg, "\n") == 1 && strstr(msg, "runs[0].repetitions: the campaign would"),
              "%.300s", msg);
}

/* C1: requests beyond RATE_PLAN_MAX_REQUESTS (1e8), given or made by rate x
 * duration, are refused when the campaign is read. */
TEST(defects_sweep_campaign_caps_requests) {
    load_fails(HEAD "requests: 9223372036854775807\nruns: [{name: a}]\n",
               "t.yaml:3: requests: 9223372036854775807 is too large (at most 100000000");
    load_fails(HEAD "runs:\n  - {name: a, requests: 100000001}\n",
               "t.yaml:4: runs[0].requests: 100000001 is too large (at most 100000000");
    load_fails(HEAD "rate: 1e12\nruns:\n  - {name: a, duration: 1}\n",
               "t.yaml:5: runs[0]: rate 1e+12/s for 1s would schedule about 1e+12 requests "
               "(at most 100000000 a run)");
    campaign c;
    char err[512] = "";
    CHECK_MSG(!campaign_load_string(HEAD "requests: 100000000\nrate: inf\nruns: [{name: a}]\n",
                                    "t.yaml", &c, err, sizeof err),
              "%s", err);
    campaign_free(&c);
    char *dir = temp_dir(), *msg, cmd[2048];
    char *cfg = write_text(dir, "c.yaml",
                           "name: t\ntarget: {sim: {}}\nrequests: 9223372036854775807\n"
                           "rate: inf\nruns: [{name: a}]\n");
    snprintf(cmd, sizeof cmd, "sweep %s --dry-run", cfg);
    CHECK_INT(servelab_cmd(cmd, &msg), 2);
    CHECK_MSG(strstr(msg, "c.yaml:3: requests: ") && count_of(msg, "\n") == 1, "%s", msg);
}
/* A folder that looks like someone's finished run. */
static void fake_run(const char *dir) {
    mkdir(dir, 0755);
    write_text(dir, "requests.csv", "request_id\nreq-0\n");
    write_text(dir, "meta.json", "{}\n");
}

/* D1: a link anywhere the sweep looks in --out is refused, naming it,
 * before anything is removed or written; what it points to is untouched. */
TEST(defects_sweep_force_never_follows_a_link_out_of_out) {
    char *dir = temp_dir(), out[1024], victim[1024], link[1100], *msg;
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    char *cfg = sim_campaign(dir, "  - {name: a}\n");
    CHECK_INT(sweep_into(cfg, out, "", &msg), 0);
    fake_run(victim);
    snprintf(link, sizeof link, "%s/link", out);
    CHECK(symlink("../victim", link) == 0);
    const char *modes[] = {"--force", "--resume", ""};
    for (int i = 0; i < 3; i++) {
        int rc = sweep_into(cfg, out, modes[i], &msg);
        CHECK_MSG(rc == 2 && strstr(msg, "/out/link is a symbolic link") &&
                      count_of(msg, "\n") == 1,
                  "sweep %s: rc %d: %s", modes[i], rc, msg);
        CHECK_MSG(exists(victim, "requests.csv") && exists(victim, "meta.json"),
                  "sweep %s emptied the run behind the link", modes[i]);
        CHECK(exists(out, "campaign.json") && exists(out, "a/rep-1/requests.csv"));
    }
    /* a link in place of a run's own folder: not written through either */
    char out2[1024], victim2[1024];
    snprintf(out2, sizeof out2, "%s/out2", dir);
    snprintf(victim2, sizeof victim2, "%s/victim2", dir);
    mkdir(out2, 0755);
    mkdir(victim2, 0755);
    snprintf(link, sizeof link, "%s/a", out2);
    CHECK(symlink("../victim2", link) == 0);
    CHECK_INT(sweep_into(cfg, out2, "", &msg), 2);
    CHECK_MSG(strstr(msg, "/out2/a is a symbolic link"), "%s", msg);
    CHECK(!exists(victim2, "rep-1"));
}

/* Sets status[i].dir of campaign.json to `dir`. */
static void tamper(const char *out, int i, const char *dir) {
    char p[1200];
    snprintf(p, sizeof p, "%s/campaign.json", out);
    json_t *doc = json_load_file(p, 0, NULL);
    CHECK(doc != NULL);
    json_t *e = json_array_get(json_object_get(doc, "status"), (size_t)i);
    CHECK(e != NULL);
    json_object_set_new(e, "dir", json_string(dir));
    CHECK(json_dump_file(doc, p, JSON_INDENT(2)) == 0);
    json_decref(doc);
}

/* D10: a kept repetition's directory is RUN/rep-K from its run and
 * repetition; an entry whose dir says otherwise is run again, and nothing
 * outside --out is touched. */
TEST(defects_sweep_resume_derives_the_directory_of_a_kept_run) {
    char *dir = temp_dir(), out[1024], victim[1024], p[1200], *msg;
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(victim, sizeof victim, "%s/victim2", dir);
    char *cfg = sim_campaign(dir, "  - {name: a, repetitions: 2}\n  - {name: b}\n");
    CHECK_INT(sweep_into(cfg, out, "", &msg), 0);
    fake_run(victim);
    tamper(out, 1, "a/rep-1");    /* a rep-2 */
    tamper(out, 2, "../victim2"); /* b rep-1 */
    CHECK_INT(sweep_into(cfg, out, "--resume", &msg), 0);
    CHECK_MSG(count_of(msg, "not kept, run again") == 2, "%s", msg);
    snprintf(p, sizeof p, "%s/campaign.json", out);
    char *cj = read_file(p, NULL);
    CHECK_MSG(count_of(cj, "\"kept\": true") == 1, "%s", cj); /* a rep-1 alone */
    CHECK(count_of(cj, "\"status\": \"ok\"") == 3);
    CHECK(exists(out, "a/rep-1/requests.csv") && exists(out, "a/rep-2/requests.csv") &&
          exists(out, "b/rep-1/requests.csv"));
    CHECK(exists(victim, "requests.csv") && exists(victim, "meta.json"));
    snprintf(p, sizeof p, "%s/report/summary.md", out);
    char *md = read_file(p, NULL);
    CHECK_MSG(md && strstr(md, "| a ") && strstr(md, "| b "), "%s", md ? md : "no summary.md");
}

/* A campaign of `shards` shards, runs a and b of 2 repetitions, against
 * port. */
static char *shard_campaign(const char *dir, int port, int shards) {
    char text[1024];
    snprintf(text, sizeof text,
             "name: sh\ntarget: {url: 'http://127.0.0.1:%d'}\nshards: %d\nno_sampling: true\n"
             "workload: {prompts: 'random:8:4'}\nrequests: 4\nrate: 100\ntimeout: 2\n"
             "repetitions: 2\nruns: [{name: a}, {name: b}]\n",
             port, shards);
    return write_text(dir, "sh.yaml", text);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* H3: shard 0 alone says which shards it waits for, and how long it will. */
TEST(defects_sweep_shard_0_says_which_shards_it_waits_for) {
    sim_proc sim = sim_start(NULL);
    char *dir = temp_dir(), cmd[4096], log[1100];
    char *cfg = shard_campaign(dir, sim.port, 4);
    snprintf(log, sizeof log, "%s/stderr", dir);
    snprintf(cmd, sizeof cmd, "exec %s sweep %s --shard 0/4 --out %s/o 2>%s >/dev/null",
             servelab_bin(), cfg, dir, log);
    pid_t pid = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    char *text = NULL;
    for (int i = 0; i < 150; i++) { /* its part, then 2 s of waiting: ~6 s */
        sleep_ms(100);
        free(text);
        text = read_file(log, NULL);
        if (text && strstr(text, "waiting for shards"))
            break;
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    sim_stop(&sim);
    CHECK_MSG(text && strstr(text, "sweep: waiting for shards 1-3 of 4 to finish a rep-1 (") &&
                  strstr(text, " s left)"),
              "%s", text ? text : "(no output)");
    CHECK_INT(count_of(text, "waiting for shards"), 1); /* at most one each 10 s */
}

/* H3: a shard that never comes fails the campaign once, after the first
 * repetition's wait, instead of every repetition after its own wait; the
 * other shards are told (shards/stopped). In-process, to wait 1 s beyond
 * the run's 2 s timeout instead of 600 s. */
TEST(defects_sweep_missing_shard_ends_the_campaign_once) {
    sim_proc sim = sim_start(NULL);
    char *dir = temp_dir(), out[1024], p[1200], err[1024] = "";
    snprintf(out, sizeof out, "%s/o", dir);
    campaign c;
    CHECK(campaign_load(shard_campaign(dir, sim.port, 2), &c, err, sizeof err) == 0);
    sweep_opts o = {.out = out, .quiet = 1, .shard = "0/2", .shards_wait_s = 1};
    double t0 = now_s();
    outcome rc = sweep_execute(&c, &o, err, sizeof err);
    double took = now_s() - t0;
    sim_stop(&sim);
    CHECK_MSG(rc == OUTCOME_FAILED, "outcome %d: %s", (int)rc, err);
    CHECK_MSG(took < 15, "took %.1f s (4 repetitions of waiting)", took);
    snprintf(p, sizeof p, "%s/campaign.json", out);
    json_t *doc = json_load_file(p, 0, NULL);
    json_t *status = json_object_get(doc, "status");
    CHECK_INT(json_array_size(status), 1);
    const char *why = json_string_value(json_object_get(json_array_get(status, 0), "error"));
    CHECK_MSG(why && strstr(why, "shard 1 of 2 did not finish a rep-1 within 3 s"), "%s",
              why ? why : "(no error)");
    CHECK(exists(out, "shards/stopped"));
    json_decref(doc);
    campaign_free(&c);
}
