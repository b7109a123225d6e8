/* session: the whole of `servelab calibrate` after its options are read
 * (see session.h). */
#include "calibrate/session.h"
#include "calibrate/verdict.h"
#include "common/notice.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/hostinfo.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const calib_level default_levels[] = {{10, 1, 0, 1},
                                             {100, 1, 0, 1},
                                             {1000, 10, 0, 1},
                                             {5000, 50, 0, 1},
                                             {5000, 25, 0, 1},
                                             {1000, 10, 1, CALIB_BURST_ROUNDS},
                                             {5000, 50, 1, CALIB_BURST_ROUNDS}};

/* One "[burst:|spread:]STREAMS@STEP_MS" of a level list of `len` bytes. */
static int parse_level(const char *s, size_t len, calib_level *lv) {
    char t[64], extra;
    if (len == 0 || len >= sizeof t)
        return -1;
    memcpy(t, s, len);
    t[len] = 0;
    const char *p = t;
    lv->burst = 0;
    lv->rounds = 1;
    if (!strncmp(p, "burst:", 6)) {
        lv->burst = 1;
        lv->rounds = CALIB_BURST_ROUNDS;
        p += 6;
    } else if (!strncmp(p, "spread:", 7)) {
        p += 7;
    }
    return sscanf(p, "%d@%lf%c", &lv->streams, &lv->step_ms, &extra) == 2 && lv->streams >= 1 &&
                   lv->streams <= 50000 && lv->step_ms > 0 && isfinite(lv->step_ms)
               ? 0
               : -1;
}

int calibrate_levels_parse(const char *s, calib_level **out, char *err, size_t errlen) {
    int n = 0;
    calib_level *lv = xmalloc((strlen(s) / 2 + 1) * sizeof *lv);
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        if (parse_level(p, len, &lv[n])) {
            snprintf(err, errlen,
                     "'%.*s' is not STREAMS@STEP_MS or burst:STREAMS@STEP_MS (e.g. 1000@10, "
                     "burst:1000@10)",
                     (int)len, p);
            free(lv);
            return -1;
        }
        n++;
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = lv;
    return n;
}

int calibrate_levels_check(const char *text, char *err, size_t errlen) {
    calib_level *lv;
    if (calibrate_levels_parse(text, &lv, err, errlen) < 0)
        return -1;
    free(lv);
    return 0;
}

static void default_save_path(char *buf, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, cap, "%s/servelab/calibration.json", xdg);
    else
        snprintf(buf, cap, "%s/.cache/servelab/calibration.json", home ? home : ".");
}

static void describe_placement(const calib_opts *o, char *buf, size_t n) {
    snprintf(buf, n, "simulator (%d thread%s) on CPU %s, client (%d thread%s) on CPU %s, %s%s%s",
             o->sim_threads > 1 ? o->sim_threads : 1, o->sim_threads > 1 ? "s" : "",
             o->sim_cpus ? o->sim_cpus : "any", o->threads > 1 ? o->threads : 1,
             o->threads > 1 ? "s" : "", o->client_cpus ? o->client_cpus : "any",
             o->realtime ? "both asked for SCHED_FIFO" : "normal priority",
             o->http_client ? ", --http-client " : "", o->http_client ? o->http_client : "");
}

/* Save the document (its directory made first); 1 when saved. */
static int save(json_t *doc, const char *path) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        mkdir_p(dir);
    }
    return json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) == 0;
}

static void output(const calib_session *s, const calib_result *res, json_t *doc,
                   const char *sentence, const char *placement, double took) {
    char path[PATH_MAX];
    if (s->save)
        snprintf(path, sizeof path, "%s", s->save);
    else
        default_save_path(path, sizeof path);
    int saved = save(doc, path);
    if (s->json) {
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        fprintf(s->out, "%s\n", text);
        free(text);
    } else {
        calibrate_print_table(s->out, res, s->o.n_levels);
        fprintf(s->out, "\n%s\n(%s; %.0f s; %s %s)\n", sentence, placement, took,
                saved ? "saved in" : "could not save", path);
    }
}

/* The scratch directory (or --keep's) into work[PATH_MAX]. */
static int make_work(const calib_session *s, char *work, char *err, int errlen) {
    if (s->keep) {
        mkdir(s->keep, 0755);
        snprintf(work, PATH_MAX, "%s", s->keep);
        return 0;
    }
    snprintf(work, PATH_MAX, "/tmp/servelab-calibrate-XXXXXX");
    if (mkdtemp(work))
        return 0;
    snprintf(err, errlen, "cannot create a scratch directory: %s", strerror(errno));
    return -1;
}

int calibrate_session(calib_session *s, char *err, int errlen) {
    calib_opts *o = &s->o;
    calib_level *custom = NULL;
    if (s->levels) {
        o->n_levels = calibrate_levels_parse(s->levels, &custom, err, (size_t)errlen);
        if (o->n_levels < 0)
            return -1;
    } else {
        o->n_levels = (int)(sizeof default_levels / sizeof *default_levels);
        custom = xmalloc(sizeof default_levels);
        memcpy(custom, default_levels, sizeof default_levels);
    }
    for (int i = 0; i < o->n_levels; i++)
        if (custom[i].burst && s->burst_rounds > 0)
            custom[i].rounds = s->burst_rounds;
    o->levels = custom;
    char work[PATH_MAX], sim_cpus[64], client_cpus[64], placement[256];
    if (make_work(s, work, err, errlen)) {
        free(custom);
        return -1;
    }
    o->work = work;
    o->quiet = s->json;
    if (!s->no_pin)
        calibrate_placement(o, sim_cpus, client_cpus);
    describe_placement(o, placement, sizeof placement);
    raise_fd_limit();
    calib_result *res = xcalloc((size_t)o->n_levels, sizeof *res);
    int64_t t0 = mono_us();
    int rc = calibrate_run(o, res, err, errlen);
    if (rc == 0) {
        double took = (mono_us() - t0) / 1e6;
        char sentence[1024];
        calibrate_sentence(sentence, sizeof sentence, res, o->n_levels);
        json_t *doc = json_pack("{s:o,s:o,s:s,s:s,s:f,s:i,s:o}", "tool", tool_info_json(), "host",
                                host_info_json(), "sentence", sentence, "placement", placement,
                                "took_s", took, "repeat", o->repeat < 1 ? 1 : o->repeat, "levels",
                                calibrate_json(res, o->n_levels));
        output(s, res, doc, sentence, placement, took);
        json_decref(doc);
    }
    if (!s->keep && remove_tree(work))
        notice_warn("could not remove %s: %s", work, strerror(errno));
    free(res);
    free(custom);
    return rc;
}
