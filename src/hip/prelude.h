#pragma once
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
