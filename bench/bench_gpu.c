/* GPU benchmark (make bench-gpu): one classifier-free-guidance step (a
 * batch-2 UNet call) of full-size random-weight SD 1.5 at 512x512 and
 * SDXL at 1024x1024 through sdx_hip.h, with peak device memory. The f16
 * checkpoints come from tools/sdx-mkckpt.c (generated once under /tmp, the
 * files bench_unet uses) and bench/torch_unet.py runs the same files in
 * PyTorch eager fp16 for the comparison (bench/bench_gpu.sh runs both).
 *
 *   bench_gpu [--only sd15|sdxl] [--calls N] [--act f16|bf16|f32] [--graphs on|off|both] [--vae-only PIXELS] [--no-vae]
 *
 * Activations are stored in f16 by default (as PyTorch fp16 runs), so the
 * GEMMs and convolutions take the matrix-unit path; f32 accumulation as
 * always. Timings include a device-to-host copy of the output (so the
 * GPU has finished). Each model runs op by op (sdx_desc.no_graphs), then
 * as the default runs, replayed from a recorded graph (README, GPU;
 * --graphs off or on runs one of them): the
 * warm-up calls (op by op: the first; with graphs: the first, run op by
 * op, and the second, recorded) are reported apart. Then one
 * full-size VAE decode per model size (512x512 f16, 1024x1024 bf16
 * activations, untiled), with peak device memory.
 *
 *   bench_gpu --kernels [--only sd15|sdxl] [--calls N]
 *
 * times each GEMM, convolution and attention shape of those UNet steps
 * alone instead (KERNEL lines: microseconds a launch, TFLOP/s), which
 * bench/torch_unet.py --kernels repeats in PyTorch from the same lines. */
#define _DEFAULT_SOURCE 1
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#include "../sdx_hip.h"
#define SDX_MKCKPT_NO_MAIN
#include "../tools/sdx-mkckpt.c"
#include <time.h>

static double bg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bg_ensure_checkpoint(const char *preset, const char *path) {
    mk_unet_arch a;
    char err[256];
    FILE *f = fopen(path, "rb");
    if (f) { fclose(f); return 1; }
    mk_unet_preset(preset, &a);
    printf("generating %s (random f16 %s UNet)...\n", path, preset);
    fflush(stdout);
    if (!mk_write_unet(path, &a, 1, 1, err, sizeof err)) { fprintf(stderr, "bench_gpu: %s\n", err); return 0; }
    return 1;
}

static void bg_fill(float *v, int64_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(mk_next(&s) >> 11) * (1.0 / 9007199254740992.0);
        v[i] = (float)((2.0 * u - 1.0) * 1.7320508075688772);
    }
}

/* A device tensor of `dtype` from the arena, random values in [-1.7, 1.7]
 * times scale. */
static int bg_input(sdx_ctx *ctx, sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape, uint64_t seed, float scale) {
    int64_t n;
    float *v;
    int rc;
    if (!sdx__arena_tensor(a, t, dtype, ndim, shape)) return 0;
    n = sdx_tensor_numel(t);
    if (!(v = (float *)malloc((size_t)n * sizeof(float)))) return 0;
    bg_fill(v, n, seed);
    for (int64_t i = 0; i < n; i++) v[i] *= scale;
    rc = sdx__upload(ctx, t, v);
    free(v);
    return rc == SDX_OK;
}

/* Timed calls: the first `warm` (c < warm) are the warm-up, printed
 * apart; the others add to the mean and the best, printed as
 * bench_gpu.sh's RESULT line with the context's peak device memory. */
typedef struct bg_tally { double sum, best; } bg_tally;

static void bg_tally_add(bg_tally *t, int c, int warm, double dt, const char *warmup_label) {
    if (c == 0) { t->sum = 0; t->best = 1e30; }
    if (c < warm) { printf("%s: warm-up %d %.3f s\n", warmup_label, c + 1, dt); return; }
    t->best = dt < t->best ? dt : t->best;
    t->sum += dt;
}

static void bg_tally_print(sdx_ctx *ctx, const char *name, const bg_tally *t, int calls) {
    size_t peak = 0;
    sdx_device_bytes(ctx, &peak);
    printf("RESULT sdx %s step_s %.4f best_s %.4f peak_vram_mib %.0f\n", name, t->sum / calls, t->best, (double)peak / 1048576.0);
}

static int bg_run(const char *preset, const char *path, int pixels, int calls, sdx_dtype act, int graphs) {
    sdx_desc desc;
    sdx_ctx *ctx;
    sdx_st *st = NULL;
    sdx__unet u;
    sdx__unet_kv kv;
    sdx__arena arena;
    sdx_tensor x, cx, y, out;
    float ts[2] = { 999.0f, 999.0f }, *host = NULL;
    int lat = pixels / 8, ok = 0, loaded = 0;
    bg_tally tally;
    double t0;
    char line[512], name[64];
    const int warm = graphs ? 2 : 1;
    memset(&kv, 0, sizeof kv);
    memset(&desc, 0, sizeof desc);
    desc.no_graphs = !graphs;
    if (!(ctx = sdx_create(&desc))) return 0;
    snprintf(name, sizeof name, "%s%s", preset, graphs ? "" : "-op-by-op");
    if (sdx_hip_use(ctx, 0) != SDX_OK) {
        fprintf(stderr, "bench_gpu: %s: %s\n", preset, sdx_last_error(ctx));
        sdx_destroy(ctx);
        return 0;
    }
    /* after sdx_hip_use: an arena lives in the memory of the backend the
     * context has when it is made (made before, its tensors were host
     * memory, which the GPU's kernels refuse) */
    sdx__arena_init(&arena, ctx, 0);
    if (sdx_st_open(ctx, path, &st) != SDX_OK) goto done;
    t0 = bg_now();
    if (sdx__unet_load(ctx, &u, st, "model.diffusion_model.") != SDX_OK) goto done;
    loaded = 1;
    u.act_type = act;
    sdx__unet_describe(&u, line, sizeof line);
    printf("%s on %s, %s\n  %s\n  load + upload %.2f s, weights %.0f MiB on the device\n", preset, sdx_backend_name(ctx),
           graphs ? "UNet calls replayed from a graph" : "op by op", line, bg_now() - t0, (double)sdx_device_bytes(ctx, NULL) / 1048576.0);
    {
        int64_t xs[4] = { 2, u.in_channels, lat, lat }, cs[3] = { 2, 77, u.context_dim };
        int64_t ys[2] = { 2, u.adm_channels > 0 ? u.adm_channels : 1 }, os[4] = { 2, u.out_channels, lat, lat };
        if (!bg_input(ctx, &arena, &x, SDX_F32, 4, xs, 1, 1.0f) || !bg_input(ctx, &arena, &cx, SDX_F32, 3, cs, 2, 1.0f) ||
            !bg_input(ctx, &arena, &y, SDX_F32, 2, ys, 3, 1.0f) ||
            !sdx__arena_tensor(&arena, &out, SDX_F32, 4, os) || !(host = (float *)malloc(sdx_tensor_nbytes(&out))))
            goto done;
    }
    /* the context's cross-attention keys and values, once a generation,
     * as the pipeline keeps them on a device */
    if (sdx__unet_kv_make(ctx, &u, &cx, &kv) != SDX_OK) goto done;
    for (int c = 0; c < warm + calls; c++) {
        sdx__mark m = sdx__arena_mark(&arena);
        double dt;
        t0 = bg_now();
        if (sdx__unet_forward_control(ctx, &u, &arena, &x, ts, &cx, u.adm_channels > 0 ? &y : NULL, NULL, &kv, &out) != SDX_OK ||
            sdx__download(ctx, host, &out) != SDX_OK)
            goto done;
        dt = bg_now() - t0;
        sdx__arena_release(&arena, m);
        snprintf(line, sizeof line, "  %dx%d, batch 2 (one CFG step), %s activations", pixels, pixels, sdx_dtype_name(act));
        bg_tally_add(&tally, c, warm, dt, line);
    }
    if (graphs) {
        const sdx__graph_slot *g = &ctx->graph.slots[SDX__GRAPH_UNET];
        printf("  a call: %d ops and uploads, replayed %ld times as one graph launch%s\n", g->n, g->replays,
               g->replays ? "" : " (not replayed: see the log)");
    }
    bg_tally_print(ctx, name, &tally, calls);
    ok = 1;
done:
    if (!ok) fprintf(stderr, "bench_gpu: %s: %s\n", preset, sdx_last_error(ctx));
    free(host);
    sdx__unet_kv_free(ctx, &kv);
    sdx__arena_free(&arena);
    if (loaded) sdx__unet_free(&u);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return ok;
}

/* One full-size SD VAE decode of a pixels x pixels image on the GPU
 * (random f16 decoder weights, generated once under /tmp; the same
 * decoder serves SD 1.5 and SDXL, whose VAEs differ only in weights), with
 * activations in `act`, untiled: warm-up, then the mean of `calls`. */
static int bg_vae(int pixels, int calls, sdx_dtype act) {
    const char *path = "/tmp/sdx_bench_vae_decoder_f16.safetensors";
    sdx_ctx *ctx = sdx_create(NULL);
    sdx_st *st = NULL;
    sdx__vae vae;
    sdx_tensor z, img;
    sdx__vae_tiling untiled;
    sdx__arena arena;
    bg_tally tally;
    char line[160];
    int64_t zs[4] = { 1, 4, pixels / 8, pixels / 8 }, is[4] = { 1, 3, pixels, pixels };
    int ok = 0, loaded = 0, arena_made = 0;
    char err[256];
    FILE *f;
    memset(&z, 0, sizeof z);
    memset(&img, 0, sizeof img);
    if (!ctx) return 0;
    if (!(f = fopen(path, "rb"))) {
        printf("generating %s (random f16 SD VAE decoder)...\n", path);
        fflush(stdout);
        if (!mk_write_vae_decoder(path, 1, 7, err, sizeof err)) { fprintf(stderr, "bench_gpu: %s\n", err); sdx_destroy(ctx); return 0; }
    } else {
        fclose(f);
    }
    if (sdx_hip_use(ctx, 0) != SDX_OK || sdx_st_open(ctx, path, &st) != SDX_OK || sdx__vae_load(ctx, &vae, st, "") != SDX_OK) goto done;
    loaded = 1;
    vae.act_type = act;
    memset(&untiled, 0, sizeof untiled);
    untiled.mode = -1;
    if (sdx_tensor_alloc(ctx, &z, SDX_F32, 4, zs) != SDX_OK || sdx_tensor_alloc(ctx, &img, SDX_F32, 4, is) != SDX_OK) goto done;
    bg_fill((float *)z.data, sdx_tensor_numel(&z), 5);
    /* one arena for every call, as bg_run keeps: device memory is taken
     * once, not inside the timed decodes */
    sdx__arena_init(&arena, ctx, 0);
    arena_made = 1;
    for (int c = 0; c <= calls; c++) {
        sdx__mark m = sdx__arena_mark(&arena);
        double t0 = bg_now();
        if (sdx__vae_decode(ctx, &vae, &arena, &z, &img, &untiled) != SDX_OK) goto done;
        sdx__arena_release(&arena, m);
        snprintf(line, sizeof line, "vae decode %dx%d on %s, %s activations", pixels, pixels, sdx_backend_name(ctx), sdx_dtype_name(act));
        bg_tally_add(&tally, c, 1, bg_now() - t0, line);
    }
    snprintf(line, sizeof line, "vae%d", pixels);
    bg_tally_print(ctx, line, &tally, calls);
    ok = 1;
done:
    if (!ok) fprintf(stderr, "bench_gpu: vae %d: %s\n", pixels, sdx_last_error(ctx));
    if (arena_made) sdx__arena_free(&arena);
    sdx_tensor_free(ctx, &z);
    sdx_tensor_free(ctx, &img);
    if (loaded) sdx__vae_free(&vae);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return ok;
}

/* ---- one kernel at a time (--kernels) -------------------------------------- */

/* The levels of a UNet step: latent side, channels, attention heads (0:
 * none), as the presets of tools/sdx-mkckpt.c make them at 512x512 (SD
 * 1.5) and 1024x1024 (SDXL). */
typedef struct bg_level { int side, ch, heads; } bg_level;
static const struct bg_model { const char *name; int ctx_dim, n; bg_level lv[4]; } bg_models[] = {
    { "sd15", 768, 4, { { 64, 320, 8 }, { 32, 640, 8 }, { 16, 1280, 8 }, { 8, 1280, 0 } } },
    { "sdxl", 2048, 3, { { 128, 320, 0 }, { 64, 640, 10 }, { 32, 1280, 20 } } },
};

/* Waits for the GPU: a one-value download after the launches. */
static int bg_sync(sdx_ctx *ctx, const sdx_tensor *y) {
    sdx_tensor one = *y;
    float v;
    one.ndim = 1;
    one.shape[0] = 1;
    return sdx__download(ctx, &v, &one) == SDX_OK;
}

enum { BG_CONV, BG_LINEAR, BG_LINEAR_ADD, BG_ATTN };

/* Times one op: 2 launches to warm up, then `reps`; prints its KERNEL
 * line. conv: a = batch, b = channels in, c = out, d = side (3x3,
 * padding 1); linear: a = rows, b = in, c = out (linear_add: plus an f16
 * residual in the epilogue, as the transformer blocks' output products
 * have); attn: a = batch, b = queries, c = keys, d = heads, e = head
 * dim. */
static int bg_kernel(sdx_ctx *ctx, sdx__arena *arena, const char *model, int kind, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e,
                     int reps) {
    sdx__mark m = sdx__arena_mark(arena);
    sdx_tensor x, w, y, k, v, res;
    double flops, t0 = 0, us;
    char desc[160];
    int ok;
    if (kind == BG_CONV) {
        int64_t xs[4] = { a, b, d, d }, ws[4] = { c, b, 3, 3 }, ys[4] = { a, c, d, d };
        ok = bg_input(ctx, arena, &x, SDX_F16, 4, xs, 1, 1.0f) && bg_input(ctx, arena, &w, SDX_F16, 4, ws, 2, 0.05f) &&
             sdx__arena_tensor(arena, &y, SDX_F16, 4, ys);
        flops = 2.0 * (double)(a * c * d * d) * (double)(b * 9);
        snprintf(desc, sizeof desc, "conv b=%lld c=%lld o=%lld h=%lld w=%lld k=3", (long long)a, (long long)b, (long long)c, (long long)d,
                 (long long)d);
    } else if (kind == BG_LINEAR || kind == BG_LINEAR_ADD) {
        int64_t xs[2] = { a, b }, ws[2] = { c, b }, ys[2] = { a, c };
        ok = bg_input(ctx, arena, &x, SDX_F16, 2, xs, 1, 1.0f) && bg_input(ctx, arena, &w, SDX_F16, 2, ws, 2, 0.05f) &&
             sdx__arena_tensor(arena, &y, SDX_F16, 2, ys) && (kind == BG_LINEAR || bg_input(ctx, arena, &res, SDX_F16, 2, ys, 4, 1.0f));
        flops = 2.0 * (double)(a * c) * (double)b;
        snprintf(desc, sizeof desc, "%s m=%lld k=%lld n=%lld", kind == BG_LINEAR ? "linear" : "linear+res", (long long)a, (long long)b,
                 (long long)c);
    } else {
        int64_t qs[3] = { a, b, d * e }, ks[3] = { a, c, d * e };
        ok = bg_input(ctx, arena, &x, SDX_F16, 3, qs, 1, 1.0f) && bg_input(ctx, arena, &k, SDX_F16, 3, ks, 2, 1.0f) &&
             bg_input(ctx, arena, &v, SDX_F16, 3, ks, 3, 1.0f) &&
             sdx__arena_tensor(arena, &y, SDX_F16, 3, qs);
        flops = 4.0 * (double)(a * d * b * c) * (double)e;
        snprintf(desc, sizeof desc, "attn b=%lld nq=%lld nk=%lld heads=%lld d=%lld", (long long)a, (long long)b, (long long)c, (long long)d,
                 (long long)e);
    }
    for (int r = -2; ok && r < reps; r++) {
        if (r == 0) {
            ok = bg_sync(ctx, &y);
            t0 = bg_now();
        }
        if (ok) ok = (kind == BG_CONV         ? sdx__conv2d_pad(ctx, &y, &x, &w, NULL, 1, 1, 1, 1, 1, SDX_F32)
                      : kind == BG_LINEAR     ? sdx__linear(ctx, &y, &x, &w, NULL, SDX_F32)
                      : kind == BG_LINEAR_ADD ? sdx__linear_add(ctx, &y, &x, &w, NULL, &res, SDX_F32)
                                              : sdx__attention(ctx, &y, &x, &k, &v, (int)d, 0, SDX_F32)) == SDX_OK;
    }
    if (ok && (ok = bg_sync(ctx, &y))) {
        us = (bg_now() - t0) * 1e6 / reps;
        printf("KERNEL sdx %s %s us=%.1f tflops=%.1f\n", model, desc, us, flops / us * 1e-6);
    }
    if (!ok) fprintf(stderr, "bench_gpu: %s %s: %s\n", model, desc, sdx_last_error(ctx));
    sdx__arena_release(arena, m);
    return ok;
}

/* Every level's 3x3 convolution; where it has attention, its projections
 * (q: C -> C; an output projection C -> C and the feed-forward's 4C -> C
 * with their residuals; the cross-attention's k: context -> C, 77 tokens;
 * GEGLU's C -> 8C and 4C -> C) and its self- and cross-attention; batch
 * 2. */
static int bg_kernels(const char *only, int calls) {
    sdx_desc desc;
    sdx_ctx *ctx;
    sdx__arena arena;
    int ok = 1, reps = calls < 5 ? 20 : 4 * calls;
    memset(&desc, 0, sizeof desc);
    desc.no_graphs = 1;
    if (!(ctx = sdx_create(&desc))) return 0;
    if (sdx_hip_use(ctx, 0) != SDX_OK) {
        fprintf(stderr, "bench_gpu: %s\n", sdx_last_error(ctx));
        sdx_destroy(ctx);
        return 0;
    }
    printf("kernels one at a time on %s, f16, %d launches each\n", sdx_backend_name(ctx), reps);
    sdx__arena_init(&arena, ctx, 0);
    for (size_t i = 0; i < sizeof bg_models / sizeof bg_models[0]; i++) {
        const struct bg_model *md = &bg_models[i];
        if (only && strcmp(only, md->name)) continue;
        for (int l = 0; l < md->n && ok; l++) {
            const bg_level *lv = &md->lv[l];
            int64_t tokens = (int64_t)lv->side * lv->side, c = lv->ch;
            ok = bg_kernel(ctx, &arena, md->name, BG_CONV, 2, c, c, lv->side, 0, reps);
            if (!lv->heads) continue;
            ok = ok && bg_kernel(ctx, &arena, md->name, BG_LINEAR, 2 * tokens, c, c, 0, 0, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_LINEAR, 2 * 77, md->ctx_dim, c, 0, 0, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_LINEAR, 2 * tokens, c, 8 * c, 0, 0, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_LINEAR, 2 * tokens, 4 * c, c, 0, 0, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_LINEAR_ADD, 2 * tokens, c, c, 0, 0, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_LINEAR_ADD, 2 * tokens, 4 * c, c, 0, 0, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_ATTN, 2, tokens, tokens, lv->heads, c / lv->heads, reps) &&
                 bg_kernel(ctx, &arena, md->name, BG_ATTN, 2, tokens, 77, lv->heads, c / lv->heads, reps);
        }
    }
    sdx__arena_free(&arena);
    sdx_destroy(ctx);
    return ok;
}

int main(int argc, char **argv) {
    const char *only = NULL, *sd15 = "/tmp/sdx_bench_sd15_f16.safetensors", *sdxl = "/tmp/sdx_bench_sdxl_f16.safetensors";
    int calls = 3, ok = 1, vae_only = 0, vae = 1, modes = 3, kernels = 0;   /* modes: 1 op by op, 2 graphs */
    sdx_dtype act = SDX_F16;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-vae")) vae = 0;
        else if (!strcmp(a, "--kernels")) kernels = 1;
        else if (v && !strcmp(a, "--only")) only = v, i++;
        else if (v && !strcmp(a, "--calls")) calls = atoi(v), i++;
        else if (v && !strcmp(a, "--vae-only")) vae_only = atoi(v), i++;
        else if (v && !strcmp(a, "--act")) act = !strcmp(v, "f32") ? SDX_F32 : !strcmp(v, "bf16") ? SDX_BF16 : SDX_F16, i++;
        else if (v && !strcmp(a, "--graphs")) modes = !strcmp(v, "off") ? 1 : !strcmp(v, "on") ? 2 : 3, i++;
        else {
            fprintf(stderr, "usage: %s [--only sd15|sdxl] [--calls N] [--act f16|bf16|f32] [--graphs on|off|both] [--vae-only PIXELS] "
                    "[--no-vae] [--kernels]\n", argv[0]);
            return 2;
        }
    }
    if (calls < 1) calls = 1;
    if (vae_only > 0) return bg_vae(vae_only / 8 * 8, calls, act) ? 0 : 1;      /* one decode size alone */
    if (kernels) return bg_kernels(only, calls) ? 0 : 1;
    for (int m = 0; m < 2; m++) {
        const char *preset = m ? "sdxl" : "sd15", *path = m ? sdxl : sd15;
        if (only && strcmp(only, preset)) continue;
        int fine = bg_ensure_checkpoint(preset, path);
        for (int graphs = 0; fine && graphs < 2; graphs++)
            if (modes & (1 << graphs)) fine = bg_run(preset, path, m ? 1024 : 512, calls, act, graphs);
        ok &= fine;
    }
    /* the VAE in each family's default device storage: f16 for SD 1.5,
     * bf16 for SDXL (whose activations pass f16's range) */
    if (vae && (!only || !strcmp(only, "sd15"))) ok &= bg_vae(512, calls, act == SDX_F32 ? SDX_F32 : SDX_F16);
    if (vae && (!only || !strcmp(only, "sdxl"))) ok &= bg_vae(1024, calls, act == SDX_F32 ? SDX_F32 : SDX_BF16);
    return ok ? 0 : 1;
}
