#!/usr/bin/env python3
"""Benchmark: `servelab capacity` against the exact answer, cell by cell.

Each cell is a workload, an SLO and an engine whose long-run capacity
`servelab predict --capacity` computes exactly (bisection over virtual runs
of --capacity-requests requests with the simulator's engine). Then SEEDS
seeded searches run against the same engine, and the bench prints, per
cell, how often the 95% interval covered the exact answer, the answer's
error (min, median, max), whether each was confirmed, and how long the
searches would take (the sum of their probes' run lengths).

By default the searches run with `capacity --virtual` (the probes on the
engine in virtual time: the same search, decided from the same rows, at
the speed of the CPU), with --max-time counted in virtual time as the real
search would count it. Cells I-M are soft knees: bursty arrivals, a TPOT
bound alone, one slot, a strict goal, closed loop with answer lengths the
simulator draws from its seed. With --real a search runs in real time against a
fresh `servelab sim` per probe; --speedup K then divides the engine's step
costs by K and the cell's SLO by K and multiplies its rates by K (the
queueing is the same, scaled), so that twenty real searches fit in an hour.

  python3 bench/capacity_matrix.py [--seeds N] [--cells A,B,...] [--real]
                                   [--speedup K] [--truth-requests N] [--max-time S]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("SERVELAB", "./servelab")

# 8 slots x 50 tokens x 10 ms: 16 req/s at most (the M/D/8 queue)
MD8 = "--profile tiny --max-num-seqs 8 --decode-base-ms 10 --decode-per-seq-ms 0 --prefill-per-token-ms 0"
SHORT = ["--prompts", "random:8:50", "--max-tokens", "50", "--ignore-eos"]
# long answers with prefill costs: 512-token prompts, 400 tokens out, 16 slots,
# steps of 8 ms + 0.25 ms a sequence + 0.02 ms a prompt token
LONG_ENGINE = ("--profile tiny --max-num-seqs 16 --decode-base-ms 8 --decode-per-seq-ms 0.25 "
               "--prefill-per-token-ms 0.02")
LONG = ["--prompts", "random:512:400", "--max-tokens", "400", "--ignore-eos"]

CELLS = {
    "A": ("poisson, TTFT <= 5 s, 50 tokens", MD8, SHORT, "ttft=5s", [], "rate"),
    "B": ("poisson, TTFT <= 1 s, 50 tokens", MD8, SHORT, "ttft=1s", [], "rate"),
    "C": ("poisson, TTFT <= 200 ms, 50 tokens", MD8, SHORT, "ttft=200ms", [], "rate"),
    "D": ("gamma 0.5, TTFT <= 1 s, 50 tokens", MD8, SHORT, "ttft=1s",
          ["--arrival", "gamma", "--burstiness", "0.5"], "rate"),
    "E": ("gamma 0.5, TTFT <= 5 s, 50 tokens", MD8, SHORT, "ttft=5s",
          ["--arrival", "gamma", "--burstiness", "0.5"], "rate"),
    "F": ("poisson, TTFT <= 1 s, 400 tokens + prefill", LONG_ENGINE, LONG, "ttft=1s", [], "rate"),
    "G": ("poisson, TTFT <= 200 ms, 400 tokens + prefill", LONG_ENGINE, LONG, "ttft=200ms", [],
          "rate"),
    "H": ("closed loop, TTFT <= 1 s, 50 tokens", MD8, SHORT, "ttft=1s", [], "concurrency"),
    # soft knees: the SLO binds well below saturation, misses come in bursts
    "I": ("gamma CV 2, TTFT <= 1 s, 50 tokens", MD8, SHORT, "ttft=1s",
          ["--arrival", "gamma", "--burstiness", "2"], "rate", ["--start-rate", "0.25"]),
    "J": ("poisson, TPOT <= 11 ms alone, 400 tokens + prefill", LONG_ENGINE, LONG, "tpot=11ms", [],
          "rate"),
    "K": ("poisson, one slot, TTFT <= 1 s, 50 tokens", MD8.replace("--max-num-seqs 8",
                                                                    "--max-num-seqs 1"),
          SHORT, "ttft=1s", [], "rate", ["--start-rate", "0.1"]),
    "L": ("poisson, goal 0.999, TTFT <= 1 s, 50 tokens", MD8, SHORT, "ttft=1s",
          ["--goal", "0.999"], "rate"),
    "M": ("closed loop, TTFT <= 1 s, drawn answer lengths (the simulator's seed)", MD8,
          ["--prompts", "random:8:50", "--max-tokens", "50"], "ttft=1s", [], "concurrency"),
}


def scaled_slo(slo, k):
    """ttft=5s at speedup 10 -> ttft=500ms"""
    out = []
    for part in slo.split(","):
        key, val = part.split("=")
        ms = float(val[:-2]) if val.endswith("ms") else float(val[:-1]) * 1000
        out.append("%s=%gms" % (key, ms / k))
    return ",".join(out)


def truth(cell, requests, work):
    _, engine, prompts, slo, arrival, by = CELLS[cell][:6]
    out = os.path.join(work, "truth-" + cell)
    cmd = [BIN, "predict", "--capacity", "--quiet", "--capacity-requests", str(requests),
           "--slo", slo, "--out", out, "--force"] + engine.split() + prompts + arrival
    if by == "concurrency":
        cmd += ["--by", "concurrency"]
    subprocess.run(cmd, check=True, capture_output=True)
    j = json.load(open(os.path.join(out, "capacity.json")))
    key = "max_concurrency" if by == "concurrency" else "max_rate_rps"
    fail = "fail_concurrency" if by == "concurrency" else "fail_rate_rps"
    return j[key], j[fail]


def search(cell, seed, work, real, k, max_time=None):
    _, engine, prompts, slo, arrival, by = CELLS[cell][:6]
    only = CELLS[cell][6] if len(CELLS[cell]) > 6 else []  # the search's own options
    out = os.path.join(work, "%s-%d" % (cell, seed))
    shutil.rmtree(out, ignore_errors=True)
    if k != 1:
        engine += " --speedup %g" % k
        slo = scaled_slo(slo, k)
    cmd = [BIN, "capacity", "--sim", engine, "--slo", slo, "--seed", str(seed), "--out", out,
           "--quiet", "--no-sampling"] + prompts + arrival + only
    if not real:
        cmd.append("--virtual")
    if max_time:
        cmd += ["--max-time", max_time]
    if by == "concurrency":
        cmd += ["--by", "concurrency"]
    t0 = time.time()
    subprocess.run(cmd, capture_output=True)
    wall = time.time() - t0
    j = json.load(open(os.path.join(out, "capacity.json")))
    shutil.rmtree(out, ignore_errors=True)
    scale = 1 if by == "concurrency" else k
    if by == "concurrency":
        keys = ("max_concurrency", "ci_low_concurrency", "ci_high_concurrency")
    else:
        keys = ("max_rate_rps", "ci_low_rps", "ci_high_rps")
    vals = [j[x] / scale if j[x] is not None else None for x in keys]
    probe_s = sum(p["duration_s"] or 0 for p in j["probes"])
    return vals, j["confirmed"], len(j["probes"]), probe_s, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--speedup", type=float, default=1)
    ap.add_argument("--truth-requests", type=int, default=1000000)
    ap.add_argument("--max-time", help="each search's --max-time (default: capacity's own)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="servelab-capmatrix-")
    try:
        for cell in a.cells.split(","):
            what = CELLS[cell][0]
            t, fail = truth(cell, a.truth_requests, work)
            print("== cell %s: %s: exact long-run answer %.4g (fails at %.4g; predict --capacity, "
                  "%d requests a run)" % (cell, what, t, fail, a.truth_requests), flush=True)
            covered, errs, confirmed, probe_min, walls, wrong = 0, [], 0, [], [], 0
            for i in range(a.seeds):
                seed = 1000 * (i + 1)
                (mx, lo, hi), conf, n, probe_s, wall = search(cell, seed, work, a.real, a.speedup,
                                                         a.max_time)
                if mx is None:
                    print("  seed %d: no answer" % seed, flush=True)
                    continue
                cov = lo <= t <= hi
                covered += cov
                confirmed += bool(conf)
                wrong += bool(conf) and not cov
                errs.append((mx - t) / t)
                probe_min.append(probe_s / 60)
                walls.append(wall)
                print("  seed %5d: %.4g (95%% CI %.4g-%.4g)%s, error %+.1f%%, %s, %d probes, "
                      "%.1f min of probes" % (seed, mx, lo, hi, "" if cov else " MISSES",
                                              100 * errs[-1], "confirmed" if conf else
                                              "not confirmed", n, probe_s / 60), flush=True)
            errs.sort()
            probe_min.sort()
            if errs:
                within = sum(abs(e) <= 0.03 for e in errs)
                print("  cell %s: covered %d of %d; within 3%%: %d; error min %+.1f%%, median "
                      "%+.1f%%, max %+.1f%%; confirmed %d (%d of them excluding the exact answer); "
                      "probes' time median %.1f min; wall median %.1f s"
                      % (cell, covered, len(errs), within, 100 * errs[0],
                         100 * errs[len(errs) // 2], 100 * errs[-1], confirmed, wrong,
                         probe_min[len(probe_min) // 2], sorted(walls)[len(walls) // 2]),
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
