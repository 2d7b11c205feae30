#pragma once
#include "gemm_i8.c"
/* ===================================================================== */
/*  Linear and convolutions: the GEMM's users, Winograd                  */
/* ===================================================================== */

/* ---- linear ------------------------------------------------------------ */

/* y = x w^T + b (+ res, when not NULL, before y is stored: res may be y). */
static int sdx__cpu_linear_res(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w,
                               const sdx_tensor *b, const sdx_tensor *res, sdx_dtype compute) {
    sdx__gemm g;
    int rc;
    memset(&g, 0, sizeof g);
    g.K = w->shape[1];
    g.N = w->shape[0];
    g.M = g.K ? sdx_tensor_numel(x) / g.K : sdx_tensor_numel(y) / SDX__MAX((int64_t)1, g.N);
    g.batch = 1;
    g.a = x->data; g.a_dtype = x->dtype;
    g.b_kind = SDX__B_ROWS_T; g.b = w->data; g.b_dtype = w->dtype;
    g.y = y->data; g.y_dtype = y->dtype;
    g.bias = b; g.bias_per_row = 0;
    g.res = res ? res->data : NULL; g.res_dtype = res ? res->dtype : SDX_F32;
    g.weight = w; g.weight_is_a = 0;
    g.compute = compute;
    if ((rc = sdx__gemm_run(ctx, &g)) != SDX_OK) return rc;
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           sdx_dtype compute) {
    return sdx__cpu_linear_res(ctx, "linear", y, x, w, b, NULL, compute);
}

/* The residual in the GEMM's store: (x w^T + b) + res, each value rounded
 * once to y's type. */
static int sdx__cpu_linear_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                               const sdx_tensor *res, sdx_dtype compute) {
    return sdx__cpu_linear_res(ctx, "linear_add", y, x, w, b, res, compute);
}

/* ---- conv2d: direct ---------------------------------------------------- */

/* The im2col GEMM, any kernel and stride. Shapes were checked by the caller. */
static int sdx__conv2d_direct(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                              int stride, int pad_top, int pad_left, sdx_dtype compute) {
    sdx__gemm g;
    memset(&g, 0, sizeof g);
    g.M = w->shape[0];
    g.K = w->shape[1] * w->shape[2] * w->shape[3];
    g.N = y->shape[2] * y->shape[3];
    g.batch = x->shape[0];
    g.a = w->data; g.a_dtype = w->dtype; g.a_bstride = 0;
    g.b_kind = SDX__B_IM2COL; g.b = x->data; g.b_dtype = x->dtype;
    g.b_bstride = x->shape[1] * x->shape[2] * x->shape[3];
    g.C = x->shape[1]; g.H = x->shape[2]; g.W = x->shape[3]; g.Wo = y->shape[3];
    g.kh = (int)w->shape[2]; g.kw = (int)w->shape[3];
    g.stride = stride; g.pad_top = pad_top; g.pad_left = pad_left;
    g.y = y->data; g.y_dtype = y->dtype; g.y_bstride = g.M * g.N;
    g.bias = b; g.bias_per_row = 1;
    g.weight = w; g.weight_is_a = 1;
    g.compute = compute;
    return sdx__gemm_run(ctx, &g);
}

/* ---- Winograd F(4x4, 3x3) ----------------------------------------------- */
/* 3x3 stride-1 convolutions computed as Y = A^T [ sum_c (G g G^T) . (B^T d B) ] A
 * over 6x6 input tiles that give 4x4 outputs: 36 multiplies per 16
 * outputs instead of 144. The sum over channels is 36 independent GEMMs
 * U_xi[O, C] V_xi[C, tiles] run with the packed micro-kernel; everything
 * is f32 and the result stays within ~4e-6 rel-L2 of direct convolution
 * (interpolation points 0, +-1, +-2, as in Lavin & Gray 2015). The
 * transforms add and subtract at most ~100x an input in f32, so f16
 * activations near 65504 cannot overflow before the saturating store.
 *
 * Filters are transformed once per call into context-owned memory, a
 * chunk of output channels at a time (at most SDX__OP_WEIGHT_BYTES), already
 * packed as A panels; not cached across calls: 36/9 = 4x the f32 size of
 * every 3x3 weight would be 8.7 GB for SD 1.5's UNet, 0.8 GB for its VAE decoder.
 *
 * A job is (image, block of tiles, group of output channels). It
 * transforms its tiles of every input channel once, straight into the
 * micro-kernel's NR-column B panels (16 tiles in the lanes of one
 * transform), then per block of WOB outputs runs the 36 GEMMs into f32
 * tiles M_xi[o][t], transforms them back, adds the bias and narrows once
 * into y. Jobs never share an output and sum channels in one order, so
 * the result does not depend on the number of threads. */

#define SDX__WOB 48       /* output channels per GEMM block (multiple of MR) */
#define SDX__WTB 64       /* most tiles per job (multiple of NR)             */
#define SDX__WKC 256      /* input channels per micro-kernel call            */
#define SDX__WINO_V_BYTES ((size_t)4 << 20)   /* transformed inputs, per thread */
/* Where Winograd pays against the im2col GEMM (per CPU second, 2-vCPU
 * Xeon, batch 2 unless said, AVX-512 transforms): 1.9-2.3x at 64x64 for
 * 320 channels, 1.7x for 960, 1.9-2.0x for the VAE's 512 (batch 1),
 * 2.4-2.5x at 128x128; at 32x32 to 48x48 1.4-1.8x for 320..640 channels,
 * 1.05-1.5x for 1280 and 1920; 0.9-1.1x at 24x24 and 0.8x at 16x16:
 * there the per-call filter transform is not amortised. */
#define SDX__WINO_MIN_C 32
#define SDX__WINO_MIN_PIXELS (64 * 64)
#define SDX__WINO_WIDE_C 256
#define SDX__WINO_WIDE_PIXELS (32 * 32)

typedef struct {
    sdx_ctx *ctx;
    const sdx_tensor *x, *b;
    sdx_tensor *y;
    const float *u;                 /* U of outputs [o0, o0 + on), packed: see sdx__wino_filter_range */
    int64_t C, H, W, Ho, Wo, o0, on;
    int pt, pl;
    int64_t tiles_x, tiles, tb, tblocks, og, ogroups;
    int64_t ph, pw;                 /* padded input rows/cols a job reads */
    sdx__micro_kernels mk;
    int vec16;                      /* f32: the AVX-512 transforms (sdx__wa_*) */
    const uint16_t *uh;             /* AMX: U tiles, hi; lo ulo halves on (sdx__wino_amx_filter_range) */
    int64_t ulo, cp;                /* AMX: C padded to whole tiles (32) */
} sdx__wino;

/* Lane-parallel 1-D transforms over NR tiles: s holds 6 rows of NR lanes
 * `ss` floats apart, d gets the rows `ds` apart. B^T: */
static void sdx__wino_bt(const float *SDX__RESTRICT s, int64_t ss, float *SDX__RESTRICT d, int64_t ds) {
    for (int l = 0; l < SDX__NR; l++) {
        float d0 = s[l], d1 = s[ss + l], d2 = s[2 * ss + l], d3 = s[3 * ss + l], d4 = s[4 * ss + l], d5 = s[5 * ss + l];
        d[l]          = 4.0f * d0 - 5.0f * d2 + d4;
        d[ds + l]     = -4.0f * (d1 + d2) + d3 + d4;
        d[2 * ds + l] = 4.0f * (d1 - d2) - d3 + d4;
        d[3 * ds + l] = 2.0f * (d3 - d1) - d2 + d4;
        d[4 * ds + l] = 2.0f * (d1 - d3) - d2 + d4;
        d[5 * ds + l] = 4.0f * d1 - 5.0f * d3 + d5;
    }
}

/* A^T: 6 rows in, 4 rows out. */
static void sdx__wino_at(const float *SDX__RESTRICT s, int64_t ss, float *SDX__RESTRICT d, int64_t ds) {
    for (int l = 0; l < SDX__NR; l++) {
        float m0 = s[l], m1 = s[ss + l], m2 = s[2 * ss + l], m3 = s[3 * ss + l], m4 = s[4 * ss + l], m5 = s[5 * ss + l];
        float p12 = m1 + m2, d12 = m1 - m2, p34 = m3 + m4, d34 = m3 - m4;
        d[l]          = m0 + p12 + p34;
        d[ds + l]     = d12 + 2.0f * d34;
        d[2 * ds + l] = p12 + 4.0f * p34;
        d[3 * ds + l] = d12 + 8.0f * d34 + m5;
    }
}

#define SDX__WL SDX__MR   /* filters transformed side by side: a strip's */
#define SDX__WCB 16       /* input channels widened at a time (sdx__wino_wcb) */

/* G applied to 3 rows of WL lanes `gs` apart, 6 rows out `us` apart. */
static void sdx__wino_g(const float *SDX__RESTRICT g, int gs, float *SDX__RESTRICT u, int us) {
    const float s6 = 1.0f / 6.0f, s12 = 1.0f / 12.0f, s24 = 1.0f / 24.0f;
    for (int l = 0; l < SDX__WL; l++) {
        float g0 = g[l], g1 = g[gs + l], g2 = g[2 * gs + l];
        u[l]          = g0 * 0.25f;
        u[us + l]     = -(g0 + g1 + g2) * s6;
        u[2 * us + l] = -(g0 - g1 + g2) * s6;
        u[3 * us + l] = g0 * s24 + g1 * s12 + g2 * s6;
        u[4 * us + l] = g0 * s24 - g1 * s12 + g2 * s6;
        u[5 * us + l] = g2;
    }
}

typedef struct { const sdx_tensor *w; float *u; int64_t C, o0, on; sdx_ctx *ctx; } sdx__wino_ft;

/* U = G g G^T for outputs [o0, o0 + on), packed as the micro-kernel's A
 * operand: u[((xi * ostrips + o / MR) * C + c) * MR + o % MR] (rows past
 * `on` in the last strip are zero), so a job reads MR x kc panels as is.
 * A job is one strip of MR outputs, its filters one per lane: the MR
 * transformed values of an input channel are stored side by side, 36
 * runs that move forward together, where a filter at a time scattered
 * them a cache line each. */
/* Input channels a filter transform widens at a time: SDX__WCB, or for a
 * quantized filter a block's count, whose 9 x block values are whole
 * blocks (9 and a block, a power of two, share no factor). */
static int sdx__wino_wcb(sdx_dtype filter) { return SDX__MAX(SDX__WCB, sdx_dtype_block(filter, NULL)); }

static void sdx__wino_filter_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__wino_ft *f = (const sdx__wino_ft *)arg;
    const int64_t ostrips = (f->on + SDX__MR - 1) / SDX__MR, xstride = ostrips * f->C * SDX__MR;
    const int wcb = sdx__wino_wcb(f->w->dtype);
    float *g = sdx__scratch_f32(f->ctx, thread);     /* [MR][wcb * 9] */
    float gl[9 * SDX__WL], t[18 * SDX__WL], v[36 * SDX__WL];
    for (int64_t strip = begin; strip < end; strip++) {
        const int64_t o0 = strip * SDX__MR;
        const int live = (int)SDX__MIN((int64_t)SDX__MR, f->on - o0);
        float *u = f->u + strip * f->C * SDX__MR;
        for (int64_t c0 = 0; c0 < f->C; c0 += wcb) {
            const int nc = (int)SDX__MIN((int64_t)wcb, f->C - c0);
            for (int l = 0; l < live; l++)
                sdx__load_f32(f->w->data, f->w->dtype, ((f->o0 + o0 + l) * f->C + c0) * 9, nc * 9, g + l * wcb * 9);
            for (int c = 0; c < nc; c++) {
                for (int e = 0; e < 9; e++)
                    for (int l = 0; l < SDX__WL; l++) gl[e * SDX__WL + l] = l < live ? g[(l * wcb + c) * 9 + e] : 0.0f;
                for (int j = 0; j < 3; j++) sdx__wino_g(gl + j * SDX__WL, 3 * SDX__WL, t + j * SDX__WL, 3 * SDX__WL);
                for (int i = 0; i < 6; i++) sdx__wino_g(t + i * 3 * SDX__WL, SDX__WL, v + i * 6 * SDX__WL, SDX__WL);
                for (int xi = 0; xi < 36; xi++)
                    memcpy(u + xi * xstride + (c0 + c) * SDX__MR, v + xi * SDX__WL, SDX__MR * sizeof(float));
            }
        }
    }
}

/* Tiles per job: as many as keep the job's transformed input (36 x C x
 * tiles floats) within SDX__WINO_V_BYTES, at least one NR strip. */
static int64_t sdx__wino_tiles_per_job(int64_t C) {
    int64_t t = (int64_t)(SDX__WINO_V_BYTES / ((size_t)36 * sizeof(float) * (size_t)C)) / SDX__NR * SDX__NR;
    return SDX__MAX((int64_t)SDX__NR, SDX__MIN((int64_t)SDX__WTB, t));
}

/* Floats of per-thread scratch one job needs. */
static size_t sdx__wino_scratch_floats(int64_t C, int64_t tb, int64_t ph, int64_t pw) {
    return (size_t)36 * (size_t)C * (size_t)tb          /* transformed input V */
         + (size_t)36 * SDX__WOB * (size_t)tb           /* M accumulators */
         + (size_t)(ph * pw + 16) + (size_t)((ph - 2) * (pw - 2))   /* padded input rows; output rows */
         + (size_t)3 * 36 * SDX__NR                     /* transform temporaries */
         + (size_t)SDX__WOB + 64;                       /* bias */
}

/* Widens input plane c of image n, rows [r0, r0 + rows) of the padded
 * frame (row r is input row r - pt, column j input column j - pl), into
 * p[rows][pw], zero outside the input. */
static void sdx__wino_load_rows(const sdx__wino *wi, float *p, int64_t n, int64_t c, int64_t r0, int64_t rows) {
    const int64_t plane = (n * wi->C + c) * wi->H * wi->W;
    const int64_t j0 = wi->pl, j1 = SDX__MIN(wi->pw, wi->pl + wi->W);
    for (int64_t r = 0; r < rows; r++) {
        float *row = p + r * wi->pw;
        int64_t iy = r0 + r - wi->pt;
        if (iy < 0 || iy >= wi->H || j1 <= j0) { memset(row, 0, (size_t)wi->pw * sizeof(float)); continue; }
        memset(row, 0, (size_t)j0 * sizeof(float));
        sdx__load_f32(wi->x->data, wi->x->dtype, plane + iy * wi->W, j1 - j0, row + j0);
        memset(row + j1, 0, (size_t)(wi->pw - j1) * sizeof(float));
    }
}

/* Where tile tt starts in a job's rows (tile row ty0 first, `stride`
 * floats a row): its top-left value, input or output. */
static int64_t sdx__wino_tile_at(const sdx__wino *wi, int64_t tt, int64_t ty0, int64_t stride) {
    return (tt / wi->tiles_x - ty0) * 4 * stride + (tt % wi->tiles_x) * 4;
}

static void sdx__wino_store_rows(const sdx__wino *wi, const float *orows, int64_t yplane, int64_t t0, int tn, int64_t ty0,
                                 int64_t nty);

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF

/* The transforms on 16 lanes at a time (AVX-512), for both paths: the
 * scalar loops cost as much as a third of the f32 path's products and
 * more than the AMX path's tile products. */
__attribute__((target("avx512f"), always_inline))
static inline void sdx__wa_bt(const __m512 *d, int ds, __m512 *o, int os) {
    const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
    const __m512 d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    const __m512 d4m2 = _mm512_sub_ps(d4, d2);
    o[0]      = _mm512_fmadd_ps(four, d0, _mm512_fnmadd_ps(five, d2, d4));
    o[os]     = _mm512_fnmadd_ps(four, _mm512_add_ps(d1, d2), _mm512_add_ps(d3, d4));
    o[2 * os] = _mm512_fmadd_ps(four, _mm512_sub_ps(d1, d2), _mm512_sub_ps(d4, d3));
    o[3 * os] = _mm512_fmadd_ps(two, _mm512_sub_ps(d3, d1), d4m2);
    o[4 * os] = _mm512_fmadd_ps(two, _mm512_sub_ps(d1, d3), d4m2);
    o[5 * os] = _mm512_fmadd_ps(four, d1, _mm512_fnmadd_ps(five, d3, d5));
}

__attribute__((target("avx512f"), always_inline))
static inline void sdx__wa_at(const __m512 *m, int ms, __m512 *o, int os) {
    const __m512 m0 = m[0], m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms], m5 = m[5 * ms];
    const __m512 p12 = _mm512_add_ps(m1, m2), d12 = _mm512_sub_ps(m1, m2);
    const __m512 p34 = _mm512_add_ps(m3, m4), d34 = _mm512_sub_ps(m3, m4);
    o[0]      = _mm512_add_ps(_mm512_add_ps(m0, p12), p34);
    o[os]     = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), d34, d12);
    o[2 * os] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), p34, p12);
    o[3 * os] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), d34, d12), m5);
}

/* G: 3 rows in (`gs` apart), 6 out (`us` apart), as sdx__wino_g. */
__attribute__((target("avx512f"), always_inline))
static inline void sdx__wa_g(const __m512 *g, int gs, __m512 *u, int us) {
    const __m512 g0 = g[0], g1 = g[gs], g2 = g[2 * gs], sum = _mm512_add_ps(g0, g2);
    const __m512 s6 = _mm512_set1_ps(1.0f / 6.0f), s12 = _mm512_set1_ps(1.0f / 12.0f), s24 = _mm512_set1_ps(1.0f / 24.0f);
    u[0]      = _mm512_mul_ps(g0, _mm512_set1_ps(0.25f));
    u[us]     = _mm512_mul_ps(_mm512_add_ps(sum, g1), _mm512_set1_ps(-1.0f / 6.0f));
    u[2 * us] = _mm512_mul_ps(_mm512_sub_ps(sum, g1), _mm512_set1_ps(-1.0f / 6.0f));
    u[3 * us] = _mm512_fmadd_ps(g0, s24, _mm512_fmadd_ps(g1, s12, _mm512_mul_ps(g2, s6)));
    u[4 * us] = _mm512_fmadd_ps(g0, s24, _mm512_fnmadd_ps(g1, s12, _mm512_mul_ps(g2, s6)));
    u[5 * us] = g2;
}

/* Lanes l of r[4 l + j] (j < 4) from v0..v3 = r[0..63]: two permutes of
 * 8 lanes each, joined. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 sdx__wa_stride4(__m512 v0, __m512 v1, __m512 v2, __m512 v3, int j) {
    const __m512i idx = _mm512_add_epi32(_mm512_set_epi32(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0),
                                         _mm512_set1_epi32(j));
    return _mm512_shuffle_f32x4(_mm512_permutex2var_ps(v0, idx, v1), _mm512_permutex2var_ps(v2, idx, v3),
                                _MM_SHUFFLE(1, 0, 1, 0));
}

/* Whether tiles [t0 + at, t0 + at + 16) are all the job's (tn of them)
 * and lie along one tile row: then their values are contiguous. */
static int sdx__wa_run16(const sdx__wino *wi, int64_t t0, int at, int tn) {
    return at + 16 <= tn && (t0 + at) % wi->tiles_x + 16 <= wi->tiles_x;
}

/* V = B^T d B of 16 tiles of one channel (group s of the job's tiles)
 * into e[xi] (16 lanes each). Sixteen whole tiles along one tile row read
 * their 6 x 66 inputs with contiguous loads; other groups gather. */
__attribute__((target("avx512f"))) __attribute__((noinline))
static void sdx__wa_transform_in(const sdx__wino *wi, const float *rows, float *e, int64_t t0, int tn, int64_t ty0, int s) {
    __m512 d[36], t[36];
    if (sdx__wa_run16(wi, t0, 16 * s, tn)) {
        const float *r = rows + sdx__wino_tile_at(wi, t0 + 16 * s, ty0, wi->pw);
        for (int i = 0; i < 6; i++, r += wi->pw) {
            const __m512 v0 = _mm512_loadu_ps(r), v1 = _mm512_loadu_ps(r + 16), v2 = _mm512_loadu_ps(r + 32),
                         v3 = _mm512_loadu_ps(r + 48);
            const __m512 w0 = _mm512_loadu_ps(r + 4), w1 = _mm512_loadu_ps(r + 20), w2 = _mm512_loadu_ps(r + 36),
                         w3 = _mm512_loadu_ps(r + 52);
            for (int j = 0; j < 4; j++) d[i * 6 + j] = sdx__wa_stride4(v0, v1, v2, v3, j);
            d[i * 6 + 4] = sdx__wa_stride4(w0, w1, w2, w3, 0);
            d[i * 6 + 5] = sdx__wa_stride4(w0, w1, w2, w3, 1);
        }
    } else {
        int32_t base[16];
        __m512i vb;
        for (int l = 0; l < 16; l++)
            base[l] = (int32_t)sdx__wino_tile_at(wi, t0 + (16 * s + l < tn ? 16 * s + l : 0), ty0, wi->pw);
        vb = _mm512_loadu_si512((const void *)base);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) d[i * 6 + j] = _mm512_i32gather_ps(vb, rows + i * wi->pw + j, 4);
    }
    for (int j = 0; j < 6; j++) sdx__wa_bt(d + j, 6, t + j, 6);
    for (int i = 0; i < 6; i++) sdx__wa_bt(t + i * 6, 1, d + i * 6, 1);
    for (int xi = 0; xi < 36; xi++) _mm512_storeu_ps(e + xi * 16, d[xi]);
}

/* A^T M A + bias of output channel oc (M_xi[o][t] in m, row stride tnp)
 * into y, for tiles [t0, t0 + tn), 16 tiles at a time. */
__attribute__((target("avx512f")))
static void sdx__wa_output(const sdx__wino *wi, const float *m, int64_t mstride, int tnp, int64_t n, int64_t oc, float bv,
                           float *orows, int64_t t0, int tn, int64_t ty0, int64_t nty) {
    const int64_t ow = wi->pw - 2, yplane = (n * wi->y->shape[1] + oc) * wi->Ho * wi->Wo;
    const __m512 bias = _mm512_set1_ps(bv);
    for (int s = 0; s < tnp; s += 16) {
        __m512 d[36], t[24], o[16];
        for (int xi = 0; xi < 36; xi++) d[xi] = _mm512_loadu_ps(m + xi * mstride + s);
        for (int j = 0; j < 6; j++) sdx__wa_at(d + j, 6, t + j, 6);
        for (int i = 0; i < 4; i++) sdx__wa_at(t + i * 6, 1, o + i * 4, 1);
        if (sdx__wa_run16(wi, t0, s, tn)) {
            /* out[4 l + j] = o[i][j][l]: output row i of 16 tiles, 64 floats */
            float *row = orows + sdx__wino_tile_at(wi, t0 + s, ty0, ow);
            for (int i = 0; i < 4; i++, row += ow)
                for (int q = 0; q < 4; q++) {
                    const __m512i idx = _mm512_add_epi32(_mm512_set_epi32(19, 3, 19, 3, 18, 2, 18, 2, 17, 1, 17, 1, 16, 0, 16, 0),
                                                         _mm512_set1_epi32(4 * q));
                    const __m512 a = _mm512_permutex2var_ps(o[i * 4], idx, o[i * 4 + 1]);
                    const __m512 b = _mm512_permutex2var_ps(o[i * 4 + 2], idx, o[i * 4 + 3]);
                    _mm512_storeu_ps(row + 16 * q, _mm512_add_ps(_mm512_mask_blend_ps(0xCCCC, a, b), bias));
                }
        } else {
            float e[16 * 16];
            for (int k = 0; k < 16; k++) _mm512_storeu_ps(e + k * 16, _mm512_add_ps(o[k], bias));
            for (int l = 0; l < 16 && s + l < tn; l++) {
                float *at = orows + sdx__wino_tile_at(wi, t0 + s + l, ty0, ow);
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) at[i * ow + j] = e[(i * 4 + j) * 16 + l];
            }
        }
    }
    sdx__wino_store_rows(wi, orows, yplane, t0, tn, ty0, nty);
}

SDX__INTRINSICS_WARNINGS_ON
#endif

/* B^T d B of tiles [t0, t0 + tn) of every input channel into v, packed
 * as the micro-kernel's B operand: v[((xi * tstrips + t / NR) * C + c) * NR + t % NR].
 * Lanes past tn repeat the first tile (their outputs are never stored). */
static void sdx__wino_input(const sdx__wino *wi, float *v, float *rows, float *d, float *t, float *e,
                            int64_t n, int64_t t0, int tn, int64_t ty0, int64_t nty) {
    const int tstrips = (tn + SDX__NR - 1) / SDX__NR;
    for (int64_t c = 0; c < wi->C; c++) {
        sdx__wino_load_rows(wi, rows, n, c, ty0 * 4, nty * 4 + 2);
        for (int s = 0; s < tstrips; s++) {
#ifdef SDX__X86
            if (wi->vec16) sdx__wa_transform_in(wi, rows, e, t0, tn, ty0, s);
            else
#endif
            {
                int64_t base[SDX__NR];
                for (int l = 0; l < SDX__NR; l++)
                    base[l] = sdx__wino_tile_at(wi, t0 + (s * SDX__NR + l < tn ? s * SDX__NR + l : 0), ty0, wi->pw);
                for (int i = 0; i < 6; i++)
                    for (int j = 0; j < 6; j++) {
                        const float *src = rows + i * wi->pw + j;
                        float *dst = d + (i * 6 + j) * SDX__NR;
                        for (int l = 0; l < SDX__NR; l++) dst[l] = src[base[l]];
                    }
                for (int j = 0; j < 6; j++) sdx__wino_bt(d + j * SDX__NR, 6 * SDX__NR, t + j * SDX__NR, 6 * SDX__NR);
                for (int i = 0; i < 6; i++) sdx__wino_bt(t + i * 6 * SDX__NR, SDX__NR, e + i * 6 * SDX__NR, SDX__NR);
            }
            for (int xi = 0; xi < 36; xi++)
                memcpy(v + (((size_t)xi * tstrips + s) * wi->C + c) * SDX__NR, e + xi * SDX__NR, SDX__NR * sizeof(float));
        }
    }
}

/* A^T M A + bias of output channel o (M_xi[o][t] in m, row stride tnp)
 * into y, for tiles [t0, t0 + tn). */
static void sdx__wino_output(const sdx__wino *wi, const float *m, int64_t mstride, int tnp, int64_t n, int64_t oc,
                             float bv, float *orows, float *d, float *t, float *e, int64_t t0, int tn, int64_t ty0,
                             int64_t nty) {
    const int64_t ow = wi->pw - 2, yplane = (n * wi->y->shape[1] + oc) * wi->Ho * wi->Wo;
#ifdef SDX__X86
    if (wi->vec16) { sdx__wa_output(wi, m, mstride, tnp, n, oc, bv, orows, t0, tn, ty0, nty); return; }
#endif
    for (int s = 0; s < tnp; s += SDX__NR) {
        for (int xi = 0; xi < 36; xi++) memcpy(d + xi * SDX__NR, m + xi * mstride + s, SDX__NR * sizeof(float));
        for (int j = 0; j < 6; j++) sdx__wino_at(d + j * SDX__NR, 6 * SDX__NR, t + j * SDX__NR, 6 * SDX__NR);
        for (int i = 0; i < 4; i++) sdx__wino_at(t + i * 6 * SDX__NR, SDX__NR, e + i * 4 * SDX__NR, SDX__NR);
        for (int l = 0; l < SDX__NR && s + l < tn; l++) {
            float *at = orows + sdx__wino_tile_at(wi, t0 + s + l, ty0, ow);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) at[i * ow + j] = e[(i * 4 + j) * SDX__NR + l] + bv;
        }
    }
    sdx__wino_store_rows(wi, orows, yplane, t0, tn, ty0, nty);
}

/* The output rows of tiles [t0, t0 + tn) (orows, pw - 2 floats a row) into
 * y's plane at yplane. */
static void sdx__wino_store_rows(const sdx__wino *wi, const float *orows, int64_t yplane, int64_t t0, int tn, int64_t ty0,
                                 int64_t nty) {
    const int64_t ow = wi->pw - 2;
    for (int64_t r = 0; r < nty * 4; r++) {
        int64_t ty = ty0 + r / 4, oy = ty * 4 + r % 4;
        int64_t tx0 = ty == ty0 ? t0 % wi->tiles_x : 0;
        int64_t tx1 = ty == ty0 + nty - 1 ? (t0 + tn - 1) % wi->tiles_x + 1 : wi->tiles_x;
        int64_t x0 = tx0 * 4, x1 = SDX__MIN(tx1 * 4, wi->Wo);
        if (oy >= wi->Ho || x1 <= x0) continue;
        sdx__store_f32(wi->y->data, wi->y->dtype, yplane + oy * wi->Wo + x0, x1 - x0, orows + r * ow + x0);
    }
}

/* One job: image n, tiles [t0, t0 + tn), output group og of the chunk. */
static void sdx__wino_job(const sdx__wino *wi, int64_t job, int thread) {
    const int64_t per_image = wi->tblocks * wi->ogroups;
    const int64_t n = job / per_image, tb = (job % per_image) / wi->ogroups, og = job % wi->ogroups;
    const int64_t t0 = tb * wi->tb, og0 = og * wi->og, og1 = SDX__MIN(wi->on, og0 + wi->og);
    const int tn = (int)SDX__MIN(wi->tb, wi->tiles - t0), tnp = (tn + SDX__NR - 1) / SDX__NR * SDX__NR;
    const int tstrips = tnp / SDX__NR;
    const int64_t ty0 = t0 / wi->tiles_x, nty = (t0 + tn - 1) / wi->tiles_x - ty0 + 1;
    const int64_t ostrips = (wi->on + SDX__MR - 1) / SDX__MR;
    float *v = sdx__scratch_f32(wi->ctx, thread);
    float *acc = v + (size_t)36 * wi->C * wi->tb;
    float *rows = acc + (size_t)36 * SDX__WOB * wi->tb;
    float *orows = rows + (size_t)(wi->ph * wi->pw) + 16;   /* the loads of 16 tiles read 2 floats past a row */
    float *d = orows + (size_t)((wi->ph - 2) * (wi->pw - 2)), *t = d + 36 * SDX__NR, *e = t + 36 * SDX__NR;
    float *bias = e + 36 * SDX__NR;
    if (og0 >= og1) return;
    sdx__wino_input(wi, v, rows, d, t, e, n, t0, tn, ty0, nty);
    for (int64_t ob0 = og0; ob0 < og1; ob0 += SDX__WOB) {
        const int onv = (int)SDX__MIN((int64_t)SDX__WOB, og1 - ob0), onp = (onv + SDX__MR - 1) / SDX__MR * SDX__MR;
        const int64_t mstride = (int64_t)onp * tnp;
        for (int64_t c0 = 0; c0 < wi->C; c0 += SDX__WKC) {
            const int kc = (int)SDX__MIN((int64_t)SDX__WKC, wi->C - c0);
            for (int xi = 0; xi < 36; xi++) {
                const float *a = wi->u + (((size_t)xi * ostrips + ob0 / SDX__MR) * wi->C + c0) * SDX__MR;
                const float *b = v + ((size_t)xi * tstrips * wi->C + c0) * SDX__NR;
                float *m = acc + xi * mstride;
                for (int j = 0; j < tstrips;) {
                    const int two = wi->mk.two && j + 1 < tstrips;
                    for (int i = 0; i < onp; i += SDX__MR)
                        sdx__micro_strips(&wi->mk, two, kc, a + (size_t)i * wi->C,
                                          b + (size_t)j * wi->C * SDX__NR, wi->C * SDX__NR,
                                          m + (int64_t)i * tnp + j * SDX__NR, tnp, c0 > 0);
                    j += two ? 2 : 1;
                }
            }
        }
        if (wi->b) sdx__load_f32(wi->b->data, wi->b->dtype, wi->o0 + ob0, onv, bias);
        for (int o = 0; o < onv; o++)
            sdx__wino_output(wi, acc + (int64_t)o * tnp, mstride, tnp, n, wi->o0 + ob0 + o, wi->b ? bias[o] : 0.0f,
                             orows, d, t, e, t0, tn, ty0, nty);
    }
}

static void sdx__wino_range(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__wino_job((const sdx__wino *)arg, j, thread);
}

/* ---- Winograd on AMX (bf16 mode) --------------------------------------- */
/* On AMX bf16 mode's 3x3 convolutions run F(4,3) Winograd too, with the
 * 36 GEMMs on tiles. Both operands are split, U = G g G^T and V = B^T d B
 * into hi + lo bf16, and multiplied three ways (hi hi' + hi lo' + lo hi',
 * as attention does): about 4e-5 rel-L2 from the convolution in double
 * (f32 Winograd 1-4e-6; bf16 mode's im2col, which rounds the weight,
 * ~2e-3 a layer) while multiplying 3 x 36 / (2 x 144) = 0.375 as many
 * products as the im2col GEMM with its split activation. Rounding U alone
 * would not do (measured 1.7e-2): the output transform sums terms up to
 * 8x the result, which multiplies a rounded operand's error accordingly.
 *
 * Layout: U as A tiles, rows = output channels, k = input channels padded
 * to cp (a multiple of 32): uh[((xi * ob16 + o / 16) * kt + c / 32) * 512
 * + o % 16 * 32 + c % 32], lo ulo halves on. V as B pair strips of 32
 * tiles: v[((xi * strips + s) * cp / 2 + c / 2) * 32 + tile % 32], a pair
 * of channels per word, lo after all of hi. A job (image, block of tiles,
 * group of outputs) transforms its tiles once, then per block of WAOB
 * outputs runs the 36 products into f32 M tiles and transforms them back
 * as the f32 path does. */

#define SDX__WA_MIN_TILES 192              /* Winograd pays from here (all images)     */
#define SDX__WAOB 128                     /* outputs per GEMM block (multiple of 32) */
#define SDX__WA_TB 128                    /* most tiles per job (multiple of 32)     */
#define SDX__WA_V_BYTES ((size_t)8 << 20) /* transformed inputs, per thread          */

/* Tiles per job: the job's V (36 x cp x 4 bytes a tile) within
 * SDX__WA_V_BYTES, whole strips of 32. */
static int64_t sdx__wino_amx_tiles_per_job(int64_t cp) {
    int64_t t = (int64_t)(SDX__WA_V_BYTES / ((size_t)36 * 4 * (size_t)cp)) / 32 * 32;
    return SDX__MAX((int64_t)32, SDX__MIN((int64_t)SDX__WA_TB, t));
}

static size_t sdx__wino_amx_scratch_bytes(int64_t cp, int64_t tb, int64_t ph, int64_t pw) {
    return (size_t)36 * (size_t)cp * (size_t)tb * 4                 /* V, hi + lo */
         + ((size_t)36 * SDX__WAOB * (size_t)tb                     /* M accumulators */
            + (size_t)(2 * ph * pw + 16) + (size_t)((ph - 2) * (pw - 2))  /* two channels' rows; output rows */
            + (size_t)2 * 36 * 16 + SDX__WAOB + 64) * sizeof(float);
}

#ifdef SDX__AMX
typedef struct { const sdx_tensor *w; uint16_t *uh; int64_t ulo, C, cp, o0, on, onp; sdx_ctx *ctx; } sdx__wino_amx_ft;

SDX__INTRINSICS_WARNINGS_OFF

/* U = G g G^T of outputs [begin, end) of the chunk (rows past on are
 * zero), 16 input channels at a time, split into hi + lo A tiles. */
__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sdx__wino_amx_filter_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__wino_amx_ft *f = (const sdx__wino_amx_ft *)arg;
    const int64_t kt = f->cp / 32, ob16 = f->onp / 16;
    const __m512i nine = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32(9));
    float *g = sdx__scratch_f32(f->ctx, thread);
    for (int64_t o = begin; o < end; o++) {
        if (o < f->on) sdx__load_f32(f->w->data, f->w->dtype, (f->o0 + o) * f->C * 9, f->C * 9, g);
        for (int64_t c0 = 0; c0 < f->cp; c0 += 16) {
            const __mmask16 live = o < f->on ? sdx__lanes16(f->C - c0) : 0;
            __m512 gv[9], t[18], u[36];
            for (int e = 0; e < 9; e++)
                gv[e] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, nine, g + c0 * 9 + e, 4);
            for (int kx = 0; kx < 3; kx++) sdx__wa_g(gv + kx, 3, t + kx, 3);       /* along ky: t[6][3] */
            for (int i = 0; i < 6; i++) sdx__wa_g(t + 3 * i, 1, u + 6 * i, 1);   /* along kx: u[6][6] */
            for (int xi = 0; xi < 36; xi++) {
                const int64_t at = ((xi * ob16 + o / 16) * kt + c0 / 32) * SDX__ATILE + o % 16 * 32 + c0 % 32;
                const __m512i hi = sdx__bf16_round512(u[xi]);
                _mm256_storeu_si256((__m256i *)(f->uh + at), _mm512_cvtepi32_epi16(hi));
                _mm256_storeu_si256((__m256i *)(f->uh + at + f->ulo), _mm512_cvtepi32_epi16(sdx__bf16_residual512(u[xi], hi)));
            }
        }
    }
}

/* V of tiles [t0, t0 + tn) of every channel (pairs, zero past C), hi
 * and lo, in strips of 32 (lanes past tn repeat tile t0). */
__attribute__((target("avx512f,avx512bw")))
static void sdx__wino_amx_input(const sdx__wino *wi, uint32_t *v, float *rows0, float *rows1, float *e0, float *e1,
                                int64_t n, int64_t t0, int tn, int64_t ty0, int64_t nty) {
    const int strips = (tn + 31) / 32;
    const int64_t kp = wi->cp / 2, xstride = (int64_t)strips * kp * 32, vlo = 36 * xstride;
    for (int64_t c = 0; c < wi->cp; c += 2) {
        const int have0 = c < wi->C, have1 = c + 1 < wi->C;
        if (have0) sdx__wino_load_rows(wi, rows0, n, c, ty0 * 4, nty * 4 + 2);
        if (have1) sdx__wino_load_rows(wi, rows1, n, c + 1, ty0 * 4, nty * 4 + 2);
        for (int s = 0; s < 2 * strips; s++) {
            uint32_t *at = v + ((int64_t)(s / 2) * kp + c / 2) * 32 + s % 2 * 16;
            if (have0) sdx__wa_transform_in(wi, rows0, e0, t0, tn, ty0, s);
            if (have1) sdx__wa_transform_in(wi, rows1, e1, t0, tn, ty0, s);
            for (int xi = 0; xi < 36; xi++) {
                const __m512 x0 = have0 ? _mm512_loadu_ps(e0 + xi * 16) : _mm512_setzero_ps();
                const __m512 x1 = have1 ? _mm512_loadu_ps(e1 + xi * 16) : _mm512_setzero_ps();
                const __m512i h0 = sdx__bf16_round512(x0), h1 = sdx__bf16_round512(x1);
                _mm512_storeu_si512((void *)(at + xi * xstride), _mm512_or_si512(h0, _mm512_slli_epi32(h1, 16)));
                _mm512_storeu_si512((void *)(at + xi * xstride + vlo),
                                    _mm512_or_si512(sdx__bf16_residual512(x0, h0),
                                                    _mm512_slli_epi32(sdx__bf16_residual512(x1, h1), 16)));
            }
        }
    }
}

SDX__INTRINSICS_WARNINGS_ON

/* One job: image n, tiles [t0, t0 + tn), output group og of the chunk. */
static void sdx__wino_amx_job(const sdx__wino *wi, int64_t job, int thread) {
    const int64_t per_image = wi->tblocks * wi->ogroups;
    const int64_t n = job / per_image, tb = (job % per_image) / wi->ogroups, og = job % wi->ogroups;
    const int64_t t0 = tb * wi->tb, og0 = og * wi->og, og1 = SDX__MIN(wi->on, og0 + wi->og);
    const int tn = (int)SDX__MIN(wi->tb, wi->tiles - t0), tnp = (tn + 31) / 32 * 32, strips = tnp / 32;
    const int64_t ty0 = t0 / wi->tiles_x, nty = (t0 + tn - 1) / wi->tiles_x - ty0 + 1;
    const int64_t kt = wi->cp / 32, kp = wi->cp / 2, ob16 = (wi->on + 31) / 32 * 2;
    const int64_t xstride = (int64_t)strips * kp * 32, vlo = 36 * xstride;
    uint32_t *v = (uint32_t *)sdx__scratch_f32(wi->ctx, thread);
    float *acc = (float *)(v + 2 * vlo);
    float *rows0 = acc + (size_t)36 * SDX__WAOB * tnp, *rows1 = rows0 + wi->ph * wi->pw;
    float *orows = rows1 + wi->ph * wi->pw + 16;       /* the loads of 16 tiles read 2 floats past a row */
    float *e0 = orows + (wi->ph - 2) * (wi->pw - 2), *e1 = e0 + 36 * 16, *bias = e1 + 36 * 16;
    if (og0 >= og1) return;
    sdx__wino_amx_input(wi, v, rows0, rows1, e0, e1, n, t0, tn, ty0, nty);
    for (int64_t ob0 = og0; ob0 < og1; ob0 += SDX__WAOB) {
        const int onv = (int)SDX__MIN((int64_t)SDX__WAOB, og1 - ob0), onp = (onv + 31) / 32 * 32;
        const int64_t mstride = (int64_t)onp * tnp;
        for (int xi = 0; xi < 36; xi++)
            for (int s = 0; s < strips; s++)
                for (int i = 0; i < onp; i += 32) {
                    const uint16_t *a0 = wi->uh + (xi * ob16 + (ob0 + i) / 16) * kt * SDX__ATILE;
                    sdx__amx_32x32((int)kt, a0, a0 + kt * SDX__ATILE, v + xi * xstride + (int64_t)s * kp * 32, wi->ulo, vlo,
                                   acc + xi * mstride + (int64_t)i * tnp + s * 32, tnp, 0);
                }
        if (wi->b) sdx__load_f32(wi->b->data, wi->b->dtype, wi->o0 + ob0, onv, bias);
        for (int o = 0; o < onv; o++)
            sdx__wa_output(wi, acc + (int64_t)o * tnp, mstride, tnp, n, wi->o0 + ob0 + o, wi->b ? bias[o] : 0.0f, orows,
                           t0, tn, ty0, nty);
    }
}

static void sdx__wino_amx_range(void *arg, int64_t begin, int64_t end, int thread) {
    __asm__ __volatile__("ldtilecfg %0" : : "m"(sdx__amx_config) : "memory");
    for (int64_t j = begin; j < end; j++) sdx__wino_amx_job((const sdx__wino *)arg, j, thread);
    __asm__ __volatile__("tilerelease" : : : "memory");
}
#endif /* SDX__AMX */

/* Whether bf16 mode runs on AMX here (its GEMMs, attention and
 * Winograd's products on tiles). */
static int sdx__amx_computes(sdx_ctx *ctx, sdx_dtype compute) {
    return compute == SDX_BF16 && sdx__bf16_usable(ctx) && sdx__cpu(ctx)->bf16_amx;
}

/* y = conv3x3(x, w) + b, stride 1, pads (pt, pl) on top/left (bottom and
 * right follow from y's shape). Shapes were checked by the caller. In
 * bf16 mode on AMX the products run on tiles (see above). */
static int sdx__conv2d_winograd(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w,
                                const sdx_tensor *b, int pt, int pl, sdx_dtype compute) {
    sdx__wino wi;
    int64_t O = w->shape[0], per_o, chunk, nty_max, jobs_per_group, ob, orow;
    size_t scratch;
    int rc, amx = 0;
    void (*job_range)(void *, int64_t, int64_t, int) = sdx__wino_range;
    memset(&wi, 0, sizeof wi);
    wi.ctx = ctx; wi.x = x; wi.b = b; wi.y = y;
    wi.C = x->shape[1]; wi.H = x->shape[2]; wi.W = x->shape[3];
    wi.Ho = y->shape[2]; wi.Wo = y->shape[3];
    wi.pt = pt; wi.pl = pl;
    if (y->shape[0] == 0 || O == 0 || wi.Ho == 0 || wi.Wo == 0) return SDX_OK;
    if (wi.C == 0) return sdx__conv2d_direct(ctx, y, x, w, b, 1, pt, pl, compute);
#ifdef SDX__AMX
    amx = sdx__amx_computes(ctx, compute);
#endif
    wi.cp = (wi.C + 31) / 32 * 32;
    wi.tiles_x = (wi.Wo + 3) / 4;
    wi.tiles = wi.tiles_x * ((wi.Ho + 3) / 4);
    wi.tb = amx ? sdx__wino_amx_tiles_per_job(wi.cp) : sdx__wino_tiles_per_job(wi.C);
    wi.tblocks = (wi.tiles + wi.tb - 1) / wi.tb;
    nty_max = SDX__MIN((wi.Ho + 3) / 4, (wi.tb + wi.tiles_x - 2) / wi.tiles_x + 1);
    wi.ph = nty_max * 4 + 2;
    wi.pw = wi.tiles_x * 4 + 2;
    wi.mk = sdx__micro_kernels_select();
    /* U: f32 A panels of MR rows, or (AMX) hi + lo bf16 tiles of 32 rows */
    ob = amx ? SDX__WAOB : SDX__WOB;
    orow = amx ? 32 : SDX__MR;
    scratch = amx ? sdx__wino_amx_scratch_bytes(wi.cp, wi.tb, wi.ph, wi.pw)
                  : sdx__wino_scratch_floats(wi.C, wi.tb, wi.ph, wi.pw) * sizeof(float);
    /* and the filter transforms' widened filters: all of one (AMX), or MR of WCB channels */
    scratch = SDX__MAX(scratch, (size_t)(amx ? wi.C * 9 : SDX__MR * sdx__wino_wcb(w->dtype) * 9) * sizeof(float)) + 256;
    if ((rc = sdx__scratch_reserve(ctx, scratch)) != SDX_OK) return rc;
#ifdef SDX__X86
    wi.vec16 = !sdx__cpu(ctx)->pack_scalar && sdx__have_avx512f();
#endif
    per_o = 36 * (amx ? wi.cp : wi.C) * (int64_t)sizeof(float);
    chunk = SDX__MAX(ob, (int64_t)(sdx__cpu(ctx)->op_weight_chunk / (size_t)per_o) / ob * ob);
    chunk = SDX__MIN(chunk, (O + orow - 1) / orow * orow);
    if (!(wi.u = (float *)sdx__op_weight_buffer(ctx, (size_t)(chunk * per_o), "winograd filters"))) return SDX_ERR_NOMEM;
    /* split the outputs into groups when there are too few tile blocks to
     * keep every thread busy (each group transforms the input again) */
    jobs_per_group = y->shape[0] * wi.tblocks;
    for (wi.o0 = 0; wi.o0 < O; wi.o0 += chunk) {
        int64_t groups, onp;
        wi.on = SDX__MIN(chunk, O - wi.o0);
        onp = (wi.on + orow - 1) / orow * orow;
#ifdef SDX__AMX
        if (amx) {
            sdx__wino_amx_ft ft;
            wi.uh = (const uint16_t *)wi.u;
            wi.ulo = 36 * onp * wi.cp;
            ft.w = w; ft.uh = (uint16_t *)wi.u; ft.ulo = wi.ulo; ft.C = wi.C; ft.cp = wi.cp;
            ft.o0 = wi.o0; ft.on = wi.on; ft.onp = onp; ft.ctx = ctx;
            sdx__parallel_for(ctx, onp, sdx__wino_amx_filter_range, &ft);
            job_range = sdx__wino_amx_range;
        } else
#endif
        {
            sdx__wino_ft ft;
            ft.w = w; ft.u = (float *)wi.u; ft.C = wi.C; ft.o0 = wi.o0; ft.on = wi.on; ft.ctx = ctx;
            sdx__parallel_for(ctx, onp / SDX__MR, sdx__wino_filter_range, &ft);
        }
        groups = SDX__MIN((wi.on + ob - 1) / ob, (2 * (int64_t)sdx_threads(ctx) + jobs_per_group - 1) / jobs_per_group);
        groups = SDX__MAX((int64_t)1, groups);
        wi.og = ((wi.on + groups - 1) / groups + ob - 1) / ob * ob;
        wi.ogroups = (wi.on + wi.og - 1) / wi.og;
        sdx__parallel_for(ctx, jobs_per_group * wi.ogroups, job_range, &wi);
    }
    return SDX_OK;
}

/* Whether Winograd pays for this convolution (measured: see bench). */
static int sdx__wino_pays(sdx_ctx *ctx, sdx_dtype compute, const sdx_tensor *x, const sdx_tensor *w, int stride,
                          int64_t ho, int64_t wo) {
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
    (void)ctx; (void)compute; (void)x; (void)w; (void)stride; (void)ho; (void)wo;
    return 0;   /* the half-accumulation emulation models direct convolution */
#else
    const int64_t c = x->shape[1], o = w->shape[0], pixels = ho * wo;
    if (w->shape[2] != 3 || w->shape[3] != 3 || stride != 1) return 0;
    if (sdx__amx_computes(ctx, compute))     /* the filter transform needs ~200 tiles to pay */
        return c >= SDX__WINO_MIN_C && o >= SDX__WINO_MIN_C && x->shape[0] * ((ho + 3) / 4) * ((wo + 3) / 4) >= SDX__WA_MIN_TILES;
    return (c >= SDX__WINO_MIN_C && o >= SDX__WINO_MIN_C && pixels >= SDX__WINO_MIN_PIXELS) ||
           (c >= SDX__WINO_WIDE_C && o >= SDX__WINO_WIDE_C && pixels >= SDX__WINO_WIDE_PIXELS);
#endif
}

/* ---- conv2d ------------------------------------------------------------ */

static int sdx__cpu_conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           int stride, int pad_top, int pad_left, int pad_bottom, int pad_right, sdx_dtype compute) {
    static const char op[] = "conv2d";
    int64_t ho = y->shape[2], wo = y->shape[3];
    int rc;
    (void)pad_bottom; (void)pad_right;   /* y's shape says them (checked in ops.c) */
    if (sdx__wino_pays(ctx, compute, x, w, stride, ho, wo))
        rc = sdx__conv2d_winograd(ctx, y, x, w, b, pad_top, pad_left, compute);
    else rc = sdx__conv2d_direct(ctx, y, x, w, b, stride, pad_top, pad_left, compute);
    if (rc != SDX_OK) return rc;
    return sdx__trace_check(ctx, op, y);
}
