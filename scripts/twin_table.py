#!/usr/bin/env python3
"""twin_table.py: the twin study's plumbing (scripts/twin_predict.sh).

    scripts/twin_table.py trace RUN_DIR          # a run's arrivals and lengths as a replay trace
    scripts/twin_table.py table STUDY.tsv        # the comparison tables, Markdown

`trace` prints one JSON line per request of RUN_DIR/requests.csv, in the
plain JSONL replay format (docs/replay.md): the instant it was due
(scheduled_ms), the prompt tokens the server counted and the output tokens
it sent, so that `servelab predict --replay` puts the same requests on the
twin at the same instants. A request that failed before the server counted
its tokens has no lengths to give; it is left out and counted on stderr.

`table` reads the study's pairs (one line each: STUDY, LABEL, MEASURED run,
PREDICTED run, tab-separated), asks `servelab compare MEASURED PREDICTED
--json` for every figure (computed by servelab's report code from the rows,
with its 95% bootstrap interval of the relative difference, each side's
requests resampled), and prints, per study, every figure measured beside
predicted, the error and its interval, and whether the error is inside the
measurement's own noise (compare's "no significant change"); then the
summary by kind of figure against the goals. No statistic is computed
here: the script only picks and formats. $SERVELAB names the binary.
Python 3 standard library only.
"""
import csv
import json
import os
import subprocess
import sys

FIGURES = [
    ("ttft_p50", "TTFT p50", "ms", "p50"),
    ("ttft_p95", "TTFT p95", "ms", "tail"),
    ("ttft_p99", "TTFT p99", "ms", "tail"),
    ("tpot_p50", "TPOT p50", "ms", "p50"),
    ("tpot_p95", "TPOT p95", "ms", "tail"),
    ("tpot_p99", "TPOT p99", "ms", "tail"),
    ("e2e_p50", "E2E p50", "ms", "p50"),
    ("e2e_p95", "E2E p95", "ms", "tail"),
    ("e2e_p99", "E2E p99", "ms", "tail"),
    ("output_tokens_per_s", "output tok/s", "", "rate"),
]
GOALS = {"p50": 5.0, "tail": 10.0, "rate": 3.0}
KIND_NAMES = {"p50": "p50s (TTFT, TPOT, E2E)", "tail": "p95 and p99", "rate": "output tokens/s"}


def trace(run):
    left_out = 0
    rows = []
    with open(os.path.join(run, "requests.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if not r["prompt_tokens"] or not r["output_tokens"] or int(r["output_tokens"]) < 1:
                left_out += 1
                continue
            rows.append((float(r["scheduled_ms"]), int(r["prompt_tokens"]), int(r["output_tokens"])))
    rows.sort()
    for t, p, o in rows:
        print(json.dumps({"timestamp_ms": round(t, 3), "input_tokens": p, "output_tokens": o}))
    if left_out:
        print("twin_table.py: %s: %d requests without lengths left out" % (run, left_out), file=sys.stderr)


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "ms":
        return "%.0f" % v if abs(v) >= 100 else "%.1f" % v
    return "%.1f" % v


def compare(measured, predicted):
    binary = os.environ.get("SERVELAB", "./servelab")
    out = subprocess.run([binary, "compare", measured, predicted, "--json"], capture_output=True,
                         text=True)
    if out.returncode not in (0, 1):
        sys.exit("twin_table.py: servelab compare %s %s: %s" % (measured, predicted, out.stderr.strip()))
    doc = json.loads(out.stdout)
    return doc["runs"][0]["figures"], doc["runs"][0]["base_requests"]


def table(pairs_file):
    studies = []
    with open(pairs_file) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                study, label, measured, predicted = line.rstrip("\n").split("\t")
                if not studies or studies[-1][0] != study:
                    studies.append((study, []))
                studies[-1][1].append((label, measured, predicted))
    summary = {}
    for study, runs in studies:
        print("#### %s\n" % study)
        print("| run | requests | figure | measured | twin | error | 95% interval | |")
        print("| --- | ---: | --- | ---: | ---: | ---: | --- | --- |")
        for label, measured, predicted in runs:
            figs, n = compare(measured, predicted)
            for key, name, unit, kind in FIGURES:
                f = figs.get(key)
                if not f or f.get("base") is None or f.get("new") is None:
                    continue
                err, ci = f["change_pct"], f.get("ci_pct")
                inside = f["verdict"] == "no significant change"
                mark = "within noise" if inside else ""
                print("| %s | %d | %s | %s | %s | %+.1f%% | %s | %s |" % (
                    label, n, name, fmt(f["base"], unit), fmt(f["new"], unit), err,
                    "%+.1f%% to %+.1f%%" % (ci[0], ci[1]) if ci else "-", mark))
                summary.setdefault((study, kind), []).append((abs(err), inside))
        print()
    print("#### Summary\n")
    print("| study | figures | goal | median error | worst error | within goal | within noise |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for study, _ in studies:
        for kind in ("p50", "tail", "rate"):
            v = summary.get((study, kind))
            if not v:
                continue
            errs = sorted(e for e, _ in v)
            mid = len(errs) // 2
            median = errs[mid] if len(errs) % 2 else (errs[mid - 1] + errs[mid]) / 2
            print("| %s | %s | %.0f%% | %.1f%% | %.1f%% | %d of %d | %d of %d |" % (
                study, KIND_NAMES[kind], GOALS[kind], median, errs[-1],
                sum(e <= GOALS[kind] for e in errs), len(errs), sum(i for _, i in v), len(v)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "trace":
        trace(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
