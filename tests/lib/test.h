/* test: servelab's tiny test framework. TEST(name) registers a function at
 * startup; the runner (tests/lib/main.c, whose top comment says how it works)
 * forks one child per test, so a crash or a hang fails that test alone,
 * runs several at a time, and ends with "N passed, N failed".
 *
 * Running: `make test` runs everything, `make test-fast` all but the
 * TEST_SLOW tests; `build/test_runner [-j N] [--fast] [--list] [NAME...]`
 * runs the tests whose names contain a NAME (make test TESTS="NAME..."
 * passes them). TEST_JOBS=N (or -j N) says how many run at once; the
 * default is the number of online cores; TEST_JOBS=1 runs one at a time.
 *
 * Marks, for the runner's schedule:
 *   TEST(name)        runs beside other tests.
 *   TEST_ALONE(name)  measures time: a latency or lag bound, a timeout's
 *                     precision, tokens on a step grid, a count raced
 *                     against the clock. It runs with no other test
 *                     running, since a neighbour loading the CPUs would
 *                     move its numbers. Mark every test whose time bound is
 *                     close to what it expects; a bound far above it (ten
 *                     times or more, there only to catch a hang) needs no
 *                     mark. The runner starts TEST_ALONE tests first.
 *   TEST_SLOW(name)   a long end-to-end run (the demo's minute, calibrate,
 *                     the 2,000-request and fault-matrix runs, a 10 s
 *                     timeout waited out): make test-fast (--fast) leaves
 *                     it out, make test runs it.
 *   TEST_SLOW_ALONE(name)  both.
 *   TEST_MARKED(name, marks)  any TEST_MARK_* bits.
 *
 * Folders: each test runs with SERVELAB_TEST_DIR (and TMPDIR) set to its
 * own folder, /tmp/servelab-test-NAME-XXXXXX; temp_dir() (tests/lib/support.h)
 * makes its folders inside it, and the test's stdout and stderr go to the
 * file "output" there. The runner removes the folder when the test passes
 * and keeps it when it fails: its path ends the FAIL line, and the test's
 * output is printed below that line (TEST_VERBOSE=1 prints passing tests'
 * output too). */
#ifndef SERVELAB_TEST_H
#define SERVELAB_TEST_H

#include <stdio.h>
#include <stdlib.h>

/* A test's marks (bits), as the runner reads them. */
enum { TEST_MARK_ALONE = 1, TEST_MARK_SLOW = 2 };

void test_register(const char *name, void (*fn)(void), const char *file, int marks);
_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define TEST_MARKED(fn, marks)                                                                     \
    static void fn(void);                                                                          \
    __attribute__((constructor)) static void register_##fn(void) {                                 \
        test_register(#fn, fn, __FILE__, marks);                                                   \
    }                                                                                              \
    static void fn(void)

#define TEST(fn) TEST_MARKED(fn, 0)
#define TEST_ALONE(fn) TEST_MARKED(fn, TEST_MARK_ALONE)
#define TEST_SLOW(fn) TEST_MARKED(fn, TEST_MARK_SLOW)
#define TEST_SLOW_ALONE(fn) TEST_MARKED(fn, TEST_MARK_SLOW | TEST_MARK_ALONE)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "%s", #cond);                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, __VA_ARGS__);                                            \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_);               \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol)))                                               \
            test_fail(__FILE__, __LINE__, "%s ~= %s: %.9g vs %.9g (tol %g)", #a, #b, a_, b_,       \
                      (double)(tol));                                                              \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_))                                                          \
            test_fail(__FILE__, __LINE__, "%s == %s: '%s' != '%s'", #a, #b, a_ ? a_ : "(null)",    \
                      b_ ? b_ : "(null)");                                                         \
    } while (0)

#endif
