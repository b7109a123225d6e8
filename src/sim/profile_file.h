/* profile_file: a simulator profile kept in a YAML file, as `servelab fit`
 * writes it and `sim --profile-file` / `predict --profile-file` read it.
 *
 * A file holds the engine's every figure under `engine:` (the keys are
 * those of a campaign's target.sim: max_num_seqs, kv_blocks, block_size,
 * max_model_len, max_num_batched_tokens, decode_base_ms, decode_per_seq_ms,
 * step_ms_by_batch, prefill_per_token_ms, prefill_ctx_per_1k_ms,
 * prefill_ms_by_tokens, jitter,
 * eos_min_frac_pct, no_prefix_caching), each read by the row of
 * `servelab sim`'s own flag, so a value means in a file what it means on the
 * command line. Beside them: `name`, `about`, the `server` and `model` it
 * stands for, `provenance` (for each figure, where it came from: the rows
 * it was fitted from, or where it was published) and `fit` (what the fit
 * saw: its runs and residuals; a record, not read back). docs/simulator.md
 * shows a whole file. */
#ifndef SERVELAB_PROFILE_FILE_H
#define SERVELAB_PROFILE_FILE_H

#include "sim/engine.h"

#include <jansson.h>
#include <stddef.h>

typedef struct profile_doc {
    char *name, *about, *server, *model; /* malloc'd; NULL when absent */
    engine_params engine;
    int eos_min_frac_pct;
    json_t *provenance; /* figure -> text, in the file's order; NULL: none */
    json_t *fit;        /* the fit's record, written as given; NULL: none */
} profile_doc;

/* Reads `path` into *d (every engine figure required but the optional
 * ones: decode_per_seq_ms, step_ms_by_batch, prefill_ctx_per_1k_ms,
 * jitter, eos_min_frac_pct, no_prefix_caching). 0, or -1 with
 * "PATH:LINE: KEY: what is wrong" in err. */
int profile_file_read(const char *path, profile_doc *d, char *err, size_t errlen);
/* The same from text already in memory; `name` stands for the file in
 * messages. */
int profile_file_parse(const char *text, size_t len, const char *name, profile_doc *d, char *err,
                       size_t errlen);
/* Writes *d to `path`, which must not exist unless `force`. 0, or -1 with
 * why in err. */
int profile_file_write(const char *path, const profile_doc *d, int force, char *err, size_t errlen);
void profile_doc_free(profile_doc *d);

/* "B:MS,B:MS,..." (the flag's and the file's form of the step table) into
 * p->step_batch/step_ms: 0, or -1 with what is wrong. */
int profile_step_table_parse(const char *text, engine_params *p, char *err, size_t errlen);
/* The table back in that form into buf. */
void profile_step_table_format(const engine_params *p, char *buf, size_t cap);
/* The same for the prefill table, "TOKENS:MS,..." (prefill_tokens and
 * prefill_ms: the cost of a prompt's first TOKENS tokens). */
int profile_prefill_table_parse(const char *text, engine_params *p, char *err, size_t errlen);
void profile_prefill_table_format(const engine_params *p, char *buf, size_t cap);

#endif
