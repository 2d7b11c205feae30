/* Suite "bf16": the bf16 compute mode (sdx_model_desc.compute,
 * SDX_*_COMPUTE_TYPE). Linear and im2col convolution round the weight to
 * bf16, carry the activation as two bf16 values (hi + lo: 16 bits of its
 * significand) and accumulate in f32 with AVX512-BF16 or AMX; weights are
 * repacked once per weight slot. On a CPU without AVX512-BF16 the cases
 * that need it skip saying so, and the mode must equal f32 exactly. */
#include "test.h"
#if defined(__linux__)
#include <unistd.h>
#endif

static uint64_t tb_state = 1;
static double tb_uniform(void) {   /* xorshift64*: [-1, 1) */
    tb_state ^= tb_state >> 12; tb_state ^= tb_state << 25; tb_state ^= tb_state >> 27;
    return (double)((tb_state * 2685821657736338717ull) >> 11) * 0x1p-52 - 1.0;
}
static float tb_bf16(float v) { return sdx_bf16_to_f32(sdx_f32_to_bf16(v)); }
/* An activation as bf16 mode multiplies it: hi = bf16(v), lo = bf16(v - hi). */
static double tb_split(float v) { float hi = tb_bf16(v); return (double)hi + (double)tb_bf16(v - hi); }

/* Whether this machine can run the bf16 GEMM (asks the context once).
 * The AVX512-BF16 kernel is tested wherever the CPU has the instruction,
 * also where the mode would not use it because it is slower than f32. */
static int tb_has_bf16(sdx_ctx *ctx) {
    if (!sdx__bf16_usable(ctx) && !sdx__cpu(ctx)->bf16_dot) return 0;
    sdx__cpu(ctx)->bf16_dot_pays = 1;
    return sdx__bf16_usable(ctx);
}

/* Skips the case where this CPU cannot run it, giving back the context
 * the decision was asked of (LeakSanitizer would report it). */
#define TB_SKIP_IF(ctx, cond, ...) do { if (cond) { sdx_destroy(ctx); T_SKIP_IF(1, __VA_ARGS__); } } while (0)

/* The bf16 kernels this CPU runs, each case checks all: AMX tiles where
 * the CPU has them, and the AVX512-BF16 kernel (AMX cleared, as on a CPU
 * without it). tb_engines counts them on a context as probed; tb_engine
 * selects engine e (0: as probed, 1: AMX cleared) and names it. */
static int tb_engines(sdx_ctx *ctx) { return sdx__cpu(ctx)->bf16_amx ? 2 : 1; }
static const char *tb_engine(sdx_ctx *ctx, int e) {
    if (e) sdx__cpu(ctx)->bf16_amx = 0;
    return sdx__cpu(ctx)->bf16_amx ? "AMX" : "AVX512-BF16";
}

static int tb_alloc_random(sdx_ctx *ctx, sdx_tensor *t, sdx_dtype dt, int ndim, const int64_t *shape, double scale) {
    float buf[256];
    int64_t n;
    if (sdx_tensor_alloc(ctx, t, dt, ndim, shape) != SDX_OK) return 0;
    n = sdx_tensor_numel(t);
    for (int64_t i = 0; i < n; i += 256) {
        int64_t m = n - i < 256 ? n - i : 256;
        for (int64_t j = 0; j < m; j++) buf[j] = (float)(scale * tb_uniform());
        sdx__store_f32(t->data, dt, i, m, buf);
    }
    return 1;
}

/* |got - ref| <= f32 accumulation bound: (K + 2) * 2^-23 * sum |a||b|
 * (+ |bias|) over the K products summed, from bf16 mode's operands
 * computed in double. */
static int tb_check(const float *got, const double *ref, const double *mag, int64_t n, int64_t K, double *worst) {
    *worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double bound = (double)(K + 2) * 0x1p-23 * mag[i] + 1e-30, r = fabs(got[i] - ref[i]) / bound;
        if (!(r <= 1.0)) { *worst = r; return 0; }
        if (r > *worst) *worst = r;
    }
    return 1;
}

/* Linear [M, K] x [N, K]^T + b in bf16 mode against double on its
 * operands (bf16 weight, hi + lo activation: 2K products), for a weight of
 * each storage dtype, cached (a registered slot) and not: both within the
 * f32 accumulation bound, and the cached panel gives the same bits as
 * per-call packing (on AMX a cached panel's jobs are wider: 300 x 1100
 * runs as 4 jobs of 1120 columns, padded strips from one buffer, against
 * 9 of 384). */
static int linear_bf16_matches_its_operands_in_double(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    static const int64_t shapes[][3] = { { 154, 77, 320 }, { 300, 640, 100 }, { 7, 33, 45 }, { 1, 1280, 1280 },
                                         { 70, 600, 530 }, { 300, 100, 1100 } };
    static const sdx_dtype wtypes[3] = { SDX_F32, SDX_F16, SDX_BF16 };
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32, checked by fallback_equals_f32_exactly");
    for (int e = 0, engines = tb_engines(ctx); e < engines; e++)
    for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
        for (int wt = 0; wt < 3; wt++) {
            const char *engine = tb_engine(ctx, e);
            int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
            int64_t xs[2] = { M, K }, ws[2] = { N, K }, bs[1] = { N }, ys[2] = { M, N };
            sdx_tensor x, w, b, y, y2;
            double *ref = (double *)malloc((size_t)(M * N) * sizeof(double)), *mag = (double *)malloc((size_t)(M * N) * sizeof(double));
            float *xv = (float *)malloc((size_t)(M * K) * sizeof(float)), *wv = (float *)malloc((size_t)(N * K) * sizeof(float));
            double worst;
            int ok;
            tb_state = 1234 + (uint64_t)(s * 3 + wt);
            T_CHECK(ref && mag && xv && wv, "alloc");
            /* x of every dtype too: a bf16 x is multiplied unsplit */
            T_CHECK(tb_alloc_random(ctx, &x, wtypes[(wt + s) % 3], 2, xs, 3.0) && tb_alloc_random(ctx, &w, wtypes[wt], 2, ws, 0.5) &&
                    tb_alloc_random(ctx, &b, SDX_F32, 1, bs, 1.0) && sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) == SDX_OK &&
                    sdx_tensor_alloc(ctx, &y2, SDX_F32, 2, ys) == SDX_OK, "alloc");
            sdx__load_f32(x.data, x.dtype, 0, M * K, xv);
            sdx__load_f32(w.data, w.dtype, 0, N * K, wv);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double acc = ((float *)b.data)[j], m = fabs(acc);
                    for (int64_t k = 0; k < K; k++) {
                        double p = tb_split(xv[i * K + k]) * tb_bf16(wv[j * K + k]);
                        acc += p;
                        m += fabs(p);
                    }
                    ref[i * N + j] = acc;
                    mag[i * N + j] = m;
                }
            compute = SDX_BF16;
            T_CHECK(sdx__linear(ctx, &y, &x, &w, &b, compute) == SDX_OK, "%s", sdx_last_error(ctx));
            T_CHECK(sdx__wcache_add(ctx, &w, NULL) == SDX_OK, "register");
            T_CHECK(sdx__linear(ctx, &y2, &x, &w, &b, compute) == SDX_OK, "%s", sdx_last_error(ctx));
            T_CHECK(sdx__wcache_find(ctx, &w)->panel != NULL, "no panel cached for a registered weight");
            ok = tb_check((const float *)y.data, ref, mag, M * N, 2 * K, &worst);
            T_NOTE("%s linear %lldx%lldx%lld, %s weights, %s x: worst error / bound %.3f", engine, (long long)M, (long long)K,
                   (long long)N, sdx_dtype_name(wtypes[wt]), sdx_dtype_name(x.dtype), worst);
            T_CHECK(ok, "%s linear %lldx%lldx%lld %s: error %.3g x the f32 accumulation bound", engine, (long long)M,
                    (long long)K, (long long)N, sdx_dtype_name(wtypes[wt]), worst);
            T_CHECK(memcmp(y.data, y2.data, sdx_tensor_nbytes(&y)) == 0, "%s: cached panel differs from per-call packing", engine);
            sdx__wcache_drop(ctx, &w, 1);
            compute = SDX_F32;
            sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &b);
            sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &y2);
            free(ref); free(mag); free(xv); free(wv);
        }
    sdx_destroy(ctx);
    return T_PASS;
}

/* A convolution in double of x [N, C, H, W] by w [O, C, k, k] (+ b), pads
 * pt, pl on top/left, into ref [N, O, Ho, Wo], with sum |x||w| (+ |b|)
 * of each output in mag. x and w hold the operands as the engine
 * multiplies them. */
static void tb_conv_double(const float *x, const float *w, const float *b, const int64_t xs[4], int64_t O, int k, int st,
                           int pt, int pl, int64_t Ho, int64_t Wo, double *ref, double *mag) {
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oy = 0; oy < Ho; oy++)
                for (int64_t ox = 0; ox < Wo; ox++) {
                    double acc = b[o], m = fabs(acc);
                    for (int64_t ci = 0; ci < C; ci++)
                        for (int64_t ky = 0; ky < k; ky++)
                            for (int64_t kx = 0; kx < k; kx++) {
                                int64_t iy = oy * st - pt + ky, ix = ox * st - pl + kx;
                                double p;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                p = (double)x[((n * C + ci) * H + iy) * W + ix] * w[((o * C + ci) * k + ky) * k + kx];
                                acc += p;
                                m += fabs(p);
                            }
                    ref[((n * O + o) * Ho + oy) * Wo + ox] = acc;
                    mag[((n * O + o) * Ho + oy) * Wo + ox] = m;
                }
}

/* Convolutions (3x3 pad 1, 3x3 stride 2, 1x1, odd K = 27, K over one
 * block, outputs over one AMX job, bias per output channel, batch 2, x
 * of each storage dtype) in bf16 mode against double on its operands (as
 * for linear; a bf16 x is exact in hi alone); cached weight panel =
 * per-call packing, bit for bit (on AMX the panel's jobs are wider: 600
 * outputs at 400 pixels run as 4 jobs of 608 x 128 against 8 of 320). */
static int conv2d_bf16_matches_its_operands_in_double(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    /* N, C, H, W, O, k, stride, pad; x's dtype (the stride-1 im2col reads
     * each: whole output rows of 16 pixels, shorter runs, many runs) */
    static const int cs[][8] = { { 2, 16, 9, 40, 20, 3, 1, 1 }, { 1, 3, 17, 17, 13, 3, 2, 1 },
                                 { 1, 40, 6, 6, 36, 1, 1, 0 }, { 1, 70, 8, 8, 4, 3, 1, 1 },
                                 { 1, 72, 5, 7, 530, 3, 1, 1 }, { 1, 24, 16, 16, 40, 3, 1, 1 },
                                 { 1, 24, 16, 16, 40, 3, 1, 1 }, { 1, 8, 20, 20, 600, 3, 1, 1 } };
    static const sdx_dtype xtypes[] = { SDX_F32, SDX_F16, SDX_F32, SDX_F16, SDX_BF16, SDX_F16, SDX_BF16, SDX_F32 };
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32, checked by fallback_equals_f32_exactly");
    for (int e = 0, engines = tb_engines(ctx); e < engines; e++)
    for (int c = 0; c < (int)(sizeof cs / sizeof cs[0]); c++) {
        const char *engine = tb_engine(ctx, e);
        int64_t N = cs[c][0], C = cs[c][1], H = cs[c][2], W = cs[c][3], O = cs[c][4], k = cs[c][5];
        int st = cs[c][6], pd = cs[c][7];
        int64_t Ho = (H + 2 * pd - k) / st + 1, Wo = (W + 2 * pd - k) / st + 1, K = C * k * k;
        int64_t xs[4] = { N, C, H, W }, ws[4] = { O, C, k, k }, bs[1] = { O }, ys[4] = { N, O, Ho, Wo }, ny = N * O * Ho * Wo;
        sdx_tensor x, w, b, y, y2;
        double *ref = (double *)malloc((size_t)ny * sizeof(double)), *mag = (double *)malloc((size_t)ny * sizeof(double));
        float *xv = (float *)malloc((size_t)(N * C * H * W) * sizeof(float)), *wv = (float *)malloc((size_t)(O * K) * sizeof(float));
        double worst;
        int ok;
        tb_state = 777 + (uint64_t)c;
        T_CHECK(ref && mag && xv && wv, "alloc");
        T_CHECK(tb_alloc_random(ctx, &x, xtypes[c], 4, xs, 2.0) && tb_alloc_random(ctx, &w, SDX_F16, 4, ws, 0.3) &&
                tb_alloc_random(ctx, &b, SDX_F32, 1, bs, 1.0) && sdx_tensor_alloc(ctx, &y, SDX_F32, 4, ys) == SDX_OK &&
                sdx_tensor_alloc(ctx, &y2, SDX_F32, 4, ys) == SDX_OK, "alloc");
        for (int64_t i = 0; i < N * C * H * W; i++) xv[i] = (float)tb_split(sdx__get_f32(&x, i));
        for (int64_t i = 0; i < O * C * k * k; i++) wv[i] = tb_bf16(sdx__get_f32(&w, i));
        tb_conv_double(xv, wv, (const float *)b.data, xs, O, (int)k, st, pd, pd, Ho, Wo, ref, mag);
        compute = SDX_BF16;
        T_CHECK(sdx__conv2d(ctx, &y, &x, &w, &b, st, pd, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx__wcache_add(ctx, &w, NULL) == SDX_OK, "register");
        T_CHECK(sdx__conv2d(ctx, &y2, &x, &w, &b, st, pd, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx__wcache_find(ctx, &w)->panel != NULL, "no panel cached for a registered weight");
        ok = tb_check((const float *)y.data, ref, mag, ny, 2 * K, &worst);
        T_NOTE("%s conv %lldx%lldx%lldx%lld -> %lld, %lldx%lld s%d: worst error / bound %.3f", engine, (long long)N,
               (long long)C, (long long)H, (long long)W, (long long)O, (long long)k, (long long)k, st, worst);
        T_CHECK(ok, "%s conv case %d: error %.3g x the f32 accumulation bound", engine, c, worst);
        T_CHECK(memcmp(y.data, y2.data, sdx_tensor_nbytes(&y)) == 0, "%s conv case %d: cached panel differs from per-call packing",
                engine, c);
        sdx__wcache_drop(ctx, &w, 1);
        compute = SDX_F32;
        sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &b);
        sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &y2);
        free(ref); free(mag); free(xv); free(wv);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* The precision policy in bf16 mode: values f32 holds but bf16 cannot
 * (above 3.3895e38, bf16's largest) saturate when packed instead of
 * becoming infinities, in the activation (linear's x, the convolution's
 * im2col) and in the weight, so every output f32 keeps finite stays
 * finite and close to f32's. */
static int near_float_max_operands_stay_finite(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    const float big = 3.4e38f;          /* finite in f32 (max 3.4028e38), rounds to inf in bf16 */
    int64_t xs[2] = { 3, 40 }, ws[2] = { 5, 40 }, ys[2] = { 3, 5 };
    int64_t cx[4] = { 1, 4, 20, 20 }, cw[4] = { 6, 4, 3, 3 }, cy[4] = { 1, 6, 20, 20 };
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32");
    for (int e = 0, engines = tb_engines(ctx); e < engines; e++)
        for (int big_weight = 0; big_weight < 2; big_weight++) {
            const char *engine = tb_engine(ctx, e);
            sdx_tensor x, w, y, yf, c, k, z, zf;
            double rl, rc;
            T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w, SDX_F32, 2, ws) == SDX_OK &&
                    sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) == SDX_OK && sdx_tensor_alloc(ctx, &yf, SDX_F32, 2, ys) == SDX_OK &&
                    sdx_tensor_alloc(ctx, &c, SDX_F32, 4, cx) == SDX_OK && sdx_tensor_alloc(ctx, &k, SDX_F32, 4, cw) == SDX_OK &&
                    sdx_tensor_alloc(ctx, &z, SDX_F32, 4, cy) == SDX_OK && sdx_tensor_alloc(ctx, &zf, SDX_F32, 4, cy) == SDX_OK,
                    "alloc");
            /* one huge operand per output, the other factor 1/4: f32 gives ~8.5e37 */
            for (int64_t i = 0; i < 3 * 40; i++) ((float *)x.data)[i] = big_weight ? 0.25f : (i % 40 == 7 ? big : 1e-3f);
            for (int64_t i = 0; i < 5 * 40; i++) ((float *)w.data)[i] = big_weight ? (i % 40 == 7 ? big : 1e-3f) : 0.25f;
            for (int64_t i = 0; i < 4 * 400; i++) ((float *)c.data)[i] = big_weight ? 0.25f : (i % 400 == 210 ? big : 1e-3f);
            for (int64_t i = 0; i < 6 * 36; i++) ((float *)k.data)[i] = big_weight ? (i % 36 == 4 ? big : 1e-3f) : 0.25f / 9;
            T_CHECK(sdx__linear(ctx, &yf, &x, &w, NULL, compute) == SDX_OK && sdx__conv2d(ctx, &zf, &c, &k, NULL, 1, 1, compute) == SDX_OK, "f32");
            compute = SDX_BF16;
            T_CHECK(sdx__linear(ctx, &y, &x, &w, NULL, compute) == SDX_OK && sdx__conv2d(ctx, &z, &c, &k, NULL, 1, 1, compute) == SDX_OK,
                    "%s", sdx_last_error(ctx));
            compute = SDX_F32;
            T_CHECK(!sdx__has_nonfinite(&yf) && !sdx__has_nonfinite(&zf), "f32 itself overflowed: a wrong case");
            T_CHECK(!sdx__has_nonfinite(&y), "%s linear, huge %s: bf16 mode made an infinity", engine, big_weight ? "weight" : "x");
            T_CHECK(!sdx__has_nonfinite(&z), "%s conv, huge %s: bf16 mode made an infinity", engine, big_weight ? "weight" : "x");
            rl = t_rel_l2_f32((const float *)y.data, (const float *)yf.data, 15);
            rc = t_rel_l2_f32((const float *)z.data, (const float *)zf.data, 6 * 400);
            T_NOTE("%s huge %s: rel-L2 to f32 linear %.3g, conv %.3g", engine, big_weight ? "weight" : "x", rl, rc);
            T_CHECK(rl < 1e-2 && rc < 1e-2, "%s huge %s: rel-L2 to f32 linear %.3g, conv %.3g", engine,
                    big_weight ? "weight" : "x", rl, rc);
            sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &yf);
            sdx_tensor_free(ctx, &c); sdx_tensor_free(ctx, &k); sdx_tensor_free(ctx, &z); sdx_tensor_free(ctx, &zf);
        }
    sdx_destroy(ctx);
    return T_PASS;
}

/* Attention in bf16 mode on AMX carries every operand of both products
 * (Q K^T and P V) as hi + lo and multiplies them three ways (hi hi' + hi
 * lo' + lo hi'), so it keeps f32's accuracy where rounding one operand
 * would cost 2^-9 per product. Against double on the same inputs: every
 * output within the worst-case bound of that arithmetic (2^-18 per split
 * operand and per dropped lo lo', f32 accumulation, the exp's 3e-7, a
 * logit error moving the softmax by about twice itself), and the whole
 * within 2e-5 rel-L2 (f32 is at 3e-7 to 1e-6; one rounded operand gives
 * about 1e-3).
 * Packing K and V once per head or block by block gives the same bits.
 * Without AMX, bf16 mode's attention is f32's, bit for bit. */
static int attention_bf16_keeps_f32_accuracy(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    static const struct { int64_t nq, nk, heads, d; int causal; sdx_dtype dt; } cs[] = {
        { 100, 77, 2, 40, 0, SDX_F32 },     /* cross-attention: one short key block, 16-wide V strip */
        { 300, 300, 1, 64, 1, SDX_F16 },    /* causal; partial query and key blocks */
        { 70, 260, 2, 80, 0, SDX_F32 },     /* V strips 32 + 32 + 16 */
        { 40, 150, 1, 512, 0, SDX_BF16 },   /* the VAE's width */
        { 129, 128, 3, 8, 0, SDX_F32 },     /* a head narrower than one tile */
    };
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32");
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        const int64_t nq = cs[c].nq, nk = cs[c].nk, H = cs[c].heads, d = cs[c].d, w = H * d;
        int64_t qs[3] = { 2, nq, w }, ks[3] = { 2, nk, w };
        sdx_tensor q, k, v, y, y2, yf;
        float *qv = (float *)malloc((size_t)(2 * nq * w) * sizeof(float));
        float *kv = (float *)malloc((size_t)(2 * nk * w) * sizeof(float)), *vv = (float *)malloc((size_t)(2 * nk * w) * sizeof(float));
        double *s = (double *)malloc((size_t)nk * sizeof(double)), *mag = (double *)malloc((size_t)nk * sizeof(double));
        double scale = 1.0 / sqrt((double)d), worst = 0, num = 0, den = 0, numf = 0, rel;
        T_CHECK(qv && kv && vv && s && mag, "alloc");
        tb_state = 777 + (uint64_t)c;
        T_CHECK(tb_alloc_random(ctx, &q, cs[c].dt, 3, qs, 2.0) && tb_alloc_random(ctx, &k, cs[c].dt, 3, ks, 2.0) &&
                tb_alloc_random(ctx, &v, cs[c].dt, 3, ks, 1.0) && sdx_tensor_alloc(ctx, &y, SDX_F32, 3, qs) == SDX_OK &&
                sdx_tensor_alloc(ctx, &y2, SDX_F32, 3, qs) == SDX_OK && sdx_tensor_alloc(ctx, &yf, SDX_F32, 3, qs) == SDX_OK,
                "alloc");
        sdx__load_f32(q.data, q.dtype, 0, 2 * nq * w, qv);
        sdx__load_f32(k.data, k.dtype, 0, 2 * nk * w, kv);
        sdx__load_f32(v.data, v.dtype, 0, 2 * nk * w, vv);
        T_CHECK(sdx__attention(ctx, &yf, &q, &k, &v, (int)H, cs[c].causal, compute) == SDX_OK, "f32: %s", sdx_last_error(ctx));
        compute = SDX_BF16;
        T_CHECK(sdx__attention(ctx, &y, &q, &k, &v, (int)H, cs[c].causal, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx__cpu(ctx)->attn_blockwise = 1;
        T_CHECK(sdx__attention(ctx, &y2, &q, &k, &v, (int)H, cs[c].causal, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx__cpu(ctx)->attn_blockwise = 0;
        T_CHECK(memcmp(y.data, y2.data, sdx_tensor_nbytes(&y)) == 0, "case %zu: K and V packed per block give other bits", c);
        for (int64_t b = 0; b < 2; b++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = 0; i < nq; i++) {
                    int64_t seen = cs[c].causal ? (i + 1 < nk ? i + 1 : nk) : nk;
                    double mx = -INFINITY, sum = 0, vmax = 0, err_s = 0, bound;
                    const float *qi = qv + (b * nq + i) * w + h * d;
                    for (int64_t j = 0; j < seen; j++) {
                        const float *kj = kv + (b * nk + j) * w + h * d;
                        double dot = 0, m = 0;
                        for (int64_t e = 0; e < d; e++) { dot += (double)qi[e] * kj[e]; m += fabs((double)qi[e] * kj[e]); }
                        s[j] = dot * scale;
                        mag[j] = m * scale;
                        if (s[j] > mx) mx = s[j];
                        if (mag[j] > err_s) err_s = mag[j];
                        for (int64_t e = 0; e < d; e++) vmax = fmax(vmax, fabs(vv[(b * nk + j) * w + h * d + e]));
                    }
                    for (int64_t j = 0; j < seen; j++) { s[j] = exp(s[j] - mx); sum += s[j]; }
                    err_s *= 4 * 0x1p-18 + (double)(3 * d + 4) * 0x1p-23;
                    bound = vmax * (2.2 * err_s + 6e-7 + 4 * 0x1p-18 + (double)(3 * nk + 2 * (nk / 128 + 1) + 8) * 0x1p-23);
                    for (int64_t e = 0; e < d; e++) {
                        double ref = 0, got = ((const float *)y.data)[(b * nq + i) * w + h * d + e], r;
                        for (int64_t j = 0; j < seen; j++) ref += s[j] * vv[(b * nk + j) * w + h * d + e];
                        ref /= sum;
                        r = fabs(got - ref) / bound;
                        T_CHECK(r <= 1.0, "case %zu (%lldx%lld, d %lld): output %lld,%lld,%lld is %.3g off, %.3g x its bound", c,
                                (long long)nq, (long long)nk, (long long)d, (long long)b, (long long)i, (long long)e,
                                fabs(got - ref), r);
                        if (r > worst) worst = r;
                        num += (got - ref) * (got - ref);
                        numf += pow(((const float *)yf.data)[(b * nq + i) * w + h * d + e] - ref, 2);
                        den += ref * ref;
                    }
                }
        rel = sqrt(num / den);
        T_NOTE("AMX attention %lldx%lld, %lld heads of %lld%s, %s: rel-L2 to double %.3g (f32 path %.3g), worst error / bound %.3f",
               (long long)nq, (long long)nk, (long long)H, (long long)d, cs[c].causal ? " causal" : "",
               sdx_dtype_name(cs[c].dt), rel, sqrt(numf / den), worst);
        T_CHECK(rel < 2e-5, "case %zu: rel-L2 to double %.3g", c, rel);
        /* the AVX512-BF16 engine has no attention of its own: f32's */
        if (sdx__cpu(ctx)->bf16_amx) {
            sdx__cpu(ctx)->bf16_amx = 0;
            T_CHECK(sdx__attention(ctx, &y2, &q, &k, &v, (int)H, cs[c].causal, compute) == SDX_OK, "%s", sdx_last_error(ctx));
            sdx__cpu(ctx)->bf16_amx = 1;
            T_CHECK(memcmp(y2.data, yf.data, sdx_tensor_nbytes(&y2)) == 0, "case %zu: without AMX bf16 attention is not f32's", c);
        }
        compute = SDX_F32;
        sdx_tensor_free(ctx, &q); sdx_tensor_free(ctx, &k); sdx_tensor_free(ctx, &v);
        sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &y2); sdx_tensor_free(ctx, &yf);
        free(qv); free(kv); free(vv); free(s); free(mag);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* 3x3 convolutions in bf16 mode on AMX run F(4,3) Winograd with both of
 * its operands (U = G g G^T, V = B^T d B) split into hi + lo and
 * multiplied three ways, so they keep f32 Winograd's accuracy instead of
 * the im2col GEMM's rounded weight (~2e-3 per layer). Spec: rel-L2 to the
 * convolution in double within 1e-4 (measured 2-5e-5; f32 Winograd
 * 1-4e-6, bf16 im2col ~2e-3) and no output off by more than 5e-4 of the
 * sum of |x||w| it adds up (measured at most 6e-5). Cases: channels not a multiple of 32,
 * outputs over several filter chunks and GEMM blocks, partial tiles and
 * tile blocks that end mid-row, images wide enough for whole runs of 16
 * tiles, no and asymmetric padding, batch 2, each storage dtype; and
 * sdx__conv2d takes this path where it pays, giving the same bits. */
static int conv3x3_winograd_on_amx_keeps_f32_accuracy(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    /* N, C, H, W, O, pad top, left, bottom, right */
    static const int cs[][9] = { { 2, 320, 17, 19, 320, 1, 1, 1, 1 }, { 1, 40, 23, 21, 72, 1, 1, 1, 1 },
                                 { 1, 1280, 8, 8, 300, 1, 1, 1, 1 },  { 1, 64, 12, 14, 96, 0, 1, 1, 0 },
                                 { 1, 32, 40, 130, 40, 1, 1, 1, 1 },  { 2, 128, 30, 70, 130, 1, 1, 1, 1 } };
    static const sdx_dtype xtypes[] = { SDX_F32, SDX_F16, SDX_BF16, SDX_F32, SDX_F16, SDX_F32 };
    static const sdx_dtype wtypes[] = { SDX_F16, SDX_F32, SDX_F16, SDX_BF16, SDX_F16, SDX_F16 };
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx) || !sdx__cpu(ctx)->bf16_amx, "no AMX-BF16 here: bf16 mode's Winograd is f32's");
    for (size_t c = 0; c < SDX__ARRAY_LEN(cs); c++) {
        const int64_t N = cs[c][0], C = cs[c][1], H = cs[c][2], W = cs[c][3], O = cs[c][4];
        const int pt = cs[c][5], pl = cs[c][6], pb = cs[c][7], pr = cs[c][8];
        const int64_t Ho = H + pt + pb - 2, Wo = W + pl + pr - 2, ny = N * O * Ho * Wo;
        int64_t xs[4] = { N, C, H, W }, ws[4] = { O, C, 3, 3 }, bs[1] = { O }, ys[4] = { N, O, Ho, Wo };
        sdx_tensor x, w, b, y, yf, y2;
        double *ref = (double *)malloc((size_t)ny * sizeof(double)), *mag = (double *)malloc((size_t)ny * sizeof(double));
        float *xv = (float *)malloc((size_t)(N * C * H * W) * sizeof(float)), *wv = (float *)malloc((size_t)(O * C * 9) * sizeof(float));
        double num = 0, den = 0, numf = 0, worst = 0, rel, relf;
        tb_state = 900 + (uint64_t)c;
        T_CHECK(ref && mag && xv && wv, "alloc");
        T_CHECK(tb_alloc_random(ctx, &x, xtypes[c], 4, xs, 2.0) && tb_alloc_random(ctx, &w, wtypes[c], 4, ws, 0.1) &&
                tb_alloc_random(ctx, &b, SDX_F32, 1, bs, 1.0) && sdx_tensor_alloc(ctx, &y, SDX_F32, 4, ys) == SDX_OK &&
                sdx_tensor_alloc(ctx, &yf, SDX_F32, 4, ys) == SDX_OK && sdx_tensor_alloc(ctx, &y2, SDX_F32, 4, ys) == SDX_OK,
                "alloc");
        sdx__load_f32(x.data, x.dtype, 0, N * C * H * W, xv);
        sdx__load_f32(w.data, w.dtype, 0, O * C * 9, wv);
        tb_conv_double(xv, wv, (const float *)b.data, xs, O, 3, 1, pt, pl, Ho, Wo, ref, mag);
        T_CHECK(sdx__conv2d_winograd(ctx, &yf, &x, &w, &b, pt, pl, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        compute = SDX_BF16;
        T_CHECK(sdx__conv2d_winograd(ctx, &y, &x, &w, &b, pt, pl, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        if (pt == pb && pl == pr && sdx__wino_pays(ctx, compute, &x, &w, 1, Ho, Wo)) {
            T_CHECK(sdx__conv2d(ctx, &y2, &x, &w, &b, 1, pt, compute) == SDX_OK, "%s", sdx_last_error(ctx));
            T_CHECK(memcmp(y.data, y2.data, sdx_tensor_nbytes(&y)) == 0, "case %zu: sdx__conv2d differs from the Winograd path", c);
        }
        compute = SDX_F32;
        for (int64_t i = 0; i < ny; i++) {
            double e = ((float *)y.data)[i] - ref[i], ef = ((float *)yf.data)[i] - ref[i];
            num += e * e; numf += ef * ef; den += ref[i] * ref[i];
            if (!(fabs(e) <= worst * mag[i])) worst = fabs(e) / mag[i];
        }
        rel = sqrt(num / den); relf = sqrt(numf / den);
        T_NOTE("AMX Winograd %lldx%lldx%lldx%lld -> %lld, pads %d%d%d%d, x %s, w %s: rel-L2 to double %.3g (f32 Winograd %.3g), "
               "worst error / sum |x||w| %.3g", (long long)N, (long long)C, (long long)H, (long long)W, (long long)O, pt, pl, pb,
               pr, sdx_dtype_name(x.dtype), sdx_dtype_name(w.dtype), rel, relf, worst);
        T_CHECK(rel <= 1e-4, "case %zu: rel-L2 %.3g to double > 1e-4", c, rel);
        T_CHECK(worst <= 5e-4, "case %zu: an output is off by %.3g of its sum |x||w|", c, worst);
        sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &b);
        sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &yf); sdx_tensor_free(ctx, &y2);
        free(ref); free(mag); free(xv); free(wv);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* bf16 mode's SiLU and GELU (16 lanes, its own exp and erf; f32 mode
 * keeps libm's) against double over [-30, 30]: SiLU within 6e-7 of the
 * true value, relative; GELU within that plus |x|/2 times erf's 1.5e-7
 * absolute error (with the exp's share); NaN stays NaN. Through the ops,
 * GroupNorm's fused SiLU and GEGLU's GELU. */
static int activations_in_bf16_mode_match_double(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    const int64_t n = 60001;
    int64_t shp[2] = { 1, n }, gshp[4] = { 1, 1, 1, n }, gg[2] = { 1, 2 * n };
    sdx_tensor x, y, g, gy, xg;
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32");
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 2, shp) == SDX_OK && sdx_tensor_alloc(ctx, &y, SDX_F32, 2, shp) == SDX_OK &&
            sdx_tensor_alloc(ctx, &g, SDX_F32, 4, gshp) == SDX_OK && sdx_tensor_alloc(ctx, &gy, SDX_F32, 4, gshp) == SDX_OK &&
            sdx_tensor_alloc(ctx, &xg, SDX_F32, 2, gg) == SDX_OK, "alloc");
    for (int64_t i = 0; i < n; i++) ((float *)x.data)[i] = (float)(-30.0 + 60.0 * (double)i / (double)(n - 1));
    ((float *)x.data)[7] = NAN;
    compute = SDX_BF16;
    for (int op = 0; op < 4; op++) {
        double worst = 0;
        const float *out = (const float *)y.data;
        if (op == 0) T_CHECK(sdx__silu(ctx, &y, &x, compute) == SDX_OK, "silu");
        if (op == 1) T_CHECK(sdx__gelu(ctx, &y, &x, compute) == SDX_OK, "gelu");
        if (op == 2) {   /* one group of one channel: GroupNorm maps x to (x - mean) / std; gamma, beta none */
            memcpy(g.data, x.data, (size_t)n * sizeof(float));
            ((float *)g.data)[7] = 0.0f;
            T_CHECK(sdx__group_norm(ctx, &gy, &g, 1, 1e-5f, NULL, NULL, 1, compute) == SDX_OK, "group_norm");
            compute = SDX_F32;
            T_CHECK(sdx__group_norm(ctx, &g, &g, 1, 1e-5f, NULL, NULL, 0, compute) == SDX_OK, "group_norm");
            compute = SDX_BF16;
            out = (const float *)gy.data;
        }
        if (op == 3) {   /* GEGLU: value half 1, gate half x */
            for (int64_t i = 0; i < n; i++) { ((float *)xg.data)[i] = 1.0f; ((float *)xg.data)[n + i] = ((float *)x.data)[i]; }
            T_CHECK(sdx__geglu(ctx, &y, &xg, compute) == SDX_OK, "geglu");
        }
        for (int64_t i = 0; i < n; i++) {
            double v = op == 2 ? ((const float *)g.data)[i] : ((const float *)x.data)[i];
            double ref = op == 0 || op == 2 ? v / (1.0 + exp(-v)) : 0.5 * v * (1.0 + erf(v / sqrt(2.0))), r;
            if (v != v) { T_CHECK(out[i] != out[i], "op %d: NaN in, %g out", op, out[i]); continue; }
            /* SiLU: the exp's 3e-7 relative; GELU: x/2 times erf's 1.5e-7 absolute
             * (and the exp's share of it) */
            r = fabs(out[i] - ref) / ((op == 1 || op == 3 ? 2.5e-7 * fabs(v) : 1e-30) + 6e-7 * fabs(ref) + 1e-30);
            T_CHECK(r <= 1.0, "op %d at x = %.9g: %.9g, true %.9g", op, v, out[i], ref);
            if (r > worst) worst = r;
        }
        T_NOTE("%s in bf16 mode: worst error / bound %.3f", op == 0 ? "silu" : op == 1 ? "gelu" : op == 2 ? "group_norm + silu" : "geglu", worst);
    }
    compute = SDX_F32;
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &g); sdx_tensor_free(ctx, &gy);
    sdx_tensor_free(ctx, &xg);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Where bf16 mode cannot run its GEMM, or it would not pay, the mode is
 * the f32 path: the same bits for linear and conv, and a line in the log
 * that says why. Both cases are set up here as the probe would find them:
 * a CPU without AVX512-BF16, and one with it but without AMX whose
 * VDPBF16PS is slower than its FMAs (no bf16 kernel runs in either, so
 * this holds on any CPU). */
static int fallback_equals_f32_exactly_case(int has_dot) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    int64_t xs[4] = { 1, 24, 12, 12 }, ws[4] = { 40, 24, 3, 3 }, ys[4] = { 1, 40, 12, 12 };
    int64_t lx[2] = { 50, 96 }, lw[2] = { 70, 96 }, ly[2] = { 50, 70 };
    sdx_ctx *ctx = t_ctx();
    sdx_tensor x, w, y32, y16, a, b, z32, z16;
    T_CHECK(ctx, "context");
    (void)tb_has_bf16(ctx);
    sdx__cpu(ctx)->bf16_dot = has_dot;
    sdx__cpu(ctx)->bf16_amx = 0;
    sdx__cpu(ctx)->bf16_dot_pays = 0;
    sdx__cpu(ctx)->bf16_told = 0;
    tb_state = 99;
    T_CHECK(tb_alloc_random(ctx, &x, SDX_F32, 4, xs, 1.0) && tb_alloc_random(ctx, &w, SDX_F16, 4, ws, 0.2) &&
            sdx_tensor_alloc(ctx, &y32, SDX_F32, 4, ys) == SDX_OK && sdx_tensor_alloc(ctx, &y16, SDX_F32, 4, ys) == SDX_OK &&
            tb_alloc_random(ctx, &a, SDX_F32, 2, lx, 1.0) && tb_alloc_random(ctx, &b, SDX_F32, 2, lw, 1.0) &&
            sdx_tensor_alloc(ctx, &z32, SDX_F32, 2, ly) == SDX_OK && sdx_tensor_alloc(ctx, &z16, SDX_F32, 2, ly) == SDX_OK, "alloc");
    T_CHECK(sdx__conv2d(ctx, &y32, &x, &w, NULL, 1, 1, compute) == SDX_OK && sdx__linear(ctx, &z32, &a, &b, NULL, compute) == SDX_OK, "f32");
    compute = SDX_BF16;
    T_CHECK(sdx__conv2d(ctx, &y16, &x, &w, NULL, 1, 1, compute) == SDX_OK && sdx__linear(ctx, &z16, &a, &b, NULL, compute) == SDX_OK, "bf16");
    T_CHECK(memcmp(y32.data, y16.data, sdx_tensor_nbytes(&y32)) == 0, "conv: fallback differs from f32");
    T_CHECK(memcmp(z32.data, z16.data, sdx_tensor_nbytes(&z32)) == 0, "linear: fallback differs from f32");
    T_CHECK(sdx__cpu(ctx)->bf16_told == 1, "the fallback was not logged");
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &y32); sdx_tensor_free(ctx, &y16);
    sdx_tensor_free(ctx, &a); sdx_tensor_free(ctx, &b); sdx_tensor_free(ctx, &z32); sdx_tensor_free(ctx, &z16);
    sdx_destroy(ctx);
    return T_PASS;
}

static int fallback_equals_f32_exactly(void) {
    int rc = fallback_equals_f32_exactly_case(0);
    return rc != T_PASS ? rc : fallback_equals_f32_exactly_case(1);
}

/* A weight slot rewritten in place (what LoRA does, sdx__wslot_set) drops
 * its bf16 panel, and the next call computes with the new values; reset
 * gives the file's values (and results) back. */
static int rewritten_weight_slot_is_repacked(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx__wset ws;
    const sdx_tensor *w;
    sdx__wslot *sl;
    sdx_tensor x, y0, y1, y2, fresh;
    int64_t n, xs[2];
    float *vals;
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build)");
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx__wset_init(&ws, ctx, st, "model.diffusion_model.", SDX__PART_UNET, SDX_AUTO);
    w = sdx__wget(&ws, sdx__s2(-1, -1), "time_embed.0.weight");
    T_CHECK(w, "%s", sdx_last_error(ctx));
    sl = sdx__wset_find(&ws, "model.diffusion_model.time_embed.0.weight");
    T_CHECK(sl && &sl->t == w, "slot");
    xs[0] = 5; xs[1] = w->shape[1];
    n = sdx_tensor_numel(w);
    tb_state = 5;
    T_CHECK(tb_alloc_random(ctx, &x, SDX_F32, 2, xs, 1.0), "alloc");
    xs[1] = w->shape[0];
    T_CHECK(sdx_tensor_alloc(ctx, &y0, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &y1, SDX_F32, 2, xs) == SDX_OK &&
            sdx_tensor_alloc(ctx, &y2, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &fresh, SDX_F32, 2, xs) == SDX_OK, "alloc");
    vals = (float *)malloc((size_t)n * sizeof(float));
    T_CHECK(vals, "alloc");
    compute = SDX_BF16;
    T_CHECK(sdx__linear(ctx, &y0, &x, w, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__wcache_find(ctx, w) && sdx__wcache_find(ctx, w)->panel, "a fetched slot is cached");
    sdx__load_f32(w->data, w->dtype, 0, n, vals);
    for (int64_t i = 0; i < n; i++) vals[i] = -2.0f * vals[i] + 0.01f;
    T_CHECK(sdx__wslot_set(&ws, sl, vals) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__wcache_find(ctx, w)->panel == NULL, "the old panel survived the rewrite");
    T_CHECK(sdx__linear(ctx, &y1, &x, w, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));
    {   /* the same values in an unregistered tensor: packed per call */
        sdx_tensor copy = *w;
        copy.data = malloc(sdx_tensor_nbytes(w));
        T_CHECK(copy.data, "alloc");
        memcpy(copy.data, w->data, sdx_tensor_nbytes(w));
        T_CHECK(sdx__linear(ctx, &fresh, &x, &copy, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        free(copy.data);
    }
    T_CHECK(memcmp(y1.data, fresh.data, sdx_tensor_nbytes(&y1)) == 0, "after the rewrite: not the new weights' result");
    T_CHECK(memcmp(y1.data, y0.data, sdx_tensor_nbytes(&y1)) != 0, "the rewrite changed nothing");
    T_CHECK(sdx__wslot_reset(&ws, sl) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__linear(ctx, &y2, &x, w, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(memcmp(y2.data, y0.data, sdx_tensor_nbytes(&y2)) == 0, "after reset: not the file's result");
    sdx__wset_free(&ws);
    T_CHECK(sdx__cpu(ctx)->wcache.n == 0 && sdx__wcache_bytes(ctx) == 0, "freed slots left %d cache entries", sdx__cpu(ctx)->wcache.n);
    compute = SDX_F32;
    free(vals);
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &y0); sdx_tensor_free(ctx, &y1); sdx_tensor_free(ctx, &y2);
    sdx_tensor_free(ctx, &fresh);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- whole models against the f32 goldens ---------------------------------- */

static sdx_model *tb_model(sdx_ctx *ctx, const char *area, sdx_compute compute) {
    sdx_model_desc md;
    t_golden_desc(&md, area);
    md.compute = compute;
    return t_model_with(ctx, &md);
}

/* Bytes of [p, p + n) that are in this process's memory now (Linux: the
 * present bits of /proc/self/pagemap), or -1 when that cannot be read. */
static long tb_resident_bytes(const void *p, size_t n) {
#if defined(__linux__)
    long page = sysconf(_SC_PAGESIZE), total = 0;
    uintptr_t first = (uintptr_t)p / (uintptr_t)page, last = ((uintptr_t)p + n - 1) / (uintptr_t)page;
    FILE *f = fopen("/proc/self/pagemap", "rb");
    if (!f || n == 0) { if (f) fclose(f); return -1; }
    for (uintptr_t i = first; i <= last; i++) {
        uint64_t e = 0;
        if (fseek(f, (long)(i * 8), SEEK_SET) != 0 || fread(&e, 8, 1, f) != 1) { fclose(f); return -1; }
        if (e >> 63) total += page;
    }
    fclose(f);
    return total;
#else
    (void)p; (void)n;
    return -1;
#endif
}

/* A registered weight that views a mapped checkpoint gives the file's
 * pages back once its bf16 panel is packed (the panel is what computes,
 * so the mode holds one copy of the weights, not two), and computing
 * again after that, from the panel or repacked from the file, gives the
 * same bits. */
static int packed_weight_gives_its_file_pages_back(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    const char *path = t_tmp("sdx_t_bf16_release.safetensors");
    int64_t ws[2] = { 512, 1024 }, xs[2] = { 7, 1024 }, ys[2] = { 7, 512 };
    sdx_ctx *ctx = t_ctx();
    sdx_tensor w, x, y[3];
    const sdx_tensor *file_w;
    sdx_st *st = NULL;
    long before, after;
    volatile unsigned sum = 0;
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32 from the file's weights");
    tb_state = 99;
    T_CHECK(tb_alloc_random(ctx, &w, SDX_F16, 2, ws, 0.5) && tb_alloc_random(ctx, &x, SDX_F32, 2, xs, 2.0), "alloc");
    w.name = "w";
    T_CHECK(sdx_st_write(ctx, path, &w, 1, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    file_w = sdx_st_find(st, "w");
    T_CHECK(file_w, "no tensor w");
    for (size_t i = 0; i < sdx_tensor_nbytes(file_w); i++) sum += ((const unsigned char *)file_w->data)[i];
    before = tb_resident_bytes(file_w->data, sdx_tensor_nbytes(file_w));
    if (before < 0) { sdx_st_close(st); remove(path); }
    T_SKIP_IF(before < 0, "no /proc/self/pagemap here");
    for (int i = 0; i < 3; i++) T_CHECK(sdx_tensor_alloc(ctx, &y[i], SDX_F32, 2, ys) == SDX_OK, "alloc");
    compute = SDX_BF16;
    T_CHECK(sdx__wcache_add(ctx, file_w, &st->map) == SDX_OK, "register");
    T_CHECK(sdx__linear(ctx, &y[0], &x, file_w, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));   /* packs, then releases */
    after = tb_resident_bytes(file_w->data, sdx_tensor_nbytes(file_w));
    T_CHECK(sdx__linear(ctx, &y[1], &x, file_w, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));   /* from the panel */
    sdx__wcache_drop(ctx, file_w, 0);
    T_CHECK(sdx__linear(ctx, &y[2], &x, file_w, NULL, compute) == SDX_OK, "%s", sdx_last_error(ctx));   /* repacked from the file */
    T_NOTE("%zu-byte weight: %ld bytes resident after reading it, %ld after packing its panel",
           sdx_tensor_nbytes(file_w), before, after);
    T_CHECK(before >= (long)sdx_tensor_nbytes(file_w), "reading the weight made only %ld bytes resident", before);
    T_CHECK(after <= 2 * 4096, "%ld bytes of the packed weight still resident", after);
    T_CHECK(!memcmp(y[0].data, y[1].data, sdx_tensor_nbytes(&y[0])) && !memcmp(y[0].data, y[2].data, sdx_tensor_nbytes(&y[0])),
            "the results after the release differ");
    sdx__wcache_drop(ctx, file_w, 1);
    for (int i = 0; i < 3; i++) sdx_tensor_free(ctx, &y[i]);
    sdx_tensor_free(ctx, &w);
    sdx_tensor_free(ctx, &x);
    sdx_st_close(st);
    sdx_destroy(ctx);
    remove(path);
    (void)sum;
    return T_PASS;
}

/* Bounds against the f32 goldens: issue 14's half-precision budget,
 * rel-L2 <= 1e-2 per component. Rounding both operands of every GEMM to
 * bf16 (8 bits of significand) cost about 2e-3 per layer and 0.65e-2 ..
 * 1.25e-2 per UNet call on these random-weight goldens, over the budget;
 * the activation's rounding was half of that, so bf16 mode carries it as
 * hi + lo and only the weight is rounded. Measured then (AMX and
 * AVX512-BF16 alike): text encoder context <= 2.6e-3, one UNet call
 * <= 8.1e-3, VAE decode <= 6.8e-3, decoded images <= 8e-3 (the sd2 golden
 * model's weights are bf16 already: 1e-5 and less). Final latents after
 * 8-16 CFG-7 calls are no component and drift further (1.1e-2..1.4e-2;
 * bf16 *storage* reaches 5.1e-2 there, see the pipeline suite). */
#define TB_TEXT   1e-2
#define TB_UNET   1e-2
#define TB_VAE    1e-2
#define TB_LATENT 2e-2
#define TB_IMAGE  1e-2

static int tb_unet_case(sdx_ctx *ctx, sdx_model *m, const char *rel, double *r) {
    int finite = 0, rc = t_unet_case(ctx, &m->unet, t_shared(rel), r, &finite);
    if (rc == T_PASS && !finite) *r = 1e30;
    return rc;
}

/* Text encoder output, UNet output and VAE decoder output of SD 1.x, 2.x
 * and SDXL in bf16 mode, each within its bound of the f32 golden (above);
 * bf16 panels are cached while the model lives and freed with it. */
static int components_stay_close_to_f32_goldens(void) {
    static const struct { const char *area, *text, *unet[2], *vae, *vae_key; } as[3] = {
        { "sd1", "golden/sd1/cases/text_encoder.safetensors",
          { "golden/sd1/cases/unet_case0.safetensors", "golden/sd1/cases/unet_case1.safetensors" },
          "golden/sd1/cases/vae_decode_case0.safetensors", "decoded" },
        { "sd2", "golden/sd2/cases/text_encoder.safetensors",
          { "golden/sd2/cases/unet_case0.safetensors", "golden/sd2/cases/unet_case1.safetensors" },
          "golden/sd2/cases/vae_decode_case0.safetensors", "decoded" },
        { "sdxl", NULL, { "golden/sdxl/cases/unet_0.safetensors", "golden/sdxl/cases/unet_1.safetensors" },
          "golden/sdxl/cases/vae_decode_0.safetensors", "decoder_out" },
    };
    T_NEED_SHARED(v, "vocab/merges.txt");
    (void)v;
    for (int e = 0, engines = 1; e < engines; e++)
    for (int i = 0; i < 3; i++) {
        sdx_ctx *ctx = t_ctx();
        sdx_model *m;
        const char *engine;
        double r;
        int rc;
        T_CHECK(ctx, "context");
        TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32, checked by fallback_equals_f32_exactly");
        engines = tb_engines(ctx);
        engine = tb_engine(ctx, e);
        m = tb_model(ctx, as[i].area, SDX_COMPUTE_BF16);
        T_CHECK(m, "%s: %s", as[i].area, sdx_last_error(ctx));
        if (as[i].text) {
            if ((rc = t_text_golden_case(ctx, m, as[i].text, &r, NULL)) != T_PASS) return rc;
            T_NOTE("%s %s text encoder context, bf16: rel-L2 %.3g", engine, as[i].area, r);
            T_CHECK(r >= 0 && r <= TB_TEXT, "%s %s text encoder: rel-L2 %.3g > %g", engine, as[i].area, r, TB_TEXT);
        }
        for (int c = 0; c < 2; c++) {
            if ((rc = tb_unet_case(ctx, m, as[i].unet[c], &r)) != T_PASS) return rc;
            T_NOTE("%s %s UNet case %d, bf16: rel-L2 %.3g", engine, as[i].area, c, r);
            T_CHECK(r <= TB_UNET, "%s %s UNet case %d: rel-L2 %.3g > %g", engine, as[i].area, c, r, TB_UNET);
        }
        if ((rc = t_vae_golden_case(ctx, m, as[i].vae, as[i].vae_key, &r, NULL)) != T_PASS) return rc;
        T_NOTE("%s %s VAE decode, bf16: rel-L2 %.3g", engine, as[i].area, r);
        T_CHECK(r <= TB_VAE, "%s %s VAE decode: rel-L2 %.3g > %g", engine, as[i].area, r, TB_VAE);
        T_CHECK(sdx__wcache_bytes(ctx) > 0, "%s: no weight was cached", as[i].area);
        sdx_model_free(m);
        T_CHECK(sdx__cpu(ctx)->wcache.n == 0, "%s: model freed, %d cache entries left", as[i].area, sdx__cpu(ctx)->wcache.n);
        sdx_destroy(ctx);
    }
    return T_PASS;
}

/* Whole txt2img golden generations (every case of sd1, sd2, sdxl) in
 * bf16 mode: final latent and decoded image within their bounds of the
 * f32 goldens (above); the PNG parameters name the mode. */
static int generations_stay_close_to_f32_goldens(void) {
    static const char *areas[3] = { "sd1", "sd2", "sdxl" };
    T_NEED_SHARED(v, "vocab/merges.txt");
    (void)v;
    for (int a = 0; a < 3; a++) {
        char params[2048];
        t_golden_case cases[8];
        sdx_ctx *ctx = t_ctx();
        sdx_model *m;
        int n;
        T_CHECK(ctx, "context");
        TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32, checked by fallback_equals_f32_exactly");
        n = t_golden_cases(ctx, areas[a], cases, 8);
        T_CHECK(n > 0, "%s: no pipeline cases (%s)", areas[a], sdx_last_error(ctx));
        m = tb_model(ctx, areas[a], SDX_COMPUTE_BF16);
        T_CHECK(m, "%s: %s", areas[a], sdx_last_error(ctx));
        for (int i = 0; i < n; i++) {
            const t_golden_case *c = &cases[i];
            sdx_gen_params p;
            sdx_gen_result res;
            double rl, ri;
            int64_t hw = (int64_t)c->width * c->height;
            float *img;
            t_golden_params(c, &p);
            T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s: %s", c->file, sdx_last_error(ctx));
            img = (float *)malloc((size_t)(3 * hw) * sizeof(float));
            T_CHECK(img, "alloc");
            for (int64_t j = 0; j < hw; j++)        /* HWC bytes -> CHW in [0, 1], as the golden */
                for (int ch = 0; ch < 3; ch++) img[ch * hw + j] = res.images[0].data[j * 3 + ch] / 255.0f;
            rl = t_rel_to_file(ctx, c->file, "latent", (const float *)res.latents[0].data, sdx_tensor_numel(&res.latents[0]));
            ri = t_rel_to_file(ctx, c->file, "image", img, 3 * hw);
            free(img);
            T_NOTE("%s %s, bf16: final latent rel-L2 %.3g, image rel-L2 %.3g", areas[a], c->name, rl, ri);
            sdx_gen_result_free(ctx, &res);
            T_CHECK(rl >= 0 && rl <= TB_LATENT, "%s: final latent rel-L2 %.3g > %g", c->file, rl, TB_LATENT);
            T_CHECK(ri >= 0 && ri <= TB_IMAGE, "%s: image rel-L2 %.3g > %g", c->file, ri, TB_IMAGE);
            T_CHECK(sdx_format_parameters(m, &p, p.seed, params, sizeof params, NULL) == SDX_OK && strstr(params, ", Compute: bf16,"),
                    "parameters do not name the mode: %s", params);
        }
        sdx_model_free(m);
        sdx_destroy(ctx);
    }
    return T_PASS;
}

/* The same seed gives the same image bit for bit, run after run and with
 * 1, 2 or 3 threads (GEMM jobs are whole output tiles: no thread splits
 * a dot product). */
static int same_seed_same_image_across_runs_and_threads(void) {
    static const int threads[3] = { 2, 1, 3 };
    unsigned char *first = NULL;
    size_t bytes = 0;
    T_NEED_SHARED(v, "vocab/merges.txt");
    (void)v;
    for (int run = 0; run < 4; run++) {
        sdx_desc d;
        sdx_ctx *ctx;
        sdx_model *m;
        sdx_gen_params p;
        sdx_gen_result res;
        memset(&d, 0, sizeof d);
        d.n_threads = threads[run % 3];
        ctx = sdx_create(&d);
        T_CHECK(ctx, "context");
        TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build): bf16 mode computes in f32, checked by fallback_equals_f32_exactly");
        m = tb_model(ctx, "sd1", SDX_COMPUTE_BF16);
        T_CHECK(m, "%s", sdx_last_error(ctx));
        memset(&p, 0, sizeof p);
        p.prompt = "a lighthouse at dusk";
        p.negative_prompt = "blurry";
        p.width = 64; p.height = 96;
        p.steps = 3;
        p.seed = 42;
        T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
        if (!first) {
            bytes = (size_t)res.images[0].width * res.images[0].height * 3;
            first = (unsigned char *)malloc(bytes);
            T_CHECK(first, "alloc");
            memcpy(first, res.images[0].data, bytes);
        } else {
            int same = memcmp(first, res.images[0].data, bytes) == 0;
            sdx_gen_result_free(ctx, &res);
            if (!same) free(first);
            T_CHECK(same, "run %d with %d threads differs from the first", run, d.n_threads);
            sdx_model_free(m);
            sdx_destroy(ctx);
            continue;
        }
        sdx_gen_result_free(ctx, &res);
        sdx_model_free(m);
        sdx_destroy(ctx);
    }
    free(first);
    return T_PASS;
}

/* The VAE-like conv of the precision suite (|x| ~ 300, f16 storage,
 * running sums past 65504 that cancel back to a few thousand) stays
 * finite in bf16 mode, for f16 and bf16 activation storage. Cancellation
 * makes a relative budget meaningless here; each output is instead within
 * the bound of rounding both operands to bf16, 2^-8 * sum |x||w| (computed
 * as the f32 convolution of |x| and |w|), plus two roundings of the
 * stored output. */
static int half_storage_stress_stays_finite(void) {
    sdx_dtype compute = SDX_F32;   /* the ops' arithmetic */
    const int64_t c = 48, h = 16, w = 16, n = c * h * w, nw = c * c * 9;
    int64_t xs[4] = { 1, c, h, w }, ws[4] = { c, c, 3, 3 };
    static const sdx_dtype st[2] = { SDX_F16, SDX_BF16 };
    sdx_ctx *ctx = t_ctx();
    T_CHECK(ctx, "context");
    TB_SKIP_IF(ctx, !tb_has_bf16(ctx), "no AVX512-BF16 here (CPU, or an SDX_NO_SIMD build)");
    for (int s = 0; s < 2; s++) {
        sdx_tensor x, w1, y32, y16, ax, aw, mag;
        float *wv = (float *)malloc((size_t)nw * sizeof(float)), *a = (float *)malloc((size_t)n * sizeof(float));
        float *b = (float *)malloc((size_t)n * sizeof(float)), *m = (float *)malloc((size_t)n * sizeof(float));
        double worst = 0, unit = st[s] == SDX_F16 ? 0x1p-11 : 0x1p-8, biggest = 0;
        int finite = 1;
        T_CHECK(wv && a && b && m, "alloc");
        tb_state = 400;
        T_CHECK(sdx_tensor_alloc(ctx, &x, st[s], 4, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w1, SDX_F16, 4, ws) == SDX_OK &&
                sdx_tensor_alloc(ctx, &y32, st[s], 4, xs) == SDX_OK && sdx_tensor_alloc(ctx, &y16, st[s], 4, xs) == SDX_OK &&
                sdx_tensor_alloc(ctx, &ax, SDX_F32, 4, xs) == SDX_OK && sdx_tensor_alloc(ctx, &aw, SDX_F32, 4, ws) == SDX_OK &&
                sdx_tensor_alloc(ctx, &mag, SDX_F32, 4, xs) == SDX_OK, "alloc");
        for (int64_t i = 0; i < n; i++) a[i] = (float)(300.0 + 20.0 * tb_uniform());
        for (int64_t i = 0; i < nw; i++) wv[i] = (float)(((i / 9) % c < c / 2 ? 1.3 : -1.3) + 0.05 * tb_uniform());
        sdx__store_f32(x.data, x.dtype, 0, n, a);
        sdx__store_f32(w1.data, w1.dtype, 0, nw, wv);
        sdx__load_f32(x.data, x.dtype, 0, n, (float *)ax.data);
        sdx__load_f32(w1.data, w1.dtype, 0, nw, (float *)aw.data);
        for (int64_t i = 0; i < n; i++) ((float *)ax.data)[i] = fabsf(((float *)ax.data)[i]);
        for (int64_t i = 0; i < nw; i++) ((float *)aw.data)[i] = fabsf(((float *)aw.data)[i]);
        compute = SDX_F32;
        T_CHECK(sdx__conv2d(ctx, &y32, &x, &w1, NULL, 1, 1, compute) == SDX_OK && sdx__conv2d(ctx, &mag, &ax, &aw, NULL, 1, 1, compute) == SDX_OK,
                "%s", sdx_last_error(ctx));
        compute = SDX_BF16;
        T_CHECK(sdx__conv2d(ctx, &y16, &x, &w1, NULL, 1, 1, compute) == SDX_OK, "%s", sdx_last_error(ctx));
        compute = SDX_F32;
        sdx__load_f32(y32.data, y32.dtype, 0, n, a);
        sdx__load_f32(y16.data, y16.dtype, 0, n, b);
        memcpy(m, mag.data, (size_t)n * sizeof(float));
        for (int64_t i = 0; i < n; i++) {
            double bound = 0x1p-8 * 1.01 * m[i] + 2 * unit * fabs(a[i]) + 1e-3, r = fabs((double)b[i] - a[i]) / bound;
            finite &= isfinite(b[i]) != 0;
            if (!(r <= worst)) worst = r;
            if (m[i] > biggest) biggest = m[i];
        }
        T_NOTE("%s storage, sum |x||w| up to %.0f: worst bf16-mode error / operand-rounding bound %.3f", sdx_dtype_name(st[s]),
               biggest, worst);
        sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w1); sdx_tensor_free(ctx, &y32); sdx_tensor_free(ctx, &y16);
        sdx_tensor_free(ctx, &ax); sdx_tensor_free(ctx, &aw); sdx_tensor_free(ctx, &mag);
        free(wv); free(a); free(b); free(m);
        T_CHECK(finite, "%s storage: non-finite output in bf16 mode", sdx_dtype_name(st[s]));
        T_CHECK(biggest > 65504, "test data too tame: sum |x||w| %.0f", biggest);
        T_CHECK(worst <= 1.0, "%s storage: error %.3g x the bf16 operand-rounding bound", sdx_dtype_name(st[s]), worst);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case bf16_cases[] = {
    { "linear_bf16_matches_its_operands_in_double", linear_bf16_matches_its_operands_in_double },
    { "conv2d_bf16_matches_its_operands_in_double", conv2d_bf16_matches_its_operands_in_double },
    { "near_float_max_operands_stay_finite", near_float_max_operands_stay_finite },
    { "attention_bf16_keeps_f32_accuracy", attention_bf16_keeps_f32_accuracy },
    { "conv3x3_winograd_on_amx_keeps_f32_accuracy", conv3x3_winograd_on_amx_keeps_f32_accuracy },
    { "activations_in_bf16_mode_match_double", activations_in_bf16_mode_match_double },
    { "fallback_equals_f32_exactly", fallback_equals_f32_exactly },
    { "rewritten_weight_slot_is_repacked", rewritten_weight_slot_is_repacked },
    { "packed_weight_gives_its_file_pages_back", packed_weight_gives_its_file_pages_back },
    { "half_storage_stress_stays_finite", half_storage_stress_stays_finite },
    { "components_stay_close_to_f32_goldens", components_stay_close_to_f32_goldens },
    { "generations_stay_close_to_f32_goldens", generations_stay_close_to_f32_goldens },
    { "same_seed_same_image_across_runs_and_threads", same_seed_same_image_across_runs_and_threads },
    { 0, 0 }
};
SDX_TEST_SUITE(bf16, bf16_cases)
