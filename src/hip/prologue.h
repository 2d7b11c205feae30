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
