/* hostinfo: read from uname(2), /proc/cpuinfo and sysconf. */
#include "common/hostinfo.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef SERVELAB_GIT_COMMIT
#define SERVELAB_GIT_COMMIT "unknown"
#endif

static void cpu_model(char *out, size_t cap) {
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ' || *v == '\t')
                    v++;
                v[strcspn(v, "\n")] = 0;
                snprintf(out, cap, "%s", v);
            }
            break;
        }
    }
    fclose(f);
}

json_t *host_info_json(void) {
    struct utsname u;
    uname(&u);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    return json_pack("{s:s,s:s,s:i,s:s,s:s}", "hostname", u.nodename, "cpu_model", cpu, "cores",
                     (int)sysconf(_SC_NPROCESSORS_ONLN), "kernel", u.release, "arch", u.machine);
}

json_t *tool_info_json(void) {
    return json_pack("{s:s,s:s,s:s}", "name", "servelab", "version", SERVELAB_VERSION, "git_commit",
                     SERVELAB_GIT_COMMIT);
}
