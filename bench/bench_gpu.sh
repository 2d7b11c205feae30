#!/bin/sh
# make bench-gpu: sdx on the GPU, then PyTorch eager fp16 on the same
# checkpoints when python3 has torch, then the ratio per model.
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
./bench/bench_gpu "$@" | tee "$log" || exit 1
if python3 -c "import torch" 2>/dev/null; then
    python3 bench/torch_unet.py "$@" | tee -a "$log"
else
    echo "SKIP torch reference: python3 has no torch"
fi
awk '$1 == "RESULT" { t[$2 "/" $3] = $5; m[$2 "/" $3] = $9 }
     END { for (k in t) if (k ~ /^sdx\//) { n = substr(k, 5); b = n; sub(/-op-by-op$/, "", b); if (("torch/" b) in t)
           printf "%s: sdx %.3f s/step, torch %.3f s/step, ratio %.2fx; peak VRAM sdx %s MiB, torch %s MiB\n",
                  n, t[k], t["torch/" b], t[k] / t["torch/" b], m[k], m["torch/" b] } }' "$log"
