/* t6180-allocations-that-fail: fault injection of the allocations, as a
 * habit (SQLite's malloc loop). Each command that writes a user's files (a
 * run against a simulator, a virtual run, a report, a merge, a fit, a
 * capacity search) runs once counting its calls to malloc, calloc and
 * realloc (tests/faults/failalloc.c, preloaded), then again and again with
 * the N-th of them failing: every N up to 40 and then points spread over
 * the rest. glibc's own allocations fail too (fopen, getaddrinfo, qsort),
 * and so do the libraries', which go through servelab's checked allocator.
 * Whatever fails, the command must end either by itself, with a message
 * naming what went wrong when it fails, or, when the checked allocator
 * was refused, by abort after its one line "fatal: out of memory"; never
 * by another signal, never in silence; and every JSON document or profile
 * it leaves under its own name must be whole. The counts of points, and of
 * each way the commands ended, are printed for the note. */
#include "fault_cases.h"
#include "support.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* build/failalloc.so, beside this test runner. */
static const char *failalloc_so(void) {
    static char path[4200];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    CHECK(slash != NULL);
    *slash = 0;
    snprintf(path, sizeof path, "%s/failalloc.so", exe);
    struct stat st;
    CHECK_MSG(stat(path, &st) == 0, "no %s: `make test` builds it (make %s)", path, path);
    return path;
}

typedef struct loop_count {
    int points;        /* commands run with one allocation failing */
    long calls;        /* allocations the command makes when none fails */
    int passed;        /* the failure was absorbed: exit 0 */
    int said;          /* exit non-zero with a line naming what went wrong */
    int out_of_memory; /* the checked allocator's line, then abort */
} loop_count;

/* `servelab ARGS` with allocation `at` failing (0: none; then the count of
 * calls is written to count_file): how it ended, checked. */
static int failing(const char *args, long at, const char *count_file, const char *what,
                   loop_count *c) {
    char cmd[20000], counting[4500] = "";
    if (count_file)
        snprintf(counting, sizeof counting, "SERVELAB_FAILALLOC_COUNT=%s", count_file);
    snprintf(cmd, sizeof cmd, "LD_PRELOAD=%s SERVELAB_FAILALLOC=%ld %s exec %s %s 2>&1",
             failalloc_so(), at, counting, servelab_bin(), args);
    int code;
    char *o = run_capture(cmd, &code);
    CHECK(o != NULL);
    CHECK_MSG(at > 0 || code == 0, "%s fails with no failure injected (exit %d): %s", what, code,
              o);
    if (code == 128 + SIGABRT) {
        CHECK_MSG(strstr(o, "servelab: fatal: out of memory allocating "),
                  "%s, allocation %ld failed: aborted without the out-of-memory line: %s", what, at,
                  o);
        c->out_of_memory++;
    } else {
        CHECK_MSG(code >= 0 && code < 128, "%s, allocation %ld failed: ended by signal %d: %s",
                  what, at, code - 128, o);
        if (code != 0) {
            CHECK_MSG(strstr(o, "servelab: ") != NULL,
                      "%s, allocation %ld failed: exit %d without a word: %s", what, at, code, o);
            c->said++;
        } else {
            c->passed++;
        }
    }
    free(o);
    return code;
}

/* The N to fail: 1..40, then 40 more spread evenly over the rest. */
static long point(int k, long calls) {
    if (k < 40)
        return k + 1;
    long rest = calls > 40 ? calls - 40 : 0;
    return 41 + (long)((double)(k - 40) * rest / 40);
}

/* Runs `fmt` (one %s: this try's output path) once counting, then with
 * each chosen allocation failing; `check` (may be NULL) looks at what each
 * try left. */
static loop_count loop(const char *name, const char *dir, const char *fmt, fault_check_fn check) {
    loop_count c = {0};
    char out[4200], args[16384], count_file[4400];
    snprintf(out, sizeof out, "%s/%s-count", dir, name);
    snprintf(args, sizeof args, fmt, out);
    snprintf(count_file, sizeof count_file, "%s/%s.calls", dir, name);
    failing(args, 0, count_file, name, &c);
    char *n = read_file(count_file, NULL);
    CHECK_MSG(n && (c.calls = atol(n)) > 0, "%s: no count of its allocations", name);
    free(n);
    c.passed = 0;
    long last = 0;
    for (int k = 0; k < 80; k++) {
        long at = point(k, c.calls);
        if (at > c.calls || at == last)
            continue;
        last = at;
        snprintf(out, sizeof out, "%s/%s-%d", dir, name, k);
        snprintf(args, sizeof args, fmt, out);
        int code = failing(args, at, NULL, name, &c);
        c.points++;
        char when[64];
        snprintf(when, sizeof when, "allocation %ld failed", at);
        fault_json_whole(out, name, when);
        if (check)
            check(out, code, when);
    }
    printf("  %s: %ld allocations, %d failed one at a time: %d absorbed (exit 0), %d said what "
           "failed, %d out of memory (one line, abort)\n",
           name, c.calls, c.points, c.passed, c.said, c.out_of_memory);
    return c;
}

/* A run, when it says it passed, has every row. */
static void rows_whole(const char *out, int code, const char *when) {
    if (code != 0)
        return;
    char p[4400];
    snprintf(p, sizeof p, "%s/requests.csv", out);
    char *csv = read_file(p, NULL);
    CHECK_MSG(csv && count_of(csv, "\n") == 1 + 30, "run exit 0, %s, but %d lines in requests.csv",
              when, csv ? count_of(csv, "\n") : -1);
    free(csv);
}

TEST_SLOW(allocations_that_fail_end_in_one_line_and_leave_no_half_file) {
    if (servelab_is_sanitized()) {
        printf("  not run: the sanitizer's allocator must come first; `make test` runs this "
               "test\n");
        return;
    }
    char *dir = temp_dir(), fmt[8192];
    int points = 0;
    /* a run against a simulator (its client, its threads, its files) */
    sim_proc sim = sim_start("--profile tiny");
    snprintf(fmt, sizeof fmt,
             "run --quiet --url http://127.0.0.1:%d --prompts random:16:4 --max-tokens 4 "
             "--ignore-eos --rate 200 --requests 30 --out %%s",
             sim.port);
    points += loop("run", dir, fmt, rows_whole).points;
    sim_stop(&sim);
    /* a virtual run, a report, a merge, a fit, a capacity search */
    fault_case cases[FAULT_CASES];
    fault_cases_make(dir, cases);
    for (int i = 0; i < FAULT_CASES; i++)
        points += loop(cases[i].name, dir, cases[i].fmt, cases[i].check).points;
    printf("  %d commands run with one allocation failing\n", points);
    CHECK(points > 200);
    free(dir);
}
