/* Suite "quantmm": linear layers with block-quantized weights on int8
 * arithmetic (src/cpu/gemm_i8.c): activations quantized per block of 32
 * at run time, exact i32 dot products per block, blocks summed in f32 in
 * one order. The portable code is the specification; every int8 kernel
 * compiled in and run by this CPU must give its bits. */
#include "test.h"

/* The block types int8 takes, and the kernels. */
static const sdx_dtype tq_types[] = { SDX_Q8_0, SDX_Q4_0, SDX_Q5_0, SDX_Q4_1, SDX_Q5_1, SDX_Q4_K, SDX_Q5_K };
#define TQ_NTYPES ((int)(sizeof tq_types / sizeof tq_types[0]))

/* The types with a min (w d + m). */
static int tq_mins(sdx_dtype t) { return t == SDX_Q4_1 || t == SDX_Q5_1 || t == SDX_Q4_K || t == SDX_Q5_K; }

/* A K of whole blocks of type t: k, or (the K types' 256-value blocks) k256. */
static int64_t tq_k(sdx_dtype t, int64_t k, int64_t k256) { return sdx_dtype_block(t, NULL) == 256 ? k256 : k; }

/* Block kb (of 32 values) of row o of w (rows of K values), as int8 reads it. */
static void tq_weight_block(const sdx_tensor *w, int64_t K, int64_t o, int64_t kb, signed char *wq, float *dw, float *mw) {
    size_t bb;
    int block = sdx_dtype_block(w->dtype, &bb);
    sdx__i8w_block(sdx__i8_type_of(w->dtype), (const unsigned char *)w->data + (size_t)(o * (K / block)) * bb, bb, kb, wq, dw, mw);
}

/* Random blocks: random bytes (Q8_0's -128 included), f16 scales and
 * mins of a weight's size, positive or negative. */
static void tq_rand_blocks(sdx_tensor *t) {
    size_t bb, n = sdx_tensor_nbytes(t);
    unsigned char *p = (unsigned char *)t->data;
    int mins = tq_mins(t->dtype);
    sdx_dtype_block(t->dtype, &bb);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(t_uniform() * 256.0);
    for (size_t b = 0; b < n; b += bb)
        for (int f = 0; f < 1 + mins; f++) {
            uint16_t h = sdx_f32_to_f16((float)((t_uniform() - 0.3) * 4e-3));
            p[b + 2 * (size_t)f] = (unsigned char)h;
            p[b + 2 * (size_t)f + 1] = (unsigned char)(h >> 8);
        }
}

/* y = x w^T + b on int8 kernel `kernel` (-1: the exact, dequantizing
 * path) whatever the table says. */
static int tq_linear(sdx_ctx *ctx, int kernel, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                     sdx_dtype compute) {
    int rc;
    ctx->desc.quant_exact = kernel < 0;
    sdx__cpu(ctx)->i8_force = kernel < 0 ? 0 : kernel + 1;
    rc = sdx__linear(ctx, y, x, w, b, compute);
    sdx__cpu(ctx)->i8_force = 0;
    ctx->desc.quant_exact = 0;
    return rc;
}

static sdx_ctx *tq_ctx(int threads) {
    sdx_desc d;
    memset(&d, 0, sizeof d);
    d.n_threads = threads;
    return sdx_create(&d);
}

/* Equal bits, or both NaN (a NaN's payload is whichever operand's). */
static int tq_same(float a, float b) {
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y || (a != a && b != b);
}

static int tq_first_difference(const sdx_tensor *a, const sdx_tensor *b) {
    int64_t n = sdx_tensor_numel(a);
    for (int64_t i = 0; i < n; i++)
        if (!tq_same(sdx__get_f32(a, i), sdx__get_f32(b, i))) return (int)i;
    return -1;
}

/* Every int8 kernel this CPU runs against the portable one, bit for
 * bit: each type, SD-shaped products (attention projections, the
 * cross-attention keys from 77 tokens, the MLP's down-projection over
 * several K steps, two rows) and odd ones (one row, M odd, N not a
 * multiple of 16, tails of every job, a K past SDX__I8_KEEP_K, whose
 * rows are quantized a step at a time; for Q4_K and Q5_K the shapes with
 * rows of whole 256s), f32 and f16 activations, f32 and
 * f16 outputs, with and without bias; the portable kernel on one thread,
 * the others on three (jobs and threads change no bit), in f32 and bf16
 * mode (the arithmetic is the same). */
static int every_int8_kernel_equals_the_portable_specification(void) {
    static const struct { int64_t m, n, k; } shapes[] = {
        { 256, 320, 320 }, { 77, 320, 768 }, { 24, 640, 2560 }, { 2, 1280, 1280 },
        { 1, 33, 32 }, { 13, 17, 96 }, { 7, 5, 256 }, { 301, 19, 512 }, { 29, 530, 800 }, { 97, 47, 576 }, { 21, 50, 3200 },
        { 19, 40, 3072 },
    };
    sdx_ctx *one = tq_ctx(1), *three = tq_ctx(3);
    int compared[SDX__I8_KERNELS] = { 0 };
    char ran[256] = "";
    for (int t = 0; t < TQ_NTYPES; t++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            int64_t m = shapes[i].m, n = shapes[i].n, k = shapes[i].k;
            int64_t xs[2] = { m, k }, ws[2] = { n, k }, ys[2] = { m, n };
            sdx_dtype xt = i % 2 ? SDX_F16 : SDX_F32, yt = i % 3 == 1 ? SDX_F16 : SDX_F32;
            sdx_tensor x, w, b, ref, y;
            if (k % sdx_dtype_block(tq_types[t], NULL)) continue;     /* the K types: rows of whole 256s */
            t_seed((uint64_t)(1000 * t + (int)i));
            T_CHECK(sdx_tensor_alloc(one, &x, xt, 2, xs) == SDX_OK && sdx_tensor_alloc(one, &w, tq_types[t], 2, ws) == SDX_OK &&
                    sdx_tensor_alloc(one, &b, SDX_F32, 1, &n) == SDX_OK && sdx_tensor_alloc(one, &ref, yt, 2, ys) == SDX_OK &&
                    sdx_tensor_alloc(one, &y, yt, 2, ys) == SDX_OK, "alloc");
            for (int64_t j = 0; j < m * k; j++) {
                float v = (float)(t_normal() * (j % 97 == 0 ? 20.0 : 1.0));
                sdx__store_f32(x.data, xt, j, 1, &v);
            }
            for (int64_t j = 0; j < n; j++) ((float *)b.data)[j] = (float)t_normal();
            tq_rand_blocks(&w);
            T_CHECK(tq_linear(one, SDX__I8_SCALAR, &ref, &x, &w, i % 4 ? &b : NULL, SDX_F32) == SDX_OK, "%s", sdx_last_error(one));
            T_CHECK(!sdx__has_nonfinite(&ref), "%s: the portable kernel's result is not finite", sdx_dtype_name(tq_types[t]));
            for (int kernel = SDX__I8_SCALAR + 1; kernel < SDX__I8_KERNELS; kernel++)
                for (int mode = 0; mode < 2 && sdx__i8_have(three, kernel); mode++) {
                    int at;
                    memset(y.data, 0xff, sdx_tensor_nbytes(&y));
                    T_CHECK(tq_linear(three, kernel, &y, &x, &w, i % 4 ? &b : NULL, mode ? SDX_BF16 : SDX_F32) == SDX_OK, "%s",
                            sdx_last_error(three));
                    at = tq_first_difference(&y, &ref);
                    T_CHECK(at < 0, "%s kernel, %s [%lld, %lld] x [%lld, %lld]^T, %s x, %s: y[%d] = %.9g, the specification %.9g",
                            sdx__i8_kernel_names[kernel], sdx_dtype_name(tq_types[t]), (long long)m, (long long)k, (long long)n,
                            (long long)k, sdx_dtype_name(xt), mode ? "bf16" : "f32", at, sdx__get_f32(&y, at), sdx__get_f32(&ref, at));
                    compared[kernel]++;
                }
            sdx_tensor_free(one, &x); sdx_tensor_free(one, &w); sdx_tensor_free(one, &b);
            sdx_tensor_free(one, &ref); sdx_tensor_free(one, &y);
        }
    for (int kernel = SDX__I8_SCALAR + 1; kernel < SDX__I8_KERNELS; kernel++)
        if (compared[kernel])
            snprintf(ran + strlen(ran), sizeof ran - strlen(ran), "%s%s (%d)", ran[0] ? ", " : "", sdx__i8_kernel_names[kernel],
                     compared[kernel]);
    T_NOTE("bit-identical to the portable kernel: %s", ran[0] ? ran : "no other kernel on this CPU / build");
    sdx_destroy(one);
    sdx_destroy(three);
    return T_PASS;
}

/* ---- the specification, written again from gemm_i8.c's comment -------- */

/* One block of activations: d, Q, s. */
static void tq_spec_quantize(const float *x, int32_t *q, float *d, int32_t *s) {
    float amax = 0;
    int nonfinite = 0;
    *s = 0;
    memset(q, 0, 32 * sizeof *q);
    for (int j = 0; j < 32; j++) {
        if (!isfinite(x[j])) nonfinite = 1;
        else if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
    }
    if (nonfinite) { *d = NAN; return; }
    if (amax < 7.888609052210118e-31f) { *d = 0; return; }                 /* 2^-100 */
    if (amax > 3.3230699894622897e35f) amax = 3.3230699894622897e35f;      /* 2^118 */
    *d = amax / 32767.0f;
    for (int j = 0; j < 32; j++) {
        float v = x[j] * (32767.0f / amax);
        v = v < -32767.0f ? -32767.0f : v > 32767.0f ? 32767.0f : v;
        q[j] = (int32_t)nearbyintf(v);     /* the default rounding: to even */
        *s += q[j];
    }
}

/* y row i, output o, from the documented arithmetic (f32 activations),
 * with sdx__fmaf: a correctly rounded fma (mingw-w64's fmaf is not). */
static float tq_spec_output(const float *x, const sdx_tensor *w, int64_t o, int64_t K, float bias) {
    float acc = 0;
    int mins = tq_mins(w->dtype);
    for (int64_t b = 0; b < K / 32; b++) {
        signed char wq[32];
        float da, dw, mw;
        int32_t q[32], s, isum = 0;
        tq_spec_quantize(x + 32 * b, q, &da, &s);
        tq_weight_block(w, K, o, b, wq, &dw, &mw);
        for (int j = 0; j < 32; j++) isum += q[j] * wq[j];
        acc = sdx__fmaf((float)isum, da * dw, acc);
        if (mins) acc = sdx__fmaf((float)s, da * mw, acc);
    }
    return acc + bias;
}

/* The portable kernel computes what the comment in gemm_i8.c says, from
 * the weight's integers and scales as dequantizing reads them (w d, or
 * w d + m, is ggml's value), on activations with the cases the rules
 * name: a NaN, +Inf or -Inf in one block, all zero, tiny (below 2^-100),
 * huge (past 2^118, saturating), subnormal, and ordinary rows. */
static int the_portable_kernel_is_the_documented_arithmetic(void) {
    enum { M = 9, N = 21, KMAX = 256 };
    sdx_ctx *ctx = tq_ctx(2);
    for (int t = 0; t < TQ_NTYPES; t++) {
        const int64_t K = tq_k(tq_types[t], 96, 256), n = N;
        int64_t xs[2] = { M, K }, ws[2] = { N, K }, ys[2] = { M, N };
        sdx_tensor x, w, b, y;
        float deq[N * KMAX];
        t_seed((uint64_t)(77 + t));
        T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w, tq_types[t], 2, ws) == SDX_OK &&
                sdx_tensor_alloc(ctx, &b, SDX_F32, 1, &n) == SDX_OK && sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) == SDX_OK, "alloc");
        tq_rand_blocks(&w);
        sdx__dequant(w.data, w.dtype, 0, N * K, deq);
        for (int64_t blk = 0; blk < N * K / 32; blk++) {
            signed char wq[32];
            float dw, mw;
            tq_weight_block(&w, K, blk / (K / 32), blk % (K / 32), wq, &dw, &mw);
            for (int j = 0; j < 32; j++)     /* (a _0 type's -0 stays -0: no + m) */
                T_CHECK(tq_same(tq_mins(tq_types[t]) ? (float)wq[j] * dw + mw : (float)wq[j] * dw, deq[32 * blk + j]),
                        "%s block %lld value %d: %g * %g + %g, ggml's %g",
                        sdx_dtype_name(w.dtype), (long long)blk, j, (double)wq[j], dw, mw, deq[32 * blk + j]);
        }
        for (int i = 0; i < M * K; i++) ((float *)x.data)[i] = (float)t_normal();
        ((float *)x.data)[0 * K + 40] = NAN;
        ((float *)x.data)[1 * K + 3] = INFINITY;
        ((float *)x.data)[2 * K + 95] = -INFINITY;
        for (int j = 0; j < K; j++) {
            ((float *)x.data)[3 * K + j] = 0.0f;
            ((float *)x.data)[4 * K + j] = (float)(t_normal() * 1e-32);
            ((float *)x.data)[5 * K + j] = (float)(t_normal() * 1e37);
            ((float *)x.data)[6 * K + j] = (float)(t_normal() * 1e-40);     /* subnormal: below 2^-100, zero */
        }
        for (int j = 32; j < 64; j++) ((float *)x.data)[7 * K + j] = 0.0f;  /* one zero block */
        ((float *)x.data)[8 * K + 70] = 6e35f;                            /* one saturating block */
        for (int i = 0; i < N; i++) ((float *)b.data)[i] = (float)t_normal();
        T_CHECK(tq_linear(ctx, SDX__I8_SCALAR, &y, &x, &w, &b, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
        for (int i = 0; i < M; i++)
            for (int o = 0; o < N; o++) {
                float want = tq_spec_output((const float *)x.data + i * K, &w, o, K, ((float *)b.data)[o]);
                float got = ((float *)y.data)[i * N + o];
                T_CHECK(tq_same(got, want), "%s row %d output %d: %.9g, the specification %.9g", sdx_dtype_name(w.dtype), i, o, got, want);
                T_CHECK((i < 3) == (got != got), "%s row %d output %d: %g (NaN exactly in the rows with a NaN or Inf)",
                        sdx_dtype_name(w.dtype), i, o, got);
                if (i == 3 || i == 4 || i == 6) T_CHECK(got == ((float *)b.data)[o], "row %d: %g is not the bias", i, got);
                if (i == 5 || i == 8) T_CHECK(isfinite(got), "row %d output %d: %g, not finite", i, o, got);
            }
        sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &b); sdx_tensor_free(ctx, &y);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* The same edge rows through every kernel: bit for bit the portable
 * kernel's (NaN where it is NaN). */
static int edge_activations_agree_on_every_kernel(void) {
    enum { M = 50, N = 37 };
    sdx_ctx *ctx = tq_ctx(2);
    for (int t = 0; t < TQ_NTYPES; t++) {
        const int64_t K = tq_k(tq_types[t], 160, 256);
        int64_t xs[2] = { M, K }, ws[2] = { N, K }, ys[2] = { M, N };
        sdx_tensor x, w, ref, y;
        t_seed((uint64_t)(900 + t));
        T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w, tq_types[t], 2, ws) == SDX_OK &&
                sdx_tensor_alloc(ctx, &ref, SDX_F32, 2, ys) == SDX_OK && sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) == SDX_OK, "alloc");
        tq_rand_blocks(&w);
        for (int i = 0; i < M; i++) {
            static const double scale[6] = { 1.0, 1e-32, 1e37, 1e-40, 0.0, 3e-6 };
            for (int j = 0; j < K; j++) ((float *)x.data)[i * K + j] = (float)(t_normal() * scale[i % 6]);
        }
        ((float *)x.data)[7 * K + 100] = NAN;
        ((float *)x.data)[20 * K + 0] = INFINITY;
        ((float *)x.data)[33 * K + 159] = -INFINITY;
        ((float *)x.data)[41 * K + 64] = 3e38f;
        T_CHECK(tq_linear(ctx, SDX__I8_SCALAR, &ref, &x, &w, NULL, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
        for (int kernel = SDX__I8_SCALAR + 1; kernel < SDX__I8_KERNELS; kernel++) {
            int at;
            if (!sdx__i8_have(ctx, kernel)) continue;
            T_CHECK(tq_linear(ctx, kernel, &y, &x, &w, NULL, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
            at = tq_first_difference(&y, &ref);
            T_CHECK(at < 0, "%s kernel, %s: y[%d] = %.9g, the specification %.9g", sdx__i8_kernel_names[kernel],
                    sdx_dtype_name(w.dtype), at, ((float *)y.data)[at], ((float *)ref.data)[at]);
        }
        for (int o = 0; o < N; o++)
            T_CHECK(((float *)ref.data)[7 * N + o] != ((float *)ref.data)[7 * N + o] &&
                    ((float *)ref.data)[20 * N + o] != ((float *)ref.data)[20 * N + o] &&
                    ((float *)ref.data)[33 * N + o] != ((float *)ref.data)[33 * N + o] && isfinite(((float *)ref.data)[41 * N + o]),
                    "%s output %d: NaN rows %g %g %g, the saturated row %g", sdx_dtype_name(w.dtype), o, ((float *)ref.data)[7 * N + o],
                    ((float *)ref.data)[20 * N + o], ((float *)ref.data)[33 * N + o], ((float *)ref.data)[41 * N + o]);
        sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &ref); sdx_tensor_free(ctx, &y);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- how far int8 is from f32 ------------------------------------------- */

/* The int8 linear against the same weight in double on real-ish data
 * (normal activations with a few outliers, a normal weight quantized as
 * sd-cli quantizes it): rounding an activation to its block's step da
 * moves it by at most da / 2, so an output moves by at most the sum over
 * blocks of da/2 times the block's sum of |w|; the f32 arithmetic adds at
 * most (K/32 + 3) roundings of 2^-24 relative to the sum of the blocks'
 * |terms| (each term's scale product and integer conversion, the chain of
 * K/32 fmas, the bias), which is at most the sum of |x w| plus the first
 * bound. Each output must be
 * within that bound; the rel-L2 of both the int8 and the exact path are
 * reported. */
static int int8_error_stays_within_the_quantization_bound(void) {
    enum { M = 200, N = 96, KMAX = 768 };
    sdx_ctx *ctx = tq_ctx(2);
    float *wf = (float *)malloc(sizeof(float) * N * KMAX);
    T_CHECK(wf, "alloc");
    for (int t = 0; t < TQ_NTYPES; t++) {
        const int64_t K = tq_k(tq_types[t], 640, 768);
        int64_t xs[2] = { M, K }, ws[2] = { N, K }, ys[2] = { M, N };
        sdx_tensor x, w, y, ye;
        double worst = 0, e2 = 0, ee2 = 0, r2 = 0;
        size_t bb;
        t_seed((uint64_t)(31 + t));
        T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w, tq_types[t], 2, ws) == SDX_OK &&
                sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) == SDX_OK && sdx_tensor_alloc(ctx, &ye, SDX_F32, 2, ys) == SDX_OK, "alloc");
        for (int i = 0; i < N * K; i++) wf[i] = (float)(t_normal() * 0.05);
        sdx_dtype_block(w.dtype, &bb);
        for (int o = 0; o < N; o++)
            sdx__quantizer(w.dtype)(wf + o * K, K, (unsigned char *)w.data + (size_t)o * (size_t)(K / sdx_dtype_block(w.dtype, NULL)) * bb);
        sdx__dequant(w.data, w.dtype, 0, N * K, wf);
        for (int i = 0; i < M * K; i++) ((float *)x.data)[i] = (float)(t_normal() * (i % 211 == 0 ? 30.0 : 1.0));
        T_CHECK(tq_linear(ctx, sdx__i8_best(ctx), &y, &x, &w, NULL, SDX_F32) == SDX_OK && tq_linear(ctx, -1, &ye, &x, &w, NULL, SDX_F32) == SDX_OK,
                "%s", sdx_last_error(ctx));
        for (int i = 0; i < M; i++)
            for (int o = 0; o < N; o++) {
                const float *xr = (const float *)x.data + i * K, *wr = wf + o * K;
                double exact = 0, bound = 0, mag = 0, got = ((float *)y.data)[i * N + o];
                for (int b = 0; b < K / 32; b++) {
                    double amax = 0, wsum = 0;
                    for (int j = 32 * b; j < 32 * b + 32; j++) {
                        exact += (double)xr[j] * wr[j];
                        mag += fabs((double)xr[j] * wr[j]);
                        amax = fmax(amax, fabs(xr[j]));
                        wsum += fabs(wr[j]);
                    }
                    bound += (double)(float)(amax / 32767.0) / 2 * wsum;
                }
                bound += (K / 32 + 3) * ldexp(1.0, -24) * (mag + bound);
                worst = fmax(worst, fabs(got - exact) / bound);
                e2 += (got - exact) * (got - exact);
                ee2 += (((float *)ye.data)[i * N + o] - exact) * (((float *)ye.data)[i * N + o] - exact);
                r2 += exact * exact;
            }
        T_NOTE("%s, [%d, %d] x [%d, %d]^T on %s: rel-L2 to double %.3g (the exact path %.3g), largest error %.2f of its bound",
               sdx_dtype_name(w.dtype), M, (int)K, N, (int)K, sdx__i8_kernel_names[sdx__i8_best(ctx)], sqrt(e2 / r2), sqrt(ee2 / r2), worst);
        T_CHECK(worst <= 1.0, "%s: an output is %.3g times its bound from the exact value", sdx_dtype_name(w.dtype), worst);
        sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &ye);
    }
    free(wf);
    sdx_destroy(ctx);
    return T_PASS;
}

/* sdx_desc.quant_exact: the dequantizing path, bit for bit the weight
 * dequantized to f32; without it the table's choice (the int8 kernel
 * where it pays, which here differs from the exact result). */
static int quant_exact_multiplies_the_dequantized_weight(void) {
    enum { M = 64, N = 48, K = 256 };
    sdx_desc d;
    sdx_ctx *exact, *ctx = tq_ctx(2);
    int64_t xs[2] = { M, K }, ws[2] = { N, K }, ys[2] = { M, N };
    sdx_tensor x, w, wf, y, yf;
    int kernel = sdx__i8_choose(ctx, SDX_Q8_0, SDX_F32);
    memset(&d, 0, sizeof d);
    d.quant_exact = 1;
    exact = sdx_create(&d);
    T_CHECK(exact, "context");
    t_seed(5);
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 2, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w, SDX_Q8_0, 2, ws) == SDX_OK &&
            sdx_tensor_alloc(ctx, &wf, SDX_F32, 2, ws) == SDX_OK && sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys) == SDX_OK &&
            sdx_tensor_alloc(ctx, &yf, SDX_F32, 2, ys) == SDX_OK, "alloc");
    tq_rand_blocks(&w);
    sdx__dequant(w.data, w.dtype, 0, N * K, (float *)wf.data);
    for (int i = 0; i < M * K; i++) ((float *)x.data)[i] = (float)t_normal();
    T_CHECK(sdx__i8_choose(exact, SDX_Q8_0, SDX_F32) == -1, "quant_exact still chose an int8 kernel");
    T_CHECK(sdx__linear(exact, &y, &x, &w, NULL, SDX_F32) == SDX_OK && sdx__linear(exact, &yf, &x, &wf, NULL, SDX_F32) == SDX_OK,
            "%s", sdx_last_error(exact));
    T_CHECK(memcmp(y.data, yf.data, sdx_tensor_nbytes(&y)) == 0, "quant_exact: not the dequantized weight's bits");
    T_CHECK(sdx__linear(ctx, &y, &x, &w, NULL, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    T_NOTE("q8_0 in f32 mode runs %s here", kernel < 0 ? "the dequantizing path" : sdx__i8_kernel_names[kernel]);
    if (kernel >= 0) T_CHECK(memcmp(y.data, yf.data, sdx_tensor_nbytes(&y)) != 0, "the int8 kernel gave the exact bits");
    else T_CHECK(memcmp(y.data, yf.data, sdx_tensor_nbytes(&y)) == 0, "the dequantizing path is not exact");
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &wf); sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &yf);
    sdx_destroy(exact);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case quantmm_cases[] = {
    { "every_int8_kernel_equals_the_portable_specification", every_int8_kernel_equals_the_portable_specification },
    { "the_portable_kernel_is_the_documented_arithmetic", the_portable_kernel_is_the_documented_arithmetic },
    { "edge_activations_agree_on_every_kernel", edge_activations_agree_on_every_kernel },
    { "int8_error_stays_within_the_quantization_bound", int8_error_stays_within_the_quantization_bound },
    { "quant_exact_multiplies_the_dequantized_weight", quant_exact_multiplies_the_dequantized_weight },
    { 0, 0 }
};
SDX_TEST_SUITE(quantmm, quantmm_cases)
