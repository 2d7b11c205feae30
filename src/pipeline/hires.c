#pragma once
#include "params.c"
#include "img2img.c"

/* ===================================================================== */
/*  Hires fix: small txt2img, upscale, img2img at the large size          */
/* ===================================================================== */

/* The latent upscalers: our name, A1111's label, the interpolate mode. */
static const struct sdx__hires_latent {
    const char *name, *a1111, *mode;
} sdx__hires_latents[] = {
    { "latent",               "Latent",                 "bilinear" },   /* A1111's default */
    { "latent-bilinear",      "Latent",                 "bilinear" },
    { "latent-nearest",       "Latent (nearest)",       "nearest" },
    { "latent-nearest-exact", "Latent (nearest-exact)", "nearest-exact" },
};

static const struct sdx__hires_latent *sdx__hires_latent_find(const char *name) {
    for (size_t i = 0; i < sizeof sdx__hires_latents / sizeof sdx__hires_latents[0]; i++)
        if (!strcmp(name ? name : "latent", sdx__hires_latents[i].name)) return &sdx__hires_latents[i];
    return NULL;
}

static int sdx__hires_on(const sdx_gen_params *p) { return p->hires_scale > 0 || p->hires_width > 0 || p->hires_height > 0; }

static float sdx__hires_denoise(const sdx_gen_params *p) { return p->hires_denoise != 0 ? p->hires_denoise : 0.7f; }

/* The second pass's size from the first's: as given (one side 0 keeps
 * the aspect, as A1111), else the scale, down to multiples of 8. */
static void sdx__hires_size(const sdx_gen_params *p, int w, int h, int *hw, int *hh) {
    if (p->hires_width > 0 || p->hires_height > 0) {
        *hw = p->hires_width > 0 ? p->hires_width : (int)((int64_t)p->hires_height * w / h) / 8 * 8;
        *hh = p->hires_height > 0 ? p->hires_height : (int)((int64_t)p->hires_width * h / w) / 8 * 8;
    } else {
        *hw = (int)((double)w * p->hires_scale) / 8 * 8;
        *hh = (int)((double)h * p->hires_scale) / 8 * 8;
    }
}

/* torch's source index for nearest (exact 0) and nearest-exact (1). */
static int sdx__nearest_tap(int in, int out, int i, int exact) {
    float scale = (float)in / (float)out;
    int s = (int)floorf(exact ? ((float)i + 0.5f) * scale : (float)i * scale);
    return SDX__MIN(s, in - 1);
}

SDX_API sdx_result sdx_latent_upscale(sdx_ctx *ctx, const sdx_tensor *in, int width, int height, const char *mode,
                                      sdx_tensor *out) {
    int64_t shape[4];
    int bilinear, exact, ih, iw;
    float *src;
    if (!ctx || !in || !out || !mode) return ctx ? sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_latent_upscale: NULL argument") : SDX_ERR_INVALID_ARG;
    bilinear = !strcmp(mode, "bilinear");
    exact = !strcmp(mode, "nearest-exact");
    if (!bilinear && !exact && strcmp(mode, "nearest"))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_latent_upscale: mode '%s': expected nearest, nearest-exact or bilinear", mode);
    if (in->ndim != 4 || !in->data || in->shape[2] < 1 || in->shape[3] < 1 || in->shape[2] > SDX__MAX_INIT_LATENT ||
        in->shape[3] > SDX__MAX_INIT_LATENT || width < 1 || height < 1 || width > SDX__MAX_INIT_LATENT ||
        height > SDX__MAX_INIT_LATENT || (in->dtype != SDX_F32 && in->dtype != SDX_F16 && in->dtype != SDX_BF16))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_latent_upscale: expected an F32/F16/BF16 [n, c, h, w] latent and sides "
                         "1..%d", SDX__MAX_INIT_LATENT);
    ih = (int)in->shape[2];
    iw = (int)in->shape[3];
    shape[0] = in->shape[0];
    shape[1] = in->shape[1];
    shape[2] = height;
    shape[3] = width;
    if (sdx_tensor_alloc(ctx, out, SDX_F32, 4, shape) != SDX_OK) return SDX_ERR_NOMEM;
    if (!(src = (float *)sdx__malloc(ctx, sizeof(float) * (size_t)ih * (size_t)iw)))
        { sdx_tensor_free(ctx, out); return (sdx_result)sdx__nomem(ctx, "latent upscale", sizeof(float) * (size_t)ih * (size_t)iw); }
    for (int64_t c = 0; c < shape[0] * shape[1]; c++) {
        float *dst = (float *)out->data + c * height * width;
        sdx__load_f32(in->data, in->dtype, c * ih * iw, (int64_t)ih * iw, src);
        if (bilinear) { sdx__resize_bilinear(src, ih, iw, dst, height, width); continue; }
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++)
                dst[(size_t)y * (size_t)width + (size_t)x] =
                    src[(size_t)sdx__nearest_tap(ih, height, y, exact) * (size_t)iw + (size_t)sdx__nearest_tap(iw, width, x, exact)];
    }
    sdx__free(ctx, src);
    return SDX_OK;
}

/* An image through the ESRGAN model until it covers w x h (A1111 repeats
 * its upscaler so too), bilinear down to w x h where it overshoots (A1111
 * uses Lanczos there), then encoded as img2img encodes. */
static int sdx__hires_model_latent(sdx_model *m, sdx_upscaler *up, const sdx_image *img, int w, int h, const sdx_gen_params *p,
                                   sdx_tensor *latent) {
    sdx_ctx *ctx = m->ctx;
    sdx_image big, fit;
    int s = sdx_upscaler_scale(up), repeats = 0, rc;
    memset(&big, 0, sizeof big);
    memset(&fit, 0, sizeof fit);
    fit.channels = 3;
    for (int64_t bw = img->width, bh = img->height; (bw < w || bh < h) && s > 1; bw *= s, bh *= s) repeats++;
    if (!repeats) repeats = 1;
    if ((rc = sdx_upscale(up, img, repeats, &big)) != SDX_OK) return rc;
    if (big.width != w || big.height != h) {
        size_t in_n = (size_t)big.width * (size_t)big.height, out_n = (size_t)w * (size_t)h;
        float *a = (float *)sdx__malloc(ctx, sizeof(float) * (in_n + out_n));
        fit.width = w;
        fit.height = h;
        fit.data = (uint8_t *)sdx__malloc(ctx, out_n * 3);
        if (!a || !fit.data) { sdx__free(ctx, a); sdx_image_free(ctx, &fit); sdx_image_free(ctx, &big); return sdx__nomem(ctx, "hires resize", out_n * 3); }
        for (int c = 0; c < 3; c++) {
            for (size_t i = 0; i < in_n; i++) a[i] = big.data[i * 3 + (size_t)c];
            sdx__resize_bilinear(a, big.height, big.width, a + in_n, h, w);
            for (size_t i = 0; i < out_n; i++) fit.data[i * 3 + (size_t)c] = (uint8_t)SDX__MIN(SDX__MAX(nearbyintf(a[in_n + i]), 0.0f), 255.0f);
        }
        sdx__free(ctx, a);
        sdx_image_free(ctx, &big);
        big = fit;
    }
    rc = sdx_encode_image(m, &big, p, latent);
    sdx_image_free(ctx, &big);
    return rc;
}

/* Runs pass 1 and each pass 2: generate.c, which calls this file's
 * sdx__hires_generate and so includes it first; the include at the end of
 * this file brings it in when this part is compiled alone. */
static int sdx__generate(sdx_model *m, const sdx_gen_params *params, int latent_only, sdx_gen_result *out);

/* Pass 2 of image i: its upscaled latent img2img'd at the hires size. */
static int sdx__hires_pass(sdx_model *m, const sdx_gen_params *q, const struct sdx__hires_latent *lat, sdx_upscaler *up,
                           const sdx_gen_result *first, int i, int hw, int hh, sdx_gen_result *out) {
    sdx_ctx *ctx = m->ctx;
    sdx_gen_params r = *q;
    sdx_tensor init;
    sdx_gen_result one;
    int f = sdx__codec_factor(m, q->codec), rc;
    memset(&init, 0, sizeof init);
    r.width = hw;
    r.height = hh;
    r.steps = q->hires_steps ? q->hires_steps : q->steps;
    r.strength = sdx__hires_denoise(q);
    r.batch_count = 1;
    r.seed = first->seeds[i];
    r.hires_scale = 0;
    r.hires_width = r.hires_height = 0;
    rc = lat ? sdx_latent_upscale(ctx, &first->latents[i], hw / f, hh / f, lat->mode, &init)
             : sdx__hires_model_latent(m, up, &first->images[i], hw, hh, &r, &init);
    r.init_latent = &init;
    if (rc == SDX_OK && (rc = sdx__generate(m, &r, 0, &one)) == SDX_OK) {
        out->images[i] = one.images[0];
        out->latents[i] = one.latents[0];
        memset(&one.images[0], 0, sizeof one.images[0]);
        memset(&one.latents[0], 0, sizeof one.latents[0]);
        sdx_gen_result_free(ctx, &one);
        out->seeds[i] = first->seeds[i];
        out->count = i + 1;
    }
    sdx_tensor_free(ctx, &init);
    return rc;
}

static int sdx__hires_generate(sdx_model *m, const sdx_gen_params *p, sdx_gen_result *out) {
    sdx_ctx *ctx = m->ctx;
    sdx_gen_params q = *p;
    const struct sdx__hires_latent *lat = sdx__hires_latent_find(p->hires_upscaler);
    sdx_upscaler *up = NULL;
    sdx_gen_result first;
    int w, h, hw, hh, rc;
    memset(out, 0, sizeof *out);
    if (p->init_image || p->init_latent || p->mask || p->timesteps || p->sigmas)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "hires fix is a txt2img second pass: not with an init image, latent or mask, "
                         "nor explicit timesteps or sigmas");
    if (p->refiner)
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "hires fix with a refiner: not supported (refine the hires result with a "
                         "second generation: init_latent, strength and the refiner)");
    sdx__output_size(m, p, sdx__codec_factor(m, p->codec), &w, &h);
    sdx__hires_size(p, w, h, &hw, &hh);
    if (hw < 8 || hh < 8 || hw % 8 || hh % 8 || !(sdx__hires_denoise(p) > 0 && sdx__hires_denoise(p) <= 1) || p->hires_steps < 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "hires fix to %dx%d, denoise %g, %d steps: the size must be multiples of 8, "
                         "the denoise in (0, 1]", hw, hh, (double)sdx__hires_denoise(p), p->hires_steps);
    if (!lat && (rc = sdx_upscaler_load(ctx, p->hires_upscaler, &up)) != SDX_OK) return rc;
    q.hires_scale = 0;
    q.hires_width = q.hires_height = 0;
    if ((rc = sdx__generate(m, &q, lat != NULL, &first)) == SDX_OK) {
        q.hires_steps = p->hires_steps;
        q.hires_denoise = p->hires_denoise;
        out->images = (sdx_image *)sdx__calloc(ctx, (size_t)first.count, sizeof(sdx_image));
        out->latents = (sdx_tensor *)sdx__calloc(ctx, (size_t)first.count, sizeof(sdx_tensor));
        out->seeds = (int64_t *)sdx__calloc(ctx, (size_t)first.count, sizeof(int64_t));
        if (!out->images || !out->latents || !out->seeds) rc = sdx__nomem(ctx, "hires fix", (size_t)first.count * 64);
        for (int i = 0; i < first.count && rc == SDX_OK; i++) rc = sdx__hires_pass(m, &q, lat, up, &first, i, hw, hh, out);
        sdx_gen_result_free(ctx, &first);
    }
    sdx_upscaler_free(up);
    if (rc != SDX_OK) sdx_gen_result_free(ctx, out);
    return rc;
}

/* A1111's fields: `Denoising strength: 0.7, Hires upscale: 2` (or
 * `Hires resize: 1024x1024`), `Hires steps: 10`, `Hires upscaler: ...`
 * (the model's file name without folder or extension). */
static void sdx__hires_parameters(const sdx_gen_params *p, sdx__buf *b) {
    const struct sdx__hires_latent *lat;
    const char *name, *slash, *dot;
    if (!sdx__hires_on(p)) return;
    sdx__buf_fmt(b, ", Denoising strength: %g", (double)sdx__hires_denoise(p));
    if (p->hires_width > 0 || p->hires_height > 0) sdx__buf_fmt(b, ", Hires resize: %dx%d", p->hires_width, p->hires_height);
    else sdx__buf_fmt(b, ", Hires upscale: %g", (double)p->hires_scale);
    if (p->hires_steps) sdx__buf_fmt(b, ", Hires steps: %d", p->hires_steps);
    if ((lat = sdx__hires_latent_find(p->hires_upscaler))) { sdx__buf_fmt(b, ", Hires upscaler: %s", lat->a1111); return; }
    name = p->hires_upscaler;
    for (slash = name; *slash; slash++)
        if (*slash == '/' || *slash == '\\') name = slash + 1;
    dot = strrchr(name, '.');
    sdx__buf_fmt(b, ", Hires upscaler: %.*s", (int)(dot && dot != name ? dot - name : (ptrdiff_t)strlen(name)), name);
}

#include "generate.c"   /* sdx__generate (see its declaration above) */
