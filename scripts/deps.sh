#!/bin/sh
# Installs the Debian packages servelab builds against, only when missing, so
# that `make` on a fresh Debian/Ubuntu machine just works and is quick after.
set -e
need=""
for p in gcc make pkg-config curl libevent-dev libcurl4-openssl-dev libjansson-dev libyaml-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "deps: installing$need" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq $need >/dev/null
