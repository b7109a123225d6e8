/* slo: the service-level objective a run, a capacity search and a report
 * are judged by, with its whole interface: up to four bounds on a
 * request's latencies (TTFT, TPOT, E2E from sending, and TTFA, the time to
 * the first answer token of a reasoning model), each stated or not.
 *
 * One text form is read everywhere, on the command line (`--slo`) and in a
 * campaign (`slo: "ttft=750ms,tpot=100ms"`): NAME=DURATION pairs joined by
 * commas, each bound at most once, every duration with its unit (a bare
 * 500 reads as ms to some and s to others, so it is refused). A campaign
 * also takes the older map form (`slo: {ttft_ms: 750, tpot: 100ms}`).
 * slo_format writes the text form back, and slo_parse reads what it wrote
 * to the same bounds. The human form ("TTFT <= 750 ms, TPOT <= 40 ms") is
 * what sentences and reports say; the JSON form is the object under "slo"
 * in summary.json and capacity.json. */
#ifndef SERVELAB_MODEL_SLO_H
#define SERVELAB_MODEL_SLO_H

#include "common/yamlread.h"

#include <jansson.h>
#include <stddef.h>

typedef struct slo_spec {
    double ttft_ms, tpot_ms, e2e_ms; /* <= 0: not stated */
    double ttfa_ms;                  /* time to the first answer token (after reasoning) */
} slo_spec;

/* Bound b is 0 ttft, 1 tpot, 2 e2e, 3 ttfa, in that order everywhere
 * (text, JSON, a miss's bit 1 << b). */
#define SLO_BOUNDS 4
/* A request's misses (analysis/summary.h's request_slo_misses): it failed. */
#define SLO_MISSED_FAILED (1 << SLO_BOUNDS)

/* Any bound stated. */
int slo_has_bound(const slo_spec *slo);
/* Bound b in ms (<= 0: not stated). */
double slo_bound_ms(const slo_spec *slo, int b);
/* "ttft", "tpot", "e2e" or "ttfa" for bound 0, 1, 2, 3 (else "ttft"). */
const char *slo_bound_name(int b);

/* The text form into *out (every bound not named is 0). 0, or -1 with
 * "--slo: ..." in err: a pair without a unit, an unknown bound, one given
 * twice. */
int slo_parse(const char *text, slo_spec *out, char *err, int errlen);
/* A campaign's value of key k: the text form (replaces every bound) or a
 * map of bounds in ms (ttft_ms: 750) or as durations (ttft: 750ms), which
 * sets those bounds over what *slo holds. 0, or -1 with y's error at the
 * key. */
int slo_read_yaml(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                  slo_spec *slo);

/* The text form, "ttft=750ms,tpot=100ms" ("" when nothing is stated);
 * slo_parse reads it back to the same bounds. */
void slo_format(const slo_spec *slo, char *buf, size_t n);
/* "TTFT <= 750 ms" for bound b; whole seconds from 10 s up: "E2E <= 30 s". */
void slo_bound_human(const slo_spec *slo, int b, char *buf, size_t n);
/* Every stated bound in that form: "TTFT <= 750 ms, TPOT <= 40 ms". */
void slo_human(const slo_spec *slo, char *buf, size_t n);

/* The JSON object of the bounds, in ms. SLO_JSON_STATED: only the stated
 * ones (summary.json); SLO_JSON_THREE: ttft_ms, tpot_ms and e2e_ms always
 * (null when not stated) and ttfa_ms when stated (capacity.json, whose
 * older readers know three bounds). */
enum { SLO_JSON_STATED, SLO_JSON_THREE };
json_t *slo_json(const slo_spec *slo, int form);
/* The bounds of such an object (any key missing, null or <= 0: not
 * stated; not an object: none). */
void slo_from_json(const json_t *j, slo_spec *slo);

#endif
