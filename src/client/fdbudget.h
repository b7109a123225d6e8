/* fdbudget: whether this process may open as many sockets as a run will
 * hold open at its peak, asked before any traffic. A run that runs out of
 * descriptors halfway records its later requests as failures of the client
 * (ERR_CLIENT), which is honest but wastes the run; when the peak is known
 * in advance it is better refused at once, with one line saying why.
 *
 * The peak is known in two cases: with --concurrency it is the cap (per
 * client thread, as each thread caps its own requests), and without one it
 * is every request when the whole schedule falls due within one --timeout
 * (--rate inf, or a short burst), since then all of them can be in flight
 * at once. A longer uncapped schedule holds what the server's latency
 * makes it hold, which no one knows beforehand: it is not refused. */
#ifndef SERVELAB_FDBUDGET_H
#define SERVELAB_FDBUDGET_H

#include <stddef.h>
#include <stdint.h>

typedef struct fd_demand {
    int concurrency;       /* 0: no cap */
    int threads;           /* client threads (each caps its own requests) */
    const int64_t *due_us; /* the schedule, in order */
    size_t n;
    double timeout_s; /* per request; 0: none */
} fd_demand;

/* 0 when the peak fits within RLIMIT_NOFILE (after what is open now and a
 * reserve for the loop, the row files and the sampler), else -1 with one
 * line in err. Call it after raise_fd_limit(). */
int fd_budget_check(const fd_demand *d, char *err, size_t errlen);

#endif
