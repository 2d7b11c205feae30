#pragma once
/* A part of core.c, included in its middle (after the scalar half
 * conversions it falls back to); the include below is for editors. */
#include "core.c"

/* ===================================================================== */
/*  Half-float array conversion. The scalar loops in core.c define the    */
/*  results; the SIMD paths below (x86-64 AVX2/F16C, chosen at run time;  */
/*  AArch64 NEON, always there) are tested bit-identical to them          */
/*  (tests/t_half.c). Each ISA defines sdx__<conversion>_simd.            */
/* ===================================================================== */

/* Define SDX_NO_SIMD to compile only the scalar loops. */
#if !defined(SDX_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define SDX__HALF_X86 1
#include <immintrin.h>
#include <cpuid.h>
#else
#define SDX__HALF_X86 0
#endif
#if !defined(SDX_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
#define SDX__HALF_NEON 1
#include <arm_neon.h>
#else
#define SDX__HALF_NEON 0
#endif
#define SDX__HALF_SIMD (SDX__HALF_X86 || SDX__HALF_NEON)

static void sdx__f32_to_f16_sat_scalar(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx__f32_to_f16_sat(src[i]);
}

#if SDX__HALF_X86

/* The whole file is compiled for the baseline ISA; only these functions
 * use AVX2/F16C, and they run only after the CPU said it has both. */
#define SDX__TARGET_F16C_AVX2 __attribute__((target("avx2,f16c")))

enum { SDX__CPU_PROBED = 1, SDX__CPU_AVX2_F16C = 2 };

/* CPUID is slow (a VM exit under most hypervisors), so the answer is
 * probed once. Racing first callers compute the same value. */
static int sdx__cpu_features(void) {
    static int cached = 0;
    int f = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (!f) {
        unsigned eax, ebx, ecx, edx;
        int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
        __builtin_cpu_init();
        /* libgcc / compiler-rt also check that the OS saves YMM state. */
        f = SDX__CPU_PROBED;
        if (f16c && __builtin_cpu_supports("avx2")) f |= SDX__CPU_AVX2_F16C;
        __atomic_store_n(&cached, f, __ATOMIC_RELAXED);
    }
    return f;
}

static int sdx__half_simd_available(void) { return (sdx__cpu_features() & SDX__CPU_AVX2_F16C) != 0; }

/* VCVTPS2PH with immediate 0 rounds to nearest even whatever MXCSR says,
 * keeps subnormals, sends overflow to Inf and quiets NaNs keeping the top
 * payload bits: exactly sdx_f32_to_f16. */
SDX__TARGET_F16C_AVX2 static void sdx__f32_to_f16_simd(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), h);
    }
    sdx__f32_to_f16_scalar(src + i, dst + i, n - i);
}

/* VCVTPH2PS is exact; it quiets signalling NaNs like sdx_f16_to_f32. */
SDX__TARGET_F16C_AVX2 static void sdx__f16_to_f32_simd(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    sdx__f16_to_f32_scalar(src + i, dst + i, n - i);
}

/* Activation store: clamp to +-65504, then convert. MINPS/MAXPS return
 * their second operand when either is NaN, so with x second a NaN passes
 * through unclamped, as in sdx__f32_to_f16_sat. */
SDX__TARGET_F16C_AVX2 static void sdx__f32_to_f16_sat_simd(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
#ifndef SDX_UNSAFE_F16_OVERFLOW
    const __m256 hi = _mm256_set1_ps(65504.0f), lo = _mm256_set1_ps(-65504.0f);
#endif
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
#ifndef SDX_UNSAFE_F16_OVERFLOW
        x = _mm256_max_ps(lo, _mm256_min_ps(hi, x));
#endif
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    sdx__f32_to_f16_sat_scalar(src + i, dst + i, n - i);
}

/* The integer formula of sdx_f32_to_bf16, eight lanes at a time. */
SDX__TARGET_F16C_AVX2 static void sdx__f32_to_bf16_simd(const float *src, uint16_t *dst, size_t n) {
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i quiet = _mm256_set1_epi32(0x0040);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));
        __m256i top = _mm256_srli_epi32(x, 16);
        __m256i odd = _mm256_and_si256(top, one);
        __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(bias, odd)), 16);
        /* both sides are non-negative as int32, so the signed compare is exact */
        __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
        __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(top, quiet), is_nan);
        /* every lane is <= 0xffff, so the saturating pack is a plain
         * narrowing; it interleaves 128-bit halves, the permute undoes it */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_castsi256_si128(packed));
    }
    sdx__f32_to_bf16_scalar(src + i, dst + i, n - i);
}

SDX__TARGET_F16C_AVX2 static void sdx__bf16_to_f32_simd(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m256i x = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), x);
    }
    sdx__bf16_to_f32_scalar(src + i, dst + i, n - i);
}

#define SDX__HALF_DISPATCH(simd, scalar, src, dst, n) \
    do { if ((n) >= 8 && sdx__half_simd_available()) simd(src, dst, n); else scalar(src, dst, n); } while (0)

#elif SDX__HALF_NEON

/* NEON is part of AArch64. FCVTN and FCVTL convert as the scalar
 * functions do under the default FPCR (round to nearest even, subnormals
 * kept, overflow to Inf, NaNs quieted keeping their top payload bits). */
static int sdx__half_simd_available(void) { return 1; }

static void sdx__f32_to_f16_simd(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
    sdx__f32_to_f16_scalar(src + i, dst + i, n - i);
}

static void sdx__f16_to_f32_simd(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
    sdx__f16_to_f32_scalar(src + i, dst + i, n - i);
}

/* Clamp to +-65504, then convert. FMIN/FMAX return a NaN operand
 * (quieted), which converts to what the scalar path gives that NaN. */
static void sdx__f32_to_f16_sat_simd(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
#ifndef SDX_UNSAFE_F16_OVERFLOW
    const float32x4_t hi = vdupq_n_f32(65504.0f), lo = vdupq_n_f32(-65504.0f);
#endif
    for (; i + 4 <= n; i += 4) {
        float32x4_t x = vld1q_f32(src + i);
#ifndef SDX_UNSAFE_F16_OVERFLOW
        x = vmaxq_f32(lo, vminq_f32(hi, x));
#endif
        vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(x)));
    }
    sdx__f32_to_f16_sat_scalar(src + i, dst + i, n - i);
}

/* The integer formula of sdx_f32_to_bf16, four lanes at a time. */
static void sdx__f32_to_bf16_simd(const float *src, uint16_t *dst, size_t n) {
    const uint32x4_t one = vdupq_n_u32(1), bias = vdupq_n_u32(0x7fff);
    const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffff), inf = vdupq_n_u32(0x7f800000), quiet = vdupq_n_u32(0x0040);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32x4_t x = vreinterpretq_u32_f32(vld1q_f32(src + i));
        uint32x4_t top = vshrq_n_u32(x, 16);
        uint32x4_t rounded = vshrq_n_u32(vaddq_u32(x, vaddq_u32(bias, vandq_u32(top, one))), 16);
        uint32x4_t is_nan = vcgtq_u32(vandq_u32(x, abs_mask), inf);
        vst1_u16(dst + i, vmovn_u32(vbslq_u32(is_nan, vorrq_u32(top, quiet), rounded)));
    }
    sdx__f32_to_bf16_scalar(src + i, dst + i, n - i);
}

static void sdx__bf16_to_f32_simd(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(src + i), 16)));
    sdx__bf16_to_f32_scalar(src + i, dst + i, n - i);
}

#define SDX__HALF_DISPATCH(simd, scalar, src, dst, n) simd(src, dst, n)

#else /* no SIMD */

static int sdx__half_simd_available(void) { return 0; }
#define SDX__HALF_DISPATCH(simd, scalar, src, dst, n) scalar(src, dst, n)

#endif

SDX_API void sdx_f32_to_f16_n(const float *src, uint16_t *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f32_to_f16_simd, sdx__f32_to_f16_scalar, src, dst, n);
}
SDX_API void sdx_f16_to_f32_n(const uint16_t *src, float *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f16_to_f32_simd, sdx__f16_to_f32_scalar, src, dst, n);
}
SDX_API void sdx_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f32_to_bf16_simd, sdx__f32_to_bf16_scalar, src, dst, n);
}
SDX_API void sdx_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__bf16_to_f32_simd, sdx__bf16_to_f32_scalar, src, dst, n);
}

/* f16 activation store (saturating unless SDX_UNSAFE_F16_OVERFLOW); the
 * array form of sdx__f32_to_f16_sat for sdx__store_f32. */
static void sdx__f32_to_f16_sat_n(const float *src, uint16_t *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f32_to_f16_sat_simd, sdx__f32_to_f16_sat_scalar, src, dst, n);
}
