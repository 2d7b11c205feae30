#pragma once
/* A part of core.c, included after the helpers it uses (SDX__MIN, the
 * half conversions); the include below is for editors. */
#include "core.c"
/* ===================================================================== */
/*  Block-quantized weights: ggml's layouts, dequantized to f32           */
/* ===================================================================== */
/* One function per type turns one block into its 32 or 256 f32 values
 * with ggml's own arithmetic: the same integer unpacking, the scales
 * widened from f16 exactly, and the same f32 products and differences in
 * the same order, so the values are ggml's bit for bit (a compiler that
 * contracts `d*q - m` into an FMA may move the last bit, as it may in
 * ggml). Fields are read byte by byte: blocks are 2-byte aligned at best
 * (34 bytes for Q8_0) and files are little-endian on every host.
 *
 * Linear layers on the CPU keep their weights in these blocks and call
 * these (sdx__dequant) a strip of rows at a time while packing GEMM
 * panels (src/cpu/gemm.c); the loader calls them at load for every other
 * quantized weight, and on a backend whose linear takes no blocks, and
 * stores f16 (sdx__wslot_write). */

static float sdx__q_half(const unsigned char *p) { return sdx_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

static uint32_t sdx__q_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Q4_0, 18 bytes: f16 d, 16 bytes of 4-bit q (low nibbles are values
 * 0..15, high nibbles 16..31); x = (q - 8) * d. */
static void sdx__deq_q4_0(const unsigned char *b, float *y) {
    float d = sdx__q_half(b);
    const unsigned char *qs = b + 2;
    for (int j = 0; j < 16; j++) {
        y[j] = (float)((qs[j] & 15) - 8) * d;
        y[j + 16] = (float)((qs[j] >> 4) - 8) * d;
    }
}

/* Q4_1, 20 bytes: f16 d, f16 m, 16 bytes of nibbles; x = q * d + m. */
static void sdx__deq_q4_1(const unsigned char *b, float *y) {
    float d = sdx__q_half(b), m = sdx__q_half(b + 2);
    const unsigned char *qs = b + 4;
    for (int j = 0; j < 16; j++) {
        y[j] = (float)(qs[j] & 15) * d + m;
        y[j + 16] = (float)(qs[j] >> 4) * d + m;
    }
}

/* The fifth bits of Q5_0/Q5_1: bit j of the 32-bit qh belongs to value j. */
static int sdx__q5_hi(uint32_t qh, int j) { return (int)((qh >> j) & 1u) << 4; }

/* Q5_0, 22 bytes: f16 d, u32 qh (fifth bits), 16 bytes of nibbles;
 * x = (q - 16) * d. */
static void sdx__deq_q5_0(const unsigned char *b, float *y) {
    float d = sdx__q_half(b);
    uint32_t qh = sdx__q_u32(b + 2);
    const unsigned char *qs = b + 6;
    for (int j = 0; j < 16; j++) {
        y[j] = (float)(((qs[j] & 15) | sdx__q5_hi(qh, j)) - 16) * d;
        y[j + 16] = (float)(((qs[j] >> 4) | sdx__q5_hi(qh, j + 16)) - 16) * d;
    }
}

/* Q5_1, 24 bytes: f16 d, f16 m, u32 qh, 16 bytes of nibbles; x = q * d + m. */
static void sdx__deq_q5_1(const unsigned char *b, float *y) {
    float d = sdx__q_half(b), m = sdx__q_half(b + 2);
    uint32_t qh = sdx__q_u32(b + 4);
    const unsigned char *qs = b + 8;
    for (int j = 0; j < 16; j++) {
        y[j] = (float)((qs[j] & 15) | sdx__q5_hi(qh, j)) * d + m;
        y[j + 16] = (float)((qs[j] >> 4) | sdx__q5_hi(qh, j + 16)) * d + m;
    }
}

/* Q8_0, 34 bytes: f16 d, 32 signed bytes; x = q * d. */
static void sdx__deq_q8_0(const unsigned char *b, float *y) {
    float d = sdx__q_half(b);
    for (int j = 0; j < 32; j++) y[j] = (float)(signed char)b[2 + j] * d;
}

/* Q2_K, 84 bytes: 16 bytes of (4-bit scale | 4-bit min) for the 16
 * groups of 16 values, 64 bytes of 2-bit q, f16 d, f16 dmin. Each half
 * of 128 values takes 32 q bytes, four 2-bit planes of them; a plane's
 * first 16 bytes are one group, the next 16 the next. x = d*sc * q -
 * dmin*mn. */
static void sdx__deq_q2_k(const unsigned char *b, float *y) {
    const unsigned char *sc = b, *q = b + 16;
    float d = sdx__q_half(b + 80), dmin = sdx__q_half(b + 82);
    for (int half = 0; half < 2; half++, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
            for (int g = 0; g < 2; g++) {
                float dl = d * (float)(*sc & 15), ml = dmin * (float)(*sc >> 4);
                sc++;
                for (int l = 0; l < 16; l++) *y++ = dl * (float)((q[16 * g + l] >> shift) & 3) - ml;
            }
}

/* The 6-bit scale of group k (0..15) of a Q3_K block: the low 4 bits
 * are nibbles of bytes 0..7 (low nibbles for groups 0..7, high for
 * 8..15), the high 2 bits are 2-bit fields of bytes 8..11. Stored with
 * an offset of 32. */
static int sdx__q3k_scale(const unsigned char *s, int k) {
    int lo = k < 8 ? s[k] & 15 : s[k - 8] >> 4;
    int hi = (s[8 + (k & 3)] >> (2 * (k >> 2))) & 3;
    return (lo | hi << 4) - 32;
}

/* Q3_K, 110 bytes: 32 bytes hmask (third bits), 64 bytes of 2-bit q,
 * 12 bytes of 6-bit scales, f16 d. Laid out like Q2_K's q; the third
 * bit of value l of plane p (counting planes over both halves) is bit p
 * of hmask[l], and a clear bit subtracts 4. x = d*(sc - 32) * q. */
static void sdx__deq_q3_k(const unsigned char *b, float *y) {
    const unsigned char *hm = b, *q = b + 32, *s = b + 96;
    float d = sdx__q_half(b + 108);
    int k = 0, plane = 0;
    for (int half = 0; half < 2; half++, q += 32)
        for (int shift = 0; shift < 8; shift += 2, plane++)
            for (int g = 0; g < 2; g++) {
                float dl = d * (float)sdx__q3k_scale(s, k++);
                for (int l = 16 * g; l < 16 * g + 16; l++)
                    *y++ = dl * (float)(((q[l] >> shift) & 3) - ((hm[l] >> plane) & 1 ? 0 : 4));
            }
}

/* The 6-bit scale and min of group j (0..7) of a Q4_K/Q5_K block, packed
 * in 12 bytes: groups 0..3 in the low 6 bits of bytes 0..3 (scales) and
 * 4..7 (mins); groups 4..7 in the nibbles of bytes 8..11 with their top
 * 2 bits in the top 2 bits of bytes 0..7. */
static void sdx__qk_scale_min(const unsigned char *s, int j, int *sc, int *mn) {
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
        *mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

/* The f32 scales and mins of groups j and j+1 of a Q4_K/Q5_K block
 * (f16 d and dmin first, then the 12 packed bytes): d*sc and dmin*mn. */
static void sdx__qk_pair(const unsigned char *b, int j, float *d1, float *m1, float *d2, float *m2) {
    float d = sdx__q_half(b), dmin = sdx__q_half(b + 2);
    int sc, mn;
    sdx__qk_scale_min(b + 4, j, &sc, &mn);
    *d1 = d * (float)sc;
    *m1 = dmin * (float)mn;
    sdx__qk_scale_min(b + 4, j + 1, &sc, &mn);
    *d2 = d * (float)sc;
    *m2 = dmin * (float)mn;
}

/* Q4_K, 144 bytes: f16 d, f16 dmin, 12 bytes of scales/mins, 128 bytes
 * of nibbles. Each 64 values take 32 bytes: low nibbles are group 2i,
 * high nibbles group 2i+1. x = d*sc * q - dmin*mn. */
static void sdx__deq_q4_k(const unsigned char *b, float *y) {
    const unsigned char *q = b + 16;
    for (int j = 0; j < 8; j += 2, q += 32) {
        float d1, m1, d2, m2;
        sdx__qk_pair(b, j, &d1, &m1, &d2, &m2);
        for (int l = 0; l < 32; l++) *y++ = d1 * (float)(q[l] & 15) - m1;
        for (int l = 0; l < 32; l++) *y++ = d2 * (float)(q[l] >> 4) - m2;
    }
}

/* Q5_K, 176 bytes: Q4_K's fields with 32 bytes of fifth bits (qh)
 * before the nibbles; group g's fifth bit of value l is bit g of qh[l]. */
static void sdx__deq_q5_k(const unsigned char *b, float *y) {
    const unsigned char *qh = b + 16, *q = b + 48;
    for (int j = 0; j < 8; j += 2, q += 32) {
        float d1, m1, d2, m2;
        sdx__qk_pair(b, j, &d1, &m1, &d2, &m2);
        for (int l = 0; l < 32; l++) *y++ = d1 * (float)((q[l] & 15) + ((qh[l] >> j) & 1 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; l++) *y++ = d2 * (float)((q[l] >> 4) + ((qh[l] >> (j + 1)) & 1 ? 16 : 0)) - m2;
    }
}

/* Q6_K, 210 bytes: 128 bytes of low nibbles (ql), 64 bytes of 2-bit
 * high parts (qh), 16 signed 8-bit scales (one per 16 values), f16 d.
 * Each half of 128 values takes 64 ql bytes and 32 qh bytes: value l of
 * quarter p has its nibble in ql[l + 32*(p&1)] (low nibble for p < 2)
 * and its high bits at bits 2p of qh[l]. x = d*sc * (q - 32). */
static void sdx__deq_q6_k(const unsigned char *b, float *y) {
    const unsigned char *ql = b, *qh = b + 128;
    const signed char *sc = (const signed char *)(b + 192);
    float d = sdx__q_half(b + 208);
    /* quarter by quarter and 16 values per scale, straight loops a
     * compiler vectorises: the same (d * sc) * q products */
    for (int half = 0; half < 2; half++, ql += 64, qh += 32, sc += 8, y += 128)
        for (int p = 0; p < 4; p++) {
            const unsigned char *nib = ql + 32 * (p & 1);
            const int shift = p < 2 ? 0 : 4;
            for (int g = 0; g < 2; g++) {
                float ds = d * (float)sc[g + 2 * p];
                for (int l = 16 * g; l < 16 * g + 16; l++)
                    y[l + 32 * p] = ds * (float)((((nib[l] >> shift) & 15) | ((qh[l] >> (2 * p)) & 3) << 4) - 32);
            }
        }
}

/* ===================================================================== */
/*  Quantizing: f32 rows into ggml's layouts, as stable-diffusion.cpp does */
/* ===================================================================== */
/* sd-cli's converter (convert_tensor in its model_loader.cpp) calls
 * ggml_quantize_chunk with an importance matrix of all ones, so ggml takes
 * its weighted quantizers (quantize_row_*_impl), not the plain reference
 * ones (quantize_row_*_ref), for every type but Q8_0, which has only the
 * reference one. These functions do what those do with unit importance:
 * the same searches for scales, the same f32 arithmetic in the same
 * order, the same rounding (the magic-number round, or roundf for Q8_0)
 * and f16 scales rounded to nearest even, so the bytes are sd-cli's
 * (tests/t_gguf.c compares them with files it wrote). Q4_0, Q4_1, Q5_0
 * and Q5_1 weigh each value by the mean square of its whole row, so they
 * take a row; the K types and Q8_0 work block by block. As with
 * dequantizing, a build that contracts products and sums into FMAs may
 * flip a rounding tie; ggml's own builds do not. */

static void sdx__q_put_half(unsigned char *p, float v) {
    uint16_t h = sdx_f32_to_f16(v);
    p[0] = (unsigned char)h;
    p[1] = (unsigned char)(h >> 8);
}

/* Round to nearest, ties to even, through the f32 mantissa: adding
 * 1.5 * 2^23 leaves the integer in the low bits (|v| < 2^22). */
static int sdx__q_round(float v) {
    float t = v + 12582912.f;
    uint32_t u;
    memcpy(&u, &t, 4);
    return (int)(u & 0x007fffffu) - 0x00400000;
}

static int sdx__q_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

#define SDX__Q_EPS 1e-15f       /* below this a group counts as all zero */

/* ---- the searches -------------------------------------------------------- */

/* A symmetric scale for n values on levels -nmax..nmax-1 (ggml's
 * make_qx_quants, weighted): start at -nmax/max (max: the value of largest
 * magnitude), try 18 nearby inverse scales, keep the one whose weighted
 * least-squares scale explains most. L gets the levels + nmax. Returns
 * the scale. */
static float sdx__q_search_sym(int n, int nmax, const float *x, const float *w, signed char *L) {
    float amax = 0, max = 0, iscale, sumlx = 0, suml2 = 0, scale, best;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    if (amax < SDX__Q_EPS) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    iscale = (float)-nmax / max;
    for (int i = 0; i < n; i++) {
        int l = sdx__q_clamp(sdx__q_round(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (signed char)(l + nmax);
        sumlx += w[i] * x[i] * (float)l;
        suml2 += w[i] * (float)l * (float)l;
    }
    scale = suml2 ? sumlx / suml2 : 0.0f;
    best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        iscale = -((float)nmax + 0.1f * (float)is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; i++) {
            int l = sdx__q_clamp(sdx__q_round(iscale * x[i]), -nmax, nmax - 1);
            sumlx += w[i] * x[i] * (float)l;
            suml2 += w[i] * (float)l * (float)l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++) L[i] = (signed char)(nmax + sdx__q_clamp(sdx__q_round(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* The weighted squared error of levels L under scale and offset. */
static float sdx__q_affine_error(int n, const float *x, const float *w, const unsigned char *L, float scale, float min) {
    float err = 0;
    for (int i = 0; i < n; i++) {
        float diff = scale * (float)L[i] + min - x[i];
        err += w[i] * (diff * diff);
    }
    return err;
}

/* A scale and an offset (x ~ scale*L + offset, L in 0..nmax, offset <=
 * 0) searched as ggml's make_qkx3_quants does: the levels of nstep+1
 * inverse scales from (rmin + nmax)/(max - min) up in steps of rdelta,
 * each with its weighted least-squares scale and offset, the lowest
 * weighted squared error kept. *the_min gets -offset. */
static float sdx__q_search_affine(int n, int nmax, const float *x, const float *w, unsigned char *L, float *the_min, float rmin,
                                  float rdelta, int nstep) {
    unsigned char Laux[32];
    float min = x[0], max = x[0], sum_w = w[0], sum_x = sum_w * x[0], iscale, scale, best;
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max <= min) {
        memset(L, 0, (size_t)n);
        *the_min = -min;
        return 0.f;
    }
    iscale = (float)nmax / (max - min);
    scale = 1 / iscale;
    for (int i = 0; i < n; i++) L[i] = (unsigned char)sdx__q_clamp(sdx__q_round(iscale * (x[i] - min)), 0, nmax);
    best = sdx__q_affine_error(n, x, w, L, scale, min);
    for (int is = 0; is <= nstep; is++) {
        float sum_l = 0, sum_l2 = 0, sum_xl = 0, D;
        iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
        for (int i = 0; i < n; i++) {
            int l = sdx__q_clamp(sdx__q_round(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (unsigned char)l;
            sum_l += w[i] * (float)l;
            sum_l2 += w[i] * (float)l * (float)l;
            sum_xl += w[i] * (float)l * x[i];
        }
        D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D, this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D, err;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            err = sdx__q_affine_error(n, x, w, Laux, this_scale, this_min);
            if (err < best) {
                memcpy(L, Laux, (size_t)n);
                best = err;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/* A scale for the positive sub-block scales (or mins) of a K block on
 * levels 0..nmax (ggml's make_qp_quants): the best of nine inverse scales
 * around nmax/max by weighted squared error, then up to five passes that
 * move single levels where that raises the weighted fit. L gets the
 * levels, stored as ggml stores them (a negative level wraps). */
static float sdx__q_search_pos(int n, int nmax, const float *x, const float *w, unsigned char *L) {
    float max = 0, iscale, scale, best, sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) max = max > x[i] ? max : x[i];
    if (max < SDX__Q_EPS) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    iscale = (float)nmax / max;
    scale = 1 / iscale;
    best = 0;
    for (int i = 0; i < n; i++) {
        float diff;
        L[i] = (unsigned char)sdx__q_round(iscale * x[i]);
        diff = x[i] - scale * (float)L[i];
        best += w[i] * diff * diff;
    }
    for (int is = -4; is <= 4; is++) {
        float iscale_is = (0.1f * (float)is + (float)nmax) / max, scale_is = 1 / iscale_is, err = 0;
        if (is == 0) continue;
        for (int i = 0; i < n; i++) {
            float diff = x[i] - scale_is * (float)SDX__MIN(nmax, sdx__q_round(iscale_is * x[i]));
            err += w[i] * diff * diff;
        }
        if (err < best) {
            best = err;
            iscale = iscale_is;
        }
    }
    for (int i = 0; i < n; i++) {
        int l = SDX__MIN(nmax, sdx__q_round(iscale * x[i]));
        L[i] = (unsigned char)l;
        sumlx += w[i] * x[i] * (float)l;
        suml2 += w[i] * (float)l * (float)l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float slx = sumlx - w[i] * x[i] * (float)L[i], sl2 = suml2 - w[i] * (float)L[i] * (float)L[i];
            int l;
            if (!(slx > 0 && sl2 > 0)) continue;
            l = SDX__MIN(nmax, sdx__q_round(x[i] * sl2 / slx));
            if (l == L[i]) continue;
            slx += w[i] * x[i] * (float)l;
            sl2 += w[i] * (float)l * (float)l;
            if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (unsigned char)l;
                sumlx = slx;
                suml2 = sl2;
                changed++;
            }
        }
        if (!changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* ---- the 32-value types -------------------------------------------------- */

/* The weights of one block of a row whose mean square is sigma2:
 * sqrt(sigma2 + x^2) (ggml's, times the unit importance). */
static void sdx__q_row_weights(const float *x, float sigma2, float *w) {
    for (int j = 0; j < 32; j++) w[j] = sqrtf(sigma2 + x[j] * x[j]);
}

static float sdx__q_mean_square(const float *x, int64_t n) {
    float sum = 0;
    for (int64_t j = 0; j < n; j++) sum += x[j] * x[j];
    return sum / (float)n;
}

/* The 5-bit levels L[32] as Q5_0/Q5_1 store them: nibbles at qs, the
 * fifth bits gathered into the u32 at qh (bit j for value j). */
static void sdx__q5_pack(const unsigned char *L, unsigned char *qh, unsigned char *qs) {
    uint32_t h = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (unsigned char)((L[j] & 15) | (L[j + 16] & 15) << 4);
        h |= (uint32_t)(L[j] >> 4 & 1) << j | (uint32_t)(L[j + 16] >> 4 & 1) << (j + 16);
    }
    for (int i = 0; i < 4; i++) qh[i] = (unsigned char)(h >> (8 * i));
}

/* Q4_0 and Q5_0: a symmetric fit on levels -8..7 (-16..15) per block,
 * d = its scale. */
static void sdx__quant_sym32(const float *x, int64_t n, unsigned char *b, int nmax, size_t bytes) {
    float sigma2 = sdx__q_mean_square(x, n), w[32];
    for (int64_t i = 0; i < n; i += 32, x += 32, b += bytes) {
        signed char L[32];
        sdx__q_row_weights(x, sigma2, w);
        sdx__q_put_half(b, sdx__q_search_sym(32, nmax, x, w, L));
        if (nmax == 8)
            for (int j = 0; j < 16; j++) b[2 + j] = (unsigned char)(L[j] | L[j + 16] << 4);
        else
            sdx__q5_pack((const unsigned char *)L, b + 2, b + 6);
    }
}

/* Q4_1 and Q5_1: an affine fit on levels 0..15 (0..31) per block, d its
 * scale and m its offset. */
static void sdx__quant_affine32(const float *x, int64_t n, unsigned char *b, int nmax, size_t bytes) {
    float sigma2 = sdx__q_mean_square(x, n), w[32], min;
    for (int64_t i = 0; i < n; i += 32, x += 32, b += bytes) {
        unsigned char L[32];
        sdx__q_row_weights(x, sigma2, w);
        sdx__q_put_half(b, sdx__q_search_affine(32, nmax, x, w, L, &min, -0.9f, 0.05f, 36));
        sdx__q_put_half(b + 2, -min);
        if (nmax == 15)
            for (int j = 0; j < 16; j++) b[4 + j] = (unsigned char)(L[j] | L[j + 16] << 4);
        else
            sdx__q5_pack(L, b + 4, b + 8);
    }
}

static void sdx__quant_q4_0(const float *x, int64_t n, unsigned char *b) { sdx__quant_sym32(x, n, b, 8, 18); }
static void sdx__quant_q5_0(const float *x, int64_t n, unsigned char *b) { sdx__quant_sym32(x, n, b, 16, 22); }
static void sdx__quant_q4_1(const float *x, int64_t n, unsigned char *b) { sdx__quant_affine32(x, n, b, 15, 20); }
static void sdx__quant_q5_1(const float *x, int64_t n, unsigned char *b) { sdx__quant_affine32(x, n, b, 31, 24); }

/* Q8_0 (ggml's reference quantizer, its only one): d = absmax / 127,
 * q = roundf(x / d), ties away from zero. */
static void sdx__quant_q8_0(const float *x, int64_t n, unsigned char *b) {
    for (int64_t i = 0; i < n; i += 32, x += 32, b += 34) {
        float amax = 0, d, id;
        for (int j = 0; j < 32; j++) amax = SDX__MAX(amax, fabsf(x[j]));
        d = amax / 127;
        id = d ? 1.0f / d : 0.0f;
        sdx__q_put_half(b, d);
        for (int j = 0; j < 32; j++) b[2 + j] = (unsigned char)(signed char)roundf(x[j] * id);
    }
}

/* ---- the K types: 256 values a block ------------------------------------- */

/* The weights of the K types: sqrt(sigma2 + x^2), sigma2 being the mean
 * square of the 256 values times `twice` (1 or 2, as ggml has it); sw[j]
 * gets the sum over group j of `group` values. */
static void sdx__qk_weights(const float *x, float twice, int group, float *w, float *sw) {
    float sum = 0, sigma2;
    for (int j = 0; j < 256; j++) sum += x[j] * x[j];
    sigma2 = twice * sum / 256;
    for (int j = 0; j < 256; j++) w[j] = sqrtf(sigma2 + x[j] * x[j]);
    for (int j = 0; j < 256 / group; j++) {
        float s = 0;
        for (int l = 0; l < group; l++) s += w[group * j + l];
        sw[j] = s;
    }
}

/* The 2-bit levels L[256] as Q2_K and Q3_K store them (sdx__deq_q2_k):
 * each half's 32 bytes hold four planes of 32 values. */
static void sdx__qk_pack2(const unsigned char *L, unsigned char *qs) {
    for (int half = 0; half < 256; half += 128, qs += 32)
        for (int l = 0; l < 32; l++)
            qs[l] = (unsigned char)(L[half + l] | L[half + l + 32] << 2 | L[half + l + 64] << 4 | L[half + l + 96] << 6);
}

/* Q2_K: an affine fit on levels 0..3 per group of 16; the group scales
 * and mins on 4-bit levels of d and dmin (sdx__q_search_pos); each value
 * re-levelled against the rounded scale and min. */
static void sdx__quant_q2_k1(const float *x, unsigned char *b) {
    unsigned char L[256], Ls[16], Lm[16];
    float w[256], sw[16], scales[16], mins[16], dm, mm;
    sdx__qk_weights(x, 1, 16, w, sw);
    for (int j = 0; j < 16; j++) scales[j] = sdx__q_search_affine(16, 3, x + 16 * j, w + 16 * j, L + 16 * j, &mins[j], -0.9f, 0.05f, 36);
    dm = sdx__q_search_pos(16, 15, scales, sw, Ls);
    mm = sdx__q_search_pos(16, 15, mins, sw, Lm);
    sdx__q_put_half(b + 80, dm);
    sdx__q_put_half(b + 82, mm);
    dm = sdx__q_half(b + 80);
    mm = sdx__q_half(b + 82);
    for (int j = 0; j < 16; j++) b[j] = (unsigned char)(Ls[j] | Lm[j] << 4);
    for (int j = 0; j < 16; j++) {
        float d = dm * (float)(b[j] & 15), m;
        if (!d) continue;
        m = mm * (float)(b[j] >> 4);
        for (int i = 0; i < 16; i++) L[16 * j + i] = (unsigned char)sdx__q_clamp(sdx__q_round((x[16 * j + i] + m) / d), 0, 3);
    }
    sdx__qk_pack2(L, b + 16);
}

/* Q3_K: a symmetric fit on levels -4..3 per group of 16; the group scales
 * themselves fitted symmetrically on 6-bit levels (stored + 32, packed as
 * sdx__q3k_scale reads them); values re-levelled; the third bit of each
 * level in hmask, the rest as Q2_K's planes. */
static void sdx__quant_q3_k1(const float *x, unsigned char *b) {
    signed char L[256], Ls[16];
    unsigned char *hm = b, *s = b + 96, low[256];
    float w[256], sw[16], scales[16];
    sdx__qk_weights(x, 2, 16, w, sw);
    for (int j = 0; j < 16; j++) scales[j] = sdx__q_search_sym(16, 4, x + 16 * j, w + 16 * j, L + 16 * j);
    memset(s, 0, 12);
    sdx__q_put_half(b + 108, sdx__q_search_sym(16, 32, scales, sw, Ls));
    for (int j = 0; j < 16; j++) {
        int l = Ls[j];
        if (j < 8) s[j] = (unsigned char)(l & 15);
        else s[j - 8] = (unsigned char)(s[j - 8] | (l & 15) << 4);
        s[8 + j % 4] = (unsigned char)(s[8 + j % 4] | (l >> 4) << (2 * (j / 4)));
    }
    for (int j = 0; j < 16; j++) {
        float d = sdx__q_half(b + 108) * (float)sdx__q3k_scale(s, j);
        if (!d) continue;
        for (int i = 0; i < 16; i++) L[16 * j + i] = (signed char)(sdx__q_clamp(sdx__q_round(x[16 * j + i] / d), -4, 3) + 4);
    }
    memset(hm, 0, 32);
    for (int j = 0; j < 256; j++) {
        int l = L[j];
        if (l > 3) {
            hm[j % 32] = (unsigned char)(hm[j % 32] | 1 << (j / 32));
            l -= 4;
        }
        low[j] = (unsigned char)l;
    }
    sdx__qk_pack2(low, b + 32);
}

/* Q4_K/Q5_K's common part: an affine fit on levels 0..nmax per group of
 * 32; the group scales and mins on 6-bit levels of d and dmin (capped at
 * 63 where ggml caps them: Q5_K), packed as sdx__qk_scale_min reads them;
 * values re-levelled against them. b is the block (d, dmin, 12 scale
 * bytes); L gets the levels. */
static void sdx__quant_qk_affine(const float *x, unsigned char *b, unsigned char *L, int nmax, int cap) {
    unsigned char *s = b + 4, Ls[8], Lm[8];
    float w[256], sw[8], scales[8], mins[8];
    sdx__qk_weights(x, 2, 32, w, sw);
    for (int j = 0; j < 8; j++) scales[j] = sdx__q_search_affine(32, nmax, x + 32 * j, w + 32 * j, L + 32 * j, &mins[j], -0.9f, 0.05f, 36);
    sdx__q_put_half(b, sdx__q_search_pos(8, 63, scales, sw, Ls));
    sdx__q_put_half(b + 2, sdx__q_search_pos(8, 63, mins, sw, Lm));
    for (int j = 0; j < 8; j++) {
        unsigned char ls = cap ? SDX__MIN(63, Ls[j]) : Ls[j], lm = cap ? SDX__MIN(63, Lm[j]) : Lm[j];
        if (j < 4) {
            s[j] = ls;
            s[j + 4] = lm;
        } else {
            s[j + 4] = (unsigned char)((ls & 15) | (lm & 15) << 4);
            s[j - 4] = (unsigned char)(s[j - 4] | (ls >> 4) << 6);
            s[j] = (unsigned char)(s[j] | (lm >> 4) << 6);
        }
    }
    for (int j = 0; j < 8; j++) {
        int sc, mn;
        float d, dm;
        sdx__qk_scale_min(s, j, &sc, &mn);
        d = sdx__q_half(b) * (float)sc;
        if (!d) continue;
        dm = sdx__q_half(b + 2) * (float)mn;
        for (int i = 0; i < 32; i++) L[32 * j + i] = (unsigned char)sdx__q_clamp(sdx__q_round((x[32 * j + i] + dm) / d), 0, nmax);
    }
}

/* Q4_K: levels 0..15; each 64 values as 32 bytes, low nibbles the first
 * group, high nibbles the second. */
static void sdx__quant_q4_k1(const float *x, unsigned char *b) {
    unsigned char L[256], *q = b + 16;
    sdx__quant_qk_affine(x, b, L, 15, 0);
    for (int j = 0; j < 256; j += 64, q += 32)
        for (int l = 0; l < 32; l++) q[l] = (unsigned char)(L[j + l] | L[j + l + 32] << 4);
}

/* Q5_K: levels 0..31; Q4_K's nibbles, the fifth bit of group g's value l
 * in bit g of qh[l]. */
static void sdx__quant_q5_k1(const float *x, unsigned char *b) {
    unsigned char L[256], *qh = b + 16, *q = b + 48;
    sdx__quant_qk_affine(x, b, L, 31, 1);
    memset(qh, 0, 32);
    for (int j = 0, g = 0; j < 256; j += 64, g += 2, q += 32)
        for (int l = 0; l < 32; l++) {
            int lo = L[j + l], hi = L[j + l + 32];
            if (lo > 15) lo -= 16, qh[l] = (unsigned char)(qh[l] | 1 << g);
            if (hi > 15) hi -= 16, qh[l] = (unsigned char)(qh[l] | 2 << g);
            q[l] = (unsigned char)(lo | hi << 4);
        }
}

/* Q6_K: a symmetric fit on levels -32..31 per group of 16 (unit weights:
 * ggml passes the importance itself here); the scales as signed 8-bit
 * multiples of d, the one of largest magnitude mapped to -128; values
 * re-levelled; nibbles in ql and 2-bit high parts in qh as sdx__deq_q6_k
 * reads them. An all-zero block is all zero bytes. */
static void sdx__quant_q6_k1(const float *x, unsigned char *b) {
    static const float ones[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    signed char L[256], *sc = (signed char *)(b + 192);
    unsigned char *ql = b, *qh = b + 128;
    float scales[16], max_abs = 0, max_scale = 0, iscale;
    for (int j = 0; j < 16; j++) {
        scales[j] = sdx__q_search_sym(16, 32, x + 16 * j, ones, L + 16 * j);
        if (fabsf(scales[j]) > max_abs) {
            max_abs = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    if (max_abs < SDX__Q_EPS) {
        memset(b, 0, 210);
        return;
    }
    iscale = -128.f / max_scale;
    sdx__q_put_half(b + 208, 1 / iscale);
    for (int j = 0; j < 16; j++) sc[j] = (signed char)SDX__MIN(127, sdx__q_round(iscale * scales[j]));
    for (int j = 0; j < 16; j++) {
        float d = sdx__q_half(b + 208) * (float)sc[j];
        if (!d) continue;
        for (int i = 0; i < 16; i++) L[16 * j + i] = (signed char)(sdx__q_clamp(sdx__q_round(x[16 * j + i] / d), -32, 31) + 32);
    }
    for (int half = 0; half < 256; half += 128, ql += 64, qh += 32)
        for (int l = 0; l < 32; l++) {
            const signed char *v = L + half + l;
            ql[l] = (unsigned char)((v[0] & 15) | (v[64] & 15) << 4);
            ql[l + 32] = (unsigned char)((v[32] & 15) | (v[96] & 15) << 4);
            qh[l] = (unsigned char)(v[0] >> 4 | (v[32] >> 4) << 2 | (v[64] >> 4) << 4 | (v[96] >> 4) << 6);
        }
}

/* A row of n values (whole 256-value blocks) of a K type, block by block. */
#define SDX__QK_ROW(name, one, bytes) \
    static void name(const float *x, int64_t n, unsigned char *b) { \
        for (int64_t i = 0; i < n; i += 256) one(x + i, b + (size_t)(i / 256) * (bytes)); \
    }
SDX__QK_ROW(sdx__quant_q2_k, sdx__quant_q2_k1, 84)
SDX__QK_ROW(sdx__quant_q3_k, sdx__quant_q3_k1, 110)
SDX__QK_ROW(sdx__quant_q4_k, sdx__quant_q4_k1, 144)
SDX__QK_ROW(sdx__quant_q5_k, sdx__quant_q5_k1, 176)
SDX__QK_ROW(sdx__quant_q6_k, sdx__quant_q6_k1, 210)
#undef SDX__QK_ROW

/* The quantizer of a block type (NULL for the others): one row of n
 * values, whole blocks, into n / block blocks. */
typedef void (*sdx__quant_fn)(const float *x, int64_t n, unsigned char *blocks);

static sdx__quant_fn sdx__quantizer(sdx_dtype t) {
    switch (t) {
    case SDX_Q4_0: return sdx__quant_q4_0;
    case SDX_Q4_1: return sdx__quant_q4_1;
    case SDX_Q5_0: return sdx__quant_q5_0;
    case SDX_Q5_1: return sdx__quant_q5_1;
    case SDX_Q8_0: return sdx__quant_q8_0;
    case SDX_Q2_K: return sdx__quant_q2_k;
    case SDX_Q3_K: return sdx__quant_q3_k;
    case SDX_Q4_K: return sdx__quant_q4_k;
    case SDX_Q5_K: return sdx__quant_q5_k;
    case SDX_Q6_K: return sdx__quant_q6_k;
    default: return NULL;
    }
}
