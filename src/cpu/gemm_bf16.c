#pragma once
#include "gemm.c"

/* ===================================================================== */
/*  bf16 GEMM: the same jobs with bf16 operands and VDPBF16PS             */
/* ===================================================================== */
/* In bf16 compute mode (the compute argument of linear, conv2d, attention)
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
 * split off. A weight slot (registered in the CPU state's wcache) is packed once
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

/* AMX tiles, 64-bit Linux only: CPUID has AMX-TILE and the AMX-BF16 or
 * AMX-INT8 bit asked for (`feature`: a bit of CPUID 7.0 EDX), the OS
 * enables the tile state in XCR0 (bits 17, 18), palette 1 has at least 8
 * tiles of 16 rows x 64 bytes, and the kernel grants this process the
 * tile data (arch_prctl: Linux 5.16 and later hand the 8 KiB of tile
 * state only to processes that ask; asking again is harmless). The
 * request is made here, raw, so that it does not depend on which system
 * headers declare syscall(). */
#if defined(SDX__X86) && defined(__x86_64__) && defined(__linux__) && !defined(SDX_NO_AMX)
#define SDX__AMX 1
#endif

#define SDX__CPUID_AMX_BF16 22
#define SDX__CPUID_AMX_INT8 25

static int sdx__cpu_amx(int feature) {
#ifdef SDX__AMX
    unsigned eax, ebx, ecx, edx, xcr0, xcr0_hi;
    long rc;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(edx & (1u << feature)) || !(edx & (1u << 24))) return 0;     /* the feature, AMX-TILE */
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
    (void)feature;
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
    sdx__cpu_state *s = sdx__cpu(ctx);
    int usable;
    if (!s->bf16_probed) {
        s->bf16_dot = sdx__cpu_avx512_bf16();
        s->bf16_amx = s->bf16_dot && sdx__cpu_amx(SDX__CPUID_AMX_BF16);
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
        const float *v = tmp;     /* f16 and block-quantized rows are widened into tmp */
        if (dtype == SDX_F32) v = (const float *)src + i * ld + k0;
        else sdx__load_f32(src, dtype, i * ld + k0, kc, tmp);
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

SDX__INTRINSICS_WARNINGS_OFF

/* sdx__pack_rows_bf16 for a block-quantized matrix (linear's weight: k0
 * and kc whole blocks, so whole pairs; no lo part), 16 rows at a time
 * (width a multiple of 16): each row's 32 values of a step of k, read in
 * place (Q8_0, Q4_0) or dequantized row by row into `stage` (16 kc
 * floats) first, rounded to bf16 as sdx__f32_to_bf16_sat_n does and
 * paired in registers; the 16 x 16 pair words, transposed, are 16 k pairs
 * of the strip. The same words as sdx__pack_rows_bf16 writes, without a
 * pass of scalar pairing per row. */
__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sdx__pack_rows_bf16_blocks(uint32_t *dst, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0, int rows,
                                       int nvalid, int width, int64_t k0, int kc, int kpad, float *stage) {
    const int in_place = sdx__blocks16(dtype);
    for (int s = 0; s < rows; s += width)
        for (int h = 0; h < width; h += 16) {
            uint32_t *out = dst + (int64_t)s * kpad + h;      /* pair j of row r: out[j * width + r] */
            int live = SDX__MAX(0, SDX__MIN(16, nvalid - s - h)), j = 0;
            int64_t first = (row0 + s + h) * ld + k0;       /* value index of the first row's k0 */
            if (!in_place)
                for (int r = 0; r < live; r++) sdx__dequant(src, dtype, first + r * ld, kc, stage + (int64_t)r * kc);
            for (int kk = 0; live && kk < kc; kk += 32, j += 16) {
                __m512 v[16];
                for (int r = 0; r < 16; r++) {
                    __m512 lo, hi;
                    if (r >= live) { v[r] = _mm512_setzero_ps(); continue; }
                    if (in_place) {
                        lo = sdx__load16_blocks(src, dtype, first + r * ld + kk);
                        hi = sdx__load16_blocks(src, dtype, first + r * ld + kk + 16);
                    } else {
                        lo = _mm512_loadu_ps(stage + (int64_t)r * kc + kk);
                        hi = _mm512_loadu_ps(stage + (int64_t)r * kc + kk + 16);
                    }
                    /* halves 2j and 2j + 1 side by side: word j of the pair */
                    v[r] = _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(sdx__bf16_round512(lo))),
                                                                  _mm512_cvtepi32_epi16(sdx__bf16_round512(hi)), 1));
                }
                sdx__transpose16(v);
                for (int p = 0; p < 16; p++) _mm512_storeu_si512((void *)(out + (int64_t)(j + p) * width), _mm512_castps_si512(v[p]));
            }
            for (; j < kpad; j++) memset(out + (int64_t)j * width, 0, 16 * sizeof(uint32_t));
        }
}

SDX__INTRINSICS_WARNINGS_ON

/* B rows of a linear layer as pairs (sdx__pack_rows_bf16): a
 * block-quantized weight through sdx__pack_rows_bf16_blocks. */
static void sdx__pack_b_rows_bf16(uint32_t *dst, uint32_t *lo, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                                  int rows, int nvalid, int64_t k0, int kc, int kpad, float *tmp, uint16_t *t16, float *stage) {
    if (sdx__dtype_is_block(dtype)) sdx__pack_rows_bf16_blocks(dst, src, dtype, ld, row0, rows, nvalid, SDX__BNR, k0, kc, kpad, stage);
    else sdx__pack_rows_bf16(dst, lo, src, dtype, ld, row0, rows, nvalid, SDX__BNR, k0, kc, kpad, tmp, t16);
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
    int64_t m0 = (rest / g->n_tiles) * SDX__MB + (g->weight_is_a ? g->w_first : 0);
    int64_t n0 = (rest % g->n_tiles) * SDX__NB + (g->weight_is_a ? 0 : g->w_first);
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
        else if (g->b_kind == SDX__B_ROWS_T) sdx__pack_b_rows_bf16(pb, pb_lo, b, g->b_dtype, g->K, n0, np, nv, k0, kc, kp, tmp, t16, stage);
        else sdx__pack_im2col_bf16(g, pb, pb_lo, b, n0, nv, np, k0, kc, kp, stage, t16, tmp);
        for (int i = 0; i < mp; i += SDX__BMR)
            as[i / SDX__BMR] = panel_a ? sdx__panel_strip(panel_a, g->panel_rows, g->K, SDX__BMR, m0 + i - g->w_first, k0, kp, kp, edge)
                                       : pa + (int64_t)i * kp;
        for (int j = 0; j < np; j += SDX__BNR)
            bs[j / SDX__BNR] = panel_b ? sdx__panel_strip(panel_b, g->panel_rows, g->K, SDX__BNR, n0 + j - g->w_first, k0, kp, kp, edge)
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
/* Where the CPU has AMX-BF16 (sdx__cpu_amx) bf16 mode runs its GEMMs
 * on TDPBF16PS, which multiplies a 16 x 32 bf16 tile by a 32 x 16 one
 * (16 pairs of k by 16 columns) into a 16 x 16 f32 tile: the pairwise
 * products of VDPBF16PS, sixteen times as many per instruction. B strips
 * are the AVX-512 kernel's (BNR = 32 columns, pairs of k), padded with
 * zero pairs to whole tiles; A is packed in whole 16 x 32 tiles (1 KiB,
 * row-major), which is also how a convolution's weight panel is cached
 * (SDX__PANEL_TILES). Jobs are larger than the f32 path's on the
 * weight's side, so that the operand packed per job (the im2col of a
 * convolution, the activations of a linear) serves up to 512 rows of the
 * weight, 2048 where its panel is cached (sdx__gemm_run_amx). */

#define SDX__ATILE      512      /* halves in an A tile (16 rows x 32)            */
#define SDX__AJOB_LONG  512      /* job rows (cols) on the weight's side          */
#define SDX__AJOB_SHORT 128      /* job cols (rows) on the other side, at most     */
#define SDX__AJOB_WIDE  2048     /* job rows (cols) on the weight's side from a panel */
#define SDX__AJOB_TILE  ((size_t)SDX__AJOB_SHORT * 1024)   /* floats of a job's C: 512 KiB */

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
#define SDX__AMX_TILE  SDX__AJOB_TILE                                /* floats: C tile       */
#define SDX__AMX_TMP   ((size_t)SDX__AJOB_WIDE + SDX__BKC + 64)     /* floats: one row      */

static size_t sdx__gemm_amx_scratch_bytes(void) {
    return (SDX__AMX_PA + SDX__AMX_PB) * sizeof(uint32_t)
         + (SDX__AMX_TILE + SDX__AMX_TMP + SDX__AJOB_WIDE + SDX__BF16_STAGE) * sizeof(float)
         + (2 * SDX__BF16_STAGE + 2) * sizeof(uint16_t) + 256;
}

static void sdx__gemm_job_amx(const sdx__gemm *g, int64_t job, int thread) {
    uint32_t *pb = (uint32_t *)sdx__scratch_f32(g->ctx, thread);
    uint16_t *pa = (uint16_t *)(pb + SDX__AMX_PB);
    float *tile = (float *)(pa + 2 * SDX__AMX_PA);
    float *tmp = tile + SDX__AMX_TILE, *bias_buf = tmp + SDX__AMX_TMP, *stage = bias_buf + SDX__AJOB_WIDE;
    uint16_t *t16 = (uint16_t *)(stage + SDX__BF16_STAGE);
    int64_t per_batch = g->m_tiles * g->n_tiles;
    int64_t batch = job / per_batch, rest = job % per_batch;
    int64_t m0 = (rest / g->n_tiles) * g->mb + (g->weight_is_a ? g->w_first : 0);
    int64_t n0 = (rest % g->n_tiles) * g->nb + (g->weight_is_a ? 0 : g->w_first);
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
            at = panel_a + (((m0 - g->w_first) / 16) * KT + k0 / 32) * SDX__ATILE;
            a_rs = KT * SDX__ATILE;
        } else {
            sdx__pack_tiles_bf16(pa, split_a ? pa + a_lo : NULL, a, g->a_dtype, g->K, m0, mp, mv, k0, kc, kt, tmp, t16);
        }
        if (panel_b) { /* strip by strip below */ }
        else if (g->b_kind == SDX__B_ROWS_T)
            sdx__pack_b_rows_bf16(pb, split_b ? pb + b_lo : NULL, b, g->b_dtype, g->K, n0, np, nv, k0, kc, kpad, tmp, t16, stage);
        else if (g->stride == 1) sdx__pack_im2col_bf16_s1(g, pb, split_b ? pb + b_lo : NULL, b, n0, nv, np, k0, kc, kpad);
        else sdx__pack_im2col_bf16(g, pb, split_b ? pb + b_lo : NULL, b, n0, nv, np, k0, kc, kpad, stage, t16, tmp);
        for (int j = 0; j < np; j += SDX__BNR) {
            const uint32_t *bs = pb + (int64_t)j * kpad;
            /* a short or padded strip of the panel: into pb, which a panel leaves free, used up below */
            if (panel_b) bs = sdx__panel_strip(panel_b, g->panel_rows, g->K, SDX__BNR, n0 + j - g->w_first, k0, kp, kpad, pb);
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
    sdx_ctx *ctx; uint32_t *panel; const void *src; sdx_dtype dtype;
    int64_t row0, rows, K;   /* the panel holds weight rows [row0, row0 + rows) */
    int width;       /* rows per strip (one job); 16 with tiles */
    int tiles;       /* SDX__PANEL_TILES layout: rows padded to 32, K to 32 */
} sdx__panel_args;

static void sdx__panel_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__panel_args *p = (const sdx__panel_args *)arg;
    float *tmp = sdx__scratch_f32(p->ctx, thread);
    uint16_t *t16 = (uint16_t *)(tmp + p->K + 16);
    int64_t kt = (p->K + 31) / 32, kp = (p->K + 1) / 2;
    for (int64_t s = begin; s < end; s++) {
        int64_t r0 = s * p->width;
        int w = (int)SDX__MIN((int64_t)p->width, p->rows - r0);
        if (p->tiles)
            sdx__pack_tiles_bf16((uint16_t *)p->panel + r0 * kt * 32, NULL, p->src, p->dtype, p->K, p->row0 + r0, 16, SDX__MAX(w, 0),
                                 0, (int)p->K, (int)kt, tmp, t16);
        else if (sdx__dtype_is_block(p->dtype) && w == SDX__BNR && p->width == SDX__BNR)   /* whole blocks, 16 rows a pass */
            sdx__pack_rows_bf16_blocks(p->panel + r0 * kp, p->src, p->dtype, p->K, p->row0 + r0, w, w, w, 0, (int)p->K, (int)kp, tmp);
        else
            sdx__pack_rows_bf16(p->panel + r0 * kp, NULL, p->src, p->dtype, p->K, p->row0 + r0, w, w, w, 0, (int)p->K, (int)kp, tmp, t16);
    }
}

/* Bytes of one weight row in a panel of `kind` over K. */
static size_t sdx__panel_row_bytes(int kind, int64_t K) {
    return kind == SDX__PANEL_TILES ? (size_t)((K + 31) / 32 * 32) * sizeof(uint16_t) : (size_t)((K + 1) / 2) * sizeof(uint32_t);
}

/* Packs weight rows [row0, row0 + rows) of g's weight into `panel`, a
 * panel of `kind` (tiles: rows padded to 32), on every thread. */
static int sdx__panel_pack(sdx_ctx *ctx, uint32_t *panel, const sdx__gemm *g, int kind, int64_t row0, int64_t rows) {
    sdx__panel_args p;
    size_t row = (size_t)(g->K + 16) * sizeof(float) + (size_t)(g->K + 34) * sizeof(uint16_t);
    int rc;
    p.ctx = ctx;
    p.panel = panel;
    p.src = g->weight_is_a ? g->a : g->b;
    p.dtype = g->weight_is_a ? g->a_dtype : g->b_dtype;
    p.row0 = row0;
    p.rows = rows;
    p.K = g->K;
    p.tiles = kind == SDX__PANEL_TILES;
    p.width = p.tiles ? 16 : g->weight_is_a ? SDX__BMR : SDX__BNR;
    /* a block-quantized strip dequantizes 16 rows into f32 first */
    if (sdx__dtype_is_block(p.dtype)) row = SDX__MAX(row, (size_t)16 * (size_t)g->K * sizeof(float));
    if ((rc = sdx__scratch_reserve(ctx, row)) != SDX_OK) return rc;
    sdx__parallel_for(ctx, p.tiles ? (rows + 31) / 32 * 2 : (rows + p.width - 1) / p.width, sdx__panel_range, &p);
    return SDX_OK;
}

/* The weight operand's cached panel of `kind`, packed now on first use;
 * NULL when the weight is no registered slot (or the panel cannot be
 * had), and the jobs then pack it block by block into the same values. */
static const uint32_t *sdx__weight_panel(sdx_ctx *ctx, const sdx__gemm *g, int kind) {
    sdx__wcache_entry *e = g->weight ? sdx__wcache_find(ctx, g->weight) : NULL;
    int64_t rows = g->weight_is_a ? g->M : g->N;
    size_t bytes;
    uint32_t *panel;
    /* a quantized weight stays so (sdx__gemm_run_panels packs it per call) */
    if (!e || g->K > ((int64_t)1 << 24) || sdx__dtype_is_block(g->weight_is_a ? g->a_dtype : g->b_dtype)) return NULL;
    if (e->panel && e->kind == kind) return (const uint32_t *)e->panel;
    sdx__wcache_drop(ctx, g->weight, 0);
    if (!sdx__mul_size((size_t)(kind == SDX__PANEL_TILES ? (rows + 31) / 32 * 32 : rows), sdx__panel_row_bytes(kind, g->K), &bytes))
        return NULL;
    if (!(panel = (uint32_t *)sdx__malloc(ctx, bytes))) return NULL;
    if (sdx__panel_pack(ctx, panel, g, kind, 0, rows) != SDX_OK) {
        sdx__free(ctx, panel);
        return NULL;
    }
    e->panel = panel;
    e->bytes = bytes;
    e->kind = kind;
    /* a view of the file: its pages are read again only if another kernel
     * (Winograd, a device upload) needs the values themselves */
    if (e->map) sdx__map_release(e->map, g->weight->data, sdx_tensor_nbytes(g->weight));
    return panel;
}

/* Runs a bf16-mode GEMM's jobs (m_tiles x n_tiles of C per image, `unit`
 * rows of the weight each) with the weight's panel: its cached one; for a
 * block-quantized weight, which keeps none (a bf16 copy would be the size
 * the format saves), panels packed now, a chunk of the weight's rows at a
 * time into the context's op buffer, and the chunk's jobs; the jobs pack
 * the weight themselves only where neither can be had. Packing in every
 * job dequantized the weight once per 128 rows of the other operand,
 * which at SD's shapes cost a third of the products' time. The words are
 * the same either way, so are the bits. */
static int sdx__gemm_run_panels(sdx_ctx *ctx, sdx__gemm *g, int kind, int64_t unit, void (*range)(void *, int64_t, int64_t, int)) {
    int64_t rows = g->weight_is_a ? g->M : g->N, *tiles = g->weight_is_a ? &g->m_tiles : &g->n_tiles, chunk;
    size_t row_bytes = sdx__panel_row_bytes(kind, g->K);
    uint32_t *buffer;
    g->w_first = 0;
    g->panel_rows = rows;
    g->panel = sdx__weight_panel(ctx, g, kind);
    if (g->panel || !sdx__dtype_is_block(g->weight_is_a ? g->a_dtype : g->b_dtype)) {
        sdx__parallel_for(ctx, g->batch * g->m_tiles * g->n_tiles, range, g);
        return SDX_OK;
    }
    /* whole jobs a chunk: unit is a whole number of strips (tiles: of 32 rows) */
    chunk = SDX__MAX((int64_t)1, (int64_t)(sdx__cpu(ctx)->op_weight_chunk / row_bytes) / unit) * unit;
    chunk = SDX__MIN(chunk, (rows + unit - 1) / unit * unit);
    if (!(buffer = (uint32_t *)sdx__op_weight_buffer(ctx, (size_t)chunk * row_bytes, "bf16 panel of a quantized weight")))
        return SDX_ERR_NOMEM;
    for (int64_t c0 = 0; c0 < rows; c0 += chunk) {
        int64_t n = SDX__MIN(chunk, rows - c0);
        int rc = sdx__panel_pack(ctx, buffer, g, kind, c0, n);
        if (rc != SDX_OK) return rc;
        g->panel = buffer;
        g->w_first = c0;
        g->panel_rows = n;
        *tiles = (n + unit - 1) / unit;
        sdx__parallel_for(ctx, g->batch * g->m_tiles * g->n_tiles, range, g);
    }
    g->panel = NULL;
    return SDX_OK;
}

/* AMX job shape: up to SDX__AJOB_LONG rows of the weight (SDX__AJOB_WIDE
 * from a panel, cached or a quantized weight's chunk) and as many of the
 * other operand, at most SDX__AJOB_SHORT, as C's SDX__AJOB_TILE floats
 * hold; split evenly (multiples of 32) and further while there are fewer
 * than two jobs per thread. The other operand is packed once per job, so
 * a linear's activations are packed N / (job's columns) times, and a
 * convolution's im2col once per job's output channels: SDXL's GEGLU
 * packed 10 times at 512 columns, 3 at 2048 (docs/PERFORMANCE.md). Jobs
 * that pack the weight themselves (no panel) keep to SDX__AJOB_LONG. The
 * shape does not change the bits: each C value sums the same tiles in the
 * same order. */
#ifdef SDX__AMX
static void sdx__amx_shape(int64_t L, int64_t S, int64_t splits, int64_t *l_size, int64_t *s_size, int64_t *s_tiles) {
    *l_size = ((L + splits - 1) / splits + 31) / 32 * 32;
    *s_size = SDX__MAX((int64_t)32, SDX__MIN((int64_t)SDX__AJOB_SHORT, (int64_t)SDX__AJOB_TILE / *l_size / 32 * 32));
    *s_tiles = (S + *s_size - 1) / *s_size;
}

static int sdx__gemm_run_amx(sdx_ctx *ctx, sdx__gemm *g) {
    int64_t L = g->weight_is_a ? g->M : g->N, S = g->weight_is_a ? g->N : g->M;
    int kind = g->weight_is_a ? SDX__PANEL_TILES : SDX__PANEL_B;
    /* the cached panel (packed now if not yet), or a quantized weight's chunks */
    int wide = sdx__weight_panel(ctx, g, kind) != NULL || sdx__dtype_is_block(g->weight_is_a ? g->a_dtype : g->b_dtype);
    int64_t most = wide ? SDX__AJOB_WIDE : SDX__AJOB_LONG, splits = (L + most - 1) / most, l_size, s_size, s_tiles;
    int rc;
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_amx_scratch_bytes())) != SDX_OK) return rc;
    sdx__amx_shape(L, S, splits, &l_size, &s_size, &s_tiles);
    while (g->batch * splits * s_tiles < 2 * (int64_t)sdx_threads(ctx) && splits * 32 < L)
        sdx__amx_shape(L, S, ++splits, &l_size, &s_size, &s_tiles);
    g->mb = g->weight_is_a ? l_size : s_size;
    g->nb = g->weight_is_a ? s_size : l_size;
    g->m_tiles = (g->M + g->mb - 1) / g->mb;
    g->n_tiles = (g->N + g->nb - 1) / g->nb;
    return sdx__gemm_run_panels(ctx, g, kind, l_size, sdx__gemm_range_amx);
}
#endif

static int sdx__gemm_run_bf16(sdx_ctx *ctx, sdx__gemm *g) {
    int rc;
    g->ctx = ctx;
    g->split = !sdx__cpu(ctx)->bf16_round_act && (g->weight_is_a ? g->b_dtype : g->a_dtype) != SDX_BF16;
#ifdef SDX__AMX
    if (sdx__cpu(ctx)->bf16_amx) return sdx__gemm_run_amx(ctx, g);
#endif
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_bf16_scratch_bytes())) != SDX_OK) return rc;
    g->m_tiles = (g->M + SDX__MB - 1) / SDX__MB;
    g->n_tiles = (g->N + SDX__NB - 1) / SDX__NB;
    return sdx__gemm_run_panels(ctx, g, g->weight_is_a ? SDX__PANEL_A : SDX__PANEL_B, g->weight_is_a ? SDX__MB : SDX__NB,
                                sdx__gemm_range_bf16);
}

#endif /* SDX__X86 */
