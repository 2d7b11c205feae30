#pragma once
#include "api_sampling.h"
#include "../core/core.c"
#include "../family/family.c"   /* which family has which Align Your Steps table */

/* ===================================================================== */
/*  Sampling: model sampling and sigma schedules (ComfyUI semantics)       */
/* ===================================================================== */
/* The sampling parts, each building on the ones before: this file (the
 * model's sigma/timestep table, prediction types, the schedulers and
 * their registry), sampler_run.c (what a sampler is given), singlestep.c
 * and multistep.c (the samplers), samplers.c (the sampler registry,
 * sdx_sampler_sigmas and sdx_sample).
 *
 * ComfyUI runs all of this in float32 torch. Scalars that torch keeps as
 * 0-d float32 tensors are float here and evaluated in the same order;
 * Python-float scalars are double. That keeps trajectories within a few
 * ulp of the reference instead of merely close. */

/* torch.linspace on the CPU: the first half counts up from start, the
 * second half down from end, both with a step rounded to the element type. */
static float sdx__linspace_f32(float start, float end, int count, int i) {
    float step;
    if (count == 1) return start;
    step = (end - start) / (float)(count - 1);
    return i < count / 2 ? start + step * (float)i : end - step * (float)(count - 1 - i);
}

static double sdx__linspace_f64(double start, double end, int count, int i) {
    double step;
    if (count == 1) return start;
    step = (end - start) / (double)(count - 1);
    return i < count / 2 ? start + step * (double)i : end - step * (double)(count - 1 - i);
}

/* ---- model sampling ------------------------------------------------- */

SDX_API void sdx_model_sampling_init(sdx_model_sampling *ms) {
    /* ModelSamplingDiscrete: betas and their cumulative product in
     * float64, then the sigmas and their logs rounded to float32. */
    double cumprod = 1.0;
    double lo = sqrt(0.00085), hi = sqrt(0.012);
    for (int t = 0; t < SDX_TRAIN_STEPS; t++) {
        double b = sdx__linspace_f64(lo, hi, SDX_TRAIN_STEPS, t);
        double sigma;
        cumprod *= 1.0 - b * b;
        sigma = sqrt((1.0 - cumprod) / cumprod);
        ms->sigmas[t] = (float)sigma;
        ms->log_sigmas[t] = (float)log(sigma);
    }
    ms->sigma_min = ms->sigmas[0];
    ms->sigma_max = ms->sigmas[SDX_TRAIN_STEPS - 1];
}

SDX_API int sdx_sigma_to_timestep(const sdx_model_sampling *ms, float sigma) {
    float log_sigma = logf(sigma);
    float best = fabsf(log_sigma - ms->log_sigmas[0]);
    int best_t = 0;
    for (int t = 1; t < SDX_TRAIN_STEPS; t++) {
        float d = fabsf(log_sigma - ms->log_sigmas[t]);
        if (d < best) { best = d; best_t = t; }
    }
    return best_t;
}

SDX_API float sdx_timestep_to_sigma(const sdx_model_sampling *ms, float t) {
    float lo_t, w;
    int lo, hi;
    if (!(t > 0.0f)) t = 0.0f;   /* also maps NaN to 0 */
    if (t > (float)(SDX_TRAIN_STEPS - 1)) t = (float)(SDX_TRAIN_STEPS - 1);
    lo_t = floorf(t);
    lo = (int)lo_t;
    hi = (int)ceilf(t);
    w = t - lo_t;
    return expf((1.0f - w) * ms->log_sigmas[lo] + w * ms->log_sigmas[hi]);
}

/* LCM's 50 original timesteps (diffusers' original_inference_steps,
 * ComfyUI's ModelSamplingDiscreteDistilled): every 20th of the table, the
 * last of each stride, 19, 39, ..., 999; level j counts up from 19. */
#define SDX__LCM_LEVELS 50
static int sdx__lcm_level_timestep(int j) {
    int skip = SDX_TRAIN_STEPS / SDX__LCM_LEVELS;
    return j * skip + skip - 1;
}

/* ComfyUI keeps the 50 sigmas as float32 and takes their logs in float32
 * (the 1000-level log table is rounded from float64: it can differ by an ulp). */
SDX_API int sdx_model_timestep(const sdx_model_sampling *ms, sdx_prediction pred, float sigma) {
    float log_sigma, best;
    int best_j = 0;
    if (pred != SDX_PRED_LCM) return sdx_sigma_to_timestep(ms, sigma);
    log_sigma = logf(sigma);
    best = fabsf(log_sigma - logf(ms->sigmas[sdx__lcm_level_timestep(0)]));
    for (int j = 1; j < SDX__LCM_LEVELS; j++) {
        float d = fabsf(log_sigma - logf(ms->sigmas[sdx__lcm_level_timestep(j)]));
        if (d < best) { best = d; best_j = j; }
    }
    return sdx__lcm_level_timestep(best_j);
}

SDX_API float sdx_model_c_in(float sigma) {
    return 1.0f / sqrtf(sigma * sigma + 1.0f);
}

SDX_API void sdx_model_denoised(const sdx_model_sampling *ms, sdx_prediction pred, float sigma, const float *x,
                                const float *model_out, float *denoised, size_t n) {
    if (pred == SDX_PRED_LCM) {
        /* ComfyUI's LCM: float32 like its tensors; 10 is LCM's timestep
         * scaling, 0.25 its sigma_data^2 */
        float s = 10.0f * (float)sdx_model_timestep(ms, pred, sigma), s2 = s * s;
        float c_skip = 0.25f / (s2 + 0.25f), c_out = s / sqrtf(s2 + 0.25f);
        for (size_t i = 0; i < n; i++) denoised[i] = c_out * (x[i] - model_out[i] * sigma) + c_skip * x[i];
    } else if (pred == SDX_PRED_X0) {
        if (denoised != model_out) memmove(denoised, model_out, n * sizeof(float));
    } else if (pred == SDX_PRED_V) {
        float s2 = sigma * sigma + 1.0f;
        float out_scale = sigma / sqrtf(s2);
        for (size_t i = 0; i < n; i++) denoised[i] = x[i] / s2 - model_out[i] * out_scale;
    } else {
        for (size_t i = 0; i < n; i++) denoised[i] = x[i] - model_out[i] * sigma;
    }
}

/* The prediction types by name: sdx's, then diffusers' prediction_type
 * (and ComfyUI's ModelSamplingDiscrete sampling) for the same thing; lcm
 * is ComfyUI's name (diffusers has it in LCMScheduler, not as a type). */
static const struct { sdx_prediction id; const char *name, *alias; } sdx__predictions[] = {
    { SDX_PRED_EPS, "eps", "epsilon" },
    { SDX_PRED_V,   "v",   "v_prediction" },
    { SDX_PRED_X0,  "x0",  "sample" },
    { SDX_PRED_LCM, "lcm", NULL },
};

static const char *sdx__prediction_name(sdx_prediction p) {
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__predictions); i++)
        if (sdx__predictions[i].id == p) return sdx__predictions[i].name;
    return "?";
}

/* 1 and *out when name is a prediction type's name or alias, else 0. */
static int sdx__prediction_named(const char *name, sdx_prediction *out) {
    for (int i = 0; name && i < SDX__ARRAY_LEN(sdx__predictions); i++)
        if (!strcmp(name, sdx__predictions[i].name) || (sdx__predictions[i].alias && !strcmp(name, sdx__predictions[i].alias))) {
            *out = sdx__predictions[i].id;
            return 1;
        }
    return 0;
}

SDX_API int sdx_is_max_denoise(const sdx_model_sampling *ms, float sigma0) {
    /* math.isclose(sigma_max, sigma0, rel_tol=1e-5) or sigma0 > sigma_max */
    double a = ms->sigma_max, b = sigma0;
    return fabs(a - b) <= 1e-5 * fmax(fabs(a), fabs(b)) || b > a;
}

SDX_API void sdx_add_noise(float sigma, const float *latent, const float *noise, float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = noise[i] * sigma;
        x[i] = latent ? v + latent[i] : v;
    }
}

SDX_API void sdx_start_latent(const sdx_model_sampling *ms, float sigma0, const float *latent,
                              const float *noise, float *x, size_t n) {
    float scale = sdx_is_max_denoise(ms, sigma0) ? sqrtf(1.0f + sigma0 * sigma0) : sigma0;
    sdx_add_noise(scale, latent, noise, x, n);
}

/* ---- schedulers ------------------------------------------------------ */

/* A growable list of sigmas, computed in double or float and stored as
 * float (schedulers never produce more than a few thousand values). */
typedef struct sdx__sigma_list {
    float *v;
    int    count, cap;
} sdx__sigma_list;

static int sdx__sigma_list_init(sdx_ctx *ctx, sdx__sigma_list *l, int cap) {
    l->count = 0;
    l->cap = cap < 2 ? 2 : cap;
    l->v = (float *)sdx__malloc(ctx, (size_t)l->cap * sizeof(float));
    if (!l->v) return sdx__nomem(ctx, "sigma schedule", (size_t)l->cap * sizeof(float));
    return SDX_OK;
}

/* Callers size the list up front, so a push past capacity is a bug. */
static void sdx__sigma_push(sdx__sigma_list *l, float v) {
    SDX_ASSERT(l->count < l->cap);
    l->v[l->count++] = v;
}

static void sdx__sched_karras(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double min_inv_rho = pow((double)ms->sigma_min, 1.0 / 7.0);
    double max_inv_rho = pow((double)ms->sigma_max, 1.0 / 7.0);
    float span = (float)(min_inv_rho - max_inv_rho), base = (float)max_inv_rho;
    for (int i = 0; i < steps; i++)
        sdx__sigma_push(l, powf(base + sdx__linspace_f32(0.0f, 1.0f, steps, i) * span, 7.0f));
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_exponential(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    float hi = (float)log((double)ms->sigma_max), lo = (float)log((double)ms->sigma_min);
    for (int i = 0; i < steps; i++) sdx__sigma_push(l, expf(sdx__linspace_f32(hi, lo, steps, i)));
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_polyexponential(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double log_min = log((double)ms->sigma_min);
    float span = (float)(log((double)ms->sigma_max) - log_min);
    for (int i = 0; i < steps; i++)   /* rho = 1: ramp ** 1 is the ramp */
        sdx__sigma_push(l, expf(sdx__linspace_f32(1.0f, 0.0f, steps, i) * span + (float)log_min));
    sdx__sigma_push(l, 0.0f);
}

/* The reference's float32 expm1 behaves as exp(x) - 1 (it loses digits
 * at the small end, 4e-4 relative at t = eps_s); reproduced as is. */
static void sdx__sched_vp(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    const float beta_d = 19.9f, beta_min = 0.1f, eps_s = 1e-3f;
    for (int i = 0; i < steps; i++) {
        float t = sdx__linspace_f32(1.0f, eps_s, steps, i);
        sdx__sigma_push(l, sqrtf(expf(beta_d * (t * t) / 2.0f + beta_min * t) - 1.0f));
    }
    sdx__sigma_push(l, 0.0f);
    (void)ms;
}

/* normal: evenly spaced timesteps from timestep(sigma_max) to
 * timestep(sigma_min), mapped through the interpolating sigma(t).
 * sgm_uniform spaces steps + 1 and drops the last. */
static void sdx__sched_normal_or_sgm(const sdx_model_sampling *ms, int steps, int sgm, sdx__sigma_list *l) {
    float start = (float)sdx_sigma_to_timestep(ms, ms->sigma_max);
    float end = (float)sdx_sigma_to_timestep(ms, ms->sigma_min);
    int count = sgm ? steps + 1 : steps, append_zero = 1;
    if (!sgm && fabsf(sdx_timestep_to_sigma(ms, end)) <= 1e-5f) { count++; append_zero = 0; }
    for (int i = 0; i < (sgm ? steps : count); i++)
        sdx__sigma_push(l, sdx_timestep_to_sigma(ms, sdx__linspace_f32(start, end, count, i)));
    if (append_zero) sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_normal(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    sdx__sched_normal_or_sgm(ms, steps, 0, l);
}

static void sdx__sched_sgm_uniform(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    sdx__sched_normal_or_sgm(ms, steps, 1, l);
}

static void sdx__sched_simple(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double stride = (double)SDX_TRAIN_STEPS / steps;
    for (int i = 0; i < steps; i++)
        sdx__sigma_push(l, ms->sigmas[SDX_TRAIN_STEPS - 1 - (int)(i * stride)]);
    sdx__sigma_push(l, 0.0f);
}

/* Training indices 1, 1 + s, 1 + 2s, ... (s = 1000 // steps) in reverse:
 * starts below sigma_max and may hold more than steps values. */
static void sdx__sched_ddim_uniform(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    int stride = SDX_TRAIN_STEPS / steps, last;
    if (stride < 1) stride = 1;
    last = 1 + (SDX_TRAIN_STEPS - 2) / stride * stride;
    for (int t = last; t >= 1; t -= stride) sdx__sigma_push(l, ms->sigmas[t]);
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_linear_quadratic(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    const double threshold = 0.025;
    int linear_steps = steps / 2, quad_steps = steps - linear_steps;
    double diff, quad_coef, lin_coef, constant;
    if (steps == 1) {
        sdx__sigma_push(l, ms->sigma_max);
        sdx__sigma_push(l, 0.0f);
        return;
    }
    diff = linear_steps - threshold * steps;
    quad_coef = diff / (linear_steps * (double)quad_steps * quad_steps);
    lin_coef = threshold / linear_steps - 2 * diff / ((double)quad_steps * quad_steps);
    constant = quad_coef * ((double)linear_steps * linear_steps);
    for (int i = 0; i < steps; i++) {
        double v = i < linear_steps ? i * threshold / linear_steps
                                    : quad_coef * ((double)i * i) + lin_coef * i + constant;
        sdx__sigma_push(l, (float)(1.0 - v) * ms->sigma_max);
    }
    sdx__sigma_push(l, 0.0f);
}

static void sdx__sched_kl_optimal(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    float atan_min = (float)atan((double)ms->sigma_min), atan_max = (float)atan((double)ms->sigma_max);
    for (int i = 0; i < steps; i++) {
        float w = steps > 1 ? (float)i / (float)(steps - 1) : 0.0f;
        sdx__sigma_push(l, tanf(w * atan_min + (1.0f - w) * atan_max));
    }
    sdx__sigma_push(l, 0.0f);
}

/* Regularized incomplete beta I_x(a, b) by its continued fraction
 * (modified Lentz), using the symmetry that keeps the fraction convergent. */
static double sdx__betacf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    h = d;
    for (int m = 1; m <= 500; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)), del;
        d = 1.0 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) break;
    }
    return h;
}

static double sdx__beta_inc(double a, double b, double x) {
    double front;
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) return front * sdx__betacf(a, b, x) / a;
    return 1.0 - front * sdx__betacf(b, a, 1.0 - x) / b;
}

/* scipy.stats.beta.ppf: I_x is monotone on [0, 1], so bisection to the
 * last representable bit is robust for any a, b > 0 (no Newton steps that
 * could leave the interval near the singular ends). */
static double sdx__beta_ppf(double p, double a, double b) {
    double lo = 0.0, hi = 1.0;
    if (p <= 0.0) return 0.0;
    if (p >= 1.0) return 1.0;
    /* the median of a symmetric beta is exactly 1/2; bisection would stop
     * an ulp short, and rint(0.5 * 999) must see 499.5 (-> 500) */
    if (a == b && p == 0.5) return 0.5;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if (sdx__beta_inc(a, b, mid) < p) lo = mid; else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Timesteps at beta(0.6, 0.6) quantiles of 1 - i/steps, rounded half to
 * even like numpy.rint; repeated timesteps are dropped. */
static void sdx__sched_beta(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double last = -1.0, step = 1.0 / steps;
    for (int i = 0; i < steps; i++) {
        double t = nearbyint(sdx__beta_ppf(1.0 - i * step, 0.6, 0.6) * (SDX_TRAIN_STEPS - 1));
        if (t != last) sdx__sigma_push(l, ms->sigmas[(int)t]);
        last = t;
    }
    sdx__sigma_push(l, 0.0f);
}

/* Align Your Steps levels (NVIDIA, published for 10 steps). */
static const double sdx__ays_sd1[11] = {
    14.6146412293, 6.4745760956, 3.8636745985, 2.6946151520, 1.8841921177, 1.3943805092,
    0.9642583904, 0.6523686016, 0.3977456272, 0.1515232662, 0.0291671582
};
static const double sdx__ays_sdxl[11] = {
    14.6146412293, 6.3184485287, 3.7681790315, 2.1811480769, 1.3405244945, 0.8620721141,
    0.5550693289, 0.3798540708, 0.2332364134, 0.1114188177, 0.0291671582
};

/* ComfyUI loglinear_interp at output k of count: np.interp of the
 * ascending log levels, knots at j / 10, evaluated at position
 * (count - 1 - k) / (count - 1) of linspace(0, 1, count); then exp. */
static double sdx__ays_interp(const double *levels, int count, int k) {
    int asc = count - 1 - k, j = 0;
    double x, xj;
    if (asc == count - 1) return levels[0];   /* the right end: np.interp returns the last knot */
    x = asc * (1.0 / (count - 1));
    while (j < 9 && (j + 1) * 0.1 <= x) j++;
    xj = j * 0.1;
    return exp((log(levels[9 - j]) - log(levels[10 - j])) / ((j + 1) * 0.1 - xj) * (x - xj) + log(levels[10 - j]));
}

/* AlignYourStepsScheduler: the published 10-step levels, log-linearly
 * resampled for other step counts; the last value is replaced by 0. */
static void sdx__sched_ays_levels(const double *levels, int steps, sdx__sigma_list *l) {
    int count = steps + 1;
    for (int k = 0; k < count - 1; k++)
        sdx__sigma_push(l, (float)(count == 11 ? levels[k] : sdx__ays_interp(levels, count, k)));
    sdx__sigma_push(l, 0.0f);
}

/* AYS does not read the model's levels: its own are fixed. */
static void sdx__sched_ays_sd1(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    sdx__sched_ays_levels(sdx__ays_sd1, steps, l);
    (void)ms;
}

static void sdx__sched_ays_sdxl(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    sdx__sched_ays_levels(sdx__ays_sdxl, steps, l);
    (void)ms;
}

/* ---- few-step schedules: integer timesteps -------------------------------- */
/* These name training timesteps and take sigma(t) of each as ComfyUI's
 * ModelSamplingDiscrete.sigma does (exp(log_sigmas[t]), which can differ
 * from sigmas[t] by an ulp). ../shared/golden/fewstep has them all. */

static void sdx__push_timestep(const sdx_model_sampling *ms, int t, sdx__sigma_list *l) {
    sdx__sigma_push(l, sdx_timestep_to_sigma(ms, (float)t));
}

/* ComfyUI's SDTurboScheduler at denoise 1: 999, 899, ..., 99, at most ten
 * steps (its node slices the list). Denoise < 1 is its own rule, below. */
static void sdx__sched_sd_turbo(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    for (int i = 0; i < steps && i < 10; i++) sdx__push_timestep(ms, 999 - 100 * i, l);
    sdx__sigma_push(l, 0.0f);
}

/* diffusers' timestep_spacing "trailing" (SDXL-Lightning, Hyper-SD):
 * np.round(np.arange(1000, 0, -1000 / steps)) - 1. arange's k-th value is
 * 1000 + k * delta with delta = its second value minus its first, and
 * np.round rounds half to even (16 steps: 937.5 -> 938, 62.5 -> 62). */
static void sdx__sched_trailing(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double first = SDX_TRAIN_STEPS, delta = (first + -first / steps) - first;
    for (int k = 0; k < steps; k++) sdx__push_timestep(ms, (int)nearbyint(first + k * delta) - 1, l);
    sdx__sigma_push(l, 0.0f);
}

/* The default timesteps of diffusers' LCMScheduler and TCDScheduler (and
 * stable-diffusion.cpp's "lcm" scheduler): of the 50 original steps 999,
 * 979, ..., 19, those at floor(linspace(0, 50, steps, endpoint=False)).
 * Past 50 steps timesteps repeat (diffusers refuses them). */
static void sdx__sched_lcm(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l) {
    double stride = (double)SDX__LCM_LEVELS / steps;
    for (int i = 0; i < steps; i++) sdx__push_timestep(ms, sdx__lcm_level_timestep(SDX__LCM_LEVELS - 1 - (int)floor(i * stride)), l);
    sdx__sigma_push(l, 0.0f);
}

/* ---- the scheduler registry ------------------------------------------- */

/* Appends the non-NULL names name_of(0 .. count - 1) to list, the first
 * after `lead`, the others after ", "; returns the new length. */
static size_t sdx__join_names(char *list, size_t size, size_t used, const char *lead, int count,
                              const char *(*name_of)(int i)) {
    for (int i = 0, n = 0; i < count && used < size; i++) {
        const char *name = name_of(i);
        if (name) used += (size_t)snprintf(list + used, size - used, "%s%s", n++ ? ", " : lead, name);
    }
    return used;
}

typedef void (*sdx__sched_fn)(const sdx_model_sampling *ms, int steps, sdx__sigma_list *l);
/* A scheduler that ComfyUI has as a node of its own rather than a KSampler
 * name: the node's rule for denoise (and no penultimate-sigma drop), into
 * a new list. */
typedef int (*sdx__sched_node_fn)(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched, int steps,
                                  double denoise, sdx__sigma_list *l);

enum {
    SDX__SCHED_ANY_LENGTH = 1    /* up to SDX_TRAIN_STEPS + 2 values whatever the step count */
};

/* Everything known about a scheduler, one row each, in enum order (the
 * name round trip test checks the order). */
typedef struct sdx__scheduler_row {
    sdx_scheduler id;
    const char   *name;      /* ComfyUI's; stable-diffusion.cpp's, or new, where ComfyUI has none */
    sdx__sched_fn fill;
    unsigned      flags;
    sdx__sched_node_fn node; /* NULL: KSampler's denoise rule (sdx_sampler_sigmas) */
    const char   *a1111;     /* A1111's "Schedule type"; NULL: it has none, the name is written */
} sdx__scheduler_row;

static int sdx__node_ays(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched, int steps, double denoise,
                         sdx__sigma_list *l);
static int sdx__node_sd_turbo(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched, int steps, double denoise,
                              sdx__sigma_list *l);

static const sdx__scheduler_row sdx__schedulers[] = {
    { SDX_SCHED_NORMAL,           "normal",           sdx__sched_normal,           0, NULL, "Automatic" },
    { SDX_SCHED_KARRAS,           "karras",           sdx__sched_karras,           0, NULL, "Karras" },
    { SDX_SCHED_EXPONENTIAL,      "exponential",      sdx__sched_exponential,      0, NULL, "Exponential" },
    { SDX_SCHED_SGM_UNIFORM,      "sgm_uniform",      sdx__sched_sgm_uniform,      0, NULL, "SGM Uniform" },
    { SDX_SCHED_SIMPLE,           "simple",           sdx__sched_simple,           0, NULL, "Simple" },
    { SDX_SCHED_DDIM_UNIFORM,     "ddim_uniform",     sdx__sched_ddim_uniform,     SDX__SCHED_ANY_LENGTH, NULL, "DDIM" },
    { SDX_SCHED_BETA,             "beta",             sdx__sched_beta,             0, NULL, "Beta" },
    { SDX_SCHED_LINEAR_QUADRATIC, "linear_quadratic", sdx__sched_linear_quadratic, 0, NULL, "Linear Quadratic" },
    { SDX_SCHED_KL_OPTIMAL,       "kl_optimal",       sdx__sched_kl_optimal,       0, NULL, "KL Optimal" },
    { SDX_SCHED_AYS_SD1,          "ays_sd1",          sdx__sched_ays_sd1,          0, sdx__node_ays, "Align Your Steps" },
    { SDX_SCHED_AYS_SDXL,         "ays_sdxl",         sdx__sched_ays_sdxl,         0, sdx__node_ays, "Align Your Steps" },
    { SDX_SCHED_POLYEXPONENTIAL,  "polyexponential",  sdx__sched_polyexponential,  0, NULL, NULL },
    { SDX_SCHED_VP,               "vp",               sdx__sched_vp,               0, NULL, NULL },
    { SDX_SCHED_SD_TURBO,         "sd_turbo",         sdx__sched_sd_turbo,         0, sdx__node_sd_turbo, NULL },
    { SDX_SCHED_TRAILING,         "trailing",         sdx__sched_trailing,         0, NULL, NULL },
    { SDX_SCHED_LCM,              "lcm",              sdx__sched_lcm,              0, NULL, NULL },
};
typedef char sdx__schedulers_one_row_each[SDX__ARRAY_LEN(sdx__schedulers) == SDX_SCHED_COUNT ? 1 : -1];

static const sdx__scheduler_row *sdx__scheduler_named(const char *name) {
    for (int i = 0; name && i < SDX_SCHED_COUNT; i++)
        if (!strcmp(name, sdx__schedulers[i].name)) return &sdx__schedulers[i];
    return NULL;
}

SDX_API const char *sdx_scheduler_name(sdx_scheduler s) {
    return (unsigned)s < SDX_SCHED_COUNT ? sdx__schedulers[s].name : "?";
}

SDX_API const char *sdx_scheduler_a1111_name(sdx_scheduler s) {
    return (unsigned)s < SDX_SCHED_COUNT ? sdx__schedulers[s].a1111 : NULL;
}

static const char *sdx__scheduler_name_at(int i) { return sdx__schedulers[i].name; }

/* Whether a name asks for the model family's Align Your Steps table
 * ("ays", "align_your_steps"), which only generation knows. */
static int sdx__scheduler_is_family_ays(const char *name) {
    return name && (!strcmp(name, "ays") || !strcmp(name, "align_your_steps"));
}

/* The error for a family AYS name outside generation: which scheduler
 * each family's row names, and the families without a table. */
static int sdx__ays_needs_family(sdx_ctx *ctx, const char *name) {
    char with[256] = "", without[256] = "";
    size_t nw = 0, nn = 0;
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__families); i++) {
        const sdx__family *f = &sdx__families[i];
        if (f->ays && nw < sizeof with)
            nw += (size_t)snprintf(with + nw, sizeof with - nw, "%s%s (%s)", nw ? " or " : "", f->ays, f->name);
        else if (!f->ays && nn < sizeof without)
            nn += (size_t)snprintf(without + nn, sizeof without - nn, "%s%s", nn ? ", " : "", f->name);
    }
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "scheduler '%s' needs the model family: use %s%s%s", name, with,
                     nn ? "; there is no Align Your Steps table for " : "", without);
}

SDX_API sdx_result sdx_scheduler_from_name(sdx_ctx *ctx, const char *name, sdx_scheduler *out) {
    const sdx__scheduler_row *row = sdx__scheduler_named(name);
    char list[512] = "";
    if (row) { *out = row->id; return SDX_OK; }
    if (sdx__scheduler_is_family_ays(name)) return (sdx_result)sdx__ays_needs_family(ctx, name);
    sdx__join_names(list, sizeof list, 0, "", SDX_SCHED_COUNT, sdx__scheduler_name_at);
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "unknown scheduler '%s'; valid: %s", name ? name : "(null)", list);
}

/* A1111's "Schedule type" for a scheduler name, for the PNG parameters.
 * "ays" and "align_your_steps" (the pipeline picks the family's table)
 * are AYS too; names A1111 lacks, and unknown ones, are written as given. */
static const char *sdx__scheduler_a1111_name(const char *name) {
    const sdx__scheduler_row *row = sdx__scheduler_named(name);
    if (sdx__scheduler_is_family_ays(name)) row = &sdx__schedulers[SDX_SCHED_AYS_SD1];
    return row && row->a1111 ? row->a1111 : name;
}

static int sdx__calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx__sigma_list *l) {
    const sdx__scheduler_row *row;
    int rc, cap;
    if ((unsigned)sched >= SDX_SCHED_COUNT)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: scheduler id %d out of range", (int)sched);
    if (steps < 1 || steps > 100000)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: steps must be in 1..100000, got %d", steps);
    row = &sdx__schedulers[sched];
    cap = row->flags & SDX__SCHED_ANY_LENGTH ? SDX_TRAIN_STEPS + 2 : steps + 2;
    if ((rc = sdx__sigma_list_init(ctx, l, cap)) != SDX_OK) return rc;
    row->fill(ms, steps, l);
    return SDX_OK;
}

/* Moves values [first, first + count) of a list into a new 1-D tensor. */
static int sdx__sigma_list_to_tensor(sdx_ctx *ctx, sdx__sigma_list *l, int first, int count, sdx_tensor *out) {
    int64_t shape[1];
    int rc;
    shape[0] = count;
    rc = sdx_tensor_alloc(ctx, out, SDX_F32, 1, shape);
    if (rc == SDX_OK) memcpy(out->data, l->v + first, (size_t)count * sizeof(float));
    sdx__free(ctx, l->v);
    l->v = NULL;
    return rc;
}

/* Keeps values [first, first + count) of a list. */
static void sdx__sigma_list_slice(sdx__sigma_list *l, int first, int count) {
    memmove(l->v, l->v + first, (size_t)count * sizeof(float));
    l->count = count;
}

/* ComfyUI's AlignYourStepsScheduler node: round(steps * denoise) steps
 * (Python round-half-even) from the tail of the steps-step table. */
static int sdx__node_ays(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched, int steps, double denoise,
                         sdx__sigma_list *l) {
    int keep = denoise < 1.0 ? (int)nearbyint(steps * denoise) : steps, rc;
    if (keep < 1) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "ays: %d steps at denoise %g leave no step", steps, denoise);
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, steps, l)) != SDX_OK) return rc;
    sdx__sigma_list_slice(l, l->count - (keep + 1), keep + 1);
    return SDX_OK;
}

/* ComfyUI's SDTurboScheduler node: the timesteps from index start = 10 -
 * int(10 * denoise) (a Python float: 10 * 0.3 is 3.0000000000000004, so
 * 3), at most 10 - start of them; the denoise-1 list from start + steps
 * values with the first start dropped. */
static int sdx__node_sd_turbo(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched, int steps, double denoise,
                              sdx__sigma_list *l) {
    int start = 10 - (int)(10.0 * denoise), rc;
    if (start >= 10)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sd_turbo: denoise %g leaves no step (its timesteps are 999, 899, ..., 99; "
                         "denoise must be at least 0.1)", denoise);
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, SDX__MIN(steps, 10) + start, l)) != SDX_OK) return rc;
    sdx__sigma_list_slice(l, start, l->count - start);
    return SDX_OK;
}

SDX_API sdx_result sdx_calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx_tensor *out) {
    sdx__sigma_list l;
    int rc;
    if (!ms || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: NULL argument");
    memset(out, 0, sizeof *out);
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, steps, &l)) != SDX_OK) return (sdx_result)rc;
    return (sdx_result)sdx__sigma_list_to_tensor(ctx, &l, 0, l.count, out);
}

SDX_API sdx_result sdx_sigmas_from_timesteps(sdx_ctx *ctx, const sdx_model_sampling *ms, const int *timesteps, int n,
                                             sdx_tensor *out) {
    sdx__sigma_list l;
    int rc;
    if (!ms || !out || !timesteps) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sigmas from timesteps: NULL argument");
    memset(out, 0, sizeof *out);
    if (n < 1 || n > 100000)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sigmas from timesteps: need 1..100000 timesteps, got %d", n);
    for (int i = 0; i < n; i++) {
        if (timesteps[i] < 0 || timesteps[i] >= SDX_TRAIN_STEPS)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "timestep %d is %d: must be in 0..%d", i, timesteps[i], SDX_TRAIN_STEPS - 1);
        if (i > 0 && timesteps[i] > timesteps[i - 1])
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "timesteps must not increase, but timestep %d is %d after %d", i,
                             timesteps[i], timesteps[i - 1]);
    }
    if ((rc = sdx__sigma_list_init(ctx, &l, n + 1)) != SDX_OK) return (sdx_result)rc;
    for (int i = 0; i < n; i++) sdx__push_timestep(ms, timesteps[i], &l);
    sdx__sigma_push(&l, 0.0f);
    return (sdx_result)sdx__sigma_list_to_tensor(ctx, &l, 0, l.count, out);
}
