/* procstat: what a server's processes use, read from /proc: the resident
 * memory, CPU time, threads and count of a process and all its descendants
 * (found through each /proc/N/stat's parent pid, so a server that forks
 * workers is counted whole), the memory limits it runs under (RLIMIT_AS, a
 * cgroup's limit) and whether the kernel says it killed the process for
 * memory. It is the CPU-side counterpart of the GPU monitor: a server's
 * memory on a CPU-only machine is its RSS. Linux only; where /proc is not
 * readable every reading fails softly (-1 or NAN), never the run. */
#ifndef SERVELAB_MONITOR_PROCSTAT_H
#define SERVELAB_MONITOR_PROCSTAT_H

#include <sys/types.h>

/* One reading of a process tree. */
typedef struct procstat_sample {
    double rss_bytes; /* summed resident set size */
    double cpu_s;     /* summed utime + stime, seconds */
    int threads;      /* summed threads */
    int processes;    /* the root and its descendants */
} procstat_sample;

/* Reads the tree rooted at `root`: 0, or -1 when the root is not there
 * (gone, or /proc unreadable). */
int procstat_tree(pid_t root, procstat_sample *out);

/* The samples of one run, for summary.json: peaks, and the mean CPU% as
 * CPU seconds over wall seconds between the first and the last sample. */
typedef struct procstat_summary {
    int samples;
    double peak_rss_bytes;
    int peak_threads, peak_processes;
    double first_t_ms, first_cpu_s, last_t_ms, last_cpu_s;
} procstat_summary;

void procstat_summary_add(procstat_summary *s, double t_ms, const procstat_sample *x);
/* NAN with fewer than two samples. */
double procstat_summary_mean_cpu_pct(const procstat_summary *s);

/* The memory limits a process runs under; NAN where there is none or it
 * cannot be read. oom_file is the cgroup file that counts its OOM kills
 * ("" when none is readable), read again by procstat_oom_kills. */
typedef struct procstat_limits {
    double as_bytes;     /* RLIMIT_AS (the soft limit: ulimit -v, prlimit --as) */
    double cgroup_bytes; /* memory.max (v2) or memory.limit_in_bytes (v1) */
    char oom_file[640];
} procstat_limits;

void procstat_limits_of(pid_t pid, procstat_limits *out);
/* The process of root's tree (root and its descendants) that holds the
 * most memory: the server itself, when root is a shell or a start script
 * that runs it as a child. root when it has no descendants or none can be
 * read. */
pid_t procstat_heaviest(pid_t root);
/* The memory this process may still take, in bytes, and which bound that
 * is into *which ("the machine's available memory", "RLIMIT_AS", "the
 * cgroup's memory.max"): the least of /proc/meminfo's MemAvailable, the
 * address-space limit less what is mapped now, and the cgroup's limit.
 * NAN when none can be read. */
double procstat_memory_room(const char **which);
/* The cgroup's oom_kill count now; -1 when unknown. */
long procstat_oom_kills(const procstat_limits *l);
/* Whether the kernel's log (/dev/kmsg) says it killed `pid` for memory:
 * 1 yes, 0 no, -1 when the log cannot be read. */
int procstat_oom_logged(pid_t pid);

#endif
