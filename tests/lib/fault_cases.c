/* fault_cases: the commands of the fault-injection loops and their
 * checks (fault_cases.h). */
#include "fault_cases.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

void fault_json_whole(const char *dir, const char *what, const char *when) {
    const char *names[] = {"summary.json", "meta.json", "capacity.json", "campaign.json"};
    for (int i = 0; i < 4; i++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(p, &st))
            continue;
        json_error_t je;
        json_t *v = json_load_file(p, 0, &je);
        CHECK_MSG(v != NULL, "%s, %s: %s is half written (%s)", what, when, p, je.text);
        json_decref(v);
    }
}

/* A fit's profile, when left, is one predict can read. */
static void profile_readable(const char *out, int code, const char *when) {
    struct stat st;
    char yaml[4400], dir[4400], args[9000], *o = NULL;
    snprintf(yaml, sizeof yaml, "%s.yaml", out);
    if (stat(yaml, &st))
        return;
    snprintf(dir, sizeof dir, "%s.check", out);
    snprintf(args, sizeof args, "predict --profile-file %s --requests 2 --out %s --quiet", yaml,
             dir);
    int rc = servelab_cmd(args, &o);
    CHECK_MSG(rc == 0, "fit (exit %d), %s, left a profile that does not read: %s", code, when, o);
    free(o);
}

void fault_cases_make(const char *dir, fault_case cases[FAULT_CASES]) {
    char args[8192];
    /* a run (virtual: the same writers as a measured one) */
    cases[0] = (fault_case){.name = "predict", .check = NULL};
    snprintf(cases[0].fmt, sizeof cases[0].fmt,
             "predict --requests 200 --rate 50 --chunks --quiet --out %%s");
    /* a report of a whole run */
    snprintf(args, sizeof args, "predict --requests 200 --rate 50 --chunks --quiet --out %s/whole",
             dir);
    servelab_ok(args);
    cases[1] = (fault_case){.name = "report", .check = NULL};
    snprintf(cases[1].fmt, sizeof cases[1].fmt, "report %s/whole --out %%s", dir);
    /* a merge of two shards */
    sim_proc sim = sim_start("--profile tiny");
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args,
                 "run --quiet --no-sampling --url http://127.0.0.1:%d --seed 3 --prompts "
                 "random:16:4 --max-tokens 4 --ignore-eos --rate 40 --requests 20 --shard %d/2 "
                 "--out %s/s%d",
                 sim.port, i, dir, i);
        servelab_ok(args);
    }
    sim_stop(&sim);
    cases[2] = (fault_case){.name = "merge", .check = NULL};
    snprintf(cases[2].fmt, sizeof cases[2].fmt, "merge %s/s0 %s/s1 --out %%s", dir, dir);
    /* a fit */
    snprintf(args, sizeof args,
             "predict --max-num-seqs 4 --api completions --ignore-eos --chunks --prompts "
             "random:64:16 --requests 300 --rate 3 --quiet --out %s/fitrun",
             dir);
    servelab_ok(args);
    cases[3] = (fault_case){.name = "fit", .check = profile_readable};
    snprintf(cases[3].fmt, sizeof cases[3].fmt, "fit %s/fitrun --min-gaps 5 --quiet --out %%s.yaml",
             dir);
    /* a capacity search, in virtual time */
    cases[4] = (fault_case){.name = "capacity", .check = NULL};
    snprintf(cases[4].fmt, sizeof cases[4].fmt, "%s",
             "capacity --virtual --sim '--profile tiny --max-num-seqs 4' --slo ttft=1s "
             "--requests 100 --precision 0.2 --confirm off --twin off --quiet --out %s");
}
