/* Suite "upscale": ESRGAN-family upscalers (RRDBNet) against the outputs
 * of BasicSR's network and Real-ESRGAN's RealESRGANer
 * (shared/golden/upscale): every public case in f32 and as the 8-bit
 * image, the key layouts, tiles, the LeakyReLU kernel, the fake device,
 * bad files and arguments, and the sdx command's -M upscale. Uses the
 * fake device of t_backend.c (included before this file). */
#include "test.h"

#define UP_DIR "golden/upscale"

typedef struct up_case {
    char name[64], kind[16], model[512], input[512], png[512], ref[512];
    int repeats, tile, tile_pad;
} up_case;

/* The cases of index.json; -1 when it cannot be read. */
static int up_cases(sdx_ctx *ctx, up_case *out, int max) {
    char path[512];
    sdx__json_doc doc;
    const sdx__json *list, *c;
    int n = 0;
    snprintf(path, sizeof path, "%s/%s/index.json", t_shared_dir(), UP_DIR);
    if (sdx__json_parse_file(ctx, path, &doc) != SDX_OK) return -1;
    list = sdx__json_get(doc.root, "cases");
    for (c = list ? list->child : NULL; c && n < max; c = c->next, n++) {
        up_case *u = &out[n];
        const sdx__json *tile = sdx__json_get(c, "tile"), *pad = sdx__json_get(c, "tile_pad");
        memset(u, 0, sizeof *u);
        snprintf(u->name, sizeof u->name, "%s", sdx__json_get(c, "name")->str);
        snprintf(u->kind, sizeof u->kind, "%s", sdx__json_get(c, "kind")->str);
        snprintf(u->model, sizeof u->model, "%s/%s/%s", t_shared_dir(), UP_DIR, sdx__json_get(c, "model")->str);
        snprintf(u->input, sizeof u->input, "%s/%s/%s", t_shared_dir(), UP_DIR, sdx__json_get(c, "input")->str);
        snprintf(u->png, sizeof u->png, "%s/%s/%s", t_shared_dir(), UP_DIR, sdx__json_get(c, "ref_png")->str);
        snprintf(u->ref, sizeof u->ref, "%s/%s/%s", t_shared_dir(), UP_DIR, sdx__json_get(c, "ref_float")->str);
        u->repeats = (int)sdx__json_get(c, "repeats")->num;
        u->tile = tile ? (int)tile->num : -1;
        u->tile_pad = pad ? (int)pad->num : -1;
    }
    sdx__json_free(&doc);
    return n;
}

/* x [1, 3, h, w] (host f32) through the upscaler; y is allocated. */
static int up_run_f32(sdx_upscaler *up, const sdx_tensor *x, sdx_tensor *y) {
    int64_t s = sdx_upscaler_scale(up), shape[4] = { 1, 3, x->shape[2] * s, x->shape[3] * s };
    int rc = sdx_tensor_alloc(up->ctx, y, SDX_F32, 4, shape);
    return rc == SDX_OK ? sdx__upscale_f32(up, (const float *)x->data, x->shape[2], x->shape[3], (float *)y->data) : rc;
}

static void up_clamp01(sdx_tensor *t) {
    float *v = (float *)t->data;
    for (int64_t i = 0; i < sdx_tensor_numel(t); i++) v[i] = v[i] < 0 ? 0 : v[i] > 1 ? 1 : v[i];
}

/* got against tensor `key` of the reference file: rel-L2 <= 1e-5, the
 * README's float bar (float64 runs of the upstream modules are within 4.4e-7). */
static int up_within(sdx_ctx *ctx, const char *what, const char *ref, const char *key, const sdx_tensor *got) {
    double rel = t_rel_to_file(ctx, ref, key, (const float *)got->data, sdx_tensor_numel(got));
    T_NOTE("%s %s: rel-L2 %.3g", what, key, rel);
    T_CHECK(rel <= 1e-5, "%s %s: rel-L2 %.3g (limit 1e-5)", what, key, rel);
    return T_PASS;
}

/* The README's PNG bar against the reference PNG: max |d| <= 1 level per
 * value and mean |d| <= 0.05 (truncating instead of rounding gives 0.5). */
static int up_png_close(const char *what, const sdx_image *img, const char *png) {
    sdx_image want = t_png_load(png, 3);
    double sum = 0;
    int worst = 0;
    size_t n;
    T_CHECK(want.data, "%s: cannot read %s", what, png);
    T_CHECK(img->width == want.width && img->height == want.height && img->channels == 3, "%s: %dx%d, the reference %dx%d",
            what, img->width, img->height, want.width, want.height);
    n = (size_t)want.width * (size_t)want.height * 3;
    for (size_t i = 0; i < n; i++) {
        int d = abs(img->data[i] - want.data[i]);
        worst = d > worst ? d : worst;
        sum += d;
    }
    stbi_image_free(want.data);
    T_NOTE("%s PNG: max |d| %d, mean |d| %.4f levels", what, worst, sum / (double)n);
    T_CHECK(worst <= 1 && sum / (double)n <= 0.05, "%s PNG: max |d| %d (limit 1), mean |d| %.4f (limit 0.05)", what, worst, sum / (double)n);
    return T_PASS;
}

static sdx_upscaler *up_load(sdx_ctx *ctx, const char *file) {
    sdx_upscaler *up = NULL;
    return sdx_upscaler_load(ctx, t_shared(file) ? t_shared(file) : file, &up) == SDX_OK ? up : NULL;
}

/* ---- the reference outputs ------------------------------------------------ */

/* One case: its float output (pass 2's for repeats, from pass2_input),
 * unclamped and clamped, and the 8-bit image sdx_upscale makes. */
static int up_check_case(sdx_ctx *ctx, const up_case *c) {
    sdx_upscaler *up = NULL;
    sdx_tensor x, y, ref_in;
    sdx_image in = t_png_load(c->input, 3), out;
    T_CHECK(in.data, "%s: cannot read %s", c->name, c->input);
    T_CHECK(sdx_upscaler_load(ctx, c->model, &up) == SDX_OK, "%s: %s", c->name, sdx_last_error(ctx));
    T_CHECK(sdx_upscaler_set_tiling(up, c->tile, c->tile_pad) == SDX_OK, "%s", sdx_last_error(ctx));
    if (!strcmp(c->kind, "tiled")) {          /* only the output is stored: run from the PNG / 255 */
        int64_t shape[4] = { 1, 3, in.height, in.width };
        T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 4, shape) == SDX_OK, "alloc");
        for (int64_t i = 0; i < 3 * (int64_t)in.width * in.height; i++)
            ((float *)x.data)[i] = (float)in.data[(i % ((int64_t)in.width * in.height)) * 3 + i / ((int64_t)in.width * in.height)] / 255.0f;
    } else {
        T_CHECK(t_read_f32(ctx, c->ref, c->repeats > 1 ? "pass2_input" : "input", &x) == SDX_OK, "%s: %s", c->name, sdx_last_error(ctx));
    }
    T_CHECK(up_run_f32(up, &x, &y) == SDX_OK, "%s: %s", c->name, sdx_last_error(ctx));
    if (strcmp(c->kind, "tiled") && up_within(ctx, c->name, c->ref, "output_unclamped", &y) != T_PASS) return T_FAIL;
    up_clamp01(&y);
    if (up_within(ctx, c->name, c->ref, "output", &y) != T_PASS) return T_FAIL;
    /* the input tensor is the PNG / 255 in f32, as sdx_upscale reads it */
    if (c->repeats == 1 && strcmp(c->kind, "tiled")) {
        T_CHECK(t_read_f32(ctx, c->ref, "input", &ref_in) == SDX_OK, "%s", sdx_last_error(ctx));
        for (int64_t i = 0; i < sdx_tensor_numel(&ref_in); i++) {
            int64_t plane = (int64_t)in.width * in.height;
            T_CHECK(((float *)ref_in.data)[i] == (float)in.data[(i % plane) * 3 + i / plane] / 255.0f, "%s: input %lld", c->name, (long long)i);
        }
        sdx_tensor_free(ctx, &ref_in);
    }
    T_CHECK(sdx_upscale(up, &in, c->repeats, &out) == SDX_OK, "%s: %s", c->name, sdx_last_error(ctx));
    if (up_png_close(c->name, &out, c->png) != T_PASS) return T_FAIL;
    sdx_image_free(ctx, &out);
    stbi_image_free(in.data);
    sdx_tensor_free(ctx, &x);
    sdx_tensor_free(ctx, &y);
    sdx_upscaler_free(up);
    return T_PASS;
}

static int every_public_case_matches_the_reference(void) {
    T_NEED_SHARED(index, UP_DIR "/index.json");
    sdx_ctx *ctx = t_ctx();
    up_case cases[32];
    int n = up_cases(ctx, cases, 32), kinds = 0;
    T_CHECK(n >= 10, "index.json: %d cases (%s)", n, sdx_last_error(ctx));
    for (int i = 0; i < n; i++) {
        if (up_check_case(ctx, &cases[i]) != T_PASS) return T_FAIL;
        kinds |= (cases[i].repeats > 1) | (!strcmp(cases[i].kind, "tiled") << 1);
    }
    T_CHECK(kinds == 3, "a repeat case and a tiled case ran");
    sdx_destroy(ctx);
    (void)index;
    return T_PASS;
}

/* Pass 1 of the repeat case, rounded to 8 bits, is pass 2's input. */
static int repeats_read_the_8bit_image(void) {
    T_NEED_SHARED(ref, UP_DIR "/cases/x2_17x13_repeat2.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_upscaler *up = up_load(ctx, UP_DIR "/rrdb_x2.safetensors");
    sdx_image in = t_png_load(t_shared(UP_DIR "/images/img_17x13.png"), 3), once;
    sdx_tensor want;
    int worst = 0;
    T_CHECK(up && in.data, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &in, 1, &once) == SDX_OK && once.width == 34 && once.height == 26, "%s", sdx_last_error(ctx));
    T_CHECK(t_read_f32(ctx, ref, "pass2_input", &want) == SDX_OK && sdx_tensor_numel(&want) == 34 * 26 * 3, "%s", sdx_last_error(ctx));
    for (int64_t i = 0; i < 34 * 26 * 3; i++) {
        int d = abs((int)once.data[(i % (34 * 26)) * 3 + i / (34 * 26)] - (int)lrintf(((float *)want.data)[i] * 255.0f));
        worst = d > worst ? d : worst;
    }
    T_CHECK(worst <= 1, "pass 1 differs from pass2_input by %d levels", worst);
    sdx_tensor_free(ctx, &want);
    sdx_image_free(ctx, &once);
    stbi_image_free(in.data);
    sdx_upscaler_free(up);
    sdx_destroy(ctx);
    return T_PASS;
}

static int up_architecture_read_from_tensors(void) {
    static const struct { const char *file; int layout, scale, feat, blocks, grow, unshuffle, n_up; } want[] = {
        { "rrdb_x4.safetensors", SDX__ESRGAN_BASICSR, 4, 16, 2, 8, 1, 2 },
        { "rrdb_x2.safetensors", SDX__ESRGAN_BASICSR, 2, 12, 1, 8, 2, 2 },
        { "rrdb_x1.safetensors", SDX__ESRGAN_BASICSR, 1, 8, 1, 4, 4, 2 },
        { "esrgan_old_x4.safetensors", SDX__ESRGAN_OLD, 4, 16, 2, 8, 1, 2 },
    };
    T_NEED_SHARED(index, UP_DIR "/index.json");
    sdx_ctx *ctx = t_ctx();
    char path[512];
    (void)index;
    for (size_t i = 0; i < SDX__ARRAY_LEN(want); i++) {
        sdx_upscaler *up;
        const sdx__esrgan *n;
        snprintf(path, sizeof path, "%s/%s", UP_DIR, want[i].file);
        T_CHECK((up = up_load(ctx, path)) != NULL, "%s: %s", want[i].file, sdx_last_error(ctx));
        n = &up->net;
        T_CHECK((int)n->layout == want[i].layout && n->scale == want[i].scale && sdx_upscaler_scale(up) == want[i].scale &&
                n->num_feat == want[i].feat && n->num_block == want[i].blocks && n->num_grow == want[i].grow &&
                n->unshuffle == want[i].unshuffle && n->n_up == want[i].n_up,
                "%s: layout %d x%d, num_feat %d, num_block %d, num_grow_ch %d, unshuffle %d, %d stages", want[i].file, (int)n->layout,
                n->scale, n->num_feat, n->num_block, n->num_grow, n->unshuffle, n->n_up);
        T_CHECK(strlen(sdx_upscaler_name(up)) + strlen(".safetensors") == strlen(want[i].file) &&
                !strncmp(sdx_upscaler_name(up), want[i].file, strlen(sdx_upscaler_name(up))), "name %s", sdx_upscaler_name(up));
        sdx_upscaler_free(up);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- key layouts -------------------------------------------------------------- */

/* Writes rrdb_x4's tensors under the names rename() gives. */
static int up_write_renamed(sdx_ctx *ctx, const char *dst, void (*rename)(const char *from, char *to, size_t size)) {
    static char names[128][128];
    sdx_tensor ts[128];
    sdx_st *st;
    int n, rc;
    if ((rc = sdx_st_open(ctx, t_shared(UP_DIR "/rrdb_x4.safetensors"), &st)) != SDX_OK) return rc;
    n = sdx_st_count(st);
    for (int i = 0; i < n && i < 128; i++) {
        ts[i] = *sdx_st_get(st, i);
        rename(ts[i].name, names[i], sizeof names[i]);
        ts[i].name = names[i];
    }
    rc = n <= 128 ? sdx_st_write(ctx, dst, ts, n, NULL, 0) : SDX_ERR_INVALID_ARG;
    sdx_st_close(st);
    return rc;
}

/* xinntao/ESRGAN's 2019 names (transer_RRDB_models.py's targets). */
static void up_rename_2019(const char *from, char *to, size_t size) {
    static const char *const pairs[][2] = { { "conv_body", "trunk_conv" }, { "conv_up1", "upconv1" }, { "conv_up2", "upconv2" },
                                            { "conv_hr", "HRconv" } };
    int i, r, c, used = 0;
    if (sscanf(from, "body.%d.rdb%d.conv%d.%n", &i, &r, &c, &used) == 3 && used) {
        snprintf(to, size, "RRDB_trunk.%d.RDB%d.conv%d.%s", i, r, c, from + used);
        return;
    }
    for (size_t k = 0; k < SDX__ARRAY_LEN(pairs); k++)
        if (!strncmp(from, pairs[k][0], strlen(pairs[k][0])) && from[strlen(pairs[k][0])] == '.') {
            snprintf(to, size, "%s%s", pairs[k][1], from + strlen(pairs[k][0]));
            return;
        }
    snprintf(to, size, "%s", from);
}

/* The same tensors under three layouts give the same bits. */
static int every_layout_gives_the_same_bits(void) {
    T_NEED_SHARED(ref, UP_DIR "/cases/x4_17x13.safetensors");
    const char *v2019 = t_tmp("sdx_t_up_2019.safetensors");
    const char *files[3] = { UP_DIR "/rrdb_x4.safetensors", UP_DIR "/esrgan_old_x4.safetensors", v2019 };
    sdx_ctx *ctx = t_ctx();
    sdx_tensor x, y[3];
    T_CHECK(up_write_renamed(ctx, v2019, up_rename_2019) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(t_read_f32(ctx, ref, "input", &x) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 3; i++) {
        sdx_upscaler *up = up_load(ctx, files[i]);
        T_CHECK(up, "%s: %s", files[i], sdx_last_error(ctx));
        T_CHECK((int)up->net.layout == i, "%s: layout %d", files[i], (int)up->net.layout);
        T_CHECK(up_run_f32(up, &x, &y[i]) == SDX_OK, "%s: %s", files[i], sdx_last_error(ctx));
        T_CHECK(!i || !memcmp(y[i].data, y[0].data, sdx_tensor_nbytes(&y[0])), "%s differs from rrdb_x4", files[i]);
        sdx_upscaler_free(up);
    }
    for (int i = 0; i < 3; i++) sdx_tensor_free(ctx, &y[i]);
    sdx_tensor_free(ctx, &x);
    remove(v2019);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- tiles ----------------------------------------------------------------------- */

/* With tile_pad at least the receptive radius (4 + 15 per block, in the
 * network's input pixels: 34 for rrdb_x4, 19 = 38 and 76 image pixels
 * for rrdb_x2 and rrdb_x1) every output pixel sees what it sees
 * untiled: only float rounding of differently sized tensors remains (the
 * README measures ~1e-7). x2 and x1 tiles stay on the unshuffle grid, and
 * odd sides are reflect-padded before the image is cut. */
static int tiles_with_the_radius_as_context_are_exact(void) {
    static const struct { const char *model, *ref; int tile, pad; } cases[] = {
        { "rrdb_x4", "x4_32x20", 8, 34 }, { "rrdb_x2", "x2_17x13", 5, 80 }, { "rrdb_x1", "x1_17x13", 5, 80 },
    };
    T_NEED_SHARED(index, UP_DIR "/index.json");
    sdx_ctx *ctx = t_ctx();
    char path[256], ref[512];
    (void)index;
    for (size_t i = 0; i < SDX__ARRAY_LEN(cases); i++) {
        sdx_upscaler *up;
        sdx_tensor x, y;
        double rel;
        snprintf(path, sizeof path, "%s/%s.safetensors", UP_DIR, cases[i].model);
        snprintf(ref, sizeof ref, "%s/%s/cases/%s.safetensors", t_shared_dir(), UP_DIR, cases[i].ref);
        T_CHECK((up = up_load(ctx, path)) && t_read_f32(ctx, ref, "input", &x) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_upscaler_set_tiling(up, cases[i].tile, cases[i].pad) == SDX_OK && up_run_f32(up, &x, &y) == SDX_OK, "%s",
                sdx_last_error(ctx));
        rel = t_rel_to_file(ctx, ref, "output_unclamped", (const float *)y.data, sdx_tensor_numel(&y));
        T_NOTE("%s in tiles of %d with %d of context: rel-L2 %.3g", cases[i].ref, cases[i].tile, cases[i].pad, rel);
        T_CHECK(rel <= 1e-6, "%s: rel-L2 %.3g against the untiled reference", cases[i].ref, rel);
        sdx_tensor_free(ctx, &y);
        sdx_tensor_free(ctx, &x);
        sdx_upscaler_free(up);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* Automatic tiling: untiled within the budget; above it, square tiles of
 * a multiple of 8 whose pass fits, with Real-ESRGAN's 10 pixels of
 * context (x1: 12, a multiple of the unshuffle). */
static int automatic_tiles_fit_the_budget(void) {
    T_NEED_SHARED(model, UP_DIR "/rrdb_x1.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_upscaler *up = up_load(ctx, UP_DIR "/rrdb_x1.safetensors");
    sdx__esrgan_tiling t;
    int64_t big = 1 << 14;
    T_CHECK(up, "%s", sdx_last_error(ctx));
    t = sdx__upscaler_tiling(up, 20, 32);
    T_CHECK(t.tile == 32, "small image untiled: tile %lld", (long long)t.tile);
    t = sdx__upscaler_tiling(up, big, big);
    T_NOTE("%lldx%lld: tiles of %lld, context %lld", (long long)big, (long long)big, (long long)t.tile, (long long)t.pad);
    T_CHECK(t.tile < big && t.tile % 8 == 0 && t.pad == 12, "tile %lld, pad %lld", (long long)t.tile, (long long)t.pad);
    T_CHECK(sdx__esrgan_pass_bytes(&up->net, (t.tile + 2 * t.pad) / 4, (t.tile + 2 * t.pad) / 4) <= (double)SDX_UPSCALE_TILE_BUDGET &&
            sdx__esrgan_pass_bytes(&up->net, (t.tile + 8 + 2 * t.pad) / 4, (t.tile + 8 + 2 * t.pad) / 4) > (double)SDX_UPSCALE_TILE_BUDGET,
            "the largest tile that fits");
    T_CHECK(sdx_upscaler_set_tiling(up, -1, -1) == SDX_OK && sdx__upscaler_tiling(up, big, big).tile == big, "never tile");
    T_CHECK(sdx_upscaler_set_tiling(up, 10, 3) == SDX_OK && (t = sdx__upscaler_tiling(up, big, big)).tile == 12 && t.pad == 4,
            "rounded to the unshuffle: %lld, %lld", (long long)t.tile, (long long)t.pad);
    T_CHECK(sdx_upscaler_set_tiling(up, -2, 0) == SDX_ERR_INVALID_ARG && sdx_upscaler_set_tiling(up, 8, -5) == SDX_ERR_INVALID_ARG, "refused");
    sdx_upscaler_free(up);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- the kernel, the seam ------------------------------------------------------- */

static int leaky_relu_kernel(void) {
    static const float in[8] = { -2.5f, -0.0f, 0.0f, 1.75f, -1e-30f, 3e38f, -3e38f, 0.5f };
    sdx_ctx *ctx = t_ctx();
    int64_t shape[1] = { 8 };
    sdx_tensor x = sdx__view(SDX_F32, (void *)in, 1, shape), y, h;
    float nan_in = NAN;
    T_CHECK(sdx_tensor_alloc(ctx, &y, SDX_F32, 1, shape) == SDX_OK && sdx_tensor_alloc(ctx, &h, SDX_F16, 1, shape) == SDX_OK, "alloc");
    T_CHECK(sdx__leaky_relu(ctx, &y, &x, 0.2f) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 8; i++) {
        float want = in[i] > 0 ? in[i] : in[i] * 0.2f, got = ((float *)y.data)[i];
        T_CHECK(!memcmp(&got, &want, sizeof got), "leaky_relu(%g) = %g, expected %g", in[i], got, want);
    }
    T_CHECK(sdx__leaky_relu(ctx, &y, &y, 0.2f) == SDX_OK && ((float *)y.data)[0] == -2.5f * 0.2f * 0.2f, "in place");
    T_CHECK(sdx__leaky_relu(ctx, &h, &x, 0.2f) == SDX_OK && sdx_f16_to_f32(((uint16_t *)h.data)[3]) == 1.75f, "f16 output");
    x.data = &nan_in;
    x.shape[0] = y.shape[0] = 1;
    T_CHECK(sdx__leaky_relu(ctx, &y, &x, 0.2f) == SDX_OK && isnan(((float *)y.data)[0]), "NaN stays NaN");
    T_CHECK(sdx__leaky_relu(ctx, &y, &x, INFINITY) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "slope"), "%s", sdx_last_error(ctx));
    y.shape[0] = 2;
    T_CHECK(sdx__leaky_relu(ctx, &y, &x, 0.2f) == SDX_ERR_INVALID_ARG, "counts differ");
    y.shape[0] = 8;
    sdx_tensor_free(ctx, &y);
    sdx_tensor_free(ctx, &h);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Through the backend seam on t_backend.c's fake device (scrambled
 * device pointers): the CPU's bits, no host operand, nothing left. */
static int on_the_fake_device_equals_the_cpu(void) {
    T_NEED_SHARED(model, UP_DIR "/rrdb_x2.safetensors");
    fake_device fd;
    sdx_ctx *cpu = t_ctx(), *dev = fd_ctx(&fd);
    sdx_upscaler *uc = up_load(cpu, UP_DIR "/rrdb_x2.safetensors"), *ud;
    sdx_image in = t_png_load(t_shared(UP_DIR "/images/img_17x13.png"), 3), a, b;
    (void)model;
    T_CHECK(dev && uc && in.data, "setup: %s", sdx_last_error(cpu));
    T_CHECK((ud = up_load(dev, UP_DIR "/rrdb_x2.safetensors")) != NULL, "%s", sdx_last_error(dev));
    T_CHECK(sdx_device_bytes(dev, NULL) > 0, "weights uploaded");
    /* tiles too, so the paste runs on downloaded tiles */
    T_CHECK(sdx_upscaler_set_tiling(uc, 8, 4) == SDX_OK && sdx_upscaler_set_tiling(ud, 8, 4) == SDX_OK, "tiling");
    T_CHECK(sdx_upscale(uc, &in, 2, &a) == SDX_OK, "%s", sdx_last_error(cpu));
    T_CHECK(sdx_upscale(ud, &in, 2, &b) == SDX_OK, "%s", sdx_last_error(dev));
    T_CHECK(fd.calls > 0 && fd.host_operands == 0, "%ld kernel calls, %ld host operands", fd.calls, fd.host_operands);
    T_CHECK(a.width == b.width && a.height == b.height && !memcmp(a.data, b.data, (size_t)a.width * a.height * 3), "images differ");
    sdx_upscaler_free(ud);
    T_CHECK(sdx_device_bytes(dev, NULL) == 0 && fd.live_buffers == 0, "%zu device bytes, %ld buffers left", sdx_device_bytes(dev, NULL),
            fd.live_buffers);
    sdx_image_free(cpu, &a);
    sdx_image_free(dev, &b);
    stbi_image_free(in.data);
    sdx_upscaler_free(uc);
    sdx_destroy(cpu);
    sdx_destroy(dev);
    return T_PASS;
}

/* ---- bad files and arguments ----------------------------------------------------- */

typedef struct up_edit { const char *name; int drop; int64_t shape[4]; } up_edit;

/* An edit for t_write_variant: tensor `name` renamed away, or given
 * `shape` (zeros). */
static void up_edit_tensor(sdx_tensor *ts, int n, void *arg) {
    static float zeros[4096];
    const up_edit *e = (const up_edit *)arg;
    for (int i = 0; i < n; i++) {
        if (strcmp(ts[i].name, e->name)) continue;
        if (e->drop) { ts[i].name = "dropped"; continue; }
        memcpy(ts[i].shape, e->shape, sizeof e->shape);
        ts[i].ndim = 4;
        ts[i].dtype = SDX_F32;
        ts[i].data = zeros;
    }
}

static int up_refuses(sdx_ctx *ctx, const char *path, int code, const char *expect) {
    sdx_upscaler *up = (sdx_upscaler *)1;
    int rc = sdx_upscaler_load(ctx, path, &up);
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(rc == code && up == NULL && strstr(sdx_last_error(ctx), expect), "%s: rc %d, '%s' (expected %d with '%s')", path, rc,
            sdx_last_error(ctx), code, expect);
    return T_PASS;
}

static int bad_files_fail_clearly(void) {
    T_NEED_SHARED(x4, UP_DIR "/rrdb_x4.safetensors");
    const char *tmp = t_tmp("sdx_t_up_bad.safetensors");
    sdx_ctx *ctx = t_ctx();
    up_edit e;
    FILE *f;
    /* not a safetensors file: the PNG */
    T_CHECK(up_refuses(ctx, t_shared(UP_DIR "/images/img_24x24.png"), SDX_ERR_FORMAT, "img_24x24.png") == T_PASS, "not safetensors");
    T_CHECK(up_refuses(ctx, "/nonexistent/model.safetensors", SDX_ERR_IO, "nonexistent") == T_PASS, "missing file");
    /* a safetensors file of another model */
    if (t_shared("golden/taesd/taesd_decoder.safetensors"))
        T_CHECK(up_refuses(ctx, t_shared("golden/taesd/taesd_decoder.safetensors"), SDX_ERR_MODEL, "not an ESRGAN") == T_PASS, "TAESD");
    /* a missing RDB conv, named as the file names it (old layout too) */
    e.name = "body.1.rdb2.conv3.weight"; e.drop = 1;
    T_CHECK(t_write_variant(ctx, x4, tmp, up_edit_tensor, &e) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(up_refuses(ctx, tmp, SDX_ERR_MODEL, "missing tensor 'body.1.rdb2.conv3.weight' (upscaler)") == T_PASS, "missing");
    e.name = "model.1.sub.1.RDB2.conv3.0.bias";
    T_CHECK(t_write_variant(ctx, t_shared(UP_DIR "/esrgan_old_x4.safetensors"), tmp, up_edit_tensor, &e) == SDX_OK, "write");
    T_CHECK(up_refuses(ctx, tmp, SDX_ERR_MODEL, "missing tensor 'model.1.sub.1.RDB2.conv3.0.bias'") == T_PASS, "missing old");
    /* wrong shapes: a conv's input channels, conv_first's channels */
    {
        static const struct { const char *name; int64_t shape[4]; const char *expect; } shapes[] = {
            { "conv_hr.weight", { 16, 7, 3, 3 }, "tensor 'conv_hr.weight': expected shape [16, 16, 3, 3], found [16, 7, 3, 3]" },
            { "body.0.rdb1.conv4.weight", { 8, 32, 3, 3 }, "tensor 'body.0.rdb1.conv4.weight': expected shape [8, 40, 3, 3], found [8, 32, 3, 3]" },
            { "conv_first.weight", { 16, 6, 3, 3 }, "conv_first takes 6 input channels; sdx upscales RGB" },
            { "conv_last.weight", { 1, 16, 3, 3 }, "tensor 'conv_last.weight': expected shape [3, 16, 3, 3], found [1, 16, 3, 3]" },
        };
        for (size_t i = 0; i < SDX__ARRAY_LEN(shapes); i++) {
            e.drop = 0;
            e.name = shapes[i].name;
            memcpy(e.shape, shapes[i].shape, sizeof e.shape);
            T_CHECK(t_write_variant(ctx, x4, tmp, up_edit_tensor, &e) == SDX_OK, "write");
            T_CHECK(up_refuses(ctx, tmp, SDX_ERR_MODEL, shapes[i].expect) == T_PASS, "%s", shapes[i].name);
        }
    }
    /* not even a header */
    T_CHECK((f = fopen(tmp, "wb")) != NULL, "create %s", tmp);
    fputs("not a model", f);
    fclose(f);
    T_CHECK(up_refuses(ctx, tmp, SDX_ERR_FORMAT, "sdx_t_up_bad") == T_PASS, "garbage");
    remove(tmp);
    sdx_destroy(ctx);
    return T_PASS;
}

static int bad_arguments_are_refused(void) {
    T_NEED_SHARED(x1, UP_DIR "/rrdb_x1.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_upscaler *up = NULL;
    uint8_t px[3 * 4] = { 0 };
    sdx_image in = { 2, 2, 3, px }, gray = { 2, 2, 1, px }, out = { 0, 0, 0, NULL };
    T_CHECK(sdx_upscaler_load(ctx, NULL, &up) == SDX_ERR_INVALID_ARG && sdx_upscaler_load(NULL, x1, &up) == SDX_ERR_INVALID_ARG, "NULLs");
    T_CHECK(sdx_upscaler_load(ctx, x1, &up) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &gray, 1, &out) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "RGB"), "grey: %s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &in, 0, &out) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "repeats"), "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, NULL, 1, &out) == SDX_ERR_INVALID_ARG && sdx_upscale(NULL, &in, 1, &out) == SDX_ERR_INVALID_ARG, "NULLs");
    /* a 2x2 image: x1 pads it by reflection to 4x4 and crops back */
    T_CHECK(sdx_upscale(up, &in, 3, &out) == SDX_OK && out.width == 2 && out.height == 2, "%s", sdx_last_error(ctx));
    sdx_image_free(ctx, &out);
    sdx_upscaler_free(up);
    T_CHECK((up = up_load(ctx, UP_DIR "/rrdb_x4.safetensors")) != NULL, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &in, 12, &out) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "pixels a side"), "%s", sdx_last_error(ctx));
    sdx_upscaler_free(up);
    sdx_upscaler_free(NULL);
    T_CHECK(sdx_upscaler_scale(NULL) == 0 && !strcmp(sdx_upscaler_name(NULL), ""), "NULL queries");
    sdx_destroy(ctx);
    return T_PASS;
}

/* An edit for t_write_variant: every tensor stored in f16 (rounded once). */
static void up_to_f16(sdx_tensor *ts, int n, void *arg) {
    uint16_t *h = (uint16_t *)arg;
    for (int i = 0; i < n; i++) {
        int64_t count = sdx_tensor_numel(&ts[i]);
        sdx_f32_to_f16_n((const float *)ts[i].data, h, (size_t)count);
        ts[i].data = h;
        ts[i].dtype = SDX_F16;
        h += count;
    }
}

/* Released upscalers often come in f16: weights stay f16 in memory and
 * are widened in the kernels; the README says f16-rounded weights still
 * pass the PNG bar (not the f32 one). */
static int half_precision_weights_pass_the_png_bar(void) {
    T_NEED_SHARED(x2, UP_DIR "/rrdb_x2.safetensors");
    static uint16_t half[64 * 1024];
    const char *tmp = t_tmp("sdx_t_up_f16.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_upscaler *up = NULL;
    sdx_image in = t_png_load(t_shared(UP_DIR "/images/img_17x13.png"), 3), out;
    T_CHECK(in.data && t_write_variant(ctx, x2, tmp, up_to_f16, half) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscaler_load(ctx, tmp, &up) == SDX_OK && up->net.first.w->dtype == SDX_F16, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &in, 1, &out) == SDX_OK, "%s", sdx_last_error(ctx));
    if (up_png_close("x2_17x13 with f16 weights", &out, t_shared(UP_DIR "/cases/x2_17x13.png")) != T_PASS) return T_FAIL;
    sdx_image_free(ctx, &out);
    stbi_image_free(in.data);
    sdx_upscaler_free(up);
    remove(tmp);
    sdx_destroy(ctx);
    return T_PASS;
}

/* An edit for t_write_variant: one NaN in body.0.rdb2.conv3's weight; arg
 * is a float buffer for the poisoned copy. */
static void up_poison(sdx_tensor *ts, int n, void *arg) {
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, "body.0.rdb2.conv3.weight")) {
            memcpy(arg, ts[i].data, sdx_tensor_nbytes(&ts[i]));
            ((float *)arg)[5] = NAN;
            ts[i].data = arg;
        }
}

/* A NaN weight: the PNG is refused, and the tracer names the block. */
static int nonfinite_output_is_reported(void) {
    T_NEED_SHARED(x4, UP_DIR "/rrdb_x4.safetensors");
    static float w[8 * 32 * 9];     /* [num_grow_ch, num_feat + 2 num_grow_ch, 3, 3] */
    const char *tmp = t_tmp("sdx_t_up_nan.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_upscaler *up = NULL;
    uint8_t px[3 * 16] = { 0 };
    sdx_image in = { 4, 4, 3, px }, out;
    T_CHECK(t_write_variant(ctx, x4, tmp, up_poison, w) == SDX_OK && sdx_upscaler_load(ctx, tmp, &up) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &in, 1, &out) == SDX_ERR_NONFINITE && strstr(sdx_last_error(ctx), "NaN"), "%s", sdx_last_error(ctx));
    sdx_set_trace(ctx, 1);
    T_CHECK(sdx_upscale(up, &in, 1, &out) == SDX_ERR_NONFINITE && strstr(sdx_last_error(ctx), "upscaler at body.0"), "%s",
            sdx_last_error(ctx));
    T_NOTE("%s", sdx_last_error(ctx));
    sdx_upscaler_free(up);
    remove(tmp);
    sdx_destroy(ctx);
    return T_PASS;
}

typedef struct up_alloc_arg { const char *model; const sdx_image *in; } up_alloc_arg;

static int up_alloc_run(sdx_ctx *ctx, void *arg) {
    const up_alloc_arg *a = (const up_alloc_arg *)arg;
    sdx_upscaler *up = NULL;
    sdx_image out;
    int rc = sdx_upscaler_load(ctx, a->model, &up);
    if (rc == SDX_OK) rc = sdx_upscaler_set_tiling(up, 8, 4);
    if (rc == SDX_OK) rc = sdx_upscale(up, a->in, 2, &out);
    if (rc == SDX_OK) sdx_image_free(ctx, &out);
    sdx_upscaler_free(up);
    return rc;
}

/* Every allocation of loading and upscaling (tiles, padding, repeats)
 * failing in turn: SDX_ERR_NOMEM and nothing leaked (ASan). */
static int each_failing_allocation_is_reported(void) {
    T_NEED_SHARED(x1, UP_DIR "/rrdb_x1.safetensors");
    t_allocs f = T_ALLOCS_INIT;
    sdx_ctx *ctx = t_allocs_ctx(&f);
    sdx_image in = t_png_load(t_shared(UP_DIR "/images/img_17x13.png"), 3);
    up_alloc_arg a;
    int rc;
    a.model = x1;
    a.in = &in;
    T_CHECK(ctx && in.data, "setup");
    rc = t_fail_each_allocation(ctx, &f, up_alloc_run, &a, 400);
    stbi_image_free(in.data);
    sdx_destroy(ctx);
    return rc;
}

/* ---- the sdx command -------------------------------------------------------------- */

static int cli_writes_the_reference_png(void) {
    T_NEED_SHARED(index, UP_DIR "/index.json");
    T_NEED_SDX_COMMAND();
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static const char *const cases[][4] = {   /* model, image, repeats, reference */
        { "rrdb_x2", "img_17x13", "1", "x2_17x13" }, { "esrgan_old_x4", "img_32x20", "1", "old_x4_32x20" },
        { "rrdb_x2", "img_17x13", "2", "x2_17x13_repeat2" },
    };
    const char *png = t_tmp("sdx_t_up.png");
    static char out[8192], args[2048];
    (void)index;
    for (size_t i = 0; i < SDX__ARRAY_LEN(cases); i++) {
        sdx_image got;
        char ref[512];
        int rc;
        remove(png);
        snprintf(args, sizeof args, "-M upscale --upscale-model '%s/%s/%s.safetensors' -i '%s/%s/images/%s.png' --upscale-repeats %s -o %s",
                 t_shared_dir(), UP_DIR, cases[i][0], t_shared_dir(), UP_DIR, cases[i][1], cases[i][2], png);
        rc = t_sdx(args, out, sizeof out);
        T_CHECK(rc == 0, "sdx %s: exit %d: %s", args, rc, out);
        snprintf(ref, sizeof ref, "%s/%s/cases/%s.png", t_shared_dir(), UP_DIR, cases[i][3]);
        got = t_png_load(png, 3);
        T_CHECK(got.data, "no PNG: %s", out);
        if (up_png_close(cases[i][3], &got, ref) != T_PASS) return T_FAIL;
        stbi_image_free(got.data);
        T_CHECK(t_png_has_parameters(png, cases[i][0]), "the PNG records the upscaler");
    }
    remove(png);
    return T_PASS;
}

static int cli_refuses_bad_input(void) {
    T_NEED_SHARED(x2, UP_DIR "/rrdb_x2.safetensors");
    T_NEED_SDX_COMMAND();
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static const struct { const char *args, *expect; int code; } bad[] = {
        { "-M upscale -i IMG -o OUT", "--upscale-model", 2 },
        { "-M upscale --upscale-model MODEL -o OUT", "-i", 2 },
        { "-M upscale --upscale-model MODEL -i IMG --upscale-repeats 0 -o OUT", "--upscale-repeats 0", 2 },
        { "-M upscale --upscale-model MODEL -i IMG --upscale-repeats x -o OUT", "--upscale-repeats x", 2 },
        { "-M upscale --upscale-model IMG -i IMG -o OUT", "img_17x13.png", 1 },
        { "-M upscale --upscale-model MODEL -i /nonexistent.png -o OUT", "/nonexistent.png", 1 },
    };
    static char out[8192], args[2048], model[600], img[600], dst[600];
    snprintf(model, sizeof model, "'%s'", x2);
    snprintf(dst, sizeof dst, "'%s'", t_tmp("sdx_t_up_bad.png"));
    snprintf(img, sizeof img, "'%s/%s/images/img_17x13.png'", t_shared_dir(), UP_DIR);
    for (size_t i = 0; i < SDX__ARRAY_LEN(bad); i++) {
        const char *s = bad[i].args;
        size_t used = 0;
        int rc;
        while (*s && used + 700 < sizeof args) {    /* MODEL, IMG and OUT stand for the paths */
            if (!strncmp(s, "MODEL", 5)) { used += (size_t)snprintf(args + used, sizeof args - used, "%s", model); s += 5; }
            else if (!strncmp(s, "IMG", 3)) { used += (size_t)snprintf(args + used, sizeof args - used, "%s", img); s += 3; }
            else if (!strncmp(s, "OUT", 3)) { used += (size_t)snprintf(args + used, sizeof args - used, "%s", dst); s += 3; }
            else args[used++] = *s++;
        }
        args[used] = 0;
        rc = t_sdx(args, out, sizeof out);
        T_CHECK(rc == bad[i].code && strstr(out, bad[i].expect), "sdx %s: exit %d (expected %d), '%s' (expected '%s')", args, rc,
                bad[i].code, out, bad[i].expect);
        T_CHECK(!t_file_exists(t_tmp("sdx_t_up_bad.png")), "no output written");
    }
    return T_PASS;
}

static const t_case upscale_cases_list[] = {
    { "every_public_case_matches_the_reference", every_public_case_matches_the_reference },
    { "repeats_read_the_8bit_image", repeats_read_the_8bit_image },
    { "architecture_read_from_tensors", up_architecture_read_from_tensors },
    { "every_layout_gives_the_same_bits", every_layout_gives_the_same_bits },
    { "tiles_with_the_radius_as_context_are_exact", tiles_with_the_radius_as_context_are_exact },
    { "automatic_tiles_fit_the_budget", automatic_tiles_fit_the_budget },
    { "leaky_relu_kernel", leaky_relu_kernel },
    { "on_the_fake_device_equals_the_cpu", on_the_fake_device_equals_the_cpu },
    { "bad_files_fail_clearly", bad_files_fail_clearly },
    { "bad_arguments_are_refused", bad_arguments_are_refused },
    { "half_precision_weights_pass_the_png_bar", half_precision_weights_pass_the_png_bar },
    { "nonfinite_output_is_reported", nonfinite_output_is_reported },
    { "each_failing_allocation_is_reported", each_failing_allocation_is_reported },
    { "cli_writes_the_reference_png", cli_writes_the_reference_png },
    { "cli_refuses_bad_input", cli_refuses_bad_input },
    { NULL, NULL }
};

SDX_TEST_SUITE(upscale, upscale_cases_list)
