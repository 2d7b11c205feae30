#!/bin/sh
# Packages fuzz/run.sh needs on Debian 12: clang 14 with libFuzzer
# (libclang_rt.fuzzer lives in libclang-rt-14-dev). zlib1g-dev is
# optional: with it the inflate harness is checked against zlib.
set -eu
need=""
for pkg in clang libclang-rt-14-dev zlib1g-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
done
[ -z "$need" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $need > /dev/null
