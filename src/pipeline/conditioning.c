#pragma once
#include "params.c"

/* ===================================================================== */
/*  Pipeline: conditioning, the prompts' context for the UNet             */
/* ===================================================================== */

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
 * (prompt first, then the negative prompt when cfg is above 1), on the host
 * and where the UNet reads them (device copies, or the same tensors). */
struct sdx_cond {
    sdx_model *m;
    int n_cond, width, height;
    sdx_tensor context, y;
    sdx_tensor unet_context, unet_y;
    sdx__unet_kv *kv;        /* on a device, unet_context's cross-attention keys and values (a cache: a const cond fills it) */
    sdx_cond *refiner;       /* the same prompts for sdx_gen_params.refiner */
};

/* Number `t` of the family's vector conditioning for the prompt (row 0)
 * or the negative prompt (row 1): sizes default to the image size with no
 * crop, the aesthetic score is the row's. */
static float sdx__adm_value(const sdx__gen *g, sdx__adm_term t, int row) {
    const sdx_gen_params *p = g->p;
    switch (t) {
    case SDX__ADM_ORIG_H:    return (float)(p->orig_height ? p->orig_height : g->height);
    case SDX__ADM_ORIG_W:    return (float)(p->orig_width ? p->orig_width : g->width);
    case SDX__ADM_CROP_TOP:  return (float)p->crop_top;
    case SDX__ADM_CROP_LEFT: return (float)p->crop_left;
    case SDX__ADM_TARGET_H:  return (float)(p->target_height ? p->target_height : g->height);
    case SDX__ADM_TARGET_W:  return (float)(p->target_width ? p->target_width : g->width);
    case SDX__ADM_ASCORE:    return sdx__ascore(p, row);
    }
    return 0;
}

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
        const sdx__family *f = sdx__family_get(m->family);
        float values[SDX__FAMILY_MAX_ADM];
        int ydim = (int)cond->y.shape[1];
        float *pf = (float *)sdx__arena_host_alloc(&m->arena, sizeof(float) * (size_t)m->te.pooled_dim);
        if (!pf) rc = SDX_ERR_NOMEM;
        else {
            sdx__load_f32(pooled.data, pooled.dtype, 0, m->te.pooled_dim, pf);
            for (int i = 0; i < f->unet_adm; i++) values[i] = sdx__adm_value(g, f->adm[i], row);
            rc = sdx__vector_cond(ctx, pf, m->te.pooled_dim, values, f->unet_adm, (float *)cond->y.data + (size_t)ydim * (size_t)row,
                                  ydim);
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
    cond->n_cond = sdx__gen_n_cond(g);
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
    if (cond->n_cond == 2 && ((rc = sdx__check_cancel(ctx, "between the prompt and the negative prompt")) != SDX_OK ||
                              (rc = sdx__encode_into(g, cond, &neg, 1)) != SDX_OK))
        goto done;
    if ((rc = sdx__to_unet(ctx, &cond->unet_context, &cond->context)) != SDX_OK) goto done;
    if (cond->y.data) rc = sdx__to_unet(ctx, &cond->unet_y, &cond->y);
done:
    sdx__chunks_free(ctx, &pos);
    sdx__chunks_free(ctx, &neg);
    sdx__embdb_free(emb);
    return rc;
}

/* ---- stage: conditioning ------------------------------------------------ */

/* g's prompts encoded by g's model into a new sdx_cond. */
static int sdx__cond_encode(sdx__gen *g, sdx_cond **out) {
    sdx_model *m = g->m;
    sdx_cond *cond;
    int rc;
    *out = NULL;
    if (!(cond = (sdx_cond *)sdx__calloc(m->ctx, 1, sizeof *cond))) return sdx__nomem(m->ctx, "conditioning", sizeof *cond);
    cond->m = m;
    if (!(cond->kv = (sdx__unet_kv *)sdx__calloc(m->ctx, 1, sizeof *cond->kv))) {
        sdx__free(m->ctx, cond);
        return sdx__nomem(m->ctx, "conditioning", sizeof *cond->kv);
    }
    rc = sdx__gen_condition(g, cond);
    sdx__textenc_release(&m->te);
    sdx__stage_done(m, "text encoding");
    if (rc != SDX_OK) { sdx_cond_free(cond); return rc; }
    *out = cond;
    return SDX_OK;
}

static int sdx__encode_prompt(sdx_model *m, const sdx_gen_params *p, sdx_cond **out);

SDX_API sdx_result sdx_encode_prompt(sdx_model *m, const sdx_gen_params *p, sdx_cond **out) {
    if (m) sdx__call_begin(m->ctx);
    return (sdx_result)sdx__encode_prompt(m, p, out);
}

/* sdx_encode_prompt within the call that runs (sdx_generate's too). */
static int sdx__encode_prompt(sdx_model *m, const sdx_gen_params *p, sdx_cond **out) {
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
        if ((rc = sdx__lora_tags(m->ctx, p->prompt, &clean, &tags, &n_tags)) != SDX_OK) return (sdx_result)rc;
        if (n_tags)
            rc = sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_prompt: the prompt names LoRA '%s'; <lora:> tags are applied by "
                           "sdx_generate, with the staged API apply LoRAs with sdx_model_apply_lora", tags[0].name);
        sdx__free(m->ctx, clean);
        sdx__free(m->ctx, tags);
        if (rc != SDX_OK) return (sdx_result)rc;
    }
    if ((rc = sdx__gen_resolve(&g, m, p)) != SDX_OK) return (sdx_result)rc;
    if ((rc = sdx__cond_encode(&g, &cond)) != SDX_OK) return (sdx_result)rc;
    if (p->refiner) {
        sdx__gen r;
        sdx__gen_for_refiner(&g, &r);
        if ((rc = sdx__check_cancel(m->ctx, "before the refiner's prompts")) != SDX_OK ||
            (rc = sdx__cond_encode(&r, &cond->refiner)) != SDX_OK) {
            sdx_cond_free(cond);
            return (sdx_result)rc;
        }
    }
    *out = cond;
    return SDX_OK;
}

SDX_API void sdx_cond_free(sdx_cond *cond) {
    sdx_ctx *ctx;
    if (!cond) return;
    ctx = cond->m->ctx;
    sdx_cond_free(cond->refiner);
    sdx__unet_kv_free(ctx, cond->kv);
    sdx__free(ctx, cond->kv);
    sdx__unet_input_free(ctx, &cond->unet_context);
    sdx__unet_input_free(ctx, &cond->unet_y);
    sdx_tensor_free(ctx, &cond->context);
    sdx_tensor_free(ctx, &cond->y);
    sdx__free(ctx, cond);
}
