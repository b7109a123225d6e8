/* hostinfo: facts about the machine a run happened on, for meta.json:
 * hostname, CPU model, cores, kernel, and the tool's version and commit. */
#ifndef SERVELAB_HOSTINFO_H
#define SERVELAB_HOSTINFO_H

#include <jansson.h>

json_t *host_info_json(void);
json_t *tool_info_json(void);

#endif
