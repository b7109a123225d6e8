/* kv_sizing: how many KV blocks a model leaves on a GPU, computed the way
 * vLLM's V1 engine computes them at start-up (the profiles name the model
 * and the GPU; `sim --gpu-memory-utilization F` picks the share).
 *
 *   requested = ceil(gpu_memory x F)                (vllm/v1/worker/utils.py)
 *   available = requested - weights - reserve       (gpu_worker.py: the weights
 *               plus what its profile run measures: the activation peak and
 *               non-torch memory such as the CUDA context)
 *   page      = 2 x block_size x kv_heads x head_dim x kv_dtype_bytes
 *               (K and V of one layer's block: AttentionSpec.page_size_bytes)
 *   blocks    = available // page // layers        (kv_cache_utils.py: every
 *               layer has its own tensor of that many pages)
 * Whole bytes throughout; // is integer division. */
#ifndef SERVELAB_SIM_KV_SIZING_H
#define SERVELAB_SIM_KV_SIZING_H

#include <stdint.h>

typedef struct model_memory {
    int layers;   /* 0: the profile names no model (its block count is fixed) */
    int kv_heads; /* grouped-query attention: fewer than the query heads */
    int head_dim;
    int kv_dtype_bytes; /* 2 for fp16/bf16 KV, 1 for fp8 */
    int64_t weight_bytes;
    int64_t reserve_bytes;         /* activation peak + non-torch memory */
    int64_t gpu_memory_bytes;      /* the total the GPU reports */
    double gpu_memory_utilization; /* the share used unless told otherwise */
} model_memory;

/* Bytes of one block of `block_size` tokens over all layers. */
int64_t kv_block_bytes(const model_memory *m, int block_size);
/* The memory left for the KV cache at utilisation `util` (may be <= 0). */
int64_t kv_available_bytes(const model_memory *m, double util);
/* The blocks that memory holds; 0 when none is left. */
long kv_blocks_for(const model_memory *m, double util, int block_size);

#endif
