#pragma once
#include "api_sampling.h"
#include "../core/core.c"

/* ===================================================================== */
/*  Sampling: what a sampler is given (one run of sdx_sample)              */
/* ===================================================================== */
/* A sampler is a function (sdx__run *r, float *x) that steps x along
 * r->sig and returns an sdx_result. It calls the model, draws noise and
 * reports steps through the helpers here, which turn a callback's
 * refusal into an error; r->buf holds its latent-sized temporaries. */

#define SDX__SAMPLER_BUFS 9     /* latent-sized temporaries; UniPC uses all nine */

/* One sampler run: the caller's description plus float32 temporaries of
 * the latent's size. */
typedef struct sdx__run {
    sdx_ctx *ctx;
    const sdx_sample_desc *d;
    const float *sig;
    int steps;
    size_t n;
    float *buf[SDX__SAMPLER_BUFS];
} sdx__run;

static int sdx__callback_rc(sdx__run *r, const char *what, int rc) {
    if (rc == SDX_OK || rc < 0) return rc;
    return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG, "%s: %s callback returned %d (expected 0 or a negative sdx_result)",
                     sdx_sampler_name(r->d->sampler), what, rc);
}

static int sdx__model(sdx__run *r, const float *x, float sigma, float *denoised) {
    return sdx__callback_rc(r, "denoise", r->d->denoise(r->d->denoise_user, x, sigma, denoised));
}

static int sdx__draw(sdx__run *r, float *out) {
    return sdx__callback_rc(r, "noise", r->d->noise(r->d->noise_user, out));
}

static int sdx__report(sdx__run *r, int i, const float *x, const float *denoised) {
    if (!r->d->step || !r->d->step(r->d->step_user, i, r->steps, x, denoised)) return SDX_OK;
    return sdx__fail(r->ctx, SDX_ERR_CANCELLED, "%s: cancelled by the step callback after step %d of %d",
                     sdx_sampler_name(r->d->sampler), i + 1, r->steps);
}

/* k-diffusion get_ancestral_step, on float32 scalars. */
static void sdx__ancestral_step(float from, float to, float eta, float *down, float *up) {
    float u;
    if (eta == 0.0f) { *down = to; *up = 0.0f; return; }
    u = eta * sqrtf(to * to * (from * from - to * to) / (from * from));
    *up = to < u ? to : u;
    *down = sqrtf(to * to - *up * *up);
}

/* x += noise * scale (one per-step draw); `nz` is scratch. */
static int sdx__add_step_noise(sdx__run *r, float *x, float *nz, float scale) {
    int rc;
    if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) x[k] = x[k] + nz[k] * scale;
    return SDX_OK;
}

/* d = (x - denoised) / sigma for a whole latent. */
static void sdx__to_d(float *d, const float *x, const float *den, float sigma, size_t n) {
    for (size_t k = 0; k < n; k++) d[k] = (x[k] - den[k]) / sigma;
}

/* x2 = x + d * dt */
static void sdx__euler_to(float *x2, const float *x, const float *d, float dt, size_t n) {
    for (size_t k = 0; k < n; k++) x2[k] = x[k] + d[k] * dt;
}
