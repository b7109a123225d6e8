/* vllm_export: a run directory as the result file vLLM's client writes
 * (`vllm bench serve --save-result --save-detailed`), so that scripts and
 * dashboards built on that file read servelab's runs unchanged. Every key
 * carries vLLM's definition and vLLM's units (per-request arrays in
 * seconds, *_ms statistics in milliseconds), computed from the run's rows;
 * where vLLM's definition differs from servelab's (its ITL is the gap
 * between chunks, its latency ends at the last chunk), the file holds
 * vLLM's: docs/vllm.md lists each key and each difference. */
#ifndef SERVELAB_REPORT_VLLM_EXPORT_H
#define SERVELAB_REPORT_VLLM_EXPORT_H

#include "report/report.h"

#include <jansson.h>

#define VLLM_MAX_PERCENTILES 16

typedef struct vllm_export_opts {
    double percentiles[VLLM_MAX_PERCENTILES]; /* vLLM's --metric-percentiles; default {99} */
    int n_percentiles;
    const char *label; /* NULL: the run directory's name */
} vllm_export_opts;

/* Reads "99" or "50,90,99.9" (vLLM's --metric-percentiles) into o, each in
 * [0, 100] (NULL: 99). 0, or -1 with what is wrong in err. */
int vllm_percentiles_parse(const char *text, vllm_export_opts *o, char *err, int errlen);

/* The result object of the run in `dir`; NULL with "file:line: what" in
 * err when its rows do not read. */
json_t *vllm_export(const char *dir, const vllm_export_opts *o, char *err, int errlen);

/* vllm_export written to `path` (through a temporary name beside it). */
int vllm_export_file(const char *dir, const char *path, const vllm_export_opts *o, char *err,
                     int errlen);

/* `report --vllm-json`: one vllm-RUN.json (vllm-RUN-rep-K.json for each
 * of several repetitions; a campaign's "/" in a name becomes "_") per run
 * directory of the report (not for a run read from such a file), added to
 * its files. -1 with err when one does not read. */
int vllm_report_files(const report *r, const vllm_export_opts *o, out_file **files, int *n_files,
                      char *err, int errlen);

#endif
