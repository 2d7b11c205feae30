#pragma once
#include "schedules.c"
#include "sampler_run.c"

/* ===================================================================== */
/*  Samplers, single-step: each step uses only its own model calls         */
/* ===================================================================== */

/* ---- Karras-ODE samplers: euler, heun, heunpp2, dpm_2 ----------------- */

/* ComfyUI's euler (and ddim, which is euler for txt2img). */
static int sdx__sample_euler(sdx__run *r, float *x) {
    float *den = r->buf[0];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], dt = r->sig[i + 1] - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * dt;
    }
    return SDX_OK;
}

static int sdx__sample_euler_ancestral(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], down, up;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, r->sig[i + 1], 1.0f, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (down == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
            continue;
        }
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * (down - s);
        if ((rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

static int sdx__sample_heun(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1], *x2 = r->buf[2], *den2 = r->buf[3];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) { sdx__euler_to(x, x, d, dt, r->n); continue; }
        sdx__euler_to(x2, x, d, dt, r->n);
        if ((rc = sdx__model(r, x2, s1, den2)) != SDX_OK) return rc;
        for (size_t k = 0; k < r->n; k++) {
            float d2 = (x2[k] - den2[k]) / s1;
            x[k] = x[k] + (d[k] + d2) / 2.0f * dt;
        }
    }
    return SDX_OK;
}

/* heunpp2: Heun++ (three evaluations) while two more sigmas remain, then
 * a weighted Heun step, then Euler into the final sigma. */
static int sdx__sample_heunpp2(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1], *x2 = r->buf[2], *den2 = r->buf[3], *d2 = r->buf[4];
    float *x3 = r->buf[5], *den3 = r->buf[6];
    float s_end = r->sig[r->steps];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == s_end) { sdx__euler_to(x, x, d, dt, r->n); continue; }
        sdx__euler_to(x2, x, d, dt, r->n);
        if ((rc = sdx__model(r, x2, s1, den2)) != SDX_OK) return rc;
        sdx__to_d(d2, x2, den2, s1, r->n);
        if (r->sig[i + 2] == s_end) {
            float w2 = s1 / (2.0f * r->sig[0]), w1 = 1.0f - w2;
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (d[k] * w1 + d2[k] * w2) * dt;
        } else {
            float s2 = r->sig[i + 2], w = 3.0f * r->sig[0];
            float w2 = s1 / w, w3 = s2 / w, w1 = 1.0f - w2 - w3;
            sdx__euler_to(x3, x2, d2, s2 - s1, r->n);
            if ((rc = sdx__model(r, x3, s2, den3)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) {
                float d3 = (x3[k] - den3[k]) / s2;
                x[k] = x[k] + (w1 * d[k] + w2 * d2[k] + w3 * d3) * dt;
            }
        }
    }
    return SDX_OK;
}

/* exp(lerp(log a, log b, 0.5)) as torch.lerp computes it at weight 0.5. */
static float sdx__log_midpoint(float a, float b) {
    float la = logf(a), lb = logf(b);
    return expf(lb - (lb - la) * 0.5f);
}

/* One DPM-Solver-2 step from sigma s to sigma `to` through their
 * log-midpoint; d holds (x - denoised) / s. */
static int sdx__dpm2_step(sdx__run *r, float *x, const float *d, float s, float to) {
    float *x2 = r->buf[2], *den2 = r->buf[3];
    float mid = sdx__log_midpoint(s, to);
    int rc;
    sdx__euler_to(x2, x, d, mid - s, r->n);
    if ((rc = sdx__model(r, x2, mid, den2)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x2[k] - den2[k]) / mid * (to - s);
    return SDX_OK;
}

static int sdx__sample_dpm_2(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) sdx__euler_to(x, x, d, s1 - s, r->n);
        else if ((rc = sdx__dpm2_step(r, x, d, s, s1)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

static int sdx__sample_dpm_2_ancestral(sdx__run *r, float *x) {
    float *den = r->buf[0], *d = r->buf[1], *nz = r->buf[4];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], down, up;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, r->sig[i + 1], 1.0f, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if (down == 0.0f) { sdx__euler_to(x, x, d, down - s, r->n); continue; }
        if ((rc = sdx__dpm2_step(r, x, d, s, down)) != SDX_OK) return rc;
        if ((rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* ---- DPM-Solver++ singlestep (half-logSNR lambda = -log sigma) -------- */

static int sdx__sample_dpmpp_2s_ancestral(sdx__run *r, float *x) {
    float *den = r->buf[0], *x2 = r->buf[1], *den2 = r->buf[2], *nz = r->buf[3];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], down, up;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, s1, 1.0f, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (down == 0.0f) {
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * (down - s);
        } else {
            float t = -logf(s), t_next = -logf(down), h = t_next - t, t_mid = t + 0.5f * h;
            float sigma_mid = expf(-t_mid), sigma_t = expf(-t);
            float a = sigma_mid / sigma_t, b = expm1f(-h * 0.5f);
            float a2 = expf(-t_next) / sigma_t, b2 = expm1f(-h);
            for (size_t k = 0; k < r->n; k++) x2[k] = a * x[k] - b * den[k];
            if ((rc = sdx__model(r, x2, sigma_mid, den2)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = a2 * x[k] - b2 * den2[k];
        }
        if (s1 > 0.0f && (rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* One dpmpp_sde half step from sigma_s to sigma_to: an ancestral split
 * of the step, the exponential-integrator update towards sigma_down, then
 * alpha_to * noise * sigma_up (alpha = sigma * e^lambda, 1 up to rounding). */
static int sdx__dpmpp_sde_substep(sdx__run *r, float *dst, const float *x, const float *den, float sigma_s,
                                  float sigma_to, float lambda_to, float *nz) {
    float lambda_s = -logf(sigma_s);
    float alpha_s = sigma_s * expf(lambda_s), alpha_to = sigma_to * expf(lambda_to);
    float down, up, h_, a, b;
    int rc;
    sdx__ancestral_step(expf(-lambda_s), expf(-lambda_to), 1.0f, &down, &up);
    h_ = -logf(down) - lambda_s;
    a = alpha_to / alpha_s * expf(-h_);
    b = alpha_to * expm1f(-h_);
    for (size_t k = 0; k < r->n; k++) dst[k] = a * x[k] - b * den[k];
    if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) dst[k] = dst[k] + alpha_to * nz[k] * up;
    return SDX_OK;
}

/* DPM-Solver++ SDE, r = 1/2: the second evaluation (at the lambda
 * midpoint) alone drives the full step, since (1 - 1/(2r)) = 0. */
static int sdx__sample_dpmpp_sde(sdx__run *r, float *x) {
    float *den = r->buf[0], *x2 = r->buf[1], *den2 = r->buf[2], *nz = r->buf[3];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        float lambda_s, lambda_t, lambda_mid, sigma_mid;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) { memcpy(x, den, r->n * sizeof(float)); continue; }
        lambda_s = -logf(s);
        lambda_t = -logf(s1);
        lambda_mid = lambda_s + 0.5f * (lambda_t - lambda_s);
        sigma_mid = expf(-lambda_mid);
        if ((rc = sdx__dpmpp_sde_substep(r, x2, x, den, s, sigma_mid, lambda_mid, nz)) != SDX_OK) return rc;
        if ((rc = sdx__model(r, x2, sigma_mid, den2)) != SDX_OK) return rc;
        if ((rc = sdx__dpmpp_sde_substep(r, x, x, den2, s, s1, lambda_t, nz)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* ---- ddpm, lcm -------------------------------------------------------- */

/* DDPM posterior step in the variance-preserving parameterisation. */
static int sdx__sample_ddpm(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        float acp = 1.0f / (s * s + 1.0f), acp_prev = 1.0f / (s1 * s1 + 1.0f), alpha = acp / acp_prev;
        float to_vp = sqrtf(1.0f + s * s), mean_scale = sqrtf(1.0f / alpha);
        float eps_scale = 1.0f - alpha, eps_div = sqrtf(1.0f - acp);
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        for (size_t k = 0; k < r->n; k++) {
            float eps = (x[k] - den[k]) / s;
            x[k] = mean_scale * (x[k] / to_vp - eps_scale * eps / eps_div);
        }
        if (s1 > 0.0f) {
            float var = sqrtf((1.0f - alpha) * (1.0f - acp_prev) / (1.0f - acp));
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + var * nz[k];
        }
        if (s1 != 0.0f) {
            float from_vp = sqrtf(1.0f + s1 * s1);
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] * from_vp;
        }
    }
    return SDX_OK;
}

static int sdx__sample_lcm(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s1 = r->sig[i + 1];
        if ((rc = sdx__model(r, x, r->sig[i], den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 > 0.0f) {
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = nz[k] * s1 + den[k];
        } else {
            memcpy(x, den, r->n * sizeof(float));
        }
    }
    return SDX_OK;
}

/* ---- tcd: Trajectory Consistency Distillation ------------------------- */

/* alphas_cumprod of training timestep t, from ComfyUI's sigma table. */
static float sdx__alpha_bar(const sdx_model_sampling *ms, int t) {
    float sigma = sdx_timestep_to_sigma(ms, (float)t);
    return 1.0f / (sigma * sigma + 1.0f);
}

/* diffusers' TCDScheduler, carried to sigma space. Each step takes the
 * prediction to the VP latent at t_s = floor((1 - gamma) * t_prev), where
 * t_prev is the next sigma's timestep (0 after the last), then, except on
 * the last step, re-noises it up to t_prev with one draw. gamma is the
 * desc's eta (default 0.3, diffusers'): 0 never draws, 1 denoises fully
 * each step. The result is the VP latent at t = 0, not the last denoised. */
static int sdx__sample_tcd(sdx__run *r, float *x) {
    float *den = r->buf[0], *nz = r->buf[1];
    float gamma = r->d->use_eta ? r->d->eta : 0.3f, keep = (float)(1.0 - (double)gamma);
    sdx_model_sampling *ms;
    int rc = SDX_OK;
    if (!(gamma >= 0.0f && gamma <= 1.0f))
        return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG, "tcd: eta (gamma) %g must be in [0, 1]", (double)gamma);
    if (!(ms = (sdx_model_sampling *)sdx__malloc(r->ctx, sizeof *ms))) return sdx__nomem(r->ctx, "tcd table", sizeof *ms);
    sdx_model_sampling_init(ms);
    for (int i = 0; i < r->steps && rc == SDX_OK; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        int t_prev = s1 > 0.0f ? sdx_sigma_to_timestep(ms, s1) : 0, t_s = (int)floorf(keep * (float)t_prev);
        float a_s = sdx__alpha_bar(ms, t_s), c_den = sqrtf(a_s), c_eps = sqrtf(1.0f - a_s);
        float renoise = sdx__alpha_bar(ms, t_prev) / a_s, up = sqrtf(1.0f + s1 * s1);
        int draw = gamma > 0.0f && i + 1 < r->steps;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK || (rc = sdx__report(r, i, x, den)) != SDX_OK) break;
        for (size_t k = 0; k < r->n; k++) x[k] = c_den * den[k] + c_eps * ((x[k] - den[k]) / s);
        if (draw && (rc = sdx__draw(r, nz)) != SDX_OK) break;
        for (size_t k = 0; draw && k < r->n; k++) x[k] = sqrtf(renoise) * x[k] + sqrtf(1.0f - renoise) * nz[k];
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] * up;
    }
    sdx__free(r->ctx, ms);
    return rc;
}
