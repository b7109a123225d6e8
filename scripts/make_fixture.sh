#!/bin/sh
# Regenerates results/fixture: the raw rows of a small sweep against
# `servelab sim --profile gpu-7b` (three offered loads x two repetitions)
# and their report. Run it when the row format changes; `make test` checks
# that the committed report still matches the committed rows.
set -e
BIN=${SERVELAB:-./servelab}
OUT=results/fixture
rm -rf "$OUT"
mkdir -p "$OUT"
"$BIN" sim --port 0 --profile gpu-7b --seed 1 > "$OUT/.sim.out" &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for i in 1 2 3 4 5 6 7 8 9 10; do
    grep -q listening "$OUT/.sim.out" && break
    sleep 0.2
done
URL=$(sed -n 's/^listening on //p' "$OUT/.sim.out")
for rate in 2 6 12; do
    for rep in 1 2; do
        "$BIN" run --quiet --url "$URL" --api chat --rate $rate --requests 40 \
            --seed $rep --max-tokens 48 --slo ttft=300ms,tpot=40ms --cost-per-hour 0.40 \
            --out "$OUT/load-${rate}rps/rep-$rep" > /dev/null
    done
done
rm -f "$OUT/.sim.out"
"$BIN" report "$OUT"
