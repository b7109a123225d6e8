/* drain: each probe of a capacity search against a server it did not
 * start (--url) begins on an idle server. A lost probe is stopped early and
 * cancels what it has in flight, but a server may go on with abandoned
 * requests, or still hold the queue behind them, and that backlog would
 * meet the next probe's first requests and fail it before its own load
 * matters (seen on llama.cpp and vLLM: every probe after the first lost
 * one failed). So before each probe the search reads the server's
 * /metrics (monitor/busy.h) every DRAIN_POLL_MS until nothing is running
 * or waiting, at most max_s; how long it waited, and how it ended, is kept
 * with the probe in capacity.json. A server without those gauges is not
 * waited for (DRAIN_NO_GAUGES). */
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
} drain_state;

typedef struct drain_result {
    drain_state state;
    double waited_s;
    double running, waiting; /* the last reading (0 without gauges) */
} drain_result;

/* Waits until the server at metrics_url is idle, at most max_s seconds. */
void drain_wait(const char *metrics_url, struct curl_slist *headers, int insecure, double max_s,
                drain_result *r);
/* "not checked", "idle", "no gauges", "busy", "stopped". */
const char *drain_state_name(drain_state s);

#endif
