/* prom: a parser for the Prometheus text exposition format (version 0.0.4),
 * the format of an inference server's /metrics page (vLLM's `vllm:` names,
 * llama.cpp's `llamacpp:` names). It hands back one sample at a time through
 * a callback, with its labels unescaped and the type its family was declared
 * with, and it skips and counts the lines it cannot read instead of giving up
 * on the whole page: a monitor wants every metric it can get. */
#ifndef SERVELAB_MONITOR_PROM_H
#define SERVELAB_MONITOR_PROM_H

#include <stddef.h>
#include <stdint.h>

#define PROM_MAX_LABELS 16

typedef struct prom_label {
    char name[64];
    char value[256]; /* unescaped */
} prom_label;

typedef struct prom_sample {
    char name[160];
    prom_label labels[PROM_MAX_LABELS];
    int n_labels;
    double value; /* NaN, +Inf, -Inf accepted as Prometheus spells them */
    int has_timestamp;
    int64_t timestamp_ms;
    /* From the preceding `# TYPE` line of this sample's family (for a
     * histogram `x`: `x_bucket`, `x_sum`, `x_count`; for a summary `x`:
     * `x_sum`, `x_count`): "counter", "gauge", "histogram", "summary" or
     * "untyped" (static strings); "untyped" when there is none. */
    const char *type;
} prom_sample;

/* Called once per valid sample; `s` is valid only during the call. */
typedef void (*prom_sample_fn)(void *ud, const prom_sample *s);

/* Parse a whole exposition of `n` bytes (no NUL terminator needed). Calls
 * `fn` (may be NULL) for every valid sample line, in page order, and returns
 * how many there were. Lines that are not valid (a malformed sample, HELP or
 * TYPE line; a name or value too long for the buffers above; more than
 * PROM_MAX_LABELS labels) are skipped: their count goes to `*bad_lines` and
 * the 1-based number of the first one to `*first_bad_line` (0 if none); both
 * may be NULL. Never reads outside text[0..n). */
int prom_parse(const char *text, size_t n, prom_sample_fn fn, void *ud, int *bad_lines,
               int *first_bad_line);

/* Render the labels as Prometheus does, k="v",k2="v2" with \\ \" and \n
 * escaped, into `buf` (always NUL-terminated when cap > 0; cut short when it
 * does not fit). Returns the length the whole text needs, NUL excluded. */
size_t prom_labels_format(const prom_sample *s, char *buf, size_t cap);

/* The value of label `name`, or NULL when the sample has none. */
const char *prom_label_get(const prom_sample *s, const char *name);

#endif
