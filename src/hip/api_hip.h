#pragma once
/* ===================================================================== */
/*  Public API: the GPU backend                                           */
/* ===================================================================== */
/* Declarations only: any C or C++ file may include this half. */
#include "../../sdx.h"

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
