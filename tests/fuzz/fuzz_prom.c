/* fuzz_prom: libFuzzer target for the Prometheus text parser
 * (monitor/prom.h), which reads a server's /metrics page.
 *
 * The input is the page (not NUL-terminated). Every sample handed back must
 * be well formed: a non-empty name, at most PROM_MAX_LABELS labels with
 * distinct non-empty names, one of the five type strings. Its labels are
 * rendered with prom_labels_format into a roomy and a tiny buffer, which
 * must agree on the length and on the prefix. Samples plus bad lines never
 * exceed the page's lines, and parsing the page twice gives the same
 * samples. */
#include "fuzz_common.h"
#include "monitor/prom.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct seen {
    int samples;
    uint64_t hash;
} seen;

static int known_type(const char *t) {
    static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (t == types[i] || !strcmp(t, types[i]))
            return 1;
    return 0;
}

static void on_sample(void *ud, const prom_sample *s) {
    seen *v = ud;
    size_t nl = strnlen(s->name, sizeof s->name);
    FUZZ_CHECK(nl > 0 && nl < sizeof s->name);
    FUZZ_CHECK(s->n_labels >= 0 && s->n_labels <= PROM_MAX_LABELS);
    FUZZ_CHECK(s->type && known_type(s->type));
    for (int i = 0; i < s->n_labels; i++) {
        const prom_label *l = &s->labels[i];
        size_t ln = strnlen(l->name, sizeof l->name);
        FUZZ_CHECK(ln > 0 && ln < sizeof l->name);
        FUZZ_CHECK(strnlen(l->value, sizeof l->value) < sizeof l->value);
        FUZZ_CHECK(prom_label_get(s, l->name) == l->value); /* names are distinct */
    }
    FUZZ_CHECK(prom_label_get(s, "__name__") == NULL);

    static char big[PROM_MAX_LABELS * (64 + 2 * 256 + 4) + 1];
    char tiny[7];
    size_t n = prom_labels_format(s, big, sizeof big);
    FUZZ_CHECK(n < sizeof big && strlen(big) == n);
    FUZZ_CHECK(prom_labels_format(s, tiny, sizeof tiny) == n);
    FUZZ_CHECK(strlen(tiny) == (n < sizeof tiny ? n : sizeof tiny - 1));
    FUZZ_CHECK(!strncmp(tiny, big, strlen(tiny)));
    FUZZ_CHECK(prom_labels_format(s, NULL, 0) == n);

    v->samples++;
    v->hash = fuzz_hash(v->hash, s->name, nl);
    v->hash = fuzz_hash(v->hash, big, n);
    if (!isnan(s->value))
        v->hash = fuzz_hash(v->hash, &s->value, sizeof s->value);
    v->hash = fuzz_hash(v->hash, &s->timestamp_ms, sizeof s->timestamp_ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    seen a = {0}, b = {0};
    int bad = -1, first_bad = -1;
    int n = prom_parse((const char *)data, size, on_sample, &a, &bad, &first_bad);
    FUZZ_CHECK(n == a.samples);
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (size && data[size - 1] != '\n')
        lines++;
    FUZZ_CHECK(bad >= 0 && (size_t)n + (size_t)bad <= lines);
    FUZZ_CHECK((bad == 0) == (first_bad == 0));
    FUZZ_CHECK(first_bad >= 0 && (size_t)first_bad <= lines);

    FUZZ_CHECK(prom_parse((const char *)data, size, on_sample, &b, NULL, NULL) == n);
    FUZZ_CHECK(a.hash == b.hash);
    FUZZ_CHECK(prom_parse((const char *)data, size, NULL, NULL, NULL, NULL) == n);
    return 0;
}
