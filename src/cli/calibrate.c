/* cli/calibrate: `servelab calibrate`: how far this machine can be trusted
 * to measure. Prints a table and one sentence, and saves the result
 * (default ~/.cache/servelab/calibration.json) so that `servelab run` can
 * say when a run goes beyond it. */
#include "calibrate/calibrate.h"
#include "cli/commands.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/hostinfo.h"
#include "common/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const calib_level default_levels[] = {{10, 1}, {100, 1}, {1000, 10}, {5000, 50}, {5000, 25}};

/* "STREAMS@STEP_MS,..." */
static int parse_levels(const char *s, calib_level **out) {
    int n = 0, cap = 8;
    calib_level *lv = xmalloc((size_t)cap * sizeof *lv);
    char *copy = xstrdup(s), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int streams;
        double step;
        char extra;
        if (sscanf(t, "%d@%lf%c", &streams, &step, &extra) != 2 || streams < 1 || streams > 50000 ||
            step <= 0)
            die(2, "calibrate: --levels: '%s' is not STREAMS@STEP_MS (e.g. 1000@10)", t);
        if (n == cap)
            lv = xrealloc(lv, (size_t)(cap *= 2) * sizeof *lv);
        lv[n++] = (calib_level){streams, step};
    }
    free(copy);
    *out = lv;
    return n;
}

static void default_save_path(char *buf, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, cap, "%s/servelab/calibration.json", xdg);
    else
        snprintf(buf, cap, "%s/.cache/servelab/calibration.json", home ? home : ".");
}

int cmd_calibrate(int argc, char **argv) {
    static const struct option opts[] = {{"levels", required_argument, 0, 'l'},
                                         {"seconds", required_argument, 0, 's'},
                                         {"save", required_argument, 0, 'o'},
                                         {"json", no_argument, 0, 'j'},
                                         {"keep", required_argument, 0, 'k'},
                                         {"repeat", required_argument, 0, 'r'},
                                         {"threads", required_argument, 0, 't'},
                                         {"no-pin", no_argument, 0, 'P'},
                                         {"http-client", required_argument, 0, 'H'},
                                         {"sim-threads", required_argument, 0, 'S'},
                                         {"no-realtime", no_argument, 0, 'R'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    calib_opts o = {.seconds = 3,
                    .realtime = 1,
                    .levels = default_levels,
                    .n_levels = (int)(sizeof default_levels / sizeof *default_levels)};
    calib_level *custom = NULL;
    const char *save = NULL, *keep = NULL;
    int json = 0, pin = 1, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            o.n_levels = parse_levels(optarg, &custom);
            o.levels = custom;
            break;
        case 's':
            if (parse_double(optarg, &o.seconds) || o.seconds < 0.2 || o.seconds > 600)
                die(2, "calibrate: --seconds: expected 0.2 to 600, got '%s'", optarg);
            break;
        case 'o': save = optarg; break;
        case 't': {
            long t;
            if (parse_int(optarg, &t) || t < 1 || t > 64)
                die(2, "calibrate: --threads: expected 1 to 64, got '%s'", optarg);
            o.threads = (int)t;
            break;
        }
        case 'r': {
            long r;
            if (parse_int(optarg, &r) || r < 1 || r > 64)
                die(2, "calibrate: --repeat: expected 1 to 64, got '%s'", optarg);
            o.repeat = (int)r;
            break;
        }
        case 'j': json = 1; break;
        case 'P': pin = 0; break;
        case 'S': {
            long t;
            if (parse_int(optarg, &t) || t < 1 || t > 64)
                die(2, "calibrate: --sim-threads: expected 1 to 64, got '%s'", optarg);
            o.sim_threads = (int)t;
            break;
        }
        case 'H':
            if (strcmp(optarg, "auto") && strcmp(optarg, "builtin") && strcmp(optarg, "libcurl"))
                die(2, "calibrate: --http-client: expected auto, builtin or libcurl, got '%s'",
                    optarg);
            o.http_client = optarg;
            break;
        case 'R': o.realtime = 0; break;
        case 'k': keep = optarg; break;
        case 'h':
            printf(
                "usage: servelab calibrate [--levels S@MS,...] [--seconds S] [--save FILE]\n"
                "Runs the simulator and the client on this machine at rising load and says\n"
                "up to which streams and chunk rate it measures within 1 ms.\n\n"
                "  --levels S@MS,...  streams and simulator step (default "
                "10@1,100@1,1000@10,5000@50,5000@25)\n"
                "  --seconds S        how long each stream lasts (3)\n"
                "  --save FILE        where to keep the result "
                "(~/.cache/servelab/calibration.json)\n"
                "  --keep DIR         keep the rows and traces in DIR\n"
                "  --repeat N         run each level N times, report medians (1)\n"
                "  --threads N        client threads, as servelab run --threads (1)\n"
                "  --no-pin           do not put the simulator and the client on separate CPUs\n"
                "  --no-realtime      do not ask for SCHED_FIFO (run/sim --realtime)\n"
                "  --http-client C    the client's HTTP client, as servelab run (auto)\n"
                "  --sim-threads N    the simulator's I/O threads, as servelab sim --threads (1)\n"
                "  --json             print the result as JSON instead of the table\n");
            return 0;
        default: die(2, "calibrate: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    static char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    o.self = n > 0 ? self : argv[0];
    char work[PATH_MAX];
    if (keep) {
        mkdir(keep, 0755);
        snprintf(work, sizeof work, "%s", keep);
    } else {
        snprintf(work, sizeof work, "/tmp/servelab-calibrate-XXXXXX");
        if (!mkdtemp(work))
            die(1, "calibrate: cannot create a scratch directory: %s", strerror(errno));
    }
    o.work = work;
    o.quiet = json;
    char sim_cpus[64], client_cpus[64];
    if (pin)
        calibrate_placement(&o, sim_cpus, client_cpus);
    char placement[256];
    snprintf(placement, sizeof placement,
             "simulator (%d thread%s) on CPU %s, client (%d thread%s) on CPU %s, %s%s%s",
             o.sim_threads > 1 ? o.sim_threads : 1, o.sim_threads > 1 ? "s" : "",
             o.sim_cpus ? o.sim_cpus : "any", o.threads > 1 ? o.threads : 1,
             o.threads > 1 ? "s" : "", o.client_cpus ? o.client_cpus : "any",
             o.realtime ? "both asked for SCHED_FIFO" : "normal priority",
             o.http_client ? ", --http-client " : "", o.http_client ? o.http_client : "");
    raise_fd_limit();
    calib_result *res = xcalloc((size_t)o.n_levels, sizeof *res);
    char err[512];
    int64_t t0 = mono_us();
    if (calibrate_run(&o, res, err, sizeof err))
        die(1, "calibrate: %s", err);
    double took = (mono_us() - t0) / 1e6;
    char sentence[512];
    calibrate_sentence(sentence, sizeof sentence, res, o.n_levels);
    json_t *doc =
        json_pack("{s:o,s:o,s:s,s:s,s:f,s:i,s:o}", "tool", tool_info_json(), "host",
                  host_info_json(), "sentence", sentence, "placement", placement, "took_s", took,
                  "repeat", o.repeat < 1 ? 1 : o.repeat, "levels", calibrate_json(res, o.n_levels));
    char path[PATH_MAX];
    if (save)
        snprintf(path, sizeof path, "%s", save);
    else
        default_save_path(path, sizeof path);
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = 0;
        mkdir_p(path);
        *slash = '/';
    }
    int saved = json_dump_file(doc, path, JSON_INDENT(2)) == 0;
    if (json) {
        char *s = json_dumps(doc, JSON_INDENT(2));
        puts(s);
        free(s);
    } else {
        calibrate_print_table(stdout, res, o.n_levels);
        printf("\n%s\n(%s; %.0f s; %s %s)\n", sentence, placement, took,
               saved ? "saved in" : "could not save", path);
    }
    json_decref(doc);
    if (!keep) {
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
        if (system(cmd) != 0)
            warnx_("could not remove %s", work);
    }
    free(res);
    free(custom);
    return 0;
}
