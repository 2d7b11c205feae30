/* Decoder benchmark: seconds to decode a 512x512 and a 1024x1024 image
 * with the full-size SD VAE decoder and with TAESD's, both with random
 * f16 weights of the real sizes (generated once under $SDX_BENCH_DIR or
 * /tmp by the sdx-mkckpt code). The VAE runs untiled (f32 activations), and
 * with --tile N also in tiles of at most N x N latent pixels; TAESD in one
 * pass. The SDXL VAE has the same decoder, so its numbers are these.
 *
 *   cc -std=c11 -O2 -march=native -o /tmp/bench_decode bench/bench_decode.c -lm -lpthread
 *   /tmp/bench_decode [--threads N] [--sizes 512,1024] [--skip-vae] [--skip-taesd] [--tile N]
 *
 * Reported per decode: wall seconds and the arena's activation peak; for
 * tiled decodes also the host planes' peak and the rel-L2 against the
 * untiled image. */
#define _DEFAULT_SOURCE 1
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#define SDX_MKCKPT_NO_MAIN
#include "../tools/sdx-mkckpt.c"
#include <time.h>

static double bd_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bd_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* "512,1024" -> sizes (multiples of 8); returns the count or -1. */
static int bd_parse_sizes(const char *s, int *out, int max) {
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 8 || v % 8 || v > 16384 || (*end && *end != ',')) return -1;
        out[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

typedef int (*bd_writer)(const char *, int, uint64_t, char *, size_t);

static int bd_ensure(const char *path, bd_writer write, const char *what) {
    char err[2048];
    if (bd_exists(path)) return 1;
    printf("generating %s (random f16 %s)...\n", path, what);
    fflush(stdout);
    if (!write(path, 1, 1, err, sizeof err)) { fprintf(stderr, "bench_decode: %s\n", err); return 0; }
    return 1;
}

/* One decode of a size x size image; prints seconds and the arena peak.
 * tile > 0: tiled, compared with `ref` (the untiled image); else the
 * image is kept in `ref` when it is non-NULL. */
static int bd_decode(sdx_ctx *ctx, const char *name, const sdx__vae *vae, const sdx__taesd *taesd, int size, int tile,
                     sdx_tensor *ref) {
    sdx__arena arena;
    sdx_tensor z, img;
    sdx__vae_tiling off;
    char extra[128] = "";
    int64_t zs[4] = { 1, 4, size / 8, size / 8 }, is[4] = { 1, 3, size, size };
    uint64_t s = 12345;
    double t0, dt;
    int rc;
    if (sdx_tensor_alloc(ctx, &z, SDX_F32, 4, zs) != SDX_OK || sdx_tensor_alloc(ctx, &img, SDX_F32, 4, is) != SDX_OK) return 0;
    for (int64_t i = 0; i < sdx_tensor_numel(&z); i++)
        ((float *)z.data)[i] = (float)(((double)(mk_next(&s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0) * 1.7320508075688772);
    memset(&off, 0, sizeof off);
    off.mode = tile > 0 ? 1 : -1;
    off.tile_h = off.tile_w = tile;
    sdx__arena_init(&arena, ctx, 0);
    t0 = bd_now();
    rc = vae ? sdx__vae_decode(ctx, (sdx__vae *)vae, &arena, &z, &img, &off) : sdx__taesd_decode(ctx, taesd, &arena, &z, &img, 1);
    dt = bd_now() - t0;
    if (rc == SDX_OK && tile > 0) {
        double num = 0, den = 0;
        int have_ref = ref && ref->data;
        for (int64_t i = 0; have_ref && i < sdx_tensor_numel(&img); i++) {
            double a = ((float *)img.data)[i], b = ((float *)ref->data)[i];
            num += (a - b) * (a - b);
            den += b * b;
        }
        int len = snprintf(extra, sizeof extra, "   host planes %5.0f MB", (double)vae->tiled_plane_peak / 1048576.0);
        if (have_ref)
            snprintf(extra + len, sizeof extra - (size_t)len, "   rel-L2 vs untiled %.1e", den > 0 ? sqrt(num / den) : sqrt(num));
    }
    if (rc == SDX_OK)
        printf("  %-6s %4dx%-4d  %7.2f s   activations %5.0f MB%s\n", name, size, size, dt, (double)arena.peak / 1048576.0, extra);
    else
        fprintf(stderr, "bench_decode: %s %dx%d: %s\n", name, size, size, sdx_last_error(ctx));
    fflush(stdout);
    sdx__arena_free(&arena);
    sdx_tensor_free(ctx, &z);
    if (rc == SDX_OK && ref && tile <= 0) *ref = img;
    else sdx_tensor_free(ctx, &img);
    return rc == SDX_OK;
}

int main(int argc, char **argv) {
    const char *dir = getenv("SDX_BENCH_DIR");
    char vae_path[1024], taesd_path[1024];
    int threads = 0, sizes[4] = { 512, 1024 }, n_sizes = 2, skip_vae = 0, skip_taesd = 0, tile = 0, ok = 1;
    sdx_desc desc;
    sdx_ctx *ctx;
    sdx_st *vst = NULL, *tst = NULL;
    sdx__vae vae;
    sdx__taesd taesd;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--skip-vae")) skip_vae = 1;
        else if (!strcmp(argv[i], "--skip-taesd")) skip_taesd = 1;
        else if (!strcmp(argv[i], "--tile") && i + 1 < argc) tile = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) n_sizes = bd_parse_sizes(argv[++i], sizes, 4);
        else {
            fprintf(stderr, "usage: %s [--threads N] [--sizes 512,1024] [--skip-vae] [--skip-taesd] [--tile N]\n", argv[0]);
            return 2;
        }
    }
    if (n_sizes < 1) return 2;
    if (!dir || !*dir) dir = "/tmp";
    snprintf(vae_path, sizeof vae_path, "%s/sdx_bench_vae_decoder_f16.safetensors", dir);
    snprintf(taesd_path, sizeof taesd_path, "%s/sdx_bench_taesd_decoder_f16.safetensors", dir);
    if (!bd_ensure(taesd_path, mk_write_taesd_decoder, "TAESD decoder") ||
        (!skip_vae && !bd_ensure(vae_path, mk_write_vae_decoder, "SD VAE decoder")))
        return 1;
    memset(&desc, 0, sizeof desc);
    desc.n_threads = threads;
    if (!(ctx = sdx_create(&desc))) return 1;
    sdx__taesd_init(&taesd);
    memset(&vae, 0, sizeof vae);
    if (sdx_st_open(ctx, taesd_path, &tst) != SDX_OK || sdx__taesd_load(ctx, &taesd, tst) != SDX_OK ||
        (!skip_vae && (sdx_st_open(ctx, vae_path, &vst) != SDX_OK || sdx__vae_load(ctx, &vae, vst, "") != SDX_OK))) {
        fprintf(stderr, "bench_decode: %s\n", sdx_last_error(ctx));
        ok = 0;
    }
    if (ok) printf("decode, f16 weights, f32 activations, %d threads\n", sdx_threads(ctx));
    for (int i = 0; ok && i < n_sizes; i++) {
        sdx_tensor ref;
        memset(&ref, 0, sizeof ref);
        if (!skip_taesd) ok &= bd_decode(ctx, "taesd", NULL, &taesd, sizes[i], 0, NULL);
        if (!skip_vae) ok &= bd_decode(ctx, "vae", &vae, NULL, sizes[i], 0, tile > 0 ? &ref : NULL);
        if (!skip_vae && tile > 0 && ok) ok &= bd_decode(ctx, "tiled", &vae, NULL, sizes[i], tile, &ref);
        sdx_tensor_free(ctx, &ref);
    }
    sdx__taesd_free(&taesd);
    if (!skip_vae) sdx__vae_free(&vae);
    sdx_st_close(tst);
    sdx_st_close(vst);
    sdx_destroy(ctx);
    return ok ? 0 : 1;
}
