/* campaign: a sweep's YAML file, loaded with libyaml and validated strictly
 * before anything runs. Every key a run may set overrides the campaign's
 * default; the loader resolves them, so each campaign_run carries its full
 * parameters. Errors name the file, the line and the key:
 *   gpu.yaml:12: runs[1].rate: expected a positive number or inf, got 'fast' */
#ifndef SERVELAB_CAMPAIGN_H
#define SERVELAB_CAMPAIGN_H

#include <stdint.h>

typedef enum { TARGET_URL, TARGET_SIM, TARGET_SERVER } target_kind;

/* Everything one run needs; strings are owned (NULL when unset). */
typedef struct run_params {
    char *api;            /* "completions" (default) or "chat" */
    char *model;          /* NULL: the server's first model */
    char *prompts;        /* workload.prompts (default "builtin") */
    char *mix;            /* workload.mix as "short=0.5,medium=0.3,long=0.2", NULL when unset */
    int max_tokens;       /* workload.max_tokens; 0 = per class */
    int ignore_eos;       /* workload.ignore_eos (0/1) */
    long requests;        /* 0 when duration is used; default 100 */
    double duration_s;    /* "duration" in seconds; 0 when unset */
    double rate;          /* requests/s; INFINITY for "inf" (default inf) */
    char *arrival;        /* poisson (default) | gamma | constant */
    double burstiness;    /* default 1 */
    int concurrency;      /* 0 = no cap */
    int warmup;           /* default 0 */
    uint64_t seed;        /* default 0 */
    double timeout_s;     /* "timeout" in seconds, default 600 */
    char *slo;            /* slo map as "ttft=750ms,tpot=100ms[,e2e=30000ms]"; NULL when unset */
    double cost_per_hour; /* 0 when unset */
    char *server_args;    /* extra arguments for a managed server or the sim; "" default */
    double metrics_interval_s; /* "metrics_interval" in seconds, default 1 */
    int repetitions;           /* default 1 */
    int threads;               /* client threads (run --threads), default 1 */
    char *http_client;         /* auto (default) | builtin | libcurl */
} run_params;

typedef struct campaign_run {
    char *name; /* unique, [A-Za-z0-9._-]+ */
    int line;   /* where it is defined */
    run_params p;
} campaign_run;

typedef struct campaign {
    char *name;
    char *path;
    target_kind target;
    /* TARGET_URL */
    char *url;
    /* TARGET_SIM: target: {sim: {profile: gpu-7b, kv_blocks: 900, ...}}; every key
     * except profile becomes a `servelab sim` flag (underscores to dashes). */
    char *sim_profile; /* default "tiny" */
    char *sim_args;    /* e.g. "--kv-blocks 900 --seed 3" ("" when none) */
    /* TARGET_SERVER */
    char *server_command;   /* must contain {port}; may contain {server_args} */
    char *health_path;      /* default "/health" */
    double ready_timeout_s; /* default 600 */
    double stop_grace_s;    /* default 10 */
    int restart_always;     /* restart: always | on_change (default) */
    run_params defaults;
    campaign_run *runs;
    int n_runs;
} campaign;

int campaign_load(const char *path, campaign *c, char *err, int errlen);
/* The same from a string; `name` stands for the file in messages. */
int campaign_load_string(const char *yaml, const char *name, campaign *c, char *err, int errlen);
void campaign_free(campaign *c);

#endif
