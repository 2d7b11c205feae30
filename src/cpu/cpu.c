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

/* ---- the CPU backend's state --------------------------------------------- */
/* What the CPU kernels keep between calls, owned by the CPU backend (its
 * `user`; the context's host backend, ctx->host): per-thread scratch, what
 * the CPU said about its instruction sets, switches tests set, and the
 * weights repacked for bf16 mode. */

/* Weights repacked for a compute mode (gemm_bf16.c's panels), cached per
 * weight slot: the loader tells the backend of each host slot it makes
 * (weight_added), kernels find it by the slot's tensor address, and a slot
 * rewritten in place (LoRA) or freed drops its panel (weight_changed).
 * Entries are sorted by tensor address. Once a panel is built, the file
 * pages it was packed from go back to the OS (the panel is what computes),
 * so a compute mode holds its panels instead of the file's weights, not
 * both. */
typedef struct sdx__wcache_entry {
    const sdx_tensor *t;   /* the weight slot's tensor (stable address) */
    const struct sdx__map *map;  /* the file mapping it may view, or NULL */
    void  *panel;          /* packed copy, NULL until a kernel builds it */
    size_t bytes;
    int    kind;           /* the layout panel holds (gemm_bf16.c)      */
} sdx__wcache_entry;

typedef struct sdx__wcache {
    sdx__wcache_entry *e;
    int n, cap;
} sdx__wcache;

#define SDX__OP_WEIGHT_BYTES ((size_t)32 << 20)   /* sdx__op_weight_buffer's chunks */

typedef struct sdx__cpu_state {
    sdx_ctx *ctx;        /* whose allocator it uses */
    int      n;          /* one scratch slot per thread */
    void   **raw;        /* what was allocated */
    float  **aligned;    /* 64-byte aligned view of raw */
    size_t  *size;       /* usable bytes of aligned */
    void    *op_weight;  /* the running op's weight as its kernel reads it */
    size_t   op_weight_bytes;
    size_t   op_weight_chunk; /* bytes of it a chunk at most: SDX__OP_WEIGHT_BYTES
                              (tests set less: many chunks) */
    sdx__wcache wcache;  /* weights repacked for compute modes */
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
                              set it: the SIMD packers' reference)     */
    int      pack_avx2;      /* the f32 GEMM's rows packed by the AVX2
                              packers where AVX-512's would run (tests
                              set it: CPUs without AVX-512 run them)  */
    int      attn_blockwise; /* attention packs K and V per key block, as
                              for a head over its budget (tests set it)   */
    int      i8_probed;      /* the CPU was asked about int8 dot products ... */
    int      i8_best;        /* ... and has this int8 kernel (gemm_i8.c)  */
    int      i8_told;        /* the int8 kernel was logged once           */
    uint64_t i8_calls;       /* int8 GEMMs run: tells a thread's quantized
                              rows of this call from older ones           */
    int      i8_force;       /* 1 + an int8 kernel that linear runs for every
                              type it takes, whatever the table says; 0:
                              the table (tests and bench set it)          */
} sdx__cpu_state;

/* The CPU kernels' state: they run on the context's host backend. */
static sdx__cpu_state *sdx__cpu(const sdx_ctx *ctx) { return (sdx__cpu_state *)ctx->host.user; }

static void sdx__wcache_free(sdx_ctx *ctx, sdx__wcache *c) {
    for (int i = 0; i < c->n; i++) sdx__free(ctx, c->e[i].panel);
    sdx__free(ctx, c->e);
    memset(c, 0, sizeof *c);
}

/* The backend's release. */
static void sdx__cpu_state_free(void *user) {
    sdx__cpu_state *s = (sdx__cpu_state *)user;
    sdx_ctx *ctx;
    if (!s) return;
    ctx = s->ctx;
    /* raw may be NULL when the state's own allocation failed half way */
    for (int i = 0; s->raw && i < s->n; i++) sdx__free(ctx, s->raw[i]);
    sdx__free(ctx, s->raw);
    sdx__free(ctx, s->aligned);
    sdx__free(ctx, s->size);
    sdx__free(ctx, s->op_weight);
    sdx__wcache_free(ctx, &s->wcache);
    sdx__free(ctx, s);
}

static sdx__cpu_state *sdx__cpu_state_new(sdx_ctx *ctx) {
    int n = SDX__MAX(1, ctx->n_threads);
    sdx__cpu_state *s = (sdx__cpu_state *)sdx__calloc(ctx, 1, sizeof *s);
    if (!s) return NULL;
    s->ctx = ctx;
    s->raw = (void **)sdx__calloc(ctx, (size_t)n, sizeof *s->raw);
    s->aligned = (float **)sdx__calloc(ctx, (size_t)n, sizeof *s->aligned);
    s->size = (size_t *)sdx__calloc(ctx, (size_t)n, sizeof *s->size);
    s->n = n;
    s->op_weight_chunk = SDX__OP_WEIGHT_BYTES;
    if (!s->raw || !s->aligned || !s->size) { sdx__cpu_state_free(s); return NULL; }
    return s;
}

/* Per-thread buffer of at least `bytes`, 64-byte aligned, owned by the
 * context and reused by later calls: valid until the next kernel call on
 * this context (kernels use it themselves). NULL (error set) when out of
 * memory. Call it from thread 0, or after sdx__scratch_reserve made it
 * big enough for every thread: growing it is not thread-safe. */
static void *sdx__scratch(sdx_ctx *ctx, int thread, size_t bytes) {
    sdx__cpu_state *s = sdx__cpu(ctx);
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
static float *sdx__scratch_f32(sdx_ctx *ctx, int thread) { return sdx__cpu(ctx)->aligned[thread]; }

/* The running op's weight in the form its kernel reads, made per call and
 * a chunk of at most op_weight_chunk bytes at a time (Winograd's
 * transformed filters, a block-quantized weight's bf16 panel): one
 * context-owned buffer for every such op, grown as needed. NULL (error
 * set, naming `what`) when out of memory. */
static void *sdx__op_weight_buffer(sdx_ctx *ctx, size_t bytes, const char *what) {
    sdx__cpu_state *s = sdx__cpu(ctx);
    if (s->op_weight_bytes < bytes) {
        sdx__free(ctx, s->op_weight);
        s->op_weight_bytes = 0;
        if (!(s->op_weight = sdx__malloc(ctx, bytes))) { sdx__nomem(ctx, what, bytes); return NULL; }
        s->op_weight_bytes = bytes;
    }
    return s->op_weight;
}

/* ---- weight cache (see sdx__wcache) ----------------------------------- */

/* Index of the first entry whose tensor address is >= t. */
static int sdx__wcache_lower(const sdx__wcache *c, const sdx_tensor *t) {
    int lo = 0, hi = c->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)c->e[mid].t < (uintptr_t)t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* The entry of a registered weight, or NULL (activations, row views). */
static sdx__wcache_entry *sdx__wcache_find(sdx_ctx *ctx, const sdx_tensor *t) {
    sdx__wcache *c = &sdx__cpu(ctx)->wcache;
    int i = sdx__wcache_lower(c, t);
    return i < c->n && c->e[i].t == t ? &c->e[i] : NULL;
}

/* Registers a weight slot's tensor: kernels may then cache a packed copy.
 * `map`: the checkpoint mapping the slot's values may be a view of. */
static int sdx__wcache_add(sdx_ctx *ctx, const sdx_tensor *t, const struct sdx__map *map) {
    sdx__wcache *c = &sdx__cpu(ctx)->wcache;
    int i = sdx__wcache_lower(c, t);
    if (i < c->n && c->e[i].t == t) return SDX_OK;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        sdx__wcache_entry *e = (sdx__wcache_entry *)sdx__realloc(ctx, c->e, sizeof *e * (size_t)cap);
        if (!e) return sdx__nomem(ctx, "weight cache", sizeof *e * (size_t)cap);
        c->e = e;
        c->cap = cap;
    }
    memmove(c->e + i + 1, c->e + i, sizeof *c->e * (size_t)(c->n - i));
    memset(&c->e[i], 0, sizeof c->e[i]);
    c->e[i].t = t;
    c->e[i].map = map;
    c->n++;
    return SDX_OK;
}

/* The weight's values changed (or it goes away: forget): drop its panel. */
static void sdx__wcache_drop(sdx_ctx *ctx, const sdx_tensor *t, int forget) {
    sdx__wcache *c = &sdx__cpu(ctx)->wcache;
    int i = sdx__wcache_lower(c, t);
    if (i >= c->n || c->e[i].t != t) return;
    sdx__free(ctx, c->e[i].panel);
    c->e[i].panel = NULL;
    c->e[i].bytes = 0;
    if (!forget) return;
    memmove(c->e + i, c->e + i + 1, sizeof *c->e * (size_t)(c->n - i - 1));
    c->n--;
}


/* Bytes of packed weights held now (what a compute mode adds to the model). */
static size_t sdx__wcache_bytes(const sdx_ctx *ctx) {
    const sdx__wcache *c = &sdx__cpu(ctx)->wcache;
    size_t total = 0;
    for (int i = 0; i < c->n; i++) total += c->e[i].bytes;
    return total;
}

/* The backend's weight hooks (the loader calls them for host slots). */
static int sdx__cpu_weight_added(sdx_ctx *ctx, const sdx_tensor *w, const void *file) {
    return sdx__wcache_add(ctx, w, (const struct sdx__map *)file);
}
static void sdx__cpu_weight_changed(sdx_ctx *ctx, const sdx_tensor *w, int gone) { sdx__wcache_drop(ctx, w, gone); }

/* ---- fast exp ---------------------------------------------------------- */
/* exp for softmax and attention: Cody-Waite reduction to [-ln2/2, ln2/2]
 * and a degree-6 polynomial, relative error below 3e-7; inputs below
 * -87.3 (and -inf, for masked logits) give 0, NaN stays NaN. The portable
 * form is plain 8-wide loops the compiler vectorises; x86 with AVX2 or
 * AVX-512 and AArch64 get the same algorithm in intrinsics, from these
 * constants: the input range and the polynomial's coefficients, highest
 * power first (Horner), with core's log2(e) and two-part ln 2. */
#define SDX__EXP_MIN    (-87.3f)
#define SDX__EXP_MAX    88.0f
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

/* ---- SiLU, GELU and quick GELU ------------------------------------------ */
/* Core's sdx__swish1 (SiLU, quick GELU) and sdx__gelu1 over n values, and
 * the same algorithms 8 and 16 lanes at a time, bit for bit. */
typedef enum { SDX__ACT_SILU, SDX__ACT_GELU, SDX__ACT_QUICK_GELU } sdx__act;

/* The sigmoid's scale s of x sigmoid(s x) (SiLU, quick GELU). */
static float sdx__act_scale(sdx__act act) { return act == SDX__ACT_QUICK_GELU ? SDX__QUICK_GELU_SCALE : 1.0f; }

static void sdx__act_n_c(float *v, int64_t n, sdx__act act) {
    const float s = sdx__act_scale(act);
    if (act == SDX__ACT_GELU) for (int64_t i = 0; i < n; i++) v[i] = sdx__gelu1(v[i]);
    else for (int64_t i = 0; i < n; i++) v[i] = sdx__swish1(v[i], s);
}

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF
__attribute__((target("avx2,fma")))
static inline __m256 sdx__expf256(__m256 x) {
    const __m256 c = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(SDX__EXPF_LO)), _mm256_set1_ps(SDX__EXPF_HI));
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(c, _mm256_set1_ps(SDX__EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i ki = _mm256_cvtps_epi32(k), k1 = _mm256_srai_epi32(ki, 1), bias = _mm256_set1_epi32(127);
    const __m256 r1 = _mm256_fnmadd_ps(k, _mm256_set1_ps(SDX__EXP_LN2_HI), c);
    const __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(SDX__EXP_LN2_LO), r1);
    const __m256 rl = _mm256_fnmadd_ps(k, _mm256_set1_ps(SDX__EXP_LN2_LO), _mm256_sub_ps(r1, r));
    const __m256 hi = _mm256_add_ps(_mm256_set1_ps(1.0f), r), lo = _mm256_add_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), hi), r);
    __m256 q = _mm256_set1_ps(sdx__expf_q[0]), e;
    for (int j = 1; j < SDX__EXPF_TERMS; j++) q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(sdx__expf_q[j]));
    e = _mm256_add_ps(hi, _mm256_add_ps(lo, _mm256_fmadd_ps(_mm256_mul_ps(r, r), q, rl)));
    e = _mm256_mul_ps(e, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23)));
    e = _mm256_mul_ps(e, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ki, k1), bias), 23)));
    return _mm256_blendv_ps(e, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

__attribute__((target("avx2,fma")))
static inline __m256 sdx__erf256(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f), a = _mm256_andnot_ps(sign, x);
    const __m256 m1 = _mm256_cmp_ps(a, _mm256_set1_ps(SDX__ERF_SPLIT1), _CMP_GE_OQ);
    const __m256 m2 = _mm256_cmp_ps(a, _mm256_set1_ps(SDX__ERF_SPLIT2), _CMP_GE_OQ);
    /* the interval: each true compare is -1 */
    const __m256i at = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_add_epi32(_mm256_castps_si256(m1), _mm256_castps_si256(m2)));
#define SDX__ERF_LANES(row) _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(row)), at)
    const __m256 t = _mm256_blendv_ps(_mm256_mul_ps(a, a), _mm256_sub_ps(a, SDX__ERF_LANES(sdx__erf_center)), m1);
    __m256 p = SDX__ERF_LANES(sdx__erf_poly[SDX__ERF_TERMS - 1]), r;
    for (int c = SDX__ERF_TERMS - 2; c >= 0; c--) p = _mm256_fmadd_ps(p, t, SDX__ERF_LANES(sdx__erf_poly[c]));
#undef SDX__ERF_LANES
    r = _mm256_blendv_ps(_mm256_fmadd_ps(a, p, a), p, m1);
    r = _mm256_blendv_ps(r, _mm256_set1_ps(1.0f), _mm256_cmp_ps(a, _mm256_set1_ps(SDX__ERF_ONE), _CMP_GE_OQ));
    return _mm256_or_ps(_mm256_andnot_ps(sign, r), _mm256_and_ps(sign, x));
}

/* 8 lanes at a time, the tail in portable code */
__attribute__((target("avx2,fma")))
static void sdx__act_n_avx2(float *v, int64_t n, sdx__act act) {
    const __m256 one = _mm256_set1_ps(1.0f), s = _mm256_set1_ps(sdx__act_scale(act));
    const int gelu = act == SDX__ACT_GELU;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(v + i);
        _mm256_storeu_ps(v + i, gelu ? _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x),
                                                     _mm256_add_ps(one, sdx__erf256(_mm256_mul_ps(x, _mm256_set1_ps(SDX__GELU_RSQRT2)))))
                                     : _mm256_div_ps(x, _mm256_add_ps(one, sdx__expf256(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(s, x))))));
    }
    if (i < n) sdx__act_n_c(v + i, n - i, act);
}

__attribute__((target("avx512f")))
static inline __m512 sdx__expf512(__m512 x) {
    const __m512 c = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(SDX__EXPF_LO)), _mm512_set1_ps(SDX__EXPF_HI));
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(SDX__EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i ki = _mm512_cvtps_epi32(k), k1 = _mm512_srai_epi32(ki, 1), bias = _mm512_set1_epi32(127);
    const __m512 r1 = _mm512_fnmadd_ps(k, _mm512_set1_ps(SDX__EXP_LN2_HI), c);
    const __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(SDX__EXP_LN2_LO), r1);
    const __m512 rl = _mm512_fnmadd_ps(k, _mm512_set1_ps(SDX__EXP_LN2_LO), _mm512_sub_ps(r1, r));
    const __m512 hi = _mm512_add_ps(_mm512_set1_ps(1.0f), r), lo = _mm512_add_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), hi), r);
    __m512 q = _mm512_set1_ps(sdx__expf_q[0]), e;
    for (int j = 1; j < SDX__EXPF_TERMS; j++) q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(sdx__expf_q[j]));
    e = _mm512_add_ps(hi, _mm512_add_ps(lo, _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, rl)));
    e = _mm512_mul_ps(e, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k1, bias), 23)));
    e = _mm512_mul_ps(e, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(ki, k1), bias), 23)));
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

__attribute__((target("avx512f")))
static inline __m512 sdx__erf512(__m512 x) {
    const __m512 a = _mm512_abs_ps(x);
    const __mmask16 m1 = _mm512_cmp_ps_mask(a, _mm512_set1_ps(SDX__ERF_SPLIT1), _CMP_GE_OQ);
    const __mmask16 m2 = _mm512_cmp_ps_mask(a, _mm512_set1_ps(SDX__ERF_SPLIT2), _CMP_GE_OQ);
    const __m512i at = _mm512_add_epi32(_mm512_maskz_set1_epi32(m1, 1), _mm512_maskz_set1_epi32(m2, 1));
#define SDX__ERF_LANES(row) _mm512_permutexvar_ps(at, _mm512_castps128_ps512(_mm_loadu_ps(row)))
    const __m512 t = _mm512_mask_sub_ps(_mm512_mul_ps(a, a), m1, a, SDX__ERF_LANES(sdx__erf_center));
    __m512 p = SDX__ERF_LANES(sdx__erf_poly[SDX__ERF_TERMS - 1]), r;
    for (int c = SDX__ERF_TERMS - 2; c >= 0; c--) p = _mm512_fmadd_ps(p, t, SDX__ERF_LANES(sdx__erf_poly[c]));
#undef SDX__ERF_LANES
    r = _mm512_mask_mov_ps(_mm512_fmadd_ps(a, p, a), m1, p);
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, _mm512_set1_ps(SDX__ERF_ONE), _CMP_GE_OQ), _mm512_set1_ps(1.0f));
    /* x's sign on r (0xd8: bits of B where C is set, else of A) */
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(r), _mm512_castps_si512(x),
                                                         _mm512_set1_epi32(INT32_MIN), 0xd8));
}

/* 16 lanes at a time, the tail masked */
__attribute__((target("avx512f")))
static void sdx__act_n_avx512(float *v, int64_t n, sdx__act act) {
    const __m512 one = _mm512_set1_ps(1.0f), s = _mm512_set1_ps(sdx__act_scale(act));
    const int gelu = act == SDX__ACT_GELU;
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 in = sdx__lanes16(n - i);
        const __m512 x = _mm512_maskz_loadu_ps(in, v + i);
        _mm512_mask_storeu_ps(v + i, in, gelu ? _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x),
                                                              _mm512_add_ps(one, sdx__erf512(_mm512_mul_ps(x, _mm512_set1_ps(SDX__GELU_RSQRT2)))))
                                              : _mm512_div_ps(x, _mm512_add_ps(one, sdx__expf512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(s, x))))));
    }
}
SDX__INTRINSICS_WARNINGS_ON
#endif

/* The activation `act` of v[0, n), in place */
static void sdx__act_n(float *v, int64_t n, sdx__act act) {
#ifdef SDX__X86
    if (sdx__have_avx512f()) { sdx__act_n_avx512(v, n, act); return; }
    if (sdx__have_avx2()) { sdx__act_n_avx2(v, n, act); return; }
#endif
    sdx__act_n_c(v, n, act);
}
