# side_by_side: sourced by the benches that time a command beside an older
# binary's, run for run on the same files (report_1m.sh, merge_shards.sh).
# Needs $DIR (a scratch directory). Each timed run is recorded in two lists
# named after it: NAME_times (wall seconds) and NAME_rss (peak RSS, KiB).
#
#   timed NAME LABEL CMD...  runs CMD (its stdout dropped) under /usr/bin/time,
#                            prints "LABEL T s wall, M MiB peak RSS" and records
#                            it; when CMD fails, prints why and returns 1
#   med LIST...              the median of the numbers given
#   medians NAME LABEL [TARGET]  "LABEL median: T s wall, M MiB peak RSS (TARGET)"
#   ratio NEW OLD            NEW's median time over OLD's, two decimals

timed() {
    name=$1
    label=$2
    shift 2
    if ! /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" >/dev/null; then
        echo "$label failed: $(head -1 "$DIR/time.txt")"
        return 1
    fi
    read -r t m <"$DIR/time.txt"
    echo "$label ${t} s wall, $((m / 1024)) MiB peak RSS"
    eval "${name}_times=\"\${${name}_times:-} $t\"; ${name}_rss=\"\${${name}_rss:-} $m\""
}

med() { echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

medians() {
    eval "t=\$${1}_times; m=\$${1}_rss"
    echo "$2median: $(med $t) s wall, $(($(med $m) / 1024)) MiB peak RSS${3:+ ($3)}"
}

ratio() {
    eval "a=\$${1}_times; b=\$${2}_times"
    awk -v a="$(med $a)" -v b="$(med $b)" 'BEGIN {printf "%.2f", a / b}'
}
