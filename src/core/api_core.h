#pragma once
/* ===================================================================== */
/*  Public API: core (context, errors, dtypes, tensors, half floats)      */
/* ===================================================================== */

#include <stddef.h>
#include <stdint.h>

/* Linkage of the public functions: extern by default; SDX_STATIC makes
 * them static (a private copy per file); SDX_SHARED exports them from a
 * shared library (define SDX_BUILD_SHARED too when building it, with
 * SDX_IMPLEMENTATION) and imports them in programs using it. */
#ifndef SDX_API
#  if defined(SDX_STATIC)
#    define SDX_API static
#  elif defined(SDX_SHARED) && defined(_WIN32)
#    ifdef SDX_BUILD_SHARED
#      define SDX_API extern __declspec(dllexport)
#    else
#      define SDX_API extern __declspec(dllimport)
#    endif
#  elif defined(SDX_SHARED) && (defined(__GNUC__) || defined(__clang__))
#    define SDX_API extern __attribute__((visibility("default")))
#  else
#    define SDX_API extern
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SDX_VERSION_MAJOR 0
#define SDX_VERSION_MINOR 1
#define SDX_VERSION_PATCH 0
#define SDX_VERSION_STRING "0.1.0"

/* Element types. The first three are the storage types the precision
 * policy can choose from; the rest only appear in files. */
typedef enum sdx_dtype {
    SDX_F32  = 0,
    SDX_F16  = 1,
    SDX_BF16 = 2,
    SDX_F64  = 3,
    SDX_I32  = 4,
    SDX_I64  = 5,
    SDX_U8   = 6,    /* e.g. 8-bit pictures in reference files */
    /* ggml's block-quantized weights (GGUF files): each row is a run of
     * blocks of 32 values (Q*_0, Q*_1) or 256 (the K types), every block
     * with its own scales, so a size is per block (sdx_dtype_block), not
     * per element. A row (what follows the first dimension: a matrix's
     * row, a convolution's in_channels x kh x kw) is whole blocks; in
     * ggml's files the last dimension alone is. Read with
     * sdx_st_read_f32; the model loader keeps or dequantizes them. */
    SDX_Q4_0 = 7,
    SDX_Q4_1 = 8,
    SDX_Q5_0 = 9,
    SDX_Q5_1 = 10,
    SDX_Q8_0 = 11,
    SDX_Q2_K = 12,
    SDX_Q3_K = 13,
    SDX_Q4_K = 14,
    SDX_Q5_K = 15,
    SDX_Q6_K = 16,
    SDX_DTYPE_COUNT
} sdx_dtype;

/* Precision-policy value meaning "keep the dtype the checkpoint stores". */
#define SDX_AUTO (-1)

/* ---------------------------------------------------------------------
 * Precision policy. Override any of these before including sdx.h in the
 * file that defines SDX_IMPLEMENTATION.
 *
 *   SDX_{TEXT,UNET,VAE}_WEIGHT_TYPE  SDX_AUTO | SDX_F32 | SDX_F16 | SDX_BF16
 *       how weights are kept in memory. SDX_AUTO (default) keeps the file
 *       dtype, so an f16 checkpoint costs f16 memory (weights are widened
 *       to f32 tile by tile inside the kernels).
 *   SDX_{TEXT,UNET,VAE}_ACT_TYPE     SDX_F32 | SDX_F16 | SDX_BF16
 *       how activations are stored between ops (default SDX_F32). Storing
 *       to f16 saturates at +-65504 instead of producing Inf.
 *   SDX_{TEXT,UNET,VAE}_COMPUTE_TYPE SDX_F32 | SDX_BF16
 *       the arithmetic of linear layers and im2col convolutions (default
 *       SDX_F32). SDX_BF16 rounds the weight to bf16, carries the
 *       activation as two bf16 values (hi + lo) and accumulates in f32 on
 *       AMX tiles, or with AVX512-BF16 on AMD cores (weights repacked once,
 *       as much memory as the weights in f16); elsewhere f32 (logged once).
 *       sdx_model_desc.compute overrides it at run time.
 *
 * Whatever the storage types, these stay f32 unless you opt out:
 *   dot products / conv accumulation   SDX_UNSAFE_HALF_ACCUMULATE
 *   group/layer norm statistics        SDX_UNSAFE_HALF_NORM_STATS
 *   softmax and attention logits       SDX_UNSAFE_HALF_SOFTMAX
 *   f16 activation saturation          SDX_UNSAFE_F16_OVERFLOW (store Inf)
 * Each opt-out reproduces the half-precision failure it names (sums that
 * overflow 65504, logits that overflow, ...); they exist to compare
 * against other engines, not to be faster.
 * ------------------------------------------------------------------- */
#ifndef SDX_TEXT_WEIGHT_TYPE
#define SDX_TEXT_WEIGHT_TYPE SDX_AUTO
#endif
#ifndef SDX_UNET_WEIGHT_TYPE
#define SDX_UNET_WEIGHT_TYPE SDX_AUTO
#endif
#ifndef SDX_VAE_WEIGHT_TYPE
#define SDX_VAE_WEIGHT_TYPE SDX_AUTO
#endif
#ifndef SDX_TEXT_ACT_TYPE
#define SDX_TEXT_ACT_TYPE SDX_F32
#endif
#ifndef SDX_UNET_ACT_TYPE
#define SDX_UNET_ACT_TYPE SDX_F32
#endif
#ifndef SDX_VAE_ACT_TYPE
#define SDX_VAE_ACT_TYPE SDX_F32
#endif
#ifndef SDX_TEXT_COMPUTE_TYPE
#define SDX_TEXT_COMPUTE_TYPE SDX_F32
#endif
#ifndef SDX_UNET_COMPUTE_TYPE
#define SDX_UNET_COMPUTE_TYPE SDX_F32
#endif
#ifndef SDX_VAE_COMPUTE_TYPE
#define SDX_VAE_COMPUTE_TYPE SDX_F32
#endif

/* Which noise generator a seed drives (see sdx_rng_init). */
typedef enum sdx_rng_kind {
    /* torch.randn on a CPU generator (mt19937), ComfyUI's and the webui's
     * "CPU" noise. Bit-exact with PyTorch's AVX2 kernel (any x86-64 with
     * AVX2); PyTorch on CPUs without AVX2 differs by up to ~2e-6 for draws
     * of 16 or more values. Only the low 32 bits of the seed matter. */
    SDX_RNG_CPU  = 0,
    /* AUTOMATIC1111's Philox-4x32-10 "NV" emulation of CUDA torch.randn,
     * bit-exact. Each randn call is one counter step, whatever its size;
     * a call draws at most 2^32 values. */
    SDX_RNG_CUDA = 1
} sdx_rng_kind;

/* What a UNet predicts (from the checkpoint, or sdx_model_desc.prediction). */
typedef enum sdx_prediction {
    SDX_PRED_EPS = 0,  /* SD 1.x, SD 2.x 512, SDXL */
    SDX_PRED_V   = 1,  /* SD 2.x 768-v */
    SDX_PRED_X0  = 2,  /* the clean latent itself (diffusers' "sample"):
                          SDXL-Lightning's 1-step model */
    SDX_PRED_LCM = 3   /* eps on LCM's 50 timesteps with its boundary
                          scalings (ComfyUI's "lcm" sampling): LCM models */
} sdx_prediction;

/* Result codes. Every failing call also leaves a readable message in the
 * context (sdx_last_error). */
typedef enum sdx_result {
    SDX_OK              = 0,
    SDX_ERR_INVALID_ARG = -1,  /* a bad parameter from the caller        */
    SDX_ERR_NOMEM       = -2,  /* an allocation failed                   */
    SDX_ERR_IO          = -3,  /* open/read/write/mmap failed            */
    SDX_ERR_FORMAT      = -4,  /* a file is malformed                    */
    SDX_ERR_MODEL       = -5,  /* missing/mis-shaped tensor, unknown arch */
    SDX_ERR_NONFINITE   = -6,  /* a NaN/Inf appeared (see the tracer)    */
    SDX_ERR_CANCELLED   = -7,  /* sdx_cancel, or a callback, stopped it  */
    SDX_ERR_UNSUPPORTED = -8   /* valid input this build cannot handle   */
} sdx_result;

typedef enum sdx_log_level {
    SDX_LOG_ERROR = 0,
    SDX_LOG_WARN  = 1,
    SDX_LOG_INFO  = 2,
    SDX_LOG_DEBUG = 3
} sdx_log_level;

/* Everything in sdx.h hangs off a context. Zero-initialise the desc and
 * set what you need; every field has a default. */
typedef struct sdx_desc {
    int n_threads;          /* worker threads; 0 = all cores; at most
                               SDX_MAX_THREADS (more are clamped)       */
    /* allocator hooks: set all three or none (default: SDX_MALLOC etc.) */
    void *(*alloc)(size_t size, void *user);
    void *(*realloc)(void *ptr, size_t size, void *user);
    void  (*free)(void *ptr, void *user);
    /* log sink; default: nothing is printed                            */
    void  (*log)(sdx_log_level level, const char *msg, void *user);
    sdx_log_level log_level; /* most verbose level passed to log (0 = errors) */
    void *user;             /* passed to the hooks above                  */
    int trace_nonfinite;    /* 1: check every op's output for NaN/Inf and
                               stop at the first one (slower)            */
    int quant_exact;        /* 1: linear layers multiply block-quantized
                               weights (GGUF q8_0, q4_0, ...) exactly as
                               if dequantized to f32 first, never with
                               int8 activations (slower where the CPU has
                               int8 dot products; see README, GGUF)      */
    int no_graphs;          /* 1: a GPU backend runs a UNet call op by op,
                               never as a recorded graph (README, GPU)   */
} sdx_desc;

typedef struct sdx_ctx sdx_ctx;

/* Returns NULL if the context cannot be allocated, or if only some of the
 * three allocator hooks are set (then desc->log, when set, says so).
 * Threads: one context serves one call at a time (its models,
 * conditionings and sampling sessions included); calls may come from
 * different threads one after another (sdx_cancel is the exception).
 * Separate contexts share nothing and may run in parallel threads. */
SDX_API sdx_ctx    *sdx_create(const sdx_desc *desc);
SDX_API void        sdx_destroy(sdx_ctx *ctx);
/* Stops the call running on ctx: it returns SDX_ERR_CANCELLED at its next
 * check, frees what it made (sdx_last_error: "cancelled (sdx_cancel)"
 * and where) and the context is ready for the next call. Safe from any
 * thread at any time between sdx_create and sdx_destroy; it only bumps
 * an atomic counter (lock-free unless built with SDX_NO_ATOMICS). The
 * checks: before each model evaluation of a sampler, between the VAE's
 * blocks and tiles (decode and encode), between the upscaler's tiles and
 * blocks. Which call it reaches: each of sdx_generate, sdx_encode_prompt,
 * sdx_sampling_begin, sdx_decode_latent, sdx_encode_image and sdx_upscale
 * notes the counter as the first thing it does, and is stopped by every
 * sdx_cancel after that, up to its last check; one made earlier (while no
 * call ran, or racing the end of the previous call) never reaches it.
 * A sampling session is one call from sdx_sampling_begin on: a cancel
 * made between two sdx_sampling_step calls ends the next step, and the
 * session stays cancelled (free it). */
SDX_API void        sdx_cancel(sdx_ctx *ctx);
/* Message of the last failure on this context ("" if none). */
SDX_API const char *sdx_last_error(const sdx_ctx *ctx);
SDX_API void        sdx_set_trace(sdx_ctx *ctx, int enabled);
SDX_API int         sdx_threads(const sdx_ctx *ctx);
SDX_API const char *sdx_result_name(int result);
/* The process's peak resident memory so far, in bytes (Linux and the
 * BSDs: ru_maxrss; Windows: the peak working set); 0 when unknown. */
SDX_API size_t      sdx_peak_rss(void);

/* ---- dtypes and half floats ---------------------------------------- */
/* Bytes per element; 0 for the block-quantized types and unknown values. */
SDX_API size_t      sdx_dtype_size(sdx_dtype t);
/* Values per block: 1 for the element types, 32 or 256 for the
 * block-quantized ones, 0 for unknown values; *block_bytes (may be NULL)
 * receives the bytes of one block. */
SDX_API int         sdx_dtype_block(sdx_dtype t, size_t *block_bytes);
SDX_API const char *sdx_dtype_name(sdx_dtype t);   /* "F32", "F16", ..., "Q8_0", "Q4_K" */

/* IEEE binary16 and bfloat16: round to nearest even, subnormals kept,
 * overflow -> Inf, NaN stays NaN (quiet). */
SDX_API uint16_t sdx_f32_to_f16(float f);
SDX_API float    sdx_f16_to_f32(uint16_t h);
SDX_API uint16_t sdx_f32_to_bf16(float f);
SDX_API float    sdx_bf16_to_f32(uint16_t h);
/* Array forms (may use F16C / AVX512-BF16 when the CPU has them; always
 * bit-identical to the scalar functions). */
SDX_API void sdx_f32_to_f16_n(const float *src, uint16_t *dst, size_t n);
SDX_API void sdx_f16_to_f32_n(const uint16_t *src, float *dst, size_t n);
SDX_API void sdx_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n);
SDX_API void sdx_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n);

/* ---- tensors ------------------------------------------------------- */
#define SDX_MAX_DIMS 8

/* A dense row-major tensor. `owned` says whether sdx_tensor_free must
 * release `data`; views into a mapped file or the caller's memory are
 * not owned. Shapes are in PyTorch order (outermost first). `device` is 0
 * for host memory and 1 for a GPU backend's memory, which host code must
 * not dereference (see sdx_backend). */
typedef struct sdx_tensor {
    sdx_dtype dtype;
    int       ndim;
    int64_t   shape[SDX_MAX_DIMS];
    void     *data;
    int       owned;
    const char *name;   /* optional; used in messages */
    int       device;
} sdx_tensor;

SDX_API int64_t sdx_tensor_numel(const sdx_tensor *t);
SDX_API size_t  sdx_tensor_nbytes(const sdx_tensor *t);
/* Allocates a zeroed tensor; free with sdx_tensor_free. */
SDX_API sdx_result sdx_tensor_alloc(sdx_ctx *ctx, sdx_tensor *t, sdx_dtype dtype,
                              int ndim, const int64_t *shape);
SDX_API void sdx_tensor_free(sdx_ctx *ctx, sdx_tensor *t);
/* Writes "[1, 4, 64, 64]" into buf; returns buf. */
SDX_API const char *sdx_shape_str(const sdx_tensor *t, char *buf, size_t size);

/* 8-bit interleaved RGB (channels 3) or grey (channels 1, masks). */
typedef struct sdx_image {
    int width, height, channels;
    uint8_t *data;
} sdx_image;

SDX_API void sdx_image_free(sdx_ctx *ctx, sdx_image *img);

#ifdef __cplusplus
}
#endif
