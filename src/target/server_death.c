/* server_death: the class of a managed server's death (see server_death.h).
 * Each piece of evidence is read only when the one before it is missing, so
 * the campaign says the strongest reason it had. */
#include "target/server_death.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* A line in the server's log saying an allocation failed. */
static int log_says_no_memory(const char *path) {
    static const char *const words[] = {"failed to allocate",     "bad_alloc",
                                        "Cannot allocate memory", "out of memory",
                                        "Out of memory",          NULL};
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[2048];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        for (const char *const *w = words; *w && !found; w++)
            found = strstr(line, *w) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* The limit the RSS came within 90% of, in words; 0 when none. */
static int rss_at_limit(const server_death_facts *f, char *ev, int evlen) {
    double rss = f->peak_rss_bytes, cg = f->lim->cgroup_bytes, as = f->lim->as_bytes;
    const char *which = rss > 0 && !isnan(cg) && rss >= 0.9 * cg   ? "its cgroup's memory limit"
                        : rss > 0 && !isnan(as) && rss >= 0.9 * as ? "its RLIMIT_AS"
                                                                   : NULL;
    if (!which)
        return 0;
    snprintf(ev, evlen, "SIGKILL with its RSS at %.0f MiB, %.0f%% of %s (%.0f MiB)", rss / 1048576,
             100 * rss / (!strcmp(which, "its RLIMIT_AS") ? as : cg), which,
             (!strcmp(which, "its RLIMIT_AS") ? as : cg) / 1048576);
    return 1;
}

/* Why it is out of memory, in ev; 0 when nothing says so. */
static int out_of_memory(const server_death_facts *f, char *ev, int evlen) {
    int st = f->wait_status;
    int sigkill = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    if (sigkill && procstat_oom_logged(f->pid) == 1) {
        snprintf(ev, evlen, "the kernel's log says it killed pid %d for memory", f->pid);
        return 1;
    }
    long kills = f->oom_kills_at_start >= 0 ? procstat_oom_kills(f->lim) : -1;
    if (sigkill && kills > f->oom_kills_at_start) {
        snprintf(ev, evlen, "its cgroup counted %ld OOM kill(s) during the run",
                 kills - f->oom_kills_at_start);
        return 1;
    }
    if (sigkill && rss_at_limit(f, ev, evlen))
        return 1;
    int clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!clean && log_says_no_memory(f->log_path)) {
        snprintf(ev, evlen, "its log says an allocation failed%s",
                 isnan(f->lim->as_bytes) ? "" : " (it ran under an RLIMIT_AS)");
        return 1;
    }
    return 0;
}

json_t *server_death_json(const server_death_facts *f, char *words, int wordslen) {
    int st = f->wait_status;
    json_t *j = json_object();
    char ev[512] = "";
    int oom = out_of_memory(f, ev, sizeof ev);
    json_object_set_new(j, "class",
                        json_string(oom               ? "out_of_memory"
                                    : WIFSIGNALED(st) ? "signal"
                                                      : "exit_code"));
    const char *how;
    char sig[32] = "";
    if (WIFSIGNALED(st)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(st));
        snprintf(sig, sizeof sig, "SIG%s", abbrev ? abbrev : "?");
        json_object_set_new(j, "signal", json_integer(WTERMSIG(st)));
        json_object_set_new(j, "signal_name", json_string(sig));
        how = "killed by";
    } else {
        snprintf(sig, sizeof sig, "%d", WEXITSTATUS(st));
        json_object_set_new(j, "exit_code", json_integer(WEXITSTATUS(st)));
        how = "exit code";
    }
    if (oom)
        json_object_set_new(j, "evidence", json_string(ev));
    snprintf(words, wordslen, "%s%s %s%s%s", oom ? "out of memory: " : "", how, sig,
             oom ? "; " : "", ev);
    return j;
}

json_t *server_death_of(const server_proc *sp, double peak_rss_bytes, char *words, int wordslen) {
    if (!sp->exited) {
        snprintf(words, wordslen, "not on its own");
        return NULL;
    }
    server_death_facts f = {.wait_status = sp->exit_status,
                            .pid = sp->died_pid,
                            .lim = &sp->limits,
                            .oom_kills_at_start = sp->oom_kills_at_ready,
                            .peak_rss_bytes = peak_rss_bytes,
                            .log_path = sp->log_path};
    return server_death_json(&f, words, wordslen);
}
