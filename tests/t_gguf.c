/* Suite "gguf": GGUF checkpoints. Every tensor of every reference file
 * (shared/golden/gguf, written by stable-diffusion.cpp) dequantizes to
 * ggml's values; the whole q8_0 model generates; hostile files fail with
 * a reason; quantized matrices stay quantized for linear, other
 * quantized weights reach the model parts as f16. Writing: sdx
 * converts the source tensors of every reference file to sd-cli's
 * bytes, reads back what it writes, and converts from the command
 * line. */
#include "test.h"

/* ---- a GGUF image built in memory ---------------------------------------- */

typedef struct gg_image {
    unsigned char b[4096];
    size_t n;
    /* where the fields hostile cases patch live */
    size_t version, n_tensors, n_kv, key0_len, value0_len, kv_type[3], align_value, array_type, array_len;
    size_t name_len[3], name[3], n_dims[3], ne[3], type[3], offset[3], data;
} gg_image;

static size_t gg_put(gg_image *g, uint64_t v, int bytes) {
    size_t at = g->n;
    for (int i = 0; i < bytes; i++) g->b[g->n++] = (unsigned char)(v >> (8 * i));
    return at;
}

static size_t gg_str(gg_image *g, const char *s) {
    size_t at = gg_put(g, strlen(s), 8);
    memcpy(g->b + g->n, s, strlen(s));
    g->n += strlen(s);
    return at;
}

static void gg_patch(gg_image *g, size_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) g->b[at + i] = (unsigned char)(v >> (8 * i));
}

static void gg_pad(gg_image *g, size_t base, size_t align) {
    while ((g->n - base) % align) g->b[g->n++] = 0;
}

/* Three tensors: a.weight F32 [2, 3] = 0..5; b.weight Q8_0 [2, 32] (two
 * blocks: d 0.5, q = j - 16; d -0.25, q = 3j - 40); c.bias F16 [2] =
 * {1, -2}, last, its padding left off unless `tail`. Metadata: a string,
 * general.alignment (when align is not 0) and an array of 3 u32. */
static void gg_build(gg_image *g, unsigned align, int tail) {
    static const char *names[3] = { "a.weight", "b.weight", "c.bias" };
    static const uint64_t dims[3][2] = { { 3, 2 }, { 32, 2 }, { 2, 0 } };
    static const uint32_t types[3] = { 0, 8, 1 }, n_dims[3] = { 2, 2, 1 };
    size_t a = align ? align : 32, off = 0;
    memset(g, 0, sizeof *g);
    memcpy(g->b, "GGUF", 4);
    g->n = 4;
    g->version = gg_put(g, 3, 4);
    g->n_tensors = gg_put(g, 3, 8);
    g->n_kv = gg_put(g, align ? 3 : 2, 8);
    g->key0_len = gg_str(g, "general.name");
    g->kv_type[0] = gg_put(g, 8, 4);
    g->value0_len = gg_str(g, "tiny");
    if (align) {
        gg_str(g, "general.alignment");
        g->kv_type[1] = gg_put(g, 4, 4);
        g->align_value = gg_put(g, align, 4);
    }
    gg_str(g, "sdx.test.array");
    g->kv_type[2] = gg_put(g, 9, 4);
    g->array_type = gg_put(g, 4, 4);
    g->array_len = gg_put(g, 3, 8);
    for (int i = 1; i <= 3; i++) gg_put(g, (uint64_t)i, 4);
    for (int i = 0; i < 3; i++) {
        static const size_t bytes[3] = { 24, 68, 4 };
        g->name_len[i] = gg_str(g, names[i]);
        g->name[i] = g->name_len[i] + 8;
        g->n_dims[i] = gg_put(g, n_dims[i], 4);
        g->ne[i] = g->n;
        for (uint32_t d = 0; d < n_dims[i]; d++) gg_put(g, dims[i][d], 8);
        g->type[i] = gg_put(g, types[i], 4);
        g->offset[i] = gg_put(g, off, 8);
        off = (off + bytes[i] + a - 1) / a * a;
    }
    gg_pad(g, 0, a);
    g->data = g->n;
    for (int i = 0; i < 6; i++) {
        float v = (float)i;
        uint32_t u;
        memcpy(&u, &v, 4);
        gg_put(g, u, 4);
    }
    gg_pad(g, g->data, a);
    gg_put(g, sdx_f32_to_f16(0.5f), 2);
    for (int j = 0; j < 32; j++) gg_put(g, (uint64_t)(uint8_t)(int8_t)(j - 16), 1);
    gg_put(g, sdx_f32_to_f16(-0.25f), 2);
    for (int j = 0; j < 32; j++) gg_put(g, (uint64_t)(uint8_t)(int8_t)(3 * j - 40), 1);
    gg_pad(g, g->data, a);
    gg_put(g, sdx_f32_to_f16(1.0f), 2);
    gg_put(g, sdx_f32_to_f16(-2.0f), 2);
    if (tail) gg_pad(g, g->data, a);
}

static float gg_b_value(int i) { return i < 32 ? (float)(i - 16) * 0.5f : (float)(3 * (i - 32) - 40) * -0.25f; }

/* Opens an image: the result code, the message in msg. */
static int gg_open(const gg_image *g, size_t size, char *msg, size_t msg_size) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    int rc = sdx_st_open_memory(ctx, g->b, size, "hostile.gguf", &st);
    snprintf(msg, msg_size, "%s", sdx_last_error(ctx));
    if ((rc == SDX_OK) != (st != NULL)) rc = 12345;    /* a handle must come with success only */
    sdx_st_close(st);
    sdx_destroy(ctx);
    return rc;
}

static int built_files_open_with_shapes_values_and_metadata(void) {
    sdx_ctx *ctx = t_ctx();
    for (int variant = 0; variant < 3; variant++) {
        static const unsigned aligns[3] = { 0, 32, 64 };
        gg_image g;
        sdx_st *st = NULL;
        sdx_tensor f;
        const sdx_tensor *a, *b, *c;
        gg_build(&g, aligns[variant], variant == 1);
        T_CHECK(sdx_st_open_memory(ctx, g.b, g.n, "built.gguf", &st) == SDX_OK, "variant %d: %s", variant, sdx_last_error(ctx));
        T_CHECK(sdx_st_count(st) == 3, "count %d", sdx_st_count(st));
        a = sdx_st_find(st, "a.weight");
        b = sdx_st_find(st, "b.weight");
        c = sdx_st_find(st, "c.bias");
        T_CHECK(a && b && c && a == sdx_st_get(st, 0) && c == sdx_st_get(st, 2), "tensors in file order");
        T_CHECK(a->dtype == SDX_F32 && a->ndim == 2 && a->shape[0] == 2 && a->shape[1] == 3, "a: ne reversed into [2, 3]");
        T_CHECK(b->dtype == SDX_Q8_0 && b->ndim == 2 && b->shape[0] == 2 && b->shape[1] == 32 && sdx_tensor_nbytes(b) == 68,
                "b: Q8_0 [2, 32], 68 bytes");
        T_CHECK(c->dtype == SDX_F16 && c->ndim == 1 && c->shape[0] == 2, "c: F16 [2]");
        T_CHECK(!strcmp(sdx_st_meta(st, "general.name"), "tiny"), "string metadata");
        T_CHECK(!strcmp(sdx_st_meta(st, "sdx.test.array"), "[3 uint32 values]"), "array metadata: %s", sdx_st_meta(st, "sdx.test.array"));
        T_CHECK(!aligns[variant] || atoi(sdx_st_meta(st, "general.alignment")) == (int)aligns[variant], "alignment metadata");
        T_CHECK(sdx_st_read_f32(ctx, st, "b.weight", &f) == SDX_OK, "%s", sdx_last_error(ctx));
        for (int i = 0; i < 64; i++)
            T_CHECK(((const float *)f.data)[i] == gg_b_value(i), "b[%d] = %g, want %g", i, ((const float *)f.data)[i], gg_b_value(i));
        sdx_tensor_free(ctx, &f);
        T_CHECK(sdx_st_read_f32(ctx, st, "c.bias", &f) == SDX_OK && ((const float *)f.data)[1] == -2.0f, "c values");
        sdx_tensor_free(ctx, &f);
        sdx_st_close(st);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

typedef struct gg_bad { const char *what; int field; int index; uint64_t value; int bytes; const char *expect; } gg_bad;

enum { GG_VERSION, GG_NT, GG_NKV, GG_KEY0, GG_VALUE0, GG_KVTYPE, GG_ALIGN, GG_ARRTYPE, GG_ARRLEN,
       GG_NAMELEN, GG_NAME, GG_NDIMS, GG_NE0, GG_NE1, GG_TYPE, GG_OFFSET, GG_MAGIC };

static const gg_bad gg_bads[] = {
    { "bad magic", GG_MAGIC, 0, 0x58554747u, 4, "hostile.gguf" },
    { "version 1", GG_VERSION, 0, 1, 4, "version 1" },
    { "version 4", GG_VERSION, 0, 4, 4, "version 4" },
    { "big-endian version", GG_VERSION, 0, 0x03000000u, 4, "big-endian" },
    { "tensor count past the file", GG_NT, 0, UINT64_C(1) << 60, 8, "cannot fit" },
    { "key/value count past the file", GG_NKV, 0, UINT64_MAX, 8, "cannot fit" },
    { "huge key length", GG_KEY0, 0, UINT64_C(1) << 62, 8, "bytes long" },
    { "huge string value length", GG_VALUE0, 0, UINT64_MAX, 8, "bytes long" },
    { "unknown value type", GG_KVTYPE, 0, 13, 4, "value type 13" },
    { "alignment 0", GG_ALIGN, 0, 0, 4, "power of two" },
    { "alignment 48", GG_ALIGN, 0, 48, 4, "power of two" },
    { "alignment not uint32", GG_KVTYPE, 1, 5, 4, "expected uint32" },
    { "nested array", GG_ARRTYPE, 0, 9, 4, "array element type 9" },
    { "array past the file", GG_ARRLEN, 0, UINT64_C(1) << 61, 8, "runs past the end" },
    { "huge tensor name length", GG_NAMELEN, 1, UINT64_C(1) << 63, 8, "bytes long" },
    { "empty tensor name", GG_NAMELEN, 0, 0, 8, "empty" },
    { "NUL in a tensor name", GG_NAME, 1, 0, 1, "NUL" },
    { "duplicate tensor names", GG_NAME, 1, 'a', 1, "appears twice" },
    { "5 dimensions", GG_NDIMS, 0, 5, 4, "5 dimensions" },
    { "negative dimension", GG_NE0, 0, UINT64_C(1) << 63, 8, "overflow" },
    { "dimension product overflows", GG_NE1, 0, UINT64_C(1) << 62, 8, "overflow" },
    { "unknown ggml type", GG_TYPE, 0, 99, 4, "ggml type 99" },
    { "unsupported ggml type", GG_TYPE, 0, 16, 4, "IQ2_XXS" },
    { "rows not whole blocks", GG_NE0, 1, 31, 8, "whole Q8_0 blocks" },
    { "misplaced tensor", GG_OFFSET, 1, 40, 8, "expected 32" },
    { "offset past the end", GG_OFFSET, 2, UINT64_C(1) << 40, 8, "expected 128" },
    { "tensor size past the end", GG_NE0, 2, 1000, 8, "run past the end" },
    { "Q8_0 size past the end", GG_NE1, 1, UINT64_C(1) << 40, 8, "run past the end" },
};

static size_t gg_field(const gg_image *g, int field, int i) {
    switch (field) {
    case GG_VERSION: return g->version;
    case GG_NT: return g->n_tensors;
    case GG_NKV: return g->n_kv;
    case GG_KEY0: return g->key0_len;
    case GG_VALUE0: return g->value0_len;
    case GG_KVTYPE: return g->kv_type[i];
    case GG_ALIGN: return g->align_value;
    case GG_ARRTYPE: return g->array_type;
    case GG_ARRLEN: return g->array_len;
    case GG_NAMELEN: return g->name_len[i];
    case GG_NAME: return g->name[i];
    case GG_NDIMS: return g->n_dims[i];
    case GG_NE0: return g->ne[i];
    case GG_NE1: return g->ne[i] + 8;
    case GG_TYPE: return g->type[i];
    case GG_OFFSET: return g->offset[i];
    default: return 0;
    }
}

static int hostile_files_fail_with_a_reason(void) {
    char msg[1024];
    for (int i = 0; i < (int)(sizeof gg_bads / sizeof gg_bads[0]); i++) {
        const gg_bad *c = &gg_bads[i];
        gg_image g;
        int rc;
        gg_build(&g, 32, 1);
        gg_patch(&g, gg_field(&g, c->field, c->index), c->value, c->bytes);
        rc = gg_open(&g, g.n, msg, sizeof msg);
        T_CHECK(rc == SDX_ERR_FORMAT || (rc == SDX_ERR_UNSUPPORTED && !strcmp(c->expect, "IQ2_XXS")),
                "case '%s': expected a format error, got %d (%s)", c->what, rc, msg);
        T_CHECK(strstr(msg, c->expect) && strstr(msg, "hostile.gguf"), "case '%s': message '%s' lacks '%s' or the file name", c->what,
                msg, c->expect);
    }
    return T_PASS;
}

/* Every prefix of a file fails; the whole file without the last
 * tensor's padding opens (stable-diffusion.cpp writes such files). */
static int truncated_files_fail_and_a_missing_tail_padding_is_accepted(void) {
    char msg[1024];
    gg_image g;
    gg_build(&g, 32, 0);
    T_CHECK(g.n % 32 != 0, "the built file lacks its tail padding");
    T_CHECK(gg_open(&g, g.n, msg, sizeof msg) == SDX_OK, "%s", msg);
    for (size_t n = 0; n < g.n; n++) {
        int rc = gg_open(&g, n, msg, sizeof msg);
        T_CHECK(rc == SDX_ERR_FORMAT && msg[0], "a %zu-byte prefix: %d (%s)", n, rc, msg);
    }
    return T_PASS;
}

/* An empty tensor whose other dims multiply past int64 (shape [2^40,
 * 2^40, 0]): refused, since a count taken in another order overflows. */
static int empty_tensor_with_overflowing_dims_is_refused(void) {
    char msg[1024];
    gg_image g;
    memset(&g, 0, sizeof g);
    memcpy(g.b, "GGUF", 4);
    g.n = 4;
    gg_put(&g, 3, 4);
    gg_put(&g, 1, 8);
    gg_put(&g, 0, 8);
    gg_str(&g, "e.weight");
    gg_put(&g, 3, 4);
    gg_put(&g, 0, 8);
    gg_put(&g, UINT64_C(1) << 40, 8);
    gg_put(&g, UINT64_C(1) << 40, 8);
    gg_put(&g, 0, 4);
    gg_put(&g, 0, 8);
    gg_pad(&g, 0, 32);
    T_CHECK(gg_open(&g, g.n, msg, sizeof msg) == SDX_ERR_FORMAT && strstr(msg, "overflow"), "%s", msg);
    return T_PASS;
}

static int gg_open_built(sdx_ctx *ctx, void *arg) {
    sdx_st *st = NULL;
    int rc = sdx_st_open_memory(ctx, ((const gg_image *)arg)->b, ((const gg_image *)arg)->n, NULL, &st);
    sdx_tensor f;
    if (rc == SDX_OK && (rc = sdx_st_read_f32(ctx, st, "b.weight", &f)) == SDX_OK) sdx_tensor_free(ctx, &f);
    sdx_st_close(st);
    return rc;
}

static int open_fails_cleanly_at_every_allocation(void) {
    static gg_image g;
    t_allocs f = T_ALLOCS_INIT;
    sdx_ctx *ctx = t_allocs_ctx(&f);
    int r;
    gg_build(&g, 32, 1);
    r = t_fail_each_allocation(ctx, &f, gg_open_built, &g, 200);
    sdx_destroy(ctx);
    return r;
}

/* On the CPU, whose linear multiplies blocks, a quantized matrix's slot
 * is a view of the file in its block dtype (no copy); a forced weight
 * type converts; host code's fetch, and a backend without linear_blocks,
 * get f16. Linear takes the blocks (on the exact path, sdx_desc.
 * quant_exact, exact here: small integers times powers of two; the int8
 * path is tests/t_quantmm.c's); a backend without linear_blocks, and any other op,
 * refuse them by name. A patched slot (LoRA) holds f16 until reset to
 * the file. Safetensors cannot hold a block type; a non-finite scale is
 * found by the scan. */
static int quantized_matrices_stay_quantized_where_linear_takes_them(void) {
    sdx_ctx *ctx = t_ctx();
    gg_image g;
    sdx_st *st = NULL;
    sdx__wset w;
    sdx__wslot *sl;
    const sdx_tensor *h, *q;
    sdx_tensor x, y, wt;
    float xv[32], yv[64], vals[64];
    int64_t xs[2] = { 1, 32 }, ys[2] = { 1, 2 };
    int bad = 0, rc;
    gg_build(&g, 32, 1);
    T_CHECK(sdx_st_open_memory(ctx, g.b, g.n, "built.gguf", &st) == SDX_OK, "%s", sdx_last_error(ctx));
    q = sdx_st_find(st, "b.weight");
    /* 0: kept, 1: a forced f32 policy, 2: host code's fetch, 3: a backend without linear_blocks */
    for (int mode = 0; mode < 4; mode++) {
        sdx_dtype want = mode == 0 ? SDX_Q8_0 : mode == 1 ? SDX_F32 : SDX_F16;
        ctx->be.linear_blocks = mode != 3;
        sdx__wset_init(&w, ctx, st, "", SDX__PART_UNET, mode == 1 ? SDX_F32 : SDX_AUTO);
        h = mode == 2 ? sdx__wget_host(&w, sdx__s2(2, 32), "b.weight") : sdx__wget(&w, sdx__s2(2, 32), "b.weight");
        T_CHECK(h && h->dtype == want, "mode %d: slot dtype %s", mode, h ? sdx_dtype_name(h->dtype) : sdx_last_error(ctx));
        T_CHECK((h->data == q->data) == (mode == 0), "mode %d: the slot %s the file", mode, mode ? "views" : "does not view");
        sdx__load_f32(h->data, h->dtype, 0, 64, vals);
        for (int i = 0; i < 64; i++) T_CHECK(vals[i] == gg_b_value(i), "mode %d: slot value %d: %g", mode, i, vals[i]);
        sdx__wset_free(&w);
    }
    ctx->be.linear_blocks = 1;
    ctx->desc.quant_exact = 1;
    for (int i = 0; i < 32; i++) xv[i] = (float)(i % 5 - 2);
    x = sdx__view(SDX_F32, xv, 2, xs);
    y = sdx__view(SDX_F32, yv, 2, ys);
    T_CHECK(sdx__linear(ctx, &y, &x, q, NULL, SDX_F32) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int o = 0; o < 2; o++) {
        float ref = 0;
        for (int i = 0; i < 32; i++) ref += xv[i] * gg_b_value(32 * o + i);
        T_CHECK(yv[o] == ref, "y[%d] = %g, want %g", o, yv[o], ref);
    }
    ctx->be.linear_blocks = 0;
    rc = sdx__linear(ctx, &y, &x, q, NULL, SDX_F32);
    ctx->be.linear_blocks = 1;
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "Q8_0"), "a backend without linear_blocks took Q8_0: %d (%s)", rc,
            sdx_last_error(ctx));
    y.shape[1] = 64;
    rc = sdx__scale(ctx, &y, q, 1.0f);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "Q8_0"), "scale took Q8_0: %d (%s)", rc, sdx_last_error(ctx));
    sdx__wset_init(&w, ctx, st, "", SDX__PART_UNET, SDX_AUTO);
    h = sdx__wget(&w, sdx__s2(2, 32), "b.weight");
    sl = sdx__wset_find(&w, "b.weight");
    T_CHECK(h && sl && h == &sl->t, "%s", sdx_last_error(ctx));
    for (int i = 0; i < 64; i++) vals[i] = gg_b_value(i) + 1.0f;
    T_CHECK(sdx__wslot_set(&w, sl, vals) == SDX_OK && h->dtype == SDX_F16 && h->data != q->data, "patched: %s", sdx_dtype_name(h->dtype));
    for (int i = 0; i < 64; i++) T_CHECK(sdx_f16_to_f32(((const uint16_t *)h->data)[i]) == vals[i], "patched value %d", i);
    T_CHECK(sdx__wslot_reset(&w, sl) == SDX_OK && h->dtype == SDX_Q8_0 && h->data == q->data, "reset: %s", sdx_dtype_name(h->dtype));
    sdx__wset_free(&w);
    wt = *q;
    wt.name = "b.weight";
    rc = sdx_st_write(ctx, "gguf_write_refused.safetensors", &wt, 1, NULL, 0);
    T_CHECK(rc == SDX_ERR_UNSUPPORTED && strstr(sdx_last_error(ctx), "block-quantized"), "write: %d (%s)", rc, sdx_last_error(ctx));
    T_CHECK(!t_file_exists("gguf_write_refused.safetensors"), "no file written");
    T_CHECK(sdx_st_scan_nonfinite(ctx, st, &bad) == SDX_OK && bad == 0, "clean file scans clean");
    sdx_st_close(st);
    gg_patch(&g, g.data + 32 + 34, 0x7c00, 2);                     /* b.weight's second block scale: Inf */
    T_CHECK(sdx_st_open_memory(ctx, g.b, g.n, "built.gguf", &st) == SDX_OK, "%s", sdx_last_error(ctx));
    rc = sdx_st_scan_nonfinite(ctx, st, &bad);
    T_CHECK(rc == SDX_ERR_NONFINITE && bad == 1 && strstr(sdx_last_error(ctx), "b.weight"), "scan: %d, %d bad (%s)", rc, bad,
            sdx_last_error(ctx));
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- the reference files --------------------------------------------------- */

typedef struct gg_stats { int samples, exact; double worst; } gg_stats;

/* One tensor against its JSON entry (see golden/gguf/README.md). */
static int gg_check_tensor(sdx_ctx *ctx, const sdx_st *st, const char *file, const sdx__json *ref, gg_stats *s) {
    const char *name = sdx__json_get(ref, "name")->str, *type = sdx__json_get(ref, "type")->str;
    const sdx__json *shape = sdx__json_get(ref, "shape"), *sm;
    const sdx_tensor *t = sdx_st_find(st, name);
    double sum = 0, sumsq = 0, rsum = sdx__json_get(ref, "sum")->num, rsq = sdx__json_get(ref, "sumsq")->num;
    double absmax = sdx__json_get(ref, "absmax")->num;
    float mn = INFINITY, mx = -INFINITY;
    char want[16];
    sdx_tensor f;
    const float *v;
    int64_t n;
    int d = 0;
    T_CHECK(t, "%s: tensor '%s' missing", file, name);
    for (size_t i = 0; type[i] && i + 1 < sizeof want; i++) want[i] = (char)(type[i] >= 'a' && type[i] <= 'z' ? type[i] - 32 : type[i]), want[i + 1] = 0;
    T_CHECK(!strcmp(sdx_dtype_name(t->dtype), want), "%s: '%s' is %s, want %s", file, name, sdx_dtype_name(t->dtype), want);
    T_CHECK(t->ndim == (int)shape->len, "%s: '%s' has %d dims, want %zu", file, name, t->ndim, shape->len);
    for (const sdx__json *c = shape->child; c; c = c->next, d++)
        T_CHECK(t->shape[d] == (int64_t)c->num, "%s: '%s' dim %d is %lld", file, name, d, (long long)t->shape[d]);
    T_CHECK(sdx_tensor_nbytes(t) == (size_t)sdx__json_get(ref, "nbytes")->num, "%s: '%s' nbytes", file, name);
    T_CHECK((const unsigned char *)t->data - st->data == (ptrdiff_t)sdx__json_get(ref, "offset")->num, "%s: '%s' offset", file, name);
    T_CHECK(sdx_st_read_f32(ctx, st, name, &f) == SDX_OK, "%s", sdx_last_error(ctx));
    v = (const float *)f.data;
    n = sdx_tensor_numel(&f);
    T_CHECK(n == (int64_t)sdx__json_get(ref, "n")->num, "%s: '%s' count", file, name);
    for (int64_t i = 0; i < n; i++) {
        sum += v[i];
        sumsq += (double)v[i] * v[i];
        if (v[i] < mn) mn = v[i];
        if (v[i] > mx) mx = v[i];
    }
    for (sm = sdx__json_get(ref, "samples")->child; sm; sm = sm->next) {
        int64_t at = (int64_t)sm->child->num;
        double r = sm->child->next->num, err = fabs((double)v[at] - r);
        double tol = 1e-6 * fmax(fabs(r), absmax / 4);
        s->samples++;
        s->exact += (float)r == v[at];
        if (err > s->worst) s->worst = err;
        if (err > tol) sdx_tensor_free(ctx, &f);
        T_CHECK(err <= tol, "%s: '%s'[%lld] = %.9g, ggml %.9g", file, name, (long long)at, (double)v[at], r);
    }
    sdx_tensor_free(ctx, &f);
    T_CHECK(fabs(sum - rsum) <= 1e-6 * fmax(fabs(rsum), sqrt(rsq)), "%s: '%s' sum %.17g, ggml %.17g", file, name, sum, rsum);
    T_CHECK(fabs(sumsq - rsq) <= 1e-6 * rsq, "%s: '%s' sum of squares %.17g, ggml %.17g", file, name, sumsq, rsq);
    T_CHECK(fabs(mn - sdx__json_get(ref, "min")->num) <= 1e-6 * absmax && fabs(mx - sdx__json_get(ref, "max")->num) <= 1e-6 * absmax,
            "%s: '%s' min/max", file, name);
    return T_PASS;
}

/* One reference file: header facts, metadata, every tensor. */
static int gg_check_file(sdx_ctx *ctx, const char *dir, const char *gguf, const char *json, gg_stats *s) {
    char path[1024];
    sdx__json_doc doc;
    sdx_st *st = NULL;
    const sdx__json *hdr, *t;
    int r = T_PASS, n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, json);
    T_CHECK(sdx__json_parse_file(ctx, path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    snprintf(path, sizeof path, "%s/%s", dir, gguf);
    if (sdx_st_open(ctx, path, &st) != SDX_OK) {
        sdx__json_free(&doc);
        T_CHECK(0, "%s", sdx_last_error(ctx));
    }
    hdr = sdx__json_get(doc.root, "gguf");
    if (st->data - st->base != (ptrdiff_t)sdx__json_get(hdr, "data_offset")->num ||
        sdx_st_count(st) != (int)sdx__json_get(hdr, "n_tensors")->num || sdx_st_meta_count(st) != (int)sdx__json_get(hdr, "n_kv")->num) {
        snprintf(t_msg, sizeof t_msg, "%s: data offset, tensor or key count differs from ggml's", gguf);
        r = T_FAIL;
    }
    for (t = sdx__json_get(doc.root, "metadata")->child; r == T_PASS && t; t = t->next)
        if (!sdx_st_meta(st, sdx__json_get(t, "key")->str)) {
            snprintf(t_msg, sizeof t_msg, "%s: metadata key '%s' missing", gguf, sdx__json_get(t, "key")->str);
            r = T_FAIL;
        }
    for (t = sdx__json_get(doc.root, "tensors")->child; r == T_PASS && t; t = t->next, n++) r = gg_check_tensor(ctx, st, gguf, t, s);
    if (r == T_PASS) T_NOTE("%s: %d tensors, %d bytes short of the tail padding", gguf, n,
                            (int)sdx__json_get(doc.root, "missing_tail_padding")->num);
    sdx_st_close(st);
    sdx__json_free(&doc);
    return r;
}

/* Runs fn on every file index.json lists (at least 23); *files counts them. */
typedef int (*gg_file_fn)(sdx_ctx *ctx, const char *dir, const sdx__json *file, void *acc);

static int gg_each_file(const char *index, gg_file_fn fn, void *acc, int *files) {
    char dir[1024];
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    int r = T_PASS;
    *files = 0;
    snprintf(dir, sizeof dir, "%s/golden/gguf", t_shared_dir());
    T_CHECK(sdx__json_parse_file(ctx, index, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (const sdx__json *f = sdx__json_get(doc.root, "files")->child; f && r == T_PASS; f = f->next, ++*files) r = fn(ctx, dir, f, acc);
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    if (r != T_PASS) return r;
    T_CHECK(*files >= 23, "index lists %d files", *files);
    return T_PASS;
}

static int gg_check_listed(sdx_ctx *ctx, const char *dir, const sdx__json *f, void *stats) {
    return gg_check_file(ctx, dir, sdx__json_get(f, "gguf")->str, sdx__json_get(f, "json")->str, (gg_stats *)stats);
}

static int every_reference_tensor_dequantizes_to_ggmls_values(void) {
    T_NEED_SHARED(index, "golden/gguf/index.json");
    gg_stats s = { 0, 0, 0 };
    int files, r = gg_each_file(index, gg_check_listed, &s, &files);
    if (r == T_PASS)
        T_NOTE("%d files, %d sampled values, %d bit-identical to ggml, largest difference %.3g", files, s.samples, s.exact, s.worst);
    return r;
}

/* A slice is no model: loading one fails with a reason. */
static int a_slice_is_refused_as_a_model(void) {
    T_NEED_SHARED(path, "golden/gguf/sdxl-mixed.gguf");
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = t_model_file(ctx, path);
    (void)v;
    T_CHECK(!m && strstr(sdx_last_error(ctx), "sdxl-mixed.gguf"), "loaded or no reason: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* The generation the whole-model checks make: "a cat", 64x64, 4 steps, seed 1. */
static void gg_gen_params(sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = "a cat";
    p->width = p->height = 64;
    p->steps = 4;
    p->seed = 1;
}

/* The whole q8_0 model generates (index.json's "generation"), finite,
 * close to the f32 model it was made from. Its f16/q8_0 weights put the
 * latent within a few percent; a wrong layout or shape would not load,
 * or would land far away. */
static int q8_0_model_generates_close_to_the_f32_model(void) {
    T_NEED_SHARED(path, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_model *q, *f;
    sdx_gen_params p;
    sdx_gen_result rq, rf;
    double rel;
    int worst;
    (void)v;
    q = t_model_file(ctx, path);
    T_CHECK(q, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_family(q) == SDX_FAMILY_SD1, "family %s", sdx_family_name(sdx_model_family(q)));
    f = t_model(ctx, "sd1");
    T_CHECK(f, "%s", sdx_last_error(ctx));
    gg_gen_params(&p);
    T_CHECK(sdx_generate(q, &p, &rq) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_generate(f, &p, &rf) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!sdx__has_nonfinite(&rq.latents[0]), "the q8_0 latent is not finite");
    rel = t_rel_l2_f32((const float *)rq.latents[0].data, (const float *)rf.latents[0].data, (size_t)sdx_tensor_numel(&rf.latents[0]));
    worst = t_image_diff(&rq.images[0], &rf.images[0]);
    T_NOTE("sd1-q8_0.gguf against the f32 model, 64x64, 4 steps: latent rel-L2 %.3g, image max diff %d levels", rel, worst);
    sdx_gen_result_free(ctx, &rq);
    sdx_gen_result_free(ctx, &rf);
    sdx_model_free(q);
    sdx_model_free(f);
    sdx_destroy(ctx);
    T_CHECK(rel < 0.05, "latent rel-L2 %.3g", rel);
    return T_PASS;
}

/* Values under key in the shared file rel (0 when not there). */
static int64_t gg_numel(sdx_ctx *ctx, const char *rel, const char *key) {
    sdx_st *st = NULL;
    const sdx_tensor *t;
    int64_t n = 0;
    if (sdx_st_open(ctx, t_shared(rel), &st) != SDX_OK) return 0;
    if ((t = sdx_st_find(st, key)) != NULL) n = sdx_tensor_numel(t);
    sdx_st_close(st);
    return n;
}

/* The q8_0 model's components (text encoder output, two UNet calls, VAE
 * decode) in f32 and bf16 mode, each on the exact path (sdx_desc.
 * quant_exact: the weights as the file holds them, multiplied as f32 or
 * bf16) and as the CPU runs it (int8 where sdx__i8_table says so). The
 * int8 arithmetic must stay within the half-precision budget of the
 * exact one (rel-L2 <= 1e-2 per component). Against the f32 goldens of
 * the model the file was converted from, every rel-L2 is reported: the
 * file's q8_0 weights alone are 1.1e-2 (text) and 1.3-1.7e-2 (UNet)
 * from them on this tiny model, over that budget before any arithmetic.
 * The VAE holds no quantized matrix (its attention is 1x1 convolutions):
 * its error is the f16 rounding of the file's weights. */
static int q8_0_int8_components_stay_within_half_precision_of_exact(void) {
    static const char *const parts[4] = { "text encoder", "UNet case 0", "UNet case 1", "VAE decode" };
    static const char *const files[4] = { "golden/sd1/cases/text_encoder.safetensors", "golden/sd1/cases/unet_case0.safetensors",
                                          "golden/sd1/cases/unet_case1.safetensors", "golden/sd1/cases/vae_decode_case0.safetensors" };
    static const char *const keys[4] = { "context", "out", "out", "decoded" };
    T_NEED_SHARED(file, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(v, "vocab/merges.txt");
    char path[1024];     /* t_shared's buffers are reused */
    double worst = 0;
    (void)v;
    snprintf(path, sizeof path, "%s", file);
    for (int mode = 0; mode < 2; mode++) {
        float *out[2][4] = { { NULL } };
        double r[2][4];
        int kernel = -1;
        for (int exact = 1; exact >= 0; exact--) {
            sdx_ctx *ctx = t_ctx();
            sdx_model_desc md;
            sdx_model *m;
            int rc, finite = 0;
            memset(&md, 0, sizeof md);
            md.checkpoint = path;
            md.compute = mode ? SDX_COMPUTE_BF16 : SDX_COMPUTE_F32;
            ctx->desc.quant_exact = exact;
            if (mode && !sdx__bf16_usable(ctx)) { sdx_destroy(ctx); break; }
            if (!exact) kernel = sdx__i8_choose(ctx, SDX_Q8_0, mode ? SDX_BF16 : SDX_F32);
            m = t_model_with(ctx, &md);
            T_CHECK(m, "%s", sdx_last_error(ctx));
            if ((rc = t_text_golden_case(ctx, m, files[0], &r[exact][0], &out[exact][0])) != T_PASS) return rc;
            for (int c = 1; c < 3; c++) {
                if ((rc = t_unet_case_keep(ctx, &m->unet, t_shared(files[c]), &r[exact][c], &finite, &out[exact][c])) != T_PASS) return rc;
                T_CHECK(finite, "%s: not finite", parts[c]);
            }
            if ((rc = t_vae_golden_case(ctx, m, files[3], keys[3], &r[exact][3], &out[exact][3])) != T_PASS) return rc;
            T_NOTE("sd1-q8_0.gguf, %s mode, %s: rel-L2 to the f32 goldens: text encoder %.3g, UNet %.3g and %.3g, VAE decode %.3g",
                   mode ? "bf16" : "f32", exact ? "exact" : kernel >= 0 ? sdx__i8_kernel_names[kernel] : "dequantizing (the table)",
                   r[exact][0], r[exact][1], r[exact][2], r[exact][3]);
            for (int i = 0; i < 4; i++) T_CHECK(out[exact][i] && r[exact][i] < 1e30, "%s: not finite", parts[i]);
            sdx_model_free(m);
            sdx_destroy(ctx);
        }
        if (out[0][0]) {
            sdx_ctx *ctx = t_ctx();
            double d[4];
            for (int i = 0; i < 4; i++) {
                int64_t n = gg_numel(ctx, files[i], keys[i]);
                d[i] = t_rel_l2_f32(out[0][i], out[1][i], (size_t)n);
                T_CHECK(n > 0 && d[i] <= 1e-2, "%s mode, %s: int8 against exact rel-L2 %.3g > 1e-2", mode ? "bf16" : "f32", parts[i], d[i]);
                worst = fmax(worst, d[i]);
            }
            T_NOTE("  int8 against exact: text encoder %.3g, UNet %.3g and %.3g, VAE decode %.3g", d[0], d[1], d[2], d[3]);
            sdx_destroy(ctx);
        }
        for (int e = 0; e < 2; e++)
            for (int i = 0; i < 4; i++) free(out[e][i]);
    }
    (void)worst;
    return T_PASS;
}

/* ---- writing: sdx's converter against the files sd-cli wrote -------------- */

static unsigned char *gg_slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long len;
    *n = 0;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = (unsigned char *)malloc((size_t)len + 1)))
        *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

/* Byte `at` of the GGUF file at path, in words: which tensor, which block. */
static void gg_where(sdx_ctx *ctx, const char *path, size_t at, char *buf, size_t size) {
    sdx_st *st = NULL;
    snprintf(buf, size, "the header");
    if (sdx_st_open(ctx, path, &st) != SDX_OK) return;
    for (int i = 0; i < sdx_st_count(st); i++) {
        const sdx_tensor *t = sdx_st_get(st, i);
        size_t off = (size_t)((const unsigned char *)t->data - st->base), bytes;
        sdx_dtype_block(t->dtype, &bytes);
        if (at >= off && at < off + sdx_tensor_nbytes(t))
            snprintf(buf, size, "tensor '%s' (%s), block %zu, byte %zu", t->name, sdx_dtype_name(t->dtype), (at - off) / bytes,
                     (at - off) % bytes);
    }
    sdx_st_close(st);
}

/* Compares the file sdx wrote with sd-cli's: the same bytes, where sd-cli
 * may have left off the final padding (zeros in ours). */
static int gg_same_file(sdx_ctx *ctx, const char *ours, const char *ref, const char *what) {
    size_t n, m, at = 0;
    unsigned char *a = gg_slurp(ours, &n), *b = gg_slurp(ref, &m);
    int same = a && b && n >= m && n - m < 32 && n % 32 == 0;
    char where[256] = "";
    if (same) {
        while (at < m && a[at] == b[at]) at++;
        same = at == m;
        for (size_t i = m; same && i < n; i++) same = !a[i];
    }
    free(a);
    free(b);
    if (!same) gg_where(ctx, ours, at, where, sizeof where);
    T_CHECK(same, "%s: sdx wrote %zu bytes, sd-cli %zu; first difference at byte %zu, %s", what, n, m, at, where);
    return T_PASS;
}

/* The tensors sd-cli converted into reference file f, from its source
 * model (cast to f16 first where it was), converted by sdx with the same
 * --type and rules. */
static int gg_convert_like_sd_cli(sdx_ctx *ctx, const char *dir, const sdx__json *f, void *converted) {
    const char *gguf = sdx__json_get(f, "gguf")->str, *type = sdx__json_get(f, "type")->str;
    const sdx__json *rules = sdx__json_get(f, "tensor_type_rules");
    int full = !strcmp(sdx__json_get(f, "content")->str, "full"), cast = sdx__json_get(f, "cast_to_f16_first")->type == SDX__JSON_TRUE;
    char src_path[1024], ref_path[1024], out[256];
    sdx_st *src = NULL, *ref = NULL;
    sdx_tensor *ts = NULL;
    sdx_convert_params cp = { NULL, NULL, 0 };
    int n = 0, r = T_PASS, rc;
    snprintf(src_path, sizeof src_path, "%s/golden/%s", t_shared_dir(), sdx__json_get(f, "source")->str);
    snprintf(ref_path, sizeof ref_path, "%s/%s", dir, gguf);
    snprintf(out, sizeof out, "%s/sdx_t_gguf_like_%s", t_tmp_dir(), gguf);
    if (sdx_st_open(ctx, src_path, &src) != SDX_OK || sdx_st_open(ctx, ref_path, &ref) != SDX_OK) {
        sdx_st_close(src);
        T_CHECK(0, "%s", sdx_last_error(ctx));
    }
    ts = (sdx_tensor *)calloc((size_t)sdx_st_count(src), sizeof *ts);
    for (int i = 0; ts && i < (full ? sdx_st_count(src) : sdx_st_count(ref)); i++) {
        const sdx_tensor *t = full ? sdx_st_get(src, i) : sdx_st_find(src, sdx_st_get(ref, i)->name);
        if (!t) {
            snprintf(t_msg, sizeof t_msg, "%s: '%s' is not in the source model", gguf, sdx_st_get(ref, i)->name);
            r = T_FAIL;
            break;
        }
        ts[n] = *t;
        ts[n].owned = 0;
        if (cast && t->dtype == SDX_F32 && sdx_tensor_alloc(ctx, &ts[n], SDX_F16, t->ndim, t->shape) == SDX_OK) {
            ts[n].name = t->name;
            sdx_f32_to_f16_n((const float *)t->data, (uint16_t *)ts[n].data, (size_t)sdx_tensor_numel(t));
        }
        n++;
    }
    cp.type = type;
    cp.rules = rules && rules->type == SDX__JSON_STRING ? rules->str : NULL;
    rc = r == T_PASS ? sdx_convert_write(ctx, out, ts, n, NULL, 0, &cp) : SDX_OK;
    for (int i = 0; i < n; i++) sdx_tensor_free(ctx, &ts[i]);
    free(ts);
    sdx_st_close(src);
    sdx_st_close(ref);
    if (r != T_PASS) return r;
    T_CHECK(rc == SDX_OK, "%s: %s", gguf, sdx_last_error(ctx));
    r = gg_same_file(ctx, out, ref_path, gguf);
    remove(out);
    *(int *)converted += n;
    return r;
}

/* Every reference file, from the source tensors of its slice (or the
 * whole model), at its --type and rules: the quantized blocks, the types
 * chosen, the tensors left out, the order and the layout are sd-cli's,
 * byte for byte. */
static int sdx_converts_to_sd_clis_bytes_at_every_type(void) {
    T_NEED_SHARED(index, "golden/gguf/index.json");
    int files, tensors = 0, r = gg_each_file(index, gg_convert_like_sd_cli, &tensors, &files);
    if (r == T_PASS) T_NOTE("%d files, %d tensors: sdx's bytes are sd-cli's", files, tensors);
    return r;
}

/* ---- writing: the converter's own rules ------------------------------------ */

/* --tensor-type-rules patterns: std::regex_search on the subset sdx reads;
 * the rest refused by name. */
static int type_rule_patterns_match_as_regex_search(void) {
    static const struct { const char *re, *name; int match; } cases[] = {
        { "attn1", "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_q.weight", 1 },
        { "ff\\.net\\.2\\.weight", "x.ff.net.2.weight", 1 },
        { "ff\\.net\\.2\\.weight", "x.ffxnet.2.weight", 0 },
        { "ff.net", "x.ffxnet.2", 1 },
        { "mlp\\.(fc2|c_proj)\\.weight", "a.mlp.c_proj.weight", 1 },
        { "mlp\\.(fc2|c_proj)\\.weight", "a.mlp.fc2.weight", 1 },
        { "mlp\\.(fc2|c_proj)\\.weight", "a.mlp.fc1.weight", 0 },
        { "^vae\\.", "vae.decoder", 1 },
        { "^vae\\.", "first.vae.x", 0 },
        { "weight$", "a.weight", 1 },
        { "weight$", "a.weight_scale", 0 },
        { "blocks\\.[0-9]+\\.", "input_blocks.11.1", 1 },
        { "blocks\\.[0-9]+\\.", "input_blocks.x.1", 0 },
        { "blocks\\.\\d+\\.1$", "input_blocks.10.1", 1 },
        { "blocks\\.[^0-9]", "input_blocks.x", 1 },
        { "attn1|attn2", "b.attn2.to_k", 1 },
        { "a(bc)?d", "xadx", 1 },
        { "a(bc)?d", "xabcdx", 1 },
        { "a(bc)?d", "xabdx", 0 },
        { "a.*b.*c", "xaYYbZZc", 1 },
        { "a.*b.*c", "xaYYcZZb", 0 },
        { "^$", "", 1 },
        { "x*", "anything", 1 },
    };
    static const struct { const char *rules, *says; } bad[] = {
        { "a{2}=q8_0", "{n,m}" },
        { "(?:a)b=q8_0", "(?...)" },
        { "(ab)+=q8_0", "after a group" },
        { "a*?=q8_0", "quantifier" },
        { "\\1=q8_0", "escape" },
        { "\\bx=q8_0", "escape" },
        { "(ab=q8_0", "unclosed '('" },
        { "[ab=q8_0", "unclosed '['" },
        { "ab)=q8_0", "unmatched ')'" },
        { "attn=q7_0", "not a type" },
        { "attn", "not PATTERN=TYPE" },
        { "=q8_0", "not PATTERN=TYPE" },
    };
    sdx_ctx *ctx = t_ctx();
    sdx__type_rule *r;
    int n;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *re = cases[i].re, *bad_part = sdx__rx_unsupported(re, re + strlen(re));
        T_CHECK(!bad_part, "'%s' refused: %s", re, bad_part);
        T_CHECK(sdx__rx_search(re, re + strlen(re), cases[i].name) == cases[i].match, "'%s' on '%s': want %d", re, cases[i].name,
                cases[i].match);
    }
    T_CHECK(sdx__convert_rules(ctx, ",attn2=q5_1,,proj_out=F16,", &r, &n) == SDX_OK && n == 2 && r[0].type == SDX_Q5_1 &&
            r[1].type == SDX_F16 && r[1].n == 8, "rules parsed: %s", sdx_last_error(ctx));
    sdx__free(ctx, r);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = sdx__convert_rules(ctx, bad[i].rules, &r, &n);
        T_CHECK(rc != SDX_OK && !r && strstr(sdx_last_error(ctx), bad[i].says), "'%s': %d (%s)", bad[i].rules, rc, sdx_last_error(ctx));
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* Tensors for the round trips: name, shape, values. */
typedef struct gg_src { const char *name; int ndim; int64_t shape[4]; int kept, dims; } gg_src;
static const gg_src gg_srcs[] = {
    { "model.diffusion_model.b.proj_in.weight", 2, { 3, 512 }, 0, 2 },          /* rows of 512 */
    { "model.diffusion_model.b.norm.weight", 1, { 256 }, 0, 1 },                /* a 1-D norm: converted */
    { "model.diffusion_model.b.norm.bias", 1, { 256 }, 1, 1 },                  /* .bias: kept */
    { "model.diffusion_model.a.conv.weight", 4, { 4, 2, 3, 3 }, 0, 4 },         /* rows of 3: f16/bf16 only */
    { "model.diffusion_model.time_embed.0.weight", 2, { 2, 256 }, 1, 2 },       /* time_embed.: kept */
    { "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight", 2, { 4, 64 }, 1, 2 },  /* embedding: kept */
    { "cond_stage_model.transformer.text_model.embeddings.position_ids", 2, { 1, 77 }, 1, 0 },          /* left out */
    { "a.leading_ones.weight", 3, { 1, 1, 32 }, 0, 1 },                         /* stored as [32] */
    { "v_pred", 0, { 0 }, 0, 1 },                                               /* 0-D: stored as [1] */
};
#define GG_NSRC ((int)(sizeof gg_srcs / sizeof gg_srcs[0]))

/* f32 values with the cases quantizers trip on: an all-zero block, a
 * lone value, equal values, a negative extreme. */
static void gg_values(float *x, int64_t n, int salt) {
    t_seed(1234 + (uint64_t)salt);
    t_fill_normal(x, (size_t)n, 0.05);
    if (n >= 96) {
        for (int i = 0; i < 32; i++) x[i] = 0;
        x[40] = -0.5f;
        for (int i = 64; i < 96; i++) x[i] = 0.25f;
    }
}

static void gg_make(sdx_ctx *ctx, sdx_tensor *ts) {
    for (int i = 0; i < GG_NSRC; i++) {
        const gg_src *g = &gg_srcs[i];
        int ids = !g->dims;      /* position_ids: I64 */
        sdx_tensor_alloc(ctx, &ts[i], ids ? SDX_I64 : SDX_F32, g->ndim, g->shape);
        ts[i].name = g->name;
        if (ids) for (int j = 0; j < 77; j++) ((int64_t *)ts[i].data)[j] = j;
        else gg_values((float *)ts[i].data, sdx_tensor_numel(&ts[i]), i);
    }
}

/* The values one tensor should read back at `type`: quantized row by row
 * and dequantized (q), cast, or as they were. */
static void gg_expect(const sdx_tensor *t, sdx_dtype type, float *want) {
    int64_t n = sdx_tensor_numel(t), row = t->ndim ? t->shape[t->ndim - 1] : 1;
    sdx__load_f32(t->data, t->dtype, 0, n, want);
    if (sdx__dtype_is_block(type)) {
        size_t bytes;
        int block = sdx_dtype_block(type, &bytes);
        unsigned char *q = (unsigned char *)malloc((size_t)(n / block) * bytes);
        for (int64_t r = 0; r < n / row; r++) sdx__quantizer(type)(want + r * row, row, q + (size_t)(r * row / block) * bytes);
        sdx__dequant(q, type, 0, n, want);
        free(q);
    } else if (type == SDX_F16) {
        for (int64_t j = 0; j < n; j++) want[j] = sdx_f16_to_f32(sdx_f32_to_f16(want[j]));
    } else if (type == SDX_BF16) {
        for (int64_t j = 0; j < n; j++) want[j] = sdx_bf16_to_f32(sdx_f32_to_bf16(want[j]));
    }
}

/* One round trip: the tensors written at `type`, read back. */
static int gg_round_trip(sdx_ctx *ctx, const sdx_tensor *ts, sdx_dtype type, const char *path) {
    sdx_convert_params cp = { sdx_dtype_name(type), NULL, 0 };
    sdx_st *st = NULL;
    int r = T_PASS;
    float *want = (float *)malloc(4096 * sizeof(float));
    T_CHECK(sdx_convert_write(ctx, path, ts, GG_NSRC, NULL, 0, &cp) == SDX_OK, "%s: %s", sdx_dtype_name(type), sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_count(st) == GG_NSRC - 1 && !sdx_st_find(st, gg_srcs[6].name) && sdx_st_meta_count(st) == 0,
            "%s: %d tensors, %d keys; position_ids left out", sdx_dtype_name(type), sdx_st_count(st), sdx_st_meta_count(st));
    for (int i = 0; i < GG_NSRC && r == T_PASS; i++) {
        const sdx_tensor *t = sdx_st_find(st, ts[i].name);
        int64_t n = sdx_tensor_numel(&ts[i]), row = ts[i].ndim ? ts[i].shape[ts[i].ndim - 1] : 1;
        sdx_dtype got_type = !gg_srcs[i].kept && row % sdx_dtype_block(type, NULL) == 0 ? type : SDX_F32;
        sdx_tensor f;
        if (!gg_srcs[i].dims) continue;
        if (!t || t->dtype != got_type || sdx_tensor_numel(t) != n || t->ndim != gg_srcs[i].dims) {
            snprintf(t_msg, sizeof t_msg, "%s: '%s' is %s with %d dims, want %s with %d", sdx_dtype_name(type), ts[i].name,
                     t ? sdx_dtype_name(t->dtype) : "missing", t ? t->ndim : 0, sdx_dtype_name(got_type), gg_srcs[i].dims);
            r = T_FAIL;
            break;
        }
        gg_expect(&ts[i], got_type, want);
        if (sdx_st_read_f32(ctx, st, ts[i].name, &f) != SDX_OK) { snprintf(t_msg, sizeof t_msg, "%s", sdx_last_error(ctx)); r = T_FAIL; break; }
        if (memcmp(f.data, want, (size_t)n * sizeof(float))) {
            snprintf(t_msg, sizeof t_msg, "%s: '%s' reads back other values than quantizing and dequantizing give", sdx_dtype_name(type),
                     ts[i].name);
            r = T_FAIL;
        }
        sdx_tensor_free(ctx, &f);
    }
    for (int i = 1; r == T_PASS && i < sdx_st_count(st); i++)
        if (strcmp(sdx_st_get(st, i - 1)->name, sdx_st_get(st, i)->name) >= 0) {
            snprintf(t_msg, sizeof t_msg, "%s: tensors not sorted by name", sdx_dtype_name(type));
            r = T_FAIL;
        }
    sdx_st_close(st);
    free(want);
    return r;
}

/* sdx writes every type, reads it back and gets what quantizing then
 * dequantizing gives; the names sd-cli keeps stay f32, position_ids
 * goes, leading 1s go, a 0-D tensor becomes [1], names are sorted. */
static int convert_round_trip_reads_back_the_quantized_values(void) {
    static const sdx_dtype types[] = { SDX_Q8_0, SDX_Q4_0, SDX_Q4_1, SDX_Q5_0, SDX_Q5_1, SDX_Q2_K, SDX_Q3_K, SDX_Q4_K, SDX_Q5_K,
                                       SDX_Q6_K, SDX_F16, SDX_BF16, SDX_F32 };
    const char *path = t_tmp("sdx_t_gguf_round_trip.gguf");
    sdx_ctx *ctx = t_ctx();
    sdx_tensor ts[GG_NSRC];
    int r = T_PASS;
    memset(ts, 0, sizeof ts);
    gg_make(ctx, ts);
    for (size_t i = 0; r == T_PASS && i < sizeof types / sizeof types[0]; i++) r = gg_round_trip(ctx, ts, types[i], path);
    for (int i = 0; i < GG_NSRC; i++) sdx_tensor_free(ctx, &ts[i]);
    remove(path);
    sdx_destroy(ctx);
    return r;
}

/* Whether tensor `name` of got holds the values sdx reads from `from`,
 * converted to `type` (as they are when that is their dtype). */
static int gg_holds_converted(sdx_ctx *ctx, const sdx_st *from, const sdx_st *got, const char *name, sdx_dtype type) {
    sdx_tensor a, b;
    int same = 0;
    if (sdx_st_read_f32(ctx, from, name, &a) != SDX_OK) return 0;
    if (sdx_st_read_f32(ctx, got, name, &b) == SDX_OK) {
        int64_t n = sdx_tensor_numel(&a);
        float *e = (float *)malloc((size_t)n * sizeof(float) + 1);
        if (type == sdx_st_find(from, name)->dtype) memcpy(e, a.data, (size_t)n * sizeof(float));
        else gg_expect(&a, type, e);
        same = n == sdx_tensor_numel(&b) && !memcmp(b.data, e, (size_t)n * sizeof(float));
        free(e);
        sdx_tensor_free(ctx, &b);
    }
    sdx_tensor_free(ctx, &a);
    return same;
}

/* Every tensor of the open file st, converted to path with `type`. */
static int gg_convert_file(sdx_ctx *ctx, const sdx_st *st, const char *path, const char *type) {
    int n = sdx_st_count(st), rc;
    sdx_tensor *ts = (sdx_tensor *)calloc((size_t)n + 1, sizeof *ts);
    sdx_convert_params cp = { type, NULL, 0 };
    if (!ts) return SDX_ERR_NOMEM;
    for (int i = 0; i < n; i++) ts[i] = *sdx_st_get(st, i);
    rc = sdx_convert_write(ctx, path, ts, n, NULL, 0, &cp);
    free(ts);
    return rc;
}

/* A GGUF file in: to safetensors every tensor dequantized as sdx reads it
 * (f32, or f16 rounded from that), or left as it is without a type; to
 * GGUF again without a type, sd-cli's own bytes; at q8_0, its block
 * tensors requantized from their values. */
static int gguf_converts_to_safetensors_and_to_other_types(void) {
    T_NEED_SHARED(ref, "golden/gguf/sdxl-mixed.gguf");
    static const char *const types[] = { "f32", NULL, "F16", "q8_0" };
    const char *st_path = t_tmp("sdx_t_gguf_back.safetensors"), *gg_path = t_tmp("sdx_t_gguf_again.gguf");
    sdx_ctx *ctx = t_ctx();
    sdx_st *in = NULL, *out = NULL;
    int r = T_PASS;
    T_CHECK(sdx_st_open(ctx, ref, &in) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int k = 0; k < 4 && r == T_PASS; k++) {
        const char *path = k < 3 ? st_path : gg_path;
        if (gg_convert_file(ctx, in, path, types[k]) != SDX_OK || sdx_st_open(ctx, path, &out) != SDX_OK) {
            snprintf(t_msg, sizeof t_msg, "%s: %s", types[k] ? types[k] : "no type", sdx_last_error(ctx));
            r = T_FAIL;
            break;
        }
        for (int i = 0; i < sdx_st_count(in) && r == T_PASS; i++) {
            const sdx_tensor *t = sdx_st_get(in, i), *u = sdx_st_find(out, t->name);
            sdx_dtype want = k == 0 ? SDX_F32 : k == 2 ? SDX_F16 : k == 3 ? sdx__convert_gguf_dtype(t, SDX_Q8_0, NULL, 0, 0)
                           : sdx__dtype_is_block(t->dtype) ? SDX_F32 : t->dtype;
            if (!u || u->dtype != want || !sdx__same_shape(t, u)) {
                snprintf(t_msg, sizeof t_msg, "%s: '%s' is %s, want %s of the same shape", types[k] ? types[k] : "no type", t->name,
                         u ? sdx_dtype_name(u->dtype) : "missing", sdx_dtype_name(want));
                r = T_FAIL;
            } else if (!gg_holds_converted(ctx, in, out, t->name, want)) {
                snprintf(t_msg, sizeof t_msg, "%s: '%s' has other values than %s of what sdx reads", types[k] ? types[k] : "no type",
                         t->name, sdx_dtype_name(want));
                r = T_FAIL;
            } else if (want == t->dtype && memcmp(t->data, u->data, sdx_tensor_nbytes(t))) {
                snprintf(t_msg, sizeof t_msg, "'%s' kept its %s but not its bytes", t->name, sdx_dtype_name(want));
                r = T_FAIL;
            }
        }
        sdx_st_close(out);
    }
    sdx_st_close(in);
    if (r == T_PASS && sdx_st_open(ctx, ref, &in) == SDX_OK) {
        r = gg_convert_file(ctx, in, gg_path, NULL) == SDX_OK ? gg_same_file(ctx, gg_path, ref, "sdxl-mixed.gguf, no type") : T_FAIL;
        sdx_st_close(in);
    }
    remove(st_path);
    remove(gg_path);
    sdx_destroy(ctx);
    return r;
}

/* A LoRA merged into the q8_0 model: saved to safetensors its merged
 * tensors are f32; saved to GGUF at q8_0 they are those values quantized;
 * untouched tensors keep their bytes. */
static int a_lora_merged_into_a_quantized_model_saves_requantized(void) {
    T_NEED_SHARED(path, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(lora, "golden/lora/loras/sd1_kohya_locon.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    const char *st_path = t_tmp("sdx_t_gguf_lora.safetensors"), *gg_path = t_tmp("sdx_t_gguf_lora.gguf");
    sdx_convert_params cp = { "q8_0", NULL, 0 };
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = t_model_file(ctx, path);
    sdx_st *base = NULL, *fs = NULL, *fg = NULL;
    int merged = 0, r = T_PASS;
    (void)v;
    T_CHECK(m, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_apply_lora(m, lora, 1.0f, 1.0f) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_save(m, st_path) == SDX_OK && sdx_model_save_as(m, gg_path, &cp) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &base) == SDX_OK && sdx_st_open(ctx, st_path, &fs) == SDX_OK && sdx_st_open(ctx, gg_path, &fg) == SDX_OK,
            "%s", sdx_last_error(ctx));
    for (int i = 0; i < sdx_st_count(base) && r == T_PASS; i++) {
        const sdx_tensor *t = sdx_st_get(base, i), *s = sdx_st_find(fs, t->name), *g = sdx_st_find(fg, t->name);
        if (!s || !g || g->dtype != t->dtype || s->dtype != (sdx__dtype_is_block(t->dtype) ? SDX_F32 : t->dtype)) {
            snprintf(t_msg, sizeof t_msg, "'%s' (%s): missing, or saved as %s and %s", t->name, sdx_dtype_name(t->dtype),
                     s ? sdx_dtype_name(s->dtype) : "-", g ? sdx_dtype_name(g->dtype) : "-");
            r = T_FAIL;
            break;
        }
        if (!memcmp(t->data, g->data, sdx_tensor_nbytes(t))) continue;     /* untouched: the file's bytes */
        merged += sdx__dtype_is_block(t->dtype);
        if (!gg_holds_converted(ctx, fs, fg, t->name, g->dtype)) {
            snprintf(t_msg, sizeof t_msg, "'%s': the GGUF's %s is not the merged values of the safetensors file", t->name,
                     sdx_dtype_name(g->dtype));
            r = T_FAIL;
        }
    }
    sdx_st_close(base);
    sdx_st_close(fs);
    sdx_st_close(fg);
    sdx_model_free(m);
    remove(st_path);
    remove(gg_path);
    sdx_destroy(ctx);
    if (r != T_PASS) return r;
    T_NOTE("%d merged q8_0 tensors: f32 in safetensors, requantized in GGUF", merged);
    T_CHECK(merged > 0, "the LoRA touched no q8_0 tensor");
    return T_PASS;
}

/* A LoRA on a quantized model is not lost in its blocks: a patched
 * matrix holds the file's values plus the LoRA's delta in f16, the f16
 * rounding of what the same LoRA makes of the same weights in f32 (the
 * file dequantized to an f32 safetensors); the matrices it does not touch
 * stay quantized, and clearing it gives the blocks back. */
static int a_lora_on_a_quantized_model_merges_as_on_its_f32_values(void) {
    T_NEED_SHARED(path, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(lora, "golden/lora/loras/sd1_kohya_locon.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    const char *f32_path = t_tmp("sdx_t_gguf_lora_f32.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx_model *q, *f;
    int held = 0, patched = 0, untouched = 0, differ = 0, blocks_after = 0, blocks_before = 0;
    (void)v;
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK && gg_convert_file(ctx, st, f32_path, "f32") == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_st_close(st);
    q = t_model_file(ctx, path);
    f = t_model_file(ctx, f32_path);
    T_CHECK(q && f, "%s", sdx_last_error(ctx));
    for (int i = 0; i < q->unet.w.n_slots; i++) blocks_before += sdx__dtype_is_block(q->unet.w.slots[i]->t.dtype);
    T_CHECK(sdx_model_apply_lora(q, lora, 0.8f, 0.8f) == SDX_OK && sdx_model_apply_lora(f, lora, 0.8f, 0.8f) == SDX_OK, "%s",
            sdx_last_error(ctx));
    for (int i = 0; i < q->unet.w.n_slots; i++) {
        const sdx__wslot *sq = q->unet.w.slots[i], *sf = NULL;
        int64_t n = sdx_tensor_numel(&sq->t);
        if (!sdx__dtype_is_block(sq->file->dtype)) continue;
        if (sdx__dtype_is_block(sq->t.dtype)) { untouched++; continue; }
        for (int j = 0; j < f->unet.w.n_slots && !sf; j++)
            if (!strcmp(f->unet.w.slots[j]->file->name, sq->file->name)) sf = f->unet.w.slots[j];
        T_CHECK(sf && sf->t.dtype == SDX_F32 && sq->t.dtype == SDX_F16 && sdx_tensor_numel(&sf->t) == n, "'%s': no f32 twin",
                sq->file->name);
        held++;
        patched += memcmp(sf->t.data, sf->file->data, (size_t)n * sizeof(float)) != 0;
        for (int64_t k = 0; k < n; k++)
            differ += ((const uint16_t *)sq->t.data)[k] != sdx_f32_to_f16(((const float *)sf->t.data)[k]);
    }
    T_CHECK(sdx_model_clear_loras(q) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < q->unet.w.n_slots; i++) blocks_after += sdx__dtype_is_block(q->unet.w.slots[i]->t.dtype);
    T_NOTE("of the UNet's quantized file weights %d held in f16 (%d patched by the LoRA; the others are norms and the like, "
           "dequantized at load), %d still in blocks; %d values differ from the f32 merge rounded to f16; %d of %d blocks back "
           "after clearing", held, patched, untouched, differ, blocks_after, blocks_before);
    sdx_model_free(q);
    sdx_model_free(f);
    sdx_destroy(ctx);
    remove(f32_path);
    T_CHECK(patched > 0 && untouched > 0, "patched %d, untouched %d", patched, untouched);
    T_CHECK(differ == 0, "%d values differ from the f32 merge", differ);
    T_CHECK(blocks_after == blocks_before, "%d of %d weights quantized after clearing", blocks_after, blocks_before);
    return T_PASS;
}

static int gg_convert_built(sdx_ctx *ctx, void *arg) {
    static const char *const types[] = { "q4_0", "q4_K", "f16" };
    int rc = SDX_OK;
    sdx_convert_params cp = { NULL, "norm=q8_0,attn[12]=q5_1", 0 };
    for (int i = 0; i < 3 && rc == SDX_OK; i++) {
        cp.type = types[i];
        rc = sdx_convert_write(ctx, i < 2 ? t_tmp("sdx_t_gguf_alloc.gguf") : t_tmp("sdx_t_gguf_alloc.safetensors"), (const sdx_tensor *)arg,
                               GG_NSRC, NULL, 0, i < 2 ? &cp : &(sdx_convert_params){ "f16", NULL, 0 });
    }
    return rc;
}

static int convert_fails_cleanly_at_every_allocation(void) {
    t_allocs f = T_ALLOCS_INIT;
    sdx_ctx *ctx = t_allocs_ctx(&f), *plain = t_ctx();
    sdx_tensor ts[GG_NSRC];
    int r;
    memset(ts, 0, sizeof ts);
    gg_make(plain, ts);
    r = t_fail_each_allocation(ctx, &f, gg_convert_built, ts, 200);
    for (int i = 0; i < GG_NSRC; i++) sdx_tensor_free(plain, &ts[i]);
    remove(t_tmp("sdx_t_gguf_alloc.gguf"));
    remove(t_tmp("sdx_t_gguf_alloc.safetensors"));
    sdx_destroy(ctx);
    sdx_destroy(plain);
    return r;
}

/* sdx -M convert: the output loads and generates; a bad --type exits 2,
 * an output that cannot be written or cannot hold the type exits 1 with
 * the reason, and leaves nothing behind. */
static int sdx_converts_from_the_command_line(void) {
    T_NEED_SHARED(model, "golden/sd1/model.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    static char out[8192], args[4096];
    const char *gg = t_tmp("sdx_t_gguf_cli.gguf"), *png = t_tmp("sdx_t_gguf_cli.png"), *st = t_tmp("sdx_t_gguf_cli.safetensors");
    int rc;
    (void)v;
    T_NEED_SDX_COMMAND();
    T_SKIP_IF(T_WINDOWS, "the CLI cases run examples/sdx through a POSIX shell");
    snprintf(args, sizeof args, "-M convert -m '%s' --type q8_0 -o %s", model, gg);
    rc = t_sdx(args, out, sizeof out);
    T_CHECK(rc == 0 && strstr(out, "996 tensors (620 F32, 376 Q8_0)"), "convert: exit %d: %s", rc, out);
    snprintf(args, sizeof args, "-m %s --vocab '%s/vocab' -p 'a cat' -W 64 -H 64 --steps 2 -s 1 -o %s", gg, t_shared_dir(), png);
    rc = t_sdx(args, out, sizeof out);
    T_CHECK(rc == 0 && t_file_exists(png), "generate from the converted file: exit %d: %s", rc, out);
    snprintf(args, sizeof args, "-M convert -m %s --type f32 -o %s", gg, st);
    rc = t_sdx(args, out, sizeof out);
    T_CHECK(rc == 0 && strstr(out, "(996 F32)"), "back to safetensors: exit %d: %s", rc, out);
    rc = t_sdx("-M convert -m x.safetensors --type q7_0 -o y.gguf", out, sizeof out);
    T_CHECK(rc == 2 && strstr(out, "--type q7_0: valid types are f32, f16, bf16, q4_0") && strstr(out, "q6_K"), "bad type: %d: %s", rc, out);
    snprintf(args, sizeof args, "-M convert -m '%s' --type q4_K -o /nonexistent-dir/x.gguf", model);
    rc = t_sdx(args, out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "/nonexistent-dir/x.gguf: cannot create"), "unwritable output: %d: %s", rc, out);
    remove(st);
    snprintf(args, sizeof args, "-M convert -m '%s' --type q8_0 -o %s", model, st);
    rc = t_sdx(args, out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "safetensors cannot hold Q8_0") && !t_file_exists(st), "q8_0 into safetensors: %d: %s", rc, out);
    snprintf(args, sizeof args, "-M convert -m '%s' --type q8_0 --tensor-type-rules 'a{2}=q4_0' -o %s", model, gg);
    rc = t_sdx(args, out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "{n,m}"), "unsupported rule: %d: %s", rc, out);
    rc = t_sdx("-m m.safetensors -p x --type q8_0", out, sizeof out);
    T_CHECK(rc == 2 && strstr(out, "go with -M convert"), "--type outside convert: %d: %s", rc, out);
    remove(gg);
    remove(png);
    return T_PASS;
}

/* The q8_0 model with its matrices kept quantized (the CPU's default),
 * multiplied exactly (sdx_desc.quant_exact: the int8 path's error is
 * components_stay_within_half_precision's), against the same file
 * dequantized into f16 at load (what a backend without linear_blocks
 * gets, and what the CPU did before). Not the same
 * bits: a q8_0 value q * d has up to 18 significant bits, which f16
 * rounds (at most 2^-11 relative), so kept weights are the file's values
 * exactly and dequantized ones are within that rounding of them. The
 * latents differ by what that rounding makes of them after 4 steps. */
static int q8_0_kept_quantized_generates_as_dequantized_at_load(void) {
    T_NEED_SHARED(path, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m[2], *f;
    sdx_gen_params p;
    sdx_gen_result r[2], rf;
    double rel, rel_kept, rel_f16;
    int blocks = 0, worst;
    (void)v;
    ctx->desc.quant_exact = 1;
    for (int i = 0; i < 2; i++) {
        ctx->be.linear_blocks = i == 0;     /* 0: kept, 1: dequantized into f16 at load */
        m[i] = t_model_file(ctx, path);
        T_CHECK(m[i], "%s", sdx_last_error(ctx));
    }
    ctx->be.linear_blocks = 1;
    for (int i = 0; i < m[0]->unet.w.n_slots; i++) blocks += sdx__dtype_is_block(m[0]->unet.w.slots[i]->t.dtype);
    for (int i = 0; i < m[1]->unet.w.n_slots; i++) T_CHECK(!sdx__dtype_is_block(m[1]->unet.w.slots[i]->t.dtype), "a block slot");
    f = t_model(ctx, "sd1");
    T_CHECK(f, "%s", sdx_last_error(ctx));
    gg_gen_params(&p);
    for (int i = 0; i < 2; i++) T_CHECK(sdx_generate(m[i], &p, &r[i]) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_generate(f, &p, &rf) == SDX_OK, "%s", sdx_last_error(ctx));
    {
        size_t n = (size_t)sdx_tensor_numel(&rf.latents[0]);
        const float *lk = (const float *)r[0].latents[0].data, *lh = (const float *)r[1].latents[0].data;
        rel = t_rel_l2_f32(lk, lh, n);
        rel_kept = t_rel_l2_f32(lk, (const float *)rf.latents[0].data, n);
        rel_f16 = t_rel_l2_f32(lh, (const float *)rf.latents[0].data, n);
    }
    worst = t_image_diff(&r[0].images[0], &r[1].images[0]);
    T_NOTE("%d UNet matrices kept Q8_0; latent rel-L2 kept vs dequantized at load %.3g (image max diff %d levels); "
           "against the f32 model: kept %.3g, dequantized %.3g", blocks, rel, worst, rel_kept, rel_f16);
    for (int i = 0; i < 2; i++) { sdx_gen_result_free(ctx, &r[i]); sdx_model_free(m[i]); }
    sdx_gen_result_free(ctx, &rf);
    sdx_model_free(f);
    sdx_destroy(ctx);
    T_CHECK(blocks > 100, "only %d UNet matrices kept quantized", blocks);
    T_CHECK(rel < 5e-3, "kept vs dequantized at load: latent rel-L2 %.3g", rel);
    return T_PASS;
}

/* ---- sdx's quantized convolutions (--quantize-convolutions) -------------- */

/* One 4-D Q8_0 tensor, conv.weight [2, c, 3, 3] (ne 3, 3, c, 2), its
 * blocks d = 1/(block + 1), q = j - 16; `mark`: 0 no key, 1 the key
 * true, 2 the key false. */
static void gg_build_conv(gg_image *g, int64_t c, int mark) {
    const int64_t blocks = 2 * c * 9 / 32;
    memset(g, 0, sizeof *g);
    memcpy(g->b, "GGUF", 4);
    g->n = 4;
    gg_put(g, 3, 4);
    gg_put(g, 1, 8);
    gg_put(g, mark ? 1 : 0, 8);
    if (mark) {
        gg_str(g, "sdx.quantized_convolutions");
        gg_put(g, 7, 4);
        gg_put(g, mark == 1, 1);
    }
    gg_str(g, "conv.weight");
    gg_put(g, 4, 4);
    gg_put(g, 3, 8);
    gg_put(g, 3, 8);
    gg_put(g, (uint64_t)c, 8);
    gg_put(g, 2, 8);
    gg_put(g, 8, 4);
    gg_put(g, 0, 8);
    gg_pad(g, 0, 32);
    g->data = g->n;
    for (int64_t b = 0; b < blocks; b++) {
        gg_put(g, sdx_f32_to_f16(1.0f / (float)(b + 1)), 2);
        for (int j = 0; j < 32; j++) gg_put(g, (uint64_t)(uint8_t)(int8_t)(j - 16), 1);
    }
}

/* The layout opens only from a file that says so, and only where a
 * convolution's in_channels x 3 x 3 are whole blocks; its values are the
 * blocks' in row-major order. */
static int quantized_convolution_layout_opens_only_where_marked(void) {
    static const struct { int64_t c; int mark; int ok; const char *why; } cases[] = {
        { 32, 1, 1, NULL }, { 32, 0, 0, "rows of 3 values" }, { 32, 2, 0, "rows of 3 values" }, { 5, 1, 0, "rows of 45 values" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gg_image g;
        char msg[256];
        int rc;
        gg_build_conv(&g, cases[i].c, cases[i].mark);
        rc = gg_open(&g, g.n, msg, sizeof msg);
        T_NOTE("c %lld, mark %d: %s", (long long)cases[i].c, cases[i].mark, rc == SDX_OK ? "opens" : msg);
        if (cases[i].ok) T_CHECK(rc == SDX_OK, "c %lld marked: %s", (long long)cases[i].c, msg);
        else T_CHECK(rc == SDX_ERR_FORMAT && strstr(msg, cases[i].why), "c %lld, mark %d: %d: %s", (long long)cases[i].c,
                     cases[i].mark, rc, msg);
    }
    {
        sdx_ctx *ctx = t_ctx();
        gg_image g;
        sdx_st *st = NULL;
        sdx_tensor f;
        int good = 1;
        gg_build_conv(&g, 32, 1);
        T_CHECK(sdx_st_open_memory(ctx, g.b, g.n, "conv.gguf", &st) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_st_read_f32(ctx, st, "conv.weight", &f) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(f.ndim == 4 && f.shape[0] == 2 && f.shape[1] == 32 && f.shape[2] == 3 && f.shape[3] == 3, "shape");
        for (int64_t i = 0; i < 2 * 32 * 9; i++)
            good &= ((const float *)f.data)[i] == (float)(i % 32 - 16) * sdx_f16_to_f32(sdx_f32_to_f16(1.0f / (float)(i / 32 + 1)));
        sdx_tensor_free(ctx, &f);
        sdx_st_close(st);
        sdx_destroy(ctx);
        T_CHECK(good, "values differ from the blocks'");
    }
    return T_PASS;
}

/* Whether name is one a block type never takes (sd-cli's rule). */
static int gg_kept_by_name(const char *name) {
    return strstr(name, "time_embed.") || strstr(name, "label_emb.") || strstr(name, "embedding");
}

/* The tiny SD1 model converted at q8_0 with its convolutions too: every
 * convolution whose in_channels x kh x kw are whole blocks is Q8_0 in
 * rows of those (the values sdx's q8_0 quantizer makes of each such row),
 * the file is marked, the CPU keeps them quantized, and the model
 * generates finite, as close to the f32 model as q8_0 files do (the
 * bound of q8_0_model_generates_close_to_the_f32_model). */
static int quantized_convolutions_convert_load_and_generate(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(plain_path, "golden/gguf/sd1-q8_0.gguf");
    const char *path = t_tmp("sdx_t_gguf_quantized_convolutions.gguf");
    sdx_ctx *ctx = t_ctx();
    sdx_st *src = NULL, *got = NULL;
    sdx_model *q, *f, *plain;
    sdx_gen_params p;
    sdx_gen_result rq, rf, rp;
    sdx_convert_params cp = { "q8_0", NULL, 1 };
    int convs = 0, quantized = 0, kept = 0, wrong = 0;
    double rel, rel_plain;
    (void)v;
    T_CHECK(sdx_st_open(ctx, t_golden_ckpt("sd1"), &src) == SDX_OK, "%s", sdx_last_error(ctx));
    {
        int n = sdx_st_count(src);
        sdx_tensor *ts = (sdx_tensor *)calloc((size_t)n + 1, sizeof *ts);
        T_CHECK(ts, "alloc");
        for (int i = 0; i < n; i++) ts[i] = *sdx_st_get(src, i);
        T_CHECK(sdx_convert_write(ctx, path, ts, n, NULL, 0, &cp) == SDX_OK, "%s", sdx_last_error(ctx));
        free(ts);
    }
    T_CHECK(sdx_st_open(ctx, path, &got) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_meta(got, "sdx.quantized_convolutions") != NULL, "the file is not marked");
    for (int i = 0; i < sdx_st_count(got); i++) {
        const sdx_tensor *t = sdx_st_get(got, i);
        const int64_t row = t->ndim == 4 ? t->shape[1] * t->shape[2] * t->shape[3] : 0;
        if (t->ndim != 4) continue;
        convs++;
        if (t->dtype != (row % 32 == 0 && !gg_kept_by_name(t->name) ? SDX_Q8_0 : sdx_st_find(src, t->name)->dtype)) wrong++;
        if (t->dtype == SDX_Q8_0) {
            sdx_tensor a, b;
            int64_t n = sdx_tensor_numel(t);
            float *want = (float *)malloc((size_t)n * sizeof(float));
            unsigned char *blocks = (unsigned char *)malloc((size_t)(n / 32) * 34);
            T_CHECK(want && blocks && sdx_st_read_f32(ctx, src, t->name, &a) == SDX_OK && sdx_st_read_f32(ctx, got, t->name, &b) == SDX_OK,
                    "%s", t->name);
            for (int64_t r = 0; r < n / row; r++) sdx__quantizer(SDX_Q8_0)((const float *)a.data + r * row, row, blocks + (size_t)(r * row / 32) * 34);
            sdx__dequant(blocks, SDX_Q8_0, 0, n, want);
            wrong += memcmp(want, b.data, (size_t)n * sizeof(float)) != 0;
            sdx_tensor_free(ctx, &a);
            sdx_tensor_free(ctx, &b);
            free(want);
            free(blocks);
            quantized++;
        }
    }
    sdx_st_close(got);
    sdx_st_close(src);
    T_CHECK(!wrong && quantized > 0, "%d of %d convolutions have the wrong dtype or values (%d quantized)", wrong, convs, quantized);
    q = t_model_file(ctx, path);
    T_CHECK(q, "%s", sdx_last_error(ctx));
    for (int i = 0; i < q->unet.w.n_slots; i++) kept += q->unet.w.slots[i]->t.ndim == 4 && q->unet.w.slots[i]->t.dtype == SDX_Q8_0;
    f = t_model(ctx, "sd1");
    T_CHECK(f, "%s", sdx_last_error(ctx));
    plain = t_model_file(ctx, plain_path);
    gg_gen_params(&p);
    T_CHECK(sdx_generate(q, &p, &rq) == SDX_OK && sdx_generate(f, &p, &rf) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!sdx__has_nonfinite(&rq.latents[0]), "the latent is not finite");
    rel = t_rel_l2_f32((const float *)rq.latents[0].data, (const float *)rf.latents[0].data, (size_t)sdx_tensor_numel(&rf.latents[0]));
    rel_plain = -1.0;
    if (plain && sdx_generate(plain, &p, &rp) == SDX_OK) {
        rel_plain = t_rel_l2_f32((const float *)rp.latents[0].data, (const float *)rf.latents[0].data,
                                 (size_t)sdx_tensor_numel(&rf.latents[0]));
        sdx_gen_result_free(ctx, &rp);
    }
    T_NOTE("%d of %d convolutions Q8_0 (%d UNet ones kept quantized); latent rel-L2 against the f32 model %.3g "
           "(sd-cli's q8_0 file, convolutions f32: %.3g), image max diff %d levels", quantized, convs, kept, rel, rel_plain,
           t_image_diff(&rq.images[0], &rf.images[0]));
    sdx_gen_result_free(ctx, &rq);
    sdx_gen_result_free(ctx, &rf);
    sdx_model_free(q);
    sdx_model_free(f);
    sdx_model_free(plain);
    sdx_destroy(ctx);
    remove(path);
    T_CHECK(kept > 0, "no UNet convolution was kept quantized");
    T_CHECK(rel < 0.05, "latent rel-L2 %.3g", rel);
    return T_PASS;
}

static const t_case gguf_cases[] = {
    { "built_files_open_with_shapes_values_and_metadata", built_files_open_with_shapes_values_and_metadata },
    { "hostile_files_fail_with_a_reason", hostile_files_fail_with_a_reason },
    { "truncated_files_fail_and_a_missing_tail_padding_is_accepted", truncated_files_fail_and_a_missing_tail_padding_is_accepted },
    { "empty_tensor_with_overflowing_dims_is_refused", empty_tensor_with_overflowing_dims_is_refused },
    { "open_fails_cleanly_at_every_allocation", open_fails_cleanly_at_every_allocation },
    { "quantized_matrices_stay_quantized_where_linear_takes_them", quantized_matrices_stay_quantized_where_linear_takes_them },
    { "every_reference_tensor_dequantizes_to_ggmls_values", every_reference_tensor_dequantizes_to_ggmls_values },
    { "a_slice_is_refused_as_a_model", a_slice_is_refused_as_a_model },
    { "q8_0_model_generates_close_to_the_f32_model", q8_0_model_generates_close_to_the_f32_model },
    { "q8_0_int8_components_stay_within_half_precision_of_exact", q8_0_int8_components_stay_within_half_precision_of_exact },
    { "sdx_converts_to_sd_clis_bytes_at_every_type", sdx_converts_to_sd_clis_bytes_at_every_type },
    { "type_rule_patterns_match_as_regex_search", type_rule_patterns_match_as_regex_search },
    { "convert_round_trip_reads_back_the_quantized_values", convert_round_trip_reads_back_the_quantized_values },
    { "gguf_converts_to_safetensors_and_to_other_types", gguf_converts_to_safetensors_and_to_other_types },
    { "a_lora_merged_into_a_quantized_model_saves_requantized", a_lora_merged_into_a_quantized_model_saves_requantized },
    { "a_lora_on_a_quantized_model_merges_as_on_its_f32_values", a_lora_on_a_quantized_model_merges_as_on_its_f32_values },
    { "convert_fails_cleanly_at_every_allocation", convert_fails_cleanly_at_every_allocation },
    { "sdx_converts_from_the_command_line", sdx_converts_from_the_command_line },
    { "q8_0_kept_quantized_generates_as_dequantized_at_load", q8_0_kept_quantized_generates_as_dequantized_at_load },
    { "quantized_convolution_layout_opens_only_where_marked", quantized_convolution_layout_opens_only_where_marked },
    { "quantized_convolutions_convert_load_and_generate", quantized_convolutions_convert_load_and_generate },
    { 0, 0 }
};
SDX_TEST_SUITE(gguf, gguf_cases)
