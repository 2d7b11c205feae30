/* Suite "sampling": model sampling, schedulers and samplers against
 * ComfyUI's golden data (shared/golden/schedules, shared/golden/samplers)
 * and against straightforward double-precision references. */
#include "test.h"

/* ---- helpers ---------------------------------------------------------- */

/* Relative error |a - b| / |b| (absolute when b is 0). */
static double samp_rel(double a, double b) {
    double d = fabs(a - b);
    return b != 0.0 ? d / fabs(b) : d;
}

/* Reads tensor `name` as an owned f32 tensor; 0 when absent. */
static int samp_read(sdx_ctx *ctx, const sdx_st *st, const char *name, sdx_tensor *out) {
    memset(out, 0, sizeof *out);
    if (!sdx_st_find(st, name)) return 0;
    return sdx_st_read_f32(ctx, st, name, out) == SDX_OK;
}

static int64_t samp_numel(const sdx_tensor *t) { return t->data ? sdx_tensor_numel(t) : 0; }

/* ---- model sampling ------------------------------------------------------ */

static int model_sampling_matches_training_table(void) {
    T_NEED_SHARED(path, "golden/schedules/schedules.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx_tensor sig, logs, ts;
    sdx_model_sampling ms;
    double max_rel = 0, max_rel_log = 0;
    int bad_t = -1;
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(samp_read(ctx, st, "train.sigmas_f32", &sig) && samp_read(ctx, st, "train.log_sigmas_f32", &logs) &&
            samp_read(ctx, st, "train.timestep_of_sigmas", &ts), "train.* tensors missing");
    sdx_model_sampling_init(&ms);
    for (int t = 0; t < SDX_TRAIN_STEPS; t++) {
        double r = samp_rel(ms.sigmas[t], ((float *)sig.data)[t]);
        double rl = samp_rel(ms.log_sigmas[t], ((float *)logs.data)[t]);
        if (r > max_rel) max_rel = r;
        if (rl > max_rel_log) max_rel_log = rl;
        if (bad_t < 0 && sdx_sigma_to_timestep(&ms, ms.sigmas[t]) != (int)((float *)ts.data)[t]) bad_t = t;
    }
    T_NOTE("training sigmas max rel err %.3g, log_sigmas %.3g", max_rel, max_rel_log);
    T_CHECK(max_rel <= 1.2e-7 && max_rel_log <= 1.2e-7, "sigmas rel %.3g, log_sigmas rel %.3g (want <= 1 ulp)",
            max_rel, max_rel_log);
    T_CHECK(bad_t < 0, "timestep(sigmas[%d]) != %d", bad_t, bad_t);
    T_CHECK(ms.sigma_min == ms.sigmas[0] && ms.sigma_max == ms.sigmas[999], "sigma_min/max are not the table ends");
    sdx_tensor_free(ctx, &sig); sdx_tensor_free(ctx, &logs); sdx_tensor_free(ctx, &ts);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

static int timestep_is_nearest_in_log_space(void) {
    sdx_model_sampling ms;
    sdx_model_sampling_init(&ms);
    t_seed(11);
    for (int i = 0; i < 2000; i++) {
        double ls = log(ms.sigma_min) + t_uniform() * (log(ms.sigma_max) - log(ms.sigma_min)) * 1.2 - 0.1;
        float sigma = (float)exp(ls);
        int t = sdx_sigma_to_timestep(&ms, sigma), best = 0;
        double best_d = 1e300;
        for (int j = 0; j < SDX_TRAIN_STEPS; j++) {
            double d = fabs((double)logf(sigma) - ms.log_sigmas[j]);
            if (d < best_d) { best_d = d; best = j; }
        }
        T_CHECK(t == best, "sigma %.9g: timestep %d, nearest %d", (double)sigma, t, best);
    }
    T_CHECK(sdx_sigma_to_timestep(&ms, 0.0f) == 0, "sigma 0 must map to timestep 0 (argmin of all-inf)");
    return T_PASS;
}

static int sigma_of_fractional_timestep_interpolates_log_linearly(void) {
    sdx_model_sampling ms;
    double max_rel = 0;
    sdx_model_sampling_init(&ms);
    t_seed(12);
    for (int i = 0; i < 1000; i++) {
        double t = t_uniform() * 999.0;
        int lo = (int)floor(t);
        int hi = (int)ceil(t);
        double w = t - lo;
        double ref = exp((1 - w) * ms.log_sigmas[lo] + w * ms.log_sigmas[hi]);
        double r = samp_rel(sdx_timestep_to_sigma(&ms, (float)t), ref);
        if (r > max_rel) max_rel = r;
    }
    T_NOTE("sigma(t) max rel err vs double %.3g", max_rel);
    T_CHECK(max_rel < 2e-5, "sigma(t) rel err %.3g", max_rel);
    T_CHECK(sdx_timestep_to_sigma(&ms, -5.0f) == expf(ms.log_sigmas[0]), "t < 0 must clamp to 0");
    T_CHECK(sdx_timestep_to_sigma(&ms, 5000.0f) == expf(ms.log_sigmas[999]), "t > 999 must clamp to 999");
    return T_PASS;
}

static int eps_and_v_predictions_give_denoised(void) {
    enum { N = 257 };
    float x[N], out[N], den[N];
    double max_eps = 0, max_v = 0;
    t_seed(13);
    t_fill_normal(x, N, 3.0);
    t_fill_normal(out, N, 1.0);
    for (int k = 0; k < 4; k++) {
        float sigma = (float)(0.03 + 14.0 * t_uniform());
        double s = sigma;
        sdx_model_denoised(NULL, SDX_PRED_EPS, sigma, x, out, den, N);
        for (int i = 0; i < N; i++) max_eps = fmax(max_eps, fabs(den[i] - (x[i] - s * out[i])));
        sdx_model_denoised(NULL, SDX_PRED_V, sigma, x, out, den, N);
        for (int i = 0; i < N; i++) {
            double ref = x[i] / (s * s + 1) - out[i] * s / sqrt(s * s + 1);
            max_v = fmax(max_v, fabs(den[i] - ref));
        }
        T_CHECK(fabs(sdx_model_c_in(sigma) - 1 / sqrt(s * s + 1)) < 1e-7, "c_in(%g)", s);
    }
    T_NOTE("eps max abs err %.3g, v max abs err %.3g", max_eps, max_v);
    T_CHECK(max_eps < 1e-5 && max_v < 1e-5, "eps %.3g v %.3g", max_eps, max_v);
    return T_PASS;
}

/* ---- schedulers ------------------------------------------------------------ */

/* Regularized incomplete beta inverse against closed forms:
 * beta(0.5, 0.5) is the arcsine law, beta(2, 2) has CDF 3x^2 - 2x^3. */
static int beta_ppf_inverts_closed_form_cdfs(void) {
    double max_err = 0;
    t_seed(14);
    for (int i = 0; i < 200; i++) {
        double p = t_uniform();
        double s = sin(1.5707963267948966 * p);
        double arcsine = s * s;
        double x2 = sdx__beta_ppf(p, 2.0, 2.0);
        max_err = fmax(max_err, fabs(sdx__beta_ppf(p, 0.5, 0.5) - arcsine));
        max_err = fmax(max_err, fabs(3 * x2 * x2 - 2 * x2 * x2 * x2 - p));
        max_err = fmax(max_err, fabs(sdx__beta_inc(0.6, 0.6, sdx__beta_ppf(p, 0.6, 0.6)) - p));
    }
    T_NOTE("beta ppf max err %.3g", max_err);
    T_CHECK(max_err < 1e-12, "beta ppf err %.3g", max_err);
    T_CHECK(sdx__beta_ppf(0.5, 0.6, 0.6) == 0.5 || fabs(sdx__beta_ppf(0.5, 0.6, 0.6) - 0.5) < 1e-15,
            "symmetric beta median must be 0.5");
    T_CHECK(sdx__beta_ppf(1.0, 0.6, 0.6) == 1.0 && sdx__beta_ppf(0.0, 0.6, 0.6) == 0.0, "ppf ends");
    return T_PASS;
}

/* Parses "<prefix>.<name>.n<N>[.d<D>].sigmas". */
static int samp_parse_key(const char *key, char *prefix, char *name, int *steps, double *denoise) {
    char buf[128];
    char *parts[6];
    int np = 0;
    if (strlen(key) >= sizeof buf) return 0;
    strcpy(buf, key);
    for (char *p = strtok(buf, "."); p && np < 6; p = strtok(NULL, ".")) parts[np++] = p;
    *denoise = 1.0;
    if (np == 4 && !strcmp(parts[3], "sigmas") && parts[2][0] == 'n') {
        *steps = atoi(parts[2] + 1);
    } else if (np == 6 && !strcmp(parts[5], "sigmas") && parts[2][0] == 'n' && parts[3][0] == 'd') {
        /* "d0.30" was split at its decimal point */
        char num[32];
        snprintf(num, sizeof num, "%s.%s", parts[3] + 1, parts[4]);
        *steps = atoi(parts[2] + 1);
        *denoise = atof(num);
    } else {
        return 0;
    }
    strcpy(prefix, parts[0]);
    strcpy(name, parts[1]);
    return 1;
}

static int samp_scheduler_for(const char *prefix, const char *name, sdx_scheduler *s) {
    if (!strcmp(prefix, "ays")) {
        if (!strcmp(name, "SD1")) { *s = SDX_SCHED_AYS_SD1; return 1; }
        if (!strcmp(name, "SDXL")) { *s = SDX_SCHED_AYS_SDXL; return 1; }
        return 0;
    }
    return sdx_scheduler_from_name(NULL, name, s) == SDX_OK;
}

typedef struct samp_sched_stats { double max_rel[4]; int count[4], ts_tie; } samp_sched_stats;

/* 1 if log(sigma) is within 1e-6 (relative) of the midpoint of two
 * adjacent training log-sigmas. */
static int samp_near_log_midpoint(const sdx_model_sampling *ms, float sigma) {
    double ls = log((double)sigma);
    for (int t = 0; t + 1 < SDX_TRAIN_STEPS; t++) {
        double mid = 0.5 * ((double)ms->log_sigmas[t] + ms->log_sigmas[t + 1]);
        if (fabs(ls - mid) <= 1e-6 * fabs(mid) + 1e-7) return 1;
    }
    return 0;
}

/* Checks one stored schedule; returns 0 and fills t_msg on failure. */
static int samp_check_schedule(sdx_ctx *ctx, const sdx_st *st, const sdx_model_sampling *ms, const char *key,
                               samp_sched_stats *stats) {
    char prefix[32], name[64], ts_key[160];
    int steps, family, ok = 1;
    double denoise;
    sdx_scheduler sched = SDX_SCHED_NORMAL;
    sdx_tensor ref, got, ts;
    if (!samp_parse_key(key, prefix, name, &steps, &denoise)) return 1;   /* not a schedule */
    family = !strcmp(prefix, "sched") ? 0 : !strcmp(prefix, "img2img") ? 1 : !strcmp(prefix, "ays") ? 2 : 3;
    if (!samp_scheduler_for(prefix, name, &sched)) {
        snprintf(t_msg, sizeof t_msg, "%s: no scheduler for '%s'", key, name);
        return 0;
    }
    if (!samp_read(ctx, st, key, &ref)) { snprintf(t_msg, sizeof t_msg, "%s unreadable", key); return 0; }
    if (family == 1) ok = sdx_sampler_sigmas(ctx, ms, sched, SDX_SAMPLER_EULER, steps, denoise, &got) == SDX_OK;
    else ok = sdx_calculate_sigmas(ctx, ms, sched, steps, &got) == SDX_OK;
    if (!ok) {
        snprintf(t_msg, sizeof t_msg, "%s: %s", key, sdx_last_error(ctx));
        sdx_tensor_free(ctx, &ref);
        return 0;
    }
    if (got.shape[0] != ref.shape[0]) {
        snprintf(t_msg, sizeof t_msg, "%s: %lld sigmas, expected %lld", key, (long long)got.shape[0],
                 (long long)ref.shape[0]);
        ok = 0;
    }
    snprintf(ts_key, sizeof ts_key, "%.*s.timesteps", (int)(strlen(key) - strlen(".sigmas")), key);
    samp_read(ctx, st, ts_key, &ts);
    for (int64_t i = 0; ok && i < ref.shape[0]; i++) {
        float g = ((float *)got.data)[i], r = ((float *)ref.data)[i];
        double e = samp_rel(g, r);
        if (e > stats->max_rel[family]) stats->max_rel[family] = e;
        if (e > 1e-6) {
            snprintf(t_msg, sizeof t_msg, "%s[%lld] = %.9g, expected %.9g (rel %.3g)", key, (long long)i, (double)g,
                     (double)r, e);
            ok = 0;
        }
        if (ok && ts.data && r > 0.0f) {
            int want = (int)((float *)ts.data)[i];
            if (sdx_sigma_to_timestep(ms, r) != want) {
                snprintf(t_msg, sizeof t_msg, "%s: timestep(stored sigma[%lld]) = %d, expected %d", key,
                         (long long)i, sdx_sigma_to_timestep(ms, r), want);
                ok = 0;
            } else if (sdx_sigma_to_timestep(ms, g) != want) {
                /* Our sigma is within an ulp of the stored one; the README
                 * exempts sigmas at a log-space midpoint, where that ulp
                 * decides the argmin. Anything else is a failure. */
                if (samp_near_log_midpoint(ms, g)) stats->ts_tie++;
                else {
                    snprintf(t_msg, sizeof t_msg, "%s: timestep[%lld] = %d, expected %d", key, (long long)i,
                             sdx_sigma_to_timestep(ms, g), want);
                    ok = 0;
                }
            }
        }
    }
    stats->count[family]++;
    sdx_tensor_free(ctx, &ref);
    sdx_tensor_free(ctx, &got);
    sdx_tensor_free(ctx, &ts);
    return ok;
}

static int schedules_match_golden(void) {
    T_NEED_SHARED(path, "golden/schedules/schedules.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx_model_sampling ms;
    samp_sched_stats stats;
    memset(&stats, 0, sizeof stats);
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < sdx_st_count(st); i++) {
        const char *key = sdx_st_get(st, i)->name;
        if (!samp_check_schedule(ctx, st, &ms, key, &stats)) {
            sdx_st_close(st);
            sdx_destroy(ctx);
            return T_FAIL;
        }
    }
    T_NOTE("sched: %d schedules, max rel %.3g", stats.count[0], stats.max_rel[0]);
    T_NOTE("img2img: %d schedules, max rel %.3g", stats.count[1], stats.max_rel[1]);
    T_NOTE("ays: %d schedules, max rel %.3g", stats.count[2], stats.max_rel[2]);
    T_NOTE("kdiff: %d schedules, max rel %.3g", stats.count[3], stats.max_rel[3]);
    T_NOTE("timesteps differing at exact log-midpoint ties (README exemption): %d", stats.ts_tie);
    T_CHECK(stats.count[0] > 0 && stats.count[1] > 0 && stats.count[2] > 0 && stats.count[3] > 0,
            "some schedule family is missing from the file");
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ddim_uniform(15) has 16 sigmas plus the final 0; beta(1000) drops
 * repeated timesteps. The length is the tensor's, not steps + 1. */
static int schedule_length_can_differ_from_steps(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor s;
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx_calculate_sigmas(ctx, &ms, SDX_SCHED_DDIM_UNIFORM, 15, &s) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(s.shape[0] == 17, "ddim_uniform 15: %lld values, expected 17", (long long)s.shape[0]);
    T_CHECK(((float *)s.data)[16] == 0.0f && ((float *)s.data)[15] == ms.sigmas[1],
            "ddim_uniform must end at sigmas[1], 0");
    sdx_tensor_free(ctx, &s);
    T_CHECK(sdx_calculate_sigmas(ctx, &ms, SDX_SCHED_BETA, 1000, &s) == SDX_OK, "%s", sdx_last_error(ctx));
    T_NOTE("beta 1000 steps: %lld sigmas", (long long)s.shape[0]);
    T_CHECK(s.shape[0] < 1001, "beta 1000: %lld values, expected fewer than 1001", (long long)s.shape[0]);
    for (int64_t i = 0; i + 1 < s.shape[0]; i++)
        T_CHECK(((float *)s.data)[i] > ((float *)s.data)[i + 1], "beta schedule not strictly decreasing at %lld",
                (long long)i);
    sdx_tensor_free(ctx, &s);
    sdx_destroy(ctx);
    return T_PASS;
}

static int discard_penultimate_sigma_samplers(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor plain, dpm2, longer;
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_KARRAS, SDX_SAMPLER_EULER, 10, 1.0, &plain) == SDX_OK, "euler");
    T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_KARRAS, SDX_SAMPLER_DPM_2, 10, 1.0, &dpm2) == SDX_OK, "dpm_2");
    T_CHECK(sdx_calculate_sigmas(ctx, &ms, SDX_SCHED_KARRAS, 11, &longer) == SDX_OK, "karras 11");
    T_CHECK(plain.shape[0] == 11 && dpm2.shape[0] == 11, "lengths %lld %lld", (long long)plain.shape[0],
            (long long)dpm2.shape[0]);
    for (int i = 0; i < 10; i++)
        T_CHECK(((float *)dpm2.data)[i] == ((float *)longer.data)[i], "dpm_2 sigma %d is not karras(11)[%d]", i, i);
    T_CHECK(((float *)dpm2.data)[10] == 0.0f, "dpm_2 must end in 0");
    sdx_tensor_free(ctx, &plain);
    sdx_tensor_free(ctx, &dpm2);
    sdx_tensor_free(ctx, &longer);
    sdx_destroy(ctx);
    return T_PASS;
}

static int ays_denoise_takes_rounded_tail(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor full, part;
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx_calculate_sigmas(ctx, &ms, SDX_SCHED_AYS_SDXL, 20, &full) == SDX_OK, "%s", sdx_last_error(ctx));
    /* round(20 * 0.625) = round(12.5) = 12 (half to even) */
    T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_AYS_SDXL, SDX_SAMPLER_DPM_2, 20, 0.625, &part) == SDX_OK, "%s",
            sdx_last_error(ctx));
    T_CHECK(part.shape[0] == 13, "ays tail: %lld values, expected 13", (long long)part.shape[0]);
    for (int i = 0; i < 13; i++)
        T_CHECK(((float *)part.data)[i] == ((float *)full.data)[8 + i], "ays tail value %d", i);
    sdx_tensor_free(ctx, &full);
    sdx_tensor_free(ctx, &part);
    sdx_destroy(ctx);
    return T_PASS;
}

static int scheduler_and_sampler_names(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_sampler s = SDX_SAMPLER_EULER;
    sdx_scheduler sc = SDX_SCHED_NORMAL;
    for (int i = 0; i < SDX_SAMPLER_COUNT; i++) {
        T_CHECK(sdx_sampler_from_name(ctx, sdx_sampler_name((sdx_sampler)i), &s) == SDX_OK && s == (sdx_sampler)i,
                "round trip of %s", sdx_sampler_name((sdx_sampler)i));
    }
    for (int i = 0; i < SDX_SCHED_COUNT; i++) {
        T_CHECK(sdx_scheduler_from_name(ctx, sdx_scheduler_name((sdx_scheduler)i), &sc) == SDX_OK &&
                sc == (sdx_scheduler)i, "round trip of %s", sdx_scheduler_name((sdx_scheduler)i));
    }
    T_CHECK(sdx_sampler_from_name(ctx, "euler_a", &s) == SDX_OK && s == SDX_SAMPLER_EULER_ANCESTRAL, "euler_a");
    T_CHECK(sdx_sampler_from_name(ctx, "dpm2", &s) == SDX_OK && s == SDX_SAMPLER_DPM_2, "dpm2");
    T_CHECK(sdx_sampler_from_name(ctx, "dpm++2s_a", &s) == SDX_OK && s == SDX_SAMPLER_DPMPP_2S_ANCESTRAL, "dpm++2s_a");
    T_CHECK(sdx_sampler_from_name(ctx, "dpm++2m", &s) == SDX_OK && s == SDX_SAMPLER_DPMPP_2M, "dpm++2m");
    T_CHECK(sdx_sampler_from_name(ctx, "dpm++2mv2", &s) == SDX_ERR_INVALID_ARG, "dpm++2mv2 has no equivalent");
    T_CHECK(strstr(sdx_last_error(ctx), "dpm++2mv2") && strstr(sdx_last_error(ctx), "uni_pc_bh2") &&
            strstr(sdx_last_error(ctx), "euler_a"), "error must name the input and list all names: %s",
            sdx_last_error(ctx));
    T_CHECK(sdx_scheduler_from_name(ctx, "ays", &sc) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "SD 2"),
            "'ays' must explain the family choice: %s", sdx_last_error(ctx));
    T_CHECK(sdx_scheduler_from_name(ctx, "nope", &sc) == SDX_ERR_INVALID_ARG &&
            strstr(sdx_last_error(ctx), "kl_optimal"),
            "unknown scheduler must list names: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* The PNG parameters name samplers and schedulers as A1111 does, for the
 * names and aliases users give; names A1111 lacks are written as given. */
static int a1111_names_follow_the_registries(void) {
    static const char *const sampler[][2] = {
        { "euler", "Euler" }, { "euler_a", "Euler a" }, { "euler_ancestral", "Euler a" }, { "heun", "Heun" },
        { "dpm_2", "DPM2" }, { "dpm2", "DPM2" }, { "dpm_2_ancestral", "DPM2 a" }, { "lms", "LMS" },
        { "dpmpp_2s_ancestral", "DPM++ 2S a" }, { "dpm++2s_a", "DPM++ 2S a" }, { "dpmpp_sde", "DPM++ SDE" },
        { "dpmpp_2m", "DPM++ 2M" }, { "dpm++2m", "DPM++ 2M" }, { "dpmpp_2m_sde", "DPM++ 2M SDE" },
        { "dpmpp_2m_sde_heun", "DPM++ 2M SDE Heun" }, { "dpmpp_3m_sde", "DPM++ 3M SDE" }, { "ddim", "DDIM" },
        { "lcm", "LCM" }, { "uni_pc", "UniPC" }, { "deis", "DEIS" }, { "ipndm", "iPNDM" },
        { "heunpp2", "heunpp2" }, { "uni_pc_bh2", "uni_pc_bh2" }, { "no_such", "no_such" },
    };
    static const char *const sched[][2] = {
        { "normal", "Automatic" }, { "karras", "Karras" }, { "exponential", "Exponential" },
        { "sgm_uniform", "SGM Uniform" }, { "simple", "Simple" }, { "ddim_uniform", "DDIM" }, { "beta", "Beta" },
        { "kl_optimal", "KL Optimal" }, { "linear_quadratic", "Linear Quadratic" }, { "ays", "Align Your Steps" },
        { "ays_sdxl", "Align Your Steps" }, { "vp", "vp" }, { "no_such", "no_such" },
    };
    for (size_t i = 0; i < sizeof sampler / sizeof sampler[0]; i++)
        T_CHECK(!strcmp(sdx__sampler_a1111_name(sampler[i][0]), sampler[i][1]), "sampler %s: '%s', want '%s'",
                sampler[i][0], sdx__sampler_a1111_name(sampler[i][0]), sampler[i][1]);
    for (size_t i = 0; i < sizeof sched / sizeof sched[0]; i++)
        T_CHECK(!strcmp(sdx__scheduler_a1111_name(sched[i][0]), sched[i][1]), "scheduler %s: '%s', want '%s'",
                sched[i][0], sdx__scheduler_a1111_name(sched[i][0]), sched[i][1]);
    return T_PASS;
}

/* ---- start latent ------------------------------------------------------ */

static int start_latent_uses_max_denoise_only_at_sigma_max(void) {
    enum { N = 64 };
    sdx_model_sampling ms;
    float noise[N], lat[N], x[N];
    sdx_model_sampling_init(&ms);
    t_seed(15);
    t_fill_normal(noise, N, 1.0);
    t_fill_normal(lat, N, 0.5);
    sdx_start_latent(&ms, ms.sigma_max, NULL, noise, x, N);
    for (int i = 0; i < N; i++)
        T_CHECK(fabs(x[i] - noise[i] * sqrt(1.0 + (double)ms.sigma_max * ms.sigma_max)) < 1e-5, "txt2img x[%d]", i);
    /* 14.614640 (normal's first sigma, one ulp below) is still "max" */
    T_CHECK(sdx_is_max_denoise(&ms, nextafterf(ms.sigma_max, 0.0f)), "sigma_max - 1 ulp");
    T_CHECK(!sdx_is_max_denoise(&ms, 8.39f), "8.39 is not sigma_max");
    sdx_start_latent(&ms, 3.0f, lat, noise, x, N);
    for (int i = 0; i < N; i++) T_CHECK(fabs(x[i] - (lat[i] + noise[i] * 3.0)) < 1e-6, "img2img x[%d]", i);
    return T_PASS;
}

/* ---- sampler fixture: ComfyUI golden analytic denoiser ---------------------- */

/* Posterior mean for a per-element prior 0.5 N(-1, 0.09) + 0.5 N(1, 0.09)
 * (the samplers README's closed-form model). */
typedef struct samp_fixture {
    size_t n;
    int calls, max_calls;
    float *calls_sigma, *calls_x, *calls_den;   /* recorded, max_calls entries */
    const float *draws;
    int n_draws, used_draws;
    int steps_seen, cb_cap;
    float *cb_x, *cb_den;
    int fail_at_call, cancel_at_step;
} samp_fixture;

static int samp_denoise(void *user, const float *x, float sigma, float *den) {
    samp_fixture *f = (samp_fixture *)user;
    float s2 = sigma * sigma, v = s2 + 0.09f;
    if (f->fail_at_call >= 0 && f->calls == f->fail_at_call) return SDX_ERR_MODEL;
    for (size_t i = 0; i < f->n; i++) den[i] = (0.09f / v) * x[i] + (s2 / v) * tanhf(x[i] / v);
    if (f->calls < f->max_calls) {
        f->calls_sigma[f->calls] = sigma;
        memcpy(f->calls_x + (size_t)f->calls * f->n, x, f->n * sizeof(float));
        memcpy(f->calls_den + (size_t)f->calls * f->n, den, f->n * sizeof(float));
    }
    f->calls++;
    return SDX_OK;
}

static int samp_noise(void *user, float *out) {
    samp_fixture *f = (samp_fixture *)user;
    if (f->used_draws >= f->n_draws) return SDX_ERR_INVALID_ARG;
    memcpy(out, f->draws + (size_t)f->used_draws * f->n, f->n * sizeof(float));
    f->used_draws++;
    return SDX_OK;
}

static int samp_step(void *user, int step, int total, const float *x, const float *den) {
    samp_fixture *f = (samp_fixture *)user;
    (void)total;
    if (step == f->steps_seen && step < f->cb_cap) {
        memcpy(f->cb_x + (size_t)step * f->n, x, f->n * sizeof(float));
        memcpy(f->cb_den + (size_t)step * f->n, den, f->n * sizeof(float));
    }
    f->steps_seen++;
    return f->cancel_at_step >= 0 && step == f->cancel_at_step;
}

static int samp_fixture_init(samp_fixture *f, size_t n, int max_calls, int cb_cap) {
    memset(f, 0, sizeof *f);
    f->n = n;
    f->max_calls = max_calls;
    f->cb_cap = cb_cap;
    f->fail_at_call = -1;
    f->cancel_at_step = -1;
    f->calls_sigma = (float *)calloc((size_t)max_calls, sizeof(float));
    f->calls_x = (float *)calloc((size_t)max_calls * n, sizeof(float));
    f->calls_den = (float *)calloc((size_t)max_calls * n, sizeof(float));
    f->cb_x = (float *)calloc((size_t)cb_cap * n, sizeof(float));
    f->cb_den = (float *)calloc((size_t)cb_cap * n, sizeof(float));
    return f->calls_sigma && f->calls_x && f->calls_den && f->cb_x && f->cb_den;
}

static void samp_fixture_free(samp_fixture *f) {
    free(f->calls_sigma); free(f->calls_x); free(f->calls_den); free(f->cb_x); free(f->cb_den);
}

static sdx_sample_desc samp_desc(sdx_sampler s, const float *sigmas, int n_sigmas, samp_fixture *f) {
    sdx_sample_desc d;
    memset(&d, 0, sizeof d);
    d.sampler = s;
    d.sigmas = sigmas;
    d.n_sigmas = n_sigmas;
    d.n = f->n;
    d.denoise = samp_denoise; d.denoise_user = f;
    d.noise = samp_noise; d.noise_user = f;
    d.step = samp_step; d.step_user = f;
    return d;
}

/* ---- golden trajectories ------------------------------------------------ */

typedef struct samp_golden {
    sdx_tensor sigmas, noise, x_init, cb_x, cb_den, x_final, calls_sigma, calls_x, calls_den, draws;
} samp_golden;

static void samp_golden_free(sdx_ctx *ctx, samp_golden *g) {
    sdx_tensor *all[] = { &g->sigmas, &g->noise, &g->x_init, &g->cb_x, &g->cb_den, &g->x_final,
                          &g->calls_sigma, &g->calls_x, &g->calls_den, &g->draws };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sdx_tensor_free(ctx, all[i]);
}

/* The fewstep runs (diffusers') store no callback; they make one model
 * call per step, so the callback must report each call's x and denoised. */
static int samp_golden_load(sdx_ctx *ctx, const sdx_st *st, const char *area, samp_golden *g) {
    int diffusers = !strcmp(area, "fewstep");
    memset(g, 0, sizeof *g);
    samp_read(ctx, st, "noise_draws", &g->draws);   /* deterministic samplers have none */
    return samp_read(ctx, st, "sigmas", &g->sigmas) && samp_read(ctx, st, "noise", &g->noise) &&
           samp_read(ctx, st, "x_init", &g->x_init) && samp_read(ctx, st, diffusers ? "calls_x" : "cb_x", &g->cb_x) &&
           samp_read(ctx, st, diffusers ? "calls_denoised" : "cb_denoised", &g->cb_den) &&
           samp_read(ctx, st, "x_final", &g->x_final) &&
           samp_read(ctx, st, "calls_sigma", &g->calls_sigma) && samp_read(ctx, st, "calls_x", &g->calls_x) &&
           samp_read(ctx, st, "calls_denoised", &g->calls_den);
}

/* Errors of one run, all as max abs differences (sigma: max rel). */
typedef struct samp_errs { double x_final, cb_x, cb_den, calls_x, calls_den, calls_sigma, sigmas, x_init; } samp_errs;

typedef struct samp_run_info {
    const char *area, *file, *sampler;
    const char *scheduler;        /* NULL: the stored sigmas are used unchecked, */
    int timesteps[16], n_timesteps;   /* unless they come from explicit timesteps */
    const char *callback_x;
    int use_eta;
    double eta;
    int steps, n_calls, n_draws;
    double row_tol;               /* > 0: each stored row within row_tol * max(1, max|row|)
                                     (the fewstep README's measure); 0: the samplers' */
} samp_run_info;

/* Our schedule must reproduce the stored sigmas. */
static int samp_check_sigmas(sdx_ctx *ctx, const sdx_model_sampling *ms, const samp_run_info *run,
                             const samp_golden *g, samp_errs *e) {
    sdx_scheduler sched = SDX_SCHED_NORMAL;
    sdx_sampler sampler = SDX_SAMPLER_EULER;
    sdx_tensor sig;
    int ok = 1;
    if (run->n_timesteps ? sdx_sigmas_from_timesteps(ctx, ms, run->timesteps, run->n_timesteps, &sig) != SDX_OK
                         : sdx_scheduler_from_name(ctx, run->scheduler, &sched) != SDX_OK ||
                           sdx_sampler_from_name(ctx, run->sampler, &sampler) != SDX_OK ||
                           sdx_sampler_sigmas(ctx, ms, sched, sampler, run->steps, 1.0, &sig) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "%s: %s", run->file, sdx_last_error(ctx));
        return 0;
    }
    if (sig.shape[0] != g->sigmas.shape[0]) {
        snprintf(t_msg, sizeof t_msg, "%s: %lld sigmas, stored %lld", run->file, (long long)sig.shape[0],
                 (long long)g->sigmas.shape[0]);
        ok = 0;
    }
    for (int64_t i = 0; ok && i < sig.shape[0]; i++)
        e->sigmas = fmax(e->sigmas, samp_rel(((float *)sig.data)[i], ((float *)g->sigmas.data)[i]));
    sdx_tensor_free(ctx, &sig);
    return ok;
}

/* ... and our start-latent rule the stored x_init. */
static int samp_check_inputs(sdx_ctx *ctx, const samp_run_info *run, const samp_golden *g, samp_errs *e) {
    sdx_model_sampling ms;
    size_t n = (size_t)samp_numel(&g->noise);
    float *x = (float *)malloc(n * sizeof(float));
    int ok = x != NULL;
    sdx_model_sampling_init(&ms);
    if (!ok) snprintf(t_msg, sizeof t_msg, "out of memory");
    if (ok && (run->scheduler || run->n_timesteps)) ok = samp_check_sigmas(ctx, &ms, run, g, e);
    if (ok) {
        sdx_start_latent(&ms, ((float *)g->sigmas.data)[0], NULL, (const float *)g->noise.data, x, n);
        e->x_init = t_max_abs_f32(x, (const float *)g->x_init.data, n);
    }
    free(x);
    return ok;
}

/* Max abs difference of the first `count` rows of two [rows, n] arrays. */
static double samp_rows_err(const float *a, const float *b, int count, size_t n) {
    return count > 0 ? t_max_abs_f32(a, b, (size_t)count * n) : 0.0;
}

static int samp_check_trajectory(sdx_ctx *ctx, const samp_run_info *run, const samp_golden *g, samp_errs *e) {
    sdx_sampler sampler = SDX_SAMPLER_EULER;
    samp_fixture f;
    sdx_sample_desc d;
    size_t n = (size_t)samp_numel(&g->x_init);
    int n_sig = (int)g->sigmas.shape[0], steps = n_sig - 1, rc, ok = 1;
    float *x = (float *)malloc(n * sizeof(float));
    if (!x || !samp_fixture_init(&f, n, run->n_calls + 8, steps)) {
        snprintf(t_msg, sizeof t_msg, "out of memory");
        free(x);
        return 0;
    }
    sdx_sampler_from_name(ctx, run->sampler, &sampler);
    memcpy(x, g->x_init.data, n * sizeof(float));
    f.draws = (const float *)g->draws.data;
    f.n_draws = (int)(samp_numel(&g->draws) / (int64_t)n);
    d = samp_desc(sampler, (const float *)g->sigmas.data, n_sig, &f);
    d.use_eta = run->use_eta;
    d.eta = (float)run->eta;
    rc = sdx_sample(ctx, &d, x);
    if (rc != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "%s: sdx_sample: %s", run->file, sdx_last_error(ctx));
        ok = 0;
    } else if (f.calls != run->n_calls || f.used_draws != run->n_draws || f.steps_seen != steps) {
        snprintf(t_msg, sizeof t_msg, "%s: %d model calls (want %d), %d noise draws (want %d), %d callbacks (want %d)",
                 run->file, f.calls, run->n_calls, f.used_draws, run->n_draws, f.steps_seen, steps);
        ok = 0;
    } else {
        /* ipndm/ipndm_v/deis: ComfyUI reports the initial x at every step;
         * we report the current x, which is calls_x[i] (one call per step). */
        const float *want_cb_x = strcmp(run->callback_x, "initial_x_always") ? (const float *)g->cb_x.data
                                                                            : (const float *)g->calls_x.data;
        double (*rows)(const float *, const float *, int, size_t) = run->row_tol > 0 ? t_rows_err_scaled : samp_rows_err;
        e->x_final = rows(x, (const float *)g->x_final.data, 1, n);
        e->cb_x = rows(f.cb_x, want_cb_x, steps, n);
        e->cb_den = rows(f.cb_den, (const float *)g->cb_den.data, steps, n);
        e->calls_x = rows(f.calls_x, (const float *)g->calls_x.data, f.calls, n);
        e->calls_den = rows(f.calls_den, (const float *)g->calls_den.data, f.calls, n);
        for (int i = 0; i < f.calls; i++)
            e->calls_sigma = fmax(e->calls_sigma, samp_rel(f.calls_sigma[i], ((float *)g->calls_sigma.data)[i]));
    }
    samp_fixture_free(&f);
    free(x);
    return ok;
}

static int samp_run_from_json(const sdx__json *r, samp_run_info *run) {
    const sdx__json *file = sdx__json_get(r, "file"), *sampler = sdx__json_get(r, "sampler");
    const sdx__json *sched = sdx__json_get(r, "scheduler"), *steps = sdx__json_get(r, "steps");
    const sdx__json *calls = sdx__json_get(r, "n_model_calls"), *draws = sdx__json_get(r, "n_noise_draws");
    const sdx__json *cbx = sdx__json_get(r, "callback_x");
    if (!file || !sampler || !sched || !steps || !calls || !draws || !cbx || file->type != SDX__JSON_STRING ||
        sampler->type != SDX__JSON_STRING || sched->type != SDX__JSON_STRING || cbx->type != SDX__JSON_STRING)
        return 0;
    memset(run, 0, sizeof *run);
    run->area = "samplers";
    run->file = file->str;
    run->sampler = sampler->str;
    run->scheduler = sched->str;
    run->callback_x = cbx->str;
    run->steps = (int)steps->num;
    run->n_calls = (int)calls->num;
    run->n_draws = (int)draws->num;
    return 1;
}

/* Per-sampler maxima, for the report. */
typedef struct samp_table { char name[32]; samp_errs e; int runs; } samp_table;

static void samp_table_add(samp_table *tab, int *count, const char *name, const samp_errs *e) {
    int i;
    for (i = 0; i < *count && strcmp(tab[i].name, name); i++) {}
    if (i == *count) {
        memset(&tab[i], 0, sizeof tab[i]);
        snprintf(tab[i].name, sizeof tab[i].name, "%s", name);
        (*count)++;
    }
    tab[i].runs++;
    tab[i].e.x_final = fmax(tab[i].e.x_final, e->x_final);
    tab[i].e.cb_x = fmax(tab[i].e.cb_x, e->cb_x);
    tab[i].e.cb_den = fmax(tab[i].e.cb_den, e->cb_den);
    tab[i].e.calls_x = fmax(tab[i].e.calls_x, e->calls_x);
    tab[i].e.calls_den = fmax(tab[i].e.calls_den, e->calls_den);
    tab[i].e.calls_sigma = fmax(tab[i].e.calls_sigma, e->calls_sigma);
    tab[i].e.sigmas = fmax(tab[i].e.sigmas, e->sigmas);
    tab[i].e.x_init = fmax(tab[i].e.x_init, e->x_init);
}

/* Opens golden/<area>/<file>; NULL with t_msg when it cannot. */
static sdx_st *samp_open(sdx_ctx *ctx, const char *area, const char *file) {
    char rel[512];
    const char *path;
    sdx_st *st = NULL;
    snprintf(rel, sizeof rel, "golden/%s/%s", area, file);
    path = t_shared(rel);
    if (!path || sdx_st_open(ctx, path, &st) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "%s: cannot open: %s", rel, sdx_last_error(ctx));
        return NULL;
    }
    return st;
}

/* Sigmas and x_init are checked at their own tolerances, trajectories at tol. */
static int samp_errs_within(const char *file, const samp_errs *e, double tol) {
    if (e->sigmas <= 1e-6 && e->x_init <= 1e-5 && e->x_final <= tol && e->cb_x <= tol && e->cb_den <= tol &&
        e->calls_x <= tol && e->calls_den <= tol && e->calls_sigma <= 1e-6)
        return 1;
    snprintf(t_msg, sizeof t_msg, "%s: sigmas rel %.3g, x_init %.3g, x_final %.3g, cb_x %.3g, cb_denoised %.3g, "
             "calls_x %.3g, calls_denoised %.3g, calls_sigma rel %.3g (tol %.0e)", file, e->sigmas, e->x_init,
             e->x_final, e->cb_x, e->cb_den, e->calls_x, e->calls_den, e->calls_sigma, tol);
    return 0;
}

static int samp_check_run(sdx_ctx *ctx, const samp_run_info *run, samp_table *tab, int *n_tab) {
    sdx_st *st = samp_open(ctx, run->area, run->file);
    samp_golden g;
    samp_errs e;
    double tol = run->row_tol > 0 ? run->row_tol : strncmp(run->sampler, "uni_pc", 6) ? 1e-4 : 3e-4;
    int ok;
    memset(&e, 0, sizeof e);
    if (!st) return 0;
    ok = samp_golden_load(ctx, st, run->area, &g);
    if (!ok) snprintf(t_msg, sizeof t_msg, "%s: missing tensors", run->file);
    ok = ok && samp_check_inputs(ctx, run, &g, &e) && samp_check_trajectory(ctx, run, &g, &e) &&
         samp_errs_within(run->file, &e, tol);
    if (ok) samp_table_add(tab, n_tab, run->sampler, &e);
    samp_golden_free(ctx, &g);
    sdx_st_close(st);
    return ok;
}

static int samplers_match_golden_trajectories(void) {
    T_NEED_SHARED(index_path, "golden/samplers/index.json");
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    const sdx__json *runs;
    samp_table tab[64];
    int n_tab = 0, n_runs = 0, ok = 1;
    T_CHECK(sdx__json_parse_file(ctx, index_path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    runs = sdx__json_get(doc.root, "runs");
    T_CHECK(runs && runs->type == SDX__JSON_ARRAY, "index.json: no runs array");
    for (const sdx__json *r = runs->child; r && ok; r = r->next) {
        samp_run_info run;
        if (!samp_run_from_json(r, &run)) { snprintf(t_msg, sizeof t_msg, "index.json: malformed run"); ok = 0; break; }
        ok = samp_check_run(ctx, &run, tab, &n_tab);
        n_runs++;
    }
    for (int i = 0; i < n_tab; i++)
        T_NOTE("%-24s %d runs: x_final %.2e cb_x %.2e cb_den %.2e calls_x %.2e calls_sigma(rel) %.2e sigmas(rel) %.2e "
               "x_init %.2e", tab[i].name, tab[i].runs, tab[i].e.x_final, tab[i].e.cb_x, tab[i].e.cb_den,
               tab[i].e.calls_x, tab[i].e.calls_sigma, tab[i].e.sigmas, tab[i].e.x_init);
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    if (!ok) return T_FAIL;
    /* every sampler but tcd, which ComfyUI lacks (golden/fewstep has diffusers' runs of it) */
    T_CHECK(n_tab == SDX_SAMPLER_COUNT - 1, "golden covers %d samplers, expected %d", n_tab, SDX_SAMPLER_COUNT - 1);
    T_NOTE("%d golden runs checked", n_runs);
    return T_PASS;
}

/* A tcd or lcm case of golden/fewstep (diffusers' TCDScheduler on its
 * default timesteps, our "lcm" scheduler; ComfyUI's sample_lcm on DMD2's
 * explicit timesteps), checked at the README's tolerance: 1 if `area` is
 * the case's, 0 for another area, -1 when malformed. */
static int samp_fewstep_run_from_json(const sdx__json *c, const char *want, samp_run_info *run) {
    const sdx__json *area = sdx__json_get(c, "area"), *file = sdx__json_get(c, "file");
    const sdx__json *eta = sdx__json_get(c, "eta"), *steps = sdx__json_get(c, "steps"), *ts = sdx__json_get(c, "timesteps");
    const sdx__json *calls = sdx__json_get(c, "n_model_calls"), *draws = sdx__json_get(c, "n_noise_draws");
    int tcd = !strcmp(want, "tcd");
    if (!area || area->type != SDX__JSON_STRING) return -1;
    if (strcmp(area->str, want)) return 0;
    if (!file || file->type != SDX__JSON_STRING || (tcd && !eta) || !steps || !calls || !draws ||
        !ts || ts->type != SDX__JSON_ARRAY)
        return -1;
    memset(run, 0, sizeof *run);
    run->area = "fewstep";
    run->file = file->str;
    run->sampler = want;
    run->callback_x = "current";
    run->row_tol = 1e-5;
    run->steps = (int)steps->num;
    run->n_calls = (int)calls->num;
    run->n_draws = (int)draws->num;
    if (tcd) {
        run->scheduler = "lcm";
        run->use_eta = 1;
        run->eta = eta->num;
        return 1;
    }
    for (const sdx__json *t = ts->child; t; t = t->next) {
        if (run->n_timesteps == SDX__ARRAY_LEN(run->timesteps)) return -1;
        run->timesteps[run->n_timesteps++] = (int)t->num;
    }
    return 1;
}

/* Every case of one area of golden/fewstep/index.json. */
static int samp_fewstep_area_matches(const char *area) {
    T_NEED_SHARED(index_path, "golden/fewstep/index.json");
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    const sdx__json *cases;
    samp_table tab[1];
    int n_tab = 0, ok = 1;
    T_CHECK(sdx__json_parse_file(ctx, index_path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    cases = sdx__json_get(doc.root, "cases");
    T_CHECK(cases && cases->type == SDX__JSON_ARRAY, "index.json: no cases array");
    for (const sdx__json *c = cases->child; c && ok; c = c->next) {
        samp_run_info run;
        int is_area = samp_fewstep_run_from_json(c, area, &run);
        if (is_area < 0) { snprintf(t_msg, sizeof t_msg, "index.json: malformed case"); ok = 0; }
        if (is_area > 0) ok = samp_check_run(ctx, &run, tab, &n_tab);
    }
    if (ok && n_tab)
        T_NOTE("%s %d cases (per row, over max(1, max|row|)): x_final %.2e cb_x %.2e cb_den %.2e calls_x %.2e calls_den "
               "%.2e; calls_sigma(rel) %.2e sigmas(rel) %.2e x_init %.2e", area, tab[0].runs, tab[0].e.x_final,
               tab[0].e.cb_x, tab[0].e.cb_den, tab[0].e.calls_x, tab[0].e.calls_den, tab[0].e.calls_sigma,
               tab[0].e.sigmas, tab[0].e.x_init);
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    if (!ok) return T_FAIL;
    T_CHECK(n_tab == 1, "index.json lists no %s case", area);
    return T_PASS;
}

static int tcd_matches_diffusers_golden(void) { return samp_fewstep_area_matches("tcd"); }
static int lcm_at_explicit_timesteps_matches_golden(void) { return samp_fewstep_area_matches("lcm"); }

/* DMD2's own code (diffusers' LCMScheduler, its own table) starts from
 * unit-variance VP noise, noise * sqrt(1 + sigma0^2) here, also at t = 399
 * where ComfyUI takes noise * sigma0: sdx's start for explicit timesteps,
 * which with diffusers' draws reproduces its run. */
static int lcm_from_diffusers_start_matches_dmd2s_own_code(void) {
    static const char *const files[] = { "lcm__t399__seed1.safetensors", "lcm__t999-749-499-249__seed1.safetensors" };
    static const int t399[] = { 399 }, t999[] = { 999, 749, 499, 249 };
    T_NEED_SHARED(index_path, "golden/fewstep/index.json");
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    (void)index_path;
    sdx_model_sampling_init(&ms);
    for (int k = 0; k < 2; k++) {
        sdx_st *st = samp_open(ctx, "fewstep", files[k]);
        sdx_tensor noise, draws, want, sig;
        samp_fixture f;
        sdx_sample_desc d;
        size_t n;
        float *x;
        double err;
        if (!st) return T_FAIL;   /* t_msg says why */
        T_CHECK(samp_read(ctx, st, "diffusers.noise", &noise) && samp_read(ctx, st, "diffusers.x_final", &want), "%s: tensors", files[k]);
        samp_read(ctx, st, "diffusers.noise_draws", &draws);
        T_CHECK(sdx_sigmas_from_timesteps(ctx, &ms, k ? t999 : t399, k ? 4 : 1, &sig) == SDX_OK, "%s", sdx_last_error(ctx));
        n = (size_t)samp_numel(&noise);
        x = (float *)malloc(n * sizeof(float));
        T_CHECK(x && samp_fixture_init(&f, n, 8, 8), "out of memory");
        for (size_t i = 0; i < n; i++) {
            float s0 = ((float *)sig.data)[0];
            x[i] = ((float *)noise.data)[i] * sqrtf(1.0f + s0 * s0);
        }
        f.draws = (const float *)draws.data;
        f.n_draws = (int)(samp_numel(&draws) / (int64_t)n);
        d = samp_desc(SDX_SAMPLER_LCM, (const float *)sig.data, (int)sig.shape[0], &f);
        T_CHECK(sdx_sample(ctx, &d, x) == SDX_OK, "%s", sdx_last_error(ctx));
        err = t_rows_err_scaled(x, (const float *)want.data, 1, n);
        T_NOTE("%s: x_final vs diffusers' LCMScheduler %.2e (README: <= 1.9e-6)", files[k], err);
        T_CHECK(err <= 1e-5, "%s: x_final differs from diffusers' by %.3g", files[k], err);
        free(x);
        samp_fixture_free(&f);
        sdx_tensor_free(ctx, &noise); sdx_tensor_free(ctx, &draws); sdx_tensor_free(ctx, &want); sdx_tensor_free(ctx, &sig);
        sdx_st_close(st);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- sampler interface behaviour ------------------------------------------- */

static int samp_small_setup(sdx_model_sampling *ms, sdx_ctx *ctx, sdx_tensor *sig, float *x, size_t n) {
    float noise[64];
    sdx_model_sampling_init(ms);
    if (sdx_calculate_sigmas(ctx, ms, SDX_SCHED_KARRAS, 6, sig) != SDX_OK) return 0;
    t_fill_normal(noise, n, 1.0);
    sdx_start_latent(ms, ((float *)sig->data)[0], NULL, noise, x, n);
    return 1;
}

/* Without use_eta tcd runs at diffusers' default gamma 0.3; a gamma
 * outside [0, 1] (a timestep outside the table) fails before any call. */
static int tcd_eta_defaults_to_0_3_and_stays_in_0_1(void) {
    static const float bad[] = { -0.1f, 1.5f, NAN };
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor sig;
    samp_fixture f;
    sdx_sample_desc d;
    float x[64], x_default[64], noise[64 * 8];
    t_seed(17);
    T_CHECK(samp_small_setup(&ms, ctx, &sig, x, 64) && samp_fixture_init(&f, 64, 16, 8), "setup");
    t_fill_normal(noise, 64 * 8, 1.0);
    memcpy(x_default, x, sizeof x);
    for (int use_eta = 1; use_eta >= 0; use_eta--) {
        f.draws = noise;
        f.n_draws = 8;
        f.used_draws = 0;
        d = samp_desc(SDX_SAMPLER_TCD, (const float *)sig.data, (int)sig.shape[0], &f);
        d.use_eta = use_eta;
        d.eta = 0.3f;
        T_CHECK(sdx_sample(ctx, &d, use_eta ? x : x_default) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(f.used_draws == (int)sig.shape[0] - 2, "%d draws for %d steps", f.used_draws, (int)sig.shape[0] - 1);
    }
    T_CHECK(!memcmp(x, x_default, sizeof x), "use_eta 0 does not give gamma 0.3's result");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.calls = 0;
        d.use_eta = 1;
        d.eta = bad[i];
        T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "eta") && f.calls == 0,
                "eta %g: '%s', %d model calls", (double)bad[i], sdx_last_error(ctx), f.calls);
    }
    samp_fixture_free(&f);
    sdx_tensor_free(ctx, &sig);
    sdx_destroy(ctx);
    return T_PASS;
}

static int step_callback_cancels(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor sig;
    samp_fixture f;
    sdx_sample_desc d;
    float x[64];
    t_seed(16);
    T_CHECK(samp_small_setup(&ms, ctx, &sig, x, 64) && samp_fixture_init(&f, 64, 64, 16), "setup");
    f.cancel_at_step = 2;
    d = samp_desc(SDX_SAMPLER_DPMPP_2M, (const float *)sig.data, (int)sig.shape[0], &f);
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_CANCELLED, "expected SDX_ERR_CANCELLED");
    T_CHECK(f.steps_seen == 3 && f.calls == 3, "stopped after %d steps / %d calls, want 3 / 3", f.steps_seen, f.calls);
    T_CHECK(strstr(sdx_last_error(ctx), "cancel") != NULL, "message: %s", sdx_last_error(ctx));
    samp_fixture_free(&f);
    sdx_tensor_free(ctx, &sig);
    sdx_destroy(ctx);
    return T_PASS;
}

static int denoiser_error_propagates_from_every_sampler(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor sig;
    float x[64];
    t_seed(17);
    T_CHECK(samp_small_setup(&ms, ctx, &sig, x, 64), "setup");
    for (int s = 0; s < SDX_SAMPLER_COUNT; s++) {
        samp_fixture f;
        sdx_sample_desc d;
        float noise[64 * 16];
        t_fill_normal(noise, 64 * 16, 1.0);
        T_CHECK(samp_fixture_init(&f, 64, 64, 16), "alloc");
        f.draws = noise;
        f.n_draws = 16;
        f.fail_at_call = 2;
        d = samp_desc((sdx_sampler)s, (const float *)sig.data, (int)sig.shape[0], &f);
        T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_MODEL, "%s: model error not propagated",
                sdx_sampler_name((sdx_sampler)s));
        samp_fixture_free(&f);
    }
    sdx_tensor_free(ctx, &sig);
    sdx_destroy(ctx);
    return T_PASS;
}

static int stochastic_sampler_requires_noise_callback(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor sig;
    samp_fixture f;
    sdx_sample_desc d;
    float x[64];
    t_seed(18);
    T_CHECK(samp_small_setup(&ms, ctx, &sig, x, 64) && samp_fixture_init(&f, 64, 64, 16), "setup");
    d = samp_desc(SDX_SAMPLER_EULER_ANCESTRAL, (const float *)sig.data, (int)sig.shape[0], &f);
    d.noise = NULL;
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "noise"),
            "missing noise callback: %s", sdx_last_error(ctx));
    d = samp_desc(SDX_SAMPLER_EULER, (const float *)sig.data, (int)sig.shape[0], &f);
    d.noise = NULL;
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_OK, "euler needs no noise: %s", sdx_last_error(ctx));
    samp_fixture_free(&f);
    sdx_tensor_free(ctx, &sig);
    sdx_destroy(ctx);
    return T_PASS;
}

/* sdx_sample rejects schedules no sampler can step through (NaN, Inf,
 * negative, 0 before the end, increasing) and missing inputs, before any
 * model call and naming the offending sigma; equal neighbours and a
 * single sigma (no step) are accepted. */
static int sample_rejects_invalid_sigmas_before_any_model_call(void) {
    static const struct { float sig[4]; int n; const char *msg; } bad[] = {
        { { 14.6f, NAN, 1.0f, 0.0f }, 4, "sigma 1" },
        { { 14.6f, 3.0f, INFINITY, 0.0f }, 4, "sigma 2" },
        { { 14.6f, -1.0f, 0.0f, 0.0f }, 3, "sigma 1" },
        { { 14.6f, 0.0f, 1.0f, 0.0f }, 4, "sigma 1 is 0" },
        { { 14.6f, 3.0f, 5.0f, 0.0f }, 4, "increase" },
        { { 1.0f, 2.0f, 0.0f, 0.0f }, 3, "increase" },
        { { 14.6f, 0.0f, 0.0f, 0.0f }, 0, "got 0" },
    };
    static const float equal[4] = { 14.6f, 3.0f, 3.0f, 0.0f }, single[1] = { 14.6f };
    sdx_ctx *ctx = t_ctx();
    samp_fixture f;
    sdx_sample_desc d;
    float x[16];
    t_seed(21);
    T_CHECK(samp_fixture_init(&f, 16, 8, 8), "alloc");
    for (int s = 0; s < SDX_SAMPLER_COUNT; s++) {
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            t_fill_normal(x, 16, 14.0);
            d = samp_desc((sdx_sampler)s, bad[k].sig, bad[k].n, &f);
            T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), bad[k].msg),
                    "%s, schedule %zu: '%s'", sdx_sampler_name((sdx_sampler)s), k, sdx_last_error(ctx));
            T_CHECK(f.calls == 0, "%s, schedule %zu: the model was called", sdx_sampler_name((sdx_sampler)s), k);
        }
    }
    d = samp_desc(SDX_SAMPLER_EULER, equal, 4, &f);
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_OK && f.calls == 3, "equal neighbours: %s", sdx_last_error(ctx));
    d = samp_desc(SDX_SAMPLER_EULER, single, 1, &f);
    f.calls = 0;
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_OK && f.calls == 0, "one sigma: %s", sdx_last_error(ctx));
    d = samp_desc(SDX_SAMPLER_EULER, equal, 4, &f);
    d.denoise = NULL;
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "denoise"),
            "no denoise callback: %s", sdx_last_error(ctx));
    d = samp_desc(SDX_SAMPLER_EULER, equal, 4, &f);
    T_CHECK(sdx_sample(ctx, NULL, x) == SDX_ERR_INVALID_ARG && sdx_sample(ctx, &d, NULL) == SDX_ERR_INVALID_ARG,
            "NULL desc / x accepted");
    d.n = 0;
    T_CHECK(sdx_sample(ctx, &d, x) == SDX_ERR_INVALID_ARG, "empty latent accepted");
    samp_fixture_free(&f);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The schedule functions check their pointers instead of crashing. */
static int schedule_functions_reject_null_arguments(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_tensor sig;
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx_calculate_sigmas(ctx, &ms, SDX_SCHED_KARRAS, 10, NULL) == SDX_ERR_INVALID_ARG, "NULL out");
    T_CHECK(sdx_calculate_sigmas(ctx, NULL, SDX_SCHED_KARRAS, 10, &sig) == SDX_ERR_INVALID_ARG, "NULL ms");
    T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_KARRAS, SDX_SAMPLER_EULER, 10, 1.0, NULL) == SDX_ERR_INVALID_ARG,
            "NULL out");
    T_CHECK(sdx_sampler_sigmas(ctx, NULL, SDX_SCHED_KARRAS, SDX_SAMPLER_EULER, 10, 1.0, &sig) == SDX_ERR_INVALID_ARG &&
            strstr(sdx_last_error(ctx), "NULL"), "NULL ms: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* Every sampler on a 1-step and a 2-step schedule runs and stays finite
 * (2-step heun overshoots to |x| ~ 20 on this model; that is the method). */
static int every_sampler_handles_short_schedules(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_model_sampling_init(&ms);
    t_seed(19);
    for (int steps = 1; steps <= 2; steps++) {
        for (int s = 0; s < SDX_SAMPLER_COUNT; s++) {
            sdx_tensor sig;
            samp_fixture f;
            sdx_sample_desc d;
            float x[64], noise[64 * 8];
            t_fill_normal(noise, 64 * 8, 1.0);
            T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_KARRAS, (sdx_sampler)s, steps, 1.0, &sig) == SDX_OK,
                    "sigmas: %s", sdx_last_error(ctx));
            T_CHECK(samp_fixture_init(&f, 64, 64, 16), "alloc");
            f.draws = noise + 64;
            f.n_draws = 7;
            sdx_start_latent(&ms, ((float *)sig.data)[0], NULL, noise, x, 64);
            d = samp_desc((sdx_sampler)s, (const float *)sig.data, (int)sig.shape[0], &f);
            T_CHECK(sdx_sample(ctx, &d, x) == SDX_OK, "%s %d steps: %s", sdx_sampler_name((sdx_sampler)s), steps,
                    sdx_last_error(ctx));
            for (int i = 0; i < 64; i++)
                T_CHECK(isfinite(x[i]) && fabsf(x[i]) < 1e3f, "%s %d steps: x[%d] = %g",
                        sdx_sampler_name((sdx_sampler)s), steps, i, (double)x[i]);
            samp_fixture_free(&f);
            sdx_tensor_free(ctx, &sig);
        }
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* LMS coefficients integrate the Lagrange basis exactly (vs. composite
 * Simpson with many panels in double). */
static int lms_coefficients_are_exact_integrals(void) {
    const float t[5] = { 14.6f, 7.1f, 3.3f, 1.2f, 0.4f };
    double max_err = 0;
    for (int order = 1; order <= 4; order++) {
        int i = order - 1;
        for (int j = 0; j < order; j++) {
            double a = t[i], b = t[i + 1], h = (b - a) / 2000.0, sum = 0;
            for (int q = 0; q <= 2000; q++) {
                double tau = a + q * h, prod = 1;
                for (int k = 0; k < order; k++)
                    if (k != j) prod *= (tau - t[i - k]) / ((double)t[i - j] - t[i - k]);
                sum += prod * (q == 0 || q == 2000 ? 1 : q % 2 ? 4 : 2);
            }
            max_err = fmax(max_err, fabs(sdx__lms_coeff(order, t, i, j) - sum * h / 3));
        }
    }
    T_NOTE("lms coefficient max abs err vs Simpson %.3g", max_err);
    T_CHECK(max_err < 1e-9, "lms coefficient err %.3g", max_err);
    return T_PASS;
}

/* Every allocation in the schedule and sampler paths is checked: failing
 * each one in turn reports SDX_ERR_NOMEM and leaks nothing (ASan run). */
static int sampling_allocation_failures_are_reported(void) {
    static const sdx_sampler which[] = { SDX_SAMPLER_EULER, SDX_SAMPLER_DEIS, SDX_SAMPLER_UNI_PC };
    t_allocs a = T_ALLOCS_INIT;
    sdx_ctx *ctx = t_allocs_ctx(&a);
    sdx_model_sampling ms;
    T_CHECK(ctx != NULL, "context");
    sdx_model_sampling_init(&ms);
    for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
        int completed = 0;
        for (int fail_at = 0; fail_at < 8 && !completed; fail_at++) {
            sdx_tensor sig;
            samp_fixture f;
            sdx_sample_desc d;
            float x[64];
            int rc;
            t_seed(20);
            t_fill_normal(x, 64, 14.0);
            T_CHECK(samp_fixture_init(&f, 64, 64, 16), "fixture");
            a.calls = 0; a.fail_at = fail_at + 1;
            rc = sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_NORMAL, which[w], 5, 1.0, &sig);
            if (rc == SDX_OK) {
                d = samp_desc(which[w], (const float *)sig.data, (int)sig.shape[0], &f);
                rc = sdx_sample(ctx, &d, x);
                sdx_tensor_free(ctx, &sig);
            }
            a.fail_at = 0;
            samp_fixture_free(&f);
            if (rc == SDX_OK) completed = 1;
            else T_CHECK(rc == SDX_ERR_NOMEM && strstr(sdx_last_error(ctx), "out of memory"),
                         "%s, failing allocation %d: rc %d (%s)", sdx_sampler_name(which[w]), fail_at, rc,
                         sdx_last_error(ctx));
        }
        T_CHECK(completed, "%s never completed", sdx_sampler_name(which[w]));
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case sampling_cases[] = {
    { "model_sampling_matches_training_table", model_sampling_matches_training_table },
    { "timestep_is_nearest_in_log_space", timestep_is_nearest_in_log_space },
    { "sigma_of_fractional_timestep_interpolates_log_linearly", sigma_of_fractional_timestep_interpolates_log_linearly },
    { "eps_and_v_predictions_give_denoised", eps_and_v_predictions_give_denoised },
    { "beta_ppf_inverts_closed_form_cdfs", beta_ppf_inverts_closed_form_cdfs },
    { "schedules_match_golden", schedules_match_golden },
    { "schedule_length_can_differ_from_steps", schedule_length_can_differ_from_steps },
    { "discard_penultimate_sigma_samplers", discard_penultimate_sigma_samplers },
    { "ays_denoise_takes_rounded_tail", ays_denoise_takes_rounded_tail },
    { "scheduler_and_sampler_names", scheduler_and_sampler_names },
    { "a1111_names_follow_the_registries", a1111_names_follow_the_registries },
    { "start_latent_uses_max_denoise_only_at_sigma_max", start_latent_uses_max_denoise_only_at_sigma_max },
    { "samplers_match_golden_trajectories", samplers_match_golden_trajectories },
    { "tcd_matches_diffusers_golden", tcd_matches_diffusers_golden },
    { "lcm_at_explicit_timesteps_matches_golden", lcm_at_explicit_timesteps_matches_golden },
    { "lcm_from_diffusers_start_matches_dmd2s_own_code", lcm_from_diffusers_start_matches_dmd2s_own_code },
    { "step_callback_cancels", step_callback_cancels },
    { "denoiser_error_propagates_from_every_sampler", denoiser_error_propagates_from_every_sampler },
    { "stochastic_sampler_requires_noise_callback", stochastic_sampler_requires_noise_callback },
    { "tcd_eta_defaults_to_0_3_and_stays_in_0_1", tcd_eta_defaults_to_0_3_and_stays_in_0_1 },
    { "every_sampler_handles_short_schedules", every_sampler_handles_short_schedules },
    { "sample_rejects_invalid_sigmas_before_any_model_call", sample_rejects_invalid_sigmas_before_any_model_call },
    { "schedule_functions_reject_null_arguments", schedule_functions_reject_null_arguments },
    { "lms_coefficients_are_exact_integrals", lms_coefficients_are_exact_integrals },
    { "sampling_allocation_failures_are_reported", sampling_allocation_failures_are_reported },
    { 0, 0 }
};
SDX_TEST_SUITE(sampling, sampling_cases)
