/* Suite "rng": the two noise generators against shared/golden/rng (every
 * tensor listed in index.json, draws replayed in order on one generator)
 * and against properties that hold without the golden data. */
#include "test.h"

/* ---- golden replay ---------------------------------------------------- */

typedef struct t_rng_stats {
    int tensors, exact_tensors;
    long values, inexact_values;
    double max_abs_small;   /* n < 16 draws */
    double max_abs_large;   /* n >= 16 draws */
    char worst[128];
} t_rng_stats;

static int64_t t_rng_numel(const sdx__json *shape) {
    int64_t n = 1;
    for (const sdx__json *d = shape ? shape->child : NULL; d; d = d->next) n *= (int64_t)d->num;
    return n;
}

/* Replays entry `e` of index.json on a fresh generator and compares the
 * draw it names with the tensor of the same name in `st`. */
static int t_rng_replay(sdx_ctx *ctx, const sdx__json *e, sdx_rng_kind kind, const sdx_st *st,
                        float *buf, size_t cap, t_rng_stats *stats) {
    const sdx__json *name = sdx__json_get(e, "name"), *draws = sdx__json_get(e, "draws");
    const sdx__json *index = sdx__json_get(e, "draw_index");
    size_t which = index ? (size_t)index->num : 0;
    uint64_t seed;
    sdx_tensor want;
    sdx_rng rng;
    int64_t n = 0;
    double max_abs = 0;
    long inexact = 0;
    T_CHECK(name && name->type == SDX__JSON_STRING && draws && draws->type == SDX__JSON_ARRAY,
            "index.json: entry without name/draws");
    T_CHECK(sdx__json_uint64(sdx__json_get(e, "seed"), &seed), "index.json: %s: bad seed", name->str);
    T_CHECK(which < draws->len, "index.json: %s: draw_index %zu of %zu draws", name->str, which, draws->len);
    sdx_rng_init(&rng, kind, seed);
    for (size_t d = 0; d <= which; d++) {
        n = t_rng_numel(sdx__json_at(draws, d));
        T_CHECK(n > 0 && (size_t)n <= cap, "%s: draw of %lld values", name->str, (long long)n);
        sdx_rng_randn(&rng, buf, (size_t)n);
    }
    T_CHECK(sdx_st_read_f32(ctx, st, name->str, &want) == SDX_OK, "%s", sdx_last_error(ctx));
    if (sdx_tensor_numel(&want) != n) {
        sdx_tensor_free(ctx, &want);
        T_CHECK(0, "%s: golden has %lld values, draw made %lld", name->str,
                (long long)sdx_tensor_numel(&want), (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        float w = ((const float *)want.data)[i];
        double diff = fabs((double)buf[i] - (double)w);
        if (memcmp(&buf[i], &w, 4)) inexact++;
        if (diff > max_abs || diff != diff) max_abs = diff;
    }
    sdx_tensor_free(ctx, &want);
    stats->tensors++;
    stats->values += (long)n;
    stats->inexact_values += inexact;
    if (!inexact) stats->exact_tensors++;
    if (n < 16 && max_abs > stats->max_abs_small) stats->max_abs_small = max_abs;
    if (n >= 16 && max_abs > stats->max_abs_large) {
        stats->max_abs_large = max_abs;
        snprintf(stats->worst, sizeof stats->worst, "%s", name->str);
    }
    return T_PASS;
}

/* Replays every non-raw entry of index.json[list] against `file`. */
static int t_rng_golden(const char *list, sdx_rng_kind kind, const char *file, t_rng_stats *stats) {
    enum { CAP = 1 << 16 };
    T_NEED_SHARED(index_path, "golden/rng/index.json");
    T_NEED_SHARED(st_path, file);
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    sdx_st *st = NULL;
    float *buf = (float *)malloc(CAP * sizeof(float));
    const sdx__json *entries;
    int r = T_PASS;
    memset(stats, 0, sizeof *stats);
    memset(&doc, 0, sizeof doc);
    T_CHECK(ctx && buf, "out of memory");
    if (sdx__json_parse_file(ctx, index_path, &doc) != SDX_OK || sdx_st_open(ctx, st_path, &st) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "%s", sdx_last_error(ctx));
        r = T_FAIL;
    }
    entries = r == T_PASS ? sdx__json_get(doc.root, list) : NULL;
    if (r == T_PASS && (!entries || entries->type != SDX__JSON_ARRAY || entries->len == 0)) {
        snprintf(t_msg, sizeof t_msg, "index.json: no \"%s\" list", list);
        r = T_FAIL;
    }
    for (const sdx__json *e = entries ? entries->child : NULL; e && r == T_PASS; e = e->next)
        if (!sdx__json_get(e, "raw")) r = t_rng_replay(ctx, e, kind, st, buf, CAP, stats);
    sdx_st_close(st);
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    free(buf);
    return r;
}

static void t_rng_note(const char *file, const t_rng_stats *s) {
    T_NOTE("%s: %d tensors, %d bit-exact; %ld of %ld values differ; max abs diff n<16: %.3g, n>=16: %.3g%s%s",
           file, s->tensors, s->exact_tensors, s->inexact_values, s->values, s->max_abs_small,
           s->max_abs_large, s->worst[0] ? " in " : "", s->worst);
}

static int cpu_matches_torch_avx2_kernel_bit_exactly(void) {
    t_rng_stats s;
    int r = t_rng_golden("torch", SDX_RNG_CPU, "golden/rng/torch_cpu.safetensors", &s);
    if (r != T_PASS) return r;
    t_rng_note("torch_cpu", &s);
    T_CHECK(s.tensors > 100, "only %d tensors replayed", s.tensors);
    T_CHECK(s.inexact_values == 0, "%ld of %ld values differ (max abs n<16 %.3g, n>=16 %.3g in %s)",
            s.inexact_values, s.values, s.max_abs_small, s.max_abs_large, s.worst);
    return T_PASS;
}

/* PyTorch's non-vectorised kernel (CPUs without AVX2) uses libm's float
 * log/sin/cos, so for n >= 16 it differs from the AVX2 kernel we follow
 * by a few float ulps (README: up to 2.0e-6). n < 16 is one algorithm. */
static int cpu_within_3e6_of_torch_nonvec_kernel(void) {
    t_rng_stats s;
    int r = t_rng_golden("torch", SDX_RNG_CPU, "golden/rng/torch_cpu_nonvec.safetensors", &s);
    if (r != T_PASS) return r;
    t_rng_note("torch_cpu_nonvec", &s);
    T_CHECK(s.max_abs_small == 0, "n < 16 draws must be bit-exact, max abs diff %.3g", s.max_abs_small);
    T_CHECK(s.max_abs_large <= 3e-6, "n >= 16: max abs diff %.3g in %s", s.max_abs_large, s.worst);
    return T_PASS;
}

static int philox_matches_a1111_bit_exactly(void) {
    t_rng_stats s;
    int r = t_rng_golden("philox", SDX_RNG_CUDA, "golden/rng/philox.safetensors", &s);
    if (r != T_PASS) return r;
    t_rng_note("philox", &s);
    T_CHECK(s.tensors > 30, "only %d tensors replayed", s.tensors);
    T_CHECK(s.inexact_values == 0, "%ld of %ld values differ (max abs %.3g in %s)",
            s.inexact_values, s.values, s.max_abs_large > s.max_abs_small ? s.max_abs_large : s.max_abs_small, s.worst);
    return T_PASS;
}

/* philoxraw_seed{S}_offset{o}_n{n}: I64 [4, n], the four output words for
 * element i of call o. */
static int philox_raw_words_match(void) {
    T_NEED_SHARED(path, "golden/rng/philox.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    int checked = 0;
    T_CHECK(ctx, "out of memory");
    if (sdx_st_open(ctx, path, &st) != SDX_OK) {
        snprintf(t_msg, sizeof t_msg, "%s", sdx_last_error(ctx));
        sdx_destroy(ctx);
        return T_FAIL;
    }
    for (int k = 0; k < sdx_st_count(st); k++) {
        const sdx_tensor *t = sdx_st_get(st, k);
        unsigned long long seed;
        unsigned offset, n;
        const int64_t *w;
        if (sscanf(t->name, "philoxraw_seed%llu_offset%u_n%u", &seed, &offset, &n) != 3) continue;
        w = (const int64_t *)t->data;
        if (t->dtype != SDX_I64 || t->ndim != 2 || t->shape[0] != 4 || t->shape[1] != n) {
            sdx_st_close(st);
            sdx_destroy(ctx);
            T_CHECK(0, "%s: expected I64 [4, %u]", t->name, n);
        }
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
            uint32_t ctr[4] = { offset, 0, i, 0 };
            sdx__philox4x32_10(ctr, key);
            for (int row = 0; row < 4; row++) {
                if ((int64_t)ctr[row] != w[row * (int64_t)n + i]) {
                    long long want = (long long)w[row * (int64_t)n + i];
                    sdx_st_close(st);
                    sdx_destroy(ctx);
                    T_CHECK(0, "%s: word %d of element %u = %u, expected %lld", t->name, row, i, ctr[row], want);
                }
            }
        }
        checked++;
    }
    sdx_st_close(st);
    sdx_destroy(ctx);
    T_CHECK(checked == 3, "found %d philoxraw tensors, expected 3", checked);
    return T_PASS;
}

/* ---- properties that need no golden data ------------------------------ */

/* The C++ standard's check value: the 10000th output of mt19937 seeded
 * with 5489 is 4123659995. */
static int mt19937_matches_standard_check_value(void) {
    sdx_rng rng;
    uint32_t v = 0;
    sdx_rng_init(&rng, SDX_RNG_CPU, 5489);
    for (int i = 0; i < 10000; i++) v = sdx__mt_next(&rng);
    T_CHECK(v == 4123659995u, "10000th output %u", v);
    return T_PASS;
}

/* Known-answer vectors of Philox-4x32-10 (Random123 kat_vectors). */
static int philox_matches_random123_known_answers(void) {
    static const uint32_t kat[3][10] = {
        { 0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u },
        { 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
          0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu },
        { 0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u,
          0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u },
    };
    for (int k = 0; k < 3; k++) {
        uint32_t ctr[4] = { kat[k][0], kat[k][1], kat[k][2], kat[k][3] };
        sdx__philox4x32_10(ctr, &kat[k][4]);
        for (int i = 0; i < 4; i++)
            T_CHECK(ctr[i] == kat[k][6 + i], "vector %d word %d: 0x%08x, expected 0x%08x", k, i, ctr[i], kat[k][6 + i]);
    }
    return T_PASS;
}

static int cpu_seed_uses_low_32_bits_only(void) {
    float a[40], b[40];
    sdx_rng ra, rb;
    sdx_rng_init(&ra, SDX_RNG_CPU, 5);
    sdx_rng_init(&rb, SDX_RNG_CPU, (1ull << 32) + 5);
    sdx_rng_randn(&ra, a, 3); sdx_rng_randn(&ra, a + 3, 37);
    sdx_rng_randn(&rb, b, 3); sdx_rng_randn(&rb, b + 3, 37);
    T_CHECK(!memcmp(a, b, sizeof a), "seed 2^32+5 differs from seed 5");
    return T_PASS;
}

/* n < 16 values come in Box-Muller pairs whose second half is cached in
 * the generator across calls: six draws of one value equal one draw of
 * six, and a draw of n >= 16 in between neither uses nor clears it. */
static int cpu_small_draws_share_cached_pair(void) {
    float one_by_one[6], at_once[6], big[20];
    sdx_rng r1, r2;
    sdx_rng_init(&r1, SDX_RNG_CPU, 77);
    sdx_rng_init(&r2, SDX_RNG_CPU, 77);
    for (int i = 0; i < 6; i++) sdx_rng_randn(&r1, one_by_one + i, 1);
    sdx_rng_randn(&r2, at_once, 6);
    T_CHECK(!memcmp(one_by_one, at_once, sizeof at_once), "randn(1) x 6 != randn(6)");
    sdx_rng_init(&r1, SDX_RNG_CPU, 77);
    sdx_rng_randn(&r1, one_by_one, 1);
    sdx_rng_randn(&r1, big, 20);
    sdx_rng_randn(&r1, one_by_one + 1, 1);
    T_CHECK(!memcmp(one_by_one, at_once, 2 * sizeof(float)), "the cached value did not survive a randn(20)");
    return T_PASS;
}

/* For n % 16 != 0 torch overwrites the last 16 outputs with a fresh
 * block, so randn(17) starts like randn(16) and the rest differs. */
static int cpu_tail_block_is_redrawn(void) {
    float a[16], b[17];
    sdx_rng ra, rb;
    sdx_rng_init(&ra, SDX_RNG_CPU, 9);
    sdx_rng_init(&rb, SDX_RNG_CPU, 9);
    sdx_rng_randn(&ra, a, 16);
    sdx_rng_randn(&rb, b, 17);
    T_CHECK(!memcmp(a, b, sizeof(float)), "randn(17)[0] %g != randn(16)[0] %g", (double)b[0], (double)a[0]);
    T_CHECK(memcmp(a + 1, b + 1, 15 * sizeof(float)), "randn(17)[1..16) should come from a fresh block");
    return T_PASS;
}

/* The kernel's polynomial log and sincos are accurate float functions:
 * checked against double libm over the arguments the kernel uses. */
static int cephes_log_and_sincos_are_accurate(void) {
    double max_log = 0, max_sin = 0, max_cos = 0;
    for (uint32_t k = 1; k <= (1u << 24); k += 37) {
        float u = (float)k * (1.0f / 16777216.0f);
        double err = fabs((double)sdx__cephes_logf(u) - log((double)u));
        double tol = 2.5e-7 * fabs(log((double)u)) + 1e-7;
        if (err / tol > max_log) max_log = err / tol;
        {
            float theta = 6.2831855f * u, s, c;
            sdx__cephes_sincosf(theta, &s, &c);
            if (fabs(s - sin((double)theta)) > max_sin) max_sin = fabs(s - sin((double)theta));
            if (fabs(c - cos((double)theta)) > max_cos) max_cos = fabs(c - cos((double)theta));
        }
    }
    T_NOTE("log: max err / (2.5e-7 |log u| + 1e-7) = %.3f; sin max abs %.3g, cos max abs %.3g",
           max_log, max_sin, max_cos);
    T_CHECK(max_log <= 1, "log error %.3f x tolerance", max_log);
    T_CHECK(max_sin <= 3e-7 && max_cos <= 3e-7, "sin %.3g cos %.3g", max_sin, max_cos);
    return T_PASS;
}

/* A straightforward double-precision Box-Muller on the same uniforms
 * agrees with the n >= 16 path to float32 precision for many seeds. */
static int cpu_large_draws_agree_with_double_box_muller(void) {
    enum { N = 4000 };
    static float got[N];
    static double uni[N];
    double max_abs = 0;
    for (uint64_t seed = 100; seed < 110; seed++) {
        sdx_rng rng;
        size_t n = N - (size_t)(seed % 7) * 3;
        sdx_rng_init(&rng, SDX_RNG_CPU, seed);
        for (size_t i = 0; i < n; i++) uni[i] = (sdx__mt_next(&rng) & 0xffffff) / 16777216.0;
        for (size_t i = 0; i + 16 <= n; i += 16) {
            for (int j = 0; j < 8; j++) {
                double r = sqrt(-2 * log(1 - uni[i + j])), th = 2 * 3.14159265358979323846 * uni[i + j + 8];
                uni[i + j] = r * cos(th);
                uni[i + j + 8] = r * sin(th);
            }
        }
        sdx_rng_init(&rng, SDX_RNG_CPU, seed);
        sdx_rng_randn(&rng, got, n);
        /* the last 16 outputs are redrawn when n % 16 != 0 */
        for (size_t i = 0; i < (n % 16 ? n - 16 : n); i++) {
            double d = fabs(got[i] - uni[i]);
            if (d > max_abs) max_abs = d;
        }
    }
    T_NOTE("max abs diff to double Box-Muller: %.3g", max_abs);
    T_CHECK(max_abs <= 3e-6, "max abs diff %.3g", max_abs);
    return T_PASS;
}

/* Philox Box-Muller against the reference formula evaluated directly in
 * double, and successive calls use successive counters. */
static int philox_box_muller_matches_double_formula(void) {
    const float a = (float)2.3283064e-10, b = (float)(2.3283064e-10 * 6.2831855);
    float got[64];
    sdx_rng rng;
    T_CHECK((double)a == ldexp(1.0, -32), "A is not 2^-32 on this platform");
    sdx_rng_init(&rng, SDX_RNG_CUDA, 0x123456789abull);
    for (uint32_t call = 0; call < 3; call++) {
        sdx_rng_randn(&rng, got, 64);
        for (uint32_t i = 0; i < 64; i++) {
            const uint32_t key[2] = { 0x456789abu, 0x123u };
            uint32_t ctr[4] = { call, 0, i, 0 };
            double u, v, p, q;
            volatile double pv, qv;    /* rounded products, as numpy forms them */
            float want;
            sdx__philox4x32_10(ctr, key);
            pv = (double)ctr[0] * (double)a; p = pv;
            qv = (double)ctr[1] * (double)b; q = qv;
            u = p + (double)(a / 2);
            v = q + (double)(b / 2);
            want = (float)(sqrt(-2.0 * log(u)) * sin(v));
            T_CHECK(!memcmp(&want, &got[i], 4), "call %u element %u: %.9g, expected %.9g", call, i,
                    (double)got[i], (double)want);
        }
    }
    return T_PASS;
}

/* sdx_rng_randn treats every kind but CUDA as CPU; init must seed those
 * too, or an out-of-range kind would silently return all zeros. */
static int unknown_kind_draws_like_cpu(void) {
    sdx_rng a, b;
    float x[40], y[40];
    sdx_rng_init(&a, SDX_RNG_CPU, 1234);
    sdx_rng_init(&b, (sdx_rng_kind)7, 1234);
    sdx_rng_randn(&a, x, 40);
    sdx_rng_randn(&b, y, 40);
    T_CHECK(!memcmp(x, y, sizeof x) && x[0] != 0.0f, "kind 7 differs from CPU: %g vs %g", (double)y[0], (double)x[0]);
    return T_PASS;
}

static const t_case rng_cases[] = {
    { "mt19937_matches_standard_check_value", mt19937_matches_standard_check_value },
    { "unknown_kind_draws_like_cpu", unknown_kind_draws_like_cpu },
    { "philox_matches_random123_known_answers", philox_matches_random123_known_answers },
    { "cpu_seed_uses_low_32_bits_only", cpu_seed_uses_low_32_bits_only },
    { "cpu_small_draws_share_cached_pair", cpu_small_draws_share_cached_pair },
    { "cpu_tail_block_is_redrawn", cpu_tail_block_is_redrawn },
    { "cephes_log_and_sincos_are_accurate", cephes_log_and_sincos_are_accurate },
    { "cpu_large_draws_agree_with_double_box_muller", cpu_large_draws_agree_with_double_box_muller },
    { "philox_box_muller_matches_double_formula", philox_box_muller_matches_double_formula },
    { "cpu_matches_torch_avx2_kernel_bit_exactly", cpu_matches_torch_avx2_kernel_bit_exactly },
    { "cpu_within_3e6_of_torch_nonvec_kernel", cpu_within_3e6_of_torch_nonvec_kernel },
    { "philox_matches_a1111_bit_exactly", philox_matches_a1111_bit_exactly },
    { "philox_raw_words_match", philox_raw_words_match },
    { 0, 0 }
};
SDX_TEST_SUITE(rng, rng_cases)
