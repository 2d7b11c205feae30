#pragma once
#include "params.c"
#include "conditioning.c"
#include "../models/controlnet.c"

/* ===================================================================== */
/*  Pipeline: ControlNets while sampling: window, hint, residuals         */
/* ===================================================================== */

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

/* ControlBase.get_control: checked for every model call, Heun's second
 * included; compared in float32 as ComfyUI compares its sigma tensor. */
static int sdx__control_active(const sdx__gen_control *c, float sigma) {
    return !(sigma > c->sigma_start || sigma < c->sigma_end);
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
        rc = sdx__controlnet_forward_at(m->ctx, i, net, &m->arena, x, timesteps, &g->cond->unet_context,
                                        g->cond->y.data ? &g->cond->unet_y : NULL, &hint, c->strength, &g->control, ran);
        if (m->low_memory) sdx__wset_release_all(&net->enc.w);   /* the hint block and zero convs too */
        ran = 1;
    }
    if (rc == SDX_OK && ran) *out = &g->control;
    return rc;
}
