#pragma once
#include "api_core.h"
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
