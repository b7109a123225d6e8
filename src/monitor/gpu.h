/* gpu: NVIDIA GPU facts and samples through NVML, loaded at run time with
 * dlopen so servelab builds and runs on machines without a driver. Every
 * NVML value is optional: one that the driver cannot give becomes NAN in a
 * sample or "" in a version string, never an error for the whole run. */
#ifndef SERVELAB_GPU_H
#define SERVELAB_GPU_H

#include <jansson.h>

typedef struct gpu_info {
    char name[96];           /* "NVIDIA H100 80GB HBM3"; "" when unknown */
    char uuid[96];           /* "GPU-5c0e..."; "" when unknown */
    double memory_total_mib; /* NAN when unknown */
} gpu_info;

/* One reading of one GPU; NAN for a value NVML could not give. */
typedef struct gpu_sample {
    double util_pct;     /* percent of the last sample period a kernel ran */
    double mem_used_mib; /* device memory in use, MiB */
    double power_w;      /* board power draw, watts */
    double sm_clock_mhz; /* current SM clock, MHz */
    double temp_c;       /* GPU die temperature, Celsius */
} gpu_sample;

typedef struct gpu_monitor gpu_monitor;

/* Load NVML (path from env SERVELAB_NVML_LIB, else "libnvidia-ml.so.1"),
 * init it and count devices. NULL when there is no library, it fails to init,
 * or there are no GPUs; `why` (may be NULL) then gets a one-line reason such
 * as "libnvidia-ml.so.1 not found: no NVIDIA driver". Never crashes. */
gpu_monitor *gpu_open(char *why, int whylen);
int gpu_count(const gpu_monitor *g);
/* NULL when i is out of range. */
const gpu_info *gpu_get_info(const gpu_monitor *g, int i);
/* "550.54.15"; "" when unknown. */
const char *gpu_driver_version(const gpu_monitor *g);
/* "12.4" (from NVML's 12040); "" when unknown. */
const char *gpu_cuda_version(const gpu_monitor *g);
/* Sample every GPU into out[0..gpu_count-1]. Returns 0, or -1 when nothing
 * at all could be read (every value NAN). */
int gpu_sample_all(gpu_monitor *g, gpu_sample *out);
/* meta.json's "gpus": [{"index","name","uuid","memory_mib","driver","cuda"}],
 * [] for a NULL g. */
json_t *gpu_meta_json(const gpu_monitor *g);
/* Shut NVML down and unload it; NULL is fine. */
void gpu_close(gpu_monitor *g);

#endif
