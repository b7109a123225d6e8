#!/bin/sh
# The twin study (results/twin/, README "A twin fitted from the measured
# runs"): measures llama.cpp's server on this machine, fits the simulator
# to some of the runs and predicts the others.
#   scripts/twin.sh measure [NAME...]   # the real runs: fit load slots2 load-again whatif
#   scripts/twin.sh predict             # fit, predict and compare from the committed rows
# `measure` needs llama-server on PATH (the 2026 build; its commit goes in
# SERVELAB_METADATA as for scripts/experiments.sh) and the model with Llama
# 3's tokenizer (SERVELAB_TOKENIZER and SERVELAB_MODELS as there: the 2026
# server fails a request whose text it cannot parse, which a made-up
# vocabulary's output often is), and writes
# results/twin/NAME/ from configs/twin/NAME.yaml; the machine should be
# otherwise idle. `predict` needs only servelab: tests/fit/t7230-twin-study.c runs it
# into a scratch folder and compares with what is committed.
set -eu
BIN=${SERVELAB:-./servelab}
OUT=${RESULTS:-results/twin}
export SERVELAB_MODELS=${SERVELAB_MODELS:-models}
md=""
for kv in ${SERVELAB_METADATA:-}; do md="$md --metadata $kv"; done

measure() {
    command -v llama-server >/dev/null 2>&1 ||
        { echo "twin.sh: llama-server is not on PATH" >&2; exit 2; }
    f=$SERVELAB_MODELS/tiny-100m-bf16.gguf
    [ -s "$f" ] || python3 scripts/gguf_write.py tiny-100m bf16 "$f" \
        ${SERVELAB_TOKENIZER:+--tokenizer "$SERVELAB_TOKENIZER"}
    for name in "$@"; do
        cfg=configs/twin/$name.yaml
        case $name in load-again) cfg=configs/twin/load.yaml ;; esac
        "$BIN" sweep "$cfg" --out "$OUT/$name" --force $md
    done
}

case ${1:-} in
measure) shift; [ $# -gt 0 ] || set -- fit load slots2; measure "$@" ;;
predict) shift; exec sh scripts/twin_predict.sh "$@" ;;
*) echo "usage: scripts/twin.sh measure [NAME...] | predict [OUTDIR]" >&2; exit 2 ;;
esac
