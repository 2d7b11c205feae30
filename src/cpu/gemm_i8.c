#pragma once
#include "gemm_bf16.c"

/* ===================================================================== */
/*  int8 GEMM: block-quantized weights times activations quantized per   */
/*  block at run time                                                     */
/* ===================================================================== */
/* A linear layer whose weight is Q8_0, Q4_0, Q5_0, Q4_1, Q5_1 (blocks of
 * 32 along K), Q4_K or Q5_K (blocks of 256 in 8 groups of 32, each with
 * its own scale and min) may multiply integers, as ggml does: each activation row
 * is quantized per block of 32 with an f32 scale, each block's dot
 * product with the weight's integers is an exact i32 sum, and the blocks
 * are summed in f32. The arithmetic is defined once, here, by the
 * portable code (sdx__q8a_row_c and sdx__i8_kernel_c, the
 * specification); every SIMD path computes the same integers and the
 * same f32 operations in the same order, so every path gives the same
 * bits (tests/t_quantmm.c compares each compiled one with the portable
 * one):
 *
 * Activations, per row and block of 32 values x (widened to f32):
 *   amax = the largest |x|, compared as bits, so a NaN or Inf is seen;
 *   a NaN or Inf in the block: d = NaN, Q = 0, so the row's outputs are
 *     NaN (as in f32, never 0);
 *   amax < 2^-100: d = 0, Q = 0 (the block counts as zero: its products
 *     with any f16-scaled weight are below 2^-76);
 *   amax > 2^118: amax = 2^118 and Q saturates (d times any finite f16
 *     weight scale then stays finite);
 *   otherwise d = amax / 32767 and Q = round-half-even(clamp(x * (32767 /
 *     amax), -32767, 32767)); s = the sum of the block's Q.
 * Q is 16 bits, not ggml's 8 (quantize_row_q8_0): on the tiny SD 1.x
 * model, 8-bit activations moved a UNet call by 1.5e-2 rel-L2 from the
 * same weights multiplied exactly, over the half-precision budget (1e-2);
 * 16 bits move it by less than the f32 arithmetic's own rounding. The
 * kernels multiply Q's two bytes, hi = Q >> 8 (signed) and lo = Q & 255
 * (unsigned), as int8 digits: Q w = 256 hi w + lo w. Also unlike ggml, d
 * stays f32 (ggml rounds it to f16) and ties round to even.
 *
 * Weights, per block of 32: integers w (Q8_0 q; Q4_0 q - 8; Q5_0 q - 16;
 * Q4_1 and Q5_1 q, with the min m) and the f16 scale dw (and m) widened
 * to f32; a K type's group: w = q, dw = d * sc and m = -(dmin * mn) in
 * f32, as ggml's dequantizer rounds them.
 *
 * Output y[i][o]: acc = 0; for each block b of K in order:
 *   acc = fma((float)isum_b, da_b * dw_b, acc), isum_b = sum of Q w (an
 *   exact i32: |isum| <= 32 * 32767 * 128 < 2^31; the conversion rounds
 *   to nearest even past 2^24), da_b * dw_b rounded once;
 *   the types with a min then acc = fma((float)s_b, da_b * m_b, acc);
 * then y = acc + bias, narrowed to y's dtype (the f32 GEMM's store).
 *
 * Jobs are blocks of C of up to I8_MJ x I8_NJ (sdx__gemm_split). Per step
 * of I8_KB blocks of K, a job quantizes its rows into two byte planes (hi,
 * lo) and unpacks its weight columns into strips of 16 columns: per block
 * of a strip, 512 bytes of w as [k / 4][column][k % 4] (the layout of
 * VPDPBUSD's dwords and of an AMX B tile), then the 16 scales and 16 mins
 * (f32) and the 16 sums of w (i32). Nothing of the weight is kept: a
 * strip is 1.3x the Q8_0 bytes and 2.4x Q4_0's, which would defeat the
 * format. The kernels run over the step's blocks into an f32 tile
 * (accumulating from the second step on; f32 in memory keeps every bit,
 * so steps, jobs and threads change nothing).
 *
 * Kernels: AMX-INT8 (per block TDPBSSD of the hi plane and TDPBUSD of the
 * lo plane, 16 x 32 A tiles by an 8-row B tile, into two 16 x 16 i32
 * tiles combined and scaled by AVX-512), AVX512-VNNI (VPDPBUSD of the
 * digits as unsigned bytes, hi + 128 and lo, by w: the hi sum starts at
 * -128 sum(w), is shifted by 8, and the lo sum goes on from there), AVX2
 * (Q as i16 by w widened to i16, VPMADDWD), NEON (SDOT of hi and lo - 128
 * where the build targets the dot-product extension, VMULL + VPADAL
 * otherwise, plus 128 sum(w)) and the portable one. Which runs where is
 * a table (sdx__i8_table), from measurements.
 *
 * Q2_K, Q3_K and Q6_K stay on the exact path: they scale every 16 values,
 * which would double the per-block scaling that already costs half as
 * much as AMX's products (measured per 16 x 16 x 32 block: 13-16 ns of
 * scaling, 30 ns of tile loads, products and stores). */

#define SDX__I8_KB 16       /* blocks of 32 per step of K                     */
#define SDX__I8_MJ 288      /* job rows: a multiple of every kernel's rows (48) */
#define SDX__I8_NJ 512      /* job columns (multiple of 32)                   */
#define SDX__I8_LDC (SDX__I8_NJ + 16)   /* f32 tile row stride            */
#define SDX__I8_SB 704      /* bytes per (strip, block): 512 w, 16 scales, 16 mins, 16 sums of w */
#define SDX__I8_ROWS 48     /* job rows are a multiple of this            */

/* amax thresholds as f32 bits: 2^-100 and 2^118 */
#define SDX__Q8A_TINY 0x0d800000u
#define SDX__Q8A_HUGE 0x7a800000u
#define SDX__Q8A_RANGE 32767.0f

/* The kernels, in the order of sdx__i8_kernel_names. */
enum { SDX__I8_SCALAR, SDX__I8_NEON, SDX__I8_AVX2, SDX__I8_VNNI, SDX__I8_AMX, SDX__I8_KERNELS };
static const char *const sdx__i8_kernel_names[SDX__I8_KERNELS] = { "portable", "NEON", "AVX2", "AVX512-VNNI", "AMX-INT8" };

/* The block types the int8 kernels take: w = q - off, where the values
 * are (qs at byte qs, fifth bits at qh or none, min at byte 2 or none),
 * in `groups` groups of 32 a block: Q4_K and Q5_K hold 8, each with its
 * own 6-bit scale and min (sdx__i8w_group). */
typedef struct { sdx_dtype type; int off, qs, qh, has_min, groups; } sdx__i8_type;
static const sdx__i8_type sdx__i8_types[] = {
    { SDX_Q8_0, 0, 2, -1, 0, 1 }, { SDX_Q4_0, 8, 2, -1, 0, 1 }, { SDX_Q5_0, 16, 6, 2, 0, 1 }, { SDX_Q4_1, 0, 4, -1, 1, 1 },
    { SDX_Q5_1, 0, 8, 4, 1, 1 },  { SDX_Q4_K, 0, 16, -1, 1, 8 }, { SDX_Q5_K, 0, 48, 16, 1, 8 },
};

static const sdx__i8_type *sdx__i8_type_of(sdx_dtype t) {
    for (size_t i = 0; i < sizeof sdx__i8_types / sizeof sdx__i8_types[0]; i++)
        if (sdx__i8_types[i].type == t) return &sdx__i8_types[i];
    return NULL;
}

/* ---- activations ----------------------------------------------------- */

/* A block's d and multiplier from its largest |x| as bits (see above);
 * 0 when its Q are all zero (d then NaN or 0). */
static int sdx__q8a_scale(uint32_t top, float *d, float *mul) {
    float amax;
    if (top >= 0x7f800000u) { *d = sdx__bits_f32(0x7fc00000u); return 0; }
    if (top < SDX__Q8A_TINY) { *d = 0.0f; return 0; }
    amax = sdx__bits_f32(top > SDX__Q8A_HUGE ? SDX__Q8A_HUGE : top);
    *d = amax / SDX__Q8A_RANGE;
    *mul = SDX__Q8A_RANGE / amax;
    return 1;
}

/* A step's quantized rows: Q's digits in two planes of lda bytes a row
 * (hi stored xor hx, lo xor lx: each kernel's own form of them), per row
 * and block the scale d and the sum s of Q. */
typedef struct {
    unsigned char *hi, *lo; float *d; int32_t *s;
    int64_t lda, lds;
} sdx__q8a;

typedef void (*sdx__q8a_fn)(const float *x, int blocks, unsigned char *hi, unsigned char *lo, float *d, int32_t *s, int hx, int lx,
                            int sums);

/* A block with Q all zero. */
static void sdx__q8a_zero(unsigned char *hi, unsigned char *lo, int32_t *s, int hx, int lx) {
    memset(hi, hx, 32);
    memset(lo, lx, 32);
    *s = 0;
}

/* The specification: `blocks` blocks of x (the sums s where `sums`: the
 * kernels read them for the types with a min). */
static void sdx__q8a_row_c(const float *x, int blocks, unsigned char *hi, unsigned char *lo, float *d, int32_t *s, int hx, int lx,
                           int sums) {
    for (int b = 0; b < blocks; b++, x += 32, hi += 32, lo += 32) {
        uint32_t top = 0;
        float mul = 0;
        int32_t sum = 0;
        for (int j = 0; j < 32; j++) top = SDX__MAX(top, sdx__f32_bits(x[j]) & 0x7fffffffu);
        if (!sdx__q8a_scale(top, &d[b], &mul)) { sdx__q8a_zero(hi, lo, &s[b], hx, lx); continue; }
        for (int j = 0; j < 32; j++) {
            float v = x[j] * mul;
            int q, low;
            v = v < -SDX__Q8A_RANGE ? -SDX__Q8A_RANGE : v > SDX__Q8A_RANGE ? SDX__Q8A_RANGE : v;
            q = sdx__q_round(v);
            low = (int)((unsigned)q & 255u);
            hi[j] = (unsigned char)(((q - low) / 256) ^ hx);
            lo[j] = (unsigned char)(low ^ lx);
            sum += q;
        }
        if (sums) s[b] = sum;
    }
}

/* ---- weights --------------------------------------------------------- */

/* Group j (values 32j..32j+31) of a Q4_K or Q5_K block in the Q4_1 form
 * w d + m: d = d*sc and m = -(dmin*mn), whose sum is ggml's d*sc*q -
 * dmin*mn to the bit. A pair of groups shares 32 bytes of nibbles (low:
 * group j, high: j + 1); Q5_K's fifth bit of value l is bit j of qh[l]. */
static void sdx__i8w_group(const sdx__i8_type *t, const unsigned char *b, int j, signed char *w, float *d, float *m) {
    const unsigned char *q = b + t->qs + 32 * (j / 2);
    float d1, m1, d2, m2;
    sdx__qk_pair(b, j & ~1, &d1, &m1, &d2, &m2);
    *d = j & 1 ? d2 : d1;
    *m = -(j & 1 ? m2 : m1);
    for (int l = 0; l < 32; l++) {
        int v = j & 1 ? q[l] >> 4 : q[l] & 15;
        if (t->qh >= 0 && (b[t->qh + l] >> j) & 1) v += 16;
        w[l] = (signed char)v;
    }
}

/* Block kb of 32 values of a weight row (`row`: its first byte; blocks of
 * bb bytes): its integers w, scale d and min m (0 for the _0 types). */
static void sdx__i8w_block(const sdx__i8_type *t, const unsigned char *row, size_t bb, int64_t kb, signed char *w, float *d, float *m) {
    const unsigned char *b = row + (size_t)(kb / t->groups) * bb;
    if (t->groups > 1) { sdx__i8w_group(t, b, (int)(kb % t->groups), w, d, m); return; }
    *d = sdx__q_half(b);
    *m = t->has_min ? sdx__q_half(b + 2) : 0.0f;
    if (t->type == SDX_Q8_0) { memcpy(w, b + 2, 32); return; }
    for (int j = 0; j < 16; j++) {
        uint32_t qh = t->qh >= 0 ? sdx__q_u32(b + t->qh) : 0;
        w[j] = (signed char)(((b[t->qs + j] & 15) | sdx__q5_hi(qh, j)) - t->off);
        w[j + 16] = (signed char)(((b[t->qs + j] >> 4) | sdx__q5_hi(qh, j + 16)) - t->off);
    }
}

/* Unpacks columns [n0, n0 + nvalid) of the weight (rows of K values;
 * zero columns up to `strips` x 16) over blocks [kb0, kb0 + kbn) into
 * strips (layout above), strip after strip, SB bytes a block. */
static void sdx__i8_pack_c(unsigned char *dst, const void *src, const sdx__i8_type *t, int64_t K, int64_t n0, int nvalid,
                           int strips, int64_t kb0, int kbn) {
    size_t bb;
    signed char w[32];
    sdx_dtype_block(t->type, &bb);
    for (int s = 0; s < strips; s++)
        for (int b = 0; b < kbn; b++) {
            unsigned char *out = dst + ((size_t)s * (size_t)kbn + (size_t)b) * SDX__I8_SB;
            float *ds = (float *)(out + 512), *ms = ds + 16;
            int32_t *ws = (int32_t *)(ms + 16);
            for (int c = 0; c < 16; c++) {
                int64_t n = 16 * s + c;
                memset(w, 0, sizeof w);
                ds[c] = ms[c] = 0.0f;
                ws[c] = 0;
                if (n < nvalid)
                    sdx__i8w_block(t, (const unsigned char *)src + (size_t)((n0 + n) * (K / 32 / t->groups)) * bb, bb, kb0 + b, w, &ds[c],
                                   &ms[c]);
                for (int k = 0; k < 32; k++) {
                    out[(k / 4) * 64 + c * 4 + k % 4] = (unsigned char)w[k];
                    ws[c] += w[k];
                }
            }
        }
}

/* ---- kernels ----------------------------------------------------------- */

/* What a kernel multiplies: `rows` quantized rows (a multiple of 48) by
 * `strips` packed strips (even), over `blocks` blocks, into the f32 tile
 * c (ldc), adding to it when `accumulate`. */
typedef struct {
    sdx__q8a a;
    const unsigned char *b; int64_t bstride;     /* strip s at b + s * bstride */
    float *c; int64_t ldc;
    int rows, strips, blocks, accumulate, has_min;
    int32_t *cbuf;                               /* AMX: 4 KiB of i32 tiles */
} sdx__i8_args;

typedef void (*sdx__i8_fn)(const sdx__i8_args *g);

/* What a kernel reads and writes from row r and strip s on. */
typedef struct {
    const unsigned char *hi, *lo, *b;
    const float *da;
    const int32_t *sa;
    float *c;
} sdx__i8_at;

static sdx__i8_at sdx__i8_view(const sdx__i8_args *g, int r, int s) {
    sdx__i8_at v;
    v.hi = g->a.hi + (int64_t)r * g->a.lda;
    v.lo = g->a.lo + (int64_t)r * g->a.lda;
    v.b = g->b + (int64_t)s * g->bstride;
    v.da = g->a.d + (int64_t)r * g->a.lds;
    v.sa = g->a.s + (int64_t)r * g->a.lds;
    v.c = g->c + (int64_t)r * g->ldc + 16 * s;
    return v;
}

/* The specification (plain digit planes): each output's chain of fmas
 * over the blocks in order. */
static void sdx__i8_kernel_c(const sdx__i8_args *g) {
    for (int s = 0; s < g->strips; s++)
        for (int r = 0; r < g->rows; r++)
            for (int col = 0; col < 16; col++) {
                float *out = g->c + (int64_t)r * g->ldc + 16 * s + col;
                float acc = g->accumulate ? *out : 0.0f;
                for (int b = 0; b < g->blocks; b++) {
                    const unsigned char *w = g->b + s * g->bstride + (int64_t)b * SDX__I8_SB;
                    const float *ws = (const float *)(w + 512);
                    const unsigned char *hi = g->a.hi + r * g->a.lda + 32 * b, *lo = g->a.lo + r * g->a.lda + 32 * b;
                    float da = g->a.d[r * g->a.lds + b];
                    int32_t isum = 0;
                    for (int k = 0; k < 32; k++)
                        isum += ((signed char)hi[k] * 256 + lo[k]) * (signed char)w[(k / 4) * 64 + col * 4 + k % 4];
                    acc = sdx__fmaf((float)isum, da * ws[col], acc);
                    if (g->has_min) acc = sdx__fmaf((float)g->a.s[r * g->a.lds + b], da * ws[16 + col], acc);
                }
                *out = acc;
            }
}

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF

static inline int32_t sdx__i8_dword(const unsigned char *p) { int32_t v; memcpy(&v, p, 4); return v; }

/* The specification's quantizer, 32 values as two vectors; the scales
 * of 16 blocks at a time as one vector (the same correctly rounded
 * divisions as sdx__q8a_scale). */
__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sdx__q8a_row_avx512(const float *x, int blocks, unsigned char *hi, unsigned char *lo, float *d, int32_t *s, int hx, int lx,
                                int sums) {
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
    const __m512 bound = _mm512_set1_ps(SDX__Q8A_RANGE), nbound = _mm512_set1_ps(-SDX__Q8A_RANGE);
    const __m128i xh = _mm_set1_epi8((char)hx), xl = _mm_set1_epi8((char)lx);
    for (int b0 = 0; b0 < blocks; b0 += 16) {
        const int n = SDX__MIN(16, blocks - b0);
        const __mmask16 lanes = sdx__lanes16(n);
        uint32_t tops[16];
        float muls[16];
        __mmask16 live;
        __m512i top;
        __m512 amax;
        for (int i = 0; i < n; i++) {
            const float *xb = x + 32 * (b0 + i);
            tops[i] = _mm512_reduce_max_epu32(_mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512((const void *)xb), magnitude),
                                                               _mm512_and_si512(_mm512_loadu_si512((const void *)(xb + 16)), magnitude)));
        }
        top = _mm512_maskz_loadu_epi32(lanes, tops);
        live = lanes & _mm512_cmplt_epu32_mask(top, _mm512_set1_epi32(0x7f800000)) &
               _mm512_cmpge_epu32_mask(top, _mm512_set1_epi32((int)SDX__Q8A_TINY));
        amax = _mm512_castsi512_ps(_mm512_min_epu32(top, _mm512_set1_epi32((int)SDX__Q8A_HUGE)));
        amax = _mm512_mask_blend_ps(live, _mm512_set1_ps(1.0f), amax);
        _mm512_mask_storeu_ps(d + b0, lanes,
                              _mm512_mask_blend_ps(live, _mm512_maskz_mov_ps(_mm512_cmpge_epu32_mask(top, _mm512_set1_epi32(0x7f800000)),
                                                                              _mm512_set1_ps(sdx__bits_f32(0x7fc00000u))),
                                                   _mm512_div_ps(amax, bound)));
        _mm512_storeu_ps(muls, _mm512_div_ps(bound, amax));
        for (int i = 0; i < n; i++) {
            const int b = b0 + i;
            const float *xb = x + 32 * b;
            unsigned char *hb = hi + 32 * b, *lb = lo + 32 * b;
            __m512 m;
            __m512i q0, q1;
            if (!(live >> i & 1)) { sdx__q8a_zero(hb, lb, &s[b], hx, lx); continue; }
            m = _mm512_set1_ps(muls[i]);
            q0 = _mm512_cvt_roundps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(xb), m), nbound), bound),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            q1 = _mm512_cvt_roundps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(xb + 16), m), nbound), bound),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            _mm_storeu_si128((__m128i *)hb, _mm_xor_si128(_mm512_cvtepi32_epi8(_mm512_srai_epi32(q0, 8)), xh));
            _mm_storeu_si128((__m128i *)(hb + 16), _mm_xor_si128(_mm512_cvtepi32_epi8(_mm512_srai_epi32(q1, 8)), xh));
            _mm_storeu_si128((__m128i *)lb, _mm_xor_si128(_mm512_cvtepi32_epi8(q0), xl));
            _mm_storeu_si128((__m128i *)(lb + 16), _mm_xor_si128(_mm512_cvtepi32_epi8(q1), xl));
            if (sums) s[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        }
    }
}

/* The same on 8 lanes. */
__attribute__((target("avx2")))
static void sdx__q8a_row_avx2(const float *x, int blocks, unsigned char *hi, unsigned char *lo, float *d, int32_t *s, int hx, int lx,
                              int sums) {
    const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256 bound = _mm256_set1_ps(SDX__Q8A_RANGE), nbound = _mm256_set1_ps(-SDX__Q8A_RANGE);
    for (int b = 0; b < blocks; b++, x += 32, hi += 32, lo += 32) {
        __m256 v[4], m;
        __m256i t = _mm256_setzero_si256(), q[4], h[4], l[4], sum;
        __m128i t4, sum4;
        float mul = 0;
        for (int i = 0; i < 4; i++) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            t = _mm256_max_epu32(t, _mm256_and_si256(_mm256_castps_si256(v[i]), magnitude));
        }
        t4 = _mm_max_epu32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
        t4 = _mm_max_epu32(t4, _mm_shuffle_epi32(t4, 0x4e));
        t4 = _mm_max_epu32(t4, _mm_shuffle_epi32(t4, 0xb1));
        if (!sdx__q8a_scale((uint32_t)_mm_cvtsi128_si32(t4), &d[b], &mul)) { sdx__q8a_zero(hi, lo, &s[b], hx, lx); continue; }
        m = _mm256_set1_ps(mul);
        for (int i = 0; i < 4; i++) {
            q[i] = _mm256_cvttps_epi32(_mm256_round_ps(_mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v[i], m), nbound), bound),
                                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            h[i] = _mm256_srai_epi32(q[i], 8);                              /* -128..127  */
            l[i] = _mm256_and_si256(q[i], _mm256_set1_epi32(255));         /* 0..255     */
        }
        /* 32 i32 -> 32 bytes in order (packs work within 128-bit lanes; lo
         * goes through a signed pack as l - 128, then back) */
        {
            const __m256i bias = _mm256_set1_epi32(128);
            __m256i ph = _mm256_packs_epi16(_mm256_packs_epi32(h[0], h[1]), _mm256_packs_epi32(h[2], h[3]));
            __m256i pl = _mm256_packs_epi16(_mm256_packs_epi32(_mm256_sub_epi32(l[0], bias), _mm256_sub_epi32(l[1], bias)),
                                            _mm256_packs_epi32(_mm256_sub_epi32(l[2], bias), _mm256_sub_epi32(l[3], bias)));
            ph = _mm256_permutevar8x32_epi32(ph, order);
            pl = _mm256_permutevar8x32_epi32(pl, order);
            _mm256_storeu_si256((__m256i *)hi, _mm256_xor_si256(ph, _mm256_set1_epi8((char)hx)));
            _mm256_storeu_si256((__m256i *)lo, _mm256_xor_si256(pl, _mm256_set1_epi8((char)(lx ^ 0x80))));
        }
        sum = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        sum4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, 0x4e));
        sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, 0xb1));
        if (sums) s[b] = _mm_cvtsi128_si32(sum4);
    }
}

/* A K type's group j (sdx__i8w_group) for the 16 columns of a strip:
 * each lane's 6-bit scale and min from the 12 packed bytes (three
 * gathered dwords), times d and dmin as sdx__qk_pair rounds them, then
 * per quad of values the nibbles of a gathered dword (and Q5_K's fifth
 * bits, bit j of each qh byte). */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
static void sdx__i8_pack_group_avx512(const sdx__i8_type *t, __m512i index, __mmask16 live, const unsigned char *p, int j,
                                      unsigned char *out, __m512i w[8]) {
    const __m512i nib = _mm512_set1_epi8(15), bit = _mm512_set1_epi8(1), six = _mm512_set1_epi32(63);
    const __m512i head = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p, 1);     /* d, dmin */
    const __m512i s0 = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + 4, 1);   /* scale bytes 0-3 */
    const __m512i s1 = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + 8, 1);   /* 4-7 */
    const int i = j & 3;
    __m512i sc, mn;
    if (j < 4) {
        sc = _mm512_and_si512(_mm512_srli_epi32(s0, 8 * i), six);
        mn = _mm512_and_si512(_mm512_srli_epi32(s1, 8 * i), six);
    } else {
        const __m512i s2 = _mm512_srli_epi32(_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + 12, 1), 8 * i);
        sc = _mm512_or_si512(_mm512_and_si512(s2, _mm512_set1_epi32(15)),
                             _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(s0, 8 * i + 6), _mm512_set1_epi32(3)), 4));
        mn = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(s2, 4), _mm512_set1_epi32(15)),
                             _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(s1, 8 * i + 6), _mm512_set1_epi32(3)), 4));
    }
    _mm512_storeu_ps(out + 512, _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(head)), _mm512_cvtepi32_ps(sc)));
    _mm512_storeu_si512((void *)(out + 576),      /* -(dmin * mn): the sign flipped, -0 included */
                        _mm512_xor_si512(_mm512_castps_si512(_mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16))),
                                                                           _mm512_cvtepi32_ps(mn))),
                                         _mm512_set1_epi32((int)0x80000000u)));
    for (int k = 0; k < 8; k++) {
        __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + t->qs + 32 * (j / 2) + 4 * k, 1);
        v = _mm512_and_si512(j & 1 ? _mm512_srli_epi16(v, 4) : v, nib);
        if (t->qh >= 0) {
            __m512i h = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + t->qh + 4 * k, 1);
            v = _mm512_or_si512(v, _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, j), bit), 4));
        }
        w[k] = _mm512_maskz_mov_epi32(live, v);
    }
}

/* A 32-value block's w for the 16 columns of a strip, and its scales (and
 * mins): Q8_0's bytes as they are; the others' nibbles (and fifth bits,
 * spread from qh by a multiply) minus the offset. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
static void sdx__i8_pack_block_avx512(const sdx__i8_type *t, __m512i index, __mmask16 live, const unsigned char *p,
                                      unsigned char *out, __m512i w[8]) {
    const __m512i nib = _mm512_set1_epi8(15), off = _mm512_set1_epi8((char)t->off);
    const __m512i spread = _mm512_set1_epi32(0x00204081), bit0 = _mm512_set1_epi8(1);
    const __m512i head = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p, 1);     /* d, and m */
    _mm512_storeu_ps(out + 512, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head)));
    _mm512_storeu_ps(out + 576, t->has_min ? _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16)))
                                           : _mm512_setzero_ps());
    if (t->type == SDX_Q8_0) {
        for (int k = 0; k < 8; k++) w[k] = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + 2 + 4 * k, 1);
        return;
    }
    {
        __m512i qh = t->qh >= 0 ? _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + t->qh, 1) : _mm512_setzero_si512();
        for (int k = 0; k < 4; k++) {
            __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, p + t->qs + 4 * k, 1);
            __m512i l = _mm512_and_si512(v, nib), h = _mm512_and_si512(_mm512_srli_epi16(v, 4), nib);
            if (t->qh >= 0) {     /* bits 4k.. of qh to the bytes of quad k, bits 16 + 4k.. to quad k + 4 */
                __m512i bl = _mm512_and_si512(_mm512_srli_epi32(qh, 4 * k), _mm512_set1_epi32(15));
                __m512i bh = _mm512_and_si512(_mm512_srli_epi32(qh, 16 + 4 * k), _mm512_set1_epi32(15));
                l = _mm512_or_si512(l, _mm512_slli_epi32(_mm512_and_si512(_mm512_mullo_epi32(bl, spread), bit0), 4));
                h = _mm512_or_si512(h, _mm512_slli_epi32(_mm512_and_si512(_mm512_mullo_epi32(bh, spread), bit0), 4));
            }
            w[k] = _mm512_maskz_mov_epi32(live, _mm512_sub_epi8(l, off));
            w[k + 4] = _mm512_maskz_mov_epi32(live, _mm512_sub_epi8(h, off));
        }
    }
}

/* The strips' w from the blocks themselves, 16 columns at a time with
 * gathers (a column's dword of a block in each lane), for every type the
 * kernels take, then the sums of w: the same bytes, scales, mins and sums
 * as sdx__i8_pack_c. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
static void sdx__i8_pack_avx512(unsigned char *dst, const void *src, const sdx__i8_type *t, int64_t K, int64_t n0, int nvalid,
                                int strips, int64_t kb0, int kbn) {
    const __m512i ones = _mm512_set1_epi8(1);
    size_t bb;
    int64_t row;
    __m512i index;
    sdx_dtype_block(t->type, &bb);
    row = K / 32 / t->groups * (int64_t)bb;
    index = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32((int)row));
    for (int s = 0; s < strips; s++) {
        const __mmask16 live = sdx__lanes16(nvalid - 16 * s);
        const unsigned char *first = (const unsigned char *)src + (size_t)((n0 + 16 * s) * row);
        for (int b = 0; b < kbn; b++) {
            const int64_t kb = kb0 + b;
            const unsigned char *p = first + (size_t)(kb / t->groups) * bb;
            unsigned char *out = dst + ((size_t)s * (size_t)kbn + (size_t)b) * SDX__I8_SB;
            __m512i sum = _mm512_setzero_si512(), w[8];
            if (!live) { memset(out, 0, SDX__I8_SB); continue; }
            if (t->groups > 1) {
                sdx__i8_pack_group_avx512(t, index, live, p, (int)(kb % t->groups), out, w);
            } else {
                sdx__i8_pack_block_avx512(t, index, live, p, out, w);
            }
            for (int k = 0; k < 8; k++) {
                _mm512_storeu_si512((void *)(out + 64 * k), w[k]);
                sum = _mm512_dpbusd_epi32(sum, ones, w[k]);
            }
            _mm512_storeu_si512((void *)(out + 640), sum);
        }
    }
}

/* 6 rows x 32 columns (two strips) on VPDPBUSD: per block the hi digits
 * (stored + 128) from -128 sum(w), shifted by 8, then the lo digits. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
static void sdx__i8_vnni_6x32(const sdx__i8_args *g, int r0, int s0) {
    const sdx__i8_at v = sdx__i8_view(g, r0, s0);
    const unsigned char *hi = v.hi, *lo = v.lo, *b0 = v.b, *b1 = v.b + g->bstride;
    const float *da = v.da;
    const int32_t *sa = v.sa;
    const int64_t lda = g->a.lda, lds = g->a.lds;
    float *c = v.c;
    __m512 f00, f01, f10, f11, f20, f21, f30, f31, f40, f41, f50, f51;
#define SDX__I8_LOAD(r) \
    f##r##0 = g->accumulate ? _mm512_loadu_ps(c + (r) * g->ldc) : _mm512_setzero_ps(); \
    f##r##1 = g->accumulate ? _mm512_loadu_ps(c + (r) * g->ldc + 16) : _mm512_setzero_ps();
    SDX__I8_LOAD(0) SDX__I8_LOAD(1) SDX__I8_LOAD(2) SDX__I8_LOAD(3) SDX__I8_LOAD(4) SDX__I8_LOAD(5)
#undef SDX__I8_LOAD
    for (int b = 0; b < g->blocks; b++) {
        const unsigned char *w0 = b0 + (int64_t)b * SDX__I8_SB, *w1 = b1 + (int64_t)b * SDX__I8_SB;
        const __m512i z0 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_loadu_si512((const void *)(w0 + 640)), 7));
        const __m512i z1 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_loadu_si512((const void *)(w1 + 640)), 7));
        const __m512 d0 = _mm512_loadu_ps((const float *)(w0 + 512)), d1 = _mm512_loadu_ps((const float *)(w1 + 512));
        __m512i i00 = z0, i01 = z1, i10 = z0, i11 = z1, i20 = z0, i21 = z1, i30 = z0, i31 = z1, i40 = z0, i41 = z1, i50 = z0, i51 = z1;
        for (int digit = 0; digit < 2; digit++) {
            const unsigned char *ab = (digit ? lo : hi) + 32 * b;
            for (int k = 0; k < 8; k++) {
                const __m512i u0 = _mm512_loadu_si512((const void *)(w0 + 64 * k)), u1 = _mm512_loadu_si512((const void *)(w1 + 64 * k));
                __m512i av;
#define SDX__I8_DOT(r) av = _mm512_set1_epi32(sdx__i8_dword(ab + (r) * lda + 4 * k)); \
                i##r##0 = _mm512_dpbusd_epi32(i##r##0, av, u0); i##r##1 = _mm512_dpbusd_epi32(i##r##1, av, u1);
                SDX__I8_DOT(0) SDX__I8_DOT(1) SDX__I8_DOT(2) SDX__I8_DOT(3) SDX__I8_DOT(4) SDX__I8_DOT(5)
#undef SDX__I8_DOT
            }
            if (digit) break;
#define SDX__I8_SHIFT(r) i##r##0 = _mm512_slli_epi32(i##r##0, 8); i##r##1 = _mm512_slli_epi32(i##r##1, 8);
            SDX__I8_SHIFT(0) SDX__I8_SHIFT(1) SDX__I8_SHIFT(2) SDX__I8_SHIFT(3) SDX__I8_SHIFT(4) SDX__I8_SHIFT(5)
#undef SDX__I8_SHIFT
        }
#define SDX__I8_SCALE(r) do { const __m512 dr = _mm512_set1_ps(da[(r) * lds + b]); \
            f##r##0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i##r##0), _mm512_mul_ps(dr, d0), f##r##0); \
            f##r##1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i##r##1), _mm512_mul_ps(dr, d1), f##r##1); } while (0)
        SDX__I8_SCALE(0); SDX__I8_SCALE(1); SDX__I8_SCALE(2); SDX__I8_SCALE(3); SDX__I8_SCALE(4); SDX__I8_SCALE(5);
#undef SDX__I8_SCALE
        if (g->has_min) {
            const __m512 m0 = _mm512_loadu_ps((const float *)(w0 + 576)), m1 = _mm512_loadu_ps((const float *)(w1 + 576));
#define SDX__I8_MIN(r) do { const __m512 dr = _mm512_set1_ps(da[(r) * lds + b]), sr = _mm512_set1_ps((float)sa[(r) * lds + b]); \
            f##r##0 = _mm512_fmadd_ps(sr, _mm512_mul_ps(dr, m0), f##r##0); \
            f##r##1 = _mm512_fmadd_ps(sr, _mm512_mul_ps(dr, m1), f##r##1); } while (0)
            SDX__I8_MIN(0); SDX__I8_MIN(1); SDX__I8_MIN(2); SDX__I8_MIN(3); SDX__I8_MIN(4); SDX__I8_MIN(5);
#undef SDX__I8_MIN
        }
    }
#define SDX__I8_STORE(r) _mm512_storeu_ps(c + (r) * g->ldc, f##r##0); _mm512_storeu_ps(c + (r) * g->ldc + 16, f##r##1);
    SDX__I8_STORE(0) SDX__I8_STORE(1) SDX__I8_STORE(2) SDX__I8_STORE(3) SDX__I8_STORE(4) SDX__I8_STORE(5)
#undef SDX__I8_STORE
}

static void sdx__i8_kernel_vnni(const sdx__i8_args *g) {
    for (int s = 0; s < g->strips; s += 2)
        for (int r = 0; r < g->rows; r += 6) sdx__i8_vnni_6x32(g, r, s);
}

/* 1 row x 16 columns: Q as i16 (the digits interleaved) by w widened to
 * i16, VPMADDWD per 4 columns x 4 k; pairs of k added at the block's end
 * (VPHADDD). */
__attribute__((target("avx2,fma")))
static void sdx__i8_avx2_1x16(const sdx__i8_args *g, int r, int s) {
    const sdx__i8_at v = sdx__i8_view(g, r, s);
    const unsigned char *hi = v.hi, *lo = v.lo, *bs = v.b;
    const float *da = v.da;
    const int32_t *sa = v.sa;
    const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    float *c = v.c;
    __m256 f0 = _mm256_setzero_ps(), f1 = _mm256_setzero_ps();
    if (g->accumulate) { f0 = _mm256_loadu_ps(c); f1 = _mm256_loadu_ps(c + 8); }
    for (int b = 0; b < g->blocks; b++) {
        const unsigned char *w = bs + (int64_t)b * SDX__I8_SB;
        __m256i acc[4] = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256() };
        __m256i i0, i1;
        __m256 dr = _mm256_set1_ps(da[b]);
        for (int k = 0; k < 8; k++) {
            __m128i q4 = _mm_unpacklo_epi8(_mm_cvtsi32_si128(sdx__i8_dword(lo + 32 * b + 4 * k)),
                                           _mm_cvtsi32_si128(sdx__i8_dword(hi + 32 * b + 4 * k)));  /* 4 x i16 */
            __m256i qv = _mm256_broadcastq_epi64(q4);
            for (int j = 0; j < 4; j++) {
                __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 64 * k + 16 * j)));
                acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(wv, qv));
            }
        }
        i0 = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(acc[0], acc[1]), order);
        i1 = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(acc[2], acc[3]), order);
        f0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_mul_ps(dr, _mm256_loadu_ps((const float *)(w + 512))), f0);
        f1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_mul_ps(dr, _mm256_loadu_ps((const float *)(w + 512) + 8)), f1);
        if (g->has_min) {
            const __m256 sr = _mm256_set1_ps((float)sa[b]);
            f0 = _mm256_fmadd_ps(sr, _mm256_mul_ps(dr, _mm256_loadu_ps((const float *)(w + 576))), f0);
            f1 = _mm256_fmadd_ps(sr, _mm256_mul_ps(dr, _mm256_loadu_ps((const float *)(w + 576) + 8)), f1);
        }
    }
    _mm256_storeu_ps(c, f0);
    _mm256_storeu_ps(c + 8, f1);
}

static void sdx__i8_kernel_avx2(const sdx__i8_args *g) {
    for (int s = 0; s < g->strips; s++)
        for (int r = 0; r < g->rows; r++) sdx__i8_avx2_1x16(g, r, s);
}

#ifdef SDX__AMX
/* Palette 1: C tiles 0, 1 (hi, lo) and 5, 6 (the next block's), 16 x 16
 * i32; A tiles 2, 3 (hi, lo: 16 rows x 32 bytes, one block); B tile 4
 * (8 rows x 64 bytes: one block of a strip). */
static const unsigned char sdx__amx_i8_config[64] = {
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    64, 0, 64, 0, 32, 0, 32, 0, 64, 0, 64, 0, 64, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    16, 16, 16, 16, 8, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

#define SDX__TILE_DPBSSD(c, a, b) __asm__ __volatile__("tdpbssd %%tmm" #b ", %%tmm" #a ", %%tmm" #c : : : "memory")
#define SDX__TILE_DPBUSD(c, a, b) __asm__ __volatile__("tdpbusd %%tmm" #b ", %%tmm" #a ", %%tmm" #c : : : "memory")

/* 16 rows x 16 columns (one strip): per block TDPBSSD (hi) and TDPBUSD
 * (lo) into C tiles 0, 1 or 5, 6 in turn, stored, and combined and
 * scaled into 16 f32 accumulators while the next block's products run. */
__attribute__((target("avx512f")))
static void sdx__i8_amx_16x16(const sdx__i8_args *g, int r0, int s0) {
    const sdx__i8_at v = sdx__i8_view(g, r0, s0);
    const unsigned char *hi = v.hi, *lo = v.lo, *bs = v.b;
    const float *da = v.da;
    const int32_t *sa = v.sa;
    const int64_t lda = g->a.lda, lds = g->a.lds;
    float *c = v.c;
    int32_t *buf = g->cbuf;
    __m512 f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15;
#define SDX__I8_LOAD(r) f##r = g->accumulate ? _mm512_loadu_ps(c + (r) * g->ldc) : _mm512_setzero_ps();
    SDX__I8_LOAD(0) SDX__I8_LOAD(1) SDX__I8_LOAD(2) SDX__I8_LOAD(3) SDX__I8_LOAD(4) SDX__I8_LOAD(5) SDX__I8_LOAD(6) SDX__I8_LOAD(7)
    SDX__I8_LOAD(8) SDX__I8_LOAD(9) SDX__I8_LOAD(10) SDX__I8_LOAD(11) SDX__I8_LOAD(12) SDX__I8_LOAD(13) SDX__I8_LOAD(14) SDX__I8_LOAD(15)
#undef SDX__I8_LOAD
    for (int b = 0; b <= g->blocks; b++) {
        if (b < g->blocks) {
            SDX__TILE_LOAD(2, hi + 32 * b, lda);
            SDX__TILE_LOAD(3, lo + 32 * b, lda);
            SDX__TILE_LOAD(4, bs + (int64_t)b * SDX__I8_SB, 64);
            if (b & 1) {
                SDX__TILE_ZERO(5); SDX__TILE_ZERO(6); SDX__TILE_DPBSSD(5, 2, 4); SDX__TILE_DPBUSD(6, 3, 4);
                SDX__TILE_STORE(5, buf + 512, 64); SDX__TILE_STORE(6, buf + 768, 64);
            } else {
                SDX__TILE_ZERO(0); SDX__TILE_ZERO(1); SDX__TILE_DPBSSD(0, 2, 4); SDX__TILE_DPBUSD(1, 3, 4);
                SDX__TILE_STORE(0, buf, 64); SDX__TILE_STORE(1, buf + 256, 64);
            }
        }
        if (b > 0) {
            const int p = b - 1;
            const unsigned char *w = bs + (int64_t)p * SDX__I8_SB;
            const int32_t *t = buf + (p & 1) * 512;
            const __m512 dw = _mm512_loadu_ps((const float *)(w + 512)), mw = _mm512_loadu_ps((const float *)(w + 576));
#define SDX__I8_SCALE(r) do { const __m512 dr = _mm512_set1_ps(da[(r) * lds + p]); \
            const __m512i isum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_loadu_si512((const void *)(t + 16 * (r))), 8), \
                                                  _mm512_loadu_si512((const void *)(t + 256 + 16 * (r)))); \
            f##r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dr, dw), f##r); \
            if (g->has_min) f##r = _mm512_fmadd_ps(_mm512_set1_ps((float)sa[(r) * lds + p]), _mm512_mul_ps(dr, mw), f##r); } while (0)
            SDX__I8_SCALE(0); SDX__I8_SCALE(1); SDX__I8_SCALE(2); SDX__I8_SCALE(3);
            SDX__I8_SCALE(4); SDX__I8_SCALE(5); SDX__I8_SCALE(6); SDX__I8_SCALE(7);
            SDX__I8_SCALE(8); SDX__I8_SCALE(9); SDX__I8_SCALE(10); SDX__I8_SCALE(11);
            SDX__I8_SCALE(12); SDX__I8_SCALE(13); SDX__I8_SCALE(14); SDX__I8_SCALE(15);
#undef SDX__I8_SCALE
        }
    }
#define SDX__I8_STORE(r) _mm512_storeu_ps(c + (r) * g->ldc, f##r);
    SDX__I8_STORE(0) SDX__I8_STORE(1) SDX__I8_STORE(2) SDX__I8_STORE(3) SDX__I8_STORE(4) SDX__I8_STORE(5) SDX__I8_STORE(6) SDX__I8_STORE(7)
    SDX__I8_STORE(8) SDX__I8_STORE(9) SDX__I8_STORE(10) SDX__I8_STORE(11) SDX__I8_STORE(12) SDX__I8_STORE(13) SDX__I8_STORE(14) SDX__I8_STORE(15)
#undef SDX__I8_STORE
}

/* Row groups outside: their A tiles stay in L1 while the strips stream
 * (strips outside: 1.2-1.4x slower, A's strided rows from L2). */
static void sdx__i8_kernel_amx(const sdx__i8_args *g) {
    for (int r = 0; r < g->rows; r += 16)
        for (int s = 0; s < g->strips; s++) sdx__i8_amx_16x16(g, r, s);
}
#endif /* SDX__AMX */

SDX__INTRINSICS_WARNINGS_ON
#endif /* SDX__X86 */

#ifdef SDX__NEON
/* The specification's quantizer on 4 lanes. */
static void sdx__q8a_row_neon(const float *x, int blocks, unsigned char *hi, unsigned char *lo, float *d, int32_t *s, int hx, int lx,
                              int sums) {
    for (int b = 0; b < blocks; b++, x += 32, hi += 32, lo += 32) {
        float32x4_t v[8];
        uint32x4_t t = vdupq_n_u32(0);
        int32x4_t sum = vdupq_n_s32(0);
        float mul = 0;
        for (int i = 0; i < 8; i++) {
            v[i] = vld1q_f32(x + 4 * i);
            t = vmaxq_u32(t, vandq_u32(vreinterpretq_u32_f32(v[i]), vdupq_n_u32(0x7fffffffu)));
        }
        if (!sdx__q8a_scale(vmaxvq_u32(t), &d[b], &mul)) { sdx__q8a_zero(hi, lo, &s[b], hx, lx); continue; }
        for (int i = 0; i < 8; i += 2) {
            const float32x4_t bound = vdupq_n_f32(SDX__Q8A_RANGE), nbound = vdupq_n_f32(-SDX__Q8A_RANGE);
            int32x4_t q0 = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(vmulq_n_f32(v[i], mul), nbound), bound));
            int32x4_t q1 = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(vmulq_n_f32(v[i + 1], mul), nbound), bound));
            int16x8_t h = vcombine_s16(vmovn_s32(vshrq_n_s32(q0, 8)), vmovn_s32(vshrq_n_s32(q1, 8)));
            int16x8_t l = vcombine_s16(vmovn_s32(q0), vmovn_s32(q1));
            vst1_u8(hi + 4 * i, veor_u8(vreinterpret_u8_s8(vmovn_s16(h)), vdup_n_u8((uint8_t)hx)));
            vst1_u8(lo + 4 * i, veor_u8(vreinterpret_u8_s8(vmovn_s16(l)), vdup_n_u8((uint8_t)lx)));
            sum = vaddq_s32(sum, vaddq_s32(q0, q1));
        }
        if (sums) s[b] = vaddvq_s32(sum);
    }
}

/* The 16 columns' sums of one digit plane (signed bytes) times w over a
 * block: SDOT where the build targets the dot-product extension, else
 * VMULL (i8 x i8 -> i16, exact) and VPADAL (pairs into i32), the pairs
 * of the two halves added at the end. */
static void sdx__i8_neon_digit(const unsigned char *a, const unsigned char *w, int32x4_t out[4]) {
#ifdef __ARM_FEATURE_DOTPROD
    for (int j = 0; j < 4; j++) out[j] = vdupq_n_s32(0);
    for (int k = 0; k < 8; k++) {
        int32_t dw;
        int8x16_t av;
        memcpy(&dw, a + 4 * k, 4);
        av = vreinterpretq_s8_s32(vdupq_n_s32(dw));
        for (int j = 0; j < 4; j++) out[j] = vdotq_s32(out[j], vld1q_s8((const int8_t *)w + 64 * k + 16 * j), av);
    }
#else
    int32x4_t lo[4], hi[4];
    for (int j = 0; j < 4; j++) lo[j] = hi[j] = vdupq_n_s32(0);
    for (int k = 0; k < 8; k++) {
        int32_t dw;
        int8x16_t av;
        memcpy(&dw, a + 4 * k, 4);
        av = vreinterpretq_s8_s32(vdupq_n_s32(dw));
        for (int j = 0; j < 4; j++) {
            int8x16_t wv = vld1q_s8((const int8_t *)w + 64 * k + 16 * j);
            lo[j] = vpadalq_s16(lo[j], vmull_s8(vget_low_s8(wv), vget_low_s8(av)));
            hi[j] = vpadalq_s16(hi[j], vmull_high_s8(wv, av));
        }
    }
    for (int j = 0; j < 4; j++) out[j] = vpaddq_s32(lo[j], hi[j]);
#endif
}

/* 1 row x 16 columns: planes hi and lo - 128 (signed), Q w = 256 hi w +
 * (lo - 128) w + 128 w. */
static void sdx__i8_neon_1x16(const sdx__i8_args *g, int r, int s) {
    const sdx__i8_at v = sdx__i8_view(g, r, s);
    const unsigned char *hi = v.hi, *lo = v.lo, *bs = v.b;
    const float *da = v.da;
    const int32_t *sa = v.sa;
    float *c = v.c;
    float32x4_t f[4];
    for (int j = 0; j < 4; j++) f[j] = g->accumulate ? vld1q_f32(c + 4 * j) : vdupq_n_f32(0.0f);
    for (int b = 0; b < g->blocks; b++) {
        const unsigned char *w = bs + (int64_t)b * SDX__I8_SB;
        const float *ws = (const float *)(w + 512);
        const int32_t *wsum = (const int32_t *)(w + 640);
        int32x4_t h[4], l[4];
        sdx__i8_neon_digit(hi + 32 * b, w, h);
        sdx__i8_neon_digit(lo + 32 * b, w, l);
        for (int j = 0; j < 4; j++) {
            int32x4_t isum = vaddq_s32(vaddq_s32(vshlq_n_s32(h[j], 8), l[j]), vshlq_n_s32(vld1q_s32(wsum + 4 * j), 7));
            f[j] = vfmaq_f32(f[j], vcvtq_f32_s32(isum), vmulq_n_f32(vld1q_f32(ws + 4 * j), da[b]));
            if (g->has_min) f[j] = vfmaq_f32(f[j], vdupq_n_f32((float)sa[b]), vmulq_n_f32(vld1q_f32(ws + 16 + 4 * j), da[b]));
        }
    }
    for (int j = 0; j < 4; j++) vst1q_f32(c + 4 * j, f[j]);
}

static void sdx__i8_kernel_neon(const sdx__i8_args *g) {
    for (int s = 0; s < g->strips; s++)
        for (int r = 0; r < g->rows; r++) sdx__i8_neon_1x16(g, r, s);
}
#endif /* SDX__NEON */

/* ---- which kernel runs --------------------------------------------------- */

/* The fastest int8 kernel this CPU has (probed once per context). */
static int sdx__i8_best(sdx_ctx *ctx) {
    sdx__cpu_state *s = sdx__cpu(ctx);
    if (!s->i8_probed) {
        s->i8_best = SDX__I8_SCALAR;
#if defined(SDX__X86)
        if (sdx__have_avx2()) s->i8_best = SDX__I8_AVX2;
        if (sdx__have_avx512f() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
            unsigned eax, ebx, ecx, edx;
            __cpuid_count(7, 0, eax, ebx, ecx, edx);
            if (ecx & (1u << 11)) s->i8_best = SDX__I8_VNNI;            /* AVX512_VNNI */
            if (s->i8_best == SDX__I8_VNNI && sdx__cpu_amx(SDX__CPUID_AMX_INT8)) s->i8_best = SDX__I8_AMX;
        }
#elif defined(SDX__NEON)
        s->i8_best = SDX__I8_NEON;
#endif
        s->i8_probed = 1;
    }
    return s->i8_best;
}

/* Whether a kernel is compiled in and this CPU runs it (tests, bench). */
static int sdx__i8_have(sdx_ctx *ctx, int kernel) {
    int best = sdx__i8_best(ctx);
    if (kernel == SDX__I8_SCALAR) return 1;
    if (kernel == SDX__I8_NEON) return best == SDX__I8_NEON;
    if (kernel == SDX__I8_AVX2) return best >= SDX__I8_AVX2 && best != SDX__I8_NEON;
    return best >= kernel && best != SDX__I8_NEON;
}

/* Where int8 pays, per kernel, type and compute mode: 1 runs the int8
 * kernel, 0 (or no row) the exact path (the blocks dequantized into the
 * f32 or bf16 GEMM's panels). Measured with `bench/bench quant` (SD 1.5's
 * linear shapes, per CPU second, a shared 2-core Xeon with AMX; README,
 * GGUF checkpoints). f32 mode: AMX-INT8 runs the seven types at 1.5-2.1x
 * f16 weights (1.9-2.5x the exact f32 path), AVX512-VNNI (AMX turned off)
 * at 1.1-1.4x; the AVX2 kernel (VPMADDWD: two i16 products an
 * instruction, as many as f32's FMAs, plus the per-block scaling) at
 * 0.2-0.3x: no rows. bf16 mode: the exact path packs a quantized weight's
 * bf16 panel once per call and runs at 0.75-1.05x f16 weights where M is
 * SD's (4096 rows), AMX-INT8 at 0.5-0.85x; at 77 rows int8 is ahead, but
 * a whole UNet call at 512x512 took 6.18 CPU s on the exact path, 6.34 on
 * int8 and 6.16 with f16 weights (two rounds of two calls each): no bf16
 * row. bf16 mode without AMX (AMD's cores) could not be measured here and
 * takes AMX's answer. NEON's kernel was not measured (no Arm machine): no
 * rows, so Arm runs the exact path until someone measures it. */
typedef struct { int kernel; sdx_dtype type; unsigned char f32, bf16; } sdx__i8_choice;
static const sdx__i8_choice sdx__i8_table[] = {
    { SDX__I8_AMX, SDX_Q8_0, 1, 0 },  { SDX__I8_AMX, SDX_Q4_0, 1, 0 },  { SDX__I8_AMX, SDX_Q5_0, 1, 0 },
    { SDX__I8_AMX, SDX_Q4_1, 1, 0 },  { SDX__I8_AMX, SDX_Q5_1, 1, 0 },  { SDX__I8_AMX, SDX_Q4_K, 1, 0 },
    { SDX__I8_AMX, SDX_Q5_K, 1, 0 },
    { SDX__I8_VNNI, SDX_Q8_0, 1, 0 }, { SDX__I8_VNNI, SDX_Q4_0, 1, 0 }, { SDX__I8_VNNI, SDX_Q5_0, 1, 0 },
    { SDX__I8_VNNI, SDX_Q4_1, 1, 0 }, { SDX__I8_VNNI, SDX_Q5_1, 1, 0 }, { SDX__I8_VNNI, SDX_Q4_K, 1, 0 },
    { SDX__I8_VNNI, SDX_Q5_K, 1, 0 },
};

/* The int8 kernel a linear with weight type t runs in `compute`, or -1:
 * the dequantizing path (exact: as if the weight were f32), which also
 * runs when the context asks for it (sdx_desc.quant_exact). */
static int sdx__i8_choose(sdx_ctx *ctx, sdx_dtype t, sdx_dtype compute) {
    const sdx__cpu_state *s = sdx__cpu(ctx);
    int kernel;
    if (ctx->desc.quant_exact || !sdx__i8_type_of(t)) return -1;
    if (s->i8_force) return sdx__i8_have(ctx, s->i8_force - 1) ? s->i8_force - 1 : -1;
    kernel = sdx__i8_best(ctx);
    for (size_t i = 0; i < sizeof sdx__i8_table / sizeof sdx__i8_table[0]; i++)
        if (sdx__i8_table[i].kernel == kernel && sdx__i8_table[i].type == t)
            return (compute == SDX_BF16 ? sdx__i8_table[i].bf16 : sdx__i8_table[i].f32) ? kernel : -1;
    return -1;
}

/* ---- jobs ------------------------------------------------------------ */

typedef struct {
    const sdx__gemm *g;
    const sdx__i8_type *type;
    int kernel;
    sdx__i8_fn run;
    sdx__q8a_fn quantize;
    int hx, lx;       /* the kernel's form of the digit planes */
    int pack16;       /* the AVX-512 unpacker */
    int64_t qk;       /* values a quantized row holds: K (kept for the next job of the rows) or a step */
    uint64_t call;    /* this GEMM's number: a thread's kept rows are this call's */
} sdx__i8_gemm;

/* A job's quantized rows cover all of K where K is at most this (2 x 288
 * x 2560 bytes of digits): the thread's next job, usually the next
 * columns of the same rows, then quantizes nothing (the quantizer was 8-14%
 * of a linear with 3-10 column tiles). Past it, a K step at a time. */
#define SDX__I8_KEEP_K 2560

/* Per-thread scratch of a job, in this order (each a multiple of 64
 * bytes): which rows are kept (64), the digit planes, d and s, strips,
 * the f32 tile, two rows, AMX's i32 tiles. */
#define SDX__I8_PB   ((size_t)SDX__I8_NJ / 16 * SDX__I8_KB * SDX__I8_SB)
#define SDX__I8_TILE ((size_t)SDX__I8_MJ * SDX__I8_LDC * 4)
#define SDX__I8_TMP  ((size_t)(SDX__I8_NJ + 64) * 4)
#define SDX__I8_CBUF ((size_t)4096)

static size_t sdx__i8_plane_bytes(int64_t qk) { return (size_t)SDX__I8_MJ * (size_t)qk; }
static size_t sdx__i8_scale_bytes(int64_t qk) { return ((size_t)SDX__I8_MJ * (size_t)(qk / 32) * 4 + 63) / 64 * 64; }

static size_t sdx__i8_scratch_bytes(int64_t qk) {
    return 64 + 2 * sdx__i8_plane_bytes(qk) + 2 * sdx__i8_scale_bytes(qk) + SDX__I8_PB + SDX__I8_TILE + 2 * SDX__I8_TMP + SDX__I8_CBUF;
}

/* Quantizes rows [m0, m0 + rows) of A (rows past M: zero), blocks [kb0,
 * kb0 + kbn), into a; tmp widens an f16 or bf16 row. */
static void sdx__i8_quantize(const sdx__i8_gemm *p, sdx__q8a *a, int64_t m0, int rows, int64_t kb0, int kbn, float *tmp) {
    const sdx__gemm *g = p->g;
    for (int r = 0; r < rows; r++) {
        unsigned char *hi = a->hi + r * a->lda, *lo = a->lo + r * a->lda;
        float *d = a->d + r * a->lds;
        int32_t *s = a->s + r * a->lds;
        int64_t at = (m0 + r) * g->K + kb0 * 32;
        const float *x = tmp;
        if (m0 + r >= g->M) {
            for (int b = 0; b < kbn; b++) { sdx__q8a_zero(hi + 32 * b, lo + 32 * b, &s[b], p->hx, p->lx); d[b] = 0.0f; }
            continue;
        }
        for (int64_t b = 0; b < kbn; b += SDX__I8_KB) {    /* tmp holds a step */
            int n = (int)SDX__MIN((int64_t)SDX__I8_KB, kbn - b);
            if (g->a_dtype == SDX_F32) x = (const float *)g->a + at + 32 * b;
            else sdx__load_f32(g->a, g->a_dtype, at + 32 * b, (int64_t)n * 32, tmp);
            p->quantize(x, n, hi + 32 * b, lo + 32 * b, d + b, s + b, p->hx, p->lx, p->type->has_min);
        }
    }
}

static void sdx__i8_job(const sdx__i8_gemm *p, int64_t job, int thread) {
    const sdx__gemm *g = p->g;
    unsigned char *base = (unsigned char *)sdx__scratch_f32(g->ctx, thread);
    uint64_t *kept = (uint64_t *)base;          /* call, m0 + 1 of the rows the planes hold */
    sdx__i8_args k;
    sdx__q8a rows;
    const size_t plane = sdx__i8_plane_bytes(p->qk), scales = sdx__i8_scale_bytes(p->qk);
    unsigned char *pb = base + 64 + 2 * plane + 2 * scales;
    float *tile = (float *)(pb + SDX__I8_PB), *tmp = (float *)((unsigned char *)tile + SDX__I8_TILE);
    float *bias_buf = (float *)((unsigned char *)tmp + SDX__I8_TMP);
    int64_t m0 = (job / g->n_tiles) * g->mb, n0 = (job % g->n_tiles) * g->nb, KB = g->K / 32;
    int mv = (int)SDX__MIN(g->mb, g->M - m0), nv = (int)SDX__MIN(g->nb, g->N - n0);
    const int whole = p->qk == g->K;
    memset(&k, 0, sizeof k);
    rows.hi = base + 64;
    rows.lo = rows.hi + plane;
    rows.d = (float *)(rows.lo + plane);
    rows.s = (int32_t *)((unsigned char *)rows.d + scales);
    rows.lda = p->qk;
    rows.lds = p->qk / 32;
    k.b = pb;
    k.c = tile;
    k.ldc = SDX__I8_LDC;
    k.rows = (mv + SDX__I8_ROWS - 1) / SDX__I8_ROWS * SDX__I8_ROWS;
    k.strips = (nv + 31) / 32 * 2;
    k.has_min = p->type->has_min;
    k.cbuf = (int32_t *)((unsigned char *)bias_buf + SDX__I8_TMP);
    if (whole && !(kept[0] == p->call && kept[1] == (uint64_t)m0 + 1)) {
        sdx__i8_quantize(p, &rows, m0, k.rows, 0, (int)KB, tmp);
        kept[0] = p->call;
        kept[1] = (uint64_t)m0 + 1;
    }
    for (int64_t kb0 = 0; kb0 < KB; kb0 += SDX__I8_KB) {
        int kbn = (int)SDX__MIN((int64_t)SDX__I8_KB, KB - kb0);
        k.a = rows;
        if (whole) {
            k.a.hi += kb0 * 32;
            k.a.lo += kb0 * 32;
            k.a.d += kb0;
            k.a.s += kb0;
        } else {
            sdx__i8_quantize(p, &k.a, m0, k.rows, kb0, kbn, tmp);
        }
#ifdef SDX__X86
        if (p->pack16) sdx__i8_pack_avx512(pb, g->b, p->type, g->K, n0, nv, k.strips, kb0, kbn);
        else
#endif
        sdx__i8_pack_c(pb, g->b, p->type, g->K, n0, nv, k.strips, kb0, kbn);
        k.bstride = (int64_t)kbn * SDX__I8_SB;
        k.blocks = kbn;
        k.accumulate = kb0 > 0;
        p->run(&k);
    }
    sdx__gemm_store(g, tile, SDX__I8_LDC, 0, m0, mv, n0, nv, bias_buf, tmp);
}

static void sdx__i8_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__i8_gemm *p = (const sdx__i8_gemm *)arg;
#ifdef SDX__AMX
    if (p->kernel == SDX__I8_AMX) __asm__ __volatile__("ldtilecfg %0" : : "m"(sdx__amx_i8_config) : "memory");
#endif
    for (int64_t j = begin; j < end; j++) sdx__i8_job(p, j, thread);
#ifdef SDX__AMX
    if (p->kernel == SDX__I8_AMX) __asm__ __volatile__("tilerelease" : : : "memory");
#endif
}

/* A linear layer (B: the block-quantized weight's rows) on int8 kernel
 * `kernel`. */
static int sdx__gemm_run_i8(sdx_ctx *ctx, sdx__gemm *g, int kernel) {
    sdx__cpu_state *s = sdx__cpu(ctx);
    sdx__i8_gemm p;
    int rc;
    SDX_ASSERT(g->b_kind == SDX__B_ROWS_T && g->batch == 1 && g->K % 32 == 0);
    memset(&p, 0, sizeof p);
    p.qk = g->K <= SDX__I8_KEEP_K ? g->K : SDX__I8_KB * 32;
    p.call = ++s->i8_calls;
    if ((rc = sdx__scratch_reserve(ctx, sdx__i8_scratch_bytes(p.qk))) != SDX_OK) return rc;
    for (int t = 0; t < SDX__MAX(1, ctx->n_threads); t++) ((uint64_t *)sdx__scratch_f32(ctx, t))[0] = 0;   /* nothing kept */
    g->ctx = ctx;
    g->cols = g->N;
    p.g = g;
    p.type = sdx__i8_type_of(g->b_dtype);
    p.kernel = kernel;
    p.run = sdx__i8_kernel_c;
    p.quantize = sdx__q8a_row_c;
#ifdef SDX__X86
    if (kernel == SDX__I8_AVX2) { p.run = sdx__i8_kernel_avx2; p.quantize = sdx__q8a_row_avx2; }
    if (kernel == SDX__I8_VNNI) { p.run = sdx__i8_kernel_vnni; p.quantize = sdx__q8a_row_avx512; p.hx = 0x80; }
#ifdef SDX__AMX
    if (kernel == SDX__I8_AMX) { p.run = sdx__i8_kernel_amx; p.quantize = sdx__q8a_row_avx512; }
#endif
    p.pack16 = kernel >= SDX__I8_VNNI && !s->pack_scalar;
#endif
#ifdef SDX__NEON
    if (kernel == SDX__I8_NEON) { p.run = sdx__i8_kernel_neon; p.quantize = sdx__q8a_row_neon; p.lx = 0x80; }
#endif
    if (!s->i8_told) {
        s->i8_told = 1;
        sdx__log(ctx, SDX_LOG_INFO, "linear with %s weights: int8 dot products (%s); sdx_desc.quant_exact multiplies the "
                 "dequantized weights instead", sdx_dtype_name(g->b_dtype), sdx__i8_kernel_names[kernel]);
    }
    sdx__gemm_split(g, SDX__MAX(1, ctx->n_threads), SDX__I8_MJ, SDX__I8_NJ, SDX__I8_ROWS, 32);
    sdx__parallel_for(ctx, g->m_tiles * g->n_tiles, sdx__i8_range, &p);
    return SDX_OK;
}

/* ---- the arithmetic of a GEMM ----------------------------------------- */

/* Runs a GEMM: a linear layer with a block-quantized weight on an int8
 * kernel where the table says it pays; otherwise in the arithmetic bf16
 * mode asks for where this CPU has a bf16 kernel that pays, in f32
 * otherwise. */
static int sdx__gemm_run(sdx_ctx *ctx, sdx__gemm *g) {
    int bf16;
    if (g->M == 0 || g->N == 0 || g->batch == 0) return SDX_OK;
    bf16 = g->compute == SDX_BF16 && g->K > 0 && sdx__bf16_usable(ctx);   /* usable() logs a fallback */
    if (g->b_kind == SDX__B_ROWS_T && g->batch == 1 && sdx__dtype_is_block(g->b_dtype)) {
        int kernel = sdx__i8_choose(ctx, g->b_dtype, bf16 ? SDX_BF16 : SDX_F32);
        if (kernel >= 0) return sdx__gemm_run_i8(ctx, g, kernel);
    }
    if (bf16) {
#ifdef SDX__X86
        return sdx__gemm_run_bf16(ctx, g);
#endif
    }
    return sdx__gemm_run_f32(ctx, g);
}
