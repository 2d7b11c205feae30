#pragma once
#include "../core/api_core.h"
#include "../core/api_rng.h"
#include "../sampling/api_sampling.h"

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

/* Called after each sampler step; `latent` is the current latent
 * [1, 4, H/8, W/8] (F32). Return non-zero to cancel the generation
 * (sdx_generate then returns SDX_ERR_CANCELLED). */
typedef int (*sdx_progress_fn)(void *user, int image, int step, int steps, const sdx_tensor *latent);

typedef struct sdx_gen_params {
    const char *prompt;            /* A1111 weighting syntax, BREAK       */
    const char *negative_prompt;   /* NULL = ""                           */
    int   width, height;           /* multiples of 8; 0 = family default  */
    int   steps;                   /* 0 = 20                              */
    float cfg_scale;               /* 0 = 7; 1 skips the negative pass    */
    const char *sampler;           /* ComfyUI or sd-cli name; NULL = "euler_a" */
    const char *scheduler;         /* ComfyUI name, "ays"; NULL = "normal" */
    int64_t seed;                  /* < 0: random (reported in the result) */
    sdx_rng_kind rng;              /* SDX_RNG_CPU (ComfyUI) or SDX_RNG_CUDA (A1111) */
    int   clip_skip;               /* 0 or 1 = the model's default layer   */
    int   batch_count;             /* images with seeds seed, seed+1, ...; 0 = 1 */
    /* img2img / inpainting */
    const sdx_image *init_image;   /* RGB, resized by the caller to width x height */
    const sdx_image *mask;         /* grey, white = repaint; needs init_image */
    float strength;                /* img2img denoise in (0, 1]; 0 = 0.75  */
    /* SDXL size conditioning; 0 = image size / no crop */
    int   orig_width, orig_height, crop_top, crop_left, target_width, target_height;
    int   vae_tiling;              /* 0 auto (memory budget), 1 always, -1 never */
    sdx_progress_fn progress;
    void *progress_user;
} sdx_gen_params;

typedef struct sdx_gen_result {
    int        count;
    sdx_image *images;             /* count RGB images                   */
    int64_t   *seeds;              /* the seed of each image             */
    sdx_tensor *latents;           /* final latents before VAE decoding  */
} sdx_gen_result;

SDX_API int  sdx_generate(sdx_model *model, const sdx_gen_params *params, sdx_gen_result *out);
SDX_API void sdx_gen_result_free(sdx_ctx *ctx, sdx_gen_result *res);

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
