#!/usr/bin/env python3
"""results_tables.py: the README's tables of the llama.cpp experiments,
made from what is committed under results/llamacpp-cpu/.

    scripts/results_tables.py [RESULTS]            # print every table
    scripts/results_tables.py --write README.md    # replace the tables in it
    scripts/results_tables.py --check README.md    # exit 1 when one differs

Each table sits in the README between `<!-- results:NAME -->` and
`<!-- /results:NAME -->`. The figures come from each experiment's report
(report/summary.csv and report/summary.json: servelab's pooled figures of
the committed rows, which `servelab report --check` holds to the rows),
each repetition's summary.json (the server's sampled peak RSS),
campaign.json (how each run ended) and models.csv (file sizes). No
statistic is computed here: this script only picks and formats, so a
table cannot drift from its rows without `report --check` failing first.
Python 3 standard library only.
"""
import csv
import glob
import json
import os
import re
import sys

MIB = 1024.0 * 1024.0


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def report_rows(root, name):
    return {r["run"]: r for r in read_csv(os.path.join(root, name, "report", "summary.csv"))}


def rep_summaries(root, name, run):
    out = []
    for p in sorted(glob.glob(os.path.join(root, name, run, "rep-*", "summary.json"))):
        with open(p) as f:
            out.append(json.load(f))
    return out


def report_pooled(root, name):
    with open(os.path.join(root, name, "report", "summary.json")) as f:
        return {r["run"]: r["pooled"] for r in json.load(f)["runs"]}


def campaign(root, name):
    with open(os.path.join(root, name, "campaign.json")) as f:
        return json.load(f)


def run_names(root, name):
    return [r["name"] for r in campaign(root, name)["runs"]]


def peak_rss_mib(reps):
    peaks = [s.get("server_process", {}).get("peak_rss_bytes") or 0 for s in reps]
    return max(peaks) / MIB if peaks and max(peaks) > 0 else None


def num(v, fmt):
    if v is None or v == "":
        return "-"
    return fmt % float(v)


def model_file(run_args):
    m = re.search(r"/([A-Za-z0-9._-]+\.gguf)", run_args or "")
    return m.group(1) if m else None


def models(root):
    p = os.path.join(root, "models.csv")
    return {r["file"]: r for r in read_csv(p)} if os.path.exists(p) else {}


def table(head, rows):
    align = ["---"] + ["---:"] * (len(head) - 1)
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def args_of(c, run):
    for r in c["runs"]:
        if r["name"] == run:
            return r.get("server_args", "")
    return ""


def load_table(root):
    rows = report_rows(root, "load")
    with open(os.path.join(root, "load-capacity", "capacity.json")) as f:
        cap = json.load(f)
    found = cap.get("max_rate_rps")
    out = []
    for run in run_names(root, "load"):
        r = rows[run]
        x = float(r["offered_rps"]) / found if found else None
        out.append([run, num(r["offered_rps"], "%.3f"), num(x, "%.2f"), r["requests"], r["failed"],
                    num(r["ttft_p50_ms"], "%.0f"), num(r["ttft_p95_ms"], "%.0f"),
                    num(r["tpot_p50_ms"], "%.1f"), num(r["tpot_p95_ms"], "%.1f"),
                    num(r["output_tokens_per_s_arrival_window"], "%.1f"),
                    num(float(r["goodput_fraction"]) * 100, "%.1f")])
    head = ["run", "offered req/s", "x capacity", "requests", "failed", "TTFT p50 ms",
            "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms", "output tok/s", "met SLO %"]
    lo, hi = cap.get("ci_low_rps"), cap.get("ci_high_rps")
    ci = " (95%% CI %s-%s)" % (num(lo, "%.3f"), num(hi, "%.3f")) if lo and hi else ""
    note = "capacity found first (`servelab capacity`, %d probes): %s req/s%s" % (
        len(cap["probes"]), num(found, "%.3f"), ci)
    return table(head, out) + "\n\n" + note


def server_stat(pooled, key, stat="p50"):
    v = (pooled.get("server_reported") or {}).get(key)
    return v.get(stat) if isinstance(v, dict) else v


def context_table(root):
    rows, pooled = report_rows(root, "context"), report_pooled(root, "context")
    out = []
    for run in run_names(root, "context"):
        r, reps, p = rows[run], rep_summaries(root, "context", run), pooled[run]
        prompt = p["prompt_tokens"] / max(1, p["requests"])
        prefill = server_stat(p, "server_prefill_tok_s")
        out.append([run, num(prompt, "%.0f"), r["requests"], r["failed"], num(r["ttft_p50_ms"], "%.0f"),
                    num(r["ttft_p95_ms"], "%.0f"), num(prefill, "%.1f"), num(r["tpot_p50_ms"], "%.1f"),
                    num(peak_rss_mib(reps), "%.0f")])
    head = ["run", "prompt tokens", "requests", "failed", "TTFT p50 ms", "TTFT p95 ms",
            "server prefill tok/s", "TPOT p50 ms", "peak RSS MiB"]
    return table(head, out)


def model_table(root, name):
    rows, c, files = report_rows(root, name), campaign(root, name), models(root)
    pooled = report_pooled(root, name)
    out = []
    for run in run_names(root, name):
        r, reps = rows[run], rep_summaries(root, name, run)
        f = model_file(args_of(c, run))
        size = float(files[f]["bytes"]) / MIB if f in files else None
        decode = server_stat(pooled[run], "server_decode_tok_s")
        out.append([run, f or "-", num(size, "%.0f"), r["requests"], r["failed"],
                    num(r["ttft_p50_ms"], "%.0f"), num(r["tpot_p50_ms"], "%.1f"),
                    num(1000.0 / float(r["tpot_p50_ms"]) if r["tpot_p50_ms"] else None, "%.1f"),
                    num(decode, "%.1f"), num(peak_rss_mib(reps), "%.0f")])
    head = ["run", "file", "file MiB", "requests", "failed", "TTFT p50 ms", "TPOT p50 ms",
            "decode tok/s (1000 / TPOT p50)", "server decode tok/s", "peak RSS MiB"]
    return table(head, out)


def prefix_table(root):
    rows, pooled = report_rows(root, "prefix"), report_pooled(root, "prefix")
    out = []
    for run in run_names(root, "prefix"):
        r, p = rows[run], pooled[run]
        cached = server_stat(p, "cached_prompt_share")
        out.append([run, num(p["prompt_tokens"] / max(1, p["requests"]), "%.0f"), r["requests"],
                    r["failed"], num(r["ttft_p50_ms"], "%.0f"), num(r["ttft_p95_ms"], "%.0f"),
                    num(r["ttft_mean_ms"], "%.0f"),
                    num(cached * 100 if cached is not None else None, "%.1f"),
                    num(server_stat(p, "server_prefill_tok_s"), "%.1f"),
                    num(r["tpot_p50_ms"], "%.1f")])
    head = ["run", "prompt tokens", "requests", "failed", "TTFT p50 ms", "TTFT p95 ms",
            "TTFT mean ms", "prompt tokens from cache %", "server prefill tok/s", "TPOT p50 ms"]
    return table(head, out)


def slots_table(root):
    rows = report_rows(root, "slots")
    out = []
    for run in run_names(root, "slots"):
        r, reps = rows[run], rep_summaries(root, "slots", run)
        out.append([run, r["requests"], r["failed"], num(r["ttft_p50_ms"], "%.0f"),
                    num(r["ttft_p95_ms"], "%.0f"), num(r["tpot_p50_ms"], "%.1f"),
                    num(r["tpot_p95_ms"], "%.1f"), num(r["output_tokens_per_s"], "%.1f"),
                    num(r["duration_s"], "%.1f"), num(peak_rss_mib(reps), "%.0f")])
    head = ["run", "requests", "failed", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms",
            "TPOT p95 ms", "output tok/s", "duration s", "peak RSS MiB"]
    return table(head, out)


def failure_table(root):
    c = campaign(root, "failure")
    rows, pooled = report_rows(root, "failure"), report_pooled(root, "failure")
    out = []
    for st in c["status"]:
        run = st["run"]
        reps = rep_summaries(root, "failure", run)
        errs = reps[0]["errors"] if reps else {}
        kinds = ", ".join("%s %d" % (k, v) for k, v in sorted(errs.items()) if v) or "-"
        death = st.get("server_death")
        how = death.get("class") if death else "-"
        if death and death.get("signal_name"):
            how += " (%s)" % death["signal_name"]
        elif death and death.get("exit_code") is not None:
            how += " (%d)" % death["exit_code"]
        args = st.get("server_args", "")
        ctx = re.search(r"-c (\d+)", args)
        lim = re.search(r"memlimit\.sh (\S+)", args)
        r, p = rows.get(run), pooled.get(run)
        prompt = p["prompt_tokens"] / max(1, p["requests"]) if p else None
        out.append([run, ctx.group(1) if ctx else "-", lim.group(1) if lim else "none",
                    "read in" if "--no-mmap" in args else "mapped", st["status"],
                    "%d" % st.get("completed", 0), "%d" % st.get("failed", 0), kinds, how,
                    num(prompt, "%.0f"), num(r["tpot_p50_ms"] if r else None, "%.1f"),
                    num(peak_rss_mib(reps), "%.0f")])
    head = ["run", "-c", "memory limit", "weights", "status", "completed", "failed", "errors",
            "server died", "prompt tokens (server's count)", "TPOT p50 ms", "peak RSS MiB"]
    return table(head, out)


TABLES = {
    "load": load_table,
    "context": context_table,
    "precision": lambda root: model_table(root, "precision"),
    "quantization": lambda root: model_table(root, "quantization"),
    "prefix": prefix_table,
    "slots": slots_table,
    "failure": failure_table,
}


def block(name, text):
    return "<!-- results:%s -->\n%s\n<!-- /results:%s -->" % (name, text, name)


def main(argv):
    mode, target, root = None, None, "results/llamacpp-cpu"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("--write", "--check") and args:
            mode, target = a, args.pop(0)
        elif not a.startswith("-"):
            root = a
        else:
            print("usage: results_tables.py [RESULTS] [--write|--check README.md]", file=sys.stderr)
            return 2
    made = {name: fn(root) for name, fn in TABLES.items()}
    if not mode:
        for name, text in made.items():
            print("## %s\n\n%s\n" % (name, text))
        return 0
    with open(target) as f:
        readme = f.read()
    new, bad = readme, []
    for name, text in made.items():
        pat = re.compile(r"<!-- results:%s -->\n(?:.*?\n)?<!-- /results:%s -->" % (name, name), re.S)
        if not pat.search(new):
            bad.append("%s: no <!-- results:%s --> block" % (target, name))
            continue
        new = pat.sub(lambda m: block(name, text), new)
    if mode == "--check":
        if new != readme:
            bad.append("%s: a results table differs from what results/ makes "
                       "(scripts/results_tables.py --write %s)" % (target, target))
        for b in bad:
            print("results_tables.py: " + b, file=sys.stderr)
        return 1 if bad else 0
    if bad:
        for b in bad:
            print("results_tables.py: " + b, file=sys.stderr)
        return 1
    with open(target, "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
