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
    extern __shared__ float sdx__hip_attn_smem[];
    float *ks = sdx__hip_attn_smem, *vs = sdx__hip_attn_smem + KT * d;
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
