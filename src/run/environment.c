/* environment: the tool, host, GPU and server metadata as one JSON object
 * (see environment.h). */
#include "run/environment.h"
#include "client/probe.h"
#include "common/hostinfo.h"
#include "common/util.h"
#include "monitor/gpu.h"

#include <stdlib.h>
#include <string.h>

static json_t *server_json(const char *url, int insecure) {
    char *base = xstrdup(url);
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        base[--n] = 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    server_probe p;
    probe_server(base, NULL, insecure, &p);
    json_t *sv = probe_json(&p);
    json_object_set_new(sv, "url", json_string(base));
    json_object_set_new(sv, "is_servelab_sim", json_boolean(p.is_sim));
    probe_free(&p);
    free(base);
    return sv;
}

json_t *environment_json(const char *url, int insecure) {
    json_t *o = json_object();
    json_object_set_new(o, "tool", tool_info_json());
    json_object_set_new(o, "host", host_info_json());
    char why[256] = "";
    gpu_monitor *g = gpu_open(why, sizeof why);
    json_object_set_new(o, "gpus", gpu_meta_json(g));
    if (!g)
        json_object_set_new(o, "gpu_note", json_string(why));
    gpu_close(g);
    if (url)
        json_object_set_new(o, "server", server_json(url, insecure));
    return o;
}
