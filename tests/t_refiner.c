/* Suite "refiner": the SDXL refiner on the tiny golden SDXL model and a
 * refiner-shaped checkpoint that tools/sdx-mkckpt writes at its scale
 * (mk_ckpt_tiny "sdxl-refiner", random weights, into the scratch
 * directory). How the references are obtained: from pieces already
 * verified, composed by hand as ComfyUI's two KSamplerAdvanced compose
 * them: the base sampled on
 * sigmas[0..k] of the schedule (sdx_generate with explicit sigmas: the
 * samplers and the schedule are ComfyUI-exact, sampling suite), then
 * sdx_sample over sigmas[k..n] from that latent as it is, with the
 * refiner's denoiser (the batched cond/uncond UNet call and CFG that the
 * SDXL pipeline goldens verify) and per-step noise from seed + 1, then the
 * base's VAE (sdx_decode_latent). The refiner's vector is built by hand
 * from its pooled text vector and SGM's embedding of each number. */
#include "test.h"
#ifndef SDX_MKCKPT_NO_MAIN
#define SDX_MKCKPT_NO_MAIN
#endif
#include "../tools/sdx-mkckpt.c"

#define RF_FILE t_tmp("sdx_t_refiner.safetensors")

/* Writes a checkpoint c to path; 0 with t_msg set when it cannot. */
static int rf_write(const char *path, const mk_ckpt *c) {
    char err[512];
    if (mk_write_ckpt(path, c, SDX_F16, 7, err, sizeof err)) return 1;
    snprintf(t_msg, sizeof t_msg, "%s", err);
    return 0;
}

/* The tiny refiner (RF_FILE), loaded; NULL with t_msg set when not. */
static sdx_model *rf_refiner(sdx_ctx *ctx) {
    mk_ckpt c;
    sdx_model *r;
    if (!mk_ckpt_tiny("sdxl-refiner", &c) || !rf_write(RF_FILE, &c)) return NULL;
    if (!(r = t_model_file(ctx, RF_FILE))) snprintf(t_msg, sizeof t_msg, "%s", sdx_last_error(ctx));
    return r;
}

/* Declares ctx, the tiny SDXL base m and the tiny refiner r. */
#define RF_NEED_MODELS(ctx, m, r) \
    T_NEED_MODEL(ctx, m, "sdxl"); \
    sdx_model *r = rf_refiner(ctx); \
    if (!r) return T_FAIL

static void rf_free(sdx_ctx *ctx, sdx_model *m, sdx_model *r) {
    sdx_model_free(r);
    sdx_model_free(m);
    sdx_destroy(ctx);
    remove(RF_FILE);
}

static void rf_params(sdx_gen_params *p, sdx_model *refiner) {
    memset(p, 0, sizeof *p);
    p->prompt = "a lighthouse at dusk";
    p->negative_prompt = "blurry";
    p->width = 64;
    p->height = 64;
    p->steps = 5;
    p->cfg_scale = 5.0f;
    p->sampler = "euler_a";
    p->seed = 21;
    p->rng = SDX_RNG_CPU;
    p->refiner = refiner;
    p->refiner_switch = 0.6f;
}

static int rf_same(const sdx_tensor *a, const float *b) {
    return a->data && b && !memcmp(a->data, b, (size_t)sdx_tensor_numel(a) * sizeof(float));
}

/* ---- the checkpoint ---------------------------------------------------- */

/* Which family a checkpoint is comes from its keys (bigG alone, as SGM's
 * first embedder), its architecture from its shapes: label_emb takes the
 * pooled vector and 5 embeddings (2560 at full size, 128 + 5 x 256 here),
 * the context is bigG's width (1280; 128), and the UNet has its own
 * levels and depths. */
static int refiner_architecture_is_read_from_keys_and_shapes(void) {
    static const int depth[4] = { 0, 1, 1, 0 }, mult[4] = { 1, 2, 4, 4 };
    RF_NEED_MODELS(ctx, m, r);
    mk_ckpt full;
    mk_list L;
    const sdx__family *f;
    T_CHECK(sdx_model_family(r) == SDX_FAMILY_SDXL_REFINER, "family %s", sdx_family_name(sdx_model_family(r)));
    T_CHECK(sdx_model_family(m) == SDX_FAMILY_SDXL, "the base is %s", sdx_family_name(sdx_model_family(m)));
    T_CHECK(r->te.n_enc == 1 && r->te.context_dim == 128 && r->te.pooled_dim == 128, "text: %d encoders, context %d, pooled %d",
            r->te.n_enc, r->te.context_dim, r->te.pooled_dim);
    T_CHECK(r->unet.adm_channels == 128 + 5 * 256 && r->unet.context_dim == 128, "UNet: label_emb %d, context %d",
            r->unet.adm_channels, r->unet.context_dim);
    T_CHECK(r->unet.model_channels == 32 && r->unet.n_levels == 4 && r->unet.head_dim == 64, "UNet: width %d, %d levels, head_dim %d",
            r->unet.model_channels, r->unet.n_levels, r->unet.head_dim);
    for (int l = 0; l < 4; l++)
        for (int b = 0; b < 2; b++) {
            const sdx__unet_block *blk = &r->unet.in[1 + 3 * l + b];
            int d = blk->n_layers > 1 && blk->layer[1].kind == SDX__UL_ATTN ? blk->layer[1].attn.depth : 0;
            T_CHECK(r->unet.channel_mult[l] == mult[l] && d == depth[l], "level %d: mult %d, depth %d", l, r->unet.channel_mult[l], d);
        }
    T_CHECK(r->unet.mid.n_layers == 3 && r->unet.mid.layer[1].attn.depth == 1, "middle block");
    /* full size: the released shapes, and the family the UNet's clues give */
    T_CHECK(mk_ckpt_preset("sdxl-refiner", 1, &full), "preset");
    memset(&L, 0, sizeof L);
    mk_ckpt_entries(&L, &full);
    T_CHECK(!L.failed, "out of memory");
    for (int i = 0; i < L.n; i++) {
        const mk_entry *e = &L.e[i];
        if (!strcmp(e->name, "model.diffusion_model.label_emb.0.0.weight"))
            T_CHECK(e->shape[0] == 1536 && e->shape[1] == 2560, "label_emb [%lld, %lld]", (long long)e->shape[0], (long long)e->shape[1]);
        if (strstr(e->name, "attn2.to_k.weight")) T_CHECK(e->shape[1] == 1280, "%s: context %lld", e->name, (long long)e->shape[1]);
    }
    free(L.e);
    f = sdx__family_of_unet(2560, 1, 1280);
    T_CHECK(f && f->id == SDX_FAMILY_SDXL_REFINER && f->head_dim == 64, "full-size refiner UNet: %s", f ? f->name : "none");
    f = sdx__family_of_unet(2816, 1, 2048);
    T_CHECK(f && f->id == SDX_FAMILY_SDXL, "full-size base UNet: %s", f ? f->name : "none");
    rf_free(ctx, m, r);
    return T_PASS;
}

/* A label_emb that does not fit the text encoders' family fails at load,
 * saying what it must take: a base's UNet behind the refiner's bigG, a
 * refiner's behind the base's two encoders. */
static int mismatched_label_emb_fails_at_load_naming_the_vector(void) {
    static const struct { const char *preset; int extra; const char *expect; } bad[2] = {
        { "sdxl-refiner", 6, "label_emb takes 1664 inputs, but SDXL refiner conditioning is the pooled text vector (128) plus 5" },
        { "sdxl", 5, "label_emb takes 1408 inputs, but SDXL conditioning is the pooled text vector (128) plus 6" },
    };
    T_NEED_SHARED(vocab, "vocab/merges.txt");
    (void)vocab;
    for (int i = 0; i < 2; i++) {
        sdx_ctx *ctx = t_ctx();
        mk_ckpt c;
        T_CHECK(mk_ckpt_tiny(bad[i].preset, &c), "preset");
        c.unet.adm_channels = c.open_width + bad[i].extra * 256;
        if (!rf_write(RF_FILE, &c)) return T_FAIL;
        T_CHECK(!t_model_file(ctx, RF_FILE), "%s with %d embeddings loaded", bad[i].preset, bad[i].extra);
        T_CHECK(strstr(sdx_last_error(ctx), bad[i].expect), "%s", sdx_last_error(ctx));
        sdx_destroy(ctx);
    }
    remove(RF_FILE);
    return T_PASS;
}

/* ---- conditioning ------------------------------------------------------ */

/* One row of the refiner's y by hand: the pooled bigG vector of `text`,
 * then SGM's embedding (cos first, 256 wide) of each number in order. */
static int rf_vector(sdx_ctx *ctx, sdx_model *r, const char *text, const float v[5], float *y) {
    sdx__chunks chunks;
    sdx_tensor context, pooled;
    int rc = sdx__prompt_chunks(ctx, r->tok, text, &chunks);
    if (rc == SDX_OK) rc = sdx__textenc_encode(ctx, &r->te, &r->arena, &chunks, 0, &context, &pooled);
    if (rc != SDX_OK) return 0;
    memcpy(y, pooled.data, 128 * sizeof(float));
    for (int i = 0; i < 5; i++) sdx__timestep_embedding(y + 128 + 256 * i, &v[i], 1, 256, 10000.0f);
    sdx_tensor_free(ctx, &context);
    sdx_tensor_free(ctx, &pooled);
    sdx__chunks_free(ctx, &chunks);
    return 1;
}

/* SGM's refiner conditioner (ComfyUI's CLIPTextEncodeSDXLRefiner): y =
 * pooled, original height, width, crop top, left, aesthetic score: 6 for
 * the prompt and 2.5 for the negative by default, the original size the
 * image's unless given. */
static int refiner_vector_is_pooled_sizes_crop_and_aesthetic_score(void) {
    RF_NEED_MODELS(ctx, m, r);
    static const struct { int orig_w, orig_h, top, left; float ascore, neg; float want[2][5]; } cases[2] = {
        { 0, 0, 0, 0, 0, 0, { { 64, 64, 0, 0, 6.0f }, { 64, 64, 0, 0, 2.5f } } },
        { 96, 80, 8, 16, 7.5f, 1.5f, { { 80, 96, 8, 16, 7.5f }, { 80, 96, 8, 16, 1.5f } } },
    };
    for (int c = 0; c < 2; c++) {
        sdx_gen_params p;
        sdx_cond *cond;
        static float y[128 + 5 * 256];
        rf_params(&p, r);
        p.orig_width = cases[c].orig_w;
        p.orig_height = cases[c].orig_h;
        p.crop_top = cases[c].top;
        p.crop_left = cases[c].left;
        p.refiner_ascore = cases[c].ascore;
        p.refiner_negative_ascore = cases[c].neg;
        T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(cond->refiner && cond->refiner->m == r && cond->refiner->y.shape[0] == 2 && cond->refiner->y.shape[1] == 1408 &&
                cond->refiner->context.shape[2] == 128, "the refiner's conditioning");
        for (int row = 0; row < 2; row++) {
            const float *got = (const float *)cond->refiner->y.data + 1408 * row;
            T_CHECK(rf_vector(ctx, r, row ? p.negative_prompt : p.prompt, cases[c].want[row], y), "%s", sdx_last_error(ctx));
            T_CHECK(!memcmp(got, y, sizeof y), "case %d row %d: the vector differs from pooled + embeddings by hand", c, row);
        }
        {   /* the aesthetic score's embedding itself, against double precision */
            const float *e = (const float *)cond->refiner->y.data + 1408 + 128 + 4 * 256;
            double worst = 0;
            for (int i = 0; i < 128; i++) {
                double f = exp(-log(10000.0) * i / 128.0), a = cases[c].want[1][4];
                worst = fmax(worst, fmax(fabs(e[i] - cos(a * f)), fabs(e[128 + i] - sin(a * f))));
            }
            T_CHECK(worst < 1e-5, "negative aesthetic score embedding: max abs %.3g from double", worst);
        }
        sdx_cond_free(cond);
    }
    rf_free(ctx, m, r);
    return T_PASS;
}

/* ---- the hand-over ----------------------------------------------------- */

/* The refiner's denoiser for sdx_sample: its model call with its own
 * conditioning, as the pipeline makes it for any model. */
static int rf_denoise(void *user, const float *x, float sigma, float *denoised) {
    return sdx__gen_denoise((sdx__gen *)user, x, sigma, denoised);
}

static int rf_noise(void *user, float *out) {
    sdx_rng_randn((sdx_rng *)user, out, 4 * 8 * 8);
    return SDX_OK;
}

/* The base's latent after k of the n steps: its sampler on sigmas[0..k]
 * (explicit sigmas), or the start latent itself when k is 0. */
static int rf_base_part(sdx_model *m, const sdx_gen_params *p, const float *sig, int k, float *x) {
    sdx_gen_params q = *p;
    sdx_gen_result res;
    sdx_model_sampling ms;
    if (k == 0) {
        sdx_rng rng;
        float noise[256];
        sdx_model_sampling_init(&ms);
        sdx_rng_init(&rng, p->rng, (uint64_t)p->seed);
        sdx_rng_randn(&rng, noise, 256);
        sdx_start_latent(&ms, sig[0], NULL, noise, x, 256);
        return 1;
    }
    q.refiner = NULL;
    q.steps = 0;
    q.sigmas = sig;
    q.n_sigmas = k + 1;
    if (sdx_generate(m, &q, &res) != SDX_OK) return 0;
    memcpy(x, res.latents[0].data, 256 * sizeof(float));
    sdx_gen_result_free(m->ctx, &res);
    return 1;
}

/* The refiner's part: its prompts encoded (as img2img from x: a refiner
 * does not start from noise), its sampler run over sigmas[k..n] from x as
 * it is, per-step noise from seed + 1. */
static int rf_refiner_part(sdx_model *r, const sdx_gen_params *p, const float *sig, int k, int n, float *x) {
    sdx_ctx *ctx = r->ctx;
    sdx_gen_params q = *p;
    sdx_tensor init;
    int64_t shape[4] = { 1, 4, 8, 8 };
    sdx_cond *cond = NULL;
    sdx__gen g;
    sdx_rng rng;
    sdx_sample_desc sd;
    int rc;
    if (sdx_tensor_alloc(ctx, &init, SDX_F32, 4, shape) != SDX_OK) return 0;
    memcpy(init.data, x, 256 * sizeof(float));
    q.refiner = NULL;
    q.init_latent = &init;
    rc = sdx_encode_prompt(r, &q, &cond);
    if (rc == SDX_OK) rc = sdx__gen_resolve(&g, r, &q);
    if (rc == SDX_OK) {
        g.cond = cond;
        sdx_rng_init(&rng, p->rng, (uint64_t)p->seed + 1);
        memset(&sd, 0, sizeof sd);
        sdx_sampler_from_name(ctx, p->sampler, &sd.sampler);
        sd.sigmas = sig + k;
        sd.n_sigmas = n - k + 1;
        sd.n = 256;
        sd.denoise = rf_denoise;
        sd.denoise_user = &g;
        sd.noise = rf_noise;
        sd.noise_user = &rng;
        rc = sdx_sample(ctx, &sd, x);
        sdx__gen_free(&g);
    }
    sdx_cond_free(cond);
    sdx_tensor_free(ctx, &init);
    return rc == SDX_OK;
}

/* The whole hand-over by hand: the schedule, the base's part, the
 * refiner's part and the base's decode. */
static int rf_by_hand(sdx_model *m, sdx_model *r, const sdx_gen_params *p, int k, float *x, sdx_image *img) {
    sdx_ctx *ctx = m->ctx;
    sdx_model_sampling ms;
    sdx_tensor sig, lat;
    sdx_scheduler sched = SDX_SCHED_NORMAL;
    sdx_sampler sampler;
    int64_t shape[4] = { 1, 4, 8, 8 };
    int ok, n;
    sdx_model_sampling_init(&ms);
    if (sdx_sampler_from_name(ctx, p->sampler, &sampler) != SDX_OK ||
        (p->scheduler && sdx_scheduler_from_name(ctx, p->scheduler, &sched) != SDX_OK) ||
        sdx_sampler_sigmas(ctx, &ms, sched, sampler, p->steps, 1.0, &sig) != SDX_OK)
        return 0;
    n = (int)sig.shape[0] - 1;
    ok = rf_base_part(m, p, (const float *)sig.data, k, x) && rf_refiner_part(r, p, (const float *)sig.data, k, n, x);
    sdx_tensor_free(ctx, &sig);
    if (!ok || sdx_tensor_alloc(ctx, &lat, SDX_F32, 4, shape) != SDX_OK) return 0;
    memcpy(lat.data, x, 256 * sizeof(float));
    ok = sdx_decode_latent(m, &lat, p, img) == SDX_OK;
    sdx_tensor_free(ctx, &lat);
    return ok;
}

/* sdx_generate with a refiner equals the two parts done by hand, bit for
 * bit: an ancestral sampler (per-step noise restarts from seed + 1) and a
 * multistep one (history restarts), switching at 0.6 of 5 steps (k = 3),
 * at 0.5 of 5 (2.5 rounds up: 3), at 0.05 (k = 0: the refiner does all
 * from the start latent) and at 1 (the refiner does nothing). */
static int refiner_hand_over_equals_base_then_refiner_by_hand(void) {
    RF_NEED_MODELS(ctx, m, r);
    static const struct { const char *sampler, *scheduler; float sw; int k; } cases[] = {
        { "euler_a", NULL, 0.6f, 3 },
        { "dpmpp_2m", "karras", 0.6f, 3 },
        { "euler", NULL, 0.5f, 3 },
        { "euler_a", NULL, 0.05f, 0 },
        { "euler", NULL, 1.0f, 5 },
    };
    static float x[256], base_only[256];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sdx_gen_params p;
        sdx_gen_result got, plain;
        sdx_image img;
        rf_params(&p, r);
        p.sampler = cases[c].sampler;
        p.scheduler = cases[c].scheduler;
        p.refiner_switch = cases[c].sw;
        T_CHECK(sdx_generate(m, &p, &got) == SDX_OK, "%s: %s", p.sampler, sdx_last_error(ctx));
        T_CHECK(rf_by_hand(m, r, &p, cases[c].k, x, &img), "%s by hand: %s", p.sampler, sdx_last_error(ctx));
        T_CHECK(rf_same(&got.latents[0], x), "%s at %g: the latent differs from the hand-over by hand", p.sampler, (double)p.refiner_switch);
        T_CHECK(t_image_diff(&got.images[0], &img) == 0, "%s at %g: the image differs", p.sampler, (double)p.refiner_switch);
        /* the refiner did (or, at 1, did not) change the base's result */
        p.refiner = NULL;
        T_CHECK(sdx_generate(m, &p, &plain) == SDX_OK, "%s", sdx_last_error(ctx));
        memcpy(base_only, plain.latents[0].data, sizeof base_only);
        T_CHECK(rf_same(&got.latents[0], base_only) == (cases[c].k == 5), "%s at %g: the refiner's part %s", p.sampler,
                (double)cases[c].sw, cases[c].k == 5 ? "changed the result" : "left no trace");
        sdx_image_free(ctx, &img);
        sdx_gen_result_free(ctx, &got);
        sdx_gen_result_free(ctx, &plain);
    }
    rf_free(ctx, m, r);
    return T_PASS;
}

/* ---- misuse ---------------------------------------------------------- */

/* A refiner cannot start from noise (img2img with it alone works); a
 * refiner must share the base's latent space; an out-of-range switch or
 * score, a mask or hires fix with a refiner are refused, naming why. */
static int refiner_misuse_is_refused_with_a_reason(void) {
    RF_NEED_MODELS(ctx, m, r);
    sdx_model *sd1 = t_model(ctx, "sd1");
    sdx_gen_params p;
    sdx_gen_result res;
    sdx_tensor init;
    int64_t shape[4] = { 1, 4, 8, 8 };
    unsigned char grey[64];
    sdx_image mask = { 8, 8, 1, grey };
    T_CHECK(sd1, "%s", sdx_last_error(ctx));
    rf_params(&p, NULL);
    T_CHECK(sdx_generate(r, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "cannot start from noise"),
            "a refiner as the base: %s", sdx_last_error(ctx));
    T_CHECK(sdx_tensor_alloc(ctx, &init, SDX_F32, 4, shape) == SDX_OK, "alloc");
    memset(init.data, 0, sizeof(float) * 256);
    p.init_latent = &init;
    p.strength = 0.3f;
    T_CHECK(sdx_generate(r, &p, &res) == SDX_OK, "img2img with the refiner alone: %s", sdx_last_error(ctx));
    sdx_gen_result_free(ctx, &res);
    rf_params(&p, r);
    T_CHECK(sdx_generate(sd1, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "latents differ"),
            "a refiner for SD 1.x: %s", sdx_last_error(ctx));
    p.refiner = sd1;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "latents differ"),
            "SD 1.x as the refiner: %s", sdx_last_error(ctx));
    rf_params(&p, r);
    p.refiner_switch = 1.5f;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "(0, 1]"), "%s", sdx_last_error(ctx));
    rf_params(&p, r);
    p.refiner_ascore = -1;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "aesthetic"), "%s", sdx_last_error(ctx));
    rf_params(&p, r);
    memset(grey, 255, sizeof grey);
    p.init_latent = &init;
    p.mask = &mask;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_UNSUPPORTED && strstr(sdx_last_error(ctx), "mask"), "%s", sdx_last_error(ctx));
    rf_params(&p, r);
    p.hires_scale = 2;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_UNSUPPORTED && strstr(sdx_last_error(ctx), "hires"), "%s", sdx_last_error(ctx));
    sdx_tensor_free(ctx, &init);
    sdx_model_free(sd1);
    rf_free(ctx, m, r);
    return T_PASS;
}

/* ---- staged API and the command ------------------------------------------ */

typedef struct rf_progress { int calls, last, total, ordered; } rf_progress;

static int rf_on_progress(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    rf_progress *pr = (rf_progress *)user;
    (void)image;
    (void)latent;
    pr->ordered &= step == pr->last + 1;
    pr->last = step;
    pr->total = steps;
    pr->calls++;
    return 0;
}

/* A staged session steps through both parts (one model evaluation per
 * euler step, progress 1..5 of 5), shows the base's leftover latent after
 * its k steps, and ends on sdx_generate's latent; a conditioning encoded
 * without the refiner is refused. */
static int staged_refiner_session_equals_one_call(void) {
    RF_NEED_MODELS(ctx, m, r);
    sdx_gen_params p;
    sdx_gen_result ref;
    sdx_cond *cond, *plain;
    sdx_sampling *s;
    sdx_model_sampling ms;
    sdx_tensor sig;
    static float leftover[256];
    rf_progress pr = { 0, 0, 0, 1 };
    int steps = 0, total = 0, done;
    rf_params(&p, r);
    p.sampler = "euler";
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_NORMAL, SDX_SAMPLER_EULER, 5, 1.0, &sig) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(rf_base_part(m, &p, (const float *)sig.data, 3, leftover), "%s", sdx_last_error(ctx));
    sdx_tensor_free(ctx, &sig);
    p.progress = rf_on_progress;
    p.progress_user = &pr;
    T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_sampling_begin(m, &p, cond, 0, &s) == SDX_OK, "%s", sdx_last_error(ctx));
    while (!sdx_sampling_done(s) && steps < 20) {
        T_CHECK(sdx_sampling_step(s) == SDX_OK, "step %d: %s", steps + 1, sdx_last_error(ctx));
        steps++;
        if (steps == 3) T_CHECK(rf_same(sdx_sampling_latent(s), leftover), "after 3 steps the latent is not the base's leftover");
    }
    done = sdx_sampling_steps(s, &total);
    T_CHECK(steps == 5 && done == 5 && total == 5, "%d sdx_sampling_step calls, %d of %d steps done", steps, done, total);
    T_CHECK(pr.calls == 5 && pr.last == 5 && pr.total == 5 && pr.ordered, "progress: %d calls, last %d of %d", pr.calls, pr.last,
            pr.total);
    T_CHECK(rf_same(sdx_sampling_latent(s), (const float *)ref.latents[0].data), "the staged latent differs from sdx_generate's");
    sdx_sampling_free(s);
    p.refiner = NULL;
    T_CHECK(sdx_encode_prompt(m, &p, &plain) == SDX_OK, "%s", sdx_last_error(ctx));
    p.refiner = r;
    T_CHECK(sdx_sampling_begin(m, &p, plain, 0, &s) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "refiner"),
            "a conditioning without the refiner: %s", sdx_last_error(ctx));
    sdx_cond_free(plain);
    sdx_cond_free(cond);
    sdx_gen_result_free(ctx, &ref);
    rf_free(ctx, m, r);
    return T_PASS;
}

/* The command: --refiner and --refiner-switch give sdx_generate's latent,
 * the PNG records A1111's Refiner fields; a refiner of another latent
 * space and a switch out of range exit non-zero saying why. */
static int cli_refiner_run_equals_generate_and_records_it(void) {
    T_SKIP_IF(T_WINDOWS, "the CLI cases run examples/sdx through a POSIX shell");
    T_NEED_SDX_COMMAND();
    RF_NEED_MODELS(ctx, m, r);
    static char out[16384];
    char args[4096];
    const char *png = t_tmp("sdx_t_refiner.png"), *lat = t_tmp("sdx_t_refiner_latent.safetensors");
    sdx_gen_params p;
    sdx_gen_result ref;
    sdx_tensor got;
    int w, h;
    rf_params(&p, r);
    p.refiner_ascore = 7;
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    remove(png);
    remove(lat);
    snprintf(args, sizeof args, "-m '%s' --vocab '%s/vocab' -p '%s' -n '%s' -W 64 -H 64 --steps 5 --cfg-scale 5 "
             "--sampling-method euler_a -s 21 --rng cpu -t 2 --refiner '%s' --refiner-switch 0.6 --refiner-ascore 7 "
             "-o %s --output-latent %s", t_golden_ckpt("sdxl"), t_shared_dir(), p.prompt, p.negative_prompt, RF_FILE, png, lat);
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "sdx %s: %s", args, out);
    T_CHECK(t_png_size(png, &w, &h) && w == 64 && h == 64, "PNG size");
    T_CHECK(t_png_has_parameters(png, "Model: model, Refiner: sdx_t_refiner, Refiner switch at: 0.6, Aesthetic score: 7,"),
            "the PNG does not record the refiner");
    T_CHECK(t_read_f32(ctx, lat, "latent", &got) == SDX_OK, "%s: %s", lat, sdx_last_error(ctx));
    T_CHECK(rf_same(&got, (const float *)ref.latents[0].data), "the CLI's latent differs from sdx_generate's");
    sdx_tensor_free(ctx, &got);
    remove(png);
    remove(lat);
    snprintf(args, sizeof args, "-m '%s/golden/sd1/model.safetensors' --vocab '%s/vocab' -p x -W 64 -H 64 --steps 2 --refiner '%s' -o %s",
             t_shared_dir(), t_shared_dir(), RF_FILE, png);
    T_CHECK(t_sdx(args, out, sizeof out) != 0 && strstr(out, "latents differ") && !t_file_exists(png), "SD 1.x base: %s", out);
    snprintf(args, sizeof args, "-m x -p x --refiner '%s' --refiner-switch 0 -o %s", RF_FILE, png);
    T_CHECK(t_sdx(args, out, sizeof out) != 0 && strstr(out, "(0, 1]") && !t_file_exists(png), "switch 0: %s", out);
    sdx_gen_result_free(ctx, &ref);
    rf_free(ctx, m, r);
    return T_PASS;
}

static const t_case refiner_cases[] = {
    { "refiner_architecture_is_read_from_keys_and_shapes", refiner_architecture_is_read_from_keys_and_shapes },
    { "mismatched_label_emb_fails_at_load_naming_the_vector", mismatched_label_emb_fails_at_load_naming_the_vector },
    { "refiner_vector_is_pooled_sizes_crop_and_aesthetic_score", refiner_vector_is_pooled_sizes_crop_and_aesthetic_score },
    { "refiner_hand_over_equals_base_then_refiner_by_hand", refiner_hand_over_equals_base_then_refiner_by_hand },
    { "refiner_misuse_is_refused_with_a_reason", refiner_misuse_is_refused_with_a_reason },
    { "staged_refiner_session_equals_one_call", staged_refiner_session_equals_one_call },
    { "cli_refiner_run_equals_generate_and_records_it", cli_refiner_run_equals_generate_and_records_it },
    { 0, 0 }
};
SDX_TEST_SUITE(refiner, refiner_cases)
