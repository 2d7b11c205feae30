#pragma once
#include "device.cu"
/* ===================================================================== */
/*  GEMM: linear and convolution (implicit GEMM)                          */
/* ===================================================================== */
/* Both ops are C[m, n] = sum_k A[m, k] W[n, k] + bias[n], f32 accumulated:
 *   linear  A = x [M, K] (rows of the input), W = w [N, K], y[m*N + n];
 *   conv2d  A[m, k] = x[c, oy*s - pt + ky, ox*s - pl + kx] gathered on the
 *           fly (m = output pixel, k = (c*kh + ky)*kw + kx; no im2col
 *           buffer), W = w [O, C*kh*kw], y[image][n*M + m];
 *   conv2d from channels-last copies (the matrix units' convolutions,
 *           sdx__hip_conv2d_pad_op): x [H, W, C] and w [O, kh, kw, C], so
 *           k = (ky*kw + kx)*C + c and each 8 consecutive k of a pixel are
 *           16 contiguous bytes, loaded like a linear's rows; y as above.
 * Two kernels share that loader: a matrix-unit kernel for f16 or bf16
 * operands of one type (NVIDIA mma.sync, AMD MFMA on CDNA2/3, AMD WMMA on
 * RDNA3), and a plain tiled SIMT kernel for everything else (f32, mixed
 * types, GPUs without matrix units). */

struct sdx__hip_gemm {
    const void *x; int xt;
    const void *w; int wt;
    const void *bias; int bt;
    const void *res; int rt;            /* added before y is stored (y's layout; may be y itself), or NULL */
    void *y; int yt;
    int64_t M, N, K;
    int64_t x_bstride, y_bstride;       /* conv: elements per image */
    int H, W, Wo, kh, kw, stride, pt, pl;
    int C;                              /* channels-last conv: input channels */
    int w_taps_last;                    /* SIMT conv: w is [O][kh][kw][C] (kept so by the backend) */
    int64_t geglu;                      /* linear: y = a * gelu(gate), y with this many columns (sdx__hip_w_row), or 0 */
    int split;                          /* matrix units: k split over this many blocks (1: none) ... */
    float *part;                        /* ... whose f32 sums go here, [split][image][y's layout] */
};

enum { SDX__HIP_A_ROWS = 0, SDX__HIP_A_CONV = 1, SDX__HIP_A_NHWC = 2 };

/* Element index of A[m, k] in x (image base applied by the caller), or -1
 * for a zero (padding, or past M/K). */
template <int AK>
static __device__ __forceinline__ int64_t sdx__hip_a_index(const sdx__hip_gemm &g, int64_t m, int64_t k) {
    if (m >= g.M || k >= g.K) return -1;
    if (AK == SDX__HIP_A_ROWS) return m * g.K + k;
    if (AK == SDX__HIP_A_NHWC) {
        int tap = (int)(k / g.C), c = (int)(k - (int64_t)tap * g.C), ky = tap / g.kw, kx = tap - ky * g.kw;
        int oy = (int)(m / g.Wo), ox = (int)(m - (int64_t)oy * g.Wo);
        int iy = oy * g.stride - g.pt + ky, ix = ox * g.stride - g.pl + kx;
        if (iy < 0 || iy >= g.H || ix < 0 || ix >= g.W) return -1;
        return ((int64_t)iy * g.W + ix) * g.C + c;
    }
    {
        int khw = g.kh * g.kw, kk = (int)k;
        int c = kk / khw, r = kk - c * khw, ky = r / g.kw, kx = r - ky * g.kw;
        int oy = (int)(m / g.Wo), ox = (int)(m - (int64_t)oy * g.Wo);
        int iy = oy * g.stride - g.pt + ky, ix = ox * g.stride - g.pl + kx;
        if (iy < 0 || iy >= g.H || ix < 0 || ix >= g.W) return -1;
        return ((int64_t)c * g.H + iy) * g.W + ix;
    }
}

/* Where W[n, k] of a convolution sits in its row of w: k itself, or
 * with w kept channels-last, tap k % taps of channel k / taps. */
template <int AK>
static __device__ __forceinline__ int64_t sdx__hip_w_index(const sdx__hip_gemm &g, int64_t k) {
    if (AK != SDX__HIP_A_CONV || !g.w_taps_last) return k;
    {   /* a convolution's K is below 2^31 (sdx__hip_conv2d_pad_op) */
        const int taps = g.kh * g.kw, kk = (int)k, c = kk / taps;
        return (int64_t)(kk - c * taps) * ((int)g.K / taps) + c;
    }
}

/* The row of w behind column n of the product: n itself, or for a fused
 * GEGLU (g.geglu = D columns of y, w with 2 D rows) columns in groups of
 * 16, the first 8 rows 8 (n / 16) + 0..7 (values) and the last 8 their
 * gates, D rows further: a thread's accumulators for a value and its gate
 * then sit in the same registers of two neighbouring 8-column tiles. */
static __device__ __forceinline__ int64_t sdx__hip_w_row(const sdx__hip_gemm &g, int64_t n) {
    return g.geglu ? n / 16 * 8 + n % 8 + n / 8 % 2 * g.geglu : n;
}

template <int AK>
static __device__ __forceinline__ void sdx__hip_gemm_out(const sdx__hip_gemm &g, int64_t z, int64_t m, int64_t n, float v) {
    const int64_t i = AK == SDX__HIP_A_ROWS ? m * g.N + n : z * g.y_bstride + n * g.M + m;
    float r;
    if (m >= g.M || n >= g.N) return;
    /* the residual as a select: a branch on it here crashed Debian's
     * clang 15 (gfx1100, 'AMDGPU Insert Delay ALU': a heap corruption) */
    r = g.res ? sdx__hip_ld(g.res, g.rt, i) : 0.0f;
    if (g.bias) v += sdx__hip_ld(g.bias, g.bt, n);
    sdx__hip_st(g.y, g.yt, i, g.res ? v + r : v);
}

static __device__ __forceinline__ const void *sdx__hip_offset(const void *p, int dt, int64_t elems) {
    return (const char *)p + elems * (dt == SDX__HIP_DT_F32 ? 4 : 2);
}

/* ---- SIMT kernel: 64 x 64 tile, 256 threads, 4 x 4 per thread ------------ */

#define SDX__HIP_SBM 64
#define SDX__HIP_SBN 64
#define SDX__HIP_SBK 16

template <int AK>
__global__ void __launch_bounds__(256) sdx__hip_k_gemm_simt(sdx__hip_gemm g) {
    sdx__hip_wait_prior();
    __shared__ float as[SDX__HIP_SBK][SDX__HIP_SBM + 4];
    __shared__ float bs[SDX__HIP_SBK][SDX__HIP_SBN + 4];
    const int t = (int)threadIdx.x;
    /* consecutive threads own consecutive outputs in y's order: columns n
     * for linear (y[m*N + n]), pixels m for conv (y[n*M + m]) */
    const int mi = AK == SDX__HIP_A_ROWS ? t / 16 : t % 16, ni = AK == SDX__HIP_A_ROWS ? t % 16 : t / 16;
    const int64_t m0 = (int64_t)blockIdx.x * SDX__HIP_SBM, n0 = (int64_t)blockIdx.y * SDX__HIP_SBN, z = blockIdx.z;
    const void *xb = sdx__hip_offset(g.x, g.xt, z * g.x_bstride);
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (int64_t k0 = 0; k0 < g.K; k0 += SDX__HIP_SBK) {
        for (int e = t; e < SDX__HIP_SBM * SDX__HIP_SBK; e += 256) {
            /* rows: consecutive threads walk k (contiguous); conv: pixels */
            int mm = AK == SDX__HIP_A_ROWS ? e / SDX__HIP_SBK : e % SDX__HIP_SBM;
            int kk = AK == SDX__HIP_A_ROWS ? e % SDX__HIP_SBK : e / SDX__HIP_SBM;
            int64_t ai = sdx__hip_a_index<AK>(g, m0 + mm, k0 + kk);
            int64_t n = n0 + e / SDX__HIP_SBK, k = k0 + e % SDX__HIP_SBK;
            as[kk][mm] = ai < 0 ? 0.0f : sdx__hip_ld(xb, g.xt, ai);
            bs[e % SDX__HIP_SBK][e / SDX__HIP_SBK] = (n < g.N && k < g.K) ? sdx__hip_ld(g.w, g.wt, n * g.K + sdx__hip_w_index<AK>(g, k)) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < SDX__HIP_SBK; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = as[kk][mi + 16 * i];
            for (int j = 0; j < 4; j++) b[j] = bs[kk][ni + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) sdx__hip_gemm_out<AK>(g, z, m0 + mi + 16 * i, n0 + ni + 16 * j, acc[i][j]);
}

/* ---- few rows: one warp per output column ---------------------------------- */
/* A linear of at most SDX__HIP_GEMV_ROWS rows (the timestep embedding's
 * projections: one row per image) is a pass over w: a tile kernel would
 * spend its k-steps waiting on loads for one useful row in 64. Each warp
 * takes one column n for the block's rows, its lanes W values of k at a
 * time (16-byte loads with W == 8), and sums across the warp at the end;
 * any mix of types, f32 accumulation. */
#define SDX__HIP_GEMV_ROWS 16
#define SDX__HIP_GEMV_BATCH 4

template <int W>
__global__ void __launch_bounds__(256) sdx__hip_k_gemv(sdx__hip_gemm g) {
    sdx__hip_wait_prior();
    const int lane = (int)threadIdx.x % SDX__HIP_WARP;
    const int64_t n = (int64_t)blockIdx.x * (256 / SDX__HIP_WARP) + (int)threadIdx.x / SDX__HIP_WARP;
    const int64_t rows = g.M < SDX__HIP_GEMV_ROWS ? g.M : SDX__HIP_GEMV_ROWS;
    float acc[SDX__HIP_GEMV_ROWS];
    if (n >= g.N) return;       /* the whole warp: no barrier follows */
    for (int r = 0; r < SDX__HIP_GEMV_ROWS; r++) acc[r] = 0.0f;
    /* SDX__HIP_GEMV_BATCH of a lane's loads of w at once, then their
     * products in order: one load and its products a pass waited a round
     * trip to memory each (1280 x 1280: 5 passes, 9.2 us for 3.3 MB) */
    for (int64_t k0 = (int64_t)lane * W; k0 < g.K; k0 += (int64_t)SDX__HIP_WARP * W * SDX__HIP_GEMV_BATCH) {
        float wv[SDX__HIP_GEMV_BATCH][W], xv[W];
#pragma unroll
        for (int u = 0; u < SDX__HIP_GEMV_BATCH; u++) {
            const int64_t k = k0 + (int64_t)u * SDX__HIP_WARP * W;
            if (k < g.K) sdx__hip_ldw<W>(g.w, g.wt, n * g.K + k, wv[u]);
        }
#pragma unroll
        for (int u = 0; u < SDX__HIP_GEMV_BATCH; u++) {
            const int64_t k = k0 + (int64_t)u * SDX__HIP_WARP * W;
            if (k >= g.K) break;
#pragma unroll
            for (int r = 0; r < SDX__HIP_GEMV_ROWS; r++) {
                if (r >= rows) break;
                sdx__hip_ldw<W>(g.x, g.xt, r * g.K + k, xv);
                for (int e = 0; e < W; e++) acc[r] = fmaf(xv[e], wv[u][e], acc[r]);
            }
        }
    }
    for (int r = 0; r < rows; r++) {
        const float v = sdx__hip_warp_sum(acc[r], SDX__HIP_WARP);
        if (lane == 0) sdx__hip_gemm_out<SDX__HIP_A_ROWS>(g, 0, r, n, v);
    }
}

/* ---- matrix-unit kernel: 128 x 128 or 64 x 64 tiles ----------------------- */
/* Operands are staged in shared memory as raw 16-bit values (x and w
 * share one half type HT, so no conversion happens on the way: the
 * products are exact and accumulate in f32). A block has
 * SDX__HIP_GEMM_THREADS threads (below); its warps (wavefronts of 64 on CDNA)
 * split the tile 2 x (warps/2); each multiplies its part with its
 * unit's instruction: NVIDIA mma.sync m16n8k16 fed by ldmatrix, AMD MFMA
 * on CDNA2/3 and WMMA on RDNA3 (16 x 16 x 16). The epilogue stages the
 * accumulators of half the tile at a time in shared memory and writes y
 * in its contiguous direction, eight values a thread (bias, narrowing).
 * A tile is BT x BT (outputs x channels), 128 or 64, and a block may
 * take one part of k (g.split parts, its f32 sums then written to g.part
 * for sdx__hip_k_split_sum): sdx__hip_gemm_plan chooses, so that the
 * UNet's deeper levels (a 32x32 latent with 640 channels is 80 tiles of
 * 128 for 132 SMs) still fill the GPU. */

/* k per step: 64 on NVIDIA (half the barriers and waits of 32 per
 * product; three stages of 128-tiles take 108 KiB, two blocks an SM on
 * Hopper), 32 on AMD, whose 64 KiB of LDS a block would not hold. The
 * host sizes the launch's shared memory from it: SDX__HIP_NVIDIA, not
 * SDX__HIP_MMA (sdx_hip_use checks that both passes agree). */
#if SDX__HIP_NVIDIA
#define SDX__HIP_MBK 64
#else
#define SDX__HIP_MBK 32
#endif
#define SDX__HIP_MLD (SDX__HIP_MBK + 8)    /* row pitch in halves: rows 16-byte aligned, 8 rows on distinct banks */
#define SDX__HIP_MSTAGES 3                 /* operand tiles in flight: this step's and the next two */

/* A block's threads, as the device code being compiled has them (the
 * host launches what sdx__hip_probe reads back from the device). Hopper
 * (sm_90, 228 KiB of shared memory an SM: two blocks of 108 KiB): four
 * warps, each 64 x 64 of a 128-tile. Eight warps of 64 x 32 load 1.5
 * times the ldmatrix bytes per product (192 against 128 a mma.sync), and
 * shared-memory bandwidth is what kept them near half the tensor cores'
 * rate; a warp's 32 independent products a k-slice (16 with eight) also
 * hide the loads' latency, which left 0.77 of four warps a scheduler
 * eligible. The registers allow it: at two blocks an SM a thread may
 * have 255. Ampere (164 KiB: one such block an SM) keeps eight warps,
 * AMD 256 threads (four wavefronts of 64 on CDNA). SDX_HIP_GEMM_THREADS
 * sets one for all (tools/gpu-session.sh compares 256 with the default). */
#if defined(SDX_HIP_GEMM_THREADS)
#if SDX_HIP_GEMM_THREADS != 128 && SDX_HIP_GEMM_THREADS != 256
#error "sdx_hip.h: SDX_HIP_GEMM_THREADS is 128 or 256"
#endif
#define SDX__HIP_GEMM_THREADS SDX_HIP_GEMM_THREADS
#elif SDX__HIP_MMA == 1 && (defined(SDX_HIP_SIM) || __CUDA_ARCH__ >= 900)
#define SDX__HIP_GEMM_THREADS 128
#else
#define SDX__HIP_GEMM_THREADS 256
#endif

/* A tile of BT rows (m) by BN columns (n): BN is BT but in Hopper's
 * 160-wide wgmma tiles. */
template <int BT, int NT = SDX__HIP_GEMM_THREADS, int BN = BT>
struct sdx__hip_tile {
    enum { THREADS = NT,
           STAGE = 2 * BT * SDX__HIP_MLD,                  /* halves of one stage: A, then W (the mma kernel's) */
           SMEM = SDX__HIP_MSTAGES * STAGE * 2,            /* bytes */
           TPR = SDX__HIP_MBK / 8, RPP = THREADS / TPR,    /* 16-byte copies: threads a row, rows a pass */
           PASSES = BT / RPP, W_PASSES = BN / RPP,         /* of A's rows, of W's */
           KL = THREADS / BT, VALS = SDX__HIP_MBK / KL,    /* a convolution's gather: k-lanes, values a thread */
           /* epilogue staging pitches in floats, off the banks: linear
            * [BT/2 rows][BN columns], convolution [BN channels][BT/2 pixels] */
           CPR = BN + 8, CPC = BT / 2 + 4,
           /* the epilogue's chunks of 8 values: a linear's a row, and the
            * rows a pass of the block takes (all of its threads but the
            * last NT % OUT_TPR) */
           OUT_TPR = BN / 8, OUT_RPP = NT / OUT_TPR,
           /* the most chunks a thread takes in half a tile: a linear's
            * passes, a convolution's chunks of 8 pixels */
           EPI_PASSES = (BT / 2 + OUT_RPP - 1) / OUT_RPP, EPI_PIXEL_CHUNKS = (BT / 2 * BN / 8 + NT - 1) / NT,
           EPI_ITERS = EPI_PASSES > EPI_PIXEL_CHUNKS ? EPI_PASSES : EPI_PIXEL_CHUNKS };
};

#if SDX__HIP_MMA == 2 || SDX__HIP_MMA == 3
typedef _Float16 sdx__hip_h4 __attribute__((ext_vector_type(4)));
typedef short    sdx__hip_s4 __attribute__((ext_vector_type(4)));
typedef float    sdx__hip_f4 __attribute__((ext_vector_type(4)));
typedef _Float16 sdx__hip_h16 __attribute__((ext_vector_type(16)));
typedef short    sdx__hip_s16 __attribute__((ext_vector_type(16)));
typedef float    sdx__hip_f8 __attribute__((ext_vector_type(8)));
#endif

/* Each k-step's operands: BT x MBK of A and of W, BT*MBK/THREADS values
 * of each per thread. VW (K a multiple of 8, operands 16-byte aligned: every
 * UNet and VAE layer but a 4-channel first convolution): W, and a
 * linear's or a channels-last convolution's A, rows contiguous along k,
 * stream into the stage two steps ahead as asynchronous 16-byte copies
 * (thread t: rows t/TPR + RPP j at k + 8 (t % TPR)) while the matrix
 * units work on this one. A convolution's A
 * is a gather (sdx__hip_gather): thread t keeps output pixel m0 + t % BT
 * and takes k + t/BT + KL i into registers (KL = THREADS/BT); the loads fly
 * during one step's products and are stored into their stage at the
 * next. Without VW every value is loaded straight into one stage, step by
 * step. */
template <int BT>
struct sdx__hip_mma_regs {
    uint32_t a[sdx__hip_tile<BT>::VALS / 2];     /* a convolution's gathered A, two values a register */
};

/* A thread's output pixel, fixed for the whole product: which rows and
 * columns of its kh x kw window lie inside the image (bit ky of rows, kx
 * of cols; windows up to 32 x 32), and the input offset of the window's
 * corner (32-bit: one image of x has under 2^31 values, which the launch
 * checks). A value's offset then steps with k instead of being
 * recomputed: a few integer operations a value, not divisions and
 * 64-bit products. */
struct sdx__hip_gather {
    int corner;             /* (oy*s - pt) * W + ox*s - pl */
    unsigned rows, cols;    /* 0 for a pixel past M */
};

static __device__ __forceinline__ sdx__hip_gather sdx__hip_gather_at(const sdx__hip_gemm &g, int64_t m) {
    sdx__hip_gather r = { 0, 0u, 0u };
    if (m < g.M) {
        const int oy = (int)(m / g.Wo), ox = (int)(m - (int64_t)oy * g.Wo);
        const int iy0 = oy * g.stride - g.pt, ix0 = ox * g.stride - g.pl;
        for (int i = 0; i < g.kh; i++) r.rows |= (unsigned)(iy0 + i >= 0 && iy0 + i < g.H) << i;
        for (int i = 0; i < g.kw; i++) r.cols |= (unsigned)(ix0 + i >= 0 && ix0 + i < g.W) << i;
        r.corner = iy0 * g.W + ix0;
    }
    return r;
}

/* A channels-last convolution's rows of one thread (t/TPR + RPP j, j <
 * PASSES; sdx__hip_mma_issue), fixed for the whole product: the input
 * row and column of each window's corner as two 16-bit halves of one
 * register (rows high; the launch keeps H and W below 2^14), -2^15 for a
 * pixel past M, so that it falls outside the image. */
template <int BT, int NT = SDX__HIP_GEMM_THREADS>
struct sdx__hip_pixels {
    int corner[sdx__hip_tile<BT, NT>::PASSES];
};

static __device__ __forceinline__ int sdx__hip_corner_y(int c) { return c >> 16; }
static __device__ __forceinline__ int sdx__hip_corner_x(int c) { return (int)(int16_t)(c & 0xffff); }

template <int AK, int BT, int NT = SDX__HIP_GEMM_THREADS>
static __device__ __forceinline__ sdx__hip_pixels<BT, NT> sdx__hip_pixels_at(const sdx__hip_gemm &g, int m0, int t) {
    typedef sdx__hip_tile<BT, NT> T;
    sdx__hip_pixels<BT, NT> p;
#pragma unroll
    for (int j = 0; j < T::PASSES; j++) {
        const int m = m0 + t / T::TPR + T::RPP * j;
        const int oy = AK == SDX__HIP_A_NHWC && m < g.M ? (int)(m / g.Wo) : 0, ox = (int)(m - (int64_t)oy * g.Wo);
        const int iy0 = AK == SDX__HIP_A_NHWC && m < g.M ? oy * g.stride - g.pt : -32768;
        const int ix0 = AK == SDX__HIP_A_NHWC && m < g.M ? ox * g.stride - g.pl : -32768;
        p.corner[j] = (int)((unsigned)iy0 << 16 | ((unsigned)ix0 & 0xffffu));
    }
    return p;
}

template <int BT>
static __device__ __forceinline__ void sdx__hip_mma_gather(const sdx__hip_gemm &g, const uint16_t *xb, const sdx__hip_gather &at, int64_t k0,
                                                           int t, sdx__hip_mma_regs<BT> *r) {
    enum { KL = sdx__hip_tile<BT>::KL };
    const int khw = g.kh * g.kw, hw = g.H * g.W;
    int k = (int)k0 + t / BT;
    int c = k / khw, rest = k - c * khw, ky = rest / g.kw, kx = rest - ky * g.kw;
    int off = at.corner + c * hw + ky * g.W + kx;
#pragma unroll
    for (int i = 0; i < sdx__hip_tile<BT>::VALS; i++) {
        const uint32_t v = (k < g.K && (at.rows >> ky & at.cols >> kx & 1u)) ? xb[off] : (uint16_t)0;
        r->a[i / 2] = i % 2 ? r->a[i / 2] | v << 16 : v;
        k += KL;
        kx += KL;
        off += KL;
        while (kx >= g.kw) {
            kx -= g.kw;
            off += g.W - g.kw;
            if (++ky == g.kh) {
                ky = 0;
                off += hw - g.kh * g.W;
            }
        }
    }
}

/* Hopper's wgmma tiles (sdx__hip_k_gemm_wgmma) stage each operand in
 * the 128-byte swizzle wgmma reads (device.cu): row r's 64 k (128 bytes)
 * at 128 r, its 16-byte chunk c in place c ^ (r % 8), in atoms of 8 rows
 * (SBO 1024 bytes) from a 1024-byte boundary, so that a row's copies and
 * the 8 rows of any chunk fall on distinct banks. (In core matrices
 * without swizzling, wgmma's own reads conflicted: on an H200 the kernel
 * ran at half the speed; docs/PERFORMANCE.md.) */
#define SDX__HIP_WG_SBO 1024

/* Where value kc (a multiple of 8) of a staged row goes, in halves: rows
 * of pitch SDX__HIP_MLD, or (WG) wgmma's swizzled rows. */
template <int WG>
static __device__ __forceinline__ int sdx__hip_staged(int row, int kc) {
    return WG ? sdx__hip_swizzled(row, kc / 8) : row * SDX__HIP_MLD + kc;      /* WG: 64 k a row (SDX__HIP_MBK) */
}

template <int AK, int BT, int NT = SDX__HIP_GEMM_THREADS, int WG = 0, int BN = BT>
static __device__ __forceinline__ void sdx__hip_mma_issue(const sdx__hip_gemm &g, const uint16_t *xb, const uint16_t *wb, int m0,
                                                          int n0, int64_t k0, int t, const sdx__hip_pixels<BT, NT> &px, uint16_t *as,
                                                          uint16_t *bs) {
    typedef sdx__hip_tile<BT, NT, BN> T;
    static_assert(BN >= BT, "W's passes cover A's");
    const int kc = (t % T::TPR) * 8;
    const int64_t k = k0 + kc;                  /* K % 8 == 0: k < K means all 8 are */
    /* channels-last: the 8 values share one tap (C % 8 == 0) */
    const int tap = AK == SDX__HIP_A_NHWC ? (int)k / g.C : 0, ky = AK == SDX__HIP_A_NHWC ? tap / g.kw : 0;
    const int kx = tap - ky * g.kw, c = (int)k - tap * g.C;
#pragma unroll
    for (int j = 0; j < T::W_PASSES; j++) {
        const int row = t / T::TPR + T::RPP * j;
        const int n = n0 + row, m = m0 + row;
        const int wok = n < g.N && k < g.K, aok = m < g.M && k < g.K;
        const int at = sdx__hip_staged<WG>(row, kc);
        sdx__hip_cp_async16(bs + at, wb + (wok ? sdx__hip_w_row(g, n) * g.K + k : 0), wok);
        if (j >= T::PASSES) continue;
        if (AK == SDX__HIP_A_ROWS) sdx__hip_cp_async16(as + at, xb + (aok ? m * g.K + k : 0), aok);
        if (AK == SDX__HIP_A_NHWC) {
            const int corner = px.corner[j < T::PASSES ? j : 0];     /* j < PASSES: the select is for compilers' bounds checks */
            const int iy = sdx__hip_corner_y(corner) + ky, ix = sdx__hip_corner_x(corner) + kx;
            const int in = k < g.K && (unsigned)iy < (unsigned)g.H && (unsigned)ix < (unsigned)g.W;
            sdx__hip_cp_async16(as + at, xb + (in ? (iy * g.W + ix) * g.C + c : 0), in);
        }
    }
}

template <int BT>
static __device__ __forceinline__ void sdx__hip_mma_put_gathered(uint16_t *as, int t, const sdx__hip_mma_regs<BT> *r) {
#pragma unroll
    for (int i = 0; i < sdx__hip_tile<BT>::VALS; i++)
        as[(t % BT) * SDX__HIP_MLD + t / BT + sdx__hip_tile<BT>::KL * i] = (uint16_t)(r->a[i / 2] >> 16 * (i % 2));
}

/* Step `step`'s operands into their stage, as far as they are loaded
 * asynchronously (a convolution's A is put there from registers), if it
 * comes before `end`. */
template <int AK, int BT>
static __device__ __forceinline__ void sdx__hip_mma_prefetch(const sdx__hip_gemm &g, const uint16_t *xb, const uint16_t *wb, int m0,
                                                             int n0, int step, int end, int t, const sdx__hip_pixels<BT> &px,
                                                             uint16_t *smem) {
    uint16_t *st = smem + (step % SDX__HIP_MSTAGES) * sdx__hip_tile<BT>::STAGE;
    if (step < end)
        sdx__hip_mma_issue<AK, BT>(g, xb, wb, m0, n0, (int64_t)step * SDX__HIP_MBK, t, px, st, st + BT * SDX__HIP_MLD);
    sdx__hip_cp_commit();       /* past the end an empty group keeps the count */
}

template <int AK, int BT>
static __device__ __forceinline__ void sdx__hip_mma_load_direct(const sdx__hip_gemm &g, const uint16_t *xb, const uint16_t *wb, int64_t m0,
                                                                int64_t n0, int64_t k0, int t, uint16_t *as, uint16_t *bs) {
    for (int e = t; e < BT * SDX__HIP_MBK; e += sdx__hip_tile<BT>::THREADS) {
        int mm = AK == SDX__HIP_A_ROWS ? e / SDX__HIP_MBK : e % BT;
        int kk = AK == SDX__HIP_A_ROWS ? e % SDX__HIP_MBK : e / BT;
        int64_t ai = sdx__hip_a_index<AK>(g, m0 + mm, k0 + kk);
        int64_t n = n0 + e / SDX__HIP_MBK, k = k0 + e % SDX__HIP_MBK;
        as[mm * SDX__HIP_MLD + kk] = ai < 0 ? (uint16_t)0 : xb[ai];
        bs[(e / SDX__HIP_MBK) * SDX__HIP_MLD + e % SDX__HIP_MBK] = (n < g.N && k < g.K) ? wb[n * g.K + k] : (uint16_t)0;
    }
}

/* All eight values from element i of p on are there and 16-byte aligned. */
static __device__ __forceinline__ int sdx__hip_whole8(const void *p, int dt, int64_t i, int count) {
    return count == 8 && ((uintptr_t)p + (uintptr_t)i * (dt == SDX__HIP_DT_F32 ? 4u : 2u)) % 16 == 0;
}

/* `count` (0..8) consecutive values of y from element i on, each with the
 * bias of its column: as 16-byte stores when all eight are there and
 * aligned. */
static __device__ __forceinline__ void sdx__hip_gemm_store8(void *y, int yt, int64_t i, const float v[8], int count) {
    if (sdx__hip_whole8(y, yt, i, count)) sdx__hip_stw<8>(y, yt, i, v);
    else    /* constant indices keep v in registers */
#pragma unroll
        for (int e = 0; e < 8; e++)
            if (e < count) sdx__hip_st(y, yt, i + e, v[e]);
}

/* v[0, count) += the residual from its element i on (16 bytes at a time
 * where all eight are there and aligned). */
static __device__ __forceinline__ void sdx__hip_add_res8(const void *res, int rt, int64_t i, float v[8], int count) {
    if (sdx__hip_whole8(res, rt, i, count)) {
        float r[8];
        sdx__hip_ldw<8>(res, rt, i, r);
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] += r[e];
    } else {
#pragma unroll
        for (int e = 0; e < 8; e++)
            if (e < count) v[e] += sdx__hip_ld(res, rt, i + e);
    }
}

/* `count` (0..8) values of a bias from element i on, 0 past them: 16
 * bytes at a time where all eight are there and aligned. */
static __device__ __forceinline__ void sdx__hip_bias8(const void *bias, int bt, int64_t i, float v[8], int count) {
    if (bias && sdx__hip_whole8(bias, bt, i, count)) {
        sdx__hip_ldw<8>(bias, bt, i, v);
    } else {
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = bias && e < count ? sdx__hip_ld(bias, bt, i + e) : 0.0f;
    }
}

/* Eight staged floats from cs[i] on (i a multiple of 4: 16-byte reads). */
static __device__ __forceinline__ void sdx__hip_staged8(const float *cs, int i, float v[8]) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const sdx__hip_v8 q = sdx__hip_ld8((const uint16_t *)(cs + i + 4 * h));
#pragma unroll
        for (int e = 0; e < 4; e++) v[4 * h + e] = __uint_as_float(q.w[e]);
    }
}

/* Where pass `it` of thread t (of NT) fetched the residual's chunk from
 * element i (`count` values) in pre, or NULL: only whole, aligned chunks
 * of a half type are fetched (sdx__hip_mma_write_half's pre). */
template <int NT>
static __device__ __forceinline__ uint16_t *sdx__hip_res_chunk(uint16_t *pre, const sdx__hip_gemm &g, const void *res, int64_t i, int count,
                                                               int it, int t) {
    return pre && g.rt != SDX__HIP_DT_F32 && sdx__hip_whole8(res, g.rt, i, count) ? pre + 8 * (NT * it + t) : NULL;
}

/* Writes BT/2 rows of the tile from m0 on from the staging: a linear's
 * cs[row][column] (pitch CPR) along n, a convolution's cs[column][row]
 * (pitch CPC) along the pixels m; into y (g.y with bias and residual, or
 * a split's partial sums, f32 with neither: `bias` and `res` then NULL).
 * A linear's thread keeps its 8 columns from row to row (the block takes
 * OUT_RPP whole rows a pass), so it reads their bias once.
 * pre (SDX__HIP_EPI_PREFETCH): where this thread's chunks of a half-type
 * residual were fetched, the chunk of its pass `it` at pre + 8 (NT it +
 * t); FETCH fetches them there (asynchronous 16-byte copies, the caller
 * waits) instead of writing, walking the same chunks, so that all of a
 * thread's residual loads are in flight at once instead of one a pass
 * behind the stores (which may alias them). A chunk that is not whole
 * and aligned is read from res as it is written. */
template <int AK, int BT, int NT = SDX__HIP_GEMM_THREADS, int BN = BT, int FETCH = 0>
static __device__ void sdx__hip_mma_write_half(const sdx__hip_gemm &g, void *y, int yt, const void *bias, const void *res, int64_t z,
                                               int64_t m0, int64_t n0, const float *cs, int t, uint16_t *pre = NULL) {
    typedef sdx__hip_tile<BT, NT, BN> T;
    enum { CPR = T::CPR, CPC = T::CPC, GATES = BN / 16, GATE_RPP = NT / GATES };
    if (FETCH && (!res || !pre || g.geglu)) return;
    if (AK == SDX__HIP_A_ROWS && g.geglu) {
        /* a fused GEGLU (never split): 8 outputs j a chunk from values
         * cs[r][16 u + e] and gates cs[r][16 u + 8 + e]; D % 8 == 0 */
        const int u = t % GATES;
        const int64_t j = n0 / 2 + 8 * u;
        const int columns = j < g.geglu ? 8 : 0;
        float ba[8], bg[8];
        if (t >= GATE_RPP * GATES) return;
        sdx__hip_bias8(bias, g.bt, j, ba, columns);
        sdx__hip_bias8(bias, g.bt, g.geglu + j, bg, columns);
        for (int r = t / GATES; r < BT / 2; r += GATE_RPP) {
            const int64_t m = m0 + r;
            float a[8], gate[8], v[8];
            sdx__hip_staged8(cs, r * CPR + 16 * u, a);
            sdx__hip_staged8(cs, r * CPR + 16 * u + 8, gate);
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] = (a[e] + ba[e]) * sdx__hip_gelu(gate[e] + bg[e]);
            sdx__hip_gemm_store8(y, yt, m * g.geglu + j, v, m < g.M ? columns : 0);
        }
        return;
    }
    if (AK == SDX__HIP_A_ROWS) {
        const int col = t % T::OUT_TPR * 8;
        const int64_t n = n0 + col;
        const int columns = n < g.N ? (int)(g.N - n < 8 ? g.N - n : 8) : 0;
        float b[8];
        if (t >= T::OUT_RPP * T::OUT_TPR) return;
        if (!FETCH) sdx__hip_bias8(bias, g.bt, n, b, columns);
        for (int r = t / T::OUT_TPR, it = 0; r < BT / 2; r += T::OUT_RPP, it++) {
            const int64_t m = m0 + r, i = m * g.N + n;
            const int count = m < g.M ? columns : 0;
            uint16_t *chunk = sdx__hip_res_chunk<NT>(pre, g, res, i, count, it, t);
            float v[8];
            if (FETCH) {
                if (chunk) sdx__hip_cp_async16(chunk, (const uint16_t *)res + i, 1);
                continue;
            }
            sdx__hip_staged8(cs, r * CPR + col, v);
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] += b[e];
            if (res) sdx__hip_add_res8(chunk ? chunk : res, g.rt, chunk ? 0 : i, v, count);
            sdx__hip_gemm_store8(y, yt, i, v, count);
        }
    } else {
        for (int c = t, it = 0; c < BT / 2 * BN / 8; c += NT, it++) {
            const int col = c / (BT / 16), r = c % (BT / 16) * 8;
            const int64_t m = m0 + r, n = n0 + col, i = z * g.y_bstride + n * g.M + m;
            const int count = m < g.M && n < g.N ? (int)(g.M - m < 8 ? g.M - m : 8) : 0;
            uint16_t *chunk = sdx__hip_res_chunk<NT>(pre, g, res, i, count, it, t);
            if (FETCH) {
                if (chunk) sdx__hip_cp_async16(chunk, (const uint16_t *)res + i, 1);
                continue;
            }
            const float b = n < g.N && bias ? sdx__hip_ld(bias, g.bt, n) : 0.0f;
            float v[8];
            sdx__hip_staged8(cs, col * CPC + r, v);
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] += b;
            if (res) sdx__hip_add_res8(chunk ? chunk : res, g.rt, chunk ? 0 : i, v, count);
            sdx__hip_gemm_store8(y, yt, i, v, count);
        }
    }
}

/* A staged accumulator's place in the epilogue's staging: a linear's
 * [row][column] (pitch CPR), a convolution's [column][row] (pitch CPC). */
template <int AK, int BT, int BN = BT>
static __device__ __forceinline__ int sdx__hip_staged_acc(int r, int c) {
    typedef sdx__hip_tile<BT, SDX__HIP_GEMM_THREADS, BN> T;
    return AK == SDX__HIP_A_ROWS ? r * T::CPR + c : c * T::CPC + r;
}

/* Accumulators (r, c) and (r, c + 1), c even, into the staging: a
 * linear's as one 8-byte store (a warp's then fall on distinct banks). */
template <int AK, int BT, int BN = BT>
static __device__ __forceinline__ void sdx__hip_stage_pair(float *cs, int r, int c, float v0, float v1) {
    if (AK == SDX__HIP_A_ROWS) {
        sdx__hip_st_pair(cs, SDX__HIP_DT_F32, sdx__hip_staged_acc<AK, BT, BN>(r, c), v0, v1);
    } else {
        cs[sdx__hip_staged_acc<AK, BT, BN>(r, c)] = v0;
        cs[sdx__hip_staged_acc<AK, BT, BN>(r, c + 1)] = v1;
    }
}

/* Half `half` of the tile from the staging into y (bias, residual), or as
 * f32 sums of this block's part of k when split (no bias: sdx__hip_k_split_sum
 * adds them). */
template <int AK, int BT, int NT, int BN = BT, int FETCH = 0>
static __device__ void sdx__hip_mma_write_out(const sdx__hip_gemm &g, int64_t z, int64_t m0, int64_t n0, int half, const float *cs, int t,
                                              uint16_t *pre = NULL) {
    if (g.split == 1)
        sdx__hip_mma_write_half<AK, BT, NT, BN, FETCH>(g, g.y, g.yt, g.bias, g.res, z, m0 + half * (BT / 2), n0, cs, t, pre);
    else if (!FETCH)
        sdx__hip_mma_write_half<AK, BT, NT, BN>(g, g.part + (int64_t)(blockIdx.z % g.split) * gridDim.z / g.split * g.y_bstride,
                                            SDX__HIP_DT_F32, NULL, NULL, z, m0 + half * (BT / 2), n0, cs, t);
}

/* This block's k-steps [first, end): all of them, or its part of a split
 * (blockIdx.z % g.split; K < 2^31: the launch checks). */
struct sdx__hip_ksteps {
    int first, end;
};

static __device__ __forceinline__ sdx__hip_ksteps sdx__hip_block_ksteps(const sdx__hip_gemm &g) {
    const int all = (int)((g.K + SDX__HIP_MBK - 1) / SDX__HIP_MBK), per = (all + g.split - 1) / g.split;
    const int first = (int)(blockIdx.z % g.split) * per;
    const sdx__hip_ksteps r = { first, first + per < all ? first + per : all };
    return r;
}

/* NVIDIA: two blocks an SM (at most 128 registers); AMD: one. */
#if SDX__HIP_NVIDIA
#define SDX__HIP_GEMM_MIN_BLOCKS 2
#else
#define SDX__HIP_GEMM_MIN_BLOCKS 1
#endif

template <int AK, int HT, int VW, int BT>
__global__ void __launch_bounds__(SDX__HIP_GEMM_THREADS, SDX__HIP_GEMM_MIN_BLOCKS) sdx__hip_k_gemm_mma(sdx__hip_gemm g) {
    sdx__hip_wait_prior();
#if SDX__HIP_MMA != 0
    typedef sdx__hip_tile<BT> T;
    enum { WARPS = T::THREADS / SDX__HIP_WARP, WARPS_N = WARPS / 2, WTM = BT / 2, WTN = BT / WARPS_N, FM = WTM / 16, FN = WTN / 16 };
    SDX__HIP_DYNAMIC_SMEM(uint16_t, smem);       /* T::SMEM bytes; the epilogue's staging reuses them */
    float *cs = (float *)smem;
    const int t = (int)threadIdx.x, warp = t / SDX__HIP_WARP, lane = t % SDX__HIP_WARP;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int m0 = (int)blockIdx.x * BT, n0 = (int)blockIdx.y * BT, z = (int)(blockIdx.z / g.split);    /* M, N < 2^31: the launch checks */
    const sdx__hip_ksteps ks = sdx__hip_block_ksteps(g);
    const int first = ks.first, steps = ks.end;
    const uint16_t *xb = (const uint16_t *)g.x + z * g.x_bstride, *wb = (const uint16_t *)g.w;
#if SDX__HIP_MMA == 1
    float acc[FM][2 * FN][4];       /* m16 x n8 tiles */
    for (int i = 0; i < FM; i++)
        for (int j = 0; j < 2 * FN; j++)
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
#elif SDX__HIP_MMA == 2
    sdx__hip_f4 acc[FM][FN];
    for (int i = 0; i < FM; i++)
        for (int j = 0; j < FN; j++) acc[i][j] = sdx__hip_f4{ 0.0f, 0.0f, 0.0f, 0.0f };
#else
    sdx__hip_f8 acc[FM][FN];
    for (int i = 0; i < FM; i++)
        for (int j = 0; j < FN; j++)
            for (int r = 0; r < 8; r++) acc[i][j][r] = 0.0f;
#endif
    sdx__hip_mma_regs<BT> gathered;
    const sdx__hip_gather at = AK == SDX__HIP_A_CONV && VW ? sdx__hip_gather_at(g, m0 + t % BT) : sdx__hip_gather{ 0, 0u, 0u };
    const sdx__hip_pixels<BT> px = sdx__hip_pixels_at<AK, BT>(g, m0, t);
    if (VW) {
        for (int s = first; s < first + SDX__HIP_MSTAGES - 1; s++) {
            if (AK == SDX__HIP_A_CONV && s < steps) {
                sdx__hip_mma_gather(g, xb, at, (int64_t)s * SDX__HIP_MBK, t, &gathered);
                sdx__hip_mma_put_gathered<BT>(smem + (s % SDX__HIP_MSTAGES) * T::STAGE, t, &gathered);
            }
            sdx__hip_mma_prefetch<AK, BT>(g, xb, wb, m0, n0, s, steps, t, px, smem);
        }
        if (AK == SDX__HIP_A_CONV && first + SDX__HIP_MSTAGES - 1 < steps)
            sdx__hip_mma_gather(g, xb, at, (int64_t)(first + SDX__HIP_MSTAGES - 1) * SDX__HIP_MBK, t, &gathered);
    }
    for (int step = first; step < steps; step++) {
        const uint16_t *as, *bs;
        if (VW) {
            /* this step's group landed (the newer ones may fly); after the
             * barrier every thread's copies are visible and every warp is
             * done with the previous step's stage, which the step
             * MSTAGES - 1 ahead now fills */
            const int ahead = step + SDX__HIP_MSTAGES - 1;
            sdx__hip_cp_wait<SDX__HIP_MSTAGES - 2>();
            __syncthreads();
            if (AK == SDX__HIP_A_CONV && ahead < steps) {
                sdx__hip_mma_put_gathered<BT>(smem + (ahead % SDX__HIP_MSTAGES) * T::STAGE, t, &gathered);
                if (ahead + 1 < steps) sdx__hip_mma_gather(g, xb, at, (int64_t)(ahead + 1) * SDX__HIP_MBK, t, &gathered);
            }
            sdx__hip_mma_prefetch<AK, BT>(g, xb, wb, m0, n0, ahead, steps, t, px, smem);
            as = smem + (step % SDX__HIP_MSTAGES) * T::STAGE;
        } else {
            __syncthreads();
            sdx__hip_mma_load_direct<AK, BT>(g, xb, wb, m0, n0, (int64_t)step * SDX__HIP_MBK, t, smem, smem + BT * SDX__HIP_MLD);
            __syncthreads();
            as = smem;
        }
        bs = as + BT * SDX__HIP_MLD;
#pragma unroll
        for (int ks = 0; ks < SDX__HIP_MBK; ks += 16) {
#if SDX__HIP_MMA == 1
            /* A: ldmatrix rows lane % 16 at k + 8 (lane / 16): a[0..3] of
             * one m16 tile; W: rows lane % 8 + 8 (lane / 16) at k + 8 ((lane
             * / 8) % 2): b[0..1] of two n8 tiles */
            uint32_t af[FM][4], bf[2 * FN][2];
            for (int i = 0; i < FM; i++)
                sdx__hip_ldsm4<0>(af[i], as + (wm * WTM + i * 16 + lane % 16) * SDX__HIP_MLD + ks + (lane / 16) * 8);
            for (int j = 0; j < FN; j++) {
                uint32_t r[4];
                sdx__hip_ldsm4<0>(r, bs + (wn * WTN + j * 16 + lane % 8 + (lane / 16) * 8) * SDX__HIP_MLD + ks + (lane / 8) % 2 * 8);
                bf[2 * j][0] = r[0]; bf[2 * j][1] = r[1]; bf[2 * j + 1][0] = r[2]; bf[2 * j + 1][1] = r[3];
            }
            for (int i = 0; i < FM; i++)
                for (int j = 0; j < 2 * FN; j++) sdx__hip_mma16816<HT>(acc[i][j], af[i], bf[j]);
#elif SDX__HIP_MMA == 2
            /* v_mfma_f32_16x16x16: lane l holds A[l%16][4*(l/16) + 0..3],
             * B[4*(l/16) + 0..3][l%16] and D[4*(l/16) + 0..3][l%16] */
            const int row = lane % 16, kq = ks + 4 * (lane / 16);
            for (int i = 0; i < FM; i++) {
                const uint16_t *pa = as + (wm * WTM + i * 16 + row) * SDX__HIP_MLD + kq;
                for (int j = 0; j < FN; j++) {
                    const uint16_t *pb = bs + (wn * WTN + j * 16 + row) * SDX__HIP_MLD + kq;
                    if (HT == SDX__HIP_DT_F16) {
                        sdx__hip_h4 a, b;
                        for (int r = 0; r < 4; r++) { a[r] = __builtin_bit_cast(_Float16, pa[r]); b[r] = __builtin_bit_cast(_Float16, pb[r]); }
                        acc[i][j] = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc[i][j], 0, 0, 0);
                    } else {
                        sdx__hip_s4 a, b;
                        for (int r = 0; r < 4; r++) { a[r] = (short)pa[r]; b[r] = (short)pb[r]; }
                        acc[i][j] = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, acc[i][j], 0, 0, 0);
                    }
                }
            }
#else
            /* v_wmma_f32_16x16x16 (wave32): lane l holds row l%16 of A and
             * column l%16 of B over all 16 k; D[2*r + l/16][l%16], r < 8 */
            const int row = lane % 16;
            for (int i = 0; i < FM; i++) {
                const uint16_t *pa = as + (wm * WTM + i * 16 + row) * SDX__HIP_MLD + ks;
                for (int j = 0; j < FN; j++) {
                    const uint16_t *pb = bs + (wn * WTN + j * 16 + row) * SDX__HIP_MLD + ks;
                    if (HT == SDX__HIP_DT_F16) {
                        sdx__hip_h16 a, b;
                        for (int r = 0; r < 16; r++) { a[r] = __builtin_bit_cast(_Float16, pa[r]); b[r] = __builtin_bit_cast(_Float16, pb[r]); }
                        acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, acc[i][j]);
                    } else {
                        sdx__hip_s16 a, b;
                        for (int r = 0; r < 16; r++) { a[r] = (short)pa[r]; b[r] = (short)pb[r]; }
                        acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, acc[i][j]);
                    }
                }
            }
#endif
        }
    }
    /* The epilogue: rows 0-63 of the tile (warps wm = 0), then 64-127. The
     * first barrier also ends every warp's reads of the last stage. */
    for (int half = 0; half < 2; half++) {
        __syncthreads();
        if (wm == half) {
#if SDX__HIP_MMA == 1
            for (int i = 0; i < FM; i++)
                for (int j = 0; j < 2 * FN; j++)
                    for (int e = 0; e < 4; e += 2)
                        sdx__hip_stage_pair<AK, BT>(cs, i * 16 + lane / 4 + 8 * (e / 2), wn * WTN + j * 8 + 2 * (lane % 4), acc[i][j][e],
                                                    acc[i][j][e + 1]);
#else
            for (int i = 0; i < FM; i++)
                for (int j = 0; j < FN; j++)
#if SDX__HIP_MMA == 2
                    for (int e = 0; e < 4; e++) {
                        const int r = i * 16 + 4 * (lane / 16) + e, c = wn * WTN + j * 16 + lane % 16;
#else
                    for (int e = 0; e < 8; e++) {
                        const int r = i * 16 + 2 * e + lane / 16, c = wn * WTN + j * 16 + lane % 16;
#endif
                        cs[sdx__hip_staged_acc<AK, BT>(r, c)] = acc[i][j][e];
                    }
#endif
        }
        __syncthreads();
        sdx__hip_mma_write_out<AK, BT, T::THREADS>(g, z, m0, n0, half, cs, t);
    }
#else
    (void)g;    /* no matrix unit in this code object: the host never launches it */
#endif
}

/* ---- Hopper: warpgroup matrix instructions (sm_90a) --------------------- */
/* The product of sdx__hip_k_gemm_mma's 128-tiles for a linear or a
 * channels-last convolution (16-byte operand rows), on wgmma, in tiles of
 * 128 rows by BN = 128 or 160 columns: two warpgroups (256 threads), each
 * 64 rows of the tile by all BN columns, four m64nBNk16 a k-step of 64
 * that read A and W from the stage themselves (no ldmatrix, no operand
 * fragments in registers). 160 columns divide every width of the SD
 * UNets' products (320 to 10240) and leave a GPU of 132 SMs fewer idle at
 * the end: SDXL's 32x32 level, 2048 rows by 1280 columns, is 128 such
 * tiles (160 of 128). The copies for step s + STAGES - 2 go out once step
 * s's products are issued, while they and step s - 1's run (one group of
 * products in flight past the wait): a stage is rewritten only after the
 * barrier that follows every warpgroup's wait for the products that read
 * it. Same loader, same epilogue (and split k) as the mma kernel, so the
 * same bits up to the order of the tensor cores' sums. */
#define SDX__HIP_WG_THREADS 256
/* Stages: step s's, step s - 1's (its products may still read it) and
 * S - 2 of copies in flight, one block an SM. SDX_HIP_WG_STAGES picks
 * another count than 6 (3 to 6). */
#if defined(SDX_HIP_WG_STAGES)
#if SDX_HIP_WG_STAGES < 3 || SDX_HIP_WG_STAGES > 6
#error "sdx_hip.h: SDX_HIP_WG_STAGES is 3 to 6"
#endif
#define SDX__HIP_WG_STAGES SDX_HIP_WG_STAGES
#else
#define SDX__HIP_WG_STAGES 6
#endif
/* 160-wide tiles where N allows them (SDX_HIP_WG_WIDE=0: 128 only). */
#if defined(SDX_HIP_WG_WIDE)
#define SDX__HIP_WG_WIDE SDX_HIP_WG_WIDE
#else
#define SDX__HIP_WG_WIDE 1
#endif

/* The Hopper kernels' epilogue fetches a half-type residual into shared
 * memory, every chunk of a thread at once, before it stages the
 * accumulators (sdx__hip_mma_write_half's pre): SDX_HIP_EPI_PREFETCH=1
 * (the simulator's builds: on, so their tests run it; elsewhere off until
 * an H100/H200 run has measured it). */
#if defined(SDX_HIP_EPI_PREFETCH)
#define SDX__HIP_EPI_PREFETCH SDX_HIP_EPI_PREFETCH
#elif defined(SDX_HIP_SIM)
#define SDX__HIP_EPI_PREFETCH 1
#else
#define SDX__HIP_EPI_PREFETCH 0
#endif

/* Where the residual's chunks go (halves past the staging, 16-byte
 * aligned) and how many a half tile takes, for a block of NT threads in
 * the stages' SMEM bytes. */
template <int BN, int NT, int SMEM>
struct sdx__hip_epi_plan {
    typedef sdx__hip_tile<128, NT, BN> T;
    enum { STAGING = (64 * T::CPR > BN * T::CPC ? 64 * T::CPR : BN * T::CPC) * 2,  /* halves */
           PRE = (STAGING + 7) / 8 * 8, HALF = NT * T::EPI_ITERS * 8 };
    static_assert((PRE + 2 * HALF) * 2 <= SMEM, "the residual's chunks fit past the staging");
};

/* Every chunk of a half-type residual for both halves of the tile, as
 * asynchronous copies into `pre` (committed; the caller waits). */
template <int AK, int NT, int BN, int SMEM>
static __device__ __forceinline__ void sdx__hip_epi_fetch(const sdx__hip_gemm &g, int64_t z, int64_t m0, int64_t n0, int t, uint16_t *pre) {
    typedef sdx__hip_epi_plan<BN, NT, SMEM> E;
    for (int half = 0; half < 2; half++)
        sdx__hip_mma_write_out<AK, 128, NT, BN, 1>(g, z, m0, n0, half, NULL, t, pre + half * E::HALF);
    sdx__hip_cp_commit();
}

template <int BN>
struct sdx__hip_wg_tile {
    enum { A = 128 * SDX__HIP_MBK, W = BN * SDX__HIP_MBK,    /* halves of A and of W in a stage: whole 1024-byte atoms */
           STAGE = A + W,
           STAGES_BYTES = SDX__HIP_WG_STAGES * STAGE * 2,
           ALIGN = 1024,                                      /* bytes: the swizzle's atoms start on this boundary */
           SMEM = STAGES_BYTES + ALIGN - 16 };
};

template <int AK, int BN>
static __device__ __forceinline__ void sdx__hip_wg_prefetch(const sdx__hip_gemm &g, const uint16_t *xb, const uint16_t *wb, int m0, int n0,
                                                            int step, int end, int t, const sdx__hip_pixels<128, SDX__HIP_WG_THREADS> &px,
                                                            uint16_t *smem) {
    typedef sdx__hip_wg_tile<BN> T;
    uint16_t *st = smem + (step % SDX__HIP_WG_STAGES) * T::STAGE;
    if (step < end)
        sdx__hip_mma_issue<AK, 128, SDX__HIP_WG_THREADS, 1, BN>(g, xb, wb, m0, n0, (int64_t)step * SDX__HIP_MBK, t, px, st, st + T::A);
    sdx__hip_cp_commit();       /* past the end an empty group keeps the count */
}

#if SDX__HIP_WGMMA
/* A warpgroup's four k16 products of one k-step, from the stage `at`
 * (16-byte units) past its operands' descriptors, committed as one group. */
template <int HT, int BN>
static __device__ __forceinline__ void sdx__hip_wg_products(float *acc, uint64_t da, uint64_t db, uint64_t at) {
    sdx__hip_wg_fence_acc<BN / 2>(acc);
    sdx__hip_wg_arrive();
#pragma unroll
    for (int kk = 0; kk < SDX__HIP_MBK / 16; kk++) sdx__hip_wgmma<HT, BN>(acc, da + at + 2 * kk, db + at + 2 * kk);
    sdx__hip_wg_commit();
    sdx__hip_wg_fence_acc<BN / 2>(acc);
}
#endif

/* Where the product's column c (W's staged row) goes in the epilogue's
 * staging: c itself, or where the stage holds a fused GEGLU's values
 * (c < BN/2) and then their gates (the TMA's two boxes), the order of
 * sdx__hip_w_row, 8 values then their 8 gates. */
template <int BN>
static __device__ __forceinline__ int sdx__hip_wg_column(int c, int halves) {
    return !halves ? c : c < BN / 2 ? c / 8 * 16 + c % 8 : (c - BN / 2) / 8 * 16 + 8 + c % 8;
}

/* A warpgroup's accumulators (thread row `row`, lane `lane`) into the
 * epilogue's staging, columns placed by sdx__hip_wg_column. */
template <int AK, int BN>
static __device__ __forceinline__ void sdx__hip_wg_stage(float *cs, const float *acc, int row, int lane, int halves) {
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e += 2)
            sdx__hip_stage_pair<AK, 128, BN>(cs, row + 8 * (e / 2), sdx__hip_wg_column<BN>(j * 8 + 2 * (lane % 4), halves), acc[4 * j + e],
                                             acc[4 * j + e + 1]);
}

template <int AK, int HT, int BN>
__global__ void __launch_bounds__(SDX__HIP_WG_THREADS, 1) sdx__hip_k_gemm_wgmma(sdx__hip_gemm g) {
    sdx__hip_wait_prior();
#if SDX__HIP_WGMMA
    typedef sdx__hip_wg_tile<BN> T;
    enum { BT = 128, NT = SDX__HIP_WG_THREADS, S = SDX__HIP_WG_STAGES, ACC = BN / 2 };
    static_assert(SDX__HIP_MBK == 64 && S >= 3, "four k16 products a step; a stage besides the two in use");
    SDX__HIP_DYNAMIC_SMEM(uint16_t, dynamic);     /* T::SMEM bytes; the epilogue's staging reuses them */
    uint16_t *smem = dynamic + (-sdx__hip_smem_address(dynamic) & (T::ALIGN - 1)) / 2;
    float *cs = (float *)smem;
    const int t = (int)threadIdx.x, wg = t / 128, lane = t % 32, row = t % 128 / 32 * 16 + lane / 4;
    const int m0 = (int)blockIdx.x * BT, n0 = (int)blockIdx.y * BN, z = (int)(blockIdx.z / g.split);
    const sdx__hip_ksteps ks = sdx__hip_block_ksteps(g);
    const int first = ks.first, steps = ks.end;
    const uint16_t *xb = (const uint16_t *)g.x + z * g.x_bstride, *wb = (const uint16_t *)g.w;
    const sdx__hip_pixels<BT, NT> px = sdx__hip_pixels_at<AK, BT, NT>(g, m0, t);
    /* stage 0's descriptors: this warpgroup's 64 rows of A, all of W; a
     * k16 slice is 32 bytes further into the rows */
    const uint64_t da = sdx__hip_wg_desc(smem + wg * 64 * SDX__HIP_MBK, SDX__HIP_WG_SBO);
    const uint64_t db = sdx__hip_wg_desc(smem + T::A, SDX__HIP_WG_SBO);
    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; i++) acc[i] = 0.0f;
    for (int s = first; s < first + S - 2; s++) sdx__hip_wg_prefetch<AK, BN>(g, xb, wb, m0, n0, s, steps, t, px, smem);
    for (int step = first; step < steps; step++) {
        /* this step's copies landed and are visible to the matrix units;
         * after the barrier every warpgroup is done with step - 2's stage */
        const uint64_t at = (uint64_t)((step % S) * T::STAGE * 2 / 16);
        sdx__hip_cp_wait<S - 3>();
        sdx__hip_wg_fence_smem();
        __syncthreads();
        sdx__hip_wg_products<HT, BN>(acc, da, db, at);
        /* the copies go out while the products run, into step - 2's stage */
        sdx__hip_wg_prefetch<AK, BN>(g, xb, wb, m0, n0, step + S - 2, steps, t, px, smem);
        sdx__hip_wg_wait<1>();
    }
    sdx__hip_wg_wait<0>();
    sdx__hip_wg_fence_acc<ACC>(acc);
    /* the epilogue: warpgroup 0's rows, then 1's; the first barrier also
     * ends every warpgroup's reads of the stages (and then the residual's
     * chunks fly while warpgroup 0 stages) */
    typedef sdx__hip_epi_plan<BN, NT, T::STAGES_BYTES> E;
    uint16_t *pre = SDX__HIP_EPI_PREFETCH ? smem + E::PRE : NULL;
    for (int half = 0; half < 2; half++) {
        __syncthreads();
        if (pre && half == 0) sdx__hip_epi_fetch<AK, NT, BN, T::STAGES_BYTES>(g, z, m0, n0, t, pre);
        if (wg == half) sdx__hip_wg_stage<AK, BN>(cs, acc, row, lane, 0);
        if (pre && half == 0) sdx__hip_cp_wait<0>();
        __syncthreads();
        sdx__hip_mma_write_out<AK, BT, NT, BN>(g, z, m0, n0, half, cs, t, pre ? pre + half * E::HALF : NULL);
    }
#else
    (void)g;    /* no wgmma in this code object: the host never launches it */
#endif
}

/* ---- Hopper: the TMA feeds wgmma (sm_90a) ---------------------------------- */
/* A linear's product (A = x [M, K], W = w [N, K], both 16-byte rows), or
 * a stride-1 channels-last convolution's (sdx__hip_conv_tma_box), in
 * sdx__hip_k_gemm_wgmma's tiles, 128 rows by BN = 128 or 160 columns,
 * with the operands brought by the TMA instead of by the threads: three
 * warpgroups (384 threads), the first a producer, the other two the
 * wgmma consumers of sdx__hip_k_gemm_wgmma (64 rows of the tile each).
 * One thread of the producer asks for each k-step's boxes of A and W (64 k
 * by 128 rows, by BN rows; a fused GEGLU's W as two boxes of BN/2 rows,
 * values then gates) as soon as the consumers have let go of the stage
 * (`empty`), and the boxes report to the stage's `full` barrier. A
 * convolution's box of A is 64 channels of one tap for the tile's 128
 * output pixels: the input's pixels shifted by the tap, a rectangle
 * whose parts past the picture the TMA fills with zeros, the padding. So the
 * consumers only wait, multiply and let go: no copies to issue, no
 * block-wide barrier a step; two groups of products stay in flight.
 * Same epilogue (and split k) as the other matrix-unit kernels, so the
 * same bits up to the order of the tensor cores' sums. */
#define SDX__HIP_TMA_THREADS 384
/* the TMA kernels on Hopper (SDX_HIP_TMA=0: the threads' copies, sdx__hip_k_gemm_wgmma) */
#if defined(SDX_HIP_TMA)
#define SDX__HIP_TMA SDX_HIP_TMA
#else
#define SDX__HIP_TMA 1
#endif
/* Channels-last convolutions of stride 1 fed by the TMA too
 * (SDX_HIP_TMA_CONV=1; the simulator's builds: on, so their tests run
 * it; elsewhere off until an H100/H200 run has measured it against the
 * threads' copies). */
#if defined(SDX_HIP_TMA_CONV)
#define SDX__HIP_TMA_CONV SDX_HIP_TMA_CONV
#elif defined(SDX_HIP_SIM)
#define SDX__HIP_TMA_CONV 1
#else
#define SDX__HIP_TMA_CONV 0
#endif

/* A convolution's tile as a box of its channels-last input: 128 output
 * pixels that are whole rows of the output (Wo divides 128: 128 / Wo
 * rows) or part of one (128 divides Wo), so that they are the box's
 * 128 rows in order and consecutive in the output. Stride 1 and C a
 * multiple of 64 (a k-step is 64 channels of one tap). 0: no such box. */
struct sdx__hip_conv_box {
    int w, h;   /* output pixels a box row, box rows */
};

static inline sdx__hip_conv_box sdx__hip_conv_tma_box(const sdx__hip_gemm &g) {
    sdx__hip_conv_box b = { 0, 0 };
    if (g.stride != 1 || g.C % 64 || g.Wo <= 0 || (g.Wo <= 128 ? 128 % g.Wo : g.Wo % 128)) return b;
    b.w = g.Wo < 128 ? g.Wo : 128;
    b.h = 128 / b.w;
    return b;
}

#if SDX__HIP_WGMMA && SDX__HIP_TMA
/* Asks for k-step `k`'s box of A: a linear's 64 k by 128 rows from m0;
 * a convolution's (AK == SDX__HIP_A_NHWC) 64 channels of one tap at the
 * 128 output pixels from m0 of image z, their input pixels shifted by the
 * tap. */
template <int AK>
static __device__ __forceinline__ void sdx__hip_tma_load_a(uint16_t *dst, const sdx__hip_tmap *ta, const sdx__hip_gemm &g, int k, int m0,
                                                           int z, uint64_t *bar) {
    if (AK == SDX__HIP_A_ROWS) {
        sdx__hip_tma_load(dst, ta, k, m0, bar);
    } else {
        const int tap = k / g.C, ky = tap / g.kw, kx = tap - ky * g.kw, oy = m0 / g.Wo, ox = m0 - oy * g.Wo;
        sdx__hip_tma_load4(dst, ta, k - tap * g.C, ox - g.pl + kx, oy - g.pt + ky, z, bar);
    }
}
#endif

/* sdx__hip_k_gemm_wgmma's stages, then the 2 S mbarriers. */
template <int BN>
struct sdx__hip_tma_tile {
    typedef sdx__hip_wg_tile<BN> G;
    enum { A = G::A, W = G::W, STAGE = G::STAGE, ALIGN = G::ALIGN,
           BARS = G::STAGES_BYTES,                                        /* byte offset of the barriers */
           SMEM = BARS + 2 * SDX__HIP_WG_STAGES * 8 + ALIGN - 16 };
};

template <int AK, int HT, int BN>
__global__ void __launch_bounds__(SDX__HIP_TMA_THREADS, 1)
    sdx__hip_k_gemm_tma(sdx__hip_gemm g, const __grid_constant__ sdx__hip_tmap ta, const __grid_constant__ sdx__hip_tmap tw) {
#if SDX__HIP_WGMMA && SDX__HIP_TMA
    typedef sdx__hip_tma_tile<BN> T;
    enum { BT = 128, NT = SDX__HIP_TMA_THREADS, S = SDX__HIP_WG_STAGES, ACC = BN / 2 };
    static_assert(SDX__HIP_MBK == 64, "a box row is 128 bytes: the swizzle's");
    SDX__HIP_DYNAMIC_SMEM(uint16_t, dynamic);     /* T::SMEM bytes; the epilogue's staging reuses the stages */
    uint16_t *smem = dynamic + (-sdx__hip_smem_address(dynamic) & (T::ALIGN - 1)) / 2;
    uint64_t *full = (uint64_t *)((char *)smem + T::BARS), *empty = full + S;
    float *cs = (float *)smem;
    const int t = (int)threadIdx.x, wg = t / 128, lane = t % 32, row = t % 128 / 32 * 16 + lane / 4;
    const int m0 = (int)blockIdx.x * BT, n0 = (int)blockIdx.y * BN, z = (int)(blockIdx.z / g.split);    /* z: a convolution's image */
    const sdx__hip_ksteps ks = sdx__hip_block_ksteps(g);
    /* what reads no tensor comes before the wait for the kernels before
     * (with SDX_HIP_PDL it overlaps their end): the maps' descriptors and
     * the barriers */
    if (t == 0) {
        sdx__hip_tma_prefetch_map(&ta);
        sdx__hip_tma_prefetch_map(&tw);
        for (int s = 0; s < S; s++) {
            sdx__hip_mbar_init(full + s, 1);        /* the producer's arrival, with the boxes' bytes */
            sdx__hip_mbar_init(empty + s, 8);       /* each consumer warp's */
        }
        sdx__hip_mbar_fence_init();
    }
    __syncthreads();
    sdx__hip_wait_prior();
    float acc[ACC];      /* the consumers' */
#pragma unroll
    for (int i = 0; i < ACC; i++) acc[i] = 0.0f;
    if (wg == 0) {
        /* the producer: one thread asks, the others wait at the epilogue */
        for (int step = ks.first; t == 0 && step < ks.end; step++) {
            const int i = step - ks.first, s = i % S, k = step * SDX__HIP_MBK;
            uint16_t *st = smem + s * T::STAGE;
            sdx__hip_mbar_wait(empty + s, (i / S & 1) ^ 1);     /* the first round's stages are free */
            sdx__hip_mbar_expect(full + s, T::STAGE * 2);
            sdx__hip_tma_load_a<AK>(st, &ta, g, k, m0, z, full + s);
            if (!g.geglu) {
                sdx__hip_tma_load(st + T::A, &tw, k, n0, full + s);
            } else {
                sdx__hip_tma_load(st + T::A, &tw, k, n0 / 2, full + s);
                sdx__hip_tma_load(st + T::A + T::W / 2, &tw, k, (int)g.geglu + n0 / 2, full + s);
            }
        }
    } else {
        /* a consumer: rows 64 (wg - 1) on of the tile, all BN columns */
        const uint64_t da = sdx__hip_wg_desc(smem + (wg - 1) * 64 * SDX__HIP_MBK, SDX__HIP_WG_SBO);
        const uint64_t db = sdx__hip_wg_desc(smem + T::A, SDX__HIP_WG_SBO);
        for (int step = ks.first; step < ks.end; step++) {
            const int i = step - ks.first, s = i % S;
            const uint64_t at = (uint64_t)(s * T::STAGE * 2 / 16);
            sdx__hip_mbar_wait(full + s, i / S & 1);
            sdx__hip_wg_products<HT, BN>(acc, da, db, at);
            /* the previous step's products are done: its stage is free */
            sdx__hip_wg_wait<1>();
            if (i > 0 && lane == 0) sdx__hip_mbar_arrive(empty + (i - 1) % S);
        }
        sdx__hip_wg_wait<0>();
        sdx__hip_wg_fence_acc<ACC>(acc);
    }
    /* the epilogue, every warp writing: consumer 0's rows staged, then
     * 1's (the first barrier also ends every read of the stages, and
     * then the residual's chunks fly while consumer 0 stages) */
    typedef sdx__hip_epi_plan<BN, NT, T::BARS> E;
    uint16_t *pre = SDX__HIP_EPI_PREFETCH ? smem + E::PRE : NULL;
    for (int half = 0; half < 2; half++) {
        __syncthreads();
        if (pre && half == 0) sdx__hip_epi_fetch<AK, NT, BN, T::BARS>(g, z, m0, n0, t, pre);
        if (wg == half + 1) sdx__hip_wg_stage<AK, BN>(cs, acc, row, lane, g.geglu != 0);     /* values, then gates: two boxes */
        if (pre && half == 0) sdx__hip_cp_wait<0>();
        __syncthreads();
        sdx__hip_mma_write_out<AK, BT, NT, BN>(g, z, m0, n0, half, cs, t, pre ? pre + half * E::HALF : NULL);
    }
#else
    sdx__hip_wait_prior();
    (void)g, (void)ta, (void)tw;    /* no TMA in this code object: the host never launches it */
#endif
}

/* Parts whose loads go out together: two, so that the simulator's splits
 * in 4 (its 4 one-block SMs) take two batches, the second partial */
#define SDX__HIP_SPLIT_BATCH 2

/* A split GEMM's result: y = the parts' f32 sums, added in part order
 * (the same bits every run), + bias + the residual. `count` values of y (all images),
 * `plane` of them an image; a conv's bias follows n = (i % plane) / M,
 * a linear's n = i % N. */
template <int W>
__global__ void sdx__hip_k_split_sum(sdx__hip_gemm g, int64_t count, int64_t plane, int conv) {
    sdx__hip_wait_prior();
    for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * W; i < count; i += (int64_t)gridDim.x * blockDim.x * W) {
        float v[W], p[SDX__HIP_SPLIT_BATCH][W], r[W] = { 0 };
        /* the residual's load beside the first part's, and the next
         * parts' loads together, then their sums in part order: a part's
         * load waited for the sum of the part before it */
        sdx__hip_ldw<W>(g.part, SDX__HIP_DT_F32, i, v);
        if (g.res) sdx__hip_ldw<W>(g.res, g.rt, i, r);
        for (int s0 = 1; s0 < g.split; s0 += SDX__HIP_SPLIT_BATCH) {
#pragma unroll
            for (int u = 0; u < SDX__HIP_SPLIT_BATCH; u++)
                if (s0 + u < g.split) sdx__hip_ldw<W>(g.part, SDX__HIP_DT_F32, (s0 + u) * count + i, p[u]);
#pragma unroll
            for (int u = 0; u < SDX__HIP_SPLIT_BATCH; u++)
                if (s0 + u < g.split)
                    for (int e = 0; e < W; e++) v[e] += p[u][e];
        }
        if (g.bias)
            for (int e = 0; e < W; e++) v[e] += sdx__hip_ld(g.bias, g.bt, conv ? (i + e) % plane / g.M : (i + e) % g.N);
        if (g.res)
            for (int e = 0; e < W; e++) v[e] += r[e];
        sdx__hip_stw<W>(g.y, g.yt, i, v);
    }
}

