#pragma once
#include "schedules.c"
#include "sampler_run.c"

/* ===================================================================== */
/*  Samplers, multistep: each step also reuses earlier steps' outputs      */
/* ===================================================================== */

/* ---- lms: linear multistep on d = (x - denoised) / sigma -------------- */

/* Integral over [t[i], t[i+1]] of the Lagrange basis polynomial j through
 * t[i], t[i-1], ..., t[i-order+1]. The integrand has degree <= 3, so
 * 3-point Gauss-Legendre is exact (scipy's quad is exact to rounding). */
static double sdx__lms_coeff(int order, const float *t, int i, int j) {
    static const double node[3] = { -0.7745966692414834, 0.0, 0.7745966692414834 };
    static const double weight[3] = { 5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0 };
    double a = t[i], b = t[i + 1], sum = 0.0;
    for (int q = 0; q < 3; q++) {
        double tau = 0.5 * (a + b) + 0.5 * (b - a) * node[q], prod = 1.0;
        for (int k = 0; k < order; k++) {
            if (k == j) continue;
            prod *= (tau - t[i - k]) / ((double)t[i - j] - t[i - k]);
        }
        sum += weight[q] * prod;
    }
    return 0.5 * (b - a) * sum;
}

/* Linear multistep, order 4; ComfyUI jumps to the denoised value on the
 * step into sigma 0 (k-diffusion would take an LMS step there). */
static int sdx__sample_lms(sdx__run *r, float *x) {
    enum { ORDER = 4 };
    float *den = r->buf[0], *ds[ORDER];
    int rc, have = 0;
    for (int j = 0; j < ORDER; j++) ds[j] = r->buf[1 + j];
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], coeff[ORDER];
        float *d = ds[ORDER - 1];
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        /* ds[0] is the newest derivative: rotate the oldest buffer to the front */
        for (int j = ORDER - 1; j > 0; j--) ds[j] = ds[j - 1];
        ds[0] = d;
        sdx__to_d(d, x, den, s, r->n);
        if (have < ORDER) have++;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (r->sig[i + 1] == 0.0f) { memcpy(x, den, r->n * sizeof(float)); continue; }
        for (int j = 0; j < have; j++) coeff[j] = (float)sdx__lms_coeff(have, r->sig, i, j);
        for (size_t k = 0; k < r->n; k++) {
            float acc = coeff[0] * ds[0][k];
            for (int j = 1; j < have; j++) acc = acc + coeff[j] * ds[j][k];
            x[k] = x[k] + acc;
        }
    }
    return SDX_OK;
}

/* ---- DPM-Solver++ multistep (half-logSNR lambda = -log sigma) --------- */

static int sdx__sample_dpmpp_2m(sdx__run *r, float *x) {
    float *den = r->buf[0], *old = r->buf[1];
    int rc, have_old = 0;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        float t = -logf(s), t_next = -logf(s1), h = t_next - t;
        float a = expf(-t_next) / expf(-t), b = expm1f(-h);
        float *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (!have_old || s1 == 0.0f) {
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] - b * den[k];
        } else {
            float h_last = t - -logf(r->sig[i - 1]), ratio = h_last / h;
            float c_new = 1.0f + 1.0f / (2.0f * ratio), c_old = 1.0f / (2.0f * ratio);
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] - b * (c_new * den[k] - c_old * old[k]);
        }
        tmp = old; old = den; den = tmp;
        have_old = 1;
    }
    return SDX_OK;
}

/* Shared by dpmpp_2m_sde (midpoint) and dpmpp_2m_sde_heun, eta = 1. */
static int sdx__dpmpp_2m_sde(sdx__run *r, float *x, int heun) {
    const float eta = 1.0f;
    float *den = r->buf[0], *old = r->buf[1], *nz = r->buf[2];
    float h = 0.0f, h_last = 0.0f;
    int rc, have_old = 0;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            float lambda_s = -logf(s), lambda_t = -logf(s1);
            float h_eta, alpha_t, a, b;
            h = lambda_t - lambda_s;
            h_eta = h * (eta + 1.0f);
            alpha_t = s1 * expf(lambda_t);
            a = s1 / s * expf(-h * eta);
            b = alpha_t * -expm1f(-h_eta);
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] + b * den[k];
            if (have_old) {
                float inv_r = 1.0f / (h_last / h);
                float c = heun ? alpha_t * (-expm1f(-h_eta) / -h_eta + 1.0f) * inv_r
                               : 0.5f * alpha_t * -expm1f(-h_eta) * inv_r;
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + c * (den[k] - old[k]);
            }
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            {
                float amp = sqrtf(-expm1f(-2.0f * h * eta));
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + nz[k] * s1 * amp;
            }
        }
        tmp = old; old = den; den = tmp;
        have_old = 1;
        h_last = h;
    }
    return SDX_OK;
}

static int sdx__sample_dpmpp_2m_sde(sdx__run *r, float *x) { return sdx__dpmpp_2m_sde(r, x, 0); }
static int sdx__sample_dpmpp_2m_sde_heun(sdx__run *r, float *x) { return sdx__dpmpp_2m_sde(r, x, 1); }

static int sdx__sample_dpmpp_3m_sde(sdx__run *r, float *x) {
    const float eta = 1.0f;
    float *den = r->buf[0], *den_1 = r->buf[1], *den_2 = r->buf[2], *nz = r->buf[3];
    float h = 0.0f, h_1 = 0.0f, h_2 = 0.0f;
    int rc, history = 0;   /* how many of h_1, h_2 are set */
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            float lambda_s = -logf(s), lambda_t = -logf(s1), h_eta, alpha_t, a, b, phi_2, amp;
            h = lambda_t - lambda_s;
            h_eta = h * (eta + 1.0f);
            alpha_t = s1 * expf(lambda_t);
            a = s1 / s * expf(-h * eta);
            b = alpha_t * -expm1f(-h_eta);
            phi_2 = expm1f(-h_eta) / h_eta + 1.0f;
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] + b * den[k];
            if (history >= 2) {
                float r0 = h_1 / h, r1 = h_2 / h, phi_3 = phi_2 / h_eta - 0.5f;
                float c2 = alpha_t * phi_2, c3 = alpha_t * phi_3;
                for (size_t k = 0; k < r->n; k++) {
                    float d1_0 = (den[k] - den_1[k]) / r0, d1_1 = (den_1[k] - den_2[k]) / r1;
                    float d1 = d1_0 + (d1_0 - d1_1) * r0 / (r0 + r1), d2 = (d1_0 - d1_1) / (r0 + r1);
                    x[k] = x[k] + c2 * d1 - c3 * d2;
                }
            } else if (history == 1) {
                float c2 = alpha_t * phi_2, r0 = h_1 / h;
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + c2 * ((den[k] - den_1[k]) / r0);
            }
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            amp = sqrtf(-expm1f(-2.0f * h * eta));
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + nz[k] * s1 * amp;
            if (history < 2) history++;
        }
        tmp = den_2; den_2 = den_1; den_1 = den; den = tmp;
        h_2 = h_1;
        h_1 = h;
    }
    return SDX_OK;
}

/* ---- linear multistep on d = (x - denoised) / sigma: ipndm, deis ------ */

/* History of past derivatives, newest first (at most 3). */
typedef struct sdx__dhist {
    float *d[4];   /* d[0] = current step's derivative; d[1..] history */
    int    count;  /* valid history entries in d[1..] */
} sdx__dhist;

static void sdx__dhist_init(sdx__dhist *hst, sdx__run *r, int first_buf) {
    for (int j = 0; j < 4; j++) hst->d[j] = r->buf[first_buf + j];
    hst->count = 0;
}

/* Makes the current derivative history entry 1 (keeping at most `keep`). */
static void sdx__dhist_push(sdx__dhist *hst, int keep) {
    float *oldest = hst->d[3];
    for (int j = 3; j > 0; j--) hst->d[j] = hst->d[j - 1];
    hst->d[0] = oldest;
    if (hst->count < keep) hst->count++;
}

/* ipndm_v coefficients for the variable step sizes (float32, as torch
 * evaluates them on the sigma tensor). c[0] multiplies the current d. */
static void sdx__ipndm_v_coeffs(const float *t, int i, int order, float c[4]) {
    float hn = t[i + 1] - t[i], hn1 = order > 1 ? t[i] - t[i - 1] : 0.0f;
    float hn2 = order > 2 ? t[i - 1] - t[i - 2] : 0.0f, hn3 = order > 3 ? t[i - 2] - t[i - 3] : 0.0f;
    c[0] = 1.0f; c[1] = c[2] = c[3] = 0.0f;
    if (order == 2) {
        c[0] = (2.0f + hn / hn1) / 2.0f;
        c[1] = -(hn / hn1) / 2.0f;
    } else if (order >= 3) {
        float temp1 = (1.0f - hn / (3.0f * (hn + hn1)) * (hn * (hn + hn1)) / (hn1 * (hn1 + hn2))) / 2.0f;
        if (order == 3) {
            c[0] = (2.0f + hn / hn1) / 2.0f + temp1;
            c[1] = -(hn / hn1) / 2.0f - (1.0f + hn1 / hn2) * temp1;
            c[2] = temp1 * hn1 / hn2;
        } else {
            float q = hn1 * (hn1 + hn2) / (hn2 * (hn2 + hn3));
            float temp2 = ((1.0f - hn / (3.0f * (hn + hn1))) / 2.0f +
                           (1.0f - hn / (2.0f * (hn + hn1))) * hn / (6.0f * (hn + hn1 + hn2))) *
                          (hn * (hn + hn1) * (hn + hn1 + hn2)) / (hn1 * (hn1 + hn2) * (hn1 + hn2 + hn3));
            c[0] = (2.0f + hn / hn1) / 2.0f + temp1 + temp2;
            c[1] = -(hn / hn1) / 2.0f - (1.0f + hn1 / hn2) * temp1 - (1.0f + hn1 / hn2 + q) * temp2;
            c[2] = temp1 * hn1 / hn2 + (hn1 / hn2 + q * (1.0f + hn2 / hn3)) * temp2;
            c[3] = -temp2 * q * hn1 / hn2;
        }
    }
}

/* iPNDM (fixed Adams-Bashforth weights) or iPNDM_v (weights for the
 * actual step sizes); max order 4. */
static int sdx__ipndm(sdx__run *r, float *x, int variable) {
    static const float ab[4][4] = {
        { 1.0f, 0.0f, 0.0f, 0.0f }, { 3.0f, -1.0f, 0.0f, 0.0f },
        { 23.0f, -16.0f, 5.0f, 0.0f }, { 55.0f, -59.0f, 37.0f, -9.0f }
    };
    static const float ab_div[4] = { 1.0f, 2.0f, 12.0f, 24.0f };
    float *den = r->buf[0];
    sdx__dhist hst;
    int rc;
    sdx__dhist_init(&hst, r, 1);
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        int order = i + 1 < 4 ? i + 1 : 4;
        float *d = hst.d[0];
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else if (order == 1) {
            sdx__euler_to(x, x, d, dt, r->n);
        } else if (variable) {
            float c[4];
            sdx__ipndm_v_coeffs(r->sig, i, order, c);
            for (size_t k = 0; k < r->n; k++) {
                float acc = c[0] * d[k];
                for (int j = 1; j < order; j++) acc = acc + c[j] * hst.d[j][k];
                x[k] = x[k] + dt * acc;
            }
        } else {
            const float *w = ab[order - 1];
            for (size_t k = 0; k < r->n; k++) {
                float acc = w[0] * d[k];
                for (int j = 1; j < order; j++) acc = acc + w[j] * hst.d[j][k];
                x[k] = x[k] + dt * acc / ab_div[order - 1];
            }
        }
        sdx__dhist_push(&hst, 3);
    }
    return SDX_OK;
}

static int sdx__sample_ipndm(sdx__run *r, float *x) { return sdx__ipndm(r, x, 0); }
static int sdx__sample_ipndm_v(sdx__run *r, float *x) { return sdx__ipndm(r, x, 1); }

/* DEIS 'tab' coefficients: sigmas are mapped to VP-SDE times t with the
 * schedule fitted to EDM's (0.002, 80) range, and each coefficient is the
 * integral of the Lagrange basis times the exponential integrator's
 * weight, by the reference's 10000-point rectangle rule (which is part of
 * the result, so it is reproduced, not replaced by exact quadrature). */
enum { SDX__DEIS_ORDER = 3, SDX__DEIS_POINTS = 10000 };

static void sdx__deis_times(const float *sig, int count, float *t, float *beta_0, float *beta_1) {
    const float eps_s = 1e-3f;
    float log_min = logf(0.002f * 0.002f + 1.0f), log_max = logf(80.0f * 80.0f + 1.0f);
    float beta_d = 2.0f * (log_min / eps_s - log_max) / (float)(1e-3 - 1.0);
    float beta_min = log_max - 0.5f * beta_d;
    for (int i = 0; i < count; i++)
        t[i] = (sqrtf(beta_min * beta_min + 2.0f * beta_d * logf(sig[i] * sig[i] + 1.0f)) - beta_min) / beta_d;
    *beta_0 = beta_min;
    *beta_1 = beta_d + beta_min;
}

static float sdx__deis_integrand(float tau, float beta_0, float beta_1) {
    float alpha = expf(-0.5f * (tau * tau) * (beta_1 - beta_0) - tau * beta_0);
    float g = 1.0f / alpha * alpha;   /* d log(alpha) / d alpha, times d alpha / d exponent */
    float dlog = g * (beta_1 - beta_0) * -0.5f * (2.0f * tau) + -g * beta_0;
    return -0.5f * dlog / sqrtf(alpha * (1.0f - alpha));
}

/* coeff[i][j] for steps i with order >= 2 whose next sigma is > 0. */
static void sdx__deis_coeffs(const float *sig, int steps, const float *t, float beta_0, float beta_1,
                             float (*coeff)[SDX__DEIS_ORDER]) {
    for (int i = 1; i < steps; i++) {
        int order = i + 1 < SDX__DEIS_ORDER ? i + 1 : SDX__DEIS_ORDER;
        float prev[SDX__DEIS_ORDER], dtau = (t[i + 1] - t[i]) / (float)SDX__DEIS_POINTS;
        double sum[SDX__DEIS_ORDER] = { 0.0, 0.0, 0.0 };
        if (!(sig[i + 1] > 0.0f)) continue;
        for (int j = 0; j < order; j++) prev[j] = t[i - j];
        for (int q = 0; q < SDX__DEIS_POINTS; q++) {
            float tau = sdx__linspace_f32(t[i], t[i + 1], SDX__DEIS_POINTS, q);
            float w = sdx__deis_integrand(tau, beta_0, beta_1);
            for (int j = 0; j < order; j++) {
                float poly = 1.0f;
                for (int k = 0; k < order; k++)
                    if (k != j) poly *= (tau - prev[k]) / (prev[j] - prev[k]);
                sum[j] += (double)(w * poly);
            }
        }
        for (int j = 0; j < order; j++) coeff[i][j] = (float)sum[j] * dtau;
    }
}

static int sdx__sample_deis(sdx__run *r, float *x) {
    float *den = r->buf[0], *t = NULL, (*coeff)[SDX__DEIS_ORDER] = NULL, beta_0, beta_1;
    size_t t_bytes = (size_t)(r->steps + 1) * sizeof(float);
    size_t c_bytes = (size_t)r->steps * sizeof *coeff;
    sdx__dhist hst;
    int rc = SDX_OK;
    t = (float *)sdx__malloc(r->ctx, t_bytes);
    coeff = (float (*)[SDX__DEIS_ORDER])sdx__calloc(r->ctx, 1, c_bytes);
    if (!t || !coeff) {
        sdx__free(r->ctx, t);
        sdx__free(r->ctx, coeff);
        return sdx__nomem(r->ctx, "deis coefficients", t_bytes + c_bytes);
    }
    sdx__deis_times(r->sig, r->steps + 1, t, &beta_0, &beta_1);
    sdx__deis_coeffs(r->sig, r->steps, t, beta_0, beta_1, coeff);
    sdx__dhist_init(&hst, r, 1);
    for (int i = 0; i < r->steps && rc == SDX_OK; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], *d = hst.d[0];
        int order = i + 1 < SDX__DEIS_ORDER ? i + 1 : SDX__DEIS_ORDER;
        if (!(s1 > 0.0f)) order = 1;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) break;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) break;
        sdx__to_d(d, x, den, s, r->n);
        if (order == 1) {
            sdx__euler_to(x, x, d, s1 - s, r->n);
        } else {
            for (size_t k = 0; k < r->n; k++) {
                float v = x[k] + coeff[i][0] * d[k];
                for (int j = 1; j < order; j++) v = v + coeff[i][j] * hst.d[j][k];
                x[k] = v;
            }
        }
        sdx__dhist_push(&hst, SDX__DEIS_ORDER - 1);
    }
    sdx__free(r->ctx, t);
    sdx__free(r->ctx, coeff);
    return rc;
}

/* ---- res_multistep, gradient_estimation, er_sde ------------------------ */

/* Second-order multistep exponential integrator (arXiv 2308.02157);
 * eta 0 is res_multistep, eta 1 res_multistep_ancestral. */
static int sdx__res_multistep(sdx__run *r, float *x, float eta) {
    float *den = r->buf[0], *old = r->buf[1], *nz = r->buf[2];
    float old_down = 0.0f;
    int rc, have_old = 0;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], down, up, *tmp;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__ancestral_step(s, s1, eta, &down, &up);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (down == 0.0f || !have_old) {
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (x[k] - den[k]) / s * (down - s);
        } else {
            float t = -logf(s), t_old = -logf(old_down), t_next = -logf(down), t_prev = -logf(r->sig[i - 1]);
            float h = t_next - t, c2 = (t_prev - t_old) / h;
            float phi1 = expm1f(-h) / -h, phi2 = (phi1 - 1.0f) / -h;
            float b1 = phi1 - phi2 / c2, b2 = phi2 / c2, decay = expf(-h);
            if (b1 != b1) b1 = 0.0f;   /* torch.nan_to_num */
            if (b2 != b2) b2 = 0.0f;
            for (size_t k = 0; k < r->n; k++) x[k] = decay * x[k] + h * (b1 * den[k] + b2 * old[k]);
        }
        /* ComfyUI draws here even when sigma_up is 0 (eta 0) and multiplies
         * the draw by 0; the stream is private to this run, so skip it. */
        if (s1 > 0.0f && up != 0.0f && (rc = sdx__add_step_noise(r, x, nz, up)) != SDX_OK) return rc;
        tmp = old; old = den; den = tmp;
        have_old = 1;
        old_down = down;
    }
    return SDX_OK;
}

static int sdx__sample_res_multistep(sdx__run *r, float *x) { return sdx__res_multistep(r, x, 0.0f); }
static int sdx__sample_res_multistep_ancestral(sdx__run *r, float *x) { return sdx__res_multistep(r, x, 1.0f); }

/* Euler plus (gamma - 1) times the change of d between steps, gamma = 2. */
static int sdx__sample_gradient_estimation(sdx__run *r, float *x) {
    const float ge_gamma = 2.0f;
    float *den = r->buf[0], *d = r->buf[1], *old_d = r->buf[2], *tmp;
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1], dt = s1 - s;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        sdx__to_d(d, x, den, s, r->n);
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            sdx__euler_to(x, x, d, dt, r->n);
            if (i >= 1)
                for (size_t k = 0; k < r->n; k++) x[k] = x[k] + (ge_gamma - 1.0f) * (d[k] - old_d[k]) * dt;
        }
        tmp = old_d; old_d = d; d = tmp;
    }
    return SDX_OK;
}

/* ER-SDE-Solver-3 (arXiv 2309.06169) with the default noise scaler
 * x * (e^(x^0.3) + 10) and 200-point rectangle sums, as ComfyUI. */
static float sdx__er_scaler(float v) { return v * (expf(powf(v, 0.3f)) + 10.0f); }

static void sdx__er_sums(float lam_s, float lam_t, float *s1_out, float *s2_out) {
    const int points = 200;
    float dt = lam_t - lam_s, step = -dt / 200.0f;
    double sum1 = 0.0, sum2 = 0.0;
    for (int q = 0; q < points; q++) {
        float pos = lam_t + (float)q * step, scaled = sdx__er_scaler(pos);
        sum1 += (double)(1.0f / scaled);
        sum2 += (double)((pos - lam_s) / scaled);
    }
    *s1_out = (float)sum1 * step;
    *s2_out = (float)sum2 * step;
}

static float sdx__er_lambda(float sigma) { return expf(-(-logf(sigma))); }

static int sdx__sample_er_sde(sdx__run *r, float *x) {
    enum { MAX_STAGE = 3 };
    float *den = r->buf[0], *old = r->buf[1], *dd = r->buf[2], *old_dd = r->buf[3], *nz = r->buf[4], *tmp;
    int rc;
    for (int i = 0; i < r->steps; i++) {
        float s = r->sig[i], s1 = r->sig[i + 1];
        int stage = i + 1 < MAX_STAGE ? i + 1 : MAX_STAGE;
        if ((rc = sdx__model(r, x, s, den)) != SDX_OK) return rc;
        if ((rc = sdx__report(r, i, x, den)) != SDX_OK) return rc;
        if (s1 == 0.0f) {
            memcpy(x, den, r->n * sizeof(float));
        } else {
            float lam_s = sdx__er_lambda(s), lam_t = sdx__er_lambda(s1);
            float alpha_s = s / lam_s, alpha_t = s1 / lam_t, r_alpha = alpha_t / alpha_s;
            float ratio = sdx__er_scaler(lam_t) / sdx__er_scaler(lam_s);
            float a = r_alpha * ratio, b = alpha_t * (1.0f - ratio), amp;
            for (size_t k = 0; k < r->n; k++) x[k] = a * x[k] + b * den[k];
            if (stage >= 2) {
                float dt = lam_t - lam_s, sum1, sum2, lam_prev = sdx__er_lambda(r->sig[i - 1]);
                float c2, inv;
                sdx__er_sums(lam_s, lam_t, &sum1, &sum2);
                c2 = alpha_t * (dt + sum1 * sdx__er_scaler(lam_t));
                inv = lam_s - lam_prev;
                for (size_t k = 0; k < r->n; k++) {
                    dd[k] = (den[k] - old[k]) / inv;
                    x[k] = x[k] + c2 * dd[k];
                }
                if (stage >= 3) {
                    float half = (lam_s - sdx__er_lambda(r->sig[i - 2])) / 2.0f;
                    float c3 = alpha_t * (dt * dt / 2.0f + sum2 * sdx__er_scaler(lam_t));
                    for (size_t k = 0; k < r->n; k++) x[k] = x[k] + c3 * ((dd[k] - old_dd[k]) / half);
                }
                tmp = old_dd; old_dd = dd; dd = tmp;
            }
            amp = sqrtf(lam_t * lam_t - lam_s * lam_s * (ratio * ratio));
            if (amp != amp) amp = 0.0f;
            if ((rc = sdx__draw(r, nz)) != SDX_OK) return rc;
            for (size_t k = 0; k < r->n; k++) x[k] = x[k] + alpha_t * nz[k] * amp;
        }
        tmp = old; old = den; den = tmp;
    }
    return SDX_OK;
}

/* ---- UniPC (bh1 / bh2), ComfyUI's multistep variant -------------------- */
/* UniPC works on the VP state x / sqrt(1 + sigma^2) with data prediction;
 * the model sees x scaled back to sigma space. Orders are
 * min(3, steps - 1), lowered on the last steps; the final step into the
 * last sigma (0 replaced by 0.001) runs the predictor only. */

typedef struct sdx__vp { float log_alpha, alpha, std, lambda; } sdx__vp;

static sdx__vp sdx__vp_of(float sigma) {
    sdx__vp v;
    float e2;
    v.log_alpha = 0.5f * logf(1.0f / (sigma * sigma + 1.0f));
    v.alpha = expf(v.log_alpha);
    e2 = expf(2.0f * v.log_alpha);
    v.std = sqrtf(1.0f - e2);
    v.lambda = v.log_alpha - 0.5f * logf(1.0f - e2);
    return v;
}

/* Solves a (n <= 3) dense system by Gaussian elimination with partial
 * pivoting, in double (torch.linalg.solve; the system is tiny). */
static void sdx__solve_small(int n, double a[3][3], double *b, float *out) {
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int i = c + 1; i < n; i++) if (fabs(a[i][c]) > fabs(a[p][c])) p = i;
        for (int j = 0; j < n; j++) { double t = a[c][j]; a[c][j] = a[p][j]; a[p][j] = t; }
        { double t = b[c]; b[c] = b[p]; b[p] = t; }
        for (int i = c + 1; i < n; i++) {
            double f = a[i][c] / a[c][c];
            for (int j = c; j < n; j++) a[i][j] -= f * a[c][j];
            b[i] -= f * b[c];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = b[i];
        for (int j = i + 1; j < n; j++) v -= a[i][j] * out[j];
        out[i] = (float)(v / a[i][i]);
    }
}

typedef struct sdx__unipc {
    sdx__run *r;
    int bh2;
    int order;
    int len;             /* entries in the history */
    float t_prev[3];
    float *model_prev[3];
    float *pool[4];      /* model outputs live here; history points into it */
    float *x_pred, *d1[2], *scaled, *den;
} sdx__unipc;

/* Data prediction x0 at VP state x and sigma. */
static int sdx__unipc_model(sdx__unipc *u, const float *x, float sigma, float *x0) {
    sdx__run *r = u->r;
    sdx__vp v = sdx__vp_of(sigma);
    float up = sqrtf(sigma * sigma + 1.0f);
    int rc;
    for (size_t k = 0; k < r->n; k++) u->scaled[k] = x[k] * up;
    if ((rc = sdx__model(r, u->scaled, sigma, u->den)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) {
        float eps = (u->scaled[k] - u->den[k]) / sigma;
        x0[k] = (x[k] - v.std * eps) / v.alpha;
    }
    return SDX_OK;
}

/* A pool buffer no history entry points to. */
static float *sdx__unipc_free_buf(sdx__unipc *u) {
    for (int b = 0; b < 4; b++) {
        int used = 0;
        for (int j = 0; j < u->len; j++) used |= u->model_prev[j] == u->pool[b];
        if (!used) return u->pool[b];
    }
    SDX_ASSERT(0);
    return u->pool[0];
}

/* The B(h) coefficient vectors: rhos_p (predictor, order - 1 values) and
 * rhos_c (corrector, order values). */
static void sdx__unipc_rhos(const float *rks, int order, float hh, float b_h, float *rhos_p, float *rhos_c) {
    double rmat[3][3], rhs[3], sub[3][3], sub_rhs[3];
    float h_phi_k = expm1f(hh) / hh - 1.0f;
    int factorial = 1;
    for (int i = 1; i <= order; i++) {
        for (int c = 0; c < order; c++) {
            float p = 1.0f;
            for (int e = 0; e < i - 1; e++) p *= rks[c];
            rmat[i - 1][c] = p;
        }
        rhs[i - 1] = (double)(h_phi_k * (float)factorial / b_h);
        factorial *= i + 1;
        h_phi_k = h_phi_k / hh - (float)(1.0 / factorial);
    }
    if (order == 2) rhos_p[0] = 0.5f;
    else if (order > 2) {
        for (int i = 0; i < order - 1; i++) {
            for (int j = 0; j < order - 1; j++) sub[i][j] = rmat[i][j];
            sub_rhs[i] = rhs[i];
        }
        sdx__solve_small(order - 1, sub, sub_rhs, rhos_p);
    }
    if (order == 1) rhos_c[0] = 0.5f;
    else sdx__solve_small(order, rmat, rhs, rhos_c);
}

/* One multistep update of the VP state x to sigma t; with the corrector,
 * *model_out receives the model's x0 at the new point. */
static int sdx__unipc_update(sdx__unipc *u, float *x, float t, int order, int corrector, float **model_out) {
    sdx__run *r = u->r;
    sdx__vp v0 = sdx__vp_of(u->t_prev[u->len - 1]), vt = sdx__vp_of(t);
    const float *m0 = u->model_prev[u->len - 1];
    float h = vt.lambda - v0.lambda, hh = -h, rks[3] = { 0 }, rhos_p[3] = { 0 }, rhos_c[3] = { 0 };
    float b_h = u->bh2 ? expm1f(hh) : hh, h_phi_1 = expm1f(hh);
    float a = vt.std / v0.std, b = vt.alpha * h_phi_1, c = vt.alpha * b_h;
    int rc;
    for (int i = 1; i < order; i++) {
        const float *mi = u->model_prev[u->len - 1 - i];
        float rk = (sdx__vp_of(u->t_prev[u->len - 1 - i]).lambda - v0.lambda) / h;
        rks[i - 1] = rk;
        for (size_t k = 0; k < r->n; k++) u->d1[i - 1][k] = (mi[k] - m0[k]) / rk;
    }
    rks[order - 1] = 1.0f;
    sdx__unipc_rhos(rks, order, hh, b_h, rhos_p, rhos_c);
    /* x_pred holds x_t_ (the first-order part); x becomes the predictor */
    for (size_t k = 0; k < r->n; k++) {
        float base = a * x[k] - b * m0[k], res = 0.0f;
        if (order >= 2) res = rhos_p[0] * u->d1[0][k];
        if (order >= 3) res = res + rhos_p[1] * u->d1[1][k];
        u->x_pred[k] = base;
        x[k] = order >= 2 ? base - c * res : base;
    }
    *model_out = NULL;
    if (!corrector) return SDX_OK;
    *model_out = sdx__unipc_free_buf(u);
    if ((rc = sdx__unipc_model(u, x, t, *model_out)) != SDX_OK) return rc;
    for (size_t k = 0; k < r->n; k++) {
        float corr = 0.0f;
        if (order >= 2) corr = rhos_c[0] * u->d1[0][k];
        if (order >= 3) corr = corr + rhos_c[1] * u->d1[1][k];
        x[k] = u->x_pred[k] - c * (corr + rhos_c[order - 1] * ((*model_out)[k] - m0[k]));
    }
    return SDX_OK;
}

/* The steady-state step (and the extra final step) of UniPC.sample. */
static int sdx__unipc_shift_step(sdx__unipc *u, float *x, const float *ts, int step) {
    int steps = u->r->steps, rc;
    int step_order = u->order < steps + 1 - step ? u->order : steps + 1 - step;
    float *model_x;
    if ((rc = sdx__unipc_update(u, x, ts[step], step_order, step != steps, &model_x)) != SDX_OK) return rc;
    for (int i = 0; i < u->order - 1; i++) {
        u->t_prev[i] = u->t_prev[i + 1];
        u->model_prev[i] = u->model_prev[i + 1];
    }
    u->t_prev[u->order - 1] = ts[step];
    if (step < steps) u->model_prev[u->order - 1] = model_x;
    return SDX_OK;
}

static int sdx__unipc_run(sdx__run *r, float *x, int bh2) {
    sdx__unipc u;
    float *tsv = NULL;
    int steps = r->steps, rc = SDX_OK;
    size_t ts_bytes = (size_t)(steps + 1) * sizeof(float);
    memset(&u, 0, sizeof u);
    u.r = r;
    u.bh2 = bh2;
    u.order = steps - 1 < 3 ? steps - 1 : 3;
    if (u.order < 1) u.order = 1;   /* 1 step: ComfyUI would not step at all */
    for (int b = 0; b < 4; b++) u.pool[b] = r->buf[b];
    u.x_pred = r->buf[4]; u.d1[0] = r->buf[5]; u.d1[1] = r->buf[6]; u.scaled = r->buf[7]; u.den = r->buf[8];
    tsv = (float *)sdx__malloc(r->ctx, ts_bytes);
    if (!tsv) return sdx__nomem(r->ctx, "uni_pc timesteps", ts_bytes);
    memcpy(tsv, r->sig, ts_bytes);
    if (tsv[steps] == 0.0f) tsv[steps] = 0.001f;
    {
        float scale = sqrtf(1.0f + tsv[0] * tsv[0]);
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] / scale;
    }
    for (int i = 0; i < steps && rc == SDX_OK; i++) {
        if (i == 0) {
            u.model_prev[0] = u.pool[0];
            u.t_prev[0] = tsv[0];
            u.len = 1;
            rc = sdx__unipc_model(&u, x, tsv[0], u.pool[0]);
            if (rc == SDX_OK && steps == 1) {
                float *unused;
                rc = sdx__unipc_update(&u, x, tsv[1], 1, 0, &unused);
            }
        } else if (i < u.order) {
            float *model_x;
            rc = sdx__unipc_update(&u, x, tsv[i], i, 1, &model_x);
            if (rc == SDX_OK) {
                u.model_prev[u.len] = model_x;
                u.t_prev[u.len] = tsv[i];
                u.len++;
            }
        } else {
            rc = sdx__unipc_shift_step(&u, x, tsv, i);
            if (rc == SDX_OK && i == steps - 1) rc = sdx__unipc_shift_step(&u, x, tsv, steps);
        }
        if (rc == SDX_OK) rc = sdx__report(r, i, x, u.model_prev[u.len - 1]);
    }
    if (rc == SDX_OK) {
        float alpha = sdx__vp_of(tsv[steps]).alpha;
        for (size_t k = 0; k < r->n; k++) x[k] = x[k] / alpha;
    }
    sdx__free(r->ctx, tsv);
    return rc;
}

static int sdx__sample_uni_pc(sdx__run *r, float *x) { return sdx__unipc_run(r, x, 0); }
static int sdx__sample_uni_pc_bh2(sdx__run *r, float *x) { return sdx__unipc_run(r, x, 1); }
