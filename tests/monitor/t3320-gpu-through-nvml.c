/* Tests for the GPU monitor (src/monitor/gpu.c). Each test compiles the fake
 * NVML in tests/fake_nvml/ into a fresh temporary directory as
 * libnvidia-ml.so.1 and points SERVELAB_NVML_LIB at it, so the dlopen path is
 * the one a real driver takes; the fake's scripted values are listed at the
 * top of fake_nvml.c. */
#include "monitor/gpu.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Build the fake (with extra cc flags) and select it for gpu_open. */
static void use_fake_nvml(const char *cflags) {
    char *dir = temp_dir();
    char lib[512], cmd[1536];
    snprintf(lib, sizeof lib, "%s/libnvidia-ml.so.1", dir);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 %s -o '%s' tests/fake_nvml/fake_nvml.c", cflags,
             lib);
    CHECK_MSG(system(cmd) == 0, "could not build the fake NVML: %s", cmd);
    setenv("SERVELAB_NVML_LIB", lib, 1);
    free(dir);
}

static gpu_monitor *open_ok(void) {
    char why[256] = "unset";
    gpu_monitor *g = gpu_open(why, sizeof why);
    CHECK_MSG(g != NULL, "gpu_open failed: %s", why);
    CHECK_STR(why, "");
    return g;
}

TEST(gpu_open_reads_fake_devices) {
    use_fake_nvml("");
    gpu_monitor *g = open_ok();
    CHECK_INT(gpu_count(g), 2);
    for (int i = 0; i < 2; i++) {
        const gpu_info *info = gpu_get_info(g, i);
        char name[32], uuid[32];
        snprintf(name, sizeof name, "Fake GPU %d", i);
        snprintf(uuid, sizeof uuid, "GPU-fake-%04d", i);
        CHECK(info != NULL);
        CHECK_STR(info->name, name);
        CHECK_STR(info->uuid, uuid);
        CHECK_NEAR(info->memory_total_mib, 24576, 1e-9);
    }
    CHECK(gpu_get_info(g, 2) == NULL);
    CHECK(gpu_get_info(g, -1) == NULL);
    CHECK_STR(gpu_driver_version(g), "550.54.15");
    CHECK_STR(gpu_cuda_version(g), "12.4");
    gpu_close(g);
}

TEST(gpu_sample_all_follows_script) {
    use_fake_nvml("");
    gpu_monitor *g = open_ok();
    gpu_sample s[2];
    for (int k = 0; k < 12; k++) {
        CHECK_INT(gpu_sample_all(g, s), 0);
        for (int i = 0; i < 2; i++) {
            CHECK_NEAR(s[i].util_pct, (10 * k + i) % 100, 1e-9);
            CHECK_NEAR(s[i].mem_used_mib, 1024.0 * (i + 1), 1e-9);
            CHECK_NEAR(s[i].power_w, 150.0 + i, 1e-9);
            CHECK_NEAR(s[i].sm_clock_mhz, 1800, 1e-9);
            CHECK_NEAR(s[i].temp_c, 60 + i, 1e-9);
        }
    }
    gpu_close(g);
}

TEST(gpu_meta_json_fields) {
    use_fake_nvml("");
    gpu_monitor *g = open_ok();
    json_t *arr = gpu_meta_json(g);
    CHECK(json_is_array(arr));
    CHECK_INT(json_array_size(arr), 2);
    for (int i = 0; i < 2; i++) {
        json_t *o = json_array_get(arr, i);
        CHECK(json_is_object(o));
        CHECK_INT(json_integer_value(json_object_get(o, "index")), i);
        CHECK_STR(json_string_value(json_object_get(o, "name")), gpu_get_info(g, i)->name);
        CHECK_STR(json_string_value(json_object_get(o, "uuid")), gpu_get_info(g, i)->uuid);
        CHECK_INT(json_integer_value(json_object_get(o, "memory_mib")), 24576);
        CHECK_STR(json_string_value(json_object_get(o, "driver")), "550.54.15");
        CHECK_STR(json_string_value(json_object_get(o, "cuda")), "12.4");
    }
    char *text = json_dumps(json_array_get(arr, 1), JSON_SORT_KEYS | JSON_COMPACT);
    CHECK_STR(text, "{\"cuda\":\"12.4\",\"driver\":\"550.54.15\",\"index\":1,\"memory_mib\":24576,"
                    "\"name\":\"Fake GPU 1\",\"uuid\":\"GPU-fake-0001\"}");
    free(text);
    json_decref(arr);
    gpu_close(g);
}

TEST(gpu_open_without_library_says_why) {
    setenv("SERVELAB_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    char why[256] = "";
    CHECK(gpu_open(why, sizeof why) == NULL);
    CHECK_STR(why, "/nonexistent/libnvidia-ml.so.1 not found: no NVIDIA driver");
    CHECK(gpu_open(NULL, 0) == NULL); /* no reason wanted is fine too */
    /* A NULL monitor is an ordinary "no GPUs" monitor. */
    json_t *arr = gpu_meta_json(NULL);
    CHECK(json_is_array(arr));
    CHECK_INT(json_array_size(arr), 0);
    json_decref(arr);
    CHECK_INT(gpu_count(NULL), 0);
    CHECK(gpu_get_info(NULL, 0) == NULL);
    CHECK_STR(gpu_driver_version(NULL), "");
    CHECK_STR(gpu_cuda_version(NULL), "");
    gpu_sample s;
    CHECK_INT(gpu_sample_all(NULL, &s), -1);
    gpu_close(NULL);
}

TEST(gpu_open_rejects_a_library_that_is_not_nvml) {
    setenv("SERVELAB_NVML_LIB", "libm.so.6", 1);
    char why[256] = "";
    CHECK(gpu_open(why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "nvmlInit_v2") != NULL, "why: %s", why);
}

TEST(gpu_open_with_zero_gpus_says_why) {
    use_fake_nvml("");
    setenv("FAKE_NVML_GPUS", "0", 1);
    char why[256] = "";
    CHECK(gpu_open(why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "no GPU") != NULL, "why: %s", why);
}

TEST(gpu_open_when_init_fails_says_why) {
    use_fake_nvml("");
    setenv("FAKE_NVML_FAIL_INIT", "1", 1);
    char why[256] = "";
    CHECK(gpu_open(why, sizeof why) == NULL);
    CHECK_STR(why, "NVML init failed: Driver Not Loaded (error 9)");
    /* A short buffer gets a truncated, terminated reason. */
    char small[8];
    CHECK(gpu_open(small, sizeof small) == NULL);
    CHECK_STR(small, "NVML in");
}

TEST(gpu_unsupported_value_is_nan) {
    use_fake_nvml("");
    setenv("FAKE_NVML_NO_POWER", "1", 1);
    gpu_monitor *g = open_ok();
    gpu_sample s[2];
    CHECK_INT(gpu_sample_all(g, s), 0);
    for (int i = 0; i < 2; i++) {
        CHECK(isnan(s[i].power_w));
        CHECK_NEAR(s[i].util_pct, i, 1e-9);
        CHECK_NEAR(s[i].temp_c, 60 + i, 1e-9);
    }
    gpu_close(g);
}

TEST(gpu_falls_back_to_unversioned_nvml_names) {
    use_fake_nvml("-DFAKE_NVML_V1_ONLY");
    gpu_monitor *g = open_ok();
    CHECK_INT(gpu_count(g), 2);
    CHECK_STR(gpu_get_info(g, 1)->name, "Fake GPU 1");
    CHECK_STR(gpu_cuda_version(g), "12.4");
    gpu_sample s[2];
    CHECK_INT(gpu_sample_all(g, s), 0);
    CHECK_NEAR(s[1].power_w, 151.0, 1e-9);
    gpu_close(g);
}

TEST(gpu_open_and_close_repeatedly) {
    use_fake_nvml("");
    setenv("FAKE_NVML_GPUS", "3", 1);
    for (int r = 0; r < 3; r++) {
        gpu_monitor *g = open_ok();
        CHECK_INT(gpu_count(g), 3);
        CHECK_STR(gpu_get_info(g, 2)->uuid, "GPU-fake-0002");
        gpu_close(g);
    }
}
