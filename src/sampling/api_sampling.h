#pragma once
#include "../core/api_core.h"

/* ===================================================================== */
/*  Public API: noise schedules, model sampling and samplers              */
/* ===================================================================== */
/* Everything here follows ComfyUI's KSampler semantics (samplers.py,
 * k_diffusion/sampling.py, model_sampling.py): same names, same sigma
 * arrays, same per-step noise consumption, float32 state. */
#ifdef __cplusplus
extern "C" {
#endif

/* ---- model sampling: the discrete DDPM schedule --------------------- */
#define SDX_TRAIN_STEPS 1000

/* The 1000 training noise levels of SD 1.x / 2.x / SDXL (scaled_linear
 * betas 0.00085..0.012; the v-prediction models use the same table).
 * Index t is the UNet timestep: sigmas[0] is the smallest. */
typedef struct sdx_model_sampling {
    float sigmas[SDX_TRAIN_STEPS];
    float log_sigmas[SDX_TRAIN_STEPS];
    float sigma_min;   /* sigmas[0]   */
    float sigma_max;   /* sigmas[999] */
} sdx_model_sampling;

SDX_API void  sdx_model_sampling_init(sdx_model_sampling *ms);
/* Nearest training timestep in log space (first index on ties). The UNet
 * is evaluated at this integer timestep. sigma 0 gives 0. */
SDX_API int   sdx_sigma_to_timestep(const sdx_model_sampling *ms, float sigma);
/* Log-linear interpolation of the table at a fractional timestep
 * (clamped to [0, 999]). */
SDX_API float sdx_timestep_to_sigma(const sdx_model_sampling *ms, float t);
/* The timestep a UNet of `pred` is evaluated at for sigma: the nearest
 * training timestep, or for SDX_PRED_LCM the nearest of LCM's 50 (19, 39,
 * ..., 999: ComfyUI's ModelSamplingDiscreteDistilled, from ms->sigmas). */
SDX_API int   sdx_model_timestep(const sdx_model_sampling *ms, sdx_prediction pred, float sigma);
/* UNet input scale: x_in = x * c_in. */
SDX_API float sdx_model_c_in(float sigma);
/* UNet output -> denoised prediction (may alias any input): eps x - out *
 * sigma, v x / (sigma^2 + 1) - out * sigma / sqrt(sigma^2 + 1), x0 out,
 * lcm c_out * (x - out * sigma) + c_skip * x, where s = 10 t at t =
 * sdx_model_timestep, c_skip = 0.25 / (s^2 + 0.25) and c_out = s /
 * sqrt(s^2 + 0.25). Only lcm reads ms, the model's table; the others
 * take NULL. */
SDX_API void  sdx_model_denoised(const sdx_model_sampling *ms, sdx_prediction pred, float sigma, const float *x,
                                 const float *model_out, float *denoised, size_t n);

/* ---- schedulers ------------------------------------------------------ */
typedef enum sdx_scheduler {
    SDX_SCHED_NORMAL = 0,
    SDX_SCHED_KARRAS,
    SDX_SCHED_EXPONENTIAL,
    SDX_SCHED_SGM_UNIFORM,
    SDX_SCHED_SIMPLE,
    SDX_SCHED_DDIM_UNIFORM,
    SDX_SCHED_BETA,
    SDX_SCHED_LINEAR_QUADRATIC,
    SDX_SCHED_KL_OPTIMAL,
    SDX_SCHED_AYS_SD1,          /* ComfyUI AlignYourStepsScheduler, SD1 table  */
    SDX_SCHED_AYS_SDXL,         /*                                  SDXL table */
    SDX_SCHED_POLYEXPONENTIAL,  /* k-diffusion get_sigmas_polyexponential, rho 1 */
    SDX_SCHED_VP,               /* k-diffusion get_sigmas_vp, default betas      */
    /* few-step models; integer timesteps, sigma(t) of each (README: "Few-step models") */
    SDX_SCHED_SD_TURBO,         /* ComfyUI SDTurboScheduler: 999, 899, ..., at most 10 */
    SDX_SCHED_TRAILING,         /* diffusers timestep_spacing "trailing" (SDXL-Lightning,
                                   Hyper-SD): round(1000 - k * 1000 / steps) - 1, half to even */
    SDX_SCHED_LCM,              /* diffusers LCMScheduler / TCDScheduler default timesteps
                                   (sd.cpp's "lcm"): 4 steps are 999, 759, 499, 259 */
    SDX_SCHED_COUNT
} sdx_scheduler;

/* "ays" (or "align_your_steps") needs the model family: there is an SD1
 * and an SDXL table, and none for SD 2.x (ComfyUI has none either), so it
 * is not a name here (the error says which to use); generation takes it. */
SDX_API sdx_result sdx_scheduler_from_name(sdx_ctx *ctx, const char *name, sdx_scheduler *out);
SDX_API const char *sdx_scheduler_name(sdx_scheduler s);
/* AUTOMATIC1111's "Schedule type" label ("Karras", "Align Your Steps";
 * "Automatic" for normal, its default), as the PNG parameters write it;
 * NULL where A1111 has none. */
SDX_API const char *sdx_scheduler_a1111_name(sdx_scheduler s);

/* ComfyUI calculate_sigmas(model_sampling, name, steps): a new owned 1-D
 * F32 tensor, normally steps + 1 values ending in 0. The length is in
 * out->shape[0]: ddim_uniform and beta may return more or fewer. AYS
 * does not read `ms` (its levels are fixed). kl_optimal with 1 step returns
 * [sigma_max, 0] where ComfyUI divides by zero. */
SDX_API sdx_result sdx_calculate_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                                 int steps, sdx_tensor *out);

/* ---- samplers -------------------------------------------------------- */
typedef enum sdx_sampler {
    SDX_SAMPLER_EULER = 0,
    SDX_SAMPLER_EULER_ANCESTRAL,
    SDX_SAMPLER_HEUN,
    SDX_SAMPLER_HEUNPP2,
    SDX_SAMPLER_DPM_2,
    SDX_SAMPLER_DPM_2_ANCESTRAL,
    SDX_SAMPLER_LMS,
    SDX_SAMPLER_DPMPP_2S_ANCESTRAL,
    SDX_SAMPLER_DPMPP_SDE,
    SDX_SAMPLER_DPMPP_2M,
    SDX_SAMPLER_DPMPP_2M_SDE,
    SDX_SAMPLER_DPMPP_2M_SDE_HEUN,
    SDX_SAMPLER_DPMPP_3M_SDE,
    SDX_SAMPLER_DDPM,
    SDX_SAMPLER_LCM,
    SDX_SAMPLER_IPNDM,
    SDX_SAMPLER_IPNDM_V,
    SDX_SAMPLER_DEIS,
    SDX_SAMPLER_RES_MULTISTEP,
    SDX_SAMPLER_RES_MULTISTEP_ANCESTRAL,
    SDX_SAMPLER_GRADIENT_ESTIMATION,
    SDX_SAMPLER_ER_SDE,
    SDX_SAMPLER_UNI_PC,
    SDX_SAMPLER_UNI_PC_BH2,
    SDX_SAMPLER_DDIM,
    SDX_SAMPLER_TCD,            /* diffusers TCDScheduler; gamma is sdx_sample_desc.eta */
    SDX_SAMPLER_COUNT
} sdx_sampler;

/* ComfyUI names, plus stable-diffusion.cpp's names where the algorithm is
 * the same (euler_a, dpm2, dpm++2s_a, dpm++2m; euler, heun, ipndm,
 * ipndm_v, lcm coincide; tcd, which ComfyUI lacks, is sd.cpp's). An
 * unknown name fails with the list of valid names. */
SDX_API sdx_result sdx_sampler_from_name(sdx_ctx *ctx, const char *name, sdx_sampler *out);
SDX_API const char *sdx_sampler_name(sdx_sampler s);
/* AUTOMATIC1111's name ("Euler a", "DPM++ 2M"), as the PNG parameters
 * write it; NULL where A1111 has none. */
SDX_API const char *sdx_sampler_a1111_name(sdx_sampler s);
/* 1 if the sampler draws per-step noise (it then needs a noise callback). */
SDX_API int         sdx_sampler_is_stochastic(sdx_sampler s);

/* KSampler(steps, scheduler, sampler, denoise).sigmas: for denoise < 1,
 * total = int(steps / denoise) and the last steps + 1 sigmas of that
 * schedule (trailing and lcm too: 4 steps at 0.5 are the tail of 8);
 * dpm_2, dpm_2_ancestral, uni_pc and uni_pc_bh2 compute one step more and
 * drop the penultimate sigma. Schedulers that ComfyUI has as nodes of
 * their own follow the node instead, with no penultimate drop: AYS
 * (AlignYourStepsScheduler) takes round(steps * denoise) steps from the
 * tail of the steps-step table; sd_turbo (SDTurboScheduler) starts at
 * timestep 999 - 100 * (10 - int(10 * denoise)) and runs at most to 99
 * (denoise 0.5: at most 499, 399, 299, 199, 99). denoise must be in
 * (0, 1]. */
SDX_API sdx_result sdx_sampler_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
                               sdx_sampler sampler, int steps, double denoise, sdx_tensor *out);

/* Explicit timesteps (DMD2's 999, 749, 499, 249; diffusers' timesteps=):
 * sigma(t) of each, then 0, as a new owned 1-D F32 tensor of n + 1
 * values. Timesteps lie in 0..999 and never increase. diffusers starts
 * such a schedule from unit-variance VP noise, x = noise * sqrt(1 +
 * sigma0^2), also below sigma_max, where sdx_start_latent (ComfyUI's rule)
 * takes noise * sigma0. */
SDX_API sdx_result sdx_sigmas_from_timesteps(sdx_ctx *ctx, const sdx_model_sampling *ms, const int *timesteps, int n,
                                             sdx_tensor *out);

/* Start latent (ComfyUI EPS.noise_scaling): x = latent + noise * s with
 * s = sqrt(1 + sigma0^2) when sigma0 is sigma_max (relative 1e-5, or
 * larger: txt2img), else s = sigma0 (img2img tails, ddim_uniform).
 * latent may be NULL (zeros). x may alias latent or noise. */
SDX_API int  sdx_is_max_denoise(const sdx_model_sampling *ms, float sigma0);
SDX_API void sdx_start_latent(const sdx_model_sampling *ms, float sigma0, const float *latent,
                              const float *noise, float *x, size_t n);
/* img2img noise addition at an explicit level: x = latent + noise * sigma. */
SDX_API void sdx_add_noise(float sigma, const float *latent, const float *noise, float *x, size_t n);

/* Callbacks. Each returns SDX_OK (0) or a negative sdx_result, which the
 * sampler returns unchanged (set the context message yourself).
 *   denoise: the model; writes denoised[0..n) for x[0..n) at sigma. Must
 *            be a pure function of (x, sigma).
 *   noise:   the next per-step draw, n standard normal floats (ComfyUI:
 *            torch.randn on a CPU generator seeded seed + 1). Stock
 *            ComfyUI draws dpmpp_sde, dpmpp_2m_sde(_heun) and
 *            dpmpp_3m_sde noise from a Brownian tree instead, so those
 *            four match it only when it is given this noise sampler.
 *   step:    progress after each step's first model call; any non-zero
 *            return cancels with SDX_ERR_CANCELLED. x is the latent at the
 *            start of step i; for uni_pc it is UniPC's internal state after
 *            step i (x / sqrt(1 + sigma^2)), as ComfyUI reports it. */
typedef int (*sdx_denoise_fn)(void *user, const float *x, float sigma, float *denoised);
typedef int (*sdx_noise_fn)(void *user, float *out);
typedef int (*sdx_step_fn)(void *user, int step, int total, const float *x, const float *denoised);

typedef struct sdx_sample_desc {
    sdx_sampler    sampler;
    const float   *sigmas;      /* n_sigmas finite values >= 0, never increasing, only the
                                   last may be 0; n_sigmas - 1 steps (1 value: no step) */
    int            n_sigmas;
    size_t         n;           /* floats in the latent */
    sdx_denoise_fn denoise;     /* required */
    void          *denoise_user;
    sdx_noise_fn   noise;       /* required by stochastic samplers */
    void          *noise_user;
    sdx_step_fn    step;        /* optional */
    void          *step_user;
    int            use_eta;     /* 0: the sampler's default eta (tcd: gamma 0.3, diffusers') */
    float          eta;         /* with use_eta: tcd's gamma in [0, 1] (0: no per-step noise;
                                   1: denoise fully, then re-noise); other samplers ignore it */
} sdx_sample_desc;

/* Runs the sampler in place: x holds the start latent (see
 * sdx_start_latent) and receives the result. */
SDX_API sdx_result sdx_sample(sdx_ctx *ctx, const sdx_sample_desc *desc, float *x);

#ifdef __cplusplus
}
#endif
