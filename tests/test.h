/* test: servelab's tiny test framework. TEST(name) registers a function at
 * startup; the runner (tests/main.c) forks one child per test so a crash or
 * a hang fails that test alone, and ends with "N passed, N failed". */
#ifndef SERVELAB_TEST_H
#define SERVELAB_TEST_H

#include <stdio.h>
#include <stdlib.h>

void test_register(const char *name, void (*fn)(void), const char *file);
_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define TEST(fn)                                                                                   \
    static void fn(void);                                                                          \
    __attribute__((constructor)) static void register_##fn(void) {                                 \
        test_register(#fn, fn, __FILE__);                                                          \
    }                                                                                              \
    static void fn(void)

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
