#pragma once
#include "load.c"
#include "../family/family.c"
#include "../core/rng.c"

/* ===================================================================== */
/*  Pipeline: latent codecs (VAE or TAESD), the decode and encode stages  */
/* ===================================================================== */

/* The VAE and TAESD turn latents into pixels and back. The pipeline asks
 * the codec in use for the latent geometry instead of assuming SD's 4
 * channels, 8x and 0.18215: model latent = codec latent * scale (the VAE's
 * factor of the model family; TAESD works in model space). Outside this
 * file latents are in model space and images are f32 [3, H, W] in
 * [0, 1] on the host. */

/* ---- every stage --------------------------------------------------------- */

/* Each stage checks what it hands on. */
static int sdx__nonfinite_stage(sdx_ctx *ctx, const char *stage, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sdx__fail(ctx, SDX_ERR_NONFINITE,
                "%s became non-finite (NaN/Inf at element %zu): the weights or the precision policy produced it; "
                "rerun with tracing (--trace-nonfinite, sdx_desc.trace_nonfinite) to name the first op, "
                "and scan the checkpoint (--scan-weights) for corrupted tensors", stage, i);
    return SDX_OK;
}

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

/* ---- latent codecs ----------------------------------------------------- */

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
    c->scale = sdx__family_get(m->family)->vae_scale;   /* a VAE needs the checkpoint: the family is known */
    return SDX_OK;
}

/* Activation memory of a VAE pass in low-memory mode, above which it
 * works in tiles (sdx_model_desc.low_memory), and of the tiles of a pass
 * retried after running out of memory. */
#ifndef SDX_LOW_MEMORY_VAE_BUDGET
#define SDX_LOW_MEMORY_VAE_BUDGET ((size_t)256 << 20)
#endif

/* A VAE pass whose tiling sdx chose (auto) and that ran out of memory
 * (on a GPU: device memory the UNet's weights and the caller hold) is
 * tried once more in tiles under the low-memory budget, as a user would
 * retry with --vae-tiling; tiles keep global statistics exact, so only
 * the summation order differs. Returns 1 (and the tiling in *retry)
 * when it should be. */
static int sdx__vae_retry_tiled(sdx_model *m, const sdx__codec *c, const sdx__vae_tiling *tiling, int rc, const char *what,
                                sdx__vae_tiling *retry) {
    if (rc != SDX_ERR_NOMEM || c->kind != SDX_CODEC_VAE || (tiling && tiling->mode != 0) || !sdx__vae_tileable(&m->vae)) return 0;
    sdx__log(m->ctx, SDX_LOG_WARN, "vae %s: %s; trying again in tiles", what, sdx_last_error(m->ctx));
    sdx__arena_shrink(&m->arena);
    memset(retry, 0, sizeof *retry);
    retry->mode = 1;
    retry->budget_bytes = SDX_LOW_MEMORY_VAE_BUDGET;
    return 1;
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
    sdx__vae_tiling retry;
    int rc;
    if (!sdx__arena_host_tensor(&m->arena, &z, SDX_F32, 4, zshape)) {
        sdx__arena_release(&m->arena, mark);
        return sdx__nomem(ctx, "latent", sizeof(float) * n);
    }
    for (size_t i = 0; i < n; i++) ((float *)z.data)[i] = latent[i] / c->scale;
    if (seamless) sdx__circular_begin(ctx);
    rc = c->kind == SDX_CODEC_TAESD ? sdx__taesd_decode(ctx, &m->taesd, &m->arena, &z, &image, 1)
                                    : sdx__vae_decode(ctx, &m->vae, &m->arena, &z, &image, tiling);
    if (sdx__vae_retry_tiled(m, c, tiling, rc, "decode", &retry)) rc = sdx__vae_decode(ctx, &m->vae, &m->arena, &z, &image, &retry);
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
    sdx__vae_tiling retry;
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
    if (sdx__vae_retry_tiled(m, c, tiling, rc, "encode", &retry))
        rc = sdx__vae_encode(ctx, &m->vae, &m->arena, &x, &out, std ? &logvar : NULL, &retry);
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

/* The VAE's and TAESD's mapped weights, after a decode or an encode. */
static void sdx__release_codecs(sdx_model *m) {
    if (m->loaded_vae) sdx__wset_release_all(&m->vae.w);
    sdx__wset_release_all(&m->taesd.dec.w);
    sdx__wset_release_all(&m->taesd.enc.w);
}

/* VAE memory tiling for one pass (sdx_gen_params.vae_tiling, not the
 * seamless texture): the caller's choice, under a budget in low-memory mode. */
static sdx__vae_tiling sdx__tiling(const sdx_model *m, const sdx_gen_params *p) {
    sdx__vae_tiling t;
    memset(&t, 0, sizeof t);
    t.mode = p ? p->vae_tiling : 0;
    t.tile_w = p ? p->vae_tile_width : 0;    /* 0: the VAE's choice */
    t.tile_h = p ? p->vae_tile_height : 0;
    if (m->low_memory) t.budget_bytes = SDX_LOW_MEMORY_VAE_BUDGET;
    return t;
}

/* ---- images ------------------------------------------------------------ */

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

/* ---- stage: VAE or TAESD ------------------------------------------------- */

SDX_API sdx_result sdx_decode_latent(sdx_model *m, const sdx_tensor *latent, const sdx_gen_params *p, sdx_image *out) {
    sdx__codec c;
    sdx__vae_tiling tiling;
    char sh[96];
    int rc;
    if (m) sdx__call_begin(m->ctx);
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_decode_latent: out is required") : SDX_ERR_INVALID_ARG;
    tiling = sdx__tiling(m, p);
    if ((rc = sdx__codec_pick(m, p ? p->codec : SDX_CODEC_AUTO, 0, &c)) != SDX_OK) return (sdx_result)rc;
    if (!latent || latent->dtype != SDX_F32 || latent->device || latent->ndim != 4 || latent->shape[0] != 1 ||
        latent->shape[1] != c.channels || latent->shape[2] < 1 || latent->shape[3] < 1 || latent->shape[2] * c.factor > 16384 ||
        latent->shape[3] * c.factor > 16384 || !latent->data)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_decode_latent: latent %s %s; expected host F32 [1, %d, h, w], h and w 1..%d",
                         latent ? sdx_shape_str(latent, sh, sizeof sh) : "NULL", latent ? sdx_dtype_name(latent->dtype) : "",
                         c.channels, 16384 / c.factor);
    rc = sdx__decode_to_image(m, &c, (const float *)latent->data, (int)latent->shape[2], (int)latent->shape[3], &tiling,
                              p ? p->seamless : 0, out);
    sdx__release_codecs(m);
    sdx__stage_done(m, "decoding");
    return (sdx_result)rc;
}

SDX_API sdx_result sdx_encode_image(sdx_model *m, const sdx_image *img, const sdx_gen_params *p, sdx_tensor *latent) {
    sdx__codec c;
    sdx__vae_tiling tiling;
    float *x = NULL, *eps = NULL, *std = NULL;
    int w, h, encode_sample = p && p->encode_sample;
    size_t n;
    int64_t shape[4];
    int rc;
    if (m) sdx__call_begin(m->ctx);
    if (latent) memset(latent, 0, sizeof *latent);
    if (!m || !img || !latent) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_encode_image: image and latent are required") : SDX_ERR_INVALID_ARG;
    tiling = sdx__tiling(m, p);
    if ((rc = sdx__codec_pick(m, p ? p->codec : SDX_CODEC_AUTO, 1, &c)) != SDX_OK) return (sdx_result)rc;
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
    return (sdx_result)rc;
}
