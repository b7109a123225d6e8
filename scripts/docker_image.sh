#!/bin/sh
# docker_image.sh [--base-only] [DIR [TAG]]: builds the Dockerfile's image
# and shows that it works, with no container registry: the image test
# (tests/cli/t9030-docker-image.c) runs it, and so can anyone offline. --base-only
# stops after step 1 (CI makes the base images before the test suite, so
# that the download is not part of one test's time).
#   1. The base images. The Dockerfile builds on debian:12 and runs on
#      debian:12-slim. When either tag is missing, both that are missing are
#      made from Debian's own packages: `debootstrap --variant=minbase
#      bookworm` into a temporary folder, imported with `docker import`.
#      When both are here already it says so and skips this.
#   2. `docker build --network host -t TAG .` (default servelab:test), with
#      the git commit as the GIT_COMMIT build argument.
#   3. Checks of the image: `--version` and `help` answer, there is no C
#      compiler in it, and `servelab demo` runs to the end with DIR
#      (default: a temporary folder) mounted on /out, leaving DIR/demo-out.
# Every container runs with --network host (the daemon may have no bridge,
# as scripts/dockerd_start.sh starts it): nothing leaves loopback but
# apt-get's and debootstrap's downloads from deb.debian.org.
# Exit 3 when docker, its daemon, or (for the base images) debootstrap or
# root is missing; 1 when a step or a check failed, naming it.
set -eu
cd "$(dirname "$0")/.."
base_only=""
[ "${1:-}" = --base-only ] && { base_only=1; shift; }
out=${1:-}
tag=${2:-servelab:test}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

say() { echo "docker_image.sh: $*" >&2; }
missing() { say "$*"; exit 3; }
fail() { say "$*"; exit 1; }
seconds() { date +%s; }

command -v docker >/dev/null 2>&1 || missing "docker is not installed (apt-get install docker.io)"
docker info >/dev/null 2>&1 ||
    missing "no Docker daemon answers (sh scripts/dockerd_start.sh starts one)"

root="" log=""
cleanup() {
    [ -z "$log" ] || rm -f "$log"
    [ -n "$root" ] || return 0
    umount "$root/proc" "$root/sys" 2>/dev/null || true
    rm -rf --one-file-system "$root"
    rm -f "$root.log"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 1. the base images: only the tags that are missing
need=""
for t in debian:12 debian:12-slim; do
    docker image inspect "$t" >/dev/null 2>&1 || need="$need $t"
done
if [ -z "$need" ]; then
    say "debian:12 and debian:12-slim are here already: no debootstrap"
else
    command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] ||
        missing "debootstrap is not installed (apt-get install debootstrap), needed for$need"
    [ "$(id -u)" -eq 0 ] || missing "debootstrap needs root, to make$need"
    root=$(mktemp -d "${TMPDIR:-/tmp}/debian-rootfs.XXXXXX")
    t0=$(seconds)
    PATH=$PATH:/usr/sbin debootstrap --variant=minbase bookworm "$root" "$mirror" \
        >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; fail "debootstrap failed"; }
    # what apt downloaded: the Dockerfile runs apt-get update itself
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin \
        "$root"/var/lib/apt/lists/*
    first=${need# }
    first=${first%% *}
    tar -C "$root" -c . | docker import - "$first" >/dev/null || fail "docker import failed"
    for t in $need; do
        [ "$t" = "$first" ] || docker tag "$first" "$t"
    done
    say "made$need with debootstrap in $(($(seconds) - t0)) s"
    cleanup
    root=""
fi
[ -z "$base_only" ] || exit 0

# 2. the image
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
t0=$(seconds)
say "building $tag (commit $commit)..."
log=$(mktemp "${TMPDIR:-/tmp}/docker-build.XXXXXX")
# the build's own output is long: it is shown (its end) only when it fails
if ! docker build --network host --build-arg GIT_COMMIT="$commit" -t "$tag" . >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    fail "docker build failed (the end of its output is above)"
fi
size=$(docker image inspect -f '{{.Size}}' "$tag")
say "built $tag (commit $commit) in $(($(seconds) - t0)) s: $((size / 1048576)) MiB"

# 3. what the image does
run() { docker run --rm --network host "$@"; }
run "$tag" --version | grep -q '^servelab ' || fail "$tag --version printed no version"
run "$tag" help | grep -q 'demo' || fail "$tag help does not list demo"
if run --entrypoint sh "$tag" -c 'command -v cc || command -v gcc || command -v c99'; then
    fail "$tag has a C compiler: the runtime stage should carry only libraries"
fi
if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/servelab-docker-demo.XXXXXX")
fi
mkdir -p "$out"
t0=$(seconds)
run --user "$(id -u):$(id -g)" -v "$(cd "$out" && pwd):/out" "$tag" demo ||
    fail "servelab demo in $tag failed"
[ -s "$out/demo-out/report/report.html" ] ||
    fail "the demo left no $out/demo-out/report/report.html"
say "demo ran in $(($(seconds) - t0)) s: $out/demo-out"
