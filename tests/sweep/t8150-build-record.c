/* What a run records about the build it measured: a managed server's
 * environment (target.server.env, its values expanded by the server's
 * shell), `sweep --metadata KEY=VALUE` in every run's meta.json and the
 * report, and the server binary's path and SHA-256 (meta.json
 * server.binary), checked against coreutils' sha256sum; and SHA-256 itself
 * against FIPS 180-4's examples. */
#include "common/sha256.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void digest_of(const char *text, size_t repeat, char hex[65]) {
    sha256_ctx c;
    sha256_init(&c);
    for (size_t i = 0; i < repeat; i++)
        sha256_update(&c, text, strlen(text));
    sha256_hex(&c, hex);
}

TEST(sha256_matches_the_standards_examples) {
    char hex[65];
    digest_of("", 1, hex);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    digest_of("abc", 1, hex);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    digest_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1, hex);
    CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    digest_of("a", 1000000, hex); /* a million single-byte updates */
    CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static char *sha256sum_of(const char *path) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "sha256sum '%s' | cut -c1-64", path);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0 && out && strlen(out) >= 64, "sha256sum: %s", out ? out : "");
    out[64] = 0;
    return out;
}

TEST(sha256_of_a_file_is_what_sha256sum_says) {
    char hex[65];
    long long bytes = 0;
    CHECK(sha256_file(servelab_bin(), hex, &bytes) == 0);
    CHECK(bytes > 100000);
    char *want = sha256sum_of(servelab_bin());
    CHECK_STR(hex, want);
    free(want);
    CHECK(sha256_file("/nonexistent/servelab", hex, &bytes) == -1);
}

static char *campaign_file(const char *dir, const char *env_block) {
    static char path[1100];
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f,
            "name: b\n"
            "target:\n  server:\n"
            "    command: 'sh -c \"printf %%s \\\"\\$SERVELAB_T_ENV\\\" > %s/env.txt; exec %s sim "
            "--port {port}\"'\n"
            "%s"
            "workload: {prompts: \"random:8:4\"}\nrequests: 4\nrate: 100\n"
            "runs:\n  - {name: a}\n  - {name: b, metadata: build=mine}\n",
            dir, servelab_bin(), env_block);
    fclose(f);
    return path;
}

static json_t *meta_of(const char *dir, const char *run) {
    char p[1200];
    snprintf(p, sizeof p, "%s/o/%s/rep-1/meta.json", dir, run);
    json_error_t je;
    json_t *m = json_load_file(p, 0, &je);
    CHECK_MSG(m != NULL, "%s: %s", p, je.text);
    return m;
}

TEST(sweep_server_env_metadata_and_binary_are_recorded) {
    char *dir = temp_dir(), cmd[4096], *out;
    const char *cfg =
        campaign_file(dir, "    env: {SERVELAB_T_ENV: 'say \"hi\" ${SERVELAB_T_UNSET:-dflt}/x'}\n");
    snprintf(cmd, sizeof cmd,
             "sweep --quiet %s --out %s/o --metadata build=d32676d --metadata tokenizer=llama3",
             cfg, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    /* the server saw the value as written: nothing in it is expanded */
    char p[1200];
    snprintf(p, sizeof p, "%s/env.txt", dir);
    char *env = read_file(p, NULL);
    CHECK_MSG(env != NULL, "the server wrote no %s", p);
    CHECK_STR(env, "say \"hi\" ${SERVELAB_T_UNSET:-dflt}/x");
    free(env);
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    json_error_t je;
    json_t *cj = json_load_file(p, 0, &je);
    CHECK(cj != NULL);
    json_t *recorded = json_object_get(
        json_object_get(json_object_get(json_object_get(cj, "target"), "server"), "env"),
        "SERVELAB_T_ENV");
    CHECK_STR(json_string_value(recorded), "say \"hi\" ${SERVELAB_T_UNSET:-dflt}/x");
    json_decref(cj);
    /* every run has the sweep's metadata; a run's own key keeps its value */
    char *want = sha256sum_of(servelab_bin());
    const char *runs[] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        json_t *m = meta_of(dir, runs[i]), *md = json_object_get(m, "metadata");
        CHECK_STR(json_string_value(json_object_get(md, "build")), i ? "mine" : "d32676d");
        CHECK_STR(json_string_value(json_object_get(md, "tokenizer")), "llama3");
        json_t *bin = json_object_get(json_object_get(m, "server"), "binary");
        CHECK_MSG(bin != NULL, "run %s: no server.binary in meta.json", runs[i]);
        CHECK_STR(json_string_value(json_object_get(bin, "sha256")), want);
        json_decref(m);
    }
    /* and the report says them */
    snprintf(p, sizeof p, "%s/o/report/summary.md", dir);
    char *md = read_file(p, NULL);
    CHECK_MSG(md != NULL, "no %s", p);
    CHECK_MSG(strstr(md, "SHA-256 ") && strstr(md, want), "the report lacks the binary's digest");
    CHECK(strstr(md, "tokenizer=llama3") != NULL);
    free(md);
    free(want);
    free(dir);
}

TEST(sweep_server_env_and_metadata_refuse_bad_names) {
    char *dir = temp_dir(), cmd[4096], *out;
    const char *cfg = campaign_file(dir, "    env: {'1BAD': x}\n");
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s/o", cfg, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "c.yaml:") && strstr(out, "'1BAD' is not a variable name"), "%s", out);
    free(out);
    cfg = campaign_file(dir, "    env: {GOOD: [a, list]}\n");
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "target.server.env.GOOD") != NULL, "%s", out);
    free(out);
    cfg = campaign_file(dir, "");
    snprintf(cmd, sizeof cmd, "sweep --quiet %s --out %s/o --metadata 'no equals'", cfg, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "--metadata") && strstr(out, "KEY=VALUE"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/o", dir);
    CHECK_MSG(access(cmd, F_OK) != 0, "a refused sweep made %s", cmd);
    free(dir);
}
