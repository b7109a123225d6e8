/* fuzz_profile: libFuzzer target for the simulator's profile files
 * (sim/profile_file.h, profile_file_parse), what `fit` writes and `sim`,
 * `predict` and `capacity --virtual` read.
 *
 * The input is the YAML text. A profile that loads holds an engine the
 * engine accepts (engine_params_check), with every step cost within its
 * bound; one that does not load says why in one line that starts with the
 * file's name. */
#include "fuzz_common.h"
#include "sim/engine.h"
#include "sim/profile_file.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    profile_doc d;
    memset(&d, 0, sizeof d);
    char err[512] = "";
    if (profile_file_parse((const char *)data, size, "fuzz.yaml", &d, err, sizeof err) == 0) {
        FUZZ_CHECK(d.engine.max_num_seqs >= 1 && d.engine.kv_blocks >= 1);
        FUZZ_CHECK(d.engine.decode_base_ms >= 0 && d.engine.prefill_per_token_ms >= 0);
        profile_doc_free(&d);
    } else {
        FUZZ_CHECK(!strncmp(err, "fuzz.yaml", 9));
        FUZZ_CHECK(strchr(err, '\n') == NULL);
    }
    return 0;
}
