#pragma once
#include "../core/core.c"

/* ===================================================================== */
/*  Kernels: linear, conv2d, norms, softmax, attention, elementwise ops    */
/* ===================================================================== */
/* Every kernel widens its inputs to f32 tile by tile (any of F32, F16,
 * BF16 for each operand), computes and accumulates in f32 and narrows
 * once on store. Linear and conv2d share one cache-blocked GEMM; the
 * attention is blocked over queries and keys with an online softmax.
 * Temporaries come from per-thread scratch owned by the context, so after
 * the first call of a given size no kernel allocates. */

/* SIMD paths: AVX2/FMA on x86 (chosen at run time, the scalar path
 * otherwise), NEON on AArch64 (always there). SDX_NO_SIMD removes both. */
#if !defined(SDX_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define SDX__X86 1
#include <immintrin.h>
#include <cpuid.h>
#endif
#if !defined(SDX_NO_SIMD) && (defined(__aarch64__) || defined(_M_ARM64))
#define SDX__NEON 1
#include <arm_neon.h>
#endif

/* g++ -O2 takes the "undefined" first operands inside gcc's own AVX-512
 * intrinsics (__Y = __Y) for uninitialised reads once they are inlined:
 * the AVX-512 sections sit between these two. */
#if defined(__GNUC__) && !defined(__clang__)
#define SDX__INTRINSICS_WARNINGS_OFF _Pragma("GCC diagnostic push") \
    _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define SDX__INTRINSICS_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define SDX__INTRINSICS_WARNINGS_OFF
#define SDX__INTRINSICS_WARNINGS_ON
#endif

/* ---- per-thread scratch ---------------------------------------------- */

struct sdx__kernel_state {
    int      n;          /* one slot per thread */
    void   **raw;        /* what was allocated */
    float  **aligned;    /* 64-byte aligned view of raw */
    size_t  *size;       /* usable bytes of aligned */
    float   *wino_u;     /* Winograd-transformed filters of the running conv */
    size_t   wino_bytes;
    int      bf16_probed;  /* the CPU was asked about AVX512-BF16 ...      */
    int      bf16_dot;     /* ... and has it (tests clear it: the fallback) */
    int      bf16_told;    /* the fallback to f32 was logged once          */
    int      bf16_amx;     /* AMX-BF16 tiles are usable (tests clear it:
                              the AVX512-BF16 kernel)                      */
    int      bf16_dot_pays; /* without AMX, the AVX512-BF16 kernel is not
                              slower than f32 here (tests set it)         */
    int      bf16_round_act; /* bf16 mode rounds activations to bf16 as well
                              (no hi + lo split; tests and bench set it) */
    int      pack_scalar;    /* the f32 GEMM packs, and f32 Winograd
                              transforms, with the portable code (tests
                              set it: the AVX-512 code's reference)      */
    int      attn_blockwise; /* attention packs K and V per key block, as
                              for a head over its budget (tests set it)   */
};

static void sdx__kernel_state_free(sdx_ctx *ctx) {
    sdx__kernel_state *s = ctx->kernels;
    if (!s) return;
    /* raw may be NULL when the state's own allocation failed half way */
    for (int i = 0; s->raw && i < s->n; i++) sdx__free(ctx, s->raw[i]);
    sdx__free(ctx, s->raw);
    sdx__free(ctx, s->aligned);
    sdx__free(ctx, s->size);
    sdx__free(ctx, s->wino_u);
    sdx__free(ctx, s);
    ctx->kernels = NULL;
}

static sdx__kernel_state *sdx__kernel_state_get(sdx_ctx *ctx) {
    sdx__kernel_state *s = ctx->kernels;
    int n = SDX__MAX(1, ctx->n_threads);
    if (s) return s;
    s = (sdx__kernel_state *)sdx__calloc(ctx, 1, sizeof *s);
    if (!s) return NULL;
    s->raw = (void **)sdx__calloc(ctx, (size_t)n, sizeof *s->raw);
    s->aligned = (float **)sdx__calloc(ctx, (size_t)n, sizeof *s->aligned);
    s->size = (size_t *)sdx__calloc(ctx, (size_t)n, sizeof *s->size);
    s->n = n;
    ctx->kernels = s;
    if (!s->raw || !s->aligned || !s->size) { sdx__kernel_state_free(ctx); return NULL; }
    return s;
}

/* Per-thread buffer of at least `bytes`, 64-byte aligned, owned by the
 * context and reused by later calls: valid until the next kernel call on
 * this context (kernels use it themselves). NULL (error set) when out of
 * memory. Call it from thread 0, or after sdx__scratch_reserve made it
 * big enough for every thread: growing it is not thread-safe. */
static void *sdx__scratch(sdx_ctx *ctx, int thread, size_t bytes) {
    sdx__kernel_state *s = sdx__kernel_state_get(ctx);
    if (!s) { sdx__nomem(ctx, "kernel state", sizeof *s); return NULL; }
    if (thread < 0 || thread >= s->n) {
        sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx__scratch: thread %d of %d", thread, s->n);
        return NULL;
    }
    if (s->size[thread] < bytes) {
        size_t want = bytes + bytes / 4 + 64;   /* some headroom: fewer regrowths */
        void *p;
        if (want < bytes) { sdx__nomem(ctx, "kernel scratch", bytes); return NULL; }
        sdx__free(ctx, s->raw[thread]);
        s->raw[thread] = NULL;
        s->aligned[thread] = NULL;
        s->size[thread] = 0;
        p = sdx__malloc(ctx, want);
        if (!p) { sdx__nomem(ctx, "kernel scratch", want); return NULL; }
        s->raw[thread] = p;
        s->aligned[thread] = (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
        s->size[thread] = want - 64;
    }
    return s->aligned[thread];
}

/* Grows every thread's scratch to `bytes` up front, on the calling thread,
 * so workers inside sdx__parallel_for never allocate. */
static int sdx__scratch_reserve(sdx_ctx *ctx, size_t bytes) {
    int n = SDX__MAX(1, ctx->n_threads);
    for (int t = 0; t < n; t++)
        if (!sdx__scratch(ctx, t, bytes)) return SDX_ERR_NOMEM;
    return SDX_OK;
}

/* Scratch that was reserved: never fails inside a worker. */
static float *sdx__scratch_f32(sdx_ctx *ctx, int thread) { return ctx->kernels->aligned[thread]; }

/* ---- argument checks -------------------------------------------------- */

static int sdx__is_storage(sdx_dtype t) { return t == SDX_F32 || t == SDX_F16 || t == SDX_BF16; }

/* Checks that every non-NULL tensor has a valid shape, data and a storage
 * dtype. Negative dims are rejected here once: pairs of them multiply to
 * a positive element count that every later shape check would accept. */
static int sdx__check_tensors(sdx_ctx *ctx, const char *op, const sdx_tensor *const *ts, int n) {
    static const char *const what[] = { "y", "input 1", "input 2", "input 3", "input 4" };
    for (int i = 0; i < n; i++) {
        const sdx_tensor *t = ts[i];
        if (!t) continue;
        if (t->ndim < 0 || t->ndim > SDX_MAX_DIMS)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has %d dims (expected 0..%d)", op,
                             what[SDX__MIN(i, 4)], t->ndim, SDX_MAX_DIMS);
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] < 0) {
                char s[96];
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has a negative dim %s", op, what[SDX__MIN(i, 4)],
                                 sdx_shape_str(t, s, sizeof s));
            }
        if (!t->data && sdx_tensor_numel(t) > 0)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has no data", op, what[SDX__MIN(i, 4)]);
        if (!sdx__is_storage(t->dtype))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has dtype %s (expected F32, F16 or BF16)",
                             op, what[SDX__MIN(i, 4)], sdx_dtype_name(t->dtype));
    }
    return SDX_OK;
}

#define SDX__CHECK(ctx, op, ...) do { \
    const sdx_tensor *const sdx__ts_[] = { __VA_ARGS__ }; \
    int sdx__rc_ = sdx__check_tensors(ctx, op, sdx__ts_, SDX__ARRAY_LEN(sdx__ts_)); \
    if (sdx__rc_ != SDX_OK) return sdx__rc_; } while (0)

static int sdx__fail_shapes(sdx_ctx *ctx, const char *op, const char *why,
                            const sdx_tensor *a, const char *an, const sdx_tensor *b, const char *bn) {
    char sa[96], sb[96];
    sdx_shape_str(a, sa, sizeof sa);
    if (b) sdx_shape_str(b, sb, sizeof sb); else sb[0] = 0;
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s (%s %s%s%s%s%s)", op, why, an, sa,
                     b ? ", " : "", b ? bn : "", b ? " " : "", b ? sb : "");
}

/* ---- half-precision emulation (SDX_UNSAFE_*) -------------------------- */
/* Rounds a running value to f16 the way a half-precision kernel would:
 * sums past 65504 become Inf. Only the opt-out builds use it. */
static float sdx__round_f16(float v) { return sdx_f16_to_f32(sdx_f32_to_f16(v)); }

/* ---- fast exp ---------------------------------------------------------- */
/* exp for softmax and attention: Cody-Waite reduction to [-ln2/2, ln2/2]
 * and a degree-6 polynomial, relative error below 3e-7; inputs below
 * -87.3 (and -inf, for masked logits) give 0, NaN stays NaN. The portable
 * form is plain 8-wide loops the compiler vectorises; x86 with AVX2 or
 * AVX-512 and AArch64 get the same algorithm in intrinsics, from these
 * constants: the input range, log2(e), ln 2 in a high and a low part, and
 * the polynomial's coefficients, highest power first (Horner). */
#define SDX__EXP_MIN    (-87.3f)
#define SDX__EXP_MAX    88.0f
#define SDX__EXP_LOG2E  1.44269504f
#define SDX__EXP_LN2_HI 0.693145752f
#define SDX__EXP_LN2_LO 1.42860677e-6f
static const float sdx__exp_poly[7] = { 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f };

static inline void sdx__exp8(float *v) {
    float r[8], p[8];
    int32_t e[8];
    for (int i = 0; i < 8; i++) {
        float x = v[i] > SDX__EXP_MIN ? v[i] : SDX__EXP_MIN;   /* NaN -> the minimum: no UB in the int cast */
        float n;
        x = x < SDX__EXP_MAX ? x : SDX__EXP_MAX;
        n = (x * SDX__EXP_LOG2E + 12582912.0f) - 12582912.0f;   /* round to nearest */
        r[i] = (x - n * SDX__EXP_LN2_HI) - n * SDX__EXP_LN2_LO;
        e[i] = (int32_t)n;
    }
    for (int i = 0; i < 8; i++) {
        float x = r[i], q = sdx__exp_poly[0];
        for (int c = 1; c < 7; c++) q = q * x + sdx__exp_poly[c];
        p[i] = q;
    }
    for (int i = 0; i < 8; i++) {
        uint32_t bits = (uint32_t)(e[i] + 127) << 23;
        float scale;
        memcpy(&scale, &bits, 4);
        v[i] = v[i] > SDX__EXP_MIN ? p[i] * scale : (v[i] != v[i] ? v[i] : 0.0f);
    }
}

static void sdx__exp_n_c(float *v, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) sdx__exp8(v + i);
    if (i < n) {
        float t[8] = { 0 };
        memcpy(t, v + i, (size_t)(n - i) * sizeof(float));
        sdx__exp8(t);
        memcpy(v + i, t, (size_t)(n - i) * sizeof(float));
    }
}

#ifdef SDX__X86
__attribute__((target("avx2,fma")))
static void sdx__exp_n_avx2(float *v, int64_t n) {
    const __m256 lo = _mm256_set1_ps(SDX__EXP_MIN), hi = _mm256_set1_ps(SDX__EXP_MAX);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x0 = _mm256_loadu_ps(v + i);
        __m256 x = _mm256_min_ps(_mm256_max_ps(x0, lo), hi);  /* NaN -> the minimum */
        __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(SDX__EXP_LOG2E)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(SDX__EXP_LN2_HI), x);
        __m256 q = _mm256_set1_ps(sdx__exp_poly[0]), res;
        __m256i e;
        r = _mm256_fnmadd_ps(k, _mm256_set1_ps(SDX__EXP_LN2_LO), r);
        for (int c = 1; c < 7; c++) q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(sdx__exp_poly[c]));
        e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
        res = _mm256_mul_ps(q, _mm256_castsi256_ps(e));
        res = _mm256_and_ps(res, _mm256_cmp_ps(x0, lo, _CMP_GT_OQ));          /* below range: 0 */
        res = _mm256_blendv_ps(res, x0, _mm256_cmp_ps(x0, x0, _CMP_UNORD_Q)); /* NaN stays NaN  */
        _mm256_storeu_ps(v + i, res);
    }
    if (i < n) sdx__exp_n_c(v + i, n - i);
}
#endif

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF

/* The lanes of a 16-wide step that `left` values still fill (none when
 * left <= 0). */
static inline __mmask16 sdx__lanes16(int64_t left) {
    return (__mmask16)(left >= 16 ? 0xffffu : left <= 0 ? 0u : (1u << left) - 1u);
}

/* sdx__exp_n_avx2's algorithm on 16 lanes (the same value in each lane). */
__attribute__((target("avx512f")))
static inline __m512 sdx__exp512(__m512 x0) {
    const __m512 lo = _mm512_set1_ps(SDX__EXP_MIN);
    __m512 x = _mm512_min_ps(_mm512_max_ps(x0, lo), _mm512_set1_ps(SDX__EXP_MAX));   /* NaN -> the minimum */
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(SDX__EXP_LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(SDX__EXP_LN2_HI), x);
    __m512 q = _mm512_set1_ps(sdx__exp_poly[0]), res;
    __m512i e;
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(SDX__EXP_LN2_LO), r);
    for (int c = 1; c < 7; c++) q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(sdx__exp_poly[c]));
    e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
    res = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x0, lo, _CMP_GT_OQ), _mm512_mul_ps(q, _mm512_castsi512_ps(e)));
    return _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q), x0);    /* NaN stays NaN */
}

/* bf16 mode's SiLU and GELU, 16 lanes at a time (f32 mode keeps libm's
 * expf and erff per value: the bits its goldens were made with). SiLU is
 * x / (1 + exp(-x)) with the exp above; GELU is x/2 (1 + erf(x / sqrt 2))
 * with erf from Abramowitz and Stegun 7.1.26 (absolute error under
 * 1.5e-7), odd-extended. NaN stays NaN. */
__attribute__((target("avx512f")))
static void sdx__silu_n_avx512(float *v, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 in = sdx__lanes16(n - i);
        __m512 x = _mm512_maskz_loadu_ps(in, v + i);
        __m512 e = sdx__exp512(_mm512_sub_ps(_mm512_setzero_ps(), x));
        _mm512_mask_storeu_ps(v + i, in, _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e)));
    }
}

__attribute__((target("avx512f")))
static void sdx__gelu_n_avx512(float *v, int64_t n) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 in = sdx__lanes16(n - i);
        __m512 x = _mm512_maskz_loadu_ps(in, v + i);
        __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f));
        __m512 az = _mm512_abs_ps(z);
        __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(az, _mm512_set1_ps(0.3275911f), one));
        __m512 poly = _mm512_set1_ps(1.061405429f), erf_abs;
        poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-1.453152027f));
        poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(1.421413741f));
        poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-0.284496736f));
        poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(0.254829592f));
        poly = _mm512_mul_ps(poly, t);
        erf_abs = _mm512_fnmadd_ps(poly, sdx__exp512(_mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), az), az)), one);
        /* erf(z) carries z's sign */
        erf_abs = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(erf_abs),
                                                      _mm512_and_si512(_mm512_castps_si512(z), _mm512_set1_epi32((int)0x80000000u))));
        _mm512_mask_storeu_ps(v + i, in, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(one, erf_abs)));
    }
}

/* sdx__exp_n_avx2 16 lanes at a time: the values it takes in groups of 8
 * get the same vector arithmetic, a last group of fewer than 8 the same
 * portable code, so the two give the same bits. */
__attribute__((target("avx512f")))
static void sdx__exp_n_avx512(float *v, int64_t n) {
    const int64_t body = n / 8 * 8;
    for (int64_t i = 0; i < body; i += 16) {
        __mmask16 in = sdx__lanes16(body - i);
        _mm512_mask_storeu_ps(v + i, in, sdx__exp512(_mm512_maskz_loadu_ps(in, v + i)));
    }
    if (body < n) sdx__exp_n_c(v + body, n - body);
}

SDX__INTRINSICS_WARNINGS_ON
#endif

#ifdef SDX__NEON
/* The same algorithm in NEON: FRINTN rounds to nearest even as the AVX2
 * path's _mm256_round_ps does, FMLS/FMLA are the fused forms. */
static void sdx__exp_n_neon(float *v, int64_t n) {
    const float32x4_t lo = vdupq_n_f32(SDX__EXP_MIN), hi = vdupq_n_f32(SDX__EXP_MAX);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t x0 = vld1q_f32(v + i);
        float32x4_t x = vminq_f32(vmaxnmq_f32(x0, lo), hi);   /* NaN lanes: replaced by x0 below */
        float32x4_t k = vrndnq_f32(vmulq_n_f32(x, SDX__EXP_LOG2E));
        float32x4_t r = vfmsq_f32(x, k, vdupq_n_f32(SDX__EXP_LN2_HI));
        float32x4_t q = vdupq_n_f32(sdx__exp_poly[0]), res;
        int32x4_t e;
        r = vfmsq_f32(r, k, vdupq_n_f32(SDX__EXP_LN2_LO));
        for (int c = 1; c < 7; c++) q = vfmaq_f32(vdupq_n_f32(sdx__exp_poly[c]), q, r);
        e = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(k), vdupq_n_s32(127)), 23);
        res = vmulq_f32(q, vreinterpretq_f32_s32(e));
        res = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(res), vcgtq_f32(x0, lo)));  /* below range: 0 */
        res = vbslq_f32(vceqq_f32(x0, x0), res, x0);                                          /* NaN stays NaN  */
        vst1q_f32(v + i, res);
    }
    if (i < n) sdx__exp_n_c(v + i, n - i);
}
#endif

static int sdx__have_avx2(void) {
#ifdef SDX__X86
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

/* (the compilers' CPU checks include the OS saving the zmm state) */
static int sdx__have_avx512f(void) {
#ifdef SDX__X86
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

static void sdx__exp_n(float *v, int64_t n) {
#if defined(SDX__X86)
    if (sdx__have_avx512f()) { sdx__exp_n_avx512(v, n); return; }
    if (sdx__have_avx2()) { sdx__exp_n_avx2(v, n); return; }
#elif defined(SDX__NEON)
    sdx__exp_n_neon(v, n);
    return;
#endif
    sdx__exp_n_c(v, n);
}

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
    /* the weight operand (A for conv, B for linear): cached bf16 panels */
    const sdx_tensor *weight; int weight_is_a;
    int64_t m_tiles, n_tiles;
    int64_t mb, nb;             /* f32 and AMX jobs: rows and columns of C per job */
    int64_t cols;               /* f32 jobs: columns of C, the images' side by side */
    int pack16;                 /* f32 jobs: the AVX-512 packers */
    sdx__micro_kernels mk;
    sdx_ctx *ctx;
    const uint32_t *panel;      /* bf16 mode: the weight's cached panel, or NULL */
    int split;                  /* bf16 mode: the other operand as hi + lo parts */
} sdx__gemm;

/* Bytes of per-thread scratch an f32 GEMM job needs. */
static size_t sdx__gemm_scratch_bytes(void) {
    size_t floats = (size_t)SDX__MJ * SDX__KC          /* packed A */
                  + (size_t)SDX__KC * SDX__NB          /* packed B */
                  + (size_t)SDX__MJ * SDX__LDT         /* f32 C tile */
                  + (size_t)SDX__NJ + 64               /* one widened row (>= KC, NJ) */
                  + (size_t)SDX__NJ;                   /* bias */
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

/* sdx__pack_rows, 16 rows and 16 k at a time (width 12 or 16). */
#define SDX__PACK_AHEAD 64
__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sdx__pack_rows_avx512(float *dst, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                                  int rows, int nvalid, int width, int64_t k0, int kc) {
    const __mmask16 row_lanes = sdx__lanes16(width);
    const int64_t esize = (int64_t)sdx_dtype_size(dtype);
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
                if (kk + SDX__PACK_AHEAD < kc) _mm_prefetch((const char *)src + (at + SDX__PACK_AHEAD) * esize, _MM_HINT_T0);
                v[r] = sdx__load16_f32(src, dtype, at, k_lanes);
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

/* The job's A block, rows [m0, m0 + rows) (valid < m0 + nvalid), into MR-row strips. */
static void sdx__pack_a(const sdx__gemm *g, float *dst, int64_t m0, int rows, int nvalid, int64_t k0, int kc, float *tmp) {
#ifdef SDX__X86
    if (g->pack16) { sdx__pack_rows_avx512(dst, g->a, g->a_dtype, g->K, m0, rows, nvalid, SDX__MR, k0, kc); return; }
#endif
    sdx__pack_rows(dst, g->a, g->a_dtype, g->K, m0, rows, nvalid, SDX__MR, k0, kc, tmp);
}

/* B's columns [n0, n0 + cols) (valid < n0 + nvalid) into NR-column strips. */
static void sdx__pack_b(const sdx__gemm *g, float *dst, int64_t n0, int cols, int nvalid, int64_t k0, int kc, float *tmp) {
#ifdef SDX__X86
    if (g->pack16 && g->b_kind == SDX__B_ROWS_T) {
        sdx__pack_rows_avx512(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc);
        return;
    }
    if (g->pack16 && g->b_dtype == SDX_F32) {
        sdx__pack_im2col_avx512(g, dst, (const float *)g->b, n0, nvalid, cols, k0, kc);
        return;
    }
#endif
    if (g->b_kind == SDX__B_ROWS_T) sdx__pack_rows(dst, g->b, g->b_dtype, g->K, n0, cols, nvalid, SDX__NR, k0, kc, tmp);
    else sdx__pack_im2col(g, dst, g->b, n0, nvalid, cols, k0, kc, tmp);
}

/* Adds the bias and narrows an f32 tile of one image into y. */
static void sdx__gemm_store(const sdx__gemm *g, const float *tile, int ldt, int64_t batch, int64_t m0, int mv,
                            int64_t n0, int nv, float *bias_buf, float *row_buf) {
    int64_t ybase = batch * g->y_bstride;
    /* an f32 y is written in place: one pass less over C */
    int direct = g->y_dtype == SDX_F32;
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
    float *bias_buf = tmp + SDX__NJ + 64;
    int64_t m0 = (job / g->n_tiles) * g->mb, n0 = (job % g->n_tiles) * g->nb;
    int mv = (int)SDX__MIN(g->mb, g->M - m0), nv = (int)SDX__MIN(g->nb, g->cols - n0);
    int mp = (mv + SDX__MR - 1) / SDX__MR * SDX__MR;
    for (int64_t k0 = 0; k0 < g->K; k0 += SDX__KC) {
        int kc = (int)SDX__MIN((int64_t)SDX__KC, g->K - k0);
        sdx__pack_a(g, pa, m0, mp, mv, k0, kc, tmp);
        for (int s0 = 0; s0 < nv; s0 += SDX__NB) {
            int sv = SDX__MIN(SDX__NB, nv - s0), sp = (sv + SDX__NR - 1) / SDX__NR * SDX__NR;
            sdx__pack_b(g, pb, n0 + s0, sp, sv, k0, kc, tmp);
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

/* Splits C into jobs of at most MJ x NJ, of even sizes, and into enough
 * of them (a few per thread) that the threads finish together. A job's
 * rows are how often each packed value of B is used, its columns how
 * often each of A, so the larger side is split first. */
static void sdx__gemm_blocks(sdx__gemm *g, int threads) {
    int64_t mt = (g->M + SDX__MJ - 1) / SDX__MJ, nt = (g->cols + SDX__NJ - 1) / SDX__NJ;
    while (mt * nt < 4 * (int64_t)threads) {
        int64_t rows = (g->M + mt - 1) / mt, cols = (g->cols + nt - 1) / nt;
        if (cols >= rows && cols > SDX__NB) nt++;
        else if (rows > 4 * SDX__MR) mt++;
        else if (cols > 2 * SDX__NR) nt++;
        else break;
    }
    g->mb = ((g->M + mt - 1) / mt + SDX__MR - 1) / SDX__MR * SDX__MR;
    g->nb = ((g->cols + nt - 1) / nt + SDX__NR - 1) / SDX__NR * SDX__NR;
    g->m_tiles = (g->M + g->mb - 1) / g->mb;
    g->n_tiles = (g->cols + g->nb - 1) / g->nb;
}

static int sdx__bf16_usable(sdx_ctx *ctx);
#ifdef SDX__X86
static int sdx__gemm_run_bf16(sdx_ctx *ctx, sdx__gemm *g);
#endif

/* (batch > 1 only with an im2col B and one A for all images, as conv2d
 * calls it: the f32 path runs the images as columns side by side) */
static int sdx__gemm_run(sdx_ctx *ctx, sdx__gemm *g) {
    int rc;
    if (g->M == 0 || g->N == 0 || g->batch == 0) return SDX_OK;
    if (ctx->compute == SDX_BF16 && g->K > 0 && sdx__bf16_usable(ctx)) {
#ifdef SDX__X86
        return sdx__gemm_run_bf16(ctx, g);
#endif
    }
    SDX_ASSERT(g->b_kind == SDX__B_IM2COL ? g->a_bstride == 0 : g->batch == 1);
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_scratch_bytes())) != SDX_OK) return rc;
    g->ctx = ctx;
    g->mk = sdx__micro_kernels_select();
#ifdef SDX__X86
    g->pack16 = !ctx->kernels->pack_scalar && sdx__have_avx512f() && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl");
#endif
    g->cols = g->b_kind == SDX__B_IM2COL ? g->batch * g->N : g->N;
    sdx__gemm_blocks(g, SDX__MAX(1, ctx->n_threads));
    sdx__parallel_for(ctx, g->m_tiles * g->n_tiles, sdx__gemm_range, g);
    return SDX_OK;
}

/* ===================================================================== */
/*  bf16 GEMM: the same jobs with bf16 operands and VDPBF16PS             */
/* ===================================================================== */
/* In bf16 compute mode (ctx->compute, set by each model part's forward)
 * linear and the im2col convolution multiply bf16 values and accumulate
 * in f32: AVX512-BF16's VDPBF16PS adds to each f32 lane the products of
 * one pair of bf16 values (two consecutive k). Both operands are packed
 * as such pairs: a strip of w rows (or columns) over kc values of k is
 * ceil(kc/2) groups of w 32-bit words, word (j, r) = bf16(v[r][2j]) |
 * bf16(v[r][2j+1]) << 16, the high half zero past an odd K. The weight
 * is rounded to bf16 (nearest even, as sdx_f32_to_bf16, but a finite
 * value past bf16's largest saturates to it). The other operand, the
 * activation, is split as it is packed (g->split): hi = bf16(x) and lo =
 * bf16(x - hi) go into two packings of the same shape and both are
 * multiplied by the weight, so only the weight's rounding reaches the
 * result (rounding both cost 1.2e-2 rel-L2 per UNet call on the goldens,
 * over the 1e-2 budget; see tests/t_bf16.c). An activation stored as
 * bf16 is exact in hi and is not split; bf16_round_act (bench) turns the
 * split off. A weight slot (registered in ctx->wcache) is packed once
 * over all of K and kept until the slot changes: ceil(K/2) words per row,
 * the bytes of the weight in f16 (a short last strip is stored short and
 * padded when used). Other weight operands are packed per block like the
 * activations. Everything after the dot products (bias, store) is the
 * f32 path's. Without AVX512-BF16, or without AMX on a core whose
 * VDPBF16PS is slower than its FMAs (sdx__bf16_usable), the mode computes
 * in f32 and says so once in the log. */

#define SDX__BMR 12     /* micro tile rows: 24 zmm accumulators          */
#define SDX__BNR 32     /* micro tile columns: two zmm of f32 lanes      */
#define SDX__BKC 512    /* k per block: even, so no pair straddles blocks */
/* jobs are the f32 path's MB x NB tiles: multiples of BMR and BNR */

/* cache kinds: strips of BMR / BNR rows; AMX A tiles of the whole weight */
enum { SDX__PANEL_A = 1, SDX__PANEL_B = 2, SDX__PANEL_TILES = 3 };

/* AVX512F and AVX512_BF16 in CPUID, and the OS saving the opmask and
 * all 32 zmm registers (XCR0 bits 1, 2, 5, 6, 7). */
static int sdx__cpu_avx512_bf16(void) {
#ifdef SDX__X86
    unsigned eax, ebx, ecx, edx, xcr0, xcr0_hi;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return 0;   /* OSXSAVE */
    __asm__ __volatile__("xgetbv" : "=a"(xcr0), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0 & 0xe6u) != 0xe6u || __get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(ebx & (1u << 16))) return 0;                     /* AVX512F */
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    return (eax & (1u << 5)) != 0;                         /* AVX512_BF16 */
#else
    return 0;
#endif
}

/* AMX (tile registers and TDPBF16PS), 64-bit Linux only: CPUID has
 * AMX-TILE and AMX-BF16, the OS enables the tile state in XCR0 (bits 17,
 * 18), palette 1 has at least 8 tiles of 16 rows x 64 bytes, and the
 * kernel grants this process the tile data (arch_prctl: Linux 5.16 and
 * later hand the 8 KiB of tile state only to processes that ask). The
 * request is made here, raw, so that it does not depend on which system
 * headers declare syscall(). */
#if defined(SDX__X86) && defined(__x86_64__) && defined(__linux__) && !defined(SDX_NO_AMX)
#define SDX__AMX 1
#endif

static int sdx__cpu_amx_bf16(void) {
#ifdef SDX__AMX
    unsigned eax, ebx, ecx, edx, xcr0, xcr0_hi;
    long rc;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(edx & (1u << 22)) || !(edx & (1u << 24))) return 0;     /* AMX-BF16, AMX-TILE */
    __asm__ __volatile__("xgetbv" : "=a"(xcr0), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0 & (3u << 17)) != (3u << 17) || __get_cpuid_max(0, NULL) < 0x1d) return 0;
    __cpuid_count(0x1d, 0, eax, ebx, ecx, edx);
    if (eax < 1) return 0;                              /* no palette 1 */
    __cpuid_count(0x1d, 1, eax, ebx, ecx, edx);        /* palette 1: names, bytes per row, rows */
    if ((ebx >> 16) < 8 || (ebx & 0xffffu) < 64 || (ecx & 0xffffu) < 16) return 0;
    /* arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) */
    __asm__ __volatile__("syscall" : "=a"(rc) : "0"(158L), "D"(0x1023L), "S"(18L) : "rcx", "r11", "memory");
    return rc == 0;
#else
    return 0;
#endif
}

/* AMD's cores (Zen 4, Zen 5) issue VDPBF16PS at their FMA rate; Intel's
 * without AMX issue it at a half (one host measured) to a quarter (another:
 * 0.52 ns against 0.13 ns an FMA, 12 independent chains) of it, so the
 * AVX512-BF16 kernel, which needs two of them (hi and lo) where f32 needs
 * two FMAs, ran at 0.3-1.0x the f32 GEMM there. The vendor decides, not a
 * timing: a timing near the line could change a run's bits. */
static int sdx__cpu_bf16_dot_pays(void) {
#ifdef SDX__X86
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return 0;
    return ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u;   /* "AuthenticAMD" */
#else
    return 0;
#endif
}

/* Whether bf16 mode can run its own GEMM here, and pays: AMX, or an
 * AVX512-BF16 core that issues VDPBF16PS at its FMA rate; probed once per
 * context. Elsewhere the mode is f32 exactly, said once in the log. */
static int sdx__bf16_usable(sdx_ctx *ctx) {
    sdx__kernel_state *s = sdx__kernel_state_get(ctx);
    int usable;
    if (!s) return 0;                  /* the f32 path reports the out-of-memory */
    if (!s->bf16_probed) {
        s->bf16_dot = sdx__cpu_avx512_bf16();
        s->bf16_amx = s->bf16_dot && sdx__cpu_amx_bf16();
        s->bf16_dot_pays = s->bf16_dot && sdx__cpu_bf16_dot_pays();
        s->bf16_probed = 1;
    }
    usable = s->bf16_dot && (s->bf16_amx || s->bf16_dot_pays);
    if (!usable && !s->bf16_told) {
        s->bf16_told = 1;
        sdx__log(ctx, SDX_LOG_INFO, "bf16 compute: %s; computing in f32",
#ifdef SDX__X86
                 s->bf16_dot ? "no AMX, and this CPU's VDPBF16PS would be slower than its f32 FMAs"
                             : "this CPU has no AVX512-BF16"
#else
                 "this build has no AVX512-BF16 code"
#endif
                 );
    }
    return usable;
}

#ifdef SDX__X86

typedef void (*sdx__micro_bf16_fn)(int kp, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int accumulate);

/* 12 x 32 tile in 24 zmm accumulators; per pair of k, two loads of B and
 * twelve broadcasts of an A pair. */
__attribute__((target("avx512f,avx512bf16")))
static void sdx__micro_bf16_avx512(int kp, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int accumulate) {
    __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps(), c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
    __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps(), c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
    __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps(), c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
    __m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps(), c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
    __m512 c80 = _mm512_setzero_ps(), c81 = _mm512_setzero_ps(), c90 = _mm512_setzero_ps(), c91 = _mm512_setzero_ps();
    __m512 ca0 = _mm512_setzero_ps(), ca1 = _mm512_setzero_ps(), cb0 = _mm512_setzero_ps(), cb1 = _mm512_setzero_ps();
    for (int k = 0; k < kp; k++, a += SDX__BMR, b += SDX__BNR) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)b);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(b + 16));
        __m512bh av;
#define SDX__DP_ROW(r, lo, hi) do { av = (__m512bh)_mm512_set1_epi32((int)a[r]); \
        lo = _mm512_dpbf16_ps(lo, av, b0); hi = _mm512_dpbf16_ps(hi, av, b1); } while (0)
        SDX__DP_ROW(0, c00, c01); SDX__DP_ROW(1, c10, c11); SDX__DP_ROW(2, c20, c21); SDX__DP_ROW(3, c30, c31);
        SDX__DP_ROW(4, c40, c41); SDX__DP_ROW(5, c50, c51); SDX__DP_ROW(6, c60, c61); SDX__DP_ROW(7, c70, c71);
        SDX__DP_ROW(8, c80, c81); SDX__DP_ROW(9, c90, c91); SDX__DP_ROW(10, ca0, ca1); SDX__DP_ROW(11, cb0, cb1);
#undef SDX__DP_ROW
    }
#define SDX__STORE_ROW(r, lo, hi) do { \
        float *row = c + (r) * ldc; \
        if (accumulate) { lo = _mm512_add_ps(lo, _mm512_loadu_ps(row)); hi = _mm512_add_ps(hi, _mm512_loadu_ps(row + 16)); } \
        _mm512_storeu_ps(row, lo); _mm512_storeu_ps(row + 16, hi); } while (0)
    SDX__STORE_ROW(0, c00, c01); SDX__STORE_ROW(1, c10, c11); SDX__STORE_ROW(2, c20, c21); SDX__STORE_ROW(3, c30, c31);
    SDX__STORE_ROW(4, c40, c41); SDX__STORE_ROW(5, c50, c51); SDX__STORE_ROW(6, c60, c61); SDX__STORE_ROW(7, c70, c71);
    SDX__STORE_ROW(8, c80, c81); SDX__STORE_ROW(9, c90, c91); SDX__STORE_ROW(10, ca0, ca1); SDX__STORE_ROW(11, cb0, cb1);
#undef SDX__STORE_ROW
}

SDX__INTRINSICS_WARNINGS_OFF

/* f32 lanes rounded to bf16 as sdx_f32_to_bf16 does (nearest even, NaN
 * kept quiet), in the low 16 bits of each 32-bit lane, except that a
 * finite value above bf16's largest (3.3895e38) saturates to it: a GEMM
 * operand must not become an infinity that f32 did not have. */
__attribute__((target("avx512f")))
static inline __m512i sdx__bf16_round512(__m512 v) {
    const __m512i x = _mm512_castps_si512(v), top = _mm512_srli_epi32(x, 16);
    const __m512i odd = _mm512_and_si512(top, _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd)), 16);
    const __m512i magnitude = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7f800000));
    const __mmask16 over = _mm512_cmplt_epu32_mask(magnitude, _mm512_set1_epi32(0x7f800000)) &
                           _mm512_cmpeq_epi32_mask(_mm512_and_si512(rounded, _mm512_set1_epi32(0x7fff)),
                                                   _mm512_set1_epi32(0x7f80));
    const __m512i saturated = _mm512_mask_sub_epi32(rounded, over, rounded, _mm512_set1_epi32(1));
    return _mm512_mask_or_epi32(saturated, nan, top, _mm512_set1_epi32(0x40));
}

/* n values rounded as sdx__bf16_round512 does (saturating). */
__attribute__((target("avx512f,avx512bw")))
static void sdx__f32_to_bf16_sat_n(const float *v, uint16_t *h, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(h + i), _mm512_cvtepi32_epi16(sdx__bf16_round512(_mm512_loadu_ps(v + i))));
    for (; i < n; i++) {
        h[i] = sdx_f32_to_bf16(v[i]);
        if ((h[i] & 0x7fffu) == 0x7f80u && isfinite(v[i])) h[i]--;
    }
}

/* The residual of that rounding (hi as sdx__bf16_round512 gave it),
 * rounded in turn; zero where hi is not finite (sdx__bf16_residual_n). */
__attribute__((target("avx512f")))
static inline __m512i sdx__bf16_residual512(__m512 v, __m512i hi) {
    const __m512 back = _mm512_castsi512_ps(_mm512_slli_epi32(hi, 16));
    const __mmask16 finite = _mm512_cmpneq_epi32_mask(_mm512_and_si512(hi, _mm512_set1_epi32(0x7f80)),
                                                      _mm512_set1_epi32(0x7f80));
    return _mm512_maskz_mov_epi32(finite, sdx__bf16_round512(_mm512_sub_ps(v, back)));
}

/* What rounding v to hi (bf16) left, rounded to bf16 in turn: hi + lo
 * holds 16 bits of v's significand, so a product with an activation split
 * this way is as exact as its bf16 weight (zero where hi is not finite,
 * so that an infinity stays one). */
__attribute__((target("avx512f,avx512bw")))
static void sdx__bf16_residual_n(const float *v, const uint16_t *hi, uint16_t *lo, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(hi + i)));
        _mm256_storeu_si256((__m256i *)(lo + i), _mm512_cvtepi32_epi16(sdx__bf16_residual512(_mm512_loadu_ps(v + i), h)));
    }
    for (; i < n; i++)
        lo[i] = (hi[i] & 0x7f80u) == 0x7f80u ? 0 : sdx_f32_to_bf16(v[i] - sdx_bf16_to_f32(hi[i]));
}

SDX__INTRINSICS_WARNINGS_ON

/* Row i of a row-major matrix (leading dim ld), k in [k0, k0 + kc),
 * rounded to bf16 into t16 and, when lo is not NULL, the residuals into
 * lo (kc values each; tmp holds kc floats). */
static void sdx__row_bf16(uint16_t *t16, uint16_t *lo, const void *src, sdx_dtype dtype, int64_t ld, int64_t i,
                          int64_t k0, int kc, float *tmp) {
    if (dtype == SDX_BF16) {
        memcpy(t16, (const uint16_t *)src + i * ld + k0, (size_t)kc * sizeof(uint16_t));
        if (lo) memset(lo, 0, (size_t)kc * sizeof(uint16_t));
    } else {
        const float *v = (const float *)src + i * ld + k0;
        if (dtype != SDX_F32) { sdx__load_f32(src, dtype, i * ld + k0, kc, tmp); v = tmp; }
        sdx__f32_to_bf16_sat_n(v, t16, (size_t)kc);
        if (lo) sdx__bf16_residual_n(v, t16, lo, (size_t)kc);
    }
}

/* Packs rows [row0, row0 + nvalid) of a row-major matrix (leading dim
 * ld), k in [k0, k0 + kc), as pairs into strips of `width` rows and kpad
 * >= ceil(kc/2) pairs, rows past nvalid (up to `rows`) and pairs past kc
 * zero: dst[s/width][j][r] = pair(s + r, j). With lo (not NULL) the
 * residuals of the rounding are packed the same way at lo. tmp holds kc
 * floats, t16 2 (kc + 1) halves. */
static void sdx__pack_rows_bf16(uint32_t *dst, uint32_t *lo, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                                int rows, int nvalid, int width, int64_t k0, int kc, int kpad, float *tmp, uint16_t *t16) {
    int kp = (kc + 1) / 2;
    uint16_t *t16lo = t16 + kc + 1;
    for (int s = 0; s < rows; s += width)
        for (int r = 0; r < width; r++) {
            int i = s + r;
            if (i < nvalid) {
                sdx__row_bf16(t16, lo ? t16lo : NULL, src, dtype, ld, row0 + i, k0, kc, tmp);
                t16[kc] = 0;
                if (lo) t16lo[kc] = 0;
            }
            for (int part = 0; part < (lo ? 2 : 1); part++) {
                uint32_t *strip = (part ? lo : dst) + (int64_t)s * kpad;
                const uint16_t *h = part ? t16lo : t16;
                int j = 0;
                if (i < nvalid)
                    for (; j < kp; j++) strip[j * width + r] = (uint32_t)h[2 * j] | (uint32_t)h[2 * j + 1] << 16;
                for (; j < kpad; j++) strip[j * width + r] = 0;
            }
        }
}

/* Packs im2col columns [p0, p0 + nvalid) (zero up to `cols`) as pairs in
 * BNR-column strips of kpad >= ceil(kc/2) pairs (zero past kc): each
 * strip is the f32 path's im2col (two NR-column halves in `stage`, kc x
 * BNR floats), rounded and paired; with lo (not NULL) the residuals of the
 * rounding likewise at lo. t16 holds 2 kc x BNR halves. */
static void sdx__pack_im2col_bf16(const sdx__gemm *g, uint32_t *dst, uint32_t *lo, const void *x, int64_t p0, int nvalid,
                                  int cols, int64_t k0, int kc, int kpad, float *stage, uint16_t *t16, float *tmp) {
    int kp = (kc + 1) / 2;
    size_t n = (size_t)kc * SDX__BNR;
    for (int s = 0; s < cols; s += SDX__BNR) {
        sdx__pack_im2col(g, stage, x, p0 + s, nvalid - s, SDX__BNR, k0, kc, tmp);
        sdx__f32_to_bf16_sat_n(stage, t16, n);
        if (lo) sdx__bf16_residual_n(stage, t16, t16 + n, n);
        for (int part = 0; part < (lo ? 2 : 1); part++) {
            uint32_t *strip = (part ? lo : dst) + (int64_t)s * kpad;
            memset(strip + (int64_t)kp * SDX__BNR, 0, (size_t)(kpad - kp) * SDX__BNR * sizeof(uint32_t));
            for (int half = 0; half < SDX__BNR / SDX__NR; half++) {
                const uint16_t *h = t16 + part * n + (size_t)half * kc * SDX__NR;
                for (int j = 0; j < kp; j++) {
                    uint32_t *out = strip + j * SDX__BNR + half * SDX__NR;
                    const uint16_t *even = h + (size_t)2 * j * SDX__NR;
                    if (2 * j + 1 < kc) {
                        const uint16_t *odd = even + SDX__NR;
                        for (int l = 0; l < SDX__NR; l++) out[l] = (uint32_t)even[l] | (uint32_t)odd[l] << 16;
                    } else {
                        for (int l = 0; l < SDX__NR; l++) out[l] = even[l];
                    }
                }
            }
        }
    }
}

/* Strip `row` (a multiple of width) of a cached panel of `rows` rows
 * packed over all K, pairs [k0/2, k0/2 + kp) as a strip of kpad pairs: a
 * short last strip, or one that needs pairs past kp (zero), is copied
 * into edge. */
static const uint32_t *sdx__panel_strip(const uint32_t *panel, int64_t rows, int64_t K, int width, int64_t row,
                                        int64_t k0, int kp, int kpad, uint32_t *edge) {
    int w = (int)SDX__MIN((int64_t)width, rows - row);
    const uint32_t *p = panel + row * ((K + 1) / 2) + (k0 / 2) * w;
    if (w == width && kpad == kp) return p;
    for (int j = 0; j < kp; j++) {
        memcpy(edge + (int64_t)j * width, p + (int64_t)j * w, (size_t)w * sizeof(uint32_t));
        memset(edge + (int64_t)j * width + w, 0, (size_t)(width - w) * sizeof(uint32_t));
    }
    memset(edge + (int64_t)kp * width, 0, (size_t)(kpad - kp) * width * sizeof(uint32_t));
    return edge;
}

/* Per-thread scratch of a bf16 job, in this order. */
#define SDX__BF16_PA    ((size_t)SDX__MB * SDX__BKC)          /* words: packed A, hi + lo */
#define SDX__BF16_PB    ((size_t)SDX__BKC * SDX__NB)          /* words: packed B, hi + lo */
#define SDX__BF16_EDGE  ((size_t)SDX__BKC / 2 * SDX__BNR)     /* words: a short strip  */
#define SDX__BF16_TILE  ((size_t)SDX__MB * SDX__NB)           /* floats: C tile        */
#define SDX__BF16_TMP   ((size_t)SDX__BKC + 64)               /* floats: one row (>= NB) */
#define SDX__BF16_STAGE ((size_t)SDX__BKC * SDX__BNR)         /* floats: f32 im2col strip */

static size_t sdx__gemm_bf16_scratch_bytes(void) {
    return (SDX__BF16_PA + SDX__BF16_PB + SDX__BF16_EDGE) * sizeof(uint32_t)
         + (SDX__BF16_TILE + SDX__BF16_TMP + SDX__NB + SDX__BF16_STAGE) * sizeof(float)
         + (2 * SDX__BF16_STAGE + 2) * sizeof(uint16_t) + 256;
}

static void sdx__gemm_job_bf16(const sdx__gemm *g, int64_t job, int thread) {
    uint32_t *pa = (uint32_t *)sdx__scratch_f32(g->ctx, thread);
    uint32_t *pb = pa + SDX__BF16_PA, *edge = pb + SDX__BF16_PB;
    float *tile = (float *)(edge + SDX__BF16_EDGE);
    float *tmp = tile + SDX__BF16_TILE, *bias_buf = tmp + SDX__BF16_TMP, *stage = bias_buf + SDX__NB;
    uint16_t *t16 = (uint16_t *)(stage + SDX__BF16_STAGE);
    const uint32_t *as[SDX__MB / SDX__BMR], *bs[SDX__NB / SDX__BNR];
    int64_t per_batch = g->m_tiles * g->n_tiles;
    int64_t batch = job / per_batch, rest = job % per_batch;
    int64_t m0 = (rest / g->n_tiles) * SDX__MB, n0 = (rest % g->n_tiles) * SDX__NB;
    int mv = (int)SDX__MIN((int64_t)SDX__MB, g->M - m0);
    int nv = (int)SDX__MIN((int64_t)SDX__NB, g->N - n0);
    int mp = (mv + SDX__BMR - 1) / SDX__BMR * SDX__BMR;
    int np = (nv + SDX__BNR - 1) / SDX__BNR * SDX__BNR;
    const void *a = (const char *)g->a + (size_t)(batch * g->a_bstride) * sdx_dtype_size(g->a_dtype);
    const void *b = (const char *)g->b + (size_t)(batch * g->b_bstride) * sdx_dtype_size(g->b_dtype);
    const uint32_t *panel_a = g->weight_is_a ? g->panel : NULL, *panel_b = g->weight_is_a ? NULL : g->panel;
    uint32_t *pa_lo = g->split && !g->weight_is_a ? pa + SDX__BF16_PA / 2 : NULL;
    uint32_t *pb_lo = g->split && g->weight_is_a ? pb + SDX__BF16_PB / 2 : NULL;
    for (int64_t k0 = 0; k0 < g->K; k0 += SDX__BKC) {
        int kc = (int)SDX__MIN((int64_t)SDX__BKC, g->K - k0), kp = (kc + 1) / 2;
        if (!panel_a) sdx__pack_rows_bf16(pa, pa_lo, a, g->a_dtype, g->K, m0, mp, mv, SDX__BMR, k0, kc, kp, tmp, t16);
        if (panel_b) { /* from the cache below */ }
        else if (g->b_kind == SDX__B_ROWS_T) sdx__pack_rows_bf16(pb, pb_lo, b, g->b_dtype, g->K, n0, np, nv, SDX__BNR, k0, kc, kp, tmp, t16);
        else sdx__pack_im2col_bf16(g, pb, pb_lo, b, n0, nv, np, k0, kc, kp, stage, t16, tmp);
        for (int i = 0; i < mp; i += SDX__BMR)
            as[i / SDX__BMR] = panel_a ? sdx__panel_strip(panel_a, g->M, g->K, SDX__BMR, m0 + i, k0, kp, kp, edge)
                                       : pa + (int64_t)i * kp;
        for (int j = 0; j < np; j += SDX__BNR)
            bs[j / SDX__BNR] = panel_b ? sdx__panel_strip(panel_b, g->N, g->K, SDX__BNR, n0 + j, k0, kp, kp, edge)
                                       : pb + (int64_t)j * kp;
        for (int j = 0; j < np; j += SDX__BNR)
            for (int i = 0; i < mp; i += SDX__BMR) {
                float *c = tile + (int64_t)i * SDX__NB + j;
                sdx__micro_bf16_avx512(kp, as[i / SDX__BMR], bs[j / SDX__BNR], c, SDX__NB, k0 > 0);
                if (pa_lo) sdx__micro_bf16_avx512(kp, pa_lo + (int64_t)i * kp, bs[j / SDX__BNR], c, SDX__NB, 1);
                if (pb_lo) sdx__micro_bf16_avx512(kp, as[i / SDX__BMR], pb_lo + (int64_t)j * kp, c, SDX__NB, 1);
            }
    }
    sdx__gemm_store(g, tile, SDX__NB, batch, m0, mv, n0, nv, bias_buf, tmp);
}

static void sdx__gemm_range_bf16(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__gemm_job_bf16((const sdx__gemm *)arg, j, thread);
}

/* ---- AMX: the same products on tile registers ------------------------ */
/* Where the CPU has AMX-BF16 (sdx__cpu_amx_bf16) bf16 mode runs its GEMMs
 * on TDPBF16PS, which multiplies a 16 x 32 bf16 tile by a 32 x 16 one
 * (16 pairs of k by 16 columns) into a 16 x 16 f32 tile: the pairwise
 * products of VDPBF16PS, sixteen times as many per instruction. B strips
 * are the AVX-512 kernel's (BNR = 32 columns, pairs of k), padded with
 * zero pairs to whole tiles; A is packed in whole 16 x 32 tiles (1 KiB,
 * row-major), which is also how a convolution's weight panel is cached
 * (SDX__PANEL_TILES). Jobs are larger than the f32 path's on the side of
 * the operand that is packed per job (the im2col of a convolution, the
 * activations of a linear) so that the packing is amortised over up to
 * 512 rows (columns) of the cached weight. */

#define SDX__ATILE      512      /* halves in an A tile (16 rows x 32)            */
#define SDX__AJOB_LONG  512      /* job rows (cols) on the packed operand's side */
#define SDX__AJOB_SHORT 128      /* job cols (rows) on the other side            */

/* Packs rows [row0, row0 + nvalid) of a row-major matrix (leading dim
 * ld), k in [k0, k0 + kc), rounded to bf16, as A tiles: dst[(r / 16) *
 * kt + t][r % 16][c] = v[row0 + r][k0 + 32 t + c], zero for rows past
 * nvalid (up to rows, a multiple of 16) and k past kc (up to 32 kt).
 * With lo (not NULL) the residuals of the rounding are packed the same
 * way at lo. tmp holds kc floats, t16 64 kt halves. */
static void sdx__pack_tiles_bf16(uint16_t *dst, uint16_t *lo, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                                 int rows, int nvalid, int64_t k0, int kc, int kt, float *tmp, uint16_t *t16) {
    uint16_t *t16lo = t16 + kt * 32;
    for (int r = 0; r < rows; r++) {
        int64_t at = (int64_t)(r / 16) * kt * SDX__ATILE + (r % 16) * 32;
        int have = r < nvalid ? kc : 0;
        if (have) sdx__row_bf16(t16, lo ? t16lo : NULL, src, dtype, ld, row0 + r, k0, kc, tmp);
        memset(t16 + have, 0, (size_t)(kt * 32 - have) * sizeof(uint16_t));
        if (lo) memset(t16lo + have, 0, (size_t)(kt * 32 - have) * sizeof(uint16_t));
        for (int t = 0; t < kt; t++) {
            memcpy(dst + at + (int64_t)t * SDX__ATILE, t16 + t * 32, 32 * sizeof(uint16_t));
            if (lo) memcpy(lo + at + (int64_t)t * SDX__ATILE, t16lo + t * 32, 32 * sizeof(uint16_t));
        }
    }
}

#ifdef SDX__AMX

SDX__INTRINSICS_WARNINGS_OFF

/* The im2col of a stride-1 convolution straight into bf16 pair strips
 * (the values of sdx__pack_im2col_bf16, without its f32 staging): the 16
 * pixels of each half strip fall into runs along output rows, and each
 * k reads every run with one masked load (lanes outside the image stay
 * zero, the padding). */
typedef struct { int lane, len; int64_t oy, ox; } sdx__im2col_run;

__attribute__((target("avx512f,avx512bw,avx512vl")))
static __m512 sdx__im2col_lanes(const sdx__gemm *g, const void *x, const sdx__im2col_run *runs, int nruns,
                                int64_t plane, int ky, int kx) {
    __m512 v = _mm512_setzero_ps();
    __m256i h = _mm256_setzero_si256();
    for (int r = 0; r < nruns; r++) {
        int64_t iy = runs[r].oy + ky - g->pad_top, ix0 = runs[r].ox + kx - g->pad_left;
        int64_t lo = SDX__MAX((int64_t)0, -ix0), hi = SDX__MIN((int64_t)runs[r].len, g->W - ix0);
        __mmask16 m;
        int64_t at;
        if (iy < 0 || iy >= g->H || lo >= hi) continue;
        m = (__mmask16)((((1u << hi) - 1u) & ~((1u << lo) - 1u)) << runs[r].lane);
        at = plane + iy * g->W + ix0 - runs[r].lane;      /* lane l reads element at + l */
        if (g->b_dtype == SDX_F32) v = _mm512_mask_loadu_ps(v, m, (const float *)x + at);
        else h = _mm256_mask_loadu_epi16(h, m, (const uint16_t *)x + at);
    }
    if (g->b_dtype == SDX_F16) v = _mm512_cvtph_ps(h);
    else if (g->b_dtype == SDX_BF16) v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return v;
}

/* The common case: one run of 16 pixels (one output row) per half. */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline))
static inline __m512 sdx__im2col_run16(const sdx__gemm *g, const void *x, const sdx__im2col_run *run, int64_t plane,
                                       int ky, int kx) {
    const int64_t iy = run->oy + ky - g->pad_top, ix0 = run->ox + kx - g->pad_left, at = plane + iy * g->W + ix0;
    const char *base = (const char *)x + at * (int64_t)sdx_dtype_size(g->b_dtype);
    __mmask16 m = 0xffff;
    if (iy < 0 || iy >= g->H) return _mm512_setzero_ps();
    /* two input channels ahead: planes are pages apart, which the
     * hardware prefetchers do not follow */
    _mm_prefetch(base + 2 * g->H * g->W * (int64_t)sdx_dtype_size(g->b_dtype), _MM_HINT_T0);
    _mm_prefetch(base + 2 * g->H * g->W * (int64_t)sdx_dtype_size(g->b_dtype) + 63, _MM_HINT_T0);
    if (ix0 < 0) m = (__mmask16)(m << -ix0);
    if (ix0 + 16 > g->W) m &= (__mmask16)((1u << SDX__MAX((int64_t)0, g->W - ix0)) - 1u);
    if (g->b_dtype == SDX_F32) return _mm512_maskz_loadu_ps(m, (const float *)x + at);
    if (g->b_dtype == SDX_F16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)x + at));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)x + at)), 16));
}

__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sdx__pack_im2col_bf16_s1(const sdx__gemm *g, uint32_t *dst, uint32_t *lo, const void *x, int64_t p0,
                                     int nvalid, int cols, int64_t k0, int kc, int kpad) {
    const int64_t khw = (int64_t)g->kh * g->kw, hw = g->H * g->W;
    const int kp = (kc + 1) / 2;
    for (int s = 0; s < cols; s += SDX__BNR) {
        uint32_t *strip = dst + (int64_t)s * kpad;
        sdx__im2col_run runs[2][16];
        int nruns[2] = { 0, 0 };
        int64_t c = k0 / khw, rem = k0 % khw;
        int ky = (int)(rem / g->kw), kx = (int)(rem % g->kw);
        for (int l = 0; l < SDX__BNR && s + l < nvalid; l++) {
            int64_t p = p0 + s + l, oy = p / g->Wo, ox = p % g->Wo;
            int half = l / 16, n = nruns[half];
            if (n > 0 && runs[half][n - 1].oy == oy) runs[half][n - 1].len++;
            else { runs[half][n].lane = l % 16; runs[half][n].len = 1; runs[half][n].oy = oy; runs[half][n].ox = ox; nruns[half]++; }
        }
        int whole = nruns[0] == 1 && nruns[1] == 1 && runs[0][0].len == 16 && runs[1][0].len == 16;
        for (int j = 0; j < kp; j++) {
            __m512 v[2][2];         /* [even, odd k][half] */
            for (int e = 0; e < 2; e++) {
                for (int half = 0; half < 2; half++)
                    v[e][half] = e && 2 * j + 1 >= kc ? _mm512_setzero_ps()
                               : whole ? sdx__im2col_run16(g, x, &runs[half][0], c * hw, ky, kx)
                                       : sdx__im2col_lanes(g, x, runs[half], nruns[half], c * hw, ky, kx);
                if (++kx == g->kw) { kx = 0; if (++ky == g->kh) { ky = 0; c++; } }
            }
            for (int half = 0; half < 2; half++) {
                __m512i even = sdx__bf16_round512(v[0][half]), odd = sdx__bf16_round512(v[1][half]);
                int64_t at = (int64_t)s * kpad + (int64_t)j * SDX__BNR + half * 16;
                _mm512_storeu_si512((void *)(dst + at), _mm512_or_si512(even, _mm512_slli_epi32(odd, 16)));
                if (lo)
                    _mm512_storeu_si512((void *)(lo + at),
                                        _mm512_or_si512(sdx__bf16_residual512(v[0][half], even),
                                                        _mm512_slli_epi32(sdx__bf16_residual512(v[1][half], odd), 16)));
            }
        }
        memset(strip + (int64_t)kp * SDX__BNR, 0, (size_t)(kpad - kp) * SDX__BNR * sizeof(uint32_t));
        if (lo) memset(lo + (int64_t)s * kpad + (int64_t)kp * SDX__BNR, 0, (size_t)(kpad - kp) * SDX__BNR * sizeof(uint32_t));
    }
}

SDX__INTRINSICS_WARNINGS_ON

/* Palette 1, tiles 0-7 all 16 rows of 64 bytes: C tiles 0-3 (16 x 16
 * f32), A tiles 4-5, B tiles 6-7. */
static const unsigned char sdx__amx_config[64] = {
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    16, 16, 16, 16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* The instructions are written out (gcc's intrinsics tell the compiler
 * the tile configuration is 8 bytes, and loads and stores do not touch
 * memory); "memory" keeps packing stores before the tile loads. */
#define SDX__TILE_LOAD(t, p, stride) \
    __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm" #t : : "r"(p), "r"((int64_t)(stride)) : "memory")
#define SDX__TILE_STORE(t, p, stride) \
    __asm__ __volatile__("tilestored %%tmm" #t ", (%0,%1,1)" : : "r"(p), "r"((int64_t)(stride)) : "memory")
#define SDX__TILE_ZERO(t) __asm__ __volatile__("tilezero %%tmm" #t : : : "memory")
#define SDX__TILE_DP(c, a, b) __asm__ __volatile__("tdpbf16ps %%tmm" #b ", %%tmm" #a ", %%tmm" #c : : : "memory")

/* C[32 x 32] (+)= A B over kt steps of 32 k: a0, a1 the A tiles of rows
 * 0-15 and 16-31 (consecutive per step), b a 32-column pair strip. A split
 * operand also adds the products of its lo part: A's tiles a_lo halves
 * on, or B's strip b_lo words on (0: none). With both split the sum is
 * hi hi' + hi lo' + lo hi' (lo lo' is below f32's rounding). */
static void sdx__amx_32x32(int kt, const uint16_t *a0, const uint16_t *a1, const uint32_t *b, int64_t a_lo, int64_t b_lo,
                           float *c, int64_t ldc, int accumulate) {
    const int64_t cs = ldc * (int64_t)sizeof(float);
    float *c1 = c + 16, *c2 = c + 16 * ldc, *c3 = c2 + 16;
    if (accumulate) {
        SDX__TILE_LOAD(0, c, cs); SDX__TILE_LOAD(1, c1, cs); SDX__TILE_LOAD(2, c2, cs); SDX__TILE_LOAD(3, c3, cs);
    } else {
        SDX__TILE_ZERO(0); SDX__TILE_ZERO(1); SDX__TILE_ZERO(2); SDX__TILE_ZERO(3);
    }
    for (int t = 0; t < kt; t++, a0 += SDX__ATILE, a1 += SDX__ATILE, b += 16 * SDX__BNR) {
        const uint32_t *b1 = b + 16;
        SDX__TILE_LOAD(4, a0, 64);
        SDX__TILE_LOAD(6, b, SDX__BNR * 4);
        SDX__TILE_DP(0, 4, 6);
        SDX__TILE_LOAD(7, b1, SDX__BNR * 4);
        SDX__TILE_DP(1, 4, 7);
        SDX__TILE_LOAD(5, a1, 64);
        SDX__TILE_DP(2, 5, 6);
        SDX__TILE_DP(3, 5, 7);
        if (b_lo) {
            SDX__TILE_LOAD(6, b + b_lo, SDX__BNR * 4);
            SDX__TILE_DP(0, 4, 6);
            SDX__TILE_DP(2, 5, 6);
            SDX__TILE_LOAD(7, b1 + b_lo, SDX__BNR * 4);
            SDX__TILE_DP(1, 4, 7);
            SDX__TILE_DP(3, 5, 7);
            if (a_lo) { SDX__TILE_LOAD(6, b, SDX__BNR * 4); SDX__TILE_LOAD(7, b1, SDX__BNR * 4); }
        }
        if (a_lo) {
            SDX__TILE_LOAD(4, a0 + a_lo, 64);
            SDX__TILE_DP(0, 4, 6);
            SDX__TILE_DP(1, 4, 7);
            SDX__TILE_LOAD(5, a1 + a_lo, 64);
            SDX__TILE_DP(2, 5, 6);
            SDX__TILE_DP(3, 5, 7);
        }
    }
    SDX__TILE_STORE(0, c, cs); SDX__TILE_STORE(1, c1, cs); SDX__TILE_STORE(2, c2, cs); SDX__TILE_STORE(3, c3, cs);
}

/* Per-thread scratch of an AMX job, in this order. */
#define SDX__AMX_PA    ((size_t)SDX__AJOB_LONG * SDX__BKC / 2)      /* words: A tiles       */
#define SDX__AMX_PB    ((size_t)SDX__BKC * SDX__AJOB_LONG)          /* words: B strips, hi + lo */
#define SDX__AMX_TILE  ((size_t)SDX__AJOB_LONG * SDX__AJOB_SHORT)   /* floats: C tile       */
#define SDX__AMX_TMP   ((size_t)SDX__AJOB_LONG + SDX__BKC + 64)     /* floats: one row      */

static size_t sdx__gemm_amx_scratch_bytes(void) {
    return (SDX__AMX_PA + SDX__AMX_PB) * sizeof(uint32_t)
         + (SDX__AMX_TILE + SDX__AMX_TMP + SDX__AJOB_LONG + SDX__BF16_STAGE) * sizeof(float)
         + (2 * SDX__BF16_STAGE + 2) * sizeof(uint16_t) + 256;
}

static void sdx__gemm_job_amx(const sdx__gemm *g, int64_t job, int thread) {
    uint32_t *pb = (uint32_t *)sdx__scratch_f32(g->ctx, thread);
    uint16_t *pa = (uint16_t *)(pb + SDX__AMX_PB);
    float *tile = (float *)(pa + 2 * SDX__AMX_PA);
    float *tmp = tile + SDX__AMX_TILE, *bias_buf = tmp + SDX__AMX_TMP, *stage = bias_buf + SDX__AJOB_LONG;
    uint16_t *t16 = (uint16_t *)(stage + SDX__BF16_STAGE);
    int64_t per_batch = g->m_tiles * g->n_tiles;
    int64_t batch = job / per_batch, rest = job % per_batch;
    int64_t m0 = (rest / g->n_tiles) * g->mb, n0 = (rest % g->n_tiles) * g->nb;
    int mv = (int)SDX__MIN(g->mb, g->M - m0), nv = (int)SDX__MIN(g->nb, g->N - n0);
    int mp = (mv + 31) / 32 * 32, np = (nv + 31) / 32 * 32;
    int64_t KT = (g->K + 31) / 32;
    const void *a = (const char *)g->a + (size_t)(batch * g->a_bstride) * sdx_dtype_size(g->a_dtype);
    const void *b = (const char *)g->b + (size_t)(batch * g->b_bstride) * sdx_dtype_size(g->b_dtype);
    const uint16_t *panel_a = g->weight_is_a ? (const uint16_t *)g->panel : NULL;
    const uint32_t *panel_b = g->weight_is_a ? NULL : g->panel;
    int split_a = g->split && !g->weight_is_a, split_b = g->split && g->weight_is_a;
    for (int64_t k0 = 0; k0 < g->K; k0 += SDX__BKC) {
        int kc = (int)SDX__MIN((int64_t)SDX__BKC, g->K - k0), kp = (kc + 1) / 2, kt = (kc + 31) / 32, kpad = kt * 16;
        const uint16_t *at = pa;
        int64_t a_rs = (int64_t)kt * SDX__ATILE;          /* halves from one 16-row block to the next */
        int64_t a_lo = split_a ? (int64_t)mp / 16 * a_rs : 0, b_lo = split_b ? (int64_t)np * kpad : 0;
        if (panel_a) {
            at = panel_a + ((m0 / 16) * KT + k0 / 32) * SDX__ATILE;
            a_rs = KT * SDX__ATILE;
        } else {
            sdx__pack_tiles_bf16(pa, split_a ? pa + a_lo : NULL, a, g->a_dtype, g->K, m0, mp, mv, k0, kc, kt, tmp, t16);
        }
        if (panel_b) { /* strip by strip below */ }
        else if (g->b_kind == SDX__B_ROWS_T)
            sdx__pack_rows_bf16(pb, split_b ? pb + b_lo : NULL, b, g->b_dtype, g->K, n0, np, nv, SDX__BNR, k0, kc, kpad, tmp, t16);
        else if (g->stride == 1) sdx__pack_im2col_bf16_s1(g, pb, split_b ? pb + b_lo : NULL, b, n0, nv, np, k0, kc, kpad);
        else sdx__pack_im2col_bf16(g, pb, split_b ? pb + b_lo : NULL, b, n0, nv, np, k0, kc, kpad, stage, t16, tmp);
        for (int j = 0; j < np; j += SDX__BNR) {
            const uint32_t *bs = pb + (int64_t)j * kpad;
            if (panel_b) bs = sdx__panel_strip(panel_b, g->N, g->K, SDX__BNR, n0 + j, k0, kp, kpad, pb + (int64_t)j * kpad);
            for (int i = 0; i < mp; i += 32)
                sdx__amx_32x32(kt, at + (i / 16) * a_rs, at + (i / 16 + 1) * a_rs, bs, a_lo, b_lo,
                               tile + (int64_t)i * g->nb + j, g->nb, k0 > 0);
        }
    }
    sdx__gemm_store(g, tile, (int)g->nb, batch, m0, mv, n0, nv, bias_buf, tmp);
}

static void sdx__gemm_range_amx(void *arg, int64_t begin, int64_t end, int thread) {
    __asm__ __volatile__("ldtilecfg %0" : : "m"(sdx__amx_config) : "memory");
    for (int64_t j = begin; j < end; j++) sdx__gemm_job_amx((const sdx__gemm *)arg, j, thread);
    __asm__ __volatile__("tilerelease" : : : "memory");    /* the OS need not save the tiles */
}

#endif /* SDX__AMX */

typedef struct {
    sdx_ctx *ctx; uint32_t *panel; const void *src; sdx_dtype dtype; int64_t rows, K;
    int width;       /* rows per strip (one job); 16 with tiles */
    int tiles;       /* SDX__PANEL_TILES layout: rows padded to 32, K to 32 */
} sdx__panel_args;

static void sdx__panel_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__panel_args *p = (const sdx__panel_args *)arg;
    float *tmp = sdx__scratch_f32(p->ctx, thread);
    uint16_t *t16 = (uint16_t *)(tmp + p->K + 16);
    int64_t kt = (p->K + 31) / 32;
    for (int64_t s = begin; s < end; s++) {
        int64_t r0 = s * p->width;
        int w = (int)SDX__MIN((int64_t)p->width, p->rows - r0);
        if (p->tiles)
            sdx__pack_tiles_bf16((uint16_t *)p->panel + r0 * kt * 32, NULL, p->src, p->dtype, p->K, r0, 16, SDX__MAX(w, 0), 0,
                                 (int)p->K, (int)kt, tmp, t16);
        else
            sdx__pack_rows_bf16(p->panel + r0 * ((p->K + 1) / 2), NULL, p->src, p->dtype, p->K, r0, w, w, w, 0, (int)p->K,
                                (int)((p->K + 1) / 2), tmp, t16);
    }
}

/* The weight operand's cached panel of `kind`, packed now on first use;
 * NULL when the weight is no registered slot (or the panel cannot be
 * had), and the jobs then pack it block by block into the same values. */
static const uint32_t *sdx__weight_panel(sdx_ctx *ctx, const sdx__gemm *g, int kind) {
    sdx__panel_args p;
    sdx__wcache_entry *e = g->weight ? sdx__wcache_find(ctx, g->weight) : NULL;
    size_t bytes, row_bytes;
    int64_t strips;
    if (!e || g->K > ((int64_t)1 << 24)) return NULL;
    if (e->panel && e->kind == kind) return (const uint32_t *)e->panel;
    sdx__wcache_drop(ctx, g->weight, 0);
    p.ctx = ctx;
    p.src = g->weight_is_a ? g->a : g->b;
    p.dtype = g->weight_is_a ? g->a_dtype : g->b_dtype;
    p.rows = g->weight_is_a ? g->M : g->N;
    p.K = g->K;
    p.tiles = kind == SDX__PANEL_TILES;
    p.width = p.tiles ? 16 : g->weight_is_a ? SDX__BMR : SDX__BNR;
    row_bytes = p.tiles ? (size_t)((p.K + 31) / 32 * 32) * sizeof(uint16_t) : (size_t)((p.K + 1) / 2) * sizeof(uint32_t);
    strips = p.tiles ? (p.rows + 31) / 32 * 2 : (p.rows + p.width - 1) / p.width;
    if (!sdx__mul_size((size_t)(p.tiles ? strips * 16 : p.rows), row_bytes, &bytes)) return NULL;
    p.panel = (uint32_t *)sdx__malloc(ctx, bytes);
    if (!p.panel) return NULL;
    if (sdx__scratch_reserve(ctx, (size_t)(p.K + 16) * sizeof(float) + (size_t)(p.K + 34) * sizeof(uint16_t)) != SDX_OK) {
        sdx__free(ctx, p.panel);
        return NULL;
    }
    sdx__parallel_for(ctx, strips, sdx__panel_range, &p);
    e->panel = p.panel;
    e->bytes = bytes;
    e->kind = kind;
    /* a view of the file: its pages are read again only if another kernel
     * (Winograd, a device upload) needs the values themselves */
    if (e->map) sdx__map_release(e->map, g->weight->data, sdx_tensor_nbytes(g->weight));
    return p.panel;
}

/* AMX job shape: up to SDX__AJOB_LONG on the side whose operand is packed
 * per job, split evenly (multiples of 32) and further while there are
 * fewer than two jobs per thread. */
#ifdef SDX__AMX
static int sdx__gemm_run_amx(sdx_ctx *ctx, sdx__gemm *g) {
    int64_t L = g->weight_is_a ? g->M : g->N, S = g->weight_is_a ? g->N : g->M;
    int64_t s_tiles = (S + SDX__AJOB_SHORT - 1) / SDX__AJOB_SHORT, splits = (L + SDX__AJOB_LONG - 1) / SDX__AJOB_LONG;
    int64_t l_size;
    int rc;
    g->panel = sdx__weight_panel(ctx, g, g->weight_is_a ? SDX__PANEL_TILES : SDX__PANEL_B);
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_amx_scratch_bytes())) != SDX_OK) return rc;
    while (g->batch * splits * s_tiles < 2 * (int64_t)sdx_threads(ctx) && splits * 32 < L) splits++;
    l_size = ((L + splits - 1) / splits + 31) / 32 * 32;
    g->mb = g->weight_is_a ? l_size : SDX__AJOB_SHORT;
    g->nb = g->weight_is_a ? SDX__AJOB_SHORT : l_size;
    g->m_tiles = (g->M + g->mb - 1) / g->mb;
    g->n_tiles = (g->N + g->nb - 1) / g->nb;
    sdx__parallel_for(ctx, g->batch * g->m_tiles * g->n_tiles, sdx__gemm_range_amx, g);
    return SDX_OK;
}
#endif

static int sdx__gemm_run_bf16(sdx_ctx *ctx, sdx__gemm *g) {
    int rc;
    g->ctx = ctx;
    g->split = !ctx->kernels->bf16_round_act && (g->weight_is_a ? g->b_dtype : g->a_dtype) != SDX_BF16;
#ifdef SDX__AMX
    if (ctx->kernels->bf16_amx) return sdx__gemm_run_amx(ctx, g);
#endif
    g->panel = sdx__weight_panel(ctx, g, g->weight_is_a ? SDX__PANEL_A : SDX__PANEL_B);
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_bf16_scratch_bytes())) != SDX_OK) return rc;
    g->m_tiles = (g->M + SDX__MB - 1) / SDX__MB;
    g->n_tiles = (g->N + SDX__NB - 1) / SDX__NB;
    sdx__parallel_for(ctx, g->batch * g->m_tiles * g->n_tiles, sdx__gemm_range_bf16, g);
    return SDX_OK;
}

#endif /* SDX__X86 */

/* ---- linear ------------------------------------------------------------ */

static int sdx__cpu_linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b) {
    static const char op[] = "linear";
    sdx__gemm g;
    int rc;
    SDX__CHECK(ctx, op, y, x, w, b);
    if (w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
        return sdx__fail_shapes(ctx, op, "x's last dim must equal w's in-features", x, "x", w, "w [out, in]");
    if (y->ndim != x->ndim || y->shape[y->ndim - 1] != w->shape[0])
        return sdx__fail_shapes(ctx, op, "y must be x's shape with last dim = w's out-features", y, "y", w, "w");
    for (int i = 0; i + 1 < x->ndim; i++)
        if (y->shape[i] != x->shape[i]) return sdx__fail_shapes(ctx, op, "y's leading dims differ from x's", y, "y", x, "x");
    if (b && sdx_tensor_numel(b) != w->shape[0])
        return sdx__fail_shapes(ctx, op, "bias size must equal out-features", b, "b", w, "w");
    memset(&g, 0, sizeof g);
    g.K = w->shape[1];
    g.N = w->shape[0];
    g.M = g.K ? sdx_tensor_numel(x) / g.K : sdx_tensor_numel(y) / SDX__MAX((int64_t)1, g.N);
    g.batch = 1;
    g.a = x->data; g.a_dtype = x->dtype;
    g.b_kind = SDX__B_ROWS_T; g.b = w->data; g.b_dtype = w->dtype;
    g.y = y->data; g.y_dtype = y->dtype;
    g.bias = b; g.bias_per_row = 0;
    g.weight = w; g.weight_is_a = 0;
    if ((rc = sdx__gemm_run(ctx, &g)) != SDX_OK) return rc;
    return sdx__trace_check(ctx, op, y);
}

/* ---- conv2d: direct ---------------------------------------------------- */

/* The im2col GEMM, any kernel and stride. Shapes were checked by the caller. */
static int sdx__conv2d_direct(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                              int stride, int pad_top, int pad_left) {
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
 * chunk of output channels at a time (at most SDX__WINO_U_BYTES), already
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
#define SDX__WINO_U_BYTES ((size_t)32 << 20)  /* transformed filters, per chunk */
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
#define SDX__WCB 16       /* input channels widened at a time          */

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
static void sdx__wino_filter_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__wino_ft *f = (const sdx__wino_ft *)arg;
    const int64_t ostrips = (f->on + SDX__MR - 1) / SDX__MR, xstride = ostrips * f->C * SDX__MR;
    float *g = sdx__scratch_f32(f->ctx, thread);     /* [MR][WCB * 9] */
    float gl[9 * SDX__WL], t[18 * SDX__WL], v[36 * SDX__WL];
    for (int64_t strip = begin; strip < end; strip++) {
        const int64_t o0 = strip * SDX__MR;
        const int live = (int)SDX__MIN((int64_t)SDX__MR, f->on - o0);
        float *u = f->u + strip * f->C * SDX__MR;
        for (int64_t c0 = 0; c0 < f->C; c0 += SDX__WCB) {
            const int nc = (int)SDX__MIN((int64_t)SDX__WCB, f->C - c0);
            for (int l = 0; l < live; l++)
                sdx__load_f32(f->w->data, f->w->dtype, ((f->o0 + o0 + l) * f->C + c0) * 9, nc * 9, g + l * SDX__WCB * 9);
            for (int c = 0; c < nc; c++) {
                for (int e = 0; e < 9; e++)
                    for (int l = 0; l < SDX__WL; l++) gl[e * SDX__WL + l] = l < live ? g[(l * SDX__WCB + c) * 9 + e] : 0.0f;
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

/* Context-owned buffer for the transformed filters, grown as needed. */
static float *sdx__wino_u_buffer(sdx_ctx *ctx, size_t bytes) {
    sdx__kernel_state *s = sdx__kernel_state_get(ctx);
    if (!s) { sdx__nomem(ctx, "kernel state", sizeof *s); return NULL; }
    if (s->wino_bytes < bytes) {
        sdx__free(ctx, s->wino_u);
        s->wino_bytes = 0;
        if (!(s->wino_u = (float *)sdx__malloc(ctx, bytes))) { sdx__nomem(ctx, "winograd filters", bytes); return NULL; }
        s->wino_bytes = bytes;
    }
    return s->wino_u;
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
static int sdx__amx_computes(sdx_ctx *ctx) {
    return ctx->compute == SDX_BF16 && sdx__bf16_usable(ctx) && ctx->kernels->bf16_amx;
}

/* y = conv3x3(x, w) + b, stride 1, pads (pt, pl) on top/left (bottom and
 * right follow from y's shape). Shapes were checked by the caller. In
 * bf16 mode on AMX the products run on tiles (see above). */
static int sdx__conv2d_winograd(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w,
                                const sdx_tensor *b, int pt, int pl) {
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
    if (wi.C == 0) return sdx__conv2d_direct(ctx, y, x, w, b, 1, pt, pl);
#ifdef SDX__AMX
    amx = sdx__amx_computes(ctx);
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
    scratch = SDX__MAX(scratch, (size_t)(amx ? wi.C * 9 : SDX__MR * SDX__WCB * 9) * sizeof(float)) + 256;
    if ((rc = sdx__scratch_reserve(ctx, scratch)) != SDX_OK) return rc;
#ifdef SDX__X86
    wi.vec16 = !ctx->kernels->pack_scalar && sdx__have_avx512f();
#endif
    per_o = 36 * (amx ? wi.cp : wi.C) * (int64_t)sizeof(float);
    chunk = SDX__MAX(ob, (int64_t)(SDX__WINO_U_BYTES / (size_t)per_o) / ob * ob);
    chunk = SDX__MIN(chunk, (O + orow - 1) / orow * orow);
    if (!(wi.u = sdx__wino_u_buffer(ctx, (size_t)(chunk * per_o)))) return SDX_ERR_NOMEM;
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
static int sdx__wino_pays(sdx_ctx *ctx, const sdx_tensor *x, const sdx_tensor *w, int stride, int64_t ho, int64_t wo) {
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
    (void)ctx; (void)x; (void)w; (void)stride; (void)ho; (void)wo;
    return 0;   /* the half-accumulation emulation models direct convolution */
#else
    const int64_t c = x->shape[1], o = w->shape[0], pixels = ho * wo;
    if (w->shape[2] != 3 || w->shape[3] != 3 || stride != 1) return 0;
    if (sdx__amx_computes(ctx))     /* the filter transform needs ~200 tiles to pay */
        return c >= SDX__WINO_MIN_C && o >= SDX__WINO_MIN_C && x->shape[0] * ((ho + 3) / 4) * ((wo + 3) / 4) >= SDX__WA_MIN_TILES;
    return (c >= SDX__WINO_MIN_C && o >= SDX__WINO_MIN_C && pixels >= SDX__WINO_MIN_PIXELS) ||
           (c >= SDX__WINO_WIDE_C && o >= SDX__WINO_WIDE_C && pixels >= SDX__WINO_WIDE_PIXELS);
#endif
}

/* ---- conv2d ------------------------------------------------------------ */

static int sdx__cpu_conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           int stride, int pad_top, int pad_left, int pad_bottom, int pad_right) {
    static const char op[] = "conv2d";
    int64_t ho, wo;
    int rc;
    SDX__CHECK(ctx, op, y, x, w, b);
    if (stride < 1 || pad_top < 0 || pad_left < 0 || pad_bottom < 0 || pad_right < 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: stride %d must be >= 1 and pads (%d, %d, %d, %d) >= 0",
                         op, stride, pad_top, pad_left, pad_bottom, pad_right);
    if (x->ndim != 4 || w->ndim != 4 || x->shape[1] != w->shape[1] || w->shape[2] < 1 || w->shape[3] < 1)
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and w [O, C, kh, kw]", x, "x", w, "w");
    ho = x->shape[2] + pad_top + pad_bottom - w->shape[2];
    wo = x->shape[3] + pad_left + pad_right - w->shape[3];
    if (ho < 0 || wo < 0)
        return sdx__fail_shapes(ctx, op, "kernel larger than the padded input", x, "x", w, "w");
    ho = ho / stride + 1;
    wo = wo / stride + 1;
    if (y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != w->shape[0] || y->shape[2] != ho || y->shape[3] != wo) {
        char want[128];
        snprintf(want, sizeof want, "y must be [%lld, %lld, %lld, %lld]", (long long)x->shape[0],
                 (long long)w->shape[0], (long long)ho, (long long)wo);
        return sdx__fail_shapes(ctx, op, want, y, "y", x, "x");
    }
    if (b && sdx_tensor_numel(b) != w->shape[0])
        return sdx__fail_shapes(ctx, op, "bias size must equal out-channels", b, "b", w, "w");
    if (sdx__wino_pays(ctx, x, w, stride, ho, wo))
        rc = sdx__conv2d_winograd(ctx, y, x, w, b, pad_top, pad_left);
    else rc = sdx__conv2d_direct(ctx, y, x, w, b, stride, pad_top, pad_left);
    if (rc != SDX_OK) return rc;
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_conv2d(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                       int stride, int pad) {
    return sdx__cpu_conv2d_pad(ctx, y, x, w, b, stride, pad, pad, pad, pad);
}

/* ===================================================================== */
/*  Elementwise ops                                                        */
/* ===================================================================== */

#define SDX__CHUNK 1024             /* floats per stack buffer            */
#define SDX__PAR_GRAIN 16384        /* elements per parallel work item    */

typedef enum { SDX__OP_SILU, SDX__OP_GELU, SDX__OP_QUICK_GELU, SDX__OP_SCALE, SDX__OP_COPY,
               SDX__OP_ADD, SDX__OP_MUL } sdx__ew_op;

typedef struct sdx__ew {
    sdx__ew_op op;
    int fast;               /* bf16 mode: SiLU and GELU 16 lanes at a time */
    sdx_tensor *y;
    const sdx_tensor *a, *b;
    float s;
} sdx__ew;

/* Whether bf16 mode's faster SiLU / GELU applies here (ctx->compute). */
static int sdx__act_fast_mode(sdx_ctx *ctx) {
#ifdef SDX__X86
    return ctx->compute == SDX_BF16 && sdx__bf16_usable(ctx);
#else
    (void)ctx;
    return 0;
#endif
}

/* v = op(v, w) over n values; `fast` (sdx__act_fast_mode) takes bf16
 * mode's SiLU and GELU. */
static void sdx__ew_apply(sdx__ew_op op, float *v, const float *w, int64_t n, float s, int fast) {
#ifdef SDX__X86
    if (fast && op == SDX__OP_SILU) { sdx__silu_n_avx512(v, n); return; }
    if (fast && op == SDX__OP_GELU) { sdx__gelu_n_avx512(v, n); return; }
#else
    (void)fast;
#endif
    switch (op) {
    case SDX__OP_SILU: for (int64_t i = 0; i < n; i++) v[i] = v[i] / (1.0f + expf(-v[i])); break;
    case SDX__OP_GELU: for (int64_t i = 0; i < n; i++) v[i] = 0.5f * v[i] * (1.0f + erff(v[i] * 0.70710678118654752f)); break;
    case SDX__OP_QUICK_GELU: for (int64_t i = 0; i < n; i++) v[i] = v[i] / (1.0f + expf(-1.702f * v[i])); break;
    case SDX__OP_SCALE: for (int64_t i = 0; i < n; i++) v[i] *= s; break;
    case SDX__OP_COPY: break;
    case SDX__OP_ADD: for (int64_t i = 0; i < n; i++) v[i] += w[i]; break;
    case SDX__OP_MUL: for (int64_t i = 0; i < n; i++) v[i] *= w[i]; break;
    }
}

static void sdx__ew_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__ew *e = (const sdx__ew *)arg;
    float va[SDX__CHUNK], vb[SDX__CHUNK];
    int64_t total = sdx_tensor_numel(e->y);
    (void)thread;
    for (int64_t i = begin * SDX__PAR_GRAIN; i < SDX__MIN(end * SDX__PAR_GRAIN, total); i += SDX__CHUNK) {
        int64_t n = SDX__MIN((int64_t)SDX__CHUNK, SDX__MIN(end * SDX__PAR_GRAIN, total) - i);
        sdx__load_f32(e->a->data, e->a->dtype, i, n, va);
        if (e->b) sdx__load_f32(e->b->data, e->b->dtype, i, n, vb);
        sdx__ew_apply(e->op, va, vb, n, e->s, e->fast);
        sdx__store_f32(e->y->data, e->y->dtype, i, n, va);
    }
}

static int sdx__ew_run(sdx_ctx *ctx, const char *op, sdx__ew_op kind, sdx_tensor *y, const sdx_tensor *a,
                       const sdx_tensor *b, float s) {
    sdx__ew e;
    int64_t n = sdx_tensor_numel(y);
    SDX__CHECK(ctx, op, y, a, b);
    if (sdx_tensor_numel(a) != n) return sdx__fail_shapes(ctx, op, "element counts differ", y, "y", a, "x");
    if (b && sdx_tensor_numel(b) != n) return sdx__fail_shapes(ctx, op, "element counts differ", a, "a", b, "b");
    e.op = kind; e.y = y; e.a = a; e.b = b; e.s = s;
    e.fast = sdx__act_fast_mode(ctx);
    sdx__parallel_for(ctx, (n + SDX__PAR_GRAIN - 1) / SDX__PAR_GRAIN, sdx__ew_range, &e);
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_silu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "silu", SDX__OP_SILU, y, x, NULL, 0); }
static int sdx__cpu_gelu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "gelu", SDX__OP_GELU, y, x, NULL, 0); }
static int sdx__cpu_quick_gelu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "quick_gelu", SDX__OP_QUICK_GELU, y, x, NULL, 0); }
static int sdx__cpu_scale(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) { return sdx__ew_run(ctx, "scale", SDX__OP_SCALE, y, x, NULL, s); }
static int sdx__cpu_copy(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "copy", SDX__OP_COPY, y, x, NULL, 0); }
static int sdx__cpu_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__ew_run(ctx, "add", SDX__OP_ADD, y, a, b, 0);
}
static int sdx__cpu_mul(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__ew_run(ctx, "mul", SDX__OP_MUL, y, a, b, 0);
}

/* ---- clamps ------------------------------------------------------------ */
/* y = min(max(x, lo), hi), NaN stays NaN (ReLU is lo 0, hi +inf), and
 * the soft clamp y = tanh(x / limit) * limit (TAESD's decoder input). */

typedef struct { sdx_tensor *y; const sdx_tensor *x; float lo, hi, limit; } sdx__clamp_args;

static void sdx__clamp_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__clamp_args *a = (const sdx__clamp_args *)arg;
    float v[SDX__CHUNK];
    int64_t total = sdx_tensor_numel(a->y), stop = SDX__MIN(end * SDX__PAR_GRAIN, total);
    (void)thread;
    for (int64_t i = begin * SDX__PAR_GRAIN; i < stop; i += SDX__CHUNK) {
        int64_t n = SDX__MIN((int64_t)SDX__CHUNK, stop - i);
        sdx__load_f32(a->x->data, a->x->dtype, i, n, v);
        if (a->limit > 0) {
            for (int64_t j = 0; j < n; j++) v[j] = tanhf(v[j] / a->limit) * a->limit;
        } else {
            for (int64_t j = 0; j < n; j++) v[j] = v[j] < a->lo ? a->lo : v[j] > a->hi ? a->hi : v[j];
        }
        sdx__store_f32(a->y->data, a->y->dtype, i, n, v);
    }
}

static int sdx__clamp_run(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, float lo, float hi, float limit) {
    sdx__clamp_args a;
    int64_t n = sdx_tensor_numel(y);
    SDX__CHECK(ctx, op, y, x);
    if (sdx_tensor_numel(x) != n) return sdx__fail_shapes(ctx, op, "element counts differ", y, "y", x, "x");
    a.y = y; a.x = x; a.lo = lo; a.hi = hi; a.limit = limit;
    sdx__parallel_for(ctx, (n + SDX__PAR_GRAIN - 1) / SDX__PAR_GRAIN, sdx__clamp_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* y may alias x; the bounds were checked in ops.c. */
static int sdx__cpu_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    return sdx__clamp_run(ctx, "clamp", y, x, lo, hi, 0);
}

static int sdx__cpu_tanh_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    return sdx__clamp_run(ctx, "tanh_clamp", y, x, 0, 0, limit);
}

/* ---- geglu ------------------------------------------------------------- */

typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t d; int fast; } sdx__geglu_args;

static void sdx__geglu_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__geglu_args *g = (const sdx__geglu_args *)arg;
    float va[SDX__CHUNK], vg[SDX__CHUNK];
    (void)thread;
    for (int64_t r = begin; r < end; r++)
        for (int64_t j = 0; j < g->d; j += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, g->d - j);
            sdx__load_f32(g->x->data, g->x->dtype, r * 2 * g->d + j, n, va);
            sdx__load_f32(g->x->data, g->x->dtype, r * 2 * g->d + g->d + j, n, vg);
            sdx__ew_apply(SDX__OP_GELU, vg, NULL, n, 0, g->fast);
            for (int64_t i = 0; i < n; i++) va[i] *= vg[i];
            sdx__store_f32(g->y->data, g->y->dtype, r * g->d + j, n, va);
        }
}

static int sdx__cpu_geglu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "geglu";
    sdx__geglu_args g;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim < 1 || y->ndim != x->ndim || x->shape[x->ndim - 1] != 2 * y->shape[y->ndim - 1])
        return sdx__fail_shapes(ctx, op, "x's last dim must be twice y's", x, "x", y, "y");
    for (int i = 0; i + 1 < x->ndim; i++)
        if (y->shape[i] != x->shape[i]) return sdx__fail_shapes(ctx, op, "leading dims differ", x, "x", y, "y");
    g.y = y; g.x = x; g.d = y->shape[y->ndim - 1];
    g.fast = sdx__act_fast_mode(ctx);
    if (g.d > 0) sdx__parallel_for(ctx, sdx_tensor_numel(y) / g.d, sdx__geglu_range, &g);
    return sdx__trace_check(ctx, op, y);
}

/* ---- channel bias, upsample, concat, layout --------------------------- */

typedef struct { sdx_tensor *y; const sdx_tensor *x, *v; int64_t hw; } sdx__chan_args;

static void sdx__chan_bias_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__chan_args *a = (const sdx__chan_args *)arg;
    float buf[SDX__CHUNK];
    (void)thread;
    for (int64_t nc = begin; nc < end; nc++) {
        float bv = sdx__get_f32(a->v, nc);
        for (int64_t i = 0; i < a->hw; i += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->hw - i);
            sdx__load_f32(a->x->data, a->x->dtype, nc * a->hw + i, n, buf);
            for (int64_t j = 0; j < n; j++) buf[j] += bv;
            sdx__store_f32(a->y->data, a->y->dtype, nc * a->hw + i, n, buf);
        }
    }
}

static int sdx__cpu_add_channel_bias(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v) {
    static const char op[] = "add_channel_bias";
    sdx__chan_args a;
    SDX__CHECK(ctx, op, y, x, v);
    if (x->ndim < 2 || !sdx__same_shape(x, y) || sdx_tensor_numel(v) != x->shape[0] * x->shape[1])
        return sdx__fail_shapes(ctx, op, "expected y, x [N, C, ...] and v [N, C]", x, "x", v, "v");
    a.y = y; a.x = x; a.v = v;
    a.hw = x->shape[0] > 0 && x->shape[1] > 0 ? sdx_tensor_numel(x) / (x->shape[0] * x->shape[1]) : 0;
    sdx__parallel_for(ctx, x->shape[0] * x->shape[1], sdx__chan_bias_range, &a);
    return sdx__trace_check(ctx, op, y);
}

typedef struct { sdx_tensor *y; const sdx_tensor *x; } sdx__pair_args;

static void sdx__upsample_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__pair_args *a = (const sdx__pair_args *)arg;
    int64_t h = a->x->shape[2], w = a->x->shape[3];
    float in[SDX__CHUNK / 2], out[SDX__CHUNK];
    (void)thread;
    for (int64_t row = begin; row < end; row++) {         /* row = (n*C + c)*H + iy */
        int64_t nc = row / h, iy = row % h;
        for (int64_t x0 = 0; x0 < w; x0 += SDX__CHUNK / 2) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK / 2, w - x0);
            sdx__load_f32(a->x->data, a->x->dtype, row * w + x0, n, in);
            for (int64_t j = 0; j < n; j++) out[2 * j] = out[2 * j + 1] = in[j];
            for (int dy = 0; dy < 2; dy++)
                sdx__store_f32(a->y->data, a->y->dtype, (nc * 2 * h + 2 * iy + dy) * 2 * w + 2 * x0, 2 * n, out);
        }
    }
}

static int sdx__cpu_upsample2x(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "upsample2x";
    sdx__pair_args a;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
        y->shape[2] != 2 * x->shape[2] || y->shape[3] != 2 * x->shape[3])
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, 2H, 2W]", x, "x", y, "y");
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    a.y = y; a.x = x;
    sdx__parallel_for(ctx, x->shape[0] * x->shape[1] * x->shape[2], sdx__upsample_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Nearest-neighbour resize to any size, as torch's interpolate(mode=
 * "nearest"): source index floor(dst * in / out). Exact doubling takes
 * the upsample path; other sizes occur only for latents not divisible by
 * 2^(levels-1), so that path favours clarity over speed. */
typedef struct { sdx_ctx *ctx; sdx_tensor *y; const sdx_tensor *x; } sdx__resize_args;

static void sdx__resize_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__resize_args *a = (const sdx__resize_args *)arg;
    int64_t Hi = a->x->shape[2], Wi = a->x->shape[3], Ho = a->y->shape[2], Wo = a->y->shape[3];
    float *row_in = sdx__scratch_f32(a->ctx, thread), *row_out = row_in + Wi;
    for (int64_t r = begin; r < end; r++) {          /* r = (n*C + c)*Ho + i */
        int64_t p = r / Ho, i = r % Ho;
        sdx__load_f32(a->x->data, a->x->dtype, (p * Hi + i * Hi / Ho) * Wi, Wi, row_in);
        for (int64_t j = 0; j < Wo; j++) row_out[j] = row_in[j * Wi / Wo];
        sdx__store_f32(a->y->data, a->y->dtype, r * Wo, Wo, row_out);
    }
}

static int sdx__cpu_resize_nearest(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "resize_nearest";
    sdx__resize_args a;
    int rc;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
        (sdx_tensor_numel(y) > 0 && sdx_tensor_numel(x) == 0))
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, Ho, Wo]", x, "x", y, "y");
    if (y->shape[2] == 2 * x->shape[2] && y->shape[3] == 2 * x->shape[3]) return sdx__cpu_upsample2x(ctx, y, x);
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    if (sdx_tensor_numel(y) == 0) return SDX_OK;
    if ((rc = sdx__scratch_reserve(ctx, (size_t)(x->shape[3] + y->shape[3]) * sizeof(float))) != SDX_OK) return rc;
    a.ctx = ctx; a.y = y; a.x = x;
    sdx__parallel_for(ctx, y->shape[0] * y->shape[1] * y->shape[2], sdx__resize_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Copies n elements between two tensors of any storage dtypes. */
static void sdx__copy_elems(void *dst, sdx_dtype dt, int64_t doff, const void *src, sdx_dtype st, int64_t soff, int64_t n) {
    float buf[SDX__CHUNK];
    if (dt == st) {
        size_t es = sdx_dtype_size(dt);
        memcpy((char *)dst + (size_t)doff * es, (const char *)src + (size_t)soff * es, (size_t)n * es);
        return;
    }
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(src, st, soff + i, m, buf);
        sdx__store_f32(dst, dt, doff + i, m, buf);
    }
}

typedef struct { sdx_tensor *y; const sdx_tensor *a, *b; int64_t na, nb; } sdx__cat_args;

static void sdx__concat_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__cat_args *c = (const sdx__cat_args *)arg;
    (void)thread;
    for (int64_t n = begin; n < end; n++) {
        sdx__copy_elems(c->y->data, c->y->dtype, n * (c->na + c->nb), c->a->data, c->a->dtype, n * c->na, c->na);
        sdx__copy_elems(c->y->data, c->y->dtype, n * (c->na + c->nb) + c->na, c->b->data, c->b->dtype, n * c->nb, c->nb);
    }
}

static int sdx__cpu_concat_channels(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    static const char op[] = "concat_channels";
    sdx__cat_args c;
    SDX__CHECK(ctx, op, y, a, b);
    if (a->ndim != 4 || b->ndim != 4 || y->ndim != 4 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[2] ||
        a->shape[3] != b->shape[3] || y->shape[0] != a->shape[0] || y->shape[1] != a->shape[1] + b->shape[1] ||
        y->shape[2] != a->shape[2] || y->shape[3] != a->shape[3])
        return sdx__fail_shapes(ctx, op, "expected a [N, Ca, H, W], b [N, Cb, H, W], y [N, Ca+Cb, H, W]", a, "a", b, "b");
    c.y = y; c.a = a; c.b = b;
    c.na = a->shape[1] * a->shape[2] * a->shape[3];
    c.nb = b->shape[1] * b->shape[2] * b->shape[3];
    sdx__parallel_for(ctx, a->shape[0], sdx__concat_range, &c);
    return sdx__trace_check(ctx, op, y);
}

/* Transposes each of `batch` [rows, cols] matrices into [cols, rows], in
 * 32 x 32 tiles so both sides are read and written in cache lines. */
typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t rows, cols, tr, tc; } sdx__tr_args;

/* Circular padding (seamless tiling): y[n, c, i, j] = x[n, c, (i - top) mod H,
 * (j - left) mod W]; y is [N, C, H + top + bottom, W + left + right]. */
typedef struct { sdx_tensor *y; const sdx_tensor *x; int top, left; } sdx__pad_args;

static void sdx__pad_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__pad_args *a = (const sdx__pad_args *)arg;
    int64_t H = a->x->shape[2], W = a->x->shape[3], Ho = a->y->shape[2], Wo = a->y->shape[3];
    (void)thread;
    for (int64_t r = begin; r < end; r++) {            /* r = (n*C + c)*Ho + i */
        int64_t p = r / Ho, i = r % Ho;
        int64_t si = ((i - a->top) % H + H) % H, j = 0;
        while (j < Wo) {   /* runs of consecutive source columns */
            int64_t sj = ((j - a->left) % W + W) % W, run = SDX__MIN(W - sj, Wo - j);
            sdx__copy_elems(a->y->data, a->y->dtype, r * Wo + j, a->x->data, a->x->dtype, (p * H + si) * W + sj, run);
            j += run;
        }
    }
}

static int sdx__cpu_pad_circular(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    static const char op[] = "pad_circular";
    sdx__pad_args a;
    SDX__CHECK(ctx, op, y, x);
    if (top < 0 || left < 0 || bottom < 0 || right < 0 || x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] ||
        y->shape[1] != x->shape[1] || y->shape[2] != x->shape[2] + top + bottom || y->shape[3] != x->shape[3] + left + right ||
        (sdx_tensor_numel(y) > 0 && (x->shape[2] < 1 || x->shape[3] < 1)))
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, H + top + bottom, W + left + right]", x, "x", y, "y");
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    a.y = y; a.x = x; a.top = top; a.left = left;
    sdx__parallel_for(ctx, y->shape[0] * y->shape[1] * y->shape[2], sdx__pad_range, &a);
    return sdx__trace_check(ctx, op, y);
}

#define SDX__TT 32
static void sdx__transpose_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__tr_args *t = (const sdx__tr_args *)arg;
    float in[SDX__TT][SDX__TT], out[SDX__TT];
    (void)thread;
    for (int64_t job = begin; job < end; job++) {
        int64_t per = t->tr * t->tc, bat = job / per, r0 = (job % per) / t->tc * SDX__TT, c0 = (job % per) % t->tc * SDX__TT;
        int nr = (int)SDX__MIN((int64_t)SDX__TT, t->rows - r0), nc = (int)SDX__MIN((int64_t)SDX__TT, t->cols - c0);
        int64_t base = bat * t->rows * t->cols;
        for (int i = 0; i < nr; i++) sdx__load_f32(t->x->data, t->x->dtype, base + (r0 + i) * t->cols + c0, nc, in[i]);
        for (int j = 0; j < nc; j++) {
            for (int i = 0; i < nr; i++) out[i] = in[i][j];
            sdx__store_f32(t->y->data, t->y->dtype, base + (c0 + j) * t->rows + r0, nr, out);
        }
    }
}

static int sdx__transpose_batched(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x,
                                  int64_t batch, int64_t rows, int64_t cols) {
    sdx__tr_args t;
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    t.y = y; t.x = x; t.rows = rows; t.cols = cols;
    t.tr = (rows + SDX__TT - 1) / SDX__TT;
    t.tc = (cols + SDX__TT - 1) / SDX__TT;
    sdx__parallel_for(ctx, batch * t.tr * t.tc, sdx__transpose_range, &t);
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_nchw_to_nlc(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nchw_to_nlc";
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 4 || y->ndim != 3 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[2] * x->shape[3] ||
        y->shape[2] != x->shape[1])
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, H*W, C]", x, "x", y, "y");
    return sdx__transpose_batched(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2] * x->shape[3]);
}

static int sdx__cpu_nlc_to_nchw(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nlc_to_nchw";
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 3 || y->ndim != 4 || y->shape[0] != x->shape[0] || x->shape[1] != y->shape[2] * y->shape[3] ||
        x->shape[2] != y->shape[1])
        return sdx__fail_shapes(ctx, op, "expected x [N, H*W, C] and y [N, C, H, W]", x, "x", y, "y");
    return sdx__transpose_batched(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2]);
}

/* ===================================================================== */
/*  Normalisation and softmax                                             */
/* ===================================================================== */

/* Mean and biased variance of n values of a tensor starting at `off`:
 * two passes with double accumulation, so large offsets (|x| ~ 35 over
 * 10^5 elements) cost no precision. */
static void sdx__moments(const sdx_tensor *x, int64_t off, int64_t n, double *mean, double *var) {
    float buf[SDX__CHUNK];
#ifdef SDX_UNSAFE_HALF_NORM_STATS
    float s = 0, q = 0, m;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m2 = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(x->data, x->dtype, off + i, m2, buf);
        for (int64_t j = 0; j < m2; j++) s = sdx__round_f16(s + buf[j]);
    }
    m = sdx__round_f16(s / (float)n);
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m2 = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(x->data, x->dtype, off + i, m2, buf);
        for (int64_t j = 0; j < m2; j++) q = sdx__round_f16(q + sdx__round_f16((buf[j] - m) * (buf[j] - m)));
    }
    *mean = m;
    *var = sdx__round_f16(q / (float)n);
#else
    double s = 0, q = 0, m;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t c = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        float part = 0;     /* short f32 partial sums, exact enough and fast */
        sdx__load_f32(x->data, x->dtype, off + i, c, buf);
        for (int64_t j = 0; j < c; j++) part += buf[j];
        s += part;
    }
    m = n ? s / (double)n : 0.0;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t c = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        double part = 0;
        sdx__load_f32(x->data, x->dtype, off + i, c, buf);
        for (int64_t j = 0; j < c; j++) { double d = buf[j] - m; part += d * d; }
        q += part;
    }
    *mean = m;
    *var = n ? q / (double)n : 0.0;
#endif
}

typedef struct {
    sdx_tensor *y; const sdx_tensor *x, *gamma, *beta;
    int64_t channels, spatial, groups;
    float eps; int fuse_silu;
    int fast;               /* bf16 mode: the fused SiLU 16 lanes at a time */
} sdx__gn_args;

static void sdx__group_norm_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__gn_args *a = (const sdx__gn_args *)arg;
    int64_t cpg = a->channels / a->groups;
    float buf[SDX__CHUNK];
    (void)thread;
    for (int64_t ng = begin; ng < end; ng++) {
        int64_t off = ng * cpg * a->spatial, g = ng % a->groups;
        double mean, var;
        float rstd;
        sdx__moments(a->x, off, cpg * a->spatial, &mean, &var);
        rstd = (float)(1.0 / sqrt(var + (double)a->eps));
        for (int64_t c = 0; c < cpg; c++) {
            int64_t ch = g * cpg + c;
            float gm = a->gamma ? sdx__get_f32(a->gamma, ch) : 1.0f;
            float bt = a->beta ? sdx__get_f32(a->beta, ch) : 0.0f;
            float mul = gm * rstd, add = bt - (float)mean * mul;
            for (int64_t i = 0; i < a->spatial; i += SDX__CHUNK) {
                int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->spatial - i), o = off + c * a->spatial + i;
                sdx__load_f32(a->x->data, a->x->dtype, o, n, buf);
                for (int64_t j = 0; j < n; j++) buf[j] = buf[j] * mul + add;
                if (a->fuse_silu) sdx__ew_apply(SDX__OP_SILU, buf, NULL, n, 0, a->fast);
                sdx__store_f32(a->y->data, a->y->dtype, o, n, buf);
            }
        }
    }
}

static int sdx__cpu_group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu) {
    static const char op[] = "group_norm";
    sdx__gn_args a;
    SDX__CHECK(ctx, op, y, x, gamma, beta);
    if (x->ndim < 2 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape [N, C, ...]", x, "x", y, "y");
    if (groups < 1 || x->shape[1] % groups)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %lld channels not divisible into %d groups", op,
                         (long long)x->shape[1], groups);
    if ((gamma && sdx_tensor_numel(gamma) != x->shape[1]) || (beta && sdx_tensor_numel(beta) != x->shape[1]))
        return sdx__fail_shapes(ctx, op, "gamma/beta size must equal channels", x, "x", gamma ? gamma : beta, "gamma/beta");
    a.y = y; a.x = x; a.gamma = gamma; a.beta = beta;
    a.channels = x->shape[1]; a.groups = groups; a.eps = eps; a.fuse_silu = fuse_silu;
    a.fast = sdx__act_fast_mode(ctx);
    a.spatial = a.channels && x->shape[0] ? sdx_tensor_numel(x) / (x->shape[0] * a.channels) : 0;
    sdx__parallel_for(ctx, x->shape[0] * groups, sdx__group_norm_range, &a);
    return sdx__trace_check(ctx, op, y);
}

typedef struct { sdx_tensor *y; const sdx_tensor *x, *gamma, *beta; int64_t d; float eps; } sdx__ln_args;

static void sdx__layer_norm_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__ln_args *a = (const sdx__ln_args *)arg;
    float buf[SDX__CHUNK], gm[SDX__CHUNK], bt[SDX__CHUNK];
    (void)thread;
    for (int64_t r = begin; r < end; r++) {
        double mean, var;
        float rstd;
        sdx__moments(a->x, r * a->d, a->d, &mean, &var);
        rstd = (float)(1.0 / sqrt(var + (double)a->eps));
        for (int64_t i = 0; i < a->d; i += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->d - i);
            sdx__load_f32(a->x->data, a->x->dtype, r * a->d + i, n, buf);
            if (a->gamma) sdx__load_f32(a->gamma->data, a->gamma->dtype, i, n, gm);
            else for (int64_t j = 0; j < n; j++) gm[j] = 1.0f;
            if (a->beta) sdx__load_f32(a->beta->data, a->beta->dtype, i, n, bt);
            else for (int64_t j = 0; j < n; j++) bt[j] = 0.0f;
            for (int64_t j = 0; j < n; j++) buf[j] = (buf[j] - (float)mean) * rstd * gm[j] + bt[j];
            sdx__store_f32(a->y->data, a->y->dtype, r * a->d + i, n, buf);
        }
    }
}

static int sdx__cpu_layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta) {
    static const char op[] = "layer_norm";
    sdx__ln_args a;
    SDX__CHECK(ctx, op, y, x, gamma, beta);
    if (x->ndim < 1 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape", x, "x", y, "y");
    a.d = x->shape[x->ndim - 1];
    if ((gamma && sdx_tensor_numel(gamma) != a.d) || (beta && sdx_tensor_numel(beta) != a.d))
        return sdx__fail_shapes(ctx, op, "gamma/beta size must equal the last dim", x, "x", gamma ? gamma : beta, "gamma/beta");
    a.y = y; a.x = x; a.gamma = gamma; a.beta = beta; a.eps = eps;
    if (a.d > 0) sdx__parallel_for(ctx, sdx_tensor_numel(x) / a.d, sdx__layer_norm_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Softmax of one f32 row in place: max-subtracted, f32 sum. */
static void sdx__softmax_row(float *v, int64_t n) {
    float mx = -INFINITY, sum = 0, inv;
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    for (int64_t i = 0; i < n; i++) v[i] = sdx__round_f16(v[i]);
    for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
    for (int64_t i = 0; i < n; i++) { v[i] = sdx__round_f16(expf(v[i] - mx)); sum = sdx__round_f16(sum + v[i]); }
#else
    for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
    if (mx == -INFINITY) mx = 0;    /* fully masked row: all zeros below */
    for (int64_t i = 0; i < n; i++) v[i] -= mx;
    sdx__exp_n(v, n);
    for (int64_t i = 0; i < n; i++) sum += v[i];
#endif
    inv = sum > 0 ? 1.0f / sum : 0.0f;
    for (int64_t i = 0; i < n; i++) v[i] *= inv;
}

typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t d; sdx_ctx *ctx; } sdx__sm_args;

static void sdx__softmax_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__sm_args *a = (const sdx__sm_args *)arg;
    float *row = sdx__scratch_f32(a->ctx, thread);
    for (int64_t r = begin; r < end; r++) {
        sdx__load_f32(a->x->data, a->x->dtype, r * a->d, a->d, row);
        sdx__softmax_row(row, a->d);
        sdx__store_f32(a->y->data, a->y->dtype, r * a->d, a->d, row);
    }
}

static int sdx__cpu_softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "softmax";
    sdx__sm_args a;
    int rc;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim < 1 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape", x, "x", y, "y");
    a.y = y; a.x = x; a.d = x->shape[x->ndim - 1]; a.ctx = ctx;
    if (a.d == 0) return SDX_OK;
    if ((rc = sdx__scratch_reserve(ctx, (size_t)a.d * sizeof(float))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, sdx_tensor_numel(x) / a.d, sdx__softmax_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* ===================================================================== */
/*  Attention                                                              */
/* ===================================================================== */
/* One job is (batch, head, block of QB queries). Keys are visited in
 * blocks of KB with an online softmax (running max m and sum l per query,
 * the output rescaled when the max grows), so memory is O(QB x KB)
 * whatever Nq and Nk are. Both products run on the GEMM micro-kernel.
 * The logits are formed transposed, S^T = K Q^T ([KB][QB]), so that the
 * softmax bookkeeping runs along rows of queries (contiguous, vectorised)
 * and P packs into the micro-kernel's MR-row strips by plain copies. */

#define SDX__QB 96      /* multiple of MR and NR */
#define SDX__KB 96      /* multiple of MR */

typedef struct {
    sdx_tensor *y; const sdx_tensor *q, *k, *v;
    int64_t batch, nq, nk, heads, d, dp, q_blocks;
    int64_t chunk;          /* query blocks per job */
    int64_t kv_keys;        /* keys a job's packed K and V hold: ...          */
    int kv_whole;           /* ... all of nk (packed once per job), or one block */
    int causal;
    float scale;
    sdx__micro_kernels mk;
    int kq, dpc, nvs;       /* the AMX path's layout (sdx__attn_run_amx) */
    sdx_ctx *ctx;
} sdx__attn_args;

/* A job packs K and V once for all its query blocks when the whole head
 * fits this budget (per thread), else block by block for each. */
#define SDX__ATTN_KV_BYTES ((size_t)32 << 20)

static size_t sdx__attn_scratch_floats(int64_t dp, int64_t kv_keys) {
    return (size_t)SDX__QB * (size_t)dp         /* packed Q (NR strips)   */
         + (size_t)kv_keys * (size_t)dp         /* packed K (MR strips)   */
         + (size_t)kv_keys * (size_t)dp         /* packed V (NR strips)   */
         + (size_t)SDX__KB * SDX__QB            /* S^T, then P^T          */
         + (size_t)SDX__QB * SDX__KB            /* packed P               */
         + (size_t)SDX__QB * (size_t)dp         /* O accumulator          */
         + 3 * (size_t)SDX__QB                  /* m, l, corr             */
         + (size_t)dp + 64;                     /* row buffer             */
}

/* Packs rows [r0, r0+n) of head h (zero rows beyond n, zero cols beyond d)
 * into strips of `width` rows over dp columns, times `scale`. */
static void sdx__attn_pack_rows(float *dst, const sdx_tensor *t, int64_t bat, int64_t len, int64_t h, int64_t d,
                                int64_t dp, int64_t r0, int n, int rows, int width, float scale, float *tmp) {
    int64_t hd = (int64_t)t->shape[2];
    for (int s = 0; s < rows; s += width)
        for (int r = 0; r < width; r++) {
            float *col = dst + (int64_t)s * dp + r;
            int i = s + r;
            if (i < n) sdx__load_f32(t->data, t->dtype, (bat * len + r0 + i) * hd + h * d, d, tmp);
            for (int64_t kk = 0; kk < dp; kk++) col[kk * width] = (i < n && kk < d) ? tmp[kk] * scale : 0.0f;
        }
}

/* Packs V rows [j0, j0+n) (zero beyond) into NR-column strips over dp:
 * dst[dcol/NR][j][dcol%NR]. */
static void sdx__attn_pack_v(float *dst, const sdx_tensor *v, int64_t bat, int64_t nk, int64_t h, int64_t d,
                             int64_t dp, int64_t j0, int n, float *tmp) {
    int64_t hd = v->shape[2];
    for (int j = 0; j < SDX__KB; j++) {
        if (j < n) {
            sdx__load_f32(v->data, v->dtype, (bat * nk + j0 + j) * hd + h * d, d, tmp);
            for (int64_t c = d; c < dp; c++) tmp[c] = 0.0f;
        } else {
            for (int64_t c = 0; c < dp; c++) tmp[c] = 0.0f;
        }
        for (int64_t c = 0; c < dp; c += SDX__NR)
            memcpy(dst + c * SDX__KB + j * SDX__NR, tmp + c, SDX__NR * sizeof(float));
    }
}

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF
/* P^T = exp(S^T - m) and l = l corr + the sum of P^T's rows, in one pass
 * over S^T (the same operations in the same order as the three passes of
 * sdx__attn_softmax_step, so the same bits). */
__attribute__((target("avx512f")))
static void sdx__attn_exp_rows_avx512(float *st, const float *mnew, float *l, const float *corr, int nkv) {
    for (int i = 0; i < SDX__QB; i += 16) {
        const __m512 m = _mm512_loadu_ps(mnew + i);
        __m512 sum = _mm512_mul_ps(_mm512_loadu_ps(l + i), _mm512_loadu_ps(corr + i));
        for (int j = 0; j < nkv; j++) {
            float *p = st + j * SDX__QB + i;
            __m512 e = sdx__exp512(_mm512_sub_ps(_mm512_loadu_ps(p), m));
            _mm512_storeu_ps(p, e);
            sum = _mm512_add_ps(sum, e);
        }
        _mm512_storeu_ps(l + i, sum);
    }
}
SDX__INTRINSICS_WARNINGS_ON
#endif

/* Online-softmax step on S^T [KB][QB]: masks, updates m and l, turns S^T
 * into P^T = exp(S^T - m_new) and returns per-query rescale factors. */
static void sdx__attn_softmax_step(const sdx__attn_args *a, float *SDX__RESTRICT st, float *SDX__RESTRICT m,
                                   float *SDX__RESTRICT l, float *SDX__RESTRICT corr, int64_t i0, int64_t j0, int nkv) {
    float mnew[SDX__QB];    /* a local array: provably unaliased, so vectorised */
    for (int j = 0; j < SDX__KB; j++) {
        float *row = st + j * SDX__QB;
        if (j >= nkv) { for (int i = 0; i < SDX__QB; i++) row[i] = -INFINITY; continue; }
#ifdef SDX_UNSAFE_HALF_SOFTMAX
        for (int i = 0; i < SDX__QB; i++) row[i] = sdx__round_f16(sdx__round_f16(row[i]) * a->scale);
#endif
        if (a->causal) {
            /* key j0+j is visible to queries i0+i >= j0+j */
            int64_t first = j0 + j - i0;
            for (int i = 0; i < SDX__QB && i < first; i++) row[i] = -INFINITY;
        }
    }
    for (int i = 0; i < SDX__QB; i++) mnew[i] = m[i];
    for (int j = 0; j < nkv; j++) {
        const float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) mnew[i] = row[i] > mnew[i] ? row[i] : mnew[i];
    }
    /* a query that has seen only masked keys keeps shift 0: its exps are 0 */
    for (int i = 0; i < SDX__QB; i++) {
        if (mnew[i] == -INFINITY) mnew[i] = 0.0f;
        corr[i] = m[i] - mnew[i];
    }
    sdx__exp_n(corr, SDX__QB);              /* m = -inf (nothing yet) gives 0 */
#if defined(SDX__X86) && !defined(SDX_UNSAFE_HALF_SOFTMAX)
    if (sdx__have_avx512f()) {
        sdx__attn_exp_rows_avx512(st, mnew, l, corr, nkv);
        for (int i = 0; i < SDX__QB; i++) m[i] = mnew[i];
        return;
    }
#endif
    /* rows past nkv are never read again: P V sums over nkv keys */
    for (int j = 0; j < nkv; j++) {
        float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) row[i] -= mnew[i];
    }
    sdx__exp_n(st, (int64_t)nkv * SDX__QB);
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    for (int i = 0; i < SDX__QB; i++) l[i] = sdx__round_f16(l[i] * corr[i]);
    for (int j = 0; j < nkv; j++)
        for (int i = 0; i < SDX__QB; i++) {
            st[j * SDX__QB + i] = sdx__round_f16(st[j * SDX__QB + i]);
            l[i] = sdx__round_f16(l[i] + st[j * SDX__QB + i]);
        }
#else
    for (int i = 0; i < SDX__QB; i++) l[i] *= corr[i];
    for (int j = 0; j < nkv; j++) {
        const float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) l[i] += row[i];
    }
#endif
    for (int i = 0; i < SDX__QB; i++) m[i] = mnew[i];
}

/* Query block qb of head h of image bat. K and V blocks are packed into
 * pk, pv at their block offset when the job holds the whole head (and
 * only the first time: *packed counts the keys packed so far), at the
 * start otherwise; the values are the same either way. */
static void sdx__attn_block(const sdx__attn_args *a, int64_t bat, int64_t h, int64_t qb, float *pq, float *pk, float *pv,
                            int64_t *packed, float *st) {
    const int64_t dp = a->dp;
    float *pp = st + SDX__KB * SDX__QB;
    float *o = pp + SDX__QB * SDX__KB;
    float *m = o + SDX__QB * dp;
    float *l = m + SDX__QB, *corr = l + SDX__QB;
    float *tmp = corr + SDX__QB;
    int64_t i0 = qb * SDX__QB;
    int nqv = (int)SDX__MIN((int64_t)SDX__QB, a->nq - i0);
    int64_t key_end = a->causal ? SDX__MIN(a->nk, i0 + nqv) : a->nk;
    const int whole = a->kv_whole;
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    const float qscale = 1.0f;      /* logits rounded to f16 before scaling */
#else
    const float qscale = a->scale;
#endif
    sdx__attn_pack_rows(pq, a->q, bat, a->nq, h, a->d, dp, i0, nqv, SDX__QB, SDX__NR, qscale, tmp);
    memset(o, 0, (size_t)(SDX__QB * dp) * sizeof(float));
    for (int i = 0; i < SDX__QB; i++) { m[i] = -INFINITY; l[i] = 0; }
    for (int64_t j0 = 0; j0 < key_end; j0 += SDX__KB) {
        int nkv = (int)SDX__MIN((int64_t)SDX__KB, key_end - j0);
        int nkp = (nkv + SDX__MR - 1) / SDX__MR * SDX__MR;
        float *kb = whole ? pk + j0 * dp : pk, *vb = whole ? pv + j0 * dp : pv;
        if (!whole || j0 + nkv > *packed) {
            sdx__attn_pack_rows(kb, a->k, bat, a->nk, h, a->d, dp, j0, nkv, SDX__KB, SDX__MR, 1.0f, tmp);
            sdx__attn_pack_v(vb, a->v, bat, a->nk, h, a->d, dp, j0, nkv, tmp);
            *packed = j0 + nkv;
        }
        /* only real keys and head dims: the padding adds exact zeros, so
         * skipping it changes no bit (77 keys of 96, 40 dims of 48) */
        for (int i = 0; i < SDX__QB;) {
            const int two = a->mk.two && i + SDX__NR < SDX__QB;
            for (int j = 0; j < nkp; j += SDX__MR)
                sdx__micro_strips(&a->mk, two, (int)a->d, kb + (int64_t)j * dp, pq + (int64_t)i * dp,
                                  SDX__NR * dp, st + j * SDX__QB + i, SDX__QB, 0);
            i += two ? 2 * SDX__NR : SDX__NR;
        }
        sdx__attn_softmax_step(a, st, m, l, corr, i0, j0, nkv);
        for (int i = 0; i < nqv; i++) {
            float cr = corr[i], *orow = o + i * dp;
            if (cr == 1.0f) continue;
            for (int64_t c = 0; c < dp; c += SDX__NR)
                for (int e = 0; e < SDX__NR; e++) orow[c + e] *= cr;
        }
        /* P^T [KB][QB] -> MR-row strips of P over KB: 6 contiguous floats each */
        for (int s = 0; s < SDX__QB; s += SDX__MR)
            for (int j = 0; j < nkv; j++)
                memcpy(pp + s * SDX__KB + j * SDX__MR, st + j * SDX__QB + s, SDX__MR * sizeof(float));
        for (int64_t c = 0; c < dp;) {
            const int two = a->mk.two && c + SDX__NR < dp;
            for (int s = 0; s < SDX__QB; s += SDX__MR)
                sdx__micro_strips(&a->mk, two, nkv, pp + s * SDX__KB, vb + c * SDX__KB,
                                  SDX__NR * SDX__KB, o + s * dp + c, dp, 1);
            c += two ? 2 * SDX__NR : SDX__NR;
        }
    }
    for (int i = 0; i < nqv; i++) {
        float inv = l[i] > 0 ? 1.0f / l[i] : 0.0f;
        for (int64_t c = 0; c < a->d; c++) tmp[c] = o[i * dp + c] * inv;
        sdx__store_f32(a->y->data, a->y->dtype, (bat * a->nq + i0 + i) * a->heads * a->d + h * a->d, a->d, tmp);
    }
}

/* Job j's image, head and query blocks [qb0, qb1) (both paths). */
static void sdx__attn_job_span(const sdx__attn_args *a, int64_t job, int64_t *bat, int64_t *h, int64_t *qb0, int64_t *qb1) {
    const int64_t chunks = (a->q_blocks + a->chunk - 1) / a->chunk, bh = job / chunks;
    *bat = bh / a->heads;
    *h = bh % a->heads;
    *qb0 = (job % chunks) * a->chunk;
    *qb1 = SDX__MIN(a->q_blocks, *qb0 + a->chunk);
}

/* Query blocks per job (a->chunk: as many as still leave two jobs per
 * thread when K and V are packed once per job, else one); returns the
 * number of jobs. Both paths, once q_blocks and kv_whole are set. */
static int64_t sdx__attn_plan_jobs(sdx_ctx *ctx, sdx__attn_args *a) {
    a->chunk = a->kv_whole ? a->q_blocks * a->batch * a->heads / SDX__MAX((int64_t)1, 2 * (int64_t)sdx_threads(ctx)) : 1;
    a->chunk = SDX__MAX((int64_t)1, SDX__MIN(a->chunk, a->q_blocks));
    return a->batch * a->heads * ((a->q_blocks + a->chunk - 1) / a->chunk);
}

/* A job: `chunk` consecutive query blocks of one head, sharing K and V. */
static void sdx__attn_job(const sdx__attn_args *a, int64_t job, int thread) {
    int64_t bat, h, qb0, qb1, packed = 0;
    float *pq = sdx__scratch_f32(a->ctx, thread);
    float *pk = pq + SDX__QB * a->dp;
    float *pv = pk + a->kv_keys * a->dp;
    float *st = pv + a->kv_keys * a->dp;
    sdx__attn_job_span(a, job, &bat, &h, &qb0, &qb1);
    for (int64_t qb = qb0; qb < qb1; qb++) sdx__attn_block(a, bat, h, qb, pq, pk, pv, &packed, st);
}

static void sdx__attn_range(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__attn_job((const sdx__attn_args *)arg, j, thread);
}

#ifdef SDX__AMX
/* ---- attention on AMX (bf16 mode) -------------------------------------- */
/* In bf16 mode on AMX both products run on tiles at f32's accuracy: each
 * operand x is carried as hi = bf16(x) and lo = bf16(x - hi), and each
 * product as hi hi' + hi lo' + lo hi' (lo lo', under 2^-18 of it, is
 * dropped), so the logits and the output come within about 2^-16 of
 * f32's. Rounding an operand instead would put 2^-9 on every logit, in a
 * component whose budget the rounded weights of the linears already half
 * spend. The three products are one GEMM over a k three times as long: A
 * rows are [hi | hi | lo], B columns [hi | lo | hi]. Per block of 32
 * queries and KB keys: S = Q K^T ([32][KB], by the GEMM's 32 x 32 tile
 * kernel), the online softmax along each query's keys (AVX-512), which
 * writes P as A tiles, and O += P V on tiles into f32. Layouts (words are
 * bf16 pairs along k, as the GEMM's B strips):
 *   Q  two A tile rows of kq tiles (k = 3d, padded to 32 kq)
 *   K  per 32 keys a strip of 16 kq pair rows x 32 keys
 *   V  per block of KB keys nvs strips (32 head dims each) of 3 KB / 2
 *      pair rows; a block of L < KB keys (the last) uses 3 L / 2 of them
 *   P  two A tile rows of kp tiles (k = 3 L)
 *   O  [32][dpc] f32, dpc = d rounded up to 16 (a last 16-wide strip) */

#define SDX__AQB 32     /* queries per tile block: two tile rows           */
#define SDX__AQO 4      /* tile blocks per query block: each key block's K
                           and V are read from cache by 128 queries        */
#define SDX__AKB 128    /* keys per block: a multiple of 32                */

static size_t sdx__attn_amx_k_words(const sdx__attn_args *a) {
    return (size_t)(a->kv_keys / 32) * (size_t)a->kq * SDX__ATILE;
}
static size_t sdx__attn_amx_v_words(const sdx__attn_args *a) {
    return (size_t)(a->kv_keys / SDX__AKB) * (size_t)a->nvs * (3 * SDX__AKB * 16);
}
static size_t sdx__attn_amx_scratch_bytes(const sdx__attn_args *a) {
    return (size_t)SDX__AQO * 2 * a->kq * SDX__ATILE * sizeof(uint16_t)      /* Q tiles      */
         + (sdx__attn_amx_k_words(a) + sdx__attn_amx_v_words(a)) * sizeof(uint32_t)
         + (size_t)SDX__AQB * SDX__AKB * sizeof(float)                         /* S            */
         + (size_t)2 * (3 * SDX__AKB / 32) * SDX__ATILE * sizeof(uint16_t)     /* P tiles      */
         + (size_t)SDX__AQO * SDX__AQB * ((size_t)a->dpc + 3) * sizeof(float)  /* O, m, l, corr */
         + ((size_t)a->d + 64) * sizeof(float)                                 /* one row      */
         + ((size_t)32 * a->kq + 3 * SDX__AKB + 64) * sizeof(uint16_t) + 256;  /* one k row    */
}

/* C[32 x 16] += A B: sdx__amx_32x32's first 16 columns (a last strip of
 * 16 head dims). */
static void sdx__amx_32x16(int kt, const uint16_t *a0, const uint16_t *a1, const uint32_t *b, float *c, int64_t ldc) {
    const int64_t cs = ldc * (int64_t)sizeof(float);
    float *c2 = c + 16 * ldc;
    SDX__TILE_LOAD(0, c, cs); SDX__TILE_LOAD(2, c2, cs);
    for (int t = 0; t < kt; t++, a0 += SDX__ATILE, a1 += SDX__ATILE, b += 16 * SDX__BNR) {
        SDX__TILE_LOAD(4, a0, 64);
        SDX__TILE_LOAD(6, b, SDX__BNR * 4);
        SDX__TILE_DP(0, 4, 6);
        SDX__TILE_LOAD(5, a1, 64);
        SDX__TILE_DP(2, 5, 6);
    }
    SDX__TILE_STORE(0, c, cs); SDX__TILE_STORE(2, c2, cs);
}

/* v[0, n) as three segments of n halves, then zeros up to `total`: hi
 * first, lo in segment lo_seg (2 for A rows, 1 for B columns), hi again
 * in the other. */
static void sdx__attn_split3(uint16_t *out, const float *v, int n, int lo_seg, int total) {
    sdx__f32_to_bf16_sat_n(v, out, (size_t)n);
    sdx__bf16_residual_n(v, out, out + lo_seg * n, (size_t)n);
    memcpy(out + (3 - lo_seg) * n, out, (size_t)n * sizeof(uint16_t));
    memset(out + 3 * n, 0, (size_t)(total - 3 * n) * sizeof(uint16_t));
}

/* Query rows [i0, i0 + n) of head h, times the logit scale, as Q's tiles
 * (two tile rows per 32 queries; zero rows past n up to `rows`). */
static void sdx__attn_amx_pack_q(const sdx__attn_args *a, uint16_t *pq, int64_t bat, int64_t h, int64_t i0, int n,
                                 int rows, float *tmp, uint16_t *row) {
    const int64_t hd = a->q->shape[2];
    for (int r = 0; r < rows; r++) {
        uint16_t *dst = pq + (r / 16) * a->kq * SDX__ATILE + (r % 16) * 32;
        if (r < n) {
            sdx__load_f32(a->q->data, a->q->dtype, (bat * a->nq + i0 + r) * hd + h * a->d, a->d, tmp);
            for (int64_t c = 0; c < a->d; c++) tmp[c] *= a->scale;
            sdx__attn_split3(row, tmp, (int)a->d, 2, 32 * a->kq);
        } else {
            memset(row, 0, (size_t)(32 * a->kq) * sizeof(uint16_t));
        }
        for (int t = 0; t < a->kq; t++) memcpy(dst + t * SDX__ATILE, row + 32 * t, 32 * sizeof(uint16_t));
    }
}

/* Keys [j0, j0 + n) of head h as K strips (zero columns past n). */
static void sdx__attn_amx_pack_k(const sdx__attn_args *a, uint32_t *pk, int64_t bat, int64_t h, int64_t j0, int n,
                                 float *tmp, uint16_t *row) {
    const int64_t hd = a->k->shape[2];
    const int pairs = 16 * a->kq;
    for (int s = 0; s < n; s += 32) {
        uint32_t *strip = pk + (int64_t)(s / 32) * a->kq * SDX__ATILE;
        for (int col = 0; col < 32; col++) {
            if (s + col < n) {
                sdx__load_f32(a->k->data, a->k->dtype, (bat * a->nk + j0 + s + col) * hd + h * a->d, a->d, tmp);
                sdx__attn_split3(row, tmp, (int)a->d, 1, 32 * a->kq);
            } else {
                memset(row, 0, (size_t)(32 * a->kq) * sizeof(uint16_t));
            }
            for (int p = 0; p < pairs; p++) strip[p * 32 + col] = row[2 * p] | (uint32_t)row[2 * p + 1] << 16;
        }
    }
}

/* Values [j0, j0 + n) of head h as one block of V strips: k = 3n, key j
 * at k = j (hi), n + j (lo) and 2n + j (hi). */
static void sdx__attn_amx_pack_v(const sdx__attn_args *a, uint32_t *pv, int64_t bat, int64_t h, int64_t j0, int n,
                                 float *tmp, uint16_t *row) {
    const int64_t hd = a->v->shape[2], strip_words = 3 * SDX__AKB * 16;
    uint16_t *halves = (uint16_t *)pv, *lo = row + a->d;
    memset(pv, 0, (size_t)(a->nvs * strip_words) * sizeof(uint32_t));
    for (int j = 0; j < n; j++) {
        sdx__load_f32(a->v->data, a->v->dtype, (bat * a->nk + j0 + j) * hd + h * a->d, a->d, tmp);
        sdx__f32_to_bf16_sat_n(tmp, row, (size_t)a->d);
        sdx__bf16_residual_n(tmp, row, lo, (size_t)a->d);
        for (int seg = 0; seg < 3; seg++) {
            const uint16_t *src = seg == 1 ? lo : row;
            int k = seg * n + j;
            /* word (pair k / 2, column c) of its strip; half k % 2 (little-endian) */
            uint16_t *dst = halves + 2 * ((int64_t)(k / 2) * 32) + (k & 1);
            for (int64_t c = 0; c < a->d; c++) dst[2 * ((c / 32) * strip_words + c % 32)] = src[c];
        }
    }
}

SDX__INTRINSICS_WARNINGS_OFF

/* The online softmax over one block's logits s ([32][KB], L keys): per
 * query the running max m and sum l are updated, corr gets the factor
 * that rescales what O holds, and P = exp(s - m) goes into P's tiles as
 * [hi | hi | lo] over kp tiles (VCVTNE2PS2BF16 rounds to nearest even;
 * P is in [0, 1], so nothing saturates). Masked keys (causal) have P = 0.
 * A whole block's segments are whole tiles and are stored there
 * directly; a shorter one goes through `row`. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
static void sdx__attn_amx_softmax(const sdx__attn_args *a, const float *s, uint16_t *pp, float *m, float *l, float *corr,
                                  int64_t i0, int64_t j0, int L, int kp, uint16_t *row) {
    const int tiled = L % 32 == 0;
    for (int i = 0; i < SDX__AQB; i++) {
        const float *srow = s + (int64_t)i * SDX__AKB;
        uint16_t *dst = pp + (int64_t)(i / 16) * kp * SDX__ATILE + (i % 16) * 32;
        int seen = L;       /* keys this query sees: all, or up to itself */
        __m512 vmax = _mm512_set1_ps(-INFINITY), vsum = _mm512_setzero_ps(), shift;
        float mx;
        if (a->causal) seen = (int)SDX__MAX((int64_t)0, SDX__MIN((int64_t)L, i0 + i - j0 + 1));
        for (int j = 0; j < seen; j += 16) {
            __mmask16 in = sdx__lanes16(seen - j);
            vmax = _mm512_mask_max_ps(vmax, in, vmax, _mm512_maskz_loadu_ps(in, srow + j));
        }
        mx = _mm512_reduce_max_ps(vmax);
        mx = mx > m[i] ? mx : m[i];
        if (mx == -INFINITY) mx = 0.0f;         /* nothing seen yet: its exps are 0 */
        corr[i] = mx == m[i] ? 1.0f : expf(m[i] - mx);     /* most blocks leave the max */
        m[i] = mx;
        shift = _mm512_set1_ps(mx);
        for (int j = 0; j < L; j += 32) {
            __mmask16 vis0 = sdx__lanes16(seen - j), vis1 = sdx__lanes16(seen - j - 16);
            __m512 p0 = _mm512_maskz_mov_ps(vis0, sdx__exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(vis0, srow + j), shift)));
            __m512 p1 = _mm512_maskz_mov_ps(vis1, sdx__exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(vis1, srow + j + 16), shift)));
            __m512i hi = (__m512i)_mm512_cvtne2ps_pbh(p1, p0);
            __m512 back0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(hi)), 16));
            __m512 back1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(hi, 1)), 16));
            __m512i lo = (__m512i)_mm512_cvtne2ps_pbh(_mm512_sub_ps(p1, back1), _mm512_sub_ps(p0, back0));
            vsum = _mm512_add_ps(vsum, _mm512_add_ps(p0, p1));
            if (tiled) {
                const int t = j / 32, seg = L / 32;
                _mm512_storeu_si512((void *)(dst + (int64_t)t * SDX__ATILE), hi);
                _mm512_storeu_si512((void *)(dst + (int64_t)(seg + t) * SDX__ATILE), hi);
                _mm512_storeu_si512((void *)(dst + (int64_t)(2 * seg + t) * SDX__ATILE), lo);
            } else {
                __mmask32 in = L - j >= 32 ? 0xffffffffu : (1u << (L - j)) - 1u;
                _mm512_mask_storeu_epi16(row + j, in, hi);
                _mm512_mask_storeu_epi16(row + L + j, in, hi);
                _mm512_mask_storeu_epi16(row + 2 * L + j, in, lo);
            }
        }
        l[i] = l[i] * corr[i] + _mm512_reduce_add_ps(vsum);
        if (tiled) continue;
        memset(row + 3 * L, 0, (size_t)(32 * kp - 3 * L) * sizeof(uint16_t));
        for (int t = 0; t < kp; t++) memcpy(dst + (int64_t)t * SDX__ATILE, row + 32 * t, 32 * sizeof(uint16_t));
    }
}

SDX__INTRINSICS_WARNINGS_ON

/* Query block qb (SDX__AQO tile blocks of 32 queries) of head h of image
 * bat: sdx__attn_block's contract, on tiles. Each key block is packed (or
 * found packed) once and visited by every tile block in turn. */
static void sdx__attn_amx_block(const sdx__attn_args *a, int64_t bat, int64_t h, int64_t qb, uint16_t *pq, uint32_t *pk,
                                uint32_t *pv, int64_t *packed, float *s) {
    const int kq = a->kq, dpc = a->dpc, whole = a->kv_whole;
    const int64_t strip_words = 3 * SDX__AKB * 16, q_tiles = 2 * (int64_t)kq * SDX__ATILE;
    uint16_t *pp = (uint16_t *)(s + SDX__AQB * SDX__AKB);
    float *o = (float *)(pp + 2 * (3 * SDX__AKB / 32) * SDX__ATILE);
    float *m = o + SDX__AQO * SDX__AQB * dpc, *l = m + SDX__AQO * SDX__AQB, *corr = l + SDX__AQO * SDX__AQB;
    float *tmp = corr + SDX__AQO * SDX__AQB;
    uint16_t *row = (uint16_t *)(tmp + a->d + 64);
    const int64_t i0 = qb * SDX__AQO * SDX__AQB;
    const int nqv = (int)SDX__MIN((int64_t)SDX__AQO * SDX__AQB, a->nq - i0), nsub = (nqv + SDX__AQB - 1) / SDX__AQB;
    const int64_t key_end = a->causal ? SDX__MIN(a->nk, i0 + nqv) : a->nk;
    sdx__attn_amx_pack_q(a, pq, bat, h, i0, nqv, nsub * SDX__AQB, tmp, row);
    memset(o, 0, (size_t)(nsub * SDX__AQB * dpc) * sizeof(float));
    for (int i = 0; i < nsub * SDX__AQB; i++) { m[i] = -INFINITY; l[i] = 0; }
    for (int64_t j0 = 0; j0 < key_end; j0 += SDX__AKB) {
        const int L = (int)SDX__MIN((int64_t)SDX__AKB, a->nk - j0), kp = (3 * L + 31) / 32;
        uint32_t *kb = whole ? pk + (j0 / 32) * kq * SDX__ATILE : pk;
        uint32_t *vb = whole ? pv + (j0 / SDX__AKB) * a->nvs * strip_words : pv;
        if (!whole || j0 + L > *packed) {
            sdx__attn_amx_pack_k(a, kb, bat, h, j0, L, tmp, row);
            sdx__attn_amx_pack_v(a, vb, bat, h, j0, L, tmp, row);
            *packed = j0 + L;
        }
        for (int sb = 0; sb < nsub; sb++) {
            const uint16_t *q = pq + sb * q_tiles;
            const int r0 = sb * SDX__AQB, rows = SDX__MIN(SDX__AQB, nqv - r0);
            float *ob = o + (int64_t)r0 * dpc;
            if (a->causal && j0 > i0 + r0 + rows - 1) continue;  /* every key of the block is hidden */
            for (int js = 0; js < L; js += 32)
                sdx__amx_32x32(kq, q, q + kq * SDX__ATILE, kb + (int64_t)(js / 32) * kq * SDX__ATILE, 0, 0, s + js,
                               SDX__AKB, 0);
            sdx__attn_amx_softmax(a, s, pp, m + r0, l + r0, corr + r0, i0 + r0, j0, L, kp, row);
            for (int i = 0; i < rows; i++)
                if (corr[r0 + i] != 1.0f)
                    for (int c = 0; c < dpc; c++) ob[i * dpc + c] *= corr[r0 + i];
            for (int cs = 0; cs < a->nvs; cs++) {
                const uint32_t *vs = vb + cs * strip_words;
                if (dpc - 32 * cs >= 32)
                    sdx__amx_32x32(kp, pp, pp + kp * SDX__ATILE, vs, 0, 0, ob + 32 * cs, dpc, 1);
                else
                    sdx__amx_32x16(kp, pp, pp + kp * SDX__ATILE, vs, ob + 32 * cs, dpc);
            }
        }
    }
    for (int i = 0; i < nqv; i++) {
        float inv = l[i] > 0 ? 1.0f / l[i] : 0.0f;
        for (int64_t c = 0; c < a->d; c++) tmp[c] = o[i * dpc + c] * inv;
        sdx__store_f32(a->y->data, a->y->dtype, (bat * a->nq + i0 + i) * a->heads * a->d + h * a->d, a->d, tmp);
    }
}

static void sdx__attn_amx_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__attn_args *a = (const sdx__attn_args *)arg;
    __asm__ __volatile__("ldtilecfg %0" : : "m"(sdx__amx_config) : "memory");
    for (int64_t job = begin; job < end; job++) {
        int64_t bat, h, qb0, qb1, packed = 0;
        uint16_t *pq = (uint16_t *)sdx__scratch_f32(a->ctx, thread);
        uint32_t *pk = (uint32_t *)(pq + SDX__AQO * 2 * a->kq * SDX__ATILE);
        uint32_t *pv = pk + sdx__attn_amx_k_words(a);
        float *s = (float *)(pv + sdx__attn_amx_v_words(a));
        sdx__attn_job_span(a, job, &bat, &h, &qb0, &qb1);
        for (int64_t qb = qb0; qb < qb1; qb++) sdx__attn_amx_block(a, bat, h, qb, pq, pk, pv, &packed, s);
    }
    __asm__ __volatile__("tilerelease" : : : "memory");
}

/* Sets up and runs the tile path for arguments sdx__cpu_attention has
 * checked (a->d, nq, nk > 0). */
static int sdx__attn_run_amx(sdx_ctx *ctx, sdx__attn_args *a) {
    int64_t jobs;
    int rc;
    a->kq = (int)((3 * a->d + 31) / 32);
    a->dpc = (int)((a->d + 15) / 16 * 16);
    a->nvs = (a->dpc + 31) / 32;
    a->q_blocks = (a->nq + SDX__AQO * SDX__AQB - 1) / (SDX__AQO * SDX__AQB);
    a->kv_keys = (a->nk + SDX__AKB - 1) / SDX__AKB * SDX__AKB;
    a->kv_whole = (sdx__attn_amx_k_words(a) + sdx__attn_amx_v_words(a)) * sizeof(uint32_t) <= SDX__ATTN_KV_BYTES &&
                  !ctx->kernels->attn_blockwise;
    if (!a->kv_whole) a->kv_keys = SDX__AKB;
    jobs = sdx__attn_plan_jobs(ctx, a);
    if ((rc = sdx__scratch_reserve(ctx, sdx__attn_amx_scratch_bytes(a))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, jobs, sdx__attn_amx_range, a);
    return SDX_OK;
}
#endif /* SDX__AMX */

static int sdx__cpu_attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                          int heads, int causal) {
    static const char op[] = "attention";
    sdx__attn_args a;
    int64_t jobs;
    int rc;
    SDX__CHECK(ctx, op, y, q, k, v);
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || !sdx__same_shape(k, v) || !sdx__same_shape(q, y) ||
        k->shape[0] != q->shape[0] || k->shape[2] != q->shape[2])
        return sdx__fail_shapes(ctx, op, "expected q, y [B, Nq, H*D] and k, v [B, Nk, H*D]", q, "q", k, "k");
    if (heads < 1 || q->shape[2] % heads)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: width %lld not divisible into %d heads", op,
                         (long long)q->shape[2], heads);
    if (y->data == q->data || y->data == k->data || y->data == v->data)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias q, k or v", op);
    memset(&a, 0, sizeof a);
    a.y = y; a.q = q; a.k = k; a.v = v;
    a.batch = q->shape[0]; a.nq = q->shape[1]; a.nk = k->shape[1];
    a.heads = heads; a.d = q->shape[2] / heads;
    a.dp = (a.d + SDX__NR - 1) / SDX__NR * SDX__NR;
    a.causal = causal;
    a.scale = (float)(1.0 / sqrt((double)a.d));
    a.q_blocks = (a.nq + SDX__QB - 1) / SDX__QB;
    a.ctx = ctx;
    a.mk = sdx__micro_kernels_select();
    if (a.nq == 0 || a.batch == 0 || a.d == 0) return SDX_OK;
    if (a.nk == 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: no keys", op);
#if defined(SDX__AMX) && !defined(SDX_UNSAFE_HALF_SOFTMAX)
    if (sdx__amx_computes(ctx)) {
        if ((rc = sdx__attn_run_amx(ctx, &a)) != SDX_OK) return rc;
        return sdx__trace_check(ctx, op, y);
    }
#endif
    /* K and V packed once per job, not per query block (sdx__attn_plan_jobs) */
    a.kv_keys = (a.nk + SDX__KB - 1) / SDX__KB * SDX__KB;
    a.kv_whole = a.nk <= (int64_t)(SDX__ATTN_KV_BYTES / (2 * sizeof(float) * (size_t)a.dp));
    if (ctx->kernels && ctx->kernels->attn_blockwise) a.kv_whole = 0;
    if (!a.kv_whole) a.kv_keys = SDX__KB;
    jobs = sdx__attn_plan_jobs(ctx, &a);
    if ((rc = sdx__scratch_reserve(ctx, sdx__attn_scratch_floats(a.dp, a.kv_keys) * sizeof(float))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, jobs, sdx__attn_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* ===================================================================== */
/*  The CPU backend: host memory, the kernels above                       */
/* ===================================================================== */

static void *sdx__cpu_alloc(void *user, size_t bytes) { (void)user; return SDX_MALLOC(bytes); }
static void  sdx__cpu_free(void *user, void *ptr) { (void)user; SDX_FREE(ptr); }
static int sdx__cpu_move(void *user, void *dst, const void *src, size_t bytes) {
    (void)user;
    if (bytes) memcpy(dst, src, bytes);
    return SDX_OK;
}

static sdx_backend sdx__cpu_backend(void) {
    sdx_backend b;
    memset(&b, 0, sizeof b);
    b.name = "cpu";
    b.host_memory = 1;
    b.alloc = sdx__cpu_alloc;
    b.free = sdx__cpu_free;
    b.upload = sdx__cpu_move;
    b.download = sdx__cpu_move;
    b.linear = sdx__cpu_linear;
    b.conv2d = sdx__cpu_conv2d_pad;
    b.group_norm = sdx__cpu_group_norm;
    b.layer_norm = sdx__cpu_layer_norm;
    b.softmax = sdx__cpu_softmax;
    b.attention = sdx__cpu_attention;
    b.silu = sdx__cpu_silu;
    b.gelu = sdx__cpu_gelu;
    b.quick_gelu = sdx__cpu_quick_gelu;
    b.geglu = sdx__cpu_geglu;
    b.scale = sdx__cpu_scale;
    b.copy = sdx__cpu_copy;
    b.add = sdx__cpu_add;
    b.mul = sdx__cpu_mul;
    b.add_channel_bias = sdx__cpu_add_channel_bias;
    b.resize_nearest = sdx__cpu_resize_nearest;
    b.pad_circular = sdx__cpu_pad_circular;
    b.concat_channels = sdx__cpu_concat_channels;
    b.nchw_to_nlc = sdx__cpu_nchw_to_nlc;
    b.nlc_to_nchw = sdx__cpu_nlc_to_nchw;
    b.clamp = sdx__cpu_clamp;
    b.tanh_clamp = sdx__cpu_tanh_clamp;
    return b;
}
