#!/bin/sh
# Benchmark: what each part of the client's design is worth, side by side.
# At one calibrate level (default 5,000 streams with a 50 ms step, i.e.
# 100,000 chunks/s) it runs, interleaved, REPEAT times each:
#   A  as shipped: servelab's own HTTP/1.1 client with kernel receive times,
#      simulator and client pinned to separate CPUs, both SCHED_FIFO
#   B  the same with libcurl (--http-client libcurl: user-space read times)
#   C  the own client, neither pinned nor SCHED_FIFO (--no-pin --no-realtime)
# and prints the medians of schedule lag, TTFT and inter-token error p99 and
# client CPU, then the ratios B/A and C/A.
#   sh bench/client_compare.sh [REPEAT]
set -e
REPEAT=${1:-3}
LEVEL=${LEVEL:-5000@50}
BIN=${SERVELAB:-./servelab}
ROWS=$(mktemp)
trap 'rm -f "$ROWS"' EXIT
i=0
while [ "$i" -lt "$REPEAT" ]; do
    i=$((i + 1))
    for v in A B C; do
        case $v in
        A) args= ;;
        B) args="--http-client libcurl" ;;
        C) args="--no-pin --no-realtime" ;;
        esac
        echo "client_compare: $v run $i/$REPEAT ..." >&2
        # shellcheck disable=SC2086
        "$BIN" calibrate --levels "$LEVEL" --seconds 3 $args --save /dev/null 2>/dev/null |
            awk -v v="$v" 'NR == 2 { sub("%", "", $12); print v, $7, $9, $11, $12, $5 }' >>"$ROWS"
    done
done
median() { # variant column
    awk -v v="$1" -v c="$2" '$1 == v { print $c }' "$ROWS" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
printf '%-44s %10s %10s %10s %8s %10s\n' "variant ($LEVEL, medians of $REPEAT)" "lag p99" \
    "ttft p99" "itl p99" "cli cpu" "achieved"
for v in A B C; do
    case $v in
    A) name="A own client, pinned, SCHED_FIFO" ;;
    B) name="B libcurl, pinned, SCHED_FIFO" ;;
    C) name="C own client, not pinned, normal prio" ;;
    esac
    printf '%-44s %10s %10s %10s %7s%% %10s\n' "$name" "$(median $v 2)" "$(median $v 3)" \
        "$(median $v 4)" "$(median $v 5)" "$(median $v 6)"
done
for v in B C; do
    printf '%s/A: lag p99 x%s, ttft p99 x%s, itl p99 x%s, client cpu x%s\n' "$v" \
        "$(awk -v a="$(median A 2)" -v b="$(median $v 2)" 'BEGIN { printf "%.1f", b / a }')" \
        "$(awk -v a="$(median A 3)" -v b="$(median $v 3)" 'BEGIN { printf "%.1f", b / a }')" \
        "$(awk -v a="$(median A 4)" -v b="$(median $v 4)" 'BEGIN { printf "%.1f", b / a }')" \
        "$(awk -v a="$(median A 5)" -v b="$(median $v 5)" 'BEGIN { printf "%.2f", b / a }')"
done
