#pragma once
#include "../core/api_core.h"
#include "../core/api_safetensors.h"
#include "../family/api_family.h"

/* ===================================================================== */
/*  Public API: models and image generation                              */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

/* Arithmetic of the linear layers and convolutions (sdx_model_desc.compute). */
typedef enum sdx_compute {
    SDX_COMPUTE_DEFAULT = 0,   /* each part's policy macro, SDX_{TEXT,UNET,VAE}_COMPUTE_TYPE
                                  (f32 unless the build sets one)              */
    SDX_COMPUTE_F32,           /* f32: matches the reference implementations   */
    SDX_COMPUTE_BF16           /* weights rounded to bf16, f32 accumulation
                                  (AMX, or AVX512-BF16 on AMD; norms, softmax
                                  stay f32). About 1e-3..1e-2 relative error;
                                  elsewhere it computes in f32 (logged once) */
} sdx_compute;

/* What layer outputs are stored in between operations
 * (sdx_model_desc.activations); the arithmetic stays f32 whatever it is
 * (accumulation, norm statistics, softmax), and stores into f16 saturate. */
typedef enum sdx_activations {
    SDX_ACT_DEFAULT = 0,       /* on the CPU each part's policy macro,
                                  SDX_{TEXT,UNET,VAE}_ACT_TYPE (f32 unless the
                                  build sets one); on a GPU half precision:
                                  the UNet (and ControlNets) f16, the VAE and
                                  TAESD f16, or bf16 for a family whose VAE
                                  outgrows f16 (SDXL), text encoders f32 */
    SDX_ACT_F32,               /* every part f32: the exact mode */
    SDX_ACT_F16,               /* every part f16 (the SDXL VAE may saturate) */
    SDX_ACT_BF16               /* every part bf16 */
} sdx_activations;

/* Each file a model takes can be given by its path field or by the
 * sdx_source field at the end (memory or read callbacks; see
 * api_safetensors.h): one or the other. */
typedef struct sdx_model_desc {
    const char *checkpoint;    /* single-file .safetensors or .gguf
                                  (required, or checkpoint_source)          */
    const char *vae;           /* separate VAE .safetensors replacing the
                                  checkpoint's (optional)                   */
    /* CLIP vocabulary: merges.txt, bpe_simple_vocab_16e6.txt.gz or a folder
     * holding one. NULL (and no vocab_data or vocab_source): the vocabulary
     * compiled in with SDX_EMBED_VOCAB (see sdx_tokenizer_load_embedded),
     * else look next to the checkpoint's file, then $SDX_VOCAB. */
    const char *vocab;
    const void *vocab_data;    /* or an embedded vocabulary (sdx-vocab2c)   */
    size_t      vocab_size;
    const char *prediction;    /* "eps", "v", "x0" ("sample"), "lcm" (LCM
                                  models, ComfyUI's) or NULL: from the
                                  checkpoint (eps, v or x0)                 */
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
    int         no_vocab;      /* 1: load no vocabulary (weights only: LoRA
                                  merging, sdx_model_save; no generation)   */
    int         low_memory;    /* 1: low-memory mode: each text encoder
                                  layer and UNet layer gives its weight
                                  pages back to the OS after it runs (they
                                  are read again from the mapped file or
                                  through the read callback, so results
                                  are unchanged), and the VAE
                                  decodes and encodes in tiles within
                                  SDX_LOW_MEMORY_VAE_BUDGET unless
                                  vae_tiling is -1. Slower: see README   */
    sdx_compute compute;       /* for every part of this model (ControlNets
                                  follow the UNet); DEFAULT: policy macros.
                                  bf16 keeps a bf16 copy of each weight it
                                  uses (the size of the weights in f16)     */
    sdx_activations activations;   /* storage between layers; DEFAULT: the
                                  policy macros on the CPU, half on a GPU   */
    /* The same files from memory or the host's own I/O, each instead of
     * its path field above. The model borrows buffers and calls read
     * callbacks until sdx_model_free. A checkpoint from callbacks is read
     * as the model fetches each weight: those the CPU computes from in
     * the file's dtype stay in memory (with low_memory they go back when
     * a mapped file's pages would, and are read again at their next use),
     * the others (converted, uploaded to a device) go once copied. A
     * buffer is the caller's: low_memory has nothing to give back. */
    sdx_source  checkpoint_source;
    sdx_source  vae_source;
    sdx_source  taesd_source[2];
    sdx_source  vocab_source;
} sdx_model_desc;

typedef struct sdx_model sdx_model;

SDX_API sdx_result sdx_model_load(sdx_ctx *ctx, const sdx_model_desc *desc, sdx_model **out);
SDX_API void sdx_model_free(sdx_model *model);
SDX_API sdx_family     sdx_model_family(const sdx_model *model);
SDX_API sdx_prediction sdx_model_prediction(const sdx_model *model);
/* "model" name used in PNG parameters: the checkpoint file name without
 * folder or extension. */
SDX_API const char    *sdx_model_name(const sdx_model *model);

/* LoRA and LyCORIS files (safetensors): kohya / A1111 (lora_unet_,
 * lora_te_, lora_te1_, lora_te2_; LoCon convolutions), diffusers
 * (attention-processor form, .lora.up/down, PEFT lora_A/lora_B,
 * text_encoder., text_encoder_2., with or without unet.), LyCORIS LoHa,
 * LoKr, GLoRA and full .diff/.diff_b, DoRA, in F32, F16 or BF16. Merged as ComfyUI
 * does: W = W_file + sum over the applied LoRAs, in order, of strength *
 * scale * delta, in f32, rounded once to the weight's storage dtype; only
 * the touched tensors are rewritten. Strengths may be negative; the UNet
 * and the text encoders have their own.
 *
 * apply: checks the whole file first. A tensor that maps to no weight of
 * the model, or whose shape does not fit its weight, fails with a message
 * naming it (expected and found shapes), and the model is unchanged.
 * clear: gives back the checkpoint's weights exactly (no reload).
 * save: writes the checkpoint with the applied LoRAs merged: the same
 * keys, dtypes and metadata; tensors no LoRA touches are byte-identical. */
SDX_API sdx_result sdx_model_apply_lora(sdx_model *model, const char *path, float unet_strength, float te_strength);
/* The same from a buffer or read callbacks (read whole at once); a buffer
 * is borrowed until the LoRA is removed (sdx_model_clear_loras) or the
 * model freed. */
SDX_API sdx_result sdx_model_apply_lora_source(sdx_model *model, const sdx_source *src, float unet_strength,
                                               float te_strength);
SDX_API sdx_result sdx_model_clear_loras(sdx_model *model);
SDX_API int sdx_model_lora_count(const sdx_model *model);
SDX_API sdx_result sdx_model_save(sdx_model *model, const char *path);
/* save, converted as sdx_convert_write does (sdx_convert_params in the
 * safetensors part below; a .gguf path gets GGUF). A merged tensor of a
 * block-quantized file is F32 before the conversion. */
struct sdx_convert_params;
SDX_API sdx_result sdx_model_save_as(sdx_model *model, const char *path, const struct sdx_convert_params *params);

/* What turns latents into pixels and back. AUTO: TAESD when the model has
 * the TAESD half the job needs (sdx_model_desc.taesd), else the VAE. */
typedef enum sdx_codec { SDX_CODEC_AUTO = 0, SDX_CODEC_VAE, SDX_CODEC_TAESD } sdx_codec;
/* ControlNet (SD 1.x / 2.x / SDXL; original, prefix-less or diffusers
 * layout; F32/F16/BF16). Loaded for a model: a ControlNet that does not
 * fit it (other family, other context width) is an error naming both
 * files. The weights stay mapped from the file. Free it after the last
 * generation that uses it, before the model. */
typedef struct sdx_controlnet sdx_controlnet;

SDX_API sdx_result sdx_controlnet_load(sdx_model *model, const char *path, sdx_controlnet **out);
/* The same from a buffer or read callbacks, borrowed until
 * sdx_controlnet_free (as a checkpoint's, sdx_model_desc). */
SDX_API sdx_result sdx_controlnet_load_source(sdx_model *model, const sdx_source *src, sdx_controlnet **out);
SDX_API void sdx_controlnet_free(sdx_controlnet *cn);
/* The file name without folder or extension (PNG parameters). */
SDX_API const char *sdx_controlnet_name(const sdx_controlnet *cn);

/* One ControlNet applied to a generation, as ComfyUI's
 * ControlNetApplyAdvanced on both the prompt and the negative prompt. */
typedef struct sdx_control {
    sdx_controlnet  *net;
    const sdx_image *image;        /* RGB (or grey) control picture, any size:
                                      centre-cropped to the output's aspect and
                                      resized (nearest) to the output size   */
    float strength;                /* residual scale (1 = as trained; 0 = no
                                      effect, not a default)                 */
    float start, end;              /* active part of the schedule, fractions
                                      in [0, 1]; end 0 = 1                   */
    const char *module;            /* preprocessor used, for the PNG
                                      parameters ("canny"); NULL = "none"   */
} sdx_control;

/* Canny edge map of an RGB or grey picture, as OpenCV's cv2.Canny(image,
 * low, high) (3x3 Sobel, L1 gradient; the "canny" preprocessor of A1111
 * and ComfyUI, usual thresholds 100 and 200): white edges on black, RGB,
 * the same size. Free with sdx_image_free. */
SDX_API sdx_result sdx_canny(sdx_ctx *ctx, const sdx_image *in, float low, float high, sdx_image *out);

/* Called after each sampler step; `latent` is the current latent
 * [1, 4, H/8, W/8] (F32). Return non-zero to cancel the generation
 * (sdx_generate then returns SDX_ERR_CANCELLED). */
typedef int (*sdx_progress_fn)(void *user, int image, int step, int steps, const sdx_tensor *latent);
/* Live preview after `step`: the current estimate of the final image (or
 * the noisy latent, with preview_noisy) decoded to RGB. Non-zero cancels
 * as for progress. */
typedef int (*sdx_preview_fn)(void *user, int image, int step, int steps, const sdx_image *preview);
/* Called as sdx_generate enters each phase, for timings (sd-cli's -v):
 * TEXT (image -1) encodes the prompts; then per image ENCODE (the init
 * image, img2img and inpainting only), SAMPLE (the sampler's steps,
 * reported by progress) and DECODE (the final latent to pixels); DONE
 * (image -1) when the results are complete. */
typedef enum sdx_phase { SDX_PHASE_TEXT, SDX_PHASE_ENCODE, SDX_PHASE_SAMPLE, SDX_PHASE_DECODE, SDX_PHASE_DONE } sdx_phase;
typedef void (*sdx_phase_fn)(void *user, sdx_phase phase, int image);

typedef struct sdx_gen_params {
    const char *prompt;            /* A1111 weighting syntax, BREAK       */
    const char *negative_prompt;   /* NULL = ""                           */
    int   width, height;           /* multiples of 8; 0 = the init's size, else the family default */
    int   steps;                   /* 0 = 20                              */
    float cfg_scale;               /* 0 = 7; up to 1 is guidance off: the
                                      prompt alone, no negative pass (as
                                      diffusers' guidance_scale <= 1)      */
    const char *sampler;           /* ComfyUI or sd-cli name; NULL = "euler_a" */
    const char *scheduler;         /* ComfyUI name, "ays", sd_turbo, trailing,
                                      lcm; NULL = "normal"                 */
    /* Few-step models (README "Few-step models"): an explicit schedule in
     * place of steps and scheduler, one or the other. timesteps (diffusers'
     * timesteps=, DMD2's 999, 749, 499, 249): sigma(t) of each, then 0,
     * started as diffusers starts them, from noise * sqrt(1 + sigma0^2)
     * (or an init latent noised to sigma0). sigmas (sd-cli --sigmas): as
     * given, end with 0 for a clean result, started as ComfyUI starts any
     * schedule. With an init the list is the schedule: leave strength 0. */
    const int   *timesteps;
    int          n_timesteps;
    const float *sigmas;
    int          n_sigmas;
    int   use_eta;                 /* 1: eta; 0: the sampler's default     */
    float eta;                     /* tcd's gamma in [0, 1] (default 0.3,
                                      diffusers'); other samplers ignore it */
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
    /* Hires fix (A1111's "Hires. fix"; README "Hires fix"), txt2img only:
     * on when hires_scale > 0 or a hires size is set. The batch is made at
     * width x height; each latent is upscaled (hires_upscaler "latent" =
     * A1111's Latent, bilinear; "latent-bilinear", "latent-nearest",
     * "latent-nearest-exact": sdx_latent_upscale's modes), or decoded,
     * upscaled by an ESRGAN model (a .safetensors path; scaled up to the
     * size, then bilinear down when it overshoots) and encoded; then it is
     * img2img'd at the hires size with the same seed, prompts and sampler.
     * Progress and phases are reported for both passes. */
    int   hires_width, hires_height;  /* multiples of 8; one 0 = by aspect  */
    float hires_scale;             /* 0 = from hires_width/height          */
    int   hires_steps;             /* 0 = steps                            */
    float hires_denoise;           /* the second pass's strength; 0 = 0.7  */
    const char *hires_upscaler;    /* NULL = "latent"                      */
    /* SDXL refiner (README "SDXL refiner"): a second model, loaded with
     * sdx_model_load on the same context, takes the end of the same sigma
     * schedule from the base's latent, leftover noise and all, as
     * ComfyUI's two KSamplerAdvanced do: the base runs steps [0, k), k =
     * round(refiner_switch * steps), the refiner [k, steps) adding no
     * noise, with the same prompts, sampler, cfg and seed; the base model
     * decodes. Both must work in the same latent space (an SDXL refiner,
     * or another SDXL model, for an SDXL base). ControlNets act in the
     * base's steps only; not with a mask or hires fix. The staged API
     * runs both parts in one session (sdx_encode_prompt encodes for both). */
    sdx_model *refiner;            /* NULL = none                          */
    float refiner_switch;          /* fraction of the steps the base takes,
                                      (0, 1]; 0 = 0.8                      */
    float refiner_ascore;          /* aesthetic score an SDXL refiner
                                      (also one used alone) is given with
                                      the prompt; 0 = 6 (SGM, ComfyUI)    */
    float refiner_negative_ascore; /* with the negative prompt; 0 = 2.5    */
    /* ControlNets, their residuals summed */
    const sdx_control *controls;
    int   n_controls;
    /* SDXL size conditioning; 0 = image size / no crop */
    int   orig_width, orig_height, crop_top, crop_left, target_width, target_height;
    int   vae_tiling;              /* 0 auto (memory budget; tiles again after running out of memory), 1 always, -1 never */
    int   vae_tile_width, vae_tile_height;  /* largest VAE tile, latent pixels; 0 = from
                                      the budget (32 when vae_tiling is 1) */
    int   seamless;                /* 1: seamless texture (A1111 "Tiling",
                                      sd-cli --circular): the UNet's and
                                      VAE's convolutions wrap around (not
                                      vae_tiling, which saves memory)      */
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
    /* A1111 extra-network tags in the prompt, <lora:name:w> or
     * <lora:name:te_w:unet_w>: applied from lora_dir/name.safetensors for
     * this generation (on top of sdx_model_apply_lora's), removed from the
     * text before encoding. A tag without lora_dir is an error, and so is
     * a tag given to sdx_encode_prompt (stages: sdx_model_apply_lora). */
    const char *lora_dir;
    /* Textual-inversion embeddings: the .safetensors files of this folder
     * (A1111 "emb_params", one [n, W] tensor, or SDXL "clip_l" + "clip_g"),
     * used where the prompt or negative prompt names them: the bare file
     * name (A1111) or embedding:name (ComfyUI). An embedding of n vectors
     * takes n token positions; weights and BREAK apply as to words. */
    const char *embedding_dir;
    sdx_phase_fn phase;            /* NULL = none */
    void *phase_user;
} sdx_gen_params;

typedef struct sdx_gen_result {
    int        count;
    sdx_image *images;             /* count RGB images                   */
    int64_t   *seeds;              /* the seed of each image             */
    sdx_tensor *latents;           /* final latents before VAE decoding  */
} sdx_gen_result;

SDX_API sdx_result sdx_generate(sdx_model *model, const sdx_gen_params *params, sdx_gen_result *out);
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
 * (cfg <= 1 encodes the prompt alone; SDXL also uses the size fields)
 * and, with params->refiner, for the refiner too. */
typedef struct sdx_cond sdx_cond;
SDX_API sdx_result sdx_encode_prompt(sdx_model *model, const sdx_gen_params *params, sdx_cond **out);
SDX_API void sdx_cond_free(sdx_cond *cond);

/* Samples image `index` of the batch (seed + index) from noise, or from
 * params->init_image (and mask). `cond` must come from the same model and
 * parameters (cfg above 1 or not, SDXL size) and outlive the session. */
typedef struct sdx_sampling sdx_sampling;
SDX_API sdx_result sdx_sampling_begin(sdx_model *model, const sdx_gen_params *params, const sdx_cond *cond, int index,
                                 sdx_sampling **out);
/* One more model evaluation (a sampler step; second-order samplers take
 * two per step). Does nothing once done. params->progress is called for
 * every completed sampler step, here as in sdx_generate. */
SDX_API sdx_result sdx_sampling_step(sdx_sampling *s);
SDX_API sdx_result sdx_sampling_finish(sdx_sampling *s);          /* all remaining steps */
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
 * (decode) seamless. */
SDX_API sdx_result sdx_decode_latent(sdx_model *model, const sdx_tensor *latent, const sdx_gen_params *params, sdx_image *out);
SDX_API sdx_result sdx_encode_image(sdx_model *model, const sdx_image *image, const sdx_gen_params *params, sdx_tensor *latent);

/* A latent [n, c, h, w] (F32/F16/BF16) resized to [n, c, height, width]
 * F32 as torch.nn.functional.interpolate(size=...) does it (A1111's and
 * ComfyUI's latent upscale): mode "nearest", "nearest-exact" or
 * "bilinear" (align_corners False, no antialias). */
SDX_API sdx_result sdx_latent_upscale(sdx_ctx *ctx, const sdx_tensor *in, int width, int height, const char *mode,
                                      sdx_tensor *out);

/* AUTOMATIC1111-style "parameters" text for image `index` of a result:
 * "prompt\nNegative prompt: ...\nSteps: 20, Sampler: ..., Schedule type:
 * ..., CFG scale: 7, Seed: ..., Size: WxH, Model: ...". LoRAs applied
 * with sdx_model_apply_lora are appended to the prompt as <lora:...>
 * tags (prompt tags are there already), and all of them are listed with
 * A1111's short hash in "Lora hashes". Writes as much as fits in buf
 * (always NUL-terminated when size > 0, never splitting a UTF-8 sequence;
 * buf may be NULL when size is 0) and stores the whole text's length,
 * without the NUL, in *length (may be NULL): call once with size 0 to
 * size the buffer. Returns SDX_OK, or SDX_ERR_NOMEM / SDX_ERR_INVALID_ARG. */
SDX_API sdx_result sdx_format_parameters(const sdx_model *model, const sdx_gen_params *params, int64_t seed,
                                  char *buf, size_t size, size_t *length);

#ifdef __cplusplus
}
#endif
