/* The test runner: runs every registered test (or those whose name contains
 * one of the arguments) in its own child process with a time limit, prints
 * one line per test and ends with "N passed, N failed". */
#include "test.h"

#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 1024
#define TEST_TIMEOUT_S 300

static struct {
    const char *name, *file;
    void (*fn)(void);
} tests[MAX_TESTS];
static int n_tests;

void test_register(const char *name, void (*fn)(void), const char *file) {
    if (n_tests < MAX_TESTS) {
        tests[n_tests].name = name;
        tests[n_tests].fn = fn;
        tests[n_tests].file = file;
        n_tests++;
    }
}

void test_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "    %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(1);
}

static int selected(const char *name, int argc, char **argv) {
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]))
            return 1;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int passed = 0, failed = 0;
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < n_tests; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        fflush(stdout);
        double t0 = now_s();
        pid_t pid = fork();
        if (pid == 0) {
            setpgid(0, 0);
            alarm(TEST_TIMEOUT_S);
            tests[i].fn();
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        kill(-pid, SIGKILL); /* any server the test left behind */
        double ms = (now_s() - t0) * 1000;
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (ok) {
            passed++;
            printf("ok   %-48s %8.0f ms\n", tests[i].name, ms);
        } else {
            failed++;
            if (WIFSIGNALED(status))
                printf("FAIL %-48s (signal %d%s)\n", tests[i].name, WTERMSIG(status),
                       WTERMSIG(status) == SIGALRM ? ": timed out" : "");
            else
                printf("FAIL %-48s\n", tests[i].name);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
