/* Suite "taesd": the tiny autoencoder against the reference module's
 * outputs (shared/golden/taesd), its key layouts, its kernels, the codec
 * choice in the pipeline (TAESD or VAE, previews) and the sdx command's
 * --taesd, --preview, -M decode and -M encode. */
#include "test.h"

#define TAESD_DIR "golden/taesd"

typedef struct taesd_case { char name[64], kind[16], file[512], input[512], input_tensor[32]; } taesd_case;

/* The cases of index.json; -1 when it cannot be read. */
static int taesd_cases(sdx_ctx *ctx, taesd_case *out, int max) {
    char path[512];
    sdx__json_doc doc;
    const sdx__json *list, *c;
    int n = 0;
    snprintf(path, sizeof path, "%s/%s/index.json", t_shared_dir(), TAESD_DIR);
    if (sdx__json_parse_file(ctx, path, &doc) != SDX_OK) return -1;
    list = sdx__json_get(doc.root, "cases");
    for (c = list ? list->child : NULL; c && n < max; c = c->next, n++) {
        taesd_case *t = &out[n];
        const sdx__json *in = sdx__json_get(c, "input");
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", sdx__json_get(c, "name")->str);
        snprintf(t->kind, sizeof t->kind, "%s", sdx__json_get(c, "kind")->str);
        snprintf(t->file, sizeof t->file, "%s/%s/%s", t_shared_dir(), TAESD_DIR, sdx__json_get(c, "file")->str);
        if (in) {   /* "cases/decode_8x8.safetensors:image" */
            const char *colon = strrchr(in->str, ':');
            snprintf(t->input, sizeof t->input, "%s/%s/%.*s", t_shared_dir(), TAESD_DIR, (int)(colon - in->str), in->str);
            snprintf(t->input_tensor, sizeof t->input_tensor, "%s", colon + 1);
        }
    }
    sdx__json_free(&doc);
    return n;
}

/* Loads TAESD halves from files (NULL entries skipped) into t. */
static int taesd_load_files(sdx_ctx *ctx, sdx__taesd *t, sdx_st **st, const char *a, const char *b) {
    const char *files[2] = { a, b };
    int rc = SDX_OK;
    sdx__taesd_init(t);
    st[0] = st[1] = NULL;
    for (int i = 0; i < 2 && rc == SDX_OK; i++) {
        if (!files[i]) continue;
        if ((rc = sdx_st_open(ctx, files[i], &st[i])) == SDX_OK) rc = sdx__taesd_load(ctx, t, st[i]);
    }
    return rc;
}

static void taesd_unload(sdx__taesd *t, sdx_st **st) {
    sdx__taesd_free(t);
    sdx_st_close(st[0]);
    sdx_st_close(st[1]);
}

/* Runs a half of t on a host f32 tensor; out is allocated (f32). */
static int taesd_run(sdx_ctx *ctx, const sdx__taesd *t, int decode, int clamp01, const sdx_tensor *in, sdx_tensor *out) {
    sdx__arena arena;
    int64_t shape[4];
    int rc;
    shape[0] = in->shape[0];
    shape[1] = decode ? 3 : t->latent_channels;
    shape[2] = decode ? in->shape[2] * 8 : (in->shape[2] + 7) / 8;
    shape[3] = decode ? in->shape[3] * 8 : (in->shape[3] + 7) / 8;
    if ((rc = sdx_tensor_alloc(ctx, out, SDX_F32, 4, shape)) != SDX_OK) return rc;
    sdx__arena_init(&arena, ctx, 0);
    rc = decode ? sdx__taesd_decode(ctx, t, &arena, in, out, clamp01) : sdx__taesd_encode(ctx, t, &arena, in, out);
    sdx__arena_free(&arena);
    return rc;
}

static int taesd_within(const char *what, const sdx_tensor *got, const sdx_tensor *want) {
    size_t n = (size_t)sdx_tensor_numel(want);
    double rel, mx;
    T_CHECK(sdx_tensor_numel(got) == sdx_tensor_numel(want) && sdx__same_shape(got, want), "%s: shapes differ", what);
    rel = t_rel_l2_f32((const float *)got->data, (const float *)want->data, n);
    mx = t_max_abs_f32((const float *)got->data, (const float *)want->data, n);
    T_NOTE("%s: rel-L2 %.3g, max |d| %.3g", what, rel, mx);
    T_CHECK(rel <= 1e-5 && mx <= 1e-4, "%s: rel-L2 %.3g (limit 1e-5), max |d| %.3g (limit 1e-4)", what, rel, mx);
    return T_PASS;
}

/* ---- the reference module's outputs ------------------------------------ */

static int run_public_cases(const char *kind) {
    T_NEED_SHARED(dec_path, TAESD_DIR "/taesd_decoder.safetensors");
    T_NEED_SHARED(enc_path, TAESD_DIR "/taesd_encoder.safetensors");
    sdx_ctx *ctx = t_ctx();
    taesd_case cases[16];
    sdx__taesd t;
    sdx_st *st[2];
    int n = taesd_cases(ctx, cases, 16), ran = 0, decode = !strcmp(kind, "decode");
    T_CHECK(n > 0, "index.json: %s", sdx_last_error(ctx));
    T_CHECK(taesd_load_files(ctx, &t, st, decode ? dec_path : NULL, decode ? NULL : enc_path) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < n; i++) {
        sdx_tensor in, want, got, raw;
        char what[128];
        if (strcmp(cases[i].kind, kind)) continue;
        T_CHECK(t_read_f32(ctx, decode ? cases[i].file : cases[i].input, decode ? "latent" : cases[i].input_tensor, &in) == SDX_OK,
                "%s: %s", cases[i].name, sdx_last_error(ctx));
        T_CHECK(t_read_f32(ctx, cases[i].file, decode ? "image" : "latent", &want) == SDX_OK, "%s: %s", cases[i].name, sdx_last_error(ctx));
        T_CHECK(taesd_run(ctx, &t, decode, 1, &in, &got) == SDX_OK, "%s: %s", cases[i].name, sdx_last_error(ctx));
        snprintf(what, sizeof what, "%s %s", cases[i].name, decode ? "image" : "latent");
        if (taesd_within(what, &got, &want) != T_PASS) return T_FAIL;
        if (decode && t_read_f32(ctx, cases[i].file, "decoder_out", &raw) == SDX_OK) {
            /* the network before the final clamp */
            sdx_tensor_free(ctx, &got);
            T_CHECK(taesd_run(ctx, &t, 1, 0, &in, &got) == SDX_OK, "%s", sdx_last_error(ctx));
            snprintf(what, sizeof what, "%s decoder_out (unclamped)", cases[i].name);
            if (taesd_within(what, &got, &raw) != T_PASS) return T_FAIL;
            sdx_tensor_free(ctx, &raw);
        }
        sdx_tensor_free(ctx, &in);
        sdx_tensor_free(ctx, &want);
        sdx_tensor_free(ctx, &got);
        ran++;
    }
    T_CHECK(ran >= 2, "only %d %s cases in index.json", ran, kind);
    taesd_unload(&t, st);
    sdx_destroy(ctx);
    return T_PASS;
}

static int decoder_matches_every_public_case(void) { return run_public_cases("decode"); }
static int encoder_matches_every_public_case(void) { return run_public_cases("encode"); }

static int architecture_read_from_tensors(void) {
    T_NEED_SHARED(dec_path, TAESD_DIR "/taesd_decoder.safetensors");
    T_NEED_SHARED(enc_path, TAESD_DIR "/taesd_encoder.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx__taesd t;
    sdx_st *st[2];
    T_CHECK(taesd_load_files(ctx, &t, st, dec_path, enc_path) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(t.dec.w.ctx && t.enc.w.ctx, "both halves loaded");
    T_CHECK(t.latent_channels == 4 && t.factor == 8, "latent %d channels, factor %d", t.latent_channels, t.factor);
    T_CHECK(t.dec.in_channels == 4 && t.dec.out_channels == 3 && t.dec.max_channels == 64, "decoder %d -> %d, %d wide",
            t.dec.in_channels, t.dec.out_channels, t.dec.max_channels);
    T_CHECK(t.enc.in_channels == 3 && t.enc.out_channels == 4 && t.enc.max_channels == 64, "encoder %d -> %d, %d wide",
            t.enc.in_channels, t.enc.out_channels, t.enc.max_channels);
    T_CHECK(t.dec.layer[7].b[0] == NULL && t.dec.layer[1].b[0] != NULL && t.enc.layer[2].b[0] == NULL, "bias-free convs");
    taesd_unload(&t, st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Odd sides: each stride-2 conv gives ceil(H/2), as in the reference. */
static int encoder_rounds_odd_sizes_up(void) {
    T_NEED_SHARED(enc_path, TAESD_DIR "/taesd_encoder.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx__taesd t;
    sdx_st *st[2];
    sdx_tensor img, lat;
    int64_t shape[4] = { 1, 3, 20, 28 };
    T_CHECK(taesd_load_files(ctx, &t, st, NULL, enc_path) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tensor_alloc(ctx, &img, SDX_F32, 4, shape) == SDX_OK, "alloc");
    for (int64_t i = 0; i < sdx_tensor_numel(&img); i++) ((float *)img.data)[i] = (float)t_uniform();
    T_CHECK(taesd_run(ctx, &t, 0, 0, &img, &lat) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(lat.shape[2] == 3 && lat.shape[3] == 4, "latent %lldx%lld", (long long)lat.shape[2], (long long)lat.shape[3]);
    for (int64_t i = 0; i < sdx_tensor_numel(&lat); i++) T_CHECK(isfinite(((float *)lat.data)[i]), "finite");
    sdx_tensor_free(ctx, &lat);
    /* a latent of the wrong size is refused, naming both shapes */
    shape[1] = 4; shape[2] = 2; shape[3] = 4;
    T_CHECK(sdx_tensor_alloc(ctx, &lat, SDX_F32, 4, shape) == SDX_OK, "alloc");
    {
        sdx__arena a;
        sdx__arena_init(&a, ctx, 0);
        T_CHECK(sdx__taesd_encode(ctx, &t, &a, &img, &lat) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "[1, 4, 2, 4]"),
                "%s", sdx_last_error(ctx));
        sdx__arena_free(&a);
    }
    sdx_tensor_free(ctx, &lat);
    sdx_tensor_free(ctx, &img);
    taesd_unload(&t, st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- key layouts ----------------------------------------------------------- */

/* Writes the tensors of `dec` and `enc` renamed: index i becomes
 * prefix + (i + shift). NULL files are left out. */
static int taesd_write_renamed(sdx_ctx *ctx, const char *dst, const char *dec, const char *dprefix, int dshift,
                               const char *enc, const char *eprefix, int eshift) {
    const char *src[2] = { dec, enc }, *prefix[2] = { dprefix, eprefix };
    int shift[2] = { dshift, eshift }, n = 0, rc = SDX_OK;
    sdx_st *st[2] = { NULL, NULL };
    sdx_tensor ts[160];
    static char names[160][96];
    for (int f = 0; f < 2 && rc == SDX_OK; f++) {
        if (!src[f] || (rc = sdx_st_open(ctx, src[f], &st[f])) != SDX_OK) continue;
        for (int i = 0; i < sdx_st_count(st[f]) && n < 160; i++, n++) {
            const sdx_tensor *t = sdx_st_get(st[f], i);
            char *dot;
            long idx = strtol(t->name, &dot, 10);
            ts[n] = *t;
            snprintf(names[n], sizeof names[n], "%s%ld%s", prefix[f], idx + shift[f], dot);
            ts[n].name = names[n];
        }
    }
    if (rc == SDX_OK) rc = sdx_st_write(ctx, dst, ts, n, NULL, 0);
    sdx_st_close(st[0]);
    sdx_st_close(st[1]);
    return rc;
}

static int taesd_same_outputs(sdx_ctx *ctx, const sdx__taesd *a, const sdx__taesd *b, const char *what) {
    sdx_tensor z, img_a, img_b, lat_a, lat_b;
    int64_t zs[4] = { 1, 4, 5, 6 };
    T_CHECK(sdx_tensor_alloc(ctx, &z, SDX_F32, 4, zs) == SDX_OK, "alloc");
    t_fill_normal((float *)z.data, (size_t)sdx_tensor_numel(&z), 1.5);
    T_CHECK(taesd_run(ctx, a, 1, 1, &z, &img_a) == SDX_OK && taesd_run(ctx, b, 1, 1, &z, &img_b) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(img_a.data, img_b.data, sdx_tensor_nbytes(&img_a)), "%s: decoded images differ", what);
    T_CHECK(taesd_run(ctx, a, 0, 0, &img_a, &lat_a) == SDX_OK && taesd_run(ctx, b, 0, 0, &img_a, &lat_b) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(lat_a.data, lat_b.data, sdx_tensor_nbytes(&lat_a)), "%s: encoded latents differ", what);
    sdx_tensor_free(ctx, &z);
    sdx_tensor_free(ctx, &img_a);
    sdx_tensor_free(ctx, &img_b);
    sdx_tensor_free(ctx, &lat_a);
    sdx_tensor_free(ctx, &lat_b);
    return T_PASS;
}

/* diffusers' AutoencoderTiny (what sd-cli's --taesd reads: both halves in
 * one file, decoder indices one lower) and ComfyUI's combined state dict
 * give the same network as taesd.py's two files. */
static int diffusers_and_comfyui_layouts_identical(void) {
    T_NEED_SHARED(dec_path, TAESD_DIR "/taesd_decoder.safetensors");
    T_NEED_SHARED(enc_path, TAESD_DIR "/taesd_encoder.safetensors");
    const struct { const char *file, *dp, *ep; int dshift; } variants[] = {
        { t_tmp("sdx_t_taesd_diffusers.safetensors"), "decoder.layers.", "encoder.layers.", -1 },
        { t_tmp("sdx_t_taesd_comfy.safetensors"), "taesd_decoder.", "taesd_encoder.", 0 },
    };
    sdx_ctx *ctx = t_ctx();
    sdx__taesd ref, t;
    sdx_st *rst[2], *st[2];
    char dec[512], enc[512];
    snprintf(dec, sizeof dec, "%s", dec_path);
    snprintf(enc, sizeof enc, "%s", enc_path);
    T_CHECK(taesd_load_files(ctx, &ref, rst, dec, enc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int v = 0; v < 2; v++) {
        T_CHECK(taesd_write_renamed(ctx, variants[v].file, dec, variants[v].dp, variants[v].dshift, enc, variants[v].ep, 0) == SDX_OK,
                "%s", sdx_last_error(ctx));
        T_CHECK(taesd_load_files(ctx, &t, st, variants[v].file, NULL) == SDX_OK, "%s: %s", variants[v].file, sdx_last_error(ctx));
        T_CHECK(t.dec.w.ctx && t.enc.w.ctx, "%s: one file gives both halves", variants[v].file);
        if (taesd_same_outputs(ctx, &ref, &t, variants[v].file) != T_PASS) return T_FAIL;
        taesd_unload(&t, st);
        remove(variants[v].file);
    }
    taesd_unload(&ref, rst);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Rewrites the released decoder with tensor `name` reshaped / dropped. */
typedef struct { const char *name; int drop, dim, value; } taesd_edit;
static int taesd_write_edited(sdx_ctx *ctx, const char *src, const char *dst, const taesd_edit *e) {
    sdx_st *st;
    sdx_tensor ts[160];
    static float zeros[64 * 64 * 9];
    int n = 0, rc;
    if ((rc = sdx_st_open(ctx, src, &st)) != SDX_OK) return rc;
    for (int i = 0; i < sdx_st_count(st) && n < 160; i++) {
        ts[n] = *sdx_st_get(st, i);
        size_t len = e ? strlen(e->name) : 0;
        /* a name ending in '.' edits every tensor under it */
        if (e && (len && e->name[len - 1] == '.' ? !strncmp(ts[n].name, e->name, len) : !strcmp(ts[n].name, e->name))) {
            if (e->drop) continue;
            ts[n].shape[e->dim] = e->value;
            ts[n].dtype = SDX_F32;
            ts[n].data = zeros;
            if ((size_t)sdx_tensor_numel(&ts[n]) > sizeof zeros / sizeof zeros[0]) { sdx_st_close(st); return SDX_ERR_INVALID_ARG; }
        }
        n++;
    }
    rc = sdx_st_write(ctx, dst, ts, n, NULL, 0);
    sdx_st_close(st);
    return rc;
}

static int bad_files_rejected_with_names(void) {
    T_NEED_SHARED(dec_path, TAESD_DIR "/taesd_decoder.safetensors");
    T_NEED_SHARED(vae_path, "golden/sd1/model.safetensors");
    static const struct { taesd_edit edit; const char *expect[3]; } cases[] = {
        { { "5.conv.2.weight", 0, 1, 32 }, { "'5.conv.2.weight'", "expected shape [64, 64, 3, 3]", "found [64, 32, 3, 3]" } },
        { { "19.bias", 1, 0, 0 }, { "missing tensor '19.bias'", "", "" } },
        { { "19.", 0, 0, 4 }, { "gives 4 channels", "expected RGB", "" } },
    };
    sdx_ctx *ctx = t_ctx();
    sdx__taesd t;
    sdx_st *st[2];
    const char *tmp = t_tmp("sdx_t_taesd_bad.safetensors");
    char dec[512], vae[512];
    snprintf(dec, sizeof dec, "%s", dec_path);
    snprintf(vae, sizeof vae, "%s", vae_path);
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int rc;
        T_CHECK(taesd_write_edited(ctx, dec, tmp, &cases[i].edit) == SDX_OK, "%s", sdx_last_error(ctx));
        rc = taesd_load_files(ctx, &t, st, tmp, NULL);
        T_CHECK(rc == SDX_ERR_MODEL, "%s: rc %d", cases[i].edit.name, rc);
        for (int k = 0; k < 3; k++)
            T_CHECK(strstr(sdx_last_error(ctx), cases[i].expect[k]) && strstr(sdx_last_error(ctx), tmp), "message: %s", sdx_last_error(ctx));
        T_CHECK(!t.dec.w.ctx, "nothing loaded after a failure");
        taesd_unload(&t, st);
    }
    remove(tmp);
    T_CHECK(taesd_load_files(ctx, &t, st, vae, NULL) == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "not a TAESD file"),
            "checkpoint as TAESD: %s", sdx_last_error(ctx));
    taesd_unload(&t, st);
    T_CHECK(taesd_load_files(ctx, &t, st, dec, dec) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "a second TAESD decoder"),
            "two decoders: %s", sdx_last_error(ctx));
    T_CHECK(t.dec.w.ctx != NULL, "the first decoder stays");
    taesd_unload(&t, st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- kernels ----------------------------------------------------------------- */

static int clamp_kernels_match_formulas(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_tensor x, y, h;
    int64_t shape[1] = { 40000 };   /* more than one parallel work item */
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 1, shape) == SDX_OK && sdx_tensor_alloc(ctx, &y, SDX_F32, 1, shape) == SDX_OK &&
            sdx_tensor_alloc(ctx, &h, SDX_F16, 1, shape) == SDX_OK, "alloc");
    t_fill_normal((float *)x.data, 40000, 4.0);
    ((float *)x.data)[7] = NAN;
    T_CHECK(sdx__clamp(ctx, &y, &x, 0.0f, INFINITY) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 40000; i++) {
        float v = ((float *)x.data)[i], r = ((float *)y.data)[i];
        if (i == 7) T_CHECK(isnan(r), "relu(NaN) stays NaN");
        else T_CHECK(r == (v > 0 ? v : 0.0f), "relu(%g) = %g", v, r);
    }
    T_CHECK(sdx__clamp(ctx, &h, &x, -1.0f, 2.5f) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 40000; i++) {
        float v = ((float *)x.data)[i], r = sdx__get_f32(&h, i), want = v < -1 ? -1 : v > 2.5f ? 2.5f : v;
        if (i != 7) T_CHECK(r == sdx_f16_to_f32(sdx_f32_to_f16(want)), "clamp(%g) into f16 = %g", v, r);
    }
    ((float *)x.data)[7] = 1.0f;
    memcpy(y.data, x.data, sdx_tensor_nbytes(&x));
    T_CHECK(sdx__tanh_clamp(ctx, &y, &y, 3.0f) == SDX_OK, "in place: %s", sdx_last_error(ctx));
    for (int i = 0; i < 40000; i++) {
        float v = ((float *)x.data)[i], r = ((float *)y.data)[i];
        T_CHECK(fabsf(r - tanhf(v / 3.0f) * 3.0f) <= 1e-6f && fabsf(r) <= 3.0f, "tanh_clamp(%g) = %g", v, r);
    }
    T_CHECK(sdx__clamp(ctx, &y, &x, 1.0f, 0.0f) == SDX_ERR_INVALID_ARG, "unordered bounds refused");
    T_CHECK(sdx__tanh_clamp(ctx, &y, &x, 0.0f) == SDX_ERR_INVALID_ARG, "limit 0 refused");
    sdx_tensor_free(ctx, &x);
    sdx_tensor_free(ctx, &y);
    sdx_tensor_free(ctx, &h);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- the pipeline's codecs ----------------------------------------------- */

static sdx_model *taesd_model(sdx_ctx *ctx, const char *ckpt, const char *t0, const char *t1, int codecs_only) {
    sdx_model_desc md;
    memset(&md, 0, sizeof md);
    md.checkpoint = ckpt;
    md.taesd[0] = t0;
    md.taesd[1] = t1;
    md.codecs_only = codecs_only;
    return t_model_with(ctx, &md);
}

/* Parameters that only choose the codec (what decode/encode read). */
static const sdx_gen_params *with_codec(sdx_codec c) {
    static sdx_gen_params p[3];
    memset(&p[c], 0, sizeof p[c]);
    p[c].codec = c;
    return &p[c];
}

typedef struct { int calls, steps[8]; sdx_image last; sdx_ctx *ctx; } preview_log;

static int record_preview(void *user, int image, int step, int steps, const sdx_image *img) {
    preview_log *p = (preview_log *)user;
    (void)image; (void)steps;
    if (p->calls < 8) p->steps[p->calls] = step;
    p->calls++;
    sdx_image_free(p->ctx, &p->last);
    p->last = *img;
    p->last.data = (uint8_t *)malloc((size_t)img->width * (size_t)img->height * 3);
    if (p->last.data) memcpy(p->last.data, img->data, (size_t)img->width * (size_t)img->height * 3);
    return 0;
}

/* With a TAESD decoder loaded, the final image is TAESD's decode of the
 * final latent (no VAE scale), previews come every interval steps, and
 * the last x0 preview of an euler run is the final image. */
static int generation_decodes_with_taesd_and_previews_x0(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(dec, TAESD_DIR "/taesd_decoder.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = taesd_model(ctx, ckpt, dec, NULL, 0);
    sdx_gen_params p;
    sdx_gen_result res;
    sdx_image by_taesd, by_vae;
    preview_log log;
    T_CHECK(m, "%s", sdx_last_error(ctx));
    memset(&p, 0, sizeof p);
    memset(&log, 0, sizeof log);
    log.ctx = ctx;
    p.prompt = "a cat";
    p.width = p.height = 64;
    p.steps = 4;
    p.sampler = "euler";
    p.seed = 3;
    p.preview = record_preview;
    p.preview_user = &log;
    p.preview_interval = 2;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(log.calls == 2 && log.steps[0] == 2 && log.steps[1] == 4, "previews: %d calls, steps %d, %d", log.calls, log.steps[0], log.steps[1]);
    T_CHECK(sdx_decode_latent(m, &res.latents[0], with_codec(SDX_CODEC_TAESD), &by_taesd) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_decode_latent(m, &res.latents[0], with_codec(SDX_CODEC_VAE), &by_vae) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(t_image_diff(&res.images[0], &by_taesd) == 0, "final image differs from TAESD's decode of the final latent");
    T_CHECK(t_image_diff(&res.images[0], &by_vae) > 8, "final image looks like the VAE's decode");
    T_NOTE("last x0 preview vs final image: max %d levels", t_image_diff(&log.last, &res.images[0]));
    T_CHECK(t_image_diff(&log.last, &res.images[0]) <= 1, "last x0 preview differs from the final image by %d levels",
            t_image_diff(&log.last, &res.images[0]));
    sdx_image_free(ctx, &by_taesd);
    sdx_gen_result_free(ctx, &res);
    /* codec VAE: the plain pipeline again, previews from the VAE too */
    p.codec = SDX_CODEC_VAE;
    p.preview_codec = SDX_CODEC_VAE;
    p.preview_interval = 0;
    log.calls = 0;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(log.calls == 4, "interval 0 previews every step: %d calls", log.calls);
    T_CHECK(t_image_diff(&res.images[0], &by_vae) == 0, "codec VAE: image differs from the VAE decode of its latent");
    T_CHECK(t_image_diff(&log.last, &res.images[0]) <= 1, "VAE x0 preview differs from the final image");
    sdx_gen_result_free(ctx, &res);
    sdx_image_free(ctx, &by_vae);
    free(log.last.data);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The public decode of a golden latent with a TAESD-only model is the
 * golden image in 8 bits; encoding goes through the same module. */
static int codecs_only_model_decodes_and_encodes(void) {
    T_NEED_SHARED(dec, TAESD_DIR "/taesd_decoder.safetensors");
    T_NEED_SHARED(enc, TAESD_DIR "/taesd_encoder.safetensors");
    T_NEED_SHARED(c8, TAESD_DIR "/cases/decode_12x16.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = taesd_model(ctx, NULL, dec, enc, 1);
    sdx_tensor latent, image, lat, ref, fimg;
    sdx_image out;
    sdx_gen_params p;
    sdx_gen_result res;
    int worst = 0;
    T_CHECK(m, "%s", sdx_last_error(ctx));
    T_CHECK(t_read_f32(ctx, c8, "latent", &latent) == SDX_OK && t_read_f32(ctx, c8, "image", &image) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_decode_latent(m, &latent, with_codec(SDX_CODEC_AUTO), &out) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(out.width == 128 && out.height == 96 && out.channels == 3, "image %dx%d", out.width, out.height);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 96 * 128; i++) {
            int want = (int)(((float *)image.data)[c * 96 * 128 + i] * 255.0f), d = abs(out.data[i * 3 + c] - want);
            worst = d > worst ? d : worst;
        }
    T_CHECK(worst <= 1, "8-bit image differs from floor(golden * 255) by %d levels", worst);
    /* encode: the public call equals the module on the same 8-bit pixels */
    T_CHECK(sdx_encode_image(m, &out, with_codec(SDX_CODEC_AUTO), &lat) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(lat.dtype == SDX_F32 && lat.shape[1] == 4 && lat.shape[2] == 12 && lat.shape[3] == 16, "latent shape");
    {
        int64_t s[4] = { 1, 3, 96, 128 };
        T_CHECK(sdx_tensor_alloc(ctx, &fimg, SDX_F32, 4, s) == SDX_OK, "alloc");
        for (int c = 0; c < 3; c++)
            for (int i = 0; i < 96 * 128; i++) ((float *)fimg.data)[c * 96 * 128 + i] = out.data[i * 3 + c] / 255.0f;
        T_CHECK(taesd_run(ctx, &m->taesd, 0, 0, &fimg, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(!memcmp(ref.data, lat.data, sdx_tensor_nbytes(&ref)), "public encode differs from the module");
    }
    sdx_image_free(ctx, &out);
    /* what this model cannot do */
    T_CHECK(sdx_decode_latent(m, &latent, with_codec(SDX_CODEC_VAE), &out) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "no VAE"),
            "VAE on a TAESD-only model: %s", sdx_last_error(ctx));
    memset(&p, 0, sizeof p);
    p.prompt = "x";
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "codecs_only"), "%s", sdx_last_error(ctx));
    {
        int64_t s[4] = { 1, 16, 4, 4 };
        sdx_tensor bad;
        T_CHECK(sdx_tensor_alloc(ctx, &bad, SDX_F32, 4, s) == SDX_OK, "alloc");
        T_CHECK(sdx_decode_latent(m, &bad, with_codec(SDX_CODEC_AUTO), &out) == SDX_ERR_INVALID_ARG &&
                strstr(sdx_last_error(ctx), "[1, 16, 4, 4]") && strstr(sdx_last_error(ctx), "[1, 4, h, w]"), "%s", sdx_last_error(ctx));
        sdx_tensor_free(ctx, &bad);
    }
    sdx_image_free(ctx, &out);
    sdx_tensor_free(ctx, &latent);
    sdx_tensor_free(ctx, &image);
    sdx_tensor_free(ctx, &lat);
    sdx_tensor_free(ctx, &ref);
    sdx_tensor_free(ctx, &fimg);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The VAE codec multiplies an encoded mean by the family's scale factor
 * and divides by it before decoding. */
static int vae_codec_applies_the_family_scale(void) {
    T_NEED_SHARED(ckpt, "golden/sdxl/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = taesd_model(ctx, ckpt, NULL, NULL, 1);
    sdx_image img;
    sdx_tensor lat, x, mean, z, dec;
    sdx__arena a;
    int64_t s[4] = { 1, 3, 64, 64 }, ls[4] = { 1, 4, 8, 8 };
    T_CHECK(m, "%s", sdx_last_error(ctx));
    img.width = img.height = 64;
    img.channels = 3;
    img.data = (uint8_t *)malloc(64 * 64 * 3);
    for (int i = 0; i < 64 * 64 * 3; i++) img.data[i] = (uint8_t)(t_uniform() * 256);
    T_CHECK(sdx_encode_image(m, &img, with_codec(SDX_CODEC_AUTO), &lat) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 4, s) == SDX_OK && sdx_tensor_alloc(ctx, &mean, SDX_F32, 4, ls) == SDX_OK &&
            sdx_tensor_alloc(ctx, &z, SDX_F32, 4, ls) == SDX_OK && sdx_tensor_alloc(ctx, &dec, SDX_F32, 4, s) == SDX_OK, "alloc");
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 64 * 64; i++) ((float *)x.data)[c * 4096 + i] = img.data[i * 3 + c] / 255.0f * 2.0f - 1.0f;
    sdx__arena_init(&a, ctx, 0);
    T_CHECK(sdx__vae_encode(ctx, &m->vae, &a, &x, &mean, NULL, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 256; i++)
        T_CHECK(((float *)lat.data)[i] == ((float *)mean.data)[i] * 0.13025f, "latent %d: %g, mean %g", i, ((float *)lat.data)[i],
                ((float *)mean.data)[i]);
    {
        sdx_image back;
        for (int i = 0; i < 256; i++) ((float *)z.data)[i] = ((float *)lat.data)[i] / 0.13025f;
        T_CHECK(sdx__vae_decode(ctx, &m->vae, &a, &z, &dec, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_decode_latent(m, &lat, with_codec(SDX_CODEC_AUTO), &back) == SDX_OK, "%s", sdx_last_error(ctx));
        for (int c = 0; c < 3; c++)
            for (int i = 0; i < 64 * 64; i++) {
                float v = (((float *)dec.data)[c * 4096 + i] + 1.0f) * 0.5f;
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                T_CHECK(back.data[i * 3 + c] == (uint8_t)(v * 255.0f), "pixel %d", i);
            }
        sdx_image_free(ctx, &back);
    }
    sdx__arena_free(&a);
    free(img.data);
    sdx_tensor_free(ctx, &lat);
    sdx_tensor_free(ctx, &x);
    sdx_tensor_free(ctx, &mean);
    sdx_tensor_free(ctx, &z);
    sdx_tensor_free(ctx, &dec);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A TAESD for another latent space (16 channels: SD3, FLUX) is refused at load. */
static int taesd_of_another_latent_space_rejected(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(dec, TAESD_DIR "/taesd_decoder.safetensors");
    static const taesd_edit wide = { "1.weight", 0, 1, 16 };
    sdx_ctx *ctx = t_ctx();
    const char *tmp = t_tmp("sdx_t_taesd16.safetensors");
    char d[512];
    snprintf(d, sizeof d, "%s", dec);
    T_CHECK(taesd_write_edited(ctx, d, tmp, &wide) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(taesd_model(ctx, ckpt, tmp, NULL, 0) == NULL, "loaded");
    T_CHECK(strstr(sdx_last_error(ctx), "TAESD latent has 16 channels") && strstr(sdx_last_error(ctx), "works on 4"), "%s",
            sdx_last_error(ctx));
    remove(tmp);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- the sdx command ---------------------------------------------------------- */

#define TAESD_CLI_PATHS \
    char model[512], vocab[512], dec[512], enc[512], args[4096], out[8192]; \
    T_NEED_SHARED(m_, "golden/sd1/model.safetensors"); \
    T_NEED_SHARED(v_, "vocab/merges.txt"); \
    T_NEED_SHARED(d_, TAESD_DIR "/taesd_decoder.safetensors"); \
    T_NEED_SHARED(e_, TAESD_DIR "/taesd_encoder.safetensors"); \
    T_NEED_SDX_COMMAND(); \
    snprintf(model, sizeof model, "%s", m_); snprintf(vocab, sizeof vocab, "%s", v_); \
    snprintf(dec, sizeof dec, "%s", d_); snprintf(enc, sizeof enc, "%s", e_)

/* --taesd decodes the final image; -M decode turns the latent that
 * --output-latent wrote into the same PNG, with TAESD alone or with the
 * checkpoint's VAE. */
static int cli_taesd_and_decode_mode_agree(void) {
    TAESD_CLI_PATHS;
    int worst;
    const char *gen = "-p 'a cat' -W 64 -H 64 --steps 2 -s 5 -t 2";
    remove(t_tmp("sdx_t_tae.png"));
    snprintf(args, sizeof args, "-m '%s' --vocab '%s' %s --taesd '%s' -o '%s' --output-latent '%s'",
             model, vocab, gen, dec, t_tmp("sdx_t_tae.png"), t_tmp("sdx_t_tae.safetensors"));
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "--taesd: %s", out);
    snprintf(args, sizeof args, "-m '%s' --vocab '%s' %s -o '%s'", model, vocab, gen, t_tmp("sdx_t_vae.png"));
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "plain: %s", out);
    snprintf(args, sizeof args, "-M decode --taesd '%s' --latent-in '%s' -o '%s'", dec, t_tmp("sdx_t_tae.safetensors"),
             t_tmp("sdx_t_dec1.png"));
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "decode with TAESD alone: %s", out);
    T_CHECK((worst = t_pngs_diff(t_tmp("sdx_t_tae.png"), t_tmp("sdx_t_dec1.png"))) == 0, "TAESD decode mode: %d levels", worst);
    snprintf(args, sizeof args, "-M decode -m '%s' --latent-in '%s' -o '%s'", model, t_tmp("sdx_t_tae.safetensors"),
             t_tmp("sdx_t_dec2.png"));
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "decode with the VAE: %s", out);
    T_CHECK((worst = t_pngs_diff(t_tmp("sdx_t_vae.png"), t_tmp("sdx_t_dec2.png"))) == 0, "VAE decode mode: %d levels", worst);
    T_CHECK((worst = t_pngs_diff(t_tmp("sdx_t_vae.png"), t_tmp("sdx_t_tae.png"))) > 8 && worst < 256, "the TAESD image equals the VAE image");
    /* --taesd-preview-only keeps the VAE for the final image */
    snprintf(args, sizeof args, "-m '%s' --vocab '%s' %s --taesd '%s' --taesd-preview-only -o '%s'", model, vocab, gen, dec,
             t_tmp("sdx_t_dec3.png"));
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "--taesd-preview-only: %s", out);
    T_CHECK((worst = t_pngs_diff(t_tmp("sdx_t_vae.png"), t_tmp("sdx_t_dec3.png"))) == 0, "--taesd-preview-only: %d levels", worst);
    remove(t_tmp("sdx_t_tae.png")); remove(t_tmp("sdx_t_vae.png")); remove(t_tmp("sdx_t_tae.safetensors"));
    remove(t_tmp("sdx_t_dec1.png")); remove(t_tmp("sdx_t_dec2.png")); remove(t_tmp("sdx_t_dec3.png"));
    return T_PASS;
}

/* -M encode writes the latent format --output-latent uses (tensor
 * 'latent', F32 [1, 4, H/8, W/8], model space), by TAESD or the VAE. */
static int cli_encode_mode_writes_latents(void) {
    TAESD_CLI_PATHS;
    sdx_ctx *ctx = t_ctx();
    sdx_model *m;
    sdx_st *st;
    sdx_image img;
    sdx_tensor want;
    const char *png = t_tmp("sdx_t_enc.png"), *lat = t_tmp("sdx_t_enc.safetensors");
    snprintf(args, sizeof args, "-m '%s' --vocab '%s' -p dog -W 64 -H 48 --steps 1 -o %s", model, vocab, png);
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "%s", out);
    for (int k = 0; k < 2; k++) {
        remove(lat);
        if (k == 0) snprintf(args, sizeof args, "-M encode -i %s --taesd '%s' --output-latent %s", png, enc, lat);
        else snprintf(args, sizeof args, "-M encode -m '%s' -i %s --output-latent %s", model, png, lat);
        T_CHECK(t_sdx(args, out, sizeof out) == 0, "encode %d: %s", k, out);
        m = k == 0 ? taesd_model(ctx, NULL, enc, NULL, 1) : taesd_model(ctx, model, NULL, NULL, 1);
        T_CHECK(m, "%s", sdx_last_error(ctx));
        img = t_png_load(png, 3);
        T_CHECK(img.data && sdx_encode_image(m, &img, with_codec(SDX_CODEC_AUTO), &want) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_st_open(ctx, lat, &st) == SDX_OK, "%s", sdx_last_error(ctx));
        {
            const sdx_tensor *got = sdx_st_find(st, "latent");
            T_CHECK(got && got->dtype == SDX_F32 && got->ndim == 4 && got->shape[0] == 1 && got->shape[1] == 4 && got->shape[2] == 6 &&
                    got->shape[3] == 8, "latent tensor");
            T_CHECK(!memcmp(got->data, want.data, sdx_tensor_nbytes(&want)), "encode %d: latent differs from sdx_encode_image", k);
        }
        sdx_st_close(st);
        stbi_image_free(img.data);
        sdx_tensor_free(ctx, &want);
        sdx_model_free(m);
    }
    remove(png);
    remove(lat);
    sdx_destroy(ctx);
    return T_PASS;
}

/* --preview tae|vae writes --preview-path every --preview-interval steps. */
static int cli_previews_written(void) {
    TAESD_CLI_PATHS;
    static const char *modes[] = { "tae", "vae" };
    for (int k = 0; k < 2; k++) {
        int w, h;
        remove(t_tmp("sdx_t_prev.png"));
        snprintf(args, sizeof args, "-m '%s' --vocab '%s' -p cat -W 64 -H 48 --steps 3 --taesd '%s' --preview %s "
                 "--preview-interval 2 --preview-path '%s' -o '%s'", model, vocab, dec, modes[k], t_tmp("sdx_t_prev.png"),
                 t_tmp("sdx_t_prev_out.png"));
        T_CHECK(t_sdx(args, out, sizeof out) == 0, "%s", out);
        T_CHECK(t_png_size(t_tmp("sdx_t_prev.png"), &w, &h) && w == 64 && h == 48, "--preview %s: no 64x48 preview PNG", modes[k]);
    }
    remove(t_tmp("sdx_t_prev.png"));
    remove(t_tmp("sdx_t_prev_out.png"));
    return T_PASS;
}

static int cli_rejects_bad_codec_usage(void) {
    TAESD_CLI_PATHS;
    static const struct { const char *args, *expect; } bad[] = {
        { "-p x --preview tae", "no TAESD decoder" },
        { "-p x --preview proj", "proj" },
        { "-p x --preview bogus", "none, tae, vae" },
        { "-p x --preview-interval 0", "must be positive" },
        { "-p x -M bogus", "img_gen, decode, encode" },
        { "-p x --taesd MODEL", "not a TAESD file" },
        { "-M decode", "--latent-in" },
        { "-M decode --latent-in MODEL", "no tensor 'latent'" },
        { "-M encode --output-latent '%s'", "-i" },         /* %s: the scratch latent */
        { "-M encode -i /nonexistent.png --output-latent '%s'", "/nonexistent.png" },
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        char a[1024], *p;
        int rc;
        snprintf(a, sizeof a, bad[i].args, t_tmp("sdx_t_bad.safetensors"));
        if ((p = strstr(a, "MODEL"))) { char rest[512]; snprintf(rest, sizeof rest, "%s", p + 5); snprintf(p, sizeof a - (size_t)(p - a), "'%s'%s", model, rest); }
        remove(t_tmp("sdx_t_bad.png"));
        remove(t_tmp("sdx_t_bad.safetensors"));
        snprintf(args, sizeof args, "-m '%s' --vocab '%s' --steps 1 -W 64 -H 64 -o '%s' %s", model, vocab, t_tmp("sdx_t_bad.png"), a);
        rc = t_sdx(args, out, sizeof out);
        T_CHECK(rc != 0, "'%s' exited 0", bad[i].args);
        T_CHECK(strstr(out, bad[i].expect) != NULL, "'%s': output lacks '%s':\n%s", bad[i].args, bad[i].expect, out);
        T_CHECK(!t_file_exists(t_tmp("sdx_t_bad.png")) && !t_file_exists(t_tmp("sdx_t_bad.safetensors")), "'%s' left an output file",
                bad[i].args);
    }
    (void)dec; (void)enc;
    return T_PASS;
}

static const t_case taesd_cases_list[] = {
    { "decoder_matches_every_public_case", decoder_matches_every_public_case },
    { "encoder_matches_every_public_case", encoder_matches_every_public_case },
    { "architecture_read_from_tensors", architecture_read_from_tensors },
    { "encoder_rounds_odd_sizes_up", encoder_rounds_odd_sizes_up },
    { "diffusers_and_comfyui_layouts_identical", diffusers_and_comfyui_layouts_identical },
    { "bad_files_rejected_with_names", bad_files_rejected_with_names },
    { "clamp_kernels_match_formulas", clamp_kernels_match_formulas },
    { "generation_decodes_with_taesd_and_previews_x0", generation_decodes_with_taesd_and_previews_x0 },
    { "codecs_only_model_decodes_and_encodes", codecs_only_model_decodes_and_encodes },
    { "vae_codec_applies_the_family_scale", vae_codec_applies_the_family_scale },
    { "taesd_of_another_latent_space_rejected", taesd_of_another_latent_space_rejected },
    { "cli_taesd_and_decode_mode_agree", cli_taesd_and_decode_mode_agree },
    { "cli_encode_mode_writes_latents", cli_encode_mode_writes_latents },
    { "cli_previews_written", cli_previews_written },
    { "cli_rejects_bad_codec_usage", cli_rejects_bad_codec_usage },
    { 0, 0 }
};
SDX_TEST_SUITE(taesd, taesd_cases_list)
