#pragma once
#include "core.c"
/* ===================================================================== */
/*  GGUF files: ggml's checkpoint format, read into a tensor table        */
/* ===================================================================== */
/* Layout (version 2 or 3, little-endian):
 *   "GGUF", u32 version, u64 n_tensors, u64 n_kv,
 *   n_kv x (string key, u32 value type, value),
 *   n_tensors x (string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset),
 *   zero padding to the alignment, then the data section.
 * A string is a u64 byte count and the bytes (no NUL). ne[0] is the
 * innermost dimension (the row), so the row-major shape is ne reversed.
 * The alignment is general.alignment (u32, a power of two) or 32. Each
 * tensor's offset, relative to the data section, is where the one before
 * it ended, padded to the alignment (ggml's own rule), and its bytes are
 * inside the file. The last tensor's padding may be missing:
 * stable-diffusion.cpp's writer stops after the last byte.
 *
 * A block-quantized tensor's ne[0] is whole blocks (ggml's rule), except
 * in files marked SDX__GGUF_CONV_KEY (sdx's --quantize-convolutions):
 * there a 4-D one (a convolution) has whole blocks in ne[0] x ne[1] x
 * ne[2], in_channels x kh x kw, a layout ggml refuses to load.
 *
 * Every count, length and offset is checked against the bytes left
 * before anything is allocated or read; arrays grow as entries are
 * actually parsed, so a huge count in a small file costs nothing. */

#define SDX__GGUF_ALIGNMENT 32u     /* when general.alignment is absent */
#define SDX__GGUF_MAX_DIMS 4        /* ggml's GGML_MAX_DIMS */
#define SDX__GGUF_CONV_KEY "sdx.quantized_convolutions"

typedef struct sdx__gguf_tensor {
    sdx_tensor t;       /* t.name is set at the end (strings move while they grow) */
    size_t name_at;     /* the name's offset in strings */
    uint64_t offset;    /* in the data section */
    size_t bytes;
} sdx__gguf_tensor;

typedef struct sdx__gguf {
    sdx_ctx *ctx;
    const char *path;
    const unsigned char *base;
    size_t size, pos;               /* the file image and the read cursor */
    uint32_t version;
    uint64_t alignment;
    int conv_rows;                  /* SDX__GGUF_CONV_KEY is true */
    sdx__gguf_tensor *tensors;
    int n, cap;
    size_t *meta_at;                /* key, value offsets in strings, pairwise */
    int n_meta, cap_meta;
    const char **meta_kv;           /* the same as pointers, set at the end */
    char *strings;                  /* names and metadata text, NUL-terminated */
    size_t len, cap_strings;
    const unsigned char *data;      /* the data section */
    size_t data_size;
    /* A file read on demand (a read callback): called before the cursor
     * passes byte `end`, to make base[0, end) hold the file's bytes. */
    int (*need)(void *user, size_t end);
    void *need_user;
} sdx__gguf;

/* ggml's tensor types by id: the name and the sdx dtype, or -1 where sdx
 * has none (named in the message). */
typedef struct sdx__ggml_type { const char *name; int dtype; } sdx__ggml_type;

static const sdx__ggml_type sdx__ggml_types[] = {
    { "F32", SDX_F32 },   { "F16", SDX_F16 },   { "Q4_0", SDX_Q4_0 },  { "Q4_1", SDX_Q4_1 },
    { "Q4_2 (removed from ggml)", -1 },         { "Q4_3 (removed from ggml)", -1 },
    { "Q5_0", SDX_Q5_0 }, { "Q5_1", SDX_Q5_1 }, { "Q8_0", SDX_Q8_0 },  { "Q8_1", -1 },
    { "Q2_K", SDX_Q2_K }, { "Q3_K", SDX_Q3_K }, { "Q4_K", SDX_Q4_K },  { "Q5_K", SDX_Q5_K },
    { "Q6_K", SDX_Q6_K }, { "Q8_K", -1 },       { "IQ2_XXS", -1 },     { "IQ2_XS", -1 },
    { "IQ3_XXS", -1 },    { "IQ1_S", -1 },      { "IQ4_NL", -1 },      { "IQ3_S", -1 },
    { "IQ2_S", -1 },      { "IQ4_XS", -1 },     { "I8", -1 },          { "I16", -1 },
    { "I32", SDX_I32 },   { "I64", SDX_I64 },   { "F64", SDX_F64 },    { "IQ1_M", -1 },
    { "BF16", SDX_BF16 },
};

/* GGUF value types by id: the byte size of a scalar (0: string/array). */
enum { SDX__GGUF_BOOL = 7, SDX__GGUF_STRING = 8, SDX__GGUF_ARRAY = 9, SDX__GGUF_NTYPES = 13 };
static const char *const sdx__gguf_type_names[SDX__GGUF_NTYPES] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"
};
static const unsigned char sdx__gguf_type_sizes[SDX__GGUF_NTYPES] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

static int sdx__gguf_is(const void *base, size_t size) { return size >= 4 && !memcmp(base, "GGUF", 4); }

static uint64_t sdx__gguf_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint64_t sdx__gguf_pad(uint64_t x, uint64_t align) { return x + (align - x % align) % align; }

/* The cursor moves over n bytes that must be in the file. */
static int sdx__gguf_take(sdx__gguf *g, uint64_t n, const char *what, const unsigned char **p) {
    int rc;
    *p = NULL;
    if (n > g->size - g->pos)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: %s at byte %zu needs %llu bytes but the file ends at byte %zu (truncated?)",
                         g->path, what, g->pos, (unsigned long long)n, g->size);
    if (g->need && (rc = g->need(g->need_user, g->pos + (size_t)n)) != SDX_OK) return rc;
    *p = g->base + g->pos;
    g->pos += (size_t)n;
    return SDX_OK;
}

static int sdx__gguf_uint(sdx__gguf *g, int bytes, const char *what, uint64_t *v) {
    const unsigned char *p = NULL;
    int rc = sdx__gguf_take(g, (uint64_t)bytes, what, &p);
    if (rc == SDX_OK) *v = sdx__gguf_le(p, bytes);
    return rc;
}

static int sdx__gguf_u32(sdx__gguf *g, const char *what, uint32_t *v) {
    uint64_t x = 0;
    int rc = sdx__gguf_uint(g, 4, what, &x);
    *v = (uint32_t)x;
    return rc;
}

static int sdx__gguf_string(sdx__gguf *g, const char *what, const unsigned char **s, size_t *len) {
    uint64_t n = 0;
    int rc = sdx__gguf_uint(g, 8, what, &n);
    *s = NULL;
    if (rc == SDX_OK && n > g->size - g->pos)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: %s at byte %zu is %llu bytes long but only %zu bytes are left in the file",
                         g->path, what, g->pos - 8, (unsigned long long)n, g->size - g->pos);
    if (rc == SDX_OK) rc = sdx__gguf_take(g, n, what, s);
    *len = (size_t)n;
    return rc;
}

/* Appends n bytes and a NUL to strings; *at receives their offset. */
static int sdx__gguf_keep(sdx__gguf *g, const void *s, size_t n, size_t *at) {
    if (g->cap_strings - g->len < n + 1) {
        size_t cap = g->cap_strings ? g->cap_strings : 4096;
        char *p;
        while (cap - g->len < n + 1) {
            if (cap > SIZE_MAX / 2) return sdx__nomem(g->ctx, "GGUF strings", SIZE_MAX);
            cap *= 2;
        }
        if (!(p = (char *)sdx__realloc(g->ctx, g->strings, cap))) return sdx__nomem(g->ctx, "GGUF strings", cap);
        g->strings = p;
        g->cap_strings = cap;
    }
    memcpy(g->strings + g->len, s, n);
    g->strings[g->len + n] = 0;
    *at = g->len;
    g->len += n + 1;
    return SDX_OK;
}

/* An array of `each`-byte entries with room for index n: *list grown
 * by doubling when it has not. */
static int sdx__gguf_grow(sdx__gguf *g, void *list, int n, int *cap, size_t each, const char *what, void **out) {
    int want = *cap ? 2 * *cap : 64;
    *out = list;
    if (n < *cap) return SDX_OK;
    if (*cap > INT32_MAX / 2) return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: more than %d %s", g->path, INT32_MAX / 2, what);
    if (!(*out = sdx__realloc(g->ctx, list, each * (size_t)want))) {
        *out = list;
        return sdx__nomem(g->ctx, what, each * (size_t)want);
    }
    *cap = want;
    return SDX_OK;
}

/* A scalar value as text (what sdx_st_meta returns for it). */
static void sdx__gguf_scalar_text(uint32_t type, uint64_t v, char *buf, size_t size) {
    int bits = 8 * sdx__gguf_type_sizes[type];
    int64_t sv = bits < 64 && (v >> (bits - 1)) & 1 ? (int64_t)(v | ~((UINT64_C(1) << bits) - 1)) : (int64_t)v;
    switch (type) {
    case 1: case 3: case 5: case 11: snprintf(buf, size, "%lld", (long long)sv); break;
    case 6: { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); snprintf(buf, size, "%.9g", (double)f); break; }
    case 12: { double d; memcpy(&d, &v, 8); snprintf(buf, size, "%.17g", d); break; }
    case 7: snprintf(buf, size, "%s", v ? "true" : "false"); break;
    default: snprintf(buf, size, "%llu", (unsigned long long)v); break;
    }
}

/* An array value: checked and stepped over; its text says what it holds. */
static int sdx__gguf_array(sdx__gguf *g, const char *key, char *text, size_t size) {
    uint32_t type;
    uint64_t n = 0;
    int rc;
    const unsigned char *p = NULL;
    if ((rc = sdx__gguf_u32(g, "an array's element type", &type)) != SDX_OK) return rc;
    if ((rc = sdx__gguf_uint(g, 8, "an array's length", &n)) != SDX_OK) return rc;
    if (type >= SDX__GGUF_NTYPES || type == SDX__GGUF_ARRAY)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: key '%s': array element type %u is not a GGUF scalar or string type", g->path,
                         key, (unsigned)type);
    snprintf(text, size, "[%llu %s values]", (unsigned long long)n, sdx__gguf_type_names[type]);
    if (type != SDX__GGUF_STRING) {
        uint64_t each = sdx__gguf_type_sizes[type];
        if (n > (g->size - g->pos) / each)
            return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: key '%s': an array of %llu %s values runs past the end of the file", g->path,
                             key, (unsigned long long)n, sdx__gguf_type_names[type]);
        return sdx__gguf_take(g, n * each, "an array", &p);
    }
    if (n > (g->size - g->pos) / 8)     /* each string takes 8 bytes at least */
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: key '%s': an array of %llu strings runs past the end of the file", g->path, key,
                         (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        if ((rc = sdx__gguf_string(g, "a string in an array", &p, &len)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* general.alignment: a u32 power of two, at most once. */
static int sdx__gguf_alignment(sdx__gguf *g, uint32_t type, uint64_t v, int *seen) {
    if (*seen) return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: general.alignment appears twice", g->path);
    *seen = 1;
    if (type != 4)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: general.alignment has type %s (expected uint32)", g->path,
                         type < SDX__GGUF_NTYPES ? sdx__gguf_type_names[type] : "?");
    if (v == 0 || (v & (v - 1)))
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: general.alignment %llu is not a power of two", g->path, (unsigned long long)v);
    g->alignment = v;
    return SDX_OK;
}

/* One key/value pair, kept as text: strings as they are (to their first
 * NUL), scalars printed, arrays summarised. */
static int sdx__gguf_kv(sdx__gguf *g, int index, int *alignment_seen) {
    const unsigned char *key = NULL, *s = NULL;
    size_t key_len, len, at;
    uint32_t type;
    uint64_t v = 0;
    char name[96], text[96];
    void *list;
    int rc;
    if ((rc = sdx__gguf_string(g, "a metadata key", &key, &key_len)) != SDX_OK) return rc;
    snprintf(name, sizeof name, "%.*s", (int)SDX__MIN(key_len, (size_t)64), (const char *)key);
    if ((rc = sdx__gguf_u32(g, "a metadata value type", &type)) != SDX_OK) return rc;
    if (type >= SDX__GGUF_NTYPES)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: key %d ('%s') has value type %u (GGUF knows 0..12)", g->path, index, name,
                         (unsigned)type);
    rc = sdx__gguf_grow(g, g->meta_at, 2 * g->n_meta + 1, &g->cap_meta, sizeof *g->meta_at, "GGUF metadata", &list);
    g->meta_at = (size_t *)list;
    if (rc != SDX_OK) return rc;
    if ((rc = sdx__gguf_keep(g, key, key_len, &g->meta_at[2 * g->n_meta])) != SDX_OK) return rc;
    if (type == SDX__GGUF_STRING) {
        if ((rc = sdx__gguf_string(g, "a metadata string", &s, &len)) != SDX_OK) return rc;
        if ((rc = sdx__gguf_keep(g, s, len, &at)) != SDX_OK) return rc;
    } else {
        if (type == SDX__GGUF_ARRAY) rc = sdx__gguf_array(g, name, text, sizeof text);
        else if ((rc = sdx__gguf_uint(g, sdx__gguf_type_sizes[type], "a metadata value", &v)) == SDX_OK)
            sdx__gguf_scalar_text(type, v, text, sizeof text);
        if (rc != SDX_OK) return rc;
        if (key_len == 17 && !memcmp(key, "general.alignment", 17) && (rc = sdx__gguf_alignment(g, type, v, alignment_seen)) != SDX_OK)
            return rc;
        if (key_len == sizeof SDX__GGUF_CONV_KEY - 1 && !memcmp(key, SDX__GGUF_CONV_KEY, key_len))
            g->conv_rows = type == SDX__GGUF_BOOL && v != 0;
        if ((rc = sdx__gguf_keep(g, text, strlen(text), &at)) != SDX_OK) return rc;
    }
    g->meta_at[2 * g->n_meta + 1] = at;
    g->n_meta++;
    return SDX_OK;
}

/* The dims of a tensor: ne[] reversed into a row-major shape, the count
 * and byte size checked for overflow, the row whole blocks (ne[0], or a
 * convolution's ne[0..2] in a file marked for them). The product
 * of the nonzero dims must fit too, so that no partial product overflows
 * in whatever order it is taken (an empty tensor with huge dims). */
static int sdx__gguf_shape(sdx__gguf *g, sdx__gguf_tensor *e, const char *name, uint32_t n_dims, const uint64_t *ne) {
    size_t block_bytes;
    int block = sdx_dtype_block(e->t.dtype, &block_bytes);
    uint64_t nonzero = 1, count, row = n_dims ? ne[0] : 1;
    int empty = 0;
    for (uint32_t i = 0; i < n_dims; i++) {
        if (ne[i] > (uint64_t)INT64_MAX || (ne[i] && nonzero > (uint64_t)INT64_MAX / ne[i]))
            return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': dimension %u (%llu) makes the element count overflow", g->path,
                             name, (unsigned)i, (unsigned long long)ne[i]);
        if (ne[i]) nonzero *= ne[i];
        else empty = 1;
        e->t.shape[n_dims - 1 - i] = (int64_t)ne[i];
    }
    count = empty ? 0 : nonzero;
    e->t.ndim = (int)n_dims;
    if (g->conv_rows && n_dims == 4) row = ne[0] * ne[1] * ne[2];     /* <= nonzero unless the tensor is empty */
    if (row % (uint64_t)block)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': rows of %llu values are not whole %s blocks of %d", g->path, name,
                         (unsigned long long)row, sdx_dtype_name(e->t.dtype), block);
    if (count / (uint64_t)block > (uint64_t)SIZE_MAX / block_bytes)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': %llu values of %s overflow a byte size", g->path, name,
                         (unsigned long long)count, sdx_dtype_name(e->t.dtype));
    e->bytes = (size_t)(count / (uint64_t)block) * block_bytes;
    return SDX_OK;
}

/* One tensor info: name, dims, type, offset. */
static int sdx__gguf_tensor_info(sdx__gguf *g, int index) {
    const unsigned char *s = NULL;
    size_t len;
    uint32_t n_dims, type;
    uint64_t ne[SDX__GGUF_MAX_DIMS];
    char name[96];
    sdx__gguf_tensor *e;
    void *list;
    int rc = sdx__gguf_grow(g, g->tensors, g->n, &g->cap, sizeof *g->tensors, "GGUF tensors", &list);
    g->tensors = (sdx__gguf_tensor *)list;
    if (rc != SDX_OK) return rc;
    e = &g->tensors[g->n];
    memset(e, 0, sizeof *e);
    if ((rc = sdx__gguf_string(g, "a tensor name", &s, &len)) != SDX_OK) return rc;
    if (len == 0 || memchr(s, 0, len))
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor %d's name is empty or contains a NUL byte", g->path, index);
    snprintf(name, sizeof name, "%.*s", (int)SDX__MIN(len, (size_t)80), (const char *)s);
    if ((rc = sdx__gguf_keep(g, s, len, &e->name_at)) != SDX_OK) return rc;
    if ((rc = sdx__gguf_u32(g, "a tensor's dimension count", &n_dims)) != SDX_OK) return rc;
    if (n_dims > SDX__GGUF_MAX_DIMS)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s' has %u dimensions (GGUF allows at most %d)", g->path, name,
                         (unsigned)n_dims, SDX__GGUF_MAX_DIMS);
    for (uint32_t i = 0; i < n_dims; i++)
        if ((rc = sdx__gguf_uint(g, 8, "a tensor dimension", &ne[i])) != SDX_OK) return rc;
    if ((rc = sdx__gguf_u32(g, "a tensor type", &type)) != SDX_OK) return rc;
    if (type >= SDX__ARRAY_LEN(sdx__ggml_types))
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s' has ggml type %u, which this reader does not know", g->path, name,
                         (unsigned)type);
    if (sdx__ggml_types[type].dtype < 0)
        return sdx__fail(g->ctx, SDX_ERR_UNSUPPORTED, "%s: tensor '%s' has ggml type %s, which sdx does not read (it reads F32, F16, BF16, "
                         "F64, I32, I64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q2_K..Q6_K)", g->path, name, sdx__ggml_types[type].name);
    e->t.dtype = (sdx_dtype)sdx__ggml_types[type].dtype;
    if ((rc = sdx__gguf_shape(g, e, name, n_dims, ne)) != SDX_OK) return rc;
    if ((rc = sdx__gguf_uint(g, 8, "a tensor offset", &e->offset)) != SDX_OK) return rc;
    g->n++;
    return SDX_OK;
}

/* Places the data section and every tensor in it (see the layout above). */
static int sdx__gguf_place(sdx__gguf *g) {
    uint64_t start = sdx__gguf_pad(g->pos, g->alignment), expect = 0;
    if (start > g->size) {
        if (g->n) return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: the file ends at byte %zu, before its data section (byte %llu)", g->path,
                                   g->size, (unsigned long long)start);
        start = g->size;
    }
    g->data = g->base + start;
    g->data_size = g->size - (size_t)start;
    for (int i = 0; i < g->n; i++) {
        sdx__gguf_tensor *e = &g->tensors[i];
        const char *name = g->strings + e->name_at;
        if (e->offset != expect)
            return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s' has data offset %llu, expected %llu (tensors follow one another, "
                             "each padded to %llu bytes)", g->path, name, (unsigned long long)e->offset, (unsigned long long)expect,
                             (unsigned long long)g->alignment);
        if (e->bytes > g->data_size || e->offset > g->data_size - e->bytes)
            return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': %zu bytes at data offset %llu run past the end of the file "
                             "(the data section has %zu bytes; truncated?)", g->path, name, e->bytes, (unsigned long long)e->offset,
                             g->data_size);
        e->t.data = (void *)(g->data + e->offset);
        expect = sdx__gguf_pad(e->offset + e->bytes, g->alignment);
    }
    return SDX_OK;
}

/* Names and metadata as pointers, once strings no longer moves. */
static int sdx__gguf_finish(sdx__gguf *g) {
    for (int i = 0; i < g->n; i++) g->tensors[i].t.name = g->strings + g->tensors[i].name_at;
    g->meta_kv = (const char **)sdx__calloc(g->ctx, (size_t)(2 * g->n_meta + 1), sizeof *g->meta_kv);
    if (!g->meta_kv) return sdx__nomem(g->ctx, "GGUF metadata", sizeof *g->meta_kv * (size_t)(2 * g->n_meta + 1));
    for (int i = 0; i < 2 * g->n_meta; i++) g->meta_kv[i] = g->strings + g->meta_at[i];
    return SDX_OK;
}

static int sdx__gguf_header(sdx__gguf *g, uint64_t *n_tensors, uint64_t *n_kv) {
    const unsigned char *p = NULL;
    uint64_t left;
    int rc;
    if (!sdx__gguf_is(g->base, g->size)) return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: not a GGUF file (no 'GGUF' magic)", g->path);
    if (g->size < 24)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: %zu bytes is too short for a GGUF header (24 bytes)", g->path, g->size);
    if ((rc = sdx__gguf_take(g, 4, "the magic", &p)) != SDX_OK || (rc = sdx__gguf_u32(g, "the version", &g->version)) != SDX_OK)
        return rc;
    if (g->version && (g->version & 0xffffu) == 0)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: GGUF version field 0x%08x looks big-endian; sdx reads little-endian GGUF",
                         g->path, (unsigned)g->version);
    if (g->version < 2 || g->version > 3)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: GGUF version %u (sdx reads versions 2 and 3)", g->path, (unsigned)g->version);
    if ((rc = sdx__gguf_uint(g, 8, "the tensor count", n_tensors)) != SDX_OK) return rc;
    if ((rc = sdx__gguf_uint(g, 8, "the key/value count", n_kv)) != SDX_OK) return rc;
    /* the least each entry takes: a key (8) + type (4) + 1 byte; a name
     * (8) + n_dims (4) + type (4) + offset (8) */
    left = g->size - g->pos;
    if (*n_kv > left / 13 || *n_tensors > left / 24 || *n_kv * 13 > left - *n_tensors * 24)
        return sdx__fail(g->ctx, SDX_ERR_FORMAT, "%s: %llu tensors and %llu key/value pairs cannot fit in the %llu bytes after the header",
                         g->path, (unsigned long long)*n_tensors, (unsigned long long)*n_kv, (unsigned long long)left);
    return SDX_OK;
}

static void sdx__gguf_free(sdx__gguf *g) {
    sdx__free(g->ctx, g->tensors);
    sdx__free(g->ctx, g->meta_at);
    sdx__free(g->ctx, (void *)g->meta_kv);
    sdx__free(g->ctx, g->strings);
    memset(g, 0, sizeof *g);
}

/* Parses the file image base[0, size) into g (tensors point into it);
 * on failure g holds nothing. `path` names the file in messages. need
 * (may be NULL; see sdx__gguf) brings in the header's bytes as parsed. */
static int sdx__gguf_parse_on_demand(sdx_ctx *ctx, const void *base, size_t size, const char *path,
                                     int (*need)(void *user, size_t end), void *need_user, sdx__gguf *g) {
    uint64_t n_tensors = 0, n_kv = 0;
    int rc, alignment_seen = 0;
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->path = path;
    g->base = (const unsigned char *)base;
    g->size = size;
    g->need = need;
    g->need_user = need_user;
    g->alignment = SDX__GGUF_ALIGNMENT;
    rc = sdx__gguf_header(g, &n_tensors, &n_kv);
    for (uint64_t i = 0; rc == SDX_OK && i < n_kv; i++) rc = sdx__gguf_kv(g, (int)i, &alignment_seen);
    for (uint64_t i = 0; rc == SDX_OK && i < n_tensors; i++) rc = sdx__gguf_tensor_info(g, (int)i);
    if (rc == SDX_OK) rc = sdx__gguf_place(g);
    if (rc == SDX_OK) rc = sdx__gguf_finish(g);
    if (rc != SDX_OK) sdx__gguf_free(g);
    return rc;
}

static int sdx__gguf_parse(sdx_ctx *ctx, const void *base, size_t size, const char *path, sdx__gguf *g) {
    return sdx__gguf_parse_on_demand(ctx, base, size, path, NULL, NULL, g);
}

/* ---- writing ------------------------------------------------------------ */
/* What stable-diffusion.cpp's converter writes and ggml reads: version 3,
 * no key/value pairs (so the alignment is 32), the tensor infos in the
 * given order, each tensor's data at the next multiple of 32 after the
 * last one's, and the last one padded too (ggml's own writer pads it;
 * sd-cli's streaming writer leaves that padding off). A file with
 * quantized convolutions has one pair, SDX__GGUF_CONV_KEY = true. */

/* Produces the bytes of tensor i of a file being written: *data points at
 * sdx_tensor_nbytes of them until the next call. */
typedef int (*sdx__fill_fn)(void *user, int i, const void **data);

/* The ggml type id of a dtype (-1: GGUF has none, e.g. U8). */
static int sdx__ggml_type_of(sdx_dtype t) {
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__ggml_types); i++)
        if (sdx__ggml_types[i].dtype == (int)t) return i;
    return -1;
}

/* ne[] of t as GGUF stores it: the row-major shape reversed, without its
 * leading 1s (ggml_n_dims), at least one dim. Returns the count, or 0
 * when more than 4 remain. */
static int sdx__gguf_ne(const sdx_tensor *t, uint64_t *ne) {
    int first = 0, n;
    while (first < t->ndim - 1 && t->shape[first] == 1) first++;
    n = t->ndim - first;
    if (n > SDX__GGUF_MAX_DIMS) return 0;
    if (n <= 0) {
        ne[0] = 1;
        return 1;
    }
    for (int i = 0; i < n; i++) ne[i] = (uint64_t)t->shape[t->ndim - 1 - i];
    return n;
}

static unsigned char *sdx__gguf_put(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

/* Checks every tensor; *size gets the header's size, padded. */
static int sdx__gguf_header_size(sdx_ctx *ctx, const char *path, const sdx_tensor *t, int n, int conv_rows, size_t *size) {
    size_t bytes;
    uint64_t ne[SDX__GGUF_MAX_DIMS];
    *size = 24 + (conv_rows ? 8 + sizeof SDX__GGUF_CONV_KEY - 1 + 4 + 1 : 0);
    for (int i = 0; i < n; i++) {
        int dims = sdx__gguf_ne(&t[i], ne);
        char sh[128];
        if (!t[i].name || !*t[i].name || !sdx__shape_bytes(t[i].dtype, t[i].ndim, t[i].shape, &bytes))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: tensor %d has no name or an invalid shape/dtype", path, i);
        if (sdx__ggml_type_of(t[i].dtype) < 0 || !dims)
            return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "%s: tensor '%s' (%s %s) cannot go into a GGUF file (it holds float and "
                             "block types, I32, I64 and F64, in at most 4 dims besides leading 1s)", path, t[i].name,
                             sdx_dtype_name(t[i].dtype), sdx_shape_str(&t[i], sh, sizeof sh));
        *size += 8 + strlen(t[i].name) + 4 + 8 * (size_t)dims + 4 + 8;
    }
    *size = (size_t)sdx__gguf_pad(*size, SDX__GGUF_ALIGNMENT);
    return SDX_OK;
}

/* Writes tensors t[0..n) (name, dtype and shape; the bytes from fill, or
 * t[i].data without one) to path through a temporary file; conv_rows:
 * some are convolutions quantized in rows of in_channels x kh x kw. */
static int sdx__gguf_write(sdx_ctx *ctx, const char *path, const sdx_tensor *t, int n, int conv_rows, sdx__fill_fn fill,
                           void *user) {
    static const unsigned char zeros[SDX__GGUF_ALIGNMENT] = { 0 };
    size_t size;
    unsigned char *h, *p;
    uint64_t offset = 0, ne[SDX__GGUF_MAX_DIMS];
    sdx__tmpfile f;
    int rc = sdx__gguf_header_size(ctx, path, t, n, conv_rows, &size);
    if (rc != SDX_OK) return rc;
    if (!(h = (unsigned char *)sdx__calloc(ctx, 1, size))) return sdx__nomem(ctx, "GGUF header", size);
    memcpy(h, "GGUF", 4);
    p = sdx__gguf_put(h + 4, 3, 4);
    p = sdx__gguf_put(p, (uint64_t)n, 8);
    p = sdx__gguf_put(p, conv_rows ? 1 : 0, 8);
    if (conv_rows) {
        p = sdx__gguf_put(p, sizeof SDX__GGUF_CONV_KEY - 1, 8);
        memcpy(p, SDX__GGUF_CONV_KEY, sizeof SDX__GGUF_CONV_KEY - 1);
        p = sdx__gguf_put(p + sizeof SDX__GGUF_CONV_KEY - 1, SDX__GGUF_BOOL, 4);
        p = sdx__gguf_put(p, 1, 1);
    }
    for (int i = 0; i < n; i++) {
        size_t len = strlen(t[i].name);
        int dims = sdx__gguf_ne(&t[i], ne);
        p = sdx__gguf_put(p, len, 8);
        memcpy(p, t[i].name, len);
        p = sdx__gguf_put(p + len, (uint64_t)dims, 4);
        for (int d = 0; d < dims; d++) p = sdx__gguf_put(p, ne[d], 8);
        p = sdx__gguf_put(p, (uint64_t)sdx__ggml_type_of(t[i].dtype), 4);
        p = sdx__gguf_put(p, offset, 8);
        offset = sdx__gguf_pad(offset + sdx_tensor_nbytes(&t[i]), SDX__GGUF_ALIGNMENT);
    }
    rc = sdx__tmpfile_open(ctx, &f, path);
    if (rc == SDX_OK) sdx__tmpfile_write(&f, h, size);
    sdx__free(ctx, h);
    if (rc != SDX_OK) return rc;
    for (int i = 0; rc == SDX_OK && i < n; i++) {
        size_t bytes = sdx_tensor_nbytes(&t[i]);
        const void *data = t[i].data;
        if (fill) rc = fill(user, i, &data);
        if (rc != SDX_OK) break;
        sdx__tmpfile_write(&f, data, bytes);
        sdx__tmpfile_write(&f, zeros, (size_t)(sdx__gguf_pad(bytes, SDX__GGUF_ALIGNMENT) - bytes));
    }
    if (rc == SDX_OK) return sdx__tmpfile_commit(&f);
    sdx__tmpfile_abort(&f);
    return rc;
}
