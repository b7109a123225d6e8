/* fuzz_replay: libFuzzer target for the trace readers (workload/replay.h:
 * Mooncake's and our JSONL, BurstGPT's and Azure's CSV, told apart by the
 * first line), which read a file a user downloaded from anywhere.
 *
 * The input is the file. A trace that loads has its records in time order
 * with counts that are not negative, and each record's prompt is JSON; one
 * that does not load says why in one line that starts with the path. */
#include "fuzz_common.h"
#include "workload/replay.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[512];
    snprintf(path, sizeof path, "%s/trace", fuzz_dir());
    fuzz_write_file(path, data, size);
    replay_trace t;
    char err[1024] = "";
    if (replay_load(&t, path, REPLAY_AUTO, 16, err, sizeof err) == 0) {
        int64_t *due = NULL;
        size_t n = replay_due_times(&t, &due);
        for (size_t k = 0; k < n && k < 64; k++) {
            FUZZ_CHECK(k == 0 || due[k] >= due[k - 1]);
            FUZZ_CHECK(replay_prompt_tokens(&t, k) >= 0 && replay_output_tokens(&t, k) >= 0);
            json_t *p = replay_prompt(&t, k, k % 2);
            FUZZ_CHECK(p != NULL);
            json_decref(p);
        }
        free(due);
        replay_free(&t);
    } else {
        FUZZ_CHECK(!strncmp(err, path, strlen(path)) && strchr(err, '\n') == NULL);
    }
    return 0;
}
