/* jobs: n jobs on n threads, the caller's among them (see jobs.h). */
#include "common/jobs.h"
#include "common/util.h"

#include <pthread.h>
#include <stdlib.h>

void jobs_run(void *(*fn)(void *), void *jobs, size_t size, int n) {
    if (n < 1)
        return;
    pthread_t *th = xcalloc((size_t)n, sizeof *th);
    int *started = xcalloc((size_t)n, sizeof *started);
    for (int i = 0; i < n - 1; i++)
        started[i] = pthread_create(&th[i], NULL, fn, (char *)jobs + (size_t)i * size) == 0;
    fn((char *)jobs + (size_t)(n - 1) * size);
    for (int i = 0; i < n - 1; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            fn((char *)jobs + (size_t)i * size);
    }
    free(th);
    free(started);
}
