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
#include "fault_cases.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Runs `fmt` (one %s: this try's output path) at
 * limits of 1, 2, 4 ... blocks until one passes whole; `check` (may be
 * NULL) looks at what each try left. */
static loop_count loop(const char *name, const char *dir, const char *fmt, fault_check_fn check) {
    loop_count c = {0, 0};
    int code = -1;
    for (int blocks = 1, k = 0; blocks <= 1 << 16 && code != 0; blocks *= 2, k++) {
        char out[4200], args[16384];
        snprintf(out, sizeof out, "%s/%s-%d", dir, name, k);
        snprintf(args, sizeof args, fmt, out);
        code = limited(args, blocks, NULL);
        c.runs++;
        c.failed += code != 0;
        char when[64];
        snprintf(when, sizeof when, "at %d blocks", blocks);
        fault_json_whole(out, name, when);
        if (check)
            check(out, code, when);
    }
    CHECK_MSG(code == 0, "%s never passed, even with 32 MB a file", name);
    printf("  %s: %d runs, %d failed writing, each with a message, every JSON whole\n", name,
           c.runs, c.failed);
    return c;
}

TEST_SLOW(writes_that_fail_leave_no_half_file_under_the_users_name) {
    char *dir = temp_dir();
    fault_case cases[FAULT_CASES];
    fault_cases_make(dir, cases);
    int total = 0;
    for (int i = 0; i < FAULT_CASES; i++)
        total += loop(cases[i].name, dir, cases[i].fmt, cases[i].check).runs;
    printf("  %d commands run with failing writes\n", total);
    CHECK(total > 20);
    free(dir);
}
