/* The README's "Hard to break" section names the tests that hold each
 * guarantee: every name it gives is a test of this suite, so the section
 * cannot promise what no test checks. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Is `name` a line's first word of the runner's --list? */
static int listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *l = list; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        if (!strncmp(l, name, n) && (l[n] == ' ' || l[n] == '\n' || !l[n]))
            return 1;
    return 0;
}

TEST(readme_hard_to_break_names_real_tests) {
    char *readme = read_file("README.md", NULL);
    CHECK(readme != NULL);
    char *start = strstr(readme, "## Hard to break"),
         *end = start ? strstr(start + 3, "\n## ") : NULL;
    CHECK_MSG(start && end, "no Hard to break section");
    *end = 0;
    char self[1024], cmd[1100];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len] = 0;
    snprintf(cmd, sizeof cmd, "%s --list", self); /* this runner's own tests */
    char *list = run_capture(cmd, NULL);
    CHECK(list && *list);
    int named = 0;
    for (char *p = strchr(start, '`'); p; p = strchr(p + 1, '`')) {
        char *q = strchr(p + 1, '`');
        if (!q)
            break;
        size_t n = (size_t)(q - p - 1);
        char name[128];
        if (n && n < sizeof name && memchr(p + 1, '_', n) && !memchr(p + 1, ' ', n) &&
            !memchr(p + 1, '.', n) && !memchr(p + 1, '-', n)) {
            snprintf(name, sizeof name, "%.*s", (int)n, p + 1);
            CHECK_MSG(listed(list, name), "the README names %s, which is no test", name);
            named++;
        }
        p = q;
    }
    CHECK_MSG(named >= 20, "only %d tests named", named);
}
