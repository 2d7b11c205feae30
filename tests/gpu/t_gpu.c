/* Suite "gpu" (make test-gpu): the GPU backend of sdx_hip.h against the
 * CPU kernels, on a machine with a GPU. Built as two translation units:
 * this C file (sdx.h's implementation, the CPU kernels `sdx__cpu_*`) and
 * examples/sdx_hip.cu (sdx_hip.h's implementation, nvcc or hipcc).
 *
 *   - every kernel of the ops table on fresh random inputs, once per
 *     storage type (all operands F32, F16, BF16) and mixed: rel-L2 to the
 *     CPU result <= 1e-5 when every operand is F32, <= 1e-3 otherwise;
 *   - the f16/bf16 stress inputs of tests/t_precision.c stay finite and
 *     match the CPU;
 *   - every pipeline golden in ../shared/golden through the GPU: latent
 *     rel-L2 <= 1e-3 to the golden (f32 activations; the half default
 *     within the half budget);
 *   - out of device memory: a clean SDX_ERR_NOMEM, and the context
 *     recovers.
 * Without a GPU every case SKIPs with the reason. Linked instead with
 * sdx_hip.h compiled for the simulator of tests/gpu/sim.h (`make
 * test-gpu-sim`, tests/gpu/run-sim), the same cases run the GPU kernels on
 * the CPU: the kernel cases there are part of `make test`. */
#define T_NO_STB                /* linked without stb_image */
#include "../test.h"
#include "../../sdx_hip.h"

/* ---- set-up ---------------------------------------------------------------- */

/* A GPU context (t_desc's) with its log appended to `log` (4 KiB; NULL:
 * none) and graphs on or off; NULL with the reason in t_msg. */
static void tg_log(sdx_log_level level, const char *msg, void *user) {
    char *log = (char *)user;
    size_t n = strlen(log);
    (void)level;
    snprintf(log + n, 4096 - n, "%s\n", msg);
}

static sdx_ctx *tg_gpu_with(char *log, int no_graphs) {
    sdx_desc d = t_desc();
    sdx_ctx *ctx;
    d.log = log ? tg_log : NULL;
    d.log_level = SDX_LOG_INFO;
    d.user = log;
    d.no_graphs = no_graphs;
    if (!(ctx = sdx_create(&d))) return NULL;
    if (sdx_hip_use(ctx, 0) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "no GPU: %s", sdx_last_error(ctx));
        sdx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static sdx_ctx *tg_gpu(void) { return tg_gpu_with(NULL, 0); }

#define TG_NEED_GPU(var) sdx_ctx *var = tg_gpu(); if (!var) return T_SKIP

/* One operand on both sides: a host tensor for the CPU kernel and a
 * device tensor for the GPU's, holding the same stored values. */
typedef struct tg_t {
    sdx_tensor host, dev;
    float *vals;        /* the values as stored (rounded to the dtype) */
} tg_t;

/* The host side: random values (offset + scale * normal) as stored. */
static int tg_fill(tg_t *t, sdx_dtype dt, int ndim, const int64_t *shape, double scale, double offset) {
    int64_t n;
    memset(t, 0, sizeof *t);
    if (sdx_tensor_alloc(NULL, &t->host, dt, ndim, shape) != SDX_OK) return 0;
    n = sdx_tensor_numel(&t->host);
    t->vals = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!t->vals) return 0;
    for (int64_t i = 0; i < n; i++) t->vals[i] = (float)(offset + scale * t_normal());
    sdx__store_f32(t->host.data, dt, 0, n, t->vals);
    sdx__load_f32(t->host.data, dt, 0, n, t->vals);
    return 1;
}

/* The device side: the same stored values in GPU memory. */
static int tg_upload(sdx_ctx *gpu, tg_t *t) {
    t->dev = t->host;
    t->dev.owned = 0;
    t->dev.device = 1;
    t->dev.data = sdx__dev_alloc(gpu, sdx_tensor_nbytes(&t->host));
    return t->dev.data && sdx__upload(gpu, &t->dev, t->vals) == SDX_OK;
}

static int tg_make(sdx_ctx *gpu, tg_t *t, sdx_dtype dt, int ndim, const int64_t *shape, double scale, double offset) {
    return tg_fill(t, dt, ndim, shape, scale, offset) && tg_upload(gpu, t);
}

/* n values rounded to what bf16 holds, then stored in f16 at f16 (the
 * buffer serves the bf16 rounding first) and read back as stored. */
static void tg_through_bf16(float *vals, void *f16, int64_t n) {
    sdx__store_f32(f16, SDX_BF16, 0, n, vals);
    sdx__load_f32(f16, SDX_BF16, 0, n, vals);
    sdx__store_f32(f16, SDX_F16, 0, n, vals);
    sdx__load_f32(f16, SDX_F16, 0, n, vals);
}

/* A GEMM's weight for x of type xt: with bf16 x and f16 w the GPU
 * rounds w to bf16 for the matrix units (as the CPU's bf16 mode packs
 * it), so the weights are made ones bf16 holds exactly and the
 * comparison stays about the GEMM itself. */
static int tg_make_weight(sdx_ctx *gpu, tg_t *t, sdx_dtype xt, sdx_dtype dt, int ndim, const int64_t *shape) {
    if (!tg_fill(t, dt, ndim, shape, 0.05, 0)) return 0;
    if (xt == SDX_BF16 && dt == SDX_F16) tg_through_bf16(t->vals, t->host.data, sdx_tensor_numel(&t->host));
    return tg_upload(gpu, t);
}

static void tg_free(sdx_ctx *gpu, tg_t *t) {
    if (t->dev.data) sdx__dev_free(gpu, t->dev.data, sdx_tensor_nbytes(&t->dev));
    sdx_tensor_free(NULL, &t->host);
    free(t->vals);
    memset(t, 0, sizeof *t);
}

/* rel-L2 of y's device result to its host (CPU) result. */
static double tg_compare(sdx_ctx *gpu, const tg_t *y) {
    int64_t n = sdx_tensor_numel(&y->host);
    float *a = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float)), *b = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    double rel = INFINITY;
    if (a && b && sdx__download(gpu, a, &y->dev) == SDX_OK) {
        sdx__load_f32(y->host.data, y->host.dtype, 0, n, b);
        rel = 0;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(a[i]) && isfinite(b[i])) rel = INFINITY;
        if (rel == 0) rel = n ? t_rel_l2_f32(a, b, (size_t)n) : 0.0;
    }
    free(a);
    free(b);
    return rel;
}

static const sdx_dtype tg_types[3] = { SDX_F32, SDX_F16, SDX_BF16 };

static double tg_tol(const sdx_dtype *dts, int n) {
    for (int i = 0; i < n; i++) if (dts[i] != SDX_F32) return 1e-3;
    return 1e-5;
}

/* Operand sets: the three plain storage types, then four mixes (the
 * third: f32 rows into a half result, as the text encoder's context meets
 * the UNet's f16 weights; the fourth: bf16 activations with f16 weights,
 * as the SDXL VAE runs on an f16 checkpoint). */
#define TG_SETS 7
static void tg_set(int s, sdx_dtype *d, int n) {
    static const sdx_dtype mix[4][4] = { { SDX_F32, SDX_F16, SDX_F16, SDX_F32 }, { SDX_BF16, SDX_F32, SDX_BF16, SDX_F16 },
                                         { SDX_F32, SDX_F16, SDX_F16, SDX_F16 }, { SDX_BF16, SDX_F16, SDX_F32, SDX_BF16 } };
    for (int i = 0; i < n; i++) d[i] = s < 3 ? tg_types[s] : mix[s - 3][i % 4];
}

#define TG_CHECK_REL(gpu, y, tol, ...) do { double r_ = tg_compare(gpu, y); \
    T_NOTE("%s: rel-L2 %.3g", t_label, r_); \
    if (!(r_ <= (tol))) { snprintf(t_msg, sizeof t_msg, "%s: rel-L2 %.3g > %.0e", t_label, r_, (double)(tol)); rc = T_FAIL; } } while (0)

static char t_label[256];

/* ---- GEMMs --------------------------------------------------------------------- */

static int tg_linear_case(sdx_ctx *gpu, sdx_ctx *cpu, const sdx_dtype *d, int64_t rows, int64_t in, int64_t out, int bias) {
    int64_t xs[3] = { 2, rows, in }, ws[2] = { out, in }, bs[1] = { out }, ys[3] = { 2, rows, out };
    tg_t x, w, b, y;
    int rc = T_PASS;
    memset(&b, 0, sizeof b);
    if (!tg_make(gpu, &x, d[0], 3, xs, 1, 0) || !tg_make_weight(gpu, &w, d[0], d[1], 2, ws) ||
        (bias && !tg_make(gpu, &b, d[2], 1, bs, 1, 0)) || !tg_make(gpu, &y, d[3], 3, ys, 0, 0)) {
        snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
        rc = T_FAIL;
    } else if (sdx__cpu_linear(cpu, &y.host, &x.host, &w.host, bias ? &b.host : NULL, SDX_F32) != SDX_OK ||
               sdx__linear(gpu, &y.dev, &x.dev, &w.dev, bias ? &b.dev : NULL, SDX_F32) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "linear: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        snprintf(t_label, sizeof t_label, "linear [2,%lld,%lld]x[%lld,%lld] %s/%s/%s->%s", (long long)rows, (long long)in, (long long)out,
                 (long long)in, sdx_dtype_name(d[0]), sdx_dtype_name(d[1]), sdx_dtype_name(d[2]), sdx_dtype_name(d[3]));
        TG_CHECK_REL(gpu, &y, tg_tol(d, 4));
    }
    tg_free(gpu, &x); tg_free(gpu, &w); tg_free(gpu, &b); tg_free(gpu, &y);
    return rc;
}

static int gpu_linear_matches_cpu(void) {
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(1);
    for (int s = 0; s < TG_SETS && rc == T_PASS; s++) {
        sdx_dtype d[4];
        tg_set(s, d, 4);
        /* tile-aligned, ragged (77 tokens, odd widths), bias-less, fewer
         * k-steps than the tensor-core kernel keeps in flight (K 24, 40);
         * the last has K % 8 != 0 (no 16-byte loads on the tensor cores).
         * 10 and 2 rows take the few-rows kernel, with and without 16-byte
         * loads; 4 rows of 1320 and 2 of 300 pass over k 6 and 10 times a
         * lane (two and three of its batches of w's loads). */
        rc = tg_linear_case(gpu, cpu, d, 128, 320, 640, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 77, 72, 131, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 5, 1000, 17, 0);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 9, 24, 40, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 200, 40, 264, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 33, 77, 50, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 1, 77, 45, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 2, 1320, 24, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 1, 300, 20, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 40, 2048, 96, 1);   /* one tile, k split in 4 */
        /* N % 160 == 0: Hopper's 160-wide tiles, ragged rows, and split */
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 77, 64, 480, 1);
        if (rc == T_PASS) rc = tg_linear_case(gpu, cpu, d, 40, 2048, 160, 1);
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

static int tg_conv_case(sdx_ctx *gpu, sdx_ctx *cpu, const sdx_dtype *d, int64_t c, int64_t o, int64_t h, int64_t w, int k,
                        int stride, int pt, int pl, int pb, int pr, double xs_scale, double xs_off) {
    int64_t ho = (h + pt + pb - k) / stride + 1, wo = (w + pl + pr - k) / stride + 1;
    int64_t xs[4] = { 2, c, h, w }, ws[4] = { o, c, k, k }, bs[1] = { o }, ys[4] = { 2, o, ho, wo };
    tg_t x, wt, b, y;
    int rc = T_PASS;
    if (!tg_make(gpu, &x, d[0], 4, xs, xs_scale, xs_off) || !tg_make_weight(gpu, &wt, d[0], d[1], 4, ws) ||
        !tg_make(gpu, &b, d[2], 1, bs, 1, 0) || !tg_make(gpu, &y, d[3], 4, ys, 0, 0)) {
        snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
        rc = T_FAIL;
    } else if (sdx__cpu_conv2d_pad(cpu, &y.host, &x.host, &wt.host, &b.host, stride, pt, pl, pb, pr, SDX_F32) != SDX_OK ||
               sdx__conv2d_pad(gpu, &y.dev, &x.dev, &wt.dev, &b.dev, stride, pt, pl, pb, pr, SDX_F32) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "conv2d: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        snprintf(t_label, sizeof t_label, "conv2d %lldx%lld c%lld->o%lld k%d s%d pad %d,%d,%d,%d %s/%s/%s->%s", (long long)h, (long long)w,
                 (long long)c, (long long)o, k, stride, pt, pl, pb, pr, sdx_dtype_name(d[0]), sdx_dtype_name(d[1]),
                 sdx_dtype_name(d[2]), sdx_dtype_name(d[3]));
        TG_CHECK_REL(gpu, &y, tg_tol(d, 4));
    }
    tg_free(gpu, &x); tg_free(gpu, &wt); tg_free(gpu, &b); tg_free(gpu, &y);
    return rc;
}

static int gpu_conv2d_matches_cpu(void) {
    /* {C, O, H, W, k, stride, pads top, left, bottom, right} */
    static const int cases[][10] = {
        { 64, 96, 17, 19, 3, 1, 1, 1, 1, 1 },   /* 3x3, ragged tiles */
        { 32, 160, 11, 13, 3, 1, 1, 1, 1, 1 },  /* 160-wide tiles */
        { 32, 32, 16, 16, 3, 2, 0, 0, 1, 1 },   /* downsample */
        { 160, 130, 9, 7, 1, 1, 0, 0, 0, 0 },   /* 1x1 */
        { 16, 24, 12, 12, 1, 1, 0, 0, 0, 0 },   /* one k-step */
        { 24, 40, 11, 13, 5, 1, 2, 1, 2, 3 },   /* 5x5, uneven pads */
        { 4, 320, 8, 8, 3, 1, 1, 1, 1, 1 },     /* conv_in */
        { 20, 24, 10, 9, 5, 1, 2, 2, 2, 2 },    /* C % 8 != 0: gathered, 8 k-steps */
        { 256, 40, 6, 7, 3, 1, 1, 1, 1, 1 },    /* k split (in 2 on the simulator's 4 SMs) */
        { 116, 24, 5, 5, 3, 1, 1, 1, 1, 1 },    /* gathered, k long (a gather never splits) */
        /* C % 64 == 0 and Wo dividing 128 or 128 dividing it: the TMA's
         * boxes on Hopper */
        { 64, 96, 13, 16, 3, 1, 1, 1, 1, 1 },   /* a tile of 8 output rows, past the picture's end */
        { 128, 160, 8, 8, 3, 1, 1, 1, 1, 1 },   /* an image of half a tile */
        { 64, 40, 3, 256, 3, 1, 1, 1, 1, 1 },   /* rows of two tiles */
        { 64, 24, 9, 32, 5, 1, 2, 1, 3, 3 },    /* 5x5, uneven pads */
        { 192, 32, 7, 64, 1, 1, 0, 0, 0, 0 },   /* 1x1 */
        { 512, 40, 4, 4, 3, 1, 1, 1, 1, 1 },    /* k split */
    };
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(2);
    for (int s = 0; s < TG_SETS && rc == T_PASS; s++) {
        sdx_dtype d[4];
        tg_set(s, d, 4);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0] && rc == T_PASS; i++) {
            const int *c = cases[i];
            rc = tg_conv_case(gpu, cpu, d, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], 1, 0);
        }
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* The CPU's convolution plus a residual, rounded once to y's type as the
 * GPU's epilogue does (its own conv2d_pad_add rounds the convolution's
 * output first: a second rounding, past the half tolerance in bf16). */
static int tg_cpu_conv_add_once(sdx_ctx *cpu, tg_t *y, const tg_t *x, const tg_t *w, const tg_t *b, const sdx_tensor *res) {
    const int64_t n = sdx_tensor_numel(&y->host);
    sdx_tensor conv;
    float *r = (float *)malloc((size_t)n * sizeof(float));
    int rc = r ? sdx_tensor_alloc(NULL, &conv, SDX_F32, 4, y->host.shape) : SDX_ERR_NOMEM;
    if (rc == SDX_OK) {
        sdx__load_f32(res->data, res->dtype, 0, n, r);      /* before y is written: res may be y */
        if ((rc = sdx__cpu_conv2d_pad(cpu, &conv, &x->host, &w->host, &b->host, 1, 1, 1, 1, 1, SDX_F32)) == SDX_OK) {
            for (int64_t i = 0; i < n; i++) r[i] += ((const float *)conv.data)[i];
            sdx__store_f32(y->host.data, y->host.dtype, 0, n, r);
        }
        sdx_tensor_free(NULL, &conv);
    }
    free(r);
    return rc;
}

/* y = linear(x) or a 3x3 conv(x), plus a residual (bias too), on both
 * sides: res is y itself (in place) or a tensor of its own in another
 * type. The GPU adds it in the GEMM's epilogue (the split-k sum's, the
 * few-row and SIMT kernels'), the CPU's linear in its GEMM's store. */
static int tg_residual_case(sdx_ctx *gpu, sdx_ctx *cpu, const sdx_dtype *d, int conv, int64_t rows, int64_t c, int64_t o, int in_place) {
    int64_t lx[3] = { 2, rows, c }, lw[2] = { o, c }, ly[3] = { 2, rows, o }, bs[1] = { o };
    int64_t cx[4] = { 2, c, rows, rows + 3 }, cw[4] = { o, c, 3, 3 }, cy[4] = { 2, o, rows, rows + 3 };
    const int nd = conv ? 4 : 3;
    const int64_t *ys = conv ? cy : ly;
    tg_t x, w, b, y, r;
    int rc = T_PASS;
    memset(&r, 0, sizeof r);
    if (!tg_make(gpu, &x, d[0], nd, conv ? cx : lx, 1, 0) || !tg_make_weight(gpu, &w, d[0], d[1], conv ? 4 : 2, conv ? cw : lw) ||
        !tg_make(gpu, &b, d[2], 1, bs, 1, 0) || !tg_make(gpu, &y, d[3], nd, ys, 1, 0) ||
        (!in_place && !tg_make(gpu, &r, d[3] == SDX_F32 ? SDX_BF16 : SDX_F32, nd, ys, 1, 0))) {
        snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        const sdx_tensor *rh = in_place ? &y.host : &r.host, *rd = in_place ? &y.dev : &r.dev;
        int c_rc = conv ? tg_cpu_conv_add_once(cpu, &y, &x, &w, &b, rh) : sdx__cpu_linear_add(cpu, &y.host, &x.host, &w.host, &b.host, rh, SDX_F32);
        int g_rc = conv ? sdx__conv2d_pad_add(gpu, &y.dev, &x.dev, &w.dev, &b.dev, rd, 1, 1, 1, 1, 1, SDX_F32)
                        : sdx__linear_add(gpu, &y.dev, &x.dev, &w.dev, &b.dev, rd, SDX_F32);
        if (c_rc != SDX_OK || g_rc != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "%s: %s / %s", conv ? "conv2d_pad_add" : "linear_add", sdx_last_error(cpu), sdx_last_error(gpu));
            rc = T_FAIL;
        } else {
            snprintf(t_label, sizeof t_label, "%s %lld rows c%lld->o%lld, res %s, %s/%s/%s->%s", conv ? "conv2d_pad_add" : "linear_add",
                     (long long)rows, (long long)c, (long long)o, in_place ? "in place" : sdx_dtype_name(r.host.dtype),
                     sdx_dtype_name(d[0]), sdx_dtype_name(d[1]), sdx_dtype_name(d[2]), sdx_dtype_name(d[3]));
            TG_CHECK_REL(gpu, &y, tg_tol(d, 4));
        }
    }
    tg_free(gpu, &x); tg_free(gpu, &w); tg_free(gpu, &b); tg_free(gpu, &y); tg_free(gpu, &r);
    return rc;
}

static int gpu_residuals_in_the_epilogue_match_cpu(void) {
    /* {conv, rows, in, out}: 128-tiles, k split in 4, few rows (one warp a
     * column); channels-last 3x3, k split, gathered (C % 8 != 0); Hopper's
     * 160-wide tiles (N % 160 == 0), ragged, split, a convolution's; a
     * convolution the TMA feeds on Hopper (13 x 16: Wo divides 128), and
     * one split over k (5 x 8, 512 channels) */
    static const int cases[][4] = { { 0, 128, 320, 640 }, { 0, 40, 2048, 96 }, { 0, 9, 72, 40 },  { 1, 9, 64, 96 },
                                      { 1, 6, 256, 40 },    { 1, 7, 20, 24 },    { 1, 5, 116, 24 }, { 0, 77, 64, 480 },
                                      { 0, 40, 2048, 160 }, { 1, 9, 64, 160 },   { 1, 13, 64, 96 }, { 1, 5, 512, 40 } };
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(4);
    for (int s = 0; s < TG_SETS && rc == T_PASS; s++) {
        sdx_dtype d[4];
        tg_set(s, d, 4);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0] && rc == T_PASS; i++)
            for (int in_place = 0; in_place < 2 && rc == T_PASS; in_place++)
                rc = tg_residual_case(gpu, cpu, d, cases[i][0], cases[i][1], cases[i][2], cases[i][3], in_place);
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* y = geglu(x w^T + b), w [2D, C], h [.., 2D] the op's scratch. The GPU
 * fuses the gate into the GEMM's epilogue where the matrix units take the
 * product whole (x and w of one half type, more than 16 rows, D % 8 == 0,
 * k not split): against the CPU's product in f32 and its gate, rounded
 * once, and h must be as it was (the fused path ran). Otherwise it runs
 * the linear into h and the gate: against the CPU's op, and h written. */
static int tg_geglu_case(sdx_ctx *gpu, sdx_ctx *cpu, sdx_dtype dt, int64_t rows, int64_t c, int64_t d, int fused) {
    int64_t xs[3] = { 2, rows, c }, ws[2] = { 2 * d, c }, bs[1] = { 2 * d }, hs[3] = { 2, rows, 2 * d }, ys[3] = { 2, rows, d };
    tg_t x, w, b, h, y;
    sdx_tensor hf;
    int rc = T_PASS, c_rc;
    memset(&hf, 0, sizeof hf);
    if (!tg_make(gpu, &x, dt, 3, xs, 1, 0) || !tg_make_weight(gpu, &w, dt, dt, 2, ws) || !tg_make(gpu, &b, dt, 1, bs, 1, 0) ||
        !tg_make(gpu, &h, dt, 3, hs, 1, 0) || !tg_make(gpu, &y, dt, 3, ys, 0, 0) || sdx_tensor_alloc(NULL, &hf, SDX_F32, 3, hs) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
        tg_free(gpu, &x); tg_free(gpu, &w); tg_free(gpu, &b); tg_free(gpu, &h); tg_free(gpu, &y);
        return T_FAIL;
    }
    if (fused)
        c_rc = sdx__cpu_linear(cpu, &hf, &x.host, &w.host, &b.host, SDX_F32) == SDX_OK ? sdx__cpu_geglu(cpu, &y.host, &hf, SDX_F32) : SDX_ERR_INVALID_ARG;
    else c_rc = sdx__cpu_linear_geglu(cpu, &y.host, &h.host, &x.host, &w.host, &b.host, SDX_F32);
    if (c_rc != SDX_OK || sdx__linear_geglu(gpu, &y.dev, &h.dev, &x.dev, &w.dev, &b.dev, SDX_F32) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "linear_geglu: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        /* h on the device against its values before the op */
        const int64_t n = sdx_tensor_numel(&h.host);
        float *now = (float *)malloc((size_t)n * sizeof(float));
        int64_t same = 0;
        if (now && sdx__download(gpu, now, &h.dev) == SDX_OK)
            for (int64_t i = 0; i < n; i++) same += now[i] == h.vals[i];
        free(now);
        snprintf(t_label, sizeof t_label, "linear_geglu [2,%lld,%lld]x[%lld,%lld] %s, %s", (long long)rows, (long long)c, (long long)(2 * d),
                 (long long)c, sdx_dtype_name(dt), fused ? "fused" : "through h");
        TG_CHECK_REL(gpu, &y, dt == SDX_F32 ? 1e-5 : 1e-3);
        if (rc == T_PASS && (fused ? same != n : same == n)) {
            snprintf(t_msg, sizeof t_msg, "%s: h %s", t_label, fused ? "was written (not fused)" : "was not written");
            rc = T_FAIL;
        }
        if (rc == T_PASS) {     /* no h (the UNet's way on a device): the backend's own room where it does not fuse */
            const size_t bytes = (size_t)sdx_tensor_numel(&y.host) * sizeof(float);
            float *with_h = (float *)malloc(bytes), *without = (float *)malloc(bytes);
            if (!with_h || !without || sdx__download(gpu, with_h, &y.dev) != SDX_OK ||
                sdx__linear_geglu(gpu, &y.dev, NULL, &x.dev, &w.dev, &b.dev, SDX_F32) != SDX_OK ||
                sdx__download(gpu, without, &y.dev) != SDX_OK || memcmp(with_h, without, bytes)) {
                snprintf(t_msg, sizeof t_msg, "%s: without h: %s", t_label, sdx_last_error(gpu)[0] ? sdx_last_error(gpu) : "other bits");
                rc = T_FAIL;
            }
            free(with_h);
            free(without);
        }
    }
    sdx_tensor_free(NULL, &hf);
    tg_free(gpu, &x); tg_free(gpu, &w); tg_free(gpu, &b); tg_free(gpu, &h); tg_free(gpu, &y);
    return rc;
}

static int gpu_linear_geglu_fuses_the_gate_and_matches_cpu(void) {
    /* {type, rows, C, D, fused}: 128-tiles (two warpgroups on Hopper),
     * Hopper's 160-wide tiles (2 D % 160 == 0), 64-tiles; f32, few rows,
     * D % 8 != 0 and a k split go through h */
    static const int cases[11][5] = { { SDX_F16, 300, 64, 96, 1 },  { SDX_BF16, 300, 64, 96, 1 }, { SDX_F16, 150, 320, 640, 1 },
                                      { SDX_F16, 150, 64, 240, 1 }, { SDX_BF16, 77, 64, 80, 1 },  { SDX_F16, 20, 64, 96, 1 },
                                      { SDX_BF16, 20, 72, 40, 1 },  { SDX_F32, 300, 64, 96, 0 },  { SDX_F16, 5, 64, 96, 0 },
                                      { SDX_F16, 300, 64, 100, 0 }, { SDX_F16, 40, 2048, 48, 0 } };
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(9);
    for (int i = 0; i < 11 && rc == T_PASS; i++)
        rc = tg_geglu_case(gpu, cpu, (sdx_dtype)cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4]);
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* A convolution weight the backend keeps channels-last (loaded through
 * the loader: a half-type 3x3 over 8k channels is rearranged in place at
 * upload) computes what the CPU does from the file's values: with f16 x
 * (the matrix units read it as it is), bf16 x (a converted copy) and f32
 * x (the gathered kernel gets it back in order), and again after new
 * values are written into the slot (LoRA's way), and through a view of
 * its first output channels. */
static int tg_conv_loaded(sdx_ctx *gpu, sdx_ctx *cpu, const sdx_tensor *w_dev, const float *w_vals, int64_t o, const char *what) {
    int64_t ws[4] = { o, 16, 3, 3 }, xs[4] = { 2, 16, 9, 11 }, ys[4] = { 2, o, 9, 11 };
    int rc = T_PASS;
    for (int i = 0; i < 3 && rc == T_PASS; i++) {
        tg_t x, y, wt;
        sdx_tensor w = *w_dev;
        w.shape[0] = o;
        if (!tg_make(gpu, &x, tg_types[i], 4, xs, 1, 0) || !tg_make(gpu, &y, i == 0 ? SDX_F32 : tg_types[i], 4, ys, 0, 0) ||
            !tg_make(gpu, &wt, SDX_F32, 4, ws, 0, 0)) {
            snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
            rc = T_FAIL;
        } else {
            memcpy(wt.host.data, w_vals, (size_t)sdx_tensor_numel(&wt.host) * sizeof(float));
            if (sdx__cpu_conv2d_pad(cpu, &y.host, &x.host, &wt.host, NULL, 1, 1, 1, 1, 1, SDX_F32) != SDX_OK ||
                sdx__conv2d_pad(gpu, &y.dev, &x.dev, &w, NULL, 1, 1, 1, 1, 1, SDX_F32) != SDX_OK) {
                snprintf(t_msg, sizeof t_msg, "conv2d: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
                rc = T_FAIL;
            } else {
                const sdx_dtype d[2] = { tg_types[i], SDX_F16 };
                snprintf(t_label, sizeof t_label, "loaded f16 weight, %s, %s x", what, sdx_dtype_name(tg_types[i]));
                TG_CHECK_REL(gpu, &y, tg_tol(d, 2));
            }
        }
        tg_free(gpu, &x); tg_free(gpu, &y); tg_free(gpu, &wt);
    }
    return rc;
}

/* The same weight, f16 x, plus a bias and an f16 residual of its own
 * (the channels-last kernel's epilogue adds it), at 16 x 16: whole
 * 16-byte chunks of 8 pixels, which the Hopper kernels fetch before they
 * stage the accumulators. */
static int tg_conv_loaded_add(sdx_ctx *gpu, sdx_ctx *cpu, const sdx_tensor *w_dev, const float *w_vals) {
    int64_t ws[4] = { 24, 16, 3, 3 }, xs[4] = { 2, 16, 16, 16 }, ys[4] = { 2, 24, 16, 16 }, bs[1] = { 24 };
    tg_t x, y, wt, b, r;
    int rc = T_PASS;
    if (!tg_make(gpu, &x, SDX_F16, 4, xs, 1, 0) || !tg_make(gpu, &y, SDX_F16, 4, ys, 0, 0) || !tg_make(gpu, &wt, SDX_F32, 4, ws, 0, 0) ||
        !tg_make(gpu, &b, SDX_F16, 1, bs, 1, 0) || !tg_make(gpu, &r, SDX_F16, 4, ys, 1, 0)) {
        snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        memcpy(wt.host.data, w_vals, (size_t)sdx_tensor_numel(&wt.host) * sizeof(float));
        if (tg_cpu_conv_add_once(cpu, &y, &x, &wt, &b, &r.host) != SDX_OK ||
            sdx__conv2d_pad_add(gpu, &y.dev, &x.dev, w_dev, &b.dev, &r.dev, 1, 1, 1, 1, 1, SDX_F32) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "conv2d_pad_add: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
            rc = T_FAIL;
        } else {
            const sdx_dtype d[2] = { SDX_F16, SDX_F16 };
            snprintf(t_label, sizeof t_label, "loaded f16 weight, bias and f16 residual, F16 x");
            TG_CHECK_REL(gpu, &y, tg_tol(d, 2));
        }
    }
    tg_free(gpu, &x); tg_free(gpu, &y); tg_free(gpu, &wt); tg_free(gpu, &b); tg_free(gpu, &r);
    return rc;
}

/* n random weights that bf16 holds too (bf16 x rounds w to bf16: see
 * tg_make_weight), stored in f16 at file->data, vals the values as
 * stored. */
static void tg_bf16_exact_f16(sdx_tensor *file, float *vals, int64_t n) {
    for (int64_t i = 0; i < n; i++) vals[i] = (float)(0.05 * t_normal());
    tg_through_bf16(vals, file->data, n);
}

static int gpu_loaded_convolution_weights_kept_channels_last_match_cpu(void) {
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    const int64_t shape[4] = { 24, 16, 3, 3 }, n = 24 * 16 * 9;
    const char *path = t_tmp("cl-weight.safetensors");
    float *vals = (float *)malloc((size_t)n * sizeof(float)), *again = (float *)malloc((size_t)n * sizeof(float));
    sdx_tensor file;
    sdx_st *st = NULL;
    sdx__wset ws;
    const sdx_tensor *w;
    int rc = T_PASS;
    T_CHECK(vals && again && sdx_tensor_alloc(NULL, &file, SDX_F16, 4, shape) == SDX_OK, "alloc");
    t_seed(11);
    tg_bf16_exact_f16(&file, vals, n);
    file.name = "conv.weight";
    T_CHECK(sdx_st_write(gpu, path, &file, 1, NULL, 0) == SDX_OK && sdx_st_open(gpu, path, &st) == SDX_OK, "%s", sdx_last_error(gpu));
    sdx__wset_init(&ws, gpu, st, "", SDX__PART_UNET, SDX_AUTO);
    w = sdx__wget(&ws, sdx__s4(24, 16, 3, 3), "conv.weight");
    T_CHECK(w && w->device && w->dtype == SDX_F16, "load: %s", sdx_last_error(gpu));
    rc = tg_conv_loaded(gpu, cpu, w, vals, 24, "as loaded");
    if (rc == T_PASS) rc = tg_conv_loaded_add(gpu, cpu, w, vals);
    if (rc == T_PASS) rc = tg_conv_loaded(gpu, cpu, w, vals, 8, "a view of 8 output channels");
    if (rc == T_PASS) {     /* new values into the same slot */
        tg_bf16_exact_f16(&file, again, n);
        if (sdx__wslot_set(&ws, sdx__wset_find(&ws, "conv.weight"), again) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "rewrite: %s", sdx_last_error(gpu));
            rc = T_FAIL;
        } else rc = tg_conv_loaded(gpu, cpu, w, again, 24, "rewritten");
    }
    sdx__wset_free(&ws);
    sdx_st_close(st);
    sdx_tensor_free(NULL, &file);
    free(vals);
    free(again);
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* ---- attention --------------------------------------------------------------------------- */

static int tg_attention_case(sdx_ctx *gpu, sdx_ctx *cpu, sdx_dtype dt, int64_t nq, int64_t nk, int heads, int64_t dim,
                             int causal, double scale, double offset) {
    int64_t qs[3] = { 2, nq, heads * dim }, ks[3] = { 2, nk, heads * dim };
    tg_t q, k, v, y;
    int rc = T_PASS;
    if (!tg_make(gpu, &q, dt, 3, qs, scale, offset) || !tg_make(gpu, &k, dt, 3, ks, scale, offset) ||
        !tg_make(gpu, &v, dt, 3, ks, 1, 0) || !tg_make(gpu, &y, dt, 3, qs, 0, 0)) {
        snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
        rc = T_FAIL;
    } else if (sdx__cpu_attention(cpu, &y.host, &q.host, &k.host, &v.host, heads, causal, SDX_F32) != SDX_OK ||
               sdx__attention(gpu, &y.dev, &q.dev, &k.dev, &v.dev, heads, causal, SDX_F32) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "attention: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        snprintf(t_label, sizeof t_label, "attention nq %lld nk %lld heads %d D %lld%s %s", (long long)nq, (long long)nk, heads,
                 (long long)dim, causal ? " causal" : "", sdx_dtype_name(dt));
        TG_CHECK_REL(gpu, &y, dt == SDX_F32 ? 1e-5 : 1e-3);
    }
    tg_free(gpu, &q); tg_free(gpu, &k); tg_free(gpu, &v); tg_free(gpu, &y);
    return rc;
}

static int gpu_attention_matches_cpu_for_every_head_dim(void) {
    /* SD's, and others: 33 takes neither 16-byte copies nor paired stores */
    static const int64_t dims[] = { 40, 64, 80, 128, 160, 512, 24, 100, 33 };
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(3);
    for (int s = 0; s < 3 && rc == T_PASS; s++)
        for (int i = 0; i < (int)(sizeof dims / sizeof dims[0]) && rc == T_PASS; i++) {
            int heads = dims[i] == 512 ? 1 : 2;
            rc = tg_attention_case(gpu, cpu, tg_types[s], 300, 300, heads, dims[i], 0, 1, 0);          /* self */
            if (rc == T_PASS) rc = tg_attention_case(gpu, cpu, tg_types[s], 257, 77, heads, dims[i], 0, 1, 0);  /* cross, 77 keys */
        }
    for (int s = 0; s < 3 && rc == T_PASS; s++)
        rc = tg_attention_case(gpu, cpu, tg_types[s], 77, 77, 12, 64, 1, 1, 0);                        /* text encoder */
    /* head dim 64's 32-key tiles: 77 keys in a grid that is one wave at
     * three blocks an SM and two at two (an H200's), like SDXL's
     * 1024-token cross-attention; the simulator's one block an SM takes
     * them for the keys' padding */
    for (int s = 1; s < 3 && rc == T_PASS; s++)
        rc = tg_attention_case(gpu, cpu, tg_types[s], 128, 77, 140, 64, 0, 1, 0);
    /* the wgmma attention's 64-key tiles: keys in whole tiles, and fewer
     * keys than one tile */
    for (int s = 1; s < 3 && rc == T_PASS; s++) {
        rc = tg_attention_case(gpu, cpu, tg_types[s], 200, 128, 3, 64, 0, 1, 0);
        if (rc == T_PASS) rc = tg_attention_case(gpu, cpu, tg_types[s], 70, 20, 2, 64, 0, 1, 0);
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* ---- norms and softmax ---------------------------------------------------------------------- */

static int gpu_norms_and_softmax_match_cpu(void) {
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(4);
    for (int s = 0; s < TG_SETS && rc == T_PASS; s++) {
        sdx_dtype d[4];
        /* odd and multiple-of-8 planes and rows (the kernels' two widths);
         * in set 0 a group of 4095 values a block's threads pass over 8
         * times, value by value (four of the apply's batches of loads); in
         * set 1 groups of 32800 values, which three blocks share */
        int64_t xs[4] = { 2, 64, 9, 11 }, cs[1] = { 64 }, ls[3] = { 2, 77, 768 }, gs[1] = { 768 }, ss[2] = { 37, 300 };
        if (s % 2) { xs[2] = 8; xs[3] = 12; ls[2] = 100; gs[0] = 100; }
        if (s == 0) { xs[1] = cs[0] = 32; xs[2] = 63; xs[3] = 65; }
        if (s == 1) { xs[0] = 1; xs[1] = cs[0] = 160; xs[2] = 80; xs[3] = 82; }
        if (s == 2) ls[2] = gs[0] = 1336;   /* rows past the registers' 1280 */
        tg_t x, y, g, b, lx, ly, lg, lb, sx, sy;
        tg_set(s, d, 4);
        if (!tg_make(gpu, &x, d[0], 4, xs, 3, 5) || !tg_make(gpu, &y, d[3], 4, xs, 0, 0) || !tg_make(gpu, &g, d[1], 1, cs, 1, 1) ||
            !tg_make(gpu, &b, d[2], 1, cs, 1, 0) || !tg_make(gpu, &lx, d[0], 3, ls, 2, -1) || !tg_make(gpu, &ly, d[3], 3, ls, 0, 0) ||
            !tg_make(gpu, &lg, d[1], 1, gs, 1, 1) || !tg_make(gpu, &lb, d[2], 1, gs, 1, 0) || !tg_make(gpu, &sx, d[0], 2, ss, 4, 0) ||
            !tg_make(gpu, &sy, d[3], 2, ss, 0, 0)) {
            snprintf(t_msg, sizeof t_msg, "alloc: %s", sdx_last_error(gpu));
            rc = T_FAIL;
        }
        for (int silu = 0; silu < 2 && rc == T_PASS; silu++) {
            if (sdx__cpu_group_norm(cpu, &y.host, &x.host, 32, 1e-5f, &g.host, &b.host, silu, SDX_F32) != SDX_OK ||
                sdx__group_norm(gpu, &y.dev, &x.dev, 32, 1e-5f, &g.dev, &b.dev, silu, SDX_F32) != SDX_OK) {
                snprintf(t_msg, sizeof t_msg, "group_norm: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
                rc = T_FAIL;
                break;
            }
            snprintf(t_label, sizeof t_label, "group_norm%s %s/%s->%s", silu ? "+silu" : "", sdx_dtype_name(d[0]), sdx_dtype_name(d[1]), sdx_dtype_name(d[3]));
            TG_CHECK_REL(gpu, &y, tg_tol(d, 4));
        }
        if (rc == T_PASS) {
            if (sdx__cpu_layer_norm(cpu, &ly.host, &lx.host, 1e-5f, &lg.host, &lb.host) != SDX_OK ||
                sdx__layer_norm(gpu, &ly.dev, &lx.dev, 1e-5f, &lg.dev, &lb.dev) != SDX_OK) {
                snprintf(t_msg, sizeof t_msg, "layer_norm: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
                rc = T_FAIL;
            } else {
                snprintf(t_label, sizeof t_label, "layer_norm %s->%s", sdx_dtype_name(d[0]), sdx_dtype_name(d[3]));
                TG_CHECK_REL(gpu, &ly, tg_tol(d, 4));
            }
        }
        if (rc == T_PASS) {
            if (sdx__cpu_softmax(cpu, &sy.host, &sx.host) != SDX_OK || sdx__softmax(gpu, &sy.dev, &sx.dev) != SDX_OK) {
                snprintf(t_msg, sizeof t_msg, "softmax: %s / %s", sdx_last_error(cpu), sdx_last_error(gpu));
                rc = T_FAIL;
            } else {
                snprintf(t_label, sizeof t_label, "softmax %s->%s", sdx_dtype_name(d[0]), sdx_dtype_name(d[3]));
                TG_CHECK_REL(gpu, &sy, tg_tol(d, 4));
            }
        }
        tg_free(gpu, &x); tg_free(gpu, &y); tg_free(gpu, &g); tg_free(gpu, &b); tg_free(gpu, &lx);
        tg_free(gpu, &ly); tg_free(gpu, &lg); tg_free(gpu, &lb); tg_free(gpu, &sx); tg_free(gpu, &sy);
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* ---- elementwise and layout ----------------------------------------------------------------------- */

typedef int (*tg_unary)(sdx_ctx *, sdx_tensor *, const sdx_tensor *);
typedef int (*tg_binary)(sdx_ctx *, sdx_tensor *, const sdx_tensor *, const sdx_tensor *);

/* Runs one op on both sides: ys/xs/bs shapes, `b` NULL for unary ops. */
static int tg_op(sdx_ctx *gpu, sdx_ctx *cpu, const char *name, const sdx_dtype *d, tg_unary cu, tg_unary gu, tg_binary cb, tg_binary gb,
                 int ny, const int64_t *ys, int nx, const int64_t *xs, int nb, const int64_t *bs) {
    tg_t x, b, y;
    int rc = T_PASS, ok;
    memset(&b, 0, sizeof b);
    if (!tg_make(gpu, &x, d[0], nx, xs, 2, 0.5) || (nb && !tg_make(gpu, &b, d[1], nb, bs, 2, 0)) || !tg_make(gpu, &y, d[3], ny, ys, 0, 0)) {
        snprintf(t_msg, sizeof t_msg, "%s: alloc: %s", name, sdx_last_error(gpu));
        rc = T_FAIL;
    } else {
        ok = cu ? cu(cpu, &y.host, &x.host) == SDX_OK && gu(gpu, &y.dev, &x.dev) == SDX_OK
                : cb(cpu, &y.host, &x.host, &b.host) == SDX_OK && gb(gpu, &y.dev, &x.dev, &b.dev) == SDX_OK;
        if (!ok) {
            snprintf(t_msg, sizeof t_msg, "%s: %s / %s", name, sdx_last_error(cpu), sdx_last_error(gpu));
            rc = T_FAIL;
        } else {
            snprintf(t_label, sizeof t_label, "%s %s/%s->%s", name, sdx_dtype_name(d[0]), sdx_dtype_name(d[1]), sdx_dtype_name(d[3]));
            TG_CHECK_REL(gpu, &y, tg_tol(d, 4));
        }
    }
    tg_free(gpu, &x); tg_free(gpu, &b); tg_free(gpu, &y);
    return rc;
}

/* the activations in f32, as every other GPU kernel case */
static int tg_silu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_silu(c, y, x, SDX_F32); }
static int tg_silu_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__silu(c, y, x, SDX_F32); }
static int tg_gelu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_gelu(c, y, x, SDX_F32); }
static int tg_gelu_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__gelu(c, y, x, SDX_F32); }
static int tg_geglu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_geglu(c, y, x, SDX_F32); }
static int tg_geglu_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__geglu(c, y, x, SDX_F32); }
static int tg_scale3(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_scale(c, y, x, -0.37f); }
/* pads (2, 3, 1, 4): y is x's [5, 7] plane grown to [8, 14], wrapping twice on the right */
static int tg_pad(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_pad_circular(c, y, x, 2, 3, 1, 4); }
static int tg_pad_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__pad_circular(c, y, x, 2, 3, 1, 4); }
static int tg_scale3_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__scale(c, y, x, -0.37f); }
/* bounds inside the inputs' range, so both sides of each clamp are hit */
static int tg_clamp(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_clamp(c, y, x, -0.6f, 0.9f); }
static int tg_clamp_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__clamp(c, y, x, -0.6f, 0.9f); }
static int tg_tanh_clamp(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_tanh_clamp(c, y, x, 1.5f); }
static int tg_tanh_clamp_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__tanh_clamp(c, y, x, 1.5f); }
static int tg_leaky_relu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__cpu_leaky_relu(c, y, x, 0.2f); }
static int tg_leaky_relu_gpu(sdx_ctx *c, sdx_tensor *y, const sdx_tensor *x) { return sdx__leaky_relu(c, y, x, 0.2f); }

static int gpu_elementwise_and_layout_match_cpu(void) {
    static const int64_t v[4] = { 2, 3, 50, 70 }, geg_x[3] = { 2, 77, 640 }, geg_y[3] = { 2, 77, 320 }, nc[2] = { 2, 3 };
    static const int64_t up[4] = { 2, 3, 100, 140 }, odd_x[4] = { 1, 3, 5, 7 }, odd_y[4] = { 1, 3, 9, 13 };
    static const int64_t ca[4] = { 2, 3, 50, 70 }, cb[4] = { 2, 5, 50, 70 }, cy[4] = { 2, 8, 50, 70 };
    static const int64_t nlc[3] = { 2, 3500, 3 }, pad_y[4] = { 1, 3, 8, 14 };
    /* the memory-bound kernels take 8 values a thread where sizes allow
     * (16-byte accesses) and 1 otherwise: shapes for the other width */
    static const int64_t v8[4] = { 2, 3, 8, 10 }, geg1_x[3] = { 2, 7, 20 }, geg1_y[3] = { 2, 7, 10 };
    static const int64_t ca8[4] = { 2, 3, 8, 10 }, cb8[4] = { 2, 5, 8, 10 }, cy8[4] = { 2, 8, 8, 10 };
    /* 16-bit transposes move 64 x 64 tiles 16 bytes at a time when both
     * sides are 8k: whole and partial tiles each way */
    static const int64_t tr_x[4] = { 2, 72, 9, 16 }, tr_nlc[3] = { 2, 144, 72 };
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(5);
    for (int s = 0; s < TG_SETS && rc == T_PASS; s++) {
        sdx_dtype d[4];
        tg_set(s, d, 4);
#define TG_U(n, c, g, ny, ys, nx, xs) if (rc == T_PASS) rc = tg_op(gpu, cpu, n, d, c, g, NULL, NULL, ny, ys, nx, xs, 0, NULL)
#define TG_B(n, c, g, ny, ys, nx, xs, nb, bs) if (rc == T_PASS) rc = tg_op(gpu, cpu, n, d, NULL, NULL, c, g, ny, ys, nx, xs, nb, bs)
        TG_U("silu", tg_silu, tg_silu_gpu, 4, v, 4, v);
        TG_U("gelu", tg_gelu, tg_gelu_gpu, 4, v, 4, v);
        TG_U("quick_gelu", sdx__cpu_quick_gelu, sdx__quick_gelu, 4, v, 4, v);
        TG_U("scale", tg_scale3, tg_scale3_gpu, 4, v, 4, v);
        TG_U("copy", sdx__cpu_copy, sdx__copy, 4, v, 4, v);
        TG_U("clamp", tg_clamp, tg_clamp_gpu, 4, v, 4, v);
        TG_U("tanh_clamp", tg_tanh_clamp, tg_tanh_clamp_gpu, 4, v, 4, v);
        TG_U("leaky_relu", tg_leaky_relu, tg_leaky_relu_gpu, 4, v, 4, v);
        TG_U("geglu", tg_geglu, tg_geglu_gpu, 3, geg_y, 3, geg_x);
        TG_U("resize_nearest 2x", sdx__cpu_resize_nearest, sdx__resize_nearest, 4, up, 4, v);
        TG_U("resize_nearest 5x7->9x13", sdx__cpu_resize_nearest, sdx__resize_nearest, 4, odd_y, 4, odd_x);
        TG_U("pad_circular", tg_pad, tg_pad_gpu, 4, pad_y, 4, odd_x);
        TG_U("nchw_to_nlc", sdx__cpu_nchw_to_nlc, sdx__nchw_to_nlc, 3, nlc, 4, v);
        TG_U("nlc_to_nchw", sdx__cpu_nlc_to_nchw, sdx__nlc_to_nchw, 4, v, 3, nlc);
        TG_U("nchw_to_nlc 8k", sdx__cpu_nchw_to_nlc, sdx__nchw_to_nlc, 3, tr_nlc, 4, tr_x);
        TG_U("nlc_to_nchw 8k", sdx__cpu_nlc_to_nchw, sdx__nlc_to_nchw, 4, tr_x, 3, tr_nlc);
        TG_B("add", sdx__cpu_add, sdx__add, 4, v, 4, v, 4, v);
        TG_B("mul", sdx__cpu_mul, sdx__mul, 4, v, 4, v, 4, v);
        TG_B("add_channel_bias", sdx__cpu_add_channel_bias, sdx__add_channel_bias, 4, v, 4, v, 2, nc);
        TG_B("concat_channels", sdx__cpu_concat_channels, sdx__concat_channels, 4, cy, 4, ca, 4, cb);
        TG_U("silu, 105 values", tg_silu, tg_silu_gpu, 4, odd_x, 4, odd_x);
        TG_B("add, 105 values", sdx__cpu_add, sdx__add, 4, odd_x, 4, odd_x, 4, odd_x);
        TG_U("geglu, 10 wide", tg_geglu, tg_geglu_gpu, 3, geg1_y, 3, geg1_x);
        TG_B("add_channel_bias, 80-value planes", sdx__cpu_add_channel_bias, sdx__add_channel_bias, 4, v8, 4, v8, 2, nc);
        TG_B("concat_channels, 240 + 400 values", sdx__cpu_concat_channels, sdx__concat_channels, 4, cy8, 4, ca8, 4, cb8);
#undef TG_U
#undef TG_B
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* ---- precision stress (tests/t_precision.c's inputs) ------------------------------------------------ */

/* Runs `n` f32 values through the GPU and the CPU and requires a finite
 * GPU result within `tol` of the CPU's. */
static int tg_finite_and_close(sdx_ctx *gpu, const tg_t *y, double tol, const char *what) {
    int64_t n = sdx_tensor_numel(&y->dev), bad = 0;
    float *a = (float *)malloc((size_t)n * sizeof(float));
    double rel;
    T_CHECK(a && sdx__download(gpu, a, &y->dev) == SDX_OK, "%s: download", what);
    for (int64_t i = 0; i < n; i++) bad += !isfinite(a[i]);
    free(a);
    rel = tg_compare(gpu, y);
    T_NOTE("%s: %lld non-finite, rel-L2 to the CPU %.3g", what, (long long)bad, rel);
    T_CHECK(bad == 0, "%s: %lld non-finite outputs", what, (long long)bad);
    T_CHECK(rel <= tol, "%s: rel-L2 to the CPU %.3g > %.0e", what, rel, tol);
    return T_PASS;
}

static int gpu_half_stress_cases_stay_finite(void) {
    TG_NEED_GPU(gpu);
    sdx_ctx *cpu = t_ctx();
    int rc = T_PASS;
    t_seed(6);
    /* group norm: [1, 320, 128, 128] in [10, 35]: group sums ~3.7e6; then
     * f32 values 1e4 +- 1, where sums of squares lose the variance to
     * cancellation unless the statistics are shifted */
    for (int i = 0; i < 3 && rc == T_PASS; i++) {
        static const char *what[3] = { "group_norm f16, sums past 65504", "group_norm bf16, sums past 65504",
                                       "group_norm f32, mean 1e4 times the deviation" };
        sdx_dtype dt = i == 0 ? SDX_F16 : i == 1 ? SDX_BF16 : SDX_F32;
        int64_t xs[4] = { 1, 320, 128, 128 };
        tg_t x, y;
        T_CHECK(tg_make(gpu, &x, dt, 4, xs, i < 2 ? 7 : 1, i < 2 ? 22.5 : 1e4) && tg_make(gpu, &y, dt, 4, xs, 0, 0), "alloc");
        T_CHECK(sdx__cpu_group_norm(cpu, &y.host, &x.host, 32, 1e-6f, NULL, NULL, 0, SDX_F32) == SDX_OK &&
                sdx__group_norm(gpu, &y.dev, &x.dev, 32, 1e-6f, NULL, NULL, 0, SDX_F32) == SDX_OK, "group_norm: %s", sdx_last_error(gpu));
        rc = tg_finite_and_close(gpu, &y, i < 2 ? 1e-3 : 1e-5, what[i]);
        tg_free(gpu, &x); tg_free(gpu, &y);
    }
    /* attention: q, k ~ 34 +- 0.3, D 64: every q.k above 65504 */
    for (int i = 0; i < 2 && rc == T_PASS; i++) {
        sdx_dtype dt = i ? SDX_BF16 : SDX_F16;
        int64_t s[3] = { 1, 192, 64 };
        tg_t q, k, v, y;
        T_CHECK(tg_make(gpu, &q, dt, 3, s, 0.3, 34) && tg_make(gpu, &k, dt, 3, s, 0.3, 34) && tg_make(gpu, &v, dt, 3, s, 1, 0) &&
                tg_make(gpu, &y, dt, 3, s, 0, 0), "alloc");
        T_CHECK(sdx__cpu_attention(cpu, &y.host, &q.host, &k.host, &v.host, 1, i, SDX_F32) == SDX_OK &&
                sdx__attention(gpu, &y.dev, &q.dev, &k.dev, &v.dev, 1, i, SDX_F32) == SDX_OK, "attention: %s", sdx_last_error(gpu));
        rc = tg_finite_and_close(gpu, &y, 1e-3, i ? "attention bf16 causal, products past 65504" : "attention f16, products past 65504");
        tg_free(gpu, &q); tg_free(gpu, &k); tg_free(gpu, &v); tg_free(gpu, &y);
    }
    /* VAE-like conv: activations ~300, weights +-1.3 by input-channel half:
     * running sums pass 65504 (f16, so the tensor-core path runs) */
    if (rc == T_PASS) {
        int64_t xs[4] = { 1, 48, 16, 16 }, ws[4] = { 48, 48, 3, 3 };
        tg_t x, w, y;
        T_CHECK(tg_make(gpu, &x, SDX_F16, 4, xs, 20, 300) && tg_make(gpu, &w, SDX_F16, 4, ws, 0.05, 0) &&
                tg_make(gpu, &y, SDX_F16, 4, xs, 0, 0), "alloc");
        for (int64_t i = 0; i < 48 * 48 * 9; i++) w.vals[i] += ((i / 9) % 48 < 24 ? 1.3f : -1.3f);
        sdx__store_f32(w.host.data, SDX_F16, 0, 48 * 48 * 9, w.vals);
        sdx__load_f32(w.host.data, SDX_F16, 0, 48 * 48 * 9, w.vals);
        T_CHECK(sdx__upload(gpu, &w.dev, w.vals) == SDX_OK, "upload");
        T_CHECK(sdx__cpu_conv2d_pad(cpu, &y.host, &x.host, &w.host, NULL, 1, 1, 1, 1, 1, SDX_F32) == SDX_OK &&
                sdx__conv2d(gpu, &y.dev, &x.dev, &w.dev, NULL, 1, 1, SDX_F32) == SDX_OK, "conv2d: %s", sdx_last_error(gpu));
        rc = tg_finite_and_close(gpu, &y, 1e-3, "conv2d f16, partial sums past 65504");
        tg_free(gpu, &x); tg_free(gpu, &w); tg_free(gpu, &y);
    }
    /* f16 stores saturate: 70000 -> 65504, -1e9 -> -65504 */
    if (rc == T_PASS) {
        int64_t s[1] = { 4 };
        float in[4] = { 70000.0f, -1e9f, 65504.0f, 1.0f }, out[4];
        tg_t x, y;
        T_CHECK(tg_make(gpu, &x, SDX_F32, 1, s, 0, 0) && tg_make(gpu, &y, SDX_F16, 1, s, 0, 0), "alloc");
        T_CHECK(sdx__upload(gpu, &x.dev, in) == SDX_OK && sdx__copy(gpu, &y.dev, &x.dev) == SDX_OK &&
                sdx__download(gpu, out, &y.dev) == SDX_OK, "copy: %s", sdx_last_error(gpu));
        T_CHECK(out[0] == 65504.0f && out[1] == -65504.0f && out[2] == 65504.0f && out[3] == 1.0f,
                "f16 store gave %g %g %g %g", out[0], out[1], out[2], out[3]);
        tg_free(gpu, &x); tg_free(gpu, &y);
    }
    sdx_destroy(cpu);
    sdx_destroy(gpu);
    return rc;
}

/* ---- pipeline goldens ---------------------------------------------------------------------------- */

/* Every pipeline case of golden/<area>/index.json, generated on the GPU
 * with f32 activations (SDX_ACT_F32, the exact mode): the final latent
 * within rel-L2 1e-3 of the golden latent. Then with the GPU's default
 * half activations (sdx_model_desc.activations): finite, within the
 * precision policy's half budget (1e-2) of the golden, and within twice
 * it of the CPU storing the same types part by part (two runs each within
 * the budget of the golden). On the simulator (tests/gpu/sim.h) the
 * latents land 2.5e-3 to 6.0e-3 from the goldens and 3.4e-3 to 8.8e-3
 * from the CPU: the GPU rounds the attention's P to f16 where the CPU
 * keeps f32, and sums in another order. */
static int tg_area(const char *area) {
    t_golden_case cases[8];
    sdx_model *m = NULL, *half = NULL, *cpu_half = NULL;
    sdx_model_desc md;
    sdx_ctx *cpu;
    int rc = T_PASS, n;
    TG_NEED_GPU(ctx);
    cpu = t_ctx();
    n = t_golden_cases(ctx, area, cases, 8);
    T_CHECK(n > 0, "%s: no pipeline cases (%s)", area, sdx_last_error(ctx));
    t_golden_desc(&md, area);
    md.activations = SDX_ACT_F32;
    if (!(m = t_model_with(ctx, &md)) || !(half = t_model(ctx, area)) || !(cpu_half = t_model(cpu, area))) {
        snprintf(t_msg, sizeof t_msg, "%s: %s%s", area, sdx_last_error(ctx), sdx_last_error(cpu));
        rc = T_FAIL;
    } else {
        t_same_activations(cpu_half, half);   /* the CPU stores what the GPU's default stores */
    }
    for (int i = 0; i < n && rc == T_PASS; i++) {
        const t_golden_case *c = &cases[i];
        sdx_gen_params p;
        sdx_gen_result res, rh, rc_;
        double rel, rel_half, rel_cpu;
        int64_t nl;
        t_golden_params(c, &p);
        if (sdx_generate(m, &p, &res) != SDX_OK || sdx_generate(half, &p, &rh) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "%s/%s: %s", area, c->name, sdx_last_error(ctx));
            rc = T_FAIL;
            break;
        }
        if (sdx_generate(cpu_half, &p, &rc_) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "%s/%s on the CPU: %s", area, c->name, sdx_last_error(cpu));
            rc = T_FAIL;
            break;
        }
        nl = sdx_tensor_numel(&res.latents[0]);
        rel = t_rel_to_file(ctx, c->file, "latent", (const float *)res.latents[0].data, nl);
        rel_half = t_rel_to_file(ctx, c->file, "latent", (const float *)rh.latents[0].data, nl);
        rel_cpu = t_rel_l2_f32((const float *)rh.latents[0].data, (const float *)rc_.latents[0].data, (size_t)nl);
        T_NOTE("%s/%s on %s: latent rel-L2 %.3g (f32 activations); default activations (text %s, UNet %s, VAE %s): %.3g to the "
               "golden, %.3g to the CPU storing the same", area, c->name, sdx_backend_name(ctx), rel,
               sdx_dtype_name((sdx_dtype)half->te.act_type), sdx_dtype_name(half->unet.act_type),
               sdx_dtype_name((sdx_dtype)half->vae.act_type), rel_half, rel_cpu);
        if (!(rel <= 1e-3)) { snprintf(t_msg, sizeof t_msg, "%s/%s: latent rel-L2 %.3g > 1e-3", area, c->name, rel); rc = T_FAIL; }
        if (sdx__has_nonfinite(&rh.latents[0])) { snprintf(t_msg, sizeof t_msg, "%s/%s: half activations: not finite", area, c->name); rc = T_FAIL; }
        else if (!(rel_half <= 1e-2 && rel_cpu <= 2e-2)) {
            snprintf(t_msg, sizeof t_msg, "%s/%s: half activations: latent rel-L2 %.3g to the golden (bound 1e-2), %.3g to the CPU "
                     "(bound 2e-2)", area, c->name, rel_half, rel_cpu);
            rc = T_FAIL;
        }
        sdx_gen_result_free(ctx, &res);
        sdx_gen_result_free(ctx, &rh);
        sdx_gen_result_free(cpu, &rc_);
    }
    sdx_model_free(m);
    sdx_model_free(half);
    sdx_model_free(cpu_half);
    sdx_destroy(ctx);
    sdx_destroy(cpu);
    return rc;
}

static int gpu_sd1_goldens_reproduce(void) { T_NEED_SHARED(p, "golden/sd1/index.json"); (void)p; return tg_area("sd1"); }
static int gpu_sd2_goldens_reproduce(void) { T_NEED_SHARED(p, "golden/sd2/index.json"); (void)p; return tg_area("sd2"); }
static int gpu_sdxl_goldens_reproduce(void) { T_NEED_SHARED(p, "golden/sdxl/index.json"); (void)p; return tg_area("sdxl"); }

/* The GGUF q8_0 model of golden/gguf on the GPU: its quantized weights
 * dequantized to f16 at upload (the backend multiplies no blocks), f32
 * activations, against the CPU made to dequantize the same way (as the
 * fake-device test does): the final latent within rel-L2 1e-3, as the
 * pipeline goldens. Then with the GPU's default half activations, against
 * the CPU storing the same types: finite, within the goldens' 2e-2. The
 * golden checkpoints hold f32 weights, which run on the f32 kernels; here
 * f16 linears meet f16 activations, so a whole generation goes through
 * the matrix units' GEMMs (wgmma on Hopper), the fused GEGLU and the
 * tensor-core attention. */
/* Generation p of the model md names, with md's activations, on the GPU
 * and on the CPU storing what the GPU's model stores: the final latents'
 * rel-L2, whether the GPU's is finite, and the GPU's UNet activations;
 * 0 with t_msg set when a model does not load or generate. */
static int tg_gpu_cpu_latents(sdx_ctx *gpu, sdx_ctx *cpu, const sdx_model_desc *md, const sdx_gen_params *p, double *rel, int *finite,
                              sdx_dtype *unet_act) {
    sdx_model *mg = t_model_with(gpu, md), *mc = t_model_with(cpu, md);
    sdx_gen_result rg, rc_;
    int ok = 0;
    if (!mg || !mc) {
        snprintf(t_msg, sizeof t_msg, "load: GPU %s, CPU %s", mg ? "ok" : sdx_last_error(gpu), mc ? "ok" : sdx_last_error(cpu));
    } else {
        t_same_activations(mc, mg);
        *unet_act = (sdx_dtype)mg->unet.act_type;
        if (sdx_generate(mg, p, &rg) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "GPU: %s", sdx_last_error(gpu));
        } else {
            if (sdx_generate(mc, p, &rc_) != SDX_OK) {
                snprintf(t_msg, sizeof t_msg, "CPU: %s", sdx_last_error(cpu));
            } else {
                *rel = t_rel_l2_f32((const float *)rg.latents[0].data, (const float *)rc_.latents[0].data,
                                    (size_t)sdx_tensor_numel(&rc_.latents[0]));
                *finite = !sdx__has_nonfinite(&rg.latents[0]);
                ok = 1;
                sdx_gen_result_free(cpu, &rc_);
            }
            sdx_gen_result_free(gpu, &rg);
        }
    }
    sdx_model_free(mg);
    sdx_model_free(mc);
    return ok;
}

static int gpu_gguf_model_matches_cpu(void) {
    T_NEED_SHARED(path, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(v, "vocab/merges.txt");
    char file[1024];
    sdx_model_desc md;
    sdx_gen_params p;
    sdx_ctx *cpu;
    sdx_dtype act = SDX_F32;
    double rel = 0;
    int finite = 0;
    (void)v;
    TG_NEED_GPU(gpu);
    snprintf(file, sizeof file, "%s", path);
    cpu = t_ctx();
    cpu->be.linear_blocks = cpu->be.conv_blocks = 0;
    memset(&md, 0, sizeof md);
    md.checkpoint = file;
    md.activations = SDX_ACT_F32;
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.width = p.height = 64;
    p.steps = 4;
    p.seed = 1;
    if (!tg_gpu_cpu_latents(gpu, cpu, &md, &p, &rel, &finite, &act)) return T_FAIL;
    T_NOTE("sd1-q8_0.gguf on %s against the CPU: latent rel-L2 %.3g", sdx_backend_name(gpu), rel);
    T_CHECK(rel <= 1e-3, "latent rel-L2 %.3g > 1e-3", rel);
    md.activations = 0;
    if (!tg_gpu_cpu_latents(gpu, cpu, &md, &p, &rel, &finite, &act)) return T_FAIL;
    T_NOTE("with the default activations (UNet %s) against the CPU storing the same: latent rel-L2 %.3g", sdx_dtype_name(act), rel);
    T_CHECK(finite, "half activations: the latent is not finite");
    T_CHECK(rel <= 2e-2, "half activations: latent rel-L2 %.3g > 2e-2", rel);
    sdx_destroy(gpu);
    sdx_destroy(cpu);
    return T_PASS;
}

/* ---- graphs ------------------------------------------------------------------------------------------- */

/* pg on mg (graphs on) and pe, the same generation with me's own
 * ControlNets if any, on me (off): the same latent bits, else t_msg says
 * where. */
static int tg_same_latents(sdx_model *mg, const sdx_gen_params *pg, sdx_model *me, const sdx_gen_params *pe) {
    sdx_gen_result rg, re;
    int same;
    if (sdx_generate(mg, pg, &rg) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "graphs: %s", sdx_last_error(mg->ctx));
        return 0;
    }
    if (sdx_generate(me, pe, &re) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "op by op: %s", sdx_last_error(me->ctx));
        sdx_gen_result_free(mg->ctx, &rg);
        return 0;
    }
    same = sdx_tensor_nbytes(&rg.latents[0]) == sdx_tensor_nbytes(&re.latents[0]) &&
           memcmp(rg.latents[0].data, re.latents[0].data, sdx_tensor_nbytes(&re.latents[0])) == 0;
    if (!same) snprintf(t_msg, sizeof t_msg, "%dx%d: the replayed latent differs from the op-by-op one", pg->width, pg->height);
    sdx_gen_result_free(mg->ctx, &rg);
    sdx_gen_result_free(me->ctx, &re);
    return same;
}

/* UNet calls replayed from a recorded graph give the bits of the same
 * calls run op by op (sdx_desc.no_graphs): three steps at 32x32 (the
 * first call op by op, the second recorded, one replay), then a
 * generation at another size (the tape differs: recorded again, two
 * replays), then the first size again (the same): five replays. */
static int gpu_graphs_replay_exactly_what_the_ops_compute(void) {
    static const int sizes[3][2] = { { 32, 32 }, { 32, 24 }, { 32, 32 } };
    static char log[4096];
    T_NEED_SHARED(idx, "golden/sd1/index.json");
    sdx_ctx *g = tg_gpu_with(log, 0), *e;
    sdx_model *mg, *me;
    (void)idx;
    log[0] = 0;
    if (!g) return T_SKIP;
    e = tg_gpu_with(NULL, 1);
    T_CHECK(e, "a second GPU context could not be made");
    mg = t_model(g, "sd1");
    me = t_model(e, "sd1");
    T_CHECK(mg && me, "load: %s%s", sdx_last_error(g), sdx_last_error(e));
    for (int i = 0; i < 3; i++) {
        sdx_gen_params p;
        memset(&p, 0, sizeof p);
        p.prompt = "a lighthouse";
        p.width = sizes[i][0];
        p.height = sizes[i][1];
        p.steps = 3;
        p.seed = 7 + i;
        if (!tg_same_latents(mg, &p, me, &p)) return T_FAIL;
    }
    T_NOTE("%ld UNet calls replayed; %s", g->graph.slots[SDX__GRAPH_UNET].replays, log[0] ? log : "(nothing logged)");
    T_CHECK(g->graph.slots[SDX__GRAPH_UNET].replays == 5 && strstr(log, "recorded as a graph"), "%ld UNet calls replayed, not 5",
            g->graph.slots[SDX__GRAPH_UNET].replays);
    T_CHECK(!strstr(log, "could not be recorded"), "a call could not be recorded");
    sdx_model_free(mg);
    sdx_model_free(me);
    sdx_destroy(g);
    sdx_destroy(e);
    return T_PASS;
}

/* The same with a ControlNet (golden/controlnet's tiny one, a striped
 * control picture): its calls and the UNet's, each in its own slot, give
 * the op-by-op bits; three steps, so each is replayed once. */
static int gpu_controlnet_graphs_replay_exactly_what_the_ops_compute(void) {
    T_NEED_SHARED(cnp, "golden/controlnet/controlnet.safetensors");
    T_NEED_SHARED(idx, "golden/sd1/index.json");
    sdx_ctx *ctx[2] = { tg_gpu_with(NULL, 0), NULL };
    sdx_model *m[2] = { NULL, NULL };
    sdx_controlnet *net[2] = { NULL, NULL };
    sdx_control c[2];
    sdx_gen_params p, pe;
    uint8_t px[32 * 32 * 3];
    sdx_image hint = { 32, 32, 3, px };
    (void)idx;
    if (!ctx[0]) return T_SKIP;
    ctx[1] = tg_gpu_with(NULL, 1);
    T_CHECK(ctx[1], "a second GPU context could not be made");
    for (int i = 0; i < 32 * 32 * 3; i++) px[i] = (uint8_t)((i / 3 % 32) / 4 % 2 ? 255 : 0);
    for (int k = 0; k < 2; k++) {
        m[k] = t_model(ctx[k], "sd1");
        T_CHECK(m[k] && sdx_controlnet_load(m[k], cnp, &net[k]) == SDX_OK, "load: %s", sdx_last_error(ctx[k]));
    }
    memset(&p, 0, sizeof p);
    memset(c, 0, sizeof c);
    c[0].net = net[0];              /* each model its own ControlNet */
    c[0].image = &hint;
    c[0].strength = 0.8f;
    c[1] = c[0];
    c[1].net = net[1];
    p.prompt = "a lighthouse";
    p.width = p.height = 32;
    p.steps = 3;
    p.seed = 11;
    p.n_controls = 1;
    pe = p;
    p.controls = &c[0];
    pe.controls = &c[1];
    if (!tg_same_latents(m[0], &p, m[1], &pe)) return T_FAIL;
    T_NOTE("replayed: %ld UNet calls, %ld ControlNet calls", ctx[0]->graph.slots[SDX__GRAPH_UNET].replays,
           ctx[0]->graph.slots[SDX__GRAPH_CONTROLNET].replays);
    T_CHECK(ctx[0]->graph.slots[SDX__GRAPH_UNET].replays == 1 && ctx[0]->graph.slots[SDX__GRAPH_CONTROLNET].replays == 1,
            "not one replay of each");
    for (int k = 0; k < 2; k++) {
        sdx_controlnet_free(net[k]);
        sdx_model_free(m[k]);
        sdx_destroy(ctx[k]);
    }
    return T_PASS;
}

/* ---- out of device memory --------------------------------------------------------------------------- */

/* With the device filled to within about 1 MiB (chunks of 1 GiB, 64 MiB
 * and 1 MiB taken until each fails), a generation fails with
 * SDX_ERR_NOMEM and a message, holds no device memory afterwards, and once
 * the memory is back the same context and model generate. */
static int gpu_out_of_memory_fails_cleanly_and_the_context_recovers(void) {
    static const size_t chunk[3] = { (size_t)1 << 30, (size_t)64 << 20, (size_t)1 << 20 };
    enum { MAX_HOG = 4096 };
    static struct { void *p; size_t bytes; } hog[MAX_HOG];
    T_NEED_SHARED(idx, "golden/sd1/index.json");
    TG_NEED_GPU(gpu);
    sdx_model *m = t_model(gpu, "sd1");
    sdx_gen_params p;
    sdx_gen_result r;
    size_t before, held = 0;
    long long left;
    int n = 0, rc;
    (void)idx;
    T_CHECK(m, "load: %s", sdx_last_error(gpu));
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.width = p.height = 64;
    p.steps = 2;
    p.seed = 1;
    before = sdx_device_bytes(gpu, NULL);
    for (int c = 0; c < 3; c++)
        while (n < MAX_HOG && (hog[n].p = sdx__dev_alloc(gpu, chunk[c])) != NULL) {
            hog[n++].bytes = chunk[c];
            held += chunk[c];
        }
    memset(&r, 0, sizeof r);
    rc = sdx_generate(m, &p, &r);
    T_NOTE("%.2f GiB held in %d chunks: %s (%s)", (double)held / (1 << 30), n, sdx_result_name(rc), sdx_last_error(gpu));
    if (rc == SDX_OK) sdx_gen_result_free(gpu, &r);
    left = (long long)(sdx_device_bytes(gpu, NULL) - before - held);
    while (n > 0) {     /* before any check: a failing case leaves the device as it found it */
        n--;
        sdx__dev_free(gpu, hog[n].p, hog[n].bytes);
    }
    T_CHECK(rc == SDX_ERR_NOMEM && sdx_last_error(gpu)[0], "a generation on a full device gave %s, not SDX_ERR_NOMEM with a message",
            sdx_result_name(rc));
    T_CHECK(left == 0, "the failed generation left %lld bytes of device memory", left);
    T_CHECK(sdx_generate(m, &p, &r) == SDX_OK, "after the memory came back: %s", sdx_last_error(gpu));
    T_CHECK(!sdx__has_nonfinite(&r.latents[0]), "after the memory came back: the latent is not finite");
    sdx_gen_result_free(gpu, &r);
    sdx_model_free(m);
    sdx_destroy(gpu);
    return T_PASS;
}

/* ---- the backend itself ------------------------------------------------------------------------------- */

static int gpu_backend_reports_device_and_memory(void) {
    sdx_hip_info info;
    size_t peak = 0;
    TG_NEED_GPU(gpu);
    T_CHECK(sdx_hip_device_info(0, &info) == SDX_OK, "device info: %s", info.name);
    T_NOTE("%s (%s), %zu MiB, matrix units %d; backend %s", info.name, info.arch, info.total_bytes >> 20, info.matrix_units,
           sdx_backend_name(gpu));
    T_CHECK(info.total_bytes > 0, "no device memory reported");
    {
        void *p = sdx__dev_alloc(gpu, 1 << 20);
        T_CHECK(p && sdx_device_bytes(gpu, &peak) == (size_t)1 << 20 && peak == (size_t)1 << 20, "device bytes not counted");
        sdx__dev_free(gpu, p, 1 << 20);
    }
    T_CHECK(sdx_device_bytes(gpu, NULL) == 0, "device bytes not released");
    sdx_destroy(gpu);
    return T_PASS;
}

static const t_case gpu_cases[] = {
    { "backend_reports_device_and_memory", gpu_backend_reports_device_and_memory },
    { "linear_matches_cpu", gpu_linear_matches_cpu },
    { "conv2d_matches_cpu", gpu_conv2d_matches_cpu },
    { "loaded_convolution_weights_kept_channels_last_match_cpu", gpu_loaded_convolution_weights_kept_channels_last_match_cpu },
    { "residuals_in_the_epilogue_match_cpu", gpu_residuals_in_the_epilogue_match_cpu },
    { "linear_geglu_fuses_the_gate_and_matches_cpu", gpu_linear_geglu_fuses_the_gate_and_matches_cpu },
    { "attention_matches_cpu_for_every_head_dim", gpu_attention_matches_cpu_for_every_head_dim },
    { "norms_and_softmax_match_cpu", gpu_norms_and_softmax_match_cpu },
    { "elementwise_and_layout_match_cpu", gpu_elementwise_and_layout_match_cpu },
    { "half_stress_cases_stay_finite", gpu_half_stress_cases_stay_finite },
    { "sd1_goldens_reproduce", gpu_sd1_goldens_reproduce },
    { "sd2_goldens_reproduce", gpu_sd2_goldens_reproduce },
    { "sdxl_goldens_reproduce", gpu_sdxl_goldens_reproduce },
    { "gguf_model_matches_cpu", gpu_gguf_model_matches_cpu },
    { "graphs_replay_exactly_what_the_ops_compute", gpu_graphs_replay_exactly_what_the_ops_compute },
    { "controlnet_graphs_replay_exactly_what_the_ops_compute", gpu_controlnet_graphs_replay_exactly_what_the_ops_compute },
    { "out_of_memory_fails_cleanly_and_the_context_recovers", gpu_out_of_memory_fails_cleanly_and_the_context_recovers },
    { NULL, NULL }
};

int main(int argc, char **argv) {
    t_suite s = { "gpu", gpu_cases };
    return t_main(argc, argv, &s, 1);
}
