#pragma once
#include "api_sampling.h"
#include "../core/core.c"

/* ===================================================================== */
/*  Sampling: model sampling, schedulers, samplers (ComfyUI semantics)    */
/* ===================================================================== */
/* ComfyUI runs all of this in float32 torch. Scalars that torch keeps as
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

SDX_API float sdx_model_c_in(float sigma) {
    return 1.0f / sqrtf(sigma * sigma + 1.0f);
}

SDX_API void sdx_model_denoised(sdx_prediction pred, float sigma, const float *x,
                                const float *model_out, float *denoised, size_t n) {
    if (pred == SDX_PRED_V) {
        float s2 = sigma * sigma + 1.0f;
        float out_scale = sigma / sqrtf(s2);
        for (size_t i = 0; i < n; i++) denoised[i] = x[i] / s2 - model_out[i] * out_scale;
    } else {
        for (size_t i = 0; i < n; i++) denoised[i] = x[i] - model_out[i] * sigma;
    }
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

enum {
    SDX__SCHED_ANY_LENGTH = 1,   /* up to SDX_TRAIN_STEPS + 2 values whatever the step count */
    SDX__SCHED_FIXED_LEVELS = 2  /* denoise < 1 takes round(steps * denoise) steps from the
                                    tail of the steps-step table (ComfyUI's AYS node) instead
                                    of KSampler's longer schedule */
};

/* Everything known about a scheduler, one row each, in enum order (the
 * name round trip test checks the order). */
typedef struct sdx__scheduler_row {
    sdx_scheduler id;
    const char   *name;      /* ComfyUI's */
    sdx__sched_fn fill;
    unsigned      flags;
    const char   *a1111;     /* A1111's "Schedule type"; NULL: it has none, the name is written */
} sdx__scheduler_row;

static const sdx__scheduler_row sdx__schedulers[] = {
    { SDX_SCHED_NORMAL,           "normal",           sdx__sched_normal,           0, "Automatic" },
    { SDX_SCHED_KARRAS,           "karras",           sdx__sched_karras,           0, "Karras" },
    { SDX_SCHED_EXPONENTIAL,      "exponential",      sdx__sched_exponential,      0, "Exponential" },
    { SDX_SCHED_SGM_UNIFORM,      "sgm_uniform",      sdx__sched_sgm_uniform,      0, "SGM Uniform" },
    { SDX_SCHED_SIMPLE,           "simple",           sdx__sched_simple,           0, "Simple" },
    { SDX_SCHED_DDIM_UNIFORM,     "ddim_uniform",     sdx__sched_ddim_uniform,     SDX__SCHED_ANY_LENGTH, "DDIM" },
    { SDX_SCHED_BETA,             "beta",             sdx__sched_beta,             0, "Beta" },
    { SDX_SCHED_LINEAR_QUADRATIC, "linear_quadratic", sdx__sched_linear_quadratic, 0, "Linear Quadratic" },
    { SDX_SCHED_KL_OPTIMAL,       "kl_optimal",       sdx__sched_kl_optimal,       0, "KL Optimal" },
    { SDX_SCHED_AYS_SD1,          "ays_sd1",          sdx__sched_ays_sd1,          SDX__SCHED_FIXED_LEVELS, "Align Your Steps" },
    { SDX_SCHED_AYS_SDXL,         "ays_sdxl",         sdx__sched_ays_sdxl,         SDX__SCHED_FIXED_LEVELS, "Align Your Steps" },
    { SDX_SCHED_POLYEXPONENTIAL,  "polyexponential",  sdx__sched_polyexponential,  0, NULL },
    { SDX_SCHED_VP,               "vp",               sdx__sched_vp,               0, NULL },
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

static const char *sdx__scheduler_name_at(int i) { return sdx__schedulers[i].name; }

SDX_API int sdx_scheduler_from_name(sdx_ctx *ctx, const char *name, sdx_scheduler *out) {
    const sdx__scheduler_row *row = sdx__scheduler_named(name);
    char list[512] = "";
    if (row) { *out = row->id; return SDX_OK; }
    sdx__join_names(list, sizeof list, 0, "", SDX_SCHED_COUNT, sdx__scheduler_name_at);
    if (name && !strcmp(name, "ays"))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "scheduler 'ays' needs the model family: use ays_sd1 or "
                         "ays_sdxl (there is no Align Your Steps table for SD 2.x)");
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "unknown scheduler '%s'; valid: %s", name ? name : "(null)", list);
}

/* A1111's "Schedule type" for a scheduler name, for the PNG parameters.
 * "ays" and "align_your_steps" (the pipeline picks the family's table)
 * are AYS too; names A1111 lacks, and unknown ones, are written as given. */
static const char *sdx__scheduler_a1111_name(const char *name) {
    const sdx__scheduler_row *row = sdx__scheduler_named(name);
    if (name && (!strcmp(name, "ays") || !strcmp(name, "align_your_steps"))) row = &sdx__schedulers[SDX_SCHED_AYS_SD1];
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

SDX_API int sdx_calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx_tensor *out) {
    sdx__sigma_list l;
    int rc;
    if (!ms || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "calculate_sigmas: NULL argument");
    memset(out, 0, sizeof *out);
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, steps, &l)) != SDX_OK) return rc;
    return sdx__sigma_list_to_tensor(ctx, &l, 0, l.count, out);
}

/* ---- samplers: plumbing ----------------------------------------------- */

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

/* ---- Karras-ODE samplers: euler, heun, heunpp2, dpm_2, lms ------------ */

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

/* d = (x - denoised) / sigma for a whole latent. */
static void sdx__to_d(float *d, const float *x, const float *den, float sigma, size_t n) {
    for (size_t k = 0; k < n; k++) d[k] = (x[k] - den[k]) / sigma;
}

/* x2 = x + d * dt */
static void sdx__euler_to(float *x2, const float *x, const float *d, float dt, size_t n) {
    for (size_t k = 0; k < n; k++) x2[k] = x[k] + d[k] * dt;
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

/* ---- DPM-Solver++ family (half-logSNR lambda = -log sigma) ------------ */

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

/* ---- the sampler registry --------------------------------------------- */

typedef int (*sdx__sampler_fn)(sdx__run *r, float *x);

enum {
    SDX__SAMPLER_STOCHASTIC = 1,          /* draws per-step noise: needs a noise callback */
    SDX__SAMPLER_DROPS_PENULTIMATE = 2    /* KSampler computes one step more and drops the
                                             penultimate sigma (DISCARD_PENULTIMATE_SIGMA_SAMPLERS) */
};

/* Everything known about a sampler, one row each, in enum order (the name
 * round trip test checks the order). Adding a sampler is a row here, its
 * function and its enum value. */
typedef struct sdx__sampler_row {
    sdx_sampler     id;
    const char     *name;     /* ComfyUI's */
    const char     *alias;    /* stable-diffusion.cpp's name where it differs and the algorithm
                                 is the same, else NULL */
    sdx__sampler_fn run;
    unsigned        flags;
    const char     *a1111;    /* A1111's "Sampler"; NULL: it has none, the name is written */
} sdx__sampler_row;

#define SDX__S SDX__SAMPLER_STOCHASTIC
#define SDX__P SDX__SAMPLER_DROPS_PENULTIMATE
/* sd.cpp's dpm++2mv2 (a modified 2M step ComfyUI lacks) and ddim_trailing
 * (it steps on integer timesteps of alphas_cumprod) are no aliases. */
static const sdx__sampler_row sdx__samplers[] = {
    { SDX_SAMPLER_EULER,                   "euler",                   NULL,        sdx__sample_euler,                   0, "Euler" },
    { SDX_SAMPLER_EULER_ANCESTRAL,         "euler_ancestral",         "euler_a",   sdx__sample_euler_ancestral,         SDX__S, "Euler a" },
    { SDX_SAMPLER_HEUN,                    "heun",                    NULL,        sdx__sample_heun,                    0, "Heun" },
    { SDX_SAMPLER_HEUNPP2,                 "heunpp2",                 NULL,        sdx__sample_heunpp2,                 0, NULL },
    { SDX_SAMPLER_DPM_2,                   "dpm_2",                   "dpm2",      sdx__sample_dpm_2,                   SDX__P, "DPM2" },
    { SDX_SAMPLER_DPM_2_ANCESTRAL,         "dpm_2_ancestral",         NULL,        sdx__sample_dpm_2_ancestral,         SDX__S | SDX__P, "DPM2 a" },
    { SDX_SAMPLER_LMS,                     "lms",                     NULL,        sdx__sample_lms,                     0, "LMS" },
    { SDX_SAMPLER_DPMPP_2S_ANCESTRAL,      "dpmpp_2s_ancestral",      "dpm++2s_a", sdx__sample_dpmpp_2s_ancestral,      SDX__S, "DPM++ 2S a" },
    { SDX_SAMPLER_DPMPP_SDE,               "dpmpp_sde",               NULL,        sdx__sample_dpmpp_sde,               SDX__S, "DPM++ SDE" },
    { SDX_SAMPLER_DPMPP_2M,                "dpmpp_2m",                "dpm++2m",   sdx__sample_dpmpp_2m,                0, "DPM++ 2M" },
    { SDX_SAMPLER_DPMPP_2M_SDE,            "dpmpp_2m_sde",            NULL,        sdx__sample_dpmpp_2m_sde,            SDX__S, "DPM++ 2M SDE" },
    { SDX_SAMPLER_DPMPP_2M_SDE_HEUN,       "dpmpp_2m_sde_heun",       NULL,        sdx__sample_dpmpp_2m_sde_heun,       SDX__S, "DPM++ 2M SDE Heun" },
    { SDX_SAMPLER_DPMPP_3M_SDE,            "dpmpp_3m_sde",            NULL,        sdx__sample_dpmpp_3m_sde,            SDX__S, "DPM++ 3M SDE" },
    { SDX_SAMPLER_DDPM,                    "ddpm",                    NULL,        sdx__sample_ddpm,                    SDX__S, NULL },
    { SDX_SAMPLER_LCM,                     "lcm",                     NULL,        sdx__sample_lcm,                     SDX__S, "LCM" },
    { SDX_SAMPLER_IPNDM,                   "ipndm",                   NULL,        sdx__sample_ipndm,                   0, "iPNDM" },
    { SDX_SAMPLER_IPNDM_V,                 "ipndm_v",                 NULL,        sdx__sample_ipndm_v,                 0, NULL },
    { SDX_SAMPLER_DEIS,                    "deis",                    NULL,        sdx__sample_deis,                    0, "DEIS" },
    { SDX_SAMPLER_RES_MULTISTEP,           "res_multistep",           NULL,        sdx__sample_res_multistep,           0, NULL },
    { SDX_SAMPLER_RES_MULTISTEP_ANCESTRAL, "res_multistep_ancestral", NULL,        sdx__sample_res_multistep_ancestral, SDX__S, NULL },
    { SDX_SAMPLER_GRADIENT_ESTIMATION,     "gradient_estimation",     NULL,        sdx__sample_gradient_estimation,     0, NULL },
    { SDX_SAMPLER_ER_SDE,                  "er_sde",                  NULL,        sdx__sample_er_sde,                  SDX__S, NULL },
    { SDX_SAMPLER_UNI_PC,                  "uni_pc",                  NULL,        sdx__sample_uni_pc,                  SDX__P, "UniPC" },
    { SDX_SAMPLER_UNI_PC_BH2,              "uni_pc_bh2",              NULL,        sdx__sample_uni_pc_bh2,              SDX__P, NULL },
    { SDX_SAMPLER_DDIM,                    "ddim",                    NULL,        sdx__sample_euler,                   0, "DDIM" },   /* euler for txt2img */
    { SDX_SAMPLER_TCD,                     "tcd",                     NULL,        sdx__sample_tcd,                     SDX__S, NULL },
};
#undef SDX__S
#undef SDX__P
typedef char sdx__samplers_one_row_each[SDX__ARRAY_LEN(sdx__samplers) == SDX_SAMPLER_COUNT ? 1 : -1];

/* The row of a name or alias, or NULL. */
static const sdx__sampler_row *sdx__sampler_named(const char *name) {
    for (int i = 0; name && i < SDX_SAMPLER_COUNT; i++)
        if (!strcmp(name, sdx__samplers[i].name)) return &sdx__samplers[i];
    for (int i = 0; name && i < SDX_SAMPLER_COUNT; i++)
        if (sdx__samplers[i].alias && !strcmp(name, sdx__samplers[i].alias)) return &sdx__samplers[i];
    return NULL;
}

SDX_API const char *sdx_sampler_name(sdx_sampler s) {
    return (unsigned)s < SDX_SAMPLER_COUNT ? sdx__samplers[s].name : "?";
}

static const char *sdx__sampler_name_at(int i) { return sdx__samplers[i].name; }
static const char *sdx__sampler_alias_at(int i) { return sdx__samplers[i].alias; }

SDX_API int sdx_sampler_from_name(sdx_ctx *ctx, const char *name, sdx_sampler *out) {
    const sdx__sampler_row *row = sdx__sampler_named(name);
    char list[768] = "";
    size_t used;
    if (row) { *out = row->id; return SDX_OK; }
    used = sdx__join_names(list, sizeof list, 0, "", SDX_SAMPLER_COUNT, sdx__sampler_name_at);
    sdx__join_names(list, sizeof list, used, "; aliases: ", SDX_SAMPLER_COUNT, sdx__sampler_alias_at);
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "unknown sampler '%s'; valid: %s", name ? name : "(null)", list);
}

SDX_API int sdx_sampler_is_stochastic(sdx_sampler s) {
    return (unsigned)s < SDX_SAMPLER_COUNT && (sdx__samplers[s].flags & SDX__SAMPLER_STOCHASTIC);
}

/* A1111's "Sampler" for a sampler name or alias, for the PNG parameters;
 * names A1111 lacks, and unknown ones, are written as given. */
static const char *sdx__sampler_a1111_name(const char *name) {
    const sdx__sampler_row *row = sdx__sampler_named(name);
    return row && row->a1111 ? row->a1111 : name;
}

SDX_API int sdx_sampler_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                               sdx_sampler sampler, int steps, double denoise, sdx_tensor *out) {
    sdx__sigma_list l;
    int rc, total = steps, keep, drop_penultimate;
    if (!ms || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: NULL argument");
    memset(out, 0, sizeof *out);
    if (!(denoise > 0.0 && denoise <= 1.0))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: denoise must be in (0, 1], got %g", denoise);
    if ((unsigned)sampler >= SDX_SAMPLER_COUNT)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: sampler id %d out of range", (int)sampler);
    drop_penultimate = (sdx__samplers[sampler].flags & SDX__SAMPLER_DROPS_PENULTIMATE) != 0;
    if ((unsigned)sched < SDX_SCHED_COUNT && (sdx__schedulers[sched].flags & SDX__SCHED_FIXED_LEVELS)) {
        /* AlignYourStepsScheduler: round(steps * denoise) steps, Python
         * round-half-even. */
        keep = denoise < 1.0 ? (int)nearbyint(steps * denoise) : steps;
        if (keep < 1)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "ays: %d steps at denoise %g leave no step", steps, denoise);
        if ((rc = sdx__calculate_sigmas(ctx, ms, sched, steps, &l)) != SDX_OK) return rc;
        return sdx__sigma_list_to_tensor(ctx, &l, l.count - (keep + 1), keep + 1, out);
    }
    if (denoise <= 0.9999) {
        double t = steps / denoise;
        if (t > 100000.0)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: %d steps at denoise %g is too many",
                             steps, denoise);
        total = (int)t;
    }
    if (drop_penultimate) total++;
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, total, &l)) != SDX_OK) return rc;
    if (drop_penultimate && l.count >= 2) {
        l.v[l.count - 2] = l.v[l.count - 1];
        l.count--;
    }
    keep = denoise <= 0.9999 && l.count > steps + 1 ? steps + 1 : l.count;
    return sdx__sigma_list_to_tensor(ctx, &l, l.count - keep, keep, out);
}

/* ---- driver ----------------------------------------------------------- */

static int sdx__check_sample_desc(sdx_ctx *ctx, const sdx_sample_desc *d, const float *x) {
    const char *name;
    if (!d || !x) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample: desc and x are required");
    if ((unsigned)d->sampler >= SDX_SAMPLER_COUNT)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample: sampler id %d out of range", (int)d->sampler);
    name = sdx_sampler_name(d->sampler);
    if (!d->denoise) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: no denoise callback", name);
    if (!d->noise && sdx_sampler_is_stochastic(d->sampler))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG,
                         "sdx_sample %s: this sampler draws per-step noise but no noise callback was given", name);
    if (!d->sigmas || d->n_sigmas < 1 || d->n == 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: need sigmas (got %d) and a non-empty latent",
                         name, d->n_sigmas);
    for (int i = 0; i < d->n_sigmas; i++) {
        if (!(d->sigmas[i] >= 0.0f) || isinf(d->sigmas[i]))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: sigma %d is %g (must be finite and >= 0)",
                             name, i, (double)d->sigmas[i]);
        if (i + 1 < d->n_sigmas && d->sigmas[i] == 0.0f)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: sigma %d is 0 before the last one", name, i);
        /* equal neighbours are allowed: "simple" repeats sigmas beyond 1000 steps */
        if (i > 0 && d->sigmas[i] > d->sigmas[i - 1])
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample %s: sigmas must not increase, but sigma %d is %g "
                             "after %g", name, i, (double)d->sigmas[i], (double)d->sigmas[i - 1]);
    }
    return SDX_OK;
}

SDX_API int sdx_sample(sdx_ctx *ctx, const sdx_sample_desc *desc, float *x) {
    sdx__run r;
    size_t bytes;
    float *block;
    int rc;
    if ((rc = sdx__check_sample_desc(ctx, desc, x)) != SDX_OK) return rc;
    if (desc->n_sigmas < 2) return SDX_OK;   /* no step: ComfyUI returns the input */
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.d = desc;
    r.sig = desc->sigmas;
    r.steps = desc->n_sigmas - 1;
    r.n = desc->n;
    if (!sdx__mul_size(desc->n, SDX__SAMPLER_BUFS * sizeof(float), &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_sample: latent of %zu floats is too large", desc->n);
    block = (float *)sdx__malloc(ctx, bytes);
    if (!block) return sdx__nomem(ctx, "sampler temporaries", bytes);
    for (int b = 0; b < SDX__SAMPLER_BUFS; b++) r.buf[b] = block + (size_t)b * desc->n;
    rc = sdx__samplers[desc->sampler].run(&r, x);
    sdx__free(ctx, block);
    return rc;
}
