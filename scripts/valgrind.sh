#!/bin/sh
# Memcheck of the simulator under load and of short client runs against it:
# any memory error or definite leak fails (exit 1). Used by CI. Three passes:
#   1. the one-loop simulator, the client on its own HTTP/1.1 client
#   2. the simulator with two I/O threads, the client on libcurl
#   3. the engine in virtual time: servelab predict and capacity --virtual,
#      and a fit of committed rows whose profile file a prediction then reads
set -e
BIN=${SERVELAB:-./servelab}
DIR=$(mktemp -d /tmp/servelab-valgrind-XXXXXX)
SIM=
cleanup() {
    if [ -n "$SIM" ]; then kill "$SIM" 2>/dev/null || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT
VG="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite"
rc=0

# pass NAME SIM_ARGS RUN_ARGS
pass() {
    name=$1
    # shellcheck disable=SC2086
    $VG --log-file="$DIR/$name-sim.vg" "$BIN" sim --port 0 \
        --fault http429=0.05,disconnect=0.05,malformed=0.05 $2 > "$DIR/$name-sim.out" &
    SIM=$!
    for i in $(seq 1 100); do
        grep -q listening "$DIR/$name-sim.out" 2>/dev/null && break
        sleep 0.1
    done
    URL=$(sed -n 's/^listening on //p' "$DIR/$name-sim.out")
    [ -n "$URL" ] || { echo "valgrind: the simulator did not start ($name)"; exit 1; }
    # shellcheck disable=SC2086
    $VG --log-file="$DIR/$name-run.vg" "$BIN" run --quiet --url "$URL" --rate 100 \
        --requests 300 --api chat --out "$DIR/$name-run" $3 > /dev/null || rc=1
    rc_sim=0
    kill -TERM $SIM
    wait $SIM || rc_sim=$?
    SIM=
    [ "$rc_sim" -eq 99 ] && rc=1
    for f in "$name-run" "$name-sim"; do
        if [ -s "$DIR/$f.vg" ]; then
            echo "valgrind: errors in $f:"
            cat "$DIR/$f.vg"
            rc=1
        fi
    done
}

pass own "" ""
pass threads "--threads 2" "--http-client libcurl"
# 3. the engine in virtual time: a prediction (prefix caching, EOS lengths,
# a cap and timeouts) and a short virtual capacity search
$VG --log-file="$DIR/predict.vg" "$BIN" predict --profile gpu-7b --api chat --rate 20 \
    --requests 500 --concurrency 64 --timeout 5 --chunks --out "$DIR/predict" > /dev/null || rc=1
$VG --log-file="$DIR/capacity.vg" "$BIN" capacity --virtual --sim "--max-num-seqs 8 --decode-base-ms 10" \
    --prompts random:8:20 --ignore-eos --slo ttft=100ms --goal 0.9 --quiet --out "$DIR/capacity" \
    > /dev/null || rc=1
# the fit of the twin's committed rows, and a prediction from its file
$VG --log-file="$DIR/fit.vg" "$BIN" fit results/twin/fit --quiet --out "$DIR/fitted.yaml" \
    > /dev/null || rc=1
$VG --log-file="$DIR/predict-file.vg" "$BIN" predict --profile-file "$DIR/fitted.yaml" \
    --api chat --rate 2 --requests 200 --out "$DIR/predict-file" > /dev/null || rc=1
for f in predict capacity fit predict-file; do
    if [ -s "$DIR/$f.vg" ]; then
        echo "valgrind: errors in $f:"
        cat "$DIR/$f.vg"
        rc=1
    fi
done
if [ "$rc" -ne 0 ]; then
    echo "valgrind: FAILED"
    exit 1
fi
echo "valgrind: 0 errors, no definite leaks (simulator under load with faults, one loop and" \
    "two I/O threads; client runs of 300 requests on its own HTTP client and on libcurl;" \
    "a prediction and a virtual capacity search; a fit and a prediction from its file)"
exit 0
