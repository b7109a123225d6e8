/* t7240-fit-limits-not-seen: `servelab fit` takes no limit from what its
 * runs merely did not meet. Runs whose server reported no context length
 * (their meta.json stripped of it, as from a server whose /v1/models has
 * none) get a context far above the longest request seen, and the
 * provenance says it was not reported; so the twin refuses no prompt the
 * server was not seen to refuse. Slots no run reported are taken only from
 * a load that held requests back behind them. */
#include "fit/fit.h"
#include "sim/profile_file.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

TEST(fit_sets_no_context_limit_from_requests_it_saw) {
    char *dir = temp_dir(), cmd[2048], path[1200], err[512];
    snprintf(
        cmd, sizeof cmd,
        "predict --max-num-seqs 4 --max-model-len 4096 --api completions --ignore-eos --chunks "
        "--prompts random:64:16 --requests 300 --rate 3 --quiet --out %s/r",
        dir);
    servelab_ok(cmd);
    snprintf(path, sizeof path, "%s/r/meta.json", dir);
    json_error_t je;
    json_t *meta = json_load_file(path, 0, &je);
    CHECK(meta != NULL);
    json_t *engine = json_object_get(json_object_get(meta, "server"), "engine");
    CHECK(json_object_get(engine, "max_model_len") != NULL);
    json_object_del(engine, "max_model_len"); /* a server that does not say */
    CHECK_INT(json_dump_file(meta, path, JSON_INDENT(2)), 0);
    json_decref(meta);
    char *out;
    snprintf(cmd, sizeof cmd, "fit %s/r --out %s/f.yaml --min-gaps 5 --quiet", dir, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    snprintf(path, sizeof path, "%s/f.yaml", dir);
    profile_doc d;
    CHECK_MSG(profile_file_read(path, &d, err, sizeof err) == 0, "%s", err);
    /* the longest request was 3 + 64 + 16 tokens; the limit is not that */
    CHECK_MSG(d.engine.max_model_len == FIT_UNREPORTED_MAX_MODEL_LEN, "max_model_len %d",
              d.engine.max_model_len);
    const char *why = json_string_value(json_object_get(d.provenance, "max_model_len"));
    CHECK_MSG(why && strstr(why, "not reported"), "provenance: %s", why ? why : "(none)");
    CHECK_INT(d.engine.max_num_seqs, 4); /* the slots it did report stay */
    profile_doc_free(&d);
    free(out);
}

/* A run of the engine with `slots` sequences at `rate`, its meta.json
 * stripped of every limit (a server that reports none), fitted: the
 * max_num_seqs and its provenance. */
static int fitted_slots(const char *dir, const char *rate, char *why, size_t n) {
    char cmd[2048], path[1200], err[512];
    snprintf(cmd, sizeof cmd,
             "predict --max-num-seqs 4 --api completions --ignore-eos --chunks "
             "--prompts random:32:40 --requests 400 --rate %s --quiet --out %s/r%s",
             rate, dir, rate);
    servelab_ok(cmd);
    snprintf(path, sizeof path, "%s/r%s/meta.json", dir, rate);
    json_t *meta = json_load_file(path, 0, NULL);
    json_t *engine = json_object_get(json_object_get(meta, "server"), "engine");
    json_object_del(engine, "max_num_seqs");
    json_object_del(engine, "max_model_len");
    json_dump_file(meta, path, JSON_INDENT(2));
    json_decref(meta);
    snprintf(cmd, sizeof cmd, "fit %s/r%s --out %s/f%s.yaml --min-gaps 5 --quiet", dir, rate, dir,
             rate);
    servelab_ok(cmd);
    snprintf(path, sizeof path, "%s/f%s.yaml", dir, rate);
    profile_doc d;
    if (profile_file_read(path, &d, err, sizeof err))
        return -1;
    const char *p = json_string_value(json_object_get(d.provenance, "max_num_seqs"));
    snprintf(why, n, "%s", p ? p : "");
    int slots = d.engine.max_num_seqs;
    profile_doc_free(&d);
    return slots;
}

/* Slots no run reported: a load that kept requests waiting behind the 4
 * slots shows the cap; a light one, which never filled them, shows none,
 * and the twin gets the unreported default rather than the few it saw. */
TEST(fit_takes_slots_only_from_requests_held_back) {
    char *dir = temp_dir(), why[512];
    int heavy = fitted_slots(dir, "40", why, sizeof why);
    CHECK_MSG(heavy == 4, "under load: %d slots (%s)", heavy, why);
    CHECK_MSG(strstr(why, "held back"), "%s", why);
    int light = fitted_slots(dir, "0.5", why, sizeof why);
    CHECK_MSG(light == FIT_UNREPORTED_MAX_NUM_SEQS, "light load: %d slots (%s)", light, why);
    CHECK_MSG(strstr(why, "not reported"), "%s", why);
}
