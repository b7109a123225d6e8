/* start_at: --start-at and the clock's state (see start_at.h). */
#include "run/start_at.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

int start_at_parse(const char *spec, int64_t now_unix_us, int64_t *at_unix_us, char *why,
                   size_t whylen) {
    int relative = spec[0] == '+';
    const char *num = spec + relative;
    char *end;
    errno = 0;
    double v = strtod(num, &end);
    if (!*num || *end || errno || !isfinite(v) || v < 0 || strpbrk(num, "xXnNiI")) {
        snprintf(why, whylen,
                 "expected seconds since the epoch (like 1796140800) or +S (like +30), "
                 "got '%.40s'",
                 spec);
        return -1;
    }
    double at = relative ? (double)now_unix_us + v * 1e6 : v * 1e6;
    double ahead_s = (at - (double)now_unix_us) / 1e6;
    if (ahead_s < 0) {
        snprintf(why, whylen,
                 -ahead_s < 1e6 ? "'%.40s' is %.3f s in the past (this machine's clock)"
                                : "'%.40s' is %.3g s in the past (this machine's clock)",
                 spec, -ahead_s);
        return -1;
    }
    if (ahead_s > START_AT_MAX_WAIT_S) {
        snprintf(why, whylen, "'%.40s' is %.3g s ahead, more than a day", spec, ahead_s);
        return -1;
    }
    *at_unix_us = (int64_t)llround(at);
    return 0;
}

json_t *start_at_clock_json(void) {
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    int state = adjtimex(&tx);
    if (state < 0)
        return json_pack("{s:n,s:s}", "synchronized", "why", strerror(errno));
    int synced = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
    return json_pack("{s:b,s:I,s:I}", "synchronized", synced, "est_error_us",
                     (json_int_t)tx.esterror, "max_error_us", (json_int_t)tx.maxerror);
}
