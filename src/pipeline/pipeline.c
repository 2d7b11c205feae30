#pragma once
#include "api_pipeline.h"
#include "../core/context.c"
#include "../core/rng.c"
#include "../text/text_encoder.c"
#include "../models/unet.c"
#include "../models/controlnet.c"
#include "../models/vae.c"
#include "../models/taesd.c"
#include "../models/lora.c"
#include "../sampling/sampling.c"
#include "canny.c"

/* ===================================================================== */
/*  Pipeline: model loading, txt2img / img2img / inpainting               */
/* ===================================================================== */
/* Follows ComfyUI's KSampler (docs: shared golden PIPELINE.md): prompt ->
 * chunks -> context; noise from seed; start latent; sampler over a
 * denoiser that batches cond and uncond into one UNet call and applies
 * CFG; latent -> codec (VAE: latent / scale factor; TAESD: as is) ->
 * floor(clamp(x)*255). */

/* Activation memory of a VAE pass in low-memory mode, above which it
 * works in tiles (sdx_model_desc.low_memory). */
#ifndef SDX_LOW_MEMORY_VAE_BUDGET
#define SDX_LOW_MEMORY_VAE_BUDGET ((size_t)256 << 20)
#endif

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
    int            low_memory;     /* sdx_model_desc.low_memory */
    sdx__lora     *loras;          /* applied in this order */
    int            n_loras, cap_loras;
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

static int sdx__file_exists(const char *path) { return sdx__path_kind(path) != SDX__PATH_NONE; }

/* The vocabulary: explicit path, next to the checkpoint, or $SDX_VOCAB. */
static int sdx__load_vocab(sdx_model *m, const sdx_model_desc *d) {
    static const char *const names[] = { "merges.txt", "bpe_simple_vocab_16e6.txt.gz", "vocab/merges.txt",
                                         "vocab/bpe_simple_vocab_16e6.txt.gz" };
    char path[4096];
    const char *env = getenv("SDX_VOCAB");
    const char *slash;
    if (d->vocab_data) return sdx_tokenizer_load_memory(m->ctx, d->vocab_data, d->vocab_size, &m->tok);
    if (d->vocab) return sdx_tokenizer_load(m->ctx, d->vocab, &m->tok);
    slash = sdx__last_separator(d->checkpoint);
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
    for (int i = 0; i < m->n_loras; i++) sdx__lora_free(ctx, &m->loras[i]);
    sdx__free(ctx, m->loras);
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
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(m->ctx, m->taesd_file[i], NULL) != SDX_OK) return SDX_ERR_NONFINITE;
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
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(ctx, m->ckpt, NULL) != SDX_OK) { rc = SDX_ERR_NONFINITE; goto fail; }
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
    m->low_memory = d->low_memory != 0;
    if (!d->codecs_only) {
        if ((rc = sdx__textenc_load(ctx, &m->te, m->ckpt)) != SDX_OK) goto fail;
        m->loaded_te = 1;
        for (int i = 0; i < m->te.n_enc; i++) m->te.enc[i].low_memory = m->low_memory;
        if ((rc = sdx__unet_load(ctx, &m->unet, m->ckpt, "model.diffusion_model.")) != SDX_OK) goto fail;
        m->loaded_unet = 1;
        m->unet.low_memory = m->low_memory;
        if (m->unet.context_dim != m->te.context_dim) {
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: the UNet expects %d-wide text context but the text encoders give %d",
                           d->checkpoint, m->unet.context_dim, m->te.context_dim);
            goto fail;
        }
    }
    if (d->vae) {
        if ((rc = sdx_st_open(ctx, d->vae, &m->vae_file)) != SDX_OK) goto fail;
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(ctx, m->vae_file, NULL) != SDX_OK) { rc = SDX_ERR_NONFINITE; goto fail; }
    }
    if (m->ckpt) {
        if ((rc = sdx__vae_load(ctx, &m->vae, m->vae_file ? m->vae_file : m->ckpt, m->vae_file ? NULL : "first_stage_model.")) != SDX_OK)
            goto fail;
        m->loaded_vae = 1;
        m->vae.low_memory = m->low_memory;
    }
    if (d->compute != SDX_COMPUTE_DEFAULT) {
        sdx_dtype c = d->compute == SDX_COMPUTE_BF16 ? SDX_BF16 : SDX_F32;
        if (d->compute != SDX_COMPUTE_F32 && d->compute != SDX_COMPUTE_BF16) {
            rc = sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_model_load: compute %d is not SDX_COMPUTE_DEFAULT, _F32 or _BF16",
                           (int)d->compute);
            goto fail;
        }
        m->te.compute_type = c;
        m->unet.compute_type = c;
        m->vae.compute_type = c;
    }
    if ((rc = sdx__load_taesd(m, d)) != SDX_OK) goto fail;
    if ((rc = sdx__check_codecs(m, d)) != SDX_OK) goto fail;
    if (!d->codecs_only) {
        if ((rc = sdx__detect_prediction(m, d->prediction)) != SDX_OK) goto fail;
        if (!d->no_vocab && (rc = sdx__load_vocab(m, d)) != SDX_OK) goto fail;
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

/* ---- LoRA ------------------------------------------------------------ */

/* Opens and checks a LoRA against the model, then merges it on top of the
 * ones applied before. Nothing is patched unless every tensor maps and
 * fits; a failure while writing removes all LoRAs (the model is then the
 * checkpoint again) and says so. */
static int sdx__model_push_lora(sdx_model *m, const char *path, float unet_strength, float te_strength) {
    sdx_ctx *ctx = m->ctx;
    sdx__lora_map map;
    sdx__lora l;
    int rc;
    if (m->n_loras == m->cap_loras) {
        int ncap = m->cap_loras ? m->cap_loras * 2 : 4;
        sdx__lora *nl = (sdx__lora *)sdx__realloc(ctx, m->loras, sizeof *nl * (size_t)ncap);
        if (!nl) return sdx__nomem(ctx, "LoRA list", sizeof *nl * (size_t)ncap);
        m->loras = nl;
        m->cap_loras = ncap;
    }
    if ((rc = sdx__lora_map_build(ctx, &m->te, &m->unet, &map)) != SDX_OK) return rc;
    rc = sdx__lora_open(ctx, path, &map, &l);
    sdx__lora_map_free(ctx, &map);
    if (rc != SDX_OK) return rc;
    l.unet_strength = unet_strength;
    l.te_strength = te_strength;
    sdx__lora_short_hash(l.st, l.hash);
    m->loras[m->n_loras++] = l;
    if ((rc = sdx__lora_rewrite(ctx, m->loras, m->n_loras, &m->loras[m->n_loras - 1])) != SDX_OK) {
        char msg[1100];
        snprintf(msg, sizeof msg, "%s", sdx_last_error(ctx));
        sdx_model_clear_loras(m);
        return sdx__fail(ctx, rc, "%s (all LoRAs were removed)", msg);
    }
    sdx__log(ctx, SDX_LOG_INFO, "%s: LoRA with %d modules, strengths unet %g, text encoder %g", path, l.n_mod,
             (double)unet_strength, (double)te_strength);
    return SDX_OK;
}

/* Removes the LoRAs applied after the first `keep`, restoring what they
 * touched from the file and the LoRAs that stay. */
static int sdx__model_pop_loras(sdx_model *m, int keep) {
    int rc = SDX_OK;
    while (m->n_loras > keep) {
        sdx__lora *l = &m->loras[--m->n_loras];
        int r = sdx__lora_rewrite(m->ctx, m->loras, m->n_loras, l);
        if (rc == SDX_OK) rc = r;
        sdx__lora_free(m->ctx, l);
    }
    return rc;
}

SDX_API int sdx_model_apply_lora(sdx_model *m, const char *path, float unet_strength, float te_strength) {
    if (!m || !path) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_model_apply_lora: no LoRA path") : SDX_ERR_INVALID_ARG;
    if (!isfinite(unet_strength) || !isfinite(te_strength))
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "%s: LoRA strengths must be finite", path);
    return sdx__model_push_lora(m, path, unet_strength, te_strength);
}

SDX_API int sdx_model_clear_loras(sdx_model *m) {
    int rc = SDX_OK;
    if (!m) return SDX_OK;
    /* every slot back to the file, whatever state a failed write left */
    for (int i = 0; i < m->n_loras; i++)
        for (int k = 0; k < m->loras[i].n_mod; k++) {
            const sdx__lora_module *md = &m->loras[i].mod[k];
            int r = sdx__wslot_reset(md->tg.w, sdx__lora_module_slot(md));
            if (rc == SDX_OK) rc = r;
        }
    for (int i = 0; i < m->n_loras; i++) sdx__lora_free(m->ctx, &m->loras[i]);
    m->n_loras = 0;
    return rc;
}

SDX_API int sdx_model_lora_count(const sdx_model *m) { return m ? m->n_loras : 0; }

SDX_API int sdx_model_save(sdx_model *m, const char *path) {
    sdx_ctx *ctx;
    int n, rc = SDX_OK, n_meta;
    sdx_tensor *ts;
    const char **meta;
    if (!m || !path) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_model_save: no output path") : SDX_ERR_INVALID_ARG;
    ctx = m->ctx;
    n = sdx_st_count(m->ckpt);
    n_meta = sdx_st_meta_count(m->ckpt);
    ts = (sdx_tensor *)sdx__calloc(ctx, (size_t)(n ? n : 1), sizeof *ts);
    meta = (const char **)sdx__calloc(ctx, (size_t)(2 * n_meta + 1), sizeof *meta);
    if (!ts || !meta) { sdx__free(ctx, ts); sdx__free(ctx, (void *)meta); return sdx__nomem(ctx, "checkpoint index", sizeof *ts * (size_t)n); }
    for (int i = 0; i < n_meta; i++) sdx_st_meta_at(m->ckpt, i, &meta[2 * i], &meta[2 * i + 1]);
    for (int i = 0; i < n && rc == SDX_OK; i++) {
        const sdx_tensor *t = sdx_st_get(m->ckpt, i);
        sdx__wslot *slot = NULL;
        ts[i] = *t;
        ts[i].owned = 0;
        for (int j = 0; j < m->n_loras && !slot; j++)
            for (int k = 0; k < m->loras[j].n_mod && !slot; k++) {
                sdx__wslot *s = sdx__lora_module_slot(&m->loras[j].mod[k]);
                if (s->file == t) slot = s;
            }
        if (slot) {     /* merged in f32 and rounded once to the file's dtype */
            int64_t cnt = sdx_tensor_numel(t);
            float *w = (float *)sdx__malloc(ctx, (size_t)cnt * sizeof(float));
            void *out = sdx__malloc(ctx, sdx_tensor_nbytes(t));
            if (!w || !out) { sdx__free(ctx, w); sdx__free(ctx, out); rc = sdx__nomem(ctx, t->name, sdx_tensor_nbytes(t)); break; }
            rc = sdx__lora_merged(ctx, m->loras, m->n_loras, slot, w);
            if (t->dtype == SDX_F16) sdx_f32_to_f16_n(w, (uint16_t *)out, (size_t)cnt);
            else sdx__store_f32(out, t->dtype, 0, cnt, w);
            sdx__free(ctx, w);
            ts[i].data = out;
            ts[i].owned = 1;
        }
    }
    if (rc == SDX_OK) rc = sdx_st_write(ctx, path, ts, n, meta, n_meta);
    for (int i = 0; i < n; i++) if (ts[i].owned) sdx__free(ctx, ts[i].data);
    sdx__free(ctx, ts);
    sdx__free(ctx, (void *)meta);
    return rc;
}

/* <lora:name:...> tags of the prompt: applied for this generation from
 * `dir` (DIR/name.safetensors), removed afterwards. */
static int sdx__gen_push_prompt_loras(sdx_model *m, const char *dir, const sdx__lora_tag *tags, int n_tags) {
    for (int i = 0; i < n_tags; i++) {
        char path[4096];
        size_t len = strlen(tags[i].name);
        int rc, has_ext = len > 12 && !strcmp(tags[i].name + len - 12, ".safetensors");
        if (!dir || !*dir)
            return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "the prompt names LoRA '%s' but no LoRA folder is set "
                             "(--lora-model-dir, sdx_gen_params.lora_dir)", tags[i].name);
        snprintf(path, sizeof path, "%s/%s%s", dir, tags[i].name, has_ext ? "" : ".safetensors");
        if (!sdx__file_exists(path))
            return sdx__fail(m->ctx, SDX_ERR_IO, "the prompt names LoRA '%s': %s does not exist", tags[i].name, path);
        if ((rc = sdx__model_push_lora(m, path, tags[i].unet, tags[i].te)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

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

/* ---- ControlNets --------------------------------------------------------- */

struct sdx_controlnet {
    sdx_ctx *ctx;
    sdx_st *file;
    sdx__controlnet net;
    int loaded;
    char name[128];
};

SDX_API void sdx_controlnet_free(sdx_controlnet *cn) {
    if (!cn) return;
    if (cn->loaded) sdx__controlnet_free(&cn->net);
    sdx_st_close(cn->file);
    sdx__free(cn->ctx, cn);
}

SDX_API int sdx_controlnet_load(sdx_model *m, const char *path, sdx_controlnet **out) {
    sdx_controlnet *cn;
    const char *base, *dot;
    int rc;
    if (!out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_controlnet_load: out is NULL") : SDX_ERR_INVALID_ARG;
    *out = NULL;
    if (!m || !path) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_controlnet_load: a model and a path are required") : SDX_ERR_INVALID_ARG;
    cn = (sdx_controlnet *)sdx__calloc(m->ctx, 1, sizeof *cn);
    if (!cn) return sdx__nomem(m->ctx, "controlnet", sizeof *cn);
    cn->ctx = m->ctx;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    snprintf(cn->name, sizeof cn->name, "%.*s", dot ? (int)(dot - base) : (int)strlen(base), base);
    if ((rc = sdx_st_open(m->ctx, path, &cn->file)) == SDX_OK && (rc = sdx__controlnet_load(m->ctx, &cn->net, cn->file)) == SDX_OK) {
        cn->loaded = 1;
        cn->net.enc.low_memory = m->low_memory;
        rc = sdx__controlnet_fit(m->ctx, &cn->net, &m->unet, sdx_st_path(m->ckpt));
    }
    if (rc != SDX_OK) { sdx_controlnet_free(cn); return rc; }
    sdx__log(m->ctx, SDX_LOG_INFO, "%s: %s ControlNet, %d input blocks, hint %d channels%s", path, sdx__cn_family(&cn->net.enc),
             cn->net.enc.n_in, cn->net.hint_channels, cn->net.diffusers ? " (diffusers layout)" : "");
    *out = cn;
    return SDX_OK;
}

SDX_API const char *sdx_controlnet_name(const sdx_controlnet *cn) { return cn ? cn->name : ""; }

/* ComfyUI's ModelSamplingDiscrete.percent_to_sigma, in its float32 steps:
 * log sigma interpolated at timestep (1 - p) * 999. */
static double sdx__percent_to_sigma(const sdx_model_sampling *ms, double p) {
    float t, w, a, b;
    int lo, hi;
    if (p <= 0.0) return 999999999.9;
    if (p >= 1.0) return 0.0;
    t = (float)((1.0 - p) * 999.0);
    t = t < 0 ? 0 : t > (float)(SDX_TRAIN_STEPS - 1) ? (float)(SDX_TRAIN_STEPS - 1) : t;
    lo = (int)floorf(t);
    hi = (int)ceilf(t);
    w = t - floorf(t);
    a = (1.0f - w) * ms->log_sigmas[lo];   /* separate statements: no fused multiply-add */
    b = w * ms->log_sigmas[hi];
    return (double)expf(a + b);
}

/* One ControlNet of a generation: its picture at the output size and the
 * sigma window in which it runs. */
typedef struct sdx__gen_control {
    sdx_controlnet *net;
    float strength;
    float sigma_start, sigma_end;   /* runs while sigma_end <= sigma <= sigma_start */
    float *hint;                    /* [hint_channels, height, width] */
} sdx__gen_control;

/* ControlBase.get_control: checked for every model call, Heun's second
 * included; compared in float32 as ComfyUI compares its sigma tensor. */
static int sdx__control_active(const sdx__gen_control *c, float sigma) {
    return !(sigma > c->sigma_start || sigma < c->sigma_end);
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
    /* ControlNets and the residuals of the current model call */
    sdx__gen_control *controls;
    int n_controls;
    sdx__unet_control control;
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
    sdx__embdb db, *emb = NULL;
    int rc, n;
    int64_t shape[3];
    memset(&pos, 0, sizeof pos);
    memset(&neg, 0, sizeof neg);
    cond->m = m;
    cond->width = g->width;
    cond->height = g->height;
    cond->n_cond = g->cfg == 1.0f ? 1 : 2;
    if (g->p->embedding_dir && *g->p->embedding_dir) {
        int width[SDX__EMB_MAX_ENC];
        for (int e = 0; e < m->te.n_enc && e < SDX__EMB_MAX_ENC; e++) width[e] = m->te.enc[e].width;
        if ((rc = sdx__embdb_open(ctx, m->tok, g->p->embedding_dir, m->te.n_enc, width, &db)) != SDX_OK) return rc;
        emb = &db;
    }
    if ((rc = sdx__prompt_chunks_emb(ctx, m->tok, emb, g->p->prompt ? g->p->prompt : "", &pos, NULL)) != SDX_OK) goto done;
    if (cond->n_cond == 2 &&
        (rc = sdx__prompt_chunks_emb(ctx, m->tok, emb, g->p->negative_prompt ? g->p->negative_prompt : "", &neg, NULL)) != SDX_OK)
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
    sdx__embdb_free(emb);
    return rc;
}

/* ---- img2img and inpainting inputs ------------------------------------ */
/* ComfyUI's graphs, node by node (shared golden img2img/README.md):
 * VAEEncode (crop, [-1, 1], posterior, scale), SetLatentNoiseMask (4-channel
 * models) or InpaintModelConditioning (9-channel models), KSampler. */

static sdx__vae_tiling sdx__tiling(const sdx_model *m, const sdx_gen_params *p) {
    sdx__vae_tiling t;
    memset(&t, 0, sizeof t);
    t.mode = p ? p->vae_tiling : 0;
    t.tile_w = p ? p->vae_tile_width : 0;    /* 0: the VAE's choice */
    t.tile_h = p ? p->vae_tile_height : 0;
    if (m->low_memory) t.budget_bytes = SDX_LOW_MEMORY_VAE_BUDGET;
    return t;
}

static sdx__vae_tiling sdx__gen_tiling(const sdx__gen *g) { return sdx__tiling(g->m, g->p); }

/* A stage is over: the arena gives its blocks back (the next stage sizes
 * its own), and the log says what the stage peaked at. The caller has
 * released the stage's weight pages. */
static void sdx__stage_done(sdx_model *m, const char *stage) {
    size_t act = m->arena.peak;
    sdx__arena_reset(&m->arena);
    sdx__arena_trim(&m->arena);
    if (act) sdx__log(m->ctx, SDX_LOG_INFO, "%s: activations peaked at %zu MB; process peak RSS so far %zu MB", stage, act >> 20,
             sdx_peak_rss() >> 20);
}

/* The VAE's and TAESD's mapped weights, after a decode or an encode. */
static void sdx__release_codecs(sdx_model *m) {
    if (m->loaded_vae) sdx__wset_release_all(&m->vae.w);
    sdx__wset_release_all(&m->taesd.dec.w);
    sdx__wset_release_all(&m->taesd.enc.w);
}

/* The UNet's (and the ControlNets') mapped weights: not needed again
 * until the next sampling, and the VAE decode comes first. */
static void sdx__release_unet(sdx__gen *g) {
    sdx__wset_release_all(&g->m->unet.w);
    for (int i = 0; i < g->n_controls; i++) sdx__wset_release_all(&g->controls[i].net->net.enc.w);
}

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

/* Checks each control, makes its picture the ControlNet input at the
 * output size and its window in sigmas (ControlBase.pre_run). */
static int sdx__gen_prepare_controls(sdx__gen *g) {
    sdx_model *m = g->m;
    sdx_ctx *ctx = m->ctx;
    const sdx_gen_params *p = g->p;
    int rc;
    if (p->n_controls < 0 || p->n_controls > 64 || (p->n_controls && !p->controls))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%d controls: must be 0..64 with a list", p->n_controls);
    if (!p->n_controls) return SDX_OK;
    g->controls = (sdx__gen_control *)sdx__calloc(ctx, (size_t)p->n_controls, sizeof *g->controls);
    if (!g->controls) return sdx__nomem(ctx, "controls", (size_t)p->n_controls * sizeof *g->controls);
    g->n_controls = p->n_controls;
    for (int i = 0; i < p->n_controls; i++) {
        const sdx_control *c = &p->controls[i];
        sdx__gen_control *gc = &g->controls[i];
        const sdx_image *img = c->image;
        float end = c->end != 0 ? c->end : 1.0f;
        size_t n;
        if (!c->net) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "control %d: no ControlNet", i);
        if (!img || !img->data || img->width < 1 || img->height < 1 || (img->channels != 3 && img->channels != 1))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "control %d (%s): needs an RGB or grey picture", i, c->net->name);
        if (!isfinite(c->strength) || !(c->start >= 0 && c->start < end && end <= 1))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "control %d (%s): strength %g, start %g, end %g: need a finite strength "
                             "and 0 <= start < end <= 1", i, c->net->name, c->strength, c->start, end);
        /* a ControlNet loaded for another model */
        if ((rc = sdx__controlnet_fit(ctx, &c->net->net, &m->unet, sdx_st_path(m->ckpt))) != SDX_OK) return rc;
        gc->net = c->net;
        gc->strength = c->strength;
        gc->sigma_start = (float)sdx__percent_to_sigma(&m->ms, c->start);
        gc->sigma_end = (float)sdx__percent_to_sigma(&m->ms, end);
        n = (size_t)c->net->net.hint_channels * (size_t)g->width * (size_t)g->height;
        gc->hint = (float *)sdx__malloc(ctx, n * sizeof(float));
        if (!gc->hint) return sdx__nomem(ctx, "control picture", n * sizeof(float));
        sdx__control_hint(img->data, img->width, img->height, img->channels, g->width, g->height, c->net->net.hint_channels, gc->hint);
    }
    return SDX_OK;
}

/* The control picture as a [B, C, height, width] arena tensor: one copy
 * per batch item (cond, uncond). */
static int sdx__gen_hint(sdx__gen *g, const sdx__gen_control *c, int64_t B, sdx_tensor *hint) {
    sdx__arena *a = &g->m->arena;
    size_t one = (size_t)c->net->net.hint_channels * (size_t)g->width * (size_t)g->height;
    float *host;
    if (!sdx__arena_tensor4(a, hint, g->m->unet.act_type, B, c->net->net.hint_channels, g->height, g->width) ||
        !(host = (float *)sdx__arena_host_alloc(a, sizeof(float) * one * (size_t)B)))
        return SDX_ERR_NOMEM;
    for (int64_t b = 0; b < B; b++) memcpy(host + (size_t)b * one, c->hint, sizeof(float) * one);
    return sdx__upload(g->m->ctx, hint, host);
}

/* The summed residuals of the ControlNets active at sigma for x [B, 4, h,
 * w] (scaled), or NULL in *out when none is: the plain UNet runs. Arena
 * tensors: the caller releases them with the call. */
static int sdx__gen_run_controls(sdx__gen *g, const sdx_tensor *x, float sigma, const float *timesteps, sdx__unet_control **out) {
    sdx_model *m = g->m;
    int rc = SDX_OK, ran = 0;
    *out = NULL;
    for (int i = 0; i < g->n_controls && rc == SDX_OK; i++) {
        sdx__gen_control *c = &g->controls[i];
        sdx__controlnet *net = &c->net->net;
        sdx_tensor hint;
        int active = sdx__control_active(c, sigma);
        sdx__log(m->ctx, SDX_LOG_DEBUG, "controlnet %d (%s): model call at sigma %.9g: %s", i, c->net->name, sigma,
                 active ? "on" : "off");
        if (!active) continue;
        if (!ran && (rc = sdx__controlnet_alloc(net, &m->arena, m->unet.act_type, x->shape[0], g->lh, g->lw, &g->control)) != SDX_OK)
            break;
        net->enc.act_type = m->unet.act_type;
        net->enc.compute_type = m->unet.compute_type;
        if ((rc = sdx__gen_hint(g, c, x->shape[0], &hint)) != SDX_OK) break;
        rc = sdx__controlnet_forward(m->ctx, net, &m->arena, x, timesteps, &g->cond->unet_context,
                                     g->cond->y.data ? &g->cond->unet_y : NULL, &hint,
                                     c->strength, &g->control, ran);
        if (m->low_memory) sdx__wset_release_all(&net->enc.w);   /* the hint block and zero convs too */
        ran = 1;
    }
    if (rc == SDX_OK && ran) *out = &g->control;
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
    sdx_tensor xin, out, x4;
    sdx__unet_control *control = NULL;
    if (g->latent_mask) {       /* the model sees, and returns, the kept part */
        sdx__mask_blend(g, x_in, sigma, g->scratch);
        x = g->scratch;
    }
    if (!sdx__arena_tensor4(&m->arena, &xin, m->unet.act_type, B, cin, g->lh, g->lw) ||
        !sdx__arena_tensor4(&m->arena, &out, SDX_F32, B, g->lc, g->lh, g->lw)) {
        sdx__arena_release(&m->arena, mark);
        return SDX_ERR_NOMEM;
    }
    x4 = xin;
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
        /* a ControlNet sees the latent without the inpainting channels */
        if (rc == SDX_OK && g->n_controls && cin != 4) {
            float *x4h = (float *)sdx__arena_host_alloc(&m->arena, sizeof(float) * (size_t)B * n);
            if (!x4h || !sdx__arena_tensor4(&m->arena, &x4, m->unet.act_type, B, 4, g->lh, g->lw)) {
                sdx__arena_release(&m->arena, mark);
                return SDX_ERR_NOMEM;
            }
            for (int b = 0; b < B; b++) memcpy(x4h + (size_t)b * n, xs + (size_t)b * (size_t)cin * plane, sizeof(float) * n);
            rc = sdx__upload(ctx, &x4, x4h);
        }
    }
    timesteps[0] = timesteps[1] = (float)sdx_sigma_to_timestep(&m->ms, sigma);
    if (rc == SDX_OK) rc = sdx__gen_run_controls(g, &x4, sigma, timesteps, &control);
    if (rc == SDX_OK) {
        if (g->p->tiling) sdx__circular_begin(ctx);
        rc = sdx__unet_forward_control(ctx, &m->unet, &m->arena, &xin, timesteps, &g->cond->unet_context,
                                       g->cond->y.data ? &g->cond->unet_y : NULL, control, &out);
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
    for (int i = 0; i < g->n_controls; i++) sdx__free(ctx, g->controls[i].hint);
    sdx__free(ctx, g->controls);
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
    if (!m->loaded_unet)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "model '%s' was loaded with codecs_only: it can decode and encode, not generate", m->name);
    if (!m->tok) return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_prompt: the model was loaded without a vocabulary (no_vocab)");
    if (p->prompt && strstr(p->prompt, "<lora:")) {
        /* sdx_generate applies the tags around all stages; one stage cannot */
        sdx__lora_tag *tags = NULL;
        char *clean = NULL;
        int n_tags = 0;
        if ((rc = sdx__lora_tags(m->ctx, p->prompt, &clean, &tags, &n_tags)) != SDX_OK) return rc;
        if (n_tags)
            rc = sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_prompt: the prompt names LoRA '%s'; <lora:> tags are applied by "
                           "sdx_generate, with the staged API apply LoRAs with sdx_model_apply_lora", tags[0].name);
        sdx__free(m->ctx, clean);
        sdx__free(m->ctx, tags);
        if (rc != SDX_OK) return rc;
    }
    if ((rc = sdx__gen_resolve(&g, m, p)) != SDX_OK) return rc;
    if (!(cond = (sdx_cond *)sdx__calloc(m->ctx, 1, sizeof *cond))) return sdx__nomem(m->ctx, "conditioning", sizeof *cond);
    cond->m = m;
    rc = sdx__gen_condition(&g, cond);
    sdx__textenc_release(&m->te);
    sdx__stage_done(m, "text encoding");
    if (rc != SDX_OK) { sdx_cond_free(cond); return rc; }
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
    sdx__release_unet(&s->g);
    sdx__stage_done(s->g.m, "sampling");
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
    if (rc == SDX_OK) rc = sdx__gen_prepare_controls(&s->g);
    if (s->g.init_latent) sdx__release_codecs(m);    /* the init image was encoded */
    sdx__stage_done(m, "encoding the init image");
    if (rc != SDX_OK) { sdx_sampling_free(s); return rc; }
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
    sdx__vae_tiling tiling;
    char sh[96];
    int rc;
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_decode_latent: out is required") : SDX_ERR_INVALID_ARG;
    tiling = sdx__tiling(m, p);
    if ((rc = sdx__codec_pick(m, p ? p->codec : SDX_CODEC_AUTO, 0, &c)) != SDX_OK) return rc;
    if (!latent || latent->dtype != SDX_F32 || latent->device || latent->ndim != 4 || latent->shape[0] != 1 ||
        latent->shape[1] != c.channels || latent->shape[2] < 1 || latent->shape[3] < 1 || latent->shape[2] * c.factor > 16384 ||
        latent->shape[3] * c.factor > 16384 || !latent->data)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_decode_latent: latent %s %s; expected host F32 [1, %d, h, w], h and w 1..%d",
                         latent ? sdx_shape_str(latent, sh, sizeof sh) : "NULL", latent ? sdx_dtype_name(latent->dtype) : "",
                         c.channels, 16384 / c.factor);
    rc = sdx__decode_to_image(m, &c, (const float *)latent->data, (int)latent->shape[2], (int)latent->shape[3], &tiling,
                              p ? p->tiling : 0, out);
    sdx__release_codecs(m);
    sdx__stage_done(m, "decoding");
    return rc;
}

SDX_API int sdx_encode_image(sdx_model *m, const sdx_image *img, const sdx_gen_params *p, sdx_tensor *latent) {
    sdx__codec c;
    sdx__vae_tiling tiling;
    float *x = NULL, *eps = NULL, *std = NULL;
    int w, h, encode_sample = p && p->encode_sample;
    size_t n;
    int64_t shape[4];
    int rc;
    if (latent) memset(latent, 0, sizeof *latent);
    if (!m || !img || !latent) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_image: image and latent are required") : SDX_ERR_INVALID_ARG;
    tiling = sdx__tiling(m, p);
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
    sdx__release_codecs(m);
    sdx__stage_done(m, "encoding");
    return rc;
}

/* ---- txt2img / img2img / inpainting: the stages in a row ------------------- */

static int sdx__generate(sdx_model *m, const sdx_gen_params *params, sdx_gen_result *out);

SDX_API int sdx_generate(sdx_model *m, const sdx_gen_params *p, sdx_gen_result *out) {
    sdx_gen_params q;
    sdx__lora_tag *tags = NULL;
    char *clean = NULL;
    int n_tags = 0, keep, rc, rc2;
    if (!m || !p || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_generate: params and out are required") : SDX_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (!m->loaded_unet)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "model '%s' was loaded with codecs_only: it can decode and encode, not generate", m->name);
    if (!m->tok) return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_generate: the model was loaded without a vocabulary (no_vocab)");
    if (!p->prompt || !strstr(p->prompt, "<lora:")) return sdx__generate(m, p, out);
    if ((rc = sdx__lora_tags(m->ctx, p->prompt, &clean, &tags, &n_tags)) != SDX_OK) return rc;
    q = *p;
    q.prompt = clean;
    keep = m->n_loras;
    rc = sdx__gen_push_prompt_loras(m, p->lora_dir, tags, n_tags);
    if (rc == SDX_OK) rc = sdx__generate(m, &q, out);
    rc2 = sdx__model_pop_loras(m, keep);
    if (rc == SDX_OK && rc2 != SDX_OK) { sdx_gen_result_free(m->ctx, out); rc = rc2; }
    sdx__free(m->ctx, clean);
    sdx__free(m->ctx, tags);
    return rc;
}

static void sdx__gen_phase(const sdx_gen_params *p, sdx_phase phase, int image) {
    if (p->phase) p->phase(p->phase_user, phase, image);
}

static int sdx__generate(sdx_model *m, const sdx_gen_params *params, sdx_gen_result *out) {
    sdx_ctx *ctx;
    sdx__gen g;
    sdx_gen_params p;
    sdx_cond *cond = NULL;
    int rc;
    ctx = m->ctx;
    memset(out, 0, sizeof *out);
    if ((rc = sdx__gen_resolve(&g, m, params)) != SDX_OK) return rc;
    p = *params;
    p.seed = g.seed;                  /* a random seed is drawn once for the batch */
    out->images = (sdx_image *)sdx__calloc(ctx, (size_t)g.batch, sizeof(sdx_image));
    out->latents = (sdx_tensor *)sdx__calloc(ctx, (size_t)g.batch, sizeof(sdx_tensor));
    out->seeds = (int64_t *)sdx__calloc(ctx, (size_t)g.batch, sizeof(int64_t));
    if (!out->images || !out->latents || !out->seeds) { rc = sdx__nomem(ctx, "generation", (size_t)g.batch * 64); goto done; }
    sdx__gen_phase(&p, SDX_PHASE_TEXT, -1);
    if ((rc = sdx_encode_prompt(m, &p, &cond)) != SDX_OK) goto done;
    for (int i = 0; i < g.batch && rc == SDX_OK; i++) {
        sdx_sampling *s;
        if (p.init_image) sdx__gen_phase(&p, SDX_PHASE_ENCODE, i);
        if ((rc = sdx__sess_begin(m, &p, cond, i, 0, &s)) != SDX_OK) break;
        out->seeds[i] = s->seed;
        out->count = i + 1;
        sdx__gen_phase(&p, SDX_PHASE_SAMPLE, i);
        if ((rc = sdx__sess_run(s, 0)) == SDX_OK) {
            out->latents[i] = s->latent;       /* the session's tensor becomes the result's */
            memset(&s->latent, 0, sizeof s->latent);
            sdx__gen_phase(&p, SDX_PHASE_DECODE, i);
            sdx__vae_tiling tiling = sdx__gen_tiling(&s->g);
            rc = sdx__decode_to_image(m, &s->g.dec, (const float *)out->latents[i].data, s->g.lh, s->g.lw, &tiling, p.tiling,
                                      &out->images[i]);
            sdx__release_codecs(m);
            sdx__stage_done(m, "decoding");
            if (rc == SDX_OK && s->g.paste_alpha) sdx__paste_back(&s->g, &out->images[i]);
        }
        sdx_sampling_free(s);
    }
    if (rc == SDX_OK) sdx__gen_phase(&p, SDX_PHASE_DONE, -1);
done:
    sdx_cond_free(cond);
    sdx__arena_reset(&m->arena);
    if (rc != SDX_OK) sdx_gen_result_free(ctx, out);
    return rc;
}

/* ---- A1111 "parameters" text ------------------------------------------- */

/* A1111's `Lora hashes: "name: hash, ..."`: the prompt's tags (hashed
 * from lora_dir), then the LoRAs applied to the model. Names lose ':' and
 * ','; the value is quoted as A1111 quotes it (JSON). */
static void sdx__lora_hashes(const sdx_model *m, const sdx_gen_params *p, sdx__buf *b) {
    sdx__lora_tag *tags = NULL;
    char *clean = NULL, hash[13];
    int n_tags = 0, n = 0;
    if (!m) return;
    if (p->prompt && p->lora_dir && strstr(p->prompt, "<lora:") &&
        sdx__lora_tags(m->ctx, p->prompt, &clean, &tags, &n_tags) != SDX_OK)
        n_tags = 0;
    for (int i = 0; i < n_tags + m->n_loras; i++) {
        const char *name = i < n_tags ? tags[i].name : m->loras[i - n_tags].name;
        if (i < n_tags) {
            char path[4096];
            size_t len = strlen(name);
            sdx_st *st;
            snprintf(path, sizeof path, "%s/%s%s", p->lora_dir, name,
                     len > 12 && !strcmp(name + len - 12, ".safetensors") ? "" : ".safetensors");
            if (sdx_st_open(m->ctx, path, &st) != SDX_OK) continue;    /* generation would have failed */
            sdx__lora_short_hash(st, hash);
            sdx_st_close(st);
        } else {
            memcpy(hash, m->loras[i - n_tags].hash, sizeof hash);
        }
        sdx__buf_str(b, n++ ? ", " : ", Lora hashes: \"");
        for (const char *c = name; *c; c++) {
            char one[3] = { '\\', *c, 0 };
            if (*c == ':' || *c == ',') continue;
            sdx__buf_str(b, *c == '"' || *c == '\\' ? one : one + 1);
        }
        sdx__buf_fmt(b, ": %s", hash);
    }
    if (n) sdx__buf_str(b, "\"");
    sdx__free(m->ctx, clean);
    sdx__free(m->ctx, tags);
}

/* ", Compute: bf16" when every part computes in bf16, the parts that do
 * ("Compute: bf16 (UNet)") when only some do, nothing by default (f32). */
static void sdx__compute_parameter(const sdx_model *m, sdx__buf *b) {
    const char *names[3] = { "text encoder", "UNet", "VAE" };
    int bf16[3], n;
    bf16[0] = m->loaded_te && m->te.compute_type == SDX_BF16;
    bf16[1] = m->loaded_unet && m->unet.compute_type == SDX_BF16;
    bf16[2] = m->loaded_vae && m->vae.compute_type == SDX_BF16;
    n = bf16[0] + bf16[1] + bf16[2];
    if (!n) return;
    sdx__buf_str(b, ", Compute: bf16");
    if (n == 3) return;
    for (int i = 0, k = 0; i < 3; i++)
        if (bf16[i]) { sdx__buf_str(b, k++ ? ", " : " ("); sdx__buf_str(b, names[i]); }
    sdx__buf_str(b, ")");
}

SDX_API int sdx_format_parameters(const sdx_model *m, const sdx_gen_params *p, int64_t seed, char *buf, size_t size,
                                  size_t *length) {
    sdx__buf b;
    const char *neg;
    int w, h;
    size_t n;
    if (length) *length = 0;
    if (!p || (!buf && size)) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_format_parameters: %s",
                                                   p ? "no buffer for a non-zero size" : "no parameters")
                                       : SDX_ERR_INVALID_ARG;
    neg = p->negative_prompt ? p->negative_prompt : "";
    memset(&b, 0, sizeof b);
    sdx__output_size(m, p, sdx__codec_factor(m, p->codec), &w, &h);
    b.ctx = m ? m->ctx : NULL;
    sdx__buf_str(&b, p->prompt ? p->prompt : "");
    /* LoRAs applied to the model appear as A1111 tags, <lora:name:te:unet> */
    for (int i = 0; m && i < m->n_loras; i++) {
        const sdx__lora *l = &m->loras[i];
        if (l->te_strength == l->unet_strength) sdx__buf_fmt(&b, " <lora:%s:%g>", l->name, (double)l->unet_strength);
        else sdx__buf_fmt(&b, " <lora:%s:%g:%g>", l->name, (double)l->te_strength, (double)l->unet_strength);
    }
    if (*neg) { sdx__buf_str(&b, "\nNegative prompt: "); sdx__buf_str(&b, neg); }
    sdx__buf_fmt(&b, "\nSteps: %d, Sampler: %s, Schedule type: %s, CFG scale: %g, Seed: %lld, Size: %dx%d",
                 p->steps ? p->steps : SDX__DEFAULT_STEPS, sdx__sampler_a1111_name(p->sampler ? p->sampler : sdx__default_sampler),
                 sdx__scheduler_a1111_name(p->scheduler ? p->scheduler : sdx__default_scheduler),
                 p->cfg_scale != 0 ? p->cfg_scale : SDX__DEFAULT_CFG,
                 (long long)seed, w, h);
    if (m) { sdx__buf_str(&b, ", Model: "); sdx__buf_str(&b, m->name); }
    if (p->init_image || p->init_latent)
        sdx__buf_fmt(&b, ", Denoising strength: %g", p->strength != 0 ? p->strength : SDX__DEFAULT_STRENGTH);
    if (m && m->unet.in_channels == 9) sdx__buf_str(&b, ", Conditional mask weight: 1.0");   /* A1111's default, fixed here */
    if (p->clip_skip > 1) sdx__buf_fmt(&b, ", Clip skip: %d", p->clip_skip);
    for (int i = 0; p->controls && i < p->n_controls; i++) {   /* as A1111's ControlNet extension */
        const sdx_control *c = &p->controls[i];
        sdx__buf_fmt(&b, ", ControlNet %d: \"Module: %s, Model: %s, Weight: %g, Resize Mode: Crop and Resize, "
                     "Guidance Start: %g, Guidance End: %g, Pixel Perfect: False, Control Mode: Balanced\"", i,
                     c->module ? c->module : "none", c->net ? c->net->name : "", c->strength,
                     c->start, c->end != 0 ? c->end : 1.0f);
    }
    if (p->tiling) sdx__buf_str(&b, ", Tiling: True");
    if (m) sdx__compute_parameter(m, &b);
    if (p->rng == SDX_RNG_CPU) sdx__buf_str(&b, ", RNG: CPU");
    if (p->mask && p->paste_back && p->mask_blur >= 0) sdx__buf_fmt(&b, ", Mask blur: %d", p->mask_blur ? p->mask_blur : 4);
    sdx__lora_hashes(m, p, &b);
    sdx__buf_str(&b, ", Version: sdx " SDX_VERSION_STRING);
    if (b.failed) {
        sdx__free(b.ctx, b.p);
        return m ? sdx__fail(m->ctx, SDX_ERR_NOMEM, "sdx_format_parameters: out of memory") : SDX_ERR_NOMEM;
    }
    if (length) *length = b.len;
    if (size) {
        n = b.len < size ? b.len : size - 1;
        while (n > 0 && n < b.len && ((unsigned char)b.p[n] & 0xC0) == 0x80) n--;   /* whole UTF-8 sequences only */
        if (n) memcpy(buf, b.p, n);
        buf[n] = 0;
    }
    sdx__free(b.ctx, b.p);
    return SDX_OK;
}
