#pragma once
#include "schedules.c"
#include "sampler_run.c"
#include "singlestep.c"
#include "multistep.c"

/* ===================================================================== */
/*  Sampling: the sampler registry, sdx_sampler_sigmas and sdx_sample      */
/* ===================================================================== */

/* ---- the sampler registry --------------------------------------------- */

typedef int (*sdx__sampler_fn)(sdx__run *r, float *x);

enum {
    SDX__SAMPLER_STOCHASTIC = 1,          /* draws per-step noise: needs a noise callback */
    SDX__SAMPLER_DROPS_PENULTIMATE = 2    /* KSampler computes one step more and drops the
                                             penultimate sigma (DISCARD_PENULTIMATE_SIGMA_SAMPLERS) */
};

/* Everything known about a sampler, one row each, in enum order (the name
 * round trip test checks the order). Adding a sampler is a row here, its
 * enum value (api_sampling.h) and its function, an sdx__sampler_fn
 * (sampler_run.c says what it is given): in singlestep.c when each step
 * uses only its own model calls, in multistep.c when a step also reuses
 * earlier steps' outputs. */
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

SDX_API const char *sdx_sampler_a1111_name(sdx_sampler s) {
    return (unsigned)s < SDX_SAMPLER_COUNT ? sdx__samplers[s].a1111 : NULL;
}

static const char *sdx__sampler_name_at(int i) { return sdx__samplers[i].name; }
static const char *sdx__sampler_alias_at(int i) { return sdx__samplers[i].alias; }

SDX_API sdx_result sdx_sampler_from_name(sdx_ctx *ctx, const char *name, sdx_sampler *out) {
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

SDX_API sdx_result sdx_sampler_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, sdx_scheduler sched,
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
    if ((unsigned)sched < SDX_SCHED_COUNT && sdx__schedulers[sched].node) {
        if (steps < 1 || steps > 100000)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: steps must be in 1..100000, got %d", steps);
        if ((rc = sdx__schedulers[sched].node(ctx, ms, sched, steps, denoise, &l)) != SDX_OK) return (sdx_result)rc;
        return (sdx_result)sdx__sigma_list_to_tensor(ctx, &l, 0, l.count, out);
    }
    if (denoise <= 0.9999) {
        double t = steps / denoise;
        if (t > 100000.0)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sampler sigmas: %d steps at denoise %g is too many",
                             steps, denoise);
        total = (int)t;
    }
    if (drop_penultimate) total++;
    if ((rc = sdx__calculate_sigmas(ctx, ms, sched, total, &l)) != SDX_OK) return (sdx_result)rc;
    if (drop_penultimate && l.count >= 2) {
        l.v[l.count - 2] = l.v[l.count - 1];
        l.count--;
    }
    keep = denoise <= 0.9999 && l.count > steps + 1 ? steps + 1 : l.count;
    return (sdx_result)sdx__sigma_list_to_tensor(ctx, &l, l.count - keep, keep, out);
}

/* ---- driver ----------------------------------------------------------- */

/* What every sampler needs of its sigmas; `what` names the caller. */
static int sdx__check_sigmas(sdx_ctx *ctx, const char *what, const float *sigmas, int n) {
    for (int i = 0; i < n; i++) {
        if (!(sigmas[i] >= 0.0f) || isinf(sigmas[i]))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: sigma %d is %g (must be finite and >= 0)", what, i,
                             (double)sigmas[i]);
        if (i + 1 < n && sigmas[i] == 0.0f)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: sigma %d is 0 before the last one", what, i);
        /* equal neighbours are allowed: "simple" repeats sigmas beyond 1000 steps */
        if (i > 0 && sigmas[i] > sigmas[i - 1])
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: sigmas must not increase, but sigma %d is %g after %g", what,
                             i, (double)sigmas[i], (double)sigmas[i - 1]);
    }
    return SDX_OK;
}

static int sdx__check_sample_desc(sdx_ctx *ctx, const sdx_sample_desc *d, const float *x) {
    char what[64];
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
    snprintf(what, sizeof what, "sdx_sample %s", name);
    return sdx__check_sigmas(ctx, what, d->sigmas, d->n_sigmas);
}

SDX_API sdx_result sdx_sample(sdx_ctx *ctx, const sdx_sample_desc *desc, float *x) {
    sdx__run r;
    size_t bytes;
    float *block;
    int rc;
    if ((rc = sdx__check_sample_desc(ctx, desc, x)) != SDX_OK) return (sdx_result)rc;
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
    return (sdx_result)rc;
}
