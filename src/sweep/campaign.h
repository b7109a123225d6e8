/* campaign: a sweep's YAML file, loaded with libyaml and validated strictly
 * before anything runs. A run's keys are the campaign keys of run_options
 * (run/run_options.c), read by the same parser as `servelab run`'s flags, so
 * a value `run` refuses a campaign refuses too, in the same words. Every key
 * a run may set overrides the campaign's default; the loader resolves them,
 * so each campaign_run carries its full options. Errors name the file, the
 * line and the key:
 *   gpu.yaml:12: runs[1].rate: expected a positive number or inf, got 'fast' */
#ifndef SERVELAB_CAMPAIGN_H
#define SERVELAB_CAMPAIGN_H

#include "model/slo.h"
#include "run/run.h"
#include "target/vllm_server.h"

typedef enum { TARGET_URL, TARGET_SIM, TARGET_SERVER, TARGET_VLLM } target_kind;

/* Every string below points into the campaign's own copies (NULL when
 * unset); campaign_free releases them all. */
typedef struct campaign_run {
    const char *name;        /* unique, [A-Za-z0-9._-]+ */
    int line;                /* where it is defined */
    run_opts p;              /* the run's options, resolved (no url or out: the sweep sets them) */
    int repetitions;         /* default 1 */
    const char *server_args; /* extra arguments for a managed server or the sim; "" default */
    slo_spec slo;            /* the SLO's bounds (model/slo.h); p.slo is their text */
    const char *sim_args;    /* the simulator's for this run when it stands in for the
                                server (campaign_use_sim); NULL: unset */
} campaign_run;

typedef struct campaign {
    const char *name;
    const char *path;
    target_kind target;
    /* TARGET_URL */
    const char *url;
    /* TARGET_SIM: target: {sim: {profile: gpu-7b, kv_blocks: 900, ...}}; every key
     * except profile is a `servelab sim` option (underscores for dashes), checked
     * against sim_options and passed on as its flag. */
    const char *sim_profile; /* default "tiny" */
    const char *sim_args;    /* e.g. "--kv-blocks 900 --seed 3" ("" when none) */
    int has_sim;             /* target.sim was given: the target, or with target.server the
                                simulator that stands in for it (campaign_use_sim) */
    /* TARGET_SERVER */
    const char *server_command; /* must contain {port}; may contain {server_args} */
    const char *health_path;    /* default "/health" */
    double ready_timeout_s;     /* default 600 */
    double stop_grace_s;        /* default 10 */
    const char **env_names;     /* target.server.env: set in the server's environment, */
    const char **env_values;    /* the values expanded by its shell as the command is */
    int n_env;
    /* TARGET_VLLM: target.vllm's keys (target/vllm_server.h); it shares
     * ready_timeout_s, stop_grace_s and health_path ("/health") above */
    vllm_spec vllm;
    const char *restart;   /* on_change (default) | always */
    int restart_always;    /* restart is always */
    const char *shards;    /* shards: auto | N: run by N sweep processes at once
                              (sweep --shard, sweep/sweep_shards.h); NULL: one */
    campaign_run defaults; /* the top level's keys (its name is NULL) */
    campaign_run *runs;
    int n_runs;
    char **strings; /* the copies every string above points into */
    int n_strings;
} campaign;

/* The most run directories (runs x repetitions) a campaign makes. */
#define CAMPAIGN_MAX_RUN_DIRS 100000

/* The keys a run may set, besides name and the run options' own. */
extern const opt_def campaign_run_keys[];

int campaign_load(const char *path, campaign *c, char *err, int errlen);
/* The same from a string; `name` stands for the file in messages. */
int campaign_load_string(const char *yaml, const char *name, campaign *c, char *err, int errlen);
void campaign_free(campaign *c);
/* A copy of text that the campaign owns (freed by campaign_free). */
const char *campaign_keep(campaign *c, const char *text);

/* `sweep --metadata KEY=VALUE`: appended to every run's metadata (a key
 * the run sets already keeps the run's value). 0, or -1 with why (the
 * value is not KEY=VALUE, or a run would hold too many). */
int campaign_add_metadata(campaign *c, const char *kv, char *err, int errlen);

/* `sweep --target sim`: the campaign runs against its target.sim instead of
 * its managed server. A run's arguments become its sim_args (a server's
 * flags mean nothing to the simulator). With speedup K > 1 the simulator
 * runs K times faster and so does every run: rates x K, durations, think
 * times, timeouts and SLO bounds / K. It rehearses the campaign's plumbing
 * in a K-th of the time; its figures are not the server's. 0, or -1 with
 * why (no target.sim, or a run speedup cannot scale). */
int campaign_use_sim(campaign *c, double speedup, char *err, int errlen);

#endif
