/* Suite "stages": the staged API (encode a prompt, sample step by step,
 * decode, encode) gives what sdx_generate gives, and contexts are
 * independent of each other across threads. */
#include "test.h"

static void st_params(sdx_gen_params *p, const char *sampler) {
    memset(p, 0, sizeof *p);
    p->prompt = "a lighthouse at dusk, (waves:1.3)";
    p->negative_prompt = "blurry";
    p->width = 64;
    p->height = 48;
    p->steps = 4;
    p->seed = 7;
    p->sampler = sampler;
    p->rng = SDX_RNG_CPU;
}

typedef struct { int calls, last_step; } st_progress;
static int st_on_progress(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    st_progress *pr = (st_progress *)user;
    (void)image; (void)steps; (void)latent;
    pr->calls++;
    pr->last_step = step;
    return 0;
}

/* Stepping one model call at a time, for first-order, second-order,
 * multistep and stochastic samplers, ends on sdx_generate's latent and
 * image, bit for bit, and reports each sampler step once. */
static int stepped_sampling_equals_one_generation(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    static const char *const samplers[] = { "euler", "euler_ancestral", "heun", "dpmpp_2m", "dpmpp_sde", "uni_pc", "lms" };
    static const int calls_per_step[] = { 1, 1, 2, 1, 2, 1, 1 };
    for (int k = 0; k < SDX__ARRAY_LEN(samplers); k++) {
        sdx_gen_params p;
        sdx_gen_result ref;
        sdx_cond *cond;
        sdx_sampling *s;
        sdx_image img;
        st_progress pr = { 0, 0 };
        int step_calls = 0, total = 0;
        size_t n;
        st_params(&p, samplers[k]);
        T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s: %s", samplers[k], sdx_last_error(ctx));
        p.progress = st_on_progress;
        p.progress_user = &pr;
        T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_sampling_begin(m, &p, cond, 0, &s) == SDX_OK, "%s", sdx_last_error(ctx));
        while (!sdx_sampling_done(s)) {
            const sdx_tensor *x0;
            T_CHECK(sdx_sampling_step(s) == SDX_OK, "%s step %d: %s", samplers[k], step_calls, sdx_last_error(ctx));
            step_calls++;
            x0 = sdx_sampling_denoised(s);
            for (int64_t i = 0; i < sdx_tensor_numel(x0); i++)
                T_CHECK(isfinite(((const float *)x0->data)[i]), "%s: the preview is not finite", samplers[k]);
            T_CHECK(step_calls <= 64, "%s: never done", samplers[k]);
        }
        n = (size_t)sdx_tensor_numel(sdx_sampling_latent(s));
        T_CHECK(sdx_sampling_steps(s, &total) == p.steps && total == p.steps, "%s: %d steps", samplers[k], total);
        T_NOTE("%s: %d model evaluations in %d calls, %d progress reports", samplers[k], step_calls, step_calls, pr.calls);
        T_CHECK(pr.calls == p.steps && pr.last_step == p.steps, "%s: %d progress reports for %d steps", samplers[k], pr.calls, p.steps);
        /* the last sampler step of heun-like samplers makes one model call (sigma 0 ends with Euler) */
        T_CHECK(step_calls <= p.steps * calls_per_step[k] && step_calls >= p.steps, "%s: %d model calls", samplers[k], step_calls);
        T_CHECK(!memcmp(sdx_sampling_latent(s)->data, ref.latents[0].data, n * sizeof(float)), "%s: stepped latent differs", samplers[k]);
        T_CHECK(sdx_decode_latent(m, sdx_sampling_latent(s), &p, &img) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(img.width == 64 && img.height == 48 && !memcmp(img.data, ref.images[0].data, 64 * 48 * 3), "%s: image differs", samplers[k]);
        sdx_image_free(ctx, &img);
        sdx_sampling_free(s);
        sdx_cond_free(cond);
        sdx_gen_result_free(ctx, &ref);
    }
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* One conditioning serves a whole batch: image i samples seed + i. */
static int one_conditioning_serves_every_image_of_a_batch(void) {
    T_NEED_MODEL(ctx, m, "sdxl");
    sdx_gen_params p;
    sdx_gen_result ref;
    sdx_cond *cond;
    st_params(&p, "euler_ancestral");
    p.batch_count = 3;
    p.steps = 2;
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 3; i++) {
        sdx_sampling *s;
        T_CHECK(sdx_sampling_begin(m, &p, cond, i, &s) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_sampling_seed(s) == p.seed + i && ref.seeds[i] == p.seed + i, "seed of image %d", i);
        T_CHECK(sdx_sampling_finish(s) == SDX_OK && sdx_sampling_done(s), "%s", sdx_last_error(ctx));
        T_CHECK(!memcmp(sdx_sampling_latent(s)->data, ref.latents[i].data, sizeof(float) * 4 * 8 * 6), "image %d differs", i);
        sdx_sampling_free(s);
    }
    sdx_cond_free(cond);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The image encoder gives a latent the decoder takes; mismatches between
 * conditioning and parameters are refused with a reason. */
static int encode_decode_and_mismatches(void) {
    T_NEED_MODEL(ctx, m, "sdxl");
    static uint8_t px[64 * 48 * 3];
    sdx_gen_params p;
    sdx_image in, out;
    sdx_tensor latent, bad;
    sdx_cond *cond;
    sdx_sampling *s;
    for (int i = 0; i < 64 * 48 * 3; i++) px[i] = (uint8_t)(i * 31);
    in.width = 64; in.height = 48; in.channels = 3; in.data = px;
    T_CHECK(sdx_encode_image(m, &in, NULL, &latent) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(latent.ndim == 4 && latent.shape[1] == 4 && latent.shape[2] == 6 && latent.shape[3] == 8, "latent shape");
    T_CHECK(sdx_decode_latent(m, &latent, NULL, &out) == SDX_OK && out.width == 64 && out.height == 48, "%s", sdx_last_error(ctx));
    sdx_image_free(ctx, &out);
    bad = latent;
    bad.shape[1] = 3;
    T_CHECK(sdx_decode_latent(m, &bad, NULL, &out) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "expected host F32 [1, 4, h, w]"),
            "bad latent: %s", sdx_last_error(ctx));
    sdx_tensor_free(ctx, &latent);
    st_params(&p, "euler");
    T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
    p.width = 72;       /* SDXL conditions on the size */
    T_CHECK(sdx_sampling_begin(m, &p, cond, 0, &s) == SDX_ERR_INVALID_ARG && !s, "size mismatch accepted");
    p.width = 64;
    p.cfg_scale = 1.0f; /* cfg 1 has no negative row */
    T_CHECK(sdx_sampling_begin(m, &p, cond, 0, &s) == SDX_ERR_INVALID_ARG && !s, "cfg mismatch accepted");
    p.cfg_scale = 0;
    T_CHECK(sdx_sampling_begin(m, &p, cond, 1, &s) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "image 1 of a batch of 1"),
            "index: %s", sdx_last_error(ctx));
    sdx_cond_free(cond);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Two contexts, each with its own model, generate at the same time in two
 * threads and get exactly what they get one after the other. */
typedef struct { const char *area; sdx_gen_result res; sdx_ctx *ctx; int rc; } st_job;

/* runs on the library's own threads (POSIX or Win32) */
static void st_job_run(void *arg) {
    st_job *j = (st_job *)arg;
    sdx_model *m;
    sdx_gen_params p;
    sdx_desc d;
    memset(&d, 0, sizeof d);
    d.n_threads = 1;
    j->ctx = sdx_create(&d);
    j->rc = SDX_ERR_NOMEM;
    if (!j->ctx) return;
    if (!(m = t_model(j->ctx, j->area))) { j->rc = SDX_ERR_MODEL; return; }
    st_params(&p, "dpmpp_2m");
    j->rc = sdx_generate(m, &p, &j->res);
    sdx_model_free(m);
}

static int separate_contexts_generate_in_parallel_threads(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    st_job seq[2] = { { "sd1", { 0, 0, 0, 0 }, 0, 0 }, { "sdxl", { 0, 0, 0, 0 }, 0, 0 } };
    st_job par[2] = { { "sd1", { 0, 0, 0, 0 }, 0, 0 }, { "sdxl", { 0, 0, 0, 0 }, 0, 0 } };
    sdx__thread th[2];
    (void)v;
    for (int i = 0; i < 2; i++) st_job_run(&seq[i]);
    for (int i = 0; i < 2; i++) T_CHECK(sdx__thread_start(&th[i], st_job_run, &par[i]), "thread start");
    for (int i = 0; i < 2; i++) sdx__thread_join(&th[i]);
    for (int i = 0; i < 2; i++) {
        T_CHECK(seq[i].rc == SDX_OK && par[i].rc == SDX_OK, "%s: %s / %s", seq[i].area, sdx_last_error(seq[i].ctx), sdx_last_error(par[i].ctx));
        T_CHECK(!memcmp(seq[i].res.latents[0].data, par[i].res.latents[0].data, sizeof(float) * 4 * 8 * 6) &&
                !memcmp(seq[i].res.images[0].data, par[i].res.images[0].data, 64 * 48 * 3), "%s: parallel run differs", seq[i].area);
        sdx_gen_result_free(seq[i].ctx, &seq[i].res);
        sdx_gen_result_free(par[i].ctx, &par[i].res);
        sdx_destroy(seq[i].ctx);
        sdx_destroy(par[i].ctx);
    }
    return T_PASS;
}

/* Resident set size in KiB (Linux), 0 where unknown. */
static long st_rss_kib(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return resident * 4;
}

/* A long-lived host: one context, two models, many generations and stepped
 * sessions; memory settles after the first few and stays (leaks are
 * valgrind's job: make valgrind). */
static int many_generations_on_several_models_do_not_grow(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_model *a = t_model(ctx, "sd1"), *b = t_model(ctx, "sdxl");
    long settled = 0, now = 0;
    (void)v;
    T_CHECK(a && b, "%s", sdx_last_error(ctx));
    T_SKIP_IF(!st_rss_kib(), "no /proc/self/statm on this system");
    for (int i = 0; i < 20; i++) {
        sdx_gen_params p;
        sdx_gen_result res;
        st_params(&p, i % 2 ? "dpmpp_2m" : "euler_ancestral");
        p.steps = 2;
        p.seed = i;
        if (i % 3 == 2) {       /* a stepped session now and then */
            sdx_cond *cond;
            sdx_sampling *s;
            T_CHECK(sdx_encode_prompt(b, &p, &cond) == SDX_OK && sdx_sampling_begin(b, &p, cond, 0, &s) == SDX_OK,
                    "%s", sdx_last_error(ctx));
            while (!sdx_sampling_done(s)) T_CHECK(sdx_sampling_step(s) == SDX_OK, "%s", sdx_last_error(ctx));
            sdx_sampling_free(s);
            sdx_cond_free(cond);
        } else {
            T_CHECK(sdx_generate(i % 2 ? a : b, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
            sdx_gen_result_free(ctx, &res);
        }
        if (i == 4) settled = st_rss_kib();
    }
    now = st_rss_kib();
    T_NOTE("RSS after 5 generations %ld KiB, after 20 %ld KiB", settled, now);
    T_CHECK(now - settled < 4096, "RSS grew by %ld KiB over 15 generations", now - settled);
    sdx_model_free(a);
    sdx_model_free(b);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case stages_cases[] = {
    { "stepped_sampling_equals_one_generation", stepped_sampling_equals_one_generation },
    { "one_conditioning_serves_every_image_of_a_batch", one_conditioning_serves_every_image_of_a_batch },
    { "encode_decode_and_mismatches", encode_decode_and_mismatches },
    { "separate_contexts_generate_in_parallel_threads", separate_contexts_generate_in_parallel_threads },
    { "many_generations_on_several_models_do_not_grow", many_generations_on_several_models_do_not_grow },
    { 0, 0 }
};
SDX_TEST_SUITE(stages, stages_cases)
