/* cli/env: `servelab env [--url URL]`: the metadata a run records, as JSON
 * on stdout: the tool, the host, the GPUs (through NVML, when present) and,
 * with --url, what the server says about itself. */
#include "cli/commands.h"
#include "client/probe.h"
#include "common/hostinfo.h"
#include "common/util.h"
#include "monitor/gpu.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_env(int argc, char **argv) {
    static const struct option opts[] = {{"url", required_argument, 0, 'u'},
                                         {"insecure", no_argument, 0, 'k'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *url = NULL;
    int insecure = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'u': url = optarg; break;
        case 'k': insecure = 1; break;
        case 'h':
            printf("usage: servelab env [--url URL] [--insecure]\n"
                   "Environment and metadata as JSON: tool, host, GPUs, and the server at URL.\n");
            return 0;
        default: die(2, "env: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        die(2, "env: unexpected argument '%s'", argv[optind]);
    if (url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        die(2, "env: --url: expected http:// or https://, got '%s'", url);
    json_t *o = json_object();
    json_object_set_new(o, "tool", tool_info_json());
    json_object_set_new(o, "host", host_info_json());
    char why[256] = "";
    gpu_monitor *g = gpu_open(why, sizeof why);
    json_object_set_new(o, "gpus", gpu_meta_json(g));
    if (!g)
        json_object_set_new(o, "gpu_note", json_string(why));
    gpu_close(g);
    if (url) {
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
        json_object_set_new(o, "server", sv);
        probe_free(&p);
        free(base);
    }
    char *s = json_dumps(o, JSON_INDENT(2));
    puts(s);
    free(s);
    json_decref(o);
    return 0;
}
