/* Kernel benchmarks: GFLOP/s of the kernels on the shapes SD 1.5 and SDXL
 * spend their time in, next to a naive reference loop timed in the same
 * run (on a slice of the rows, scaled, to keep `make bench` short).
 *   make bench            all threads
 *   SDX_BENCH_THREADS=1   one thread                                      */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float frand(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((double)(rng >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

/* Random blocks of a quantized type: random bytes, the f16 scales of
 * ggml's layouts (src/core/quant.c) set to small positive values. */
static void fill_blocks(sdx_tensor *t) {
    static const struct { sdx_dtype type; int at[2]; } scales[] = {
        { SDX_Q4_0, { 0, -1 } },  { SDX_Q4_1, { 0, 2 } },  { SDX_Q5_0, { 0, -1 } }, { SDX_Q5_1, { 0, 2 } },
        { SDX_Q8_0, { 0, -1 } },  { SDX_Q2_K, { 80, 82 } }, { SDX_Q3_K, { 108, -1 } }, { SDX_Q4_K, { 0, 2 } },
        { SDX_Q5_K, { 0, 2 } },   { SDX_Q6_K, { 208, -1 } },
    };
    size_t bb, n = sdx_tensor_nbytes(t);
    unsigned char *p = (unsigned char *)t->data;
    sdx_dtype_block(t->dtype, &bb);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(frand() * 128.0f + 128.0f);
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
        for (size_t b = 0; scales[i].type == t->dtype && b < n; b += bb)
            for (int f = 0; f < 2; f++)
                if (scales[i].at[f] >= 0) {
                    /* K types multiply by 6-bit group scales too */
                    uint16_t h = sdx_f32_to_f16(1e-3f * (frand() + 2.0f) / (bb > 40 ? 32.0f : 1.0f));
                    p[b + (size_t)scales[i].at[f]] = (unsigned char)h;
                    p[b + (size_t)scales[i].at[f] + 1] = (unsigned char)(h >> 8);
                }
}

static void fill(sdx_tensor *t, float scale) {
    if (sdx_dtype_block(t->dtype, NULL) > 1) { fill_blocks(t); return; }
    for (int64_t i = 0; i < sdx_tensor_numel(t); i++) {
        float v = frand() * scale;
        if (t->dtype == SDX_F32) ((float *)t->data)[i] = v;
        else if (t->dtype == SDX_F16) ((uint16_t *)t->data)[i] = sdx_f32_to_f16(v);
        else ((uint16_t *)t->data)[i] = sdx_f32_to_bf16(v);
    }
}

static float get(const sdx_tensor *t, int64_t i) {
    if (t->dtype == SDX_F32) return ((const float *)t->data)[i];
    if (t->dtype == SDX_F16) return sdx_f16_to_f32(((const uint16_t *)t->data)[i]);
    return sdx_bf16_to_f32(((const uint16_t *)t->data)[i]);
}

/* CPU seconds of all threads: on a shared machine this is what the work
 * cost, whatever else ran. */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double last_cpu;   /* CPU seconds of the best timed run */

/* Seconds per call: the best of a few runs after a warm-up. */
#define TIME_BEST(secs, reps, stmt) do { \
    double best_ = 1e30; stmt; \
    for (int r_ = 0; r_ < (reps); r_++) { \
        double t0_ = now(), c0_ = cpu_now(); stmt; \
        double t_ = now() - t0_; \
        if (t_ < best_) { best_ = t_; last_cpu = cpu_now() - c0_; } } \
    secs = best_; } while (0)

static double last_cpu_gflops;   /* GFLOP per CPU second of the last report */

/* Returns GFLOP/s (wall clock). */
static double report(const char *name, double flops, double secs, double naive_secs_scaled) {
    last_cpu_gflops = flops / last_cpu * 1e-9;
    printf("%-44s %7.1f GFLOP/s %8.2f ms  %6.1f GFLOP/cpu-s   naive %5.2f GFLOP/s  x%.1f\n", name, flops / secs * 1e-9,
           secs * 1e3, flops / last_cpu * 1e-9, flops / naive_secs_scaled * 1e-9, naive_secs_scaled / secs);
    fflush(stdout);
    return flops / secs * 1e-9;
}

/* bf16 compute rows: the weight is registered as a model's weight slot
 * is, so its bf16 panel is packed once (in the warm-up call) and reused,
 * as in a generation; the result is checked against the naive f32 loop
 * with bf16's tolerance. */
static void compute_begin(sdx_ctx *ctx, sdx_dtype compute, const sdx_tensor *w) {
    if (compute == SDX_BF16) sdx__wcache_add(ctx, w, NULL);
}
static void compute_end(sdx_ctx *ctx, const sdx_tensor *w) {
    sdx__wcache_drop(ctx, w, 1);
}
static const char *compute_name(sdx_ctx *ctx, sdx_dtype compute) {
    if (compute != SDX_BF16) return "";
    return sdx__cpu(ctx)->bf16_amx ? " bf16 AMX" : " bf16";
}
static double compute_tol(sdx_dtype compute) { return compute == SDX_BF16 ? 5e-2 : 2e-3; }

/* Naive y = x w^T on the first `rows` rows (what a plain loop does). */
static double naive_linear(const float *x, const sdx_tensor *w, float *y, int64_t rows, int64_t k, int64_t n) {
    float *wf = (float *)malloc((size_t)(n * k) * sizeof(float));
    double t0;
    sdx__load_f32(w->data, w->dtype, 0, n * k, wf);    /* any dtype, blocks too */
    t0 = now();
    for (int64_t i = 0; i < rows; i++)
        for (int64_t o = 0; o < n; o++) {
            float s = 0;
            for (int64_t j = 0; j < k; j++) s += x[i * k + j] * wf[o * k + j];
            y[i * n + o] = s;
        }
    t0 = now() - t0;
    free(wf);
    return t0;
}

static double bench_linear(sdx_ctx *ctx, int64_t m, int64_t k, int64_t n, sdx_dtype wt, sdx_dtype compute) {
    sdx_tensor x, w, y;
    int64_t xs[2] = { m, k }, ws[2] = { n, k }, ys[2] = { m, n };
    int64_t slice = m < 128 ? m : 128;
    double secs, naive, gflops;
    char name[96];
    float *yn = (float *)malloc((size_t)(slice * n) * sizeof(float));
    double maxerr = 0;
    sdx_tensor_alloc(ctx, &x, SDX_F32, 2, xs);
    sdx_tensor_alloc(ctx, &w, wt, 2, ws);
    sdx_tensor_alloc(ctx, &y, SDX_F32, 2, ys);
    fill(&x, 1.0f); fill(&w, 0.1f);
    compute_begin(ctx, compute, &w);
    TIME_BEST(secs, 3, sdx__linear(ctx, &y, &x, &w, NULL, compute));
    compute_end(ctx, &w);
    naive = naive_linear((const float *)x.data, &w, yn, slice, k, n) * (double)m / (double)slice;
    for (int64_t i = 0; i < slice * n; i++) maxerr = fmax(maxerr, fabs(yn[i] - ((float *)y.data)[i]));
    snprintf(name, sizeof name, "linear [%lldx%lld]x[%lldx%lld]^T w=%s%s", (long long)m, (long long)k, (long long)n,
             (long long)k, sdx_dtype_name(wt), compute_name(ctx, compute));
    gflops = report(name, 2.0 * (double)m * (double)k * (double)n, secs, naive);
    if (maxerr > compute_tol(compute)) printf("   MISMATCH vs naive: %g\n", maxerr);
    free(yn);
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &y);
    return gflops;
}

static double bench_conv(sdx_ctx *ctx, int64_t c, int64_t o, int64_t hw, sdx_dtype wt, sdx_dtype at, sdx_dtype compute) {
    sdx_tensor x, w, y;
    int64_t xs[4] = { 1, c, hw, hw }, ws[4] = { o, c, 3, 3 }, ys[4] = { 1, o, hw, hw };
    int64_t oslice = 8;   /* naive: this many output channels, scaled */
    double secs, naive, t0, maxerr = 0, gflops;
    float *xf, *wf, *yn;
    char name[96];
    sdx_tensor_alloc(ctx, &x, at, 4, xs);
    sdx_tensor_alloc(ctx, &w, wt, 4, ws);
    sdx_tensor_alloc(ctx, &y, SDX_F32, 4, ys);
    fill(&x, 1.0f); fill(&w, 0.05f);
    compute_begin(ctx, compute, &w);
    TIME_BEST(secs, 3, sdx__conv2d(ctx, &y, &x, &w, NULL, 1, 1, compute));
    compute_end(ctx, &w);
    xf = (float *)malloc((size_t)(c * hw * hw) * sizeof(float));
    wf = (float *)malloc((size_t)(oslice * c * 9) * sizeof(float));
    yn = (float *)malloc((size_t)(oslice * hw * hw) * sizeof(float));
    for (int64_t i = 0; i < c * hw * hw; i++) xf[i] = get(&x, i);
    for (int64_t i = 0; i < oslice * c * 9; i++) wf[i] = get(&w, i);
    t0 = now();
    for (int64_t oc = 0; oc < oslice; oc++)
        for (int64_t oy = 0; oy < hw; oy++)
            for (int64_t ox = 0; ox < hw; ox++) {
                float s = 0;
                for (int64_t ic = 0; ic < c; ic++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int64_t iy = oy + ky - 1, ix = ox + kx - 1;
                            if (iy >= 0 && iy < hw && ix >= 0 && ix < hw)
                                s += wf[(oc * c + ic) * 9 + ky * 3 + kx] * xf[(ic * hw + iy) * hw + ix];
                        }
                yn[(oc * hw + oy) * hw + ox] = s;
            }
    naive = (now() - t0) * (double)o / (double)oslice;
    for (int64_t i = 0; i < oslice * hw * hw; i++) maxerr = fmax(maxerr, fabs(yn[i] - ((float *)y.data)[i]));
    snprintf(name, sizeof name, "conv3x3 %lld->%lld at %lldx%lld w=%s x=%s%s", (long long)c, (long long)o,
             (long long)hw, (long long)hw, sdx_dtype_name(wt), sdx_dtype_name(at), compute_name(ctx, compute));
    gflops = report(name, 2.0 * (double)o * (double)c * 9.0 * (double)(hw * hw), secs, naive);
    if (maxerr > compute_tol(compute)) printf("   MISMATCH vs naive: %g\n", maxerr);
    free(xf); free(wf); free(yn);
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &y);
    return gflops;
}

/* Direct (im2col GEMM) against Winograd F(4x4, 3x3) on one 3x3 pad-1
 * layer, in f32 or bf16 mode. GFLOP/s counts the direct convolution's
 * 2*O*C*9*H*W for both, so the ratio is the wall-clock speed-up; rel-L2
 * is each against f32's direct convolution. */
static double bench_rel_l2(const sdx_tensor *a, const sdx_tensor *ref) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < sdx_tensor_numel(ref); i++) {
        double r = ((const float *)ref->data)[i], e = ((const float *)a->data)[i] - r;
        num += e * e; den += r * r;
    }
    return sqrt(num / den);
}

static void bench_wino(sdx_ctx *ctx, int64_t c, int64_t o, int64_t hw, sdx_dtype wt, sdx_dtype at, sdx_dtype compute) {
    sdx_tensor x, w, yr, yd, yw;
    int64_t xs[4] = { 1, c, hw, hw }, ws[4] = { o, c, 3, 3 }, ys[4] = { 1, o, hw, hw };
    double td, cd, tw, cw, flops = 2.0 * (double)o * (double)c * 9.0 * (double)(hw * hw);
    char name[160];
    sdx_tensor_alloc(ctx, &x, at, 4, xs);
    sdx_tensor_alloc(ctx, &w, wt, 4, ws);
    sdx_tensor_alloc(ctx, &yr, SDX_F32, 4, ys);
    sdx_tensor_alloc(ctx, &yd, SDX_F32, 4, ys);
    sdx_tensor_alloc(ctx, &yw, SDX_F32, 4, ys);
    fill(&x, 1.0f); fill(&w, 0.05f);
    sdx__conv2d_direct(ctx, &yr, &x, &w, NULL, 1, 1, 1, SDX_F32);
    TIME_BEST(td, 2, sdx__conv2d_direct(ctx, &yd, &x, &w, NULL, 1, 1, 1, compute));
    cd = last_cpu;
    TIME_BEST(tw, 2, sdx__conv2d_winograd(ctx, &yw, &x, &w, NULL, 1, 1, compute));
    cw = last_cpu;
    snprintf(name, sizeof name, "%sconv3x3 %lld->%lld at %lldx%lld w=%s x=%s", compute == SDX_BF16 ? "bf16 " : "",
             (long long)c, (long long)o, (long long)hw, (long long)hw, sdx_dtype_name(wt), sdx_dtype_name(at));
    printf("%-49s direct %7.1f GFLOP/s %8.2f ms (%5.1f /cpu-s)  winograd %7.1f GFLOP/s %8.2f ms (%5.1f /cpu-s)  x%.2f"
           "  rel_l2 to f32 direct: direct %.2g, winograd %.2g%s\n",
           name, flops / td * 1e-9, td * 1e3, flops / cd * 1e-9, flops / tw * 1e-9, tw * 1e3, flops / cw * 1e-9, td / tw,
           bench_rel_l2(&yd, &yr), bench_rel_l2(&yw, &yr), sdx__wino_pays(ctx, compute, &x, &w, 1, hw, hw) ? "  (chosen)" : "");
    fflush(stdout);
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &w); sdx_tensor_free(ctx, &yr);
    sdx_tensor_free(ctx, &yd); sdx_tensor_free(ctx, &yw);
}

static void bench_attention(sdx_ctx *ctx, int64_t nq, int64_t nk, int64_t heads, int64_t d, sdx_dtype at, sdx_dtype compute) {
    sdx_tensor q, k, v, y;
    int64_t qs[3] = { 1, nq, heads * d }, ks[3] = { 1, nk, heads * d };
    int64_t qslice = 32;  /* naive: this many queries of head 0, scaled */
    double secs, naive, t0, maxerr = 0, flops = 4.0 * (double)nq * (double)nk * (double)d * (double)heads;
    float *logit = (float *)malloc((size_t)nk * sizeof(float)), *out = (float *)malloc((size_t)d * sizeof(float));
    char name[96];
    sdx_tensor_alloc(ctx, &q, at, 3, qs);
    sdx_tensor_alloc(ctx, &k, at, 3, ks);
    sdx_tensor_alloc(ctx, &v, at, 3, ks);
    sdx_tensor_alloc(ctx, &y, SDX_F32, 3, qs);
    fill(&q, 1.0f); fill(&k, 1.0f); fill(&v, 1.0f);
    TIME_BEST(secs, 1, sdx__attention(ctx, &y, &q, &k, &v, (int)heads, 0, compute));
    t0 = now();
    for (int64_t i = 0; i < qslice; i++) {
        float mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < nk; j++) {
            float dot = 0;
            for (int64_t c = 0; c < d; c++) dot += get(&q, i * heads * d + c) * get(&k, j * heads * d + c);
            logit[j] = dot / sqrtf((float)d);
            mx = fmaxf(mx, logit[j]);
        }
        for (int64_t j = 0; j < nk; j++) { logit[j] = expf(logit[j] - mx); s += logit[j]; }
        for (int64_t c = 0; c < d; c++) out[c] = 0;
        for (int64_t j = 0; j < nk; j++)
            for (int64_t c = 0; c < d; c++) out[c] += logit[j] / s * get(&v, j * heads * d + c);
        for (int64_t c = 0; c < d; c++) maxerr = fmax(maxerr, fabs(out[c] - ((float *)y.data)[i * heads * d + c]));
    }
    naive = (now() - t0) * (double)(nq * heads) / (double)qslice;
    snprintf(name, sizeof name, "attention %lldx%lld heads %lld dim %lld %s", (long long)nq, (long long)nk,
             (long long)heads, (long long)d, sdx_dtype_name(at));
    report(name, flops, secs, naive);
    if (maxerr > 1e-3) printf("   MISMATCH vs naive: %g\n", maxerr);
    free(logit); free(out);
    sdx_tensor_free(ctx, &q); sdx_tensor_free(ctx, &k); sdx_tensor_free(ctx, &v); sdx_tensor_free(ctx, &y);
}

#if defined(SDX__X86) && !defined(SDX_NO_SIMD)
/* Nanoseconds per instruction of VFMADD231PS and of VDPBF16PS on zmm, 12
 * independent chains each, one thread, best of 3: the ratio bf16 mode's
 * choice without AMX rests on (sdx__bf16_usable: where VDPBF16PS issues
 * slower than FMA, its hi + lo kernel loses to f32). */
#define BENCH_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define BENCH_DECL(i) __m512 acc##i = _mm512_set1_ps((float)(i) * 1e-9f);
#define BENCH_SUM(i) sum = _mm512_add_ps(sum, acc##i);
__attribute__((target("avx512f"), noinline)) static float bench_fma_chains(long n) {
    __m512 x = _mm512_set1_ps(1.0001f), y = _mm512_set1_ps(0.9999f), sum = _mm512_setzero_ps();
    BENCH_CHAINS(BENCH_DECL)
    for (long k = 0; k < n; k++) {
#define BENCH_FMA(i) acc##i = _mm512_fmadd_ps(x, y, acc##i);
        BENCH_CHAINS(BENCH_FMA)
        __asm__ __volatile__("" : "+v"(x), "+v"(y));
    }
    BENCH_CHAINS(BENCH_SUM)
    return _mm512_reduce_add_ps(sum);
}
__attribute__((target("avx512f,avx512bf16"), noinline)) static float bench_dpbf16_chains(long n) {
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3f80);
    __m512 sum = _mm512_setzero_ps();
    BENCH_CHAINS(BENCH_DECL)
    for (long k = 0; k < n; k++) {
#define BENCH_DOT(i) acc##i = _mm512_dpbf16_ps(acc##i, x, y);
        BENCH_CHAINS(BENCH_DOT)
        __asm__ __volatile__("" : "+v"(x), "+v"(y));
    }
    BENCH_CHAINS(BENCH_SUM)
    return _mm512_reduce_add_ps(sum);
}
static void bench_dot_rates(void) {
    const long n = 2000000;
    double best[2] = { 1e30, 1e30 };
    volatile float sink = 0;
    for (int r = 0; r < 3; r++)
        for (int w = 0; w < 2; w++) {
            double t = now();
            sink += w ? bench_dpbf16_chains(n) : bench_fma_chains(n);
            t = (now() - t) / (12.0 * (double)n) * 1e9;
            if (t < best[w]) best[w] = t;
        }
    (void)sink;
    printf("VDPBF16PS %.3f ns an instruction, VFMADD231PS %.3f ns (12 chains, 1 thread): its hi + lo kernel would run "
           "at about %.2fx f32's products\n", best[1], best[0], best[0] / best[1]);
}
#endif

static int wanted(int argc, char **argv, const char *what) {
    for (int i = 1; i < argc; i++) if (strstr(what, argv[i])) return 1;
    return argc < 2;
}

int main(int argc, char **argv) {
    sdx_desc d;
    sdx_ctx *ctx;
    const char *e = getenv("SDX_BENCH_THREADS");
    memset(&d, 0, sizeof d);
    d.n_threads = e ? atoi(e) : 0;
    ctx = sdx_create(&d);
    if (!ctx) return 1;
    printf("sdx kernel bench, %d threads. GFLOP/cpu-s: per core busy (robust to a loaded machine);\n"
           "naive: plain f32 loops, 1 thread, on a slice of the rows, scaled; x: wall-clock speed-up\n", sdx_threads(ctx));
    for (int wi = 0; wi < 2; wi++) {
        sdx_dtype wt = wi ? SDX_F16 : SDX_F32;
        if (wanted(argc, argv, "linear")) {
            bench_linear(ctx, 4096, 320, 320, wt, SDX_F32);
            bench_linear(ctx, 4096, 320, 1280, wt, SDX_F32);
            bench_linear(ctx, 4096, 1280, 320, wt, SDX_F32);
            bench_linear(ctx, 77, 768, 3072, wt, SDX_F32);
        }
        if (wanted(argc, argv, "conv")) bench_conv(ctx, 320, 320, 64, wt, SDX_F32, SDX_F32);
    }
    if (wanted(argc, argv, "conv")) bench_conv(ctx, 320, 320, 64, SDX_F16, SDX_F16, SDX_F32);
    if (wanted(argc, argv, "linear-sdxl")) {
        /* SDXL's transformer linears at 1024x1024 (batch 2: 2 x 64 x 64 and
         * 2 x 32 x 32 tokens): attention projections, GEGLU in, FF out; f16
         * weights, f32 arithmetic. Three quarters of an SDXL step. */
        static const int64_t lin[][3] = { { 8192, 640, 640 },   { 8192, 640, 5120 },   { 8192, 2560, 640 },
                                          { 2048, 1280, 1280 }, { 2048, 1280, 10240 }, { 2048, 5120, 1280 } };
        for (int i = 0; i < 6; i++) bench_linear(ctx, lin[i][0], lin[i][1], lin[i][2], SDX_F16, SDX_F32);
    }
    if (wanted(argc, argv, "bf16")) {   /* bf16 compute next to f32, f16 weights (SD 1.5 shapes) */
        static const int64_t lin[4][3] = { { 4096, 320, 320 }, { 4096, 320, 1280 }, { 4096, 1280, 320 }, { 77, 768, 3072 } };
        static const int64_t conv[3][3] = { { 320, 320, 64 }, { 640, 640, 32 }, { 1280, 1280, 16 } };
        /* per CPU second: the ratios hold on a machine whose host steals time */
        int usable = sdx__bf16_usable(ctx), amx = usable && sdx__cpu(ctx)->bf16_amx;
        int pays = sdx__cpu(ctx)->bf16_dot_pays;
        double cpu[3] = { 0, 0, 0 };   /* per CPU second: f32, split, rounded */
        if (sdx__cpu(ctx)->bf16_dot) {
            sdx__cpu(ctx)->bf16_dot_pays = 1;   /* the kernel's rows run anyway */
#if defined(SDX__X86) && !defined(SDX_NO_SIMD)
            bench_dot_rates();
#endif
        }
        if (!sdx__bf16_usable(ctx)) printf("bf16 compute: this CPU has no AVX512-BF16 (the rows below compute in f32)\n");
        else printf("bf16 compute: %s; \"rounded\": activations rounded to bf16, not split into hi + lo\n"
                    "(bf16 mode here: %s)\n",
                    amx ? "AMX tiles, then the AVX512-BF16 kernel (AMX off)" : "AVX512-BF16",
                    amx ? "AMX" : usable ? "the AVX512-BF16 kernel"
                    : "f32, as this CPU's VDPBF16PS is slower than its FMAs without AMX (sdx__bf16_usable)");
        for (int i = 0; i < 7; i++) {
            /* modes: f32; bf16 split and rounded on AMX (where there is
             * AMX), then on the AVX512-BF16 kernel */
            for (int mode = 0; mode < 5; mode++) {
                if (mode > 0 && mode < 3 && !amx) continue;
                if (mode > 0 && !sdx__bf16_usable(ctx)) break;
                if (mode > 0) {
                    sdx__cpu(ctx)->bf16_amx = mode < 3;
                    sdx__cpu(ctx)->bf16_round_act = mode == 2 || mode == 4;
                    printf("%s", sdx__cpu(ctx)->bf16_round_act ? "rounded " : "");
                }
                if (i < 4) bench_linear(ctx, lin[i][0], lin[i][1], lin[i][2], SDX_F16, mode ? SDX_BF16 : SDX_F32);
                else bench_conv(ctx, conv[i - 4][0], conv[i - 4][1], conv[i - 4][2], SDX_F16, SDX_F32, mode ? SDX_BF16 : SDX_F32);
                cpu[mode == 0 ? 0 : mode % 2 ? 1 : 2] = last_cpu_gflops;
                if (mode == 0) continue;
                if (mode == 2 || mode == 4)
                    printf("   per CPU second: %s bf16 / f32 x%.2f, rounded x%.2f\n", mode == 2 ? "AMX" : "AVX512-BF16",
                           cpu[1] / cpu[0], cpu[2] / cpu[0]);
            }
        }
        if (sdx__bf16_usable(ctx)) { sdx__cpu(ctx)->bf16_amx = amx; sdx__cpu(ctx)->bf16_round_act = 0; }
        sdx__cpu(ctx)->bf16_dot_pays = pays;
    }
    if (wanted(argc, argv, "quant")) {
        /* linear with block-quantized weights (kept as the file holds them)
         * next to f16 weights in f32 and bf16 mode, SD 1.5 shapes: per type
         * the exact path (sdx_desc.quant_exact: dequantized into the f32 or
         * bf16 GEMM's panels) in both modes, then each int8 kernel this CPU
         * runs (the same arithmetic in both modes), and what the table
         * (sdx__i8_table) runs in each mode; K types only on the exact path
         * and where rows are whole 256s. Ratios per CPU second. */
        static const int64_t lin[4][3] = { { 4096, 320, 320 }, { 4096, 320, 1280 }, { 4096, 1280, 320 }, { 77, 768, 3072 } };
        static const sdx_dtype types[] = { SDX_Q8_0, SDX_Q4_0, SDX_Q5_0, SDX_Q4_1, SDX_Q5_1, SDX_Q4_K, SDX_Q5_K, SDX_Q6_K };
        int bf16 = sdx__bf16_usable(ctx);
        for (int i = 0; i < 4; i++) {
            double f16[2] = { 0, 0 };
            for (int mode = 0; mode < 1 + bf16; mode++) {
                bench_linear(ctx, lin[i][0], lin[i][1], lin[i][2], SDX_F16, mode ? SDX_BF16 : SDX_F32);
                f16[mode] = last_cpu_gflops;
            }
            for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
                if (lin[i][1] % sdx_dtype_block(types[t], NULL)) continue;
                ctx->desc.quant_exact = 1;
                for (int mode = 0; mode < 1 + bf16; mode++) {
                    printf("exact ");
                    bench_linear(ctx, lin[i][0], lin[i][1], lin[i][2], types[t], mode ? SDX_BF16 : SDX_F32);
                    printf("   per CPU second: / F16 in the same mode x%.2f\n", last_cpu_gflops / f16[mode]);
                }
                ctx->desc.quant_exact = 0;
                for (int kernel = SDX__I8_KERNELS - 1; kernel > SDX__I8_SCALAR && sdx__i8_type_of(types[t]); kernel--) {
                    if (!sdx__i8_have(ctx, kernel)) continue;
                    sdx__cpu(ctx)->i8_force = kernel + 1;
                    printf("int8 %s ", sdx__i8_kernel_names[kernel]);
                    bench_linear(ctx, lin[i][0], lin[i][1], lin[i][2], types[t], SDX_F32);
                    sdx__cpu(ctx)->i8_force = 0;
                    printf("   per CPU second: / F16 in f32 mode x%.2f", last_cpu_gflops / f16[0]);
                    if (bf16) printf(", / F16 in bf16 mode x%.2f", last_cpu_gflops / f16[1]);
                    printf("\n");
                }
                for (int mode = 0; mode < 1 + bf16; mode++) {
                    int k = sdx__i8_choose(ctx, types[t], mode ? SDX_BF16 : SDX_F32);
                    printf("   %s in %s mode runs: %s\n", sdx_dtype_name(types[t]), mode ? "bf16" : "f32",
                           k >= 0 ? sdx__i8_kernel_names[k] : "the exact path");
                }
            }
        }
    }
    if (wanted(argc, argv, "winograd")) {
        /* SD 1.5's UNet at 512x512 (64x64 latents, batch 1 here), its VAE
         * decoder; f32 mode, then bf16 mode where it runs on AMX */
        static const int64_t layers[][2] = { { 320, 64 }, { 640, 32 }, { 1280, 16 }, { 1280, 8 },
                                             { 512, 64 }, { 512, 128 }, { 256, 256 }, { 128, 512 } };
        for (int mode = 0; mode < 2; mode++) {
            sdx_dtype compute = mode ? SDX_BF16 : SDX_F32;
            if (mode && !(sdx__bf16_usable(ctx) && sdx__cpu(ctx)->bf16_amx)) break;
            for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
                if (mode || layers[i][1] <= 64)
                    bench_wino(ctx, layers[i][0], layers[i][0], layers[i][1], SDX_F16, SDX_F32, compute);
            bench_wino(ctx, 320, 320, 64, SDX_F16, SDX_F16, compute);
        }
        if (getenv("SDX_BENCH_WINO_SWEEP")) {   /* where Winograd starts to pay */
            static const int64_t sweep[][2] = { { 1280, 32 }, { 640, 24 }, { 640, 16 }, { 320, 32 }, { 320, 16 },
                                                { 128, 32 }, { 128, 16 }, { 64, 16 }, { 32, 32 }, { 32, 16 } };
            for (int mode = 0; mode < 2; mode++) {
                if (mode && !(sdx__bf16_usable(ctx) && sdx__cpu(ctx)->bf16_amx)) break;
                for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++)
                    bench_wino(ctx, sweep[i][0], sweep[i][0], sweep[i][1], SDX_F16, SDX_F32, mode ? SDX_BF16 : SDX_F32);
            }
        }
    }
    if (wanted(argc, argv, "attention")) {
        /* SD 1.5 at 512x512: self- and cross-attention at 64x64, self at
         * 32x32; the VAE's one head; then the same in bf16 mode */
        static const int64_t att[4][4] = { { 4096, 4096, 8, 40 }, { 4096, 77, 8, 40 }, { 1024, 1024, 8, 80 },
                                           { 4096, 4096, 1, 512 } };
        for (int mode = 0; mode < 2; mode++) {
            if (mode && !sdx__bf16_usable(ctx)) break;
            for (int i = 0; i < 4; i++) {
                if (mode) printf("bf16 ");
                bench_attention(ctx, att[i][0], att[i][1], att[i][2], att[i][3], SDX_F32, mode ? SDX_BF16 : SDX_F32);
            }
        }
    }
    sdx_destroy(ctx);
    return 0;
}
