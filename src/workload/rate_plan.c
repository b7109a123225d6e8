/* rate_plan: the spec's parser and the integral of a stage's linear rate.
 * Rates and durations are read by the same option rows every option uses
 * (common/opt.h), so "500ms", "2m" and the words of a bad value are those
 * of --duration and the other numbers. */
#include "workload/rate_plan.h"
#include "common/opt.h"
#include "workload/arrivals.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const opt_def rate_row = {
    .name = "rate", .type = OPT_NUMBER, .at = 0, .size = sizeof(double), .min = 0};
static const opt_def duration_row = {
    .name = "duration", .type = OPT_SECONDS, .at = 0, .size = sizeof(double), .min = 0, .above = 1};

double rate_stage_mean_rps(const rate_stage *s) {
    return (s->from_rps + s->to_rps) / 2;
}

double rate_stage_expected(const rate_stage *s) {
    return rate_stage_mean_rps(s) * s->duration_s;
}

/* The integral of a + (b - a) x / D from 0 to x is a x + (b - a) x^2 / 2D;
 * solved for x, in the form that neither cancels nor divides by b - a:
 * x = 2 n / (a + sqrt(a^2 + 2 (b - a) n / D)). */
double rate_stage_time_at(const rate_stage *s, double arrivals) {
    double a = s->from_rps, b = s->to_rps, d = s->duration_s;
    if (arrivals <= 0)
        return 0;
    double disc = a * a + 2 * (b - a) * arrivals / d;
    double denom = a + sqrt(disc > 0 ? disc : 0);
    double x = denom > 0 ? 2 * arrivals / denom : d;
    return x < d ? x : d;
}

double rate_plan_expected(const rate_plan *p) {
    double sum = 0;
    for (int i = 0; i < p->n; i++)
        sum += rate_stage_expected(&p->stage[i]);
    return sum;
}

double rate_plan_mean_rps(const rate_plan *p) {
    return p->duration_s > 0 ? rate_plan_expected(p) / p->duration_s : 0;
}

/* Control characters made spaces, so that a message stays one line. */
static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

/* "what: expected ..., got '...'" from one of the rows above. */
static int read_part(const opt_def *row, const char *what, const char *text, double *v, char *why,
                     size_t whylen) {
    char err[256];
    if (!opt_set(row, text, v, err, sizeof err))
        return 0;
    snprintf(why, whylen, "the %s: %s", what, err);
    return -1;
}

/* The '-' between a ramp's two rates: the first one that is neither a
 * leading sign nor an exponent's ("1e-3-2" is 0.001 to 2). */
static char *ramp_dash(char *s) {
    for (char *c = s + 1; *c; c++)
        if (*c == '-' && c[-1] != 'e' && c[-1] != 'E')
            return c;
    return NULL;
}

/* One stage's text ("4@60s", "ramp:1-8@2m"): 0, or -1 with what is wrong. */
static int parse_stage(char *text, rate_stage *st, char *why, size_t whylen) {
    int ramp = !strncmp(text, "ramp:", 5);
    char *rates = ramp ? text + 5 : text, *at = strrchr(rates, '@');
    const char *shape = ramp ? "ramp:FROM-TO@DURATION" : "RATE@DURATION or ramp:FROM-TO@DURATION";
    char *dash = ramp && at ? ramp_dash(rates) : NULL;
    if (!at || (ramp && (!dash || dash > at))) {
        snprintf(why, whylen, "expected %s (e.g. %s)", shape, ramp ? "ramp:1-8@60s" : "4@60s");
        return -1;
    }
    *at = 0;
    if (dash)
        *dash = 0;
    st->ramp = ramp;
    if (read_part(&rate_row, ramp ? "starting rate" : "rate", rates, &st->from_rps, why, whylen) ||
        (ramp && read_part(&rate_row, "final rate", dash + 1, &st->to_rps, why, whylen)) ||
        read_part(&duration_row, "duration", at + 1, &st->duration_s, why, whylen))
        return -1;
    if (!ramp)
        st->to_rps = st->from_rps;
    return 0;
}

/* The stage's text, spaces around it trimmed, into buf: its length, or -1
 * when it does not fit. */
static int stage_text(const char *from, size_t n, char *buf, size_t cap) {
    while (n && (*from == ' ' || *from == '\t'))
        from++, n--;
    while (n && (from[n - 1] == ' ' || from[n - 1] == '\t'))
        n--;
    if (n >= cap)
        return -1;
    memcpy(buf, from, n);
    buf[n] = 0;
    return (int)n;
}

/* What the stages add up to: something to offer, in a week, in bounds. */
static int check_whole(const rate_plan *p, char *err, size_t errlen) {
    double expected = rate_plan_expected(p);
    if (p->duration_s > ARRIVALS_MAX_S)
        snprintf(err, errlen, "the stages last %g s in all, more than %d days", p->duration_s,
                 ARRIVALS_MAX_S / 86400);
    else if (!(expected > 0))
        snprintf(err, errlen, "every stage's rate is 0: the plan offers no requests");
    else if (expected > RATE_PLAN_MAX_REQUESTS)
        snprintf(err, errlen, "the plan expects about %.3g requests, more than %d", expected,
                 RATE_PLAN_MAX_REQUESTS);
    else
        return 0;
    return -1;
}

int rate_plan_parse(const char *spec, rate_plan *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (!spec[strspn(spec, " \t")]) {
        snprintf(err, errlen, "expected stages such as 2@60s,ramp:2-8@60s, got '%.60s'", spec);
        one_line(err);
        return -1;
    }
    for (const char *s = spec;; p->n++) {
        size_t len = strcspn(s, ",");
        char text[128], why[400];
        int k = p->n + 1;
        if (p->n == RATE_PLAN_MAX_STAGES) {
            snprintf(err, errlen, "more than %d stages", RATE_PLAN_MAX_STAGES);
            return -1;
        }
        int n = stage_text(s, len, text, sizeof text);
        if (n < 0) {
            snprintf(err, errlen, "stage %d '%.40s...' is too long", k, s);
            one_line(err);
            return -1;
        }
        if (!n) {
            snprintf(err, errlen, "stage %d is empty (two commas, or one at an end)", k);
            return -1;
        }
        char shown[128];
        snprintf(shown, sizeof shown, "%s", text);
        one_line(shown);
        rate_stage *st = &p->stage[p->n];
        if (parse_stage(text, st, why, sizeof why)) {
            snprintf(err, errlen, "stage %d '%s': %s", k, shown, why);
            return -1;
        }
        st->start_s = p->duration_s;
        p->duration_s += st->duration_s;
        if (!s[len]) {
            p->n++;
            break;
        }
        s += len + 1;
    }
    return check_whole(p, err, errlen);
}
