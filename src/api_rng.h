/* ===================================================================== */
/*  Public API: noise generators                                          */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum sdx_rng_kind {
    SDX_RNG_CPU  = 0,   /* torch.randn on a CPU generator (mt19937): ComfyUI's noise */
    SDX_RNG_CUDA = 1    /* AUTOMATIC1111's Philox "NV" emulation of CUDA torch.randn */
} sdx_rng_kind;

/* A generator lives on the caller's stack or inside another struct; it
 * allocates nothing. Successive draws continue one stream, exactly like
 * successive torch.randn calls on one generator. */
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
