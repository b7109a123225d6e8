/* run: one measured run, from resolved options to files on disk. The CLI
 * (`servelab run`) and the campaign runner (`servelab sweep`) both come
 * here, so a run in a sweep is exactly a `servelab run`.
 *
 * Every option of a run is a row of run_options (run_options.c): its flag,
 * its campaign key, its type, range, default and help, and its field below.
 * The command line, campaign files, --help, the man page and meta.json are
 * all read from that one table. */
#ifndef SERVELAB_RUN_H
#define SERVELAB_RUN_H

#include "common/opt.h"
#include "common/outcome.h"

#include <jansson.h>
#include <stdio.h>
#include <stdint.h>

struct loadgen_result;
struct virtual_target;

/* A watch on the measured run (client/loadgen.h's loadgen_config.watch):
 * called every 10 ms with the rows so far; 1 stops the run, what is not
 * finished becoming cancelled rows. Given with --threads 1 only (with more
 * threads each would call it at once on its own share); warmup has none. */
typedef struct run_watch {
    int (*fn)(void *arg, const struct loadgen_result *so_far, int in_flight, int64_t now_us);
    void *arg;
} run_watch;

typedef struct run_opts {
    /* target */
    const char *url, *api, *model, *key_env;
    opt_list headers; /* "Name: value" */
    int insecure;
    /* arrivals */
    double rate;           /* INFINITY: all at t=0 */
    const char *rate_plan; /* stages, "2@60s,ramp:2-8@60s" (workload/rate_plan.h); NULL: none */
    int have_rate;         /* --rate was given (it excludes --rate-plan) */
    const char *arrival;
    double burstiness;
    int64_t requests;
    double duration_s;
    int have_requests, have_duration; /* which of the two was given */
    int64_t concurrency;              /* 0: no cap */
    int64_t seed;
    /* workload */
    const char *prompts, *mix;
    int64_t max_tokens; /* 0: per class */
    int ignore_eos;
    const char *extra_body;      /* a JSON object added to every body; NULL: none */
    const char *tools;           /* --tools FILE (workload/answer_spec.h); NULL: none */
    const char *response_format; /* --response-format FILE; NULL: none */
    const char *turns;           /* "1".."1000" or "all" (conversation.h) */
    double think_time_s;
    const char *cache_bust;      /* on | off */
    const char *cache_bust_salt; /* hex; NULL: a new one each run */
    int prefix_tokens, prefix_groups;
    const char *prefix_mode; /* system | prepend */
    const char *tokenize;    /* auto | off */
    /* --replay: a trace's records are the requests (workload/replay.h) */
    const char *replay, *replay_format;       /* FILE; auto|mooncake|burstgpt|azure|jsonl */
    double time_scale;                        /* 2: twice as fast */
    double replay_start_s, replay_duration_s; /* trace time from its first record; 0: to the end */
    int replay_block_tokens;                  /* tokens a Mooncake hash id stands for */
    const char *cusage;                       /* auto|on|off */
    const char *preconnect;                   /* auto|off|N: connections opened before t=0 */
    /* the run */
    int64_t warmup;
    double timeout_s;
    const char *slo; /* "ttft=750ms,tpot=100ms[,e2e=30s]"; NULL: none */
    int fail_on_slo;
    double fail_fraction;
    double max_error_rate; /* exit 1 when more than this fraction failed (or all did) */
    double cost_per_hour;  /* 0: no cost */
    const char *out;
    const char *label;              /* --label: a name for the run (meta.json, the vLLM file) */
    opt_list metadata;              /* --metadata KEY=VALUE, recorded as they are */
    const char *save_vllm_json;     /* --save-vllm-json FILE (cli/run.c writes it); NULL: none */
    const char *metric_percentiles; /* its percentiles, "99" or "50,90,99" */
    int64_t max_event_bytes;
    int64_t max_chunks;           /* chunks kept of one answer; past it the request is malformed */
    const char *metrics_interval; /* "auto" or seconds, as given (run_metrics_interval_s) */
    int no_sampling;              /* neither /metrics, GPUs nor the server's processes */
    int server_pid;               /* the server's process tree into server_proc.csv; 0: none
                                     (a sweep gives its managed server's, or the simulator's) */
    int threads;                  /* client threads */
    const char *shard;            /* --shard I/N | auto; NULL: the whole schedule */
    int shard_count;              /* --shard-count (JOB_COMPLETION_INDEX's size); 0: none */
    const char *start_at;         /* --start-at EPOCH | +S; NULL: t=0 when ready */
    const char *http_client;      /* auto|builtin|libcurl */
    const char *cpus;             /* pin the client to these CPUs; NULL: no pinning */
    int realtime;                 /* ask for SCHED_FIFO (common/cpus.h) */
    int quiet;
    int force;                  /* replace what an earlier run left in --out */
    const char *progress;       /* auto (drawn on a terminal) | plain | off (run/progress.h) */
    double progress_interval_s; /* plain's period */
    const char *metrics_listen; /* HOST:PORT for the client's own /metrics; NULL: none */
    /* not options: how the caller wants it */
    const char *progress_label; /* a sweep's "run 2/5 NAME, repetition 1/2"; NULL: none */
    int print_summary;          /* the table, to summary_to */
    FILE *summary_to;           /* where the caller wants the table; NULL: nowhere */
    const run_watch *watch;     /* NULL: none (servelab capacity sets one) */
    /* `servelab predict`: the schedule goes to the simulator's engine in
     * virtual time (run/virtual_client.h), not to a server; url unused */
    const struct virtual_target *predict;
    int quiet_client; /* no warning about the client's own delay: the caller tells it */
    /* set by run_execute: what --metrics-interval came to for this schedule */
    double metrics_interval_s;
} run_opts;

/* The table of `servelab run`'s options, ended by a row without a name. */
extern const opt_def run_options[];

typedef struct run_result {
    size_t requests, completed, failed;
    int interrupted;
    int watch_stopped;      /* o->watch ended it */
    int client_flagged;     /* the client was not within 1 ms (summary.json's client says how) */
    double client_worst_ms; /* the most it was late: schedule lag or a request's wait for it */
    double duration_s;
    double server_peak_rss_bytes; /* the server's tree at its largest (0: not sampled) */
    outcome done;                 /* how it ended (cli_exit_code gives `servelab run`'s code) */
    int write_failed;             /* its rows or files could not all be written (error says) */
    char error[512];              /* why, when the run failed or did not start; "" otherwise */
    char out[3072];               /* the run's directory (--out, or the one chosen); "" before */
} run_result;

/* --metrics-interval auto: about METRICS_AUTO_SAMPLES samples of /metrics
 * over the run's length as it goes: one every max(schedule, elapsed) /
 * METRICS_AUTO_SAMPLES seconds, within [METRICS_AUTO_MIN_S,
 * METRICS_AUTO_MAX_S]. A run of a few seconds is then sampled often enough
 * to show its queue, a long one no more than once a second, and one that
 * lasts longer than its schedule (a burst, --rate inf, has a schedule of
 * length 0) less often as it goes: the interval starts at the schedule's
 * and grows with the time since t=0 (client/loadgen.h). */
#define METRICS_AUTO_SAMPLES 20
#define METRICS_AUTO_MIN_S 0.1
#define METRICS_AUTO_MAX_S 1.0
/* The seconds between samples: --metrics-interval's when it gives them,
 * else auto's for a schedule of `schedule_s` seconds (its last arrival, or
 * --duration; 0 for a burst, which gets the shortest). */
double run_metrics_interval_s(const run_opts *o, double schedule_s);
struct curl_slist;
/* A run's --url without a trailing slash or /v1: what /v1/models,
 * /version and /metrics hang from. */
void run_base_url(const char *url, char *out, size_t n);
/* The server's /metrics URL for a run's --url (its base: no trailing
 * slash, no /v1). */
void run_metrics_url(const char *url, char *out, size_t n);
/* The endpoint a run of --api `api` POSTs to, for its --url. */
void run_endpoint_url(const char *url, const char *api, char *out, size_t n);
/* The headers every request of the run sends, appended to *headers: the
 * bearer token of --api-key-env (or $OPENAI_API_KEY), then --header's;
 * *key_env the variable the key came from (NULL: none). 0, or -1 with err
 * (the variable is not set). */
int run_headers(const run_opts *o, struct curl_slist **headers, const char **key_env, char *err,
                int errlen);

/* Every option at its default, and print_summary on. */
void run_opts_defaults(run_opts *o);
/* Checks that need the whole set (e.g. --duration with a finite rate);
 * -1 with a message. */
int run_opts_validate(const run_opts *o, char *err, int errlen);
/* Runs it and says how it ended: OUTCOME_OK; OUTCOME_FAILED when the run
 * failed (res->error says why) or missed --fail-on-slo; OUTCOME_BAD_INPUT
 * when the input was bad (res->error says what), found before any traffic;
 * OUTCOME_STOPPED when a stop signal ended it (common/stop.h), after every
 * file was written. res->done is the same. `command_line` (stolen) goes
 * into meta.json as is; `extra_meta` (stolen, may be NULL) is merged into
 * meta.json. */
outcome run_execute(const run_opts *o, json_t *command_line, json_t *extra_meta, run_result *res);
/* A prediction's rows in memory, and no files: the schedule of `opts`
 * (whose predict is set) sent to the engine in virtual time. OUTCOME_OK;
 * OUTCOME_BAD_INPUT when the input was bad (err says what); OUTCOME_FAILED
 * when it could not run; OUTCOME_STOPPED when a stop signal ended it. The
 * caller rows_free()s *rows. */
struct run_rows;
outcome run_predict_rows(const run_opts *opts, struct run_rows *rows, char *err, int errlen);
/* meta.json's command line with --header values and URL credentials
 * redacted. */
json_t *run_command_line_json(int argc, char **argv);

#endif
