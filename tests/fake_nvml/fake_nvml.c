/* fake_nvml: a stand-in libnvidia-ml.so.1 with scripted values, so the GPU
 * monitor (src/monitor/gpu.c) can be tested on machines without a GPU. The
 * tests build it at run time into a temporary directory and point
 * SERVELAB_NVML_LIB at it; it is never linked into the test runner.
 *
 * Script: FAKE_NVML_GPUS devices (default 2, at most 8) named "Fake GPU i"
 * with uuid "GPU-fake-000i", 24576 MiB total, 1024 * (i + 1) MiB used,
 * 150000 + 1000 * i mW, SM clock 1800 MHz, 60 + i C. Utilization changes
 * over time: the k-th call (from 0) for device i gives (10 * k + i) % 100.
 * Driver "550.54.15", CUDA 12040 ("12.4").
 *
 * Knobs (environment, read at call time):
 *   FAKE_NVML_GPUS=N        report N devices (0 makes "no GPU")
 *   FAKE_NVML_FAIL_INIT=1   nvmlInit returns 9 (driver not loaded)
 *   FAKE_NVML_NO_POWER=1    nvmlDeviceGetPowerUsage returns 3 (not supported)
 * Build with -DFAKE_NVML_V1_ONLY to export only the original, unversioned
 * names of init, count, handle and CUDA version, as old drivers do.
 *
 * Calls before init, with a bad handle or a NULL pointer fail as NVML's do,
 * so a caller that skips a step is caught. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 8

enum {
    SUCCESS = 0,
    ERROR_UNINITIALIZED = 1,
    ERROR_INVALID_ARGUMENT = 2,
    ERROR_NOT_SUPPORTED = 3,
    ERROR_INSUFFICIENT_SIZE = 7,
    ERROR_DRIVER_NOT_LOADED = 9,
};

typedef struct fake_device {
    int index;
} fake_device;

typedef struct fake_memory {
    unsigned long long total, free, used;
} fake_memory;

typedef struct fake_utilization {
    unsigned int gpu, memory;
} fake_utilization;

static fake_device devices[MAX_DEVICES] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static unsigned int util_calls[MAX_DEVICES];
static int init_count;

static int env_flag(const char *name) {
    const char *v = getenv(name);
    return v && atoi(v) != 0;
}

static unsigned int device_count(void) {
    const char *v = getenv("FAKE_NVML_GPUS");
    int n = v ? atoi(v) : 2;
    return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : (unsigned int)n;
}

/* The device behind a handle, or NULL for one we did not hand out. */
static fake_device *device_of(fake_device *dev) {
    for (unsigned int i = 0; i < device_count(); i++)
        if (dev == &devices[i])
            return dev;
    return NULL;
}

static int put_string(char *buf, unsigned int len, const char *s) {
    if (!buf)
        return ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > len)
        return ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, strlen(s) + 1);
    return SUCCESS;
}

static int fake_init(void) {
    if (env_flag("FAKE_NVML_FAIL_INIT"))
        return ERROR_DRIVER_NOT_LOADED;
    init_count++;
    return SUCCESS;
}

static int fake_count(unsigned int *count) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!count)
        return ERROR_INVALID_ARGUMENT;
    *count = device_count();
    return SUCCESS;
}

static int fake_handle(unsigned int index, fake_device **dev) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!dev || index >= device_count())
        return ERROR_INVALID_ARGUMENT;
    *dev = &devices[index];
    return SUCCESS;
}

static int fake_cuda_version(int *version) {
    if (!version)
        return ERROR_INVALID_ARGUMENT;
    *version = 12040;
    return SUCCESS;
}

#ifdef FAKE_NVML_V1_ONLY
int nvmlInit(void) {
    return fake_init();
}

int nvmlDeviceGetCount(unsigned int *count) {
    return fake_count(count);
}

int nvmlDeviceGetHandleByIndex(unsigned int index, fake_device **dev) {
    return fake_handle(index, dev);
}

int nvmlSystemGetCudaDriverVersion(int *version) {
    return fake_cuda_version(version);
}
#else
int nvmlInit_v2(void) {
    return fake_init();
}

int nvmlDeviceGetCount_v2(unsigned int *count) {
    return fake_count(count);
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, fake_device **dev) {
    return fake_handle(index, dev);
}

int nvmlSystemGetCudaDriverVersion_v2(int *version) {
    return fake_cuda_version(version);
}
#endif

int nvmlShutdown(void) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    init_count--;
    return SUCCESS;
}

const char *nvmlErrorString(int rc) {
    switch (rc) {
    case SUCCESS: return "Success";
    case ERROR_UNINITIALIZED: return "Uninitialized";
    case ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case ERROR_NOT_SUPPORTED: return "Not Supported";
    case ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

int nvmlSystemGetDriverVersion(char *buf, unsigned int len) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    return put_string(buf, len, "550.54.15");
}

int nvmlDeviceGetName(fake_device *dev, char *buf, unsigned int len) {
    char name[32];
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev))
        return ERROR_INVALID_ARGUMENT;
    snprintf(name, sizeof name, "Fake GPU %d", dev->index);
    return put_string(buf, len, name);
}

int nvmlDeviceGetUUID(fake_device *dev, char *buf, unsigned int len) {
    char uuid[32];
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev))
        return ERROR_INVALID_ARGUMENT;
    snprintf(uuid, sizeof uuid, "GPU-fake-%04d", dev->index);
    return put_string(buf, len, uuid);
}

int nvmlDeviceGetMemoryInfo(fake_device *dev, fake_memory *mem) {
    const unsigned long long mib = 1024ULL * 1024ULL;
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev) || !mem)
        return ERROR_INVALID_ARGUMENT;
    mem->total = 24576 * mib;
    mem->used = 1024 * mib * (unsigned long long)(dev->index + 1);
    mem->free = mem->total - mem->used;
    return SUCCESS;
}

int nvmlDeviceGetUtilizationRates(fake_device *dev, fake_utilization *util) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev) || !util)
        return ERROR_INVALID_ARGUMENT;
    unsigned int k = util_calls[dev->index]++;
    util->gpu = (10 * k + (unsigned int)dev->index) % 100;
    util->memory = util->gpu / 2;
    return SUCCESS;
}

int nvmlDeviceGetPowerUsage(fake_device *dev, unsigned int *milliwatts) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev) || !milliwatts)
        return ERROR_INVALID_ARGUMENT;
    if (env_flag("FAKE_NVML_NO_POWER"))
        return ERROR_NOT_SUPPORTED;
    *milliwatts = 150000 + 1000 * (unsigned int)dev->index;
    return SUCCESS;
}

int nvmlDeviceGetClockInfo(fake_device *dev, int clock_type, unsigned int *mhz) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev) || !mhz)
        return ERROR_INVALID_ARGUMENT;
    if (clock_type != 1) /* only the SM clock is scripted */
        return ERROR_NOT_SUPPORTED;
    *mhz = 1800;
    return SUCCESS;
}

int nvmlDeviceGetTemperature(fake_device *dev, int sensor, unsigned int *celsius) {
    if (!init_count)
        return ERROR_UNINITIALIZED;
    if (!device_of(dev) || !celsius)
        return ERROR_INVALID_ARGUMENT;
    if (sensor != 0) /* NVML has only the GPU die sensor */
        return ERROR_INVALID_ARGUMENT;
    *celsius = 60 + (unsigned int)dev->index;
    return SUCCESS;
}
