/* notice: lines for the user handed to the sink the command gave
 * (notice.h says why the library never prints). */
#include "common/notice.h"

#include <stdarg.h>
#include <stdio.h>

static notice_sink default_sink;
static int have_default;

static void vnotice(const notice_sink *sink, notice_kind kind, const char *fmt, va_list ap) {
    if (!sink || !sink->fn)
        return;
    char text[2048];
    vsnprintf(text, sizeof text, fmt, ap);
    sink->fn(sink->ctx, kind, text);
}

void notice(const notice_sink *sink, notice_kind kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vnotice(sink, kind, fmt, ap);
    va_end(ap);
}

void notice_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vnotice(notice_default(), NOTICE_WARNING, fmt, ap);
    va_end(ap);
}

void notice_set_default(const notice_sink *sink) {
    have_default = sink != NULL;
    if (sink)
        default_sink = *sink;
}

const notice_sink *notice_default(void) {
    return have_default ? &default_sink : NULL;
}
