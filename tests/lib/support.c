/* support: process and HTTP plumbing for the integration tests. */
#include "support.h"
#include "test.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *servelab_bin(void) {
    const char *b = getenv("SERVELAB");
    return b && *b ? b : "./servelab";
}

int servelab_is_sanitized(void) {
    size_t n;
    char *bin = read_file(servelab_bin(), &n);
    int asan = bin && memmem(bin, n, "__asan_init", 11) != NULL;
    free(bin);
    return asan;
}

pid_t spawn_sh(const char *cmd, int out_fd, int err_fd) {
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    proc_spec s = {.argv = argv, .in = PROC_INHERIT, .out = out_fd, .err = err_fd};
    char err[256];
    fflush(stdout);
    pid_t pid = proc_spawn(&s, err, sizeof err);
    CHECK_MSG(pid > 0, "%s", err);
    return pid;
}

sim_proc sim_start(const char *args) {
    int fds[2];
    CHECK(pipe2(fds, O_CLOEXEC) == 0);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s sim --port 0 %s", servelab_bin(), args ? args : "");
    pid_t pid = spawn_sh(cmd, fds[1], PROC_INHERIT);
    close(fds[1]);
    char line[256];
    size_t n = 0;
    struct pollfd pfd = {fds[0], POLLIN, 0};
    while (n < sizeof line - 1) {
        if (poll(&pfd, 1, 10000) <= 0)
            break;
        ssize_t r = read(fds[0], line + n, 1);
        if (r <= 0)
            break;
        if (line[n] == '\n')
            break;
        n++;
    }
    line[n] = 0;
    close(fds[0]);
    sim_proc p = {pid, 0};
    const char *colon = strrchr(line, ':');
    CHECK_MSG(!strncmp(line, "listening on http://", 20) && colon,
              "sim did not start: first line '%s'", line);
    p.port = atoi(colon + 1);
    CHECK(p.port > 0);
    return p;
}

void sim_stop(sim_proc *p) {
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGTERM);
    int status;
    waitpid(p->pid, &status, 0);
    p->pid = 0;
}

pid_t sim_backlog(const sim_proc *sim, int n) {
    char *dir = temp_dir(), cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s run --url http://127.0.0.1:%d --prompts random:16:60 --ignore-eos --rate inf "
             "--requests %d --no-sampling --quiet --out %s/r",
             servelab_bin(), sim->port, n, dir);
    free(dir);
    pid_t pid = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    for (int i = 0; i < 300 && sim_metric(sim->port, "vllm:num_requests_running") < 1; i++)
        sleep_ms(10);
    return pid;
}

static int connect_port(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

size_t http_send_bytes(int port, const char *data, size_t n, char *resp, size_t cap,
                       int timeout_ms) {
    int fd = connect_port(port);
    if (fd < 0)
        return 0;
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    size_t got = 0;
    struct pollfd pfd = {fd, POLLIN, 0};
    while (got + 1 < cap && poll(&pfd, 1, timeout_ms) > 0) {
        ssize_t r = read(fd, resp + got, cap - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    resp[got] = 0;
    close(fd);
    return got;
}

/* Decode a chunked body in place; returns the decoded length. */
static size_t dechunk(char *b, size_t n) {
    size_t in = 0, out = 0;
    while (in < n) {
        char *end;
        unsigned long len = strtoul(b + in, &end, 16);
        char *crlf = strstr(b + in, "\r\n");
        if (!crlf || end > crlf)
            break;
        in = (size_t)(crlf - b) + 2;
        if (len == 0 || in + len > n)
            break;
        memmove(b + out, b + in, len);
        out += len;
        in += len + 2;
    }
    b[out] = 0;
    return out;
}

int http_request_raw(int port, const char *method, const char *path, const char *extra_headers,
                     const char *body, http_result *out) {
    memset(out, 0, sizeof *out);
    int fd = connect_port(port);
    if (fd < 0)
        return -1;
    size_t blen = body ? strlen(body) : 0;
    size_t cap = blen + 4096 + (extra_headers ? strlen(extra_headers) : 0);
    char *req = malloc(cap);
    int n = snprintf(req, cap,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                     method, path, extra_headers ? extra_headers : "", blen);
    memcpy(req + n, body ? body : "", blen);
    size_t total = (size_t)n + blen, off = 0;
    while (off < total) {
        ssize_t w = write(fd, req + off, total - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(req);
    size_t rcap = 1 << 16, got = 0;
    char *resp = malloc(rcap);
    for (;;) {
        if (got + 1 >= rcap)
            resp = realloc(resp, rcap *= 2);
        ssize_t r = read(fd, resp + got, rcap - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    resp[got] = 0;
    char *sep = strstr(resp, "\r\n\r\n");
    if (!sep || sscanf(resp, "HTTP/1.%*d %d", &out->status) != 1) {
        free(resp);
        return -1;
    }
    size_t hlen = (size_t)(sep - resp) + 2;
    out->headers = strndup(resp, hlen);
    size_t bl = got - hlen - 2;
    out->body = malloc(bl + 1);
    memcpy(out->body, sep + 4, bl);
    out->body[bl] = 0;
    out->body_len = bl;
    if (strcasestr(out->headers, "Transfer-Encoding: chunked"))
        out->body_len = dechunk(out->body, bl);
    free(resp);
    return 0;
}

void http_result_free(http_result *r) {
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof *r);
}

int sse_events(const char *body, char ***out) {
    int n = 0, cap = 16;
    char **ev = malloc(sizeof *ev * (size_t)cap);
    const char *p = body;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len >= 5 && !strncmp(p, "data:", 5)) {
            const char *v = p + 5;
            if (*v == ' ')
                v++;
            if (n == cap)
                ev = realloc(ev, sizeof *ev * (size_t)(cap *= 2));
            ev[n++] = strndup(v, len - (size_t)(v - p));
        }
        p = eol ? eol + 1 : NULL;
    }
    *out = ev;
    return n;
}

void sse_free(char **ev, int n) {
    for (int i = 0; i < n; i++)
        free(ev[i]);
    free(ev);
}

char *run_capture(const char *cmd, int *exit_code) {
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 >= cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    int st = pclose(f);
    if (exit_code)
        *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return buf;
}

int servelab_cmd(const char *subcommand_and_args, char **out) {
    size_t n = strlen(servelab_bin()) + strlen(subcommand_and_args) + 16;
    char *cmd = malloc(n); /* never cut short: a test may pass a very long path */
    snprintf(cmd, n, "%s %s 2>&1", servelab_bin(), subcommand_and_args);
    int code;
    char *o = run_capture(cmd, &code);
    free(cmd);
    if (out)
        *out = o;
    else
        free(o);
    return code;
}

int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

/* Inside the folder the runner gave this test (removed when it passes);
 * straight in /tmp when run some other way. */
char *temp_dir(void) {
    const char *parent = getenv("SERVELAB_TEST_DIR");
    char tmpl[4096];
    if (parent && *parent)
        snprintf(tmpl, sizeof tmpl, "%s/tmp-XXXXXX", parent);
    else
        snprintf(tmpl, sizeof tmpl, "/tmp/servelab-test-XXXXXX");
    char *d = mkdtemp(tmpl);
    CHECK_MSG(d != NULL, "mkdtemp %s: %s", tmpl, strerror(errno));
    return strdup(d);
}

void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

void servelab_ok(const char *subcommand_and_args) {
    char *out = NULL;
    int code = servelab_cmd(subcommand_and_args, &out);
    CHECK_MSG(code == 0, "servelab %s: exit %d: %s", subcommand_and_args, code, out);
    free(out);
}

int files_with_prefix(const char *dir, const char *prefix, char *names, size_t cap) {
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "no %s", dir);
    struct dirent *e;
    int n = 0;
    names[0] = 0;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            n++;
            snprintf(names + strlen(names), cap - strlen(names), "%s\n", e->d_name);
        }
    closedir(d);
    return n;
}

double sim_metric(int port, const char *name) {
    http_result r;
    CHECK(http_request_raw(port, "GET", "/metrics", "", NULL, &r) == 0);
    char key[128];
    snprintf(key, sizeof key, "\n%s{", name);
    char *at = strstr(r.body, key);
    CHECK_MSG(at != NULL, "metric %s missing", name);
    double v = atof(strchr(at, '}') + 1);
    http_result_free(&r);
    return v;
}
