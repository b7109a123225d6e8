/* lib_alloc: the libraries servelab links (libevent, libcurl, jansson)
 * allocate through its checked allocator (common/util.h), so running out
 * of memory is one policy for the whole process: one fatal line naming
 * the size, then abort, wherever it happens. Without this each library
 * answers an allocation failure its own way (libevent's evbuffer_add
 * returns -1 and the bytes are gone, jansson's builders return NULL), and a
 * caller that forgot a check would lose data or crash silently. libyaml
 * has no hook; its callers check its errors. */
#ifndef SERVELAB_LIB_ALLOC_H
#define SERVELAB_LIB_ALLOC_H

/* Once, first thing in main, before any of the three libraries is used
 * (libevent refuses new functions after its first allocation). */
void lib_alloc_checked(void);

#endif
