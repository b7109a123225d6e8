/* lib_alloc: libevent, libcurl and jansson take xmalloc and its kin as
 * their allocators (see lib_alloc.h for why). curl's first global init
 * fixes its functions; the later curl_global_init calls of run and
 * environment only count up. */
#include "common/lib_alloc.h"
#include "common/util.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <jansson.h>
#include <stdlib.h>

static void *checked_malloc(size_t n) {
    return xmalloc(n);
}

static void *checked_realloc(void *p, size_t n) {
    return xrealloc(p, n);
}

static void *checked_calloc(size_t n, size_t size) {
    return xcalloc(n, size);
}

static char *checked_strdup(const char *s) {
    return xstrdup(s);
}

void lib_alloc_checked(void) {
    event_set_mem_functions(checked_malloc, checked_realloc, free);
    json_set_alloc_funcs(checked_malloc, free);
    curl_global_init_mem(CURL_GLOBAL_DEFAULT, checked_malloc, free, checked_realloc, checked_strdup,
                         checked_calloc);
}
