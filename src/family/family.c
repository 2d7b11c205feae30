#pragma once
#include "api_family.h"
#include "../core/safetensors.c"

/* ===================================================================== */
/*  Model families: one row each for SD 1.x, SD 2.x, SDXL, SDXL refiner   */
/* ===================================================================== */
/* Widths, depths and block lists are read from the checkpoint. What a
 * file does not say, or says only by convention, is a property of its
 * family and lives here, one row per family: where the text encoders are
 * and how they are read, the UNet clues that tell the attention heads,
 * the v-prediction heuristic, the VAE's latent scale, the trained size,
 * the Align Your Steps table, the LoRA names of the text encoders. The
 * text encoder, UNet, ControlNet, LoRA and pipeline read this table, so
 * a new family is a new row (and its sdx_family value). */

#define SDX__FAMILY_MAX_ENCODERS 2
#define SDX__FAMILY_MAX_ADM 6

/* The numbers SGM's ConcatTimestepEmbedderND embeds after the pooled text
 * vector in a family's vector conditioning (label_emb input), one each. */
typedef enum sdx__adm_term {
    SDX__ADM_ORIG_H, SDX__ADM_ORIG_W,       /* original_size_as_tuple */
    SDX__ADM_CROP_TOP, SDX__ADM_CROP_LEFT,  /* crop_coords_top_left   */
    SDX__ADM_TARGET_H, SDX__ADM_TARGET_W,   /* target_size_as_tuple   */
    SDX__ADM_ASCORE                         /* aesthetic_score        */
} sdx__adm_term;

typedef enum sdx__clip_layout {
    SDX__CLIP_HF = 0,   /* transformers CLIPTextModel names, separate q/k/v */
    SDX__CLIP_OPEN      /* OpenCLIP names, fused in_proj, text_projection   */
} sdx__clip_layout;

/* One text encoder of a family. */
typedef struct sdx__family_encoder {
    const char *prefix[2];       /* where it may live, the first found wins (NULL: none) */
    const char *probe;           /* its key under the prefix that says it is there */
    sdx__clip_layout layout;
    int default_skip;            /* 1 = last layer, 2 = penultimate */
    int norm_context;            /* the final norm applies to the context */
    const char *lora_kohya[2];   /* kohya LoRA module prefixes (NULL: none) */
    const char *lora_diffusers;  /* diffusers LoRA prefix */
} sdx__family_encoder;

typedef struct sdx__family {
    sdx_family id;
    const char *name;            /* as messages say it */
    int n_enc;
    sdx__family_encoder enc[SDX__FAMILY_MAX_ENCODERS];   /* context order */
    /* The UNet: clues its shapes give (sdx__family_of_unet) and the
     * attention heads they stand for: a fixed count or width / head_dim. */
    int unet_adm;                /* vector conditioning (label_emb): the pooled
                                    text vector, then this many numbers embedded */
    sdx__adm_term adm[SDX__FAMILY_MAX_ADM];   /* which, in order */
    int unet_linear_proj;        /* Linear proj_in/proj_out, not 1x1 convs */
    int context_dim;             /* text context width */
    int num_heads, head_dim;
    /* ComfyUI's v-or-eps guess when nothing says: v when this tensor's
     * values spread wider (std) than v_spread (NULL: no guess, eps). */
    const char *v_probe;
    double v_spread;
    float vae_scale;             /* model latent = VAE latent * scale */
    int size_eps, size_v;        /* trained resolution, by prediction */
    const char *ays;             /* scheduler of its Align Your Steps table (NULL: none) */
    int low_noise_only;          /* trained on the low-noise end of the schedule
                                    only (a refiner): cannot start from noise */
    int vae_beyond_f16;          /* its VAE's activations pass f16's range (SDXL's:
                                    sdxl-vae-fp16-fix was made for it), so half
                                    activations there are bf16 */
} sdx__family;

/* Columns: id, name, text encoders (count; each: prefixes, probe, layout,
 * default skip, norm context, kohya LoRA, diffusers LoRA), UNet (adm
 * count and terms, Linear proj, context width, heads, head_dim), v guess
 * (probe, spread), VAE scale, sizes (eps, v), Align Your Steps, low noise
 * only, VAE beyond f16. The SDXL refiner (SGM's sd_xl_refiner.yaml) has bigG alone, as
 * its first embedder, and the aesthetic score where the base has the
 * target size; its LoRA names are ComfyUI's for a lone bigG. */
static const sdx__family sdx__families[] = {
    { SDX_FAMILY_SD1, "SD 1.x",
      1, { { { "cond_stage_model.transformer.text_model.", "cond_stage_model.transformer." },   /* older files lack text_model. */
             "embeddings.token_embedding.weight", SDX__CLIP_HF, 1, 1, { "lora_te_", "lora_te1_" }, "text_encoder." } },
      0, { SDX__ADM_ORIG_H }, 0, 768, 8, 0,
      NULL, 0,
      0.18215f, 512, 512, "ays_sd1", 0, 0 },
    { SDX_FAMILY_SD2, "SD 2.x",
      1, { { { "cond_stage_model.model.", NULL },
             "token_embedding.weight", SDX__CLIP_OPEN, 2, 1, { "lora_te_", "lora_te1_" }, "text_encoder." } },
      0, { SDX__ADM_ORIG_H }, 1, 1024, 0, 64,
      /* 768-v checkpoints were fine-tuned long enough to spread wider than the 512 eps base model */
      "model.diffusion_model.output_blocks.11.1.transformer_blocks.0.norm1.bias", 0.09,
      0.18215f, 512, 768, NULL, 0, 0 },
    { SDX_FAMILY_SDXL, "SDXL",
      2, { { { "conditioner.embedders.0.transformer.text_model.", NULL },
             "embeddings.token_embedding.weight", SDX__CLIP_HF, 2, 0, { "lora_te_", "lora_te1_" }, "text_encoder." },
           { { "conditioner.embedders.1.model.", NULL },
             "token_embedding.weight", SDX__CLIP_OPEN, 2, 0, { "lora_te2_", NULL }, "text_encoder_2." } },
      6, { SDX__ADM_ORIG_H, SDX__ADM_ORIG_W, SDX__ADM_CROP_TOP, SDX__ADM_CROP_LEFT, SDX__ADM_TARGET_H, SDX__ADM_TARGET_W },
      1, 2048, 0, 64,
      NULL, 0,
      0.13025f, 1024, 1024, "ays_sdxl", 0, 1 },   /* a standalone SDXL VAE (fp16-fix) keeps 0.13025 */
    { SDX_FAMILY_SDXL_REFINER, "SDXL refiner",
      1, { { { "conditioner.embedders.0.model.", NULL },
             "token_embedding.weight", SDX__CLIP_OPEN, 2, 0, { "lora_te_", NULL }, "text_encoder." } },
      5, { SDX__ADM_ORIG_H, SDX__ADM_ORIG_W, SDX__ADM_CROP_TOP, SDX__ADM_CROP_LEFT, SDX__ADM_ASCORE },
      1, 1280, 0, 64,
      NULL, 0,
      0.13025f, 1024, 1024, "ays_sdxl", 1, 1 },
};

/* The row of family id, NULL for SDX_FAMILY_UNKNOWN. */
static const sdx__family *sdx__family_get(sdx_family id) {
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__families); i++)
        if (sdx__families[i].id == id) return &sdx__families[i];
    return NULL;
}

SDX_API const char *sdx_family_name(sdx_family f) {
    const sdx__family *row = sdx__family_get(f);
    return row ? row->name : "unknown";
}

/* The prefix under which text encoder e lives in st, NULL when absent. */
static const char *sdx__family_encoder_at(const sdx__family_encoder *e, const sdx_st *st) {
    for (int i = 0; i < SDX__ARRAY_LEN(e->prefix) && e->prefix[i]; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s%s", e->prefix[i], e->probe);
        if (sdx_st_find(st, key)) return e->prefix[i];
    }
    return NULL;
}

/* The family whose every text encoder st holds, NULL when none. */
static const sdx__family *sdx__family_detect(const sdx_st *st) {
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__families); i++) {
        const sdx__family *f = &sdx__families[i];
        int found = 0;
        while (found < f->n_enc && sdx__family_encoder_at(&f->enc[found], st)) found++;
        if (found == f->n_enc) return f;
    }
    return NULL;
}

/* The error for a checkpoint of no known family: what was looked for. */
static int sdx__family_unknown(sdx_ctx *ctx, const sdx_st *st) {
    char looked[1024] = "";
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__families); i++) {
        const sdx__family *f = &sdx__families[i];
        size_t n;
        for (int e = 0; e < f->n_enc; e++)
            for (int p = 0; p < SDX__ARRAY_LEN(f->enc[e].prefix) && f->enc[e].prefix[p]; p++) {
                n = strlen(looked);
                snprintf(looked + n, sizeof looked - n, "%s%s%s", p ? " or " : e ? " + " : i ? ", " : "", f->enc[e].prefix[p],
                         f->enc[e].probe);
            }
        n = strlen(looked);
        snprintf(looked + n, sizeof looked - n, " (%s)", f->name);
    }
    return sdx__fail(ctx, SDX_ERR_MODEL, "%s: no text encoder found; looked for %s", sdx_st_path(st), looked);
}

/* The family a UNet (or a ControlNet's copy of its encoder) belongs to,
 * from the clues its shapes give; the attention heads, which shapes
 * cannot tell (PIPELINE.md), are that family's. Vector conditioning
 * (label_emb) parts the families that have it from those that do not;
 * among those a Linear proj_in (every SD 2.x/SDXL release) outweighs the
 * context width (1024: OpenCLIP-H; 1280: the SDXL refiner); with neither
 * clue (SD 1.x, small test models) the first row wins. Distilled models (SSD-1B, Vega, BK-SDM)
 * keep their family's clues. */
static const sdx__family *sdx__family_of_unet(int adm_channels, int linear_proj, int context_dim) {
    const sdx__family *best = NULL;
    int best_score = -1;
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__families); i++) {
        const sdx__family *f = &sdx__families[i];
        int score = 2 * (linear_proj && f->unet_linear_proj) + (context_dim == f->context_dim);
        if ((adm_channels > 0) != (f->unet_adm != 0) || score <= best_score) continue;
        best = f;
        best_score = score;
    }
    return best;
}
