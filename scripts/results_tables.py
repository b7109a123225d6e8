#!/usr/bin/env python3
"""results_tables.py: the tables of the real-server experiments in the
README and docs/vllm.md, made from what is committed under
results/llamacpp-cpu/ (llama.cpp build 4748, 2025),
results/llamacpp-cpu-2026/ (a 2026 build) and results/vllm-cpu/ (vLLM
0.32 on the CPU), the tables that set the two llama.cpp builds side by
side, made by `servelab compare`, and the seed's GPU campaign (the demo on
the simulator's gpu-7b profile, results/seed-gpu-demo/) beside vLLM's.

    scripts/results_tables.py [RESULTS]            # print every table of one folder
    scripts/results_tables.py --write README.md docs/vllm.md   # replace the tables in them
    scripts/results_tables.py --check README.md docs/vllm.md   # exit 1 when one differs

Each table sits in the README between `<!-- results:NAME -->` and
`<!-- /results:NAME -->` (2025), `<!-- results-2026:NAME -->` (2026) or
`<!-- compare-2026:NAME -->` (servelab compare of the two: per run, the
change of TTFT p50, TPOT p50 and output tokens/s, its 95% interval and
verdict; $SERVELAB names the binary, ./servelab by default) or
`<!-- results-vllm:NAME -->` (vLLM; `counters` is
scripts/vllm_counters.py's table of servelab's totals against vLLM's own
counters). A block may sit in any of the files named. The figures come from each experiment's report
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
import subprocess
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
    return table(head, out) + "\n\n" + first_failure(root, c)


def server_words(root, run):
    """Each error of a run's first repetition (a row of errors.csv: class,
    HTTP status, count), in the server's words where it gave some (the
    body: an OpenAI error's message)."""
    p = os.path.join(root, "failure", run, "rep-1", "errors.csv")
    out = []
    for e in read_csv(p) if os.path.exists(p) else []:
        what = e["error"] + (" %s" % e["http_status"] if e.get("http_status") else "")
        body = e.get("body") or ""
        try:
            msg = json.loads(body).get("error", {}).get("message")
        except (ValueError, AttributeError):
            msg = body
        out.append("%s x%s%s" % (what, e.get("count", "?"), ": " + msg if msg else ""))
    return "; ".join(out) or None


def first_failure(root, c):
    """The search's first failing configuration, in its order of runs."""
    for st in c["status"]:
        if st["status"] != "ok" or st.get("failed", 0) > 0:
            words = server_words(root, st["run"])
            death = st.get("server_death") or {}
            died = "; the server died: %s%s" % (death.get("class"), " (%s)" % death["signal_name"]
                                                if death.get("signal_name") else "") \
                if death.get("class") else ""
            return "first failing configuration, in the search's order: `%s` (%s; %d of %d " \
                "failed%s%s)" % (st["run"], st["status"], st.get("failed", 0),
                                 st.get("requests", 0), died,
                                 "; " + words.replace("|", "\\|") if words else "")
    return "no configuration failed"


def compare_json(base, new):
    binary = os.environ.get("SERVELAB", "./servelab")
    out = subprocess.run([binary, "compare", base, new, "--json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError("servelab compare %s %s: %s" % (base, new, out.stderr.strip()))
    return json.loads(out.stdout)


def change(fig, fmt):
    if not fig or fig.get("change_pct") is None:
        return "-"
    lo, hi = fig["ci_pct"]
    return ("%s → %s (%+.1f%%, 95%% CI %+.1f%% to %+.1f%%): %s" % (
        fmt % fig["base"], fmt % fig["new"], fig["change_pct"], lo, hi, fig["verdict"]))


def compare_table(base_root, new_root, name):
    """servelab compare of one experiment: 2025 (base) to 2026 (new)."""
    new_dir = os.path.join(new_root, name)
    base_dir = os.path.join(base_root, name.split("/")[-1])
    doc = compare_json(base_dir, new_dir)
    out = []
    for r in doc["runs"]:
        f = r["figures"]
        out.append([r["name"], "%d / %d" % (r["base_requests"], r["new_requests"]),
                    change(f.get("ttft_p50"), "%.0f"), change(f.get("tpot_p50"), "%.1f"),
                    change(f.get("output_tokens_per_s"), "%.2f")])
    head = ["run", "requests 2025 / 2026", "TTFT p50 ms", "TPOT p50 ms", "output tok/s"]
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


def arg(args, flag):
    m = re.search(re.escape(flag) + r"[ =](\S+)", args or "")
    return m.group(1) if m else None


def vllm_args(root, name):
    """Each run's vLLM argv as one string (meta.json's vllm.argv of rep-1)."""
    out = {}
    for run in run_names(root, name):
        p = os.path.join(root, name, run, "rep-1", "meta.json")
        if os.path.exists(p):
            with open(p) as f:
                out[run] = " ".join((json.load(f).get("vllm") or {}).get("argv") or [])
    return out


def last_arg(args, flag):
    """vLLM keeps the last of a flag given twice."""
    found = re.findall(re.escape(flag) + r" (\S+)", args or "")
    return found[-1] if found else None


def vllm_kv_table(root):
    rows, argv = report_rows(root, "kv-pressure"), vllm_args(root, "kv-pressure")
    out = []
    for run in run_names(root, "kv-pressure"):
        r = rows[run]
        blocks = last_arg(argv.get(run), "--num-gpu-blocks-override")
        out.append([run, blocks or "-", "%d" % (int(blocks) * 128) if blocks else "-",
                    r["requests"], r["failed"], num(r["server_preemptions"], "%.0f"),
                    num(r["ttft_p50_ms"], "%.0f"), num(r["ttft_p95_ms"], "%.0f"),
                    num(r["tpot_p50_ms"], "%.1f"), num(r["tpot_p95_ms"], "%.1f"),
                    num(r["e2e_p50_ms"], "%.0f"), num(r["output_tokens_per_s"], "%.1f"),
                    num(float(r["server_peak_kv_usage"]) * 100 if r["server_peak_kv_usage"] else None,
                        "%.0f")])
    head = ["run", "KV blocks", "KV tokens", "requests", "failed", "preemptions", "TTFT p50 ms",
            "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms", "E2E p50 ms", "output tok/s",
            "peak KV %"]
    return table(head, out)


def vllm_prefix_table(root):
    rows, pooled = report_rows(root, "prefix"), report_pooled(root, "prefix")
    out = []
    for run in run_names(root, "prefix"):
        r, p, reps = rows[run], pooled[run], rep_summaries(root, "prefix", run)
        hit = (reps[0].get("server") or {}).get("prefix_cache_hit_rate") if reps else None
        out.append([run, num(p["prompt_tokens"] / max(1, p["requests"]), "%.0f"), r["requests"],
                    r["failed"], num(r["ttft_p50_ms"], "%.1f"), num(r["ttft_p95_ms"], "%.1f"),
                    num(hit * 100 if hit is not None else None, "%.1f"),
                    num(r["tpot_p50_ms"], "%.1f")])
    head = ["run", "prompt tokens", "requests", "failed", "TTFT p50 ms", "TTFT p95 ms",
            "prefix cache hits %", "TPOT p50 ms"]
    return table(head, out)


def chunked(args):
    if "--no-enable-chunked-prefill" in (args or ""):
        return "off"
    return "on" if "--enable-chunked-prefill" in (args or "") else "vLLM's default"


def vllm_seqs_table(root, name):
    """--max-num-seqs (seqs) or the chunked-prefill flags (chunked-prefill)
    by run, and what the load got."""
    rows, argv = report_rows(root, name), vllm_args(root, name)
    out = []
    for run in run_names(root, name):
        r, a = rows[run], argv.get(run)
        flags = [last_arg(a, "--max-num-seqs") or "-"] if name == "slots" else \
            [chunked(a), last_arg(a, "--max-num-batched-tokens") or "-"]
        out.append([run] + flags + [
            r["requests"], r["failed"], num(r["ttft_p50_ms"], "%.0f"), num(r["ttft_p95_ms"], "%.0f"),
            num(r["tpot_p50_ms"], "%.1f"), num(r["tpot_p95_ms"], "%.1f"),
            num(r["output_tokens_per_s"], "%.1f"), num(r["server_peak_running"], "%.0f"),
            num(r["server_peak_waiting"], "%.0f"),
            num(float(r["goodput_fraction"]) * 100 if r["goodput_fraction"] else None, "%.1f")])
    head = ["run"] + (["max-num-seqs"] if name == "slots" else
                      ["chunked prefill", "max-num-batched-tokens"]) + [
        "requests", "failed", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms",
        "output tok/s", "peak running", "peak waiting", "met SLO %"]
    return table(head, out)


def vllm_context_table(root):
    rows, pooled = report_rows(root, "context"), report_pooled(root, "context")
    out = []
    for run in run_names(root, "context"):
        r, p, reps = rows[run], pooled[run], rep_summaries(root, "context", run)
        out.append([run, num(p["prompt_tokens"] / max(1, p["requests"]), "%.0f"), r["requests"],
                    r["failed"], num(r["ttft_p50_ms"], "%.0f"), num(r["ttft_p95_ms"], "%.0f"),
                    num(r["tpot_p50_ms"], "%.1f"), num(peak_rss_mib(reps), "%.0f")])
    head = ["run", "prompt tokens", "requests", "failed", "TTFT p50 ms", "TTFT p95 ms",
            "TPOT p50 ms", "peak RSS MiB"]
    return table(head, out)


def vllm_precision_table(root):
    rows, argv = report_rows(root, "precision"), vllm_args(root, "precision")
    c = campaign(root, "precision")
    conc = {r["name"]: r.get("concurrency") for r in c["runs"]}
    out = []
    for run in run_names(root, "precision"):
        r = rows[run]
        out.append([run, last_arg(argv.get(run), "--dtype") or "-", "%s" % (conc.get(run) or "-"),
                    r["requests"], r["failed"], num(r["ttft_p50_ms"], "%.1f"),
                    num(r["tpot_p50_ms"], "%.1f"), num(r["output_tokens_per_s"], "%.1f")])
    head = ["run", "--dtype", "at once", "requests", "failed", "TTFT p50 ms", "TPOT p50 ms",
            "output tok/s"]
    return table(head, out)


def vllm_failure_table(root):
    c = campaign(root, "failure")
    rows, argv = report_rows(root, "failure"), vllm_args(root, "failure")
    out = []
    for st in c["status"]:
        run = st["run"]
        reps = rep_summaries(root, "failure", run)
        errs = reps[0]["errors"] if reps else {}
        kinds = ", ".join("%s %d" % (k, v) for k, v in sorted(errs.items()) if v) or "-"
        death = st.get("server_death")
        how = death.get("class") if death else "-"
        if death and death.get("exit_code") is not None:
            how += " (%d)" % death["exit_code"]
        a = argv.get(run) or st.get("server_args", "")
        r = rows.get(run)
        out.append([run, last_arg(a, "--max-model-len") or "-",
                    last_arg(a, "--num-gpu-blocks-override") or "from 1 GiB", st["status"],
                    "%d" % st.get("completed", 0), "%d" % st.get("failed", 0), kinds, how,
                    num(r["ttft_p50_ms"] if r else None, "%.0f")])
    head = ["run", "--max-model-len", "KV blocks", "status", "completed", "failed", "errors",
            "server died", "TTFT p50 ms"]
    return table(head, out) + "\n\n" + first_failure(root, c)


def vllm_counters_table(root):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import vllm_counters
    return vllm_counters.experiment_table([root])


ROOT_SEED = "results/seed-gpu-demo"


def seed_table(root):
    """The seed's GPU campaign (the demo: gpu-7b, simulated) and vLLM's load
    campaign here, run by run in campaign order: both are loads of 1/3, 2/3,
    1 and 4/3 of what the server keeps, then the lowest load of long
    prompts with the KV cache cut."""
    seed, ours = report_rows(ROOT_SEED, ""), report_rows(root, "load")
    out = []
    for a, b in zip(run_names(ROOT_SEED, ""), run_names(root, "load")):
        ra, rb = seed[a], ours.get(b)
        row = [a, num(ra["offered_rps"], "%.2f"), num(ra["ttft_p50_ms"], "%.0f"),
               num(ra["ttft_p95_ms"], "%.0f"), num(ra["tpot_p50_ms"], "%.1f"),
               num(ra["server_preemptions"], "%.0f"),
               num(float(ra["goodput_fraction"]) * 100, "%.1f"), b]
        if rb:
            row += [num(rb["offered_rps"], "%.2f"), num(rb["ttft_p50_ms"], "%.0f"),
                    num(rb["ttft_p95_ms"], "%.0f"), num(rb["tpot_p50_ms"], "%.1f"),
                    num(rb["server_preemptions"], "%.0f"),
                    num(float(rb["goodput_fraction"]) * 100, "%.1f")]
        else:
            row += ["-"] * 6
        out.append(row)
    head = ["seed (GPU, simulated)", "req/s", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms",
            "preempt", "met SLO %", "vLLM here", "req/s", "TTFT p50 ms", "TTFT p95 ms",
            "TPOT p50 ms", "preempt", "met SLO %"]
    return table(head, out)


VLLM_TABLES = {
    "seed-gpu": seed_table,
    "load": load_table,
    "kv-pressure": vllm_kv_table,
    "prefix": vllm_prefix_table,
    "slots": lambda root: vllm_seqs_table(root, "slots"),
    "chunked-prefill": lambda root: vllm_seqs_table(root, "chunked-prefill"),
    "context": vllm_context_table,
    "precision": vllm_precision_table,
    "failure": vllm_failure_table,
    "counters": vllm_counters_table,
}


ROOT_2025, ROOT_2026 = "results/llamacpp-cpu", "results/llamacpp-cpu-2026"
ROOT_VLLM = "results/vllm-cpu"
# The 2026 experiments servelab compare sets beside 2025's: the seven with
# the real tokenizer, and those run again with 2025's made-up vocabulary
# (the same model files: only the server differs).
COMPARED = ["load", "context", "precision", "quantization", "prefix", "slots", "failure",
            "made-up-vocab/context", "made-up-vocab/slots", "made-up-vocab/failure"]


def block(kind, name, text):
    return "<!-- %s:%s -->\n%s\n<!-- /%s:%s -->" % (kind, name, text, kind, name)


def all_tables():
    """(kind, name) -> text for every block the README holds."""
    made = {}
    for kind, root in (("results", ROOT_2025), ("results-2026", ROOT_2026)):
        for name, fn in TABLES.items():
            made[(kind, name)] = fn(root)
    made[("results-2026", "made-up-vocab/failure")] = failure_table(
        os.path.join(ROOT_2026, "made-up-vocab"))
    if os.path.isdir(ROOT_VLLM):
        for name, fn in VLLM_TABLES.items():
            made[("results-vllm", name)] = fn(ROOT_VLLM)
    for name in COMPARED:
        if os.path.isdir(os.path.join(ROOT_2026, name)):
            made[("compare-2026", name)] = compare_table(ROOT_2025, ROOT_2026, name)
    return made


def main(argv):
    mode, targets, root = None, [], ROOT_2025
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("--write", "--check") and args:
            mode = a
            while args and not args[0].startswith("-"):
                targets.append(args.pop(0))
        elif not a.startswith("-"):
            root = a
        else:
            print("usage: results_tables.py [RESULTS] [--write|--check FILE.md...]", file=sys.stderr)
            return 2
    if not mode:
        tables = VLLM_TABLES if os.path.abspath(root) == os.path.abspath(ROOT_VLLM) else TABLES
        for name, fn in tables.items():
            print("## %s\n\n%s\n" % (name, fn(root)))
        return 0
    made = all_tables()
    texts = {}
    for t in targets:
        with open(t) as f:
            texts[t] = f.read()
    new, bad = dict(texts), []
    for (kind, name), text in made.items():
        key = re.escape("%s:%s" % (kind, name))
        pat = re.compile(r"<!-- %s -->\n(?:.*?\n)?<!-- /%s -->" % (key, key), re.S)
        holders = [t for t in targets if pat.search(new[t])]
        if not holders:
            bad.append("%s: no <!-- %s:%s --> block" % (" or ".join(targets), kind, name))
            continue
        for t in holders:
            new[t] = pat.sub(lambda m, k=kind, n=name, x=text: block(k, n, x), new[t])
    if mode == "--check":
        for t in targets:
            if new[t] != texts[t]:
                bad.append("%s: a results table differs from what results/ makes "
                           "(scripts/results_tables.py --write %s)" % (t, " ".join(targets)))
        for b in bad:
            print("results_tables.py: " + b, file=sys.stderr)
        return 1 if bad else 0
    if bad:
        for b in bad:
            print("results_tables.py: " + b, file=sys.stderr)
        return 1
    for t in targets:
        if new[t] != texts[t]:
            with open(t, "w") as f:
                f.write(new[t])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
