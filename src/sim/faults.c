/* faults: parsing of the fault spec and the per-request pick. */
#include "sim/faults.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *names[FAULT_COUNT] = {"",           "http429",   "http500",
                                         "disconnect", "malformed", "stall"};

const char *fault_name(fault_kind k) {
    return (k > 0 && k < FAULT_COUNT) ? names[k] : "";
}

int fault_spec_parse(const char *spec, fault_spec *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    char *copy = xstrdup(spec), *save = NULL;
    double total = 0;
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(err, errlen, "--fault: '%s' is not NAME=PROBABILITY", item);
            rc = -1;
            break;
        }
        *eq = 0;
        int k = 1;
        while (k < FAULT_COUNT && strcmp(names[k], item))
            k++;
        double p;
        if (k == FAULT_COUNT) {
            snprintf(err, errlen,
                     "--fault: unknown fault '%s' (http429, http500, disconnect, malformed, stall)",
                     item);
            rc = -1;
            break;
        }
        if (parse_double(eq + 1, &p) || p < 0 || p > 1) {
            snprintf(err, errlen, "--fault: probability of %s must be in [0,1], got '%s'", item,
                     eq + 1);
            rc = -1;
            break;
        }
        out->prob[k] = p;
        total += p;
    }
    if (!rc && total > 1.0 + 1e-9) {
        snprintf(err, errlen, "--fault: probabilities add up to %.3f, more than 1", total);
        rc = -1;
    }
    free(copy);
    return rc;
}

fault_kind fault_pick(const fault_spec *f, double u) {
    double acc = 0;
    for (int k = 1; k < FAULT_COUNT; k++) {
        acc += f->prob[k];
        if (u < acc)
            return (fault_kind)k;
    }
    return FAULT_NONE;
}
