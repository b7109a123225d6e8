/* fdbudget: the peak of connections against the descriptor limit (see
 * fdbudget.h for when the peak is known). What is open now is counted in
 * /proc/self/fd; the reserve covers what a run opens besides its request
 * sockets: per client loop its epoll and notification descriptors and
 * curl's wakeup pair, and once the row files, the sampler's files and its
 * /metrics connection, and the GPU library's device files. */
#include "client/fdbudget.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>

#define RESERVE_FIXED 32
#define RESERVE_PER_THREAD 8

/* Descriptors open now; 3 when /proc is not there to say. */
static long open_now(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 3;
    long n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own */
}

/* The most connections the run can hold at once; 0: not known beforehand. */
static size_t peak_connections(const fd_demand *d) {
    if (d->n == 0)
        return 0;
    if (d->concurrency > 0) {
        size_t cap = (size_t)d->concurrency * (size_t)(d->threads > 1 ? d->threads : 1);
        return cap < d->n ? cap : d->n;
    }
    double span_s = (double)(d->due_us[d->n - 1] - d->due_us[0]) / 1e6;
    return d->timeout_s <= 0 || span_s < d->timeout_s ? d->n : 0;
}

int fd_budget_check(const fd_demand *d, char *err, size_t errlen) {
    struct rlimit rl;
    size_t peak = peak_connections(d);
    if (!peak || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    int threads = d->threads > 1 ? d->threads : 1;
    long reserve = open_now() + RESERVE_FIXED + RESERVE_PER_THREAD * threads;
    long left = (long)rl.rlim_cur - reserve;
    if ((double)peak <= (double)left)
        return 0;
    if (left < 0)
        left = 0;
    if (d->concurrency > 0)
        snprintf(err, errlen,
                 "--concurrency %d%s can hold %zu connections open at once, more than the %ld "
                 "file descriptors left within this process's limit (ulimit -n %lu): raise the "
                 "limit or lower --concurrency",
                 d->concurrency, threads > 1 ? " on each client thread" : "", peak, left,
                 (unsigned long)rl.rlim_cur);
    else
        snprintf(err, errlen,
                 "all %zu requests can be in flight at once (they fall due within --timeout and "
                 "no --concurrency caps them), more than the %ld file descriptors left within "
                 "this process's limit (ulimit -n %lu): raise the limit or cap them with "
                 "--concurrency",
                 peak, left, (unsigned long)rl.rlim_cur);
    return -1;
}
