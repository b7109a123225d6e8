/* What a run says about itself is true and useful: no "client CPU
 * saturated" on a run too short to tell, one warning for a late client with
 * the advice that fits (a client held off the CPU is not cured by more
 * threads), and summary.json's figures without float noise. */
#include "analysis/summary.h"
#include "support.h"
#include "test.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(run_short_run_no_cpu_saturation_note) {
    char *dir = temp_dir(), cmd[2048], *out, p[1200];
    sim_proc s = sim_start(NULL);
    snprintf(cmd, sizeof cmd,
             "run --quiet --no-sampling --url http://127.0.0.1:%d --rate inf --requests 3 "
             "--max-tokens 2 --out %s/r",
             s.port, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    /* the only warning it may give is a true one: a burst's requests that
     * waited for the client (a sanitized build, a busy machine) */
    CHECK_MSG(!strstr(out, "saturated") &&
                  count_of(out, "warning") == count_of(out, "waited more than 1 ms for the client"),
              "%s", out);
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    char *sj = read_file(p, NULL);
    CHECK_MSG(!strstr(sj, "client CPU saturated"), "%s", sj);
    sim_stop(&s);
}

/* The rule itself: busy for a run long enough to tell, and only then. */
TEST(run_cpu_saturated_only_when_long_enough_to_tell) {
    CHECK(!client_cpu_saturated(0.004, 0.004, 1)); /* 3 requests in 4 ms: start-up */
    CHECK(!client_cpu_saturated(0.9, 0.9, 1));
    CHECK(client_cpu_saturated(2.0, 1.9, 1));
    CHECK(!client_cpu_saturated(2.0, 1.9, 2)); /* two threads: half used */
    CHECK(client_cpu_saturated(2.0, 3.7, 2));
    CHECK(!client_cpu_saturated(2.0, 1.0, 1));
}

/* No number in the file has more than 12 significant digits. */
static void no_float_noise(const char *text) {
    for (const char *c = text; *c; c++) {
        if (!isdigit((unsigned char)*c) ||
            (c > text &&
             (isdigit((unsigned char)c[-1]) || c[-1] == '.' || isalpha((unsigned char)c[-1]))))
            continue;
        int digits = 0, leading = 1; /* significant digits: leading zeros do not count */
        const char *d = c;
        for (; isdigit((unsigned char)*d) || *d == '.'; d++) {
            leading &= *d == '0' || *d == '.';
            digits += *d != '.' && !leading;
        }
        CHECK_MSG(digits <= 12, "'%.*s' has %d digits", (int)(d - c), c, digits);
    }
}

TEST_ALONE(run_held_off_cpu_warns_once_with_fitting_advice) {
    char *dir = temp_dir(), cmd[2048], p[1200];
    sim_proc s = sim_start(NULL);
    snprintf(p, sizeof p, "%s/run.err", dir);
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --no-sampling --url http://127.0.0.1:%d --rate 100 "
             "--requests 150 --max-tokens 2 --out %s/r >/dev/null 2>%s",
             servelab_bin(), s.port, dir, p);
    pid_t pid = spawn_sh(cmd, PROC_INHERIT, PROC_INHERIT);
    sleep_ms(500);
    kill(pid, SIGSTOP); /* held off the CPU, as another process would hold it */
    sleep_ms(200);
    kill(pid, SIGCONT);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *err = read_file(p, NULL);
    CHECK_MSG(strstr(err, "the client's schedule lag p99 was") && strstr(err, "held off the CPU") &&
                  strstr(err, "--threads will not help"),
              "%s", err);
    int warnings = 0;
    for (const char *c = err; (c = strstr(c, "warning:")); c++)
        warnings++;
    CHECK_INT(warnings, 1);
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    no_float_noise(read_file(p, NULL));
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    no_float_noise(read_file(p, NULL));
    sim_stop(&s);
}
