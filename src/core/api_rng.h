#pragma once
#include "api_core.h"

/* ===================================================================== */
/*  Public API: noise generators                                          */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

/* A generator lives on the caller's stack or inside another struct; it
 * allocates nothing. Successive draws continue one stream, exactly like
 * successive torch.randn calls on one generator, so drawing a [1,4,64,64]
 * latent is one sdx_rng_randn(rng, buf, 16384), not four smaller ones. */
typedef struct sdx_rng {
    sdx_rng_kind kind;
    uint64_t seed;
    /* mt19937 */
    uint32_t mt[624];
    int      mt_index;
    int      has_cached_normal;   /* torch keeps the 2nd Box-Muller value for n < 16 */
    double   cached_normal;
    /* philox */
    uint64_t philox_calls;        /* randn calls so far (the counter's high word) */
} sdx_rng;

SDX_API void sdx_rng_init(sdx_rng *rng, sdx_rng_kind kind, uint64_t seed);
/* Fills out[0..n) with standard normal float32 values: one torch.randn(n). */
SDX_API void sdx_rng_randn(sdx_rng *rng, float *out, size_t n);

#ifdef __cplusplus
}
#endif
