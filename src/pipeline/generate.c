#pragma once
#include "load.c"
#include "codec.c"
#include "params.c"
#include "conditioning.c"
#include "img2img.c"
#include "control.c"
#include "denoise.c"
#include "hires.c"

/* ===================================================================== */
/*  Pipeline: txt2img / img2img / inpainting, the stages in a row;        */
/*  the A1111 "parameters" text                                           */
/* ===================================================================== */

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

SDX_API sdx_result sdx_generate(sdx_model *m, const sdx_gen_params *p, sdx_gen_result *out) {
    sdx_gen_params q;
    sdx__lora_tag *tags = NULL;
    char *clean = NULL;
    int n_tags = 0, keep, rc, rc2;
    if (m) sdx__call_begin(m->ctx);
    if (!m || !p || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_generate: params and out are required") : SDX_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (!m->loaded_unet)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "model '%s' was loaded with codecs_only: it can decode and encode, not generate", m->name);
    if (!m->tok) return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_generate: the model was loaded without a vocabulary (no_vocab)");
    if (!p->prompt || !strstr(p->prompt, "<lora:")) return (sdx_result)sdx__generate(m, p, 0, out);
    if ((rc = sdx__lora_tags(m->ctx, p->prompt, &clean, &tags, &n_tags)) != SDX_OK) return (sdx_result)rc;
    q = *p;
    q.prompt = clean;
    keep = m->n_loras;
    rc = sdx__gen_push_prompt_loras(m, p->lora_dir, tags, n_tags);
    if (rc == SDX_OK) rc = sdx__generate(m, &q, 0, out);
    rc2 = sdx__model_pop_loras(m, keep);
    if (rc == SDX_OK && rc2 != SDX_OK) { sdx_gen_result_free(m->ctx, out); rc = rc2; }
    sdx__free(m->ctx, clean);
    sdx__free(m->ctx, tags);
    return (sdx_result)rc;
}

static void sdx__gen_phase(const sdx_gen_params *p, sdx_phase phase, int image) {
    if (p->phase) p->phase(p->phase_user, phase, image);
}

/* latent_only: the latents without decoding them (hires fix's first pass) */
static int sdx__generate(sdx_model *m, const sdx_gen_params *params, int latent_only, sdx_gen_result *out) {
    sdx_ctx *ctx;
    sdx__gen g;
    sdx_gen_params p;
    sdx_cond *cond = NULL;
    int rc;
    ctx = m->ctx;
    if (sdx__hires_on(params)) return sdx__hires_generate(m, params, out);
    memset(out, 0, sizeof *out);
    if ((rc = sdx__gen_resolve(&g, m, params)) != SDX_OK) return rc;
    p = *params;
    p.seed = g.seed;                  /* a random seed is drawn once for the batch */
    out->images = (sdx_image *)sdx__calloc(ctx, (size_t)g.batch, sizeof(sdx_image));
    out->latents = (sdx_tensor *)sdx__calloc(ctx, (size_t)g.batch, sizeof(sdx_tensor));
    out->seeds = (int64_t *)sdx__calloc(ctx, (size_t)g.batch, sizeof(int64_t));
    if (!out->images || !out->latents || !out->seeds) { rc = sdx__nomem(ctx, "generation", (size_t)g.batch * 64); goto done; }
    sdx__gen_phase(&p, SDX_PHASE_TEXT, -1);
    if ((rc = sdx__encode_prompt(m, &p, &cond)) != SDX_OK) goto done;
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
        }
        if (rc == SDX_OK && !latent_only) {
            sdx__gen_phase(&p, SDX_PHASE_DECODE, i);
            sdx__vae_tiling tiling = sdx__gen_tiling(&s->g);
            rc = sdx__decode_to_image(m, &s->g.dec, (const float *)out->latents[i].data, s->g.lh, s->g.lw, &tiling, p.seamless,
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

/* A1111's `Refiner: NAME, Refiner switch at: 0.8`, and the aesthetic
 * scores where they are given (A1111 keeps them in its settings). */
static void sdx__refiner_parameters(const sdx_gen_params *p, sdx__buf *b) {
    if (p->refiner) sdx__buf_fmt(b, ", Refiner: %s, Refiner switch at: %g", p->refiner->name, (double)sdx__refiner_switch(p));
    if (p->refiner_ascore != 0) sdx__buf_fmt(b, ", Aesthetic score: %g", (double)p->refiner_ascore);
    if (p->refiner_negative_ascore != 0) sdx__buf_fmt(b, ", Negative aesthetic score: %g", (double)p->refiner_negative_ascore);
}

/* An explicit schedule, quoted as A1111 quotes values with commas
 * (`Timesteps: "999, 749, 499, 249"`), and eta where given. */
static void sdx__schedule_parameters(const sdx_gen_params *p, sdx__buf *b) {
    int n = p->timesteps ? p->n_timesteps : p->sigmas ? p->n_sigmas : 0;
    for (int i = 0; i < n; i++) {
        if (!i) sdx__buf_str(b, p->timesteps ? ", Timesteps: \"" : ", Sigmas: \"");
        if (p->timesteps) sdx__buf_fmt(b, "%s%d", i ? ", " : "", p->timesteps[i]);
        else sdx__buf_fmt(b, "%s%g", i ? ", " : "", (double)p->sigmas[i]);
        if (i + 1 == n) sdx__buf_str(b, "\"");
    }
    if (p->use_eta) sdx__buf_fmt(b, ", Eta: %g", (double)p->eta);
}

SDX_API sdx_result sdx_format_parameters(const sdx_model *m, const sdx_gen_params *p, int64_t seed, char *buf, size_t size,
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
    sdx__buf_fmt(&b, "\nSteps: %d, Sampler: %s", p->timesteps ? p->n_timesteps : p->sigmas ? p->n_sigmas - 1 : p->steps ? p->steps : SDX__DEFAULT_STEPS,
                 sdx__sampler_a1111_name(p->sampler ? p->sampler : sdx__default_sampler));
    if (!p->timesteps && !p->sigmas)
        sdx__buf_fmt(&b, ", Schedule type: %s", sdx__scheduler_a1111_name(p->scheduler ? p->scheduler : sdx__default_scheduler));
    sdx__buf_fmt(&b, ", CFG scale: %g, Seed: %lld, Size: %dx%d", p->cfg_scale != 0 ? p->cfg_scale : SDX__DEFAULT_CFG,
                 (long long)seed, w, h);
    if (m) { sdx__buf_str(&b, ", Model: "); sdx__buf_str(&b, m->name); }
    if (p->init_image || p->init_latent)
        sdx__buf_fmt(&b, ", Denoising strength: %g", p->strength != 0 ? p->strength : SDX__DEFAULT_STRENGTH);
    sdx__hires_parameters(p, &b);
    sdx__refiner_parameters(p, &b);
    if (m && m->unet.in_channels == 9) sdx__buf_str(&b, ", Conditional mask weight: 1.0");   /* A1111's default, fixed here */
    if (p->clip_skip > 1) sdx__buf_fmt(&b, ", Clip skip: %d", p->clip_skip);
    for (int i = 0; p->controls && i < p->n_controls; i++) {   /* as A1111's ControlNet extension */
        const sdx_control *c = &p->controls[i];
        sdx__buf_fmt(&b, ", ControlNet %d: \"Module: %s, Model: %s, Weight: %g, Resize Mode: Crop and Resize, "
                     "Guidance Start: %g, Guidance End: %g, Pixel Perfect: False, Control Mode: Balanced\"", i,
                     c->module ? c->module : "none", c->net ? c->net->name : "", c->strength,
                     c->start, c->end != 0 ? c->end : 1.0f);
    }
    sdx__schedule_parameters(p, &b);
    if (p->seamless) sdx__buf_str(&b, ", Tiling: True");
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
