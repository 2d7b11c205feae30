/* Suite "precision": the precision policy, proved on crafted stress cases.
 *
 * Each case runs twice:
 *   (a) with naive half-precision arithmetic (the tp_naive_* helpers below:
 *       every running sum, statistic or logit rounded to f16 after each
 *       step, which is what SDX_UNSAFE_HALF_* builds of sdx do and what
 *       naive half kernels elsewhere do) to show it produces Inf/NaN or a
 *       large error;
 *   (b) with sdx's kernels on f16/bf16 *storage* (f32 accumulation,
 *       statistics and logits) to show the result stays finite and matches
 *       a double-precision reference computed from the same rounded
 *       inputs, within the stated tolerance.
 * The SDX_UNSAFE_* macros are compile-time, so the naive side lives here. */
#include "test.h"

/* ---- helpers -------------------------------------------------------- */

static float tp_h(float v) { return sdx_f16_to_f32(sdx_f32_to_f16(v)); }

static float tp_round(sdx_dtype t, float v) {
    return t == SDX_F16 ? tp_h(v) : t == SDX_BF16 ? sdx_bf16_to_f32(sdx_f32_to_bf16(v)) : v;
}

static int64_t tp_nonfinite(const float *v, int64_t n) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += !isfinite(v[i]);
    return c;
}

/* Stores f32 values into a tensor of any storage dtype, and reads back
 * what was stored (so references use exactly what the kernel sees). */
static void tp_store(sdx_tensor *t, float *v) {
    for (int64_t i = 0; i < sdx_tensor_numel(t); i++) {
        if (t->dtype == SDX_F32) ((float *)t->data)[i] = v[i];
        else if (t->dtype == SDX_F16) ((uint16_t *)t->data)[i] = sdx_f32_to_f16(v[i]);
        else ((uint16_t *)t->data)[i] = sdx_f32_to_bf16(v[i]);
        v[i] = tp_round(t->dtype, v[i]);
    }
}

static void tp_load(const sdx_tensor *t, float *v) {
    for (int64_t i = 0; i < sdx_tensor_numel(t); i++) {
        if (t->dtype == SDX_F32) v[i] = ((const float *)t->data)[i];
        else if (t->dtype == SDX_F16) v[i] = sdx_f16_to_f32(((const uint16_t *)t->data)[i]);
        else v[i] = sdx_bf16_to_f32(((const uint16_t *)t->data)[i]);
    }
}

static double tp_unit(sdx_dtype t) { return t == SDX_F32 ? 0x1p-24 : t == SDX_F16 ? 0x1p-11 : 0x1p-8; }

/* ---- naive half-precision reference kernels (test only) -------------- */

/* GroupNorm with half statistics: running sum and sum of squared
 * deviations rounded to f16 after every element. */
static void tp_naive_half_group_norm(const float *x, int64_t c, int64_t hw, int groups, float eps, float *y) {
    int64_t cpg = c / groups, n = cpg * hw;
    for (int g = 0; g < groups; g++) {
        const float *p = x + g * n;
        float s = 0, q = 0, mean, rstd;
        for (int64_t i = 0; i < n; i++) s = tp_h(s + p[i]);
        mean = tp_h(s / (float)n);
        for (int64_t i = 0; i < n; i++) q = tp_h(q + tp_h((p[i] - mean) * (p[i] - mean)));
        rstd = tp_h(1.0f / sqrtf(tp_h(q / (float)n) + eps));
        for (int64_t i = 0; i < n; i++) y[g * n + i] = tp_h(tp_h(p[i] - mean) * rstd);
    }
}

/* Single-head attention in half: dot products accumulated in f16, then
 * scaled in f16; softmax either as exp/sum (shift_max = 0, the textbook
 * formula) or max-shifted (shift_max = 1), with f16 exps and sums. */
static void tp_naive_half_attention(const float *q, const float *k, const float *v, int64_t nq, int64_t nk, int64_t d,
                                    int causal, int shift_max, float *logit, float *y) {
    float scale = tp_h(1.0f / sqrtf((float)d));
    for (int64_t i = 0; i < nq; i++) {
        int64_t nv = causal ? (i + 1 < nk ? i + 1 : nk) : nk;
        float mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < nv; j++) {
            float dot = 0;
            for (int64_t c = 0; c < d; c++) dot = tp_h(dot + tp_h(q[i * d + c] * k[j * d + c]));
            logit[j] = tp_h(dot * scale);
            mx = logit[j] > mx ? logit[j] : mx;
        }
        for (int64_t j = 0; j < nv; j++) { logit[j] = tp_h(expf(logit[j] - (shift_max ? mx : 0.0f))); s = tp_h(s + logit[j]); }
        for (int64_t c = 0; c < d; c++) {
            float o = 0;
            for (int64_t j = 0; j < nv; j++) o = tp_h(o + tp_h(tp_h(logit[j] / s) * v[j * d + c]));
            y[i * d + c] = o;
        }
    }
}

/* 3x3 conv, pad 1, stride 1, with f16 accumulation; only output rows
 * [0, rows) are computed (enough to see what happens). */
static void tp_naive_half_conv3x3(const float *x, const float *w, int64_t c, int64_t o, int64_t h, int64_t wd,
                                  int64_t rows, float *y) {
    for (int64_t oc = 0; oc < o; oc++)
        for (int64_t oy = 0; oy < rows; oy++)
            for (int64_t ox = 0; ox < wd; ox++) {
                float s = 0;
                for (int64_t ic = 0; ic < c; ic++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                            s = tp_h(s + tp_h(w[((oc * c + ic) * 3 + ky) * 3 + kx] * x[(ic * h + iy) * wd + ix]));
                        }
                y[(oc * h + oy) * wd + ox] = s;
            }
}

/* ---- double references ------------------------------------------------ */

static void tp_ref_conv3x3(const float *x, const float *w, int64_t c, int64_t o, int64_t h, int64_t wd,
                           double *y, double *mag) {
    for (int64_t oc = 0; oc < o; oc++)
        for (int64_t oy = 0; oy < h; oy++)
            for (int64_t ox = 0; ox < wd; ox++) {
                double s = 0, a = 0;
                for (int64_t ic = 0; ic < c; ic++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                            double p;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                            p = (double)w[((oc * c + ic) * 3 + ky) * 3 + kx] * x[(ic * h + iy) * wd + ix];
                            s += p; a += fabs(p);
                        }
                y[(oc * h + oy) * wd + ox] = s;
                mag[(oc * h + oy) * wd + ox] = a;
            }
}

/* Worst |y - ref| / (u_out |ref| + acc * mag). */
static double tp_ratio(const float *y, const double *ref, const double *mag, int64_t n, sdx_dtype out, double acc,
                       double *rel_l2) {
    double worst = 0, num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - ref[i]);
        double tol = tp_unit(out) * fabs(ref[i]) + acc * mag[i] + 1e-30 + (out == SDX_F16 ? 0x1p-25 : 0.0);
        if (d != d) d = INFINITY;
        if (d / tol > worst) worst = d / tol;
        num += d * d; den += ref[i] * ref[i];
    }
    *rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
    return worst;
}

/* ---- GroupNorm ---------------------------------------------------------- */

/* [1, 320, 128, 128], values in [10, 35]: each of the 32 groups sums
 * 163,840 values to ~3.7e6, far past 65504. */
static int group_norm_half_sum_overflows_f32_stats_do_not(void) {
    const int64_t c = 320, hw = 128 * 128, n = c * hw;
    const int groups = 32;
    const float eps = 1e-6f;
    int64_t shape[4] = { 1, c, 128, 128 };
    float *xv = (float *)malloc((size_t)n * sizeof(float)), *yv = (float *)malloc((size_t)n * sizeof(float));
    double *ref = (double *)malloc((size_t)n * sizeof(double)), *mag = (double *)malloc((size_t)n * sizeof(double));
    sdx_ctx *ctx = t_ctx();
    int rc = T_PASS;
    T_CHECK(xv && yv && ref && mag && ctx, "alloc");
    t_seed(100);
    for (int ti = 0; ti < 2 && rc == T_PASS; ti++) {
        sdx_dtype dt = ti ? SDX_BF16 : SDX_F16;
        sdx_tensor x, y;
        int64_t naive_bad;
        double ratio, l2;
        T_CHECK(sdx_tensor_alloc(ctx, &x, dt, 4, shape) == SDX_OK && sdx_tensor_alloc(ctx, &y, dt, 4, shape) == SDX_OK, "alloc");
        for (int64_t i = 0; i < n; i++) xv[i] = (float)(10.0 + 25.0 * t_uniform());
        tp_store(&x, xv);
        /* (a) naive half statistics */
        tp_naive_half_group_norm(xv, c, hw, groups, eps, yv);
        naive_bad = tp_nonfinite(yv, n);
        /* (b) sdx with half storage */
        if (sdx__group_norm(ctx, &y, &x, groups, eps, NULL, NULL, 0, SDX_F32) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "group_norm: %s", sdx_last_error(ctx));
            rc = T_FAIL;
        } else {
            int64_t per = n / groups;
            for (int g = 0; g < groups; g++) {
                double mean = 0, var = 0;
                for (int64_t i = 0; i < per; i++) mean += xv[g * per + i];
                mean /= (double)per;
                for (int64_t i = 0; i < per; i++) var += (xv[g * per + i] - mean) * (xv[g * per + i] - mean);
                var /= (double)per;
                for (int64_t i = 0; i < per; i++) {
                    ref[g * per + i] = (xv[g * per + i] - mean) / sqrt(var + (double)eps);
                    mag[g * per + i] = fabs(ref[g * per + i]) + 4.0;
                }
            }
            tp_load(&y, yv);
            /* output rounding (u_out |ref|) plus a few f32 ulps of the O(1)
             * normalised terms: the statistics themselves are exact to ~1e-12 */
            ratio = tp_ratio(yv, ref, mag, n, dt, 1e-6, &l2);
            T_NOTE("%s storage: naive half stats -> %lld of %lld outputs non-finite; sdx: ratio %.3f rel_l2 %.3g",
                   sdx_dtype_name(dt), (long long)naive_bad, (long long)n, ratio, l2);
            if (naive_bad == 0) { snprintf(t_msg, sizeof t_msg, "naive half statistics did not overflow"); rc = T_FAIL; }
            else if (ratio > 1.0) { snprintf(t_msg, sizeof t_msg, "%s: sdx group_norm ratio %.3f", sdx_dtype_name(dt), ratio); rc = T_FAIL; }
        }
        sdx_tensor_free(ctx, &x);
        sdx_tensor_free(ctx, &y);
    }
    free(xv); free(yv); free(ref); free(mag);
    sdx_destroy(ctx);
    return rc;
}

/* ---- attention ------------------------------------------------------------ */

/* Runs sdx attention (one head) on q, k, v of dtype dt and compares with a
 * double reference. Logit errors: f32 dot products of D terms carry at
 * most delta = D 2^-24 sum|q_c k_c| / sqrt(D) absolute error, which moves
 * each softmax weight by a factor within e^(+-2 delta), so
 * |dy_c| <= (e^(2 delta) - 1) sum_j p_j |v_jc| (+ output rounding). */
static int tp_attention_sdx(sdx_dtype dt, float *qv, float *kv, float *vv, int64_t nq, int64_t nk, int64_t d,
                            int causal, double *ratio_out, double *l2_out, int64_t *bad_out) {
    sdx_ctx *ctx = t_ctx();
    sdx_tensor q, k, v, y;
    int64_t qs[3] = { 1, nq, d }, ks[3] = { 1, nk, d };
    float *yv = (float *)malloc((size_t)(nq * d) * sizeof(float));
    double *w = (double *)malloc((size_t)nk * sizeof(double)), worst = 0, num = 0, den = 0;
    int ok;
    if (!ctx || !yv || !w) { free(yv); free(w); sdx_destroy(ctx); return 0; }
    ok = sdx_tensor_alloc(ctx, &q, dt, 3, qs) == SDX_OK && sdx_tensor_alloc(ctx, &k, dt, 3, ks) == SDX_OK &&
         sdx_tensor_alloc(ctx, &v, dt, 3, ks) == SDX_OK && sdx_tensor_alloc(ctx, &y, dt, 3, qs) == SDX_OK;
    if (ok) {
        tp_store(&q, qv); tp_store(&k, kv); tp_store(&v, vv);
        ok = sdx__attention(ctx, &y, &q, &k, &v, 1, causal, SDX_F32) == SDX_OK;
    }
    if (ok) {
        tp_load(&y, yv);
        *bad_out = tp_nonfinite(yv, nq * d);
        for (int64_t i = 0; i < nq; i++) {
            int64_t nv = causal ? (i + 1 < nk ? i + 1 : nk) : nk;
            double mx = -INFINITY, s = 0, delta = 0;
            for (int64_t j = 0; j < nv; j++) {
                double dot = 0, mag = 0;
                for (int64_t c = 0; c < d; c++) {
                    dot += (double)qv[i * d + c] * kv[j * d + c];
                    mag += fabs((double)qv[i * d + c] * kv[j * d + c]);
                }
                w[j] = dot / sqrt((double)d);
                delta = fmax(delta, (double)(d + 2) * 0x1p-24 * mag / sqrt((double)d));
                mx = fmax(mx, w[j]);
            }
            for (int64_t j = 0; j < nv; j++) { w[j] = exp(w[j] - mx); s += w[j]; }
            for (int64_t c = 0; c < d; c++) {
                double r = 0, a = 0, err, tol;
                for (int64_t j = 0; j < nv; j++) { r += w[j] / s * vv[j * d + c]; a += w[j] / s * fabs(vv[j * d + c]); }
                err = fabs(yv[i * d + c] - r);
                tol = (exp(2 * delta) - 1 + 1e-5) * a + tp_unit(dt) * fabs(r) + 1e-30;
                if (err != err) err = INFINITY;
                worst = fmax(worst, err / tol);
                num += err * err; den += r * r;
            }
        }
    }
    *ratio_out = worst;
    *l2_out = den > 0 ? sqrt(num / den) : 0;
    sdx_tensor_free(ctx, &q); sdx_tensor_free(ctx, &k); sdx_tensor_free(ctx, &v); sdx_tensor_free(ctx, &y);
    sdx_destroy(ctx);
    free(yv); free(w);
    return ok;
}

/* Logits spread over about +-25: exp(x) overflows f16 for x > 11.09. */
static int attention_logits_above_11_overflow_half_exp(void) {
    const int64_t n = 256, d = 40;
    float *q = (float *)malloc((size_t)(n * d) * sizeof(float)), *k = (float *)malloc((size_t)(n * d) * sizeof(float));
    float *v = (float *)malloc((size_t)(n * d) * sizeof(float)), *y = (float *)malloc((size_t)(n * d) * sizeof(float));
    float *logit = (float *)malloc((size_t)n * sizeof(float));
    int rc = T_PASS;
    T_CHECK(q && k && v && y && logit, "alloc");
    for (int ti = 0; ti < 2 && rc == T_PASS; ti++) {
        sdx_dtype dt = ti ? SDX_BF16 : SDX_F16;
        double ratio = 0, l2 = 0, max_logit = 0;
        int64_t naive_bad, sdx_bad = -1;
        t_seed(200 + (uint64_t)ti);
        t_fill_normal(q, (size_t)(n * d), 2.6);
        t_fill_normal(k, (size_t)(n * d), 2.6);
        t_fill_normal(v, (size_t)(n * d), 1.0);
        for (int64_t i = 0; i < n * d; i++) { q[i] = tp_round(dt, q[i]); k[i] = tp_round(dt, k[i]); v[i] = tp_round(dt, v[i]); }
        for (int64_t j = 0; j < n; j++) {
            double dot = 0;
            for (int64_t c = 0; c < d; c++) dot += (double)q[c] * k[j * d + c];
            max_logit = fmax(max_logit, dot / sqrt((double)d));
        }
        tp_naive_half_attention(q, k, v, n, n, d, 0, 0, logit, y);
        naive_bad = tp_nonfinite(y, n * d);
        T_CHECK(tp_attention_sdx(dt, q, k, v, n, n, d, 0, &ratio, &l2, &sdx_bad), "sdx attention failed");
        T_NOTE("%s: max logit of query 0 %.1f; naive half exp/sum -> %lld of %lld non-finite; sdx: %lld non-finite, ratio %.3f rel_l2 %.3g",
               sdx_dtype_name(dt), max_logit, (long long)naive_bad, (long long)(n * d), (long long)sdx_bad, ratio, l2);
        if (max_logit <= 11.1) { snprintf(t_msg, sizeof t_msg, "test data too tame: max logit %.1f", max_logit); rc = T_FAIL; }
        else if (naive_bad == 0) { snprintf(t_msg, sizeof t_msg, "naive half softmax did not overflow"); rc = T_FAIL; }
        else if (sdx_bad != 0 || ratio > 1.0) { snprintf(t_msg, sizeof t_msg, "%s: sdx %lld non-finite, ratio %.3f", sdx_dtype_name(dt), (long long)sdx_bad, ratio); rc = T_FAIL; }
    }
    free(q); free(k); free(v); free(y); free(logit);
    return rc;
}

/* q and k share a large common direction (entries ~34, D = 64), so every
 * q.k exceeds 65504 before the 1/sqrt(D) scaling, while the differences
 * between keys (what the softmax sees) stay moderate. A half GEMM turns
 * the products into Inf even with a max-shifted softmax. The causal
 * variant runs in bf16. */
static int tp_attention_products_case(sdx_dtype dt, int causal) {
    const int64_t n = 192, d = 64;
    float *q = (float *)malloc((size_t)(n * d) * sizeof(float)), *k = (float *)malloc((size_t)(n * d) * sizeof(float));
    float *v = (float *)malloc((size_t)(n * d) * sizeof(float)), *y = (float *)malloc((size_t)(n * d) * sizeof(float));
    float *logit = (float *)malloc((size_t)n * sizeof(float));
    double ratio = 0, l2 = 0, min_dot = INFINITY;
    int64_t naive_bad, sdx_bad = -1;
    int rc = T_PASS;
    T_CHECK(q && k && v && y && logit, "alloc");
    t_seed(300 + (uint64_t)dt);
    for (int64_t i = 0; i < n * d; i++) {
        q[i] = tp_round(dt, (float)(34.0 + 0.3 * t_normal()));
        k[i] = tp_round(dt, (float)(34.0 + 0.3 * t_normal()));
        v[i] = tp_round(dt, (float)t_normal());
    }
    for (int64_t j = 0; j < n; j++) {
        double dot = 0;
        for (int64_t c = 0; c < d; c++) dot += (double)q[c] * k[j * d + c];
        min_dot = fmin(min_dot, dot);
    }
    tp_naive_half_attention(q, k, v, n, n, d, causal, 1, logit, y);
    naive_bad = tp_nonfinite(y, n * d);
    if (!tp_attention_sdx(dt, q, k, v, n, n, d, causal, &ratio, &l2, &sdx_bad)) { rc = T_FAIL; snprintf(t_msg, sizeof t_msg, "sdx attention failed"); }
    T_NOTE("%s%s: min q0.k %.0f; naive half (max-shifted) -> %lld of %lld non-finite; sdx: %lld non-finite, ratio %.3f rel_l2 %.3g",
           sdx_dtype_name(dt), causal ? " causal" : "", min_dot, (long long)naive_bad, (long long)(n * d), (long long)sdx_bad, ratio, l2);
    if (rc == T_PASS && min_dot <= 65504) { snprintf(t_msg, sizeof t_msg, "test data too tame: min product %.0f", min_dot); rc = T_FAIL; }
    else if (rc == T_PASS && naive_bad == 0) { snprintf(t_msg, sizeof t_msg, "naive half attention stayed finite"); rc = T_FAIL; }
    else if (rc == T_PASS && (sdx_bad != 0 || ratio > 1.0)) { snprintf(t_msg, sizeof t_msg, "%s: sdx %lld non-finite, ratio %.3f", sdx_dtype_name(dt), (long long)sdx_bad, ratio); rc = T_FAIL; }
    free(q); free(k); free(v); free(y); free(logit);
    return rc;
}

static int attention_products_above_65504_f16(void) { return tp_attention_products_case(SDX_F16, 0); }
static int attention_products_above_65504_causal_bf16(void) { return tp_attention_products_case(SDX_BF16, 1); }

/* ---- VAE-decoder-like conv stack ------------------------------------------------ */

/* Two 3x3 convs with a residual between them, on large positive
 * activations (~300, as deep in the VAE decoder): the first half of the
 * input channels pushes each running sum past +65504 before the second
 * half brings it back to a few thousand. y1 = conv1(x); h = x + y1;
 * y2 = conv2(h). Half accumulation overflows to Inf in the first conv;
 * sdx's f32 accumulation with f16 storage does not, and each stage
 * matches its double reference (computed from the stored f16 input of
 * that stage) within the dot-product bound. */
static int vae_conv_stack_accumulation_past_65504(void) {
    const int64_t c = 48, h = 16, w = 16, n = c * h * w, nw = c * c * 9;
    int64_t xs[4] = { 1, c, h, w }, ws[4] = { c, c, 3, 3 };
    sdx_ctx *ctx = t_ctx();
    sdx_tensor x, w1, w2, y1, hh, y2;
    float *xv = (float *)malloc((size_t)n * sizeof(float)), *w1v = (float *)malloc((size_t)nw * sizeof(float));
    float *w2v = (float *)malloc((size_t)nw * sizeof(float)), *yv = (float *)malloc((size_t)n * sizeof(float));
    float *hv = (float *)malloc((size_t)n * sizeof(float)), *naive = (float *)malloc((size_t)n * sizeof(float));
    double *ref = (double *)malloc((size_t)n * sizeof(double)), *mag = (double *)malloc((size_t)n * sizeof(double));
    double r1, r2, l2a, l2b, max_partial = 0;
    int64_t naive_bad;
    int ok;
    T_CHECK(ctx && xv && w1v && w2v && yv && hv && naive && ref && mag, "alloc");
    ok = sdx_tensor_alloc(ctx, &x, SDX_F16, 4, xs) == SDX_OK && sdx_tensor_alloc(ctx, &w1, SDX_F16, 4, ws) == SDX_OK &&
         sdx_tensor_alloc(ctx, &w2, SDX_F16, 4, ws) == SDX_OK && sdx_tensor_alloc(ctx, &y1, SDX_F16, 4, xs) == SDX_OK &&
         sdx_tensor_alloc(ctx, &hh, SDX_F16, 4, xs) == SDX_OK && sdx_tensor_alloc(ctx, &y2, SDX_F16, 4, xs) == SDX_OK;
    T_CHECK(ok, "alloc");
    t_seed(400);
    for (int64_t i = 0; i < n; i++) xv[i] = (float)(300.0 + 20.0 * t_normal());
    for (int64_t i = 0; i < nw; i++) {
        int64_t ic = (i / 9) % c;      /* first half of the input channels +, second half - */
        float sign = ic < c / 2 ? 1.0f : -1.0f;
        w1v[i] = (float)(sign * 1.3 + 0.05 * t_normal());
        w2v[i] = (float)(sign * 0.6 + 0.05 * t_normal());
    }
    tp_store(&x, xv); tp_store(&w1, w1v); tp_store(&w2, w2v);
    /* the largest running sum after the positive half, at an interior pixel */
    for (int64_t ic = 0; ic < c / 2; ic++)
        for (int k = 0; k < 9; k++) max_partial += (double)w1v[ic * 9 + k] * xv[(ic * h + 5 + k / 3) * w + 5 + k % 3];
    /* (a) naive half accumulation, first conv, first 3 output rows */
    tp_naive_half_conv3x3(xv, w1v, c, c, h, w, 3, naive);
    naive_bad = 0;
    for (int64_t oc = 0; oc < c; oc++)
        for (int64_t p = 0; p < 3 * w; p++) naive_bad += !isfinite(naive[oc * h * w + p]);
    /* (b) sdx */
    ok = sdx__conv2d(ctx, &y1, &x, &w1, NULL, 1, 1, SDX_F32) == SDX_OK && sdx__add(ctx, &hh, &x, &y1) == SDX_OK &&
         sdx__conv2d(ctx, &y2, &hh, &w2, NULL, 1, 1, SDX_F32) == SDX_OK;
    T_CHECK(ok, "sdx conv stack: %s", sdx_last_error(ctx));
    tp_ref_conv3x3(xv, w1v, c, c, h, w, ref, mag);
    tp_load(&y1, yv);
    r1 = tp_ratio(yv, ref, mag, n, SDX_F16, (double)(c * 9 + 1) * 0x1p-24, &l2a);
    tp_load(&hh, hv);
    tp_ref_conv3x3(hv, w2v, c, c, h, w, ref, mag);
    tp_load(&y2, yv);
    r2 = tp_ratio(yv, ref, mag, n, SDX_F16, (double)(c * 9 + 1) * 0x1p-24, &l2b);
    T_NOTE("partial sum after %lld channels ~%.0f; naive half conv1 -> %lld of %lld checked outputs non-finite",
           (long long)(c / 2), max_partial, (long long)naive_bad, (long long)(c * 3 * w));
    T_NOTE("sdx f16 storage: conv1 ratio %.3f rel_l2 %.3g; conv2 ratio %.3f rel_l2 %.3g; non-finite %lld",
           r1, l2a, r2, l2b, (long long)tp_nonfinite(yv, n));
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w1); sdx_tensor_free(ctx, &w2);
    sdx_tensor_free(ctx, &y1); sdx_tensor_free(ctx, &hh); sdx_tensor_free(ctx, &y2);
    sdx_destroy(ctx);
    free(xv); free(w1v); free(w2v); free(yv); free(hv); free(naive); free(ref); free(mag);
    T_CHECK(max_partial > 65504, "test data too tame: partial sum %.0f", max_partial);
    T_CHECK(naive_bad > 0, "naive half accumulation stayed finite");
    T_CHECK(r1 <= 1.0 && r2 <= 1.0, "sdx conv ratios %.3f, %.3f", r1, r2);
    return T_PASS;
}

/* ---- mixed dtypes ---------------------------------------------------------- */

/* An F32 tensor plus an F16 one into F32: computed in f32, so each element
 * is exactly the f32 sum of the two stored values (no demotion to f16,
 * which would lose the low bits of the F32 operand). */
static int mixed_f32_plus_f16_computes_in_f32(void) {
    const int64_t n = 1000;
    sdx_ctx *ctx = t_ctx();
    sdx_tensor a, b, y, y2;
    int64_t shape[1] = { n };
    int exact = 0, exact_swapped = 0, demoted_would_match = 0;
    T_CHECK(ctx, "context");
    T_CHECK(sdx_tensor_alloc(ctx, &a, SDX_F32, 1, shape) == SDX_OK && sdx_tensor_alloc(ctx, &b, SDX_F16, 1, shape) == SDX_OK &&
            sdx_tensor_alloc(ctx, &y, SDX_F32, 1, shape) == SDX_OK && sdx_tensor_alloc(ctx, &y2, SDX_F32, 1, shape) == SDX_OK, "alloc");
    t_seed(500);
    for (int64_t i = 0; i < n; i++) {
        /* low mantissa bits set: not representable in f16 */
        ((float *)a.data)[i] = (float)(1000.0 * t_normal()) + 0x1p-10f;
        ((uint16_t *)b.data)[i] = sdx_f32_to_f16((float)t_normal());
    }
    T_CHECK(sdx__add(ctx, &y, &a, &b) == SDX_OK && sdx__add(ctx, &y2, &b, &a) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int64_t i = 0; i < n; i++) {
        volatile float av = ((float *)a.data)[i], bv = sdx_f16_to_f32(((uint16_t *)b.data)[i]);
        volatile float want = av + bv;
        float demoted = tp_h(tp_h(av) + bv);
        exact += ((float *)y.data)[i] == want;
        exact_swapped += ((float *)y2.data)[i] == want;
        demoted_would_match += demoted == want;
    }
    T_NOTE("F32 + F16 -> F32: %d/%d exact (%d/%d swapped); an f16 computation would match only %d/%d",
           exact, (int)n, exact_swapped, (int)n, demoted_would_match, (int)n);
    sdx_tensor_free(ctx, &a); sdx_tensor_free(ctx, &b); sdx_tensor_free(ctx, &y); sdx_tensor_free(ctx, &y2);
    sdx_destroy(ctx);
    T_CHECK(exact == n && exact_swapped == n, "F32 + F16 not computed exactly in f32 (%d, %d of %d)", exact, exact_swapped, (int)n);
    T_CHECK(demoted_would_match < n / 10, "test data cannot tell f16 from f32 (%d)", demoted_would_match);
    return T_PASS;
}

/* f16 storage saturates instead of producing Inf: an activation just past
 * the f16 range is stored as 65504 (unless SDX_UNSAFE_F16_OVERFLOW). */
static int f16_activation_store_saturates(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_tensor a, y;
    int64_t shape[1] = { 4 };
    float in[4] = { 70000.0f, -1e9f, 65504.0f, 1.0f }, out[4];
    T_CHECK(ctx, "context");
    T_CHECK(sdx_tensor_alloc(ctx, &a, SDX_F32, 1, shape) == SDX_OK && sdx_tensor_alloc(ctx, &y, SDX_F16, 1, shape) == SDX_OK, "alloc");
    memcpy(a.data, in, sizeof in);
    T_CHECK(sdx__copy(ctx, &y, &a) == SDX_OK, "%s", sdx_last_error(ctx));
    tp_load(&y, out);
    sdx_tensor_free(ctx, &a); sdx_tensor_free(ctx, &y);
    sdx_destroy(ctx);
#ifdef SDX_UNSAFE_F16_OVERFLOW
    T_CHECK(isinf(out[0]) && isinf(out[1]), "opt-out build must store Inf");
#else
    T_CHECK(out[0] == 65504.0f && out[1] == -65504.0f && out[2] == 65504.0f && out[3] == 1.0f,
            "got %g %g %g %g", out[0], out[1], out[2], out[3]);
#endif
    return T_PASS;
}

/* Every part's activations stored in f16 or bf16 (sdx_model_desc.
 * activations, what a GPU runs by default), component by component
 * against the f32 goldens of SD 1.x and 2.x (text encoder, two UNet
 * calls, VAE decode): finite, and within the half-precision budget,
 * rel-L2 1e-2 for f16; bf16 keeps 3 fewer bits (a unit roundoff 8 times
 * f16's), so 8e-2 for it. And bf16's error is the roundoff ratio times
 * f16's (measured 7.8-9.0), not more: truncating instead of rounding to
 * nearest would double it. */
static int half_activations_stay_within_the_half_budget(void) {
    static const char *const areas[] = { "sd1", "sd2" };
    static const char *const parts[4] = { "text encoder", "UNet case 0", "UNet case 1", "VAE decode" };
    static const sdx_activations half[] = { SDX_ACT_F16, SDX_ACT_BF16 };
    static const double budget[] = { 1e-2, 8e-2 };
    T_NEED_SHARED(v, "vocab/merges.txt");
    (void)v;
    for (int a = 0; a < 2; a++) {
        double r[2][4];
        for (int h = 0; h < 2; h++) {
            sdx_ctx *ctx = t_ctx();
            sdx_model_desc md;
            sdx_model *m;
            char file[4][96];
            int rc, finite = 0;
            snprintf(file[0], sizeof file[0], "golden/%s/cases/text_encoder.safetensors", areas[a]);
            snprintf(file[1], sizeof file[1], "golden/%s/cases/unet_case0.safetensors", areas[a]);
            snprintf(file[2], sizeof file[2], "golden/%s/cases/unet_case1.safetensors", areas[a]);
            snprintf(file[3], sizeof file[3], "golden/%s/cases/vae_decode_case0.safetensors", areas[a]);
            t_golden_desc(&md, areas[a]);
            md.activations = half[h];
            T_CHECK((m = t_model_with(ctx, &md)) != NULL, "%s: %s", areas[a], sdx_last_error(ctx));
            if ((rc = t_text_golden_case(ctx, m, file[0], &r[h][0], NULL)) != T_PASS) return rc;
            for (int c = 1; c < 3; c++) {
                if ((rc = t_unet_case_keep(ctx, &m->unet, t_shared(file[c]), &r[h][c], &finite, NULL)) != T_PASS) return rc;
                if (!finite) r[h][c] = 1e30;
            }
            if ((rc = t_vae_golden_case(ctx, m, file[3], "decoded", &r[h][3], NULL)) != T_PASS) return rc;
            T_NOTE("%s, %s activations, rel-L2 to the f32 goldens: text encoder %.2e, UNet %.2e and %.2e, VAE decode %.2e",
                   areas[a], h ? "bf16" : "f16", r[h][0], r[h][1], r[h][2], r[h][3]);
            for (int i = 0; i < 4; i++)
                T_CHECK(r[h][i] <= budget[h], "%s, %s activations, %s: rel-L2 %.3g (1e30: not finite)", areas[a],
                        h ? "bf16" : "f16", parts[i], r[h][i]);
            sdx_model_free(m);
            sdx_destroy(ctx);
        }
        for (int i = 0; i < 4; i++)
            T_CHECK(r[1][i] <= 12.0 * r[0][i], "%s, %s: bf16 activations %.3g, %.1f times f16's %.3g", areas[a], parts[i], r[1][i],
                    r[1][i] / r[0][i], r[0][i]);
    }
    return T_PASS;
}

static const t_case precision_cases[] = {
    { "group_norm_half_sum_overflows_f32_stats_do_not", group_norm_half_sum_overflows_f32_stats_do_not },
    { "attention_logits_above_11_overflow_half_exp", attention_logits_above_11_overflow_half_exp },
    { "attention_products_above_65504_f16", attention_products_above_65504_f16 },
    { "attention_products_above_65504_causal_bf16", attention_products_above_65504_causal_bf16 },
    { "vae_conv_stack_accumulation_past_65504", vae_conv_stack_accumulation_past_65504 },
    { "mixed_f32_plus_f16_computes_in_f32", mixed_f32_plus_f16_computes_in_f32 },
    { "f16_activation_store_saturates", f16_activation_store_saturates },
    { "half_activations_stay_within_the_half_budget", half_activations_stay_within_the_half_budget },
    { 0, 0 }
};
SDX_TEST_SUITE(precision, precision_cases)
