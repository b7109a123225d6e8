#!/bin/sh
# memlimit.sh LIMIT COMMAND [ARGS...]: runs COMMAND under a memory limit, for
# a failure search (configs/experiments/failure.yaml): in a memory cgroup of
# its own when one can be made (cgroup v2's memory.max, or v1's
# memory.limit_in_bytes with swap counted too when the kernel allows), so
# that going over is the kernel's OOM kill; else under `prlimit --as`
# (address space), where going over is an allocation that fails. LIMIT is
# bytes or a number with K, M or G (1024-based). Says which on stderr (the
# server's log) and then execs COMMAND, so its pid is COMMAND's.
set -eu
[ $# -ge 2 ] || { echo "usage: memlimit.sh LIMIT COMMAND [ARGS...]" >&2; exit 2; }
limit=$1
shift
case $limit in
*[Kk]) bytes=$(( ${limit%?} * 1024 )) ;;
*[Mm]) bytes=$(( ${limit%?} * 1024 * 1024 )) ;;
*[Gg]) bytes=$(( ${limit%?} * 1024 * 1024 * 1024 )) ;;
*[!0-9]* | '') echo "memlimit.sh: LIMIT must be bytes or a number with K, M or G, got '$limit'" >&2; exit 2 ;;
*) bytes=$limit ;;
esac

# Empty cgroups earlier runs of this script left behind.
for old in /sys/fs/cgroup/servelab-memlimit-* /sys/fs/cgroup/memory/servelab-memlimit-*; do
    [ -d "$old" ] && rmdir "$old" 2>/dev/null || true
done

try_v2() {
    base=/sys/fs/cgroup
    [ -f $base/cgroup.controllers ] && grep -qw memory $base/cgroup.controllers || return 1
    dir=$base/servelab-memlimit-$$
    mkdir "$dir" 2>/dev/null || return 1
    if echo "$bytes" > "$dir/memory.max" 2>/dev/null &&
        { echo 0 > "$dir/memory.swap.max" 2>/dev/null || true; } &&
        echo $$ > "$dir/cgroup.procs" 2>/dev/null; then
        echo "memlimit.sh: cgroup v2 $dir, memory.max $bytes bytes" >&2
        return 0
    fi
    rmdir "$dir" 2>/dev/null
    return 1
}

try_v1() {
    base=/sys/fs/cgroup/memory
    [ -f $base/memory.limit_in_bytes ] || return 1
    dir=$base/servelab-memlimit-$$
    mkdir "$dir" 2>/dev/null || return 1
    if echo "$bytes" > "$dir/memory.limit_in_bytes" 2>/dev/null &&
        echo $$ > "$dir/cgroup.procs" 2>/dev/null; then
        swap=""
        echo "$bytes" > "$dir/memory.memsw.limit_in_bytes" 2>/dev/null && swap=", swap counted"
        echo "memlimit.sh: cgroup v1 $dir, memory.limit_in_bytes $bytes bytes$swap" >&2
        return 0
    fi
    rmdir "$dir" 2>/dev/null
    return 1
}

if try_v2 || try_v1; then
    exec "$@"
fi
echo "memlimit.sh: no memory cgroup can be made here: prlimit --as=$bytes (address space)" >&2
exec prlimit --as="$bytes" -- "$@"
