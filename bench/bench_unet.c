/* UNet benchmark: seconds per call (batch 2 = cond + uncond) and memory for
 * a full-size SD 1.5 UNet at 512x512 and an SDXL UNet at 1024x1024, with
 * random f16 weights (whole checkpoints generated once under $SDX_BENCH_DIR
 * or /tmp by the sdx-mkckpt code, shared with bench_gen, or given on the
 * command line).
 *
 *   cc -std=c11 -O2 -march=native -o /tmp/bench_unet bench/bench_unet.c -lm -lpthread
 *   /tmp/bench_unet [--only sd15|sdxl] [--calls N] [--threads N]
 *                   [--sd15 file] [--sdxl file] [--size PIXELS] [--control 1]
 *                   [--compute f32|bf16] [--quant-exact 1]
 *
 * --control 1 adds the same number of controlled steps: a random f16
 * ControlNet for that UNet (also generated once under /tmp) on a random
 * control picture, then the UNet with its residuals.
 *
 * Reported: RSS after mmapping the checkpoint (should stay small: weights
 * are paged in on use), after loading the UNet, the arena's activation
 * peak, getrusage peak RSS, and wall seconds of each call (the first one
 * includes paging the weights in), and the CPU seconds of all threads of
 * each call (robust to a shared machine). --quant-exact 1 sets
 * sdx_desc.quant_exact (a GGUF file's matrices multiplied as dequantized,
 * not on int8 dot products). */
#define _DEFAULT_SOURCE 1
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#define SDX_MKCKPT_NO_MAIN
#include "../tools/sdx-mkckpt.c"
#include <sys/resource.h>
#include <time.h>

static double bu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Resident set size now, in MB (from /proc; 0 where unavailable). */
static double bu_rss_mb(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

static double bu_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double bu_peak_rss_mb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;   /* KB on Linux */
}

static int bu_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* Generates at path, unless it is already there, the preset's whole f16
 * checkpoint (the UNet is read from it; bench_gen uses the same file) or
 * its ControlNet. The writer checks the free space first. */
static int bu_ensure_file(const char *preset, const char *path, int controlnet) {
    mk_ckpt ck;
    char err[2048];
    double t0;
    if (bu_exists(path)) return 1;
    mk_ckpt_preset(preset, 1, &ck);
    printf("generating %s (random f16 %s %s)...\n", path, preset, controlnet ? "ControlNet" : "checkpoint");
    fflush(stdout);
    t0 = bu_now();
    if (!(controlnet ? mk_write_controlnet(path, &ck.unet, 1, 1, err, sizeof err) : mk_write_ckpt(path, &ck, SDX_F16, 1, err, sizeof err))) {
        fprintf(stderr, "bench_unet: %s\n", err);
        return 0;
    }
    printf("  written in %.1f s\n", bu_now() - t0);
    return 1;
}

static void bu_fill(sdx_tensor *t, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    float *v = (float *)t->data;
    for (int64_t i = 0; i < sdx_tensor_numel(t); i++) {
        double u = (double)(mk_next(&s) >> 11) * (1.0 / 9007199254740992.0);
        v[i] = (float)((2.0 * u - 1.0) * 1.7320508075688772);   /* unit variance */
    }
}

/* `calls` controlled steps: ControlNet residuals, then the UNet with them. */
static int bu_control(sdx_ctx *ctx, sdx__unet *u, sdx__arena *arena, const char *path, const sdx_tensor *x, const float *ts,
                      const sdx_tensor *cx, const sdx_tensor *y, sdx_tensor *out, int pixels, int calls) {
    sdx_st *st = NULL;
    sdx__controlnet cn;
    sdx__unet_control ctl;
    sdx_tensor hint;
    int ok = 0, loaded = 0;
    memset(&hint, 0, sizeof hint);
    if (sdx_st_open(ctx, path, &st) != SDX_OK || sdx__controlnet_load(ctx, &cn, st) != SDX_OK) goto done;
    loaded = 1;
    if (sdx__controlnet_fit(ctx, &cn, u, "the benchmark UNet") != SDX_OK) goto done;
    {
        const int64_t shape[4] = { x->shape[0], cn.hint_channels, pixels, pixels };
        if (sdx_tensor_alloc(ctx, &hint, SDX_F32, 4, shape) != SDX_OK) goto done;
    }
    bu_fill(&hint, 4);
    for (int64_t i = 0; i < sdx_tensor_numel(&hint); i++) ((float *)hint.data)[i] = ((float *)hint.data)[i] > 0;   /* an edge map */
    for (int c = 0; c < calls; c++) {
        sdx__mark m = sdx__arena_mark(arena);
        double t0 = bu_now(), t1;
        int rc = sdx__controlnet_alloc(&cn, arena, u->act_type, x->shape[0], x->shape[2], x->shape[3], &ctl);
        if (rc == SDX_OK) rc = sdx__controlnet_forward(ctx, &cn, arena, x, ts, cx, y, &hint, 1.0f, &ctl, 0);
        t1 = bu_now();
        if (rc == SDX_OK) rc = sdx__unet_forward_control(ctx, u, arena, x, ts, cx, y, &ctl, NULL, out);
        sdx__arena_release(arena, m);
        if (rc != SDX_OK) goto done;
        printf("  %dx%d batch 2, controlled: call %d: %.2f s/call (ControlNet %.2f s + UNet %.2f s)\n", pixels, pixels, c + 1,
               bu_now() - t0, t1 - t0, bu_now() - t1);
        fflush(stdout);
    }
    ok = 1;
done:
    sdx_tensor_free(ctx, &hint);
    if (loaded) sdx__controlnet_free(&cn);
    sdx_st_close(st);
    return ok;
}

static int bu_run(const char *preset, const char *path, const char *cn_path, int pixels, int calls, int threads,
                  sdx_dtype compute, int quant_exact) {
    sdx_desc desc;
    sdx_ctx *ctx;
    sdx_st *st = NULL;
    sdx__unet u;
    sdx__arena arena;
    sdx_tensor x, cx, y, out;
    float ts[2] = { 999.0f, 999.0f };
    int lat = pixels / 8, ok = 0;
    double rss0 = bu_rss_mb(), t0;
    char line[512];
    memset(&desc, 0, sizeof desc);
    desc.n_threads = threads;
    desc.quant_exact = quant_exact;
    ctx = sdx_create(&desc);
    if (!ctx) return 0;
    memset(&x, 0, sizeof x); memset(&cx, 0, sizeof cx); memset(&y, 0, sizeof y); memset(&out, 0, sizeof out);
    if (sdx_st_open(ctx, path, &st) != SDX_OK) goto fail;
    printf("%s: %s, %d threads, %s compute%s\n", preset, path, sdx_threads(ctx), sdx_dtype_name(compute),
           quant_exact ? ", quant_exact" : "");
    printf("  RSS after mmap: %.0f MB (before: %.0f MB)\n", bu_rss_mb(), rss0);
    if (sdx__unet_load(ctx, &u, st, "model.diffusion_model.") != SDX_OK) goto fail;
    u.compute_type = compute;
    sdx__unet_describe(&u, line, sizeof line);
    printf("  %s\n  RSS after load: %.0f MB\n", line, bu_rss_mb());
    {
        int64_t xs[4] = { 2, u.in_channels, lat, lat }, cs[3] = { 2, 77, u.context_dim };
        int64_t ys[2] = { 2, u.adm_channels > 0 ? u.adm_channels : 1 }, os[4] = { 2, u.out_channels, lat, lat };
        if (sdx_tensor_alloc(ctx, &x, SDX_F32, 4, xs) != SDX_OK || sdx_tensor_alloc(ctx, &cx, SDX_F32, 3, cs) != SDX_OK ||
            sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) != SDX_OK || sdx_tensor_alloc(ctx, &out, SDX_F32, 4, os) != SDX_OK)
            goto fail_unet;
    }
    bu_fill(&x, 1); bu_fill(&cx, 2); bu_fill(&y, 3);
    sdx__arena_init(&arena, ctx, 0);
    for (int c = 0; c < calls; c++) {
        double c0 = bu_cpu();
        t0 = bu_now();
        if (sdx__unet_forward(ctx, &u, &arena, &x, ts, &cx, u.adm_channels > 0 ? &y : NULL, &out) != SDX_OK) {
            sdx__arena_free(&arena);
            goto fail_unet;
        }
        printf("  %dx%d batch 2: call %d: %.2f s/call, %.2f CPU s (RSS now %.0f MB)\n", pixels, pixels, c + 1, bu_now() - t0,
               bu_cpu() - c0, bu_rss_mb());
        fflush(stdout);
    }
    if (cn_path && !bu_control(ctx, &u, &arena, cn_path, &x, ts, &cx, u.adm_channels > 0 ? &y : NULL, &out, pixels, calls)) {
        sdx__arena_free(&arena);
        goto fail_unet;
    }
    printf("  activation arena peak %.0f MB (reserved %.0f MB); peak RSS (ru_maxrss) %.0f MB\n",
           (double)arena.peak / 1048576.0, (double)arena.reserved / 1048576.0, bu_peak_rss_mb());
    sdx__arena_free(&arena);
    ok = 1;
fail_unet:
    sdx__unet_free(&u);
fail:
    if (!ok) fprintf(stderr, "bench_unet: %s\n", sdx_last_error(ctx));
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &cx); sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &out);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return ok;
}

int main(int argc, char **argv) {
    const char *only = NULL, *dir = getenv("SDX_BENCH_DIR");
    char sd15_buf[1024], sdxl_buf[1024], cn15[1024], cnxl[1024];
    const char *sd15 = sd15_buf, *sdxl = sdxl_buf;
    int calls = 2, threads = 0, size = 0, ok = 1, control = 0, quant_exact = 0;
    sdx_dtype compute = SDX_F32;
    if (!dir || !*dir) dir = "/tmp";
    snprintf(sd15_buf, sizeof sd15_buf, "%s/sdx_bench_sd15_ckpt_f16.safetensors", dir);   /* bench_gen's files */
    snprintf(sdxl_buf, sizeof sdxl_buf, "%s/sdx_bench_sdxl_ckpt_f16.safetensors", dir);
    snprintf(cn15, sizeof cn15, "%s/sdx_bench_cn_sd15_f16.safetensors", dir);
    snprintf(cnxl, sizeof cnxl, "%s/sdx_bench_cn_sdxl_f16.safetensors", dir);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--only")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sd15")) sd15 = argv[i + 1];
        else if (!strcmp(argv[i], "--sdxl")) sdxl = argv[i + 1];
        else if (!strcmp(argv[i], "--size")) size = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--control")) control = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--quant-exact")) quant_exact = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--compute") && (!strcmp(argv[i + 1], "f32") || !strcmp(argv[i + 1], "bf16")))
            compute = strcmp(argv[i + 1], "bf16") ? SDX_F32 : SDX_BF16;
        else {
            fprintf(stderr, "usage: %s [--only sd15|sdxl] [--calls N] [--threads N] [--sd15 F] [--sdxl F] [--size PX] [--control 1]"
                    " [--compute f32|bf16] [--quant-exact 1]\n", argv[0]);
            return 2;
        }
    }
    if (calls < 1) calls = 1;
    if (!only || !strcmp(only, "sd15"))
        ok &= bu_ensure_file("sd15", sd15, 0) && (!control || bu_ensure_file("sd15", cn15, 1)) &&
              bu_run("sd15", sd15, control ? cn15 : NULL, size ? size : 512, calls, threads, compute, quant_exact);
    if (!only || !strcmp(only, "sdxl"))
        ok &= bu_ensure_file("sdxl", sdxl, 0) && (!control || bu_ensure_file("sdxl", cnxl, 1)) &&
              bu_run("sdxl", sdxl, control ? cnxl : NULL, size ? size : 1024, calls, threads, compute, quant_exact);
    return ok ? 0 : 1;
}
