#pragma once
#include "params.c"
#include "conditioning.c"
#include "img2img.c"
#include "control.c"

/* ===================================================================== */
/*  Pipeline: the denoiser the sampler calls; sampling sessions           */
/* ===================================================================== */

/* The UNet's (and the ControlNets') mapped weights: not needed again
 * until the next sampling, and the VAE decode comes first. */
static void sdx__release_unet(sdx__gen *g) {
    sdx__wset_release_all(&g->m->unet.w);
    for (int i = 0; i < g->n_controls; i++) sdx__wset_release_all(&g->controls[i].net->net.enc.w);
}

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
    const sdx__unet_kv *kv = NULL;
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
    timesteps[0] = timesteps[1] = (float)sdx_model_timestep(&m->ms, m->prediction, sigma);
    if (rc == SDX_OK) rc = sdx__gen_run_controls(g, &x4, sigma, timesteps, &control);
    /* on a device the context's keys and values are kept (sdx__unet_kv) */
    if (rc == SDX_OK && sdx__on_device(ctx) && (rc = sdx__unet_kv_make(ctx, &m->unet, &g->cond->unet_context, g->cond->kv)) == SDX_OK)
        kv = g->cond->kv;
    if (rc == SDX_OK) {
        if (g->p->seamless) sdx__circular_begin(ctx);
        rc = sdx__unet_forward_control(ctx, &m->unet, &m->arena, &xin, timesteps, &g->cond->unet_context,
                                       g->cond->y.data ? &g->cond->unet_y : NULL, control, kv, &out);
        sdx__circular_pause(ctx);
    }
    if (rc == SDX_OK) {
        float *o = (float *)sdx__arena_host_alloc(&m->arena, sizeof(float) * (size_t)B * n);
        if (!o || (rc = sdx__download(ctx, o, &out)) != SDX_OK) {
            sdx__arena_release(&m->arena, mark);
            return o ? rc : SDX_ERR_NOMEM;
        }
        sdx_model_denoised(&m->ms, m->prediction, sigma, x, o, o, n);
        if (B == 2) {
            sdx_model_denoised(&m->ms, m->prediction, sigma, x, o + n, o + n, n);
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

/* Live preview after step `step` (1-based): x0, or x with preview_noisy. */
static int sdx__gen_preview(sdx__gen *g, int step, int total, const float *x, const float *denoised) {
    const sdx_gen_params *p = g->p;
    sdx__vae_tiling tiling = sdx__gen_tiling(g);
    sdx_image img;
    int every = p->preview_interval > 0 ? p->preview_interval : 1, rc;
    if (step % every) return 0;
    rc = sdx__decode_to_image(g->m, &g->preview, p->preview_noisy || !denoised ? x : denoised, g->lh, g->lw, &tiling, p->seamless, &img);
    if (rc == SDX_ERR_CANCELLED) return rc;   /* stops the sampler; sdx__sess_run says why */
    if (rc != SDX_OK) {
        /* a preview is a convenience: say why it failed, keep generating */
        sdx__log(g->m->ctx, SDX_LOG_WARN, "preview after step %d: %s", step, sdx_last_error(g->m->ctx));
        return 0;
    }
    rc = p->preview(p->preview_user, g->image_index, step, total, &img);
    sdx_image_free(g->m->ctx, &img);
    return rc;
}

/* ---- stage: sampling ------------------------------------------------------ */
/* A session samples one image. The samplers are plain loops with their
 * history in locals, so stepping replays: every model output is kept, and
 * each sdx_sampling_step reruns the sampler from the start latent (same
 * noise draws), answering earlier model calls from the record, and pauses
 * at the first call that needs the model again. That costs a few vector
 * operations per past step and gives every sampler step-by-step, with
 * results identical to one uninterrupted run.
 * With a refiner a session has two parts, as ComfyUI's two
 * KSamplerAdvanced: the base's sampler over sigmas[0..split] from the
 * start latent, then a fresh run of the refiner's over sigmas[split..n]
 * from the base's latent as it is (no noise added; per-step noise drawn
 * again from seed + 1, as a second sampler with the same seed draws it). */

struct sdx_sampling {
    sdx__gen g;
    sdx_tensor sigmas;
    sdx__gen rg;              /* the refiner's part (rg.m NULL: none) */
    int split;                /* steps the base takes of `steps` */
    int part;                 /* running: 0 the base's steps, 1 the refiner's */
    size_t n;                 /* floats in a latent */
    int64_t seed;
    float *start;             /* the start latent of the part, for replays */
    sdx_tensor latent;        /* [1, 4, h, w] the state shown to the caller */
    sdx_tensor denoised;      /* the latest x0 prediction, for previews */
    float *work;              /* the sampler's x during a run */
    float **record;           /* model outputs, by call */
    int n_record, cap_record, keep_record;
    int calls, new_calls, max_new;   /* this run */
    int reported, steps, done;
    int status;               /* an error kept: the session cannot go on */
    unsigned cancels_seen;    /* sdx_cancel's counter as the session began */
};

/* SDX_OK, or SDX_ERR_CANCELLED when sdx_cancel stopped the session. */
static int sdx__sess_check_cancel(const sdx_sampling *s) {
    sdx_ctx *ctx = s->g.m->ctx;
    if (!s->reported) return sdx__check_cancel(ctx, "before the first of %d steps", s->steps);
    return sdx__check_cancel(ctx, "after step %d of %d", s->reported, s->steps);
}

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
    if ((rc = sdx__sess_check_cancel(s)) != SDX_OK ||
        (rc = sdx__gen_denoise(s->part ? &s->rg : &s->g, x, sigma, denoised)) != SDX_OK)
        return rc;
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

/* step and total of the part's sampler; the session counts both parts */
static int sdx__sess_report(void *user, int step, int total, const float *x, const float *denoised) {
    sdx_sampling *s = (sdx_sampling *)user;
    const sdx_gen_params *p = s->g.p;
    int rc;
    (void)total;
    if (s->part) step += s->split;
    total = s->steps;
    if (step < s->reported) return 0;           /* replayed */
    s->reported = step + 1;
    memcpy(s->denoised.data, denoised, s->n * sizeof(float));
    memcpy(s->latent.data, x, s->n * sizeof(float));
    if (p->preview && (rc = sdx__gen_preview(&s->g, step + 1, total, x, denoised)) != 0) return rc;
    if (!p->progress) return 0;
    return p->progress(p->progress_user, s->g.image_index, step + 1, total, &s->latent);
}

/* The running part's sampler from its start latent, until `max_new` more
 * model calls (0: to its end); SDX_ERR_CANCELLED when paused there. */
static int sdx__sess_sample(sdx_sampling *s, int max_new) {
    sdx_sample_desc sd;
    int first = s->part ? s->split : 0, last = s->part ? s->steps : s->split;
    memcpy(s->work, s->start, s->n * sizeof(float));
    /* ComfyUI's default_noise_sampler seeds its generator with seed + 1 on CPU */
    sdx_rng_init(&s->g.step_rng, s->g.p->rng, (uint64_t)s->seed + 1);
    s->calls = s->new_calls = 0;
    s->max_new = max_new;
    memset(&sd, 0, sizeof sd);
    sd.sampler = s->g.sampler;
    sd.sigmas = (const float *)s->sigmas.data + first;
    sd.n_sigmas = last - first + 1;
    sd.n = s->n;
    sd.denoise = sdx__sess_denoise;
    sd.denoise_user = s;
    sd.noise = sdx__sess_noise;
    sd.noise_user = s;
    sd.step = sdx__sess_report;
    sd.step_user = s;
    sd.use_eta = s->g.p->use_eta;
    sd.eta = s->g.p->eta;
    return sdx_sample(s->g.m->ctx, &sd, s->work);
}

/* The weights of the running part go back between stages. */
static void sdx__sess_part_done(sdx_sampling *s) {
    sdx__gen *g = s->part ? &s->rg : &s->g;
    sdx__release_unet(g);
    sdx__stage_done(g->m, "sampling");
}

/* Runs the sampler until `max_new` more model calls (0: to the end). */
static int sdx__sess_run(sdx_sampling *s, int max_new) {
    sdx_ctx *ctx = s->g.m->ctx;
    int rc, reported = s->reported, budget = max_new;
    if (s->status != SDX_OK) return s->status;
    if (s->done) return SDX_OK;
    ctx->cancels_seen = s->cancels_seen;         /* a session is one call: sdx_cancel */
    for (;;) {
        rc = sdx__sess_sample(s, budget);
        if (rc == SDX_ERR_CANCELLED && budget && s->new_calls == budget && s->calls == s->n_record) {
            s->reported = SDX__MAX(s->reported, reported);
            return SDX_OK;                       /* paused */
        }
        if (rc == SDX_ERR_CANCELLED && sdx__cancel_requested(ctx)) rc = sdx__sess_check_cancel(s);   /* a preview's decode saw it */
        /* the result is the sampler's x, with no re-paste of the kept latent:
         * the last step to sigma 0 returns it there up to rounding (ComfyUI) */
        if (rc == SDX_OK) rc = sdx__nonfinite_stage(ctx, s->part || s->split == s->steps ? "the final latent" : "the base's latent",
                                                    s->work, s->n);
        if (rc != SDX_OK || s->part || s->split == s->steps) break;
        /* the base's part is over: the refiner goes on from its latent */
        memcpy(s->start, s->work, s->n * sizeof(float));
        memcpy(s->latent.data, s->work, s->n * sizeof(float));
        for (int i = 0; i < s->n_record; i++) sdx__free(ctx, s->record[i]);
        s->n_record = 0;
        sdx__sess_part_done(s);
        s->part = 1;
        if (budget && (budget -= s->new_calls) == 0) return SDX_OK;
    }
    if (rc == SDX_OK) {
        memcpy(s->latent.data, s->work, s->n * sizeof(float));
        s->done = 1;
    }
    sdx__sess_part_done(s);
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
    sdx__gen_free(&s->rg);
    sdx__free(ctx, s);
}

/* cond was encoded by m for g's cfg and (vector conditioning) size. */
static int sdx__cond_fits(const sdx_cond *cond, const sdx_model *m, const sdx__gen *g) {
    return cond && cond->m == m && cond->n_cond == sdx__gen_n_cond(g) &&
           (!cond->y.data || (cond->width == g->width && cond->height == g->height));
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
    if (!sdx__cond_fits(cond, m, &s->g) || (cond->refiner ? cond->refiner->m : NULL) != p->refiner ||
        (p->refiner && !sdx__cond_fits(cond->refiner, p->refiner, &s->g))) {
        sdx_sampling_free(s);
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sampling_begin: the conditioning was encoded for another model, "
                         "refiner, cfg (above 1 or not) or SDXL size than these parameters");
    }
    if (index < 0 || index >= s->g.batch) {
        rc = sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sampling_begin: image %d of a batch of %d", index, s->g.batch);
        sdx_sampling_free(s);
        return rc;
    }
    s->g.cond = cond;
    s->g.image_index = index;
    if (p->refiner) {
        sdx__gen_for_refiner(&s->g, &s->rg);
        s->rg.cond = cond->refiner;
    }
    s->cancels_seen = ctx->cancels_seen;
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
    if (rc == SDX_OK) rc = sdx__gen_sigmas(&s->g, &s->sigmas);
    if (rc == SDX_OK) rc = sdx__gen_prepare_init(&s->g);
    if (rc == SDX_OK) rc = sdx__gen_prepare_controls(&s->g);
    if (s->g.init_latent) sdx__release_codecs(m);    /* the init image was encoded */
    sdx__stage_done(m, "encoding the init image");
    if (rc != SDX_OK) { sdx_sampling_free(s); return rc; }
    {
        sdx_rng rng;
        sdx_rng_init(&rng, p->rng, (uint64_t)s->seed);
        sdx_rng_randn(&rng, s->g.noise, s->n);
        sdx__gen_start_latent(&s->g, ((const float *)s->sigmas.data)[0], s->start, s->n);
    }
    memcpy(s->latent.data, s->start, s->n * sizeof(float));
    s->steps = (int)s->sigmas.shape[0] - 1;
    s->split = p->refiner ? sdx__refiner_split(p, s->steps) : s->steps;
    *out = s;
    return SDX_OK;
}

SDX_API sdx_result sdx_sampling_begin(sdx_model *m, const sdx_gen_params *p, const sdx_cond *cond, int index, sdx_sampling **out) {
    if (m) sdx__call_begin(m->ctx);
    if (out) *out = NULL;
    if (!m || !p || !out) return m ? sdx__fail(m->ctx, SDX_ERR_INVALID_ARG, "sdx_sampling_begin: params and out are required") : SDX_ERR_INVALID_ARG;
    return (sdx_result)sdx__sess_begin(m, p, cond, index, 1, out);
}

SDX_API sdx_result sdx_sampling_step(sdx_sampling *s) { return (sdx_result)(s ? sdx__sess_run(s, 1) : SDX_ERR_INVALID_ARG); }
SDX_API sdx_result sdx_sampling_finish(sdx_sampling *s) { return (sdx_result)(s ? sdx__sess_run(s, 0) : SDX_ERR_INVALID_ARG); }
SDX_API int sdx_sampling_done(const sdx_sampling *s) { return s && s->done; }
SDX_API int sdx_sampling_steps(const sdx_sampling *s, int *total) {
    if (total) *total = s ? s->steps : 0;
    return s ? (s->done ? s->steps : s->reported) : 0;
}
SDX_API int64_t sdx_sampling_seed(const sdx_sampling *s) { return s ? s->seed : 0; }
SDX_API const sdx_tensor *sdx_sampling_latent(const sdx_sampling *s) { return s ? &s->latent : NULL; }
SDX_API const sdx_tensor *sdx_sampling_denoised(const sdx_sampling *s) { return s ? &s->denoised : NULL; }
