/* shard: parsing --shard and keeping a shard's requests (see shard.h). */
#include "run/shard.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARD_MAX 100000

/* A whole number in [lo, hi], digits only; -1 when it is not one. Digits
 * only, since strtol (parse_int) would also take a sign and leading
 * spaces: " 1/2" or "+1/2" is a typo to refuse, not a shard to run. */
static long whole(const char *s, long lo, long hi) {
    long v;
    if (!s || !*s || strspn(s, "0123456789") != strlen(s) || parse_int(s, &v) || v < lo || v > hi)
        return -1;
    return v;
}

/* One scheduler's pair of variables: 1 found, 0 absent, -1 bad. */
static int from_env(char *(*get)(const char *), const char *rank_var, const char *size_var,
                    int size_hint, shard_spec *out, char *why, size_t whylen) {
    const char *rank = get(rank_var);
    if (!rank)
        return 0;
    const char *size = size_var ? get(size_var) : NULL;
    long n = size ? whole(size, 1, SHARD_MAX) : size_hint > 0 ? size_hint : -1;
    if (n < 0 && size_var)
        snprintf(why, whylen, "--shard auto: %s is '%s', but %s is %s", rank_var, rank, size_var,
                 size ? size : "not set");
    else if (n < 0)
        snprintf(why, whylen,
                 "--shard auto: %s is '%s', but the shard count is unknown: give --shard-count N "
                 "(a Kubernetes Indexed Job's completions)",
                 rank_var, rank);
    if (n < 0)
        return -1;
    long i = whole(rank, 0, n - 1);
    if (i < 0) {
        snprintf(why, whylen, "--shard auto: %s is '%s', expected 0 to %ld", rank_var, rank, n - 1);
        return -1;
    }
    out->index = (int)i;
    out->count = (int)n;
    snprintf(out->source, sizeof out->source, "%s", rank_var);
    return 1;
}

int shard_parse(const char *spec, int count_hint, char *(*get)(const char *), shard_spec *out,
                char *why, size_t whylen) {
    memset(out, 0, sizeof *out);
    out->count = 1;
    if (!strcmp(spec, "auto")) {
        static const char *const vars[][2] = {{"SLURM_PROCID", "SLURM_NTASKS"},
                                              {"JOB_COMPLETION_INDEX", NULL},
                                              {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                              {"PMI_RANK", "PMI_SIZE"}};
        for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
            int rc = from_env(get, vars[k][0], vars[k][1], count_hint, out, why, whylen);
            if (rc)
                return rc > 0 ? 0 : -1;
        }
        snprintf(why, whylen,
                 "--shard auto: no rank in the environment (SLURM_PROCID, JOB_COMPLETION_INDEX, "
                 "OMPI_COMM_WORLD_RANK or PMI_RANK): give --shard I/N");
        return -1;
    }
    const char *slash = strchr(spec, '/');
    char first[32];
    long i = -1, n = -1;
    if (slash && (size_t)(slash - spec) < sizeof first) {
        snprintf(first, sizeof first, "%.*s", (int)(slash - spec), spec);
        n = whole(slash + 1, 1, SHARD_MAX);
        i = n > 0 ? whole(first, 0, n - 1) : -1;
    }
    if (i < 0 || n < 0) {
        snprintf(why, whylen, "expected I/N with 0 <= I < N <= %d (like 0/4), or auto, got '%s'",
                 SHARD_MAX, spec);
        return -1;
    }
    out->index = (int)i;
    out->count = (int)n;
    snprintf(out->source, sizeof out->source, "flag");
    return 0;
}

size_t shard_select(const shard_spec *s, int64_t *due, size_t n, uint32_t **indices) {
    size_t kept = 0;
    uint32_t *idx = xmalloc((n / (size_t)s->count + 1) * sizeof *idx);
    for (size_t k = (size_t)s->index; k < n; k += (size_t)s->count) {
        due[kept] = due[k];
        idx[kept++] = (uint32_t)k;
    }
    *indices = idx;
    return kept;
}
