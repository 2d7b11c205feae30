/* sdx.h - Stable Diffusion 1.x / 2.x / SDXL inference in one C header.
   Generated from src/ by tools/amalgamate.sh; edit src/, not this file.

   USAGE
     In exactly one C file:
         #define SDX_IMPLEMENTATION
         #include "sdx.h"
     Everywhere else just #include "sdx.h". Link with -lm -lpthread.
     Define SDX_STATIC before the include to make every function static.

   QUICK START (see examples/minimal.c)
         sdx_desc desc = {0};                 // zero = defaults
         sdx_ctx *ctx = sdx_create(&desc);
         sdx_model *model;
         sdx_model_desc md = {0};
         md.checkpoint = "sd15.safetensors";
         if (sdx_model_load(ctx, &md, &model) != SDX_OK)
             fprintf(stderr, "%s\n", sdx_last_error(ctx));
         sdx_gen_params gp = {0};             // zero = 20 steps, cfg 7, ...
         gp.prompt = "a red fox in the snow";
         sdx_gen_result res;
         if (sdx_generate(model, &gp, &res) == SDX_OK) {
             // res.images[0]: width x height RGB8
             sdx_gen_result_free(ctx, &res);
         }
         sdx_model_free(model);
         sdx_destroy(ctx);

   THE PRIMARY API (declared first below)
     sdx_create / sdx_destroy / sdx_last_error     a context and its errors
     sdx_model_load / sdx_model_free               a checkpoint
     sdx_generate / sdx_gen_result_free            txt2img, img2img, inpainting
     stages, for your own pipeline or a game loop:
     sdx_encode_prompt      -> sdx_cond            (sdx_cond_free)
     sdx_sampling_begin     -> sdx_sampling        step / finish / latent /
                                                   denoised (x0 preview) / free
     sdx_decode_latent, sdx_encode_image           VAE both ways
   Then, for programs that go deeper: safetensors files, noise generators,
   the tokenizer, schedules and samplers, and backends (sdx_hip.h).

   THREADS: one context serves one call at a time (with its models,
   conditionings and sessions); separate contexts are independent.

   Every function that can fail returns an sdx_result (0 = SDX_OK) and leaves
   a readable message in sdx_last_error(ctx). Whatever a function hands you
   (a tensor, an image, a model) is yours to free with the matching _free.

   CONFIGURATION (define before including, in the implementation file)
     SDX_MALLOC(sz) SDX_REALLOC(p,sz) SDX_FREE(p)   default allocator
     SDX_ASSERT(x)                                  default assert()
     SDX_API / SDX_STATIC                           linkage
     SDX_VAE_TILE_BUDGET                            VAE activation bytes above which
                                                    decode/encode use tiles (4 GiB)
     SDX_NO_SIMD                                    scalar half-float conversion only
     Precision policy: SDX_{TEXT,UNET,VAE}_{WEIGHT,ACT}_TYPE and the
     SDX_UNSAFE_* opt-outs, documented below where they are defined.
*/

/* The implementation uses POSIX (mmap, pthreads, sysconf); make them
 * visible under -std=c11. This only works if sdx.h comes before other
 * system headers in the implementation file; otherwise compile that file
 * with -D_DEFAULT_SOURCE. */
#if defined(SDX_IMPLEMENTATION) && !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE)
#define _DEFAULT_SOURCE 1
#endif
#ifndef SDX_H_INCLUDED
#define SDX_H_INCLUDED

/* ---- src/core/api_core.h ---- */
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
    SDX_PRED_V   = 1   /* SD 2.x 768-v */
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
    SDX_ERR_CANCELLED   = -7,  /* the progress callback asked to stop    */
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
    int n_threads;          /* worker threads; 0 = all cores            */
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
} sdx_desc;

typedef struct sdx_ctx sdx_ctx;

/* Returns NULL if the context cannot be allocated, or if only some of the
 * three allocator hooks are set (then desc->log, when set, says so).
 * Threads: one context serves one call at a time (its models,
 * conditionings and sampling sessions included); calls may come from
 * different threads one after another. Separate contexts share nothing
 * and may run in parallel threads. */
SDX_API sdx_ctx    *sdx_create(const sdx_desc *desc);
SDX_API void        sdx_destroy(sdx_ctx *ctx);
/* Message of the last failure on this context ("" if none). */
SDX_API const char *sdx_last_error(const sdx_ctx *ctx);
SDX_API void        sdx_set_trace(sdx_ctx *ctx, int enabled);
SDX_API int         sdx_threads(const sdx_ctx *ctx);
SDX_API const char *sdx_result_name(int result);

/* ---- dtypes and half floats ---------------------------------------- */
SDX_API size_t      sdx_dtype_size(sdx_dtype t);
SDX_API const char *sdx_dtype_name(sdx_dtype t);   /* "F32", "F16", ... */

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
SDX_API int  sdx_tensor_alloc(sdx_ctx *ctx, sdx_tensor *t, sdx_dtype dtype,
                              int ndim, const int64_t *shape);
SDX_API void sdx_tensor_free(sdx_ctx *ctx, sdx_tensor *t);
/* Writes "[1, 4, 64, 64]" into buf; returns buf. */
SDX_API const char *sdx_shape_str(const sdx_tensor *t, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

/* ---- src/pipeline/api_pipeline.h ---- */

/* ===================================================================== */
/*  Public API: models and image generation                              */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum sdx_family {
    SDX_FAMILY_UNKNOWN = 0,
    SDX_FAMILY_SD1,        /* CLIP ViT-L, 8-head UNet, eps            */
    SDX_FAMILY_SD2,        /* OpenCLIP ViT-H, head_dim 64, eps or v   */
    SDX_FAMILY_SDXL        /* CLIP ViT-L + OpenCLIP bigG, label_emb   */
} sdx_family;

SDX_API const char *sdx_family_name(sdx_family f);

typedef struct sdx_model_desc {
    const char *checkpoint;    /* single-file .safetensors (required)        */
    const char *vae;           /* separate VAE .safetensors replacing the
                                  checkpoint's (optional)                   */
    /* CLIP vocabulary: merges.txt, bpe_simple_vocab_16e6.txt.gz or a folder
     * holding one. NULL: look next to the checkpoint, then $SDX_VOCAB. */
    const char *vocab;
    const void *vocab_data;    /* or an embedded vocabulary (sdx-vocab2c)   */
    size_t      vocab_size;
    const char *prediction;    /* "eps", "v" or NULL: from the checkpoint   */
    int         scan_nonfinite;/* 1: check every weight for NaN/Inf at load
                                  and fail naming the bad tensors           */
    /* TAESD, the tiny autoencoder (optional): up to two files, each adding
     * the halves it holds: taesd_decoder / taesd_encoder (taesdxl_* for
     * SDXL) as released, or a diffusers AutoencoderTiny file with both.
     * A loaded half replaces the VAE for its job unless a sdx_codec
     * parameter says otherwise. */
    const char *taesd[2];
    int         codecs_only;   /* 1: load only the VAE and TAESD, for
                                  sdx_decode_latent / sdx_encode_image (no
                                  text encoders, UNet or vocabulary); the
                                  checkpoint may then be NULL if taesd is
                                  given                                     */
} sdx_model_desc;

typedef struct sdx_model sdx_model;

SDX_API int  sdx_model_load(sdx_ctx *ctx, const sdx_model_desc *desc, sdx_model **out);
SDX_API void sdx_model_free(sdx_model *model);
SDX_API sdx_family     sdx_model_family(const sdx_model *model);
SDX_API sdx_prediction sdx_model_prediction(const sdx_model *model);
/* "model" name used in PNG parameters: the checkpoint file name without
 * folder or extension. */
SDX_API const char    *sdx_model_name(const sdx_model *model);

/* 8-bit interleaved RGB (channels 3) or grey (channels 1, masks). */
typedef struct sdx_image {
    int width, height, channels;
    uint8_t *data;
} sdx_image;

SDX_API void sdx_image_free(sdx_ctx *ctx, sdx_image *img);

/* What turns latents into pixels and back. AUTO: TAESD when the model has
 * the TAESD half the job needs (sdx_model_desc.taesd), else the VAE. */
typedef enum sdx_codec { SDX_CODEC_AUTO = 0, SDX_CODEC_VAE, SDX_CODEC_TAESD } sdx_codec;

/* Called after each sampler step; `latent` is the current latent
 * [1, 4, H/8, W/8] (F32). Return non-zero to cancel the generation
 * (sdx_generate then returns SDX_ERR_CANCELLED). */
typedef int (*sdx_progress_fn)(void *user, int image, int step, int steps, const sdx_tensor *latent);
/* Live preview after `step`: the current estimate of the final image (or
 * the noisy latent, with preview_noisy) decoded to RGB. Non-zero cancels
 * as for progress. */
typedef int (*sdx_preview_fn)(void *user, int image, int step, int steps, const sdx_image *preview);

typedef struct sdx_gen_params {
    const char *prompt;            /* A1111 weighting syntax, BREAK       */
    const char *negative_prompt;   /* NULL = ""                           */
    int   width, height;           /* multiples of 8; 0 = the init's size, else the family default */
    int   steps;                   /* 0 = 20                              */
    float cfg_scale;               /* 0 = 7; 1 skips the negative pass    */
    const char *sampler;           /* ComfyUI or sd-cli name; NULL = "euler_a" */
    const char *scheduler;         /* ComfyUI name, "ays"; NULL = "normal" */
    int64_t seed;                  /* < 0: random (reported in the result) */
    sdx_rng_kind rng;              /* SDX_RNG_CPU (ComfyUI) or SDX_RNG_CUDA (A1111) */
    int   clip_skip;               /* 0 or 1 = the model's default layer   */
    int   batch_count;             /* images with seeds seed, seed+1, ...; 0 = 1 */
    /* img2img / inpainting, as ComfyUI does them (README: "img2img and
     * inpainting"). Sides of init_image that are not multiples of 8 are
     * centre-cropped; width/height 0 take the (cropped) init size. */
    const sdx_image *init_image;   /* RGB, any size >= 8x8                 */
    const sdx_tensor *init_latent; /* or a model-space latent [1, 4, H/8, W/8]
                                      (a result's latents[i], --output-latent) */
    const sdx_image *mask;         /* grey, white = repaint, any size (resized
                                      to the latent); needs an init         */
    float strength;                /* denoise in (0, 1]; 0 = 0.75          */
    int   encode_sample;           /* 0: the VAE posterior mean; 1: mean + std
                                      * noise drawn with `rng` from encode_seed
                                      (A1111, older ComfyUI)                */
    int64_t encode_seed;
    int   paste_back;              /* 1: A1111-style overlay: init pixels
                                      outside the blurred mask (not ComfyUI) */
    int   mask_blur;               /* overlay blur sigma in px; 0 = 4, < 0 none */
    /* SDXL size conditioning; 0 = image size / no crop */
    int   orig_width, orig_height, crop_top, crop_left, target_width, target_height;
    int   vae_tiling;              /* 0 auto (memory budget), 1 always, -1 never */
    int   tiling;                  /* 1: seamless texture (A1111 "Tiling"): the
                                      UNet's and VAE's convolutions wrap around */
    sdx_progress_fn progress;
    void *progress_user;
    sdx_codec codec;               /* final decode and init-image encode   */
    /* live previews (sd-cli --preview): every preview_interval steps
     * (0 = 1), the denoised estimate x0 decoded by preview_codec */
    sdx_preview_fn preview;
    void *preview_user;
    int   preview_interval;
    sdx_codec preview_codec;       /* AUTO: TAESD when loaded, else the VAE */
    int   preview_noisy;           /* 1: preview the noisy latent instead  */
} sdx_gen_params;

typedef struct sdx_gen_result {
    int        count;
    sdx_image *images;             /* count RGB images                   */
    int64_t   *seeds;              /* the seed of each image             */
    sdx_tensor *latents;           /* final latents before VAE decoding  */
} sdx_gen_result;

SDX_API int  sdx_generate(sdx_model *model, const sdx_gen_params *params, sdx_gen_result *out);
SDX_API void sdx_gen_result_free(sdx_ctx *ctx, sdx_gen_result *res);

/* ---- stages ---------------------------------------------------------
 * sdx_generate is these calls in a row; programs that compose their own
 * pipeline, or spread a generation over the frames of a game loop, call
 * them directly:
 *
 *     sdx_cond *cond;  sdx_sampling *s;  sdx_image img;
 *     sdx_encode_prompt(model, &gp, &cond);
 *     sdx_sampling_begin(model, &gp, cond, 0, &s);
 *     while (!sdx_sampling_done(s))            // one UNet call per step
 *         if (sdx_sampling_step(s) != SDX_OK) break;
 *     sdx_decode_latent(model, sdx_sampling_latent(s), &gp, &img);
 *     sdx_sampling_free(s);  sdx_cond_free(cond);
 *
 * A stepped session gives the same latent as one uninterrupted run. */

/* The prompt and negative prompt of `params`, encoded for this model
 * (cfg 1 encodes the prompt alone; SDXL also uses the size fields). */
typedef struct sdx_cond sdx_cond;
SDX_API int  sdx_encode_prompt(sdx_model *model, const sdx_gen_params *params, sdx_cond **out);
SDX_API void sdx_cond_free(sdx_cond *cond);

/* Samples image `index` of the batch (seed + index) from noise, or from
 * params->init_image (and mask). `cond` must come from the same model and
 * parameters (cfg, SDXL size) and outlive the session. */
typedef struct sdx_sampling sdx_sampling;
SDX_API int  sdx_sampling_begin(sdx_model *model, const sdx_gen_params *params, const sdx_cond *cond, int index,
                                 sdx_sampling **out);
/* One more model evaluation (a sampler step; second-order samplers take
 * two per step). Does nothing once done. params->progress is called for
 * every completed sampler step, here as in sdx_generate. */
SDX_API int  sdx_sampling_step(sdx_sampling *s);
SDX_API int  sdx_sampling_finish(sdx_sampling *s);          /* all remaining steps */
SDX_API int  sdx_sampling_done(const sdx_sampling *s);
SDX_API int  sdx_sampling_steps(const sdx_sampling *s, int *total);   /* steps completed */
SDX_API int64_t sdx_sampling_seed(const sdx_sampling *s);
/* The current latent [1, 4, h, w] (the final one when done) and the
 * latest prediction of the clean latent (x0, for previews); owned by the
 * session, valid until the next call on it. */
SDX_API const sdx_tensor *sdx_sampling_latent(const sdx_sampling *s);
SDX_API const sdx_tensor *sdx_sampling_denoised(const sdx_sampling *s);
SDX_API void sdx_sampling_free(sdx_sampling *s);

/* VAE or TAESD (params->codec): a latent in model space (as
 * sdx_sampling_latent, or a result's latents) to RGB, and an RGB image to
 * such a latent as img2img encodes it (sides cropped to multiples of the
 * codec's factor, 8, as ComfyUI does; the VAE's posterior mean, scaled, or
 * a sample with params->encode_sample / encode_seed / rng; TAESD's output
 * as is). params may be NULL; they read codec, vae_tiling, encode_* and
 * (decode) tiling. */
SDX_API int sdx_decode_latent(sdx_model *model, const sdx_tensor *latent, const sdx_gen_params *params, sdx_image *out);
SDX_API int sdx_encode_image(sdx_model *model, const sdx_image *image, const sdx_gen_params *params, sdx_tensor *latent);

/* AUTOMATIC1111-style "parameters" text for image `index` of a result:
 * "prompt\nNegative prompt: ...\nSteps: 20, Sampler: ..., Schedule type:
 * ..., CFG scale: 7, Seed: ..., Size: WxH, Model: ...". Returns the
 * length it needed (like snprintf; buf may be NULL when size is 0), or -1
 * when out of memory. */
SDX_API int sdx_format_parameters(const sdx_model *model, const sdx_gen_params *params, int64_t seed,
                                  char *buf, size_t size);

#ifdef __cplusplus
}
#endif

/* ---- src/core/api_safetensors.h ---- */

/* ===================================================================== */
/*  Public API: safetensors files                                         */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

/* An open safetensors file. The file is mmapped read-only and tensors point
 * into the mapping, so opening a multi-GB checkpoint costs address space,
 * not RAM. Tensor data is valid until sdx_st_close. The header is checked
 * strictly: bounded length, valid JSON, known dtypes, shape x dtype size ==
 * byte span, spans inside the data section, no overlaps, unique names. */
typedef struct sdx_st sdx_st;

SDX_API int  sdx_st_open(sdx_ctx *ctx, const char *path, sdx_st **out);
/* Parses a file image in memory (not copied: `data` must outlive the
 * sdx_st). `name` is used in messages. */
SDX_API int  sdx_st_open_memory(sdx_ctx *ctx, const void *data, size_t size,
                                const char *name, sdx_st **out);
SDX_API void sdx_st_close(sdx_st *st);

SDX_API const char       *sdx_st_path(const sdx_st *st);
SDX_API int               sdx_st_count(const sdx_st *st);
SDX_API const sdx_tensor *sdx_st_get(const sdx_st *st, int index); /* file order */
SDX_API const sdx_tensor *sdx_st_find(const sdx_st *st, const char *name);
/* __metadata__ entries (string values). */
SDX_API int         sdx_st_meta_count(const sdx_st *st);
SDX_API int         sdx_st_meta_at(const sdx_st *st, int index, const char **key, const char **value);
SDX_API const char *sdx_st_meta(const sdx_st *st, const char *key);   /* NULL if absent */

/* Copies tensor `name` into a new owned F32 tensor (any float/int dtype
 * converted). Free with sdx_tensor_free. */
SDX_API int sdx_st_read_f32(sdx_ctx *ctx, const sdx_st *st, const char *name, sdx_tensor *out);

/* Writes tensors (each with a name) and optional metadata key/value pairs
 * (meta[2*i] = key, meta[2*i+1] = value). The file is written to a
 * temporary name and renamed, so a failure never leaves half a file. */
SDX_API int sdx_st_write(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors,
                         const char *const *meta, int n_meta);

/* Checks every float tensor for NaN/Inf. Returns the number of bad
 * tensors (0 = clean) or a negative error; each bad tensor is reported
 * through the log callback (SDX_LOG_WARN) and the first few are named in
 * sdx_last_error. */
SDX_API int sdx_st_scan_nonfinite(sdx_ctx *ctx, const sdx_st *st);

#ifdef __cplusplus
}
#endif

/* ---- src/core/api_rng.h ---- */

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

/* ---- src/text/api_text.h ---- */

/* ===================================================================== */
/*  Public API: CLIP BPE tokenizer                                        */
/* ===================================================================== */
/* The byte-level BPE tokenizer shared by every Stable Diffusion text
 * encoder (CLIP ViT-L, OpenCLIP ViT-H and ViT-bigG), matching OpenAI's
 * clip/simple_tokenizer.py: text clean-up (the ftfy fixes prompts need,
 * HTML entities, whitespace, Unicode lower-casing), the CLIP
 * pre-tokenizer, then BPE by merge rank.
 *
 * Input text is UTF-8. Invalid UTF-8 is not an error: each byte that does
 * not start a valid sequence becomes U+FFFD before the clean-up. */
#ifdef __cplusplus
extern "C" {
#endif

#define SDX_TEXT_CONTEXT 77      /* tokens per CLIP sequence, BOS and EOS included */
#define SDX_TOKEN_BOS    49406   /* <|startoftext|> in the CLIP vocabulary */
#define SDX_TOKEN_EOS    49407   /* <|endoftext|>; also CLIP-L's padding */

typedef struct sdx_tokenizer sdx_tokenizer;

/* Loads the vocabulary from `path`: a file or a directory holding one.
 * Accepted files: Hugging Face `merges.txt` (with `vocab.json` beside it
 * used for the ids when present; otherwise ids are derived from the merge
 * order), OpenAI's `bpe_simple_vocab_16e6.txt.gz` (or any gzip of such a
 * merge list). In a directory, `merges.txt`, `bpe_simple_vocab_16e6.txt.gz`
 * and `tokenizer/merges.txt` are tried in that order. As CLIP does, at
 * most the first 48894 merges are used. */
SDX_API int  sdx_tokenizer_load(sdx_ctx *ctx, const char *path, sdx_tokenizer **out);
/* Same from memory: the bytes of a merge list, plain or gzip-compressed
 * (e.g. embedded with tools/sdx-vocab2c). Ids are derived from the merge
 * order. `data` is not referenced after the call. */
SDX_API int  sdx_tokenizer_load_memory(sdx_ctx *ctx, const void *data, size_t size, sdx_tokenizer **out);
/* Frees the tokenizer (NULL is fine). The context it was loaded with must
 * still exist. */
SDX_API void sdx_tokenizer_free(sdx_tokenizer *tok);
/* Vocabulary size and the ids of <|startoftext|> / <|endoftext|>. */
SDX_API void sdx_tokenizer_info(const sdx_tokenizer *tok, int *n_vocab, int32_t *bos, int32_t *eos);

/* Raw BPE ids of `text` (no BOS/EOS, no truncation), like CLIP's
 * SimpleTokenizer.encode. *ids is allocated (free with sdx_tokens_free;
 * it is non-NULL even when *n == 0). */
SDX_API int  sdx_tokenize(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t **ids, int *n);
SDX_API void sdx_tokens_free(sdx_ctx *ctx, int32_t *ids);
/* One CLIP input sequence, like clip.tokenize(text, truncate=True): BOS,
 * the first min(n, 75) ids, EOS, then pad_id up to 77 (49407 for CLIP-L /
 * SD 1.x / SDXL encoder 0, 0 for OpenCLIP / SD 2.x / SDXL encoder 1).
 * Longer text is cut so that EOS sits at position 76. */
SDX_API int  sdx_tokenize_padded(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t pad_id,
                                 int32_t out[SDX_TEXT_CONTEXT]);

#ifdef __cplusplus
}
#endif

/* ---- src/sampling/api_sampling.h ---- */

/* ===================================================================== */
/*  Public API: noise schedules, model sampling and samplers              */
/* ===================================================================== */
/* Everything here follows ComfyUI's KSampler semantics (samplers.py,
 * k_diffusion/sampling.py, model_sampling.py): same names, same sigma
 * arrays, same per-step noise consumption, float32 state. */
#ifdef __cplusplus
extern "C" {
#endif

/* ---- model sampling: the discrete DDPM schedule --------------------- */
#define SDX_TRAIN_STEPS 1000

/* The 1000 training noise levels of SD 1.x / 2.x / SDXL (scaled_linear
 * betas 0.00085..0.012; the v-prediction models use the same table).
 * Index t is the UNet timestep: sigmas[0] is the smallest. */
typedef struct sdx_model_sampling {
    float sigmas[SDX_TRAIN_STEPS];
    float log_sigmas[SDX_TRAIN_STEPS];
    float sigma_min;   /* sigmas[0]   */
    float sigma_max;   /* sigmas[999] */
} sdx_model_sampling;

SDX_API void  sdx_model_sampling_init(sdx_model_sampling *ms);
/* Nearest training timestep in log space (first index on ties). The UNet
 * is evaluated at this integer timestep. sigma 0 gives 0. */
SDX_API int   sdx_sigma_to_timestep(const sdx_model_sampling *ms, float sigma);
/* Log-linear interpolation of the table at a fractional timestep
 * (clamped to [0, 999]). */
SDX_API float sdx_timestep_to_sigma(const sdx_model_sampling *ms, float t);
/* UNet input scale: x_in = x * c_in. */
SDX_API float sdx_model_c_in(float sigma);
/* UNet output -> denoised prediction (may alias any input). */
SDX_API void  sdx_model_denoised(sdx_prediction pred, float sigma, const float *x,
                                 const float *model_out, float *denoised, size_t n);

/* ---- schedulers ------------------------------------------------------ */
typedef enum sdx_scheduler {
    SDX_SCHED_NORMAL = 0,
    SDX_SCHED_KARRAS,
    SDX_SCHED_EXPONENTIAL,
    SDX_SCHED_SGM_UNIFORM,
    SDX_SCHED_SIMPLE,
    SDX_SCHED_DDIM_UNIFORM,
    SDX_SCHED_BETA,
    SDX_SCHED_LINEAR_QUADRATIC,
    SDX_SCHED_KL_OPTIMAL,
    SDX_SCHED_AYS_SD1,          /* ComfyUI AlignYourStepsScheduler, SD1 table  */
    SDX_SCHED_AYS_SDXL,         /*                                  SDXL table */
    SDX_SCHED_POLYEXPONENTIAL,  /* k-diffusion get_sigmas_polyexponential, rho 1 */
    SDX_SCHED_VP,               /* k-diffusion get_sigmas_vp, default betas      */
    SDX_SCHED_COUNT
} sdx_scheduler;

/* "ays" needs the model family: there is an SD1 and an SDXL table, and
 * none for SD 2.x (ComfyUI has none either), so it is not a name here. */
SDX_API int         sdx_scheduler_from_name(sdx_ctx *ctx, const char *name, sdx_scheduler *out);
SDX_API const char *sdx_scheduler_name(sdx_scheduler s);

/* ComfyUI calculate_sigmas(model_sampling, name, steps): a new owned 1-D
 * F32 tensor, normally steps + 1 values ending in 0. The length is in
 * out->shape[0]: ddim_uniform and beta may return more or fewer. AYS
 * does not read `ms` (its levels are fixed). kl_optimal with 1 step returns
 * [sigma_max, 0] where ComfyUI divides by zero. */
SDX_API int sdx_calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx_tensor *out);

/* ---- samplers -------------------------------------------------------- */
typedef enum sdx_sampler {
    SDX_SAMPLER_EULER = 0,
    SDX_SAMPLER_EULER_ANCESTRAL,
    SDX_SAMPLER_HEUN,
    SDX_SAMPLER_HEUNPP2,
    SDX_SAMPLER_DPM_2,
    SDX_SAMPLER_DPM_2_ANCESTRAL,
    SDX_SAMPLER_LMS,
    SDX_SAMPLER_DPMPP_2S_ANCESTRAL,
    SDX_SAMPLER_DPMPP_SDE,
    SDX_SAMPLER_DPMPP_2M,
    SDX_SAMPLER_DPMPP_2M_SDE,
    SDX_SAMPLER_DPMPP_2M_SDE_HEUN,
    SDX_SAMPLER_DPMPP_3M_SDE,
    SDX_SAMPLER_DDPM,
    SDX_SAMPLER_LCM,
    SDX_SAMPLER_IPNDM,
    SDX_SAMPLER_IPNDM_V,
    SDX_SAMPLER_DEIS,
    SDX_SAMPLER_RES_MULTISTEP,
    SDX_SAMPLER_RES_MULTISTEP_ANCESTRAL,
    SDX_SAMPLER_GRADIENT_ESTIMATION,
    SDX_SAMPLER_ER_SDE,
    SDX_SAMPLER_UNI_PC,
    SDX_SAMPLER_UNI_PC_BH2,
    SDX_SAMPLER_DDIM,
    SDX_SAMPLER_COUNT
} sdx_sampler;

/* ComfyUI names, plus stable-diffusion.cpp's names where the algorithm is
 * the same (euler_a, dpm2, dpm++2s_a, dpm++2m; euler, heun, ipndm,
 * ipndm_v, lcm coincide). An unknown name fails with the list of valid
 * names. */
SDX_API int         sdx_sampler_from_name(sdx_ctx *ctx, const char *name, sdx_sampler *out);
SDX_API const char *sdx_sampler_name(sdx_sampler s);
/* 1 if the sampler draws per-step noise (it then needs a noise callback). */
SDX_API int         sdx_sampler_is_stochastic(sdx_sampler s);

/* KSampler(steps, scheduler, sampler, denoise).sigmas: for denoise < 1,
 * total = int(steps / denoise) and the last steps + 1 sigmas of that
 * schedule; dpm_2, dpm_2_ancestral, uni_pc and uni_pc_bh2 compute one
 * step more and drop the penultimate sigma. The AYS schedulers follow
 * ComfyUI's AlignYourStepsScheduler node instead (the only way to use
 * them there): round(steps * denoise) steps from the tail of the
 * steps-step table, no penultimate drop. denoise must be in (0, 1]. */
SDX_API int sdx_sampler_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                               sdx_sampler sampler, int steps, double denoise, sdx_tensor *out);

/* Start latent (ComfyUI EPS.noise_scaling): x = latent + noise * s with
 * s = sqrt(1 + sigma0^2) when sigma0 is sigma_max (relative 1e-5, or
 * larger: txt2img), else s = sigma0 (img2img tails, ddim_uniform).
 * latent may be NULL (zeros). x may alias latent or noise. */
SDX_API int  sdx_is_max_denoise(const sdx_model_sampling *ms, float sigma0);
SDX_API void sdx_start_latent(const sdx_model_sampling *ms, float sigma0, const float *latent,
                              const float *noise, float *x, size_t n);
/* img2img noise addition at an explicit level: x = latent + noise * sigma. */
SDX_API void sdx_add_noise(float sigma, const float *latent, const float *noise, float *x, size_t n);

/* Callbacks. Each returns SDX_OK (0) or a negative sdx_result, which the
 * sampler returns unchanged (set the context message yourself).
 *   denoise: the model; writes denoised[0..n) for x[0..n) at sigma. Must
 *            be a pure function of (x, sigma).
 *   noise:   the next per-step draw, n standard normal floats (ComfyUI:
 *            torch.randn on a CPU generator seeded seed + 1). Stock
 *            ComfyUI draws dpmpp_sde, dpmpp_2m_sde(_heun) and
 *            dpmpp_3m_sde noise from a Brownian tree instead, so those
 *            four match it only when it is given this noise sampler.
 *   step:    progress after each step's first model call; any non-zero
 *            return cancels with SDX_ERR_CANCELLED. x is the latent at the
 *            start of step i; for uni_pc it is UniPC's internal state after
 *            step i (x / sqrt(1 + sigma^2)), as ComfyUI reports it. */
typedef int (*sdx_denoise_fn)(void *user, const float *x, float sigma, float *denoised);
typedef int (*sdx_noise_fn)(void *user, float *out);
typedef int (*sdx_step_fn)(void *user, int step, int total, const float *x, const float *denoised);

typedef struct sdx_sample_desc {
    sdx_sampler    sampler;
    const float   *sigmas;      /* n_sigmas finite values >= 0, never increasing, only the
                                   last may be 0; n_sigmas - 1 steps (1 value: no step) */
    int            n_sigmas;
    size_t         n;           /* floats in the latent */
    sdx_denoise_fn denoise;     /* required */
    void          *denoise_user;
    sdx_noise_fn   noise;       /* required by stochastic samplers */
    void          *noise_user;
    sdx_step_fn    step;        /* optional */
    void          *step_user;
} sdx_sample_desc;

/* Runs the sampler in place: x holds the start latent (see
 * sdx_start_latent) and receives the result. */
SDX_API int sdx_sample(sdx_ctx *ctx, const sdx_sample_desc *desc, float *x);

#ifdef __cplusplus
}
#endif

/* ---- src/core/api_backend.h ---- */
/* ===================================================================== */
/*  Public API (advanced): backends                                       */
/* ===================================================================== */
/* A backend is where a context's activations and weights live and where
 * its kernels run. Every context starts on the CPU (host memory, threaded
 * kernels). sdx_hip.h provides a GPU backend (sdx_hip_use); a program can
 * also install its own. Model code never touches device memory: it calls
 * the kernels below and moves values with upload/download, so per sampler
 * step only the latent crosses the bus.
 *
 * Device buffers are opaque to sdx: it only adds byte offsets to them (a
 * tensor view into a buffer), passes them to the backend's kernels, and
 * never dereferences them. A tensor's `device` field says which side its
 * data is on (0 host, 1 the backend). Kernels see tensors in F32, F16 or
 * BF16 storage (any mix), and owe the precision policy what the CPU
 * kernels do: f32 accumulation, f32 norm statistics and softmax, f16
 * stores that saturate at +-65504. Shapes and dtypes have been checked
 * against each kernel's contract (docs/INTERNALS.md) before it is called.
 * A kernel returns SDX_OK or an error code, with sdx_fail for the message.
 *
 * Set the backend before loading models: weights are uploaded once, at
 * load, in their storage dtype. */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sdx_backend {
    const char *name;          /* "cpu", "hip:0 (NVIDIA H100)", ... */
    void *user;                /* the backend's state: sdx_backend_user(ctx) */
    int host_memory;           /* 1: its buffers are host memory (the CPU) */

    /* memory; alloc returns NULL on failure */
    void *(*alloc)(void *user, size_t bytes);
    void  (*free)(void *user, void *ptr);
    int   (*upload)(void *user, void *dst, const void *src, size_t bytes);
    int   (*download)(void *user, void *dst, const void *src, size_t bytes);
    void  (*release)(void *user);          /* at sdx_destroy or replacement; may be NULL */

    /* kernels (sdx_ctx first, as the CPU's) */
    int (*linear)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b);
    int (*conv2d)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                  int stride, int pad_top, int pad_left, int pad_bottom, int pad_right);
    int (*group_norm)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                      const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu);
    int (*layer_norm)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float eps,
                      const sdx_tensor *gamma, const sdx_tensor *beta);
    int (*softmax)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*attention)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                     int heads, int causal);
    int (*silu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*gelu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*quick_gelu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*geglu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*scale)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float s);
    int (*copy)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*add)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b);
    int (*mul)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b);
    int (*add_channel_bias)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v);
    int (*resize_nearest)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*pad_circular)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right);
    int (*concat_channels)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b);
    int (*nchw_to_nlc)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*nlc_to_nchw)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*clamp)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float lo, float hi);
    int (*tanh_clamp)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float limit);
} sdx_backend;

/* Puts the context on `backend` (copied; NULL = the CPU). Fails while the
 * context still holds device memory (load models after this call). */
SDX_API int   sdx_set_backend(sdx_ctx *ctx, const sdx_backend *backend);
SDX_API const char *sdx_backend_name(const sdx_ctx *ctx);
SDX_API void *sdx_backend_user(const sdx_ctx *ctx);
/* Device memory held now and at most so far (0 on the CPU backend). */
SDX_API size_t sdx_device_bytes(const sdx_ctx *ctx, size_t *peak);
/* For backends: sets the context's message, returns `code`. */
SDX_API int   sdx_fail(sdx_ctx *ctx, int code, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* SDX_H_INCLUDED */

#if defined(SDX_IMPLEMENTATION) && !defined(SDX_IMPLEMENTATION_DONE)
#define SDX_IMPLEMENTATION_DONE
/* Internals are static; not every program uses every one of them. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

/* ---- src/core/context.c ---- */
/* ===================================================================== */
/*  Context: creation and teardown                                        */
/* ===================================================================== */
/* The context owns the thread pool and the CPU kernels' scratch, so it is
 * made here, above both. */

/* ---- src/core/core.c ---- */

/* ===================================================================== */
/*  Core: allocation, errors, logging, half floats, tensors, arena,       */
/*  thread pool, non-finite tracer                                        */
/* ===================================================================== */

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <errno.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/mman.h>

#if defined(SDX_MALLOC) != defined(SDX_FREE) || defined(SDX_MALLOC) != defined(SDX_REALLOC)
#error "sdx.h: define all of SDX_MALLOC, SDX_REALLOC and SDX_FREE, or none"
#endif
#ifndef SDX_MALLOC
#define SDX_MALLOC(sz)       malloc(sz)
#define SDX_REALLOC(p, sz)   realloc(p, sz)
#define SDX_FREE(p)          free(p)
#endif
#ifndef SDX_ASSERT
#include <assert.h>
#define SDX_ASSERT(x) assert(x)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SDX__LIKELY(x)   __builtin_expect(!!(x), 1)
#define SDX__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SDX__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SDX__LIKELY(x)   (x)
#define SDX__UNLIKELY(x) (x)
#define SDX__PRINTF(a, b)
#endif

#define SDX__MIN(a, b) ((a) < (b) ? (a) : (b))
#define SDX__MAX(a, b) ((a) > (b) ? (a) : (b))
#define SDX__ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Which model part an op belongs to; selects the storage policy and names
 * the part in tracer messages. */
typedef enum sdx__part {
    SDX__PART_NONE = 0,
    SDX__PART_TEXT,
    SDX__PART_UNET,
    SDX__PART_VAE,
    SDX__PART_COUNT
} sdx__part;

typedef struct sdx__pool sdx__pool;
typedef struct sdx__kernel_state sdx__kernel_state;   /* cpu/kernels.c */

struct sdx_ctx {
    sdx_desc desc;
    int      n_threads;
    sdx__pool *pool;             /* created lazily on first parallel op */
    sdx__kernel_state *kernels;  /* per-thread scratch, kernels.c        */
    sdx_backend be;              /* where tensors live and kernels run   */
    size_t   dev_bytes, dev_peak; /* device memory held (not on the CPU)  */
    int      circular;           /* seamless tiling: convolutions wrap    */
    void    *pad_buf;            /* their padded input, backend memory    */
    size_t   pad_cap;
    char     error[1024];
    /* tracer state: what is running now, for messages */
    int      trace;
    sdx__part part;
    char     layer[192];
};

/* ---- allocation ----------------------------------------------------- */

static void *sdx__malloc(sdx_ctx *ctx, size_t size) {
    if (size == 0) size = 1;
    if (ctx && ctx->desc.alloc) return ctx->desc.alloc(size, ctx->desc.user);
    return SDX_MALLOC(size);
}

static void *sdx__realloc(sdx_ctx *ctx, void *ptr, size_t size) {
    if (size == 0) size = 1;
    if (ctx && ctx->desc.realloc) return ctx->desc.realloc(ptr, size, ctx->desc.user);
    return SDX_REALLOC(ptr, size);
}

static void sdx__free(sdx_ctx *ctx, void *ptr) {
    if (!ptr) return;
    if (ctx && ctx->desc.free) { ctx->desc.free(ptr, ctx->desc.user); return; }
    SDX_FREE(ptr);
}

static void *sdx__calloc(sdx_ctx *ctx, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = sdx__malloc(ctx, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

/* a*b into *out; 0 on overflow. Sizes read from files go through this. */
static int sdx__mul_size(size_t a, size_t b, size_t *out) {
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

static char *sdx__strdup(sdx_ctx *ctx, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)sdx__malloc(ctx, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- errors and logging ---------------------------------------------- */

static void sdx__vlog(sdx_ctx *ctx, sdx_log_level level, const char *fmt, va_list ap) {
    char buf[1024];
    if (!ctx || !ctx->desc.log || (int)level > (int)ctx->desc.log_level) return;
    vsnprintf(buf, sizeof buf, fmt, ap);
    ctx->desc.log(level, buf, ctx->desc.user);
}

static SDX__PRINTF(3, 4) void sdx__log(sdx_ctx *ctx, sdx_log_level level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sdx__vlog(ctx, level, fmt, ap);
    va_end(ap);
}

/* Records a failure and returns its code, so call sites read
 *     return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: ...", path);          */
static int sdx__vfail(sdx_ctx *ctx, int code, const char *fmt, va_list ap) {
    if (!ctx) return code;
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    sdx__log(ctx, SDX_LOG_ERROR, "%s", ctx->error);
    return code;
}

static SDX__PRINTF(3, 4) int sdx__fail(sdx_ctx *ctx, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    code = sdx__vfail(ctx, code, fmt, ap);
    va_end(ap);
    return code;
}

static int sdx__nomem(sdx_ctx *ctx, const char *what, size_t bytes) {
    return sdx__fail(ctx, SDX_ERR_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
}

SDX_API const char *sdx_last_error(const sdx_ctx *ctx) { return ctx ? ctx->error : "no context"; }

SDX_API const char *sdx_result_name(int result) {
    switch (result) {
    case SDX_OK: return "ok";
    case SDX_ERR_INVALID_ARG: return "invalid argument";
    case SDX_ERR_NOMEM: return "out of memory";
    case SDX_ERR_IO: return "i/o error";
    case SDX_ERR_FORMAT: return "malformed file";
    case SDX_ERR_MODEL: return "model error";
    case SDX_ERR_NONFINITE: return "non-finite value";
    case SDX_ERR_CANCELLED: return "cancelled";
    case SDX_ERR_UNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

/* ---- dtypes and half floats ----------------------------------------- */

SDX_API size_t sdx_dtype_size(sdx_dtype t) {
    static const size_t sizes[SDX_DTYPE_COUNT] = { 4, 2, 2, 8, 4, 8 };
    return (unsigned)t < SDX_DTYPE_COUNT ? sizes[t] : 0;
}

SDX_API const char *sdx_dtype_name(sdx_dtype t) {
    static const char *names[SDX_DTYPE_COUNT] = { "F32", "F16", "BF16", "F64", "I32", "I64" };
    return (unsigned)t < SDX_DTYPE_COUNT ? names[t] : "?";
}

static uint32_t sdx__f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float    sdx__bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

SDX_API uint16_t sdx_f32_to_f16(float f) {
    uint32_t x = sdx__f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u)                 /* NaN: keep it quiet and NaN */
        return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    if (absx >= 0x477ff000u)                /* rounds to >= 65520: Inf    */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {               /* below 2^-14: subnormal/0  */
        if (absx < 0x33000000u) return (uint16_t)sign;  /* < 2^-25: 0    */
        {
            uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
            /* value = mant * 2^(e-150) and the f16 subnormal unit is
             * 2^-24, so h = mant >> (126 - e), rounded to nearest even */
            int shift = 126 - (int)(absx >> 23);        /* 14..24 */
            uint32_t h = mant >> shift;
            uint32_t rem = mant & ((1u << shift) - 1u);
            uint32_t half = 1u << (shift - 1);
            if (rem > half || (rem == half && (h & 1u))) h++;
            return (uint16_t)(sign | h);
        }
    }
    {
        uint32_t h = ((absx - 0x38000000u) >> 13);      /* rebias 127->15 */
        uint32_t rem = absx & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
}

SDX_API float sdx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) {                      /* Inf, or NaN made quiet    */
        uint32_t quiet = mant ? 0x400000u : 0u;
        return sdx__bits_f32(sign | 0x7f800000u | quiet | (mant << 13));
    }
    if (exp == 0) {
        if (mant == 0) return sdx__bits_f32(sign);
        /* subnormal: mant * 2^-24, exact in f32 */
        {
            float v = (float)mant * 5.9604644775390625e-8f;
            return sign ? -v : v;
        }
    }
    return sdx__bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

SDX_API uint16_t sdx_f32_to_bf16(float f) {
    uint32_t x = sdx__f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)    /* NaN: force a quiet payload */
        return (uint16_t)((x >> 16) | 0x0040u);
    /* round to nearest even; overflow carries into the exponent -> Inf */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

SDX_API float sdx_bf16_to_f32(uint16_t h) { return sdx__bits_f32((uint32_t)h << 16); }

/* Scalar array loops; src/half_simd.c may replace them with F16C/AVX512
 * versions that tests prove bit-identical. */
static void sdx__f32_to_f16_scalar(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_f32_to_f16(src[i]);
}
static void sdx__f16_to_f32_scalar(const uint16_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_f16_to_f32(src[i]);
}
static void sdx__f32_to_bf16_scalar(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_f32_to_bf16(src[i]);
}
static void sdx__bf16_to_f32_scalar(const uint16_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_bf16_to_f32(src[i]);
}

/* f16 storage of an activation: out-of-range values saturate to +-65504
 * so a stored activation is never Inf when the f32 value was finite. */
static uint16_t sdx__f32_to_f16_sat(float f) {
#ifndef SDX_UNSAFE_F16_OVERFLOW
    if (f > 65504.0f) f = 65504.0f;
    else if (f < -65504.0f) f = -65504.0f;
#endif
    return sdx_f32_to_f16(f);
}

/* the array conversions, with their SIMD paths */

/* ---- src/core/half_simd.c ---- */
/* A part of core.c, included in its middle (after the scalar half
 * conversions it falls back to); the include below is for editors. */

/* ===================================================================== */
/*  Half-float array conversion. The scalar loops in core.c define the    */
/*  results; the x86-64 paths below are chosen at run time and are        */
/*  tested bit-identical to them (tests/t_half.c).                        */
/* ===================================================================== */

/* Define SDX_NO_SIMD to compile only the scalar loops. */
#if !defined(SDX_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define SDX__HALF_X86 1
#include <immintrin.h>
#include <cpuid.h>
#else
#define SDX__HALF_X86 0
#endif

static void sdx__f32_to_f16_sat_scalar(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx__f32_to_f16_sat(src[i]);
}

#if SDX__HALF_X86

/* The whole file is compiled for the baseline ISA; only these functions
 * use AVX2/F16C, and they run only after the CPU said it has both. */
#define SDX__TARGET_F16C_AVX2 __attribute__((target("avx2,f16c")))

enum { SDX__CPU_PROBED = 1, SDX__CPU_AVX2_F16C = 2 };

/* CPUID is slow (a VM exit under most hypervisors), so the answer is
 * probed once. Racing first callers compute the same value. */
static int sdx__cpu_features(void) {
    static int cached = 0;
    int f = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (!f) {
        unsigned eax, ebx, ecx, edx;
        int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
        __builtin_cpu_init();
        /* libgcc / compiler-rt also check that the OS saves YMM state. */
        f = SDX__CPU_PROBED;
        if (f16c && __builtin_cpu_supports("avx2")) f |= SDX__CPU_AVX2_F16C;
        __atomic_store_n(&cached, f, __ATOMIC_RELAXED);
    }
    return f;
}

static int sdx__half_simd_available(void) { return (sdx__cpu_features() & SDX__CPU_AVX2_F16C) != 0; }

/* VCVTPS2PH with immediate 0 rounds to nearest even whatever MXCSR says,
 * keeps subnormals, sends overflow to Inf and quiets NaNs keeping the top
 * payload bits: exactly sdx_f32_to_f16. */
SDX__TARGET_F16C_AVX2 static void sdx__f32_to_f16_avx2(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), h);
    }
    sdx__f32_to_f16_scalar(src + i, dst + i, n - i);
}

/* VCVTPH2PS is exact; it quiets signalling NaNs like sdx_f16_to_f32. */
SDX__TARGET_F16C_AVX2 static void sdx__f16_to_f32_avx2(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    sdx__f16_to_f32_scalar(src + i, dst + i, n - i);
}

/* Activation store: clamp to +-65504, then convert. MINPS/MAXPS return
 * their second operand when either is NaN, so with x second a NaN passes
 * through unclamped, as in sdx__f32_to_f16_sat. */
SDX__TARGET_F16C_AVX2 static void sdx__f32_to_f16_sat_avx2(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
#ifndef SDX_UNSAFE_F16_OVERFLOW
    const __m256 hi = _mm256_set1_ps(65504.0f), lo = _mm256_set1_ps(-65504.0f);
#endif
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
#ifndef SDX_UNSAFE_F16_OVERFLOW
        x = _mm256_max_ps(lo, _mm256_min_ps(hi, x));
#endif
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    sdx__f32_to_f16_sat_scalar(src + i, dst + i, n - i);
}

/* The integer formula of sdx_f32_to_bf16, eight lanes at a time. */
SDX__TARGET_F16C_AVX2 static void sdx__f32_to_bf16_avx2(const float *src, uint16_t *dst, size_t n) {
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i quiet = _mm256_set1_epi32(0x0040);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));
        __m256i top = _mm256_srli_epi32(x, 16);
        __m256i odd = _mm256_and_si256(top, one);
        __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(bias, odd)), 16);
        /* both sides are non-negative as int32, so the signed compare is exact */
        __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
        __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(top, quiet), is_nan);
        /* every lane is <= 0xffff, so the saturating pack is a plain
         * narrowing; it interleaves 128-bit halves, the permute undoes it */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_castsi256_si128(packed));
    }
    sdx__f32_to_bf16_scalar(src + i, dst + i, n - i);
}

SDX__TARGET_F16C_AVX2 static void sdx__bf16_to_f32_avx2(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m256i x = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), x);
    }
    sdx__bf16_to_f32_scalar(src + i, dst + i, n - i);
}

#define SDX__HALF_DISPATCH(simd, scalar, src, dst, n) \
    do { if ((n) >= 8 && sdx__half_simd_available()) simd(src, dst, n); else scalar(src, dst, n); } while (0)

#else /* !SDX__HALF_X86 */

static int sdx__half_simd_available(void) { return 0; }
#define SDX__HALF_DISPATCH(simd, scalar, src, dst, n) scalar(src, dst, n)

#endif

SDX_API void sdx_f32_to_f16_n(const float *src, uint16_t *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f32_to_f16_avx2, sdx__f32_to_f16_scalar, src, dst, n);
}
SDX_API void sdx_f16_to_f32_n(const uint16_t *src, float *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f16_to_f32_avx2, sdx__f16_to_f32_scalar, src, dst, n);
}
SDX_API void sdx_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f32_to_bf16_avx2, sdx__f32_to_bf16_scalar, src, dst, n);
}
SDX_API void sdx_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__bf16_to_f32_avx2, sdx__bf16_to_f32_scalar, src, dst, n);
}

/* f16 activation store (saturating unless SDX_UNSAFE_F16_OVERFLOW); the
 * array form of sdx__f32_to_f16_sat for sdx__store_f32. */
static void sdx__f32_to_f16_sat_n(const float *src, uint16_t *dst, size_t n) {
    SDX__HALF_DISPATCH(sdx__f32_to_f16_sat_avx2, sdx__f32_to_f16_sat_scalar, src, dst, n);
}

/* ---- src/core/core.c (continued) ---- */

/* ---- tensors -------------------------------------------------------- */

SDX_API int64_t sdx_tensor_numel(const sdx_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

SDX_API size_t sdx_tensor_nbytes(const sdx_tensor *t) {
    return (size_t)sdx_tensor_numel(t) * sdx_dtype_size(t->dtype);
}

SDX_API const char *sdx_shape_str(const sdx_tensor *t, char *buf, size_t size) {
    size_t used = 0;
    if (!size) return buf;
    buf[0] = 0;
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < t->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

/* Checks a shape for negative dims and byte-size overflow. */
static int sdx__shape_bytes(sdx_dtype dtype, int ndim, const int64_t *shape, size_t *bytes) {
    size_t n = sdx_dtype_size(dtype);
    if (!n || ndim < 0 || ndim > SDX_MAX_DIMS) return 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > SIZE_MAX) return 0;
        if (!sdx__mul_size(n, (size_t)shape[i], &n)) return 0;
    }
    *bytes = n;
    return 1;
}

SDX_API int sdx_tensor_alloc(sdx_ctx *ctx, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    size_t bytes;
    memset(t, 0, sizeof *t);
    if (!sdx__shape_bytes(dtype, ndim, shape, &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tensor_alloc: invalid shape or dtype");
    t->data = sdx__calloc(ctx, 1, bytes);
    if (!t->data) return sdx__nomem(ctx, "tensor", bytes);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->owned = 1;
    return SDX_OK;
}

SDX_API void sdx_tensor_free(sdx_ctx *ctx, sdx_tensor *t) {
    if (!t) return;
    if (t->owned) sdx__free(ctx, t->data);
    memset(t, 0, sizeof *t);
}

/* Fills a view (not owned). Unused trailing dims are left 0. */
static sdx_tensor sdx__view(sdx_dtype dtype, void *data, int ndim, const int64_t *shape) {
    sdx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.data = data;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++) t.shape[i] = shape[i];
    return t;
}

static sdx_tensor sdx__view4(sdx_dtype dtype, void *data, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t s[4] = { a, b, c, d };
    return sdx__view(dtype, data, 4, s);
}

static int sdx__same_shape(const sdx_tensor *a, const sdx_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++) if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* Widen n elements starting at element `offset` of a float buffer of any
 * storage dtype into f32. */
static void sdx__load_f32(const void *src, sdx_dtype dtype, int64_t offset, int64_t n, float *dst) {
    switch (dtype) {
    case SDX_F32: memcpy(dst, (const float *)src + offset, (size_t)n * sizeof(float)); break;
    case SDX_F16: sdx_f16_to_f32_n((const uint16_t *)src + offset, dst, (size_t)n); break;
    case SDX_BF16: sdx_bf16_to_f32_n((const uint16_t *)src + offset, dst, (size_t)n); break;
    case SDX_F64: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const double *)src)[offset + i]; break;
    case SDX_I32: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const int32_t *)src)[offset + i]; break;
    case SDX_I64: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const int64_t *)src)[offset + i]; break;
    default: SDX_ASSERT(0);
    }
}

/* Narrow n f32 values into an activation buffer of a storage dtype
 * (f16 saturates, see sdx__f32_to_f16_sat). */
static void sdx__store_f32(void *dst, sdx_dtype dtype, int64_t offset, int64_t n, const float *src) {
    switch (dtype) {
    case SDX_F32: memcpy((float *)dst + offset, src, (size_t)n * sizeof(float)); break;
    case SDX_F16: sdx__f32_to_f16_sat_n(src, (uint16_t *)dst + offset, (size_t)n); break;
    case SDX_BF16: sdx_f32_to_bf16_n(src, (uint16_t *)dst + offset, (size_t)n); break;
    default: SDX_ASSERT(0);
    }
}

/* Single-element accessors for code off the hot path. */
static float sdx__get_f32(const sdx_tensor *t, int64_t i) {
    float v;
    sdx__load_f32(t->data, t->dtype, i, 1, &v);
    return v;
}

/* ---- device memory and transfers ------------------------------------ */
/* On the CPU backend device memory is host memory; otherwise it is the
 * backend's, counted here for sdx_device_bytes and -v. */

static int sdx__on_device(const sdx_ctx *ctx) { return !ctx->be.host_memory; }

static void *sdx__dev_alloc(sdx_ctx *ctx, size_t bytes) {
    void *p;
    if (!sdx__on_device(ctx)) return sdx__malloc(ctx, bytes);
    p = ctx->be.alloc(ctx->be.user, bytes ? bytes : 1);
    if (!p) return NULL;
    ctx->dev_bytes += bytes;
    if (ctx->dev_bytes > ctx->dev_peak) ctx->dev_peak = ctx->dev_bytes;
    return p;
}

static void sdx__dev_free(sdx_ctx *ctx, void *p, size_t bytes) {
    if (!p) return;
    if (!sdx__on_device(ctx)) { sdx__free(ctx, p); return; }
    ctx->be.free(ctx->be.user, p);
    ctx->dev_bytes -= SDX__MIN(bytes, ctx->dev_bytes);
}

/* Host <-> tensor transfers: model code reads or writes the values of an
 * activation or a weight only through these two (f32 on the host side,
 * the tensor's own dtype on the other), since a tensor may live in a
 * device's memory that host code cannot touch. Half-precision tensors
 * are converted on the host, so only their storage bytes cross the bus. */
static int sdx__download(sdx_ctx *ctx, float *dst, const sdx_tensor *src) {
    int64_t n = sdx_tensor_numel(src);
    size_t bytes = sdx_tensor_nbytes(src);
    void *tmp;
    int rc;
    if (!src->device) { sdx__load_f32(src->data, src->dtype, 0, n, dst); return SDX_OK; }
    if (src->dtype == SDX_F32) return ctx->be.download(ctx->be.user, dst, src->data, bytes);
    if (!(tmp = sdx__malloc(ctx, bytes))) return sdx__nomem(ctx, "device download", bytes);
    rc = ctx->be.download(ctx->be.user, tmp, src->data, bytes);
    if (rc == SDX_OK) sdx__load_f32(tmp, src->dtype, 0, n, dst);
    sdx__free(ctx, tmp);
    return rc;
}

static int sdx__upload(sdx_ctx *ctx, sdx_tensor *dst, const float *src) {
    int64_t n = sdx_tensor_numel(dst);
    size_t bytes = sdx_tensor_nbytes(dst);
    void *tmp;
    int rc;
    if (!dst->device) { sdx__store_f32(dst->data, dst->dtype, 0, n, src); return SDX_OK; }
    if (dst->dtype == SDX_F32) return ctx->be.upload(ctx->be.user, dst->data, src, bytes);
    if (!(tmp = sdx__malloc(ctx, bytes))) return sdx__nomem(ctx, "device upload", bytes);
    sdx__store_f32(tmp, dst->dtype, 0, n, src);
    rc = ctx->be.upload(ctx->be.user, dst->data, tmp, bytes);
    sdx__free(ctx, tmp);
    return rc;
}

/* ---- scratch arena -------------------------------------------------- */
/* A stack of blocks: allocations bump a pointer, sdx__arena_mark and
 * sdx__arena_release free everything allocated since the mark. The first
 * pass grows a chain of blocks; once it has released everything, the
 * chain becomes one block of the peak size, so later passes allocate
 * nothing. The pattern in model code is: allocate the output, mark,
 * compute with temporaries, release.
 *
 * An arena's memory is the backend's (activations live where the kernels
 * run). Host temporaries of model code (tile blending, staging) come from
 * sdx__arena_host_alloc: on the CPU the same chain, on a device backend a
 * host companion arena that the same marks release. */

typedef struct sdx__block {
    struct sdx__block *next;
    size_t size, used;
    unsigned char *dev;   /* device blocks: the data; host blocks: NULL, data follows, 64-byte aligned */
} sdx__block;

typedef struct sdx__arena {
    sdx_ctx    *ctx;
    sdx__block *head;     /* first block */
    sdx__block *cur;      /* block being filled */
    size_t      min_block;
    size_t      in_use, peak, reserved;
    int         device;   /* blocks are device memory */
    struct sdx__arena *host;   /* device arenas: the host companion, made on first use */
} sdx__arena;

typedef struct sdx__mark {
    sdx__block *block; size_t used, in_use;
    sdx__block *host_block; size_t host_used, host_in_use;
} sdx__mark;

#define SDX__ARENA_ALIGN 64
#define SDX__BLOCK_HDR ((sizeof(sdx__block) + SDX__ARENA_ALIGN - 1) & ~(size_t)(SDX__ARENA_ALIGN - 1))

static void sdx__arena_init_on(sdx__arena *a, sdx_ctx *ctx, size_t min_block, int device) {
    memset(a, 0, sizeof *a);
    a->ctx = ctx;
    a->min_block = min_block ? min_block : ((size_t)64 << 20);
    a->device = device;
}

/* An arena in the context's backend memory. */
static void sdx__arena_init(sdx__arena *a, sdx_ctx *ctx, size_t min_block) {
    sdx__arena_init_on(a, ctx, min_block, sdx__on_device(ctx));
}

static void sdx__block_free(sdx__arena *a, sdx__block *b) {
    if (b->dev) sdx__dev_free(a->ctx, b->dev, b->size);
    sdx__free(a->ctx, b);
}

/* A block of `bsize` data bytes, or NULL (nothing set). */
static sdx__block *sdx__block_new(sdx__arena *a, size_t bsize) {
    sdx__block *b;
    if (!a->device) {
        size_t total = bsize + SDX__BLOCK_HDR + SDX__ARENA_ALIGN;
        if (total < bsize) return NULL;   /* huge min_block */
        b = (sdx__block *)sdx__malloc(a->ctx, total);
        if (b) b->dev = NULL;
    } else {
        b = (sdx__block *)sdx__malloc(a->ctx, sizeof *b);
        if (b && !(b->dev = (unsigned char *)sdx__dev_alloc(a->ctx, bsize))) { sdx__free(a->ctx, b); b = NULL; }
    }
    if (!b) return NULL;
    b->next = NULL;
    b->size = bsize;
    b->used = 0;
    return b;
}

static void sdx__arena_free(sdx__arena *a) {
    sdx__block *b = a->head;
    while (b) { sdx__block *n = b->next; sdx__block_free(a, b); b = n; }
    a->head = a->cur = NULL;
    a->in_use = a->reserved = 0;
    if (a->host) { sdx__arena_free(a->host); sdx__free(a->ctx, a->host); a->host = NULL; }
}

static unsigned char *sdx__block_data(sdx__block *b) {
    /* the block pointer itself is only malloc-aligned; align the data */
    uintptr_t p = (uintptr_t)b + SDX__BLOCK_HDR;
    if (b->dev) return b->dev;   /* backends hand out aligned buffers */
    p = (p + SDX__ARENA_ALIGN - 1) & ~(uintptr_t)(SDX__ARENA_ALIGN - 1);
    return (unsigned char *)p;
}

/* Returns 64-byte aligned memory or NULL (error set on the ctx). */
static void *sdx__arena_alloc(sdx__arena *a, size_t size) {
    if (size > SIZE_MAX - SDX__BLOCK_HDR - 2 * SDX__ARENA_ALIGN) {   /* rounding up would wrap */
        sdx__nomem(a->ctx, "activation arena", size);
        return NULL;
    }
    size = (size + SDX__ARENA_ALIGN - 1) & ~(size_t)(SDX__ARENA_ALIGN - 1);
    if (size == 0) size = SDX__ARENA_ALIGN;
    for (;;) {
        sdx__block *b = a->cur;
        if (b && b->size - b->used >= size) {
            void *p = sdx__block_data(b) + b->used;
            b->used += size;
            a->in_use += size;
            if (a->in_use > a->peak) a->peak = a->in_use;
            return p;
        }
        if (b && b->next && b->next->size >= size) {   /* reuse a block kept from before */
            a->cur = b->next;
            a->cur->used = 0;
            continue;
        }
        {
            size_t bsize = SDX__MAX(size, a->min_block);
            sdx__block *nb = sdx__block_new(a, bsize);
            if (!nb) { sdx__nomem(a->ctx, a->device ? "activation arena (device)" : "activation arena", bsize); return NULL; }
            /* blocks after this one stay in the chain for later requests */
            nb->next = b ? b->next : a->head;
            a->reserved += bsize;
            if (b) b->next = nb; else a->head = nb;
            a->cur = nb;
        }
    }
}

/* Host memory released by the arena's marks, for model code's host-side
 * temporaries. */
static void *sdx__arena_host_alloc(sdx__arena *a, size_t size) {
    if (!a->device) return sdx__arena_alloc(a, size);
    if (!a->host) {
        if (!(a->host = (sdx__arena *)sdx__malloc(a->ctx, sizeof *a->host))) {
            sdx__nomem(a->ctx, "host arena", sizeof *a->host);
            return NULL;
        }
        sdx__arena_init_on(a->host, a->ctx, 0, 0);
    }
    return sdx__arena_alloc(a->host, size);
}

static sdx__mark sdx__arena_mark(const sdx__arena *a) {
    sdx__mark m;
    memset(&m, 0, sizeof m);
    m.block = a->cur;
    m.used = a->cur ? a->cur->used : 0;
    m.in_use = a->in_use;
    if (a->host) {
        m.host_block = a->host->cur;
        m.host_used = a->host->cur ? a->host->cur->used : 0;
        m.host_in_use = a->host->in_use;
    }
    return m;
}

/* Replaces a chain of blocks by one block the size of the peak. In one
 * contiguous block a stack of allocations needs exactly its in-use bytes,
 * so every later pass that peaks no higher fits without a malloc. Called
 * when everything has been released; on failure the arena is just empty. */
static void sdx__arena_consolidate(sdx__arena *a) {
    sdx__block *b = a->head;
    if (!b || !b->next) return;
    while (b) { sdx__block *n = b->next; sdx__block_free(a, b); b = n; }
    a->head = a->cur = NULL;
    a->reserved = 0;
    if (!(a->head = a->cur = sdx__block_new(a, SDX__MAX(a->peak, a->min_block)))) return;
    a->reserved = a->head->size;
}

static void sdx__arena_rewind(sdx__arena *a, sdx__block *block, size_t used, size_t in_use) {
    if (!block) {
        a->cur = a->head;
        if (a->cur) a->cur->used = 0;
    } else {
        a->cur = block;
        a->cur->used = used;
    }
    a->in_use = in_use;
    if (a->in_use == 0) sdx__arena_consolidate(a);
}

static void sdx__arena_release(sdx__arena *a, sdx__mark m) {
    sdx__arena_rewind(a, m.block, m.used, m.in_use);
    if (a->host) sdx__arena_rewind(a->host, m.host_block, m.host_used, m.host_in_use);
}

static void sdx__arena_reset(sdx__arena *a) {
    sdx__mark m;
    memset(&m, 0, sizeof m);
    sdx__arena_release(a, m);
}

/* An activation tensor from the arena. Returns 0 (error set) on failure. */
static int sdx__arena_tensor(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    size_t bytes;
    if (!sdx__shape_bytes(dtype, ndim, shape, &bytes)) {
        sdx__fail(a->ctx, SDX_ERR_INVALID_ARG, "activation shape overflows");
        return 0;
    }
    *t = sdx__view(dtype, NULL, ndim, shape);
    t->data = sdx__arena_alloc(a, bytes);
    t->device = a->device;
    return t->data != NULL;
}

/* A host tensor for model code's own host-side work (see sdx__arena_host_alloc). */
static int sdx__arena_host_tensor(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    size_t bytes;
    if (!sdx__shape_bytes(dtype, ndim, shape, &bytes)) {
        sdx__fail(a->ctx, SDX_ERR_INVALID_ARG, "activation shape overflows");
        return 0;
    }
    *t = sdx__view(dtype, NULL, ndim, shape);
    t->data = sdx__arena_host_alloc(a, bytes);
    return t->data != NULL;
}

static int sdx__arena_tensor4(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
    int64_t s[4] = { n, c, h, w };
    return sdx__arena_tensor(a, t, dtype, 4, s);
}

static int sdx__arena_tensor3(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int64_t n, int64_t c, int64_t w) {
    int64_t s[3] = { n, c, w };
    return sdx__arena_tensor(a, t, dtype, 3, s);
}

/* ---- thread pool ---------------------------------------------------- */
/* sdx__parallel_for(ctx, n, fn, arg) calls fn(arg, begin, end, thread)
 * over disjoint ranges covering [0, n) and returns when all are done.
 * Workers are created on first use and live as long as the context. One
 * job at a time: fn must not call sdx__parallel_for itself. */

typedef void (*sdx__range_fn)(void *arg, int64_t begin, int64_t end, int thread);

typedef struct sdx__worker { pthread_t thread; sdx__pool *pool; int index; } sdx__worker;

struct sdx__pool {
    sdx_ctx        *ctx;
    int             n;          /* threads including the caller */
    sdx__worker    *workers;    /* n - 1 started threads */
    pthread_mutex_t mu;
    pthread_cond_t  wake, done;
    uint64_t        generation;
    int             pending;
    int             quit;
    /* current job */
    sdx__range_fn   fn;
    void           *arg;
    int64_t         total;
    int64_t         next;       /* next chunk start (dynamic scheduling) */
    int64_t         chunk;
};

/* Threads grab chunks until none are left: balances uneven work. */
static void sdx__pool_run_chunks(sdx__pool *p, int thread) {
    for (;;) {
        int64_t begin, end;
        pthread_mutex_lock(&p->mu);
        begin = p->next;
        p->next = SDX__MIN(p->total, begin + p->chunk);
        pthread_mutex_unlock(&p->mu);
        if (begin >= p->total) break;
        end = SDX__MIN(p->total, begin + p->chunk);
        p->fn(p->arg, begin, end, thread);
    }
}

static void *sdx__worker_main(void *varg) {
    const sdx__worker *w = (const sdx__worker *)varg;
    sdx__pool *p = w->pool;
    int index = w->index;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->quit && p->generation == seen) pthread_cond_wait(&p->wake, &p->mu);
        if (p->quit) { pthread_mutex_unlock(&p->mu); return NULL; }
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        sdx__pool_run_chunks(p, index);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

static void sdx__pool_destroy(sdx__pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n - 1; i++) pthread_join(p->workers[i].thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    sdx__free(p->ctx, p->workers);
    sdx__free(p->ctx, p);
}

/* Creates the pool; on any failure falls back to fewer threads (down to
 * running everything on the caller), never to an error. */
static sdx__pool *sdx__pool_create(sdx_ctx *ctx, int n) {
    sdx__pool *p = (sdx__pool *)sdx__calloc(ctx, 1, sizeof *p);
    if (!p) return NULL;
    p->ctx = ctx;
    p->workers = (sdx__worker *)sdx__calloc(ctx, (size_t)(n > 1 ? n - 1 : 1), sizeof *p->workers);
    if (!p->workers) { sdx__free(ctx, p); return NULL; }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->n = 1;
    for (int i = 0; i < n - 1; i++) {
        sdx__worker *w = &p->workers[i];
        w->pool = p;
        w->index = i + 1;
        if (pthread_create(&w->thread, NULL, sdx__worker_main, w) != 0) break;
        p->n++;
    }
    return p;
}

static void sdx__parallel_for(sdx_ctx *ctx, int64_t n, sdx__range_fn fn, void *arg) {
    sdx__pool *p;
    if (n <= 0) return;
    if (ctx->n_threads > 1 && !ctx->pool && n > 1) ctx->pool = sdx__pool_create(ctx, ctx->n_threads);
    p = ctx->pool;
    if (!p || p->n <= 1 || n == 1) { fn(arg, 0, n, 0); return; }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->total = n;
    p->next = 0;
    /* a few chunks per thread: balance without much locking */
    p->chunk = SDX__MAX((int64_t)1, n / ((int64_t)p->n * 4));
    p->pending = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    sdx__pool_run_chunks(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* ---- non-finite tracer ---------------------------------------------- */
/* Model code names what runs (sdx__trace_at); every kernel calls
 * sdx__trace_check on its output when tracing is on. The first NaN/Inf
 * stops the run with a message naming the op, part, layer and stats. */

static const char *sdx__part_name(sdx__part p) {
    static const char *names[SDX__PART_COUNT] = { "-", "text encoder", "unet", "vae" };
    return (unsigned)p < SDX__PART_COUNT ? names[p] : "?";
}

static SDX__PRINTF(3, 4) void sdx__trace_at(sdx_ctx *ctx, sdx__part part, const char *fmt, ...) {
    va_list ap;
    ctx->part = part;
    if (!ctx->trace) return;    /* names cost a snprintf: only when asked */
    va_start(ap, fmt);
    vsnprintf(ctx->layer, sizeof ctx->layer, fmt, ap);
    va_end(ap);
}

typedef struct sdx__stats {
    double min, max, mean;
    int64_t nan, inf, count;
} sdx__stats;

static void sdx__tensor_stats(const sdx_tensor *t, sdx__stats *s) {
    float buf[256];
    int64_t n = sdx_tensor_numel(t), finite = 0;
    double sum = 0;
    s->min = INFINITY; s->max = -INFINITY; s->nan = s->inf = 0; s->count = n;
    for (int64_t i = 0; i < n; i += 256) {
        int64_t m = SDX__MIN((int64_t)256, n - i);
        sdx__load_f32(t->data, t->dtype, i, m, buf);
        for (int64_t j = 0; j < m; j++) {
            float v = buf[j];
            if (isnan(v)) { s->nan++; continue; }
            if (isinf(v)) { s->inf++; continue; }
            if (v < s->min) s->min = v;
            if (v > s->max) s->max = v;
            sum += v;
            finite++;
        }
    }
    s->mean = finite ? sum / (double)finite : NAN;
}

static int sdx__has_nonfinite(const sdx_tensor *t) {
    float buf[256];
    int64_t n = sdx_tensor_numel(t);
    for (int64_t i = 0; i < n; i += 256) {
        int64_t m = SDX__MIN((int64_t)256, n - i);
        sdx__load_f32(t->data, t->dtype, i, m, buf);
        for (int64_t j = 0; j < m; j++) if (!isfinite(buf[j])) return 1;
    }
    return 0;
}

static int sdx__trace_report(sdx_ctx *ctx, const char *op, const sdx_tensor *out) {
    sdx__stats s;
    char shape[96];
    if (!sdx__has_nonfinite(out)) return SDX_OK;
    sdx__tensor_stats(out, &s);
    return sdx__fail(ctx, SDX_ERR_NONFINITE,
        "non-finite output of %s in %s%s%s %s (%s): %lld NaN, %lld Inf of %lld; finite min %g max %g mean %g",
        op, sdx__part_name(ctx->part), ctx->layer[0] ? " at " : "", ctx->layer,
        sdx_shape_str(out, shape, sizeof shape), sdx_dtype_name(out->dtype),
        (long long)s.nan, (long long)s.inf, (long long)s.count, s.min, s.max, s.mean);
}

/* Returns SDX_OK, or SDX_ERR_NONFINITE with the message set. A device
 * tensor is checked in a host copy (tracing is a debugging mode). */
static int sdx__trace_check(sdx_ctx *ctx, const char *op, const sdx_tensor *out) {
    sdx_tensor host;
    size_t bytes;
    int rc;
    if (!ctx->trace) return SDX_OK;
    if (!out->device) return sdx__trace_report(ctx, op, out);
    host = *out;
    host.dtype = SDX_F32;
    host.device = 0;
    bytes = sdx_tensor_nbytes(&host);
    if (!(host.data = sdx__malloc(ctx, bytes))) return sdx__nomem(ctx, "tracer copy", bytes);
    rc = sdx__download(ctx, (float *)host.data, out);
    if (rc == SDX_OK) rc = sdx__trace_report(ctx, op, &host);
    sdx__free(ctx, host.data);
    return rc;
}

/* ---- src/cpu/kernels.c ---- */

/* ===================================================================== */
/*  Kernels: linear, conv2d, norms, softmax, attention, elementwise ops    */
/* ===================================================================== */
/* Every kernel widens its inputs to f32 tile by tile (any of F32, F16,
 * BF16 for each operand), computes and accumulates in f32 and narrows
 * once on store. Linear and conv2d share one cache-blocked GEMM; the
 * attention is blocked over queries and keys with an online softmax.
 * Temporaries come from per-thread scratch owned by the context, so after
 * the first call of a given size no kernel allocates. */

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define SDX__X86 1
#include <immintrin.h>
#endif

/* ---- per-thread scratch ---------------------------------------------- */

struct sdx__kernel_state {
    int      n;          /* one slot per thread */
    void   **raw;        /* what was allocated */
    float  **aligned;    /* 64-byte aligned view of raw */
    size_t  *size;       /* usable bytes of aligned */
};

static void sdx__kernel_state_free(sdx_ctx *ctx) {
    sdx__kernel_state *s = ctx->kernels;
    if (!s) return;
    /* raw may be NULL when the state's own allocation failed half way */
    for (int i = 0; s->raw && i < s->n; i++) sdx__free(ctx, s->raw[i]);
    sdx__free(ctx, s->raw);
    sdx__free(ctx, s->aligned);
    sdx__free(ctx, s->size);
    sdx__free(ctx, s);
    ctx->kernels = NULL;
}

static sdx__kernel_state *sdx__kernel_state_get(sdx_ctx *ctx) {
    sdx__kernel_state *s = ctx->kernels;
    int n = SDX__MAX(1, ctx->n_threads);
    if (s) return s;
    s = (sdx__kernel_state *)sdx__calloc(ctx, 1, sizeof *s);
    if (!s) return NULL;
    s->raw = (void **)sdx__calloc(ctx, (size_t)n, sizeof *s->raw);
    s->aligned = (float **)sdx__calloc(ctx, (size_t)n, sizeof *s->aligned);
    s->size = (size_t *)sdx__calloc(ctx, (size_t)n, sizeof *s->size);
    s->n = n;
    ctx->kernels = s;
    if (!s->raw || !s->aligned || !s->size) { sdx__kernel_state_free(ctx); return NULL; }
    return s;
}

/* Per-thread buffer of at least `bytes`, 64-byte aligned, owned by the
 * context and reused by later calls: valid until the next kernel call on
 * this context (kernels use it themselves). NULL (error set) when out of
 * memory. Call it from thread 0, or after sdx__scratch_reserve made it
 * big enough for every thread: growing it is not thread-safe. */
static void *sdx__scratch(sdx_ctx *ctx, int thread, size_t bytes) {
    sdx__kernel_state *s = sdx__kernel_state_get(ctx);
    if (!s) { sdx__nomem(ctx, "kernel state", sizeof *s); return NULL; }
    if (thread < 0 || thread >= s->n) {
        sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx__scratch: thread %d of %d", thread, s->n);
        return NULL;
    }
    if (s->size[thread] < bytes) {
        size_t want = bytes + bytes / 4 + 64;   /* some headroom: fewer regrowths */
        void *p;
        if (want < bytes) { sdx__nomem(ctx, "kernel scratch", bytes); return NULL; }
        sdx__free(ctx, s->raw[thread]);
        s->raw[thread] = NULL;
        s->aligned[thread] = NULL;
        s->size[thread] = 0;
        p = sdx__malloc(ctx, want);
        if (!p) { sdx__nomem(ctx, "kernel scratch", want); return NULL; }
        s->raw[thread] = p;
        s->aligned[thread] = (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
        s->size[thread] = want - 64;
    }
    return s->aligned[thread];
}

/* Grows every thread's scratch to `bytes` up front, on the calling thread,
 * so workers inside sdx__parallel_for never allocate. */
static int sdx__scratch_reserve(sdx_ctx *ctx, size_t bytes) {
    int n = SDX__MAX(1, ctx->n_threads);
    for (int t = 0; t < n; t++)
        if (!sdx__scratch(ctx, t, bytes)) return SDX_ERR_NOMEM;
    return SDX_OK;
}

/* Scratch that was reserved: never fails inside a worker. */
static float *sdx__scratch_f32(sdx_ctx *ctx, int thread) { return ctx->kernels->aligned[thread]; }

/* ---- argument checks -------------------------------------------------- */

static int sdx__is_storage(sdx_dtype t) { return t == SDX_F32 || t == SDX_F16 || t == SDX_BF16; }

/* Checks that every non-NULL tensor has a valid shape, data and a storage
 * dtype. Negative dims are rejected here once: pairs of them multiply to
 * a positive element count that every later shape check would accept. */
static int sdx__check_tensors(sdx_ctx *ctx, const char *op, const sdx_tensor *const *ts, int n) {
    static const char *const what[] = { "y", "input 1", "input 2", "input 3", "input 4" };
    for (int i = 0; i < n; i++) {
        const sdx_tensor *t = ts[i];
        if (!t) continue;
        if (t->ndim < 0 || t->ndim > SDX_MAX_DIMS)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has %d dims (expected 0..%d)", op,
                             what[SDX__MIN(i, 4)], t->ndim, SDX_MAX_DIMS);
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] < 0) {
                char s[96];
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has a negative dim %s", op, what[SDX__MIN(i, 4)],
                                 sdx_shape_str(t, s, sizeof s));
            }
        if (!t->data && sdx_tensor_numel(t) > 0)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has no data", op, what[SDX__MIN(i, 4)]);
        if (!sdx__is_storage(t->dtype))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has dtype %s (expected F32, F16 or BF16)",
                             op, what[SDX__MIN(i, 4)], sdx_dtype_name(t->dtype));
    }
    return SDX_OK;
}

#define SDX__CHECK(ctx, op, ...) do { \
    const sdx_tensor *const sdx__ts_[] = { __VA_ARGS__ }; \
    int sdx__rc_ = sdx__check_tensors(ctx, op, sdx__ts_, SDX__ARRAY_LEN(sdx__ts_)); \
    if (sdx__rc_ != SDX_OK) return sdx__rc_; } while (0)

static int sdx__fail_shapes(sdx_ctx *ctx, const char *op, const char *why,
                            const sdx_tensor *a, const char *an, const sdx_tensor *b, const char *bn) {
    char sa[96], sb[96];
    sdx_shape_str(a, sa, sizeof sa);
    if (b) sdx_shape_str(b, sb, sizeof sb); else sb[0] = 0;
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s (%s %s%s%s%s%s)", op, why, an, sa,
                     b ? ", " : "", b ? bn : "", b ? " " : "", b ? sb : "");
}

/* ---- half-precision emulation (SDX_UNSAFE_*) -------------------------- */
/* Rounds a running value to f16 the way a half-precision kernel would:
 * sums past 65504 become Inf. Only the opt-out builds use it. */
static float sdx__round_f16(float v) { return sdx_f16_to_f32(sdx_f32_to_f16(v)); }

/* ---- fast exp ---------------------------------------------------------- */
/* exp for softmax and attention: Cody-Waite reduction to [-ln2/2, ln2/2]
 * and a degree-6 polynomial, relative error below 3e-7; inputs below
 * -87.3 (and -inf, for masked logits) give 0, NaN stays NaN. The portable
 * form is plain 8-wide loops the compiler vectorises; x86 with AVX2 gets
 * the same algorithm in intrinsics. */
static inline void sdx__exp8(float *v) {
    float r[8], p[8];
    int32_t e[8];
    for (int i = 0; i < 8; i++) {
        float x = v[i] > -87.3f ? v[i] : -87.3f;      /* NaN -> -87.3: no UB in the int cast */
        float n;
        x = x < 88.0f ? x : 88.0f;
        n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;   /* round to nearest */
        r[i] = (x - n * 0.693145752f) - n * 1.42860677e-6f;
        e[i] = (int32_t)n;
    }
    for (int i = 0; i < 8; i++) {
        float x = r[i], q = 1.0f / 720.0f;
        q = q * x + 1.0f / 120.0f;
        q = q * x + 1.0f / 24.0f;
        q = q * x + 1.0f / 6.0f;
        q = q * x + 0.5f;
        q = q * x + 1.0f;
        p[i] = q * x + 1.0f;
    }
    for (int i = 0; i < 8; i++) {
        uint32_t bits = (uint32_t)(e[i] + 127) << 23;
        float scale;
        memcpy(&scale, &bits, 4);
        v[i] = v[i] > -87.3f ? p[i] * scale : (v[i] != v[i] ? v[i] : 0.0f);
    }
}

static void sdx__exp_n_c(float *v, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) sdx__exp8(v + i);
    if (i < n) {
        float t[8] = { 0 };
        memcpy(t, v + i, (size_t)(n - i) * sizeof(float));
        sdx__exp8(t);
        memcpy(v + i, t, (size_t)(n - i) * sizeof(float));
    }
}

#ifdef SDX__X86
__attribute__((target("avx2,fma")))
static void sdx__exp_n_avx2(float *v, int64_t n) {
    const __m256 lo = _mm256_set1_ps(-87.3f), hi = _mm256_set1_ps(88.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x0 = _mm256_loadu_ps(v + i);
        __m256 x = _mm256_min_ps(_mm256_max_ps(x0, lo), hi);  /* NaN -> -87.3 */
        __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145752f), x);
        __m256 q = _mm256_set1_ps(1.0f / 720.0f), res;
        __m256i e;
        r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860677e-6f), r);
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f / 120.0f));
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f / 24.0f));
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f / 6.0f));
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.5f));
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
        e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
        res = _mm256_mul_ps(q, _mm256_castsi256_ps(e));
        res = _mm256_and_ps(res, _mm256_cmp_ps(x0, lo, _CMP_GT_OQ));          /* below range: 0 */
        res = _mm256_blendv_ps(res, x0, _mm256_cmp_ps(x0, x0, _CMP_UNORD_Q)); /* NaN stays NaN  */
        _mm256_storeu_ps(v + i, res);
    }
    if (i < n) sdx__exp_n_c(v + i, n - i);
}
#endif

static int sdx__have_avx2(void) {
#ifdef SDX__X86
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static void sdx__exp_n(float *v, int64_t n) {
#ifdef SDX__X86
    if (sdx__have_avx2()) { sdx__exp_n_avx2(v, n); return; }
#endif
    sdx__exp_n_c(v, n);
}

/* ===================================================================== */
/*  GEMM: C[M,N] = A[M,K] B[K,N], f32 accumulation                         */
/* ===================================================================== */
/* Jobs are MB x NB tiles of C, each computed over all of K in KC steps:
 * pack an MB x KC block of A into MR-row strips and a KC x NB block of B
 * into NR-column strips (widening to f32 on the way), then run the MR x NR
 * register-blocked micro-kernel over the strips, accumulating in an f32
 * tile that is narrowed to y's dtype once at the end. A comes from a
 * row-major matrix (activations of linear, weights of conv); B from a
 * row-major [N,K] matrix read transposed (linear weights) or from an
 * implicit im2col of the conv input. */

#define SDX__MR 6
#define SDX__NR 16
#define SDX__KC 256
#define SDX__MB 144     /* multiple of MR */
#define SDX__NB 128     /* multiple of NR */

typedef void (*sdx__micro_fn)(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate);

/* Portable micro-kernel: fixed-size loops gcc and clang vectorise. */
static void sdx__micro_c(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    float acc[SDX__MR][SDX__NR];
    memset(acc, 0, sizeof acc);
    for (int k = 0; k < kc; k++, a += SDX__MR, b += SDX__NR)
        for (int r = 0; r < SDX__MR; r++)
            for (int j = 0; j < SDX__NR; j++) acc[r][j] += a[r] * b[j];
    for (int r = 0; r < SDX__MR; r++)
        for (int j = 0; j < SDX__NR; j++) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

#ifdef SDX_UNSAFE_HALF_ACCUMULATE
/* Half-precision accumulation: the running sum is rounded to f16 after
 * every multiply-add, as a naive f16 dot product would. */
static void sdx__micro_half(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    for (int r = 0; r < SDX__MR; r++)
        for (int j = 0; j < SDX__NR; j++) {
            float s = accumulate ? c[r * ldc + j] : 0.0f;
            for (int k = 0; k < kc; k++)
                s = sdx__round_f16(s + sdx__round_f16(a[k * SDX__MR + r] * b[k * SDX__NR + j]));
            c[r * ldc + j] = s;
        }
}
#endif

#ifdef SDX__X86
/* AVX2/FMA micro-kernel: 12 accumulators of 8 lanes hold the 6x16 tile. */
__attribute__((target("avx2,fma")))
static void sdx__micro_avx2(int kc, const float *a, const float *b, float *c, int64_t ldc, int accumulate) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int k = 0; k < kc; k++, a += SDX__MR, b += SDX__NR) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), av;
        av = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51);
    }
#define SDX__STORE_ROW(r, lo, hi) do { \
        float *row = c + (r) * ldc; \
        if (accumulate) { lo = _mm256_add_ps(lo, _mm256_loadu_ps(row)); hi = _mm256_add_ps(hi, _mm256_loadu_ps(row + 8)); } \
        _mm256_storeu_ps(row, lo); _mm256_storeu_ps(row + 8, hi); } while (0)
    SDX__STORE_ROW(0, c00, c01); SDX__STORE_ROW(1, c10, c11); SDX__STORE_ROW(2, c20, c21);
    SDX__STORE_ROW(3, c30, c31); SDX__STORE_ROW(4, c40, c41); SDX__STORE_ROW(5, c50, c51);
#undef SDX__STORE_ROW
}
#endif

static sdx__micro_fn sdx__micro_select(void) {
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
    return sdx__micro_half;
#else
#ifdef SDX__X86
    if (sdx__have_avx2()) return sdx__micro_avx2;
#endif
    return sdx__micro_c;
#endif
}

/* Where the B operand comes from. */
enum { SDX__B_ROWS_T, SDX__B_IM2COL };

typedef struct sdx__gemm {
    int64_t M, N, K;
    int64_t batch;              /* independent problems (conv: images)     */
    /* A: row-major [M, K] of a_dtype, batch stride a_bstride (0 = shared) */
    const void *a; sdx_dtype a_dtype; int64_t a_bstride;
    /* B */
    int b_kind;
    const void *b; sdx_dtype b_dtype; int64_t b_bstride;
    /* im2col geometry (b is x[C,H,W] of one image) */
    int64_t C, H, W, Wo;
    int kh, kw, stride, pad_top, pad_left;
    /* C: row-major [M, N] of y_dtype per batch; bias per column or row */
    void *y; sdx_dtype y_dtype; int64_t y_bstride;
    const sdx_tensor *bias; int bias_per_row;
    int64_t m_tiles, n_tiles;
    sdx__micro_fn micro;
    sdx_ctx *ctx;
} sdx__gemm;

/* Bytes of per-thread scratch a GEMM job needs. */
static size_t sdx__gemm_scratch_bytes(void) {
    size_t floats = (size_t)SDX__MB * SDX__KC          /* packed A */
                  + (size_t)SDX__KC * SDX__NB          /* packed B */
                  + (size_t)SDX__MB * SDX__NB          /* f32 C tile */
                  + (size_t)SDX__KC + 64               /* one widened row (>= KC, NB) */
                  + (size_t)SDX__NB;                   /* bias */
    return floats * sizeof(float) + 256;
}

/* Packs `rows` rows (row0.., valid ones < nvalid, others zero) of a
 * row-major matrix into strips of `width` rows: dst[s][kk][r]. */
static void sdx__pack_rows(float *dst, const void *src, sdx_dtype dtype, int64_t ld, int64_t row0,
                           int rows, int nvalid, int width, int64_t k0, int kc, float *tmp) {
    for (int s = 0; s < rows; s += width) {
        float *strip = dst + (int64_t)s * kc;
        for (int r = 0; r < width; r++) {
            int i = s + r;
            if (i < nvalid) {
                const float *v;
                if (dtype == SDX_F32) v = (const float *)src + (row0 + i) * ld + k0;
                else { sdx__load_f32(src, dtype, (row0 + i) * ld + k0, kc, tmp); v = tmp; }
                for (int kk = 0; kk < kc; kk++) strip[kk * width + r] = v[kk];
            } else {
                for (int kk = 0; kk < kc; kk++) strip[kk * width + r] = 0.0f;
            }
        }
    }
}

/* Packs B[k][p] = x[c][oy*s - pt + ky][ox*s - pl + kx] for k in [k0, k0+kc)
 * (k = (c*kh + ky)*kw + kx) and p in [p0, p0+nvalid), zero elsewhere,
 * into NR-column strips: dst[p/NR][kk][p%NR]. Strip by strip: when the
 * NR pixels of a strip lie in one output row (the common case) and the
 * stride is 1, each k reads NR contiguous input values. */
static void sdx__pack_im2col(const sdx__gemm *g, float *dst, const void *x, int64_t p0, int nvalid,
                             int cols, int64_t k0, int kc, float *tmp) {
    const int64_t khw = (int64_t)g->kh * g->kw, hw = g->H * g->W;
    for (int s = 0; s < cols; s += SDX__NR) {
        float *strip = dst + (int64_t)s * kc;
        int64_t by[SDX__NR], bx[SDX__NR];     /* input row/col of lane for ky = kx = 0 */
        int nl = SDX__MIN(SDX__NR, nvalid - s), one_row;
        int64_t c = k0 / khw, r = k0 % khw;
        int ky = (int)(r / g->kw), kx = (int)(r % g->kw);
        if (nl <= 0) { memset(strip, 0, (size_t)kc * SDX__NR * sizeof(float)); continue; }
        for (int l = 0; l < nl; l++) {
            int64_t p = p0 + s + l;
            by[l] = (p / g->Wo) * g->stride - g->pad_top;
            bx[l] = (p % g->Wo) * g->stride - g->pad_left;
        }
        one_row = nl == SDX__NR && g->stride == 1 && by[0] == by[SDX__NR - 1];
        for (int kk = 0; kk < kc; kk++) {
            float *out = strip + kk * SDX__NR;
            const int64_t plane = c * hw;
            int64_t iy = by[0] + ky, ix = bx[0] + kx;
            if (one_row && iy >= 0 && iy < g->H && ix >= 0 && ix + SDX__NR <= g->W) {
                if (g->b_dtype == SDX_F32) memcpy(out, (const float *)x + plane + iy * g->W + ix, SDX__NR * sizeof(float));
                else sdx__load_f32(x, g->b_dtype, plane + iy * g->W + ix, SDX__NR, out);
            } else {
                for (int l = 0; l < SDX__NR; l++) {
                    int64_t yy = by[l] + ky, xx = bx[l] + kx;
                    int ok = l < nl && yy >= 0 && yy < g->H && xx >= 0 && xx < g->W;
                    out[l] = ok ? ((g->b_dtype == SDX_F32) ? ((const float *)x)[plane + yy * g->W + xx]
                                                           : (sdx__load_f32(x, g->b_dtype, plane + yy * g->W + xx, 1, tmp), tmp[0]))
                                : 0.0f;
                }
            }
            if (++kx == g->kw) { kx = 0; if (++ky == g->kh) { ky = 0; c++; } }
        }
    }
}

/* Adds the bias and narrows the f32 tile into y. */
static void sdx__gemm_store(const sdx__gemm *g, const float *tile, int ldt, int64_t batch, int64_t m0, int mv,
                            int64_t n0, int nv, float *bias_buf, float *row_buf) {
    int64_t ybase = batch * g->y_bstride;
    if (g->bias && !g->bias_per_row) sdx__load_f32(g->bias->data, g->bias->dtype, n0, nv, bias_buf);
    for (int i = 0; i < mv; i++) {
        const float *t = tile + (int64_t)i * ldt;
        if (g->bias && g->bias_per_row) {
            float bv = sdx__get_f32(g->bias, m0 + i);
            for (int j = 0; j < nv; j++) row_buf[j] = t[j] + bv;
        } else if (g->bias) {
            for (int j = 0; j < nv; j++) row_buf[j] = t[j] + bias_buf[j];
        } else {
            memcpy(row_buf, t, (size_t)nv * sizeof(float));
        }
#ifdef SDX_UNSAFE_HALF_ACCUMULATE
        for (int j = 0; j < nv; j++) row_buf[j] = sdx__round_f16(row_buf[j]);
#endif
        sdx__store_f32(g->y, g->y_dtype, ybase + (m0 + i) * g->N + n0, nv, row_buf);
    }
}

static void sdx__gemm_job(const sdx__gemm *g, int64_t job, int thread) {
    float *scratch = sdx__scratch_f32(g->ctx, thread);
    float *pa = scratch;
    float *pb = pa + (size_t)SDX__MB * SDX__KC;
    float *tile = pb + (size_t)SDX__KC * SDX__NB;
    float *tmp = tile + (size_t)SDX__MB * SDX__NB;
    float *bias_buf = tmp + SDX__KC + 64;
    int64_t per_batch = g->m_tiles * g->n_tiles;
    int64_t batch = job / per_batch, rest = job % per_batch;
    int64_t m0 = (rest / g->n_tiles) * SDX__MB, n0 = (rest % g->n_tiles) * SDX__NB;
    int mv = (int)SDX__MIN((int64_t)SDX__MB, g->M - m0);
    int nv = (int)SDX__MIN((int64_t)SDX__NB, g->N - n0);
    int mp = (mv + SDX__MR - 1) / SDX__MR * SDX__MR;
    int np = (nv + SDX__NR - 1) / SDX__NR * SDX__NR;
    const void *a = (const char *)g->a + (size_t)(batch * g->a_bstride) * sdx_dtype_size(g->a_dtype);
    const void *b = (const char *)g->b + (size_t)(batch * g->b_bstride) * sdx_dtype_size(g->b_dtype);
    for (int64_t k0 = 0; k0 < g->K; k0 += SDX__KC) {
        int kc = (int)SDX__MIN((int64_t)SDX__KC, g->K - k0);
        sdx__pack_rows(pa, a, g->a_dtype, g->K, m0, mp, mv, SDX__MR, k0, kc, tmp);
        if (g->b_kind == SDX__B_ROWS_T) sdx__pack_rows(pb, b, g->b_dtype, g->K, n0, np, nv, SDX__NR, k0, kc, tmp);
        else sdx__pack_im2col(g, pb, b, n0, nv, np, k0, kc, tmp);
        for (int j = 0; j < np; j += SDX__NR)
            for (int i = 0; i < mp; i += SDX__MR)
                g->micro(kc, pa + (int64_t)i * kc, pb + (int64_t)j * kc, tile + (int64_t)i * SDX__NB + j,
                         SDX__NB, k0 > 0);
    }
    if (g->K == 0) memset(tile, 0, (size_t)SDX__MB * SDX__NB * sizeof(float));
    sdx__gemm_store(g, tile, SDX__NB, batch, m0, mv, n0, nv, bias_buf, tmp);
}

static void sdx__gemm_range(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__gemm_job((const sdx__gemm *)arg, j, thread);
}

static int sdx__gemm_run(sdx_ctx *ctx, sdx__gemm *g) {
    int rc;
    if (g->M == 0 || g->N == 0 || g->batch == 0) return SDX_OK;
    if ((rc = sdx__scratch_reserve(ctx, sdx__gemm_scratch_bytes())) != SDX_OK) return rc;
    g->ctx = ctx;
    g->micro = sdx__micro_select();
    g->m_tiles = (g->M + SDX__MB - 1) / SDX__MB;
    g->n_tiles = (g->N + SDX__NB - 1) / SDX__NB;
    sdx__parallel_for(ctx, g->batch * g->m_tiles * g->n_tiles, sdx__gemm_range, g);
    return SDX_OK;
}

/* ---- linear ------------------------------------------------------------ */

static int sdx__cpu_linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b) {
    static const char op[] = "linear";
    sdx__gemm g;
    int rc;
    SDX__CHECK(ctx, op, y, x, w, b);
    if (w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
        return sdx__fail_shapes(ctx, op, "x's last dim must equal w's in-features", x, "x", w, "w [out, in]");
    if (y->ndim != x->ndim || y->shape[y->ndim - 1] != w->shape[0])
        return sdx__fail_shapes(ctx, op, "y must be x's shape with last dim = w's out-features", y, "y", w, "w");
    for (int i = 0; i + 1 < x->ndim; i++)
        if (y->shape[i] != x->shape[i]) return sdx__fail_shapes(ctx, op, "y's leading dims differ from x's", y, "y", x, "x");
    if (b && sdx_tensor_numel(b) != w->shape[0])
        return sdx__fail_shapes(ctx, op, "bias size must equal out-features", b, "b", w, "w");
    memset(&g, 0, sizeof g);
    g.K = w->shape[1];
    g.N = w->shape[0];
    g.M = g.K ? sdx_tensor_numel(x) / g.K : sdx_tensor_numel(y) / SDX__MAX((int64_t)1, g.N);
    g.batch = 1;
    g.a = x->data; g.a_dtype = x->dtype;
    g.b_kind = SDX__B_ROWS_T; g.b = w->data; g.b_dtype = w->dtype;
    g.y = y->data; g.y_dtype = y->dtype;
    g.bias = b; g.bias_per_row = 0;
    if ((rc = sdx__gemm_run(ctx, &g)) != SDX_OK) return rc;
    return sdx__trace_check(ctx, op, y);
}

/* ---- conv2d ------------------------------------------------------------ */

static int sdx__cpu_conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           int stride, int pad_top, int pad_left, int pad_bottom, int pad_right) {
    static const char op[] = "conv2d";
    int64_t ho, wo;
    sdx__gemm g;
    int rc;
    SDX__CHECK(ctx, op, y, x, w, b);
    if (stride < 1 || pad_top < 0 || pad_left < 0 || pad_bottom < 0 || pad_right < 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: stride %d must be >= 1 and pads (%d, %d, %d, %d) >= 0",
                         op, stride, pad_top, pad_left, pad_bottom, pad_right);
    if (x->ndim != 4 || w->ndim != 4 || x->shape[1] != w->shape[1] || w->shape[2] < 1 || w->shape[3] < 1)
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and w [O, C, kh, kw]", x, "x", w, "w");
    ho = x->shape[2] + pad_top + pad_bottom - w->shape[2];
    wo = x->shape[3] + pad_left + pad_right - w->shape[3];
    if (ho < 0 || wo < 0)
        return sdx__fail_shapes(ctx, op, "kernel larger than the padded input", x, "x", w, "w");
    ho = ho / stride + 1;
    wo = wo / stride + 1;
    if (y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != w->shape[0] || y->shape[2] != ho || y->shape[3] != wo) {
        char want[128];
        snprintf(want, sizeof want, "y must be [%lld, %lld, %lld, %lld]", (long long)x->shape[0],
                 (long long)w->shape[0], (long long)ho, (long long)wo);
        return sdx__fail_shapes(ctx, op, want, y, "y", x, "x");
    }
    if (b && sdx_tensor_numel(b) != w->shape[0])
        return sdx__fail_shapes(ctx, op, "bias size must equal out-channels", b, "b", w, "w");
    memset(&g, 0, sizeof g);
    g.M = w->shape[0];
    g.K = w->shape[1] * w->shape[2] * w->shape[3];
    g.N = ho * wo;
    g.batch = x->shape[0];
    g.a = w->data; g.a_dtype = w->dtype; g.a_bstride = 0;
    g.b_kind = SDX__B_IM2COL; g.b = x->data; g.b_dtype = x->dtype;
    g.b_bstride = x->shape[1] * x->shape[2] * x->shape[3];
    g.C = x->shape[1]; g.H = x->shape[2]; g.W = x->shape[3]; g.Wo = wo;
    g.kh = (int)w->shape[2]; g.kw = (int)w->shape[3];
    g.stride = stride; g.pad_top = pad_top; g.pad_left = pad_left;
    g.y = y->data; g.y_dtype = y->dtype; g.y_bstride = g.M * g.N;
    g.bias = b; g.bias_per_row = 1;
    if ((rc = sdx__gemm_run(ctx, &g)) != SDX_OK) return rc;
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_conv2d(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                       int stride, int pad) {
    return sdx__cpu_conv2d_pad(ctx, y, x, w, b, stride, pad, pad, pad, pad);
}

/* ===================================================================== */
/*  Elementwise ops                                                        */
/* ===================================================================== */

#define SDX__CHUNK 1024             /* floats per stack buffer            */
#define SDX__PAR_GRAIN 16384        /* elements per parallel work item    */

typedef enum { SDX__OP_SILU, SDX__OP_GELU, SDX__OP_QUICK_GELU, SDX__OP_SCALE, SDX__OP_COPY,
               SDX__OP_ADD, SDX__OP_MUL } sdx__ew_op;

typedef struct sdx__ew {
    sdx__ew_op op;
    sdx_tensor *y;
    const sdx_tensor *a, *b;
    float s;
} sdx__ew;

static void sdx__ew_apply(sdx__ew_op op, float *v, const float *w, int64_t n, float s) {
    switch (op) {
    case SDX__OP_SILU: for (int64_t i = 0; i < n; i++) v[i] = v[i] / (1.0f + expf(-v[i])); break;
    case SDX__OP_GELU: for (int64_t i = 0; i < n; i++) v[i] = 0.5f * v[i] * (1.0f + erff(v[i] * 0.70710678118654752f)); break;
    case SDX__OP_QUICK_GELU: for (int64_t i = 0; i < n; i++) v[i] = v[i] / (1.0f + expf(-1.702f * v[i])); break;
    case SDX__OP_SCALE: for (int64_t i = 0; i < n; i++) v[i] *= s; break;
    case SDX__OP_COPY: break;
    case SDX__OP_ADD: for (int64_t i = 0; i < n; i++) v[i] += w[i]; break;
    case SDX__OP_MUL: for (int64_t i = 0; i < n; i++) v[i] *= w[i]; break;
    }
}

static void sdx__ew_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__ew *e = (const sdx__ew *)arg;
    float va[SDX__CHUNK], vb[SDX__CHUNK];
    int64_t total = sdx_tensor_numel(e->y);
    (void)thread;
    for (int64_t i = begin * SDX__PAR_GRAIN; i < SDX__MIN(end * SDX__PAR_GRAIN, total); i += SDX__CHUNK) {
        int64_t n = SDX__MIN((int64_t)SDX__CHUNK, SDX__MIN(end * SDX__PAR_GRAIN, total) - i);
        sdx__load_f32(e->a->data, e->a->dtype, i, n, va);
        if (e->b) sdx__load_f32(e->b->data, e->b->dtype, i, n, vb);
        sdx__ew_apply(e->op, va, vb, n, e->s);
        sdx__store_f32(e->y->data, e->y->dtype, i, n, va);
    }
}

static int sdx__ew_run(sdx_ctx *ctx, const char *op, sdx__ew_op kind, sdx_tensor *y, const sdx_tensor *a,
                       const sdx_tensor *b, float s) {
    sdx__ew e;
    int64_t n = sdx_tensor_numel(y);
    SDX__CHECK(ctx, op, y, a, b);
    if (sdx_tensor_numel(a) != n) return sdx__fail_shapes(ctx, op, "element counts differ", y, "y", a, "x");
    if (b && sdx_tensor_numel(b) != n) return sdx__fail_shapes(ctx, op, "element counts differ", a, "a", b, "b");
    e.op = kind; e.y = y; e.a = a; e.b = b; e.s = s;
    sdx__parallel_for(ctx, (n + SDX__PAR_GRAIN - 1) / SDX__PAR_GRAIN, sdx__ew_range, &e);
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_silu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "silu", SDX__OP_SILU, y, x, NULL, 0); }
static int sdx__cpu_gelu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "gelu", SDX__OP_GELU, y, x, NULL, 0); }
static int sdx__cpu_quick_gelu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "quick_gelu", SDX__OP_QUICK_GELU, y, x, NULL, 0); }
static int sdx__cpu_scale(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) { return sdx__ew_run(ctx, "scale", SDX__OP_SCALE, y, x, NULL, s); }
static int sdx__cpu_copy(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__ew_run(ctx, "copy", SDX__OP_COPY, y, x, NULL, 0); }
static int sdx__cpu_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__ew_run(ctx, "add", SDX__OP_ADD, y, a, b, 0);
}
static int sdx__cpu_mul(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__ew_run(ctx, "mul", SDX__OP_MUL, y, a, b, 0);
}

/* ---- clamps ------------------------------------------------------------ */
/* y = min(max(x, lo), hi), NaN stays NaN (ReLU is lo 0, hi +inf), and
 * the soft clamp y = tanh(x / limit) * limit (TAESD's decoder input). */

typedef struct { sdx_tensor *y; const sdx_tensor *x; float lo, hi, limit; } sdx__clamp_args;

static void sdx__clamp_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__clamp_args *a = (const sdx__clamp_args *)arg;
    float v[SDX__CHUNK];
    int64_t total = sdx_tensor_numel(a->y), stop = SDX__MIN(end * SDX__PAR_GRAIN, total);
    (void)thread;
    for (int64_t i = begin * SDX__PAR_GRAIN; i < stop; i += SDX__CHUNK) {
        int64_t n = SDX__MIN((int64_t)SDX__CHUNK, stop - i);
        sdx__load_f32(a->x->data, a->x->dtype, i, n, v);
        if (a->limit > 0) {
            for (int64_t j = 0; j < n; j++) v[j] = tanhf(v[j] / a->limit) * a->limit;
        } else {
            for (int64_t j = 0; j < n; j++) v[j] = v[j] < a->lo ? a->lo : v[j] > a->hi ? a->hi : v[j];
        }
        sdx__store_f32(a->y->data, a->y->dtype, i, n, v);
    }
}

static int sdx__clamp_run(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, float lo, float hi, float limit) {
    sdx__clamp_args a;
    int64_t n = sdx_tensor_numel(y);
    SDX__CHECK(ctx, op, y, x);
    if (sdx_tensor_numel(x) != n) return sdx__fail_shapes(ctx, op, "element counts differ", y, "y", x, "x");
    a.y = y; a.x = x; a.lo = lo; a.hi = hi; a.limit = limit;
    sdx__parallel_for(ctx, (n + SDX__PAR_GRAIN - 1) / SDX__PAR_GRAIN, sdx__clamp_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* y may alias x; the bounds were checked in ops.c. */
static int sdx__cpu_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    return sdx__clamp_run(ctx, "clamp", y, x, lo, hi, 0);
}

static int sdx__cpu_tanh_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    return sdx__clamp_run(ctx, "tanh_clamp", y, x, 0, 0, limit);
}

/* ---- geglu ------------------------------------------------------------- */

typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t d; } sdx__geglu_args;

static void sdx__geglu_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__geglu_args *g = (const sdx__geglu_args *)arg;
    float va[SDX__CHUNK], vg[SDX__CHUNK];
    (void)thread;
    for (int64_t r = begin; r < end; r++)
        for (int64_t j = 0; j < g->d; j += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, g->d - j);
            sdx__load_f32(g->x->data, g->x->dtype, r * 2 * g->d + j, n, va);
            sdx__load_f32(g->x->data, g->x->dtype, r * 2 * g->d + g->d + j, n, vg);
            sdx__ew_apply(SDX__OP_GELU, vg, NULL, n, 0);
            for (int64_t i = 0; i < n; i++) va[i] *= vg[i];
            sdx__store_f32(g->y->data, g->y->dtype, r * g->d + j, n, va);
        }
}

static int sdx__cpu_geglu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "geglu";
    sdx__geglu_args g;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim < 1 || y->ndim != x->ndim || x->shape[x->ndim - 1] != 2 * y->shape[y->ndim - 1])
        return sdx__fail_shapes(ctx, op, "x's last dim must be twice y's", x, "x", y, "y");
    for (int i = 0; i + 1 < x->ndim; i++)
        if (y->shape[i] != x->shape[i]) return sdx__fail_shapes(ctx, op, "leading dims differ", x, "x", y, "y");
    g.y = y; g.x = x; g.d = y->shape[y->ndim - 1];
    if (g.d > 0) sdx__parallel_for(ctx, sdx_tensor_numel(y) / g.d, sdx__geglu_range, &g);
    return sdx__trace_check(ctx, op, y);
}

/* ---- channel bias, upsample, concat, layout --------------------------- */

typedef struct { sdx_tensor *y; const sdx_tensor *x, *v; int64_t hw; } sdx__chan_args;

static void sdx__chan_bias_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__chan_args *a = (const sdx__chan_args *)arg;
    float buf[SDX__CHUNK];
    (void)thread;
    for (int64_t nc = begin; nc < end; nc++) {
        float bv = sdx__get_f32(a->v, nc);
        for (int64_t i = 0; i < a->hw; i += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->hw - i);
            sdx__load_f32(a->x->data, a->x->dtype, nc * a->hw + i, n, buf);
            for (int64_t j = 0; j < n; j++) buf[j] += bv;
            sdx__store_f32(a->y->data, a->y->dtype, nc * a->hw + i, n, buf);
        }
    }
}

static int sdx__cpu_add_channel_bias(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v) {
    static const char op[] = "add_channel_bias";
    sdx__chan_args a;
    SDX__CHECK(ctx, op, y, x, v);
    if (x->ndim < 2 || !sdx__same_shape(x, y) || sdx_tensor_numel(v) != x->shape[0] * x->shape[1])
        return sdx__fail_shapes(ctx, op, "expected y, x [N, C, ...] and v [N, C]", x, "x", v, "v");
    a.y = y; a.x = x; a.v = v;
    a.hw = x->shape[0] > 0 && x->shape[1] > 0 ? sdx_tensor_numel(x) / (x->shape[0] * x->shape[1]) : 0;
    sdx__parallel_for(ctx, x->shape[0] * x->shape[1], sdx__chan_bias_range, &a);
    return sdx__trace_check(ctx, op, y);
}

typedef struct { sdx_tensor *y; const sdx_tensor *x; } sdx__pair_args;

static void sdx__upsample_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__pair_args *a = (const sdx__pair_args *)arg;
    int64_t h = a->x->shape[2], w = a->x->shape[3];
    float in[SDX__CHUNK / 2], out[SDX__CHUNK];
    (void)thread;
    for (int64_t row = begin; row < end; row++) {         /* row = (n*C + c)*H + iy */
        int64_t nc = row / h, iy = row % h;
        for (int64_t x0 = 0; x0 < w; x0 += SDX__CHUNK / 2) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK / 2, w - x0);
            sdx__load_f32(a->x->data, a->x->dtype, row * w + x0, n, in);
            for (int64_t j = 0; j < n; j++) out[2 * j] = out[2 * j + 1] = in[j];
            for (int dy = 0; dy < 2; dy++)
                sdx__store_f32(a->y->data, a->y->dtype, (nc * 2 * h + 2 * iy + dy) * 2 * w + 2 * x0, 2 * n, out);
        }
    }
}

static int sdx__cpu_upsample2x(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "upsample2x";
    sdx__pair_args a;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
        y->shape[2] != 2 * x->shape[2] || y->shape[3] != 2 * x->shape[3])
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, 2H, 2W]", x, "x", y, "y");
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    a.y = y; a.x = x;
    sdx__parallel_for(ctx, x->shape[0] * x->shape[1] * x->shape[2], sdx__upsample_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Nearest-neighbour resize to any size, as torch's interpolate(mode=
 * "nearest"): source index floor(dst * in / out). Exact doubling takes
 * the upsample path; other sizes occur only for latents not divisible by
 * 2^(levels-1), so that path favours clarity over speed. */
typedef struct { sdx_ctx *ctx; sdx_tensor *y; const sdx_tensor *x; } sdx__resize_args;

static void sdx__resize_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__resize_args *a = (const sdx__resize_args *)arg;
    int64_t Hi = a->x->shape[2], Wi = a->x->shape[3], Ho = a->y->shape[2], Wo = a->y->shape[3];
    float *row_in = sdx__scratch_f32(a->ctx, thread), *row_out = row_in + Wi;
    for (int64_t r = begin; r < end; r++) {          /* r = (n*C + c)*Ho + i */
        int64_t p = r / Ho, i = r % Ho;
        sdx__load_f32(a->x->data, a->x->dtype, (p * Hi + i * Hi / Ho) * Wi, Wi, row_in);
        for (int64_t j = 0; j < Wo; j++) row_out[j] = row_in[j * Wi / Wo];
        sdx__store_f32(a->y->data, a->y->dtype, r * Wo, Wo, row_out);
    }
}

static int sdx__cpu_resize_nearest(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "resize_nearest";
    sdx__resize_args a;
    int rc;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
        (sdx_tensor_numel(y) > 0 && sdx_tensor_numel(x) == 0))
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, Ho, Wo]", x, "x", y, "y");
    if (y->shape[2] == 2 * x->shape[2] && y->shape[3] == 2 * x->shape[3]) return sdx__cpu_upsample2x(ctx, y, x);
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    if (sdx_tensor_numel(y) == 0) return SDX_OK;
    if ((rc = sdx__scratch_reserve(ctx, (size_t)(x->shape[3] + y->shape[3]) * sizeof(float))) != SDX_OK) return rc;
    a.ctx = ctx; a.y = y; a.x = x;
    sdx__parallel_for(ctx, y->shape[0] * y->shape[1] * y->shape[2], sdx__resize_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Copies n elements between two tensors of any storage dtypes. */
static void sdx__copy_elems(void *dst, sdx_dtype dt, int64_t doff, const void *src, sdx_dtype st, int64_t soff, int64_t n) {
    float buf[SDX__CHUNK];
    if (dt == st) {
        size_t es = sdx_dtype_size(dt);
        memcpy((char *)dst + (size_t)doff * es, (const char *)src + (size_t)soff * es, (size_t)n * es);
        return;
    }
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(src, st, soff + i, m, buf);
        sdx__store_f32(dst, dt, doff + i, m, buf);
    }
}

typedef struct { sdx_tensor *y; const sdx_tensor *a, *b; int64_t na, nb; } sdx__cat_args;

static void sdx__concat_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__cat_args *c = (const sdx__cat_args *)arg;
    (void)thread;
    for (int64_t n = begin; n < end; n++) {
        sdx__copy_elems(c->y->data, c->y->dtype, n * (c->na + c->nb), c->a->data, c->a->dtype, n * c->na, c->na);
        sdx__copy_elems(c->y->data, c->y->dtype, n * (c->na + c->nb) + c->na, c->b->data, c->b->dtype, n * c->nb, c->nb);
    }
}

static int sdx__cpu_concat_channels(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    static const char op[] = "concat_channels";
    sdx__cat_args c;
    SDX__CHECK(ctx, op, y, a, b);
    if (a->ndim != 4 || b->ndim != 4 || y->ndim != 4 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[2] ||
        a->shape[3] != b->shape[3] || y->shape[0] != a->shape[0] || y->shape[1] != a->shape[1] + b->shape[1] ||
        y->shape[2] != a->shape[2] || y->shape[3] != a->shape[3])
        return sdx__fail_shapes(ctx, op, "expected a [N, Ca, H, W], b [N, Cb, H, W], y [N, Ca+Cb, H, W]", a, "a", b, "b");
    c.y = y; c.a = a; c.b = b;
    c.na = a->shape[1] * a->shape[2] * a->shape[3];
    c.nb = b->shape[1] * b->shape[2] * b->shape[3];
    sdx__parallel_for(ctx, a->shape[0], sdx__concat_range, &c);
    return sdx__trace_check(ctx, op, y);
}

/* Transposes each of `batch` [rows, cols] matrices into [cols, rows], in
 * 32 x 32 tiles so both sides are read and written in cache lines. */
typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t rows, cols, tr, tc; } sdx__tr_args;

/* Circular padding (seamless tiling): y[n, c, i, j] = x[n, c, (i - top) mod H,
 * (j - left) mod W]; y is [N, C, H + top + bottom, W + left + right]. */
typedef struct { sdx_tensor *y; const sdx_tensor *x; int top, left; } sdx__pad_args;

static void sdx__pad_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__pad_args *a = (const sdx__pad_args *)arg;
    int64_t H = a->x->shape[2], W = a->x->shape[3], Ho = a->y->shape[2], Wo = a->y->shape[3];
    (void)thread;
    for (int64_t r = begin; r < end; r++) {            /* r = (n*C + c)*Ho + i */
        int64_t p = r / Ho, i = r % Ho;
        int64_t si = ((i - a->top) % H + H) % H, j = 0;
        while (j < Wo) {   /* runs of consecutive source columns */
            int64_t sj = ((j - a->left) % W + W) % W, run = SDX__MIN(W - sj, Wo - j);
            sdx__copy_elems(a->y->data, a->y->dtype, r * Wo + j, a->x->data, a->x->dtype, (p * H + si) * W + sj, run);
            j += run;
        }
    }
}

static int sdx__cpu_pad_circular(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    static const char op[] = "pad_circular";
    sdx__pad_args a;
    SDX__CHECK(ctx, op, y, x);
    if (top < 0 || left < 0 || bottom < 0 || right < 0 || x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] ||
        y->shape[1] != x->shape[1] || y->shape[2] != x->shape[2] + top + bottom || y->shape[3] != x->shape[3] + left + right ||
        (sdx_tensor_numel(y) > 0 && (x->shape[2] < 1 || x->shape[3] < 1)))
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, H + top + bottom, W + left + right]", x, "x", y, "y");
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    a.y = y; a.x = x; a.top = top; a.left = left;
    sdx__parallel_for(ctx, y->shape[0] * y->shape[1] * y->shape[2], sdx__pad_range, &a);
    return sdx__trace_check(ctx, op, y);
}

#define SDX__TT 32
static void sdx__transpose_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__tr_args *t = (const sdx__tr_args *)arg;
    float in[SDX__TT][SDX__TT], out[SDX__TT];
    (void)thread;
    for (int64_t job = begin; job < end; job++) {
        int64_t per = t->tr * t->tc, bat = job / per, r0 = (job % per) / t->tc * SDX__TT, c0 = (job % per) % t->tc * SDX__TT;
        int nr = (int)SDX__MIN((int64_t)SDX__TT, t->rows - r0), nc = (int)SDX__MIN((int64_t)SDX__TT, t->cols - c0);
        int64_t base = bat * t->rows * t->cols;
        for (int i = 0; i < nr; i++) sdx__load_f32(t->x->data, t->x->dtype, base + (r0 + i) * t->cols + c0, nc, in[i]);
        for (int j = 0; j < nc; j++) {
            for (int i = 0; i < nr; i++) out[i] = in[i][j];
            sdx__store_f32(t->y->data, t->y->dtype, base + (c0 + j) * t->rows + r0, nr, out);
        }
    }
}

static int sdx__transpose_batched(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x,
                                  int64_t batch, int64_t rows, int64_t cols) {
    sdx__tr_args t;
    if (y->data == x->data && sdx_tensor_numel(x) > 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    t.y = y; t.x = x; t.rows = rows; t.cols = cols;
    t.tr = (rows + SDX__TT - 1) / SDX__TT;
    t.tc = (cols + SDX__TT - 1) / SDX__TT;
    sdx__parallel_for(ctx, batch * t.tr * t.tc, sdx__transpose_range, &t);
    return sdx__trace_check(ctx, op, y);
}

static int sdx__cpu_nchw_to_nlc(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nchw_to_nlc";
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 4 || y->ndim != 3 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[2] * x->shape[3] ||
        y->shape[2] != x->shape[1])
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, H*W, C]", x, "x", y, "y");
    return sdx__transpose_batched(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2] * x->shape[3]);
}

static int sdx__cpu_nlc_to_nchw(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nlc_to_nchw";
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim != 3 || y->ndim != 4 || y->shape[0] != x->shape[0] || x->shape[1] != y->shape[2] * y->shape[3] ||
        x->shape[2] != y->shape[1])
        return sdx__fail_shapes(ctx, op, "expected x [N, H*W, C] and y [N, C, H, W]", x, "x", y, "y");
    return sdx__transpose_batched(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2]);
}

/* ===================================================================== */
/*  Normalisation and softmax                                             */
/* ===================================================================== */

/* Mean and biased variance of n values of a tensor starting at `off`:
 * two passes with double accumulation, so large offsets (|x| ~ 35 over
 * 10^5 elements) cost no precision. */
static void sdx__moments(const sdx_tensor *x, int64_t off, int64_t n, double *mean, double *var) {
    float buf[SDX__CHUNK];
#ifdef SDX_UNSAFE_HALF_NORM_STATS
    float s = 0, q = 0, m;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m2 = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(x->data, x->dtype, off + i, m2, buf);
        for (int64_t j = 0; j < m2; j++) s = sdx__round_f16(s + buf[j]);
    }
    m = sdx__round_f16(s / (float)n);
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m2 = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(x->data, x->dtype, off + i, m2, buf);
        for (int64_t j = 0; j < m2; j++) q = sdx__round_f16(q + sdx__round_f16((buf[j] - m) * (buf[j] - m)));
    }
    *mean = m;
    *var = sdx__round_f16(q / (float)n);
#else
    double s = 0, q = 0, m;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t c = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        float part = 0;     /* short f32 partial sums, exact enough and fast */
        sdx__load_f32(x->data, x->dtype, off + i, c, buf);
        for (int64_t j = 0; j < c; j++) part += buf[j];
        s += part;
    }
    m = n ? s / (double)n : 0.0;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t c = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        double part = 0;
        sdx__load_f32(x->data, x->dtype, off + i, c, buf);
        for (int64_t j = 0; j < c; j++) { double d = buf[j] - m; part += d * d; }
        q += part;
    }
    *mean = m;
    *var = n ? q / (double)n : 0.0;
#endif
}

typedef struct {
    sdx_tensor *y; const sdx_tensor *x, *gamma, *beta;
    int64_t channels, spatial, groups;
    float eps; int fuse_silu;
} sdx__gn_args;

static void sdx__group_norm_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__gn_args *a = (const sdx__gn_args *)arg;
    int64_t cpg = a->channels / a->groups;
    float buf[SDX__CHUNK];
    (void)thread;
    for (int64_t ng = begin; ng < end; ng++) {
        int64_t off = ng * cpg * a->spatial, g = ng % a->groups;
        double mean, var;
        float rstd;
        sdx__moments(a->x, off, cpg * a->spatial, &mean, &var);
        rstd = (float)(1.0 / sqrt(var + (double)a->eps));
        for (int64_t c = 0; c < cpg; c++) {
            int64_t ch = g * cpg + c;
            float gm = a->gamma ? sdx__get_f32(a->gamma, ch) : 1.0f;
            float bt = a->beta ? sdx__get_f32(a->beta, ch) : 0.0f;
            float mul = gm * rstd, add = bt - (float)mean * mul;
            for (int64_t i = 0; i < a->spatial; i += SDX__CHUNK) {
                int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->spatial - i), o = off + c * a->spatial + i;
                sdx__load_f32(a->x->data, a->x->dtype, o, n, buf);
                for (int64_t j = 0; j < n; j++) buf[j] = buf[j] * mul + add;
                if (a->fuse_silu) for (int64_t j = 0; j < n; j++) buf[j] = buf[j] / (1.0f + expf(-buf[j]));
                sdx__store_f32(a->y->data, a->y->dtype, o, n, buf);
            }
        }
    }
}

static int sdx__cpu_group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu) {
    static const char op[] = "group_norm";
    sdx__gn_args a;
    SDX__CHECK(ctx, op, y, x, gamma, beta);
    if (x->ndim < 2 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape [N, C, ...]", x, "x", y, "y");
    if (groups < 1 || x->shape[1] % groups)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %lld channels not divisible into %d groups", op,
                         (long long)x->shape[1], groups);
    if ((gamma && sdx_tensor_numel(gamma) != x->shape[1]) || (beta && sdx_tensor_numel(beta) != x->shape[1]))
        return sdx__fail_shapes(ctx, op, "gamma/beta size must equal channels", x, "x", gamma ? gamma : beta, "gamma/beta");
    a.y = y; a.x = x; a.gamma = gamma; a.beta = beta;
    a.channels = x->shape[1]; a.groups = groups; a.eps = eps; a.fuse_silu = fuse_silu;
    a.spatial = a.channels && x->shape[0] ? sdx_tensor_numel(x) / (x->shape[0] * a.channels) : 0;
    sdx__parallel_for(ctx, x->shape[0] * groups, sdx__group_norm_range, &a);
    return sdx__trace_check(ctx, op, y);
}

typedef struct { sdx_tensor *y; const sdx_tensor *x, *gamma, *beta; int64_t d; float eps; } sdx__ln_args;

static void sdx__layer_norm_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__ln_args *a = (const sdx__ln_args *)arg;
    float buf[SDX__CHUNK], gm[SDX__CHUNK], bt[SDX__CHUNK];
    (void)thread;
    for (int64_t r = begin; r < end; r++) {
        double mean, var;
        float rstd;
        sdx__moments(a->x, r * a->d, a->d, &mean, &var);
        rstd = (float)(1.0 / sqrt(var + (double)a->eps));
        for (int64_t i = 0; i < a->d; i += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->d - i);
            sdx__load_f32(a->x->data, a->x->dtype, r * a->d + i, n, buf);
            if (a->gamma) sdx__load_f32(a->gamma->data, a->gamma->dtype, i, n, gm);
            else for (int64_t j = 0; j < n; j++) gm[j] = 1.0f;
            if (a->beta) sdx__load_f32(a->beta->data, a->beta->dtype, i, n, bt);
            else for (int64_t j = 0; j < n; j++) bt[j] = 0.0f;
            for (int64_t j = 0; j < n; j++) buf[j] = (buf[j] - (float)mean) * rstd * gm[j] + bt[j];
            sdx__store_f32(a->y->data, a->y->dtype, r * a->d + i, n, buf);
        }
    }
}

static int sdx__cpu_layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta) {
    static const char op[] = "layer_norm";
    sdx__ln_args a;
    SDX__CHECK(ctx, op, y, x, gamma, beta);
    if (x->ndim < 1 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape", x, "x", y, "y");
    a.d = x->shape[x->ndim - 1];
    if ((gamma && sdx_tensor_numel(gamma) != a.d) || (beta && sdx_tensor_numel(beta) != a.d))
        return sdx__fail_shapes(ctx, op, "gamma/beta size must equal the last dim", x, "x", gamma ? gamma : beta, "gamma/beta");
    a.y = y; a.x = x; a.gamma = gamma; a.beta = beta; a.eps = eps;
    if (a.d > 0) sdx__parallel_for(ctx, sdx_tensor_numel(x) / a.d, sdx__layer_norm_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Softmax of one f32 row in place: max-subtracted, f32 sum. */
static void sdx__softmax_row(float *v, int64_t n) {
    float mx = -INFINITY, sum = 0, inv;
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    for (int64_t i = 0; i < n; i++) v[i] = sdx__round_f16(v[i]);
    for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
    for (int64_t i = 0; i < n; i++) { v[i] = sdx__round_f16(expf(v[i] - mx)); sum = sdx__round_f16(sum + v[i]); }
#else
    for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
    if (mx == -INFINITY) mx = 0;    /* fully masked row: all zeros below */
    for (int64_t i = 0; i < n; i++) v[i] -= mx;
    sdx__exp_n(v, n);
    for (int64_t i = 0; i < n; i++) sum += v[i];
#endif
    inv = sum > 0 ? 1.0f / sum : 0.0f;
    for (int64_t i = 0; i < n; i++) v[i] *= inv;
}

typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t d; sdx_ctx *ctx; } sdx__sm_args;

static void sdx__softmax_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__sm_args *a = (const sdx__sm_args *)arg;
    float *row = sdx__scratch_f32(a->ctx, thread);
    for (int64_t r = begin; r < end; r++) {
        sdx__load_f32(a->x->data, a->x->dtype, r * a->d, a->d, row);
        sdx__softmax_row(row, a->d);
        sdx__store_f32(a->y->data, a->y->dtype, r * a->d, a->d, row);
    }
}

static int sdx__cpu_softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "softmax";
    sdx__sm_args a;
    int rc;
    SDX__CHECK(ctx, op, y, x);
    if (x->ndim < 1 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape", x, "x", y, "y");
    a.y = y; a.x = x; a.d = x->shape[x->ndim - 1]; a.ctx = ctx;
    if (a.d == 0) return SDX_OK;
    if ((rc = sdx__scratch_reserve(ctx, (size_t)a.d * sizeof(float))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, sdx_tensor_numel(x) / a.d, sdx__softmax_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* ===================================================================== */
/*  Attention                                                              */
/* ===================================================================== */
/* One job is (batch, head, block of QB queries). Keys are visited in
 * blocks of KB with an online softmax (running max m and sum l per query,
 * the output rescaled when the max grows), so memory is O(QB x KB)
 * whatever Nq and Nk are. Both products run on the GEMM micro-kernel.
 * The logits are formed transposed, S^T = K Q^T ([KB][QB]), so that the
 * softmax bookkeeping runs along rows of queries (contiguous, vectorised)
 * and P packs into the micro-kernel's MR-row strips by plain copies. */

#define SDX__QB 96      /* multiple of MR and NR */
#define SDX__KB 96      /* multiple of MR */

typedef struct {
    sdx_tensor *y; const sdx_tensor *q, *k, *v;
    int64_t batch, nq, nk, heads, d, dp, q_blocks;
    int causal;
    float scale;
    sdx__micro_fn micro;
    sdx_ctx *ctx;
} sdx__attn_args;

static size_t sdx__attn_scratch_floats(int64_t dp) {
    return (size_t)SDX__QB * (size_t)dp         /* packed Q (NR strips)   */
         + (size_t)SDX__KB * (size_t)dp         /* packed K (MR strips)   */
         + (size_t)SDX__KB * (size_t)dp         /* packed V (NR strips)   */
         + (size_t)SDX__KB * SDX__QB            /* S^T, then P^T          */
         + (size_t)SDX__QB * SDX__KB            /* packed P               */
         + (size_t)SDX__QB * (size_t)dp         /* O accumulator          */
         + 3 * (size_t)SDX__QB                  /* m, l, corr             */
         + (size_t)dp + 64;                     /* row buffer             */
}

/* Packs rows [r0, r0+n) of head h (zero rows beyond n, zero cols beyond d)
 * into strips of `width` rows over dp columns, times `scale`. */
static void sdx__attn_pack_rows(float *dst, const sdx_tensor *t, int64_t bat, int64_t len, int64_t h, int64_t d,
                                int64_t dp, int64_t r0, int n, int rows, int width, float scale, float *tmp) {
    int64_t hd = (int64_t)t->shape[2];
    for (int s = 0; s < rows; s += width)
        for (int r = 0; r < width; r++) {
            float *col = dst + (int64_t)s * dp + r;
            int i = s + r;
            if (i < n) sdx__load_f32(t->data, t->dtype, (bat * len + r0 + i) * hd + h * d, d, tmp);
            for (int64_t kk = 0; kk < dp; kk++) col[kk * width] = (i < n && kk < d) ? tmp[kk] * scale : 0.0f;
        }
}

/* Packs V rows [j0, j0+n) (zero beyond) into NR-column strips over dp:
 * dst[dcol/NR][j][dcol%NR]. */
static void sdx__attn_pack_v(float *dst, const sdx_tensor *v, int64_t bat, int64_t nk, int64_t h, int64_t d,
                             int64_t dp, int64_t j0, int n, float *tmp) {
    int64_t hd = v->shape[2];
    for (int j = 0; j < SDX__KB; j++) {
        if (j < n) {
            sdx__load_f32(v->data, v->dtype, (bat * nk + j0 + j) * hd + h * d, d, tmp);
            for (int64_t c = d; c < dp; c++) tmp[c] = 0.0f;
        } else {
            for (int64_t c = 0; c < dp; c++) tmp[c] = 0.0f;
        }
        for (int64_t c = 0; c < dp; c += SDX__NR)
            memcpy(dst + c * SDX__KB + j * SDX__NR, tmp + c, SDX__NR * sizeof(float));
    }
}

/* Online-softmax step on S^T [KB][QB]: masks, updates m and l, turns S^T
 * into P^T = exp(S^T - m_new) and returns per-query rescale factors. */
static void sdx__attn_softmax_step(const sdx__attn_args *a, float *restrict st, float *restrict m, float *restrict l,
                                   float *restrict corr, int64_t i0, int64_t j0, int nkv) {
    float mnew[SDX__QB];    /* a local array: provably unaliased, so vectorised */
    for (int j = 0; j < SDX__KB; j++) {
        float *row = st + j * SDX__QB;
        if (j >= nkv) { for (int i = 0; i < SDX__QB; i++) row[i] = -INFINITY; continue; }
#ifdef SDX_UNSAFE_HALF_SOFTMAX
        for (int i = 0; i < SDX__QB; i++) row[i] = sdx__round_f16(sdx__round_f16(row[i]) * a->scale);
#endif
        if (a->causal) {
            /* key j0+j is visible to queries i0+i >= j0+j */
            int64_t first = j0 + j - i0;
            for (int i = 0; i < SDX__QB && i < first; i++) row[i] = -INFINITY;
        }
    }
    for (int i = 0; i < SDX__QB; i++) mnew[i] = m[i];
    for (int j = 0; j < nkv; j++) {
        const float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) mnew[i] = row[i] > mnew[i] ? row[i] : mnew[i];
    }
    /* a query that has seen only masked keys keeps shift 0: its exps are 0 */
    for (int i = 0; i < SDX__QB; i++) {
        if (mnew[i] == -INFINITY) mnew[i] = 0.0f;
        corr[i] = m[i] - mnew[i];
    }
    sdx__exp_n(corr, SDX__QB);              /* m = -inf (nothing yet) gives 0 */
    for (int j = 0; j < SDX__KB; j++) {
        float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) row[i] -= mnew[i];
    }
    sdx__exp_n(st, (int64_t)SDX__KB * SDX__QB);
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    for (int i = 0; i < SDX__QB; i++) l[i] = sdx__round_f16(l[i] * corr[i]);
    for (int j = 0; j < SDX__KB; j++)
        for (int i = 0; i < SDX__QB; i++) {
            st[j * SDX__QB + i] = sdx__round_f16(st[j * SDX__QB + i]);
            l[i] = sdx__round_f16(l[i] + st[j * SDX__QB + i]);
        }
#else
    for (int i = 0; i < SDX__QB; i++) l[i] *= corr[i];
    for (int j = 0; j < nkv; j++) {
        const float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) l[i] += row[i];
    }
#endif
    for (int i = 0; i < SDX__QB; i++) m[i] = mnew[i];
}

static void sdx__attn_job(const sdx__attn_args *a, int64_t job, int thread) {
    const int64_t dp = a->dp;
    float *pq = sdx__scratch_f32(a->ctx, thread);
    float *pk = pq + SDX__QB * dp;
    float *pv = pk + SDX__KB * dp;
    float *st = pv + SDX__KB * dp;
    float *pp = st + SDX__KB * SDX__QB;
    float *o = pp + SDX__QB * SDX__KB;
    float *m = o + SDX__QB * dp;
    float *l = m + SDX__QB, *corr = l + SDX__QB;
    float *tmp = corr + SDX__QB;
    int64_t bh = job / a->q_blocks, bat = bh / a->heads, h = bh % a->heads;
    int64_t i0 = (job % a->q_blocks) * SDX__QB;
    int nqv = (int)SDX__MIN((int64_t)SDX__QB, a->nq - i0);
    int64_t key_end = a->causal ? SDX__MIN(a->nk, i0 + nqv) : a->nk;
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    const float qscale = 1.0f;      /* logits rounded to f16 before scaling */
#else
    const float qscale = a->scale;
#endif
    sdx__attn_pack_rows(pq, a->q, bat, a->nq, h, a->d, dp, i0, nqv, SDX__QB, SDX__NR, qscale, tmp);
    memset(o, 0, (size_t)(SDX__QB * dp) * sizeof(float));
    for (int i = 0; i < SDX__QB; i++) { m[i] = -INFINITY; l[i] = 0; }
    for (int64_t j0 = 0; j0 < key_end; j0 += SDX__KB) {
        int nkv = (int)SDX__MIN((int64_t)SDX__KB, key_end - j0);
        sdx__attn_pack_rows(pk, a->k, bat, a->nk, h, a->d, dp, j0, nkv, SDX__KB, SDX__MR, 1.0f, tmp);
        sdx__attn_pack_v(pv, a->v, bat, a->nk, h, a->d, dp, j0, nkv, tmp);
        for (int i = 0; i < SDX__QB; i += SDX__NR)
            for (int j = 0; j < SDX__KB; j += SDX__MR)
                a->micro((int)dp, pk + (int64_t)j * dp, pq + (int64_t)i * dp, st + j * SDX__QB + i, SDX__QB, 0);
        sdx__attn_softmax_step(a, st, m, l, corr, i0, j0, nkv);
        for (int i = 0; i < nqv; i++) {
            float cr = corr[i], *orow = o + i * dp;
            if (cr == 1.0f) continue;
            for (int64_t c = 0; c < dp; c += SDX__NR)
                for (int e = 0; e < SDX__NR; e++) orow[c + e] *= cr;
        }
        /* P^T [KB][QB] -> MR-row strips of P over KB: 6 contiguous floats each */
        for (int s = 0; s < SDX__QB; s += SDX__MR)
            for (int j = 0; j < SDX__KB; j++)
                memcpy(pp + s * SDX__KB + j * SDX__MR, st + j * SDX__QB + s, SDX__MR * sizeof(float));
        for (int64_t c = 0; c < dp; c += SDX__NR)
            for (int s = 0; s < SDX__QB; s += SDX__MR)
                a->micro(SDX__KB, pp + s * SDX__KB, pv + c * SDX__KB, o + s * dp + c, dp, 1);
    }
    for (int i = 0; i < nqv; i++) {
        float inv = l[i] > 0 ? 1.0f / l[i] : 0.0f;
        for (int64_t c = 0; c < a->d; c++) tmp[c] = o[i * dp + c] * inv;
        sdx__store_f32(a->y->data, a->y->dtype, (bat * a->nq + i0 + i) * a->heads * a->d + h * a->d, a->d, tmp);
    }
}

static void sdx__attn_range(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__attn_job((const sdx__attn_args *)arg, j, thread);
}

static int sdx__cpu_attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                          int heads, int causal) {
    static const char op[] = "attention";
    sdx__attn_args a;
    int rc;
    SDX__CHECK(ctx, op, y, q, k, v);
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || !sdx__same_shape(k, v) || !sdx__same_shape(q, y) ||
        k->shape[0] != q->shape[0] || k->shape[2] != q->shape[2])
        return sdx__fail_shapes(ctx, op, "expected q, y [B, Nq, H*D] and k, v [B, Nk, H*D]", q, "q", k, "k");
    if (heads < 1 || q->shape[2] % heads)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: width %lld not divisible into %d heads", op,
                         (long long)q->shape[2], heads);
    if (y->data == q->data || y->data == k->data || y->data == v->data)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias q, k or v", op);
    memset(&a, 0, sizeof a);
    a.y = y; a.q = q; a.k = k; a.v = v;
    a.batch = q->shape[0]; a.nq = q->shape[1]; a.nk = k->shape[1];
    a.heads = heads; a.d = q->shape[2] / heads;
    a.dp = (a.d + SDX__NR - 1) / SDX__NR * SDX__NR;
    a.causal = causal;
    a.scale = (float)(1.0 / sqrt((double)a.d));
    a.q_blocks = (a.nq + SDX__QB - 1) / SDX__QB;
    a.ctx = ctx;
    a.micro = sdx__micro_select();
    if (a.nq == 0 || a.batch == 0 || a.d == 0) return SDX_OK;
    if (a.nk == 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: no keys", op);
    if ((rc = sdx__scratch_reserve(ctx, sdx__attn_scratch_floats(a.dp) * sizeof(float))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, a.batch * a.heads * a.q_blocks, sdx__attn_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* ===================================================================== */
/*  The CPU backend: host memory, the kernels above                       */
/* ===================================================================== */

static void *sdx__cpu_alloc(void *user, size_t bytes) { (void)user; return SDX_MALLOC(bytes); }
static void  sdx__cpu_free(void *user, void *ptr) { (void)user; SDX_FREE(ptr); }
static int sdx__cpu_move(void *user, void *dst, const void *src, size_t bytes) {
    (void)user;
    if (bytes) memcpy(dst, src, bytes);
    return SDX_OK;
}

static sdx_backend sdx__cpu_backend(void) {
    sdx_backend b;
    memset(&b, 0, sizeof b);
    b.name = "cpu";
    b.host_memory = 1;
    b.alloc = sdx__cpu_alloc;
    b.free = sdx__cpu_free;
    b.upload = sdx__cpu_move;
    b.download = sdx__cpu_move;
    b.linear = sdx__cpu_linear;
    b.conv2d = sdx__cpu_conv2d_pad;
    b.group_norm = sdx__cpu_group_norm;
    b.layer_norm = sdx__cpu_layer_norm;
    b.softmax = sdx__cpu_softmax;
    b.attention = sdx__cpu_attention;
    b.silu = sdx__cpu_silu;
    b.gelu = sdx__cpu_gelu;
    b.quick_gelu = sdx__cpu_quick_gelu;
    b.geglu = sdx__cpu_geglu;
    b.scale = sdx__cpu_scale;
    b.copy = sdx__cpu_copy;
    b.add = sdx__cpu_add;
    b.mul = sdx__cpu_mul;
    b.add_channel_bias = sdx__cpu_add_channel_bias;
    b.resize_nearest = sdx__cpu_resize_nearest;
    b.pad_circular = sdx__cpu_pad_circular;
    b.concat_channels = sdx__cpu_concat_channels;
    b.nchw_to_nlc = sdx__cpu_nchw_to_nlc;
    b.nlc_to_nchw = sdx__cpu_nlc_to_nchw;
    b.clamp = sdx__cpu_clamp;
    b.tanh_clamp = sdx__cpu_tanh_clamp;
    return b;
}

/* ---- src/core/ops.c ---- */
/* ===================================================================== */
/*  Ops: the kernels as model code calls them                             */
/* ===================================================================== */
/* Every call goes to the context's backend (the CPU's kernels, or a GPU's
 * from sdx_hip.h). Here, once for every backend: each operand must live
 * where the backend computes (a host tensor handed to a GPU kernel is a
 * bug in model code, caught with its name), and the tracer checks a
 * device output (the CPU kernels check their own). The contracts are in
 * docs/INTERNALS.md. */

static int sdx__ops_where(sdx_ctx *ctx, const char *op, const sdx_tensor *const *ts, int n) {
    int device = sdx__on_device(ctx);
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->device != device)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: operand %d is in %s memory but the backend '%s' computes in %s memory",
                             op, i, ts[i]->device ? "device" : "host", ctx->be.name, device ? "device" : "host");
    return SDX_OK;
}

#define SDX__OPS_WHERE(ctx, op, ...) do { \
    const sdx_tensor *const sdx__ops_ts_[] = { __VA_ARGS__ }; \
    int sdx__ops_rc_ = sdx__ops_where(ctx, op, sdx__ops_ts_, SDX__ARRAY_LEN(sdx__ops_ts_)); \
    if (sdx__ops_rc_ != SDX_OK) return sdx__ops_rc_; } while (0)

static int sdx__ops_done(sdx_ctx *ctx, const char *op, const sdx_tensor *y, int rc) {
    if (rc != SDX_OK || !y->device) return rc;
    return sdx__trace_check(ctx, op, y);
}

static int sdx__linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b) {
    SDX__OPS_WHERE(ctx, "linear", y, x, w, b);
    return sdx__ops_done(ctx, "linear", y, ctx->be.linear(ctx, y, x, w, b));
}

static int sdx__conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           int stride, int pad_top, int pad_left, int pad_bottom, int pad_right) {
    SDX__OPS_WHERE(ctx, "conv2d", y, x, w, b);
    return sdx__ops_done(ctx, "conv2d", y, ctx->be.conv2d(ctx, y, x, w, b, stride, pad_top, pad_left, pad_bottom, pad_right));
}

static int sdx__pad_circular(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    SDX__OPS_WHERE(ctx, "pad_circular", y, x);
    return sdx__ops_done(ctx, "pad_circular", y, ctx->be.pad_circular(ctx, y, x, top, left, bottom, right));
}

/* Seamless tiling (A1111's "Tiling", sd.cpp's circular padding): between
 * these two calls every convolution with symmetric padding (the layers'
 * own padding, as PyTorch's padding_mode="circular") wraps around the
 * image edges, so a generated picture tiles without seams. Explicit
 * asymmetric pads (the VAE encoder's downsampling) stay zero. */
static void sdx__circular_begin(sdx_ctx *ctx) { ctx->circular = 1; }
static void sdx__circular_pause(sdx_ctx *ctx) { ctx->circular = 0; }   /* keeps the buffer */

static void sdx__circular_end(sdx_ctx *ctx) {
    ctx->circular = 0;
    sdx__dev_free(ctx, ctx->pad_buf, ctx->pad_cap);
    ctx->pad_buf = NULL;
    ctx->pad_cap = 0;
}

static int sdx__conv2d(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                       int stride, int pad) {
    sdx_tensor xp;
    size_t bytes;
    int rc;
    if (!ctx->circular || pad <= 0 || x->ndim != 4) return sdx__conv2d_pad(ctx, y, x, w, b, stride, pad, pad, pad, pad);
    xp = *x;
    xp.owned = 0;
    xp.shape[2] += 2 * pad;
    xp.shape[3] += 2 * pad;
    bytes = sdx_tensor_nbytes(&xp);
    if (bytes > ctx->pad_cap) {   /* one buffer, grown to the largest input */
        sdx__dev_free(ctx, ctx->pad_buf, ctx->pad_cap);
        ctx->pad_cap = 0;
        if (!(ctx->pad_buf = sdx__dev_alloc(ctx, bytes))) return sdx__nomem(ctx, "circular padding", bytes);
        ctx->pad_cap = bytes;
    }
    xp.data = ctx->pad_buf;
    if ((rc = sdx__pad_circular(ctx, &xp, x, pad, pad, pad, pad)) != SDX_OK) return rc;
    return sdx__conv2d_pad(ctx, y, &xp, w, b, stride, 0, 0, 0, 0);
}

static int sdx__group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu) {
    SDX__OPS_WHERE(ctx, "group_norm", y, x, gamma, beta);
    return sdx__ops_done(ctx, "group_norm", y, ctx->be.group_norm(ctx, y, x, groups, eps, gamma, beta, fuse_silu));
}

static int sdx__layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta) {
    SDX__OPS_WHERE(ctx, "layer_norm", y, x, gamma, beta);
    return sdx__ops_done(ctx, "layer_norm", y, ctx->be.layer_norm(ctx, y, x, eps, gamma, beta));
}

static int sdx__softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    SDX__OPS_WHERE(ctx, "softmax", y, x);
    return sdx__ops_done(ctx, "softmax", y, ctx->be.softmax(ctx, y, x));
}

static int sdx__attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                          int heads, int causal) {
    SDX__OPS_WHERE(ctx, "attention", y, q, k, v);
    return sdx__ops_done(ctx, "attention", y, ctx->be.attention(ctx, y, q, k, v, heads, causal));
}

#define SDX__OPS_UNARY(name) \
    static int sdx__##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { \
        SDX__OPS_WHERE(ctx, #name, y, x); \
        return sdx__ops_done(ctx, #name, y, ctx->be.name(ctx, y, x)); \
    }
#define SDX__OPS_BINARY(name) \
    static int sdx__##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) { \
        SDX__OPS_WHERE(ctx, #name, y, a, b); \
        return sdx__ops_done(ctx, #name, y, ctx->be.name(ctx, y, a, b)); \
    }
SDX__OPS_UNARY(silu)
SDX__OPS_UNARY(gelu)            /* exact erf */
SDX__OPS_UNARY(quick_gelu)      /* x*sigmoid(1.702x) */
SDX__OPS_UNARY(geglu)           /* x[...,2D] -> a*gelu(g), a = first half */
SDX__OPS_UNARY(copy)            /* same numel, converts dtype */
SDX__OPS_UNARY(resize_nearest)  /* NCHW, y's shape gives the size */
SDX__OPS_UNARY(nchw_to_nlc)
SDX__OPS_UNARY(nlc_to_nchw)
SDX__OPS_BINARY(add)
SDX__OPS_BINARY(mul)
SDX__OPS_BINARY(add_channel_bias)   /* b: [N, C] over H, W */
SDX__OPS_BINARY(concat_channels)

static int sdx__scale(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) {
    SDX__OPS_WHERE(ctx, "scale", y, x);
    return sdx__ops_done(ctx, "scale", y, ctx->be.scale(ctx, y, x, s));
}

/* y = min(max(x, lo), hi), NaN stays NaN (ReLU: 0, INFINITY); y may alias x. */
static int sdx__clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    SDX__OPS_WHERE(ctx, "clamp", y, x);
    if (!(lo <= hi)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "clamp: bounds [%g, %g] are not ordered", lo, hi);
    return sdx__ops_done(ctx, "clamp", y, ctx->be.clamp(ctx, y, x, lo, hi));
}

/* y = tanh(x / limit) * limit (TAESD's soft clamp), limit > 0; y may alias x. */
static int sdx__tanh_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    SDX__OPS_WHERE(ctx, "tanh_clamp", y, x);
    if (!(limit > 0) || !isfinite(limit)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "tanh_clamp: limit %g must be positive", limit);
    return sdx__ops_done(ctx, "tanh_clamp", y, ctx->be.tanh_clamp(ctx, y, x, limit));
}

/* Nearest 2x: the resize with y twice x's size (checked here, so every
 * backend's resize sees the same contract). */
static int sdx__upsample2x(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    if (x->ndim != 4 || y->ndim != 4 || y->shape[2] != 2 * x->shape[2] || y->shape[3] != 2 * x->shape[3]) {
        char sx[96], sy[96];
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "upsample2x: expected x [N, C, H, W] and y [N, C, 2H, 2W]; x is %s, y is %s",
                         sdx_shape_str(x, sx, sizeof sx), sdx_shape_str(y, sy, sizeof sy));
    }
    return sdx__resize_nearest(ctx, y, x);
}

/* ---- host helpers ------------------------------------------------------ */

/* out[n, dim] = [cos(t*f_i) ..., sin(t*f_i) ...], f_i = exp(-ln(max_period) * i / (dim/2)) */
static void sdx__timestep_embedding(float *out, const float *t, int n, int dim, float max_period) {
    int half = dim / 2;
    float lnp = (float)log((double)max_period);
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * (size_t)dim;
        for (int j = 0; j < half; j++) {
            /* frequencies and arguments rounded to f32 as the reference
             * implementations compute them; cos/sin of that f32 argument */
            float f = expf(-lnp * (float)j / (float)half);
            float arg = t[i] * f;
            o[j] = (float)cos((double)arg);
            o[half + j] = (float)sin((double)arg);
        }
        if (dim % 2) o[dim - 1] = 0.0f;
    }
}

/* ---- src/core/context.c (continued) ---- */

static int sdx__cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > 256 ? 256 : (int)n);
}

SDX_API sdx_ctx *sdx_create(const sdx_desc *desc) {
    sdx_desc d;
    sdx_ctx *ctx;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if ((d.alloc || d.realloc || d.free) && !(d.alloc && d.realloc && d.free)) {
        if (d.log) d.log(SDX_LOG_ERROR, "sdx_create: set all three allocator hooks (alloc, realloc, free) or none", d.user);
        return NULL;
    }
    ctx = (sdx_ctx *)(d.alloc ? d.alloc(sizeof *ctx, d.user) : SDX_MALLOC(sizeof *ctx));
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    ctx->desc = d;
    ctx->n_threads = d.n_threads > 0 ? d.n_threads : sdx__cpu_count();
    ctx->trace = d.trace_nonfinite;
    ctx->be = sdx__cpu_backend();
    return ctx;
}

SDX_API void sdx_destroy(sdx_ctx *ctx) {
    if (!ctx) return;
    sdx__circular_end(ctx);
    if (ctx->be.release) ctx->be.release(ctx->be.user);
    sdx__pool_destroy(ctx->pool);
    sdx__kernel_state_free(ctx);
    sdx__free(ctx, ctx);
}

SDX_API void sdx_set_trace(sdx_ctx *ctx, int enabled) { if (ctx) ctx->trace = enabled; }
SDX_API int  sdx_threads(const sdx_ctx *ctx) { return ctx ? ctx->n_threads : 0; }

/* ---- backends ---------------------------------------------------------- */

/* Every field a backend must fill: a NULL one would crash mid-generation,
 * so it is refused here, by name. */
static const char *sdx__backend_missing(const sdx_backend *b) {
#define SDX__NEED(f) if (!b->f) return #f
    SDX__NEED(name); SDX__NEED(alloc); SDX__NEED(free); SDX__NEED(upload); SDX__NEED(download);
    SDX__NEED(linear); SDX__NEED(conv2d); SDX__NEED(group_norm); SDX__NEED(layer_norm); SDX__NEED(softmax);
    SDX__NEED(attention); SDX__NEED(silu); SDX__NEED(gelu); SDX__NEED(quick_gelu); SDX__NEED(geglu);
    SDX__NEED(scale); SDX__NEED(copy); SDX__NEED(add); SDX__NEED(mul); SDX__NEED(add_channel_bias);
    SDX__NEED(resize_nearest); SDX__NEED(pad_circular); SDX__NEED(concat_channels); SDX__NEED(nchw_to_nlc); SDX__NEED(nlc_to_nchw);
    SDX__NEED(clamp); SDX__NEED(tanh_clamp);
#undef SDX__NEED
    return NULL;
}

SDX_API int sdx_set_backend(sdx_ctx *ctx, const sdx_backend *backend) {
    const char *missing;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (backend && (missing = sdx__backend_missing(backend)) != NULL)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_set_backend: backend '%s' has no %s",
                         backend->name ? backend->name : "?", missing);
    if (ctx->dev_bytes)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_set_backend: the context still holds %zu bytes on backend '%s' "
                         "(free its models first)", ctx->dev_bytes, ctx->be.name);
    if (ctx->be.release) ctx->be.release(ctx->be.user);
    ctx->be = backend ? *backend : sdx__cpu_backend();
    ctx->dev_peak = 0;
    return SDX_OK;
}

SDX_API const char *sdx_backend_name(const sdx_ctx *ctx) { return ctx ? ctx->be.name : "none"; }
SDX_API void *sdx_backend_user(const sdx_ctx *ctx) { return ctx ? ctx->be.user : NULL; }

SDX_API size_t sdx_device_bytes(const sdx_ctx *ctx, size_t *peak) {
    if (peak) *peak = ctx ? ctx->dev_peak : 0;
    return ctx ? ctx->dev_bytes : 0;
}

SDX_API int sdx_fail(sdx_ctx *ctx, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    code = sdx__vfail(ctx, code, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- src/core/rng.c ---- */

/* ===================================================================== */
/*  Noise generators: torch.randn on a CPU generator (mt19937) and        */
/*  AUTOMATIC1111's Philox emulation of CUDA torch.randn                  */
/* ===================================================================== */
/* Both reproduce the reference bit for bit (tests/t_rng.c against
 * shared/golden/rng). The floating-point steps are written so that a
 * compiler contracting a*b+c into an FMA (gcc -std=gnu11 -mfma does)
 * cannot change a result: each product that feeds an addition is either
 * exact or is an explicit fmaf() call. Assumes float and double are IEEE
 * binary32/binary64 evaluated at their own precision (FLT_EVAL_METHOD 0,
 * as on x86-64 SSE and AArch64) and no -ffast-math. */

/* ---- mt19937 (PyTorch's CPU generator) ------------------------------ */

enum { SDX__MT_N = 624, SDX__MT_M = 397 };

static void sdx__mt_seed(sdx_rng *rng, uint32_t seed) {
    rng->mt[0] = seed;
    for (uint32_t i = 1; i < SDX__MT_N; i++)
        rng->mt[i] = 1812433253u * (rng->mt[i - 1] ^ (rng->mt[i - 1] >> 30)) + i;
    rng->mt_index = SDX__MT_N;
}

static void sdx__mt_twist(sdx_rng *rng) {
    uint32_t *mt = rng->mt;
    for (int i = 0; i < SDX__MT_N; i++) {
        uint32_t y = (mt[i] & 0x80000000u) | (mt[(i + 1) % SDX__MT_N] & 0x7fffffffu);
        mt[i] = mt[(i + SDX__MT_M) % SDX__MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    rng->mt_index = 0;
}

static uint32_t sdx__mt_next(sdx_rng *rng) {
    uint32_t y;
    if (rng->mt_index >= SDX__MT_N) sdx__mt_twist(rng);
    y = rng->mt[rng->mt_index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* ---- torch CPU, n < 16: double Box-Muller with a cached second value - */

/* torch's uniform_real_distribution<double>: 53 random bits of
 * (first << 32 | second). */
static double sdx__mt_uniform53(sdx_rng *rng) {
    uint64_t hi = sdx__mt_next(rng);
    uint64_t lo = sdx__mt_next(rng);
    return (double)(((hi << 32) | lo) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

static double sdx__torch_normal_double(sdx_rng *rng) {
    double u1, u2, radius, theta;
    if (rng->has_cached_normal) {
        rng->has_cached_normal = 0;
        return rng->cached_normal;
    }
    u1 = sdx__mt_uniform53(rng);
    u2 = sdx__mt_uniform53(rng);
    radius = sqrt(-2.0 * log(1.0 - u2));
    theta = 2.0 * 3.14159265358979323846 * u1;
    rng->cached_normal = radius * sin(theta);
    rng->has_cached_normal = 1;
    return radius * cos(theta);
}

/* ---- torch CPU, n >= 16: float32 Box-Muller in blocks of 16 ---------- */

/* PyTorch's AVX2 kernel evaluates log and sincos with Cephes-style
 * polynomials (ATen/native/cpu/avx_mathfun.h, log256_ps / sincos256_ps)
 * compiled with FMA contraction: each multiply whose only use is an add
 * becomes an FMA, the first such multiply winning when an add has two.
 * These are the same operations, one lane at a time. Valid for the
 * arguments the kernel sees: log on (0, 1], sincos on [0, 2pi). */
static float sdx__cephes_logf(float x) {
    uint32_t bits, exponent;
    float m, e, t, z, y;
    int below_sqrt_half;
    if (x < FLT_MIN) x = FLT_MIN;                  /* the kernel's max_ps */
    memcpy(&bits, &x, 4);
    exponent = bits >> 23;
    bits = (bits & ~0x7f800000u) | 0x3f000000u;    /* mantissa in [0.5, 1) */
    memcpy(&m, &bits, 4);
    e = (float)((int)exponent - 127) + 1.0f;
    below_sqrt_half = m < 0.707106781186547524f;
    if (below_sqrt_half) e -= 1.0f;
    t = (m - 1.0f) + (below_sqrt_half ? m : 0.0f); /* both steps exact */
    z = t * t;
    y = fmaf(7.0376836292e-2f, t, -1.1514610310e-1f);
    y = fmaf(y, t, 1.1676998740e-1f);
    y = fmaf(y, t, -1.2420140846e-1f);
    y = fmaf(y, t, 1.4249322787e-1f);
    y = fmaf(y, t, -1.6668057665e-1f);
    y = fmaf(y, t, 2.0000714765e-1f);
    y = fmaf(y, t, -2.4999993993e-1f);
    y = fmaf(y, t, 3.3333331174e-1f);
    y = y * t;
    y = fmaf(y, z, e * -2.12194440e-4f);
    y = y - 0.5f * z;                              /* 0.5 * z is exact */
    t = t + y;
    return fmaf(e, 0.693359375f, t);
}

/* x >= 0 (the kernel takes |x| and moves the sign to sin; here x is
 * always a non-negative angle). */
static void sdx__cephes_sincosf(float x, float *s, float *c) {
    const float fopi = 1.27323954473516f;          /* 4 / pi */
    uint32_t j, sin_sign, cos_sign, sb, cb;
    float jf, z, cos_poly, sin_poly, sin_v, cos_v, zero = 0.0f;
    int first_poly_is_sin;
    j = (uint32_t)(int32_t)(x * fopi);             /* truncation, like cvttps */
    j = (j + 1u) & ~1u;
    jf = (float)(int32_t)j;
    sin_sign = (j & 4u) << 29;
    first_poly_is_sin = (j & 2u) == 0;
    /* extended-precision reduction x - j * pi/4 */
    x = fmaf(jf, -0.78515625f, x);
    x = fmaf(jf, -2.4187564849853515625e-4f, x);
    x = fmaf(jf, -3.77489497744594108e-8f, x);
    cos_sign = (~(j - 2u) & 4u) << 29;
    z = x * x;
    cos_poly = fmaf(2.443315711809948e-5f, z, -1.388731625493765e-3f);
    cos_poly = fmaf(cos_poly, z, 4.166664568298827e-2f);
    cos_poly = cos_poly * z;
    cos_poly = fmaf(cos_poly, z, -(0.5f * z));   /* 0.5 * z is exact */
    cos_poly = cos_poly + 1.0f;
    sin_poly = fmaf(-1.9515295891e-4f, z, 8.3321608736e-3f);
    sin_poly = fmaf(sin_poly, z, -1.6666654611e-1f);
    sin_poly = sin_poly * z;
    sin_poly = fmaf(sin_poly, x, x);
    /* the kernel selects by masking and adds the other lane's +0 */
    sin_v = first_poly_is_sin ? zero + sin_poly : cos_poly + zero;
    cos_v = first_poly_is_sin ? cos_poly + zero : zero + sin_poly;
    memcpy(&sb, &sin_v, 4);
    memcpy(&cb, &cos_v, 4);
    sb ^= sin_sign;
    cb ^= cos_sign;
    memcpy(s, &sb, 4);
    memcpy(c, &cb, 4);
}

/* One block: d[0..8) hold u1 candidates, d[8..16) the angles. */
static void sdx__torch_normal_fill_16(float *d) {
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - d[j];                    /* (0, 1] for log */
        float radius = sqrtf(-2.0f * sdx__cephes_logf(u1));
        float theta = 6.2831855f * d[j + 8];      /* (float)(2 pi) */
        float s, c;
        sdx__cephes_sincosf(theta, &s, &c);
        /* the kernel ends with fmadd(n, std = 1, mean = 0): -0 becomes +0 */
        d[j] = radius * c + 0.0f;
        d[j + 8] = radius * s + 0.0f;
    }
}

/* torch's uniform_real_distribution<float>: 24 random bits. */
static float sdx__mt_uniform24(sdx_rng *rng) {
    return (float)(sdx__mt_next(rng) & 0xffffffu) * (1.0f / 16777216.0f);
}

static void sdx__torch_randn_cpu(sdx_rng *rng, float *out, size_t n) {
    size_t i;
    if (n < 16) {
        for (i = 0; i < n; i++) out[i] = (float)sdx__torch_normal_double(rng);
        return;
    }
    for (i = 0; i < n; i++) out[i] = sdx__mt_uniform24(rng);
    for (i = 0; i + 16 <= n; i += 16) sdx__torch_normal_fill_16(out + i);
    if (n % 16) {
        /* torch redoes the last 16 positions with fresh uniforms */
        float *tail = out + n - 16;
        for (i = 0; i < 16; i++) tail[i] = sdx__mt_uniform24(rng);
        sdx__torch_normal_fill_16(tail);
    }
}

/* ---- Philox 4x32-10 (A1111 rng_philox.py) ---------------------------- */

/* In place on ctr[4] with key[2]: 10 rounds, 9 key bumps. */
static void sdx__philox4x32_10(uint32_t ctr[4], const uint32_t key[2]) {
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)ctr[0] * 0xD2511F53u;
        uint64_t p1 = (uint64_t)ctr[2] * 0xCD9E8D57u;
        uint32_t c1 = ctr[1], c3 = ctr[3];
        ctr[0] = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        ctr[1] = (uint32_t)p1;
        ctr[2] = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        ctr[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* The reference's constants are float32 and its arithmetic float64:
 * u = x * A + A/2 and v = y * B + B/2 with A = (float)2.3283064e-10
 * (which is exactly 2^-32) and B = (float)(2.3283064e-10 * 6.2831855).
 * x * A is exact. y * B needs rounding, so it is formed exactly as an
 * integer (B = b_int * 2^b_exp) and rounded once by the conversion,
 * leaving no product for a compiler to fuse into the addition. */
typedef struct sdx__philox_bm {
    uint64_t b_int;     /* 24-bit mantissa of B */
    int      b_exp;
    double   b_half;
} sdx__philox_bm;

static void sdx__philox_bm_init(sdx__philox_bm *bm) {
    const float b = (float)(2.3283064e-10 * 6.2831855);
    int e;
    double mant = frexp((double)b, &e);               /* b = mant * 2^e, mant in [0.5, 1) */
    bm->b_int = (uint64_t)ldexp(mant, 24);
    bm->b_exp = e - 24;
    bm->b_half = (double)(b * 0.5f);
}

static float sdx__philox_box_muller(const sdx__philox_bm *bm, uint32_t x, uint32_t y) {
    double u = ((double)x + 0.5) * 2.3283064365386963e-10;            /* exact */
    double yb = ldexp((double)(int64_t)(y * bm->b_int), bm->b_exp);   /* < 2^56 */
    double v = yb + bm->b_half;
    return (float)(sqrt(-2.0 * log(u)) * sin(v));
}

static void sdx__philox_randn(sdx_rng *rng, float *out, size_t n) {
    const uint32_t key[2] = { (uint32_t)rng->seed, (uint32_t)(rng->seed >> 32) };
    uint32_t call = (uint32_t)rng->philox_calls++;
    sdx__philox_bm bm;
    sdx__philox_bm_init(&bm);
    for (size_t i = 0; i < n; i++) {
        /* the reference's element index is a uint32 arange */
        uint32_t ctr[4] = { call, 0, (uint32_t)i, 0 };
        sdx__philox4x32_10(ctr, key);
        out[i] = sdx__philox_box_muller(&bm, ctr[0], ctr[1]);
    }
}

/* ---- public ---------------------------------------------------------- */

SDX_API void sdx_rng_init(sdx_rng *rng, sdx_rng_kind kind, uint64_t seed) {
    memset(rng, 0, sizeof *rng);
    rng->kind = kind;
    rng->seed = seed;
    /* torch seeds mt19937 with the low 32 bits only. Any kind but CUDA
     * draws from mt19937 (as sdx_rng_randn dispatches), so it is seeded. */
    if (kind != SDX_RNG_CUDA) sdx__mt_seed(rng, (uint32_t)seed);
}

SDX_API void sdx_rng_randn(sdx_rng *rng, float *out, size_t n) {
    if (rng->kind == SDX_RNG_CUDA) sdx__philox_randn(rng, out, n);
    else sdx__torch_randn_cpu(rng, out, n);
}

/* ---- src/core/json.c ---- */

/* ===================================================================== */
/*  JSON: a small, strict, non-recursive parser (RFC 8259)                */
/* ===================================================================== */
/* Used for safetensors headers and golden/test data. Input is untrusted:
 * every read is bounds-checked, nesting depth is limited, strings must be
 * valid UTF-8 (escapes included), numbers follow the JSON grammar. The
 * parse builds a tree of nodes allocated in blocks owned by the document. */

typedef enum sdx__json_type {
    SDX__JSON_NULL, SDX__JSON_FALSE, SDX__JSON_TRUE, SDX__JSON_NUMBER,
    SDX__JSON_STRING, SDX__JSON_ARRAY, SDX__JSON_OBJECT
} sdx__json_type;

typedef struct sdx__json {
    sdx__json_type type;
    double num;                    /* NUMBER */
    const char *raw;               /* NUMBER: source text (for exact ints) */
    size_t raw_len;
    const char *str;               /* STRING: decoded, NUL-terminated */
    size_t len;                    /* STRING: bytes; ARRAY/OBJECT: count */
    const char *key;               /* member name inside an OBJECT */
    size_t key_len;
    struct sdx__json *child, *last, *next, *parent;
} sdx__json;

typedef struct sdx__json_block { struct sdx__json_block *next; size_t used, size; } sdx__json_block;

typedef struct sdx__json_doc {
    sdx_ctx *ctx;
    sdx__json *root;
    sdx__json_block *blocks;
} sdx__json_doc;

#define SDX__JSON_MAX_DEPTH 256

static void *sdx__json_alloc(sdx__json_doc *doc, size_t size) {
    sdx__json_block *b = doc->blocks;
    size = (size + 15) & ~(size_t)15;
    if (!b || b->size - b->used < size) {
        size_t bsize = SDX__MAX(size, (size_t)16384);
        size_t hdr = (sizeof(sdx__json_block) + 15) & ~(size_t)15;
        if (bsize > SIZE_MAX - hdr) return NULL;
        b = (sdx__json_block *)sdx__malloc(doc->ctx, hdr + bsize);
        if (!b) return NULL;
        b->next = doc->blocks;
        b->used = hdr;
        b->size = hdr + bsize;
        doc->blocks = b;
    }
    {
        void *p = (unsigned char *)b + b->used;
        b->used += size;
        return p;
    }
}

static void sdx__json_free(sdx__json_doc *doc) {
    sdx__json_block *b = doc->blocks;
    while (b) { sdx__json_block *n = b->next; sdx__free(doc->ctx, b); b = n; }
    doc->blocks = NULL;
    doc->root = NULL;
}

typedef struct sdx__json_parser {
    const char *s, *end, *start;
    sdx__json_doc *doc;
    const char *what;   /* file name for messages */
} sdx__json_parser;

static int sdx__json_err(sdx__json_parser *p, const char *msg) {
    return sdx__fail(p->doc->ctx, SDX_ERR_FORMAT, "%s: invalid JSON at byte %lld: %s",
                     p->what, (long long)(p->s - p->start), msg);
}

static void sdx__json_ws(sdx__json_parser *p) {
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int sdx__utf8_len(const unsigned char *s, const unsigned char *end) {
    unsigned c = s[0];
    int n;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c < 0xc2) return 0;
    if (c < 0xe0) { n = 2; cp = c & 0x1f; }
    else if (c < 0xf0) { n = 3; cp = c & 0x0f; }
    else if (c < 0xf5) { n = 4; cp = c & 0x07; }
    else return 0;
    if (end - s < n) return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static int sdx__json_hex4(const char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static size_t sdx__utf8_put(char *d, uint32_t cp) {
    if (cp < 0x80) { d[0] = (char)cp; return 1; }
    if (cp < 0x800) { d[0] = (char)(0xc0 | (cp >> 6)); d[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | (cp >> 12)); d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        d[2] = (char)(0x80 | (cp & 0x3f)); return 3;
    }
    d[0] = (char)(0xf0 | (cp >> 18)); d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Parses a string at p->s (on the opening quote). Decoded bytes never
 * outnumber the source bytes, so one allocation of the raw length fits. */
static int sdx__json_string(sdx__json_parser *p, const char **out, size_t *out_len) {
    const char *q = p->s + 1;
    size_t raw = 0;
    char *d, *dst;
    while (q + raw < p->end && q[raw] != '"') raw += (q[raw] == '\\' && q + raw + 1 < p->end) ? 2 : 1;
    if (q + raw >= p->end) return sdx__json_err(p, "unterminated string");
    dst = d = (char *)sdx__json_alloc(p->doc, raw + 1);
    if (!d) return sdx__nomem(p->doc->ctx, "JSON string", raw + 1);
    p->s = q;
    while (*p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c < 0x20) return sdx__json_err(p, "control character in string");
        if (c == '\\') {
            char e = p->s[1];
            uint32_t cp;
            p->s += 2;
            switch (e) {
            case '"': *d++ = '"'; break;
            case '\\': *d++ = '\\'; break;
            case '/': *d++ = '/'; break;
            case 'b': *d++ = '\b'; break;
            case 'f': *d++ = '\f'; break;
            case 'n': *d++ = '\n'; break;
            case 'r': *d++ = '\r'; break;
            case 't': *d++ = '\t'; break;
            case 'u':
                if (p->end - p->s < 4 || !sdx__json_hex4(p->s, &cp)) return sdx__json_err(p, "bad \\u escape");
                p->s += 4;
                if (cp >= 0xdc00 && cp <= 0xdfff) return sdx__json_err(p, "lone low surrogate");
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    uint32_t lo;
                    if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u' || !sdx__json_hex4(p->s + 2, &lo) ||
                        lo < 0xdc00 || lo > 0xdfff)
                        return sdx__json_err(p, "lone high surrogate");
                    p->s += 6;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                /* a \uXXXX escape is 6+ source bytes and at most 4 output bytes */
                d += sdx__utf8_put(d, cp);
                break;
            default: return sdx__json_err(p, "bad escape");
            }
        } else {
            int n = sdx__utf8_len((const unsigned char *)p->s, (const unsigned char *)p->end);
            if (!n) return sdx__json_err(p, "invalid UTF-8 in string");
            memcpy(d, p->s, (size_t)n);
            d += n;
            p->s += n;
        }
    }
    *d = 0;
    p->s++;                 /* closing quote */
    *out = dst;
    *out_len = (size_t)(d - dst);
    return SDX_OK;
}

/* strtod reads the locale's decimal point (',' after setlocale(LC_ALL, "")
 * in many locales); JSON always writes '.'. `text` is a private copy. */
static double sdx__json_strtod(char *text) {
    const char *point = localeconv()->decimal_point;
    char *dot = strchr(text, '.');
    if (dot && point && point[0] && !point[1]) *dot = point[0];
    return strtod(text, NULL);
}

static int sdx__json_number(sdx__json_parser *p, sdx__json *v) {
    const char *s = p->s;
    char *copy;
    size_t n;
    if (s < p->end && *s == '-') s++;
    if (s >= p->end) return sdx__json_err(p, "bad number");
    if (*s == '0') s++;
    else if (*s >= '1' && *s <= '9') while (s < p->end && *s >= '0' && *s <= '9') s++;
    else return sdx__json_err(p, "bad number");
    if (s < p->end && *s == '.') {
        s++;
        if (s >= p->end || *s < '0' || *s > '9') return sdx__json_err(p, "bad fraction");
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < p->end && (*s == '+' || *s == '-')) s++;
        if (s >= p->end || *s < '0' || *s > '9') return sdx__json_err(p, "bad exponent");
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    /* the source text may not outlive the document: keep a copy */
    n = (size_t)(s - p->s);
    copy = (char *)sdx__json_alloc(p->doc, n + 1);
    if (!copy) return sdx__nomem(p->doc->ctx, "JSON number", n + 1);
    memcpy(copy, p->s, n);
    copy[n] = 0;
    v->type = SDX__JSON_NUMBER;
    v->raw = copy;
    v->raw_len = n;
    v->num = sdx__json_strtod(copy);
    p->s = s;
    return SDX_OK;
}

static int sdx__json_literal(sdx__json_parser *p, const char *word, sdx__json_type type, sdx__json *v) {
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0) return sdx__json_err(p, "unexpected character");
    p->s += n;
    v->type = type;
    return SDX_OK;
}

static void sdx__json_append(sdx__json *parent, sdx__json *v) {
    v->parent = parent;
    if (parent->last) parent->last->next = v; else parent->child = v;
    parent->last = v;
    parent->len++;
}

/* Iterative parse: containers are linked to their parent as they open, so
 * the "stack" is the parent chain and depth costs no C stack. */
static int sdx__json_parse_named(sdx_ctx *ctx, const char *text, size_t len, const char *what, sdx__json_doc *doc) {
    sdx__json_parser p;
    sdx__json *cur = NULL;   /* innermost open container */
    int depth = 0, rc;
    memset(doc, 0, sizeof *doc);
    doc->ctx = ctx;
    p.s = p.start = text;
    p.end = text + len;
    p.doc = doc;
    p.what = what ? what : "JSON";
    for (;;) {
        sdx__json *v;
        const char *key = NULL;
        size_t key_len = 0;
        sdx__json_ws(&p);
        if (cur) {
            /* inside a container: close it, or expect a separator */
            char close = cur->type == SDX__JSON_ARRAY ? ']' : '}';
            if (p.s < p.end && *p.s == close) {
                p.s++;
                depth--;
                cur = cur->parent;
                if (!cur) break;
                continue;
            }
            if (cur->len > 0) {
                if (p.s >= p.end || *p.s != ',') { rc = sdx__json_err(&p, "expected ',' or closing bracket"); goto fail; }
                p.s++;
                sdx__json_ws(&p);
            }
            if (cur->type == SDX__JSON_OBJECT) {
                if (p.s >= p.end || *p.s != '"') { rc = sdx__json_err(&p, "expected member name"); goto fail; }
                if ((rc = sdx__json_string(&p, &key, &key_len)) != SDX_OK) goto fail;
                sdx__json_ws(&p);
                if (p.s >= p.end || *p.s != ':') { rc = sdx__json_err(&p, "expected ':'"); goto fail; }
                p.s++;
                sdx__json_ws(&p);
            }
        }
        if (p.s >= p.end) { rc = sdx__json_err(&p, "unexpected end of input"); goto fail; }
        v = (sdx__json *)sdx__json_alloc(doc, sizeof *v);
        if (!v) { rc = sdx__nomem(ctx, "JSON node", sizeof *v); goto fail; }
        memset(v, 0, sizeof *v);
        v->key = key;
        v->key_len = key_len;
        switch (*p.s) {
        case '{': case '[':
            if (++depth > SDX__JSON_MAX_DEPTH) { rc = sdx__json_err(&p, "nesting too deep"); goto fail; }
            v->type = *p.s == '{' ? SDX__JSON_OBJECT : SDX__JSON_ARRAY;
            p.s++;
            rc = SDX_OK;
            break;
        case '"':
            v->type = SDX__JSON_STRING;
            rc = sdx__json_string(&p, &v->str, &v->len);
            break;
        case 't': rc = sdx__json_literal(&p, "true", SDX__JSON_TRUE, v); break;
        case 'f': rc = sdx__json_literal(&p, "false", SDX__JSON_FALSE, v); break;
        case 'n': rc = sdx__json_literal(&p, "null", SDX__JSON_NULL, v); break;
        default: rc = sdx__json_number(&p, v); break;
        }
        if (rc != SDX_OK) goto fail;
        if (cur) sdx__json_append(cur, v); else doc->root = v;
        if (v->type == SDX__JSON_OBJECT || v->type == SDX__JSON_ARRAY) cur = v;
        else if (!cur) break;
    }
    sdx__json_ws(&p);
    if (p.s != p.end) { rc = sdx__json_err(&p, "trailing characters after the value"); goto fail; }
    return SDX_OK;
fail:
    sdx__json_free(doc);
    return rc;
}

static int sdx__json_parse(sdx_ctx *ctx, const char *text, size_t len, sdx__json_doc *doc) {
    return sdx__json_parse_named(ctx, text, len, "JSON", doc);
}

/* Member `key` of an object, or NULL. */
static const sdx__json *sdx__json_get(const sdx__json *obj, const char *key) {
    size_t n = strlen(key);
    if (!obj || obj->type != SDX__JSON_OBJECT) return NULL;
    for (const sdx__json *c = obj->child; c; c = c->next)
        if (c->key_len == n && memcmp(c->key, key, n) == 0) return c;
    return NULL;
}

/* Element i of an array, or NULL. */
static const sdx__json *sdx__json_at(const sdx__json *arr, size_t i) {
    const sdx__json *c;
    if (!arr || arr->type != SDX__JSON_ARRAY) return NULL;
    for (c = arr->child; c && i; c = c->next) i--;
    return c;
}

/* A non-negative integer written without fraction or exponent, exactly
 * (doubles lose precision above 2^53). */
static int sdx__json_uint64(const sdx__json *v, uint64_t *out) {
    uint64_t x = 0;
    if (!v || v->type != SDX__JSON_NUMBER || v->raw_len == 0 || v->raw[0] == '-') return 0;
    for (size_t i = 0; i < v->raw_len; i++) {
        unsigned d = (unsigned)(v->raw[i] - '0');
        if (d > 9) return 0;
        if (x > (UINT64_MAX - d) / 10) return 0;
        x = x * 10 + d;
    }
    *out = x;
    return 1;
}

/* Reads a whole file into memory (NUL-terminated). For data files and
 * tests, not checkpoints. */
static int sdx__read_file(sdx_ctx *ctx, const char *path, char **out, size_t *out_len, size_t max_len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (!f) return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        size_t got;
        if (cap - len < 65536) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb;
            if (ncap > max_len + 65536) ncap = max_len + 65536;
            if (ncap <= cap) { fclose(f); sdx__free(ctx, buf); return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: larger than %zu bytes", path, max_len); }
            nb = (char *)sdx__realloc(ctx, buf, ncap + 1);
            if (!nb) { fclose(f); sdx__free(ctx, buf); return sdx__nomem(ctx, path, ncap + 1); }
            buf = nb;
            cap = ncap;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
        if (len > max_len) { fclose(f); sdx__free(ctx, buf); return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: larger than %zu bytes", path, max_len); }
    }
    if (ferror(f)) { fclose(f); sdx__free(ctx, buf); return sdx__fail(ctx, SDX_ERR_IO, "%s: read error", path); }
    fclose(f);
    if (!buf) { buf = (char *)sdx__malloc(ctx, 1); if (!buf) return sdx__nomem(ctx, path, 1); }
    buf[len] = 0;
    *out = buf;
    *out_len = len;
    return SDX_OK;
}

/* Parses a JSON file; everything the tree points at lives in the doc. */
static int sdx__json_parse_file(sdx_ctx *ctx, const char *path, sdx__json_doc *doc) {
    char *text = NULL;      /* initialised: gcc -O1 cannot see that failures return early */
    size_t len = 0;
    int rc = sdx__read_file(ctx, path, &text, &len, (size_t)1 << 30);
    if (rc != SDX_OK) return rc;
    rc = sdx__json_parse_named(ctx, text, len, path, doc);
    sdx__free(ctx, text);
    return rc;
}

/* ---- src/core/safetensors.c ---- */

/* ===================================================================== */
/*  Load: safetensors files and model weight sets                         */
/* ===================================================================== */
/* Layout: u64 little-endian header length N, N bytes of JSON, then the
 * data section. The header maps names to {dtype, shape, data_offsets}
 * relative to the data section; "__metadata__" maps strings to strings.
 * The rules enforced here are the reference implementation's: the header
 * fits the file, dtypes are known, each byte span is exactly shape x
 * dtype size, spans tile the data section with no overlap, gap or
 * trailing bytes, and names are unique. */

#define SDX__ST_MAX_HEADER ((uint64_t)100 << 20)   /* 100 MB, as the reference */

typedef struct sdx__st_entry {
    sdx_tensor t;
    uint64_t begin, end;
} sdx__st_entry;

struct sdx_st {
    sdx_ctx *ctx;
    char *path;
    const unsigned char *base;   /* whole file image */
    size_t size;
    int mapped;                  /* base came from mmap */
    const unsigned char *data;   /* data section */
    size_t data_size;
    sdx__json_doc doc;           /* owns names and metadata strings */
    sdx__st_entry *entries;
    int n;
    int *table;                  /* open-addressing name -> index (+1) */
    size_t table_size;
    const char **meta_kv;        /* key, value, key, value, ... */
    int n_meta;
    void **copies;               /* aligned copies of misaligned tensors */
    int n_copies;
};

static int sdx__dtype_from_name(const char *s, sdx_dtype *out) {
    for (int i = 0; i < SDX_DTYPE_COUNT; i++)
        if (!strcmp(s, sdx_dtype_name((sdx_dtype)i))) { *out = (sdx_dtype)i; return 1; }
    return 0;
}

static uint64_t sdx__hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;          /* FNV-1a */
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ull; }
    return h;
}

static int sdx__st_lookup(const sdx_st *st, const char *name) {
    size_t mask, i;
    if (!st->table_size) return -1;
    mask = st->table_size - 1;
    for (i = (size_t)sdx__hash_str(name) & mask;; i = (i + 1) & mask) {
        int slot = st->table[i];
        if (!slot) return -1;
        if (!strcmp(st->entries[slot - 1].t.name, name)) return slot - 1;
    }
}

static int sdx__st_cmp_begin(const void *a, const void *b) {
    const sdx__st_entry *x = *(const sdx__st_entry *const *)a, *y = *(const sdx__st_entry *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

static int sdx__st_parse_entry(sdx_st *st, const sdx__json *v, sdx__st_entry *e) {
    const char *name = v->key;
    const sdx__json *dt = sdx__json_get(v, "dtype"), *shape = sdx__json_get(v, "shape");
    const sdx__json *offs = sdx__json_get(v, "data_offsets"), *c;
    size_t bytes;
    int i = 0;
    if (v->type != SDX__JSON_OBJECT)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': header entry is not an object", st->path, name);
    if (!dt || dt->type != SDX__JSON_STRING || !shape || shape->type != SDX__JSON_ARRAY ||
        !offs || offs->type != SDX__JSON_ARRAY)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': needs string 'dtype', array 'shape' and array 'data_offsets'", st->path, name);
    if (!sdx__dtype_from_name(dt->str, &e->t.dtype))
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': unsupported dtype '%s' (supported: F32, F16, BF16, F64, I32, I64)", st->path, name, dt->str);
    if (shape->len > SDX_MAX_DIMS)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': %zu dimensions (at most %d supported)", st->path, name, shape->len, SDX_MAX_DIMS);
    for (c = shape->child; c; c = c->next, i++) {
        uint64_t d;
        if (!sdx__json_uint64(c, &d) || d > (uint64_t)INT64_MAX)
            return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': shape entry %d is not a non-negative integer", st->path, name, i);
        e->t.shape[i] = (int64_t)d;
    }
    e->t.ndim = i;
    if (offs->len != 2 || !sdx__json_uint64(offs->child, &e->begin) || !sdx__json_uint64(offs->child->next, &e->end))
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets must be two non-negative integers", st->path, name);
    if (e->begin > e->end)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin", st->path, name,
                         (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > st->data_size)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] outside the data section (%zu bytes)",
                         st->path, name, (unsigned long long)e->begin, (unsigned long long)e->end, st->data_size);
    if (!sdx__shape_bytes(e->t.dtype, e->t.ndim, e->t.shape, &bytes))
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': shape size overflows", st->path, name);
    if ((uint64_t)bytes != e->end - e->begin) {
        char sh[128];
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': shape %s x %s needs %zu bytes, data_offsets span %llu",
                         st->path, name, sdx_shape_str(&e->t, sh, sizeof sh), sdx_dtype_name(e->t.dtype), bytes,
                         (unsigned long long)(e->end - e->begin));
    }
    e->t.name = name;
    e->t.data = (void *)(st->data + e->begin);
    return SDX_OK;
}

/* Data section tiling: sorted by begin, each span starts where the last
 * ended, the last ends at the end of the file. */
static int sdx__st_check_spans(sdx_st *st) {
    sdx__st_entry **order;
    uint64_t pos = 0;
    int rc = SDX_OK;
    if (st->n == 0) {
        if (st->data_size) return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: %zu bytes of data but no tensors", st->path, st->data_size);
        return SDX_OK;
    }
    order = (sdx__st_entry **)sdx__malloc(st->ctx, sizeof *order * (size_t)st->n);
    if (!order) return sdx__nomem(st->ctx, "safetensors index", sizeof *order * (size_t)st->n);
    for (int i = 0; i < st->n; i++) order[i] = &st->entries[i];
    qsort(order, (size_t)st->n, sizeof *order, sdx__st_cmp_begin);
    for (int i = 0; i < st->n && rc == SDX_OK; i++) {
        sdx__st_entry *e = order[i];
        if (e->begin < pos)
            rc = sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] overlap tensor '%s'", st->path,
                           e->t.name, (unsigned long long)e->begin, (unsigned long long)e->end, order[i - 1]->t.name);
        else if (e->begin > pos)
            rc = sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets start at %llu, leaving a gap after byte %llu",
                           st->path, e->t.name, (unsigned long long)e->begin, (unsigned long long)pos);
        pos = e->end;
    }
    if (rc == SDX_OK && pos != st->data_size)
        rc = sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: data section is %zu bytes but tensors cover %llu (truncated or trailing bytes)",
                       st->path, st->data_size, (unsigned long long)pos);
    sdx__free(st->ctx, order);
    return rc;
}

static int sdx__st_build_table(sdx_st *st) {
    size_t size = 16;
    while (size < (size_t)st->n * 2) size *= 2;
    st->table = (int *)sdx__calloc(st->ctx, size, sizeof(int));
    if (!st->table) return sdx__nomem(st->ctx, "safetensors name table", size * sizeof(int));
    st->table_size = size;
    for (int i = 0; i < st->n; i++) {
        size_t mask = size - 1, j;
        for (j = (size_t)sdx__hash_str(st->entries[i].t.name) & mask; st->table[j]; j = (j + 1) & mask)
            if (!strcmp(st->entries[st->table[j] - 1].t.name, st->entries[i].t.name))
                return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s' appears twice in the header", st->path, st->entries[i].t.name);
        st->table[j] = i + 1;
    }
    return SDX_OK;
}

/* Tensors whose data is not aligned for their dtype get an aligned copy
 * (the format does not promise alignment; kernels load elements
 * directly). */
static int sdx__st_align(sdx_st *st) {
    for (int i = 0; i < st->n; i++) {
        sdx_tensor *t = &st->entries[i].t;
        size_t a = sdx_dtype_size(t->dtype), bytes = sdx_tensor_nbytes(t);
        void *copy, **list;
        if (((uintptr_t)t->data & (a - 1)) == 0) continue;
        copy = sdx__malloc(st->ctx, bytes);
        list = (void **)sdx__realloc(st->ctx, st->copies, sizeof(void *) * (size_t)(st->n_copies + 1));
        if (!copy || !list) {
            sdx__free(st->ctx, copy);
            if (list) st->copies = list;
            return sdx__nomem(st->ctx, t->name, bytes);
        }
        st->copies = list;
        memcpy(copy, t->data, bytes);
        st->copies[st->n_copies++] = copy;
        t->data = copy;
    }
    return SDX_OK;
}

/* Compared with its length: a key "__metadata__\u0000x" is not the table. */
static int sdx__st_is_metadata(const sdx__json *v) {
    return v->key_len == 12 && !memcmp(v->key, "__metadata__", 12);
}

static int sdx__st_parse_header(sdx_st *st) {
    uint64_t hlen = 0;
    const sdx__json *root, *v;
    int rc, n = 0;
    if (st->size < 8)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: %zu bytes is too short for a safetensors file (needs an 8-byte header length)", st->path, st->size);
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | st->base[i];
    if (hlen > SDX__ST_MAX_HEADER)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: header length %llu exceeds the %llu-byte limit", st->path,
                         (unsigned long long)hlen, (unsigned long long)SDX__ST_MAX_HEADER);
    if (hlen > st->size - 8)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: header length %llu runs past the end of the %zu-byte file", st->path,
                         (unsigned long long)hlen, st->size);
    st->data = st->base + 8 + hlen;
    st->data_size = st->size - 8 - (size_t)hlen;
    if ((rc = sdx__json_parse_named(st->ctx, (const char *)st->base + 8, (size_t)hlen, st->path, &st->doc)) != SDX_OK) return rc;
    root = st->doc.root;
    if (root->type != SDX__JSON_OBJECT)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: header is not a JSON object", st->path);
    for (v = root->child; v; v = v->next) n += !sdx__st_is_metadata(v);
    st->entries = (sdx__st_entry *)sdx__calloc(st->ctx, (size_t)(n ? n : 1), sizeof *st->entries);
    if (!st->entries) return sdx__nomem(st->ctx, "safetensors entries", sizeof *st->entries * (size_t)n);
    for (v = root->child; v; v = v->next) {
        if (sdx__st_is_metadata(v)) {
            const sdx__json *m;
            if (v->type != SDX__JSON_OBJECT)
                return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: __metadata__ is not an object", st->path);
            if (st->meta_kv)    /* a second table would overrun the first's count */
                return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: __metadata__ appears twice in the header", st->path);
            st->meta_kv = (const char **)sdx__calloc(st->ctx, v->len * 2 + 1, sizeof(char *));
            if (!st->meta_kv) return sdx__nomem(st->ctx, "safetensors metadata", v->len * 2 * sizeof(char *));
            for (m = v->child; m; m = m->next) {
                if (m->type != SDX__JSON_STRING)
                    return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: __metadata__ value '%s' is not a string", st->path, m->key);
                st->meta_kv[2 * st->n_meta] = m->key;
                st->meta_kv[2 * st->n_meta + 1] = m->str;
                st->n_meta++;
            }
            continue;
        }
        if (v->key_len == 0 || strlen(v->key) != v->key_len)
            return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor name is empty or contains a NUL byte", st->path);
        if ((rc = sdx__st_parse_entry(st, v, &st->entries[st->n])) != SDX_OK) return rc;
        st->n++;
    }
    if ((rc = sdx__st_build_table(st)) != SDX_OK) return rc;
    if ((rc = sdx__st_check_spans(st)) != SDX_OK) return rc;
    return sdx__st_align(st);
}

SDX_API void sdx_st_close(sdx_st *st) {
    sdx_ctx *ctx;
    if (!st) return;
    ctx = st->ctx;
    for (int i = 0; i < st->n_copies; i++) sdx__free(ctx, st->copies[i]);
    sdx__free(ctx, st->copies);
    if (st->mapped && st->base) munmap((void *)st->base, st->size);
    sdx__json_free(&st->doc);
    sdx__free(ctx, st->entries);
    sdx__free(ctx, st->table);
    sdx__free(ctx, (void *)st->meta_kv);
    sdx__free(ctx, st->path);
    sdx__free(ctx, st);
}

static int sdx__st_new(sdx_ctx *ctx, const char *name, sdx_st **out) {
    sdx_st *st = (sdx_st *)sdx__calloc(ctx, 1, sizeof *st);
    *out = NULL;
    if (!st) return sdx__nomem(ctx, "safetensors file", sizeof *st);
    st->ctx = ctx;
    st->doc.ctx = ctx;
    if (!name) name = "(memory)";
    st->path = sdx__strdup(ctx, name);
    if (!st->path) { sdx__free(ctx, st); return sdx__nomem(ctx, "path", strlen(name) + 1); }
    *out = st;
    return SDX_OK;
}

SDX_API int sdx_st_open_memory(sdx_ctx *ctx, const void *data, size_t size, const char *name, sdx_st **out) {
    sdx_st *st;
    int rc;
    if (!out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open_memory: out is NULL");
    *out = NULL;
    if (!data && size) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open_memory: data is NULL");
    if ((rc = sdx__st_new(ctx, name, &st)) != SDX_OK) return rc;
    st->base = (const unsigned char *)data;
    st->size = size;
    if ((rc = sdx__st_parse_header(st)) != SDX_OK) { sdx_st_close(st); return rc; }
    *out = st;
    return SDX_OK;
}

SDX_API int sdx_st_open(sdx_ctx *ctx, const char *path, sdx_st **out) {
    struct stat sb;
    sdx_st *st;
    int fd, rc;
    if (!out || !path) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open: path and out are required");
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is then
     * rejected as not a regular file */
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &sb) != 0) { close(fd); return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot stat: %s", path, strerror(errno)); }
    if (!S_ISREG(sb.st_mode)) { close(fd); return sdx__fail(ctx, SDX_ERR_IO, "%s: not a regular file", path); }
    if ((rc = sdx__st_new(ctx, path, &st)) != SDX_OK) { close(fd); return rc; }
    st->size = (size_t)sb.st_size;
    if (st->size > 0) {
        void *m = mmap(NULL, st->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            close(fd);
            sdx_st_close(st);
            return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot mmap %lld bytes: %s", path, (long long)sb.st_size, strerror(errno));
        }
        st->base = (const unsigned char *)m;
        st->mapped = 1;
    }
    close(fd);
    if ((rc = sdx__st_parse_header(st)) != SDX_OK) { sdx_st_close(st); return rc; }
    *out = st;
    return SDX_OK;
}

SDX_API const char *sdx_st_path(const sdx_st *st) { return st ? st->path : ""; }
SDX_API int sdx_st_count(const sdx_st *st) { return st ? st->n : 0; }
SDX_API const sdx_tensor *sdx_st_get(const sdx_st *st, int i) {
    return st && i >= 0 && i < st->n ? &st->entries[i].t : NULL;
}
SDX_API const sdx_tensor *sdx_st_find(const sdx_st *st, const char *name) {
    int i = st && name ? sdx__st_lookup(st, name) : -1;
    return i >= 0 ? &st->entries[i].t : NULL;
}
SDX_API int sdx_st_meta_count(const sdx_st *st) { return st ? st->n_meta : 0; }
SDX_API int sdx_st_meta_at(const sdx_st *st, int i, const char **key, const char **value) {
    if (!st || i < 0 || i >= st->n_meta) return SDX_ERR_INVALID_ARG;
    if (key) *key = st->meta_kv[2 * i];
    if (value) *value = st->meta_kv[2 * i + 1];
    return SDX_OK;
}
SDX_API const char *sdx_st_meta(const sdx_st *st, const char *key) {
    for (int i = 0; st && i < st->n_meta; i++)
        if (!strcmp(st->meta_kv[2 * i], key)) return st->meta_kv[2 * i + 1];
    return NULL;
}

SDX_API int sdx_st_read_f32(sdx_ctx *ctx, const sdx_st *st, const char *name, sdx_tensor *out) {
    const sdx_tensor *t = sdx_st_find(st, name);
    int rc;
    memset(out, 0, sizeof *out);
    if (!t) return sdx__fail(ctx, SDX_ERR_MODEL, "%s: no tensor '%s'", st ? st->path : "?", name);
    if ((rc = sdx_tensor_alloc(ctx, out, SDX_F32, t->ndim, t->shape)) != SDX_OK) return rc;
    sdx__load_f32(t->data, t->dtype, 0, sdx_tensor_numel(t), (float *)out->data);
    out->name = t->name;
    return SDX_OK;
}

/* ---- writing ---------------------------------------------------------- */

typedef struct sdx__buf { sdx_ctx *ctx; char *p; size_t len, cap; int failed; } sdx__buf;

static void sdx__buf_put(sdx__buf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 256;
        char *np;
        while (cap - b->len < n + 1) cap *= 2;
        np = (char *)sdx__realloc(b->ctx, b->p, cap);
        if (!np) { b->failed = 1; return; }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void sdx__buf_str(sdx__buf *b, const char *s) { sdx__buf_put(b, s, strlen(s)); }

static SDX__PRINTF(2, 3) void sdx__buf_fmt(sdx__buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sdx__buf_put(b, tmp, (size_t)SDX__MIN(n, (int)sizeof tmp - 1));
}

static void sdx__buf_json_string(sdx__buf *b, const char *s) {
    sdx__buf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { char e[2] = { '\\', (char)c }; sdx__buf_put(b, e, 2); }
        else if (c < 0x20) sdx__buf_fmt(b, "\\u%04x", c);
        else sdx__buf_put(b, (const char *)&c, 1);
    }
    sdx__buf_put(b, "\"", 1);
}

static int sdx__write_all(int fd, const void *data, size_t n) {
    const char *p = (const char *)data;
    while (n) {
        ssize_t w = write(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0) { if (errno == EINTR) continue; return 0; }
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

SDX_API int sdx_st_write(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors,
                         const char *const *meta, int n_meta) {
    sdx__buf h;
    uint64_t offset = 0;
    char *tmp;
    int fd, ok = 1, err;
    unsigned char len8[8];
    if (!path || (n_tensors && !tensors) || n_tensors < 0 || n_meta < 0 || (n_meta && !meta))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_write: bad arguments");
    for (int i = 0; i < 2 * n_meta; i++)
        if (!meta[i]) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: metadata %s %d is NULL", path, i % 2 ? "value" : "key", i / 2);
    memset(&h, 0, sizeof h);
    h.ctx = ctx;
    sdx__buf_str(&h, "{");
    if (n_meta > 0) {
        sdx__buf_str(&h, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i) sdx__buf_str(&h, ",");
            sdx__buf_json_string(&h, meta[2 * i]);
            sdx__buf_str(&h, ":");
            sdx__buf_json_string(&h, meta[2 * i + 1]);
        }
        sdx__buf_str(&h, "}");
    }
    for (int i = 0; i < n_tensors; i++) {
        const sdx_tensor *t = &tensors[i];
        size_t bytes;
        if (!t->name || !*t->name || !sdx__shape_bytes(t->dtype, t->ndim, t->shape, &bytes)) {
            sdx__free(ctx, h.p);
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: tensor %d has no name or an invalid shape/dtype", path, i);
        }
        if (n_meta > 0 || i) sdx__buf_str(&h, ",");
        sdx__buf_json_string(&h, t->name);
        sdx__buf_fmt(&h, ":{\"dtype\":\"%s\",\"shape\":[", sdx_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) sdx__buf_fmt(&h, d ? ",%lld" : "%lld", (long long)t->shape[d]);
        sdx__buf_fmt(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset, (unsigned long long)(offset + bytes));
        offset += bytes;
    }
    sdx__buf_str(&h, "}");
    while (!h.failed && h.len % 8) sdx__buf_str(&h, " ");   /* keeps the data section 8-byte aligned */
    if (h.failed) { sdx__free(ctx, h.p); return sdx__nomem(ctx, "safetensors header", h.cap); }
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)h.len >> (8 * i));

    tmp = (char *)sdx__malloc(ctx, strlen(path) + 16);
    if (!tmp) { sdx__free(ctx, h.p); return sdx__nomem(ctx, "path", strlen(path) + 16); }
    sprintf(tmp, "%s.tmp.XXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = sdx__fail(ctx, SDX_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        sdx__free(ctx, tmp);
        sdx__free(ctx, h.p);
        return rc;
    }
    ok = sdx__write_all(fd, len8, 8) && sdx__write_all(fd, h.p, h.len);
    for (int i = 0; ok && i < n_tensors; i++) ok = sdx__write_all(fd, tensors[i].data, sdx_tensor_nbytes(&tensors[i]));
    err = ok ? 0 : errno;     /* before fchmod/close can overwrite it */
    if (fchmod(fd, 0644) != 0) { /* best effort: mkstemp creates 0600 */ }
    if (close(fd) != 0 && ok) ok = 0, err = errno;
    if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
    sdx__free(ctx, h.p);
    if (!ok) {
        int rc = sdx__fail(ctx, SDX_ERR_IO, "%s: write failed: %s", path, strerror(err));
        unlink(tmp);
        sdx__free(ctx, tmp);
        return rc;
    }
    sdx__free(ctx, tmp);
    return SDX_OK;
}

/* ---- NaN/Inf scan ------------------------------------------------------ */

SDX_API int sdx_st_scan_nonfinite(sdx_ctx *ctx, const sdx_st *st) {
    int bad = 0;
    char names[512];
    size_t used = 0;
    if (!st) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_scan_nonfinite: no file");
    names[0] = 0;
    for (int i = 0; i < st->n; i++) {
        const sdx_tensor *t = &st->entries[i].t;
        sdx__stats s;
        if (t->dtype != SDX_F32 && t->dtype != SDX_F16 && t->dtype != SDX_BF16 && t->dtype != SDX_F64) continue;
        if (t->dtype == SDX_F64) {
            int64_t n = sdx_tensor_numel(t), nan = 0, inf = 0;
            for (int64_t j = 0; j < n; j++) {
                double v;
                memcpy(&v, (const char *)t->data + 8 * j, 8);
                nan += isnan(v) != 0;
                inf += isinf(v) != 0;
            }
            if (!nan && !inf) continue;
            s.nan = nan; s.inf = inf; s.count = n;
        } else {
            if (!sdx__has_nonfinite(t)) continue;
            sdx__tensor_stats(t, &s);
        }
        bad++;
        sdx__log(ctx, SDX_LOG_WARN, "%s: tensor '%s' has %lld NaN and %lld Inf of %lld values", st->path, t->name,
                 (long long)s.nan, (long long)s.inf, (long long)s.count);
        if (used < sizeof names - 1)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s' (%lld NaN, %lld Inf)", bad > 1 ? ", " : "",
                                     t->name, (long long)s.nan, (long long)s.inf);
    }
    if (bad) sdx__fail(ctx, SDX_ERR_NONFINITE, "%s: %d tensor(s) contain NaN/Inf: %s", st->path, bad, names);
    return bad;
}

/* ---- weight sets: one model part's view of a checkpoint ---------------- */

/* Each fetched weight gets a slot that the model keeps a pointer to: on
 * the CPU a view of the mapped file, or an owned copy in the policy's
 * weight type; on a device backend a device copy in that storage dtype,
 * uploaded once. A slot can be rewritten in place and reset to the file
 * (sdx__wslot_set/_reset: how patches such as LoRA reach the weights). */
typedef struct sdx__wslot {
    sdx_tensor t;             /* what the model computes with */
    const sdx_tensor *file;   /* the checkpoint's tensor */
    int owned;                /* t.data is ours: host memory, or device memory when t.device */
} sdx__wslot;

typedef struct sdx__wset {
    sdx_ctx *ctx;
    const sdx_st *st;
    char prefix[128];
    sdx__part part;
    int weight_type;        /* SDX_AUTO or a float dtype */
    sdx__wslot **slots;     /* one per fetched name, stable addresses */
    int n_slots;
    int rc;                 /* code of the last failed fetch */
} sdx__wset;

#define SDX__S(...) ((const int64_t[]){ __VA_ARGS__ })

static void sdx__wset_init(sdx__wset *w, sdx_ctx *ctx, const sdx_st *st, const char *prefix, sdx__part part, int weight_type) {
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->st = st;
    snprintf(w->prefix, sizeof w->prefix, "%s", prefix ? prefix : "");
    w->part = part;
    w->weight_type = weight_type;
}

static void sdx__wslot_drop(sdx__wset *w, sdx__wslot *sl) {
    if (!sl->owned) return;
    if (sl->t.device) sdx__dev_free(w->ctx, sl->t.data, sdx_tensor_nbytes(&sl->t));
    else sdx__free(w->ctx, sl->t.data);
    sl->owned = 0;
}

static void sdx__wset_free(sdx__wset *w) {
    for (int i = 0; i < w->n_slots; i++) {
        sdx__wslot_drop(w, w->slots[i]);
        sdx__free(w->ctx, w->slots[i]);
    }
    sdx__free(w->ctx, w->slots);
    w->slots = NULL;
    w->n_slots = 0;
}

static const sdx_tensor *sdx__wfind(const sdx__wset *w, char *name, size_t size, const char *fmt, va_list ap) {
    int n = snprintf(name, size, "%s", w->prefix);
    if (n < 0 || (size_t)n >= size) return NULL;
    vsnprintf(name + n, size - (size_t)n, fmt, ap);
    return sdx_st_find(w->st, name);
}

static SDX__PRINTF(2, 3) int sdx__whas(const sdx__wset *w, const char *fmt, ...) {
    char name[512];
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wfind(w, name, sizeof name, fmt, ap);
    va_end(ap);
    return t != NULL;
}

/* Writes `values` (f32; NULL: the file tensor's own values) into the
 * slot in its storage dtype, rounding once. The slot's buffer is made on
 * first need and then rewritten in place, so its address stays. A slot
 * that can view the file directly (host, same dtype) does so when reset. */
static int sdx__wslot_write(sdx__wset *w, sdx__wslot *sl, const float *values) {
    sdx_ctx *ctx = w->ctx;
    int64_t n = sdx_tensor_numel(&sl->t);
    size_t bytes = sdx_tensor_nbytes(&sl->t);
    int rc = SDX_OK;
    if (!values && !sl->t.device && sl->t.dtype == sl->file->dtype) {
        sdx__wslot_drop(w, sl);
        sl->t.data = sl->file->data;
        return SDX_OK;
    }
    if (!sl->owned) {
        sl->t.data = sl->t.device ? sdx__dev_alloc(ctx, bytes) : sdx__malloc(ctx, bytes);
        if (!sl->t.data) { sl->t.data = sl->file->data; return sdx__nomem(ctx, sl->file->name, bytes); }
        sl->owned = 1;
    }
    if (!values && sl->t.dtype == sl->file->dtype) {     /* upload the file bytes as they are */
        return ctx->be.upload(ctx->be.user, sl->t.data, sl->file->data, bytes);
    }
    {
        void *host = sl->t.device ? sdx__malloc(ctx, bytes) : sl->t.data;
        float buf[1024];
        if (!host) return sdx__nomem(ctx, "weight staging", bytes);
        for (int64_t i = 0; i < n; i += 1024) {
            int64_t m = SDX__MIN((int64_t)1024, n - i);
            if (values) memcpy(buf, values + i, (size_t)m * sizeof(float));
            else sdx__load_f32(sl->file->data, sl->file->dtype, i, m, buf);
            /* weights convert with plain IEEE rounding: a weight beyond f16
             * range is a property of the checkpoint, reported by the scan */
            if (sl->t.dtype == SDX_F16) sdx_f32_to_f16_n(buf, (uint16_t *)host + i, (size_t)m);
            else sdx__store_f32(host, sl->t.dtype, i, m, buf);
        }
        if (sl->t.device) {
            rc = ctx->be.upload(ctx->be.user, sl->t.data, host, bytes);
            sdx__free(ctx, host);
        }
    }
    return rc;
}

/* The slot of a fetched weight by its full key, in the backend's memory
 * (device 1) or the host's (0), or NULL. */
static sdx__wslot *sdx__wset_find_on(const sdx__wset *w, const char *key, int device) {
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i]->t.device == device && strcmp(w->slots[i]->file->name, key) == 0) return w->slots[i];
    return NULL;
}

static sdx__wslot *sdx__wset_find(const sdx__wset *w, const char *key) {
    return sdx__wset_find_on(w, key, sdx__on_device(w->ctx));
}

static int sdx__wslot_set(sdx__wset *w, sdx__wslot *sl, const float *values) { return sdx__wslot_write(w, sl, values); }
static int sdx__wslot_reset(sdx__wset *w, sdx__wslot *sl) { return sdx__wslot_write(w, sl, NULL); }

/* The slot for a file tensor: found, or made and filled (uploaded or
 * converted when the backend or the policy asks). */
static const sdx_tensor *sdx__wslot_get(sdx__wset *w, const sdx_tensor *t, int host) {
    int device = host ? 0 : sdx__on_device(w->ctx);
    sdx__wslot *sl = sdx__wset_find_on(w, t->name, device), **list;
    int rc;
    if (sl) return &sl->t;
    sl = (sdx__wslot *)sdx__calloc(w->ctx, 1, sizeof *sl);
    list = (sdx__wslot **)sdx__realloc(w->ctx, w->slots, sizeof *list * (size_t)(w->n_slots + 1));
    if (list) w->slots = list;
    if (!sl || !list) {
        sdx__free(w->ctx, sl);
        w->rc = sdx__nomem(w->ctx, t->name, sizeof *sl);
        return NULL;
    }
    sl->t = *t;
    sl->t.owned = 0;
    sl->t.device = device;
    sl->file = t;
    if (w->weight_type != SDX_AUTO) sl->t.dtype = (sdx_dtype)w->weight_type;
    if ((rc = sdx__wslot_reset(w, sl)) != SDX_OK) {
        sdx__wslot_drop(w, sl);
        sdx__free(w->ctx, sl);
        w->rc = rc;
        return NULL;
    }
    w->slots[w->n_slots++] = sl;
    return &sl->t;
}

static const sdx_tensor *sdx__wget_v(sdx__wset *w, int host, int ndim, const int64_t *shape, const char *fmt, va_list ap) {
    char name[512];
    const sdx_tensor *t = sdx__wfind(w, name, sizeof name, fmt, ap);
    if (!t) {
        w->rc = sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: missing tensor '%s' (%s)", sdx_st_path(w->st), name, sdx__part_name(w->part));
        return NULL;
    }
    if (t->dtype != SDX_F32 && t->dtype != SDX_F16 && t->dtype != SDX_BF16) {
        w->rc = sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: tensor '%s' has dtype %s; weights must be F32, F16 or BF16",
                  sdx_st_path(w->st), name, sdx_dtype_name(t->dtype));
        return NULL;
    }
    if (ndim >= 0) {
        int ok = t->ndim == ndim;
        for (int i = 0; ok && i < ndim; i++) ok = shape[i] < 0 || shape[i] == t->shape[i];
        if (!ok) {
            char want[160], found[160];
            size_t used = 0;
            used += (size_t)snprintf(want, sizeof want, "[");
            for (int i = 0; i < ndim && used < sizeof want; i++)
                used += shape[i] < 0 ? (size_t)snprintf(want + used, sizeof want - used, i ? ", *" : "*")
                                     : (size_t)snprintf(want + used, sizeof want - used, i ? ", %lld" : "%lld", (long long)shape[i]);
            if (used < sizeof want) snprintf(want + used, sizeof want - used, "]");
            w->rc = sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: tensor '%s': expected shape %s, found %s", sdx_st_path(w->st), name, want,
                      sdx_shape_str(t, found, sizeof found));
            return NULL;
        }
    }
    return sdx__wslot_get(w, t, host);
}

/* The result code for a fetch that returned NULL: SDX_ERR_MODEL for a
 * missing or mis-shaped tensor, SDX_ERR_NOMEM when a conversion failed. */
static int sdx__werr(const sdx__wset *w) { return w->rc ? w->rc : SDX_ERR_MODEL; }

/* See docs/INTERNALS.md: NULL with the error set when missing/mis-shaped. */
static SDX__PRINTF(4, 5) const sdx_tensor *sdx__wget(sdx__wset *w, int ndim, const int64_t *shape, const char *fmt, ...) {
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wget_v(w, 0, ndim, shape, fmt, ap);
    va_end(ap);
    return t;
}

static SDX__PRINTF(2, 3) const sdx_tensor *sdx__wget_any(sdx__wset *w, const char *fmt, ...) {
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wget_v(w, 0, -1, NULL, fmt, ap);
    va_end(ap);
    return t;
}

/* A weight that host code reads (embedding tables, small projections):
 * a host slot even when the backend is a device, same shape rules. */
static SDX__PRINTF(4, 5) const sdx_tensor *sdx__wget_host(sdx__wset *w, int ndim, const int64_t *shape, const char *fmt, ...) {
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wget_v(w, 1, ndim, shape, fmt, ap);
    va_end(ap);
    return t;
}

/* ---- src/core/inflate.c ---- */

/* ===================================================================== */
/*  Inflate: DEFLATE (RFC 1951) and gzip (RFC 1952) decoding              */
/* ===================================================================== */
/* Only used to read OpenAI's bpe_simple_vocab_16e6.txt.gz, but written for
 * untrusted input: every read is bounds-checked, the output never exceeds
 * a caller-given limit, Huffman tables are validated (over-subscribed code
 * lengths are rejected), back-references must stay inside the output, and
 * gzip's CRC-32 and ISIZE are checked. No recursion. */

typedef struct sdx__bits {
    const uint8_t *src;
    size_t n, pos;        /* next unread byte */
    uint64_t buf;         /* bits not yet consumed, LSB first */
    int count;            /* number of valid bits in buf */
} sdx__bits;

/* Fetches `need` (<= 32) bits, LSB first; -1 when the input ends first. */
static int64_t sdx__bits_get(sdx__bits *b, int need) {
    uint32_t v;
    while (b->count < need) {
        if (b->pos >= b->n) return -1;
        b->buf |= (uint64_t)b->src[b->pos++] << b->count;
        b->count += 8;
    }
    v = (uint32_t)(b->buf & ((need == 32) ? 0xffffffffu : ((1u << need) - 1u)));
    b->buf >>= need;
    b->count -= need;
    return v;
}

/* Canonical Huffman code: count[len] codes of each length, symbols in
 * canonical order. Decoding walks the lengths, so no table can be built
 * from lengths that lie. */
#define SDX__HUFF_MAXBITS 15
#define SDX__HUFF_FAST 9       /* codes up to this long decode by one lookup */
typedef struct sdx__huff {
    uint16_t count[SDX__HUFF_MAXBITS + 1];
    uint16_t symbol[288];
    uint16_t fast[1 << SDX__HUFF_FAST];   /* (length << 9) | symbol, by the next 9 input bits; 0 = longer code */
} sdx__huff;

/* 0 on success, -1 if the lengths over-subscribe the code space. An
 * incomplete code is accepted (RFC 1951 allows one-code distance trees);
 * decoding an unassigned code then fails cleanly. */
static int sdx__huff_build(sdx__huff *h, const uint8_t *lengths, int n) {
    uint16_t offs[SDX__HUFF_MAXBITS + 1];
    int left = 1;
    memset(h->count, 0, sizeof h->count);
    for (int i = 0; i < n; i++) h->count[lengths[i]]++;
    for (int len = 1; len <= SDX__HUFF_MAXBITS; len++) {
        left = (left << 1) - h->count[len];
        if (left < 0) return -1;
    }
    offs[1] = 0;
    for (int len = 1; len < SDX__HUFF_MAXBITS; len++) offs[len + 1] = (uint16_t)(offs[len] + h->count[len]);
    for (int i = 0; i < n; i++)
        if (lengths[i]) h->symbol[offs[lengths[i]]++] = (uint16_t)i;
    /* canonical codes are MSB-first but read LSB-first: index by the
     * bit-reversed code, every completion of the remaining bits */
    memset(h->fast, 0, sizeof h->fast);
    {
        int code = 0, idx = 0;
        for (int len = 1; len <= SDX__HUFF_FAST; len++, code <<= 1)
            for (int k = 0; k < h->count[len]; k++, code++) {
                int rev = 0, sym = h->symbol[idx++];
                for (int bit = 0; bit < len; bit++) rev |= ((code >> bit) & 1) << (len - 1 - bit);
                for (int i = rev; i < (1 << SDX__HUFF_FAST); i += 1 << len) h->fast[i] = (uint16_t)((len << 9) | sym);
            }
    }
    return 0;
}

/* Next symbol, -1 on end of input, -2 on a code not in the table. Works
 * on a local copy of the bit buffer, refilled once per symbol. */
static int sdx__huff_decode(sdx__bits *b, const sdx__huff *h) {
    int code = 0, first = 0, index = 0;
    uint64_t buf;
    while (b->count <= 56 && b->pos < b->n) {
        b->buf |= (uint64_t)b->src[b->pos++] << b->count;
        b->count += 8;
    }
    buf = b->buf;
    {
        int e = h->fast[buf & ((1u << SDX__HUFF_FAST) - 1)];
        if (e && (e >> 9) <= b->count) {
            b->buf >>= e >> 9;
            b->count -= e >> 9;
            return e & 511;
        }
    }
    for (int len = 1; len <= SDX__HUFF_MAXBITS; len++) {
        int cnt = h->count[len];
        if (len > b->count) return -1;
        code |= (int)(buf & 1);
        buf >>= 1;
        if (code - first < cnt) {
            b->buf = buf;
            b->count -= len;
            return h->symbol[index + code - first];
        }
        index += cnt;
        first = (first + cnt) << 1;
        code <<= 1;
    }
    return -2;
}

typedef struct sdx__outbuf {
    sdx_ctx *ctx;
    uint8_t *data;
    size_t len, cap, max;
    size_t start;         /* where the current gzip member's output begins */
} sdx__outbuf;

static int sdx__outbuf_reserve(sdx__outbuf *o, size_t extra, const char *what) {
    size_t need, ncap;
    uint8_t *nd;
    if (extra > o->max - o->len)
        return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: decompressed data exceeds the limit of %zu bytes", what, o->max);
    need = o->len + extra;
    /* allocate on first use even for 0 bytes, so o->data is never NULL
     * once a block has been decoded (NULL + 0 is undefined) */
    if (o->data && need <= o->cap) return SDX_OK;
    ncap = o->cap ? o->cap : 65536;
    while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > o->max) ncap = o->max;
    nd = (uint8_t *)sdx__realloc(o->ctx, o->data, ncap);
    if (!nd) return sdx__nomem(o->ctx, what, ncap);
    o->data = nd;
    o->cap = ncap;
    return SDX_OK;
}

static const uint16_t sdx__len_base[29] = {
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t sdx__len_extra[29] = {
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t sdx__dist_base[30] = {
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t sdx__dist_extra[30] = {
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

#define SDX__INFLATE_TRUNC(what) sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: compressed data ends early (truncated file)", what)

/* Decodes one compressed block's symbols until end-of-block (256). */
static int sdx__inflate_codes(sdx__bits *b, sdx__outbuf *o, const sdx__huff *lit, const sdx__huff *dist,
                              const char *what) {
    for (;;) {
        int sym = sdx__huff_decode(b, lit), rc;
        if (sym == -1) return SDX__INFLATE_TRUNC(what);
        if (sym < 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid literal/length code", what);
        if (sym < 256) {
            if ((rc = sdx__outbuf_reserve(o, 1, what)) != SDX_OK) return rc;
            o->data[o->len++] = (uint8_t)sym;
        } else if (sym == 256) {
            return SDX_OK;
        } else {
            int64_t e1, e2;
            size_t len, d;
            int ds;
            sym -= 257;
            if (sym >= 29) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid length symbol %d", what, sym + 257);
            if ((e1 = sdx__bits_get(b, sdx__len_extra[sym])) < 0) return SDX__INFLATE_TRUNC(what);
            len = sdx__len_base[sym] + (size_t)e1;
            ds = sdx__huff_decode(b, dist);
            if (ds == -1) return SDX__INFLATE_TRUNC(what);
            if (ds < 0 || ds >= 30) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid distance code", what);
            if ((e2 = sdx__bits_get(b, sdx__dist_extra[ds])) < 0) return SDX__INFLATE_TRUNC(what);
            d = sdx__dist_base[ds] + (size_t)e2;
            /* each gzip member is an independent stream */
            if (d > o->len - o->start)
                return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: back-reference distance %zu before the start of the output (%zu bytes)",
                                 what, d, o->len - o->start);
            if ((rc = sdx__outbuf_reserve(o, len, what)) != SDX_OK) return rc;
            /* byte by byte: the source may overlap what is being written */
            for (size_t i = 0; i < len; i++, o->len++) o->data[o->len] = o->data[o->len - d];
        }
    }
}

static int sdx__inflate_stored(sdx__bits *b, sdx__outbuf *o, const char *what) {
    size_t len, nlen;
    int rc;
    b->buf = 0;          /* skip to the byte boundary; whole buffered bytes are returned below */
    b->pos -= (size_t)(b->count / 8);
    b->count = 0;
    if (b->n - b->pos < 4) return SDX__INFLATE_TRUNC(what);
    len = (size_t)b->src[b->pos] | ((size_t)b->src[b->pos + 1] << 8);
    nlen = (size_t)b->src[b->pos + 2] | ((size_t)b->src[b->pos + 3] << 8);
    b->pos += 4;
    if (len != (~nlen & 0xffff)) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: stored block length check failed", what);
    if (b->n - b->pos < len) return SDX__INFLATE_TRUNC(what);
    if ((rc = sdx__outbuf_reserve(o, len, what)) != SDX_OK) return rc;
    memcpy(o->data + o->len, b->src + b->pos, len);
    o->len += len;
    b->pos += len;
    return SDX_OK;
}

static int sdx__inflate_fixed_tables(sdx__huff *lit, sdx__huff *dist) {
    uint8_t lengths[288];
    int i;
    for (i = 0; i < 144; i++) lengths[i] = 8;
    for (; i < 256; i++) lengths[i] = 9;
    for (; i < 280; i++) lengths[i] = 7;
    for (; i < 288; i++) lengths[i] = 8;
    if (sdx__huff_build(lit, lengths, 288) != 0) return -1;
    for (i = 0; i < 30; i++) lengths[i] = 5;
    return sdx__huff_build(dist, lengths, 30);
}

/* Reads the code-length code and the literal/length and distance trees of
 * a dynamic block (RFC 1951 3.2.7). */
static int sdx__inflate_dynamic_tables(sdx__bits *b, sdx__outbuf *o, sdx__huff *lit, sdx__huff *dist,
                                       const char *what) {
    static const uint8_t order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
    uint8_t lengths[288 + 32];
    sdx__huff lencode;
    int64_t hlit = sdx__bits_get(b, 5), hdist = sdx__bits_get(b, 5), hclen = sdx__bits_get(b, 4);
    int nlen, ndist, i = 0;
    if (hlit < 0 || hdist < 0 || hclen < 0) return SDX__INFLATE_TRUNC(what);
    nlen = (int)hlit + 257;
    ndist = (int)hdist + 1;
    if (nlen > 286 || ndist > 30) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: bad dynamic block header", what);
    memset(lengths, 0, sizeof lengths);
    for (int k = 0; k < (int)hclen + 4; k++) {
        int64_t v = sdx__bits_get(b, 3);
        if (v < 0) return SDX__INFLATE_TRUNC(what);
        lengths[order[k]] = (uint8_t)v;
    }
    if (sdx__huff_build(&lencode, lengths, 19) != 0)
        return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid code-length code", what);
    memset(lengths, 0, sizeof lengths);
    while (i < nlen + ndist) {
        int sym = sdx__huff_decode(b, &lencode), repeat, value = 0;
        int64_t extra;
        if (sym == -1) return SDX__INFLATE_TRUNC(what);
        if (sym < 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid code-length symbol", what);
        if (sym < 16) { lengths[i++] = (uint8_t)sym; continue; }
        if (sym == 16) {
            if (i == 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: length repeat with no previous length", what);
            value = lengths[i - 1];
            extra = sdx__bits_get(b, 2); repeat = 3;
        } else if (sym == 17) {
            extra = sdx__bits_get(b, 3); repeat = 3;
        } else {
            extra = sdx__bits_get(b, 7); repeat = 11;
        }
        if (extra < 0) return SDX__INFLATE_TRUNC(what);
        repeat += (int)extra;
        if (i + repeat > nlen + ndist) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: code lengths overrun the table", what);
        while (repeat--) lengths[i++] = (uint8_t)value;
    }
    if (lengths[256] == 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: block has no end-of-block code", what);
    if (sdx__huff_build(lit, lengths, nlen) != 0 || sdx__huff_build(dist, lengths + nlen, ndist) != 0)
        return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: over-subscribed Huffman code", what);
    return SDX_OK;
}

/* Raw DEFLATE stream at src[0..n) appended to o; *used = bytes consumed. */
static int sdx__inflate_raw(sdx__outbuf *o, const uint8_t *src, size_t n, size_t *used, const char *what) {
    sdx__bits b;
    int last = 0, rc;
    sdx__huff *lit = (sdx__huff *)sdx__malloc(o->ctx, 2 * sizeof(sdx__huff)), *dist;
    if (!lit) return sdx__nomem(o->ctx, what, 2 * sizeof(sdx__huff));
    dist = lit + 1;
    memset(&b, 0, sizeof b);
    b.src = src;
    b.n = n;
    rc = SDX_OK;
    while (!last && rc == SDX_OK) {
        int64_t hdr = sdx__bits_get(&b, 3);
        if (hdr < 0) { rc = SDX__INFLATE_TRUNC(what); break; }
        last = (int)(hdr & 1);
        switch (hdr >> 1) {
        case 0: rc = sdx__inflate_stored(&b, o, what); break;
        case 1:
            if (sdx__inflate_fixed_tables(lit, dist) != 0) { rc = sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: internal table error", what); break; }
            rc = sdx__inflate_codes(&b, o, lit, dist, what);
            break;
        case 2:
            rc = sdx__inflate_dynamic_tables(&b, o, lit, dist, what);
            if (rc == SDX_OK) rc = sdx__inflate_codes(&b, o, lit, dist, what);
            break;
        default: rc = sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid block type 3", what); break;
        }
    }
    sdx__free(o->ctx, lit);
    *used = b.pos - (size_t)(b.count / 8);   /* unused whole bytes go back */
    return rc;
}

/* CRC-32 (IEEE, reflected 0xEDB88320), a byte at a time. The table is
 * built once per sdx__inflate call, not per gzip member: a file of many
 * empty members would otherwise cost 2k operations per 18 input bytes. */
static void sdx__crc32_table(uint32_t table[256]) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
        table[i] = c;
    }
}

static uint32_t sdx__crc32(const uint32_t table[256], uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = (crc >> 8) ^ table[(crc ^ p[i]) & 255];
    return ~crc;
}

static uint32_t sdx__le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Length of the gzip member header at src (RFC 1952 2.3), 0 if invalid. */
static size_t sdx__gzip_header(const uint8_t *src, size_t n) {
    size_t pos = 10;
    uint8_t flags;
    if (n < 18 || src[0] != 0x1f || src[1] != 0x8b || src[2] != 8) return 0;
    flags = src[3];
    if (flags & 0xe0) return 0;                       /* reserved bits */
    if (flags & 4) {                                  /* FEXTRA */
        size_t xlen;
        if (n - pos < 2) return 0;
        xlen = (size_t)src[pos] | ((size_t)src[pos + 1] << 8);
        pos += 2;
        if (n - pos < xlen) return 0;
        pos += xlen;
    }
    for (int field = 8; field <= 16; field <<= 1) {   /* FNAME, FCOMMENT: NUL-terminated */
        if (!(flags & field)) continue;
        while (pos < n && src[pos]) pos++;
        if (pos >= n) return 0;
        pos++;
    }
    if (flags & 2) pos += 2;                          /* FHCRC */
    return pos <= n ? pos : 0;
}

/* Decompresses src[0..n): a gzip file (magic 1f 8b; every member is
 * decoded and CRC-32/ISIZE checked) or else a raw DEFLATE stream. The two
 * cannot be confused: a DEFLATE stream starting with byte 0x1f would begin
 * with the reserved block type 3. The output is at most max_out bytes and
 * is NUL-terminated one byte past *out_len for convenience; free it with
 * sdx__free. This is the entry point fuzzers call. */
static int sdx__inflate(sdx_ctx *ctx, const uint8_t *src, size_t n, uint8_t **out, size_t *out_len, size_t max_out) {
    static const char what[] = "inflate";
    sdx__outbuf o;
    size_t pos = 0, used = 0;
    int rc = SDX_OK;
    *out = NULL;
    *out_len = 0;
    if (!src && n) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx__inflate: NULL input");
    memset(&o, 0, sizeof o);
    o.ctx = ctx;
    o.max = max_out;
    if (n >= 2 && src[0] == 0x1f && src[1] == 0x8b) {
        uint32_t crc_table[256];
        sdx__crc32_table(crc_table);
        while (rc == SDX_OK && pos < n) {
            size_t hdr = sdx__gzip_header(src + pos, n - pos), start = o.start = o.len;
            if (!hdr) { rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: invalid or truncated member header at byte %zu", pos); break; }
            pos += hdr;
            if ((rc = sdx__inflate_raw(&o, src + pos, n - pos, &used, "gzip")) != SDX_OK) break;
            pos += used;
            if (n - pos < 8) { rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: trailer missing (truncated file)"); break; }
            if (sdx__crc32(crc_table, 0, o.data ? o.data + start : NULL, o.len - start) != sdx__le32(src + pos))
                rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: CRC-32 mismatch (corrupt data)");
            else if ((uint32_t)(o.len - start) != sdx__le32(src + pos + 4))
                rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: ISIZE %u does not match the %zu decompressed bytes",
                               sdx__le32(src + pos + 4), o.len - start);
            pos += 8;
            while (pos < n && src[pos] == 0) pos++;   /* zero padding after the last member */
        }
    } else {
        rc = sdx__inflate_raw(&o, src, n, &used, what);
    }
    if (rc == SDX_OK) rc = sdx__outbuf_reserve(&o, 0, what);
    if (rc == SDX_OK && o.len == o.cap) {             /* room for the terminating NUL */
        uint8_t *nd = (uint8_t *)sdx__realloc(ctx, o.data, o.len + 1);
        if (!nd) rc = sdx__nomem(ctx, what, o.len + 1);
        else { o.data = nd; o.cap = o.len + 1; }
    }
    if (rc != SDX_OK) { sdx__free(ctx, o.data); return rc; }
    o.data[o.len] = 0;
    *out = o.data;
    *out_len = o.len;
    return SDX_OK;
}

/* ---- src/text/unicode_tables.c ---- */
/* ===================================================================== */
/*  Unicode and HTML tables for the CLIP text clean-up (generated)        */
/* ===================================================================== */
/* Generated by tools/gen_unicode.py from Python 3.11.7's standard
 * library: unicodedata (Unicode 14.0.0), html.entities.html5, codecs.
 * Do not edit; rerun the script instead. */

typedef struct sdx__urange { uint32_t lo, hi; } sdx__urange;
typedef struct sdx__umap { uint32_t from, to; } sdx__umap;
typedef struct sdx__umap2 { uint32_t from, to[2]; } sdx__umap2;   /* 0 = unused slot */
typedef struct sdx__uccc { uint32_t lo, hi; uint32_t ccc; } sdx__uccc;
typedef struct sdx__unfd { uint32_t cp, d[4]; } sdx__unfd;
typedef struct sdx__ucomp { uint32_t a, b, c; } sdx__ucomp;
typedef struct sdx__uentity { const char *name; uint32_t cp[3]; } sdx__uentity;

/* \p{L}: categories Lu Ll Lt Lm Lo */
static const sdx__urange sdx__uni_letter[648] = {
  {0x41,0x5A}, {0x61,0x7A}, {0xAA,0xAA}, {0xB5,0xB5}, {0xBA,0xBA}, {0xC0,0xD6}, {0xD8,0xF6},
  {0xF8,0x2C1}, {0x2C6,0x2D1}, {0x2E0,0x2E4}, {0x2EC,0x2EC}, {0x2EE,0x2EE}, {0x370,0x374},
  {0x376,0x377}, {0x37A,0x37D}, {0x37F,0x37F}, {0x386,0x386}, {0x388,0x38A}, {0x38C,0x38C},
  {0x38E,0x3A1}, {0x3A3,0x3F5}, {0x3F7,0x481}, {0x48A,0x52F}, {0x531,0x556}, {0x559,0x559},
  {0x560,0x588}, {0x5D0,0x5EA}, {0x5EF,0x5F2}, {0x620,0x64A}, {0x66E,0x66F}, {0x671,0x6D3},
  {0x6D5,0x6D5}, {0x6E5,0x6E6}, {0x6EE,0x6EF}, {0x6FA,0x6FC}, {0x6FF,0x6FF}, {0x710,0x710},
  {0x712,0x72F}, {0x74D,0x7A5}, {0x7B1,0x7B1}, {0x7CA,0x7EA}, {0x7F4,0x7F5}, {0x7FA,0x7FA},
  {0x800,0x815}, {0x81A,0x81A}, {0x824,0x824}, {0x828,0x828}, {0x840,0x858}, {0x860,0x86A},
  {0x870,0x887}, {0x889,0x88E}, {0x8A0,0x8C9}, {0x904,0x939}, {0x93D,0x93D}, {0x950,0x950},
  {0x958,0x961}, {0x971,0x980}, {0x985,0x98C}, {0x98F,0x990}, {0x993,0x9A8}, {0x9AA,0x9B0},
  {0x9B2,0x9B2}, {0x9B6,0x9B9}, {0x9BD,0x9BD}, {0x9CE,0x9CE}, {0x9DC,0x9DD}, {0x9DF,0x9E1},
  {0x9F0,0x9F1}, {0x9FC,0x9FC}, {0xA05,0xA0A}, {0xA0F,0xA10}, {0xA13,0xA28}, {0xA2A,0xA30},
  {0xA32,0xA33}, {0xA35,0xA36}, {0xA38,0xA39}, {0xA59,0xA5C}, {0xA5E,0xA5E}, {0xA72,0xA74},
  {0xA85,0xA8D}, {0xA8F,0xA91}, {0xA93,0xAA8}, {0xAAA,0xAB0}, {0xAB2,0xAB3}, {0xAB5,0xAB9},
  {0xABD,0xABD}, {0xAD0,0xAD0}, {0xAE0,0xAE1}, {0xAF9,0xAF9}, {0xB05,0xB0C}, {0xB0F,0xB10},
  {0xB13,0xB28}, {0xB2A,0xB30}, {0xB32,0xB33}, {0xB35,0xB39}, {0xB3D,0xB3D}, {0xB5C,0xB5D},
  {0xB5F,0xB61}, {0xB71,0xB71}, {0xB83,0xB83}, {0xB85,0xB8A}, {0xB8E,0xB90}, {0xB92,0xB95},
  {0xB99,0xB9A}, {0xB9C,0xB9C}, {0xB9E,0xB9F}, {0xBA3,0xBA4}, {0xBA8,0xBAA}, {0xBAE,0xBB9},
  {0xBD0,0xBD0}, {0xC05,0xC0C}, {0xC0E,0xC10}, {0xC12,0xC28}, {0xC2A,0xC39}, {0xC3D,0xC3D},
  {0xC58,0xC5A}, {0xC5D,0xC5D}, {0xC60,0xC61}, {0xC80,0xC80}, {0xC85,0xC8C}, {0xC8E,0xC90},
  {0xC92,0xCA8}, {0xCAA,0xCB3}, {0xCB5,0xCB9}, {0xCBD,0xCBD}, {0xCDD,0xCDE}, {0xCE0,0xCE1},
  {0xCF1,0xCF2}, {0xD04,0xD0C}, {0xD0E,0xD10}, {0xD12,0xD3A}, {0xD3D,0xD3D}, {0xD4E,0xD4E},
  {0xD54,0xD56}, {0xD5F,0xD61}, {0xD7A,0xD7F}, {0xD85,0xD96}, {0xD9A,0xDB1}, {0xDB3,0xDBB},
  {0xDBD,0xDBD}, {0xDC0,0xDC6}, {0xE01,0xE30}, {0xE32,0xE33}, {0xE40,0xE46}, {0xE81,0xE82},
  {0xE84,0xE84}, {0xE86,0xE8A}, {0xE8C,0xEA3}, {0xEA5,0xEA5}, {0xEA7,0xEB0}, {0xEB2,0xEB3},
  {0xEBD,0xEBD}, {0xEC0,0xEC4}, {0xEC6,0xEC6}, {0xEDC,0xEDF}, {0xF00,0xF00}, {0xF40,0xF47},
  {0xF49,0xF6C}, {0xF88,0xF8C}, {0x1000,0x102A}, {0x103F,0x103F}, {0x1050,0x1055}, {0x105A,0x105D},
  {0x1061,0x1061}, {0x1065,0x1066}, {0x106E,0x1070}, {0x1075,0x1081}, {0x108E,0x108E},
  {0x10A0,0x10C5}, {0x10C7,0x10C7}, {0x10CD,0x10CD}, {0x10D0,0x10FA}, {0x10FC,0x1248},
  {0x124A,0x124D}, {0x1250,0x1256}, {0x1258,0x1258}, {0x125A,0x125D}, {0x1260,0x1288},
  {0x128A,0x128D}, {0x1290,0x12B0}, {0x12B2,0x12B5}, {0x12B8,0x12BE}, {0x12C0,0x12C0},
  {0x12C2,0x12C5}, {0x12C8,0x12D6}, {0x12D8,0x1310}, {0x1312,0x1315}, {0x1318,0x135A},
  {0x1380,0x138F}, {0x13A0,0x13F5}, {0x13F8,0x13FD}, {0x1401,0x166C}, {0x166F,0x167F},
  {0x1681,0x169A}, {0x16A0,0x16EA}, {0x16F1,0x16F8}, {0x1700,0x1711}, {0x171F,0x1731},
  {0x1740,0x1751}, {0x1760,0x176C}, {0x176E,0x1770}, {0x1780,0x17B3}, {0x17D7,0x17D7},
  {0x17DC,0x17DC}, {0x1820,0x1878}, {0x1880,0x1884}, {0x1887,0x18A8}, {0x18AA,0x18AA},
  {0x18B0,0x18F5}, {0x1900,0x191E}, {0x1950,0x196D}, {0x1970,0x1974}, {0x1980,0x19AB},
  {0x19B0,0x19C9}, {0x1A00,0x1A16}, {0x1A20,0x1A54}, {0x1AA7,0x1AA7}, {0x1B05,0x1B33},
  {0x1B45,0x1B4C}, {0x1B83,0x1BA0}, {0x1BAE,0x1BAF}, {0x1BBA,0x1BE5}, {0x1C00,0x1C23},
  {0x1C4D,0x1C4F}, {0x1C5A,0x1C7D}, {0x1C80,0x1C88}, {0x1C90,0x1CBA}, {0x1CBD,0x1CBF},
  {0x1CE9,0x1CEC}, {0x1CEE,0x1CF3}, {0x1CF5,0x1CF6}, {0x1CFA,0x1CFA}, {0x1D00,0x1DBF},
  {0x1E00,0x1F15}, {0x1F18,0x1F1D}, {0x1F20,0x1F45}, {0x1F48,0x1F4D}, {0x1F50,0x1F57},
  {0x1F59,0x1F59}, {0x1F5B,0x1F5B}, {0x1F5D,0x1F5D}, {0x1F5F,0x1F7D}, {0x1F80,0x1FB4},
  {0x1FB6,0x1FBC}, {0x1FBE,0x1FBE}, {0x1FC2,0x1FC4}, {0x1FC6,0x1FCC}, {0x1FD0,0x1FD3},
  {0x1FD6,0x1FDB}, {0x1FE0,0x1FEC}, {0x1FF2,0x1FF4}, {0x1FF6,0x1FFC}, {0x2071,0x2071},
  {0x207F,0x207F}, {0x2090,0x209C}, {0x2102,0x2102}, {0x2107,0x2107}, {0x210A,0x2113},
  {0x2115,0x2115}, {0x2119,0x211D}, {0x2124,0x2124}, {0x2126,0x2126}, {0x2128,0x2128},
  {0x212A,0x212D}, {0x212F,0x2139}, {0x213C,0x213F}, {0x2145,0x2149}, {0x214E,0x214E},
  {0x2183,0x2184}, {0x2C00,0x2CE4}, {0x2CEB,0x2CEE}, {0x2CF2,0x2CF3}, {0x2D00,0x2D25},
  {0x2D27,0x2D27}, {0x2D2D,0x2D2D}, {0x2D30,0x2D67}, {0x2D6F,0x2D6F}, {0x2D80,0x2D96},
  {0x2DA0,0x2DA6}, {0x2DA8,0x2DAE}, {0x2DB0,0x2DB6}, {0x2DB8,0x2DBE}, {0x2DC0,0x2DC6},
  {0x2DC8,0x2DCE}, {0x2DD0,0x2DD6}, {0x2DD8,0x2DDE}, {0x2E2F,0x2E2F}, {0x3005,0x3006},
  {0x3031,0x3035}, {0x303B,0x303C}, {0x3041,0x3096}, {0x309D,0x309F}, {0x30A1,0x30FA},
  {0x30FC,0x30FF}, {0x3105,0x312F}, {0x3131,0x318E}, {0x31A0,0x31BF}, {0x31F0,0x31FF},
  {0x3400,0x4DBF}, {0x4E00,0xA48C}, {0xA4D0,0xA4FD}, {0xA500,0xA60C}, {0xA610,0xA61F},
  {0xA62A,0xA62B}, {0xA640,0xA66E}, {0xA67F,0xA69D}, {0xA6A0,0xA6E5}, {0xA717,0xA71F},
  {0xA722,0xA788}, {0xA78B,0xA7CA}, {0xA7D0,0xA7D1}, {0xA7D3,0xA7D3}, {0xA7D5,0xA7D9},
  {0xA7F2,0xA801}, {0xA803,0xA805}, {0xA807,0xA80A}, {0xA80C,0xA822}, {0xA840,0xA873},
  {0xA882,0xA8B3}, {0xA8F2,0xA8F7}, {0xA8FB,0xA8FB}, {0xA8FD,0xA8FE}, {0xA90A,0xA925},
  {0xA930,0xA946}, {0xA960,0xA97C}, {0xA984,0xA9B2}, {0xA9CF,0xA9CF}, {0xA9E0,0xA9E4},
  {0xA9E6,0xA9EF}, {0xA9FA,0xA9FE}, {0xAA00,0xAA28}, {0xAA40,0xAA42}, {0xAA44,0xAA4B},
  {0xAA60,0xAA76}, {0xAA7A,0xAA7A}, {0xAA7E,0xAAAF}, {0xAAB1,0xAAB1}, {0xAAB5,0xAAB6},
  {0xAAB9,0xAABD}, {0xAAC0,0xAAC0}, {0xAAC2,0xAAC2}, {0xAADB,0xAADD}, {0xAAE0,0xAAEA},
  {0xAAF2,0xAAF4}, {0xAB01,0xAB06}, {0xAB09,0xAB0E}, {0xAB11,0xAB16}, {0xAB20,0xAB26},
  {0xAB28,0xAB2E}, {0xAB30,0xAB5A}, {0xAB5C,0xAB69}, {0xAB70,0xABE2}, {0xAC00,0xD7A3},
  {0xD7B0,0xD7C6}, {0xD7CB,0xD7FB}, {0xF900,0xFA6D}, {0xFA70,0xFAD9}, {0xFB00,0xFB06},
  {0xFB13,0xFB17}, {0xFB1D,0xFB1D}, {0xFB1F,0xFB28}, {0xFB2A,0xFB36}, {0xFB38,0xFB3C},
  {0xFB3E,0xFB3E}, {0xFB40,0xFB41}, {0xFB43,0xFB44}, {0xFB46,0xFBB1}, {0xFBD3,0xFD3D},
  {0xFD50,0xFD8F}, {0xFD92,0xFDC7}, {0xFDF0,0xFDFB}, {0xFE70,0xFE74}, {0xFE76,0xFEFC},
  {0xFF21,0xFF3A}, {0xFF41,0xFF5A}, {0xFF66,0xFFBE}, {0xFFC2,0xFFC7}, {0xFFCA,0xFFCF},
  {0xFFD2,0xFFD7}, {0xFFDA,0xFFDC}, {0x10000,0x1000B}, {0x1000D,0x10026}, {0x10028,0x1003A},
  {0x1003C,0x1003D}, {0x1003F,0x1004D}, {0x10050,0x1005D}, {0x10080,0x100FA}, {0x10280,0x1029C},
  {0x102A0,0x102D0}, {0x10300,0x1031F}, {0x1032D,0x10340}, {0x10342,0x10349}, {0x10350,0x10375},
  {0x10380,0x1039D}, {0x103A0,0x103C3}, {0x103C8,0x103CF}, {0x10400,0x1049D}, {0x104B0,0x104D3},
  {0x104D8,0x104FB}, {0x10500,0x10527}, {0x10530,0x10563}, {0x10570,0x1057A}, {0x1057C,0x1058A},
  {0x1058C,0x10592}, {0x10594,0x10595}, {0x10597,0x105A1}, {0x105A3,0x105B1}, {0x105B3,0x105B9},
  {0x105BB,0x105BC}, {0x10600,0x10736}, {0x10740,0x10755}, {0x10760,0x10767}, {0x10780,0x10785},
  {0x10787,0x107B0}, {0x107B2,0x107BA}, {0x10800,0x10805}, {0x10808,0x10808}, {0x1080A,0x10835},
  {0x10837,0x10838}, {0x1083C,0x1083C}, {0x1083F,0x10855}, {0x10860,0x10876}, {0x10880,0x1089E},
  {0x108E0,0x108F2}, {0x108F4,0x108F5}, {0x10900,0x10915}, {0x10920,0x10939}, {0x10980,0x109B7},
  {0x109BE,0x109BF}, {0x10A00,0x10A00}, {0x10A10,0x10A13}, {0x10A15,0x10A17}, {0x10A19,0x10A35},
  {0x10A60,0x10A7C}, {0x10A80,0x10A9C}, {0x10AC0,0x10AC7}, {0x10AC9,0x10AE4}, {0x10B00,0x10B35},
  {0x10B40,0x10B55}, {0x10B60,0x10B72}, {0x10B80,0x10B91}, {0x10C00,0x10C48}, {0x10C80,0x10CB2},
  {0x10CC0,0x10CF2}, {0x10D00,0x10D23}, {0x10E80,0x10EA9}, {0x10EB0,0x10EB1}, {0x10F00,0x10F1C},
  {0x10F27,0x10F27}, {0x10F30,0x10F45}, {0x10F70,0x10F81}, {0x10FB0,0x10FC4}, {0x10FE0,0x10FF6},
  {0x11003,0x11037}, {0x11071,0x11072}, {0x11075,0x11075}, {0x11083,0x110AF}, {0x110D0,0x110E8},
  {0x11103,0x11126}, {0x11144,0x11144}, {0x11147,0x11147}, {0x11150,0x11172}, {0x11176,0x11176},
  {0x11183,0x111B2}, {0x111C1,0x111C4}, {0x111DA,0x111DA}, {0x111DC,0x111DC}, {0x11200,0x11211},
  {0x11213,0x1122B}, {0x11280,0x11286}, {0x11288,0x11288}, {0x1128A,0x1128D}, {0x1128F,0x1129D},
  {0x1129F,0x112A8}, {0x112B0,0x112DE}, {0x11305,0x1130C}, {0x1130F,0x11310}, {0x11313,0x11328},
  {0x1132A,0x11330}, {0x11332,0x11333}, {0x11335,0x11339}, {0x1133D,0x1133D}, {0x11350,0x11350},
  {0x1135D,0x11361}, {0x11400,0x11434}, {0x11447,0x1144A}, {0x1145F,0x11461}, {0x11480,0x114AF},
  {0x114C4,0x114C5}, {0x114C7,0x114C7}, {0x11580,0x115AE}, {0x115D8,0x115DB}, {0x11600,0x1162F},
  {0x11644,0x11644}, {0x11680,0x116AA}, {0x116B8,0x116B8}, {0x11700,0x1171A}, {0x11740,0x11746},
  {0x11800,0x1182B}, {0x118A0,0x118DF}, {0x118FF,0x11906}, {0x11909,0x11909}, {0x1190C,0x11913},
  {0x11915,0x11916}, {0x11918,0x1192F}, {0x1193F,0x1193F}, {0x11941,0x11941}, {0x119A0,0x119A7},
  {0x119AA,0x119D0}, {0x119E1,0x119E1}, {0x119E3,0x119E3}, {0x11A00,0x11A00}, {0x11A0B,0x11A32},
  {0x11A3A,0x11A3A}, {0x11A50,0x11A50}, {0x11A5C,0x11A89}, {0x11A9D,0x11A9D}, {0x11AB0,0x11AF8},
  {0x11C00,0x11C08}, {0x11C0A,0x11C2E}, {0x11C40,0x11C40}, {0x11C72,0x11C8F}, {0x11D00,0x11D06},
  {0x11D08,0x11D09}, {0x11D0B,0x11D30}, {0x11D46,0x11D46}, {0x11D60,0x11D65}, {0x11D67,0x11D68},
  {0x11D6A,0x11D89}, {0x11D98,0x11D98}, {0x11EE0,0x11EF2}, {0x11FB0,0x11FB0}, {0x12000,0x12399},
  {0x12480,0x12543}, {0x12F90,0x12FF0}, {0x13000,0x1342E}, {0x14400,0x14646}, {0x16800,0x16A38},
  {0x16A40,0x16A5E}, {0x16A70,0x16ABE}, {0x16AD0,0x16AED}, {0x16B00,0x16B2F}, {0x16B40,0x16B43},
  {0x16B63,0x16B77}, {0x16B7D,0x16B8F}, {0x16E40,0x16E7F}, {0x16F00,0x16F4A}, {0x16F50,0x16F50},
  {0x16F93,0x16F9F}, {0x16FE0,0x16FE1}, {0x16FE3,0x16FE3}, {0x17000,0x187F7}, {0x18800,0x18CD5},
  {0x18D00,0x18D08}, {0x1AFF0,0x1AFF3}, {0x1AFF5,0x1AFFB}, {0x1AFFD,0x1AFFE}, {0x1B000,0x1B122},
  {0x1B150,0x1B152}, {0x1B164,0x1B167}, {0x1B170,0x1B2FB}, {0x1BC00,0x1BC6A}, {0x1BC70,0x1BC7C},
  {0x1BC80,0x1BC88}, {0x1BC90,0x1BC99}, {0x1D400,0x1D454}, {0x1D456,0x1D49C}, {0x1D49E,0x1D49F},
  {0x1D4A2,0x1D4A2}, {0x1D4A5,0x1D4A6}, {0x1D4A9,0x1D4AC}, {0x1D4AE,0x1D4B9}, {0x1D4BB,0x1D4BB},
  {0x1D4BD,0x1D4C3}, {0x1D4C5,0x1D505}, {0x1D507,0x1D50A}, {0x1D50D,0x1D514}, {0x1D516,0x1D51C},
  {0x1D51E,0x1D539}, {0x1D53B,0x1D53E}, {0x1D540,0x1D544}, {0x1D546,0x1D546}, {0x1D54A,0x1D550},
  {0x1D552,0x1D6A5}, {0x1D6A8,0x1D6C0}, {0x1D6C2,0x1D6DA}, {0x1D6DC,0x1D6FA}, {0x1D6FC,0x1D714},
  {0x1D716,0x1D734}, {0x1D736,0x1D74E}, {0x1D750,0x1D76E}, {0x1D770,0x1D788}, {0x1D78A,0x1D7A8},
  {0x1D7AA,0x1D7C2}, {0x1D7C4,0x1D7CB}, {0x1DF00,0x1DF1E}, {0x1E100,0x1E12C}, {0x1E137,0x1E13D},
  {0x1E14E,0x1E14E}, {0x1E290,0x1E2AD}, {0x1E2C0,0x1E2EB}, {0x1E7E0,0x1E7E6}, {0x1E7E8,0x1E7EB},
  {0x1E7ED,0x1E7EE}, {0x1E7F0,0x1E7FE}, {0x1E800,0x1E8C4}, {0x1E900,0x1E943}, {0x1E94B,0x1E94B},
  {0x1EE00,0x1EE03}, {0x1EE05,0x1EE1F}, {0x1EE21,0x1EE22}, {0x1EE24,0x1EE24}, {0x1EE27,0x1EE27},
  {0x1EE29,0x1EE32}, {0x1EE34,0x1EE37}, {0x1EE39,0x1EE39}, {0x1EE3B,0x1EE3B}, {0x1EE42,0x1EE42},
  {0x1EE47,0x1EE47}, {0x1EE49,0x1EE49}, {0x1EE4B,0x1EE4B}, {0x1EE4D,0x1EE4F}, {0x1EE51,0x1EE52},
  {0x1EE54,0x1EE54}, {0x1EE57,0x1EE57}, {0x1EE59,0x1EE59}, {0x1EE5B,0x1EE5B}, {0x1EE5D,0x1EE5D},
  {0x1EE5F,0x1EE5F}, {0x1EE61,0x1EE62}, {0x1EE64,0x1EE64}, {0x1EE67,0x1EE6A}, {0x1EE6C,0x1EE72},
  {0x1EE74,0x1EE77}, {0x1EE79,0x1EE7C}, {0x1EE7E,0x1EE7E}, {0x1EE80,0x1EE89}, {0x1EE8B,0x1EE9B},
  {0x1EEA1,0x1EEA3}, {0x1EEA5,0x1EEA9}, {0x1EEAB,0x1EEBB}, {0x20000,0x2A6DF}, {0x2A700,0x2B738},
  {0x2B740,0x2B81D}, {0x2B820,0x2CEA1}, {0x2CEB0,0x2EBE0}, {0x2F800,0x2FA1D}, {0x30000,0x3134A},
};

/* \p{N}: categories Nd Nl No */
static const sdx__urange sdx__uni_number[134] = {
  {0x30,0x39}, {0xB2,0xB3}, {0xB9,0xB9}, {0xBC,0xBE}, {0x660,0x669}, {0x6F0,0x6F9}, {0x7C0,0x7C9},
  {0x966,0x96F}, {0x9E6,0x9EF}, {0x9F4,0x9F9}, {0xA66,0xA6F}, {0xAE6,0xAEF}, {0xB66,0xB6F},
  {0xB72,0xB77}, {0xBE6,0xBF2}, {0xC66,0xC6F}, {0xC78,0xC7E}, {0xCE6,0xCEF}, {0xD58,0xD5E},
  {0xD66,0xD78}, {0xDE6,0xDEF}, {0xE50,0xE59}, {0xED0,0xED9}, {0xF20,0xF33}, {0x1040,0x1049},
  {0x1090,0x1099}, {0x1369,0x137C}, {0x16EE,0x16F0}, {0x17E0,0x17E9}, {0x17F0,0x17F9},
  {0x1810,0x1819}, {0x1946,0x194F}, {0x19D0,0x19DA}, {0x1A80,0x1A89}, {0x1A90,0x1A99},
  {0x1B50,0x1B59}, {0x1BB0,0x1BB9}, {0x1C40,0x1C49}, {0x1C50,0x1C59}, {0x2070,0x2070},
  {0x2074,0x2079}, {0x2080,0x2089}, {0x2150,0x2182}, {0x2185,0x2189}, {0x2460,0x249B},
  {0x24EA,0x24FF}, {0x2776,0x2793}, {0x2CFD,0x2CFD}, {0x3007,0x3007}, {0x3021,0x3029},
  {0x3038,0x303A}, {0x3192,0x3195}, {0x3220,0x3229}, {0x3248,0x324F}, {0x3251,0x325F},
  {0x3280,0x3289}, {0x32B1,0x32BF}, {0xA620,0xA629}, {0xA6E6,0xA6EF}, {0xA830,0xA835},
  {0xA8D0,0xA8D9}, {0xA900,0xA909}, {0xA9D0,0xA9D9}, {0xA9F0,0xA9F9}, {0xAA50,0xAA59},
  {0xABF0,0xABF9}, {0xFF10,0xFF19}, {0x10107,0x10133}, {0x10140,0x10178}, {0x1018A,0x1018B},
  {0x102E1,0x102FB}, {0x10320,0x10323}, {0x10341,0x10341}, {0x1034A,0x1034A}, {0x103D1,0x103D5},
  {0x104A0,0x104A9}, {0x10858,0x1085F}, {0x10879,0x1087F}, {0x108A7,0x108AF}, {0x108FB,0x108FF},
  {0x10916,0x1091B}, {0x109BC,0x109BD}, {0x109C0,0x109CF}, {0x109D2,0x109FF}, {0x10A40,0x10A48},
  {0x10A7D,0x10A7E}, {0x10A9D,0x10A9F}, {0x10AEB,0x10AEF}, {0x10B58,0x10B5F}, {0x10B78,0x10B7F},
  {0x10BA9,0x10BAF}, {0x10CFA,0x10CFF}, {0x10D30,0x10D39}, {0x10E60,0x10E7E}, {0x10F1D,0x10F26},
  {0x10F51,0x10F54}, {0x10FC5,0x10FCB}, {0x11052,0x1106F}, {0x110F0,0x110F9}, {0x11136,0x1113F},
  {0x111D0,0x111D9}, {0x111E1,0x111F4}, {0x112F0,0x112F9}, {0x11450,0x11459}, {0x114D0,0x114D9},
  {0x11650,0x11659}, {0x116C0,0x116C9}, {0x11730,0x1173B}, {0x118E0,0x118F2}, {0x11950,0x11959},
  {0x11C50,0x11C6C}, {0x11D50,0x11D59}, {0x11DA0,0x11DA9}, {0x11FC0,0x11FD4}, {0x12400,0x1246E},
  {0x16A60,0x16A69}, {0x16AC0,0x16AC9}, {0x16B50,0x16B59}, {0x16B5B,0x16B61}, {0x16E80,0x16E96},
  {0x1D2E0,0x1D2F3}, {0x1D360,0x1D378}, {0x1D7CE,0x1D7FF}, {0x1E140,0x1E149}, {0x1E2F0,0x1E2F9},
  {0x1E8C7,0x1E8CF}, {0x1E950,0x1E959}, {0x1EC71,0x1ECAB}, {0x1ECAD,0x1ECAF}, {0x1ECB1,0x1ECB4},
  {0x1ED01,0x1ED2D}, {0x1ED2F,0x1ED3D}, {0x1F100,0x1F10C}, {0x1FBF0,0x1FBF9},
};

/* Unicode White_Space (the regex module's \s): str.isspace() minus U+001C..U+001F */
static const sdx__urange sdx__uni_white_space[10] = {
  {0x9,0xD}, {0x20,0x20}, {0x85,0x85}, {0xA0,0xA0}, {0x1680,0x1680}, {0x2000,0x200A},
  {0x2028,0x2029}, {0x202F,0x202F}, {0x205F,0x205F}, {0x3000,0x3000},
};

/* str.isspace() (Python re's \s and str.strip()) */
static const sdx__urange sdx__uni_py_space[10] = {
  {0x9,0xD}, {0x1C,0x20}, {0x85,0x85}, {0xA0,0xA0}, {0x1680,0x1680}, {0x2000,0x200A},
  {0x2028,0x2029}, {0x202F,0x202F}, {0x205F,0x205F}, {0x3000,0x3000},
};

/* str.isalnum() (Python re's \w without '_') */
static const sdx__urange sdx__uni_py_alnum[733] = {
  {0x30,0x39}, {0x41,0x5A}, {0x61,0x7A}, {0xAA,0xAA}, {0xB2,0xB3}, {0xB5,0xB5}, {0xB9,0xBA},
  {0xBC,0xBE}, {0xC0,0xD6}, {0xD8,0xF6}, {0xF8,0x2C1}, {0x2C6,0x2D1}, {0x2E0,0x2E4}, {0x2EC,0x2EC},
  {0x2EE,0x2EE}, {0x370,0x374}, {0x376,0x377}, {0x37A,0x37D}, {0x37F,0x37F}, {0x386,0x386},
  {0x388,0x38A}, {0x38C,0x38C}, {0x38E,0x3A1}, {0x3A3,0x3F5}, {0x3F7,0x481}, {0x48A,0x52F},
  {0x531,0x556}, {0x559,0x559}, {0x560,0x588}, {0x5D0,0x5EA}, {0x5EF,0x5F2}, {0x620,0x64A},
  {0x660,0x669}, {0x66E,0x66F}, {0x671,0x6D3}, {0x6D5,0x6D5}, {0x6E5,0x6E6}, {0x6EE,0x6FC},
  {0x6FF,0x6FF}, {0x710,0x710}, {0x712,0x72F}, {0x74D,0x7A5}, {0x7B1,0x7B1}, {0x7C0,0x7EA},
  {0x7F4,0x7F5}, {0x7FA,0x7FA}, {0x800,0x815}, {0x81A,0x81A}, {0x824,0x824}, {0x828,0x828},
  {0x840,0x858}, {0x860,0x86A}, {0x870,0x887}, {0x889,0x88E}, {0x8A0,0x8C9}, {0x904,0x939},
  {0x93D,0x93D}, {0x950,0x950}, {0x958,0x961}, {0x966,0x96F}, {0x971,0x980}, {0x985,0x98C},
  {0x98F,0x990}, {0x993,0x9A8}, {0x9AA,0x9B0}, {0x9B2,0x9B2}, {0x9B6,0x9B9}, {0x9BD,0x9BD},
  {0x9CE,0x9CE}, {0x9DC,0x9DD}, {0x9DF,0x9E1}, {0x9E6,0x9F1}, {0x9F4,0x9F9}, {0x9FC,0x9FC},
  {0xA05,0xA0A}, {0xA0F,0xA10}, {0xA13,0xA28}, {0xA2A,0xA30}, {0xA32,0xA33}, {0xA35,0xA36},
  {0xA38,0xA39}, {0xA59,0xA5C}, {0xA5E,0xA5E}, {0xA66,0xA6F}, {0xA72,0xA74}, {0xA85,0xA8D},
  {0xA8F,0xA91}, {0xA93,0xAA8}, {0xAAA,0xAB0}, {0xAB2,0xAB3}, {0xAB5,0xAB9}, {0xABD,0xABD},
  {0xAD0,0xAD0}, {0xAE0,0xAE1}, {0xAE6,0xAEF}, {0xAF9,0xAF9}, {0xB05,0xB0C}, {0xB0F,0xB10},
  {0xB13,0xB28}, {0xB2A,0xB30}, {0xB32,0xB33}, {0xB35,0xB39}, {0xB3D,0xB3D}, {0xB5C,0xB5D},
  {0xB5F,0xB61}, {0xB66,0xB6F}, {0xB71,0xB77}, {0xB83,0xB83}, {0xB85,0xB8A}, {0xB8E,0xB90},
  {0xB92,0xB95}, {0xB99,0xB9A}, {0xB9C,0xB9C}, {0xB9E,0xB9F}, {0xBA3,0xBA4}, {0xBA8,0xBAA},
  {0xBAE,0xBB9}, {0xBD0,0xBD0}, {0xBE6,0xBF2}, {0xC05,0xC0C}, {0xC0E,0xC10}, {0xC12,0xC28},
  {0xC2A,0xC39}, {0xC3D,0xC3D}, {0xC58,0xC5A}, {0xC5D,0xC5D}, {0xC60,0xC61}, {0xC66,0xC6F},
  {0xC78,0xC7E}, {0xC80,0xC80}, {0xC85,0xC8C}, {0xC8E,0xC90}, {0xC92,0xCA8}, {0xCAA,0xCB3},
  {0xCB5,0xCB9}, {0xCBD,0xCBD}, {0xCDD,0xCDE}, {0xCE0,0xCE1}, {0xCE6,0xCEF}, {0xCF1,0xCF2},
  {0xD04,0xD0C}, {0xD0E,0xD10}, {0xD12,0xD3A}, {0xD3D,0xD3D}, {0xD4E,0xD4E}, {0xD54,0xD56},
  {0xD58,0xD61}, {0xD66,0xD78}, {0xD7A,0xD7F}, {0xD85,0xD96}, {0xD9A,0xDB1}, {0xDB3,0xDBB},
  {0xDBD,0xDBD}, {0xDC0,0xDC6}, {0xDE6,0xDEF}, {0xE01,0xE30}, {0xE32,0xE33}, {0xE40,0xE46},
  {0xE50,0xE59}, {0xE81,0xE82}, {0xE84,0xE84}, {0xE86,0xE8A}, {0xE8C,0xEA3}, {0xEA5,0xEA5},
  {0xEA7,0xEB0}, {0xEB2,0xEB3}, {0xEBD,0xEBD}, {0xEC0,0xEC4}, {0xEC6,0xEC6}, {0xED0,0xED9},
  {0xEDC,0xEDF}, {0xF00,0xF00}, {0xF20,0xF33}, {0xF40,0xF47}, {0xF49,0xF6C}, {0xF88,0xF8C},
  {0x1000,0x102A}, {0x103F,0x1049}, {0x1050,0x1055}, {0x105A,0x105D}, {0x1061,0x1061},
  {0x1065,0x1066}, {0x106E,0x1070}, {0x1075,0x1081}, {0x108E,0x108E}, {0x1090,0x1099},
  {0x10A0,0x10C5}, {0x10C7,0x10C7}, {0x10CD,0x10CD}, {0x10D0,0x10FA}, {0x10FC,0x1248},
  {0x124A,0x124D}, {0x1250,0x1256}, {0x1258,0x1258}, {0x125A,0x125D}, {0x1260,0x1288},
  {0x128A,0x128D}, {0x1290,0x12B0}, {0x12B2,0x12B5}, {0x12B8,0x12BE}, {0x12C0,0x12C0},
  {0x12C2,0x12C5}, {0x12C8,0x12D6}, {0x12D8,0x1310}, {0x1312,0x1315}, {0x1318,0x135A},
  {0x1369,0x137C}, {0x1380,0x138F}, {0x13A0,0x13F5}, {0x13F8,0x13FD}, {0x1401,0x166C},
  {0x166F,0x167F}, {0x1681,0x169A}, {0x16A0,0x16EA}, {0x16EE,0x16F8}, {0x1700,0x1711},
  {0x171F,0x1731}, {0x1740,0x1751}, {0x1760,0x176C}, {0x176E,0x1770}, {0x1780,0x17B3},
  {0x17D7,0x17D7}, {0x17DC,0x17DC}, {0x17E0,0x17E9}, {0x17F0,0x17F9}, {0x1810,0x1819},
  {0x1820,0x1878}, {0x1880,0x1884}, {0x1887,0x18A8}, {0x18AA,0x18AA}, {0x18B0,0x18F5},
  {0x1900,0x191E}, {0x1946,0x196D}, {0x1970,0x1974}, {0x1980,0x19AB}, {0x19B0,0x19C9},
  {0x19D0,0x19DA}, {0x1A00,0x1A16}, {0x1A20,0x1A54}, {0x1A80,0x1A89}, {0x1A90,0x1A99},
  {0x1AA7,0x1AA7}, {0x1B05,0x1B33}, {0x1B45,0x1B4C}, {0x1B50,0x1B59}, {0x1B83,0x1BA0},
  {0x1BAE,0x1BE5}, {0x1C00,0x1C23}, {0x1C40,0x1C49}, {0x1C4D,0x1C7D}, {0x1C80,0x1C88},
  {0x1C90,0x1CBA}, {0x1CBD,0x1CBF}, {0x1CE9,0x1CEC}, {0x1CEE,0x1CF3}, {0x1CF5,0x1CF6},
  {0x1CFA,0x1CFA}, {0x1D00,0x1DBF}, {0x1E00,0x1F15}, {0x1F18,0x1F1D}, {0x1F20,0x1F45},
  {0x1F48,0x1F4D}, {0x1F50,0x1F57}, {0x1F59,0x1F59}, {0x1F5B,0x1F5B}, {0x1F5D,0x1F5D},
  {0x1F5F,0x1F7D}, {0x1F80,0x1FB4}, {0x1FB6,0x1FBC}, {0x1FBE,0x1FBE}, {0x1FC2,0x1FC4},
  {0x1FC6,0x1FCC}, {0x1FD0,0x1FD3}, {0x1FD6,0x1FDB}, {0x1FE0,0x1FEC}, {0x1FF2,0x1FF4},
  {0x1FF6,0x1FFC}, {0x2070,0x2071}, {0x2074,0x2079}, {0x207F,0x2089}, {0x2090,0x209C},
  {0x2102,0x2102}, {0x2107,0x2107}, {0x210A,0x2113}, {0x2115,0x2115}, {0x2119,0x211D},
  {0x2124,0x2124}, {0x2126,0x2126}, {0x2128,0x2128}, {0x212A,0x212D}, {0x212F,0x2139},
  {0x213C,0x213F}, {0x2145,0x2149}, {0x214E,0x214E}, {0x2150,0x2189}, {0x2460,0x249B},
  {0x24EA,0x24FF}, {0x2776,0x2793}, {0x2C00,0x2CE4}, {0x2CEB,0x2CEE}, {0x2CF2,0x2CF3},
  {0x2CFD,0x2CFD}, {0x2D00,0x2D25}, {0x2D27,0x2D27}, {0x2D2D,0x2D2D}, {0x2D30,0x2D67},
  {0x2D6F,0x2D6F}, {0x2D80,0x2D96}, {0x2DA0,0x2DA6}, {0x2DA8,0x2DAE}, {0x2DB0,0x2DB6},
  {0x2DB8,0x2DBE}, {0x2DC0,0x2DC6}, {0x2DC8,0x2DCE}, {0x2DD0,0x2DD6}, {0x2DD8,0x2DDE},
  {0x2E2F,0x2E2F}, {0x3005,0x3007}, {0x3021,0x3029}, {0x3031,0x3035}, {0x3038,0x303C},
  {0x3041,0x3096}, {0x309D,0x309F}, {0x30A1,0x30FA}, {0x30FC,0x30FF}, {0x3105,0x312F},
  {0x3131,0x318E}, {0x3192,0x3195}, {0x31A0,0x31BF}, {0x31F0,0x31FF}, {0x3220,0x3229},
  {0x3248,0x324F}, {0x3251,0x325F}, {0x3280,0x3289}, {0x32B1,0x32BF}, {0x3400,0x4DBF},
  {0x4E00,0xA48C}, {0xA4D0,0xA4FD}, {0xA500,0xA60C}, {0xA610,0xA62B}, {0xA640,0xA66E},
  {0xA67F,0xA69D}, {0xA6A0,0xA6EF}, {0xA717,0xA71F}, {0xA722,0xA788}, {0xA78B,0xA7CA},
  {0xA7D0,0xA7D1}, {0xA7D3,0xA7D3}, {0xA7D5,0xA7D9}, {0xA7F2,0xA801}, {0xA803,0xA805},
  {0xA807,0xA80A}, {0xA80C,0xA822}, {0xA830,0xA835}, {0xA840,0xA873}, {0xA882,0xA8B3},
  {0xA8D0,0xA8D9}, {0xA8F2,0xA8F7}, {0xA8FB,0xA8FB}, {0xA8FD,0xA8FE}, {0xA900,0xA925},
  {0xA930,0xA946}, {0xA960,0xA97C}, {0xA984,0xA9B2}, {0xA9CF,0xA9D9}, {0xA9E0,0xA9E4},
  {0xA9E6,0xA9FE}, {0xAA00,0xAA28}, {0xAA40,0xAA42}, {0xAA44,0xAA4B}, {0xAA50,0xAA59},
  {0xAA60,0xAA76}, {0xAA7A,0xAA7A}, {0xAA7E,0xAAAF}, {0xAAB1,0xAAB1}, {0xAAB5,0xAAB6},
  {0xAAB9,0xAABD}, {0xAAC0,0xAAC0}, {0xAAC2,0xAAC2}, {0xAADB,0xAADD}, {0xAAE0,0xAAEA},
  {0xAAF2,0xAAF4}, {0xAB01,0xAB06}, {0xAB09,0xAB0E}, {0xAB11,0xAB16}, {0xAB20,0xAB26},
  {0xAB28,0xAB2E}, {0xAB30,0xAB5A}, {0xAB5C,0xAB69}, {0xAB70,0xABE2}, {0xABF0,0xABF9},
  {0xAC00,0xD7A3}, {0xD7B0,0xD7C6}, {0xD7CB,0xD7FB}, {0xF900,0xFA6D}, {0xFA70,0xFAD9},
  {0xFB00,0xFB06}, {0xFB13,0xFB17}, {0xFB1D,0xFB1D}, {0xFB1F,0xFB28}, {0xFB2A,0xFB36},
  {0xFB38,0xFB3C}, {0xFB3E,0xFB3E}, {0xFB40,0xFB41}, {0xFB43,0xFB44}, {0xFB46,0xFBB1},
  {0xFBD3,0xFD3D}, {0xFD50,0xFD8F}, {0xFD92,0xFDC7}, {0xFDF0,0xFDFB}, {0xFE70,0xFE74},
  {0xFE76,0xFEFC}, {0xFF10,0xFF19}, {0xFF21,0xFF3A}, {0xFF41,0xFF5A}, {0xFF66,0xFFBE},
  {0xFFC2,0xFFC7}, {0xFFCA,0xFFCF}, {0xFFD2,0xFFD7}, {0xFFDA,0xFFDC}, {0x10000,0x1000B},
  {0x1000D,0x10026}, {0x10028,0x1003A}, {0x1003C,0x1003D}, {0x1003F,0x1004D}, {0x10050,0x1005D},
  {0x10080,0x100FA}, {0x10107,0x10133}, {0x10140,0x10178}, {0x1018A,0x1018B}, {0x10280,0x1029C},
  {0x102A0,0x102D0}, {0x102E1,0x102FB}, {0x10300,0x10323}, {0x1032D,0x1034A}, {0x10350,0x10375},
  {0x10380,0x1039D}, {0x103A0,0x103C3}, {0x103C8,0x103CF}, {0x103D1,0x103D5}, {0x10400,0x1049D},
  {0x104A0,0x104A9}, {0x104B0,0x104D3}, {0x104D8,0x104FB}, {0x10500,0x10527}, {0x10530,0x10563},
  {0x10570,0x1057A}, {0x1057C,0x1058A}, {0x1058C,0x10592}, {0x10594,0x10595}, {0x10597,0x105A1},
  {0x105A3,0x105B1}, {0x105B3,0x105B9}, {0x105BB,0x105BC}, {0x10600,0x10736}, {0x10740,0x10755},
  {0x10760,0x10767}, {0x10780,0x10785}, {0x10787,0x107B0}, {0x107B2,0x107BA}, {0x10800,0x10805},
  {0x10808,0x10808}, {0x1080A,0x10835}, {0x10837,0x10838}, {0x1083C,0x1083C}, {0x1083F,0x10855},
  {0x10858,0x10876}, {0x10879,0x1089E}, {0x108A7,0x108AF}, {0x108E0,0x108F2}, {0x108F4,0x108F5},
  {0x108FB,0x1091B}, {0x10920,0x10939}, {0x10980,0x109B7}, {0x109BC,0x109CF}, {0x109D2,0x10A00},
  {0x10A10,0x10A13}, {0x10A15,0x10A17}, {0x10A19,0x10A35}, {0x10A40,0x10A48}, {0x10A60,0x10A7E},
  {0x10A80,0x10A9F}, {0x10AC0,0x10AC7}, {0x10AC9,0x10AE4}, {0x10AEB,0x10AEF}, {0x10B00,0x10B35},
  {0x10B40,0x10B55}, {0x10B58,0x10B72}, {0x10B78,0x10B91}, {0x10BA9,0x10BAF}, {0x10C00,0x10C48},
  {0x10C80,0x10CB2}, {0x10CC0,0x10CF2}, {0x10CFA,0x10D23}, {0x10D30,0x10D39}, {0x10E60,0x10E7E},
  {0x10E80,0x10EA9}, {0x10EB0,0x10EB1}, {0x10F00,0x10F27}, {0x10F30,0x10F45}, {0x10F51,0x10F54},
  {0x10F70,0x10F81}, {0x10FB0,0x10FCB}, {0x10FE0,0x10FF6}, {0x11003,0x11037}, {0x11052,0x1106F},
  {0x11071,0x11072}, {0x11075,0x11075}, {0x11083,0x110AF}, {0x110D0,0x110E8}, {0x110F0,0x110F9},
  {0x11103,0x11126}, {0x11136,0x1113F}, {0x11144,0x11144}, {0x11147,0x11147}, {0x11150,0x11172},
  {0x11176,0x11176}, {0x11183,0x111B2}, {0x111C1,0x111C4}, {0x111D0,0x111DA}, {0x111DC,0x111DC},
  {0x111E1,0x111F4}, {0x11200,0x11211}, {0x11213,0x1122B}, {0x11280,0x11286}, {0x11288,0x11288},
  {0x1128A,0x1128D}, {0x1128F,0x1129D}, {0x1129F,0x112A8}, {0x112B0,0x112DE}, {0x112F0,0x112F9},
  {0x11305,0x1130C}, {0x1130F,0x11310}, {0x11313,0x11328}, {0x1132A,0x11330}, {0x11332,0x11333},
  {0x11335,0x11339}, {0x1133D,0x1133D}, {0x11350,0x11350}, {0x1135D,0x11361}, {0x11400,0x11434},
  {0x11447,0x1144A}, {0x11450,0x11459}, {0x1145F,0x11461}, {0x11480,0x114AF}, {0x114C4,0x114C5},
  {0x114C7,0x114C7}, {0x114D0,0x114D9}, {0x11580,0x115AE}, {0x115D8,0x115DB}, {0x11600,0x1162F},
  {0x11644,0x11644}, {0x11650,0x11659}, {0x11680,0x116AA}, {0x116B8,0x116B8}, {0x116C0,0x116C9},
  {0x11700,0x1171A}, {0x11730,0x1173B}, {0x11740,0x11746}, {0x11800,0x1182B}, {0x118A0,0x118F2},
  {0x118FF,0x11906}, {0x11909,0x11909}, {0x1190C,0x11913}, {0x11915,0x11916}, {0x11918,0x1192F},
  {0x1193F,0x1193F}, {0x11941,0x11941}, {0x11950,0x11959}, {0x119A0,0x119A7}, {0x119AA,0x119D0},
  {0x119E1,0x119E1}, {0x119E3,0x119E3}, {0x11A00,0x11A00}, {0x11A0B,0x11A32}, {0x11A3A,0x11A3A},
  {0x11A50,0x11A50}, {0x11A5C,0x11A89}, {0x11A9D,0x11A9D}, {0x11AB0,0x11AF8}, {0x11C00,0x11C08},
  {0x11C0A,0x11C2E}, {0x11C40,0x11C40}, {0x11C50,0x11C6C}, {0x11C72,0x11C8F}, {0x11D00,0x11D06},
  {0x11D08,0x11D09}, {0x11D0B,0x11D30}, {0x11D46,0x11D46}, {0x11D50,0x11D59}, {0x11D60,0x11D65},
  {0x11D67,0x11D68}, {0x11D6A,0x11D89}, {0x11D98,0x11D98}, {0x11DA0,0x11DA9}, {0x11EE0,0x11EF2},
  {0x11FB0,0x11FB0}, {0x11FC0,0x11FD4}, {0x12000,0x12399}, {0x12400,0x1246E}, {0x12480,0x12543},
  {0x12F90,0x12FF0}, {0x13000,0x1342E}, {0x14400,0x14646}, {0x16800,0x16A38}, {0x16A40,0x16A5E},
  {0x16A60,0x16A69}, {0x16A70,0x16ABE}, {0x16AC0,0x16AC9}, {0x16AD0,0x16AED}, {0x16B00,0x16B2F},
  {0x16B40,0x16B43}, {0x16B50,0x16B59}, {0x16B5B,0x16B61}, {0x16B63,0x16B77}, {0x16B7D,0x16B8F},
  {0x16E40,0x16E96}, {0x16F00,0x16F4A}, {0x16F50,0x16F50}, {0x16F93,0x16F9F}, {0x16FE0,0x16FE1},
  {0x16FE3,0x16FE3}, {0x17000,0x187F7}, {0x18800,0x18CD5}, {0x18D00,0x18D08}, {0x1AFF0,0x1AFF3},
  {0x1AFF5,0x1AFFB}, {0x1AFFD,0x1AFFE}, {0x1B000,0x1B122}, {0x1B150,0x1B152}, {0x1B164,0x1B167},
  {0x1B170,0x1B2FB}, {0x1BC00,0x1BC6A}, {0x1BC70,0x1BC7C}, {0x1BC80,0x1BC88}, {0x1BC90,0x1BC99},
  {0x1D2E0,0x1D2F3}, {0x1D360,0x1D378}, {0x1D400,0x1D454}, {0x1D456,0x1D49C}, {0x1D49E,0x1D49F},
  {0x1D4A2,0x1D4A2}, {0x1D4A5,0x1D4A6}, {0x1D4A9,0x1D4AC}, {0x1D4AE,0x1D4B9}, {0x1D4BB,0x1D4BB},
  {0x1D4BD,0x1D4C3}, {0x1D4C5,0x1D505}, {0x1D507,0x1D50A}, {0x1D50D,0x1D514}, {0x1D516,0x1D51C},
  {0x1D51E,0x1D539}, {0x1D53B,0x1D53E}, {0x1D540,0x1D544}, {0x1D546,0x1D546}, {0x1D54A,0x1D550},
  {0x1D552,0x1D6A5}, {0x1D6A8,0x1D6C0}, {0x1D6C2,0x1D6DA}, {0x1D6DC,0x1D6FA}, {0x1D6FC,0x1D714},
  {0x1D716,0x1D734}, {0x1D736,0x1D74E}, {0x1D750,0x1D76E}, {0x1D770,0x1D788}, {0x1D78A,0x1D7A8},
  {0x1D7AA,0x1D7C2}, {0x1D7C4,0x1D7CB}, {0x1D7CE,0x1D7FF}, {0x1DF00,0x1DF1E}, {0x1E100,0x1E12C},
  {0x1E137,0x1E13D}, {0x1E140,0x1E149}, {0x1E14E,0x1E14E}, {0x1E290,0x1E2AD}, {0x1E2C0,0x1E2EB},
  {0x1E2F0,0x1E2F9}, {0x1E7E0,0x1E7E6}, {0x1E7E8,0x1E7EB}, {0x1E7ED,0x1E7EE}, {0x1E7F0,0x1E7FE},
  {0x1E800,0x1E8C4}, {0x1E8C7,0x1E8CF}, {0x1E900,0x1E943}, {0x1E94B,0x1E94B}, {0x1E950,0x1E959},
  {0x1EC71,0x1ECAB}, {0x1ECAD,0x1ECAF}, {0x1ECB1,0x1ECB4}, {0x1ED01,0x1ED2D}, {0x1ED2F,0x1ED3D},
  {0x1EE00,0x1EE03}, {0x1EE05,0x1EE1F}, {0x1EE21,0x1EE22}, {0x1EE24,0x1EE24}, {0x1EE27,0x1EE27},
  {0x1EE29,0x1EE32}, {0x1EE34,0x1EE37}, {0x1EE39,0x1EE39}, {0x1EE3B,0x1EE3B}, {0x1EE42,0x1EE42},
  {0x1EE47,0x1EE47}, {0x1EE49,0x1EE49}, {0x1EE4B,0x1EE4B}, {0x1EE4D,0x1EE4F}, {0x1EE51,0x1EE52},
  {0x1EE54,0x1EE54}, {0x1EE57,0x1EE57}, {0x1EE59,0x1EE59}, {0x1EE5B,0x1EE5B}, {0x1EE5D,0x1EE5D},
  {0x1EE5F,0x1EE5F}, {0x1EE61,0x1EE62}, {0x1EE64,0x1EE64}, {0x1EE67,0x1EE6A}, {0x1EE6C,0x1EE72},
  {0x1EE74,0x1EE77}, {0x1EE79,0x1EE7C}, {0x1EE7E,0x1EE7E}, {0x1EE80,0x1EE89}, {0x1EE8B,0x1EE9B},
  {0x1EEA1,0x1EEA3}, {0x1EEA5,0x1EEA9}, {0x1EEAB,0x1EEBB}, {0x1F100,0x1F10C}, {0x1FBF0,0x1FBF9},
  {0x20000,0x2A6DF}, {0x2A700,0x2B738}, {0x2B740,0x2B81D}, {0x2B820,0x2CEA1}, {0x2CEB0,0x2EBE0},
  {0x2F800,0x2FA1D}, {0x30000,0x3134A},
};

/* Cased (Lowercase | Uppercase | Lt), for the final-sigma rule */
static const sdx__urange sdx__uni_cased[155] = {
  {0x41,0x5A}, {0x61,0x7A}, {0xAA,0xAA}, {0xB5,0xB5}, {0xBA,0xBA}, {0xC0,0xD6}, {0xD8,0xF6},
  {0xF8,0x1BA}, {0x1BC,0x1BF}, {0x1C4,0x293}, {0x295,0x2B8}, {0x2C0,0x2C1}, {0x2E0,0x2E4},
  {0x345,0x345}, {0x370,0x373}, {0x376,0x377}, {0x37A,0x37D}, {0x37F,0x37F}, {0x386,0x386},
  {0x388,0x38A}, {0x38C,0x38C}, {0x38E,0x3A1}, {0x3A3,0x3F5}, {0x3F7,0x481}, {0x48A,0x52F},
  {0x531,0x556}, {0x560,0x588}, {0x10A0,0x10C5}, {0x10C7,0x10C7}, {0x10CD,0x10CD}, {0x10D0,0x10FA},
  {0x10FD,0x10FF}, {0x13A0,0x13F5}, {0x13F8,0x13FD}, {0x1C80,0x1C88}, {0x1C90,0x1CBA},
  {0x1CBD,0x1CBF}, {0x1D00,0x1DBF}, {0x1E00,0x1F15}, {0x1F18,0x1F1D}, {0x1F20,0x1F45},
  {0x1F48,0x1F4D}, {0x1F50,0x1F57}, {0x1F59,0x1F59}, {0x1F5B,0x1F5B}, {0x1F5D,0x1F5D},
  {0x1F5F,0x1F7D}, {0x1F80,0x1FB4}, {0x1FB6,0x1FBC}, {0x1FBE,0x1FBE}, {0x1FC2,0x1FC4},
  {0x1FC6,0x1FCC}, {0x1FD0,0x1FD3}, {0x1FD6,0x1FDB}, {0x1FE0,0x1FEC}, {0x1FF2,0x1FF4},
  {0x1FF6,0x1FFC}, {0x2071,0x2071}, {0x207F,0x207F}, {0x2090,0x209C}, {0x2102,0x2102},
  {0x2107,0x2107}, {0x210A,0x2113}, {0x2115,0x2115}, {0x2119,0x211D}, {0x2124,0x2124},
  {0x2126,0x2126}, {0x2128,0x2128}, {0x212A,0x212D}, {0x212F,0x2134}, {0x2139,0x2139},
  {0x213C,0x213F}, {0x2145,0x2149}, {0x214E,0x214E}, {0x2160,0x217F}, {0x2183,0x2184},
  {0x24B6,0x24E9}, {0x2C00,0x2CE4}, {0x2CEB,0x2CEE}, {0x2CF2,0x2CF3}, {0x2D00,0x2D25},
  {0x2D27,0x2D27}, {0x2D2D,0x2D2D}, {0xA640,0xA66D}, {0xA680,0xA69D}, {0xA722,0xA787},
  {0xA78B,0xA78E}, {0xA790,0xA7CA}, {0xA7D0,0xA7D1}, {0xA7D3,0xA7D3}, {0xA7D5,0xA7D9},
  {0xA7F5,0xA7F6}, {0xA7F8,0xA7FA}, {0xAB30,0xAB5A}, {0xAB5C,0xAB68}, {0xAB70,0xABBF},
  {0xFB00,0xFB06}, {0xFB13,0xFB17}, {0xFF21,0xFF3A}, {0xFF41,0xFF5A}, {0x10400,0x1044F},
  {0x104B0,0x104D3}, {0x104D8,0x104FB}, {0x10570,0x1057A}, {0x1057C,0x1058A}, {0x1058C,0x10592},
  {0x10594,0x10595}, {0x10597,0x105A1}, {0x105A3,0x105B1}, {0x105B3,0x105B9}, {0x105BB,0x105BC},
  {0x10780,0x10780}, {0x10783,0x10785}, {0x10787,0x107B0}, {0x107B2,0x107BA}, {0x10C80,0x10CB2},
  {0x10CC0,0x10CF2}, {0x118A0,0x118DF}, {0x16E40,0x16E7F}, {0x1D400,0x1D454}, {0x1D456,0x1D49C},
  {0x1D49E,0x1D49F}, {0x1D4A2,0x1D4A2}, {0x1D4A5,0x1D4A6}, {0x1D4A9,0x1D4AC}, {0x1D4AE,0x1D4B9},
  {0x1D4BB,0x1D4BB}, {0x1D4BD,0x1D4C3}, {0x1D4C5,0x1D505}, {0x1D507,0x1D50A}, {0x1D50D,0x1D514},
  {0x1D516,0x1D51C}, {0x1D51E,0x1D539}, {0x1D53B,0x1D53E}, {0x1D540,0x1D544}, {0x1D546,0x1D546},
  {0x1D54A,0x1D550}, {0x1D552,0x1D6A5}, {0x1D6A8,0x1D6C0}, {0x1D6C2,0x1D6DA}, {0x1D6DC,0x1D6FA},
  {0x1D6FC,0x1D714}, {0x1D716,0x1D734}, {0x1D736,0x1D74E}, {0x1D750,0x1D76E}, {0x1D770,0x1D788},
  {0x1D78A,0x1D7A8}, {0x1D7AA,0x1D7C2}, {0x1D7C4,0x1D7CB}, {0x1DF00,0x1DF09}, {0x1DF0B,0x1DF1E},
  {0x1E900,0x1E943}, {0x1F130,0x1F149}, {0x1F150,0x1F169}, {0x1F170,0x1F189},
};

/* Case_Ignorable: Mn Me Cf Lm Sk and Word_Break MidLetter/MidNumLet/Single_Quote */
static const sdx__urange sdx__uni_case_ignorable[427] = {
  {0x27,0x27}, {0x2E,0x2E}, {0x3A,0x3A}, {0x5E,0x5E}, {0x60,0x60}, {0xA8,0xA8}, {0xAD,0xAD},
  {0xAF,0xAF}, {0xB4,0xB4}, {0xB7,0xB8}, {0x2B0,0x36F}, {0x374,0x375}, {0x37A,0x37A}, {0x384,0x385},
  {0x387,0x387}, {0x483,0x489}, {0x559,0x559}, {0x55F,0x55F}, {0x591,0x5BD}, {0x5BF,0x5BF},
  {0x5C1,0x5C2}, {0x5C4,0x5C5}, {0x5C7,0x5C7}, {0x5F4,0x5F4}, {0x600,0x605}, {0x610,0x61A},
  {0x61C,0x61C}, {0x640,0x640}, {0x64B,0x65F}, {0x670,0x670}, {0x6D6,0x6DD}, {0x6DF,0x6E8},
  {0x6EA,0x6ED}, {0x70F,0x70F}, {0x711,0x711}, {0x730,0x74A}, {0x7A6,0x7B0}, {0x7EB,0x7F5},
  {0x7FA,0x7FA}, {0x7FD,0x7FD}, {0x816,0x82D}, {0x859,0x85B}, {0x888,0x888}, {0x890,0x891},
  {0x898,0x89F}, {0x8C9,0x902}, {0x93A,0x93A}, {0x93C,0x93C}, {0x941,0x948}, {0x94D,0x94D},
  {0x951,0x957}, {0x962,0x963}, {0x971,0x971}, {0x981,0x981}, {0x9BC,0x9BC}, {0x9C1,0x9C4},
  {0x9CD,0x9CD}, {0x9E2,0x9E3}, {0x9FE,0x9FE}, {0xA01,0xA02}, {0xA3C,0xA3C}, {0xA41,0xA42},
  {0xA47,0xA48}, {0xA4B,0xA4D}, {0xA51,0xA51}, {0xA70,0xA71}, {0xA75,0xA75}, {0xA81,0xA82},
  {0xABC,0xABC}, {0xAC1,0xAC5}, {0xAC7,0xAC8}, {0xACD,0xACD}, {0xAE2,0xAE3}, {0xAFA,0xAFF},
  {0xB01,0xB01}, {0xB3C,0xB3C}, {0xB3F,0xB3F}, {0xB41,0xB44}, {0xB4D,0xB4D}, {0xB55,0xB56},
  {0xB62,0xB63}, {0xB82,0xB82}, {0xBC0,0xBC0}, {0xBCD,0xBCD}, {0xC00,0xC00}, {0xC04,0xC04},
  {0xC3C,0xC3C}, {0xC3E,0xC40}, {0xC46,0xC48}, {0xC4A,0xC4D}, {0xC55,0xC56}, {0xC62,0xC63},
  {0xC81,0xC81}, {0xCBC,0xCBC}, {0xCBF,0xCBF}, {0xCC6,0xCC6}, {0xCCC,0xCCD}, {0xCE2,0xCE3},
  {0xD00,0xD01}, {0xD3B,0xD3C}, {0xD41,0xD44}, {0xD4D,0xD4D}, {0xD62,0xD63}, {0xD81,0xD81},
  {0xDCA,0xDCA}, {0xDD2,0xDD4}, {0xDD6,0xDD6}, {0xE31,0xE31}, {0xE34,0xE3A}, {0xE46,0xE4E},
  {0xEB1,0xEB1}, {0xEB4,0xEBC}, {0xEC6,0xEC6}, {0xEC8,0xECD}, {0xF18,0xF19}, {0xF35,0xF35},
  {0xF37,0xF37}, {0xF39,0xF39}, {0xF71,0xF7E}, {0xF80,0xF84}, {0xF86,0xF87}, {0xF8D,0xF97},
  {0xF99,0xFBC}, {0xFC6,0xFC6}, {0x102D,0x1030}, {0x1032,0x1037}, {0x1039,0x103A}, {0x103D,0x103E},
  {0x1058,0x1059}, {0x105E,0x1060}, {0x1071,0x1074}, {0x1082,0x1082}, {0x1085,0x1086},
  {0x108D,0x108D}, {0x109D,0x109D}, {0x10FC,0x10FC}, {0x135D,0x135F}, {0x1712,0x1714},
  {0x1732,0x1733}, {0x1752,0x1753}, {0x1772,0x1773}, {0x17B4,0x17B5}, {0x17B7,0x17BD},
  {0x17C6,0x17C6}, {0x17C9,0x17D3}, {0x17D7,0x17D7}, {0x17DD,0x17DD}, {0x180B,0x180F},
  {0x1843,0x1843}, {0x1885,0x1886}, {0x18A9,0x18A9}, {0x1920,0x1922}, {0x1927,0x1928},
  {0x1932,0x1932}, {0x1939,0x193B}, {0x1A17,0x1A18}, {0x1A1B,0x1A1B}, {0x1A56,0x1A56},
  {0x1A58,0x1A5E}, {0x1A60,0x1A60}, {0x1A62,0x1A62}, {0x1A65,0x1A6C}, {0x1A73,0x1A7C},
  {0x1A7F,0x1A7F}, {0x1AA7,0x1AA7}, {0x1AB0,0x1ACE}, {0x1B00,0x1B03}, {0x1B34,0x1B34},
  {0x1B36,0x1B3A}, {0x1B3C,0x1B3C}, {0x1B42,0x1B42}, {0x1B6B,0x1B73}, {0x1B80,0x1B81},
  {0x1BA2,0x1BA5}, {0x1BA8,0x1BA9}, {0x1BAB,0x1BAD}, {0x1BE6,0x1BE6}, {0x1BE8,0x1BE9},
  {0x1BED,0x1BED}, {0x1BEF,0x1BF1}, {0x1C2C,0x1C33}, {0x1C36,0x1C37}, {0x1C78,0x1C7D},
  {0x1CD0,0x1CD2}, {0x1CD4,0x1CE0}, {0x1CE2,0x1CE8}, {0x1CED,0x1CED}, {0x1CF4,0x1CF4},
  {0x1CF8,0x1CF9}, {0x1D2C,0x1D6A}, {0x1D78,0x1D78}, {0x1D9B,0x1DFF}, {0x1FBD,0x1FBD},
  {0x1FBF,0x1FC1}, {0x1FCD,0x1FCF}, {0x1FDD,0x1FDF}, {0x1FED,0x1FEF}, {0x1FFD,0x1FFE},
  {0x200B,0x200F}, {0x2018,0x2019}, {0x2024,0x2024}, {0x2027,0x2027}, {0x202A,0x202E},
  {0x2060,0x2064}, {0x2066,0x206F}, {0x2071,0x2071}, {0x207F,0x207F}, {0x2090,0x209C},
  {0x20D0,0x20F0}, {0x2C7C,0x2C7D}, {0x2CEF,0x2CF1}, {0x2D6F,0x2D6F}, {0x2D7F,0x2D7F},
  {0x2DE0,0x2DFF}, {0x2E2F,0x2E2F}, {0x3005,0x3005}, {0x302A,0x302D}, {0x3031,0x3035},
  {0x303B,0x303B}, {0x3099,0x309E}, {0x30FC,0x30FE}, {0xA015,0xA015}, {0xA4F8,0xA4FD},
  {0xA60C,0xA60C}, {0xA66F,0xA672}, {0xA674,0xA67D}, {0xA67F,0xA67F}, {0xA69C,0xA69F},
  {0xA6F0,0xA6F1}, {0xA700,0xA721}, {0xA770,0xA770}, {0xA788,0xA78A}, {0xA7F2,0xA7F4},
  {0xA7F8,0xA7F9}, {0xA802,0xA802}, {0xA806,0xA806}, {0xA80B,0xA80B}, {0xA825,0xA826},
  {0xA82C,0xA82C}, {0xA8C4,0xA8C5}, {0xA8E0,0xA8F1}, {0xA8FF,0xA8FF}, {0xA926,0xA92D},
  {0xA947,0xA951}, {0xA980,0xA982}, {0xA9B3,0xA9B3}, {0xA9B6,0xA9B9}, {0xA9BC,0xA9BD},
  {0xA9CF,0xA9CF}, {0xA9E5,0xA9E6}, {0xAA29,0xAA2E}, {0xAA31,0xAA32}, {0xAA35,0xAA36},
  {0xAA43,0xAA43}, {0xAA4C,0xAA4C}, {0xAA70,0xAA70}, {0xAA7C,0xAA7C}, {0xAAB0,0xAAB0},
  {0xAAB2,0xAAB4}, {0xAAB7,0xAAB8}, {0xAABE,0xAABF}, {0xAAC1,0xAAC1}, {0xAADD,0xAADD},
  {0xAAEC,0xAAED}, {0xAAF3,0xAAF4}, {0xAAF6,0xAAF6}, {0xAB5B,0xAB5F}, {0xAB69,0xAB6B},
  {0xABE5,0xABE5}, {0xABE8,0xABE8}, {0xABED,0xABED}, {0xFB1E,0xFB1E}, {0xFBB2,0xFBC2},
  {0xFE00,0xFE0F}, {0xFE13,0xFE13}, {0xFE20,0xFE2F}, {0xFE52,0xFE52}, {0xFE55,0xFE55},
  {0xFEFF,0xFEFF}, {0xFF07,0xFF07}, {0xFF0E,0xFF0E}, {0xFF1A,0xFF1A}, {0xFF3E,0xFF3E},
  {0xFF40,0xFF40}, {0xFF70,0xFF70}, {0xFF9E,0xFF9F}, {0xFFE3,0xFFE3}, {0xFFF9,0xFFFB},
  {0x101FD,0x101FD}, {0x102E0,0x102E0}, {0x10376,0x1037A}, {0x10780,0x10785}, {0x10787,0x107B0},
  {0x107B2,0x107BA}, {0x10A01,0x10A03}, {0x10A05,0x10A06}, {0x10A0C,0x10A0F}, {0x10A38,0x10A3A},
  {0x10A3F,0x10A3F}, {0x10AE5,0x10AE6}, {0x10D24,0x10D27}, {0x10EAB,0x10EAC}, {0x10F46,0x10F50},
  {0x10F82,0x10F85}, {0x11001,0x11001}, {0x11038,0x11046}, {0x11070,0x11070}, {0x11073,0x11074},
  {0x1107F,0x11081}, {0x110B3,0x110B6}, {0x110B9,0x110BA}, {0x110BD,0x110BD}, {0x110C2,0x110C2},
  {0x110CD,0x110CD}, {0x11100,0x11102}, {0x11127,0x1112B}, {0x1112D,0x11134}, {0x11173,0x11173},
  {0x11180,0x11181}, {0x111B6,0x111BE}, {0x111C9,0x111CC}, {0x111CF,0x111CF}, {0x1122F,0x11231},
  {0x11234,0x11234}, {0x11236,0x11237}, {0x1123E,0x1123E}, {0x112DF,0x112DF}, {0x112E3,0x112EA},
  {0x11300,0x11301}, {0x1133B,0x1133C}, {0x11340,0x11340}, {0x11366,0x1136C}, {0x11370,0x11374},
  {0x11438,0x1143F}, {0x11442,0x11444}, {0x11446,0x11446}, {0x1145E,0x1145E}, {0x114B3,0x114B8},
  {0x114BA,0x114BA}, {0x114BF,0x114C0}, {0x114C2,0x114C3}, {0x115B2,0x115B5}, {0x115BC,0x115BD},
  {0x115BF,0x115C0}, {0x115DC,0x115DD}, {0x11633,0x1163A}, {0x1163D,0x1163D}, {0x1163F,0x11640},
  {0x116AB,0x116AB}, {0x116AD,0x116AD}, {0x116B0,0x116B5}, {0x116B7,0x116B7}, {0x1171D,0x1171F},
  {0x11722,0x11725}, {0x11727,0x1172B}, {0x1182F,0x11837}, {0x11839,0x1183A}, {0x1193B,0x1193C},
  {0x1193E,0x1193E}, {0x11943,0x11943}, {0x119D4,0x119D7}, {0x119DA,0x119DB}, {0x119E0,0x119E0},
  {0x11A01,0x11A0A}, {0x11A33,0x11A38}, {0x11A3B,0x11A3E}, {0x11A47,0x11A47}, {0x11A51,0x11A56},
  {0x11A59,0x11A5B}, {0x11A8A,0x11A96}, {0x11A98,0x11A99}, {0x11C30,0x11C36}, {0x11C38,0x11C3D},
  {0x11C3F,0x11C3F}, {0x11C92,0x11CA7}, {0x11CAA,0x11CB0}, {0x11CB2,0x11CB3}, {0x11CB5,0x11CB6},
  {0x11D31,0x11D36}, {0x11D3A,0x11D3A}, {0x11D3C,0x11D3D}, {0x11D3F,0x11D45}, {0x11D47,0x11D47},
  {0x11D90,0x11D91}, {0x11D95,0x11D95}, {0x11D97,0x11D97}, {0x11EF3,0x11EF4}, {0x13430,0x13438},
  {0x16AF0,0x16AF4}, {0x16B30,0x16B36}, {0x16B40,0x16B43}, {0x16F4F,0x16F4F}, {0x16F8F,0x16F9F},
  {0x16FE0,0x16FE1}, {0x16FE3,0x16FE4}, {0x1AFF0,0x1AFF3}, {0x1AFF5,0x1AFFB}, {0x1AFFD,0x1AFFE},
  {0x1BC9D,0x1BC9E}, {0x1BCA0,0x1BCA3}, {0x1CF00,0x1CF2D}, {0x1CF30,0x1CF46}, {0x1D167,0x1D169},
  {0x1D173,0x1D182}, {0x1D185,0x1D18B}, {0x1D1AA,0x1D1AD}, {0x1D242,0x1D244}, {0x1DA00,0x1DA36},
  {0x1DA3B,0x1DA6C}, {0x1DA75,0x1DA75}, {0x1DA84,0x1DA84}, {0x1DA9B,0x1DA9F}, {0x1DAA1,0x1DAAF},
  {0x1E000,0x1E006}, {0x1E008,0x1E018}, {0x1E01B,0x1E021}, {0x1E023,0x1E024}, {0x1E026,0x1E02A},
  {0x1E130,0x1E13D}, {0x1E2AE,0x1E2AE}, {0x1E2EC,0x1E2EF}, {0x1E8D0,0x1E8D6}, {0x1E944,0x1E94B},
  {0x1F3FB,0x1F3FF}, {0xE0001,0xE0001}, {0xE0020,0xE007F}, {0xE0100,0xE01EF},
};

/* str.lower() for single code points (U+0130 -> i U+0307 is special-cased in code) */
static const sdx__umap sdx__uni_lower[1432] = {
  {0x41,0x61}, {0x42,0x62}, {0x43,0x63}, {0x44,0x64}, {0x45,0x65}, {0x46,0x66}, {0x47,0x67}, {0x48,0x68},
  {0x49,0x69}, {0x4A,0x6A}, {0x4B,0x6B}, {0x4C,0x6C}, {0x4D,0x6D}, {0x4E,0x6E}, {0x4F,0x6F}, {0x50,0x70},
  {0x51,0x71}, {0x52,0x72}, {0x53,0x73}, {0x54,0x74}, {0x55,0x75}, {0x56,0x76}, {0x57,0x77}, {0x58,0x78},
  {0x59,0x79}, {0x5A,0x7A}, {0xC0,0xE0}, {0xC1,0xE1}, {0xC2,0xE2}, {0xC3,0xE3}, {0xC4,0xE4}, {0xC5,0xE5},
  {0xC6,0xE6}, {0xC7,0xE7}, {0xC8,0xE8}, {0xC9,0xE9}, {0xCA,0xEA}, {0xCB,0xEB}, {0xCC,0xEC}, {0xCD,0xED},
  {0xCE,0xEE}, {0xCF,0xEF}, {0xD0,0xF0}, {0xD1,0xF1}, {0xD2,0xF2}, {0xD3,0xF3}, {0xD4,0xF4}, {0xD5,0xF5},
  {0xD6,0xF6}, {0xD8,0xF8}, {0xD9,0xF9}, {0xDA,0xFA}, {0xDB,0xFB}, {0xDC,0xFC}, {0xDD,0xFD}, {0xDE,0xFE},
  {0x100,0x101}, {0x102,0x103}, {0x104,0x105}, {0x106,0x107}, {0x108,0x109}, {0x10A,0x10B}, {0x10C,0x10D}, {0x10E,0x10F},
  {0x110,0x111}, {0x112,0x113}, {0x114,0x115}, {0x116,0x117}, {0x118,0x119}, {0x11A,0x11B}, {0x11C,0x11D}, {0x11E,0x11F},
  {0x120,0x121}, {0x122,0x123}, {0x124,0x125}, {0x126,0x127}, {0x128,0x129}, {0x12A,0x12B}, {0x12C,0x12D}, {0x12E,0x12F},
  {0x132,0x133}, {0x134,0x135}, {0x136,0x137}, {0x139,0x13A}, {0x13B,0x13C}, {0x13D,0x13E}, {0x13F,0x140}, {0x141,0x142},
  {0x143,0x144}, {0x145,0x146}, {0x147,0x148}, {0x14A,0x14B}, {0x14C,0x14D}, {0x14E,0x14F}, {0x150,0x151}, {0x152,0x153},
  {0x154,0x155}, {0x156,0x157}, {0x158,0x159}, {0x15A,0x15B}, {0x15C,0x15D}, {0x15E,0x15F}, {0x160,0x161}, {0x162,0x163},
  {0x164,0x165}, {0x166,0x167}, {0x168,0x169}, {0x16A,0x16B}, {0x16C,0x16D}, {0x16E,0x16F}, {0x170,0x171}, {0x172,0x173},
  {0x174,0x175}, {0x176,0x177}, {0x178,0xFF}, {0x179,0x17A}, {0x17B,0x17C}, {0x17D,0x17E}, {0x181,0x253}, {0x182,0x183},
  {0x184,0x185}, {0x186,0x254}, {0x187,0x188}, {0x189,0x256}, {0x18A,0x257}, {0x18B,0x18C}, {0x18E,0x1DD}, {0x18F,0x259},
  {0x190,0x25B}, {0x191,0x192}, {0x193,0x260}, {0x194,0x263}, {0x196,0x269}, {0x197,0x268}, {0x198,0x199}, {0x19C,0x26F},
  {0x19D,0x272}, {0x19F,0x275}, {0x1A0,0x1A1}, {0x1A2,0x1A3}, {0x1A4,0x1A5}, {0x1A6,0x280}, {0x1A7,0x1A8}, {0x1A9,0x283},
  {0x1AC,0x1AD}, {0x1AE,0x288}, {0x1AF,0x1B0}, {0x1B1,0x28A}, {0x1B2,0x28B}, {0x1B3,0x1B4}, {0x1B5,0x1B6}, {0x1B7,0x292},
  {0x1B8,0x1B9}, {0x1BC,0x1BD}, {0x1C4,0x1C6}, {0x1C5,0x1C6}, {0x1C7,0x1C9}, {0x1C8,0x1C9}, {0x1CA,0x1CC}, {0x1CB,0x1CC},
  {0x1CD,0x1CE}, {0x1CF,0x1D0}, {0x1D1,0x1D2}, {0x1D3,0x1D4}, {0x1D5,0x1D6}, {0x1D7,0x1D8}, {0x1D9,0x1DA}, {0x1DB,0x1DC},
  {0x1DE,0x1DF}, {0x1E0,0x1E1}, {0x1E2,0x1E3}, {0x1E4,0x1E5}, {0x1E6,0x1E7}, {0x1E8,0x1E9}, {0x1EA,0x1EB}, {0x1EC,0x1ED},
  {0x1EE,0x1EF}, {0x1F1,0x1F3}, {0x1F2,0x1F3}, {0x1F4,0x1F5}, {0x1F6,0x195}, {0x1F7,0x1BF}, {0x1F8,0x1F9}, {0x1FA,0x1FB},
  {0x1FC,0x1FD}, {0x1FE,0x1FF}, {0x200,0x201}, {0x202,0x203}, {0x204,0x205}, {0x206,0x207}, {0x208,0x209}, {0x20A,0x20B},
  {0x20C,0x20D}, {0x20E,0x20F}, {0x210,0x211}, {0x212,0x213}, {0x214,0x215}, {0x216,0x217}, {0x218,0x219}, {0x21A,0x21B},
  {0x21C,0x21D}, {0x21E,0x21F}, {0x220,0x19E}, {0x222,0x223}, {0x224,0x225}, {0x226,0x227}, {0x228,0x229}, {0x22A,0x22B},
  {0x22C,0x22D}, {0x22E,0x22F}, {0x230,0x231}, {0x232,0x233}, {0x23A,0x2C65}, {0x23B,0x23C}, {0x23D,0x19A}, {0x23E,0x2C66},
  {0x241,0x242}, {0x243,0x180}, {0x244,0x289}, {0x245,0x28C}, {0x246,0x247}, {0x248,0x249}, {0x24A,0x24B}, {0x24C,0x24D},
  {0x24E,0x24F}, {0x370,0x371}, {0x372,0x373}, {0x376,0x377}, {0x37F,0x3F3}, {0x386,0x3AC}, {0x388,0x3AD}, {0x389,0x3AE},
  {0x38A,0x3AF}, {0x38C,0x3CC}, {0x38E,0x3CD}, {0x38F,0x3CE}, {0x391,0x3B1}, {0x392,0x3B2}, {0x393,0x3B3}, {0x394,0x3B4},
  {0x395,0x3B5}, {0x396,0x3B6}, {0x397,0x3B7}, {0x398,0x3B8}, {0x399,0x3B9}, {0x39A,0x3BA}, {0x39B,0x3BB}, {0x39C,0x3BC},
  {0x39D,0x3BD}, {0x39E,0x3BE}, {0x39F,0x3BF}, {0x3A0,0x3C0}, {0x3A1,0x3C1}, {0x3A3,0x3C3}, {0x3A4,0x3C4}, {0x3A5,0x3C5},
  {0x3A6,0x3C6}, {0x3A7,0x3C7}, {0x3A8,0x3C8}, {0x3A9,0x3C9}, {0x3AA,0x3CA}, {0x3AB,0x3CB}, {0x3CF,0x3D7}, {0x3D8,0x3D9},
  {0x3DA,0x3DB}, {0x3DC,0x3DD}, {0x3DE,0x3DF}, {0x3E0,0x3E1}, {0x3E2,0x3E3}, {0x3E4,0x3E5}, {0x3E6,0x3E7}, {0x3E8,0x3E9},
  {0x3EA,0x3EB}, {0x3EC,0x3ED}, {0x3EE,0x3EF}, {0x3F4,0x3B8}, {0x3F7,0x3F8}, {0x3F9,0x3F2}, {0x3FA,0x3FB}, {0x3FD,0x37B},
  {0x3FE,0x37C}, {0x3FF,0x37D}, {0x400,0x450}, {0x401,0x451}, {0x402,0x452}, {0x403,0x453}, {0x404,0x454}, {0x405,0x455},
  {0x406,0x456}, {0x407,0x457}, {0x408,0x458}, {0x409,0x459}, {0x40A,0x45A}, {0x40B,0x45B}, {0x40C,0x45C}, {0x40D,0x45D},
  {0x40E,0x45E}, {0x40F,0x45F}, {0x410,0x430}, {0x411,0x431}, {0x412,0x432}, {0x413,0x433}, {0x414,0x434}, {0x415,0x435},
  {0x416,0x436}, {0x417,0x437}, {0x418,0x438}, {0x419,0x439}, {0x41A,0x43A}, {0x41B,0x43B}, {0x41C,0x43C}, {0x41D,0x43D},
  {0x41E,0x43E}, {0x41F,0x43F}, {0x420,0x440}, {0x421,0x441}, {0x422,0x442}, {0x423,0x443}, {0x424,0x444}, {0x425,0x445},
  {0x426,0x446}, {0x427,0x447}, {0x428,0x448}, {0x429,0x449}, {0x42A,0x44A}, {0x42B,0x44B}, {0x42C,0x44C}, {0x42D,0x44D},
  {0x42E,0x44E}, {0x42F,0x44F}, {0x460,0x461}, {0x462,0x463}, {0x464,0x465}, {0x466,0x467}, {0x468,0x469}, {0x46A,0x46B},
  {0x46C,0x46D}, {0x46E,0x46F}, {0x470,0x471}, {0x472,0x473}, {0x474,0x475}, {0x476,0x477}, {0x478,0x479}, {0x47A,0x47B},
  {0x47C,0x47D}, {0x47E,0x47F}, {0x480,0x481}, {0x48A,0x48B}, {0x48C,0x48D}, {0x48E,0x48F}, {0x490,0x491}, {0x492,0x493},
  {0x494,0x495}, {0x496,0x497}, {0x498,0x499}, {0x49A,0x49B}, {0x49C,0x49D}, {0x49E,0x49F}, {0x4A0,0x4A1}, {0x4A2,0x4A3},
  {0x4A4,0x4A5}, {0x4A6,0x4A7}, {0x4A8,0x4A9}, {0x4AA,0x4AB}, {0x4AC,0x4AD}, {0x4AE,0x4AF}, {0x4B0,0x4B1}, {0x4B2,0x4B3},
  {0x4B4,0x4B5}, {0x4B6,0x4B7}, {0x4B8,0x4B9}, {0x4BA,0x4BB}, {0x4BC,0x4BD}, {0x4BE,0x4BF}, {0x4C0,0x4CF}, {0x4C1,0x4C2},
  {0x4C3,0x4C4}, {0x4C5,0x4C6}, {0x4C7,0x4C8}, {0x4C9,0x4CA}, {0x4CB,0x4CC}, {0x4CD,0x4CE}, {0x4D0,0x4D1}, {0x4D2,0x4D3},
  {0x4D4,0x4D5}, {0x4D6,0x4D7}, {0x4D8,0x4D9}, {0x4DA,0x4DB}, {0x4DC,0x4DD}, {0x4DE,0x4DF}, {0x4E0,0x4E1}, {0x4E2,0x4E3},
  {0x4E4,0x4E5}, {0x4E6,0x4E7}, {0x4E8,0x4E9}, {0x4EA,0x4EB}, {0x4EC,0x4ED}, {0x4EE,0x4EF}, {0x4F0,0x4F1}, {0x4F2,0x4F3},
  {0x4F4,0x4F5}, {0x4F6,0x4F7}, {0x4F8,0x4F9}, {0x4FA,0x4FB}, {0x4FC,0x4FD}, {0x4FE,0x4FF}, {0x500,0x501}, {0x502,0x503},
  {0x504,0x505}, {0x506,0x507}, {0x508,0x509}, {0x50A,0x50B}, {0x50C,0x50D}, {0x50E,0x50F}, {0x510,0x511}, {0x512,0x513},
  {0x514,0x515}, {0x516,0x517}, {0x518,0x519}, {0x51A,0x51B}, {0x51C,0x51D}, {0x51E,0x51F}, {0x520,0x521}, {0x522,0x523},
  {0x524,0x525}, {0x526,0x527}, {0x528,0x529}, {0x52A,0x52B}, {0x52C,0x52D}, {0x52E,0x52F}, {0x531,0x561}, {0x532,0x562},
  {0x533,0x563}, {0x534,0x564}, {0x535,0x565}, {0x536,0x566}, {0x537,0x567}, {0x538,0x568}, {0x539,0x569}, {0x53A,0x56A},
  {0x53B,0x56B}, {0x53C,0x56C}, {0x53D,0x56D}, {0x53E,0x56E}, {0x53F,0x56F}, {0x540,0x570}, {0x541,0x571}, {0x542,0x572},
  {0x543,0x573}, {0x544,0x574}, {0x545,0x575}, {0x546,0x576}, {0x547,0x577}, {0x548,0x578}, {0x549,0x579}, {0x54A,0x57A},
  {0x54B,0x57B}, {0x54C,0x57C}, {0x54D,0x57D}, {0x54E,0x57E}, {0x54F,0x57F}, {0x550,0x580}, {0x551,0x581}, {0x552,0x582},
  {0x553,0x583}, {0x554,0x584}, {0x555,0x585}, {0x556,0x586}, {0x10A0,0x2D00}, {0x10A1,0x2D01}, {0x10A2,0x2D02}, {0x10A3,0x2D03},
  {0x10A4,0x2D04}, {0x10A5,0x2D05}, {0x10A6,0x2D06}, {0x10A7,0x2D07}, {0x10A8,0x2D08}, {0x10A9,0x2D09}, {0x10AA,0x2D0A}, {0x10AB,0x2D0B},
  {0x10AC,0x2D0C}, {0x10AD,0x2D0D}, {0x10AE,0x2D0E}, {0x10AF,0x2D0F}, {0x10B0,0x2D10}, {0x10B1,0x2D11}, {0x10B2,0x2D12}, {0x10B3,0x2D13},
  {0x10B4,0x2D14}, {0x10B5,0x2D15}, {0x10B6,0x2D16}, {0x10B7,0x2D17}, {0x10B8,0x2D18}, {0x10B9,0x2D19}, {0x10BA,0x2D1A}, {0x10BB,0x2D1B},
  {0x10BC,0x2D1C}, {0x10BD,0x2D1D}, {0x10BE,0x2D1E}, {0x10BF,0x2D1F}, {0x10C0,0x2D20}, {0x10C1,0x2D21}, {0x10C2,0x2D22}, {0x10C3,0x2D23},
  {0x10C4,0x2D24}, {0x10C5,0x2D25}, {0x10C7,0x2D27}, {0x10CD,0x2D2D}, {0x13A0,0xAB70}, {0x13A1,0xAB71}, {0x13A2,0xAB72}, {0x13A3,0xAB73},
  {0x13A4,0xAB74}, {0x13A5,0xAB75}, {0x13A6,0xAB76}, {0x13A7,0xAB77}, {0x13A8,0xAB78}, {0x13A9,0xAB79}, {0x13AA,0xAB7A}, {0x13AB,0xAB7B},
  {0x13AC,0xAB7C}, {0x13AD,0xAB7D}, {0x13AE,0xAB7E}, {0x13AF,0xAB7F}, {0x13B0,0xAB80}, {0x13B1,0xAB81}, {0x13B2,0xAB82}, {0x13B3,0xAB83},
  {0x13B4,0xAB84}, {0x13B5,0xAB85}, {0x13B6,0xAB86}, {0x13B7,0xAB87}, {0x13B8,0xAB88}, {0x13B9,0xAB89}, {0x13BA,0xAB8A}, {0x13BB,0xAB8B},
  {0x13BC,0xAB8C}, {0x13BD,0xAB8D}, {0x13BE,0xAB8E}, {0x13BF,0xAB8F}, {0x13C0,0xAB90}, {0x13C1,0xAB91}, {0x13C2,0xAB92}, {0x13C3,0xAB93},
  {0x13C4,0xAB94}, {0x13C5,0xAB95}, {0x13C6,0xAB96}, {0x13C7,0xAB97}, {0x13C8,0xAB98}, {0x13C9,0xAB99}, {0x13CA,0xAB9A}, {0x13CB,0xAB9B},
  {0x13CC,0xAB9C}, {0x13CD,0xAB9D}, {0x13CE,0xAB9E}, {0x13CF,0xAB9F}, {0x13D0,0xABA0}, {0x13D1,0xABA1}, {0x13D2,0xABA2}, {0x13D3,0xABA3},
  {0x13D4,0xABA4}, {0x13D5,0xABA5}, {0x13D6,0xABA6}, {0x13D7,0xABA7}, {0x13D8,0xABA8}, {0x13D9,0xABA9}, {0x13DA,0xABAA}, {0x13DB,0xABAB},
  {0x13DC,0xABAC}, {0x13DD,0xABAD}, {0x13DE,0xABAE}, {0x13DF,0xABAF}, {0x13E0,0xABB0}, {0x13E1,0xABB1}, {0x13E2,0xABB2}, {0x13E3,0xABB3},
  {0x13E4,0xABB4}, {0x13E5,0xABB5}, {0x13E6,0xABB6}, {0x13E7,0xABB7}, {0x13E8,0xABB8}, {0x13E9,0xABB9}, {0x13EA,0xABBA}, {0x13EB,0xABBB},
  {0x13EC,0xABBC}, {0x13ED,0xABBD}, {0x13EE,0xABBE}, {0x13EF,0xABBF}, {0x13F0,0x13F8}, {0x13F1,0x13F9}, {0x13F2,0x13FA}, {0x13F3,0x13FB},
  {0x13F4,0x13FC}, {0x13F5,0x13FD}, {0x1C90,0x10D0}, {0x1C91,0x10D1}, {0x1C92,0x10D2}, {0x1C93,0x10D3}, {0x1C94,0x10D4}, {0x1C95,0x10D5},
  {0x1C96,0x10D6}, {0x1C97,0x10D7}, {0x1C98,0x10D8}, {0x1C99,0x10D9}, {0x1C9A,0x10DA}, {0x1C9B,0x10DB}, {0x1C9C,0x10DC}, {0x1C9D,0x10DD},
  {0x1C9E,0x10DE}, {0x1C9F,0x10DF}, {0x1CA0,0x10E0}, {0x1CA1,0x10E1}, {0x1CA2,0x10E2}, {0x1CA3,0x10E3}, {0x1CA4,0x10E4}, {0x1CA5,0x10E5},
  {0x1CA6,0x10E6}, {0x1CA7,0x10E7}, {0x1CA8,0x10E8}, {0x1CA9,0x10E9}, {0x1CAA,0x10EA}, {0x1CAB,0x10EB}, {0x1CAC,0x10EC}, {0x1CAD,0x10ED},
  {0x1CAE,0x10EE}, {0x1CAF,0x10EF}, {0x1CB0,0x10F0}, {0x1CB1,0x10F1}, {0x1CB2,0x10F2}, {0x1CB3,0x10F3}, {0x1CB4,0x10F4}, {0x1CB5,0x10F5},
  {0x1CB6,0x10F6}, {0x1CB7,0x10F7}, {0x1CB8,0x10F8}, {0x1CB9,0x10F9}, {0x1CBA,0x10FA}, {0x1CBD,0x10FD}, {0x1CBE,0x10FE}, {0x1CBF,0x10FF},
  {0x1E00,0x1E01}, {0x1E02,0x1E03}, {0x1E04,0x1E05}, {0x1E06,0x1E07}, {0x1E08,0x1E09}, {0x1E0A,0x1E0B}, {0x1E0C,0x1E0D}, {0x1E0E,0x1E0F},
  {0x1E10,0x1E11}, {0x1E12,0x1E13}, {0x1E14,0x1E15}, {0x1E16,0x1E17}, {0x1E18,0x1E19}, {0x1E1A,0x1E1B}, {0x1E1C,0x1E1D}, {0x1E1E,0x1E1F},
  {0x1E20,0x1E21}, {0x1E22,0x1E23}, {0x1E24,0x1E25}, {0x1E26,0x1E27}, {0x1E28,0x1E29}, {0x1E2A,0x1E2B}, {0x1E2C,0x1E2D}, {0x1E2E,0x1E2F},
  {0x1E30,0x1E31}, {0x1E32,0x1E33}, {0x1E34,0x1E35}, {0x1E36,0x1E37}, {0x1E38,0x1E39}, {0x1E3A,0x1E3B}, {0x1E3C,0x1E3D}, {0x1E3E,0x1E3F},
  {0x1E40,0x1E41}, {0x1E42,0x1E43}, {0x1E44,0x1E45}, {0x1E46,0x1E47}, {0x1E48,0x1E49}, {0x1E4A,0x1E4B}, {0x1E4C,0x1E4D}, {0x1E4E,0x1E4F},
  {0x1E50,0x1E51}, {0x1E52,0x1E53}, {0x1E54,0x1E55}, {0x1E56,0x1E57}, {0x1E58,0x1E59}, {0x1E5A,0x1E5B}, {0x1E5C,0x1E5D}, {0x1E5E,0x1E5F},
  {0x1E60,0x1E61}, {0x1E62,0x1E63}, {0x1E64,0x1E65}, {0x1E66,0x1E67}, {0x1E68,0x1E69}, {0x1E6A,0x1E6B}, {0x1E6C,0x1E6D}, {0x1E6E,0x1E6F},
  {0x1E70,0x1E71}, {0x1E72,0x1E73}, {0x1E74,0x1E75}, {0x1E76,0x1E77}, {0x1E78,0x1E79}, {0x1E7A,0x1E7B}, {0x1E7C,0x1E7D}, {0x1E7E,0x1E7F},
  {0x1E80,0x1E81}, {0x1E82,0x1E83}, {0x1E84,0x1E85}, {0x1E86,0x1E87}, {0x1E88,0x1E89}, {0x1E8A,0x1E8B}, {0x1E8C,0x1E8D}, {0x1E8E,0x1E8F},
  {0x1E90,0x1E91}, {0x1E92,0x1E93}, {0x1E94,0x1E95}, {0x1E9E,0xDF}, {0x1EA0,0x1EA1}, {0x1EA2,0x1EA3}, {0x1EA4,0x1EA5}, {0x1EA6,0x1EA7},
  {0x1EA8,0x1EA9}, {0x1EAA,0x1EAB}, {0x1EAC,0x1EAD}, {0x1EAE,0x1EAF}, {0x1EB0,0x1EB1}, {0x1EB2,0x1EB3}, {0x1EB4,0x1EB5}, {0x1EB6,0x1EB7},
  {0x1EB8,0x1EB9}, {0x1EBA,0x1EBB}, {0x1EBC,0x1EBD}, {0x1EBE,0x1EBF}, {0x1EC0,0x1EC1}, {0x1EC2,0x1EC3}, {0x1EC4,0x1EC5}, {0x1EC6,0x1EC7},
  {0x1EC8,0x1EC9}, {0x1ECA,0x1ECB}, {0x1ECC,0x1ECD}, {0x1ECE,0x1ECF}, {0x1ED0,0x1ED1}, {0x1ED2,0x1ED3}, {0x1ED4,0x1ED5}, {0x1ED6,0x1ED7},
  {0x1ED8,0x1ED9}, {0x1EDA,0x1EDB}, {0x1EDC,0x1EDD}, {0x1EDE,0x1EDF}, {0x1EE0,0x1EE1}, {0x1EE2,0x1EE3}, {0x1EE4,0x1EE5}, {0x1EE6,0x1EE7},
  {0x1EE8,0x1EE9}, {0x1EEA,0x1EEB}, {0x1EEC,0x1EED}, {0x1EEE,0x1EEF}, {0x1EF0,0x1EF1}, {0x1EF2,0x1EF3}, {0x1EF4,0x1EF5}, {0x1EF6,0x1EF7},
  {0x1EF8,0x1EF9}, {0x1EFA,0x1EFB}, {0x1EFC,0x1EFD}, {0x1EFE,0x1EFF}, {0x1F08,0x1F00}, {0x1F09,0x1F01}, {0x1F0A,0x1F02}, {0x1F0B,0x1F03},
  {0x1F0C,0x1F04}, {0x1F0D,0x1F05}, {0x1F0E,0x1F06}, {0x1F0F,0x1F07}, {0x1F18,0x1F10}, {0x1F19,0x1F11}, {0x1F1A,0x1F12}, {0x1F1B,0x1F13},
  {0x1F1C,0x1F14}, {0x1F1D,0x1F15}, {0x1F28,0x1F20}, {0x1F29,0x1F21}, {0x1F2A,0x1F22}, {0x1F2B,0x1F23}, {0x1F2C,0x1F24}, {0x1F2D,0x1F25},
  {0x1F2E,0x1F26}, {0x1F2F,0x1F27}, {0x1F38,0x1F30}, {0x1F39,0x1F31}, {0x1F3A,0x1F32}, {0x1F3B,0x1F33}, {0x1F3C,0x1F34}, {0x1F3D,0x1F35},
  {0x1F3E,0x1F36}, {0x1F3F,0x1F37}, {0x1F48,0x1F40}, {0x1F49,0x1F41}, {0x1F4A,0x1F42}, {0x1F4B,0x1F43}, {0x1F4C,0x1F44}, {0x1F4D,0x1F45},
  {0x1F59,0x1F51}, {0x1F5B,0x1F53}, {0x1F5D,0x1F55}, {0x1F5F,0x1F57}, {0x1F68,0x1F60}, {0x1F69,0x1F61}, {0x1F6A,0x1F62}, {0x1F6B,0x1F63},
  {0x1F6C,0x1F64}, {0x1F6D,0x1F65}, {0x1F6E,0x1F66}, {0x1F6F,0x1F67}, {0x1F88,0x1F80}, {0x1F89,0x1F81}, {0x1F8A,0x1F82}, {0x1F8B,0x1F83},
  {0x1F8C,0x1F84}, {0x1F8D,0x1F85}, {0x1F8E,0x1F86}, {0x1F8F,0x1F87}, {0x1F98,0x1F90}, {0x1F99,0x1F91}, {0x1F9A,0x1F92}, {0x1F9B,0x1F93},
  {0x1F9C,0x1F94}, {0x1F9D,0x1F95}, {0x1F9E,0x1F96}, {0x1F9F,0x1F97}, {0x1FA8,0x1FA0}, {0x1FA9,0x1FA1}, {0x1FAA,0x1FA2}, {0x1FAB,0x1FA3},
  {0x1FAC,0x1FA4}, {0x1FAD,0x1FA5}, {0x1FAE,0x1FA6}, {0x1FAF,0x1FA7}, {0x1FB8,0x1FB0}, {0x1FB9,0x1FB1}, {0x1FBA,0x1F70}, {0x1FBB,0x1F71},
  {0x1FBC,0x1FB3}, {0x1FC8,0x1F72}, {0x1FC9,0x1F73}, {0x1FCA,0x1F74}, {0x1FCB,0x1F75}, {0x1FCC,0x1FC3}, {0x1FD8,0x1FD0}, {0x1FD9,0x1FD1},
  {0x1FDA,0x1F76}, {0x1FDB,0x1F77}, {0x1FE8,0x1FE0}, {0x1FE9,0x1FE1}, {0x1FEA,0x1F7A}, {0x1FEB,0x1F7B}, {0x1FEC,0x1FE5}, {0x1FF8,0x1F78},
  {0x1FF9,0x1F79}, {0x1FFA,0x1F7C}, {0x1FFB,0x1F7D}, {0x1FFC,0x1FF3}, {0x2126,0x3C9}, {0x212A,0x6B}, {0x212B,0xE5}, {0x2132,0x214E},
  {0x2160,0x2170}, {0x2161,0x2171}, {0x2162,0x2172}, {0x2163,0x2173}, {0x2164,0x2174}, {0x2165,0x2175}, {0x2166,0x2176}, {0x2167,0x2177},
  {0x2168,0x2178}, {0x2169,0x2179}, {0x216A,0x217A}, {0x216B,0x217B}, {0x216C,0x217C}, {0x216D,0x217D}, {0x216E,0x217E}, {0x216F,0x217F},
  {0x2183,0x2184}, {0x24B6,0x24D0}, {0x24B7,0x24D1}, {0x24B8,0x24D2}, {0x24B9,0x24D3}, {0x24BA,0x24D4}, {0x24BB,0x24D5}, {0x24BC,0x24D6},
  {0x24BD,0x24D7}, {0x24BE,0x24D8}, {0x24BF,0x24D9}, {0x24C0,0x24DA}, {0x24C1,0x24DB}, {0x24C2,0x24DC}, {0x24C3,0x24DD}, {0x24C4,0x24DE},
  {0x24C5,0x24DF}, {0x24C6,0x24E0}, {0x24C7,0x24E1}, {0x24C8,0x24E2}, {0x24C9,0x24E3}, {0x24CA,0x24E4}, {0x24CB,0x24E5}, {0x24CC,0x24E6},
  {0x24CD,0x24E7}, {0x24CE,0x24E8}, {0x24CF,0x24E9}, {0x2C00,0x2C30}, {0x2C01,0x2C31}, {0x2C02,0x2C32}, {0x2C03,0x2C33}, {0x2C04,0x2C34},
  {0x2C05,0x2C35}, {0x2C06,0x2C36}, {0x2C07,0x2C37}, {0x2C08,0x2C38}, {0x2C09,0x2C39}, {0x2C0A,0x2C3A}, {0x2C0B,0x2C3B}, {0x2C0C,0x2C3C},
  {0x2C0D,0x2C3D}, {0x2C0E,0x2C3E}, {0x2C0F,0x2C3F}, {0x2C10,0x2C40}, {0x2C11,0x2C41}, {0x2C12,0x2C42}, {0x2C13,0x2C43}, {0x2C14,0x2C44},
  {0x2C15,0x2C45}, {0x2C16,0x2C46}, {0x2C17,0x2C47}, {0x2C18,0x2C48}, {0x2C19,0x2C49}, {0x2C1A,0x2C4A}, {0x2C1B,0x2C4B}, {0x2C1C,0x2C4C},
  {0x2C1D,0x2C4D}, {0x2C1E,0x2C4E}, {0x2C1F,0x2C4F}, {0x2C20,0x2C50}, {0x2C21,0x2C51}, {0x2C22,0x2C52}, {0x2C23,0x2C53}, {0x2C24,0x2C54},
  {0x2C25,0x2C55}, {0x2C26,0x2C56}, {0x2C27,0x2C57}, {0x2C28,0x2C58}, {0x2C29,0x2C59}, {0x2C2A,0x2C5A}, {0x2C2B,0x2C5B}, {0x2C2C,0x2C5C},
  {0x2C2D,0x2C5D}, {0x2C2E,0x2C5E}, {0x2C2F,0x2C5F}, {0x2C60,0x2C61}, {0x2C62,0x26B}, {0x2C63,0x1D7D}, {0x2C64,0x27D}, {0x2C67,0x2C68},
  {0x2C69,0x2C6A}, {0x2C6B,0x2C6C}, {0x2C6D,0x251}, {0x2C6E,0x271}, {0x2C6F,0x250}, {0x2C70,0x252}, {0x2C72,0x2C73}, {0x2C75,0x2C76},
  {0x2C7E,0x23F}, {0x2C7F,0x240}, {0x2C80,0x2C81}, {0x2C82,0x2C83}, {0x2C84,0x2C85}, {0x2C86,0x2C87}, {0x2C88,0x2C89}, {0x2C8A,0x2C8B},
  {0x2C8C,0x2C8D}, {0x2C8E,0x2C8F}, {0x2C90,0x2C91}, {0x2C92,0x2C93}, {0x2C94,0x2C95}, {0x2C96,0x2C97}, {0x2C98,0x2C99}, {0x2C9A,0x2C9B},
  {0x2C9C,0x2C9D}, {0x2C9E,0x2C9F}, {0x2CA0,0x2CA1}, {0x2CA2,0x2CA3}, {0x2CA4,0x2CA5}, {0x2CA6,0x2CA7}, {0x2CA8,0x2CA9}, {0x2CAA,0x2CAB},
  {0x2CAC,0x2CAD}, {0x2CAE,0x2CAF}, {0x2CB0,0x2CB1}, {0x2CB2,0x2CB3}, {0x2CB4,0x2CB5}, {0x2CB6,0x2CB7}, {0x2CB8,0x2CB9}, {0x2CBA,0x2CBB},
  {0x2CBC,0x2CBD}, {0x2CBE,0x2CBF}, {0x2CC0,0x2CC1}, {0x2CC2,0x2CC3}, {0x2CC4,0x2CC5}, {0x2CC6,0x2CC7}, {0x2CC8,0x2CC9}, {0x2CCA,0x2CCB},
  {0x2CCC,0x2CCD}, {0x2CCE,0x2CCF}, {0x2CD0,0x2CD1}, {0x2CD2,0x2CD3}, {0x2CD4,0x2CD5}, {0x2CD6,0x2CD7}, {0x2CD8,0x2CD9}, {0x2CDA,0x2CDB},
  {0x2CDC,0x2CDD}, {0x2CDE,0x2CDF}, {0x2CE0,0x2CE1}, {0x2CE2,0x2CE3}, {0x2CEB,0x2CEC}, {0x2CED,0x2CEE}, {0x2CF2,0x2CF3}, {0xA640,0xA641},
  {0xA642,0xA643}, {0xA644,0xA645}, {0xA646,0xA647}, {0xA648,0xA649}, {0xA64A,0xA64B}, {0xA64C,0xA64D}, {0xA64E,0xA64F}, {0xA650,0xA651},
  {0xA652,0xA653}, {0xA654,0xA655}, {0xA656,0xA657}, {0xA658,0xA659}, {0xA65A,0xA65B}, {0xA65C,0xA65D}, {0xA65E,0xA65F}, {0xA660,0xA661},
  {0xA662,0xA663}, {0xA664,0xA665}, {0xA666,0xA667}, {0xA668,0xA669}, {0xA66A,0xA66B}, {0xA66C,0xA66D}, {0xA680,0xA681}, {0xA682,0xA683},
  {0xA684,0xA685}, {0xA686,0xA687}, {0xA688,0xA689}, {0xA68A,0xA68B}, {0xA68C,0xA68D}, {0xA68E,0xA68F}, {0xA690,0xA691}, {0xA692,0xA693},
  {0xA694,0xA695}, {0xA696,0xA697}, {0xA698,0xA699}, {0xA69A,0xA69B}, {0xA722,0xA723}, {0xA724,0xA725}, {0xA726,0xA727}, {0xA728,0xA729},
  {0xA72A,0xA72B}, {0xA72C,0xA72D}, {0xA72E,0xA72F}, {0xA732,0xA733}, {0xA734,0xA735}, {0xA736,0xA737}, {0xA738,0xA739}, {0xA73A,0xA73B},
  {0xA73C,0xA73D}, {0xA73E,0xA73F}, {0xA740,0xA741}, {0xA742,0xA743}, {0xA744,0xA745}, {0xA746,0xA747}, {0xA748,0xA749}, {0xA74A,0xA74B},
  {0xA74C,0xA74D}, {0xA74E,0xA74F}, {0xA750,0xA751}, {0xA752,0xA753}, {0xA754,0xA755}, {0xA756,0xA757}, {0xA758,0xA759}, {0xA75A,0xA75B},
  {0xA75C,0xA75D}, {0xA75E,0xA75F}, {0xA760,0xA761}, {0xA762,0xA763}, {0xA764,0xA765}, {0xA766,0xA767}, {0xA768,0xA769}, {0xA76A,0xA76B},
  {0xA76C,0xA76D}, {0xA76E,0xA76F}, {0xA779,0xA77A}, {0xA77B,0xA77C}, {0xA77D,0x1D79}, {0xA77E,0xA77F}, {0xA780,0xA781}, {0xA782,0xA783},
  {0xA784,0xA785}, {0xA786,0xA787}, {0xA78B,0xA78C}, {0xA78D,0x265}, {0xA790,0xA791}, {0xA792,0xA793}, {0xA796,0xA797}, {0xA798,0xA799},
  {0xA79A,0xA79B}, {0xA79C,0xA79D}, {0xA79E,0xA79F}, {0xA7A0,0xA7A1}, {0xA7A2,0xA7A3}, {0xA7A4,0xA7A5}, {0xA7A6,0xA7A7}, {0xA7A8,0xA7A9},
  {0xA7AA,0x266}, {0xA7AB,0x25C}, {0xA7AC,0x261}, {0xA7AD,0x26C}, {0xA7AE,0x26A}, {0xA7B0,0x29E}, {0xA7B1,0x287}, {0xA7B2,0x29D},
  {0xA7B3,0xAB53}, {0xA7B4,0xA7B5}, {0xA7B6,0xA7B7}, {0xA7B8,0xA7B9}, {0xA7BA,0xA7BB}, {0xA7BC,0xA7BD}, {0xA7BE,0xA7BF}, {0xA7C0,0xA7C1},
  {0xA7C2,0xA7C3}, {0xA7C4,0xA794}, {0xA7C5,0x282}, {0xA7C6,0x1D8E}, {0xA7C7,0xA7C8}, {0xA7C9,0xA7CA}, {0xA7D0,0xA7D1}, {0xA7D6,0xA7D7},
  {0xA7D8,0xA7D9}, {0xA7F5,0xA7F6}, {0xFF21,0xFF41}, {0xFF22,0xFF42}, {0xFF23,0xFF43}, {0xFF24,0xFF44}, {0xFF25,0xFF45}, {0xFF26,0xFF46},
  {0xFF27,0xFF47}, {0xFF28,0xFF48}, {0xFF29,0xFF49}, {0xFF2A,0xFF4A}, {0xFF2B,0xFF4B}, {0xFF2C,0xFF4C}, {0xFF2D,0xFF4D}, {0xFF2E,0xFF4E},
  {0xFF2F,0xFF4F}, {0xFF30,0xFF50}, {0xFF31,0xFF51}, {0xFF32,0xFF52}, {0xFF33,0xFF53}, {0xFF34,0xFF54}, {0xFF35,0xFF55}, {0xFF36,0xFF56},
  {0xFF37,0xFF57}, {0xFF38,0xFF58}, {0xFF39,0xFF59}, {0xFF3A,0xFF5A}, {0x10400,0x10428}, {0x10401,0x10429}, {0x10402,0x1042A}, {0x10403,0x1042B},
  {0x10404,0x1042C}, {0x10405,0x1042D}, {0x10406,0x1042E}, {0x10407,0x1042F}, {0x10408,0x10430}, {0x10409,0x10431}, {0x1040A,0x10432}, {0x1040B,0x10433},
  {0x1040C,0x10434}, {0x1040D,0x10435}, {0x1040E,0x10436}, {0x1040F,0x10437}, {0x10410,0x10438}, {0x10411,0x10439}, {0x10412,0x1043A}, {0x10413,0x1043B},
  {0x10414,0x1043C}, {0x10415,0x1043D}, {0x10416,0x1043E}, {0x10417,0x1043F}, {0x10418,0x10440}, {0x10419,0x10441}, {0x1041A,0x10442}, {0x1041B,0x10443},
  {0x1041C,0x10444}, {0x1041D,0x10445}, {0x1041E,0x10446}, {0x1041F,0x10447}, {0x10420,0x10448}, {0x10421,0x10449}, {0x10422,0x1044A}, {0x10423,0x1044B},
  {0x10424,0x1044C}, {0x10425,0x1044D}, {0x10426,0x1044E}, {0x10427,0x1044F}, {0x104B0,0x104D8}, {0x104B1,0x104D9}, {0x104B2,0x104DA}, {0x104B3,0x104DB},
  {0x104B4,0x104DC}, {0x104B5,0x104DD}, {0x104B6,0x104DE}, {0x104B7,0x104DF}, {0x104B8,0x104E0}, {0x104B9,0x104E1}, {0x104BA,0x104E2}, {0x104BB,0x104E3},
  {0x104BC,0x104E4}, {0x104BD,0x104E5}, {0x104BE,0x104E6}, {0x104BF,0x104E7}, {0x104C0,0x104E8}, {0x104C1,0x104E9}, {0x104C2,0x104EA}, {0x104C3,0x104EB},
  {0x104C4,0x104EC}, {0x104C5,0x104ED}, {0x104C6,0x104EE}, {0x104C7,0x104EF}, {0x104C8,0x104F0}, {0x104C9,0x104F1}, {0x104CA,0x104F2}, {0x104CB,0x104F3},
  {0x104CC,0x104F4}, {0x104CD,0x104F5}, {0x104CE,0x104F6}, {0x104CF,0x104F7}, {0x104D0,0x104F8}, {0x104D1,0x104F9}, {0x104D2,0x104FA}, {0x104D3,0x104FB},
  {0x10570,0x10597}, {0x10571,0x10598}, {0x10572,0x10599}, {0x10573,0x1059A}, {0x10574,0x1059B}, {0x10575,0x1059C}, {0x10576,0x1059D}, {0x10577,0x1059E},
  {0x10578,0x1059F}, {0x10579,0x105A0}, {0x1057A,0x105A1}, {0x1057C,0x105A3}, {0x1057D,0x105A4}, {0x1057E,0x105A5}, {0x1057F,0x105A6}, {0x10580,0x105A7},
  {0x10581,0x105A8}, {0x10582,0x105A9}, {0x10583,0x105AA}, {0x10584,0x105AB}, {0x10585,0x105AC}, {0x10586,0x105AD}, {0x10587,0x105AE}, {0x10588,0x105AF},
  {0x10589,0x105B0}, {0x1058A,0x105B1}, {0x1058C,0x105B3}, {0x1058D,0x105B4}, {0x1058E,0x105B5}, {0x1058F,0x105B6}, {0x10590,0x105B7}, {0x10591,0x105B8},
  {0x10592,0x105B9}, {0x10594,0x105BB}, {0x10595,0x105BC}, {0x10C80,0x10CC0}, {0x10C81,0x10CC1}, {0x10C82,0x10CC2}, {0x10C83,0x10CC3}, {0x10C84,0x10CC4},
  {0x10C85,0x10CC5}, {0x10C86,0x10CC6}, {0x10C87,0x10CC7}, {0x10C88,0x10CC8}, {0x10C89,0x10CC9}, {0x10C8A,0x10CCA}, {0x10C8B,0x10CCB}, {0x10C8C,0x10CCC},
  {0x10C8D,0x10CCD}, {0x10C8E,0x10CCE}, {0x10C8F,0x10CCF}, {0x10C90,0x10CD0}, {0x10C91,0x10CD1}, {0x10C92,0x10CD2}, {0x10C93,0x10CD3}, {0x10C94,0x10CD4},
  {0x10C95,0x10CD5}, {0x10C96,0x10CD6}, {0x10C97,0x10CD7}, {0x10C98,0x10CD8}, {0x10C99,0x10CD9}, {0x10C9A,0x10CDA}, {0x10C9B,0x10CDB}, {0x10C9C,0x10CDC},
  {0x10C9D,0x10CDD}, {0x10C9E,0x10CDE}, {0x10C9F,0x10CDF}, {0x10CA0,0x10CE0}, {0x10CA1,0x10CE1}, {0x10CA2,0x10CE2}, {0x10CA3,0x10CE3}, {0x10CA4,0x10CE4},
  {0x10CA5,0x10CE5}, {0x10CA6,0x10CE6}, {0x10CA7,0x10CE7}, {0x10CA8,0x10CE8}, {0x10CA9,0x10CE9}, {0x10CAA,0x10CEA}, {0x10CAB,0x10CEB}, {0x10CAC,0x10CEC},
  {0x10CAD,0x10CED}, {0x10CAE,0x10CEE}, {0x10CAF,0x10CEF}, {0x10CB0,0x10CF0}, {0x10CB1,0x10CF1}, {0x10CB2,0x10CF2}, {0x118A0,0x118C0}, {0x118A1,0x118C1},
  {0x118A2,0x118C2}, {0x118A3,0x118C3}, {0x118A4,0x118C4}, {0x118A5,0x118C5}, {0x118A6,0x118C6}, {0x118A7,0x118C7}, {0x118A8,0x118C8}, {0x118A9,0x118C9},
  {0x118AA,0x118CA}, {0x118AB,0x118CB}, {0x118AC,0x118CC}, {0x118AD,0x118CD}, {0x118AE,0x118CE}, {0x118AF,0x118CF}, {0x118B0,0x118D0}, {0x118B1,0x118D1},
  {0x118B2,0x118D2}, {0x118B3,0x118D3}, {0x118B4,0x118D4}, {0x118B5,0x118D5}, {0x118B6,0x118D6}, {0x118B7,0x118D7}, {0x118B8,0x118D8}, {0x118B9,0x118D9},
  {0x118BA,0x118DA}, {0x118BB,0x118DB}, {0x118BC,0x118DC}, {0x118BD,0x118DD}, {0x118BE,0x118DE}, {0x118BF,0x118DF}, {0x16E40,0x16E60}, {0x16E41,0x16E61},
  {0x16E42,0x16E62}, {0x16E43,0x16E63}, {0x16E44,0x16E64}, {0x16E45,0x16E65}, {0x16E46,0x16E66}, {0x16E47,0x16E67}, {0x16E48,0x16E68}, {0x16E49,0x16E69},
  {0x16E4A,0x16E6A}, {0x16E4B,0x16E6B}, {0x16E4C,0x16E6C}, {0x16E4D,0x16E6D}, {0x16E4E,0x16E6E}, {0x16E4F,0x16E6F}, {0x16E50,0x16E70}, {0x16E51,0x16E71},
  {0x16E52,0x16E72}, {0x16E53,0x16E73}, {0x16E54,0x16E74}, {0x16E55,0x16E75}, {0x16E56,0x16E76}, {0x16E57,0x16E77}, {0x16E58,0x16E78}, {0x16E59,0x16E79},
  {0x16E5A,0x16E7A}, {0x16E5B,0x16E7B}, {0x16E5C,0x16E7C}, {0x16E5D,0x16E7D}, {0x16E5E,0x16E7E}, {0x16E5F,0x16E7F}, {0x1E900,0x1E922}, {0x1E901,0x1E923},
  {0x1E902,0x1E924}, {0x1E903,0x1E925}, {0x1E904,0x1E926}, {0x1E905,0x1E927}, {0x1E906,0x1E928}, {0x1E907,0x1E929}, {0x1E908,0x1E92A}, {0x1E909,0x1E92B},
  {0x1E90A,0x1E92C}, {0x1E90B,0x1E92D}, {0x1E90C,0x1E92E}, {0x1E90D,0x1E92F}, {0x1E90E,0x1E930}, {0x1E90F,0x1E931}, {0x1E910,0x1E932}, {0x1E911,0x1E933},
  {0x1E912,0x1E934}, {0x1E913,0x1E935}, {0x1E914,0x1E936}, {0x1E915,0x1E937}, {0x1E916,0x1E938}, {0x1E917,0x1E939}, {0x1E918,0x1E93A}, {0x1E919,0x1E93B},
  {0x1E91A,0x1E93C}, {0x1E91B,0x1E93D}, {0x1E91C,0x1E93E}, {0x1E91D,0x1E93F}, {0x1E91E,0x1E940}, {0x1E91F,0x1E941}, {0x1E920,0x1E942}, {0x1E921,0x1E943},
};

/* canonical combining class, non-zero runs */
static const sdx__uccc sdx__uni_ccc[382] = {
  {0x300,0x314,230}, {0x315,0x315,232}, {0x316,0x319,220}, {0x31A,0x31A,232}, {0x31B,0x31B,216}, {0x31C,0x320,220},
  {0x321,0x322,202}, {0x323,0x326,220}, {0x327,0x328,202}, {0x329,0x333,220}, {0x334,0x338,1}, {0x339,0x33C,220},
  {0x33D,0x344,230}, {0x345,0x345,240}, {0x346,0x346,230}, {0x347,0x349,220}, {0x34A,0x34C,230}, {0x34D,0x34E,220},
  {0x350,0x352,230}, {0x353,0x356,220}, {0x357,0x357,230}, {0x358,0x358,232}, {0x359,0x35A,220}, {0x35B,0x35B,230},
  {0x35C,0x35C,233}, {0x35D,0x35E,234}, {0x35F,0x35F,233}, {0x360,0x361,234}, {0x362,0x362,233}, {0x363,0x36F,230},
  {0x483,0x487,230}, {0x591,0x591,220}, {0x592,0x595,230}, {0x596,0x596,220}, {0x597,0x599,230}, {0x59A,0x59A,222},
  {0x59B,0x59B,220}, {0x59C,0x5A1,230}, {0x5A2,0x5A7,220}, {0x5A8,0x5A9,230}, {0x5AA,0x5AA,220}, {0x5AB,0x5AC,230},
  {0x5AD,0x5AD,222}, {0x5AE,0x5AE,228}, {0x5AF,0x5AF,230}, {0x5B0,0x5B0,10}, {0x5B1,0x5B1,11}, {0x5B2,0x5B2,12},
  {0x5B3,0x5B3,13}, {0x5B4,0x5B4,14}, {0x5B5,0x5B5,15}, {0x5B6,0x5B6,16}, {0x5B7,0x5B7,17}, {0x5B8,0x5B8,18},
  {0x5B9,0x5BA,19}, {0x5BB,0x5BB,20}, {0x5BC,0x5BC,21}, {0x5BD,0x5BD,22}, {0x5BF,0x5BF,23}, {0x5C1,0x5C1,24},
  {0x5C2,0x5C2,25}, {0x5C4,0x5C4,230}, {0x5C5,0x5C5,220}, {0x5C7,0x5C7,18}, {0x610,0x617,230}, {0x618,0x618,30},
  {0x619,0x619,31}, {0x61A,0x61A,32}, {0x64B,0x64B,27}, {0x64C,0x64C,28}, {0x64D,0x64D,29}, {0x64E,0x64E,30},
  {0x64F,0x64F,31}, {0x650,0x650,32}, {0x651,0x651,33}, {0x652,0x652,34}, {0x653,0x654,230}, {0x655,0x656,220},
  {0x657,0x65B,230}, {0x65C,0x65C,220}, {0x65D,0x65E,230}, {0x65F,0x65F,220}, {0x670,0x670,35}, {0x6D6,0x6DC,230},
  {0x6DF,0x6E2,230}, {0x6E3,0x6E3,220}, {0x6E4,0x6E4,230}, {0x6E7,0x6E8,230}, {0x6EA,0x6EA,220}, {0x6EB,0x6EC,230},
  {0x6ED,0x6ED,220}, {0x711,0x711,36}, {0x730,0x730,230}, {0x731,0x731,220}, {0x732,0x733,230}, {0x734,0x734,220},
  {0x735,0x736,230}, {0x737,0x739,220}, {0x73A,0x73A,230}, {0x73B,0x73C,220}, {0x73D,0x73D,230}, {0x73E,0x73E,220},
  {0x73F,0x741,230}, {0x742,0x742,220}, {0x743,0x743,230}, {0x744,0x744,220}, {0x745,0x745,230}, {0x746,0x746,220},
  {0x747,0x747,230}, {0x748,0x748,220}, {0x749,0x74A,230}, {0x7EB,0x7F1,230}, {0x7F2,0x7F2,220}, {0x7F3,0x7F3,230},
  {0x7FD,0x7FD,220}, {0x816,0x819,230}, {0x81B,0x823,230}, {0x825,0x827,230}, {0x829,0x82D,230}, {0x859,0x85B,220},
  {0x898,0x898,230}, {0x899,0x89B,220}, {0x89C,0x89F,230}, {0x8CA,0x8CE,230}, {0x8CF,0x8D3,220}, {0x8D4,0x8E1,230},
  {0x8E3,0x8E3,220}, {0x8E4,0x8E5,230}, {0x8E6,0x8E6,220}, {0x8E7,0x8E8,230}, {0x8E9,0x8E9,220}, {0x8EA,0x8EC,230},
  {0x8ED,0x8EF,220}, {0x8F0,0x8F0,27}, {0x8F1,0x8F1,28}, {0x8F2,0x8F2,29}, {0x8F3,0x8F5,230}, {0x8F6,0x8F6,220},
  {0x8F7,0x8F8,230}, {0x8F9,0x8FA,220}, {0x8FB,0x8FF,230}, {0x93C,0x93C,7}, {0x94D,0x94D,9}, {0x951,0x951,230},
  {0x952,0x952,220}, {0x953,0x954,230}, {0x9BC,0x9BC,7}, {0x9CD,0x9CD,9}, {0x9FE,0x9FE,230}, {0xA3C,0xA3C,7},
  {0xA4D,0xA4D,9}, {0xABC,0xABC,7}, {0xACD,0xACD,9}, {0xB3C,0xB3C,7}, {0xB4D,0xB4D,9}, {0xBCD,0xBCD,9},
  {0xC3C,0xC3C,7}, {0xC4D,0xC4D,9}, {0xC55,0xC55,84}, {0xC56,0xC56,91}, {0xCBC,0xCBC,7}, {0xCCD,0xCCD,9},
  {0xD3B,0xD3C,9}, {0xD4D,0xD4D,9}, {0xDCA,0xDCA,9}, {0xE38,0xE39,103}, {0xE3A,0xE3A,9}, {0xE48,0xE4B,107},
  {0xEB8,0xEB9,118}, {0xEBA,0xEBA,9}, {0xEC8,0xECB,122}, {0xF18,0xF19,220}, {0xF35,0xF35,220}, {0xF37,0xF37,220},
  {0xF39,0xF39,216}, {0xF71,0xF71,129}, {0xF72,0xF72,130}, {0xF74,0xF74,132}, {0xF7A,0xF7D,130}, {0xF80,0xF80,130},
  {0xF82,0xF83,230}, {0xF84,0xF84,9}, {0xF86,0xF87,230}, {0xFC6,0xFC6,220}, {0x1037,0x1037,7}, {0x1039,0x103A,9},
  {0x108D,0x108D,220}, {0x135D,0x135F,230}, {0x1714,0x1715,9}, {0x1734,0x1734,9}, {0x17D2,0x17D2,9}, {0x17DD,0x17DD,230},
  {0x18A9,0x18A9,228}, {0x1939,0x1939,222}, {0x193A,0x193A,230}, {0x193B,0x193B,220}, {0x1A17,0x1A17,230}, {0x1A18,0x1A18,220},
  {0x1A60,0x1A60,9}, {0x1A75,0x1A7C,230}, {0x1A7F,0x1A7F,220}, {0x1AB0,0x1AB4,230}, {0x1AB5,0x1ABA,220}, {0x1ABB,0x1ABC,230},
  {0x1ABD,0x1ABD,220}, {0x1ABF,0x1AC0,220}, {0x1AC1,0x1AC2,230}, {0x1AC3,0x1AC4,220}, {0x1AC5,0x1AC9,230}, {0x1ACA,0x1ACA,220},
  {0x1ACB,0x1ACE,230}, {0x1B34,0x1B34,7}, {0x1B44,0x1B44,9}, {0x1B6B,0x1B6B,230}, {0x1B6C,0x1B6C,220}, {0x1B6D,0x1B73,230},
  {0x1BAA,0x1BAB,9}, {0x1BE6,0x1BE6,7}, {0x1BF2,0x1BF3,9}, {0x1C37,0x1C37,7}, {0x1CD0,0x1CD2,230}, {0x1CD4,0x1CD4,1},
  {0x1CD5,0x1CD9,220}, {0x1CDA,0x1CDB,230}, {0x1CDC,0x1CDF,220}, {0x1CE0,0x1CE0,230}, {0x1CE2,0x1CE8,1}, {0x1CED,0x1CED,220},
  {0x1CF4,0x1CF4,230}, {0x1CF8,0x1CF9,230}, {0x1DC0,0x1DC1,230}, {0x1DC2,0x1DC2,220}, {0x1DC3,0x1DC9,230}, {0x1DCA,0x1DCA,220},
  {0x1DCB,0x1DCC,230}, {0x1DCD,0x1DCD,234}, {0x1DCE,0x1DCE,214}, {0x1DCF,0x1DCF,220}, {0x1DD0,0x1DD0,202}, {0x1DD1,0x1DF5,230},
  {0x1DF6,0x1DF6,232}, {0x1DF7,0x1DF8,228}, {0x1DF9,0x1DF9,220}, {0x1DFA,0x1DFA,218}, {0x1DFB,0x1DFB,230}, {0x1DFC,0x1DFC,233},
  {0x1DFD,0x1DFD,220}, {0x1DFE,0x1DFE,230}, {0x1DFF,0x1DFF,220}, {0x20D0,0x20D1,230}, {0x20D2,0x20D3,1}, {0x20D4,0x20D7,230},
  {0x20D8,0x20DA,1}, {0x20DB,0x20DC,230}, {0x20E1,0x20E1,230}, {0x20E5,0x20E6,1}, {0x20E7,0x20E7,230}, {0x20E8,0x20E8,220},
  {0x20E9,0x20E9,230}, {0x20EA,0x20EB,1}, {0x20EC,0x20EF,220}, {0x20F0,0x20F0,230}, {0x2CEF,0x2CF1,230}, {0x2D7F,0x2D7F,9},
  {0x2DE0,0x2DFF,230}, {0x302A,0x302A,218}, {0x302B,0x302B,228}, {0x302C,0x302C,232}, {0x302D,0x302D,222}, {0x302E,0x302F,224},
  {0x3099,0x309A,8}, {0xA66F,0xA66F,230}, {0xA674,0xA67D,230}, {0xA69E,0xA69F,230}, {0xA6F0,0xA6F1,230}, {0xA806,0xA806,9},
  {0xA82C,0xA82C,9}, {0xA8C4,0xA8C4,9}, {0xA8E0,0xA8F1,230}, {0xA92B,0xA92D,220}, {0xA953,0xA953,9}, {0xA9B3,0xA9B3,7},
  {0xA9C0,0xA9C0,9}, {0xAAB0,0xAAB0,230}, {0xAAB2,0xAAB3,230}, {0xAAB4,0xAAB4,220}, {0xAAB7,0xAAB8,230}, {0xAABE,0xAABF,230},
  {0xAAC1,0xAAC1,230}, {0xAAF6,0xAAF6,9}, {0xABED,0xABED,9}, {0xFB1E,0xFB1E,26}, {0xFE20,0xFE26,230}, {0xFE27,0xFE2D,220},
  {0xFE2E,0xFE2F,230}, {0x101FD,0x101FD,220}, {0x102E0,0x102E0,220}, {0x10376,0x1037A,230}, {0x10A0D,0x10A0D,220}, {0x10A0F,0x10A0F,230},
  {0x10A38,0x10A38,230}, {0x10A39,0x10A39,1}, {0x10A3A,0x10A3A,220}, {0x10A3F,0x10A3F,9}, {0x10AE5,0x10AE5,230}, {0x10AE6,0x10AE6,220},
  {0x10D24,0x10D27,230}, {0x10EAB,0x10EAC,230}, {0x10F46,0x10F47,220}, {0x10F48,0x10F4A,230}, {0x10F4B,0x10F4B,220}, {0x10F4C,0x10F4C,230},
  {0x10F4D,0x10F50,220}, {0x10F82,0x10F82,230}, {0x10F83,0x10F83,220}, {0x10F84,0x10F84,230}, {0x10F85,0x10F85,220}, {0x11046,0x11046,9},
  {0x11070,0x11070,9}, {0x1107F,0x1107F,9}, {0x110B9,0x110B9,9}, {0x110BA,0x110BA,7}, {0x11100,0x11102,230}, {0x11133,0x11134,9},
  {0x11173,0x11173,7}, {0x111C0,0x111C0,9}, {0x111CA,0x111CA,7}, {0x11235,0x11235,9}, {0x11236,0x11236,7}, {0x112E9,0x112E9,7},
  {0x112EA,0x112EA,9}, {0x1133B,0x1133C,7}, {0x1134D,0x1134D,9}, {0x11366,0x1136C,230}, {0x11370,0x11374,230}, {0x11442,0x11442,9},
  {0x11446,0x11446,7}, {0x1145E,0x1145E,230}, {0x114C2,0x114C2,9}, {0x114C3,0x114C3,7}, {0x115BF,0x115BF,9}, {0x115C0,0x115C0,7},
  {0x1163F,0x1163F,9}, {0x116B6,0x116B6,9}, {0x116B7,0x116B7,7}, {0x1172B,0x1172B,9}, {0x11839,0x11839,9}, {0x1183A,0x1183A,7},
  {0x1193D,0x1193E,9}, {0x11943,0x11943,7}, {0x119E0,0x119E0,9}, {0x11A34,0x11A34,9}, {0x11A47,0x11A47,9}, {0x11A99,0x11A99,9},
  {0x11C3F,0x11C3F,9}, {0x11D42,0x11D42,7}, {0x11D44,0x11D45,9}, {0x11D97,0x11D97,9}, {0x16AF0,0x16AF4,1}, {0x16B30,0x16B36,230},
  {0x16FF0,0x16FF1,6}, {0x1BC9E,0x1BC9E,1}, {0x1D165,0x1D166,216}, {0x1D167,0x1D169,1}, {0x1D16D,0x1D16D,226}, {0x1D16E,0x1D172,216},
  {0x1D17B,0x1D182,220}, {0x1D185,0x1D189,230}, {0x1D18A,0x1D18B,220}, {0x1D1AA,0x1D1AD,230}, {0x1D242,0x1D244,230}, {0x1E000,0x1E006,230},
  {0x1E008,0x1E018,230}, {0x1E01B,0x1E021,230}, {0x1E023,0x1E024,230}, {0x1E026,0x1E02A,230}, {0x1E130,0x1E136,230}, {0x1E2AE,0x1E2AE,230},
  {0x1E2EC,0x1E2EF,230}, {0x1E8D0,0x1E8D6,220}, {0x1E944,0x1E949,230}, {0x1E94A,0x1E94A,7},
};

/* full canonical decomposition (NFD of one code point), Hangul excluded */
static const sdx__unfd sdx__uni_nfd[2061] = {
  {0xC0,{0x41,0x300,0x0,0x0}}, {0xC1,{0x41,0x301,0x0,0x0}}, {0xC2,{0x41,0x302,0x0,0x0}}, {0xC3,{0x41,0x303,0x0,0x0}},
  {0xC4,{0x41,0x308,0x0,0x0}}, {0xC5,{0x41,0x30A,0x0,0x0}}, {0xC7,{0x43,0x327,0x0,0x0}}, {0xC8,{0x45,0x300,0x0,0x0}},
  {0xC9,{0x45,0x301,0x0,0x0}}, {0xCA,{0x45,0x302,0x0,0x0}}, {0xCB,{0x45,0x308,0x0,0x0}}, {0xCC,{0x49,0x300,0x0,0x0}},
  {0xCD,{0x49,0x301,0x0,0x0}}, {0xCE,{0x49,0x302,0x0,0x0}}, {0xCF,{0x49,0x308,0x0,0x0}}, {0xD1,{0x4E,0x303,0x0,0x0}},
  {0xD2,{0x4F,0x300,0x0,0x0}}, {0xD3,{0x4F,0x301,0x0,0x0}}, {0xD4,{0x4F,0x302,0x0,0x0}}, {0xD5,{0x4F,0x303,0x0,0x0}},
  {0xD6,{0x4F,0x308,0x0,0x0}}, {0xD9,{0x55,0x300,0x0,0x0}}, {0xDA,{0x55,0x301,0x0,0x0}}, {0xDB,{0x55,0x302,0x0,0x0}},
  {0xDC,{0x55,0x308,0x0,0x0}}, {0xDD,{0x59,0x301,0x0,0x0}}, {0xE0,{0x61,0x300,0x0,0x0}}, {0xE1,{0x61,0x301,0x0,0x0}},
  {0xE2,{0x61,0x302,0x0,0x0}}, {0xE3,{0x61,0x303,0x0,0x0}}, {0xE4,{0x61,0x308,0x0,0x0}}, {0xE5,{0x61,0x30A,0x0,0x0}},
  {0xE7,{0x63,0x327,0x0,0x0}}, {0xE8,{0x65,0x300,0x0,0x0}}, {0xE9,{0x65,0x301,0x0,0x0}}, {0xEA,{0x65,0x302,0x0,0x0}},
  {0xEB,{0x65,0x308,0x0,0x0}}, {0xEC,{0x69,0x300,0x0,0x0}}, {0xED,{0x69,0x301,0x0,0x0}}, {0xEE,{0x69,0x302,0x0,0x0}},
  {0xEF,{0x69,0x308,0x0,0x0}}, {0xF1,{0x6E,0x303,0x0,0x0}}, {0xF2,{0x6F,0x300,0x0,0x0}}, {0xF3,{0x6F,0x301,0x0,0x0}},
  {0xF4,{0x6F,0x302,0x0,0x0}}, {0xF5,{0x6F,0x303,0x0,0x0}}, {0xF6,{0x6F,0x308,0x0,0x0}}, {0xF9,{0x75,0x300,0x0,0x0}},
  {0xFA,{0x75,0x301,0x0,0x0}}, {0xFB,{0x75,0x302,0x0,0x0}}, {0xFC,{0x75,0x308,0x0,0x0}}, {0xFD,{0x79,0x301,0x0,0x0}},
  {0xFF,{0x79,0x308,0x0,0x0}}, {0x100,{0x41,0x304,0x0,0x0}}, {0x101,{0x61,0x304,0x0,0x0}}, {0x102,{0x41,0x306,0x0,0x0}},
  {0x103,{0x61,0x306,0x0,0x0}}, {0x104,{0x41,0x328,0x0,0x0}}, {0x105,{0x61,0x328,0x0,0x0}}, {0x106,{0x43,0x301,0x0,0x0}},
  {0x107,{0x63,0x301,0x0,0x0}}, {0x108,{0x43,0x302,0x0,0x0}}, {0x109,{0x63,0x302,0x0,0x0}}, {0x10A,{0x43,0x307,0x0,0x0}},
  {0x10B,{0x63,0x307,0x0,0x0}}, {0x10C,{0x43,0x30C,0x0,0x0}}, {0x10D,{0x63,0x30C,0x0,0x0}}, {0x10E,{0x44,0x30C,0x0,0x0}},
  {0x10F,{0x64,0x30C,0x0,0x0}}, {0x112,{0x45,0x304,0x0,0x0}}, {0x113,{0x65,0x304,0x0,0x0}}, {0x114,{0x45,0x306,0x0,0x0}},
  {0x115,{0x65,0x306,0x0,0x0}}, {0x116,{0x45,0x307,0x0,0x0}}, {0x117,{0x65,0x307,0x0,0x0}}, {0x118,{0x45,0x328,0x0,0x0}},
  {0x119,{0x65,0x328,0x0,0x0}}, {0x11A,{0x45,0x30C,0x0,0x0}}, {0x11B,{0x65,0x30C,0x0,0x0}}, {0x11C,{0x47,0x302,0x0,0x0}},
  {0x11D,{0x67,0x302,0x0,0x0}}, {0x11E,{0x47,0x306,0x0,0x0}}, {0x11F,{0x67,0x306,0x0,0x0}}, {0x120,{0x47,0x307,0x0,0x0}},
  {0x121,{0x67,0x307,0x0,0x0}}, {0x122,{0x47,0x327,0x0,0x0}}, {0x123,{0x67,0x327,0x0,0x0}}, {0x124,{0x48,0x302,0x0,0x0}},
  {0x125,{0x68,0x302,0x0,0x0}}, {0x128,{0x49,0x303,0x0,0x0}}, {0x129,{0x69,0x303,0x0,0x0}}, {0x12A,{0x49,0x304,0x0,0x0}},
  {0x12B,{0x69,0x304,0x0,0x0}}, {0x12C,{0x49,0x306,0x0,0x0}}, {0x12D,{0x69,0x306,0x0,0x0}}, {0x12E,{0x49,0x328,0x0,0x0}},
  {0x12F,{0x69,0x328,0x0,0x0}}, {0x130,{0x49,0x307,0x0,0x0}}, {0x134,{0x4A,0x302,0x0,0x0}}, {0x135,{0x6A,0x302,0x0,0x0}},
  {0x136,{0x4B,0x327,0x0,0x0}}, {0x137,{0x6B,0x327,0x0,0x0}}, {0x139,{0x4C,0x301,0x0,0x0}}, {0x13A,{0x6C,0x301,0x0,0x0}},
  {0x13B,{0x4C,0x327,0x0,0x0}}, {0x13C,{0x6C,0x327,0x0,0x0}}, {0x13D,{0x4C,0x30C,0x0,0x0}}, {0x13E,{0x6C,0x30C,0x0,0x0}},
  {0x143,{0x4E,0x301,0x0,0x0}}, {0x144,{0x6E,0x301,0x0,0x0}}, {0x145,{0x4E,0x327,0x0,0x0}}, {0x146,{0x6E,0x327,0x0,0x0}},
  {0x147,{0x4E,0x30C,0x0,0x0}}, {0x148,{0x6E,0x30C,0x0,0x0}}, {0x14C,{0x4F,0x304,0x0,0x0}}, {0x14D,{0x6F,0x304,0x0,0x0}},
  {0x14E,{0x4F,0x306,0x0,0x0}}, {0x14F,{0x6F,0x306,0x0,0x0}}, {0x150,{0x4F,0x30B,0x0,0x0}}, {0x151,{0x6F,0x30B,0x0,0x0}},
  {0x154,{0x52,0x301,0x0,0x0}}, {0x155,{0x72,0x301,0x0,0x0}}, {0x156,{0x52,0x327,0x0,0x0}}, {0x157,{0x72,0x327,0x0,0x0}},
  {0x158,{0x52,0x30C,0x0,0x0}}, {0x159,{0x72,0x30C,0x0,0x0}}, {0x15A,{0x53,0x301,0x0,0x0}}, {0x15B,{0x73,0x301,0x0,0x0}},
  {0x15C,{0x53,0x302,0x0,0x0}}, {0x15D,{0x73,0x302,0x0,0x0}}, {0x15E,{0x53,0x327,0x0,0x0}}, {0x15F,{0x73,0x327,0x0,0x0}},
  {0x160,{0x53,0x30C,0x0,0x0}}, {0x161,{0x73,0x30C,0x0,0x0}}, {0x162,{0x54,0x327,0x0,0x0}}, {0x163,{0x74,0x327,0x0,0x0}},
  {0x164,{0x54,0x30C,0x0,0x0}}, {0x165,{0x74,0x30C,0x0,0x0}}, {0x168,{0x55,0x303,0x0,0x0}}, {0x169,{0x75,0x303,0x0,0x0}},
  {0x16A,{0x55,0x304,0x0,0x0}}, {0x16B,{0x75,0x304,0x0,0x0}}, {0x16C,{0x55,0x306,0x0,0x0}}, {0x16D,{0x75,0x306,0x0,0x0}},
  {0x16E,{0x55,0x30A,0x0,0x0}}, {0x16F,{0x75,0x30A,0x0,0x0}}, {0x170,{0x55,0x30B,0x0,0x0}}, {0x171,{0x75,0x30B,0x0,0x0}},
  {0x172,{0x55,0x328,0x0,0x0}}, {0x173,{0x75,0x328,0x0,0x0}}, {0x174,{0x57,0x302,0x0,0x0}}, {0x175,{0x77,0x302,0x0,0x0}},
  {0x176,{0x59,0x302,0x0,0x0}}, {0x177,{0x79,0x302,0x0,0x0}}, {0x178,{0x59,0x308,0x0,0x0}}, {0x179,{0x5A,0x301,0x0,0x0}},
  {0x17A,{0x7A,0x301,0x0,0x0}}, {0x17B,{0x5A,0x307,0x0,0x0}}, {0x17C,{0x7A,0x307,0x0,0x0}}, {0x17D,{0x5A,0x30C,0x0,0x0}},
  {0x17E,{0x7A,0x30C,0x0,0x0}}, {0x1A0,{0x4F,0x31B,0x0,0x0}}, {0x1A1,{0x6F,0x31B,0x0,0x0}}, {0x1AF,{0x55,0x31B,0x0,0x0}},
  {0x1B0,{0x75,0x31B,0x0,0x0}}, {0x1CD,{0x41,0x30C,0x0,0x0}}, {0x1CE,{0x61,0x30C,0x0,0x0}}, {0x1CF,{0x49,0x30C,0x0,0x0}},
  {0x1D0,{0x69,0x30C,0x0,0x0}}, {0x1D1,{0x4F,0x30C,0x0,0x0}}, {0x1D2,{0x6F,0x30C,0x0,0x0}}, {0x1D3,{0x55,0x30C,0x0,0x0}},
  {0x1D4,{0x75,0x30C,0x0,0x0}}, {0x1D5,{0x55,0x308,0x304,0x0}}, {0x1D6,{0x75,0x308,0x304,0x0}}, {0x1D7,{0x55,0x308,0x301,0x0}},
  {0x1D8,{0x75,0x308,0x301,0x0}}, {0x1D9,{0x55,0x308,0x30C,0x0}}, {0x1DA,{0x75,0x308,0x30C,0x0}}, {0x1DB,{0x55,0x308,0x300,0x0}},
  {0x1DC,{0x75,0x308,0x300,0x0}}, {0x1DE,{0x41,0x308,0x304,0x0}}, {0x1DF,{0x61,0x308,0x304,0x0}}, {0x1E0,{0x41,0x307,0x304,0x0}},
  {0x1E1,{0x61,0x307,0x304,0x0}}, {0x1E2,{0xC6,0x304,0x0,0x0}}, {0x1E3,{0xE6,0x304,0x0,0x0}}, {0x1E6,{0x47,0x30C,0x0,0x0}},
  {0x1E7,{0x67,0x30C,0x0,0x0}}, {0x1E8,{0x4B,0x30C,0x0,0x0}}, {0x1E9,{0x6B,0x30C,0x0,0x0}}, {0x1EA,{0x4F,0x328,0x0,0x0}},
  {0x1EB,{0x6F,0x328,0x0,0x0}}, {0x1EC,{0x4F,0x328,0x304,0x0}}, {0x1ED,{0x6F,0x328,0x304,0x0}}, {0x1EE,{0x1B7,0x30C,0x0,0x0}},
  {0x1EF,{0x292,0x30C,0x0,0x0}}, {0x1F0,{0x6A,0x30C,0x0,0x0}}, {0x1F4,{0x47,0x301,0x0,0x0}}, {0x1F5,{0x67,0x301,0x0,0x0}},
  {0x1F8,{0x4E,0x300,0x0,0x0}}, {0x1F9,{0x6E,0x300,0x0,0x0}}, {0x1FA,{0x41,0x30A,0x301,0x0}}, {0x1FB,{0x61,0x30A,0x301,0x0}},
  {0x1FC,{0xC6,0x301,0x0,0x0}}, {0x1FD,{0xE6,0x301,0x0,0x0}}, {0x1FE,{0xD8,0x301,0x0,0x0}}, {0x1FF,{0xF8,0x301,0x0,0x0}},
  {0x200,{0x41,0x30F,0x0,0x0}}, {0x201,{0x61,0x30F,0x0,0x0}}, {0x202,{0x41,0x311,0x0,0x0}}, {0x203,{0x61,0x311,0x0,0x0}},
  {0x204,{0x45,0x30F,0x0,0x0}}, {0x205,{0x65,0x30F,0x0,0x0}}, {0x206,{0x45,0x311,0x0,0x0}}, {0x207,{0x65,0x311,0x0,0x0}},
  {0x208,{0x49,0x30F,0x0,0x0}}, {0x209,{0x69,0x30F,0x0,0x0}}, {0x20A,{0x49,0x311,0x0,0x0}}, {0x20B,{0x69,0x311,0x0,0x0}},
  {0x20C,{0x4F,0x30F,0x0,0x0}}, {0x20D,{0x6F,0x30F,0x0,0x0}}, {0x20E,{0x4F,0x311,0x0,0x0}}, {0x20F,{0x6F,0x311,0x0,0x0}},
  {0x210,{0x52,0x30F,0x0,0x0}}, {0x211,{0x72,0x30F,0x0,0x0}}, {0x212,{0x52,0x311,0x0,0x0}}, {0x213,{0x72,0x311,0x0,0x0}},
  {0x214,{0x55,0x30F,0x0,0x0}}, {0x215,{0x75,0x30F,0x0,0x0}}, {0x216,{0x55,0x311,0x0,0x0}}, {0x217,{0x75,0x311,0x0,0x0}},
  {0x218,{0x53,0x326,0x0,0x0}}, {0x219,{0x73,0x326,0x0,0x0}}, {0x21A,{0x54,0x326,0x0,0x0}}, {0x21B,{0x74,0x326,0x0,0x0}},
  {0x21E,{0x48,0x30C,0x0,0x0}}, {0x21F,{0x68,0x30C,0x0,0x0}}, {0x226,{0x41,0x307,0x0,0x0}}, {0x227,{0x61,0x307,0x0,0x0}},
  {0x228,{0x45,0x327,0x0,0x0}}, {0x229,{0x65,0x327,0x0,0x0}}, {0x22A,{0x4F,0x308,0x304,0x0}}, {0x22B,{0x6F,0x308,0x304,0x0}},
  {0x22C,{0x4F,0x303,0x304,0x0}}, {0x22D,{0x6F,0x303,0x304,0x0}}, {0x22E,{0x4F,0x307,0x0,0x0}}, {0x22F,{0x6F,0x307,0x0,0x0}},
  {0x230,{0x4F,0x307,0x304,0x0}}, {0x231,{0x6F,0x307,0x304,0x0}}, {0x232,{0x59,0x304,0x0,0x0}}, {0x233,{0x79,0x304,0x0,0x0}},
  {0x340,{0x300,0x0,0x0,0x0}}, {0x341,{0x301,0x0,0x0,0x0}}, {0x343,{0x313,0x0,0x0,0x0}}, {0x344,{0x308,0x301,0x0,0x0}},
  {0x374,{0x2B9,0x0,0x0,0x0}}, {0x37E,{0x3B,0x0,0x0,0x0}}, {0x385,{0xA8,0x301,0x0,0x0}}, {0x386,{0x391,0x301,0x0,0x0}},
  {0x387,{0xB7,0x0,0x0,0x0}}, {0x388,{0x395,0x301,0x0,0x0}}, {0x389,{0x397,0x301,0x0,0x0}}, {0x38A,{0x399,0x301,0x0,0x0}},
  {0x38C,{0x39F,0x301,0x0,0x0}}, {0x38E,{0x3A5,0x301,0x0,0x0}}, {0x38F,{0x3A9,0x301,0x0,0x0}}, {0x390,{0x3B9,0x308,0x301,0x0}},
  {0x3AA,{0x399,0x308,0x0,0x0}}, {0x3AB,{0x3A5,0x308,0x0,0x0}}, {0x3AC,{0x3B1,0x301,0x0,0x0}}, {0x3AD,{0x3B5,0x301,0x0,0x0}},
  {0x3AE,{0x3B7,0x301,0x0,0x0}}, {0x3AF,{0x3B9,0x301,0x0,0x0}}, {0x3B0,{0x3C5,0x308,0x301,0x0}}, {0x3CA,{0x3B9,0x308,0x0,0x0}},
  {0x3CB,{0x3C5,0x308,0x0,0x0}}, {0x3CC,{0x3BF,0x301,0x0,0x0}}, {0x3CD,{0x3C5,0x301,0x0,0x0}}, {0x3CE,{0x3C9,0x301,0x0,0x0}},
  {0x3D3,{0x3D2,0x301,0x0,0x0}}, {0x3D4,{0x3D2,0x308,0x0,0x0}}, {0x400,{0x415,0x300,0x0,0x0}}, {0x401,{0x415,0x308,0x0,0x0}},
  {0x403,{0x413,0x301,0x0,0x0}}, {0x407,{0x406,0x308,0x0,0x0}}, {0x40C,{0x41A,0x301,0x0,0x0}}, {0x40D,{0x418,0x300,0x0,0x0}},
  {0x40E,{0x423,0x306,0x0,0x0}}, {0x419,{0x418,0x306,0x0,0x0}}, {0x439,{0x438,0x306,0x0,0x0}}, {0x450,{0x435,0x300,0x0,0x0}},
  {0x451,{0x435,0x308,0x0,0x0}}, {0x453,{0x433,0x301,0x0,0x0}}, {0x457,{0x456,0x308,0x0,0x0}}, {0x45C,{0x43A,0x301,0x0,0x0}},
  {0x45D,{0x438,0x300,0x0,0x0}}, {0x45E,{0x443,0x306,0x0,0x0}}, {0x476,{0x474,0x30F,0x0,0x0}}, {0x477,{0x475,0x30F,0x0,0x0}},
  {0x4C1,{0x416,0x306,0x0,0x0}}, {0x4C2,{0x436,0x306,0x0,0x0}}, {0x4D0,{0x410,0x306,0x0,0x0}}, {0x4D1,{0x430,0x306,0x0,0x0}},
  {0x4D2,{0x410,0x308,0x0,0x0}}, {0x4D3,{0x430,0x308,0x0,0x0}}, {0x4D6,{0x415,0x306,0x0,0x0}}, {0x4D7,{0x435,0x306,0x0,0x0}},
  {0x4DA,{0x4D8,0x308,0x0,0x0}}, {0x4DB,{0x4D9,0x308,0x0,0x0}}, {0x4DC,{0x416,0x308,0x0,0x0}}, {0x4DD,{0x436,0x308,0x0,0x0}},
  {0x4DE,{0x417,0x308,0x0,0x0}}, {0x4DF,{0x437,0x308,0x0,0x0}}, {0x4E2,{0x418,0x304,0x0,0x0}}, {0x4E3,{0x438,0x304,0x0,0x0}},
  {0x4E4,{0x418,0x308,0x0,0x0}}, {0x4E5,{0x438,0x308,0x0,0x0}}, {0x4E6,{0x41E,0x308,0x0,0x0}}, {0x4E7,{0x43E,0x308,0x0,0x0}},
  {0x4EA,{0x4E8,0x308,0x0,0x0}}, {0x4EB,{0x4E9,0x308,0x0,0x0}}, {0x4EC,{0x42D,0x308,0x0,0x0}}, {0x4ED,{0x44D,0x308,0x0,0x0}},
  {0x4EE,{0x423,0x304,0x0,0x0}}, {0x4EF,{0x443,0x304,0x0,0x0}}, {0x4F0,{0x423,0x308,0x0,0x0}}, {0x4F1,{0x443,0x308,0x0,0x0}},
  {0x4F2,{0x423,0x30B,0x0,0x0}}, {0x4F3,{0x443,0x30B,0x0,0x0}}, {0x4F4,{0x427,0x308,0x0,0x0}}, {0x4F5,{0x447,0x308,0x0,0x0}},
  {0x4F8,{0x42B,0x308,0x0,0x0}}, {0x4F9,{0x44B,0x308,0x0,0x0}}, {0x622,{0x627,0x653,0x0,0x0}}, {0x623,{0x627,0x654,0x0,0x0}},
  {0x624,{0x648,0x654,0x0,0x0}}, {0x625,{0x627,0x655,0x0,0x0}}, {0x626,{0x64A,0x654,0x0,0x0}}, {0x6C0,{0x6D5,0x654,0x0,0x0}},
  {0x6C2,{0x6C1,0x654,0x0,0x0}}, {0x6D3,{0x6D2,0x654,0x0,0x0}}, {0x929,{0x928,0x93C,0x0,0x0}}, {0x931,{0x930,0x93C,0x0,0x0}},
  {0x934,{0x933,0x93C,0x0,0x0}}, {0x958,{0x915,0x93C,0x0,0x0}}, {0x959,{0x916,0x93C,0x0,0x0}}, {0x95A,{0x917,0x93C,0x0,0x0}},
  {0x95B,{0x91C,0x93C,0x0,0x0}}, {0x95C,{0x921,0x93C,0x0,0x0}}, {0x95D,{0x922,0x93C,0x0,0x0}}, {0x95E,{0x92B,0x93C,0x0,0x0}},
  {0x95F,{0x92F,0x93C,0x0,0x0}}, {0x9CB,{0x9C7,0x9BE,0x0,0x0}}, {0x9CC,{0x9C7,0x9D7,0x0,0x0}}, {0x9DC,{0x9A1,0x9BC,0x0,0x0}},
  {0x9DD,{0x9A2,0x9BC,0x0,0x0}}, {0x9DF,{0x9AF,0x9BC,0x0,0x0}}, {0xA33,{0xA32,0xA3C,0x0,0x0}}, {0xA36,{0xA38,0xA3C,0x0,0x0}},
  {0xA59,{0xA16,0xA3C,0x0,0x0}}, {0xA5A,{0xA17,0xA3C,0x0,0x0}}, {0xA5B,{0xA1C,0xA3C,0x0,0x0}}, {0xA5E,{0xA2B,0xA3C,0x0,0x0}},
  {0xB48,{0xB47,0xB56,0x0,0x0}}, {0xB4B,{0xB47,0xB3E,0x0,0x0}}, {0xB4C,{0xB47,0xB57,0x0,0x0}}, {0xB5C,{0xB21,0xB3C,0x0,0x0}},
  {0xB5D,{0xB22,0xB3C,0x0,0x0}}, {0xB94,{0xB92,0xBD7,0x0,0x0}}, {0xBCA,{0xBC6,0xBBE,0x0,0x0}}, {0xBCB,{0xBC7,0xBBE,0x0,0x0}},
  {0xBCC,{0xBC6,0xBD7,0x0,0x0}}, {0xC48,{0xC46,0xC56,0x0,0x0}}, {0xCC0,{0xCBF,0xCD5,0x0,0x0}}, {0xCC7,{0xCC6,0xCD5,0x0,0x0}},
  {0xCC8,{0xCC6,0xCD6,0x0,0x0}}, {0xCCA,{0xCC6,0xCC2,0x0,0x0}}, {0xCCB,{0xCC6,0xCC2,0xCD5,0x0}}, {0xD4A,{0xD46,0xD3E,0x0,0x0}},
  {0xD4B,{0xD47,0xD3E,0x0,0x0}}, {0xD4C,{0xD46,0xD57,0x0,0x0}}, {0xDDA,{0xDD9,0xDCA,0x0,0x0}}, {0xDDC,{0xDD9,0xDCF,0x0,0x0}},
  {0xDDD,{0xDD9,0xDCF,0xDCA,0x0}}, {0xDDE,{0xDD9,0xDDF,0x0,0x0}}, {0xF43,{0xF42,0xFB7,0x0,0x0}}, {0xF4D,{0xF4C,0xFB7,0x0,0x0}},
  {0xF52,{0xF51,0xFB7,0x0,0x0}}, {0xF57,{0xF56,0xFB7,0x0,0x0}}, {0xF5C,{0xF5B,0xFB7,0x0,0x0}}, {0xF69,{0xF40,0xFB5,0x0,0x0}},
  {0xF73,{0xF71,0xF72,0x0,0x0}}, {0xF75,{0xF71,0xF74,0x0,0x0}}, {0xF76,{0xFB2,0xF80,0x0,0x0}}, {0xF78,{0xFB3,0xF80,0x0,0x0}},
  {0xF81,{0xF71,0xF80,0x0,0x0}}, {0xF93,{0xF92,0xFB7,0x0,0x0}}, {0xF9D,{0xF9C,0xFB7,0x0,0x0}}, {0xFA2,{0xFA1,0xFB7,0x0,0x0}},
  {0xFA7,{0xFA6,0xFB7,0x0,0x0}}, {0xFAC,{0xFAB,0xFB7,0x0,0x0}}, {0xFB9,{0xF90,0xFB5,0x0,0x0}}, {0x1026,{0x1025,0x102E,0x0,0x0}},
  {0x1B06,{0x1B05,0x1B35,0x0,0x0}}, {0x1B08,{0x1B07,0x1B35,0x0,0x0}}, {0x1B0A,{0x1B09,0x1B35,0x0,0x0}}, {0x1B0C,{0x1B0B,0x1B35,0x0,0x0}},
  {0x1B0E,{0x1B0D,0x1B35,0x0,0x0}}, {0x1B12,{0x1B11,0x1B35,0x0,0x0}}, {0x1B3B,{0x1B3A,0x1B35,0x0,0x0}}, {0x1B3D,{0x1B3C,0x1B35,0x0,0x0}},
  {0x1B40,{0x1B3E,0x1B35,0x0,0x0}}, {0x1B41,{0x1B3F,0x1B35,0x0,0x0}}, {0x1B43,{0x1B42,0x1B35,0x0,0x0}}, {0x1E00,{0x41,0x325,0x0,0x0}},
  {0x1E01,{0x61,0x325,0x0,0x0}}, {0x1E02,{0x42,0x307,0x0,0x0}}, {0x1E03,{0x62,0x307,0x0,0x0}}, {0x1E04,{0x42,0x323,0x0,0x0}},
  {0x1E05,{0x62,0x323,0x0,0x0}}, {0x1E06,{0x42,0x331,0x0,0x0}}, {0x1E07,{0x62,0x331,0x0,0x0}}, {0x1E08,{0x43,0x327,0x301,0x0}},
  {0x1E09,{0x63,0x327,0x301,0x0}}, {0x1E0A,{0x44,0x307,0x0,0x0}}, {0x1E0B,{0x64,0x307,0x0,0x0}}, {0x1E0C,{0x44,0x323,0x0,0x0}},
  {0x1E0D,{0x64,0x323,0x0,0x0}}, {0x1E0E,{0x44,0x331,0x0,0x0}}, {0x1E0F,{0x64,0x331,0x0,0x0}}, {0x1E10,{0x44,0x327,0x0,0x0}},
  {0x1E11,{0x64,0x327,0x0,0x0}}, {0x1E12,{0x44,0x32D,0x0,0x0}}, {0x1E13,{0x64,0x32D,0x0,0x0}}, {0x1E14,{0x45,0x304,0x300,0x0}},
  {0x1E15,{0x65,0x304,0x300,0x0}}, {0x1E16,{0x45,0x304,0x301,0x0}}, {0x1E17,{0x65,0x304,0x301,0x0}}, {0x1E18,{0x45,0x32D,0x0,0x0}},
  {0x1E19,{0x65,0x32D,0x0,0x0}}, {0x1E1A,{0x45,0x330,0x0,0x0}}, {0x1E1B,{0x65,0x330,0x0,0x0}}, {0x1E1C,{0x45,0x327,0x306,0x0}},
  {0x1E1D,{0x65,0x327,0x306,0x0}}, {0x1E1E,{0x46,0x307,0x0,0x0}}, {0x1E1F,{0x66,0x307,0x0,0x0}}, {0x1E20,{0x47,0x304,0x0,0x0}},
  {0x1E21,{0x67,0x304,0x0,0x0}}, {0x1E22,{0x48,0x307,0x0,0x0}}, {0x1E23,{0x68,0x307,0x0,0x0}}, {0x1E24,{0x48,0x323,0x0,0x0}},
  {0x1E25,{0x68,0x323,0x0,0x0}}, {0x1E26,{0x48,0x308,0x0,0x0}}, {0x1E27,{0x68,0x308,0x0,0x0}}, {0x1E28,{0x48,0x327,0x0,0x0}},
  {0x1E29,{0x68,0x327,0x0,0x0}}, {0x1E2A,{0x48,0x32E,0x0,0x0}}, {0x1E2B,{0x68,0x32E,0x0,0x0}}, {0x1E2C,{0x49,0x330,0x0,0x0}},
  {0x1E2D,{0x69,0x330,0x0,0x0}}, {0x1E2E,{0x49,0x308,0x301,0x0}}, {0x1E2F,{0x69,0x308,0x301,0x0}}, {0x1E30,{0x4B,0x301,0x0,0x0}},
  {0x1E31,{0x6B,0x301,0x0,0x0}}, {0x1E32,{0x4B,0x323,0x0,0x0}}, {0x1E33,{0x6B,0x323,0x0,0x0}}, {0x1E34,{0x4B,0x331,0x0,0x0}},
  {0x1E35,{0x6B,0x331,0x0,0x0}}, {0x1E36,{0x4C,0x323,0x0,0x0}}, {0x1E37,{0x6C,0x323,0x0,0x0}}, {0x1E38,{0x4C,0x323,0x304,0x0}},
  {0x1E39,{0x6C,0x323,0x304,0x0}}, {0x1E3A,{0x4C,0x331,0x0,0x0}}, {0x1E3B,{0x6C,0x331,0x0,0x0}}, {0x1E3C,{0x4C,0x32D,0x0,0x0}},
  {0x1E3D,{0x6C,0x32D,0x0,0x0}}, {0x1E3E,{0x4D,0x301,0x0,0x0}}, {0x1E3F,{0x6D,0x301,0x0,0x0}}, {0x1E40,{0x4D,0x307,0x0,0x0}},
  {0x1E41,{0x6D,0x307,0x0,0x0}}, {0x1E42,{0x4D,0x323,0x0,0x0}}, {0x1E43,{0x6D,0x323,0x0,0x0}}, {0x1E44,{0x4E,0x307,0x0,0x0}},
  {0x1E45,{0x6E,0x307,0x0,0x0}}, {0x1E46,{0x4E,0x323,0x0,0x0}}, {0x1E47,{0x6E,0x323,0x0,0x0}}, {0x1E48,{0x4E,0x331,0x0,0x0}},
  {0x1E49,{0x6E,0x331,0x0,0x0}}, {0x1E4A,{0x4E,0x32D,0x0,0x0}}, {0x1E4B,{0x6E,0x32D,0x0,0x0}}, {0x1E4C,{0x4F,0x303,0x301,0x0}},
  {0x1E4D,{0x6F,0x303,0x301,0x0}}, {0x1E4E,{0x4F,0x303,0x308,0x0}}, {0x1E4F,{0x6F,0x303,0x308,0x0}}, {0x1E50,{0x4F,0x304,0x300,0x0}},
  {0x1E51,{0x6F,0x304,0x300,0x0}}, {0x1E52,{0x4F,0x304,0x301,0x0}}, {0x1E53,{0x6F,0x304,0x301,0x0}}, {0x1E54,{0x50,0x301,0x0,0x0}},
  {0x1E55,{0x70,0x301,0x0,0x0}}, {0x1E56,{0x50,0x307,0x0,0x0}}, {0x1E57,{0x70,0x307,0x0,0x0}}, {0x1E58,{0x52,0x307,0x0,0x0}},
  {0x1E59,{0x72,0x307,0x0,0x0}}, {0x1E5A,{0x52,0x323,0x0,0x0}}, {0x1E5B,{0x72,0x323,0x0,0x0}}, {0x1E5C,{0x52,0x323,0x304,0x0}},
  {0x1E5D,{0x72,0x323,0x304,0x0}}, {0x1E5E,{0x52,0x331,0x0,0x0}}, {0x1E5F,{0x72,0x331,0x0,0x0}}, {0x1E60,{0x53,0x307,0x0,0x0}},
  {0x1E61,{0x73,0x307,0x0,0x0}}, {0x1E62,{0x53,0x323,0x0,0x0}}, {0x1E63,{0x73,0x323,0x0,0x0}}, {0x1E64,{0x53,0x301,0x307,0x0}},
  {0x1E65,{0x73,0x301,0x307,0x0}}, {0x1E66,{0x53,0x30C,0x307,0x0}}, {0x1E67,{0x73,0x30C,0x307,0x0}}, {0x1E68,{0x53,0x323,0x307,0x0}},
  {0x1E69,{0x73,0x323,0x307,0x0}}, {0x1E6A,{0x54,0x307,0x0,0x0}}, {0x1E6B,{0x74,0x307,0x0,0x0}}, {0x1E6C,{0x54,0x323,0x0,0x0}},
  {0x1E6D,{0x74,0x323,0x0,0x0}}, {0x1E6E,{0x54,0x331,0x0,0x0}}, {0x1E6F,{0x74,0x331,0x0,0x0}}, {0x1E70,{0x54,0x32D,0x0,0x0}},
  {0x1E71,{0x74,0x32D,0x0,0x0}}, {0x1E72,{0x55,0x324,0x0,0x0}}, {0x1E73,{0x75,0x324,0x0,0x0}}, {0x1E74,{0x55,0x330,0x0,0x0}},
  {0x1E75,{0x75,0x330,0x0,0x0}}, {0x1E76,{0x55,0x32D,0x0,0x0}}, {0x1E77,{0x75,0x32D,0x0,0x0}}, {0x1E78,{0x55,0x303,0x301,0x0}},
  {0x1E79,{0x75,0x303,0x301,0x0}}, {0x1E7A,{0x55,0x304,0x308,0x0}}, {0x1E7B,{0x75,0x304,0x308,0x0}}, {0x1E7C,{0x56,0x303,0x0,0x0}},
  {0x1E7D,{0x76,0x303,0x0,0x0}}, {0x1E7E,{0x56,0x323,0x0,0x0}}, {0x1E7F,{0x76,0x323,0x0,0x0}}, {0x1E80,{0x57,0x300,0x0,0x0}},
  {0x1E81,{0x77,0x300,0x0,0x0}}, {0x1E82,{0x57,0x301,0x0,0x0}}, {0x1E83,{0x77,0x301,0x0,0x0}}, {0x1E84,{0x57,0x308,0x0,0x0}},
  {0x1E85,{0x77,0x308,0x0,0x0}}, {0x1E86,{0x57,0x307,0x0,0x0}}, {0x1E87,{0x77,0x307,0x0,0x0}}, {0x1E88,{0x57,0x323,0x0,0x0}},
  {0x1E89,{0x77,0x323,0x0,0x0}}, {0x1E8A,{0x58,0x307,0x0,0x0}}, {0x1E8B,{0x78,0x307,0x0,0x0}}, {0x1E8C,{0x58,0x308,0x0,0x0}},
  {0x1E8D,{0x78,0x308,0x0,0x0}}, {0x1E8E,{0x59,0x307,0x0,0x0}}, {0x1E8F,{0x79,0x307,0x0,0x0}}, {0x1E90,{0x5A,0x302,0x0,0x0}},
  {0x1E91,{0x7A,0x302,0x0,0x0}}, {0x1E92,{0x5A,0x323,0x0,0x0}}, {0x1E93,{0x7A,0x323,0x0,0x0}}, {0x1E94,{0x5A,0x331,0x0,0x0}},
  {0x1E95,{0x7A,0x331,0x0,0x0}}, {0x1E96,{0x68,0x331,0x0,0x0}}, {0x1E97,{0x74,0x308,0x0,0x0}}, {0x1E98,{0x77,0x30A,0x0,0x0}},
  {0x1E99,{0x79,0x30A,0x0,0x0}}, {0x1E9B,{0x17F,0x307,0x0,0x0}}, {0x1EA0,{0x41,0x323,0x0,0x0}}, {0x1EA1,{0x61,0x323,0x0,0x0}},
  {0x1EA2,{0x41,0x309,0x0,0x0}}, {0x1EA3,{0x61,0x309,0x0,0x0}}, {0x1EA4,{0x41,0x302,0x301,0x0}}, {0x1EA5,{0x61,0x302,0x301,0x0}},
  {0x1EA6,{0x41,0x302,0x300,0x0}}, {0x1EA7,{0x61,0x302,0x300,0x0}}, {0x1EA8,{0x41,0x302,0x309,0x0}}, {0x1EA9,{0x61,0x302,0x309,0x0}},
  {0x1EAA,{0x41,0x302,0x303,0x0}}, {0x1EAB,{0x61,0x302,0x303,0x0}}, {0x1EAC,{0x41,0x323,0x302,0x0}}, {0x1EAD,{0x61,0x323,0x302,0x0}},
  {0x1EAE,{0x41,0x306,0x301,0x0}}, {0x1EAF,{0x61,0x306,0x301,0x0}}, {0x1EB0,{0x41,0x306,0x300,0x0}}, {0x1EB1,{0x61,0x306,0x300,0x0}},
  {0x1EB2,{0x41,0x306,0x309,0x0}}, {0x1EB3,{0x61,0x306,0x309,0x0}}, {0x1EB4,{0x41,0x306,0x303,0x0}}, {0x1EB5,{0x61,0x306,0x303,0x0}},
  {0x1EB6,{0x41,0x323,0x306,0x0}}, {0x1EB7,{0x61,0x323,0x306,0x0}}, {0x1EB8,{0x45,0x323,0x0,0x0}}, {0x1EB9,{0x65,0x323,0x0,0x0}},
  {0x1EBA,{0x45,0x309,0x0,0x0}}, {0x1EBB,{0x65,0x309,0x0,0x0}}, {0x1EBC,{0x45,0x303,0x0,0x0}}, {0x1EBD,{0x65,0x303,0x0,0x0}},
  {0x1EBE,{0x45,0x302,0x301,0x0}}, {0x1EBF,{0x65,0x302,0x301,0x0}}, {0x1EC0,{0x45,0x302,0x300,0x0}}, {0x1EC1,{0x65,0x302,0x300,0x0}},
  {0x1EC2,{0x45,0x302,0x309,0x0}}, {0x1EC3,{0x65,0x302,0x309,0x0}}, {0x1EC4,{0x45,0x302,0x303,0x0}}, {0x1EC5,{0x65,0x302,0x303,0x0}},
  {0x1EC6,{0x45,0x323,0x302,0x0}}, {0x1EC7,{0x65,0x323,0x302,0x0}}, {0x1EC8,{0x49,0x309,0x0,0x0}}, {0x1EC9,{0x69,0x309,0x0,0x0}},
  {0x1ECA,{0x49,0x323,0x0,0x0}}, {0x1ECB,{0x69,0x323,0x0,0x0}}, {0x1ECC,{0x4F,0x323,0x0,0x0}}, {0x1ECD,{0x6F,0x323,0x0,0x0}},
  {0x1ECE,{0x4F,0x309,0x0,0x0}}, {0x1ECF,{0x6F,0x309,0x0,0x0}}, {0x1ED0,{0x4F,0x302,0x301,0x0}}, {0x1ED1,{0x6F,0x302,0x301,0x0}},
  {0x1ED2,{0x4F,0x302,0x300,0x0}}, {0x1ED3,{0x6F,0x302,0x300,0x0}}, {0x1ED4,{0x4F,0x302,0x309,0x0}}, {0x1ED5,{0x6F,0x302,0x309,0x0}},
  {0x1ED6,{0x4F,0x302,0x303,0x0}}, {0x1ED7,{0x6F,0x302,0x303,0x0}}, {0x1ED8,{0x4F,0x323,0x302,0x0}}, {0x1ED9,{0x6F,0x323,0x302,0x0}},
  {0x1EDA,{0x4F,0x31B,0x301,0x0}}, {0x1EDB,{0x6F,0x31B,0x301,0x0}}, {0x1EDC,{0x4F,0x31B,0x300,0x0}}, {0x1EDD,{0x6F,0x31B,0x300,0x0}},
  {0x1EDE,{0x4F,0x31B,0x309,0x0}}, {0x1EDF,{0x6F,0x31B,0x309,0x0}}, {0x1EE0,{0x4F,0x31B,0x303,0x0}}, {0x1EE1,{0x6F,0x31B,0x303,0x0}},
  {0x1EE2,{0x4F,0x31B,0x323,0x0}}, {0x1EE3,{0x6F,0x31B,0x323,0x0}}, {0x1EE4,{0x55,0x323,0x0,0x0}}, {0x1EE5,{0x75,0x323,0x0,0x0}},
  {0x1EE6,{0x55,0x309,0x0,0x0}}, {0x1EE7,{0x75,0x309,0x0,0x0}}, {0x1EE8,{0x55,0x31B,0x301,0x0}}, {0x1EE9,{0x75,0x31B,0x301,0x0}},
  {0x1EEA,{0x55,0x31B,0x300,0x0}}, {0x1EEB,{0x75,0x31B,0x300,0x0}}, {0x1EEC,{0x55,0x31B,0x309,0x0}}, {0x1EED,{0x75,0x31B,0x309,0x0}},
  {0x1EEE,{0x55,0x31B,0x303,0x0}}, {0x1EEF,{0x75,0x31B,0x303,0x0}}, {0x1EF0,{0x55,0x31B,0x323,0x0}}, {0x1EF1,{0x75,0x31B,0x323,0x0}},
  {0x1EF2,{0x59,0x300,0x0,0x0}}, {0x1EF3,{0x79,0x300,0x0,0x0}}, {0x1EF4,{0x59,0x323,0x0,0x0}}, {0x1EF5,{0x79,0x323,0x0,0x0}},
  {0x1EF6,{0x59,0x309,0x0,0x0}}, {0x1EF7,{0x79,0x309,0x0,0x0}}, {0x1EF8,{0x59,0x303,0x0,0x0}}, {0x1EF9,{0x79,0x303,0x0,0x0}},
  {0x1F00,{0x3B1,0x313,0x0,0x0}}, {0x1F01,{0x3B1,0x314,0x0,0x0}}, {0x1F02,{0x3B1,0x313,0x300,0x0}}, {0x1F03,{0x3B1,0x314,0x300,0x0}},
  {0x1F04,{0x3B1,0x313,0x301,0x0}}, {0x1F05,{0x3B1,0x314,0x301,0x0}}, {0x1F06,{0x3B1,0x313,0x342,0x0}}, {0x1F07,{0x3B1,0x314,0x342,0x0}},
  {0x1F08,{0x391,0x313,0x0,0x0}}, {0x1F09,{0x391,0x314,0x0,0x0}}, {0x1F0A,{0x391,0x313,0x300,0x0}}, {0x1F0B,{0x391,0x314,0x300,0x0}},
  {0x1F0C,{0x391,0x313,0x301,0x0}}, {0x1F0D,{0x391,0x314,0x301,0x0}}, {0x1F0E,{0x391,0x313,0x342,0x0}}, {0x1F0F,{0x391,0x314,0x342,0x0}},
  {0x1F10,{0x3B5,0x313,0x0,0x0}}, {0x1F11,{0x3B5,0x314,0x0,0x0}}, {0x1F12,{0x3B5,0x313,0x300,0x0}}, {0x1F13,{0x3B5,0x314,0x300,0x0}},
  {0x1F14,{0x3B5,0x313,0x301,0x0}}, {0x1F15,{0x3B5,0x314,0x301,0x0}}, {0x1F18,{0x395,0x313,0x0,0x0}}, {0x1F19,{0x395,0x314,0x0,0x0}},
  {0x1F1A,{0x395,0x313,0x300,0x0}}, {0x1F1B,{0x395,0x314,0x300,0x0}}, {0x1F1C,{0x395,0x313,0x301,0x0}}, {0x1F1D,{0x395,0x314,0x301,0x0}},
  {0x1F20,{0x3B7,0x313,0x0,0x0}}, {0x1F21,{0x3B7,0x314,0x0,0x0}}, {0x1F22,{0x3B7,0x313,0x300,0x0}}, {0x1F23,{0x3B7,0x314,0x300,0x0}},
  {0x1F24,{0x3B7,0x313,0x301,0x0}}, {0x1F25,{0x3B7,0x314,0x301,0x0}}, {0x1F26,{0x3B7,0x313,0x342,0x0}}, {0x1F27,{0x3B7,0x314,0x342,0x0}},
  {0x1F28,{0x397,0x313,0x0,0x0}}, {0x1F29,{0x397,0x314,0x0,0x0}}, {0x1F2A,{0x397,0x313,0x300,0x0}}, {0x1F2B,{0x397,0x314,0x300,0x0}},
  {0x1F2C,{0x397,0x313,0x301,0x0}}, {0x1F2D,{0x397,0x314,0x301,0x0}}, {0x1F2E,{0x397,0x313,0x342,0x0}}, {0x1F2F,{0x397,0x314,0x342,0x0}},
  {0x1F30,{0x3B9,0x313,0x0,0x0}}, {0x1F31,{0x3B9,0x314,0x0,0x0}}, {0x1F32,{0x3B9,0x313,0x300,0x0}}, {0x1F33,{0x3B9,0x314,0x300,0x0}},
  {0x1F34,{0x3B9,0x313,0x301,0x0}}, {0x1F35,{0x3B9,0x314,0x301,0x0}}, {0x1F36,{0x3B9,0x313,0x342,0x0}}, {0x1F37,{0x3B9,0x314,0x342,0x0}},
  {0x1F38,{0x399,0x313,0x0,0x0}}, {0x1F39,{0x399,0x314,0x0,0x0}}, {0x1F3A,{0x399,0x313,0x300,0x0}}, {0x1F3B,{0x399,0x314,0x300,0x0}},
  {0x1F3C,{0x399,0x313,0x301,0x0}}, {0x1F3D,{0x399,0x314,0x301,0x0}}, {0x1F3E,{0x399,0x313,0x342,0x0}}, {0x1F3F,{0x399,0x314,0x342,0x0}},
  {0x1F40,{0x3BF,0x313,0x0,0x0}}, {0x1F41,{0x3BF,0x314,0x0,0x0}}, {0x1F42,{0x3BF,0x313,0x300,0x0}}, {0x1F43,{0x3BF,0x314,0x300,0x0}},
  {0x1F44,{0x3BF,0x313,0x301,0x0}}, {0x1F45,{0x3BF,0x314,0x301,0x0}}, {0x1F48,{0x39F,0x313,0x0,0x0}}, {0x1F49,{0x39F,0x314,0x0,0x0}},
  {0x1F4A,{0x39F,0x313,0x300,0x0}}, {0x1F4B,{0x39F,0x314,0x300,0x0}}, {0x1F4C,{0x39F,0x313,0x301,0x0}}, {0x1F4D,{0x39F,0x314,0x301,0x0}},
  {0x1F50,{0x3C5,0x313,0x0,0x0}}, {0x1F51,{0x3C5,0x314,0x0,0x0}}, {0x1F52,{0x3C5,0x313,0x300,0x0}}, {0x1F53,{0x3C5,0x314,0x300,0x0}},
  {0x1F54,{0x3C5,0x313,0x301,0x0}}, {0x1F55,{0x3C5,0x314,0x301,0x0}}, {0x1F56,{0x3C5,0x313,0x342,0x0}}, {0x1F57,{0x3C5,0x314,0x342,0x0}},
  {0x1F59,{0x3A5,0x314,0x0,0x0}}, {0x1F5B,{0x3A5,0x314,0x300,0x0}}, {0x1F5D,{0x3A5,0x314,0x301,0x0}}, {0x1F5F,{0x3A5,0x314,0x342,0x0}},
  {0x1F60,{0x3C9,0x313,0x0,0x0}}, {0x1F61,{0x3C9,0x314,0x0,0x0}}, {0x1F62,{0x3C9,0x313,0x300,0x0}}, {0x1F63,{0x3C9,0x314,0x300,0x0}},
  {0x1F64,{0x3C9,0x313,0x301,0x0}}, {0x1F65,{0x3C9,0x314,0x301,0x0}}, {0x1F66,{0x3C9,0x313,0x342,0x0}}, {0x1F67,{0x3C9,0x314,0x342,0x0}},
  {0x1F68,{0x3A9,0x313,0x0,0x0}}, {0x1F69,{0x3A9,0x314,0x0,0x0}}, {0x1F6A,{0x3A9,0x313,0x300,0x0}}, {0x1F6B,{0x3A9,0x314,0x300,0x0}},
  {0x1F6C,{0x3A9,0x313,0x301,0x0}}, {0x1F6D,{0x3A9,0x314,0x301,0x0}}, {0x1F6E,{0x3A9,0x313,0x342,0x0}}, {0x1F6F,{0x3A9,0x314,0x342,0x0}},
  {0x1F70,{0x3B1,0x300,0x0,0x0}}, {0x1F71,{0x3B1,0x301,0x0,0x0}}, {0x1F72,{0x3B5,0x300,0x0,0x0}}, {0x1F73,{0x3B5,0x301,0x0,0x0}},
  {0x1F74,{0x3B7,0x300,0x0,0x0}}, {0x1F75,{0x3B7,0x301,0x0,0x0}}, {0x1F76,{0x3B9,0x300,0x0,0x0}}, {0x1F77,{0x3B9,0x301,0x0,0x0}},
  {0x1F78,{0x3BF,0x300,0x0,0x0}}, {0x1F79,{0x3BF,0x301,0x0,0x0}}, {0x1F7A,{0x3C5,0x300,0x0,0x0}}, {0x1F7B,{0x3C5,0x301,0x0,0x0}},
  {0x1F7C,{0x3C9,0x300,0x0,0x0}}, {0x1F7D,{0x3C9,0x301,0x0,0x0}}, {0x1F80,{0x3B1,0x313,0x345,0x0}}, {0x1F81,{0x3B1,0x314,0x345,0x0}},
  {0x1F82,{0x3B1,0x313,0x300,0x345}}, {0x1F83,{0x3B1,0x314,0x300,0x345}}, {0x1F84,{0x3B1,0x313,0x301,0x345}}, {0x1F85,{0x3B1,0x314,0x301,0x345}},
  {0x1F86,{0x3B1,0x313,0x342,0x345}}, {0x1F87,{0x3B1,0x314,0x342,0x345}}, {0x1F88,{0x391,0x313,0x345,0x0}}, {0x1F89,{0x391,0x314,0x345,0x0}},
  {0x1F8A,{0x391,0x313,0x300,0x345}}, {0x1F8B,{0x391,0x314,0x300,0x345}}, {0x1F8C,{0x391,0x313,0x301,0x345}}, {0x1F8D,{0x391,0x314,0x301,0x345}},
  {0x1F8E,{0x391,0x313,0x342,0x345}}, {0x1F8F,{0x391,0x314,0x342,0x345}}, {0x1F90,{0x3B7,0x313,0x345,0x0}}, {0x1F91,{0x3B7,0x314,0x345,0x0}},
  {0x1F92,{0x3B7,0x313,0x300,0x345}}, {0x1F93,{0x3B7,0x314,0x300,0x345}}, {0x1F94,{0x3B7,0x313,0x301,0x345}}, {0x1F95,{0x3B7,0x314,0x301,0x345}},
  {0x1F96,{0x3B7,0x313,0x342,0x345}}, {0x1F97,{0x3B7,0x314,0x342,0x345}}, {0x1F98,{0x397,0x313,0x345,0x0}}, {0x1F99,{0x397,0x314,0x345,0x0}},
  {0x1F9A,{0x397,0x313,0x300,0x345}}, {0x1F9B,{0x397,0x314,0x300,0x345}}, {0x1F9C,{0x397,0x313,0x301,0x345}}, {0x1F9D,{0x397,0x314,0x301,0x345}},
  {0x1F9E,{0x397,0x313,0x342,0x345}}, {0x1F9F,{0x397,0x314,0x342,0x345}}, {0x1FA0,{0x3C9,0x313,0x345,0x0}}, {0x1FA1,{0x3C9,0x314,0x345,0x0}},
  {0x1FA2,{0x3C9,0x313,0x300,0x345}}, {0x1FA3,{0x3C9,0x314,0x300,0x345}}, {0x1FA4,{0x3C9,0x313,0x301,0x345}}, {0x1FA5,{0x3C9,0x314,0x301,0x345}},
  {0x1FA6,{0x3C9,0x313,0x342,0x345}}, {0x1FA7,{0x3C9,0x314,0x342,0x345}}, {0x1FA8,{0x3A9,0x313,0x345,0x0}}, {0x1FA9,{0x3A9,0x314,0x345,0x0}},
  {0x1FAA,{0x3A9,0x313,0x300,0x345}}, {0x1FAB,{0x3A9,0x314,0x300,0x345}}, {0x1FAC,{0x3A9,0x313,0x301,0x345}}, {0x1FAD,{0x3A9,0x314,0x301,0x345}},
  {0x1FAE,{0x3A9,0x313,0x342,0x345}}, {0x1FAF,{0x3A9,0x314,0x342,0x345}}, {0x1FB0,{0x3B1,0x306,0x0,0x0}}, {0x1FB1,{0x3B1,0x304,0x0,0x0}},
  {0x1FB2,{0x3B1,0x300,0x345,0x0}}, {0x1FB3,{0x3B1,0x345,0x0,0x0}}, {0x1FB4,{0x3B1,0x301,0x345,0x0}}, {0x1FB6,{0x3B1,0x342,0x0,0x0}},
  {0x1FB7,{0x3B1,0x342,0x345,0x0}}, {0x1FB8,{0x391,0x306,0x0,0x0}}, {0x1FB9,{0x391,0x304,0x0,0x0}}, {0x1FBA,{0x391,0x300,0x0,0x0}},
  {0x1FBB,{0x391,0x301,0x0,0x0}}, {0x1FBC,{0x391,0x345,0x0,0x0}}, {0x1FBE,{0x3B9,0x0,0x0,0x0}}, {0x1FC1,{0xA8,0x342,0x0,0x0}},
  {0x1FC2,{0x3B7,0x300,0x345,0x0}}, {0x1FC3,{0x3B7,0x345,0x0,0x0}}, {0x1FC4,{0x3B7,0x301,0x345,0x0}}, {0x1FC6,{0x3B7,0x342,0x0,0x0}},
  {0x1FC7,{0x3B7,0x342,0x345,0x0}}, {0x1FC8,{0x395,0x300,0x0,0x0}}, {0x1FC9,{0x395,0x301,0x0,0x0}}, {0x1FCA,{0x397,0x300,0x0,0x0}},
  {0x1FCB,{0x397,0x301,0x0,0x0}}, {0x1FCC,{0x397,0x345,0x0,0x0}}, {0x1FCD,{0x1FBF,0x300,0x0,0x0}}, {0x1FCE,{0x1FBF,0x301,0x0,0x0}},
  {0x1FCF,{0x1FBF,0x342,0x0,0x0}}, {0x1FD0,{0x3B9,0x306,0x0,0x0}}, {0x1FD1,{0x3B9,0x304,0x0,0x0}}, {0x1FD2,{0x3B9,0x308,0x300,0x0}},
  {0x1FD3,{0x3B9,0x308,0x301,0x0}}, {0x1FD6,{0x3B9,0x342,0x0,0x0}}, {0x1FD7,{0x3B9,0x308,0x342,0x0}}, {0x1FD8,{0x399,0x306,0x0,0x0}},
  {0x1FD9,{0x399,0x304,0x0,0x0}}, {0x1FDA,{0x399,0x300,0x0,0x0}}, {0x1FDB,{0x399,0x301,0x0,0x0}}, {0x1FDD,{0x1FFE,0x300,0x0,0x0}},
  {0x1FDE,{0x1FFE,0x301,0x0,0x0}}, {0x1FDF,{0x1FFE,0x342,0x0,0x0}}, {0x1FE0,{0x3C5,0x306,0x0,0x0}}, {0x1FE1,{0x3C5,0x304,0x0,0x0}},
  {0x1FE2,{0x3C5,0x308,0x300,0x0}}, {0x1FE3,{0x3C5,0x308,0x301,0x0}}, {0x1FE4,{0x3C1,0x313,0x0,0x0}}, {0x1FE5,{0x3C1,0x314,0x0,0x0}},
  {0x1FE6,{0x3C5,0x342,0x0,0x0}}, {0x1FE7,{0x3C5,0x308,0x342,0x0}}, {0x1FE8,{0x3A5,0x306,0x0,0x0}}, {0x1FE9,{0x3A5,0x304,0x0,0x0}},
  {0x1FEA,{0x3A5,0x300,0x0,0x0}}, {0x1FEB,{0x3A5,0x301,0x0,0x0}}, {0x1FEC,{0x3A1,0x314,0x0,0x0}}, {0x1FED,{0xA8,0x300,0x0,0x0}},
  {0x1FEE,{0xA8,0x301,0x0,0x0}}, {0x1FEF,{0x60,0x0,0x0,0x0}}, {0x1FF2,{0x3C9,0x300,0x345,0x0}}, {0x1FF3,{0x3C9,0x345,0x0,0x0}},
  {0x1FF4,{0x3C9,0x301,0x345,0x0}}, {0x1FF6,{0x3C9,0x342,0x0,0x0}}, {0x1FF7,{0x3C9,0x342,0x345,0x0}}, {0x1FF8,{0x39F,0x300,0x0,0x0}},
  {0x1FF9,{0x39F,0x301,0x0,0x0}}, {0x1FFA,{0x3A9,0x300,0x0,0x0}}, {0x1FFB,{0x3A9,0x301,0x0,0x0}}, {0x1FFC,{0x3A9,0x345,0x0,0x0}},
  {0x1FFD,{0xB4,0x0,0x0,0x0}}, {0x2000,{0x2002,0x0,0x0,0x0}}, {0x2001,{0x2003,0x0,0x0,0x0}}, {0x2126,{0x3A9,0x0,0x0,0x0}},
  {0x212A,{0x4B,0x0,0x0,0x0}}, {0x212B,{0x41,0x30A,0x0,0x0}}, {0x219A,{0x2190,0x338,0x0,0x0}}, {0x219B,{0x2192,0x338,0x0,0x0}},
  {0x21AE,{0x2194,0x338,0x0,0x0}}, {0x21CD,{0x21D0,0x338,0x0,0x0}}, {0x21CE,{0x21D4,0x338,0x0,0x0}}, {0x21CF,{0x21D2,0x338,0x0,0x0}},
  {0x2204,{0x2203,0x338,0x0,0x0}}, {0x2209,{0x2208,0x338,0x0,0x0}}, {0x220C,{0x220B,0x338,0x0,0x0}}, {0x2224,{0x2223,0x338,0x0,0x0}},
  {0x2226,{0x2225,0x338,0x0,0x0}}, {0x2241,{0x223C,0x338,0x0,0x0}}, {0x2244,{0x2243,0x338,0x0,0x0}}, {0x2247,{0x2245,0x338,0x0,0x0}},
  {0x2249,{0x2248,0x338,0x0,0x0}}, {0x2260,{0x3D,0x338,0x0,0x0}}, {0x2262,{0x2261,0x338,0x0,0x0}}, {0x226D,{0x224D,0x338,0x0,0x0}},
  {0x226E,{0x3C,0x338,0x0,0x0}}, {0x226F,{0x3E,0x338,0x0,0x0}}, {0x2270,{0x2264,0x338,0x0,0x0}}, {0x2271,{0x2265,0x338,0x0,0x0}},
  {0x2274,{0x2272,0x338,0x0,0x0}}, {0x2275,{0x2273,0x338,0x0,0x0}}, {0x2278,{0x2276,0x338,0x0,0x0}}, {0x2279,{0x2277,0x338,0x0,0x0}},
  {0x2280,{0x227A,0x338,0x0,0x0}}, {0x2281,{0x227B,0x338,0x0,0x0}}, {0x2284,{0x2282,0x338,0x0,0x0}}, {0x2285,{0x2283,0x338,0x0,0x0}},
  {0x2288,{0x2286,0x338,0x0,0x0}}, {0x2289,{0x2287,0x338,0x0,0x0}}, {0x22AC,{0x22A2,0x338,0x0,0x0}}, {0x22AD,{0x22A8,0x338,0x0,0x0}},
  {0x22AE,{0x22A9,0x338,0x0,0x0}}, {0x22AF,{0x22AB,0x338,0x0,0x0}}, {0x22E0,{0x227C,0x338,0x0,0x0}}, {0x22E1,{0x227D,0x338,0x0,0x0}},
  {0x22E2,{0x2291,0x338,0x0,0x0}}, {0x22E3,{0x2292,0x338,0x0,0x0}}, {0x22EA,{0x22B2,0x338,0x0,0x0}}, {0x22EB,{0x22B3,0x338,0x0,0x0}},
  {0x22EC,{0x22B4,0x338,0x0,0x0}}, {0x22ED,{0x22B5,0x338,0x0,0x0}}, {0x2329,{0x3008,0x0,0x0,0x0}}, {0x232A,{0x3009,0x0,0x0,0x0}},
  {0x2ADC,{0x2ADD,0x338,0x0,0x0}}, {0x304C,{0x304B,0x3099,0x0,0x0}}, {0x304E,{0x304D,0x3099,0x0,0x0}}, {0x3050,{0x304F,0x3099,0x0,0x0}},
  {0x3052,{0x3051,0x3099,0x0,0x0}}, {0x3054,{0x3053,0x3099,0x0,0x0}}, {0x3056,{0x3055,0x3099,0x0,0x0}}, {0x3058,{0x3057,0x3099,0x0,0x0}},
  {0x305A,{0x3059,0x3099,0x0,0x0}}, {0x305C,{0x305B,0x3099,0x0,0x0}}, {0x305E,{0x305D,0x3099,0x0,0x0}}, {0x3060,{0x305F,0x3099,0x0,0x0}},
  {0x3062,{0x3061,0x3099,0x0,0x0}}, {0x3065,{0x3064,0x3099,0x0,0x0}}, {0x3067,{0x3066,0x3099,0x0,0x0}}, {0x3069,{0x3068,0x3099,0x0,0x0}},
  {0x3070,{0x306F,0x3099,0x0,0x0}}, {0x3071,{0x306F,0x309A,0x0,0x0}}, {0x3073,{0x3072,0x3099,0x0,0x0}}, {0x3074,{0x3072,0x309A,0x0,0x0}},
  {0x3076,{0x3075,0x3099,0x0,0x0}}, {0x3077,{0x3075,0x309A,0x0,0x0}}, {0x3079,{0x3078,0x3099,0x0,0x0}}, {0x307A,{0x3078,0x309A,0x0,0x0}},
  {0x307C,{0x307B,0x3099,0x0,0x0}}, {0x307D,{0x307B,0x309A,0x0,0x0}}, {0x3094,{0x3046,0x3099,0x0,0x0}}, {0x309E,{0x309D,0x3099,0x0,0x0}},
  {0x30AC,{0x30AB,0x3099,0x0,0x0}}, {0x30AE,{0x30AD,0x3099,0x0,0x0}}, {0x30B0,{0x30AF,0x3099,0x0,0x0}}, {0x30B2,{0x30B1,0x3099,0x0,0x0}},
  {0x30B4,{0x30B3,0x3099,0x0,0x0}}, {0x30B6,{0x30B5,0x3099,0x0,0x0}}, {0x30B8,{0x30B7,0x3099,0x0,0x0}}, {0x30BA,{0x30B9,0x3099,0x0,0x0}},
  {0x30BC,{0x30BB,0x3099,0x0,0x0}}, {0x30BE,{0x30BD,0x3099,0x0,0x0}}, {0x30C0,{0x30BF,0x3099,0x0,0x0}}, {0x30C2,{0x30C1,0x3099,0x0,0x0}},
  {0x30C5,{0x30C4,0x3099,0x0,0x0}}, {0x30C7,{0x30C6,0x3099,0x0,0x0}}, {0x30C9,{0x30C8,0x3099,0x0,0x0}}, {0x30D0,{0x30CF,0x3099,0x0,0x0}},
  {0x30D1,{0x30CF,0x309A,0x0,0x0}}, {0x30D3,{0x30D2,0x3099,0x0,0x0}}, {0x30D4,{0x30D2,0x309A,0x0,0x0}}, {0x30D6,{0x30D5,0x3099,0x0,0x0}},
  {0x30D7,{0x30D5,0x309A,0x0,0x0}}, {0x30D9,{0x30D8,0x3099,0x0,0x0}}, {0x30DA,{0x30D8,0x309A,0x0,0x0}}, {0x30DC,{0x30DB,0x3099,0x0,0x0}},
  {0x30DD,{0x30DB,0x309A,0x0,0x0}}, {0x30F4,{0x30A6,0x3099,0x0,0x0}}, {0x30F7,{0x30EF,0x3099,0x0,0x0}}, {0x30F8,{0x30F0,0x3099,0x0,0x0}},
  {0x30F9,{0x30F1,0x3099,0x0,0x0}}, {0x30FA,{0x30F2,0x3099,0x0,0x0}}, {0x30FE,{0x30FD,0x3099,0x0,0x0}}, {0xF900,{0x8C48,0x0,0x0,0x0}},
  {0xF901,{0x66F4,0x0,0x0,0x0}}, {0xF902,{0x8ECA,0x0,0x0,0x0}}, {0xF903,{0x8CC8,0x0,0x0,0x0}}, {0xF904,{0x6ED1,0x0,0x0,0x0}},
  {0xF905,{0x4E32,0x0,0x0,0x0}}, {0xF906,{0x53E5,0x0,0x0,0x0}}, {0xF907,{0x9F9C,0x0,0x0,0x0}}, {0xF908,{0x9F9C,0x0,0x0,0x0}},
  {0xF909,{0x5951,0x0,0x0,0x0}}, {0xF90A,{0x91D1,0x0,0x0,0x0}}, {0xF90B,{0x5587,0x0,0x0,0x0}}, {0xF90C,{0x5948,0x0,0x0,0x0}},
  {0xF90D,{0x61F6,0x0,0x0,0x0}}, {0xF90E,{0x7669,0x0,0x0,0x0}}, {0xF90F,{0x7F85,0x0,0x0,0x0}}, {0xF910,{0x863F,0x0,0x0,0x0}},
  {0xF911,{0x87BA,0x0,0x0,0x0}}, {0xF912,{0x88F8,0x0,0x0,0x0}}, {0xF913,{0x908F,0x0,0x0,0x0}}, {0xF914,{0x6A02,0x0,0x0,0x0}},
  {0xF915,{0x6D1B,0x0,0x0,0x0}}, {0xF916,{0x70D9,0x0,0x0,0x0}}, {0xF917,{0x73DE,0x0,0x0,0x0}}, {0xF918,{0x843D,0x0,0x0,0x0}},
  {0xF919,{0x916A,0x0,0x0,0x0}}, {0xF91A,{0x99F1,0x0,0x0,0x0}}, {0xF91B,{0x4E82,0x0,0x0,0x0}}, {0xF91C,{0x5375,0x0,0x0,0x0}},
  {0xF91D,{0x6B04,0x0,0x0,0x0}}, {0xF91E,{0x721B,0x0,0x0,0x0}}, {0xF91F,{0x862D,0x0,0x0,0x0}}, {0xF920,{0x9E1E,0x0,0x0,0x0}},
  {0xF921,{0x5D50,0x0,0x0,0x0}}, {0xF922,{0x6FEB,0x0,0x0,0x0}}, {0xF923,{0x85CD,0x0,0x0,0x0}}, {0xF924,{0x8964,0x0,0x0,0x0}},
  {0xF925,{0x62C9,0x0,0x0,0x0}}, {0xF926,{0x81D8,0x0,0x0,0x0}}, {0xF927,{0x881F,0x0,0x0,0x0}}, {0xF928,{0x5ECA,0x0,0x0,0x0}},
  {0xF929,{0x6717,0x0,0x0,0x0}}, {0xF92A,{0x6D6A,0x0,0x0,0x0}}, {0xF92B,{0x72FC,0x0,0x0,0x0}}, {0xF92C,{0x90CE,0x0,0x0,0x0}},
  {0xF92D,{0x4F86,0x0,0x0,0x0}}, {0xF92E,{0x51B7,0x0,0x0,0x0}}, {0xF92F,{0x52DE,0x0,0x0,0x0}}, {0xF930,{0x64C4,0x0,0x0,0x0}},
  {0xF931,{0x6AD3,0x0,0x0,0x0}}, {0xF932,{0x7210,0x0,0x0,0x0}}, {0xF933,{0x76E7,0x0,0x0,0x0}}, {0xF934,{0x8001,0x0,0x0,0x0}},
  {0xF935,{0x8606,0x0,0x0,0x0}}, {0xF936,{0x865C,0x0,0x0,0x0}}, {0xF937,{0x8DEF,0x0,0x0,0x0}}, {0xF938,{0x9732,0x0,0x0,0x0}},
  {0xF939,{0x9B6F,0x0,0x0,0x0}}, {0xF93A,{0x9DFA,0x0,0x0,0x0}}, {0xF93B,{0x788C,0x0,0x0,0x0}}, {0xF93C,{0x797F,0x0,0x0,0x0}},
  {0xF93D,{0x7DA0,0x0,0x0,0x0}}, {0xF93E,{0x83C9,0x0,0x0,0x0}}, {0xF93F,{0x9304,0x0,0x0,0x0}}, {0xF940,{0x9E7F,0x0,0x0,0x0}},
  {0xF941,{0x8AD6,0x0,0x0,0x0}}, {0xF942,{0x58DF,0x0,0x0,0x0}}, {0xF943,{0x5F04,0x0,0x0,0x0}}, {0xF944,{0x7C60,0x0,0x0,0x0}},
  {0xF945,{0x807E,0x0,0x0,0x0}}, {0xF946,{0x7262,0x0,0x0,0x0}}, {0xF947,{0x78CA,0x0,0x0,0x0}}, {0xF948,{0x8CC2,0x0,0x0,0x0}},
  {0xF949,{0x96F7,0x0,0x0,0x0}}, {0xF94A,{0x58D8,0x0,0x0,0x0}}, {0xF94B,{0x5C62,0x0,0x0,0x0}}, {0xF94C,{0x6A13,0x0,0x0,0x0}},
  {0xF94D,{0x6DDA,0x0,0x0,0x0}}, {0xF94E,{0x6F0F,0x0,0x0,0x0}}, {0xF94F,{0x7D2F,0x0,0x0,0x0}}, {0xF950,{0x7E37,0x0,0x0,0x0}},
  {0xF951,{0x964B,0x0,0x0,0x0}}, {0xF952,{0x52D2,0x0,0x0,0x0}}, {0xF953,{0x808B,0x0,0x0,0x0}}, {0xF954,{0x51DC,0x0,0x0,0x0}},
  {0xF955,{0x51CC,0x0,0x0,0x0}}, {0xF956,{0x7A1C,0x0,0x0,0x0}}, {0xF957,{0x7DBE,0x0,0x0,0x0}}, {0xF958,{0x83F1,0x0,0x0,0x0}},
  {0xF959,{0x9675,0x0,0x0,0x0}}, {0xF95A,{0x8B80,0x0,0x0,0x0}}, {0xF95B,{0x62CF,0x0,0x0,0x0}}, {0xF95C,{0x6A02,0x0,0x0,0x0}},
  {0xF95D,{0x8AFE,0x0,0x0,0x0}}, {0xF95E,{0x4E39,0x0,0x0,0x0}}, {0xF95F,{0x5BE7,0x0,0x0,0x0}}, {0xF960,{0x6012,0x0,0x0,0x0}},
  {0xF961,{0x7387,0x0,0x0,0x0}}, {0xF962,{0x7570,0x0,0x0,0x0}}, {0xF963,{0x5317,0x0,0x0,0x0}}, {0xF964,{0x78FB,0x0,0x0,0x0}},
  {0xF965,{0x4FBF,0x0,0x0,0x0}}, {0xF966,{0x5FA9,0x0,0x0,0x0}}, {0xF967,{0x4E0D,0x0,0x0,0x0}}, {0xF968,{0x6CCC,0x0,0x0,0x0}},
  {0xF969,{0x6578,0x0,0x0,0x0}}, {0xF96A,{0x7D22,0x0,0x0,0x0}}, {0xF96B,{0x53C3,0x0,0x0,0x0}}, {0xF96C,{0x585E,0x0,0x0,0x0}},
  {0xF96D,{0x7701,0x0,0x0,0x0}}, {0xF96E,{0x8449,0x0,0x0,0x0}}, {0xF96F,{0x8AAA,0x0,0x0,0x0}}, {0xF970,{0x6BBA,0x0,0x0,0x0}},
  {0xF971,{0x8FB0,0x0,0x0,0x0}}, {0xF972,{0x6C88,0x0,0x0,0x0}}, {0xF973,{0x62FE,0x0,0x0,0x0}}, {0xF974,{0x82E5,0x0,0x0,0x0}},
  {0xF975,{0x63A0,0x0,0x0,0x0}}, {0xF976,{0x7565,0x0,0x0,0x0}}, {0xF977,{0x4EAE,0x0,0x0,0x0}}, {0xF978,{0x5169,0x0,0x0,0x0}},
  {0xF979,{0x51C9,0x0,0x0,0x0}}, {0xF97A,{0x6881,0x0,0x0,0x0}}, {0xF97B,{0x7CE7,0x0,0x0,0x0}}, {0xF97C,{0x826F,0x0,0x0,0x0}},
  {0xF97D,{0x8AD2,0x0,0x0,0x0}}, {0xF97E,{0x91CF,0x0,0x0,0x0}}, {0xF97F,{0x52F5,0x0,0x0,0x0}}, {0xF980,{0x5442,0x0,0x0,0x0}},
  {0xF981,{0x5973,0x0,0x0,0x0}}, {0xF982,{0x5EEC,0x0,0x0,0x0}}, {0xF983,{0x65C5,0x0,0x0,0x0}}, {0xF984,{0x6FFE,0x0,0x0,0x0}},
  {0xF985,{0x792A,0x0,0x0,0x0}}, {0xF986,{0x95AD,0x0,0x0,0x0}}, {0xF987,{0x9A6A,0x0,0x0,0x0}}, {0xF988,{0x9E97,0x0,0x0,0x0}},
  {0xF989,{0x9ECE,0x0,0x0,0x0}}, {0xF98A,{0x529B,0x0,0x0,0x0}}, {0xF98B,{0x66C6,0x0,0x0,0x0}}, {0xF98C,{0x6B77,0x0,0x0,0x0}},
  {0xF98D,{0x8F62,0x0,0x0,0x0}}, {0xF98E,{0x5E74,0x0,0x0,0x0}}, {0xF98F,{0x6190,0x0,0x0,0x0}}, {0xF990,{0x6200,0x0,0x0,0x0}},
  {0xF991,{0x649A,0x0,0x0,0x0}}, {0xF992,{0x6F23,0x0,0x0,0x0}}, {0xF993,{0x7149,0x0,0x0,0x0}}, {0xF994,{0x7489,0x0,0x0,0x0}},
  {0xF995,{0x79CA,0x0,0x0,0x0}}, {0xF996,{0x7DF4,0x0,0x0,0x0}}, {0xF997,{0x806F,0x0,0x0,0x0}}, {0xF998,{0x8F26,0x0,0x0,0x0}},
  {0xF999,{0x84EE,0x0,0x0,0x0}}, {0xF99A,{0x9023,0x0,0x0,0x0}}, {0xF99B,{0x934A,0x0,0x0,0x0}}, {0xF99C,{0x5217,0x0,0x0,0x0}},
  {0xF99D,{0x52A3,0x0,0x0,0x0}}, {0xF99E,{0x54BD,0x0,0x0,0x0}}, {0xF99F,{0x70C8,0x0,0x0,0x0}}, {0xF9A0,{0x88C2,0x0,0x0,0x0}},
  {0xF9A1,{0x8AAA,0x0,0x0,0x0}}, {0xF9A2,{0x5EC9,0x0,0x0,0x0}}, {0xF9A3,{0x5FF5,0x0,0x0,0x0}}, {0xF9A4,{0x637B,0x0,0x0,0x0}},
  {0xF9A5,{0x6BAE,0x0,0x0,0x0}}, {0xF9A6,{0x7C3E,0x0,0x0,0x0}}, {0xF9A7,{0x7375,0x0,0x0,0x0}}, {0xF9A8,{0x4EE4,0x0,0x0,0x0}},
  {0xF9A9,{0x56F9,0x0,0x0,0x0}}, {0xF9AA,{0x5BE7,0x0,0x0,0x0}}, {0xF9AB,{0x5DBA,0x0,0x0,0x0}}, {0xF9AC,{0x601C,0x0,0x0,0x0}},
  {0xF9AD,{0x73B2,0x0,0x0,0x0}}, {0xF9AE,{0x7469,0x0,0x0,0x0}}, {0xF9AF,{0x7F9A,0x0,0x0,0x0}}, {0xF9B0,{0x8046,0x0,0x0,0x0}},
  {0xF9B1,{0x9234,0x0,0x0,0x0}}, {0xF9B2,{0x96F6,0x0,0x0,0x0}}, {0xF9B3,{0x9748,0x0,0x0,0x0}}, {0xF9B4,{0x9818,0x0,0x0,0x0}},
  {0xF9B5,{0x4F8B,0x0,0x0,0x0}}, {0xF9B6,{0x79AE,0x0,0x0,0x0}}, {0xF9B7,{0x91B4,0x0,0x0,0x0}}, {0xF9B8,{0x96B8,0x0,0x0,0x0}},
  {0xF9B9,{0x60E1,0x0,0x0,0x0}}, {0xF9BA,{0x4E86,0x0,0x0,0x0}}, {0xF9BB,{0x50DA,0x0,0x0,0x0}}, {0xF9BC,{0x5BEE,0x0,0x0,0x0}},
  {0xF9BD,{0x5C3F,0x0,0x0,0x0}}, {0xF9BE,{0x6599,0x0,0x0,0x0}}, {0xF9BF,{0x6A02,0x0,0x0,0x0}}, {0xF9C0,{0x71CE,0x0,0x0,0x0}},
  {0xF9C1,{0x7642,0x0,0x0,0x0}}, {0xF9C2,{0x84FC,0x0,0x0,0x0}}, {0xF9C3,{0x907C,0x0,0x0,0x0}}, {0xF9C4,{0x9F8D,0x0,0x0,0x0}},
  {0xF9C5,{0x6688,0x0,0x0,0x0}}, {0xF9C6,{0x962E,0x0,0x0,0x0}}, {0xF9C7,{0x5289,0x0,0x0,0x0}}, {0xF9C8,{0x677B,0x0,0x0,0x0}},
  {0xF9C9,{0x67F3,0x0,0x0,0x0}}, {0xF9CA,{0x6D41,0x0,0x0,0x0}}, {0xF9CB,{0x6E9C,0x0,0x0,0x0}}, {0xF9CC,{0x7409,0x0,0x0,0x0}},
  {0xF9CD,{0x7559,0x0,0x0,0x0}}, {0xF9CE,{0x786B,0x0,0x0,0x0}}, {0xF9CF,{0x7D10,0x0,0x0,0x0}}, {0xF9D0,{0x985E,0x0,0x0,0x0}},
  {0xF9D1,{0x516D,0x0,0x0,0x0}}, {0xF9D2,{0x622E,0x0,0x0,0x0}}, {0xF9D3,{0x9678,0x0,0x0,0x0}}, {0xF9D4,{0x502B,0x0,0x0,0x0}},
  {0xF9D5,{0x5D19,0x0,0x0,0x0}}, {0xF9D6,{0x6DEA,0x0,0x0,0x0}}, {0xF9D7,{0x8F2A,0x0,0x0,0x0}}, {0xF9D8,{0x5F8B,0x0,0x0,0x0}},
  {0xF9D9,{0x6144,0x0,0x0,0x0}}, {0xF9DA,{0x6817,0x0,0x0,0x0}}, {0xF9DB,{0x7387,0x0,0x0,0x0}}, {0xF9DC,{0x9686,0x0,0x0,0x0}},
  {0xF9DD,{0x5229,0x0,0x0,0x0}}, {0xF9DE,{0x540F,0x0,0x0,0x0}}, {0xF9DF,{0x5C65,0x0,0x0,0x0}}, {0xF9E0,{0x6613,0x0,0x0,0x0}},
  {0xF9E1,{0x674E,0x0,0x0,0x0}}, {0xF9E2,{0x68A8,0x0,0x0,0x0}}, {0xF9E3,{0x6CE5,0x0,0x0,0x0}}, {0xF9E4,{0x7406,0x0,0x0,0x0}},
  {0xF9E5,{0x75E2,0x0,0x0,0x0}}, {0xF9E6,{0x7F79,0x0,0x0,0x0}}, {0xF9E7,{0x88CF,0x0,0x0,0x0}}, {0xF9E8,{0x88E1,0x0,0x0,0x0}},
  {0xF9E9,{0x91CC,0x0,0x0,0x0}}, {0xF9EA,{0x96E2,0x0,0x0,0x0}}, {0xF9EB,{0x533F,0x0,0x0,0x0}}, {0xF9EC,{0x6EBA,0x0,0x0,0x0}},
  {0xF9ED,{0x541D,0x0,0x0,0x0}}, {0xF9EE,{0x71D0,0x0,0x0,0x0}}, {0xF9EF,{0x7498,0x0,0x0,0x0}}, {0xF9F0,{0x85FA,0x0,0x0,0x0}},
  {0xF9F1,{0x96A3,0x0,0x0,0x0}}, {0xF9F2,{0x9C57,0x0,0x0,0x0}}, {0xF9F3,{0x9E9F,0x0,0x0,0x0}}, {0xF9F4,{0x6797,0x0,0x0,0x0}},
  {0xF9F5,{0x6DCB,0x0,0x0,0x0}}, {0xF9F6,{0x81E8,0x0,0x0,0x0}}, {0xF9F7,{0x7ACB,0x0,0x0,0x0}}, {0xF9F8,{0x7B20,0x0,0x0,0x0}},
  {0xF9F9,{0x7C92,0x0,0x0,0x0}}, {0xF9FA,{0x72C0,0x0,0x0,0x0}}, {0xF9FB,{0x7099,0x0,0x0,0x0}}, {0xF9FC,{0x8B58,0x0,0x0,0x0}},
  {0xF9FD,{0x4EC0,0x0,0x0,0x0}}, {0xF9FE,{0x8336,0x0,0x0,0x0}}, {0xF9FF,{0x523A,0x0,0x0,0x0}}, {0xFA00,{0x5207,0x0,0x0,0x0}},
  {0xFA01,{0x5EA6,0x0,0x0,0x0}}, {0xFA02,{0x62D3,0x0,0x0,0x0}}, {0xFA03,{0x7CD6,0x0,0x0,0x0}}, {0xFA04,{0x5B85,0x0,0x0,0x0}},
  {0xFA05,{0x6D1E,0x0,0x0,0x0}}, {0xFA06,{0x66B4,0x0,0x0,0x0}}, {0xFA07,{0x8F3B,0x0,0x0,0x0}}, {0xFA08,{0x884C,0x0,0x0,0x0}},
  {0xFA09,{0x964D,0x0,0x0,0x0}}, {0xFA0A,{0x898B,0x0,0x0,0x0}}, {0xFA0B,{0x5ED3,0x0,0x0,0x0}}, {0xFA0C,{0x5140,0x0,0x0,0x0}},
  {0xFA0D,{0x55C0,0x0,0x0,0x0}}, {0xFA10,{0x585A,0x0,0x0,0x0}}, {0xFA12,{0x6674,0x0,0x0,0x0}}, {0xFA15,{0x51DE,0x0,0x0,0x0}},
  {0xFA16,{0x732A,0x0,0x0,0x0}}, {0xFA17,{0x76CA,0x0,0x0,0x0}}, {0xFA18,{0x793C,0x0,0x0,0x0}}, {0xFA19,{0x795E,0x0,0x0,0x0}},
  {0xFA1A,{0x7965,0x0,0x0,0x0}}, {0xFA1B,{0x798F,0x0,0x0,0x0}}, {0xFA1C,{0x9756,0x0,0x0,0x0}}, {0xFA1D,{0x7CBE,0x0,0x0,0x0}},
  {0xFA1E,{0x7FBD,0x0,0x0,0x0}}, {0xFA20,{0x8612,0x0,0x0,0x0}}, {0xFA22,{0x8AF8,0x0,0x0,0x0}}, {0xFA25,{0x9038,0x0,0x0,0x0}},
  {0xFA26,{0x90FD,0x0,0x0,0x0}}, {0xFA2A,{0x98EF,0x0,0x0,0x0}}, {0xFA2B,{0x98FC,0x0,0x0,0x0}}, {0xFA2C,{0x9928,0x0,0x0,0x0}},
  {0xFA2D,{0x9DB4,0x0,0x0,0x0}}, {0xFA2E,{0x90DE,0x0,0x0,0x0}}, {0xFA2F,{0x96B7,0x0,0x0,0x0}}, {0xFA30,{0x4FAE,0x0,0x0,0x0}},
  {0xFA31,{0x50E7,0x0,0x0,0x0}}, {0xFA32,{0x514D,0x0,0x0,0x0}}, {0xFA33,{0x52C9,0x0,0x0,0x0}}, {0xFA34,{0x52E4,0x0,0x0,0x0}},
  {0xFA35,{0x5351,0x0,0x0,0x0}}, {0xFA36,{0x559D,0x0,0x0,0x0}}, {0xFA37,{0x5606,0x0,0x0,0x0}}, {0xFA38,{0x5668,0x0,0x0,0x0}},
  {0xFA39,{0x5840,0x0,0x0,0x0}}, {0xFA3A,{0x58A8,0x0,0x0,0x0}}, {0xFA3B,{0x5C64,0x0,0x0,0x0}}, {0xFA3C,{0x5C6E,0x0,0x0,0x0}},
  {0xFA3D,{0x6094,0x0,0x0,0x0}}, {0xFA3E,{0x6168,0x0,0x0,0x0}}, {0xFA3F,{0x618E,0x0,0x0,0x0}}, {0xFA40,{0x61F2,0x0,0x0,0x0}},
  {0xFA41,{0x654F,0x0,0x0,0x0}}, {0xFA42,{0x65E2,0x0,0x0,0x0}}, {0xFA43,{0x6691,0x0,0x0,0x0}}, {0xFA44,{0x6885,0x0,0x0,0x0}},
  {0xFA45,{0x6D77,0x0,0x0,0x0}}, {0xFA46,{0x6E1A,0x0,0x0,0x0}}, {0xFA47,{0x6F22,0x0,0x0,0x0}}, {0xFA48,{0x716E,0x0,0x0,0x0}},
  {0xFA49,{0x722B,0x0,0x0,0x0}}, {0xFA4A,{0x7422,0x0,0x0,0x0}}, {0xFA4B,{0x7891,0x0,0x0,0x0}}, {0xFA4C,{0x793E,0x0,0x0,0x0}},
  {0xFA4D,{0x7949,0x0,0x0,0x0}}, {0xFA4E,{0x7948,0x0,0x0,0x0}}, {0xFA4F,{0x7950,0x0,0x0,0x0}}, {0xFA50,{0x7956,0x0,0x0,0x0}},
  {0xFA51,{0x795D,0x0,0x0,0x0}}, {0xFA52,{0x798D,0x0,0x0,0x0}}, {0xFA53,{0x798E,0x0,0x0,0x0}}, {0xFA54,{0x7A40,0x0,0x0,0x0}},
  {0xFA55,{0x7A81,0x0,0x0,0x0}}, {0xFA56,{0x7BC0,0x0,0x0,0x0}}, {0xFA57,{0x7DF4,0x0,0x0,0x0}}, {0xFA58,{0x7E09,0x0,0x0,0x0}},
  {0xFA59,{0x7E41,0x0,0x0,0x0}}, {0xFA5A,{0x7F72,0x0,0x0,0x0}}, {0xFA5B,{0x8005,0x0,0x0,0x0}}, {0xFA5C,{0x81ED,0x0,0x0,0x0}},
  {0xFA5D,{0x8279,0x0,0x0,0x0}}, {0xFA5E,{0x8279,0x0,0x0,0x0}}, {0xFA5F,{0x8457,0x0,0x0,0x0}}, {0xFA60,{0x8910,0x0,0x0,0x0}},
  {0xFA61,{0x8996,0x0,0x0,0x0}}, {0xFA62,{0x8B01,0x0,0x0,0x0}}, {0xFA63,{0x8B39,0x0,0x0,0x0}}, {0xFA64,{0x8CD3,0x0,0x0,0x0}},
  {0xFA65,{0x8D08,0x0,0x0,0x0}}, {0xFA66,{0x8FB6,0x0,0x0,0x0}}, {0xFA67,{0x9038,0x0,0x0,0x0}}, {0xFA68,{0x96E3,0x0,0x0,0x0}},
  {0xFA69,{0x97FF,0x0,0x0,0x0}}, {0xFA6A,{0x983B,0x0,0x0,0x0}}, {0xFA6B,{0x6075,0x0,0x0,0x0}}, {0xFA6C,{0x242EE,0x0,0x0,0x0}},
  {0xFA6D,{0x8218,0x0,0x0,0x0}}, {0xFA70,{0x4E26,0x0,0x0,0x0}}, {0xFA71,{0x51B5,0x0,0x0,0x0}}, {0xFA72,{0x5168,0x0,0x0,0x0}},
  {0xFA73,{0x4F80,0x0,0x0,0x0}}, {0xFA74,{0x5145,0x0,0x0,0x0}}, {0xFA75,{0x5180,0x0,0x0,0x0}}, {0xFA76,{0x52C7,0x0,0x0,0x0}},
  {0xFA77,{0x52FA,0x0,0x0,0x0}}, {0xFA78,{0x559D,0x0,0x0,0x0}}, {0xFA79,{0x5555,0x0,0x0,0x0}}, {0xFA7A,{0x5599,0x0,0x0,0x0}},
  {0xFA7B,{0x55E2,0x0,0x0,0x0}}, {0xFA7C,{0x585A,0x0,0x0,0x0}}, {0xFA7D,{0x58B3,0x0,0x0,0x0}}, {0xFA7E,{0x5944,0x0,0x0,0x0}},
  {0xFA7F,{0x5954,0x0,0x0,0x0}}, {0xFA80,{0x5A62,0x0,0x0,0x0}}, {0xFA81,{0x5B28,0x0,0x0,0x0}}, {0xFA82,{0x5ED2,0x0,0x0,0x0}},
  {0xFA83,{0x5ED9,0x0,0x0,0x0}}, {0xFA84,{0x5F69,0x0,0x0,0x0}}, {0xFA85,{0x5FAD,0x0,0x0,0x0}}, {0xFA86,{0x60D8,0x0,0x0,0x0}},
  {0xFA87,{0x614E,0x0,0x0,0x0}}, {0xFA88,{0x6108,0x0,0x0,0x0}}, {0xFA89,{0x618E,0x0,0x0,0x0}}, {0xFA8A,{0x6160,0x0,0x0,0x0}},
  {0xFA8B,{0x61F2,0x0,0x0,0x0}}, {0xFA8C,{0x6234,0x0,0x0,0x0}}, {0xFA8D,{0x63C4,0x0,0x0,0x0}}, {0xFA8E,{0x641C,0x0,0x0,0x0}},
  {0xFA8F,{0x6452,0x0,0x0,0x0}}, {0xFA90,{0x6556,0x0,0x0,0x0}}, {0xFA91,{0x6674,0x0,0x0,0x0}}, {0xFA92,{0x6717,0x0,0x0,0x0}},
  {0xFA93,{0x671B,0x0,0x0,0x0}}, {0xFA94,{0x6756,0x0,0x0,0x0}}, {0xFA95,{0x6B79,0x0,0x0,0x0}}, {0xFA96,{0x6BBA,0x0,0x0,0x0}},
  {0xFA97,{0x6D41,0x0,0x0,0x0}}, {0xFA98,{0x6EDB,0x0,0x0,0x0}}, {0xFA99,{0x6ECB,0x0,0x0,0x0}}, {0xFA9A,{0x6F22,0x0,0x0,0x0}},
  {0xFA9B,{0x701E,0x0,0x0,0x0}}, {0xFA9C,{0x716E,0x0,0x0,0x0}}, {0xFA9D,{0x77A7,0x0,0x0,0x0}}, {0xFA9E,{0x7235,0x0,0x0,0x0}},
  {0xFA9F,{0x72AF,0x0,0x0,0x0}}, {0xFAA0,{0x732A,0x0,0x0,0x0}}, {0xFAA1,{0x7471,0x0,0x0,0x0}}, {0xFAA2,{0x7506,0x0,0x0,0x0}},
  {0xFAA3,{0x753B,0x0,0x0,0x0}}, {0xFAA4,{0x761D,0x0,0x0,0x0}}, {0xFAA5,{0x761F,0x0,0x0,0x0}}, {0xFAA6,{0x76CA,0x0,0x0,0x0}},
  {0xFAA7,{0x76DB,0x0,0x0,0x0}}, {0xFAA8,{0x76F4,0x0,0x0,0x0}}, {0xFAA9,{0x774A,0x0,0x0,0x0}}, {0xFAAA,{0x7740,0x0,0x0,0x0}},
  {0xFAAB,{0x78CC,0x0,0x0,0x0}}, {0xFAAC,{0x7AB1,0x0,0x0,0x0}}, {0xFAAD,{0x7BC0,0x0,0x0,0x0}}, {0xFAAE,{0x7C7B,0x0,0x0,0x0}},
  {0xFAAF,{0x7D5B,0x0,0x0,0x0}}, {0xFAB0,{0x7DF4,0x0,0x0,0x0}}, {0xFAB1,{0x7F3E,0x0,0x0,0x0}}, {0xFAB2,{0x8005,0x0,0x0,0x0}},
  {0xFAB3,{0x8352,0x0,0x0,0x0}}, {0xFAB4,{0x83EF,0x0,0x0,0x0}}, {0xFAB5,{0x8779,0x0,0x0,0x0}}, {0xFAB6,{0x8941,0x0,0x0,0x0}},
  {0xFAB7,{0x8986,0x0,0x0,0x0}}, {0xFAB8,{0x8996,0x0,0x0,0x0}}, {0xFAB9,{0x8ABF,0x0,0x0,0x0}}, {0xFABA,{0x8AF8,0x0,0x0,0x0}},
  {0xFABB,{0x8ACB,0x0,0x0,0x0}}, {0xFABC,{0x8B01,0x0,0x0,0x0}}, {0xFABD,{0x8AFE,0x0,0x0,0x0}}, {0xFABE,{0x8AED,0x0,0x0,0x0}},
  {0xFABF,{0x8B39,0x0,0x0,0x0}}, {0xFAC0,{0x8B8A,0x0,0x0,0x0}}, {0xFAC1,{0x8D08,0x0,0x0,0x0}}, {0xFAC2,{0x8F38,0x0,0x0,0x0}},
  {0xFAC3,{0x9072,0x0,0x0,0x0}}, {0xFAC4,{0x9199,0x0,0x0,0x0}}, {0xFAC5,{0x9276,0x0,0x0,0x0}}, {0xFAC6,{0x967C,0x0,0x0,0x0}},
  {0xFAC7,{0x96E3,0x0,0x0,0x0}}, {0xFAC8,{0x9756,0x0,0x0,0x0}}, {0xFAC9,{0x97DB,0x0,0x0,0x0}}, {0xFACA,{0x97FF,0x0,0x0,0x0}},
  {0xFACB,{0x980B,0x0,0x0,0x0}}, {0xFACC,{0x983B,0x0,0x0,0x0}}, {0xFACD,{0x9B12,0x0,0x0,0x0}}, {0xFACE,{0x9F9C,0x0,0x0,0x0}},
  {0xFACF,{0x2284A,0x0,0x0,0x0}}, {0xFAD0,{0x22844,0x0,0x0,0x0}}, {0xFAD1,{0x233D5,0x0,0x0,0x0}}, {0xFAD2,{0x3B9D,0x0,0x0,0x0}},
  {0xFAD3,{0x4018,0x0,0x0,0x0}}, {0xFAD4,{0x4039,0x0,0x0,0x0}}, {0xFAD5,{0x25249,0x0,0x0,0x0}}, {0xFAD6,{0x25CD0,0x0,0x0,0x0}},
  {0xFAD7,{0x27ED3,0x0,0x0,0x0}}, {0xFAD8,{0x9F43,0x0,0x0,0x0}}, {0xFAD9,{0x9F8E,0x0,0x0,0x0}}, {0xFB1D,{0x5D9,0x5B4,0x0,0x0}},
  {0xFB1F,{0x5F2,0x5B7,0x0,0x0}}, {0xFB2A,{0x5E9,0x5C1,0x0,0x0}}, {0xFB2B,{0x5E9,0x5C2,0x0,0x0}}, {0xFB2C,{0x5E9,0x5BC,0x5C1,0x0}},
  {0xFB2D,{0x5E9,0x5BC,0x5C2,0x0}}, {0xFB2E,{0x5D0,0x5B7,0x0,0x0}}, {0xFB2F,{0x5D0,0x5B8,0x0,0x0}}, {0xFB30,{0x5D0,0x5BC,0x0,0x0}},
  {0xFB31,{0x5D1,0x5BC,0x0,0x0}}, {0xFB32,{0x5D2,0x5BC,0x0,0x0}}, {0xFB33,{0x5D3,0x5BC,0x0,0x0}}, {0xFB34,{0x5D4,0x5BC,0x0,0x0}},
  {0xFB35,{0x5D5,0x5BC,0x0,0x0}}, {0xFB36,{0x5D6,0x5BC,0x0,0x0}}, {0xFB38,{0x5D8,0x5BC,0x0,0x0}}, {0xFB39,{0x5D9,0x5BC,0x0,0x0}},
  {0xFB3A,{0x5DA,0x5BC,0x0,0x0}}, {0xFB3B,{0x5DB,0x5BC,0x0,0x0}}, {0xFB3C,{0x5DC,0x5BC,0x0,0x0}}, {0xFB3E,{0x5DE,0x5BC,0x0,0x0}},
  {0xFB40,{0x5E0,0x5BC,0x0,0x0}}, {0xFB41,{0x5E1,0x5BC,0x0,0x0}}, {0xFB43,{0x5E3,0x5BC,0x0,0x0}}, {0xFB44,{0x5E4,0x5BC,0x0,0x0}},
  {0xFB46,{0x5E6,0x5BC,0x0,0x0}}, {0xFB47,{0x5E7,0x5BC,0x0,0x0}}, {0xFB48,{0x5E8,0x5BC,0x0,0x0}}, {0xFB49,{0x5E9,0x5BC,0x0,0x0}},
  {0xFB4A,{0x5EA,0x5BC,0x0,0x0}}, {0xFB4B,{0x5D5,0x5B9,0x0,0x0}}, {0xFB4C,{0x5D1,0x5BF,0x0,0x0}}, {0xFB4D,{0x5DB,0x5BF,0x0,0x0}},
  {0xFB4E,{0x5E4,0x5BF,0x0,0x0}}, {0x1109A,{0x11099,0x110BA,0x0,0x0}}, {0x1109C,{0x1109B,0x110BA,0x0,0x0}}, {0x110AB,{0x110A5,0x110BA,0x0,0x0}},
  {0x1112E,{0x11131,0x11127,0x0,0x0}}, {0x1112F,{0x11132,0x11127,0x0,0x0}}, {0x1134B,{0x11347,0x1133E,0x0,0x0}}, {0x1134C,{0x11347,0x11357,0x0,0x0}},
  {0x114BB,{0x114B9,0x114BA,0x0,0x0}}, {0x114BC,{0x114B9,0x114B0,0x0,0x0}}, {0x114BE,{0x114B9,0x114BD,0x0,0x0}}, {0x115BA,{0x115B8,0x115AF,0x0,0x0}},
  {0x115BB,{0x115B9,0x115AF,0x0,0x0}}, {0x11938,{0x11935,0x11930,0x0,0x0}}, {0x1D15E,{0x1D157,0x1D165,0x0,0x0}}, {0x1D15F,{0x1D158,0x1D165,0x0,0x0}},
  {0x1D160,{0x1D158,0x1D165,0x1D16E,0x0}}, {0x1D161,{0x1D158,0x1D165,0x1D16F,0x0}}, {0x1D162,{0x1D158,0x1D165,0x1D170,0x0}}, {0x1D163,{0x1D158,0x1D165,0x1D171,0x0}},
  {0x1D164,{0x1D158,0x1D165,0x1D172,0x0}}, {0x1D1BB,{0x1D1B9,0x1D165,0x0,0x0}}, {0x1D1BC,{0x1D1BA,0x1D165,0x0,0x0}}, {0x1D1BD,{0x1D1B9,0x1D165,0x1D16E,0x0}},
  {0x1D1BE,{0x1D1BA,0x1D165,0x1D16E,0x0}}, {0x1D1BF,{0x1D1B9,0x1D165,0x1D16F,0x0}}, {0x1D1C0,{0x1D1BA,0x1D165,0x1D16F,0x0}}, {0x2F800,{0x4E3D,0x0,0x0,0x0}},
  {0x2F801,{0x4E38,0x0,0x0,0x0}}, {0x2F802,{0x4E41,0x0,0x0,0x0}}, {0x2F803,{0x20122,0x0,0x0,0x0}}, {0x2F804,{0x4F60,0x0,0x0,0x0}},
  {0x2F805,{0x4FAE,0x0,0x0,0x0}}, {0x2F806,{0x4FBB,0x0,0x0,0x0}}, {0x2F807,{0x5002,0x0,0x0,0x0}}, {0x2F808,{0x507A,0x0,0x0,0x0}},
  {0x2F809,{0x5099,0x0,0x0,0x0}}, {0x2F80A,{0x50E7,0x0,0x0,0x0}}, {0x2F80B,{0x50CF,0x0,0x0,0x0}}, {0x2F80C,{0x349E,0x0,0x0,0x0}},
  {0x2F80D,{0x2063A,0x0,0x0,0x0}}, {0x2F80E,{0x514D,0x0,0x0,0x0}}, {0x2F80F,{0x5154,0x0,0x0,0x0}}, {0x2F810,{0x5164,0x0,0x0,0x0}},
  {0x2F811,{0x5177,0x0,0x0,0x0}}, {0x2F812,{0x2051C,0x0,0x0,0x0}}, {0x2F813,{0x34B9,0x0,0x0,0x0}}, {0x2F814,{0x5167,0x0,0x0,0x0}},
  {0x2F815,{0x518D,0x0,0x0,0x0}}, {0x2F816,{0x2054B,0x0,0x0,0x0}}, {0x2F817,{0x5197,0x0,0x0,0x0}}, {0x2F818,{0x51A4,0x0,0x0,0x0}},
  {0x2F819,{0x4ECC,0x0,0x0,0x0}}, {0x2F81A,{0x51AC,0x0,0x0,0x0}}, {0x2F81B,{0x51B5,0x0,0x0,0x0}}, {0x2F81C,{0x291DF,0x0,0x0,0x0}},
  {0x2F81D,{0x51F5,0x0,0x0,0x0}}, {0x2F81E,{0x5203,0x0,0x0,0x0}}, {0x2F81F,{0x34DF,0x0,0x0,0x0}}, {0x2F820,{0x523B,0x0,0x0,0x0}},
  {0x2F821,{0x5246,0x0,0x0,0x0}}, {0x2F822,{0x5272,0x0,0x0,0x0}}, {0x2F823,{0x5277,0x0,0x0,0x0}}, {0x2F824,{0x3515,0x0,0x0,0x0}},
  {0x2F825,{0x52C7,0x0,0x0,0x0}}, {0x2F826,{0x52C9,0x0,0x0,0x0}}, {0x2F827,{0x52E4,0x0,0x0,0x0}}, {0x2F828,{0x52FA,0x0,0x0,0x0}},
  {0x2F829,{0x5305,0x0,0x0,0x0}}, {0x2F82A,{0x5306,0x0,0x0,0x0}}, {0x2F82B,{0x5317,0x0,0x0,0x0}}, {0x2F82C,{0x5349,0x0,0x0,0x0}},
  {0x2F82D,{0x5351,0x0,0x0,0x0}}, {0x2F82E,{0x535A,0x0,0x0,0x0}}, {0x2F82F,{0x5373,0x0,0x0,0x0}}, {0x2F830,{0x537D,0x0,0x0,0x0}},
  {0x2F831,{0x537F,0x0,0x0,0x0}}, {0x2F832,{0x537F,0x0,0x0,0x0}}, {0x2F833,{0x537F,0x0,0x0,0x0}}, {0x2F834,{0x20A2C,0x0,0x0,0x0}},
  {0x2F835,{0x7070,0x0,0x0,0x0}}, {0x2F836,{0x53CA,0x0,0x0,0x0}}, {0x2F837,{0x53DF,0x0,0x0,0x0}}, {0x2F838,{0x20B63,0x0,0x0,0x0}},
  {0x2F839,{0x53EB,0x0,0x0,0x0}}, {0x2F83A,{0x53F1,0x0,0x0,0x0}}, {0x2F83B,{0x5406,0x0,0x0,0x0}}, {0x2F83C,{0x549E,0x0,0x0,0x0}},
  {0x2F83D,{0x5438,0x0,0x0,0x0}}, {0x2F83E,{0x5448,0x0,0x0,0x0}}, {0x2F83F,{0x5468,0x0,0x0,0x0}}, {0x2F840,{0x54A2,0x0,0x0,0x0}},
  {0x2F841,{0x54F6,0x0,0x0,0x0}}, {0x2F842,{0x5510,0x0,0x0,0x0}}, {0x2F843,{0x5553,0x0,0x0,0x0}}, {0x2F844,{0x5563,0x0,0x0,0x0}},
  {0x2F845,{0x5584,0x0,0x0,0x0}}, {0x2F846,{0x5584,0x0,0x0,0x0}}, {0x2F847,{0x5599,0x0,0x0,0x0}}, {0x2F848,{0x55AB,0x0,0x0,0x0}},
  {0x2F849,{0x55B3,0x0,0x0,0x0}}, {0x2F84A,{0x55C2,0x0,0x0,0x0}}, {0x2F84B,{0x5716,0x0,0x0,0x0}}, {0x2F84C,{0x5606,0x0,0x0,0x0}},
  {0x2F84D,{0x5717,0x0,0x0,0x0}}, {0x2F84E,{0x5651,0x0,0x0,0x0}}, {0x2F84F,{0x5674,0x0,0x0,0x0}}, {0x2F850,{0x5207,0x0,0x0,0x0}},
  {0x2F851,{0x58EE,0x0,0x0,0x0}}, {0x2F852,{0x57CE,0x0,0x0,0x0}}, {0x2F853,{0x57F4,0x0,0x0,0x0}}, {0x2F854,{0x580D,0x0,0x0,0x0}},
  {0x2F855,{0x578B,0x0,0x0,0x0}}, {0x2F856,{0x5832,0x0,0x0,0x0}}, {0x2F857,{0x5831,0x0,0x0,0x0}}, {0x2F858,{0x58AC,0x0,0x0,0x0}},
  {0x2F859,{0x214E4,0x0,0x0,0x0}}, {0x2F85A,{0x58F2,0x0,0x0,0x0}}, {0x2F85B,{0x58F7,0x0,0x0,0x0}}, {0x2F85C,{0x5906,0x0,0x0,0x0}},
  {0x2F85D,{0x591A,0x0,0x0,0x0}}, {0x2F85E,{0x5922,0x0,0x0,0x0}}, {0x2F85F,{0x5962,0x0,0x0,0x0}}, {0x2F860,{0x216A8,0x0,0x0,0x0}},
  {0x2F861,{0x216EA,0x0,0x0,0x0}}, {0x2F862,{0x59EC,0x0,0x0,0x0}}, {0x2F863,{0x5A1B,0x0,0x0,0x0}}, {0x2F864,{0x5A27,0x0,0x0,0x0}},
  {0x2F865,{0x59D8,0x0,0x0,0x0}}, {0x2F866,{0x5A66,0x0,0x0,0x0}}, {0x2F867,{0x36EE,0x0,0x0,0x0}}, {0x2F868,{0x36FC,0x0,0x0,0x0}},
  {0x2F869,{0x5B08,0x0,0x0,0x0}}, {0x2F86A,{0x5B3E,0x0,0x0,0x0}}, {0x2F86B,{0x5B3E,0x0,0x0,0x0}}, {0x2F86C,{0x219C8,0x0,0x0,0x0}},
  {0x2F86D,{0x5BC3,0x0,0x0,0x0}}, {0x2F86E,{0x5BD8,0x0,0x0,0x0}}, {0x2F86F,{0x5BE7,0x0,0x0,0x0}}, {0x2F870,{0x5BF3,0x0,0x0,0x0}},
  {0x2F871,{0x21B18,0x0,0x0,0x0}}, {0x2F872,{0x5BFF,0x0,0x0,0x0}}, {0x2F873,{0x5C06,0x0,0x0,0x0}}, {0x2F874,{0x5F53,0x0,0x0,0x0}},
  {0x2F875,{0x5C22,0x0,0x0,0x0}}, {0x2F876,{0x3781,0x0,0x0,0x0}}, {0x2F877,{0x5C60,0x0,0x0,0x0}}, {0x2F878,{0x5C6E,0x0,0x0,0x0}},
  {0x2F879,{0x5CC0,0x0,0x0,0x0}}, {0x2F87A,{0x5C8D,0x0,0x0,0x0}}, {0x2F87B,{0x21DE4,0x0,0x0,0x0}}, {0x2F87C,{0x5D43,0x0,0x0,0x0}},
  {0x2F87D,{0x21DE6,0x0,0x0,0x0}}, {0x2F87E,{0x5D6E,0x0,0x0,0x0}}, {0x2F87F,{0x5D6B,0x0,0x0,0x0}}, {0x2F880,{0x5D7C,0x0,0x0,0x0}},
  {0x2F881,{0x5DE1,0x0,0x0,0x0}}, {0x2F882,{0x5DE2,0x0,0x0,0x0}}, {0x2F883,{0x382F,0x0,0x0,0x0}}, {0x2F884,{0x5DFD,0x0,0x0,0x0}},
  {0x2F885,{0x5E28,0x0,0x0,0x0}}, {0x2F886,{0x5E3D,0x0,0x0,0x0}}, {0x2F887,{0x5E69,0x0,0x0,0x0}}, {0x2F888,{0x3862,0x0,0x0,0x0}},
  {0x2F889,{0x22183,0x0,0x0,0x0}}, {0x2F88A,{0x387C,0x0,0x0,0x0}}, {0x2F88B,{0x5EB0,0x0,0x0,0x0}}, {0x2F88C,{0x5EB3,0x0,0x0,0x0}},
  {0x2F88D,{0x5EB6,0x0,0x0,0x0}}, {0x2F88E,{0x5ECA,0x0,0x0,0x0}}, {0x2F88F,{0x2A392,0x0,0x0,0x0}}, {0x2F890,{0x5EFE,0x0,0x0,0x0}},
  {0x2F891,{0x22331,0x0,0x0,0x0}}, {0x2F892,{0x22331,0x0,0x0,0x0}}, {0x2F893,{0x8201,0x0,0x0,0x0}}, {0x2F894,{0x5F22,0x0,0x0,0x0}},
  {0x2F895,{0x5F22,0x0,0x0,0x0}}, {0x2F896,{0x38C7,0x0,0x0,0x0}}, {0x2F897,{0x232B8,0x0,0x0,0x0}}, {0x2F898,{0x261DA,0x0,0x0,0x0}},
  {0x2F899,{0x5F62,0x0,0x0,0x0}}, {0x2F89A,{0x5F6B,0x0,0x0,0x0}}, {0x2F89B,{0x38E3,0x0,0x0,0x0}}, {0x2F89C,{0x5F9A,0x0,0x0,0x0}},
  {0x2F89D,{0x5FCD,0x0,0x0,0x0}}, {0x2F89E,{0x5FD7,0x0,0x0,0x0}}, {0x2F89F,{0x5FF9,0x0,0x0,0x0}}, {0x2F8A0,{0x6081,0x0,0x0,0x0}},
  {0x2F8A1,{0x393A,0x0,0x0,0x0}}, {0x2F8A2,{0x391C,0x0,0x0,0x0}}, {0x2F8A3,{0x6094,0x0,0x0,0x0}}, {0x2F8A4,{0x226D4,0x0,0x0,0x0}},
  {0x2F8A5,{0x60C7,0x0,0x0,0x0}}, {0x2F8A6,{0x6148,0x0,0x0,0x0}}, {0x2F8A7,{0x614C,0x0,0x0,0x0}}, {0x2F8A8,{0x614E,0x0,0x0,0x0}},
  {0x2F8A9,{0x614C,0x0,0x0,0x0}}, {0x2F8AA,{0x617A,0x0,0x0,0x0}}, {0x2F8AB,{0x618E,0x0,0x0,0x0}}, {0x2F8AC,{0x61B2,0x0,0x0,0x0}},
  {0x2F8AD,{0x61A4,0x0,0x0,0x0}}, {0x2F8AE,{0x61AF,0x0,0x0,0x0}}, {0x2F8AF,{0x61DE,0x0,0x0,0x0}}, {0x2F8B0,{0x61F2,0x0,0x0,0x0}},
  {0x2F8B1,{0x61F6,0x0,0x0,0x0}}, {0x2F8B2,{0x6210,0x0,0x0,0x0}}, {0x2F8B3,{0x621B,0x0,0x0,0x0}}, {0x2F8B4,{0x625D,0x0,0x0,0x0}},
  {0x2F8B5,{0x62B1,0x0,0x0,0x0}}, {0x2F8B6,{0x62D4,0x0,0x0,0x0}}, {0x2F8B7,{0x6350,0x0,0x0,0x0}}, {0x2F8B8,{0x22B0C,0x0,0x0,0x0}},
  {0x2F8B9,{0x633D,0x0,0x0,0x0}}, {0x2F8BA,{0x62FC,0x0,0x0,0x0}}, {0x2F8BB,{0x6368,0x0,0x0,0x0}}, {0x2F8BC,{0x6383,0x0,0x0,0x0}},
  {0x2F8BD,{0x63E4,0x0,0x0,0x0}}, {0x2F8BE,{0x22BF1,0x0,0x0,0x0}}, {0x2F8BF,{0x6422,0x0,0x0,0x0}}, {0x2F8C0,{0x63C5,0x0,0x0,0x0}},
  {0x2F8C1,{0x63A9,0x0,0x0,0x0}}, {0x2F8C2,{0x3A2E,0x0,0x0,0x0}}, {0x2F8C3,{0x6469,0x0,0x0,0x0}}, {0x2F8C4,{0x647E,0x0,0x0,0x0}},
  {0x2F8C5,{0x649D,0x0,0x0,0x0}}, {0x2F8C6,{0x6477,0x0,0x0,0x0}}, {0x2F8C7,{0x3A6C,0x0,0x0,0x0}}, {0x2F8C8,{0x654F,0x0,0x0,0x0}},
  {0x2F8C9,{0x656C,0x0,0x0,0x0}}, {0x2F8CA,{0x2300A,0x0,0x0,0x0}}, {0x2F8CB,{0x65E3,0x0,0x0,0x0}}, {0x2F8CC,{0x66F8,0x0,0x0,0x0}},
  {0x2F8CD,{0x6649,0x0,0x0,0x0}}, {0x2F8CE,{0x3B19,0x0,0x0,0x0}}, {0x2F8CF,{0x6691,0x0,0x0,0x0}}, {0x2F8D0,{0x3B08,0x0,0x0,0x0}},
  {0x2F8D1,{0x3AE4,0x0,0x0,0x0}}, {0x2F8D2,{0x5192,0x0,0x0,0x0}}, {0x2F8D3,{0x5195,0x0,0x0,0x0}}, {0x2F8D4,{0x6700,0x0,0x0,0x0}},
  {0x2F8D5,{0x669C,0x0,0x0,0x0}}, {0x2F8D6,{0x80AD,0x0,0x0,0x0}}, {0x2F8D7,{0x43D9,0x0,0x0,0x0}}, {0x2F8D8,{0x6717,0x0,0x0,0x0}},
  {0x2F8D9,{0x671B,0x0,0x0,0x0}}, {0x2F8DA,{0x6721,0x0,0x0,0x0}}, {0x2F8DB,{0x675E,0x0,0x0,0x0}}, {0x2F8DC,{0x6753,0x0,0x0,0x0}},
  {0x2F8DD,{0x233C3,0x0,0x0,0x0}}, {0x2F8DE,{0x3B49,0x0,0x0,0x0}}, {0x2F8DF,{0x67FA,0x0,0x0,0x0}}, {0x2F8E0,{0x6785,0x0,0x0,0x0}},
  {0x2F8E1,{0x6852,0x0,0x0,0x0}}, {0x2F8E2,{0x6885,0x0,0x0,0x0}}, {0x2F8E3,{0x2346D,0x0,0x0,0x0}}, {0x2F8E4,{0x688E,0x0,0x0,0x0}},
  {0x2F8E5,{0x681F,0x0,0x0,0x0}}, {0x2F8E6,{0x6914,0x0,0x0,0x0}}, {0x2F8E7,{0x3B9D,0x0,0x0,0x0}}, {0x2F8E8,{0x6942,0x0,0x0,0x0}},
  {0x2F8E9,{0x69A3,0x0,0x0,0x0}}, {0x2F8EA,{0x69EA,0x0,0x0,0x0}}, {0x2F8EB,{0x6AA8,0x0,0x0,0x0}}, {0x2F8EC,{0x236A3,0x0,0x0,0x0}},
  {0x2F8ED,{0x6ADB,0x0,0x0,0x0}}, {0x2F8EE,{0x3C18,0x0,0x0,0x0}}, {0x2F8EF,{0x6B21,0x0,0x0,0x0}}, {0x2F8F0,{0x238A7,0x0,0x0,0x0}},
  {0x2F8F1,{0x6B54,0x0,0x0,0x0}}, {0x2F8F2,{0x3C4E,0x0,0x0,0x0}}, {0x2F8F3,{0x6B72,0x0,0x0,0x0}}, {0x2F8F4,{0x6B9F,0x0,0x0,0x0}},
  {0x2F8F5,{0x6BBA,0x0,0x0,0x0}}, {0x2F8F6,{0x6BBB,0x0,0x0,0x0}}, {0x2F8F7,{0x23A8D,0x0,0x0,0x0}}, {0x2F8F8,{0x21D0B,0x0,0x0,0x0}},
  {0x2F8F9,{0x23AFA,0x0,0x0,0x0}}, {0x2F8FA,{0x6C4E,0x0,0x0,0x0}}, {0x2F8FB,{0x23CBC,0x0,0x0,0x0}}, {0x2F8FC,{0x6CBF,0x0,0x0,0x0}},
  {0x2F8FD,{0x6CCD,0x0,0x0,0x0}}, {0x2F8FE,{0x6C67,0x0,0x0,0x0}}, {0x2F8FF,{0x6D16,0x0,0x0,0x0}}, {0x2F900,{0x6D3E,0x0,0x0,0x0}},
  {0x2F901,{0x6D77,0x0,0x0,0x0}}, {0x2F902,{0x6D41,0x0,0x0,0x0}}, {0x2F903,{0x6D69,0x0,0x0,0x0}}, {0x2F904,{0x6D78,0x0,0x0,0x0}},
  {0x2F905,{0x6D85,0x0,0x0,0x0}}, {0x2F906,{0x23D1E,0x0,0x0,0x0}}, {0x2F907,{0x6D34,0x0,0x0,0x0}}, {0x2F908,{0x6E2F,0x0,0x0,0x0}},
  {0x2F909,{0x6E6E,0x0,0x0,0x0}}, {0x2F90A,{0x3D33,0x0,0x0,0x0}}, {0x2F90B,{0x6ECB,0x0,0x0,0x0}}, {0x2F90C,{0x6EC7,0x0,0x0,0x0}},
  {0x2F90D,{0x23ED1,0x0,0x0,0x0}}, {0x2F90E,{0x6DF9,0x0,0x0,0x0}}, {0x2F90F,{0x6F6E,0x0,0x0,0x0}}, {0x2F910,{0x23F5E,0x0,0x0,0x0}},
  {0x2F911,{0x23F8E,0x0,0x0,0x0}}, {0x2F912,{0x6FC6,0x0,0x0,0x0}}, {0x2F913,{0x7039,0x0,0x0,0x0}}, {0x2F914,{0x701E,0x0,0x0,0x0}},
  {0x2F915,{0x701B,0x0,0x0,0x0}}, {0x2F916,{0x3D96,0x0,0x0,0x0}}, {0x2F917,{0x704A,0x0,0x0,0x0}}, {0x2F918,{0x707D,0x0,0x0,0x0}},
  {0x2F919,{0x7077,0x0,0x0,0x0}}, {0x2F91A,{0x70AD,0x0,0x0,0x0}}, {0x2F91B,{0x20525,0x0,0x0,0x0}}, {0x2F91C,{0x7145,0x0,0x0,0x0}},
  {0x2F91D,{0x24263,0x0,0x0,0x0}}, {0x2F91E,{0x719C,0x0,0x0,0x0}}, {0x2F91F,{0x243AB,0x0,0x0,0x0}}, {0x2F920,{0x7228,0x0,0x0,0x0}},
  {0x2F921,{0x7235,0x0,0x0,0x0}}, {0x2F922,{0x7250,0x0,0x0,0x0}}, {0x2F923,{0x24608,0x0,0x0,0x0}}, {0x2F924,{0x7280,0x0,0x0,0x0}},
  {0x2F925,{0x7295,0x0,0x0,0x0}}, {0x2F926,{0x24735,0x0,0x0,0x0}}, {0x2F927,{0x24814,0x0,0x0,0x0}}, {0x2F928,{0x737A,0x0,0x0,0x0}},
  {0x2F929,{0x738B,0x0,0x0,0x0}}, {0x2F92A,{0x3EAC,0x0,0x0,0x0}}, {0x2F92B,{0x73A5,0x0,0x0,0x0}}, {0x2F92C,{0x3EB8,0x0,0x0,0x0}},
  {0x2F92D,{0x3EB8,0x0,0x0,0x0}}, {0x2F92E,{0x7447,0x0,0x0,0x0}}, {0x2F92F,{0x745C,0x0,0x0,0x0}}, {0x2F930,{0x7471,0x0,0x0,0x0}},
  {0x2F931,{0x7485,0x0,0x0,0x0}}, {0x2F932,{0x74CA,0x0,0x0,0x0}}, {0x2F933,{0x3F1B,0x0,0x0,0x0}}, {0x2F934,{0x7524,0x0,0x0,0x0}},
  {0x2F935,{0x24C36,0x0,0x0,0x0}}, {0x2F936,{0x753E,0x0,0x0,0x0}}, {0x2F937,{0x24C92,0x0,0x0,0x0}}, {0x2F938,{0x7570,0x0,0x0,0x0}},
  {0x2F939,{0x2219F,0x0,0x0,0x0}}, {0x2F93A,{0x7610,0x0,0x0,0x0}}, {0x2F93B,{0x24FA1,0x0,0x0,0x0}}, {0x2F93C,{0x24FB8,0x0,0x0,0x0}},
  {0x2F93D,{0x25044,0x0,0x0,0x0}}, {0x2F93E,{0x3FFC,0x0,0x0,0x0}}, {0x2F93F,{0x4008,0x0,0x0,0x0}}, {0x2F940,{0x76F4,0x0,0x0,0x0}},
  {0x2F941,{0x250F3,0x0,0x0,0x0}}, {0x2F942,{0x250F2,0x0,0x0,0x0}}, {0x2F943,{0x25119,0x0,0x0,0x0}}, {0x2F944,{0x25133,0x0,0x0,0x0}},
  {0x2F945,{0x771E,0x0,0x0,0x0}}, {0x2F946,{0x771F,0x0,0x0,0x0}}, {0x2F947,{0x771F,0x0,0x0,0x0}}, {0x2F948,{0x774A,0x0,0x0,0x0}},
  {0x2F949,{0x4039,0x0,0x0,0x0}}, {0x2F94A,{0x778B,0x0,0x0,0x0}}, {0x2F94B,{0x4046,0x0,0x0,0x0}}, {0x2F94C,{0x4096,0x0,0x0,0x0}},
  {0x2F94D,{0x2541D,0x0,0x0,0x0}}, {0x2F94E,{0x784E,0x0,0x0,0x0}}, {0x2F94F,{0x788C,0x0,0x0,0x0}}, {0x2F950,{0x78CC,0x0,0x0,0x0}},
  {0x2F951,{0x40E3,0x0,0x0,0x0}}, {0x2F952,{0x25626,0x0,0x0,0x0}}, {0x2F953,{0x7956,0x0,0x0,0x0}}, {0x2F954,{0x2569A,0x0,0x0,0x0}},
  {0x2F955,{0x256C5,0x0,0x0,0x0}}, {0x2F956,{0x798F,0x0,0x0,0x0}}, {0x2F957,{0x79EB,0x0,0x0,0x0}}, {0x2F958,{0x412F,0x0,0x0,0x0}},
  {0x2F959,{0x7A40,0x0,0x0,0x0}}, {0x2F95A,{0x7A4A,0x0,0x0,0x0}}, {0x2F95B,{0x7A4F,0x0,0x0,0x0}}, {0x2F95C,{0x2597C,0x0,0x0,0x0}},
  {0x2F95D,{0x25AA7,0x0,0x0,0x0}}, {0x2F95E,{0x25AA7,0x0,0x0,0x0}}, {0x2F95F,{0x7AEE,0x0,0x0,0x0}}, {0x2F960,{0x4202,0x0,0x0,0x0}},
  {0x2F961,{0x25BAB,0x0,0x0,0x0}}, {0x2F962,{0x7BC6,0x0,0x0,0x0}}, {0x2F963,{0x7BC9,0x0,0x0,0x0}}, {0x2F964,{0x4227,0x0,0x0,0x0}},
  {0x2F965,{0x25C80,0x0,0x0,0x0}}, {0x2F966,{0x7CD2,0x0,0x0,0x0}}, {0x2F967,{0x42A0,0x0,0x0,0x0}}, {0x2F968,{0x7CE8,0x0,0x0,0x0}},
  {0x2F969,{0x7CE3,0x0,0x0,0x0}}, {0x2F96A,{0x7D00,0x0,0x0,0x0}}, {0x2F96B,{0x25F86,0x0,0x0,0x0}}, {0x2F96C,{0x7D63,0x0,0x0,0x0}},
  {0x2F96D,{0x4301,0x0,0x0,0x0}}, {0x2F96E,{0x7DC7,0x0,0x0,0x0}}, {0x2F96F,{0x7E02,0x0,0x0,0x0}}, {0x2F970,{0x7E45,0x0,0x0,0x0}},
  {0x2F971,{0x4334,0x0,0x0,0x0}}, {0x2F972,{0x26228,0x0,0x0,0x0}}, {0x2F973,{0x26247,0x0,0x0,0x0}}, {0x2F974,{0x4359,0x0,0x0,0x0}},
  {0x2F975,{0x262D9,0x0,0x0,0x0}}, {0x2F976,{0x7F7A,0x0,0x0,0x0}}, {0x2F977,{0x2633E,0x0,0x0,0x0}}, {0x2F978,{0x7F95,0x0,0x0,0x0}},
  {0x2F979,{0x7FFA,0x0,0x0,0x0}}, {0x2F97A,{0x8005,0x0,0x0,0x0}}, {0x2F97B,{0x264DA,0x0,0x0,0x0}}, {0x2F97C,{0x26523,0x0,0x0,0x0}},
  {0x2F97D,{0x8060,0x0,0x0,0x0}}, {0x2F97E,{0x265A8,0x0,0x0,0x0}}, {0x2F97F,{0x8070,0x0,0x0,0x0}}, {0x2F980,{0x2335F,0x0,0x0,0x0}},
  {0x2F981,{0x43D5,0x0,0x0,0x0}}, {0x2F982,{0x80B2,0x0,0x0,0x0}}, {0x2F983,{0x8103,0x0,0x0,0x0}}, {0x2F984,{0x440B,0x0,0x0,0x0}},
  {0x2F985,{0x813E,0x0,0x0,0x0}}, {0x2F986,{0x5AB5,0x0,0x0,0x0}}, {0x2F987,{0x267A7,0x0,0x0,0x0}}, {0x2F988,{0x267B5,0x0,0x0,0x0}},
  {0x2F989,{0x23393,0x0,0x0,0x0}}, {0x2F98A,{0x2339C,0x0,0x0,0x0}}, {0x2F98B,{0x8201,0x0,0x0,0x0}}, {0x2F98C,{0x8204,0x0,0x0,0x0}},
  {0x2F98D,{0x8F9E,0x0,0x0,0x0}}, {0x2F98E,{0x446B,0x0,0x0,0x0}}, {0x2F98F,{0x8291,0x0,0x0,0x0}}, {0x2F990,{0x828B,0x0,0x0,0x0}},
  {0x2F991,{0x829D,0x0,0x0,0x0}}, {0x2F992,{0x52B3,0x0,0x0,0x0}}, {0x2F993,{0x82B1,0x0,0x0,0x0}}, {0x2F994,{0x82B3,0x0,0x0,0x0}},
  {0x2F995,{0x82BD,0x0,0x0,0x0}}, {0x2F996,{0x82E6,0x0,0x0,0x0}}, {0x2F997,{0x26B3C,0x0,0x0,0x0}}, {0x2F998,{0x82E5,0x0,0x0,0x0}},
  {0x2F999,{0x831D,0x0,0x0,0x0}}, {0x2F99A,{0x8363,0x0,0x0,0x0}}, {0x2F99B,{0x83AD,0x0,0x0,0x0}}, {0x2F99C,{0x8323,0x0,0x0,0x0}},
  {0x2F99D,{0x83BD,0x0,0x0,0x0}}, {0x2F99E,{0x83E7,0x0,0x0,0x0}}, {0x2F99F,{0x8457,0x0,0x0,0x0}}, {0x2F9A0,{0x8353,0x0,0x0,0x0}},
  {0x2F9A1,{0x83CA,0x0,0x0,0x0}}, {0x2F9A2,{0x83CC,0x0,0x0,0x0}}, {0x2F9A3,{0x83DC,0x0,0x0,0x0}}, {0x2F9A4,{0x26C36,0x0,0x0,0x0}},
  {0x2F9A5,{0x26D6B,0x0,0x0,0x0}}, {0x2F9A6,{0x26CD5,0x0,0x0,0x0}}, {0x2F9A7,{0x452B,0x0,0x0,0x0}}, {0x2F9A8,{0x84F1,0x0,0x0,0x0}},
  {0x2F9A9,{0x84F3,0x0,0x0,0x0}}, {0x2F9AA,{0x8516,0x0,0x0,0x0}}, {0x2F9AB,{0x273CA,0x0,0x0,0x0}}, {0x2F9AC,{0x8564,0x0,0x0,0x0}},
  {0x2F9AD,{0x26F2C,0x0,0x0,0x0}}, {0x2F9AE,{0x455D,0x0,0x0,0x0}}, {0x2F9AF,{0x4561,0x0,0x0,0x0}}, {0x2F9B0,{0x26FB1,0x0,0x0,0x0}},
  {0x2F9B1,{0x270D2,0x0,0x0,0x0}}, {0x2F9B2,{0x456B,0x0,0x0,0x0}}, {0x2F9B3,{0x8650,0x0,0x0,0x0}}, {0x2F9B4,{0x865C,0x0,0x0,0x0}},
  {0x2F9B5,{0x8667,0x0,0x0,0x0}}, {0x2F9B6,{0x8669,0x0,0x0,0x0}}, {0x2F9B7,{0x86A9,0x0,0x0,0x0}}, {0x2F9B8,{0x8688,0x0,0x0,0x0}},
  {0x2F9B9,{0x870E,0x0,0x0,0x0}}, {0x2F9BA,{0x86E2,0x0,0x0,0x0}}, {0x2F9BB,{0x8779,0x0,0x0,0x0}}, {0x2F9BC,{0x8728,0x0,0x0,0x0}},
  {0x2F9BD,{0x876B,0x0,0x0,0x0}}, {0x2F9BE,{0x8786,0x0,0x0,0x0}}, {0x2F9BF,{0x45D7,0x0,0x0,0x0}}, {0x2F9C0,{0x87E1,0x0,0x0,0x0}},
  {0x2F9C1,{0x8801,0x0,0x0,0x0}}, {0x2F9C2,{0x45F9,0x0,0x0,0x0}}, {0x2F9C3,{0x8860,0x0,0x0,0x0}}, {0x2F9C4,{0x8863,0x0,0x0,0x0}},
  {0x2F9C5,{0x27667,0x0,0x0,0x0}}, {0x2F9C6,{0x88D7,0x0,0x0,0x0}}, {0x2F9C7,{0x88DE,0x0,0x0,0x0}}, {0x2F9C8,{0x4635,0x0,0x0,0x0}},
  {0x2F9C9,{0x88FA,0x0,0x0,0x0}}, {0x2F9CA,{0x34BB,0x0,0x0,0x0}}, {0x2F9CB,{0x278AE,0x0,0x0,0x0}}, {0x2F9CC,{0x27966,0x0,0x0,0x0}},
  {0x2F9CD,{0x46BE,0x0,0x0,0x0}}, {0x2F9CE,{0x46C7,0x0,0x0,0x0}}, {0x2F9CF,{0x8AA0,0x0,0x0,0x0}}, {0x2F9D0,{0x8AED,0x0,0x0,0x0}},
  {0x2F9D1,{0x8B8A,0x0,0x0,0x0}}, {0x2F9D2,{0x8C55,0x0,0x0,0x0}}, {0x2F9D3,{0x27CA8,0x0,0x0,0x0}}, {0x2F9D4,{0x8CAB,0x0,0x0,0x0}},
  {0x2F9D5,{0x8CC1,0x0,0x0,0x0}}, {0x2F9D6,{0x8D1B,0x0,0x0,0x0}}, {0x2F9D7,{0x8D77,0x0,0x0,0x0}}, {0x2F9D8,{0x27F2F,0x0,0x0,0x0}},
  {0x2F9D9,{0x20804,0x0,0x0,0x0}}, {0x2F9DA,{0x8DCB,0x0,0x0,0x0}}, {0x2F9DB,{0x8DBC,0x0,0x0,0x0}}, {0x2F9DC,{0x8DF0,0x0,0x0,0x0}},
  {0x2F9DD,{0x208DE,0x0,0x0,0x0}}, {0x2F9DE,{0x8ED4,0x0,0x0,0x0}}, {0x2F9DF,{0x8F38,0x0,0x0,0x0}}, {0x2F9E0,{0x285D2,0x0,0x0,0x0}},
  {0x2F9E1,{0x285ED,0x0,0x0,0x0}}, {0x2F9E2,{0x9094,0x0,0x0,0x0}}, {0x2F9E3,{0x90F1,0x0,0x0,0x0}}, {0x2F9E4,{0x9111,0x0,0x0,0x0}},
  {0x2F9E5,{0x2872E,0x0,0x0,0x0}}, {0x2F9E6,{0x911B,0x0,0x0,0x0}}, {0x2F9E7,{0x9238,0x0,0x0,0x0}}, {0x2F9E8,{0x92D7,0x0,0x0,0x0}},
  {0x2F9E9,{0x92D8,0x0,0x0,0x0}}, {0x2F9EA,{0x927C,0x0,0x0,0x0}}, {0x2F9EB,{0x93F9,0x0,0x0,0x0}}, {0x2F9EC,{0x9415,0x0,0x0,0x0}},
  {0x2F9ED,{0x28BFA,0x0,0x0,0x0}}, {0x2F9EE,{0x958B,0x0,0x0,0x0}}, {0x2F9EF,{0x4995,0x0,0x0,0x0}}, {0x2F9F0,{0x95B7,0x0,0x0,0x0}},
  {0x2F9F1,{0x28D77,0x0,0x0,0x0}}, {0x2F9F2,{0x49E6,0x0,0x0,0x0}}, {0x2F9F3,{0x96C3,0x0,0x0,0x0}}, {0x2F9F4,{0x5DB2,0x0,0x0,0x0}},
  {0x2F9F5,{0x9723,0x0,0x0,0x0}}, {0x2F9F6,{0x29145,0x0,0x0,0x0}}, {0x2F9F7,{0x2921A,0x0,0x0,0x0}}, {0x2F9F8,{0x4A6E,0x0,0x0,0x0}},
  {0x2F9F9,{0x4A76,0x0,0x0,0x0}}, {0x2F9FA,{0x97E0,0x0,0x0,0x0}}, {0x2F9FB,{0x2940A,0x0,0x0,0x0}}, {0x2F9FC,{0x4AB2,0x0,0x0,0x0}},
  {0x2F9FD,{0x29496,0x0,0x0,0x0}}, {0x2F9FE,{0x980B,0x0,0x0,0x0}}, {0x2F9FF,{0x980B,0x0,0x0,0x0}}, {0x2FA00,{0x9829,0x0,0x0,0x0}},
  {0x2FA01,{0x295B6,0x0,0x0,0x0}}, {0x2FA02,{0x98E2,0x0,0x0,0x0}}, {0x2FA03,{0x4B33,0x0,0x0,0x0}}, {0x2FA04,{0x9929,0x0,0x0,0x0}},
  {0x2FA05,{0x99A7,0x0,0x0,0x0}}, {0x2FA06,{0x99C2,0x0,0x0,0x0}}, {0x2FA07,{0x99FE,0x0,0x0,0x0}}, {0x2FA08,{0x4BCE,0x0,0x0,0x0}},
  {0x2FA09,{0x29B30,0x0,0x0,0x0}}, {0x2FA0A,{0x9B12,0x0,0x0,0x0}}, {0x2FA0B,{0x9C40,0x0,0x0,0x0}}, {0x2FA0C,{0x9CFD,0x0,0x0,0x0}},
  {0x2FA0D,{0x4CCE,0x0,0x0,0x0}}, {0x2FA0E,{0x4CED,0x0,0x0,0x0}}, {0x2FA0F,{0x9D67,0x0,0x0,0x0}}, {0x2FA10,{0x2A0CE,0x0,0x0,0x0}},
  {0x2FA11,{0x4CF8,0x0,0x0,0x0}}, {0x2FA12,{0x2A105,0x0,0x0,0x0}}, {0x2FA13,{0x2A20E,0x0,0x0,0x0}}, {0x2FA14,{0x2A291,0x0,0x0,0x0}},
  {0x2FA15,{0x9EBB,0x0,0x0,0x0}}, {0x2FA16,{0x4D56,0x0,0x0,0x0}}, {0x2FA17,{0x9EF9,0x0,0x0,0x0}}, {0x2FA18,{0x9EFE,0x0,0x0,0x0}},
  {0x2FA19,{0x9F05,0x0,0x0,0x0}}, {0x2FA1A,{0x9F0F,0x0,0x0,0x0}}, {0x2FA1B,{0x9F16,0x0,0x0,0x0}}, {0x2FA1C,{0x9F3B,0x0,0x0,0x0}},
  {0x2FA1D,{0x2A600,0x0,0x0,0x0}},
};

/* canonical composition pairs (primary composites), sorted by (a, b) */
static const sdx__ucomp sdx__uni_compose[941] = {
  {0x3C,0x338,0x226E}, {0x3D,0x338,0x2260}, {0x3E,0x338,0x226F}, {0x41,0x300,0xC0}, {0x41,0x301,0xC1},
  {0x41,0x302,0xC2}, {0x41,0x303,0xC3}, {0x41,0x304,0x100}, {0x41,0x306,0x102}, {0x41,0x307,0x226},
  {0x41,0x308,0xC4}, {0x41,0x309,0x1EA2}, {0x41,0x30A,0xC5}, {0x41,0x30C,0x1CD}, {0x41,0x30F,0x200},
  {0x41,0x311,0x202}, {0x41,0x323,0x1EA0}, {0x41,0x325,0x1E00}, {0x41,0x328,0x104}, {0x42,0x307,0x1E02},
  {0x42,0x323,0x1E04}, {0x42,0x331,0x1E06}, {0x43,0x301,0x106}, {0x43,0x302,0x108}, {0x43,0x307,0x10A},
  {0x43,0x30C,0x10C}, {0x43,0x327,0xC7}, {0x44,0x307,0x1E0A}, {0x44,0x30C,0x10E}, {0x44,0x323,0x1E0C},
  {0x44,0x327,0x1E10}, {0x44,0x32D,0x1E12}, {0x44,0x331,0x1E0E}, {0x45,0x300,0xC8}, {0x45,0x301,0xC9},
  {0x45,0x302,0xCA}, {0x45,0x303,0x1EBC}, {0x45,0x304,0x112}, {0x45,0x306,0x114}, {0x45,0x307,0x116},
  {0x45,0x308,0xCB}, {0x45,0x309,0x1EBA}, {0x45,0x30C,0x11A}, {0x45,0x30F,0x204}, {0x45,0x311,0x206},
  {0x45,0x323,0x1EB8}, {0x45,0x327,0x228}, {0x45,0x328,0x118}, {0x45,0x32D,0x1E18}, {0x45,0x330,0x1E1A},
  {0x46,0x307,0x1E1E}, {0x47,0x301,0x1F4}, {0x47,0x302,0x11C}, {0x47,0x304,0x1E20}, {0x47,0x306,0x11E},
  {0x47,0x307,0x120}, {0x47,0x30C,0x1E6}, {0x47,0x327,0x122}, {0x48,0x302,0x124}, {0x48,0x307,0x1E22},
  {0x48,0x308,0x1E26}, {0x48,0x30C,0x21E}, {0x48,0x323,0x1E24}, {0x48,0x327,0x1E28}, {0x48,0x32E,0x1E2A},
  {0x49,0x300,0xCC}, {0x49,0x301,0xCD}, {0x49,0x302,0xCE}, {0x49,0x303,0x128}, {0x49,0x304,0x12A},
  {0x49,0x306,0x12C}, {0x49,0x307,0x130}, {0x49,0x308,0xCF}, {0x49,0x309,0x1EC8}, {0x49,0x30C,0x1CF},
  {0x49,0x30F,0x208}, {0x49,0x311,0x20A}, {0x49,0x323,0x1ECA}, {0x49,0x328,0x12E}, {0x49,0x330,0x1E2C},
  {0x4A,0x302,0x134}, {0x4B,0x301,0x1E30}, {0x4B,0x30C,0x1E8}, {0x4B,0x323,0x1E32}, {0x4B,0x327,0x136},
  {0x4B,0x331,0x1E34}, {0x4C,0x301,0x139}, {0x4C,0x30C,0x13D}, {0x4C,0x323,0x1E36}, {0x4C,0x327,0x13B},
  {0x4C,0x32D,0x1E3C}, {0x4C,0x331,0x1E3A}, {0x4D,0x301,0x1E3E}, {0x4D,0x307,0x1E40}, {0x4D,0x323,0x1E42},
  {0x4E,0x300,0x1F8}, {0x4E,0x301,0x143}, {0x4E,0x303,0xD1}, {0x4E,0x307,0x1E44}, {0x4E,0x30C,0x147},
  {0x4E,0x323,0x1E46}, {0x4E,0x327,0x145}, {0x4E,0x32D,0x1E4A}, {0x4E,0x331,0x1E48}, {0x4F,0x300,0xD2},
  {0x4F,0x301,0xD3}, {0x4F,0x302,0xD4}, {0x4F,0x303,0xD5}, {0x4F,0x304,0x14C}, {0x4F,0x306,0x14E},
  {0x4F,0x307,0x22E}, {0x4F,0x308,0xD6}, {0x4F,0x309,0x1ECE}, {0x4F,0x30B,0x150}, {0x4F,0x30C,0x1D1},
  {0x4F,0x30F,0x20C}, {0x4F,0x311,0x20E}, {0x4F,0x31B,0x1A0}, {0x4F,0x323,0x1ECC}, {0x4F,0x328,0x1EA},
  {0x50,0x301,0x1E54}, {0x50,0x307,0x1E56}, {0x52,0x301,0x154}, {0x52,0x307,0x1E58}, {0x52,0x30C,0x158},
  {0x52,0x30F,0x210}, {0x52,0x311,0x212}, {0x52,0x323,0x1E5A}, {0x52,0x327,0x156}, {0x52,0x331,0x1E5E},
  {0x53,0x301,0x15A}, {0x53,0x302,0x15C}, {0x53,0x307,0x1E60}, {0x53,0x30C,0x160}, {0x53,0x323,0x1E62},
  {0x53,0x326,0x218}, {0x53,0x327,0x15E}, {0x54,0x307,0x1E6A}, {0x54,0x30C,0x164}, {0x54,0x323,0x1E6C},
  {0x54,0x326,0x21A}, {0x54,0x327,0x162}, {0x54,0x32D,0x1E70}, {0x54,0x331,0x1E6E}, {0x55,0x300,0xD9},
  {0x55,0x301,0xDA}, {0x55,0x302,0xDB}, {0x55,0x303,0x168}, {0x55,0x304,0x16A}, {0x55,0x306,0x16C},
  {0x55,0x308,0xDC}, {0x55,0x309,0x1EE6}, {0x55,0x30A,0x16E}, {0x55,0x30B,0x170}, {0x55,0x30C,0x1D3},
  {0x55,0x30F,0x214}, {0x55,0x311,0x216}, {0x55,0x31B,0x1AF}, {0x55,0x323,0x1EE4}, {0x55,0x324,0x1E72},
  {0x55,0x328,0x172}, {0x55,0x32D,0x1E76}, {0x55,0x330,0x1E74}, {0x56,0x303,0x1E7C}, {0x56,0x323,0x1E7E},
  {0x57,0x300,0x1E80}, {0x57,0x301,0x1E82}, {0x57,0x302,0x174}, {0x57,0x307,0x1E86}, {0x57,0x308,0x1E84},
  {0x57,0x323,0x1E88}, {0x58,0x307,0x1E8A}, {0x58,0x308,0x1E8C}, {0x59,0x300,0x1EF2}, {0x59,0x301,0xDD},
  {0x59,0x302,0x176}, {0x59,0x303,0x1EF8}, {0x59,0x304,0x232}, {0x59,0x307,0x1E8E}, {0x59,0x308,0x178},
  {0x59,0x309,0x1EF6}, {0x59,0x323,0x1EF4}, {0x5A,0x301,0x179}, {0x5A,0x302,0x1E90}, {0x5A,0x307,0x17B},
  {0x5A,0x30C,0x17D}, {0x5A,0x323,0x1E92}, {0x5A,0x331,0x1E94}, {0x61,0x300,0xE0}, {0x61,0x301,0xE1},
  {0x61,0x302,0xE2}, {0x61,0x303,0xE3}, {0x61,0x304,0x101}, {0x61,0x306,0x103}, {0x61,0x307,0x227},
  {0x61,0x308,0xE4}, {0x61,0x309,0x1EA3}, {0x61,0x30A,0xE5}, {0x61,0x30C,0x1CE}, {0x61,0x30F,0x201},
  {0x61,0x311,0x203}, {0x61,0x323,0x1EA1}, {0x61,0x325,0x1E01}, {0x61,0x328,0x105}, {0x62,0x307,0x1E03},
  {0x62,0x323,0x1E05}, {0x62,0x331,0x1E07}, {0x63,0x301,0x107}, {0x63,0x302,0x109}, {0x63,0x307,0x10B},
  {0x63,0x30C,0x10D}, {0x63,0x327,0xE7}, {0x64,0x307,0x1E0B}, {0x64,0x30C,0x10F}, {0x64,0x323,0x1E0D},
  {0x64,0x327,0x1E11}, {0x64,0x32D,0x1E13}, {0x64,0x331,0x1E0F}, {0x65,0x300,0xE8}, {0x65,0x301,0xE9},
  {0x65,0x302,0xEA}, {0x65,0x303,0x1EBD}, {0x65,0x304,0x113}, {0x65,0x306,0x115}, {0x65,0x307,0x117},
  {0x65,0x308,0xEB}, {0x65,0x309,0x1EBB}, {0x65,0x30C,0x11B}, {0x65,0x30F,0x205}, {0x65,0x311,0x207},
  {0x65,0x323,0x1EB9}, {0x65,0x327,0x229}, {0x65,0x328,0x119}, {0x65,0x32D,0x1E19}, {0x65,0x330,0x1E1B},
  {0x66,0x307,0x1E1F}, {0x67,0x301,0x1F5}, {0x67,0x302,0x11D}, {0x67,0x304,0x1E21}, {0x67,0x306,0x11F},
  {0x67,0x307,0x121}, {0x67,0x30C,0x1E7}, {0x67,0x327,0x123}, {0x68,0x302,0x125}, {0x68,0x307,0x1E23},
  {0x68,0x308,0x1E27}, {0x68,0x30C,0x21F}, {0x68,0x323,0x1E25}, {0x68,0x327,0x1E29}, {0x68,0x32E,0x1E2B},
  {0x68,0x331,0x1E96}, {0x69,0x300,0xEC}, {0x69,0x301,0xED}, {0x69,0x302,0xEE}, {0x69,0x303,0x129},
  {0x69,0x304,0x12B}, {0x69,0x306,0x12D}, {0x69,0x308,0xEF}, {0x69,0x309,0x1EC9}, {0x69,0x30C,0x1D0},
  {0x69,0x30F,0x209}, {0x69,0x311,0x20B}, {0x69,0x323,0x1ECB}, {0x69,0x328,0x12F}, {0x69,0x330,0x1E2D},
  {0x6A,0x302,0x135}, {0x6A,0x30C,0x1F0}, {0x6B,0x301,0x1E31}, {0x6B,0x30C,0x1E9}, {0x6B,0x323,0x1E33},
  {0x6B,0x327,0x137}, {0x6B,0x331,0x1E35}, {0x6C,0x301,0x13A}, {0x6C,0x30C,0x13E}, {0x6C,0x323,0x1E37},
  {0x6C,0x327,0x13C}, {0x6C,0x32D,0x1E3D}, {0x6C,0x331,0x1E3B}, {0x6D,0x301,0x1E3F}, {0x6D,0x307,0x1E41},
  {0x6D,0x323,0x1E43}, {0x6E,0x300,0x1F9}, {0x6E,0x301,0x144}, {0x6E,0x303,0xF1}, {0x6E,0x307,0x1E45},
  {0x6E,0x30C,0x148}, {0x6E,0x323,0x1E47}, {0x6E,0x327,0x146}, {0x6E,0x32D,0x1E4B}, {0x6E,0x331,0x1E49},
  {0x6F,0x300,0xF2}, {0x6F,0x301,0xF3}, {0x6F,0x302,0xF4}, {0x6F,0x303,0xF5}, {0x6F,0x304,0x14D},
  {0x6F,0x306,0x14F}, {0x6F,0x307,0x22F}, {0x6F,0x308,0xF6}, {0x6F,0x309,0x1ECF}, {0x6F,0x30B,0x151},
  {0x6F,0x30C,0x1D2}, {0x6F,0x30F,0x20D}, {0x6F,0x311,0x20F}, {0x6F,0x31B,0x1A1}, {0x6F,0x323,0x1ECD},
  {0x6F,0x328,0x1EB}, {0x70,0x301,0x1E55}, {0x70,0x307,0x1E57}, {0x72,0x301,0x155}, {0x72,0x307,0x1E59},
  {0x72,0x30C,0x159}, {0x72,0x30F,0x211}, {0x72,0x311,0x213}, {0x72,0x323,0x1E5B}, {0x72,0x327,0x157},
  {0x72,0x331,0x1E5F}, {0x73,0x301,0x15B}, {0x73,0x302,0x15D}, {0x73,0x307,0x1E61}, {0x73,0x30C,0x161},
  {0x73,0x323,0x1E63}, {0x73,0x326,0x219}, {0x73,0x327,0x15F}, {0x74,0x307,0x1E6B}, {0x74,0x308,0x1E97},
  {0x74,0x30C,0x165}, {0x74,0x323,0x1E6D}, {0x74,0x326,0x21B}, {0x74,0x327,0x163}, {0x74,0x32D,0x1E71},
  {0x74,0x331,0x1E6F}, {0x75,0x300,0xF9}, {0x75,0x301,0xFA}, {0x75,0x302,0xFB}, {0x75,0x303,0x169},
  {0x75,0x304,0x16B}, {0x75,0x306,0x16D}, {0x75,0x308,0xFC}, {0x75,0x309,0x1EE7}, {0x75,0x30A,0x16F},
  {0x75,0x30B,0x171}, {0x75,0x30C,0x1D4}, {0x75,0x30F,0x215}, {0x75,0x311,0x217}, {0x75,0x31B,0x1B0},
  {0x75,0x323,0x1EE5}, {0x75,0x324,0x1E73}, {0x75,0x328,0x173}, {0x75,0x32D,0x1E77}, {0x75,0x330,0x1E75},
  {0x76,0x303,0x1E7D}, {0x76,0x323,0x1E7F}, {0x77,0x300,0x1E81}, {0x77,0x301,0x1E83}, {0x77,0x302,0x175},
  {0x77,0x307,0x1E87}, {0x77,0x308,0x1E85}, {0x77,0x30A,0x1E98}, {0x77,0x323,0x1E89}, {0x78,0x307,0x1E8B},
  {0x78,0x308,0x1E8D}, {0x79,0x300,0x1EF3}, {0x79,0x301,0xFD}, {0x79,0x302,0x177}, {0x79,0x303,0x1EF9},
  {0x79,0x304,0x233}, {0x79,0x307,0x1E8F}, {0x79,0x308,0xFF}, {0x79,0x309,0x1EF7}, {0x79,0x30A,0x1E99},
  {0x79,0x323,0x1EF5}, {0x7A,0x301,0x17A}, {0x7A,0x302,0x1E91}, {0x7A,0x307,0x17C}, {0x7A,0x30C,0x17E},
  {0x7A,0x323,0x1E93}, {0x7A,0x331,0x1E95}, {0xA8,0x300,0x1FED}, {0xA8,0x301,0x385}, {0xA8,0x342,0x1FC1},
  {0xC2,0x300,0x1EA6}, {0xC2,0x301,0x1EA4}, {0xC2,0x303,0x1EAA}, {0xC2,0x309,0x1EA8}, {0xC4,0x304,0x1DE},
  {0xC5,0x301,0x1FA}, {0xC6,0x301,0x1FC}, {0xC6,0x304,0x1E2}, {0xC7,0x301,0x1E08}, {0xCA,0x300,0x1EC0},
  {0xCA,0x301,0x1EBE}, {0xCA,0x303,0x1EC4}, {0xCA,0x309,0x1EC2}, {0xCF,0x301,0x1E2E}, {0xD4,0x300,0x1ED2},
  {0xD4,0x301,0x1ED0}, {0xD4,0x303,0x1ED6}, {0xD4,0x309,0x1ED4}, {0xD5,0x301,0x1E4C}, {0xD5,0x304,0x22C},
  {0xD5,0x308,0x1E4E}, {0xD6,0x304,0x22A}, {0xD8,0x301,0x1FE}, {0xDC,0x300,0x1DB}, {0xDC,0x301,0x1D7},
  {0xDC,0x304,0x1D5}, {0xDC,0x30C,0x1D9}, {0xE2,0x300,0x1EA7}, {0xE2,0x301,0x1EA5}, {0xE2,0x303,0x1EAB},
  {0xE2,0x309,0x1EA9}, {0xE4,0x304,0x1DF}, {0xE5,0x301,0x1FB}, {0xE6,0x301,0x1FD}, {0xE6,0x304,0x1E3},
  {0xE7,0x301,0x1E09}, {0xEA,0x300,0x1EC1}, {0xEA,0x301,0x1EBF}, {0xEA,0x303,0x1EC5}, {0xEA,0x309,0x1EC3},
  {0xEF,0x301,0x1E2F}, {0xF4,0x300,0x1ED3}, {0xF4,0x301,0x1ED1}, {0xF4,0x303,0x1ED7}, {0xF4,0x309,0x1ED5},
  {0xF5,0x301,0x1E4D}, {0xF5,0x304,0x22D}, {0xF5,0x308,0x1E4F}, {0xF6,0x304,0x22B}, {0xF8,0x301,0x1FF},
  {0xFC,0x300,0x1DC}, {0xFC,0x301,0x1D8}, {0xFC,0x304,0x1D6}, {0xFC,0x30C,0x1DA}, {0x102,0x300,0x1EB0},
  {0x102,0x301,0x1EAE}, {0x102,0x303,0x1EB4}, {0x102,0x309,0x1EB2}, {0x103,0x300,0x1EB1}, {0x103,0x301,0x1EAF},
  {0x103,0x303,0x1EB5}, {0x103,0x309,0x1EB3}, {0x112,0x300,0x1E14}, {0x112,0x301,0x1E16}, {0x113,0x300,0x1E15},
  {0x113,0x301,0x1E17}, {0x14C,0x300,0x1E50}, {0x14C,0x301,0x1E52}, {0x14D,0x300,0x1E51}, {0x14D,0x301,0x1E53},
  {0x15A,0x307,0x1E64}, {0x15B,0x307,0x1E65}, {0x160,0x307,0x1E66}, {0x161,0x307,0x1E67}, {0x168,0x301,0x1E78},
  {0x169,0x301,0x1E79}, {0x16A,0x308,0x1E7A}, {0x16B,0x308,0x1E7B}, {0x17F,0x307,0x1E9B}, {0x1A0,0x300,0x1EDC},
  {0x1A0,0x301,0x1EDA}, {0x1A0,0x303,0x1EE0}, {0x1A0,0x309,0x1EDE}, {0x1A0,0x323,0x1EE2}, {0x1A1,0x300,0x1EDD},
  {0x1A1,0x301,0x1EDB}, {0x1A1,0x303,0x1EE1}, {0x1A1,0x309,0x1EDF}, {0x1A1,0x323,0x1EE3}, {0x1AF,0x300,0x1EEA},
  {0x1AF,0x301,0x1EE8}, {0x1AF,0x303,0x1EEE}, {0x1AF,0x309,0x1EEC}, {0x1AF,0x323,0x1EF0}, {0x1B0,0x300,0x1EEB},
  {0x1B0,0x301,0x1EE9}, {0x1B0,0x303,0x1EEF}, {0x1B0,0x309,0x1EED}, {0x1B0,0x323,0x1EF1}, {0x1B7,0x30C,0x1EE},
  {0x1EA,0x304,0x1EC}, {0x1EB,0x304,0x1ED}, {0x226,0x304,0x1E0}, {0x227,0x304,0x1E1}, {0x228,0x306,0x1E1C},
  {0x229,0x306,0x1E1D}, {0x22E,0x304,0x230}, {0x22F,0x304,0x231}, {0x292,0x30C,0x1EF}, {0x391,0x300,0x1FBA},
  {0x391,0x301,0x386}, {0x391,0x304,0x1FB9}, {0x391,0x306,0x1FB8}, {0x391,0x313,0x1F08}, {0x391,0x314,0x1F09},
  {0x391,0x345,0x1FBC}, {0x395,0x300,0x1FC8}, {0x395,0x301,0x388}, {0x395,0x313,0x1F18}, {0x395,0x314,0x1F19},
  {0x397,0x300,0x1FCA}, {0x397,0x301,0x389}, {0x397,0x313,0x1F28}, {0x397,0x314,0x1F29}, {0x397,0x345,0x1FCC},
  {0x399,0x300,0x1FDA}, {0x399,0x301,0x38A}, {0x399,0x304,0x1FD9}, {0x399,0x306,0x1FD8}, {0x399,0x308,0x3AA},
  {0x399,0x313,0x1F38}, {0x399,0x314,0x1F39}, {0x39F,0x300,0x1FF8}, {0x39F,0x301,0x38C}, {0x39F,0x313,0x1F48},
  {0x39F,0x314,0x1F49}, {0x3A1,0x314,0x1FEC}, {0x3A5,0x300,0x1FEA}, {0x3A5,0x301,0x38E}, {0x3A5,0x304,0x1FE9},
  {0x3A5,0x306,0x1FE8}, {0x3A5,0x308,0x3AB}, {0x3A5,0x314,0x1F59}, {0x3A9,0x300,0x1FFA}, {0x3A9,0x301,0x38F},
  {0x3A9,0x313,0x1F68}, {0x3A9,0x314,0x1F69}, {0x3A9,0x345,0x1FFC}, {0x3AC,0x345,0x1FB4}, {0x3AE,0x345,0x1FC4},
  {0x3B1,0x300,0x1F70}, {0x3B1,0x301,0x3AC}, {0x3B1,0x304,0x1FB1}, {0x3B1,0x306,0x1FB0}, {0x3B1,0x313,0x1F00},
  {0x3B1,0x314,0x1F01}, {0x3B1,0x342,0x1FB6}, {0x3B1,0x345,0x1FB3}, {0x3B5,0x300,0x1F72}, {0x3B5,0x301,0x3AD},
  {0x3B5,0x313,0x1F10}, {0x3B5,0x314,0x1F11}, {0x3B7,0x300,0x1F74}, {0x3B7,0x301,0x3AE}, {0x3B7,0x313,0x1F20},
  {0x3B7,0x314,0x1F21}, {0x3B7,0x342,0x1FC6}, {0x3B7,0x345,0x1FC3}, {0x3B9,0x300,0x1F76}, {0x3B9,0x301,0x3AF},
  {0x3B9,0x304,0x1FD1}, {0x3B9,0x306,0x1FD0}, {0x3B9,0x308,0x3CA}, {0x3B9,0x313,0x1F30}, {0x3B9,0x314,0x1F31},
  {0x3B9,0x342,0x1FD6}, {0x3BF,0x300,0x1F78}, {0x3BF,0x301,0x3CC}, {0x3BF,0x313,0x1F40}, {0x3BF,0x314,0x1F41},
  {0x3C1,0x313,0x1FE4}, {0x3C1,0x314,0x1FE5}, {0x3C5,0x300,0x1F7A}, {0x3C5,0x301,0x3CD}, {0x3C5,0x304,0x1FE1},
  {0x3C5,0x306,0x1FE0}, {0x3C5,0x308,0x3CB}, {0x3C5,0x313,0x1F50}, {0x3C5,0x314,0x1F51}, {0x3C5,0x342,0x1FE6},
  {0x3C9,0x300,0x1F7C}, {0x3C9,0x301,0x3CE}, {0x3C9,0x313,0x1F60}, {0x3C9,0x314,0x1F61}, {0x3C9,0x342,0x1FF6},
  {0x3C9,0x345,0x1FF3}, {0x3CA,0x300,0x1FD2}, {0x3CA,0x301,0x390}, {0x3CA,0x342,0x1FD7}, {0x3CB,0x300,0x1FE2},
  {0x3CB,0x301,0x3B0}, {0x3CB,0x342,0x1FE7}, {0x3CE,0x345,0x1FF4}, {0x3D2,0x301,0x3D3}, {0x3D2,0x308,0x3D4},
  {0x406,0x308,0x407}, {0x410,0x306,0x4D0}, {0x410,0x308,0x4D2}, {0x413,0x301,0x403}, {0x415,0x300,0x400},
  {0x415,0x306,0x4D6}, {0x415,0x308,0x401}, {0x416,0x306,0x4C1}, {0x416,0x308,0x4DC}, {0x417,0x308,0x4DE},
  {0x418,0x300,0x40D}, {0x418,0x304,0x4E2}, {0x418,0x306,0x419}, {0x418,0x308,0x4E4}, {0x41A,0x301,0x40C},
  {0x41E,0x308,0x4E6}, {0x423,0x304,0x4EE}, {0x423,0x306,0x40E}, {0x423,0x308,0x4F0}, {0x423,0x30B,0x4F2},
  {0x427,0x308,0x4F4}, {0x42B,0x308,0x4F8}, {0x42D,0x308,0x4EC}, {0x430,0x306,0x4D1}, {0x430,0x308,0x4D3},
  {0x433,0x301,0x453}, {0x435,0x300,0x450}, {0x435,0x306,0x4D7}, {0x435,0x308,0x451}, {0x436,0x306,0x4C2},
  {0x436,0x308,0x4DD}, {0x437,0x308,0x4DF}, {0x438,0x300,0x45D}, {0x438,0x304,0x4E3}, {0x438,0x306,0x439},
  {0x438,0x308,0x4E5}, {0x43A,0x301,0x45C}, {0x43E,0x308,0x4E7}, {0x443,0x304,0x4EF}, {0x443,0x306,0x45E},
  {0x443,0x308,0x4F1}, {0x443,0x30B,0x4F3}, {0x447,0x308,0x4F5}, {0x44B,0x308,0x4F9}, {0x44D,0x308,0x4ED},
  {0x456,0x308,0x457}, {0x474,0x30F,0x476}, {0x475,0x30F,0x477}, {0x4D8,0x308,0x4DA}, {0x4D9,0x308,0x4DB},
  {0x4E8,0x308,0x4EA}, {0x4E9,0x308,0x4EB}, {0x627,0x653,0x622}, {0x627,0x654,0x623}, {0x627,0x655,0x625},
  {0x648,0x654,0x624}, {0x64A,0x654,0x626}, {0x6C1,0x654,0x6C2}, {0x6D2,0x654,0x6D3}, {0x6D5,0x654,0x6C0},
  {0x928,0x93C,0x929}, {0x930,0x93C,0x931}, {0x933,0x93C,0x934}, {0x9C7,0x9BE,0x9CB}, {0x9C7,0x9D7,0x9CC},
  {0xB47,0xB3E,0xB4B}, {0xB47,0xB56,0xB48}, {0xB47,0xB57,0xB4C}, {0xB92,0xBD7,0xB94}, {0xBC6,0xBBE,0xBCA},
  {0xBC6,0xBD7,0xBCC}, {0xBC7,0xBBE,0xBCB}, {0xC46,0xC56,0xC48}, {0xCBF,0xCD5,0xCC0}, {0xCC6,0xCC2,0xCCA},
  {0xCC6,0xCD5,0xCC7}, {0xCC6,0xCD6,0xCC8}, {0xCCA,0xCD5,0xCCB}, {0xD46,0xD3E,0xD4A}, {0xD46,0xD57,0xD4C},
  {0xD47,0xD3E,0xD4B}, {0xDD9,0xDCA,0xDDA}, {0xDD9,0xDCF,0xDDC}, {0xDD9,0xDDF,0xDDE}, {0xDDC,0xDCA,0xDDD},
  {0x1025,0x102E,0x1026}, {0x1B05,0x1B35,0x1B06}, {0x1B07,0x1B35,0x1B08}, {0x1B09,0x1B35,0x1B0A}, {0x1B0B,0x1B35,0x1B0C},
  {0x1B0D,0x1B35,0x1B0E}, {0x1B11,0x1B35,0x1B12}, {0x1B3A,0x1B35,0x1B3B}, {0x1B3C,0x1B35,0x1B3D}, {0x1B3E,0x1B35,0x1B40},
  {0x1B3F,0x1B35,0x1B41}, {0x1B42,0x1B35,0x1B43}, {0x1E36,0x304,0x1E38}, {0x1E37,0x304,0x1E39}, {0x1E5A,0x304,0x1E5C},
  {0x1E5B,0x304,0x1E5D}, {0x1E62,0x307,0x1E68}, {0x1E63,0x307,0x1E69}, {0x1EA0,0x302,0x1EAC}, {0x1EA0,0x306,0x1EB6},
  {0x1EA1,0x302,0x1EAD}, {0x1EA1,0x306,0x1EB7}, {0x1EB8,0x302,0x1EC6}, {0x1EB9,0x302,0x1EC7}, {0x1ECC,0x302,0x1ED8},
  {0x1ECD,0x302,0x1ED9}, {0x1F00,0x300,0x1F02}, {0x1F00,0x301,0x1F04}, {0x1F00,0x342,0x1F06}, {0x1F00,0x345,0x1F80},
  {0x1F01,0x300,0x1F03}, {0x1F01,0x301,0x1F05}, {0x1F01,0x342,0x1F07}, {0x1F01,0x345,0x1F81}, {0x1F02,0x345,0x1F82},
  {0x1F03,0x345,0x1F83}, {0x1F04,0x345,0x1F84}, {0x1F05,0x345,0x1F85}, {0x1F06,0x345,0x1F86}, {0x1F07,0x345,0x1F87},
  {0x1F08,0x300,0x1F0A}, {0x1F08,0x301,0x1F0C}, {0x1F08,0x342,0x1F0E}, {0x1F08,0x345,0x1F88}, {0x1F09,0x300,0x1F0B},
  {0x1F09,0x301,0x1F0D}, {0x1F09,0x342,0x1F0F}, {0x1F09,0x345,0x1F89}, {0x1F0A,0x345,0x1F8A}, {0x1F0B,0x345,0x1F8B},
  {0x1F0C,0x345,0x1F8C}, {0x1F0D,0x345,0x1F8D}, {0x1F0E,0x345,0x1F8E}, {0x1F0F,0x345,0x1F8F}, {0x1F10,0x300,0x1F12},
  {0x1F10,0x301,0x1F14}, {0x1F11,0x300,0x1F13}, {0x1F11,0x301,0x1F15}, {0x1F18,0x300,0x1F1A}, {0x1F18,0x301,0x1F1C},
  {0x1F19,0x300,0x1F1B}, {0x1F19,0x301,0x1F1D}, {0x1F20,0x300,0x1F22}, {0x1F20,0x301,0x1F24}, {0x1F20,0x342,0x1F26},
  {0x1F20,0x345,0x1F90}, {0x1F21,0x300,0x1F23}, {0x1F21,0x301,0x1F25}, {0x1F21,0x342,0x1F27}, {0x1F21,0x345,0x1F91},
  {0x1F22,0x345,0x1F92}, {0x1F23,0x345,0x1F93}, {0x1F24,0x345,0x1F94}, {0x1F25,0x345,0x1F95}, {0x1F26,0x345,0x1F96},
  {0x1F27,0x345,0x1F97}, {0x1F28,0x300,0x1F2A}, {0x1F28,0x301,0x1F2C}, {0x1F28,0x342,0x1F2E}, {0x1F28,0x345,0x1F98},
  {0x1F29,0x300,0x1F2B}, {0x1F29,0x301,0x1F2D}, {0x1F29,0x342,0x1F2F}, {0x1F29,0x345,0x1F99}, {0x1F2A,0x345,0x1F9A},
  {0x1F2B,0x345,0x1F9B}, {0x1F2C,0x345,0x1F9C}, {0x1F2D,0x345,0x1F9D}, {0x1F2E,0x345,0x1F9E}, {0x1F2F,0x345,0x1F9F},
  {0x1F30,0x300,0x1F32}, {0x1F30,0x301,0x1F34}, {0x1F30,0x342,0x1F36}, {0x1F31,0x300,0x1F33}, {0x1F31,0x301,0x1F35},
  {0x1F31,0x342,0x1F37}, {0x1F38,0x300,0x1F3A}, {0x1F38,0x301,0x1F3C}, {0x1F38,0x342,0x1F3E}, {0x1F39,0x300,0x1F3B},
  {0x1F39,0x301,0x1F3D}, {0x1F39,0x342,0x1F3F}, {0x1F40,0x300,0x1F42}, {0x1F40,0x301,0x1F44}, {0x1F41,0x300,0x1F43},
  {0x1F41,0x301,0x1F45}, {0x1F48,0x300,0x1F4A}, {0x1F48,0x301,0x1F4C}, {0x1F49,0x300,0x1F4B}, {0x1F49,0x301,0x1F4D},
  {0x1F50,0x300,0x1F52}, {0x1F50,0x301,0x1F54}, {0x1F50,0x342,0x1F56}, {0x1F51,0x300,0x1F53}, {0x1F51,0x301,0x1F55},
  {0x1F51,0x342,0x1F57}, {0x1F59,0x300,0x1F5B}, {0x1F59,0x301,0x1F5D}, {0x1F59,0x342,0x1F5F}, {0x1F60,0x300,0x1F62},
  {0x1F60,0x301,0x1F64}, {0x1F60,0x342,0x1F66}, {0x1F60,0x345,0x1FA0}, {0x1F61,0x300,0x1F63}, {0x1F61,0x301,0x1F65},
  {0x1F61,0x342,0x1F67}, {0x1F61,0x345,0x1FA1}, {0x1F62,0x345,0x1FA2}, {0x1F63,0x345,0x1FA3}, {0x1F64,0x345,0x1FA4},
  {0x1F65,0x345,0x1FA5}, {0x1F66,0x345,0x1FA6}, {0x1F67,0x345,0x1FA7}, {0x1F68,0x300,0x1F6A}, {0x1F68,0x301,0x1F6C},
  {0x1F68,0x342,0x1F6E}, {0x1F68,0x345,0x1FA8}, {0x1F69,0x300,0x1F6B}, {0x1F69,0x301,0x1F6D}, {0x1F69,0x342,0x1F6F},
  {0x1F69,0x345,0x1FA9}, {0x1F6A,0x345,0x1FAA}, {0x1F6B,0x345,0x1FAB}, {0x1F6C,0x345,0x1FAC}, {0x1F6D,0x345,0x1FAD},
  {0x1F6E,0x345,0x1FAE}, {0x1F6F,0x345,0x1FAF}, {0x1F70,0x345,0x1FB2}, {0x1F74,0x345,0x1FC2}, {0x1F7C,0x345,0x1FF2},
  {0x1FB6,0x345,0x1FB7}, {0x1FBF,0x300,0x1FCD}, {0x1FBF,0x301,0x1FCE}, {0x1FBF,0x342,0x1FCF}, {0x1FC6,0x345,0x1FC7},
  {0x1FF6,0x345,0x1FF7}, {0x1FFE,0x300,0x1FDD}, {0x1FFE,0x301,0x1FDE}, {0x1FFE,0x342,0x1FDF}, {0x2190,0x338,0x219A},
  {0x2192,0x338,0x219B}, {0x2194,0x338,0x21AE}, {0x21D0,0x338,0x21CD}, {0x21D2,0x338,0x21CF}, {0x21D4,0x338,0x21CE},
  {0x2203,0x338,0x2204}, {0x2208,0x338,0x2209}, {0x220B,0x338,0x220C}, {0x2223,0x338,0x2224}, {0x2225,0x338,0x2226},
  {0x223C,0x338,0x2241}, {0x2243,0x338,0x2244}, {0x2245,0x338,0x2247}, {0x2248,0x338,0x2249}, {0x224D,0x338,0x226D},
  {0x2261,0x338,0x2262}, {0x2264,0x338,0x2270}, {0x2265,0x338,0x2271}, {0x2272,0x338,0x2274}, {0x2273,0x338,0x2275},
  {0x2276,0x338,0x2278}, {0x2277,0x338,0x2279}, {0x227A,0x338,0x2280}, {0x227B,0x338,0x2281}, {0x227C,0x338,0x22E0},
  {0x227D,0x338,0x22E1}, {0x2282,0x338,0x2284}, {0x2283,0x338,0x2285}, {0x2286,0x338,0x2288}, {0x2287,0x338,0x2289},
  {0x2291,0x338,0x22E2}, {0x2292,0x338,0x22E3}, {0x22A2,0x338,0x22AC}, {0x22A8,0x338,0x22AD}, {0x22A9,0x338,0x22AE},
  {0x22AB,0x338,0x22AF}, {0x22B2,0x338,0x22EA}, {0x22B3,0x338,0x22EB}, {0x22B4,0x338,0x22EC}, {0x22B5,0x338,0x22ED},
  {0x3046,0x3099,0x3094}, {0x304B,0x3099,0x304C}, {0x304D,0x3099,0x304E}, {0x304F,0x3099,0x3050}, {0x3051,0x3099,0x3052},
  {0x3053,0x3099,0x3054}, {0x3055,0x3099,0x3056}, {0x3057,0x3099,0x3058}, {0x3059,0x3099,0x305A}, {0x305B,0x3099,0x305C},
  {0x305D,0x3099,0x305E}, {0x305F,0x3099,0x3060}, {0x3061,0x3099,0x3062}, {0x3064,0x3099,0x3065}, {0x3066,0x3099,0x3067},
  {0x3068,0x3099,0x3069}, {0x306F,0x3099,0x3070}, {0x306F,0x309A,0x3071}, {0x3072,0x3099,0x3073}, {0x3072,0x309A,0x3074},
  {0x3075,0x3099,0x3076}, {0x3075,0x309A,0x3077}, {0x3078,0x3099,0x3079}, {0x3078,0x309A,0x307A}, {0x307B,0x3099,0x307C},
  {0x307B,0x309A,0x307D}, {0x309D,0x3099,0x309E}, {0x30A6,0x3099,0x30F4}, {0x30AB,0x3099,0x30AC}, {0x30AD,0x3099,0x30AE},
  {0x30AF,0x3099,0x30B0}, {0x30B1,0x3099,0x30B2}, {0x30B3,0x3099,0x30B4}, {0x30B5,0x3099,0x30B6}, {0x30B7,0x3099,0x30B8},
  {0x30B9,0x3099,0x30BA}, {0x30BB,0x3099,0x30BC}, {0x30BD,0x3099,0x30BE}, {0x30BF,0x3099,0x30C0}, {0x30C1,0x3099,0x30C2},
  {0x30C4,0x3099,0x30C5}, {0x30C6,0x3099,0x30C7}, {0x30C8,0x3099,0x30C9}, {0x30CF,0x3099,0x30D0}, {0x30CF,0x309A,0x30D1},
  {0x30D2,0x3099,0x30D3}, {0x30D2,0x309A,0x30D4}, {0x30D5,0x3099,0x30D6}, {0x30D5,0x309A,0x30D7}, {0x30D8,0x3099,0x30D9},
  {0x30D8,0x309A,0x30DA}, {0x30DB,0x3099,0x30DC}, {0x30DB,0x309A,0x30DD}, {0x30EF,0x3099,0x30F7}, {0x30F0,0x3099,0x30F8},
  {0x30F1,0x3099,0x30F9}, {0x30F2,0x3099,0x30FA}, {0x30FD,0x3099,0x30FE}, {0x11099,0x110BA,0x1109A}, {0x1109B,0x110BA,0x1109C},
  {0x110A5,0x110BA,0x110AB}, {0x11131,0x11127,0x1112E}, {0x11132,0x11127,0x1112F}, {0x11347,0x1133E,0x1134B}, {0x11347,0x11357,0x1134C},
  {0x114B9,0x114B0,0x114BC}, {0x114B9,0x114BA,0x114BB}, {0x114B9,0x114BD,0x114BE}, {0x115B8,0x115AF,0x115BA}, {0x115B9,0x115AF,0x115BB},
  {0x11935,0x11930,0x11938},
};

/* ftfy fix_character_width: U+3000 and NFKC of U+FF01..U+FFEF */
static const sdx__umap2 sdx__uni_width[226] = {
  {0x3000,{0x20,0x0}}, {0xFF01,{0x21,0x0}}, {0xFF02,{0x22,0x0}}, {0xFF03,{0x23,0x0}}, {0xFF04,{0x24,0x0}},
  {0xFF05,{0x25,0x0}}, {0xFF06,{0x26,0x0}}, {0xFF07,{0x27,0x0}}, {0xFF08,{0x28,0x0}}, {0xFF09,{0x29,0x0}},
  {0xFF0A,{0x2A,0x0}}, {0xFF0B,{0x2B,0x0}}, {0xFF0C,{0x2C,0x0}}, {0xFF0D,{0x2D,0x0}}, {0xFF0E,{0x2E,0x0}},
  {0xFF0F,{0x2F,0x0}}, {0xFF10,{0x30,0x0}}, {0xFF11,{0x31,0x0}}, {0xFF12,{0x32,0x0}}, {0xFF13,{0x33,0x0}},
  {0xFF14,{0x34,0x0}}, {0xFF15,{0x35,0x0}}, {0xFF16,{0x36,0x0}}, {0xFF17,{0x37,0x0}}, {0xFF18,{0x38,0x0}},
  {0xFF19,{0x39,0x0}}, {0xFF1A,{0x3A,0x0}}, {0xFF1B,{0x3B,0x0}}, {0xFF1C,{0x3C,0x0}}, {0xFF1D,{0x3D,0x0}},
  {0xFF1E,{0x3E,0x0}}, {0xFF1F,{0x3F,0x0}}, {0xFF20,{0x40,0x0}}, {0xFF21,{0x41,0x0}}, {0xFF22,{0x42,0x0}},
  {0xFF23,{0x43,0x0}}, {0xFF24,{0x44,0x0}}, {0xFF25,{0x45,0x0}}, {0xFF26,{0x46,0x0}}, {0xFF27,{0x47,0x0}},
  {0xFF28,{0x48,0x0}}, {0xFF29,{0x49,0x0}}, {0xFF2A,{0x4A,0x0}}, {0xFF2B,{0x4B,0x0}}, {0xFF2C,{0x4C,0x0}},
  {0xFF2D,{0x4D,0x0}}, {0xFF2E,{0x4E,0x0}}, {0xFF2F,{0x4F,0x0}}, {0xFF30,{0x50,0x0}}, {0xFF31,{0x51,0x0}},
  {0xFF32,{0x52,0x0}}, {0xFF33,{0x53,0x0}}, {0xFF34,{0x54,0x0}}, {0xFF35,{0x55,0x0}}, {0xFF36,{0x56,0x0}},
  {0xFF37,{0x57,0x0}}, {0xFF38,{0x58,0x0}}, {0xFF39,{0x59,0x0}}, {0xFF3A,{0x5A,0x0}}, {0xFF3B,{0x5B,0x0}},
  {0xFF3C,{0x5C,0x0}}, {0xFF3D,{0x5D,0x0}}, {0xFF3E,{0x5E,0x0}}, {0xFF3F,{0x5F,0x0}}, {0xFF40,{0x60,0x0}},
  {0xFF41,{0x61,0x0}}, {0xFF42,{0x62,0x0}}, {0xFF43,{0x63,0x0}}, {0xFF44,{0x64,0x0}}, {0xFF45,{0x65,0x0}},
  {0xFF46,{0x66,0x0}}, {0xFF47,{0x67,0x0}}, {0xFF48,{0x68,0x0}}, {0xFF49,{0x69,0x0}}, {0xFF4A,{0x6A,0x0}},
  {0xFF4B,{0x6B,0x0}}, {0xFF4C,{0x6C,0x0}}, {0xFF4D,{0x6D,0x0}}, {0xFF4E,{0x6E,0x0}}, {0xFF4F,{0x6F,0x0}},
  {0xFF50,{0x70,0x0}}, {0xFF51,{0x71,0x0}}, {0xFF52,{0x72,0x0}}, {0xFF53,{0x73,0x0}}, {0xFF54,{0x74,0x0}},
  {0xFF55,{0x75,0x0}}, {0xFF56,{0x76,0x0}}, {0xFF57,{0x77,0x0}}, {0xFF58,{0x78,0x0}}, {0xFF59,{0x79,0x0}},
  {0xFF5A,{0x7A,0x0}}, {0xFF5B,{0x7B,0x0}}, {0xFF5C,{0x7C,0x0}}, {0xFF5D,{0x7D,0x0}}, {0xFF5E,{0x7E,0x0}},
  {0xFF5F,{0x2985,0x0}}, {0xFF60,{0x2986,0x0}}, {0xFF61,{0x3002,0x0}}, {0xFF62,{0x300C,0x0}}, {0xFF63,{0x300D,0x0}},
  {0xFF64,{0x3001,0x0}}, {0xFF65,{0x30FB,0x0}}, {0xFF66,{0x30F2,0x0}}, {0xFF67,{0x30A1,0x0}}, {0xFF68,{0x30A3,0x0}},
  {0xFF69,{0x30A5,0x0}}, {0xFF6A,{0x30A7,0x0}}, {0xFF6B,{0x30A9,0x0}}, {0xFF6C,{0x30E3,0x0}}, {0xFF6D,{0x30E5,0x0}},
  {0xFF6E,{0x30E7,0x0}}, {0xFF6F,{0x30C3,0x0}}, {0xFF70,{0x30FC,0x0}}, {0xFF71,{0x30A2,0x0}}, {0xFF72,{0x30A4,0x0}},
  {0xFF73,{0x30A6,0x0}}, {0xFF74,{0x30A8,0x0}}, {0xFF75,{0x30AA,0x0}}, {0xFF76,{0x30AB,0x0}}, {0xFF77,{0x30AD,0x0}},
  {0xFF78,{0x30AF,0x0}}, {0xFF79,{0x30B1,0x0}}, {0xFF7A,{0x30B3,0x0}}, {0xFF7B,{0x30B5,0x0}}, {0xFF7C,{0x30B7,0x0}},
  {0xFF7D,{0x30B9,0x0}}, {0xFF7E,{0x30BB,0x0}}, {0xFF7F,{0x30BD,0x0}}, {0xFF80,{0x30BF,0x0}}, {0xFF81,{0x30C1,0x0}},
  {0xFF82,{0x30C4,0x0}}, {0xFF83,{0x30C6,0x0}}, {0xFF84,{0x30C8,0x0}}, {0xFF85,{0x30CA,0x0}}, {0xFF86,{0x30CB,0x0}},
  {0xFF87,{0x30CC,0x0}}, {0xFF88,{0x30CD,0x0}}, {0xFF89,{0x30CE,0x0}}, {0xFF8A,{0x30CF,0x0}}, {0xFF8B,{0x30D2,0x0}},
  {0xFF8C,{0x30D5,0x0}}, {0xFF8D,{0x30D8,0x0}}, {0xFF8E,{0x30DB,0x0}}, {0xFF8F,{0x30DE,0x0}}, {0xFF90,{0x30DF,0x0}},
  {0xFF91,{0x30E0,0x0}}, {0xFF92,{0x30E1,0x0}}, {0xFF93,{0x30E2,0x0}}, {0xFF94,{0x30E4,0x0}}, {0xFF95,{0x30E6,0x0}},
  {0xFF96,{0x30E8,0x0}}, {0xFF97,{0x30E9,0x0}}, {0xFF98,{0x30EA,0x0}}, {0xFF99,{0x30EB,0x0}}, {0xFF9A,{0x30EC,0x0}},
  {0xFF9B,{0x30ED,0x0}}, {0xFF9C,{0x30EF,0x0}}, {0xFF9D,{0x30F3,0x0}}, {0xFF9E,{0x3099,0x0}}, {0xFF9F,{0x309A,0x0}},
  {0xFFA0,{0x1160,0x0}}, {0xFFA1,{0x1100,0x0}}, {0xFFA2,{0x1101,0x0}}, {0xFFA3,{0x11AA,0x0}}, {0xFFA4,{0x1102,0x0}},
  {0xFFA5,{0x11AC,0x0}}, {0xFFA6,{0x11AD,0x0}}, {0xFFA7,{0x1103,0x0}}, {0xFFA8,{0x1104,0x0}}, {0xFFA9,{0x1105,0x0}},
  {0xFFAA,{0x11B0,0x0}}, {0xFFAB,{0x11B1,0x0}}, {0xFFAC,{0x11B2,0x0}}, {0xFFAD,{0x11B3,0x0}}, {0xFFAE,{0x11B4,0x0}},
  {0xFFAF,{0x11B5,0x0}}, {0xFFB0,{0x111A,0x0}}, {0xFFB1,{0x1106,0x0}}, {0xFFB2,{0x1107,0x0}}, {0xFFB3,{0x1108,0x0}},
  {0xFFB4,{0x1121,0x0}}, {0xFFB5,{0x1109,0x0}}, {0xFFB6,{0x110A,0x0}}, {0xFFB7,{0x110B,0x0}}, {0xFFB8,{0x110C,0x0}},
  {0xFFB9,{0x110D,0x0}}, {0xFFBA,{0x110E,0x0}}, {0xFFBB,{0x110F,0x0}}, {0xFFBC,{0x1110,0x0}}, {0xFFBD,{0x1111,0x0}},
  {0xFFBE,{0x1112,0x0}}, {0xFFC2,{0x1161,0x0}}, {0xFFC3,{0x1162,0x0}}, {0xFFC4,{0x1163,0x0}}, {0xFFC5,{0x1164,0x0}},
  {0xFFC6,{0x1165,0x0}}, {0xFFC7,{0x1166,0x0}}, {0xFFCA,{0x1167,0x0}}, {0xFFCB,{0x1168,0x0}}, {0xFFCC,{0x1169,0x0}},
  {0xFFCD,{0x116A,0x0}}, {0xFFCE,{0x116B,0x0}}, {0xFFCF,{0x116C,0x0}}, {0xFFD2,{0x116D,0x0}}, {0xFFD3,{0x116E,0x0}},
  {0xFFD4,{0x116F,0x0}}, {0xFFD5,{0x1170,0x0}}, {0xFFD6,{0x1171,0x0}}, {0xFFD7,{0x1172,0x0}}, {0xFFDA,{0x1173,0x0}},
  {0xFFDB,{0x1174,0x0}}, {0xFFDC,{0x1175,0x0}}, {0xFFE0,{0xA2,0x0}}, {0xFFE1,{0xA3,0x0}}, {0xFFE2,{0xAC,0x0}},
  {0xFFE3,{0x20,0x304}}, {0xFFE4,{0xA6,0x0}}, {0xFFE5,{0xA5,0x0}}, {0xFFE6,{0x20A9,0x0}}, {0xFFE8,{0x2502,0x0}},
  {0xFFE9,{0x2190,0x0}}, {0xFFEA,{0x2191,0x0}}, {0xFFEB,{0x2192,0x0}}, {0xFFEC,{0x2193,0x0}}, {0xFFED,{0x25A0,0x0}},
  {0xFFEE,{0x25CB,0x0}},
};

typedef struct sdx__umap3 { uint32_t from, to[3]; } sdx__umap3;
/* ftfy fix_latin_ligatures */
static const sdx__umap3 sdx__uni_ligatures[22] = {
  {0x132,{0x49,0x4A,0x0}}, {0x133,{0x69,0x6A,0x0}}, {0x149,{0x2BC,0x6E,0x0}}, {0x1C4,{0x44,0x17D,0x0}},
  {0x1C5,{0x44,0x17E,0x0}}, {0x1C6,{0x64,0x17E,0x0}}, {0x1C7,{0x4C,0x4A,0x0}}, {0x1C8,{0x4C,0x6A,0x0}},
  {0x1C9,{0x6C,0x6A,0x0}}, {0x1CA,{0x4E,0x4A,0x0}}, {0x1CB,{0x4E,0x6A,0x0}}, {0x1CC,{0x6E,0x6A,0x0}},
  {0x1F1,{0x44,0x5A,0x0}}, {0x1F2,{0x44,0x7A,0x0}}, {0x1F3,{0x64,0x7A,0x0}}, {0xFB00,{0x66,0x66,0x0}},
  {0xFB01,{0x66,0x69,0x0}}, {0xFB02,{0x66,0x6C,0x0}}, {0xFB03,{0x66,0x66,0x69}}, {0xFB04,{0x66,0x66,0x6C}},
  {0xFB05,{0x17F,0x74,0x0}}, {0xFB06,{0x73,0x74,0x0}},
};

/* bytes 0x80..0x9F in windows-1252 (undefined ones: the C1 control of the same value) */
static const uint32_t sdx__cp1252_80[32] = {
  0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021,
  0x2C6, 0x2030, 0x160, 0x2039, 0x152, 0x8D, 0x17D, 0x8F,
  0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
  0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178,
};

/* html.entities.html5: name (with ';' where the standard has it) -> code points */
static const sdx__uentity sdx__html5_entities[2231] = {
  {"AElig",{0xC6,0x0,0x0}}, {"AElig;",{0xC6,0x0,0x0}}, {"AMP",{0x26,0x0,0x0}},
  {"AMP;",{0x26,0x0,0x0}}, {"Aacute",{0xC1,0x0,0x0}}, {"Aacute;",{0xC1,0x0,0x0}},
  {"Abreve;",{0x102,0x0,0x0}}, {"Acirc",{0xC2,0x0,0x0}}, {"Acirc;",{0xC2,0x0,0x0}},
  {"Acy;",{0x410,0x0,0x0}}, {"Afr;",{0x1D504,0x0,0x0}}, {"Agrave",{0xC0,0x0,0x0}},
  {"Agrave;",{0xC0,0x0,0x0}}, {"Alpha;",{0x391,0x0,0x0}}, {"Amacr;",{0x100,0x0,0x0}},
  {"And;",{0x2A53,0x0,0x0}}, {"Aogon;",{0x104,0x0,0x0}}, {"Aopf;",{0x1D538,0x0,0x0}},
  {"ApplyFunction;",{0x2061,0x0,0x0}}, {"Aring",{0xC5,0x0,0x0}}, {"Aring;",{0xC5,0x0,0x0}},
  {"Ascr;",{0x1D49C,0x0,0x0}}, {"Assign;",{0x2254,0x0,0x0}}, {"Atilde",{0xC3,0x0,0x0}},
  {"Atilde;",{0xC3,0x0,0x0}}, {"Auml",{0xC4,0x0,0x0}}, {"Auml;",{0xC4,0x0,0x0}},
  {"Backslash;",{0x2216,0x0,0x0}}, {"Barv;",{0x2AE7,0x0,0x0}}, {"Barwed;",{0x2306,0x0,0x0}},
  {"Bcy;",{0x411,0x0,0x0}}, {"Because;",{0x2235,0x0,0x0}}, {"Bernoullis;",{0x212C,0x0,0x0}},
  {"Beta;",{0x392,0x0,0x0}}, {"Bfr;",{0x1D505,0x0,0x0}}, {"Bopf;",{0x1D539,0x0,0x0}},
  {"Breve;",{0x2D8,0x0,0x0}}, {"Bscr;",{0x212C,0x0,0x0}}, {"Bumpeq;",{0x224E,0x0,0x0}},
  {"CHcy;",{0x427,0x0,0x0}}, {"COPY",{0xA9,0x0,0x0}}, {"COPY;",{0xA9,0x0,0x0}},
  {"Cacute;",{0x106,0x0,0x0}}, {"Cap;",{0x22D2,0x0,0x0}}, {"CapitalDifferentialD;",{0x2145,0x0,0x0}},
  {"Cayleys;",{0x212D,0x0,0x0}}, {"Ccaron;",{0x10C,0x0,0x0}}, {"Ccedil",{0xC7,0x0,0x0}},
  {"Ccedil;",{0xC7,0x0,0x0}}, {"Ccirc;",{0x108,0x0,0x0}}, {"Cconint;",{0x2230,0x0,0x0}},
  {"Cdot;",{0x10A,0x0,0x0}}, {"Cedilla;",{0xB8,0x0,0x0}}, {"CenterDot;",{0xB7,0x0,0x0}},
  {"Cfr;",{0x212D,0x0,0x0}}, {"Chi;",{0x3A7,0x0,0x0}}, {"CircleDot;",{0x2299,0x0,0x0}},
  {"CircleMinus;",{0x2296,0x0,0x0}}, {"CirclePlus;",{0x2295,0x0,0x0}}, {"CircleTimes;",{0x2297,0x0,0x0}},
  {"ClockwiseContourIntegral;",{0x2232,0x0,0x0}}, {"CloseCurlyDoubleQuote;",{0x201D,0x0,0x0}}, {"CloseCurlyQuote;",{0x2019,0x0,0x0}},
  {"Colon;",{0x2237,0x0,0x0}}, {"Colone;",{0x2A74,0x0,0x0}}, {"Congruent;",{0x2261,0x0,0x0}},
  {"Conint;",{0x222F,0x0,0x0}}, {"ContourIntegral;",{0x222E,0x0,0x0}}, {"Copf;",{0x2102,0x0,0x0}},
  {"Coproduct;",{0x2210,0x0,0x0}}, {"CounterClockwiseContourIntegral;",{0x2233,0x0,0x0}}, {"Cross;",{0x2A2F,0x0,0x0}},
  {"Cscr;",{0x1D49E,0x0,0x0}}, {"Cup;",{0x22D3,0x0,0x0}}, {"CupCap;",{0x224D,0x0,0x0}},
  {"DD;",{0x2145,0x0,0x0}}, {"DDotrahd;",{0x2911,0x0,0x0}}, {"DJcy;",{0x402,0x0,0x0}},
  {"DScy;",{0x405,0x0,0x0}}, {"DZcy;",{0x40F,0x0,0x0}}, {"Dagger;",{0x2021,0x0,0x0}},
  {"Darr;",{0x21A1,0x0,0x0}}, {"Dashv;",{0x2AE4,0x0,0x0}}, {"Dcaron;",{0x10E,0x0,0x0}},
  {"Dcy;",{0x414,0x0,0x0}}, {"Del;",{0x2207,0x0,0x0}}, {"Delta;",{0x394,0x0,0x0}},
  {"Dfr;",{0x1D507,0x0,0x0}}, {"DiacriticalAcute;",{0xB4,0x0,0x0}}, {"DiacriticalDot;",{0x2D9,0x0,0x0}},
  {"DiacriticalDoubleAcute;",{0x2DD,0x0,0x0}}, {"DiacriticalGrave;",{0x60,0x0,0x0}}, {"DiacriticalTilde;",{0x2DC,0x0,0x0}},
  {"Diamond;",{0x22C4,0x0,0x0}}, {"DifferentialD;",{0x2146,0x0,0x0}}, {"Dopf;",{0x1D53B,0x0,0x0}},
  {"Dot;",{0xA8,0x0,0x0}}, {"DotDot;",{0x20DC,0x0,0x0}}, {"DotEqual;",{0x2250,0x0,0x0}},
  {"DoubleContourIntegral;",{0x222F,0x0,0x0}}, {"DoubleDot;",{0xA8,0x0,0x0}}, {"DoubleDownArrow;",{0x21D3,0x0,0x0}},
  {"DoubleLeftArrow;",{0x21D0,0x0,0x0}}, {"DoubleLeftRightArrow;",{0x21D4,0x0,0x0}}, {"DoubleLeftTee;",{0x2AE4,0x0,0x0}},
  {"DoubleLongLeftArrow;",{0x27F8,0x0,0x0}}, {"DoubleLongLeftRightArrow;",{0x27FA,0x0,0x0}}, {"DoubleLongRightArrow;",{0x27F9,0x0,0x0}},
  {"DoubleRightArrow;",{0x21D2,0x0,0x0}}, {"DoubleRightTee;",{0x22A8,0x0,0x0}}, {"DoubleUpArrow;",{0x21D1,0x0,0x0}},
  {"DoubleUpDownArrow;",{0x21D5,0x0,0x0}}, {"DoubleVerticalBar;",{0x2225,0x0,0x0}}, {"DownArrow;",{0x2193,0x0,0x0}},
  {"DownArrowBar;",{0x2913,0x0,0x0}}, {"DownArrowUpArrow;",{0x21F5,0x0,0x0}}, {"DownBreve;",{0x311,0x0,0x0}},
  {"DownLeftRightVector;",{0x2950,0x0,0x0}}, {"DownLeftTeeVector;",{0x295E,0x0,0x0}}, {"DownLeftVector;",{0x21BD,0x0,0x0}},
  {"DownLeftVectorBar;",{0x2956,0x0,0x0}}, {"DownRightTeeVector;",{0x295F,0x0,0x0}}, {"DownRightVector;",{0x21C1,0x0,0x0}},
  {"DownRightVectorBar;",{0x2957,0x0,0x0}}, {"DownTee;",{0x22A4,0x0,0x0}}, {"DownTeeArrow;",{0x21A7,0x0,0x0}},
  {"Downarrow;",{0x21D3,0x0,0x0}}, {"Dscr;",{0x1D49F,0x0,0x0}}, {"Dstrok;",{0x110,0x0,0x0}},
  {"ENG;",{0x14A,0x0,0x0}}, {"ETH",{0xD0,0x0,0x0}}, {"ETH;",{0xD0,0x0,0x0}},
  {"Eacute",{0xC9,0x0,0x0}}, {"Eacute;",{0xC9,0x0,0x0}}, {"Ecaron;",{0x11A,0x0,0x0}},
  {"Ecirc",{0xCA,0x0,0x0}}, {"Ecirc;",{0xCA,0x0,0x0}}, {"Ecy;",{0x42D,0x0,0x0}},
  {"Edot;",{0x116,0x0,0x0}}, {"Efr;",{0x1D508,0x0,0x0}}, {"Egrave",{0xC8,0x0,0x0}},
  {"Egrave;",{0xC8,0x0,0x0}}, {"Element;",{0x2208,0x0,0x0}}, {"Emacr;",{0x112,0x0,0x0}},
  {"EmptySmallSquare;",{0x25FB,0x0,0x0}}, {"EmptyVerySmallSquare;",{0x25AB,0x0,0x0}}, {"Eogon;",{0x118,0x0,0x0}},
  {"Eopf;",{0x1D53C,0x0,0x0}}, {"Epsilon;",{0x395,0x0,0x0}}, {"Equal;",{0x2A75,0x0,0x0}},
  {"EqualTilde;",{0x2242,0x0,0x0}}, {"Equilibrium;",{0x21CC,0x0,0x0}}, {"Escr;",{0x2130,0x0,0x0}},
  {"Esim;",{0x2A73,0x0,0x0}}, {"Eta;",{0x397,0x0,0x0}}, {"Euml",{0xCB,0x0,0x0}},
  {"Euml;",{0xCB,0x0,0x0}}, {"Exists;",{0x2203,0x0,0x0}}, {"ExponentialE;",{0x2147,0x0,0x0}},
  {"Fcy;",{0x424,0x0,0x0}}, {"Ffr;",{0x1D509,0x0,0x0}}, {"FilledSmallSquare;",{0x25FC,0x0,0x0}},
  {"FilledVerySmallSquare;",{0x25AA,0x0,0x0}}, {"Fopf;",{0x1D53D,0x0,0x0}}, {"ForAll;",{0x2200,0x0,0x0}},
  {"Fouriertrf;",{0x2131,0x0,0x0}}, {"Fscr;",{0x2131,0x0,0x0}}, {"GJcy;",{0x403,0x0,0x0}},
  {"GT",{0x3E,0x0,0x0}}, {"GT;",{0x3E,0x0,0x0}}, {"Gamma;",{0x393,0x0,0x0}},
  {"Gammad;",{0x3DC,0x0,0x0}}, {"Gbreve;",{0x11E,0x0,0x0}}, {"Gcedil;",{0x122,0x0,0x0}},
  {"Gcirc;",{0x11C,0x0,0x0}}, {"Gcy;",{0x413,0x0,0x0}}, {"Gdot;",{0x120,0x0,0x0}},
  {"Gfr;",{0x1D50A,0x0,0x0}}, {"Gg;",{0x22D9,0x0,0x0}}, {"Gopf;",{0x1D53E,0x0,0x0}},
  {"GreaterEqual;",{0x2265,0x0,0x0}}, {"GreaterEqualLess;",{0x22DB,0x0,0x0}}, {"GreaterFullEqual;",{0x2267,0x0,0x0}},
  {"GreaterGreater;",{0x2AA2,0x0,0x0}}, {"GreaterLess;",{0x2277,0x0,0x0}}, {"GreaterSlantEqual;",{0x2A7E,0x0,0x0}},
  {"GreaterTilde;",{0x2273,0x0,0x0}}, {"Gscr;",{0x1D4A2,0x0,0x0}}, {"Gt;",{0x226B,0x0,0x0}},
  {"HARDcy;",{0x42A,0x0,0x0}}, {"Hacek;",{0x2C7,0x0,0x0}}, {"Hat;",{0x5E,0x0,0x0}},
  {"Hcirc;",{0x124,0x0,0x0}}, {"Hfr;",{0x210C,0x0,0x0}}, {"HilbertSpace;",{0x210B,0x0,0x0}},
  {"Hopf;",{0x210D,0x0,0x0}}, {"HorizontalLine;",{0x2500,0x0,0x0}}, {"Hscr;",{0x210B,0x0,0x0}},
  {"Hstrok;",{0x126,0x0,0x0}}, {"HumpDownHump;",{0x224E,0x0,0x0}}, {"HumpEqual;",{0x224F,0x0,0x0}},
  {"IEcy;",{0x415,0x0,0x0}}, {"IJlig;",{0x132,0x0,0x0}}, {"IOcy;",{0x401,0x0,0x0}},
  {"Iacute",{0xCD,0x0,0x0}}, {"Iacute;",{0xCD,0x0,0x0}}, {"Icirc",{0xCE,0x0,0x0}},
  {"Icirc;",{0xCE,0x0,0x0}}, {"Icy;",{0x418,0x0,0x0}}, {"Idot;",{0x130,0x0,0x0}},
  {"Ifr;",{0x2111,0x0,0x0}}, {"Igrave",{0xCC,0x0,0x0}}, {"Igrave;",{0xCC,0x0,0x0}},
  {"Im;",{0x2111,0x0,0x0}}, {"Imacr;",{0x12A,0x0,0x0}}, {"ImaginaryI;",{0x2148,0x0,0x0}},
  {"Implies;",{0x21D2,0x0,0x0}}, {"Int;",{0x222C,0x0,0x0}}, {"Integral;",{0x222B,0x0,0x0}},
  {"Intersection;",{0x22C2,0x0,0x0}}, {"InvisibleComma;",{0x2063,0x0,0x0}}, {"InvisibleTimes;",{0x2062,0x0,0x0}},
  {"Iogon;",{0x12E,0x0,0x0}}, {"Iopf;",{0x1D540,0x0,0x0}}, {"Iota;",{0x399,0x0,0x0}},
  {"Iscr;",{0x2110,0x0,0x0}}, {"Itilde;",{0x128,0x0,0x0}}, {"Iukcy;",{0x406,0x0,0x0}},
  {"Iuml",{0xCF,0x0,0x0}}, {"Iuml;",{0xCF,0x0,0x0}}, {"Jcirc;",{0x134,0x0,0x0}},
  {"Jcy;",{0x419,0x0,0x0}}, {"Jfr;",{0x1D50D,0x0,0x0}}, {"Jopf;",{0x1D541,0x0,0x0}},
  {"Jscr;",{0x1D4A5,0x0,0x0}}, {"Jsercy;",{0x408,0x0,0x0}}, {"Jukcy;",{0x404,0x0,0x0}},
  {"KHcy;",{0x425,0x0,0x0}}, {"KJcy;",{0x40C,0x0,0x0}}, {"Kappa;",{0x39A,0x0,0x0}},
  {"Kcedil;",{0x136,0x0,0x0}}, {"Kcy;",{0x41A,0x0,0x0}}, {"Kfr;",{0x1D50E,0x0,0x0}},
  {"Kopf;",{0x1D542,0x0,0x0}}, {"Kscr;",{0x1D4A6,0x0,0x0}}, {"LJcy;",{0x409,0x0,0x0}},
  {"LT",{0x3C,0x0,0x0}}, {"LT;",{0x3C,0x0,0x0}}, {"Lacute;",{0x139,0x0,0x0}},
  {"Lambda;",{0x39B,0x0,0x0}}, {"Lang;",{0x27EA,0x0,0x0}}, {"Laplacetrf;",{0x2112,0x0,0x0}},
  {"Larr;",{0x219E,0x0,0x0}}, {"Lcaron;",{0x13D,0x0,0x0}}, {"Lcedil;",{0x13B,0x0,0x0}},
  {"Lcy;",{0x41B,0x0,0x0}}, {"LeftAngleBracket;",{0x27E8,0x0,0x0}}, {"LeftArrow;",{0x2190,0x0,0x0}},
  {"LeftArrowBar;",{0x21E4,0x0,0x0}}, {"LeftArrowRightArrow;",{0x21C6,0x0,0x0}}, {"LeftCeiling;",{0x2308,0x0,0x0}},
  {"LeftDoubleBracket;",{0x27E6,0x0,0x0}}, {"LeftDownTeeVector;",{0x2961,0x0,0x0}}, {"LeftDownVector;",{0x21C3,0x0,0x0}},
  {"LeftDownVectorBar;",{0x2959,0x0,0x0}}, {"LeftFloor;",{0x230A,0x0,0x0}}, {"LeftRightArrow;",{0x2194,0x0,0x0}},
  {"LeftRightVector;",{0x294E,0x0,0x0}}, {"LeftTee;",{0x22A3,0x0,0x0}}, {"LeftTeeArrow;",{0x21A4,0x0,0x0}},
  {"LeftTeeVector;",{0x295A,0x0,0x0}}, {"LeftTriangle;",{0x22B2,0x0,0x0}}, {"LeftTriangleBar;",{0x29CF,0x0,0x0}},
  {"LeftTriangleEqual;",{0x22B4,0x0,0x0}}, {"LeftUpDownVector;",{0x2951,0x0,0x0}}, {"LeftUpTeeVector;",{0x2960,0x0,0x0}},
  {"LeftUpVector;",{0x21BF,0x0,0x0}}, {"LeftUpVectorBar;",{0x2958,0x0,0x0}}, {"LeftVector;",{0x21BC,0x0,0x0}},
  {"LeftVectorBar;",{0x2952,0x0,0x0}}, {"Leftarrow;",{0x21D0,0x0,0x0}}, {"Leftrightarrow;",{0x21D4,0x0,0x0}},
  {"LessEqualGreater;",{0x22DA,0x0,0x0}}, {"LessFullEqual;",{0x2266,0x0,0x0}}, {"LessGreater;",{0x2276,0x0,0x0}},
  {"LessLess;",{0x2AA1,0x0,0x0}}, {"LessSlantEqual;",{0x2A7D,0x0,0x0}}, {"LessTilde;",{0x2272,0x0,0x0}},
  {"Lfr;",{0x1D50F,0x0,0x0}}, {"Ll;",{0x22D8,0x0,0x0}}, {"Lleftarrow;",{0x21DA,0x0,0x0}},
  {"Lmidot;",{0x13F,0x0,0x0}}, {"LongLeftArrow;",{0x27F5,0x0,0x0}}, {"LongLeftRightArrow;",{0x27F7,0x0,0x0}},
  {"LongRightArrow;",{0x27F6,0x0,0x0}}, {"Longleftarrow;",{0x27F8,0x0,0x0}}, {"Longleftrightarrow;",{0x27FA,0x0,0x0}},
  {"Longrightarrow;",{0x27F9,0x0,0x0}}, {"Lopf;",{0x1D543,0x0,0x0}}, {"LowerLeftArrow;",{0x2199,0x0,0x0}},
  {"LowerRightArrow;",{0x2198,0x0,0x0}}, {"Lscr;",{0x2112,0x0,0x0}}, {"Lsh;",{0x21B0,0x0,0x0}},
  {"Lstrok;",{0x141,0x0,0x0}}, {"Lt;",{0x226A,0x0,0x0}}, {"Map;",{0x2905,0x0,0x0}},
  {"Mcy;",{0x41C,0x0,0x0}}, {"MediumSpace;",{0x205F,0x0,0x0}}, {"Mellintrf;",{0x2133,0x0,0x0}},
  {"Mfr;",{0x1D510,0x0,0x0}}, {"MinusPlus;",{0x2213,0x0,0x0}}, {"Mopf;",{0x1D544,0x0,0x0}},
  {"Mscr;",{0x2133,0x0,0x0}}, {"Mu;",{0x39C,0x0,0x0}}, {"NJcy;",{0x40A,0x0,0x0}},
  {"Nacute;",{0x143,0x0,0x0}}, {"Ncaron;",{0x147,0x0,0x0}}, {"Ncedil;",{0x145,0x0,0x0}},
  {"Ncy;",{0x41D,0x0,0x0}}, {"NegativeMediumSpace;",{0x200B,0x0,0x0}}, {"NegativeThickSpace;",{0x200B,0x0,0x0}},
  {"NegativeThinSpace;",{0x200B,0x0,0x0}}, {"NegativeVeryThinSpace;",{0x200B,0x0,0x0}}, {"NestedGreaterGreater;",{0x226B,0x0,0x0}},
  {"NestedLessLess;",{0x226A,0x0,0x0}}, {"NewLine;",{0xA,0x0,0x0}}, {"Nfr;",{0x1D511,0x0,0x0}},
  {"NoBreak;",{0x2060,0x0,0x0}}, {"NonBreakingSpace;",{0xA0,0x0,0x0}}, {"Nopf;",{0x2115,0x0,0x0}},
  {"Not;",{0x2AEC,0x0,0x0}}, {"NotCongruent;",{0x2262,0x0,0x0}}, {"NotCupCap;",{0x226D,0x0,0x0}},
  {"NotDoubleVerticalBar;",{0x2226,0x0,0x0}}, {"NotElement;",{0x2209,0x0,0x0}}, {"NotEqual;",{0x2260,0x0,0x0}},
  {"NotEqualTilde;",{0x2242,0x338,0x0}}, {"NotExists;",{0x2204,0x0,0x0}}, {"NotGreater;",{0x226F,0x0,0x0}},
  {"NotGreaterEqual;",{0x2271,0x0,0x0}}, {"NotGreaterFullEqual;",{0x2267,0x338,0x0}}, {"NotGreaterGreater;",{0x226B,0x338,0x0}},
  {"NotGreaterLess;",{0x2279,0x0,0x0}}, {"NotGreaterSlantEqual;",{0x2A7E,0x338,0x0}}, {"NotGreaterTilde;",{0x2275,0x0,0x0}},
  {"NotHumpDownHump;",{0x224E,0x338,0x0}}, {"NotHumpEqual;",{0x224F,0x338,0x0}}, {"NotLeftTriangle;",{0x22EA,0x0,0x0}},
  {"NotLeftTriangleBar;",{0x29CF,0x338,0x0}}, {"NotLeftTriangleEqual;",{0x22EC,0x0,0x0}}, {"NotLess;",{0x226E,0x0,0x0}},
  {"NotLessEqual;",{0x2270,0x0,0x0}}, {"NotLessGreater;",{0x2278,0x0,0x0}}, {"NotLessLess;",{0x226A,0x338,0x0}},
  {"NotLessSlantEqual;",{0x2A7D,0x338,0x0}}, {"NotLessTilde;",{0x2274,0x0,0x0}}, {"NotNestedGreaterGreater;",{0x2AA2,0x338,0x0}},
  {"NotNestedLessLess;",{0x2AA1,0x338,0x0}}, {"NotPrecedes;",{0x2280,0x0,0x0}}, {"NotPrecedesEqual;",{0x2AAF,0x338,0x0}},
  {"NotPrecedesSlantEqual;",{0x22E0,0x0,0x0}}, {"NotReverseElement;",{0x220C,0x0,0x0}}, {"NotRightTriangle;",{0x22EB,0x0,0x0}},
  {"NotRightTriangleBar;",{0x29D0,0x338,0x0}}, {"NotRightTriangleEqual;",{0x22ED,0x0,0x0}}, {"NotSquareSubset;",{0x228F,0x338,0x0}},
  {"NotSquareSubsetEqual;",{0x22E2,0x0,0x0}}, {"NotSquareSuperset;",{0x2290,0x338,0x0}}, {"NotSquareSupersetEqual;",{0x22E3,0x0,0x0}},
  {"NotSubset;",{0x2282,0x20D2,0x0}}, {"NotSubsetEqual;",{0x2288,0x0,0x0}}, {"NotSucceeds;",{0x2281,0x0,0x0}},
  {"NotSucceedsEqual;",{0x2AB0,0x338,0x0}}, {"NotSucceedsSlantEqual;",{0x22E1,0x0,0x0}}, {"NotSucceedsTilde;",{0x227F,0x338,0x0}},
  {"NotSuperset;",{0x2283,0x20D2,0x0}}, {"NotSupersetEqual;",{0x2289,0x0,0x0}}, {"NotTilde;",{0x2241,0x0,0x0}},
  {"NotTildeEqual;",{0x2244,0x0,0x0}}, {"NotTildeFullEqual;",{0x2247,0x0,0x0}}, {"NotTildeTilde;",{0x2249,0x0,0x0}},
  {"NotVerticalBar;",{0x2224,0x0,0x0}}, {"Nscr;",{0x1D4A9,0x0,0x0}}, {"Ntilde",{0xD1,0x0,0x0}},
  {"Ntilde;",{0xD1,0x0,0x0}}, {"Nu;",{0x39D,0x0,0x0}}, {"OElig;",{0x152,0x0,0x0}},
  {"Oacute",{0xD3,0x0,0x0}}, {"Oacute;",{0xD3,0x0,0x0}}, {"Ocirc",{0xD4,0x0,0x0}},
  {"Ocirc;",{0xD4,0x0,0x0}}, {"Ocy;",{0x41E,0x0,0x0}}, {"Odblac;",{0x150,0x0,0x0}},
  {"Ofr;",{0x1D512,0x0,0x0}}, {"Ograve",{0xD2,0x0,0x0}}, {"Ograve;",{0xD2,0x0,0x0}},
  {"Omacr;",{0x14C,0x0,0x0}}, {"Omega;",{0x3A9,0x0,0x0}}, {"Omicron;",{0x39F,0x0,0x0}},
  {"Oopf;",{0x1D546,0x0,0x0}}, {"OpenCurlyDoubleQuote;",{0x201C,0x0,0x0}}, {"OpenCurlyQuote;",{0x2018,0x0,0x0}},
  {"Or;",{0x2A54,0x0,0x0}}, {"Oscr;",{0x1D4AA,0x0,0x0}}, {"Oslash",{0xD8,0x0,0x0}},
  {"Oslash;",{0xD8,0x0,0x0}}, {"Otilde",{0xD5,0x0,0x0}}, {"Otilde;",{0xD5,0x0,0x0}},
  {"Otimes;",{0x2A37,0x0,0x0}}, {"Ouml",{0xD6,0x0,0x0}}, {"Ouml;",{0xD6,0x0,0x0}},
  {"OverBar;",{0x203E,0x0,0x0}}, {"OverBrace;",{0x23DE,0x0,0x0}}, {"OverBracket;",{0x23B4,0x0,0x0}},
  {"OverParenthesis;",{0x23DC,0x0,0x0}}, {"PartialD;",{0x2202,0x0,0x0}}, {"Pcy;",{0x41F,0x0,0x0}},
  {"Pfr;",{0x1D513,0x0,0x0}}, {"Phi;",{0x3A6,0x0,0x0}}, {"Pi;",{0x3A0,0x0,0x0}},
  {"PlusMinus;",{0xB1,0x0,0x0}}, {"Poincareplane;",{0x210C,0x0,0x0}}, {"Popf;",{0x2119,0x0,0x0}},
  {"Pr;",{0x2ABB,0x0,0x0}}, {"Precedes;",{0x227A,0x0,0x0}}, {"PrecedesEqual;",{0x2AAF,0x0,0x0}},
  {"PrecedesSlantEqual;",{0x227C,0x0,0x0}}, {"PrecedesTilde;",{0x227E,0x0,0x0}}, {"Prime;",{0x2033,0x0,0x0}},
  {"Product;",{0x220F,0x0,0x0}}, {"Proportion;",{0x2237,0x0,0x0}}, {"Proportional;",{0x221D,0x0,0x0}},
  {"Pscr;",{0x1D4AB,0x0,0x0}}, {"Psi;",{0x3A8,0x0,0x0}}, {"QUOT",{0x22,0x0,0x0}},
  {"QUOT;",{0x22,0x0,0x0}}, {"Qfr;",{0x1D514,0x0,0x0}}, {"Qopf;",{0x211A,0x0,0x0}},
  {"Qscr;",{0x1D4AC,0x0,0x0}}, {"RBarr;",{0x2910,0x0,0x0}}, {"REG",{0xAE,0x0,0x0}},
  {"REG;",{0xAE,0x0,0x0}}, {"Racute;",{0x154,0x0,0x0}}, {"Rang;",{0x27EB,0x0,0x0}},
  {"Rarr;",{0x21A0,0x0,0x0}}, {"Rarrtl;",{0x2916,0x0,0x0}}, {"Rcaron;",{0x158,0x0,0x0}},
  {"Rcedil;",{0x156,0x0,0x0}}, {"Rcy;",{0x420,0x0,0x0}}, {"Re;",{0x211C,0x0,0x0}},
  {"ReverseElement;",{0x220B,0x0,0x0}}, {"ReverseEquilibrium;",{0x21CB,0x0,0x0}}, {"ReverseUpEquilibrium;",{0x296F,0x0,0x0}},
  {"Rfr;",{0x211C,0x0,0x0}}, {"Rho;",{0x3A1,0x0,0x0}}, {"RightAngleBracket;",{0x27E9,0x0,0x0}},
  {"RightArrow;",{0x2192,0x0,0x0}}, {"RightArrowBar;",{0x21E5,0x0,0x0}}, {"RightArrowLeftArrow;",{0x21C4,0x0,0x0}},
  {"RightCeiling;",{0x2309,0x0,0x0}}, {"RightDoubleBracket;",{0x27E7,0x0,0x0}}, {"RightDownTeeVector;",{0x295D,0x0,0x0}},
  {"RightDownVector;",{0x21C2,0x0,0x0}}, {"RightDownVectorBar;",{0x2955,0x0,0x0}}, {"RightFloor;",{0x230B,0x0,0x0}},
  {"RightTee;",{0x22A2,0x0,0x0}}, {"RightTeeArrow;",{0x21A6,0x0,0x0}}, {"RightTeeVector;",{0x295B,0x0,0x0}},
  {"RightTriangle;",{0x22B3,0x0,0x0}}, {"RightTriangleBar;",{0x29D0,0x0,0x0}}, {"RightTriangleEqual;",{0x22B5,0x0,0x0}},
  {"RightUpDownVector;",{0x294F,0x0,0x0}}, {"RightUpTeeVector;",{0x295C,0x0,0x0}}, {"RightUpVector;",{0x21BE,0x0,0x0}},
  {"RightUpVectorBar;",{0x2954,0x0,0x0}}, {"RightVector;",{0x21C0,0x0,0x0}}, {"RightVectorBar;",{0x2953,0x0,0x0}},
  {"Rightarrow;",{0x21D2,0x0,0x0}}, {"Ropf;",{0x211D,0x0,0x0}}, {"RoundImplies;",{0x2970,0x0,0x0}},
  {"Rrightarrow;",{0x21DB,0x0,0x0}}, {"Rscr;",{0x211B,0x0,0x0}}, {"Rsh;",{0x21B1,0x0,0x0}},
  {"RuleDelayed;",{0x29F4,0x0,0x0}}, {"SHCHcy;",{0x429,0x0,0x0}}, {"SHcy;",{0x428,0x0,0x0}},
  {"SOFTcy;",{0x42C,0x0,0x0}}, {"Sacute;",{0x15A,0x0,0x0}}, {"Sc;",{0x2ABC,0x0,0x0}},
  {"Scaron;",{0x160,0x0,0x0}}, {"Scedil;",{0x15E,0x0,0x0}}, {"Scirc;",{0x15C,0x0,0x0}},
  {"Scy;",{0x421,0x0,0x0}}, {"Sfr;",{0x1D516,0x0,0x0}}, {"ShortDownArrow;",{0x2193,0x0,0x0}},
  {"ShortLeftArrow;",{0x2190,0x0,0x0}}, {"ShortRightArrow;",{0x2192,0x0,0x0}}, {"ShortUpArrow;",{0x2191,0x0,0x0}},
  {"Sigma;",{0x3A3,0x0,0x0}}, {"SmallCircle;",{0x2218,0x0,0x0}}, {"Sopf;",{0x1D54A,0x0,0x0}},
  {"Sqrt;",{0x221A,0x0,0x0}}, {"Square;",{0x25A1,0x0,0x0}}, {"SquareIntersection;",{0x2293,0x0,0x0}},
  {"SquareSubset;",{0x228F,0x0,0x0}}, {"SquareSubsetEqual;",{0x2291,0x0,0x0}}, {"SquareSuperset;",{0x2290,0x0,0x0}},
  {"SquareSupersetEqual;",{0x2292,0x0,0x0}}, {"SquareUnion;",{0x2294,0x0,0x0}}, {"Sscr;",{0x1D4AE,0x0,0x0}},
  {"Star;",{0x22C6,0x0,0x0}}, {"Sub;",{0x22D0,0x0,0x0}}, {"Subset;",{0x22D0,0x0,0x0}},
  {"SubsetEqual;",{0x2286,0x0,0x0}}, {"Succeeds;",{0x227B,0x0,0x0}}, {"SucceedsEqual;",{0x2AB0,0x0,0x0}},
  {"SucceedsSlantEqual;",{0x227D,0x0,0x0}}, {"SucceedsTilde;",{0x227F,0x0,0x0}}, {"SuchThat;",{0x220B,0x0,0x0}},
  {"Sum;",{0x2211,0x0,0x0}}, {"Sup;",{0x22D1,0x0,0x0}}, {"Superset;",{0x2283,0x0,0x0}},
  {"SupersetEqual;",{0x2287,0x0,0x0}}, {"Supset;",{0x22D1,0x0,0x0}}, {"THORN",{0xDE,0x0,0x0}},
  {"THORN;",{0xDE,0x0,0x0}}, {"TRADE;",{0x2122,0x0,0x0}}, {"TSHcy;",{0x40B,0x0,0x0}},
  {"TScy;",{0x426,0x0,0x0}}, {"Tab;",{0x9,0x0,0x0}}, {"Tau;",{0x3A4,0x0,0x0}},
  {"Tcaron;",{0x164,0x0,0x0}}, {"Tcedil;",{0x162,0x0,0x0}}, {"Tcy;",{0x422,0x0,0x0}},
  {"Tfr;",{0x1D517,0x0,0x0}}, {"Therefore;",{0x2234,0x0,0x0}}, {"Theta;",{0x398,0x0,0x0}},
  {"ThickSpace;",{0x205F,0x200A,0x0}}, {"ThinSpace;",{0x2009,0x0,0x0}}, {"Tilde;",{0x223C,0x0,0x0}},
  {"TildeEqual;",{0x2243,0x0,0x0}}, {"TildeFullEqual;",{0x2245,0x0,0x0}}, {"TildeTilde;",{0x2248,0x0,0x0}},
  {"Topf;",{0x1D54B,0x0,0x0}}, {"TripleDot;",{0x20DB,0x0,0x0}}, {"Tscr;",{0x1D4AF,0x0,0x0}},
  {"Tstrok;",{0x166,0x0,0x0}}, {"Uacute",{0xDA,0x0,0x0}}, {"Uacute;",{0xDA,0x0,0x0}},
  {"Uarr;",{0x219F,0x0,0x0}}, {"Uarrocir;",{0x2949,0x0,0x0}}, {"Ubrcy;",{0x40E,0x0,0x0}},
  {"Ubreve;",{0x16C,0x0,0x0}}, {"Ucirc",{0xDB,0x0,0x0}}, {"Ucirc;",{0xDB,0x0,0x0}},
  {"Ucy;",{0x423,0x0,0x0}}, {"Udblac;",{0x170,0x0,0x0}}, {"Ufr;",{0x1D518,0x0,0x0}},
  {"Ugrave",{0xD9,0x0,0x0}}, {"Ugrave;",{0xD9,0x0,0x0}}, {"Umacr;",{0x16A,0x0,0x0}},
  {"UnderBar;",{0x5F,0x0,0x0}}, {"UnderBrace;",{0x23DF,0x0,0x0}}, {"UnderBracket;",{0x23B5,0x0,0x0}},
  {"UnderParenthesis;",{0x23DD,0x0,0x0}}, {"Union;",{0x22C3,0x0,0x0}}, {"UnionPlus;",{0x228E,0x0,0x0}},
  {"Uogon;",{0x172,0x0,0x0}}, {"Uopf;",{0x1D54C,0x0,0x0}}, {"UpArrow;",{0x2191,0x0,0x0}},
  {"UpArrowBar;",{0x2912,0x0,0x0}}, {"UpArrowDownArrow;",{0x21C5,0x0,0x0}}, {"UpDownArrow;",{0x2195,0x0,0x0}},
  {"UpEquilibrium;",{0x296E,0x0,0x0}}, {"UpTee;",{0x22A5,0x0,0x0}}, {"UpTeeArrow;",{0x21A5,0x0,0x0}},
  {"Uparrow;",{0x21D1,0x0,0x0}}, {"Updownarrow;",{0x21D5,0x0,0x0}}, {"UpperLeftArrow;",{0x2196,0x0,0x0}},
  {"UpperRightArrow;",{0x2197,0x0,0x0}}, {"Upsi;",{0x3D2,0x0,0x0}}, {"Upsilon;",{0x3A5,0x0,0x0}},
  {"Uring;",{0x16E,0x0,0x0}}, {"Uscr;",{0x1D4B0,0x0,0x0}}, {"Utilde;",{0x168,0x0,0x0}},
  {"Uuml",{0xDC,0x0,0x0}}, {"Uuml;",{0xDC,0x0,0x0}}, {"VDash;",{0x22AB,0x0,0x0}},
  {"Vbar;",{0x2AEB,0x0,0x0}}, {"Vcy;",{0x412,0x0,0x0}}, {"Vdash;",{0x22A9,0x0,0x0}},
  {"Vdashl;",{0x2AE6,0x0,0x0}}, {"Vee;",{0x22C1,0x0,0x0}}, {"Verbar;",{0x2016,0x0,0x0}},
  {"Vert;",{0x2016,0x0,0x0}}, {"VerticalBar;",{0x2223,0x0,0x0}}, {"VerticalLine;",{0x7C,0x0,0x0}},
  {"VerticalSeparator;",{0x2758,0x0,0x0}}, {"VerticalTilde;",{0x2240,0x0,0x0}}, {"VeryThinSpace;",{0x200A,0x0,0x0}},
  {"Vfr;",{0x1D519,0x0,0x0}}, {"Vopf;",{0x1D54D,0x0,0x0}}, {"Vscr;",{0x1D4B1,0x0,0x0}},
  {"Vvdash;",{0x22AA,0x0,0x0}}, {"Wcirc;",{0x174,0x0,0x0}}, {"Wedge;",{0x22C0,0x0,0x0}},
  {"Wfr;",{0x1D51A,0x0,0x0}}, {"Wopf;",{0x1D54E,0x0,0x0}}, {"Wscr;",{0x1D4B2,0x0,0x0}},
  {"Xfr;",{0x1D51B,0x0,0x0}}, {"Xi;",{0x39E,0x0,0x0}}, {"Xopf;",{0x1D54F,0x0,0x0}},
  {"Xscr;",{0x1D4B3,0x0,0x0}}, {"YAcy;",{0x42F,0x0,0x0}}, {"YIcy;",{0x407,0x0,0x0}},
  {"YUcy;",{0x42E,0x0,0x0}}, {"Yacute",{0xDD,0x0,0x0}}, {"Yacute;",{0xDD,0x0,0x0}},
  {"Ycirc;",{0x176,0x0,0x0}}, {"Ycy;",{0x42B,0x0,0x0}}, {"Yfr;",{0x1D51C,0x0,0x0}},
  {"Yopf;",{0x1D550,0x0,0x0}}, {"Yscr;",{0x1D4B4,0x0,0x0}}, {"Yuml;",{0x178,0x0,0x0}},
  {"ZHcy;",{0x416,0x0,0x0}}, {"Zacute;",{0x179,0x0,0x0}}, {"Zcaron;",{0x17D,0x0,0x0}},
  {"Zcy;",{0x417,0x0,0x0}}, {"Zdot;",{0x17B,0x0,0x0}}, {"ZeroWidthSpace;",{0x200B,0x0,0x0}},
  {"Zeta;",{0x396,0x0,0x0}}, {"Zfr;",{0x2128,0x0,0x0}}, {"Zopf;",{0x2124,0x0,0x0}},
  {"Zscr;",{0x1D4B5,0x0,0x0}}, {"aacute",{0xE1,0x0,0x0}}, {"aacute;",{0xE1,0x0,0x0}},
  {"abreve;",{0x103,0x0,0x0}}, {"ac;",{0x223E,0x0,0x0}}, {"acE;",{0x223E,0x333,0x0}},
  {"acd;",{0x223F,0x0,0x0}}, {"acirc",{0xE2,0x0,0x0}}, {"acirc;",{0xE2,0x0,0x0}},
  {"acute",{0xB4,0x0,0x0}}, {"acute;",{0xB4,0x0,0x0}}, {"acy;",{0x430,0x0,0x0}},
  {"aelig",{0xE6,0x0,0x0}}, {"aelig;",{0xE6,0x0,0x0}}, {"af;",{0x2061,0x0,0x0}},
  {"afr;",{0x1D51E,0x0,0x0}}, {"agrave",{0xE0,0x0,0x0}}, {"agrave;",{0xE0,0x0,0x0}},
  {"alefsym;",{0x2135,0x0,0x0}}, {"aleph;",{0x2135,0x0,0x0}}, {"alpha;",{0x3B1,0x0,0x0}},
  {"amacr;",{0x101,0x0,0x0}}, {"amalg;",{0x2A3F,0x0,0x0}}, {"amp",{0x26,0x0,0x0}},
  {"amp;",{0x26,0x0,0x0}}, {"and;",{0x2227,0x0,0x0}}, {"andand;",{0x2A55,0x0,0x0}},
  {"andd;",{0x2A5C,0x0,0x0}}, {"andslope;",{0x2A58,0x0,0x0}}, {"andv;",{0x2A5A,0x0,0x0}},
  {"ang;",{0x2220,0x0,0x0}}, {"ange;",{0x29A4,0x0,0x0}}, {"angle;",{0x2220,0x0,0x0}},
  {"angmsd;",{0x2221,0x0,0x0}}, {"angmsdaa;",{0x29A8,0x0,0x0}}, {"angmsdab;",{0x29A9,0x0,0x0}},
  {"angmsdac;",{0x29AA,0x0,0x0}}, {"angmsdad;",{0x29AB,0x0,0x0}}, {"angmsdae;",{0x29AC,0x0,0x0}},
  {"angmsdaf;",{0x29AD,0x0,0x0}}, {"angmsdag;",{0x29AE,0x0,0x0}}, {"angmsdah;",{0x29AF,0x0,0x0}},
  {"angrt;",{0x221F,0x0,0x0}}, {"angrtvb;",{0x22BE,0x0,0x0}}, {"angrtvbd;",{0x299D,0x0,0x0}},
  {"angsph;",{0x2222,0x0,0x0}}, {"angst;",{0xC5,0x0,0x0}}, {"angzarr;",{0x237C,0x0,0x0}},
  {"aogon;",{0x105,0x0,0x0}}, {"aopf;",{0x1D552,0x0,0x0}}, {"ap;",{0x2248,0x0,0x0}},
  {"apE;",{0x2A70,0x0,0x0}}, {"apacir;",{0x2A6F,0x0,0x0}}, {"ape;",{0x224A,0x0,0x0}},
  {"apid;",{0x224B,0x0,0x0}}, {"apos;",{0x27,0x0,0x0}}, {"approx;",{0x2248,0x0,0x0}},
  {"approxeq;",{0x224A,0x0,0x0}}, {"aring",{0xE5,0x0,0x0}}, {"aring;",{0xE5,0x0,0x0}},
  {"ascr;",{0x1D4B6,0x0,0x0}}, {"ast;",{0x2A,0x0,0x0}}, {"asymp;",{0x2248,0x0,0x0}},
  {"asympeq;",{0x224D,0x0,0x0}}, {"atilde",{0xE3,0x0,0x0}}, {"atilde;",{0xE3,0x0,0x0}},
  {"auml",{0xE4,0x0,0x0}}, {"auml;",{0xE4,0x0,0x0}}, {"awconint;",{0x2233,0x0,0x0}},
  {"awint;",{0x2A11,0x0,0x0}}, {"bNot;",{0x2AED,0x0,0x0}}, {"backcong;",{0x224C,0x0,0x0}},
  {"backepsilon;",{0x3F6,0x0,0x0}}, {"backprime;",{0x2035,0x0,0x0}}, {"backsim;",{0x223D,0x0,0x0}},
  {"backsimeq;",{0x22CD,0x0,0x0}}, {"barvee;",{0x22BD,0x0,0x0}}, {"barwed;",{0x2305,0x0,0x0}},
  {"barwedge;",{0x2305,0x0,0x0}}, {"bbrk;",{0x23B5,0x0,0x0}}, {"bbrktbrk;",{0x23B6,0x0,0x0}},
  {"bcong;",{0x224C,0x0,0x0}}, {"bcy;",{0x431,0x0,0x0}}, {"bdquo;",{0x201E,0x0,0x0}},
  {"becaus;",{0x2235,0x0,0x0}}, {"because;",{0x2235,0x0,0x0}}, {"bemptyv;",{0x29B0,0x0,0x0}},
  {"bepsi;",{0x3F6,0x0,0x0}}, {"bernou;",{0x212C,0x0,0x0}}, {"beta;",{0x3B2,0x0,0x0}},
  {"beth;",{0x2136,0x0,0x0}}, {"between;",{0x226C,0x0,0x0}}, {"bfr;",{0x1D51F,0x0,0x0}},
  {"bigcap;",{0x22C2,0x0,0x0}}, {"bigcirc;",{0x25EF,0x0,0x0}}, {"bigcup;",{0x22C3,0x0,0x0}},
  {"bigodot;",{0x2A00,0x0,0x0}}, {"bigoplus;",{0x2A01,0x0,0x0}}, {"bigotimes;",{0x2A02,0x0,0x0}},
  {"bigsqcup;",{0x2A06,0x0,0x0}}, {"bigstar;",{0x2605,0x0,0x0}}, {"bigtriangledown;",{0x25BD,0x0,0x0}},
  {"bigtriangleup;",{0x25B3,0x0,0x0}}, {"biguplus;",{0x2A04,0x0,0x0}}, {"bigvee;",{0x22C1,0x0,0x0}},
  {"bigwedge;",{0x22C0,0x0,0x0}}, {"bkarow;",{0x290D,0x0,0x0}}, {"blacklozenge;",{0x29EB,0x0,0x0}},
  {"blacksquare;",{0x25AA,0x0,0x0}}, {"blacktriangle;",{0x25B4,0x0,0x0}}, {"blacktriangledown;",{0x25BE,0x0,0x0}},
  {"blacktriangleleft;",{0x25C2,0x0,0x0}}, {"blacktriangleright;",{0x25B8,0x0,0x0}}, {"blank;",{0x2423,0x0,0x0}},
  {"blk12;",{0x2592,0x0,0x0}}, {"blk14;",{0x2591,0x0,0x0}}, {"blk34;",{0x2593,0x0,0x0}},
  {"block;",{0x2588,0x0,0x0}}, {"bne;",{0x3D,0x20E5,0x0}}, {"bnequiv;",{0x2261,0x20E5,0x0}},
  {"bnot;",{0x2310,0x0,0x0}}, {"bopf;",{0x1D553,0x0,0x0}}, {"bot;",{0x22A5,0x0,0x0}},
  {"bottom;",{0x22A5,0x0,0x0}}, {"bowtie;",{0x22C8,0x0,0x0}}, {"boxDL;",{0x2557,0x0,0x0}},
  {"boxDR;",{0x2554,0x0,0x0}}, {"boxDl;",{0x2556,0x0,0x0}}, {"boxDr;",{0x2553,0x0,0x0}},
  {"boxH;",{0x2550,0x0,0x0}}, {"boxHD;",{0x2566,0x0,0x0}}, {"boxHU;",{0x2569,0x0,0x0}},
  {"boxHd;",{0x2564,0x0,0x0}}, {"boxHu;",{0x2567,0x0,0x0}}, {"boxUL;",{0x255D,0x0,0x0}},
  {"boxUR;",{0x255A,0x0,0x0}}, {"boxUl;",{0x255C,0x0,0x0}}, {"boxUr;",{0x2559,0x0,0x0}},
  {"boxV;",{0x2551,0x0,0x0}}, {"boxVH;",{0x256C,0x0,0x0}}, {"boxVL;",{0x2563,0x0,0x0}},
  {"boxVR;",{0x2560,0x0,0x0}}, {"boxVh;",{0x256B,0x0,0x0}}, {"boxVl;",{0x2562,0x0,0x0}},
  {"boxVr;",{0x255F,0x0,0x0}}, {"boxbox;",{0x29C9,0x0,0x0}}, {"boxdL;",{0x2555,0x0,0x0}},
  {"boxdR;",{0x2552,0x0,0x0}}, {"boxdl;",{0x2510,0x0,0x0}}, {"boxdr;",{0x250C,0x0,0x0}},
  {"boxh;",{0x2500,0x0,0x0}}, {"boxhD;",{0x2565,0x0,0x0}}, {"boxhU;",{0x2568,0x0,0x0}},
  {"boxhd;",{0x252C,0x0,0x0}}, {"boxhu;",{0x2534,0x0,0x0}}, {"boxminus;",{0x229F,0x0,0x0}},
  {"boxplus;",{0x229E,0x0,0x0}}, {"boxtimes;",{0x22A0,0x0,0x0}}, {"boxuL;",{0x255B,0x0,0x0}},
  {"boxuR;",{0x2558,0x0,0x0}}, {"boxul;",{0x2518,0x0,0x0}}, {"boxur;",{0x2514,0x0,0x0}},
  {"boxv;",{0x2502,0x0,0x0}}, {"boxvH;",{0x256A,0x0,0x0}}, {"boxvL;",{0x2561,0x0,0x0}},
  {"boxvR;",{0x255E,0x0,0x0}}, {"boxvh;",{0x253C,0x0,0x0}}, {"boxvl;",{0x2524,0x0,0x0}},
  {"boxvr;",{0x251C,0x0,0x0}}, {"bprime;",{0x2035,0x0,0x0}}, {"breve;",{0x2D8,0x0,0x0}},
  {"brvbar",{0xA6,0x0,0x0}}, {"brvbar;",{0xA6,0x0,0x0}}, {"bscr;",{0x1D4B7,0x0,0x0}},
  {"bsemi;",{0x204F,0x0,0x0}}, {"bsim;",{0x223D,0x0,0x0}}, {"bsime;",{0x22CD,0x0,0x0}},
  {"bsol;",{0x5C,0x0,0x0}}, {"bsolb;",{0x29C5,0x0,0x0}}, {"bsolhsub;",{0x27C8,0x0,0x0}},
  {"bull;",{0x2022,0x0,0x0}}, {"bullet;",{0x2022,0x0,0x0}}, {"bump;",{0x224E,0x0,0x0}},
  {"bumpE;",{0x2AAE,0x0,0x0}}, {"bumpe;",{0x224F,0x0,0x0}}, {"bumpeq;",{0x224F,0x0,0x0}},
  {"cacute;",{0x107,0x0,0x0}}, {"cap;",{0x2229,0x0,0x0}}, {"capand;",{0x2A44,0x0,0x0}},
  {"capbrcup;",{0x2A49,0x0,0x0}}, {"capcap;",{0x2A4B,0x0,0x0}}, {"capcup;",{0x2A47,0x0,0x0}},
  {"capdot;",{0x2A40,0x0,0x0}}, {"caps;",{0x2229,0xFE00,0x0}}, {"caret;",{0x2041,0x0,0x0}},
  {"caron;",{0x2C7,0x0,0x0}}, {"ccaps;",{0x2A4D,0x0,0x0}}, {"ccaron;",{0x10D,0x0,0x0}},
  {"ccedil",{0xE7,0x0,0x0}}, {"ccedil;",{0xE7,0x0,0x0}}, {"ccirc;",{0x109,0x0,0x0}},
  {"ccups;",{0x2A4C,0x0,0x0}}, {"ccupssm;",{0x2A50,0x0,0x0}}, {"cdot;",{0x10B,0x0,0x0}},
  {"cedil",{0xB8,0x0,0x0}}, {"cedil;",{0xB8,0x0,0x0}}, {"cemptyv;",{0x29B2,0x0,0x0}},
  {"cent",{0xA2,0x0,0x0}}, {"cent;",{0xA2,0x0,0x0}}, {"centerdot;",{0xB7,0x0,0x0}},
  {"cfr;",{0x1D520,0x0,0x0}}, {"chcy;",{0x447,0x0,0x0}}, {"check;",{0x2713,0x0,0x0}},
  {"checkmark;",{0x2713,0x0,0x0}}, {"chi;",{0x3C7,0x0,0x0}}, {"cir;",{0x25CB,0x0,0x0}},
  {"cirE;",{0x29C3,0x0,0x0}}, {"circ;",{0x2C6,0x0,0x0}}, {"circeq;",{0x2257,0x0,0x0}},
  {"circlearrowleft;",{0x21BA,0x0,0x0}}, {"circlearrowright;",{0x21BB,0x0,0x0}}, {"circledR;",{0xAE,0x0,0x0}},
  {"circledS;",{0x24C8,0x0,0x0}}, {"circledast;",{0x229B,0x0,0x0}}, {"circledcirc;",{0x229A,0x0,0x0}},
  {"circleddash;",{0x229D,0x0,0x0}}, {"cire;",{0x2257,0x0,0x0}}, {"cirfnint;",{0x2A10,0x0,0x0}},
  {"cirmid;",{0x2AEF,0x0,0x0}}, {"cirscir;",{0x29C2,0x0,0x0}}, {"clubs;",{0x2663,0x0,0x0}},
  {"clubsuit;",{0x2663,0x0,0x0}}, {"colon;",{0x3A,0x0,0x0}}, {"colone;",{0x2254,0x0,0x0}},
  {"coloneq;",{0x2254,0x0,0x0}}, {"comma;",{0x2C,0x0,0x0}}, {"commat;",{0x40,0x0,0x0}},
  {"comp;",{0x2201,0x0,0x0}}, {"compfn;",{0x2218,0x0,0x0}}, {"complement;",{0x2201,0x0,0x0}},
  {"complexes;",{0x2102,0x0,0x0}}, {"cong;",{0x2245,0x0,0x0}}, {"congdot;",{0x2A6D,0x0,0x0}},
  {"conint;",{0x222E,0x0,0x0}}, {"copf;",{0x1D554,0x0,0x0}}, {"coprod;",{0x2210,0x0,0x0}},
  {"copy",{0xA9,0x0,0x0}}, {"copy;",{0xA9,0x0,0x0}}, {"copysr;",{0x2117,0x0,0x0}},
  {"crarr;",{0x21B5,0x0,0x0}}, {"cross;",{0x2717,0x0,0x0}}, {"cscr;",{0x1D4B8,0x0,0x0}},
  {"csub;",{0x2ACF,0x0,0x0}}, {"csube;",{0x2AD1,0x0,0x0}}, {"csup;",{0x2AD0,0x0,0x0}},
  {"csupe;",{0x2AD2,0x0,0x0}}, {"ctdot;",{0x22EF,0x0,0x0}}, {"cudarrl;",{0x2938,0x0,0x0}},
  {"cudarrr;",{0x2935,0x0,0x0}}, {"cuepr;",{0x22DE,0x0,0x0}}, {"cuesc;",{0x22DF,0x0,0x0}},
  {"cularr;",{0x21B6,0x0,0x0}}, {"cularrp;",{0x293D,0x0,0x0}}, {"cup;",{0x222A,0x0,0x0}},
  {"cupbrcap;",{0x2A48,0x0,0x0}}, {"cupcap;",{0x2A46,0x0,0x0}}, {"cupcup;",{0x2A4A,0x0,0x0}},
  {"cupdot;",{0x228D,0x0,0x0}}, {"cupor;",{0x2A45,0x0,0x0}}, {"cups;",{0x222A,0xFE00,0x0}},
  {"curarr;",{0x21B7,0x0,0x0}}, {"curarrm;",{0x293C,0x0,0x0}}, {"curlyeqprec;",{0x22DE,0x0,0x0}},
  {"curlyeqsucc;",{0x22DF,0x0,0x0}}, {"curlyvee;",{0x22CE,0x0,0x0}}, {"curlywedge;",{0x22CF,0x0,0x0}},
  {"curren",{0xA4,0x0,0x0}}, {"curren;",{0xA4,0x0,0x0}}, {"curvearrowleft;",{0x21B6,0x0,0x0}},
  {"curvearrowright;",{0x21B7,0x0,0x0}}, {"cuvee;",{0x22CE,0x0,0x0}}, {"cuwed;",{0x22CF,0x0,0x0}},
  {"cwconint;",{0x2232,0x0,0x0}}, {"cwint;",{0x2231,0x0,0x0}}, {"cylcty;",{0x232D,0x0,0x0}},
  {"dArr;",{0x21D3,0x0,0x0}}, {"dHar;",{0x2965,0x0,0x0}}, {"dagger;",{0x2020,0x0,0x0}},
  {"daleth;",{0x2138,0x0,0x0}}, {"darr;",{0x2193,0x0,0x0}}, {"dash;",{0x2010,0x0,0x0}},
  {"dashv;",{0x22A3,0x0,0x0}}, {"dbkarow;",{0x290F,0x0,0x0}}, {"dblac;",{0x2DD,0x0,0x0}},
  {"dcaron;",{0x10F,0x0,0x0}}, {"dcy;",{0x434,0x0,0x0}}, {"dd;",{0x2146,0x0,0x0}},
  {"ddagger;",{0x2021,0x0,0x0}}, {"ddarr;",{0x21CA,0x0,0x0}}, {"ddotseq;",{0x2A77,0x0,0x0}},
  {"deg",{0xB0,0x0,0x0}}, {"deg;",{0xB0,0x0,0x0}}, {"delta;",{0x3B4,0x0,0x0}},
  {"demptyv;",{0x29B1,0x0,0x0}}, {"dfisht;",{0x297F,0x0,0x0}}, {"dfr;",{0x1D521,0x0,0x0}},
  {"dharl;",{0x21C3,0x0,0x0}}, {"dharr;",{0x21C2,0x0,0x0}}, {"diam;",{0x22C4,0x0,0x0}},
  {"diamond;",{0x22C4,0x0,0x0}}, {"diamondsuit;",{0x2666,0x0,0x0}}, {"diams;",{0x2666,0x0,0x0}},
  {"die;",{0xA8,0x0,0x0}}, {"digamma;",{0x3DD,0x0,0x0}}, {"disin;",{0x22F2,0x0,0x0}},
  {"div;",{0xF7,0x0,0x0}}, {"divide",{0xF7,0x0,0x0}}, {"divide;",{0xF7,0x0,0x0}},
  {"divideontimes;",{0x22C7,0x0,0x0}}, {"divonx;",{0x22C7,0x0,0x0}}, {"djcy;",{0x452,0x0,0x0}},
  {"dlcorn;",{0x231E,0x0,0x0}}, {"dlcrop;",{0x230D,0x0,0x0}}, {"dollar;",{0x24,0x0,0x0}},
  {"dopf;",{0x1D555,0x0,0x0}}, {"dot;",{0x2D9,0x0,0x0}}, {"doteq;",{0x2250,0x0,0x0}},
  {"doteqdot;",{0x2251,0x0,0x0}}, {"dotminus;",{0x2238,0x0,0x0}}, {"dotplus;",{0x2214,0x0,0x0}},
  {"dotsquare;",{0x22A1,0x0,0x0}}, {"doublebarwedge;",{0x2306,0x0,0x0}}, {"downarrow;",{0x2193,0x0,0x0}},
  {"downdownarrows;",{0x21CA,0x0,0x0}}, {"downharpoonleft;",{0x21C3,0x0,0x0}}, {"downharpoonright;",{0x21C2,0x0,0x0}},
  {"drbkarow;",{0x2910,0x0,0x0}}, {"drcorn;",{0x231F,0x0,0x0}}, {"drcrop;",{0x230C,0x0,0x0}},
  {"dscr;",{0x1D4B9,0x0,0x0}}, {"dscy;",{0x455,0x0,0x0}}, {"dsol;",{0x29F6,0x0,0x0}},
  {"dstrok;",{0x111,0x0,0x0}}, {"dtdot;",{0x22F1,0x0,0x0}}, {"dtri;",{0x25BF,0x0,0x0}},
  {"dtrif;",{0x25BE,0x0,0x0}}, {"duarr;",{0x21F5,0x0,0x0}}, {"duhar;",{0x296F,0x0,0x0}},
  {"dwangle;",{0x29A6,0x0,0x0}}, {"dzcy;",{0x45F,0x0,0x0}}, {"dzigrarr;",{0x27FF,0x0,0x0}},
  {"eDDot;",{0x2A77,0x0,0x0}}, {"eDot;",{0x2251,0x0,0x0}}, {"eacute",{0xE9,0x0,0x0}},
  {"eacute;",{0xE9,0x0,0x0}}, {"easter;",{0x2A6E,0x0,0x0}}, {"ecaron;",{0x11B,0x0,0x0}},
  {"ecir;",{0x2256,0x0,0x0}}, {"ecirc",{0xEA,0x0,0x0}}, {"ecirc;",{0xEA,0x0,0x0}},
  {"ecolon;",{0x2255,0x0,0x0}}, {"ecy;",{0x44D,0x0,0x0}}, {"edot;",{0x117,0x0,0x0}},
  {"ee;",{0x2147,0x0,0x0}}, {"efDot;",{0x2252,0x0,0x0}}, {"efr;",{0x1D522,0x0,0x0}},
  {"eg;",{0x2A9A,0x0,0x0}}, {"egrave",{0xE8,0x0,0x0}}, {"egrave;",{0xE8,0x0,0x0}},
  {"egs;",{0x2A96,0x0,0x0}}, {"egsdot;",{0x2A98,0x0,0x0}}, {"el;",{0x2A99,0x0,0x0}},
  {"elinters;",{0x23E7,0x0,0x0}}, {"ell;",{0x2113,0x0,0x0}}, {"els;",{0x2A95,0x0,0x0}},
  {"elsdot;",{0x2A97,0x0,0x0}}, {"emacr;",{0x113,0x0,0x0}}, {"empty;",{0x2205,0x0,0x0}},
  {"emptyset;",{0x2205,0x0,0x0}}, {"emptyv;",{0x2205,0x0,0x0}}, {"emsp13;",{0x2004,0x0,0x0}},
  {"emsp14;",{0x2005,0x0,0x0}}, {"emsp;",{0x2003,0x0,0x0}}, {"eng;",{0x14B,0x0,0x0}},
  {"ensp;",{0x2002,0x0,0x0}}, {"eogon;",{0x119,0x0,0x0}}, {"eopf;",{0x1D556,0x0,0x0}},
  {"epar;",{0x22D5,0x0,0x0}}, {"eparsl;",{0x29E3,0x0,0x0}}, {"eplus;",{0x2A71,0x0,0x0}},
  {"epsi;",{0x3B5,0x0,0x0}}, {"epsilon;",{0x3B5,0x0,0x0}}, {"epsiv;",{0x3F5,0x0,0x0}},
  {"eqcirc;",{0x2256,0x0,0x0}}, {"eqcolon;",{0x2255,0x0,0x0}}, {"eqsim;",{0x2242,0x0,0x0}},
  {"eqslantgtr;",{0x2A96,0x0,0x0}}, {"eqslantless;",{0x2A95,0x0,0x0}}, {"equals;",{0x3D,0x0,0x0}},
  {"equest;",{0x225F,0x0,0x0}}, {"equiv;",{0x2261,0x0,0x0}}, {"equivDD;",{0x2A78,0x0,0x0}},
  {"eqvparsl;",{0x29E5,0x0,0x0}}, {"erDot;",{0x2253,0x0,0x0}}, {"erarr;",{0x2971,0x0,0x0}},
  {"escr;",{0x212F,0x0,0x0}}, {"esdot;",{0x2250,0x0,0x0}}, {"esim;",{0x2242,0x0,0x0}},
  {"eta;",{0x3B7,0x0,0x0}}, {"eth",{0xF0,0x0,0x0}}, {"eth;",{0xF0,0x0,0x0}},
  {"euml",{0xEB,0x0,0x0}}, {"euml;",{0xEB,0x0,0x0}}, {"euro;",{0x20AC,0x0,0x0}},
  {"excl;",{0x21,0x0,0x0}}, {"exist;",{0x2203,0x0,0x0}}, {"expectation;",{0x2130,0x0,0x0}},
  {"exponentiale;",{0x2147,0x0,0x0}}, {"fallingdotseq;",{0x2252,0x0,0x0}}, {"fcy;",{0x444,0x0,0x0}},
  {"female;",{0x2640,0x0,0x0}}, {"ffilig;",{0xFB03,0x0,0x0}}, {"fflig;",{0xFB00,0x0,0x0}},
  {"ffllig;",{0xFB04,0x0,0x0}}, {"ffr;",{0x1D523,0x0,0x0}}, {"filig;",{0xFB01,0x0,0x0}},
  {"fjlig;",{0x66,0x6A,0x0}}, {"flat;",{0x266D,0x0,0x0}}, {"fllig;",{0xFB02,0x0,0x0}},
  {"fltns;",{0x25B1,0x0,0x0}}, {"fnof;",{0x192,0x0,0x0}}, {"fopf;",{0x1D557,0x0,0x0}},
  {"forall;",{0x2200,0x0,0x0}}, {"fork;",{0x22D4,0x0,0x0}}, {"forkv;",{0x2AD9,0x0,0x0}},
  {"fpartint;",{0x2A0D,0x0,0x0}}, {"frac12",{0xBD,0x0,0x0}}, {"frac12;",{0xBD,0x0,0x0}},
  {"frac13;",{0x2153,0x0,0x0}}, {"frac14",{0xBC,0x0,0x0}}, {"frac14;",{0xBC,0x0,0x0}},
  {"frac15;",{0x2155,0x0,0x0}}, {"frac16;",{0x2159,0x0,0x0}}, {"frac18;",{0x215B,0x0,0x0}},
  {"frac23;",{0x2154,0x0,0x0}}, {"frac25;",{0x2156,0x0,0x0}}, {"frac34",{0xBE,0x0,0x0}},
  {"frac34;",{0xBE,0x0,0x0}}, {"frac35;",{0x2157,0x0,0x0}}, {"frac38;",{0x215C,0x0,0x0}},
  {"frac45;",{0x2158,0x0,0x0}}, {"frac56;",{0x215A,0x0,0x0}}, {"frac58;",{0x215D,0x0,0x0}},
  {"frac78;",{0x215E,0x0,0x0}}, {"frasl;",{0x2044,0x0,0x0}}, {"frown;",{0x2322,0x0,0x0}},
  {"fscr;",{0x1D4BB,0x0,0x0}}, {"gE;",{0x2267,0x0,0x0}}, {"gEl;",{0x2A8C,0x0,0x0}},
  {"gacute;",{0x1F5,0x0,0x0}}, {"gamma;",{0x3B3,0x0,0x0}}, {"gammad;",{0x3DD,0x0,0x0}},
  {"gap;",{0x2A86,0x0,0x0}}, {"gbreve;",{0x11F,0x0,0x0}}, {"gcirc;",{0x11D,0x0,0x0}},
  {"gcy;",{0x433,0x0,0x0}}, {"gdot;",{0x121,0x0,0x0}}, {"ge;",{0x2265,0x0,0x0}},
  {"gel;",{0x22DB,0x0,0x0}}, {"geq;",{0x2265,0x0,0x0}}, {"geqq;",{0x2267,0x0,0x0}},
  {"geqslant;",{0x2A7E,0x0,0x0}}, {"ges;",{0x2A7E,0x0,0x0}}, {"gescc;",{0x2AA9,0x0,0x0}},
  {"gesdot;",{0x2A80,0x0,0x0}}, {"gesdoto;",{0x2A82,0x0,0x0}}, {"gesdotol;",{0x2A84,0x0,0x0}},
  {"gesl;",{0x22DB,0xFE00,0x0}}, {"gesles;",{0x2A94,0x0,0x0}}, {"gfr;",{0x1D524,0x0,0x0}},
  {"gg;",{0x226B,0x0,0x0}}, {"ggg;",{0x22D9,0x0,0x0}}, {"gimel;",{0x2137,0x0,0x0}},
  {"gjcy;",{0x453,0x0,0x0}}, {"gl;",{0x2277,0x0,0x0}}, {"glE;",{0x2A92,0x0,0x0}},
  {"gla;",{0x2AA5,0x0,0x0}}, {"glj;",{0x2AA4,0x0,0x0}}, {"gnE;",{0x2269,0x0,0x0}},
  {"gnap;",{0x2A8A,0x0,0x0}}, {"gnapprox;",{0x2A8A,0x0,0x0}}, {"gne;",{0x2A88,0x0,0x0}},
  {"gneq;",{0x2A88,0x0,0x0}}, {"gneqq;",{0x2269,0x0,0x0}}, {"gnsim;",{0x22E7,0x0,0x0}},
  {"gopf;",{0x1D558,0x0,0x0}}, {"grave;",{0x60,0x0,0x0}}, {"gscr;",{0x210A,0x0,0x0}},
  {"gsim;",{0x2273,0x0,0x0}}, {"gsime;",{0x2A8E,0x0,0x0}}, {"gsiml;",{0x2A90,0x0,0x0}},
  {"gt",{0x3E,0x0,0x0}}, {"gt;",{0x3E,0x0,0x0}}, {"gtcc;",{0x2AA7,0x0,0x0}},
  {"gtcir;",{0x2A7A,0x0,0x0}}, {"gtdot;",{0x22D7,0x0,0x0}}, {"gtlPar;",{0x2995,0x0,0x0}},
  {"gtquest;",{0x2A7C,0x0,0x0}}, {"gtrapprox;",{0x2A86,0x0,0x0}}, {"gtrarr;",{0x2978,0x0,0x0}},
  {"gtrdot;",{0x22D7,0x0,0x0}}, {"gtreqless;",{0x22DB,0x0,0x0}}, {"gtreqqless;",{0x2A8C,0x0,0x0}},
  {"gtrless;",{0x2277,0x0,0x0}}, {"gtrsim;",{0x2273,0x0,0x0}}, {"gvertneqq;",{0x2269,0xFE00,0x0}},
  {"gvnE;",{0x2269,0xFE00,0x0}}, {"hArr;",{0x21D4,0x0,0x0}}, {"hairsp;",{0x200A,0x0,0x0}},
  {"half;",{0xBD,0x0,0x0}}, {"hamilt;",{0x210B,0x0,0x0}}, {"hardcy;",{0x44A,0x0,0x0}},
  {"harr;",{0x2194,0x0,0x0}}, {"harrcir;",{0x2948,0x0,0x0}}, {"harrw;",{0x21AD,0x0,0x0}},
  {"hbar;",{0x210F,0x0,0x0}}, {"hcirc;",{0x125,0x0,0x0}}, {"hearts;",{0x2665,0x0,0x0}},
  {"heartsuit;",{0x2665,0x0,0x0}}, {"hellip;",{0x2026,0x0,0x0}}, {"hercon;",{0x22B9,0x0,0x0}},
  {"hfr;",{0x1D525,0x0,0x0}}, {"hksearow;",{0x2925,0x0,0x0}}, {"hkswarow;",{0x2926,0x0,0x0}},
  {"hoarr;",{0x21FF,0x0,0x0}}, {"homtht;",{0x223B,0x0,0x0}}, {"hookleftarrow;",{0x21A9,0x0,0x0}},
  {"hookrightarrow;",{0x21AA,0x0,0x0}}, {"hopf;",{0x1D559,0x0,0x0}}, {"horbar;",{0x2015,0x0,0x0}},
  {"hscr;",{0x1D4BD,0x0,0x0}}, {"hslash;",{0x210F,0x0,0x0}}, {"hstrok;",{0x127,0x0,0x0}},
  {"hybull;",{0x2043,0x0,0x0}}, {"hyphen;",{0x2010,0x0,0x0}}, {"iacute",{0xED,0x0,0x0}},
  {"iacute;",{0xED,0x0,0x0}}, {"ic;",{0x2063,0x0,0x0}}, {"icirc",{0xEE,0x0,0x0}},
  {"icirc;",{0xEE,0x0,0x0}}, {"icy;",{0x438,0x0,0x0}}, {"iecy;",{0x435,0x0,0x0}},
  {"iexcl",{0xA1,0x0,0x0}}, {"iexcl;",{0xA1,0x0,0x0}}, {"iff;",{0x21D4,0x0,0x0}},
  {"ifr;",{0x1D526,0x0,0x0}}, {"igrave",{0xEC,0x0,0x0}}, {"igrave;",{0xEC,0x0,0x0}},
  {"ii;",{0x2148,0x0,0x0}}, {"iiiint;",{0x2A0C,0x0,0x0}}, {"iiint;",{0x222D,0x0,0x0}},
  {"iinfin;",{0x29DC,0x0,0x0}}, {"iiota;",{0x2129,0x0,0x0}}, {"ijlig;",{0x133,0x0,0x0}},
  {"imacr;",{0x12B,0x0,0x0}}, {"image;",{0x2111,0x0,0x0}}, {"imagline;",{0x2110,0x0,0x0}},
  {"imagpart;",{0x2111,0x0,0x0}}, {"imath;",{0x131,0x0,0x0}}, {"imof;",{0x22B7,0x0,0x0}},
  {"imped;",{0x1B5,0x0,0x0}}, {"in;",{0x2208,0x0,0x0}}, {"incare;",{0x2105,0x0,0x0}},
  {"infin;",{0x221E,0x0,0x0}}, {"infintie;",{0x29DD,0x0,0x0}}, {"inodot;",{0x131,0x0,0x0}},
  {"int;",{0x222B,0x0,0x0}}, {"intcal;",{0x22BA,0x0,0x0}}, {"integers;",{0x2124,0x0,0x0}},
  {"intercal;",{0x22BA,0x0,0x0}}, {"intlarhk;",{0x2A17,0x0,0x0}}, {"intprod;",{0x2A3C,0x0,0x0}},
  {"iocy;",{0x451,0x0,0x0}}, {"iogon;",{0x12F,0x0,0x0}}, {"iopf;",{0x1D55A,0x0,0x0}},
  {"iota;",{0x3B9,0x0,0x0}}, {"iprod;",{0x2A3C,0x0,0x0}}, {"iquest",{0xBF,0x0,0x0}},
  {"iquest;",{0xBF,0x0,0x0}}, {"iscr;",{0x1D4BE,0x0,0x0}}, {"isin;",{0x2208,0x0,0x0}},
  {"isinE;",{0x22F9,0x0,0x0}}, {"isindot;",{0x22F5,0x0,0x0}}, {"isins;",{0x22F4,0x0,0x0}},
  {"isinsv;",{0x22F3,0x0,0x0}}, {"isinv;",{0x2208,0x0,0x0}}, {"it;",{0x2062,0x0,0x0}},
  {"itilde;",{0x129,0x0,0x0}}, {"iukcy;",{0x456,0x0,0x0}}, {"iuml",{0xEF,0x0,0x0}},
  {"iuml;",{0xEF,0x0,0x0}}, {"jcirc;",{0x135,0x0,0x0}}, {"jcy;",{0x439,0x0,0x0}},
  {"jfr;",{0x1D527,0x0,0x0}}, {"jmath;",{0x237,0x0,0x0}}, {"jopf;",{0x1D55B,0x0,0x0}},
  {"jscr;",{0x1D4BF,0x0,0x0}}, {"jsercy;",{0x458,0x0,0x0}}, {"jukcy;",{0x454,0x0,0x0}},
  {"kappa;",{0x3BA,0x0,0x0}}, {"kappav;",{0x3F0,0x0,0x0}}, {"kcedil;",{0x137,0x0,0x0}},
  {"kcy;",{0x43A,0x0,0x0}}, {"kfr;",{0x1D528,0x0,0x0}}, {"kgreen;",{0x138,0x0,0x0}},
  {"khcy;",{0x445,0x0,0x0}}, {"kjcy;",{0x45C,0x0,0x0}}, {"kopf;",{0x1D55C,0x0,0x0}},
  {"kscr;",{0x1D4C0,0x0,0x0}}, {"lAarr;",{0x21DA,0x0,0x0}}, {"lArr;",{0x21D0,0x0,0x0}},
  {"lAtail;",{0x291B,0x0,0x0}}, {"lBarr;",{0x290E,0x0,0x0}}, {"lE;",{0x2266,0x0,0x0}},
  {"lEg;",{0x2A8B,0x0,0x0}}, {"lHar;",{0x2962,0x0,0x0}}, {"lacute;",{0x13A,0x0,0x0}},
  {"laemptyv;",{0x29B4,0x0,0x0}}, {"lagran;",{0x2112,0x0,0x0}}, {"lambda;",{0x3BB,0x0,0x0}},
  {"lang;",{0x27E8,0x0,0x0}}, {"langd;",{0x2991,0x0,0x0}}, {"langle;",{0x27E8,0x0,0x0}},
  {"lap;",{0x2A85,0x0,0x0}}, {"laquo",{0xAB,0x0,0x0}}, {"laquo;",{0xAB,0x0,0x0}},
  {"larr;",{0x2190,0x0,0x0}}, {"larrb;",{0x21E4,0x0,0x0}}, {"larrbfs;",{0x291F,0x0,0x0}},
  {"larrfs;",{0x291D,0x0,0x0}}, {"larrhk;",{0x21A9,0x0,0x0}}, {"larrlp;",{0x21AB,0x0,0x0}},
  {"larrpl;",{0x2939,0x0,0x0}}, {"larrsim;",{0x2973,0x0,0x0}}, {"larrtl;",{0x21A2,0x0,0x0}},
  {"lat;",{0x2AAB,0x0,0x0}}, {"latail;",{0x2919,0x0,0x0}}, {"late;",{0x2AAD,0x0,0x0}},
  {"lates;",{0x2AAD,0xFE00,0x0}}, {"lbarr;",{0x290C,0x0,0x0}}, {"lbbrk;",{0x2772,0x0,0x0}},
  {"lbrace;",{0x7B,0x0,0x0}}, {"lbrack;",{0x5B,0x0,0x0}}, {"lbrke;",{0x298B,0x0,0x0}},
  {"lbrksld;",{0x298F,0x0,0x0}}, {"lbrkslu;",{0x298D,0x0,0x0}}, {"lcaron;",{0x13E,0x0,0x0}},
  {"lcedil;",{0x13C,0x0,0x0}}, {"lceil;",{0x2308,0x0,0x0}}, {"lcub;",{0x7B,0x0,0x0}},
  {"lcy;",{0x43B,0x0,0x0}}, {"ldca;",{0x2936,0x0,0x0}}, {"ldquo;",{0x201C,0x0,0x0}},
  {"ldquor;",{0x201E,0x0,0x0}}, {"ldrdhar;",{0x2967,0x0,0x0}}, {"ldrushar;",{0x294B,0x0,0x0}},
  {"ldsh;",{0x21B2,0x0,0x0}}, {"le;",{0x2264,0x0,0x0}}, {"leftarrow;",{0x2190,0x0,0x0}},
  {"leftarrowtail;",{0x21A2,0x0,0x0}}, {"leftharpoondown;",{0x21BD,0x0,0x0}}, {"leftharpoonup;",{0x21BC,0x0,0x0}},
  {"leftleftarrows;",{0x21C7,0x0,0x0}}, {"leftrightarrow;",{0x2194,0x0,0x0}}, {"leftrightarrows;",{0x21C6,0x0,0x0}},
  {"leftrightharpoons;",{0x21CB,0x0,0x0}}, {"leftrightsquigarrow;",{0x21AD,0x0,0x0}}, {"leftthreetimes;",{0x22CB,0x0,0x0}},
  {"leg;",{0x22DA,0x0,0x0}}, {"leq;",{0x2264,0x0,0x0}}, {"leqq;",{0x2266,0x0,0x0}},
  {"leqslant;",{0x2A7D,0x0,0x0}}, {"les;",{0x2A7D,0x0,0x0}}, {"lescc;",{0x2AA8,0x0,0x0}},
  {"lesdot;",{0x2A7F,0x0,0x0}}, {"lesdoto;",{0x2A81,0x0,0x0}}, {"lesdotor;",{0x2A83,0x0,0x0}},
  {"lesg;",{0x22DA,0xFE00,0x0}}, {"lesges;",{0x2A93,0x0,0x0}}, {"lessapprox;",{0x2A85,0x0,0x0}},
  {"lessdot;",{0x22D6,0x0,0x0}}, {"lesseqgtr;",{0x22DA,0x0,0x0}}, {"lesseqqgtr;",{0x2A8B,0x0,0x0}},
  {"lessgtr;",{0x2276,0x0,0x0}}, {"lesssim;",{0x2272,0x0,0x0}}, {"lfisht;",{0x297C,0x0,0x0}},
  {"lfloor;",{0x230A,0x0,0x0}}, {"lfr;",{0x1D529,0x0,0x0}}, {"lg;",{0x2276,0x0,0x0}},
  {"lgE;",{0x2A91,0x0,0x0}}, {"lhard;",{0x21BD,0x0,0x0}}, {"lharu;",{0x21BC,0x0,0x0}},
  {"lharul;",{0x296A,0x0,0x0}}, {"lhblk;",{0x2584,0x0,0x0}}, {"ljcy;",{0x459,0x0,0x0}},
  {"ll;",{0x226A,0x0,0x0}}, {"llarr;",{0x21C7,0x0,0x0}}, {"llcorner;",{0x231E,0x0,0x0}},
  {"llhard;",{0x296B,0x0,0x0}}, {"lltri;",{0x25FA,0x0,0x0}}, {"lmidot;",{0x140,0x0,0x0}},
  {"lmoust;",{0x23B0,0x0,0x0}}, {"lmoustache;",{0x23B0,0x0,0x0}}, {"lnE;",{0x2268,0x0,0x0}},
  {"lnap;",{0x2A89,0x0,0x0}}, {"lnapprox;",{0x2A89,0x0,0x0}}, {"lne;",{0x2A87,0x0,0x0}},
  {"lneq;",{0x2A87,0x0,0x0}}, {"lneqq;",{0x2268,0x0,0x0}}, {"lnsim;",{0x22E6,0x0,0x0}},
  {"loang;",{0x27EC,0x0,0x0}}, {"loarr;",{0x21FD,0x0,0x0}}, {"lobrk;",{0x27E6,0x0,0x0}},
  {"longleftarrow;",{0x27F5,0x0,0x0}}, {"longleftrightarrow;",{0x27F7,0x0,0x0}}, {"longmapsto;",{0x27FC,0x0,0x0}},
  {"longrightarrow;",{0x27F6,0x0,0x0}}, {"looparrowleft;",{0x21AB,0x0,0x0}}, {"looparrowright;",{0x21AC,0x0,0x0}},
  {"lopar;",{0x2985,0x0,0x0}}, {"lopf;",{0x1D55D,0x0,0x0}}, {"loplus;",{0x2A2D,0x0,0x0}},
  {"lotimes;",{0x2A34,0x0,0x0}}, {"lowast;",{0x2217,0x0,0x0}}, {"lowbar;",{0x5F,0x0,0x0}},
  {"loz;",{0x25CA,0x0,0x0}}, {"lozenge;",{0x25CA,0x0,0x0}}, {"lozf;",{0x29EB,0x0,0x0}},
  {"lpar;",{0x28,0x0,0x0}}, {"lparlt;",{0x2993,0x0,0x0}}, {"lrarr;",{0x21C6,0x0,0x0}},
  {"lrcorner;",{0x231F,0x0,0x0}}, {"lrhar;",{0x21CB,0x0,0x0}}, {"lrhard;",{0x296D,0x0,0x0}},
  {"lrm;",{0x200E,0x0,0x0}}, {"lrtri;",{0x22BF,0x0,0x0}}, {"lsaquo;",{0x2039,0x0,0x0}},
  {"lscr;",{0x1D4C1,0x0,0x0}}, {"lsh;",{0x21B0,0x0,0x0}}, {"lsim;",{0x2272,0x0,0x0}},
  {"lsime;",{0x2A8D,0x0,0x0}}, {"lsimg;",{0x2A8F,0x0,0x0}}, {"lsqb;",{0x5B,0x0,0x0}},
  {"lsquo;",{0x2018,0x0,0x0}}, {"lsquor;",{0x201A,0x0,0x0}}, {"lstrok;",{0x142,0x0,0x0}},
  {"lt",{0x3C,0x0,0x0}}, {"lt;",{0x3C,0x0,0x0}}, {"ltcc;",{0x2AA6,0x0,0x0}},
  {"ltcir;",{0x2A79,0x0,0x0}}, {"ltdot;",{0x22D6,0x0,0x0}}, {"lthree;",{0x22CB,0x0,0x0}},
  {"ltimes;",{0x22C9,0x0,0x0}}, {"ltlarr;",{0x2976,0x0,0x0}}, {"ltquest;",{0x2A7B,0x0,0x0}},
  {"ltrPar;",{0x2996,0x0,0x0}}, {"ltri;",{0x25C3,0x0,0x0}}, {"ltrie;",{0x22B4,0x0,0x0}},
  {"ltrif;",{0x25C2,0x0,0x0}}, {"lurdshar;",{0x294A,0x0,0x0}}, {"luruhar;",{0x2966,0x0,0x0}},
  {"lvertneqq;",{0x2268,0xFE00,0x0}}, {"lvnE;",{0x2268,0xFE00,0x0}}, {"mDDot;",{0x223A,0x0,0x0}},
  {"macr",{0xAF,0x0,0x0}}, {"macr;",{0xAF,0x0,0x0}}, {"male;",{0x2642,0x0,0x0}},
  {"malt;",{0x2720,0x0,0x0}}, {"maltese;",{0x2720,0x0,0x0}}, {"map;",{0x21A6,0x0,0x0}},
  {"mapsto;",{0x21A6,0x0,0x0}}, {"mapstodown;",{0x21A7,0x0,0x0}}, {"mapstoleft;",{0x21A4,0x0,0x0}},
  {"mapstoup;",{0x21A5,0x0,0x0}}, {"marker;",{0x25AE,0x0,0x0}}, {"mcomma;",{0x2A29,0x0,0x0}},
  {"mcy;",{0x43C,0x0,0x0}}, {"mdash;",{0x2014,0x0,0x0}}, {"measuredangle;",{0x2221,0x0,0x0}},
  {"mfr;",{0x1D52A,0x0,0x0}}, {"mho;",{0x2127,0x0,0x0}}, {"micro",{0xB5,0x0,0x0}},
  {"micro;",{0xB5,0x0,0x0}}, {"mid;",{0x2223,0x0,0x0}}, {"midast;",{0x2A,0x0,0x0}},
  {"midcir;",{0x2AF0,0x0,0x0}}, {"middot",{0xB7,0x0,0x0}}, {"middot;",{0xB7,0x0,0x0}},
  {"minus;",{0x2212,0x0,0x0}}, {"minusb;",{0x229F,0x0,0x0}}, {"minusd;",{0x2238,0x0,0x0}},
  {"minusdu;",{0x2A2A,0x0,0x0}}, {"mlcp;",{0x2ADB,0x0,0x0}}, {"mldr;",{0x2026,0x0,0x0}},
  {"mnplus;",{0x2213,0x0,0x0}}, {"models;",{0x22A7,0x0,0x0}}, {"mopf;",{0x1D55E,0x0,0x0}},
  {"mp;",{0x2213,0x0,0x0}}, {"mscr;",{0x1D4C2,0x0,0x0}}, {"mstpos;",{0x223E,0x0,0x0}},
  {"mu;",{0x3BC,0x0,0x0}}, {"multimap;",{0x22B8,0x0,0x0}}, {"mumap;",{0x22B8,0x0,0x0}},
  {"nGg;",{0x22D9,0x338,0x0}}, {"nGt;",{0x226B,0x20D2,0x0}}, {"nGtv;",{0x226B,0x338,0x0}},
  {"nLeftarrow;",{0x21CD,0x0,0x0}}, {"nLeftrightarrow;",{0x21CE,0x0,0x0}}, {"nLl;",{0x22D8,0x338,0x0}},
  {"nLt;",{0x226A,0x20D2,0x0}}, {"nLtv;",{0x226A,0x338,0x0}}, {"nRightarrow;",{0x21CF,0x0,0x0}},
  {"nVDash;",{0x22AF,0x0,0x0}}, {"nVdash;",{0x22AE,0x0,0x0}}, {"nabla;",{0x2207,0x0,0x0}},
  {"nacute;",{0x144,0x0,0x0}}, {"nang;",{0x2220,0x20D2,0x0}}, {"nap;",{0x2249,0x0,0x0}},
  {"napE;",{0x2A70,0x338,0x0}}, {"napid;",{0x224B,0x338,0x0}}, {"napos;",{0x149,0x0,0x0}},
  {"napprox;",{0x2249,0x0,0x0}}, {"natur;",{0x266E,0x0,0x0}}, {"natural;",{0x266E,0x0,0x0}},
  {"naturals;",{0x2115,0x0,0x0}}, {"nbsp",{0xA0,0x0,0x0}}, {"nbsp;",{0xA0,0x0,0x0}},
  {"nbump;",{0x224E,0x338,0x0}}, {"nbumpe;",{0x224F,0x338,0x0}}, {"ncap;",{0x2A43,0x0,0x0}},
  {"ncaron;",{0x148,0x0,0x0}}, {"ncedil;",{0x146,0x0,0x0}}, {"ncong;",{0x2247,0x0,0x0}},
  {"ncongdot;",{0x2A6D,0x338,0x0}}, {"ncup;",{0x2A42,0x0,0x0}}, {"ncy;",{0x43D,0x0,0x0}},
  {"ndash;",{0x2013,0x0,0x0}}, {"ne;",{0x2260,0x0,0x0}}, {"neArr;",{0x21D7,0x0,0x0}},
  {"nearhk;",{0x2924,0x0,0x0}}, {"nearr;",{0x2197,0x0,0x0}}, {"nearrow;",{0x2197,0x0,0x0}},
  {"nedot;",{0x2250,0x338,0x0}}, {"nequiv;",{0x2262,0x0,0x0}}, {"nesear;",{0x2928,0x0,0x0}},
  {"nesim;",{0x2242,0x338,0x0}}, {"nexist;",{0x2204,0x0,0x0}}, {"nexists;",{0x2204,0x0,0x0}},
  {"nfr;",{0x1D52B,0x0,0x0}}, {"ngE;",{0x2267,0x338,0x0}}, {"nge;",{0x2271,0x0,0x0}},
  {"ngeq;",{0x2271,0x0,0x0}}, {"ngeqq;",{0x2267,0x338,0x0}}, {"ngeqslant;",{0x2A7E,0x338,0x0}},
  {"nges;",{0x2A7E,0x338,0x0}}, {"ngsim;",{0x2275,0x0,0x0}}, {"ngt;",{0x226F,0x0,0x0}},
  {"ngtr;",{0x226F,0x0,0x0}}, {"nhArr;",{0x21CE,0x0,0x0}}, {"nharr;",{0x21AE,0x0,0x0}},
  {"nhpar;",{0x2AF2,0x0,0x0}}, {"ni;",{0x220B,0x0,0x0}}, {"nis;",{0x22FC,0x0,0x0}},
  {"nisd;",{0x22FA,0x0,0x0}}, {"niv;",{0x220B,0x0,0x0}}, {"njcy;",{0x45A,0x0,0x0}},
  {"nlArr;",{0x21CD,0x0,0x0}}, {"nlE;",{0x2266,0x338,0x0}}, {"nlarr;",{0x219A,0x0,0x0}},
  {"nldr;",{0x2025,0x0,0x0}}, {"nle;",{0x2270,0x0,0x0}}, {"nleftarrow;",{0x219A,0x0,0x0}},
  {"nleftrightarrow;",{0x21AE,0x0,0x0}}, {"nleq;",{0x2270,0x0,0x0}}, {"nleqq;",{0x2266,0x338,0x0}},
  {"nleqslant;",{0x2A7D,0x338,0x0}}, {"nles;",{0x2A7D,0x338,0x0}}, {"nless;",{0x226E,0x0,0x0}},
  {"nlsim;",{0x2274,0x0,0x0}}, {"nlt;",{0x226E,0x0,0x0}}, {"nltri;",{0x22EA,0x0,0x0}},
  {"nltrie;",{0x22EC,0x0,0x0}}, {"nmid;",{0x2224,0x0,0x0}}, {"nopf;",{0x1D55F,0x0,0x0}},
  {"not",{0xAC,0x0,0x0}}, {"not;",{0xAC,0x0,0x0}}, {"notin;",{0x2209,0x0,0x0}},
  {"notinE;",{0x22F9,0x338,0x0}}, {"notindot;",{0x22F5,0x338,0x0}}, {"notinva;",{0x2209,0x0,0x0}},
  {"notinvb;",{0x22F7,0x0,0x0}}, {"notinvc;",{0x22F6,0x0,0x0}}, {"notni;",{0x220C,0x0,0x0}},
  {"notniva;",{0x220C,0x0,0x0}}, {"notnivb;",{0x22FE,0x0,0x0}}, {"notnivc;",{0x22FD,0x0,0x0}},
  {"npar;",{0x2226,0x0,0x0}}, {"nparallel;",{0x2226,0x0,0x0}}, {"nparsl;",{0x2AFD,0x20E5,0x0}},
  {"npart;",{0x2202,0x338,0x0}}, {"npolint;",{0x2A14,0x0,0x0}}, {"npr;",{0x2280,0x0,0x0}},
  {"nprcue;",{0x22E0,0x0,0x0}}, {"npre;",{0x2AAF,0x338,0x0}}, {"nprec;",{0x2280,0x0,0x0}},
  {"npreceq;",{0x2AAF,0x338,0x0}}, {"nrArr;",{0x21CF,0x0,0x0}}, {"nrarr;",{0x219B,0x0,0x0}},
  {"nrarrc;",{0x2933,0x338,0x0}}, {"nrarrw;",{0x219D,0x338,0x0}}, {"nrightarrow;",{0x219B,0x0,0x0}},
  {"nrtri;",{0x22EB,0x0,0x0}}, {"nrtrie;",{0x22ED,0x0,0x0}}, {"nsc;",{0x2281,0x0,0x0}},
  {"nsccue;",{0x22E1,0x0,0x0}}, {"nsce;",{0x2AB0,0x338,0x0}}, {"nscr;",{0x1D4C3,0x0,0x0}},
  {"nshortmid;",{0x2224,0x0,0x0}}, {"nshortparallel;",{0x2226,0x0,0x0}}, {"nsim;",{0x2241,0x0,0x0}},
  {"nsime;",{0x2244,0x0,0x0}}, {"nsimeq;",{0x2244,0x0,0x0}}, {"nsmid;",{0x2224,0x0,0x0}},
  {"nspar;",{0x2226,0x0,0x0}}, {"nsqsube;",{0x22E2,0x0,0x0}}, {"nsqsupe;",{0x22E3,0x0,0x0}},
  {"nsub;",{0x2284,0x0,0x0}}, {"nsubE;",{0x2AC5,0x338,0x0}}, {"nsube;",{0x2288,0x0,0x0}},
  {"nsubset;",{0x2282,0x20D2,0x0}}, {"nsubseteq;",{0x2288,0x0,0x0}}, {"nsubseteqq;",{0x2AC5,0x338,0x0}},
  {"nsucc;",{0x2281,0x0,0x0}}, {"nsucceq;",{0x2AB0,0x338,0x0}}, {"nsup;",{0x2285,0x0,0x0}},
  {"nsupE;",{0x2AC6,0x338,0x0}}, {"nsupe;",{0x2289,0x0,0x0}}, {"nsupset;",{0x2283,0x20D2,0x0}},
  {"nsupseteq;",{0x2289,0x0,0x0}}, {"nsupseteqq;",{0x2AC6,0x338,0x0}}, {"ntgl;",{0x2279,0x0,0x0}},
  {"ntilde",{0xF1,0x0,0x0}}, {"ntilde;",{0xF1,0x0,0x0}}, {"ntlg;",{0x2278,0x0,0x0}},
  {"ntriangleleft;",{0x22EA,0x0,0x0}}, {"ntrianglelefteq;",{0x22EC,0x0,0x0}}, {"ntriangleright;",{0x22EB,0x0,0x0}},
  {"ntrianglerighteq;",{0x22ED,0x0,0x0}}, {"nu;",{0x3BD,0x0,0x0}}, {"num;",{0x23,0x0,0x0}},
  {"numero;",{0x2116,0x0,0x0}}, {"numsp;",{0x2007,0x0,0x0}}, {"nvDash;",{0x22AD,0x0,0x0}},
  {"nvHarr;",{0x2904,0x0,0x0}}, {"nvap;",{0x224D,0x20D2,0x0}}, {"nvdash;",{0x22AC,0x0,0x0}},
  {"nvge;",{0x2265,0x20D2,0x0}}, {"nvgt;",{0x3E,0x20D2,0x0}}, {"nvinfin;",{0x29DE,0x0,0x0}},
  {"nvlArr;",{0x2902,0x0,0x0}}, {"nvle;",{0x2264,0x20D2,0x0}}, {"nvlt;",{0x3C,0x20D2,0x0}},
  {"nvltrie;",{0x22B4,0x20D2,0x0}}, {"nvrArr;",{0x2903,0x0,0x0}}, {"nvrtrie;",{0x22B5,0x20D2,0x0}},
  {"nvsim;",{0x223C,0x20D2,0x0}}, {"nwArr;",{0x21D6,0x0,0x0}}, {"nwarhk;",{0x2923,0x0,0x0}},
  {"nwarr;",{0x2196,0x0,0x0}}, {"nwarrow;",{0x2196,0x0,0x0}}, {"nwnear;",{0x2927,0x0,0x0}},
  {"oS;",{0x24C8,0x0,0x0}}, {"oacute",{0xF3,0x0,0x0}}, {"oacute;",{0xF3,0x0,0x0}},
  {"oast;",{0x229B,0x0,0x0}}, {"ocir;",{0x229A,0x0,0x0}}, {"ocirc",{0xF4,0x0,0x0}},
  {"ocirc;",{0xF4,0x0,0x0}}, {"ocy;",{0x43E,0x0,0x0}}, {"odash;",{0x229D,0x0,0x0}},
  {"odblac;",{0x151,0x0,0x0}}, {"odiv;",{0x2A38,0x0,0x0}}, {"odot;",{0x2299,0x0,0x0}},
  {"odsold;",{0x29BC,0x0,0x0}}, {"oelig;",{0x153,0x0,0x0}}, {"ofcir;",{0x29BF,0x0,0x0}},
  {"ofr;",{0x1D52C,0x0,0x0}}, {"ogon;",{0x2DB,0x0,0x0}}, {"ograve",{0xF2,0x0,0x0}},
  {"ograve;",{0xF2,0x0,0x0}}, {"ogt;",{0x29C1,0x0,0x0}}, {"ohbar;",{0x29B5,0x0,0x0}},
  {"ohm;",{0x3A9,0x0,0x0}}, {"oint;",{0x222E,0x0,0x0}}, {"olarr;",{0x21BA,0x0,0x0}},
  {"olcir;",{0x29BE,0x0,0x0}}, {"olcross;",{0x29BB,0x0,0x0}}, {"oline;",{0x203E,0x0,0x0}},
  {"olt;",{0x29C0,0x0,0x0}}, {"omacr;",{0x14D,0x0,0x0}}, {"omega;",{0x3C9,0x0,0x0}},
  {"omicron;",{0x3BF,0x0,0x0}}, {"omid;",{0x29B6,0x0,0x0}}, {"ominus;",{0x2296,0x0,0x0}},
  {"oopf;",{0x1D560,0x0,0x0}}, {"opar;",{0x29B7,0x0,0x0}}, {"operp;",{0x29B9,0x0,0x0}},
  {"oplus;",{0x2295,0x0,0x0}}, {"or;",{0x2228,0x0,0x0}}, {"orarr;",{0x21BB,0x0,0x0}},
  {"ord;",{0x2A5D,0x0,0x0}}, {"order;",{0x2134,0x0,0x0}}, {"orderof;",{0x2134,0x0,0x0}},
  {"ordf",{0xAA,0x0,0x0}}, {"ordf;",{0xAA,0x0,0x0}}, {"ordm",{0xBA,0x0,0x0}},
  {"ordm;",{0xBA,0x0,0x0}}, {"origof;",{0x22B6,0x0,0x0}}, {"oror;",{0x2A56,0x0,0x0}},
  {"orslope;",{0x2A57,0x0,0x0}}, {"orv;",{0x2A5B,0x0,0x0}}, {"oscr;",{0x2134,0x0,0x0}},
  {"oslash",{0xF8,0x0,0x0}}, {"oslash;",{0xF8,0x0,0x0}}, {"osol;",{0x2298,0x0,0x0}},
  {"otilde",{0xF5,0x0,0x0}}, {"otilde;",{0xF5,0x0,0x0}}, {"otimes;",{0x2297,0x0,0x0}},
  {"otimesas;",{0x2A36,0x0,0x0}}, {"ouml",{0xF6,0x0,0x0}}, {"ouml;",{0xF6,0x0,0x0}},
  {"ovbar;",{0x233D,0x0,0x0}}, {"par;",{0x2225,0x0,0x0}}, {"para",{0xB6,0x0,0x0}},
  {"para;",{0xB6,0x0,0x0}}, {"parallel;",{0x2225,0x0,0x0}}, {"parsim;",{0x2AF3,0x0,0x0}},
  {"parsl;",{0x2AFD,0x0,0x0}}, {"part;",{0x2202,0x0,0x0}}, {"pcy;",{0x43F,0x0,0x0}},
  {"percnt;",{0x25,0x0,0x0}}, {"period;",{0x2E,0x0,0x0}}, {"permil;",{0x2030,0x0,0x0}},
  {"perp;",{0x22A5,0x0,0x0}}, {"pertenk;",{0x2031,0x0,0x0}}, {"pfr;",{0x1D52D,0x0,0x0}},
  {"phi;",{0x3C6,0x0,0x0}}, {"phiv;",{0x3D5,0x0,0x0}}, {"phmmat;",{0x2133,0x0,0x0}},
  {"phone;",{0x260E,0x0,0x0}}, {"pi;",{0x3C0,0x0,0x0}}, {"pitchfork;",{0x22D4,0x0,0x0}},
  {"piv;",{0x3D6,0x0,0x0}}, {"planck;",{0x210F,0x0,0x0}}, {"planckh;",{0x210E,0x0,0x0}},
  {"plankv;",{0x210F,0x0,0x0}}, {"plus;",{0x2B,0x0,0x0}}, {"plusacir;",{0x2A23,0x0,0x0}},
  {"plusb;",{0x229E,0x0,0x0}}, {"pluscir;",{0x2A22,0x0,0x0}}, {"plusdo;",{0x2214,0x0,0x0}},
  {"plusdu;",{0x2A25,0x0,0x0}}, {"pluse;",{0x2A72,0x0,0x0}}, {"plusmn",{0xB1,0x0,0x0}},
  {"plusmn;",{0xB1,0x0,0x0}}, {"plussim;",{0x2A26,0x0,0x0}}, {"plustwo;",{0x2A27,0x0,0x0}},
  {"pm;",{0xB1,0x0,0x0}}, {"pointint;",{0x2A15,0x0,0x0}}, {"popf;",{0x1D561,0x0,0x0}},
  {"pound",{0xA3,0x0,0x0}}, {"pound;",{0xA3,0x0,0x0}}, {"pr;",{0x227A,0x0,0x0}},
  {"prE;",{0x2AB3,0x0,0x0}}, {"prap;",{0x2AB7,0x0,0x0}}, {"prcue;",{0x227C,0x0,0x0}},
  {"pre;",{0x2AAF,0x0,0x0}}, {"prec;",{0x227A,0x0,0x0}}, {"precapprox;",{0x2AB7,0x0,0x0}},
  {"preccurlyeq;",{0x227C,0x0,0x0}}, {"preceq;",{0x2AAF,0x0,0x0}}, {"precnapprox;",{0x2AB9,0x0,0x0}},
  {"precneqq;",{0x2AB5,0x0,0x0}}, {"precnsim;",{0x22E8,0x0,0x0}}, {"precsim;",{0x227E,0x0,0x0}},
  {"prime;",{0x2032,0x0,0x0}}, {"primes;",{0x2119,0x0,0x0}}, {"prnE;",{0x2AB5,0x0,0x0}},
  {"prnap;",{0x2AB9,0x0,0x0}}, {"prnsim;",{0x22E8,0x0,0x0}}, {"prod;",{0x220F,0x0,0x0}},
  {"profalar;",{0x232E,0x0,0x0}}, {"profline;",{0x2312,0x0,0x0}}, {"profsurf;",{0x2313,0x0,0x0}},
  {"prop;",{0x221D,0x0,0x0}}, {"propto;",{0x221D,0x0,0x0}}, {"prsim;",{0x227E,0x0,0x0}},
  {"prurel;",{0x22B0,0x0,0x0}}, {"pscr;",{0x1D4C5,0x0,0x0}}, {"psi;",{0x3C8,0x0,0x0}},
  {"puncsp;",{0x2008,0x0,0x0}}, {"qfr;",{0x1D52E,0x0,0x0}}, {"qint;",{0x2A0C,0x0,0x0}},
  {"qopf;",{0x1D562,0x0,0x0}}, {"qprime;",{0x2057,0x0,0x0}}, {"qscr;",{0x1D4C6,0x0,0x0}},
  {"quaternions;",{0x210D,0x0,0x0}}, {"quatint;",{0x2A16,0x0,0x0}}, {"quest;",{0x3F,0x0,0x0}},
  {"questeq;",{0x225F,0x0,0x0}}, {"quot",{0x22,0x0,0x0}}, {"quot;",{0x22,0x0,0x0}},
  {"rAarr;",{0x21DB,0x0,0x0}}, {"rArr;",{0x21D2,0x0,0x0}}, {"rAtail;",{0x291C,0x0,0x0}},
  {"rBarr;",{0x290F,0x0,0x0}}, {"rHar;",{0x2964,0x0,0x0}}, {"race;",{0x223D,0x331,0x0}},
  {"racute;",{0x155,0x0,0x0}}, {"radic;",{0x221A,0x0,0x0}}, {"raemptyv;",{0x29B3,0x0,0x0}},
  {"rang;",{0x27E9,0x0,0x0}}, {"rangd;",{0x2992,0x0,0x0}}, {"range;",{0x29A5,0x0,0x0}},
  {"rangle;",{0x27E9,0x0,0x0}}, {"raquo",{0xBB,0x0,0x0}}, {"raquo;",{0xBB,0x0,0x0}},
  {"rarr;",{0x2192,0x0,0x0}}, {"rarrap;",{0x2975,0x0,0x0}}, {"rarrb;",{0x21E5,0x0,0x0}},
  {"rarrbfs;",{0x2920,0x0,0x0}}, {"rarrc;",{0x2933,0x0,0x0}}, {"rarrfs;",{0x291E,0x0,0x0}},
  {"rarrhk;",{0x21AA,0x0,0x0}}, {"rarrlp;",{0x21AC,0x0,0x0}}, {"rarrpl;",{0x2945,0x0,0x0}},
  {"rarrsim;",{0x2974,0x0,0x0}}, {"rarrtl;",{0x21A3,0x0,0x0}}, {"rarrw;",{0x219D,0x0,0x0}},
  {"ratail;",{0x291A,0x0,0x0}}, {"ratio;",{0x2236,0x0,0x0}}, {"rationals;",{0x211A,0x0,0x0}},
  {"rbarr;",{0x290D,0x0,0x0}}, {"rbbrk;",{0x2773,0x0,0x0}}, {"rbrace;",{0x7D,0x0,0x0}},
  {"rbrack;",{0x5D,0x0,0x0}}, {"rbrke;",{0x298C,0x0,0x0}}, {"rbrksld;",{0x298E,0x0,0x0}},
  {"rbrkslu;",{0x2990,0x0,0x0}}, {"rcaron;",{0x159,0x0,0x0}}, {"rcedil;",{0x157,0x0,0x0}},
  {"rceil;",{0x2309,0x0,0x0}}, {"rcub;",{0x7D,0x0,0x0}}, {"rcy;",{0x440,0x0,0x0}},
  {"rdca;",{0x2937,0x0,0x0}}, {"rdldhar;",{0x2969,0x0,0x0}}, {"rdquo;",{0x201D,0x0,0x0}},
  {"rdquor;",{0x201D,0x0,0x0}}, {"rdsh;",{0x21B3,0x0,0x0}}, {"real;",{0x211C,0x0,0x0}},
  {"realine;",{0x211B,0x0,0x0}}, {"realpart;",{0x211C,0x0,0x0}}, {"reals;",{0x211D,0x0,0x0}},
  {"rect;",{0x25AD,0x0,0x0}}, {"reg",{0xAE,0x0,0x0}}, {"reg;",{0xAE,0x0,0x0}},
  {"rfisht;",{0x297D,0x0,0x0}}, {"rfloor;",{0x230B,0x0,0x0}}, {"rfr;",{0x1D52F,0x0,0x0}},
  {"rhard;",{0x21C1,0x0,0x0}}, {"rharu;",{0x21C0,0x0,0x0}}, {"rharul;",{0x296C,0x0,0x0}},
  {"rho;",{0x3C1,0x0,0x0}}, {"rhov;",{0x3F1,0x0,0x0}}, {"rightarrow;",{0x2192,0x0,0x0}},
  {"rightarrowtail;",{0x21A3,0x0,0x0}}, {"rightharpoondown;",{0x21C1,0x0,0x0}}, {"rightharpoonup;",{0x21C0,0x0,0x0}},
  {"rightleftarrows;",{0x21C4,0x0,0x0}}, {"rightleftharpoons;",{0x21CC,0x0,0x0}}, {"rightrightarrows;",{0x21C9,0x0,0x0}},
  {"rightsquigarrow;",{0x219D,0x0,0x0}}, {"rightthreetimes;",{0x22CC,0x0,0x0}}, {"ring;",{0x2DA,0x0,0x0}},
  {"risingdotseq;",{0x2253,0x0,0x0}}, {"rlarr;",{0x21C4,0x0,0x0}}, {"rlhar;",{0x21CC,0x0,0x0}},
  {"rlm;",{0x200F,0x0,0x0}}, {"rmoust;",{0x23B1,0x0,0x0}}, {"rmoustache;",{0x23B1,0x0,0x0}},
  {"rnmid;",{0x2AEE,0x0,0x0}}, {"roang;",{0x27ED,0x0,0x0}}, {"roarr;",{0x21FE,0x0,0x0}},
  {"robrk;",{0x27E7,0x0,0x0}}, {"ropar;",{0x2986,0x0,0x0}}, {"ropf;",{0x1D563,0x0,0x0}},
  {"roplus;",{0x2A2E,0x0,0x0}}, {"rotimes;",{0x2A35,0x0,0x0}}, {"rpar;",{0x29,0x0,0x0}},
  {"rpargt;",{0x2994,0x0,0x0}}, {"rppolint;",{0x2A12,0x0,0x0}}, {"rrarr;",{0x21C9,0x0,0x0}},
  {"rsaquo;",{0x203A,0x0,0x0}}, {"rscr;",{0x1D4C7,0x0,0x0}}, {"rsh;",{0x21B1,0x0,0x0}},
  {"rsqb;",{0x5D,0x0,0x0}}, {"rsquo;",{0x2019,0x0,0x0}}, {"rsquor;",{0x2019,0x0,0x0}},
  {"rthree;",{0x22CC,0x0,0x0}}, {"rtimes;",{0x22CA,0x0,0x0}}, {"rtri;",{0x25B9,0x0,0x0}},
  {"rtrie;",{0x22B5,0x0,0x0}}, {"rtrif;",{0x25B8,0x0,0x0}}, {"rtriltri;",{0x29CE,0x0,0x0}},
  {"ruluhar;",{0x2968,0x0,0x0}}, {"rx;",{0x211E,0x0,0x0}}, {"sacute;",{0x15B,0x0,0x0}},
  {"sbquo;",{0x201A,0x0,0x0}}, {"sc;",{0x227B,0x0,0x0}}, {"scE;",{0x2AB4,0x0,0x0}},
  {"scap;",{0x2AB8,0x0,0x0}}, {"scaron;",{0x161,0x0,0x0}}, {"sccue;",{0x227D,0x0,0x0}},
  {"sce;",{0x2AB0,0x0,0x0}}, {"scedil;",{0x15F,0x0,0x0}}, {"scirc;",{0x15D,0x0,0x0}},
  {"scnE;",{0x2AB6,0x0,0x0}}, {"scnap;",{0x2ABA,0x0,0x0}}, {"scnsim;",{0x22E9,0x0,0x0}},
  {"scpolint;",{0x2A13,0x0,0x0}}, {"scsim;",{0x227F,0x0,0x0}}, {"scy;",{0x441,0x0,0x0}},
  {"sdot;",{0x22C5,0x0,0x0}}, {"sdotb;",{0x22A1,0x0,0x0}}, {"sdote;",{0x2A66,0x0,0x0}},
  {"seArr;",{0x21D8,0x0,0x0}}, {"searhk;",{0x2925,0x0,0x0}}, {"searr;",{0x2198,0x0,0x0}},
  {"searrow;",{0x2198,0x0,0x0}}, {"sect",{0xA7,0x0,0x0}}, {"sect;",{0xA7,0x0,0x0}},
  {"semi;",{0x3B,0x0,0x0}}, {"seswar;",{0x2929,0x0,0x0}}, {"setminus;",{0x2216,0x0,0x0}},
  {"setmn;",{0x2216,0x0,0x0}}, {"sext;",{0x2736,0x0,0x0}}, {"sfr;",{0x1D530,0x0,0x0}},
  {"sfrown;",{0x2322,0x0,0x0}}, {"sharp;",{0x266F,0x0,0x0}}, {"shchcy;",{0x449,0x0,0x0}},
  {"shcy;",{0x448,0x0,0x0}}, {"shortmid;",{0x2223,0x0,0x0}}, {"shortparallel;",{0x2225,0x0,0x0}},
  {"shy",{0xAD,0x0,0x0}}, {"shy;",{0xAD,0x0,0x0}}, {"sigma;",{0x3C3,0x0,0x0}},
  {"sigmaf;",{0x3C2,0x0,0x0}}, {"sigmav;",{0x3C2,0x0,0x0}}, {"sim;",{0x223C,0x0,0x0}},
  {"simdot;",{0x2A6A,0x0,0x0}}, {"sime;",{0x2243,0x0,0x0}}, {"simeq;",{0x2243,0x0,0x0}},
  {"simg;",{0x2A9E,0x0,0x0}}, {"simgE;",{0x2AA0,0x0,0x0}}, {"siml;",{0x2A9D,0x0,0x0}},
  {"simlE;",{0x2A9F,0x0,0x0}}, {"simne;",{0x2246,0x0,0x0}}, {"simplus;",{0x2A24,0x0,0x0}},
  {"simrarr;",{0x2972,0x0,0x0}}, {"slarr;",{0x2190,0x0,0x0}}, {"smallsetminus;",{0x2216,0x0,0x0}},
  {"smashp;",{0x2A33,0x0,0x0}}, {"smeparsl;",{0x29E4,0x0,0x0}}, {"smid;",{0x2223,0x0,0x0}},
  {"smile;",{0x2323,0x0,0x0}}, {"smt;",{0x2AAA,0x0,0x0}}, {"smte;",{0x2AAC,0x0,0x0}},
  {"smtes;",{0x2AAC,0xFE00,0x0}}, {"softcy;",{0x44C,0x0,0x0}}, {"sol;",{0x2F,0x0,0x0}},
  {"solb;",{0x29C4,0x0,0x0}}, {"solbar;",{0x233F,0x0,0x0}}, {"sopf;",{0x1D564,0x0,0x0}},
  {"spades;",{0x2660,0x0,0x0}}, {"spadesuit;",{0x2660,0x0,0x0}}, {"spar;",{0x2225,0x0,0x0}},
  {"sqcap;",{0x2293,0x0,0x0}}, {"sqcaps;",{0x2293,0xFE00,0x0}}, {"sqcup;",{0x2294,0x0,0x0}},
  {"sqcups;",{0x2294,0xFE00,0x0}}, {"sqsub;",{0x228F,0x0,0x0}}, {"sqsube;",{0x2291,0x0,0x0}},
  {"sqsubset;",{0x228F,0x0,0x0}}, {"sqsubseteq;",{0x2291,0x0,0x0}}, {"sqsup;",{0x2290,0x0,0x0}},
  {"sqsupe;",{0x2292,0x0,0x0}}, {"sqsupset;",{0x2290,0x0,0x0}}, {"sqsupseteq;",{0x2292,0x0,0x0}},
  {"squ;",{0x25A1,0x0,0x0}}, {"square;",{0x25A1,0x0,0x0}}, {"squarf;",{0x25AA,0x0,0x0}},
  {"squf;",{0x25AA,0x0,0x0}}, {"srarr;",{0x2192,0x0,0x0}}, {"sscr;",{0x1D4C8,0x0,0x0}},
  {"ssetmn;",{0x2216,0x0,0x0}}, {"ssmile;",{0x2323,0x0,0x0}}, {"sstarf;",{0x22C6,0x0,0x0}},
  {"star;",{0x2606,0x0,0x0}}, {"starf;",{0x2605,0x0,0x0}}, {"straightepsilon;",{0x3F5,0x0,0x0}},
  {"straightphi;",{0x3D5,0x0,0x0}}, {"strns;",{0xAF,0x0,0x0}}, {"sub;",{0x2282,0x0,0x0}},
  {"subE;",{0x2AC5,0x0,0x0}}, {"subdot;",{0x2ABD,0x0,0x0}}, {"sube;",{0x2286,0x0,0x0}},
  {"subedot;",{0x2AC3,0x0,0x0}}, {"submult;",{0x2AC1,0x0,0x0}}, {"subnE;",{0x2ACB,0x0,0x0}},
  {"subne;",{0x228A,0x0,0x0}}, {"subplus;",{0x2ABF,0x0,0x0}}, {"subrarr;",{0x2979,0x0,0x0}},
  {"subset;",{0x2282,0x0,0x0}}, {"subseteq;",{0x2286,0x0,0x0}}, {"subseteqq;",{0x2AC5,0x0,0x0}},
  {"subsetneq;",{0x228A,0x0,0x0}}, {"subsetneqq;",{0x2ACB,0x0,0x0}}, {"subsim;",{0x2AC7,0x0,0x0}},
  {"subsub;",{0x2AD5,0x0,0x0}}, {"subsup;",{0x2AD3,0x0,0x0}}, {"succ;",{0x227B,0x0,0x0}},
  {"succapprox;",{0x2AB8,0x0,0x0}}, {"succcurlyeq;",{0x227D,0x0,0x0}}, {"succeq;",{0x2AB0,0x0,0x0}},
  {"succnapprox;",{0x2ABA,0x0,0x0}}, {"succneqq;",{0x2AB6,0x0,0x0}}, {"succnsim;",{0x22E9,0x0,0x0}},
  {"succsim;",{0x227F,0x0,0x0}}, {"sum;",{0x2211,0x0,0x0}}, {"sung;",{0x266A,0x0,0x0}},
  {"sup1",{0xB9,0x0,0x0}}, {"sup1;",{0xB9,0x0,0x0}}, {"sup2",{0xB2,0x0,0x0}},
  {"sup2;",{0xB2,0x0,0x0}}, {"sup3",{0xB3,0x0,0x0}}, {"sup3;",{0xB3,0x0,0x0}},
  {"sup;",{0x2283,0x0,0x0}}, {"supE;",{0x2AC6,0x0,0x0}}, {"supdot;",{0x2ABE,0x0,0x0}},
  {"supdsub;",{0x2AD8,0x0,0x0}}, {"supe;",{0x2287,0x0,0x0}}, {"supedot;",{0x2AC4,0x0,0x0}},
  {"suphsol;",{0x27C9,0x0,0x0}}, {"suphsub;",{0x2AD7,0x0,0x0}}, {"suplarr;",{0x297B,0x0,0x0}},
  {"supmult;",{0x2AC2,0x0,0x0}}, {"supnE;",{0x2ACC,0x0,0x0}}, {"supne;",{0x228B,0x0,0x0}},
  {"supplus;",{0x2AC0,0x0,0x0}}, {"supset;",{0x2283,0x0,0x0}}, {"supseteq;",{0x2287,0x0,0x0}},
  {"supseteqq;",{0x2AC6,0x0,0x0}}, {"supsetneq;",{0x228B,0x0,0x0}}, {"supsetneqq;",{0x2ACC,0x0,0x0}},
  {"supsim;",{0x2AC8,0x0,0x0}}, {"supsub;",{0x2AD4,0x0,0x0}}, {"supsup;",{0x2AD6,0x0,0x0}},
  {"swArr;",{0x21D9,0x0,0x0}}, {"swarhk;",{0x2926,0x0,0x0}}, {"swarr;",{0x2199,0x0,0x0}},
  {"swarrow;",{0x2199,0x0,0x0}}, {"swnwar;",{0x292A,0x0,0x0}}, {"szlig",{0xDF,0x0,0x0}},
  {"szlig;",{0xDF,0x0,0x0}}, {"target;",{0x2316,0x0,0x0}}, {"tau;",{0x3C4,0x0,0x0}},
  {"tbrk;",{0x23B4,0x0,0x0}}, {"tcaron;",{0x165,0x0,0x0}}, {"tcedil;",{0x163,0x0,0x0}},
  {"tcy;",{0x442,0x0,0x0}}, {"tdot;",{0x20DB,0x0,0x0}}, {"telrec;",{0x2315,0x0,0x0}},
  {"tfr;",{0x1D531,0x0,0x0}}, {"there4;",{0x2234,0x0,0x0}}, {"therefore;",{0x2234,0x0,0x0}},
  {"theta;",{0x3B8,0x0,0x0}}, {"thetasym;",{0x3D1,0x0,0x0}}, {"thetav;",{0x3D1,0x0,0x0}},
  {"thickapprox;",{0x2248,0x0,0x0}}, {"thicksim;",{0x223C,0x0,0x0}}, {"thinsp;",{0x2009,0x0,0x0}},
  {"thkap;",{0x2248,0x0,0x0}}, {"thksim;",{0x223C,0x0,0x0}}, {"thorn",{0xFE,0x0,0x0}},
  {"thorn;",{0xFE,0x0,0x0}}, {"tilde;",{0x2DC,0x0,0x0}}, {"times",{0xD7,0x0,0x0}},
  {"times;",{0xD7,0x0,0x0}}, {"timesb;",{0x22A0,0x0,0x0}}, {"timesbar;",{0x2A31,0x0,0x0}},
  {"timesd;",{0x2A30,0x0,0x0}}, {"tint;",{0x222D,0x0,0x0}}, {"toea;",{0x2928,0x0,0x0}},
  {"top;",{0x22A4,0x0,0x0}}, {"topbot;",{0x2336,0x0,0x0}}, {"topcir;",{0x2AF1,0x0,0x0}},
  {"topf;",{0x1D565,0x0,0x0}}, {"topfork;",{0x2ADA,0x0,0x0}}, {"tosa;",{0x2929,0x0,0x0}},
  {"tprime;",{0x2034,0x0,0x0}}, {"trade;",{0x2122,0x0,0x0}}, {"triangle;",{0x25B5,0x0,0x0}},
  {"triangledown;",{0x25BF,0x0,0x0}}, {"triangleleft;",{0x25C3,0x0,0x0}}, {"trianglelefteq;",{0x22B4,0x0,0x0}},
  {"triangleq;",{0x225C,0x0,0x0}}, {"triangleright;",{0x25B9,0x0,0x0}}, {"trianglerighteq;",{0x22B5,0x0,0x0}},
  {"tridot;",{0x25EC,0x0,0x0}}, {"trie;",{0x225C,0x0,0x0}}, {"triminus;",{0x2A3A,0x0,0x0}},
  {"triplus;",{0x2A39,0x0,0x0}}, {"trisb;",{0x29CD,0x0,0x0}}, {"tritime;",{0x2A3B,0x0,0x0}},
  {"trpezium;",{0x23E2,0x0,0x0}}, {"tscr;",{0x1D4C9,0x0,0x0}}, {"tscy;",{0x446,0x0,0x0}},
  {"tshcy;",{0x45B,0x0,0x0}}, {"tstrok;",{0x167,0x0,0x0}}, {"twixt;",{0x226C,0x0,0x0}},
  {"twoheadleftarrow;",{0x219E,0x0,0x0}}, {"twoheadrightarrow;",{0x21A0,0x0,0x0}}, {"uArr;",{0x21D1,0x0,0x0}},
  {"uHar;",{0x2963,0x0,0x0}}, {"uacute",{0xFA,0x0,0x0}}, {"uacute;",{0xFA,0x0,0x0}},
  {"uarr;",{0x2191,0x0,0x0}}, {"ubrcy;",{0x45E,0x0,0x0}}, {"ubreve;",{0x16D,0x0,0x0}},
  {"ucirc",{0xFB,0x0,0x0}}, {"ucirc;",{0xFB,0x0,0x0}}, {"ucy;",{0x443,0x0,0x0}},
  {"udarr;",{0x21C5,0x0,0x0}}, {"udblac;",{0x171,0x0,0x0}}, {"udhar;",{0x296E,0x0,0x0}},
  {"ufisht;",{0x297E,0x0,0x0}}, {"ufr;",{0x1D532,0x0,0x0}}, {"ugrave",{0xF9,0x0,0x0}},
  {"ugrave;",{0xF9,0x0,0x0}}, {"uharl;",{0x21BF,0x0,0x0}}, {"uharr;",{0x21BE,0x0,0x0}},
  {"uhblk;",{0x2580,0x0,0x0}}, {"ulcorn;",{0x231C,0x0,0x0}}, {"ulcorner;",{0x231C,0x0,0x0}},
  {"ulcrop;",{0x230F,0x0,0x0}}, {"ultri;",{0x25F8,0x0,0x0}}, {"umacr;",{0x16B,0x0,0x0}},
  {"uml",{0xA8,0x0,0x0}}, {"uml;",{0xA8,0x0,0x0}}, {"uogon;",{0x173,0x0,0x0}},
  {"uopf;",{0x1D566,0x0,0x0}}, {"uparrow;",{0x2191,0x0,0x0}}, {"updownarrow;",{0x2195,0x0,0x0}},
  {"upharpoonleft;",{0x21BF,0x0,0x0}}, {"upharpoonright;",{0x21BE,0x0,0x0}}, {"uplus;",{0x228E,0x0,0x0}},
  {"upsi;",{0x3C5,0x0,0x0}}, {"upsih;",{0x3D2,0x0,0x0}}, {"upsilon;",{0x3C5,0x0,0x0}},
  {"upuparrows;",{0x21C8,0x0,0x0}}, {"urcorn;",{0x231D,0x0,0x0}}, {"urcorner;",{0x231D,0x0,0x0}},
  {"urcrop;",{0x230E,0x0,0x0}}, {"uring;",{0x16F,0x0,0x0}}, {"urtri;",{0x25F9,0x0,0x0}},
  {"uscr;",{0x1D4CA,0x0,0x0}}, {"utdot;",{0x22F0,0x0,0x0}}, {"utilde;",{0x169,0x0,0x0}},
  {"utri;",{0x25B5,0x0,0x0}}, {"utrif;",{0x25B4,0x0,0x0}}, {"uuarr;",{0x21C8,0x0,0x0}},
  {"uuml",{0xFC,0x0,0x0}}, {"uuml;",{0xFC,0x0,0x0}}, {"uwangle;",{0x29A7,0x0,0x0}},
  {"vArr;",{0x21D5,0x0,0x0}}, {"vBar;",{0x2AE8,0x0,0x0}}, {"vBarv;",{0x2AE9,0x0,0x0}},
  {"vDash;",{0x22A8,0x0,0x0}}, {"vangrt;",{0x299C,0x0,0x0}}, {"varepsilon;",{0x3F5,0x0,0x0}},
  {"varkappa;",{0x3F0,0x0,0x0}}, {"varnothing;",{0x2205,0x0,0x0}}, {"varphi;",{0x3D5,0x0,0x0}},
  {"varpi;",{0x3D6,0x0,0x0}}, {"varpropto;",{0x221D,0x0,0x0}}, {"varr;",{0x2195,0x0,0x0}},
  {"varrho;",{0x3F1,0x0,0x0}}, {"varsigma;",{0x3C2,0x0,0x0}}, {"varsubsetneq;",{0x228A,0xFE00,0x0}},
  {"varsubsetneqq;",{0x2ACB,0xFE00,0x0}}, {"varsupsetneq;",{0x228B,0xFE00,0x0}}, {"varsupsetneqq;",{0x2ACC,0xFE00,0x0}},
  {"vartheta;",{0x3D1,0x0,0x0}}, {"vartriangleleft;",{0x22B2,0x0,0x0}}, {"vartriangleright;",{0x22B3,0x0,0x0}},
  {"vcy;",{0x432,0x0,0x0}}, {"vdash;",{0x22A2,0x0,0x0}}, {"vee;",{0x2228,0x0,0x0}},
  {"veebar;",{0x22BB,0x0,0x0}}, {"veeeq;",{0x225A,0x0,0x0}}, {"vellip;",{0x22EE,0x0,0x0}},
  {"verbar;",{0x7C,0x0,0x0}}, {"vert;",{0x7C,0x0,0x0}}, {"vfr;",{0x1D533,0x0,0x0}},
  {"vltri;",{0x22B2,0x0,0x0}}, {"vnsub;",{0x2282,0x20D2,0x0}}, {"vnsup;",{0x2283,0x20D2,0x0}},
  {"vopf;",{0x1D567,0x0,0x0}}, {"vprop;",{0x221D,0x0,0x0}}, {"vrtri;",{0x22B3,0x0,0x0}},
  {"vscr;",{0x1D4CB,0x0,0x0}}, {"vsubnE;",{0x2ACB,0xFE00,0x0}}, {"vsubne;",{0x228A,0xFE00,0x0}},
  {"vsupnE;",{0x2ACC,0xFE00,0x0}}, {"vsupne;",{0x228B,0xFE00,0x0}}, {"vzigzag;",{0x299A,0x0,0x0}},
  {"wcirc;",{0x175,0x0,0x0}}, {"wedbar;",{0x2A5F,0x0,0x0}}, {"wedge;",{0x2227,0x0,0x0}},
  {"wedgeq;",{0x2259,0x0,0x0}}, {"weierp;",{0x2118,0x0,0x0}}, {"wfr;",{0x1D534,0x0,0x0}},
  {"wopf;",{0x1D568,0x0,0x0}}, {"wp;",{0x2118,0x0,0x0}}, {"wr;",{0x2240,0x0,0x0}},
  {"wreath;",{0x2240,0x0,0x0}}, {"wscr;",{0x1D4CC,0x0,0x0}}, {"xcap;",{0x22C2,0x0,0x0}},
  {"xcirc;",{0x25EF,0x0,0x0}}, {"xcup;",{0x22C3,0x0,0x0}}, {"xdtri;",{0x25BD,0x0,0x0}},
  {"xfr;",{0x1D535,0x0,0x0}}, {"xhArr;",{0x27FA,0x0,0x0}}, {"xharr;",{0x27F7,0x0,0x0}},
  {"xi;",{0x3BE,0x0,0x0}}, {"xlArr;",{0x27F8,0x0,0x0}}, {"xlarr;",{0x27F5,0x0,0x0}},
  {"xmap;",{0x27FC,0x0,0x0}}, {"xnis;",{0x22FB,0x0,0x0}}, {"xodot;",{0x2A00,0x0,0x0}},
  {"xopf;",{0x1D569,0x0,0x0}}, {"xoplus;",{0x2A01,0x0,0x0}}, {"xotime;",{0x2A02,0x0,0x0}},
  {"xrArr;",{0x27F9,0x0,0x0}}, {"xrarr;",{0x27F6,0x0,0x0}}, {"xscr;",{0x1D4CD,0x0,0x0}},
  {"xsqcup;",{0x2A06,0x0,0x0}}, {"xuplus;",{0x2A04,0x0,0x0}}, {"xutri;",{0x25B3,0x0,0x0}},
  {"xvee;",{0x22C1,0x0,0x0}}, {"xwedge;",{0x22C0,0x0,0x0}}, {"yacute",{0xFD,0x0,0x0}},
  {"yacute;",{0xFD,0x0,0x0}}, {"yacy;",{0x44F,0x0,0x0}}, {"ycirc;",{0x177,0x0,0x0}},
  {"ycy;",{0x44B,0x0,0x0}}, {"yen",{0xA5,0x0,0x0}}, {"yen;",{0xA5,0x0,0x0}},
  {"yfr;",{0x1D536,0x0,0x0}}, {"yicy;",{0x457,0x0,0x0}}, {"yopf;",{0x1D56A,0x0,0x0}},
  {"yscr;",{0x1D4CE,0x0,0x0}}, {"yucy;",{0x44E,0x0,0x0}}, {"yuml",{0xFF,0x0,0x0}},
  {"yuml;",{0xFF,0x0,0x0}}, {"zacute;",{0x17A,0x0,0x0}}, {"zcaron;",{0x17E,0x0,0x0}},
  {"zcy;",{0x437,0x0,0x0}}, {"zdot;",{0x17C,0x0,0x0}}, {"zeetrf;",{0x2128,0x0,0x0}},
  {"zeta;",{0x3B6,0x0,0x0}}, {"zfr;",{0x1D537,0x0,0x0}}, {"zhcy;",{0x436,0x0,0x0}},
  {"zigrarr;",{0x21DD,0x0,0x0}}, {"zopf;",{0x1D56B,0x0,0x0}}, {"zscr;",{0x1D4CF,0x0,0x0}},
  {"zwj;",{0x200D,0x0,0x0}}, {"zwnj;",{0x200C,0x0,0x0}},
};

/* ftfy's extra all-caps entity spellings -> str.upper() of the value */
static const sdx__uentity sdx__ftfy_upper_entities[1376] = {
  {"AACUTE;",{0xC1,0x0,0x0}}, {"ABREVE;",{0x102,0x0,0x0}}, {"AC;",{0x223E,0x0,0x0}},
  {"ACD;",{0x223F,0x0,0x0}}, {"ACIRC;",{0xC2,0x0,0x0}}, {"ACUTE;",{0xB4,0x0,0x0}},
  {"ACY;",{0x410,0x0,0x0}}, {"AELIG;",{0xC6,0x0,0x0}}, {"AF;",{0x2061,0x0,0x0}},
  {"AFR;",{0x1D51E,0x0,0x0}}, {"AGRAVE;",{0xC0,0x0,0x0}}, {"ALEFSYM;",{0x2135,0x0,0x0}},
  {"ALEPH;",{0x2135,0x0,0x0}}, {"ALPHA;",{0x391,0x0,0x0}}, {"AMACR;",{0x100,0x0,0x0}},
  {"AMALG;",{0x2A3F,0x0,0x0}}, {"AND;",{0x2227,0x0,0x0}}, {"ANDAND;",{0x2A55,0x0,0x0}},
  {"ANDD;",{0x2A5C,0x0,0x0}}, {"ANDSLOPE;",{0x2A58,0x0,0x0}}, {"ANDV;",{0x2A5A,0x0,0x0}},
  {"ANG;",{0x2220,0x0,0x0}}, {"ANGE;",{0x29A4,0x0,0x0}}, {"ANGLE;",{0x2220,0x0,0x0}},
  {"ANGMSD;",{0x2221,0x0,0x0}}, {"ANGMSDAA;",{0x29A8,0x0,0x0}}, {"ANGMSDAB;",{0x29A9,0x0,0x0}},
  {"ANGMSDAC;",{0x29AA,0x0,0x0}}, {"ANGMSDAD;",{0x29AB,0x0,0x0}}, {"ANGMSDAE;",{0x29AC,0x0,0x0}},
  {"ANGMSDAF;",{0x29AD,0x0,0x0}}, {"ANGMSDAG;",{0x29AE,0x0,0x0}}, {"ANGMSDAH;",{0x29AF,0x0,0x0}},
  {"ANGRT;",{0x221F,0x0,0x0}}, {"ANGRTVB;",{0x22BE,0x0,0x0}}, {"ANGRTVBD;",{0x299D,0x0,0x0}},
  {"ANGSPH;",{0x2222,0x0,0x0}}, {"ANGST;",{0xC5,0x0,0x0}}, {"ANGZARR;",{0x237C,0x0,0x0}},
  {"AOGON;",{0x104,0x0,0x0}}, {"AOPF;",{0x1D552,0x0,0x0}}, {"AP;",{0x2248,0x0,0x0}},
  {"APACIR;",{0x2A6F,0x0,0x0}}, {"APE;",{0x224A,0x0,0x0}}, {"APID;",{0x224B,0x0,0x0}},
  {"APOS;",{0x27,0x0,0x0}}, {"APPROX;",{0x2248,0x0,0x0}}, {"APPROXEQ;",{0x224A,0x0,0x0}},
  {"ARING;",{0xC5,0x0,0x0}}, {"ASCR;",{0x1D4B6,0x0,0x0}}, {"AST;",{0x2A,0x0,0x0}},
  {"ASYMP;",{0x2248,0x0,0x0}}, {"ASYMPEQ;",{0x224D,0x0,0x0}}, {"ATILDE;",{0xC3,0x0,0x0}},
  {"AUML;",{0xC4,0x0,0x0}}, {"AWCONINT;",{0x2233,0x0,0x0}}, {"AWINT;",{0x2A11,0x0,0x0}},
  {"BACKCONG;",{0x224C,0x0,0x0}}, {"BACKEPSILON;",{0x3F6,0x0,0x0}}, {"BACKPRIME;",{0x2035,0x0,0x0}},
  {"BACKSIM;",{0x223D,0x0,0x0}}, {"BACKSIMEQ;",{0x22CD,0x0,0x0}}, {"BARVEE;",{0x22BD,0x0,0x0}},
  {"BARWED;",{0x2305,0x0,0x0}}, {"BARWEDGE;",{0x2305,0x0,0x0}}, {"BBRK;",{0x23B5,0x0,0x0}},
  {"BBRKTBRK;",{0x23B6,0x0,0x0}}, {"BCONG;",{0x224C,0x0,0x0}}, {"BCY;",{0x411,0x0,0x0}},
  {"BDQUO;",{0x201E,0x0,0x0}}, {"BECAUS;",{0x2235,0x0,0x0}}, {"BECAUSE;",{0x2235,0x0,0x0}},
  {"BEMPTYV;",{0x29B0,0x0,0x0}}, {"BEPSI;",{0x3F6,0x0,0x0}}, {"BERNOU;",{0x212C,0x0,0x0}},
  {"BETA;",{0x392,0x0,0x0}}, {"BETH;",{0x2136,0x0,0x0}}, {"BETWEEN;",{0x226C,0x0,0x0}},
  {"BFR;",{0x1D51F,0x0,0x0}}, {"BIGCAP;",{0x22C2,0x0,0x0}}, {"BIGCIRC;",{0x25EF,0x0,0x0}},
  {"BIGCUP;",{0x22C3,0x0,0x0}}, {"BIGODOT;",{0x2A00,0x0,0x0}}, {"BIGOPLUS;",{0x2A01,0x0,0x0}},
  {"BIGOTIMES;",{0x2A02,0x0,0x0}}, {"BIGSQCUP;",{0x2A06,0x0,0x0}}, {"BIGSTAR;",{0x2605,0x0,0x0}},
  {"BIGTRIANGLEDOWN;",{0x25BD,0x0,0x0}}, {"BIGTRIANGLEUP;",{0x25B3,0x0,0x0}}, {"BIGUPLUS;",{0x2A04,0x0,0x0}},
  {"BIGVEE;",{0x22C1,0x0,0x0}}, {"BIGWEDGE;",{0x22C0,0x0,0x0}}, {"BKAROW;",{0x290D,0x0,0x0}},
  {"BLACKLOZENGE;",{0x29EB,0x0,0x0}}, {"BLACKSQUARE;",{0x25AA,0x0,0x0}}, {"BLACKTRIANGLE;",{0x25B4,0x0,0x0}},
  {"BLACKTRIANGLEDOWN;",{0x25BE,0x0,0x0}}, {"BLACKTRIANGLELEFT;",{0x25C2,0x0,0x0}}, {"BLACKTRIANGLERIGHT;",{0x25B8,0x0,0x0}},
  {"BLANK;",{0x2423,0x0,0x0}}, {"BLK12;",{0x2592,0x0,0x0}}, {"BLK14;",{0x2591,0x0,0x0}},
  {"BLK34;",{0x2593,0x0,0x0}}, {"BLOCK;",{0x2588,0x0,0x0}}, {"BNE;",{0x3D,0x20E5,0x0}},
  {"BNEQUIV;",{0x2261,0x20E5,0x0}}, {"BNOT;",{0x2310,0x0,0x0}}, {"BOPF;",{0x1D553,0x0,0x0}},
  {"BOT;",{0x22A5,0x0,0x0}}, {"BOTTOM;",{0x22A5,0x0,0x0}}, {"BOWTIE;",{0x22C8,0x0,0x0}},
  {"BOXBOX;",{0x29C9,0x0,0x0}}, {"BOXDL;",{0x2510,0x0,0x0}}, {"BOXDR;",{0x250C,0x0,0x0}},
  {"BOXH;",{0x2500,0x0,0x0}}, {"BOXHD;",{0x252C,0x0,0x0}}, {"BOXHU;",{0x2534,0x0,0x0}},
  {"BOXMINUS;",{0x229F,0x0,0x0}}, {"BOXPLUS;",{0x229E,0x0,0x0}}, {"BOXTIMES;",{0x22A0,0x0,0x0}},
  {"BOXUL;",{0x2518,0x0,0x0}}, {"BOXUR;",{0x2514,0x0,0x0}}, {"BOXV;",{0x2502,0x0,0x0}},
  {"BOXVH;",{0x253C,0x0,0x0}}, {"BOXVL;",{0x2524,0x0,0x0}}, {"BOXVR;",{0x251C,0x0,0x0}},
  {"BPRIME;",{0x2035,0x0,0x0}}, {"BREVE;",{0x2D8,0x0,0x0}}, {"BRVBAR;",{0xA6,0x0,0x0}},
  {"BSCR;",{0x1D4B7,0x0,0x0}}, {"BSEMI;",{0x204F,0x0,0x0}}, {"BSIM;",{0x223D,0x0,0x0}},
  {"BSIME;",{0x22CD,0x0,0x0}}, {"BSOL;",{0x5C,0x0,0x0}}, {"BSOLB;",{0x29C5,0x0,0x0}},
  {"BSOLHSUB;",{0x27C8,0x0,0x0}}, {"BULL;",{0x2022,0x0,0x0}}, {"BULLET;",{0x2022,0x0,0x0}},
  {"BUMP;",{0x224E,0x0,0x0}}, {"BUMPE;",{0x224F,0x0,0x0}}, {"BUMPEQ;",{0x224F,0x0,0x0}},
  {"CACUTE;",{0x106,0x0,0x0}}, {"CAP;",{0x2229,0x0,0x0}}, {"CAPAND;",{0x2A44,0x0,0x0}},
  {"CAPBRCUP;",{0x2A49,0x0,0x0}}, {"CAPCAP;",{0x2A4B,0x0,0x0}}, {"CAPCUP;",{0x2A47,0x0,0x0}},
  {"CAPDOT;",{0x2A40,0x0,0x0}}, {"CAPS;",{0x2229,0xFE00,0x0}}, {"CARET;",{0x2041,0x0,0x0}},
  {"CARON;",{0x2C7,0x0,0x0}}, {"CCAPS;",{0x2A4D,0x0,0x0}}, {"CCARON;",{0x10C,0x0,0x0}},
  {"CCEDIL;",{0xC7,0x0,0x0}}, {"CCIRC;",{0x108,0x0,0x0}}, {"CCUPS;",{0x2A4C,0x0,0x0}},
  {"CCUPSSM;",{0x2A50,0x0,0x0}}, {"CDOT;",{0x10A,0x0,0x0}}, {"CEDIL;",{0xB8,0x0,0x0}},
  {"CEMPTYV;",{0x29B2,0x0,0x0}}, {"CENT;",{0xA2,0x0,0x0}}, {"CENTERDOT;",{0xB7,0x0,0x0}},
  {"CFR;",{0x1D520,0x0,0x0}}, {"CHCY;",{0x427,0x0,0x0}}, {"CHECK;",{0x2713,0x0,0x0}},
  {"CHECKMARK;",{0x2713,0x0,0x0}}, {"CHI;",{0x3A7,0x0,0x0}}, {"CIR;",{0x25CB,0x0,0x0}},
  {"CIRC;",{0x2C6,0x0,0x0}}, {"CIRCEQ;",{0x2257,0x0,0x0}}, {"CIRCLEARROWLEFT;",{0x21BA,0x0,0x0}},
  {"CIRCLEARROWRIGHT;",{0x21BB,0x0,0x0}}, {"CIRCLEDAST;",{0x229B,0x0,0x0}}, {"CIRCLEDCIRC;",{0x229A,0x0,0x0}},
  {"CIRCLEDDASH;",{0x229D,0x0,0x0}}, {"CIRE;",{0x2257,0x0,0x0}}, {"CIRFNINT;",{0x2A10,0x0,0x0}},
  {"CIRMID;",{0x2AEF,0x0,0x0}}, {"CIRSCIR;",{0x29C2,0x0,0x0}}, {"CLUBS;",{0x2663,0x0,0x0}},
  {"CLUBSUIT;",{0x2663,0x0,0x0}}, {"COLON;",{0x3A,0x0,0x0}}, {"COLONE;",{0x2254,0x0,0x0}},
  {"COLONEQ;",{0x2254,0x0,0x0}}, {"COMMA;",{0x2C,0x0,0x0}}, {"COMMAT;",{0x40,0x0,0x0}},
  {"COMP;",{0x2201,0x0,0x0}}, {"COMPFN;",{0x2218,0x0,0x0}}, {"COMPLEMENT;",{0x2201,0x0,0x0}},
  {"COMPLEXES;",{0x2102,0x0,0x0}}, {"CONG;",{0x2245,0x0,0x0}}, {"CONGDOT;",{0x2A6D,0x0,0x0}},
  {"CONINT;",{0x222E,0x0,0x0}}, {"COPF;",{0x1D554,0x0,0x0}}, {"COPROD;",{0x2210,0x0,0x0}},
  {"CRARR;",{0x21B5,0x0,0x0}}, {"CROSS;",{0x2717,0x0,0x0}}, {"CSCR;",{0x1D4B8,0x0,0x0}},
  {"CSUB;",{0x2ACF,0x0,0x0}}, {"CSUBE;",{0x2AD1,0x0,0x0}}, {"CSUP;",{0x2AD0,0x0,0x0}},
  {"CSUPE;",{0x2AD2,0x0,0x0}}, {"CTDOT;",{0x22EF,0x0,0x0}}, {"CUDARRL;",{0x2938,0x0,0x0}},
  {"CUDARRR;",{0x2935,0x0,0x0}}, {"CUEPR;",{0x22DE,0x0,0x0}}, {"CUESC;",{0x22DF,0x0,0x0}},
  {"CULARR;",{0x21B6,0x0,0x0}}, {"CULARRP;",{0x293D,0x0,0x0}}, {"CUP;",{0x222A,0x0,0x0}},
  {"CUPBRCAP;",{0x2A48,0x0,0x0}}, {"CUPCAP;",{0x2A46,0x0,0x0}}, {"CUPCUP;",{0x2A4A,0x0,0x0}},
  {"CUPDOT;",{0x228D,0x0,0x0}}, {"CUPOR;",{0x2A45,0x0,0x0}}, {"CUPS;",{0x222A,0xFE00,0x0}},
  {"CURARR;",{0x21B7,0x0,0x0}}, {"CURARRM;",{0x293C,0x0,0x0}}, {"CURLYEQPREC;",{0x22DE,0x0,0x0}},
  {"CURLYEQSUCC;",{0x22DF,0x0,0x0}}, {"CURLYVEE;",{0x22CE,0x0,0x0}}, {"CURLYWEDGE;",{0x22CF,0x0,0x0}},
  {"CURREN;",{0xA4,0x0,0x0}}, {"CURVEARROWLEFT;",{0x21B6,0x0,0x0}}, {"CURVEARROWRIGHT;",{0x21B7,0x0,0x0}},
  {"CUVEE;",{0x22CE,0x0,0x0}}, {"CUWED;",{0x22CF,0x0,0x0}}, {"CWCONINT;",{0x2232,0x0,0x0}},
  {"CWINT;",{0x2231,0x0,0x0}}, {"CYLCTY;",{0x232D,0x0,0x0}}, {"DAGGER;",{0x2020,0x0,0x0}},
  {"DALETH;",{0x2138,0x0,0x0}}, {"DARR;",{0x2193,0x0,0x0}}, {"DASH;",{0x2010,0x0,0x0}},
  {"DASHV;",{0x22A3,0x0,0x0}}, {"DBKAROW;",{0x290F,0x0,0x0}}, {"DBLAC;",{0x2DD,0x0,0x0}},
  {"DCARON;",{0x10E,0x0,0x0}}, {"DCY;",{0x414,0x0,0x0}}, {"DDAGGER;",{0x2021,0x0,0x0}},
  {"DDARR;",{0x21CA,0x0,0x0}}, {"DDOTSEQ;",{0x2A77,0x0,0x0}}, {"DEG;",{0xB0,0x0,0x0}},
  {"DELTA;",{0x394,0x0,0x0}}, {"DEMPTYV;",{0x29B1,0x0,0x0}}, {"DFISHT;",{0x297F,0x0,0x0}},
  {"DFR;",{0x1D521,0x0,0x0}}, {"DHARL;",{0x21C3,0x0,0x0}}, {"DHARR;",{0x21C2,0x0,0x0}},
  {"DIAM;",{0x22C4,0x0,0x0}}, {"DIAMOND;",{0x22C4,0x0,0x0}}, {"DIAMONDSUIT;",{0x2666,0x0,0x0}},
  {"DIAMS;",{0x2666,0x0,0x0}}, {"DIE;",{0xA8,0x0,0x0}}, {"DIGAMMA;",{0x3DC,0x0,0x0}},
  {"DISIN;",{0x22F2,0x0,0x0}}, {"DIV;",{0xF7,0x0,0x0}}, {"DIVIDE;",{0xF7,0x0,0x0}},
  {"DIVIDEONTIMES;",{0x22C7,0x0,0x0}}, {"DIVONX;",{0x22C7,0x0,0x0}}, {"DJCY;",{0x402,0x0,0x0}},
  {"DLCORN;",{0x231E,0x0,0x0}}, {"DLCROP;",{0x230D,0x0,0x0}}, {"DOLLAR;",{0x24,0x0,0x0}},
  {"DOPF;",{0x1D555,0x0,0x0}}, {"DOT;",{0x2D9,0x0,0x0}}, {"DOTEQ;",{0x2250,0x0,0x0}},
  {"DOTEQDOT;",{0x2251,0x0,0x0}}, {"DOTMINUS;",{0x2238,0x0,0x0}}, {"DOTPLUS;",{0x2214,0x0,0x0}},
  {"DOTSQUARE;",{0x22A1,0x0,0x0}}, {"DOUBLEBARWEDGE;",{0x2306,0x0,0x0}}, {"DOWNARROW;",{0x2193,0x0,0x0}},
  {"DOWNDOWNARROWS;",{0x21CA,0x0,0x0}}, {"DOWNHARPOONLEFT;",{0x21C3,0x0,0x0}}, {"DOWNHARPOONRIGHT;",{0x21C2,0x0,0x0}},
  {"DRBKAROW;",{0x2910,0x0,0x0}}, {"DRCORN;",{0x231F,0x0,0x0}}, {"DRCROP;",{0x230C,0x0,0x0}},
  {"DSCR;",{0x1D4B9,0x0,0x0}}, {"DSCY;",{0x405,0x0,0x0}}, {"DSOL;",{0x29F6,0x0,0x0}},
  {"DSTROK;",{0x110,0x0,0x0}}, {"DTDOT;",{0x22F1,0x0,0x0}}, {"DTRI;",{0x25BF,0x0,0x0}},
  {"DTRIF;",{0x25BE,0x0,0x0}}, {"DUARR;",{0x21F5,0x0,0x0}}, {"DUHAR;",{0x296F,0x0,0x0}},
  {"DWANGLE;",{0x29A6,0x0,0x0}}, {"DZCY;",{0x40F,0x0,0x0}}, {"DZIGRARR;",{0x27FF,0x0,0x0}},
  {"EACUTE;",{0xC9,0x0,0x0}}, {"EASTER;",{0x2A6E,0x0,0x0}}, {"ECARON;",{0x11A,0x0,0x0}},
  {"ECIR;",{0x2256,0x0,0x0}}, {"ECIRC;",{0xCA,0x0,0x0}}, {"ECOLON;",{0x2255,0x0,0x0}},
  {"ECY;",{0x42D,0x0,0x0}}, {"EDOT;",{0x116,0x0,0x0}}, {"EE;",{0x2147,0x0,0x0}},
  {"EFR;",{0x1D522,0x0,0x0}}, {"EG;",{0x2A9A,0x0,0x0}}, {"EGRAVE;",{0xC8,0x0,0x0}},
  {"EGS;",{0x2A96,0x0,0x0}}, {"EGSDOT;",{0x2A98,0x0,0x0}}, {"EL;",{0x2A99,0x0,0x0}},
  {"ELINTERS;",{0x23E7,0x0,0x0}}, {"ELL;",{0x2113,0x0,0x0}}, {"ELS;",{0x2A95,0x0,0x0}},
  {"ELSDOT;",{0x2A97,0x0,0x0}}, {"EMACR;",{0x112,0x0,0x0}}, {"EMPTY;",{0x2205,0x0,0x0}},
  {"EMPTYSET;",{0x2205,0x0,0x0}}, {"EMPTYV;",{0x2205,0x0,0x0}}, {"EMSP13;",{0x2004,0x0,0x0}},
  {"EMSP14;",{0x2005,0x0,0x0}}, {"EMSP;",{0x2003,0x0,0x0}}, {"ENSP;",{0x2002,0x0,0x0}},
  {"EOGON;",{0x118,0x0,0x0}}, {"EOPF;",{0x1D556,0x0,0x0}}, {"EPAR;",{0x22D5,0x0,0x0}},
  {"EPARSL;",{0x29E3,0x0,0x0}}, {"EPLUS;",{0x2A71,0x0,0x0}}, {"EPSI;",{0x395,0x0,0x0}},
  {"EPSILON;",{0x395,0x0,0x0}}, {"EPSIV;",{0x395,0x0,0x0}}, {"EQCIRC;",{0x2256,0x0,0x0}},
  {"EQCOLON;",{0x2255,0x0,0x0}}, {"EQSIM;",{0x2242,0x0,0x0}}, {"EQSLANTGTR;",{0x2A96,0x0,0x0}},
  {"EQSLANTLESS;",{0x2A95,0x0,0x0}}, {"EQUALS;",{0x3D,0x0,0x0}}, {"EQUEST;",{0x225F,0x0,0x0}},
  {"EQUIV;",{0x2261,0x0,0x0}}, {"EQVPARSL;",{0x29E5,0x0,0x0}}, {"ERARR;",{0x2971,0x0,0x0}},
  {"ESCR;",{0x212F,0x0,0x0}}, {"ESDOT;",{0x2250,0x0,0x0}}, {"ESIM;",{0x2242,0x0,0x0}},
  {"ETA;",{0x397,0x0,0x0}}, {"EUML;",{0xCB,0x0,0x0}}, {"EURO;",{0x20AC,0x0,0x0}},
  {"EXCL;",{0x21,0x0,0x0}}, {"EXIST;",{0x2203,0x0,0x0}}, {"EXPECTATION;",{0x2130,0x0,0x0}},
  {"EXPONENTIALE;",{0x2147,0x0,0x0}}, {"FALLINGDOTSEQ;",{0x2252,0x0,0x0}}, {"FCY;",{0x424,0x0,0x0}},
  {"FEMALE;",{0x2640,0x0,0x0}}, {"FFILIG;",{0x46,0x46,0x49}}, {"FFLIG;",{0x46,0x46,0x0}},
  {"FFLLIG;",{0x46,0x46,0x4C}}, {"FFR;",{0x1D523,0x0,0x0}}, {"FILIG;",{0x46,0x49,0x0}},
  {"FJLIG;",{0x46,0x4A,0x0}}, {"FLAT;",{0x266D,0x0,0x0}}, {"FLLIG;",{0x46,0x4C,0x0}},
  {"FLTNS;",{0x25B1,0x0,0x0}}, {"FNOF;",{0x191,0x0,0x0}}, {"FOPF;",{0x1D557,0x0,0x0}},
  {"FORALL;",{0x2200,0x0,0x0}}, {"FORK;",{0x22D4,0x0,0x0}}, {"FORKV;",{0x2AD9,0x0,0x0}},
  {"FPARTINT;",{0x2A0D,0x0,0x0}}, {"FRAC12;",{0xBD,0x0,0x0}}, {"FRAC13;",{0x2153,0x0,0x0}},
  {"FRAC14;",{0xBC,0x0,0x0}}, {"FRAC15;",{0x2155,0x0,0x0}}, {"FRAC16;",{0x2159,0x0,0x0}},
  {"FRAC18;",{0x215B,0x0,0x0}}, {"FRAC23;",{0x2154,0x0,0x0}}, {"FRAC25;",{0x2156,0x0,0x0}},
  {"FRAC34;",{0xBE,0x0,0x0}}, {"FRAC35;",{0x2157,0x0,0x0}}, {"FRAC38;",{0x215C,0x0,0x0}},
  {"FRAC45;",{0x2158,0x0,0x0}}, {"FRAC56;",{0x215A,0x0,0x0}}, {"FRAC58;",{0x215D,0x0,0x0}},
  {"FRAC78;",{0x215E,0x0,0x0}}, {"FRASL;",{0x2044,0x0,0x0}}, {"FROWN;",{0x2322,0x0,0x0}},
  {"FSCR;",{0x1D4BB,0x0,0x0}}, {"GACUTE;",{0x1F4,0x0,0x0}}, {"GAMMA;",{0x393,0x0,0x0}},
  {"GAMMAD;",{0x3DC,0x0,0x0}}, {"GAP;",{0x2A86,0x0,0x0}}, {"GBREVE;",{0x11E,0x0,0x0}},
  {"GCIRC;",{0x11C,0x0,0x0}}, {"GCY;",{0x413,0x0,0x0}}, {"GDOT;",{0x120,0x0,0x0}},
  {"GE;",{0x2265,0x0,0x0}}, {"GEL;",{0x22DB,0x0,0x0}}, {"GEQ;",{0x2265,0x0,0x0}},
  {"GEQQ;",{0x2267,0x0,0x0}}, {"GEQSLANT;",{0x2A7E,0x0,0x0}}, {"GES;",{0x2A7E,0x0,0x0}},
  {"GESCC;",{0x2AA9,0x0,0x0}}, {"GESDOT;",{0x2A80,0x0,0x0}}, {"GESDOTO;",{0x2A82,0x0,0x0}},
  {"GESDOTOL;",{0x2A84,0x0,0x0}}, {"GESL;",{0x22DB,0xFE00,0x0}}, {"GESLES;",{0x2A94,0x0,0x0}},
  {"GFR;",{0x1D524,0x0,0x0}}, {"GG;",{0x226B,0x0,0x0}}, {"GGG;",{0x22D9,0x0,0x0}},
  {"GIMEL;",{0x2137,0x0,0x0}}, {"GJCY;",{0x403,0x0,0x0}}, {"GL;",{0x2277,0x0,0x0}},
  {"GLA;",{0x2AA5,0x0,0x0}}, {"GLJ;",{0x2AA4,0x0,0x0}}, {"GNAP;",{0x2A8A,0x0,0x0}},
  {"GNAPPROX;",{0x2A8A,0x0,0x0}}, {"GNE;",{0x2A88,0x0,0x0}}, {"GNEQ;",{0x2A88,0x0,0x0}},
  {"GNEQQ;",{0x2269,0x0,0x0}}, {"GNSIM;",{0x22E7,0x0,0x0}}, {"GOPF;",{0x1D558,0x0,0x0}},
  {"GRAVE;",{0x60,0x0,0x0}}, {"GSCR;",{0x210A,0x0,0x0}}, {"GSIM;",{0x2273,0x0,0x0}},
  {"GSIME;",{0x2A8E,0x0,0x0}}, {"GSIML;",{0x2A90,0x0,0x0}}, {"GVERTNEQQ;",{0x2269,0xFE00,0x0}},
  {"HAIRSP;",{0x200A,0x0,0x0}}, {"HALF;",{0xBD,0x0,0x0}}, {"HAMILT;",{0x210B,0x0,0x0}},
  {"HARDCY;",{0x42A,0x0,0x0}}, {"HARR;",{0x2194,0x0,0x0}}, {"HARRCIR;",{0x2948,0x0,0x0}},
  {"HARRW;",{0x21AD,0x0,0x0}}, {"HBAR;",{0x210F,0x0,0x0}}, {"HCIRC;",{0x124,0x0,0x0}},
  {"HEARTS;",{0x2665,0x0,0x0}}, {"HEARTSUIT;",{0x2665,0x0,0x0}}, {"HELLIP;",{0x2026,0x0,0x0}},
  {"HERCON;",{0x22B9,0x0,0x0}}, {"HFR;",{0x1D525,0x0,0x0}}, {"HKSEAROW;",{0x2925,0x0,0x0}},
  {"HKSWAROW;",{0x2926,0x0,0x0}}, {"HOARR;",{0x21FF,0x0,0x0}}, {"HOMTHT;",{0x223B,0x0,0x0}},
  {"HOOKLEFTARROW;",{0x21A9,0x0,0x0}}, {"HOOKRIGHTARROW;",{0x21AA,0x0,0x0}}, {"HOPF;",{0x1D559,0x0,0x0}},
  {"HORBAR;",{0x2015,0x0,0x0}}, {"HSCR;",{0x1D4BD,0x0,0x0}}, {"HSLASH;",{0x210F,0x0,0x0}},
  {"HSTROK;",{0x126,0x0,0x0}}, {"HYBULL;",{0x2043,0x0,0x0}}, {"HYPHEN;",{0x2010,0x0,0x0}},
  {"IACUTE;",{0xCD,0x0,0x0}}, {"IC;",{0x2063,0x0,0x0}}, {"ICIRC;",{0xCE,0x0,0x0}},
  {"ICY;",{0x418,0x0,0x0}}, {"IECY;",{0x415,0x0,0x0}}, {"IEXCL;",{0xA1,0x0,0x0}},
  {"IFF;",{0x21D4,0x0,0x0}}, {"IFR;",{0x1D526,0x0,0x0}}, {"IGRAVE;",{0xCC,0x0,0x0}},
  {"II;",{0x2148,0x0,0x0}}, {"IIIINT;",{0x2A0C,0x0,0x0}}, {"IIINT;",{0x222D,0x0,0x0}},
  {"IINFIN;",{0x29DC,0x0,0x0}}, {"IIOTA;",{0x2129,0x0,0x0}}, {"IJLIG;",{0x132,0x0,0x0}},
  {"IMACR;",{0x12A,0x0,0x0}}, {"IMAGE;",{0x2111,0x0,0x0}}, {"IMAGLINE;",{0x2110,0x0,0x0}},
  {"IMAGPART;",{0x2111,0x0,0x0}}, {"IMATH;",{0x49,0x0,0x0}}, {"IMOF;",{0x22B7,0x0,0x0}},
  {"IMPED;",{0x1B5,0x0,0x0}}, {"IN;",{0x2208,0x0,0x0}}, {"INCARE;",{0x2105,0x0,0x0}},
  {"INFIN;",{0x221E,0x0,0x0}}, {"INFINTIE;",{0x29DD,0x0,0x0}}, {"INODOT;",{0x49,0x0,0x0}},
  {"INT;",{0x222B,0x0,0x0}}, {"INTCAL;",{0x22BA,0x0,0x0}}, {"INTEGERS;",{0x2124,0x0,0x0}},
  {"INTERCAL;",{0x22BA,0x0,0x0}}, {"INTLARHK;",{0x2A17,0x0,0x0}}, {"INTPROD;",{0x2A3C,0x0,0x0}},
  {"IOCY;",{0x401,0x0,0x0}}, {"IOGON;",{0x12E,0x0,0x0}}, {"IOPF;",{0x1D55A,0x0,0x0}},
  {"IOTA;",{0x399,0x0,0x0}}, {"IPROD;",{0x2A3C,0x0,0x0}}, {"IQUEST;",{0xBF,0x0,0x0}},
  {"ISCR;",{0x1D4BE,0x0,0x0}}, {"ISIN;",{0x2208,0x0,0x0}}, {"ISINDOT;",{0x22F5,0x0,0x0}},
  {"ISINS;",{0x22F4,0x0,0x0}}, {"ISINSV;",{0x22F3,0x0,0x0}}, {"ISINV;",{0x2208,0x0,0x0}},
  {"IT;",{0x2062,0x0,0x0}}, {"ITILDE;",{0x128,0x0,0x0}}, {"IUKCY;",{0x406,0x0,0x0}},
  {"IUML;",{0xCF,0x0,0x0}}, {"JCIRC;",{0x134,0x0,0x0}}, {"JCY;",{0x419,0x0,0x0}},
  {"JFR;",{0x1D527,0x0,0x0}}, {"JMATH;",{0x237,0x0,0x0}}, {"JOPF;",{0x1D55B,0x0,0x0}},
  {"JSCR;",{0x1D4BF,0x0,0x0}}, {"JSERCY;",{0x408,0x0,0x0}}, {"JUKCY;",{0x404,0x0,0x0}},
  {"KAPPA;",{0x39A,0x0,0x0}}, {"KAPPAV;",{0x39A,0x0,0x0}}, {"KCEDIL;",{0x136,0x0,0x0}},
  {"KCY;",{0x41A,0x0,0x0}}, {"KFR;",{0x1D528,0x0,0x0}}, {"KGREEN;",{0x138,0x0,0x0}},
  {"KHCY;",{0x425,0x0,0x0}}, {"KJCY;",{0x40C,0x0,0x0}}, {"KOPF;",{0x1D55C,0x0,0x0}},
  {"KSCR;",{0x1D4C0,0x0,0x0}}, {"LACUTE;",{0x139,0x0,0x0}}, {"LAEMPTYV;",{0x29B4,0x0,0x0}},
  {"LAGRAN;",{0x2112,0x0,0x0}}, {"LAMBDA;",{0x39B,0x0,0x0}}, {"LANG;",{0x27E8,0x0,0x0}},
  {"LANGD;",{0x2991,0x0,0x0}}, {"LANGLE;",{0x27E8,0x0,0x0}}, {"LAP;",{0x2A85,0x0,0x0}},
  {"LAQUO;",{0xAB,0x0,0x0}}, {"LARR;",{0x2190,0x0,0x0}}, {"LARRB;",{0x21E4,0x0,0x0}},
  {"LARRBFS;",{0x291F,0x0,0x0}}, {"LARRFS;",{0x291D,0x0,0x0}}, {"LARRHK;",{0x21A9,0x0,0x0}},
  {"LARRLP;",{0x21AB,0x0,0x0}}, {"LARRPL;",{0x2939,0x0,0x0}}, {"LARRSIM;",{0x2973,0x0,0x0}},
  {"LARRTL;",{0x21A2,0x0,0x0}}, {"LAT;",{0x2AAB,0x0,0x0}}, {"LATAIL;",{0x2919,0x0,0x0}},
  {"LATE;",{0x2AAD,0x0,0x0}}, {"LATES;",{0x2AAD,0xFE00,0x0}}, {"LBARR;",{0x290C,0x0,0x0}},
  {"LBBRK;",{0x2772,0x0,0x0}}, {"LBRACE;",{0x7B,0x0,0x0}}, {"LBRACK;",{0x5B,0x0,0x0}},
  {"LBRKE;",{0x298B,0x0,0x0}}, {"LBRKSLD;",{0x298F,0x0,0x0}}, {"LBRKSLU;",{0x298D,0x0,0x0}},
  {"LCARON;",{0x13D,0x0,0x0}}, {"LCEDIL;",{0x13B,0x0,0x0}}, {"LCEIL;",{0x2308,0x0,0x0}},
  {"LCUB;",{0x7B,0x0,0x0}}, {"LCY;",{0x41B,0x0,0x0}}, {"LDCA;",{0x2936,0x0,0x0}},
  {"LDQUO;",{0x201C,0x0,0x0}}, {"LDQUOR;",{0x201E,0x0,0x0}}, {"LDRDHAR;",{0x2967,0x0,0x0}},
  {"LDRUSHAR;",{0x294B,0x0,0x0}}, {"LDSH;",{0x21B2,0x0,0x0}}, {"LE;",{0x2264,0x0,0x0}},
  {"LEFTARROW;",{0x2190,0x0,0x0}}, {"LEFTARROWTAIL;",{0x21A2,0x0,0x0}}, {"LEFTHARPOONDOWN;",{0x21BD,0x0,0x0}},
  {"LEFTHARPOONUP;",{0x21BC,0x0,0x0}}, {"LEFTLEFTARROWS;",{0x21C7,0x0,0x0}}, {"LEFTRIGHTARROW;",{0x2194,0x0,0x0}},
  {"LEFTRIGHTARROWS;",{0x21C6,0x0,0x0}}, {"LEFTRIGHTHARPOONS;",{0x21CB,0x0,0x0}}, {"LEFTRIGHTSQUIGARROW;",{0x21AD,0x0,0x0}},
  {"LEFTTHREETIMES;",{0x22CB,0x0,0x0}}, {"LEG;",{0x22DA,0x0,0x0}}, {"LEQ;",{0x2264,0x0,0x0}},
  {"LEQQ;",{0x2266,0x0,0x0}}, {"LEQSLANT;",{0x2A7D,0x0,0x0}}, {"LES;",{0x2A7D,0x0,0x0}},
  {"LESCC;",{0x2AA8,0x0,0x0}}, {"LESDOT;",{0x2A7F,0x0,0x0}}, {"LESDOTO;",{0x2A81,0x0,0x0}},
  {"LESDOTOR;",{0x2A83,0x0,0x0}}, {"LESG;",{0x22DA,0xFE00,0x0}}, {"LESGES;",{0x2A93,0x0,0x0}},
  {"LESSAPPROX;",{0x2A85,0x0,0x0}}, {"LESSDOT;",{0x22D6,0x0,0x0}}, {"LESSEQGTR;",{0x22DA,0x0,0x0}},
  {"LESSEQQGTR;",{0x2A8B,0x0,0x0}}, {"LESSGTR;",{0x2276,0x0,0x0}}, {"LESSSIM;",{0x2272,0x0,0x0}},
  {"LFISHT;",{0x297C,0x0,0x0}}, {"LFLOOR;",{0x230A,0x0,0x0}}, {"LFR;",{0x1D529,0x0,0x0}},
  {"LG;",{0x2276,0x0,0x0}}, {"LHARD;",{0x21BD,0x0,0x0}}, {"LHARU;",{0x21BC,0x0,0x0}},
  {"LHARUL;",{0x296A,0x0,0x0}}, {"LHBLK;",{0x2584,0x0,0x0}}, {"LJCY;",{0x409,0x0,0x0}},
  {"LL;",{0x226A,0x0,0x0}}, {"LLARR;",{0x21C7,0x0,0x0}}, {"LLCORNER;",{0x231E,0x0,0x0}},
  {"LLHARD;",{0x296B,0x0,0x0}}, {"LLTRI;",{0x25FA,0x0,0x0}}, {"LMIDOT;",{0x13F,0x0,0x0}},
  {"LMOUST;",{0x23B0,0x0,0x0}}, {"LMOUSTACHE;",{0x23B0,0x0,0x0}}, {"LNAP;",{0x2A89,0x0,0x0}},
  {"LNAPPROX;",{0x2A89,0x0,0x0}}, {"LNE;",{0x2A87,0x0,0x0}}, {"LNEQ;",{0x2A87,0x0,0x0}},
  {"LNEQQ;",{0x2268,0x0,0x0}}, {"LNSIM;",{0x22E6,0x0,0x0}}, {"LOANG;",{0x27EC,0x0,0x0}},
  {"LOARR;",{0x21FD,0x0,0x0}}, {"LOBRK;",{0x27E6,0x0,0x0}}, {"LONGLEFTARROW;",{0x27F5,0x0,0x0}},
  {"LONGLEFTRIGHTARROW;",{0x27F7,0x0,0x0}}, {"LONGMAPSTO;",{0x27FC,0x0,0x0}}, {"LONGRIGHTARROW;",{0x27F6,0x0,0x0}},
  {"LOOPARROWLEFT;",{0x21AB,0x0,0x0}}, {"LOOPARROWRIGHT;",{0x21AC,0x0,0x0}}, {"LOPAR;",{0x2985,0x0,0x0}},
  {"LOPF;",{0x1D55D,0x0,0x0}}, {"LOPLUS;",{0x2A2D,0x0,0x0}}, {"LOTIMES;",{0x2A34,0x0,0x0}},
  {"LOWAST;",{0x2217,0x0,0x0}}, {"LOWBAR;",{0x5F,0x0,0x0}}, {"LOZ;",{0x25CA,0x0,0x0}},
  {"LOZENGE;",{0x25CA,0x0,0x0}}, {"LOZF;",{0x29EB,0x0,0x0}}, {"LPAR;",{0x28,0x0,0x0}},
  {"LPARLT;",{0x2993,0x0,0x0}}, {"LRARR;",{0x21C6,0x0,0x0}}, {"LRCORNER;",{0x231F,0x0,0x0}},
  {"LRHAR;",{0x21CB,0x0,0x0}}, {"LRHARD;",{0x296D,0x0,0x0}}, {"LRM;",{0x200E,0x0,0x0}},
  {"LRTRI;",{0x22BF,0x0,0x0}}, {"LSAQUO;",{0x2039,0x0,0x0}}, {"LSCR;",{0x1D4C1,0x0,0x0}},
  {"LSH;",{0x21B0,0x0,0x0}}, {"LSIM;",{0x2272,0x0,0x0}}, {"LSIME;",{0x2A8D,0x0,0x0}},
  {"LSIMG;",{0x2A8F,0x0,0x0}}, {"LSQB;",{0x5B,0x0,0x0}}, {"LSQUO;",{0x2018,0x0,0x0}},
  {"LSQUOR;",{0x201A,0x0,0x0}}, {"LSTROK;",{0x141,0x0,0x0}}, {"LURDSHAR;",{0x294A,0x0,0x0}},
  {"LURUHAR;",{0x2966,0x0,0x0}}, {"LVERTNEQQ;",{0x2268,0xFE00,0x0}}, {"MACR;",{0xAF,0x0,0x0}},
  {"MALE;",{0x2642,0x0,0x0}}, {"MALT;",{0x2720,0x0,0x0}}, {"MALTESE;",{0x2720,0x0,0x0}},
  {"MAP;",{0x21A6,0x0,0x0}}, {"MAPSTO;",{0x21A6,0x0,0x0}}, {"MAPSTODOWN;",{0x21A7,0x0,0x0}},
  {"MAPSTOLEFT;",{0x21A4,0x0,0x0}}, {"MAPSTOUP;",{0x21A5,0x0,0x0}}, {"MARKER;",{0x25AE,0x0,0x0}},
  {"MCOMMA;",{0x2A29,0x0,0x0}}, {"MCY;",{0x41C,0x0,0x0}}, {"MDASH;",{0x2014,0x0,0x0}},
  {"MEASUREDANGLE;",{0x2221,0x0,0x0}}, {"MFR;",{0x1D52A,0x0,0x0}}, {"MHO;",{0x2127,0x0,0x0}},
  {"MICRO;",{0x39C,0x0,0x0}}, {"MID;",{0x2223,0x0,0x0}}, {"MIDAST;",{0x2A,0x0,0x0}},
  {"MIDCIR;",{0x2AF0,0x0,0x0}}, {"MIDDOT;",{0xB7,0x0,0x0}}, {"MINUS;",{0x2212,0x0,0x0}},
  {"MINUSB;",{0x229F,0x0,0x0}}, {"MINUSD;",{0x2238,0x0,0x0}}, {"MINUSDU;",{0x2A2A,0x0,0x0}},
  {"MLCP;",{0x2ADB,0x0,0x0}}, {"MLDR;",{0x2026,0x0,0x0}}, {"MNPLUS;",{0x2213,0x0,0x0}},
  {"MODELS;",{0x22A7,0x0,0x0}}, {"MOPF;",{0x1D55E,0x0,0x0}}, {"MP;",{0x2213,0x0,0x0}},
  {"MSCR;",{0x1D4C2,0x0,0x0}}, {"MSTPOS;",{0x223E,0x0,0x0}}, {"MU;",{0x39C,0x0,0x0}},
  {"MULTIMAP;",{0x22B8,0x0,0x0}}, {"MUMAP;",{0x22B8,0x0,0x0}}, {"NABLA;",{0x2207,0x0,0x0}},
  {"NACUTE;",{0x143,0x0,0x0}}, {"NANG;",{0x2220,0x20D2,0x0}}, {"NAP;",{0x2249,0x0,0x0}},
  {"NAPID;",{0x224B,0x338,0x0}}, {"NAPOS;",{0x2BC,0x4E,0x0}}, {"NAPPROX;",{0x2249,0x0,0x0}},
  {"NATUR;",{0x266E,0x0,0x0}}, {"NATURAL;",{0x266E,0x0,0x0}}, {"NATURALS;",{0x2115,0x0,0x0}},
  {"NBSP;",{0xA0,0x0,0x0}}, {"NBUMP;",{0x224E,0x338,0x0}}, {"NBUMPE;",{0x224F,0x338,0x0}},
  {"NCAP;",{0x2A43,0x0,0x0}}, {"NCARON;",{0x147,0x0,0x0}}, {"NCEDIL;",{0x145,0x0,0x0}},
  {"NCONG;",{0x2247,0x0,0x0}}, {"NCONGDOT;",{0x2A6D,0x338,0x0}}, {"NCUP;",{0x2A42,0x0,0x0}},
  {"NCY;",{0x41D,0x0,0x0}}, {"NDASH;",{0x2013,0x0,0x0}}, {"NE;",{0x2260,0x0,0x0}},
  {"NEARHK;",{0x2924,0x0,0x0}}, {"NEARR;",{0x2197,0x0,0x0}}, {"NEARROW;",{0x2197,0x0,0x0}},
  {"NEDOT;",{0x2250,0x338,0x0}}, {"NEQUIV;",{0x2262,0x0,0x0}}, {"NESEAR;",{0x2928,0x0,0x0}},
  {"NESIM;",{0x2242,0x338,0x0}}, {"NEXIST;",{0x2204,0x0,0x0}}, {"NEXISTS;",{0x2204,0x0,0x0}},
  {"NFR;",{0x1D52B,0x0,0x0}}, {"NGE;",{0x2271,0x0,0x0}}, {"NGEQ;",{0x2271,0x0,0x0}},
  {"NGEQQ;",{0x2267,0x338,0x0}}, {"NGEQSLANT;",{0x2A7E,0x338,0x0}}, {"NGES;",{0x2A7E,0x338,0x0}},
  {"NGSIM;",{0x2275,0x0,0x0}}, {"NGT;",{0x226F,0x0,0x0}}, {"NGTR;",{0x226F,0x0,0x0}},
  {"NHARR;",{0x21AE,0x0,0x0}}, {"NHPAR;",{0x2AF2,0x0,0x0}}, {"NI;",{0x220B,0x0,0x0}},
  {"NIS;",{0x22FC,0x0,0x0}}, {"NISD;",{0x22FA,0x0,0x0}}, {"NIV;",{0x220B,0x0,0x0}},
  {"NJCY;",{0x40A,0x0,0x0}}, {"NLARR;",{0x219A,0x0,0x0}}, {"NLDR;",{0x2025,0x0,0x0}},
  {"NLE;",{0x2270,0x0,0x0}}, {"NLEFTARROW;",{0x219A,0x0,0x0}}, {"NLEFTRIGHTARROW;",{0x21AE,0x0,0x0}},
  {"NLEQ;",{0x2270,0x0,0x0}}, {"NLEQQ;",{0x2266,0x338,0x0}}, {"NLEQSLANT;",{0x2A7D,0x338,0x0}},
  {"NLES;",{0x2A7D,0x338,0x0}}, {"NLESS;",{0x226E,0x0,0x0}}, {"NLSIM;",{0x2274,0x0,0x0}},
  {"NLT;",{0x226E,0x0,0x0}}, {"NLTRI;",{0x22EA,0x0,0x0}}, {"NLTRIE;",{0x22EC,0x0,0x0}},
  {"NMID;",{0x2224,0x0,0x0}}, {"NOPF;",{0x1D55F,0x0,0x0}}, {"NOT;",{0xAC,0x0,0x0}},
  {"NOTIN;",{0x2209,0x0,0x0}}, {"NOTINDOT;",{0x22F5,0x338,0x0}}, {"NOTINVA;",{0x2209,0x0,0x0}},
  {"NOTINVB;",{0x22F7,0x0,0x0}}, {"NOTINVC;",{0x22F6,0x0,0x0}}, {"NOTNI;",{0x220C,0x0,0x0}},
  {"NOTNIVA;",{0x220C,0x0,0x0}}, {"NOTNIVB;",{0x22FE,0x0,0x0}}, {"NOTNIVC;",{0x22FD,0x0,0x0}},
  {"NPAR;",{0x2226,0x0,0x0}}, {"NPARALLEL;",{0x2226,0x0,0x0}}, {"NPARSL;",{0x2AFD,0x20E5,0x0}},
  {"NPART;",{0x2202,0x338,0x0}}, {"NPOLINT;",{0x2A14,0x0,0x0}}, {"NPR;",{0x2280,0x0,0x0}},
  {"NPRCUE;",{0x22E0,0x0,0x0}}, {"NPRE;",{0x2AAF,0x338,0x0}}, {"NPREC;",{0x2280,0x0,0x0}},
  {"NPRECEQ;",{0x2AAF,0x338,0x0}}, {"NRARR;",{0x219B,0x0,0x0}}, {"NRARRC;",{0x2933,0x338,0x0}},
  {"NRARRW;",{0x219D,0x338,0x0}}, {"NRIGHTARROW;",{0x219B,0x0,0x0}}, {"NRTRI;",{0x22EB,0x0,0x0}},
  {"NRTRIE;",{0x22ED,0x0,0x0}}, {"NSC;",{0x2281,0x0,0x0}}, {"NSCCUE;",{0x22E1,0x0,0x0}},
  {"NSCE;",{0x2AB0,0x338,0x0}}, {"NSCR;",{0x1D4C3,0x0,0x0}}, {"NSHORTMID;",{0x2224,0x0,0x0}},
  {"NSHORTPARALLEL;",{0x2226,0x0,0x0}}, {"NSIM;",{0x2241,0x0,0x0}}, {"NSIME;",{0x2244,0x0,0x0}},
  {"NSIMEQ;",{0x2244,0x0,0x0}}, {"NSMID;",{0x2224,0x0,0x0}}, {"NSPAR;",{0x2226,0x0,0x0}},
  {"NSQSUBE;",{0x22E2,0x0,0x0}}, {"NSQSUPE;",{0x22E3,0x0,0x0}}, {"NSUB;",{0x2284,0x0,0x0}},
  {"NSUBE;",{0x2288,0x0,0x0}}, {"NSUBSET;",{0x2282,0x20D2,0x0}}, {"NSUBSETEQ;",{0x2288,0x0,0x0}},
  {"NSUBSETEQQ;",{0x2AC5,0x338,0x0}}, {"NSUCC;",{0x2281,0x0,0x0}}, {"NSUCCEQ;",{0x2AB0,0x338,0x0}},
  {"NSUP;",{0x2285,0x0,0x0}}, {"NSUPE;",{0x2289,0x0,0x0}}, {"NSUPSET;",{0x2283,0x20D2,0x0}},
  {"NSUPSETEQ;",{0x2289,0x0,0x0}}, {"NSUPSETEQQ;",{0x2AC6,0x338,0x0}}, {"NTGL;",{0x2279,0x0,0x0}},
  {"NTILDE;",{0xD1,0x0,0x0}}, {"NTLG;",{0x2278,0x0,0x0}}, {"NTRIANGLELEFT;",{0x22EA,0x0,0x0}},
  {"NTRIANGLELEFTEQ;",{0x22EC,0x0,0x0}}, {"NTRIANGLERIGHT;",{0x22EB,0x0,0x0}}, {"NTRIANGLERIGHTEQ;",{0x22ED,0x0,0x0}},
  {"NU;",{0x39D,0x0,0x0}}, {"NUM;",{0x23,0x0,0x0}}, {"NUMERO;",{0x2116,0x0,0x0}},
  {"NUMSP;",{0x2007,0x0,0x0}}, {"NVAP;",{0x224D,0x20D2,0x0}}, {"NVDASH;",{0x22AC,0x0,0x0}},
  {"NVGE;",{0x2265,0x20D2,0x0}}, {"NVGT;",{0x3E,0x20D2,0x0}}, {"NVINFIN;",{0x29DE,0x0,0x0}},
  {"NVLE;",{0x2264,0x20D2,0x0}}, {"NVLT;",{0x3C,0x20D2,0x0}}, {"NVLTRIE;",{0x22B4,0x20D2,0x0}},
  {"NVRTRIE;",{0x22B5,0x20D2,0x0}}, {"NVSIM;",{0x223C,0x20D2,0x0}}, {"NWARHK;",{0x2923,0x0,0x0}},
  {"NWARR;",{0x2196,0x0,0x0}}, {"NWARROW;",{0x2196,0x0,0x0}}, {"NWNEAR;",{0x2927,0x0,0x0}},
  {"OACUTE;",{0xD3,0x0,0x0}}, {"OAST;",{0x229B,0x0,0x0}}, {"OCIR;",{0x229A,0x0,0x0}},
  {"OCIRC;",{0xD4,0x0,0x0}}, {"OCY;",{0x41E,0x0,0x0}}, {"ODASH;",{0x229D,0x0,0x0}},
  {"ODBLAC;",{0x150,0x0,0x0}}, {"ODIV;",{0x2A38,0x0,0x0}}, {"ODOT;",{0x2299,0x0,0x0}},
  {"ODSOLD;",{0x29BC,0x0,0x0}}, {"OELIG;",{0x152,0x0,0x0}}, {"OFCIR;",{0x29BF,0x0,0x0}},
  {"OFR;",{0x1D52C,0x0,0x0}}, {"OGON;",{0x2DB,0x0,0x0}}, {"OGRAVE;",{0xD2,0x0,0x0}},
  {"OGT;",{0x29C1,0x0,0x0}}, {"OHBAR;",{0x29B5,0x0,0x0}}, {"OHM;",{0x3A9,0x0,0x0}},
  {"OINT;",{0x222E,0x0,0x0}}, {"OLARR;",{0x21BA,0x0,0x0}}, {"OLCIR;",{0x29BE,0x0,0x0}},
  {"OLCROSS;",{0x29BB,0x0,0x0}}, {"OLINE;",{0x203E,0x0,0x0}}, {"OLT;",{0x29C0,0x0,0x0}},
  {"OMACR;",{0x14C,0x0,0x0}}, {"OMEGA;",{0x3A9,0x0,0x0}}, {"OMICRON;",{0x39F,0x0,0x0}},
  {"OMID;",{0x29B6,0x0,0x0}}, {"OMINUS;",{0x2296,0x0,0x0}}, {"OOPF;",{0x1D560,0x0,0x0}},
  {"OPAR;",{0x29B7,0x0,0x0}}, {"OPERP;",{0x29B9,0x0,0x0}}, {"OPLUS;",{0x2295,0x0,0x0}},
  {"OR;",{0x2228,0x0,0x0}}, {"ORARR;",{0x21BB,0x0,0x0}}, {"ORD;",{0x2A5D,0x0,0x0}},
  {"ORDER;",{0x2134,0x0,0x0}}, {"ORDEROF;",{0x2134,0x0,0x0}}, {"ORDF;",{0xAA,0x0,0x0}},
  {"ORDM;",{0xBA,0x0,0x0}}, {"ORIGOF;",{0x22B6,0x0,0x0}}, {"OROR;",{0x2A56,0x0,0x0}},
  {"ORSLOPE;",{0x2A57,0x0,0x0}}, {"ORV;",{0x2A5B,0x0,0x0}}, {"OSCR;",{0x2134,0x0,0x0}},
  {"OSLASH;",{0xD8,0x0,0x0}}, {"OSOL;",{0x2298,0x0,0x0}}, {"OTILDE;",{0xD5,0x0,0x0}},
  {"OTIMES;",{0x2297,0x0,0x0}}, {"OTIMESAS;",{0x2A36,0x0,0x0}}, {"OUML;",{0xD6,0x0,0x0}},
  {"OVBAR;",{0x233D,0x0,0x0}}, {"PAR;",{0x2225,0x0,0x0}}, {"PARA;",{0xB6,0x0,0x0}},
  {"PARALLEL;",{0x2225,0x0,0x0}}, {"PARSIM;",{0x2AF3,0x0,0x0}}, {"PARSL;",{0x2AFD,0x0,0x0}},
  {"PART;",{0x2202,0x0,0x0}}, {"PCY;",{0x41F,0x0,0x0}}, {"PERCNT;",{0x25,0x0,0x0}},
  {"PERIOD;",{0x2E,0x0,0x0}}, {"PERMIL;",{0x2030,0x0,0x0}}, {"PERP;",{0x22A5,0x0,0x0}},
  {"PERTENK;",{0x2031,0x0,0x0}}, {"PFR;",{0x1D52D,0x0,0x0}}, {"PHI;",{0x3A6,0x0,0x0}},
  {"PHIV;",{0x3A6,0x0,0x0}}, {"PHMMAT;",{0x2133,0x0,0x0}}, {"PHONE;",{0x260E,0x0,0x0}},
  {"PI;",{0x3A0,0x0,0x0}}, {"PITCHFORK;",{0x22D4,0x0,0x0}}, {"PIV;",{0x3A0,0x0,0x0}},
  {"PLANCK;",{0x210F,0x0,0x0}}, {"PLANCKH;",{0x210E,0x0,0x0}}, {"PLANKV;",{0x210F,0x0,0x0}},
  {"PLUS;",{0x2B,0x0,0x0}}, {"PLUSACIR;",{0x2A23,0x0,0x0}}, {"PLUSB;",{0x229E,0x0,0x0}},
  {"PLUSCIR;",{0x2A22,0x0,0x0}}, {"PLUSDO;",{0x2214,0x0,0x0}}, {"PLUSDU;",{0x2A25,0x0,0x0}},
  {"PLUSE;",{0x2A72,0x0,0x0}}, {"PLUSMN;",{0xB1,0x0,0x0}}, {"PLUSSIM;",{0x2A26,0x0,0x0}},
  {"PLUSTWO;",{0x2A27,0x0,0x0}}, {"PM;",{0xB1,0x0,0x0}}, {"POINTINT;",{0x2A15,0x0,0x0}},
  {"POPF;",{0x1D561,0x0,0x0}}, {"POUND;",{0xA3,0x0,0x0}}, {"PR;",{0x227A,0x0,0x0}},
  {"PRAP;",{0x2AB7,0x0,0x0}}, {"PRCUE;",{0x227C,0x0,0x0}}, {"PRE;",{0x2AAF,0x0,0x0}},
  {"PREC;",{0x227A,0x0,0x0}}, {"PRECAPPROX;",{0x2AB7,0x0,0x0}}, {"PRECCURLYEQ;",{0x227C,0x0,0x0}},
  {"PRECEQ;",{0x2AAF,0x0,0x0}}, {"PRECNAPPROX;",{0x2AB9,0x0,0x0}}, {"PRECNEQQ;",{0x2AB5,0x0,0x0}},
  {"PRECNSIM;",{0x22E8,0x0,0x0}}, {"PRECSIM;",{0x227E,0x0,0x0}}, {"PRIME;",{0x2032,0x0,0x0}},
  {"PRIMES;",{0x2119,0x0,0x0}}, {"PRNAP;",{0x2AB9,0x0,0x0}}, {"PRNSIM;",{0x22E8,0x0,0x0}},
  {"PROD;",{0x220F,0x0,0x0}}, {"PROFALAR;",{0x232E,0x0,0x0}}, {"PROFLINE;",{0x2312,0x0,0x0}},
  {"PROFSURF;",{0x2313,0x0,0x0}}, {"PROP;",{0x221D,0x0,0x0}}, {"PROPTO;",{0x221D,0x0,0x0}},
  {"PRSIM;",{0x227E,0x0,0x0}}, {"PRUREL;",{0x22B0,0x0,0x0}}, {"PSCR;",{0x1D4C5,0x0,0x0}},
  {"PSI;",{0x3A8,0x0,0x0}}, {"PUNCSP;",{0x2008,0x0,0x0}}, {"QFR;",{0x1D52E,0x0,0x0}},
  {"QINT;",{0x2A0C,0x0,0x0}}, {"QOPF;",{0x1D562,0x0,0x0}}, {"QPRIME;",{0x2057,0x0,0x0}},
  {"QSCR;",{0x1D4C6,0x0,0x0}}, {"QUATERNIONS;",{0x210D,0x0,0x0}}, {"QUATINT;",{0x2A16,0x0,0x0}},
  {"QUEST;",{0x3F,0x0,0x0}}, {"QUESTEQ;",{0x225F,0x0,0x0}}, {"RACE;",{0x223D,0x331,0x0}},
  {"RACUTE;",{0x154,0x0,0x0}}, {"RADIC;",{0x221A,0x0,0x0}}, {"RAEMPTYV;",{0x29B3,0x0,0x0}},
  {"RANG;",{0x27E9,0x0,0x0}}, {"RANGD;",{0x2992,0x0,0x0}}, {"RANGE;",{0x29A5,0x0,0x0}},
  {"RANGLE;",{0x27E9,0x0,0x0}}, {"RAQUO;",{0xBB,0x0,0x0}}, {"RARR;",{0x2192,0x0,0x0}},
  {"RARRAP;",{0x2975,0x0,0x0}}, {"RARRB;",{0x21E5,0x0,0x0}}, {"RARRBFS;",{0x2920,0x0,0x0}},
  {"RARRC;",{0x2933,0x0,0x0}}, {"RARRFS;",{0x291E,0x0,0x0}}, {"RARRHK;",{0x21AA,0x0,0x0}},
  {"RARRLP;",{0x21AC,0x0,0x0}}, {"RARRPL;",{0x2945,0x0,0x0}}, {"RARRSIM;",{0x2974,0x0,0x0}},
  {"RARRTL;",{0x21A3,0x0,0x0}}, {"RARRW;",{0x219D,0x0,0x0}}, {"RATAIL;",{0x291A,0x0,0x0}},
  {"RATIO;",{0x2236,0x0,0x0}}, {"RATIONALS;",{0x211A,0x0,0x0}}, {"RBARR;",{0x290D,0x0,0x0}},
  {"RBBRK;",{0x2773,0x0,0x0}}, {"RBRACE;",{0x7D,0x0,0x0}}, {"RBRACK;",{0x5D,0x0,0x0}},
  {"RBRKE;",{0x298C,0x0,0x0}}, {"RBRKSLD;",{0x298E,0x0,0x0}}, {"RBRKSLU;",{0x2990,0x0,0x0}},
  {"RCARON;",{0x158,0x0,0x0}}, {"RCEDIL;",{0x156,0x0,0x0}}, {"RCEIL;",{0x2309,0x0,0x0}},
  {"RCUB;",{0x7D,0x0,0x0}}, {"RCY;",{0x420,0x0,0x0}}, {"RDCA;",{0x2937,0x0,0x0}},
  {"RDLDHAR;",{0x2969,0x0,0x0}}, {"RDQUO;",{0x201D,0x0,0x0}}, {"RDQUOR;",{0x201D,0x0,0x0}},
  {"RDSH;",{0x21B3,0x0,0x0}}, {"REAL;",{0x211C,0x0,0x0}}, {"REALINE;",{0x211B,0x0,0x0}},
  {"REALPART;",{0x211C,0x0,0x0}}, {"REALS;",{0x211D,0x0,0x0}}, {"RECT;",{0x25AD,0x0,0x0}},
  {"RFISHT;",{0x297D,0x0,0x0}}, {"RFLOOR;",{0x230B,0x0,0x0}}, {"RFR;",{0x1D52F,0x0,0x0}},
  {"RHARD;",{0x21C1,0x0,0x0}}, {"RHARU;",{0x21C0,0x0,0x0}}, {"RHARUL;",{0x296C,0x0,0x0}},
  {"RHO;",{0x3A1,0x0,0x0}}, {"RHOV;",{0x3A1,0x0,0x0}}, {"RIGHTARROW;",{0x2192,0x0,0x0}},
  {"RIGHTARROWTAIL;",{0x21A3,0x0,0x0}}, {"RIGHTHARPOONDOWN;",{0x21C1,0x0,0x0}}, {"RIGHTHARPOONUP;",{0x21C0,0x0,0x0}},
  {"RIGHTLEFTARROWS;",{0x21C4,0x0,0x0}}, {"RIGHTLEFTHARPOONS;",{0x21CC,0x0,0x0}}, {"RIGHTRIGHTARROWS;",{0x21C9,0x0,0x0}},
  {"RIGHTSQUIGARROW;",{0x219D,0x0,0x0}}, {"RIGHTTHREETIMES;",{0x22CC,0x0,0x0}}, {"RING;",{0x2DA,0x0,0x0}},
  {"RISINGDOTSEQ;",{0x2253,0x0,0x0}}, {"RLARR;",{0x21C4,0x0,0x0}}, {"RLHAR;",{0x21CC,0x0,0x0}},
  {"RLM;",{0x200F,0x0,0x0}}, {"RMOUST;",{0x23B1,0x0,0x0}}, {"RMOUSTACHE;",{0x23B1,0x0,0x0}},
  {"RNMID;",{0x2AEE,0x0,0x0}}, {"ROANG;",{0x27ED,0x0,0x0}}, {"ROARR;",{0x21FE,0x0,0x0}},
  {"ROBRK;",{0x27E7,0x0,0x0}}, {"ROPAR;",{0x2986,0x0,0x0}}, {"ROPF;",{0x1D563,0x0,0x0}},
  {"ROPLUS;",{0x2A2E,0x0,0x0}}, {"ROTIMES;",{0x2A35,0x0,0x0}}, {"RPAR;",{0x29,0x0,0x0}},
  {"RPARGT;",{0x2994,0x0,0x0}}, {"RPPOLINT;",{0x2A12,0x0,0x0}}, {"RRARR;",{0x21C9,0x0,0x0}},
  {"RSAQUO;",{0x203A,0x0,0x0}}, {"RSCR;",{0x1D4C7,0x0,0x0}}, {"RSH;",{0x21B1,0x0,0x0}},
  {"RSQB;",{0x5D,0x0,0x0}}, {"RSQUO;",{0x2019,0x0,0x0}}, {"RSQUOR;",{0x2019,0x0,0x0}},
  {"RTHREE;",{0x22CC,0x0,0x0}}, {"RTIMES;",{0x22CA,0x0,0x0}}, {"RTRI;",{0x25B9,0x0,0x0}},
  {"RTRIE;",{0x22B5,0x0,0x0}}, {"RTRIF;",{0x25B8,0x0,0x0}}, {"RTRILTRI;",{0x29CE,0x0,0x0}},
  {"RULUHAR;",{0x2968,0x0,0x0}}, {"RX;",{0x211E,0x0,0x0}}, {"SACUTE;",{0x15A,0x0,0x0}},
  {"SBQUO;",{0x201A,0x0,0x0}}, {"SC;",{0x227B,0x0,0x0}}, {"SCAP;",{0x2AB8,0x0,0x0}},
  {"SCARON;",{0x160,0x0,0x0}}, {"SCCUE;",{0x227D,0x0,0x0}}, {"SCE;",{0x2AB0,0x0,0x0}},
  {"SCEDIL;",{0x15E,0x0,0x0}}, {"SCIRC;",{0x15C,0x0,0x0}}, {"SCNAP;",{0x2ABA,0x0,0x0}},
  {"SCNSIM;",{0x22E9,0x0,0x0}}, {"SCPOLINT;",{0x2A13,0x0,0x0}}, {"SCSIM;",{0x227F,0x0,0x0}},
  {"SCY;",{0x421,0x0,0x0}}, {"SDOT;",{0x22C5,0x0,0x0}}, {"SDOTB;",{0x22A1,0x0,0x0}},
  {"SDOTE;",{0x2A66,0x0,0x0}}, {"SEARHK;",{0x2925,0x0,0x0}}, {"SEARR;",{0x2198,0x0,0x0}},
  {"SEARROW;",{0x2198,0x0,0x0}}, {"SECT;",{0xA7,0x0,0x0}}, {"SEMI;",{0x3B,0x0,0x0}},
  {"SESWAR;",{0x2929,0x0,0x0}}, {"SETMINUS;",{0x2216,0x0,0x0}}, {"SETMN;",{0x2216,0x0,0x0}},
  {"SEXT;",{0x2736,0x0,0x0}}, {"SFR;",{0x1D530,0x0,0x0}}, {"SFROWN;",{0x2322,0x0,0x0}},
  {"SHARP;",{0x266F,0x0,0x0}}, {"SHCHCY;",{0x429,0x0,0x0}}, {"SHCY;",{0x428,0x0,0x0}},
  {"SHORTMID;",{0x2223,0x0,0x0}}, {"SHORTPARALLEL;",{0x2225,0x0,0x0}}, {"SHY;",{0xAD,0x0,0x0}},
  {"SIGMA;",{0x3A3,0x0,0x0}}, {"SIGMAF;",{0x3A3,0x0,0x0}}, {"SIGMAV;",{0x3A3,0x0,0x0}},
  {"SIM;",{0x223C,0x0,0x0}}, {"SIMDOT;",{0x2A6A,0x0,0x0}}, {"SIME;",{0x2243,0x0,0x0}},
  {"SIMEQ;",{0x2243,0x0,0x0}}, {"SIMG;",{0x2A9E,0x0,0x0}}, {"SIML;",{0x2A9D,0x0,0x0}},
  {"SIMNE;",{0x2246,0x0,0x0}}, {"SIMPLUS;",{0x2A24,0x0,0x0}}, {"SIMRARR;",{0x2972,0x0,0x0}},
  {"SLARR;",{0x2190,0x0,0x0}}, {"SMALLSETMINUS;",{0x2216,0x0,0x0}}, {"SMASHP;",{0x2A33,0x0,0x0}},
  {"SMEPARSL;",{0x29E4,0x0,0x0}}, {"SMID;",{0x2223,0x0,0x0}}, {"SMILE;",{0x2323,0x0,0x0}},
  {"SMT;",{0x2AAA,0x0,0x0}}, {"SMTE;",{0x2AAC,0x0,0x0}}, {"SMTES;",{0x2AAC,0xFE00,0x0}},
  {"SOFTCY;",{0x42C,0x0,0x0}}, {"SOL;",{0x2F,0x0,0x0}}, {"SOLB;",{0x29C4,0x0,0x0}},
  {"SOLBAR;",{0x233F,0x0,0x0}}, {"SOPF;",{0x1D564,0x0,0x0}}, {"SPADES;",{0x2660,0x0,0x0}},
  {"SPADESUIT;",{0x2660,0x0,0x0}}, {"SPAR;",{0x2225,0x0,0x0}}, {"SQCAP;",{0x2293,0x0,0x0}},
  {"SQCAPS;",{0x2293,0xFE00,0x0}}, {"SQCUP;",{0x2294,0x0,0x0}}, {"SQCUPS;",{0x2294,0xFE00,0x0}},
  {"SQSUB;",{0x228F,0x0,0x0}}, {"SQSUBE;",{0x2291,0x0,0x0}}, {"SQSUBSET;",{0x228F,0x0,0x0}},
  {"SQSUBSETEQ;",{0x2291,0x0,0x0}}, {"SQSUP;",{0x2290,0x0,0x0}}, {"SQSUPE;",{0x2292,0x0,0x0}},
  {"SQSUPSET;",{0x2290,0x0,0x0}}, {"SQSUPSETEQ;",{0x2292,0x0,0x0}}, {"SQU;",{0x25A1,0x0,0x0}},
  {"SQUARE;",{0x25A1,0x0,0x0}}, {"SQUARF;",{0x25AA,0x0,0x0}}, {"SQUF;",{0x25AA,0x0,0x0}},
  {"SRARR;",{0x2192,0x0,0x0}}, {"SSCR;",{0x1D4C8,0x0,0x0}}, {"SSETMN;",{0x2216,0x0,0x0}},
  {"SSMILE;",{0x2323,0x0,0x0}}, {"SSTARF;",{0x22C6,0x0,0x0}}, {"STAR;",{0x2606,0x0,0x0}},
  {"STARF;",{0x2605,0x0,0x0}}, {"STRAIGHTEPSILON;",{0x395,0x0,0x0}}, {"STRAIGHTPHI;",{0x3A6,0x0,0x0}},
  {"STRNS;",{0xAF,0x0,0x0}}, {"SUB;",{0x2282,0x0,0x0}}, {"SUBDOT;",{0x2ABD,0x0,0x0}},
  {"SUBE;",{0x2286,0x0,0x0}}, {"SUBEDOT;",{0x2AC3,0x0,0x0}}, {"SUBMULT;",{0x2AC1,0x0,0x0}},
  {"SUBNE;",{0x228A,0x0,0x0}}, {"SUBPLUS;",{0x2ABF,0x0,0x0}}, {"SUBRARR;",{0x2979,0x0,0x0}},
  {"SUBSET;",{0x2282,0x0,0x0}}, {"SUBSETEQ;",{0x2286,0x0,0x0}}, {"SUBSETEQQ;",{0x2AC5,0x0,0x0}},
  {"SUBSETNEQ;",{0x228A,0x0,0x0}}, {"SUBSETNEQQ;",{0x2ACB,0x0,0x0}}, {"SUBSIM;",{0x2AC7,0x0,0x0}},
  {"SUBSUB;",{0x2AD5,0x0,0x0}}, {"SUBSUP;",{0x2AD3,0x0,0x0}}, {"SUCC;",{0x227B,0x0,0x0}},
  {"SUCCAPPROX;",{0x2AB8,0x0,0x0}}, {"SUCCCURLYEQ;",{0x227D,0x0,0x0}}, {"SUCCEQ;",{0x2AB0,0x0,0x0}},
  {"SUCCNAPPROX;",{0x2ABA,0x0,0x0}}, {"SUCCNEQQ;",{0x2AB6,0x0,0x0}}, {"SUCCNSIM;",{0x22E9,0x0,0x0}},
  {"SUCCSIM;",{0x227F,0x0,0x0}}, {"SUM;",{0x2211,0x0,0x0}}, {"SUNG;",{0x266A,0x0,0x0}},
  {"SUP1;",{0xB9,0x0,0x0}}, {"SUP2;",{0xB2,0x0,0x0}}, {"SUP3;",{0xB3,0x0,0x0}},
  {"SUP;",{0x2283,0x0,0x0}}, {"SUPDOT;",{0x2ABE,0x0,0x0}}, {"SUPDSUB;",{0x2AD8,0x0,0x0}},
  {"SUPE;",{0x2287,0x0,0x0}}, {"SUPEDOT;",{0x2AC4,0x0,0x0}}, {"SUPHSOL;",{0x27C9,0x0,0x0}},
  {"SUPHSUB;",{0x2AD7,0x0,0x0}}, {"SUPLARR;",{0x297B,0x0,0x0}}, {"SUPMULT;",{0x2AC2,0x0,0x0}},
  {"SUPNE;",{0x228B,0x0,0x0}}, {"SUPPLUS;",{0x2AC0,0x0,0x0}}, {"SUPSET;",{0x2283,0x0,0x0}},
  {"SUPSETEQ;",{0x2287,0x0,0x0}}, {"SUPSETEQQ;",{0x2AC6,0x0,0x0}}, {"SUPSETNEQ;",{0x228B,0x0,0x0}},
  {"SUPSETNEQQ;",{0x2ACC,0x0,0x0}}, {"SUPSIM;",{0x2AC8,0x0,0x0}}, {"SUPSUB;",{0x2AD4,0x0,0x0}},
  {"SUPSUP;",{0x2AD6,0x0,0x0}}, {"SWARHK;",{0x2926,0x0,0x0}}, {"SWARR;",{0x2199,0x0,0x0}},
  {"SWARROW;",{0x2199,0x0,0x0}}, {"SWNWAR;",{0x292A,0x0,0x0}}, {"SZLIG;",{0x53,0x53,0x0}},
  {"TARGET;",{0x2316,0x0,0x0}}, {"TAU;",{0x3A4,0x0,0x0}}, {"TBRK;",{0x23B4,0x0,0x0}},
  {"TCARON;",{0x164,0x0,0x0}}, {"TCEDIL;",{0x162,0x0,0x0}}, {"TCY;",{0x422,0x0,0x0}},
  {"TDOT;",{0x20DB,0x0,0x0}}, {"TELREC;",{0x2315,0x0,0x0}}, {"TFR;",{0x1D531,0x0,0x0}},
  {"THERE4;",{0x2234,0x0,0x0}}, {"THEREFORE;",{0x2234,0x0,0x0}}, {"THETA;",{0x398,0x0,0x0}},
  {"THETASYM;",{0x398,0x0,0x0}}, {"THETAV;",{0x398,0x0,0x0}}, {"THICKAPPROX;",{0x2248,0x0,0x0}},
  {"THICKSIM;",{0x223C,0x0,0x0}}, {"THINSP;",{0x2009,0x0,0x0}}, {"THKAP;",{0x2248,0x0,0x0}},
  {"THKSIM;",{0x223C,0x0,0x0}}, {"TILDE;",{0x2DC,0x0,0x0}}, {"TIMES;",{0xD7,0x0,0x0}},
  {"TIMESB;",{0x22A0,0x0,0x0}}, {"TIMESBAR;",{0x2A31,0x0,0x0}}, {"TIMESD;",{0x2A30,0x0,0x0}},
  {"TINT;",{0x222D,0x0,0x0}}, {"TOEA;",{0x2928,0x0,0x0}}, {"TOP;",{0x22A4,0x0,0x0}},
  {"TOPBOT;",{0x2336,0x0,0x0}}, {"TOPCIR;",{0x2AF1,0x0,0x0}}, {"TOPF;",{0x1D565,0x0,0x0}},
  {"TOPFORK;",{0x2ADA,0x0,0x0}}, {"TOSA;",{0x2929,0x0,0x0}}, {"TPRIME;",{0x2034,0x0,0x0}},
  {"TRIANGLE;",{0x25B5,0x0,0x0}}, {"TRIANGLEDOWN;",{0x25BF,0x0,0x0}}, {"TRIANGLELEFT;",{0x25C3,0x0,0x0}},
  {"TRIANGLELEFTEQ;",{0x22B4,0x0,0x0}}, {"TRIANGLEQ;",{0x225C,0x0,0x0}}, {"TRIANGLERIGHT;",{0x25B9,0x0,0x0}},
  {"TRIANGLERIGHTEQ;",{0x22B5,0x0,0x0}}, {"TRIDOT;",{0x25EC,0x0,0x0}}, {"TRIE;",{0x225C,0x0,0x0}},
  {"TRIMINUS;",{0x2A3A,0x0,0x0}}, {"TRIPLUS;",{0x2A39,0x0,0x0}}, {"TRISB;",{0x29CD,0x0,0x0}},
  {"TRITIME;",{0x2A3B,0x0,0x0}}, {"TRPEZIUM;",{0x23E2,0x0,0x0}}, {"TSCR;",{0x1D4C9,0x0,0x0}},
  {"TSCY;",{0x426,0x0,0x0}}, {"TSHCY;",{0x40B,0x0,0x0}}, {"TSTROK;",{0x166,0x0,0x0}},
  {"TWIXT;",{0x226C,0x0,0x0}}, {"TWOHEADLEFTARROW;",{0x219E,0x0,0x0}}, {"TWOHEADRIGHTARROW;",{0x21A0,0x0,0x0}},
  {"UACUTE;",{0xDA,0x0,0x0}}, {"UARR;",{0x2191,0x0,0x0}}, {"UBRCY;",{0x40E,0x0,0x0}},
  {"UBREVE;",{0x16C,0x0,0x0}}, {"UCIRC;",{0xDB,0x0,0x0}}, {"UCY;",{0x423,0x0,0x0}},
  {"UDARR;",{0x21C5,0x0,0x0}}, {"UDBLAC;",{0x170,0x0,0x0}}, {"UDHAR;",{0x296E,0x0,0x0}},
  {"UFISHT;",{0x297E,0x0,0x0}}, {"UFR;",{0x1D532,0x0,0x0}}, {"UGRAVE;",{0xD9,0x0,0x0}},
  {"UHARL;",{0x21BF,0x0,0x0}}, {"UHARR;",{0x21BE,0x0,0x0}}, {"UHBLK;",{0x2580,0x0,0x0}},
  {"ULCORN;",{0x231C,0x0,0x0}}, {"ULCORNER;",{0x231C,0x0,0x0}}, {"ULCROP;",{0x230F,0x0,0x0}},
  {"ULTRI;",{0x25F8,0x0,0x0}}, {"UMACR;",{0x16A,0x0,0x0}}, {"UML;",{0xA8,0x0,0x0}},
  {"UOGON;",{0x172,0x0,0x0}}, {"UOPF;",{0x1D566,0x0,0x0}}, {"UPARROW;",{0x2191,0x0,0x0}},
  {"UPDOWNARROW;",{0x2195,0x0,0x0}}, {"UPHARPOONLEFT;",{0x21BF,0x0,0x0}}, {"UPHARPOONRIGHT;",{0x21BE,0x0,0x0}},
  {"UPLUS;",{0x228E,0x0,0x0}}, {"UPSI;",{0x3A5,0x0,0x0}}, {"UPSIH;",{0x3D2,0x0,0x0}},
  {"UPSILON;",{0x3A5,0x0,0x0}}, {"UPUPARROWS;",{0x21C8,0x0,0x0}}, {"URCORN;",{0x231D,0x0,0x0}},
  {"URCORNER;",{0x231D,0x0,0x0}}, {"URCROP;",{0x230E,0x0,0x0}}, {"URING;",{0x16E,0x0,0x0}},
  {"URTRI;",{0x25F9,0x0,0x0}}, {"USCR;",{0x1D4CA,0x0,0x0}}, {"UTDOT;",{0x22F0,0x0,0x0}},
  {"UTILDE;",{0x168,0x0,0x0}}, {"UTRI;",{0x25B5,0x0,0x0}}, {"UTRIF;",{0x25B4,0x0,0x0}},
  {"UUARR;",{0x21C8,0x0,0x0}}, {"UUML;",{0xDC,0x0,0x0}}, {"UWANGLE;",{0x29A7,0x0,0x0}},
  {"VANGRT;",{0x299C,0x0,0x0}}, {"VAREPSILON;",{0x395,0x0,0x0}}, {"VARKAPPA;",{0x39A,0x0,0x0}},
  {"VARNOTHING;",{0x2205,0x0,0x0}}, {"VARPHI;",{0x3A6,0x0,0x0}}, {"VARPI;",{0x3A0,0x0,0x0}},
  {"VARPROPTO;",{0x221D,0x0,0x0}}, {"VARR;",{0x2195,0x0,0x0}}, {"VARRHO;",{0x3A1,0x0,0x0}},
  {"VARSIGMA;",{0x3A3,0x0,0x0}}, {"VARSUBSETNEQ;",{0x228A,0xFE00,0x0}}, {"VARSUBSETNEQQ;",{0x2ACB,0xFE00,0x0}},
  {"VARSUPSETNEQ;",{0x228B,0xFE00,0x0}}, {"VARSUPSETNEQQ;",{0x2ACC,0xFE00,0x0}}, {"VARTHETA;",{0x398,0x0,0x0}},
  {"VARTRIANGLELEFT;",{0x22B2,0x0,0x0}}, {"VARTRIANGLERIGHT;",{0x22B3,0x0,0x0}}, {"VCY;",{0x412,0x0,0x0}},
  {"VDASH;",{0x22A2,0x0,0x0}}, {"VEE;",{0x2228,0x0,0x0}}, {"VEEBAR;",{0x22BB,0x0,0x0}},
  {"VEEEQ;",{0x225A,0x0,0x0}}, {"VELLIP;",{0x22EE,0x0,0x0}}, {"VERBAR;",{0x7C,0x0,0x0}},
  {"VERT;",{0x7C,0x0,0x0}}, {"VFR;",{0x1D533,0x0,0x0}}, {"VLTRI;",{0x22B2,0x0,0x0}},
  {"VNSUB;",{0x2282,0x20D2,0x0}}, {"VNSUP;",{0x2283,0x20D2,0x0}}, {"VOPF;",{0x1D567,0x0,0x0}},
  {"VPROP;",{0x221D,0x0,0x0}}, {"VRTRI;",{0x22B3,0x0,0x0}}, {"VSCR;",{0x1D4CB,0x0,0x0}},
  {"VSUBNE;",{0x228A,0xFE00,0x0}}, {"VSUPNE;",{0x228B,0xFE00,0x0}}, {"VZIGZAG;",{0x299A,0x0,0x0}},
  {"WCIRC;",{0x174,0x0,0x0}}, {"WEDBAR;",{0x2A5F,0x0,0x0}}, {"WEDGE;",{0x2227,0x0,0x0}},
  {"WEDGEQ;",{0x2259,0x0,0x0}}, {"WEIERP;",{0x2118,0x0,0x0}}, {"WFR;",{0x1D534,0x0,0x0}},
  {"WOPF;",{0x1D568,0x0,0x0}}, {"WP;",{0x2118,0x0,0x0}}, {"WR;",{0x2240,0x0,0x0}},
  {"WREATH;",{0x2240,0x0,0x0}}, {"WSCR;",{0x1D4CC,0x0,0x0}}, {"XCAP;",{0x22C2,0x0,0x0}},
  {"XCIRC;",{0x25EF,0x0,0x0}}, {"XCUP;",{0x22C3,0x0,0x0}}, {"XDTRI;",{0x25BD,0x0,0x0}},
  {"XFR;",{0x1D535,0x0,0x0}}, {"XHARR;",{0x27F7,0x0,0x0}}, {"XI;",{0x39E,0x0,0x0}},
  {"XLARR;",{0x27F5,0x0,0x0}}, {"XMAP;",{0x27FC,0x0,0x0}}, {"XNIS;",{0x22FB,0x0,0x0}},
  {"XODOT;",{0x2A00,0x0,0x0}}, {"XOPF;",{0x1D569,0x0,0x0}}, {"XOPLUS;",{0x2A01,0x0,0x0}},
  {"XOTIME;",{0x2A02,0x0,0x0}}, {"XRARR;",{0x27F6,0x0,0x0}}, {"XSCR;",{0x1D4CD,0x0,0x0}},
  {"XSQCUP;",{0x2A06,0x0,0x0}}, {"XUPLUS;",{0x2A04,0x0,0x0}}, {"XUTRI;",{0x25B3,0x0,0x0}},
  {"XVEE;",{0x22C1,0x0,0x0}}, {"XWEDGE;",{0x22C0,0x0,0x0}}, {"YACUTE;",{0xDD,0x0,0x0}},
  {"YACY;",{0x42F,0x0,0x0}}, {"YCIRC;",{0x176,0x0,0x0}}, {"YCY;",{0x42B,0x0,0x0}},
  {"YEN;",{0xA5,0x0,0x0}}, {"YFR;",{0x1D536,0x0,0x0}}, {"YICY;",{0x407,0x0,0x0}},
  {"YOPF;",{0x1D56A,0x0,0x0}}, {"YSCR;",{0x1D4CE,0x0,0x0}}, {"YUCY;",{0x42E,0x0,0x0}},
  {"YUML;",{0x178,0x0,0x0}}, {"ZACUTE;",{0x179,0x0,0x0}}, {"ZCARON;",{0x17D,0x0,0x0}},
  {"ZCY;",{0x417,0x0,0x0}}, {"ZDOT;",{0x17B,0x0,0x0}}, {"ZEETRF;",{0x2128,0x0,0x0}},
  {"ZETA;",{0x396,0x0,0x0}}, {"ZFR;",{0x1D537,0x0,0x0}}, {"ZHCY;",{0x416,0x0,0x0}},
  {"ZIGRARR;",{0x21DD,0x0,0x0}}, {"ZOPF;",{0x1D56B,0x0,0x0}}, {"ZSCR;",{0x1D4CF,0x0,0x0}},
  {"ZWJ;",{0x200D,0x0,0x0}}, {"ZWNJ;",{0x200C,0x0,0x0}},
};

/* html.unescape: numeric references to these code points decode to nothing */
static const sdx__urange sdx__html_invalid_codepoints[22] = {
  {0x1,0x8}, {0xB,0xB}, {0xE,0x1F}, {0x7F,0x9F}, {0xFDD0,0xFDEF}, {0xFFFE,0xFFFF},
  {0x1FFFE,0x1FFFF}, {0x2FFFE,0x2FFFF}, {0x3FFFE,0x3FFFF}, {0x4FFFE,0x4FFFF}, {0x5FFFE,0x5FFFF},
  {0x6FFFE,0x6FFFF}, {0x7FFFE,0x7FFFF}, {0x8FFFE,0x8FFFF}, {0x9FFFE,0x9FFFF}, {0xAFFFE,0xAFFFF},
  {0xBFFFE,0xBFFFF}, {0xCFFFE,0xCFFFF}, {0xDFFFE,0xDFFFF}, {0xEFFFE,0xEFFFF}, {0xFFFFE,0xFFFFF},
  {0x10FFFE,0x10FFFF},
};


/* ---- src/text/tokenizer.c ---- */

/* ===================================================================== */
/*  CLIP tokenizer: vocabulary loading, text clean-up, BPE                */
/* ===================================================================== */
/* Reproduces OpenAI CLIP's SimpleTokenizer.encode:
 *   ftfy.fix_text -> html.unescape twice -> strip -> collapse whitespace
 *   -> str.lower -> pre-tokenizer regex -> byte-level BPE.
 * ftfy is reproduced for the fixes prompts actually need (see
 * sdx__ftfy_pass); everything else follows the Python semantics exactly,
 * with Unicode data generated from Python's unicodedata
 * (tools/gen_unicode.py). Text is processed as arrays of code points. */

#define SDX__CLIP_MAX_MERGES (49152 - 256 - 2)
#define SDX__VOCAB_MAX_BYTES ((size_t)256 << 20)

struct sdx_tokenizer {
    sdx_ctx *ctx;
    int32_t n_vocab, n_merges, bos, eos;
    int32_t byte_id[256];       /* id of the character standing for byte b */
    int32_t byte_end_id[256];   /* id of that character + "</w>" */
    /* (left id, right id) -> (rank, merged id), open addressing */
    uint64_t *pair_key;         /* ((left << 32) | right) + 1; 0 = empty */
    int32_t *pair_rank, *pair_id;
    size_t pair_mask;
};

/* ---- code point buffers ---------------------------------------------- */

typedef struct sdx__cps {
    sdx_ctx *ctx;
    uint32_t *v;
    size_t n, cap;
    int oom;            /* a push failed; checked once per pass */
} sdx__cps;

static void sdx__cps_push(sdx__cps *b, uint32_t c) {
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 64;
        uint32_t *nv;
        if (b->oom || ncap > SIZE_MAX / sizeof(uint32_t)) { b->oom = 1; return; }
        nv = (uint32_t *)sdx__realloc(b->ctx, b->v, ncap * sizeof(uint32_t));
        if (!nv) { b->oom = 1; return; }
        b->v = nv;
        b->cap = ncap;
    }
    b->v[b->n++] = c;
}

static void sdx__cps_push_n(sdx__cps *b, const uint32_t *c, size_t n) {
    for (size_t i = 0; i < n; i++) sdx__cps_push(b, c[i]);
}

/* Pushes up to n code points of a zero-padded table entry. */
static void sdx__cps_push_z(sdx__cps *b, const uint32_t *c, int n) {
    for (int i = 0; i < n && c[i]; i++) sdx__cps_push(b, c[i]);
}

/* A pass reads `in` and writes `out`; then the two swap roles. */
static void sdx__cps_swap(sdx__cps *a, sdx__cps *b) {
    sdx__cps t = *a;
    *a = *b;
    *b = t;
    b->n = 0;
}

/* ---- Unicode lookups ----------------------------------------------------- */

static int sdx__in_ranges(const sdx__urange *r, size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < r[mid].lo) hi = mid;
        else if (c > r[mid].hi) lo = mid + 1;
        else return 1;
    }
    return 0;
}
#define SDX__IN(table, c) sdx__in_ranges(table, sizeof(table) / sizeof((table)[0]), c)

/* Entry whose first uint32_t field equals key, in a table sorted by it. */
static const void *sdx__ufind(const void *base, size_t n, size_t stride, uint32_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t k;
        memcpy(&k, (const char *)base + mid * stride, sizeof k);
        if (k < key) lo = mid + 1;
        else if (k > key) hi = mid;
        else return (const char *)base + mid * stride;
    }
    return NULL;
}
#define SDX__UFIND(table, key) sdx__ufind(table, sizeof(table) / sizeof((table)[0]), sizeof((table)[0]), key)

static int sdx__is_letter(uint32_t c) {
    if (c < 128) return (c | 32) >= 'a' && (c | 32) <= 'z';
    return SDX__IN(sdx__uni_letter, c);
}
static int sdx__is_number(uint32_t c) {
    if (c < 128) return c >= '0' && c <= '9';
    return SDX__IN(sdx__uni_number, c);
}
/* \s of the `regex` module (Unicode White_Space). */
static int sdx__is_white_space(uint32_t c) {
    if (c < 128) return c == ' ' || (c >= 9 && c <= 13);
    return SDX__IN(sdx__uni_white_space, c);
}
/* str.isspace(): Python's strip() and re's \s. */
static int sdx__is_py_space(uint32_t c) {
    if (c < 128) return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
    return SDX__IN(sdx__uni_py_space, c);
}
/* Python re's \w. */
static int sdx__is_py_word(uint32_t c) {
    if (c < 128) return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
    return SDX__IN(sdx__uni_py_alnum, c);
}
static uint32_t sdx__ccc(uint32_t c) {
    size_t lo = 0, hi = sizeof sdx__uni_ccc / sizeof sdx__uni_ccc[0];
    if (c < 0x300) return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < sdx__uni_ccc[mid].lo) hi = mid;
        else if (c > sdx__uni_ccc[mid].hi) lo = mid + 1;
        else return sdx__uni_ccc[mid].ccc;
    }
    return 0;
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* Decodes n bytes; a byte that does not start a valid sequence (bad lead,
 * truncated, overlong, surrogate, > U+10FFFF) becomes one U+FFFD. */
static void sdx__utf8_decode(sdx__cps *out, const unsigned char *s, size_t n) {
    const unsigned char *end = s + n;
    while (s < end) {
        int len = sdx__utf8_len(s, end);
        uint32_t c;
        if (len == 0) { sdx__cps_push(out, 0xfffd); s++; continue; }
        c = len == 1 ? s[0] : len == 2 ? (s[0] & 0x1fu) : len == 3 ? (s[0] & 0x0fu) : (s[0] & 0x07u);
        for (int i = 1; i < len; i++) c = (c << 6) | (s[i] & 0x3fu);
        sdx__cps_push(out, c);
        s += len;
    }
}

/* ---- HTML entities --------------------------------------------------------- */

/* Entity named name[0..len) in a table sorted by name, or NULL. */
static const sdx__uentity *sdx__entity_find(const sdx__uentity *t, size_t n, const char *name, size_t len) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = t[mid].name;
        int cmp = strncmp(e, name, len);
        if (cmp == 0) cmp = e[len] ? 1 : 0;
        if (cmp == 0) return &t[mid];
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}
#define SDX__HTML5_FIND(name, len) \
    sdx__entity_find(sdx__html5_entities, sizeof sdx__html5_entities / sizeof sdx__html5_entities[0], name, len)

static int sdx__hex_value(uint32_t c) {
    if (c >= '0' && c <= '9') return (int)(c - '0');
    if ((c | 32) >= 'a' && (c | 32) <= 'f') return (int)((c | 32) - 'a' + 10);
    return -1;
}

/* What html.unescape makes of the numeric reference to `num` (saturated
 * above U+10FFFF): the windows-1252 reading of 0x80..0x9F, U+FFFD for NUL,
 * surrogates and out-of-range values, nothing for control characters and
 * noncharacters. */
static void sdx__push_charref(sdx__cps *out, uint32_t num) {
    if (num == 0) sdx__cps_push(out, 0xfffd);
    else if (num == 0x0d) sdx__cps_push(out, 0x0d);
    else if (num >= 0x80 && num <= 0x9f) sdx__cps_push(out, sdx__cp1252_80[num - 0x80]);
    else if ((num >= 0xd800 && num <= 0xdfff) || num > 0x10ffff) sdx__cps_push(out, 0xfffd);
    else if (SDX__IN(sdx__html_invalid_codepoints, num)) return;
    else sdx__cps_push(out, num);
}

/* Parses the digits of a numeric reference at s[i] (just after "&#").
 * Returns the index after the digits (== i when there are none). */
static size_t sdx__charref_digits(const uint32_t *s, size_t n, size_t i, int hex, uint32_t *num) {
    uint64_t v = 0;
    size_t start = i;
    for (; i < n; i++) {
        int d = hex ? sdx__hex_value(s[i]) : (s[i] >= '0' && s[i] <= '9' ? (int)(s[i] - '0') : -1);
        if (d < 0) break;
        v = v * (hex ? 16 : 10) + (uint64_t)d;
        if (v > 0x110000) v = 0x110000;     /* saturate: all such values mean U+FFFD */
    }
    *num = (uint32_t)v;
    return i == start ? start : i;
}

/* Python's html.unescape: "&#123;", "&#x7b;" (';' optional), named
 * references from the HTML5 table, including the longest-prefix rule for
 * legacy names written without ';' ("&notit;" -> "¬it;"). */
static void sdx__html_unescape(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        char name[34];
        size_t k, len = 0;
        if (s[i] != '&') { sdx__cps_push(out, s[i++]); continue; }
        if (i + 1 < n && s[i + 1] == '#') {
            int hex = i + 2 < n && (s[i + 2] == 'x' || s[i + 2] == 'X');
            uint32_t num;
            size_t start = i + 2 + (size_t)hex;
            /* "&#x" without hex digits may still be decimal-less text */
            k = sdx__charref_digits(s, n, start, hex, &num);
            if (k == start) { sdx__cps_push(out, '&'); i++; continue; }
            if (k < n && s[k] == ';') k++;
            sdx__push_charref(out, num);
            i = k;
            continue;
        }
        for (k = i + 1; k < n && len < 32; k++, len++) {
            uint32_t c = s[k];
            if (c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';') break;
            name[len] = c < 128 ? (char)c : (char)0x7f;   /* never part of an entity name */
        }
        if (len == 0) { sdx__cps_push(out, '&'); i++; continue; }
        if (k < n && s[k] == ';') { name[len++] = ';'; k++; }
        {
            const sdx__uentity *e = SDX__HTML5_FIND(name, len);
            size_t x = len;
            if (!e)
                for (x = len - 1; x >= 2 && !(e = SDX__HTML5_FIND(name, x)); x--) {}
            if (e) {
                sdx__cps_push_z(out, e->cp, 3);
                sdx__cps_push_n(out, s + i + 1 + x, len - x);   /* the part after the matched prefix */
            } else {
                sdx__cps_push_n(out, s + i, k - i);
            }
        }
        i = k;
    }
}

/* ftfy's unescape_html: only complete "&name;" / "&#num;" forms of at most
 * 24 alphanumerics, plus all-caps spellings of lower-case entity names. */
static void sdx__ftfy_unescape(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        char name[28];
        size_t k, len = 0;
        int numeric;
        if (s[i] != '&') { sdx__cps_push(out, s[i++]); continue; }
        numeric = i + 1 < n && s[i + 1] == '#';
        for (k = i + 1 + (size_t)numeric; k < n && len < 24; k++, len++) {
            uint32_t c = s[k];
            if (!(c < 128 && sdx__is_py_word(c) && c != '_')) break;
            name[len] = (char)c;
        }
        if (len == 0 || k >= n || s[k] != ';') { sdx__cps_push(out, s[i++]); continue; }
        name[len] = ';';
        if (numeric) {
            /* html.unescape of the whole match, kept only if it consumed the ';' */
            int hex = name[0] == 'x' || name[0] == 'X';
            uint32_t num;
            size_t start = i + 2 + (size_t)hex;
            if (sdx__charref_digits(s, n, start, hex, &num) != k || k == start) { sdx__cps_push(out, s[i++]); continue; }
            sdx__push_charref(out, num);
        } else {
            const sdx__uentity *e = SDX__HTML5_FIND(name, len + 1);
            if (!e) e = sdx__entity_find(sdx__ftfy_upper_entities,
                                         sizeof sdx__ftfy_upper_entities / sizeof sdx__ftfy_upper_entities[0], name, len + 1);
            if (!e) { sdx__cps_push(out, s[i++]); continue; }
            sdx__cps_push_z(out, e->cp, 3);
        }
        i = k + 1;
    }
}

/* ---- ftfy fixes ------------------------------------------------------------- */

/* The byte a character came from if it is UTF-8 mojibake read as
 * windows-1252 or Latin-1 (bytes >= 0x80 only), else -1. */
static int sdx__mojibake_byte(uint32_t c) {
    if (c >= 0x80 && c <= 0xff) return (int)c;
    if (c >= 0x152 && c <= 0x2122)
        for (int b = 0; b < 32; b++)
            if (sdx__cp1252_80[b] == c) return 0x80 + b;
    return -1;
}

/* ftfy's fix_encoding for its most common case: a run of characters that
 * re-encoded as windows-1252/Latin-1 forms valid multi-byte UTF-8
 * ("cafÃ©" -> "café", "â€™" -> "’"). A run is replaced only if every
 * byte belongs to a valid sequence and the result has no control
 * characters; ASCII never takes part (UTF-8 sequences have no ASCII
 * bytes), so runs are maximal spans of non-ASCII re-encodable characters.
 * ftfy's statistical badness heuristics and rarer codecs are not
 * reproduced. */
static int sdx__mojibake_seq(const uint32_t *s, size_t n, uint32_t *cp) {
    unsigned char b[4];
    size_t m = n < 4 ? n : 4;
    int len;
    for (size_t k = 0; k < m; k++) b[k] = (unsigned char)sdx__mojibake_byte(s[k]);
    len = sdx__utf8_len(b, b + m);
    if (len < 2) return 0;
    *cp = len == 2 ? (b[0] & 0x1fu) : len == 3 ? (b[0] & 0x0fu) : (b[0] & 0x07u);
    for (int q = 1; q < len; q++) *cp = (*cp << 6) | (b[q] & 0x3fu);
    return len;
}

static void sdx__fix_mojibake(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i, p;
        uint32_t c;
        int len = 0;
        while (j < n && sdx__mojibake_byte(s[j]) >= 0) j++;
        if (j - i < 2) { sdx__cps_push(out, s[i++]); continue; }
        for (p = i; p < j; p += (size_t)len)
            if ((len = sdx__mojibake_seq(s + p, j - p, &c)) == 0 || c < 0xa0) break;
        if (p < j) { sdx__cps_push_n(out, s + i, j - i); i = j; continue; }
        for (p = i; p < j; p += (size_t)len) {
            len = sdx__mojibake_seq(s + p, j - p, &c);
            sdx__cps_push(out, c);
        }
        i = j;
    }
}

/* Characters ftfy's remove_control_chars deletes. */
static int sdx__is_ftfy_control(uint32_t c) {
    return c <= 8 || c == 0x0b || (c >= 0x0e && c <= 0x1f) || c == 0x7f ||
           (c >= 0x206a && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffc);
}

/* fix_c1_controls, fix_latin_ligatures, fix_character_width,
 * uncurl_quotes, fix_line_breaks, remove_terminal_escapes and
 * remove_control_chars, in ftfy's order, each a character map except the
 * two multi-character patterns. */
static uint32_t sdx__uncurl(uint32_t c) {
    if (c == 0x2bc || (c >= 0x2018 && c <= 0x201b)) return '\'';
    if (c >= 0x201c && c <= 0x201f) return '"';
    return c;
}

static void sdx__ftfy_charmaps(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s[i];
        const sdx__umap3 *lig;
        const sdx__umap2 *wide;
        if (c >= 0x80 && c <= 0x9f) c = sdx__cp1252_80[c - 0x80];
        if ((lig = (const sdx__umap3 *)SDX__UFIND(sdx__uni_ligatures, c)) != NULL) {
            for (int k = 0; k < 3 && lig->to[k]; k++) sdx__cps_push(out, sdx__uncurl(lig->to[k]));
        } else if ((wide = (const sdx__umap2 *)SDX__UFIND(sdx__uni_width, c)) != NULL) {
            for (int k = 0; k < 2 && wide->to[k]; k++) sdx__cps_push(out, sdx__uncurl(wide->to[k]));
        } else {
            sdx__cps_push(out, sdx__uncurl(c));
        }
    }
}

static void sdx__fix_line_breaks(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s[i];
        if (c == '\r' && i + 1 < n && s[i + 1] == '\n') continue;
        if (c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85) c = '\n';
        sdx__cps_push(out, c);
    }
}

/* Drops ESC '[' [0-9;]* [A-Za-z] sequences, then control characters. */
static void sdx__remove_controls(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '[') {
            size_t j = i + 2;
            while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) j++;
            if (j < n && (s[j] | 32) >= 'a' && (s[j] | 32) <= 'z') { i = j; continue; }
        }
        if (!sdx__is_ftfy_control(s[i])) sdx__cps_push(out, s[i]);
    }
}

/* ---- NFC ------------------------------------------------------------------ */

#define SDX__HANGUL_S 0xac00u
#define SDX__HANGUL_L 0x1100u
#define SDX__HANGUL_V 0x1161u
#define SDX__HANGUL_T 0x11a7u

static void sdx__nfd_push(sdx__cps *out, uint32_t c) {
    const sdx__unfd *d;
    if (c >= SDX__HANGUL_S && c < SDX__HANGUL_S + 11172) {
        uint32_t si = c - SDX__HANGUL_S;
        sdx__cps_push(out, SDX__HANGUL_L + si / 588);
        sdx__cps_push(out, SDX__HANGUL_V + (si % 588) / 28);
        if (si % 28) sdx__cps_push(out, SDX__HANGUL_T + si % 28);
        return;
    }
    if (c >= 0xc0 && (d = (const sdx__unfd *)SDX__UFIND(sdx__uni_nfd, c)) != NULL) sdx__cps_push_z(out, d->d, 4);
    else sdx__cps_push(out, c);
}

/* Canonical ordering: stable sort of each run of non-starters by class.
 * Long runs use a counting sort so hostile input stays linear. */
static int sdx__canonical_order(sdx_ctx *ctx, uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && sdx__ccc(s[j]) != 0) j++;
        if (j - i > 1 && j - i <= 32) {
            for (size_t a = i + 1; a < j; a++) {
                uint32_t c = s[a], cc = sdx__ccc(c);
                size_t b = a;
                while (b > i && sdx__ccc(s[b - 1]) > cc) { s[b] = s[b - 1]; b--; }
                s[b] = c;
            }
        } else if (j - i > 32) {
            size_t count[257] = { 0 }, m = j - i;
            uint32_t *tmp = (uint32_t *)sdx__malloc(ctx, m * sizeof(uint32_t));
            if (!tmp) return sdx__nomem(ctx, "text normalisation", m * sizeof(uint32_t));
            for (size_t a = i; a < j; a++) count[sdx__ccc(s[a]) + 1]++;
            for (int c = 1; c < 257; c++) count[c] += count[c - 1];
            for (size_t a = i; a < j; a++) tmp[count[sdx__ccc(s[a])]++] = s[a];
            memcpy(s + i, tmp, m * sizeof(uint32_t));
            sdx__free(ctx, tmp);
        }
        i = j + 1;
    }
    return SDX_OK;
}

static uint32_t sdx__compose_pair(uint32_t a, uint32_t b) {
    size_t lo = 0, hi = sizeof sdx__uni_compose / sizeof sdx__uni_compose[0];
    if (a >= SDX__HANGUL_L && a < SDX__HANGUL_L + 19 && b >= SDX__HANGUL_V && b < SDX__HANGUL_V + 21)
        return SDX__HANGUL_S + ((a - SDX__HANGUL_L) * 21 + (b - SDX__HANGUL_V)) * 28;
    if (a >= SDX__HANGUL_S && a < SDX__HANGUL_S + 11172 && (a - SDX__HANGUL_S) % 28 == 0 &&
        b > SDX__HANGUL_T && b < SDX__HANGUL_T + 28)
        return a + (b - SDX__HANGUL_T);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sdx__ucomp *p = &sdx__uni_compose[mid];
        if (p->a < a || (p->a == a && p->b < b)) lo = mid + 1;
        else if (p->a > a || p->b > b) hi = mid;
        else return p->c;
    }
    return 0;
}

/* unicodedata.normalize("NFC"): decompose, order, recompose. Text below
 * U+0300 is already NFC and is passed through. */
static int sdx__nfc(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i, starter = 0, w;
    int have_starter = 0;
    uint32_t last_ccc = 0;
    for (i = 0; i < n && s[i] < 0x300; i++) {}
    if (i == n) { sdx__cps_push_n(out, s, n); return out->oom ? SDX_ERR_NOMEM : SDX_OK; }
    for (i = 0; i < n; i++) sdx__nfd_push(out, s[i]);
    if (out->oom) return SDX_ERR_NOMEM;
    if (sdx__canonical_order(out->ctx, out->v, out->n) != SDX_OK) return SDX_ERR_NOMEM;
    for (i = 0, w = 0; i < out->n; i++) {
        uint32_t c = out->v[i], cc = sdx__ccc(c), comp;
        /* c may join the last starter unless a character in between is
         * a starter or has a class >= c's (it is then "blocked") */
        if (have_starter && (w == starter + 1 || (last_ccc != 0 && last_ccc < cc)) &&
            (comp = sdx__compose_pair(out->v[starter], c)) != 0) {
            out->v[starter] = comp;
            continue;
        }
        if (cc == 0) { starter = w; have_starter = 1; last_ccc = 0; }
        else last_ccc = cc;
        out->v[w++] = c;
    }
    out->n = w;
    return SDX_OK;
}

/* ---- the clean-up pipeline ----------------------------------------------- */

/* One ftfy.fix_and_explain round over one line (fix_text works line by
 * line); repeated by the caller until nothing changes. */
static int sdx__ftfy_round(sdx__cps *a, sdx__cps *b, int unescape) {
    if (unescape) { sdx__ftfy_unescape(b, a->v, a->n); sdx__cps_swap(a, b); }
    sdx__fix_mojibake(b, a->v, a->n);    sdx__cps_swap(a, b);
    sdx__ftfy_charmaps(b, a->v, a->n);   sdx__cps_swap(a, b);
    sdx__fix_line_breaks(b, a->v, a->n); sdx__cps_swap(a, b);
    sdx__remove_controls(b, a->v, a->n); sdx__cps_swap(a, b);
    if (a->oom || b->oom) return SDX_ERR_NOMEM;
    if (sdx__nfc(b, a->v, a->n) != SDX_OK || b->oom) return SDX_ERR_NOMEM;
    sdx__cps_swap(a, b);
    return SDX_OK;
}

/* ftfy.fix_text: line by line (each line keeps its '\n'), each line fixed
 * until nothing changes (at most 8 rounds). HTML entities are decoded by
 * ftfy only until a line containing '<' is met (ftfy then treats the text
 * as HTML for the rest of the call). */
static int sdx__ftfy(sdx__cps *text) {
    sdx_ctx *ctx = text->ctx;
    sdx__cps result = { ctx, NULL, 0, 0, 0 }, a = { ctx, NULL, 0, 0, 0 };
    sdx__cps b = { ctx, NULL, 0, 0, 0 }, prev = { ctx, NULL, 0, 0, 0 };
    int unescape = 1, rc = SDX_OK;
    size_t pos = 0;
    while (pos < text->n && rc == SDX_OK) {
        size_t end = pos;
        while (end < text->n && text->v[end] != '\n') end++;
        if (end < text->n) end++;
        for (size_t i = pos; i < end; i++) if (text->v[i] == '<') unescape = 0;
        a.n = 0;
        sdx__cps_push_n(&a, text->v + pos, end - pos);
        for (int round = 0; round < 8 && !a.oom; round++) {
            prev.n = 0;
            sdx__cps_push_n(&prev, a.v, a.n);
            if (prev.oom || (rc = sdx__ftfy_round(&a, &b, unescape)) != SDX_OK) break;
            if (a.n == prev.n && (a.n == 0 || memcmp(a.v, prev.v, a.n * sizeof(uint32_t)) == 0)) break;
        }
        sdx__cps_push_n(&result, a.v, a.n);
        if (a.oom || prev.oom || result.oom) rc = SDX_ERR_NOMEM;
        pos = end;
    }
    sdx__free(ctx, a.v);
    sdx__free(ctx, b.v);
    sdx__free(ctx, prev.v);
    if (rc != SDX_OK) { sdx__free(ctx, result.v); return rc; }
    sdx__free(ctx, text->v);
    *text = result;
    return SDX_OK;
}

/* Python's strip(), then runs of White_Space become one space. The
 * second strip() of whitespace_clean has nothing left to do: White_Space
 * is a subset of str.isspace(), so the ends are not White_Space. */
static void sdx__collapse_space(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0, end = n;
    while (i < end && sdx__is_py_space(s[i])) i++;
    while (end > i && sdx__is_py_space(s[end - 1])) end--;
    while (i < end) {
        if (sdx__is_white_space(s[i])) {
            while (i < end && sdx__is_white_space(s[i])) i++;
            sdx__cps_push(out, ' ');
        } else {
            sdx__cps_push(out, s[i++]);
        }
    }
}

/* str.lower(): full mapping, incl. U+0130 -> "i\u0307" and the
 * final-sigma rule (Σ -> ς at the end of a word). */
static void sdx__lower(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s[i];
        const sdx__umap *m;
        if (c < 128) { sdx__cps_push(out, (c >= 'A' && c <= 'Z') ? c + 32 : c); continue; }
        if (c == 0x130) { sdx__cps_push(out, 'i'); sdx__cps_push(out, 0x307); continue; }
        if (c == 0x3a3) {
            size_t j = i;
            int final = 0;
            while (j > 0 && SDX__IN(sdx__uni_case_ignorable, s[j - 1])) j--;
            if (j > 0 && SDX__IN(sdx__uni_cased, s[j - 1])) {
                j = i + 1;
                while (j < n && SDX__IN(sdx__uni_case_ignorable, s[j])) j++;
                final = j == n || !SDX__IN(sdx__uni_cased, s[j]);
            }
            sdx__cps_push(out, final ? 0x3c2 : 0x3c3);
            continue;
        }
        m = (const sdx__umap *)SDX__UFIND(sdx__uni_lower, c);
        sdx__cps_push(out, m ? m->to : c);
    }
}

/* The whole clean-up; `text` holds the decoded input on entry and the
 * cleaned, lower-cased text on return. */
static int sdx__clip_clean(sdx__cps *text) {
    sdx__cps t1 = { text->ctx, NULL, 0, 0, 0 };
    int rc = sdx__ftfy(text);
    if (rc == SDX_OK) {
        t1.n = 0;
        sdx__html_unescape(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        sdx__html_unescape(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        sdx__collapse_space(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        sdx__lower(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        if (text->oom || t1.oom) rc = SDX_ERR_NOMEM;
    }
    sdx__free(text->ctx, t1.v);
    return rc;
}

/* ---- pre-tokenizer ------------------------------------------------------ */

/* Length of the CLIP regex match at s[i] (case-insensitive, as the regex
 * module runs it), or 0 for whitespace, which no alternative matches:
 *   <|startoftext|> | <|endoftext|> | 's|'t|'re|'ve|'m|'ll|'d
 *   | \p{L}+ | \p{N} | [^\s\p{L}\p{N}]+                                  */
static size_t sdx__pretoken(const uint32_t *s, size_t n, size_t i, int *special) {
    static const char *const specials[2] = { "<|startoftext|>", "<|endoftext|>" };
    static const char *const contractions[7] = { "s", "t", "re", "ve", "m", "ll", "d" };
    size_t j;
    *special = -1;
    if (s[i] == '<') {
        for (int k = 0; k < 2; k++) {
            const char *p = specials[k];
            int exact = 1;
            for (j = 0; p[j] && i + j < n; j++) {
                /* case-insensitive 's' also matches U+017F (long s) */
                if (s[i + j] == (uint32_t)p[j]) continue;
                if (p[j] == 's' && s[i + j] == 0x17f) { exact = 0; continue; }
                break;
            }
            if (!p[j]) { if (exact) *special = k; return j; }
        }
    }
    if (s[i] == '\'' && i + 1 < n) {
        for (int k = 0; k < 7; k++) {
            const char *p = contractions[k];
            for (j = 0; p[j] && i + 1 + j < n; j++)
                if (s[i + 1 + j] != (uint32_t)p[j] && !(p[j] == 's' && s[i + 1 + j] == 0x17f)) break;
            if (!p[j]) return j + 1;
        }
    }
    if (sdx__is_letter(s[i])) {
        for (j = i + 1; j < n && sdx__is_letter(s[j]); j++) {}
        return j - i;
    }
    if (sdx__is_number(s[i])) return 1;
    if (sdx__is_white_space(s[i])) return 0;
    for (j = i + 1; j < n && !sdx__is_white_space(s[j]) && !sdx__is_letter(s[j]) && !sdx__is_number(s[j]); j++) {}
    return j - i;
}

/* ---- BPE ------------------------------------------------------------------- */

static size_t sdx__pair_slot(const sdx_tokenizer *t, uint64_t key) {
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & t->pair_mask;
}

/* Rank of merging (left, right) and the merged id; 0 if not a merge. */
static int sdx__pair_lookup(const sdx_tokenizer *t, int32_t left, int32_t right, int32_t *rank, int32_t *id) {
    uint64_t key = (((uint64_t)(uint32_t)left << 32) | (uint32_t)right) + 1;
    for (size_t s = sdx__pair_slot(t, key);; s = (s + 1) & t->pair_mask) {
        if (t->pair_key[s] == 0) return 0;
        if (t->pair_key[s] == key) { *rank = t->pair_rank[s]; *id = t->pair_id[s]; return 1; }
    }
}

typedef struct sdx__bpe_sym { int32_t id, prev, next; } sdx__bpe_sym;
typedef struct sdx__bpe_cand { int32_t rank, pos, left, right; } sdx__bpe_cand;

/* Scratch reused across the words of one call. */
typedef struct sdx__bpe_work {
    sdx_ctx *ctx;
    unsigned char *bytes;
    sdx__bpe_sym *sym;
    sdx__bpe_cand *heap;
    size_t cap;                /* symbols the arrays hold */
    int32_t *ids;
    size_t n_ids, cap_ids;
} sdx__bpe_work;

static int sdx__cand_less(const sdx__bpe_cand *a, const sdx__bpe_cand *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void sdx__heap_push(sdx__bpe_cand *h, size_t *n, sdx__bpe_cand c) {
    size_t i = (*n)++;
    while (i > 0 && sdx__cand_less(&c, &h[(i - 1) / 2])) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = c;
}

static sdx__bpe_cand sdx__heap_pop(sdx__bpe_cand *h, size_t *n) {
    sdx__bpe_cand top = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && sdx__cand_less(&h[c + 1], &h[c])) c++;
        if (!sdx__cand_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

static void sdx__bpe_consider(const sdx_tokenizer *t, sdx__bpe_work *w, size_t *nh, int32_t pos) {
    int32_t next, rank, id;
    sdx__bpe_cand c;
    if (pos < 0 || (next = w->sym[pos].next) < 0) return;
    if (!sdx__pair_lookup(t, w->sym[pos].id, w->sym[next].id, &rank, &id)) return;
    c.rank = rank; c.pos = pos; c.left = w->sym[pos].id; c.right = w->sym[next].id;
    sdx__heap_push(w->heap, nh, c);
}

static int sdx__bpe_reserve(sdx__bpe_work *w, size_t nsym) {
    unsigned char *b;
    sdx__bpe_sym *s;
    sdx__bpe_cand *h;
    if (nsym <= w->cap) return SDX_OK;
    if (nsym > (size_t)INT32_MAX / 4) return sdx__fail(w->ctx, SDX_ERR_INVALID_ARG, "tokenizer: word of %zu bytes is too long", nsym);
    b = (unsigned char *)sdx__realloc(w->ctx, w->bytes, nsym);
    if (b) w->bytes = b;
    s = b ? (sdx__bpe_sym *)sdx__realloc(w->ctx, w->sym, nsym * sizeof *s) : NULL;
    if (s) w->sym = s;
    h = s ? (sdx__bpe_cand *)sdx__realloc(w->ctx, w->heap, 3 * nsym * sizeof *h) : NULL;
    if (!h) return sdx__nomem(w->ctx, "tokenizer scratch", 3 * nsym * sizeof *h);
    w->heap = h;
    w->cap = nsym;
    return SDX_OK;
}

static int sdx__emit_id(sdx__bpe_work *w, int32_t id) {
    if (w->n_ids == w->cap_ids) {
        size_t ncap = w->cap_ids ? w->cap_ids * 2 : 64;
        int32_t *ni = (int32_t *)sdx__realloc(w->ctx, w->ids, ncap * sizeof(int32_t));
        if (!ni) return sdx__nomem(w->ctx, "token ids", ncap * sizeof(int32_t));
        w->ids = ni;
        w->cap_ids = ncap;
    }
    w->ids[w->n_ids++] = id;
    return SDX_OK;
}

/* BPE of one pre-token: its UTF-8 bytes as byte characters, the last
 * with "</w>"; then repeatedly the lowest-ranked adjacent pair is merged,
 * leftmost first. A heap keyed by (rank, position) with lazy deletion
 * gives the same result as CLIP's rescan-everything loop (equal ranks
 * are the same pair, merged left to right) in O(n log n). */
static int sdx__bpe_word(const sdx_tokenizer *t, sdx__bpe_work *w, const uint32_t *s, size_t n) {
    size_t nb = 0, nh = 0;
    int rc;
    char tmp[4];
    for (size_t i = 0; i < n; i++) nb += sdx__utf8_put(tmp, s[i]);
    if ((rc = sdx__bpe_reserve(w, nb)) != SDX_OK) return rc;
    nb = 0;
    for (size_t i = 0; i < n; i++) nb += sdx__utf8_put((char *)w->bytes + nb, s[i]);
    for (size_t i = 0; i < nb; i++) {
        w->sym[i].id = i + 1 < nb ? t->byte_id[w->bytes[i]] : t->byte_end_id[w->bytes[i]];
        w->sym[i].prev = (int32_t)i - 1;
        w->sym[i].next = i + 1 < nb ? (int32_t)i + 1 : -1;
    }
    for (size_t i = 0; i + 1 < nb; i++) sdx__bpe_consider(t, w, &nh, (int32_t)i);
    while (nh) {
        sdx__bpe_cand c = sdx__heap_pop(w->heap, &nh);
        sdx__bpe_sym *l = &w->sym[c.pos];
        int32_t r = l->next, rank, id;
        if (l->id != c.left || r < 0 || w->sym[r].id != c.right) continue;   /* stale */
        sdx__pair_lookup(t, c.left, c.right, &rank, &id);
        l->id = id;
        l->next = w->sym[r].next;
        if (l->next >= 0) w->sym[l->next].prev = c.pos;
        w->sym[r].id = -1;
        sdx__bpe_consider(t, w, &nh, l->prev);
        sdx__bpe_consider(t, w, &nh, c.pos);
    }
    for (int32_t i = 0; i >= 0; i = w->sym[i].next)
        if ((rc = sdx__emit_id(w, w->sym[i].id)) != SDX_OK) return rc;
    return SDX_OK;
}

/* Encodes cleaned text into w->ids. */
static int sdx__encode_clean(const sdx_tokenizer *t, sdx__bpe_work *w, const uint32_t *s, size_t n) {
    size_t i = 0;
    int rc;
    while (i < n) {
        int special;
        size_t len = sdx__pretoken(s, n, i, &special);
        if (len == 0) { i++; continue; }
        if (special >= 0) rc = sdx__emit_id(w, special == 0 ? t->bos : t->eos);
        else rc = sdx__bpe_word(t, w, s + i, len);
        if (rc != SDX_OK) return rc;
        i += len;
    }
    return SDX_OK;
}

SDX_API int sdx_tokenize(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t **ids, int *n) {
    sdx__cps cps = { ctx, NULL, 0, 0, 0 };
    sdx__bpe_work w;
    size_t len;
    int rc;
    if (ids) *ids = NULL;
    if (n) *n = 0;
    if (!ctx || !tok || !text || !ids || !n) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenize: NULL argument");
    len = strlen(text);
    if (len > (size_t)INT32_MAX / 8) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenize: text of %zu bytes is too long", len);
    memset(&w, 0, sizeof w);
    w.ctx = ctx;
    sdx__utf8_decode(&cps, (const unsigned char *)text, len);
    rc = cps.oom ? sdx__nomem(ctx, "prompt text", len * 4) : sdx__clip_clean(&cps);
    if (rc == SDX_ERR_NOMEM) rc = sdx__nomem(ctx, "prompt clean-up", len * 16);
    if (rc == SDX_OK) rc = sdx__encode_clean(tok, &w, cps.v, cps.n);
    if (rc == SDX_OK && !w.ids && !(w.ids = (int32_t *)sdx__malloc(ctx, sizeof(int32_t))))
        rc = sdx__nomem(ctx, "token ids", sizeof(int32_t));
    sdx__free(ctx, cps.v);
    sdx__free(ctx, w.bytes);
    sdx__free(ctx, w.sym);
    sdx__free(ctx, w.heap);
    if (rc != SDX_OK) { sdx__free(ctx, w.ids); return rc; }
    *ids = w.ids;
    *n = (int)w.n_ids;
    return SDX_OK;
}

SDX_API void sdx_tokens_free(sdx_ctx *ctx, int32_t *ids) {
    sdx__free(ctx, ids);
}

SDX_API int sdx_tokenize_padded(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t pad_id,
                                int32_t out[SDX_TEXT_CONTEXT]) {
    int32_t *ids;
    int n, rc, keep;
    if (!out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenize_padded: NULL output");
    if ((rc = sdx_tokenize(ctx, tok, text, &ids, &n)) != SDX_OK) return rc;
    keep = SDX__MIN(n, SDX_TEXT_CONTEXT - 2);
    out[0] = tok->bos;
    memcpy(out + 1, ids, (size_t)keep * sizeof(int32_t));
    out[1 + keep] = tok->eos;
    for (int i = keep + 2; i < SDX_TEXT_CONTEXT; i++) out[i] = pad_id;
    sdx_tokens_free(ctx, ids);
    return SDX_OK;
}

SDX_API void sdx_tokenizer_info(const sdx_tokenizer *tok, int *n_vocab, int32_t *bos, int32_t *eos) {
    if (n_vocab) *n_vocab = tok ? tok->n_vocab : 0;
    if (bos) *bos = tok ? tok->bos : -1;
    if (eos) *eos = tok ? tok->eos : -1;
}

/* ---- vocabulary loading ----------------------------------------------------- */

/* GPT-2's bytes_to_unicode: printable bytes stand for themselves, the other
 * 68 (0..32, 127..160, 173) for U+0100.. in byte order. Also returns the
 * character's id (its position in that list). */
static uint32_t sdx__byte_char(int b, int32_t *id) {
    int printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    int below = 0, other = 0;
    for (int k = 0; k < b; k++) {
        int p = (k >= 33 && k <= 126) || (k >= 161 && k <= 172) || k >= 174;
        below += p;
        other += !p;
    }
    *id = printable ? below : 188 + other;
    return printable ? (uint32_t)b : 256u + (uint32_t)other;
}

/* string -> id, only while loading */
typedef struct sdx__vmap {
    sdx_ctx *ctx;
    const char **str;
    uint32_t *len;
    int32_t *id;
    size_t n, cap;
    int32_t *slot;            /* entry index + 1; 0 = empty */
    size_t mask;
    char *arena;              /* storage for derived strings */
    size_t arena_used, arena_cap;
} sdx__vmap;

static uint64_t sdx__str_hash(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static int sdx__vmap_init(sdx__vmap *m, sdx_ctx *ctx, size_t cap, size_t arena_cap) {
    size_t nslots = 1;
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    while (nslots < 2 * cap) nslots *= 2;
    m->str = (const char **)sdx__calloc(ctx, cap, sizeof *m->str);
    m->len = (uint32_t *)sdx__calloc(ctx, cap, sizeof *m->len);
    m->id = (int32_t *)sdx__calloc(ctx, cap, sizeof *m->id);
    m->slot = (int32_t *)sdx__calloc(ctx, nslots, sizeof *m->slot);
    m->arena = (char *)sdx__malloc(ctx, arena_cap);
    if (!m->str || !m->len || !m->id || !m->slot || !m->arena) return sdx__nomem(ctx, "vocabulary map", nslots * 4 + cap * 16);
    m->cap = cap;
    m->mask = nslots - 1;
    m->arena_cap = arena_cap;
    return SDX_OK;
}

static void sdx__vmap_free(sdx__vmap *m) {
    sdx__free(m->ctx, (void *)m->str);
    sdx__free(m->ctx, m->len);
    sdx__free(m->ctx, m->id);
    sdx__free(m->ctx, m->slot);
    sdx__free(m->ctx, m->arena);
}

/* Slot holding s (or the empty slot where it would go). */
static size_t sdx__vmap_slot(const sdx__vmap *m, const char *s, size_t n) {
    size_t i = (size_t)sdx__str_hash(s, n) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        int32_t e = m->slot[i];
        if (e == 0) return i;
        if (m->len[e - 1] == n && memcmp(m->str[e - 1], s, n) == 0) return i;
    }
}

static int32_t sdx__vmap_get(const sdx__vmap *m, const char *s, size_t n) {
    int32_t e = m->slot[sdx__vmap_slot(m, s, n)];
    return e ? m->id[e - 1] : -1;
}

/* Inserts (or, like a Python dict, overwrites) s -> id. s must outlive m. */
static void sdx__vmap_put(sdx__vmap *m, const char *s, size_t n, int32_t id) {
    size_t i = sdx__vmap_slot(m, s, n);
    if (m->slot[i]) { m->id[m->slot[i] - 1] = id; return; }
    if (m->n == m->cap) return;   /* sized by the caller; cannot happen */
    m->str[m->n] = s;
    m->len[m->n] = (uint32_t)n;
    m->id[m->n] = id;
    m->slot[i] = (int32_t)++m->n;
}

/* Copies a+b into the arena (sized by the caller). */
static const char *sdx__vmap_concat(sdx__vmap *m, const char *a, size_t na, const char *b, size_t nb) {
    char *d;
    if (m->arena_cap - m->arena_used < na + nb) return NULL;
    d = m->arena + m->arena_used;
    memcpy(d, a, na);
    memcpy(d + na, b, nb);
    m->arena_used += na + nb;
    return d;
}

/* One merge line "left right". */
typedef struct sdx__merge { const char *left, *right; uint32_t nl, nr; } sdx__merge;

/* Splits the merge list into at most SDX__CLIP_MAX_MERGES pairs. The first
 * line is a header when it contains "#version" (both the OpenAI file and
 * Hugging Face's merges.txt have one). */
static int sdx__parse_merges(sdx_ctx *ctx, const char *text, size_t len, const char *what,
                             sdx__merge **out, int *n_out) {
    const char *p = text, *end = text + len;
    sdx__merge *m = (sdx__merge *)sdx__calloc(ctx, SDX__CLIP_MAX_MERGES, sizeof *m);
    int n = 0, line = 1;
    if (!m) return sdx__nomem(ctx, what, SDX__CLIP_MAX_MERGES * sizeof *m);
    for (; p < end && n < SDX__CLIP_MAX_MERGES; line++) {
        const char *eol = (const char *)memchr(p, '\n', (size_t)(end - p)), *sp, *q;
        if (!eol) eol = end;
        q = eol;
        if (q > p && q[-1] == '\r') q--;
        if (line == 1) {
            int header = 0;
            for (const char *h = p; h + 8 <= q; h++) if (!memcmp(h, "#version", 8)) { header = 1; break; }
            if (header) { p = eol + (eol < end); continue; }
        }
        if (q == p && eol == end) break;          /* final newline */
        sp = (const char *)memchr(p, ' ', (size_t)(q - p));
        if (!sp || sp == p || sp + 1 >= q || memchr(sp + 1, ' ', (size_t)(q - sp - 1))) {
            sdx__free(ctx, m);
            return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: line %d is not a merge 'left right': '%.*s'", what, line,
                             (int)SDX__MIN(q - p, 60), p);
        }
        m[n].left = p; m[n].nl = (uint32_t)(sp - p);
        m[n].right = sp + 1; m[n].nr = (uint32_t)(q - sp - 1);
        n++;
        p = eol + (eol < end);
    }
    if (n == 0) { sdx__free(ctx, m); return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: no merges found", what); }
    *out = m;
    *n_out = n;
    return SDX_OK;
}

/* ids 0..511 (byte characters, then the same with "</w>") and one id per
 * merge from 512 on, as CLIP's SimpleTokenizer builds its encoder. */
static int sdx__vmap_derive(sdx__vmap *m, const sdx__merge *mg, int n) {
    for (int b = 0; b < 256; b++) {
        char u[4];
        int32_t id;
        size_t nu = sdx__utf8_put(u, sdx__byte_char(b, &id));
        const char *plain = sdx__vmap_concat(m, u, nu, "", 0), *end = sdx__vmap_concat(m, u, nu, "</w>", 4);
        if (!plain || !end) return sdx__fail(m->ctx, SDX_ERR_NOMEM, "vocabulary arena too small");
        sdx__vmap_put(m, plain, nu, id);
        sdx__vmap_put(m, end, nu + 4, id + 256);
    }
    for (int r = 0; r < n; r++) {
        const char *s = sdx__vmap_concat(m, mg[r].left, mg[r].nl, mg[r].right, mg[r].nr);
        if (!s) return sdx__fail(m->ctx, SDX_ERR_NOMEM, "vocabulary arena too small");
        sdx__vmap_put(m, s, mg[r].nl + mg[r].nr, 512 + r);
    }
    return SDX_OK;
}

/* vocab.json: {"token": id, ...}. */
static int sdx__vmap_from_json(sdx__vmap *m, const sdx__json *root, const char *what, int32_t *max_id) {
    *max_id = -1;
    if (!root || root->type != SDX__JSON_OBJECT) return sdx__fail(m->ctx, SDX_ERR_FORMAT, "%s: expected a JSON object", what);
    for (const sdx__json *e = root->child; e; e = e->next) {
        uint64_t id;
        if (!sdx__json_uint64(e, &id) || id >= (1u << 24))
            return sdx__fail(m->ctx, SDX_ERR_FORMAT, "%s: id of '%.*s' is not an integer in [0, 2^24)", what,
                             (int)SDX__MIN(e->key_len, 60), e->key);
        sdx__vmap_put(m, e->key, e->key_len, (int32_t)id);
        if ((int32_t)id > *max_id) *max_id = (int32_t)id;
    }
    return SDX_OK;
}

static int sdx__tok_pairs_alloc(sdx_tokenizer *t, int n) {
    size_t nslots = 1;
    while (nslots < 2 * (size_t)n + 2) nslots *= 2;
    t->pair_key = (uint64_t *)sdx__calloc(t->ctx, nslots, sizeof *t->pair_key);
    t->pair_rank = (int32_t *)sdx__calloc(t->ctx, nslots, sizeof *t->pair_rank);
    t->pair_id = (int32_t *)sdx__calloc(t->ctx, nslots, sizeof *t->pair_id);
    if (!t->pair_key || !t->pair_rank || !t->pair_id) return sdx__nomem(t->ctx, "merge table", nslots * 16);
    t->pair_mask = nslots - 1;
    return SDX_OK;
}

/* Resolves every merge and the byte characters to ids through m. */
static int sdx__tok_build(sdx_tokenizer *t, const sdx__vmap *m, const sdx__merge *mg, int n, int from_json,
                          const char *what) {
    char buf[1024];
    int rc;
    for (int b = 0; b < 256; b++) {
        char u[8];
        int32_t id;
        size_t nu = sdx__utf8_put(u, sdx__byte_char(b, &id));
        memcpy(u + nu, "</w>", 4);
        t->byte_id[b] = sdx__vmap_get(m, u, nu);
        t->byte_end_id[b] = sdx__vmap_get(m, u, nu + 4);
        if (t->byte_id[b] < 0 || t->byte_end_id[b] < 0)
            return sdx__fail(t->ctx, SDX_ERR_FORMAT, "%s: the vocabulary lacks the byte character '%.*s' (byte %d)", what,
                             (int)nu, u, b);
    }
    if ((rc = sdx__tok_pairs_alloc(t, n)) != SDX_OK) return rc;
    for (int r = 0; r < n; r++) {
        int32_t l = sdx__vmap_get(m, mg[r].left, mg[r].nl), rt = sdx__vmap_get(m, mg[r].right, mg[r].nr), id;
        uint64_t key;
        size_t s;
        if (mg[r].nl + mg[r].nr > sizeof buf)
            return sdx__fail(t->ctx, SDX_ERR_FORMAT, "%s: merge %d is implausibly long", what, r + 1);
        memcpy(buf, mg[r].left, mg[r].nl);
        memcpy(buf + mg[r].nl, mg[r].right, mg[r].nr);
        id = sdx__vmap_get(m, buf, mg[r].nl + mg[r].nr);
        if (id < 0 && from_json)
            return sdx__fail(t->ctx, SDX_ERR_FORMAT, "%s: vocab.json has no entry for merge %d '%.*s'", what, r + 1,
                             (int)(mg[r].nl + mg[r].nr), buf);
        if (l < 0 || rt < 0) continue;   /* a pair of unknown symbols can never be formed */
        key = (((uint64_t)(uint32_t)l << 32) | (uint32_t)rt) + 1;
        for (s = sdx__pair_slot(t, key); t->pair_key[s] && t->pair_key[s] != key; s = (s + 1) & t->pair_mask) {}
        t->pair_key[s] = key;                 /* a repeated merge keeps its last rank, like dict(zip(...)) */
        t->pair_rank[s] = r;
        t->pair_id[s] = id;
    }
    return SDX_OK;
}

/* Builds a tokenizer from merge-list text; json (may be NULL) is a parsed
 * vocab.json giving the ids. */
static int sdx__tokenizer_from_text(sdx_ctx *ctx, const char *text, size_t len, const sdx__json *json,
                                    const char *what, sdx_tokenizer **out) {
    sdx__merge *mg = NULL;
    sdx__vmap map;
    sdx_tokenizer *t;
    int n = 0, rc;
    int32_t max_id = -1;
    size_t entries;
    if ((rc = sdx__parse_merges(ctx, text, len, what, &mg, &n)) != SDX_OK) return rc;
    entries = json ? json->len + 1 : (size_t)n + 512 + 2;
    rc = sdx__vmap_init(&map, ctx, entries, len + 256 * 16 + 64);
    if (rc == SDX_OK) rc = json ? sdx__vmap_from_json(&map, json, what, &max_id) : sdx__vmap_derive(&map, mg, n);
    t = rc == SDX_OK ? (sdx_tokenizer *)sdx__calloc(ctx, 1, sizeof *t) : NULL;
    if (rc == SDX_OK && !t) rc = sdx__nomem(ctx, "tokenizer", sizeof *t);
    if (rc == SDX_OK) {
        t->ctx = ctx;
        t->n_merges = n;
        rc = sdx__tok_build(t, &map, mg, n, json != NULL, what);
    }
    if (rc == SDX_OK) {
        if (json) {
            t->bos = sdx__vmap_get(&map, "<|startoftext|>", 15);
            t->eos = sdx__vmap_get(&map, "<|endoftext|>", 13);
            t->n_vocab = max_id + 1;
            if (t->bos < 0 || t->eos < 0)
                rc = sdx__fail(ctx, SDX_ERR_FORMAT, "%s: vocab.json lacks <|startoftext|> or <|endoftext|>", what);
        } else {
            t->bos = 512 + n;
            t->eos = 513 + n;
            t->n_vocab = 514 + n;
        }
    }
    sdx__vmap_free(&map);
    sdx__free(ctx, mg);
    if (rc != SDX_OK) { sdx_tokenizer_free(t); return rc; }
    *out = t;
    return SDX_OK;
}

/* A merge list in memory, gzip-compressed or not. */
static int sdx__tokenizer_from_bytes(sdx_ctx *ctx, const uint8_t *data, size_t size, const sdx__json *json,
                                     const char *what, sdx_tokenizer **out) {
    uint8_t *plain;
    size_t plain_len;
    int rc;
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        if ((rc = sdx__inflate(ctx, data, size, &plain, &plain_len, SDX__VOCAB_MAX_BYTES)) != SDX_OK) {
            char msg[sizeof ctx->error];
            memcpy(msg, ctx->error, sizeof msg);
            return sdx__fail(ctx, rc, "%s: %s", what, msg);
        }
        rc = sdx__tokenizer_from_text(ctx, (const char *)plain, plain_len, NULL, what, out);
        sdx__free(ctx, plain);
        return rc;
    }
    if (size && data[0] == '{')
        return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: looks like vocab.json; pass merges.txt (or its directory) instead", what);
    return sdx__tokenizer_from_text(ctx, (const char *)data, size, json, what, out);
}

SDX_API int sdx_tokenizer_load_memory(sdx_ctx *ctx, const void *data, size_t size, sdx_tokenizer **out) {
    if (!ctx || !out || (!data && size)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load_memory: NULL argument");
    *out = NULL;
    return sdx__tokenizer_from_bytes(ctx, (const uint8_t *)data, size, NULL, "vocabulary in memory", out);
}

static int sdx__is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int sdx__is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

SDX_API int sdx_tokenizer_load(sdx_ctx *ctx, const char *path, sdx_tokenizer **out) {
    static const char *const names[3] = { "merges.txt", "bpe_simple_vocab_16e6.txt.gz", "tokenizer/merges.txt" };
    char file[4096], json_path[4096];
    char *data = NULL, *json_text = NULL;
    size_t size = 0, json_len = 0;
    const char *slash;
    sdx__json_doc doc;
    int rc, have_json = 0;
    if (!ctx || !path || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load: NULL argument");
    *out = NULL;
    if (strlen(path) > sizeof file - 64) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load: path too long");
    if (sdx__is_dir(path)) {
        int found = 0;
        for (int i = 0; i < 3 && !found; i++) {
            snprintf(file, sizeof file, "%s/%s", path, names[i]);
            found = sdx__is_file(file);
        }
        if (!found)
            return sdx__fail(ctx, SDX_ERR_IO, "%s: no merges.txt, bpe_simple_vocab_16e6.txt.gz or tokenizer/merges.txt in this directory", path);
    } else {
        snprintf(file, sizeof file, "%s", path);
    }
    if ((rc = sdx__read_file(ctx, file, &data, &size, SDX__VOCAB_MAX_BYTES)) != SDX_OK) return rc;
    /* a plain merge list may come with the Hugging Face vocab.json beside it */
    slash = strrchr(file, '/');
    snprintf(json_path, sizeof json_path, "%.*svocab.json", slash ? (int)(slash - file) + 1 : 0, file);
    memset(&doc, 0, sizeof doc);
    if (!(size >= 2 && (uint8_t)data[0] == 0x1f && (uint8_t)data[1] == 0x8b) && sdx__is_file(json_path) &&
        strcmp(json_path, file) != 0) {
        rc = sdx__read_file(ctx, json_path, &json_text, &json_len, SDX__VOCAB_MAX_BYTES);
        if (rc == SDX_OK) rc = sdx__json_parse_named(ctx, json_text, json_len, json_path, &doc);
        have_json = rc == SDX_OK;
    }
    if (rc == SDX_OK) rc = sdx__tokenizer_from_bytes(ctx, (const uint8_t *)data, size, have_json ? doc.root : NULL, file, out);
    if (have_json) sdx__json_free(&doc);
    sdx__free(ctx, json_text);
    sdx__free(ctx, data);
    return rc;
}

SDX_API void sdx_tokenizer_free(sdx_tokenizer *tok) {
    if (!tok) return;
    sdx__free(tok->ctx, tok->pair_key);
    sdx__free(tok->ctx, tok->pair_rank);
    sdx__free(tok->ctx, tok->pair_id);
    sdx__free(tok->ctx, tok);
}

/* ---- src/text/prompt.c ---- */

/* ===================================================================== */
/*  Prompt weighting (AUTOMATIC1111 syntax), 75-token chunks, emphasis    */
/* ===================================================================== */
/* Reproduces stable-diffusion-webui:
 *   modules/prompt_parser.py  parse_prompt_attention   -> sdx__prompt_parse
 *   modules/sd_hijack_clip.py tokenize_line             -> sdx__prompt_chunks
 *   modules/sd_emphasis.py    EmphasisOriginal(NoNorm)  -> sdx__emphasis_*
 * Weights are doubles multiplied one factor at a time in bracket-closing
 * order, so they equal the webui's bit for bit.
 *
 * Where the webui crashes or lets numbers run away, this code differs
 * (documented policy):
 *   - a weight that float() rejects ("(cat:1.2.3)", "(x:.)") is not a
 *     weight: its ':' is text and scanning resumes after it, so
 *     "(cat:1.2.3)" is ["cat:1.2.3", 1.1];
 *   - every weight and every product is clamped to +-SDX__PROMPT_WEIGHT_MAX,
 *     so no multiplier is ever Inf or NaN ("(x:1e400 digits)", 10k
 *     nested parentheses); "inf"/"nan"/"1e40" are not numbers in this
 *     grammar anyway and stay text;
 *   - only the first SDX__PROMPT_MAX_DEPTH open brackets (round and square
 *     together) weigh; deeper ones still group but multiply by nothing.
 *     This bounds the work by text length x depth limit;
 *   - the weight number takes ASCII digits only (Python's \d also takes
 *     other scripts' digits).
 * No recursion anywhere; work is linear in the prompt length. */

#define SDX__PROMPT_WEIGHT_MAX 1000.0
#define SDX__PROMPT_MAX_DEPTH  256
#define SDX__CHUNK_TOKENS      75    /* content tokens per 77-token chunk */
#define SDX__COMMA_TOKEN       267   /* ",</w>" */
#define SDX__COMMA_BACKTRACK   20    /* webui's comma_padding_backtrack default */

/* Prompt chunks: n chunks of 77 ids (BOS, 75 tokens padded with EOS 49407,
 * EOS) and their 77 f32 multipliers, row-major [n][77]. For OpenCLIP the
 * caller replaces ids after the first EOS with its pad id (0), as the
 * webui does. */
typedef struct sdx__chunks {
    int n;
    int32_t *tokens;
    float *mult;
} sdx__chunks;

/* One parsed fragment; text is NUL-terminated. A BREAK marker is text
 * "BREAK" with weight exactly -1. */
typedef struct sdx__pfrag { const char *text; size_t len; double weight; } sdx__pfrag;
typedef struct sdx__parsed { int n; sdx__pfrag *frag; char *buf; } sdx__parsed;

static void sdx__parsed_free(sdx_ctx *ctx, sdx__parsed *p) {
    sdx__free(ctx, p->frag);
    sdx__free(ctx, p->buf);
    memset(p, 0, sizeof *p);
}

/* ---- parse_prompt_attention ------------------------------------------ */

static const char sdx__break_text[] = "BREAK";

/* Code point at s[i] (U+FFFD for invalid UTF-8) and its length. */
static uint32_t sdx__cp_at(const char *s, size_t n, size_t i, size_t *len) {
    const unsigned char *p = (const unsigned char *)s + i, *end = (const unsigned char *)s + n;
    int l = sdx__utf8_len(p, end);
    uint32_t c;
    if (l == 0) { *len = 1; return 0xfffd; }
    *len = (size_t)l;
    c = l == 1 ? p[0] : l == 2 ? (p[0] & 0x1fu) : l == 3 ? (p[0] & 0x0fu) : (p[0] & 0x07u);
    for (int k = 1; k < l; k++) c = (c << 6) | (p[k] & 0x3fu);
    return c;
}

/* Code point ending at s[i] (i > 0): steps back over continuation bytes. */
static uint32_t sdx__cp_before(const char *s, size_t n, size_t i, size_t *start) {
    size_t j = i - 1, len;
    uint32_t c;
    while (j > 0 && i - j < 4 && ((unsigned char)s[j] & 0xc0) == 0x80) j--;
    c = sdx__cp_at(s, n, j, &len);
    if (j + len != i) { j = i - 1; c = 0xfffd; }
    *start = j;
    return c;
}

typedef struct sdx__pstate {
    sdx_ctx *ctx;
    sdx__pfrag *frag;
    size_t n, cap;
    size_t round[SDX__PROMPT_MAX_DEPTH], square[SDX__PROMPT_MAX_DEPTH];
    int n_round, n_square;          /* open brackets that weigh */
    size_t inert_round, inert_square; /* open brackets past the depth limit */
    int oom;
} sdx__pstate;

static void sdx__frag_add(sdx__pstate *st, const char *text, size_t len, double w) {
    if (st->n == st->cap) {
        size_t ncap = st->cap ? st->cap * 2 : 16;
        sdx__pfrag *nf = st->oom ? NULL : (sdx__pfrag *)sdx__realloc(st->ctx, st->frag, ncap * sizeof *nf);
        if (!nf) { st->oom = 1; return; }
        st->frag = nf;
        st->cap = ncap;
    }
    st->frag[st->n].text = text;
    st->frag[st->n].len = len;
    st->frag[st->n].weight = w;
    st->n++;
}

static double sdx__clamp_weight(double w) {
    if (w > SDX__PROMPT_WEIGHT_MAX) return SDX__PROMPT_WEIGHT_MAX;
    if (w < -SDX__PROMPT_WEIGHT_MAX) return -SDX__PROMPT_WEIGHT_MAX;
    return w;
}

static void sdx__multiply_range(sdx__pstate *st, size_t from, double factor) {
    for (size_t i = from; i < st->n; i++) st->frag[i].weight = sdx__clamp_weight(st->frag[i].weight * factor);
}

/* Emits a text token split on \s*\bBREAK\b\s* (Python re semantics) with
 * ["BREAK", -1] markers between the parts; empty parts are kept. */
static void sdx__emit_text(sdx__pstate *st, const char *s, size_t n) {
    size_t part = 0, i = 0;
    while (i + 5 <= n) {
        size_t b = i, before, after = i + 5, len, start = i;
        const char *hit = (const char *)memchr(s + i, 'B', n - i);
        if (!hit || (size_t)(hit - s) + 5 > n) break;
        b = (size_t)(hit - s);
        i = b + 1;
        if (memcmp(s + b, "BREAK", 5) != 0) continue;
        if (b > 0 && sdx__is_py_word(sdx__cp_before(s, n, b, &before))) continue;
        after = b + 5;
        if (after < n && sdx__is_py_word(sdx__cp_at(s, n, after, &len))) continue;
        /* widen over the blanks on both sides, not before the previous match */
        start = b;
        while (start > part) {
            uint32_t c = sdx__cp_before(s, n, start, &before);
            if (!sdx__is_py_space(c)) break;
            start = before;
        }
        while (after < n) {
            uint32_t c = sdx__cp_at(s, n, after, &len);
            if (!sdx__is_py_space(c)) break;
            after += len;
        }
        sdx__frag_add(st, s + part, start - part, 1.0);
        sdx__frag_add(st, sdx__break_text, 5, -1.0);
        part = i = after;
    }
    sdx__frag_add(st, s + part, n - part, 1.0);
}

/* Length of ":" \s* [+-]?[.\d]+ \s* ")" at s[i], or 0. *num and *num_len give
 * the number's text. */
static size_t sdx__match_weight(const char *s, size_t n, size_t i, size_t *num, size_t *num_len) {
    size_t j = i + 1, len;
    while (j < n && sdx__is_py_space(sdx__cp_at(s, n, j, &len))) j += len;
    *num = j;
    if (j < n && (s[j] == '+' || s[j] == '-')) j++;
    if (j >= n || !(s[j] == '.' || (s[j] >= '0' && s[j] <= '9'))) return 0;
    while (j < n && (s[j] == '.' || (s[j] >= '0' && s[j] <= '9'))) j++;
    *num_len = j - *num;
    while (j < n && sdx__is_py_space(sdx__cp_at(s, n, j, &len))) j += len;
    return j < n && s[j] == ')' ? j + 1 - i : 0;
}

/* Python float() of [+-]?[.\d]+: 0 if it raises (no digit, or two dots).
 * Correctly rounded and locale-independent: short decimals are one exact
 * integer / power-of-ten division; others go through strtod with the
 * locale's decimal point (beyond 400 characters the excess fraction
 * digits are dropped). */
static int sdx__parse_weight(const char *s, size_t n, double *out) {
    static const double pow10[23] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    char buf[420];
    const char *point = localeconv()->decimal_point;
    size_t i = 0, k = 0, pl = strlen(point);
    int neg = 0, dots = 0, digits = 0, frac = 0;
    uint64_t m = 0;
    if (n && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i++; }
    for (size_t j = i; j < n; j++) {
        if (s[j] == '.') { dots++; continue; }
        digits++;
        if (m < ((uint64_t)1 << 53) / 10) { m = m * 10 + (uint64_t)(s[j] - '0'); frac += dots; }
        else m = UINT64_MAX;
    }
    if (digits == 0 || dots > 1) return 0;
    if (m < ((uint64_t)1 << 53) && frac <= 22) {
        double v = (double)m / pow10[frac];
        *out = neg ? -v : v;
        return 1;
    }
    for (size_t j = 0; j < n && k + pl < sizeof buf - 1; j++) {
        if (s[j] == '.') { memcpy(buf + k, point, pl); k += pl; }
        else buf[k++] = s[j];
    }
    buf[k] = 0;
    if (k >= 400 && !memchr(buf, point[0], k)) {      /* a huge integer: clamped anyway */
        *out = neg ? -HUGE_VAL : HUGE_VAL;
        return 1;
    }
    *out = strtod(buf, NULL);
    return 1;
}

/* Opens a bracket; past the depth limit it only counts. */
static void sdx__open_bracket(sdx__pstate *st, int square) {
    if (st->n_round + st->n_square < SDX__PROMPT_MAX_DEPTH && !st->inert_round && !st->inert_square) {
        if (square) st->square[st->n_square++] = st->n;
        else st->round[st->n_round++] = st->n;
    } else if (square) {
        st->inert_square++;
    } else {
        st->inert_round++;
    }
}

/* Closes the innermost bracket of a kind, multiplying what it holds.
 * Returns 0 if none is open (the caller then emits text). */
static int sdx__close_bracket(sdx__pstate *st, int square, double factor) {
    if (square) {
        if (st->inert_square) { st->inert_square--; return 1; }
        if (!st->n_square) return 0;
        sdx__multiply_range(st, st->square[--st->n_square], factor);
    } else {
        if (st->inert_round) { st->inert_round--; return 1; }
        if (!st->n_round) return 0;
        sdx__multiply_range(st, st->round[--st->n_round], factor);
    }
    return 1;
}

/* Concatenates runs of exactly equal weights into owned, NUL-terminated
 * texts. */
static int sdx__parse_finish(sdx__pstate *st, size_t text_len, sdx__parsed *out) {
    size_t n = 0, used = 0;
    char *buf = (char *)sdx__malloc(st->ctx, text_len + st->n + 1);
    if (!buf) return sdx__nomem(st->ctx, "parsed prompt", text_len + st->n + 1);
    for (size_t i = 0; i < st->n; i++) {
        if (n > 0 && st->frag[n - 1].weight == st->frag[i].weight) {
            used--;   /* drop the NUL, append */
            memcpy(buf + used, st->frag[i].text, st->frag[i].len);
            st->frag[n - 1].len += st->frag[i].len;
        } else {
            memcpy(buf + used, st->frag[i].text, st->frag[i].len);
            st->frag[n].text = buf + used;
            st->frag[n].len = st->frag[i].len;
            st->frag[n].weight = st->frag[i].weight;
            n++;
        }
        used += st->frag[i].len;
        buf[used++] = 0;
    }
    out->n = (int)n;
    out->frag = st->frag;
    out->buf = buf;
    st->frag = NULL;
    return SDX_OK;
}

/* parse_prompt_attention(text) -> fragments with weights (see the top of
 * this file for where it deliberately differs). */
static int sdx__prompt_parse(sdx_ctx *ctx, const char *text, sdx__parsed *out) {
    sdx__pstate *st;
    size_t n = strlen(text), i = 0;
    int rc;
    memset(out, 0, sizeof *out);
    if (n > (size_t)INT32_MAX / 2) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "prompt of %zu bytes is too long", n);
    st = (sdx__pstate *)sdx__calloc(ctx, 1, sizeof *st);
    if (!st) return sdx__nomem(ctx, "prompt parser", sizeof *st);
    st->ctx = ctx;
    while (i < n && !st->oom) {
        char c = text[i];
        size_t num, num_len, len;
        double w;
        if (c == '\\') {
            int escaped = i + 1 < n && strchr("()[]\\", text[i + 1]) != NULL;
            sdx__frag_add(st, text + i + 1, (size_t)escaped, 1.0);   /* a lone '\' leaves "" */
            i += 1 + (size_t)escaped;
        } else if (c == '(' || c == '[') {
            sdx__open_bracket(st, c == '[');
            i++;
        } else if (c == ':' && (len = sdx__match_weight(text, n, i, &num, &num_len)) != 0) {
            if (!st->n_round && !st->inert_round) { sdx__emit_text(st, text + i, len); i += len; }
            else if (sdx__parse_weight(text + num, num_len, &w)) {
                sdx__close_bracket(st, 0, sdx__clamp_weight(w));
                i += len;
            } else {
                sdx__emit_text(st, text + i, 1);   /* float() would raise: the ':' is text */
                i++;
            }
        } else if (c == ')' || c == ']') {
            if (!sdx__close_bracket(st, c == ']', c == ']' ? 1.0 / 1.1 : 1.1)) sdx__emit_text(st, text + i, 1);
            i++;
        } else if (c == ':') {
            sdx__emit_text(st, text + i, 1);
            i++;
        } else {
            size_t j = i;
            while (j < n && !strchr("\\()[]:", text[j])) j++;
            sdx__emit_text(st, text + i, j - i);
            i = j;
        }
    }
    for (int k = 0; k < st->n_round; k++) sdx__multiply_range(st, st->round[k], 1.1);
    for (int k = 0; k < st->n_square; k++) sdx__multiply_range(st, st->square[k], 1.0 / 1.1);
    if (st->n == 0) sdx__frag_add(st, "", 0, 1.0);
    rc = st->oom ? sdx__nomem(ctx, "prompt fragments", st->cap * 2 * sizeof(sdx__pfrag)) : sdx__parse_finish(st, n, out);
    sdx__free(ctx, st->frag);
    sdx__free(ctx, st);
    return rc;
}

/* ---- tokenize_line: 75-token chunks --------------------------------------- */

typedef struct sdx__chunker {
    sdx_ctx *ctx;
    const sdx_tokenizer *tok;
    sdx__chunks *out;
    size_t cap;                        /* chunks the arrays hold */
    int32_t cur[SDX__CHUNK_TOKENS];    /* the open chunk */
    float cur_mult[SDX__CHUNK_TOKENS];
    int len, last_comma, token_count;
} sdx__chunker;

/* Closes the open chunk: pad to 75 with EOS, add BOS/EOS (multiplier 1). */
static int sdx__next_chunk(sdx__chunker *c, int is_last) {
    sdx__chunks *o = c->out;
    int32_t *ids;
    float *mult;
    c->token_count += is_last ? c->len : SDX__CHUNK_TOKENS;
    if ((size_t)o->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 2;
        int32_t *nt = (int32_t *)sdx__realloc(c->ctx, o->tokens, ncap * 77 * sizeof(int32_t));
        float *nm;
        if (!nt) return sdx__nomem(c->ctx, "prompt chunks", ncap * 77 * sizeof(int32_t));
        o->tokens = nt;
        nm = (float *)sdx__realloc(c->ctx, o->mult, ncap * 77 * sizeof(float));
        if (!nm) return sdx__nomem(c->ctx, "prompt chunks", ncap * 77 * sizeof(float));
        o->mult = nm;
        c->cap = ncap;
    }
    ids = o->tokens + (size_t)o->n * 77;
    mult = o->mult + (size_t)o->n * 77;
    ids[0] = c->tok->bos;
    mult[0] = 1.0f;
    for (int i = 0; i < SDX__CHUNK_TOKENS; i++) {
        ids[1 + i] = i < c->len ? c->cur[i] : c->tok->eos;
        mult[1 + i] = i < c->len ? c->cur_mult[i] : 1.0f;
    }
    ids[76] = c->tok->eos;
    mult[76] = 1.0f;
    o->n++;
    c->len = 0;
    c->last_comma = -1;
    return SDX_OK;
}

/* Appends one token, first moving the words after a recent comma to a new
 * chunk or closing a full one, as the webui does. */
static int sdx__chunk_token(sdx__chunker *c, int32_t token, float mult) {
    int rc;
    if (token == SDX__COMMA_TOKEN) {
        c->last_comma = c->len;
    } else if (c->len == SDX__CHUNK_TOKENS && c->last_comma != -1 && c->len - c->last_comma <= SDX__COMMA_BACKTRACK) {
        int32_t moved[SDX__CHUNK_TOKENS];
        float moved_mult[SDX__CHUNK_TOKENS];
        int keep = c->last_comma + 1, n_moved = c->len - keep;
        memcpy(moved, c->cur + keep, (size_t)n_moved * sizeof(int32_t));
        memcpy(moved_mult, c->cur_mult + keep, (size_t)n_moved * sizeof(float));
        c->len = keep;
        if ((rc = sdx__next_chunk(c, 0)) != SDX_OK) return rc;
        memcpy(c->cur, moved, (size_t)n_moved * sizeof(int32_t));
        memcpy(c->cur_mult, moved_mult, (size_t)n_moved * sizeof(float));
        c->len = n_moved;
    }
    if (c->len == SDX__CHUNK_TOKENS && (rc = sdx__next_chunk(c, 0)) != SDX_OK) return rc;
    c->cur[c->len] = token;
    c->cur_mult[c->len] = mult;
    c->len++;
    return SDX_OK;
}

/* tokenize_line: parse, tokenize every fragment on its own, chunk.
 * *token_count is the webui's token count (75 per closed chunk + the
 * last chunk's length). */
static int sdx__prompt_chunks_count(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *prompt, sdx__chunks *out,
                                    int *token_count) {
    sdx__parsed parsed;
    sdx__chunker *c;
    int rc;
    memset(out, 0, sizeof *out);
    if (!ctx || !tok || !prompt) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "prompt chunks: NULL argument");
    if ((rc = sdx__prompt_parse(ctx, prompt, &parsed)) != SDX_OK) return rc;
    c = (sdx__chunker *)sdx__calloc(ctx, 1, sizeof *c);
    if (!c) { sdx__parsed_free(ctx, &parsed); return sdx__nomem(ctx, "prompt chunker", sizeof *c); }
    c->ctx = ctx;
    c->tok = tok;
    c->out = out;
    c->last_comma = -1;
    for (int f = 0; f < parsed.n && rc == SDX_OK; f++) {
        const sdx__pfrag *fr = &parsed.frag[f];
        int32_t *ids;
        int n_ids;
        if (fr->weight == -1.0 && fr->len == 5 && !memcmp(fr->text, "BREAK", 5)) { rc = sdx__next_chunk(c, 0); continue; }
        if ((rc = sdx_tokenize(ctx, tok, fr->text, &ids, &n_ids)) != SDX_OK) break;
        for (int t = 0; t < n_ids && rc == SDX_OK; t++) rc = sdx__chunk_token(c, ids[t], (float)fr->weight);
        sdx_tokens_free(ctx, ids);
    }
    if (rc == SDX_OK && (c->len > 0 || out->n == 0)) rc = sdx__next_chunk(c, 1);
    if (token_count) *token_count = c->token_count;
    sdx__free(ctx, c);
    sdx__parsed_free(ctx, &parsed);
    if (rc != SDX_OK) {
        sdx__free(ctx, out->tokens);
        sdx__free(ctx, out->mult);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

/* The text encoder's entry point: A1111 prompt -> chunks. A prompt
 * without weighting syntax gets multipliers that are all exactly 1.0f. */
static int sdx__prompt_chunks(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *prompt, sdx__chunks *out) {
    return sdx__prompt_chunks_count(ctx, tok, prompt, out, NULL);
}

static void sdx__chunks_free(sdx_ctx *ctx, sdx__chunks *c) {
    if (!c) return;
    sdx__free(ctx, c->tokens);
    sdx__free(ctx, c->mult);
    memset(c, 0, sizeof *c);
}

/* ---- emphasis ---------------------------------------------------------------- */

/* EmphasisOriginalNoNorm: z[t, :] *= mult[t] (one f32 multiply). */
static void sdx__emphasis_nonorm(float *z, int n_tokens, int width, const float *mult) {
    for (int t = 0; t < n_tokens; t++)
        for (int k = 0; k < width; k++) z[(size_t)t * (size_t)width + (size_t)k] *= mult[t];
}

/* EmphasisOriginal on one chunk z[n_tokens, width], in place: multiply,
 * then rescale so the mean over the chunk is what it was. Means are f32
 * values (summed in double, then rounded), the ratio is an f32 division
 * as in torch. All-one multipliers leave z bit-identical; if the new mean
 * is 0 or the ratio is not finite the rescale is skipped. */
static void sdx__emphasis_original(float *z, int n_tokens, int width, const float *mult) {
    size_t count = (size_t)n_tokens * (size_t)width;
    double before = 0, after = 0;
    float mean_before, mean_after, ratio;
    int all_one = 1;
    for (int t = 0; t < n_tokens; t++) all_one &= mult[t] == 1.0f;
    if (all_one || count == 0) return;
    for (size_t i = 0; i < count; i++) before += z[i];
    sdx__emphasis_nonorm(z, n_tokens, width, mult);
    for (size_t i = 0; i < count; i++) after += z[i];
    mean_before = (float)(before / (double)count);
    mean_after = (float)(after / (double)count);
    if (mean_after == 0.0f) return;
    ratio = mean_before / mean_after;
    if (!isfinite(ratio)) return;
    for (size_t i = 0; i < count; i++) z[i] *= ratio;
}

/* ---- src/text/text_encoder.c ---- */

/* ===================================================================== */
/*  Text encoders: CLIP ViT-L (Hugging Face layout), OpenCLIP text tower  */
/*  (ViT-H for SD 2.x, ViT-bigG for SDXL) and SDXL vector conditioning    */
/* ===================================================================== */
/*
 * Everything is read from key names and shapes. The only fixed
 * conventions are those of the reference code: heads = width / 64,
 * LayerNorm eps 1e-5, causal attention, quick_gelu for CLIP ViT-L and erf
 * gelu for OpenCLIP; the token count per chunk comes from the positional
 * embedding (77 for every released model).
 *
 * Interface used by the pipeline:
 *
 *   sdx__textenc te;
 *   sdx__textenc_load(ctx, &te, ckpt)       detect SD1 / SD2 / SDXL, bind weights
 *   sdx__textenc_load_as(ctx, &te, ckpt, weight_type)   same, weight type given
 *   te.family, te.context_dim, te.pooled_dim, te.n_ctx, te.act_type
 *   sdx__textenc_encode(ctx, &te, arena, chunks, clip_skip, &context, &pooled)
 *   sdx__textenc_encode_ids(ctx, &te, arena, ids, mult, n_chunks, clip_skip,
 *                           &context, &pooled)     raw 77-id chunks
 *   sdx__textenc_empty_ids(ids, n_ctx)      the ids of the empty prompt
 *   sdx__sdxl_vector(ctx, pooled, pooled_dim, size_cond, y, y_dim)
 *   sdx__textenc_free(ctx, &te)
 *
 * Outputs are owned f32 tensors (free with sdx_tensor_free): context
 * [n_chunks * n_ctx, context_dim]; pooled [pooled_dim], from the first
 * chunk as AUTOMATIC1111 does. The arena only holds temporaries and is
 * back at its mark when a call returns.
 *
 * What each family produces (see PIPELINE.md):
 *   SD1   context = final_layer_norm(layer L - skip + 1), skip 1 by default.
 *         pooled (on request) = final_layer_norm(last layer)[first EOS].
 *   SD2   context = ln_final(layer L - skip + 1), skip 2 by default.
 *         pooled = ln_final(last layer)[first EOS] @ text_projection.
 *   SDXL  context = concat(CLIP-L layer L-1, bigG layer L-1), no final
 *         norms; pooled as SD2 from bigG. A clip_skip N > 2 moves both
 *         encoders to layer L - N + 1.
 * Emphasis multipliers (A1111 "Original") are applied per chunk to each
 * encoder's part of the context before concatenation, as the webui does
 * (each embedder normalises its own output); pooled is never weighted.
 */

#define SDX__TE_LN_EPS 1e-5f
#define SDX__TE_HEAD_DIM 64
#define SDX__TE_MAX_ENCODERS 2

typedef enum sdx__text_family {
    SDX__TEXT_NONE = 0,
    SDX__TEXT_SD1,      /* CLIP ViT-L                      */
    SDX__TEXT_SD2,      /* OpenCLIP ViT-H                  */
    SDX__TEXT_SDXL      /* CLIP ViT-L + OpenCLIP ViT-bigG  */
} sdx__text_family;

typedef enum sdx__clip_layout {
    SDX__CLIP_HF = 0,   /* transformers CLIPTextModel names, separate q/k/v */
    SDX__CLIP_OPEN      /* OpenCLIP names, fused in_proj, text_projection   */
} sdx__clip_layout;

/* One pre-LN transformer block. Tensors are views (data owned by the
 * checkpoint mapping or the wset); OpenCLIP q/k/v are row slices of the
 * fused in_proj weight and bias. */
typedef struct sdx__clip_block {
    sdx_tensor ln1_w, ln1_b, q_w, q_b, k_w, k_b, v_w, v_b, out_w, out_b;
    sdx_tensor ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
} sdx__clip_block;

typedef struct sdx__clip {
    sdx__clip_layout layout;
    sdx__wset w;
    int wset_live;
    int width, heads, mlp, n_layers, n_ctx, vocab;
    int proj_dim;               /* text_projection columns; 0 when absent */
    int pad_id;                 /* id written after the first EOS */
    int default_skip;           /* 1 = last layer, 2 = penultimate */
    int norm_context;           /* apply the final norm to the context */
    int gelu_erf;               /* 1: erf gelu (OpenCLIP), 0: quick_gelu */
    sdx_tensor tok_emb, pos_emb, lnf_w, lnf_b, proj;
    sdx__clip_block *blocks;
    char prefix[96];            /* for messages */
} sdx__clip;

typedef struct sdx__textenc {
    sdx__text_family family;
    int context_dim;            /* features per context token */
    int pooled_dim;             /* pooled vector size (SD1: CLIP-L width) */
    int n_ctx;                  /* tokens per chunk (77) */
    int act_type;               /* activation storage dtype; default SDX_TEXT_ACT_TYPE */
    int n_enc;
    sdx__clip enc[SDX__TE_MAX_ENCODERS];   /* SDXL: [0] CLIP-L, [1] bigG */
} sdx__textenc;

#define SDX__TE_TRY(expr) do { if ((rc = (expr)) != SDX_OK) goto done; } while (0)

/* ---- loading -------------------------------------------------------- */

/* A weight fetched through the wset, copied as a non-owning view. */
static int sdx__clip_fetch(sdx__clip *c, sdx_tensor *dst, int ndim, int64_t d0, int64_t d1,
                           const char *base, int layer, const char *leaf) {
    int64_t shape[2] = { d0, d1 };
    const sdx_tensor *t = layer >= 0 ? sdx__wget(&c->w, ndim, shape, "%s%d.%s", base, layer, leaf)
                                     : sdx__wget(&c->w, ndim, shape, "%s", leaf);
    if (!t) return sdx__werr(&c->w);
    *dst = *t;
    dst->owned = 0;
    return SDX_OK;
}

/* A weight that host code reads (the embedding tables, the projection). */
static int sdx__clip_fetch_host(sdx__clip *c, sdx_tensor *dst, int64_t d0, int64_t d1, const char *name) {
    int64_t shape[2] = { d0, d1 };
    const sdx_tensor *t = sdx__wget_host(&c->w, 2, shape, "%s", name);
    if (!t) return sdx__werr(&c->w);
    *dst = *t;
    dst->owned = 0;
    return SDX_OK;
}

/* Rows [row0, row0 + rows) of a fused [3W, ...] weight or [3W] bias. */
static sdx_tensor sdx__rows_view(const sdx_tensor *t, int64_t row0, int64_t rows) {
    sdx_tensor v = *t;
    int64_t row_elems = t->ndim == 2 ? t->shape[1] : 1;
    v.data = (unsigned char *)t->data + (size_t)(row0 * row_elems) * sdx_dtype_size(t->dtype);
    v.shape[0] = rows;
    v.owned = 0;
    return v;
}

static int sdx__clip_load_hf_block(sdx__clip *c, int i) {
    static const char *base = "encoder.layers.";
    sdx__clip_block *b = &c->blocks[i];
    int64_t W = c->width, M;
    int rc;
    /* the MLP width is whatever fc1 says; everything else follows */
    if ((rc = sdx__clip_fetch(c, &b->fc1_w, 2, -1, W, base, i, "mlp.fc1.weight")) != SDX_OK) return rc;
    M = b->fc1_w.shape[0];
    if (i == 0) c->mlp = (int)M;
    else if (M != c->mlp) return sdx__clip_fetch(c, &b->fc1_w, 2, c->mlp, W, base, i, "mlp.fc1.weight");
    if ((rc = sdx__clip_fetch(c, &b->ln1_w, 1, W, 0, base, i, "layer_norm1.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln1_b, 1, W, 0, base, i, "layer_norm1.bias")) ||
        (rc = sdx__clip_fetch(c, &b->q_w, 2, W, W, base, i, "self_attn.q_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->q_b, 1, W, 0, base, i, "self_attn.q_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->k_w, 2, W, W, base, i, "self_attn.k_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->k_b, 1, W, 0, base, i, "self_attn.k_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->v_w, 2, W, W, base, i, "self_attn.v_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->v_b, 1, W, 0, base, i, "self_attn.v_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->out_w, 2, W, W, base, i, "self_attn.out_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->out_b, 1, W, 0, base, i, "self_attn.out_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_w, 1, W, 0, base, i, "layer_norm2.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_b, 1, W, 0, base, i, "layer_norm2.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc1_b, 1, M, 0, base, i, "mlp.fc1.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_w, 2, W, M, base, i, "mlp.fc2.weight")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_b, 1, W, 0, base, i, "mlp.fc2.bias")))
        return rc;
    return SDX_OK;
}

static int sdx__clip_load_open_block(sdx__clip *c, int i) {
    static const char *base = "transformer.resblocks.";
    sdx__clip_block *b = &c->blocks[i];
    sdx_tensor in_w, in_b;
    int64_t W = c->width, M;
    int rc;
    if ((rc = sdx__clip_fetch(c, &b->fc1_w, 2, -1, W, base, i, "mlp.c_fc.weight")) != SDX_OK) return rc;
    M = b->fc1_w.shape[0];
    if (i == 0) c->mlp = (int)M;
    else if (M != c->mlp) return sdx__clip_fetch(c, &b->fc1_w, 2, c->mlp, W, base, i, "mlp.c_fc.weight");
    if ((rc = sdx__clip_fetch(c, &b->ln1_w, 1, W, 0, base, i, "ln_1.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln1_b, 1, W, 0, base, i, "ln_1.bias")) ||
        (rc = sdx__clip_fetch(c, &in_w, 2, 3 * W, W, base, i, "attn.in_proj_weight")) ||
        (rc = sdx__clip_fetch(c, &in_b, 1, 3 * W, 0, base, i, "attn.in_proj_bias")) ||
        (rc = sdx__clip_fetch(c, &b->out_w, 2, W, W, base, i, "attn.out_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->out_b, 1, W, 0, base, i, "attn.out_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_w, 1, W, 0, base, i, "ln_2.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_b, 1, W, 0, base, i, "ln_2.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc1_b, 1, M, 0, base, i, "mlp.c_fc.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_w, 2, W, M, base, i, "mlp.c_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_b, 1, W, 0, base, i, "mlp.c_proj.bias")))
        return rc;
    /* in_proj rows are q; k; v */
    b->q_w = sdx__rows_view(&in_w, 0, W);
    b->k_w = sdx__rows_view(&in_w, W, W);
    b->v_w = sdx__rows_view(&in_w, 2 * W, W);
    b->q_b = sdx__rows_view(&in_b, 0, W);
    b->k_b = sdx__rows_view(&in_b, W, W);
    b->v_b = sdx__rows_view(&in_b, 2 * W, W);
    return SDX_OK;
}

/* Layers are counted by key presence: a block exists if any of a few of
 * its tensors does, so a block with one tensor missing is reported by
 * name instead of silently shortening the model. */
static int sdx__clip_count_layers(const sdx__clip *c) {
    int n = 0;
    if (c->layout == SDX__CLIP_HF) {
        while (sdx__whas(&c->w, "encoder.layers.%d.layer_norm1.weight", n) ||
               sdx__whas(&c->w, "encoder.layers.%d.self_attn.q_proj.weight", n) ||
               sdx__whas(&c->w, "encoder.layers.%d.mlp.fc1.weight", n))
            n++;
    } else {
        while (sdx__whas(&c->w, "transformer.resblocks.%d.ln_1.weight", n) ||
               sdx__whas(&c->w, "transformer.resblocks.%d.attn.in_proj_weight", n) ||
               sdx__whas(&c->w, "transformer.resblocks.%d.mlp.c_fc.weight", n))
            n++;
    }
    return n;
}

static int sdx__clip_load_globals(sdx_ctx *ctx, sdx__clip *c) {
    int hf = c->layout == SDX__CLIP_HF;
    const char *tok = hf ? "embeddings.token_embedding.weight" : "token_embedding.weight";
    const char *pos = hf ? "embeddings.position_embedding.weight" : "positional_embedding";
    const char *lnw = hf ? "final_layer_norm.weight" : "ln_final.weight";
    const char *lnb = hf ? "final_layer_norm.bias" : "ln_final.bias";
    int rc;
    if ((rc = sdx__clip_fetch_host(c, &c->tok_emb, -1, -1, tok)) != SDX_OK) return rc;
    c->vocab = (int)c->tok_emb.shape[0];
    c->width = (int)c->tok_emb.shape[1];
    if (c->width <= 0 || c->width % SDX__TE_HEAD_DIM)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s%s: width %d is not a positive multiple of the head size %d",
                         c->prefix, tok, c->width, SDX__TE_HEAD_DIM);
    c->heads = c->width / SDX__TE_HEAD_DIM;
    if ((rc = sdx__clip_fetch_host(c, &c->pos_emb, -1, c->width, pos)) != SDX_OK) return rc;
    c->n_ctx = (int)c->pos_emb.shape[0];
    if (c->n_ctx < 2)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s%s: %d positions, need at least 2", c->prefix, pos, c->n_ctx);
    if ((rc = sdx__clip_fetch(c, &c->lnf_w, 1, c->width, 0, NULL, -1, lnw)) ||
        (rc = sdx__clip_fetch(c, &c->lnf_b, 1, c->width, 0, NULL, -1, lnb)))
        return rc;
    c->proj_dim = 0;
    if (!hf) {
        /* stored [W, P] and applied as x @ text_projection */
        if ((rc = sdx__clip_fetch_host(c, &c->proj, c->width, -1, "text_projection")) != SDX_OK)
            return rc;
        c->proj_dim = (int)c->proj.shape[1];
    }
    return SDX_OK;
}

static void sdx__clip_free(sdx_ctx *ctx, sdx__clip *c) {
    sdx__free(ctx, c->blocks);
    if (c->wset_live) sdx__wset_free(&c->w);
    memset(c, 0, sizeof *c);
}

static int sdx__clip_load(sdx_ctx *ctx, sdx__clip *c, const sdx_st *ckpt, const char *prefix,
                          sdx__clip_layout layout, int default_skip, int norm_context, int weight_type) {
    int rc;
    memset(c, 0, sizeof *c);
    c->layout = layout;
    c->default_skip = default_skip;
    c->norm_context = norm_context;
    c->gelu_erf = layout == SDX__CLIP_OPEN;
    c->pad_id = layout == SDX__CLIP_OPEN ? 0 : SDX_TOKEN_EOS;
    snprintf(c->prefix, sizeof c->prefix, "%s", prefix);
    sdx__wset_init(&c->w, ctx, ckpt, prefix, SDX__PART_TEXT, weight_type);
    c->wset_live = 1;
    if ((rc = sdx__clip_load_globals(ctx, c)) != SDX_OK) goto fail;
    c->n_layers = sdx__clip_count_layers(c);
    if (c->n_layers < 1) {
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: no transformer layers found (looked for %s0.*)", prefix,
                       layout == SDX__CLIP_HF ? "encoder.layers." : "transformer.resblocks.");
        goto fail;
    }
    c->blocks = (sdx__clip_block *)sdx__calloc(ctx, (size_t)c->n_layers, sizeof *c->blocks);
    if (!c->blocks) {
        rc = sdx__nomem(ctx, "text encoder layers", (size_t)c->n_layers * sizeof *c->blocks);
        goto fail;
    }
    for (int i = 0; i < c->n_layers; i++) {
        rc = layout == SDX__CLIP_HF ? sdx__clip_load_hf_block(c, i) : sdx__clip_load_open_block(c, i);
        if (rc != SDX_OK) goto fail;
    }
    return SDX_OK;
fail:
    sdx__clip_free(ctx, c);
    return rc;
}

/* Where each encoder may live. Older SD 1.x files lack "text_model.". */
static const char *const sdx__te_sd1_prefixes[] = {
    "cond_stage_model.transformer.text_model.",
    "cond_stage_model.transformer.",
};
#define SDX__TE_SD2_PREFIX   "cond_stage_model.model."
#define SDX__TE_SDXL_L       "conditioner.embedders.0.transformer.text_model."
#define SDX__TE_SDXL_G       "conditioner.embedders.1.model."
#define SDX__TE_HF_PROBE     "embeddings.token_embedding.weight"
#define SDX__TE_OPEN_PROBE   "token_embedding.weight"

static int sdx__st_has(const sdx_st *st, const char *prefix, const char *name) {
    char key[256];
    snprintf(key, sizeof key, "%s%s", prefix, name);
    return sdx_st_find(st, key) != NULL;
}

static void sdx__textenc_free(sdx_ctx *ctx, sdx__textenc *te) {
    for (int i = 0; i < te->n_enc; i++) sdx__clip_free(ctx, &te->enc[i]);
    memset(te, 0, sizeof *te);
}

/* sdx__textenc_load with an explicit weight storage type (SDX_AUTO or a
 * float dtype) instead of the compile-time SDX_TEXT_WEIGHT_TYPE. */
static int sdx__textenc_load_as(sdx_ctx *ctx, sdx__textenc *te, const sdx_st *ckpt, int weight_type) {
    const char *sd1 = NULL;
    int rc = SDX_OK;
    memset(te, 0, sizeof *te);
    te->act_type = SDX_TEXT_ACT_TYPE;
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__te_sd1_prefixes) && !sd1; i++)
        if (sdx__st_has(ckpt, sdx__te_sd1_prefixes[i], SDX__TE_HF_PROBE)) sd1 = sdx__te_sd1_prefixes[i];
    if (sdx__st_has(ckpt, SDX__TE_SDXL_L, SDX__TE_HF_PROBE) && sdx__st_has(ckpt, SDX__TE_SDXL_G, SDX__TE_OPEN_PROBE)) {
        te->family = SDX__TEXT_SDXL;
        te->n_enc = 2;
        if ((rc = sdx__clip_load(ctx, &te->enc[0], ckpt, SDX__TE_SDXL_L, SDX__CLIP_HF, 2, 0, weight_type)) == SDX_OK)
            rc = sdx__clip_load(ctx, &te->enc[1], ckpt, SDX__TE_SDXL_G, SDX__CLIP_OPEN, 2, 0, weight_type);
    } else if (sd1) {
        te->family = SDX__TEXT_SD1;
        te->n_enc = 1;
        rc = sdx__clip_load(ctx, &te->enc[0], ckpt, sd1, SDX__CLIP_HF, 1, 1, weight_type);
    } else if (sdx__st_has(ckpt, SDX__TE_SD2_PREFIX, SDX__TE_OPEN_PROBE)) {
        te->family = SDX__TEXT_SD2;
        te->n_enc = 1;
        rc = sdx__clip_load(ctx, &te->enc[0], ckpt, SDX__TE_SD2_PREFIX, SDX__CLIP_OPEN, 2, 1, weight_type);
    } else {
        return sdx__fail(ctx, SDX_ERR_MODEL,
            "%s: no text encoder found; looked for %s%s or %s%s (SD 1.x), %s%s (SD 2.x), "
            "%s%s + %s%s (SDXL)", sdx_st_path(ckpt),
            sdx__te_sd1_prefixes[0], SDX__TE_HF_PROBE, sdx__te_sd1_prefixes[1], SDX__TE_HF_PROBE,
            SDX__TE_SD2_PREFIX, SDX__TE_OPEN_PROBE, SDX__TE_SDXL_L, SDX__TE_HF_PROBE,
            SDX__TE_SDXL_G, SDX__TE_OPEN_PROBE);
    }
    if (rc != SDX_OK) goto fail;
    te->n_ctx = te->enc[0].n_ctx;
    for (int i = 0; i < te->n_enc; i++) {
        if (te->enc[i].n_ctx != te->n_ctx) {
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: %d positions, but %s has %d", te->enc[i].prefix,
                           te->enc[i].n_ctx, te->enc[0].prefix, te->n_ctx);
            goto fail;
        }
        te->context_dim += te->enc[i].width;
    }
    /* SD1 has no projection: its pooled vector is the normed EOS token */
    {
        const sdx__clip *last = &te->enc[te->n_enc - 1];
        te->pooled_dim = last->proj_dim ? last->proj_dim : last->width;
    }
    return SDX_OK;
fail:
    sdx__textenc_free(ctx, te);
    return rc;
}

/* Detects SD1 (CLIP-L), SD2 (OpenCLIP-H) or SDXL (both) from the keys of
 * `ckpt` and binds every text-encoder weight. On failure `te` is left
 * empty (safe to free) and the message names what was looked for. */
static int sdx__textenc_load(sdx_ctx *ctx, sdx__textenc *te, const sdx_st *ckpt) {
    return sdx__textenc_load_as(ctx, te, ckpt, SDX_TEXT_WEIGHT_TYPE);
}

/* ---- forward -------------------------------------------------------- */

/* x[B, T, W] = token_embedding[ids] + positional_embedding, gathered on
 * the host from host copies of the tables and uploaded once. */
static int sdx__clip_embed(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, const int32_t *ids, sdx_tensor *x) {
    int64_t B = x->shape[0], T = x->shape[1], W = c->width;
    sdx__mark m = sdx__arena_mark(a);
    float *rows = (float *)sdx__arena_host_alloc(a, (size_t)((B * T + 1) * W) * sizeof(float)), *pos;
    int rc;
    if (!rows) return SDX_ERR_NOMEM;
    pos = rows + B * T * W;
    for (int64_t b = 0; b < B; b++) {
        for (int64_t t = 0; t < T; t++) {
            int32_t id = ids[b * T + t];
            float *tok = rows + (b * T + t) * W;
            if (id < 0 || id >= c->vocab) {
                sdx__arena_release(a, m);
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: token id %d at position %lld is outside [0, %d)",
                                 c->prefix, (int)id, (long long)t, c->vocab);
            }
            sdx__load_f32(c->tok_emb.data, c->tok_emb.dtype, (int64_t)id * W, W, tok);
            sdx__load_f32(c->pos_emb.data, c->pos_emb.dtype, t * W, W, pos);
            for (int64_t i = 0; i < W; i++) tok[i] += pos[i];
        }
    }
    rc = sdx__upload(ctx, x, rows);
    sdx__arena_release(a, m);
    return rc == SDX_OK ? sdx__trace_check(ctx, "embedding", x) : rc;
}

/* x += attn(ln_1(x)); x += mlp(ln_2(x)), in place on x[B, T, W]. */
static int sdx__clip_block_forward(sdx_ctx *ctx, const sdx__clip *c, int i, sdx__arena *a, sdx_tensor *x) {
    const sdx__clip_block *b = &c->blocks[i];
    int64_t B = x->shape[0], T = x->shape[1];
    sdx_dtype dt = x->dtype;
    sdx__mark m = sdx__arena_mark(a);
    sdx_tensor h, q, k, v, att, f;
    int rc = SDX_ERR_NOMEM;
    sdx__trace_at(ctx, SDX__PART_TEXT, "%s%s%d", c->prefix,
                  c->layout == SDX__CLIP_HF ? "encoder.layers." : "transformer.resblocks.", i);
    if (!sdx__arena_tensor3(a, &h, dt, B, T, c->width) || !sdx__arena_tensor3(a, &q, dt, B, T, c->width) ||
        !sdx__arena_tensor3(a, &k, dt, B, T, c->width) || !sdx__arena_tensor3(a, &v, dt, B, T, c->width) ||
        !sdx__arena_tensor3(a, &att, dt, B, T, c->width) || !sdx__arena_tensor3(a, &f, dt, B, T, c->mlp))
        goto done;
    SDX__TE_TRY(sdx__layer_norm(ctx, &h, x, SDX__TE_LN_EPS, &b->ln1_w, &b->ln1_b));
    SDX__TE_TRY(sdx__linear(ctx, &q, &h, &b->q_w, &b->q_b));
    SDX__TE_TRY(sdx__linear(ctx, &k, &h, &b->k_w, &b->k_b));
    SDX__TE_TRY(sdx__linear(ctx, &v, &h, &b->v_w, &b->v_b));
    SDX__TE_TRY(sdx__attention(ctx, &att, &q, &k, &v, c->heads, 1));
    SDX__TE_TRY(sdx__linear(ctx, &h, &att, &b->out_w, &b->out_b));
    SDX__TE_TRY(sdx__add(ctx, x, x, &h));
    SDX__TE_TRY(sdx__layer_norm(ctx, &h, x, SDX__TE_LN_EPS, &b->ln2_w, &b->ln2_b));
    SDX__TE_TRY(sdx__linear(ctx, &f, &h, &b->fc1_w, &b->fc1_b));
    SDX__TE_TRY(c->gelu_erf ? sdx__gelu(ctx, &f, &f) : sdx__quick_gelu(ctx, &f, &f));
    SDX__TE_TRY(sdx__linear(ctx, &h, &f, &b->fc2_w, &b->fc2_b));
    SDX__TE_TRY(sdx__add(ctx, x, x, &h));
done:
    sdx__arena_release(a, m);
    return rc;
}

static int sdx__clip_final_norm(sdx_ctx *ctx, const sdx__clip *c, sdx_tensor *y, const sdx_tensor *x) {
    sdx__trace_at(ctx, SDX__PART_TEXT, "%s final norm", c->prefix);
    return sdx__layer_norm(ctx, y, x, SDX__TE_LN_EPS, &c->lnf_w, &c->lnf_b);
}

/* Index of the first largest id: the first EOS, as the reference's
 * argmax finds it (EOS is the largest id in the CLIP vocabulary). */
static int sdx__te_argmax(const int32_t *ids, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (ids[i] > ids[best]) best = i;
    return best;
}

/* Copies n_chunks chunks and rewrites everything after each chunk's first
 * EOS with the encoder's pad id (OpenCLIP pads with 0, CLIP-L with EOS). */
static void sdx__clip_repad(const sdx__clip *c, const int32_t *src, int32_t *dst, int n_chunks) {
    for (int b = 0; b < n_chunks; b++) {
        const int32_t *s = src + (size_t)b * c->n_ctx;
        int32_t *d = dst + (size_t)b * c->n_ctx;
        int seen_eos = 0;
        for (int t = 0; t < c->n_ctx; t++) {
            d[t] = seen_eos ? c->pad_id : s[t];
            if (s[t] == SDX_TOKEN_EOS) seen_eos = 1;
        }
    }
}

/* Number of layers to run for a clip_skip value (<= 1: the default). */
static int sdx__clip_stop_layer(sdx_ctx *ctx, const sdx__clip *c, int clip_skip, int *stop) {
    int skip = clip_skip <= 1 ? c->default_skip : clip_skip;
    if (skip > c->n_layers)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "clip_skip %d: %s has only %d layers", clip_skip,
                         c->prefix, c->n_layers);
    *stop = c->n_layers - skip + 1;
    return SDX_OK;
}

/* y[P] = x[W] @ proj[W, P] (the OpenCLIP orientation), f32 accumulation. */
static int sdx__clip_project(const sdx__clip *c, sdx__arena *a, const float *x, float *y) {
    sdx__mark m = sdx__arena_mark(a);
    int P = c->proj_dim;
    float *row = (float *)sdx__arena_host_alloc(a, (size_t)P * sizeof(float));
    if (!row) return SDX_ERR_NOMEM;
    for (int p = 0; p < P; p++) y[p] = 0.0f;
    for (int w = 0; w < c->width; w++) {
        sdx__load_f32(c->proj.data, c->proj.dtype, (int64_t)w * P, P, row);
        for (int p = 0; p < P; p++) y[p] += x[w] * row[p];
    }
    sdx__arena_release(a, m);
    return SDX_OK;
}

/* Pooled vector of the first chunk: finish the remaining layers on it,
 * final norm, take the first EOS row, project if the encoder can. `x`
 * holds the first `done` layers' output of chunk 0 ([1, T, W]). */
static int sdx__clip_pool(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, sdx_tensor *x, int done,
                          const int32_t *ids, float *pooled) {
    sdx__mark m = sdx__arena_mark(a);
    sdx_tensor y;
    float *row;
    int rc = SDX_ERR_NOMEM;
    for (int i = done; i < c->n_layers; i++) SDX__TE_TRY(sdx__clip_block_forward(ctx, c, i, a, x));
    if (!sdx__arena_tensor3(a, &y, x->dtype, 1, c->n_ctx, c->width)) { rc = SDX_ERR_NOMEM; goto done; }
    row = (float *)sdx__arena_host_alloc(a, (size_t)c->width * sizeof(float));
    if (!row) { rc = SDX_ERR_NOMEM; goto done; }
    SDX__TE_TRY(sdx__clip_final_norm(ctx, c, &y, x));
    y.data = (unsigned char *)y.data + (size_t)sdx__te_argmax(ids, c->n_ctx) * (size_t)c->width * sdx_dtype_size(y.dtype);
    y.ndim = 1;
    y.shape[0] = c->width;     /* the first EOS row */
    SDX__TE_TRY(sdx__download(ctx, row, &y));
    if (c->proj_dim) SDX__TE_TRY(sdx__clip_project(c, a, row, pooled));
    else memcpy(pooled, row, (size_t)c->width * sizeof(float));
done:
    sdx__arena_release(a, m);
    return rc;
}

/* Writes chunk b of z[B, T, W] (any dtype) into context columns
 * [col, col + W) of rows b*T .. b*T+T-1, applying the chunk's emphasis. */
static int sdx__clip_scatter(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, const sdx_tensor *z, int b,
                             const float *mult, float *context, int context_dim, int col) {
    sdx__mark m = sdx__arena_mark(a);
    int64_t T = c->n_ctx, W = c->width;
    float *zf = (float *)sdx__arena_host_alloc(a, (size_t)(T * W) * sizeof(float));
    sdx_tensor zb = *z;       /* chunk b */
    int rc;
    if (!zf) return SDX_ERR_NOMEM;
    zb.shape[0] = 1;
    zb.data = (unsigned char *)z->data + (size_t)(b * T * W) * sdx_dtype_size(z->dtype);
    if ((rc = sdx__download(ctx, zf, &zb)) != SDX_OK) { sdx__arena_release(a, m); return rc; }
    if (mult) sdx__emphasis_original(zf, (int)T, (int)W, mult);   /* all-one: untouched */
    for (int64_t t = 0; t < T; t++)
        memcpy(context + ((int64_t)b * T + t) * context_dim + col, zf + t * W, (size_t)W * sizeof(float));
    sdx__arena_release(a, m);
    return SDX_OK;
}

/* One encoder's share of the context (columns [col, col + width)) and,
 * when `pooled` is not NULL, the pooled vector of chunk 0. */
static int sdx__clip_encode(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, sdx_dtype act, const int32_t *ids_in,
                            const float *mult, int n_chunks, int clip_skip, float *context, int context_dim,
                            int col, float *pooled) {
    sdx__mark m = sdx__arena_mark(a);
    int64_t T = c->n_ctx;
    int32_t *ids;
    sdx_tensor x, y, x0;
    int stop = 0, rc;
    if ((rc = sdx__clip_stop_layer(ctx, c, clip_skip, &stop)) != SDX_OK) return rc;
    rc = SDX_ERR_NOMEM;
    ids = (int32_t *)sdx__arena_host_alloc(a, (size_t)n_chunks * (size_t)T * sizeof(int32_t));
    if (!ids || !sdx__arena_tensor3(a, &x, act, n_chunks, T, c->width) ||
        (c->norm_context && !sdx__arena_tensor3(a, &y, act, n_chunks, T, c->width)))
        goto done;
    sdx__clip_repad(c, ids_in, ids, n_chunks);
    sdx__trace_at(ctx, SDX__PART_TEXT, "%s embeddings", c->prefix);
    SDX__TE_TRY(sdx__clip_embed(ctx, c, a, ids, &x));
    for (int i = 0; i < stop; i++) SDX__TE_TRY(sdx__clip_block_forward(ctx, c, i, a, &x));
    if (c->norm_context) SDX__TE_TRY(sdx__clip_final_norm(ctx, c, &y, &x));
    for (int b = 0; b < n_chunks; b++)
        SDX__TE_TRY(sdx__clip_scatter(ctx, c, a, c->norm_context ? &y : &x, b, mult ? mult + (size_t)b * T : NULL,
                                      context, context_dim, col));
    if (pooled) {
        x0 = x;                 /* chunk 0 only: the first T rows */
        x0.shape[0] = 1;
        SDX__TE_TRY(sdx__clip_pool(ctx, c, a, &x0, stop, ids, pooled));
    }
done:
    sdx__arena_release(a, m);
    return rc;
}

/* Raw form of sdx__textenc_encode: `ids` holds n_chunks * n_ctx token ids
 * (BOS ... EOS, any padding after the first EOS: each encoder re-pads with
 * its own pad id); `mult` the matching emphasis multipliers or NULL.
 * `pooled` may be NULL. See the top of this file for what is produced. */
static int sdx__textenc_encode_ids(sdx_ctx *ctx, sdx__textenc *te, sdx__arena *arena, const int32_t *ids,
                                   const float *mult, int n_chunks, int clip_skip, sdx_tensor *context,
                                   sdx_tensor *pooled) {
    int64_t cshape[2], pshape[1];
    int rc, col = 0;
    if (!te || !te->n_enc || !ids || n_chunks < 1 || !context)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "text encode: no encoder, ids or chunks");
    cshape[0] = (int64_t)n_chunks * te->n_ctx;
    cshape[1] = te->context_dim;
    pshape[0] = te->pooled_dim;
    if ((rc = sdx_tensor_alloc(ctx, context, SDX_F32, 2, cshape)) != SDX_OK) return rc;
    if (pooled && (rc = sdx_tensor_alloc(ctx, pooled, SDX_F32, 1, pshape)) != SDX_OK) goto fail;
    for (int e = 0; e < te->n_enc; e++) {
        const sdx__clip *c = &te->enc[e];
        /* the pooled vector comes from the last encoder (SDXL: bigG) */
        float *pool = pooled && e == te->n_enc - 1 ? (float *)pooled->data : NULL;
        rc = sdx__clip_encode(ctx, c, arena, (sdx_dtype)te->act_type, ids, mult, n_chunks, clip_skip,
                              (float *)context->data, te->context_dim, col, pool);
        if (rc != SDX_OK) goto fail;
        col += c->width;
    }
    return SDX_OK;
fail:
    sdx_tensor_free(ctx, context);
    if (pooled) sdx_tensor_free(ctx, pooled);
    return rc;
}

/* Prompt chunks (from sdx__prompt_chunks) -> context and pooled. */
static int sdx__textenc_encode(sdx_ctx *ctx, sdx__textenc *te, sdx__arena *arena, const sdx__chunks *chunks,
                               int clip_skip, sdx_tensor *context, sdx_tensor *pooled) {
    if (!chunks || chunks->n < 1)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "text encode: no prompt chunks");
    /* chunks hold 77 ids each; an encoder with another positional length
     * (LongCLIP's 248) would read past every chunk */
    if (te && te->n_enc && te->n_ctx != SDX__CHUNK_TOKENS + 2)
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "%s: text encoder '%s' has %d positions; prompt chunks have %d tokens",
                         sdx_st_path(te->enc[0].w.st), te->enc[0].prefix, te->n_ctx, SDX__CHUNK_TOKENS + 2);
    return sdx__textenc_encode_ids(ctx, te, arena, chunks->tokens, chunks->mult, chunks->n, clip_skip, context, pooled);
}

/* The ids of the empty prompt: BOS, EOS, then EOS padding (the pipeline
 * repeats its context to pad a shorter negative prompt, as A1111 does). */
static void sdx__textenc_empty_ids(int32_t *ids, int n_ctx) {
    ids[0] = SDX_TOKEN_BOS;
    for (int i = 1; i < n_ctx; i++) ids[i] = SDX_TOKEN_EOS;
}

/* SDXL vector y = concat(pooled, e(orig_h), e(orig_w), e(crop_top),
 * e(crop_left), e(target_h), e(target_w)); e = sinusoidal embedding, cos
 * first, max_period 10000, of size (y_dim - pooled_dim) / 6 (256 in SDXL). */
static int sdx__sdxl_vector(sdx_ctx *ctx, const float *pooled, int pooled_dim, const float size_cond[6], float *y,
                            int y_dim) {
    int emb = pooled_dim >= 0 && y_dim > pooled_dim ? (y_dim - pooled_dim) / 6 : 0;
    if (emb <= 0 || emb % 2 || pooled_dim + 6 * emb != y_dim)
        return sdx__fail(ctx, SDX_ERR_MODEL,
                         "SDXL vector conditioning: %d features cannot hold the pooled vector (%d) "
                         "plus 6 size embeddings of equal even size", y_dim, pooled_dim);
    memcpy(y, pooled, (size_t)pooled_dim * sizeof(float));
    for (int i = 0; i < 6; i++)
        sdx__timestep_embedding(y + pooled_dim + i * emb, &size_cond[i], 1, emb, 10000.0f);
    return SDX_OK;
}

/* ---- src/models/unet.c ---- */

/* ===================================================================== */
/*  UNet (SD 1.x, SD 2.x, SDXL and their distilled variants)              */
/* ===================================================================== */

/* The architecture is read from the checkpoint, never from a table of
 * known models. LDM/SGM checkpoints name each module by its position:
 * input_blocks.N.M, middle_block.M, output_blocks.N.M. Walking those
 * indices until the first gap gives the block list of SD 1.x/2.x/SDXL
 * and equally of distilled models that drop blocks or thin transformers
 * (SSD-1B, Vega, BK-SDM). What a module is comes from the keys it has:
 *   ResBlock            M.in_layers.2.weight
 *   SpatialTransformer  M.proj_in.weight (depth = transformer_blocks.K count)
 *   Downsample          M.op.weight
 *   Upsample            M.conv.weight
 * Widths come from tensor shapes; every tensor is then fetched with the
 * shape the data flow implies, so a bad file names the tensor and the
 * expected vs found shape at load time.
 *
 * Attention heads cannot be read from shapes (PIPELINE.md):
 *   - SD 2.x and SDXL use head_dim 64. They are recognised by a label_emb
 *     (SDXL-style vector conditioning), by linear proj_in/proj_out
 *     (use_linear_in_transformer, every SD 2.x/SDXL release), or by
 *     context_dim 1024 (OpenCLIP-H).
 *   - Everything else (1x1-conv projections, no label_emb: SD 1.x with
 *     context_dim 768) uses 8 heads.
 * sdx__unet.num_heads / head_dim hold the result; a caller that knows
 * better may change them after loading (exactly one of them > 0). */

#define SDX__UNET_MAX_LAYERS 4    /* modules per block (LDM uses at most 3) */
#define SDX__UNET_MAX_LEVELS 8
#define SDX__UNET_MAX_BLOCKS 64   /* input/output blocks (SDXL: 9, SD 1.x: 12) */
#define SDX__UNET_MAX_DEPTH 64    /* transformer blocks per SpatialTransformer */
#define SDX__UNET_GROUPS 32
#define SDX__UNET_MAX_WIDTH (1 << 20)   /* channels; keeps int products of widths exact */

enum { SDX__UL_CONV, SDX__UL_RES, SDX__UL_ATTN, SDX__UL_DOWN, SDX__UL_UP };

typedef struct sdx__unet_res {
    int cin, cout;
    const sdx_tensor *norm1_w, *norm1_b, *conv1_w, *conv1_b;
    const sdx_tensor *emb_w, *emb_b;
    const sdx_tensor *norm2_w, *norm2_b, *conv2_w, *conv2_b;
    const sdx_tensor *skip_w, *skip_b;           /* NULL: identity skip */
} sdx__unet_res;

/* BasicTransformerBlock: self-attention, cross-attention, GEGLU FF. */
typedef struct sdx__unet_xblock {
    const sdx_tensor *ln1_w, *ln1_b, *q1, *k1, *v1, *o1_w, *o1_b;
    const sdx_tensor *ln2_w, *ln2_b, *q2, *k2, *v2, *o2_w, *o2_b;
    const sdx_tensor *ln3_w, *ln3_b, *ff1_w, *ff1_b, *ff2_w, *ff2_b;
    int ff_inner;
} sdx__unet_xblock;

typedef struct sdx__unet_attn {
    int channels, inner, depth, linear;
    const sdx_tensor *norm_w, *norm_b, *proj_in_w, *proj_in_b, *proj_out_w, *proj_out_b;
    sdx__unet_xblock *blocks;                    /* depth entries, owned */
} sdx__unet_attn;

typedef struct sdx__unet_layer {
    int kind;                                    /* SDX__UL_* */
    int cin, cout;
    sdx__unet_res res;
    sdx__unet_attn attn;
    const sdx_tensor *conv_w, *conv_b;           /* CONV, DOWN, UP */
} sdx__unet_layer;

typedef struct sdx__unet_block {
    int n_layers, cin, cout;
    sdx__unet_layer layer[SDX__UNET_MAX_LAYERS];
} sdx__unet_block;

typedef struct sdx__unet {
    sdx_ctx *ctx;
    sdx__wset w;
    /* read from the checkpoint */
    int in_channels, out_channels, model_channels, embed_dim;
    int context_dim;                 /* 0 when there is no attention at all */
    int adm_channels;                /* label_emb input width; 0 = none    */
    int linear_proj;                 /* first transformer uses Linear proj */
    int n_levels;
    int channel_mult[SDX__UNET_MAX_LEVELS];
    int num_res_blocks[SDX__UNET_MAX_LEVELS];
    int n_in, n_out;
    sdx__unet_block *in, *out;       /* SDX__UNET_MAX_BLOCKS each, owned */
    sdx__unet_block mid;
    const sdx_tensor *te0_w, *te0_b, *te2_w, *te2_b;   /* time_embed   */
    const sdx_tensor *le0_w, *le0_b, *le2_w, *le2_b;   /* label_emb.0  */
    const sdx_tensor *out_norm_w, *out_norm_b, *out_conv_w, *out_conv_b;
    /* policy; may be changed between load and forward */
    int num_heads;                   /* > 0: fixed head count (SD 1.x)    */
    int head_dim;                    /* > 0: heads = channels / head_dim  */
    sdx_dtype act_type;              /* activation storage (SDX_UNET_ACT_TYPE) */
} sdx__unet;

#define SDX__UNET_DO(expr) do { if ((rc = (expr)) != SDX_OK) goto done; } while (0)

/* ---- loading ------------------------------------------------------------ */

/* A failed fetch returns its code: SDX_ERR_NOMEM when converting to the
 * policy's weight type ran out of memory, else SDX_ERR_MODEL. */
#define SDX__UNET_GET(dst, w, ...) do { if (!((dst) = sdx__wget(w, __VA_ARGS__))) return sdx__werr(w); } while (0)

/* The file tensor, only to read a width from its shape: unlike
 * sdx__wget_any it never makes a converted copy, which the real fetch
 * (with the expected shape) would then make a second time. */
static SDX__PRINTF(2, 3) const sdx_tensor *sdx__unet_probe(sdx__unet *u, const char *fmt, ...) {
    char name[512];
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wfind(&u->w, name, sizeof name, fmt, ap);
    va_end(ap);
    if (!t) u->w.rc = sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: missing tensor '%s' (unet)", sdx_st_path(u->w.st), name);
    return t;
}

/* Dim `axis` of t when it is a plausible width (1..SDX__UNET_MAX_WIDTH), else 0. */
static int sdx__unet_width(const sdx_tensor *t, int axis) {
    int64_t v = axis < t->ndim ? t->shape[axis] : 0;
    return v > 0 && v <= SDX__UNET_MAX_WIDTH ? (int)v : 0;
}

static int sdx__unet_bad_probe(sdx__unet *u, const sdx_tensor *t, const char *expected) {
    char found[96];
    return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: tensor '%s': expected %s (widths 1..%d), found %s",
                     sdx_st_path(u->w.st), t->name, expected, SDX__UNET_MAX_WIDTH, sdx_shape_str(t, found, sizeof found));
}

static int sdx__unet_load_res(sdx__unet *u, sdx__unet_res *r, const char *base, int cin) {
    sdx__wset *w = &u->w;
    /* the width comes from the output norm, so that a mis-shaped conv is
     * reported against the shape the rest of the block implies */
    const sdx_tensor *probe = sdx__unet_probe(u, "%s.out_layers.0.weight", base);
    int co;
    if (!probe) return sdx__werr(w);
    if (probe->ndim != 1 || !(co = sdx__unet_width(probe, 0))) return sdx__unet_bad_probe(u, probe, "a norm scale [C]");
    r->cin = cin;
    r->cout = co;
    SDX__UNET_GET(r->norm1_w, w, 1, SDX__S(cin), "%s.in_layers.0.weight", base);
    SDX__UNET_GET(r->norm1_b, w, 1, SDX__S(cin), "%s.in_layers.0.bias", base);
    SDX__UNET_GET(r->conv1_w, w, 4, SDX__S(co, cin, 3, 3), "%s.in_layers.2.weight", base);
    SDX__UNET_GET(r->conv1_b, w, 1, SDX__S(co), "%s.in_layers.2.bias", base);
    SDX__UNET_GET(r->emb_w, w, 2, SDX__S(co, u->embed_dim), "%s.emb_layers.1.weight", base);
    SDX__UNET_GET(r->emb_b, w, 1, SDX__S(co), "%s.emb_layers.1.bias", base);
    SDX__UNET_GET(r->norm2_w, w, 1, SDX__S(co), "%s.out_layers.0.weight", base);
    SDX__UNET_GET(r->norm2_b, w, 1, SDX__S(co), "%s.out_layers.0.bias", base);
    SDX__UNET_GET(r->conv2_w, w, 4, SDX__S(co, co, 3, 3), "%s.out_layers.3.weight", base);
    SDX__UNET_GET(r->conv2_b, w, 1, SDX__S(co), "%s.out_layers.3.bias", base);
    r->skip_w = r->skip_b = NULL;
    /* LDM uses an identity skip when the width does not change */
    if (cin != co || sdx__whas(w, "%s.skip_connection.weight", base)) {
        SDX__UNET_GET(r->skip_w, w, 4, SDX__S(co, cin, 1, 1), "%s.skip_connection.weight", base);
        SDX__UNET_GET(r->skip_b, w, 1, SDX__S(co), "%s.skip_connection.bias", base);
    }
    return SDX_OK;
}

static int sdx__unet_load_xblock(sdx__unet *u, sdx__unet_xblock *b, const char *base, int d, int inner) {
    sdx__wset *w = &u->w;
    const sdx_tensor *k2, *ff1;
    /* the first transformer fixes context_dim; the others must agree */
    if (!(k2 = sdx__unet_probe(u, "%s.transformer_blocks.%d.attn2.to_k.weight", base, d))) return sdx__werr(w);
    if (u->context_dim == 0 && !(u->context_dim = k2->ndim == 2 ? sdx__unet_width(k2, 1) : 0))
        return sdx__unet_bad_probe(u, k2, "[inner, context_dim]");
    if (!(ff1 = sdx__unet_probe(u, "%s.transformer_blocks.%d.ff.net.0.proj.weight", base, d))) return sdx__werr(w);
    b->ff_inner = ff1->ndim == 2 ? sdx__unet_width(ff1, 0) / 2 : 0;
    if (b->ff_inner <= 0) b->ff_inner = 4 * inner;   /* let the shape check below report it */
#define SDX__XB_GET(dst, nd, shp, name) \
    SDX__UNET_GET(b->dst, w, nd, shp, "%s.transformer_blocks.%d." name, base, d)
    SDX__XB_GET(ln1_w, 1, SDX__S(inner), "norm1.weight");
    SDX__XB_GET(ln1_b, 1, SDX__S(inner), "norm1.bias");
    SDX__XB_GET(q1, 2, SDX__S(inner, inner), "attn1.to_q.weight");
    SDX__XB_GET(k1, 2, SDX__S(inner, inner), "attn1.to_k.weight");
    SDX__XB_GET(v1, 2, SDX__S(inner, inner), "attn1.to_v.weight");
    SDX__XB_GET(o1_w, 2, SDX__S(inner, inner), "attn1.to_out.0.weight");
    SDX__XB_GET(o1_b, 1, SDX__S(inner), "attn1.to_out.0.bias");
    SDX__XB_GET(ln2_w, 1, SDX__S(inner), "norm2.weight");
    SDX__XB_GET(ln2_b, 1, SDX__S(inner), "norm2.bias");
    SDX__XB_GET(q2, 2, SDX__S(inner, inner), "attn2.to_q.weight");
    SDX__XB_GET(k2, 2, SDX__S(inner, u->context_dim), "attn2.to_k.weight");
    SDX__XB_GET(v2, 2, SDX__S(inner, u->context_dim), "attn2.to_v.weight");
    SDX__XB_GET(o2_w, 2, SDX__S(inner, inner), "attn2.to_out.0.weight");
    SDX__XB_GET(o2_b, 1, SDX__S(inner), "attn2.to_out.0.bias");
    SDX__XB_GET(ln3_w, 1, SDX__S(inner), "norm3.weight");
    SDX__XB_GET(ln3_b, 1, SDX__S(inner), "norm3.bias");
    SDX__XB_GET(ff1_w, 2, SDX__S(2 * b->ff_inner, inner), "ff.net.0.proj.weight");
    SDX__XB_GET(ff1_b, 1, SDX__S(2 * b->ff_inner), "ff.net.0.proj.bias");
    SDX__XB_GET(ff2_w, 2, SDX__S(inner, b->ff_inner), "ff.net.2.weight");
    SDX__XB_GET(ff2_b, 1, SDX__S(inner), "ff.net.2.bias");
#undef SDX__XB_GET
    return SDX_OK;
}

static int sdx__unet_load_attn(sdx__unet *u, sdx__unet_attn *t, const char *base, int c) {
    sdx__wset *w = &u->w;
    const sdx_tensor *probe = sdx__unet_probe(u, "%s.proj_in.weight", base);
    int rc, inner, depth = 0;
    if (!probe) return sdx__werr(w);
    t->linear = probe->ndim == 2;
    inner = probe->ndim == 2 || probe->ndim == 4 ? sdx__unet_width(probe, 0) : 0;
    if (!inner) return sdx__unet_bad_probe(u, probe, "a Linear [inner, C] or a 1x1 convolution [inner, C, 1, 1]");
    t->channels = c;
    t->inner = inner;
    SDX__UNET_GET(t->norm_w, w, 1, SDX__S(c), "%s.norm.weight", base);
    SDX__UNET_GET(t->norm_b, w, 1, SDX__S(c), "%s.norm.bias", base);
    if (t->linear) {
        SDX__UNET_GET(t->proj_in_w, w, 2, SDX__S(inner, c), "%s.proj_in.weight", base);
        SDX__UNET_GET(t->proj_out_w, w, 2, SDX__S(c, inner), "%s.proj_out.weight", base);
    } else {
        SDX__UNET_GET(t->proj_in_w, w, 4, SDX__S(inner, c, 1, 1), "%s.proj_in.weight", base);
        SDX__UNET_GET(t->proj_out_w, w, 4, SDX__S(c, inner, 1, 1), "%s.proj_out.weight", base);
    }
    SDX__UNET_GET(t->proj_in_b, w, 1, SDX__S(inner), "%s.proj_in.bias", base);
    SDX__UNET_GET(t->proj_out_b, w, 1, SDX__S(c), "%s.proj_out.bias", base);
    while (depth < SDX__UNET_MAX_DEPTH && sdx__whas(w, "%s.transformer_blocks.%d.attn1.to_q.weight", base, depth)) depth++;
    if (depth == 0) {   /* let wget phrase the missing-tensor message */
        SDX__UNET_GET(probe, w, 2, SDX__S(inner, inner), "%s.transformer_blocks.0.attn1.to_q.weight", base);
    }
    t->blocks = (sdx__unet_xblock *)sdx__calloc(u->ctx, (size_t)depth, sizeof *t->blocks);
    if (!t->blocks) return sdx__nomem(u->ctx, "UNet transformer blocks", (size_t)depth * sizeof *t->blocks);
    t->depth = depth;
    for (int d = 0; d < depth; d++)
        if ((rc = sdx__unet_load_xblock(u, &t->blocks[d], base, d, inner)) != SDX_OK) return rc;
    return SDX_OK;
}

/* Loads module `base` if present: returns 1 (loaded), 0 (absent) or an
 * error code (< 0). `cin` is the width entering it. */
static int sdx__unet_load_layer(sdx__unet *u, sdx__unet_layer *L, const char *base, int cin) {
    sdx__wset *w = &u->w;
    int rc;
    memset(L, 0, sizeof *L);
    L->cin = L->cout = cin;
    if (sdx__whas(w, "%s.in_layers.2.weight", base)) {
        L->kind = SDX__UL_RES;
        if ((rc = sdx__unet_load_res(u, &L->res, base, cin)) != SDX_OK) return rc;
        L->cout = L->res.cout;
    } else if (sdx__whas(w, "%s.proj_in.weight", base)) {
        L->kind = SDX__UL_ATTN;
        if ((rc = sdx__unet_load_attn(u, &L->attn, base, cin)) != SDX_OK) return rc;
    } else if (sdx__whas(w, "%s.op.weight", base) || sdx__whas(w, "%s.conv.weight", base)) {
        const char *name = sdx__whas(w, "%s.op.weight", base) ? "op" : "conv";
        L->kind = name[0] == 'o' ? SDX__UL_DOWN : SDX__UL_UP;
        SDX__UNET_GET(L->conv_w, w, 4, SDX__S(cin, cin, 3, 3), "%s.%s.weight", base, name);
        SDX__UNET_GET(L->conv_b, w, 1, SDX__S(cin), "%s.%s.bias", base, name);
    } else {
        return 0;
    }
    return 1;
}

/* Loads the modules base.0, base.1, ... of one block. */
static int sdx__unet_load_block(sdx__unet *u, sdx__unet_block *b, const char *base, int cin) {
    char name[96];
    int c = cin, rc;
    b->cin = cin;
    b->n_layers = 0;
    for (int m = 0; m < SDX__UNET_MAX_LAYERS; m++) {
        snprintf(name, sizeof name, "%s.%d", base, m);
        rc = sdx__unet_load_layer(u, &b->layer[m], name, c);
        if (rc < 0) return rc;
        if (rc == 0) break;
        c = b->layer[m].cout;
        b->n_layers = m + 1;
    }
    b->cout = c;
    return SDX_OK;
}

static int sdx__unet_block_has(const sdx__unet_block *b, int kind) {
    for (int i = 0; i < b->n_layers; i++) if (b->layer[i].kind == kind) return 1;
    return 0;
}

static int sdx__unet_load_stem(sdx__unet *u) {
    sdx__wset *w = &u->w;
    const sdx_tensor *conv_in = sdx__unet_probe(u, "input_blocks.0.0.weight");
    const sdx_tensor *te0 = conv_in ? sdx__unet_probe(u, "time_embed.0.weight") : NULL;
    sdx__unet_layer *L = &u->in[0].layer[0];
    if (!conv_in || !te0 || conv_in->ndim != 4 || te0->ndim != 2)
        return sdx__fail(u->ctx, SDX_ERR_MODEL,
                         "%s: not an LDM/SGM UNet: no '%sinput_blocks.0.0.weight' [C, in, 3, 3] and "
                         "'%stime_embed.0.weight' (wrong prefix, or an unsupported architecture)",
                         sdx_st_path(w->st), w->prefix, w->prefix);
    /* a zero width would divide by zero in the level bookkeeping */
    if (!(u->model_channels = sdx__unet_width(conv_in, 0)) || !(u->in_channels = sdx__unet_width(conv_in, 1)))
        return sdx__unet_bad_probe(u, conv_in, "[model_channels, in_channels, 3, 3]");
    if (!(u->embed_dim = sdx__unet_width(te0, 0))) return sdx__unet_bad_probe(u, te0, "[embed_dim, model_channels]");
    SDX__UNET_GET(u->te0_w, w, 2, SDX__S(u->embed_dim, u->model_channels), "time_embed.0.weight");
    SDX__UNET_GET(u->te0_b, w, 1, SDX__S(u->embed_dim), "time_embed.0.bias");
    SDX__UNET_GET(u->te2_w, w, 2, SDX__S(u->embed_dim, u->embed_dim), "time_embed.2.weight");
    SDX__UNET_GET(u->te2_b, w, 1, SDX__S(u->embed_dim), "time_embed.2.bias");
    if (sdx__whas(w, "label_emb.0.0.weight")) {
        const sdx_tensor *le = sdx__unet_probe(u, "label_emb.0.0.weight");
        if (!le) return sdx__werr(w);
        if (!(u->adm_channels = le->ndim == 2 ? sdx__unet_width(le, 1) : 0))
            return sdx__unet_bad_probe(u, le, "[embed_dim, adm_channels]");
        SDX__UNET_GET(u->le0_w, w, 2, SDX__S(u->embed_dim, u->adm_channels), "label_emb.0.0.weight");
        SDX__UNET_GET(u->le0_b, w, 1, SDX__S(u->embed_dim), "label_emb.0.0.bias");
        SDX__UNET_GET(u->le2_w, w, 2, SDX__S(u->embed_dim, u->embed_dim), "label_emb.0.2.weight");
        SDX__UNET_GET(u->le2_b, w, 1, SDX__S(u->embed_dim), "label_emb.0.2.bias");
    }
    L->kind = SDX__UL_CONV;
    L->cin = u->in_channels;
    L->cout = u->model_channels;
    SDX__UNET_GET(L->conv_w, w, 4, SDX__S(u->model_channels, u->in_channels, 3, 3), "input_blocks.0.0.weight");
    SDX__UNET_GET(L->conv_b, w, 1, SDX__S(u->model_channels), "input_blocks.0.0.bias");
    u->in[0].n_layers = 1;
    u->in[0].cin = u->in_channels;
    u->in[0].cout = u->model_channels;
    return SDX_OK;
}

static int sdx__unet_layout_error(sdx__unet *u, const char *what, const char *where, int n) {
    return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: unrecognised UNet layout: %s in %s%s.%d",
                     sdx_st_path(u->w.st), what, u->w.prefix, where, n);
}

/* Walks input_blocks, middle_block, output_blocks; records the level
 * structure (informational: the forward pass follows the blocks). */
static int sdx__unet_load_blocks(sdx__unet *u) {
    char base[64];
    int c = u->model_channels, rc, level = 0;
    int skip_ch[SDX__UNET_MAX_BLOCKS];
    skip_ch[0] = c;
    u->n_in = 1;
    for (int n = 1; n < SDX__UNET_MAX_BLOCKS; n++) {
        sdx__unet_block *b = &u->in[n];
        snprintf(base, sizeof base, "input_blocks.%d", n);
        if ((rc = sdx__unet_load_block(u, b, base, c)) != SDX_OK) return rc;
        if (b->n_layers == 0) break;
        if (sdx__unet_block_has(b, SDX__UL_UP)) return sdx__unet_layout_error(u, "an upsampler", "input_blocks", n);
        if (sdx__unet_block_has(b, SDX__UL_DOWN)) {
            if (++level >= SDX__UNET_MAX_LEVELS) return sdx__unet_layout_error(u, "too many levels", "input_blocks", n);
        } else if (b->layer[0].kind == SDX__UL_RES) {
            if (u->num_res_blocks[level]++ == 0) u->channel_mult[level] = b->cout / u->model_channels;
        }
        c = skip_ch[n] = b->cout;
        u->n_in = n + 1;
    }
    u->n_levels = level + 1;
    if ((rc = sdx__unet_load_block(u, &u->mid, "middle_block", c)) != SDX_OK) return rc;
    if (sdx__unet_block_has(&u->mid, SDX__UL_UP) || sdx__unet_block_has(&u->mid, SDX__UL_DOWN))
        return sdx__unet_layout_error(u, "a resampler", "middle_block", 0);
    c = u->mid.cout;
    for (int n = 0; n < SDX__UNET_MAX_BLOCKS; n++) {
        snprintf(base, sizeof base, "output_blocks.%d", n);
        if (!sdx__whas(&u->w, "%s.0.in_layers.2.weight", base)) break;
        if (n >= u->n_in) return sdx__unet_layout_error(u, "more output blocks than skip connections", "output_blocks", n);
        /* each output block starts with the newest unused skip concatenated */
        if ((rc = sdx__unet_load_block(u, &u->out[n], base, c + skip_ch[u->n_in - 1 - n])) != SDX_OK) return rc;
        if (sdx__unet_block_has(&u->out[n], SDX__UL_DOWN))
            return sdx__unet_layout_error(u, "a downsampler", "output_blocks", n);
        c = u->out[n].cout;
        u->n_out = n + 1;
    }
    if (u->n_out != u->n_in)
        return sdx__fail(u->ctx, SDX_ERR_MODEL,
                         "%s: unrecognised UNet layout: %d input blocks (skip connections) but %d output blocks "
                         "(expected '%soutput_blocks.%d.0.in_layers.2.weight')",
                         sdx_st_path(u->w.st), u->n_in, u->n_out, u->w.prefix, u->n_out);
    SDX__UNET_GET(u->out_norm_w, &u->w, 1, SDX__S(c), "out.0.weight");
    SDX__UNET_GET(u->out_norm_b, &u->w, 1, SDX__S(c), "out.0.bias");
    SDX__UNET_GET(u->out_conv_w, &u->w, 4, SDX__S(-1, c, 3, 3), "out.2.weight");
    if (!(u->out_channels = sdx__unet_width(u->out_conv_w, 0))) return sdx__unet_bad_probe(u, u->out_conv_w, "[out_channels, C, 3, 3]");
    SDX__UNET_GET(u->out_conv_b, &u->w, 1, SDX__S(u->out_channels), "out.2.bias");
    return SDX_OK;
}

/* The head rule documented at the top of this file. */
static void sdx__unet_pick_heads(sdx__unet *u) {
    u->linear_proj = 0;
    for (int n = 0; n < u->n_in && !u->linear_proj; n++)
        for (int m = 0; m < u->in[n].n_layers; m++)
            if (u->in[n].layer[m].kind == SDX__UL_ATTN) { u->linear_proj = u->in[n].layer[m].attn.linear; break; }
    if (u->adm_channels > 0 || u->linear_proj || u->context_dim == 1024) {
        u->num_heads = 0;
        u->head_dim = 64;
    } else {
        u->num_heads = 8;
        u->head_dim = 0;
    }
}

/* Every slot, not just n_layers: a load that failed half-way may have
 * allocated the transformer list of the layer it stopped in. */
static void sdx__unet_free_block(sdx_ctx *ctx, sdx__unet_block *b) {
    for (int i = 0; i < SDX__UNET_MAX_LAYERS; i++)
        if (b->layer[i].kind == SDX__UL_ATTN) sdx__free(ctx, b->layer[i].attn.blocks);
    memset(b, 0, sizeof *b);
}

static void sdx__unet_free(sdx__unet *u) {
    if (!u->ctx) return;
    for (int n = 0; u->in && n < SDX__UNET_MAX_BLOCKS; n++) sdx__unet_free_block(u->ctx, &u->in[n]);
    for (int n = 0; u->out && n < SDX__UNET_MAX_BLOCKS; n++) sdx__unet_free_block(u->ctx, &u->out[n]);
    sdx__free(u->ctx, u->in);
    sdx__free(u->ctx, u->out);
    sdx__unet_free_block(u->ctx, &u->mid);
    sdx__wset_free(&u->w);
    memset(u, 0, sizeof *u);
}

/* Loads with an explicit weight storage type (SDX_AUTO keeps the file's). */
static int sdx__unet_load_typed(sdx_ctx *ctx, sdx__unet *u, const sdx_st *ckpt, const char *prefix, int weight_type) {
    int rc;
    memset(u, 0, sizeof *u);
    u->ctx = ctx;
    u->act_type = (sdx_dtype)SDX_UNET_ACT_TYPE;
    sdx__wset_init(&u->w, ctx, ckpt, prefix, SDX__PART_UNET, weight_type);
    u->in = (sdx__unet_block *)sdx__calloc(ctx, SDX__UNET_MAX_BLOCKS, sizeof *u->in);
    u->out = (sdx__unet_block *)sdx__calloc(ctx, SDX__UNET_MAX_BLOCKS, sizeof *u->out);
    if (!u->in || !u->out) {
        sdx__unet_free(u);
        return sdx__nomem(ctx, "UNet block list", 2 * SDX__UNET_MAX_BLOCKS * sizeof(sdx__unet_block));
    }
    if ((rc = sdx__unet_load_stem(u)) == SDX_OK && (rc = sdx__unet_load_blocks(u)) == SDX_OK) {
        sdx__unet_pick_heads(u);
        return SDX_OK;
    }
    /* keep the message: sdx__unet_free does not touch ctx->error */
    if (rc != SDX_ERR_NOMEM && rc != SDX_ERR_MODEL) rc = SDX_ERR_MODEL;
    sdx__unet_free(u);
    return rc;
}

/* Resolves every UNet tensor under `prefix` ("model.diffusion_model.")
 * once; the storage type comes from SDX_UNET_WEIGHT_TYPE. */
static int sdx__unet_load(sdx_ctx *ctx, sdx__unet *u, const sdx_st *ckpt, const char *prefix) {
    return sdx__unet_load_typed(ctx, u, ckpt, prefix, SDX_UNET_WEIGHT_TYPE);
}

/* One line for logs: "UNet: in 4, out 4, model_channels 320, mult [1,2,4,4], ..." */
static void sdx__unet_describe(const sdx__unet *u, char *buf, size_t size) {
    size_t used = 0;
#define SDX__APPEND(...) do { if (used < size) used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__); } while (0)
    SDX__APPEND("UNet: in %d, out %d, model_channels %d, mult [", u->in_channels, u->out_channels, u->model_channels);
    for (int l = 0; l < u->n_levels; l++) SDX__APPEND(l ? ",%d" : "%d", u->channel_mult[l]);
    SDX__APPEND("], res blocks [");
    for (int l = 0; l < u->n_levels; l++) SDX__APPEND(l ? ",%d" : "%d", u->num_res_blocks[l]);
    SDX__APPEND("], transformer depth in [");
    for (int n = 1; n < u->n_in; n++) {
        int d = 0;
        for (int m = 0; m < u->in[n].n_layers; m++)
            if (u->in[n].layer[m].kind == SDX__UL_ATTN) d = u->in[n].layer[m].attn.depth;
        SDX__APPEND(n > 1 ? ",%d" : "%d", d);
    }
    SDX__APPEND("], context %d, %s proj, adm %d, ", u->context_dim, u->linear_proj ? "linear" : "conv", u->adm_channels);
    if (u->num_heads > 0) SDX__APPEND("%d heads", u->num_heads);
    else SDX__APPEND("head_dim %d", u->head_dim);
#undef SDX__APPEND
}

/* ---- forward -------------------------------------------------------------- */

/* What a forward pass needs besides the weights. */
typedef struct sdx__unet_run {
    sdx__unet *u;
    sdx_ctx *ctx;
    sdx__arena *a;
    const sdx_tensor *emb;      /* silu(time_embed + label_emb), f32 [B, E] */
    const sdx_tensor *context;  /* [B, T, D] */
    const char *block;          /* tracer names: "input_blocks" ... */
    int block_index;            /* N, or -1 for middle_block */
} sdx__unet_run;

static int sdx__unet_act(sdx__unet_run *r, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    return sdx__arena_tensor(r->a, t, dtype, ndim, shape) ? SDX_OK : SDX_ERR_NOMEM;
}
static int sdx__unet_act4(sdx__unet_run *r, sdx_tensor *t, int64_t n, int64_t c, int64_t h, int64_t w) {
    int64_t s[4] = { n, c, h, w };
    return sdx__unet_act(r, t, r->u->act_type, 4, s);
}
static int sdx__unet_act3(sdx__unet_run *r, sdx_tensor *t, int64_t n, int64_t l, int64_t c) {
    int64_t s[3] = { n, l, c };
    return sdx__unet_act(r, t, r->u->act_type, 3, s);
}

static void sdx__unet_trace(sdx__unet_run *r, int m) {
    if (r->block_index < 0) sdx__trace_at(r->ctx, SDX__PART_UNET, "%s.%d", r->block, m);
    else sdx__trace_at(r->ctx, SDX__PART_UNET, "%s.%d.%d", r->block, r->block_index, m);
}

static int sdx__unet_res_forward(sdx__unet_run *r, const sdx__unet_res *p, sdx_tensor *y, const sdx_tensor *x) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    int64_t B = x->shape[0], H = x->shape[2], W = x->shape[3];
    int64_t es[2] = { B, p->cout };
    sdx_tensor h, g, e, s;
    int rc;
    SDX__UNET_DO(sdx__unet_act4(r, &h, B, p->cin, H, W));
    SDX__UNET_DO(sdx__group_norm(ctx, &h, x, SDX__UNET_GROUPS, 1e-5f, p->norm1_w, p->norm1_b, 1));
    SDX__UNET_DO(sdx__unet_act4(r, &g, B, p->cout, H, W));
    SDX__UNET_DO(sdx__conv2d(ctx, &g, &h, p->conv1_w, p->conv1_b, 1, 1));
    SDX__UNET_DO(sdx__unet_act(r, &e, SDX_F32, 2, es));
    SDX__UNET_DO(sdx__linear(ctx, &e, r->emb, p->emb_w, p->emb_b));
    SDX__UNET_DO(sdx__add_channel_bias(ctx, &g, &g, &e));
    SDX__UNET_DO(sdx__group_norm(ctx, &g, &g, SDX__UNET_GROUPS, 1e-5f, p->norm2_w, p->norm2_b, 1));
    SDX__UNET_DO(sdx__conv2d(ctx, y, &g, p->conv2_w, p->conv2_b, 1, 1));
    if (p->skip_w) {
        SDX__UNET_DO(sdx__unet_act4(r, &s, B, p->cout, H, W));
        SDX__UNET_DO(sdx__conv2d(ctx, &s, x, p->skip_w, p->skip_b, 1, 0));
        SDX__UNET_DO(sdx__add(ctx, y, y, &s));
    } else {
        SDX__UNET_DO(sdx__add(ctx, y, y, x));
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

static int sdx__unet_heads(sdx__unet_run *r, int inner, int *heads) {
    const sdx__unet *u = r->u;
    int h = u->num_heads > 0 ? u->num_heads : (u->head_dim > 0 ? inner / u->head_dim : 0);
    if (h <= 0 || inner % h != 0)
        return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG,
                         "unet: %d attention channels cannot be split into heads (num_heads %d, head_dim %d)",
                         inner, u->num_heads, u->head_dim);
    *heads = h;
    return SDX_OK;
}

/* tok += to_out(attention(to_q(norm(tok)), to_k(src), to_v(src))), where
 * src is norm(tok) itself (self-attention) or the context. */
static int sdx__unet_attention(sdx__unet_run *r, sdx_tensor *tok, const sdx_tensor *lnw, const sdx_tensor *lnb,
                               const sdx_tensor *wq, const sdx_tensor *wk, const sdx_tensor *wv,
                               const sdx_tensor *wo, const sdx_tensor *bo, const sdx_tensor *context, int heads) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    int64_t B = tok->shape[0], L = tok->shape[1], C = tok->shape[2], inner = wq->shape[0];
    const sdx_tensor *src;
    sdx_tensor n, q, k, v, o;
    int rc;
    SDX__UNET_DO(sdx__unet_act3(r, &n, B, L, C));
    SDX__UNET_DO(sdx__layer_norm(ctx, &n, tok, 1e-5f, lnw, lnb));
    src = context ? context : &n;
    SDX__UNET_DO(sdx__unet_act3(r, &q, B, L, inner));
    SDX__UNET_DO(sdx__unet_act3(r, &k, B, src->shape[1], inner));
    SDX__UNET_DO(sdx__unet_act3(r, &v, B, src->shape[1], inner));
    SDX__UNET_DO(sdx__linear(ctx, &q, &n, wq, NULL));
    SDX__UNET_DO(sdx__linear(ctx, &k, src, wk, NULL));
    SDX__UNET_DO(sdx__linear(ctx, &v, src, wv, NULL));
    SDX__UNET_DO(sdx__unet_act3(r, &o, B, L, inner));
    SDX__UNET_DO(sdx__attention(ctx, &o, &q, &k, &v, heads, 0));
    /* n is dead: it takes the projected output */
    SDX__UNET_DO(sdx__linear(ctx, &n, &o, wo, bo));
    SDX__UNET_DO(sdx__add(ctx, tok, tok, &n));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

static int sdx__unet_ff(sdx__unet_run *r, sdx_tensor *tok, const sdx__unet_xblock *b) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    int64_t B = tok->shape[0], L = tok->shape[1], C = tok->shape[2];
    sdx_tensor n, f, g;
    int rc;
    SDX__UNET_DO(sdx__unet_act3(r, &n, B, L, C));
    SDX__UNET_DO(sdx__layer_norm(ctx, &n, tok, 1e-5f, b->ln3_w, b->ln3_b));
    SDX__UNET_DO(sdx__unet_act3(r, &f, B, L, 2 * (int64_t)b->ff_inner));
    SDX__UNET_DO(sdx__linear(ctx, &f, &n, b->ff1_w, b->ff1_b));
    SDX__UNET_DO(sdx__unet_act3(r, &g, B, L, b->ff_inner));
    SDX__UNET_DO(sdx__geglu(ctx, &g, &f));
    SDX__UNET_DO(sdx__linear(ctx, &n, &g, b->ff2_w, b->ff2_b));
    SDX__UNET_DO(sdx__add(ctx, tok, tok, &n));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* SpatialTransformer: y = x + proj_out(blocks(proj_in(norm(x)))). */
static int sdx__unet_attn_forward(sdx__unet_run *r, const sdx__unet_attn *p, sdx_tensor *y, const sdx_tensor *x) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a), m2;
    int64_t B = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], L = H * W;
    sdx_tensor tok, n, t;
    int rc, heads = 1;
    SDX__UNET_DO(sdx__unet_heads(r, p->inner, &heads));
    SDX__UNET_DO(sdx__unet_act3(r, &tok, B, L, p->inner));
    m2 = sdx__arena_mark(r->a);
    SDX__UNET_DO(sdx__unet_act4(r, &n, B, C, H, W));
    SDX__UNET_DO(sdx__group_norm(ctx, &n, x, SDX__UNET_GROUPS, 1e-6f, p->norm_w, p->norm_b, 0));
    if (p->linear) {   /* norm on NCHW, flatten, then the Linear */
        SDX__UNET_DO(sdx__unet_act3(r, &t, B, L, C));
        SDX__UNET_DO(sdx__nchw_to_nlc(ctx, &t, &n));
        SDX__UNET_DO(sdx__linear(ctx, &tok, &t, p->proj_in_w, p->proj_in_b));
    } else {
        SDX__UNET_DO(sdx__unet_act4(r, &t, B, p->inner, H, W));
        SDX__UNET_DO(sdx__conv2d(ctx, &t, &n, p->proj_in_w, p->proj_in_b, 1, 0));
        SDX__UNET_DO(sdx__nchw_to_nlc(ctx, &tok, &t));
    }
    sdx__arena_release(r->a, m2);
    for (int d = 0; d < p->depth; d++) {
        const sdx__unet_xblock *b = &p->blocks[d];
        SDX__UNET_DO(sdx__unet_attention(r, &tok, b->ln1_w, b->ln1_b, b->q1, b->k1, b->v1, b->o1_w, b->o1_b, NULL, heads));
        SDX__UNET_DO(sdx__unet_attention(r, &tok, b->ln2_w, b->ln2_b, b->q2, b->k2, b->v2, b->o2_w, b->o2_b, r->context, heads));
        SDX__UNET_DO(sdx__unet_ff(r, &tok, b));
    }
    if (p->linear) {
        SDX__UNET_DO(sdx__unet_act3(r, &t, B, L, C));
        SDX__UNET_DO(sdx__linear(ctx, &t, &tok, p->proj_out_w, p->proj_out_b));
        SDX__UNET_DO(sdx__nlc_to_nchw(ctx, y, &t));
    } else {
        SDX__UNET_DO(sdx__unet_act4(r, &t, B, p->inner, H, W));
        SDX__UNET_DO(sdx__nlc_to_nchw(ctx, &t, &tok));
        SDX__UNET_DO(sdx__conv2d(ctx, y, &t, p->proj_out_w, p->proj_out_b, 1, 0));
    }
    SDX__UNET_DO(sdx__add(ctx, y, y, x));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

static int sdx__unet_up_forward(sdx__unet_run *r, const sdx__unet_layer *p, sdx_tensor *y, const sdx_tensor *x) {
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor t;
    int rc;
    SDX__UNET_DO(sdx__unet_act4(r, &t, x->shape[0], x->shape[1], y->shape[2], y->shape[3]));
    if (y->shape[2] == 2 * x->shape[2] && y->shape[3] == 2 * x->shape[3])
        SDX__UNET_DO(sdx__upsample2x(r->ctx, &t, x));
    else
        SDX__UNET_DO(sdx__resize_nearest(r->ctx, &t, x));
    SDX__UNET_DO(sdx__conv2d(r->ctx, y, &t, p->conv_w, p->conv_b, 1, 1));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* Spatial size after a stride-2, pad-1, 3x3 convolution. */
static int64_t sdx__unet_down_size(int64_t n) { return (n - 1) / 2 + 1; }

/* Runs one block into y (allocated by the caller with the block's output
 * shape; its H, W also give an upsampler's target size). */
static int sdx__unet_block_forward(sdx__unet_run *r, const sdx__unet_block *b, sdx_tensor *y, const sdx_tensor *x) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor cur = *x, next;
    int rc = SDX_OK;
    for (int i = 0; i < b->n_layers; i++) {
        const sdx__unet_layer *L = &b->layer[i];
        int64_t H = cur.shape[2], W = cur.shape[3];
        if (L->kind == SDX__UL_DOWN) H = sdx__unet_down_size(H), W = sdx__unet_down_size(W);
        if (L->kind == SDX__UL_UP) H = y->shape[2], W = y->shape[3];
        if (i == b->n_layers - 1) next = *y;
        else SDX__UNET_DO(sdx__unet_act4(r, &next, cur.shape[0], L->cout, H, W));
        sdx__unet_trace(r, i);
        switch (L->kind) {
        case SDX__UL_CONV: rc = sdx__conv2d(ctx, &next, &cur, L->conv_w, L->conv_b, 1, 1); break;
        case SDX__UL_DOWN: rc = sdx__conv2d(ctx, &next, &cur, L->conv_w, L->conv_b, 2, 1); break;
        case SDX__UL_UP:   rc = sdx__unet_up_forward(r, L, &next, &cur); break;
        case SDX__UL_RES:  rc = sdx__unet_res_forward(r, &L->res, &next, &cur); break;
        default:           rc = sdx__unet_attn_forward(r, &L->attn, &next, &cur); break;
        }
        if (rc != SDX_OK) goto done;
        cur = next;
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* emb = silu(time_embed(sinusoid(t)) [+ label_emb(y)]): every ResBlock
 * starts its emb_layers with a SiLU, so it is applied once here. Kept in
 * f32: it is [B, 4 * model_channels]. */
static int sdx__unet_embed(sdx__unet_run *r, sdx_tensor *emb, const float *timesteps, const sdx_tensor *y) {
    sdx__unet *u = r->u;
    sdx_ctx *ctx = r->ctx;
    int64_t B = emb->shape[0];
    int64_t ts[2] = { B, u->model_channels }, hs[2] = { B, u->embed_dim };
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor t, h;
    int rc;
    sdx__trace_at(ctx, SDX__PART_UNET, "time_embed");
    SDX__UNET_DO(sdx__unet_act(r, &t, SDX_F32, 2, ts));
    {
        float *tf = (float *)sdx__arena_host_alloc(r->a, (size_t)sdx_tensor_nbytes(&t));
        if (!tf) { rc = SDX_ERR_NOMEM; goto done; }
        sdx__timestep_embedding(tf, timesteps, (int)B, u->model_channels, 10000.0f);
        SDX__UNET_DO(sdx__upload(ctx, &t, tf));
    }
    SDX__UNET_DO(sdx__unet_act(r, &h, SDX_F32, 2, hs));
    SDX__UNET_DO(sdx__linear(ctx, &h, &t, u->te0_w, u->te0_b));
    SDX__UNET_DO(sdx__silu(ctx, &h, &h));
    SDX__UNET_DO(sdx__linear(ctx, emb, &h, u->te2_w, u->te2_b));
    if (u->adm_channels > 0) {
        sdx_tensor l;
        sdx__trace_at(ctx, SDX__PART_UNET, "label_emb");
        SDX__UNET_DO(sdx__linear(ctx, &h, y, u->le0_w, u->le0_b));
        SDX__UNET_DO(sdx__silu(ctx, &h, &h));
        SDX__UNET_DO(sdx__unet_act(r, &l, SDX_F32, 2, hs));
        SDX__UNET_DO(sdx__linear(ctx, &l, &h, u->le2_w, u->le2_b));
        SDX__UNET_DO(sdx__add(ctx, emb, emb, &l));
    }
    SDX__UNET_DO(sdx__silu(ctx, emb, emb));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

static int sdx__unet_check_inputs(sdx__unet *u, const sdx_tensor *x, const float *timesteps, const sdx_tensor *context,
                                  const sdx_tensor *y, const sdx_tensor *out) {
    char s1[64], s2[64];
    int64_t B = x && x->ndim == 4 ? x->shape[0] : 0;
    if (!x || x->ndim != 4 || x->shape[1] != u->in_channels || B < 1 || x->shape[2] < 1 || x->shape[3] < 1)
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: x must be [B, %d, h, w], got %s", u->in_channels,
                         x ? sdx_shape_str(x, s1, sizeof s1) : "NULL");
    if (!timesteps) return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: timesteps is NULL");
    if (u->context_dim > 0 &&
        (!context || context->ndim != 3 || context->shape[0] != B || context->shape[2] != u->context_dim || context->shape[1] < 1))
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: context must be [%lld, T, %d], got %s", (long long)B,
                         u->context_dim, context ? sdx_shape_str(context, s1, sizeof s1) : "NULL");
    if (u->adm_channels > 0 && (!y || y->ndim != 2 || y->shape[0] != B || y->shape[1] != u->adm_channels))
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: this UNet needs the vector y [%lld, %d], got %s",
                         (long long)B, u->adm_channels, y ? sdx_shape_str(y, s1, sizeof s1) : "NULL");
    if (!out || out->ndim != 4 || out->shape[0] != B || out->shape[1] != u->out_channels ||
        out->shape[2] != x->shape[2] || out->shape[3] != x->shape[3])
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: out must be [%lld, %d, %lld, %lld], got %s", (long long)B,
                         u->out_channels, (long long)x->shape[2], (long long)x->shape[3],
                         out ? sdx_shape_str(out, s2, sizeof s2) : "NULL");
    return SDX_OK;
}

/* Spatial sizes of the skip connections (input block outputs). */
static void sdx__unet_plan(const sdx__unet *u, int64_t H, int64_t W, int64_t *sh, int64_t *sw) {
    for (int n = 0; n < u->n_in; n++) {
        if (sdx__unet_block_has(&u->in[n], SDX__UL_DOWN)) H = sdx__unet_down_size(H), W = sdx__unet_down_size(W);
        sh[n] = H;
        sw[n] = W;
    }
}

/* Output block n works at the size of skip k = n_in-1-n; an upsampler
 * takes it to the next skip's size (ComfyUI's output_shape), or 2x after
 * the last one. */
static void sdx__unet_out_size(const sdx__unet *u, int n, const int64_t *sh, const int64_t *sw, int64_t *H, int64_t *W) {
    int k = u->n_in - 1 - n;
    *H = sh[k];
    *W = sw[k];
    if (sdx__unet_block_has(&u->out[n], SDX__UL_UP)) {
        if (k > 0) *H = sh[k - 1], *W = sw[k - 1];
        else *H *= 2, *W *= 2;
    }
}

/* Memory: the skip connections stay on the arena stack while the decoder
 * consumes them newest first; the running activation h alternates
 * between two buffers at the bottom sized for the largest decoder output,
 * so a consumed skip and a block's temporaries are released as soon as
 * the block is done. Peak = live skips + 2 h buffers + one block's
 * temporaries. */
static int sdx__unet_forward(sdx_ctx *ctx, sdx__unet *u, sdx__arena *a, const sdx_tensor *x, const float *timesteps,
                             const sdx_tensor *context, const sdx_tensor *y, sdx_tensor *out) {
    int64_t sh[SDX__UNET_MAX_BLOCKS], sw[SDX__UNET_MAX_BLOCKS], B, hmax, H, W;
    int64_t es[2];
    sdx__mark m0 = sdx__arena_mark(a), mk[SDX__UNET_MAX_BLOCKS];
    sdx_tensor skip[SDX__UNET_MAX_BLOCKS], emb, cat, buf[2], h, tmp;
    sdx__unet_run r;
    int rc, cur = 0;
    u->ctx = ctx;
    if ((rc = sdx__unet_check_inputs(u, x, timesteps, context, y, out)) != SDX_OK) return rc;
    B = x->shape[0];
    memset(&r, 0, sizeof r);
    r.u = u; r.ctx = ctx; r.a = a; r.context = context;
    sdx__unet_plan(u, x->shape[2], x->shape[3], sh, sw);
    hmax = (int64_t)u->mid.cout * sh[u->n_in - 1] * sw[u->n_in - 1];
    for (int n = 0; n < u->n_out; n++) {
        sdx__unet_out_size(u, n, sh, sw, &H, &W);
        hmax = SDX__MAX(hmax, (int64_t)u->out[n].cout * H * W);
    }
    es[0] = B; es[1] = u->embed_dim;
    SDX__UNET_DO(sdx__unet_act(&r, &emb, SDX_F32, 2, es));
    SDX__UNET_DO(sdx__unet_act4(&r, &buf[0], B, hmax, 1, 1));
    SDX__UNET_DO(sdx__unet_act4(&r, &buf[1], B, hmax, 1, 1));
    SDX__UNET_DO(sdx__unet_embed(&r, &emb, timesteps, y));
    r.emb = &emb;

    r.block = "input_blocks";
    for (int n = 0; n < u->n_in; n++) {
        mk[n] = sdx__arena_mark(a);
        SDX__UNET_DO(sdx__unet_act4(&r, &skip[n], B, u->in[n].cout, sh[n], sw[n]));
        r.block_index = n;
        SDX__UNET_DO(sdx__unet_block_forward(&r, &u->in[n], &skip[n], n ? &skip[n - 1] : x));
    }

    h = sdx__view4(u->act_type, buf[cur].data, B, u->mid.cout, sh[u->n_in - 1], sw[u->n_in - 1]);
    h.device = buf[cur].device;
    r.block = "middle_block";
    r.block_index = -1;
    if (u->mid.n_layers) SDX__UNET_DO(sdx__unet_block_forward(&r, &u->mid, &h, &skip[u->n_in - 1]));
    else SDX__UNET_DO(sdx__copy(ctx, &h, &skip[u->n_in - 1]));   /* BK-SDM: no middle block */

    r.block = "output_blocks";
    for (int n = 0; n < u->n_out; n++) {
        int k = u->n_in - 1 - n;
        sdx_tensor next;
        sdx__unet_out_size(u, n, sh, sw, &H, &W);
        next = sdx__view4(u->act_type, buf[cur ^ 1].data, B, u->out[n].cout, H, W);
        next.device = buf[cur ^ 1].device;
        SDX__UNET_DO(sdx__unet_act4(&r, &cat, B, h.shape[1] + skip[k].shape[1], sh[k], sw[k]));
        sdx__trace_at(ctx, SDX__PART_UNET, "output_blocks.%d (skip concat)", n);
        SDX__UNET_DO(sdx__concat_channels(ctx, &cat, &h, &skip[k]));
        r.block_index = n;
        SDX__UNET_DO(sdx__unet_block_forward(&r, &u->out[n], &next, &cat));
        sdx__arena_release(a, mk[k]);   /* the skip, the concat, the temporaries */
        h = next;
        cur ^= 1;
    }

    sdx__trace_at(ctx, SDX__PART_UNET, "out");
    SDX__UNET_DO(sdx__unet_act4(&r, &tmp, B, h.shape[1], h.shape[2], h.shape[3]));
    SDX__UNET_DO(sdx__group_norm(ctx, &tmp, &h, SDX__UNET_GROUPS, 1e-5f, u->out_norm_w, u->out_norm_b, 1));
    SDX__UNET_DO(sdx__conv2d(ctx, out, &tmp, u->out_conv_w, u->out_conv_b, 1, 1));
done:
    sdx__arena_release(a, m0);
    return rc;
}

/* ---- src/models/vae.c ---- */

/* ===================================================================== */
/*  VAE: the LDM AutoencoderKL (SD 1.x / 2.x / SDXL) encoder and decoder, */
/*  tiled encode/decode for images whose activations exceed a budget      */
/* ===================================================================== */

/* Latent scale factors. The pipeline divides a diffusion-space latent by
 * the factor before decoding (sdx__vae_decode takes the divided latent)
 * and multiplies an encoded mean by it. The factor is a property of the
 * model family, not of the VAE file: SD 1.x and 2.x use 0.18215, SDXL
 * 0.13025 (a standalone SDXL VAE such as the fp16-fix one keeps 0.13025). */
#define SDX__VAE_SCALE_SD   0.18215f
#define SDX__VAE_SCALE_SDXL 0.13025f

static float sdx__vae_scale_factor(int is_sdxl) { return is_sdxl ? SDX__VAE_SCALE_SDXL : SDX__VAE_SCALE_SD; }

/* Auto tiling kicks in when a full-size pass is estimated to need more
 * activation memory than this (bytes); sdx__vae_tiling.budget_bytes
 * overrides it per call. A 1024x1024 SD/SDXL decode needs ~2.6 GB with
 * f32 activations, so the default leaves such a decode untiled. */
#ifndef SDX_VAE_TILE_BUDGET
#define SDX_VAE_TILE_BUDGET ((size_t)4 << 30)
#endif

#define SDX__VAE_MAX_LEVELS 6
#define SDX__VAE_MAX_BLOCKS 6
#define SDX__VAE_GROUPS     32
#define SDX__VAE_EPS        1e-6f
/* SD 1.x/2.x/SDXL UNets all take 4-channel latents; a 16-channel VAE
 * (SD3, Flux) cannot pair with them. */
#define SDX__VAE_LATENT_CHANNELS 4

typedef enum sdx__vae_layout { SDX__VAE_LDM = 0, SDX__VAE_DIFFUSERS = 1 } sdx__vae_layout;

typedef struct sdx__vae_res {
    const sdx_tensor *norm1_w, *norm1_b, *conv1_w, *conv1_b;
    const sdx_tensor *norm2_w, *norm2_b, *conv2_w, *conv2_b;
    const sdx_tensor *skip_w, *skip_b;      /* 1x1 conv when channels change, else NULL */
    int cin, cout;
} sdx__vae_res;

/* Single-head self-attention over H*W with 1x1-conv (or linear) q/k/v/proj. */
typedef struct sdx__vae_attn {
    const sdx_tensor *norm_w, *norm_b;
    const sdx_tensor *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *proj_w, *proj_b;
    int c;
} sdx__vae_attn;

typedef struct sdx__vae_level {
    int ch;                                  /* channels of the level's ResBlocks */
    int n_blocks;
    int has_attn;                            /* attention after each ResBlock */
    sdx__vae_res  res[SDX__VAE_MAX_BLOCKS];
    sdx__vae_attn attn[SDX__VAE_MAX_BLOCKS];
    const sdx_tensor *resample_w, *resample_b;  /* Up/Downsample conv; NULL where none */
} sdx__vae_level;

/* Encoder or decoder. Levels use the LDM index: level 0 runs at full
 * image resolution (the decoder visits them from n_levels-1 down to 0). */
typedef struct sdx__vae_coder {
    const sdx_tensor *conv_in_w, *conv_in_b, *norm_out_w, *norm_out_b, *conv_out_w, *conv_out_b;
    int n_levels;
    sdx__vae_level level[SDX__VAE_MAX_LEVELS];
    sdx__vae_res mid1, mid2;
    sdx__vae_attn mid_attn;
    int has_mid_attn;
} sdx__vae_coder;

typedef struct sdx__vae {
    sdx__wset w;
    sdx__vae_layout layout;
    int act_type;            /* activation storage; SDX_VAE_ACT_TYPE unless overridden */
    /* hyperparameters read from the file (decoder side) */
    int ch, n_levels, ch_mult[SDX__VAE_MAX_LEVELS], num_res_blocks;
    int z_channels;          /* decoder conv_in input */
    int latent_channels;     /* what the UNet sees: post_quant_conv input */
    int has_mid_attn;
    int factor;              /* image pixels per latent pixel, 2^(n_levels-1) */
    int has_encoder;
    const sdx_tensor *quant_w, *quant_b;            /* NULL when the file has none */
    const sdx_tensor *post_quant_w, *post_quant_b;
    sdx__vae_coder enc, dec;
} sdx__vae;

typedef struct sdx__vae_tiling {
    int mode;              /* 0 auto, 1 force on, -1 off */
    int tile_latent;       /* tile side in latent pixels; 0 = choose from the budget */
    int overlap_latent;    /* least overlap of neighbouring tiles, latent pixels; 0 = tile/8, at most tile/4 */
    size_t budget_bytes;   /* auto: tile when a full pass needs more; 0 = SDX_VAE_TILE_BUDGET */
} sdx__vae_tiling;

/* ---- key names ------------------------------------------------------ */
/* Names are built in the LDM scheme and translated for diffusers files,
 * whose up_blocks are numbered from the lowest resolution. */

static void sdx__vae_res_base(const sdx__vae *v, char *buf, size_t size, int dec, int level, int block) {
    if (v->layout == SDX__VAE_LDM)
        snprintf(buf, size, dec ? "decoder.up.%d.block.%d" : "encoder.down.%d.block.%d", level, block);
    else if (dec)
        snprintf(buf, size, "decoder.up_blocks.%d.resnets.%d", v->dec.n_levels - 1 - level, block);
    else
        snprintf(buf, size, "encoder.down_blocks.%d.resnets.%d", level, block);
}

static void sdx__vae_mid_base(const sdx__vae *v, char *buf, size_t size, int dec, int which /* 1, 2 */) {
    const char *coder = dec ? "decoder" : "encoder";
    if (v->layout == SDX__VAE_LDM) snprintf(buf, size, "%s.mid.block_%d", coder, which);
    else snprintf(buf, size, "%s.mid_block.resnets.%d", coder, which - 1);
}

static void sdx__vae_resample_name(const sdx__vae *v, char *buf, size_t size, int dec, int level) {
    if (v->layout == SDX__VAE_LDM)
        snprintf(buf, size, dec ? "decoder.up.%d.upsample.conv" : "encoder.down.%d.downsample.conv", level);
    else if (dec)
        snprintf(buf, size, "decoder.up_blocks.%d.upsamplers.0.conv", v->dec.n_levels - 1 - level);
    else
        snprintf(buf, size, "encoder.down_blocks.%d.downsamplers.0.conv", level);
}

/* ---- loading -------------------------------------------------------- */

static int sdx__vae_fail_groups(sdx__vae *v, const char *name, int c) {
    return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: tensor '%s%s' has %d channels; VAE GroupNorm(%d) needs a multiple of %d",
                     sdx_st_path(v->w.st), v->w.prefix, name, c, SDX__VAE_GROUPS, SDX__VAE_GROUPS);
}

static int sdx__vae_load_res(sdx__vae *v, sdx__vae_res *r, const char *base, int cin, int cout) {
    sdx__wset *w = &v->w;
    const char *skip = v->layout == SDX__VAE_LDM ? "nin_shortcut" : "conv_shortcut";
    r->cin = cin;
    r->cout = cout;
    if (cin % SDX__VAE_GROUPS) return sdx__vae_fail_groups(v, base, cin);
    if (cout % SDX__VAE_GROUPS) return sdx__vae_fail_groups(v, base, cout);
    if (!(r->norm1_w = sdx__wget(w, 1, SDX__S(cin), "%s.norm1.weight", base)) ||
        !(r->norm1_b = sdx__wget(w, 1, SDX__S(cin), "%s.norm1.bias", base)) ||
        !(r->conv1_w = sdx__wget(w, 4, SDX__S(cout, cin, 3, 3), "%s.conv1.weight", base)) ||
        !(r->conv1_b = sdx__wget(w, 1, SDX__S(cout), "%s.conv1.bias", base)) ||
        !(r->norm2_w = sdx__wget(w, 1, SDX__S(cout), "%s.norm2.weight", base)) ||
        !(r->norm2_b = sdx__wget(w, 1, SDX__S(cout), "%s.norm2.bias", base)) ||
        !(r->conv2_w = sdx__wget(w, 4, SDX__S(cout, cout, 3, 3), "%s.conv2.weight", base)) ||
        !(r->conv2_b = sdx__wget(w, 1, SDX__S(cout), "%s.conv2.bias", base)))
        return sdx__werr(w);
    r->skip_w = r->skip_b = NULL;
    if (cin != cout &&
        (!(r->skip_w = sdx__wget(w, 4, SDX__S(cout, cin, 1, 1), "%s.%s.weight", base, skip)) ||
         !(r->skip_b = sdx__wget(w, 1, SDX__S(cout), "%s.%s.bias", base, skip))))
        return sdx__werr(w);
    return SDX_OK;
}

/* A q/k/v/proj weight: a 1x1 conv [C, C, 1, 1] (LDM) or a linear [C, C]
 * (diffusers, and LDM files converted from it). */
static const sdx_tensor *sdx__vae_attn_mat(sdx__vae *v, const char *base, const char *name, int c) {
    sdx__wset *w = &v->w;
    const sdx_tensor *t = sdx__wget_any(w, "%s.%s.weight", base, name);
    if (!t) return NULL;
    if ((t->ndim == 4 && t->shape[0] == c && t->shape[1] == c && t->shape[2] == 1 && t->shape[3] == 1) ||
        (t->ndim == 2 && t->shape[0] == c && t->shape[1] == c))
        return t;
    {
        char found[96];
        sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: tensor '%s%s.%s.weight': expected shape [%d, %d, 1, 1] or [%d, %d], found %s",
                  sdx_st_path(w->st), w->prefix, base, name, c, c, c, c, sdx_shape_str(t, found, sizeof found));
    }
    return NULL;
}

static int sdx__vae_load_attn(sdx__vae *v, sdx__vae_attn *a, const char *base, int c) {
    sdx__wset *w = &v->w;
    /* LDM names, diffusers names, and the older diffusers names */
    static const char *const names[3][5] = {
        { "norm", "q", "k", "v", "proj_out" },
        { "group_norm", "to_q", "to_k", "to_v", "to_out.0" },
        { "group_norm", "query", "key", "value", "proj_attn" },
    };
    int s = 0;
    if (v->layout == SDX__VAE_DIFFUSERS) s = sdx__whas(w, "%s.to_q.weight", base) ? 1 : 2;
    a->c = c;
    if (!(a->norm_w = sdx__wget(w, 1, SDX__S(c), "%s.%s.weight", base, names[s][0])) ||
        !(a->norm_b = sdx__wget(w, 1, SDX__S(c), "%s.%s.bias", base, names[s][0])) ||
        !(a->q_w = sdx__vae_attn_mat(v, base, names[s][1], c)) ||
        !(a->q_b = sdx__wget(w, 1, SDX__S(c), "%s.%s.bias", base, names[s][1])) ||
        !(a->k_w = sdx__vae_attn_mat(v, base, names[s][2], c)) ||
        !(a->k_b = sdx__wget(w, 1, SDX__S(c), "%s.%s.bias", base, names[s][2])) ||
        !(a->v_w = sdx__vae_attn_mat(v, base, names[s][3], c)) ||
        !(a->v_b = sdx__wget(w, 1, SDX__S(c), "%s.%s.bias", base, names[s][3])) ||
        !(a->proj_w = sdx__vae_attn_mat(v, base, names[s][4], c)) ||
        !(a->proj_b = sdx__wget(w, 1, SDX__S(c), "%s.%s.bias", base, names[s][4])))
        return sdx__werr(w);
    return SDX_OK;
}

static int sdx__vae_load_mid(sdx__vae *v, sdx__vae_coder *cd, int dec, int c) {
    char base[128];
    int rc;
    const char *coder = dec ? "decoder" : "encoder";
    sdx__vae_mid_base(v, base, sizeof base, dec, 1);
    if ((rc = sdx__vae_load_res(v, &cd->mid1, base, c, c)) != SDX_OK) return rc;
    sdx__vae_mid_base(v, base, sizeof base, dec, 2);
    if ((rc = sdx__vae_load_res(v, &cd->mid2, base, c, c)) != SDX_OK) return rc;
    if (v->layout == SDX__VAE_LDM) snprintf(base, sizeof base, "%s.mid.attn_1", coder);
    else snprintf(base, sizeof base, "%s.mid_block.attentions.0", coder);
    cd->has_mid_attn = sdx__whas(&v->w, "%s.%s.weight", base, v->layout == SDX__VAE_LDM ? "norm" : "group_norm");
    return cd->has_mid_attn ? sdx__vae_load_attn(v, &cd->mid_attn, base, c) : SDX_OK;
}

/* Counts levels (or blocks) by probing names until one is missing. */
static int sdx__vae_count_levels(sdx__vae *v, int dec) {
    int n = 0;
    while (n <= SDX__VAE_MAX_LEVELS) {
        int has;
        if (v->layout == SDX__VAE_LDM)
            has = sdx__whas(&v->w, dec ? "decoder.up.%d.block.0.conv1.weight" : "encoder.down.%d.block.0.conv1.weight", n);
        else
            has = sdx__whas(&v->w, dec ? "decoder.up_blocks.%d.resnets.0.conv1.weight"
                                       : "encoder.down_blocks.%d.resnets.0.conv1.weight", n);
        if (!has) break;
        n++;
    }
    return n;
}

static int sdx__vae_count_blocks(sdx__vae *v, int dec, int level) {
    char base[128];
    int n = 0;
    while (n <= SDX__VAE_MAX_BLOCKS) {
        sdx__vae_res_base(v, base, sizeof base, dec, level, n);
        if (!sdx__whas(&v->w, "%s.conv1.weight", base)) break;
        n++;
    }
    return n;
}

/* Reads the channel count of a level from its first ResBlock's conv1
 * (the file tensor: probing must not convert weights). */
static int sdx__vae_level_channels(sdx__vae *v, int dec, int level, int *ch) {
    char base[128], name[288];
    const sdx_tensor *t;
    sdx__vae_res_base(v, base, sizeof base, dec, level, 0);
    snprintf(name, sizeof name, "%s%s.conv1.weight", v->w.prefix, base);
    if (!(t = sdx_st_find(v->w.st, name)))
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: missing tensor '%s' (vae)", sdx_st_path(v->w.st), name);
    if (t->ndim != 4 || t->shape[0] <= 0 || t->shape[0] > (1 << 16))
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: tensor '%s%s.conv1.weight' is not a conv weight", sdx_st_path(v->w.st),
                         v->w.prefix, base);
    *ch = (int)t->shape[0];
    return SDX_OK;
}

/* Loads levels, mid block and the outer convs of the encoder or decoder.
 * `ch_in` is the channel count entering the first level visited. */
static int sdx__vae_load_levels(sdx__vae *v, sdx__vae_coder *cd, int dec, int ch_in) {
    char base[128];
    int rc, prev = ch_in, n = cd->n_levels;
    for (int k = 0; k < n; k++) {
        int i = dec ? n - 1 - k : k;
        sdx__vae_level *lv = &cd->level[i];
        lv->n_blocks = sdx__vae_count_blocks(v, dec, i);
        if (lv->n_blocks < 1 || lv->n_blocks > SDX__VAE_MAX_BLOCKS) {
            sdx__vae_res_base(v, base, sizeof base, dec, i, 0);
            return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE level '%s%s' has %d ResBlocks; 1..%d supported",
                             sdx_st_path(v->w.st), v->w.prefix, base, lv->n_blocks, SDX__VAE_MAX_BLOCKS);
        }
        if ((rc = sdx__vae_level_channels(v, dec, i, &lv->ch)) != SDX_OK) return rc;
        for (int j = 0; j < lv->n_blocks; j++) {
            sdx__vae_res_base(v, base, sizeof base, dec, i, j);
            if ((rc = sdx__vae_load_res(v, &lv->res[j], base, j ? lv->ch : prev, lv->ch)) != SDX_OK) return rc;
        }
        lv->has_attn = v->layout == SDX__VAE_LDM &&
                       sdx__whas(&v->w, dec ? "decoder.up.%d.attn.0.norm.weight" : "encoder.down.%d.attn.0.norm.weight", i);
        for (int j = 0; lv->has_attn && j < lv->n_blocks; j++) {
            snprintf(base, sizeof base, dec ? "decoder.up.%d.attn.%d" : "encoder.down.%d.attn.%d", i, j);
            if ((rc = sdx__vae_load_attn(v, &lv->attn[j], base, lv->ch)) != SDX_OK) return rc;
        }
        /* the decoder upsamples after every level but 0; the encoder
         * downsamples after every level but the last */
        if (dec ? i > 0 : i < n - 1) {
            sdx__vae_resample_name(v, base, sizeof base, dec, i);
            if (!(lv->resample_w = sdx__wget(&v->w, 4, SDX__S(lv->ch, lv->ch, 3, 3), "%s.weight", base)) ||
                !(lv->resample_b = sdx__wget(&v->w, 1, SDX__S(lv->ch), "%s.bias", base)))
                return sdx__werr(&v->w);
        }
        prev = lv->ch;
    }
    return SDX_OK;
}

static int sdx__vae_load_outer(sdx__vae *v, sdx__vae_coder *cd, int dec, int out_channels) {
    const char *coder = dec ? "decoder" : "encoder";
    const char *norm = v->layout == SDX__VAE_LDM ? "norm_out" : "conv_norm_out";
    int c = cd->level[dec ? 0 : cd->n_levels - 1].ch;
    if (!(cd->norm_out_w = sdx__wget(&v->w, 1, SDX__S(c), "%s.%s.weight", coder, norm)) ||
        !(cd->norm_out_b = sdx__wget(&v->w, 1, SDX__S(c), "%s.%s.bias", coder, norm)) ||
        !(cd->conv_out_w = sdx__wget(&v->w, 4, SDX__S(out_channels, c, 3, 3), "%s.conv_out.weight", coder)) ||
        !(cd->conv_out_b = sdx__wget(&v->w, 1, SDX__S(out_channels), "%s.conv_out.bias", coder)))
        return sdx__werr(&v->w);
    return SDX_OK;
}

static int sdx__vae_load_decoder(sdx__vae *v) {
    sdx__vae_coder *d = &v->dec;
    const sdx_tensor *t;
    int rc, top;
    d->n_levels = sdx__vae_count_levels(v, 1);
    if (d->n_levels < 1 || d->n_levels > SDX__VAE_MAX_LEVELS)
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE decoder has %d up levels under '%sdecoder.'; 1..%d supported",
                         sdx_st_path(v->w.st), d->n_levels, v->w.prefix, SDX__VAE_MAX_LEVELS);
    if ((rc = sdx__vae_level_channels(v, 1, d->n_levels - 1, &top)) != SDX_OK) return rc;
    if (!(t = sdx__wget(&v->w, 4, SDX__S(top, -1, 3, 3), "decoder.conv_in.weight"))) return sdx__werr(&v->w);
    d->conv_in_w = t;
    v->z_channels = (int)t->shape[1];
    if (!(d->conv_in_b = sdx__wget(&v->w, 1, SDX__S(top), "decoder.conv_in.bias"))) return sdx__werr(&v->w);
    if ((rc = sdx__vae_load_mid(v, d, 1, top)) != SDX_OK) return rc;
    if ((rc = sdx__vae_load_levels(v, d, 1, top)) != SDX_OK) return rc;
    return sdx__vae_load_outer(v, d, 1, 3);
}

static int sdx__vae_load_encoder(sdx__vae *v) {
    sdx__vae_coder *e = &v->enc;
    const sdx_tensor *t;
    int rc, c0, zc2 = 2 * v->z_channels;
    e->n_levels = sdx__vae_count_levels(v, 0);
    if (e->n_levels < 1 || e->n_levels > SDX__VAE_MAX_LEVELS)
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE encoder has %d down levels under '%sencoder.'; 1..%d supported",
                         sdx_st_path(v->w.st), e->n_levels, v->w.prefix, SDX__VAE_MAX_LEVELS);
    if (e->n_levels != v->dec.n_levels)
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE encoder has %d levels but the decoder %d (prefix '%s')",
                         sdx_st_path(v->w.st), e->n_levels, v->dec.n_levels, v->w.prefix);
    if (!(t = sdx__wget(&v->w, 4, SDX__S(-1, 3, 3, 3), "encoder.conv_in.weight"))) return sdx__werr(&v->w);
    e->conv_in_w = t;
    c0 = (int)t->shape[0];
    if (!(e->conv_in_b = sdx__wget(&v->w, 1, SDX__S(c0), "encoder.conv_in.bias"))) return sdx__werr(&v->w);
    if ((rc = sdx__vae_load_levels(v, e, 0, c0)) != SDX_OK) return rc;
    if ((rc = sdx__vae_load_mid(v, e, 0, e->level[e->n_levels - 1].ch)) != SDX_OK) return rc;
    /* double_z: conv_out produces mean and logvar */
    if ((rc = sdx__vae_load_outer(v, e, 0, zc2)) != SDX_OK) return rc;
    if (v->post_quant_w) {
        if (!(v->quant_w = sdx__wget(&v->w, 4, SDX__S(2 * v->latent_channels, zc2, 1, 1), "quant_conv.weight")) ||
            !(v->quant_b = sdx__wget(&v->w, 1, SDX__S(2 * v->latent_channels), "quant_conv.bias")))
            return sdx__werr(&v->w);
    }
    return SDX_OK;
}

/* Finds the VAE inside `file`: tries `prefix` (when given), then
 * "first_stage_model." (a checkpoint) and "" (a standalone VAE file), in
 * the LDM layout and the diffusers layout. Returns the prefix or NULL. */
static const char *sdx__vae_detect(const sdx_st *file, const char *prefix, sdx__vae_layout *layout) {
    static const char *const known[2] = { "first_stage_model.", "" };
    static const char *const probe[2] = { "decoder.mid.block_1.conv1.weight", "decoder.mid_block.resnets.0.conv1.weight" };
    char name[256];
    for (int i = -1; i < 2; i++) {
        const char *p = i < 0 ? prefix : known[i];
        if (!p) continue;
        for (int l = 0; l < 2; l++) {
            snprintf(name, sizeof name, "%s%s", p, probe[l]);
            if (sdx_st_find(file, name)) { *layout = (sdx__vae_layout)l; return p; }
        }
    }
    return NULL;
}

static void sdx__vae_free(sdx__vae *v) {
    if (v->w.ctx) sdx__wset_free(&v->w);
    memset(v, 0, sizeof *v);
}

static int sdx__vae_load_parts(sdx__vae *v) {
    sdx__wset *w = &v->w;
    int rc;
    if (sdx__whas(w, "post_quant_conv.weight")) {
        const sdx_tensor *t;
        if (!(t = sdx__wget(w, 4, SDX__S(v->z_channels, -1, 1, 1), "post_quant_conv.weight"))) return sdx__werr(w);
        v->post_quant_w = t;
        v->latent_channels = (int)t->shape[1];
        if (!(v->post_quant_b = sdx__wget(w, 1, SDX__S(v->z_channels), "post_quant_conv.bias"))) return sdx__werr(w);
    } else {
        v->latent_channels = v->z_channels;
    }
    if (v->latent_channels != SDX__VAE_LATENT_CHANNELS)
        return sdx__fail(w->ctx, SDX_ERR_MODEL,
                         "%s: VAE latent has %d channels (tensor '%s%s') but SD 1.x/2.x/SDXL UNets use %d; "
                         "this VAE belongs to another model family",
                         sdx_st_path(w->st), v->latent_channels, w->prefix,
                         v->post_quant_w ? "post_quant_conv.weight" : "decoder.conv_in.weight", SDX__VAE_LATENT_CHANNELS);
    v->has_encoder = sdx__whas(w, "encoder.conv_in.weight");
    if (v->has_encoder && (rc = sdx__vae_load_encoder(v)) != SDX_OK) return rc;
    return SDX_OK;
}

/* Loads the VAE of `file`. prefix: "first_stage_model." inside a
 * checkpoint, "" for a standalone VAE file, or NULL to detect either.
 * Hyperparameters come from tensor shapes; a file without an encoder is
 * accepted (decode only, has_encoder = 0). The file must stay open while
 * the VAE is used; free with sdx__vae_free. */
static int sdx__vae_load(sdx_ctx *ctx, sdx__vae *v, const sdx_st *file, const char *prefix) {
    sdx__vae_layout layout = SDX__VAE_LDM;
    const char *found = sdx__vae_detect(file, prefix, &layout);
    int rc;
    memset(v, 0, sizeof *v);
    if (!found)
        return sdx__fail(ctx, SDX_ERR_MODEL,
                         "%s: no VAE decoder found: no 'decoder.mid.block_1.conv1.weight' (LDM) or "
                         "'decoder.mid_block.resnets.0.conv1.weight' (diffusers) under the prefix%s%s%s "
                         "'first_stage_model.' or ''",
                         sdx_st_path(file), prefix ? " '" : "", prefix ? prefix : "", prefix ? "'," : "es");
    sdx__wset_init(&v->w, ctx, file, found, SDX__PART_VAE, SDX_VAE_WEIGHT_TYPE);
    v->layout = layout;
    v->act_type = SDX_VAE_ACT_TYPE;
    if ((rc = sdx__vae_load_decoder(v)) != SDX_OK || (rc = sdx__vae_load_parts(v)) != SDX_OK) {
        sdx__vae_free(v);
        return rc;
    }
    v->n_levels = v->dec.n_levels;
    v->ch = v->dec.level[0].ch;
    v->num_res_blocks = v->dec.level[0].n_blocks - 1;
    for (int i = 0; i < v->n_levels; i++) v->ch_mult[i] = v->dec.level[i].ch / (v->ch ? v->ch : 1);
    v->has_mid_attn = v->dec.has_mid_attn;
    v->factor = 1 << (v->n_levels - 1);
    sdx__log(ctx, SDX_LOG_INFO, "%s: VAE (%s layout, prefix '%s'): ch %d, %d levels, %d res blocks, z %d, mid attention %s, %s",
             sdx_st_path(file), layout == SDX__VAE_LDM ? "LDM" : "diffusers", found, v->ch, v->n_levels,
             v->num_res_blocks, v->z_channels, v->has_mid_attn ? "yes" : "no",
             v->has_encoder ? "encoder and decoder" : "decoder only");
    return SDX_OK;
}

/* ---- forward pass ----------------------------------------------------- */
/* Activations live in two "slots" sized for the largest activation of the
 * pass; each stage reads one slot and writes the other, so only two full
 * tensors plus one stage's temporaries are alive at any time. The same
 * walk runs first in "dry" mode, which only follows shapes to size the
 * slots: that is also the memory estimate auto tiling uses. */

/* Names the running layer for the tracer (not in dry runs: no context). */
#define SDX__VAE_TRACE(r, ...) do { if (!(r)->dry) sdx__trace_at((r)->ctx, SDX__PART_VAE, __VA_ARGS__); } while (0)

typedef struct sdx__vae_run {
    sdx_ctx *ctx;
    sdx__arena *arena;
    sdx_dtype act;
    int dry;
    int64_t max_act, max_tmp;   /* elements (dry mode) */
    void *slot[2];
    int cur;                    /* slot holding x (x may also be a caller tensor) */
    sdx_tensor x;               /* the current activation */
} sdx__vae_run;

static void sdx__vae_run_init(sdx__vae_run *r, sdx_ctx *ctx, sdx__arena *arena, sdx_dtype act, int dry) {
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->arena = arena;
    r->act = act;
    r->dry = dry;
    r->cur = 1;   /* the first output goes to slot 0 */
}

static sdx_tensor sdx__vae_in_slot(sdx__vae_run *r, int slot, int64_t c, int64_t h, int64_t w) {
    int64_t n = c * h * w;
    if (n > r->max_act) r->max_act = n;
    sdx_tensor t = sdx__view4(r->act, r->slot[slot], 1, c, h, w);
    t.device = r->arena && r->arena->device;
    return t;
}

static int sdx__vae_tmp(sdx__vae_run *r, sdx_tensor *t, int64_t c, int64_t h, int64_t w) {
    return sdx__arena_tensor4(r->arena, t, r->act, 1, c, h, w) ? SDX_OK : SDX_ERR_NOMEM;
}

static int sdx__vae_conv(sdx__vae_run *r, const sdx_tensor *w, const sdx_tensor *b, int pad) {
    int64_t k = w->shape[2];
    int64_t h = r->x.shape[2] + 2 * pad - k + 1, wd = r->x.shape[3] + 2 * pad - k + 1;
    sdx_tensor y = sdx__vae_in_slot(r, 1 - r->cur, w->shape[0], h, wd);
    int rc = r->dry ? SDX_OK : sdx__conv2d(r->ctx, &y, &r->x, w, b, 1, pad);
    r->cur = 1 - r->cur;
    r->x = y;
    return rc;
}

/* ldm Downsample: pad right and bottom by one, 3x3 conv with stride 2. */
static int sdx__vae_downsample(sdx__vae_run *r, const sdx_tensor *w, const sdx_tensor *b) {
    int64_t h = (r->x.shape[2] - 2) / 2 + 1, wd = (r->x.shape[3] - 2) / 2 + 1;
    sdx_tensor y = sdx__vae_in_slot(r, 1 - r->cur, w->shape[0], h, wd);
    int rc = r->dry ? SDX_OK : sdx__conv2d_pad(r->ctx, &y, &r->x, w, b, 2, 0, 0, 1, 1);
    r->cur = 1 - r->cur;
    r->x = y;
    return rc;
}

/* ldm Upsample: nearest 2x into the other slot, conv back into this one. */
static int sdx__vae_upsample(sdx__vae_run *r, const sdx_tensor *w, const sdx_tensor *b) {
    int64_t c = r->x.shape[1], h = 2 * r->x.shape[2], wd = 2 * r->x.shape[3];
    sdx_tensor u = sdx__vae_in_slot(r, 1 - r->cur, c, h, wd);
    sdx_tensor y = sdx__vae_in_slot(r, r->cur, w->shape[0], h, wd);
    int rc = SDX_OK;
    if (!r->dry && (rc = sdx__upsample2x(r->ctx, &u, &r->x)) == SDX_OK) rc = sdx__conv2d(r->ctx, &y, &u, w, b, 1, 1);
    r->x = y;
    return rc;
}

/* y = shortcut(x) + conv2(silu(gn2(conv1(silu(gn1(x)))))). x's slot is
 * reused for the temporaries once the shortcut has been taken, so the
 * block needs one temporary of the output size beyond the two slots. */
static int sdx__vae_res_fwd(sdx__vae_run *r, const sdx__vae_res *b) {
    int64_t h = r->x.shape[2], w = r->x.shape[3];
    sdx_tensor y = sdx__vae_in_slot(r, 1 - r->cur, b->cout, h, w);
    sdx_tensor inner = sdx__vae_in_slot(r, r->cur, b->cout, h, w);
    sdx_tensor t;
    sdx__mark m;
    sdx_ctx *ctx = r->ctx;
    int rc;
    if (r->dry) {
        if ((int64_t)b->cout * h * w > r->max_tmp) r->max_tmp = (int64_t)b->cout * h * w;
        goto done;
    }
    m = sdx__arena_mark(r->arena);
    if (b->skip_w) rc = sdx__conv2d(ctx, &y, &r->x, b->skip_w, b->skip_b, 1, 0);
    else rc = sdx__copy(ctx, &y, &r->x);
    if (rc == SDX_OK) rc = sdx__group_norm(ctx, &r->x, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, b->norm1_w, b->norm1_b, 1);
    if (rc == SDX_OK) rc = sdx__vae_tmp(r, &t, b->cout, h, w);
    if (rc == SDX_OK) rc = sdx__conv2d(ctx, &t, &r->x, b->conv1_w, b->conv1_b, 1, 1);
    if (rc == SDX_OK) rc = sdx__group_norm(ctx, &t, &t, SDX__VAE_GROUPS, SDX__VAE_EPS, b->norm2_w, b->norm2_b, 1);
    if (rc == SDX_OK) rc = sdx__conv2d(ctx, &inner, &t, b->conv2_w, b->conv2_b, 1, 1);
    if (rc == SDX_OK) rc = sdx__add(ctx, &y, &y, &inner);
    sdx__arena_release(r->arena, m);
    if (rc != SDX_OK) return rc;
done:
    r->cur = 1 - r->cur;
    r->x = y;
    return SDX_OK;
}

/* A [C, C, 1, 1] or [C, C] weight as the [C, C] matrix sdx__linear takes. */
static sdx_tensor sdx__vae_mat(const sdx_tensor *w) {
    sdx_tensor m = *w;
    m.ndim = 2;
    m.shape[2] = m.shape[3] = 0;
    return m;
}

/* x += proj(softmax(q k^T / sqrt(C)) v), q/k/v from gn(x); in place. */
static int sdx__vae_attn_fwd(sdx__vae_run *r, const sdx__vae_attn *a) {
    int64_t c = r->x.shape[1], h = r->x.shape[2], w = r->x.shape[3], n = h * w;
    sdx_tensor hn, t, q, k, v, o;
    sdx_tensor wq = sdx__vae_mat(a->q_w), wk = sdx__vae_mat(a->k_w), wv = sdx__vae_mat(a->v_w), wp = sdx__vae_mat(a->proj_w);
    sdx_ctx *ctx = r->ctx;
    sdx__mark m;
    int rc = SDX_OK;
    if (r->dry) {
        if (6 * c * n > r->max_tmp) r->max_tmp = 6 * c * n;
        return SDX_OK;
    }
    m = sdx__arena_mark(r->arena);
    if (sdx__vae_tmp(r, &hn, c, h, w) != SDX_OK || !sdx__arena_tensor3(r->arena, &t, r->act, 1, n, c) ||
        !sdx__arena_tensor3(r->arena, &q, r->act, 1, n, c) || !sdx__arena_tensor3(r->arena, &k, r->act, 1, n, c) ||
        !sdx__arena_tensor3(r->arena, &v, r->act, 1, n, c) || !sdx__arena_tensor3(r->arena, &o, r->act, 1, n, c))
        rc = SDX_ERR_NOMEM;
    if (rc == SDX_OK) rc = sdx__group_norm(ctx, &hn, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, a->norm_w, a->norm_b, 0);
    if (rc == SDX_OK) rc = sdx__nchw_to_nlc(ctx, &t, &hn);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &q, &t, &wq, a->q_b);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &k, &t, &wk, a->k_b);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &v, &t, &wv, a->v_b);
    if (rc == SDX_OK) rc = sdx__attention(ctx, &o, &q, &k, &v, 1, 0);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &q, &o, &wp, a->proj_b);   /* q is free again */
    if (rc == SDX_OK) rc = sdx__nlc_to_nchw(ctx, &hn, &q);
    if (rc == SDX_OK) rc = sdx__add(ctx, &r->x, &r->x, &hn);
    sdx__arena_release(r->arena, m);
    return rc;
}

static int sdx__vae_mid_fwd(sdx__vae_run *r, const sdx__vae_coder *cd, const char *coder) {
    int rc;
    SDX__VAE_TRACE(r, "%s.mid.block_1", coder);
    if ((rc = sdx__vae_res_fwd(r, &cd->mid1)) != SDX_OK) return rc;
    if (cd->has_mid_attn) {
        SDX__VAE_TRACE(r, "%s.mid.attn_1", coder);
        if ((rc = sdx__vae_attn_fwd(r, &cd->mid_attn)) != SDX_OK) return rc;
    }
    SDX__VAE_TRACE(r, "%s.mid.block_2", coder);
    return sdx__vae_res_fwd(r, &cd->mid2);
}

static int sdx__vae_level_fwd(sdx__vae_run *r, const sdx__vae_level *lv, int dec, int i) {
    int rc;
    for (int j = 0; j < lv->n_blocks; j++) {
        SDX__VAE_TRACE(r, dec ? "decoder.up.%d.block.%d" : "encoder.down.%d.block.%d", i, j);
        if ((rc = sdx__vae_res_fwd(r, &lv->res[j])) != SDX_OK) return rc;
        if (lv->has_attn && (rc = sdx__vae_attn_fwd(r, &lv->attn[j])) != SDX_OK) return rc;
    }
    if (!lv->resample_w) return SDX_OK;
    SDX__VAE_TRACE(r, dec ? "decoder.up.%d.upsample" : "encoder.down.%d.downsample", i);
    return dec ? sdx__vae_upsample(r, lv->resample_w, lv->resample_b) : sdx__vae_downsample(r, lv->resample_w, lv->resample_b);
}

/* norm_out + SiLU in place, then conv_out into `out` (a caller tensor). */
static int sdx__vae_out_fwd(sdx__vae_run *r, const sdx__vae_coder *cd, sdx_tensor *out) {
    int rc;
    if (r->dry) return SDX_OK;
    rc = sdx__group_norm(r->ctx, &r->x, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, cd->norm_out_w, cd->norm_out_b, 1);
    return rc == SDX_OK ? sdx__conv2d(r->ctx, out, &r->x, cd->conv_out_w, cd->conv_out_b, 1, 1) : rc;
}

static int sdx__vae_decoder_walk(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *z, sdx_tensor *image) {
    const sdx__vae_coder *d = &v->dec;
    int rc;
    r->x = *z;
    SDX__VAE_TRACE(r, "post_quant_conv");
    if (v->post_quant_w && (rc = sdx__vae_conv(r, v->post_quant_w, v->post_quant_b, 0)) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "decoder.conv_in");
    if ((rc = sdx__vae_conv(r, d->conv_in_w, d->conv_in_b, 1)) != SDX_OK) return rc;
    if ((rc = sdx__vae_mid_fwd(r, d, "decoder")) != SDX_OK) return rc;
    for (int i = d->n_levels - 1; i >= 0; i--)
        if ((rc = sdx__vae_level_fwd(r, &d->level[i], 1, i)) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "decoder.conv_out");
    return sdx__vae_out_fwd(r, d, image);
}

/* image -> moments [1, 2 * latent, h, w] (before the logvar clamp). */
static int sdx__vae_encoder_walk(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *image, sdx_tensor *moments) {
    const sdx__vae_coder *e = &v->enc;
    int rc;
    r->x = *image;
    SDX__VAE_TRACE(r, "encoder.conv_in");
    if ((rc = sdx__vae_conv(r, e->conv_in_w, e->conv_in_b, 1)) != SDX_OK) return rc;
    for (int i = 0; i < e->n_levels; i++)
        if ((rc = sdx__vae_level_fwd(r, &e->level[i], 0, i)) != SDX_OK) return rc;
    if ((rc = sdx__vae_mid_fwd(r, e, "encoder")) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "encoder.conv_out");
    if (!v->quant_w) return sdx__vae_out_fwd(r, e, moments);
    if (!r->dry) {
        rc = sdx__group_norm(r->ctx, &r->x, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, e->norm_out_w, e->norm_out_b, 1);
        if (rc != SDX_OK) return rc;
    }
    if ((rc = sdx__vae_conv(r, e->conv_out_w, e->conv_out_b, 1)) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "quant_conv");
    return r->dry ? SDX_OK : sdx__conv2d(r->ctx, moments, &r->x, v->quant_w, v->quant_b, 1, 0);
}

/* Arena bytes of a pass whose dry walk found these maxima. */
static size_t sdx__vae_run_bytes(const sdx__vae_run *r) {
    size_t es = sdx_dtype_size(r->act);
    /* slots + the largest stage's temporaries, each rounded to the arena
     * alignment (at most 6 temporaries live at once) */
    return ((size_t)(2 * r->max_act) + (size_t)r->max_tmp) * es + 8 * SDX__ARENA_ALIGN;
}

/* Runs a walk: dry to size the slots, then for real. */
typedef int (*sdx__vae_walk_fn)(sdx__vae_run *, const sdx__vae *, const sdx_tensor *, sdx_tensor *);

static int sdx__vae_run_walk(sdx_ctx *ctx, const sdx__vae *v, sdx__arena *arena, sdx__vae_walk_fn walk,
                             const sdx_tensor *in, sdx_tensor *out) {
    sdx__vae_run r;
    sdx__mark m;
    size_t bytes;
    int rc;
    sdx__vae_run_init(&r, ctx, arena, (sdx_dtype)v->act_type, 1);
    walk(&r, v, in, out);
    r.dry = 0;
    r.cur = 1;
    if (!sdx__mul_size((size_t)r.max_act, sdx_dtype_size(r.act), &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "VAE activation size overflows");
    m = sdx__arena_mark(arena);
    if (!(r.slot[0] = sdx__arena_alloc(arena, bytes)) || !(r.slot[1] = sdx__arena_alloc(arena, bytes))) {
        sdx__arena_release(arena, m);
        return SDX_ERR_NOMEM;
    }
    rc = walk(&r, v, in, out);
    sdx__arena_release(arena, m);
    return rc;
}

/* A walk from host tensors: `in` (any float dtype) to `out` (F32). On a
 * device backend through device copies, so only they cross the bus. */
static int sdx__vae_run_host(sdx_ctx *ctx, const sdx__vae *v, sdx__arena *arena, sdx__vae_walk_fn walk,
                             const sdx_tensor *in, sdx_tensor *out) {
    sdx__mark m;
    sdx_tensor din, dout;
    const float *values = (const float *)in->data;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__on_device(ctx)) return sdx__vae_run_walk(ctx, v, arena, walk, in, out);
    m = sdx__arena_mark(arena);
    if (!sdx__arena_tensor(arena, &din, SDX_F32, in->ndim, in->shape) ||
        !sdx__arena_tensor(arena, &dout, SDX_F32, out->ndim, out->shape))
        goto done;
    if (in->dtype != SDX_F32) {
        float *f = (float *)sdx__arena_host_alloc(arena, sdx_tensor_nbytes(&din));
        if (!f) goto done;
        sdx__load_f32(in->data, in->dtype, 0, sdx_tensor_numel(in), f);
        values = f;
    }
    if ((rc = sdx__upload(ctx, &din, values)) == SDX_OK &&
        (rc = sdx__vae_run_walk(ctx, v, arena, walk, &din, &dout)) == SDX_OK)
        rc = sdx__download(ctx, (float *)out->data, &dout);
done:
    sdx__arena_release(arena, m);
    return rc;
}

static int sdx__vae_decoder_walk_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    return sdx__vae_decoder_walk(r, v, in, out);
}
static int sdx__vae_encoder_walk_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    return sdx__vae_encoder_walk(r, v, in, out);
}

/* Estimated arena bytes of an untiled decode of an h x w latent. */
static size_t sdx__vae_decode_bytes(const sdx__vae *v, int64_t h, int64_t w) {
    sdx__vae_run r;
    sdx_tensor z = sdx__view4(SDX_F32, NULL, 1, v->latent_channels, h, w);
    sdx_tensor img = sdx__view4(SDX_F32, NULL, 1, 3, h * v->factor, w * v->factor);
    sdx__vae_run_init(&r, NULL, NULL, (sdx_dtype)v->act_type, 1);
    sdx__vae_decoder_walk(&r, v, &z, &img);
    return sdx__vae_run_bytes(&r);
}

/* Estimated arena bytes of an untiled encode of an H x W image, including
 * the f32 moments buffer. */
static size_t sdx__vae_encode_bytes(const sdx__vae *v, int64_t H, int64_t W) {
    sdx__vae_run r;
    int64_t h = H / v->factor, w = W / v->factor;
    sdx_tensor img = sdx__view4(SDX_F32, NULL, 1, 3, H, W);
    sdx_tensor mom = sdx__view4(SDX_F32, NULL, 1, 2 * v->latent_channels, h, w);
    sdx__vae_run_init(&r, NULL, NULL, (sdx_dtype)v->act_type, 1);
    sdx__vae_encoder_walk(&r, v, &img, &mom);
    return sdx__vae_run_bytes(&r) + (size_t)(2 * v->latent_channels * h * w) * sizeof(float) + SDX__ARENA_ALIGN;
}

/* ---- tiling ------------------------------------------------------------- */
/* Tiles of `tile` latent pixels overlap by at least `overlap`; starts are
 * spread evenly so the last tile ends flush with the border. In each
 * overlap the two tiles cross-fade linearly (weights sum to 1), so the
 * seam-prone border of a tile gets the least weight. Tiles are not exact:
 * the mid-block attention of each tile sees only that tile, and GroupNorm
 * statistics are per tile. */

static int64_t sdx__vae_tile_count(int64_t len, int64_t tile, int64_t overlap) {
    if (len <= tile) return 1;
    return 1 + (len - tile + (tile - overlap) - 1) / (tile - overlap);
}

static int64_t sdx__vae_tile_start(int64_t len, int64_t tile, int64_t n, int64_t i) {
    return n <= 1 ? 0 : i * (len - tile) / (n - 1);
}

/* Weights of tile i along one axis, `scale` output pixels per tile pixel. */
static void sdx__vae_tile_ramp(float *ramp, int64_t len, int64_t tile, int64_t n, int64_t i, int64_t scale) {
    int64_t size = tile * scale, p = sdx__vae_tile_start(len, tile, n, i);
    int64_t left = i > 0 ? (sdx__vae_tile_start(len, tile, n, i - 1) + tile - p) * scale : 0;
    int64_t right = i < n - 1 ? (p + tile - sdx__vae_tile_start(len, tile, n, i + 1)) * scale : 0;
    for (int64_t t = 0; t < size; t++) {
        float wgt = 1.0f;
        if (t < left) wgt *= ((float)t + 0.5f) / (float)left;
        if (size - 1 - t < right) wgt *= ((float)(size - 1 - t) + 0.5f) / (float)right;
        ramp[t] = wgt;
    }
}

/* dst[0, :, :, :] = src[0, :, y0 : y0 + dst.h, x0 : x0 + dst.w] (dst f32). */
static void sdx__vae_crop(sdx_tensor *dst, const sdx_tensor *src, int64_t y0, int64_t x0) {
    int64_t c = dst->shape[1], h = dst->shape[2], w = dst->shape[3], sh = src->shape[2], sw = src->shape[3];
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t y = 0; y < h; y++)
            sdx__load_f32(src->data, src->dtype, (ch * sh + y0 + y) * sw + x0, w, (float *)dst->data + (ch * h + y) * w);
}

/* acc[:, y0.., x0..] += tile * ry[y] * rx[x]; wsum likewise. */
static void sdx__vae_blend(float *acc, float *wsum, int64_t acc_h, int64_t acc_w, const sdx_tensor *tile,
                           const float *ry, const float *rx, int64_t y0, int64_t x0) {
    int64_t c = tile->shape[1], h = tile->shape[2], w = tile->shape[3];
    const float *t = (const float *)tile->data;
    for (int64_t y = 0; y < h; y++) {
        float *ws = wsum + (y0 + y) * acc_w + x0;
        for (int64_t x = 0; x < w; x++) ws[x] += ry[y] * rx[x];
    }
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t y = 0; y < h; y++) {
            float *a = acc + (ch * acc_h + y0 + y) * acc_w + x0;
            const float *s = t + (ch * h + y) * w;
            for (int64_t x = 0; x < w; x++) a[x] += s[x] * ry[y] * rx[x];
        }
}

static void sdx__vae_normalize(float *acc, const float *wsum, int64_t c, int64_t hw) {
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t i = 0; i < hw; i++) acc[ch * hw + i] /= wsum[i];
}

/* A tiled pass over a latent grid of lh x lw. `scale_in`/`scale_out`:
 * input/output pixels per latent pixel (decode 1/factor, encode
 * factor/1). out: f32 [1, out_c, lh * scale_out, lw * scale_out]. */
typedef struct sdx__vae_tiled {
    const sdx__vae *v;
    sdx__vae_walk_fn walk;
    const sdx_tensor *in;
    sdx_tensor *out;
    int64_t lh, lw, tile, overlap, scale_in, scale_out;
} sdx__vae_tiled;

static int sdx__vae_tiled_run(sdx_ctx *ctx, sdx__arena *arena, const sdx__vae_tiled *job) {
    int64_t th = SDX__MIN(job->tile, job->lh), tw = SDX__MIN(job->tile, job->lw);
    int64_t ny = sdx__vae_tile_count(job->lh, th, job->overlap), nx = sdx__vae_tile_count(job->lw, tw, job->overlap);
    int64_t so = job->scale_out, si = job->scale_in, oc = job->out->shape[1];
    int64_t oh = job->out->shape[2], ow = job->out->shape[3];
    sdx_tensor tin, tout, wsum, ry, rx;
    sdx__mark m = sdx__arena_mark(arena);
    int rc = SDX_OK;
    int64_t tin_shape[4] = { 1, job->in->shape[1], th * si, tw * si }, tout_shape[4] = { 1, oc, th * so, tw * so };
    /* tiles are cut and blended on the host */
    if (!sdx__arena_host_tensor(arena, &tin, SDX_F32, 4, tin_shape) ||
        !sdx__arena_host_tensor(arena, &tout, SDX_F32, 4, tout_shape) ||
        !sdx__arena_host_tensor(arena, &wsum, SDX_F32, 1, SDX__S(oh * ow)) ||
        !sdx__arena_host_tensor(arena, &ry, SDX_F32, 1, SDX__S(th * so)) ||
        !sdx__arena_host_tensor(arena, &rx, SDX_F32, 1, SDX__S(tw * so))) {
        sdx__arena_release(arena, m);
        return SDX_ERR_NOMEM;
    }
    memset(job->out->data, 0, sdx_tensor_nbytes(job->out));
    memset(wsum.data, 0, sdx_tensor_nbytes(&wsum));
    for (int64_t iy = 0; iy < ny && rc == SDX_OK; iy++) {
        int64_t py = sdx__vae_tile_start(job->lh, th, ny, iy);
        sdx__vae_tile_ramp((float *)ry.data, job->lh, th, ny, iy, so);
        for (int64_t ix = 0; ix < nx && rc == SDX_OK; ix++) {
            int64_t px = sdx__vae_tile_start(job->lw, tw, nx, ix);
            sdx__vae_tile_ramp((float *)rx.data, job->lw, tw, nx, ix, so);
            sdx__vae_crop(&tin, job->in, py * si, px * si);
            rc = sdx__vae_run_host(ctx, job->v, arena, job->walk, &tin, &tout);
            if (rc == SDX_OK)
                sdx__vae_blend((float *)job->out->data, (float *)wsum.data, oh, ow, &tout, (const float *)ry.data,
                               (const float *)rx.data, py * so, px * so);
        }
    }
    if (rc == SDX_OK) sdx__vae_normalize((float *)job->out->data, (const float *)wsum.data, oc, oh * ow);
    sdx__arena_release(arena, m);
    return rc;
}

/* Decides whether to tile and picks tile/overlap (latent pixels).
 * bytes_fn estimates an untiled pass of a th x tw latent region. */
typedef size_t (*sdx__vae_bytes_fn)(const sdx__vae *, int64_t, int64_t);

static size_t sdx__vae_dec_bytes_latent(const sdx__vae *v, int64_t h, int64_t w) { return sdx__vae_decode_bytes(v, h, w); }
static size_t sdx__vae_enc_bytes_latent(const sdx__vae *v, int64_t h, int64_t w) {
    return sdx__vae_encode_bytes(v, h * v->factor, w * v->factor);
}

static int sdx__vae_plan_tiles(sdx_ctx *ctx, const sdx__vae *v, const sdx__vae_tiling *tiling, sdx__vae_bytes_fn bytes,
                               int64_t h, int64_t w, int64_t *tile, int64_t *overlap) {
    int mode = tiling ? tiling->mode : 0;
    size_t budget = tiling && tiling->budget_bytes ? tiling->budget_bytes : SDX_VAE_TILE_BUDGET;
    size_t full;
    int64_t t;
    if (mode < 0) return 0;
    full = bytes(v, h, w);
    if (mode == 0 && full <= budget) return 0;
    if (tiling && tiling->tile_latent > 0) {
        t = tiling->tile_latent;
    } else {
        /* the largest tile that fits (fewer seams, more context for the
         * global attention); forced tiling with room to spare uses 64 */
        t = SDX__MAX(h, w);
        if (mode > 0) t = SDX__MIN(t, 64);
        while (t > 16 && bytes(v, t, t) > budget) t -= t % 8 ? t % 8 : 8;
    }
    *tile = t;
    *overlap = tiling && tiling->overlap_latent > 0 ? tiling->overlap_latent : SDX__MAX((int64_t)1, t / 8);
    /* at most a quarter tile: then no pixel lies in three tiles along an
     * axis and the cross-fade weights sum to one */
    if (*overlap > t / 4) *overlap = t / 4;
    sdx__log(ctx, SDX_LOG_INFO, "vae: tiling %lldx%lld latent in %lld-pixel tiles, overlap %lld (untiled: %zu MB, budget %zu MB)",
             (long long)h, (long long)w, (long long)*tile, (long long)*overlap, full >> 20, budget >> 20);
    return 1;
}

/* ---- entry points --------------------------------------------------------- */

/* z: latent already divided by the scale factor, [1, latent, h, w] (any
 * float dtype) -> image: caller-allocated F32 [1, 3, f*h, f*w], the raw
 * decoder output (f = 8 for SD VAEs). tiling may be NULL (auto, default
 * budget). */
static int sdx__vae_decode(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *z, sdx_tensor *image,
                           const sdx__vae_tiling *tiling) {
    char zs[96], is[96];
    int64_t tile = 0, overlap = 0;
    if (z->ndim != 4 || z->shape[0] != 1 || z->shape[1] != v->latent_channels || z->shape[2] < 1 || z->shape[3] < 1 ||
        image->ndim != 4 || image->dtype != SDX_F32 || image->shape[0] != 1 || image->shape[1] != 3 ||
        image->shape[2] != z->shape[2] * v->factor || image->shape[3] != z->shape[3] * v->factor)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae decode: latent %s -> image %s %s; expected [1, %d, h, w] -> F32 [1, 3, %dh, %dw]",
                         sdx_shape_str(z, zs, sizeof zs), sdx_shape_str(image, is, sizeof is), sdx_dtype_name(image->dtype),
                         v->latent_channels, v->factor, v->factor);
    if (sdx__vae_plan_tiles(ctx, v, tiling, sdx__vae_dec_bytes_latent, z->shape[2], z->shape[3], &tile, &overlap)) {
        sdx__vae_tiled job = { v, sdx__vae_decoder_walk_fn, z, image, z->shape[2], z->shape[3], tile, overlap, 1, v->factor };
        return sdx__vae_tiled_run(ctx, arena, &job);
    }
    return sdx__vae_run_host(ctx, v, arena, sdx__vae_decoder_walk_fn, z, image);
}

/* moments -> mean and clamp(logvar, -30, 20) (DiagonalGaussianDistribution). */
static void sdx__vae_split_moments(const sdx_tensor *moments, sdx_tensor *mean, sdx_tensor *logvar) {
    int64_t n = sdx_tensor_numel(mean);
    const float *m = (const float *)moments->data;
    memcpy(mean->data, m, (size_t)n * sizeof(float));
    if (!logvar) return;
    for (int64_t i = 0; i < n; i++) {
        float lv = m[n + i];
        ((float *)logvar->data)[i] = lv < -30.0f ? -30.0f : lv > 20.0f ? 20.0f : lv;
    }
}

/* image in [-1, 1], [1, 3, H, W] (any float dtype) -> mean (and logvar if
 * non-NULL), caller-allocated F32 [1, latent, H/f, W/f]. Not multiplied
 * by the scale factor. tiling may be NULL (auto). */
static int sdx__vae_encode(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *image, sdx_tensor *mean,
                           sdx_tensor *logvar, const sdx__vae_tiling *tiling) {
    char is[96], ms[96];
    int64_t h, w, tile = 0, overlap = 0;
    sdx_tensor moments;
    sdx__mark m;
    int rc, tiled;
    if (!v->has_encoder)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: this VAE has no encoder ('%sencoder.conv_in.weight' is missing)",
                         sdx_st_path(v->w.st), v->w.prefix);
    if (image->ndim != 4 || image->shape[0] != 1 || image->shape[1] != 3 || image->shape[2] < v->factor ||
        image->shape[3] < v->factor)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae encode: image %s; expected [1, 3, H, W] with H, W >= %d",
                         sdx_shape_str(image, is, sizeof is), v->factor);
    h = image->shape[2] / v->factor;
    w = image->shape[3] / v->factor;
    if (mean->ndim != 4 || mean->dtype != SDX_F32 || mean->shape[0] != 1 || mean->shape[1] != v->latent_channels ||
        mean->shape[2] != h || mean->shape[3] != w || (logvar && !sdx__same_shape(logvar, mean)) ||
        (logvar && logvar->dtype != SDX_F32))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae encode: image %s -> mean %s; expected F32 [1, %d, %lld, %lld]",
                         sdx_shape_str(image, is, sizeof is), sdx_shape_str(mean, ms, sizeof ms), v->latent_channels,
                         (long long)h, (long long)w);
    tiled = sdx__vae_plan_tiles(ctx, v, tiling, sdx__vae_enc_bytes_latent, h, w, &tile, &overlap);
    if (tiled && (image->shape[2] % v->factor || image->shape[3] % v->factor)) {
        if (tiling && tiling->mode > 0)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae encode: tiled encoding needs H and W multiples of %d, got %s",
                             v->factor, sdx_shape_str(image, is, sizeof is));
        tiled = 0;
    }
    m = sdx__arena_mark(arena);
    {
        int64_t mshape[4] = { 1, 2 * v->latent_channels, h, w };
        if (!sdx__arena_host_tensor(arena, &moments, SDX_F32, 4, mshape)) return SDX_ERR_NOMEM;
    }
    if (tiled) {
        sdx__vae_tiled job = { v, sdx__vae_encoder_walk_fn, image, &moments, h, w, tile, overlap, v->factor, 1 };
        rc = sdx__vae_tiled_run(ctx, arena, &job);
    } else {
        rc = sdx__vae_run_host(ctx, v, arena, sdx__vae_encoder_walk_fn, image, &moments);
    }
    if (rc == SDX_OK) sdx__vae_split_moments(&moments, mean, logvar);
    sdx__arena_release(arena, m);
    return rc;
}

/* ---- src/models/taesd.c ---- */

/* ===================================================================== */
/*  TAESD: the tiny autoencoder (madebyollin/taesd) for SD latents        */
/* ===================================================================== */
/* A conv-only encoder and decoder that read and write the diffusion
 * model's latent space directly ("model space": no VAE scale factor).
 * The network is taesd.py's nn.Sequential, a fixed list of layers; the
 * channel counts (latent channels included) come from the tensors.
 * Decoder: tanh(x/3)*3, then convs, Blocks and three nearest 2x
 * upsamples, giving RGB of about [0, 1] (not clamped by the network).
 * Encoder: RGB in [0, 1], three stride-2 convs (H/2 = ceil(H/2)). TAESDXL
 * and the SD3/FLUX.1 variants share the layout; only the weights (and
 * for the latter the latent channels) differ. */

typedef enum sdx__taesd_op {
    SDX__TAESD_SOFTCLAMP,   /* tanh(x / 3) * 3, no weights                   */
    SDX__TAESD_CONV,        /* 3x3 conv, padding 1, with bias                */
    SDX__TAESD_CONV_NB,     /* 3x3 conv without bias (after an upsample)     */
    SDX__TAESD_DOWN,        /* 3x3 conv, stride 2, padding 1, without bias   */
    SDX__TAESD_RELU,
    SDX__TAESD_BLOCK,       /* relu(conv4(relu(conv2(relu(conv0(x))))) + skip(x)) */
    SDX__TAESD_UP           /* nearest 2x                                    */
} sdx__taesd_op;

#define SDX__TAESD_MAX_LAYERS 20
#define SDX__TAESD_MAX_CHANNELS 4096

static const unsigned char sdx__taesd_decoder_ops[] = {
    SDX__TAESD_SOFTCLAMP, SDX__TAESD_CONV, SDX__TAESD_RELU,
    SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_UP, SDX__TAESD_CONV_NB,
    SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_UP, SDX__TAESD_CONV_NB,
    SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_UP, SDX__TAESD_CONV_NB,
    SDX__TAESD_BLOCK, SDX__TAESD_CONV,
};

static const unsigned char sdx__taesd_encoder_ops[] = {
    SDX__TAESD_CONV, SDX__TAESD_BLOCK,
    SDX__TAESD_DOWN, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK,
    SDX__TAESD_DOWN, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK,
    SDX__TAESD_DOWN, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK,
    SDX__TAESD_CONV,
};

/* Where a file keeps one half: tensor `prefix + (layer index + shift)`.
 * taesd.py's own files (taesd_decoder.safetensors, ...) have no prefix;
 * diffusers' AutoencoderTiny holds both halves and has no module for the
 * decoder's soft clamp, so its decoder indices are one lower; ComfyUI
 * keeps both halves in one state dict under taesd_decoder./taesd_encoder. */
typedef struct sdx__taesd_layout { const char *prefix; int shift; const char *name; } sdx__taesd_layout;

static const sdx__taesd_layout sdx__taesd_dec_layouts[] = {
    { "", 0, "taesd.py" }, { "decoder.layers.", -1, "diffusers AutoencoderTiny" }, { "taesd_decoder.", 0, "ComfyUI" },
};
static const sdx__taesd_layout sdx__taesd_enc_layouts[] = {
    { "", 0, "taesd.py" }, { "encoder.layers.", 0, "diffusers AutoencoderTiny" }, { "taesd_encoder.", 0, "ComfyUI" },
};

typedef struct sdx__taesd_layer {
    const sdx_tensor *w[3], *b[3];   /* convs: w[0], b[0] (NULL without bias); Block: conv.0, .2, .4 */
    const sdx_tensor *skip;          /* Block whose channels change: 1x1 conv without bias */
    int cin, cout;
} sdx__taesd_layer;

typedef struct sdx__taesd_net {
    sdx__wset w;                     /* w.ctx == NULL: this half is not loaded */
    const char *layout;
    int shift;
    const unsigned char *ops;
    int n_ops;
    sdx__taesd_layer layer[SDX__TAESD_MAX_LAYERS];
    int in_channels, out_channels, max_channels;
} sdx__taesd_net;

typedef struct sdx__taesd {
    sdx__taesd_net dec, enc;
    int latent_channels;
    int factor;              /* image pixels per latent pixel: 2^3 */
    int act_type;            /* activation storage, SDX_VAE_ACT_TYPE unless overridden */
} sdx__taesd;

/* ---- loading -------------------------------------------------------- */

static int sdx__taesd_fail_channels(sdx__taesd_net *n, int i, int c) {
    return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: TAESD layer '%s%d' has %d channels; 1..%d supported",
                     sdx_st_path(n->w.st), n->w.prefix, i + n->shift, c, SDX__TAESD_MAX_CHANNELS);
}

static int sdx__taesd_load_layer(sdx__taesd_net *n, int i, int cin) {
    sdx__taesd_layer *l = &n->layer[i];
    sdx__wset *w = &n->w;
    int idx = i + n->shift, op = n->ops[i];
    const sdx_tensor *t;
    l->cin = l->cout = cin;
    switch (op) {
    case SDX__TAESD_CONV: case SDX__TAESD_CONV_NB: case SDX__TAESD_DOWN:
        if (!(t = l->w[0] = sdx__wget(w, 4, SDX__S(-1, cin, 3, 3), "%d.weight", idx))) return sdx__werr(w);
        l->cout = (int)t->shape[0];
        if (l->cout < 1 || l->cout > SDX__TAESD_MAX_CHANNELS) return sdx__taesd_fail_channels(n, i, l->cout);
        if (op == SDX__TAESD_CONV && !(l->b[0] = sdx__wget(w, 1, SDX__S(l->cout), "%d.bias", idx))) return sdx__werr(w);
        return SDX_OK;
    case SDX__TAESD_BLOCK:
        if (!(t = l->w[0] = sdx__wget(w, 4, SDX__S(-1, cin, 3, 3), "%d.conv.0.weight", idx))) return sdx__werr(w);
        l->cout = (int)t->shape[0];
        if (l->cout < 1 || l->cout > SDX__TAESD_MAX_CHANNELS) return sdx__taesd_fail_channels(n, i, l->cout);
        for (int k = 0; k < 3; k++)
            if ((k && !(l->w[k] = sdx__wget(w, 4, SDX__S(l->cout, l->cout, 3, 3), "%d.conv.%d.weight", idx, 2 * k))) ||
                !(l->b[k] = sdx__wget(w, 1, SDX__S(l->cout), "%d.conv.%d.bias", idx, 2 * k)))
                return sdx__werr(w);
        if (cin != l->cout && !(l->skip = sdx__wget(w, 4, SDX__S(l->cout, cin, 1, 1), "%d.skip.weight", idx))) return sdx__werr(w);
        return SDX_OK;
    default:
        return SDX_OK;      /* no weights */
    }
}

/* Loads one half from `file` under `layout`. in_channels < 0: read from
 * the first conv (the decoder's latent channels). */
static int sdx__taesd_load_net(sdx_ctx *ctx, sdx__taesd_net *n, const sdx_st *file, const sdx__taesd_layout *layout,
                               const unsigned char *ops, int n_ops, int in_channels) {
    int rc, c = in_channels;
    memset(n, 0, sizeof *n);
    sdx__wset_init(&n->w, ctx, file, layout->prefix, SDX__PART_VAE, SDX_VAE_WEIGHT_TYPE);
    n->layout = layout->name;
    n->shift = layout->shift;
    n->ops = ops;
    n->n_ops = n_ops;
    if (c < 0) {
        int first = 0;
        const sdx_tensor *t;
        while (ops[first] != SDX__TAESD_CONV) first++;
        if (!(t = sdx__wget(&n->w, 4, SDX__S(-1, -1, 3, 3), "%d.weight", first + n->shift))) return sdx__werr(&n->w);
        c = (int)t->shape[1];
        if (c < 1 || c > SDX__TAESD_MAX_CHANNELS) return sdx__taesd_fail_channels(n, first, c);
    }
    n->in_channels = c;
    for (int i = 0; i < n_ops; i++) {
        if ((rc = sdx__taesd_load_layer(n, i, c)) != SDX_OK) return rc;
        c = n->layer[i].cout;
        n->max_channels = SDX__MAX(n->max_channels, c);
    }
    n->out_channels = c;
    return SDX_OK;
}

static void sdx__taesd_init(sdx__taesd *t) {
    memset(t, 0, sizeof *t);
    t->act_type = SDX_VAE_ACT_TYPE;
    t->factor = 8;
}

static void sdx__taesd_free(sdx__taesd *t) {
    if (t->dec.w.ctx) sdx__wset_free(&t->dec.w);
    if (t->enc.w.ctx) sdx__wset_free(&t->enc.w);
    sdx__taesd_init(t);
}

/* The layout of a half in `file`, or NULL: its first conv decides. */
static const sdx__taesd_layout *sdx__taesd_find(const sdx_st *file, const sdx__taesd_layout *layouts, int n, int first) {
    char name[128];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%d.weight", layouts[i].prefix, first + layouts[i].shift);
        if (sdx_st_find(file, name)) return &layouts[i];
    }
    return NULL;
}

/* Adds the halves `file` holds (a decoder, an encoder or both) to t. The
 * file must stay open while t is used. On failure t keeps what it had. */
static int sdx__taesd_load(sdx_ctx *ctx, sdx__taesd *t, const sdx_st *file) {
    const sdx__taesd_layout *dl = sdx__taesd_find(file, sdx__taesd_dec_layouts, SDX__ARRAY_LEN(sdx__taesd_dec_layouts), 1);
    const sdx__taesd_layout *el = sdx__taesd_find(file, sdx__taesd_enc_layouts, SDX__ARRAY_LEN(sdx__taesd_enc_layouts), 0);
    sdx__taesd_net dec, enc;
    int rc = SDX_OK, lc;
    memset(&dec, 0, sizeof dec);
    memset(&enc, 0, sizeof enc);
    if (!dl && !el)
        return sdx__fail(ctx, SDX_ERR_MODEL,
                         "%s: not a TAESD file: no decoder ('1.weight' as in taesd_decoder.safetensors, "
                         "'decoder.layers.0.weight' as in diffusers AutoencoderTiny) and no encoder ('0.weight', "
                         "'encoder.layers.0.weight')", sdx_st_path(file));
    if ((dl && t->dec.w.ctx) || (el && t->enc.w.ctx))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: a second TAESD %s (the first came from %s)", sdx_st_path(file),
                         dl && t->dec.w.ctx ? "decoder" : "encoder", sdx_st_path(dl && t->dec.w.ctx ? t->dec.w.st : t->enc.w.st));
    if (dl) {
        rc = sdx__taesd_load_net(ctx, &dec, file, dl, sdx__taesd_decoder_ops, SDX__ARRAY_LEN(sdx__taesd_decoder_ops), -1);
        if (rc == SDX_OK && dec.out_channels != 3)
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: TAESD decoder gives %d channels (tensor '%s%d.weight'), expected RGB",
                           sdx_st_path(file), dec.out_channels, dec.w.prefix, dec.n_ops - 1 + dec.shift);
    }
    if (rc == SDX_OK && el)
        rc = sdx__taesd_load_net(ctx, &enc, file, el, sdx__taesd_encoder_ops, SDX__ARRAY_LEN(sdx__taesd_encoder_ops), 3);
    lc = dl ? dec.in_channels : el ? enc.out_channels : 0;
    if (rc == SDX_OK && dl && el && enc.out_channels != dec.in_channels)
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: TAESD encoder makes %d latent channels but the decoder takes %d",
                       sdx_st_path(file), enc.out_channels, dec.in_channels);
    if (rc == SDX_OK && t->latent_channels && lc != t->latent_channels)
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: TAESD %s has %d latent channels, the one loaded before %d", sdx_st_path(file),
                       dl ? "decoder" : "encoder", lc, t->latent_channels);
    if (rc != SDX_OK) {
        if (dec.w.ctx) sdx__wset_free(&dec.w);
        if (enc.w.ctx) sdx__wset_free(&enc.w);
        return rc;
    }
    if (dl) t->dec = dec;
    if (el) t->enc = enc;
    t->latent_channels = lc;
    t->factor = 8;
    sdx__log(ctx, SDX_LOG_INFO, "%s: TAESD %s%s%s (%s layout), %d latent channels, %d wide", sdx_st_path(file),
             dl ? "decoder" : "", dl && el ? " and " : "", el ? "encoder" : "", (dl ? dl : el)->name, lc,
             dl ? dec.max_channels : enc.max_channels);
    return SDX_OK;
}

/* ---- forward pass --------------------------------------------------- */
/* Activations rotate through three slots sized for the largest one: a
 * Block needs its input and two temporaries. The last layer writes the
 * caller's output tensor. */

typedef struct sdx__taesd_run {
    sdx_ctx *ctx;
    const sdx__taesd_net *n;
    sdx_dtype act;
    int device;              /* the slots are backend memory */
    void *slot[3];
    sdx_tensor x;            /* current activation */
    int cur;                 /* its slot; -1: the caller's input */
} sdx__taesd_run;

/* Output size of layer op for an input of h x w. */
static void sdx__taesd_resize(int op, int64_t *h, int64_t *w) {
    if (op == SDX__TAESD_UP) { *h *= 2; *w *= 2; }
    if (op == SDX__TAESD_DOWN) { *h = (*h + 1) / 2; *w = (*w + 1) / 2; }
}

/* Walks the shapes: the largest activation (elements) and the output size. */
static int64_t sdx__taesd_plan(const sdx__taesd_net *n, int64_t batch, int64_t h, int64_t w, int64_t *oh, int64_t *ow) {
    int64_t most = 0;
    for (int i = 0; i < n->n_ops; i++) {
        sdx__taesd_resize(n->ops[i], &h, &w);
        most = SDX__MAX(most, batch * n->layer[i].cout * h * w);
    }
    *oh = h;
    *ow = w;
    return most;
}

/* A tensor in a slot other than the current one and `also` (-1: none). */
static sdx_tensor sdx__taesd_slot(sdx__taesd_run *r, int also, int *which, int64_t c, int64_t h, int64_t w) {
    int s = 0;
    sdx_tensor t;
    while (s == r->cur || s == also) s++;
    *which = s;
    t = sdx__view4(r->act, r->slot[s], r->x.shape[0], c, h, w);
    t.device = r->device;
    return t;
}

static int sdx__taesd_block(sdx__taesd_run *r, const sdx__taesd_layer *l, sdx_tensor *out) {
    sdx_ctx *ctx = r->ctx;
    int64_t h = r->x.shape[2], w = r->x.shape[3];
    int sa, sb, rc;
    sdx_tensor a = sdx__taesd_slot(r, -1, &sa, l->cout, h, w);
    sdx_tensor b = sdx__taesd_slot(r, sa, &sb, l->cout, h, w);
    sdx_tensor *y = out ? out : &a;
    if ((rc = sdx__conv2d(ctx, &a, &r->x, l->w[0], l->b[0], 1, 1)) != SDX_OK ||
        (rc = sdx__clamp(ctx, &a, &a, 0.0f, INFINITY)) != SDX_OK ||
        (rc = sdx__conv2d(ctx, &b, &a, l->w[1], l->b[1], 1, 1)) != SDX_OK ||
        (rc = sdx__clamp(ctx, &b, &b, 0.0f, INFINITY)) != SDX_OK ||
        (rc = sdx__conv2d(ctx, y, &b, l->w[2], l->b[2], 1, 1)) != SDX_OK)
        return rc;
    if (l->skip) {
        if ((rc = sdx__conv2d(ctx, &b, &r->x, l->skip, NULL, 1, 0)) != SDX_OK || (rc = sdx__add(ctx, y, y, &b)) != SDX_OK) return rc;
    } else if ((rc = sdx__add(ctx, y, y, &r->x)) != SDX_OK) {
        return rc;
    }
    if ((rc = sdx__clamp(ctx, y, y, 0.0f, INFINITY)) != SDX_OK) return rc;
    r->x = *y;
    r->cur = out ? -1 : sa;
    return SDX_OK;
}

static int sdx__taesd_layer_fwd(sdx__taesd_run *r, int i, sdx_tensor *out) {
    const sdx__taesd_layer *l = &r->n->layer[i];
    int op = r->n->ops[i], s = -1, rc;
    int64_t h = r->x.shape[2], w = r->x.shape[3];
    sdx_tensor y;
    sdx__taesd_resize(op, &h, &w);
    if (op == SDX__TAESD_BLOCK) return sdx__taesd_block(r, l, out);
    y = out ? *out : sdx__taesd_slot(r, -1, &s, l->cout, h, w);
    switch (op) {
    case SDX__TAESD_SOFTCLAMP: rc = sdx__tanh_clamp(r->ctx, &y, &r->x, 3.0f); break;
    case SDX__TAESD_RELU: rc = sdx__clamp(r->ctx, &y, &r->x, 0.0f, INFINITY); break;
    case SDX__TAESD_UP: rc = sdx__upsample2x(r->ctx, &y, &r->x); break;
    case SDX__TAESD_DOWN: rc = sdx__conv2d(r->ctx, &y, &r->x, l->w[0], NULL, 2, 1); break;
    default: rc = sdx__conv2d(r->ctx, &y, &r->x, l->w[0], l->b[0], 1, 1); break;
    }
    r->x = y;
    r->cur = out ? -1 : s;
    return rc;
}

static int sdx__taesd_run_net(sdx_ctx *ctx, const sdx__taesd_net *n, sdx__arena *arena, int act_type, const char *half,
                              const sdx_tensor *in, sdx_tensor *out) {
    sdx__taesd_run r;
    sdx__mark m = sdx__arena_mark(arena);
    int64_t oh, ow, most = sdx__taesd_plan(n, in->shape[0], in->shape[2], in->shape[3], &oh, &ow);
    size_t bytes;
    int rc = SDX_OK;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.n = n;
    r.act = (sdx_dtype)act_type;
    r.device = arena->device;
    r.x = *in;
    r.cur = -1;
    if (!sdx__mul_size((size_t)most, sdx_dtype_size(r.act), &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD %s: activation size overflows", half);
    for (int s = 0; s < 3; s++)
        if (!(r.slot[s] = sdx__arena_alloc(arena, bytes))) {
            sdx__arena_release(arena, m);
            return sdx__nomem(ctx, "TAESD activations", 3 * bytes);
        }
    for (int i = 0; i < n->n_ops && rc == SDX_OK; i++) {
        sdx__trace_at(ctx, SDX__PART_VAE, "taesd %s %d", half, i + n->shift);
        rc = sdx__taesd_layer_fwd(&r, i, i == n->n_ops - 1 ? out : NULL);
    }
    sdx__arena_release(arena, m);
    return rc;
}

/* A pass from host tensors (in: any float dtype, out: F32): on a device
 * backend through device copies, so only they cross the bus. */
static int sdx__taesd_run_host(sdx_ctx *ctx, const sdx__taesd_net *n, sdx__arena *arena, int act_type, const char *half,
                               const sdx_tensor *in, sdx_tensor *out, int clamp01) {
    sdx__mark m;
    sdx_tensor din, dout;
    const float *values = (const float *)in->data;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__on_device(ctx)) {
        rc = sdx__taesd_run_net(ctx, n, arena, act_type, half, in, out);
        return rc == SDX_OK && clamp01 ? sdx__clamp(ctx, out, out, 0.0f, 1.0f) : rc;
    }
    m = sdx__arena_mark(arena);
    if (!sdx__arena_tensor(arena, &din, SDX_F32, in->ndim, in->shape) || !sdx__arena_tensor(arena, &dout, SDX_F32, out->ndim, out->shape))
        goto done;
    if (in->dtype != SDX_F32) {
        float *f = (float *)sdx__arena_host_alloc(arena, sdx_tensor_nbytes(&din));
        if (!f) goto done;
        sdx__load_f32(in->data, in->dtype, 0, sdx_tensor_numel(in), f);
        values = f;
    }
    if ((rc = sdx__upload(ctx, &din, values)) == SDX_OK && (rc = sdx__taesd_run_net(ctx, n, arena, act_type, half, &din, &dout)) == SDX_OK &&
        (!clamp01 || (rc = sdx__clamp(ctx, &dout, &dout, 0.0f, 1.0f)) == SDX_OK))
        rc = sdx__download(ctx, (float *)out->data, &dout);
done:
    sdx__arena_release(arena, m);
    return rc;
}

/* ---- entry points --------------------------------------------------- */
/* Host tensors in and out, as the VAE's. */

/* latent [N, C, h, w] in model space (host, any float dtype) -> image,
 * caller allocated host F32 [N, 3, 8h, 8w]: RGB, clamped to [0, 1] when
 * clamp01 (the final image), else the raw network output. */
static int sdx__taesd_decode(sdx_ctx *ctx, const sdx__taesd *t, sdx__arena *arena, const sdx_tensor *latent, sdx_tensor *image,
                             int clamp01) {
    char ls[96], is[96];
    if (!t->dec.w.ctx) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD decode: no TAESD decoder is loaded");
    if (latent->ndim != 4 || latent->shape[0] < 1 || latent->shape[1] != t->dec.in_channels || latent->shape[2] < 1 ||
        latent->shape[3] < 1 || image->ndim != 4 || image->dtype != SDX_F32 || image->shape[0] != latent->shape[0] || image->shape[1] != 3 ||
        image->shape[2] != latent->shape[2] * t->factor || image->shape[3] != latent->shape[3] * t->factor)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD decode: latent %s -> image %s; expected [N, %d, h, w] -> [N, 3, %dh, %dw]",
                         sdx_shape_str(latent, ls, sizeof ls), sdx_shape_str(image, is, sizeof is), t->dec.in_channels,
                         t->factor, t->factor);
    return sdx__taesd_run_host(ctx, &t->dec, arena, t->act_type, "decoder", latent, image, clamp01);
}

/* image [N, 3, H, W], RGB in [0, 1] (host, any float dtype) -> latent,
 * caller allocated host F32 [N, C, ceil(H/8), ceil(W/8)] in model space. */
static int sdx__taesd_encode(sdx_ctx *ctx, const sdx__taesd *t, sdx__arena *arena, const sdx_tensor *image, sdx_tensor *latent) {
    char ls[96], is[96];
    int64_t oh = 0, ow = 0;
    if (!t->enc.w.ctx) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD encode: no TAESD encoder is loaded");
    if (image->ndim == 4 && image->shape[0] >= 1 && image->shape[2] >= 1 && image->shape[3] >= 1)
        sdx__taesd_plan(&t->enc, image->shape[0], image->shape[2], image->shape[3], &oh, &ow);
    if (image->ndim != 4 || image->shape[0] < 1 || image->shape[1] != 3 || image->shape[2] < 1 || image->shape[3] < 1 ||
        latent->ndim != 4 || latent->dtype != SDX_F32 || latent->shape[0] != image->shape[0] || latent->shape[1] != t->enc.out_channels ||
        latent->shape[2] != oh || latent->shape[3] != ow)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD encode: image %s -> latent %s; expected [N, 3, H, W] -> [N, %d, H/8, W/8]",
                         sdx_shape_str(image, is, sizeof is), sdx_shape_str(latent, ls, sizeof ls), t->enc.out_channels);
    return sdx__taesd_run_host(ctx, &t->enc, arena, t->act_type, "encoder", image, latent, 0);
}

/* ---- src/sampling/sampling.c ---- */

/* ===================================================================== */
/*  Sampling: model sampling, schedulers, samplers (ComfyUI semantics)    */
/* ===================================================================== */
/* ComfyUI runs all of this in float32 torch. Scalars that torch keeps as
 * 0-d float32 tensors are float here and evaluated in the same order;
 * Python-float scalars are double. That keeps trajectories within a few
 * ulp of the reference instead of merely close. */

/* torch.linspace on the CPU: the first half counts up from start, the
 * second half down from end, both with a step rounded to the element type. */
static float sdx__linspace_f32(float start, float end, int count, int i) {
    float step;
    if (count == 1) return start;
    step = (end - start) / (float)(count - 1);
    return i < count / 2 ? start + step * (float)i : end - step * (float)(count - 1 - i);
}

static double sdx__linspace_f64(double start, double end, int count, int i) {
    double step;
    if (count == 1) return start;
    step = (end - start) / (double)(count - 1);
    return i < count / 2 ? start + step * (double)i : end - step * (double)(count - 1 - i);
}

/* ---- model sampling ------------------------------------------------- */

SDX_API void sdx_model_sampling_init(sdx_model_sampling *ms) {
    /* ModelSamplingDiscrete: betas and their cumulative product in
     * float64, then the sigmas and their logs rounded to float32. */
    double cumprod = 1.0;
    double lo = sqrt(0.00085), hi = sqrt(0.012);
    for (int t = 0; t < SDX_TRAIN_STEPS; t++) {
        double b = sdx__linspace_f64(lo, hi, SDX_TRAIN_STEPS, t);
        double sigma;
        cumprod *= 1.0 - b * b;
        sigma = sqrt((1.0 - cumprod) / cumprod);
        ms->sigmas[t] = (float)sigma;
        ms->log_sigmas[t] = (float)log(sigma);
    }
    ms->sigma_min = ms->sigmas[0];
    ms->sigma_max = ms->sigmas[SDX_TRAIN_STEPS - 1];
}

SDX_API int sdx_sigma_to_timestep(const sdx_model_sampling *ms, float sigma) {
    float log_sigma = logf(sigma);
    float best = fabsf(log_sigma - ms->log_sigmas[0]);
    int best_t = 0;
    for (int t = 1; t < SDX_TRAIN_STEPS; t++) {
        float d = fabsf(log_sigma - ms->log_sigmas[t]);
        if (d < best) { best = d; best_t = t; }
    }
    return best_t;
}

SDX_API float sdx_timestep_to_sigma(const sdx_model_sampling *ms, float t) {
    float lo_t, w;
    int lo, hi;
    if (!(t > 0.0f)) t = 0.0f;   /* also maps NaN to 0 */
    if (t > (float)(SDX_TRAIN_STEPS - 1)) t = (float)(SDX_TRAIN_STEPS - 1);
    lo_t = floorf(t);
    lo = (int)lo_t;
    hi = (int)ceilf(t);
    w = t - lo_t;
    return expf((1.0f - w) * ms->log_sigmas[lo] + w * ms->log_sigmas[hi]);
}

SDX_API float sdx_model_c_in(float sigma) {
    return 1.0f / sqrtf(sigma * sigma + 1.0f);
}

SDX_API void sdx_model_denoised(sdx_prediction pred, float sigma, const float *x,
                                const float *model_out, float *denoised, size_t n) {
    if (pred == SDX_PRED_V) {
        float s2 = sigma * sigma + 1.0f;
        float out_scale = sigma / sqrtf(s2);
        for (size_t i = 0; i < n; i++) denoised[i] = x[i] / s2 - model_out[i] * out_scale;
    } else {
        for (size_t i = 0; i < n; i++) denoised[i] = x[i] - model_out[i] * sigma;
    }
}

SDX_API int sdx_is_max_denoise(const sdx_model_sampling *ms, float sigma0) {
    /* math.isclose(sigma_max, sigma0, rel_tol=1e-5) or sigma0 > sigma_max */
    double a = ms->sigma_max, b = sigma0;
    return fabs(a - b) <= 1e-5 * fmax(fabs(a), fabs(b)) || b > a;
}

SDX_API void sdx_add_noise(float sigma, const float *latent, const float *noise, float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = noise[i] * sigma;
        x[i] = latent ? v + latent[i] : v;
    }
}

SDX_API void sdx_start_latent(const sdx_model_sampling *ms, float sigma0, const float *latent,
                              const float *noise, float *x, size_t n) {
    float scale = sdx_is_max_denoise(ms, sigma0) ? sqrtf(1.0f + sigma0 * sigma0) : sigma0;
    sdx_add_noise(scale, latent, noise, x, n);
}

/* ---- schedulers ------------------------------------------------------ */

static const char *const sdx__scheduler_names[SDX_SCHED_COUNT] = {
    "normal", "karras", "exponential", "sgm_uniform", "simple", "ddim_uniform", "beta",
    "linear_quadratic", "kl_optimal", "ays_sd1", "ays_sdxl", "polyexponential", "vp"
};

SDX_API const char *sdx_scheduler_name(sdx_scheduler s) {
    return (unsigned)s < SDX_SCHED_COUNT ? sdx__scheduler_names[s] : "?";
}

SDX_API int sdx_scheduler_from_name(sdx_ctx *ctx, const char *name, sdx_scheduler *out) {
    char list[512];
    size_t used = 0;
    for (int i = 0; name && i < SDX_SCHED_COUNT; i++) {
        if (!strcmp(name, sdx__scheduler_names[i])) { *out = (sdx_scheduler)i; return SDX_OK; }
    }
    list[0] = 0;
    for (int i = 0; i < SDX_SCHED_COUNT && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, i ? ", %s" : "%s", sdx__scheduler_names[i]);
    if (name && !strcmp(name, "ays"))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "scheduler 'ays' needs the model family: use ays_sd1 or "
                         "ays_sdxl (there is no Align Your Steps table for SD 2.x)");
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "unknown scheduler '%s'; valid: %s", name ? name : "(null)", list);
}

/* A growable list of sigmas, computed in double or float and stored as
 * float (schedulers never produce more than a few thousand values). */
typedef struct sdx__sigma_list {
    float *v;
    int    count, cap;
} sdx__sigma_list;

static int sdx__sigma_list_init(sdx_ctx *ctx, sdx__sigma_list *l, int cap) {
    l->count = 0;
    l->cap = cap < 2 ? 2 : cap;
    l->v = (float *)sdx__malloc(ctx, (size_t)l->cap * sizeof(float));
    if (!l->v) return sdx__nomem(ctx, "sigma schedule", (size_t)l->cap * sizeof(float));
    return SDX_OK;
}

/* Callers size the list up front, so a push past capacity is a bug. */
static void sdx__sigma_push(sdx__sigma_list *l, float v) {
    SDX_ASSERT(l->count < l->cap);
    l->v[l->count++] = v;
}

static void sdx__sched_karras(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double min_inv_rho = pow((double)ms->sigma_min, 1.0 / 7.0);
    double max_inv_rho = pow((double)ms->sigma_max, 1.0 / 7.0);
    float span = (float)(min_inv_rho - max_inv_rho), base = (float)max_inv_rho;
    for (int i = 0; i < steps; i++)
        sdx__sigma_push(l, powf(base + sdx__linspace_f32(0.0f, 1.0f, steps, i) * span, 7.0f));
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_exponential(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    float hi = (float)log((double)ms->sigma_max), lo = (float)log((double)ms->sigma_min);
    for (int i = 0; i < steps; i++) sdx__sigma_push(l, expf(sdx__linspace_f32(hi, lo, steps, i)));
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_polyexponential(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double log_min = log((double)ms->sigma_min);
    float span = (float)(log((double)ms->sigma_max) - log_min);
    for (int i = 0; i < steps; i++)   /* rho = 1: ramp ** 1 is the ramp */
        sdx__sigma_push(l, expf(sdx__linspace_f32(1.0f, 0.0f, steps, i) * span + (float)log_min));
    sdx__sigma_push(l, 0.0f);
}

/* The reference's float32 expm1 behaves as exp(x) - 1 (it loses digits
 * at the small end, 4e-4 relative at t = eps_s); reproduced as is. */
static void sdx__sched_vp(int steps, sdx__sigma_list *l) {
    const float beta_d = 19.9f, beta_min = 0.1f, eps_s = 1e-3f;
    for (int i = 0; i < steps; i++) {
        float t = sdx__linspace_f32(1.0f, eps_s, steps, i);
        sdx__sigma_push(l, sqrtf(expf(beta_d * (t * t) / 2.0f + beta_min * t) - 1.0f));
    }
    sdx__sigma_push(l, 0.0f);
}

/* normal: evenly spaced timesteps from timestep(sigma_max) to
 * timestep(sigma_min), mapped through the interpolating sigma(t).
 * sgm_uniform spaces steps + 1 and drops the last. */
static void sdx__sched_normal(const sdx_model_sampling *ms, int steps, int sgm, sdx__sigma_list *l) {
    float start = (float)sdx_sigma_to_timestep(ms, ms->sigma_max);
    float end = (float)sdx_sigma_to_timestep(ms, ms->sigma_min);
    int count = sgm ? steps + 1 : steps, append_zero = 1;
    if (!sgm && fabsf(sdx_timestep_to_sigma(ms, end)) <= 1e-5f) { count++; append_zero = 0; }
    for (int i = 0; i < (sgm ? steps : count); i++)
        sdx__sigma_push(l, sdx_timestep_to_sigma(ms, sdx__linspace_f32(start, end, count, i)));
    if (append_zero) sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_simple(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double stride = (double)SDX_TRAIN_STEPS / steps;
    for (int i = 0; i < steps; i++)
        sdx__sigma_push(l, ms->sigmas[SDX_TRAIN_STEPS - 1 - (int)(i * stride)]);
    sdx__sigma_push(l, 0.0f);
}

/* Training indices 1, 1 + s, 1 + 2s, ... (s = 1000 // steps) in reverse:
 * starts below sigma_max and may hold more than steps values. */
static void sdx__sched_ddim_uniform(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    int stride = SDX_TRAIN_STEPS / steps, last;
    if (stride < 1) stride = 1;
    last = 1 + (SDX_TRAIN_STEPS - 2) / stride * stride;
    for (int t = last; t >= 1; t -= stride) sdx__sigma_push(l, ms->sigmas[t]);
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_linear_quadratic(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    const double threshold = 0.025;
    int linear_steps = steps / 2, quad_steps = steps - linear_steps;
    double diff, quad_coef, lin_coef, constant;
    if (steps == 1) {
        sdx__sigma_push(l, ms->sigma_max);
        sdx__sigma_push(l, 0.0f);
        return;
    }
    diff = linear_steps - threshold * steps;
    quad_coef = diff / (linear_steps * (double)quad_steps * quad_steps);
    lin_coef = threshold / linear_steps - 2 * diff / ((double)quad_steps * quad_steps);
    constant = quad_coef * ((double)linear_steps * linear_steps);
    for (int i = 0; i < steps; i++) {
        double v = i < linear_steps ? i * threshold / linear_steps
                                    : quad_coef * ((double)i * i) + lin_coef * i + constant;
        sdx__sigma_push(l, (float)(1.0 - v) * ms->sigma_max);
    }
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_kl_optimal(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    float atan_min = (float)atan((double)ms->sigma_min), atan_max = (float)atan((double)ms->sigma_max);
    for (int i = 0; i < steps; i++) {
        float w = steps > 1 ? (float)i / (float)(steps - 1) : 0.0f;
        sdx__sigma_push(l, tanf(w * atan_min + (1.0f - w) * atan_max));
    }
    sdx__sigma_push(l, 0.0f);
}

/* Regularized incomplete beta I_x(a, b) by its continued fraction
 * (modified Lentz), using the symmetry that keeps the fraction convergent. */
static double sdx__betacf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    h = d;
    for (int m = 1; m <= 500; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)), del;
        d = 1.0 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) break;
    }
    return h;
}

static double sdx__beta_inc(double a, double b, double x) {
    double front;
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) return front * sdx__betacf(a, b, x) / a;
    return 1.0 - front * sdx__betacf(b, a, 1.0 - x) / b;
}

/* scipy.stats.beta.ppf: I_x is monotone on [0, 1], so bisection to the
 * last representable bit is robust for any a, b > 0 (no Newton steps that
 * could leave the interval near the singular ends). */
static double sdx__beta_ppf(double p, double a, double b) {
    double lo = 0.0, hi = 1.0;
    if (p <= 0.0) return 0.0;
    if (p >= 1.0) return 1.0;
    /* the median of a symmetric beta is exactly 1/2; bisection would stop
     * an ulp short, and rint(0.5 * 999) must see 499.5 (-> 500) */
    if (a == b && p == 0.5) return 0.5;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if (sdx__beta_inc(a, b, mid) < p) lo = mid; else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Timesteps at beta(0.6, 0.6) quantiles of 1 - i/steps, rounded half to
 * even like numpy.rint; repeated timesteps are dropped. */
static void sdx__sched_beta(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double last = -1.0, step = 1.0 / steps;
    for (int i = 0; i < steps; i++) {
        double t = nearbyint(sdx__beta_ppf(1.0 - i * step, 0.6, 0.6) * (SDX_TRAIN_STEPS - 1));
        if (t != last) sdx__sigma_push(l, ms->sigmas[(int)t]);
        last = t;
    }
    sdx__sigma_push(l, 0.0f);
}

/* Align Your Steps levels (NVIDIA, published for 10 steps). */
static const double sdx__ays_sd1[11] = {
    14.6146412293, 6.4745760956, 3.8636745985, 2.6946151520, 1.8841921177, 1.3943805092,
    0.9642583904, 0.6523686016, 0.3977456272, 0.1515232662, 0.0291671582
};
static const double sdx__ays_sdxl[11] = {
    14.6146412293, 6.3184485287, 3.7681790315, 2.1811480769, 1.3405244945, 0.8620721141,
    0.5550693289, 0.3798540708, 0.2332364134, 0.1114188177, 0.0291671582
};

/* ComfyUI loglinear_interp at output k of count: np.interp of the
 * ascending log levels, knots at j / 10, evaluated at position
 * (count - 1 - k) / (count - 1) of linspace(0, 1, count); then exp. */
static double sdx__ays_interp(const double *levels, int count, int k) {
    int asc = count - 1 - k, j = 0;
    double x, xj;
    if (asc == count - 1) return levels[0];   /* the right end: np.interp returns the last knot */
    x = asc * (1.0 / (count - 1));
    while (j < 9 && (j + 1) * 0.1 <= x) j++;
    xj = j * 0.1;
    return exp((log(levels[9 - j]) - log(levels[10 - j])) / ((j + 1) * 0.1 - xj) * (x - xj) + log(levels[10 - j]));
}

/* AlignYourStepsScheduler: the published 10-step levels, log-linearly
 * resampled for other step counts; the last value is replaced by 0. */
static void sdx__sched_ays(const double *levels, int steps, sdx__sigma_list *l) {
    int count = steps + 1;
    for (int k = 0; k < count - 1; k++)
        sdx__sigma_push(l, (float)(count == 11 ? levels[k] : sdx__ays_interp(levels, count, k)));
    sdx__sigma_push(l, 0.0f);
}

/* Upper bound on a schedule's length, for sizing the list. */
static int sdx__sched_capacity(sdx_scheduler sched, int steps) {
    if (sched == SDX_SCHED_DDIM_UNIFORM) return SDX_TRAIN_STEPS + 2;
    return steps + 2;
}

static int sdx__calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx__sigma_list *l) {
    int rc;
    if ((unsigned)sched >= SDX_SCHED_COUNT)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: scheduler id %d out of range", (int)sched);
    if (steps < 1 || steps > 100000)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: steps must be in 1..100000, got %d", steps);
    if ((rc = sdx__sigma_list_init(ctx, l, sdx__sched_capacity(sched, steps))) != SDX_OK) return rc;
    switch (sched) {
    case SDX_SCHED_NORMAL:           sdx__sched_normal(ms, steps, 0, l); break;
    case SDX_SCHED_SGM_UNIFORM:      sdx__sched_normal(ms, steps, 1, l); break;
    case SDX_SCHED_KARRAS:           sdx__sched_karras(ms, steps, l); break;
    case SDX_SCHED_EXPONENTIAL:      sdx__sched_exponential(ms, steps, l); break;
    case SDX_SCHED_SIMPLE:           sdx__sched_simple(ms, steps, l); break;
    case SDX_SCHED_DDIM_UNIFORM:     sdx__sched_ddim_uniform(ms, steps, l); break;
    case SDX_SCHED_BETA:             sdx__sched_beta(ms, steps, l); break;
    case SDX_SCHED_LINEAR_QUADRATIC: sdx__sched_linear_quadratic(ms, steps, l); break;
    case SDX_SCHED_KL_OPTIMAL:       sdx__sched_kl_optimal(ms, steps, l); break;
    case SDX_SCHED_AYS_SD1:          sdx__sched_ays(sdx__ays_sd1, steps, l); break;
    case SDX_SCHED_AYS_SDXL:         sdx__sched_ays(sdx__ays_sdxl, steps, l); break;
    case SDX_SCHED_POLYEXPONENTIAL:  sdx__sched_polyexponential(ms, steps, l); break;
    case SDX_SCHED_VP:               sdx__sched_vp(steps, l); break;
    default: break;
    }
    return SDX_OK;
}

/* Moves values [first, first + count) of a list into a new 1-D tensor. */
static int sdx__sigma_list_to_tensor(sdx_ctx *ctx, sdx__sigma_list *l, int first, int count, sdx_tensor *out) {
    int64_t shape[1];
    int rc;
    shape[0] = count;
    rc = sdx_tensor_alloc(ctx, out, SDX_F32, 1, shape);
    if (rc == SDX_OK) memcpy(out->data, l->v + first, (size_t)count * sizeof(float));
    sdx__free(ctx, l->v);
    l->v = NULL;
    return rc;
}

SDX_API int sdx_calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx_tensor *out) {
    sdx__sigma_list l;
    int rc;
    if (!ms || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: NULL argument");
    memset(out, 0, sizeof *out);
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, steps, &l)) != SDX_OK) return rc;
    return sdx__sigma_list_to_tensor(ctx, &l, 0, l.count, out);
}

static int sdx__discards_penultimate(sdx_sampler s) {
    return s == SDX_SAMPLER_DPM_2 || s == SDX_SAMPLER_DPM_2_ANCESTRAL ||
           s == SDX_SAMPLER_UNI_PC || s == SDX_SAMPLER_UNI_PC_BH2;
}

SDX_API int sdx_sampler_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                               sdx_sampler sampler, int steps, double denoise, sdx_tensor *out) {
    sdx__sigma_list l;
    int rc, total = steps, keep;
    if (!ms || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: NULL argument");
    memset(out, 0, sizeof *out);
    if (!(denoise > 0.0 && denoise <= 1.0))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: denoise must be in (0, 1], got %g", denoise);
    if ((unsigned)sampler >= SDX_SAMPLER_COUNT)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: sampler id %d out of range", (int)sampler);
    if (sched == SDX_SCHED_AYS_SD1 || sched == SDX_SCHED_AYS_SDXL) {
        /* AlignYourStepsScheduler: round(steps * denoise) steps, Python
         * round-half-even. */
        keep = denoise < 1.0 ? (int)nearbyint(steps * denoise) : steps;
        if (keep < 1)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "ays: %d steps at denoise %g leave no step", steps, denoise);
        if ((rc = sdx__calculate_sigmas(ctx, ms, sched, steps, &l)) != SDX_OK) return rc;
        return sdx__sigma_list_to_tensor(ctx, &l, l.count - (keep + 1), keep + 1, out);
    }
    if (denoise <= 0.9999) {
        double t = steps / denoise;
        if (t > 100000.0)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: %d steps at denoise %g is too many",
                             steps, denoise);
        total = (int)t;
    }
    if (sdx__discards_penultimate(sampler)) total++;
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, total, &l)) != SDX_OK) return rc;
    if (sdx__discards_penultimate(sampler) && l.count >= 2) {
        l.v[l.count - 2] = l.v[l.count - 1];
        l.count--;
    }
    keep = denoise <= 0.9999 && l.count > steps + 1 ? steps + 1 : l.count;
    return sdx__sigma_list_to_tensor(ctx, &l, l.count - keep, keep, out);
}

/* ---- samplers: names and plumbing ------------------------------------ */

static const char *const sdx__sampler_names[SDX_SAMPLER_COUNT] = {
    "euler", "euler_ancestral", "heun", "heunpp2", "dpm_2", "dpm_2_ancestral", "lms",
    "dpmpp_2s_ancestral", "dpmpp_sde", "dpmpp_2m", "dpmpp_2m_sde", "dpmpp_2m_sde_heun",
    "dpmpp_3m_sde", "ddpm", "lcm", "ipndm", "ipndm_v", "deis", "res_multistep",
    "res_multistep_ancestral", "gradient_estimation", "er_sde", "uni_pc", "uni_pc_bh2", "ddim"
};

/* stable-diffusion.cpp names with the same algorithm. Not aliased:
 * dpm++2mv2 (a modified 2M step ComfyUI lacks), ddim_trailing and tcd
 * (they step on integer timesteps of alphas_cumprod, and tcd re-noises
 * with its own gamma). */
static const struct { const char *alias; sdx_sampler sampler; } sdx__sampler_aliases[] = {
    { "euler_a", SDX_SAMPLER_EULER_ANCESTRAL },
    { "dpm2", SDX_SAMPLER_DPM_2 },
    { "dpm++2s_a", SDX_SAMPLER_DPMPP_2S_ANCESTRAL },
    { "dpm++2m", SDX_SAMPLER_DPMPP_2M },
};

SDX_API const char *sdx_sampler_name(sdx_sampler s) {
    return (unsigned)s < SDX_SAMPLER_COUNT ? sdx__sampler_names[s] : "?";
}

SDX_API int sdx_sampler_from_name(sdx_ctx *ctx, const char *name, sdx_sampler *out) {
    char list[768];
    size_t used = 0;
    for (int i = 0; name && i < SDX_SAMPLER_COUNT; i++)
        if (!strcmp(name, sdx__sampler_names[i])) { *out = (sdx_sampler)i; return SDX_OK; }
    for (int i = 0; name && i < SDX__ARRAY_LEN(sdx__sampler_aliases); i++)
        if (!strcmp(name, sdx__sampler_aliases[i].alias)) { *out = sdx__sampler_aliases[i].sampler; return SDX_OK; }
    list[0] = 0;
    for (int i = 0; i < SDX_SAMPLER_COUNT && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, i ? ", %s" : "%s", sdx__sampler_names[i]);
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__sampler_aliases) && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, i ? ", %s" : "; aliases: %s",
                                 sdx__sampler_aliases[i].alias);
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "unknown sampler '%s'; valid: %s", name ? name : "(null)", list);
}

SDX_API int sdx_sampler_is_stochastic(sdx_sampler s) {
    switch (s) {
    case SDX_SAMPLER_EULER_ANCESTRAL: case SDX_SAMPLER_DPM_2_ANCESTRAL: case SDX_SAMPLER_DPMPP_2S_ANCESTRAL:
    case SDX_SAMPLER_DPMPP_SDE: case SDX_SAMPLER_DPMPP_2M_SDE: case SDX_SAMPLER_DPMPP_2M_SDE_HEUN:
    case SDX_SAMPLER_DPMPP_3M_SDE: case SDX_SAMPLER_DDPM: case SDX_SAMPLER_LCM:
    case SDX_SAMPLER_RES_MULTISTEP_ANCESTRAL: case SDX_SAMPLER_ER_SDE:
        return 1;
    default:
        return 0;
    }
}

#define SDX__SAMPLER_BUFS 9     /* latent-sized temporaries; UniPC uses all nine */

/* One sampler run: the caller's description plus float32 temporaries of
 * the latent's size. */
typedef struct sdx__run {
    sdx_ctx *ctx;
    const sdx_sample_desc *d;
    const float *sig;
    int steps;
    size_t n;
    float *buf[SDX__SAMPLER_BUFS];
} sdx__run;

static int sdx__callback_rc(sdx__run *r, const char *what, int rc) {
    if (rc == SDX_OK || rc < 0) return rc;
    return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG, "%s: %s callback returned %d (expected 0 or a negative sdx_result)",
                     sdx_sampler_name(r->d->sampler), what, rc);
}

static int sdx__model(sdx__run *r, const float *x, float sigma, float *denoised) {
    return sdx__callback_rc(r, "denoise", r->d->denoise(r->d->denoise_user, x, sigma, denoised));
}

static int sdx__draw(sdx__run *r, float *out) {
    return sdx__callback_rc(r, "noise", r->d->noise(r->d->noise_user, out));
}

static int sdx__report(sdx__run *r, int i, const float *x, const float *denoised) {
    if (!r->d->step || !r->d->step(r->d->step_user, i, r->steps, x, denoised)) return SDX_OK;
    return sdx__fail(r->ctx, SDX_ERR_CANCELLED, "%s: cancelled by the step callback after step %d of %d",
                     sdx_sampler_name(r->d->sampler), i + 1, r->steps);
}

/* k-diffusion get_ancestral_step, on float32 scalars. */
static void sdx__ancestral_step(float from, float to, float eta, float *down, float *up) {
    float u;
    if (eta == 0.0f) { *down = to; *up = 0.0f; return; }
    u = eta * sqrtf(to * to * (from * from - to * to) / (from * from));
    *up = to < u ? to : u;
    *down = sqrtf(to * to - *up * *up);
}

/* x += noise * scale (one per-step draw); `nz` is scratch. */
static int sdx__add_step_noise(sdx__run *r, float *x, float *nz, float scale) {
    int rc;
    if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) x[k] = x[k] + nz[k] * scale;
    return SDX_OK;
}

/* ---- Karras-ODE samplers: euler, heun, heunpp2, dpm_2, lms ------------ */

/* ComfyUI's euler (and ddim, which is euler for txt2img). */
static int sdx__sample_euler(sdx__run *r, float *x) {
    float *den = r->buf[0];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], dt = r->sig[i + 1] - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * dt;
    }
    return SDX_OK;
}

static int sdx__sample_euler_ancestral(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], down, up;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, r->sig[i + 1], 1.0f, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (down == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
            continue;
        }
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * (down - s);
        if ((rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* d = (x - denoised) / sigma for a whole latent. */
static void sdx__to_d(float *d, const float *x, const float *den, float sigma, size_t n) {
    for (size_t k = 0; k < n; k++) d[k] = (x[k] - den[k]) / sigma;
}

/* x2 = x + d * dt */
static void sdx__euler_to(float *x2, const float *x, const float *d, float dt, size_t n) {
    for (size_t k = 0; k < n; k++) x2[k] = x[k] + d[k] * dt;
}

static int sdx__sample_heun(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1], *x2 = r->buf[2], *den2 = r->buf[3];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) { sdx__euler_to(x, x, d, dt, r->n); continue; }
        sdx__euler_to(x2, x, d, dt, r->n);
        if ((rc = sdx__model(r, x2, s1, den2)) != SDX_OK) return rc;
        for (size_t k = 0; k < r->n; k++) {
            float d2 = (x2[k] - den2[k]) / s1;
            x[k] = x[k] + (d[k] + d2) / 2.0f * dt;
        }
    }
    return SDX_OK;
}

/* heunpp2: Heun++ (three evaluations) while two more sigmas remain, then
 * a weighted Heun step, then Euler into the final sigma. */
static int sdx__sample_heunpp2(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1], *x2 = r->buf[2], *den2 = r->buf[3], *d2 = r->buf[4];
    float *x3 = r->buf[5], *den3 = r->buf[6];
    float s_end = r->sig[r->steps];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == s_end) { sdx__euler_to(x, x, d, dt, r->n); continue; }
        sdx__euler_to(x2, x, d, dt, r->n);
        if ((rc = sdx__model(r, x2, s1, den2)) != SDX_OK) return rc;
        sdx__to_d(d2, x2, den2, s1, r->n);
        if (r->sig[i + 2] == s_end) {
            float w2 = s1 / (2.0f * r->sig[0]), w1 = 1.0f - w2;
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (d[k] * w1 + d2[k] * w2) * dt;
        } else {
            float s2 = r->sig[i + 2], w = 3.0f * r->sig[0];
            float w2 = s1 / w, w3 = s2 / w, w1 = 1.0f - w2 - w3;
            sdx__euler_to(x3, x2, d2, s2 - s1, r->n);
            if ((rc = sdx__model(r, x3, s2, den3)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) {
                float d3 = (x3[k] - den3[k]) / s2;
                x[k] = x[k] + (w1 * d[k] + w2 * d2[k] + w3 * d3) * dt;
            }
        }
    }
    return SDX_OK;
}

/* exp(lerp(log a, log b, 0.5)) as torch.lerp computes it at weight 0.5. */
static float sdx__log_midpoint(float a, float b) {
    float la = logf(a), lb = logf(b);
    return expf(lb - (lb - la) * 0.5f);
}

/* One DPM-Solver-2 step from sigma s to sigma `to` through their
 * log-midpoint; d holds (x - denoised) / s. */
static int sdx__dpm2_step(sdx__run *r, float *x, const float *d, float s, float to) {
    float *x2 = r->buf[2], *den2 = r->buf[3];
    float mid = sdx__log_midpoint(s, to);
    int rc;
    sdx__euler_to(x2, x, d, mid - s, r->n);
    if ((rc = sdx__model(r, x2, mid, den2)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x2[k] - den2[k]) / mid * (to - s);
    return SDX_OK;
}

static int sdx__sample_dpm_2(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) sdx__euler_to(x, x, d, s1 - s, r->n);
        else if ((rc = sdx__dpm2_step(r, x, d, s, s1)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

static int sdx__sample_dpm_2_ancestral(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1], *nz = r->buf[4];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], down, up;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, r->sig[i + 1], 1.0f, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if (down == 0.0f) { sdx__euler_to(x, x, d, down - s, r->n); continue; }
        if ((rc = sdx__dpm2_step(r, x, d, s, down)) != SDX_OK) return rc;
        if ((rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* Integral over [t[i], t[i+1]] of the Lagrange basis polynomial j through
 * t[i], t[i-1], ..., t[i-order+1]. The integrand has degree <= 3, so
 * 3-point Gauss-Legendre is exact (scipy's quad is exact to rounding). */
static double sdx__lms_coeff(int order, const float *t, int i, int j) {
    static const double node[3] = { -0.7745966692414834, 0.0, 0.7745966692414834 };
    static const double weight[3] = { 5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0 };
    double a = t[i], b = t[i + 1], sum = 0.0;
    for (int q = 0; q < 3; q++) {
        double tau = 0.5 * (a + b) + 0.5 * (b - a) * node[q], prod = 1.0;
        for (int k = 0; k < order; k++) {
            if (k == j) continue;
            prod *= (tau - t[i - k]) / ((double)t[i - j] - t[i - k]);
        }
        sum += weight[q] * prod;
    }
    return 0.5 * (b - a) * sum;
}

/* Linear multistep, order 4; ComfyUI jumps to the denoised value on the
 * step into sigma 0 (k-diffusion would take an LMS step there). */
static int sdx__sample_lms(sdx__run *r, float *x) {
    enum { ORDER = 4 };
    float *den = r->buf[0], *ds[ORDER];
    int rc, have = 0;
    for (int j = 0; j < ORDER; j++) ds[j] = r->buf[1 + j];
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], coeff[ORDER];
        float *d = ds[ORDER - 1];
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        /* ds[0] is the newest derivative: rotate the oldest buffer to the front */
        for (int j = ORDER - 1; j > 0; j--) ds[j] = ds[j - 1];
        ds[0] = d;
        sdx__to_d(d, x, den, s, r->n);
        if (have < ORDER) have++;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (r->sig[i + 1] == 0.0f) { memcpy(x, den, r->n * sizeof(float)); continue; }
        for (int j = 0; j < have; j++) coeff[j] = (float)sdx__lms_coeff(have, r->sig, i, j);
        for (size_t k = 0; k < r->n; k++) {
            float acc = coeff[0] * ds[0][k];
            for (int j = 1; j < have; j++) acc = acc + coeff[j] * ds[j][k];
            x[k] = x[k] + acc;
        }
    }
    return SDX_OK;
}

/* ---- DPM-Solver++ family (half-logSNR lambda = -log sigma) ------------ */

static int sdx__sample_dpmpp_2s_ancestral(sdx__run *r, float *x) {
    float *den = r->buf[0], *x2 = r->buf[1], *den2 = r->buf[2], *nz = r->buf[3];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], down, up;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, s1, 1.0f, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (down == 0.0f) {
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * (down - s);
        } else {
            float t = -logf(s), t_next = -logf(down), h = t_next - t, t_mid = t + 0.5f * h;
            float sigma_mid = expf(-t_mid), sigma_t = expf(-t);
            float a = sigma_mid / sigma_t, b = expm1f(-h * 0.5f);
            float a2 = expf(-t_next) / sigma_t, b2 = expm1f(-h);
            for (size_t k = 0; k < r->n; k++) x2[k] = a * x[k] - b * den[k];
            if ((rc = sdx__model(r, x2, sigma_mid, den2)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = a2 * x[k] - b2 * den2[k];
        }
        if (s1 > 0.0f && (rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* One dpmpp_sde half step from sigma_s to sigma_to: an ancestral split
 * of the step, the exponential-integrator update towards sigma_down, then
 * alpha_to * noise * sigma_up (alpha = sigma * e^lambda, 1 up to rounding). */
static int sdx__dpmpp_sde_substep(sdx__run *r, float *dst, const float *x, const float *den, float sigma_s,
                                  float sigma_to, float lambda_to, float *nz) {
    float lambda_s = -logf(sigma_s);
    float alpha_s = sigma_s * expf(lambda_s), alpha_to = sigma_to * expf(lambda_to);
    float down, up, h_, a, b;
    int rc;
    sdx__ancestral_step(expf(-lambda_s), expf(-lambda_to), 1.0f, &down, &up);
    h_ = -logf(down) - lambda_s;
    a = alpha_to / alpha_s * expf(-h_);
    b = alpha_to * expm1f(-h_);
    for (size_t k = 0; k < r->n; k++) dst[k] = a * x[k] - b * den[k];
    if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) dst[k] = dst[k] + alpha_to * nz[k] * up;
    return SDX_OK;
}

/* DPM-Solver++ SDE, r = 1/2: the second evaluation (at the lambda
 * midpoint) alone drives the full step, since (1 - 1/(2r)) = 0. */
static int sdx__sample_dpmpp_sde(sdx__run *r, float *x) {
    float *den = r->buf[0], *x2 = r->buf[1], *den2 = r->buf[2], *nz = r->buf[3];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        float lambda_s, lambda_t, lambda_mid, sigma_mid;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) { memcpy(x, den, r->n * sizeof(float)); continue; }
        lambda_s = -logf(s);
        lambda_t = -logf(s1);
        lambda_mid = lambda_s + 0.5f * (lambda_t - lambda_s);
        sigma_mid = expf(-lambda_mid);
        if ((rc = sdx__dpmpp_sde_substep(r, x2, x, den, s, sigma_mid, lambda_mid, nz)) != SDX_OK) return rc;
        if ((rc = sdx__model(r, x2, sigma_mid, den2)) != SDX_OK) return rc;
        if ((rc = sdx__dpmpp_sde_substep(r, x, x, den2, s, s1, lambda_t, nz)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

static int sdx__sample_dpmpp_2m(sdx__run *r, float *x) {
    float *den = r->buf[0], *old = r->buf[1];
    int rc, have_old = 0;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        float t = -logf(s), t_next = -logf(s1), h = t_next - t;
        float a = expf(-t_next) / expf(-t), b = expm1f(-h);
        float *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (!have_old || s1 == 0.0f) {
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] - b * den[k];
        } else {
            float h_last = t - -logf(r->sig[i - 1]), ratio = h_last / h;
            float c_new = 1.0f + 1.0f / (2.0f * ratio), c_old = 1.0f / (2.0f * ratio);
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] - b * (c_new * den[k] - c_old * old[k]);
        }
        tmp = old; old = den; den = tmp;
        have_old = 1;
    }
    return SDX_OK;
}

/* Shared by dpmpp_2m_sde (midpoint) and dpmpp_2m_sde_heun, eta = 1. */
static int sdx__sample_dpmpp_2m_sde(sdx__run *r, float *x, int heun) {
    const float eta = 1.0f;
    float *den = r->buf[0], *old = r->buf[1], *nz = r->buf[2];
    float h = 0.0f, h_last = 0.0f;
    int rc, have_old = 0;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            float lambda_s = -logf(s), lambda_t = -logf(s1);
            float h_eta, alpha_t, a, b;
            h = lambda_t - lambda_s;
            h_eta = h * (eta + 1.0f);
            alpha_t = s1 * expf(lambda_t);
            a = s1 / s * expf(-h * eta);
            b = alpha_t * -expm1f(-h_eta);
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] + b * den[k];
            if (have_old) {
                float inv_r = 1.0f / (h_last / h);
                float c = heun ? alpha_t * (-expm1f(-h_eta) / -h_eta + 1.0f) * inv_r
                               : 0.5f * alpha_t * -expm1f(-h_eta) * inv_r;
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + c * (den[k] - old[k]);
            }
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            {
                float amp = sqrtf(-expm1f(-2.0f * h * eta));
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + nz[k] * s1 * amp;
            }
        }
        tmp = old; old = den; den = tmp;
        have_old = 1;
        h_last = h;
    }
    return SDX_OK;
}

static int sdx__sample_dpmpp_3m_sde(sdx__run *r, float *x) {
    const float eta = 1.0f;
    float *den = r->buf[0], *den_1 = r->buf[1], *den_2 = r->buf[2], *nz = r->buf[3];
    float h = 0.0f, h_1 = 0.0f, h_2 = 0.0f;
    int rc, history = 0;   /* how many of h_1, h_2 are set */
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            float lambda_s = -logf(s), lambda_t = -logf(s1), h_eta, alpha_t, a, b, phi_2, amp;
            h = lambda_t - lambda_s;
            h_eta = h * (eta + 1.0f);
            alpha_t = s1 * expf(lambda_t);
            a = s1 / s * expf(-h * eta);
            b = alpha_t * -expm1f(-h_eta);
            phi_2 = expm1f(-h_eta) / h_eta + 1.0f;
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] + b * den[k];
            if (history >= 2) {
                float r0 = h_1 / h, r1 = h_2 / h, phi_3 = phi_2 / h_eta - 0.5f;
                float c2 = alpha_t * phi_2, c3 = alpha_t * phi_3;
                for (size_t k = 0; k < r->n; k++) {
                    float d1_0 = (den[k] - den_1[k]) / r0, d1_1 = (den_1[k] - den_2[k]) / r1;
                    float d1 = d1_0 + (d1_0 - d1_1) * r0 / (r0 + r1), d2 = (d1_0 - d1_1) / (r0 + r1);
                    x[k] = x[k] + c2 * d1 - c3 * d2;
                }
            } else if (history == 1) {
                float c2 = alpha_t * phi_2, r0 = h_1 / h;
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + c2 * ((den[k] - den_1[k]) / r0);
            }
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            amp = sqrtf(-expm1f(-2.0f * h * eta));
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + nz[k] * s1 * amp;
            if (history < 2) history++;
        }
        tmp = den_2; den_2 = den_1; den_1 = den; den = tmp;
        h_2 = h_1;
        h_1 = h;
    }
    return SDX_OK;
}

/* ---- ddpm, lcm -------------------------------------------------------- */

/* DDPM posterior step in the variance-preserving parameterisation. */
static int sdx__sample_ddpm(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        float acp = 1.0f / (s * s + 1.0f), acp_prev = 1.0f / (s1 * s1 + 1.0f), alpha = acp / acp_prev;
        float to_vp = sqrtf(1.0f + s * s), mean_scale = sqrtf(1.0f / alpha);
        float eps_scale = 1.0f - alpha, eps_div = sqrtf(1.0f - acp);
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        for (size_t k = 0; k < r->n; k++) {
            float eps = (x[k] - den[k]) / s;
            x[k] = mean_scale * (x[k] / to_vp - eps_scale * eps / eps_div);
        }
        if (s1 > 0.0f) {
            float var = sqrtf((1.0f - alpha) * (1.0f - acp_prev) / (1.0f - acp));
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + var * nz[k];
        }
        if (s1 != 0.0f) {
            float from_vp = sqrtf(1.0f + s1 * s1);
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] * from_vp;
        }
    }
    return SDX_OK;
}

static int sdx__sample_lcm(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s1 = r->sig[i + 1];
        if ((rc = sdx__model(r, x, r->sig[i], den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 > 0.0f) {
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = nz[k] * s1 + den[k];
        } else {
            memcpy(x, den, r->n * sizeof(float));
        }
    }
    return SDX_OK;
}

/* ---- linear multistep on d = (x - denoised) / sigma: ipndm, deis ------ */

/* History of past derivatives, newest first (at most 3). */
typedef struct sdx__dhist {
    float *d[4];   /* d[0] = current step's derivative; d[1..] history */
    int    count;  /* valid history entries in d[1..] */
} sdx__dhist;

static void sdx__dhist_init(sdx__dhist *hst, sdx__run *r, int first_buf) {
    for (int j = 0; j < 4; j++) hst->d[j] = r->buf[first_buf + j];
    hst->count = 0;
}

/* Makes the current derivative history entry 1 (keeping at most `keep`). */
static void sdx__dhist_push(sdx__dhist *hst, int keep) {
    float *oldest = hst->d[3];
    for (int j = 3; j > 0; j--) hst->d[j] = hst->d[j - 1];
    hst->d[0] = oldest;
    if (hst->count < keep) hst->count++;
}

/* ipndm_v coefficients for the variable step sizes (float32, as torch
 * evaluates them on the sigma tensor). c[0] multiplies the current d. */
static void sdx__ipndm_v_coeffs(const float *t, int i, int order, float c[4]) {
    float hn = t[i + 1] - t[i], hn1 = order > 1 ? t[i] - t[i - 1] : 0.0f;
    float hn2 = order > 2 ? t[i - 1] - t[i - 2] : 0.0f, hn3 = order > 3 ? t[i - 2] - t[i - 3] : 0.0f;
    c[0] = 1.0f; c[1] = c[2] = c[3] = 0.0f;
    if (order == 2) {
        c[0] = (2.0f + hn / hn1) / 2.0f;
        c[1] = -(hn / hn1) / 2.0f;
    } else if (order >= 3) {
        float temp1 = (1.0f - hn / (3.0f * (hn + hn1)) * (hn * (hn + hn1)) / (hn1 * (hn1 + hn2))) / 2.0f;
        if (order == 3) {
            c[0] = (2.0f + hn / hn1) / 2.0f + temp1;
            c[1] = -(hn / hn1) / 2.0f - (1.0f + hn1 / hn2) * temp1;
            c[2] = temp1 * hn1 / hn2;
        } else {
            float q = hn1 * (hn1 + hn2) / (hn2 * (hn2 + hn3));
            float temp2 = ((1.0f - hn / (3.0f * (hn + hn1))) / 2.0f +
                           (1.0f - hn / (2.0f * (hn + hn1))) * hn / (6.0f * (hn + hn1 + hn2))) *
                          (hn * (hn + hn1) * (hn + hn1 + hn2)) / (hn1 * (hn1 + hn2) * (hn1 + hn2 + hn3));
            c[0] = (2.0f + hn / hn1) / 2.0f + temp1 + temp2;
            c[1] = -(hn / hn1) / 2.0f - (1.0f + hn1 / hn2) * temp1 - (1.0f + hn1 / hn2 + q) * temp2;
            c[2] = temp1 * hn1 / hn2 + (hn1 / hn2 + q * (1.0f + hn2 / hn3)) * temp2;
            c[3] = -temp2 * q * hn1 / hn2;
        }
    }
}

/* iPNDM (fixed Adams-Bashforth weights) or iPNDM_v (weights for the
 * actual step sizes); max order 4. */
static int sdx__sample_ipndm(sdx__run *r, float *x, int variable) {
    static const float ab[4][4] = {
        { 1.0f, 0.0f, 0.0f, 0.0f }, { 3.0f, -1.0f, 0.0f, 0.0f },
        { 23.0f, -16.0f, 5.0f, 0.0f }, { 55.0f, -59.0f, 37.0f, -9.0f }
    };
    static const float ab_div[4] = { 1.0f, 2.0f, 12.0f, 24.0f };
    float *den = r->buf[0];
    sdx__dhist hst;
    int rc;
    sdx__dhist_init(&hst, r, 1);
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        int order = i + 1 < 4 ? i + 1 : 4;
        float *d = hst.d[0];
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else if (order == 1) {
            sdx__euler_to(x, x, d, dt, r->n);
        } else if (variable) {
            float c[4];
            sdx__ipndm_v_coeffs(r->sig, i, order, c);
            for (size_t k = 0; k < r->n; k++) {
                float acc = c[0] * d[k];
                for (int j = 1; j < order; j++) acc = acc + c[j] * hst.d[j][k];
                x[k] = x[k] + dt * acc;
            }
        } else {
            const float *w = ab[order - 1];
            for (size_t k = 0; k < r->n; k++) {
                float acc = w[0] * d[k];
                for (int j = 1; j < order; j++) acc = acc + w[j] * hst.d[j][k];
                x[k] = x[k] + dt * acc / ab_div[order - 1];
            }
        }
        sdx__dhist_push(&hst, 3);
    }
    return SDX_OK;
}

/* DEIS 'tab' coefficients: sigmas are mapped to VP-SDE times t with the
 * schedule fitted to EDM's (0.002, 80) range, and each coefficient is the
 * integral of the Lagrange basis times the exponential integrator's
 * weight, by the reference's 10000-point rectangle rule (which is part of
 * the result, so it is reproduced, not replaced by exact quadrature). */
enum { SDX__DEIS_ORDER = 3, SDX__DEIS_POINTS = 10000 };

static void sdx__deis_times(const float *sig, int count, float *t, float *beta_0, float *beta_1) {
    const float eps_s = 1e-3f;
    float log_min = logf(0.002f * 0.002f + 1.0f), log_max = logf(80.0f * 80.0f + 1.0f);
    float beta_d = 2.0f * (log_min / eps_s - log_max) / (float)(1e-3 - 1.0);
    float beta_min = log_max - 0.5f * beta_d;
    for (int i = 0; i < count; i++)
        t[i] = (sqrtf(beta_min * beta_min + 2.0f * beta_d * logf(sig[i] * sig[i] + 1.0f)) - beta_min) / beta_d;
    *beta_0 = beta_min;
    *beta_1 = beta_d + beta_min;
}

static float sdx__deis_integrand(float tau, float beta_0, float beta_1) {
    float alpha = expf(-0.5f * (tau * tau) * (beta_1 - beta_0) - tau * beta_0);
    float g = 1.0f / alpha * alpha;   /* d log(alpha) / d alpha, times d alpha / d exponent */
    float dlog = g * (beta_1 - beta_0) * -0.5f * (2.0f * tau) + -g * beta_0;
    return -0.5f * dlog / sqrtf(alpha * (1.0f - alpha));
}

/* coeff[i][j] for steps i with order >= 2 whose next sigma is > 0. */
static void sdx__deis_coeffs(const float *sig, int steps, const float *t, float beta_0, float beta_1,
                             float (*coeff)[SDX__DEIS_ORDER]) {
    for (int i = 1; i < steps; i++) {
        int order = i + 1 < SDX__DEIS_ORDER ? i + 1 : SDX__DEIS_ORDER;
        float prev[SDX__DEIS_ORDER], dtau = (t[i + 1] - t[i]) / (float)SDX__DEIS_POINTS;
        double sum[SDX__DEIS_ORDER] = { 0.0, 0.0, 0.0 };
        if (!(sig[i + 1] > 0.0f)) continue;
        for (int j = 0; j < order; j++) prev[j] = t[i - j];
        for (int q = 0; q < SDX__DEIS_POINTS; q++) {
            float tau = sdx__linspace_f32(t[i], t[i + 1], SDX__DEIS_POINTS, q);
            float w = sdx__deis_integrand(tau, beta_0, beta_1);
            for (int j = 0; j < order; j++) {
                float poly = 1.0f;
                for (int k = 0; k < order; k++)
                    if (k != j) poly *= (tau - prev[k]) / (prev[j] - prev[k]);
                sum[j] += (double)(w * poly);
            }
        }
        for (int j = 0; j < order; j++) coeff[i][j] = (float)sum[j] * dtau;
    }
}

static int sdx__sample_deis(sdx__run *r, float *x) {
    float *den = r->buf[0], *t = NULL, (*coeff)[SDX__DEIS_ORDER] = NULL, beta_0, beta_1;
    size_t t_bytes = (size_t)(r->steps + 1) * sizeof(float);
    size_t c_bytes = (size_t)r->steps * sizeof *coeff;
    sdx__dhist hst;
    int rc = SDX_OK;
    t = (float *)sdx__malloc(r->ctx, t_bytes);
    coeff = (float (*)[SDX__DEIS_ORDER])sdx__calloc(r->ctx, 1, c_bytes);
    if (!t || !coeff) {
        sdx__free(r->ctx, t);
        sdx__free(r->ctx, coeff);
        return sdx__nomem(r->ctx, "deis coefficients", t_bytes + c_bytes);
    }
    sdx__deis_times(r->sig, r->steps + 1, t, &beta_0, &beta_1);
    sdx__deis_coeffs(r->sig, r->steps, t, beta_0, beta_1, coeff);
    sdx__dhist_init(&hst, r, 1);
    for (int i = 0; i < r->steps && rc == SDX_OK; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], *d = hst.d[0];
        int order = i + 1 < SDX__DEIS_ORDER ? i + 1 : SDX__DEIS_ORDER;
        if (!(s1 > 0.0f)) order = 1;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) break;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) break;
        sdx__to_d(d, x, den, s, r->n);
        if (order == 1) {
            sdx__euler_to(x, x, d, s1 - s, r->n);
        } else {
            for (size_t k = 0; k < r->n; k++) {
                float v = x[k] + coeff[i][0] * d[k];
                for (int j = 1; j < order; j++) v = v + coeff[i][j] * hst.d[j][k];
                x[k] = v;
            }
        }
        sdx__dhist_push(&hst, SDX__DEIS_ORDER - 1);
    }
    sdx__free(r->ctx, t);
    sdx__free(r->ctx, coeff);
    return rc;
}

/* ---- res_multistep, gradient_estimation, er_sde ------------------------ */

/* Second-order multistep exponential integrator (arXiv 2308.02157);
 * eta 0 is res_multistep, eta 1 res_multistep_ancestral. */
static int sdx__sample_res_multistep(sdx__run *r, float *x, float eta) {
    float *den = r->buf[0], *old = r->buf[1], *nz = r->buf[2];
    float old_down = 0.0f;
    int rc, have_old = 0;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], down, up, *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, s1, eta, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (down == 0.0f || !have_old) {
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * (down - s);
        } else {
            float t = -logf(s), t_old = -logf(old_down), t_next = -logf(down), t_prev = -logf(r->sig[i - 1]);
            float h = t_next - t, c2 = (t_prev - t_old) / h;
            float phi1 = expm1f(-h) / -h, phi2 = (phi1 - 1.0f) / -h;
            float b1 = phi1 - phi2 / c2, b2 = phi2 / c2, decay = expf(-h);
            if (b1 != b1) b1 = 0.0f;   /* torch.nan_to_num */
            if (b2 != b2) b2 = 0.0f;
            for (size_t k = 0; k < r->n; k++) x[k] = decay * x[k] + h * (b1 * den[k] + b2 * old[k]);
        }
        /* ComfyUI draws here even when sigma_up is 0 (eta 0) and multiplies
         * the draw by 0; the stream is private to this run, so skip it. */
        if (s1 > 0.0f && up != 0.0f && (rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
        tmp = old; old = den; den = tmp;
        have_old = 1;
        old_down = down;
    }
    return SDX_OK;
}

/* Euler plus (gamma - 1) times the change of d between steps, gamma = 2. */
static int sdx__sample_gradient_estimation(sdx__run *r, float *x) {
    const float ge_gamma = 2.0f;
    float *den = r->buf[0], *d = r->buf[1], *old_d = r->buf[2], *tmp;
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            sdx__euler_to(x, x, d, dt, r->n);
            if (i >= 1)
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (ge_gamma - 1.0f) * (d[k] - old_d[k]) * dt;
        }
        tmp = old_d; old_d = d; d = tmp;
    }
    return SDX_OK;
}

/* ER-SDE-Solver-3 (arXiv 2309.06169) with the default noise scaler
 * x * (e^(x^0.3) + 10) and 200-point rectangle sums, as ComfyUI. */
static float sdx__er_scaler(float v) { return v * (expf(powf(v, 0.3f)) + 10.0f); }

static void sdx__er_sums(float lam_s, float lam_t, float *s1_out, float *s2_out) {
    const int points = 200;
    float dt = lam_t - lam_s, step = -dt / 200.0f;
    double sum1 = 0.0, sum2 = 0.0;
    for (int q = 0; q < points; q++) {
        float pos = lam_t + (float)q * step, scaled = sdx__er_scaler(pos);
        sum1 += (double)(1.0f / scaled);
        sum2 += (double)((pos - lam_s) / scaled);
    }
    *s1_out = (float)sum1 * step;
    *s2_out = (float)sum2 * step;
}

static float sdx__er_lambda(float sigma) { return expf(-(-logf(sigma))); }

static int sdx__sample_er_sde(sdx__run *r, float *x) {
    enum { MAX_STAGE = 3 };
    float *den = r->buf[0], *old = r->buf[1], *dd = r->buf[2], *old_dd = r->buf[3], *nz = r->buf[4], *tmp;
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        int stage = i + 1 < MAX_STAGE ? i + 1 : MAX_STAGE;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            float lam_s = sdx__er_lambda(s), lam_t = sdx__er_lambda(s1);
            float alpha_s = s / lam_s, alpha_t = s1 / lam_t, r_alpha = alpha_t / alpha_s;
            float ratio = sdx__er_scaler(lam_t) / sdx__er_scaler(lam_s);
            float a = r_alpha * ratio, b = alpha_t * (1.0f - ratio), amp;
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] + b * den[k];
            if (stage >= 2) {
                float dt = lam_t - lam_s, sum1, sum2, lam_prev = sdx__er_lambda(r->sig[i - 1]);
                float c2, inv;
                sdx__er_sums(lam_s, lam_t, &sum1, &sum2);
                c2 = alpha_t * (dt + sum1 * sdx__er_scaler(lam_t));
                inv = lam_s - lam_prev;
                for (size_t k = 0; k < r->n; k++) {
                    dd[k] = (den[k] - old[k]) / inv;
                    x[k] = x[k] + c2 * dd[k];
                }
                if (stage >= 3) {
                    float half = (lam_s - sdx__er_lambda(r->sig[i - 2])) / 2.0f;
                    float c3 = alpha_t * (dt * dt / 2.0f + sum2 * sdx__er_scaler(lam_t));
                    for (size_t k = 0; k < r->n; k++) x[k] = x[k] + c3 * ((dd[k] - old_dd[k]) / half);
                }
                tmp = old_dd; old_dd = dd; dd = tmp;
            }
            amp = sqrtf(lam_t * lam_t - lam_s * lam_s * (ratio * ratio));
            if (amp != amp) amp = 0.0f;
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + alpha_t * nz[k] * amp;
        }
        tmp = old; old = den; den = tmp;
    }
    return SDX_OK;
}

/* ---- UniPC (bh1 / bh2), ComfyUI's multistep variant -------------------- */
/* UniPC works on the VP state x / sqrt(1 + sigma^2) with data prediction;
 * the model sees x scaled back to sigma space. Orders are
 * min(3, steps - 1), lowered on the last steps; the final step into the
 * last sigma (0 replaced by 0.001) runs the predictor only. */

typedef struct sdx__vp { float log_alpha, alpha, std, lambda; } sdx__vp;

static sdx__vp sdx__vp_of(float sigma) {
    sdx__vp v;
    float e2;
    v.log_alpha = 0.5f * logf(1.0f / (sigma * sigma + 1.0f));
    v.alpha = expf(v.log_alpha);
    e2 = expf(2.0f * v.log_alpha);
    v.std = sqrtf(1.0f - e2);
    v.lambda = v.log_alpha - 0.5f * logf(1.0f - e2);
    return v;
}

/* Solves a (n <= 3) dense system by Gaussian elimination with partial
 * pivoting, in double (torch.linalg.solve; the system is tiny). */
static void sdx__solve_small(int n, double a[3][3], double *b, float *out) {
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int i = c + 1; i < n; i++) if (fabs(a[i][c]) > fabs(a[p][c])) p = i;
        for (int j = 0; j < n; j++) { double t = a[c][j]; a[c][j] = a[p][j]; a[p][j] = t; }
        { double t = b[c]; b[c] = b[p]; b[p] = t; }
        for (int i = c + 1; i < n; i++) {
            double f = a[i][c] / a[c][c];
            for (int j = c; j < n; j++) a[i][j] -= f * a[c][j];
            b[i] -= f * b[c];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = b[i];
        for (int j = i + 1; j < n; j++) v -= a[i][j] * out[j];
        out[i] = (float)(v / a[i][i]);
    }
}

typedef struct sdx__unipc {
    sdx__run *r;
    int bh2;
    int order;
    int len;             /* entries in the history */
    float t_prev[3];
    float *model_prev[3];
    float *pool[4];      /* model outputs live here; history points into it */
    float *x_pred, *d1[2], *scaled, *den;
} sdx__unipc;

/* Data prediction x0 at VP state x and sigma. */
static int sdx__unipc_model(sdx__unipc *u, const float *x, float sigma, float *x0) {
    sdx__run *r = u->r;
    sdx__vp v = sdx__vp_of(sigma);
    float up = sqrtf(sigma * sigma + 1.0f);
    int rc;
    for (size_t k = 0; k < r->n; k++) u->scaled[k] = x[k] * up;
    if ((rc = sdx__model(r, u->scaled, sigma, u->den)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) {
        float eps = (u->scaled[k] - u->den[k]) / sigma;
        x0[k] = (x[k] - v.std * eps) / v.alpha;
    }
    return SDX_OK;
}

/* A pool buffer no history entry points to. */
static float *sdx__unipc_free_buf(sdx__unipc *u) {
    for (int b = 0; b < 4; b++) {
        int used = 0;
        for (int j = 0; j < u->len; j++) used |= u->model_prev[j] == u->pool[b];
        if (!used) return u->pool[b];
    }
    SDX_ASSERT(0);
    return u->pool[0];
}

/* The B(h) coefficient vectors: rhos_p (predictor, order - 1 values) and
 * rhos_c (corrector, order values). */
static void sdx__unipc_rhos(const float *rks, int order, float hh, float b_h, float *rhos_p, float *rhos_c) {
    double rmat[3][3], rhs[3], sub[3][3], sub_rhs[3];
    float h_phi_k = expm1f(hh) / hh - 1.0f;
    int factorial = 1;
    for (int i = 1; i <= order; i++) {
        for (int c = 0; c < order; c++) {
            float p = 1.0f;
            for (int e = 0; e < i - 1; e++) p *= rks[c];
            rmat[i - 1][c] = p;
        }
        rhs[i - 1] = (double)(h_phi_k * (float)factorial / b_h);
        factorial *= i + 1;
        h_phi_k = h_phi_k / hh - (float)(1.0 / factorial);
    }
    if (order == 2) rhos_p[0] = 0.5f;
    else if (order > 2) {
        for (int i = 0; i < order - 1; i++) {
            for (int j = 0; j < order - 1; j++) sub[i][j] = rmat[i][j];
            sub_rhs[i] = rhs[i];
        }
        sdx__solve_small(order - 1, sub, sub_rhs, rhos_p);
    }
    if (order == 1) rhos_c[0] = 0.5f;
    else sdx__solve_small(order, rmat, rhs, rhos_c);
}

/* One multistep update of the VP state x to sigma t; with the corrector,
 * *model_out receives the model's x0 at the new point. */
static int sdx__unipc_update(sdx__unipc *u, float *x, float t, int order, int corrector, float **model_out) {
    sdx__run *r = u->r;
    sdx__vp v0 = sdx__vp_of(u->t_prev[u->len - 1]), vt = sdx__vp_of(t);
    const float *m0 = u->model_prev[u->len - 1];
    float h = vt.lambda - v0.lambda, hh = -h, rks[3] = { 0 }, rhos_p[3] = { 0 }, rhos_c[3] = { 0 };
    float b_h = u->bh2 ? expm1f(hh) : hh, h_phi_1 = expm1f(hh);
    float a = vt.std / v0.std, b = vt.alpha * h_phi_1, c = vt.alpha * b_h;
    int rc;
    for (int i = 1; i < order; i++) {
        const float *mi = u->model_prev[u->len - 1 - i];
        float rk = (sdx__vp_of(u->t_prev[u->len - 1 - i]).lambda - v0.lambda) / h;
        rks[i - 1] = rk;
        for (size_t k = 0; k < r->n; k++) u->d1[i - 1][k] = (mi[k] - m0[k]) / rk;
    }
    rks[order - 1] = 1.0f;
    sdx__unipc_rhos(rks, order, hh, b_h, rhos_p, rhos_c);
    /* x_pred holds x_t_ (the first-order part); x becomes the predictor */
    for (size_t k = 0; k < r->n; k++) {
        float base = a * x[k] - b * m0[k], res = 0.0f;
        if (order >= 2) res = rhos_p[0] * u->d1[0][k];
        if (order >= 3) res = res + rhos_p[1] * u->d1[1][k];
        u->x_pred[k] = base;
        x[k] = order >= 2 ? base - c * res : base;
    }
    *model_out = NULL;
    if (!corrector) return SDX_OK;
    *model_out = sdx__unipc_free_buf(u);
    if ((rc = sdx__unipc_model(u, x, t, *model_out)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) {
        float corr = 0.0f;
        if (order >= 2) corr = rhos_c[0] * u->d1[0][k];
        if (order >= 3) corr = corr + rhos_c[1] * u->d1[1][k];
        x[k] = u->x_pred[k] - c * (corr + rhos_c[order - 1] * ((*model_out)[k] - m0[k]));
    }
    return SDX_OK;
}

/* The steady-state step (and the extra final step) of UniPC.sample. */
static int sdx__unipc_shift_step(sdx__unipc *u, float *x, const float *ts, int step) {
    int steps = u->r->steps, rc;
    int step_order = u->order < steps + 1 - step ? u->order : steps + 1 - step;
    float *model_x;
    if ((rc = sdx__unipc_update(u, x, ts[step], step_order, step != steps, &model_x)) != SDX_OK) return rc;
    for (int i = 0; i < u->order - 1; i++) {
        u->t_prev[i] = u->t_prev[i + 1];
        u->model_prev[i] = u->model_prev[i + 1];
    }
    u->t_prev[u->order - 1] = ts[step];
    if (step < steps) u->model_prev[u->order - 1] = model_x;
    return SDX_OK;
}

static int sdx__sample_unipc(sdx__run *r, float *x, int bh2) {
    sdx__unipc u;
    float *tsv = NULL;
    int steps = r->steps, rc = SDX_OK;
    size_t ts_bytes = (size_t)(steps + 1) * sizeof(float);
    memset(&u, 0, sizeof u);
    u.r = r;
    u.bh2 = bh2;
    u.order = steps - 1 < 3 ? steps - 1 : 3;
    if (u.order < 1) u.order = 1;   /* 1 step: ComfyUI would not step at all */
    for (int b = 0; b < 4; b++) u.pool[b] = r->buf[b];
    u.x_pred = r->buf[4]; u.d1[0] = r->buf[5]; u.d1[1] = r->buf[6]; u.scaled = r->buf[7]; u.den = r->buf[8];
    tsv = (float *)sdx__malloc(r->ctx, ts_bytes);
    if (!tsv) return sdx__nomem(r->ctx, "uni_pc timesteps", ts_bytes);
    memcpy(tsv, r->sig, ts_bytes);
    if (tsv[steps] == 0.0f) tsv[steps] = 0.001f;
    {
        float scale = sqrtf(1.0f + tsv[0] * tsv[0]);
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] / scale;
    }
    for (int i = 0; i < steps && rc == SDX_OK; i++) {
        if (i == 0) {
            u.model_prev[0] = u.pool[0];
            u.t_prev[0] = tsv[0];
            u.len = 1;
            rc = sdx__unipc_model(&u, x, tsv[0], u.pool[0]);
            if (rc == SDX_OK && steps == 1) {
                float *unused;
                rc = sdx__unipc_update(&u, x, tsv[1], 1, 0, &unused);
            }
        } else if (i < u.order) {
            float *model_x;
            rc = sdx__unipc_update(&u, x, tsv[i], i, 1, &model_x);
            if (rc == SDX_OK) {
                u.model_prev[u.len] = model_x;
                u.t_prev[u.len] = tsv[i];
                u.len++;
            }
        } else {
            rc = sdx__unipc_shift_step(&u, x, tsv, i);
            if (rc == SDX_OK && i == steps - 1) rc = sdx__unipc_shift_step(&u, x, tsv, steps);
        }
        if (rc == SDX_OK) rc = sdx__report(r, i, x, u.model_prev[u.len - 1]);
    }
    if (rc == SDX_OK) {
        float alpha = sdx__vp_of(tsv[steps]).alpha;
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] / alpha;
    }
    sdx__free(r->ctx, tsv);
    return rc;
}

/* ---- driver ----------------------------------------------------------- */

static int sdx__dispatch(sdx__run *r, float *x) {
    switch (r->d->sampler) {
    case SDX_SAMPLER_EULER: case SDX_SAMPLER_DDIM: return sdx__sample_euler(r, x);
    case SDX_SAMPLER_EULER_ANCESTRAL:         return sdx__sample_euler_ancestral(r, x);
    case SDX_SAMPLER_HEUN:                    return sdx__sample_heun(r, x);
    case SDX_SAMPLER_HEUNPP2:                 return sdx__sample_heunpp2(r, x);
    case SDX_SAMPLER_DPM_2:                   return sdx__sample_dpm_2(r, x);
    case SDX_SAMPLER_DPM_2_ANCESTRAL:         return sdx__sample_dpm_2_ancestral(r, x);
    case SDX_SAMPLER_LMS:                     return sdx__sample_lms(r, x);
    case SDX_SAMPLER_DPMPP_2S_ANCESTRAL:      return sdx__sample_dpmpp_2s_ancestral(r, x);
    case SDX_SAMPLER_DPMPP_SDE:               return sdx__sample_dpmpp_sde(r, x);
    case SDX_SAMPLER_DPMPP_2M:                return sdx__sample_dpmpp_2m(r, x);
    case SDX_SAMPLER_DPMPP_2M_SDE:            return sdx__sample_dpmpp_2m_sde(r, x, 0);
    case SDX_SAMPLER_DPMPP_2M_SDE_HEUN:       return sdx__sample_dpmpp_2m_sde(r, x, 1);
    case SDX_SAMPLER_DPMPP_3M_SDE:            return sdx__sample_dpmpp_3m_sde(r, x);
    case SDX_SAMPLER_DDPM:                    return sdx__sample_ddpm(r, x);
    case SDX_SAMPLER_LCM:                     return sdx__sample_lcm(r, x);
    case SDX_SAMPLER_IPNDM:                   return sdx__sample_ipndm(r, x, 0);
    case SDX_SAMPLER_IPNDM_V:                 return sdx__sample_ipndm(r, x, 1);
    case SDX_SAMPLER_DEIS:                    return sdx__sample_deis(r, x);
    case SDX_SAMPLER_RES_MULTISTEP:           return sdx__sample_res_multistep(r, x, 0.0f);
    case SDX_SAMPLER_RES_MULTISTEP_ANCESTRAL: return sdx__sample_res_multistep(r, x, 1.0f);
    case SDX_SAMPLER_GRADIENT_ESTIMATION:     return sdx__sample_gradient_estimation(r, x);
    case SDX_SAMPLER_ER_SDE:                  return sdx__sample_er_sde(r, x);
    case SDX_SAMPLER_UNI_PC:                  return sdx__sample_unipc(r, x, 0);
    case SDX_SAMPLER_UNI_PC_BH2:              return sdx__sample_unipc(r, x, 1);
    default:
        return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG, "sdx_sample: sampler id %d out of range", (int)r->d->sampler);
    }
}

static int sdx__check_sample_desc(sdx_ctx *ctx, const sdx_sample_desc *d, const float *x) {
    const char *name;
    if (!d || !x) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample: desc and x are required");
    if ((unsigned)d->sampler >= SDX_SAMPLER_COUNT)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample: sampler id %d out of range", (int)d->sampler);
    name = sdx_sampler_name(d->sampler);
    if (!d->denoise) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: no denoise callback", name);
    if (!d->noise && sdx_sampler_is_stochastic(d->sampler))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG,
                         "sdx_sample %s: this sampler draws per-step noise but no noise callback was given", name);
    if (!d->sigmas || d->n_sigmas < 1 || d->n == 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: need sigmas (got %d) and a non-empty latent",
                         name, d->n_sigmas);
    for (int i = 0; i < d->n_sigmas; i++) {
        if (!(d->sigmas[i] >= 0.0f) || isinf(d->sigmas[i]))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: sigma %d is %g (must be finite and >= 0)",
                             name, i, (double)d->sigmas[i]);
        if (i + 1 < d->n_sigmas && d->sigmas[i] == 0.0f)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: sigma %d is 0 before the last one", name, i);
        /* equal neighbours are allowed: "simple" repeats sigmas beyond 1000 steps */
        if (i > 0 && d->sigmas[i] > d->sigmas[i - 1])
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: sigmas must not increase, but sigma %d is %g "
                             "after %g", name, i, (double)d->sigmas[i], (double)d->sigmas[i - 1]);
    }
    return SDX_OK;
}

SDX_API int sdx_sample(sdx_ctx *ctx, const sdx_sample_desc *desc, float *x) {
    sdx__run r;
    size_t bytes;
    float *block;
    int rc;
    if ((rc = sdx__check_sample_desc(ctx, desc, x)) != SDX_OK) return rc;
    if (desc->n_sigmas < 2) return SDX_OK;   /* no step: ComfyUI returns the input */
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.d = desc;
    r.sig = desc->sigmas;
    r.steps = desc->n_sigmas - 1;
    r.n = desc->n;
    if (!sdx__mul_size(desc->n, SDX__SAMPLER_BUFS * sizeof(float), &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample: latent of %zu floats is too large", desc->n);
    block = (float *)sdx__malloc(ctx, bytes);
    if (!block) return sdx__nomem(ctx, "sampler temporaries", bytes);
    for (int b = 0; b < SDX__SAMPLER_BUFS; b++) r.buf[b] = block + (size_t)b * desc->n;
    rc = sdx__dispatch(&r, x);
    sdx__free(ctx, block);
    return rc;
}

/* ---- src/pipeline/pipeline.c ---- */

/* ===================================================================== */
/*  Pipeline: model loading, txt2img / img2img / inpainting               */
/* ===================================================================== */
/* Follows ComfyUI's KSampler (docs: shared golden PIPELINE.md): prompt ->
 * chunks -> context; noise from seed; start latent; sampler over a
 * denoiser that batches cond and uncond into one UNet call and applies
 * CFG; latent -> codec (VAE: latent / scale factor; TAESD: as is) ->
 * floor(clamp(x)*255). */

struct sdx_model {
    sdx_ctx       *ctx;
    sdx_st        *ckpt;
    sdx_st        *vae_file;
    sdx_tokenizer *tok;
    sdx__textenc   te;
    sdx__unet      unet;
    sdx__vae       vae;
    sdx_st        *taesd_file[2];
    sdx__taesd     taesd;
    sdx_family     family;
    sdx_prediction prediction;
    sdx_model_sampling ms;
    sdx__arena     arena;
    char           name[128];
    int            loaded_te, loaded_unet, loaded_vae;
};

SDX_API const char *sdx_family_name(sdx_family f) {
    switch (f) {
    case SDX_FAMILY_SD1: return "SD 1.x";
    case SDX_FAMILY_SD2: return "SD 2.x";
    case SDX_FAMILY_SDXL: return "SDXL";
    default: return "unknown";
    }
}

static int sdx__st_has_prefix(const sdx_st *st, const char *prefix) {
    size_t n = strlen(prefix);
    for (int i = 0; i < sdx_st_count(st); i++)
        if (!strncmp(sdx_st_get(st, i)->name, prefix, n)) return 1;
    return 0;
}

static sdx_family sdx__detect_family(const sdx_st *st) {
    if (sdx__st_has_prefix(st, "conditioner.embedders.1.model.")) return SDX_FAMILY_SDXL;
    if (sdx__st_has_prefix(st, "cond_stage_model.model.")) return SDX_FAMILY_SD2;
    if (sdx__st_has_prefix(st, "cond_stage_model.transformer.")) return SDX_FAMILY_SD1;
    return SDX_FAMILY_UNKNOWN;
}

/* v or eps, in order of trust: the caller, the checkpoint's metadata, a
 * "v_pred" marker tensor, then (SD 2.x only) ComfyUI's heuristic: 768-v
 * checkpoints were fine-tuned long enough that the last transformer's
 * norm1 bias spreads wider than the 512 eps base model's (std > 0.09). */
static int sdx__detect_prediction(sdx_model *m, const char *override) {
    const char *meta;
    if (override && *override) {
        if (!strcmp(override, "eps") || !strcmp(override, "epsilon")) { m->prediction = SDX_PRED_EPS; return SDX_OK; }
        if (!strcmp(override, "v") || !strcmp(override, "v_prediction")) { m->prediction = SDX_PRED_V; return SDX_OK; }
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "unknown prediction type '%s' (valid: eps, v)", override);
    }
    m->prediction = SDX_PRED_EPS;
    meta = sdx_st_meta(m->ckpt, "modelspec.prediction_type");
    if (meta) {
        if (strstr(meta, "v")) m->prediction = SDX_PRED_V;
        return SDX_OK;
    }
    if (sdx_st_find(m->ckpt, "v_pred")) { m->prediction = SDX_PRED_V; return SDX_OK; }
    if (m->family == SDX_FAMILY_SD2 && m->unet.in_channels == 4) {
        const sdx_tensor *b = sdx_st_find(m->ckpt, "model.diffusion_model.output_blocks.11.1.transformer_blocks.0.norm1.bias");
        if (b && (b->dtype == SDX_F32 || b->dtype == SDX_F16 || b->dtype == SDX_BF16)) {
            int64_t n = sdx_tensor_numel(b);
            double s = 0, s2 = 0;
            for (int64_t i = 0; i < n; i++) { double v = sdx__get_f32(b, i); s += v; s2 += v * v; }
            if (n > 0 && sqrt(SDX__MAX(0.0, s2 / (double)n - (s / (double)n) * (s / (double)n))) > 0.09) m->prediction = SDX_PRED_V;
        }
    }
    return SDX_OK;
}

static int sdx__file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The vocabulary: explicit path, next to the checkpoint, or $SDX_VOCAB. */
static int sdx__load_vocab(sdx_model *m, const sdx_model_desc *d) {
    static const char *const names[] = { "merges.txt", "bpe_simple_vocab_16e6.txt.gz", "vocab/merges.txt",
                                         "vocab/bpe_simple_vocab_16e6.txt.gz" };
    char path[4096];
    const char *env = getenv("SDX_VOCAB");
    const char *slash;
    if (d->vocab_data) return sdx_tokenizer_load_memory(m->ctx, d->vocab_data, d->vocab_size, &m->tok);
    if (d->vocab) return sdx_tokenizer_load(m->ctx, d->vocab, &m->tok);
    slash = strrchr(d->checkpoint, '/');
    for (int i = 0; i < SDX__ARRAY_LEN(names); i++) {
        int n = slash ? (int)(slash - d->checkpoint) + 1 : 0;
        snprintf(path, sizeof path, "%.*s%s", n, d->checkpoint, names[i]);
        if (sdx__file_exists(path)) return sdx_tokenizer_load(m->ctx, path, &m->tok);
    }
    if (env && *env) return sdx_tokenizer_load(m->ctx, env, &m->tok);
    return sdx__fail(m->ctx, SDX_ERR_IO,
        "%s: no CLIP vocabulary found next to it: pass --vocab PATH (sdx_model_desc.vocab), set SDX_VOCAB, or put "
        "merges.txt there. Any of these works: merges.txt from the tokenizer folder of openai/clip-vit-large-patch14 "
        "(Hugging Face), or bpe_simple_vocab_16e6.txt.gz from the clip/ folder of OpenAI's CLIP repository",
        d->checkpoint);
}

SDX_API void sdx_model_free(sdx_model *m) {
    sdx_ctx *ctx;
    if (!m) return;
    ctx = m->ctx;
    if (m->loaded_te) sdx__textenc_free(ctx, &m->te);
    if (m->loaded_unet) sdx__unet_free(&m->unet);
    if (m->loaded_vae) sdx__vae_free(&m->vae);
    sdx__taesd_free(&m->taesd);
    sdx_tokenizer_free(m->tok);
    sdx__arena_free(&m->arena);
    sdx_st_close(m->vae_file);
    sdx_st_close(m->taesd_file[0]);
    sdx_st_close(m->taesd_file[1]);
    sdx_st_close(m->ckpt);
    sdx__free(ctx, m);
}

/* The VAE and TAESD must speak the UNet's latent: same channels, same
 * pixels per latent pixel. */
static int sdx__check_codecs(sdx_model *m, const sdx_model_desc *d) {
    int want = m->loaded_unet ? m->unet.out_channels : m->loaded_vae ? m->vae.latent_channels : 0;
    const char *who = m->loaded_unet ? "the UNet" : "the VAE";
    const char *taesd = m->taesd.dec.w.ctx ? sdx_st_path(m->taesd.dec.w.st) : m->taesd.enc.w.ctx ? sdx_st_path(m->taesd.enc.w.st) : "";
    if (m->loaded_vae && m->loaded_unet && m->vae.latent_channels != want)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: VAE latent has %d channels, the UNet works on %d",
                         d->vae ? d->vae : d->checkpoint, m->vae.latent_channels, want);
    if (m->taesd.latent_channels && want && m->taesd.latent_channels != want)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: TAESD latent has %d channels, %s works on %d (TAESD for SD3 or FLUX "
                         "does not fit SD 1.x/2.x/SDXL)", taesd, m->taesd.latent_channels, who, want);
    if (m->taesd.latent_channels && m->loaded_vae && m->taesd.factor != m->vae.factor)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: TAESD scales latents by %d, the VAE by %d", taesd, m->taesd.factor,
                         m->vae.factor);
    return SDX_OK;
}

static int sdx__load_taesd(sdx_model *m, const sdx_model_desc *d) {
    int rc;
    sdx__taesd_init(&m->taesd);
    for (int i = 0; i < 2; i++) {
        if (!d->taesd[i]) continue;
        if ((rc = sdx_st_open(m->ctx, d->taesd[i], &m->taesd_file[i])) != SDX_OK) return rc;
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(m->ctx, m->taesd_file[i]) != 0) return SDX_ERR_NONFINITE;
        if ((rc = sdx__taesd_load(m->ctx, &m->taesd, m->taesd_file[i])) != SDX_OK) return rc;
    }
    return SDX_OK;
}

SDX_API int sdx_model_load(sdx_ctx *ctx, const sdx_model_desc *d, sdx_model **out) {
    sdx_model *m;
    int rc;
    const char *base, *dot, *first;
    if (!out || !d || (!d->checkpoint && !(d->codecs_only && (d->taesd[0] || d->taesd[1]))))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_model_load: a checkpoint path is required (or codecs_only with a TAESD file)");
    *out = NULL;
    m = (sdx_model *)sdx__calloc(ctx, 1, sizeof *m);
    if (!m) return sdx__nomem(ctx, "model", sizeof *m);
    m->ctx = ctx;
    sdx__arena_init(&m->arena, ctx, 0);
    sdx_model_sampling_init(&m->ms);
    sdx__taesd_init(&m->taesd);
    first = d->checkpoint ? d->checkpoint : d->taesd[0] ? d->taesd[0] : d->taesd[1];
    base = strrchr(first, '/');
    base = base ? base + 1 : first;
    dot = strrchr(base, '.');
    snprintf(m->name, sizeof m->name, "%.*s", dot ? (int)(dot - base) : (int)strlen(base), base);

    if (d->checkpoint) {
        if ((rc = sdx_st_open(ctx, d->checkpoint, &m->ckpt)) != SDX_OK) goto fail;
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(ctx, m->ckpt) != 0) { rc = SDX_ERR_NONFINITE; goto fail; }
        m->family = sdx__detect_family(m->ckpt);
        if (m->family == SDX_FAMILY_UNKNOWN) {
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: not a recognised SD 1.x / 2.x / SDXL checkpoint (no text encoder under "
                           "cond_stage_model.transformer., cond_stage_model.model. or conditioner.embedders.)", d->checkpoint);
            goto fail;
        }
    } else if (d->vae) {
        rc = sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: a VAE alone cannot decode: its latent scale depends on the model family; "
                       "give the checkpoint too", d->vae);
        goto fail;
    }
    if (!d->codecs_only) {
        if ((rc = sdx__textenc_load(ctx, &m->te, m->ckpt)) != SDX_OK) goto fail;
        m->loaded_te = 1;
        if ((rc = sdx__unet_load(ctx, &m->unet, m->ckpt, "model.diffusion_model.")) != SDX_OK) goto fail;
        m->loaded_unet = 1;
        if (m->unet.context_dim != m->te.context_dim) {
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: the UNet expects %d-wide text context but the text encoders give %d",
                           d->checkpoint, m->unet.context_dim, m->te.context_dim);
            goto fail;
        }
    }
    if (d->vae) {
        if ((rc = sdx_st_open(ctx, d->vae, &m->vae_file)) != SDX_OK) goto fail;
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(ctx, m->vae_file) != 0) { rc = SDX_ERR_NONFINITE; goto fail; }
    }
    if (m->ckpt) {
        if ((rc = sdx__vae_load(ctx, &m->vae, m->vae_file ? m->vae_file : m->ckpt, m->vae_file ? NULL : "first_stage_model.")) != SDX_OK)
            goto fail;
        m->loaded_vae = 1;
    }
    if ((rc = sdx__load_taesd(m, d)) != SDX_OK) goto fail;
    if ((rc = sdx__check_codecs(m, d)) != SDX_OK) goto fail;
    if (!d->codecs_only) {
        if ((rc = sdx__detect_prediction(m, d->prediction)) != SDX_OK) goto fail;
        if ((rc = sdx__load_vocab(m, d)) != SDX_OK) goto fail;
        sdx__log(ctx, SDX_LOG_INFO, "%s: %s, %s prediction, UNet in_channels %d", d->checkpoint, sdx_family_name(m->family),
                 m->prediction == SDX_PRED_V ? "v" : "eps", m->unet.in_channels);
    }
    *out = m;
    return SDX_OK;
fail:
    sdx_model_free(m);
    return rc;
}

SDX_API sdx_family     sdx_model_family(const sdx_model *m) { return m ? m->family : SDX_FAMILY_UNKNOWN; }
SDX_API sdx_prediction sdx_model_prediction(const sdx_model *m) { return m ? m->prediction : SDX_PRED_EPS; }
SDX_API const char    *sdx_model_name(const sdx_model *m) { return m ? m->name : ""; }

SDX_API void sdx_image_free(sdx_ctx *ctx, sdx_image *img) {
    if (!img) return;
    sdx__free(ctx, img->data);
    memset(img, 0, sizeof *img);
}

SDX_API void sdx_gen_result_free(sdx_ctx *ctx, sdx_gen_result *res) {
    if (!res) return;
    for (int i = 0; i < res->count; i++) {
        if (res->images) sdx_image_free(ctx, &res->images[i]);
        if (res->latents) sdx_tensor_free(ctx, &res->latents[i]);
    }
    sdx__free(ctx, res->images);
    sdx__free(ctx, res->latents);
    sdx__free(ctx, res->seeds);
    memset(res, 0, sizeof *res);
}

/* ---- latent codecs ----------------------------------------------------- */

static int sdx__nonfinite_stage(sdx_ctx *ctx, const char *stage, const float *x, size_t n);
/* The VAE and TAESD turn latents into pixels and back. The pipeline asks
 * the codec in use for the latent geometry instead of assuming SD's 4
 * channels, 8x and 0.18215: model latent = codec latent * scale (the VAE's
 * factor of the model family; TAESD works in model space). Outside this
 * section latents are in model space and images are f32 [3, H, W] in
 * [0, 1] on the host. */

typedef struct sdx__codec {
    sdx_codec kind;          /* SDX_CODEC_VAE or SDX_CODEC_TAESD */
    int channels, factor;
    float scale;
} sdx__codec;

static int sdx__codec_pick(sdx_model *m, sdx_codec want, int encode, sdx__codec *c) {
    int have_taesd = encode ? m->taesd.enc.w.ctx != NULL : m->taesd.dec.w.ctx != NULL;
    const char *job = encode ? "encoder" : "decoder";
    memset(c, 0, sizeof *c);
    if (want != SDX_CODEC_AUTO && want != SDX_CODEC_VAE && want != SDX_CODEC_TAESD)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "unknown codec %d (SDX_CODEC_AUTO, _VAE or _TAESD)", (int)want);
    if (want == SDX_CODEC_TAESD || (want == SDX_CODEC_AUTO && have_taesd)) {
        if (!have_taesd)
            return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "no TAESD %s is loaded (sdx_model_desc.taesd, --taesd: "
                             "taesd_%s.safetensors or a diffusers AutoencoderTiny file)", job, job);
        c->kind = SDX_CODEC_TAESD;
        c->channels = m->taesd.latent_channels;
        c->factor = m->taesd.factor;
        c->scale = 1.0f;
        return SDX_OK;
    }
    if (!m->loaded_vae)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "no VAE is loaded (the model was loaded from TAESD files only)");
    if (encode && !m->vae.has_encoder)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: this VAE has no encoder", sdx_st_path(m->vae.w.st));
    c->kind = SDX_CODEC_VAE;
    c->channels = m->vae.latent_channels;
    c->factor = m->vae.factor;
    c->scale = sdx__vae_scale_factor(m->family == SDX_FAMILY_SDXL);
    return SDX_OK;
}

/* latent: model space [channels, lh, lw] -> rgb [3, lh*factor, lw*factor]
 * in [0, 1]; seamless: circular padding (a tileable image). */
static int sdx__codec_decode(sdx_model *m, const sdx__codec *c, const float *latent, int lh, int lw,
                             const sdx__vae_tiling *tiling, int seamless, float *rgb) {
    sdx_ctx *ctx = m->ctx;
    sdx__mark mark = sdx__arena_mark(&m->arena);
    size_t n = (size_t)c->channels * (size_t)lh * (size_t)lw, px = (size_t)3 * (size_t)lh * (size_t)lw * (size_t)(c->factor * c->factor);
    int64_t zshape[4] = { 1, c->channels, lh, lw }, ishape[4] = { 1, 3, (int64_t)lh * c->factor, (int64_t)lw * c->factor };
    sdx_tensor z, image = sdx__view(SDX_F32, rgb, 4, ishape);
    int rc;
    if (!sdx__arena_host_tensor(&m->arena, &z, SDX_F32, 4, zshape)) {
        sdx__arena_release(&m->arena, mark);
        return sdx__nomem(ctx, "latent", sizeof(float) * n);
    }
    for (size_t i = 0; i < n; i++) ((float *)z.data)[i] = latent[i] / c->scale;
    if (seamless) sdx__circular_begin(ctx);
    rc = c->kind == SDX_CODEC_TAESD ? sdx__taesd_decode(ctx, &m->taesd, &m->arena, &z, &image, 1)
                                    : sdx__vae_decode(ctx, &m->vae, &m->arena, &z, &image, tiling);
    sdx__circular_end(ctx);
    if (rc == SDX_OK) rc = sdx__nonfinite_stage(ctx, "the decoded image", rgb, px);
    if (rc == SDX_OK && c->kind == SDX_CODEC_VAE)
        for (size_t i = 0; i < px; i++) {
            float v = (rgb[i] + 1.0f) * 0.5f;
            rgb[i] = v < 0 ? 0 : v > 1 ? 1 : v;
        }
    sdx__arena_release(&m->arena, mark);
    return rc;
}

/* rgb [3, H, W] in [0, 1], H and W multiples of factor -> the codec's
 * latent in codec space [channels, H/factor, W/factor]: the VAE
 * posterior's mean and, if std is non-NULL, exp(0.5 * clamp(logvar, -30,
 * 20)); TAESD's output (a point: std must be NULL). */
static int sdx__codec_encode(sdx_model *m, const sdx__codec *c, const float *rgb, int H, int W, const sdx__vae_tiling *tiling,
                             float *mean, float *std) {
    sdx_ctx *ctx = m->ctx;
    sdx__mark mark = sdx__arena_mark(&m->arena);
    int lh = H / c->factor, lw = W / c->factor;
    size_t n = (size_t)c->channels * (size_t)lh * (size_t)lw, px = (size_t)3 * (size_t)H * (size_t)W;
    int64_t xshape[4] = { 1, 3, H, W }, lshape[4] = { 1, c->channels, lh, lw };
    sdx_tensor x, logvar, out = sdx__view(SDX_F32, mean, 4, lshape);
    int rc;
    if (std && c->kind != SDX_CODEC_VAE) {
        sdx__arena_release(&m->arena, mark);
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "a posterior sample needs the VAE; TAESD's encoder is deterministic");
    }
    if (!sdx__arena_host_tensor(&m->arena, &x, SDX_F32, 4, xshape) ||
        (std && !sdx__arena_host_tensor(&m->arena, &logvar, SDX_F32, 4, lshape))) {
        sdx__arena_release(&m->arena, mark);
        return sdx__nomem(ctx, "image", sizeof(float) * (px + n));
    }
    for (size_t i = 0; i < px; i++) ((float *)x.data)[i] = c->kind == SDX_CODEC_VAE ? rgb[i] * 2.0f - 1.0f : rgb[i];
    rc = c->kind == SDX_CODEC_TAESD ? sdx__taesd_encode(ctx, &m->taesd, &m->arena, &x, &out)
                                    : sdx__vae_encode(ctx, &m->vae, &m->arena, &x, &out, std ? &logvar : NULL, tiling);
    for (size_t i = 0; rc == SDX_OK && std && i < n; i++) std[i] = expf(0.5f * ((const float *)logvar.data)[i]);
    if (rc == SDX_OK) rc = sdx__nonfinite_stage(ctx, "the encoded image", mean, n);
    sdx__arena_release(&m->arena, mark);
    return rc;
}

/* Codec space to model space (ComfyUI's process_latent_in) in place: the
 * mean, or with eps the posterior sample mean + std * eps, times scale. */
static void sdx__codec_to_model(const sdx__codec *c, const float *std, const float *eps, size_t n, float *latent) {
    for (size_t i = 0; i < n; i++) {
        float z = eps ? latent[i] + std[i] * eps[i] : latent[i];
        latent[i] = z * c->scale;
    }
}

/* ---- resolved parameters ---------------------------------------------- */

typedef struct sdx__gen {
    sdx_model *m;
    const sdx_gen_params *p;
    int width, height, steps, batch, lh, lw;   /* image and latent sizes */
    int lc, lf;              /* latent channels, image pixels per latent pixel */
    sdx__codec dec, enc, preview;   /* final decode, init-image encode, previews */
    float cfg;
    sdx_sampler sampler;
    sdx_scheduler scheduler;
    double denoise;
    int64_t seed;
    const sdx_cond *cond;    /* the encoded prompt pair */
    /* img2img / inpainting */
    int crop_x, crop_y;      /* init image pixels cropped off left / top  */
    float *init_latent;      /* [lc*lh*lw] model-space init latent        */
    float *latent_mask;      /* [lh*lw] 1 = repaint (latent noise mask)   */
    float *concat;           /* [(lc+1)*lh*lw] inpainting-model extra channels */
    float *paste_alpha;      /* [height*width] overlay weight of generated
                                pixels (paste_back), else NULL            */
    float *noise;            /* this image's initial noise                */
    float *scratch;          /* x with the noise mask applied             */
    int image_index, step;
    sdx_rng step_rng;
} sdx__gen;

/* What zero/NULL fields of sdx_gen_params mean; sdx_generate and the
 * parameters text must agree on them. */
#define SDX__DEFAULT_STEPS    20
#define SDX__DEFAULT_CFG      7.0f
#define SDX__DEFAULT_STRENGTH 0.75f
static const char *const sdx__default_sampler = "euler_a";
static const char *const sdx__default_scheduler = "normal";

/* The resolution each family was trained at (m may be NULL). */
static int sdx__default_size(const sdx_model *m) {
    if (m && m->family == SDX_FAMILY_SDXL) return 1024;
    if (m && m->family == SDX_FAMILY_SD2 && m->prediction == SDX_PRED_V) return 768;
    return 512;
}

/* ComfyUI's VAE.encode crops each side of an image to a multiple of the
 * codec's factor f (8): it keeps (n / f) * f pixels from offset (n % f) / 2
 * (a centre crop; an odd remainder loses its extra pixel at the end). */
static int sdx__crop_offset(int n, int f) { return (n % f) / 2; }
static int sdx__crop_size(int n, int f) { return n / f * f; }

/* The image pixels per latent pixel of the decoder sdx__codec_pick would
 * choose (m may be NULL; 8 when it cannot choose): sizes for the
 * parameters text, which has no context to report errors to. */
static int sdx__codec_factor(const sdx_model *m, sdx_codec want) {
    int taesd = m && m->taesd.dec.w.ctx != NULL;
    if (m && (want == SDX_CODEC_TAESD || want == SDX_CODEC_AUTO) && taesd) return m->taesd.factor;
    if (m && m->loaded_vae) return m->vae.factor;
    return 8;
}

/* InpaintModelConditioning without a mask concatenates ComfyUI's
 * blank_inpaint_image_like: a grey image's latent in model space, per
 * channel of SD's 4-channel latent. */
static const float sdx__blank_inpaint_grey[4] = { 0.8223f, -0.6876f, 0.6364f, 0.1380f };

#define SDX__MAX_INIT_LATENT 2048   /* latent side: 16384 pixels */

/* The image size an init image (cropped to multiples of f) or init latent
 * (f pixels per latent pixel) gives, 0 x 0 without one or when the
 * latent's shape is not [1, c, h, w]. */
static void sdx__init_size(const sdx_gen_params *p, int f, int *w, int *h) {
    const sdx_tensor *l = p->init_latent;
    *w = *h = 0;
    if (p->init_image) {
        *w = sdx__crop_size(p->init_image->width, f);
        *h = sdx__crop_size(p->init_image->height, f);
    } else if (l && l->ndim == 4 && l->shape[2] >= 1 && l->shape[3] >= 1 && l->shape[2] <= SDX__MAX_INIT_LATENT &&
               l->shape[3] <= SDX__MAX_INIT_LATENT) {
        *w = (int)l->shape[3] * f;
        *h = (int)l->shape[2] * f;
    }
}

/* Output size: as given, else the init's, else the family default. */
static void sdx__output_size(const sdx_model *m, const sdx_gen_params *p, int f, int *w, int *h) {
    int def = sdx__default_size(m), iw, ih;
    sdx__init_size(p, f, &iw, &ih);
    *w = p->width ? p->width : iw ? iw : def;
    *h = p->height ? p->height : ih ? ih : def;
}

/* ComfyUI gets denoise as a decimal (JSON) in a double, and int(steps /
 * denoise) depends on it: 3 steps at 0.3 make a 10-step schedule, while
 * 3 / (double)0.3f = 9.99... So a float strength stands for the shortest
 * decimal that rounds to it. */
static double sdx__float_as_decimal(float f) {
    double scale = 1;
    for (int k = 0; k <= 12; k++, scale *= 10) {
        double d = nearbyint((double)f * scale) / scale;
        if ((float)d == f) return d;
    }
    return f;
}

/* Checks the img2img / inpainting inputs against the resolved size. */
static int sdx__gen_resolve_init(sdx__gen *g) {
    const sdx_gen_params *p = g->p;
    sdx_ctx *ctx = g->m->ctx;
    const sdx_image *im = p->init_image, *mk = p->mask;
    const sdx_tensor *l = p->init_latent;
    char shape[96];
    int iw, ih;
    if (im && l) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "init image and init latent: give one or the other");
    if (im && (im->channels != 3 || !im->data || im->width < g->lf || im->height < g->lf))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "init image is %dx%d with %d channels; expected RGB of at least %dx%d",
                         im->width, im->height, im->channels, g->lf, g->lf);
    if (l && (l->ndim != 4 || l->shape[0] != 1 || l->shape[1] != g->lc || l->shape[2] < 1 || l->shape[3] < 1 ||
              l->shape[2] > SDX__MAX_INIT_LATENT || l->shape[3] > SDX__MAX_INIT_LATENT || !l->data ||
              (l->dtype != SDX_F32 && l->dtype != SDX_F16 && l->dtype != SDX_BF16)))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "init latent is %s %s; expected F32/F16/BF16 [1, %d, h, w] with h, w <= %d",
                         sdx_dtype_name(l->dtype), sdx_shape_str(l, shape, sizeof shape), g->lc, SDX__MAX_INIT_LATENT);
    sdx__init_size(p, g->lf, &iw, &ih);
    if ((im || l) && (iw != g->width || ih != g->height))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s gives a %dx%d image but %dx%d was asked for (leave width and height 0 to take the init's size)",
                         im ? "init image (cropped to multiples of the codec's factor as ComfyUI does)" : "init latent", iw, ih, g->width, g->height);
    if (im) {
        g->crop_x = sdx__crop_offset(im->width, g->lf);
        g->crop_y = sdx__crop_offset(im->height, g->lf);
        if (p->encode_sample && g->enc.kind == SDX_CODEC_TAESD)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "encode_sample (--encode-seed) samples the VAE's posterior; TAESD's encoder "
                             "has none (choose the VAE with codec SDX_CODEC_VAE)");
    }
    g->denoise = 1.0;
    if (im || l) {
        float s = p->strength != 0 ? p->strength : SDX__DEFAULT_STRENGTH;
        if (!(s > 0 && s <= 1)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "strength %g: must be in (0, 1]", s);
        g->denoise = sdx__float_as_decimal(s);
    }
    if (mk) {
        if (!im && !l) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "a mask needs an init image or init latent");
        if (mk->channels != 1 || !mk->data || mk->width < 1 || mk->height < 1 || mk->width > 65536 || mk->height > 65536)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "mask is %dx%d with %d channels; expected grey", mk->width, mk->height, mk->channels);
        if (g->m->unet.in_channels == 2 * g->lc + 1 && !im)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "a 9-channel inpainting model with a mask needs the init image (it encodes the "
                             "masked image), not an init latent");
    }
    if (g->m->unet.in_channels == 2 * g->lc + 1 && !mk && g->lc != SDX__ARRAY_LEN(sdx__blank_inpaint_grey))
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "an inpainting model without a mask needs a blank image's latent, known for "
                         "4-channel latents only (this one has %d)", g->lc);
    if (p->paste_back && (!mk || !im))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "paste-back needs an init image and a mask");
    if (p->paste_back && p->mask_blur > 1000)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "mask blur %d: at most 1000 pixels", p->mask_blur);
    return SDX_OK;
}

static int sdx__gen_resolve(sdx__gen *g, sdx_model *m, const sdx_gen_params *p) {
    sdx_ctx *ctx = m->ctx;
    int rc;
    memset(g, 0, sizeof *g);
    g->m = m;
    g->p = p;
    if (!m->loaded_unet)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "model '%s' was loaded with codecs_only: it can decode and encode, not generate", m->name);
    if ((rc = sdx__codec_pick(m, p->codec, 0, &g->dec)) != SDX_OK) return rc;
    if (p->init_image && (rc = sdx__codec_pick(m, p->codec, 1, &g->enc)) != SDX_OK) return rc;
    if (p->preview && (rc = sdx__codec_pick(m, p->preview_codec, 0, &g->preview)) != SDX_OK) return rc;
    if (p->preview_interval < 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "preview interval %d: must be >= 0", p->preview_interval);
    if (p->init_image && (g->enc.channels != g->dec.channels || g->enc.factor != g->dec.factor))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "the encoder's latents (%d channels, 1/%d) do not fit the decoder's (%d channels, 1/%d)",
                         g->enc.channels, g->enc.factor, g->dec.channels, g->dec.factor);
    g->lc = g->dec.channels;
    g->lf = g->dec.factor;
    sdx__output_size(m, p, g->lf, &g->width, &g->height);
    if (g->width <= 0 || g->height <= 0 || g->width % g->lf || g->height % g->lf || g->width > 16384 || g->height > 16384)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "image size %dx%d: width and height must be positive multiples of %d, at most 16384",
                         g->width, g->height, g->lf);
    g->lw = g->width / g->lf;
    g->lh = g->height / g->lf;
    g->steps = p->steps ? p->steps : SDX__DEFAULT_STEPS;
    if (g->steps < 1 || g->steps > 10000) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "steps %d: must be 1..10000", g->steps);
    g->cfg = p->cfg_scale != 0 ? p->cfg_scale : SDX__DEFAULT_CFG;
    if (!isfinite(g->cfg) || g->cfg < 0 || g->cfg > 1000) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "cfg scale %g: must be 0..1000", g->cfg);
    g->batch = p->batch_count ? p->batch_count : 1;
    if (g->batch < 1 || g->batch > 1000) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "batch count %d: must be 1..1000", g->batch);
    if ((rc = sdx_sampler_from_name(ctx, p->sampler ? p->sampler : sdx__default_sampler, &g->sampler)) != SDX_OK) return rc;
    {
        const char *s = p->scheduler ? p->scheduler : sdx__default_scheduler;
        if (!strcmp(s, "ays") || !strcmp(s, "align_your_steps")) {
            if (m->family == SDX_FAMILY_SD2)
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "scheduler 'ays' has tables for SD 1.x and SDXL only, not SD 2.x");
            g->scheduler = m->family == SDX_FAMILY_SDXL ? SDX_SCHED_AYS_SDXL : SDX_SCHED_AYS_SD1;
        } else if ((rc = sdx_scheduler_from_name(ctx, s, &g->scheduler)) != SDX_OK) {
            return rc;
        }
    }
    if (m->unet.in_channels != g->lc && m->unet.in_channels != 2 * g->lc + 1)
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "UNet with %d input channels (supported: %d, %d for inpainting)", m->unet.in_channels,
                         g->lc, 2 * g->lc + 1);
    if ((rc = sdx__gen_resolve_init(g)) != SDX_OK) return rc;
    g->seed = p->seed;
    if (g->seed < 0) {
        /* entropy without global state: time and an address */
        uint64_t s = (uint64_t)time(NULL) * 6364136223846793005ull ^ (uint64_t)(uintptr_t)g;
        s ^= s >> 29;
        g->seed = (int64_t)(s & 0xffffffffull);
    }
    if (g->seed > INT64_MAX - (g->batch - 1))   /* seeds run seed .. seed + batch - 1 */
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "seed %lld with batch count %d: the last seed would pass %lld",
                         (long long)g->seed, g->batch, (long long)INT64_MAX);
    return SDX_OK;
}

/* ---- conditioning --------------------------------------------------- */

static int sdx__nonfinite_stage(sdx_ctx *ctx, const char *stage, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sdx__fail(ctx, SDX_ERR_NONFINITE,
                "%s became non-finite (NaN/Inf at element %zu): the weights or the precision policy produced it; "
                "rerun with tracing (--trace-nonfinite, sdx_desc.trace_nonfinite) to name the first op, "
                "and scan the checkpoint (--scan-weights) for corrupted tensors", stage, i);
    return SDX_OK;
}

/* Empty-prompt chunk, used to pad the shorter of prompt/negative. */
static int sdx__pad_chunks(sdx_ctx *ctx, const sdx_tokenizer *tok, sdx__chunks *c, int n) {
    sdx__chunks empty;
    int32_t *ids;
    float *mult;
    int rc;
    if (c->n >= n) return SDX_OK;
    if ((rc = sdx__prompt_chunks(ctx, tok, "", &empty)) != SDX_OK) return rc;
    ids = (int32_t *)sdx__realloc(ctx, c->tokens, sizeof(int32_t) * 77 * (size_t)n);
    if (ids) c->tokens = ids;
    mult = ids ? (float *)sdx__realloc(ctx, c->mult, sizeof(float) * 77 * (size_t)n) : NULL;
    if (mult) c->mult = mult;
    if (!ids || !mult) { sdx__chunks_free(ctx, &empty); return sdx__nomem(ctx, "prompt chunks", sizeof(int32_t) * 77 * (size_t)n); }
    for (int i = c->n; i < n; i++) {
        memcpy(c->tokens + 77 * i, empty.tokens, sizeof(int32_t) * 77);
        memcpy(c->mult + 77 * i, empty.mult, sizeof(float) * 77);
    }
    c->n = n;
    sdx__chunks_free(ctx, &empty);
    return SDX_OK;
}

/* An encoded prompt pair: [n_cond, T, D] context and [n_cond, adm] y
 * (prompt first, then the negative prompt unless cfg is 1), on the host
 * and where the UNet reads them (device copies, or the same tensors). */
struct sdx_cond {
    sdx_model *m;
    int n_cond, width, height;
    sdx_tensor context, y;
    sdx_tensor unet_context, unet_y;
};

/* Encodes one prompt into row `row` of cond->context (and y for SDXL). */
static int sdx__encode_into(sdx__gen *g, sdx_cond *cond, const sdx__chunks *chunks, int row) {
    sdx_model *m = g->m;
    sdx_ctx *ctx = m->ctx;
    sdx_tensor context, pooled;
    sdx__mark mark = sdx__arena_mark(&m->arena);
    size_t per_row = (size_t)(cond->context.shape[1] * cond->context.shape[2]);
    int rc;
    /* the encoder hands back owned tensors */
    memset(&context, 0, sizeof context);
    memset(&pooled, 0, sizeof pooled);
    rc = sdx__textenc_encode(ctx, &m->te, &m->arena, chunks, g->p->clip_skip, &context, cond->y.data ? &pooled : NULL);
    if (rc == SDX_OK && (size_t)sdx_tensor_numel(&context) != per_row)
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "text encoder returned %lld values, expected %zu", (long long)sdx_tensor_numel(&context), per_row);
    if (rc == SDX_OK) {
        sdx__load_f32(context.data, context.dtype, 0, (int64_t)per_row, (float *)cond->context.data + per_row * (size_t)row);
        rc = sdx__nonfinite_stage(ctx, row ? "the negative-prompt conditioning" : "the prompt conditioning",
                                  (float *)cond->context.data + per_row * (size_t)row, per_row);
    }
    if (rc == SDX_OK && cond->y.data) {
        const sdx_gen_params *p = g->p;
        float size_cond[6];
        int ydim = (int)cond->y.shape[1];
        float *pf = (float *)sdx__arena_host_alloc(&m->arena, sizeof(float) * (size_t)m->te.pooled_dim);
        if (!pf) rc = SDX_ERR_NOMEM;
        else {
            sdx__load_f32(pooled.data, pooled.dtype, 0, m->te.pooled_dim, pf);
            size_cond[0] = (float)(p->orig_height ? p->orig_height : g->height);
            size_cond[1] = (float)(p->orig_width ? p->orig_width : g->width);
            size_cond[2] = (float)p->crop_top;
            size_cond[3] = (float)p->crop_left;
            size_cond[4] = (float)(p->target_height ? p->target_height : g->height);
            size_cond[5] = (float)(p->target_width ? p->target_width : g->width);
            rc = sdx__sdxl_vector(ctx, pf, m->te.pooled_dim, size_cond, (float *)cond->y.data + (size_t)ydim * (size_t)row, ydim);
        }
    }
    sdx_tensor_free(ctx, &context);
    sdx_tensor_free(ctx, &pooled);
    sdx__arena_release(&m->arena, mark);
    return rc;
}

/* The conditioning where the UNet computes: on a device backend a copy
 * uploaded once per generation (per step only the latent crosses). */
static int sdx__to_unet(sdx_ctx *ctx, sdx_tensor *dst, const sdx_tensor *host) {
    *dst = *host;
    dst->owned = 0;
    if (!sdx__on_device(ctx)) return SDX_OK;
    dst->device = 1;
    if (!(dst->data = sdx__dev_alloc(ctx, sdx_tensor_nbytes(host)))) return sdx__nomem(ctx, "conditioning (device)", sdx_tensor_nbytes(host));
    dst->owned = 1;
    return sdx__upload(ctx, dst, (const float *)host->data);
}

static void sdx__unet_input_free(sdx_ctx *ctx, sdx_tensor *t) {
    if (t->owned && t->device) sdx__dev_free(ctx, t->data, sdx_tensor_nbytes(t));
    memset(t, 0, sizeof *t);
}

static int sdx__gen_condition(sdx__gen *g, sdx_cond *cond) {
    sdx_model *m = g->m;
    sdx_ctx *ctx = m->ctx;
    sdx__chunks pos, neg;
    int rc, n;
    int64_t shape[3];
    memset(&pos, 0, sizeof pos);
    memset(&neg, 0, sizeof neg);
    cond->m = m;
    cond->width = g->width;
    cond->height = g->height;
    cond->n_cond = g->cfg == 1.0f ? 1 : 2;
    if ((rc = sdx__prompt_chunks(ctx, m->tok, g->p->prompt ? g->p->prompt : "", &pos)) != SDX_OK) return rc;
    if (cond->n_cond == 2 && (rc = sdx__prompt_chunks(ctx, m->tok, g->p->negative_prompt ? g->p->negative_prompt : "", &neg)) != SDX_OK)
        goto done;
    n = SDX__MAX(pos.n, neg.n);
    if ((rc = sdx__pad_chunks(ctx, m->tok, &pos, n)) != SDX_OK) goto done;
    if (cond->n_cond == 2 && (rc = sdx__pad_chunks(ctx, m->tok, &neg, n)) != SDX_OK) goto done;
    shape[0] = cond->n_cond; shape[1] = 77 * (int64_t)n; shape[2] = m->te.context_dim;
    if ((rc = sdx_tensor_alloc(ctx, &cond->context, SDX_F32, 3, shape)) != SDX_OK) goto done;
    if (m->unet.adm_channels > 0) {
        shape[1] = m->unet.adm_channels;
        if ((rc = sdx_tensor_alloc(ctx, &cond->y, SDX_F32, 2, shape)) != SDX_OK) goto done;
    }
    if ((rc = sdx__encode_into(g, cond, &pos, 0)) != SDX_OK) goto done;
    if (cond->n_cond == 2 && (rc = sdx__encode_into(g, cond, &neg, 1)) != SDX_OK) goto done;
    if ((rc = sdx__to_unet(ctx, &cond->unet_context, &cond->context)) != SDX_OK) goto done;
    if (cond->y.data) rc = sdx__to_unet(ctx, &cond->unet_y, &cond->y);
done:
    sdx__chunks_free(ctx, &pos);
    sdx__chunks_free(ctx, &neg);
    return rc;
}

/* ---- img2img and inpainting inputs ------------------------------------ */
/* ComfyUI's graphs, node by node (shared golden img2img/README.md):
 * VAEEncode (crop, [-1, 1], posterior, scale), SetLatentNoiseMask (4-channel
 * models) or InpaintModelConditioning (9-channel models), KSampler. */

static sdx__vae_tiling sdx__tiling(const sdx_gen_params *p) {
    sdx__vae_tiling t;
    memset(&t, 0, sizeof t);
    t.mode = p ? p->vae_tiling : 0;    /* tile size and overlap: the VAE's choice */
    return t;
}

static sdx__vae_tiling sdx__gen_tiling(const sdx__gen *g) { return sdx__tiling(g->p); }

/* The w x h window at (x0, y0) of img as [3, h, w] in [0, 1]. keep (may be
 * NULL): per-pixel factor m of the window applied as (p - 0.5) * m + 0.5
 * (InpaintModelConditioning greys out the repaint area). */
static void sdx__image_window(const sdx_image *img, int x0, int y0, int w, int h, const float *keep, float *rgb) {
    size_t hw = (size_t)w * (size_t)h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *s = img->data + ((size_t)(y + y0) * (size_t)img->width + (size_t)(x + x0)) * 3;
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            for (int c = 0; c < 3; c++) {
                float v = (float)s[c] / 255.0f;
                if (keep) v = (v - 0.5f) * keep[i] + 0.5f;
                rgb[(size_t)c * hw + i] = v;
            }
        }
}

/* The encoder codec's latent of the cropped init image, in codec space:
 * the VAE posterior's mean and, if std is non-NULL, its standard
 * deviation (TAESD: its output, std NULL). keep (may be NULL): per-pixel
 * factor m of the cropped image applied as (p - 0.5) * m + 0.5 before the
 * encoder (InpaintModelConditioning greys out the repaint area). */
static int sdx__vae_posterior(sdx__gen *g, const float *keep, float *mean, float *std) {
    sdx_ctx *ctx = g->m->ctx;
    sdx__vae_tiling tiling = sdx__gen_tiling(g);
    size_t px = (size_t)3 * (size_t)g->width * (size_t)g->height;
    float *rgb = (float *)sdx__malloc(ctx, sizeof(float) * px);
    int rc;
    if (!rgb) return sdx__nomem(ctx, "init image", sizeof(float) * px);
    sdx__image_window(g->p->init_image, g->crop_x, g->crop_y, g->width, g->height, keep, rgb);
    rc = sdx__codec_encode(g->m, &g->enc, rgb, g->height, g->width, &tiling, mean, std);
    sdx__free(ctx, rgb);
    return rc;
}

/* VAEEncode then process_latent_in: the model-space latent of the cropped
 * init image. eps NULL: the posterior mean (deterministic, as current
 * ComfyUI) or TAESD's output; else (VAE only) mean + std * eps (A1111 and
 * older ComfyUI sample). */
static int sdx__encode_image(sdx__gen *g, const float *keep, const float *eps, float *latent) {
    sdx_ctx *ctx = g->m->ctx;
    size_t n = (size_t)g->lc * (size_t)g->lh * (size_t)g->lw;
    float *std = NULL;
    int rc;
    if (eps && !(std = (float *)sdx__malloc(ctx, sizeof(float) * n))) return sdx__nomem(ctx, "posterior", sizeof(float) * n);
    rc = sdx__vae_posterior(g, keep, latent, std);
    if (rc == SDX_OK) sdx__codec_to_model(&g->enc, std, eps, n, latent);
    sdx__free(ctx, std);
    return rc;
}

/* torch.nn.functional.interpolate(mode="bilinear", align_corners=False,
 * no antialias) along one axis: source taps and the weight of the second,
 * in float as PyTorch's CPU kernel computes them. */
static void sdx__bilinear_tap(int in, int out, int i, int *i0, int *i1, float *w1) {
    float src;
    if (in == out) { *i0 = *i1 = i; *w1 = 0; return; }
    src = ((float)in / (float)out) * ((float)i + 0.5f) - 0.5f;
    if (src < 0) src = 0;
    *i0 = SDX__MIN((int)floorf(src), in - 1);
    *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
    *w1 = SDX__MIN(SDX__MAX(src - (float)*i0, 0.0f), 1.0f);
}

/* One plane, sh x sw -> dh x dw. */
static void sdx__resize_bilinear(const float *src, int sh, int sw, float *dst, int dh, int dw) {
    for (int y = 0; y < dh; y++) {
        int y0, y1;
        float wy1, wy0;
        sdx__bilinear_tap(sh, dh, y, &y0, &y1, &wy1);
        wy0 = 1.0f - wy1;
        for (int x = 0; x < dw; x++) {
            int x0, x1;
            float wx1, wx0, top, bottom;
            const float *r0 = src + (size_t)y0 * (size_t)sw, *r1 = src + (size_t)y1 * (size_t)sw;
            sdx__bilinear_tap(sw, dw, x, &x0, &x1, &wx1);
            wx0 = 1.0f - wx1;
            top = r0[x0] * wx0 + r0[x1] * wx1;
            bottom = r1[x0] * wx0 + r1[x1] * wx1;
            dst[(size_t)y * (size_t)dw + (size_t)x] = top * wy0 + bottom * wy1;
        }
    }
}

/* The mask as LoadImageMask gives it (u8 / 255, 1 = repaint), resized to
 * the init image and cropped with it (InpaintModelConditioning). */
static float *sdx__mask_cropped(sdx__gen *g) {
    sdx_ctx *ctx = g->m->ctx;
    const sdx_image *mk = g->p->mask, *im = g->p->init_image;
    size_t mn = (size_t)mk->width * (size_t)mk->height, in = (size_t)im->width * (size_t)im->height;
    float *full = (float *)sdx__malloc(ctx, sizeof(float) * (mn + in));
    float *out = (float *)sdx__malloc(ctx, sizeof(float) * (size_t)g->width * (size_t)g->height);
    if (!full || !out) {
        sdx__free(ctx, full);
        sdx__free(ctx, out);
        sdx__nomem(ctx, "mask", sizeof(float) * (mn + in));
        return NULL;
    }
    for (size_t i = 0; i < mn; i++) full[i] = (float)mk->data[i] / 255.0f;
    sdx__resize_bilinear(full, mk->height, mk->width, full + mn, im->height, im->width);
    for (int y = 0; y < g->height; y++)
        memcpy(out + (size_t)y * (size_t)g->width, full + mn + (size_t)(y + g->crop_y) * (size_t)im->width + (size_t)g->crop_x,
               sizeof(float) * (size_t)g->width);
    sdx__free(ctx, full);
    return out;
}

/* SetLatentNoiseMask + KSampler's prepare_mask: the whole mask, not
 * cropped with the image, resized to the latent; soft values stay. */
static int sdx__latent_noise_mask(sdx__gen *g, float *out) {
    sdx_ctx *ctx = g->m->ctx;
    const sdx_image *mk = g->p->mask;
    size_t mn = (size_t)mk->width * (size_t)mk->height;
    float *full = (float *)sdx__malloc(ctx, sizeof(float) * mn);
    if (!full) return sdx__nomem(ctx, "mask", sizeof(float) * mn);
    for (size_t i = 0; i < mn; i++) full[i] = (float)mk->data[i] / 255.0f;
    sdx__resize_bilinear(full, mk->height, mk->width, out, g->lh, g->lw);
    sdx__free(ctx, full);
    return SDX_OK;
}

/* InpaintModelConditioning for a 9-channel model with a mask: the mask
 * (resized to the image, cropped) is the noise mask; the UNet's extra
 * channels are that mask at latent size rounded to 0/1 (half to even, as
 * torch.round) and the latent of the image with the repaint area (mask
 * rounded) grey. ComfyUI encodes the masked image first, then the image,
 * which is the order posterior samples are drawn in. */
static int sdx__gen_inpaint_conditioning(sdx__gen *g, const float *mask_px, const float *eps) {
    sdx_ctx *ctx = g->m->ctx;
    size_t plane = (size_t)g->lh * (size_t)g->lw, hw = (size_t)g->width * (size_t)g->height;
    float *keep = (float *)sdx__malloc(ctx, sizeof(float) * hw);
    int rc;
    if (!keep) return sdx__nomem(ctx, "inpainting mask", sizeof(float) * hw);
    sdx__resize_bilinear(mask_px, g->height, g->width, g->latent_mask, g->lh, g->lw);
    for (size_t i = 0; i < plane; i++) g->concat[i] = nearbyintf(g->latent_mask[i]);
    for (size_t i = 0; i < hw; i++) keep[i] = 1.0f - nearbyintf(mask_px[i]);
    rc = sdx__encode_image(g, keep, eps, g->concat + plane);
    if (rc == SDX_OK) rc = sdx__encode_image(g, NULL, eps ? eps + (size_t)g->lc * plane : NULL, g->init_latent);
    sdx__free(ctx, keep);
    return rc;
}

/* 9-channel model without a mask: ComfyUI's concat is an all-ones mask and
 * blank_inpaint_image_like (a grey image's latent, model space; SD's 4
 * channels, which sdx__gen_resolve_init checks). */
static void sdx__blank_inpaint_conditioning(sdx__gen *g) {
    size_t plane = (size_t)g->lh * (size_t)g->lw;
    for (size_t i = 0; i < plane; i++) g->concat[i] = 1.0f;
    for (int c = 0; c < SDX__ARRAY_LEN(sdx__blank_inpaint_grey); c++)
        for (size_t i = 0; i < plane; i++) g->concat[(size_t)(c + 1) * plane + i] = sdx__blank_inpaint_grey[c];
}

/* cv2.BORDER_REFLECT_101 index. */
static int sdx__reflect101(int i, int n) {
    if (n == 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
}

/* A1111's overlay for inpainting "whole picture": the mask blurred as
 * cv2.GaussianBlur(sigma = mask_blur, kernel 2 * int(2.5 * sigma + 0.5) + 1)
 * on 8 bits, doubled and clipped, weighs the generated pixels; the init
 * image fills the rest. */
static int sdx__gen_prepare_paste(sdx__gen *g, const float *mask_px) {
    sdx_ctx *ctx = g->m->ctx;
    int w = g->width, h = g->height;
    int blur = g->p->mask_blur ? g->p->mask_blur : 4;
    int radius = blur > 0 ? (int)(2.5 * blur + 0.5) : 0;
    size_t hw = (size_t)w * (size_t)h;
    float *tmp = (float *)sdx__malloc(ctx, sizeof(float) * (hw + 2 * (size_t)radius + 1)), *k;
    double ksum = 0;
    g->paste_alpha = (float *)sdx__malloc(ctx, sizeof(float) * hw);
    if (!tmp || !g->paste_alpha) { sdx__free(ctx, tmp); return sdx__nomem(ctx, "paste-back mask", sizeof(float) * 2 * hw); }
    k = tmp + hw;
    for (int i = -radius; i <= radius; i++) ksum += k[i + radius] = (float)exp(-(double)i * i / (2.0 * blur * blur));
    for (int i = 0; i <= 2 * radius; i++) k[i] = (float)(k[i] / ksum);
    for (size_t i = 0; i < hw; i++) g->paste_alpha[i] = floorf(mask_px[i] * 255.0f + 0.5f);   /* the 8-bit mask */
    for (int y = 0; y < h; y++)             /* horizontal pass, rounded to 8 bits as cv2 on u8 */
        for (int x = 0; x < w; x++) {
            float s = 0;
            for (int i = -radius; i <= radius; i++) s += k[i + radius] * g->paste_alpha[(size_t)y * (size_t)w + (size_t)sdx__reflect101(x + i, w)];
            tmp[(size_t)y * (size_t)w + (size_t)x] = floorf(s + 0.5f);
        }
    for (int y = 0; y < h; y++)             /* vertical pass, then x2, clip, weight */
        for (int x = 0; x < w; x++) {
            float s = 0;
            for (int i = -radius; i <= radius; i++) s += k[i + radius] * tmp[(size_t)sdx__reflect101(y + i, h) * (size_t)w + (size_t)x];
            g->paste_alpha[(size_t)y * (size_t)w + (size_t)x] = SDX__MIN(2.0f * floorf(s + 0.5f), 255.0f) / 255.0f;
        }
    sdx__free(ctx, tmp);
    return SDX_OK;
}

static void sdx__paste_back(const sdx__gen *g, sdx_image *img) {
    const sdx_image *im = g->p->init_image;
    for (int y = 0; y < g->height; y++)
        for (int x = 0; x < g->width; x++) {
            float a = g->paste_alpha[(size_t)y * (size_t)g->width + (size_t)x];
            const uint8_t *o = im->data + ((size_t)(y + g->crop_y) * (size_t)im->width + (size_t)(x + g->crop_x)) * 3;
            uint8_t *d = img->data + ((size_t)y * (size_t)g->width + (size_t)x) * 3;
            for (int c = 0; c < 3; c++) d[c] = (uint8_t)floorf((float)d[c] * a + (float)o[c] * (1.0f - a) + 0.5f);
        }
}

/* Noise for `encodes` posterior samples (encode_sample): one generator
 * seeded once with encode_seed, as torch.manual_seed before the encodes. */
static float *sdx__posterior_noise(sdx_ctx *ctx, const sdx_gen_params *p, size_t n) {
    float *eps = (float *)sdx__malloc(ctx, sizeof(float) * n);
    sdx_rng rng;
    if (!eps) { sdx__nomem(ctx, "posterior noise", sizeof(float) * n); return NULL; }
    sdx_rng_init(&rng, p->rng, (uint64_t)p->encode_seed);
    sdx_rng_randn(&rng, eps, n);
    return eps;
}

/* Init latent, noise mask, inpainting-model channels, paste-back mask. */
static int sdx__gen_prepare_init(sdx__gen *g) {
    sdx_ctx *ctx = g->m->ctx;
    const sdx_gen_params *p = g->p;
    size_t plane = (size_t)g->lh * (size_t)g->lw;
    size_t lplane = (size_t)g->lc * plane;     /* one latent */
    int nine = g->m->unet.in_channels == 2 * g->lc + 1, rc = SDX_OK;
    float *eps = NULL, *mask_px = NULL;
    if (p->init_image || p->init_latent) {
        g->init_latent = (float *)sdx__malloc(ctx, sizeof(float) * lplane);
        if (!g->init_latent) return sdx__nomem(ctx, "init latent", sizeof(float) * lplane);
    }
    if (p->mask) {
        g->latent_mask = (float *)sdx__malloc(ctx, sizeof(float) * plane);
        g->scratch = (float *)sdx__malloc(ctx, sizeof(float) * lplane);
        if (!g->latent_mask || !g->scratch) return sdx__nomem(ctx, "latent mask", sizeof(float) * (lplane + plane));
    }
    if (nine && !(g->concat = (float *)sdx__malloc(ctx, sizeof(float) * (lplane + plane))))
        return sdx__nomem(ctx, "inpainting input", sizeof(float) * (lplane + plane));
    if (p->init_image && p->encode_sample && !(eps = sdx__posterior_noise(ctx, p, (size_t)(nine && p->mask ? 2 : 1) * lplane))) return SDX_ERR_NOMEM;
    if (p->mask && p->init_image && (nine || p->paste_back) && !(mask_px = sdx__mask_cropped(g))) rc = SDX_ERR_NOMEM;
    if (rc == SDX_OK && nine && p->mask)
        rc = sdx__gen_inpaint_conditioning(g, mask_px, eps);
    else if (rc == SDX_OK && p->init_image)
        rc = sdx__encode_image(g, NULL, eps, g->init_latent);
    else if (rc == SDX_OK && p->init_latent)
        sdx__load_f32(p->init_latent->data, p->init_latent->dtype, 0, (int64_t)lplane, g->init_latent);
    if (rc == SDX_OK && nine && !p->mask) sdx__blank_inpaint_conditioning(g);
    if (rc == SDX_OK && p->mask && !nine) rc = sdx__latent_noise_mask(g, g->latent_mask);
    if (rc == SDX_OK && p->paste_back) rc = sdx__gen_prepare_paste(g, mask_px);
    if (rc == SDX_OK && g->init_latent) rc = sdx__nonfinite_stage(ctx, "the init latent", g->init_latent, lplane);
    sdx__free(ctx, eps);
    sdx__free(ctx, mask_px);
    return rc;
}

/* ---- the denoiser the sampler calls ------------------------------------- */

/* ComfyUI's latent noise mask (KSamplerX0Inpaint, every model call): out
 * = x * m + (latent + noise * sigma) * (1 - m), with the plain sigma and
 * the start noise; sigma 0 blends the model's output with the latent. */
static void sdx__mask_blend(const sdx__gen *g, const float *x, float sigma, float *out) {
    size_t plane = (size_t)g->lh * (size_t)g->lw;
    for (size_t c = 0; c < (size_t)g->lc; c++)
        for (size_t i = 0; i < plane; i++) {
            float mk = g->latent_mask[i];
            size_t j = c * plane + i;
            out[j] = x[j] * mk + (g->init_latent[j] + g->noise[j] * sigma) * (1 - mk);
        }
}

static int sdx__gen_denoise(void *user, const float *x_in, float sigma, float *denoised) {
    sdx__gen *g = (sdx__gen *)user;
    sdx_model *m = g->m;
    sdx_ctx *ctx = m->ctx;
    sdx__mark mark = sdx__arena_mark(&m->arena);
    size_t plane = (size_t)g->lh * (size_t)g->lw, n = (size_t)g->lc * plane;
    int B = g->cond->n_cond, cin = m->unet.in_channels, rc;
    float c_in = sdx_model_c_in(sigma), timesteps[2];
    const float *x = x_in;
    sdx_tensor xin, out;
    if (g->latent_mask) {       /* the model sees, and returns, the kept part */
        sdx__mask_blend(g, x_in, sigma, g->scratch);
        x = g->scratch;
    }
    if (!sdx__arena_tensor4(&m->arena, &xin, m->unet.act_type, B, cin, g->lh, g->lw) ||
        !sdx__arena_tensor4(&m->arena, &out, SDX_F32, B, g->lc, g->lh, g->lw)) {
        sdx__arena_release(&m->arena, mark);
        return SDX_ERR_NOMEM;
    }
    {
        /* the batch (cond, uncond), each [x * c_in, inpainting channels] */
        float *xs = (float *)sdx__arena_host_alloc(&m->arena, sizeof(float) * (size_t)B * (size_t)cin * plane);
        if (!xs) { sdx__arena_release(&m->arena, mark); return SDX_ERR_NOMEM; }
        for (int b = 0; b < B; b++) {
            float *xb = xs + (size_t)b * (size_t)cin * plane;
            for (size_t i = 0; i < n; i++) xb[i] = x[i] * c_in;
            if (g->concat) memcpy(xb + n, g->concat, sizeof(float) * (size_t)(g->lc + 1) * plane);
        }
        rc = sdx__upload(ctx, &xin, xs);
    }
    timesteps[0] = timesteps[1] = (float)sdx_sigma_to_timestep(&m->ms, sigma);
    if (rc == SDX_OK) {
        if (g->p->tiling) sdx__circular_begin(ctx);
        rc = sdx__unet_forward(ctx, &m->unet, &m->arena, &xin, timesteps, &g->cond->unet_context, g->cond->y.data ? &g->cond->unet_y : NULL, &out);
        sdx__circular_pause(ctx);
    }
    if (rc == SDX_OK) {
        float *o = (float *)sdx__arena_host_alloc(&m->arena, sizeof(float) * (size_t)B * n);
        if (!o || (rc = sdx__download(ctx, o, &out)) != SDX_OK) {
            sdx__arena_release(&m->arena, mark);
            return o ? rc : SDX_ERR_NOMEM;
        }
        sdx_model_denoised(m->prediction, sigma, x, o, o, n);
        if (B == 2) {
            sdx_model_denoised(m->prediction, sigma, x, o + n, o + n, n);
            for (size_t i = 0; i < n; i++) denoised[i] = o[n + i] + (o[i] - o[n + i]) * g->cfg;
        } else {
            memcpy(denoised, o, sizeof(float) * n);
        }
        if (g->latent_mask) sdx__mask_blend(g, denoised, 0.0f, denoised);
        rc = sdx__nonfinite_stage(ctx, "the UNet prediction", denoised, n);
    }
    sdx__arena_release(&m->arena, mark);
    return rc;
}

static int sdx__gen_noise(void *user, float *out) {
    sdx__gen *g = (sdx__gen *)user;
    sdx_rng_randn(&g->step_rng, out, (size_t)g->lc * (size_t)g->lh * (size_t)g->lw);
    return SDX_OK;
}

static void sdx__gen_free(sdx__gen *g) {
    sdx_ctx *ctx;
    if (!g->m) return;
    ctx = g->m->ctx;
    sdx__free(ctx, g->init_latent);
    sdx__free(ctx, g->latent_mask);
    sdx__free(ctx, g->concat);
    sdx__free(ctx, g->paste_alpha);
    sdx__free(ctx, g->noise);
    sdx__free(ctx, g->scratch);
}

/* Decodes latent (model space) with codec c into an 8-bit image. */
static int sdx__decode_to_image(sdx_model *m, const sdx__codec *c, const float *latent, int lh, int lw, const sdx__vae_tiling *tiling,
                                int seamless, sdx_image *img) {
    sdx_ctx *ctx = m->ctx;
    size_t hw = (size_t)lh * (size_t)lw * (size_t)(c->factor * c->factor);
    float *rgb = (float *)sdx__malloc(ctx, sizeof(float) * 3 * hw);
    int rc;
    memset(img, 0, sizeof *img);
    if (!rgb) return sdx__nomem(ctx, "decoded image", sizeof(float) * 3 * hw);
    rc = sdx__codec_decode(m, c, latent, lh, lw, tiling, seamless, rgb);
    if (rc == SDX_OK && !(img->data = (uint8_t *)sdx__malloc(ctx, 3 * hw))) rc = sdx__nomem(ctx, "image", 3 * hw);
    if (rc == SDX_OK) {
        img->width = lw * c->factor;
        img->height = lh * c->factor;
        img->channels = 3;
        for (size_t i = 0; i < hw; i++)
            for (int ch = 0; ch < 3; ch++) img->data[i * 3 + (size_t)ch] = (uint8_t)(rgb[(size_t)ch * hw + i] * 255.0f); /* floor, as ComfyUI */
    }
    sdx__free(ctx, rgb);
    return rc;
}

/* Live preview after step `step` (1-based): x0, or x with preview_noisy. */
static int sdx__gen_preview(sdx__gen *g, int step, int total, const float *x, const float *denoised) {
    const sdx_gen_params *p = g->p;
    sdx__vae_tiling tiling = sdx__gen_tiling(g);
    sdx_image img;
    int every = p->preview_interval > 0 ? p->preview_interval : 1, rc;
    if (step % every) return 0;
    rc = sdx__decode_to_image(g->m, &g->preview, p->preview_noisy || !denoised ? x : denoised, g->lh, g->lw, &tiling, p->tiling, &img);
    if (rc != SDX_OK) {
        /* a preview is a convenience: say why it failed, keep generating */
        sdx__log(g->m->ctx, SDX_LOG_WARN, "preview after step %d: %s", step, sdx_last_error(g->m->ctx));
        return 0;
    }
    rc = p->preview(p->preview_user, g->image_index, step, total, &img);
    sdx_image_free(g->m->ctx, &img);
    return rc;
}

/* ---- stage: conditioning ------------------------------------------------ */

SDX_API int sdx_encode_prompt(sdx_model *m, const sdx_gen_params *p, sdx_cond **out) {
    sdx__gen g;
    sdx_cond *cond;
    int rc;
    if (out) *out = NULL;
    if (!m || !p || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_prompt: params and out are required") : SDX_ERR_INVALID_ARG;
    if ((rc = sdx__gen_resolve(&g, m, p)) != SDX_OK) return rc;
    if (!(cond = (sdx_cond *)sdx__calloc(m->ctx, 1, sizeof *cond))) return sdx__nomem(m->ctx, "conditioning", sizeof *cond);
    cond->m = m;
    if ((rc = sdx__gen_condition(&g, cond)) != SDX_OK) { sdx_cond_free(cond); return rc; }
    sdx__arena_reset(&m->arena);
    *out = cond;
    return SDX_OK;
}

SDX_API void sdx_cond_free(sdx_cond *cond) {
    sdx_ctx *ctx;
    if (!cond) return;
    ctx = cond->m->ctx;
    sdx__unet_input_free(ctx, &cond->unet_context);
    sdx__unet_input_free(ctx, &cond->unet_y);
    sdx_tensor_free(ctx, &cond->context);
    sdx_tensor_free(ctx, &cond->y);
    sdx__free(ctx, cond);
}

/* ---- stage: sampling ------------------------------------------------------ */
/* A session samples one image. The samplers are plain loops with their
 * history in locals, so stepping replays: every model output is kept, and
 * each sdx_sampling_step reruns the sampler from the start latent (same
 * noise draws), answering earlier model calls from the record, and pauses
 * at the first call that needs the model again. That costs a few vector
 * operations per past step and gives every sampler step-by-step, with
 * results identical to one uninterrupted run. */

struct sdx_sampling {
    sdx__gen g;
    sdx_tensor sigmas;
    size_t n;                 /* floats in a latent */
    int64_t seed;
    float *start;             /* the start latent, for replays */
    sdx_tensor latent;        /* [1, 4, h, w] the state shown to the caller */
    sdx_tensor denoised;      /* the latest x0 prediction, for previews */
    float *work;              /* the sampler's x during a run */
    float **record;           /* model outputs, by call */
    int n_record, cap_record, keep_record;
    int calls, new_calls, max_new;   /* this run */
    int reported, steps, done;
    int status;               /* an error kept: the session cannot go on */
};

static int sdx__sess_denoise(void *user, const float *x, float sigma, float *denoised) {
    sdx_sampling *s = (sdx_sampling *)user;
    sdx_ctx *ctx = s->g.m->ctx;
    int rc;
    if (s->calls < s->n_record) {
        memcpy(denoised, s->record[s->calls++], s->n * sizeof(float));
        return SDX_OK;
    }
    if (s->max_new && s->new_calls == s->max_new) {   /* pause: show the state the model would see */
        memcpy(s->latent.data, x, s->n * sizeof(float));
        return SDX_ERR_CANCELLED;
    }
    if ((rc = sdx__gen_denoise(&s->g, x, sigma, denoised)) != SDX_OK) return rc;
    s->calls++;
    s->new_calls++;
    if (s->keep_record) {
        float *copy;
        if (s->n_record == s->cap_record) {
            int cap = s->cap_record ? 2 * s->cap_record : 16;
            float **r = (float **)sdx__realloc(ctx, s->record, sizeof *r * (size_t)cap);
            if (!r) return sdx__nomem(ctx, "sampling record", sizeof *r * (size_t)cap);
            s->record = r;
            s->cap_record = cap;
        }
        if (!(copy = (float *)sdx__malloc(ctx, s->n * sizeof(float)))) return sdx__nomem(ctx, "sampling record", s->n * sizeof(float));
        memcpy(copy, denoised, s->n * sizeof(float));
        s->record[s->n_record++] = copy;
    }
    return SDX_OK;
}

static int sdx__sess_noise(void *user, float *out) { return sdx__gen_noise(&((sdx_sampling *)user)->g, out); }

static int sdx__sess_report(void *user, int step, int total, const float *x, const float *denoised) {
    sdx_sampling *s = (sdx_sampling *)user;
    const sdx_gen_params *p = s->g.p;
    int rc;
    s->steps = total;
    if (step < s->reported) return 0;           /* replayed */
    s->reported = step + 1;
    memcpy(s->denoised.data, denoised, s->n * sizeof(float));
    memcpy(s->latent.data, x, s->n * sizeof(float));
    if (p->preview && (rc = sdx__gen_preview(&s->g, step + 1, total, x, denoised)) != 0) return rc;
    if (!p->progress) return 0;
    return p->progress(p->progress_user, s->g.image_index, step + 1, total, &s->latent);
}

/* Runs the sampler until `max_new` more model calls (0: to the end). */
static int sdx__sess_run(sdx_sampling *s, int max_new) {
    sdx_ctx *ctx = s->g.m->ctx;
    sdx_sample_desc sd;
    int rc, reported = s->reported;
    if (s->status != SDX_OK) return s->status;
    if (s->done) return SDX_OK;
    memcpy(s->work, s->start, s->n * sizeof(float));
    /* ComfyUI's default_noise_sampler seeds its generator with seed + 1 on CPU */
    sdx_rng_init(&s->g.step_rng, s->g.p->rng, (uint64_t)s->seed + 1);
    s->calls = s->new_calls = 0;
    s->max_new = max_new;
    memset(&sd, 0, sizeof sd);
    sd.sampler = s->g.sampler;
    sd.sigmas = (const float *)s->sigmas.data;
    sd.n_sigmas = (int)s->sigmas.shape[0];
    sd.n = s->n;
    sd.denoise = sdx__sess_denoise;
    sd.denoise_user = s;
    sd.noise = sdx__sess_noise;
    sd.noise_user = s;
    sd.step = sdx__sess_report;
    sd.step_user = s;
    rc = sdx_sample(ctx, &sd, s->work);
    if (rc == SDX_ERR_CANCELLED && s->max_new && s->new_calls == s->max_new && s->calls == s->n_record) {
        s->reported = SDX__MAX(s->reported, reported);
        return SDX_OK;                           /* paused */
    }
    /* the result is the sampler's x, with no re-paste of the kept latent:
     * the last step to sigma 0 returns it there up to rounding (ComfyUI) */
    if (rc == SDX_OK) rc = sdx__nonfinite_stage(ctx, "the final latent", s->work, s->n);
    if (rc == SDX_OK) {
        memcpy(s->latent.data, s->work, s->n * sizeof(float));
        s->done = 1;
    }
    sdx__arena_reset(&s->g.m->arena);
    return s->status = rc;
}

SDX_API void sdx_sampling_free(sdx_sampling *s) {
    sdx_ctx *ctx;
    if (!s) return;
    ctx = s->g.m->ctx;
    sdx__circular_end(ctx);
    for (int i = 0; i < s->n_record; i++) sdx__free(ctx, s->record[i]);
    sdx__free(ctx, s->record);
    sdx_tensor_free(ctx, &s->sigmas);
    sdx_tensor_free(ctx, &s->latent);
    sdx_tensor_free(ctx, &s->denoised);
    sdx__free(ctx, s->start);
    sdx__free(ctx, s->work);
    sdx__gen_free(&s->g);
    sdx__free(ctx, s);
}

static int sdx__sess_begin(sdx_model *m, const sdx_gen_params *p, const sdx_cond *cond, int index, int keep_record,
                           sdx_sampling **out) {
    sdx_ctx *ctx = m->ctx;
    sdx_sampling *s;
    int64_t shape[4];
    int rc;
    *out = NULL;
    if (!(s = (sdx_sampling *)sdx__calloc(ctx, 1, sizeof *s))) return sdx__nomem(ctx, "sampling session", sizeof *s);
    if ((rc = sdx__gen_resolve(&s->g, m, p)) != SDX_OK) { s->g.m = m; sdx_sampling_free(s); return rc; }
    if (!cond || cond->m != m || cond->n_cond != (s->g.cfg == 1.0f ? 1 : 2) ||
        (cond->y.data && (cond->width != s->g.width || cond->height != s->g.height))) {
        sdx_sampling_free(s);
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sampling_begin: the conditioning was encoded for another model, "
                         "cfg (1 or not) or SDXL size than these parameters");
    }
    if (index < 0 || index >= s->g.batch) {
        rc = sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sampling_begin: image %d of a batch of %d", index, s->g.batch);
        sdx_sampling_free(s);
        return rc;
    }
    s->g.cond = cond;
    s->g.image_index = index;
    s->seed = s->g.seed + index;
    s->keep_record = keep_record;
    s->n = (size_t)s->g.lc * (size_t)s->g.lh * (size_t)s->g.lw;
    shape[0] = 1; shape[1] = s->g.lc; shape[2] = s->g.lh; shape[3] = s->g.lw;
    s->g.noise = (float *)sdx__malloc(ctx, s->n * sizeof(float));
    s->start = (float *)sdx__malloc(ctx, s->n * sizeof(float));
    s->work = (float *)sdx__malloc(ctx, s->n * sizeof(float));
    if (!s->g.noise || !s->start || !s->work) rc = sdx__nomem(ctx, "sampling session", 3 * s->n * sizeof(float));
    if (rc == SDX_OK) rc = sdx_tensor_alloc(ctx, &s->latent, SDX_F32, 4, shape);
    if (rc == SDX_OK) rc = sdx_tensor_alloc(ctx, &s->denoised, SDX_F32, 4, shape);
    if (rc == SDX_OK) rc = sdx_sampler_sigmas(ctx, &m->ms, s->g.scheduler, s->g.sampler, s->g.steps, s->g.denoise, &s->sigmas);
    if (rc == SDX_OK) rc = sdx__gen_prepare_init(&s->g);
    if (rc != SDX_OK) { sdx_sampling_free(s); sdx__arena_reset(&m->arena); return rc; }
    sdx__arena_reset(&m->arena);
    {
        sdx_rng rng;
        sdx_rng_init(&rng, p->rng, (uint64_t)s->seed);
        sdx_rng_randn(&rng, s->g.noise, s->n);
        sdx_start_latent(&m->ms, ((const float *)s->sigmas.data)[0], s->g.init_latent, s->g.noise, s->start, s->n);
    }
    memcpy(s->latent.data, s->start, s->n * sizeof(float));
    s->steps = (int)s->sigmas.shape[0] - 1;
    *out = s;
    return SDX_OK;
}

SDX_API int sdx_sampling_begin(sdx_model *m, const sdx_gen_params *p, const sdx_cond *cond, int index, sdx_sampling **out) {
    if (out) *out = NULL;
    if (!m || !p || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_sampling_begin: params and out are required") : SDX_ERR_INVALID_ARG;
    return sdx__sess_begin(m, p, cond, index, 1, out);
}

SDX_API int sdx_sampling_step(sdx_sampling *s) { return s ? sdx__sess_run(s, 1) : SDX_ERR_INVALID_ARG; }
SDX_API int sdx_sampling_finish(sdx_sampling *s) { return s ? sdx__sess_run(s, 0) : SDX_ERR_INVALID_ARG; }
SDX_API int sdx_sampling_done(const sdx_sampling *s) { return s && s->done; }
SDX_API int sdx_sampling_steps(const sdx_sampling *s, int *total) {
    if (total) *total = s ? s->steps : 0;
    return s ? (s->done ? s->steps : s->reported) : 0;
}
SDX_API int64_t sdx_sampling_seed(const sdx_sampling *s) { return s ? s->seed : 0; }
SDX_API const sdx_tensor *sdx_sampling_latent(const sdx_sampling *s) { return s ? &s->latent : NULL; }
SDX_API const sdx_tensor *sdx_sampling_denoised(const sdx_sampling *s) { return s ? &s->denoised : NULL; }

/* ---- stage: VAE or TAESD ------------------------------------------------- */

SDX_API int sdx_decode_latent(sdx_model *m, const sdx_tensor *latent, const sdx_gen_params *p, sdx_image *out) {
    sdx__codec c;
    sdx__vae_tiling tiling = sdx__tiling(p);
    char sh[96];
    int rc;
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_decode_latent: out is required") : SDX_ERR_INVALID_ARG;
    if ((rc = sdx__codec_pick(m, p ? p->codec : SDX_CODEC_AUTO, 0, &c)) != SDX_OK) return rc;
    if (!latent || latent->dtype != SDX_F32 || latent->device || latent->ndim != 4 || latent->shape[0] != 1 ||
        latent->shape[1] != c.channels || latent->shape[2] < 1 || latent->shape[3] < 1 || latent->shape[2] * c.factor > 16384 ||
        latent->shape[3] * c.factor > 16384 || !latent->data)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_decode_latent: latent %s %s; expected host F32 [1, %d, h, w], h and w 1..%d",
                         latent ? sdx_shape_str(latent, sh, sizeof sh) : "NULL", latent ? sdx_dtype_name(latent->dtype) : "",
                         c.channels, 16384 / c.factor);
    rc = sdx__decode_to_image(m, &c, (const float *)latent->data, (int)latent->shape[2], (int)latent->shape[3], &tiling,
                              p ? p->tiling : 0, out);
    sdx__arena_reset(&m->arena);
    return rc;
}

SDX_API int sdx_encode_image(sdx_model *m, const sdx_image *img, const sdx_gen_params *p, sdx_tensor *latent) {
    sdx__codec c;
    sdx__vae_tiling tiling = sdx__tiling(p);
    float *x = NULL, *eps = NULL, *std = NULL;
    int w, h, encode_sample = p && p->encode_sample;
    size_t n;
    int64_t shape[4];
    int rc;
    if (latent) memset(latent, 0, sizeof *latent);
    if (!m || !img || !latent) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_image: image and latent are required") : SDX_ERR_INVALID_ARG;
    if ((rc = sdx__codec_pick(m, p ? p->codec : SDX_CODEC_AUTO, 1, &c)) != SDX_OK) return rc;
    /* the sides cropped to multiples of the codec's factor, as img2img does */
    if (!img->data || img->channels != 3 || img->width < c.factor || img->height < c.factor || img->width > 16384 || img->height > 16384)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_image: image %dx%d with %d channels; expected RGB of %dx%d to "
                         "16384x16384", img->width, img->height, img->channels, c.factor, c.factor);
    if (encode_sample && c.kind != SDX_CODEC_VAE)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "encode_sample samples the VAE's posterior; TAESD's encoder has none "
                         "(choose the VAE with codec SDX_CODEC_VAE)");
    w = sdx__crop_size(img->width, c.factor);
    h = sdx__crop_size(img->height, c.factor);
    shape[0] = 1; shape[1] = c.channels; shape[2] = h / c.factor; shape[3] = w / c.factor;
    n = (size_t)c.channels * (size_t)shape[2] * (size_t)shape[3];
    if (!(x = (float *)sdx__malloc(m->ctx, sizeof(float) * 3 * (size_t)w * (size_t)h)))
        return sdx__nomem(m->ctx, "image", sizeof(float) * 3 * (size_t)w * (size_t)h);
    sdx__image_window(img, sdx__crop_offset(img->width, c.factor), sdx__crop_offset(img->height, c.factor), w, h, NULL, x);
    if (encode_sample && (!(eps = sdx__posterior_noise(m->ctx, p, n)) || !(std = (float *)sdx__malloc(m->ctx, sizeof(float) * n))))
        rc = sdx__nomem(m->ctx, "posterior", sizeof(float) * n);
    if (rc == SDX_OK) rc = sdx_tensor_alloc(m->ctx, latent, SDX_F32, 4, shape);
    if (rc == SDX_OK) rc = sdx__codec_encode(m, &c, x, h, w, &tiling, (float *)latent->data, std);
    if (rc == SDX_OK) sdx__codec_to_model(&c, std, eps, n, (float *)latent->data);
    if (rc != SDX_OK) sdx_tensor_free(m->ctx, latent);
    sdx__free(m->ctx, eps);
    sdx__free(m->ctx, std);
    sdx__free(m->ctx, x);
    sdx__arena_reset(&m->arena);
    return rc;
}

/* ---- txt2img / img2img / inpainting: the stages in a row ------------------- */

SDX_API int sdx_generate(sdx_model *m, const sdx_gen_params *params, sdx_gen_result *out) {
    sdx_ctx *ctx;
    sdx__gen g;
    sdx_gen_params p;
    sdx_cond *cond = NULL;
    int rc;
    if (!m || !params || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_generate: params and out are required") : SDX_ERR_INVALID_ARG;
    ctx = m->ctx;
    memset(out, 0, sizeof *out);
    if ((rc = sdx__gen_resolve(&g, m, params)) != SDX_OK) return rc;
    p = *params;
    p.seed = g.seed;                  /* a random seed is drawn once for the batch */
    out->images = (sdx_image *)sdx__calloc(ctx, (size_t)g.batch, sizeof(sdx_image));
    out->latents = (sdx_tensor *)sdx__calloc(ctx, (size_t)g.batch, sizeof(sdx_tensor));
    out->seeds = (int64_t *)sdx__calloc(ctx, (size_t)g.batch, sizeof(int64_t));
    if (!out->images || !out->latents || !out->seeds) { rc = sdx__nomem(ctx, "generation", (size_t)g.batch * 64); goto done; }
    if ((rc = sdx_encode_prompt(m, &p, &cond)) != SDX_OK) goto done;
    for (int i = 0; i < g.batch && rc == SDX_OK; i++) {
        sdx_sampling *s;
        if ((rc = sdx__sess_begin(m, &p, cond, i, 0, &s)) != SDX_OK) break;
        out->seeds[i] = s->seed;
        out->count = i + 1;
        if ((rc = sdx__sess_run(s, 0)) == SDX_OK) {
            out->latents[i] = s->latent;       /* the session's tensor becomes the result's */
            memset(&s->latent, 0, sizeof s->latent);
            sdx__vae_tiling tiling = sdx__gen_tiling(&s->g);
            rc = sdx__decode_to_image(m, &s->g.dec, (const float *)out->latents[i].data, s->g.lh, s->g.lw, &tiling, p.tiling,
                                      &out->images[i]);
            if (rc == SDX_OK && s->g.paste_alpha) sdx__paste_back(&s->g, &out->images[i]);
        }
        sdx_sampling_free(s);
    }
done:
    sdx_cond_free(cond);
    sdx__arena_reset(&m->arena);
    if (rc != SDX_OK) sdx_gen_result_free(ctx, out);
    return rc;
}

/* ---- A1111 "parameters" text ------------------------------------------- */

static const char *sdx__a1111_sampler(const char *name) {
    static const char *const map[][2] = {
        { "euler", "Euler" }, { "euler_a", "Euler a" }, { "euler_ancestral", "Euler a" }, { "heun", "Heun" },
        { "dpm_2", "DPM2" }, { "dpm2", "DPM2" }, { "dpm_2_ancestral", "DPM2 a" }, { "lms", "LMS" },
        { "dpmpp_2s_ancestral", "DPM++ 2S a" }, { "dpm++2s_a", "DPM++ 2S a" }, { "dpmpp_sde", "DPM++ SDE" },
        { "dpmpp_2m", "DPM++ 2M" }, { "dpm++2m", "DPM++ 2M" }, { "dpmpp_2m_sde", "DPM++ 2M SDE" },
        { "dpmpp_2m_sde_heun", "DPM++ 2M SDE Heun" }, { "dpmpp_3m_sde", "DPM++ 3M SDE" }, { "ddim", "DDIM" },
        { "lcm", "LCM" }, { "uni_pc", "UniPC" }, { "deis", "DEIS" }, { "ipndm", "iPNDM" },
    };
    for (int i = 0; i < SDX__ARRAY_LEN(map); i++) if (!strcmp(map[i][0], name)) return map[i][1];
    return name;
}

static const char *sdx__a1111_schedule(const char *name) {
    static const char *const map[][2] = {
        { "normal", "Automatic" }, { "karras", "Karras" }, { "exponential", "Exponential" }, { "sgm_uniform", "SGM Uniform" },
        { "simple", "Simple" }, { "ddim_uniform", "DDIM" }, { "beta", "Beta" }, { "kl_optimal", "KL Optimal" },
        { "ays", "Align Your Steps" }, { "linear_quadratic", "Linear Quadratic" },
    };
    for (int i = 0; i < SDX__ARRAY_LEN(map); i++) if (!strcmp(map[i][0], name)) return map[i][1];
    return name;
}

SDX_API int sdx_format_parameters(const sdx_model *m, const sdx_gen_params *p, int64_t seed, char *buf, size_t size) {
    sdx__buf b;
    const char *neg = p->negative_prompt ? p->negative_prompt : "";
    int w, h, n;
    memset(&b, 0, sizeof b);
    sdx__output_size(m, p, sdx__codec_factor(m, p->codec), &w, &h);
    b.ctx = m ? m->ctx : NULL;
    sdx__buf_str(&b, p->prompt ? p->prompt : "");
    if (*neg) { sdx__buf_str(&b, "\nNegative prompt: "); sdx__buf_str(&b, neg); }
    sdx__buf_fmt(&b, "\nSteps: %d, Sampler: %s, Schedule type: %s, CFG scale: %g, Seed: %lld, Size: %dx%d",
                 p->steps ? p->steps : SDX__DEFAULT_STEPS, sdx__a1111_sampler(p->sampler ? p->sampler : sdx__default_sampler),
                 sdx__a1111_schedule(p->scheduler ? p->scheduler : sdx__default_scheduler),
                 p->cfg_scale != 0 ? p->cfg_scale : SDX__DEFAULT_CFG,
                 (long long)seed, w, h);
    if (m) { sdx__buf_str(&b, ", Model: "); sdx__buf_str(&b, m->name); }
    if (p->init_image || p->init_latent)
        sdx__buf_fmt(&b, ", Denoising strength: %g", p->strength != 0 ? p->strength : SDX__DEFAULT_STRENGTH);
    if (m && m->unet.in_channels == 9) sdx__buf_str(&b, ", Conditional mask weight: 1.0");   /* A1111's default, fixed here */
    if (p->clip_skip > 1) sdx__buf_fmt(&b, ", Clip skip: %d", p->clip_skip);
    if (p->tiling) sdx__buf_str(&b, ", Tiling: True");
    if (p->rng == SDX_RNG_CPU) sdx__buf_str(&b, ", RNG: CPU");
    if (p->mask && p->paste_back && p->mask_blur >= 0) sdx__buf_fmt(&b, ", Mask blur: %d", p->mask_blur ? p->mask_blur : 4);
    sdx__buf_str(&b, ", Version: sdx " SDX_VERSION_STRING);
    if (b.failed) { sdx__free(b.ctx, b.p); return -1; }
    n = (int)b.len;
    if (size) snprintf(buf, size, "%s", b.p ? b.p : "");
    sdx__free(b.ctx, b.p);
    return n;
}

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif /* SDX_IMPLEMENTATION */

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
