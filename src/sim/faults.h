/* faults: `--fault SPEC` for the simulator, e.g.
 *   http429=0.05,http500=0.02,disconnect=0.02,malformed=0.01,stall=0.01
 * Each request draws at most one fault, by probability, from a seeded hash
 * of its id so the same run injects the same faults again. */
#ifndef SERVELAB_FAULTS_H
#define SERVELAB_FAULTS_H

#include <stdint.h>

typedef enum {
    FAULT_NONE = 0,
    FAULT_HTTP429,
    FAULT_HTTP500,
    FAULT_DISCONNECT, /* connection dropped halfway through the stream */
    FAULT_MALFORMED,  /* one chunk of invalid JSON halfway through */
    FAULT_STALL,      /* headers, then silence for stall_ms, then the answer */
    FAULT_COUNT
} fault_kind;

typedef struct fault_spec {
    double prob[FAULT_COUNT];
} fault_spec;

/* Parse SPEC; on error return -1 with a message in err. */
int fault_spec_parse(const char *spec, fault_spec *out, char *err, int errlen);
/* The fault for a request given a uniform draw in [0,1). */
fault_kind fault_pick(const fault_spec *f, double u);
const char *fault_name(fault_kind k);

#endif
