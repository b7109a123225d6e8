/* start_at: `run --start-at EPOCH|+S`: t=0 at one wall-clock instant, the
 * same on every machine whose clock agrees, so that shards started apart
 * (by Slurm, by a Kubernetes Job) begin their common schedule together.
 * The instant is taken on CLOCK_REALTIME once and turned into the
 * monotonic clock every timestamp uses (common/clock.h); meta.json records
 * the mapping and what the kernel says of the clock's error (adjtimex), so
 * a merged run can state how well its shards' clocks agreed. */
#ifndef SERVELAB_START_AT_H
#define SERVELAB_START_AT_H

#include <jansson.h>
#include <stdint.h>

/* The longest wait --start-at accepts. */
#define START_AT_MAX_WAIT_S 86400

/* EPOCH (seconds since 1970, decimals allowed) or +S (seconds from
 * now_unix_us, common/clock.h's wall_us()): the instant in microseconds since the epoch. 0, or -1
 * with one line in why (not a number, in the past, more than a day ahead). */
int start_at_parse(const char *spec, int64_t now_unix_us, int64_t *at_unix_us, char *why,
                   size_t whylen);
/* {"synchronized": bool, "est_error_us": N, "max_error_us": N} from
 * adjtimex, or {"synchronized": null, "why": ...} when it cannot be read. */
json_t *start_at_clock_json(void);

#endif
