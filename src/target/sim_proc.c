/* sim_proc: a fresh simulator per run (see sim_proc.h): its argv built
 * word by word once server_proc picked the port, then started and awaited
 * by server_proc. */
#include "target/sim_proc.h"
#include "common/shellwords.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `text` split into words appended to argv[*n...]; 0, or -1 with err
 * naming `what`. */
static int add_words(char **argv, int *n, int cap, const char *what, const char *text, char *err,
                     int errlen) {
    char **words, why[512];
    int count;
    if (shellwords_split(text, &words, &count, why, sizeof why)) {
        snprintf(err, errlen, "the simulator's %s: %s", what, why);
        return -1;
    }
    for (int i = 0; i < count && *n < cap; i++)
        argv[(*n)++] = xstrdup(words[i]);
    shellwords_free(words);
    return 0;
}

int sim_proc_start(server_proc *sim, const char *self, const char *profile, const char *sim_args,
                   const char *dir, const char *server_args, char *err, int errlen) {
    char log[4200];
    snprintf(log, sizeof log, "%s/server.log", dir);
    if (server_proc_init(sim, server_args, log, err, errlen))
        return -1;
    char port[16], trace[4200];
    snprintf(port, sizeof port, "%d", sim->port);
    snprintf(trace, sizeof trace, "%s/trace.csv", dir);
    const char *lead[] = {self, "sim", "--port", port, "--trace", trace, "--profile", profile};
    int cap =
        8 + (int)strlen(sim_args ? sim_args : "") + (int)strlen(server_args ? server_args : "");
    char **argv = xcalloc((size_t)cap + 1, sizeof *argv);
    int n = 0;
    for (int i = 0; i < (profile ? 8 : 6); i++)
        argv[n++] = xstrdup(lead[i]);
    int rc = add_words(argv, &n, cap, "arguments", sim_args, err, errlen) ||
                     add_words(argv, &n, cap, "server_args", server_args, err, errlen)
                 ? -1
                 : 0;
    if (!rc) {
        server_proc_launch l = {.argv = argv, .health_path = "/health", .ready_timeout_s = 30};
        rc = server_proc_start(sim, &l, err, errlen);
    }
    for (int i = 0; i < n; i++)
        free(argv[i]);
    free(argv);
    return rc;
}
