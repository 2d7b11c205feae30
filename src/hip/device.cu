#pragma once
#include "prelude.h"
/* ===================================================================== */
/*  Device helpers: storage dtypes, reductions                            */
/* ===================================================================== */
/* Tensors reach the kernels as raw pointers plus their sdx_dtype (F32 0,
 * F16 1, BF16 2). Every kernel widens to f32 on load and narrows once on
 * store, with the CPU's rounding: f16 round-to-nearest-even saturating at
 * +-65504 (NaN stays NaN), bf16 round-to-nearest-even with quiet NaNs. */

#define SDX__HIP_DT_F32  0
#define SDX__HIP_DT_F16  1
#define SDX__HIP_DT_BF16 2

/* Programmatic dependent launch (SDX_HIP_PDL=1, NVIDIA Hopper, for A/B
 * runs until a GPU has measured it): each kernel is launched allowed to
 * start while the one before it in the stream is still ending, so that
 * its launch and its blocks' start overlap that kernel's last blocks.
 * Every kernel therefore begins with sdx__hip_wait_prior, which waits
 * until the kernels before it have finished and their writes are
 * visible, before it reads or writes any tensor (the arena reuses memory
 * an earlier kernel may still read). Elsewhere it is nothing. */
#if defined(SDX_HIP_PDL) && SDX_HIP_PDL && SDX__HIP_NVIDIA && !defined(SDX_HIP_SIM)
#define SDX__HIP_PDL 1
#else
#define SDX__HIP_PDL 0
#endif

static __device__ __forceinline__ void sdx__hip_wait_prior(void) {
#if SDX__HIP_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/* A tensor map: how Hopper's TMA reads a matrix (sdx__hip_tma_load),
 * made on the host (sdx__hip_tmap_2d) and passed to a kernel by value as
 * a __grid_constant__ parameter: CUDA's CUtensorMap, 128 opaque bytes
 * (the simulator keeps its own description in them). */
struct __align__(128) sdx__hip_tmap {
    uint64_t opaque[16];
};

static __device__ __forceinline__ float sdx__hip_h2f(uint16_t b) { return __half2float(__ushort_as_half(b)); }
static __device__ __forceinline__ float sdx__hip_bf2f(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }

static __device__ __forceinline__ uint16_t sdx__hip_f2h(float v) {
    /* comparisons are false for NaN, so NaN passes through unchanged */
    v = v > 65504.0f ? 65504.0f : (v < -65504.0f ? -65504.0f : v);
    return __half_as_ushort(__float2half_rn(v));
}

static __device__ __forceinline__ uint16_t sdx__hip_f2bf(float f) {
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* v narrowed to the 16-bit type dt (f16 or bf16). */
static __device__ __forceinline__ uint16_t sdx__hip_f2half(int dt, float v) {
    return dt == SDX__HIP_DT_F16 ? sdx__hip_f2h(v) : sdx__hip_f2bf(v);
}

static __device__ __forceinline__ float sdx__hip_ld(const void *p, int dt, int64_t i) {
    if (dt == SDX__HIP_DT_F32) return ((const float *)p)[i];
    return dt == SDX__HIP_DT_F16 ? sdx__hip_h2f(((const uint16_t *)p)[i]) : sdx__hip_bf2f(((const uint16_t *)p)[i]);
}

static __device__ __forceinline__ void sdx__hip_st(void *p, int dt, int64_t i, float v) {
    if (dt == SDX__HIP_DT_F32) ((float *)p)[i] = v;
    else ((uint16_t *)p)[i] = sdx__hip_f2half(dt, v);
}

/* y[i] and y[i + 1] as one access (i even, the tensor 8-byte aligned as
 * every allocation is): the attention kernels' output pairs. */
static __device__ __forceinline__ void sdx__hip_st_pair(void *p, int dt, int64_t i, float v0, float v1) {
#if defined(SDX_HIP_SIM)
    sdx_sim_check_aligned((const char *)p + i * (dt == SDX__HIP_DT_F32 ? 4 : 2), dt == SDX__HIP_DT_F32 ? 8 : 4);
#endif
    if (dt == SDX__HIP_DT_F32) {
        struct __align__(8) f2 { float x, y; } w = { v0, v1 };
        *(f2 *)((float *)p + i) = w;
    } else {
        *(uint32_t *)((uint16_t *)p + i) = sdx__hip_f2half(dt, v0) | (uint32_t)sdx__hip_f2half(dt, v1) << 16;
    }
}

/* Eight 16-bit values moved as one 16-byte access (the pointer must be
 * 16-byte aligned: the simulator checks it, then copies bytewise so
 * that the failure is reported, not a crash of the test). */
struct __align__(16) sdx__hip_v8 { uint32_t w[4]; };

static __device__ __forceinline__ sdx__hip_v8 sdx__hip_ld8(const uint16_t *p) {
#if defined(SDX_HIP_SIM)
    sdx__hip_v8 v;
    sdx_sim_check_aligned(p, 16);
    memcpy(&v, p, sizeof v);
    return v;
#else
    return *(const sdx__hip_v8 *)p;
#endif
}

static __device__ __forceinline__ void sdx__hip_st8(uint16_t *p, sdx__hip_v8 v) {
#if defined(SDX_HIP_SIM)
    sdx_sim_check_aligned(p, 16);
    memcpy(p, &v, sizeof v);
#else
    *(sdx__hip_v8 *)p = v;
#endif
}

/* Eight raw values of a half type dt (f16 or bf16) as floats. */
static __device__ __forceinline__ void sdx__hip_v8_to_f32(const sdx__hip_v8 &q, int dt, float *v) {
    for (int e = 0; e < 8; e++) {
        uint16_t b = (uint16_t)(q.w[e / 2] >> (16 * (e % 2)));
        v[e] = dt == SDX__HIP_DT_F16 ? sdx__hip_h2f(b) : sdx__hip_bf2f(b);
    }
}

/* W consecutive values of a tensor from element i on, widened to f32 (and
 * narrowed back): with W == 8, i a multiple of 8 and the tensor 16-byte
 * aligned (the launch checks both), one 16-byte access per 8 half values
 * or 4 floats, where W == 1 is one value at a time. The memory-bound
 * kernels take W as a template argument. */
template <int W>
static __device__ __forceinline__ void sdx__hip_ldw(const void *p, int dt, int64_t i, float *v) {
    if (W == 1) {
        v[0] = sdx__hip_ld(p, dt, i);
    } else if (dt == SDX__HIP_DT_F32) {
        for (int h = 0; h < W / 4; h++) {
            sdx__hip_v8 q = sdx__hip_ld8((const uint16_t *)((const float *)p + i + 4 * h));
            for (int e = 0; e < 4; e++) v[4 * h + e] = __uint_as_float(q.w[e]);
        }
    } else {
        for (int h = 0; h < W / 8; h++) sdx__hip_v8_to_f32(sdx__hip_ld8((const uint16_t *)p + i + 8 * h), dt, v + 8 * h);
    }
}

template <int W>
static __device__ __forceinline__ void sdx__hip_stw(void *p, int dt, int64_t i, const float *v) {
    if (W == 1) {
        sdx__hip_st(p, dt, i, v[0]);
    } else if (dt == SDX__HIP_DT_F32) {
        for (int h = 0; h < W / 4; h++) {
            sdx__hip_v8 q;
            for (int e = 0; e < 4; e++) q.w[e] = __float_as_uint(v[4 * h + e]);
            sdx__hip_st8((uint16_t *)((float *)p + i + 4 * h), q);
        }
    } else {
        for (int h = 0; h < W / 8; h++) {
            sdx__hip_v8 q;
            for (int e = 0; e < 4; e++) {
                q.w[e] = sdx__hip_f2half(dt, v[8 * h + 2 * e]) | (uint32_t)sdx__hip_f2half(dt, v[8 * h + 2 * e + 1]) << 16;
            }
            sdx__hip_st8((uint16_t *)p + i + 8 * h, q);
        }
    }
}

/* 16 bytes from global to shared memory without waiting for them (sm_80+:
 * cp.async, which fills zeros when `valid` is 0; elsewhere a plain copy).
 * sdx__hip_cp_commit closes a group of copies, sdx__hip_cp_wait<N> waits
 * until at most the N newest groups are still in flight; a barrier then
 * makes every thread's copies visible. The simulator performs a copy
 * only at the wait that covers it, so reading early shows up there. */
static __device__ __forceinline__ void sdx__hip_cp_async16(uint16_t *dst, const uint16_t *src, int valid) {
#if defined(SDX_HIP_SIM)
    sdx_sim_cp_async(dst, src, 16, valid);
#elif SDX__HIP_MMA == 1
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(valid ? 16 : 0) : "memory");
#else
    const sdx__hip_v8 zero = { { 0, 0, 0, 0 } };
    sdx__hip_st8(dst, valid ? sdx__hip_ld8(src) : zero);
#endif
}

static __device__ __forceinline__ void sdx__hip_cp_commit(void) {
#if defined(SDX_HIP_SIM)
    sdx_sim_cp_commit();
#elif SDX__HIP_MMA == 1
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
static __device__ __forceinline__ void sdx__hip_cp_wait(void) {
#if defined(SDX_HIP_SIM)
    sdx_sim_cp_wait(N);
#elif SDX__HIP_MMA == 1
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* NVIDIA's warp-level matrix instructions (sm_80+), with the layouts the
 * PTX ISA documents; lane l is (g, t) = (l / 4, l % 4), and the lower of
 * two 16-bit elements sits in a register's low half.
 *   sdx__hip_ldsm4<0>: ldmatrix .x4, four 8 x 8 matrices of 16-bit values
 *     from shared memory; lane l gives the address of row l % 8 of matrix
 *     l / 8 (16 contiguous bytes, 16-byte aligned) and receives in r[i]
 *     row g, columns 2t and 2t + 1 of matrix i; sdx__hip_ldsm4<1>
 *     (.trans) the same of the transposed matrices: rows 2t and 2t + 1
 *     of column g.
 *   sdx__hip_mma16816: mma.sync m16n8k16, d += a b in f32, with a 16 x 16
 *     (row major) and b 16 x 8 (column major) of f16 or bf16:
 *       a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..],
 *       a[3] = A[g+8][2t+8..];  b[0] = B[2t..2t+1][g], b[1] = B[2t+8..][g];
 *       d[0..1] = D[g][2t..2t+1], d[2..3] = D[g+8][2t..2t+1].
 *     So ldmatrix of a row-major 16 x 16 A tile (matrices: rows 0-7 and
 *     8-15 at k 0-7, then at k 8-15) gives a, and of W's rows (n, k
 *     contiguous) at k 0-7 and 8-15 gives b.
 * The simulator models both with the same layouts, so a wrong index in
 * the kernels gives wrong results there too. */
#if SDX__HIP_MMA == 1
template <int TRANS>
static __device__ __forceinline__ void sdx__hip_ldsm4(uint32_t r[4], const uint16_t *row) {
#if defined(SDX_HIP_SIM)
    sdx_sim_ldmatrix_x4(r, row, TRANS);
#else
    unsigned s = (unsigned)__cvta_generic_to_shared(row);
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(s));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(s));
#endif
}

template <int HT>
static __device__ __forceinline__ void sdx__hip_mma16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(SDX_HIP_SIM)
    sdx_sim_mma_m16n8k16(d, a, b, HT == SDX__HIP_DT_BF16);
#else
    if (HT == SDX__HIP_DT_F16)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
#endif

/* GELU, the exact (erf) form, as the CPU's */
static __device__ __forceinline__ float sdx__hip_gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

/* 2^x as the exponential unit gives it (NVIDIA: ex2.approx, 2 ulp, one
 * instruction where expf is eleven; results below 2^-126 are 0). The
 * softmax of the attention kernels works in base 2, its logits scaled
 * by log2(e) in the same multiply-add that subtracts the row's max. */
static __device__ __forceinline__ float sdx__hip_exp2(float x) {
#if defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return exp2f(x);
#endif
}

/* Where chunk `chunk` (8 halves, 16 bytes) of row `row` of a [rows][64]
 * half operand goes in the 128-byte swizzle wgmma reads and the TMA
 * writes (below), in halves from the 1024-byte-aligned start: its
 * 16-byte slot in the row is the chunk XOR the row's place in its atom
 * of 8 rows. */
static __device__ __forceinline__ int sdx__hip_swizzled(int row, int chunk) { return row * 64 + (chunk ^ row % 8) * 8; }

/* ---- Hopper's warpgroup matrix instructions (sm_90a) ------------------------ */
/* wgmma.mma_async m64nNk16 (N = 64, 128 or 160): a warpgroup (four consecutive
 * warps, 128 threads) multiplies a 64 x 16 A by a 16 x N B, both in
 * shared memory, into 64 x N f32 accumulators spread over its registers:
 * thread t (warp w = t / 32 of the group, lane = 4 g + q) holds in
 * d[4 j + e] row 16 w + g + 8 (e / 2), column 8 j + 2 q + e % 2. The
 * operands are named by descriptors, K-major (A[m][k], B as W[n][k]),
 * in the 128-byte swizzle (descriptor bit 62): row r's 16 bytes from k
 * on lie at address start + (r / 8) SBO + (r % 8) 128 + 2 k, whose bits
 * 4-6 are then XORed with its bits 7-9 (the address is the shared
 * window's; the rows' 8-row atoms start on 1024-byte boundaries, and
 * start steps 32 bytes a k16 slice within one). The instruction is
 * asynchronous: committed in groups, it may read its operands and write
 * d until the wait that covers its group, so neither may be touched
 * before that (sdx__hip_wg_fence_acc keeps the compiler from moving
 * accesses of d across it). Shared memory written by the threads
 * (cp.async included) must be made visible to it with
 * sdx__hip_wg_fence_smem before the barrier that precedes it. The
 * simulator models all of this, reading the operands and writing d at
 * the wait. */
#if SDX__HIP_WGMMA
static __device__ __forceinline__ uint32_t sdx__hip_smem_address(const void *p) {
#if defined(SDX_HIP_SIM)
    return (uint32_t)((const unsigned char *)p - (const unsigned char *)sdx_sim_dynamic_smem());
#else
    return (uint32_t)__cvta_generic_to_shared(p);
#endif
}

/* A swizzled operand from `start` on, 8-row atoms `sbo` bytes apart; lbo:
 * an MN-major operand's bytes from one 64 values of n to the next (a
 * K-major one does not use it: 16 bytes, encoded 1). */
static __device__ __forceinline__ uint64_t sdx__hip_wg_desc(const uint16_t *start, uint32_t sbo, uint32_t lbo = 16) {
    return (uint64_t)(sdx__hip_smem_address(start) >> 4 & 0x3fffu) | (uint64_t)(lbo >> 4 & 0x3fffu) << 16 |
           (uint64_t)(sbo >> 4 & 0x3fffu) << 32 | (uint64_t)1 << 62;
}

#if !defined(SDX_HIP_SIM)
/* One wgmma: the accumulators' registers ({...}), the two descriptors, then
 * scale-d (a register set to 1: add to d), each operand numbered as it
 * comes in the lists (outputs first). */
#define SDX__HIP_WG_ASM(shape, T, accs, descs, one, ...) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " one ", 0;\n" \
                 "wgmma.mma_async.sync.aligned." shape ".f32." T "." T " {" accs "}, " descs ", p, 1, 1, 0, 0;\n}\n" \
                 : __VA_ARGS__ : "l"(a), "l"(b), "r"(1))
/* the first 64 accumulators, as operands and as their numbers */
#define SDX__HIP_WG_ACC64 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define SDX__HIP_WG_ACC64_NUMBERS \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
/* the accumulators 0-23, 24-31 and 32-39, as numbers and as operands */
#define SDX__HIP_WG_N24 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, " \
    "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23"
#define SDX__HIP_WG_N32 SDX__HIP_WG_N24 ", %24, %25, %26, %27, %28, %29, %30, %31"
#define SDX__HIP_WG_N40 SDX__HIP_WG_N32 ", %32, %33, %34, %35, %36, %37, %38, %39"
#define SDX__HIP_WG_D24 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define SDX__HIP_WG_D32 SDX__HIP_WG_D24, "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define SDX__HIP_WG_D40 SDX__HIP_WG_D32, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define SDX__HIP_WGMMA_N64(T) SDX__HIP_WG_ASM("m64n64k16", T, SDX__HIP_WG_N32, "%32, %33", "%34", SDX__HIP_WG_D32)
#define SDX__HIP_WGMMA_N128(T) SDX__HIP_WG_ASM("m64n128k16", T, SDX__HIP_WG_ACC64_NUMBERS, "%64, %65", "%66", SDX__HIP_WG_ACC64)
#define SDX__HIP_WGMMA_N160(T) \
    SDX__HIP_WG_ASM("m64n160k16", T, SDX__HIP_WG_ACC64_NUMBERS ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79", "%80, %81", "%82", \
                    SDX__HIP_WG_ACC64, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), \
                    "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]))

template <int HT, int N>
struct sdx__hip_wgmma_asm;      /* the widths the GEMM tiles and attention use */
template <int HT>
struct sdx__hip_wgmma_asm<HT, 64> {
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b) {
        if (HT == SDX__HIP_DT_F16) SDX__HIP_WGMMA_N64("f16");
        else SDX__HIP_WGMMA_N64("bf16");
    }
};
template <int HT>
struct sdx__hip_wgmma_asm<HT, 128> {
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b) {
        if (HT == SDX__HIP_DT_F16) SDX__HIP_WGMMA_N128("f16");
        else SDX__HIP_WGMMA_N128("bf16");
    }
};
template <int HT>
struct sdx__hip_wgmma_asm<HT, 160> {
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b) {
        if (HT == SDX__HIP_DT_F16) SDX__HIP_WGMMA_N160("f16");
        else SDX__HIP_WGMMA_N160("bf16");
    }
};
#undef SDX__HIP_WGMMA_N64
#undef SDX__HIP_WGMMA_N128
#undef SDX__HIP_WGMMA_N160
#undef SDX__HIP_WG_ACC64
#undef SDX__HIP_WG_ACC64_NUMBERS
#undef SDX__HIP_WG_ASM
#endif

template <int HT, int N>
static __device__ __forceinline__ void sdx__hip_wgmma(float *d, uint64_t a, uint64_t b) {
#if defined(SDX_HIP_SIM)
    static_assert(N == 64 || N == 128 || N == 160, "the widths the GEMM tiles and attention use");
    sdx_sim_wgmma(d, N, a, b, HT == SDX__HIP_DT_BF16);
#else
    sdx__hip_wgmma_asm<HT, N>::run(d, a, b);
#endif
}

/* wgmma m64nNk16 (N = 48, 64 or 80) with A from registers (a: the
 * thread's fragment, laid out as mma.sync m16n8k16's A for its warp's 16
 * rows of the 64: a[0] row g, k 2q and 2q + 1; a[1] row g + 8; a[2],
 * a[3] the same at k + 8) and B by descriptor, K-major (B as W[n][k]) or,
 * TNSP, MN-major: B[k][n] with n contiguous, 64 of n a 128-byte row of
 * the swizzle (the next 64 LBO further), k rows 128 bytes apart in atoms
 * of 8 (SBO apart); a k16 slice is then two atoms. d: N / 2
 * accumulators, as the wider products' (d[4 j + e]: row g + 8 (e / 2) of
 * the warp's 16, column 8 j + 2 q + e % 2). */
#if !defined(SDX_HIP_SIM)
/* shape, type, the accumulators' numbers, then the numbers of a's four
 * registers, of b, of TNSP and of the 1 that sets scale-d, and the
 * accumulator operands */
#define SDX__HIP_WG_RS_ASM(shape, T, accs, a4, bn, tn, one, ...) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " one ", 0;\n" \
                 "wgmma.mma_async.sync.aligned." shape ".f32." T "." T " {" accs "}, {" a4 "}, " bn ", p, 1, 1, " tn ";\n}\n" \
                 : __VA_ARGS__ : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(TNSP), "r"(1))
#define SDX__HIP_WG_RS48(T) SDX__HIP_WG_RS_ASM("m64n48k16", T, SDX__HIP_WG_N24, "%24, %25, %26, %27", "%28", "%29", "%30", SDX__HIP_WG_D24)
#define SDX__HIP_WG_RS64(T) SDX__HIP_WG_RS_ASM("m64n64k16", T, SDX__HIP_WG_N32, "%32, %33, %34, %35", "%36", "%37", "%38", SDX__HIP_WG_D32)
#define SDX__HIP_WG_RS80(T) SDX__HIP_WG_RS_ASM("m64n80k16", T, SDX__HIP_WG_N40, "%40, %41, %42, %43", "%44", "%45", "%46", SDX__HIP_WG_D40)
template <int HT, int N, int TNSP>
struct sdx__hip_wgmma_rs_asm;
#define SDX__HIP_WG_RS_WIDTH(N) \
    template <int HT, int TNSP> \
    struct sdx__hip_wgmma_rs_asm<HT, N, TNSP> { \
        static __device__ __forceinline__ void run(float *d, const uint32_t a[4], uint64_t b) { \
            if (HT == SDX__HIP_DT_F16) SDX__HIP_WG_RS##N("f16"); \
            else SDX__HIP_WG_RS##N("bf16"); \
        } \
    };
SDX__HIP_WG_RS_WIDTH(48)
SDX__HIP_WG_RS_WIDTH(64)
SDX__HIP_WG_RS_WIDTH(80)
#undef SDX__HIP_WG_RS_WIDTH
#undef SDX__HIP_WG_RS48
#undef SDX__HIP_WG_RS64
#undef SDX__HIP_WG_RS80
#undef SDX__HIP_WG_RS_ASM
#undef SDX__HIP_WG_D40
#undef SDX__HIP_WG_D32
#undef SDX__HIP_WG_D24
#undef SDX__HIP_WG_N40
#undef SDX__HIP_WG_N32
#undef SDX__HIP_WG_N24
#endif
template <int HT, int N, int TNSP>
static __device__ __forceinline__ void sdx__hip_wgmma_rs(float *d, const uint32_t a[4], uint64_t b) {
#if defined(SDX_HIP_SIM)
    static_assert(N == 48 || N == 64 || N == 80, "the widths attention uses");
    sdx_sim_wgmma_rs(d, N, a, b, HT == SDX__HIP_DT_BF16, TNSP);
#else
    sdx__hip_wgmma_rs_asm<HT, N, TNSP>::run(d, a, b);
#endif
}

/* Before the first wgmma of a batch: the accumulators' registers are
 * final (wgmma.fence). After a batch: wgmma.commit_group. */
static __device__ __forceinline__ void sdx__hip_wg_arrive(void) {
#if !defined(SDX_HIP_SIM)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

static __device__ __forceinline__ void sdx__hip_wg_commit(void) {
#if defined(SDX_HIP_SIM)
    sdx_sim_wgmma_commit();
#else
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/* Waits until at most the N newest groups are in flight. */
template <int N>
static __device__ __forceinline__ void sdx__hip_wg_wait(void) {
#if defined(SDX_HIP_SIM)
    sdx_sim_wgmma_wait(N);
#else
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

/* The compiler may not move reads or writes of d[0, N) across this point. */
template <int N>
static __device__ __forceinline__ void sdx__hip_wg_fence_acc(float *d) {
#if !defined(SDX_HIP_SIM)
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
#else
    (void)d;
#endif
}

/* This thread's writes to shared memory become visible to the matrix
 * instructions (the async proxy); a barrier must still follow. */
static __device__ __forceinline__ void sdx__hip_wg_fence_smem(void) {
#if !defined(SDX_HIP_SIM)
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/* ---- Hopper's tensor memory accelerator (TMA) and mbarriers -------------- */
/* One thread asks the TMA for a whole box of a matrix (sdx__hip_tma_load:
 * 64 values of k by up to 256 rows, zeros past the matrix's edges, laid
 * out in shared memory in the 128-byte swizzle wgmma reads), and the
 * copy reports its bytes to an mbarrier in shared memory. An mbarrier
 * completes a phase when the arrivals it was initialised with have come
 * (sdx__hip_mbar_arrive; sdx__hip_mbar_expect also announces bytes to
 * come) and every announced byte has landed; sdx__hip_mbar_wait(bar, p)
 * waits until the phase of parity p is complete (a fresh barrier counts
 * its phase -1, parity 1, as complete). The simulator lands a box only
 * when someone waits for its barrier and fills the destination with
 * garbage until then, so reading a stage before its barrier, or
 * reloading it before its readers let go, gives wrong results there. */
static __device__ __forceinline__ void sdx__hip_mbar_init(uint64_t *bar, int count) {
#if defined(SDX_HIP_SIM)
    sdx_sim_mbar_init(bar, count);
#else
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sdx__hip_smem_address(bar)), "r"(count) : "memory");
#endif
}

/* After the initialisations, before the barrier that publishes them:
 * the TMA (the async proxy) sees them too. */
static __device__ __forceinline__ void sdx__hip_mbar_fence_init(void) {
#if !defined(SDX_HIP_SIM)
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

static __device__ __forceinline__ void sdx__hip_mbar_arrive(uint64_t *bar) {
#if defined(SDX_HIP_SIM)
    sdx_sim_mbar_arrive(bar, 0);
#else
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(sdx__hip_smem_address(bar)) : "memory");
#endif
}

/* An arrival that also announces `bytes` of copies to come. */
static __device__ __forceinline__ void sdx__hip_mbar_expect(uint64_t *bar, uint32_t bytes) {
#if defined(SDX_HIP_SIM)
    sdx_sim_mbar_arrive(bar, bytes);
#else
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sdx__hip_smem_address(bar)), "r"(bytes) : "memory");
#endif
}

static __device__ __forceinline__ void sdx__hip_mbar_wait(uint64_t *bar, int parity) {
#if defined(SDX_HIP_SIM)
    sdx_sim_mbar_wait(bar, parity);
#else
    asm volatile("{\n.reg .pred done;\nSDX_MBAR_POLL:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra SDX_MBAR_POLL;\n}\n" ::"r"(sdx__hip_smem_address(bar)),
                 "r"(parity)
                 : "memory");
#endif
}

/* The box of `map` whose first value is (k, row) into shared memory at
 * dst (1024-byte aligned), counted on `bar`. */
static __device__ __forceinline__ void sdx__hip_tma_load(uint16_t *dst, const sdx__hip_tmap *map, int k, int row, uint64_t *bar) {
#if defined(SDX_HIP_SIM)
    sdx_sim_tma_load(dst, map->opaque, k, row, bar);
#else
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
                     sdx__hip_smem_address(dst)),
                 "l"((uint64_t)(uintptr_t)map), "r"(k), "r"(row), "r"(sdx__hip_smem_address(bar))
                 : "memory");
#endif
}

/* The box of a 4-D `map` whose first value is at (c, x, y, n): a
 * channels-last picture's channels from c, pixels from (x, y) of image n;
 * coordinates may be negative or past the edges, where the box is zeros. */
static __device__ __forceinline__ void sdx__hip_tma_load4(uint16_t *dst, const sdx__hip_tmap *map, int c, int x, int y, int n,
                                                          uint64_t *bar) {
#if defined(SDX_HIP_SIM)
    const int at[4] = { c, x, y, n };
    sdx_sim_tma_load_nd(dst, map->opaque, at, bar);
#else
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(
                     sdx__hip_smem_address(dst)),
                 "l"((uint64_t)(uintptr_t)map), "r"(c), "r"(x), "r"(y), "r"(n), "r"(sdx__hip_smem_address(bar))
                 : "memory");
#endif
}

/* Has the TMA unit fetch a map's descriptor now, so that the first box
 * does not wait for it as well as for its data (a kernel parameter:
 * nothing an earlier kernel writes). */
static __device__ __forceinline__ void sdx__hip_tma_prefetch_map(const sdx__hip_tmap *map) {
#if defined(SDX_HIP_SIM)
    (void)map;
#else
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)(uintptr_t)map) : "memory");
#endif
}
#endif

/* A kernel's dynamic shared memory (the launch's byte count) as T *. */
#if defined(SDX_HIP_SIM)
#define SDX__HIP_DYNAMIC_SMEM(T, name) T *name = (T *)sdx_sim_dynamic_smem()
#else
#define SDX__HIP_DYNAMIC_SMEM(T, name) \
    extern __shared__ __align__(128) unsigned char sdx__hip_dynamic_smem[]; \
    T *name = (T *)sdx__hip_dynamic_smem
#endif

/* Butterfly sums and maxima within groups of `width` lanes (a power of
 * two up to the warp size). */
#if defined(__HIPCC__)
#define SDX__HIP_SHFL_XOR(v, m) __shfl_xor((v), (m))
#else
#define SDX__HIP_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))
#endif

template <typename T>
static __device__ __forceinline__ T sdx__hip_warp_sum(T v, int width) {
    for (int m = 1; m < width; m <<= 1) v += SDX__HIP_SHFL_XOR(v, m);
    return v;
}

static __device__ __forceinline__ float sdx__hip_warp_max(float v, int width) {
    for (int m = 1; m < width; m <<= 1) v = fmaxf(v, SDX__HIP_SHFL_XOR(v, m));
    return v;
}

/* Sum over the whole block (blockDim.x a multiple of the warp size, at
 * most 1024); every thread gets the result. `buf` holds 32 values. */
template <typename T>
static __device__ T sdx__hip_block_sum(T v, T *buf) {
    int lane = (int)threadIdx.x % SDX__HIP_WARP, warp = (int)threadIdx.x / SDX__HIP_WARP;
    int warps = (int)blockDim.x / SDX__HIP_WARP;
    v = sdx__hip_warp_sum(v, SDX__HIP_WARP);
    __syncthreads();                    /* buf may still be read by a previous call */
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    v = 0;
    for (int i = 0; i < warps; i++) v += buf[i];
    return v;
}
