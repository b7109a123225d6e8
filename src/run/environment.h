/* environment: the metadata a run records, on its own: the tool, the host,
 * the GPUs (through NVML, when present) and, given a server's URL, what the
 * server says about itself. What `servelab env` prints. */
#ifndef SERVELAB_ENVIRONMENT_H
#define SERVELAB_ENVIRONMENT_H

#include <jansson.h>

/* url may be NULL (no server). */
json_t *environment_json(const char *url, int insecure);

#endif
