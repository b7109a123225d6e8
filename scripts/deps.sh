#!/bin/sh
# Installs the Debian packages servelab needs, only when missing, so that
# `make` on a fresh Debian/Ubuntu machine just works and is quick after.
#   scripts/deps.sh        what the build needs
#   scripts/deps.sh test   plus what the tests use (headless Chromium for the
#                          report's rendering test, xmllint for SVG checks,
#                          valgrind, clang with its sanitizer and fuzzer runtimes)
set -e
pkgs="gcc make pkg-config curl libevent-dev libcurl4-openssl-dev libjansson-dev libyaml-dev"
[ "$1" = test ] && pkgs="$pkgs chromium libxml2-utils valgrind clang libclang-rt-14-dev"
need=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "deps: installing$need" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq $need >/dev/null
