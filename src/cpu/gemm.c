#pragma once
#include "cpu.c"

/* ===================================================================== */
/*  GEMM: C[M,N] = A[M,K] B[K,N], f32 accumulation                         */
/* ===================================================================== */
/* Jobs are blocks of C of up to MJ x NJ, each computed over all of K in
 * KC steps: pack the job's MJ x KC block of A into MR-row strips once,
 * then, NB columns at a time, a KC x NB block of B into NR-column strips
 * (widening to f32 on the way), and run the MR x NR register-blocked
 * micro-kernel over the strips, accumulating in an f32 tile that is
 * narrowed to y's dtype once at the end. Each packed value then serves
 * NJ (A) or MJ (B) columns or rows of multiply-adds, so packing stays a
 * small part of the work. A comes from a row-major matrix (activations of
 * linear, weights of conv); B from a row-major [N,K] matrix read
 * transposed (linear weights) or from an implicit im2col of the conv
 * input, whose images are side by side as columns: a conv's weights are
 * packed once for both images of a CFG batch. KC sets where the f32 sums
 * are split, so it is what fixes the result's bits; MJ, NJ, NB and the
 * packing do not change them. */

#define SDX__MR 12      /* the AVX-512 kernel's 12 accumulators; AVX2 and NEON run 6 rows twice */
#define SDX__NR 16
#define SDX__KC 256
#define SDX__MB 144     /* bf16 jobs' rows (multiple of MR) */
#define SDX__NB 128     /* B columns packed at once; bf16 jobs' columns (multiple of NR) */
#define SDX__MJ 288     /* f32 jobs: most rows of C (multiple of MR)    */
#define SDX__NJ 512     /* f32 jobs: most columns of C (multiple of NB) */
#define SDX__LDT (SDX__NJ + 16)   /* f32 job tile's row stride: rows not 4 KB apart */

typedef void (*sdx__micro_fn)(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate);
/* Two B strips at once (b0, b1): an MR x 2NR tile, b1's columns at c + NR.
 * Each output is the same chain of FMAs as in sdx__micro_fn, so the same
 * bits; one broadcast of A serves two products, where the one-strip
 * kernel needs as many loads as FMAs. NULL where there is none. */
typedef void (*sdx__micro2_fn)(int kc, const float *a, const float *b0, const float *b1, float *c, int64_t ldc,
                               int accumulate);

/* The micro-kernels this CPU runs: one B strip, and two (or NULL). */
typedef struct { sdx__micro_fn one; sdx__micro2_fn two; } sdx__micro_kernels;

/* Multiplies an A strip by B strip b and, with `two` (only where mk->two
 * exists), also by the strip b + bstride, whose outputs go NR columns to
 * the right. */
static void sdx__micro_strips(const sdx__micro_kernels *mk, int two, int kc, const float *a, const float *b,
                              int64_t bstride, float *c, int64_t ldc, int accumulate) {
    if (two) mk->two(kc, a, b, b + bstride, c, ldc, accumulate);
    else mk->one(kc, a, b, c, ldc, accumulate);
}

/* Portable micro-kernel: fixed-size loops gcc and clang vectorise. */
static void sdx__micro_c(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    float acc[SDX__MR][SDX__NR];
    memset(acc, 0, sizeof acc);
    for (int k = 0; k < kc; k++, a += SDX__MR, b += SDX__NR)
        for (int r = 0; r < SDX__MR; r++)
            for (int j = 0; j < SDX__NR; j++) acc[r][j] += a[r] * b[j];
    for (int r = 0; r < SDX__MR; r++)
        for (int j = 0; j < SDX__NR; j++) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

#ifdef SDX_UNSAFE_HALF_ACCUMULATE
/* Half-precision accumulation: the running sum is rounded to f16 after
 * every multiply-add, as a naive f16 dot product would. */
static void sdx__micro_half(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    for (int r = 0; r < SDX__MR; r++)
        for (int j = 0; j < SDX__NR; j++) {
            float s = accumulate ? c[r * ldc + j] : 0.0f;
            for (int k = 0; k < kc; k++)
                s = sdx__round_f16(s + sdx__round_f16(a[k * SDX__MR + r] * b[k * SDX__NR + j]));
            c[r * ldc + j] = s;
        }
}
#endif

#ifdef SDX__X86
/* AVX-512 micro-kernel: 12 accumulators of 16 lanes hold the 12x16 tile;
 * each output is the same chain of fused multiply-adds as in the AVX2
 * kernel, so the two give the same bits. */
__attribute__((target("avx512f")))
static void sdx__micro_avx512(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps(), c3 = _mm512_setzero_ps();
    __m512 c4 = _mm512_setzero_ps(), c5 = _mm512_setzero_ps(), c6 = _mm512_setzero_ps(), c7 = _mm512_setzero_ps();
    __m512 c8 = _mm512_setzero_ps(), c9 = _mm512_setzero_ps(), c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
    for (int k = 0; k < kc; k++, a += SDX__MR, b += SDX__NR) {
        const __m512 bv = _mm512_loadu_ps(b);
        c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), bv, c0);    c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), bv, c1);
        c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), bv, c2);    c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), bv, c3);
        c4 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), bv, c4);    c5 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), bv, c5);
        c6 = _mm512_fmadd_ps(_mm512_set1_ps(a[6]), bv, c6);    c7 = _mm512_fmadd_ps(_mm512_set1_ps(a[7]), bv, c7);
        c8 = _mm512_fmadd_ps(_mm512_set1_ps(a[8]), bv, c8);    c9 = _mm512_fmadd_ps(_mm512_set1_ps(a[9]), bv, c9);
        c10 = _mm512_fmadd_ps(_mm512_set1_ps(a[10]), bv, c10); c11 = _mm512_fmadd_ps(_mm512_set1_ps(a[11]), bv, c11);
    }
#define SDX__STORE_ROW(r, v) do { \
        float *row = c + (r) * ldc; \
        _mm512_storeu_ps(row, accumulate ? _mm512_add_ps(v, _mm512_loadu_ps(row)) : v); } while (0)
    SDX__STORE_ROW(0, c0); SDX__STORE_ROW(1, c1); SDX__STORE_ROW(2, c2);   SDX__STORE_ROW(3, c3);
    SDX__STORE_ROW(4, c4); SDX__STORE_ROW(5, c5); SDX__STORE_ROW(6, c6);   SDX__STORE_ROW(7, c7);
    SDX__STORE_ROW(8, c8); SDX__STORE_ROW(9, c9); SDX__STORE_ROW(10, c10); SDX__STORE_ROW(11, c11);
#undef SDX__STORE_ROW
}

/* The 12 x 32 tile of two B strips in 24 accumulators: per k two loads of
 * B and 12 broadcasts for 24 FMAs (the 12 x 16 kernel's 13 loads for 12
 * FMAs leave a core with two FMA units waiting on loads: 1.12-1.15x in a
 * micro-benchmark, same bits). */
__attribute__((target("avx512f")))
static void sdx__micro2_avx512(int kc, const float *a, const float *b0, const float *b1, float *c, int64_t ldc,
                               int accumulate) {
    __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps(), c3 = _mm512_setzero_ps();
    __m512 c4 = _mm512_setzero_ps(), c5 = _mm512_setzero_ps(), c6 = _mm512_setzero_ps(), c7 = _mm512_setzero_ps();
    __m512 c8 = _mm512_setzero_ps(), c9 = _mm512_setzero_ps(), c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
    __m512 d0 = _mm512_setzero_ps(), d1 = _mm512_setzero_ps(), d2 = _mm512_setzero_ps(), d3 = _mm512_setzero_ps();
    __m512 d4 = _mm512_setzero_ps(), d5 = _mm512_setzero_ps(), d6 = _mm512_setzero_ps(), d7 = _mm512_setzero_ps();
    __m512 d8 = _mm512_setzero_ps(), d9 = _mm512_setzero_ps(), d10 = _mm512_setzero_ps(), d11 = _mm512_setzero_ps();
    for (int k = 0; k < kc; k++, a += SDX__MR, b0 += SDX__NR, b1 += SDX__NR) {
        const __m512 bv = _mm512_loadu_ps(b0), bw = _mm512_loadu_ps(b1);
        __m512 av;
#define SDX__FMA2(r) av = _mm512_set1_ps(a[r]); c##r = _mm512_fmadd_ps(av, bv, c##r); d##r = _mm512_fmadd_ps(av, bw, d##r);
        SDX__FMA2(0) SDX__FMA2(1) SDX__FMA2(2) SDX__FMA2(3) SDX__FMA2(4)  SDX__FMA2(5)
        SDX__FMA2(6) SDX__FMA2(7) SDX__FMA2(8) SDX__FMA2(9) SDX__FMA2(10) SDX__FMA2(11)
#undef SDX__FMA2
    }
#define SDX__STORE_ROW(r, v, w) do { \
        float *row = c + (r) * ldc; \
        _mm512_storeu_ps(row, accumulate ? _mm512_add_ps(v, _mm512_loadu_ps(row)) : v); \
        _mm512_storeu_ps(row + SDX__NR, accumulate ? _mm512_add_ps(w, _mm512_loadu_ps(row + SDX__NR)) : w); } while (0)
    SDX__STORE_ROW(0, c0, d0); SDX__STORE_ROW(1, c1, d1); SDX__STORE_ROW(2, c2, d2);    SDX__STORE_ROW(3, c3, d3);
    SDX__STORE_ROW(4, c4, d4); SDX__STORE_ROW(5, c5, d5); SDX__STORE_ROW(6, c6, d6);    SDX__STORE_ROW(7, c7, d7);
    SDX__STORE_ROW(8, c8, d8); SDX__STORE_ROW(9, c9, d9); SDX__STORE_ROW(10, c10, d10); SDX__STORE_ROW(11, c11, d11);
#undef SDX__STORE_ROW
}

/* AVX2/FMA: 12 accumulators of 8 lanes hold 6 rows of the tile, run
 * for each half of the strip. */
__attribute__((target("avx2,fma")))
static void sdx__micro_avx2_6(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int k = 0; k < kc; k++, a += SDX__MR, b += SDX__NR) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), av;
        av = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51);
    }
#define SDX__STORE_ROW(r, lo, hi) do { \
        float *row = c + (r) * ldc; \
        if (accumulate) { lo = _mm256_add_ps(lo, _mm256_loadu_ps(row)); hi = _mm256_add_ps(hi, _mm256_loadu_ps(row + 8)); } \
        _mm256_storeu_ps(row, lo); _mm256_storeu_ps(row + 8, hi); } while (0)
    SDX__STORE_ROW(0, c00, c01); SDX__STORE_ROW(1, c10, c11); SDX__STORE_ROW(2, c20, c21);
    SDX__STORE_ROW(3, c30, c31); SDX__STORE_ROW(4, c40, c41); SDX__STORE_ROW(5, c50, c51);
#undef SDX__STORE_ROW
}

static void sdx__micro_avx2(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    sdx__micro_avx2_6(kc, a, b, c, ldc, accumulate);
    sdx__micro_avx2_6(kc, a + 6, b, c + 6 * ldc, ldc, accumulate);
}
#endif

#ifdef SDX__NEON
/* NEON micro-kernel: 24 accumulators of 4 lanes hold 6 rows of the tile,
 * run for each half of the strip; one fused multiply-add by lane of the 6
 * A values per k. */
static void sdx__micro_neon_6(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    float32x4_t acc[6][4];
    for (int r = 0; r < 6; r++)
        for (int j = 0; j < 4; j++) acc[r][j] = vdupq_n_f32(0.0f);
    for (int k = 0; k < kc; k++, a += SDX__MR, b += SDX__NR) {
        float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
        float32x4_t a03 = vld1q_f32(a);
        float32x2_t a45 = vld1_f32(a + 4);
#define SDX__FMA_ROW(r, fma, av, lane) do { \
        acc[r][0] = fma(acc[r][0], b0, av, lane); acc[r][1] = fma(acc[r][1], b1, av, lane); \
        acc[r][2] = fma(acc[r][2], b2, av, lane); acc[r][3] = fma(acc[r][3], b3, av, lane); } while (0)
        SDX__FMA_ROW(0, vfmaq_laneq_f32, a03, 0); SDX__FMA_ROW(1, vfmaq_laneq_f32, a03, 1);
        SDX__FMA_ROW(2, vfmaq_laneq_f32, a03, 2); SDX__FMA_ROW(3, vfmaq_laneq_f32, a03, 3);
        SDX__FMA_ROW(4, vfmaq_lane_f32, a45, 0);  SDX__FMA_ROW(5, vfmaq_lane_f32, a45, 1);
#undef SDX__FMA_ROW
    }
    for (int r = 0; r < 6; r++) {
        float *row = c + r * ldc;
        for (int j = 0; j < 4; j++) {
            float32x4_t v = acc[r][j];
            if (accumulate) v = vaddq_f32(v, vld1q_f32(row + 4 * j));
            vst1q_f32(row + 4 * j, v);
        }
    }
}

static void sdx__micro_neon(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    sdx__micro_neon_6(kc, a, b, c, ldc, accumulate);
    sdx__micro_neon_6(kc, a + 6, b, c + 6 * ldc, ldc, accumulate);
}
#endif

static sdx__micro_fn sdx__micro_select(void) {
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
    return sdx__micro_half;
#else
#if defined(SDX__X86)
    if (sdx__have_avx512f()) return sdx__micro_avx512;
    if (sdx__have_avx2()) return sdx__micro_avx2;
#elif defined(SDX__NEON)
    return sdx__micro_neon;
#endif
    return sdx__micro_c;
#endif
}

/* sdx__micro_select's kernel and the two-strip kernel that goes with it. */
static sdx__micro_kernels sdx__micro_kernels_select(void) {
    sdx__micro_kernels mk;
    mk.one = sdx__micro_select();
    mk.two = NULL;
#if defined(SDX__X86) && !defined(SDX_UNSAFE_HALF_ACCUMULATE)
    if (sdx__have_avx512f()) mk.two = sdx__micro2_avx512;
#endif
    return mk;
}

/* Where the B operand comes from. */
enum { SDX__B_ROWS_T, SDX__B_IM2COL };

typedef struct sdx__gemm {
    int64_t M, N, K;
    int64_t batch;              /* independent problems (conv: images)     */
    /* A: row-major [M, K] of a_dtype, batch stride a_bstride (0 = shared) */
    const void *a; sdx_dtype a_dtype; int64_t a_bstride;
    /* B */
    int b_kind;
    const void *b; sdx_dtype b_dtype; int64_t b_bstride;
    /* im2col geometry (b is x[C,H,W] of one image) */
    int64_t C, H, W, Wo;
    int kh, kw, stride, pad_top, pad_left;
    /* C: row-major [M, N] of y_dtype per batch; bias per column or row */
    void *y; sdx_dtype y_dtype; int64_t y_bstride;
    const sdx_tensor *bias; int bias_per_row;
    /* added to C before it is stored (y's layout and size; may be y itself), or NULL */
    const void *res; sdx_dtype res_dtype;
    /* the weight operand (A for conv, B for linear): cached bf16 panels */
    const sdx_tensor *weight; int weight_is_a;
    sdx_dtype compute;            /* the arithmetic asked for: SDX_F32 or SDX_BF16 */
    int64_t m_tiles, n_tiles;
    int64_t mb, nb;             /* f32 and AMX jobs: rows and columns of C per job */
    int64_t cols;               /* f32 jobs: columns of C, the images' side by side */
    int packer;                 /* f32 jobs: the SIMD packers, sdx__row_packer's 16 (AVX-512) or 8 (AVX2), or 0 */
    sdx__micro_kernels mk;
    sdx_ctx *ctx;
    const uint32_t *panel;      /* bf16 mode: the weight's panel (cached, or a chunk's), or NULL */
    int64_t w_first;            /* bf16 mode: the first weight row of the jobs run now (and of the panel) */
    int64_t panel_rows;         /* bf16 mode: weight rows the panel holds from w_first on */
    int split;                  /* bf16 mode: the other operand as hi + lo parts */
} sdx__gemm;

/* Bytes of per-thread scratch an f32 GEMM job needs. */
static size_t sdx__gemm_scratch_bytes(void) {
    size_t floats = (size_t)SDX__MJ * SDX__KC          /* packed A */
                  + (size_t)SDX__KC * SDX__NB          /* packed B */
                  + (size_t)SDX__MJ * SDX__LDT         /* f32 C tile */
                  + (size_t)SDX__NJ + 64               /* one widened row (>= KC, NJ) */
                  + (size_t)SDX__NJ                    /* bias */
                  + (size_t)SDX__NR * SDX__KC;         /* one dequantized strip of B */
    return floats * sizeof(float) + 256;
}

/* Packs `rows` rows (row0.., valid ones < nvalid, others zero) of a
 * row-major matrix into strips of `width` rows: dst[s][kk][r]. */
static void sdx__pack_rows(float *dst, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                           int rows, int nvalid, int width, int64_t k0, int kc, float *tmp) {
    for (int s = 0; s < rows; s += width) {
        float *strip = dst + (int64_t)s * kc;
        for (int r = 0; r < width; r++) {
            int i = s + r;
            if (i < nvalid) {
                const float *v;
                if (dtype == SDX_F32) v = (const float *)src + (row0 + i) * ld + k0;
                else { sdx__load_f32(src, dtype, (row0 + i) * ld + k0, kc, tmp); v = tmp; }
                for (int kk = 0; kk < kc; kk++) strip[kk * width + r] = v[kk];
            } else {
                for (int kk = 0; kk < kc; kk++) strip[kk * width + r] = 0.0f;
            }
        }
    }
}

/* Packs B[k][p] = x[n][c][oy*s - pt + ky][ox*s - pl + kx] for k in
 * [k0, k0+kc) (k = (c*kh + ky)*kw + kx) and columns p in [p0, p0+nvalid)
 * (p = n*N + oy*Wo + ox: images side by side), zero elsewhere, into
 * NR-column strips: dst[p/NR][kk][p%NR]. Strip by strip: when the NR
 * pixels of a strip lie in one output row (the common case) and the
 * stride is 1, each k reads NR contiguous input values. */
static void sdx__pack_im2col(const sdx__gemm *g, float *dst, const void *x, int64_t p0, int nvalid,
                             int cols, int64_t k0, int kc, float *tmp) {
    const int64_t khw = (int64_t)g->kh * g->kw, hw = g->H * g->W;
    for (int s = 0; s < cols; s += SDX__NR) {
        float *strip = dst + (int64_t)s * kc;
        int64_t by[SDX__NR], bx[SDX__NR], img[SDX__NR];  /* lane's input row/col for ky = kx = 0, image offset */
        int nl = SDX__MIN(SDX__NR, nvalid - s), one_row;
        int64_t c = k0 / khw, r = k0 % khw;
        int ky = (int)(r / g->kw), kx = (int)(r % g->kw);
        if (nl <= 0) { memset(strip, 0, (size_t)kc * SDX__NR * sizeof(float)); continue; }
        for (int l = 0; l < nl; l++) {
            int64_t p = p0 + s + l, pix = p % g->N;
            img[l] = p / g->N * g->b_bstride;
            by[l] = (pix / g->Wo) * g->stride - g->pad_top;
            bx[l] = (pix % g->Wo) * g->stride - g->pad_left;
        }
        /* (rows of the output never straddle images: N = Ho * Wo) */
        one_row = nl == SDX__NR && g->stride == 1 && (p0 + s) / g->Wo == (p0 + s + SDX__NR - 1) / g->Wo;
        for (int kk = 0; kk < kc; kk++) {
            float *out = strip + kk * SDX__NR;
            const int64_t plane = c * hw;
            int64_t iy = by[0] + ky, ix = bx[0] + kx;
            if (one_row && iy >= 0 && iy < g->H && ix >= 0 && ix + SDX__NR <= g->W) {
                int64_t at = img[0] + plane + iy * g->W + ix;
                if (g->b_dtype == SDX_F32) memcpy(out, (const float *)x + at, SDX__NR * sizeof(float));
                else sdx__load_f32(x, g->b_dtype, at, SDX__NR, out);
            } else {
                for (int l = 0; l < SDX__NR; l++) {
                    int64_t yy = l < nl ? by[l] + ky : -1, xx = l < nl ? bx[l] + kx : -1;
                    int64_t at = l < nl ? img[l] + plane + yy * g->W + xx : 0;
                    int ok = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W;
                    out[l] = ok ? ((g->b_dtype == SDX_F32) ? ((const float *)x)[at]
                                                           : (sdx__load_f32(x, g->b_dtype, at, 1, tmp), tmp[0]))
                                : 0.0f;
                }
            }
            if (++kx == g->kw) { kx = 0; if (++ky == g->kh) { ky = 0; c++; } }
        }
    }
}

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF
/* ---- AVX-512 packing: 16 x 16 transposes, masked and gathered loads ---- */

/* v[j] <- lane j of every v[i]: the 16 x 16 transpose in 64 shuffles. */
__attribute__((target("avx512f"), always_inline))
static inline void sdx__transpose16(__m512 *v) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {           /* pairs of rows, interleaved */
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {           /* 4 rows' values of one column per 128 bits */
        u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
        u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (int q = 0; q < 4; q++) {               /* column 4j + q: 128-bit lane j of u[q], u[4+q], u[8+q], u[12+q] */
        __m512 even_lo = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x88), odd_lo = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xdd);
        __m512 even_hi = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x88), odd_hi = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xdd);
        v[q] = _mm512_shuffle_f32x4(even_lo, even_hi, 0x88);
        v[4 + q] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0x88);
        v[8 + q] = _mm512_shuffle_f32x4(even_lo, even_hi, 0xdd);
        v[12 + q] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0xdd);
    }
}

/* The lanes of m of src[at..], widened to f32; the other lanes zero. */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline))
static inline __m512 sdx__load16_f32(const void *src, sdx_dtype dtype, int64_t at, __mmask16 m) {
    __m256i h;
    if (dtype == SDX_F32) return _mm512_maskz_loadu_ps(m, (const float *)src + at);
    h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)src + at);
    if (dtype == SDX_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Q8_0 and Q4_0 read in place: the 16 values of half a block from value
 * `at` (a multiple of 16) on, as sdx__deq_q8_0 / sdx__deq_q4_0 compute
 * them: the integer, widened exactly, times the block's scale, one
 * rounding. */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline))
static inline __m512 sdx__load16_blocks(const void *src, sdx_dtype dtype, int64_t at) {
    const unsigned char *b = (const unsigned char *)src + (size_t)(at >> 5) * (dtype == SDX_Q8_0 ? 34 : 18);
    __m512i q;
    if (dtype == SDX_Q8_0) {
        q = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 2 + (at & 16))));
    } else {       /* low nibbles are values 0..15, high nibbles 16..31; q - 8 */
        q = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(b + 2)));
        q = at & 16 ? _mm512_srli_epi32(q, 4) : _mm512_and_si512(q, _mm512_set1_epi32(15));
        q = _mm512_sub_epi32(q, _mm512_set1_epi32(8));
    }
    return _mm512_mul_ps(_mm512_cvtepi32_ps(q), _mm512_set1_ps(sdx__q_half(b)));
}

/* The block types sdx__load16_blocks reads. */
static int sdx__blocks16(sdx_dtype dtype) { return dtype == SDX_Q8_0 || dtype == SDX_Q4_0; }

/* sdx__pack_rows, 16 rows and 16 k at a time (width 12 or 16); also a
 * Q8_0 or Q4_0 matrix (sdx__blocks16: k0 and kc whole blocks). */
#define SDX__PACK_AHEAD 64
__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sdx__pack_rows_avx512(float *dst, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                                  int rows, int nvalid, int width, int64_t k0, int kc) {
    const __mmask16 row_lanes = sdx__lanes16(width);
    const int blocks = sdx__blocks16(dtype);
    size_t unit;      /* bytes per element, or per block of 32 */
    const int shift = sdx_dtype_block(dtype, &unit) > 1 ? 5 : 0;
    for (int s = 0; s < rows; s += width) {
        float *strip = dst + (int64_t)s * kc;
        int live = SDX__MIN(width, nvalid - s);
        for (int kk = 0; kk < kc; kk += 16) {
            const __mmask16 k_lanes = sdx__lanes16(kc - kk);
            __m512 v[16];
            for (int r = 0; r < 16; r++) {
                int64_t at = (row0 + s + r) * ld + k0 + kk;
                if (r >= live) { v[r] = _mm512_setzero_ps(); continue; }
                /* rows are far apart (the hardware prefetchers lose them): ask a few lines ahead */
                if (kk + SDX__PACK_AHEAD < kc)
                    _mm_prefetch((const char *)src + (size_t)((at + SDX__PACK_AHEAD) >> shift) * unit, _MM_HINT_T0);
                v[r] = blocks ? sdx__load16_blocks(src, dtype, at) : sdx__load16_f32(src, dtype, at, k_lanes);
            }
            sdx__transpose16(v);
            for (int j = 0; j < SDX__MIN(16, kc - kk); j++)
                _mm512_mask_storeu_ps(strip + (int64_t)(kk + j) * width, row_lanes, v[j]);
        }
    }
}

/* sdx__pack_im2col for an f32 input: a strip in one output row reads
 * each k's 16 inputs with one load (masked at the picture's left and
 * right edges), any other strip gathers them. */
__attribute__((target("avx512f")))
static void sdx__pack_im2col_avx512(const sdx__gemm *g, float *dst, const float *x, int64_t p0, int nvalid,
                                    int cols, int64_t k0, int kc) {
    const int64_t khw = (int64_t)g->kh * g->kw, hw = g->H * g->W;
    for (int s = 0; s < cols; s += SDX__NR) {
        float *out = dst + (int64_t)s * kc;
        int nl = SDX__MIN(SDX__NR, nvalid - s);
        int64_t p = p0 + s, pix = p % g->N, oy = pix / g->Wo, ox = pix % g->Wo;
        int64_t c = k0 / khw, r = k0 % khw;
        int ky = (int)(r / g->kw), kx = (int)(r % g->kw);
        const float *img = x + p / g->N * g->b_bstride;
        if (nl <= 0) { memset(out, 0, (size_t)kc * SDX__NR * sizeof(float)); continue; }
        if ((p + nl - 1) / g->N != p / g->N || hw > INT32_MAX / 2) {   /* two images, or offsets past int32 */
            sdx__pack_im2col(g, out, x, p, nl, SDX__NR, k0, kc, NULL);
            continue;
        }
        if (nl == SDX__NR && g->stride == 1 && ox + SDX__NR <= g->Wo) {
            const int64_t y0 = oy - g->pad_top, x0 = ox - g->pad_left;
            for (int kk = 0; kk < kc; kk++, out += SDX__NR) {
                int64_t iy = y0 + ky, ix = x0 + kx;
                __m512 v = _mm512_setzero_ps();
                if (iy >= 0 && iy < g->H) {
                    const float *row = img + c * hw + iy * g->W;
                    if (ix >= 0 && ix + SDX__NR <= g->W) v = _mm512_loadu_ps(row + ix);
                    else {   /* lanes [l0, l1) are inside the picture */
                        int l0 = (int)SDX__MAX((int64_t)0, -ix), l1 = (int)SDX__MIN((int64_t)SDX__NR, g->W - ix);
                        if (l1 > l0) v = _mm512_maskz_expandloadu_ps((__mmask16)(sdx__lanes16(l1) & ~sdx__lanes16(l0)), row + ix + l0);
                    }
                }
                _mm512_storeu_ps(out, v);
                if (++kx == g->kw) { kx = 0; if (++ky == g->kh) { ky = 0; c++; } }
            }
        } else {
            int32_t ys[SDX__NR], xs[SDX__NR];
            __m512i vy, vx;
            const __m512i h = _mm512_set1_epi32((int)g->H), w = _mm512_set1_epi32((int)g->W);
            const __mmask16 live = sdx__lanes16(nl);
            for (int l = 0; l < SDX__NR; l++) {
                int64_t q = pix + l;
                ys[l] = (int32_t)((q / g->Wo) * g->stride - g->pad_top);
                xs[l] = (int32_t)((q % g->Wo) * g->stride - g->pad_left);
            }
            vy = _mm512_loadu_si512(ys);
            vx = _mm512_loadu_si512(xs);
            for (int kk = 0; kk < kc; kk++, out += SDX__NR) {
                __m512i yy = _mm512_add_epi32(vy, _mm512_set1_epi32(ky)), xx = _mm512_add_epi32(vx, _mm512_set1_epi32(kx));
                /* unsigned compares: negative rows and columns are out too */
                __mmask16 in = live & _mm512_cmplt_epu32_mask(yy, h) & _mm512_cmplt_epu32_mask(xx, w);
                __m512i at = _mm512_add_epi32(_mm512_mullo_epi32(yy, w), xx);
                _mm512_storeu_ps(out, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in, at, img + c * hw, 4));
                if (++kx == g->kw) { kx = 0; if (++ky == g->kh) { ky = 0; c++; } }
            }
        }
    }
}
SDX__INTRINSICS_WARNINGS_ON
#endif

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF
/* ---- AVX2 packing: 8 x 8 transposes, for CPUs without AVX-512 ---- */

/* v[j] <- lane j of every v[i]. */
__attribute__((target("avx2"), always_inline))
static inline void sdx__transpose8(__m256 *v) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {            /* pairs of rows, interleaved */
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {            /* 4 rows' values of one column per 128 bits */
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (int q = 0; q < 4; q++) {               /* column q: the low halves; column 4 + q: the high ones */
        v[q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x20);
        v[4 + q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x31);
    }
}

/* The 8 values of src from value `at` on, widened to f32 as
 * sdx__load_f32 and sdx__dequant do (F16C's conversion is exact and
 * quiets NaNs like sdx_f16_to_f32). Q8_0 and Q4_0 are read in place
 * (`at` a multiple of 8) as sdx__deq_q8_0 / sdx__deq_q4_0 compute them:
 * the integer, widened exactly, times the block's scale, one rounding. */
__attribute__((target("avx2,f16c"), always_inline))
static inline __m256 sdx__load8(const void *src, sdx_dtype dtype, int64_t at) {
    const unsigned char *b;
    __m256i q;
    int o;
    if (dtype == SDX_F32) return _mm256_loadu_ps((const float *)src + at);
    if (dtype == SDX_F16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)src + at)));
    if (dtype == SDX_BF16) {
        q = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)src + at)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(q, 16));
    }
    b = (const unsigned char *)src + (size_t)(at >> 5) * (dtype == SDX_Q8_0 ? 34 : 18);
    o = (int)(at & 31);
    if (dtype == SDX_Q8_0) {
        q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 2 + o)));
    } else {       /* values 0..15 are the low nibbles of the 16 bytes, 16..31 the high ones; q - 8 */
        q = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b + 2 + (o & 15))));
        q = o & 16 ? _mm256_srli_epi32(q, 4) : _mm256_and_si256(q, _mm256_set1_epi32(15));
        q = _mm256_sub_epi32(q, _mm256_set1_epi32(8));
    }
    return _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(sdx__q_half(b)));
}

/* The element types and the block types sdx__load8 reads. */
static int sdx__loads8(sdx_dtype dtype) {
    return dtype == SDX_F32 || dtype == SDX_F16 || dtype == SDX_BF16 || dtype == SDX_Q8_0 || dtype == SDX_Q4_0;
}

/* sdx__pack_rows for a dtype sdx__loads8 reads (a block type: k0 and kc
 * whole blocks), 8 rows and 8 k at a time; width 12 (A) or 16 (B), so a
 * strip is one or two groups of 8 rows, the last of 4 or 8 lanes. A kc
 * that is not a multiple of 8 ends element by element. */
__attribute__((target("avx2,f16c")))
static void sdx__pack_rows_avx2(float *dst, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                                int rows, int nvalid, int width, int64_t k0, int kc) {
    size_t unit;      /* bytes per element, or per block of 32 */
    const int shift = sdx_dtype_block(dtype, &unit) > 1 ? 5 : 0, k8 = kc & ~7;
    SDX_ASSERT(width == SDX__MR || width == SDX__NR);
    for (int s = 0; s < rows; s += width) {
        float *strip = dst + (int64_t)s * kc;
        const int live = SDX__MIN(width, nvalid - s);
        for (int r0 = 0; r0 < width; r0 += 8) {
            const int lanes = SDX__MIN(8, width - r0);
            for (int kk = 0; kk < k8; kk += 8) {
                __m256 v[8];
                for (int r = 0; r < 8; r++) {
                    const int64_t at = (row0 + s + r0 + r) * ld + k0 + kk;
                    if (r0 + r >= live) { v[r] = _mm256_setzero_ps(); continue; }
                    /* rows are far apart (the hardware prefetchers lose them): ask a few lines ahead */
                    if (kk + SDX__PACK_AHEAD < kc)
                        _mm_prefetch((const char *)src + (size_t)((at + SDX__PACK_AHEAD) >> shift) * unit, _MM_HINT_T0);
                    v[r] = sdx__load8(src, dtype, at);
                }
                sdx__transpose8(v);
                for (int j = 0; j < 8; j++) {
                    float *out = strip + (int64_t)(kk + j) * width + r0;
                    if (lanes == 8) _mm256_storeu_ps(out, v[j]);
                    else _mm_storeu_ps(out, _mm256_castps256_ps128(v[j]));
                }
            }
        }
        for (int kk = k8; kk < kc; kk++)
            for (int r = 0; r < width; r++) {
                float value = 0.0f;
                if (r < live) sdx__load_f32(src, dtype, (row0 + s + r) * ld + k0 + kk, 1, &value);
                strip[(int64_t)kk * width + r] = value;
            }
    }
}

/* sdx__pack_im2col for an f32 input: a strip in one output row and
 * inside the picture reads each k's 16 inputs with two loads, any other
 * strip (at an edge, over two output rows, stride 2) gathers them. */
__attribute__((target("avx2")))
static void sdx__pack_im2col_avx2(const sdx__gemm *g, float *dst, const float *x, int64_t p0, int nvalid,
                                  int cols, int64_t k0, int kc) {
    const int64_t khw = (int64_t)g->kh * g->kw, hw = g->H * g->W;
    const __m256i h = _mm256_set1_epi32((int)g->H), w = _mm256_set1_epi32((int)g->W), minus1 = _mm256_set1_epi32(-1);
    for (int s = 0; s < cols; s += SDX__NR) {
        float *out = dst + (int64_t)s * kc;
        int nl = SDX__MIN(SDX__NR, nvalid - s), one_row;
        int64_t p = p0 + s, pix = p % g->N;
        int64_t c = k0 / khw, r = k0 % khw;
        int ky = (int)(r / g->kw), kx = (int)(r % g->kw);
        const float *img = x + p / g->N * g->b_bstride;
        int32_t ys[SDX__NR], xs[SDX__NR];
        __m256i vy[2], vx[2], live[2];
        if (nl <= 0) { memset(out, 0, (size_t)kc * SDX__NR * sizeof(float)); continue; }
        if ((p + nl - 1) / g->N != p / g->N || hw > INT32_MAX / 2) {   /* two images, or offsets past int32 */
            sdx__pack_im2col(g, out, x, p, nl, SDX__NR, k0, kc, NULL);
            continue;
        }
        for (int l = 0; l < SDX__NR; l++) {
            int64_t q = pix + l;
            ys[l] = (int32_t)((q / g->Wo) * g->stride - g->pad_top);
            xs[l] = (int32_t)((q % g->Wo) * g->stride - g->pad_left);
        }
        for (int i = 0; i < 2; i++) {
            vy[i] = _mm256_loadu_si256((const __m256i *)(ys + 8 * i));
            vx[i] = _mm256_loadu_si256((const __m256i *)(xs + 8 * i));
            live[i] = _mm256_cmpgt_epi32(_mm256_set1_epi32(nl - 8 * i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        }
        one_row = nl == SDX__NR && g->stride == 1 && pix % g->Wo + SDX__NR <= g->Wo;
        for (int kk = 0; kk < kc; kk++, out += SDX__NR) {
            const float *plane = img + c * hw;
            const int64_t iy = ys[0] + ky, ix = xs[0] + kx;
            if (one_row && iy >= 0 && iy < g->H && ix >= 0 && ix + SDX__NR <= g->W) {
                const float *row = plane + iy * g->W + ix;
                _mm256_storeu_ps(out, _mm256_loadu_ps(row));
                _mm256_storeu_ps(out + 8, _mm256_loadu_ps(row + 8));
            } else {
                for (int i = 0; i < 2; i++) {
                    __m256i yy = _mm256_add_epi32(vy[i], _mm256_set1_epi32(ky)), xx = _mm256_add_epi32(vx[i], _mm256_set1_epi32(kx));
                    __m256i in = _mm256_and_si256(_mm256_and_si256(_mm256_cmpgt_epi32(h, yy), _mm256_cmpgt_epi32(yy, minus1)),
                                                  _mm256_and_si256(_mm256_cmpgt_epi32(w, xx), _mm256_cmpgt_epi32(xx, minus1)));
                    __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(yy, w), xx);
                    in = _mm256_and_si256(in, live[i]);
                    _mm256_storeu_ps(out + 8 * i, _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane, at, _mm256_castsi256_ps(in), 4));
                }
            }
            if (++kx == g->kw) { kx = 0; if (++ky == g->kh) { ky = 0; c++; } }
        }
    }
}
SDX__INTRINSICS_WARNINGS_ON
#endif

/* The job's A block, rows [m0, m0 + rows) (valid < m0 + nvalid), into MR-row strips. */
static void sdx__pack_a(const sdx__gemm *g, float *dst, int64_t m0, int rows, int nvalid, int64_t k0, int kc, float *tmp) {
#ifdef SDX__X86
    /* a quantized convolution's filter rows: Q8_0 and Q4_0 read in place,
     * other block types dequantized row by row into tmp (kc whole blocks) */
    if (g->packer == 16 && (!sdx__dtype_is_block(g->a_dtype) || sdx__blocks16(g->a_dtype))) { sdx__pack_rows_avx512(dst, g->a, g->a_dtype, g->K, m0, rows, nvalid, SDX__MR, k0, kc); return; }
    if (g->packer == 8 && sdx__loads8(g->a_dtype)) { sdx__pack_rows_avx2(dst, g->a, g->a_dtype, g->K, m0, rows, nvalid, SDX__MR, k0, kc); return; }
#endif
    sdx__pack_rows(dst, g->a, g->a_dtype, g->K, m0, rows, nvalid, SDX__MR, k0, kc, tmp);
}

/* A block-quantized B (linear's weight, rows of whole blocks: KC is a
 * multiple of 256, so every [k0, k0 + kc) is too), NR rows at a time:
 * their kc values dequantized into `stage` (NR x kc), then packed from
 * there as an f32 matrix. The packed values are those of the weight
 * dequantized to f32 beforehand, in the same places, so the products are
 * the f32 GEMM's bit for bit, and nothing larger than a strip is ever
 * dequantized. */
static void sdx__pack_b_blocks(const sdx__gemm *g, float *dst, int64_t n0, int cols, int nvalid, int64_t k0, int kc,
                               float *stage) {
#ifdef SDX__X86
    if (g->packer == 16 && sdx__blocks16(g->b_dtype)) {    /* no staging: read in place */
        sdx__pack_rows_avx512(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc);
        return;
    }
    if (g->packer == 8 && sdx__loads8(g->b_dtype)) {
        sdx__pack_rows_avx2(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc);
        return;
    }
#endif
    for (int s = 0; s < cols; s += SDX__NR) {
        int live = SDX__MIN(SDX__NR, nvalid - s);
        for (int r = 0; r < live; r++) sdx__dequant(g->b, g->b_dtype, (n0 + s + r) * g->K + k0, kc, stage + (int64_t)r * kc);
#ifdef SDX__X86
        if (g->packer == 16) {
            sdx__pack_rows_avx512(dst + (int64_t)s * kc, stage, SDX_F32, kc, 0, SDX__NR, live, SDX__NR, 0, kc);
            continue;
        }
        if (g->packer == 8) {
            sdx__pack_rows_avx2(dst + (int64_t)s * kc, stage, SDX_F32, kc, 0, SDX__NR, live, SDX__NR, 0, kc);
            continue;
        }
#endif
        sdx__pack_rows(dst + (int64_t)s * kc, stage, SDX_F32, kc, 0, SDX__NR, live, SDX__NR, 0, kc, NULL);
    }
}

/* B's columns [n0, n0 + cols) (valid < n0 + nvalid) into NR-column strips. */
static void sdx__pack_b(const sdx__gemm *g, float *dst, int64_t n0, int cols, int nvalid, int64_t k0, int kc, float *tmp,
                        float *stage) {
    if (sdx__dtype_is_block(g->b_dtype)) { sdx__pack_b_blocks(g, dst, n0, cols, nvalid, k0, kc, stage); return; }
#ifdef SDX__X86
    if (g->packer == 16 && g->b_kind == SDX__B_ROWS_T) {
        sdx__pack_rows_avx512(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc);
        return;
    }
    if (g->packer == 16 && g->b_dtype == SDX_F32) {
        sdx__pack_im2col_avx512(g, dst, (const float *)g->b, n0, nvalid, cols, k0, kc);
        return;
    }
    if (g->packer == 8 && g->b_kind == SDX__B_ROWS_T && sdx__loads8(g->b_dtype)) {
        sdx__pack_rows_avx2(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc);
        return;
    }
    if (g->packer == 8 && g->b_kind == SDX__B_IM2COL && g->b_dtype == SDX_F32) {
        sdx__pack_im2col_avx2(g, dst, (const float *)g->b, n0, nvalid, cols, k0, kc);
        return;
    }
#endif
    if (g->b_kind == SDX__B_ROWS_T) sdx__pack_rows(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc, tmp);
    else sdx__pack_im2col(g, dst, g->b, n0, nvalid, cols, k0, kc, tmp);
}

/* Adds the bias and narrows an f32 tile of one image into y. */
/* out[0, nv) += the residual at y's element `at` on (read before y is
 * written: the residual may be y). */
static void sdx__gemm_add_res(const sdx__gemm *g, int64_t at, float *out, int nv) {
    float r[64];
    if (g->res_dtype == SDX_F32) {
        const float *res = (const float *)g->res + at;
        for (int j = 0; j < nv; j++) out[j] += res[j];
        return;
    }
    for (int j0 = 0; j0 < nv; j0 += 64) {
        const int n = SDX__MIN(64, nv - j0);
        sdx__load_f32(g->res, g->res_dtype, at + j0, n, r);
        for (int j = 0; j < n; j++) out[j0 + j] += r[j];
    }
}

static void sdx__gemm_store(const sdx__gemm *g, const float *tile, int ldt, int64_t batch, int64_t m0, int mv,
                            int64_t n0, int nv, float *bias_buf, float *row_buf) {
    int64_t ybase = batch * g->y_bstride;
    /* an f32 y is written in place: one pass less over C (not with a
     * residual, which may be y: it is read before y is written) */
    int direct = g->y_dtype == SDX_F32 && !g->res;
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
    direct = 0;
#endif
    if (g->bias && !g->bias_per_row) sdx__load_f32(g->bias->data, g->bias->dtype, n0, nv, bias_buf);
    for (int i = 0; i < mv; i++) {
        const float *t = tile + (int64_t)i * ldt;
        int64_t at = ybase + (m0 + i) * g->N + n0;
        float *out = direct ? (float *)g->y + at : row_buf;
        if (g->bias && g->bias_per_row) {
            float bv = sdx__get_f32(g->bias, m0 + i);
            for (int j = 0; j < nv; j++) out[j] = t[j] + bv;
        } else if (g->bias) {
            for (int j = 0; j < nv; j++) out[j] = t[j] + bias_buf[j];
        } else {
            memcpy(out, t, (size_t)nv * sizeof(float));
        }
        if (g->res) sdx__gemm_add_res(g, at, out, nv);
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
        for (int j = 0; j < nv; j++) row_buf[j] = sdx__round_f16(row_buf[j]);
#endif
        if (!direct) sdx__store_f32(g->y, g->y_dtype, at, nv, row_buf);
    }
}

static void sdx__gemm_job(const sdx__gemm *g, int64_t job, int thread) {
    float *pa = sdx__scratch_f32(g->ctx, thread);
    float *pb = pa + (size_t)SDX__MJ * SDX__KC;
    float *tile = pb + (size_t)SDX__KC * SDX__NB;
    float *tmp = tile + (size_t)SDX__MJ * SDX__LDT;
    float *bias_buf = tmp + SDX__NJ + 64, *stage = bias_buf + SDX__NJ;
    int64_t m0 = (job / g->n_tiles) * g->mb, n0 = (job % g->n_tiles) * g->nb;
    int mv = (int)SDX__MIN(g->mb, g->M - m0), nv = (int)SDX__MIN(g->nb, g->cols - n0);
    int mp = (mv + SDX__MR - 1) / SDX__MR * SDX__MR;
    for (int64_t k0 = 0; k0 < g->K; k0 += SDX__KC) {
        int kc = (int)SDX__MIN((int64_t)SDX__KC, g->K - k0);
        sdx__pack_a(g, pa, m0, mp, mv, k0, kc, tmp);
        for (int s0 = 0; s0 < nv; s0 += SDX__NB) {
            int sv = SDX__MIN(SDX__NB, nv - s0), sp = (sv + SDX__NR - 1) / SDX__NR * SDX__NR;
            sdx__pack_b(g, pb, n0 + s0, sp, sv, k0, kc, tmp, stage);
            for (int j = 0; j < sp;) {
                const int two = g->mk.two && j + SDX__NR < sp;
                for (int i = 0; i < mp; i += SDX__MR)
                    sdx__micro_strips(&g->mk, two, kc, pa + (int64_t)i * kc, pb + (int64_t)j * kc,
                                      (int64_t)SDX__NR * kc, tile + (int64_t)i * SDX__LDT + s0 + j, SDX__LDT, k0 > 0);
                j += two ? 2 * SDX__NR : SDX__NR;
            }
        }
    }
    if (g->K == 0) memset(tile, 0, (size_t)SDX__MJ * SDX__LDT * sizeof(float));
    for (int s = 0; s < nv;) {   /* the columns of each image */
        int64_t p = n0 + s, pix = p % g->N;
        int len = (int)SDX__MIN((int64_t)(nv - s), g->N - pix);
        sdx__gemm_store(g, tile + s, SDX__LDT, p / g->N, m0, mv, pix, len, bias_buf, tmp);
        s += len;
    }
}

static void sdx__gemm_range(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__gemm_job((const sdx__gemm *)arg, j, thread);
}

/* Splits C into jobs of at most mj x nj (multiples of mr and nr), of
 * even sizes, and into enough of them (a few per thread) that the
 * threads finish together. A job's rows are how often each packed value
 * of B is used, its columns how often each of A, so the larger side is
 * split first. */
static void sdx__gemm_split(sdx__gemm *g, int threads, int64_t mj, int64_t nj, int64_t mr, int64_t nr) {
    int64_t mt = (g->M + mj - 1) / mj, nt = (g->cols + nj - 1) / nj;
    while (mt * nt < 4 * (int64_t)threads) {
        int64_t rows = (g->M + mt - 1) / mt, cols = (g->cols + nt - 1) / nt;
        if (cols >= rows && cols > SDX__NB) nt++;
        else if (rows > 4 * mr) mt++;
        else if (cols > 2 * nr) nt++;
        else break;
    }
    g->mb = ((g->M + mt - 1) / mt + mr - 1) / mr * mr;
    g->nb = ((g->cols + nt - 1) / nt + nr - 1) / nr * nr;
    g->m_tiles = (g->M + g->mb - 1) / g->mb;
    g->n_tiles = (g->cols + g->nb - 1) / g->nb;
}

/* The SIMD packers of rows this CPU runs: 16 (sdx__pack_rows_avx512),
 * 8 (sdx__pack_rows_avx2), or 0, the portable code (also where the
 * tests ask for it: pack_scalar; and 8 where they ask: pack_avx2). */
static int sdx__row_packer(sdx_ctx *ctx) {
#ifdef SDX__X86
    const int avx2 = sdx__have_avx2() && sdx__half_simd_available();
    if (sdx__cpu(ctx)->pack_scalar) return 0;
    if (sdx__cpu(ctx)->pack_avx2 && avx2) return 8;
    if (sdx__have_avx512f() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) return 16;
    if (avx2) return 8;
#endif
    (void)ctx;
    return 0;
}

/* The f32 GEMM (batch > 1 only with an im2col B and one A for all
 * images, as conv2d calls it: the images run as columns side by side).
 * Callers use sdx__gemm_run (gemm_i8.c), which picks the arithmetic. */
static int sdx__gemm_run_f32(sdx_ctx *ctx, sdx__gemm *g) {
    int rc;
    SDX_ASSERT(g->b_kind == SDX__B_IM2COL ? g->a_bstride == 0 : g->batch == 1);
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_scratch_bytes())) != SDX_OK) return rc;
    g->ctx = ctx;
    g->mk = sdx__micro_kernels_select();
    g->packer = sdx__row_packer(ctx);
    g->cols = g->b_kind == SDX__B_IM2COL ? g->batch * g->N : g->N;
    sdx__gemm_split(g, SDX__MAX(1, ctx->n_threads), SDX__MJ, SDX__NJ, SDX__MR, SDX__NR);
    sdx__parallel_for(ctx, g->m_tiles * g->n_tiles, sdx__gemm_range, g);
    return SDX_OK;
}
