#!/bin/sh
# Compile-checks the GPU backend without a GPU: sdx_hip.h's implementation
# (examples/sdx_hip.cu) with nvcc for sm_80 and sm_90a (Hopper with its
# wgmma GEMMs; plain sm_90 code is the same less those) and with hipcc for
# gfx1030 and gfx90a (MFMA), plus gfx1100's device code (WMMA; Debian's
# rocm-device-libs 5.2 ships no gfx11 bitcode, so that target compiles
# device code to assembly with -nogpulib instead of a full object); and
# the C half of `make test-gpu` with the C compiler. Warnings are errors.
# A missing compiler is a SKIP line, not a failure. The compiles run side
# by side (four: on CI's two cores they overlap its other builds).
# With nvcc it also prints each kernel's registers, shared memory and
# spills for sm_90a (ptxas -v), fails when a GEMM/convolution or
# matrix-unit attention kernel spills (the hot paths: a spill there is
# local-memory traffic in the inner loop), and reads the sm_90a PTX: the
# tensor-core GEMM and attention kernels must issue matrix instructions,
# the GEMMs' fragments must come from ldmatrix, the wgmma GEMMs must copy
# asynchronously (the TMA-fed ones by boxes, 4-D ones for the
# convolutions); asynchronous copies are
# counted. A third nvcc compile (host code and sm_90a PTX) with
# SDX_HIP_PDL=1 checks that every kernel waits for the ones before it.
set -u
cd "$(dirname "$0")/.."
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)}
HIPCC=${HIPCC:-$(command -v hipcc || true)}
CC=${CC:-cc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
start=$(date +%s)

if [ -n "$NVCC" ]; then
    # one compile per target, side by side (each log its own, for the
    # per-kernel table below); -keep leaves the sm_90a PTX ptxas assembled
    nv() {  # nv ARCH [flags]: compiles the backend for sm_ARCH, ptxas -v
        arch=$1; shift
        "$NVCC" -O2 -x cu -std=c++17 -I. -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
            -gencode arch=compute_$arch,code=sm_$arch -Xptxas -v "$@" -c examples/sdx_hip.cu -o "$out/nv$arch.o" > "$out/nv$arch.log" 2>&1
    }
    ( mkdir -p "$out/keep" "$out/pdl"
      nv 80 & sm80=$!
      # SDX_HIP_PDL=1 (programmatic dependent launch), host code and
      # sm_90a PTX only (no ptxas): every kernel must wait for the one
      # before it
      "$NVCC" -O2 -x cu -std=c++17 -I. -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -DSDX_HIP_PDL=1 \
          -gencode arch=compute_90a,code=compute_90a -keep -keep-dir "$out/pdl" -c examples/sdx_hip.cu -o "$out/pdl.o" > "$out/pdl.log" 2>&1 &
      pdl=$!
      nv 90a -keep -keep-dir "$out/keep"; rc=$?
      wait $sm80 && [ $rc = 0 ] && cp "$out"/keep/*.ptx "$out/sm90.ptx"
      rc=$?
      wait $pdl && cp "$out"/pdl/*.ptx "$out/pdl.ptx"
      cat "$out/nv80.log" "$out/nv90a.log" > "$out/nv.log"
      echo $rc > "$out/nv.rc" ) &
else
    echo "SKIP nvcc: not found (on PATH or /usr/local/cuda/bin)"
fi
if [ -n "$HIPCC" ]; then
    ( HIPFLAGS="-O2 -x hip -std=c++17 -I. -Wall -Wextra -Werror -Wno-unused-command-line-argument"
      # shellcheck disable=SC2086
      "$HIPCC" $HIPFLAGS --offload-arch=gfx1100 -nogpulib --cuda-device-only -S examples/sdx_hip.cu -o "$out/gfx1100.s" > "$out/gfx1100.log" 2>&1 &
      gfx1100=$!
      # shellcheck disable=SC2086
      "$HIPCC" $HIPFLAGS --offload-arch=gfx1030 --offload-arch=gfx90a -c examples/sdx_hip.cu -o "$out/amd.o" > "$out/amd.log" 2>&1
      rc=$?
      wait $gfx1100 || rc=1
      cat "$out/gfx1100.log" >> "$out/amd.log"
      echo $rc > "$out/amd.rc" ) &
else
    echo "SKIP hipcc: not found (Debian: apt-get install hipcc libamdhip64-dev rocm-device-libs)"
fi
"$CC" -std=c11 -Wall -Wextra -Werror -fsyntax-only tests/gpu/t_gpu.c
status=$?
[ $status = 0 ] && echo "ok    C half of test-gpu (tests/gpu/t_gpu.c) with $CC" || echo "FAIL  tests/gpu/t_gpu.c with $CC"
wait
for c in nv amd; do
    [ -f "$out/$c.rc" ] || continue
    what=$([ $c = nv ] && echo "nvcc sm_80, sm_90a" || echo "hipcc gfx1030, gfx90a, gfx1100 (device code)")
    if [ "$(cat "$out/$c.rc")" = 0 ]; then echo "ok    sdx_hip.h with $what"
    else grep -v "^ptxas info" "$out/$c.log"; echo "FAIL  sdx_hip.h with $what"; status=1; fi
done

# ptxas -v, one line per kernel and target: "arch regs smem spill name"
kernels() {
    awk '/Compiling entry function/ { split($0, q, "\047"); name = q[2]; arch = q[4]; spill = 0; smem = 0 }
         /bytes spill stores/ { spill = $5 + $9 }
         /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) { if ($(i + 1) == "registers,") regs = $i
                                                             if ($(i + 1) == "bytes" && $(i + 2) ~ /^smem/) smem = $i }
                                   print arch, regs, smem, spill, name }' "$1"
}
demangle() { if command -v c++filt > /dev/null; then c++filt; else cat; fi; }
if [ "$(cat "$out/nv.rc" 2>/dev/null)" = 0 ]; then
    kernels "$out/nv.log" > "$out/kernels"
    echo "      sm_90a kernels (ptxas): registers, static shared bytes, spilled bytes"
    awk '$1 == "sm_90a" { printf "      %4d %6d %4d  ", $2, $3, $4; print $5 }' "$out/kernels" | demangle | sed 's/(.*//' | sort -k4
    hot_spills=$(awk '$5 ~ /sdx__hip_k_(gemm|attention_mma|flash_(wg)?mma)/ && $4 > 0 { print $1, $5 }' "$out/kernels" | demangle)
    if [ -n "$hot_spills" ]; then echo "$hot_spills"; echo "FAIL  GEMM/convolution/matrix-unit attention kernels spill registers"; status=1
    else echo "ok    no GEMM, convolution or matrix-unit attention kernel spills (sm_80, sm_90a)"; fi
    # per tensor-core entry (GEMM, attention) in the sm_90a PTX: matrix
    # instructions (mma.sync, or Hopper's wgmma in the wgmma GEMMs),
    # asynchronous copies, ldmatrix fragment loads
    awk '/\.entry / { name = $3; sub(/\(.*/, "", name) }
         name ~ /(gemm|attention|flash)_mma/ && /^[ \t]*(wmma\.mma|mma)\./ { mma[name]++ }
         name ~ /gemm_(wgmma|tma)|flash_wgmma/ && /^[ \t]*wgmma\.mma_async/ { mma[name]++ }
         name ~ /(gemm|attention|flash)_(wg)?mma/ && /^[ \t]*cp\.async/ { cp[name]++ }
         name ~ /gemm_tma/ && /^[ \t]*cp\.async\.bulk\.tensor/ { cp[name]++ }
         name ~ /gemm_tma/ && /^[ \t]*cp\.async\.bulk\.tensor\.4d/ { box4[name]++ }
         name ~ /(gemm|attention|flash)_mma/ && /^[ \t]*ldmatrix\./ { ldsm[name]++ }
         name ~ /(gemm|attention|flash)_(wg)?mma|gemm_tma/ { seen[name] = 1 }
         END { for (n in seen) print n, mma[n] + 0, cp[n] + 0, ldsm[n] + 0, box4[n] + 0 }' "$out/sm90.ptx" | sort > "$out/ptx"
    if [ ! -s "$out/ptx" ] || [ "$(grep -c gemm_wgmma "$out/ptx")" = 0 ] || [ "$(grep -c gemm_tma "$out/ptx")" = 0 ] ||
       [ "$(grep -c flash_wgmma "$out/ptx")" = 0 ] ||
       awk '$2 == 0 || ($1 ~ /(gemm|flash)_mma/ && $4 == 0) || ($1 ~ /gemm_(wgmma|tma)|flash_wgmma/ && $3 == 0) ||
            ($1 ~ /gemm_tmaILi2E/ && $5 == 0) { bad = 1 } END { exit !bad }' "$out/ptx"; then
        cat "$out/ptx"; echo "FAIL  a tensor-core kernel issues no matrix instruction (or a GEMM or register attention kernel no ldmatrix, a wgmma GEMM or attention no asynchronous copy or TMA box, a TMA convolution no 4-D box, or there is no wgmma or TMA GEMM or wgmma attention) in the sm_90a PTX"; status=1
    else
        echo "ok    sm_90a PTX: $(grep -c gemm_mma "$out/ptx") mma.sync, $(grep -c gemm_wgmma "$out/ptx") wgmma and $(grep -c gemm_tma "$out/ptx") TMA-fed wgmma GEMM ($(grep -c gemm_tmaILi2E "$out/ptx") of them convolutions with 4-D boxes), $(grep -c -E "(attention|flash)_mma" "$out/ptx") mma.sync and $(grep -c flash_wgmma "$out/ptx") wgmma attention kernels, $(awk '{ m += $2; c += $3; l += $4 } END { print m " matrix instructions, " c " asynchronous copies and TMA boxes, " l " ldmatrix" }' "$out/ptx")"
    fi
fi
if [ -n "$NVCC" ] && [ ! -f "$out/pdl.ptx" ]; then
    cat "$out/pdl.log"; echo "FAIL  sdx_hip.h with SDX_HIP_PDL=1 (nvcc: host code, sm_90a PTX)"; status=1
elif [ -n "$NVCC" ]; then
    # each kernel but the device probe: griddepcontrol.wait before anything
    waits=$(awk '/\.entry / { name = $3 } /griddepcontrol\.wait/ && name !~ /k_probe/ { w[name] = 1 }
                 /\.entry / && $3 !~ /k_probe/ { all[$3] = 1 } END { n = 0; for (k in all) n += !(k in w); print n, length(all) }' "$out/pdl.ptx")
    if [ "${waits%% *}" = 0 ]; then echo "ok    SDX_HIP_PDL=1: all ${waits#* } kernels wait for the kernels before them (sm_90a PTX)"
    else echo "FAIL  SDX_HIP_PDL=1: ${waits%% *} of ${waits#* } kernels never wait for the kernels before them"; status=1; fi
fi
echo "check-hip: $(( $(date +%s) - start )) s"
exit $status
