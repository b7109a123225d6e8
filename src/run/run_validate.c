/* run_validate: the checks that need the whole set of a run's options
 * (e.g. --duration with a finite rate, what --replay cannot go with), made
 * once every option is read; each option's own value was checked as it
 * was given (run_check.c). A sweep's runs come here too, from run.c. */
#include "client/h1.h"
#include "run/run.h"
#include "workload/rate_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What --replay cannot go with: the trace is the schedule and the prompts,
 * and says what is shared. NULL when nothing. */
static const char *replay_conflict(const run_opts *o) {
    if (!o->replay)
        return NULL;
    if (o->have_duration)
        return "--replay: the trace is the schedule: give --replay-duration (trace time), not "
               "--duration";
    if (o->have_rate)
        return "--replay: the trace's timestamps are the schedule: --time-scale speeds it up, "
               "--rate does not apply";
    if (strcmp(o->prompts, "builtin") || o->mix)
        return "--replay: the trace makes the prompts: --prompts and --mix do not apply";
    if (strcmp(o->arrival, "poisson") || o->burstiness != 1)
        return "--replay: the trace's timestamps are the arrivals: --arrival and --burstiness do "
               "not apply";
    if (strcmp(o->turns, "1"))
        return "--replay: a trace's records are single requests: --turns does not apply";
    if (o->prefix_tokens > 0)
        return "--replay: the trace says what is shared: --prefix-tokens does not apply";
    if (o->warmup > 0)
        return "--replay: --warmup would send the trace's blocks first and prime the prefix "
               "cache it measures";
    return NULL;
}

int run_opts_validate(const run_opts *o, char *err, int errlen) {
    const char *why = NULL;
    if (!o->url && !o->predict)
        why = "--url is required (e.g. --url http://127.0.0.1:8000)";
    else if (o->predict && o->warmup > 0)
        why = "--warmup: a prediction's engine starts empty and its warmup would not reach the "
              "measured requests' engine: leave it out";
    else if (o->rate_plan && o->have_rate)
        why = "give --rate or --rate-plan, not both";
    else if (o->rate_plan && o->replay)
        why = "--replay: the trace's timestamps are the schedule: --rate-plan does not apply";
    else if (o->rate_plan && (o->have_requests || o->have_duration))
        why = "--rate-plan sets the schedule's length: give neither --requests nor --duration";
    else if ((why = replay_conflict(o)))
        ; /* said */
    else if (o->have_requests && o->have_duration)
        why = "give --requests or --duration, not both";
    else if (o->have_duration && isinf(o->rate))
        why = "--duration needs a finite --rate";
    else if (o->have_duration && o->rate * o->duration_s > RATE_PLAN_MAX_REQUESTS)
        why = "--rate x --duration: more than 100,000,000 requests, more than a run holds";
    else if (o->fail_on_slo && !o->slo)
        why = "--fail-on-slo needs --slo";
    else if (o->tools && strcmp(o->api, "chat"))
        why = "--tools: tool calls are asked of the chat API: add --api chat";
    else if ((o->tools || o->response_format) && o->predict)
        why = "--tools, --response-format: a prediction's engine writes no text to check";
    else if (!o->predict && !strcmp(o->http_client, "builtin") && !h1_usable(o->url))
        why = "--http-client builtin: needs a plain http:// URL without credentials and no "
              "http_proxy/all_proxy in the environment";
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}
