/* Suite "unet": the UNet against the reference code's outputs (tiny SD 1.x,
 * SD 2.x and SDXL goldens), against a plain double-precision UNet on
 * generated checkpoints of other shapes, and its load-time errors. */
#include "test.h"
#define SDX_MKCKPT_NO_MAIN
#include "../tools/sdx-mkckpt.c"

#define TU_PREFIX "model.diffusion_model."

typedef struct tu_area { const char *name, *model, *cases[2]; } tu_area;
static const tu_area tu_areas[3] = {
    { "sd1", "golden/sd1/model.safetensors",
      { "golden/sd1/cases/unet_case0.safetensors", "golden/sd1/cases/unet_case1.safetensors" } },
    { "sd2", "golden/sd2/model.safetensors",
      { "golden/sd2/cases/unet_case0.safetensors", "golden/sd2/cases/unet_case1.safetensors" } },
    { "sdxl", "golden/sdxl/model.safetensors",
      { "golden/sdxl/cases/unet_0.safetensors", "golden/sdxl/cases/unet_1.safetensors" } },
};

/* Runs one UNet call from a case file. act_type < 0 keeps the policy. */
static int tu_golden_case(const char *model_path, const char *case_path, int weight_type, int act_type,
                          double *rel, int *finite) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *model = NULL;
    sdx__unet *u = (sdx__unet *)calloc(1, sizeof *u);
    int r;
    T_CHECK(ctx && u, "setup");
    T_CHECK(sdx_st_open(ctx, model_path, &model) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__unet_load_typed(ctx, u, model, TU_PREFIX, weight_type) == SDX_OK, "%s", sdx_last_error(ctx));
    if (act_type >= 0) u->act_type = (sdx_dtype)act_type;
    r = t_unet_case(ctx, u, case_path, rel, finite);
    sdx__unet_free(u);
    free(u);
    sdx_st_close(model);
    sdx_destroy(ctx);
    return r;
}

static const char *tu_type_name(int t) { return t < 0 ? "auto" : sdx_dtype_name((sdx_dtype)t); }

/* Both cases of every area within tol (relative L2 vs the golden). */
static int tu_goldens(int weight_type, int act_type, double tol) {
    for (int i = 0; i < 3; i++) {
        const char *model = t_shared(tu_areas[i].model);
        T_SKIP_IF(!model, "golden data %s/%s not found", t_shared_dir(), tu_areas[i].model);
        for (int c = 0; c < 2; c++) {
            const char *cs = t_shared(tu_areas[i].cases[c]);
            double rel = 0;
            int finite = 0, r;
            T_SKIP_IF(!cs, "golden data %s/%s not found", t_shared_dir(), tu_areas[i].cases[c]);
            if ((r = tu_golden_case(model, cs, weight_type, act_type, &rel, &finite)) != T_PASS) return r;
            T_NOTE("%s case %d, weights %s, activations %s: rel-L2 %.3g", tu_areas[i].name, c,
                   tu_type_name(weight_type), tu_type_name(act_type), rel);
            T_CHECK(finite, "%s case %d: non-finite output", tu_areas[i].name, c);
            T_CHECK(rel <= tol, "%s case %d: rel-L2 %.3g > %.3g", tu_areas[i].name, c, rel, tol);
        }
    }
    return T_PASS;
}

static int t_goldens_f32(void) { return tu_goldens(SDX_AUTO, SDX_F32, 1e-4); }
static int t_goldens_f16_activations(void) { return tu_goldens(SDX_AUTO, SDX_F16, 1e-2); }
static int t_goldens_f16_weights(void) { return tu_goldens(SDX_F16, SDX_F32, 1e-2); }
static int t_goldens_f16_weights_and_activations(void) { return tu_goldens(SDX_F16, SDX_F16, 1e-2); }
static int t_goldens_bf16(void) { return tu_goldens(SDX_BF16, SDX_BF16, 3e-2); }

/* ---- architecture detection ------------------------------------------------- */

static int tu_load_area(int i, sdx_ctx *ctx, sdx_st **st, sdx__unet *u) {
    const char *model = t_shared(tu_areas[i].model);
    T_SKIP_IF(!model, "golden data %s/%s not found", t_shared_dir(), tu_areas[i].model);
    T_CHECK(sdx_st_open(ctx, model, st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__unet_load(ctx, u, *st, TU_PREFIX) == SDX_OK, "%s", sdx_last_error(ctx));
    return T_PASS;
}

/* The structure from config.json of each area, read back from keys alone. */
static int t_infers_golden_architectures(void) {
    static const char *expect[3] = {
        "UNet: in 4, out 4, model_channels 32, mult [1,2,2,2], res blocks [2,2,2,2], "
        "transformer depth in [1,1,0,1,1,0,1,1,0,0,0], context 64, conv proj, adm 0, 8 heads",
        "UNet: in 4, out 4, model_channels 64, mult [1,1,2,2], res blocks [2,2,2,2], "
        "transformer depth in [1,1,0,1,1,0,1,1,0,0,0], context 128, linear proj, adm 0, head_dim 64",
        "UNet: in 4, out 4, model_channels 32, mult [1,2,4], res blocks [2,2,2], "
        "transformer depth in [0,0,0,1,1,0,2,2], context 192, linear proj, adm 1664, head_dim 64",
    };
    for (int i = 0; i < 3; i++) {
        sdx_ctx *ctx = t_ctx();
        sdx_st *st = NULL;
        sdx__unet u;
        char desc[512];
        int r = tu_load_area(i, ctx, &st, &u);
        if (r != T_PASS) return r;
        sdx__unet_describe(&u, desc, sizeof desc);
        T_NOTE("%s: %s", tu_areas[i].name, desc);
        T_CHECK(!strcmp(desc, expect[i]), "%s:\n got  %s\n want %s", tu_areas[i].name, desc, expect[i]);
        T_CHECK(u.mid.n_layers == 3 && u.mid.layer[1].kind == SDX__UL_ATTN &&
                u.mid.layer[1].attn.depth == (i == 2 ? 2 : 1), "%s: middle block", tu_areas[i].name);
        sdx__unet_free(&u);
        sdx_st_close(st);
        sdx_destroy(ctx);
    }
    return T_PASS;
}

/* ---- load errors ------------------------------------------------------------ */

/* Writes the sd1 checkpoint to a scratch file (named by tag) with tensor
 * `drop` left out, or with the two leading dims of `swap` exchanged, then
 * tries to load it: the result code in *rc, the message in msg. */
static int tu_load_modified(const char *drop, const char *swap, const char *tag, char *msg, size_t size, int *rc) {
    const char *model = t_shared(tu_areas[0].model);
    char path[128];
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL, *mod = NULL;
    sdx_tensor *ts;
    sdx__unet u;
    int n, k = 0;
    T_SKIP_IF(!model, "golden data %s/%s not found", t_shared_dir(), tu_areas[0].model);
    snprintf(path, sizeof path, "%s/sdx_t_unet_%s_%d.safetensors", t_tmp_dir(), tag, (int)getpid());
    T_CHECK(sdx_st_open(ctx, model, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    n = sdx_st_count(st);
    ts = (sdx_tensor *)calloc((size_t)n, sizeof *ts);
    T_CHECK(ts, "alloc");
    for (int i = 0; i < n; i++) {
        const sdx_tensor *t = sdx_st_get(st, i);
        if (drop && !strcmp(t->name, drop)) continue;
        ts[k] = *t;
        ts[k].owned = 0;
        if (swap && !strcmp(t->name, swap)) { int64_t d = ts[k].shape[0]; ts[k].shape[0] = ts[k].shape[1]; ts[k].shape[1] = d; }
        k++;
    }
    T_CHECK(sdx_st_write(ctx, path, ts, k, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
    free(ts);
    T_CHECK(sdx_st_open(ctx, path, &mod) == SDX_OK, "%s", sdx_last_error(ctx));
    *rc = sdx__unet_load(ctx, &u, mod, TU_PREFIX);
    snprintf(msg, size, "%s", sdx_last_error(ctx));
    T_NOTE("%s", msg);
    if (*rc == SDX_OK) sdx__unet_free(&u);
    sdx_st_close(mod);
    sdx_st_close(st);
    remove(path);
    sdx_destroy(ctx);
    return T_PASS;
}

static int t_missing_tensor_is_named(void) {
    char msg[1024];
    int rc = 0, r;
    r = tu_load_modified(TU_PREFIX "output_blocks.4.1.transformer_blocks.0.attn2.to_v.weight", NULL, "missing", msg, sizeof msg,
                         &rc);
    if (r != T_PASS) return r;
    T_CHECK(rc == SDX_ERR_MODEL, "rc %d", rc);
    T_CHECK(strstr(msg, "missing tensor") && strstr(msg, "output_blocks.4.1.transformer_blocks.0.attn2.to_v.weight"), "%s", msg);
    return T_PASS;
}

static int t_misshaped_tensor_names_expected_and_found(void) {
    char msg[1024];
    int rc = 0, r;
    /* [64, 96, 3, 3] stored as [96, 64, 3, 3] */
    r = tu_load_modified(NULL, TU_PREFIX "output_blocks.8.0.in_layers.2.weight", "shape", msg, sizeof msg, &rc);
    if (r != T_PASS) return r;
    T_CHECK(rc == SDX_ERR_MODEL, "rc %d", rc);
    T_CHECK(strstr(msg, "'" TU_PREFIX "output_blocks.8.0.in_layers.2.weight'") &&
            strstr(msg, "expected shape [64, 96, 3, 3], found [96, 64, 3, 3]"), "%s", msg);
    return T_PASS;
}

static int t_missing_output_block_is_a_layout_error(void) {
    char msg[1024];
    int rc = 0, r;
    r = tu_load_modified(TU_PREFIX "output_blocks.11.0.in_layers.2.weight", NULL, "layout", msg, sizeof msg, &rc);
    if (r != T_PASS) return r;
    T_CHECK(rc == SDX_ERR_MODEL && strstr(msg, "12 input blocks") && strstr(msg, "11 output blocks"), "%s", msg);
    return T_PASS;
}

static int t_not_a_unet_fails_clearly(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx__unet u;
    int rc;
    T_NEED_SHARED(model, "golden/sd1/model.safetensors");
    T_CHECK(sdx_st_open(ctx, model, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    rc = sdx__unet_load(ctx, &u, st, "first_stage_model.");
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(rc == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "not an LDM/SGM UNet") &&
            strstr(sdx_last_error(ctx), "first_stage_model.input_blocks.0.0.weight"), "%s", sdx_last_error(ctx));
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A checkpoint of zero-filled tensors with the given names and shapes. */
typedef struct tu_spec { const char *name; int ndim; int64_t shape[4]; } tu_spec;

static int tu_write_specs(sdx_ctx *ctx, const char *path, const tu_spec *sp, int n) {
    sdx_tensor ts[32];
    char names[32][128];
    int rc = SDX_ERR_INVALID_ARG, k = 0;
    if (n > 32) return rc;
    for (; k < n; k++) {
        if (sdx_tensor_alloc(ctx, &ts[k], SDX_F32, sp[k].ndim, sp[k].shape) != SDX_OK) break;
        snprintf(names[k], sizeof names[k], TU_PREFIX "%s", sp[k].name);
        ts[k].name = names[k];
    }
    if (k == n) rc = sdx_st_write(ctx, path, ts, n, NULL, 0);
    while (k-- > 0) sdx_tensor_free(ctx, &ts[k]);
    return rc;
}

/* A stem of width 0 followed by a ResBlock that is consistent with it:
 * the level bookkeeping divided by model_channels (SIGFPE). */
static int t_zero_model_channels_is_a_model_error(void) {
    static const tu_spec sp[] = {
        { "input_blocks.0.0.weight", 4, { 0, 4, 3, 3 } }, { "input_blocks.0.0.bias", 1, { 0 } },
        { "time_embed.0.weight", 2, { 8, 0 } }, { "time_embed.0.bias", 1, { 8 } },
        { "time_embed.2.weight", 2, { 8, 8 } }, { "time_embed.2.bias", 1, { 8 } },
        { "input_blocks.1.0.in_layers.0.weight", 1, { 0 } }, { "input_blocks.1.0.in_layers.0.bias", 1, { 0 } },
        { "input_blocks.1.0.in_layers.2.weight", 4, { 32, 0, 3, 3 } }, { "input_blocks.1.0.in_layers.2.bias", 1, { 32 } },
        { "input_blocks.1.0.emb_layers.1.weight", 2, { 32, 8 } }, { "input_blocks.1.0.emb_layers.1.bias", 1, { 32 } },
        { "input_blocks.1.0.out_layers.0.weight", 1, { 32 } }, { "input_blocks.1.0.out_layers.0.bias", 1, { 32 } },
        { "input_blocks.1.0.out_layers.3.weight", 4, { 32, 32, 3, 3 } }, { "input_blocks.1.0.out_layers.3.bias", 1, { 32 } },
        { "input_blocks.1.0.skip_connection.weight", 4, { 32, 0, 1, 1 } },
        { "input_blocks.1.0.skip_connection.bias", 1, { 32 } },
    };
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx__unet u;
    char path[128];
    int rc;
    snprintf(path, sizeof path, "%s/sdx_t_unet_zero_%d.safetensors", t_tmp_dir(), (int)getpid());
    T_CHECK(tu_write_specs(ctx, path, sp, SDX__ARRAY_LEN(sp)) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    remove(path);
    rc = sdx__unet_load(ctx, &u, st, TU_PREFIX);
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(rc == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "input_blocks.0.0.weight") &&
            strstr(sdx_last_error(ctx), "found [0, 4, 3, 3]"), "rc %d: %s", rc, sdx_last_error(ctx));
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A small generated f32 checkpoint for the weight-conversion tests. */
static int tu_write_small(const char *path, char *err, size_t size) {
    mk_unet_arch a;
    memset(&a, 0, sizeof a);
    a.in_channels = 4; a.out_channels = 4; a.model_channels = 32; a.n_levels = 2;
    a.mult[0] = 1; a.mult[1] = 2; a.res[0] = a.res[1] = 1; a.depth[0] = 1; a.depth[1] = 1;
    a.depth_mid = 1; a.context_dim = 24; a.linear_proj = 1; a.adm_channels = 16;
    return mk_write_unet(path, &a, 0, 3, err, size);
}

/* Widths are read from file tensors before the shaped fetch: reading
 * them through a converting fetch kept a second f16 copy of those
 * tensors (every feed-forward input projection, for one). */
static int t_forced_weight_type_converts_each_tensor_once(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx__unet u;
    char path[128], err[256];
    int dup = 0, copies = 0;
    snprintf(path, sizeof path, "%s/sdx_t_unet_conv_%d.safetensors", t_tmp_dir(), (int)getpid());
    T_CHECK(tu_write_small(path, err, sizeof err), "%s", err);
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    remove(path);
    T_CHECK(sdx__unet_load_typed(ctx, &u, st, TU_PREFIX, SDX_F16) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < u.w.n_slots; i++) {
        copies += u.w.slots[i]->owned;
        for (int j = 0; j < i; j++) dup += !strcmp(u.w.slots[i]->file->name, u.w.slots[j]->file->name);
    }
    T_NOTE("%d tensors in the file, %d converted copies, %d duplicates", sdx_st_count(st), copies, dup);
    T_CHECK(dup == 0 && copies == sdx_st_count(st) && u.w.n_slots == copies, "%d copies of %d tensors, %d duplicates",
            copies, sdx_st_count(st), dup);
    sdx__unet_free(&u);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Loads the UNet of st converting its f32 weights to f16, and frees it. */
static int tu_load_f16(sdx_ctx *ctx, void *st) {
    sdx__unet u;
    int rc = sdx__unet_load_typed(ctx, &u, (const sdx_st *)st, TU_PREFIX, SDX_F16);
    if (rc == SDX_OK) sdx__unet_free(&u);
    return rc;
}

/* Fails each allocation of a load that converts f32 weights to f16 in
 * turn: the result must be SDX_ERR_NOMEM, not a model error. */
static int t_out_of_memory_while_converting_is_nomem(void) {
    t_allocs f = T_ALLOCS_INIT;
    sdx_ctx *ctx = t_allocs_ctx(&f);
    sdx_st *st = NULL;
    char path[128], err[256];
    int r;
    snprintf(path, sizeof path, "%s/sdx_t_unet_oom_%d.safetensors", t_tmp_dir(), (int)getpid());
    T_CHECK(ctx && tu_write_small(path, err, sizeof err), "%s", err);
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    remove(path);
    if ((r = t_fail_each_allocation(ctx, &f, tu_load_f16, st, 100000)) != T_PASS) return r;
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- double-precision reference UNet ------------------------------------------ */
/* LDM's UNetModel written the obvious way from the architecture that
 * sdx-mkckpt was asked for (not from the keys), with ComfyUI's rule for
 * skip connections of odd size. Tensors are NCHW or [B, L, C]. */

typedef struct tu_t { int n, c, h, w; double *v; } tu_t;

static tu_t tu_new(int n, int c, int h, int w) {
    tu_t t = { n, c, h, w, (double *)calloc((size_t)n * c * h * w, sizeof(double)) };
    return t;
}
static size_t tu_size(const tu_t *t) { return (size_t)t->n * t->c * t->h * t->w; }

static const sdx_st *tu_ref_st;

/* A weight as doubles (caller frees); NULL if absent. */
static double *tu_w(const char *fmt, ...) {
    char name[256];
    va_list ap;
    const sdx_tensor *t;
    double *d;
    int64_t n;
    int k = snprintf(name, sizeof name, TU_PREFIX);
    va_start(ap, fmt);
    vsnprintf(name + k, sizeof name - (size_t)k, fmt, ap);
    va_end(ap);
    t = sdx_st_find(tu_ref_st, name);
    if (!t) { fprintf(stderr, "reference: missing %s\n", name); exit(1); }
    n = sdx_tensor_numel(t);
    d = (double *)malloc((size_t)n * sizeof *d);
    for (int64_t i = 0; i < n; i++) d[i] = sdx__get_f32(t, i);
    return d;
}

static tu_t tu_conv(const tu_t *x, int cout, int k, int stride, const char *name) {
    int pad = k / 2, ho = (x->h + 2 * pad - k) / stride + 1, wo = (x->w + 2 * pad - k) / stride + 1;
    tu_t y = tu_new(x->n, cout, ho, wo);
    double *w = tu_w("%s.weight", name), *b = tu_w("%s.bias", name);
    for (int n = 0; n < x->n; n++)
        for (int o = 0; o < cout; o++)
            for (int i = 0; i < ho; i++)
                for (int j = 0; j < wo; j++) {
                    double s = b[o];
                    for (int c = 0; c < x->c; c++)
                        for (int di = 0; di < k; di++)
                            for (int dj = 0; dj < k; dj++) {
                                int yi = i * stride + di - pad, xj = j * stride + dj - pad;
                                if (yi < 0 || yi >= x->h || xj < 0 || xj >= x->w) continue;
                                s += w[((o * x->c + c) * k + di) * k + dj] * x->v[((n * x->c + c) * x->h + yi) * x->w + xj];
                            }
                    y.v[((n * cout + o) * ho + i) * wo + j] = s;
                }
    free(w); free(b);
    return y;
}

static double tu_silu(double v) { return v / (1 + exp(-v)); }

static tu_t tu_group_norm(const tu_t *x, double eps, int silu, const char *name) {
    tu_t y = tu_new(x->n, x->c, x->h, x->w);
    double *g = tu_w("%s.weight", name), *b = tu_w("%s.bias", name);
    int cg = x->c / 32, hw = x->h * x->w;
    for (int n = 0; n < x->n; n++)
        for (int grp = 0; grp < 32; grp++) {
            const double *p = x->v + ((size_t)n * x->c + grp * cg) * hw;
            double mean = 0, var = 0;
            for (int i = 0; i < cg * hw; i++) mean += p[i];
            mean /= cg * hw;
            for (int i = 0; i < cg * hw; i++) var += (p[i] - mean) * (p[i] - mean);
            var /= cg * hw;
            for (int i = 0; i < cg * hw; i++) {
                int c = grp * cg + i / hw;
                double v = (p[i] - mean) / sqrt(var + eps) * g[c] + b[c];
                y.v[((size_t)n * x->c + grp * cg) * hw + i] = silu ? tu_silu(v) : v;
            }
        }
    free(g); free(b);
    return y;
}

/* rows [R, in] -> [R, out] */
static double *tu_linear(const double *x, int rows, int in, int out, int bias, const char *name) {
    double *y = (double *)malloc((size_t)rows * out * sizeof *y), *w = tu_w("%s.weight", name);
    double *b = bias ? tu_w("%s.bias", name) : NULL;
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double s = b ? b[o] : 0;
            for (int i = 0; i < in; i++) s += w[(size_t)o * in + i] * x[(size_t)r * in + i];
            y[(size_t)r * out + o] = s;
        }
    free(w); free(b);
    return y;
}

static double *tu_layer_norm(const double *x, int rows, int c, const char *name) {
    double *y = (double *)malloc((size_t)rows * c * sizeof *y), *g = tu_w("%s.weight", name), *b = tu_w("%s.bias", name);
    for (int r = 0; r < rows; r++) {
        const double *p = x + (size_t)r * c;
        double mean = 0, var = 0;
        for (int i = 0; i < c; i++) mean += p[i];
        mean /= c;
        for (int i = 0; i < c; i++) var += (p[i] - mean) * (p[i] - mean);
        var /= c;
        for (int i = 0; i < c; i++) y[(size_t)r * c + i] = (p[i] - mean) / sqrt(var + 1e-5) * g[i] + b[i];
    }
    free(g); free(b);
    return y;
}

/* tok[B, L, C] += attn<which>(norm<which>(tok), src); src [B, S, D] is the
 * context, or NULL for self-attention. */
static void tu_attention(double *tok, int B, int L, int C, const double *src, int S, int D, int heads,
                         const char *blk, int which) {
    int rows = B * L, dh = C / heads;
    char nm[256];
    double *n, *q, *k, *v, *o, *r, *p;
    snprintf(nm, sizeof nm, "%s.norm%d", blk, which);
    n = tu_layer_norm(tok, rows, C, nm);
    if (!src) src = n, S = L, D = C;
    p = (double *)malloc((size_t)S * sizeof *p);
    snprintf(nm, sizeof nm, "%s.attn%d.to_q", blk, which); q = tu_linear(n, rows, C, C, 0, nm);
    snprintf(nm, sizeof nm, "%s.attn%d.to_k", blk, which); k = tu_linear(src, B * S, D, C, 0, nm);
    snprintf(nm, sizeof nm, "%s.attn%d.to_v", blk, which); v = tu_linear(src, B * S, D, C, 0, nm);
    o = (double *)calloc((size_t)rows * C, sizeof *o);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < L; i++) {
                double mx = -1e300, sum = 0;
                const double *qi = q + ((size_t)b * L + i) * C + h * dh;
                for (int j = 0; j < S; j++) {
                    const double *kj = k + ((size_t)b * S + j) * C + h * dh;
                    double s = 0;
                    for (int d = 0; d < dh; d++) s += qi[d] * kj[d];
                    p[j] = s / sqrt((double)dh);
                    if (p[j] > mx) mx = p[j];
                }
                for (int j = 0; j < S; j++) sum += (p[j] = exp(p[j] - mx));
                for (int j = 0; j < S; j++)
                    for (int d = 0; d < dh; d++)
                        o[((size_t)b * L + i) * C + h * dh + d] += p[j] / sum * v[((size_t)b * S + j) * C + h * dh + d];
            }
    snprintf(nm, sizeof nm, "%s.attn%d.to_out.0", blk, which);
    r = tu_linear(o, rows, C, C, 1, nm);
    for (size_t i = 0; i < (size_t)rows * C; i++) tok[i] += r[i];
    free(n); free(q); free(k); free(v); free(o); free(r); free(p);
}

static void tu_feed_forward(double *tok, int rows, int C, const char *base) {
    char nm[256];
    double *n, *f, *g, *r;
    snprintf(nm, sizeof nm, "%s.norm3", base); n = tu_layer_norm(tok, rows, C, nm);
    snprintf(nm, sizeof nm, "%s.ff.net.0.proj", base); f = tu_linear(n, rows, C, 8 * C, 1, nm);
    g = (double *)malloc((size_t)rows * 4 * C * sizeof *g);
    for (int r0 = 0; r0 < rows; r0++)
        for (int i = 0; i < 4 * C; i++) {
            double a = f[(size_t)r0 * 8 * C + i], gate = f[(size_t)r0 * 8 * C + 4 * C + i];
            g[(size_t)r0 * 4 * C + i] = a * 0.5 * gate * (1 + erf(gate / sqrt(2.0)));
        }
    snprintf(nm, sizeof nm, "%s.ff.net.2", base); r = tu_linear(g, rows, 4 * C, C, 1, nm);
    for (size_t i = 0; i < (size_t)rows * C; i++) tok[i] += r[i];
    free(n); free(f); free(g); free(r);
}

typedef struct tu_cond { const double *context; int T, D, heads, head_dim, linear; const double *emb; int E; } tu_cond;

static tu_t tu_spatial_transformer(const tu_t *x, int depth, const tu_cond *cd, const char *base) {
    int B = x->n, C = x->c, L = x->h * x->w, heads = cd->heads > 0 ? cd->heads : C / cd->head_dim;
    char nm[256];
    tu_t n, y = tu_new(B, C, x->h, x->w);
    double *tok = (double *)calloc((size_t)B * L * C, sizeof *tok), *t2;
    snprintf(nm, sizeof nm, "%s.norm", base); n = tu_group_norm(x, 1e-6, 0, nm);
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++)
            for (int l = 0; l < L; l++) tok[((size_t)b * L + l) * C + c] = n.v[((size_t)b * C + c) * L + l];
    /* a 1x1 conv [C, C, 1, 1] on NCHW is the same map as a Linear [C, C] on tokens */
    snprintf(nm, sizeof nm, "%s.proj_in", base);
    t2 = tu_linear(tok, B * L, C, C, 1, nm);
    free(tok);
    tok = t2;
    for (int d = 0; d < depth; d++) {
        char blk[200];
        snprintf(blk, sizeof blk, "%s.transformer_blocks.%d", base, d);
        tu_attention(tok, B, L, C, NULL, 0, 0, heads, blk, 1);
        tu_attention(tok, B, L, C, cd->context, cd->T, cd->D, heads, blk, 2);
        tu_feed_forward(tok, B * L, C, blk);
    }
    snprintf(nm, sizeof nm, "%s.proj_out", base);
    t2 = tu_linear(tok, B * L, C, C, 1, nm);
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++)
            for (int l = 0; l < L; l++)
                y.v[((size_t)b * C + c) * L + l] = t2[((size_t)b * L + l) * C + c] + x->v[((size_t)b * C + c) * L + l];
    free(tok); free(t2); free(n.v);
    return y;
}

static tu_t tu_resblock(const tu_t *x, int cout, const tu_cond *cd, const char *base) {
    char nm[256];
    tu_t h, h2, h3, y;
    double *se = (double *)malloc((size_t)x->n * cd->E * sizeof *se), *e;
    for (int i = 0; i < x->n * cd->E; i++) se[i] = tu_silu(cd->emb[i]);
    snprintf(nm, sizeof nm, "%s.in_layers.0", base); h = tu_group_norm(x, 1e-5, 1, nm);
    snprintf(nm, sizeof nm, "%s.in_layers.2", base); h2 = tu_conv(&h, cout, 3, 1, nm);
    snprintf(nm, sizeof nm, "%s.emb_layers.1", base); e = tu_linear(se, x->n, cd->E, cout, 1, nm);
    for (int n = 0; n < x->n; n++)
        for (int c = 0; c < cout; c++)
            for (int i = 0; i < h2.h * h2.w; i++) h2.v[((size_t)n * cout + c) * h2.h * h2.w + i] += e[n * cout + c];
    free(h.v);
    snprintf(nm, sizeof nm, "%s.out_layers.0", base); h = tu_group_norm(&h2, 1e-5, 1, nm);
    snprintf(nm, sizeof nm, "%s.out_layers.3", base); h3 = tu_conv(&h, cout, 3, 1, nm);
    if (x->c != cout) { snprintf(nm, sizeof nm, "%s.skip_connection", base); y = tu_conv(x, cout, 1, 1, nm); }
    else { y = tu_new(x->n, cout, x->h, x->w); memcpy(y.v, x->v, tu_size(x) * sizeof(double)); }
    for (size_t i = 0; i < tu_size(&y); i++) y.v[i] += h3.v[i];
    free(h.v); free(h2.v); free(h3.v); free(se); free(e);
    return y;
}

static tu_t tu_upsample(const tu_t *x, int ho, int wo, const char *base) {
    tu_t t = tu_new(x->n, x->c, ho, wo), y;
    for (int p = 0; p < x->n * x->c; p++)
        for (int i = 0; i < ho; i++)
            for (int j = 0; j < wo; j++)
                t.v[((size_t)p * ho + i) * wo + j] = x->v[((size_t)p * x->h + (size_t)i * x->h / ho) * x->w + (size_t)j * x->w / wo];
    y = tu_conv(&t, x->c, 3, 1, base);
    free(t.v);
    return y;
}

static void tu_replace(tu_t *h, tu_t n) { free(h->v); *h = n; }

/* The reference forward pass; returns the output [B, out, H, W]. */
static tu_t tu_reference(const mk_unet_arch *a, const tu_t *x, const float *ts, const double *context, int T,
                         const double *yv, int heads, int head_dim) {
    int mc = a->model_channels, E = 4 * mc, B = x->n, nh = 0, idx = 1, ch = mc;
    double *temb = (double *)malloc((size_t)B * mc * sizeof *temb), *e1, *emb;
    tu_t hs[64], h;
    tu_cond cd;
    char nm[128];
    for (int b = 0; b < B; b++)
        for (int i = 0; i < mc / 2; i++) {
            /* frequency and argument in f32, as the reference code computes them */
            float f = expf(-logf(10000.0f) * (float)i / (float)(mc / 2)), arg = ts[b] * f;
            temb[b * mc + i] = cos((double)arg);
            temb[b * mc + mc / 2 + i] = sin((double)arg);
        }
    e1 = tu_linear(temb, B, mc, E, 1, "time_embed.0");
    for (int i = 0; i < B * E; i++) e1[i] = tu_silu(e1[i]);
    emb = tu_linear(e1, B, E, E, 1, "time_embed.2");
    if (a->adm_channels > 0) {
        double *l1 = tu_linear(yv, B, a->adm_channels, E, 1, "label_emb.0.0"), *l2;
        for (int i = 0; i < B * E; i++) l1[i] = tu_silu(l1[i]);
        l2 = tu_linear(l1, B, E, E, 1, "label_emb.0.2");
        for (int i = 0; i < B * E; i++) emb[i] += l2[i];
        free(l1); free(l2);
    }
    cd.context = context; cd.T = T; cd.D = a->context_dim; cd.heads = heads; cd.head_dim = head_dim;
    cd.linear = a->linear_proj; cd.emb = emb; cd.E = E;
    h = tu_conv(x, mc, 3, 1, "input_blocks.0.0");
#define TU_PUSH() do { hs[nh] = tu_new(h.n, h.c, h.h, h.w); memcpy(hs[nh].v, h.v, tu_size(&h) * sizeof(double)); nh++; } while (0)
    TU_PUSH();
    for (int l = 0; l < a->n_levels; l++) {
        for (int r = 0; r < a->res[l]; r++, idx++) {
            snprintf(nm, sizeof nm, "input_blocks.%d.0", idx); tu_replace(&h, tu_resblock(&h, a->mult[l] * mc, &cd, nm));
            ch = a->mult[l] * mc;
            if (a->depth[l]) { snprintf(nm, sizeof nm, "input_blocks.%d.1", idx); tu_replace(&h, tu_spatial_transformer(&h, a->depth[l], &cd, nm)); }
            TU_PUSH();
        }
        if (l < a->n_levels - 1) {
            snprintf(nm, sizeof nm, "input_blocks.%d.0.op", idx++); tu_replace(&h, tu_conv(&h, ch, 3, 2, nm));
            TU_PUSH();
        }
    }
    if (a->depth_mid >= 0) tu_replace(&h, tu_resblock(&h, ch, &cd, "middle_block.0"));
    if (a->depth_mid > 0) {
        tu_replace(&h, tu_spatial_transformer(&h, a->depth_mid, &cd, "middle_block.1"));
        tu_replace(&h, tu_resblock(&h, ch, &cd, "middle_block.2"));
    }
    idx = 0;
    for (int l = a->n_levels - 1; l >= 0; l--)
        for (int r = 0; r <= a->res[l]; r++, idx++) {
            tu_t s = hs[--nh], cat = tu_new(B, h.c + s.c, s.h, s.w);
            int m = 1;
            for (int b = 0; b < B; b++) {
                memcpy(cat.v + (size_t)b * cat.c * s.h * s.w, h.v + (size_t)b * h.c * s.h * s.w, (size_t)h.c * s.h * s.w * sizeof(double));
                memcpy(cat.v + ((size_t)b * cat.c + h.c) * s.h * s.w, s.v + (size_t)b * s.c * s.h * s.w, (size_t)s.c * s.h * s.w * sizeof(double));
            }
            free(s.v);
            tu_replace(&h, cat);
            snprintf(nm, sizeof nm, "output_blocks.%d.0", idx); tu_replace(&h, tu_resblock(&h, a->mult[l] * mc, &cd, nm));
            if (a->depth[l]) { snprintf(nm, sizeof nm, "output_blocks.%d.1", idx); tu_replace(&h, tu_spatial_transformer(&h, a->depth[l], &cd, nm)); m = 2; }
            if (l > 0 && r == a->res[l]) {
                snprintf(nm, sizeof nm, "output_blocks.%d.%d.conv", idx, m);
                tu_replace(&h, tu_upsample(&h, hs[nh - 1].h, hs[nh - 1].w, nm));
            }
        }
#undef TU_PUSH
    tu_replace(&h, tu_group_norm(&h, 1e-5, 1, "out.0"));
    tu_replace(&h, tu_conv(&h, a->out_channels, 3, 1, "out.2"));
    free(temb); free(e1); free(emb);
    return h;
}

/* Generates a checkpoint for `a`, runs sdx and the reference on random
 * inputs of size hxw, and compares. */
static int tu_custom(const mk_unet_arch *a, int H, int W, int want_heads, int want_head_dim, const char *tag) {
    char path[128], err[256], desc[512];
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx__unet u;
    sdx__arena arena;
    int B = 2, T = 5;
    float ts[2] = { 981.0f, 17.0f };
    sdx_tensor x, cx, yv, out;
    int64_t xs[4] = { B, a->in_channels, H, W }, cs[3] = { B, T, a->context_dim }, ys[2] = { B, a->adm_channels }, os[4] = { B, a->out_channels, H, W };
    tu_t xr, ref;
    double *cr, *yr = NULL, rel, rms;
    float *o32;
    snprintf(path, sizeof path, "%s/sdx_t_unet_%s_%d.safetensors", t_tmp_dir(), tag, (int)getpid());
    T_CHECK(mk_write_unet(path, a, 0, 7, err, sizeof err), "%s", err);
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__unet_load(ctx, &u, st, TU_PREFIX) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx__unet_describe(&u, desc, sizeof desc);
    T_NOTE("%s", desc);
    T_CHECK(u.num_heads == want_heads && u.head_dim == want_head_dim, "heads %d head_dim %d", u.num_heads, u.head_dim);
    t_seed(11);
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 4, xs) == SDX_OK && sdx_tensor_alloc(ctx, &cx, SDX_F32, 3, cs) == SDX_OK &&
            sdx_tensor_alloc(ctx, &out, SDX_F32, 4, os) == SDX_OK, "alloc");
    t_fill_normal((float *)x.data, (size_t)sdx_tensor_numel(&x), 1.0);
    t_fill_normal((float *)cx.data, (size_t)sdx_tensor_numel(&cx), 1.0);
    memset(&yv, 0, sizeof yv);
    if (a->adm_channels > 0) {
        T_CHECK(sdx_tensor_alloc(ctx, &yv, SDX_F32, 2, ys) == SDX_OK, "alloc");
        t_fill_normal((float *)yv.data, (size_t)sdx_tensor_numel(&yv), 1.0);
    }
    sdx__arena_init(&arena, ctx, 1 << 20);
    T_CHECK(sdx__unet_forward(ctx, &u, &arena, &x, ts, &cx, a->adm_channels > 0 ? &yv : NULL, &out) == SDX_OK,
            "%s", sdx_last_error(ctx));
    T_NOTE("%s: arena peak %.2f MB for %dx%d, batch %d", tag, (double)arena.peak / 1048576.0, H, W, B);

    tu_ref_st = st;
    xr = tu_new(B, a->in_channels, H, W);
    for (size_t i = 0; i < tu_size(&xr); i++) xr.v[i] = ((float *)x.data)[i];
    cr = (double *)malloc((size_t)sdx_tensor_numel(&cx) * sizeof *cr);
    for (int64_t i = 0; i < sdx_tensor_numel(&cx); i++) cr[i] = ((float *)cx.data)[i];
    if (a->adm_channels > 0) {
        yr = (double *)malloc((size_t)sdx_tensor_numel(&yv) * sizeof *yr);
        for (int64_t i = 0; i < sdx_tensor_numel(&yv); i++) yr[i] = ((float *)yv.data)[i];
    }
    ref = tu_reference(a, &xr, ts, cr, T, yr, want_heads, want_head_dim);
    o32 = (float *)out.data;
    {
        double num = 0, den = 0;
        for (size_t i = 0; i < tu_size(&ref); i++) { num += (o32[i] - ref.v[i]) * (o32[i] - ref.v[i]); den += ref.v[i] * ref.v[i]; }
        rel = sqrt(num / den);
        rms = sqrt(den / (double)tu_size(&ref));
    }
    T_NOTE("%s: rel-L2 vs float64 reference %.3g (output rms %.3g)", tag, rel, rms);
    T_CHECK(rel <= 1e-5, "%s: rel-L2 %.3g > 1e-5", tag, rel);
    free(xr.v); free(ref.v); free(cr); free(yr);
    sdx__arena_free(&arena);
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &cx); sdx_tensor_free(ctx, &out); sdx_tensor_free(ctx, &yv);
    sdx__unet_free(&u);
    sdx_st_close(st);
    remove(path);
    sdx_destroy(ctx);
    return T_PASS;
}

/* One ResBlock at level 0 without attention, two levels, transformer depth 2
 * at level 1, label_emb: none of the goldens has these shapes. */
static int t_generated_sdxl_like_matches_f64_reference(void) {
    mk_unet_arch a;
    memset(&a, 0, sizeof a);
    a.in_channels = 4; a.out_channels = 4; a.model_channels = 64; a.n_levels = 2;
    a.mult[0] = 1; a.mult[1] = 2; a.res[0] = a.res[1] = 1; a.depth[0] = 0; a.depth[1] = 2;
    a.depth_mid = 1; a.context_dim = 48; a.linear_proj = 1; a.adm_channels = 40;
    return tu_custom(&a, 6, 8, 0, 64, "xl");
}

/* SD 1.x style (conv projections, 8 heads), uneven ResBlock counts, no
 * middle block (BK-SDM), inpainting input, and a 5x7 latent whose skip
 * connections are not twice the size of the level below. */
static int t_generated_distilled_odd_size_matches_f64_reference(void) {
    mk_unet_arch a;
    memset(&a, 0, sizeof a);
    a.in_channels = 9; a.out_channels = 4; a.model_channels = 32; a.n_levels = 3;
    a.mult[0] = 1; a.mult[1] = 2; a.mult[2] = 2; a.res[0] = 2; a.res[1] = 1; a.res[2] = 1;
    a.depth[0] = 1; a.depth[1] = 1; a.depth[2] = 0;
    a.depth_mid = -1; a.context_dim = 40; a.linear_proj = 0;
    return tu_custom(&a, 5, 7, 8, 0, "bk");
}

/* Parameter counts of the released models: the generator writes their
 * exact tensor inventory. */
static int t_generator_presets_match_released_parameter_counts(void) {
    static const struct { const char *name; int64_t params; } want[3] = {
        { "sd15", 859520964 }, { "sd21", 865910724 }, { "sdxl", 2567463684 },
    };
    for (int i = 0; i < 3; i++) {
        mk_unet_arch a;
        mk_list L;
        int64_t params = 0;
        memset(&L, 0, sizeof L);
        L.prefix = TU_PREFIX;
        T_CHECK(mk_unet_preset(want[i].name, &a), "preset %s", want[i].name);
        mk_unet_entries(&L, &a);
        T_CHECK(!L.failed, "out of memory");
        for (int k = 0; k < L.n; k++) params += mk_numel(&L.e[k]);
        T_NOTE("%s: %d tensors, %lld parameters", want[i].name, L.n, (long long)params);
        free(L.e);
        T_CHECK(params == want[i].params, "%s: %lld parameters, want %lld", want[i].name, (long long)params,
                (long long)want[i].params);
    }
    return T_PASS;
}

static const t_case unet_cases[] = {
    { "generator_presets_match_released_parameter_counts", t_generator_presets_match_released_parameter_counts },
    { "infers_golden_architectures", t_infers_golden_architectures },
    { "goldens_f32", t_goldens_f32 },
    { "goldens_f16_activations", t_goldens_f16_activations },
    { "goldens_f16_weights", t_goldens_f16_weights },
    { "goldens_f16_weights_and_activations", t_goldens_f16_weights_and_activations },
    { "goldens_bf16", t_goldens_bf16 },
    { "generated_sdxl_like_matches_f64_reference", t_generated_sdxl_like_matches_f64_reference },
    { "generated_distilled_odd_size_matches_f64_reference", t_generated_distilled_odd_size_matches_f64_reference },
    { "missing_tensor_is_named", t_missing_tensor_is_named },
    { "misshaped_tensor_names_expected_and_found", t_misshaped_tensor_names_expected_and_found },
    { "missing_output_block_is_a_layout_error", t_missing_output_block_is_a_layout_error },
    { "not_a_unet_fails_clearly", t_not_a_unet_fails_clearly },
    { "zero_model_channels_is_a_model_error", t_zero_model_channels_is_a_model_error },
    { "forced_weight_type_converts_each_tensor_once", t_forced_weight_type_converts_each_tensor_once },
    { "out_of_memory_while_converting_is_nomem", t_out_of_memory_while_converting_is_nomem },
    { 0, 0 }
};
SDX_TEST_SUITE(unet, unet_cases)
