/* profiles: the built-in server models.
 *
 * tiny   A fast, roomy server for tests: 1 ms steps, 256 sequences, a KV cache
 *        that never runs out at test loads. Not meant to resemble hardware.
 *
 * gpu-7b A 7B-class model (Llama-2-7B shape, AWQ 4-bit weights) under vLLM on
 *        one 24 GB RTX 3090 with --max-num-seqs 32.
 *        - decode_base 7.85 ms + 0.15 ms a sequence: batch-1 decode is 8 ms
 *          per output token (AWQ 7B on a 3090 streams ~120-125 tok/s alone
 *          in public vLLM and AutoAWQ benchmarks), and at 8 requests/s of
 *          the built-in short/medium/long chat mix (about 20 decoding at
 *          once plus interleaved prefill) TPOT lands near 13 ms (measured
 *          with `servelab run --api chat --rate 8`: p50 12.7, mean 13.4).
 *        - prefill 0.07 ms a token: ~14k prompt tokens/s when batched, the
 *          order of a 3090's fp16 tensor throughput on a 7B (2 x 7e9 FLOP a
 *          token at ~50% of 71 TFLOPS is ~5k tok/s unbatched; chunked prefill
 *          mixed into decode steps amortises weight loads).
 *        - KV: 24 GB x 0.9 utilisation - ~4 GB AWQ weights - ~2.5 GB
 *          activations leaves ~15 GB; Llama-2-7B keeps 2 x 32 layers x 4096
 *          x 2 bytes = 512 KiB a token, so ~29k tokens = 1800 blocks of 16.
 *        - max_model_len 4096 (Llama-2), max_num_batched_tokens 2048
 *          (vLLM's chunked-prefill default for online serving at the time).
 *        - jitter 2%: step-to-step variation seen in vLLM step traces.
 *
 * cpu-1b A 1B model (Llama-3.2-1B class, Q4) under llama.cpp's server on 8
 *        CPU cores with --parallel 4.
 *        - decode 28 ms + 1.5 ms a slot: ~30 ms per token alone and ~34 ms
 *          with four slots busy (llama.cpp CPU decode is memory-bandwidth
 *          bound; public llama-bench runs of 1B Q4 on 8 desktop cores show
 *          30-35 tok/s single stream).
 *        - prefill 3 ms a token (~330 prompt tok/s on 8 cores).
 *        - KV: -c 16384 shared by 4 slots = 1024 blocks of 16 tokens;
 *          max_model_len 4096 a slot; batch 2048 (llama.cpp's -b default).
 *        - jitter 3%.
 * Every value can be overridden by its own `servelab sim` flag. */
#include "sim/profiles.h"

#include <string.h>

static const sim_profile profiles[] = {
    {.name = "tiny",
     .about = "fast roomy server for tests (1 ms steps)",
     .engine = {.max_num_seqs = 256,
                .kv_blocks = 65536,
                .block_size = 16,
                .max_model_len = 8192,
                .max_batched_tokens = 8192,
                .decode_base_ms = 1.0,
                .decode_per_seq_ms = 0.005,
                .prefill_per_token_ms = 0.0005,
                .jitter = 0.0},
     .eos_min_frac_pct = 50},
    {.name = "gpu-7b",
     .about = "7B AWQ model under vLLM on one RTX 3090, 32 sequences",
     .engine = {.max_num_seqs = 32,
                .kv_blocks = 1800,
                .block_size = 16,
                .max_model_len = 4096,
                .max_batched_tokens = 2048,
                .decode_base_ms = 7.85,
                .decode_per_seq_ms = 0.15,
                .prefill_per_token_ms = 0.07,
                .jitter = 0.02},
     .eos_min_frac_pct = 50},
    {.name = "cpu-1b",
     .about = "1B model under llama.cpp on 8 CPU cores, 4 slots",
     .engine = {.max_num_seqs = 4,
                .kv_blocks = 1024,
                .block_size = 16,
                .max_model_len = 4096,
                .max_batched_tokens = 2048,
                .decode_base_ms = 28.0,
                .decode_per_seq_ms = 1.5,
                .prefill_per_token_ms = 3.0,
                .jitter = 0.03},
     .eos_min_frac_pct = 50},
};

const sim_profile *sim_profile_find(const char *name) {
    for (size_t i = 0; i < sizeof profiles / sizeof *profiles; i++)
        if (!strcmp(profiles[i].name, name))
            return &profiles[i];
    return NULL;
}

const char *sim_profile_names(void) {
    return "tiny, gpu-7b, cpu-1b";
}
