/* vllm_import: vLLM's per-request arrays back into rows. For request i:
 * its arrival (t=0 is the earliest) is start_times[i] - queue_times[i]
 * (queue_times is the wait for vLLM's concurrency cap; 0 without it), it
 * was sent at start_times[i], its first chunk came ttfts[i] later, each
 * further chunk itls[i][k] after the one before, and the last chunk at
 * latencies[i] (vLLM's latency ends there, so the row's end is its last
 * chunk). It succeeded when errors[i] is "" and it has a latency; a failure
 * is classed by its text (a timeout, a refused connection, a dropped one,
 * else an HTTP status: vLLM keeps only the reason). vLLM keeps no token
 * count per chunk, so each chunk's gap is one ITL sample (vLLM's own ITL);
 * the window's output tokens spread each request's tokens evenly over its
 * chunks. */
#include "report/vllm_import.h"
#include "model/record.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int vllm_import_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *arrays[] = {"start_times", "ttfts",      "itls",  "latencies",
                               "output_lens", "input_lens", "errors"};
enum { A_START, A_TTFT, A_ITL, A_LAT, A_OUT, A_IN, A_ERR, A_N };

static int error_class(const char *e) {
    int own = err_class_parse(e); /* a file servelab wrote: its own class names */
    if (own > 0)
        return own;
    if (!strncmp(e, "http ", 5))
        return ERR_HTTP;
    if (strstr(e, "imeout"))
        return ERR_TIMEOUT;
    if (strstr(e, "onnect") && !strstr(e, "isconnect"))
        return ERR_CONNECT;
    if (strstr(e, "isconnect") || strstr(e, "Payload") || strstr(e, "Traceback"))
        return ERR_DISCONNECT;
    if (strstr(e, "valid chunk"))
        return ERR_MALFORMED;
    return ERR_HTTP;
}

static double num(json_t *a, size_t i) {
    json_t *v = json_array_get(a, i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The settings a file can hold (vLLM writes them from its options): a
 * positive rate or "inf", a positive concurrency or null, a positive
 * burstiness or null. The name of the first that is not, or NULL. */
static const char *bad_settings(json_t *doc) {
    json_t *rate = json_object_get(doc, "request_rate"),
           *conc = json_object_get(doc, "max_concurrency");
    json_t *b = json_object_get(doc, "burstiness");
    if (rate && !(json_is_string(rate) && !strcmp(json_string_value(rate), "inf")) &&
        !(json_is_number(rate) && json_number_value(rate) > 0 && json_number_value(rate) < 1e9))
        return "request_rate";
    if (conc && !json_is_null(conc) && !(json_is_integer(conc) && json_integer_value(conc) > 0))
        return "max_concurrency";
    if (b && !json_is_null(b) &&
        !(json_is_number(b) && json_number_value(b) > 0 && json_number_value(b) < 1e9))
        return "burstiness";
    return NULL;
}

/* A meta object from the file's settings, in meta.json's shape where the
 * report reads one. Where it was measured a vLLM file cannot say: its
 * "fixture" is null (unknown), not false. */
static json_t *meta_of(json_t *doc, const char *path) {
    json_t *rate = json_object_get(doc, "request_rate"),
           *conc = json_object_get(doc, "max_concurrency");
    json_t *b = json_object_get(doc, "burstiness"), *model = json_object_get(doc, "model_id");
    const char *backend = json_string_value(json_object_get(doc, "backend"));
    double shape = json_number_value(b);
    json_t *cfg = json_pack("{s:o,s:s,s:s,s:O,s:I}", "rate",
                            json_is_number(rate) ? json_incref(rate) : json_string("inf"), "api",
                            backend && strstr(backend, "chat") ? "chat" : "completions", "arrival",
                            !json_is_number(b) ? "constant"
                            : shape == 1       ? "poisson"
                                               : "gamma",
                            "model", json_is_string(model) ? model : json_null(), "concurrency",
                            (json_int_t)(json_is_integer(conc) ? json_integer_value(conc) : 0));
    if (json_is_number(b) && shape > 0 && shape != 1)
        json_object_set_new(cfg, "burstiness", json_real(1 / sqrt(shape))); /* a gamma's CV */
    json_t *meta = json_pack(
        "{s:o,s:{s:s,s:s},s:{s:O},s:n}", "config", cfg, "tool", "other_client",
        "vLLM's bench serve (its result file)", "file", path, "vllm", "date",
        json_object_get(doc, "date") ? json_object_get(doc, "date") : json_null(), "fixture");
    return meta;
}

/* Request i as a row, its chunk gaps as ITL samples. */
static void add_request(json_t **a, size_t i, double t0, int cls, run_rows *rows) {
    req_rec r = req_rec_unknown();
    double start = num(a[A_START], i), queue = num(a[A_N], i);
    r.cls = (int16_t)cls;
    r.scheduled_ms = (start - (isnan(queue) ? 0 : queue) - t0) * 1000;
    r.sent_ms = (start - t0) * 1000;
    const char *e = json_string_value(json_array_get(a[A_ERR], i));
    double ttft = num(a[A_TTFT], i), lat = num(a[A_LAT], i);
    r.prompt_tokens = (int32_t)fmax(0, fmin(INT32_MAX, num(a[A_IN], i)));
    r.output_tokens = (int32_t)fmax(0, fmin(INT32_MAX, num(a[A_OUT], i)));
    if (e && e[0]) {
        r.error = (uint8_t)error_class(e);
        r.end_ms = r.sent_ms;
    } else if (!(lat > 0) || !(ttft >= 0)) {
        r.error = ERR_MALFORMED;
        r.end_ms = r.sent_ms;
    } else {
        r.first_ms = r.sent_ms + ttft * 1000;
        r.last_ms = r.end_ms = r.sent_ms + lat * 1000;
        json_t *gaps = json_array_get(a[A_ITL], i);
        if (json_array_size(gaps)) /* where this request's gaps start (compare resamples them) */
            rows_start_itl_request(rows);
        for (size_t k = 0; k < json_array_size(gaps); k++)
            rows_add_itl(rows, (float)(num(gaps, k) * 1000));
    }
    rows_add(rows, &r);
}

/* Output tokens streamed by the last arrival, each request's spread evenly
 * over its chunks. */
static double window_tokens(json_t **a, size_t n, double t0, double last_arrival) {
    double tok = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = json_string_value(json_array_get(a[A_ERR], i));
        if (e && e[0])
            continue;
        json_t *gaps = json_array_get(a[A_ITL], i);
        double t = num(a[A_START], i) - t0 + num(a[A_TTFT], i);
        double per = num(a[A_OUT], i) / (double)(json_array_size(gaps) + 1);
        for (size_t k = 0; k <= json_array_size(gaps) && t <= last_arrival; k++) {
            tok += per;
            t += num(gaps, k);
        }
    }
    return tok;
}

/* A time in seconds a run can hold: finite, not negative, under a year. */
static int time_ok(double v) {
    return isfinite(v) && v >= 0 && v < 365 * 86400.0;
}

/* A token count: a whole number in [0, INT32_MAX]. */
static int count_ok(json_t *v) {
    return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= INT32_MAX;
}

/* Request i's values, as vLLM writes them: NULL, or the first key whose
 * value does not read ("ttfts" also when it exceeds latencies). */
static const char *bad_request(json_t **a, size_t i) {
    json_t *e = json_array_get(a[A_ERR], i), *gaps = json_array_get(a[A_ITL], i);
    if (!json_is_string(e))
        return "errors";
    if (!count_ok(json_array_get(a[A_IN], i)))
        return "input_lens";
    if (!count_ok(json_array_get(a[A_OUT], i)))
        return "output_lens";
    double start = num(a[A_START], i), ttft = num(a[A_TTFT], i), lat = num(a[A_LAT], i);
    if (!isfinite(start) || start < 0 || start > 1e10) /* its perf_counter: seconds since boot */
        return "start_times";
    if (!time_ok(ttft))
        return "ttfts";
    if (!time_ok(lat))
        return "latencies";
    if (!json_is_array(gaps))
        return "itls";
    double sum = 0;
    for (size_t k = 0; k < json_array_size(gaps); k++) {
        double g = num(gaps, k);
        if (!time_ok(g))
            return "itls";
        sum += g;
    }
    if (!json_string_value(e)[0] && (ttft > lat || ttft + sum > lat * (1 + 1e-9) + 1e-6))
        return "ttfts"; /* the first chunk and the gaps after it end past the latency */
    if (a[A_N] && !time_ok(num(a[A_N], i)))
        return "queue_times";
    return NULL;
}

int vllm_import(const char *path, int part, run_rows *rows, run_files *files, char *err,
                int errlen) {
    memset(files, 0, sizeof *files);
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_DECODE_ANY, &je);
    if (!doc) {
        snprintf(err, errlen, "%s:%d: not JSON: %s", path, je.line, je.text);
        return -1;
    }
    json_t *a[A_N + 1];
    size_t n = json_array_size(json_object_get(doc, "start_times"));
    for (int k = 0; k < A_N; k++) {
        a[k] = json_object_get(doc, arrays[k]);
        if (!json_is_array(a[k]) || json_array_size(a[k]) != n || !n) {
            snprintf(err, errlen,
                     "%s: not a result of vLLM's bench serve with --save-detailed (%s is %s)", path,
                     arrays[k], !a[k] ? "missing" : "not one entry per request");
            json_decref(doc);
            return -1;
        }
    }
    const char *bad_setting = bad_settings(doc);
    if (bad_setting) {
        snprintf(err, errlen, "%s: %s does not read as vLLM writes it", path, bad_setting);
        json_decref(doc);
        return -1;
    }
    a[A_N] = json_object_get(doc, "queue_times");
    if (a[A_N] && (!json_is_array(a[A_N]) || json_array_size(a[A_N]) != n)) {
        snprintf(err, errlen, "%s: queue_times is not one entry per request", path);
        json_decref(doc);
        return -1;
    }
    double t0 = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const char *bad = bad_request(a, i);
        if (bad) {
            snprintf(err, errlen, "%s: request %zu's %s does not read as vLLM writes it", path, i,
                     bad);
            json_decref(doc);
            return -1;
        }
        double s0 = num(a[A_START], i), q = a[A_N] ? num(a[A_N], i) : 0;
        t0 = fmin(t0, s0 - q);
        last = fmax(last, s0 - q);
    }
    int cls = 0;
    while (cls < rows->n_classes && strcmp(rows->classes[cls], "vllm"))
        cls++;
    if (cls == rows->n_classes && cls < 32)
        rows->classes[rows->n_classes++] = xstrdup("vllm");
    size_t before = rows->n;
    for (size_t i = 0; i < n; i++)
        add_request(a, i, t0, cls < 32 ? cls : 31, rows);
    for (size_t i = before; i < rows->n; i++)
        rows->r[i].part = (uint16_t)part;
    rows->window_output_tokens += window_tokens(a, n, t0, last - t0);
    files->meta = meta_of(doc, path);
    files->has_summary = 1;
    files->has_chunks = 1;
    json_decref(doc);
    return 0;
}
