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

/* ---- on the matrix units (NVIDIA wmma) ------------------------------------- */
/* For q, k and v of one half type HT (the GPU's half activations). A
 * block of WARPS warps takes 16 * WARPS queries of one (batch, head), each
 * warp 16 of them; head dims are zero-padded to DP, a multiple of 16
 * (40 -> 48). Per tile of BK keys, staged in shared memory:
 *   S = Q K^T on the matrix units, f32 accumulation, into shared memory;
 *   the online softmax in f32 by the warp's lanes (two lanes a row, on
 *   alternate columns so the pair reads neighbouring banks; the row's
 *   max m and sum l in their registers): logits scaled, masked
 *   (keys past nk, and past the query when causal), P = exp(S - m);
 *   P in HT for the matrix units. bf16's 8 bits would cost precision
 *   that f32 attention does not lose, so in bf16 P is the sum of two bf16
 *   parts (hi + lo: 16 bits) and each tile costs two P V products. The
 *   row sum l adds the values P V uses, so the output stays a weighted
 *   mean of v;
 *   O += P V on the matrix units, O held in shared memory in f32 (the
 *   lanes rescale it by exp(m_old - m_new) first: wmma's fragment layout
 *   is opaque, so per-row factors cannot be applied in registers).
 * vec: d % 8 == 0 and q, k, v 16-byte aligned, so Q, K and V tiles move
 * as asynchronous 16-byte copies; with STAGES 2 the next K/V tile streams
 * in while this one computes. No Nq x Nk matrix exists anywhere. The
 * shared-memory plan is sdx__hip_attn_plan; above 48 KiB the launch
 * raises the kernel's limit (227 KiB on sm_90, 163 KiB on sm_80). */

template <int HT, int DP, int WARPS, int BK, int STAGES>
struct sdx__hip_attn_plan {
    enum { BQ = 16 * WARPS, QLD = DP + 8, SLD = BK + 4, PLD = BK + 8, OLD = DP + 4, SPLIT = HT == SDX__HIP_DT_BF16,
           /* halves: Q, K and V (STAGES buffers each), P (hi, lo); floats:
            * S, O. Every region starts 32-byte aligned (wmma's pointer
            * rule): each is 16 rows of an even pitch times a whole number */
           KV = BK * QLD, Q = 0, K = Q + BQ * QLD, V = K + STAGES * KV, P = V + STAGES * KV, PL = P + BQ * PLD,
           HALVES = PL + (SPLIT ? BQ * PLD : 0), S = 0, O = S + BQ * SLD, FLOATS = O + BQ * OLD,
           BYTES = 2 * HALVES + 4 * FLOATS };
};

/* Stages K and V rows [j0, j0 + nkv) of tile buffer kb/vb; rows past nkv
 * and dims past d are zeros (0 * garbage could be NaN). vec: as
 * asynchronous 16-byte copies (waited for by the caller), else loads. */
template <int DP, int BK, int THREADS, int QLD>
static __device__ __forceinline__ void sdx__hip_attn_stage_kv(uint16_t *kb, uint16_t *vb, const uint16_t *kg, const uint16_t *vg,
                                                              int64_t row0, int64_t hd, int64_t col0, int nkv, int d, int vec, int t) {
    if (vec) {
        for (int e = t; e < BK * DP / 8; e += THREADS) {
            int r = e / (DP / 8), c = (e - r * (DP / 8)) * 8, ok = r < nkv && c < d;
            int64_t src = ok ? (row0 + r) * hd + col0 + c : 0;
            sdx__hip_cp_async16(kb + r * QLD + c, kg + src, ok);
            sdx__hip_cp_async16(vb + r * QLD + c, vg + src, ok);
        }
    } else {
        for (int e = t; e < BK * DP; e += THREADS) {
            int r = e / DP, c = e - r * DP, ok = r < nkv && c < d;
            int64_t src = (row0 + r) * hd + col0 + c;
            kb[r * QLD + c] = ok ? kg[src] : (uint16_t)0;
            vb[r * QLD + c] = ok ? vg[src] : (uint16_t)0;
        }
    }
}

template <int HT, int DP, int WARPS, int BK, int STAGES>
__global__ void __launch_bounds__(WARPS * 32, 1)
sdx__hip_k_attention_mma(void *y, int yt, const void *q, const void *k, const void *v, int64_t nq, int64_t nk, int heads,
                         int d, int causal, float scale, int vec) {
#if SDX__HIP_MMA == 1
    typedef sdx__hip_attn_plan<HT, DP, WARPS, BK, STAGES> L;
    typedef typename sdx__hip_wmma_t<HT>::type T;
    namespace wm = nvcuda::wmma;
    enum { THREADS = WARPS * 32 };
    SDX__HIP_DYNAMIC_SMEM(unsigned char, smem);
    uint16_t *hs = (uint16_t *)smem, *qs = hs + L::Q, *ks = hs + L::K, *vs = hs + L::V, *ph = hs + L::P, *pl = hs + L::PL;
    float *fs = (float *)(smem + 2 * L::HALVES), *ss = fs + L::S, *os = fs + L::O;
    const uint16_t *qg = (const uint16_t *)q, *kg = (const uint16_t *)k, *vg = (const uint16_t *)v;
    const int t = (int)threadIdx.x, warp = t / 32, lane = t % 32;
    const int row = warp * 16 + lane / 2, half = lane % 2;     /* this lane's row of the block, and half of it */
    const int64_t bh = blockIdx.y, b = bh / heads, h = bh % heads, hd = (int64_t)heads * d;
    const int64_t q0 = (int64_t)blockIdx.x * L::BQ, qi = q0 + row;
    const int64_t key_end = causal ? (q0 + L::BQ < nk ? q0 + L::BQ : nk) : nk;
    float m = -INFINITY, l = 0.0f;
    const int64_t kv_row0 = b * nk, col0 = h * d;
    int j = 0;
    for (int e = t; e < L::BQ * DP; e += THREADS) os[(e / DP) * L::OLD + e % DP] = 0.0f;
    if (vec) {
        for (int e = t; e < L::BQ * DP / 8; e += THREADS) {
            int r = e / (DP / 8), c = (e - r * (DP / 8)) * 8, ok = q0 + r < nq && c < d;
            sdx__hip_cp_async16(qs + r * L::QLD + c, qg + (ok ? (b * nq + q0 + r) * hd + col0 + c : 0), ok);
        }
    } else {
        for (int e = t; e < L::BQ * DP; e += THREADS) {
            int r = e / DP, c = e - r * DP;
            qs[r * L::QLD + c] = (q0 + r < nq && c < d) ? qg[(b * nq + q0 + r) * hd + col0 + c] : (uint16_t)0;
        }
    }
    if (key_end > 0)
        sdx__hip_attn_stage_kv<DP, BK, THREADS, L::QLD>(ks, vs, kg, vg, kv_row0, hd, col0, (int)(key_end < BK ? key_end : BK), d, vec, t);
    sdx__hip_cp_commit();
    for (int64_t j0 = 0; j0 < key_end; j0 += BK, j++) {
        const int nkv = (int)(key_end - j0 < BK ? key_end - j0 : BK), cur = STAGES == 2 ? (j & 1) : 0;
        const uint16_t *kt = ks + cur * L::KV, *vt = vs + cur * L::KV;
        float tile_max = -INFINITY, sum = 0.0f, m_new, shift, corr;
        if (STAGES == 2) {
            /* the next tile streams into the other buffer during this one:
             * its last readers passed the barrier that ended the previous
             * tile. An empty group when there is none keeps the count. */
            if (j0 + BK < key_end) {
                int64_t n1 = key_end - j0 - BK;
                sdx__hip_attn_stage_kv<DP, BK, THREADS, L::QLD>(ks + (cur ^ 1) * L::KV, vs + (cur ^ 1) * L::KV, kg, vg, kv_row0 + j0 + BK, hd,
                                                               col0, (int)(n1 < BK ? n1 : BK), d, vec, t);
            }
            sdx__hip_cp_commit();
            sdx__hip_cp_wait<1>();      /* this tile (and Q) landed */
        } else {
            sdx__hip_cp_wait<0>();
        }
        __syncthreads();                /* every thread's copies, Q and O's zeros are visible */
        /* S (this warp's 16 rows x BK) = Q K^T */
        for (int jn = 0; jn < BK; jn += 16) {
            wm::fragment<wm::accumulator, 16, 16, 16, float> acc;
            wm::fill_fragment(acc, 0.0f);
            for (int kk = 0; kk < DP; kk += 16) {
                wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
                wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::col_major> fb;
                wm::load_matrix_sync(fa, (const T *)(qs + warp * 16 * L::QLD + kk), L::QLD);
                wm::load_matrix_sync(fb, (const T *)(kt + jn * L::QLD + kk), L::QLD);
                wm::mma_sync(acc, fa, fb, acc);
            }
            wm::store_matrix_sync(ss + warp * 16 * L::SLD + jn, acc, L::SLD, wm::mem_row_major);
        }
        __syncwarp();
        /* online softmax over the row's visible keys */
        for (int c = half; c < BK; c += 2) {
            float s = ss[row * L::SLD + c] * scale;
            s = (c < nkv && (!causal || j0 + c <= qi)) ? s : -INFINITY;
            ss[row * L::SLD + c] = s;
            tile_max = fmaxf(tile_max, s);
        }
        tile_max = fmaxf(tile_max, SDX__HIP_SHFL_XOR(tile_max, 1));
        m_new = fmaxf(m, tile_max);
        shift = m_new == -INFINITY ? 0.0f : m_new;     /* nothing visible yet: every exp is 0 */
        corr = expf(m - shift);                        /* m = -inf (first tile): 0 */
        for (int c = half; c < BK; c += 2) {
            float p = expf(ss[row * L::SLD + c] - shift), hi;
            uint16_t bits = HT == SDX__HIP_DT_F16 ? __half_as_ushort(__float2half_rn(p)) : sdx__hip_f2bf(p);
            hi = HT == SDX__HIP_DT_F16 ? sdx__hip_h2f(bits) : sdx__hip_bf2f(bits);
            ph[row * L::PLD + c] = bits;
            if (L::SPLIT) {
                uint16_t lo = sdx__hip_f2bf(p - hi);
                pl[row * L::PLD + c] = lo;
                hi += sdx__hip_bf2f(lo);
            }
            sum += hi;
        }
        sum += SDX__HIP_SHFL_XOR(sum, 1);
        l = l * corr + sum;
        m = m_new;
        for (int c = half; c < DP; c += 2) os[row * L::OLD + c] *= corr;
        __syncwarp();
        /* O (this warp's 16 rows x DP) += P V */
        for (int jd = 0; jd < DP; jd += 16) {
            wm::fragment<wm::accumulator, 16, 16, 16, float> acc;
            float *o = os + warp * 16 * L::OLD + jd;
            wm::load_matrix_sync(acc, o, L::OLD, wm::mem_row_major);
            for (int kk = 0; kk < BK; kk += 16) {
                wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
                wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::row_major> fb;
                wm::load_matrix_sync(fb, (const T *)(vt + kk * L::QLD + jd), L::QLD);
                wm::load_matrix_sync(fa, (const T *)(ph + warp * 16 * L::PLD + kk), L::PLD);
                wm::mma_sync(acc, fa, fb, acc);
                if (L::SPLIT) {
                    wm::load_matrix_sync(fa, (const T *)(pl + warp * 16 * L::PLD + kk), L::PLD);
                    wm::mma_sync(acc, fa, fb, acc);
                }
            }
            wm::store_matrix_sync(o, acc, L::OLD, wm::mem_row_major);
        }
        __syncthreads();                /* this tile's K and V are consumed; this warp's O rows are stored */
        if (STAGES == 1 && j0 + BK < key_end) {
            int64_t n1 = key_end - j0 - BK;
            sdx__hip_attn_stage_kv<DP, BK, THREADS, L::QLD>(ks, vs, kg, vg, kv_row0 + j0 + BK, hd, col0, (int)(n1 < BK ? n1 : BK), d, vec, t);
            sdx__hip_cp_commit();
        }
    }
    __syncthreads();                /* with no keys at all, O's zeros came from other warps */
    if (qi < nq) {
        float inv = l > 0.0f ? 1.0f / l : 0.0f;
        for (int c = half; c < d; c += 2) sdx__hip_st(y, yt, (b * nq + qi) * hd + h * d + c, os[row * L::OLD + c] * inv);
    }
#else
    (void)y; (void)yt; (void)q; (void)k; (void)v; (void)nq; (void)nk; (void)heads; (void)d; (void)causal; (void)scale; (void)vec;
#endif
}
