/* strbuf: append-only string with printf. */
#include "common/strbuf.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(strbuf *b, size_t extra) {
    if (b->n + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->n + extra + 1)
        cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
}

void sb_printf(strbuf *b, const char *fmt, ...) {
    if (!fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void sb_putn(strbuf *b, const char *s, size_t n) {
    grow(b, n);
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void sb_puts(strbuf *b, const char *s) {
    sb_putn(b, s, strlen(s));
}

void sb_escape(strbuf *b, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': sb_puts(b, "&amp;"); break;
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        default: sb_putn(b, s, 1);
        }
    }
}

void sb_free(strbuf *b) {
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}
