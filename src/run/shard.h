/* shard: `run --shard I/N`: one of N processes (on N machines, say) that
 * each send a part of one seeded schedule. Every shard computes the whole
 * schedule, the same on each (same seed, rate, count), and sends the
 * requests whose index is I mod N, under their global request ids, so the
 * parts merge (`servelab merge`) into exactly the single-process run's
 * rows. Interleaving, not a contiguous split: each shard then offers 1/N
 * of the rate over the whole window with the schedule's own pattern (a
 * rate plan's stages, a trace's bursts), where a contiguous split would
 * give shard 0 the start and shard N-1 the end, each at the full rate.
 *
 * `--shard auto` reads the rank and size from the job scheduler's
 * environment: Slurm (SLURM_PROCID, SLURM_NTASKS), Kubernetes Indexed Jobs
 * (JOB_COMPLETION_INDEX, with the size from --shard-count), Open MPI
 * (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), PMI (PMI_RANK, PMI_SIZE),
 * in that order. */
#ifndef SERVELAB_SHARD_H
#define SERVELAB_SHARD_H

#include <stddef.h>
#include <stdint.h>

typedef struct shard_spec {
    int index, count; /* 0 <= index < count; count 1: no sharding */
    char source[32];  /* "flag", "SLURM_PROCID", ... */
} shard_spec;

/* "I/N" (0 <= I < N <= 100000, each in digits: no sign, no spaces) or
 * "auto"; count_hint is --shard-count (0: none), needed with
 * JOB_COMPLETION_INDEX. 0, or -1 with one line in why (which variable is
 * missing or bad). `get` is getenv (a test's own). */
int shard_parse(const char *spec, int count_hint, char *(*get)(const char *), shard_spec *out,
                char *why, size_t whylen);

/* Keeps the requests of this shard: due[k] for every k with k % count ==
 * index, in order, compacted to the front of due; *indices (malloc'd) gets
 * each kept request's global index. Returns how many were kept. */
size_t shard_select(const shard_spec *s, int64_t *due, size_t n, uint32_t **indices);

#endif
