/* server_proc: an argv in its own process group, guarded by a watchdog
 * (common/proc.h), health polling with libcurl, and a graceful stop. */
#include "target/server_proc.h"
#include "common/clock.h"
#include "common/proc.h"
#include "common/shellwords.h"
#include "common/stop.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int server_proc_free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

void server_proc_note(const server_proc *sp, const char *fmt, ...) {
    FILE *f = fopen(sp->log_path, "a");
    if (!f)
        return;
    char ts[40];
    utc_now_iso(ts, sizeof ts);
    fprintf(f, "[servelab %s] ", ts);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static size_t discard(char *p, size_t s, size_t n, void *u) {
    (void)p;
    (void)u;
    return s * n;
}

static long health_status(const char *url) {
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 2000L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    long code = 0;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(e);
    return code;
}

int server_proc_alive(server_proc *sp) {
    if (sp->pid <= 0)
        return 0;
    int st;
    pid_t r = waitpid(sp->pid, &st, WNOHANG);
    if (r == sp->pid) {
        sp->exit_status = st;
        sp->exited = 1;
        sp->died_pid = (int)sp->pid;
        server_proc_note(sp, "server pid %d exited (%s %d)", (int)sp->pid,
                         WIFSIGNALED(st) ? "signal" : "code",
                         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        sp->pid = 0;
        return 0;
    }
    return 1;
}

int server_proc_init(server_proc *sp, const char *server_args, const char *log_path, char *err,
                     int errlen) {
    memset(sp, 0, sizeof *sp);
    sp->guard.fd = -1;           /* no watchdog yet: stopping must not close descriptor 0 */
    sp->oom_kills_at_ready = -1; /* unknown until ready (a death before then has no count) */
    sp->log_path = xstrdup(log_path);
    sp->args = xstrdup(server_args ? server_args : "");
    sp->port = server_proc_free_port();
    if (!sp->port) {
        snprintf(err, errlen, "cannot find a free loopback port");
        return -1;
    }
    snprintf(sp->url, sizeof sp->url, "http://127.0.0.1:%d", sp->port);
    return 0;
}

/* What the log says was started: the command, then "(with NAME=value
 * ...)" for what was set in its environment, each value quoted as a shell
 * would need it. malloc'd. */
static char *launch_text(const server_proc_launch *l) {
    strbuf b = {0};
    char *argv = l->logged ? NULL : shellwords_join(l->argv);
    sb_puts(&b, l->logged ? l->logged : argv);
    free(argv);
    for (char *const *e = l->env; e && *e; e++) {
        size_t n = strcspn(*e, "=");
        char *eq = *e + n, *value[] = {*eq ? eq + 1 : eq, NULL};
        char *quoted = shellwords_join(value);
        sb_printf(&b, "%s%.*s=%s", e == l->env ? " (with " : " ", (int)n, *e, quoted);
        free(quoted);
    }
    if (l->env && *l->env)
        sb_puts(&b, ")");
    return b.s;
}

/* Waits until its health path answers 200: 0, or -1 with why (stopped
 * when the wait ends for any reason but its exit). */
static int wait_ready(server_proc *sp, const server_proc_launch *l, const char *shown, char *err,
                      int errlen) {
    char hurl[256];
    snprintf(hurl, sizeof hurl, "%s%s", sp->url, l->health_path);
    int64_t deadline = mono_us() + (int64_t)(l->ready_timeout_s * 1e6);
    while (mono_us() < deadline) {
        if (stop_signal()) {
            snprintf(err, errlen, "stopped by signal %d before the server was ready",
                     stop_signal());
            server_proc_stop(sp, 2);
            return -1;
        }
        if (!server_proc_alive(sp)) {
            snprintf(err, errlen, "server exited before it was ready (%s): see %s", shown,
                     sp->log_path);
            return -1;
        }
        if (health_status(hurl) == 200) {
            server_proc_note(sp, "server ready on %s", sp->url);
            procstat_limits_of(sp->pid, &sp->limits);
            sp->oom_kills_at_ready = procstat_oom_kills(&sp->limits);
            return 0;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "server not ready within %.0f s (%s): see %s", l->ready_timeout_s, shown,
             sp->log_path);
    server_proc_stop(sp, 2);
    return -1;
}

int server_proc_start(server_proc *sp, const server_proc_launch *l, char *err, int errlen) {
    char *text = launch_text(l);
    server_proc_note(sp, "starting server: %s", text);
    int logfd = open(sp->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    proc_spec ps = {.argv = l->argv,
                    .in = PROC_DEVNULL,
                    .out = logfd >= 0 ? logfd : PROC_DEVNULL,
                    .err = logfd >= 0 ? logfd : PROC_DEVNULL,
                    .own_group = 1,
                    .env = l->env};
    pid_t pid = proc_spawn(&ps, err, errlen);
    if (logfd >= 0)
        close(logfd);
    if (pid < 0) {
        free(text);
        return -1;
    }
    sp->pid = sp->pgid = pid;
    char why[256];
    if (proc_guard_start(&sp->guard, pid, why, sizeof why))
        server_proc_note(sp, "no watchdog (%s): a SIGKILL of servelab would leave it running", why);
    server_proc_note(sp, "server pid %d, waiting for %s%s", (int)pid, sp->url, l->health_path);
    char *shown = l->shown    ? xstrdup(l->shown)
                  : l->logged ? xstrdup(l->logged)
                              : shellwords_join(l->argv);
    int rc = wait_ready(sp, l, shown, err, errlen);
    free(shown);
    free(text);
    return rc;
}

/* What the server left in its group when it exited (workers, a child of
 * a user command's shell): SIGTERM, then SIGKILL after the grace period. They are not
 * our children, so the group's being empty is all there is to wait for. */
static void stop_leftovers(server_proc *sp, double grace_s) {
    if (sp->pgid <= 0 || kill(-sp->pgid, 0))
        return;
    server_proc_note(sp, "process group %d outlived the server: SIGTERM", (int)sp->pgid);
    kill(-sp->pgid, SIGTERM);
    int64_t deadline = mono_us() + (int64_t)(grace_s * 1e6);
    while (kill(-sp->pgid, 0) == 0 && mono_us() < deadline) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (kill(-sp->pgid, 0) == 0) {
        server_proc_note(sp, "process group %d still there: SIGKILL", (int)sp->pgid);
        kill(-sp->pgid, SIGKILL);
    }
}

void server_proc_stop(server_proc *sp, double grace_s) {
    if (sp->pid > 0 && server_proc_alive(sp)) {
        server_proc_note(sp, "stopping server pid %d (SIGTERM)", (int)sp->pid);
        kill(-sp->pid, SIGTERM);
        int64_t deadline = mono_us() + (int64_t)(grace_s * 1e6);
        while (server_proc_alive(sp) && mono_us() < deadline) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (sp->pid > 0) {
            server_proc_note(sp, "server pid %d still running after %.0f s: SIGKILL", (int)sp->pid,
                             grace_s);
            kill(-sp->pid, SIGKILL);
            int st;
            waitpid(sp->pid, &st, 0);
            sp->pid = 0;
        }
        server_proc_note(sp, "server stopped");
    }
    stop_leftovers(sp, grace_s);
    sp->pgid = 0;
    proc_guard_stop(&sp->guard);
    free(sp->args);
    free(sp->log_path);
    sp->args = sp->log_path = NULL;
}

char *server_proc_log_tail(const server_proc *sp, int n) {
    strbuf b = {0};
    sb_puts(&b, "");
    FILE *f = sp->log_path ? fopen(sp->log_path, "r") : NULL;
    if (!f)
        return b.s;
    char lines[16][512];
    int count = 0;
    while (fgets(lines[count % 16], sizeof lines[0], f))
        count++;
    fclose(f);
    n = n > 16 ? 16 : n;
    for (int i = count > n ? count - n : 0; i < count; i++) {
        char *l = lines[i % 16];
        l[strcspn(l, "\n")] = 0;
        sb_printf(&b, "%s    %s", b.n ? "\n" : "", l);
    }
    return b.s;
}

void server_proc_copy_log(const server_proc *sp, const char *dir) {
    char to[4200];
    snprintf(to, sizeof to, "%s/server.log", dir);
    FILE *in = sp->log_path ? fopen(sp->log_path, "rb") : NULL, *out = in ? fopen(to, "wb") : NULL;
    if (in && out) {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}
