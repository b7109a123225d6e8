/* cpus: CPU pinning and scheduling priority (see cpus.h for why). */
#include "common/cpus.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int cpus_pin(const char *list, char *err, int errlen) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const char *p = list;
    int any = 0;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10), b;
        if (end == p || errno || a < 0 || a >= CPU_SETSIZE)
            goto bad;
        b = a;
        p = end;
        if (*p == '-') {
            p++;
            b = strtol(p, &end, 10);
            if (end == p || errno || b < a || b >= CPU_SETSIZE)
                goto bad;
            p = end;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, &set);
        any = 1;
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (!any)
        goto bad;
    if (sched_setaffinity(0, sizeof set, &set)) {
        snprintf(err, errlen, "--cpus %s: %s", list, strerror(errno));
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "--cpus: expected a CPU list such as 0 or 1-3 or 0,2, got '%s'", list);
    return -1;
}

const char *cpus_realtime(void) {
    struct sched_param sp = {.sched_priority = 10};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
        return "fifo";
    if (setpriority(PRIO_PROCESS, 0, -10) == 0)
        return "nice";
    return "off";
}

void cpus_watcher_thread(void) {
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
}
