#!/bin/sh
# make bench-gpu: sdx on the GPU, then PyTorch eager fp16 on the same
# checkpoints when python3 has torch, then the ratio per model.
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
./bench/bench_gpu "$@" | tee "$log" || exit 1
if python3 -c "import torch" 2>/dev/null; then
    case " $* " in
    *" --kernels "*) python3 bench/torch_unet.py "$@" --kernel-log "$log" | tee -a "$log.torch"; cat "$log.torch" >> "$log"; rm -f "$log.torch" ;;
    *) python3 bench/torch_unet.py "$@" | tee -a "$log" ;;
    esac
else
    echo "SKIP torch reference: python3 has no torch"
fi
# kernels one at a time: the two times of each shape, and the ratio
awk '$1 == "KERNEL" { k = $3; for (i = 4; i <= NF; i++) if ($i !~ /^(us|tflops)=/) k = k " " $i
                      sub(/^us=/, "", $(NF - 1)); us[$2 "/" k] = $(NF - 1); if ($2 == "sdx") order[++n] = k }
     END { for (i = 1; i <= n; i++) if (("torch/" order[i]) in us)
           printf "%s: sdx %s us, torch %s us, ratio %.2fx\n", order[i], us["sdx/" order[i]], us["torch/" order[i]],
                  us["sdx/" order[i]] / us["torch/" order[i]] }' "$log"
awk '$1 == "RESULT" { t[$2 "/" $3] = $5; m[$2 "/" $3] = $9 }
     END { for (k in t) if (k ~ /^sdx\//) { n = substr(k, 5); b = n; sub(/-op-by-op$/, "", b); if (("torch/" b) in t)
           printf "%s: sdx %.3f s/step, torch %.3f s/step, ratio %.2fx; peak VRAM sdx %s MiB, torch %s MiB\n",
                  n, t[k], t["torch/" b], t[k] / t["torch/" b], m[k], m["torch/" b] } }' "$log"
