/* Suite "kernels": every kernel against a straightforward double-precision
 * reference on fresh random inputs, for each storage dtype of weights and
 * activations.
 *
 * Tolerances. The reference is computed in double from the *rounded*
 * inputs (exactly what the kernel reads), so the only differences are
 *   - the kernel's f32 arithmetic: for a K-term dot product at most
 *     K * 2^-24 * sum|terms| (the classic gamma_K bound; typical errors are
 *     ~sqrt(K) times smaller), for pointwise math a few f32 ulps;
 *   - rounding the output to its storage dtype: at most half an ulp,
 *     2^-24 (F32), 2^-11 (F16), 2^-8 (BF16) relative.
 * Each check allows u_out * |ref| + acc * mag per element (mag = sum of
 * |terms| or |ref|) and prints the worst error as a fraction of that
 * allowance ("ratio"), so a ratio near 1 means the bound is tight. */
#include "test.h"

/* ---- helpers -------------------------------------------------------- */

static const sdx_dtype tk_types[3] = { SDX_F32, SDX_F16, SDX_BF16 };

typedef struct tk_env {
    sdx_ctx   *ctx;
    sdx_tensor t[32];
    int        nt;
    void      *m[64];
    int        nm;
} tk_env;

static void *tk_alloc(tk_env *e, size_t bytes) {
    void *p;
    if (e->nm >= 64) return NULL;
    p = calloc(1, bytes ? bytes : 1);
    if (p) e->m[e->nm++] = p;
    return p;
}

static void tk_done(tk_env *e) {
    for (int i = 0; i < e->nt; i++) sdx_tensor_free(e->ctx, &e->t[i]);
    for (int i = 0; i < e->nm; i++) free(e->m[i]);
    e->nt = e->nm = 0;
}

/* A zeroed tensor owned by the env (NULL on failure). */
static sdx_tensor *tk_tensor(tk_env *e, sdx_dtype dt, int ndim, const int64_t *shape) {
    sdx_tensor *t;
    if (e->nt >= 32) return NULL;
    t = &e->t[e->nt];
    if (sdx_tensor_alloc(e->ctx, t, dt, ndim, shape) != SDX_OK) return NULL;
    e->nt++;
    return t;
}

/* The tensor's values widened to f32 (NULL on failure). */
static float *tk_values(tk_env *e, const sdx_tensor *t) {
    int64_t n = sdx_tensor_numel(t);
    float *v = (float *)tk_alloc(e, (size_t)n * sizeof(float));
    if (!v) return NULL;
    for (int64_t i = 0; i < n; i++) {
        if (t->dtype == SDX_F32) v[i] = ((const float *)t->data)[i];
        else if (t->dtype == SDX_F16) v[i] = sdx_f16_to_f32(((const uint16_t *)t->data)[i]);
        else v[i] = sdx_bf16_to_f32(((const uint16_t *)t->data)[i]);
    }
    return v;
}

static void tk_set(sdx_tensor *t, int64_t i, float v) {
    if (t->dtype == SDX_F32) ((float *)t->data)[i] = v;
    else if (t->dtype == SDX_F16) ((uint16_t *)t->data)[i] = sdx_f32_to_f16(v);
    else ((uint16_t *)t->data)[i] = sdx_f32_to_bf16(v);
}

/* Random N(0, scale^2) tensor; *vals gets the stored (rounded) values. */
static sdx_tensor *tk_rand(tk_env *e, sdx_dtype dt, int ndim, const int64_t *shape, double scale, float **vals) {
    sdx_tensor *t = tk_tensor(e, dt, ndim, shape);
    if (!t) return NULL;
    for (int64_t i = 0; i < sdx_tensor_numel(t); i++) tk_set(t, i, (float)(t_normal() * scale));
    *vals = tk_values(e, t);
    return *vals ? t : NULL;
}

static double tk_unit(sdx_dtype t) {
    return t == SDX_F32 ? 0x1p-24 : t == SDX_F16 ? 0x1p-11 : 0x1p-8;
}

typedef struct tk_err { double ratio, max_abs, rel_l2; } tk_err;

/* Worst |y - ref| / (u_out |ref| + acc * mag + tiny) over n elements.
 * mag may be NULL (then |ref| is used). */
static tk_err tk_compare(const float *y, const double *ref, const double *mag, int64_t n, sdx_dtype out, double acc) {
    tk_err r = { 0, 0, 0 };
    double num = 0, den = 0, u = tk_unit(out);
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - ref[i]);
        double m = mag ? mag[i] : fabs(ref[i]);
        double tol = u * fabs(ref[i]) + acc * m + 1e-30 + (out == SDX_F16 ? 0x1p-25 : 0.0);
        if (d != d) d = INFINITY;
        if (d / tol > r.ratio) r.ratio = d / tol;
        if (d > r.max_abs) r.max_abs = d;
        num += d * d;
        den += ref[i] * ref[i];
    }
    r.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
    return r;
}

#define TK_EXPECT(err, what, ...) do { \
    T_NOTE("%-34s ratio %.3f  max_abs %.3g  rel_l2 %.3g", what, (err).ratio, (err).max_abs, (err).rel_l2); \
    T_CHECK((err).ratio <= 1.0, __VA_ARGS__); } while (0)

static char tk_label[96];
static const char *tk_name(const char *op, sdx_dtype w, sdx_dtype a) {
    snprintf(tk_label, sizeof tk_label, "%s w=%s act=%s", op, sdx_dtype_name(w), sdx_dtype_name(a));
    return tk_label;
}

/* ---- linear ----------------------------------------------------------- */

/* y[M, N] = x[M, K] w[N, K]^T + b for every weight/activation dtype. */
static int tk_linear_case(int64_t batch, int64_t rows, int64_t k, int64_t n, int with_bias) {
    int rc = T_PASS;
    for (int wi = 0; wi < 3 && rc == T_PASS; wi++)
        for (int ai = 0; ai < 3 && rc == T_PASS; ai++) {
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            float *xv, *wv, *bv = NULL, *yv;
            int64_t xs[3] = { batch, rows, k }, ws[2] = { n, k }, ys[3] = { batch, rows, n };
            sdx_tensor *x, *w, *b = NULL, *y;
            double *ref, *mag;
            int64_t m = batch * rows;
            tk_err err;
            T_CHECK(e.ctx, "context");
            x = tk_rand(&e, tk_types[ai], 3, xs, 1.0, &xv);
            w = tk_rand(&e, tk_types[wi], 2, ws, 0.1, &wv);
            if (with_bias) b = tk_rand(&e, tk_types[wi], 1, &n, 0.5, &bv);
            y = tk_tensor(&e, tk_types[ai], 3, ys);
            ref = (double *)tk_alloc(&e, (size_t)(m * n) * sizeof(double));
            mag = (double *)tk_alloc(&e, (size_t)(m * n) * sizeof(double));
            if (!x || !w || (with_bias && !b) || !y || !ref || !mag) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            rc = sdx__linear(e.ctx, y, x, w, b, SDX_F32);
            if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "linear: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
            for (int64_t i = 0; i < m; i++)
                for (int64_t o = 0; o < n; o++) {
                    double s = bv ? bv[o] : 0.0, a = bv ? fabs(bv[o]) : 0.0;
                    for (int64_t j = 0; j < k; j++) {
                        double p = (double)xv[i * k + j] * wv[o * k + j];
                        s += p; a += fabs(p);
                    }
                    ref[i * n + o] = s; mag[i * n + o] = a;
                }
            yv = tk_values(&e, y);
            err = tk_compare(yv, ref, mag, m * n, y->dtype, (double)(k + 1) * 0x1p-24);
            tk_done(&e);
            sdx_destroy(e.ctx);
            TK_EXPECT(err, tk_name("linear", tk_types[wi], tk_types[ai]), "linear %s: ratio %.3f (max abs %g)",
                      tk_label, err.ratio, err.max_abs);
        }
    return rc;
}

static int linear_odd_sizes_with_bias(void) { t_seed(1); return tk_linear_case(1, 37, 67, 45, 1); }
static int linear_single_row_without_bias(void) { t_seed(2); return tk_linear_case(1, 1, 131, 77, 0); }
/* 300 rows x 150 outputs x 520 inputs crosses every tile and KC boundary. */
static int linear_many_rows_spans_tiles(void) { t_seed(3); return tk_linear_case(2, 150, 520, 150, 1); }

/* The GEMM tiles are fixed, so the result must not depend on how many
 * threads computed them. */
static int linear_same_bits_for_any_thread_count(void) {
    sdx_desc d1, d3;
    sdx_ctx *c1, *c3;
    sdx_tensor x, w, y1, y3;
    int64_t xs[2] = { 301, 200 }, ws[2] = { 140, 200 }, ys[2] = { 301, 140 };
    int ok;
    memset(&d1, 0, sizeof d1); d1.n_threads = 1;
    memset(&d3, 0, sizeof d3); d3.n_threads = 3;
    c1 = sdx_create(&d1); c3 = sdx_create(&d3);
    T_CHECK(c1 && c3, "context");
    t_seed(4);
    ok = sdx_tensor_alloc(c1, &x, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(c1, &w, SDX_F16, 2, ws) == SDX_OK &&
         sdx_tensor_alloc(c1, &y1, SDX_F32, 2, ys) == SDX_OK && sdx_tensor_alloc(c1, &y3, SDX_F32, 2, ys) == SDX_OK;
    T_CHECK(ok, "alloc");
    t_fill_normal((float *)x.data, (size_t)(301 * 200), 1.0);
    for (int i = 0; i < 140 * 200; i++) ((uint16_t *)w.data)[i] = sdx_f32_to_f16((float)t_normal());
    ok = sdx__linear(c1, &y1, &x, &w, NULL, SDX_F32) == SDX_OK && sdx__linear(c3, &y3, &x, &w, NULL, SDX_F32) == SDX_OK &&
         memcmp(y1.data, y3.data, sdx_tensor_nbytes(&y1)) == 0;
    sdx_tensor_free(c1, &x); sdx_tensor_free(c1, &w); sdx_tensor_free(c1, &y1); sdx_tensor_free(c1, &y3);
    sdx_destroy(c1); sdx_destroy(c3);
    T_CHECK(ok, "1-thread and 3-thread results differ");
    return T_PASS;
}

/* ---- linear with block-quantized weights ------------------------------- */

/* Random blocks of a quantized type: random bytes, with the f16 scale
 * fields (ggml's layouts, src/core/quant.c) set to small positive
 * values, so every value is finite and of a weight's size. */
static void tk_rand_blocks(sdx_tensor *t) {
    static const struct { sdx_dtype type; int at[2]; } scales[] = {
        { SDX_Q4_0, { 0, -1 } },  { SDX_Q4_1, { 0, 2 } },  { SDX_Q5_0, { 0, -1 } }, { SDX_Q5_1, { 0, 2 } },
        { SDX_Q8_0, { 0, -1 } },  { SDX_Q2_K, { 80, 82 } }, { SDX_Q3_K, { 108, -1 } }, { SDX_Q4_K, { 0, 2 } },
        { SDX_Q5_K, { 0, 2 } },   { SDX_Q6_K, { 208, -1 } },
    };
    size_t bb, n = sdx_tensor_nbytes(t);
    unsigned char *p = (unsigned char *)t->data;
    sdx_dtype_block(t->dtype, &bb);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(t_uniform() * 256.0);
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
        if (scales[i].type == t->dtype)
            for (size_t b = 0; b < n; b += bb)
                for (int f = 0; f < 2; f++)
                    if (scales[i].at[f] >= 0) {
                        uint16_t h = sdx_f32_to_f16((float)((0.5 + t_uniform()) * 2e-3));
                        p[b + (size_t)scales[i].at[f]] = (unsigned char)h;
                        p[b + (size_t)scales[i].at[f] + 1] = (unsigned char)(h >> 8);
                    }
}

/* y = x w^T with w block-quantized against w dequantized to f32 first,
 * on the exact path (sdx_desc.quant_exact; the int8 kernels are
 * tests/t_quantmm.c's): the GEMM dequantizes the blocks into its f32 (and
 * bf16) panels, so the products and their order are the same, and so are
 * the bits. Per type,
 * with every shape whose rows are whole blocks of it: SD 1.5's layers
 * (attention, cross-attention keys from the 77-token context, the MLP's
 * down-projection, the time embedding, CLIP's fc2) and odd sizes (one
 * row, tails of every tile); f32 compute with the AVX-512 and the
 * portable packers, bf16 compute on AMX and on AVX512-BF16 where the CPU
 * has them (the quantized weight's panel packed whole, and in chunks of
 * one job's rows); f32 and f16 activations. */
static int linear_quantized_weights_equal_dequantized_f32_bit_for_bit(void) {
    static const struct { int64_t m, n, k; } shapes[] = {
        { 1024, 320, 320 }, { 77, 320, 768 }, { 256, 640, 2560 }, { 2, 1280, 1280 }, { 154, 768, 3072 },
        { 1, 33, 32 }, { 13, 17, 96 }, { 7, 5, 256 }, { 300, 19, 512 }, { 29, 530, 800 },
    };
    int cases = 0;
    for (int type = SDX_Q4_0; type <= SDX_Q6_K; type++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            int block = sdx_dtype_block((sdx_dtype)type, NULL);
            int64_t m = shapes[i].m, n = shapes[i].n, k = shapes[i].k;
            int64_t xs[2] = { m, k }, ws[2] = { n, k }, ys[2] = { m, n };
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            sdx_tensor *x, *wq, *wf, *b, *yq, *yf;
            float *xv, *bv;
            int ok = 1, bf16;
            if (k % block) { sdx_destroy(e.ctx); continue; }
            e.ctx->desc.quant_exact = 1;
            t_seed((uint64_t)(100 * type + (int)i));
            x = tk_rand(&e, i % 2 ? SDX_F16 : SDX_F32, 2, xs, 1.0, &xv);
            b = tk_rand(&e, SDX_F32, 1, &n, 0.5, &bv);
            wq = tk_tensor(&e, (sdx_dtype)type, 2, ws);
            wf = tk_tensor(&e, SDX_F32, 2, ws);
            yq = tk_tensor(&e, SDX_F32, 2, ys);
            yf = tk_tensor(&e, SDX_F32, 2, ys);
            if (!x || !b || !wq || !wf || !yq || !yf) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            tk_rand_blocks(wq);
            sdx__load_f32(wq->data, wq->dtype, 0, n * k, (float *)wf->data);
            bf16 = sdx__bf16_usable(e.ctx);     /* probes the CPU */
            for (int run = 0; ok && run < 5; run++) {
                static const char *const runs[5] = { "f32", "f32, portable packers", "bf16 as probed",
                                                     "bf16 as probed, the weight's panel a job's rows at a time",
                                                     "bf16 on AVX512-BF16" };
                sdx__cpu_state *cpu = sdx__cpu(e.ctx);
                sdx_dtype compute = run < 2 ? SDX_F32 : SDX_BF16;
                if (compute == SDX_BF16 && !bf16) continue;     /* it would compute in f32: runs 0 and 1 again */
                cpu->pack_scalar = run == 1;
                cpu->op_weight_chunk = run == 3 ? 1 : SDX__OP_WEIGHT_BYTES;
                if (run == 4) {       /* the kernel of CPUs without AMX, where this one has it */
                    if (!cpu->bf16_amx) continue;
                    cpu->bf16_amx = 0;
                    cpu->bf16_dot_pays = 1;
                }
                ok = sdx__linear(e.ctx, yq, x, wq, b, compute) == SDX_OK && sdx__linear(e.ctx, yf, x, wf, b, compute) == SDX_OK &&
                     !sdx__has_nonfinite(yf) && memcmp(yq->data, yf->data, sdx_tensor_nbytes(yf)) == 0;
                if (!ok)
                    snprintf(t_msg, sizeof t_msg, "%s [%lld, %lld] x [%lld, %lld]^T, %s: differs from the f32 weight (%s)",
                             sdx_dtype_name((sdx_dtype)type), (long long)m, (long long)k, (long long)n, (long long)k,
                             runs[run], sdx_last_error(e.ctx));
                cases++;
            }
            tk_done(&e);
            sdx_destroy(e.ctx);
            if (!ok) return T_FAIL;
        }
    T_NOTE("%d products, 10 types, bit-identical to the dequantized f32 weight", cases);
    return T_PASS;
}

/* conv2d with a block-quantized filter (sdx's --quantize-convolutions
 * layout: rows of C x kh x kw whole blocks) against the filter
 * dequantized to f32 first: the im2col GEMM packs it as its A operand and
 * the Winograd filter transforms read it through the same dequantizer, so
 * the bits are the f32 filter's. Per type where the row is whole blocks:
 * SD's 3x3 layers on the f32 and AMX Winograd paths (C 320 at 64x64; 256
 * channels at 32x32 for the K types' 256-value blocks, which the f32
 * transform widens 256 channels at a time), a stride-2 downsampler, a
 * small direct one and a 1x1 projection; f32 with both packers and bf16. */
static int conv2d_quantized_filters_equal_dequantized_f32_bit_for_bit(void) {
    static const struct { int64_t n, c, h, w, o; int k, stride, pad; } shapes[] = {
        { 1, 320, 64, 64, 64, 3, 1, 1 }, { 1, 512, 32, 32, 40, 3, 1, 1 }, { 2, 64, 17, 15, 96, 3, 2, 1 },
        { 1, 32, 9, 7, 5, 3, 1, 1 },     { 1, 256, 8, 8, 70, 1, 1, 0 }, { 1, 256, 32, 32, 256, 3, 1, 1 },
    };
    int cases = 0, winograd = 0;
    for (int type = SDX_Q4_0; type <= SDX_Q6_K; type++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const int block = sdx_dtype_block((sdx_dtype)type, NULL), k = shapes[i].k, st = shapes[i].stride, pad = shapes[i].pad;
            const int64_t c = shapes[i].c, o = shapes[i].o;
            const int64_t ho = (shapes[i].h + 2 * pad - k) / st + 1, wo = (shapes[i].w + 2 * pad - k) / st + 1;
            int64_t xs[4] = { shapes[i].n, c, shapes[i].h, shapes[i].w }, ws[4] = { o, c, k, k }, ys[4] = { shapes[i].n, o, ho, wo };
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            sdx_tensor *x, *wq, *wf, *b, *yq, *yf;
            float *xv, *bv;
            int ok = 1;
            if ((c * k * k) % block) { sdx_destroy(e.ctx); continue; }
            t_seed((uint64_t)(200 * type + (int)i));
            x = tk_rand(&e, i % 2 ? SDX_F16 : SDX_F32, 4, xs, 1.0, &xv);
            b = tk_rand(&e, SDX_F32, 1, &o, 0.5, &bv);
            wq = tk_tensor(&e, (sdx_dtype)type, 4, ws);
            wf = tk_tensor(&e, SDX_F32, 4, ws);
            yq = tk_tensor(&e, SDX_F32, 4, ys);
            yf = tk_tensor(&e, SDX_F32, 4, ys);
            if (!x || !b || !wq || !wf || !yq || !yf) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            tk_rand_blocks(wq);
            sdx__load_f32(wq->data, wq->dtype, 0, o * c * k * k, (float *)wf->data);
            const int bf16 = sdx__bf16_usable(e.ctx);     /* probes the CPU */
            for (int run = 0; ok && run < 4; run++) {
                static const char *const runs[4] = { "f32", "f32, portable packers", "bf16",
                                                     "bf16, the filter's panel (or transform) a job's rows at a time" };
                sdx_dtype compute = run < 2 ? SDX_F32 : SDX_BF16;
                if (compute == SDX_BF16 && !bf16) continue;     /* it would compute in f32: runs 0 and 1 again */
                sdx__cpu(e.ctx)->pack_scalar = run == 1;
                sdx__cpu(e.ctx)->op_weight_chunk = run == 3 ? 1 : SDX__OP_WEIGHT_BYTES;
                winograd += sdx__wino_pays(e.ctx, compute, x, wf, st, ho, wo);
                ok = sdx__conv2d_pad(e.ctx, yq, x, wq, b, st, pad, pad, pad, pad, compute) == SDX_OK &&
                     sdx__conv2d_pad(e.ctx, yf, x, wf, b, st, pad, pad, pad, pad, compute) == SDX_OK && !sdx__has_nonfinite(yf) &&
                     memcmp(yq->data, yf->data, sdx_tensor_nbytes(yf)) == 0;
                if (!ok)
                    snprintf(t_msg, sizeof t_msg, "%s filter [%lld, %lld, %d, %d] stride %d on [%lld, %lld, %lld, %lld], %s: differs "
                             "from the f32 filter (%s)", sdx_dtype_name((sdx_dtype)type), (long long)o, (long long)c, k, k, st,
                             (long long)xs[0], (long long)c, (long long)xs[2], (long long)xs[3], runs[run], sdx_last_error(e.ctx));
                cases++;
            }
            tk_done(&e);
            sdx_destroy(e.ctx);
            if (!ok) return T_FAIL;
        }
    T_NOTE("%d convolutions (%d on Winograd), 10 types, bit-identical to the dequantized f32 filter", cases, winograd);
    T_CHECK(winograd > 0, "no case ran the Winograd path");
    return T_PASS;
}

/* A quantized filter whose rows are not whole blocks, and one handed to a
 * backend without conv_blocks, are refused by the op's contract. */
static int conv2d_refuses_quantized_filters_it_cannot_take(void) {
    tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
    int64_t xs[4] = { 1, 16, 8, 8 }, ws[4] = { 8, 16, 1, 1 }, w2[4] = { 8, 32, 3, 3 }, ys[4] = { 1, 8, 8, 8 }, x2[4] = { 1, 32, 8, 8 };
    sdx_tensor *x = tk_tensor(&e, SDX_F32, 4, xs), *w = tk_tensor(&e, SDX_Q8_0, 4, w2), *y = tk_tensor(&e, SDX_F32, 4, ys);
    sdx_tensor *xw = tk_tensor(&e, SDX_F32, 4, x2), bad;
    int rc_rows, rc_backend;
    char msg[256];
    T_CHECK(x && w && y && xw, "alloc");
    memset(w->data, 0, sdx_tensor_nbytes(w));
    bad = *w;                   /* rows of 16 values: not a whole Q8_0 block */
    memcpy(bad.shape, ws, sizeof ws);
    rc_rows = sdx__conv2d_pad(e.ctx, y, x, &bad, NULL, 1, 0, 0, 0, 0, SDX_F32);
    snprintf(msg, sizeof msg, "%s", sdx_last_error(e.ctx));
    e.ctx->be.conv_blocks = 0;
    rc_backend = sdx__conv2d_pad(e.ctx, y, xw, w, NULL, 1, 1, 1, 1, 1, SDX_F32);
    T_NOTE("%s / %s", msg, sdx_last_error(e.ctx));
    T_CHECK(rc_rows == SDX_ERR_INVALID_ARG && strstr(msg, "whole blocks"), "partial blocks: %d: %s", rc_rows, msg);
    T_CHECK(rc_backend == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(e.ctx), "Q8_0"), "no conv_blocks: %d: %s", rc_backend,
            sdx_last_error(e.ctx));
    tk_done(&e);
    sdx_destroy(e.ctx);
    return T_PASS;
}

static int linear_rejects_mismatched_shapes(void) {
    sdx_ctx *ctx = t_ctx();
    float xb[6], wb[8], yb[8];
    int64_t xs[2] = { 2, 3 }, ws[2] = { 4, 2 }, ys[2] = { 2, 4 };
    sdx_tensor x = sdx__view(SDX_F32, xb, 2, xs), w = sdx__view(SDX_F32, wb, 2, ws), y = sdx__view(SDX_F32, yb, 2, ys);
    int rc = sdx__linear(ctx, &y, &x, &w, NULL, SDX_F32);
    int named = strstr(sdx_last_error(ctx), "linear") && strstr(sdx_last_error(ctx), "[2, 3]") &&
                strstr(sdx_last_error(ctx), "[4, 2]");
    T_NOTE("message: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    T_CHECK(rc == SDX_ERR_INVALID_ARG, "rc %d", rc);
    T_CHECK(named, "message should name the op and both shapes");
    return T_PASS;
}

/* The fused residual ops on the CPU: y = op(x) + res, in place (res is
 * y) and with res apart, have the bits of the op followed by add (f32:
 * the sum commutes); linear adds it in the GEMM's store, the convolution
 * as a second pass (through a temporary in place). A residual that
 * overlaps y only in part, or y's bytes as another type, is refused. */
static int fused_residuals_equal_the_op_then_add(void) {
    sdx_ctx *ctx = t_ctx();
    static float xb[3 * 70], wb[50 * 70], bb[50], rb[3 * 50], want[3 * 50], got[3 * 50];
    static float cx[2 * 8 * 5 * 6], cw[4 * 8 * 9], cb[4], cr[2 * 4 * 5 * 6], cwant[2 * 4 * 5 * 6], cgot[2 * 4 * 5 * 6];
    int64_t xs[2] = { 3, 70 }, ws[2] = { 50, 70 }, bs[1] = { 50 }, ys[2] = { 3, 50 }, part[2] = { 2, 50 };
    int64_t cxs[4] = { 2, 8, 5, 6 }, cws[4] = { 4, 8, 3, 3 }, cbs[1] = { 4 }, cys[4] = { 2, 4, 5, 6 };
    sdx_tensor x = sdx__view(SDX_F32, xb, 2, xs), w = sdx__view(SDX_F32, wb, 2, ws), b = sdx__view(SDX_F32, bb, 1, bs);
    sdx_tensor r = sdx__view(SDX_F32, rb, 2, ys), yw = sdx__view(SDX_F32, want, 2, ys), yg = sdx__view(SDX_F32, got, 2, ys);
    sdx_tensor shifted = sdx__view(SDX_F32, got + 50, 2, part), halves = sdx__view(SDX_F16, got, 2, ys);
    sdx_tensor X = sdx__view(SDX_F32, cx, 4, cxs), W = sdx__view(SDX_F32, cw, 4, cws), B = sdx__view(SDX_F32, cb, 1, cbs);
    sdx_tensor R = sdx__view(SDX_F32, cr, 4, cys), YW = sdx__view(SDX_F32, cwant, 4, cys), YG = sdx__view(SDX_F32, cgot, 4, cys);
    int rc;
    t_seed(12);
    t_fill_normal(xb, 3 * 70, 1.0); t_fill_normal(wb, 50 * 70, 0.1); t_fill_normal(bb, 50, 1.0); t_fill_normal(rb, 3 * 50, 1.0);
    t_fill_normal(cx, 2 * 8 * 30, 1.0); t_fill_normal(cw, 4 * 8 * 9, 0.1); t_fill_normal(cb, 4, 1.0); t_fill_normal(cr, 2 * 4 * 30, 1.0);
    T_CHECK(sdx__linear(ctx, &yw, &x, &w, &b, SDX_F32) == SDX_OK && sdx__add(ctx, &yw, &yw, &r) == SDX_OK, "%s", sdx_last_error(ctx));
    memcpy(got, rb, sizeof got);
    T_CHECK(sdx__linear_add(ctx, &yg, &x, &w, &b, &yg, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(got, want, sizeof got), "linear_add in place differs from linear then add");
    memset(got, 0, sizeof got);
    T_CHECK(sdx__linear_add(ctx, &yg, &x, &w, &b, &r, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(got, want, sizeof got), "linear_add differs from linear then add");
    T_CHECK(sdx__conv2d(ctx, &YW, &X, &W, &B, 1, 1, SDX_F32) == SDX_OK && sdx__add(ctx, &YW, &YW, &R) == SDX_OK, "%s",
            sdx_last_error(ctx));
    memcpy(cgot, cr, sizeof cgot);
    T_CHECK(sdx__conv2d_add(ctx, &YG, &X, &W, &B, &YG, 1, 1, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(cgot, cwant, sizeof cgot), "conv2d_add in place differs from conv then add");
    memset(cgot, 0, sizeof cgot);
    T_CHECK(sdx__conv2d_add(ctx, &YG, &X, &W, &B, &R, 1, 1, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(cgot, cwant, sizeof cgot), "conv2d_add differs from conv then add");
    shifted.shape[0] = 3;   /* rows 1..3 of a y of rows 0..2: overlaps in part */
    rc = sdx__linear_add(ctx, &yg, &x, &w, &b, &shifted, SDX_F32);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "res must be y itself or apart"), "overlap: %d: %s", rc,
            sdx_last_error(ctx));
    rc = sdx__linear_add(ctx, &yg, &x, &w, &b, &halves, SDX_F32);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "res must be y itself or apart"), "y as f16: %d: %s", rc,
            sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* linear_geglu on the CPU is the linear into h, then the gate: y and h
 * bit for bit those of sdx__linear and sdx__geglu, and without h (room
 * of its own) the same y. Its contract: h of w's rows and y's type, y
 * half of h's last dim, y, h and x apart. */
static int linear_geglu_is_the_linear_then_the_gate(void) {
    sdx_ctx *ctx = t_ctx();
    static float xb[3 * 40], wb[2 * 24 * 40], bb[2 * 24], hw[3 * 48], yw[3 * 24], hg[3 * 48], yg[3 * 24];
    int64_t xs[2] = { 3, 40 }, ws[2] = { 48, 40 }, bs[1] = { 48 }, hs[2] = { 3, 48 }, ys[2] = { 3, 24 }, odd[2] = { 3, 25 };
    sdx_tensor x = sdx__view(SDX_F32, xb, 2, xs), w = sdx__view(SDX_F32, wb, 2, ws), b = sdx__view(SDX_F32, bb, 1, bs);
    sdx_tensor h = sdx__view(SDX_F32, hw, 2, hs), y = sdx__view(SDX_F32, yw, 2, ys);
    sdx_tensor h2 = sdx__view(SDX_F32, hg, 2, hs), y2 = sdx__view(SDX_F32, yg, 2, ys), wide = sdx__view(SDX_F32, yg, 2, odd);
    sdx_tensor h16 = sdx__view(SDX_F16, hg, 2, hs), in_h = sdx__view(SDX_F32, hg + 24, 2, ys);
    int rc;
    t_seed(13);
    t_fill_normal(xb, 3 * 40, 1.0); t_fill_normal(wb, 48 * 40, 0.2); t_fill_normal(bb, 48, 1.0);
    T_CHECK(sdx__linear(ctx, &h, &x, &w, &b, SDX_F32) == SDX_OK && sdx__geglu(ctx, &y, &h, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__linear_geglu(ctx, &y2, &h2, &x, &w, &b, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(yg, yw, sizeof yg) && !memcmp(hg, hw, sizeof hg), "linear_geglu differs from linear then geglu");
    memset(yg, 0, sizeof yg);
    T_CHECK(sdx__linear_geglu(ctx, &y2, NULL, &x, &w, &b, SDX_F32) == SDX_OK && !memcmp(yg, yw, sizeof yg),
            "linear_geglu without h differs: %s", sdx_last_error(ctx));
    rc = sdx__linear_geglu(ctx, &wide, &h2, &x, &w, &b, SDX_F32);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "twice"), "y of 25 columns: %d: %s", rc, sdx_last_error(ctx));
    rc = sdx__linear_geglu(ctx, &y, &h16, &x, &w, &b, SDX_F32);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "dtype"), "f16 h: %d: %s", rc, sdx_last_error(ctx));
    rc = sdx__linear_geglu(ctx, &in_h, &h2, &x, &w, &b, SDX_F32);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "apart"), "y inside h: %d: %s", rc, sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* x [3, -5] and w [4, -5] agree on in-features and have 15 and 20
 * "elements"; a negative K used to skip the GEMM loop and store an
 * uninitialised tile as the result. */
static int linear_rejects_negative_dims(void) {
    sdx_ctx *ctx = t_ctx();
    float xb[15], wb[20], yb[12];
    int64_t xs[2] = { 3, -5 }, ws[2] = { 4, -5 }, ys[2] = { 3, 4 };
    sdx_tensor x = sdx__view(SDX_F32, xb, 2, xs), w = sdx__view(SDX_F32, wb, 2, ws), y = sdx__view(SDX_F32, yb, 2, ys);
    int rc;
    t_seed(4);
    t_fill_normal(xb, 15, 1.0);
    t_fill_normal(wb, 20, 1.0);
    rc = sdx__linear(ctx, &y, &x, &w, NULL, SDX_F32);
    T_NOTE("message: %s", sdx_last_error(ctx));
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "negative dim") &&
            strstr(sdx_last_error(ctx), "[3, -5]"), "rc %d: %s", rc, sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* The f32 GEMM's micro-kernels: every one this CPU runs computes an MR x
 * NR tile within the f32 accumulation bound of double, storing and
 * accumulating into a wider C; the fused multiply-add kernels (AVX-512,
 * AVX2 run as two halves of 6 rows, NEON) are one chain of FMAs per
 * output in k order, so AVX-512 and AVX2 give the same bits and f32
 * mode's results do not depend on which one the CPU picks. */
static int gemm_micro_kernels_agree_with_double(void) {
    enum { KC = 37, LDC = SDX__NR + 5 };
    struct { const char *name; sdx__micro_fn fn; } kernels[4];
    float a[KC * SDX__MR], b[KC * SDX__NR], c0[SDX__MR * LDC], c[4][SDX__MR * LDC];
    int nk = 0;
    kernels[nk].name = "portable C"; kernels[nk++].fn = sdx__micro_c;
#if defined(SDX__X86)
    if (sdx__have_avx512f()) { kernels[nk].name = "AVX-512"; kernels[nk++].fn = sdx__micro_avx512; }
    if (sdx__have_avx2()) { kernels[nk].name = "AVX2"; kernels[nk++].fn = sdx__micro_avx2; }
#elif defined(SDX__NEON)
    kernels[nk].name = "NEON"; kernels[nk++].fn = sdx__micro_neon;
#endif
    t_seed(21);
    t_fill_normal(a, KC * SDX__MR, 1.0);
    t_fill_normal(b, KC * SDX__NR, 1.0);
    t_fill_normal(c0, SDX__MR * LDC, 1.0);
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        for (int e = 0; e < nk; e++) {
            double worst = 0;
            memcpy(c[e], c0, sizeof c0);
            kernels[e].fn(KC, a, b, c[e], LDC, accumulate);
            for (int r = 0; r < SDX__MR; r++)
                for (int j = 0; j < LDC; j++) {
                    double ref = accumulate ? c0[r * LDC + j] : 0.0, mag = fabs(ref), err;
                    if (j >= SDX__NR) {
                        T_CHECK(c[e][r * LDC + j] == c0[r * LDC + j], "%s wrote past its tile (row %d, column %d)",
                                kernels[e].name, r, j);
                        continue;
                    }
                    for (int k = 0; k < KC; k++) {
                        ref += (double)a[k * SDX__MR + r] * b[k * SDX__NR + j];
                        mag += fabs((double)a[k * SDX__MR + r] * b[k * SDX__NR + j]);
                    }
                    err = fabs(c[e][r * LDC + j] - ref) / ((KC + 2) * 0x1p-23 * mag + 1e-30);
                    if (err > worst) worst = err;
                }
            T_NOTE("%s, accumulate %d: worst error / f32 bound %.3f", kernels[e].name, accumulate, worst);
            T_CHECK(worst <= 1.0, "%s kernel, accumulate %d: error %.3g x the f32 bound", kernels[e].name, accumulate, worst);
        }
#if defined(SDX__X86)
        if (sdx__have_avx512f() && sdx__have_avx2())
            T_CHECK(memcmp(c[1], c[2], sizeof c0) == 0, "AVX-512 and AVX2 kernels differ (accumulate %d)", accumulate);
#endif
    }
    return T_PASS;
}

/* ---- conv2d ------------------------------------------------------------ */

typedef struct tk_conv { int64_t n, c, h, w, o, kh, kw; int stride, pt, pl, pb, pr, bias; } tk_conv;

static int tk_conv_case(const tk_conv *cv) {
    int rc = T_PASS;
    int64_t ho = (cv->h + cv->pt + cv->pb - cv->kh) / cv->stride + 1;
    int64_t wo = (cv->w + cv->pl + cv->pr - cv->kw) / cv->stride + 1;
    for (int wi = 0; wi < 3 && rc == T_PASS; wi++)
        for (int ai = 0; ai < 3 && rc == T_PASS; ai++) {
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            int64_t xs[4] = { cv->n, cv->c, cv->h, cv->w }, ws[4] = { cv->o, cv->c, cv->kh, cv->kw };
            int64_t ys[4] = { cv->n, cv->o, ho, wo }, ny = cv->n * cv->o * ho * wo, kk = cv->c * cv->kh * cv->kw;
            float *xv, *wv, *bv = NULL, *yv;
            sdx_tensor *x, *w, *b = NULL, *y;
            double *ref, *mag;
            tk_err err;
            T_CHECK(e.ctx, "context");
            x = tk_rand(&e, tk_types[ai], 4, xs, 1.0, &xv);
            w = tk_rand(&e, tk_types[wi], 4, ws, 0.2, &wv);
            if (cv->bias) b = tk_rand(&e, tk_types[wi], 1, &cv->o, 0.5, &bv);
            y = tk_tensor(&e, tk_types[ai], 4, ys);
            ref = (double *)tk_alloc(&e, (size_t)ny * sizeof(double));
            mag = (double *)tk_alloc(&e, (size_t)ny * sizeof(double));
            if (!x || !w || (cv->bias && !b) || !y || !ref || !mag) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            rc = sdx__conv2d_pad(e.ctx, y, x, w, b, cv->stride, cv->pt, cv->pl, cv->pb, cv->pr, SDX_F32);
            if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "conv2d: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
            for (int64_t n = 0; n < cv->n; n++)
                for (int64_t o = 0; o < cv->o; o++)
                    for (int64_t oy = 0; oy < ho; oy++)
                        for (int64_t ox = 0; ox < wo; ox++) {
                            double s = bv ? bv[o] : 0.0, a = bv ? fabs(bv[o]) : 0.0;
                            for (int64_t c = 0; c < cv->c; c++)
                                for (int64_t ky = 0; ky < cv->kh; ky++)
                                    for (int64_t kx = 0; kx < cv->kw; kx++) {
                                        int64_t iy = oy * cv->stride - cv->pt + ky, ix = ox * cv->stride - cv->pl + kx;
                                        double p;
                                        if (iy < 0 || iy >= cv->h || ix < 0 || ix >= cv->w) continue;
                                        p = (double)wv[((o * cv->c + c) * cv->kh + ky) * cv->kw + kx] *
                                            xv[((n * cv->c + c) * cv->h + iy) * cv->w + ix];
                                        s += p; a += fabs(p);
                                    }
                            ref[((n * cv->o + o) * ho + oy) * wo + ox] = s;
                            mag[((n * cv->o + o) * ho + oy) * wo + ox] = a;
                        }
            yv = tk_values(&e, y);
            err = tk_compare(yv, ref, mag, ny, y->dtype, (double)(kk + 1) * 0x1p-24);
            tk_done(&e);
            sdx_destroy(e.ctx);
            TK_EXPECT(err, tk_name("conv2d", tk_types[wi], tk_types[ai]), "conv2d %s: ratio %.3f (max abs %g)",
                      tk_label, err.ratio, err.max_abs);
        }
    return rc;
}

static int conv2d_1x1(void) { tk_conv c = { 2, 20, 9, 7, 24, 1, 1, 1, 0, 0, 0, 0, 1 }; t_seed(10); return tk_conv_case(&c); }
static int conv2d_3x3_pad1(void) { tk_conv c = { 1, 13, 11, 10, 17, 3, 3, 1, 1, 1, 1, 1, 1 }; t_seed(11); return tk_conv_case(&c); }
static int conv2d_3x3_stride2_pad1(void) { tk_conv c = { 2, 9, 13, 12, 11, 3, 3, 2, 1, 1, 1, 1, 1 }; t_seed(12); return tk_conv_case(&c); }
/* The VAE encoder's downsample: pad right/bottom only, stride 2. */
static int conv2d_asymmetric_pad_0011_stride2(void) { tk_conv c = { 1, 8, 10, 10, 6, 3, 3, 2, 0, 0, 1, 1, 1 }; t_seed(13); return tk_conv_case(&c); }
/* Rows of 37 and 40 pixels: whole NR-pixel strips inside a row take the
 * contiguous fast path, the rest the per-pixel path. */
static int conv2d_3x3_wide_rows(void) {
    tk_conv a = { 1, 6, 7, 40, 5, 3, 3, 1, 1, 1, 1, 1, 1 }, b = { 2, 5, 6, 37, 4, 3, 3, 1, 1, 1, 1, 1, 1 };
    int rc;
    t_seed(15);
    rc = tk_conv_case(&a);
    return rc == T_PASS ? tk_conv_case(&b) : rc;
}
/* 2 output-channel tiles, 2 pixel tiles, 2 KC blocks, no bias. */
static int conv2d_3x3_spans_tiles_without_bias(void) { tk_conv c = { 1, 40, 12, 13, 150, 3, 3, 1, 1, 1, 1, 1, 0 }; t_seed(14); return tk_conv_case(&c); }

/* The f32 GEMM's job shapes (blocks of up to MJ x NJ, split for the
 * threads), its packers (AVX-512 16 x 16 or AVX2 8 x 8 transposes,
 * masked, expanded and gathered loads, whichever the CPU has, and the
 * AVX2 ones also on a CPU with AVX-512) and the
 * images of a conv batch run side by side as columns: none of them may
 * change a bit, since each output is the same chain of multiply-adds
 * split at the same KC steps. The reference is one thread with the
 * portable packers. Shapes: K with a tail of a 16- and an 8-wide load and
 * over KC, rows and columns past MJ and NJ and not multiples of the
 * strips, convs whose pixel strips straddle two images, rows narrower
 * than a strip (gathered), stride 2, 1x1, and wide rows whose edges take
 * masked loads; the conv2d and linear cases check the same paths against
 * double. */
static int gemm_blocking_and_packing_change_no_bit(void) {
    static const struct { int64_t m, k, n; sdx_dtype xt, wt; } lin[] = {
        { 301, 200, 140, SDX_F32, SDX_F16 }, { 700, 300, 530, SDX_F32, SDX_F32 }, { 77, 37, 1100, SDX_BF16, SDX_BF16 },
        { 5, 16, 3, SDX_F16, SDX_F32 },
    };
    static const tk_conv conv[] = {
        { 3, 19, 9, 7, 30, 3, 3, 1, 1, 1, 1, 1, 1 },    /* 63 pixels: strips straddle images */
        { 2, 40, 34, 37, 300, 3, 3, 1, 1, 1, 1, 1, 1 }, /* wide rows, 300 outputs past MJ */
        { 2, 33, 13, 12, 20, 3, 3, 2, 1, 1, 1, 1, 0 },  /* stride 2 */
        { 2, 64, 24, 24, 50, 1, 1, 1, 0, 0, 0, 0, 1 },  /* 1x1 */
        { 1, 8, 10, 10, 6, 3, 3, 2, 0, 0, 1, 1, 1 },    /* asymmetric pad */
    };
    sdx_desc d1, d3;
    sdx_ctx *c1, *c2, *c3;
    int ok = 1;
    memset(&d1, 0, sizeof d1); d1.n_threads = 1;
    memset(&d3, 0, sizeof d3); d3.n_threads = 3;
    c1 = sdx_create(&d1); c2 = t_ctx(); c3 = sdx_create(&d3);
    T_CHECK(c1 && c2 && c3 && sdx__cpu(c1) && sdx__cpu(c2), "context");
    sdx__cpu(c1)->pack_scalar = 1;
    sdx__cpu(c2)->pack_avx2 = 1;     /* where the CPU has AVX-512, its AVX2 packers too */
    t_seed(31);
    for (size_t i = 0; ok && i < sizeof lin / sizeof lin[0]; i++) {
        tk_env e = { c1, { { 0 } }, 0, { 0 }, 0 };
        int64_t xs[2] = { lin[i].m, lin[i].k }, ws[2] = { lin[i].n, lin[i].k }, ys[2] = { lin[i].m, lin[i].n };
        float *xv, *wv, *bv;
        sdx_tensor *x = tk_rand(&e, lin[i].xt, 2, xs, 1.0, &xv), *w = tk_rand(&e, lin[i].wt, 2, ws, 0.2, &wv);
        sdx_tensor *b = tk_rand(&e, SDX_F32, 1, &lin[i].n, 0.5, &bv);
        sdx_tensor *y1 = tk_tensor(&e, SDX_F32, 2, ys), *y2 = tk_tensor(&e, SDX_F32, 2, ys), *y3 = tk_tensor(&e, SDX_F32, 2, ys);
        ok = x && w && b && y1 && y2 && y3 && sdx__linear(c1, y1, x, w, b, SDX_F32) == SDX_OK &&
             sdx__linear(c2, y2, x, w, b, SDX_F32) == SDX_OK && sdx__linear(c3, y3, x, w, b, SDX_F32) == SDX_OK &&
             memcmp(y1->data, y2->data, sdx_tensor_nbytes(y1)) == 0 && memcmp(y1->data, y3->data, sdx_tensor_nbytes(y1)) == 0;
        if (!ok) snprintf(t_msg, sizeof t_msg, "linear %lld x %lld x %lld: results differ (or failed)",
                          (long long)lin[i].m, (long long)lin[i].k, (long long)lin[i].n);
        tk_done(&e);
    }
    for (size_t i = 0; ok && i < sizeof conv / sizeof conv[0]; i++) {
        const tk_conv *cv = &conv[i];
        tk_env e = { c1, { { 0 } }, 0, { 0 }, 0 };
        int64_t ho = (cv->h + cv->pt + cv->pb - cv->kh) / cv->stride + 1, wo = (cv->w + cv->pl + cv->pr - cv->kw) / cv->stride + 1;
        int64_t xs[4] = { cv->n, cv->c, cv->h, cv->w }, ws[4] = { cv->o, cv->c, cv->kh, cv->kw }, ys[4] = { cv->n, cv->o, ho, wo };
        float *xv, *wv, *bv;
        sdx_tensor *x = tk_rand(&e, SDX_F32, 4, xs, 1.0, &xv), *w = tk_rand(&e, SDX_F16, 4, ws, 0.2, &wv);
        sdx_tensor *b = cv->bias ? tk_rand(&e, SDX_F32, 1, &cv->o, 0.5, &bv) : NULL;
        sdx_tensor *y1 = tk_tensor(&e, SDX_F32, 4, ys), *y2 = tk_tensor(&e, SDX_F32, 4, ys), *y3 = tk_tensor(&e, SDX_F32, 4, ys);
        /* the im2col GEMM itself, whatever conv2d would pick */
        ok = x && w && (b || !cv->bias) && y1 && y2 && y3 &&
             sdx__conv2d_direct(c1, y1, x, w, b, cv->stride, cv->pt, cv->pl, SDX_F32) == SDX_OK &&
             sdx__conv2d_direct(c2, y2, x, w, b, cv->stride, cv->pt, cv->pl, SDX_F32) == SDX_OK &&
             sdx__conv2d_direct(c3, y3, x, w, b, cv->stride, cv->pt, cv->pl, SDX_F32) == SDX_OK &&
             memcmp(y1->data, y2->data, sdx_tensor_nbytes(y1)) == 0 && memcmp(y1->data, y3->data, sdx_tensor_nbytes(y1)) == 0;
        if (!ok) snprintf(t_msg, sizeof t_msg, "conv %lldx%lld %lld->%lld at %lldx%lld, batch %lld, stride %d: results differ (or failed)",
                          (long long)cv->kh, (long long)cv->kw, (long long)cv->c, (long long)cv->o, (long long)cv->h,
                          (long long)cv->w, (long long)cv->n, cv->stride);
        tk_done(&e);
    }
    sdx_destroy(c1); sdx_destroy(c2); sdx_destroy(c3);
    return ok ? T_PASS : T_FAIL;
}

/* ---- Winograd conv3x3 -------------------------------------------------- */
/* The Winograd path against the direct (im2col GEMM) path on the same
 * stored inputs: y in f32 so the comparison sees the arithmetic, not the
 * output rounding. Spec: rel-L2 <= 1e-5 per convolution. */

typedef struct tk_wino { int64_t n, c, h, w, o; int pt, pl, pb, pr; sdx_dtype wt, at; } tk_wino;

/* rel-L2 of Winograd against direct for one layer, or -1 on failure;
 * `portable`: the transforms' portable code, not the AVX-512 one. */
static double tk_wino_case(const tk_wino *cv, double xscale, int portable) {
    tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
    int64_t ho = cv->h + cv->pt + cv->pb - 2, wo = cv->w + cv->pl + cv->pr - 2;
    int64_t xs[4] = { cv->n, cv->c, cv->h, cv->w }, ws[4] = { cv->o, cv->c, 3, 3 }, ys[4] = { cv->n, cv->o, ho, wo };
    float *xv, *wv, *bv;
    sdx_tensor *x, *w, *b, *yw, *yd;
    double r = -1;
    if (!e.ctx || !sdx__cpu(e.ctx)) return -1;
    sdx__cpu(e.ctx)->pack_scalar = portable;
    x = tk_rand(&e, cv->at, 4, xs, xscale, &xv);
    w = tk_rand(&e, cv->wt, 4, ws, 1.0 / sqrt((double)cv->c * 9.0), &wv);
    b = tk_rand(&e, cv->wt, 1, &cv->o, 0.1, &bv);
    yw = tk_tensor(&e, SDX_F32, 4, ys);
    yd = tk_tensor(&e, SDX_F32, 4, ys);
    if (x && w && b && yw && yd && sdx__conv2d_winograd(e.ctx, yw, x, w, b, cv->pt, cv->pl, SDX_F32) == SDX_OK &&
        sdx__conv2d_direct(e.ctx, yd, x, w, b, 1, cv->pt, cv->pl, SDX_F32) == SDX_OK)
        r = t_rel_l2_f32((const float *)yw->data, (const float *)yd->data, (size_t)sdx_tensor_numel(yd));
    T_NOTE("winograd %4lld->%-4lld %2lldx%-2lld n=%lld pad %d%d%d%d w=%s x=%s%s: rel_l2 vs direct %.3g",
           (long long)cv->c, (long long)cv->o, (long long)cv->h, (long long)cv->w, (long long)cv->n,
           cv->pt, cv->pl, cv->pb, cv->pr, sdx_dtype_name(cv->wt), sdx_dtype_name(cv->at),
           portable ? " portable" : "", r);
    tk_done(&e);
    sdx_destroy(e.ctx);
    return r;
}

/* Each case with the AVX-512 transforms (where the CPU has them) and
 * with the portable ones. */
static int tk_wino_cases(const tk_wino *cases, int n) {
    for (int i = 0; i < 2 * n; i++) {
        double r;
        t_seed(600 + (uint64_t)(i / 2));
        r = tk_wino_case(&cases[i / 2], 1.0, i % 2);
        T_CHECK(r >= 0, "winograd case %d: a convolution failed", i / 2);
        T_CHECK(r <= 1e-5, "winograd case %d (%lld->%lld%s): rel_l2 %.3g > 1e-5", i / 2, (long long)cases[i / 2].c,
                (long long)cases[i / 2].o, i % 2 ? ", portable" : "", r);
    }
    return T_PASS;
}

/* SD UNet widths at small and odd sizes, batch 2, f16/bf16/f32 storage. */
static int conv3x3_winograd_unet_layers_within_1e5_of_direct(void) {
    static const tk_wino cases[] = {
        { 2, 320, 16, 16, 320, 1, 1, 1, 1, SDX_F16, SDX_F32 },
        { 1, 960, 9, 11, 320, 1, 1, 1, 1, SDX_F16, SDX_F16 },
        { 1, 640, 13, 7, 640, 1, 1, 1, 1, SDX_BF16, SDX_BF16 },
        { 2, 1280, 5, 6, 1280, 1, 1, 1, 1, SDX_F16, SDX_F32 },
        { 1, 2560, 4, 4, 1280, 1, 1, 1, 1, SDX_F32, SDX_F32 },
    };
    return tk_wino_cases(cases, SDX__ARRAY_LEN(cases));
}

/* VAE widths; no padding (the circular path pads first), asymmetric pads;
 * a row of more than 16 tiles. */
static int conv3x3_winograd_vae_layers_within_1e5_of_direct(void) {
    static const tk_wino cases[] = {
        { 1, 512, 8, 8, 512, 1, 1, 1, 1, SDX_F16, SDX_F16 },
        { 2, 256, 17, 15, 256, 1, 1, 1, 1, SDX_BF16, SDX_F32 },
        { 1, 128, 37, 33, 128, 1, 1, 1, 1, SDX_F32, SDX_BF16 },
        { 1, 128, 19, 23, 3, 1, 1, 1, 1, SDX_F16, SDX_F32 },
        { 1, 256, 12, 14, 256, 0, 0, 0, 0, SDX_F16, SDX_F32 },
        { 2, 64, 11, 9, 96, 0, 1, 1, 0, SDX_F32, SDX_F16 },
        { 1, 32, 9, 70, 24, 1, 1, 1, 1, SDX_F16, SDX_F32 },   /* 16 tiles along a row: contiguous loads */
    };
    return tk_wino_cases(cases, SDX__ARRAY_LEN(cases));
}

/* Seamless tiling: ctx->circular wraps the input before a pad-0 conv,
 * which must take the Winograd path and match direct on the wrapped input. */
static int conv3x3_winograd_circular_matches_direct(void) {
    tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
    int64_t xs[4] = { 1, 256, 32, 35 }, xps[4] = { 1, 256, 34, 37 }, ws[4] = { 256, 256, 3, 3 }, ys[4] = { 1, 256, 32, 35 };
    float *xv, *wv;
    sdx_tensor *x, *xp, *w, *yw, *yd;
    double r = -1;
    int ok;
    T_CHECK(e.ctx, "context");
    t_seed(650);
    x = tk_rand(&e, SDX_F16, 4, xs, 1.0, &xv);
    w = tk_rand(&e, SDX_F16, 4, ws, 0.05, &wv);
    xp = tk_tensor(&e, SDX_F16, 4, xps);
    yw = tk_tensor(&e, SDX_F32, 4, ys);
    yd = tk_tensor(&e, SDX_F32, 4, ys);
    ok = x && w && xp && yw && yd;
    T_CHECK(sdx__wino_pays(e.ctx, SDX_F32, xp ? xp : x, w, 1, 32, 35), "the case must be one Winograd is chosen for");
    e.ctx->circular = 1;
    ok = ok && sdx__conv2d(e.ctx, yw, x, w, NULL, 1, 1, SDX_F32) == SDX_OK;
    e.ctx->circular = 0;
    ok = ok && sdx__pad_circular(e.ctx, xp, x, 1, 1, 1, 1) == SDX_OK &&
         sdx__conv2d_direct(e.ctx, yd, xp, w, NULL, 1, 0, 0, SDX_F32) == SDX_OK;
    if (ok) r = t_rel_l2_f32((const float *)yw->data, (const float *)yd->data, (size_t)sdx_tensor_numel(yd));
    T_NOTE("circular 256->256 32x35: rel_l2 vs direct %.3g", r);
    tk_done(&e);
    sdx_destroy(e.ctx);
    T_CHECK(ok, "circular conv failed");
    T_CHECK(r <= 1e-5, "circular winograd rel_l2 %.3g > 1e-5", r);
    return T_PASS;
}

/* f16 activations near 65504: the transforms add and subtract up to ~100x
 * the input in f32, which cannot overflow; f16 outputs past the range
 * saturate to +-65504 on store, as direct's do, and stay finite. */
static int conv3x3_winograd_f16_stress_inputs_stay_finite(void) {
    tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
    int64_t xs[4] = { 1, 64, 16, 16 }, ws[4] = { 64, 64, 3, 3 };
    sdx_tensor *x, *w, *yw, *yd;
    int64_t n = 64 * 16 * 16, bad = 0, saturated = 0, differ = 0;
    int ok;
    T_CHECK(e.ctx, "context");
    x = tk_tensor(&e, SDX_F16, 4, xs);
    w = tk_tensor(&e, SDX_F16, 4, ws);
    yw = tk_tensor(&e, SDX_F16, 4, xs);
    yd = tk_tensor(&e, SDX_F16, 4, xs);
    T_CHECK(x && w && yw && yd, "alloc");
    t_seed(660);
    for (int64_t i = 0; i < n; i++) tk_set(x, i, (float)((t_uniform() < 0.5 ? -1 : 1) * (60000.0 + 5000.0 * t_normal())));
    for (int64_t i = 0; i < sdx_tensor_numel(w); i++) tk_set(w, i, (float)(0.05 * t_normal()));
    for (int64_t i = 0; i < n; i++) if (!isfinite(sdx_f16_to_f32(((const uint16_t *)x->data)[i]))) tk_set(x, i, 65504.0f);
    ok = sdx__conv2d_winograd(e.ctx, yw, x, w, NULL, 1, 1, SDX_F32) == SDX_OK && sdx__conv2d_direct(e.ctx, yd, x, w, NULL, 1, 1, 1, SDX_F32) == SDX_OK;
    for (int64_t i = 0; ok && i < n; i++) {
        float a = sdx_f16_to_f32(((const uint16_t *)yw->data)[i]), b = sdx_f16_to_f32(((const uint16_t *)yd->data)[i]);
        bad += !isfinite(a);
        saturated += fabsf(a) == 65504.0f;
        differ += (fabsf(b) == 65504.0f) != (fabsf(a) == 65504.0f);
    }
    T_NOTE("f16 stress: %lld of %lld outputs saturated, %lld non-finite, %lld saturate on one path only",
           (long long)saturated, (long long)n, (long long)bad, (long long)differ);
    tk_done(&e);
    sdx_destroy(e.ctx);
    T_CHECK(ok, "conv failed");
    T_CHECK(saturated > 0 && saturated < n, "test data must saturate some outputs and not others (%lld)", (long long)saturated);
    T_CHECK(differ * 100 < n, "%lld outputs saturate on one path only", (long long)differ);
    T_CHECK(bad == 0, "%lld non-finite outputs", (long long)bad);
    return T_PASS;
}

static int conv2d_rejects_wrong_output_shape(void) {
    sdx_ctx *ctx = t_ctx();
    float xb[2 * 5 * 5], wb[3 * 2 * 9], yb[3 * 5 * 4];
    int64_t xs[4] = { 1, 2, 5, 5 }, ws[4] = { 3, 2, 3, 3 }, ys[4] = { 1, 3, 5, 4 };
    sdx_tensor x = sdx__view(SDX_F32, xb, 4, xs), w = sdx__view(SDX_F32, wb, 4, ws), y = sdx__view(SDX_F32, yb, 4, ys);
    int rc = sdx__conv2d(ctx, &y, &x, &w, NULL, 1, 1, SDX_F32);
    int named = strstr(sdx_last_error(ctx), "conv2d") && strstr(sdx_last_error(ctx), "[1, 3, 5, 5]");
    T_NOTE("message: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    T_CHECK(rc == SDX_ERR_INVALID_ARG, "rc %d", rc);
    T_CHECK(named, "message should name the op and the expected shape");
    return T_PASS;
}

/* ---- norms and softmax ---------------------------------------------------- */

static int tk_group_norm_case(int fuse_silu, int alias) {
    int rc = T_PASS;
    const int groups = 32;
    const float eps = 1e-5f;
    for (int wi = 0; wi < 3 && rc == T_PASS; wi++)
        for (int ai = 0; ai < 3 && rc == T_PASS; ai++) {
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            int64_t xs[4] = { 2, 64, 5, 7 }, c = 64, hw = 35, cpg = 2, n = 2 * 64 * 35;
            float *xv, *gv, *bv, *yv;
            sdx_tensor *x, *g, *b, *y;
            double *ref;
            tk_err err;
            T_CHECK(e.ctx, "context");
            x = tk_rand(&e, tk_types[ai], 4, xs, 3.0, &xv);
            g = tk_rand(&e, tk_types[wi], 1, &c, 1.0, &gv);
            b = tk_rand(&e, tk_types[wi], 1, &c, 1.0, &bv);
            y = alias ? x : tk_tensor(&e, tk_types[ai], 4, xs);
            ref = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
            if (!x || !g || !b || !y || !ref) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            for (int64_t i = 0; i < n; i++) xv[i] += 5.0f;   /* an offset the statistics must remove */
            for (int64_t i = 0; i < n; i++) tk_set(x, i, xv[i]);
            xv = tk_values(&e, x);
            for (int64_t bg = 0; bg < 2 * groups; bg++) {
                const float *p = xv + bg * cpg * hw;
                double mean = 0, var = 0;
                for (int64_t i = 0; i < cpg * hw; i++) mean += p[i];
                mean /= (double)(cpg * hw);
                for (int64_t i = 0; i < cpg * hw; i++) var += (p[i] - mean) * (p[i] - mean);
                var /= (double)(cpg * hw);
                for (int64_t i = 0; i < cpg * hw; i++) {
                    int64_t ch = (bg % groups) * cpg + i / hw;
                    double v = (p[i] - mean) / sqrt(var + (double)eps) * gv[ch] + bv[ch];
                    if (fuse_silu) v = v / (1.0 + exp(-v));
                    ref[bg * cpg * hw + i] = v;
                }
            }
            rc = sdx__group_norm(e.ctx, y, x, groups, eps, g, b, fuse_silu, SDX_F32);
            if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "group_norm: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
            yv = tk_values(&e, y);
            /* pointwise f32 math on O(1) normalised values: a few ulps of
             * the terms (|x - mean| * rstd * gamma + beta), ~2e-6 absolute */
            {
                double *mag = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
                if (!mag) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
                for (int64_t i = 0; i < n; i++) mag[i] = fabs(ref[i]) + 4.0;
                err = tk_compare(yv, ref, mag, n, y->dtype, 1e-6);
            }
            tk_done(&e);
            sdx_destroy(e.ctx);
            TK_EXPECT(err, tk_name(fuse_silu ? "group_norm+silu" : "group_norm", tk_types[wi], tk_types[ai]),
                      "%s: ratio %.3f (max abs %g)", tk_label, err.ratio, err.max_abs);
        }
    return rc;
}

static int group_norm_32_groups(void) { t_seed(20); return tk_group_norm_case(0, 0); }
static int group_norm_fused_silu_in_place(void) { t_seed(21); return tk_group_norm_case(1, 1); }

static int layer_norm_last_dim_in_place(void) {
    int rc = T_PASS;
    for (int wi = 0; wi < 3 && rc == T_PASS; wi++)
        for (int ai = 0; ai < 3 && rc == T_PASS; ai++) {
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            int64_t xs[3] = { 3, 7, 77 }, d = 77, rows = 21, n = 21 * 77;
            float *xv, *gv, *bv, *yv;
            sdx_tensor *x, *g, *b;
            double *ref, *mag;
            tk_err err;
            T_CHECK(e.ctx, "context");
            t_seed(30 + (uint64_t)(wi * 3 + ai));
            x = tk_rand(&e, tk_types[ai], 3, xs, 2.0, &xv);
            g = tk_rand(&e, tk_types[wi], 1, &d, 1.0, &gv);
            b = tk_rand(&e, tk_types[wi], 1, &d, 1.0, &bv);
            ref = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
            mag = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
            if (!x || !g || !b || !ref || !mag) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            for (int64_t r = 0; r < rows; r++) {
                double mean = 0, var = 0;
                for (int64_t i = 0; i < d; i++) mean += xv[r * d + i];
                mean /= (double)d;
                for (int64_t i = 0; i < d; i++) var += (xv[r * d + i] - mean) * (xv[r * d + i] - mean);
                var /= (double)d;
                for (int64_t i = 0; i < d; i++) {
                    ref[r * d + i] = (xv[r * d + i] - mean) / sqrt(var + 1e-5) * gv[i] + bv[i];
                    mag[r * d + i] = fabs(ref[r * d + i]) + 4.0 * fabs(gv[i]) + fabs(bv[i]);
                }
            }
            rc = sdx__layer_norm(e.ctx, x, x, 1e-5f, g, b);
            if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "layer_norm: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
            yv = tk_values(&e, x);
            err = tk_compare(yv, ref, mag, n, x->dtype, 1e-6);
            tk_done(&e);
            sdx_destroy(e.ctx);
            TK_EXPECT(err, tk_name("layer_norm", tk_types[wi], tk_types[ai]), "%s: ratio %.3f", tk_label, err.ratio);
        }
    return rc;
}

/* The softmax exp: relative error under 3e-7 against libm's double exp
 * over what softmax feeds it, x <= 0 (0 at and below -87.3, -inf included;
 * NaN stays NaN), and every vector form the CPU has gives the portable
 * code's algorithm with the same bits as the AVX2 form, tails included, so
 * attention's bits do not depend on which one runs. */
static int exp_paths_agree_and_stay_within_3e7(void) {
    enum { N = 301 };
    float x[N], ref[N];
    double worst = 0;
    t_seed(41);
    for (int i = 0; i < N; i++) x[i] = (float)(-fabs(t_normal()) * 30.0);   /* logits minus their max */
    x[0] = -INFINITY; x[1] = NAN; x[2] = -87.3f; x[3] = -1e-30f; x[4] = 0.0f; x[5] = -100.0f;
    memcpy(ref, x, sizeof x);
    sdx__exp_n(ref, N);
    for (int i = 0; i < N; i++) {
        double e = exp((double)x[i]);
        if (x[i] != x[i]) { T_CHECK(ref[i] != ref[i], "exp(NaN) must stay NaN"); continue; }
        if (x[i] <= -87.3f) { T_CHECK(ref[i] == 0.0f, "exp(%g) = %g, want 0", x[i], ref[i]); continue; }
        if (fabs(ref[i] - e) / e > worst) worst = fabs(ref[i] - e) / e;
    }
    T_NOTE("worst relative error %.3g", worst);
    T_CHECK(worst < 3e-7, "relative error %.3g", worst);
#if defined(SDX__X86)
    float got[N];
    for (int n = 1; n <= N; n += (n < 40 ? 1 : 37)) {   /* every tail length */
        if (sdx__have_avx2()) {
            memcpy(got, x, sizeof x);
            sdx__exp_n_avx2(got, n);
            memcpy(ref, x, sizeof x);
            sdx__exp_n_c(ref, n);
            /* the portable form rounds differently (no FMA): only close */
            for (int i = 0; i < n; i++)
                T_CHECK(got[i] == ref[i] || fabs(got[i] - ref[i]) <= 1e-6 * fabs(ref[i]) || (got[i] != got[i] && ref[i] != ref[i]),
                        "n %d: AVX2 %g, portable %g at %d", n, got[i], ref[i], i);
        }
        if (sdx__have_avx512f() && sdx__have_avx2()) {
            memcpy(got, x, sizeof x);
            sdx__exp_n_avx512(got, n);
            memcpy(ref, x, sizeof x);
            sdx__exp_n_avx2(ref, n);
            T_CHECK(memcmp(got, ref, sizeof got) == 0, "n %d: AVX-512 and AVX2 exps differ", n);
        }
    }
#endif
    return T_PASS;
}

/* |got - want| in units of the last place of the float nearest want */
static double tk_ulps(float got, double want) {
    double ulp = fabs(want) < 1.1754943508222875e-38 ? ldexp(1.0, -149) : ldexp(1.0, ilogb((float)fabs(want)) - 23);
    return fabs((double)got - want) / ulp;
}

/* SiLU's exp and GELU's erf: within one ulp of exp and erf in double over
 * floats of every binade (a stride through all 2^32 bit patterns, the
 * interval edges and their neighbours, subnormals, zeros, infinities;
 * exp where the result is a normal float, and 0 or inf beyond), NaN stays
 * NaN, and SiLU, GELU and quick GELU give the portable code's bits on
 * every vector path the CPU has, tails included: activations do not
 * depend on the CPU. */
static int silu_gelu_exp_erf_within_an_ulp_and_the_same_on_every_path(void) {
    enum { N = 65536 + 64 };
    static const float edges[] = { SDX__ERF_SPLIT1, SDX__ERF_SPLIT2, SDX__ERF_ONE, 0.0f, 1e-45f, 1.1754944e-38f, 1e-20f,
                                   88.7228394f, -87.3365479f, -103.972076f, SDX__EXPF_LO, SDX__EXPF_HI };
    static float x[N];
    double worst_erf = 0, worst_exp = 0;
    float erf_at = 0, exp_at = 0;
    int n = 0;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 65537) {   /* both signs, every exponent */
        uint32_t b = (uint32_t)u;
        memcpy(&x[n++], &b, 4);
    }
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        x[n++] = edges[i]; x[n++] = -edges[i];
        x[n++] = nextafterf(edges[i], 0.0f); x[n++] = nextafterf(edges[i], INFINITY);
    }
    x[n++] = INFINITY; x[n++] = -INFINITY; x[n++] = NAN; x[n++] = 1.0f; x[n++] = -3.0f;
    T_CHECK(n <= N, "too many cases");
    for (int i = 0; i < n; i++) {
        const float e = sdx__erf1(x[i]), p = sdx__expf1(x[i]);
        const double want = exp((double)x[i]);
        double erf_off;
        if (x[i] != x[i]) { T_CHECK(e != e && p != p, "erf and exp of NaN must stay NaN"); continue; }
        if ((erf_off = tk_ulps(e, erf((double)x[i]))) > worst_erf) { worst_erf = erf_off; erf_at = x[i]; }
        T_CHECK(signbit(e) == signbit(x[i]), "erf(%a) = %a has the wrong sign", x[i], e);
        if (want > 3.4028234663852886e38) T_CHECK(p == INFINITY, "exp(%a) = %a, want inf", x[i], p);
        else if (want < 1.1754943508222875e-38) T_CHECK(p >= 0.0f && p < 1.2e-38f, "exp(%a) = %a, want 0 or subnormal", x[i], p);
        else if (tk_ulps(p, want) > worst_exp) { worst_exp = tk_ulps(p, want); exp_at = x[i]; }
    }
    T_NOTE("worst errors over %d floats: erf %.3f ulp (at %a), exp %.3f ulp (at %a)", n, worst_erf, erf_at, worst_exp, exp_at);
    T_CHECK(worst_erf <= 1.0, "erf off by %.3f ulp at %a", worst_erf, erf_at);
    T_CHECK(worst_exp <= 1.0, "exp off by %.3f ulp at %a", worst_exp, exp_at);
    static const char *acts[3] = { "SiLU", "GELU", "quick GELU" };
    struct { const char *name; void (*fn)(float *, int64_t, sdx__act); int have; } paths[] = {
        { "the op's choice", sdx__act_n, 1 },
#if defined(SDX__X86)
        { "AVX2", sdx__act_n_avx2, sdx__have_avx2() },
        { "AVX-512", sdx__act_n_avx512, sdx__have_avx512f() },
#endif
    };
    static float got[N], ref[N];
    for (float v = -6.0f; v <= 6.0f; v += 0.75f) {   /* x sigmoid(s x), s = 1 and 1.702 */
        const double silu = v / (1.0 + exp(-(double)v)), quick = v / (1.0 + exp(-1.702 * v));
        const float got_silu = sdx__swish1(v, sdx__act_scale(SDX__ACT_SILU));
        const float got_quick = sdx__swish1(v, sdx__act_scale(SDX__ACT_QUICK_GELU));
        T_CHECK(fabs(got_silu - silu) <= 1e-6 * fabs(silu) && fabs(got_quick - quick) <= 1e-6 * fabs(quick),
                "at %g: SiLU %.9g (want %.9g), quick GELU %.9g (want %.9g)", v, got_silu, silu, got_quick, quick);
    }
    for (int act = SDX__ACT_SILU; act <= SDX__ACT_QUICK_GELU; act++)
        for (int len = 1; len <= n; len += (len < 40 ? 1 : 397)) {   /* every tail length */
            memcpy(ref, x, (size_t)len * sizeof(float));
            sdx__act_n_c(ref, len, (sdx__act)act);
            for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
                if (!paths[p].have) continue;
                memcpy(got, x, (size_t)len * sizeof(float));
                paths[p].fn(got, len, (sdx__act)act);
                for (int i = 0; i < len; i++)
                    T_CHECK(t_f32_bits(got[i]) == t_f32_bits(ref[i]) || (got[i] != got[i] && ref[i] != ref[i]),
                            "%s(%a): %s %a, portable %a", acts[act], x[i], paths[p].name, got[i], ref[i]);
            }
        }
    return T_PASS;
}

/* Logits of several hundred: exp would overflow without the max shift. */
static int softmax_large_logits(void) {
    int rc = T_PASS;
    for (int ai = 0; ai < 3 && rc == T_PASS; ai++) {
        tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
        int64_t xs[2] = { 9, 333 }, d = 333, n = 9 * 333;
        float *xv, *yv;
        sdx_tensor *x, *y;
        double *ref;
        tk_err err;
        T_CHECK(e.ctx, "context");
        t_seed(40 + (uint64_t)ai);
        x = tk_rand(&e, tk_types[ai], 2, xs, 4.0, &xv);
        y = tk_tensor(&e, tk_types[ai], 2, xs);
        ref = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
        if (!x || !y || !ref) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
        for (int64_t i = 0; i < n; i++) tk_set(x, i, xv[i] + (float)(100 * (i / d)));  /* row r offset by 100 r */
        xv = tk_values(&e, x);
        for (int64_t r = 0; r < 9; r++) {
            double mx = -INFINITY, s = 0;
            for (int64_t i = 0; i < d; i++) mx = fmax(mx, xv[r * d + i]);
            for (int64_t i = 0; i < d; i++) s += exp(xv[r * d + i] - mx);
            for (int64_t i = 0; i < d; i++) ref[r * d + i] = exp(xv[r * d + i] - mx) / s;
        }
        rc = sdx__softmax(e.ctx, y, x);
        if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "softmax: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
        yv = tk_values(&e, y);
        /* exp in f32 of arguments up to ~20 in size: relative error of the
         * argument rounding (|x - max| * 2^-24) plus the exp polynomial */
        err = tk_compare(yv, ref, NULL, n, y->dtype, 4e-6);
        tk_done(&e);
        sdx_destroy(e.ctx);
        TK_EXPECT(err, tk_name("softmax", tk_types[ai], tk_types[ai]), "%s: ratio %.3f", tk_label, err.ratio);
    }
    return rc;
}

/* ---- attention ------------------------------------------------------------ */

/* Double reference for one (batch, head, query): softmax(q k^T/sqrt(D)) v. */
static void tk_attn_ref(const float *q, const float *k, const float *v, int64_t nq, int64_t nk, int64_t heads,
                        int64_t d, int causal, int64_t b, int64_t h, int64_t i, double *out, double *mag, double *logit) {
    int64_t hd = heads * d, nvalid = causal ? (i + 1 < nk ? i + 1 : nk) : nk;
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < nvalid; j++) {
        double dot = 0;
        for (int64_t c = 0; c < d; c++) dot += (double)q[(b * nq + i) * hd + h * d + c] * k[(b * nk + j) * hd + h * d + c];
        logit[j] = dot / sqrt((double)d);
        mx = fmax(mx, logit[j]);
    }
    for (int64_t j = 0; j < nvalid; j++) { logit[j] = exp(logit[j] - mx); s += logit[j]; }
    for (int64_t c = 0; c < d; c++) { out[c] = 0; mag[c] = 0; }
    for (int64_t j = 0; j < nvalid; j++)
        for (int64_t c = 0; c < d; c++) {
            double p = logit[j] / s * v[(b * nk + j) * hd + h * d + c];
            out[c] += p;
            mag[c] += fabs(p);
        }
}

/* Checks rows `step` apart (every row when step is 1). */
static int tk_attention_case(int64_t batch, int64_t nq, int64_t nk, int64_t heads, int64_t d, int causal,
                             double scale, int64_t step, int all_types) {
    int rc = T_PASS;
    for (int ai = 0; ai < 3 && rc == T_PASS; ai++)
        for (int ki = 0; ki < 3 && rc == T_PASS; ki++) {
            tk_env e;
            int64_t qs[3] = { batch, nq, heads * d }, ks[3] = { batch, nk, heads * d };
            float *qv, *kv, *vv, *yv;
            sdx_tensor *q, *k, *v, *y;
            double *ref, *mag, *logit;
            int64_t nref = 0;
            tk_err err;
            if (!all_types && (ai != ki || ai == 2)) continue;
            memset(&e, 0, sizeof e);
            e.ctx = t_ctx();
            T_CHECK(e.ctx, "context");
            q = tk_rand(&e, tk_types[ai], 3, qs, scale, &qv);
            k = tk_rand(&e, tk_types[ki], 3, ks, scale, &kv);
            v = tk_rand(&e, tk_types[ki], 3, ks, 1.0, &vv);
            y = tk_tensor(&e, tk_types[ai], 3, qs);
            ref = (double *)tk_alloc(&e, (size_t)(batch * nq * heads * d) * sizeof(double));
            mag = (double *)tk_alloc(&e, (size_t)(batch * nq * heads * d) * sizeof(double));
            logit = (double *)tk_alloc(&e, (size_t)nk * sizeof(double));
            if (!q || !k || !v || !y || !ref || !mag || !logit) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            rc = sdx__attention(e.ctx, y, q, k, v, (int)heads, causal, SDX_F32);
            if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "attention: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
            yv = tk_values(&e, y);
            /* gather the checked rows into a compact array */
            {
                float *ysel = (float *)tk_alloc(&e, (size_t)(batch * nq * heads * d) * sizeof(float));
                if (!ysel) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
                for (int64_t b = 0; b < batch; b++)
                    for (int64_t i = 0; i < nq; i++) {
                        if (i % step && i != nq - 1) continue;
                        for (int64_t h = 0; h < heads; h++) {
                            tk_attn_ref(qv, kv, vv, nq, nk, heads, d, causal, b, h, i, ref + nref, mag + nref, logit);
                            memcpy(ysel + nref, yv + (b * nq + i) * heads * d + h * d, (size_t)d * sizeof(float));
                            nref += d;
                        }
                    }
                /* f32 logits: |error| ~ D * 2^-24 * |q||k| / sqrt(D), turned
                 * into a relative error of the weights; 2e-5 of the
                 * weighted sum of |v| covers it with margin at these scales */
                err = tk_compare(ysel, ref, mag, nref, y->dtype, 2e-5);
            }
            tk_done(&e);
            sdx_destroy(e.ctx);
            TK_EXPECT(err, tk_name("attention", tk_types[ki], tk_types[ai]), "%s: ratio %.3f (max abs %g)",
                      tk_label, err.ratio, err.max_abs);
        }
    return rc;
}

static int attention_self_several_heads(void) { t_seed(50); return tk_attention_case(2, 70, 70, 3, 24, 0, 1.0, 1, 1); }
static int attention_cross_77_keys(void) { t_seed(51); return tk_attention_case(1, 50, 77, 8, 40, 0, 1.0, 1, 1); }
static int attention_causal_mask(void) { t_seed(52); return tk_attention_case(2, 77, 77, 2, 64, 1, 1.5, 1, 1); }
/* 4096 x 4096 would be 64 MiB of logits per head; the blocked kernel
 * never forms them. Checked on every 97th query row (and the last). */
static int attention_4096_blocked_is_exact(void) { t_seed(53); return tk_attention_case(1, 4096, 4096, 1, 16, 0, 1.0, 97, 0); }

/* Causal over several key blocks: later query blocks of a job reuse the
 * keys the earlier ones packed and pack the rest. */
static int attention_causal_over_several_blocks(void) { t_seed(54); return tk_attention_case(2, 300, 300, 2, 24, 1, 1.0, 1, 0); }

/* A job packs a head's K and V once for its query blocks, or (a head over
 * the budget) per key block for each: the same bits either way, and with
 * any number of threads (8 threads split each head into jobs of two query
 * blocks, 2 threads do not split it), and with Q's and K's rows packed by
 * the portable loop or the AVX2 packers instead of the SIMD packers the
 * CPU runs (head dim 24 in strips of 32: zeros past it; f16 rows
 * widened). */
static int attention_packing_and_threads_change_no_bit(void) {
    static const struct { int64_t nq, nk; int causal; sdx_dtype type; } cs[3] = { { 500, 400, 0, SDX_F32 },
                                                                                  { 300, 300, 1, SDX_F32 },
                                                                                  { 200, 77, 0, SDX_F16 } };
    for (int c = 0; c < 3; c++) {
        int64_t qs[3] = { 2, cs[c].nq, 3 * 24 }, ks[3] = { 2, cs[c].nk, 3 * 24 };
        sdx_tensor *q, *k, *v, *y[5];
        sdx_desc many;
        sdx_ctx *other;
        float *vals;
        tk_env e;
        int rc = SDX_ERR_NOMEM, same_blockwise = 0, same_threads = 0, same_packers = 0, same_avx2 = 0;
        t_seed(60 + (uint64_t)c);
        memset(&e, 0, sizeof e);
        e.ctx = t_ctx();
        T_CHECK(e.ctx, "context");
        memset(&many, 0, sizeof many);
        many.n_threads = 8;
        other = sdx_create(&many);
        q = tk_rand(&e, cs[c].type, 3, qs, 1.0, &vals);
        k = tk_rand(&e, cs[c].type, 3, ks, 1.0, &vals);
        v = tk_rand(&e, cs[c].type, 3, ks, 1.0, &vals);
        for (int i = 0; i < 5; i++) y[i] = tk_tensor(&e, SDX_F32, 3, qs);
        if (other && q && k && v && y[0] && y[1] && y[2] && y[3] && y[4]) {
            rc = sdx__attention(e.ctx, y[0], q, k, v, 3, cs[c].causal, SDX_F32);
            if (rc == SDX_OK) rc = sdx__attention(other, y[2], q, k, v, 3, cs[c].causal, SDX_F32);
            if (rc == SDX_OK) { sdx__cpu(e.ctx)->pack_scalar = 1; rc = sdx__attention(e.ctx, y[3], q, k, v, 3, cs[c].causal, SDX_F32); }
            sdx__cpu(e.ctx)->pack_scalar = 0;
            if (rc == SDX_OK) { sdx__cpu(e.ctx)->pack_avx2 = 1; rc = sdx__attention(e.ctx, y[4], q, k, v, 3, cs[c].causal, SDX_F32); }
            sdx__cpu(e.ctx)->pack_avx2 = 0;
            if (rc == SDX_OK) { sdx__cpu(e.ctx)->attn_blockwise = 1; rc = sdx__attention(e.ctx, y[1], q, k, v, 3, cs[c].causal, SDX_F32); }
        }
        if (rc == SDX_OK) {
            same_blockwise = memcmp(y[0]->data, y[1]->data, sdx_tensor_nbytes(y[0])) == 0;
            same_threads = memcmp(y[0]->data, y[2]->data, sdx_tensor_nbytes(y[0])) == 0;
            same_packers = memcmp(y[0]->data, y[3]->data, sdx_tensor_nbytes(y[0])) == 0;
            same_avx2 = memcmp(y[0]->data, y[4]->data, sdx_tensor_nbytes(y[0])) == 0;
        }
        tk_done(&e);
        sdx_destroy(e.ctx);
        sdx_destroy(other);
        T_CHECK(rc == SDX_OK, "case %d: attention failed (%d)", c, rc);
        T_CHECK(same_blockwise, "case %d: packing per key block changed the result", c);
        T_CHECK(same_threads, "case %d: 8 threads changed the result", c);
        T_CHECK(same_packers, "case %d: the portable packing loop changed the result", c);
        T_CHECK(same_avx2, "case %d: the AVX2 packers changed the result", c);
    }
    return T_PASS;
}

/* ---- elementwise ------------------------------------------------------------ */

typedef enum { TK_SILU, TK_GELU, TK_QUICK_GELU } tk_act;

static double tk_act_ref(tk_act a, double x) {
    switch (a) {
    case TK_SILU: return x / (1.0 + exp(-x));
    case TK_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    default: return x / (1.0 + exp(-1.702 * x));
    }
}

static int tk_activation_case(tk_act act, const char *name) {
    int rc = T_PASS;
    for (int ai = 0; ai < 3 && rc == T_PASS; ai++)
        for (int yi = 0; yi < 3 && rc == T_PASS; yi++) {
            tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
            int64_t xs[2] = { 7, 3001 }, n = 7 * 3001;
            float *xv, *yv;
            sdx_tensor *x, *y;
            double *ref, *mag;
            tk_err err;
            T_CHECK(e.ctx, "context");
            x = tk_rand(&e, tk_types[ai], 2, xs, 3.0, &xv);
            y = ai == yi ? x : tk_tensor(&e, tk_types[yi], 2, xs);     /* same dtype: in place */
            ref = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
            mag = (double *)tk_alloc(&e, (size_t)n * sizeof(double));
            if (!x || !y || !ref || !mag) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
            for (int64_t i = 0; i < n; i++) { ref[i] = tk_act_ref(act, xv[i]); mag[i] = fabs(xv[i]); }
            rc = act == TK_SILU ? sdx__silu(e.ctx, y, x, SDX_F32) : act == TK_GELU ? sdx__gelu(e.ctx, y, x, SDX_F32) : sdx__quick_gelu(e.ctx, y, x);
            if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "%s: %s", name, sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
            yv = tk_values(&e, y);
            /* sdx's exp and erf are within an ulp: 1e-6 of |x| */
            err = tk_compare(yv, ref, mag, n, y->dtype, 1e-6);
            tk_done(&e);
            sdx_destroy(e.ctx);
            TK_EXPECT(err, tk_name(name, tk_types[ai], tk_types[yi]), "%s: ratio %.3f", tk_label, err.ratio);
        }
    return rc;
}

static int silu_matches_reference(void) { t_seed(60); return tk_activation_case(TK_SILU, "silu"); }
static int gelu_uses_exact_erf(void) { t_seed(61); return tk_activation_case(TK_GELU, "gelu"); }
static int quick_gelu_matches_reference(void) { t_seed(62); return tk_activation_case(TK_QUICK_GELU, "quick_gelu"); }

static int geglu_first_half_times_gelu_of_second(void) {
    int rc = T_PASS;
    for (int ai = 0; ai < 3 && rc == T_PASS; ai++) {
        tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
        int64_t xs[3] = { 2, 5, 2 * 1300 }, ys[3] = { 2, 5, 1300 }, d = 1300, rows = 10;
        float *xv, *yv;
        sdx_tensor *x, *y;
        double *ref, *mag;
        tk_err err;
        T_CHECK(e.ctx, "context");
        t_seed(63 + (uint64_t)ai);
        x = tk_rand(&e, tk_types[ai], 3, xs, 2.0, &xv);
        y = tk_tensor(&e, tk_types[ai], 3, ys);
        ref = (double *)tk_alloc(&e, (size_t)(rows * d) * sizeof(double));
        mag = (double *)tk_alloc(&e, (size_t)(rows * d) * sizeof(double));
        if (!x || !y || !ref || !mag) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
        for (int64_t r = 0; r < rows; r++)
            for (int64_t i = 0; i < d; i++) {
                double a = xv[r * 2 * d + i], g = xv[r * 2 * d + d + i];
                ref[r * d + i] = a * tk_act_ref(TK_GELU, g);
                mag[r * d + i] = fabs(a) * (fabs(g) + 1.0);
            }
        rc = sdx__geglu(e.ctx, y, x, SDX_F32);
        if (rc != SDX_OK) { snprintf(t_msg, sizeof t_msg, "geglu: %s", sdx_last_error(e.ctx)); tk_done(&e); sdx_destroy(e.ctx); return T_FAIL; }
        yv = tk_values(&e, y);
        err = tk_compare(yv, ref, mag, rows * d, y->dtype, 1e-6);
        tk_done(&e);
        sdx_destroy(e.ctx);
        TK_EXPECT(err, tk_name("geglu", tk_types[ai], tk_types[ai]), "%s: ratio %.3f", tk_label, err.ratio);
    }
    return rc;
}

/* add/mul/scale/add_channel_bias/copy over all dtype triples: one rounding
 * of an exact-in-double f32 op, so 2^-24 relative before the store. */
static int binary_ops_mixed_dtypes(void) {
    for (int ai = 0; ai < 3; ai++)
        for (int bi = 0; bi < 3; bi++)
            for (int yi = 0; yi < 3; yi++) {
                tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
                int64_t xs[4] = { 2, 3, 5, 7 }, vs[2] = { 2, 3 }, n = 210;
                float *av, *bv, *vv, *yv;
                sdx_tensor *a, *b, *v, *y;
                double ref[210];
                tk_err err[5];
                int rcs[5];
                T_CHECK(e.ctx, "context");
                a = tk_rand(&e, tk_types[ai], 4, xs, 1.0, &av);
                b = tk_rand(&e, tk_types[bi], 4, xs, 1.0, &bv);
                v = tk_rand(&e, tk_types[bi], 2, vs, 1.0, &vv);
                y = tk_tensor(&e, tk_types[yi], 4, xs);
                if (!a || !b || !v || !y) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
                rcs[0] = sdx__add(e.ctx, y, a, b);
                for (int i = 0; i < n; i++) ref[i] = (double)av[i] + bv[i];
                yv = tk_values(&e, y); err[0] = tk_compare(yv, ref, NULL, n, y->dtype, 0x1p-24);
                rcs[1] = sdx__mul(e.ctx, y, a, b);
                for (int i = 0; i < n; i++) ref[i] = (double)av[i] * bv[i];
                yv = tk_values(&e, y); err[1] = tk_compare(yv, ref, NULL, n, y->dtype, 0x1p-24);
                rcs[2] = sdx__scale(e.ctx, y, a, 0.18215f);
                for (int i = 0; i < n; i++) ref[i] = (double)av[i] * (double)0.18215f;
                yv = tk_values(&e, y); err[2] = tk_compare(yv, ref, NULL, n, y->dtype, 0x1p-24);
                rcs[3] = sdx__add_channel_bias(e.ctx, y, a, v);
                for (int i = 0; i < n; i++) ref[i] = (double)av[i] + vv[i / 35];
                yv = tk_values(&e, y); err[3] = tk_compare(yv, ref, NULL, n, y->dtype, 0x1p-24);
                rcs[4] = sdx__copy(e.ctx, y, a);
                for (int i = 0; i < n; i++) ref[i] = av[i];
                yv = tk_values(&e, y); err[4] = tk_compare(yv, ref, NULL, n, y->dtype, 0.0);
                tk_done(&e);
                sdx_destroy(e.ctx);
                for (int k = 0; k < 5; k++) {
                    static const char *const names[5] = { "add", "mul", "scale", "add_channel_bias", "copy" };
                    T_CHECK(rcs[k] == SDX_OK, "%s failed", names[k]);
                    T_CHECK(err[k].ratio <= 1.0, "%s a=%s b=%s y=%s: ratio %.3f", names[k], sdx_dtype_name(tk_types[ai]),
                            sdx_dtype_name(tk_types[bi]), sdx_dtype_name(tk_types[yi]), err[k].ratio);
                }
            }
    T_NOTE("add/mul/scale/add_channel_bias/copy: all 27 dtype triples within one output rounding");
    return T_PASS;
}

/* Exact data movement: every output element must equal its source. */
static int upsample_concat_and_layouts_move_exactly(void) {
    for (int ai = 0; ai < 3; ai++) {
        tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
        int64_t xs[4] = { 2, 3, 5, 6 }, us[4] = { 2, 3, 10, 12 }, bs[4] = { 2, 4, 5, 6 }, cs[4] = { 2, 7, 5, 6 };
        int64_t ls[3] = { 2, 30, 3 };
        float *xv, *bv, *uv, *cv, *lv, *rv;
        sdx_tensor *x, *b, *u, *c, *l, *r;
        int bad = 0;
        T_CHECK(e.ctx, "context");
        t_seed(70 + (uint64_t)ai);
        x = tk_rand(&e, tk_types[ai], 4, xs, 1.0, &xv);
        b = tk_rand(&e, SDX_F32, 4, bs, 1.0, &bv);
        u = tk_tensor(&e, tk_types[ai], 4, us);
        c = tk_tensor(&e, tk_types[ai], 4, cs);
        l = tk_tensor(&e, tk_types[ai], 3, ls);
        r = tk_tensor(&e, tk_types[ai], 4, xs);
        if (!x || !b || !u || !c || !l || !r) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
        T_CHECK(sdx__upsample2x(e.ctx, u, x) == SDX_OK, "upsample2x: %s", sdx_last_error(e.ctx));
        T_CHECK(sdx__concat_channels(e.ctx, c, x, b) == SDX_OK, "concat: %s", sdx_last_error(e.ctx));
        T_CHECK(sdx__nchw_to_nlc(e.ctx, l, x) == SDX_OK, "nchw_to_nlc: %s", sdx_last_error(e.ctx));
        T_CHECK(sdx__nlc_to_nchw(e.ctx, r, l) == SDX_OK, "nlc_to_nchw: %s", sdx_last_error(e.ctx));
        uv = tk_values(&e, u); cv = tk_values(&e, c); lv = tk_values(&e, l); rv = tk_values(&e, r);
        T_CHECK(uv && cv && lv && rv, "alloc");
        for (int64_t n = 0; n < 2; n++)
            for (int64_t ch = 0; ch < 3; ch++)
                for (int64_t y = 0; y < 10; y++)
                    for (int64_t xx = 0; xx < 12; xx++)
                        bad += uv[((n * 3 + ch) * 10 + y) * 12 + xx] != xv[((n * 3 + ch) * 5 + y / 2) * 6 + xx / 2];
        for (int64_t n = 0; n < 2; n++)
            for (int64_t ch = 0; ch < 7; ch++)
                for (int64_t p = 0; p < 30; p++) {
                    float want = ch < 3 ? xv[(n * 3 + ch) * 30 + p] : tk_types[ai] == SDX_F32 ? bv[(n * 4 + ch - 3) * 30 + p]
                               : tk_types[ai] == SDX_F16 ? sdx_f16_to_f32(sdx_f32_to_f16(bv[(n * 4 + ch - 3) * 30 + p]))
                               : sdx_bf16_to_f32(sdx_f32_to_bf16(bv[(n * 4 + ch - 3) * 30 + p]));
                    bad += cv[(n * 7 + ch) * 30 + p] != want;
                }
        for (int64_t n = 0; n < 2; n++)
            for (int64_t ch = 0; ch < 3; ch++)
                for (int64_t p = 0; p < 30; p++) bad += lv[(n * 30 + p) * 3 + ch] != xv[(n * 3 + ch) * 30 + p];
        for (int64_t i = 0; i < 180; i++) bad += rv[i] != xv[i];
        tk_done(&e);
        sdx_destroy(e.ctx);
        T_CHECK(bad == 0, "%d misplaced elements for %s", bad, sdx_dtype_name(tk_types[ai]));
    }
    return T_PASS;
}

/* Larger layouts cross the 32 x 32 transpose tiles. */
static int nchw_nlc_round_trip_across_tiles(void) {
    tk_env e = { t_ctx(), { { 0 } }, 0, { 0 }, 0 };
    int64_t xs[4] = { 2, 77, 9, 11 }, ls[3] = { 2, 99, 77 };
    float *xv, *lv, *rv;
    sdx_tensor *x, *l, *r;
    int bad = 0;
    T_CHECK(e.ctx, "context");
    t_seed(75);
    x = tk_rand(&e, SDX_F32, 4, xs, 1.0, &xv);
    l = tk_tensor(&e, SDX_F32, 3, ls);
    r = tk_tensor(&e, SDX_F32, 4, xs);
    if (!x || !l || !r) { tk_done(&e); sdx_destroy(e.ctx); T_CHECK(0, "alloc"); }
    T_CHECK(sdx__nchw_to_nlc(e.ctx, l, x) == SDX_OK && sdx__nlc_to_nchw(e.ctx, r, l) == SDX_OK, "%s", sdx_last_error(e.ctx));
    lv = tk_values(&e, l); rv = tk_values(&e, r);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t c = 0; c < 77; c++)
            for (int64_t p = 0; p < 99; p++) bad += lv[(n * 99 + p) * 77 + c] != xv[(n * 77 + c) * 99 + p];
    for (int64_t i = 0; i < 2 * 77 * 99; i++) bad += rv[i] != xv[i];
    tk_done(&e);
    sdx_destroy(e.ctx);
    T_CHECK(bad == 0, "%d misplaced elements", bad);
    return T_PASS;
}

/* ---- timestep embedding ------------------------------------------------------ */

static int timestep_embedding_cos_first(void) {
    static const float ts[3] = { 999.0f, 1.0f, 500.5f };
    float out[3 * 320];
    double worst = 0, worst_f32args = 0;
    sdx__timestep_embedding(out, ts, 3, 320, 10000.0f);
    for (int n = 0; n < 3; n++)
        for (int i = 0; i < 160; i++) {
            double f = exp(-log(10000.0) * i / 160.0), arg = ts[n] * f;
            /* the same formula with f32 frequencies and arguments, as the
             * reference implementations (torch float32) compute it */
            float ff = expf(-(float)log(10000.0) * (float)i / 160.0f), af = ts[n] * ff;
            worst = fmax(worst, fabs(out[n * 320 + i] - cos(arg)));
            worst = fmax(worst, fabs(out[n * 320 + 160 + i] - sin(arg)));
            worst_f32args = fmax(worst_f32args, fabs(out[n * 320 + i] - cos((double)af)));
            worst_f32args = fmax(worst_f32args, fabs(out[n * 320 + 160 + i] - sin((double)af)));
        }
    T_NOTE("t=999,1,500.5 dim 320: max |err| vs double %.3g, vs f32-argument formula %.3g", worst, worst_f32args);
    /* f32 frequencies carry ~2^-24 relative error, times t = 999 that
     * moves the argument by up to ~1e-4 radians */
    T_CHECK(worst < 2e-4, "max error %g vs double", worst);
    T_CHECK(worst_f32args < 1e-7, "max error %g vs f32-argument formula", worst_f32args);
    /* frequency 0 is exactly 1: element 0 is cos(t), element dim/2 sin(t) */
    T_CHECK(fabs(out[0] - cos(999.0)) < 1e-6 && fabs(out[160] - sin(999.0)) < 1e-6, "cos must come first");
    return T_PASS;
}

static int timestep_embedding_odd_dim_pads_zero(void) {
    float t = 3.0f, out[7];
    sdx__timestep_embedding(out, &t, 1, 7, 10000.0f);
    T_CHECK(out[6] == 0.0f, "last element %g", out[6]);
    T_CHECK(fabs(out[0] - cos(3.0)) < 1e-6 && fabs(out[3] - sin(3.0)) < 1e-6, "values");
    return T_PASS;
}

/* ---- scratch ------------------------------------------------------------------- */

static int scratch_is_reused_and_grows(void) {
    sdx_ctx *ctx = t_ctx();
    void *a, *b, *c;
    T_CHECK(ctx, "context");
    a = sdx__scratch(ctx, 0, 1000);
    b = sdx__scratch(ctx, 0, 500);
    c = sdx__scratch(ctx, 0, 1 << 20);
    T_CHECK(a && a == b, "a smaller request must reuse the buffer");
    T_CHECK(c && ((uintptr_t)c & 63) == 0, "grown buffer must be 64-byte aligned");
    memset(c, 1, 1 << 20);
    T_CHECK(sdx__scratch(ctx, sdx_threads(ctx), 16) == NULL, "thread index out of range must fail");
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case kernels_cases[] = {
    { "linear_odd_sizes_with_bias", linear_odd_sizes_with_bias },
    { "linear_single_row_without_bias", linear_single_row_without_bias },
    { "linear_many_rows_spans_tiles", linear_many_rows_spans_tiles },
    { "linear_same_bits_for_any_thread_count", linear_same_bits_for_any_thread_count },
    { "linear_quantized_weights_equal_dequantized_f32_bit_for_bit", linear_quantized_weights_equal_dequantized_f32_bit_for_bit },
    { "conv2d_quantized_filters_equal_dequantized_f32_bit_for_bit", conv2d_quantized_filters_equal_dequantized_f32_bit_for_bit },
    { "conv2d_refuses_quantized_filters_it_cannot_take", conv2d_refuses_quantized_filters_it_cannot_take },
    { "linear_rejects_mismatched_shapes", linear_rejects_mismatched_shapes },
    { "linear_rejects_negative_dims", linear_rejects_negative_dims },
    { "fused_residuals_equal_the_op_then_add", fused_residuals_equal_the_op_then_add },
    { "linear_geglu_is_the_linear_then_the_gate", linear_geglu_is_the_linear_then_the_gate },
    { "gemm_micro_kernels_agree_with_double", gemm_micro_kernels_agree_with_double },
    { "conv2d_1x1", conv2d_1x1 },
    { "conv2d_3x3_pad1", conv2d_3x3_pad1 },
    { "conv2d_3x3_stride2_pad1", conv2d_3x3_stride2_pad1 },
    { "conv2d_asymmetric_pad_0011_stride2", conv2d_asymmetric_pad_0011_stride2 },
    { "conv2d_3x3_spans_tiles_without_bias", conv2d_3x3_spans_tiles_without_bias },
    { "conv2d_3x3_wide_rows", conv2d_3x3_wide_rows },
    { "conv2d_rejects_wrong_output_shape", conv2d_rejects_wrong_output_shape },
    { "gemm_blocking_and_packing_change_no_bit", gemm_blocking_and_packing_change_no_bit },
    { "conv3x3_winograd_unet_layers_within_1e5_of_direct", conv3x3_winograd_unet_layers_within_1e5_of_direct },
    { "conv3x3_winograd_vae_layers_within_1e5_of_direct", conv3x3_winograd_vae_layers_within_1e5_of_direct },
    { "conv3x3_winograd_circular_matches_direct", conv3x3_winograd_circular_matches_direct },
    { "conv3x3_winograd_f16_stress_inputs_stay_finite", conv3x3_winograd_f16_stress_inputs_stay_finite },
    { "group_norm_32_groups", group_norm_32_groups },
    { "group_norm_fused_silu_in_place", group_norm_fused_silu_in_place },
    { "layer_norm_last_dim_in_place", layer_norm_last_dim_in_place },
    { "exp_paths_agree_and_stay_within_3e7", exp_paths_agree_and_stay_within_3e7 },
    { "silu_gelu_exp_erf_within_an_ulp_and_the_same_on_every_path", silu_gelu_exp_erf_within_an_ulp_and_the_same_on_every_path },
    { "softmax_large_logits", softmax_large_logits },
    { "attention_self_several_heads", attention_self_several_heads },
    { "attention_cross_77_keys", attention_cross_77_keys },
    { "attention_causal_mask", attention_causal_mask },
    { "attention_4096_blocked_is_exact", attention_4096_blocked_is_exact },
    { "attention_causal_over_several_blocks", attention_causal_over_several_blocks },
    { "attention_packing_and_threads_change_no_bit", attention_packing_and_threads_change_no_bit },
    { "silu_matches_reference", silu_matches_reference },
    { "gelu_uses_exact_erf", gelu_uses_exact_erf },
    { "quick_gelu_matches_reference", quick_gelu_matches_reference },
    { "geglu_first_half_times_gelu_of_second", geglu_first_half_times_gelu_of_second },
    { "binary_ops_mixed_dtypes", binary_ops_mixed_dtypes },
    { "upsample_concat_and_layouts_move_exactly", upsample_concat_and_layouts_move_exactly },
    { "nchw_nlc_round_trip_across_tiles", nchw_nlc_round_trip_across_tiles },
    { "timestep_embedding_cos_first", timestep_embedding_cos_first },
    { "timestep_embedding_odd_dim_pads_zero", timestep_embedding_odd_dim_pads_zero },
    { "scratch_is_reused_and_grows", scratch_is_reused_and_grows },
    { 0, 0 }
};
SDX_TEST_SUITE(kernels, kernels_cases)
