#pragma once
#include "device.cu"
/* ===================================================================== */
/*  Flash attention                                                       */
/* ===================================================================== */
/* y[b, i, h*D + c] = sum_j softmax_j(q_i . k_j / sqrt(D)) v_j[c], never
 * forming the Nq x Nk matrix. A block of 128 threads takes 128/TPQ
 * queries of one (batch, head); each query is held by TPQ threads with DP
 * of its dims each, in registers (q pre-scaled, and the f32 output
 * accumulator). Keys and values pass through shared memory KT at a time,
 * widened to f32; per tile a query computes its KT logits (partial dot
 * products summed across its TPQ lanes), then one online-softmax update
 * in f32: running max m, running sum l, the accumulator rescaled by
 * exp(m_old - m_new) once per tile. The instantiations fit the head
 * dims of SD 1.x/2.x/SDXL exactly (40, 64, 80, 128, 160; the 77-key
 * cross attention is one tile of 32 keys plus a partial ones); other
 * dims up to 512 (the VAE's single head) take a generic variant. Causal
 * (the text encoder): key j is visible to query i when j <= i. */

#define SDX__HIP_ATTN_THREADS 128

template <int DP, int TPQ, int KT>
__global__ void __launch_bounds__(SDX__HIP_ATTN_THREADS)
sdx__hip_k_attention(void *y, int yt, const void *q, int qt, const void *k, int kt, const void *v, int vt,
                     int64_t nq, int64_t nk, int heads, int d, int causal, float scale) {
    sdx__hip_wait_prior();
    enum { QPB = SDX__HIP_ATTN_THREADS / TPQ };
    SDX__HIP_DYNAMIC_SMEM(float, smem);
    float *ks = smem, *vs = smem + KT * d;
    const int t = (int)threadIdx.x, part = t % TPQ, d0 = part * DP;
    const int64_t bh = blockIdx.y, b = bh / heads, h = bh % heads;
    const int64_t qi = (int64_t)blockIdx.x * QPB + t / TPQ, hd = (int64_t)heads * d;
    const int valid = qi < nq;
    /* the block's last query bounds the keys any of its queries sees */
    const int64_t q_last = (int64_t)blockIdx.x * QPB + QPB - 1;
    const int64_t key_end = causal ? (q_last + 1 < nk ? q_last + 1 : nk) : nk;
    float qr[DP], o[DP], m = -INFINITY, l = 0.0f;
#pragma unroll
    for (int i = 0; i < DP; i++) {
        int c = d0 + i;
        qr[i] = (valid && c < d) ? sdx__hip_ld(q, qt, (b * nq + qi) * hd + h * d + c) * scale : 0.0f;
        o[i] = 0.0f;
    }
    for (int64_t j0 = 0; j0 < key_end; j0 += KT) {
        const int nkv = (int)(key_end - j0 < KT ? key_end - j0 : KT);
        float s[KT], tile_max = -INFINITY, shift, corr, m_new;
        __syncthreads();                /* the previous tile is consumed */
        for (int e = t; e < KT * d; e += SDX__HIP_ATTN_THREADS) {
            int j = e / d, c = e - j * d;
            int64_t src = (b * nk + j0 + j) * hd + h * d + c;
            ks[e] = j < nkv ? sdx__hip_ld(k, kt, src) : 0.0f;
            vs[e] = j < nkv ? sdx__hip_ld(v, vt, src) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < KT; j++) {
            float p = 0.0f;
#pragma unroll
            for (int i = 0; i < DP; i++)
                if (d0 + i < d) p = fmaf(qr[i], ks[j * d + d0 + i], p);
            p = sdx__hip_warp_sum(p, TPQ);
            s[j] = (j < nkv && (!causal || j0 + j <= qi)) ? p : -INFINITY;
            tile_max = fmaxf(tile_max, s[j]);
        }
        m_new = fmaxf(m, tile_max);
        shift = m_new == -INFINITY ? 0.0f : m_new;     /* nothing visible yet: every exp is 0 */
        corr = expf(m - shift);                        /* m = -inf (first tile): 0 */
        l *= corr;
#pragma unroll
        for (int i = 0; i < DP; i++) o[i] *= corr;
#pragma unroll
        for (int j = 0; j < KT; j++) {
            float p = expf(s[j] - shift);
            l += p;
#pragma unroll
            for (int i = 0; i < DP; i++)
                if (d0 + i < d) o[i] = fmaf(p, vs[j * d + d0 + i], o[i]);
        }
        m = m_new;
    }
    if (valid) {
        float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
        for (int i = 0; i < DP; i++)
            if (d0 + i < d) sdx__hip_st(y, yt, (b * nq + qi) * hd + h * d + d0 + i, o[i] * inv);
    }
}

/* ---- on the matrix units (NVIDIA mma.sync) ------------------------------- */
/* FlashAttention-2's scheme, q, k and v of one half type HT, head dims
 * zero-padded to DP (a multiple of 16: SD's 40 -> 48, 64, 80, 128, 160;
 * the VAE's 512). A block takes 16 MT ROWS queries of one (batch, head):
 * ROWS groups of SPLIT warps, each group 16 MT queries (MT m16 tiles,
 * which share every K and V fragment a warp loads), each warp of a group
 * DP / SPLIT of the dims. Lane (g, t) = (lane / 4, lane % 4) owns query
 * rows g and g + 8 of each of its group's m16 tiles. Q stays in shared
 * memory; K and V tiles of BK keys stream into two buffers as
 * asynchronous copies (the next during this one). Per tile:
 *   S = Q K^T with mma.sync m16n8k16 (f32 accumulation), in registers:
 *     the lane holds keys 8j + 2t, 8j + 2t + 1 of its two rows. With
 *     SPLIT > 1 each warp has the sum over its dims only; the group's
 *     warps add the partial sums in one order through shared memory, so
 *     all of them hold the same S (the VAE: a warp's O over all 512 dims
 *     would not fit in registers);
 *   the online softmax in f32 on those registers, in base 2: the row's
 *     max combined over the four lanes of the row (shuffles); keys past
 *     nk, and past the query when causal, masked (partial tiles only);
 *     P = 2^(S scale log2(e) - m), one multiply-add and one exponential
 *     an element, rounded to HT. In bf16, P is hi + lo (two bf16 parts,
 *     16 bits: f32 attention loses nothing there) and each tile costs two
 *     P V products;
 *   O += P V: S's accumulator layout is the A operand's (two key tiles of
 *     8 make one k16 step), so P never leaves registers; V's fragments
 *     come from ldmatrix .trans. O (16 x DP / SPLIT a warp, in 16 x 8
 *     tiles) is rescaled per row in registers. The row sum is one more
 *     product, P times a column of ones: it adds exactly the values P V
 *     multiplies, so the output stays a weighted mean of v.
 * No Nq x Nk matrix exists anywhere, nor S or O in memory. */

template <int HT, int DP, int BK, int ROWS, int SPLIT, int MT>
struct sdx__hip_flash_plan {
    enum { WARPS = ROWS * SPLIT, THREADS = 32 * WARPS, BQ = 16 * MT * ROWS, DS = DP / SPLIT,
           LD = DP + 8,                 /* pitch: 16-byte rows, the 8 rows of a ldmatrix on distinct banks */
           KV = BK * LD, Q = 0, K = BQ * LD, V = K + 2 * KV, HALVES = V + 2 * KV,
           XCH = SPLIT > 1 ? WARPS * (BK / 8) * 4 * 32 : 0,    /* floats: partial S, [warp][key tile][element][lane] */
           BYTES = 2 * HALVES + 4 * XCH };
};

/* ROWS rows of one head, from row0 of a [rows, hd] tensor (columns col0
 * on), into dst (pitch LD); rows from `valid` on and dims past d are
 * zeros (0 * garbage could be NaN). vec: as asynchronous 16-byte copies
 * (waited for by the caller), else loads. Q's tile, and K's and V's. */
template <int DP, int ROWS, int THREADS, int LD>
static __device__ __forceinline__ void sdx__hip_attn_stage(uint16_t *dst, const uint16_t *src, int64_t row0, int64_t valid, int64_t hd,
                                                           int64_t col0, int d, int vec, int t) {
    if (vec) {
        for (int e = t; e < ROWS * DP / 8; e += THREADS) {
            int r = e / (DP / 8), c = (e - r * (DP / 8)) * 8, ok = r < valid && c < d;
            sdx__hip_cp_async16(dst + r * LD + c, src + (ok ? (row0 + r) * hd + col0 + c : 0), ok);
        }
    } else {
        for (int e = t; e < ROWS * DP; e += THREADS) {
            int r = e / DP, c = e - r * DP;
            dst[r * LD + c] = (r < valid && c < d) ? src[(row0 + r) * hd + col0 + c] : (uint16_t)0;
        }
    }
}

/* Key tile [j0, j0 + BK) of K and V into kb and vb (keys from key_end on
 * are zeros). */
template <int DP, int BK, int THREADS, int LD>
static __device__ __forceinline__ void sdx__hip_attn_stage_kv(uint16_t *kb, uint16_t *vb, const uint16_t *kg, const uint16_t *vg,
                                                              int64_t row0, int64_t j0, int64_t key_end, int64_t hd, int64_t col0, int d,
                                                              int vec, int t) {
    sdx__hip_attn_stage<DP, BK, THREADS, LD>(kb, kg, row0 + j0, key_end - j0, hd, col0, d, vec, t);
    sdx__hip_attn_stage<DP, BK, THREADS, LD>(vb, vg, row0 + j0, key_end - j0, hd, col0, d, vec, t);
}

/* Two values of a row of P, rounded as the matrix units take them, packed
 * for an A fragment (hi; lo is bf16's remainder, 16 bits in all). f16:
 * one conversion for both. bf16 rounds with integer operations. */
template <int HT>
static __device__ __forceinline__ void sdx__hip_flash_p2(float p0, float p1, uint32_t *hi, uint32_t *lo) {
    if (HT == SDX__HIP_DT_F16) {
        const __half2 h = __floats2half2_rn(p0, p1);
        *hi = (uint32_t)__half_as_ushort(__low2half(h)) | (uint32_t)__half_as_ushort(__high2half(h)) << 16;
        *lo = 0;
    } else {
        const uint32_t b0 = sdx__hip_f2bf(p0), b1 = sdx__hip_f2bf(p1);
        *hi = b0 | b1 << 16;
        *lo = sdx__hip_f2bf(p0 - sdx__hip_bf2f((uint16_t)b0)) | (uint32_t)sdx__hip_f2bf(p1 - sdx__hip_bf2f((uint16_t)b1)) << 16;
    }
}

template <int HT, int DP, int BK, int ROWS, int SPLIT, int MT>
__global__ void __launch_bounds__(32 * ROWS * SPLIT)
sdx__hip_k_flash_mma(void *y, int yt, const void *q, const void *k, const void *v, int64_t nq, int64_t nk, int heads, int d, int causal,
                     float scale, int vec, int pairs) {
    sdx__hip_wait_prior();
#if SDX__HIP_MMA == 1
    typedef sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT> L;
    enum { NS = BK / 8, NO = L::DS / 8 };     /* 16 x 8 tiles of S (keys) and of O (this warp's dims) */
    static_assert(SPLIT == 1 || MT == 1, "a split head's exchange is per m16 tile");
    SDX__HIP_DYNAMIC_SMEM(uint16_t, smem);
    uint16_t *qs = smem + L::Q, *ks = smem + L::K, *vs = smem + L::V;
    float *xch = (float *)(smem + L::HALVES);
    const uint16_t *kg = (const uint16_t *)k, *vg = (const uint16_t *)v;
    const int t = (int)threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, tq = lane % 4;
    const int group = warp / SPLIT, dim0 = warp % SPLIT * L::DS;
    const int64_t bh = blockIdx.y, b = bh / heads, h = bh % heads, hd = (int64_t)heads * d, col0 = h * d;
    /* this lane's rows: row_q + 16 mt and + 8 */
    const int64_t q0 = (int64_t)blockIdx.x * L::BQ, row_q = q0 + group * 16 * MT + g;
    const int64_t key_end = causal ? (q0 + L::BQ < nk ? q0 + L::BQ : nk) : nk;
    /* logits to base 2 (sdx__hip_exp2); m is the row's max so scaled */
    const float scale2 = scale * 1.44269504088896341f;
    /* 1.0 twice in HT: the B fragment of an 8-column matrix of ones */
    const uint32_t one2 = HT == SDX__HIP_DT_F16 ? 0x3c003c00u : 0x3f803f80u, ones[2] = { one2, one2 };
    /* l: the rows' sums P 1 as an accumulator tile (each column the sum) */
    float o[MT][NO][4], l[MT][4], m[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int e = 0; e < 4; e++) l[mt][e] = 0.0f;
#pragma unroll
        for (int r = 0; r < 2; r++) {
            m[mt][r] = -INFINITY;
#pragma unroll
            for (int i = 0; i < NO; i++) o[mt][i][2 * r] = o[mt][i][2 * r + 1] = 0.0f;
        }
    }
    sdx__hip_attn_stage<DP, L::BQ, L::THREADS, L::LD>(qs, (const uint16_t *)q, b * nq + q0, nq - q0, hd, col0, d, vec, t);
    if (key_end > 0) sdx__hip_attn_stage_kv<DP, BK, L::THREADS, L::LD>(ks, vs, kg, vg, b * nk, 0, key_end, hd, col0, d, vec, t);
    sdx__hip_cp_commit();
    for (int64_t j0 = 0, j = 0; j0 < key_end; j0 += BK, j++) {
        const int nkv = (int)(key_end - j0 < BK ? key_end - j0 : BK);
        const uint16_t *kt = ks + (j & 1) * L::KV, *vt = vs + (j & 1) * L::KV;
        float s[MT][NS][4], tile_max[MT][2], shift[MT][2], corr[MT][2];
        uint32_t ph[MT][NS][2], pl[MT][NS][2];
        /* this tile (and Q) landed and is visible; every warp is done with
         * the other buffer (and the exchange), which the next tile fills */
        sdx__hip_cp_wait<0>();
        __syncthreads();
        if (j0 + BK < key_end)
            sdx__hip_attn_stage_kv<DP, BK, L::THREADS, L::LD>(ks + ((j + 1) & 1) * L::KV, vs + ((j + 1) & 1) * L::KV, kg, vg, b * nk, j0 + BK,
                                                             key_end, hd, col0, d, vec, t);
        sdx__hip_cp_commit();
        /* S = Q K^T over this warp's dims: Q rows lane % 16 at dim kk + 8
         * (lane / 16) of each m16 tile; K rows (keys) lane % 8 + 8 (lane /
         * 16) at kk + 8 ((lane / 8) % 2) give two key tiles, each used by
         * every m16 tile of the warp */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int jn = 0; jn < NS; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++) s[mt][jn][e] = 0.0f;
#pragma unroll
        for (int kk = dim0; kk < dim0 + L::DS; kk += 16) {
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                sdx__hip_ldsm4<0>(a[mt], qs + ((group * MT + mt) * 16 + lane % 16) * L::LD + kk + (lane / 16) * 8);
#pragma unroll
            for (int jn = 0; jn < NS; jn += 2) {
                uint32_t r[4];
                sdx__hip_ldsm4<0>(r, kt + (jn * 8 + lane % 8 + (lane / 16) * 8) * L::LD + kk + (lane / 8) % 2 * 8);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    sdx__hip_mma16816<HT>(s[mt][jn], a[mt], r);
                    sdx__hip_mma16816<HT>(s[mt][jn + 1], a[mt], r + 2);
                }
            }
        }
        if (SPLIT > 1) {
            /* the group's partial sums, added in the order of the dims */
#pragma unroll
            for (int jn = 0; jn < NS; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++) xch[((warp * NS + jn) * 4 + e) * 32 + lane] = s[0][jn][e];
            __syncthreads();
#pragma unroll
            for (int jn = 0; jn < NS; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float total = 0.0f;
#pragma unroll
                    for (int w = group * SPLIT; w < group * SPLIT + SPLIT; w++) total += xch[((w * NS + jn) * 4 + e) * 32 + lane];
                    s[0][jn][e] = total;
                }
        }
        /* the online softmax: element e of tile jn is key 8 jn + 2 tq +
         * e % 2 of row 16 mt + e / 2. Only a partial or causal tile masks
         * (every warp of the block takes the same branch). */
        if (causal || nkv < BK) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    /* the keys row r sees: [0, seen) of this tile */
                    int64_t row_end = row_q + 16 * mt + 8 * r - j0 + 1;
                    const int seen = !causal || row_end >= nkv ? nkv : (row_end < 0 ? 0 : (int)row_end);
#pragma unroll
                    for (int jn = 0; jn < NS; jn++)
#pragma unroll
                        for (int e = 0; e < 2; e++)
                            if (jn * 8 + 2 * tq + e >= seen) s[mt][jn][2 * r + e] = -INFINITY;
                }
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
#pragma unroll
            for (int r = 0; r < 2; r++) tile_max[mt][r] = -INFINITY;
#pragma unroll
            for (int jn = 0; jn < NS; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++) tile_max[mt][e / 2] = fmaxf(tile_max[mt][e / 2], s[mt][jn][e]);
#pragma unroll
            for (int r = 0; r < 2; r++) {
                /* scale2 > 0: the max of the scaled logits is the scaled max */
                const float m_new = fmaxf(m[mt][r], sdx__hip_warp_max(tile_max[mt][r], 4) * scale2);
                shift[mt][r] = m_new == -INFINITY ? 0.0f : m_new;       /* nothing visible yet: every exp is 0 */
                corr[mt][r] = sdx__hip_exp2(m[mt][r] - shift[mt][r]);   /* m = -inf (first tile): 0 */
                m[mt][r] = m_new;
            }
#pragma unroll
            for (int jn = 0; jn < NS; jn++)
#pragma unroll
                for (int r = 0; r < 2; r++)
                    sdx__hip_flash_p2<HT>(sdx__hip_exp2(fmaf(s[mt][jn][2 * r], scale2, -shift[mt][r])),
                                          sdx__hip_exp2(fmaf(s[mt][jn][2 * r + 1], scale2, -shift[mt][r])), &ph[mt][jn][r], &pl[mt][jn][r]);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                l[mt][e] *= corr[mt][e / 2];
#pragma unroll
                for (int i = 0; i < NO; i++) o[mt][i][e] *= corr[mt][e / 2];
            }
        }
        /* O += P V and l += P 1: key tiles 2c, 2c + 1 are the k16 step's
         * A. The row sums come from the matrix unit too, from the values
         * P V multiplies, so the output stays a weighted mean of v, at the
         * cost of one product in 2 NO + 1 and no conversion or addition
         * per element. V rows (keys) lane % 8 + 8 ((lane / 8) % 2) at dim
         * 16 jd + 8 (lane / 16), transposed, give two dim tiles, each used
         * by every m16 tile. */
#pragma unroll
        for (int c = 0; c < NS / 2; c++) {
            uint32_t ah[MT][4], al[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                ah[mt][0] = ph[mt][2 * c][0], ah[mt][1] = ph[mt][2 * c][1], ah[mt][2] = ph[mt][2 * c + 1][0], ah[mt][3] = ph[mt][2 * c + 1][1];
                al[mt][0] = pl[mt][2 * c][0], al[mt][1] = pl[mt][2 * c][1], al[mt][2] = pl[mt][2 * c + 1][0], al[mt][3] = pl[mt][2 * c + 1][1];
                sdx__hip_mma16816<HT>(l[mt], ah[mt], ones);
                if (HT == SDX__HIP_DT_BF16) sdx__hip_mma16816<HT>(l[mt], al[mt], ones);
            }
#pragma unroll
            for (int jd = 0; jd < NO; jd += 2) {
                uint32_t r[4];
                sdx__hip_ldsm4<1>(r, vt + (c * 16 + lane % 8 + (lane / 8) % 2 * 8) * L::LD + dim0 + jd * 8 + (lane / 16) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    sdx__hip_mma16816<HT>(o[mt][jd], ah[mt], r);
                    sdx__hip_mma16816<HT>(o[mt][jd + 1], ah[mt], r + 2);
                    if (HT == SDX__HIP_DT_BF16) {
                        sdx__hip_mma16816<HT>(o[mt][jd], al[mt], r);
                        sdx__hip_mma16816<HT>(o[mt][jd + 1], al[mt], r + 2);
                    }
                }
            }
        }
    }
    /* two adjacent dims a store where d is even and y aligned (pairs) */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int64_t qi = row_q + 16 * mt + 8 * r;
            const float inv = l[mt][2 * r] > 0.0f ? 1.0f / l[mt][2 * r] : 0.0f;
#pragma unroll
            for (int i = 0; i < NO; i++) {
                const int c = dim0 + i * 8 + 2 * tq;
                const int64_t at = (b * nq + qi) * hd + col0 + c;
                if (qi >= nq || c >= d) continue;
                if (pairs) {
                    sdx__hip_st_pair(y, yt, at, o[mt][i][2 * r] * inv, o[mt][i][2 * r + 1] * inv);
                } else {
                    sdx__hip_st(y, yt, at, o[mt][i][2 * r] * inv);
                    if (c + 1 < d) sdx__hip_st(y, yt, at + 1, o[mt][i][2 * r + 1] * inv);
                }
            }
        }
#else
    (void)y; (void)yt; (void)q; (void)k; (void)v; (void)nq; (void)nk; (void)heads; (void)d; (void)causal; (void)scale; (void)vec; (void)pairs;
#endif
}

/* ---- on Hopper's warpgroup matrix units (wgmma, sm_90a) ------------------ */
/* Head dims up to 80 without a causal mask (SD 1.x's 40 and 80, SD 2.x's
 * and SDXL's 64: all of their attention but SD 1.x's 160, and the text
 * encoders'), FlashAttention-3's scheme on sdx__hip_k_flash_mma's
 * arithmetic, the head dim padded to DP = 48, 64 or 80 (d a multiple of
 * 8; the pad is zeros). A block of WGS warpgroups takes 64 WGS queries of
 * one (batch, head), 64 a warpgroup; Q, and K and V in tiles of 64 keys,
 * come by asynchronous copies into wgmma's 128-byte swizzle in column
 * blocks of 64 dims (a row's 128 bytes; the last block padded), K and V
 * in their [key][dim] layout: K is S's K-major B, V is O's MN-major B.
 * K and V have two buffers each. Per tile j:
 *   S_j = Q K_j^T: DP / 16 m64n64k16 from shared memory (f32
 *     accumulators, 32 a thread, laid out as mma.sync's:
 *     sdx__hip_wgmma_rs);
 *   O += P_{j-1} V_{j-1}: four m64nDPk16 with P from registers (eight in
 *     bf16: P is hi + lo there, as in sdx__hip_k_flash_mma), issued
 *     behind S_j, so the matrix units run them while the threads compute
 *     the softmax of S_j (the overlap FlashAttention-3 gets within a
 *     warpgroup);
 *   the online softmax of S_j in f32, base 2, as sdx__hip_k_flash_mma's;
 *     P_j rounded to the half type; then, P_{j-1}'s products done, O
 *     rescaled by exp2(m_old - m_new).
 * The row sum l adds the rounded P the products take (in f32, each thread
 * its columns, the four lanes of a row added at the end), so the output
 * stays a weighted mean of v. The copies of K_{j+1} and V_j go out after
 * the barrier that opens tile j: by then every warpgroup is done with
 * K_{j-1} (S_{j-1} waited for) and V_{j-2} (P_{j-2} V_{j-2} waited for),
 * whose buffers they take. Keys past nk are zeros and masked (the last
 * tile only); queries past nq are zeros and not stored. */
template <int DP, int WGS>
struct sdx__hip_flash_wg_plan {
    enum { BK = 64, BQ = 64 * WGS, THREADS = 128 * WGS,
           CB = (DP + 63) / 64,         /* column blocks of 64 dims */
           TILE = CB * BK * 64,         /* halves of a K or V tile: whole 1024-byte atoms */
           Q = 0, K = CB * BQ * 64, V = K + 2 * TILE, HALVES = V + 2 * TILE,
           SBO = 1024,                  /* bytes from an 8-row atom to the next */
           ALIGN = 1024,                /* the swizzle's atoms start on this boundary */
           BYTES = 2 * HALVES + ALIGN - 16 };
};

/* Rows [row0, row0 + ROWS) of one head's d dims (from col0) into dst in
 * the 128-byte swizzle, CB column blocks of ROWS rows, as asynchronous
 * copies: row r's chunk c (8 dims) in block c / 8, at its swizzled place
 * there. Rows from `valid` on, and dims from d on, are zeros. */
template <int ROWS, int CB, int THREADS>
static __device__ __forceinline__ void sdx__hip_flash_wg_stage(uint16_t *dst, const uint16_t *src, int64_t row0, int64_t valid, int64_t hd,
                                                               int64_t col0, int d, int t) {
#pragma unroll
    for (int e = t; e < ROWS * 8 * CB; e += THREADS) {
        const int r = e / (8 * CB), c = e % (8 * CB), ok = r < valid && 8 * c < d;
        sdx__hip_cp_async16(dst + c / 8 * ROWS * 64 + sdx__hip_swizzled(r, c % 8), src + (ok ? (row0 + r) * hd + col0 + 8 * c : 0), ok);
    }
}

/* The min-blocks bound: two blocks of two warpgroups an SM in f16 (at
 * most 128 registers a thread: 110 to 120 for sm_90a); bf16's P is twice
 * the registers (hi + lo: 151 to 172), one. */
template <int HT, int WGS>
struct sdx__hip_flash_wg_bound {
    enum { BLOCKS = (HT == SDX__HIP_DT_F16 ? 2 : 1) * (WGS == 1 ? 2 : 1) };
};

/* S's k16 slice kk of a [rows][DP] operand from `desc` on: column block
 * kk / 4 (`block` 16-byte units apart), 32 bytes a slice within it. */
static __device__ __forceinline__ uint64_t sdx__hip_flash_wg_kslice(uint64_t desc, int kk, uint64_t block) {
    return desc + (uint64_t)(kk / 4) * block + (uint64_t)(2 * (kk % 4));
}

#if SDX__HIP_WGMMA
/* O += P V for the V tile `dv` names, P's PV parts in registers, as one
 * group of products: k16 slice c (keys 16c on) is two atoms of 8 keys,
 * SBO bytes each, down V's rows. */
template <int HT, int DP, int PV, int SBO>
static __device__ __forceinline__ void sdx__hip_flash_wg_pv(float *o, const uint32_t (*pp)[4][4], uint64_t dv) {
    sdx__hip_wg_arrive();       /* P's registers, and O's, are final */
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int part = 0; part < PV; part++) sdx__hip_wgmma_rs<HT, DP, 1>(o, pp[part][c], dv + (uint64_t)c * (2 * SBO / 16));
    sdx__hip_wg_commit();
}
#endif

template <int HT, int DP, int WGS>
__global__ void __launch_bounds__(128 * WGS, (sdx__hip_flash_wg_bound<HT, WGS>::BLOCKS))
sdx__hip_k_flash_wgmma(void *y, int yt, const void *q, const void *k, const void *v, int64_t nq, int64_t nk, int heads, int d, float scale,
                       int pairs) {
    sdx__hip_wait_prior();
#if SDX__HIP_WGMMA
    typedef sdx__hip_flash_wg_plan<DP, WGS> L;
    enum { PV = HT == SDX__HIP_DT_BF16 ? 2 : 1,        /* P's parts: hi (+ lo) */
           NO = DP / 2 };                              /* O's accumulators a thread */
    static_assert(DP % 16 == 0 && DP <= 80, "the widths sdx__hip_wgmma_rs has");
    SDX__HIP_DYNAMIC_SMEM(uint16_t, dynamic);
    uint16_t *smem = dynamic + (-sdx__hip_smem_address(dynamic) & (L::ALIGN - 1)) / 2;
    uint16_t *qs = smem + L::Q, *ks = smem + L::K, *vs = smem + L::V;
    const uint16_t *kg = (const uint16_t *)k, *vg = (const uint16_t *)v;
    const int t = (int)threadIdx.x, wg = t / 128, lane = t % 32, tq = lane % 4;
    const int64_t bh = blockIdx.y, b = bh / heads, h = bh % heads, hd = (int64_t)heads * d, col0 = h * d;
    const int64_t q0 = (int64_t)blockIdx.x * L::BQ, row_q = q0 + wg * 64 + t % 128 / 32 * 16 + lane / 4;    /* and + 8 */
    const int tiles = (int)((nk + L::BK - 1) / L::BK);
    const float scale2 = scale * 1.44269504088896341f;
    /* this warpgroup's 64 rows of Q; K's and V's buffers. A column block
     * of Q is BQ rows, one of K or V 64 (16-byte units below) */
    const uint64_t dq = sdx__hip_wg_desc(qs + wg * 64 * 64, L::SBO), dk = sdx__hip_wg_desc(ks, L::SBO);
    const uint64_t dv = sdx__hip_wg_desc(vs, L::SBO, L::BK * 128);
    const uint64_t q_block = (uint64_t)(L::BQ * 128 / 16), kv_block = (uint64_t)(L::BK * 128 / 16);
    const uint64_t tile_units = (uint64_t)(L::TILE * 2 / 16);
    float s[32], o[NO], m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.0f, 0.0f };
    uint32_t p[PV][4][4], pp[PV][4][4];     /* P_j's and P_{j-1}'s A fragments (k16 slice c) */
#pragma unroll
    for (int i = 0; i < NO; i++) o[i] = 0.0f;
    sdx__hip_flash_wg_stage<L::BQ, L::CB, L::THREADS>(qs, (const uint16_t *)q, b * nq + q0, nq - q0, hd, col0, d, t);
    if (tiles > 0) sdx__hip_flash_wg_stage<L::BK, L::CB, L::THREADS>(ks, kg, b * nk, nk, hd, col0, d, t);
    sdx__hip_cp_commit();
    for (int j = 0; j < tiles; j++) {
        const int64_t j0 = (int64_t)j * L::BK;
        const int nkv = (int)(nk - j0 < (int64_t)L::BK ? nk - j0 : (int64_t)L::BK);
        float tile_max[2], corr[2];
        /* K_j and V_{j-1} landed and are visible to the matrix units */
        sdx__hip_cp_wait<0>();
        sdx__hip_wg_fence_smem();
        __syncthreads();
        if (j + 1 < tiles)
            sdx__hip_flash_wg_stage<L::BK, L::CB, L::THREADS>(ks + ((j + 1) & 1) * L::TILE, kg, b * nk + j0 + L::BK, nk - j0 - L::BK, hd, col0,
                                                              d, t);
        sdx__hip_flash_wg_stage<L::BK, L::CB, L::THREADS>(vs + (j & 1) * L::TILE, vg, b * nk + j0, nkv, hd, col0, d, t);
        sdx__hip_cp_commit();
#pragma unroll
        for (int i = 0; i < 32; i++) s[i] = 0.0f;
        sdx__hip_wg_fence_acc<32>(s);
        sdx__hip_wg_fence_acc<NO>(o);
        sdx__hip_wg_arrive();
#pragma unroll
        for (int kk = 0; kk < DP / 16; kk++)
            sdx__hip_wgmma<HT, 64>(s, sdx__hip_flash_wg_kslice(dq, kk, q_block),
                                   sdx__hip_flash_wg_kslice(dk + (uint64_t)(j & 1) * tile_units, kk, kv_block));
        sdx__hip_wg_commit();
        if (j > 0) {
            sdx__hip_flash_wg_pv<HT, DP, PV, L::SBO>(o, pp, dv + (uint64_t)((j - 1) & 1) * tile_units);
            sdx__hip_wg_wait<1>();      /* S_j; P_{j-1} V_{j-1} may run on */
        } else {
            sdx__hip_wg_wait<0>();
        }
        sdx__hip_wg_fence_acc<32>(s);
        /* element e of s's 8-column tile jn: key 8 jn + 2 tq + e % 2 of
         * row e / 2; only a partial last tile masks */
        if (nkv < L::BK) {
#pragma unroll
            for (int jn = 0; jn < 8; jn++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (jn * 8 + 2 * tq + e % 2 >= nkv) s[4 * jn + e] = -INFINITY;
        }
        tile_max[0] = tile_max[1] = -INFINITY;
#pragma unroll
        for (int i = 0; i < 32; i++) tile_max[i % 4 / 2] = fmaxf(tile_max[i % 4 / 2], s[i]);
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const float m_new = fmaxf(m[r], sdx__hip_warp_max(tile_max[r], 4) * scale2);
            const float shift = m_new == -INFINITY ? 0.0f : m_new;
            corr[r] = sdx__hip_exp2(m[r] - shift);
            m[r] = m_new;
            tile_max[r] = shift;        /* from here: the row's shift */
        }
        /* P_j: k16 slice c is key tiles 2c, 2c + 1 (a[0], a[2]: row g;
         * a[1], a[3]: row g + 8); l takes the rounded values */
        float sum[2] = { 0.0f, 0.0f };
#pragma unroll
        for (int c = 0; c < 4; c++)
#pragma unroll
            for (int f = 0; f < 4; f++) {
                const int i = 8 * c + 4 * (f / 2) + 2 * (f % 2), r = f % 2;
                uint32_t hi, lo;
                sdx__hip_flash_p2<HT>(sdx__hip_exp2(fmaf(s[i], scale2, -tile_max[r])), sdx__hip_exp2(fmaf(s[i + 1], scale2, -tile_max[r])),
                                      &hi, &lo);
                p[0][c][f] = hi;
                if (PV == 2) p[PV - 1][c][f] = lo;
                if (HT == SDX__HIP_DT_F16)
                    sum[r] += sdx__hip_h2f((uint16_t)hi) + sdx__hip_h2f((uint16_t)(hi >> 16));
                else
                    sum[r] += (sdx__hip_bf2f((uint16_t)hi) + sdx__hip_bf2f((uint16_t)lo)) +
                              (sdx__hip_bf2f((uint16_t)(hi >> 16)) + sdx__hip_bf2f((uint16_t)(lo >> 16)));
            }
        sdx__hip_wg_wait<0>();          /* P_{j-1} V_{j-1} */
        sdx__hip_wg_fence_acc<NO>(o);
#pragma unroll
        for (int i = 0; i < NO; i++) o[i] *= corr[i % 4 / 2];
#pragma unroll
        for (int r = 0; r < 2; r++) l[r] = l[r] * corr[r] + sum[r];
#pragma unroll
        for (int part = 0; part < PV; part++)
#pragma unroll
            for (int c = 0; c < 4; c++)
#pragma unroll
                for (int f = 0; f < 4; f++) pp[part][c][f] = p[part][c][f];
    }
    if (tiles > 0) {
        /* the last tile's P V, once its V landed */
        sdx__hip_cp_wait<0>();
        sdx__hip_wg_fence_smem();
        __syncthreads();
        sdx__hip_wg_fence_acc<NO>(o);
        sdx__hip_flash_wg_pv<HT, DP, PV, L::SBO>(o, pp, dv + (uint64_t)((tiles - 1) & 1) * tile_units);
        sdx__hip_wg_wait<0>();
        sdx__hip_wg_fence_acc<NO>(o);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int64_t qi = row_q + 8 * r;
        const float total = sdx__hip_warp_sum(l[r], 4);
        const float inv = total > 0.0f ? 1.0f / total : 0.0f;
        if (qi >= nq) continue;
#pragma unroll
        for (int jn = 0; jn < DP / 8; jn++) {
            const int c = jn * 8 + 2 * tq;      /* d is even: c + 1 < d too */
            const int64_t at = (b * nq + qi) * hd + col0 + c;
            if (c >= d) continue;
            if (pairs) {
                sdx__hip_st_pair(y, yt, at, o[4 * jn + 2 * r] * inv, o[4 * jn + 2 * r + 1] * inv);
            } else {
                sdx__hip_st(y, yt, at, o[4 * jn + 2 * r] * inv);
                sdx__hip_st(y, yt, at + 1, o[4 * jn + 2 * r + 1] * inv);
            }
        }
    }
#else
    (void)y; (void)yt; (void)q; (void)k; (void)v; (void)nq; (void)nk; (void)heads; (void)d; (void)scale; (void)pairs;
#endif
}
