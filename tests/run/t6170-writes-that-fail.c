/* t6170-writes-that-fail: fault injection of the writes, as a habit. Each
 * command that writes a user's files (a run and its rows, a report, a
 * merge, a fit, a capacity search) runs again and again with a file-size
 * limit (RLIMIT_FSIZE, SIGXFSZ ignored) that makes every write taking a file
 * past N bytes fail with EFBIG, for N from 512 bytes up to past what the
 * command writes: every write point of every file is reached by some N.
 * Whatever fails, the command must end by itself (no signal), with a
 * message naming what could not be written and a non-zero exit, and every
 * JSON or profile it leaves under its own name must be whole: a reader
 * never meets half a file. The counts of runs and failures are printed for
 * the note (what each loop found). */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every JSON document directly in dir (those servelab writes whole) parses. */
static void json_files_whole(const char *dir, const char *what, int blocks) {
    const char *names[] = {"summary.json", "meta.json", "capacity.json", "campaign.json"};
    for (int i = 0; i < 4; i++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(p, &st))
            continue;
        json_error_t je;
        json_t *v = json_load_file(p, 0, &je);
        CHECK_MSG(v != NULL, "%s at %d blocks: %s is half written (%s)", what, blocks, p, je.text);
        json_decref(v);
    }
}

/* `servelab ARGS` with writes limited to `blocks` x 512 bytes a file: its
 * exit code (0, or the failure's), after the checks every run gets. */
static int limited(const char *args, int blocks, char **out) {
    char cmd[20000];
    snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f %d; exec %s %s 2>&1", blocks, servelab_bin(),
             args);
    int code;
    char *o = run_capture(cmd, &code);
    CHECK_MSG(code >= 0 && code < 128, "%s at %d blocks: ended by a signal (%d): %s", args, blocks,
              code, o);
    if (code != 0)
        CHECK_MSG(strstr(o, "servelab: ") != NULL, "%s at %d blocks: exit %d without a word: %s",
                  args, blocks, code, o);
    if (out)
        *out = o;
    else
        free(o);
    return code;
}

typedef struct loop_count {
    int runs, failed;
} loop_count;

/* Runs `fmt` (one %s: this try's output path, one %d: its number) at
 * limits of 1, 2, 4 ... blocks until one passes whole; `check` (may be
 * NULL) looks at what each try left. */
static loop_count loop(const char *name, const char *dir, const char *fmt,
                       void (*check)(const char *out, int code, int blocks)) {
    loop_count c = {0, 0};
    int code = -1;
    for (int blocks = 1, k = 0; blocks <= 1 << 16 && code != 0; blocks *= 2, k++) {
        char out[4200], args[16384];
        snprintf(out, sizeof out, "%s/%s-%d", dir, name, k);
        snprintf(args, sizeof args, fmt, out);
        code = limited(args, blocks, NULL);
        c.runs++;
        c.failed += code != 0;
        json_files_whole(out, name, blocks);
        if (check)
            check(out, code, blocks);
    }
    CHECK_MSG(code == 0, "%s never passed, even with 32 MB a file", name);
    printf("  %s: %d runs, %d failed writing, each with a message, every JSON whole\n", name,
           c.runs, c.failed);
    return c;
}

/* A fit's profile, when left, is one predict can read. */
static void profile_whole(const char *out, int code, int blocks) {
    struct stat st;
    char yaml[4400], dir[4400], args[9000], *o = NULL;
    snprintf(yaml, sizeof yaml, "%s.yaml", out);
    if (stat(yaml, &st))
        return;
    snprintf(dir, sizeof dir, "%s.check", out);
    snprintf(args, sizeof args, "predict --profile-file %s --requests 2 --out %s --quiet", yaml,
             dir);
    int rc = servelab_cmd(args, &o);
    CHECK_MSG(rc == 0, "fit (exit %d) at %d blocks left a profile that does not read: %s", code,
              blocks, o);
    free(o);
}

TEST_SLOW(writes_that_fail_leave_no_half_file_under_the_users_name) {
    char *dir = temp_dir(), args[8192];
    int total = 0;
    /* a run (virtual: the same writers as a measured one) */
    loop_count a =
        loop("run", dir, "predict --requests 200 --rate 50 --chunks --quiet --out %s", NULL);
    total += a.runs;
    /* a report of a whole run */
    snprintf(args, sizeof args, "predict --requests 200 --rate 50 --chunks --quiet --out %s/whole",
             dir);
    servelab_ok(args);
    char fmt[8192];
    snprintf(fmt, sizeof fmt, "report %s/whole --out %%s", dir);
    total += loop("report", dir, fmt, NULL).runs;
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
    snprintf(fmt, sizeof fmt, "merge %s/s0 %s/s1 --out %%s", dir, dir);
    total += loop("merge", dir, fmt, NULL).runs;
    /* a fit */
    snprintf(args, sizeof args,
             "predict --max-num-seqs 4 --api completions --ignore-eos --chunks --prompts "
             "random:64:16 --requests 300 --rate 3 --quiet --out %s/fitrun",
             dir);
    servelab_ok(args);
    snprintf(fmt, sizeof fmt, "fit %s/fitrun --min-gaps 5 --quiet --out %%s.yaml", dir);
    total += loop("fit", dir, fmt, profile_whole).runs;
    /* a capacity search, in virtual time */
    total += loop("capacity", dir,
                  "capacity --virtual --sim '--profile tiny --max-num-seqs 4' --slo ttft=1s "
                  "--requests 100 --precision 0.2 --confirm off --twin off --quiet --out %s",
                  NULL)
                 .runs;
    printf("  %d commands run with failing writes\n", total);
    CHECK(total > 20);
    free(dir);
}
