#pragma once
#include "params.c"

/* ===================================================================== */
/*  Pipeline: img2img and inpainting inputs                               */
/* ===================================================================== */
/* ComfyUI's graphs, node by node (shared golden img2img/README.md):
 * VAEEncode (crop, [-1, 1], posterior, scale), SetLatentNoiseMask (4-channel
 * models) or InpaintModelConditioning (9-channel models), KSampler. */

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
