/* drain: each probe of a capacity search against a server it did not
 * start (--url) begins on an idle server. A lost probe is stopped early and
 * cancels what it has in flight, but a server may go on with abandoned
 * requests, or still hold the queue behind them, and that backlog would
 * meet the next probe's first requests and fail it before its own load
 * matters (seen on llama.cpp and vLLM: every probe after the first lost
 * one failed). So before each probe the search reads the server's
 * /metrics (monitor/busy.h) every DRAIN_POLL_MS until nothing is running
 * or waiting, at most max_s. A server without those gauges (Ollama, a
 * hosted API) is timed instead: a lone request of one token, sent again
 * until it takes no longer than the baseline measured before the first
 * probe allows (drain_lone). How long it waited, and how it ended, is kept
 * with the probe in capacity.json. */
#ifndef SERVELAB_DRAIN_H
#define SERVELAB_DRAIN_H

#include <curl/curl.h>

#define DRAIN_POLL_MS 250

typedef enum {
    DRAIN_NOT_CHECKED, /* a fresh simulator, or the engine in virtual time: idle by making */
    DRAIN_IDLE,        /* its gauges said nothing was running or waiting */
    DRAIN_NO_GAUGES,   /* no /metrics, or none of the gauges busy.h knows */
    DRAIN_BUSY,        /* still busy after max_s: the probe ran on a backlog */
    DRAIN_STOPPED,     /* a stop signal came while waiting */
    DRAIN_LONE_IDLE,   /* no gauges: a lone request was back at the baseline */
    DRAIN_LONE_BASE,   /* no gauges: the baseline was measured (before the first probe) */
    DRAIN_LONE_FAILED, /* no gauges, and the lone request did not succeed: not waited for */
} drain_state;

typedef struct drain_result {
    drain_state state;
    double waited_s;
    double running, waiting; /* the last reading (0 without gauges) */
    double lone_ms;          /* the last lone request's time (NAN: none sent) */
    double baseline_ms;      /* the lone request's time on the idle server (NAN: none) */
} drain_result;

/* A lone request: POSTed to `url` (the run's endpoint) with `body` (one
 * token of answer, not streamed). */
typedef struct drain_lone_req {
    const char *url, *body;
    struct curl_slist *headers;
    int insecure;
} drain_lone_req;

/* A lone request back at the baseline: no slower than this many times it,
 * plus DRAIN_LONE_SLACK_MS. */
#define DRAIN_LONE_FACTOR 1.5
#define DRAIN_LONE_SLACK_MS 20.0

/* Waits until the server at metrics_url is idle, at most max_s seconds. */
void drain_wait(const char *metrics_url, struct curl_slist *headers, int insecure, double max_s,
                drain_result *r);
/* For a server without gauges (r->state DRAIN_NO_GAUGES): with
 * baseline_ms NAN, the baseline, the fastest of 3 lone requests
 * (DRAIN_LONE_BASE); else lone requests, one after another DRAIN_POLL_MS
 * apart, until one takes no more than DRAIN_LONE_FACTOR x baseline_ms +
 * DRAIN_LONE_SLACK_MS (DRAIN_LONE_IDLE), at most max_s in all (DRAIN_BUSY).
 * A lone request that fails leaves DRAIN_LONE_FAILED. */
void drain_lone(const drain_lone_req *q, double baseline_ms, double max_s, drain_result *r);
/* "not checked", "idle", "no gauges", "busy", "stopped", "idle (lone
 * request)", "baseline", "lone request failed". */
const char *drain_state_name(drain_state s);

#endif
