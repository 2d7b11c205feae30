#pragma once
#include "../core/api_core.h"

/* ===================================================================== */
/*  Public API: model families                                           */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum sdx_family {
    SDX_FAMILY_UNKNOWN = 0,
    SDX_FAMILY_SD1,        /* CLIP ViT-L, 8-head UNet, eps            */
    SDX_FAMILY_SD2,        /* OpenCLIP ViT-H, head_dim 64, eps or v   */
    SDX_FAMILY_SDXL,       /* CLIP ViT-L + OpenCLIP bigG, label_emb   */
    SDX_FAMILY_SDXL_REFINER /* OpenCLIP bigG alone, label_emb with an
                               aesthetic score; low noise levels only  */
} sdx_family;

SDX_API const char *sdx_family_name(sdx_family f);

#ifdef __cplusplus
}
#endif
