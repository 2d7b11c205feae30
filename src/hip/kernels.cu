#pragma once
#include "device.cu"
/* ===================================================================== */
/*  Kernels: elementwise, norms, softmax, layout                          */
/* ===================================================================== */
/* Semantics are the CPU kernels' (src/cpu/): f32 arithmetic,
 * f32 (group norm: f64) statistics, one narrowing store. The
 * memory-bound ones take W values a thread at a time (sdx__hip_ldw): 8
 * with 16-byte accesses when the launch found the sizes and pointers
 * allow it (sdx__hip_width), else 1; a group of W values then shares its
 * row, plane or channel, so index divisions happen once per group. */

enum { SDX__HIP_SILU, SDX__HIP_GELU, SDX__HIP_QUICK_GELU, SDX__HIP_SCALE, SDX__HIP_COPY, SDX__HIP_ADD, SDX__HIP_MUL,
       SDX__HIP_LEAKY_RELU };

static __device__ __forceinline__ float sdx__hip_silu(float v) { return v / (1.0f + expf(-v)); }

#define SDX__HIP_GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* The same over groups of W: i is the group's first element. */
#define SDX__HIP_GRID_STRIDE_W(i, n, W) \
    for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * (W); i < (n); i += (int64_t)gridDim.x * blockDim.x * (W))

template <int W>
__global__ void sdx__hip_k_ew(int op, void *y, int yt, const void *a, int at, const void *b, int bt, int64_t n, float s) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE_W(i, n, W) {
        float v[W], u[W] = { 0 };   /* u: b's values, for add and mul */
        sdx__hip_ldw<W>(a, at, i, v);
        if (op == SDX__HIP_ADD || op == SDX__HIP_MUL) sdx__hip_ldw<W>(b, bt, i, u);
        for (int e = 0; e < W; e++) {
            switch (op) {
            case SDX__HIP_SILU: v[e] = sdx__hip_silu(v[e]); break;
            case SDX__HIP_GELU: v[e] = sdx__hip_gelu(v[e]); break;
            case SDX__HIP_QUICK_GELU: v[e] = v[e] / (1.0f + expf(-1.702f * v[e])); break;
            case SDX__HIP_SCALE: v[e] *= s; break;
            case SDX__HIP_ADD: v[e] += u[e]; break;
            case SDX__HIP_MUL: v[e] *= u[e]; break;
            case SDX__HIP_LEAKY_RELU: v[e] = v[e] > 0 ? v[e] : v[e] * s; break;   /* s: the slope */
            default: break;
            }
        }
        sdx__hip_stw<W>(y, yt, i, v);
    }
}

/* limit > 0: y = tanh(x / limit) * limit (TAESD's soft clamp); else
 * y = min(max(x, lo), hi) with NaN kept, as the CPU's. y may alias x. */
__global__ void sdx__hip_k_clamp(void *y, int yt, const void *x, int xt, int64_t n, float lo, float hi, float limit) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE(i, n) {
        float v = sdx__hip_ld(x, xt, i);
        v = limit > 0 ? tanhf(v / limit) * limit : v < lo ? lo : v > hi ? hi : v;
        sdx__hip_st(y, yt, i, v);
    }
}

/* y[r, j] = x[r, j] * gelu(x[r, d + j]); W divides d */
template <int W>
__global__ void sdx__hip_k_geglu(void *y, int yt, const void *x, int xt, int64_t n, int64_t d) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE_W(i, n, W) {
        const int64_t r = i / d, j = i - r * d;
        float a[W], g[W];
        sdx__hip_ldw<W>(x, xt, r * 2 * d + j, a);
        sdx__hip_ldw<W>(x, xt, r * 2 * d + d + j, g);
        for (int e = 0; e < W; e++) a[e] *= sdx__hip_gelu(g[e]);
        sdx__hip_stw<W>(y, yt, i, a);
    }
}

/* y = x + v[n*C + c] over each [H*W] plane; W divides hw */
template <int W>
__global__ void sdx__hip_k_chan_bias(void *y, int yt, const void *x, int xt, const void *v, int vt, int64_t n, int64_t hw) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE_W(i, n, W) {
        const float bias = sdx__hip_ld(v, vt, i / hw);
        float u[W];
        sdx__hip_ldw<W>(x, xt, i, u);
        for (int e = 0; e < W; e++) u[e] += bias;
        sdx__hip_stw<W>(y, yt, i, u);
    }
}

/* nearest: source index floor(dst * in / out), as torch's interpolate */
__global__ void sdx__hip_k_resize(void *y, int yt, const void *x, int xt, int64_t n, int64_t hi, int64_t wi, int64_t ho, int64_t wo) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE(i, n) {
        int64_t ox = i % wo, oy = (i / wo) % ho, p = i / (wo * ho);
        sdx__hip_st(y, yt, i, sdx__hip_ld(x, xt, (p * hi + oy * hi / ho) * wi + ox * wi / wo));
    }
}

/* circular padding: y[p, i, j] = x[p, (i - top) mod H, (j - left) mod W] */
__global__ void sdx__hip_k_pad_circular(void *y, int yt, const void *x, int xt, int64_t n, int64_t h, int64_t w,
                                        int64_t ho, int64_t wo, int64_t top, int64_t left) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE(i, n) {
        int64_t ox = i % wo, oy = (i / wo) % ho, p = i / (wo * ho);
        int64_t sy = ((oy - top) % h + h) % h, sx = ((ox - left) % w + w) % w;
        sdx__hip_st(y, yt, i, sdx__hip_ld(x, xt, (p * h + sy) * w + sx));
    }
}

/* y[n] = cat(a[n], b[n]) with na, nb elements per image; W divides both */
template <int W>
__global__ void sdx__hip_k_concat(void *y, int yt, const void *a, int at, const void *b, int bt, int64_t n, int64_t na, int64_t nb) {
    sdx__hip_wait_prior();
    SDX__HIP_GRID_STRIDE_W(i, n, W) {
        const int64_t img = i / (na + nb), r = i - img * (na + nb);
        float v[W];
        if (r < na) sdx__hip_ldw<W>(a, at, img * na + r, v);
        else sdx__hip_ldw<W>(b, bt, img * nb + r - na, v);
        sdx__hip_stw<W>(y, yt, i, v);
    }
}

/* Batched [rows, cols] -> [cols, rows] through a 32 x 33 tile (the extra
 * column keeps the transposed reads off one bank). Block 32 x 8. */
__global__ void sdx__hip_k_transpose(void *y, int yt, const void *x, int xt, int64_t rows, int64_t cols) {
    sdx__hip_wait_prior();
    __shared__ float tile[32][33];
    int64_t base = (int64_t)blockIdx.z * rows * cols;
    int64_t c0 = (int64_t)blockIdx.x * 32, r0 = (int64_t)blockIdx.y * 32;
    for (int i = (int)threadIdx.y; i < 32; i += 8) {
        int64_t r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = sdx__hip_ld(x, xt, base + r * cols + c);
    }
    __syncthreads();
    for (int i = (int)threadIdx.y; i < 32; i += 8) {
        int64_t c = c0 + i, r = r0 + threadIdx.x;
        if (r < rows && c < cols) sdx__hip_st(y, yt, base + c * rows + r, tile[threadIdx.x][i]);
    }
}

/* The same for 16-bit values of one type, moved as they are: rows and
 * cols multiples of 8, both tensors 16-byte aligned. A 64 x 64 tile comes
 * in and goes out as 16-byte accesses, two a thread each way, where the
 * kernel above moves two bytes an access (it ran at a fraction of the
 * memory's bandwidth: 0.9 ms of SD 1.5's step). The tile's rows are 33
 * words (4-byte stores into it), so a column's reads fall on distinct
 * banks but two. Block 256. */
#define SDX__HIP_T16_PITCH 66

__global__ void __launch_bounds__(256) sdx__hip_k_transpose16(uint16_t *y, const uint16_t *x, int64_t rows, int64_t cols) {
    sdx__hip_wait_prior();
    __shared__ uint32_t tile[64 * SDX__HIP_T16_PITCH / 2];
    uint16_t *th = (uint16_t *)tile;
    const int64_t base = (int64_t)blockIdx.z * rows * cols, c0 = (int64_t)blockIdx.x * 64, r0 = (int64_t)blockIdx.y * 64;
    for (int e = (int)threadIdx.x; e < 512; e += 256) {
        const int r = e / 8, c = e % 8 * 8;     /* input row r, its columns c .. c + 7 */
        if (r0 + r < rows && c0 + c < cols) {
            const sdx__hip_v8 v = sdx__hip_ld8(x + base + (r0 + r) * cols + c0 + c);
            for (int i = 0; i < 4; i++) tile[(r * SDX__HIP_T16_PITCH + c) / 2 + i] = v.w[i];
        }
    }
    __syncthreads();
    for (int e = (int)threadIdx.x; e < 512; e += 256) {
        const int c = e / 8, r = e % 8 * 8;     /* output row c (an input column), from input rows r .. r + 7 */
        if (c0 + c < cols && r0 + r < rows) {
            sdx__hip_v8 v;
            for (int i = 0; i < 4; i++)
                v.w[i] = (uint32_t)th[(r + 2 * i) * SDX__HIP_T16_PITCH + c] | (uint32_t)th[(r + 2 * i + 1) * SDX__HIP_T16_PITCH + c] << 16;
            sdx__hip_st8(y + base + (c0 + c) * rows + r0 + r, v);
        }
    }
}

/* A convolution weight [O][C][taps] to channels-last [O][taps][C], in y's
 * type (a plain conversion when taps is 1). Block (i, o) moves channels
 * [i*cb, i*cb + cb) of output channel o, cb*taps <= 2048 values: read as
 * one contiguous run, written as taps runs of cb channels, both
 * coalesced (the generic transpose's 32 x 32 tiles would idle 23 of 32
 * lanes on a 3x3's 9 taps), W values a thread at a time (W == 8: C and
 * cb multiples of 8, both tensors 16-byte aligned; the launch checks). */
#define SDX__HIP_PERMUTE_VALUES 2048

template <int W>
__global__ void __launch_bounds__(256) sdx__hip_k_permute_taps(void *y, int yt, const void *x, int xt, int64_t c, int taps, int cb) {
    sdx__hip_wait_prior();
    __shared__ float run[SDX__HIP_PERMUTE_VALUES];
    const int64_t o = blockIdx.y, c0 = (int64_t)blockIdx.x * cb;
    const int cn = (int)(c - c0 < cb ? c - c0 : cb), n = cn * taps;
    for (int e = (int)threadIdx.x * W; e < n; e += 256 * W) sdx__hip_ldw<W>(x, xt, (o * c + c0) * taps + e, run + e);
    __syncthreads();
    for (int e = (int)threadIdx.x * W; e < n; e += 256 * W) {
        const int t = e / cn, ch = e - t * cn;     /* cn % W == 0: the W channels share t */
        float v[W];
        for (int i = 0; i < W; i++) v[i] = run[(ch + i) * taps + t];
        sdx__hip_stw<W>(y, yt, (o * taps + t) * c + c0 + ch, v);
    }
}

/* A convolution weight [O][C][taps] rearranged in place to [O][taps][C]
 * (sdx__hip_weight_added): block o holds output channel o's C x taps raw
 * 16-bit values in shared memory (the launch's bytes), then writes them
 * back channels-last. Once per weight, at load. */
__global__ void __launch_bounds__(256) sdx__hip_k_taps_last(uint16_t *w, int c, int taps) {
    sdx__hip_wait_prior();
    SDX__HIP_DYNAMIC_SMEM(uint16_t, run);
    const int n = c * taps;
    uint16_t *slab = w + (int64_t)blockIdx.x * n;
    for (int e = (int)threadIdx.x; e < n; e += 256) run[e] = slab[e];
    __syncthreads();
    for (int e = (int)threadIdx.x; e < n; e += 256) {
        const int t = e / c, ch = e - t * c;
        slab[e] = run[ch * taps + t];
    }
}

/* ---- group norm ---------------------------------------------------------- */
/* Each (image, group) is split over `parts` blocks so that large groups
 * (the VAE at 1024 px: 4 M values) fill the GPU. One statistics pass: f64
 * sums of x - K and (x - K)^2 per block, K being the group's first value.
 * The shift keeps E[(x-K)^2] - E[x-K]^2 free of cancellation even when
 * the mean is far from zero relative to the spread (K is a sample of the
 * group, so |mean - K| is a few deviations); f64 keeps sums past f16's and
 * f32's reach exact enough. Then one pass normalises. part_sum and
 * part_sq hold one value per block, shift one per group (y may alias x,
 * so the apply pass cannot read K back from x). */

#define SDX__HIP_GN_THREADS 512
/* Passes of a block's threads over its part of a group that each kernel
 * loads at once. A part is about 16384 values, 4 passes of 512
 * threads at 8 values (sdx__hip_group_norm_op; more in groups past 128
 * such parts, the VAE's at 1024 px). Two: the apply's 48 registers, two
 * blocks an SM (four: 72, one block; at 40 ptxas spills) */
#define SDX__HIP_GN_BATCH 2

/* A block's part of a group: a multiple of W values (W divides the
 * group's spatial size, so a group of W never straddles two channels). */
template <int W>
static __device__ __forceinline__ int64_t sdx__hip_gn_chunk(int64_t count, int parts) {
    return ((count + parts - 1) / parts + W - 1) / W * W;
}

/* A thread's SDX__HIP_GN_BATCH passes from element i0 of its block's part
 * (below hi) of the group at `base`, loads issued together. */
template <int W>
static __device__ __forceinline__ void sdx__hip_gn_load(const void *x, int xt, int64_t base, int64_t i0, int64_t hi,
                                                        float (*v)[W]) {
#pragma unroll
    for (int u = 0; u < SDX__HIP_GN_BATCH; u++) {
        const int64_t i = i0 + (int64_t)u * blockDim.x * W;
        if (i < hi) sdx__hip_ldw<W>(x, xt, base + i, v[u]);
    }
}

template <int W>
__global__ void sdx__hip_k_gn_stats(const void *x, int xt, int64_t count, int parts, double *part_sum, double *part_sq,
                                    double *shift_of) {
    sdx__hip_wait_prior();
    __shared__ double buf[32];
    int64_t g = blockIdx.y, chunk = sdx__hip_gn_chunk<W>(count, parts);
    int64_t lo = (int64_t)blockIdx.x * chunk, hi = lo + chunk < count ? lo + chunk : count;
    double shift = (double)sdx__hip_ld(x, xt, g * count), s = 0, q = 0;
    /* SDX__HIP_GN_BATCH passes' loads together, then their sums in order
     * (a pass's load waited for the sums of the pass before it) */
    for (int64_t i0 = lo + threadIdx.x * W; i0 < hi; i0 += (int64_t)blockDim.x * W * SDX__HIP_GN_BATCH) {
        float v[SDX__HIP_GN_BATCH][W];
        sdx__hip_gn_load<W>(x, xt, g * count, i0, hi, v);
#pragma unroll
        for (int u = 0; u < SDX__HIP_GN_BATCH; u++) {
            if (i0 + (int64_t)u * blockDim.x * W >= hi) break;
            for (int e = 0; e < W; e++) {
                double d = (double)v[u][e] - shift;
                s += d;
                q += d * d;
            }
        }
    }
    s = sdx__hip_block_sum(s, buf);
    q = sdx__hip_block_sum(q, buf);
    if (threadIdx.x == 0) {
        part_sum[g * parts + blockIdx.x] = s;
        part_sq[g * parts + blockIdx.x] = q;
        if (blockIdx.x == 0) shift_of[g] = shift;
    }
}

template <int W>
__global__ void sdx__hip_k_gn_apply(void *y, int yt, const void *x, int xt, int64_t count, int parts, const double *part_sum,
                                    const double *part_sq, const double *shift_of, int64_t groups, int64_t spatial, float eps,
                                    const void *gamma, int gt, const void *beta, int btt, int fuse_silu) {
    sdx__hip_wait_prior();
    int64_t g = blockIdx.y, chunk = sdx__hip_gn_chunk<W>(count, parts), cpg = count / spatial;  /* spatial > 0 */
    int64_t lo = (int64_t)blockIdx.x * chunk, hi = lo + chunk < count ? lo + chunk : count;
    double sum = 0, sq = 0, mean_shifted, var;
    float rstd, fmean;
    for (int p = 0; p < parts; p++) {
        sum += part_sum[g * parts + p];
        sq += part_sq[g * parts + p];
    }
    mean_shifted = count ? sum / (double)count : 0.0;
    var = count ? sq / (double)count - mean_shifted * mean_shifted : 0.0;
    fmean = (float)(shift_of[g] + mean_shifted);
    rstd = (float)(1.0 / sqrt((var > 0 ? var : 0.0) + (double)eps));
    /* a thread's next SDX__HIP_GN_BATCH groups of W of x are all loaded
     * before any is stored: y may alias x, so a load after a store waits
     * for it, and a block's part of a group is several passes of its
     * threads (gamma and beta, a few hundred values, come from the L1
     * after their first use) */
    for (int64_t i0 = lo + threadIdx.x * W; i0 < hi; i0 += (int64_t)blockDim.x * W * SDX__HIP_GN_BATCH) {
        float v[SDX__HIP_GN_BATCH][W];
        sdx__hip_gn_load<W>(x, xt, g * count, i0, hi, v);
#pragma unroll
        for (int u = 0; u < SDX__HIP_GN_BATCH; u++) {
            const int64_t i = i0 + (int64_t)u * blockDim.x * W, ch = (g % groups) * cpg + i / spatial;
            if (i >= hi) break;
            const float gm = gamma ? sdx__hip_ld(gamma, gt, ch) : 1.0f, bt = beta ? sdx__hip_ld(beta, btt, ch) : 0.0f;
            for (int e = 0; e < W; e++) {
                /* x - mean first, as the CPU: x * mul + (beta - mean * mul)
                 * would cancel when the mean is large against the spread */
                v[u][e] = (v[u][e] - fmean) * (gm * rstd) + bt;
                if (fuse_silu) v[u][e] = sdx__hip_silu(v[u][e]);
            }
            sdx__hip_stw<W>(y, yt, g * count + i, v[u]);
        }
    }
}

/* ---- layer norm and softmax: one warp per row ---------------------------- */

/* W divides d */
template <int W>
__global__ void sdx__hip_k_layer_norm(void *y, int yt, const void *x, int xt, int64_t rows, int64_t d, float eps,
                                      const void *gamma, int gt, const void *beta, int btt) {
    sdx__hip_wait_prior();
    int lane = (int)threadIdx.x % SDX__HIP_WARP;
    int64_t r = (int64_t)blockIdx.x * (blockDim.x / SDX__HIP_WARP) + threadIdx.x / SDX__HIP_WARP;
    float s = 0, q = 0, mean, rstd, shift, v[W];
    if (r >= rows) return;      /* whole warps leave together */
    shift = sdx__hip_ld(x, xt, r * d);  /* summing x - x[0] keeps a mean far from 0 exact (as the CPU) */
    for (int64_t i = lane * W; i < d; i += SDX__HIP_WARP * W) {
        sdx__hip_ldw<W>(x, xt, r * d + i, v);
        for (int e = 0; e < W; e++) s += v[e] - shift;
    }
    mean = shift + sdx__hip_warp_sum(s, SDX__HIP_WARP) / (float)d;
    for (int64_t i = lane * W; i < d; i += SDX__HIP_WARP * W) {
        sdx__hip_ldw<W>(x, xt, r * d + i, v);
        for (int e = 0; e < W; e++) q += (v[e] - mean) * (v[e] - mean);
    }
    rstd = 1.0f / sqrtf(sdx__hip_warp_sum(q, SDX__HIP_WARP) / (float)d + eps);
    for (int64_t i = lane * W; i < d; i += SDX__HIP_WARP * W) {
        sdx__hip_ldw<W>(x, xt, r * d + i, v);
        for (int e = 0; e < W; e++) {
            float gm = gamma ? sdx__hip_ld(gamma, gt, i + e) : 1.0f, bt = beta ? sdx__hip_ld(beta, btt, i + e) : 0.0f;
            v[e] = (v[e] - mean) * rstd * gm + bt;
        }
        sdx__hip_stw<W>(y, yt, r * d + i, v);
    }
}

/* The same LayerNorm with a lane's part of the row in registers (W = 8
 * values a load, V loads a lane: d <= warp * 8 V): x is read once, with
 * a lane's loads issued together where the kernel above waits for each
 * of its three passes', and gamma and beta come 8 values a load. Half-type
 * gamma and beta (the checkpoints' f16 or bf16) are loaded raw beside x,
 * before the sums: otherwise each chunk's loads would wait for the
 * chunk before it to be stored (y might alias them, for all the compiler
 * knows), a round trip to memory per chunk. The same sums in the same
 * order, so the same bits. */
template <int V>
__global__ void sdx__hip_k_layer_norm_row(void *y, int yt, const void *x, int xt, int64_t rows, int64_t d, float eps,
                                          const void *gamma, int gt, const void *beta, int btt) {
    sdx__hip_wait_prior();
    enum { W = 8, STEP = SDX__HIP_WARP * W };
    const int lane = (int)threadIdx.x % SDX__HIP_WARP;
    const int64_t r = (int64_t)blockIdx.x * (blockDim.x / SDX__HIP_WARP) + threadIdx.x / SDX__HIP_WARP;
    /* this lane's load c: W values of the row from at + c STEP, where that is < d */
    const int64_t at = (int64_t)lane * W;
    const int g_raw = gamma && gt != SDX__HIP_DT_F32, b_raw = beta && btt != SDX__HIP_DT_F32;
    float v[V][W], s = 0, q = 0, mean, rstd, shift;
    sdx__hip_v8 graw[V], braw[V];
    if (r >= rows) return;      /* whole warps leave together */
    shift = sdx__hip_ld(x, xt, r * d);
#pragma unroll
    for (int c = 0; c < V; c++)
        if (at + c * STEP < d) {
            sdx__hip_ldw<W>(x, xt, r * d + at + c * STEP, v[c]);
            if (g_raw) graw[c] = sdx__hip_ld8((const uint16_t *)gamma + at + c * STEP);
            if (b_raw) braw[c] = sdx__hip_ld8((const uint16_t *)beta + at + c * STEP);
        }
#pragma unroll
    for (int c = 0; c < V; c++)
        if (at + c * STEP < d)
            for (int e = 0; e < W; e++) s += v[c][e] - shift;
    mean = shift + sdx__hip_warp_sum(s, SDX__HIP_WARP) / (float)d;
#pragma unroll
    for (int c = 0; c < V; c++)
        if (at + c * STEP < d)
            for (int e = 0; e < W; e++) q += (v[c][e] - mean) * (v[c][e] - mean);
    rstd = 1.0f / sqrtf(sdx__hip_warp_sum(q, SDX__HIP_WARP) / (float)d + eps);
#pragma unroll
    for (int c = 0; c < V; c++) {
        const int64_t i = at + c * STEP;
        float gm[W], bt[W];
        if (i >= d) continue;
        if (g_raw) sdx__hip_v8_to_f32(graw[c], gt, gm);
        else if (gamma) sdx__hip_ldw<W>(gamma, gt, i, gm);
        else for (int e = 0; e < W; e++) gm[e] = 1.0f;
        if (b_raw) sdx__hip_v8_to_f32(braw[c], btt, bt);
        else if (beta) sdx__hip_ldw<W>(beta, btt, i, bt);
        else for (int e = 0; e < W; e++) bt[e] = 0.0f;
        for (int e = 0; e < W; e++) v[c][e] = (v[c][e] - mean) * rstd * gm[e] + bt[e];
        sdx__hip_stw<W>(y, yt, r * d + i, v[c]);
    }
}

__global__ void sdx__hip_k_softmax(void *y, int yt, const void *x, int xt, int64_t rows, int64_t d) {
    sdx__hip_wait_prior();
    int lane = (int)threadIdx.x % SDX__HIP_WARP;
    int64_t r = (int64_t)blockIdx.x * (blockDim.x / SDX__HIP_WARP) + threadIdx.x / SDX__HIP_WARP;
    float mx = -INFINITY, s = 0, inv;
    if (r >= rows) return;
    for (int64_t i = lane; i < d; i += SDX__HIP_WARP) mx = fmaxf(mx, sdx__hip_ld(x, xt, r * d + i));
    mx = sdx__hip_warp_max(mx, SDX__HIP_WARP);
    if (mx == -INFINITY) mx = 0;    /* fully masked row: all zeros */
    for (int64_t i = lane; i < d; i += SDX__HIP_WARP) s += expf(sdx__hip_ld(x, xt, r * d + i) - mx);
    s = sdx__hip_warp_sum(s, SDX__HIP_WARP);
    inv = s > 0 ? 1.0f / s : 0.0f;
    for (int64_t i = lane; i < d; i += SDX__HIP_WARP) sdx__hip_st(y, yt, r * d + i, expf(sdx__hip_ld(x, xt, r * d + i) - mx) * inv);
}
