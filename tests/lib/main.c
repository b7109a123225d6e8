/* The test runner: runs every registered test (or those whose name contains
 * one of the NAME arguments) in its own child process, several at a time,
 * prints one line per test, "ok   NAME   MS ms" or "FAIL NAME ...", in the
 * order they finish, and ends with "N passed, N failed" as its last line;
 * its exit status is 1 when any test failed.
 *
 *   build/test_runner [-j N] [--fast] [--list] [NAME...]
 *   (make test and make test-fast run it with SERVELAB=./servelab)
 *
 * Jobs: as many tests run at once as there are online cores; TEST_JOBS=N in
 * the environment or -j N (which wins) chooses another number; 1 runs them
 * one after the other.
 *
 * Isolation: each test is a forked child in its own process group, with
 * TEST_TIMEOUT_S to live (SIGALRM in the child; the runner kills it itself
 * KILL_GRACE_S later if that did not end it). When the child ends, the
 * runner kills its whole process group, so a simulator or client the test
 * left behind goes too.
 *
 * Folders: each test gets its own folder, /tmp/servelab-test-NAME-XXXXXX
 * (NAME cut to 32 characters; $TMPDIR instead of /tmp when set), named to
 * the child by SERVELAB_TEST_DIR (temp_dir() makes its folders inside it)
 * and by TMPDIR (so whatever else the test's programs create in the
 * temporary directory lands there too). The child's stdout and stderr, its
 * simulators' included, go to the file "output" in that folder. A test that
 * passes has its folder removed and its output dropped (TEST_VERBOSE=1
 * prints it below the ok line); a test that fails keeps its folder, whose
 * path ends its FAIL line, and its output (its CHECK message, what it
 * printed) is printed right below that line, so it never mixes with other
 * tests' lines. After a green run no /tmp/servelab-test-* folder is left.
 *
 * Marks (tests/lib/test.h): a TEST_ALONE test measures time (latencies, lag, a
 * timeout's precision, a count raced against the clock), so it runs with no
 * other test running; the runner starts those first, one by one, then the
 * rest in parallel, the TEST_SLOW ones first among them so that the long
 * runs overlap the short ones. A TEST_SLOW test is a minute-long end-to-end
 * run: --fast (make test-fast) leaves those out and says how many. --list
 * prints the selected tests, in the order they would start, with their
 * marks. */
#include "cli/commands.h"
#include "common/notice.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 1024
#define MAX_JOBS 256
#define TEST_TIMEOUT_S 300
/* How long after its own alarm the runner waits before killing a child. */
#define KILL_GRACE_S 30
/* A failing test's output beyond this is cut to its last part. */
#define MAX_SHOWN_OUTPUT (64 * 1024)

typedef struct test_case {
    const char *name, *file;
    void (*fn)(void);
    int marks;
} test_case;

static test_case tests[MAX_TESTS];
static int n_tests;

void test_register(const char *name, void (*fn)(void), const char *file, int marks) {
    if (n_tests < MAX_TESTS)
        tests[n_tests++] = (test_case){name, file, fn, marks};
}

void test_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout); /* what the test printed comes before why it failed */
    fprintf(stderr, "    %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(1);
}

/* ======================= options and the order of tests ======================= */

typedef struct options {
    int jobs;
    int fast;    /* leave TEST_SLOW tests out */
    int list;    /* print the selected tests and their marks, run nothing */
    int verbose; /* print passing tests' output too */
    char **names;
    int n_names;
} options;

static int parse_jobs(const char *s, int *jobs) {
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || *end || n < 1 || n > MAX_JOBS)
        return -1;
    *jobs = (int)n;
    return 0;
}

static int usage(const char *why, const char *arg) {
    fprintf(stderr, "test_runner: %s%s%s\nusage: test_runner [-j N] [--fast] [--list] [NAME...]\n",
            why, arg ? ": " : "", arg ? arg : "");
    return -1;
}

/* The defaults come from the environment; arguments override them. */
static int parse_options(int argc, char **argv, options *o) {
    const char *env = getenv("TEST_JOBS");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = cores > 0 ? (int)(cores < MAX_JOBS ? cores : MAX_JOBS) : 1;
    if (env && *env && parse_jobs(env, &o->jobs))
        return usage("TEST_JOBS must be a number from 1 to 256", env);
    const char *verbose = getenv("TEST_VERBOSE");
    o->verbose = verbose && *verbose && strcmp(verbose, "0");
    o->names = argv + 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--fast")) {
            o->fast = 1;
        } else if (!strcmp(a, "--list")) {
            o->list = 1;
        } else if (!strncmp(a, "-j", 2)) {
            const char *n = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : "");
            if (parse_jobs(n, &o->jobs))
                return usage("-j needs a number from 1 to 256", n);
        } else if (a[0] == '-') {
            return usage("unknown option", a);
        } else {
            o->names[o->n_names++] = argv[i];
        }
    }
    return 0;
}

static int name_selected(const char *name, const options *o) {
    if (o->n_names == 0)
        return 1;
    for (int i = 0; i < o->n_names; i++)
        if (strstr(name, o->names[i]))
            return 1;
    return 0;
}

/* The selected tests in the order they start: the TEST_ALONE ones first
 * (nothing else runs then), then the slow ones, so the long runs overlap
 * with many short ones, then the rest as registered. Returns their number;
 * *skipped counts the slow tests --fast left out. */
static int plan_order(const options *o, int *order, int *skipped) {
    int n = 0;
    *skipped = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < n_tests; i++) {
            int marks = tests[i].marks;
            int group = (marks & TEST_MARK_ALONE) ? 0 : (marks & TEST_MARK_SLOW) ? 1 : 2;
            if (group != pass || !name_selected(tests[i].name, o))
                continue;
            if (o->fast && (marks & TEST_MARK_SLOW))
                ++*skipped;
            else
                order[n++] = i;
        }
    return n;
}

static void list_tests(const int *order, int n) {
    for (int k = 0; k < n; k++) {
        const test_case *t = &tests[order[k]];
        printf("%-56s%s%s\n", t->name, (t->marks & TEST_MARK_ALONE) ? " alone" : "",
               (t->marks & TEST_MARK_SLOW) ? " slow" : "");
    }
}

/* ======================= one test: its folder, its child ======================= */

typedef struct running {
    pid_t pid; /* 0: a free job slot */
    int test;
    double started;
    int killed; /* the runner had to kill it: it outlived its time */
    char dir[PATH_MAX];
} running;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The name is cut to NAME_IN_DIR characters: the folder is the test's
 * TMPDIR, and a Unix socket made there (Chromium's SingletonSocket, ~46
 * characters below TMPDIR) must fit in sun_path's 108 bytes. */
#define NAME_IN_DIR 32

static int make_test_dir(const char *name, char *dir, size_t cap) {
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(dir, cap, "%s/servelab-test-%.*s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
                     NAME_IN_DIR, name);
    if (n < 0 || (size_t)n >= cap || !mkdtemp(dir)) {
        fprintf(stderr, "test_runner: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* In the child: output to the folder's file, the folder in the environment,
 * a time limit, then the test. */
static _Noreturn void run_child(const test_case *t, const char *dir) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the runner blocks SIGCHLD: not the test */
    setpgid(0, 0);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/output", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        _exit(126);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    setvbuf(stdout, NULL, _IOLBF, 0); /* its lines and its CHECK messages in order */
    setenv("SERVELAB_TEST_DIR", dir, 1);
    setenv("TMPDIR", dir, 1);
    alarm(TEST_TIMEOUT_S);
    t->fn();
    fflush(stdout);
    _exit(0);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(path) ? -1 : 0;
}

static void remove_dir(const char *dir) {
    if (nftw(dir, remove_entry, 32, FTW_DEPTH | FTW_PHYS))
        printf("warning: could not remove all of %s: %s\n", dir, strerror(errno));
}

static int start_test(running *r, int test) {
    fflush(stdout);
    if (make_test_dir(tests[test].name, r->dir, sizeof r->dir))
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "test_runner: fork: %s\n", strerror(errno));
        remove_dir(r->dir);
        return -1;
    }
    if (pid == 0)
        run_child(&tests[test], r->dir);
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    r->pid = pid;
    r->test = test;
    r->started = now_s();
    r->killed = 0;
    return 0;
}

/* The test's output file, its last MAX_SHOWN_OUTPUT bytes when longer. */
static void print_output(const char *dir) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/output", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (size > MAX_SHOWN_OUTPUT) {
        printf("    [%ld bytes of output, the last %d shown; all of it in %s]\n", size,
               MAX_SHOWN_OUTPUT, path);
        fseek(f, size - MAX_SHOWN_OUTPUT, SEEK_SET);
    } else {
        rewind(f);
    }
    char buf[8192];
    size_t n, last = 0;
    char end = '\n';
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        fwrite(buf, 1, n, stdout);
        last = n;
        end = buf[n - 1];
    }
    if (last && end != '\n')
        putchar('\n');
    fclose(f);
}

/* The child has ended: kill what it left, print its line (and, when it
 * failed, its output), and remove its folder when it passed. */
static int finish_test(running *r, int status, const options *o) {
    kill(-r->pid, SIGKILL); /* any server the test left behind */
    const char *name = tests[r->test].name;
    double ms = (now_s() - r->started) * 1000;
    int ok = !r->killed && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
        printf("ok   %-48s %8.0f ms\n", name, ms);
        if (o->verbose)
            print_output(r->dir);
        remove_dir(r->dir);
    } else {
        char why[64] = "";
        if (r->killed)
            snprintf(why, sizeof why, " (killed: timed out)");
        else if (WIFSIGNALED(status))
            snprintf(why, sizeof why, " (signal %d%s)", WTERMSIG(status),
                     WTERMSIG(status) == SIGALRM ? ": timed out" : "");
        printf("FAIL %-48s %8.0f ms%s  kept %s\n", name, ms, why, r->dir);
        print_output(r->dir);
    }
    fflush(stdout);
    r->pid = 0;
    return ok;
}

/* ======================= the schedule ======================= */

typedef struct schedule {
    running slots[MAX_JOBS];
    int jobs, n_running, alone_running;
    int passed, failed;
} schedule;

/* A TEST_ALONE test starts only when nothing runs; nothing starts beside it. */
static int may_start(const schedule *s, int test) {
    if (s->n_running >= s->jobs || s->alone_running)
        return 0;
    return !(tests[test].marks & TEST_MARK_ALONE) || s->n_running == 0;
}

static void launch(schedule *s, int test) {
    for (int k = 0; k < s->jobs; k++) {
        running *r = &s->slots[k];
        if (r->pid)
            continue;
        if (start_test(r, test)) {
            printf("FAIL %-48s (could not start)\n", tests[test].name);
            s->failed++;
            return;
        }
        s->n_running++;
        s->alone_running += (tests[test].marks & TEST_MARK_ALONE) != 0;
        return;
    }
}

/* Kill a child that outlived its alarm by KILL_GRACE_S. */
static void kill_overdue(schedule *s) {
    double now = now_s();
    for (int k = 0; k < s->jobs; k++) {
        running *r = &s->slots[k];
        if (r->pid && !r->killed && now - r->started > TEST_TIMEOUT_S + KILL_GRACE_S) {
            kill(-r->pid, SIGKILL);
            kill(r->pid, SIGKILL);
            r->killed = 1;
        }
    }
}

/* Wait (SIGCHLD is blocked) until at least one child has ended; finish
 * every child that has. */
static void wait_some(schedule *s, const options *o) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    struct timespec tick = {1, 0};
    for (int reaped = 0; !reaped;) {
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            for (int k = 0; k < s->jobs; k++) {
                running *r = &s->slots[k];
                if (r->pid != pid)
                    continue;
                int alone = (tests[r->test].marks & TEST_MARK_ALONE) != 0;
                if (finish_test(r, status, o))
                    s->passed++;
                else
                    s->failed++;
                s->n_running--;
                s->alone_running -= alone;
                reaped = 1;
            }
        }
        if (!reaped) {
            sigtimedwait(&chld, NULL, &tick);
            kill_overdue(s);
        }
    }
}

static void run_all(schedule *s, const int *order, int n, const options *o) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int next = 0;
    while (next < n || s->n_running > 0) {
        while (next < n && may_start(s, order[next]))
            launch(s, order[next++]);
        if (s->n_running > 0)
            wait_some(s, o);
    }
}

int main(int argc, char **argv) {
    options o = {0};
    notice_set_default(cli_notices()); /* in-process calls warn as the commands do */
    if (parse_options(argc, argv, &o))
        return 2;
    static int order[MAX_TESTS];
    int skipped, n = plan_order(&o, order, &skipped);
    if (o.list) {
        list_tests(order, n);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    static schedule s;
    s.jobs = o.jobs;
    run_all(&s, order, n, &o);
    if (skipped)
        printf("(%d slow test%s left out by --fast)\n", skipped, skipped == 1 ? "" : "s");
    printf("%d passed, %d failed\n", s.passed, s.failed);
    return s.failed ? 1 : 0;
}
