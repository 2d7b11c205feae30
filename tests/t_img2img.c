/* Suite "img2img": img2img and inpainting as ComfyUI runs them (VAEEncode
 * with its crop, SetLatentNoiseMask, KSampler with denoise), against the
 * goldens in shared/golden/img2img (README there: every convention), plus
 * the 9-channel InpaintModelConditioning input, init latents, the optional
 * A1111-style paste-back, the parameters text and the sdx command. */
#include "test.h"

#define I2I_MAX_CASES 8

typedef struct i2i_case {
    char name[64], sampler[64], scheduler[64], file[512], png[512], image_png[512], mask_png[512];
    int64_t seed, encode_seed;
    int steps, has_mask, image_w, image_h, crop_x, crop_y, crop_w, crop_h, n_sigmas;
    float cfg, denoise;
    float sigmas[64];
} i2i_case;

static const char *const i2i_prompt = "a photograph of an astronaut riding a horse";

static void i2i_path(char *out, size_t size, const char *rel) {
    snprintf(out, size, "%s/golden/img2img/%s", t_shared_dir(), rel);
}

static int i2i_cases_load(sdx_ctx *ctx, i2i_case *out, int max) {
    char path[512];
    sdx__json_doc doc;
    const sdx__json *c, *s;
    int n = 0;
    i2i_path(path, sizeof path, "index.json");
    if (sdx__json_parse_file(ctx, path, &doc) != SDX_OK) return -1;
    for (c = sdx__json_get(doc.root, "cases")->child; c && n < max; c = c->next, n++) {
        i2i_case *k = &out[n];
        const sdx__json *crop = sdx__json_get(c, "crop"), *mask = sdx__json_get(c, "mask_png");
        memset(k, 0, sizeof *k);
        snprintf(k->name, sizeof k->name, "%s", sdx__json_get(c, "name")->str);
        snprintf(k->sampler, sizeof k->sampler, "%s", sdx__json_get(c, "sampler")->str);
        snprintf(k->scheduler, sizeof k->scheduler, "%s", sdx__json_get(c, "scheduler")->str);
        i2i_path(k->file, sizeof k->file, sdx__json_get(c, "file")->str);
        i2i_path(k->png, sizeof k->png, sdx__json_get(c, "png")->str);
        i2i_path(k->image_png, sizeof k->image_png, sdx__json_get(c, "image_png")->str);
        k->has_mask = mask && mask->type == SDX__JSON_STRING;
        if (k->has_mask) i2i_path(k->mask_png, sizeof k->mask_png, mask->str);
        k->seed = (int64_t)sdx__json_get(c, "seed")->num;
        k->encode_seed = (int64_t)sdx__json_get(c, "encode_seed")->num;
        k->steps = (int)sdx__json_get(c, "steps")->num;
        k->cfg = (float)sdx__json_get(c, "cfg")->num;
        k->denoise = (float)sdx__json_get(c, "denoise")->num;
        k->image_w = (int)sdx__json_get(c, "image_wh")->child->num;
        k->image_h = (int)sdx__json_get(c, "image_wh")->child->next->num;
        k->crop_x = (int)sdx__json_get(crop, "x")->num;
        k->crop_y = (int)sdx__json_get(crop, "y")->num;
        k->crop_w = (int)sdx__json_get(crop, "w")->num;
        k->crop_h = (int)sdx__json_get(crop, "h")->num;
        for (s = sdx__json_get(c, "sigmas")->child; s && k->n_sigmas < 64; s = s->next) k->sigmas[k->n_sigmas++] = (float)s->num;
    }
    sdx__json_free(&doc);
    return n;
}

/* A stored [1, C, H, W] tensor of values u8/255 back to 8-bit interleaved. */
static int i2i_u8_image(sdx_ctx *ctx, sdx_st *st, const char *name, sdx_image *out) {
    sdx_tensor t;
    int64_t c, h, w;
    if (sdx_st_read_f32(ctx, st, name, &t) != SDX_OK) return 0;
    c = t.ndim == 4 ? t.shape[1] : 1;
    h = t.shape[t.ndim - 2];
    w = t.shape[t.ndim - 1];
    out->width = (int)w;
    out->height = (int)h;
    out->channels = (int)c;
    out->data = (uint8_t *)malloc((size_t)(c * h * w));
    for (int64_t i = 0; i < h * w; i++)
        for (int64_t k = 0; k < c; k++) out->data[i * c + k] = (uint8_t)lrintf(((float *)t.data)[k * h * w + i] * 255.0f);
    sdx_tensor_free(ctx, &t);
    return 1;
}

/* The golden case's parameters; init and mask left to the caller. */
static void i2i_params(const i2i_case *k, sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = i2i_prompt;
    p->negative_prompt = "";
    p->steps = k->steps;
    p->cfg_scale = k->cfg;
    p->sampler = k->sampler;
    p->scheduler = k->scheduler;
    p->seed = k->seed;
    p->rng = SDX_RNG_CPU;
    p->strength = k->denoise;
}

typedef struct { float *x_init; size_t n; int calls; } i2i_capture;

static int i2i_on_progress(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    i2i_capture *c = (i2i_capture *)user;
    (void)image; (void)steps;
    if (step == 1) memcpy(c->x_init, latent->data, sizeof(float) * c->n);
    c->calls++;
    return 0;
}

static int i2i_read(sdx_ctx *ctx, sdx_st *st, const char *name, sdx_tensor *t) {
    return sdx_st_read_f32(ctx, st, name, t) == SDX_OK;
}

/* ---- goldens ------------------------------------------------------------ */

/* Each case from its stored latent_init (model space, skipping the
 * encoder): the sigma list, the first sampler state latent + noise * s,
 * the final latent, and the decoded PNG. */
static int i2i_case_from_latent_init(sdx_ctx *ctx, sdx_model *m, const i2i_case *k) {
    sdx_st *st;
    sdx_tensor latent_init, x_init, latent, mask_ref;
    sdx_image mask = { 0 };
    sdx_gen_params p;
    sdx_gen_result res;
    sdx__gen g;
    sdx_tensor sigmas;
    i2i_capture cap;
    double rel_x, rel, kept = 0;
    int worst;
    size_t n;
    T_CHECK(sdx_st_open(ctx, k->file, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(i2i_read(ctx, st, "latent_init", &latent_init) && i2i_read(ctx, st, "x_init", &x_init) &&
            i2i_read(ctx, st, "latent", &latent), "%s: %s", k->name, sdx_last_error(ctx));
    n = (size_t)sdx_tensor_numel(&latent);
    i2i_params(k, &p);
    p.init_latent = &latent_init;
    if (k->has_mask) {
        T_CHECK(i2i_u8_image(ctx, st, "mask_px", &mask), "%s: mask_px: %s", k->name, sdx_last_error(ctx));
        p.mask = &mask;
    }
    /* the schedule the pipeline resolves: exactly `steps` model steps from
     * the tail of an int(steps / denoise)-step schedule */
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    T_CHECK(g.width == k->crop_w && g.height == k->crop_h, "%s: size %dx%d from the init latent", k->name, g.width, g.height);
    T_CHECK(sdx_sampler_sigmas(ctx, &m->ms, g.scheduler, g.sampler, g.steps, g.denoise, &sigmas) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sigmas.shape[0] == k->n_sigmas && k->n_sigmas == k->steps + 1, "%s: %lld sigmas, golden %d", k->name,
            (long long)sigmas.shape[0], k->n_sigmas);
    for (int i = 0; i < k->n_sigmas; i++)
        T_CHECK(fabsf(((float *)sigmas.data)[i] - k->sigmas[i]) <= 1e-6f * fmaxf(1.0f, k->sigmas[i]), "%s: sigma %d is %.9g, golden %.9g",
                k->name, i, ((float *)sigmas.data)[i], k->sigmas[i]);
    sdx_tensor_free(ctx, &sigmas);
    cap.x_init = (float *)malloc(sizeof(float) * n);
    cap.n = n;
    cap.calls = 0;
    p.progress = i2i_on_progress;
    p.progress_user = &cap;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    rel_x = t_rel_l2_f32(cap.x_init, (const float *)x_init.data, n);
    rel = t_rel_l2_f32((const float *)res.latents[0].data, (const float *)latent.data, n);
    worst = t_png_diff(&res.images[0], k->png);
    if (k->has_mask) {
        /* where the latent mask is 0 the result is latent_init (no re-paste,
         * the last step to sigma 0 lands there up to rounding) */
        T_CHECK(i2i_read(ctx, st, "latent_mask", &mask_ref), "%s", sdx_last_error(ctx));
        for (size_t i = 0; i < n; i++)
            if (((float *)mask_ref.data)[i % (n / 4)] == 0.0f)
                kept = fmax(kept, fabs(((float *)res.latents[0].data)[i] - ((float *)latent_init.data)[i]));
        sdx_tensor_free(ctx, &mask_ref);
    }
    T_NOTE("%s: x_init rel-L2 %.3g, %d steps, final latent rel-L2 %.3g, max PNG diff %d, kept latent max diff %.3g",
           k->name, rel_x, cap.calls, rel, worst, kept);
    T_CHECK(cap.calls == k->steps, "%s: %d progress steps, expected %d", k->name, cap.calls, k->steps);
    T_CHECK(rel_x <= 1e-6, "%s: first sampler state rel-L2 %.3g", k->name, rel_x);
    T_CHECK(rel <= 1e-3, "%s: final latent rel-L2 %.3g > 1e-3", k->name, rel);
    T_CHECK(worst <= 1, "%s: PNG differs by %d levels", k->name, worst);
    T_CHECK(kept <= 1e-6, "%s: latent outside the mask moved by %.3g", k->name, kept);
    free(cap.x_init);
    free(mask.data);
    sdx_gen_result_free(ctx, &res);
    sdx_tensor_free(ctx, &latent_init);
    sdx_tensor_free(ctx, &x_init);
    sdx_tensor_free(ctx, &latent);
    sdx_st_close(st);
    return T_PASS;
}

/* Runs check on each golden case with the sd1 model (4 cases); check
 * returns T_SKIP for a case it does not apply to. *checked: how many it
 * applied to (NULL: not wanted). */
typedef int (*i2i_check_fn)(sdx_ctx *ctx, sdx_model *m, const i2i_case *k);
static int i2i_each_golden_case(i2i_check_fn check, int *checked) {
    T_NEED_SHARED(idx, "golden/img2img/index.json");
    T_NEED_SHARED(v, "vocab/merges.txt");
    i2i_case cases[I2I_MAX_CASES];
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = t_model(ctx, "sd1");
    int n = i2i_cases_load(ctx, cases, I2I_MAX_CASES), rc = T_PASS, done = 0;
    (void)idx; (void)v;
    T_CHECK(m, "%s", sdx_last_error(ctx));
    T_CHECK(n == 4, "index.json: %d cases", n);
    for (int i = 0; i < n && rc == T_PASS; i++) {
        rc = check(ctx, m, &cases[i]);
        done += rc == T_PASS;
        if (rc == T_SKIP) rc = T_PASS;
    }
    if (checked) *checked = done;
    sdx_model_free(m);
    sdx_destroy(ctx);
    return rc;
}

static int golden_cases_reproduce_from_their_latent_init(void) { return i2i_each_golden_case(i2i_case_from_latent_init, NULL); }

/* The encoder on the centre-cropped init image in [-1, 1]: posterior mean
 * and std against the stored moments. */
static int i2i_posterior_moments(sdx_ctx *ctx, sdx_model *m, const i2i_case *k) {
    sdx_st *st;
    sdx_tensor mean_ref, std_ref;
    sdx_image img;
    sdx_gen_params p;
    sdx__gen g;
    float *mean, *std;
    double rm, rs;
    size_t nl;
    T_CHECK(sdx_st_open(ctx, k->file, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(i2i_read(ctx, st, "posterior_mean", &mean_ref) && i2i_read(ctx, st, "posterior_std", &std_ref) &&
            i2i_u8_image(ctx, st, "image_in", &img), "%s: %s", k->name, sdx_last_error(ctx));
    T_CHECK(img.width == k->image_w && img.height == k->image_h, "%s: image_in size", k->name);
    i2i_params(k, &p);
    p.init_image = &img;
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    T_CHECK(g.crop_x == k->crop_x && g.crop_y == k->crop_y && g.width == k->crop_w && g.height == k->crop_h,
            "%s: crop %d,%d %dx%d, golden %d,%d %dx%d", k->name, g.crop_x, g.crop_y, g.width, g.height, k->crop_x, k->crop_y,
            k->crop_w, k->crop_h);
    nl = (size_t)sdx_tensor_numel(&mean_ref);
    T_CHECK(nl == (size_t)4 * (size_t)g.lh * (size_t)g.lw, "%s: latent size", k->name);
    mean = (float *)malloc(sizeof(float) * nl);
    std = (float *)malloc(sizeof(float) * nl);
    T_CHECK(sdx__vae_posterior(&g, NULL, mean, std) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    rm = t_rel_l2_f32(mean, (const float *)mean_ref.data, nl);
    rs = t_rel_l2_f32(std, (const float *)std_ref.data, nl);
    T_NOTE("%s: posterior mean rel-L2 %.3g, std rel-L2 %.3g", k->name, rm, rs);
    T_CHECK(rm <= 1e-5 && rs <= 1e-5, "%s: posterior mean rel-L2 %.3g, std %.3g (> 1e-5)", k->name, rm, rs);
    free(mean);
    free(std);
    free(img.data);
    sdx_tensor_free(ctx, &mean_ref);
    sdx_tensor_free(ctx, &std_ref);
    sdx_st_close(st);
    sdx__arena_reset(&m->arena);
    return T_PASS;
}

static int encoder_gives_the_posterior_mean_and_std_of_the_cropped_image(void) {
    return i2i_each_golden_case(i2i_posterior_moments, NULL);
}

/* From the init PNG (and mask PNG) with the posterior sampled at the
 * golden's encode seed, as that ComfyUI did: the init latent is the
 * stored latent_init and the whole run reproduces the golden. */
static int i2i_case_from_pngs(sdx_ctx *ctx, sdx_model *m, const i2i_case *k) {
    sdx_st *st;
    sdx_tensor latent_init, latent;
    sdx_image img, mask = { 0 };
    sdx_gen_params p;
    sdx_gen_result res;
    sdx__gen g;
    int worst;
    double rel_init, rel;
    size_t nl;
    T_CHECK(sdx_st_open(ctx, k->file, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(i2i_read(ctx, st, "latent_init", &latent_init) && i2i_read(ctx, st, "latent", &latent), "%s", sdx_last_error(ctx));
    nl = (size_t)sdx_tensor_numel(&latent);
    img = t_png_load(k->image_png, 3);
    T_CHECK(img.data && img.width == k->image_w && img.height == k->image_h, "%s: cannot read %s", k->name, k->image_png);
    i2i_params(k, &p);
    p.init_image = &img;
    p.encode_sample = 1;
    p.encode_seed = k->encode_seed;
    if (k->has_mask) {
        mask = t_png_load(k->mask_png, 1);
        T_CHECK(mask.data, "%s: cannot read %s", k->name, k->mask_png);
        p.mask = &mask;
    }
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK && sdx__gen_prepare_init(&g) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    rel_init = t_rel_l2_f32(g.init_latent, (const float *)latent_init.data, nl);
    sdx__gen_free(&g);
    sdx__arena_reset(&m->arena);
    if (!k->has_mask) {    /* the public encoder does the same */
        sdx_tensor enc;
        double rel_enc;
        T_CHECK(sdx_encode_image(m, &img, &p, &enc) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
        T_CHECK(enc.shape[2] == k->crop_h / 8 && enc.shape[3] == k->crop_w / 8, "%s: sdx_encode_image shape", k->name);
        rel_enc = t_rel_l2_f32((const float *)enc.data, (const float *)latent_init.data, nl);
        sdx_tensor_free(ctx, &enc);
        T_CHECK(rel_enc <= 1e-5, "%s: sdx_encode_image rel-L2 %.3g", k->name, rel_enc);
    }
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    T_CHECK(res.images[0].width == k->crop_w && res.images[0].height == k->crop_h, "%s: output %dx%d", k->name,
            res.images[0].width, res.images[0].height);
    rel = t_rel_l2_f32((const float *)res.latents[0].data, (const float *)latent.data, nl);
    worst = t_png_diff(&res.images[0], k->png);
    T_NOTE("%s from PNGs: latent_init rel-L2 %.3g, final latent rel-L2 %.3g, max PNG diff %d", k->name, rel_init, rel, worst);
    T_CHECK(rel_init <= 1e-5, "%s: sampled init latent rel-L2 %.3g", k->name, rel_init);
    T_CHECK(rel <= 1e-3, "%s: final latent rel-L2 %.3g", k->name, rel);
    T_CHECK(worst <= 1, "%s: PNG differs by %d levels", k->name, worst);
    sdx_gen_result_free(ctx, &res);
    stbi_image_free(img.data);
    stbi_image_free(mask.data);
    sdx_tensor_free(ctx, &latent_init);
    sdx_tensor_free(ctx, &latent);
    sdx_st_close(st);
    return T_PASS;
}

static int posterior_sample_at_the_encode_seed_reproduces_the_goldens_from_pngs(void) {
    return i2i_each_golden_case(i2i_case_from_pngs, NULL);
}

/* SetLatentNoiseMask + prepare_mask: the full (uncropped) mask resized
 * bilinearly to the latent, soft values kept. */
static int i2i_latent_mask(sdx_ctx *ctx, sdx_model *m, const i2i_case *k) {
    sdx_st *st;
    sdx_tensor latent_init, ref;
    sdx_image mask;
    sdx_gen_params p;
    sdx__gen g;
    double worst;
    int soft = 0;
    if (!k->has_mask) return T_SKIP;
    T_CHECK(sdx_st_open(ctx, k->file, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(i2i_read(ctx, st, "latent_init", &latent_init) && i2i_read(ctx, st, "latent_mask", &ref) &&
            i2i_u8_image(ctx, st, "mask_px", &mask), "%s", sdx_last_error(ctx));
    T_CHECK(mask.width == k->image_w && mask.height == k->image_h, "%s: the mask is the full image size", k->name);
    i2i_params(k, &p);
    p.init_latent = &latent_init;
    p.mask = &mask;
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK && sdx__gen_prepare_init(&g) == SDX_OK, "%s: %s", k->name, sdx_last_error(ctx));
    worst = t_max_abs_f32(g.latent_mask, (const float *)ref.data, (size_t)(g.lh * g.lw));
    for (int j = 0; j < g.lh * g.lw; j++) soft += g.latent_mask[j] > 0 && g.latent_mask[j] < 1;
    T_NOTE("%s: latent mask max diff %.3g, %d soft values", k->name, worst, soft);
    T_CHECK(worst <= 1e-6, "%s: latent mask differs by %.3g", k->name, worst);
    T_CHECK(soft > 0, "%s: soft mask values must stay soft", k->name);
    sdx__gen_free(&g);
    free(mask.data);
    sdx_tensor_free(ctx, &latent_init);
    sdx_tensor_free(ctx, &ref);
    sdx_st_close(st);
    return T_PASS;
}

static int inpainting_mask_is_the_whole_mask_resized_bilinearly(void) {
    int checked = 0, rc = i2i_each_golden_case(i2i_latent_mask, &checked);
    if (rc != T_PASS) return rc;
    T_CHECK(checked == 2, "%d inpainting cases", checked);
    return T_PASS;
}

/* ---- behaviour ------------------------------------------------------------ */

static void i2i_pattern(uint8_t *px, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) px[(y * w + x) * 3 + c] = (uint8_t)((x * 7 + y * 3 + c * 50) ^ (x * y));
}

/* ComfyUI reads denoise as a decimal: 3 steps at 0.3 run the tail of a
 * 10-step schedule (3 / 0.3 = 10.000000000000002), although 3 / 0.3f is
 * 9.99999. */
static int strength_is_the_decimal_written_and_runs_exactly_steps(void) {
    static const struct { int steps; float strength; int full; } cases[] = { { 3, 0.3f, 10 }, { 10, 0.6f, 16 }, { 7, 0.7f, 10 }, { 8, 0.75f, 10 } };
    sdx_ctx *ctx = t_ctx();
    sdx_model_sampling ms;
    sdx_model_sampling_init(&ms);
    for (int i = 0; i < 4; i++) {
        sdx_tensor tail, full;
        double d = sdx__float_as_decimal(cases[i].strength);
        T_CHECK(sdx_sampler_sigmas(ctx, &ms, SDX_SCHED_NORMAL, SDX_SAMPLER_EULER, cases[i].steps, d, &tail) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_calculate_sigmas(ctx, &ms, SDX_SCHED_NORMAL, cases[i].full, &full) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(tail.shape[0] == cases[i].steps + 1, "%d steps at %g: %lld sigmas", cases[i].steps, d, (long long)tail.shape[0]);
        T_CHECK(!memcmp(tail.data, (float *)full.data + (full.shape[0] - tail.shape[0]), sizeof(float) * (size_t)tail.shape[0]),
                "%d steps at %g: not the tail of the %d-step schedule", cases[i].steps, d, cases[i].full);
        sdx_tensor_free(ctx, &tail);
        sdx_tensor_free(ctx, &full);
    }
    T_CHECK(sdx__float_as_decimal(0.3f) == 0.3 && sdx__float_as_decimal(1.0f) == 1.0 && sdx__float_as_decimal(0.123457f) == 0.123457,
            "shortest decimals");
    sdx_destroy(ctx);
    return T_PASS;
}

static int output_size_comes_from_the_cropped_init_image(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    static uint8_t px[133 * 69 * 3];
    sdx_image img = { 133, 69, 3, px };
    sdx_gen_params p;
    sdx_gen_result res;
    sdx__gen g;
    i2i_pattern(px, 133, 69);
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.steps = 2;
    p.sampler = "euler";
    p.init_image = &img;
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(g.width == 128 && g.height == 64 && g.crop_x == 2 && g.crop_y == 2, "133x69 -> %dx%d at %d,%d", g.width, g.height, g.crop_x, g.crop_y);
    img.width = 69; img.height = 66;   /* 69 % 8 = 5: offset 2, the odd pixel off the end */
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK && g.width == 64 && g.height == 64 && g.crop_x == 2 && g.crop_y == 1,
            "69x66 -> %dx%d at %d,%d", g.width, g.height, g.crop_x, g.crop_y);
    img.width = 133; img.height = 69;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(res.images[0].width == 128 && res.images[0].height == 64 && res.latents[0].shape[3] == 16, "output %dx%d",
            res.images[0].width, res.images[0].height);
    sdx_gen_result_free(ctx, &res);
    p.width = 128; p.height = 64;      /* the cropped size may be given */
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_gen_result_free(ctx, &res);
    p.width = 136; p.height = 72;      /* anything else is an error, not a resize */
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "128x64") &&
            strstr(sdx_last_error(ctx), "136x72"), "%s", sdx_last_error(ctx));
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* An init latent is the encode's result: starting from the image (mean)
 * and from its latent give the same generation. */
static int init_latent_skips_the_encode_and_gives_the_same_result(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    static uint8_t px[72 * 64 * 3], mk[72 * 64];
    sdx_image img = { 72, 64, 3, px }, mask = { 72, 64, 1, mk };
    sdx_gen_params p;
    sdx_gen_result a, b;
    sdx_tensor lat;
    sdx__gen g;
    int64_t shape[4] = { 1, 4, 8, 9 };
    i2i_pattern(px, 72, 64);
    for (int i = 0; i < 72 * 64; i++) mk[i] = (uint8_t)((i % 72) * 255 / 71);
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.steps = 3;
    p.sampler = "dpmpp_2m";
    p.init_image = &img;
    p.mask = &mask;
    p.strength = 0.8f;
    T_CHECK(sdx_tensor_alloc(ctx, &lat, SDX_F32, 4, shape) == SDX_OK, "alloc");
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK && sdx__gen_prepare_init(&g) == SDX_OK, "%s", sdx_last_error(ctx));
    memcpy(lat.data, g.init_latent, sizeof(float) * 4 * 8 * 9);
    sdx__gen_free(&g);
    sdx__arena_reset(&m->arena);
    T_CHECK(sdx_generate(m, &p, &a) == SDX_OK, "%s", sdx_last_error(ctx));
    p.init_image = NULL;
    p.init_latent = &lat;
    T_CHECK(sdx_generate(m, &p, &b) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(b.images[0].width == 72 && b.images[0].height == 64, "size from the latent");
    T_CHECK(!memcmp(a.latents[0].data, b.latents[0].data, sizeof(float) * 4 * 8 * 9) && !memcmp(a.images[0].data, b.images[0].data, 72 * 64 * 3),
            "image and latent starts differ");
    sdx_gen_result_free(ctx, &a);
    sdx_gen_result_free(ctx, &b);
    sdx_tensor_free(ctx, &lat);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* InpaintModelConditioning, written out: the mask (same size as the image
 * here) cropped with the image; the noise mask is its bilinear 8x
 * reduction (the mean of pixels 8i+3 and 8i+4 along each axis), the mask
 * channel that rounded, and the masked-image channels the posterior mean
 * of the image greyed where the mask rounds to 1. Without a mask: ones and
 * ComfyUI's blank-image latent. */
static int nine_channel_models_are_conditioned_as_inpaint_model_conditioning(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    const char *path = t_tmp("sdx_t_i2i_inpaint9.safetensors");
    static uint8_t px[69 * 66 * 3], mk[69 * 66];
    static float w9[32 * 9 * 9];
    sdx_ctx *ctx = t_ctx();
    sdx_model *m;
    sdx_image img = { 69, 66, 3, px }, mask = { 69, 66, 1, mk };
    sdx_gen_params p;
    sdx_gen_result res;
    sdx__gen g;
    float grey_px[64 * 64], mean[4 * 64];
    double worst_mask = 0, worst_img, worst_init;
    int rounded_ok = 1;
    (void)v;
    t_seed(13);
    T_CHECK(t_write_variant(ctx, t_golden_ckpt("sd1"), path, t_inpainting_unet, w9) == SDX_OK, "%s", sdx_last_error(ctx));
    m = t_model_file(ctx, path);
    T_CHECK(m && m->unet.in_channels == 9, "%s", sdx_last_error(ctx));
    i2i_pattern(px, 69, 66);
    for (int y = 0; y < 66; y++)
        for (int x = 0; x < 69; x++) mk[y * 69 + x] = (uint8_t)(x < 20 ? 0 : x < 40 ? (x - 20) * 12 : 255);
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.steps = 2;
    p.sampler = "euler";
    p.init_image = &img;
    p.mask = &mask;
    p.strength = 1.0f;
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK && sdx__gen_prepare_init(&g) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(g.width == 64 && g.height == 64 && g.crop_x == 2 && g.crop_y == 1, "crop");
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
            float s = 0;
            for (int dy = 3; dy <= 4; dy++)
                for (int dx = 3; dx <= 4; dx++) s += (float)mk[(8 * y + dy + 1) * 69 + 8 * x + dx + 2] / 255.0f;
            worst_mask = fmax(worst_mask, fabs(g.latent_mask[y * 8 + x] - s / 4));
            rounded_ok &= g.concat[y * 8 + x] == (s / 4 > 0.5f ? 1.0f : 0.0f);
        }
    for (int i = 0; i < 64 * 64; i++) grey_px[i] = 1.0f - (mk[(i / 64 + 1) * 69 + i % 64 + 2] >= 128 ? 1.0f : 0.0f);
    T_CHECK(sdx__vae_posterior(&g, grey_px, mean, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 256; i++) mean[i] *= 0.18215f;
    worst_img = t_max_abs_f32(g.concat + 64, mean, 256);
    T_CHECK(sdx__vae_posterior(&g, NULL, mean, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 256; i++) mean[i] *= 0.18215f;
    worst_init = t_max_abs_f32(g.init_latent, mean, 256);
    T_NOTE("9-channel: noise mask %.3g, masked image latent %.3g, init latent %.3g", worst_mask, worst_img, worst_init);
    T_CHECK(worst_mask <= 1e-6 && rounded_ok, "mask channel: noise mask off by %.3g, rounding ok %d", worst_mask, rounded_ok);
    T_CHECK(worst_img <= 1e-6 && worst_init <= 1e-6, "masked-image latent off by %.3g, init latent by %.3g", worst_img, worst_init);
    T_CHECK(memcmp(g.concat + 64, g.init_latent, sizeof(float) * 256) != 0, "the masked image differs from the image");
    sdx__gen_free(&g);
    sdx__arena_reset(&m->arena);
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_gen_result_free(ctx, &res);
    {
        char buf[1024];
        sdx_format_parameters(m, &p, 1, buf, sizeof buf, NULL);
        T_CHECK(strstr(buf, "Denoising strength: 1, Conditional mask weight: 1.0") != NULL, "parameters: %s", buf);
    }
    p.mask = NULL;
    T_CHECK(sdx__gen_resolve(&g, m, &p) == SDX_OK && sdx__gen_prepare_init(&g) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(g.concat[0] == 1.0f && g.concat[63] == 1.0f && g.concat[64] == 0.8223f && g.concat[64 * 2] == -0.6876f &&
            g.concat[64 * 3] == 0.6364f && g.concat[64 * 4 + 63] == 0.1380f && !g.latent_mask, "no mask: ones and the blank latent");
    sdx__gen_free(&g);
    sdx__arena_reset(&m->arena);
    {
        sdx_tensor lat;
        int64_t shape[4] = { 1, 4, 8, 8 };
        T_CHECK(sdx_tensor_alloc(ctx, &lat, SDX_F32, 4, shape) == SDX_OK, "alloc");
        memset(lat.data, 0, sizeof(float) * 256);
        p.init_image = NULL;
        p.init_latent = &lat;
        p.mask = &mask;
        T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "needs the init image"),
                "9-channel + mask + latent: %s", sdx_last_error(ctx));
        sdx_tensor_free(ctx, &lat);
    }
    sdx_model_free(m);
    remove(path);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Off by default: the decoded image is ComfyUI's. On: init pixels where
 * the blurred (and doubled) mask is 0, the generated ones where it
 * saturates, a blend on the seam. */
static int paste_back_keeps_init_pixels_outside_the_blurred_mask(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    static uint8_t px[64 * 64 * 3], mk[64 * 64];
    sdx_image img = { 64, 64, 3, px }, mask = { 64, 64, 1, mk };
    sdx_gen_params p;
    sdx_gen_result plain, pasted;
    int kept_ok = 1, gen_ok = 1, blended = 0;
    i2i_pattern(px, 64, 64);
    for (int i = 0; i < 64 * 64; i++) mk[i] = (i % 64) >= 32 ? 255 : 0;
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.steps = 2;
    p.sampler = "euler";
    p.init_image = &img;
    p.mask = &mask;
    p.strength = 1.0f;
    T_CHECK(sdx_generate(m, &p, &plain) == SDX_OK, "%s", sdx_last_error(ctx));
    p.paste_back = 1;                 /* blur 4: kernel radius 10 */
    T_CHECK(sdx_generate(m, &p, &pasted) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(plain.latents[0].data, pasted.latents[0].data, sizeof(float) * 256), "paste-back is after decoding");
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            for (int c = 0; c < 3; c++) {
                int i = (y * 64 + x) * 3 + c;
                if (x < 22) kept_ok &= pasted.images[0].data[i] == px[i];
                if (x >= 32) gen_ok &= pasted.images[0].data[i] == plain.images[0].data[i];   /* doubled mask saturates */
                if (x >= 24 && x < 31) blended += pasted.images[0].data[i] != px[i] && pasted.images[0].data[i] != plain.images[0].data[i];
            }
    T_CHECK(kept_ok, "init pixels far outside the mask are pasted back");
    T_CHECK(gen_ok, "generated pixels inside the mask are kept");
    T_CHECK(blended > 0, "the seam blends");
    T_CHECK(memcmp(plain.images[0].data, px, 22 * 3) != 0, "without paste-back the image is the decoded one");
    sdx_gen_result_free(ctx, &plain);
    sdx_gen_result_free(ctx, &pasted);
    p.mask = NULL;
    T_CHECK(sdx_generate(m, &p, &plain) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "paste-back"), "%s", sdx_last_error(ctx));
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

static int parameters_record_denoising_strength_and_mask_blur(void) {
    static uint8_t px[133 * 69 * 3], mk[4];
    sdx_image img = { 133, 69, 3, px }, mask = { 2, 2, 1, mk };
    sdx_gen_params p;
    char buf[1024];
    memset(&p, 0, sizeof p);
    p.prompt = "a cat";
    p.init_image = &img;
    p.strength = 0.6f;
    p.rng = SDX_RNG_CUDA;
    sdx_format_parameters(NULL, &p, 7, buf, sizeof buf, NULL);
    T_CHECK(strstr(buf, "Seed: 7, Size: 128x64, Denoising strength: 0.6, Version:") != NULL, "img2img: %s", buf);
    p.mask = &mask;
    sdx_format_parameters(NULL, &p, 7, buf, sizeof buf, NULL);
    T_CHECK(!strstr(buf, "Mask blur"), "no blur is applied without paste-back: %s", buf);
    p.paste_back = 1;
    sdx_format_parameters(NULL, &p, 7, buf, sizeof buf, NULL);
    T_CHECK(strstr(buf, "Denoising strength: 0.6, Mask blur: 4, Version:") != NULL, "paste-back: %s", buf);
    p.mask_blur = 9;
    p.rng = SDX_RNG_CPU;
    sdx_format_parameters(NULL, &p, 7, buf, sizeof buf, NULL);
    T_CHECK(strstr(buf, "Denoising strength: 0.6, RNG: CPU, Mask blur: 9, Version:") != NULL, "blur 9: %s", buf);
    return T_PASS;
}

static int invalid_init_inputs_are_rejected_with_a_reason(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    static uint8_t px[64 * 64 * 3], mk[64 * 64];
    sdx_image img = { 64, 64, 3, px }, mask = { 64, 64, 1, mk }, tiny = { 7, 64, 3, px };
    sdx_tensor lat;
    int64_t bad_shape[4] = { 1, 3, 8, 8 };
    sdx_gen_params p;
    sdx_gen_result res;
    T_CHECK(sdx_tensor_alloc(ctx, &lat, SDX_F32, 4, bad_shape) == SDX_OK, "alloc");
    memset(&p, 0, sizeof p);
    p.prompt = "x";
    p.steps = 1;
    p.mask = &mask;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "needs an init"), "%s", sdx_last_error(ctx));
    p.init_image = &img;
    p.init_latent = &lat;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "one or the other"), "%s", sdx_last_error(ctx));
    p.init_image = NULL;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "[1, 3, 8, 8]"), "%s", sdx_last_error(ctx));
    p.init_latent = NULL;
    p.init_image = &tiny;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "at least 8x8"), "%s", sdx_last_error(ctx));
    p.init_image = &img;
    p.strength = 1.5f;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "strength"), "%s", sdx_last_error(ctx));
    p.strength = 0.5f;
    mask.channels = 3;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "mask"), "%s", sdx_last_error(ctx));
    sdx_tensor_free(ctx, &lat);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- the sdx command ------------------------------------------------------ */

/* sdx -i init.png [--mask mask.png] --encode-seed N without -W/-H: the
 * output is the cropped size and matches the golden PNG; the same case
 * from --init-latent (latent_init saved as --output-latent writes it). */
static int cli_reproduces_the_goldens_from_pngs_and_from_init_latents(void) {
    T_NEED_SHARED(idx, "golden/img2img/index.json");
    T_NEED_SHARED(v, "vocab/merges.txt");
    i2i_case cases[I2I_MAX_CASES];
    sdx_ctx *ctx = t_ctx();
    int n = i2i_cases_load(ctx, cases, I2I_MAX_CASES);
    const char *png = t_tmp("sdx_t_i2i.png"), *lat = t_tmp("sdx_t_i2i_init.safetensors");
    static char args[8192], out[8192];
    (void)idx;
    T_NEED_SDX_COMMAND();
    T_CHECK(n == 4, "%s", sdx_last_error(ctx));
    for (int i = 0; i < n; i++) {
        const i2i_case *k = &cases[i];
        char common[2048], mask_arg[600] = "", expect[128];
        sdx_st *st;
        sdx_tensor t;
        int worst;
        if (k->has_mask) snprintf(mask_arg, sizeof mask_arg, "--mask '%s'", k->mask_png);
        snprintf(common, sizeof common,
                 "-m '%s/golden/sd1/model.safetensors' --vocab '%s' -p '%s' -n '' --steps %d --cfg-scale %g --sampling-method %s "
                 "--scheduler %s -s %lld --rng cpu --strength %g -t 2 -o %s %s",
                 t_shared_dir(), v, i2i_prompt, k->steps, k->cfg, k->sampler, k->scheduler, (long long)k->seed, k->denoise, png, mask_arg);
        remove(png);
        snprintf(args, sizeof args, "%s -i '%s' --encode-seed %lld", common, k->image_png, (long long)k->encode_seed);
        T_CHECK(t_sdx(args, out, sizeof out) == 0, "%s: %s", k->name, out);
        worst = t_pngs_diff(png, k->png);
        T_NOTE("cli %s from PNGs: max PNG diff %d", k->name, worst);
        T_CHECK(worst <= 1, "%s: PNG differs by %d levels", k->name, worst);
        snprintf(expect, sizeof expect, "Size: %dx%d, Model: model, Denoising strength: %g", k->crop_w, k->crop_h, k->denoise);
        T_CHECK(t_png_has_parameters(png, expect), "%s: parameters lack '%s'", k->name, expect);
        /* from the stored latent_init */
        T_CHECK(sdx_st_open(ctx, k->file, &st) == SDX_OK && sdx_st_read_f32(ctx, st, "latent_init", &t) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx_st_close(st);
        t.name = "latent";
        T_CHECK(sdx_st_write(ctx, lat, &t, 1, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx_tensor_free(ctx, &t);
        remove(png);
        snprintf(args, sizeof args, "%s --init-latent %s", common, lat);
        T_CHECK(t_sdx(args, out, sizeof out) == 0, "%s --init-latent: %s", k->name, out);
        worst = t_pngs_diff(png, k->png);
        T_NOTE("cli %s from --init-latent: max PNG diff %d", k->name, worst);
        T_CHECK(worst <= 1, "%s --init-latent: PNG differs by %d levels", k->name, worst);
    }
    remove(png);
    remove(lat);
    sdx_destroy(ctx);
    return T_PASS;
}

static int cli_rejects_conflicting_init_options(void) {
    T_NEED_SHARED(m, "golden/sd1/model.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(init, "golden/img2img/cases/init_64x64.png");
    static char args[4096], out[8192];
    char model[512], vocab[512], img[512];
    const char *png = t_tmp("sdx_t_i2i_bad.png");
    static const struct { const char *fmt, *expect; } bad[] = {
        { "-i '%s' --init-latent /nonexistent.safetensors", "one of" },
        { "-i '%s' --paste-back", "--paste-back needs" },
        { "--init-latent /nonexistent.safetensors --mask '%s'", "/nonexistent.safetensors" },
        { "-i '%s' --encode-seed x", "--encode-seed" },
        { "-i '%s' --mask-blur -3", "--mask-blur" },
    };
    T_NEED_SDX_COMMAND();
    snprintf(model, sizeof model, "%s", m);
    snprintf(vocab, sizeof vocab, "%s", v);
    snprintf(img, sizeof img, "%s", init);
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        char extra[1024];
        snprintf(extra, sizeof extra, bad[i].fmt, img);
        remove(png);
        snprintf(args, sizeof args, "-m '%s' --vocab '%s' -p x --steps 1 -o %s %s", model, vocab, png, extra);
        T_CHECK(t_sdx(args, out, sizeof out) != 0, "'%s' exited 0", extra);
        T_CHECK(strstr(out, bad[i].expect) != NULL, "'%s': output lacks '%s':\n%s", extra, bad[i].expect, out);
        T_CHECK(!t_file_exists(png), "'%s' left an output file", extra);
    }
    return T_PASS;
}

static const t_case img2img_cases[] = {
    { "golden_cases_reproduce_from_their_latent_init", golden_cases_reproduce_from_their_latent_init },
    { "encoder_gives_the_posterior_mean_and_std_of_the_cropped_image", encoder_gives_the_posterior_mean_and_std_of_the_cropped_image },
    { "posterior_sample_at_the_encode_seed_reproduces_the_goldens_from_pngs", posterior_sample_at_the_encode_seed_reproduces_the_goldens_from_pngs },
    { "inpainting_mask_is_the_whole_mask_resized_bilinearly", inpainting_mask_is_the_whole_mask_resized_bilinearly },
    { "strength_is_the_decimal_written_and_runs_exactly_steps", strength_is_the_decimal_written_and_runs_exactly_steps },
    { "output_size_comes_from_the_cropped_init_image", output_size_comes_from_the_cropped_init_image },
    { "init_latent_skips_the_encode_and_gives_the_same_result", init_latent_skips_the_encode_and_gives_the_same_result },
    { "nine_channel_models_are_conditioned_as_inpaint_model_conditioning", nine_channel_models_are_conditioned_as_inpaint_model_conditioning },
    { "paste_back_keeps_init_pixels_outside_the_blurred_mask", paste_back_keeps_init_pixels_outside_the_blurred_mask },
    { "parameters_record_denoising_strength_and_mask_blur", parameters_record_denoising_strength_and_mask_blur },
    { "invalid_init_inputs_are_rejected_with_a_reason", invalid_init_inputs_are_rejected_with_a_reason },
    { "cli_reproduces_the_goldens_from_pngs_and_from_init_latents", cli_reproduces_the_goldens_from_pngs_and_from_init_latents },
    { "cli_rejects_conflicting_init_options", cli_rejects_conflicting_init_options },
    { 0, 0 }
};
SDX_TEST_SUITE(img2img, img2img_cases)
