#!/bin/sh
# Makes sure what servelab needs is here, so that `make` on a fresh
# Debian/Ubuntu machine just works and is quick after:
#   scripts/deps.sh        what the build needs: a C compiler, pkg-config and
#                          the libraries (libevent, libcurl, jansson, libyaml)
#   scripts/deps.sh test   plus what the tests and checks use (headless
#                          Chromium for the report's rendering test, xmllint
#                          for SVG checks, valgrind, clang with its sanitizer
#                          and fuzzer runtimes, clang-format, python3 for
#                          scripts/gguf_write.py's test)
#   scripts/deps.sh docker plus Debian's Docker daemon and client (docker.io)
#                          and debootstrap, for the image test
#                          (tests/cli/t9030-docker-image.c); `make test` does not ask
#                          for them, CI does (`deps.sh test docker`)
# Libraries are looked up with pkg-config, tools on PATH; only what is
# missing is installed, and only where apt-get exists. Elsewhere the script
# names what is missing and fails.
set -e

# pkg-config name -> Debian package
libs="libevent:libevent-dev libevent_pthreads:libevent-dev libcurl:libcurl4-openssl-dev
jansson:libjansson-dev yaml-0.1:libyaml-dev"
# command -> Debian package
tools="cc:gcc make:make"
want_test="" want_docker=""
for mode in "$@"; do
    case $mode in
    test) want_test=1 ;;
    docker) want_docker=1 ;;
    *) echo "deps: unknown mode '$mode' (test, docker)" >&2; exit 2 ;;
    esac
done
[ -n "$want_test" ] && tools="$tools curl:curl chromium:chromium xmllint:libxml2-utils
valgrind:valgrind clang:clang clang-format:clang-format python3:python3
srun:slurm-wlm munged:munge mpirun:openmpi-bin"
[ -n "$want_docker" ] && tools="$tools docker:docker.io dockerd:docker.io debootstrap:debootstrap"

have_apt() { command -v apt-get >/dev/null 2>&1; }

install() {
    echo "deps: installing$*" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "$@" >/dev/null
}

need="" missing=""
# daemons and debootstrap live in /usr/sbin, which a user's PATH may lack
for t in $tools; do
    command -v "${t%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${t%%:*}" ] ||
        { need="$need ${t#*:}"; missing="$missing ${t%%:*}"; }
done
if ! command -v pkg-config >/dev/null 2>&1; then
    if ! have_apt; then
        echo "deps: pkg-config not found: install it (servelab finds its libraries with it)" >&2
        exit 1
    fi
    install pkg-config
fi
for l in $libs; do
    pkg-config --exists "${l%%:*}" || { need="$need ${l#*:}"; missing="$missing ${l%%:*}"; }
done
# clang's sanitizer and fuzzer runtimes have no pkg-config name: look for the library.
if [ -n "$want_test" ] && { ! command -v clang >/dev/null 2>&1 ||
    [ ! -e "$(clang -print-file-name="libclang_rt.fuzzer-$(uname -m).a" 2>/dev/null)" ]; }; then
    need="$need libclang-rt-14-dev"
    missing="$missing libclang_rt.fuzzer"
fi
[ -z "$need" ] && exit 0
if ! have_apt; then
    echo "deps: missing:$missing (no apt-get here: install them with this system's packages)" >&2
    exit 1
fi
# one package may provide several of the missing names
install $(printf '%s\n' $need | sort -u)
