/* gpu: NVIDIA GPU monitoring through NVML, opened with dlopen at run time.
 *
 * Linking against libnvidia-ml would make the CUDA toolkit (or at least the
 * driver) a build dependency and make the binary refuse to start on a laptop.
 * Instead we declare the handful of NVML types and entry points we use
 * ourselves (NVML's C ABI has been stable for a decade: every call returns an
 * int code, 0 = success, devices are opaque pointers, enums are ints) and
 * look each one up by name. Only init, shutdown, device count and device
 * handle are required; every other entry point is optional, and a missing
 * one or a failing call (a consumer GPU without power readings, a GPU lost
 * mid-run) only turns that value into NAN or "". Versioned names (_v2) are
 * tried first, then the original names that older drivers export.
 *
 * Units are converted here, once: NVML's bytes become MiB, milliwatts become
 * watts, and the CUDA version integer 12040 becomes "12.4". */
#include "monitor/gpu.h"
#include "common/util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_NVML_LIB "libnvidia-ml.so.1"
#define MAX_GPUS 256          /* more than any machine has; guards a bogus count */
#define DRIVER_VERSION_LEN 80 /* NVML's documented driver-version buffer size */

/* The NVML types we need, declared by us (see the top of the file). */
typedef int nvml_return;
typedef struct nvml_device_opaque *nvml_device;
typedef struct nvml_memory {
    unsigned long long total, free, used; /* bytes */
} nvml_memory;
typedef struct nvml_utilization {
    unsigned int gpu, memory; /* percent */
} nvml_utilization;

enum { NV_SUCCESS = 0, NV_CLOCK_SM = 1, NV_TEMPERATURE_GPU = 0 };

typedef struct nvml_api {
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*device_count)(unsigned int *count);
    nvml_return (*device_handle)(unsigned int index, nvml_device *dev);
    const char *(*error_string)(nvml_return rc);
    nvml_return (*device_name)(nvml_device dev, char *buf, unsigned int len);
    nvml_return (*device_uuid)(nvml_device dev, char *buf, unsigned int len);
    nvml_return (*memory_info)(nvml_device dev, nvml_memory *mem);
    nvml_return (*utilization)(nvml_device dev, nvml_utilization *util);
    nvml_return (*power_usage)(nvml_device dev, unsigned int *milliwatts);
    nvml_return (*clock_info)(nvml_device dev, int clock_type, unsigned int *mhz);
    nvml_return (*temperature)(nvml_device dev, int sensor, unsigned int *celsius);
    nvml_return (*driver_version)(char *buf, unsigned int len);
    nvml_return (*cuda_version_v2)(int *version);
    nvml_return (*cuda_version)(int *version);
} nvml_api;

/* Where each entry point lives in nvml_api, the names to try in order, and
 * whether gpu_open gives up without it. */
static const struct {
    size_t offset;
    const char *names[2];
    int required;
} nvml_symbols[] = {
    {offsetof(nvml_api, init), {"nvmlInit_v2", "nvmlInit"}, 1},
    {offsetof(nvml_api, shutdown), {"nvmlShutdown", NULL}, 1},
    {offsetof(nvml_api, device_count), {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, 1},
    {offsetof(nvml_api, device_handle),
     {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
     1},
    {offsetof(nvml_api, error_string), {"nvmlErrorString", NULL}, 0},
    {offsetof(nvml_api, device_name), {"nvmlDeviceGetName", NULL}, 0},
    {offsetof(nvml_api, device_uuid), {"nvmlDeviceGetUUID", NULL}, 0},
    {offsetof(nvml_api, memory_info), {"nvmlDeviceGetMemoryInfo", NULL}, 0},
    {offsetof(nvml_api, utilization), {"nvmlDeviceGetUtilizationRates", NULL}, 0},
    {offsetof(nvml_api, power_usage), {"nvmlDeviceGetPowerUsage", NULL}, 0},
    {offsetof(nvml_api, clock_info), {"nvmlDeviceGetClockInfo", NULL}, 0},
    {offsetof(nvml_api, temperature), {"nvmlDeviceGetTemperature", NULL}, 0},
    {offsetof(nvml_api, driver_version), {"nvmlSystemGetDriverVersion", NULL}, 0},
    {offsetof(nvml_api, cuda_version_v2), {"nvmlSystemGetCudaDriverVersion_v2", NULL}, 0},
    {offsetof(nvml_api, cuda_version), {"nvmlSystemGetCudaDriverVersion", NULL}, 0},
};

struct gpu_monitor {
    void *lib;
    nvml_api api;
    int n;
    nvml_device *handles; /* n entries; NULL where NVML gave no handle */
    gpu_info *info;       /* n entries */
    char driver[DRIVER_VERSION_LEN];
    char cuda[16];
};

static void set_why(char *why, int whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_why(char *why, int whylen, const char *fmt, ...) {
    if (!why || whylen <= 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, (size_t)whylen, fmt, ap);
    va_end(ap);
}

/* Fill `api` from the library; returns the first missing required name, or
 * NULL when all of them are there. dlsym's void * is stored into the function
 * pointer slot as POSIX allows. */
static const char *load_symbols(void *lib, nvml_api *api) {
    memset(api, 0, sizeof *api);
    for (size_t i = 0; i < sizeof nvml_symbols / sizeof nvml_symbols[0]; i++) {
        void *p = NULL;
        for (int k = 0; k < 2 && !p && nvml_symbols[i].names[k]; k++)
            p = dlsym(lib, nvml_symbols[i].names[k]);
        if (!p && nvml_symbols[i].required)
            return nvml_symbols[i].names[0];
        memcpy((char *)api + nvml_symbols[i].offset, &p, sizeof p);
    }
    return NULL;
}

static const char *error_text(const nvml_api *api, nvml_return rc) {
    const char *s = api->error_string ? api->error_string(rc) : NULL;
    return s && *s ? s : "unknown error";
}

/* NVML fills fixed buffers; make sure a bad driver cannot leave one
 * unterminated, and that a failed call leaves "". */
static void fill_string(nvml_return rc, char *buf, size_t len) {
    if (rc != NV_SUCCESS)
        buf[0] = 0;
    buf[len - 1] = 0;
}

static void read_device_info(gpu_monitor *g, int i) {
    const nvml_api *api = &g->api;
    nvml_device dev = g->handles[i];
    gpu_info *info = &g->info[i];
    info->memory_total_mib = NAN;
    if (!dev)
        return;
    if (api->device_name)
        fill_string(api->device_name(dev, info->name, sizeof info->name), info->name,
                    sizeof info->name);
    if (api->device_uuid)
        fill_string(api->device_uuid(dev, info->uuid, sizeof info->uuid), info->uuid,
                    sizeof info->uuid);
    nvml_memory mem;
    if (api->memory_info && api->memory_info(dev, &mem) == NV_SUCCESS)
        info->memory_total_mib = (double)mem.total / (1024.0 * 1024.0);
}

/* NVML encodes CUDA versions as 1000 * major + 10 * minor: 12040 = "12.4". */
static void read_versions(gpu_monitor *g) {
    const nvml_api *api = &g->api;
    if (api->driver_version)
        fill_string(api->driver_version(g->driver, sizeof g->driver), g->driver, sizeof g->driver);
    int v = 0;
    int ok = api->cuda_version_v2 && api->cuda_version_v2(&v) == NV_SUCCESS && v > 0;
    if (!ok)
        ok = api->cuda_version && api->cuda_version(&v) == NV_SUCCESS && v > 0;
    if (ok)
        snprintf(g->cuda, sizeof g->cuda, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void unload(gpu_monitor *g) {
    free(g->handles);
    free(g->info);
    dlclose(g->lib);
    free(g);
}

gpu_monitor *gpu_open(char *why, int whylen) {
    set_why(why, whylen, "%s", "");
    const char *path = getenv("SERVELAB_NVML_LIB");
    if (!path || !*path)
        path = DEFAULT_NVML_LIB;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *err = dlerror();
        if (!err || strstr(err, "No such file"))
            set_why(why, whylen, "%s not found: no NVIDIA driver", path);
        else
            set_why(why, whylen, "cannot load %s: %s", path, err);
        return NULL;
    }
    gpu_monitor *g = xcalloc(1, sizeof *g);
    g->lib = lib;
    const char *missing = load_symbols(lib, &g->api);
    if (missing) {
        set_why(why, whylen, "%s has no %s: not an NVML library", path, missing);
        unload(g);
        return NULL;
    }
    nvml_return rc = g->api.init();
    if (rc != NV_SUCCESS) {
        set_why(why, whylen, "NVML init failed: %s (error %d)", error_text(&g->api, rc), rc);
        unload(g);
        return NULL;
    }
    unsigned int count = 0;
    rc = g->api.device_count(&count);
    if (rc != NV_SUCCESS || count == 0 || count > MAX_GPUS) {
        if (rc != NV_SUCCESS)
            set_why(why, whylen, "NVML could not count GPUs: %s (error %d)",
                    error_text(&g->api, rc), rc);
        else if (count == 0)
            set_why(why, whylen, "no GPU: NVML reports 0 devices");
        else
            set_why(why, whylen, "NVML reports an implausible %u GPUs", count);
        g->api.shutdown();
        unload(g);
        return NULL;
    }
    g->n = (int)count;
    g->handles = xcalloc(count, sizeof *g->handles);
    g->info = xcalloc(count, sizeof *g->info);
    for (int i = 0; i < g->n; i++) {
        if (g->api.device_handle((unsigned int)i, &g->handles[i]) != NV_SUCCESS)
            g->handles[i] = NULL;
        read_device_info(g, i);
    }
    read_versions(g);
    return g;
}

int gpu_count(const gpu_monitor *g) {
    return g ? g->n : 0;
}

const gpu_info *gpu_get_info(const gpu_monitor *g, int i) {
    return g && i >= 0 && i < g->n ? &g->info[i] : NULL;
}

const char *gpu_driver_version(const gpu_monitor *g) {
    return g ? g->driver : "";
}

const char *gpu_cuda_version(const gpu_monitor *g) {
    return g ? g->cuda : "";
}

/* Read one GPU; returns how many of its values NVML gave. */
static int sample_one(const nvml_api *api, nvml_device dev, gpu_sample *s) {
    s->util_pct = s->mem_used_mib = s->power_w = s->sm_clock_mhz = s->temp_c = NAN;
    if (!dev)
        return 0;
    int got = 0;
    nvml_utilization util;
    if (api->utilization && api->utilization(dev, &util) == NV_SUCCESS) {
        s->util_pct = util.gpu;
        got++;
    }
    nvml_memory mem;
    if (api->memory_info && api->memory_info(dev, &mem) == NV_SUCCESS) {
        s->mem_used_mib = (double)mem.used / (1024.0 * 1024.0);
        got++;
    }
    unsigned int v;
    if (api->power_usage && api->power_usage(dev, &v) == NV_SUCCESS) {
        s->power_w = v / 1000.0;
        got++;
    }
    if (api->clock_info && api->clock_info(dev, NV_CLOCK_SM, &v) == NV_SUCCESS) {
        s->sm_clock_mhz = v;
        got++;
    }
    if (api->temperature && api->temperature(dev, NV_TEMPERATURE_GPU, &v) == NV_SUCCESS) {
        s->temp_c = v;
        got++;
    }
    return got;
}

int gpu_sample_all(gpu_monitor *g, gpu_sample *out) {
    if (!g || !out)
        return -1;
    int got = 0;
    for (int i = 0; i < g->n; i++)
        got += sample_one(&g->api, g->handles[i], &out[i]);
    return got ? 0 : -1;
}

json_t *gpu_meta_json(const gpu_monitor *g) {
    json_t *arr = json_array();
    for (int i = 0; g && i < g->n; i++) {
        const gpu_info *info = &g->info[i];
        json_t *mem = isnan(info->memory_total_mib)
                          ? json_null()
                          : json_integer((json_int_t)llround(info->memory_total_mib));
        json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:o, s:s, s:s}", "index", i, "name",
                                             info->name, "uuid", info->uuid, "memory_mib", mem,
                                             "driver", g->driver, "cuda", g->cuda));
    }
    return arr;
}

void gpu_close(gpu_monitor *g) {
    if (!g)
        return;
    g->api.shutdown();
    unload(g);
}
