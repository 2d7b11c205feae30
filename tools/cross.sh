#!/bin/sh
# The portability checks of `make cross` (CI runs them before `make test`):
#
#   lang    the implementation compiles as C99 and C11 (gcc, clang) and as
#           C++11, C++17 and C++20 (g++, clang++), -Wall -Wextra -Wpedantic
#           -Werror; the C++ test (tests/t_cpp.cpp, g++ -std=c++17) and
#           examples/cpp_host run a tiny generation
#   nosimd  -DSDX_NO_SIMD: no SIMD header is included (x86-64 and AArch64)
#           and the test suite passes on that scalar-only build
#   win64   mingw-w64 cross build of the test suite and the CLI, run
#           under wine
#   arm64   aarch64-linux-gnu build (NEON kernels), run under qemu-user
#
#   tools/cross.sh [lang] [nosimd] [win64] [arm64]     default: all four
#
# The steps' compiles run first, CROSS_JOBS at a time (default: one per
# core), then each step's tests.
#
# What each non-native run leaves out (lists below): the add-on and
# pipeline-feature suites (img2img, LoRA, embeddings, ControlNet, TAESD,
# stages, tiling, examples, the server, the fake device's whole
# generations) compute
# nothing the kernels, UNet and VAE goldens do not already cover, so they
# run natively only (FEATURE_SKIP); so do the allocation-failure sweeps
# and the large tiled decodes (HEAVY_SKIP). wine runs the rest (cases
# that need a POSIX shell, fork or named pipes skip and say so), and so
# does the SDX_NO_SIMD build (NOSIMD_SKIP). qemu-user is some 40 times
# slower: the AArch64 run keeps what the NEON code computes (ARM_SUITES:
# kernels, the int8 GEMM, half floats, the UNet goldens of all three families, the SD
# 1.x VAE goldens) without the f16/bf16 storage and activation variants
# (their conversions are t_half's, checked bit for bit), VAE tiling,
# the 2-million-value scalar half-float sweeps and the quantized-weight
# bit-for-bit sweeps (ARM_SKIP: their dequantizers and packers are plain C,
# the same as the native run's portable-packer case, and what then reaches
# the NEON kernel is f32 panels, which kernels.linear_* check). The
# SDX_NO_SIMD and AArch64 suites run in two processes (tests/run -j2:
# a case leaves a core idle much of its time), and wine's in two runs of
# half the cases each (--part: its build has no fork).
# Every step prints its time. Needs tools/setup-debian.sh's packages and ../shared
# for the golden cases (they skip without it).
set -eu
cd "$(dirname "$0")/.."
STEPS=${*:-lang nosimd win64 arm64}
OUT=build/cross
WARN="-Wall -Wextra -Wpedantic -Werror"
mkdir -p "$OUT/include"
# the stb headers of libstb-dev, without the rest of /usr/include
ln -sfn /usr/include/stb "$OUT/include/stb"
STB="-isystem $OUT/include tests/stb_impl.c"

# Cases left out (each --skip is a substring of "suite.case").
# The add-on and pipeline-feature suites compute with the kernels and
# models the golden suites check; natively they run in `make test`, on
# the other builds they are left out to keep CI within its time.
FEATURE_SKIP="--skip img2img. --skip lora. --skip embedding. --skip controlnet. --skip taesd. --skip stages.
          --skip tiling. --skip examples. --skip backend.generations --skip backend.every_data_path --skip mkckpt.shrunk_
          --skip bf16.generations --skip bf16.same_seed --skip hires. --skip upscale. --skip sources.
          --skip fewstep.turbo_one_step --skip fewstep.lcm_prediction_through --skip gguf.sdx_converts_from_the_command_line
          --skip refiner. --skip server."
# Under qemu (some 40 times slower) only what the NEON code computes: the
# kernels and half floats, the UNet goldens and the SD 1.x VAE goldens
# (the samplers and the pipeline around them are plain C, the same on
# every target).
ARM_SUITES="kernels. quantmm. half. rng. core. precision. unet. vae.sd1_"
# The allocation-failure sweeps repeat whole loads and generations
# thousands of times; their failure paths are plain C, swept natively and
# under ASan (make sanitize). Like the large tiled decodes, they are left
# out of the other builds, and so is the decode retried in tiles after
# running out of memory (several 512x512 decodes, tiled and untiled).
HEAVY_SKIP="--skip robust.generation_survives --skip robust.controlnet_generation --skip pipeline.half_storage
          --skip vae.tiled_512px --skip vae.tiled_working_set --skip vae.out_of_memory_decode"
NOSIMD_SKIP="--skip pipeline.cli_ $HEAVY_SKIP $FEATURE_SKIP --skip kernels.conv3x3_winograd_unet_layers"
WIN_SKIP="$HEAVY_SKIP $FEATURE_SKIP"
ARM_SKIP="$NOSIMD_SKIP --skip pipeline.sd2_ --skip pipeline.sdxl_ --skip vae.sd2_ --skip vae.sdxl_
          --skip unet.goldens_f16 --skip unet.goldens_bf16 --skip vae.sd1_goldens_f16 --skip vae.sd1_goldens_bf16
          --skip vae.tile --skip vae.tiled_ --skip vae.sd1_tiled --skip vae.single_tile --skip vae.auto_tiling --skip vae.memory_estimate
          --skip half.f16_random_bits --skip half.bf16_random_bits --skip precision.half_activations
          --skip kernels.linear_quantized_weights_equal --skip kernels.conv2d_quantized_filters_equal"

step() { printf '== cross %s\n' "$*"; }
timed() {   # timed LABEL CMD...: runs CMD, prints how long it took
    label=$1; shift
    t0=$(date +%s)
    "$@"
    printf -- '-- %s: %ss\n' "$label" $(( $(date +%s) - t0 ))
}
# run_tests NAME CMD...: the full log goes to $OUT/NAME.log, failures,
# skips and the summary to the terminal; the summary must show no failure
run_tests() {
    log="$OUT/$1.log"; shift
    "$@" | tee "$log" | grep -E '^  (FAIL|SKIP)|passed,'
    ! grep -q '^  FAIL' "$log" && grep -q ' 0 failed' "$log"
}
# run_parts NAME N CMD...: run_tests with CMD's cases in N runs side by
# side (--part K/N: where -j cannot fork), the N logs joined in order and
# one summary for all; each run must end with its own summary (wine's
# lines end in CR LF)
run_parts() {
    name=$1 parts=$2; shift 2
    pids=""
    for k in $(seq "$parts"); do
        "$@" --part "$k/$parts" > "$OUT/$name.$k.log" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p" || true; done
    for k in $(seq "$parts"); do cat "$OUT/$name.$k.log"; done > "$OUT/$name.log"
    grep -E '^  (FAIL|SKIP)' "$OUT/$name.log" || true
    awk '{ sub(/\r$/, "") } / passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $1; f += $3; s += $5; runs++ }
         END { printf "%d passed, %d failed, %d skipped (%d runs)\n", p, f, s, runs; exit !(runs == '"$parts"' && f == 0) }' "$OUT/$name.log" &&
        ! grep -q '^  FAIL' "$OUT/$name.log"
}

sdx_h_tu() { printf '#define SDX_IMPLEMENTATION\n#include "sdx.h"\nint main(void) { return sdx_create(0) == 0; }\n'; }

# The compiles, one function each; a step's run needs its builds.
b_lang() {
    sdx_h_tu > "$OUT/tu.c"
    cp "$OUT/tu.c" "$OUT/tu.cpp"
    for cc in gcc clang; do
        for std in c99 c11; do $cc -std=$std $WARN -I. -fsyntax-only "$OUT/tu.c" || return 1; done
    done
    for cxx in g++ clang++; do
        for std in c++11 c++17 c++20; do $cxx -std=$std $WARN -I. -fsyntax-only "$OUT/tu.cpp" || return 1; done
    done
    echo "ok: 4 C and 6 C++ compiles"
}
b_cpp_test() { g++ -std=c++17 -O2 $WARN -o tests/run-cpp tests/t_cpp.cpp -lm -lpthread; }
b_cpp_host() { make -s examples/cpp_host; }     # the Makefile's build, -Wpedantic (up to date after make all)
b_nosimd() {
    sdx_h_tu > "$OUT/tu-nosimd.c"
    for cc in gcc aarch64-linux-gnu-gcc; do
        if $cc -DSDX_NO_SIMD -I. -E "$OUT/tu-nosimd.c" | grep -E '^# [0-9]+ ".*(immintrin|x86intrin|arm_neon|cpuid)\.h"' >/dev/null; then
            echo "SDX_NO_SIMD build with $cc still includes a SIMD header" >&2
            return 1
        fi
        $cc -I. -E "$OUT/tu-nosimd.c" | grep -qE '^# [0-9]+ ".*(immintrin|arm_neon)\.h"' ||
            { echo "$cc: the SIMD build includes no SIMD header: is the check still meaningful?" >&2; return 1; }
    done
    echo "ok: no SIMD header with -DSDX_NO_SIMD (x86-64, AArch64)"
    gcc -std=c11 -O2 -Wall -Wextra -Werror -DSDX_NO_SIMD -o "$OUT/run-nosimd" tests/main.c -lstb -lm -lpthread
}
b_win64_tests() { x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$OUT/run-win64.exe" tests/main.c $STB -static -lpthread; }
b_win64_cli() { x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Werror -I. -o "$OUT/sdx.exe" examples/sdx.c $STB -static -lpthread; }
b_arm64() { aarch64-linux-gnu-gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$OUT/run-arm64" tests/main.c $STB -static -lm -lpthread; }
builds_of() {
    case $1 in
    lang) echo "b_lang b_cpp_test b_cpp_host" ;;
    nosimd) echo b_nosimd ;;
    win64) echo "b_win64_tests b_win64_cli" ;;
    arm64) echo b_arm64 ;;
    esac
}

# The runs.
lang() {
    step "C++ test and host (g++ -std=c++17)"
    run_tests cpp ./tests/run-cpp
    if [ -f ../shared/golden/sd1/model.safetensors ]; then
        SDX_VOCAB=../shared/vocab ./examples/cpp_host ../shared/golden/sd1/model.safetensors "a cat" "$OUT/cat.ppm" 2 64
    else
        echo "SKIP examples/cpp_host run: ../shared/golden/sd1 not found"
    fi
}
nosimd() {
    step "SDX_NO_SIMD"
    # shellcheck disable=SC2086
    run_tests nosimd "$OUT/run-nosimd" -j2 $NOSIMD_SKIP
}
# The CLI's tiny generation under wine, written as a PNG with its
# parameters; prints its last line.
win64_cli() {
    rm -f "$OUT/win64.png"
    wine "$OUT/sdx.exe" -m ../shared/golden/sd1/model.safetensors --vocab ../shared/vocab -p "a red fox" \
        -W 64 -H 64 --steps 2 -s 3 -o "$OUT/win64.png" 2>&1 | tail -1
}
win64() {
    step "mingw-w64 build under wine"
    export WINEPREFIX="${WINEPREFIX:-$PWD/$OUT/wine}" WINEDEBUG=-all
    [ -d "$WINEPREFIX" ] || wine wineboot -i >/dev/null 2>&1 || true
    # shellcheck disable=SC2086
    run_parts win64 2 wine "$OUT/run-win64.exe" $WIN_SKIP
    # the CLI: a tiny generation written as a PNG with its parameters
    if [ -f ../shared/golden/sd1/model.safetensors ]; then
        cli_log=$(win64_cli)
        # wine's client losing its wineserver ("wine client error: recvmsg:
        # Connection reset by peer", most likely the server exiting as the
        # client connected) is wine's failure, not sdx.exe's: that one runs again
        case "$cli_log" in *"wine client error"*) echo "$cli_log (wine; again)"; cli_log=$(win64_cli) ;; esac
        echo "$cli_log"
        grep -aq 'Steps: 2, Sampler' "$OUT/win64.png" || { echo "win64: sdx.exe wrote no PNG with parameters" >&2; return 1; }
        echo "ok: examples/sdx.exe under wine"
    else
        echo "SKIP examples/sdx.exe run: ../shared/golden/sd1 not found"
    fi
}
arm64() {
    step "aarch64 build (NEON) under qemu-user"
    # shellcheck disable=SC2086
    run_tests arm64 qemu-aarch64 "$OUT/run-arm64" -j2 $ARM_SUITES $ARM_SKIP
}

builds=""
for s in $STEPS; do
    case $s in
    lang|nosimd|win64|arm64) builds="$builds $(builds_of "$s")" ;;
    *) echo "tools/cross.sh: unknown step '$s' (lang, nosimd, win64, arm64)" >&2; exit 2 ;;
    esac
done
. tools/batch.sh
step "builds:$builds"
# shellcheck disable=SC2086
timed builds in_batches "" "${CROSS_JOBS:-$(cores)}" "$OUT/builds" $builds
for s in $STEPS; do timed "$s" "$s"; done
