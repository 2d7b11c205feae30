#pragma once
#include "conv.c"

/* ===================================================================== */
/*  Attention                                                              */
/* ===================================================================== */
/* One job is (batch, head, block of QB queries). Keys are visited in
 * blocks of KB with an online softmax (running max m and sum l per query,
 * the output rescaled when the max grows), so memory is O(QB x KB)
 * whatever Nq and Nk are. Both products run on the GEMM micro-kernel.
 * The logits are formed transposed, S^T = K Q^T ([KB][QB]), so that the
 * softmax bookkeeping runs along rows of queries (contiguous, vectorised)
 * and P packs into the micro-kernel's MR-row strips by plain copies. */

#define SDX__QB 96      /* multiple of MR and NR */
#define SDX__KB 96      /* multiple of MR */

typedef struct {
    sdx_tensor *y; const sdx_tensor *q, *k, *v;
    int64_t batch, nq, nk, heads, d, dp, q_blocks;
    int64_t chunk;          /* query blocks per job */
    int64_t kv_keys;        /* keys a job's packed K and V hold: ...          */
    int kv_whole;           /* ... all of nk (packed once per job), or one block */
    int causal;
    float scale;
    sdx__micro_kernels mk;
    int packer;             /* Q's and K's rows: sdx__row_packer */
    int kq, dpc, nvs;       /* the AMX path's layout (sdx__attn_run_amx) */
    sdx_ctx *ctx;
} sdx__attn_args;

/* A job packs K and V once for all its query blocks when the whole head
 * fits this budget (per thread), else block by block for each. */
#define SDX__ATTN_KV_BYTES ((size_t)32 << 20)

static size_t sdx__attn_scratch_floats(int64_t dp, int64_t kv_keys) {
    return (size_t)SDX__QB * (size_t)dp         /* packed Q (NR strips)   */
         + (size_t)kv_keys * (size_t)dp         /* packed K (MR strips)   */
         + (size_t)kv_keys * (size_t)dp         /* packed V (NR strips)   */
         + (size_t)SDX__KB * SDX__QB            /* S^T, then P^T          */
         + (size_t)SDX__QB * SDX__KB            /* packed P               */
         + (size_t)SDX__QB * (size_t)dp         /* O accumulator          */
         + 3 * (size_t)SDX__QB                  /* m, l, corr             */
         + (size_t)dp + 64;                     /* row buffer             */
}

/* Packs rows [r0, r0+n) of head h (zero rows beyond n, zero cols beyond d)
 * into strips of `width` rows over dp columns, times `scale`. With a
 * SIMD packer (sdx__row_packer), the GEMM's, a strip at a time (a strip
 * is dp columns here, not d), the columns past d zeroed and the strip
 * then scaled: the same values as the portable loop's, which reads each
 * row into tmp and scatters it a value at a time. */
static void sdx__attn_pack_rows(float *dst, const sdx_tensor *t, int64_t bat, int64_t len, int64_t h, int64_t d,
                                int64_t dp, int64_t r0, int n, int rows, int width, float scale, float *tmp, int packer) {
    int64_t hd = (int64_t)t->shape[2];
#ifdef SDX__X86
    if (packer) {
        for (int s = 0; s < rows; s += width) {
            float *strip = dst + (int64_t)s * dp;
            const int64_t row0 = bat * len + r0 + s;
            if (packer == 16) sdx__pack_rows_avx512(strip, t->data, t->dtype, hd, row0, width, n - s, width, h * d, (int)d);
            else sdx__pack_rows_avx2(strip, t->data, t->dtype, hd, row0, width, n - s, width, h * d, (int)d);
            memset(strip + d * width, 0, (size_t)((dp - d) * width) * sizeof(float));
            if (scale != 1.0f)
                for (int64_t i = 0; i < d * width; i++) strip[i] *= scale;
        }
        return;
    }
#else
    (void)packer;
#endif
    for (int s = 0; s < rows; s += width)
        for (int r = 0; r < width; r++) {
            float *col = dst + (int64_t)s * dp + r;
            int i = s + r;
            if (i < n) sdx__load_f32(t->data, t->dtype, (bat * len + r0 + i) * hd + h * d, d, tmp);
            for (int64_t kk = 0; kk < dp; kk++) col[kk * width] = (i < n && kk < d) ? tmp[kk] * scale : 0.0f;
        }
}

/* Packs V rows [j0, j0+n) (zero beyond) into NR-column strips over dp:
 * dst[dcol/NR][j][dcol%NR]. */
static void sdx__attn_pack_v(float *dst, const sdx_tensor *v, int64_t bat, int64_t nk, int64_t h, int64_t d,
                             int64_t dp, int64_t j0, int n, float *tmp) {
    int64_t hd = v->shape[2];
    for (int j = 0; j < SDX__KB; j++) {
        if (j < n) {
            sdx__load_f32(v->data, v->dtype, (bat * nk + j0 + j) * hd + h * d, d, tmp);
            for (int64_t c = d; c < dp; c++) tmp[c] = 0.0f;
        } else {
            for (int64_t c = 0; c < dp; c++) tmp[c] = 0.0f;
        }
        for (int64_t c = 0; c < dp; c += SDX__NR)
            memcpy(dst + c * SDX__KB + j * SDX__NR, tmp + c, SDX__NR * sizeof(float));
    }
}

#ifdef SDX__X86
SDX__INTRINSICS_WARNINGS_OFF
/* P^T = exp(S^T - m) and l = l corr + the sum of P^T's rows, in one pass
 * over S^T (the same operations in the same order as the three passes of
 * sdx__attn_softmax_step, so the same bits). */
__attribute__((target("avx512f")))
static void sdx__attn_exp_rows_avx512(float *st, const float *mnew, float *l, const float *corr, int nkv) {
    for (int i = 0; i < SDX__QB; i += 16) {
        const __m512 m = _mm512_loadu_ps(mnew + i);
        __m512 sum = _mm512_mul_ps(_mm512_loadu_ps(l + i), _mm512_loadu_ps(corr + i));
        for (int j = 0; j < nkv; j++) {
            float *p = st + j * SDX__QB + i;
            __m512 e = sdx__exp512(_mm512_sub_ps(_mm512_loadu_ps(p), m));
            _mm512_storeu_ps(p, e);
            sum = _mm512_add_ps(sum, e);
        }
        _mm512_storeu_ps(l + i, sum);
    }
}
SDX__INTRINSICS_WARNINGS_ON
#endif

/* Online-softmax step on S^T [KB][QB]: masks, updates m and l, turns S^T
 * into P^T = exp(S^T - m_new) and returns per-query rescale factors. */
static void sdx__attn_softmax_step(const sdx__attn_args *a, float *SDX__RESTRICT st, float *SDX__RESTRICT m,
                                   float *SDX__RESTRICT l, float *SDX__RESTRICT corr, int64_t i0, int64_t j0, int nkv) {
    float mnew[SDX__QB];    /* a local array: provably unaliased, so vectorised */
    for (int j = 0; j < SDX__KB; j++) {
        float *row = st + j * SDX__QB;
        if (j >= nkv) { for (int i = 0; i < SDX__QB; i++) row[i] = -INFINITY; continue; }
#ifdef SDX_UNSAFE_HALF_SOFTMAX
        for (int i = 0; i < SDX__QB; i++) row[i] = sdx__round_f16(sdx__round_f16(row[i]) * a->scale);
#endif
        if (a->causal) {
            /* key j0+j is visible to queries i0+i >= j0+j */
            int64_t first = j0 + j - i0;
            for (int i = 0; i < SDX__QB && i < first; i++) row[i] = -INFINITY;
        }
    }
    for (int i = 0; i < SDX__QB; i++) mnew[i] = m[i];
    for (int j = 0; j < nkv; j++) {
        const float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) mnew[i] = row[i] > mnew[i] ? row[i] : mnew[i];
    }
    /* a query that has seen only masked keys keeps shift 0: its exps are 0 */
    for (int i = 0; i < SDX__QB; i++) {
        if (mnew[i] == -INFINITY) mnew[i] = 0.0f;
        corr[i] = m[i] - mnew[i];
    }
    sdx__exp_n(corr, SDX__QB);              /* m = -inf (nothing yet) gives 0 */
#if defined(SDX__X86) && !defined(SDX_UNSAFE_HALF_SOFTMAX)
    if (sdx__have_avx512f()) {
        sdx__attn_exp_rows_avx512(st, mnew, l, corr, nkv);
        for (int i = 0; i < SDX__QB; i++) m[i] = mnew[i];
        return;
    }
#endif
    /* rows past nkv are never read again: P V sums over nkv keys */
    for (int j = 0; j < nkv; j++) {
        float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) row[i] -= mnew[i];
    }
    sdx__exp_n(st, (int64_t)nkv * SDX__QB);
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    for (int i = 0; i < SDX__QB; i++) l[i] = sdx__round_f16(l[i] * corr[i]);
    for (int j = 0; j < nkv; j++)
        for (int i = 0; i < SDX__QB; i++) {
            st[j * SDX__QB + i] = sdx__round_f16(st[j * SDX__QB + i]);
            l[i] = sdx__round_f16(l[i] + st[j * SDX__QB + i]);
        }
#else
    for (int i = 0; i < SDX__QB; i++) l[i] *= corr[i];
    for (int j = 0; j < nkv; j++) {
        const float *row = st + j * SDX__QB;
        for (int i = 0; i < SDX__QB; i++) l[i] += row[i];
    }
#endif
    for (int i = 0; i < SDX__QB; i++) m[i] = mnew[i];
}

/* Query block qb of head h of image bat. K and V blocks are packed into
 * pk, pv at their block offset when the job holds the whole head (and
 * only the first time: *packed counts the keys packed so far), at the
 * start otherwise; the values are the same either way. */
static void sdx__attn_block(const sdx__attn_args *a, int64_t bat, int64_t h, int64_t qb, float *pq, float *pk, float *pv,
                            int64_t *packed, float *st) {
    const int64_t dp = a->dp;
    float *pp = st + SDX__KB * SDX__QB;
    float *o = pp + SDX__QB * SDX__KB;
    float *m = o + SDX__QB * dp;
    float *l = m + SDX__QB, *corr = l + SDX__QB;
    float *tmp = corr + SDX__QB;
    int64_t i0 = qb * SDX__QB;
    int nqv = (int)SDX__MIN((int64_t)SDX__QB, a->nq - i0);
    int64_t key_end = a->causal ? SDX__MIN(a->nk, i0 + nqv) : a->nk;
    const int whole = a->kv_whole;
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    const float qscale = 1.0f;      /* logits rounded to f16 before scaling */
#else
    const float qscale = a->scale;
#endif
    sdx__attn_pack_rows(pq, a->q, bat, a->nq, h, a->d, dp, i0, nqv, SDX__QB, SDX__NR, qscale, tmp, a->packer);
    memset(o, 0, (size_t)(SDX__QB * dp) * sizeof(float));
    for (int i = 0; i < SDX__QB; i++) { m[i] = -INFINITY; l[i] = 0; }
    for (int64_t j0 = 0; j0 < key_end; j0 += SDX__KB) {
        int nkv = (int)SDX__MIN((int64_t)SDX__KB, key_end - j0);
        int nkp = (nkv + SDX__MR - 1) / SDX__MR * SDX__MR;
        float *kb = whole ? pk + j0 * dp : pk, *vb = whole ? pv + j0 * dp : pv;
        if (!whole || j0 + nkv > *packed) {
            sdx__attn_pack_rows(kb, a->k, bat, a->nk, h, a->d, dp, j0, nkv, SDX__KB, SDX__MR, 1.0f, tmp, a->packer);
            sdx__attn_pack_v(vb, a->v, bat, a->nk, h, a->d, dp, j0, nkv, tmp);
            *packed = j0 + nkv;
        }
        /* only real keys and head dims: the padding adds exact zeros, so
         * skipping it changes no bit (77 keys of 96, 40 dims of 48) */
        for (int i = 0; i < SDX__QB;) {
            const int two = a->mk.two && i + SDX__NR < SDX__QB;
            for (int j = 0; j < nkp; j += SDX__MR)
                sdx__micro_strips(&a->mk, two, (int)a->d, kb + (int64_t)j * dp, pq + (int64_t)i * dp,
                                  SDX__NR * dp, st + j * SDX__QB + i, SDX__QB, 0);
            i += two ? 2 * SDX__NR : SDX__NR;
        }
        sdx__attn_softmax_step(a, st, m, l, corr, i0, j0, nkv);
        for (int i = 0; i < nqv; i++) {
            float cr = corr[i], *orow = o + i * dp;
            if (cr == 1.0f) continue;
            for (int64_t c = 0; c < dp; c += SDX__NR)
                for (int e = 0; e < SDX__NR; e++) orow[c + e] *= cr;
        }
        /* P^T [KB][QB] -> MR-row strips of P over KB: 6 contiguous floats each */
        for (int s = 0; s < SDX__QB; s += SDX__MR)
            for (int j = 0; j < nkv; j++)
                memcpy(pp + s * SDX__KB + j * SDX__MR, st + j * SDX__QB + s, SDX__MR * sizeof(float));
        for (int64_t c = 0; c < dp;) {
            const int two = a->mk.two && c + SDX__NR < dp;
            for (int s = 0; s < SDX__QB; s += SDX__MR)
                sdx__micro_strips(&a->mk, two, nkv, pp + s * SDX__KB, vb + c * SDX__KB,
                                  SDX__NR * SDX__KB, o + s * dp + c, dp, 1);
            c += two ? 2 * SDX__NR : SDX__NR;
        }
    }
    for (int i = 0; i < nqv; i++) {
        float inv = l[i] > 0 ? 1.0f / l[i] : 0.0f;
        for (int64_t c = 0; c < a->d; c++) tmp[c] = o[i * dp + c] * inv;
        sdx__store_f32(a->y->data, a->y->dtype, (bat * a->nq + i0 + i) * a->heads * a->d + h * a->d, a->d, tmp);
    }
}

/* Job j's image, head and query blocks [qb0, qb1) (both paths). */
static void sdx__attn_job_span(const sdx__attn_args *a, int64_t job, int64_t *bat, int64_t *h, int64_t *qb0, int64_t *qb1) {
    const int64_t chunks = (a->q_blocks + a->chunk - 1) / a->chunk, bh = job / chunks;
    *bat = bh / a->heads;
    *h = bh % a->heads;
    *qb0 = (job % chunks) * a->chunk;
    *qb1 = SDX__MIN(a->q_blocks, *qb0 + a->chunk);
}

/* Query blocks per job (a->chunk: as many as still leave two jobs per
 * thread when K and V are packed once per job, else one); returns the
 * number of jobs. Both paths, once q_blocks and kv_whole are set. */
static int64_t sdx__attn_plan_jobs(sdx_ctx *ctx, sdx__attn_args *a) {
    a->chunk = a->kv_whole ? a->q_blocks * a->batch * a->heads / SDX__MAX((int64_t)1, 2 * (int64_t)sdx_threads(ctx)) : 1;
    a->chunk = SDX__MAX((int64_t)1, SDX__MIN(a->chunk, a->q_blocks));
    return a->batch * a->heads * ((a->q_blocks + a->chunk - 1) / a->chunk);
}

/* A job: `chunk` consecutive query blocks of one head, sharing K and V. */
static void sdx__attn_job(const sdx__attn_args *a, int64_t job, int thread) {
    int64_t bat, h, qb0, qb1, packed = 0;
    float *pq = sdx__scratch_f32(a->ctx, thread);
    float *pk = pq + SDX__QB * a->dp;
    float *pv = pk + a->kv_keys * a->dp;
    float *st = pv + a->kv_keys * a->dp;
    sdx__attn_job_span(a, job, &bat, &h, &qb0, &qb1);
    for (int64_t qb = qb0; qb < qb1; qb++) sdx__attn_block(a, bat, h, qb, pq, pk, pv, &packed, st);
}

static void sdx__attn_range(void *arg, int64_t begin, int64_t end, int thread) {
    for (int64_t j = begin; j < end; j++) sdx__attn_job((const sdx__attn_args *)arg, j, thread);
}

#ifdef SDX__AMX
/* ---- attention on AMX (bf16 mode) -------------------------------------- */
/* In bf16 mode on AMX both products run on tiles at f32's accuracy: each
 * operand x is carried as hi = bf16(x) and lo = bf16(x - hi), and each
 * product as hi hi' + hi lo' + lo hi' (lo lo', under 2^-18 of it, is
 * dropped), so the logits and the output come within about 2^-16 of
 * f32's. Rounding an operand instead would put 2^-9 on every logit, in a
 * component whose budget the rounded weights of the linears already half
 * spend. The three products are one GEMM over a k three times as long: A
 * rows are [hi | hi | lo], B columns [hi | lo | hi]. Per block of 32
 * queries and KB keys: S = Q K^T ([32][KB], by the GEMM's 32 x 32 tile
 * kernel), the online softmax along each query's keys (AVX-512), which
 * writes P as A tiles, and O += P V on tiles into f32. Layouts (words are
 * bf16 pairs along k, as the GEMM's B strips):
 *   Q  two A tile rows of kq tiles (k = 3d, padded to 32 kq)
 *   K  per 32 keys a strip of 16 kq pair rows x 32 keys
 *   V  per block of KB keys nvs strips (32 head dims each) of 3 KB / 2
 *      pair rows; a block of L < KB keys (the last) uses 3 L / 2 of them
 *   P  two A tile rows of kp tiles (k = 3 L)
 *   O  [32][dpc] f32, dpc = d rounded up to 16 (a last 16-wide strip) */

#define SDX__AQB 32     /* queries per tile block: two tile rows           */
#define SDX__AQO 4      /* tile blocks per query block: each key block's K
                           and V are read from cache by 128 queries        */
#define SDX__AKB 128    /* keys per block: a multiple of 32                */

static size_t sdx__attn_amx_k_words(const sdx__attn_args *a) {
    return (size_t)(a->kv_keys / 32) * (size_t)a->kq * SDX__ATILE;
}
static size_t sdx__attn_amx_v_words(const sdx__attn_args *a) {
    return (size_t)(a->kv_keys / SDX__AKB) * (size_t)a->nvs * (3 * SDX__AKB * 16);
}
static size_t sdx__attn_amx_scratch_bytes(const sdx__attn_args *a) {
    return (size_t)SDX__AQO * 2 * a->kq * SDX__ATILE * sizeof(uint16_t)      /* Q tiles      */
         + (sdx__attn_amx_k_words(a) + sdx__attn_amx_v_words(a)) * sizeof(uint32_t)
         + (size_t)SDX__AQB * SDX__AKB * sizeof(float)                         /* S            */
         + (size_t)2 * (3 * SDX__AKB / 32) * SDX__ATILE * sizeof(uint16_t)     /* P tiles      */
         + (size_t)SDX__AQO * SDX__AQB * ((size_t)a->dpc + 3) * sizeof(float)  /* O, m, l, corr */
         + ((size_t)a->d + 64) * sizeof(float)                                 /* one row      */
         + ((size_t)32 * a->kq + 3 * SDX__AKB + 64) * sizeof(uint16_t) + 256;  /* one k row    */
}

/* C[32 x 16] += A B: sdx__amx_32x32's first 16 columns (a last strip of
 * 16 head dims). */
static void sdx__amx_32x16(int kt, const uint16_t *a0, const uint16_t *a1, const uint32_t *b, float *c, int64_t ldc) {
    const int64_t cs = ldc * (int64_t)sizeof(float);
    float *c2 = c + 16 * ldc;
    SDX__TILE_LOAD(0, c, cs); SDX__TILE_LOAD(2, c2, cs);
    for (int t = 0; t < kt; t++, a0 += SDX__ATILE, a1 += SDX__ATILE, b += 16 * SDX__BNR) {
        SDX__TILE_LOAD(4, a0, 64);
        SDX__TILE_LOAD(6, b, SDX__BNR * 4);
        SDX__TILE_DP(0, 4, 6);
        SDX__TILE_LOAD(5, a1, 64);
        SDX__TILE_DP(2, 5, 6);
    }
    SDX__TILE_STORE(0, c, cs); SDX__TILE_STORE(2, c2, cs);
}

/* v[0, n) as three segments of n halves, then zeros up to `total`: hi
 * first, lo in segment lo_seg (2 for A rows, 1 for B columns), hi again
 * in the other. */
static void sdx__attn_split3(uint16_t *out, const float *v, int n, int lo_seg, int total) {
    sdx__f32_to_bf16_sat_n(v, out, (size_t)n);
    sdx__bf16_residual_n(v, out, out + lo_seg * n, (size_t)n);
    memcpy(out + (3 - lo_seg) * n, out, (size_t)n * sizeof(uint16_t));
    memset(out + 3 * n, 0, (size_t)(total - 3 * n) * sizeof(uint16_t));
}

/* Query rows [i0, i0 + n) of head h, times the logit scale, as Q's tiles
 * (two tile rows per 32 queries; zero rows past n up to `rows`). */
static void sdx__attn_amx_pack_q(const sdx__attn_args *a, uint16_t *pq, int64_t bat, int64_t h, int64_t i0, int n,
                                 int rows, float *tmp, uint16_t *row) {
    const int64_t hd = a->q->shape[2];
    for (int r = 0; r < rows; r++) {
        uint16_t *dst = pq + (r / 16) * a->kq * SDX__ATILE + (r % 16) * 32;
        if (r < n) {
            sdx__load_f32(a->q->data, a->q->dtype, (bat * a->nq + i0 + r) * hd + h * a->d, a->d, tmp);
            for (int64_t c = 0; c < a->d; c++) tmp[c] *= a->scale;
            sdx__attn_split3(row, tmp, (int)a->d, 2, 32 * a->kq);
        } else {
            memset(row, 0, (size_t)(32 * a->kq) * sizeof(uint16_t));
        }
        for (int t = 0; t < a->kq; t++) memcpy(dst + t * SDX__ATILE, row + 32 * t, 32 * sizeof(uint16_t));
    }
}

/* Keys [j0, j0 + n) of head h as K strips (zero columns past n). */
static void sdx__attn_amx_pack_k(const sdx__attn_args *a, uint32_t *pk, int64_t bat, int64_t h, int64_t j0, int n,
                                 float *tmp, uint16_t *row) {
    const int64_t hd = a->k->shape[2];
    const int pairs = 16 * a->kq;
    for (int s = 0; s < n; s += 32) {
        uint32_t *strip = pk + (int64_t)(s / 32) * a->kq * SDX__ATILE;
        for (int col = 0; col < 32; col++) {
            if (s + col < n) {
                sdx__load_f32(a->k->data, a->k->dtype, (bat * a->nk + j0 + s + col) * hd + h * a->d, a->d, tmp);
                sdx__attn_split3(row, tmp, (int)a->d, 1, 32 * a->kq);
            } else {
                memset(row, 0, (size_t)(32 * a->kq) * sizeof(uint16_t));
            }
            for (int p = 0; p < pairs; p++) strip[p * 32 + col] = row[2 * p] | (uint32_t)row[2 * p + 1] << 16;
        }
    }
}

/* Values [j0, j0 + n) of head h as one block of V strips: k = 3n, key j
 * at k = j (hi), n + j (lo) and 2n + j (hi). */
static void sdx__attn_amx_pack_v(const sdx__attn_args *a, uint32_t *pv, int64_t bat, int64_t h, int64_t j0, int n,
                                 float *tmp, uint16_t *row) {
    const int64_t hd = a->v->shape[2], strip_words = 3 * SDX__AKB * 16;
    uint16_t *halves = (uint16_t *)pv, *lo = row + a->d;
    memset(pv, 0, (size_t)(a->nvs * strip_words) * sizeof(uint32_t));
    for (int j = 0; j < n; j++) {
        sdx__load_f32(a->v->data, a->v->dtype, (bat * a->nk + j0 + j) * hd + h * a->d, a->d, tmp);
        sdx__f32_to_bf16_sat_n(tmp, row, (size_t)a->d);
        sdx__bf16_residual_n(tmp, row, lo, (size_t)a->d);
        for (int seg = 0; seg < 3; seg++) {
            const uint16_t *src = seg == 1 ? lo : row;
            int k = seg * n + j;
            /* word (pair k / 2, column c) of its strip; half k % 2 (little-endian) */
            uint16_t *dst = halves + 2 * ((int64_t)(k / 2) * 32) + (k & 1);
            for (int64_t c = 0; c < a->d; c++) dst[2 * ((c / 32) * strip_words + c % 32)] = src[c];
        }
    }
}

SDX__INTRINSICS_WARNINGS_OFF

/* The online softmax over one block's logits s ([32][KB], L keys): per
 * query the running max m and sum l are updated, corr gets the factor
 * that rescales what O holds, and P = exp(s - m) goes into P's tiles as
 * [hi | hi | lo] over kp tiles (VCVTNE2PS2BF16 rounds to nearest even;
 * P is in [0, 1], so nothing saturates). Masked keys (causal) have P = 0.
 * A whole block's segments are whole tiles and are stored there
 * directly; a shorter one goes through `row`. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
static void sdx__attn_amx_softmax(const sdx__attn_args *a, const float *s, uint16_t *pp, float *m, float *l, float *corr,
                                  int64_t i0, int64_t j0, int L, int kp, uint16_t *row) {
    const int tiled = L % 32 == 0;
    for (int i = 0; i < SDX__AQB; i++) {
        const float *srow = s + (int64_t)i * SDX__AKB;
        uint16_t *dst = pp + (int64_t)(i / 16) * kp * SDX__ATILE + (i % 16) * 32;
        int seen = L;       /* keys this query sees: all, or up to itself */
        __m512 vmax = _mm512_set1_ps(-INFINITY), vsum = _mm512_setzero_ps(), shift;
        float mx;
        if (a->causal) seen = (int)SDX__MAX((int64_t)0, SDX__MIN((int64_t)L, i0 + i - j0 + 1));
        for (int j = 0; j < seen; j += 16) {
            __mmask16 in = sdx__lanes16(seen - j);
            vmax = _mm512_mask_max_ps(vmax, in, vmax, _mm512_maskz_loadu_ps(in, srow + j));
        }
        mx = _mm512_reduce_max_ps(vmax);
        mx = mx > m[i] ? mx : m[i];
        if (mx == -INFINITY) mx = 0.0f;         /* nothing seen yet: its exps are 0 */
        corr[i] = mx == m[i] ? 1.0f : expf(m[i] - mx);     /* most blocks leave the max */
        m[i] = mx;
        shift = _mm512_set1_ps(mx);
        for (int j = 0; j < L; j += 32) {
            __mmask16 vis0 = sdx__lanes16(seen - j), vis1 = sdx__lanes16(seen - j - 16);
            __m512 p0 = _mm512_maskz_mov_ps(vis0, sdx__exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(vis0, srow + j), shift)));
            __m512 p1 = _mm512_maskz_mov_ps(vis1, sdx__exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(vis1, srow + j + 16), shift)));
            __m512i hi = (__m512i)_mm512_cvtne2ps_pbh(p1, p0);
            __m512 back0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(hi)), 16));
            __m512 back1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(hi, 1)), 16));
            __m512i lo = (__m512i)_mm512_cvtne2ps_pbh(_mm512_sub_ps(p1, back1), _mm512_sub_ps(p0, back0));
            vsum = _mm512_add_ps(vsum, _mm512_add_ps(p0, p1));
            if (tiled) {
                const int t = j / 32, seg = L / 32;
                _mm512_storeu_si512((void *)(dst + (int64_t)t * SDX__ATILE), hi);
                _mm512_storeu_si512((void *)(dst + (int64_t)(seg + t) * SDX__ATILE), hi);
                _mm512_storeu_si512((void *)(dst + (int64_t)(2 * seg + t) * SDX__ATILE), lo);
            } else {
                __mmask32 in = L - j >= 32 ? 0xffffffffu : (1u << (L - j)) - 1u;
                _mm512_mask_storeu_epi16(row + j, in, hi);
                _mm512_mask_storeu_epi16(row + L + j, in, hi);
                _mm512_mask_storeu_epi16(row + 2 * L + j, in, lo);
            }
        }
        l[i] = l[i] * corr[i] + _mm512_reduce_add_ps(vsum);
        if (tiled) continue;
        memset(row + 3 * L, 0, (size_t)(32 * kp - 3 * L) * sizeof(uint16_t));
        for (int t = 0; t < kp; t++) memcpy(dst + (int64_t)t * SDX__ATILE, row + 32 * t, 32 * sizeof(uint16_t));
    }
}

SDX__INTRINSICS_WARNINGS_ON

/* Query block qb (SDX__AQO tile blocks of 32 queries) of head h of image
 * bat: sdx__attn_block's contract, on tiles. Each key block is packed (or
 * found packed) once and visited by every tile block in turn. */
static void sdx__attn_amx_block(const sdx__attn_args *a, int64_t bat, int64_t h, int64_t qb, uint16_t *pq, uint32_t *pk,
                                uint32_t *pv, int64_t *packed, float *s) {
    const int kq = a->kq, dpc = a->dpc, whole = a->kv_whole;
    const int64_t strip_words = 3 * SDX__AKB * 16, q_tiles = 2 * (int64_t)kq * SDX__ATILE;
    uint16_t *pp = (uint16_t *)(s + SDX__AQB * SDX__AKB);
    float *o = (float *)(pp + 2 * (3 * SDX__AKB / 32) * SDX__ATILE);
    float *m = o + SDX__AQO * SDX__AQB * dpc, *l = m + SDX__AQO * SDX__AQB, *corr = l + SDX__AQO * SDX__AQB;
    float *tmp = corr + SDX__AQO * SDX__AQB;
    uint16_t *row = (uint16_t *)(tmp + a->d + 64);
    const int64_t i0 = qb * SDX__AQO * SDX__AQB;
    const int nqv = (int)SDX__MIN((int64_t)SDX__AQO * SDX__AQB, a->nq - i0), nsub = (nqv + SDX__AQB - 1) / SDX__AQB;
    const int64_t key_end = a->causal ? SDX__MIN(a->nk, i0 + nqv) : a->nk;
    sdx__attn_amx_pack_q(a, pq, bat, h, i0, nqv, nsub * SDX__AQB, tmp, row);
    memset(o, 0, (size_t)(nsub * SDX__AQB * dpc) * sizeof(float));
    for (int i = 0; i < nsub * SDX__AQB; i++) { m[i] = -INFINITY; l[i] = 0; }
    for (int64_t j0 = 0; j0 < key_end; j0 += SDX__AKB) {
        const int L = (int)SDX__MIN((int64_t)SDX__AKB, a->nk - j0), kp = (3 * L + 31) / 32;
        uint32_t *kb = whole ? pk + (j0 / 32) * kq * SDX__ATILE : pk;
        uint32_t *vb = whole ? pv + (j0 / SDX__AKB) * a->nvs * strip_words : pv;
        if (!whole || j0 + L > *packed) {
            sdx__attn_amx_pack_k(a, kb, bat, h, j0, L, tmp, row);
            sdx__attn_amx_pack_v(a, vb, bat, h, j0, L, tmp, row);
            *packed = j0 + L;
        }
        for (int sb = 0; sb < nsub; sb++) {
            const uint16_t *q = pq + sb * q_tiles;
            const int r0 = sb * SDX__AQB, rows = SDX__MIN(SDX__AQB, nqv - r0);
            float *ob = o + (int64_t)r0 * dpc;
            if (a->causal && j0 > i0 + r0 + rows - 1) continue;  /* every key of the block is hidden */
            for (int js = 0; js < L; js += 32)
                sdx__amx_32x32(kq, q, q + kq * SDX__ATILE, kb + (int64_t)(js / 32) * kq * SDX__ATILE, 0, 0, s + js,
                               SDX__AKB, 0);
            sdx__attn_amx_softmax(a, s, pp, m + r0, l + r0, corr + r0, i0 + r0, j0, L, kp, row);
            for (int i = 0; i < rows; i++)
                if (corr[r0 + i] != 1.0f)
                    for (int c = 0; c < dpc; c++) ob[i * dpc + c] *= corr[r0 + i];
            for (int cs = 0; cs < a->nvs; cs++) {
                const uint32_t *vs = vb + cs * strip_words;
                if (dpc - 32 * cs >= 32)
                    sdx__amx_32x32(kp, pp, pp + kp * SDX__ATILE, vs, 0, 0, ob + 32 * cs, dpc, 1);
                else
                    sdx__amx_32x16(kp, pp, pp + kp * SDX__ATILE, vs, ob + 32 * cs, dpc);
            }
        }
    }
    for (int i = 0; i < nqv; i++) {
        float inv = l[i] > 0 ? 1.0f / l[i] : 0.0f;
        for (int64_t c = 0; c < a->d; c++) tmp[c] = o[i * dpc + c] * inv;
        sdx__store_f32(a->y->data, a->y->dtype, (bat * a->nq + i0 + i) * a->heads * a->d + h * a->d, a->d, tmp);
    }
}

static void sdx__attn_amx_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__attn_args *a = (const sdx__attn_args *)arg;
    __asm__ __volatile__("ldtilecfg %0" : : "m"(sdx__amx_config) : "memory");
    for (int64_t job = begin; job < end; job++) {
        int64_t bat, h, qb0, qb1, packed = 0;
        uint16_t *pq = (uint16_t *)sdx__scratch_f32(a->ctx, thread);
        uint32_t *pk = (uint32_t *)(pq + SDX__AQO * 2 * a->kq * SDX__ATILE);
        uint32_t *pv = pk + sdx__attn_amx_k_words(a);
        float *s = (float *)(pv + sdx__attn_amx_v_words(a));
        sdx__attn_job_span(a, job, &bat, &h, &qb0, &qb1);
        for (int64_t qb = qb0; qb < qb1; qb++) sdx__attn_amx_block(a, bat, h, qb, pq, pk, pv, &packed, s);
    }
    __asm__ __volatile__("tilerelease" : : : "memory");
}

/* Sets up and runs the tile path for arguments sdx__cpu_attention has
 * checked (a->d, nq, nk > 0). */
static int sdx__attn_run_amx(sdx_ctx *ctx, sdx__attn_args *a) {
    int64_t jobs;
    int rc;
    a->kq = (int)((3 * a->d + 31) / 32);
    a->dpc = (int)((a->d + 15) / 16 * 16);
    a->nvs = (a->dpc + 31) / 32;
    a->q_blocks = (a->nq + SDX__AQO * SDX__AQB - 1) / (SDX__AQO * SDX__AQB);
    a->kv_keys = (a->nk + SDX__AKB - 1) / SDX__AKB * SDX__AKB;
    a->kv_whole = (sdx__attn_amx_k_words(a) + sdx__attn_amx_v_words(a)) * sizeof(uint32_t) <= SDX__ATTN_KV_BYTES &&
                  !sdx__cpu(ctx)->attn_blockwise;
    if (!a->kv_whole) a->kv_keys = SDX__AKB;
    jobs = sdx__attn_plan_jobs(ctx, a);
    if ((rc = sdx__scratch_reserve(ctx, sdx__attn_amx_scratch_bytes(a))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, jobs, sdx__attn_amx_range, a);
    return SDX_OK;
}
#endif /* SDX__AMX */

static int sdx__cpu_attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                          int heads, int causal, sdx_dtype compute) {
    static const char op[] = "attention";
    sdx__attn_args a;
    (void)compute;   /* bf16 mode's attention runs on AMX tiles only */
    int64_t jobs;
    int rc;
    memset(&a, 0, sizeof a);
    a.y = y; a.q = q; a.k = k; a.v = v;
    a.batch = q->shape[0]; a.nq = q->shape[1]; a.nk = k->shape[1];
    a.heads = heads; a.d = q->shape[2] / heads;
    a.dp = (a.d + SDX__NR - 1) / SDX__NR * SDX__NR;
    a.causal = causal;
    a.scale = (float)(1.0 / sqrt((double)a.d));
    a.q_blocks = (a.nq + SDX__QB - 1) / SDX__QB;
    a.ctx = ctx;
    a.mk = sdx__micro_kernels_select();
    a.packer = sdx__row_packer(ctx);
    if (a.nq == 0 || a.batch == 0 || a.d == 0) return SDX_OK;
    if (a.nk == 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: no keys", op);
#if defined(SDX__AMX) && !defined(SDX_UNSAFE_HALF_SOFTMAX)
    if (sdx__amx_computes(ctx, compute)) {
        if ((rc = sdx__attn_run_amx(ctx, &a)) != SDX_OK) return rc;
        return sdx__trace_check(ctx, op, y);
    }
#endif
    /* K and V packed once per job, not per query block (sdx__attn_plan_jobs) */
    a.kv_keys = (a.nk + SDX__KB - 1) / SDX__KB * SDX__KB;
    a.kv_whole = a.nk <= (int64_t)(SDX__ATTN_KV_BYTES / (2 * sizeof(float) * (size_t)a.dp));
    if (sdx__cpu(ctx)->attn_blockwise) a.kv_whole = 0;
    if (!a.kv_whole) a.kv_keys = SDX__KB;
    jobs = sdx__attn_plan_jobs(ctx, &a);
    if ((rc = sdx__scratch_reserve(ctx, sdx__attn_scratch_floats(a.dp, a.kv_keys) * sizeof(float))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, jobs, sdx__attn_range, &a);
    return sdx__trace_check(ctx, op, y);
}
