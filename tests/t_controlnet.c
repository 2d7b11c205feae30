/* Suite "controlnet": ControlNet residuals, the UNet they steer, the control
 * picture's crop and resize, the start/end window and whole generations
 * against ComfyUI's own nodes (shared/golden/controlnet); file layouts,
 * several ControlNets, mismatches, parameters text and the CLI. */
#include "test.h"
#define SDX_MKCKPT_NO_MAIN
#include "../tools/sdx-mkckpt.c"

#define TC_DIR "golden/controlnet/"
#define TC_PROMPT "a photograph of an astronaut riding a horse"

/* The tiny SD 1.x UNet and the golden ControlNet (or another file). */
typedef struct tc_nets {
    sdx_ctx *ctx;
    sdx_st *model, *file;
    sdx__unet unet;
    sdx__controlnet cn;
    sdx__arena arena;
} tc_nets;

static void tc_close(tc_nets *t) {
    sdx__controlnet_free(&t->cn);
    sdx__unet_free(&t->unet);
    sdx__arena_free(&t->arena);
    sdx_st_close(t->file);
    sdx_st_close(t->model);
    sdx_destroy(t->ctx);
    memset(t, 0, sizeof *t);
}

static int tc_open(tc_nets *t, const char *cn_path) {
    memset(t, 0, sizeof *t);
    t->ctx = t_ctx();
    T_CHECK(t->ctx, "context");
    sdx__arena_init(&t->arena, t->ctx, 0);
    T_CHECK(sdx_st_open(t->ctx, t_shared("golden/sd1/model.safetensors"), &t->model) == SDX_OK, "%s", sdx_last_error(t->ctx));
    T_CHECK(sdx__unet_load(t->ctx, &t->unet, t->model, "model.diffusion_model.") == SDX_OK, "%s", sdx_last_error(t->ctx));
    T_CHECK(sdx_st_open(t->ctx, cn_path, &t->file) == SDX_OK, "%s", sdx_last_error(t->ctx));
    T_CHECK(sdx__controlnet_load(t->ctx, &t->cn, t->file) == SDX_OK, "%s", sdx_last_error(t->ctx));
    T_CHECK(sdx__controlnet_fit(t->ctx, &t->cn, &t->unet, "sd1") == SDX_OK, "%s", sdx_last_error(t->ctx));
    return T_PASS;
}

/* A golden hint picture as the ControlNet input [B, 3, H, W] (B copies). */
static float *tc_hint(const char *png, int W, int H, int B) {
    char rel[256];
    sdx_image img;
    float *out;
    snprintf(rel, sizeof rel, TC_DIR "%s", png);
    if (!(img = t_png_load(t_shared(rel), 3)).data) return NULL;
    out = (float *)malloc(sizeof(float) * 3 * (size_t)W * (size_t)H * (size_t)B);
    if (out) sdx__control_hint(img.data, img.width, img.height, 3, W, H, 3, out);
    for (int b = 1; out && b < B; b++) memcpy(out + (size_t)b * 3 * (size_t)W * (size_t)H, out, sizeof(float) * 3 * (size_t)W * (size_t)H);
    stbi_image_free(img.data);
    return out;
}

/* Rows of the sd1 goldens' text contexts: [n, 77, 64]. */
static int tc_context(sdx_ctx *ctx, const int *rows, int n, sdx_tensor *out) {
    sdx_st *st;
    sdx_tensor all;
    int64_t per;
    T_CHECK(sdx_st_open(ctx, t_shared("golden/sd1/cases/text_encoder.safetensors"), &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_read_f32(ctx, st, "context", &all) == SDX_OK, "%s", sdx_last_error(ctx));
    per = all.shape[1] * all.shape[2];
    {
        const int64_t shape[3] = { n, all.shape[1], all.shape[2] };
        T_CHECK(sdx_tensor_alloc(ctx, out, SDX_F32, 3, shape) == SDX_OK, "alloc");
    }
    for (int i = 0; i < n; i++) memcpy((float *)out->data + i * per, (float *)all.data + rows[i] * per, sizeof(float) * (size_t)per);
    sdx_tensor_free(ctx, &all);
    sdx_st_close(st);
    return T_PASS;
}

/* Residuals of one component case with the nets in t; worst rel-L2 over
 * them in *worst (NULL: not compared), over the skip residuals alone in
 * *worst_skip. ctl stays on t->arena. */
static int tc_residuals(tc_nets *t, sdx_st *cs, const char *png, const sdx_tensor *cx, float strength, int accumulate,
                        sdx__unet_control *ctl, double *worst, double *worst_skip) {
    sdx_tensor x, ts, hint;
    float *hf;
    int64_t B, h, w;
    T_CHECK(sdx_st_read_f32(t->ctx, cs, "x_in", &x) == SDX_OK && sdx_st_read_f32(t->ctx, cs, "timestep", &ts) == SDX_OK,
            "%s", sdx_last_error(t->ctx));
    B = x.shape[0], h = x.shape[2], w = x.shape[3];
    hf = tc_hint(png, (int)(8 * w), (int)(8 * h), (int)B);
    T_CHECK(hf, "hint %s", png);
    hint = sdx__view4(SDX_F32, hf, B, 3, 8 * h, 8 * w);
    if (!accumulate) T_CHECK(sdx__controlnet_alloc(&t->cn, &t->arena, SDX_F32, B, h, w, ctl) == SDX_OK, "alloc");
    T_CHECK(sdx__controlnet_forward(t->ctx, &t->cn, &t->arena, &x, (const float *)ts.data, cx, NULL, &hint, strength, ctl,
                                    accumulate) == SDX_OK, "%s", sdx_last_error(t->ctx));
    if (worst) {
        *worst = *worst_skip = 0;
        for (int n = 0; n <= t->cn.enc.n_in; n++) {
            char name[64];
            sdx_tensor ref;
            const sdx_tensor *got = n < t->cn.enc.n_in ? &ctl->skip[n] : &ctl->mid;
            double rel;
            if (n < t->cn.enc.n_in) snprintf(name, sizeof name, "control_output_%02d", n);
            else snprintf(name, sizeof name, "control_middle");
            T_CHECK(sdx_st_read_f32(t->ctx, cs, name, &ref) == SDX_OK, "%s", sdx_last_error(t->ctx));
            T_CHECK(sdx__same_shape(got, &ref), "%s: shape", name);
            rel = t_rel_l2_f32((const float *)got->data, (const float *)ref.data, (size_t)sdx_tensor_numel(&ref));
            if (!(rel <= *worst)) *worst = rel;
            if (n < t->cn.enc.n_in && !(rel <= *worst_skip)) *worst_skip = rel;
            sdx_tensor_free(t->ctx, &ref);
        }
    }
    free(hf);
    sdx_tensor_free(t->ctx, &x);
    sdx_tensor_free(t->ctx, &ts);
    return T_PASS;
}

/* eps of the UNet with ctl (or none) against the case's tensor `name`. */
static int tc_eps(tc_nets *t, sdx_st *cs, const sdx_tensor *cx, const sdx__unet_control *ctl, const char *name, double *rel) {
    sdx_tensor x, ts, ref, out;
    T_CHECK(sdx_st_read_f32(t->ctx, cs, "x_in", &x) == SDX_OK && sdx_st_read_f32(t->ctx, cs, "timestep", &ts) == SDX_OK &&
            sdx_st_read_f32(t->ctx, cs, name, &ref) == SDX_OK, "%s", sdx_last_error(t->ctx));
    T_CHECK(sdx_tensor_alloc(t->ctx, &out, SDX_F32, 4, ref.shape) == SDX_OK, "alloc");
    T_CHECK(sdx__unet_forward_control(t->ctx, &t->unet, &t->arena, &x, (const float *)ts.data, cx, NULL, ctl, NULL, &out) == SDX_OK,
            "%s", sdx_last_error(t->ctx));
    *rel = t_rel_l2_f32((const float *)out.data, (const float *)ref.data, (size_t)sdx_tensor_numel(&ref));
    sdx_tensor_free(t->ctx, &x);
    sdx_tensor_free(t->ctx, &ts);
    sdx_tensor_free(t->ctx, &ref);
    sdx_tensor_free(t->ctx, &out);
    return T_PASS;
}

typedef struct tc_case { const char *file, *png; int rows[2], B; float strength; } tc_case;
static const tc_case tc_cases[2] = {
    { TC_DIR "cases/control_case0.safetensors", "cases/hint_64x64.png", { 0, 1 }, 2, 1.0f },
    { TC_DIR "cases/control_case1.safetensors", "cases/hint_97x40.png", { 0, 0 }, 1, 0.55f },
};

static int component_cases_give_comfyui_residuals_and_eps(void) {
    T_NEED_SHARED(cnp, TC_DIR "controlnet.safetensors");
    T_NEED_SHARED(te, "golden/sd1/cases/text_encoder.safetensors");
    (void)te;
    for (int c = 0; c < 2; c++) {
        T_NEED_SHARED(cp, tc_cases[c].file);
        tc_nets t;
        sdx_st *cs;
        sdx_tensor cx, strength;
        sdx__unet_control ctl;
        sdx__mark mark;
        double worst, worst_skip, eps_c, eps_n;
        int r;
        if ((r = tc_open(&t, cnp)) != T_PASS) return r;
        T_CHECK(sdx_st_open(t.ctx, cp, &cs) == SDX_OK, "%s", sdx_last_error(t.ctx));
        T_CHECK(sdx_st_read_f32(t.ctx, cs, "strength", &strength) == SDX_OK, "%s", sdx_last_error(t.ctx));
        T_CHECK(((float *)strength.data)[0] == tc_cases[c].strength, "case %d: strength", c);
        if ((r = tc_context(t.ctx, tc_cases[c].rows, tc_cases[c].B, &cx)) != T_PASS) return r;
        mark = sdx__arena_mark(&t.arena);
        if ((r = tc_residuals(&t, cs, tc_cases[c].png, &cx, tc_cases[c].strength, 0, &ctl, &worst, &worst_skip)) != T_PASS) return r;
        if ((r = tc_eps(&t, cs, &cx, &ctl, "eps_control", &eps_c)) != T_PASS) return r;
        sdx__arena_release(&t.arena, mark);
        if ((r = tc_eps(&t, cs, &cx, NULL, "eps_nocontrol", &eps_n)) != T_PASS) return r;
        T_NOTE("case %d: residuals rel-L2 <= %.3g, eps controlled %.3g, plain %.3g", c, worst, eps_c, eps_n);
        T_CHECK(worst <= 1e-5, "case %d: a residual is off by rel-L2 %.3g", c, worst);
        T_CHECK(eps_c <= 1e-5, "case %d: controlled eps rel-L2 %.3g", c, eps_c);
        T_CHECK(eps_n <= 1e-5, "case %d: plain eps rel-L2 %.3g", c, eps_n);
        sdx_tensor_free(t.ctx, &cx);
        sdx_tensor_free(t.ctx, &strength);
        sdx_st_close(cs);
        tc_close(&t);
    }
    return T_PASS;
}

static int hint_crop_and_nearest_exact_resize_match_comfyui_exactly(void) {
    T_NEED_SHARED(cp, TC_DIR "cases/control_case1.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *cs;
    sdx_tensor ref;
    float *hint = tc_hint("cases/hint_97x40.png", 128, 64, 1);
    int bad = 0;
    T_CHECK(hint, "hint");
    T_CHECK(sdx_st_open(ctx, cp, &cs) == SDX_OK && sdx_st_read_f32(ctx, cs, "hint_in_u8", &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tensor_numel(&ref) == 3 * 128 * 64 && ref.shape[2] == 64 && ref.shape[3] == 128, "hint_in_u8 shape");
    for (int i = 0; i < 3 * 128 * 64; i++) bad += (float)(int)lrintf(hint[i] * 255.0f) != ((float *)ref.data)[i];
    T_CHECK(bad == 0, "%d of %d hint values differ from ComfyUI's crop + nearest-exact", bad, 3 * 128 * 64);
    /* the ControlNet input is exactly u8 / 255 */
    T_CHECK(hint[0] == (float)(int)lrintf(hint[0] * 255.0f) / 255.0f, "values are u8 / 255");
    free(hint);
    sdx_tensor_free(ctx, &ref);
    sdx_st_close(cs);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Column index as the red value: the first output column shows the crop. */
static int tc_first_column(int iw, int ih, int W, int H) {
    uint8_t *px = (uint8_t *)calloc((size_t)iw * (size_t)ih * 3, 1);
    float *out = (float *)malloc(sizeof(float) * 3 * (size_t)W * (size_t)H);
    int v;
    for (int y = 0; y < ih; y++)
        for (int x = 0; x < iw; x++) px[((size_t)y * (size_t)iw + (size_t)x) * 3] = (uint8_t)x, px[((size_t)y * (size_t)iw + (size_t)x) * 3 + 1] = (uint8_t)y;
    sdx__control_hint(px, iw, ih, 3, W, H, 3, out);
    v = (int)lrintf(out[0] * 255.0f) * 1000 + (int)lrintf(out[(size_t)W * (size_t)H] * 255.0f);
    free(px);
    free(out);
    return v;
}

static int centre_crop_rounds_half_to_even_in_double(void) {
    /* 97x40 -> 128x64: x = round(8.5) = 8; 67x96 -> 64x128: 9.4999... -> 9 rows... columns */
    T_CHECK(tc_first_column(97, 40, 128, 64) == 8000, "97x40 -> 128x64: first column %d, want column 8", tc_first_column(97, 40, 128, 64));
    T_CHECK(tc_first_column(67, 96, 64, 128) == 9000, "67x96 -> 64x128: got %d, want column 9", tc_first_column(67, 96, 64, 128));
    /* taller than the target: rows are cropped from both sides */
    T_CHECK(tc_first_column(40, 97, 64, 128) / 1000 == 0 && tc_first_column(40, 97, 64, 128) % 1000 > 0, "40x97 -> 64x128 crops rows");
    T_CHECK(tc_first_column(64, 64, 64, 64) == 0, "same size is the identity");
    return T_PASS;
}

static int window_sigmas_and_controlled_calls_follow_comfyui(void) {
    T_NEED_SHARED(ip, TC_DIR "index.json");
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    sdx_model_sampling ms;
    const sdx__json *c;
    int n_cases = 0;
    sdx_model_sampling_init(&ms);
    T_CHECK(sdx__json_parse_file(ctx, ip, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (c = sdx__json_get(doc.root, "pipeline_cases")->child; c; c = c->next, n_cases++) {
        const sdx__json *win = sdx__json_get(c, "control_window_sigmas"), *call;
        sdx__gen_control gc;
        int n = 0, on = 0;
        memset(&gc, 0, sizeof gc);
        gc.sigma_start = (float)sdx__percent_to_sigma(&ms, sdx__json_get(c, "start_percent")->num);
        gc.sigma_end = (float)sdx__percent_to_sigma(&ms, sdx__json_get(c, "end_percent")->num);
        T_CHECK(gc.sigma_start == (float)win->child->num && gc.sigma_end == (float)win->child->next->num,
                "window %.9g..%.9g, ComfyUI %.9g..%.9g", gc.sigma_start, gc.sigma_end, win->child->num, win->child->next->num);
        for (call = sdx__json_get(c, "model_calls")->child; call; call = call->next, n++) {
            int want = sdx__json_get(call, "controlled")->type == SDX__JSON_TRUE;
            float sigma = (float)sdx__json_get(call, "sigma")->num;
            T_CHECK(sdx__control_active(&gc, sigma) == want, "call %d (sigma %g): controlled %d, ComfyUI %d", n, sigma,
                    !want, want);
            on += want;
        }
        T_NOTE("%s: %d of %d calls controlled", sdx__json_get(c, "name")->str, on, n);
    }
    T_CHECK(n_cases == 2, "%d pipeline cases", n_cases);
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- whole generations ---------------------------------------------------- */

typedef struct tc_gen {
    sdx_ctx *ctx;
    sdx_model *model;
    sdx_controlnet *net;
    sdx_image hint;
} tc_gen;

static void tc_gen_close(tc_gen *g) {
    sdx_controlnet_free(g->net);
    sdx_model_free(g->model);
    stbi_image_free(g->hint.data);
    sdx_destroy(g->ctx);
}

/* Model calls as the debug log reports them: sigma and on/off. */
typedef struct tc_calls { int n; float sigma[64]; int on[64]; } tc_calls;

static void tc_log(sdx_log_level level, const char *msg, void *user) {
    tc_calls *c = (tc_calls *)user;
    const char *at = strstr(msg, "model call at sigma ");
    float sigma;
    char state[8];
    if (level != SDX_LOG_DEBUG || !at || c->n >= 64) return;
    if (sscanf(at, "model call at sigma %g: %7s", &sigma, state) != 2) return;
    c->sigma[c->n] = sigma;
    c->on[c->n++] = !strcmp(state, "on");
}

/* The sd1 model, the golden ControlNet and hint; calls != NULL: the
 * context logs model calls there. */
static int tc_gen_open_logged(tc_gen *g, tc_calls *calls) {
    T_NEED_SHARED(cnp, TC_DIR "controlnet.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_desc d;
    (void)v;
    memset(g, 0, sizeof *g);
    memset(&d, 0, sizeof d);
    d.n_threads = 2;
    d.log = tc_log;
    d.log_level = SDX_LOG_DEBUG;
    d.user = calls;
    g->ctx = calls ? sdx_create(&d) : t_ctx();
    T_CHECK(g->ctx, "context");
    g->model = t_model(g->ctx, "sd1");
    T_CHECK(g->model, "%s", sdx_last_error(g->ctx));
    T_CHECK(sdx_controlnet_load(g->model, cnp, &g->net) == SDX_OK, "%s", sdx_last_error(g->ctx));
    g->hint = t_png_load(t_shared(TC_DIR "cases/hint_64x64.png"), 3);
    T_CHECK(g->hint.data, "hint png");
    return T_PASS;
}

static int tc_gen_open(tc_gen *g) { return tc_gen_open_logged(g, NULL); }

typedef struct tc_pipe { const char *name, *sampler, *scheduler; int64_t seed; float cfg, strength, start, end; } tc_pipe;
static const tc_pipe tc_pipes[2] = {
    { "cn_txt2img_case0", "euler", "normal", 42, 7.0f, 1.0f, 0.0f, 1.0f },
    { "cn_txt2img_case1", "dpmpp_2m", "karras", 1234, 5.0f, 0.8f, 0.0f, 0.5f },
};

static void tc_params(const tc_pipe *c, sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = TC_PROMPT;
    p->negative_prompt = "";
    p->width = p->height = 64;
    p->steps = 8;
    p->cfg_scale = c->cfg;
    p->sampler = c->sampler;
    p->scheduler = c->scheduler;
    p->seed = c->seed;
    p->rng = SDX_RNG_CPU;
}

/* Latent rel-L2 and the worst pixel difference against the golden case. */
static int tc_compare(sdx_ctx *ctx, const char *name, const sdx_gen_result *res, double *rel, int *worst) {
    char rel_path[256];
    snprintf(rel_path, sizeof rel_path, TC_DIR "cases/%s.safetensors", name);
    *rel = t_rel_to_file(ctx, t_shared(rel_path), "latent", (const float *)res->latents[0].data, sdx_tensor_numel(&res->latents[0]));
    T_CHECK(!isnan(*rel), "%s: %s", rel_path, sdx_last_error(ctx));
    snprintf(rel_path, sizeof rel_path, TC_DIR "cases/%s.png", name);
    *worst = t_png_diff(&res->images[0], t_shared(rel_path));
    T_CHECK(*worst < 256, "%s", rel_path);
    return T_PASS;
}

static int txt2img_with_controlnet_reproduces_comfyui(void) {
    tc_gen g;
    int r;
    if ((r = tc_gen_open(&g)) != T_PASS) return r;
    for (int i = 0; i < 2; i++) {
        sdx_gen_params p;
        sdx_gen_result res;
        sdx_control c = { g.net, &g.hint, tc_pipes[i].strength, tc_pipes[i].start, tc_pipes[i].end, NULL };
        double rel;
        int worst;
        tc_params(&tc_pipes[i], &p);
        p.controls = &c;
        p.n_controls = 1;
        T_CHECK(sdx_generate(g.model, &p, &res) == SDX_OK, "%s: %s", tc_pipes[i].name, sdx_last_error(g.ctx));
        if ((r = tc_compare(g.ctx, tc_pipes[i].name, &res, &rel, &worst)) != T_PASS)
            return r;
        sdx_gen_result_free(g.ctx, &res);
        T_NOTE("%s: latent rel-L2 %.3g, max pixel diff %d", tc_pipes[i].name, rel, worst);
        T_CHECK(rel <= 1e-3, "%s: latent rel-L2 %.3g > 1e-3", tc_pipes[i].name, rel);
        T_CHECK(worst <= 1, "%s: a pixel differs by %d levels", tc_pipes[i].name, worst);
    }
    tc_gen_close(&g);
    return T_PASS;
}

/* Heun calls the model twice per step, at sigma_i and sigma_i+1; each
 * call is checked against the window on its own sigma. The window here
 * starts inside the first step, so the step's second call is controlled
 * while its first is not. */
static int heun_second_calls_are_checked_against_the_window(void) {
    tc_gen g;
    tc_calls calls;
    sdx_gen_params p;
    sdx_gen_result res;
    sdx_tensor sigmas;
    sdx_control c;
    sdx__gen_control gc;
    const float *sg;
    int r, split = 0;
    memset(&calls, 0, sizeof calls);
    if ((r = tc_gen_open_logged(&g, &calls)) != T_PASS) return r;
    tc_params(&tc_pipes[0], &p);
    p.sampler = "heun";
    p.steps = 3;
    memset(&c, 0, sizeof c);
    c.net = g.net; c.image = &g.hint; c.strength = 1; c.start = 0.2f; c.end = 0.9f;
    p.controls = &c;
    p.n_controls = 1;
    calls.n = 0;
    T_CHECK(sdx_generate(g.model, &p, &res) == SDX_OK, "%s", sdx_last_error(g.ctx));
    sdx_gen_result_free(g.ctx, &res);
    T_CHECK(sdx_sampler_sigmas(g.ctx, &g.model->ms, SDX_SCHED_NORMAL, SDX_SAMPLER_HEUN, 3, 1.0, &sigmas) == SDX_OK, "%s",
            sdx_last_error(g.ctx));
    sg = (const float *)sigmas.data;
    memset(&gc, 0, sizeof gc);
    gc.sigma_start = (float)sdx__percent_to_sigma(&g.model->ms, 0.2);
    gc.sigma_end = (float)sdx__percent_to_sigma(&g.model->ms, 0.9);
    /* 3 steps: two calls each except the last (its next sigma is 0) */
    T_CHECK(calls.n == 5, "%d model calls logged, Heun makes 5 in 3 steps", calls.n);
    for (int k = 0, i = 0; i < 3; i++) {
        for (int second = 0; second < 2 && k < calls.n; second++) {
            float want_sigma = sg[i + second];
            if (second && sg[i + 1] == 0) break;
            T_CHECK(calls.sigma[k] == want_sigma, "call %d at sigma %g, expected %g", k, calls.sigma[k], want_sigma);
            T_CHECK(calls.on[k] == sdx__control_active(&gc, want_sigma), "call %d (sigma %g): control %s", k, want_sigma,
                    calls.on[k] ? "on" : "off");
            if (second && calls.on[k] != calls.on[k - 1]) split++;
            k++;
        }
    }
    T_NOTE("window %.4g..%.4g; calls:%s%s%s%s%s", gc.sigma_start, gc.sigma_end, calls.on[0] ? " on" : " off",
           calls.on[1] ? " on" : " off", calls.on[2] ? " on" : " off", calls.on[3] ? " on" : " off", calls.on[4] ? " on" : " off");
    T_CHECK(split > 0, "no step had its two calls on different sides of the window: the test proves nothing");
    sdx_tensor_free(g.ctx, &sigmas);
    tc_gen_close(&g);
    return T_PASS;
}

/* The staged API steps a controlled generation one model call at a time
 * to the same latent as sdx_generate. */
static int stepped_sessions_apply_controls_like_generate(void) {
    tc_gen g;
    sdx_gen_params p;
    sdx_gen_result res;
    sdx_control c = { NULL, NULL, 0.8f, 0.0f, 0.5f, NULL };
    sdx_cond *cond = NULL;
    sdx_sampling *s = NULL;
    int r, steps = 0;
    if ((r = tc_gen_open(&g)) != T_PASS) return r;
    tc_params(&tc_pipes[1], &p);
    c.net = g.net;
    c.image = &g.hint;
    p.controls = &c;
    p.n_controls = 1;
    T_CHECK(sdx_generate(g.model, &p, &res) == SDX_OK, "%s", sdx_last_error(g.ctx));
    T_CHECK(sdx_encode_prompt(g.model, &p, &cond) == SDX_OK && sdx_sampling_begin(g.model, &p, cond, 0, &s) == SDX_OK, "%s",
            sdx_last_error(g.ctx));
    while (!sdx_sampling_done(s) && steps < 100) {
        T_CHECK(sdx_sampling_step(s) == SDX_OK, "%s", sdx_last_error(g.ctx));
        steps++;
    }
    T_CHECK(steps == 8, "%d steps", steps);
    T_CHECK(!memcmp(sdx_sampling_latent(s)->data, res.latents[0].data, sizeof(float) * 4 * 8 * 8),
            "the stepped latent differs from sdx_generate's");
    sdx_sampling_free(s);
    sdx_cond_free(cond);
    sdx_gen_result_free(g.ctx, &res);
    tc_gen_close(&g);
    return T_PASS;
}

/* Two ControlNets of strength 0.5 and 0.5 sum to one of strength 1; one
 * with a window that never opens changes nothing. */
static int several_controlnets_sum_their_residuals(void) {
    tc_gen g;
    sdx_gen_params p;
    sdx_gen_result one, two;
    sdx_control c[3];
    double rel, rel_idle;
    int r, worst;
    if ((r = tc_gen_open(&g)) != T_PASS) return r;
    tc_params(&tc_pipes[0], &p);
    memset(c, 0, sizeof c);
    c[0].net = c[1].net = c[2].net = g.net;
    c[0].image = c[1].image = c[2].image = &g.hint;
    c[0].strength = 1.0f;
    p.controls = c;
    p.n_controls = 1;
    T_CHECK(sdx_generate(g.model, &p, &one) == SDX_OK, "%s", sdx_last_error(g.ctx));
    c[0].strength = c[1].strength = 0.5f;
    c[2].strength = 5.0f;                    /* sigma 1.62 .. 1.47: between two model calls */
    c[2].start = 0.5f;
    c[2].end = 0.52f;
    p.n_controls = 3;
    T_CHECK(sdx_generate(g.model, &p, &two) == SDX_OK, "%s", sdx_last_error(g.ctx));
    rel = t_rel_l2_f32((const float *)two.latents[0].data, (const float *)one.latents[0].data, 4 * 8 * 8);
    if ((r = tc_compare(g.ctx, "cn_txt2img_case0", &two, &rel_idle, &worst)) != T_PASS)
        return r;
    T_NOTE("0.5 + 0.5 vs 1: latent rel-L2 %.3g; vs ComfyUI %.3g", rel, rel_idle);
    T_CHECK(rel <= 1e-5, "two half-strength ControlNets differ from one by rel-L2 %.3g", rel);
    T_CHECK(rel_idle <= 1e-3, "vs the golden: rel-L2 %.3g", rel_idle);
    sdx_gen_result_free(g.ctx, &one);
    sdx_gen_result_free(g.ctx, &two);
    tc_gen_close(&g);
    return T_PASS;
}

static int parameters_record_controlnets_as_a1111s_extension(void) {
    tc_gen g;
    sdx_gen_params p;
    sdx_control c[2];
    char text[2048];
    int r;
    if ((r = tc_gen_open(&g)) != T_PASS) return r;
    tc_params(&tc_pipes[1], &p);
    memset(c, 0, sizeof c);
    c[0].net = c[1].net = g.net;
    c[0].image = c[1].image = &g.hint;
    c[0].strength = 0.8f; c[0].end = 0.5f;
    c[1].strength = 1.0f; c[1].start = 0.25f; c[1].module = "canny";
    p.controls = c;
    p.n_controls = 2;
    T_CHECK(sdx_format_parameters(g.model, &p, 1234, text, sizeof text, NULL) == SDX_OK, "format");
    T_NOTE("%s", text);
    T_CHECK(strstr(text, ", ControlNet 0: \"Module: none, Model: controlnet, Weight: 0.8, Resize Mode: Crop and Resize, "
                         "Guidance Start: 0, Guidance End: 0.5, Pixel Perfect: False, Control Mode: Balanced\""), "%s", text);
    T_CHECK(strstr(text, ", ControlNet 1: \"Module: canny, Model: controlnet, Weight: 1, Resize Mode: Crop and Resize, "
                         "Guidance Start: 0.25, Guidance End: 1,"), "%s", text);
    tc_gen_close(&g);
    return T_PASS;
}

/* ---- file layouts ----------------------------------------------------------- */

/* The diffusers name of an LDM ControlNet tensor of the tiny SD 1.x net
 * (2 ResBlocks per level), written out independently of the loader. */
static void tc_diffusers_name(const char *ldm, char *out, size_t size) {
    static const char *const res[][2] = {
        { "in_layers.0", "norm1" }, { "in_layers.2", "conv1" }, { "emb_layers.1", "time_emb_proj" },
        { "out_layers.0", "norm2" }, { "out_layers.3", "conv2" }, { "skip_connection", "conv_shortcut" },
    };
    static const char *const hint[8] = { "conv_in", "blocks.0", "blocks.1", "blocks.2", "blocks.3", "blocks.4", "blocks.5", "conv_out" };
    char head[128], tail[256];
    int n, m, k, used = 0;
    head[0] = tail[0] = 0;
    if (sscanf(ldm, "time_embed.%d.%n", &k, &used) == 1) snprintf(out, size, "time_embedding.linear_%d.%s", k ? 2 : 1, ldm + used);
    else if (sscanf(ldm, "input_hint_block.%d.%n", &k, &used) == 1) snprintf(out, size, "controlnet_cond_embedding.%s.%s", hint[k / 2], ldm + used);
    else if (sscanf(ldm, "zero_convs.%d.0.%n", &k, &used) == 1) snprintf(out, size, "controlnet_down_blocks.%d.%s", k, ldm + used);
    else if (!strncmp(ldm, "middle_block_out.0.", 19)) snprintf(out, size, "controlnet_mid_block.%s", ldm + 19);
    else if (!strncmp(ldm, "input_blocks.0.0.", 17)) snprintf(out, size, "conv_in.%s", ldm + 17);
    else {
        if (sscanf(ldm, "input_blocks.%d.%d.%n", &n, &m, &used) == 2) {
            if (n % 3 == 0) { snprintf(out, size, "down_blocks.%d.downsamplers.0.conv.%s", n / 3 - 1, ldm + used + 3); return; }
            snprintf(head, sizeof head, "down_blocks.%d.%s.%d", (n - 1) / 3, m ? "attentions" : "resnets", (n - 1) % 3);
        } else if (sscanf(ldm, "middle_block.%d.%n", &m, &used) == 1) {
            snprintf(head, sizeof head, "mid_block.%s.%d", m == 1 ? "attentions" : "resnets", m / 2);
        }
        snprintf(tail, sizeof tail, "%s", ldm + used);
        if (strstr(head, "resnets"))
            for (int i = 0; i < 6; i++) {
                size_t l = strlen(res[i][0]);
                if (!strncmp(tail, res[i][0], l)) { snprintf(tail, sizeof tail, "%s%s", res[i][1], ldm + used + l); break; }
            }
        snprintf(out, size, "%s.%s", head, tail);
    }
}

/* Rewrites the golden ControlNet: names (prefix dropped, or diffusers) and
 * dtype, leaving out the tensor named `drop` (NULL: none). */
static int tc_rewrite_without(sdx_ctx *ctx, const char *src, const char *dst, int diffusers, sdx_dtype dtype, const char *drop) {
    sdx_st *st;
    sdx_tensor *ts;
    char (*names)[160];
    int n, m = 0;
    T_CHECK(sdx_st_open(ctx, src, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    n = sdx_st_count(st);
    ts = (sdx_tensor *)calloc((size_t)n, sizeof *ts);
    names = (char (*)[160])calloc((size_t)n, sizeof *names);
    T_CHECK(ts && names, "alloc");
    for (int i = 0, j = 0; i < n; i++) {
        const sdx_tensor *t = sdx_st_get(st, i);
        const char *ldm = t->name + strlen("control_model.");
        if (drop && !strcmp(ldm, drop)) continue;
        float *f = (float *)malloc(sizeof(float) * (size_t)sdx_tensor_numel(t));
        T_CHECK(f && !strncmp(t->name, "control_model.", 14), "%s", t->name);
        if (diffusers) tc_diffusers_name(ldm, names[j], sizeof names[j]);
        else snprintf(names[j], sizeof names[j], "%s", ldm);
        T_CHECK(sdx_tensor_alloc(ctx, &ts[j], dtype, t->ndim, t->shape) == SDX_OK, "alloc");
        sdx__load_f32(t->data, t->dtype, 0, sdx_tensor_numel(t), f);
        sdx__store_f32(ts[j].data, dtype, 0, sdx_tensor_numel(t), f);
        ts[j].name = names[j];
        free(f);
        m = ++j;
    }
    T_CHECK(sdx_st_write(ctx, dst, ts, m, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < n; i++) sdx_tensor_free(ctx, &ts[i]);
    free(ts);
    free(names);
    sdx_st_close(st);
    return T_PASS;
}

static int tc_rewrite(sdx_ctx *ctx, const char *src, const char *dst, int diffusers, sdx_dtype dtype) {
    return tc_rewrite_without(ctx, src, dst, diffusers, dtype, NULL);
}

/* Worst residual rel-L2 of control_case0 with the ControlNet file at path. */
static int tc_case0_with(const char *path, double *worst, double *worst_skip) {
    tc_nets t;
    sdx_st *cs;
    sdx_tensor cx;
    sdx__unet_control ctl;
    int r;
    if ((r = tc_open(&t, path)) != T_PASS) return r;
    T_CHECK(sdx_st_open(t.ctx, t_shared(tc_cases[0].file), &cs) == SDX_OK, "%s", sdx_last_error(t.ctx));
    if ((r = tc_context(t.ctx, tc_cases[0].rows, 2, &cx)) != T_PASS) return r;
    if ((r = tc_residuals(&t, cs, tc_cases[0].png, &cx, 1.0f, 0, &ctl, worst, worst_skip)) != T_PASS) return r;
    sdx_tensor_free(t.ctx, &cx);
    sdx_st_close(cs);
    tc_close(&t);
    return T_PASS;
}

static int every_layout_and_dtype_loads_the_same_network(void) {
    T_NEED_SHARED(cnp, TC_DIR "controlnet.safetensors");
    T_NEED_SHARED(cp, TC_DIR "cases/control_case0.safetensors");
    const struct { const char *what, *path; int diffusers; sdx_dtype dtype; double tol; } v[] = {
        { "no prefix, F16", t_tmp("sdx_t_cn_plain.safetensors"), 0, SDX_F16, 1e-5 },
        { "diffusers, F16", t_tmp("sdx_t_cn_diffusers.safetensors"), 1, SDX_F16, 1e-5 },
        { "diffusers, F32", t_tmp("sdx_t_cn_diffusers32.safetensors"), 1, SDX_F32, 1e-5 },
        /* bf16 rounds every weight (8 bits of mantissa): a close, not equal,
         * net. Checked on the skip residuals: the middle one comes out of
         * 1x1 GroupNorms of 2 values, which amplify any rounding (README). */
        { "no prefix, BF16", t_tmp("sdx_t_cn_bf16.safetensors"), 0, SDX_BF16, 3e-2 },
    };
    sdx_ctx *ctx = t_ctx();
    char src[1024];
    snprintf(src, sizeof src, "%s", cnp);   /* t_shared's buffers are reused */
    (void)cp;
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++) {
        double worst, worst_skip, checked;
        int r;
        if ((r = tc_rewrite(ctx, src, v[i].path, v[i].diffusers, v[i].dtype)) != T_PASS) return r;
        if ((r = tc_case0_with(v[i].path, &worst, &worst_skip)) != T_PASS) return r;
        remove(v[i].path);
        checked = v[i].dtype == SDX_BF16 ? worst_skip : worst;
        T_NOTE("%s: residuals rel-L2 <= %.3g (skips %.3g)", v[i].what, worst, worst_skip);
        T_CHECK(checked <= v[i].tol, "%s: residual rel-L2 %.3g > %.3g", v[i].what, checked, v[i].tol);
        T_CHECK(v[i].dtype != SDX_BF16 || worst > 1e-4, "%s: bf16 weights cannot be exact (%.3g): were they used?", v[i].what, worst);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int mismatched_controlnet_is_an_error_naming_both_files(void) {
    T_NEED_SHARED(cnp, TC_DIR "controlnet.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    static const char *const areas[2] = { "sd2", "sdxl" };
    sdx_ctx *ctx = t_ctx();
    (void)v;
    for (int a = 0; a < 2; a++) {
        const char *mp = t_golden_ckpt(areas[a]);
        sdx_model *m;
        sdx_controlnet *cn = (sdx_controlnet *)&m;
        T_SKIP_IF(!t_file_exists(mp), "golden data %s not found", mp);
        m = t_model_file(ctx, mp);
        T_CHECK(m, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_controlnet_load(m, cnp, &cn) == SDX_ERR_MODEL && cn == NULL, "%s: an SD 1.x ControlNet loaded", areas[a]);
        T_NOTE("%s", sdx_last_error(ctx));
        T_CHECK(strstr(sdx_last_error(ctx), cnp) && strstr(sdx_last_error(ctx), mp) && strstr(sdx_last_error(ctx), "SD 1.x") &&
                strstr(sdx_last_error(ctx), a ? "SDXL" : "SD 2.x") && strstr(sdx_last_error(ctx), "context width"),
                "%s", sdx_last_error(ctx));
        /* a checkpoint is not a ControlNet */
        T_CHECK(sdx_controlnet_load(m, mp, &cn) == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "not a ControlNet"), "%s",
                sdx_last_error(ctx));
        sdx_model_free(m);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* A ControlNet file missing a tensor names the file and the tensor, in
 * the layout it is in. */
static int incomplete_controlnet_files_name_the_missing_tensor(void) {
    T_NEED_SHARED(cnp, TC_DIR "controlnet.safetensors");
    static const struct { int diffusers; const char *drop, *named; } cases[] = {
        { 0, "zero_convs.5.0.bias", "'zero_convs.5.0.bias'" },
        { 0, "input_blocks.4.1.transformer_blocks.0.attn2.to_k.weight", "'input_blocks.4.1.transformer_blocks.0.attn2.to_k.weight'" },
        { 1, "middle_block_out.0.weight", "'controlnet_mid_block.weight'" },
        { 1, "input_blocks.5.0.emb_layers.1.weight", "'down_blocks.1.resnets.1.time_emb_proj.weight'" },
    };
    const char *path = t_tmp("sdx_t_cn_incomplete.safetensors");
    char src[1024];
    tc_gen g;
    int r;
    snprintf(src, sizeof src, "%s", cnp);
    if ((r = tc_gen_open(&g)) != T_PASS) return r;
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        sdx_controlnet *cn = NULL;
        if ((r = tc_rewrite_without(g.ctx, src, path, cases[i].diffusers, SDX_F16, cases[i].drop)) != T_PASS) return r;
        T_CHECK(sdx_controlnet_load(g.model, path, &cn) == SDX_ERR_MODEL && !cn, "without %s: loaded", cases[i].drop);
        T_NOTE("%s", sdx_last_error(g.ctx));
        T_CHECK(strstr(sdx_last_error(g.ctx), path) && strstr(sdx_last_error(g.ctx), cases[i].named), "without %s: %s",
                cases[i].drop, sdx_last_error(g.ctx));
    }
    remove(path);
    tc_gen_close(&g);
    return T_PASS;
}

static int bad_controls_are_rejected_with_a_reason(void) {
    tc_gen g;
    sdx_gen_params p;
    sdx_gen_result res;
    sdx_image tiny = { 0, 0, 3, NULL };
    sdx_control c;
    int r;
    if ((r = tc_gen_open(&g)) != T_PASS) return r;
    tc_params(&tc_pipes[0], &p);
    p.steps = 1;
    p.controls = &c;
    p.n_controls = 1;
    memset(&c, 0, sizeof c);
    c.net = g.net; c.image = &g.hint; c.strength = 1; c.start = 0.6f; c.end = 0.4f;
    T_CHECK(sdx_generate(g.model, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(g.ctx), "start < end"), "%s",
            sdx_last_error(g.ctx));
    c.start = 0; c.end = 1; c.image = &tiny;
    T_CHECK(sdx_generate(g.model, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(g.ctx), "picture"), "%s",
            sdx_last_error(g.ctx));
    c.image = NULL;
    c.net = NULL;
    T_CHECK(sdx_generate(g.model, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(g.ctx), "no ControlNet"), "%s",
            sdx_last_error(g.ctx));
    tc_gen_close(&g);
    return T_PASS;
}

/* ---- SD 2.x and SDXL ControlNets -------------------------------------------------- */

/* The architecture of the tiny sd2 / sdxl golden UNets (their config.json). */
static void tc_tiny_arch(int sdxl, mk_unet_arch *a) {
    static const int mult[2][4] = { { 1, 1, 2, 2 }, { 1, 2, 4, 0 } }, depth[2][4] = { { 1, 1, 1, 0 }, { 0, 1, 2, 0 } };
    memset(a, 0, sizeof *a);
    a->in_channels = a->out_channels = 4;
    a->model_channels = sdxl ? 32 : 64;
    a->n_levels = sdxl ? 3 : 4;
    for (int l = 0; l < a->n_levels; l++) a->mult[l] = mult[sdxl][l], a->res[l] = 2, a->depth[l] = depth[sdxl][l];
    a->depth_mid = sdxl ? 2 : 1;
    a->context_dim = sdxl ? 192 : 128;
    a->linear_proj = 1;
    a->adm_channels = sdxl ? 1664 : 0;
}

/* A generated ControlNet for the sd2 / sdxl tiny models (linear projections,
 * head_dim 64; SDXL's takes the vector y through label_emb) steers their
 * generations, and does not fit the SD 1.x model. */
static int sd2_and_sdxl_controlnets_steer_their_models_only(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(hintp, TC_DIR "cases/hint_64x64.png");
    T_NEED_SHARED(sd1, "golden/sd1/model.safetensors");
    static const char *const areas[2] = { "sd2", "sdxl" };
    const char *path = t_tmp("sdx_t_cn_generated.safetensors");
    char sd1_path[1024];
    sdx_image hint = t_png_load(hintp, 3);
    (void)v;
    snprintf(sd1_path, sizeof sd1_path, "%s", sd1);
    T_CHECK(hint.data, "hint");
    for (int a = 0; a < 2; a++) {
        char err[256];
        const char *mp = t_golden_ckpt(areas[a]);
        mk_unet_arch arch;
        sdx_ctx *ctx = t_ctx();
        sdx_model *m, *m1;
        sdx_controlnet *cn = NULL, *wrong = NULL;
        sdx_gen_params p;
        sdx_gen_result plain, controlled;
        sdx_control c;
        double change;
        T_SKIP_IF(!t_file_exists(mp), "golden data %s not found", mp);
        tc_tiny_arch(a, &arch);
        T_CHECK(mk_write_controlnet(path, &arch, 1, 11, err, sizeof err), "%s", err);
        m = t_model_file(ctx, mp);
        T_CHECK(m, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_controlnet_load(m, path, &cn) == SDX_OK, "%s: %s", areas[a], sdx_last_error(ctx));
        T_CHECK(cn->net.enc.head_dim == 64 && cn->net.enc.adm_channels == (a ? 1664 : 0), "%s: heads / label_emb", areas[a]);
        memset(&p, 0, sizeof p);
        p.prompt = TC_PROMPT;
        p.width = p.height = 64;
        p.steps = 3;
        p.sampler = "heun";
        p.seed = 5;
        T_CHECK(sdx_generate(m, &p, &plain) == SDX_OK, "%s", sdx_last_error(ctx));
        c.net = cn; c.image = &hint; c.strength = 0.7f; c.start = 0.1f; c.end = 0.9f; c.module = NULL;
        p.controls = &c;
        p.n_controls = 1;
        T_CHECK(sdx_generate(m, &p, &controlled) == SDX_OK, "%s", sdx_last_error(ctx));
        change = t_rel_l2_f32((const float *)controlled.latents[0].data, (const float *)plain.latents[0].data, 4 * 8 * 8);
        T_NOTE("%s: the ControlNet changes the latent by rel-L2 %.3g", areas[a], change);
        T_CHECK(change > 1e-2 && isfinite(change), "%s: the control changed the latent by %.3g", areas[a], change);
        sdx_gen_result_free(ctx, &plain);
        /* the SD 1.x model: wrong context width (and label_emb for SDXL) */
        m1 = t_model_file(ctx, sd1_path);
        T_CHECK(m1, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_controlnet_load(m1, path, &wrong) == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), a ? "SDXL" : "SD 2.x") &&
                strstr(sdx_last_error(ctx), sd1_path), "%s: %s", areas[a], sdx_last_error(ctx));
        /* nor does a net loaded for another model pass at generation time */
        T_CHECK(sdx_generate(m1, &p, &plain) != SDX_OK, "a %s ControlNet ran on the SD 1.x model", areas[a]);
        sdx_gen_result_free(ctx, &controlled);
        sdx_controlnet_free(cn);
        sdx_model_free(m1);
        sdx_model_free(m);
        sdx_destroy(ctx);
        remove(path);
    }
    stbi_image_free(hint.data);
    return T_PASS;
}

/* ---- Canny ------------------------------------------------------------------------ */

/* Edge pixels of a w x h grey picture drawn by fn. */
static int tc_canny(int w, int h, uint8_t (*fn)(int x, int y), float low, float high, uint8_t *edges) {
    sdx_ctx *ctx = t_ctx();
    sdx_image in = { w, h, 1, NULL }, out;
    int n = 0;
    in.data = (uint8_t *)malloc((size_t)w * (size_t)h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) in.data[y * w + x] = fn(x, y);
    if (sdx_canny(ctx, &in, low, high, &out) != SDX_OK) n = -1;
    else {
        for (int i = 0; i < w * h; i++) {
            edges[i] = out.data[3 * i];
            n += edges[i] == 255 && out.data[3 * i + 1] == 255 && out.data[3 * i + 2] == 255;
        }
        sdx_image_free(ctx, &out);
    }
    free(in.data);
    sdx_destroy(ctx);
    return n;
}

static uint8_t tc_square(int x, int y) { return x >= 10 && x < 30 && y >= 10 && y < 30 ? 200 : 20; }
/* a vertical step at x = 10 fading from contrast 200 (strong) at the top
 * to 40 (weak) at the bottom, and a separate weak step (40) at x = 30 */
static uint8_t tc_steps(int x, int y) { return (uint8_t)((x >= 10 ? 200 - 160 * y / 39 : 0) + (x >= 30 ? 40 : 0)); }
static uint8_t tc_ramp(int x, int y) { (void)y; return (uint8_t)(x * 4); }

static int canny_finds_thin_edges_with_hysteresis(void) {
    uint8_t e[40 * 40];
    int n = tc_canny(40, 40, tc_square, 100, 200, e), off = 0, rows = 0;
    T_CHECK(n > 0, "no edges on a square");
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++) {
            int by_outline = (x >= 9 && x <= 30 && y >= 9 && y <= 30) && !(x >= 11 && x <= 28 && y >= 11 && y <= 28);
            off += e[y * 40 + x] && !by_outline;
        }
    T_CHECK(off == 0, "%d edge pixels away from the square's outline", off);
    /* thin: one pixel per row on the left side */
    for (int y = 12; y < 28; y++) rows += (e[y * 40 + 9] != 0) + (e[y * 40 + 10] != 0) == 1;
    T_CHECK(rows == 16, "left side not one pixel thick (%d of 16 rows)", rows);
    T_CHECK(tc_canny(40, 40, tc_square, 100, 5000, e) == 0, "edges above every gradient with high = 5000");
    /* L1 Sobel of a step of 40 is 160: weak between 100 and 200 */
    n = tc_canny(40, 40, tc_steps, 100, 300, e);
    T_CHECK(e[5 * 40 + 9] || e[5 * 40 + 10], "strong step missing");
    T_CHECK(e[35 * 40 + 9] || e[35 * 40 + 10], "weak step connected to the strong one was dropped");
    for (int y = 0; y < 40; y++) T_CHECK(!e[y * 40 + 29] && !e[y * 40 + 30], "isolated weak edge kept at row %d", y);
    T_CHECK(tc_canny(40, 40, tc_steps, 250, 300, e) > 0 && !e[38 * 40 + 9] && !e[38 * 40 + 10], "low = 250 keeps the weak end");
    /* a smooth ramp (gradient 16) has no edges */
    T_CHECK(tc_canny(40, 40, tc_ramp, 100, 200, e) == 0, "edges on a smooth ramp");
    return T_PASS;
}

/* ---- the sdx command ------------------------------------------------------------ */

static int cli_control_flags_reproduce_comfyui(void) {
    T_NEED_SHARED(cnp, TC_DIR "controlnet.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(hint, TC_DIR "cases/hint_64x64.png");
    T_NEED_SHARED(ref, TC_DIR "cases/cn_txt2img_case1.png");
    char cmd[4096];
    const char *png = t_tmp("sdx_t_cn_cli.png");
    int worst, rc;
    T_NEED_SDX_COMMAND();
    (void)v;
    remove(png);
    snprintf(cmd, sizeof cmd,
             "./examples/sdx -m '%s' --vocab '%s/vocab' -p '" TC_PROMPT "' -W 64 -H 64 --steps 8 --cfg-scale 5 "
             "--sampling-method dpmpp_2m --scheduler karras -s 1234 --rng cpu --control-net '%s' --control-image '%s' "
             "--control-strength 0.8 --control-end 0.5 -o %s 2>/dev/null",
             t_shared("golden/sd1/model.safetensors"), t_shared_dir(), cnp, hint, png);
    rc = system(cmd);
    T_CHECK(rc == 0, "sdx failed: %s", cmd);
    worst = t_pngs_diff(png, ref);
    T_CHECK(worst < 256, "PNG sizes");
    T_NOTE("cn_txt2img_case1 by the CLI: max pixel diff %d", worst);
    T_CHECK(worst <= 1, "PNG differs by %d levels", worst);
    /* --canny: the picture becomes an edge map first, and the PNG says so */
    snprintf(cmd, sizeof cmd,
             "./examples/sdx -m '%s' --vocab '%s/vocab' -p x -W 64 -H 64 --steps 1 --control-net '%s' --control-image '%s' "
             "--canny --canny-low 50 -o %s 2>/dev/null && grep -a -q 'Module: canny' %s",
             t_shared("golden/sd1/model.safetensors"), t_shared_dir(), cnp, hint, png, png);
    T_CHECK(system(cmd) == 0, "--canny run failed or its PNG lacks 'Module: canny'");
    /* unmatched flags are an error before any work */
    snprintf(cmd, sizeof cmd, "./examples/sdx -m x -p x --control-image '%s' -o %s 2>/dev/null", hint, png);
    T_CHECK(system(cmd) != 0, "--control-image without --control-net accepted");
    snprintf(cmd, sizeof cmd, "./examples/sdx -m x -p x --control-net '%s' --control-image '%s' --control-start 0.7 "
             "--control-end 0.2 -o %s 2>/dev/null", cnp, hint, png);
    T_CHECK(system(cmd) != 0, "start after end accepted");
    remove(png);
    return T_PASS;
}

static const t_case t_controlnet_cases[] = {
    { "component_cases_give_comfyui_residuals_and_eps", component_cases_give_comfyui_residuals_and_eps },
    { "hint_crop_and_nearest_exact_resize_match_comfyui_exactly", hint_crop_and_nearest_exact_resize_match_comfyui_exactly },
    { "centre_crop_rounds_half_to_even_in_double", centre_crop_rounds_half_to_even_in_double },
    { "window_sigmas_and_controlled_calls_follow_comfyui", window_sigmas_and_controlled_calls_follow_comfyui },
    { "txt2img_with_controlnet_reproduces_comfyui", txt2img_with_controlnet_reproduces_comfyui },
    { "heun_second_calls_are_checked_against_the_window", heun_second_calls_are_checked_against_the_window },
    { "stepped_sessions_apply_controls_like_generate", stepped_sessions_apply_controls_like_generate },
    { "several_controlnets_sum_their_residuals", several_controlnets_sum_their_residuals },
    { "parameters_record_controlnets_as_a1111s_extension", parameters_record_controlnets_as_a1111s_extension },
    { "every_layout_and_dtype_loads_the_same_network", every_layout_and_dtype_loads_the_same_network },
    { "mismatched_controlnet_is_an_error_naming_both_files", mismatched_controlnet_is_an_error_naming_both_files },
    { "incomplete_controlnet_files_name_the_missing_tensor", incomplete_controlnet_files_name_the_missing_tensor },
    { "bad_controls_are_rejected_with_a_reason", bad_controls_are_rejected_with_a_reason },
    { "sd2_and_sdxl_controlnets_steer_their_models_only", sd2_and_sdxl_controlnets_steer_their_models_only },
    { "canny_finds_thin_edges_with_hysteresis", canny_finds_thin_edges_with_hysteresis },
    { "cli_control_flags_reproduce_comfyui", cli_control_flags_reproduce_comfyui },
    { NULL, NULL },
};

SDX_TEST_SUITE(controlnet, t_controlnet_cases)
