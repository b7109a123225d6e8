/* The simulator's KV cache sized from the model (sim/kv_sizing.c and
 * `sim --gpu-memory-utilization`): gpu-7b's block count at 0.45 and at the
 * default 0.9 against vLLM's formula worked out here on its own, from the
 * public numbers docs/simulator.md gives (Qwen2.5-7B: 28 layers, 4 KV
 * heads, head dim 128, 16-bit KV; 5.57 GB of AWQ weights; a 24136 MiB GPU;
 * a 1219 MiB activation and non-torch reserve); --kv-blocks overriding it;
 * the block size entering the page; and the refusals. */
#include "sim/kv_sizing.h"
#include "sim/profiles.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* vLLM's arithmetic, written out again: requested = ceil(total x util),
 * available = requested - weights - reserve, blocks = available // page
 * // layers with page = 2 x block x kv_heads x head_dim x dtype bytes. */
static long vllm_blocks(double util, int block_size) {
    const long long total = 24136LL * 1024 * 1024, weights = 5570000000LL,
                    reserve = 1219LL * 1024 * 1024;
    long long requested = (long long)ceil((double)total * util);
    long long available = requested - weights - reserve;
    long long page = 2LL * block_size * 4 * 128 * 2;
    return (long)(available / page / 28);
}

/* num_gpu_blocks in /metrics' vllm:cache_config_info of a sim started
 * with `args`. */
static long served_blocks(const char *args) {
    sim_proc p = sim_start(args);
    http_result r;
    CHECK(http_request_raw(p.port, "GET", "/metrics", "", NULL, &r) == 0);
    const char *at = strstr(r.body, "\nvllm:cache_config_info{");
    CHECK_MSG(at != NULL, "no cache_config_info in /metrics");
    const char *n = strstr(at, "num_gpu_blocks=\"");
    CHECK(n != NULL);
    long blocks = atol(n + 16);
    http_result_free(&r);
    sim_stop(&p);
    return blocks;
}

TEST(sim_kv_blocks_follow_vllms_formula) {
    /* the figures docs/simulator.md states */
    CHECK_INT(vllm_blocks(0.45, 16), 4948);
    CHECK_INT(vllm_blocks(0.9, 16), 17361);
    const sim_profile *p = sim_profile_find("gpu-7b");
    CHECK_INT(kv_blocks_for(&p->memory, 0.45, 16), vllm_blocks(0.45, 16));
    CHECK_INT(kv_blocks_for(&p->memory, 0.9, 16), vllm_blocks(0.9, 16));
    CHECK_INT(sim_profile_engine(p).kv_blocks, vllm_blocks(0.9, 16));
    /* a token of Qwen2.5-7B keeps 56 KiB; a block of 16, 896 KiB */
    CHECK_INT(kv_block_bytes(&p->memory, 1), 57344);
    CHECK_INT(kv_block_bytes(&p->memory, 16), 917504);
    for (double u = 0.3; u <= 1.0; u += 0.05)
        CHECK_INT(kv_blocks_for(&p->memory, u, 32), vllm_blocks(u, 32));
}

TEST(sim_kv_gpu_memory_utilization_sizes_the_served_cache) {
    CHECK_INT(served_blocks("--profile gpu-7b --gpu-memory-utilization 0.45"),
              vllm_blocks(0.45, 16));
    CHECK_INT(served_blocks("--profile gpu-7b"), vllm_blocks(0.9, 16));
    /* the page grows with the block size, and the flags' order does not matter */
    CHECK_INT(served_blocks("--gpu-memory-utilization 0.45 --block-size 32 --profile gpu-7b"),
              vllm_blocks(0.45, 32));
    /* --kv-blocks still decides (vLLM's num_gpu_blocks_override) */
    CHECK_INT(served_blocks("--profile gpu-7b --kv-blocks 900 --gpu-memory-utilization 0.45"), 900);
    CHECK_INT(served_blocks("--profile tiny"), 65536);
}

static void refused(const char *args, const char *words) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s sim --port 0 %s 2>&1", servelab_bin(), args);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 2, "%s: exit %d: %s", args, code, out);
    CHECK_MSG(strstr(out, words) != NULL, "%s: '%s' not in: %s", args, words, out);
    free(out);
}

TEST(sim_kv_refuses_what_cannot_be_sized) {
    /* 0.2 x 23.57 GiB is less than the weights and the reserve */
    refused("--profile gpu-7b --gpu-memory-utilization 0.2", "no memory is left for the KV cache");
    /* tiny and cpu-1b name no model */
    refused("--profile tiny --gpu-memory-utilization 0.5", "names no model");
    refused("--profile gpu-7b --gpu-memory-utilization 0", "--gpu-memory-utilization");
    refused("--profile gpu-7b --gpu-memory-utilization 1.5", "--gpu-memory-utilization");
    /* a cache smaller than one request of max_model_len is refused as before */
    refused("--profile gpu-7b --gpu-memory-utilization 0.275 --max-model-len 4096", "kv_blocks");
}
