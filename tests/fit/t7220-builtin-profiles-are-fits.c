/* t7220-builtin-profiles-are-fits: the built-in profiles that stand for measured servers are
 * the files `servelab fit` writes from the committed rows: each reads, says
 * where every figure came from, and is what scripts/fit_profiles.sh fits
 * again from results/ now, byte for byte. The step model reads its table
 * between points and past its last one. */
#include "sim/engine.h"
#include "sim/profile_file.h"
#include "sim/profile_files.h"
#include "sim/profiles.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(profiles_fitted_files_are_built_in_with_provenance) {
    const char *file, *text = profile_files_text("cpu-1b-2c", &file);
    CHECK(text != NULL);
    profile_doc d;
    char err[512];
    CHECK_MSG(profile_file_parse(text, strlen(text), file, &d, err, sizeof err) == 0, "%s", err);
    const sim_profile *p = sim_profile_find("cpu-1b-2c");
    CHECK(p && p->file && !strcmp(p->file, "profiles/cpu-1b-2c.yaml"));
    CHECK_INT(p->engine.max_num_seqs, d.engine.max_num_seqs);
    CHECK_INT(p->engine.n_step_points, d.engine.n_step_points);
    CHECK(d.engine.n_step_points >= 4);
    const char *keys[] = {"max_num_seqs",         "kv_blocks",      "step_ms_by_batch",
                          "prefill_per_token_ms", "decode_base_ms", "jitter"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *why = json_string_value(json_object_get(d.provenance, keys[i]));
        CHECK_MSG(why && strlen(why) > 10, "no provenance for %s", keys[i]);
    }
    /* the built-in file is the one in the source tree */
    char *disk = read_file("profiles/cpu-1b-2c.yaml", NULL);
    CHECK(disk && !strcmp(disk, text));
    free(disk);
    profile_doc_free(&d);
}

TEST_SLOW(profiles_refit_from_the_committed_rows_is_the_same_file) {
    char *dir = temp_dir();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "SERVELAB=%s sh scripts/fit_profiles.sh %s 2>&1", servelab_bin(),
             dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "%s", out);
    char path[1200];
    const char *const names[] = {"cpu-1b-2c", "vllm-cpu"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char kept_path[256];
        snprintf(path, sizeof path, "%s/%s.yaml", dir, names[i]);
        snprintf(kept_path, sizeof kept_path, "profiles/%s.yaml", names[i]);
        char *fresh = read_file(path, NULL), *kept = read_file(kept_path, NULL);
        CHECK(fresh && kept);
        CHECK_MSG(!strcmp(fresh, kept), "%s is not what the rows give now:\n%s", kept_path, fresh);
        CHECK(profile_files_text(names[i], NULL) &&
              !strcmp(profile_files_text(names[i], NULL), kept));
        free(fresh);
        free(kept);
    }
    free(out);
}

/* decode(b): decode_base at 0, the points, straight lines between them and
 * the last two points' slope beyond. */
TEST(profiles_step_table_is_read_between_and_past_its_points) {
    engine_params p = {.decode_base_ms = 2, .decode_per_seq_ms = 99};
    char err[256];
    CHECK_INT(profile_step_table_parse("1:10,2:14,4:30", &p, err, sizeof err), 0);
    CHECK_INT(p.n_step_points, 3);
    CHECK(fabs(engine_decode_ms(&p, 0) - 2) < 1e-12);
    CHECK(fabs(engine_decode_ms(&p, 1) - 10) < 1e-12);
    CHECK(fabs(engine_decode_ms(&p, 0.5) - 6) < 1e-12);
    CHECK(fabs(engine_decode_ms(&p, 3) - 22) < 1e-12);
    CHECK(fabs(engine_decode_ms(&p, 4) - 30) < 1e-12);
    CHECK(fabs(engine_decode_ms(&p, 6) - 46) < 1e-12);
    engine_params one = {.decode_base_ms = 2};
    CHECK_INT(profile_step_table_parse("1:10", &one, err, sizeof err), 0);
    CHECK(fabs(engine_decode_ms(&one, 3) - 26) < 1e-12);
    engine_params line = {.decode_base_ms = 2, .decode_per_seq_ms = 3};
    CHECK(fabs(engine_decode_ms(&line, 4) - 14) < 1e-12);
    static const char *bad[] = {"", "0:5", "2:5,1:6", "1:-1", "1:5,", "1:5,1:6", "x", "1:5:6"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        engine_params q = {0};
        CHECK_MSG(profile_step_table_parse(bad[i], &q, err, sizeof err) != 0, "'%s' accepted",
                  bad[i]);
    }
}
