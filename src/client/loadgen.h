/* loadgen: the open-loop load generator and streaming client.
 *
 * One thread, one libevent loop; our own HTTP/1.1 client for plain http://,
 * libcurl's multi_socket API otherwise. Requests are dispatched when their
 * absolute due time comes (timers on a precise monotonic clock, and between
 * reads when one falls due meanwhile); with a concurrency cap they wait in a
 * FIFO in the client, and that wait shows as sent_ms - scheduled_ms. Each
 * chunk is timed by the kernel's receive timestamp (own client) or when
 * curl hands its bytes over, parsed as SSE as it arrives, and every request
 * ends as exactly one row, whatever the server did. */
#ifndef SERVELAB_LOADGEN_H
#define SERVELAB_LOADGEN_H

#include "client/answer.h"
#include "client/errorlog.h"
#include "model/record.h"
#include "common/series.h"
#include "monitor/gpu.h"
#include "monitor/procstat.h"
#include "workload/workload.h"

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

/* Which HTTP client carries the requests (h1.h says why there are two). */
typedef enum { HTTP_CLIENT_LIBCURL, HTTP_CLIENT_BUILTIN } http_client_kind;

struct loadgen_result;

typedef struct loadgen_config {
    const char *endpoint;       /* full URL of /v1/completions or /v1/chat/completions */
    struct curl_slist *headers; /* user headers incl. Authorization; not owned */
    const workload *w;
    body_opts body;
    const int64_t *due_us; /* the schedule */
    size_t n;
    size_t first_index;      /* request index of due_us[0] (warmup uses its own range) */
    const uint32_t *indices; /* request index of each slot; NULL: first_index + slot */
    int64_t t0_us;           /* the run's t=0 on the monotonic clock; 0: when it starts */
    /* Or, when set, t=0 comes from this call, made once the loop is ready
     * (connections opened): threads agree on one t=0 through it. */
    int64_t (*t0_when_ready)(void *arg);
    void *t0_arg;
    int preconnect; /* connections opened before t=0 (our own client only); 0: none */
    struct row_writer *shared_rows; /* rows go to these files (threads share them) */
    int concurrency;                /* 0: no cap */
    double timeout_s;               /* per request; 0: none */
    int insecure;
    http_client_kind client; /* BUILTIN only for URLs h1_usable() accepts */
    size_t max_event_bytes;
    int max_chunks;     /* chunks kept of one answer; past it the request is malformed; 0: no cap */
    answer_ask answers; /* --tools, --response-format: each answer gathered and checked */
    const char *out_dir;     /* NULL: write no rows (warmup) */
    struct live_stats *live; /* what watchers read while it runs (client/live.h); NULL: none */
    /* Sampling while the run goes (both optional): the server's /metrics
     * into server_metrics.csv, the GPUs into gpu.csv, every interval: the
     * interval is sample_interval_s, or, when sample_per_elapsed > 0, the
     * time since t=0 / sample_per_elapsed within [sample_interval_s,
     * sample_interval_max_s] (a run longer than foreseen is sampled less
     * often as it goes, about sample_per_elapsed times per elapsed span). */
    const char *metrics_url;
    struct curl_slist *metrics_headers;
    double sample_interval_s;
    double sample_interval_max_s;
    int sample_per_elapsed;
    gpu_monitor *gpu;
    /* and the server's process tree into server_proc.csv (0: none) */
    int server_pid;
    /* Optional: called on the loop's 10 ms stop poll with the rows so far
     * (finished requests), the requests in flight and the time since t=0;
     * returning 1 stops the run as a stop signal would (every request not
     * finished becomes a cancelled row), with watch_stopped set instead of
     * interrupted. `servelab capacity` stops a probe that is already lost. */
    int (*watch)(void *arg, const struct loadgen_result *so_far, int in_flight, int64_t now_us);
    void *watch_arg;
    /* Multi-turn (workload/conversation.h): by request index, the next
     * turn of its conversation (CONV_NONE: none); NULL: single-turn. The
     * schedule then holds the first turns; a turn whose predecessor ended
     * well is due think_us after that end, and one whose predecessor
     * failed or was cancelled is a cancelled row (the conversation ends). */
    const uint32_t *next_turn;
    int64_t think_us;
    size_t total; /* rows the run writes, later turns included (progress); 0: n */
} loadgen_config;

/* What the client knows of its own delay (see docs/accuracy.md): the run
 * is within 1 ms only if no request waited more than 1 ms for the client
 * and few first tokens shared a read with a later chunk. */
#define CLIENT_DELAY_NAMED 20
typedef struct client_check {
    size_t first_tokens, first_coalesced; /* requests with a first token; of them, coalesced */
    size_t chunks, coalesced;             /* output chunks; of them, coalesced */
    size_t delayed;                       /* requests the client held more than 1 ms: */
    size_t late_sent;                     /* sent more than 1 ms after it could have been */
    size_t slow_written; /* more than 1 ms from sending to the last byte, beyond the handshake */
    double max_delay_ms;
    uint32_t named[CLIENT_DELAY_NAMED]; /* the worst of them, by request index, */
    float named_ms[CLIENT_DELAY_NAMED]; /* with their delay (in no order: see below) */
    int n_named;
} client_check;

/* Adds b's counts to a (threads merge theirs). */
void client_check_merge(client_check *a, const client_check *b);
/* Puts the named requests in order, the worst first. */
void client_check_sort(client_check *k);

typedef struct loadgen_result {
    run_rows rows;
    int interrupted;                     /* a stop signal (common/stop.h) ended it */
    int watch_stopped;                   /* the config's watch ended it */
    size_t usage_counted, chunk_counted; /* how output tokens were counted */
    double cpu_s;
    int write_error;         /* errno of a failed row write */
    series_set metrics, gpu; /* what was sampled (kept metrics only) */
    int metrics_samples, gpu_samples;
    procstat_summary server_proc; /* the server's process tree (samples 0: none) */
    /* failed requests by class and status, with the first words of each;
     * written as errors.csv when this loop writes its own rows (not with
     * shared_rows: then the caller merges and writes them) */
    error_log errors;
    client_check check;
    int64_t t0_unix_us; /* the wall clock (CLOCK_REALTIME) at t=0, µs since the epoch */
} loadgen_result;

/* Runs the whole schedule. Returns 0, or -1 with a message in err when it
 * could not start (output files). Thread-safe: threads may each run their
 * own config at once (each has its own event loop and connections). */
int loadgen_run(const loadgen_config *cfg, loadgen_result *res, char *err, int errlen);

#endif
