/* vllm_server: vLLM's OpenAI server from a campaign's target.vllm (see
 * vllm_server.h): its argv and environment built word by word, the dtype
 * chosen from the CPU's flags, the package's version asked of its python
 * once, and what each run records of it. server_proc starts and stops it. */
#include "target/vllm_server.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/shellwords.h"
#include "common/stop.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define VLLM_VERSION_PINNED "0.32.0" /* scripts/vllm_cpu.sh's */

void vllm_server_default_python(char *buf, size_t n) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, n, "%s/servelab/vllm-cpu-%s/bin/python", xdg, VLLM_VERSION_PINNED);
    else
        snprintf(buf, n, "%s/.cache/servelab/vllm-cpu-%s/bin/python", home ? home : "",
                 VLLM_VERSION_PINNED);
}

/* Some CPU's "flags" line in the text lists `flag` as a word. */
static int cpu_has_flag(const char *cpuinfo, const char *flag) {
    size_t fl = strlen(flag);
    for (const char *line = cpuinfo; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (!strncmp(line, "flags", 5)) {
            for (const char *p = line; (p = strstr(p, flag)) && p < line + len; p += fl)
                if (p[-1] == ' ' && (p + fl == line + len || p[fl] == ' ' || p[fl] == '\n'))
                    return 1;
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

const char *vllm_server_dtype(const vllm_spec *v, const char *cpuinfo, const char **why) {
    if (v->dtype) {
        *why = "given in the campaign (target.vllm.dtype)";
        return v->dtype;
    }
    if (cpuinfo && cpu_has_flag(cpuinfo, "avx512_bf16")) {
        *why = "the CPU has avx512_bf16 (/proc/cpuinfo), so oneDNN runs bfloat16";
        return "bfloat16";
    }
    *why = "the CPU has no avx512_bf16 (/proc/cpuinfo): vLLM's bfloat16 falls back from oneDNN "
           "and runs about 5 times slower";
    return "float32";
}

static void add(vllm_command *c, const char *word) {
    c->argv = xrealloc(c->argv, (size_t)(c->argc + 2) * sizeof *c->argv);
    c->argv[c->argc++] = xstrdup(word);
    c->argv[c->argc] = NULL;
}

static void add_number(vllm_command *c, const char *flag, int64_t value) {
    if (value <= 0)
        return;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)value);
    add(c, flag);
    add(c, text);
}

/* on: --enable-NAME; off: --no-enable-NAME; unset: nothing. */
static void add_switch(vllm_command *c, const char *name, const char *value) {
    if (!value)
        return;
    char flag[96];
    snprintf(flag, sizeof flag, "--%senable-%s", strcmp(value, "on") ? "no-" : "", name);
    add(c, flag);
}

int vllm_server_command(const vllm_spec *v, const char *port, const char *server_args,
                        const char *cpuinfo, vllm_command *cmd, char *err, int errlen) {
    memset(cmd, 0, sizeof *cmd);
    cmd->env = xcalloc(2, sizeof *cmd->env);
    cmd->dtype = vllm_server_dtype(v, cpuinfo, &cmd->dtype_why);
    const char *lead[] = {v->python,   "-m",      "vllm.entrypoints.openai.api_server",
                          "--model",   v->model,  "--host",
                          "127.0.0.1", "--port",  port,
                          "--dtype",   cmd->dtype};
    for (size_t i = 0; i < sizeof lead / sizeof *lead; i++)
        add(cmd, lead[i]);
    add_number(cmd, "--max-num-seqs", v->max_num_seqs);
    add_number(cmd, "--max-model-len", v->max_model_len);
    add_switch(cmd, "prefix-caching", v->prefix_caching);
    add_switch(cmd, "chunked-prefill", v->chunked_prefill);
    add_number(cmd, "--max-num-batched-tokens", v->max_num_batched_tokens);
    add_number(cmd, "--num-gpu-blocks-override", v->gpu_blocks);
    if (v->kv_cache_gib > 0) {
        char e[64];
        snprintf(e, sizeof e, "VLLM_CPU_KVCACHE_SPACE=%lld", (long long)v->kv_cache_gib);
        cmd->env[cmd->n_env++] = xstrdup(e);
    }
    char **words, why[512];
    int count;
    if (shellwords_split(server_args ? server_args : "", &words, &count, why, sizeof why)) {
        snprintf(err, errlen, "vLLM's server_args: %s", why);
        return -1;
    }
    for (int i = 0; i < count; i++)
        add(cmd, words[i]);
    shellwords_free(words);
    return 0;
}

void vllm_command_free(vllm_command *cmd) {
    for (int i = 0; i < cmd->argc; i++)
        free(cmd->argv[i]);
    for (int i = 0; i < cmd->n_env; i++)
        free(cmd->env[i]);
    free(cmd->argv);
    free(cmd->env);
    memset(cmd, 0, sizeof *cmd);
}

int vllm_server_check(const vllm_spec *v, char *err, int errlen) {
    struct stat st;
    if (access(v->python, X_OK)) {
        snprintf(err, errlen,
                 "target.vllm.python: '%s' cannot be run (sh scripts/vllm_cpu.sh makes it; "
                 "docs/vllm.md)",
                 v->python);
        return -1;
    }
    if (stat(v->model, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "target.vllm.model: '%s' is not a folder", v->model);
        return -1;
    }
    return 0;
}

/* The command's record: argv, env, dtype and why. */
static json_t *launch_json(const vllm_command *cmd) {
    json_t *argv = json_array(), *env = json_object();
    for (int i = 0; i < cmd->argc; i++)
        json_array_append_new(argv, json_string(cmd->argv[i]));
    for (int i = 0; i < cmd->n_env; i++) {
        size_t n = strcspn(cmd->env[i], "=");
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)n, cmd->env[i]);
        json_object_set_new(env, name, json_string(cmd->env[i] + n + (cmd->env[i][n] == '=')));
    }
    return json_pack("{s:o,s:o,s:s,s:s}", "argv", argv, "env", env, "dtype", cmd->dtype,
                     "dtype_why", cmd->dtype_why);
}

int vllm_server_start(server_proc *sp, const vllm_spec *v, const char *server_args,
                      const char *log_path, double ready_timeout_s, json_t **launched, char *err,
                      int errlen) {
    *launched = NULL;
    if (server_proc_init(sp, server_args, log_path, err, errlen))
        return -1;
    char port[16];
    snprintf(port, sizeof port, "%d", sp->port);
    size_t len;
    char *cpuinfo = read_whole_file("/proc/cpuinfo", &len);
    vllm_command cmd;
    int rc = vllm_server_command(v, port, server_args, cpuinfo, &cmd, err, errlen);
    free(cpuinfo);
    if (!rc) {
        *launched = launch_json(&cmd);
        server_proc_note(sp, "vLLM with --dtype %s: %s", cmd.dtype, cmd.dtype_why);
        server_proc_launch l = {.argv = cmd.argv,
                                .env = cmd.n_env ? cmd.env : NULL,
                                .health_path = "/health",
                                .ready_timeout_s = ready_timeout_s};
        rc = server_proc_start(sp, &l, err, errlen);
    }
    vllm_command_free(&cmd);
    return rc;
}

int vllm_server_package_version(const char *python, char *buf, size_t n, char *err, int errlen) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    char *argv[] = {(char *)python, "-c",
                    "import importlib.metadata as m; print(m.version(\"vllm-cpu\"))", NULL};
    proc_spec ps = {.argv = argv, .in = PROC_DEVNULL, .out = fds[1], .err = PROC_DEVNULL};
    pid_t pid = proc_spawn(&ps, err, errlen);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    /* bounded: a python that hangs (or a stop signal) must not hold the sweep */
    size_t got = 0;
    int64_t deadline = mono_us() + (int64_t)(VLLM_VERSION_TIMEOUT_S * 1e6);
    int late = 0;
    for (;;) {
        int64_t left_ms = (deadline - mono_us()) / 1000;
        if (left_ms <= 0 || stop_signal()) {
            late = 1;
            break;
        }
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        int ready = poll(&pf, 1, left_ms > 200 ? 200 : (int)left_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue;
        ssize_t r = read(fds[0], buf + got, n - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fds[0]);
    buf[got] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    if (late)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (late) {
        snprintf(err, errlen, "%s did not name vllm-cpu's version within %.0f s", python,
                 VLLM_VERSION_TIMEOUT_S);
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) || !buf[0]) {
        snprintf(err, errlen, "%s could not name vllm-cpu's version", python);
        return -1;
    }
    return 0;
}

int vllm_server_cpus_of(int pid, char *buf, size_t n) {
    char path[64];
    if (pid > 0)
        snprintf(path, sizeof path, "/proc/%d/status", pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    size_t len;
    char *text = read_whole_file(path, &len);
    const char *at = text ? strstr(text, "\nCpus_allowed_list:") : NULL;
    if (!at) {
        free(text);
        return -1;
    }
    at += strlen("\nCpus_allowed_list:");
    at += strspn(at, " \t");
    snprintf(buf, n, "%.*s", (int)strcspn(at, "\n"), at);
    free(text);
    return 0;
}

json_t *vllm_server_meta(const json_t *launched, const char *version, int server_pid) {
    json_t *m = launched ? json_deep_copy(launched) : json_object();
    char server[256], client[256];
    json_object_set_new(m, "package_version", version ? json_string(version) : json_null());
    json_object_set_new(m, "server_cpus",
                        server_pid > 0 && !vllm_server_cpus_of(server_pid, server, sizeof server)
                            ? json_string(server)
                            : json_null());
    json_object_set_new(m, "client_cpus",
                        !vllm_server_cpus_of(0, client, sizeof client) ? json_string(client)
                                                                       : json_null());
    return m;
}
