/* run_check: one option's value, checked as it is given: each function is
 * the .check of a row of run_options (run_options.c), so the command line
 * and a campaign's run keys refuse the same values with the same words
 * (common/opt.h: 0, or -1 with what is wrong). What needs the whole set
 * of options is run_validate.c's. --metrics-interval's value is also read
 * here, with the row its check uses. */
#include "run/run_check.h"
#include "common/clock.h"
#include "common/util.h"
#include "model/slo.h"
#include "run/run.h"
#include "run/shard.h"
#include "run/start_at.h"
#include "workload/answer_spec.h"
#include "workload/conversation.h"
#include "workload/rate_plan.h"
#include "workload/workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The authority of a URL (after "scheme://", up to the path): an optional
 * user@, a host (a name or address, or [IPv6]) and an optional :port in
 * 1-65535. NULL, or what is wrong with it. */
static const char *authority_problem(const char *a, size_t n) {
    const char *at = memchr(a, '@', n);
    if (at) {
        n -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    const char *port = NULL;
    if (n && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close)
            return "the host's '[' is not closed";
        if (close == a + 1)
            return "no host";
        if (close + 1 < a + n && close[1] != ':')
            return "something after the host's ']'";
        port = close + 1 < a + n ? close + 2 : NULL;
    } else {
        const char *colon = memchr(a, ':', n);
        if ((colon ? colon : a + n) == a)
            return "no host";
        port = colon ? colon + 1 : NULL;
    }
    if (!port)
        return NULL;
    size_t digits = (size_t)(a + n - port);
    long v = 0;
    for (size_t i = 0; i < digits; i++) {
        if (port[i] < '0' || port[i] > '9')
            return "the port is not a number";
        v = v * 10 + (port[i] - '0');
        if (v > 65535)
            break;
    }
    return digits == 0 || v < 1 || v > 65535 ? "the port is not in 1-65535" : NULL;
}

int run_check_url(const char *text, char *err, size_t errlen) {
    size_t skip = !strncmp(text, "http://", 7) ? 7 : !strncmp(text, "https://", 8) ? 8 : 0;
    if (!skip) {
        snprintf(err, errlen, "expected a URL starting with http:// or https://, got '%.60s'",
                 text);
        return -1;
    }
    const char *why = NULL;
    for (const char *c = text; *c && !why; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            why = "it holds a space or a control character";
    if (!why) {
        const char *a = text + skip;
        why = authority_problem(a, strcspn(a, "/?#"));
    }
    if (!why)
        return 0;
    char *shown = redact_url(text); /* credentials never reach a message */
    snprintf(err, errlen, "'%.60s' is not a usable URL: %s", shown, why);
    free(shown);
    return -1;
}

int run_check_header(const char *text, char *err, size_t errlen) {
    if (!strchr(text, ':') || text[0] == ':') {
        snprintf(err, errlen, "expected 'Name: value', got '%.60s'", text);
        return -1;
    }
    if (strpbrk(text, "\r\n")) {
        snprintf(err, errlen, "a header may not hold CR or LF");
        return -1;
    }
    size_t name = (size_t)(strchr(text, ':') - text);
    if ((name == 14 && !strncasecmp(text, "Content-Length", 14)) ||
        (name == 17 && !strncasecmp(text, "Transfer-Encoding", 17))) {
        snprintf(err, errlen, "%.*s is servelab's to set (the body's own length)", (int)name, text);
        return -1;
    }
    return 0;
}

/* --metadata KEY=VALUE: a key of letters, digits, '_', '-' and '.' (a
 * JSON key a reader of vLLM's file can use as it is), any value. */
int run_check_metadata(const char *text, char *err, size_t errlen) {
    const char *eq = strchr(text, '=');
    size_t k = eq ? (size_t)(eq - text) : 0;
    int ok = k > 0 && k <= 64;
    for (size_t i = 0; ok && i < k; i++)
        ok = isalnum((unsigned char)text[i]) || strchr("_-.", text[i]);
    if (!ok) {
        snprintf(err, errlen, "expected KEY=VALUE (a key of letters, digits, _ - .), got '%.60s'",
                 text);
        return -1;
    }
    return 0;
}

/* --metrics-interval's seconds: the row an explicit value is read with,
 * so that it takes what any option in seconds takes, with the same words. */
static const opt_def interval_seconds = {
    .name = "metrics-interval", .type = OPT_SECONDS, .at = 0, .size = sizeof(double), .min = 0.01};

int run_check_metrics_interval(const char *text, char *err, size_t errlen) {
    double v;
    if (!strcmp(text, "auto") || !opt_set(&interval_seconds, text, &v, err, errlen))
        return 0;
    char what[160];
    snprintf(err, errlen, "expected auto or %s, got '%.60s'",
             opt_what(&interval_seconds, what, sizeof what), text);
    return -1;
}

double run_metrics_interval_s(const run_opts *o, double schedule_s) {
    double v;
    char err[256];
    if (strcmp(o->metrics_interval, "auto") &&
        !opt_set(&interval_seconds, o->metrics_interval, &v, err, sizeof err))
        return v;
    double auto_s = schedule_s / METRICS_AUTO_SAMPLES;
    return auto_s < METRICS_AUTO_MIN_S   ? METRICS_AUTO_MIN_S
           : auto_s > METRICS_AUTO_MAX_S ? METRICS_AUTO_MAX_S
                                         : auto_s;
}

/* auto, off, or a whole number of connections (0 is off). */
int run_check_preconnect(const char *text, char *err, size_t errlen) {
    if (!strcmp(text, "auto") || !strcmp(text, "off"))
        return 0;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || v > 1000000) {
        snprintf(err, errlen, "expected auto, off or a number of connections, got '%s'", text);
        return -1;
    }
    return 0;
}

int run_check_slo(const char *text, char *err, size_t errlen) {
    slo_spec s;
    char why[256];
    if (!slo_parse(text, &s, why, sizeof why))
        return 0;
    /* slo_parse names the flag itself; the caller puts the name in front */
    const char *msg = strncmp(why, "--slo: ", 7) ? why : why + 7;
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* --turns: a whole number of turns, or all. */
int run_check_turns(const char *v, char *why, size_t whylen) {
    long n;
    if (!strcmp(v, "all") || (!parse_int(v, &n) && n >= 1 && n <= CONV_MAX_TURNS))
        return 0;
    snprintf(why, whylen, "expected a number of turns from 1 to %d, or all, got '%s'",
             CONV_MAX_TURNS, v);
    return -1;
}

/* --cache-bust-salt: 1-16 hex digits. */
int run_check_salt(const char *v, char *why, size_t whylen) {
    size_t n = strlen(v);
    if (n < 1 || n > 16 || strspn(v, "0123456789abcdefABCDEF") != n) {
        snprintf(why, whylen, "expected 1 to 16 hex digits, got '%s'", v);
        return -1;
    }
    return 0;
}

/* --extra-body: a JSON object without servelab's own keys. */
int run_check_extra_body(const char *v, char *why, size_t whylen) {
    json_t *o = workload_extra_body(v, why, whylen);
    json_decref(o);
    return o ? 0 : -1;
}

/* --tools FILE and --response-format FILE: read and checked now. */
int run_check_tools(const char *v, char *why, size_t whylen) {
    answer_spec s;
    int rc = answer_spec_load(v, NULL, &s, why, whylen);
    answer_spec_free(&s);
    return rc;
}

int run_check_format(const char *v, char *why, size_t whylen) {
    answer_spec s;
    int rc = answer_spec_load(NULL, v, &s, why, whylen);
    answer_spec_free(&s);
    return rc;
}

/* --shard: I/N or auto (the scheduler's variables are read when the run
 * starts). */
int run_check_shard(const char *v, char *why, size_t whylen) {
    if (!strcmp(v, "auto"))
        return 0;
    shard_spec s;
    return shard_parse(v, 0, getenv, &s, why, whylen);
}

/* --start-at: EPOCH or +S, in the future (checked again when the run starts). */
int run_check_start_at(const char *v, char *why, size_t whylen) {
    int64_t at;
    return start_at_parse(v, wall_us(), &at, why, whylen);
}

/* --rate-plan: stages that parse (workload/rate_plan.h says what they are). */
int run_check_rate_plan(const char *v, char *why, size_t whylen) {
    rate_plan p;
    return rate_plan_parse(v, &p, why, whylen);
}
