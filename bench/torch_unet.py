#!/usr/bin/env python3
"""PyTorch eager reference for `make bench-gpu`: the LDM/SGM UNet forward in
plain torch ops (F.conv2d, F.linear, F.group_norm, F.layer_norm,
F.scaled_dot_product_attention) in fp16, reading the same random-weight
checkpoints as bench/bench_gpu.c, one CFG step (batch 2) per call; then the
LDM VAE decoder on bench_gpu's decoder file, 512x512 in fp16 and 1024x1024
in bf16, as bench_gpu decodes.

    python3 bench/torch_unet.py [--only sd15|sdxl] [--calls N]
    python3 bench/torch_unet.py --kernels --kernel-log LOG [--calls N]
    python3 bench/torch_unet.py --split [--only sd15|sdxl] [--calls N]
    python3 bench/torch_unet.py --check-vae PIXELS Z.f32 IMAGE.f32

--kernels times, in fp16, each op of the KERNEL lines `bench_gpu
--kernels` wrote into LOG (the same shapes: one list, the C one), and
prints the same lines for torch.

--split profiles `calls` UNet calls with torch.profiler and prints the
GPU time of one call by kind of kernel (KINDS: attention, convolution,
matrix product, layout conversion, everything else) and its launches:
the split the GPU issues' targets compare with, beside sdx's own from
ncu (tools/gpu-session.sh, parts ncu and ncu-sdxl).

--check-vae decodes a raw f32 latent on the CPU in f32 and prints its
distance to sdx's decode of it (Debian's python3-torch 1.13 suffices): the
VAE reference decodes as sdx does (3.1e-6 at 64x64).

PyTorch (and optionally `safetensors`) exist only on the GPU machine; they
are no dependency of sdx. Without `safetensors` a small reader below loads
the file. Prints RESULT lines that bench/bench_gpu.sh puts beside sdx's."""
import argparse, collections, json, math, struct, sys, time

import torch
import torch.nn.functional as F

PATHS = {"sd15": ("/tmp/sdx_bench_sd15_f16.safetensors", 512),
         "sdxl": ("/tmp/sdx_bench_sdxl_f16.safetensors", 1024)}
VAE_PATH = "/tmp/sdx_bench_vae_decoder_f16.safetensors"   # bench_gpu writes it
# the VAE decode beside bench_gpu's: 512x512 in f16 (SD 1.5), 1024x1024 in
# bf16 (SDXL's VAE passes f16's range)
VAE_RUNS = {"sd15": (512, torch.float16), "sdxl": (1024, torch.bfloat16)}
PREFIX = "model.diffusion_model."


def sdpa(q, k, v):
    """F.scaled_dot_product_attention where torch has it (2.0+), else the
    same product written out (the CPU check of this file on Debian's 1.13)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v)
    s = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    return torch.matmul(torch.softmax(s.float(), dim=-1).to(q.dtype), v)


def load(path, device, prefix=PREFIX, dtype=torch.float16):
    try:
        from safetensors.torch import load_file
        sd = load_file(path, device="cpu")
    except ImportError:                      # the format: u64 header size, JSON header, raw data
        dtypes = {"F16": torch.float16, "F32": torch.float32, "BF16": torch.bfloat16}
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        sd = {}
        for k, v in header.items():
            if k == "__metadata__":
                continue
            a, b = v["data_offsets"]
            sd[k] = torch.frombuffer(bytearray(data[a:b]), dtype=dtypes[v["dtype"]]).reshape(v["shape"])
    return {k[len(prefix):]: t.to(device=device, dtype=dtype) for k, t in sd.items() if k.startswith(prefix)}


class UNet:
    def __init__(self, w):
        self.w = w
        self.ctx_dim = next(t.shape[1] for k, t in w.items() if k.endswith("attn2.to_k.weight"))
        self.sd1 = self.ctx_dim == 768       # SD 1.x: 8 heads; SD 2.x / SDXL: head dim 64
        # every dotted prefix of a key ("input_blocks.4.", ...), so the
        # structure walk costs no Python time per call
        self.prefixes = {k[:i + 1] for k in w for i, ch in enumerate(k) if ch == "."}

    def has(self, k):
        return k in self.w

    def res(self, p, h, emb):
        w = self.w
        x = F.silu(F.group_norm(h, 32, w[p + "in_layers.0.weight"], w[p + "in_layers.0.bias"], 1e-5))
        x = F.conv2d(x, w[p + "in_layers.2.weight"], w[p + "in_layers.2.bias"], padding=1)
        e = F.linear(F.silu(emb), w[p + "emb_layers.1.weight"], w[p + "emb_layers.1.bias"])
        x = x + e[:, :, None, None]
        x = F.silu(F.group_norm(x, 32, w[p + "out_layers.0.weight"], w[p + "out_layers.0.bias"], 1e-5))
        x = F.conv2d(x, w[p + "out_layers.3.weight"], w[p + "out_layers.3.bias"], padding=1)
        if self.has(p + "skip_connection.weight"):
            h = F.conv2d(h, w[p + "skip_connection.weight"], w[p + "skip_connection.bias"])
        return h + x

    def attn(self, p, x, ctx):
        w = self.w
        q = F.linear(x, w[p + "to_q.weight"])
        k = F.linear(ctx, w[p + "to_k.weight"])
        v = F.linear(ctx, w[p + "to_v.weight"])
        c = q.shape[-1]
        heads = 8 if self.sd1 else c // 64
        b = x.shape[0]
        q, k, v = (t.view(b, -1, heads, c // heads).transpose(1, 2) for t in (q, k, v))
        o = sdpa(q, k, v).transpose(1, 2).reshape(b, -1, c)
        return F.linear(o, w[p + "to_out.0.weight"], w[p + "to_out.0.bias"])

    def transformer(self, p, h, ctx):
        w = self.w
        b, c, hh, ww = h.shape
        x = F.group_norm(h, 32, w[p + "norm.weight"], w[p + "norm.bias"], 1e-6)
        linear = w[p + "proj_in.weight"].dim() == 2
        if linear:
            x = F.linear(x.flatten(2).transpose(1, 2), w[p + "proj_in.weight"], w[p + "proj_in.bias"])
        else:
            x = F.conv2d(x, w[p + "proj_in.weight"], w[p + "proj_in.bias"]).flatten(2).transpose(1, 2)
        i = 0
        while self.has(f"{p}transformer_blocks.{i}.norm1.weight"):
            q = f"{p}transformer_blocks.{i}."
            ln = lambda t, n: F.layer_norm(t, (t.shape[-1],), w[q + n + ".weight"], w[q + n + ".bias"], 1e-5)
            y = ln(x, "norm1")
            x = x + self.attn(q + "attn1.", y, y)
            x = x + self.attn(q + "attn2.", ln(x, "norm2"), ctx)
            a, g = F.linear(ln(x, "norm3"), w[q + "ff.net.0.proj.weight"], w[q + "ff.net.0.proj.bias"]).chunk(2, dim=-1)
            x = x + F.linear(a * F.gelu(g), w[q + "ff.net.2.weight"], w[q + "ff.net.2.bias"])
            i += 1
        if linear:
            x = F.linear(x, w[p + "proj_out.weight"], w[p + "proj_out.bias"]).transpose(1, 2).reshape(b, c, hh, ww)
        else:
            x = F.conv2d(x.transpose(1, 2).reshape(b, -1, hh, ww), w[p + "proj_out.weight"], w[p + "proj_out.bias"])
        return h + x

    def block(self, p, h, emb, ctx):
        j = 0
        while f"{p}{j}." in self.prefixes:
            q = f"{p}{j}."
            if self.has(q + "in_layers.0.weight"):
                h = self.res(q, h, emb)
            elif self.has(q + "proj_in.weight"):
                h = self.transformer(q, h, ctx)
            elif self.has(q + "op.weight"):
                h = F.conv2d(h, self.w[q + "op.weight"], self.w[q + "op.bias"], stride=2, padding=1)
            elif self.has(q + "conv.weight"):
                h = F.conv2d(F.interpolate(h, scale_factor=2.0, mode="nearest"), self.w[q + "conv.weight"], self.w[q + "conv.bias"], padding=1)
            j += 1
        return h

    def forward(self, x, t, ctx, y=None):
        w = self.w
        mc = w["time_embed.0.weight"].shape[1]
        half = mc // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=x.device, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        temb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1).to(torch.float16)
        emb = F.linear(F.silu(F.linear(temb, w["time_embed.0.weight"], w["time_embed.0.bias"])), w["time_embed.2.weight"], w["time_embed.2.bias"])
        if y is not None and self.has("label_emb.0.0.weight"):
            emb = emb + F.linear(F.silu(F.linear(y, w["label_emb.0.0.weight"], w["label_emb.0.0.bias"])),
                                 w["label_emb.0.2.weight"], w["label_emb.0.2.bias"])
        h, skips, i = x, [], 0
        while f"input_blocks.{i}." in self.prefixes:
            if i == 0:
                h = F.conv2d(h, w["input_blocks.0.0.weight"], w["input_blocks.0.0.bias"], padding=1)
            else:
                h = self.block(f"input_blocks.{i}.", h, emb, ctx)
            skips.append(h)
            i += 1
        h = self.block("middle_block.", h, emb, ctx)
        i = 0
        while f"output_blocks.{i}." in self.prefixes:
            h = self.block(f"output_blocks.{i}.", torch.cat([h, skips.pop()], dim=1), emb, ctx)
            i += 1
        h = F.silu(F.group_norm(h, 32, w["out.0.weight"], w["out.0.bias"], 1e-5))
        return F.conv2d(h, w["out.2.weight"], w["out.2.bias"], padding=1)


class VAEDecoder:
    """The LDM AutoencoderKL decoder (post_quant_conv, decoder.*) in plain
    torch ops: latent (already divided by the scale factor) -> image in
    [-1, 1], unclamped, as sdx's sdx__vae_decode."""

    def __init__(self, w):
        self.w = w
        self.levels = 1 + max(int(k.split(".")[2]) for k in w if k.startswith("decoder.up."))

    def norm(self, p, x, silu=True):
        x = F.group_norm(x, 32, self.w[p + ".weight"], self.w[p + ".bias"], 1e-6)
        return F.silu(x) if silu else x

    def conv(self, p, x, padding=1):
        return F.conv2d(x, self.w[p + ".weight"], self.w[p + ".bias"], padding=padding)

    def res(self, p, x):
        h = self.conv(p + ".conv1", self.norm(p + ".norm1", x))
        h = self.conv(p + ".conv2", self.norm(p + ".norm2", h))
        if p + ".nin_shortcut.weight" in self.w:
            x = self.conv(p + ".nin_shortcut", x, 0)
        return x + h

    def attn(self, p, x):
        b, c, hh, ww = x.shape
        h = self.norm(p + ".norm", x, silu=False)
        q, k, v = (self.conv(p + "." + n, h, 0).flatten(2).transpose(1, 2)[:, None] for n in "qkv")
        o = sdpa(q, k, v)[:, 0].transpose(1, 2).reshape(b, c, hh, ww)
        return x + self.conv(p + ".proj_out", o, 0)

    def forward(self, z):
        if "post_quant_conv.weight" in self.w:
            z = self.conv("post_quant_conv", z, 0)
        h = self.conv("decoder.conv_in", z)
        h = self.res("decoder.mid.block_1", h)
        h = self.attn("decoder.mid.attn_1", h)
        h = self.res("decoder.mid.block_2", h)
        for lv in reversed(range(self.levels)):
            j = 0
            while f"decoder.up.{lv}.block.{j}.conv1.weight" in self.w:
                h = self.res(f"decoder.up.{lv}.block.{j}", h)
                j += 1
            if f"decoder.up.{lv}.upsample.conv.weight" in self.w:
                h = self.conv(f"decoder.up.{lv}.upsample.conv", F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.conv("decoder.conv_out", self.norm("decoder.norm_out", h))


def timed(name, calls, forward):
    """A warm-up call, then `calls` timed ones (each until its output is on
    the host); prints the RESULT line bench_gpu.sh pairs with sdx's."""
    torch.cuda.reset_peak_memory_stats()
    times = []
    with torch.inference_mode():
        for c in range(calls + 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            forward().float().cpu()
            dt = time.perf_counter() - t0
            if c:
                times.append(dt)
            else:
                print(f"  torch {name}: warm-up {dt:.3f} s")
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"RESULT torch {name} step_s {sum(times) / len(times):.4f} best_s {min(times):.4f} peak_vram_mib {peak:.0f}")


# A kernel's kind by its name (lower case), the first row whose words one
# is in: cuDNN's and FlashAttention's attention kernels, cuDNN's
# convolutions (implicit GEMMs named "fprop"), cuDNN's NCHW <-> NHWC
# conversions, cuBLAS's and CUTLASS's products (nvjet: cuBLAS on Hopper).
KINDS = (("attention", ("flash", "fmha", "sdpa", "attention", "mha")),
         ("conv", ("conv", "fprop", "implicit", "winograd")),
         ("layout", ("nchwtonhwc", "nhwctonchw", "transpose")),
         ("matmul", ("gemm", "nvjet", "cutlass", "xmma", "cublas", "matmul")))


def kernel_kind(name):
    n = name.lower()
    return next((kind for kind, words in KINDS if any(w in n for w in words)), "other")


def split(name, calls, forward):
    """One warm-up call, then `calls` under torch.profiler (GPU activity
    only): per call, each kind's GPU time and the launches; a SPLIT line
    that gpu-session.sh prints beside sdx's."""
    from torch.profiler import profile, ProfilerActivity
    with torch.inference_mode():
        forward()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                forward()
            torch.cuda.synchronize()
    ms, launches = collections.Counter(), 0
    for e in prof.key_averages():
        if not str(getattr(e, "device_type", "")).endswith("CUDA") or e.key.startswith(("Memcpy", "Memset")):
            continue
        us = getattr(e, "self_device_time_total", None)
        us = getattr(e, "self_cuda_time_total", 0) if us is None else us
        ms[kernel_kind(e.key)] += us / 1e3 / calls
        launches += e.count
    kinds = " ".join(f"{k} {ms[k]:.2f}" for k in ("conv", "matmul", "attention", "layout", "other"))
    print(f"SPLIT torch {name} ms_per_call {sum(ms.values()):.2f} {kinds} launches {launches / calls:.0f}")


def run_vae(name, calls, dev):
    pixels, dtype = VAE_RUNS[name]
    net = VAEDecoder(load(VAE_PATH, dev, prefix="", dtype=dtype))
    g = torch.Generator(device="cpu").manual_seed(2)
    z = torch.randn(1, 4, pixels // 8, pixels // 8, generator=g).to(dev, dtype)
    torch.cuda.empty_cache()
    timed(f"vae{pixels}", calls, lambda: net.forward(z))


def check_vae_cpu(pixels, z_path, img_path):
    """Decodes z_path (raw f32 [1, 4, p/8, p/8]) in f32 on the CPU and
    prints the rel-L2 to img_path (sdx's decode of the same latent): the
    check that this reference is the network sdx runs."""
    net = VAEDecoder(load(VAE_PATH, "cpu", prefix="", dtype=torch.float32))
    z = torch.frombuffer(bytearray(open(z_path, "rb").read()), dtype=torch.float32).reshape(1, 4, pixels // 8, pixels // 8)
    ref = torch.frombuffer(bytearray(open(img_path, "rb").read()), dtype=torch.float32).reshape(1, 3, pixels, pixels)
    with torch.inference_mode():
        out = net.forward(z)
    print(f"vae {pixels}: rel-L2 to sdx {float((out - ref).norm() / ref.norm()):.3g}")


def kernel_op(desc, dev, dtype):
    """The op of a KERNEL line's description ("conv b=2 c=320 ...") in
    torch on fresh random tensors: (function, FLOPs)."""
    f = desc.split()
    p = {k: int(v) for k, v in (t.split("=") for t in f[1:])}
    g = torch.Generator(device="cpu").manual_seed(3)
    rnd = lambda *shape: torch.randn(*shape, generator=g).to(dev, dtype)
    if f[0] == "conv":
        x, w = rnd(p["b"], p["c"], p["h"], p["w"]), rnd(p["o"], p["c"], p["k"], p["k"]) * 0.05
        return (lambda: F.conv2d(x, w, padding=p["k"] // 2)), 2.0 * p["b"] * p["o"] * p["h"] * p["w"] * p["c"] * p["k"] ** 2
    if f[0] == "linear":
        x, w = rnd(p["m"], p["k"]), rnd(p["n"], p["k"]) * 0.05
        return (lambda: F.linear(x, w)), 2.0 * p["m"] * p["n"] * p["k"]
    if f[0] == "linear+res":    # the residual in cuBLAS's epilogue (beta = 1)
        x, w, r = rnd(p["m"], p["k"]), rnd(p["n"], p["k"]) * 0.05, rnd(p["m"], p["n"])
        return (lambda: torch.addmm(r, x, w.t())), 2.0 * p["m"] * p["n"] * p["k"]
    q = rnd(p["b"], p["heads"], p["nq"], p["d"])
    k, v = rnd(p["b"], p["heads"], p["nk"], p["d"]), rnd(p["b"], p["heads"], p["nk"], p["d"])
    return (lambda: sdpa(q, k, v)), 4.0 * p["b"] * p["heads"] * p["nq"] * p["nk"] * p["d"]


def run_kernels(log_path, calls, dev, dtype=torch.float16):
    """Each `KERNEL sdx MODEL DESC us=... tflops=...` line of the log, timed
    as bench_gpu times it: 2 launches to warm up, then `reps`."""
    reps = 20 if calls < 5 else 4 * calls
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    for line in open(log_path):
        f = line.split()
        if len(f) < 5 or f[:2] != ["KERNEL", "sdx"]:
            continue
        model, desc = f[2], " ".join(t for t in f[3:] if not t.startswith(("us=", "tflops=")))
        fn, flops = kernel_op(desc, dev, dtype)
        with torch.inference_mode():
            fn(), fn()
            sync()
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            sync()
        us = (time.perf_counter() - t0) * 1e6 / reps
        print(f"KERNEL torch {model} {desc} us={us:.1f} tflops={flops / us * 1e-6:.1f}")


def run(name, calls, dev, profiled=False):
    path, pixels = PATHS[name]
    w = load(path, dev)
    net = UNet(w)
    lat = pixels // 8
    g = torch.Generator(device="cpu").manual_seed(1)
    cin = w["input_blocks.0.0.weight"].shape[1]
    x = torch.randn(2, cin, lat, lat, generator=g).to(dev, torch.float16)
    ctx = torch.randn(2, 77, net.ctx_dim, generator=g).to(dev, torch.float16)
    y = torch.randn(2, w["label_emb.0.0.weight"].shape[1], generator=g).to(dev, torch.float16) if net.has("label_emb.0.0.weight") else None
    t = torch.full((2,), 999.0, device=dev)
    (split if profiled else timed)(name, calls, lambda: net.forward(x, t, ctx, y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["sd15", "sdxl"])
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--kernels", action="store_true", help="time the ops of the KERNEL lines in --kernel-log")
    ap.add_argument("--kernel-log", help="bench_gpu --kernels output")
    ap.add_argument("--split", action="store_true", help="GPU time of a UNet call by kind of kernel (torch.profiler)")
    ap.add_argument("--check-vae", nargs=3, metavar=("PIXELS", "Z_F32", "IMAGE_F32"),
                    help="CPU check of the VAE reference against sdx's decode of the same latent")
    a = ap.parse_args()
    if a.check_vae:
        check_vae_cpu(int(a.check_vae[0]), a.check_vae[1], a.check_vae[2])
        return 0
    if not torch.cuda.is_available():
        print("SKIP torch: no GPU visible to PyTorch")
        return 0
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    if a.kernels:
        if not a.kernel_log:
            print("torch_unet.py: --kernels needs --kernel-log (bench_gpu --kernels output)", file=sys.stderr)
            return 2
        run_kernels(a.kernel_log, max(1, a.calls), "cuda")
        return 0
    for name in ("sd15", "sdxl"):
        if a.only in (None, name):
            run(name, max(1, a.calls), "cuda", a.split)
    if a.split:
        return 0
    for name in ("sd15", "sdxl"):
        if a.only in (None, name):
            run_vae(name, max(1, a.calls), "cuda")
    return 0


if __name__ == "__main__":
    sys.exit(main())
