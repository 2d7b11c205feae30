/* sdx_hip.h - the GPU backend of sdx.h: AMD (HIP) and NVIDIA (CUDA) in one header.
   Generated from src/hip/ by tools/amalgamate.sh; edit src/hip/, not this file.

   USAGE
     In exactly one file compiled by hipcc (AMD) or nvcc (NVIDIA):
         #define SDX_HIP_IMPLEMENTATION
         #include "sdx_hip.h"
     (nvcc: name it .cu or pass -x cu; hipcc: -x hip.) Do not define
     SDX_IMPLEMENTATION in that file: sdx.h's implementation stays in a C
     file of its own, built with any C compiler. Everywhere else (C or
     C++), #include "sdx_hip.h" for the declarations. Link with nvcc or
     hipcc (or add -lcudart / -lamdhip64). A program that never includes
     this header needs neither compiler.

         sdx_ctx *ctx = sdx_create(&desc);
         if (sdx_hip_use(ctx, 0) != SDX_OK)          // before loading models
             fprintf(stderr, "%s\n", sdx_last_error(ctx));   // stays on the CPU
         ... sdx_model_load, sdx_generate as usual ...
         size_t peak; sdx_device_bytes(ctx, &peak);   // VRAM high-water mark

   BUILD
     nvcc  -O2 -x cu -arch=sm_80 -c gpu.cu       (sm_80 and newer use tensor
                                                  cores; older GPUs run the
                                                  plain kernels)
     hipcc -O2 -x hip --offload-arch=gfx90a,gfx1100 -c gpu.cpp
     `make sdx-hip` builds the sdx CLI this way (examples/sdx_hip.cu).

   WHAT RUNS ON THE GPU
     Every kernel of the sdx_backend ops table, under sdx.h's precision
     policy: tensors in F32, F16 or BF16 storage (any mix), f32
     accumulation, f32 softmax, f32/f64 norm statistics, f16 stores that
     saturate at +-65504. GEMMs (linear layers, and convolutions as
     implicit GEMMs without an im2col buffer) run on the matrix units when
     x and w are both F16 or both BF16: NVIDIA tensor cores (mma.sync, sm_80+),
     AMD MFMA (gfx90a, gfx940-942) and WMMA (gfx1100-1103); otherwise, and
     for F32 operands, on a tiled f32 kernel (exact to f32 rounding).
     Attention is one fused kernel with an online softmax in f32 (no
     Nq x Nk matrix): for f16 or bf16 q, k, v on NVIDIA tensor cores
     (FlashAttention-2 style, S = QK^T, P and O in registers, mma.sync
     products; head dims padded to 48, 64, 80, 128, 160 or 512),
     otherwise a SIMT kernel sized for head dims 40, 64, 80, 128 and 160
     (others up to 512).

   CONFIGURATION (define before including, in the implementation file)
     SDX_HIP_NO_MATRIX_CORES   plain kernels only (for comparisons)
     SDX_HIP_GEMM_THREADS      threads of a matrix-unit GEMM block, 128 or
                               256, for every target (default: 128 on
                               sm_90, 256 on sm_80 and AMD)
     SDX_HIP_WGMMA=0           no Hopper wgmma GEMMs in sm_90a code
     SDX_HIP_TMA=0             Hopper's wgmma linears copy their operands
                               with the threads instead of the TMA
     SDX_HIP_FLASH_MT=1        attention up to head dim 64: 16 queries a
                               warp, not 32 (for A/B runs)
     SDX_HIP_PDL=1             NVIDIA Hopper: each kernel may start while
                               the previous one ends (programmatic
                               dependent launch; for A/B runs)
     SDX_HIP_FLASH_WGMMA=1     NVIDIA Hopper (sm_90a): attention of head
                               dims up to 80 on wgmma, FlashAttention-3
                               style (for A/B runs until measured; on in
                               the simulator's builds)
     SDX_HIP_FLASH_WGS=1       that kernel's blocks: one warpgroup of 64
                               queries, not two (128)
     SDX_HIP_EPI_PREFETCH=1    NVIDIA Hopper: the wgmma GEMMs fetch a
                               residual into shared memory before their
                               epilogue (for A/B runs until measured; on
                               in the simulator's builds)
     SDX_HIP_TMA_CONV=1        NVIDIA Hopper: stride-1 channels-last
                               convolutions fed by the TMA, the input
                               read in 4-D boxes (for A/B runs until
                               measured; on in the simulator's builds)
     SDX_HIP_SIM               compile for tests/gpu/sim.h, which runs the
                               kernels on the CPU (make test-gpu-sim)
     SDX_HIP_API               linkage of the sdx_hip_* functions (extern)

   The SDX_UNSAFE_* half-precision emulations of sdx.h are CPU-only.
*/
#ifndef SDX_HIP_H_INCLUDED
#define SDX_HIP_H_INCLUDED

/* ---- src/hip/api_hip.h ---- */
/* ===================================================================== */
/*  Public API: the GPU backend                                           */
/* ===================================================================== */
/* Declarations only: any C or C++ file may include this half. */
#include "sdx.h"

#ifndef SDX_HIP_API
#define SDX_HIP_API extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sdx_hip_info {
    char   name[256];        /* "NVIDIA H100 80GB HBM3", "AMD Radeon RX 7900 XTX" */
    char   arch[64];         /* "sm_90", "gfx1100"                          */
    size_t total_bytes;      /* device memory                               */
    size_t free_bytes;       /* free now                                    */
    int    matrix_units;     /* 1: GEMM and convolutions run on tensor/matrix
                                cores for f16 and bf16 operands (this build has
                                code for them and the device has them)       */
} sdx_hip_info;

/* Number of GPUs the runtime sees (0 when none or no driver). */
SDX_HIP_API int sdx_hip_device_count(void);
/* Facts about GPU `device_index`; SDX_ERR_UNSUPPORTED when there is none
 * (`info` then holds the reason in `name`). */
SDX_HIP_API sdx_result sdx_hip_device_info(int device_index, sdx_hip_info *info);
/* Puts the context on GPU `device_index`: load models after this call.
 * Fails with SDX_ERR_UNSUPPORTED (and a message naming the reason: no
 * device, no driver, no code for this GPU in the binary) and leaves the
 * context on the CPU. */
SDX_HIP_API sdx_result sdx_hip_use(sdx_ctx *ctx, int device_index);

#ifdef __cplusplus
}
#endif

#endif /* SDX_HIP_H_INCLUDED */

#if defined(SDX_HIP_IMPLEMENTATION) && !defined(SDX_HIP_IMPLEMENTATION_DONE)
#define SDX_HIP_IMPLEMENTATION_DONE
/* Internals are static; not every program uses every one of them. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

/* ---- src/hip/prelude.h ---- */
/* ===================================================================== */
/*  Prelude: one source for hipcc (AMD) and nvcc (NVIDIA)                 */
/* ===================================================================== */
/* The kernels are written against HIP's runtime names. Under nvcc they
 * are mapped onto CUDA's here, so NVIDIA users need no HIP install; the
 * list is exactly what this file uses. Matrix units: SDX__HIP_MMA says
 * which kind the code being compiled for the device has (0 none, 1
 * NVIDIA mma.sync sm_80+, 2 AMD MFMA CDNA2/3, 3 AMD WMMA RDNA3); a probe
 * kernel reports it at run time, so the host never picks a path the
 * loaded code object lacks. */
#if !defined(__HIPCC__) && !defined(__CUDACC__) && !defined(SDX_HIP_SIM)
#error "sdx_hip.h: compile the SDX_HIP_IMPLEMENTATION file with hipcc or nvcc"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#if defined(SDX_HIP_SIM)
/* the CPU simulator of tests/gpu/sim.h, included before this header,
 * supplies the runtime and device names (make test-gpu-sim) */
#define SDX__HIP_VENDOR "sim"
#elif defined(__HIPCC__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#define SDX__HIP_VENDOR "hip"
#else
#include <cuda_runtime.h>
#include <cuda.h>            /* the TMA's tensor-map types (the encoder comes through the runtime) */
#include <cuda_fp16.h>
#define SDX__HIP_VENDOR "cuda"
typedef cudaError_t    hipError_t;
typedef cudaDeviceProp hipDeviceProp_t;
#define hipSuccess                 cudaSuccess
#define hipErrorNoDevice           cudaErrorNoDevice
#define hipGetErrorString          cudaGetErrorString
#define hipGetLastError            cudaGetLastError
#define hipGetDeviceCount          cudaGetDeviceCount
#define hipGetDeviceProperties     cudaGetDeviceProperties
#define hipSetDevice               cudaSetDevice
#define hipGetDevice               cudaGetDevice
#define hipMalloc                  cudaMalloc
#define hipFree                    cudaFree
#define hipMemcpy                  cudaMemcpy
#define hipMemcpyHostToDevice      cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost      cudaMemcpyDeviceToHost
#define hipMemGetInfo              cudaMemGetInfo
#define hipDeviceSynchronize       cudaDeviceSynchronize
#define hipFuncSetAttribute        cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
typedef cudaStream_t    hipStream_t;
typedef cudaGraph_t     hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
#define hipStreamPerThread         cudaStreamPerThread
#define hipStreamSynchronize       cudaStreamSynchronize
#define hipMemcpyAsync             cudaMemcpyAsync
#define hipHostMalloc              cudaHostAlloc
#define hipHostFree                cudaFreeHost
#define hipStreamBeginCapture      cudaStreamBeginCapture
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipStreamEndCapture        cudaStreamEndCapture
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch             cudaGraphLaunch
#define hipGraphDestroy            cudaGraphDestroy
#define hipGraphExecDestroy        cudaGraphExecDestroy
#endif

/* A kernel parameter whose address the kernel takes (a tensor map):
 * CUDA's __grid_constant__; a plain parameter elsewhere. */
#ifndef __grid_constant__
#define __grid_constant__
#endif

/* Which matrix unit the device code being compiled has. */
#if defined(SDX_HIP_NO_MATRIX_CORES)
#define SDX__HIP_MMA 0
#elif defined(SDX_HIP_SIM)
#define SDX__HIP_MMA 1          /* the simulator's ldmatrix and mma.sync */
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SDX__HIP_MMA 1
#elif defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define SDX__HIP_MMA 2
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
#define SDX__HIP_MMA 3
#else
#define SDX__HIP_MMA 0
#endif

/* Hopper's warpgroup matrix instructions (wgmma): device code compiled
 * for sm_90a (nvcc -arch=sm_90a; plain sm_90 code cannot have them), and
 * the simulator's model of them. SDX_HIP_WGMMA=0 leaves them out. */
#if defined(SDX_HIP_WGMMA) && !SDX_HIP_WGMMA
#define SDX__HIP_WGMMA 0
#elif SDX__HIP_MMA == 1 && (defined(SDX_HIP_SIM) || defined(__CUDA_ARCH_FEAT_SM90_ALL))
#define SDX__HIP_WGMMA 1
#else
#define SDX__HIP_WGMMA 0
#endif

/* Built for NVIDIA (nvcc through this prelude; the simulator models
 * NVIDIA's instructions): the same in nvcc's host and device passes,
 * where SDX__HIP_MMA is the device pass's alone (0 in the host pass).
 * What the host computes for a launch, a kernel's shared memory say,
 * follows this, never SDX__HIP_MMA. */
#if defined(SDX_HIP_SIM) || (defined(__CUDACC__) && !defined(__HIPCC__))
#define SDX__HIP_NVIDIA 1
#else
#define SDX__HIP_NVIDIA 0
#endif

/* Threads that run in lockstep on the device code being compiled. */
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define SDX__HIP_WARP __AMDGCN_WAVEFRONT_SIZE
#else
#define SDX__HIP_WARP 32
#endif

/* ---- src/hip/device.cu ---- */
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

/* ---- src/hip/kernels.cu ---- */
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

/* ---- src/hip/gemm.cu ---- */
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


/* ---- src/hip/attention.cu ---- */
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

/* ---- src/hip/backend.cu ---- */
/* ===================================================================== */
/*  The backend: device memory, launches, sdx_hip_use                     */
/* ===================================================================== */
/* Everything runs in order on the calling thread's default stream
 * (hipStreamPerThread: a stream a graph can be captured from; the
 * synchronous copies wait for it); uploads and downloads are synchronous
 * copies, so a download sees every kernel before it. A recorded graph
 * (sdx_backend.graph) replays a model call's kernels and uploads with one
 * launch on the same stream. A launch error is reported by the op that launched; an
 * error inside a kernel surfaces at the next download (the tracer's
 * per-op downloads localise it). sdx.h checks every op's operands and
 * shapes before the call; the ops here refuse only sizes past the launch
 * grid. */

/* One recorded model call: the instantiated graph, and the pinned host
 * memory its upload copies read (refilled before each replay). */
#define SDX__HIP_GRAPH_SLOTS 4
#define SDX__HIP_STAGING ((size_t)64 << 10)
typedef struct {
    hipGraphExec_t exec;    /* NULL: nothing recorded */
    unsigned char *staging; /* SDX__HIP_STAGING bytes, pinned */
    size_t staged;          /* bytes of it the uploads so far took */
    unsigned generation;    /* the backend's buffers it was recorded with */
} sdx__hip_graph;

/* Device memory an op needs while it runs, grown to the largest need and
 * kept (sdx__hip_need). */
typedef struct {
    void *p;
    size_t bytes;
} sdx__hip_buf;

/* A convolution weight the backend keeps channels-last, [O][kh][kw][C]
 * instead of sdx's [O][C][kh][kw], known by its device address: the
 * channels-last convolutions then read it as it is instead of permuting a
 * copy every call (sdx__hip_weight_added). */
typedef struct {
    const void *data;
    int64_t o, c, taps;
    int dtype;
} sdx__hip_cl_weight;

typedef struct sdx__hip {
    int device;
    int mma;                /* matrix-unit kind of the loaded code (SDX__HIP_MMA) */
    int gemm_mma;           /* the GEMMs may use it (their shared memory granted) */
    int gemm_threads;       /* a block of the matrix-unit GEMM, as its device code has it */
    int wgmma;              /* its 128-tiles may run on Hopper's wgmma (sm_90a code; shared memory granted) */
    void *tmap_encode;      /* a linear's may be fed by the TMA: the driver's tensor-map encoder, or NULL */
    int attention_mma;      /* attention may (NVIDIA's mma.sync; shared memory granted) */
    int flash64_blocks[2][2]; /* blocks an SM of head dim 64's attention, [bf16][32-key tiles] */
    int gemm_blocks[2];     /* blocks an SM of the 128-tile GEMMs: [0] mma.sync's, [1] wgmma's and the TMA's */
    int flash_wg;           /* head dims up to 80 may run on wgmma (SDX__HIP_FLASH_WG; shared memory granted) */
    int warp;               /* threads per warp/wavefront */
    int sms;                /* multiprocessors (compute units) */
    size_t smem_optin;      /* dynamic shared memory a block may ask for */
    sdx__hip_buf sums;      /* group-norm partial sums (doubles) */
    sdx__hip_buf work;      /* a convolution's channels-last copies */
    sdx__hip_buf product;   /* a linear_geglu's product when it is not fused and the caller gave no h */
    sdx__hip_cl_weight *cl; /* weights kept channels-last, sorted by address */
    int n_cl, cap_cl;
    unsigned generation;    /* bumped when a buffer is replaced: graphs that used it are stale */
    sdx__hip_graph graphs[SDX__HIP_GRAPH_SLOTS];
    int recording, checking; /* the slot being captured, or whose staging the uploads refill; -1 none */
    char name[400];
    char arch[64];
} sdx__hip;

/* Every launch goes through here: the simulator (tests/gpu/sim.h) runs
 * kernels on the CPU where <<<>>> does not exist. */
template <typename... P, typename... A>
static void sdx__hip_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, A... args) {
#if defined(SDX_HIP_SIM)
    sdx_sim_launch(kernel, grid, block, smem, args...);
#elif SDX__HIP_PDL
    /* may start before the previous kernel ends (sdx__hip_wait_prior) */
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute overlap = {};
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = hipStreamPerThread;
    config.attrs = &overlap;
    config.numAttrs = 1;
    (void)cudaLaunchKernelEx(&config, kernel, ((P)args)...);      /* an error stays the thread's last: sdx__hip_check */
#else
    kernel<<<grid, block, smem, hipStreamPerThread>>>(((P)args)...);
#endif
}

static sdx__hip *sdx__hip_of(sdx_ctx *ctx) { return (sdx__hip *)sdx_backend_user(ctx); }

/* The runtime's last error, if any, as an sdx error naming the op. */
static int sdx__hip_check(sdx_ctx *ctx, const char *op) {
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) return SDX_OK;
    return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: GPU error: %s", op, hipGetErrorString(e));
}

/* ---- memory ---------------------------------------------------------------- */

static void *sdx__hip_alloc(void *user, size_t bytes) {
    void *p = NULL;
    sdx__hip *s = (sdx__hip *)user;
    if (hipSetDevice(s->device) != hipSuccess || hipMalloc(&p, bytes) != hipSuccess) {
        (void)hipGetLastError();    /* an out-of-memory is not sticky: clear it */
        return NULL;
    }
    return p;
}

static void sdx__hip_free(void *user, void *ptr) {
    (void)user;
    if (ptr) (void)hipFree(ptr);
}

static int sdx__hip_copy_status(hipError_t e) { return e == hipSuccess ? SDX_OK : SDX_ERR_UNSUPPORTED; }

/* While a graph is recorded an upload is staged in pinned memory and
 * copied from there by the graph (a synchronous copy cannot be captured);
 * before a replay it only refills its place in the staging. */
static int sdx__hip_upload(void *user, void *dst, const void *src, size_t bytes) {
    sdx__hip *s = (sdx__hip *)user;
    int slot = s->recording >= 0 ? s->recording : s->checking;
    if (!bytes) return SDX_OK;
    if (slot >= 0) {
        sdx__hip_graph *g = &s->graphs[slot];
        unsigned char *at = g->staging + g->staged;
        if (bytes > SDX__HIP_STAGING - g->staged) return SDX_ERR_NOMEM;     /* the call is not recorded */
        memcpy(at, src, bytes);
        g->staged += (bytes + 255) / 256 * 256;
        if (s->recording >= 0) return sdx__hip_copy_status(hipMemcpyAsync(dst, at, bytes, hipMemcpyHostToDevice, hipStreamPerThread));
        return SDX_OK;
    }
    return sdx__hip_copy_status(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice));
}

static int sdx__hip_download(void *user, void *dst, const void *src, size_t bytes) {
    (void)user;
    return bytes ? sdx__hip_copy_status(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost)) : SDX_OK;
}

static void sdx__hip_release(void *user) {
    sdx__hip *s = (sdx__hip *)user;
    if (!s) return;
    if (s->sums.p) (void)hipFree(s->sums.p);
    if (s->work.p) (void)hipFree(s->work.p);
    if (s->product.p) (void)hipFree(s->product.p);
    free(s->cl);
    for (int i = 0; i < SDX__HIP_GRAPH_SLOTS; i++) {
        if (s->graphs[i].exec) (void)hipGraphExecDestroy(s->graphs[i].exec);
        if (s->graphs[i].staging) (void)hipHostFree(s->graphs[i].staging);
    }
    free(s);
}

/* ---- graphs (sdx_backend.graph) -------------------------------------------- */

static int sdx__hip_graph_fail(sdx_ctx *ctx, const char *what) {
    hipError_t e = hipGetLastError();
    return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "graph: %s failed: %s", what, hipGetErrorString(e));
}

/* Ends a capture; keep: instantiate it into the slot and launch it. */
static int sdx__hip_graph_end(sdx_ctx *ctx, sdx__hip *s, sdx__hip_graph *g, int keep) {
    hipGraph_t graph = NULL;
    hipError_t e = hipStreamEndCapture(hipStreamPerThread, &graph);
    s->recording = -1;
    if (e != hipSuccess || !keep) {
        if (graph) (void)hipGraphDestroy(graph);
        (void)hipGetLastError();
        return keep ? sdx__hip_graph_fail(ctx, "ending the capture") : SDX_OK;
    }
    e = hipGraphInstantiateWithFlags(&g->exec, graph, 0);
    (void)hipGraphDestroy(graph);
    if (e != hipSuccess) { g->exec = NULL; return sdx__hip_graph_fail(ctx, "instantiating the capture"); }
    g->generation = s->generation;
    if (hipGraphLaunch(g->exec, hipStreamPerThread) != hipSuccess) return sdx__hip_graph_fail(ctx, "launching the graph");
    return SDX_OK;
}

static int sdx__hip_graph_op(sdx_ctx *ctx, int slot, int action) {
    sdx__hip *s = sdx__hip_of(ctx);
    sdx__hip_graph *g;
    if (slot < 0 || slot >= SDX__HIP_GRAPH_SLOTS) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "graph: no slot %d", slot);
    g = &s->graphs[slot];
    switch (action) {
    case SDX_GRAPH_RECORD:
        s->checking = -1;
        if (g->exec) (void)hipGraphExecDestroy(g->exec);
        g->exec = NULL;
        g->staged = 0;
        if (!g->staging && hipHostMalloc((void **)&g->staging, SDX__HIP_STAGING, 0) != hipSuccess) {
            g->staging = NULL;
            return sdx__hip_graph_fail(ctx, "pinned staging memory");
        }
        if (hipStreamBeginCapture(hipStreamPerThread, hipStreamCaptureModeRelaxed) != hipSuccess)
            return sdx__hip_graph_fail(ctx, "beginning a capture");
        s->recording = slot;
        return SDX_OK;
    case SDX_GRAPH_KEEP:
        return sdx__hip_graph_end(ctx, s, g, 1);
    case SDX_GRAPH_DROP:
        s->checking = -1;   /* uploads copy again; a recording from before stays */
        return s->recording >= 0 ? sdx__hip_graph_end(ctx, s, g, 0) : SDX_OK;
    case SDX_GRAPH_CHECK:
        /* the last launch reads the staging until it is done */
        if (hipStreamSynchronize(hipStreamPerThread) != hipSuccess) return sdx__hip_graph_fail(ctx, "waiting for the stream");
        g->staged = 0;
        s->checking = slot;
        return SDX_OK;
    case SDX_GRAPH_LAUNCH:
        s->checking = -1;
        if (!g->exec || g->generation != s->generation) return 1;
        if (hipGraphLaunch(g->exec, hipStreamPerThread) != hipSuccess) return sdx__hip_graph_fail(ctx, "launching the graph");
        return SDX_OK;
    default:
        return sdx_fail(ctx, SDX_ERR_INVALID_ARG, "graph: unknown action %d", action);
    }
}

/* ---- launch-grid limits (sdx.h checks the ops' contracts before a call) ------ */

static int sdx__hip_bad(sdx_ctx *ctx, const char *op, const char *want, const sdx_tensor *a, const sdx_tensor *b) {
    char sa[96], sb[96];
    sdx_shape_str(a, sa, sizeof sa);
    if (b) sdx_shape_str(b, sb, sizeof sb); else sb[0] = 0;
    return sdx_fail(ctx, SDX_ERR_INVALID_ARG, "%s: expected %s (got %s%s%s)", op, want, sa, b ? ", " : "", sb);
}

/* Blocks for a grid-stride loop over n elements. */
static unsigned sdx__hip_blocks(int64_t n, int threads) {
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

/* ---- elementwise and layout ---------------------------------------------------- */

/* Values a thread of a memory-bound kernel takes at once (its template
 * argument W): 8, as 16-byte accesses, when the sizes allow it (no group
 * of 8 straddles what the kernel indexes by: a row, plane, image or
 * channel) and every pointer is 16-byte aligned; else 1. */
static int sdx__hip_width(int sizes_ok, const void *a, const void *b = NULL, const void *c = NULL, const void *d = NULL) {
    return sizes_ok && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0 && (uintptr_t)c % 16 == 0 && (uintptr_t)d % 16 == 0 ? 8 : 1;
}

static int sdx__hip_ew(sdx_ctx *ctx, const char *op, int kind, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b, float s) {
    int64_t n = sdx_tensor_numel(y);
    int w = sdx__hip_width(n % 8 == 0, y->data, a->data, b ? b->data : NULL);
    if (n == 0) return SDX_OK;
    sdx__hip_launch(w == 8 ? sdx__hip_k_ew<8> : sdx__hip_k_ew<1>, sdx__hip_blocks(n / w, 256), 256, 0, kind, y->data, y->dtype, a->data,
                    a->dtype, b ? b->data : NULL, b ? (int)b->dtype : 0, n, s);
    return sdx__hip_check(ctx, op);
}

/* compute: the GPU computes in f32 (its bf16 mode is its half activations) */
static int sdx__hip_silu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_ew(ctx, "silu", SDX__HIP_SILU, y, x, NULL, 0);
}
static int sdx__hip_gelu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_ew(ctx, "gelu", SDX__HIP_GELU, y, x, NULL, 0);
}
static int sdx__hip_quick_gelu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    return sdx__hip_ew(ctx, "quick_gelu", SDX__HIP_QUICK_GELU, y, x, NULL, 0);
}
static int sdx__hip_scale_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) { return sdx__hip_ew(ctx, "scale", SDX__HIP_SCALE, y, x, NULL, s); }
static int sdx__hip_copy_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__hip_ew(ctx, "copy", SDX__HIP_COPY, y, x, NULL, 0); }
static int sdx__hip_add_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__hip_ew(ctx, "add", SDX__HIP_ADD, y, a, b, 0);
}
static int sdx__hip_mul_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__hip_ew(ctx, "mul", SDX__HIP_MUL, y, a, b, 0);
}
static int sdx__hip_leaky_relu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float slope) {
    return sdx__hip_ew(ctx, "leaky_relu", SDX__HIP_LEAKY_RELU, y, x, NULL, slope);
}

/* clamp and tanh_clamp (bounds and limit checked in ops.c); y may alias x */
static int sdx__hip_clamp_run(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, float lo, float hi, float limit) {
    int64_t n = sdx_tensor_numel(y);
    if (n == 0) return SDX_OK;
    sdx__hip_launch(sdx__hip_k_clamp, sdx__hip_blocks(n, 256), 256, 0, y->data, y->dtype, x->data, x->dtype, n, lo, hi, limit);
    return sdx__hip_check(ctx, op);
}
static int sdx__hip_clamp_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    return sdx__hip_clamp_run(ctx, "clamp", y, x, lo, hi, 0);
}
static int sdx__hip_tanh_clamp_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    return sdx__hip_clamp_run(ctx, "tanh_clamp", y, x, 0, 0, limit);
}

static int sdx__hip_geglu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    static const char op[] = "geglu";
    int64_t n = sdx_tensor_numel(y), d;
    d = y->shape[y->ndim - 1];
    if (n == 0 || d == 0) return SDX_OK;
    int w = sdx__hip_width(d % 8 == 0, y->data, x->data);
    sdx__hip_launch(w == 8 ? sdx__hip_k_geglu<8> : sdx__hip_k_geglu<1>, sdx__hip_blocks(n / w, 256), 256, 0, y->data, y->dtype, x->data,
                    x->dtype, n, d);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_add_channel_bias_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v) {
    static const char op[] = "add_channel_bias";
    int64_t n = sdx_tensor_numel(y), nc;
    nc = x->shape[0] * x->shape[1];
    if (n == 0 || nc == 0) return SDX_OK;
    int w = sdx__hip_width(n / nc % 8 == 0, y->data, x->data);
    sdx__hip_launch(w == 8 ? sdx__hip_k_chan_bias<8> : sdx__hip_k_chan_bias<1>, sdx__hip_blocks(n / w, 256), 256, 0, y->data, y->dtype,
                    x->data, x->dtype, v->data, v->dtype, n, n / nc);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_resize_nearest_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "resize_nearest";
    int64_t n = sdx_tensor_numel(y);
    if (n == 0) return SDX_OK;
    sdx__hip_launch(sdx__hip_k_resize, sdx__hip_blocks(n, 256), 256, 0, y->data, y->dtype, x->data, x->dtype, n, x->shape[2], x->shape[3],
                    y->shape[2], y->shape[3]);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_pad_circular_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    static const char op[] = "pad_circular";
    int64_t n = sdx_tensor_numel(y);
    (void)bottom; (void)right;   /* y's shape says them (checked in sdx.h) */
    if (n == 0) return SDX_OK;
    sdx__hip_launch(sdx__hip_k_pad_circular, sdx__hip_blocks(n, 256), 256, 0, y->data, y->dtype, x->data, x->dtype, n, x->shape[2], x->shape[3],
                    y->shape[2], y->shape[3], top, left);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_concat_channels_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    static const char op[] = "concat_channels";
    int64_t n = sdx_tensor_numel(y), na = a->shape[1] * a->shape[2] * a->shape[3], nb = b->shape[1] * b->shape[2] * b->shape[3];
    if (n == 0) return SDX_OK;
    int w = sdx__hip_width(na % 8 == 0 && nb % 8 == 0, y->data, a->data, b->data);
    sdx__hip_launch(w == 8 ? sdx__hip_k_concat<8> : sdx__hip_k_concat<1>, sdx__hip_blocks(n / w, 256), 256, 0, y->data, y->dtype, a->data,
                    a->dtype, b->data, b->dtype, n, na, nb);
    return sdx__hip_check(ctx, op);
}

/* [batch][rows][cols] -> [batch][cols][rows]: 16-bit values of one type
 * 16 bytes at a time where the sizes and addresses allow, else value by
 * value with any conversion. */
static int sdx__hip_transpose(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, int64_t batch, int64_t rows, int64_t cols) {
    const int raw16 = x->dtype == y->dtype && x->dtype != SDX_F32 && sdx__hip_width(rows % 8 == 0 && cols % 8 == 0, y->data, x->data) == 8;
    if (batch == 0 || rows == 0 || cols == 0) return SDX_OK;
    if ((rows + 31) / 32 > 65535 || batch > 65535) return sdx__hip_bad(ctx, op, "at most 2M rows and 65535 images", x, NULL);
    if (raw16)
        sdx__hip_launch(sdx__hip_k_transpose16, dim3((unsigned)((cols + 63) / 64), (unsigned)((rows + 63) / 64), (unsigned)batch), 256, 0,
                        (uint16_t *)y->data, (const uint16_t *)x->data, rows, cols);
    else
        sdx__hip_launch(sdx__hip_k_transpose, dim3((unsigned)((cols + 31) / 32), (unsigned)((rows + 31) / 32), (unsigned)batch), dim3(32, 8),
                        0, y->data, y->dtype, x->data, x->dtype, rows, cols);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_nchw_to_nlc_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nchw_to_nlc";
    return sdx__hip_transpose(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2] * x->shape[3]);
}

static int sdx__hip_nlc_to_nchw_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nlc_to_nchw";
    return sdx__hip_transpose(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2]);
}

/* ---- norms and softmax ------------------------------------------------------------ */

/* Makes `b` hold at least `bytes` for op's `what`. */
static int sdx__hip_need(sdx_ctx *ctx, sdx__hip *s, sdx__hip_buf *b, size_t bytes, const char *op, const char *what) {
    if (b->bytes >= bytes) return SDX_OK;
    if (s->recording >= 0)  /* a capture cannot free memory: the call runs as it comes */
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: its %s must grow, which a graph capture cannot do", op, what);
    s->generation++;        /* a graph that used the old one is stale */
    if (b->p) (void)hipFree(b->p);
    b->p = NULL;
    b->bytes = 0;
    if (hipMalloc(&b->p, bytes) == hipSuccess) b->bytes = bytes;
    else { (void)hipGetLastError(); b->p = NULL; }
    sdx_backend_scratch(ctx, s->sums.bytes + s->work.bytes + s->product.bytes);
    return b->p ? SDX_OK : sdx_fail(ctx, SDX_ERR_NOMEM, "%s: out of device memory for %s (%zu bytes)", op, what, bytes);
}

static int sdx__hip_group_norm_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                                  const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu, sdx_dtype compute) {
    (void)compute;
    static const char op[] = "group_norm";
    sdx__hip *s = sdx__hip_of(ctx);
    int64_t channels, spatial, count, ng;
    int parts, rc;
    channels = x->shape[1];
    if (sdx_tensor_numel(x) == 0 || channels == 0) return SDX_OK;
    spatial = sdx_tensor_numel(x) / (x->shape[0] * channels);
    count = channels / groups * spatial;
    ng = x->shape[0] * groups;
    if (spatial == 0) return SDX_OK;
    if (ng > 65535) return sdx__hip_bad(ctx, op, "at most 65535 (image, group) pairs", x, NULL);
    /* about 16 K values per block, at most 128 blocks per group */
    parts = (int)((count + 16383) / 16384);
    parts = parts < 1 ? 1 : (parts > 128 ? 128 : parts);
    if ((rc = sdx__hip_need(ctx, s, &s->sums, (size_t)((2 * parts + 1) * ng) * sizeof(double), op, "partial sums")) != SDX_OK) return rc;
    {
        dim3 grid((unsigned)parts, (unsigned)ng);
        double *psum = (double *)s->sums.p, *psq = psum + ng * parts, *shift = psum + 2 * ng * parts;
        int w = sdx__hip_width(spatial % 8 == 0, y->data, x->data);
        sdx__hip_launch(w == 8 ? sdx__hip_k_gn_stats<8> : sdx__hip_k_gn_stats<1>, grid, SDX__HIP_GN_THREADS, 0, x->data, x->dtype, count,
                        parts, psum, psq, shift);
        sdx__hip_launch(w == 8 ? sdx__hip_k_gn_apply<8> : sdx__hip_k_gn_apply<1>, grid, SDX__HIP_GN_THREADS, 0, y->data, y->dtype, x->data,
                        x->dtype, count, parts, psum, psq, shift, groups, spatial, eps, gamma ? gamma->data : NULL,
                        gamma ? (int)gamma->dtype : 0, beta ? beta->data : NULL, beta ? (int)beta->dtype : 0, fuse_silu);
    }
    return sdx__hip_check(ctx, op);
}

/* Blocks for one warp per row, 256 threads a block. */
static unsigned sdx__hip_row_blocks(const sdx__hip *s, int64_t rows) {
    int64_t per = 256 / s->warp;
    return (unsigned)((rows + per - 1) / per);
}

/* A row in registers (sdx__hip_k_layer_norm_row) up to 5 loads of 8
 * values a lane, 1280 values a warp of 32: SD's widths (320 to 1280) and
 * the text encoders' (768 to 1280). */
#define SDX__HIP_LN_LOADS 5

static int sdx__hip_layer_norm_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                                  const sdx_tensor *gamma, const sdx_tensor *beta) {
    static const char op[] = "layer_norm";
    const sdx__hip *s = sdx__hip_of(ctx);
    const void *g = gamma ? gamma->data : NULL, *b = beta ? beta->data : NULL;
    int64_t d, rows;
    int w;
    d = x->shape[x->ndim - 1];
    if (d == 0 || sdx_tensor_numel(x) == 0) return SDX_OK;
    rows = sdx_tensor_numel(x) / d;
    w = sdx__hip_width(d % 8 == 0, y->data, x->data, g, b);
    sdx__hip_launch(w == 8 && d <= (int64_t)s->warp * 8 * SDX__HIP_LN_LOADS ? sdx__hip_k_layer_norm_row<SDX__HIP_LN_LOADS>
                    : w == 8                                               ? sdx__hip_k_layer_norm<8>
                                                                           : sdx__hip_k_layer_norm<1>,
                    sdx__hip_row_blocks(s, rows), 256, 0, y->data, y->dtype, x->data, x->dtype, rows, d, eps, g,
                    gamma ? (int)gamma->dtype : 0, b, beta ? (int)beta->dtype : 0);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_softmax_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "softmax";
    int64_t d, rows;
    d = x->shape[x->ndim - 1];
    if (d == 0 || sdx_tensor_numel(x) == 0) return SDX_OK;
    rows = sdx_tensor_numel(x) / d;
    sdx__hip_launch(sdx__hip_k_softmax, sdx__hip_row_blocks(sdx__hip_of(ctx), rows), 256, 0, y->data, y->dtype, x->data, x->dtype, rows, d);
    return sdx__hip_check(ctx, op);
}

/* ---- linear and conv2d ---------------------------------------------------------------- */

/* The matrix-unit GEMM kernels of one tile size BT: [A's kind][bf16]
 * [16-byte loads: every row starts 16-byte aligned]. Channels-last copies
 * always have such rows (C % 8 == 0), so that kind has only the one. The
 * value-by-value gather comes in 64-tiles alone (sdx__hip_gemm_plan): at
 * 128 its registers would spill, and only a convolution of a few
 * channels (a 4-channel conv_in) takes it. */
typedef void (*sdx__hip_gemm_kernel)(sdx__hip_gemm);
template <int BT>
static sdx__hip_gemm_kernel sdx__hip_gemm_mma_kernel(int ak, int bf16, int vw) {
    static const sdx__hip_gemm_kernel kernels[3][2][2] = {
        { { sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, 0, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, 1, BT> },
          { sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, 0, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, 1, BT> } },
        { { sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_F16, 0, 64>, sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_F16, 1, 64> },
          { sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_BF16, 0, 64>, sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_BF16, 1, 64> } },
        { { sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, 1, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, 1, BT> },
          { sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, 1, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, 1, BT> } } };
    return kernels[ak][bf16 != 0][vw != 0];
}

/* Lets a kernel have `bytes` of dynamic shared memory (past the 48 KiB a
 * launch gets without asking); 0 when the device refuses. Once per
 * context, at sdx_hip_use: the attribute is the kernel's, not the
 * launch's, and setting it then keeps it out of graph captures. */
static int sdx__hip_grant(const sdx__hip *s, const void *kernel, int bytes) {
    if ((size_t)bytes > s->smem_optin) return 0;
#if defined(__HIPCC__)
    (void)kernel;
    return 1;       /* AMD: a block may use all of its LDS without asking (HIP ignores the attribute there) */
#endif
    if (bytes <= 48 * 1024) return 1;
    if (hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, bytes) != hipSuccess) {
        (void)hipGetLastError();
        return 0;
    }
    return 1;
}

/* Every matrix-unit GEMM kernel's shared memory; 0 when refused, and the
 * GEMMs then run on the SIMT kernel. */
static int sdx__hip_gemm_grant(const sdx__hip *s) {
    for (int i = 0; i < 12; i++)
        if (!sdx__hip_grant(s, (const void *)sdx__hip_gemm_mma_kernel<128>(i / 4, i & 2, i & 1), sdx__hip_tile<128>::SMEM) ||
            !sdx__hip_grant(s, (const void *)sdx__hip_gemm_mma_kernel<64>(i / 4, i & 2, i & 1), sdx__hip_tile<64>::SMEM))
            return 0;
    return 1;
}

/* The wgmma GEMM kernels: [channels-last convolution][bf16] (linears
 * and channels-last convolutions have 16-byte rows; the gather has none). */
template <int BN>
static sdx__hip_gemm_kernel sdx__hip_gemm_wgmma_kernel(int nhwc, int bf16) {
    static const sdx__hip_gemm_kernel kernels[2][2] = {
        { sdx__hip_k_gemm_wgmma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_wgmma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, BN> },
        { sdx__hip_k_gemm_wgmma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_wgmma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, BN> } };
    return kernels[nhwc != 0][bf16 != 0];
}

/* Their shared memory, both widths; 0 when refused. */
static int sdx__hip_wgmma_grant(const sdx__hip *s) {
    for (int i = 0; i < 4; i++)
        if (!sdx__hip_grant(s, (const void *)sdx__hip_gemm_wgmma_kernel<128>(i / 2, i % 2), sdx__hip_wg_tile<128>::SMEM) ||
            !sdx__hip_grant(s, (const void *)sdx__hip_gemm_wgmma_kernel<160>(i / 2, i % 2), sdx__hip_wg_tile<160>::SMEM))
            return 0;
    return 1;
}

/* The TMA-fed wgmma kernels: [channels-last convolution][bf16]. */
typedef void (*sdx__hip_tma_kernel)(sdx__hip_gemm, const sdx__hip_tmap, const sdx__hip_tmap);
template <int BN>
static sdx__hip_tma_kernel sdx__hip_gemm_tma_kernel(int nhwc, int bf16) {
    static const sdx__hip_tma_kernel kernels[2][2] = {
        { sdx__hip_k_gemm_tma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_tma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, BN> },
        { sdx__hip_k_gemm_tma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_tma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, BN> } };
    return kernels[nhwc != 0][bf16 != 0];
}

/* The TMA kernels' shared memory, both widths, kinds and types; 0 when refused. */
static int sdx__hip_tma_grant(const sdx__hip *s) {
    for (int i = 0; i < 4; i++)
        if (!sdx__hip_grant(s, (const void *)sdx__hip_gemm_tma_kernel<128>(i / 2, i % 2), sdx__hip_tma_tile<128>::SMEM) ||
            !sdx__hip_grant(s, (const void *)sdx__hip_gemm_tma_kernel<160>(i / 2, i % 2), sdx__hip_tma_tile<160>::SMEM))
            return 0;
    return 1;
}

/* The driver's cuTensorMapEncodeTiled, through the runtime (no link to
 * the driver library), where this build has the TMA kernels; else NULL. */
static void *sdx__hip_tmap_encoder(void) {
    void *fn = NULL;
#if !SDX__HIP_TMA
#elif defined(SDX_HIP_SIM)
    fn = sdx_sim_tmap_encoder();
#elif SDX__HIP_NVIDIA && CUDART_VERSION >= 12050
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
        fn = NULL;
    (void)hipGetLastError();
#endif
    return fn;
}

/* The tensor map of a tensor of 16-bit values: `rank` (2 to 4)
 * dimensions of dims[d] values (dims[0] a row's), dimension d + 1
 * strides[d] bytes apart, read in boxes of box[0] = 64 values by box[1] x
 * ... rows in the 128-byte swizzle, zeros past the edges. 0 when the
 * driver refuses it. */
static int sdx__hip_tmap_nd(const sdx__hip *s, sdx__hip_tmap *map, const void *base, int bf16, int rank, const uint64_t *dims,
                         const uint64_t *strides, const uint32_t *box) {
#if SDX__HIP_TMA && defined(SDX_HIP_SIM)
    (void)bf16;
    return s->tmap_encode && sdx_sim_tmap_encode_nd(map->opaque, base, 2, rank, dims, strides, box) == 0;
#elif SDX__HIP_TMA && SDX__HIP_NVIDIA && CUDART_VERSION >= 12050
    typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                                  const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    cuuint64_t d[4], st[3];
    cuuint32_t b[4];
    const cuuint32_t steps[4] = { 1, 1, 1, 1 };
    static_assert(sizeof(CUtensorMap) == sizeof(sdx__hip_tmap), "a tensor map's bytes");
    if (rank < 2 || rank > 4) return 0;
    for (int i = 0; i < rank; i++) {
        d[i] = (cuuint64_t)dims[i];
        b[i] = (cuuint32_t)box[i];
        if (i + 1 < rank) st[i] = (cuuint64_t)strides[i];
    }
    return s->tmap_encode &&
           ((encode_fn)s->tmap_encode)((CUtensorMap *)map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                       (cuuint32_t)rank, (void *)base, d, st, b, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
#else
    (void)s, (void)map, (void)base, (void)bf16, (void)rank, (void)dims, (void)strides, (void)box;
    return 0;
#endif
}

/* A row-major matrix, `rows` rows of `cols`, in boxes of 64 values by
 * box_rows rows. */
static int sdx__hip_tmap_2d(const sdx__hip *s, sdx__hip_tmap *map, const void *base, int bf16, int64_t cols, int64_t rows,
                            int box_rows) {
    const uint64_t dims[2] = { (uint64_t)cols, (uint64_t)rows }, pitch = (uint64_t)cols * 2;
    const uint32_t box[2] = { 64, (uint32_t)box_rows };
    return sdx__hip_tmap_nd(s, map, base, bf16, 2, dims, &pitch, box);
}

/* A convolution's channels-last input x [images][H][W][C] in boxes of 64
 * channels by the tile's pixels (sdx__hip_conv_tma_box); 0 where the
 * convolution has no such box. */
static int sdx__hip_tmap_conv(const sdx__hip *s, sdx__hip_tmap *map, const sdx__hip_gemm &g, int bf16, int64_t images) {
    const sdx__hip_conv_box b = sdx__hip_conv_tma_box(g);
    const uint64_t c = (uint64_t)g.C, dims[4] = { c, (uint64_t)g.W, (uint64_t)g.H, (uint64_t)images };
    const uint64_t strides[3] = { c * 2, c * 2 * (uint64_t)g.W, c * 2 * (uint64_t)g.W * (uint64_t)g.H };
    const uint32_t box[4] = { 64, (uint32_t)b.w, (uint32_t)b.h, 1 };
    return b.w > 0 && sdx__hip_tmap_nd(s, map, g.x, bf16, 4, dims, strides, box);
}

/* A linear of one image, or (nhwc) a channels-last convolution of
 * `images`, launched on the TMA kernel, BN columns a tile, if its tensor
 * maps can be made; 0 leaves it to sdx__hip_k_gemm_wgmma. */
template <int BN>
static int sdx__hip_gemm_tma(const sdx__hip *s, const sdx__hip_gemm &g, dim3 grid, int nhwc, int64_t images) {
    const int bf16 = g.xt == SDX_BF16;
    sdx__hip_tmap ta, tw;
    if (!(nhwc ? sdx__hip_tmap_conv(s, &ta, g, bf16, images) : sdx__hip_tmap_2d(s, &ta, g.x, bf16, g.K, g.M, 128)) ||
        !sdx__hip_tmap_2d(s, &tw, g.w, bf16, g.K, g.N, g.geglu ? BN / 2 : BN))
        return 0;
    sdx__hip_launch(sdx__hip_gemm_tma_kernel<BN>(nhwc, bf16), grid, SDX__HIP_TMA_THREADS, (size_t)sdx__hip_tma_tile<BN>::SMEM, g, ta, tw);
    return 1;
}

/* x and w both in half types: the matrix units can multiply them, w
 * copied in x's type where the types differ (the SDXL VAE's bf16
 * activations and an f16 checkpoint), as the CPU's bf16 mode packs f16
 * weights into bf16 panels. */
static int sdx__hip_gemm_mma_halves(const sdx__hip *s, int xt, int wt) { return s->gemm_mma && xt != SDX_F32 && wt != SDX_F32; }

/* The matrix-unit kernels themselves take x and w of one half type. */
static int sdx__hip_gemm_mma_takes(const sdx__hip *s, int xt, int wt) { return sdx__hip_gemm_mma_halves(s, xt, wt) && xt == wt; }

static int sdx__hip_gemm_mma_converts_w(const sdx__hip *s, int xt, int wt) { return sdx__hip_gemm_mma_halves(s, xt, wt) && xt != wt; }

/* w [O][C][taps] as [O][taps][C] (or only converted, taps 1) in type yt at
 * y; 8 values a thread where C and the channels a block takes allow. */
static void sdx__hip_permute_taps(void *y, int yt, const sdx_tensor *w, int64_t c, int taps) {
    const int cb8 = SDX__HIP_PERMUTE_VALUES / taps / 8 * 8, w8 = cb8 > 0 && sdx__hip_width(c % 8 == 0, y, w->data) == 8;
    const int cb = w8 ? cb8 : SDX__HIP_PERMUTE_VALUES / taps;
    sdx__hip_launch(w8 ? sdx__hip_k_permute_taps<8> : sdx__hip_k_permute_taps<1>, dim3((unsigned)((c + cb - 1) / cb), (unsigned)w->shape[0]),
                    256, 0, y, yt, w->data, (int)w->dtype, c, taps, cb);
}

/* How a GEMM runs on the matrix units. Tiles of 128 rows (by 160
 * columns on the wgmma kernels where N allows, else 128) when they fill
 * three quarters of the GPU's block slots or more: the SMs times the
 * blocks an SM the tile's kernel holds (the runtime's occupancy query:
 * one of the wgmma and TMA kernels, whose six stages take 221 KiB; two
 * of mma.sync's on Hopper). Else, with k long enough (16 steps and
 * more), the same tiles with k split over `split` blocks so that all of
 * them start in one wave (each part 8 steps at least; f32 sums added in
 * order afterwards): SD 1.5's 16x16 and 8x8 levels have 32 and 16 tiles
 * of 128 x 160 for an H200's 132 SMs. Counting 128-wide tiles and two
 * blocks an SM, as this did before, split those into 192 and 208 blocks
 * of one-block SMs: a second wave of partial sums. Else tiles of 64, or
 * on the wgmma kernels the 128-tiles whole where k is long (a wave with
 * idle SMs costs less than a split's second one) or they fill a third
 * of the slots: SD 1.5's 2048 x 640 x 640 linears took 16.7 us as 320
 * mma.sync 64-tiles, where a one-wave TMA tile costs about 8 us beside
 * its 0.45 us a k-step (2048 x 1280 x K: 17.1 us at K = 1280, 44.3 at
 * 5120), 12.5 for these 10 steps. Not the matrix units: mma 0.
 * SDX_HIP_SPLIT_WAVES=0 plans as before (tools/gpu-session.sh's `plan2`
 * compares them on a GPU). */
#if defined(SDX_HIP_SPLIT_WAVES)
#define SDX__HIP_SPLIT_WAVES SDX_HIP_SPLIT_WAVES
#else
#define SDX__HIP_SPLIT_WAVES 1
#endif
typedef struct {
    int mma, bt, split;
} sdx__hip_plan;

static sdx__hip_plan sdx__hip_gemm_plan(const sdx__hip *s, const sdx__hip_gemm &g, int ak, int64_t batch) {
    sdx__hip_plan p = { sdx__hip_gemm_mma_takes(s, g.xt, g.wt) && g.K < 0x7fffffff - SDX__HIP_MBK && g.M < 0x7fffff00 && g.N < 0x7fffff00, 128,
                        1 };
    /* the kernel a 128-tile will take (sdx__hip_gemm_run decides it again with the operands' alignment) */
    const int wg = s->wgmma && ak != SDX__HIP_A_CONV && g.K % 8 == 0, bn = SDX__HIP_SPLIT_WAVES && wg && SDX__HIP_WG_WIDE && g.N % 160 == 0 ? 160 : 128;
    const int64_t slots = (int64_t)s->sms * (SDX__HIP_SPLIT_WAVES ? s->gemm_blocks[wg] : SDX__HIP_GEMM_MIN_BLOCKS);
    const int64_t tiles = (g.M + 127) / 128 * ((g.N + bn - 1) / bn) * batch, steps = (g.K + SDX__HIP_MBK - 1) / SDX__HIP_MBK;
    const int full = SDX__HIP_SPLIT_WAVES ? tiles * 4 >= slots * 3 : tiles >= s->sms;
    int64_t split = tiles > 0 ? slots / tiles : 1;
    if (ak == SDX__HIP_A_CONV) p.bt = 64;     /* the gather's only size (sdx__hip_k_gemm_mma) */
    if (!p.mma || ak == SDX__HIP_A_CONV || full) return p;
    split = split < steps / 8 ? split : steps / 8;
    split = split < 16 ? split : 16;
    if (split >= 2 && batch * split <= 65535) p.split = (int)split;
    else if (!(SDX__HIP_SPLIT_WAVES && wg && (steps >= 16 || tiles * 3 >= slots))) p.bt = 64;
    return p;
}

/* f32 bytes a plan's partial sums take (0: not split). */
static size_t sdx__hip_plan_part_bytes(const sdx__hip_plan &p, const sdx__hip_gemm &g, int64_t batch) {
    return p.split > 1 ? (size_t)p.split * (size_t)batch * (size_t)g.M * (size_t)g.N * sizeof(float) : 0;
}

/* The matrix-unit kernel of a GEMM: a linear of one image (and with
 * SDX_HIP_TMA_CONV a stride-1 channels-last convolution) on wgmma fed
 * by the TMA where its tensor maps can be made, else wgmma fed by the
 * threads (BN 160 where `wide`, else 128), else mma.sync tiles of bt. */
static void sdx__hip_gemm_mma_launch(const sdx__hip *s, const sdx__hip_gemm &g, int ak, dim3 grid, int64_t batch, int vw, int wgmma,
                                     int wide, int bt) {
    const int bf16 = g.xt == SDX_BF16, nhwc = ak == SDX__HIP_A_NHWC;
    const int tma = wgmma && s->tmap_encode && (nhwc ? SDX__HIP_TMA_CONV : ak == SDX__HIP_A_ROWS && batch == 1);
    if (tma && (wide ? sdx__hip_gemm_tma<160>(s, g, grid, nhwc, batch) : sdx__hip_gemm_tma<128>(s, g, grid, nhwc, batch))) return;
    if (wide)
        sdx__hip_launch(sdx__hip_gemm_wgmma_kernel<160>(nhwc, bf16), grid, SDX__HIP_WG_THREADS, (size_t)sdx__hip_wg_tile<160>::SMEM, g);
    else if (wgmma)
        sdx__hip_launch(sdx__hip_gemm_wgmma_kernel<128>(nhwc, bf16), grid, SDX__HIP_WG_THREADS, (size_t)sdx__hip_wg_tile<128>::SMEM, g);
    else if (bt == 128)
        sdx__hip_launch(sdx__hip_gemm_mma_kernel<128>(ak, bf16, vw), grid, s->gemm_threads, (size_t)sdx__hip_tile<128>::SMEM, g);
    else
        sdx__hip_launch(sdx__hip_gemm_mma_kernel<64>(ak, bf16, vw), grid, s->gemm_threads, (size_t)sdx__hip_tile<64>::SMEM, g);
}

/* Launches the GEMM as planned (sdx__hip_gemm_plan; g.part holds its
 * partial sums when split), or on the SIMT kernel. */
static int sdx__hip_gemm_run(sdx_ctx *ctx, const char *op, sdx__hip_gemm g, int ak, int64_t batch, const sdx__hip_plan &p) {
    const sdx__hip *s = sdx__hip_of(ctx);
    const int conv = ak != SDX__HIP_A_ROWS, mma = p.mma, bt = p.bt;
    /* a convolution's gather keeps 32-bit offsets and window masks */
    const int vw = g.K % 8 == 0 && (uintptr_t)g.w % 16 == 0 &&
                   (conv ? g.x_bstride < 0x7fffffff && g.kh <= 32 && g.kw <= 32 && g.K < 0x7fffffff : (uintptr_t)g.x % 16 == 0);
    const int wgmma = mma && bt == 128 && s->wgmma && vw && ak != SDX__HIP_A_CONV;
    const int wide = wgmma && SDX__HIP_WG_WIDE && g.N % 160 == 0;     /* 160-wide tiles (sdx__hip_k_gemm_wgmma) */
    int64_t bm = mma ? bt : SDX__HIP_SBM, bn = wide ? 160 : mma ? bt : SDX__HIP_SBN;
    int64_t gx = (g.M + bm - 1) / bm, gy = (g.N + bn - 1) / bn;
    dim3 grid;
    if (g.M == 0 || g.N == 0 || batch == 0) return SDX_OK;
    if (gx > 0x7fffffff || gy > 65535 || batch * p.split > 65535)
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    g.split = mma ? p.split : 1;
    grid = dim3((unsigned)gx, (unsigned)gy, (unsigned)(batch * g.split));
    if (!mma) {
        if (conv) sdx__hip_launch(sdx__hip_k_gemm_simt<SDX__HIP_A_CONV>, grid, 256, 0, g);
        else sdx__hip_launch(sdx__hip_k_gemm_simt<SDX__HIP_A_ROWS>, grid, 256, 0, g);
    } else {
        sdx__hip_gemm_mma_launch(s, g, ak, grid, batch, vw, wgmma, wide, bt);
        if (g.split > 1) {
            const int64_t count = batch * g.M * g.N;
            const int w = sdx__hip_width(count % 8 == 0, g.y, g.part, g.res);
            sdx__hip_launch(w == 8 ? sdx__hip_k_split_sum<8> : sdx__hip_k_split_sum<1>, sdx__hip_blocks(count / w, 256), 256, 0, g, count,
                            g.M * g.N, conv);
        }
    }
    return sdx__hip_check(ctx, op);
}

/* Room in the work buffer for `before` bytes of operand copies, then a
 * plan's partial sums (g->part). */
static int sdx__hip_gemm_room(sdx_ctx *ctx, const char *op, sdx__hip_gemm *g, int64_t batch, const sdx__hip_plan &p, size_t before) {
    sdx__hip *s = sdx__hip_of(ctx);
    const size_t at = (before + 255) / 256 * 256, part = sdx__hip_plan_part_bytes(p, *g, batch);
    int rc;
    if (!before && !part) return SDX_OK;
    if ((rc = sdx__hip_need(ctx, s, &s->work, at + part, op, part ? "operand copies and partial sums" : "operand copies")) != SDX_OK)
        return rc;
    g->part = part ? (float *)((char *)s->work.p + at) : NULL;
    return SDX_OK;
}

static void sdx__hip_gemm_operands(sdx__hip_gemm *g, const sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                   const sdx_tensor *res) {
    memset(g, 0, sizeof *g);
    g->x = x->data; g->xt = x->dtype;
    g->w = w->data; g->wt = w->dtype;
    g->bias = b ? b->data : NULL; g->bt = b ? (int)b->dtype : 0;
    g->res = res ? res->data : NULL; g->rt = res ? (int)res->dtype : 0;
    g->y = y->data; g->yt = y->dtype;
    g->split = 1;
}

/* A linear's operands, into y; its M x N x K from w and the product's
 * shape (y's own, or the GEGLU's h: w's rows). */
static void sdx__hip_linear_operands(sdx__hip_gemm *g, const sdx_tensor *y, const sdx_tensor *product, const sdx_tensor *x,
                                     const sdx_tensor *w, const sdx_tensor *b, const sdx_tensor *res) {
    sdx__hip_gemm_operands(g, y, x, w, b, res);
    g->K = w->shape[1];
    g->N = w->shape[0];
    g->M = g->N ? sdx_tensor_numel(product) / g->N : 0;
}

/* A linear of at most SDX__HIP_GEMV_ROWS rows: one warp per column. */
static int sdx__hip_gemv(sdx_ctx *ctx, const char *op, const sdx__hip_gemm &g) {
    const int w8 = sdx__hip_width(g.K % 8 == 0, g.x, g.w) == 8, per = 256 / sdx__hip_of(ctx)->warp;
    if ((g.N + per - 1) / per > 0x7fffffff) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    sdx__hip_launch(w8 ? sdx__hip_k_gemv<8> : sdx__hip_k_gemv<1>, dim3((unsigned)((g.N + per - 1) / per)), 256, 0, g);
    return sdx__hip_check(ctx, op);
}

/* y = x w^T + b (+ res in the epilogue, when not NULL: res may be y). */
static int sdx__hip_linear(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           const sdx_tensor *res) {
    sdx__hip *s = sdx__hip_of(ctx);
    sdx__hip_gemm g;
    sdx__hip_plan p;
    int copy_w, copy_x, rc;
    int64_t copied;
    sdx__hip_linear_operands(&g, y, y, x, w, b, res);
    if (g.M == 0 || g.N == 0) return SDX_OK;
    if (g.M <= SDX__HIP_GEMV_ROWS) return sdx__hip_gemv(ctx, op, g);
    g.y_bstride = g.M * g.N;    /* a split's partial sums, one "image" */
    /* w in x's half type; or f32 rows (the text encoder's context) into a
     * half result, rounded once to w's type (saturating) for the matrix
     * units: y is stored in half anyway */
    copy_w = sdx__hip_gemm_mma_converts_w(s, g.xt, g.wt);
    copy_x = !copy_w && g.xt == SDX_F32 && y->dtype != SDX_F32 && sdx__hip_gemm_mma_takes(s, g.wt, g.wt);
    copied = copy_w ? g.N * g.K : copy_x ? g.M * g.K : 0;
    if (copy_w && g.N > 65535) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    if (copy_w) g.wt = g.xt;
    if (copy_x) g.xt = g.wt;
    p = sdx__hip_gemm_plan(s, g, SDX__HIP_A_ROWS, 1);
    if ((rc = sdx__hip_gemm_room(ctx, op, &g, 1, p, (size_t)copied * 2)) != SDX_OK) return rc;
    if (copy_w) {
        sdx__hip_permute_taps(s->work.p, g.wt, w, g.K, 1);
        g.w = s->work.p;
    } else if (copy_x) {
        sdx_tensor rows = *x;
        rows.data = s->work.p;
        rows.dtype = (sdx_dtype)g.xt;
        if ((rc = sdx__hip_ew(ctx, op, SDX__HIP_COPY, &rows, x, NULL, 0)) != SDX_OK) return rc;
        g.x = rows.data;
    }
    return sdx__hip_gemm_run(ctx, op, g, SDX__HIP_A_ROWS, 1, p);
}

static int sdx__hip_linear_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                              sdx_dtype compute) {
    (void)compute;
    return sdx__hip_linear(ctx, "linear", y, x, w, b, NULL);
}

/* GEGLU in the GEMM's epilogue where the matrix units take the product
 * whole (one part of k, 16-byte rows, more than a few rows, D a multiple
 * of 8): y = a * gelu(gate) from the f32 sums, rounded once, h untouched
 * (sdx__hip_w_row pairs each value with its gate). Else the linear into
 * h (h NULL: the backend's own room, kept) and the gate as a pass of its
 * own. */
static int sdx__hip_linear_geglu_op(sdx_ctx *ctx, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w,
                                    const sdx_tensor *b, sdx_dtype compute) {
    static const char op[] = "linear_geglu";
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t d = y->shape[y->ndim - 1];
    sdx_tensor product = *y;
    sdx__hip_gemm g;
    sdx__hip_plan p;
    int rc;
    product.shape[product.ndim - 1] = w->shape[0];
    sdx__hip_linear_operands(&g, y, &product, x, w, b, NULL);
    if (g.M == 0 || g.N == 0) return SDX_OK;
    p = sdx__hip_gemm_plan(s, g, SDX__HIP_A_ROWS, 1);
    if (g.M > SDX__HIP_GEMV_ROWS && p.mma && p.split == 1 && d % 8 == 0 && g.K % 8 == 0 && (uintptr_t)g.x % 16 == 0 &&
        (uintptr_t)g.w % 16 == 0) {
        g.geglu = d;
        return sdx__hip_gemm_run(ctx, op, g, SDX__HIP_A_ROWS, 1, p);
    }
    if (!h) {
        if ((rc = sdx__hip_need(ctx, s, &s->product, sdx_tensor_nbytes(&product), op, "product")) != SDX_OK) return rc;
        product.data = s->product.p;
        h = &product;
    }
    rc = sdx__hip_linear(ctx, op, h, x, w, b, NULL);
    return rc != SDX_OK ? rc : sdx__hip_geglu_op(ctx, y, h, compute);
}

/* The residual in the GEMM's epilogue: (x w^T + b) + res in f32, rounded
 * once into y; res is read and y written by the same thread, so res may
 * be y. */
static int sdx__hip_linear_add_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                  const sdx_tensor *res, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_linear(ctx, "linear_add", y, x, w, b, res);
}

/* Every window corner of the convolution fits sdx__hip_pixels' 16-bit
 * halves, with room for the -2^15 that marks a pixel past M. */
static int sdx__hip_corners_fit(const sdx__hip_gemm &g) {
    const int64_t ho = g.Wo > 0 ? g.M / g.Wo : 0;
    return g.pt < 16384 && g.pl < 16384 && (ho - 1) * g.stride - g.pt < 16384 && ((int64_t)g.Wo - 1) * g.stride - g.pl < 16384 &&
           g.H < 16384 && g.W < 16384;
}

/* ---- weights kept channels-last ------------------------------------------------------ */

/* Index of the first entry at or above `data`. */
static int sdx__hip_cl_lower(const sdx__hip *s, const void *data) {
    int lo = 0, hi = s->n_cl;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)s->cl[mid].data < (uintptr_t)data) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Whether w's values are channels-last: an entry at its address with its
 * channels, taps and type (a view of its first output channels too). */
static int sdx__hip_taps_last(const sdx__hip *s, const sdx_tensor *w) {
    const int i = sdx__hip_cl_lower(s, w->data);
    const sdx__hip_cl_weight *e = i < s->n_cl && s->cl[i].data == w->data ? &s->cl[i] : NULL;
    return e && w->ndim == 4 && e->c == w->shape[1] && e->taps == w->shape[2] * w->shape[3] && e->dtype == (int)w->dtype &&
           w->shape[0] <= e->o;
}

static void sdx__hip_cl_forget(sdx__hip *s, const void *data) {
    const int i = sdx__hip_cl_lower(s, data);
    if (i == s->n_cl || s->cl[i].data != data) return;
    memmove(s->cl + i, s->cl + i + 1, sizeof *s->cl * (size_t)(s->n_cl - i - 1));
    s->n_cl--;
}

/* Which weights go channels-last: a half-type kernel wider than 1x1 over
 * 8k channels (what the matrix units' convolutions take: x then has 8k
 * channels too), one output channel's C x taps values within 48 KiB
 * (sdx__hip_k_taps_last holds them), 16-byte aligned. */
static int sdx__hip_cl_takes(const sdx__hip *s, const sdx_tensor *w) {
    const int64_t taps = w->ndim == 4 ? w->shape[2] * w->shape[3] : 0;
    return s->gemm_mma && w->ndim == 4 && (w->dtype == SDX_F16 || w->dtype == SDX_BF16) && taps > 1 && w->shape[1] % 8 == 0 &&
           w->shape[1] * taps * 2 <= 48 * 1024 && w->shape[0] <= 65535 && (uintptr_t)w->data % 16 == 0;
}

/* The loader wrote a weight slot (sdx_backend.weight_added): a convolution
 * weight the channels-last convolutions take is rearranged in place. sdx
 * reads back only 1-D weights, and every other reader of a 4-D one here
 * (the gathered convolutions) puts it back in order first. */
static int sdx__hip_weight_added(sdx_ctx *ctx, const sdx_tensor *w, const void *file) {
    static const char op[] = "weight upload";
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t taps = w->ndim == 4 ? w->shape[2] * w->shape[3] : 0;
    int i, rc;
    (void)file;
    if (!w->device) return SDX_OK;
    sdx__hip_cl_forget(s, w->data);     /* whatever was at this address before */
    if (!sdx__hip_cl_takes(s, w) || sdx_tensor_numel(w) == 0) return SDX_OK;
    if (s->recording >= 0) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: a weight cannot change while a graph is recorded", op);
    if (s->n_cl == s->cap_cl) {
        const int cap = s->cap_cl ? 2 * s->cap_cl : 256;
        sdx__hip_cl_weight *e = (sdx__hip_cl_weight *)realloc(s->cl, sizeof *e * (size_t)cap);
        if (!e) return sdx_fail(ctx, SDX_ERR_NOMEM, "%s: out of memory", op);
        s->cl = e;
        s->cap_cl = cap;
    }
    sdx__hip_launch(sdx__hip_k_taps_last, dim3((unsigned)w->shape[0]), 256, (size_t)(w->shape[1] * taps * 2), (uint16_t *)w->data,
                    (int)w->shape[1], (int)taps);
    if ((rc = sdx__hip_check(ctx, op)) != SDX_OK) return rc;
    i = sdx__hip_cl_lower(s, w->data);
    memmove(s->cl + i + 1, s->cl + i, sizeof *s->cl * (size_t)(s->n_cl - i));
    s->cl[i].data = w->data;
    s->cl[i].o = w->shape[0];
    s->cl[i].c = w->shape[1];
    s->cl[i].taps = taps;
    s->cl[i].dtype = (int)w->dtype;
    s->n_cl++;
    return SDX_OK;
}

static void sdx__hip_weight_changed(sdx_ctx *ctx, const sdx_tensor *w, int gone) {
    if (gone) sdx__hip_cl_forget(sdx__hip_of(ctx), w->data);
}

/* ---- convolution ------------------------------------------------------------------------ */

/* A convolution gathered from NCHW x (f32 or mixed operands, x's
 * channels not 8k, shapes past the channels-last path's limits). The
 * SIMT kernel reads a weight kept channels-last as it is; the matrix
 * units' gather wants w as [O][C][kh][kw], so such a weight is put back
 * in that order in the work buffer first. */
static int sdx__hip_conv_gather(sdx_ctx *ctx, const char *op, sdx__hip_gemm g, int64_t batch, const sdx_tensor *w, int taps_last) {
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t o = w->shape[0], c = w->shape[1], taps = w->shape[2] * w->shape[3];
    const sdx__hip_plan p = sdx__hip_gemm_plan(s, g, SDX__HIP_A_CONV, batch);
    int rc;
    g.w_taps_last = taps_last && !p.mma;
    taps_last = taps_last && p.mma;
    rc = sdx__hip_gemm_room(ctx, op, &g, batch, p, taps_last ? (size_t)(o * c * taps) * 2 : 0);
    if (rc == SDX_OK && taps_last) {
        sdx_tensor in_order = *w;
        in_order.data = s->work.p;
        rc = sdx__hip_transpose(ctx, op, &in_order, w, o, taps, c);
        g.w = in_order.data;
    }
    return rc != SDX_OK ? rc : sdx__hip_gemm_run(ctx, op, g, SDX__HIP_A_CONV, batch, p);
}

/* A convolution on the matrix units from a channels-last copy of x (in
 * the work buffer) and w channels-last (kept so, or a copy beside x's):
 * every k-step's operands then stream in as 16-byte asynchronous copies,
 * as a linear's do, instead of being gathered value by value from NCHW.
 * x's copy costs a transpose (a few MB) against the gathers' latency,
 * which dominated the convolution's time. y is written NCHW as before. */
static int sdx__hip_conv_nhwc(sdx_ctx *ctx, const char *op, sdx__hip_gemm *g, const sdx_tensor *x, const sdx_tensor *w, int taps_last) {
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t batch = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3], o = w->shape[0], taps = w->shape[2] * w->shape[3];
    /* w as it is when channels-last already (or a 1x1) in x's type, 16-byte aligned */
    const int copy_w = (taps > 1 && !taps_last) || w->dtype != x->dtype || (uintptr_t)w->data % 16;
    const size_t xbytes = ((size_t)(batch * c * hw) * 2 + 255) / 256 * 256, wbytes = copy_w ? (size_t)(o * c * taps) * 2 : 0;
    sdx_tensor xh;      /* x's channels-last copy */
    sdx__hip_plan p;
    int rc;
    if (batch > 65535 || o > 65535 || (c + 31) / 32 > 65535 || g->x_bstride >= 0x7fffffff || taps > SDX__HIP_PERMUTE_VALUES ||
        !sdx__hip_corners_fit(*g))
        return w->dtype == x->dtype ? sdx__hip_conv_gather(ctx, op, *g, batch, w, taps_last)
                                    : sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    g->wt = x->dtype;
    g->C = (int)c;
    p = sdx__hip_gemm_plan(s, *g, SDX__HIP_A_NHWC, batch);
    if ((rc = sdx__hip_gemm_room(ctx, op, g, batch, p, xbytes + wbytes)) != SDX_OK) return rc;
    xh = *x;
    xh.data = s->work.p;
    if ((rc = sdx__hip_transpose(ctx, op, &xh, x, batch, c, hw)) != SDX_OK) return rc;
    g->x = xh.data;
    if (copy_w) {   /* permuted, or only converted when it is channels-last */
        g->w = (char *)s->work.p + xbytes;
        sdx__hip_permute_taps((void *)g->w, g->wt, w, taps_last ? c * taps : c, taps_last ? 1 : (int)taps);
    }
    return sdx__hip_gemm_run(ctx, op, *g, SDX__HIP_A_NHWC, batch, p);
}

/* y = conv(x) + b (+ res in the epilogue, when not NULL). */
static int sdx__hip_conv2d(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right) {
    sdx__hip *s = sdx__hip_of(ctx);
    int64_t ho, wo;
    sdx__hip_gemm g;
    int taps_last;
    ho = x->shape[2] + pad_top + pad_bottom - w->shape[2];
    wo = x->shape[3] + pad_left + pad_right - w->shape[3];
    ho = ho / stride + 1;
    wo = wo / stride + 1;
    if (x->shape[2] > 0x7fffffff || x->shape[3] > 0x7fffffff || w->shape[1] * w->shape[2] * w->shape[3] > 0x7fffffff)
        return sdx__hip_bad(ctx, op, "dims below 2^31", x, w);
    sdx__hip_gemm_operands(&g, y, x, w, b, res);
    g.M = ho * wo;
    g.N = w->shape[0];
    g.K = w->shape[1] * w->shape[2] * w->shape[3];
    g.x_bstride = x->shape[1] * x->shape[2] * x->shape[3];
    g.y_bstride = g.M * g.N;
    g.H = (int)x->shape[2]; g.W = (int)x->shape[3]; g.Wo = (int)wo;
    g.kh = (int)w->shape[2]; g.kw = (int)w->shape[3];
    g.stride = stride; g.pt = pad_top; g.pl = pad_left;
    taps_last = sdx__hip_taps_last(s, w);
    if (sdx__hip_gemm_mma_halves(s, g.xt, g.wt) && x->shape[1] % 8 == 0) return sdx__hip_conv_nhwc(ctx, op, &g, x, w, taps_last);
    return sdx__hip_conv_gather(ctx, op, g, x->shape[0], w, taps_last);
}

static int sdx__hip_conv2d_pad_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                  int stride, int pad_top, int pad_left, int pad_bottom, int pad_right, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_conv2d(ctx, "conv2d", y, x, w, b, NULL, stride, pad_top, pad_left, pad_bottom, pad_right);
}

/* The residual in the epilogue, as sdx__hip_linear_add_op. */
static int sdx__hip_conv2d_pad_add_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                      const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right,
                                      sdx_dtype compute) {
    (void)compute;
    return sdx__hip_conv2d(ctx, "conv2d_pad_add", y, x, w, b, res, stride, pad_top, pad_left, pad_bottom, pad_right);
}

/* ---- attention --------------------------------------------------------------------------- */

template <int DP, int TPQ, int KT>
static void sdx__hip_attention_launch(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                      int64_t batch, int heads, int d, int causal) {
    const int qpb = SDX__HIP_ATTN_THREADS / TPQ;
    int64_t nq = q->shape[1], nk = k->shape[1];
    dim3 grid((unsigned)((nq + qpb - 1) / qpb), (unsigned)(batch * heads));
    size_t smem = 2 * (size_t)KT * (size_t)d * sizeof(float);
    sdx__hip_launch(sdx__hip_k_attention<DP, TPQ, KT>, grid, SDX__HIP_ATTN_THREADS, smem, y->data, y->dtype, q->data, q->dtype, k->data, k->dtype,
                    v->data, v->dtype, nq, nk, heads, d, causal,
                    (float)(1.0 / sqrt((double)d)));
}

/* The tensor-core attention plans (sdx__hip_flash_plan: padded head dim,
 * keys a tile, groups of queries, warps a group, m16 tiles of queries a
 * group), the first whose DP holds d is taken: SD's head dims (40 -> 48,
 * 64, 80, 128, 160) with four warps, 32 queries each up to 64 (each K and
 * V fragment from shared memory then serves two m16 tiles: half the
 * ldmatrix bytes per product of 16 queries, which had kept attention at
 * 2.4-3.1x cuDNN's) and 16 above (O's registers: 80's bf16 kernel would
 * spill), 64-key tiles up to 80 and 32 above (the K/V buffers' shared
 * memory); the VAE's 512 with two groups of four warps that split the
 * dims, 16-key tiles (106 KiB of shared memory). Head dim 64 also has
 * 32-key tiles (SDX__HIP_FLASH_KEYS32), chosen per launch by
 * sdx__hip_flash_keys32. */
#if defined(SDX_HIP_FLASH_MT)     /* m16 tiles a warp up to head dim 64: 1 halves the queries a block */
#if SDX_HIP_FLASH_MT < 1 || SDX_HIP_FLASH_MT > 2
#error "sdx_hip.h: SDX_HIP_FLASH_MT is 1 or 2"
#endif
#define SDX__HIP_FLASH_MT SDX_HIP_FLASH_MT
#else
#define SDX__HIP_FLASH_MT 2
#endif
#define SDX__HIP_FLASH_PLANS(X) \
    X(48, 64, 4, 1, SDX__HIP_FLASH_MT) X(64, 64, 4, 1, SDX__HIP_FLASH_MT) X(80, 64, 4, 1, 1) X(128, 32, 4, 1, 1) X(160, 32, 4, 1, 1) \
    X(512, 16, 2, 4, 1)
#define SDX__HIP_FLASH_KEYS32(X) X(64, 32, 4, 1, SDX__HIP_FLASH_MT)

template <int HT, int DP, int BK, int ROWS, int SPLIT, int MT>
static void sdx__hip_flash(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int64_t batch, int heads, int d,
                           int causal) {
    typedef sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT> L;
    int64_t nq = q->shape[1], nk = k->shape[1];
    int vec = d % 8 == 0 && (uintptr_t)q->data % 16 == 0 && (uintptr_t)k->data % 16 == 0 && (uintptr_t)v->data % 16 == 0;
    int pairs = d % 2 == 0 && (uintptr_t)y->data % (2 * sdx_dtype_size(y->dtype)) == 0;
    sdx__hip_launch(sdx__hip_k_flash_mma<HT, DP, BK, ROWS, SPLIT, MT>, dim3((unsigned)((nq + L::BQ - 1) / L::BQ), (unsigned)(batch * heads)),
                    dim3((unsigned)L::THREADS), (size_t)L::BYTES, y->data, (int)y->dtype, (const void *)q->data, (const void *)k->data,
                    (const void *)v->data, nq, nk, heads, d, causal, (float)(1.0 / sqrt((double)d)), vec, pairs);
}

/* Head dim 64 in 32-key tiles rather than 64: fewer registers (on an
 * H200's sm_90a code 163 a thread against 228), so more blocks an SM (3
 * against 2), at half the products between barriers. Which is faster
 * depends on the launch's waves and on the keys' padding to whole tiles,
 * so each launch takes the smaller of, per plan,
 *     waves x blocks an SM x keys padded to its tiles x cost per key,
 * waves = ceil(blocks / (blocks an SM x SMs)): a wave takes as long as
 * its SMs' shares. The cost per key is one plan's against the other's at
 * the same work: 1.085 for 32-key tiles, measured on an H200 (SDXL's
 * 4096-token self-attention, 640 blocks: 3 waves of 2 in 402 us, 2 waves
 * of 3 in 436). This model put each of SDXL's four attention shapes on
 * the faster plan there (1024 tokens 61 against 76 us, their 77-key
 * cross-attention 14 against 20). */
static int sdx__hip_flash_keys32(const sdx__hip *s, int bf16, int64_t blocks, int64_t nk) {
    const int64_t occ64 = s->flash64_blocks[bf16][0], occ32 = s->flash64_blocks[bf16][1];
    if (occ64 < 1 || occ32 < 1) return 0;
    const int64_t waves64 = (blocks + occ64 * s->sms - 1) / (occ64 * s->sms), waves32 = (blocks + occ32 * s->sms - 1) / (occ32 * s->sms);
    const int64_t keys64 = (nk + 63) / 64 * 64, keys32 = (nk + 31) / 32 * 32;
    return (double)waves32 * (double)occ32 * (double)keys32 * 1.085 < (double)waves64 * (double)occ64 * (double)keys64;
}

template <int HT>
static void sdx__hip_attention_mma(const sdx__hip *s, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                   int64_t batch, int heads, int d, int causal) {
#define SDX__HIP_FLASH_PICK(DP, BK, ROWS, SPLIT, MT) \
    if (d <= DP) return sdx__hip_flash<HT, DP, BK, ROWS, SPLIT, MT>(y, q, k, v, batch, heads, d, causal);
    /* the head dims the 64-key plan would take (past the 48 plan's), its
     * blocks counted in the 32-key plan's queries a block (the same) */
#define SDX__HIP_FLASH_PICK32(DP, BK, ROWS, SPLIT, MT) \
    if (d > 48 && d <= DP && \
        sdx__hip_flash_keys32(s, HT == SDX__HIP_DT_BF16, \
                              (q->shape[1] + sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::BQ - 1) / \
                                  sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::BQ * batch * heads, k->shape[1])) \
        return sdx__hip_flash<HT, DP, BK, ROWS, SPLIT, MT>(y, q, k, v, batch, heads, d, causal);
    SDX__HIP_FLASH_KEYS32(SDX__HIP_FLASH_PICK32)
    SDX__HIP_FLASH_PLANS(SDX__HIP_FLASH_PICK)
#undef SDX__HIP_FLASH_PICK32
#undef SDX__HIP_FLASH_PICK
}

/* Every plan's shared memory, f16 and bf16; 0 when refused, and
 * attention then runs on the SIMT kernel. */
static int sdx__hip_attention_grant(const sdx__hip *s) {
#define SDX__HIP_FLASH_GRANT(DP, BK, ROWS, SPLIT, MT) \
    if (!sdx__hip_grant(s, (const void *)sdx__hip_k_flash_mma<SDX__HIP_DT_F16, DP, BK, ROWS, SPLIT, MT>, \
                        sdx__hip_flash_plan<SDX__HIP_DT_F16, DP, BK, ROWS, SPLIT, MT>::BYTES) || \
        !sdx__hip_grant(s, (const void *)sdx__hip_k_flash_mma<SDX__HIP_DT_BF16, DP, BK, ROWS, SPLIT, MT>, \
                        sdx__hip_flash_plan<SDX__HIP_DT_BF16, DP, BK, ROWS, SPLIT, MT>::BYTES)) \
        return 0;
    SDX__HIP_FLASH_PLANS(SDX__HIP_FLASH_GRANT)
    SDX__HIP_FLASH_KEYS32(SDX__HIP_FLASH_GRANT)
#undef SDX__HIP_FLASH_GRANT
    return 1;
}

/* The blocks an SM of the 128-tile GEMM kernels (sdx__hip_gemm_plan):
 * one of each kind stands for all (their shared memory and bounds do
 * not depend on the operands); where the runtime cannot say, two of
 * mma.sync's on NVIDIA (one on AMD) and one of wgmma's. */
static void sdx__hip_gemm_occupancy(sdx__hip *s) {
    int blocks = 0;
    s->gemm_blocks[0] = SDX__HIP_GEMM_MIN_BLOCKS;
    s->gemm_blocks[1] = 1;
    if (s->gemm_mma && hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)sdx__hip_gemm_mma_kernel<128>(SDX__HIP_A_ROWS, 0, 1),
                                                                    s->gemm_threads, (size_t)sdx__hip_tile<128>::SMEM) == hipSuccess && blocks > 0)
        s->gemm_blocks[0] = blocks;
    blocks = 0;
    if (s->wgmma && hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)sdx__hip_gemm_wgmma_kernel<160>(0, 0), SDX__HIP_WG_THREADS,
                                                                 (size_t)sdx__hip_wg_tile<160>::SMEM) == hipSuccess && blocks > 0)
        s->gemm_blocks[1] = blocks;
    (void)hipGetLastError();
}

/* The blocks an SM of head dim 64's two plans (sdx__hip_flash_keys32),
 * [bf16][32-key tiles]: the plans of the lists whose DP is 64; 0 where
 * the runtime cannot say (64-key tiles then). */
template <int HT>
static void sdx__hip_flash64_occupancy(sdx__hip *s) {
#define SDX__HIP_FLASH_OCC(DP, BK, ROWS, SPLIT, MT) \
    if (DP == 64 && hipOccupancyMaxActiveBlocksPerMultiprocessor(&s->flash64_blocks[HT == SDX__HIP_DT_BF16][BK == 32], \
                                                                 (const void *)sdx__hip_k_flash_mma<HT, DP, BK, ROWS, SPLIT, MT>, \
                                                                 sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::THREADS, \
                                                                 (size_t)sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::BYTES) != hipSuccess) \
        s->flash64_blocks[HT == SDX__HIP_DT_BF16][BK == 32] = 0;
    SDX__HIP_FLASH_PLANS(SDX__HIP_FLASH_OCC)
    SDX__HIP_FLASH_KEYS32(SDX__HIP_FLASH_OCC)
#undef SDX__HIP_FLASH_OCC
    (void)hipGetLastError();
}

/* Head dims up to 80 (multiples of 8) without a causal mask on Hopper's
 * wgmma (sdx__hip_k_flash_wgmma), padded to the first of its widths
 * that holds them, with SDX_HIP_FLASH_WGMMA=1 (the simulator's builds:
 * on, so its tests run it; elsewhere off until an H100/H200 run has
 * measured it beside sdx__hip_k_flash_mma), in blocks of
 * SDX_HIP_FLASH_WGS warpgroups (1 or 2). */
#if defined(SDX_HIP_FLASH_WGMMA)
#define SDX__HIP_FLASH_WG SDX_HIP_FLASH_WGMMA
#elif defined(SDX_HIP_SIM)
#define SDX__HIP_FLASH_WG 1
#else
#define SDX__HIP_FLASH_WG 0
#endif
#if defined(SDX_HIP_FLASH_WGS)
#if SDX_HIP_FLASH_WGS < 1 || SDX_HIP_FLASH_WGS > 2
#error "sdx_hip.h: SDX_HIP_FLASH_WGS is 1 or 2"
#endif
#define SDX__HIP_FLASH_WGS SDX_HIP_FLASH_WGS
#else
#define SDX__HIP_FLASH_WGS 2
#endif
#define SDX__HIP_FLASH_WG_DPS(X) X(48) X(64) X(80)

template <int HT, int DP>
static void sdx__hip_flash_wg(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int64_t batch, int heads, int d) {
    typedef sdx__hip_flash_wg_plan<DP, SDX__HIP_FLASH_WGS> L;
    const int64_t nq = q->shape[1];
    const int pairs = (uintptr_t)y->data % (2 * sdx_dtype_size(y->dtype)) == 0;
    sdx__hip_launch(sdx__hip_k_flash_wgmma<HT, DP, SDX__HIP_FLASH_WGS>, dim3((unsigned)((nq + L::BQ - 1) / L::BQ), (unsigned)(batch * heads)),
                    dim3((unsigned)L::THREADS), (size_t)L::BYTES, y->data, (int)y->dtype, (const void *)q->data, (const void *)k->data,
                    (const void *)v->data, nq, k->shape[1], heads, d, (float)(1.0 / sqrt((double)d)), pairs);
}

/* Whether the wgmma attention takes this head dim, and takes it. */
template <int HT>
static int sdx__hip_flash_wg_pick(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int64_t batch, int heads,
                                  int d) {
#define SDX__HIP_FLASH_WG_PICK(DP) \
    if (d <= DP) return sdx__hip_flash_wg<HT, DP>(y, q, k, v, batch, heads, d), 1;
    SDX__HIP_FLASH_WG_DPS(SDX__HIP_FLASH_WG_PICK)
#undef SDX__HIP_FLASH_WG_PICK
    return 0;
}

static int sdx__hip_flash_wg_grant(const sdx__hip *s) {
    if (!SDX__HIP_FLASH_WG || !s->wgmma) return 0;
#define SDX__HIP_FLASH_WG_GRANT(DP) \
    if (!sdx__hip_grant(s, (const void *)sdx__hip_k_flash_wgmma<SDX__HIP_DT_F16, DP, SDX__HIP_FLASH_WGS>, \
                        sdx__hip_flash_wg_plan<DP, SDX__HIP_FLASH_WGS>::BYTES) || \
        !sdx__hip_grant(s, (const void *)sdx__hip_k_flash_wgmma<SDX__HIP_DT_BF16, DP, SDX__HIP_FLASH_WGS>, \
                        sdx__hip_flash_wg_plan<DP, SDX__HIP_FLASH_WGS>::BYTES)) \
        return 0;
    SDX__HIP_FLASH_WG_DPS(SDX__HIP_FLASH_WG_GRANT)
#undef SDX__HIP_FLASH_WG_GRANT
    return 1;
}

static int sdx__hip_attention_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                 int heads, int causal, sdx_dtype compute) {
    (void)compute;
    static const char op[] = "attention";
    const sdx__hip *s = sdx__hip_of(ctx);
    int64_t batch, d;
    int halves;
    batch = q->shape[0];
    d = q->shape[2] / heads;
    if (q->shape[1] == 0 || batch == 0 || d == 0) return SDX_OK;
    if (batch * heads > 65535) return sdx__hip_bad(ctx, op, "at most 65535 (batch, head) pairs", q, NULL);
    /* NVIDIA matrix units for half q, k, v of one type: wgmma where it
     * takes the head dim (16-byte rows), mma.sync for the others */
    halves = q->dtype != SDX_F32 && k->dtype == q->dtype && v->dtype == q->dtype;
    if (s->flash_wg && halves && d % 8 == 0 && !causal && (uintptr_t)q->data % 16 == 0 && (uintptr_t)k->data % 16 == 0 &&
        (uintptr_t)v->data % 16 == 0 &&
        (q->dtype == SDX_F16 ? sdx__hip_flash_wg_pick<SDX__HIP_DT_F16>(y, q, k, v, batch, heads, (int)d)
                             : sdx__hip_flash_wg_pick<SDX__HIP_DT_BF16>(y, q, k, v, batch, heads, (int)d)))
        return sdx__hip_check(ctx, op);
    if (s->attention_mma && halves && d <= 512) {
        if (q->dtype == SDX_F16) sdx__hip_attention_mma<SDX__HIP_DT_F16>(s, y, q, k, v, batch, heads, (int)d, causal);
        else sdx__hip_attention_mma<SDX__HIP_DT_BF16>(s, y, q, k, v, batch, heads, (int)d, causal);
        return sdx__hip_check(ctx, op);
    }
    switch (d) {        /* exact fits: no lane idles on padding */
    case 40:  sdx__hip_attention_launch<10, 4, 32>(y, q, k, v, batch, heads, 40, causal); break;
    case 64:  sdx__hip_attention_launch<16, 4, 32>(y, q, k, v, batch, heads, 64, causal); break;
    case 80:  sdx__hip_attention_launch<20, 4, 32>(y, q, k, v, batch, heads, 80, causal); break;
    case 128: sdx__hip_attention_launch<16, 8, 32>(y, q, k, v, batch, heads, 128, causal); break;
    case 160: sdx__hip_attention_launch<20, 8, 32>(y, q, k, v, batch, heads, 160, causal); break;
    default:
        if (d <= 32) sdx__hip_attention_launch<8, 4, 32>(y, q, k, v, batch, heads, (int)d, causal);
        else if (d <= 512) sdx__hip_attention_launch<16, 32, 8>(y, q, k, v, batch, heads, (int)d, causal);
        else return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: head dim %lld above 512 is not supported on the GPU", op, (long long)d);
    }
    return sdx__hip_check(ctx, op);
}

/* ---- device selection ------------------------------------------------------------------------ */

/* Reports the matrix-unit kind of the code object that runs here, the
 * GEMM's k-step its device code was compiled with (bits 8 on), its
 * block's warps (bits 16 on) and whether it has wgmma (bit 24). */
__global__ void sdx__hip_k_probe(int *out) {
    *out = (SDX__HIP_MMA + 1) | SDX__HIP_MBK << 8 | SDX__HIP_GEMM_THREADS / 32 << 16 | SDX__HIP_WGMMA << 24;
}

static void sdx__hip_props(const hipDeviceProp_t *p, char *name, size_t nsize, char *arch, size_t asize) {
    snprintf(name, nsize, "%s", p->name);
#if defined(__HIPCC__) && defined(__HIP_PLATFORM_AMD__)
    snprintf(arch, asize, "%s", p->gcnArchName);
#else
    snprintf(arch, asize, "sm_%d%d", p->major, p->minor);
#endif
}

/* Runs the probe on the current device: the matrix-unit kind, or -1 with
 * `why` set when the binary has no code for this GPU or when its host and
 * device code disagree on the GEMM's k-step (a build error: the launch's
 * shared memory would not hold the kernel's tiles). */
static int sdx__hip_probe(char *why, size_t size, int *gemm_threads, int *wgmma) {
    int *d = NULL, h = 0;
    hipError_t e = hipMalloc((void **)&d, sizeof(int));
    if (e == hipSuccess) {
        sdx__hip_launch(sdx__hip_k_probe, 1, 1, 0, d);
        e = hipGetLastError();
        if (e == hipSuccess) e = hipMemcpy(&h, d, sizeof(int), hipMemcpyDeviceToHost);
    }
    if (d) (void)hipFree(d);
    if (e != hipSuccess || (h & 255) < 1) {
        snprintf(why, size, "%s", e != hipSuccess ? hipGetErrorString(e) : "the probe kernel did not run");
        (void)hipGetLastError();
        return -1;
    }
    if ((h >> 8 & 255) != SDX__HIP_MBK) {
        snprintf(why, size, "its device code steps GEMMs by %d and its host code by %d", h >> 8 & 255, SDX__HIP_MBK);
        return -1;
    }
    *gemm_threads = (h >> 16 & 255) * 32;
    *wgmma = h >> 24 & 1;
    return (h & 255) - 1;
}

SDX_HIP_API int sdx_hip_device_count(void) {
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess) { (void)hipGetLastError(); return 0; }
    return n;
}

SDX_HIP_API sdx_result sdx_hip_device_info(int device_index, sdx_hip_info *info) {
    hipDeviceProp_t p;
    char why[128];
    int n = sdx_hip_device_count(), threads, wgmma;
    if (!info) return SDX_ERR_INVALID_ARG;
    memset(info, 0, sizeof *info);
    if (device_index < 0 || device_index >= n) {
        snprintf(info->name, sizeof info->name, "no GPU %d (%s sees %d)", device_index, SDX__HIP_VENDOR, n);
        return SDX_ERR_UNSUPPORTED;
    }
    if (hipSetDevice(device_index) != hipSuccess || hipGetDeviceProperties(&p, device_index) != hipSuccess ||
        hipMemGetInfo(&info->free_bytes, &info->total_bytes) != hipSuccess) {
        snprintf(info->name, sizeof info->name, "GPU %d: %s", device_index, hipGetErrorString(hipGetLastError()));
        return SDX_ERR_UNSUPPORTED;
    }
    sdx__hip_props(&p, info->name, sizeof info->name, info->arch, sizeof info->arch);
    info->matrix_units = sdx__hip_probe(why, sizeof why, &threads, &wgmma) > 0;
    return SDX_OK;
}

SDX_HIP_API sdx_result sdx_hip_use(sdx_ctx *ctx, int device_index) {
    sdx_backend b;
    hipDeviceProp_t p;
    sdx__hip *s;
    char why[256];
    int n = sdx_hip_device_count(), rc;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (n == 0) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: no GPU found (%s runtime sees none)", SDX__HIP_VENDOR);
    if (device_index < 0 || device_index >= n)
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: no GPU %d (%d found)", device_index, n);
    if (hipSetDevice(device_index) != hipSuccess || hipGetDeviceProperties(&p, device_index) != hipSuccess)
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: GPU %d: %s", device_index, hipGetErrorString(hipGetLastError()));
    if (!(s = (sdx__hip *)calloc(1, sizeof *s))) return sdx_fail(ctx, SDX_ERR_NOMEM, "sdx_hip_use: out of memory");
    s->device = device_index;
    s->warp = p.warpSize > 0 ? p.warpSize : 32;
    s->sms = p.multiProcessorCount > 0 ? p.multiProcessorCount : 1;
    s->recording = s->checking = -1;
#if defined(__HIPCC__)
    s->smem_optin = p.sharedMemPerBlock;        /* no opt-in field in every HIP release */
#else
    s->smem_optin = p.sharedMemPerBlockOptin;
#endif
    sdx__hip_props(&p, why, sizeof why, s->arch, sizeof s->arch);
    if ((s->mma = sdx__hip_probe(why, sizeof why, &s->gemm_threads, &s->wgmma)) < 0) {
        rc = sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: GPU %d (%s, %s) cannot run this binary's code: %s "
                      "(rebuild the SDX_HIP_IMPLEMENTATION file for %s)", device_index, p.name, s->arch, why, s->arch);
        free(s);
        return (sdx_result)rc;
    }
    s->gemm_mma = s->mma && sdx__hip_gemm_grant(s);
    /* sm_90a code runs on compute capability 9.0 alone; the simulator
     * plays an 8.x device too, to test the other path */
    s->wgmma = s->wgmma && s->gemm_mma && p.major == 9 && sdx__hip_wgmma_grant(s);
    s->tmap_encode = s->wgmma && sdx__hip_tma_grant(s) ? sdx__hip_tmap_encoder() : NULL;
    s->attention_mma = s->mma == 1 && sdx__hip_attention_grant(s);
    s->flash_wg = s->attention_mma && sdx__hip_flash_wg_grant(s);
    sdx__hip_gemm_occupancy(s);
    if (s->attention_mma) {
        sdx__hip_flash64_occupancy<SDX__HIP_DT_F16>(s);
        sdx__hip_flash64_occupancy<SDX__HIP_DT_BF16>(s);
    }
    snprintf(s->name, sizeof s->name, "hip:%d (%s, %s%s%s%s%s)", device_index, p.name, s->arch,
             s->mma ? ", matrix units" : "", s->wgmma ? ", wgmma" : "", s->tmap_encode ? ", TMA" : "",
             s->flash_wg ? ", wgmma attention" : "");
    memset(&b, 0, sizeof b);
    b.name = s->name;
    b.user = s;
    b.alloc = sdx__hip_alloc;
    b.free = sdx__hip_free;
    b.upload = sdx__hip_upload;
    b.download = sdx__hip_download;
    b.release = sdx__hip_release;
    b.graph = sdx__hip_graph_op;
    b.weight_added = sdx__hip_weight_added;
    b.weight_changed = sdx__hip_weight_changed;
#define SDX__HIP_OP(name, required, params, args, operands, scalars) b.name = sdx__hip_##name##_op;
    SDX_BACKEND_OPS(SDX__HIP_OP)
#undef SDX__HIP_OP
    if ((rc = sdx_set_backend(ctx, &b)) != SDX_OK) sdx__hip_release(s);   /* not installed: still ours */
    return (sdx_result)rc;
}

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif /* SDX_HIP_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the sdx authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication for the benefit of the public at large and to
the detriment of our heirs and successors. We intend this dedication to be an
overt act of relinquishment in perpetuity of all present and future rights to
this software under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
*/
