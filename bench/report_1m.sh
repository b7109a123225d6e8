#!/bin/sh
# Benchmark: `servelab report` on one run of 1,000,000 request rows and
# 8,000,000 chunk rows (8 chunks a request), synthetic but in the exact
# format `servelab run` writes. Prints wall time and peak RSS for each of
# REPEAT runs and their medians; with OLD=BINARY, that binary's too, run
# for run side by side on the same files, the ratio of the medians, and
# whether the two reports are the same byte for byte. Target: under 3 s
# and 400 MiB (or under 0.35 of OLD's time).
#   sh bench/report_1m.sh [REQUESTS] [REPEAT]
#   OLD=/path/to/older/servelab sh bench/report_1m.sh
set -e
N=${1:-1000000}
REPEAT=${2:-3}
BIN=${SERVELAB:-./servelab}
DIR=$(mktemp -d /tmp/servelab-bench-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
. "$(dirname "$0")/side_by_side.sh"
mkdir -p "$DIR/run"
echo "generating $N requests and $((N * 8)) chunks in $DIR ..."
awk -v n="$N" 'BEGIN {
    srand(1);
    print "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms" > "'"$DIR"'/run/requests.csv";
    print "request_id,index,t_ms,tokens" > "'"$DIR"'/run/chunks.csv";
    for (i = 0; i < n; i++) {
        s = i * 10.0; sent = s + 0.05; f = sent + 20 + rand() * 200; t = f;
        for (k = 0; k < 8; k++) {
            if (k) t += 5 + rand() * 30;
            printf "req-%d,%d,%.3f,1\n", i, k, t > "'"$DIR"'/run/chunks.csv";
        }
        cls = (i % 3 == 0) ? "short" : (i % 3 == 1) ? "medium" : "long";
        err = (i % 97 == 0) ? "timeout" : "";
        printf "req-%d,%s,%.3f,%.3f,%.3f,%.3f,%.3f,120,8,%.3f,%.3f,%.3f,length,200,%s,8,0.010\n",
            i, cls, s, sent, f, t, t + 0.1, f - sent, (t - f) / 7, t + 0.1 - sent, err > "'"$DIR"'/run/requests.csv";
    }
}'
ls -la "$DIR/run"
for r in $(seq 1 "$REPEAT"); do
    if [ -n "${OLD:-}" ]; then
        rm -rf "$DIR/rep-old"
        timed old "run $r old:" "$OLD" report "$DIR/run" --out "$DIR/rep-old"
    fi
    rm -rf "$DIR/rep"
    timed new "run $r:    " "$BIN" report "$DIR/run" --out "$DIR/rep"
done
medians new "" "target: < 3 s, < 400 MiB"
if [ -n "${OLD:-}" ]; then
    medians old "old "
    echo "ratio new/old: $(ratio new old) (target: < 0.35)"
    if diff -r "$DIR/rep" "$DIR/rep-old" > /dev/null; then echo "reports: the same byte for byte"
    else echo "reports: DIFFER"; fi
fi
