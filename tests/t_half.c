/* Suite "half": f16 / bf16 conversions. The scalar functions are checked
 * against an independent double-precision model (ldexp decoding, rounding
 * by nearbyint on an exact scaled value); the SIMD array paths are checked
 * bit-identical to the scalar functions. */
#include "test.h"

static float t_half_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Exact value of a binary16 / bfloat16 code, decoded field by field. */
static double t_f16_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}
static double t_bf16_value(uint16_t h) {
    int e = (h >> 7) & 255, m = h & 127;
    double v = e == 255 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -133) : ldexp(128 + m, e - 134);
    return (h & 0x8000) ? -v : v;
}

/* Reference rounding of a finite or infinite float to a format with
 * `mant_bits` stored mantissa bits, smallest normal exponent `emin` and
 * largest finite value `max_finite`: scale so the last kept bit has
 * weight 1 (exact in double), round half to even, scale back. */
static double t_round_ref(float f, int mant_bits, int emin, double max_finite) {
    double a = fabs((double)f), q, v;
    int k;
    if (isinf(a) || a == 0) return (double)f;
    frexp(a, &k);                      /* a = m * 2^k, m in [0.5, 1) */
    k = k - 1 < emin ? emin : k - 1;   /* exponent of the leading bit */
    q = ldexp(1.0, k - mant_bits);
    v = nearbyint(a / q) * q;
    if (v > max_finite) v = INFINITY;
    return signbit(f) ? -v : v;
}

static int t_same_value(double got, double want) {
    if (isnan(want)) return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

static int f16_to_f32_all_codes_match_exact_decode(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sdx_f16_to_f32((uint16_t)h);
        double want = t_f16_value((uint16_t)h);
        T_CHECK(t_same_value(f, want), "f16 0x%04x -> %a, expected %a", h, (double)f, want);
        if (isnan(want)) {
            uint32_t expect = ((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13);
            T_CHECK(t_f32_bits(f) == expect, "f16 NaN 0x%04x -> 0x%08x, expected quiet 0x%08x",
                    h, t_f32_bits(f), expect);
        }
    }
    return T_PASS;
}

static int f16_round_trip_is_identity(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t back = sdx_f32_to_f16(sdx_f16_to_f32((uint16_t)h));
        int is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
        uint16_t expect = (uint16_t)(is_nan ? h | 0x200u : h);   /* NaNs come back quiet */
        T_CHECK(back == expect, "f16 0x%04x -> f32 -> 0x%04x, expected 0x%04x", h, back, expect);
    }
    return T_PASS;
}

static int bf16_to_f32_all_codes_match_exact_decode(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sdx_bf16_to_f32((uint16_t)h);
        double want = t_bf16_value((uint16_t)h);
        T_CHECK(t_same_value(f, want), "bf16 0x%04x -> %a, expected %a", h, (double)f, want);
        T_CHECK(t_f32_bits(f) == h << 16, "bf16 0x%04x -> 0x%08x: widening must keep the bits", h, t_f32_bits(f));
    }
    return T_PASS;
}

static int bf16_round_trip_is_identity(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t back = sdx_f32_to_bf16(sdx_bf16_to_f32((uint16_t)h));
        int is_nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
        uint16_t expect = (uint16_t)(is_nan ? h | 0x40u : h);
        T_CHECK(back == expect, "bf16 0x%04x -> f32 -> 0x%04x, expected 0x%04x", h, back, expect);
    }
    return T_PASS;
}

typedef struct t_half_case { uint32_t in; uint16_t out; const char *what; } t_half_case;

/* Each row is checked with both signs. */
static int t_check_table(const t_half_case *c, int n, uint16_t (*conv)(float), const char *fmt_name) {
    for (int i = 0; i < n; i++) {
        for (uint32_t negative = 0; negative < 2; negative++) {
            uint32_t sign = negative << 31;
            uint16_t got = conv(t_half_f32(c[i].in | sign));
            uint16_t want = (uint16_t)(c[i].out | (sign >> 16));
            T_CHECK(got == want, "%s(0x%08x = %a, %s) = 0x%04x, expected 0x%04x", fmt_name,
                    c[i].in | sign, (double)t_half_f32(c[i].in | sign), c[i].what, got, want);
        }
    }
    return T_PASS;
}

static int f16_ties_round_to_even(void) {
    static const t_half_case cases[] = {
        { 0x3f801000u, 0x3c00, "1 + 2^-11: tie, 1 is even" },
        { 0x3f803000u, 0x3c02, "1 + 3*2^-11: tie, rounds up to even" },
        { 0x3f801001u, 0x3c01, "just above the tie" },
        { 0x3f800fffu, 0x3c00, "just below the tie" },
        { 0x477fd000u, 0x7bfe, "65488: tie between 65472 (even) and 65504" },
        { 0x38801000u, 0x0400, "2^-14 (1 + 2^-11): tie at the smallest normal" },
        { 0x387fe000u, 0x0400, "1023.5 * 2^-24: tie between largest subnormal and 2^-14" },
        { 0x387fa000u, 0x03fe, "1022.5 * 2^-24: tie, 1022 is even" },
        { 0x33000000u, 0x0000, "2^-25: tie between 0 and the smallest subnormal" },
        { 0x33000001u, 0x0001, "just above 2^-25" },
        { 0x33c00000u, 0x0002, "3 * 2^-25: tie, rounds up to 2" },
        { 0x34200000u, 0x0002, "2.5 * 2^-24: tie, rounds down to 2" },
        { 0x32ffffffu, 0x0000, "just below 2^-25" },
    };
    return t_check_table(cases, SDX__ARRAY_LEN(cases), sdx_f32_to_f16, "f32_to_f16");
}

static int f16_overflow_rounds_to_inf(void) {
    static const t_half_case cases[] = {
        { 0x477fd000u, 0x7bfe, "65488: tie, rounds to 65472" },
        { 0x477fe800u, 0x7bff, "65512: tie-free, nearer 65504" },
        { 0x477fefffu, 0x7bff, "largest float below 65520" },
        { 0x477ff000u, 0x7c00, "65520: tie between 65504 and 65536, rounds to Inf" },
        { 0x477fffffu, 0x7c00, "just below 65536" },
        { 0x47800000u, 0x7c00, "65536" },
        { 0x7f7fffffu, 0x7c00, "FLT_MAX" },
        { 0x7f800000u, 0x7c00, "Inf" },
        { 0x477fe000u, 0x7bff, "65504" },
    };
    return t_check_table(cases, SDX__ARRAY_LEN(cases), sdx_f32_to_f16, "f32_to_f16");
}

static int f16_specials_zero_subnormal_nan(void) {
    static const t_half_case cases[] = {
        { 0x00000000u, 0x0000, "zero keeps its sign" },
        { 0x00000001u, 0x0000, "smallest f32 subnormal" },
        { 0x007fffffu, 0x0000, "largest f32 subnormal" },
        { 0x00800000u, 0x0000, "smallest f32 normal" },
        { 0x33800000u, 0x0001, "2^-24: smallest f16 subnormal" },
        { 0x387fc000u, 0x03ff, "1023 * 2^-24: largest f16 subnormal" },
        { 0x7f800001u, 0x7e00, "signalling NaN, payload only in dropped bits, made quiet" },
        { 0x7fa00000u, 0x7f00, "signalling NaN keeps its top payload bits" },
        { 0x7fc00000u, 0x7e00, "default quiet NaN" },
        { 0x7fffffffu, 0x7fff, "all-ones NaN" },
    };
    return t_check_table(cases, SDX__ARRAY_LEN(cases), sdx_f32_to_f16, "f32_to_f16");
}

static int bf16_ties_overflow_and_specials(void) {
    static const t_half_case cases[] = {
        { 0x3f808000u, 0x3f80, "1 + 2^-8: tie, 1 is even" },
        { 0x3f818000u, 0x3f82, "1 + 3*2^-8: tie, rounds up to even" },
        { 0x3f808001u, 0x3f81, "just above the tie" },
        { 0x3f807fffu, 0x3f80, "just below the tie" },
        { 0x00008000u, 0x0000, "subnormal tie rounds to 0" },
        { 0x00018000u, 0x0002, "subnormal tie rounds up to even" },
        { 0x007f8000u, 0x0080, "largest subnormal tie rounds to the smallest normal" },
        { 0x00000001u, 0x0000, "smallest f32 subnormal" },
        { 0x7f7f7fffu, 0x7f7f, "below the overflow tie" },
        { 0x7f7f8000u, 0x7f80, "tie above the largest bf16 (odd) rounds to Inf" },
        { 0x7f7fffffu, 0x7f80, "FLT_MAX rounds to Inf" },
        { 0x7f800000u, 0x7f80, "Inf" },
        { 0x00000000u, 0x0000, "zero keeps its sign" },
        { 0x7f800001u, 0x7fc0, "signalling NaN, payload only in dropped bits, stays NaN" },
        { 0x7f810000u, 0x7fc1, "signalling NaN keeps its top payload bits" },
        { 0x7fffffffu, 0x7fff, "all-ones NaN is not rounded into the sign" },
    };
    return t_check_table(cases, SDX__ARRAY_LEN(cases), sdx_f32_to_bf16, "f32_to_bf16");
}

static int f16_saturating_store_clamps_to_65504(void) {
#ifdef SDX_UNSAFE_F16_OVERFLOW
    T_SKIP_IF(1, "built with SDX_UNSAFE_F16_OVERFLOW");
#else
    static const t_half_case cases[] = {
        { 0x477fe000u, 0x7bff, "65504" },
        { 0x477fefffu, 0x7bff, "largest float below 65520" },
        { 0x477ff000u, 0x7bff, "65520 would round to Inf" },
        { 0x4e6e6b28u, 0x7bff, "1e9" },
        { 0x7f800000u, 0x7bff, "Inf" },
        { 0x3f801000u, 0x3c00, "in-range values round as usual" },
        { 0x7fc00000u, 0x7e00, "NaN stays NaN" },
    };
    return t_check_table(cases, SDX__ARRAY_LEN(cases), sdx__f32_to_f16_sat, "f32_to_f16_sat");
#endif
}

/* Random bit patterns (every class: NaN, Inf, subnormal, huge) plus
 * random values in the f16 range, against the double-precision model. */
static int t_sweep_against_ref(int is_bf16, int count) {
    int mant = is_bf16 ? 7 : 10, emin = is_bf16 ? -126 : -14;
    double max_finite = is_bf16 ? ldexp(255, 120) : 65504.0;
    t_seed(is_bf16 ? 21 : 20);
    for (int i = 0; i < count; i++) {
        uint32_t u = (uint32_t)(t_uniform() * 4294967296.0);
        float f;
        uint16_t h;
        double got, want;
        if (i & 1) /* bias half the samples to f16 range: exponents 100..145 */
            u = (u & 0x807fffffu) | ((uint32_t)(100 + (u >> 23) % 46) << 23);
        f = t_half_f32(u);
        h = is_bf16 ? sdx_f32_to_bf16(f) : sdx_f32_to_f16(f);
        got = is_bf16 ? t_bf16_value(h) : t_f16_value(h);
        want = isnan(f) ? NAN : t_round_ref(f, mant, emin, max_finite);
        T_CHECK(t_same_value(got, want), "%s(0x%08x = %a) = 0x%04x (%a), expected %a",
                is_bf16 ? "f32_to_bf16" : "f32_to_f16", u, (double)f, h, got, want);
        if (isnan(f)) T_CHECK((h >> 15) == (u >> 31), "NaN 0x%08x lost its sign", u);
    }
    T_NOTE("%d random f32 patterns rounded exactly like the double reference", count);
    return T_PASS;
}

static int f16_random_bits_match_double_reference(void) { return t_sweep_against_ref(0, 2000000); }
static int bf16_random_bits_match_double_reference(void) { return t_sweep_against_ref(1, 2000000); }

/* ---- SIMD paths ------------------------------------------------------- */

typedef void (*t_narrow_fn)(const float *, uint16_t *, size_t);
typedef void (*t_widen_fn)(const uint16_t *, float *, size_t);

#if SDX__HALF_SIMD
#define T_NEED_SIMD() T_SKIP_IF(!sdx__half_simd_available(), "this CPU lacks AVX2/F16C; the scalar path is the only path")
#define T_SIMD(fn) fn
#else
#define T_NEED_SIMD() T_SKIP_IF(1, "no SIMD path in this build (SDX_NO_SIMD, or none for this target)")
#define T_SIMD(fn) 0
#endif

typedef struct t_narrow_pair { const char *name; t_narrow_fn simd, scalar; } t_narrow_pair;
typedef struct t_widen_pair { const char *name; t_widen_fn simd, scalar; } t_widen_pair;

static const t_narrow_pair t_narrow_pairs[] = {
    { "f32_to_f16", T_SIMD(sdx__f32_to_f16_simd), sdx__f32_to_f16_scalar },
    { "f32_to_f16_sat", T_SIMD(sdx__f32_to_f16_sat_simd), sdx__f32_to_f16_sat_scalar },
    { "f32_to_bf16", T_SIMD(sdx__f32_to_bf16_simd), sdx__f32_to_bf16_scalar },
};
static const t_widen_pair t_widen_pairs[] = {
    { "f16_to_f32", T_SIMD(sdx__f16_to_f32_simd), sdx__f16_to_f32_scalar },
    { "bf16_to_f32", T_SIMD(sdx__bf16_to_f32_simd), sdx__bf16_to_f32_scalar },
};

static int t_widen_all_codes(const t_widen_pair *p) {
    static uint16_t in[65536];
    static float a[65536], b[65536];
    for (uint32_t h = 0; h < 65536; h++) in[h] = (uint16_t)h;
    p->simd(in, a, 65536);
    p->scalar(in, b, 65536);
    for (uint32_t h = 0; h < 65536; h++)
        T_CHECK(t_f32_bits(a[h]) == t_f32_bits(b[h]), "%s simd(0x%04x) = 0x%08x, scalar 0x%08x",
                p->name, h, t_f32_bits(a[h]), t_f32_bits(b[h]));
    return T_PASS;
}

static int simd_widening_matches_scalar_on_all_codes(void) {
    T_NEED_SIMD();
    for (int i = 0; i < SDX__ARRAY_LEN(t_widen_pairs); i++)
        if (t_widen_all_codes(&t_widen_pairs[i]) != T_PASS) return T_FAIL;
    return T_PASS;
}

enum { T_BLOCK = 4096 };

/* Converts in[0..n) with both paths of every narrowing pair. */
static int t_narrow_block(const float *in, size_t n) {
    static uint16_t a[T_BLOCK], b[T_BLOCK];
    for (int k = 0; k < SDX__ARRAY_LEN(t_narrow_pairs); k++) {
        const t_narrow_pair *p = &t_narrow_pairs[k];
        p->simd(in, a, n);
        p->scalar(in, b, n);
        for (size_t i = 0; i < n; i++)
            T_CHECK(a[i] == b[i], "%s simd(0x%08x) = 0x%04x, scalar 0x%04x",
                    p->name, t_f32_bits(in[i]), a[i], b[i]);
    }
    return T_PASS;
}

/* The patterns first, first + step, ... (count of them, mod 2^32). */
static int t_narrow_patterns(uint32_t first, uint32_t step, size_t count) {
    static float in[T_BLOCK];
    uint32_t u = first;
    while (count) {
        size_t n = count < T_BLOCK ? count : T_BLOCK;
        for (size_t i = 0; i < n; i++, u += step) in[i] = t_half_f32(u);
        if (t_narrow_block(in, n) != T_PASS) return T_FAIL;
        count -= n;
    }
    return T_PASS;
}

/* Around every rounding boundary: for each sign and exponent, the kept
 * mantissa bits take all (or 1024 spread) values and the dropped bits
 * take the values next to zero, the tie and the top. `dropped` is how
 * many mantissa bits the target format drops at that exponent. */
static int t_narrow_tie_classes(int is_bf16) {
    static float in[T_BLOCK];
    size_t n = 0;
    for (uint32_t sign = 0; sign < 2; sign++) {
        for (uint32_t e = 0; e < 256; e++) {
            int dropped = is_bf16 ? 16 : e >= 113 ? 13 : (126 - (int)e > 23 ? 23 : 126 - (int)e);
            uint32_t half = 1u << (dropped - 1), kept = 1u << (23 - dropped);
            uint32_t kept_step = kept > 1024 ? kept / 1024 : 1;
            for (uint32_t hi = 0; hi < kept; hi += kept_step) {
                uint32_t base = (sign << 31) | (e << 23) | (hi << dropped);
                for (uint32_t d = 0; d < 3; d++) {
                    uint32_t lows[4] = { d, half - 1 - d, half + d, 2 * half - 1 - d };
                    for (int l = 0; l < 4; l++) {
                        in[n++] = t_half_f32(base | (lows[l] & (2 * half - 1)));
                        if (n == T_BLOCK) {
                            if (t_narrow_block(in, n) != T_PASS) return T_FAIL;
                            n = 0;
                        }
                    }
                }
            }
        }
    }
    return t_narrow_block(in, n);
}

/* All 2^32 inputs take ~15 s, too long for every run: by default an odd
 * stride (every low-bit pattern, spread over all exponents) plus every
 * rounding-boundary class. SDX_TEST_EXHAUSTIVE=1 checks all of them. */
static int simd_narrowing_matches_scalar(void) {
    const char *ex = getenv("SDX_TEST_EXHAUSTIVE");
    T_NEED_SIMD();
    if (ex && atoi(ex)) {
        for (uint64_t first = 0; first < (1ull << 32); first += 1u << 24)
            if (t_narrow_patterns((uint32_t)first, 1, 1u << 24) != T_PASS) return T_FAIL;
        T_NOTE("all 2^32 f32 patterns identical (f16, f16_sat, bf16)");
        return T_PASS;
    }
    if (t_narrow_patterns(0x9e3779b9u, 251, 17111111) != T_PASS) return T_FAIL;
    if (t_narrow_tie_classes(0) != T_PASS || t_narrow_tie_classes(1) != T_PASS) return T_FAIL;
    T_NOTE("17.1M strided patterns + rounding-boundary classes identical (set SDX_TEST_EXHAUSTIVE=1 for all 2^32)");
    return T_PASS;
}

/* Lengths around the 8-lane width, pointers off 32-byte alignment, and
 * no write outside [dst, dst + n). */
static int simd_tails_and_unaligned_pointers(void) {
    enum { CAP = 96, GUARD = 0xA5A5 };
    static float fin[CAP + 8], fout_a[CAP + 8], fout_b[CAP + 8];
    static uint16_t hin[CAP + 8], hout_a[CAP + 8], hout_b[CAP + 8];
    T_NEED_SIMD();
    t_seed(3);
    for (int i = 0; i < CAP + 8; i++) {
        fin[i] = (float)(t_normal() * ldexp(1.0, (int)(t_uniform() * 40) - 20));
        hin[i] = (uint16_t)(t_uniform() * 65536);
    }
    fin[5] = INFINITY; fin[9] = -NAN; fin[17] = 70000.0f; fin[30] = -1e-30f; fin[41] = 65520.0f;
    for (size_t n = 0; n <= 67; n++) {
        for (size_t off = 0; off < 8; off++) {
            for (int k = 0; k < SDX__ARRAY_LEN(t_narrow_pairs); k++) {
                const t_narrow_pair *p = &t_narrow_pairs[k];
                for (int i = 0; i < CAP + 8; i++) hout_a[i] = hout_b[i] = GUARD;
                p->simd(fin + off, hout_a + (7 - off), n);
                p->scalar(fin + off, hout_b + (7 - off), n);
                T_CHECK(!memcmp(hout_a, hout_b, sizeof hout_a), "%s n=%zu src+%zu dst+%zu differs (or wrote outside)",
                        p->name, n, off, 7 - off);
            }
            for (int k = 0; k < SDX__ARRAY_LEN(t_widen_pairs); k++) {
                const t_widen_pair *p = &t_widen_pairs[k];
                for (int i = 0; i < CAP + 8; i++) fout_a[i] = fout_b[i] = -7.0f;
                p->simd(hin + off, fout_a + (7 - off), n);
                p->scalar(hin + off, fout_b + (7 - off), n);
                T_CHECK(!memcmp(fout_a, fout_b, sizeof fout_a), "%s n=%zu src+%zu dst+%zu differs (or wrote outside)",
                        p->name, n, off, 7 - off);
            }
        }
    }
    return T_PASS;
}

/* The public array functions (whatever they dispatch to) equal the
 * scalar ones, including below the SIMD width. */
static int public_array_functions_match_scalar(void) {
    enum { N = 1000 };
    static float f[N], fa[N], fb[N];
    static uint16_t h[N], ha[N], hb[N];
    t_seed(4);
    t_fill_normal(f, N, 300.0);
    f[1] = 1e6f; f[2] = -NAN; f[3] = 1e-6f;
    for (size_t n = 0; n <= N; n += n < 20 ? 1 : 97) {
        sdx_f32_to_f16_n(f, ha, n); sdx__f32_to_f16_scalar(f, hb, n);
        T_CHECK(!memcmp(ha, hb, n * 2), "sdx_f32_to_f16_n differs at n=%zu", n);
        sdx__f32_to_f16_sat_n(f, ha, n); sdx__f32_to_f16_sat_scalar(f, hb, n);
        T_CHECK(!memcmp(ha, hb, n * 2), "sdx__f32_to_f16_sat_n differs at n=%zu", n);
        sdx_f32_to_bf16_n(f, ha, n); sdx__f32_to_bf16_scalar(f, hb, n);
        T_CHECK(!memcmp(ha, hb, n * 2), "sdx_f32_to_bf16_n differs at n=%zu", n);
        memcpy(h, ha, n * 2);
        sdx_bf16_to_f32_n(h, fa, n); sdx__bf16_to_f32_scalar(h, fb, n);
        T_CHECK(!memcmp(fa, fb, n * 4), "sdx_bf16_to_f32_n differs at n=%zu", n);
        sdx_f32_to_f16_n(f, h, n);
        sdx_f16_to_f32_n(h, fa, n); sdx__f16_to_f32_scalar(h, fb, n);
        T_CHECK(!memcmp(fa, fb, n * 4), "sdx_f16_to_f32_n differs at n=%zu", n);
    }
    T_NOTE("dispatch: %s", sdx__half_simd_available() ? "AVX2+F16C" : "scalar");
    return T_PASS;
}

/* Programs built with -ffast-math start with FTZ/DAZ set in MXCSR; the
 * SIMD paths must not change results under it. */
static int simd_matches_scalar_under_ftz_daz(void) {
#if SDX__HALF_X86
    unsigned csr = _mm_getcsr();
    int r = T_PASS;
    T_NEED_SIMD();
    _mm_setcsr(csr | 0x8040u);   /* FTZ | DAZ */
    for (int i = 0; i < SDX__ARRAY_LEN(t_widen_pairs) && r == T_PASS; i++) r = t_widen_all_codes(&t_widen_pairs[i]);
    if (r == T_PASS) r = t_narrow_patterns(0x00000000u, 1, 1u << 16);   /* f32 subnormals */
    if (r == T_PASS) r = t_narrow_patterns(0x80000000u, 1, 1u << 16);
    if (r == T_PASS) r = t_narrow_patterns(0x33000000u, 1, 1u << 16);   /* f16 subnormal range */
    _mm_setcsr(csr);
    return r;
#else
    T_SKIP_IF(1, "no SIMD path in this build (SDX_NO_SIMD, or none for this target)");
#endif
}

static const t_case half_cases[] = {
    { "f16_to_f32_all_codes_match_exact_decode", f16_to_f32_all_codes_match_exact_decode },
    { "f16_round_trip_is_identity", f16_round_trip_is_identity },
    { "bf16_to_f32_all_codes_match_exact_decode", bf16_to_f32_all_codes_match_exact_decode },
    { "bf16_round_trip_is_identity", bf16_round_trip_is_identity },
    { "f16_ties_round_to_even", f16_ties_round_to_even },
    { "f16_overflow_rounds_to_inf", f16_overflow_rounds_to_inf },
    { "f16_specials_zero_subnormal_nan", f16_specials_zero_subnormal_nan },
    { "bf16_ties_overflow_and_specials", bf16_ties_overflow_and_specials },
    { "f16_saturating_store_clamps_to_65504", f16_saturating_store_clamps_to_65504 },
    { "f16_random_bits_match_double_reference", f16_random_bits_match_double_reference },
    { "bf16_random_bits_match_double_reference", bf16_random_bits_match_double_reference },
    { "simd_widening_matches_scalar_on_all_codes", simd_widening_matches_scalar_on_all_codes },
    { "simd_narrowing_matches_scalar", simd_narrowing_matches_scalar },
    { "simd_tails_and_unaligned_pointers", simd_tails_and_unaligned_pointers },
    { "public_array_functions_match_scalar", public_array_functions_match_scalar },
    { "simd_matches_scalar_under_ftz_daz", simd_matches_scalar_under_ftz_daz },
    { 0, 0 }
};
SDX_TEST_SUITE(half, half_cases)
