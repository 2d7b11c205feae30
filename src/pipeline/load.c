#pragma once
#include "api_pipeline.h"
#include "../core/context.c"
#include "../family/family.c"
#include "../text/text_encoder.c"
#include "../models/unet.c"
#include "../models/controlnet.c"
#include "../models/lora.c"
#include "../sampling/schedules.c"
#include "../models/vae.c"
#include "../models/taesd.c"
#include "../core/convert.c"

/* ===================================================================== */
/*  Pipeline: model loading, txt2img / img2img / inpainting               */
/* ===================================================================== */
/* Follows ComfyUI's KSampler (docs: shared golden PIPELINE.md): prompt ->
 * chunks -> context; noise from seed; start latent; sampler over a
 * denoiser that batches cond and uncond into one UNet call and applies
 * CFG; latent -> codec (VAE: latent / scale factor; TAESD: as is) ->
 * floor(clamp(x)*255). The parts, in the order the data flows:
 *   load.c          the model (checkpoint, family, vocabulary, codecs, the
 *                   LoRA stack) and ControlNet handles
 *   codec.c         latents to pixels and back; the decode and encode stages
 *   params.c        sdx_gen_params resolved into sdx__gen
 *   conditioning.c  the prompts' context (stage: sdx_encode_prompt)
 *   img2img.c       init image, masks and paste-back
 *   control.c       ControlNets while sampling
 *   denoise.c       the denoiser the sampler calls (stage: sdx_sampling_*)
 *   generate.c      the stages in a row (sdx_generate), the A1111 text */

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

/* v, x0 or eps (lcm only by name), in order of trust: the caller, the
 * checkpoint's metadata, a "v_pred" or "x0" marker tensor, an x0 name
 * (SDXL-Lightning ships its 1-step x0 model as ..._1step_x0 /
 * _1step_unet_x0; LCM models carry no mark), then,
 * where the family has one (SD 2.x), ComfyUI's heuristic: v when a
 * tensor's values spread wider than the eps model's (sdx__family.v_probe). */
static int sdx__detect_prediction(sdx_model *m, const char *override) {
    const sdx__family *f = sdx__family_get(m->family);
    const char *meta;
    size_t len = strlen(m->name);
    if (override && *override) {
        if (sdx__prediction_named(override, &m->prediction)) return SDX_OK;
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "unknown prediction type '%s' (valid: eps, v, x0, lcm)", override);
    }
    m->prediction = SDX_PRED_EPS;
    meta = sdx_st_meta(m->ckpt, "modelspec.prediction_type");
    if (meta) {
        if (!sdx__prediction_named(meta, &m->prediction) && strstr(meta, "v")) m->prediction = SDX_PRED_V;
        return SDX_OK;
    }
    if (sdx_st_find(m->ckpt, "v_pred")) { m->prediction = SDX_PRED_V; return SDX_OK; }
    if (sdx_st_find(m->ckpt, "x0") || (len > 3 && (!strcmp(m->name + len - 3, "_x0") || !strcmp(m->name + len - 3, "-x0")))) {
        m->prediction = SDX_PRED_X0;
        return SDX_OK;
    }
    if (f && f->v_probe && m->unet.in_channels == 4) {
        const sdx_tensor *b = sdx_st_find(m->ckpt, f->v_probe);
        if (b && (b->dtype == SDX_F32 || b->dtype == SDX_F16 || b->dtype == SDX_BF16)) {
            int64_t n = sdx_tensor_numel(b);
            double s = 0, s2 = 0;
            int rc = sdx__st_need(m->ckpt, b, 0);
            if (rc != SDX_OK) return rc;
            for (int64_t i = 0; i < n; i++) { double v = sdx__get_f32(b, i); s += v; s2 += v * v; }
            sdx__st_forget(m->ckpt, b);
            if (n > 0 && sqrt(SDX__MAX(0.0, s2 / (double)n - (s / (double)n) * (s / (double)n))) > f->v_spread) m->prediction = SDX_PRED_V;
        }
    }
    return SDX_OK;
}

static int sdx__file_exists(const char *path) { return sdx__path_kind(path) != SDX__PATH_NONE; }

static int sdx__source_given(const sdx_source *src) { return src->path || src->data || src->read; }

/* The vocabulary: given (path, vocab_data or vocab_source), compiled in
 * (SDX_EMBED_VOCAB), next to the checkpoint's file, or $SDX_VOCAB. */
static int sdx__load_vocab(sdx_model *m, const sdx_model_desc *d) {
    static const char *const names[] = { "merges.txt", "bpe_simple_vocab_16e6.txt.gz", "vocab/merges.txt",
                                         "vocab/bpe_simple_vocab_16e6.txt.gz" };
    char path[4096];
    const char *env = getenv("SDX_VOCAB");
    const char *ckpt = d->checkpoint ? d->checkpoint : d->checkpoint_source.path;
    const char *slash;
    if (d->vocab_data) return sdx_tokenizer_load_memory(m->ctx, d->vocab_data, d->vocab_size, &m->tok);
    if (d->vocab && sdx__source_given(&d->vocab_source))
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_model_load: both vocab and vocab_source are set (give one)");
    if (d->vocab) return sdx_tokenizer_load(m->ctx, d->vocab, &m->tok);
    if (sdx__source_given(&d->vocab_source)) return sdx_tokenizer_load_source(m->ctx, &d->vocab_source, &m->tok);
    if (SDX__EMBEDDED_VOCAB) return sdx_tokenizer_load_embedded(m->ctx, &m->tok);
    slash = ckpt ? sdx__last_separator(ckpt) : NULL;
    for (int i = 0; ckpt && i < SDX__ARRAY_LEN(names); i++) {
        int n = slash ? (int)(slash - ckpt) + 1 : 0;
        snprintf(path, sizeof path, "%.*s%s", n, ckpt, names[i]);
        if (sdx__file_exists(path)) return sdx_tokenizer_load(m->ctx, path, &m->tok);
    }
    if (env && *env) return sdx_tokenizer_load(m->ctx, env, &m->tok);
    return sdx__fail(m->ctx, SDX_ERR_IO,
        "%s: no CLIP vocabulary found%s: pass --vocab PATH (sdx_model_desc.vocab or vocab_source), set SDX_VOCAB, put "
        "merges.txt there or build with SDX_EMBED_VOCAB. Any of these works: merges.txt from the tokenizer folder of "
        "openai/clip-vit-large-patch14 (Hugging Face), or bpe_simple_vocab_16e6.txt.gz from the clip/ folder of OpenAI's "
        "CLIP repository", sdx_st_path(m->ckpt), ckpt ? " next to it" : "");
}

/* A part of sdx_model_desc, given by its path field or its source field
 * (not both), as one source: all zero when neither is set. */
static int sdx__desc_part(sdx_ctx *ctx, const char *path, const sdx_source *src, const char *field, sdx_source *out) {
    memset(out, 0, sizeof *out);
    if (path && sdx__source_given(src))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_model_load: both %s and %s_source are set (give one)", field, field);
    if (path) out->path = path;
    else *out = *src;
    return SDX_OK;
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
static int sdx__check_codecs(sdx_model *m) {
    int want = m->loaded_unet ? m->unet.out_channels : m->loaded_vae ? m->vae.latent_channels : 0;
    const char *who = m->loaded_unet ? "the UNet" : "the VAE";
    const char *taesd = m->taesd.dec.w.ctx ? sdx_st_path(m->taesd.dec.w.st) : m->taesd.enc.w.ctx ? sdx_st_path(m->taesd.enc.w.st) : "";
    if (m->loaded_vae && m->loaded_unet && m->vae.latent_channels != want)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: VAE latent has %d channels, the UNet works on %d",
                         sdx_st_path(m->vae_file ? m->vae_file : m->ckpt), m->vae.latent_channels, want);
    if (m->taesd.latent_channels && want && m->taesd.latent_channels != want)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: TAESD latent has %d channels, %s works on %d (TAESD for SD3 or FLUX "
                         "does not fit SD 1.x/2.x/SDXL)", taesd, m->taesd.latent_channels, who, want);
    if (m->taesd.latent_channels && m->loaded_vae && m->taesd.factor != m->vae.factor)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: TAESD scales latents by %d, the VAE by %d", taesd, m->taesd.factor,
                         m->vae.factor);
    return SDX_OK;
}

/* The UNet's label_emb must take the family's vector: the pooled text
 * vector plus one equal, even embedding per number (SDXL: 1280 + 6 x 256
 * = 2816; its refiner: 1280 + 5 x 256 = 2560, the aesthetic score where
 * the base has the target size), and only a family with one may have it. */
static int sdx__check_vector_cond(const sdx_model *m) {
    const sdx__family *f = sdx__family_get(m->family);
    int adm = m->unet.adm_channels, extra = adm - m->te.pooled_dim;
    if (!f->unet_adm && !adm) return SDX_OK;
    if (f->unet_adm && extra > 0 && extra % f->unet_adm == 0 && extra / f->unet_adm % 2 == 0) return SDX_OK;
    if (!adm)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: %s text encoders, but the UNet has no label_emb (vector conditioning)",
                         sdx_st_path(m->ckpt), f->name);
    if (!f->unet_adm)
        return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: the UNet has a label_emb (%d inputs), but %s has no vector conditioning",
                         sdx_st_path(m->ckpt), adm, f->name);
    return sdx__fail(m->ctx, SDX_ERR_MODEL, "%s: the UNet's label_emb takes %d inputs, but %s conditioning is the pooled text "
                     "vector (%d) plus %d equal even embeddings (an SDXL base UNet takes 6 of them, the refiner 5)",
                     sdx_st_path(m->ckpt), adm, f->name, m->te.pooled_dim, f->unet_adm);
}

/* sdx_model_desc.activations: every part's activation storage. By
 * default the CPU keeps what the policy macros set at load, and a GPU
 * stores half precision where its matrix units want it (the UNet, hence
 * ControlNets, and the VAE and TAESD; f16, or bf16 for a VAE that
 * outgrows f16, and for one of unknown family), while the text
 * encoders, one call per prompt, stay f32. */
static int sdx__set_activations(sdx_model *m, sdx_activations a) {
    const sdx__family *f = sdx__family_get(m->family);
    int text, unet, vae;
    switch (a) {
    case SDX_ACT_DEFAULT:
        if (!sdx__on_device(m->ctx)) return SDX_OK;
        text = SDX_F32;
        unet = SDX_F16;
        vae = f && !f->vae_beyond_f16 ? SDX_F16 : SDX_BF16;
        break;
    case SDX_ACT_F32: text = unet = vae = SDX_F32; break;
    case SDX_ACT_F16: text = unet = vae = SDX_F16; break;
    case SDX_ACT_BF16: text = unet = vae = SDX_BF16; break;
    default:
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG,
                         "sdx_model_load: activations %d is not SDX_ACT_DEFAULT, _F32, _F16 or _BF16", (int)a);
    }
    m->te.act_type = text;
    m->unet.act_type = (sdx_dtype)unet;
    m->vae.act_type = vae;
    m->taesd.act_type = vae;
    return SDX_OK;
}

static int sdx__load_taesd(sdx_model *m, const sdx_model_desc *d, const sdx_source taesd[2]) {
    int rc;
    sdx__taesd_init(&m->taesd);
    for (int i = 0; i < 2; i++) {
        if (!sdx__source_given(&taesd[i])) continue;
        if ((rc = sdx_st_open_source(m->ctx, &taesd[i], &m->taesd_file[i])) != SDX_OK) return rc;
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(m->ctx, m->taesd_file[i], NULL) != SDX_OK) return SDX_ERR_NONFINITE;
        if ((rc = sdx__taesd_load(m->ctx, &m->taesd, m->taesd_file[i])) != SDX_OK) return rc;
    }
    return SDX_OK;
}

SDX_API sdx_result sdx_model_load(sdx_ctx *ctx, const sdx_model_desc *d, sdx_model **out) {
    sdx_model *m;
    sdx_source ckpt, vae, taesd[2];
    int rc;
    const sdx_source *first;
    if (!out || !d)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_model_load: a checkpoint path is required (or codecs_only with a TAESD file)");
    *out = NULL;
    if ((rc = sdx__desc_part(ctx, d->checkpoint, &d->checkpoint_source, "checkpoint", &ckpt)) != SDX_OK ||
        (rc = sdx__desc_part(ctx, d->vae, &d->vae_source, "vae", &vae)) != SDX_OK ||
        (rc = sdx__desc_part(ctx, d->taesd[0], &d->taesd_source[0], "taesd[0]", &taesd[0])) != SDX_OK ||
        (rc = sdx__desc_part(ctx, d->taesd[1], &d->taesd_source[1], "taesd[1]", &taesd[1])) != SDX_OK)
        return (sdx_result)rc;
    if (!sdx__source_given(&ckpt) && !(d->codecs_only && (sdx__source_given(&taesd[0]) || sdx__source_given(&taesd[1]))))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_model_load: a checkpoint path is required (or codecs_only with a TAESD file)");
    m = (sdx_model *)sdx__calloc(ctx, 1, sizeof *m);
    if (!m) return sdx__nomem(ctx, "model", sizeof *m);
    m->ctx = ctx;
    sdx__arena_init(&m->arena, ctx, 0);
    sdx_model_sampling_init(&m->ms);
    sdx__taesd_init(&m->taesd);
    first = sdx__source_given(&ckpt) ? &ckpt : sdx__source_given(&taesd[0]) ? &taesd[0] : &taesd[1];
    sdx__path_stem(sdx__source_name(first), m->name, sizeof m->name);

    if (sdx__source_given(&ckpt)) {
        const sdx__family *f;
        if ((rc = sdx_st_open_source(ctx, &ckpt, &m->ckpt)) != SDX_OK) goto fail;
        if (d->scan_nonfinite && sdx_st_scan_nonfinite(ctx, m->ckpt, NULL) != SDX_OK) { rc = SDX_ERR_NONFINITE; goto fail; }
        if (!(f = sdx__family_detect(m->ckpt))) { rc = sdx__family_unknown(ctx, m->ckpt); goto fail; }
        m->family = f->id;
    } else if (sdx__source_given(&vae)) {
        rc = sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: a VAE alone cannot decode: its latent scale depends on the model family; "
                       "give the checkpoint too", sdx__source_name(&vae));
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
                           sdx_st_path(m->ckpt), m->unet.context_dim, m->te.context_dim);
            goto fail;
        }
        if ((rc = sdx__check_vector_cond(m)) != SDX_OK) goto fail;
    }
    if (sdx__source_given(&vae)) {
        if ((rc = sdx_st_open_source(ctx, &vae, &m->vae_file)) != SDX_OK) goto fail;
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
    if ((rc = sdx__load_taesd(m, d, taesd)) != SDX_OK) goto fail;
    if ((rc = sdx__check_codecs(m)) != SDX_OK) goto fail;
    if ((rc = sdx__set_activations(m, d->activations)) != SDX_OK) goto fail;
    if (!d->codecs_only) {
        if ((rc = sdx__detect_prediction(m, d->prediction)) != SDX_OK) goto fail;
        if (!d->no_vocab && (rc = sdx__load_vocab(m, d)) != SDX_OK) goto fail;
        sdx__log(ctx, SDX_LOG_INFO, "%s: %s, %s prediction, UNet in_channels %d", sdx_st_path(m->ckpt), sdx_family_name(m->family),
                 sdx__prediction_name(m->prediction), m->unet.in_channels);
    }
    if (m->low_memory) {   /* files from read callbacks give their weights back too */
        sdx__st_drop_reads(m->ckpt);
        sdx__st_drop_reads(m->vae_file);
        for (int i = 0; i < 2; i++) sdx__st_drop_reads(m->taesd_file[i]);
    }
    *out = m;
    return SDX_OK;
fail:
    sdx_model_free(m);
    return (sdx_result)rc;
}

SDX_API sdx_family     sdx_model_family(const sdx_model *m) { return m ? m->family : SDX_FAMILY_UNKNOWN; }
SDX_API sdx_prediction sdx_model_prediction(const sdx_model *m) { return m ? m->prediction : SDX_PRED_EPS; }
SDX_API const char    *sdx_model_name(const sdx_model *m) { return m ? m->name : ""; }

/* ---- LoRA ------------------------------------------------------------ */

/* Opens and checks a LoRA against the model, then merges it on top of the
 * ones applied before. Nothing is patched unless every tensor maps and
 * fits; a failure while writing removes all LoRAs (the model is then the
 * checkpoint again) and says so. */
static int sdx__model_push_lora(sdx_model *m, const sdx_source *src, float unet_strength, float te_strength) {
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
    rc = sdx__lora_open(ctx, src, &map, &l);
    sdx__lora_map_free(ctx, &map);
    /* the merge reads the weights it patches from the checkpoint: from a
     * read callback they are read now and kept */
    for (int k = 0; rc == SDX_OK && k < l.n_mod; k++) {
        const sdx__lora_module *md = &l.mod[k];
        rc = sdx__st_need(md->tg.w->st, sdx__lora_module_slot(md)->file, 1);
    }
    if (rc != SDX_OK) {
        if (l.st) sdx__lora_free(ctx, &l);
        return rc;
    }
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
    sdx__log(ctx, SDX_LOG_INFO, "%s: LoRA with %d modules, strengths unet %g, text encoder %g", sdx_st_path(l.st), l.n_mod,
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

SDX_API sdx_result sdx_model_apply_lora_source(sdx_model *m, const sdx_source *src, float unet_strength, float te_strength) {
    if (!m) return SDX_ERR_INVALID_ARG;
    if (!sdx__source_kind(m->ctx, src, "sdx_model_apply_lora_source")) return SDX_ERR_INVALID_ARG;
    if (!isfinite(unet_strength) || !isfinite(te_strength))
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "%s: LoRA strengths must be finite", sdx__source_name(src));
    return (sdx_result)sdx__model_push_lora(m, src, unet_strength, te_strength);
}

SDX_API sdx_result sdx_model_apply_lora(sdx_model *m, const char *path, float unet_strength, float te_strength) {
    sdx_source src;
    if (!m || !path) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_model_apply_lora: no LoRA path") : SDX_ERR_INVALID_ARG;
    memset(&src, 0, sizeof src);
    src.path = path;
    return sdx_model_apply_lora_source(m, &src, unet_strength, te_strength);
}

SDX_API sdx_result sdx_model_clear_loras(sdx_model *m) {
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
    return (sdx_result)rc;
}

SDX_API int sdx_model_lora_count(const sdx_model *m) { return m ? m->n_loras : 0; }

SDX_API sdx_result sdx_model_save_as(sdx_model *m, const char *path, const sdx_convert_params *params) {
    sdx_ctx *ctx;
    int n, rc = SDX_OK, n_meta;
    sdx_tensor *ts;
    const char **meta;
    if (!m || !path) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_model_save: no output path") : SDX_ERR_INVALID_ARG;
    ctx = m->ctx;
    if ((rc = sdx__st_need_all(m->ckpt)) != SDX_OK) return (sdx_result)rc;   /* every tensor is written */
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
        if (slot) {     /* merged in f32 and rounded once to the file's dtype (F32 for a block type) */
            int64_t cnt = sdx_tensor_numel(t);
            float *w;
            void *out;
            if (sdx__dtype_is_block(t->dtype)) ts[i].dtype = SDX_F32;
            w = (float *)sdx__malloc(ctx, (size_t)cnt * sizeof(float));
            out = sdx__malloc(ctx, sdx_tensor_nbytes(&ts[i]));
            if (!w || !out) { sdx__free(ctx, w); sdx__free(ctx, out); rc = sdx__nomem(ctx, t->name, sdx_tensor_nbytes(&ts[i])); break; }
            rc = sdx__lora_merged(ctx, m->loras, m->n_loras, slot, w);
            if (ts[i].dtype == SDX_F16) sdx_f32_to_f16_n(w, (uint16_t *)out, (size_t)cnt);
            else sdx__store_f32(out, ts[i].dtype, 0, cnt, w);
            sdx__free(ctx, w);
            ts[i].data = out;
            ts[i].owned = 1;
        }
    }
    if (rc == SDX_OK) rc = sdx_convert_write(ctx, path, ts, n, meta, n_meta, params);
    for (int i = 0; i < n; i++) if (ts[i].owned) sdx__free(ctx, ts[i].data);
    sdx__free(ctx, ts);
    sdx__free(ctx, (void *)meta);
    return (sdx_result)rc;
}

SDX_API sdx_result sdx_model_save(sdx_model *m, const char *path) { return sdx_model_save_as(m, path, NULL); }

/* <lora:name:...> tags of the prompt: applied for this generation from
 * `dir` (DIR/name.safetensors), removed afterwards. */
static int sdx__gen_push_prompt_loras(sdx_model *m, const char *dir, const sdx__lora_tag *tags, int n_tags) {
    for (int i = 0; i < n_tags; i++) {
        char path[4096];
        sdx_source src;
        size_t len = strlen(tags[i].name);
        int rc, has_ext = len > 12 && !strcmp(tags[i].name + len - 12, ".safetensors");
        if (!dir || !*dir)
            return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "the prompt names LoRA '%s' but no LoRA folder is set "
                             "(--lora-model-dir, sdx_gen_params.lora_dir)", tags[i].name);
        snprintf(path, sizeof path, "%s/%s%s", dir, tags[i].name, has_ext ? "" : ".safetensors");
        if (!sdx__file_exists(path))
            return sdx__fail(m->ctx, SDX_ERR_IO, "the prompt names LoRA '%s': %s does not exist", tags[i].name, path);
        memset(&src, 0, sizeof src);
        src.path = path;
        if ((rc = sdx__model_push_lora(m, &src, tags[i].unet, tags[i].te)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* ---- ControlNet handles ------------------------------------------------ */

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

SDX_API sdx_result sdx_controlnet_load_source(sdx_model *m, const sdx_source *src, sdx_controlnet **out) {
    sdx_controlnet *cn;
    const char *path;
    int rc;
    if (!out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_controlnet_load: out is NULL") : SDX_ERR_INVALID_ARG;
    *out = NULL;
    if (!m) return SDX_ERR_INVALID_ARG;
    if (!sdx__source_kind(m->ctx, src, "sdx_controlnet_load_source")) return SDX_ERR_INVALID_ARG;
    cn = (sdx_controlnet *)sdx__calloc(m->ctx, 1, sizeof *cn);
    if (!cn) return sdx__nomem(m->ctx, "controlnet", sizeof *cn);
    cn->ctx = m->ctx;
    path = sdx__source_name(src);
    sdx__path_stem(path, cn->name, sizeof cn->name);
    if ((rc = sdx_st_open_source(m->ctx, src, &cn->file)) == SDX_OK && (rc = sdx__controlnet_load(m->ctx, &cn->net, cn->file)) == SDX_OK) {
        cn->loaded = 1;
        cn->net.enc.low_memory = m->low_memory;
        if (m->low_memory) sdx__st_drop_reads(cn->file);
        rc = sdx__controlnet_fit(m->ctx, &cn->net, &m->unet, sdx_st_path(m->ckpt));
    }
    if (rc != SDX_OK) { sdx_controlnet_free(cn); return (sdx_result)rc; }
    sdx__log(m->ctx, SDX_LOG_INFO, "%s: %s ControlNet, %d input blocks, hint %d channels%s", path, sdx__cn_family(&cn->net.enc),
             cn->net.enc.n_in, cn->net.hint_channels, cn->net.diffusers ? " (diffusers layout)" : "");
    *out = cn;
    return SDX_OK;
}

SDX_API sdx_result sdx_controlnet_load(sdx_model *m, const char *path, sdx_controlnet **out) {
    sdx_source src;
    if (!out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_controlnet_load: out is NULL") : SDX_ERR_INVALID_ARG;
    *out = NULL;
    if (!m || !path) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_controlnet_load: a model and a path are required") : SDX_ERR_INVALID_ARG;
    memset(&src, 0, sizeof src);
    src.path = path;
    return sdx_controlnet_load_source(m, &src, out);
}

SDX_API const char *sdx_controlnet_name(const sdx_controlnet *cn) { return cn ? cn->name : ""; }
