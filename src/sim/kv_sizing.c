/* kv_sizing: vLLM's start-up arithmetic for the KV cache (see kv_sizing.h),
 * kept in integers as vLLM keeps it, so a block count can be checked to
 * the block. */
#include "sim/kv_sizing.h"

#include <math.h>

int64_t kv_block_bytes(const model_memory *m, int block_size) {
    return 2LL * block_size * m->kv_heads * m->head_dim * m->kv_dtype_bytes * m->layers;
}

int64_t kv_available_bytes(const model_memory *m, double util) {
    int64_t requested = (int64_t)ceil((double)m->gpu_memory_bytes * util);
    return requested - m->weight_bytes - m->reserve_bytes;
}

long kv_blocks_for(const model_memory *m, double util, int block_size) {
    int64_t available = kv_available_bytes(m, util);
    if (available <= 0 || m->layers < 1 || block_size < 1)
        return 0;
    int64_t page = 2LL * block_size * m->kv_heads * m->head_dim * m->kv_dtype_bytes;
    return (long)(available / page / m->layers);
}
