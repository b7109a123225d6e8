#!/usr/bin/env python3
"""fit_profile.py: the figures of the simulator's cpu-1b-2c profile, derived
from the committed llama.cpp rows (results/llamacpp-cpu/):

    scripts/fit_profile.py [RESULTS]

- prefill per token: llama.cpp's own prompt_ms / prompt_n of every request
  of the context experiment (one request at a time, so nothing else shares
  the step), their median per prompt length and over all;
- the decode step against the batch: in the load and slots experiments,
  every gap between two consecutive tokens of one stream (chunks.csv) that
  no prompt was being computed in (no request of the run was between its
  send and its first token), grouped by how many streams were decoding
  then (between their first and last token); the median gap per batch
  size; a least-squares line through those medians (base + per sequence
  x batch), each median weighted by its count; and the line through the
  medians at 1 and at 4 decoding (the load experiment's 4 slots idle and
  full), which is what the profile uses when the step is not linear.

Prints one line per figure. Python 3 standard library only.
"""
import csv
import glob
import os
import statistics
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def prefill(root):
    per_len, every = {}, []
    for p in sorted(glob.glob(os.path.join(root, "context", "*", "rep-*", "requests.csv"))):
        run = p.split(os.sep)[-3]
        for r in rows(p):
            if r["error"] or not r["server_prompt_n"] or not r["server_prompt_ms"]:
                continue
            n, ms = float(r["server_prompt_n"]), float(r["server_prompt_ms"])
            if n > 0:
                per_len.setdefault(run, []).append(ms / n)
                every.append(ms / n)
    for run in sorted(per_len):
        print("prefill %s: %.2f ms/token (median of %d)" % (run, statistics.median(per_len[run]),
                                                            len(per_len[run])))
    if every:
        print("prefill all: %.2f ms/token (median of %d)" % (statistics.median(every), len(every)))


def decode_gaps(rep_dir, by_batch):
    reqs = [r for r in rows(os.path.join(rep_dir, "requests.csv")) if not r["error"]]
    chunks = {}
    for c in rows(os.path.join(rep_dir, "chunks.csv")):
        chunks.setdefault(c["request_id"], []).append(float(c["t_ms"]))
    spans = [(float(r["first_token_ms"]), float(r["last_token_ms"])) for r in reqs]
    prefills = [(float(r["sent_ms"]), float(r["first_token_ms"])) for r in reqs]
    for r in reqs:
        ts = sorted(chunks.get(r["request_id"], []))
        for a, b in zip(ts, ts[1:]):
            if any(s < b and f > a for s, f in prefills):
                continue  # a prompt was computed in this gap
            batch = sum(1 for s, e in spans if s <= a and e >= b)
            by_batch.setdefault(batch, []).append(b - a)


def decode(root):
    by_batch = {}
    for exp in ("load", "slots"):
        for d in sorted(glob.glob(os.path.join(root, exp, "*", "rep-*"))):
            if os.path.exists(os.path.join(d, "chunks.csv")):
                decode_gaps(d, by_batch)
    pts = []
    for b in sorted(by_batch):
        m = statistics.median(by_batch[b])
        pts.append((b, m, len(by_batch[b])))
        print("decode step, %d decoding: %.1f ms (median of %d gaps)" % (b, m, len(by_batch[b])))
    if len(pts) >= 2:
        w = sum(n for _, _, n in pts)
        mx = sum(b * n for b, _, n in pts) / w
        my = sum(m * n for _, m, n in pts) / w
        sxx = sum(n * (b - mx) ** 2 for b, _, n in pts)
        sxy = sum(n * (b - mx) * (m - my) for b, m, n in pts)
        slope = sxy / sxx
        print("decode step fit: %.1f ms + %.1f ms a sequence (least squares, weighted)" %
              (my - slope * mx, slope))
        (b1, m1, _), (bk, mk, _) = pts[0], [p for p in pts if p[0] <= 4][-1]
        per = (mk - m1) / (bk - b1)
        print("decode step through %d and %d decoding: %.1f ms + %.1f ms a sequence" %
              (b1, bk, m1 - per * b1, per))


def main(argv):
    root = argv[0] if argv else "results/llamacpp-cpu"
    prefill(root)
    decode(root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
