#pragma once
#include "codec.c"
#include "../family/family.c"
#include "../sampling/schedules.c"
#include "../sampling/samplers.c"

/* ===================================================================== */
/*  Pipeline: resolved parameters (sdx_gen_params into sdx__gen)          */
/* ===================================================================== */

/* One ControlNet of a generation: its picture at the output size and the
 * sigma window in which it runs. */
typedef struct sdx__gen_control {
    sdx_controlnet *net;
    float strength;
    float sigma_start, sigma_end;   /* runs while sigma_end <= sigma <= sigma_start */
    float *hint;                    /* [hint_channels, height, width] */
} sdx__gen_control;

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
#define SDX__DEFAULT_REFINER_SWITCH   0.8f
#define SDX__DEFAULT_ASCORE           6.0f   /* SGM's and ComfyUI's CLIPTextEncodeSDXLRefiner */
#define SDX__DEFAULT_NEGATIVE_ASCORE  2.5f

static float sdx__refiner_switch(const sdx_gen_params *p) {
    return p->refiner_switch != 0 ? p->refiner_switch : SDX__DEFAULT_REFINER_SWITCH;
}

/* The aesthetic score of the prompt (row 0) or the negative prompt (1). */
static float sdx__ascore(const sdx_gen_params *p, int row) {
    float a = row ? p->refiner_negative_ascore : p->refiner_ascore;
    return a != 0 ? a : row ? SDX__DEFAULT_NEGATIVE_ASCORE : SDX__DEFAULT_ASCORE;
}

/* The resolution the model's family was trained at (m may be NULL, or of
 * no family when loaded from TAESD files: then the first family's). */
static int sdx__default_size(const sdx_model *m) {
    const sdx__family *f = m ? sdx__family_get(m->family) : NULL;
    if (!f) f = &sdx__families[0];
    return m && m->prediction == SDX_PRED_V ? f->size_v : f->size_eps;
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

/* Checks an explicit schedule (timesteps or sigmas), which sets the
 * step count, and eta. */
static int sdx__gen_resolve_schedule(sdx__gen *g) {
    const sdx_gen_params *p = g->p;
    sdx_ctx *ctx = g->m->ctx;
    sdx_tensor sig;
    int rc;
    if (p->use_eta && !(p->eta >= 0.0f && p->eta <= 1.0f))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "eta %g: must be in [0, 1]", (double)p->eta);
    if (!p->timesteps && !p->sigmas) return SDX_OK;
    if (p->timesteps && p->sigmas) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "timesteps and sigmas: give one or the other");
    if ((p->init_image || p->init_latent) && p->strength != 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "strength %g with explicit %s: the list is the schedule (start it lower "
                         "for less change), leave strength 0", (double)p->strength, p->timesteps ? "timesteps" : "sigmas");
    if (p->timesteps) {
        if ((rc = sdx_sigmas_from_timesteps(ctx, &g->m->ms, p->timesteps, p->n_timesteps, &sig)) != SDX_OK) return rc;
        sdx_tensor_free(ctx, &sig);
        g->steps = p->n_timesteps;
        return SDX_OK;
    }
    if (p->n_sigmas < 2 || p->n_sigmas > 100001)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sigmas: need 2..100001 values (steps + 1), got %d", p->n_sigmas);
    g->steps = p->n_sigmas - 1;
    return sdx__check_sigmas(ctx, "sigmas", p->sigmas, p->n_sigmas);
}

/* The sigmas of a generation: the explicit list, else the scheduler's. */
static int sdx__gen_sigmas(const sdx__gen *g, sdx_tensor *out) {
    const sdx_gen_params *p = g->p;
    sdx_ctx *ctx = g->m->ctx;
    int64_t shape[1];
    int rc;
    if (p->timesteps) return sdx_sigmas_from_timesteps(ctx, &g->m->ms, p->timesteps, p->n_timesteps, out);
    if (!p->sigmas) return sdx_sampler_sigmas(ctx, &g->m->ms, g->scheduler, g->sampler, g->steps, g->denoise, out);
    shape[0] = p->n_sigmas;
    if ((rc = sdx_tensor_alloc(ctx, out, SDX_F32, 1, shape)) == SDX_OK) memcpy(out->data, p->sigmas, sizeof(float) * (size_t)p->n_sigmas);
    return rc;
}

/* The start latent from this image's noise: explicit timesteps start as
 * diffusers does (unit-variance VP noise, or the init noised to sigma0),
 * everything else as ComfyUI (sdx_start_latent). */
static void sdx__gen_start_latent(const sdx__gen *g, float sigma0, float *x, size_t n) {
    if (g->p->timesteps) sdx_add_noise(g->init_latent ? sigma0 : sqrtf(1.0f + sigma0 * sigma0), g->init_latent, g->noise, x, n);
    else sdx_start_latent(&g->m->ms, sigma0, g->init_latent, g->noise, x, n);
}

/* Conditionings a model call takes: the prompt, and the negative prompt
 * when guidance is on (cfg above 1; diffusers' rule, which at cfg 1 is
 * ComfyUI's too). */
static int sdx__gen_n_cond(const sdx__gen *g) { return g->cfg > 1.0f ? 2 : 1; }

/* A model of a low-noise-only family (the SDXL refiner) cannot start from
 * noise; a refiner must continue in the base's latent space. */
static int sdx__gen_resolve_refiner(const sdx__gen *g) {
    const sdx_gen_params *p = g->p;
    sdx_model *m = g->m, *r = p->refiner;
    const sdx__family *f = sdx__family_get(m->family), *rf;
    float sw = sdx__refiner_switch(p), a = sdx__ascore(p, 0), na = sdx__ascore(p, 1);
    if (!(a > 0 && a <= 1000) || !(na > 0 && na <= 1000))
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "aesthetic scores %g and %g (negative): must be in (0, 1000]", (double)a,
                         (double)na);
    if (f->low_noise_only && !p->init_image && !p->init_latent)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "'%s' is an %s: trained on the low-noise end of the schedule only, it cannot "
                         "start from noise; give it as the refiner of an SDXL base (sdx_gen_params.refiner, --refiner) or use it "
                         "for img2img", m->name, f->name);
    if (!r) return SDX_OK;
    if (!(sw > 0 && sw <= 1)) return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "refiner switch %g: must be in (0, 1]", (double)sw);
    if (r->ctx != m->ctx)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "the refiner '%s' was loaded on another context than '%s'", r->name, m->name);
    if (!r->loaded_unet || !r->tok)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "the refiner '%s' was loaded without its UNet or vocabulary (codecs_only, "
                         "no_vocab)", r->name);
    rf = sdx__family_get(r->family);
    if (r->unet.in_channels != g->lc || r->unet.out_channels != g->lc || rf->vae_scale != f->vae_scale)
        return sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "'%s' (%s, %d latent channels in) cannot refine '%s' (%s, %d): their "
                         "latents differ (VAE scale %g vs %g); an SDXL refiner goes with an SDXL base", r->name, rf->name,
                         r->unet.in_channels, m->name, f->name, g->lc, (double)rf->vae_scale, (double)f->vae_scale);
    if (p->mask)
        return sdx__fail(m->ctx, SDX_ERR_UNSUPPORTED, "a refiner with an inpainting mask: not supported (refine the "
                         "inpainted image with img2img)");
    return SDX_OK;
}

/* The refiner's part of a generation: the base's sizes, sampler, cfg and
 * seed with the refiner model; no init, mask or ControlNets (they are the
 * base's), and no noise of its own: it continues the base's latent. */
static void sdx__gen_for_refiner(const sdx__gen *g, sdx__gen *r) {
    memset(r, 0, sizeof *r);
    r->m = g->p->refiner;
    r->p = g->p;
    r->width = g->width;
    r->height = g->height;
    r->steps = g->steps;
    r->batch = g->batch;
    r->lh = g->lh;
    r->lw = g->lw;
    r->lc = g->lc;
    r->lf = g->lf;
    r->cfg = g->cfg;
    r->sampler = g->sampler;
    r->scheduler = g->scheduler;
    r->denoise = g->denoise;
    r->seed = g->seed;
    r->image_index = g->image_index;
}

/* Steps the base takes of n, the rest the refiner's: round(switch * n),
 * half up, with the switch read as the decimal it stands for (0.8 of 25
 * is 20), as ComfyUI's end_at_step / start_at_step pair counts steps.
 * diffusers' denoising_end counts timesteps instead (those >= round(1000
 * * (1 - switch))); README "SDXL refiner" compares the two. */
static int sdx__refiner_split(const sdx_gen_params *p, int n) {
    double k = floor(sdx__float_as_decimal(sdx__refiner_switch(p)) * n + 0.5);
    return (int)SDX__MIN(SDX__MAX(k, 0.0), (double)n);
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
        const sdx__family *f = sdx__family_get(m->family);   /* known: the UNet came from a checkpoint */
        const char *s = p->scheduler ? p->scheduler : sdx__default_scheduler;
        if (sdx__scheduler_is_family_ays(s)) {   /* the family's table */
            if (!f->ays) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "scheduler 'ays' has no Align Your Steps table for %s", f->name);
            s = f->ays;
        }
        if ((rc = sdx_scheduler_from_name(ctx, s, &g->scheduler)) != SDX_OK) return rc;
    }
    if (m->unet.in_channels != g->lc && m->unet.in_channels != 2 * g->lc + 1)
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "UNet with %d input channels (supported: %d, %d for inpainting)", m->unet.in_channels,
                         g->lc, 2 * g->lc + 1);
    if ((rc = sdx__gen_resolve_init(g)) != SDX_OK) return rc;
    if ((rc = sdx__gen_resolve_schedule(g)) != SDX_OK) return rc;
    if ((rc = sdx__gen_resolve_refiner(g)) != SDX_OK) return rc;
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

static sdx__vae_tiling sdx__gen_tiling(const sdx__gen *g) { return sdx__tiling(g->m, g->p); }

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
