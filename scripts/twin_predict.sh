#!/bin/sh
# The twin study's predictions, from the committed rows of results/twin/:
# `servelab fit` on the fitting runs, `servelab predict` of every other
# measured run with the same requests at the same instants (their
# arrivals and lengths as a replay trace), and the comparison tables.
#   scripts/twin_predict.sh [OUTDIR]   # default: results/twin
# OUTDIR gets profiles/, predicted/ and comparison.md; tests/fit/t7230-twin-study.c
# runs it into a scratch folder and compares with what is committed.
set -eu
BIN=${SERVELAB:-./servelab}
export SERVELAB=$BIN
IN=results/twin
OUT=${1:-results/twin}
mkdir -p "$OUT/profiles" "$OUT/predicted"
P=$OUT/profiles/tiny-4slots.yaml
"$BIN" fit "$IN/fit" --name tiny-100m-bf16-llamacpp-4slots --force --quiet --out "$P"
# in sample: the twin fitted on the load campaign itself, as the anchors' claims are
PI=$OUT/profiles/tiny-4slots-in-sample.yaml
"$BIN" fit "$IN/load" --name tiny-100m-bf16-llamacpp-4slots-in-sample --force --quiet --out "$PI"
pairs=$OUT/predicted/pairs.tsv
: > "$pairs"

# predict_run STUDY LABEL MEASURED_RUN [engine flags]: the run's requests on the twin
predict_run() {
    study=$1 label=$2 run=$3
    shift 3
    profile=${PROFILE:-$P}
    d=$OUT/predicted/$label
    rm -rf "$d" && mkdir -p "$d"
    python3 scripts/twin_table.py trace "$run" > "$d.trace.jsonl"
    "$BIN" predict --profile-file "$profile" "$@" --replay "$d.trace.jsonl" --api completions \
        --ignore-eos --quiet --force --out "$d" > /dev/null
    printf '%s\t%s\t%s\t%s\n' "$study" "$label" "$run" "$d" >> "$pairs"
}

A="(a) fitted on the batch and prompt-length runs, predicting the load campaign"
for r in "$IN"/load/rate-*/rep-1; do
    [ -d "$r" ] || continue
    name=$(basename "$(dirname "$r")")
    predict_run "$A" "load-$name" "$r"
done
I="(i) in sample: fitted on the load campaign itself, predicting it"
for r in "$IN"/load/rate-*/rep-1; do
    [ -d "$r" ] || continue
    name=$(basename "$(dirname "$r")")
    PROFILE=$PI predict_run "$I" "in-sample-$name" "$r"
done
B="(b) fitted on 4 slots, predicting 2 slots (--max-num-seqs 2 --kv-blocks 256)"
for r in "$IN"/slots2/*/rep-1; do
    [ -d "$r" ] || continue
    predict_run "$B" "$(basename "$(dirname "$r")")" "$r" --max-num-seqs 2 --kv-blocks 256
done
W="(w) what-if: 1,024-token prompts at 1 request/s, predicted before it was measured"
rm -rf "$OUT/predicted/whatif"
"$BIN" predict --profile-file "$P" --api completions --prompts random:1024:64 --ignore-eos \
    --rate 1 --requests 300 --seed 0 --quiet --force --out "$OUT/predicted/whatif" > /dev/null
for r in "$IN"/whatif/*/rep-1; do
    [ -d "$r" ] || continue
    printf '%s\t%s\t%s\t%s\n' "$W" "$(basename "$(dirname "$r")")" "$r" "$OUT/predicted/whatif" >> "$pairs"
done
C="(c) the same build, the load campaign measured again later"
for r in "$IN"/load-again/rate-*/rep-1; do
    [ -d "$r" ] || continue
    name=$(basename "$(dirname "$r")")
    predict_run "$C" "again-$name" "$r"
    printf '%s\t%s\t%s\t%s\n' "(c) noise floor: the first measurement beside the second" \
        "$name" "$IN/load/$name/rep-1" "$r" >> "$pairs.noise"
done
[ -s "$pairs.noise" ] 2>/dev/null && cat "$pairs.noise" >> "$pairs"
rm -f "$pairs.noise"
python3 scripts/twin_table.py table "$pairs" > "$OUT/comparison.md"
