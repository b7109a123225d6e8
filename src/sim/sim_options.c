/* sim_options: the table of `servelab sim`'s options (see sim_options.h).
 * Rows without a campaign key (host, port, trace, trace-tokens, profile)
 * are the ones a sweep sets itself for the simulators it starts; the
 * profile is a key of target.sim of its own. */
#include "sim/sim_options.h"
#include "sim/profile_file.h"
#include "sim/profiles.h"
#include "common/util.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int fault_check(const char *text, char *err, size_t errlen) {
    fault_spec f;
    char why[256];
    if (!fault_spec_parse(text, &f, why, sizeof why))
        return 0;
    /* fault_spec_parse names the flag itself; the caller puts the name in front */
    snprintf(err, errlen, "%s", strncmp(why, "--fault: ", 9) ? why : why + 9);
    return -1;
}

static int step_table_check(const char *text, char *err, size_t errlen) {
    engine_params p = {0};
    return profile_step_table_parse(text, &p, err, errlen);
}

static int prefill_table_check(const char *text, char *err, size_t errlen) {
    engine_params p = {0};
    return profile_prefill_table_parse(text, &p, err, errlen);
}

#define SIM(field) OPT_AT(sim_opts, field)

const opt_def sim_options[] = {
    {.name = "host",
     .type = OPT_STRING,
     SIM(cfg.host),
     .arg = "H",
     .def = "127.0.0.1",
     .help = "bind address"},
    {.name = "port",
     .type = OPT_INT,
     SIM(cfg.port),
     .arg = "N",
     .max = 65535,
     .def = "8000",
     .help = "port (0 picks a free one)"},
    {.name = "profile",
     .type = OPT_CHOICE,
     SIM(profile),
     .arg = "NAME",
     .choices = "tiny|gpu-7b|cpu-1b|cpu-1b-2c|vllm-cpu",
     .def = "tiny",
     .help = "the server modelled: tiny|gpu-7b|cpu-1b|cpu-1b-2c|vllm-cpu"},
    {.name = "profile-file",
     .key = "profile_file",
     .type = OPT_STRING,
     SIM(profile_file),
     .arg = "FILE",
     .help = "the server modelled, from a profile file (servelab fit writes them)"},
    {.name = "model",
     .key = "model",
     .type = OPT_STRING,
     SIM(cfg.model),
     .arg = "NAME",
     .def = "sim-model",
     .help = "served model id"},
    {.name = "seed",
     .key = "seed",
     .type = OPT_INT,
     SIM(cfg.seed),
     .arg = "N",
     .def = "0",
     .help = "seed for output lengths, jitter, faults"},
    {.name = "trace",
     .type = OPT_STRING,
     SIM(cfg.trace_path),
     .arg = "FILE",
     .help = "ground-truth CSV, one row per request"},
    {.name = "trace-tokens",
     .type = OPT_STRING,
     SIM(cfg.token_trace_path),
     .arg = "FILE",
     .help = "when each token's bytes were written (benchmarks)"},
    {.name = "fault",
     .key = "fault",
     .type = OPT_STRING,
     SIM(fault),
     .arg = "SPEC",
     .check = fault_check,
     .help = "e.g. http429=0.05,http500=0.02,disconnect=0.02,malformed=0.01,stall=0.01"},
    {.name = "stall-ms",
     .key = "stall_ms",
     .type = OPT_INT,
     SIM(cfg.stall_ms),
     .arg = "MS",
     .def = "60000",
     .help = "how long a stall fault lasts"},
    {.name = "threads",
     .key = "threads",
     .type = OPT_INT,
     SIM(cfg.threads),
     .arg = "N",
     .min = 1,
     .max = 64,
     .def = "1",
     .help = "I/O threads behind the one engine"},
    {.name = "cpus",
     .key = "cpus",
     .type = OPT_STRING,
     SIM(cpus),
     .arg = "LIST",
     .help = "run on these CPUs only, e.g. 1 or 2-3"},
    {.name = "realtime",
     .key = "realtime",
     .type = OPT_FLAG,
     SIM(realtime),
     .help = "SCHED_FIFO when allowed, else nice -10"},

    {.name = "max-num-seqs",
     .key = "max_num_seqs",
     .type = OPT_INT,
     SIM(cfg.engine.max_num_seqs),
     .arg = "N",
     .min = 1,
     .group = "engine (default: the profile's)",
     .help = "most sequences running at once"},
    {.name = "kv-blocks",
     .key = "kv_blocks",
     .type = OPT_INT,
     SIM(cfg.engine.kv_blocks),
     OPT_SEEN(sim_opts, kv_blocks_given),
     .arg = "N",
     .min = 1,
     .help = "KV cache size in blocks (overrides --gpu-memory-utilization)"},
    {.name = "gpu-memory-utilization",
     .key = "gpu_memory_utilization",
     .type = OPT_NUMBER,
     SIM(gpu_memory_utilization),
     .arg = "F",
     .min = 0,
     .above = 1,
     .max = 1,
     .help = "share of the GPU for vLLM: KV blocks from the model (gpu-7b: 0.9)"},
    {.name = "no-prefix-caching",
     .key = "no_prefix_caching",
     .type = OPT_FLAG,
     SIM(no_prefix_caching),
     .help = "turn automatic prefix caching off (on by default, as in vLLM)"},
    {.name = "block-size",
     .key = "block_size",
     .type = OPT_INT,
     SIM(cfg.engine.block_size),
     .arg = "N",
     .min = 1,
     .help = "tokens per KV block"},
    {.name = "max-model-len",
     .key = "max_model_len",
     .type = OPT_INT,
     SIM(cfg.engine.max_model_len),
     .arg = "N",
     .min = 2,
     .help = "prompt + output limit"},
    {.name = "max-num-batched-tokens",
     .key = "max_num_batched_tokens",
     .type = OPT_INT,
     SIM(cfg.engine.max_batched_tokens),
     .arg = "N",
     .min = 1,
     .help = "token budget of one step (chunked prefill)"},
    {.name = "decode-base-ms",
     .key = "decode_base_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.decode_base_ms),
     .arg = "MS",
     .help = "fixed cost of a step"},
    {.name = "decode-per-seq-ms",
     .key = "decode_per_seq_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.decode_per_seq_ms),
     OPT_SEEN(sim_opts, per_seq_given),
     .arg = "MS",
     .help = "a step's cost per decoding sequence (replaces a step table)"},
    {.name = "step-ms-by-batch",
     .key = "step_ms_by_batch",
     .type = OPT_STRING,
     SIM(step_table),
     .arg = "B:MS,...",
     .check = step_table_check,
     .help = "the decode step measured by batch, read between points (replaces "
             "--decode-per-seq-ms)"},
    {.name = "prefill-per-token-ms",
     .key = "prefill_per_token_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.prefill_per_token_ms),
     OPT_SEEN(sim_opts, per_token_given),
     .arg = "MS",
     .help = "a step's cost per prompt token"},
    {.name = "prefill-ms-by-tokens",
     .key = "prefill_ms_by_tokens",
     .type = OPT_STRING,
     SIM(prefill_table),
     .arg = "N:MS,...",
     .check = prefill_table_check,
     .help = "the prefill measured by prompt length: the cost of a prompt's first N tokens, read "
             "between points (replaces the two per-token terms)"},
    {.name = "prefill-ctx-per-1k-ms",
     .key = "prefill_ctx_per_1k_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.prefill_ctx_per_1k_ms),
     .arg = "MS",
     .help = "a prompt token's extra cost per 1000 tokens before it"},
    {.name = "mixed-step-per-seq-ms",
     .key = "mixed_step_per_seq_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.mixed_per_seq_ms),
     .arg = "MS",
     .help = "a step that computes a prompt while others decode costs --decode-base-ms + MS a "
             "decoding sequence + its prefill (in place of the step's decode cost; 0: off)"},
    {.name = "idle-wake-ms",
     .key = "idle_wake_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.idle_wake_ms),
     .arg = "MS",
     .help = "extra cost of the first step after the engine was idle --idle-after-ms"},
    {.name = "idle-after-ms",
     .key = "idle_after_ms",
     .type = OPT_NUMBER,
     SIM(cfg.engine.idle_after_ms),
     .arg = "MS",
     .help = "how long idle before a step pays --idle-wake-ms"},
    {.name = "jitter",
     .key = "jitter",
     .type = OPT_NUMBER,
     SIM(cfg.engine.jitter),
     .arg = "FRAC",
     .help = "relative sd of a step's time (0: none)"},
    {.name = "speedup",
     .key = "speedup",
     .type = OPT_NUMBER,
     SIM(speedup),
     .arg = "K",
     .min = 1,
     .def = "1",
     .help = "run K times faster than modelled: every step's cost / K (a sweep's rehearsal)"},
    {.name = "eos-min-frac-pct",
     .key = "eos_min_frac_pct",
     .type = OPT_INT,
     SIM(cfg.eos_min_frac_pct),
     .arg = "PCT",
     .max = 100,
     .help = "shortest output without ignore_eos, in % of max_tokens"},
    {.name = "num-speculative-tokens",
     .key = "num_speculative_tokens",
     .type = OPT_INT,
     SIM(cfg.engine.spec_tokens),
     .arg = "K",
     .max = ENGINE_SPEC_MAX,
     .group = "what the answers carry",
     .help = "speculative decoding: K draft tokens a decode, verified in the step; accepted ones "
             "leave with the decode's own token as one chunk (0: off)"},
    {.name = "spec-accept",
     .key = "spec_accept",
     .type = OPT_NUMBER,
     SIM(spec_accept),
     .arg = "P",
     .min = 0,
     .max = 1,
     .def = "0.7",
     .help = "a draft token's chance of acceptance when every one before it was accepted"},
    {.name = "reasoning-tokens",
     .key = "reasoning_tokens",
     .type = OPT_INT,
     SIM(cfg.reasoning_tokens),
     .arg = "N",
     .help = "chat answers think first: their first N output tokens stream as reasoning (0: none)"},
    {.name = "reasoning-field",
     .key = "reasoning_field",
     .type = OPT_CHOICE,
     SIM(cfg.reasoning_field),
     .arg = "NAME",
     .choices = "reasoning|reasoning_content",
     .def = "reasoning",
     .help = "the delta field reasoning streams in: vLLM's current `reasoning` or the older "
             "`reasoning_content`"},
    {.name = "reasoning-usage",
     .key = "reasoning_usage",
     .type = OPT_FLAG,
     SIM(cfg.reasoning_usage),
     .help = "the final usage says usage.completion_tokens_details.reasoning_tokens (as OpenAI "
             "does; vLLM does not)"},
    {.name = "invalid-json-pct",
     .key = "invalid_json_pct",
     .type = OPT_INT,
     SIM(cfg.invalid_json_pct),
     .arg = "PCT",
     .max = 100,
     .help = "tool calls and JSON answers (tools, response_format) made wrong on purpose: a "
             "required property left out, else the text cut in half"},

    {.name = "max-connections",
     .key = "max_connections",
     .type = OPT_INT,
     SIM(cfg.limits.max_connections),
     .arg = "N",
     .min = 1,
     .def = "10000",
     .group = "limits",
     .help = "connections at once; a new one evicts the longest idle"},
    {.name = "max-body-bytes",
     .key = "max_body_bytes",
     .type = OPT_INT,
     SIM(cfg.limits.max_body_bytes),
     .arg = "N",
     .min = 1,
     .def = "8388608",
     .help = "largest request body (413 over it)"},
    {.name = "max-header-bytes",
     .key = "max_header_bytes",
     .type = OPT_INT,
     SIM(cfg.limits.max_header_bytes),
     .arg = "N",
     .min = 256,
     .def = "16384",
     .help = "largest request head (431 over it)"},
    {.name = "request-timeout-ms",
     .key = "request_timeout_ms",
     .type = OPT_INT,
     SIM(cfg.limits.request_timeout_ms),
     .arg = "MS",
     .min = 1,
     .def = "30000",
     .help = "a request must arrive whole within this (408)"},
    {.name = "idle-timeout-ms",
     .key = "idle_timeout_ms",
     .type = OPT_INT,
     SIM(cfg.limits.idle_timeout_ms),
     .arg = "MS",
     .min = 1,
     .def = "300000",
     .help = "an idle keep-alive connection closes after this"},
    {.name = "keep-abandoned",
     .key = "keep_abandoned",
     .type = OPT_FLAG,
     SIM(cfg.keep_abandoned),
     .help = "go on with a request whose client went away, to its last token (output dropped), "
             "instead of aborting it"},
    {.name = "no-metrics",
     .key = "no_metrics",
     .type = OPT_FLAG,
     SIM(cfg.no_metrics),
     .help = "answer /metrics with 404, as a server with no Prometheus page (Ollama, hosted "
             "APIs)"},
    {.name = "close-after-stream",
     .key = "close_after_stream",
     .type = OPT_FLAG,
     SIM(cfg.limits.close_after_stream),
     .help = "close the connection after each streamed answer, as llama.cpp does"},
    {0}};

int sim_opts_init(sim_opts *o, const char *name) {
    memset(o, 0, sizeof *o);
    opt_defaults(sim_options, o);
    const sim_profile *p = sim_profile_find(name ? name : o->profile);
    if (!p)
        return -1;
    o->profile = p->name;
    o->cfg.profile_name = p->name;
    o->cfg.engine = sim_profile_engine(p);
    o->cfg.eos_min_frac_pct = p->eos_min_frac_pct;
    return 0;
}

int sim_opts_init_file(sim_opts *o, const char *path, char *err, int errlen) {
    memset(o, 0, sizeof *o);
    opt_defaults(sim_options, o);
    profile_doc *d = xcalloc(1, sizeof *d);
    if (profile_file_read(path, d, err, (size_t)errlen)) {
        free(d);
        return -1;
    }
    o->file = d;
    o->profile = d->name;
    o->profile_file = path;
    o->cfg.profile_name = d->name;
    o->cfg.engine = d->engine;
    o->cfg.eos_min_frac_pct = d->eos_min_frac_pct;
    o->no_prefix_caching = !d->engine.enable_prefix_caching;
    o->kv_blocks_given = 1; /* a file's blocks are its own, not computed from a GPU */
    return 0;
}

int sim_opts_init_chosen(sim_opts *o, const char *profile, const char *file, char *err,
                         int errlen) {
    sim_opts_init(o, "tiny");
    if (profile && file) {
        snprintf(err, (size_t)errlen, "give --profile or --profile-file, not both");
        return -1;
    }
    if (file) {
        char why[1024];
        if (sim_opts_init_file(o, file, why, sizeof why) == 0)
            return 0;
        sim_opts_init(o, "tiny");
        snprintf(err, (size_t)errlen, "--profile-file: %s", why);
        return -1;
    }
    if (profile && sim_opts_init(o, profile) < 0) {
        sim_opts_init(o, "tiny");
        return 1;
    }
    return 0;
}

void sim_opts_free(sim_opts *o) {
    if (o->file) {
        profile_doc_free(o->file);
        free(o->file);
        o->file = NULL;
    }
}

/* The KV blocks: --kv-blocks as given (vLLM's num_gpu_blocks_override),
 * else from the profile's model and GPU at the utilisation in force, with
 * the final block size. */
static int size_kv_cache(sim_opts *o, char *err, int errlen) {
    const sim_profile *p = o->file ? NULL : sim_profile_find(o->profile);
    static const model_memory none = {0};
    const model_memory *m = p ? &p->memory : &none;
    o->cfg.gpu_memory_utilization = 0;
    if (o->gpu_memory_utilization > 0 && m->layers == 0) {
        snprintf(err, errlen,
                 "--gpu-memory-utilization: the %s profile names no model or GPU memory; give "
                 "--kv-blocks instead",
                 o->profile);
        return -1;
    }
    if (o->kv_blocks_given || m->layers == 0)
        return 0;
    double util =
        o->gpu_memory_utilization > 0 ? o->gpu_memory_utilization : m->gpu_memory_utilization;
    long blocks = kv_blocks_for(m, util, o->cfg.engine.block_size);
    if (blocks < 1) {
        snprintf(err, errlen,
                 "--gpu-memory-utilization %g: no memory is left for the KV cache (%.2f GiB x "
                 "%g, minus %.2f GiB of weights and %.2f GiB reserved); raise it",
                 util, m->gpu_memory_bytes / 1073741824.0, util, m->weight_bytes / 1073741824.0,
                 m->reserve_bytes / 1073741824.0);
        return -1;
    }
    o->cfg.engine.kv_blocks = blocks > 1000000000 ? 1000000000 : (int)blocks;
    o->cfg.gpu_memory_utilization = util;
    return 0;
}

int sim_opts_finish(sim_opts *o, char *err, int errlen) {
    o->cfg.profile_name = o->profile;
    if (o->step_table &&
        profile_step_table_parse(o->step_table, &o->cfg.engine, err, (size_t)errlen))
        return -1;
    if (o->prefill_table &&
        profile_prefill_table_parse(o->prefill_table, &o->cfg.engine, err, (size_t)errlen))
        return -1;
    if (o->per_token_given && !o->prefill_table)
        o->cfg.engine.n_prefill_points = 0; /* the per-token terms the flags ask for */
    if (o->per_seq_given && !o->step_table)
        o->cfg.engine.n_step_points = 0; /* the line the flag asks for, not the table */
    if (o->fault && fault_spec_parse(o->fault, &o->cfg.faults, err, errlen))
        return -1;
    if (size_kv_cache(o, err, errlen))
        return -1;
    o->cfg.engine.enable_prefix_caching = !o->no_prefix_caching;
    o->cfg.engine.seed = o->cfg.seed;
    o->cfg.engine.spec_accept = o->spec_accept;
    /* after the flags: --speedup scales the step-cost flags given too */
    engine_divide_step_costs(&o->cfg.engine, o->speedup);
    o->cfg.engine.idle_wake_ms /= o->speedup;
    o->cfg.engine.idle_after_ms /= o->speedup;
    const char *why = engine_params_check(&o->cfg.engine); /* before anything is made */
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}
