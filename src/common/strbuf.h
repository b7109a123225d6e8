/* strbuf: a growable string for building files in memory (report --check
 * compares what it would write with what is on disk). */
#ifndef SERVELAB_STRBUF_H
#define SERVELAB_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
    char *s;
    size_t n, cap;
} strbuf;

void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_puts(strbuf *b, const char *s);
void sb_putn(strbuf *b, const char *s, size_t n);
/* Text with &, <, >, " escaped for XML/HTML. */
void sb_escape(strbuf *b, const char *s);
void sb_free(strbuf *b);

#endif
