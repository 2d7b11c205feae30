#pragma once
#include "api_rng.h"
#include "core.c"

/* ===================================================================== */
/*  Noise generators: torch.randn on a CPU generator (mt19937) and        */
/*  AUTOMATIC1111's Philox emulation of CUDA torch.randn                  */
/* ===================================================================== */
/* Both reproduce the reference bit for bit (tests/t_rng.c against
 * shared/golden/rng). The floating-point steps are written so that a
 * compiler contracting a*b+c into an FMA (gcc -std=gnu11 -mfma does)
 * cannot change a result: each product that feeds an addition is either
 * exact or is an explicit fmaf() call. Assumes float and double are IEEE
 * binary32/binary64 evaluated at their own precision (FLT_EVAL_METHOD 0,
 * as on x86-64 SSE and AArch64) and no -ffast-math. */

/* ---- mt19937 (PyTorch's CPU generator) ------------------------------ */

enum { SDX__MT_N = 624, SDX__MT_M = 397 };

static void sdx__mt_seed(sdx_rng *rng, uint32_t seed) {
    rng->mt[0] = seed;
    for (uint32_t i = 1; i < SDX__MT_N; i++)
        rng->mt[i] = 1812433253u * (rng->mt[i - 1] ^ (rng->mt[i - 1] >> 30)) + i;
    rng->mt_index = SDX__MT_N;
}

static void sdx__mt_twist(sdx_rng *rng) {
    uint32_t *mt = rng->mt;
    for (int i = 0; i < SDX__MT_N; i++) {
        uint32_t y = (mt[i] & 0x80000000u) | (mt[(i + 1) % SDX__MT_N] & 0x7fffffffu);
        mt[i] = mt[(i + SDX__MT_M) % SDX__MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    rng->mt_index = 0;
}

static uint32_t sdx__mt_next(sdx_rng *rng) {
    uint32_t y;
    if (rng->mt_index >= SDX__MT_N) sdx__mt_twist(rng);
    y = rng->mt[rng->mt_index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* ---- torch CPU, n < 16: double Box-Muller with a cached second value - */

/* torch's uniform_real_distribution<double>: 53 random bits of
 * (first << 32 | second). */
static double sdx__mt_uniform53(sdx_rng *rng) {
    uint64_t hi = sdx__mt_next(rng);
    uint64_t lo = sdx__mt_next(rng);
    return (double)(((hi << 32) | lo) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

static double sdx__torch_normal_double(sdx_rng *rng) {
    double u1, u2, radius, theta;
    if (rng->has_cached_normal) {
        rng->has_cached_normal = 0;
        return rng->cached_normal;
    }
    u1 = sdx__mt_uniform53(rng);
    u2 = sdx__mt_uniform53(rng);
    radius = sqrt(-2.0 * log(1.0 - u2));
    theta = 2.0 * 3.14159265358979323846 * u1;
    rng->cached_normal = radius * sin(theta);
    rng->has_cached_normal = 1;
    return radius * cos(theta);
}

/* ---- torch CPU, n >= 16: float32 Box-Muller in blocks of 16 ---------- */

/* PyTorch's AVX2 kernel evaluates log and sincos with Cephes-style
 * polynomials (ATen/native/cpu/avx_mathfun.h, log256_ps / sincos256_ps)
 * compiled with FMA contraction: each multiply whose only use is an add
 * becomes an FMA, the first such multiply winning when an add has two.
 * These are the same operations, one lane at a time. Valid for the
 * arguments the kernel sees: log on (0, 1], sincos on [0, 2pi). */
static float sdx__cephes_logf(float x) {
    uint32_t bits, exponent;
    float m, e, t, z, y;
    int below_sqrt_half;
    if (x < FLT_MIN) x = FLT_MIN;                  /* the kernel's max_ps */
    memcpy(&bits, &x, 4);
    exponent = bits >> 23;
    bits = (bits & ~0x7f800000u) | 0x3f000000u;    /* mantissa in [0.5, 1) */
    memcpy(&m, &bits, 4);
    e = (float)((int)exponent - 127) + 1.0f;
    below_sqrt_half = m < 0.707106781186547524f;
    if (below_sqrt_half) e -= 1.0f;
    t = (m - 1.0f) + (below_sqrt_half ? m : 0.0f); /* both steps exact */
    z = t * t;
    y = sdx__fmaf(7.0376836292e-2f, t, -1.1514610310e-1f);
    y = sdx__fmaf(y, t, 1.1676998740e-1f);
    y = sdx__fmaf(y, t, -1.2420140846e-1f);
    y = sdx__fmaf(y, t, 1.4249322787e-1f);
    y = sdx__fmaf(y, t, -1.6668057665e-1f);
    y = sdx__fmaf(y, t, 2.0000714765e-1f);
    y = sdx__fmaf(y, t, -2.4999993993e-1f);
    y = sdx__fmaf(y, t, 3.3333331174e-1f);
    y = y * t;
    y = sdx__fmaf(y, z, e * -2.12194440e-4f);
    y = y - 0.5f * z;                              /* 0.5 * z is exact */
    t = t + y;
    return sdx__fmaf(e, 0.693359375f, t);
}

/* x >= 0 (the kernel takes |x| and moves the sign to sin; here x is
 * always a non-negative angle). */
static void sdx__cephes_sincosf(float x, float *s, float *c) {
    const float fopi = 1.27323954473516f;          /* 4 / pi */
    uint32_t j, sin_sign, cos_sign, sb, cb;
    float jf, z, cos_poly, sin_poly, sin_v, cos_v, zero = 0.0f;
    int first_poly_is_sin;
    j = (uint32_t)(int32_t)(x * fopi);             /* truncation, like cvttps */
    j = (j + 1u) & ~1u;
    jf = (float)(int32_t)j;
    sin_sign = (j & 4u) << 29;
    first_poly_is_sin = (j & 2u) == 0;
    /* extended-precision reduction x - j * pi/4 */
    x = sdx__fmaf(jf, -0.78515625f, x);
    x = sdx__fmaf(jf, -2.4187564849853515625e-4f, x);
    x = sdx__fmaf(jf, -3.77489497744594108e-8f, x);
    cos_sign = (~(j - 2u) & 4u) << 29;
    z = x * x;
    cos_poly = sdx__fmaf(2.443315711809948e-5f, z, -1.388731625493765e-3f);
    cos_poly = sdx__fmaf(cos_poly, z, 4.166664568298827e-2f);
    cos_poly = cos_poly * z;
    cos_poly = sdx__fmaf(cos_poly, z, -(0.5f * z));   /* 0.5 * z is exact */
    cos_poly = cos_poly + 1.0f;
    sin_poly = sdx__fmaf(-1.9515295891e-4f, z, 8.3321608736e-3f);
    sin_poly = sdx__fmaf(sin_poly, z, -1.6666654611e-1f);
    sin_poly = sin_poly * z;
    sin_poly = sdx__fmaf(sin_poly, x, x);
    /* the kernel selects by masking and adds the other lane's +0 */
    sin_v = first_poly_is_sin ? zero + sin_poly : cos_poly + zero;
    cos_v = first_poly_is_sin ? cos_poly + zero : zero + sin_poly;
    memcpy(&sb, &sin_v, 4);
    memcpy(&cb, &cos_v, 4);
    sb ^= sin_sign;
    cb ^= cos_sign;
    memcpy(s, &sb, 4);
    memcpy(c, &cb, 4);
}

/* One block: d[0..8) hold u1 candidates, d[8..16) the angles. */
static void sdx__torch_normal_fill_16(float *d) {
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - d[j];                    /* (0, 1] for log */
        float radius = sqrtf(-2.0f * sdx__cephes_logf(u1));
        float theta = 6.2831855f * d[j + 8];      /* (float)(2 pi) */
        float s, c;
        sdx__cephes_sincosf(theta, &s, &c);
        /* the kernel ends with fmadd(n, std = 1, mean = 0): -0 becomes +0 */
        d[j] = radius * c + 0.0f;
        d[j + 8] = radius * s + 0.0f;
    }
}

/* torch's uniform_real_distribution<float>: 24 random bits. */
static float sdx__mt_uniform24(sdx_rng *rng) {
    return (float)(sdx__mt_next(rng) & 0xffffffu) * (1.0f / 16777216.0f);
}

static void sdx__torch_randn_cpu(sdx_rng *rng, float *out, size_t n) {
    size_t i;
    if (n < 16) {
        for (i = 0; i < n; i++) out[i] = (float)sdx__torch_normal_double(rng);
        return;
    }
    for (i = 0; i < n; i++) out[i] = sdx__mt_uniform24(rng);
    for (i = 0; i + 16 <= n; i += 16) sdx__torch_normal_fill_16(out + i);
    if (n % 16) {
        /* torch redoes the last 16 positions with fresh uniforms */
        float *tail = out + n - 16;
        for (i = 0; i < 16; i++) tail[i] = sdx__mt_uniform24(rng);
        sdx__torch_normal_fill_16(tail);
    }
}

/* ---- Philox 4x32-10 (A1111 rng_philox.py) ---------------------------- */

/* In place on ctr[4] with key[2]: 10 rounds, 9 key bumps. */
static void sdx__philox4x32_10(uint32_t ctr[4], const uint32_t key[2]) {
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)ctr[0] * 0xD2511F53u;
        uint64_t p1 = (uint64_t)ctr[2] * 0xCD9E8D57u;
        uint32_t c1 = ctr[1], c3 = ctr[3];
        ctr[0] = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        ctr[1] = (uint32_t)p1;
        ctr[2] = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        ctr[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* The reference's constants are float32 and its arithmetic float64:
 * u = x * A + A/2 and v = y * B + B/2 with A = (float)2.3283064e-10
 * (which is exactly 2^-32) and B = (float)(2.3283064e-10 * 6.2831855).
 * x * A is exact. y * B needs rounding, so it is formed exactly as an
 * integer (B = b_int * 2^b_exp) and rounded once by the conversion,
 * leaving no product for a compiler to fuse into the addition. */
typedef struct sdx__philox_bm {
    uint64_t b_int;     /* 24-bit mantissa of B */
    int      b_exp;
    double   b_half;
} sdx__philox_bm;

static void sdx__philox_bm_init(sdx__philox_bm *bm) {
    const float b = (float)(2.3283064e-10 * 6.2831855);
    int e;
    double mant = frexp((double)b, &e);               /* b = mant * 2^e, mant in [0.5, 1) */
    bm->b_int = (uint64_t)ldexp(mant, 24);
    bm->b_exp = e - 24;
    bm->b_half = (double)(b * 0.5f);
}

static float sdx__philox_box_muller(const sdx__philox_bm *bm, uint32_t x, uint32_t y) {
    double u = ((double)x + 0.5) * 2.3283064365386963e-10;            /* exact */
    double yb = ldexp((double)(int64_t)(y * bm->b_int), bm->b_exp);   /* < 2^56 */
    double v = yb + bm->b_half;
    return (float)(sqrt(-2.0 * log(u)) * sin(v));
}

static void sdx__philox_randn(sdx_rng *rng, float *out, size_t n) {
    const uint32_t key[2] = { (uint32_t)rng->seed, (uint32_t)(rng->seed >> 32) };
    uint32_t call = (uint32_t)rng->philox_calls++;
    sdx__philox_bm bm;
    sdx__philox_bm_init(&bm);
    for (size_t i = 0; i < n; i++) {
        /* the reference's element index is a uint32 arange */
        uint32_t ctr[4] = { call, 0, (uint32_t)i, 0 };
        sdx__philox4x32_10(ctr, key);
        out[i] = sdx__philox_box_muller(&bm, ctr[0], ctr[1]);
    }
}

/* ---- public ---------------------------------------------------------- */

SDX_API void sdx_rng_init(sdx_rng *rng, sdx_rng_kind kind, uint64_t seed) {
    memset(rng, 0, sizeof *rng);
    rng->kind = kind;
    rng->seed = seed;
    /* torch seeds mt19937 with the low 32 bits only. Any kind but CUDA
     * draws from mt19937 (as sdx_rng_randn dispatches), so it is seeded. */
    if (kind != SDX_RNG_CUDA) sdx__mt_seed(rng, (uint32_t)seed);
}

SDX_API void sdx_rng_randn(sdx_rng *rng, float *out, size_t n) {
    if (rng->kind == SDX_RNG_CUDA) sdx__philox_randn(rng, out, n);
    else sdx__torch_randn_cpu(rng, out, n);
}
