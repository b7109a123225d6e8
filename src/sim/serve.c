/* serve: the simulator's process loop (see serve.h). One event base on a
 * precise clock; with I/O threads libevent needs its pthread locking set up
 * before any base exists. */
#include "sim/serve.h"
#include "common/clock.h"
#include "common/util.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static void on_signal(evutil_socket_t sig, short what, void *arg) {
    (void)sig;
    (void)what;
    event_base_loopbreak(arg);
}

outcome sim_serve(const sim_config *cfg, sim_listening_fn listening, void *arg, char *err,
                  int errlen) {
    raise_fd_limit();
    /* every connection it may hold, before its I/O threads exist (util.h) */
    fd_table_reserve(64 + (long)cfg->limits.max_connections);
    signal(SIGPIPE, SIG_IGN);
    if (cfg->threads > 1)
        evthread_use_pthreads();
    struct event_base *base = event_base_precise();
    sim_server *srv = sim_server_start(base, cfg, err, errlen);
    if (!srv) {
        event_base_free(base);
        return OUTCOME_BAD_INPUT;
    }
    struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
    struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    struct event *sighup = evsignal_new(base, SIGHUP, on_signal, base);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    event_add(sighup, NULL);
    int v6 = strchr(cfg->host, ':') != NULL;
    char url[300];
    snprintf(url, sizeof url, "http://%s%s%s:%d", v6 ? "[" : "", cfg->host, v6 ? "]" : "",
             sim_server_port(srv));
    if (listening)
        listening(arg, url);
    event_base_dispatch(base);
    sim_server_flush(srv);
    const char *trace_err = sim_server_trace_error(srv);
    outcome rc = OUTCOME_OK;
    if (trace_err) {
        snprintf(err, errlen, "%s", trace_err);
        rc = OUTCOME_FAILED;
    }
    sim_server_free(srv);
    event_free(sigint);
    event_free(sigterm);
    event_free(sighup);
    event_base_free(base);
    return rc;
}
