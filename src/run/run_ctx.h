/* run_ctx: what one run carries from phase to phase, shared by the run's own
 * files only (run.c: the phases in order and the output directory;
 * run_schedule.c: the workload and the schedule; run_target.c: the server,
 * the headers and the tokenizer; run_measure.c: the warmup, the measured
 * schedule and its watchers; run_files.c: meta.json, summary.json and the
 * table; run_threads.c: the schedule split over client threads). */
#ifndef SERVELAB_RUN_CTX_H
#define SERVELAB_RUN_CTX_H

#include "client/loadgen.h"
#include "workload/answer_spec.h"
#include "client/probe.h"
#include "monitor/gpu.h"
#include "run/run.h"
#include "run/shard.h"
#include "workload/arrivals.h"
#include "workload/workload.h"

#include <curl/curl.h>
#include <stdint.h>

/* The fewest one-token words --tokenize needs to build text from them. */
#define TOKENIZER_WORDS 16

struct metrics_listen;

typedef struct run_ctx {
    run_opts o;                /* the options, with out resolved */
    struct metrics_listen *ml; /* --metrics-listen's socket, bound in prepare; NULL: none */
    int ml_port;               /* its port as bound (meta.json); 0: none */
    struct live_stats *live;   /* what the watchers read; NULL when nothing watches */
    char out_default[128];     /* --out's default, when it was not given */
    int lock_fd;               /* the lock on --out, held for the run; -1: none */
    const char *priority;      /* what --realtime got: fifo, nice or off */
    workload w;                /* loaded; w_loaded says so */
    char salt[20];             /* the cache-busting salt when --cache-bust-salt was not given */
    const char **kept_words;   /* --tokenize: the common words one token on the server */
    json_t *tokenizer;         /* what --tokenize found, for meta.json; NULL: not tried */
    int w_loaded;
    arrival_spec arrivals;
    rate_plan plan; /* --rate-plan's stages; plan.n 0: none */
    int64_t *due;   /* the measured schedule (this shard's part) */
    size_t n;
    size_t n_all;               /* the whole schedule's requests (n without --shard) */
    shard_spec shard;           /* --shard; count 1: none */
    uint32_t *shard_idx;        /* the global index of each of this shard's requests */
    int64_t start_at_us;        /* --start-at, µs since the epoch; 0: none */
    struct curl_slist *headers; /* Authorization and --header */
    json_t *extra_body;         /* --extra-body, parsed once */
    const char *key_env;        /* the variable the key came from; NULL: none */
    char *base;                 /* the URL without a trailing / or /v1 */
    server_probe probe;
    int probed;
    const char *model;
    int cusage; /* per-chunk usage asked for */
    char endpoint[2100], metrics_url[2200];
    char gpu_why[256];
    gpu_monitor *gpu;
    http_client_kind client;
    char started[40]; /* UTC, ISO 8601 */
    loadgen_config lc;
    loadgen_result res;
    int have_res;
    /* the server's speculative-decoding counters before the first request
     * and after the last (client/probe.h); NULL: none */
    json_t *spec_before, *spec_after;
    answer_spec answers; /* --tools, --response-format */
} run_ctx;

/* rr->error from a format; returns -1 (run.c). */
__attribute__((format(printf, 2, 3))) int run_fail(run_result *rr, const char *fmt, ...);

/* The workload and the schedule, this shard's part of it (run_schedule.c):
 * -1 with rr->error when the prompts, the plan or the trace are bad. */
int run_schedule_prepare(run_ctx *x, run_result *rr);
/* Multi-turn: the schedule starts conversations; their later turns follow
 * in the client (run_schedule.c). */
void run_schedule_turns(run_ctx *x);

/* The API key, the user's headers and the bodies' extra fields
 * (run_target.c): -1 with rr->error when one is bad. */
int run_target_headers(run_ctx *x, run_result *rr);
/* What the server says about itself, the endpoints, the GPUs and the HTTP
 * client, or the simulator's engine for a prediction (run_target.c). */
void run_target_prepare(run_ctx *x);
/* --tokenize auto: the words the server counts one token each
 * (run_target.c). */
void run_target_words(run_ctx *x);

/* The live counters, when something watches them (run_measure.c). */
void run_measure_watchers(run_ctx *x);
/* The warmup requests: not counted, no rows (run_measure.c). */
void run_measure_warmup(run_ctx *x);
/* The measured schedule; -1 with rr->error when it could not start
 * (run_measure.c). */
int run_measure(run_ctx *x, run_result *rr);

/* meta.json (run_files.c). 0, or -1 with errno set. `cmdline` and `extra`
 * (may be NULL) are stolen. */
int run_write_meta(run_ctx *x, json_t *cmdline, json_t *extra);
/* summary.json, the table on stdout and the client's warnings; returns the
 * outcome the figures give (OUTCOME_OK; OUTCOME_FAILED for --fail-on-slo,
 * too many failed requests or a failed write; OUTCOME_STOPPED when a stop
 * signal ended the run) and fills the counts of rr. */
outcome run_write_summary(run_ctx *x, int meta_rc, run_result *rr);
/* The measured schedule over o.threads loops (run_threads.c). */
int run_threads(const loadgen_config *base, int n_threads, loadgen_result *res, char *err,
                int errlen);

#endif
