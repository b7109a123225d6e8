/* server_death: how a managed server that died during a run died, for
 * campaign.json: killed by a signal (which), out of memory, or an exit
 * code. Out of memory is what the evidence shows, in this order: the
 * kernel's log (/dev/kmsg) names the pid as OOM-killed; its cgroup counted
 * an OOM kill since it started; it was SIGKILLed with its sampled RSS at
 * 90% or more of a memory limit it ran under (the cgroup's, or RLIMIT_AS);
 * or it died (any way but exit 0) and its log says an allocation failed,
 * as a server under `ulimit -v` / `prlimit --as` does when malloc returns
 * NULL. Without any of these a SIGKILL stays a signal: the kernel's OOM
 * killer is not the only sender of SIGKILL. */
#ifndef SERVELAB_SERVER_DEATH_H
#define SERVELAB_SERVER_DEATH_H

#include "monitor/procstat.h"
#include "target/server_proc.h"

#include <jansson.h>

/* What was known of the server before it died. */
typedef struct server_death_facts {
    int wait_status;            /* as from waitpid */
    int pid;                    /* the pid it had */
    const procstat_limits *lim; /* read when it became ready */
    long oom_kills_at_start;    /* its cgroup's count then; -1: unknown */
    double peak_rss_bytes;      /* sampled during the run; 0: not sampled */
    const char *log_path;       /* its log; NULL: none */
} server_death_facts;

/* {"class": "signal"|"out_of_memory"|"exit_code", "signal": N, "signal_name":
 * "SIGKILL", "exit_code": N, "evidence": "..."}; `words` gets one line for
 * the campaign's error ("killed by SIGKILL", "out of memory: ..."). */
json_t *server_death_json(const server_death_facts *f, char *words, int wordslen);
/* The same for a server that server_proc started, from what it kept and
 * the peak RSS a run sampled (0: none); NULL, and "not on its own" in
 * words, when it did not exit by itself. */
json_t *server_death_of(const server_proc *sp, double peak_rss_bytes, char *words, int wordslen);

#endif
