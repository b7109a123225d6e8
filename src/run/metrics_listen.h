/* metrics_listen: `run --metrics-listen HOST:PORT`, the client's own
 * figures in Prometheus' text format at GET /metrics while the run goes,
 * for Prometheus to scrape beside the server's own /metrics: requests by
 * outcome, sent and in flight, output tokens, and histograms of TTFT,
 * TPOT, E2E and the schedule lag, every name under servelab_ (docs/commands.md,
 * "Watching a run", lists them). The socket is bound before any traffic, so a port in use is
 * refused up front; a thread of its own answers, reading the client's
 * live counters (client/live.h): many scrapes at once, each connection
 * closed after its answer or at its deadline, whichever comes first. */
#ifndef SERVELAB_METRICS_LISTEN_H
#define SERVELAB_METRICS_LISTEN_H

#include "client/live.h"

#include <stddef.h>
#include <stdio.h>

/* A scrape's connection is closed this long after its accept, answered or
 * not: a slow scraper costs the others nothing and the run's end no wait. */
#define METRICS_LISTEN_DEADLINE_MS 2000
/* The connections answered at once; more wait in the listen backlog. */
#define METRICS_LISTEN_CONNS 64
/* The most scrapes answered a second (one each 5 ms): what a flood of
 * them may cost the client is bounded; Prometheus asks one every 15 s. */
#define METRICS_LISTEN_RATE 200
/* Taken at once when the thread was late, at most (1 + this in the first
 * instant): over any window the rate holds, give or take these. */
#define METRICS_LISTEN_BURST 4

typedef struct metrics_listen metrics_listen;

/* Binds HOST:PORT (an IPv4 address or a name; PORT 0 picks one, and then
 * says which with metrics_listen_announce, --quiet or not, as
 * nothing else could tell). NULL with why in err. */
metrics_listen *metrics_listen_open(const char *host_port, char *err, size_t errlen);
/* The port it listens on (the one picked for PORT 0), for meta.json. */
int metrics_listen_port(const metrics_listen *m);
/* Where to scrape: "http://HOST:PORT/metrics", HOST the address bound. */
const char *metrics_listen_url(const metrics_listen *m);
/* Says "metrics on http://HOST:PORT/metrics" to the process's sink
 * (common/notice.h), once (a second call, or one after open said it for
 * PORT 0, says nothing). */
void metrics_listen_announce(metrics_listen *m);
/* Starts answering from l; labels go on servelab_run_info ("run", "url"). */
void metrics_listen_start(metrics_listen *m, live_stats *l, const char *run, const char *url);
/* Stops answering and closes the socket and every scrape's connection at
 * once, however slow their scrapers (it never waits for one). Returns the
 * CPU seconds its thread used (for the run to leave out of the client's);
 * 0 for NULL, which is fine. */
double metrics_listen_close(metrics_listen *m);

/* The exposition text of a snapshot (for tests). */
void metrics_text(const live_snapshot *s, const char *run, const char *url, char **text,
                  size_t *len);

#endif
