/* fuzz_vllm_import: libFuzzer target for the reader of vLLM's client's
 * result files (report/vllm_import.h), which `report` takes from wherever a
 * user ran `vllm bench serve`.
 *
 * The input is the file. One that reads gives rows whose times are in
 * order (sent, first token, end) where known; one that does not says why in
 * one line that starts with the path. */
#include "fuzz_common.h"
#include "report/vllm_import.h"

#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[512];
    snprintf(path, sizeof path, "%s/vllm.json", fuzz_dir());
    fuzz_write_file(path, data, size);
    run_rows rows = {0};
    run_files files;
    char err[1024] = "";
    if (vllm_import(path, 0, &rows, &files, err, sizeof err) == 0) {
        for (size_t i = 0; i < rows.n; i++) {
            const req_rec *r = &rows.r[i];
            FUZZ_CHECK(isnan(r->first_ms) || isnan(r->sent_ms) || r->first_ms >= r->sent_ms);
        }
        run_files_free(&files);
    } else {
        FUZZ_CHECK(!strncmp(err, path, strlen(path)) && strchr(err, '\n') == NULL);
    }
    rows_free(&rows);
    return 0;
}
