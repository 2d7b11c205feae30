#!/bin/sh
# A lent GPU's few minutes, prepared (README, "GPU"). Two steps:
#
#   sh tools/gpu-session.sh prepare [AREA...]
#       here, without a GPU: builds the GPU binaries with nvcc (sm_90a, the
#       lent H100s and H200s, with the wgmma GEMMs: tests/gpu/run and
#       bench/bench_gpu, which need no libstb on the GPU machine) and copies
#       ../shared/vocab and the golden AREAs (default: sd1 and controlnet) into
#       build/gpu-carry/shared, then prints what a device call must carry:
#       that folder alone, the binaries in it gzipped (2 MB each instead
#       of 7; `run` unpacks them, the default build's into the tree)
#       (`prepare gguf controlnet` instead: the q8_0 GGUF model, whose f16
#       linears take the matrix units end to end with half activations;
#       sd1 and gguf together pass the 64 MiB).
#       It also puts there bench_gpu and the gpu suite built with other
#       macros, for the `ab` part (and `test`, which runs each variant's
#       suite too): SDX_GPU_VARIANTS="NAME=-DMACRO=VALUE,-DMACRO2=VALUE ..."
#       (default: wga=-DSDX_HIP_FLASH_WGMMA=1, attention up to head dim 80
#       on wgmma; epi=-DSDX_HIP_EPI_PREFETCH=1, the Hopper GEMMs' residual
#       fetched before the epilogue; pdl=-DSDX_HIP_PDL=1, programmatic
#       dependent launch; tconv=-DSDX_HIP_TMA_CONV=1, stride-1
#       channels-last convolutions fed by the TMA in 4-D boxes;
#       plan2=-DSDX_HIP_SPLIT_WAVES=0, the GEMM planner's split of k as
#       before 2026-11-29, counting two blocks an SM of the wgmma kernels;
#       wga1=-DSDX_HIP_FLASH_WGMMA=1,-DSDX_HIP_FLASH_WGS=1 the same in
#       blocks of one warpgroup;
#       wgcopy=-DSDX_HIP_TMA=0 feeds the linears' wgmma tiles by the
#       threads' asynchronous copies instead of the TMA; mma=-DSDX_HIP_WGMMA=0
#       gives the mma.sync 128-tiles instead of wgmma).
#   sh tools/gpu-session.sh run [test] [bench] [kernels] [ncu] [ncu-sdxl] [split] [gemm-profile] [ab]
#       on the GPU machine: the card, then the parts named (default: all),
#       `make test-gpu`'s binary against the carried goldens, with each
#       variant's suite beside it (all at once, 200 s at most, the
#       device-filling case then alone for each, 60 s at most), bench-gpu beside PyTorch eager (250 s), each GEMM,
#       convolution and attention shape of the two UNet steps alone beside
#       PyTorch (bench_gpu --kernels; 45 s), an ncu kernel-time profile of
#       one SD 1.5 CFG step (time per kernel, launches; 140 s), the same
#       for SDXL (ncu-sdxl, not in the default parts; 200 s), PyTorch
#       eager's GPU time of a step by kind of kernel beside sdx's from
#       the ncu parts (split, not in the default parts: name it with ncu
#       and ncu-sdxl; 120 s, more on a fresh machine), ncu's
#       sections for one convolution and two linear GEMM launches
#       (gemm-profile, not in the default parts; 180 s), the default build
#       and the variants one after the other: every kernel shape and a UNet
#       step of each model (ab, not in the default parts; about 25 s a build
#       after bench, whose checkpoints it reuses, up to 230 s more on a
#       fresh machine), and a short table last. Logs go to $OUT (the device tool's folder)
#       or build/gpu-session. The device tool allows 10 minutes a call:
#       name parts whose limits add up to less (`test` with five
#       variants takes up to 500 s, usually far less; `bench ab` together
#       about 550 with four variants and 25 s more a variant: with five,
#       `ab` in a call of its own is safer).
set -u
cd "$(dirname "$0")/.."
CARRY=build/gpu-carry
BIN=build/gpu-bin       # the variants' binaries, unpacked on the GPU machine

prepare() {
    shared=${SDX_SHARED:-../shared}
    areas=${*:-sd1 controlnet}
    # the lent GPUs are Hopper (H100, H200): their code alone, to carry
    # less; the next plain build makes examples/sdx_hip.o for every arch again
    variants=${SDX_GPU_VARIANTS:-wga=-DSDX_HIP_FLASH_WGMMA=1 epi=-DSDX_HIP_EPI_PREFETCH=1 pdl=-DSDX_HIP_PDL=1 tconv=-DSDX_HIP_TMA_CONV=1 plan2=-DSDX_HIP_SPLIT_WAVES=0}
    hopper="-gencode arch=compute_90a,code=sm_90a"
    rm -f examples/sdx_hip.o tests/gpu/run bench/bench_gpu bench/bench_gpu-*
    make -s tests/gpu/run bench/bench_gpu GPU=cuda NV_ARCH="$hopper" || exit 1
    rm -rf "$CARRY"
    mkdir -p "$CARRY/shared/golden"
    # the variants two at a time (nvcc takes minutes, and a core each)
    set -- $variants
    while [ $# -gt 0 ]; do
        for v in "$1" "${2:-}"; do
            [ -n "$v" ] || continue
            make -s "bench/bench_gpu-${v%%=*}" "tests/gpu/run-${v%%=*}" GPU=cuda NV_ARCH="$hopper" \
                GPU_VARIANT="$(printf %s "${v#*=}" | tr , ' ')" &
        done
        wait
        shift; [ $# -gt 0 ] && shift
    done
    # compressed (a binary is 7 MB, 2 MB so): `run` unpacks them there
    gzip -9 -c tests/gpu/run > "$CARRY/run.gz" && gzip -9 -c bench/bench_gpu > "$CARRY/bench_gpu.gz" || exit 1
    for v in $variants; do
        for bin in "bench/bench_gpu-${v%%=*}" "tests/gpu/run-${v%%=*}"; do
            gzip -9 -c "$bin" > "$CARRY/${bin##*/}.gz" || exit 1
        done
    done
    rm -f examples/sdx_hip.o examples/sdx_hip-*.o
    cp -r "$shared/vocab" "$CARRY/shared/" || exit 1
    for a in $areas; do
        if [ "$a" = gguf ]; then    # the gpu suite reads one file there (15 MB of the area's 21)
            mkdir -p "$CARRY/shared/golden/gguf" && cp "$shared/golden/gguf/sd1-q8_0.gguf" "$CARRY/shared/golden/gguf/" || exit 1
        else
            cp -r "$shared/golden/$a" "$CARRY/shared/golden/" || exit 1
        fi
    done
    du -ch "$CARRY" | tail -n 1 | sed 's/total/to carry (the limit is 64 MiB with the checkout)/'
    echo "carry: [\"$CARRY\"]"
    echo "command: sh tools/gpu-session.sh run"
}

has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# "-NAME" for a variant's binary (BIN/run-NAME), "" for the default build's
suffix() { case ${1##*/} in run-*) echo "-${1##*/run-}" ;; *) echo "" ;; esac; }

run() {
    parts=${*:-test bench kernels ncu}
    out=${OUT:-build/gpu-session}
    mkdir -p "$out"
    export SDX_SHARED="$PWD/$CARRY/shared"
    # the binaries prepare packed: the default build's to their places
    # in the tree, the variants' into $BIN (with any unpacked ones the
    # carry holds, e.g. another tree's bench_gpu-NAME copied there)
    rm -rf "$BIN" && mkdir -p "$BIN" || exit 1
    for f in "$CARRY"/*; do
        case ${f##*/} in
            run.gz) dest=tests/gpu/run ;;
            bench_gpu.gz) dest=bench/bench_gpu ;;
            run-*.gz | bench_gpu-*.gz) dest=$BIN/$(basename "$f" .gz) ;;
            run-* | bench_gpu-*) [ -x "$f" ] && ln -sf "$PWD/$f" "$BIN/"; continue ;;
            *) continue ;;
        esac
        gunzip -c "$f" > "$dest" && chmod +x "$dest" || { echo "cannot unpack $f"; exit 1; }
    done
    { nvidia-smi -L 2>/dev/null || rocm-smi --showproductname 2>/dev/null || echo "no GPU tool"; } | tee "$out/card.txt"
    if has test; then
        # the default build's suite and each variant's (its macros' code
        # checked before it is timed) side by side: the CPU sides of
        # their comparisons share the machine's 16 cores, the kernels the
        # card; the one case that fills the device's memory then runs
        # alone for each build
        echo "== test-gpu, the default build and the variants side by side (goldens: $(ls "$SDX_SHARED/golden" | tr '\n' ' '))"
        builds="./tests/gpu/run"
        for bin in "$BIN"/run-*; do [ -x "$bin" ] && builds="$builds $bin"; done
        for bin in $builds; do
            log=$out/test-gpu$(suffix "$bin").log
            { timeout 200 "$bin" -v --skip out_of_memory > "$log" 2>&1; echo "rc=$?" >> "$log"; } &
        done
        wait
        for bin in $builds; do
            log=$out/test-gpu$(suffix "$bin").log
            timeout 60 "$bin" -v out_of_memory >> "$log" 2>&1
            echo "rc=$?" >> "$log"
            echo "== test-gpu${bin##*/run}"
            if [ "$bin" = ./tests/gpu/run ]; then grep -E "^  (ok|FAIL|SKIP)|passed|rc=|rel-L2" "$log" | cut -c1-220
            else grep -E "^  FAIL|passed|rc=" "$log"; fi
        done
    fi
    if has bench; then
        echo "== bench-gpu (3 calls a model, beside PyTorch eager)"
        timeout 250 sh bench/bench_gpu.sh --calls 3 > "$out/bench-gpu.log" 2>&1
        echo "rc=$?" >> "$out/bench-gpu.log"
        grep -E "RESULT|ratio|a call:|rc=|rror|bench_gpu:|SKIP" "$out/bench-gpu.log"
    fi
    if has kernels; then
        echo "== kernels one at a time, beside PyTorch"
        timeout 45 sh bench/bench_gpu.sh --kernels > "$out/kernels.log" 2>&1
        echo "rc=$?" >> "$out/kernels.log"
        grep -E "ratio|rc=|rror|bench_gpu:|SKIP" "$out/kernels.log"
    fi
    # ncu: SD 1.5's step; ncu-sdxl (not in the default parts): SDXL's
    for model in sd15 sdxl; do
        part=ncu limit=140
        [ $model = sdxl ] && part=ncu-sdxl limit=200
        has $part || continue
        if ! command -v ncu > /dev/null; then
            echo "SKIP $part: ncu not found"
            continue
        fi
        echo "== $part: GPU time per kernel, $model, one CFG step (a batch-2 UNet call)"
        timeout $limit ncu --clock-control none --csv --metrics gpu__time_duration.sum \
            ./bench/bench_gpu --only $model --calls 1 --graphs off --no-vae > "$out/$part.csv" 2> "$out/$part.err"
        python3 - "$out/$part.csv" $model << 'EOF' | tee "$out/$part-summary.txt"
import csv, sys, collections
# two UNet calls ran (bench_gpu's warm-up and one timed call): per call = half
# the program's own output comes first: the table starts at ncu's header
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
start = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "Metric Value" in r), None)
if start is None:
    sys.exit("no ncu table (see ncu.err)")
head, rows = rows[start], rows[start:]
name, unit, value = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3, "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
total, count = collections.Counter(), collections.Counter()
for r in rows[1:]:
    if len(r) != len(head):
        continue
    try:
        v = float(r[value].replace(",", "")) * scale[r[unit]]
    except (ValueError, KeyError):
        continue
    k = r[name].split("(")[0]
    total[k] += v / 2
    count[k] += 0.5
allt = sum(total.values())
print("per UNet call: %d launches, %.2f ms of GPU time" % (sum(count.values()), allt))
for k, v in total.most_common(15):
    print("%8.3f ms %5.1f%% %5d  %s" % (v, 100 * v / allt, count[k], k[:90]))
# the kinds the GPU issues' targets compare with PyTorch's (torch_unet.py
# --split): the GEMM kernels do the convolutions and the products alike
def kind(k):
    if any(w in k for w in ("flash", "attention")): return "attention"
    if any(w in k for w in ("gemm", "gemv", "split_sum", "taps_last", "permute_taps")): return "gemm_conv"
    if any(w in k for w in ("transpose16", "nchw_to", "nlc_to")): return "layout"
    return "other"
kinds = collections.Counter()
for k, v in total.items():
    kinds[kind(k)] += v
print("SPLIT sdx %s ms_per_call %.2f %s launches %d" % (sys.argv[2], allt, " ".join("%s %.2f" % (k, kinds[k])
      for k in ("gemm_conv", "attention", "layout", "other")), sum(count.values())))
EOF
    done
    if has split; then
        # PyTorch's GPU time of a UNet call by kind of kernel, beside
        # sdx's from the ncu parts of the same call (name them too)
        echo "== split: PyTorch eager's GPU time of one CFG step by kind of kernel (torch.profiler)"
        [ -f /tmp/sdx_bench_sdxl_f16.safetensors ] || timeout 200 ./bench/bench_gpu --calls 1 --no-vae > "$out/split-ckpt.log" 2>&1
        timeout 120 python3 bench/torch_unet.py --split --calls 5 > "$out/split.log" 2>&1
        echo "rc=$?" >> "$out/split.log"
        grep -E "SPLIT|rc=|rror" "$out/split.log"
    fi
    if has gemm-profile; then
        # where a GEMM's time goes: ncu's sections for one launch of SD
        # 1.5's 64x64-level convolution, of its feed-forward up
        # projection (m 8192, k 320, n 2560) and of SDXL's 32x32-level
        # linear (m 2048, k 1280, n 1280), from bench_gpu --kernels: each
        # shape has 22 launches there, and the skip counts the GEMM
        # launches before it (the stall reasons: SourceCounters'
        # warp-state sampling, and each section's tables where this ncu
        # prints them)
        echo "== ncu sections: one convolution and two linear launches"
        details=$(ncu --help 2>&1 | grep -q -- --print-details && echo "--print-details all")
        for launch in "sd15 conv 2" "sd15 linear 68" "sdxl linear 200"; do
            set -- $launch
            timeout 60 ncu --clock-control none -k "regex:sdx__hip_k_gemm_(wgmma|mma|tma)" --launch-skip "$3" --launch-count 1 \
                --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
                --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
                --section SourceCounters $details ./bench/bench_gpu --kernels --only "$1" > "$out/gemm-$1-$2.txt" 2>&1
            grep -E "Duration|Throughput|Pipe|Warp Cycles|Stall|Issued|Eligible|Active Warps|Achieved|Registers|Shared Memory|Bank|Occupancy|One or More|No Eligible|Block Limit|L1/TEX Hit|L2 Hit|Executed Ipc" "$out/gemm-$1-$2.txt" | sed "s/^/$1 $2: /" | cut -c1-150
        done
    fi
    if has ab; then
        # the default build and each variant one after the other on the
        # same card: every GEMM/conv/attention shape alone, then one UNet
        # call each
        names="default"
        for bin in "$BIN"/bench_gpu-*; do [ -x "$bin" ] && names="$names ${bin##*/bench_gpu-}"; done
        echo "== variants side by side (each one's time, and its ratio to the default's): $names"
        for v in $names; do
            bin=./bench/bench_gpu
            [ $v = default ] || bin=./$BIN/bench_gpu-$v
            timeout 40 $bin --kernels > "$out/ab-kernels-$v.log" 2>&1
            # the first run writes the random checkpoints unless bench did
            timeout 150 $bin --calls 3 --graphs on --no-vae > "$out/ab-step-$v.log" 2>&1
        done
        python3 - "$out" $names << 'EOF'
import re, sys
d, names = sys.argv[1], sys.argv[2:]
def read(name):
    r = {}
    try:
        lines = open(f"{d}/{name}", errors="replace").readlines()
    except OSError:
        return r
    for line in lines:
        m = re.match(r"KERNEL sdx (.*) us=([\d.]+)", line)
        if m:
            r[m.group(1)] = float(m.group(2))
        m = re.match(r"RESULT sdx (\S+) step_s ([\d.]+)", line)
        if m:
            r[m.group(1)] = float(m.group(2)) * 1e3
    return r
print("%-50s %s" % ("", " ".join("%16s" % n[:16] for n in names)))
for kind, unit in (("kernels", "us"), ("step", "ms")):
    runs = [read(f"ab-{kind}-{n}.log") for n in names]
    for k in runs[0]:
        cells = ["%9.1f%7s" % (runs[0][k], "")]
        cells += ["%9.1f %5.2fx" % (r[k], r[k] / runs[0][k]) if k in r else "%16s" % "-" for r in runs[1:]]
        print("%-47s %s %s" % (k[:47], unit, " ".join(cells)))
EOF
    fi
    echo "== table"
    printf "card: %s\n" "$(head -n 1 "$out/card.txt")"
    # each build's two runs (the suite, then the device-filling case) summed
    for log in "$out"/test-gpu*.log; do
        [ -f "$log" ] || continue
        name=${log##*/test-gpu}
        awk -v build="${name%.log}" '/ passed, [0-9]+ failed, [0-9]+ skipped/ { p += $1; f += $3; s += $5 }
            END { printf "test-gpu%s: %d passed, %d failed, %d skipped\n", build, p, f, s }' "$log"
    done
    grep -E "ratio" "$out/bench-gpu.log" 2> /dev/null || true
    head -n 1 "$out/ncu-summary.txt" 2> /dev/null || true
    # the targets' comparison: sdx's GEMMs and convolutions against
    # PyTorch's convolutions and products, attention against attention,
    # the rest against the rest (ms of GPU time a UNet call)
    cat "$out"/ncu-summary.txt "$out"/ncu-sdxl-summary.txt "$out"/split.log 2> /dev/null | python3 -c '
import sys
r = {}
for line in sys.stdin:
    f = line.split()
    if len(f) > 4 and f[0] == "SPLIT":
        r[(f[1], f[2])] = dict(zip(f[3::2], map(float, f[4::2])))
for m in ("sd15", "sdxl"):
    s, t = r.get(("sdx", m)), r.get(("torch", m))
    if not s or not t:
        continue
    rows = (("GEMMs and convolutions", s["gemm_conv"], t["conv"] + t["matmul"]), ("attention", s["attention"], t["attention"]),
            ("layout and the rest", s["layout"] + s["other"], t["layout"] + t["other"]), ("all", s["ms_per_call"], t["ms_per_call"]))
    for name, a, b in rows:
        print("%s %s: sdx %.2f ms, torch %.2f ms, ratio %.2fx" % (m, name, a, b, a / b if b else 0))
    print("%s launches: sdx %d, torch %d" % (m, s["launches"], t["launches"]))
'
}

case ${1:-} in
prepare) shift; prepare "$@" ;;
run) shift; run "$@" ;;
*) echo "usage: sh tools/gpu-session.sh prepare [AREA...] | run [test] [bench] [kernels] [ncu] [ncu-sdxl] [split] [gemm-profile] [ab]" >&2; exit 2 ;;
esac
