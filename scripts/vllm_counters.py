#!/usr/bin/env python3
"""vllm_counters.py: holds every run servelab made against a real vLLM to
vLLM's own counters. For each run directory under the folders given (one
with requests.csv and a server_metrics.csv that has vLLM's metrics), it
takes the difference of vLLM's counters between the run's first /metrics
page (read just before t=0) and its last (read after the last request
ended) and sets it beside what servelab's rows say:

    prompt tokens      vllm:prompt_tokens_total       = sum of prompt_tokens
    output tokens      vllm:generation_tokens_total   = sum of output_tokens
                       (both over the requests vLLM answered with 200: one it
                       refused, too long, is counted by the client alone)
    requests by finish vllm:request_success_total{finished_reason=R}
                                                      = rows ending with R
    preemptions        vllm:num_preemptions_total     = summary.json's
    prefix cache       vllm:prefix_cache_{queries,hits}_total
                                                      = summary.json's
    TTFT               vllm:time_to_first_token_seconds (histogram): for
                       every bucket bound, the requests whose TTFT from send
                       servelab measured at or below it are no more than
                       vLLM's count there (the client's clock starts
                       earlier and ends later) and no fewer than vLLM's
                       count one bucket lower (no later than one bucket)
    queue share        summary.json's queue_share_of_ttft
                       = delta(request_queue_time_seconds_sum)
                         / delta(time_to_first_token_seconds_sum)

The first five are equalities: servelab's totals must equal vLLM's
exactly. A run whose requests did not all end on their own (cancelled by a
stop, a capacity probe stopped once lost) is listed and not held: vLLM
counts the prompt of a request it had started and servelab never got its
usage.

    scripts/vllm_counters.py [--check] [--table] DIR...

Prints one line per run (or a Markdown table with --table); --check exits
1 when any held run differs, 2 when no run was found. Python 3 standard
library only.
"""
import csv
import json
import os
import re
import sys

LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def labels(text):
    return dict(LABEL.findall(text))


def read_metrics(path):
    """{(name, labels text): (first value, last value)}, and the page times."""
    first, last, times = {}, {}, set()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["name"], row["labels"])
            t = float(row["t_ms"])
            times.add(t)
            v = float(row["value"])
            if key not in first or t < first[key][0]:
                first[key] = (t, v)
            if key not in last or t >= last[key][0]:
                last[key] = (t, v)
    return {k: (first[k][1], last[k][1]) for k in first}, (min(times), max(times)) if times else (0, 0)


def delta(m, name, want=None):
    """The summed change of a counter over its series (want: labels to match)."""
    total, seen = 0.0, False
    for (n, lt), (a, b) in m.items():
        if n != name:
            continue
        if want and any(labels(lt).get(k) != v for k, v in want.items()):
            continue
        total += b - a
        seen = True
    return total if seen else None


def buckets(m, name):
    """[(le, count delta)] of a histogram, summed over its series, by bound."""
    by = {}
    for (n, lt), (a, b) in m.items():
        if n != name + "_bucket":
            continue
        le = labels(lt).get("le")
        bound = float("inf") if le in ("+Inf", "Inf") else float(le)
        by[bound] = by.get(bound, 0.0) + (b - a)
    return sorted(by.items())


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def held_run(d):
    """The comparison of one run directory: a dict of checks, or None."""
    mpath = os.path.join(d, "server_metrics.csv")
    with open(os.path.join(d, "requests.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    m, _ = read_metrics(mpath)
    if delta(m, "vllm:prompt_tokens_total") is None:
        return None
    with open(os.path.join(d, "summary.json")) as f:
        summ = json.load(f)
    server = summ.get("server") or {}
    out = {"dir": d, "requests": len(rows), "checks": [], "held": True, "why": ""}
    unended = [r for r in rows if r.get("error") in ("cancelled", "not_sent", "interrupted")]
    if summ.get("interrupted") or unended:
        out["held"] = False
        out["why"] = "%d of %d requests did not end on their own" % (len(unended), len(rows))

    def check(what, vllm, servelab, exact=True, ok=None):
        if ok is None:
            ok = vllm is not None and servelab is not None and (
                abs(vllm - servelab) < 1e-6 if exact else False)
        out["checks"].append((what, vllm, servelab, ok))

    # the requests vLLM took: a refused one (HTTP 400: too long) has the
    # client's count of its prompt in the row, and vLLM counted nothing
    taken = [r for r in rows if r.get("http_status") == "200"]
    check("prompt tokens", delta(m, "vllm:prompt_tokens_total"),
          sum(num(r["prompt_tokens"]) or 0 for r in taken))
    check("output tokens", delta(m, "vllm:generation_tokens_total"),
          sum(num(r["output_tokens"]) or 0 for r in taken))
    reasons = {}
    for r in rows:
        if not r.get("error") and r.get("finish_reason"):
            reasons[r["finish_reason"]] = reasons.get(r["finish_reason"], 0) + 1
    for (n, lt), _ in m.items():
        if n == "vllm:request_success_total":
            reasons.setdefault(labels(lt).get("finished_reason"), 0)
    for reason in sorted(k for k in reasons if k):
        check("finished " + reason,
              delta(m, "vllm:request_success_total", {"finished_reason": reason}), reasons[reason])
    check("preemptions", delta(m, "vllm:num_preemptions_total"), num(server.get("preemptions")))
    check("prefix cache queries", delta(m, "vllm:prefix_cache_queries_total"),
          num(server.get("prefix_cache_queries")))
    check("prefix cache hits", delta(m, "vllm:prefix_cache_hits_total"),
          num(server.get("prefix_cache_hits")))

    # TTFT from send against vLLM's histogram, bucket by bucket
    ttft = sorted(v / 1000.0 for v in (num(r["ttft_ms"]) for r in rows) if v is not None)
    hist = buckets(m, "vllm:time_to_first_token_seconds")
    bad, prev = [], 0.0
    for le, cum in hist:
        mine = sum(1 for v in ttft if v <= le)
        if mine > cum + 1e-9 or mine < prev - 1e-9:
            bad.append("le=%g: servelab %d, vLLM %g (%g one bucket lower)" % (le, mine, cum, prev))
        prev = cum
    n_hist = hist[-1][1] if hist else None
    check("TTFT histogram", n_hist, float(len(ttft)), ok=bool(hist) and not bad and
          abs(n_hist - len(ttft)) < 1e-9)
    if bad:
        out["ttft_bad"] = bad
    q = delta(m, "vllm:request_queue_time_seconds_sum")
    t = delta(m, "vllm:time_to_first_token_seconds_sum")
    share = num(server.get("queue_share_of_ttft"))
    want = q / t if q is not None and t else None
    check("queue share of TTFT", want, share,
          ok=(want is None and share is None) or (want is not None and share is not None and
                                                  abs(want - share) < 1e-9))
    out["ttft_sum_servelab"] = sum(ttft)
    out["ttft_sum_vllm"] = t
    out["queue_sum_vllm"] = q
    out["prefill_sum_vllm"] = delta(m, "vllm:request_prefill_time_seconds_sum")
    return out


def run_dirs(roots):
    for root in roots:
        for d, subdirs, files in os.walk(root):
            subdirs.sort()
            if "requests.csv" in files and "server_metrics.csv" in files and "summary.json" in files:
                yield d


def fmt(v):
    if v is None:
        return "-"
    return "%g" % v if v != int(v) else "%d" % v


def experiment_table(roots):
    """A Markdown table: per experiment (a folder under a root), its runs
    against vLLM, how many were held, and the totals of each side."""
    by = {}
    for root in roots:
        for r in (held_run(d) for d in run_dirs([root])):
            if not r:
                continue
            name = os.path.relpath(r["dir"], root).split(os.sep)[0]
            e = by.setdefault(name, {"runs": 0, "held": 0, "equal": 0, "sums": {}})
            e["runs"] += 1
            if not r["held"]:
                continue
            e["held"] += 1
            e["equal"] += all(c[3] for c in r["checks"])
            for what, v, mine, _ in r["checks"]:
                if what in ("prompt tokens", "output tokens", "preemptions", "prefix cache hits") or \
                        what.startswith("finished "):
                    a, b = e["sums"].get(what, (0.0, 0.0))
                    e["sums"][what] = (a + (v or 0), b + (mine or 0))
    head = ["experiment", "runs", "held", "all equal", "prompt tokens (servelab / vLLM)",
            "output tokens", "requests finished", "preemptions", "prefix cache hits"]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]

    def pair(e, what):
        if what not in e["sums"]:
            return "-"
        v, mine = e["sums"][what]
        return "%s / %s" % (fmt(mine), fmt(v))
    for name in sorted(by):
        e = by[name]
        fin = [k for k in e["sums"] if k.startswith("finished ") and e["sums"][k][0]]
        finished = ", ".join("%s %s" % (k[9:], pair(e, k)) for k in sorted(fin)) or "-"
        lines.append("| %s | %d | %d | %d | %s | %s | %s | %s | %s |" % (
            name, e["runs"], e["held"], e["equal"], pair(e, "prompt tokens"),
            pair(e, "output tokens"), finished, pair(e, "preemptions"), pair(e, "prefix cache hits")))
    return "\n".join(lines)


def main(argv):
    check = "--check" in argv
    table = "--table" in argv
    roots = [a for a in argv if not a.startswith("--")]
    if not roots:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    runs = [r for r in (held_run(d) for d in run_dirs(roots)) if r]
    if not runs:
        print("vllm_counters.py: no run against vLLM under %s" % " ".join(roots), file=sys.stderr)
        return 2
    failed = 0
    if table:
        print("| run | requests | prompt tokens: servelab = vLLM | output tokens | finished | "
              "preemptions | prefix hits / queries | TTFT sum: servelab / vLLM s | vLLM queue s | held |")
        print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for r in runs:
        bad = [c for c in r["checks"] if not c[3]]
        if r["held"] and bad:
            failed += 1
        if table:
            c = {name: (v, s) for name, v, s, _ in r["checks"]}
            fin = ", ".join("%s %s" % (k[9:], fmt(v[0])) for k, v in c.items() if k.startswith("finished ")
                            and v[0])
            print("| %s | %d | %s | %s | %s | %s | %s / %s | %.2f / %.2f | %s | %s |" % (
                os.path.relpath(r["dir"]), r["requests"],
                "%s = %s" % (fmt(c["prompt tokens"][1]), fmt(c["prompt tokens"][0])),
                "%s = %s" % (fmt(c["output tokens"][1]), fmt(c["output tokens"][0])), fin or "-",
                fmt(c["preemptions"][0]), fmt(c["prefix cache hits"][0]), fmt(c["prefix cache queries"][0]),
                r["ttft_sum_servelab"], r["ttft_sum_vllm"] or 0, fmt(r["queue_sum_vllm"]),
                ("yes" if not bad else "NO") if r["held"] else "not held: " + r["why"]))
        else:
            state = ("equal" if not bad else "DIFFERS") if r["held"] else "not held (%s)" % r["why"]
            print("%s: %s" % (r["dir"], state))
            for what, v, s, ok in bad:
                print("  %s: vLLM %s, servelab %s" % (what, fmt(v), fmt(s)))
            for line in r.get("ttft_bad", []):
                print("  TTFT " + line)
    held = sum(1 for r in runs if r["held"])
    print("%d runs against vLLM, %d held, %d differ" % (len(runs), held, failed),
          file=sys.stderr if table else sys.stdout)
    return 1 if check and failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
