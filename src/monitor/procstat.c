/* procstat: a process tree's resources from /proc (see procstat.h). The
 * tree is found by one pass over /proc/N/stat, keeping each process's
 * parent and counters, then marking descendants of the root until no more
 * are found: a few hundred processes on a quiet machine, so the simple
 * repeated pass costs far less than the metrics interval. */
#include "monitor/procstat.h"
#include "common/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct proc_row {
    pid_t pid, ppid;
    double rss_bytes, cpu_s;
    int threads;
    int in_tree;
} proc_row;

/* /proc/N/stat's fields after the command's closing parenthesis (the
 * command may itself hold spaces and parentheses). 0, or -1. */
static int read_stat(pid_t pid, proc_row *r) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    char state;
    int ppid;
    unsigned long utime, stime;
    long threads, rss;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime stime cutime cstime priority nice num_threads itrealvalue
     * starttime vsize rss */
    if (sscanf(p + 1,
               " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %ld %*d %*u "
               "%*u %ld",
               &state, &ppid, &utime, &stime, &threads, &rss) != 6)
        return -1;
    double tick = (double)sysconf(_SC_CLK_TCK), page = (double)sysconf(_SC_PAGESIZE);
    *r = (proc_row){.pid = pid,
                    .ppid = ppid,
                    .rss_bytes = (double)rss * page,
                    .cpu_s = (double)(utime + stime) / tick,
                    .threads = (int)threads};
    return 0;
}

/* Every process now, by one pass over /proc. */
static proc_row *all_processes(size_t *n) {
    DIR *d = opendir("/proc");
    size_t cap = 256;
    proc_row *rows = xmalloc(cap * sizeof *rows);
    *n = 0;
    if (!d)
        return rows;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (*n == cap)
            rows = xrealloc(rows, (cap *= 2) * sizeof *rows);
        if (read_stat((pid_t)atol(e->d_name), &rows[*n]) == 0)
            (*n)++;
    }
    closedir(d);
    return rows;
}

/* Marks root and its descendants in rows: whether root was found. */
static int mark_tree(proc_row *rows, size_t n, pid_t root) {
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].pid == root)
            rows[i].in_tree = found = 1;
    for (int grew = found; grew;) { /* a child's parent is marked before it, or on a later pass */
        grew = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n && !rows[i].in_tree; j++)
                if (rows[j].in_tree && rows[j].pid == rows[i].ppid)
                    rows[i].in_tree = grew = 1;
    }
    return found;
}

int procstat_tree(pid_t root, procstat_sample *out) {
    memset(out, 0, sizeof *out);
    size_t n;
    proc_row *rows = all_processes(&n);
    int found = mark_tree(rows, n, root);
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].in_tree)
            continue;
        out->rss_bytes += rows[i].rss_bytes;
        out->cpu_s += rows[i].cpu_s;
        out->threads += rows[i].threads;
        out->processes++;
    }
    free(rows);
    return found ? 0 : -1;
}

pid_t procstat_heaviest(pid_t root) {
    size_t n;
    proc_row *rows = all_processes(&n);
    pid_t best = root;
    double most = -1;
    if (mark_tree(rows, n, root))
        for (size_t i = 0; i < n; i++)
            if (rows[i].in_tree && rows[i].rss_bytes > most) {
                most = rows[i].rss_bytes;
                best = rows[i].pid;
            }
    free(rows);
    return best;
}

void procstat_summary_add(procstat_summary *s, double t_ms, const procstat_sample *x) {
    if (s->samples == 0) {
        s->first_t_ms = t_ms;
        s->first_cpu_s = x->cpu_s;
    }
    s->samples++;
    s->last_t_ms = t_ms;
    s->last_cpu_s = x->cpu_s;
    if (x->rss_bytes > s->peak_rss_bytes)
        s->peak_rss_bytes = x->rss_bytes;
    if (x->threads > s->peak_threads)
        s->peak_threads = x->threads;
    if (x->processes > s->peak_processes)
        s->peak_processes = x->processes;
}

double procstat_summary_mean_cpu_pct(const procstat_summary *s) {
    double wall_s = (s->last_t_ms - s->first_t_ms) / 1000;
    if (s->samples < 2 || wall_s <= 0)
        return NAN;
    return 100 * (s->last_cpu_s - s->first_cpu_s) / wall_s;
}

/* "Max address space   unlimited   unlimited   bytes": the soft limit. */
static double address_space_limit(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
    FILE *f = fopen(path, "r");
    double v = NAN;
    while (f && fgets(line, sizeof line, f)) {
        char soft[64];
        if (!strncmp(line, "Max address space", 17) && sscanf(line + 17, "%63s", soft) == 1 &&
            strcmp(soft, "unlimited"))
            v = atof(soft);
    }
    if (f)
        fclose(f);
    return v;
}

/* A number from a one-line cgroup file; NAN for "max", a v1 "no limit"
 * (near 2^63) or an unreadable file. */
static double cgroup_number(const char *path) {
    FILE *f = fopen(path, "r");
    char buf[64] = "";
    if (!f)
        return NAN;
    if (!fgets(buf, sizeof buf, f))
        buf[0] = 0;
    fclose(f);
    double v = atof(buf);
    return !isdigit((unsigned char)buf[0]) || v > 1e18 ? NAN : v;
}

void procstat_limits_of(pid_t pid, procstat_limits *out) {
    out->as_bytes = address_space_limit(pid);
    out->cgroup_bytes = NAN;
    out->oom_file[0] = 0;
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char dir[600], file[640];
        if (!strncmp(line, "0::", 3)) { /* cgroup v2 */
            snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", line + 3);
            snprintf(file, sizeof file, "%s/memory.max", dir);
            out->cgroup_bytes = cgroup_number(file);
            snprintf(file, sizeof file, "%s/memory.events", dir);
        } else if (strstr(line, ":memory:")) { /* v1's memory controller */
            snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory%s", strstr(line, ":memory:") + 8);
            snprintf(file, sizeof file, "%s/memory.limit_in_bytes", dir);
            out->cgroup_bytes = cgroup_number(file);
            snprintf(file, sizeof file, "%s/memory.oom_control", dir);
        } else {
            continue;
        }
        if (access(file, R_OK) == 0)
            snprintf(out->oom_file, sizeof out->oom_file, "%s", file);
        if (!isnan(out->cgroup_bytes))
            break; /* a v1 memory line after a v2 "0::/" without a limit wins */
    }
    if (f)
        fclose(f);
}

/* The kB value of the line `key` of a /proc file, in bytes; NAN. */
static double proc_kb(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    char line[256];
    double v = NAN;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':')
            v = atof(line + n + 1) * 1024.0;
    if (f)
        fclose(f);
    return v;
}

double procstat_memory_room(const char **which) {
    procstat_limits l;
    procstat_limits_of(getpid(), &l);
    double room = proc_kb("/proc/meminfo", "MemAvailable");
    *which = "the machine's available memory";
    double as = l.as_bytes - proc_kb("/proc/self/status", "VmSize");
    if (!isnan(as) && (isnan(room) || as < room)) {
        room = as;
        *which = "RLIMIT_AS (ulimit -v)";
    }
    if (!isnan(l.cgroup_bytes) && (isnan(room) || l.cgroup_bytes < room)) {
        room = l.cgroup_bytes;
        *which = "the cgroup's memory limit";
    }
    return room;
}

long procstat_oom_kills(const procstat_limits *l) {
    FILE *f = l->oom_file[0] ? fopen(l->oom_file, "r") : NULL;
    char line[128];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "oom_kill ", 9))
            v = atol(line + 9);
    if (f)
        fclose(f);
    return v;
}

/* The kernel's words for an OOM kill: "Out of memory: Killed process 123
 * (name)" and "Memory cgroup out of memory: Killed process 123", and the
 * summary line "oom-kill:...,task=name,pid=123,uid=0". */
static int names_oom_kill(const char *rec, pid_t pid) {
    char a[48], b[48];
    snprintf(a, sizeof a, "Killed process %d ", (int)pid);
    snprintf(b, sizeof b, ",pid=%d,", (int)pid);
    return (strstr(rec, "out of memory") || strstr(rec, "Out of memory")) && strstr(rec, a)
               ? 1
               : strstr(rec, "oom-kill:") && strstr(rec, b);
}

int procstat_oom_logged(pid_t pid) {
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char rec[8192];
    int found = 0;
    for (;;) { /* one record a read, from the oldest kept */
        ssize_t n = read(fd, rec, sizeof rec - 1);
        if (n < 0 && errno == EPIPE)
            continue; /* overwritten while we read: go on from the next */
        if (n <= 0)
            break;
        rec[n] = 0;
        found |= names_oom_kill(rec, pid);
    }
    close(fd);
    return found;
}
