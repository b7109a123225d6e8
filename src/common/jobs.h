/* jobs: a handful of jobs run at once, one thread each, the last on the
 * caller's own thread, all finished on return. For the few parallel steps
 * of a large merge or report (sorting parts of an array, placing rows),
 * where a pool would outlive its work. */
#ifndef SERVELAB_JOBS_H
#define SERVELAB_JOBS_H

#include <stddef.h>

/* fn on each of the n jobs of `size` bytes at jobs (size 0: every thread
 * gets jobs itself, for workers that share a queue). A job whose thread
 * cannot be started runs on the caller's thread after the others, so every
 * job runs once whatever the system allows. */
void jobs_run(void *(*fn)(void *), void *jobs, size_t size, int n);

#endif
