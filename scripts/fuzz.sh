#!/bin/sh
# fuzz: coverage-guided fuzzing of every parser that reads outside input,
# with libFuzzer, AddressSanitizer and UBSan (clang).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Targets (tests/fuzz/fuzz_NAME.c): sse chunk prompts campaign prom csv httpd h1 h1parse rows
# schema profile replay vllm_import
# (default: all, one after another; FUZZ_JOBS=2 runs two at a time).
#
# Builds the library objects with the fuzzer flags into build-fuzz/obj (via
# the Makefile, so only what changed is rebuilt) and each target into
# build-fuzz/fuzz_NAME, then runs each for SECONDS_PER_TARGET (default 60)
# on its committed seeds, tests/fuzz/corpus/NAME/ (read only), plus a
# scratch corpus, build-fuzz/corpus/NAME/, where new inputs go. Prints one
# line per target with runs, execs/s and coverage, "no crash" or the file
# holding the crashing input (build-fuzz/crashes/), and exits 1 if any
# target crashed, leaked or timed out (2 when it could not build).
#
# To replay a crash: build-fuzz/fuzz_NAME FILE. To minimise one:
#   build-fuzz/fuzz_NAME -minimize_crash=1 -runs=100000 FILE
set -u
cd "$(dirname "$0")/.." || exit 2

secs=60
case "${1:-}" in
[0-9]*) secs=$1; shift ;;
esac
all="sse chunk prompts campaign prom csv httpd h1 h1parse rows schema profile replay vllm_import"
targets=${*:-$all}
jobs=${FUZZ_JOBS:-1}
out=build-fuzz

for t in $targets; do
    case " $all " in
    *" $t "*) ;;
    *) echo "fuzz: unknown target '$t' (known: $all)" >&2; exit 2 ;;
    esac
done

# ---- toolchain ----
if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz: clang not found; libFuzzer comes with clang." >&2
    echo "      On Debian/Ubuntu: sudo apt-get install clang (and libclang-rt-dev if" >&2
    echo "      -fsanitize=fuzzer then fails to link)." >&2
    exit 2
fi
mkdir -p "$out/obj" "$out/crashes" "$out/logs" || exit 2
printf '*\n' >"$out/.gitignore"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) {\n(void)d; (void)n; return 0; }\n' \
    >"$out/probe.c"
if ! clang -fsanitize=fuzzer,address,undefined -o "$out/probe" "$out/probe.c" 2>"$out/logs/probe.log"; then
    echo "fuzz: clang cannot build with -fsanitize=fuzzer,address,undefined:" >&2
    sed 's/^/      /' "$out/logs/probe.log" >&2
    echo "      On Debian/Ubuntu the runtime is in libclang-rt-dev (libclang-rt-NN-dev)." >&2
    exit 2
fi
sh scripts/deps.sh || exit 2

# ---- build ----
pkgs="libevent libcurl jansson yaml-0.1"
libs="$(pkg-config --libs $pkgs) -levent_pthreads -lpthread -lm -ldl"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-O1 -g $san"
objs=""
for s in src/*/*.c; do
    [ "$s" = src/cli/main.c ] && continue
    objs="$objs $out/obj/${s%.c}.o"
done
echo "fuzz: building library objects into $out/obj"
if ! make -k -s -j"$(nproc 2>/dev/null || echo 2)" BUILD="$out/obj" CC=clang \
    CFLAGS="$cflags -fsanitize=fuzzer-no-link" $objs >"$out/logs/build.log" 2>&1; then
    echo "fuzz: warning: some sources did not compile (see $out/logs/build.log);" \
        "targets that need them will fail to link" >&2
fi
rm -f "$out/libservelab.a"
ar rcs "$out/libservelab.a" $(ls $objs 2>/dev/null) || exit 2
built=""
for t in $targets; do
    if clang -std=c17 -D_GNU_SOURCE -Wall -Wextra -Isrc -Itests/fuzz $cflags -fsanitize=fuzzer \
        -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" "$out/libservelab.a" $libs \
        >"$out/logs/build-$t.log" 2>&1; then
        built="$built $t"
        [ -s "$out/logs/build-$t.log" ] && cat "$out/logs/build-$t.log" >&2
    else
        echo "fuzz: $t: build failed:" >&2
        sed 's/^/      /' "$out/logs/build-$t.log" >&2
    fi
done

# ---- run ----
max_len() {
    case $1 in
    sse | prom) echo 65536 ;;
    chunk) echo 16384 ;;
    httpd) echo 32768 ;;
    h1) echo 16384 ;;
    *) echo 32768 ;;
    esac
}

run_one() {
    t=$1
    mkdir -p "$out/corpus/$t"
    dict=""
    [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
    rm -f "$out/crashes/$t-"*
    nice -n 10 "$out/fuzz_$t" "$out/corpus/$t" "tests/fuzz/corpus/$t" $dict \
        -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$out/crashes/$t-" -print_final_stats=1 \
        >"$out/logs/$t.log" 2>&1
    echo $? >"$out/logs/$t.rc"
}

report() {
    t=$1
    log="$out/logs/$t.log"
    rc=$(cat "$out/logs/$t.rc" 2>/dev/null || echo 1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -z "$runs" ] && runs=$(grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ "$rc" = 0 ] && [ -z "$crash" ]; then
        verdict="no crash"
    else
        verdict="CRASH ${crash:-(exit $rc, see $log)}"
        failed=1
    fi
    printf '%-9s runs %-9s execs/s %-6s cov %-6s ft %-6s %s\n' "$t" "${runs:-?}" \
        "${eps:-?}" "${cov:-?}" "${ft:-?}" "$verdict"
}

failed=0
echo "fuzz: $secs s per target:$built"
set -- $built
while [ $# -gt 0 ]; do
    batch=""
    i=0
    while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
        run_one "$1" &
        batch="$batch $1"
        i=$((i + 1))
        shift
    done
    wait
    for t in $batch; do
        report "$t"
    done
done
for t in $targets; do
    case " $built " in
    *" $t "*) ;;
    *) printf '%-9s BUILD FAILED (see %s)\n' "$t" "$out/logs/build-$t.log"; exit 2 ;;
    esac
done
exit $failed
