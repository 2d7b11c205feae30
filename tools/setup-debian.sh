#!/bin/sh
# Installs what sdx needs on Debian/Ubuntu: a C compiler and make, stb
# (libstb-dev: stb_image_write for the PNG output), clang with libFuzzer
# for `make fuzz` (zlib1g-dev lets the inflate fuzzer cross-check), valgrind
# for `make valgrind`, locales (a test parses JSON under a ',' decimal
# point locale it builds), SDL2 (libsdl2-dev) for examples/game with Xvfb
# (xvfb, xauth: xvfb-run) for its test without a screen, libmicrohttpd and
# cJSON (libmicrohttpd-dev, libcjson-dev) for examples/sdx-server with curl
# and python3 for its test, and Debian's HIP
# compiler (hipcc, libamdhip64-dev, rocm-device-libs) so `make check-hip`
# compile-checks sdx_hip.h for AMD GPUs (nvcc comes with CUDA, not from
# here). `make cross` adds g++ (C++ builds), mingw-w64 and wine (Windows),
# gcc-aarch64-linux-gnu with its libc and qemu-user (AArch64). Uses sudo
# unless root.
set -eu
pkgs="gcc make clang libclang-rt-14-dev zlib1g-dev libstb-dev valgrind locales libsdl2-dev xvfb xauth
      libmicrohttpd-dev libcjson-dev curl python3 hipcc libamdhip64-dev rocm-device-libs
      g++ gcc-mingw-w64-x86-64 wine wine64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
need=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -n "$need" ] || exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $need >/dev/null
