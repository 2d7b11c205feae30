#!/bin/sh
# Compile-checks the GPU backend without a GPU: sdx_hip.h's implementation
# (examples/sdx_hip.cu) with nvcc for sm_80 and sm_90 and with hipcc for
# gfx1030 and gfx90a (MFMA), plus gfx1100's device code (WMMA; Debian's
# rocm-device-libs 5.2 ships no gfx11 bitcode, so that target compiles
# device code to assembly with -nogpulib instead of a full object); and
# the C half of `make test-gpu` with the C compiler. Warnings are errors.
# A missing compiler is a SKIP line, not a failure. The two GPU compilers
# run side by side (2 cores).
set -u
cd "$(dirname "$0")/.."
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)}
HIPCC=${HIPCC:-$(command -v hipcc || true)}
CC=${CC:-cc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
start=$(date +%s)

if [ -n "$NVCC" ]; then
    ( "$NVCC" -O2 -x cu -std=c++17 -I. -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
        -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
        -c examples/sdx_hip.cu -o "$out/nv.o" > "$out/nv.log" 2>&1; echo $? > "$out/nv.rc" ) &
else
    echo "SKIP nvcc: not found (on PATH or /usr/local/cuda/bin)"
fi
if [ -n "$HIPCC" ]; then
    ( HIPFLAGS="-O2 -x hip -std=c++17 -I. -Wall -Wextra -Werror -Wno-unused-command-line-argument"
      # shellcheck disable=SC2086
      "$HIPCC" $HIPFLAGS --offload-arch=gfx1030 --offload-arch=gfx90a -c examples/sdx_hip.cu -o "$out/amd.o" > "$out/amd.log" 2>&1 &&
      "$HIPCC" $HIPFLAGS --offload-arch=gfx1100 -nogpulib --cuda-device-only -S examples/sdx_hip.cu -o "$out/gfx1100.s" >> "$out/amd.log" 2>&1
      echo $? > "$out/amd.rc" ) &
else
    echo "SKIP hipcc: not found (Debian: apt-get install hipcc libamdhip64-dev rocm-device-libs)"
fi
"$CC" -std=c11 -Wall -Wextra -Werror -fsyntax-only tests/gpu/t_gpu.c
status=$?
[ $status = 0 ] && echo "ok    C half of test-gpu (tests/gpu/t_gpu.c) with $CC" || echo "FAIL  tests/gpu/t_gpu.c with $CC"
wait
for c in nv amd; do
    [ -f "$out/$c.rc" ] || continue
    what=$([ $c = nv ] && echo "nvcc sm_80, sm_90" || echo "hipcc gfx1030, gfx90a, gfx1100 (device code)")
    if [ "$(cat "$out/$c.rc")" = 0 ]; then echo "ok    sdx_hip.h with $what"
    else cat "$out/$c.log"; echo "FAIL  sdx_hip.h with $what"; status=1; fi
done
echo "check-hip: $(( $(date +%s) - start )) s"
exit $status
