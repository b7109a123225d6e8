/* vllm_import: a result file of vLLM's client (`vllm bench serve
 * --save-result --save-detailed`) read as a run, so that a vLLM client's
 * measurement and servelab's sit in one report. The file's per-request
 * arrays become rows (times from the file's first arrival); what vLLM
 * does not record stays unknown rather than guessed (docs/vllm.md). */
#ifndef SERVELAB_REPORT_VLLM_IMPORT_H
#define SERVELAB_REPORT_VLLM_IMPORT_H

#include "report/load.h"

/* Is `path` a regular file (what the report takes for such a result)? */
int vllm_import_is_file(const char *path);

/* Appends the file's requests to `rows` as part `part` and fills `files`
 * (a meta object made from the file's settings). -1 with "FILE: what" in
 * err when it is not such a file or an array does not read. */
int vllm_import(const char *path, int part, run_rows *rows, run_files *files, char *err,
                int errlen);

#endif
