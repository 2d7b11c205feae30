#pragma once
#include "api_safetensors.h"
#include "core.c"
#include "json.c"
#include "gguf.c"

/* ===================================================================== */
/*  Load: safetensors files and model weight sets                         */
/* ===================================================================== */
/* Layout: u64 little-endian header length N, N bytes of JSON, then the
 * data section. The header maps names to {dtype, shape, data_offsets}
 * relative to the data section; "__metadata__" maps strings to strings.
 * The rules enforced here are the reference implementation's: the header
 * fits the file, dtypes are known, each byte span is exactly shape x
 * dtype size, spans tile the data section with no overlap, gap or
 * trailing bytes, and names are unique. A GGUF file (core/gguf.c) fills
 * the same table, so every model part loads from either. */

#define SDX__ST_MAX_HEADER ((uint64_t)100 << 20)   /* 100 MB, as the reference */

typedef struct sdx__st_entry {
    sdx_tensor t;
    uint64_t begin, end;
    unsigned char read;          /* a read callback's bytes are in t.data */
    unsigned char kept;          /* ... and stay: something views them */
} sdx__st_entry;

struct sdx_st {
    sdx_ctx *ctx;
    char *path;
    const unsigned char *base;   /* whole file image */
    size_t size;
    sdx__map map;                /* base and size, when opened from a file */
    const unsigned char *data;   /* data section */
    size_t data_size;
    sdx__json_doc doc;           /* owns names and metadata strings */
    char *strings;               /* the same for a GGUF file */
    sdx__st_entry *entries;
    int n;
    int *table;                  /* open-addressing name -> index (+1) */
    size_t table_size;
    const char **meta_kv;        /* key, value, key, value, ... */
    int n_meta;
    void **copies;               /* aligned copies of misaligned tensors */
    int n_copies;
    sdx_read_fn read;            /* opened from read callbacks: bytes come */
    void *user;                  /* in on demand, into anon (base and size) */
    sdx__anon anon;
    size_t have;                 /* bytes [0, have) are read */
    int drop_reads;              /* low-memory mode: released tensors go, */
    sdx__refill refill;          /* and are read again at their next use */
};

/* ---- sources ----------------------------------------------------------- */

enum { SDX__SOURCE_PATH = 1, SDX__SOURCE_DATA, SDX__SOURCE_READ };

/* Which way a source gives its bytes; 0, with the error set, unless
 * exactly one is set. */
static int sdx__source_kind(sdx_ctx *ctx, const sdx_source *src, const char *who) {
    int n = src ? (src->path != NULL) + (src->data != NULL) + (src->read != NULL) : 0;
    if (n != 1) {
        sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: a source needs exactly one of path, data or read (%d given)", who, n);
        return 0;
    }
    return src->path ? SDX__SOURCE_PATH : src->data ? SDX__SOURCE_DATA : SDX__SOURCE_READ;
}

/* What messages call a source. */
static const char *sdx__source_name(const sdx_source *src) {
    return src->name ? src->name : src->path ? src->path : src->data ? "(memory)" : "(read callback)";
}

/* n bytes at `offset` through a read callback, its count checked. */
static int sdx__read_at(sdx_ctx *ctx, sdx_read_fn read, void *user, const char *name, uint64_t offset, size_t n, void *dst) {
    size_t got;
    if (n == 0) return SDX_OK;
    got = read(user, offset, n, dst);
    if (got != n)
        return sdx__fail(ctx, SDX_ERR_IO, "%s: the read callback returned %zu for the %zu bytes at offset %llu%s", name, got, n,
                         (unsigned long long)offset, got > n ? " (more than asked for)" : " (failed or short)");
    return SDX_OK;
}

/* A whole read-callback source in a new buffer, for formats that are
 * read at once (the vocabulary); at most max bytes. */
static int sdx__source_read_all(sdx_ctx *ctx, const sdx_source *src, size_t max, unsigned char **out) {
    const char *name = sdx__source_name(src);
    int rc;
    *out = NULL;
    if (src->size > max)
        return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: %zu bytes is more than the %zu this file may have", name, src->size, max);
    if (!(*out = (unsigned char *)sdx__malloc(ctx, src->size ? src->size : 1))) return sdx__nomem(ctx, name, src->size);
    if ((rc = sdx__read_at(ctx, src->read, src->user, name, 0, src->size, *out)) != SDX_OK) {
        sdx__free(ctx, *out);
        *out = NULL;
    }
    return rc;
}

/* A read callback's file up to byte `end` (at most its size), for the
 * header parsers. */
static int sdx__st_fill(sdx_st *st, size_t end) {
    int rc;
    if (!st->read || end <= st->have) return SDX_OK;
    rc = sdx__read_at(st->ctx, st->read, st->user, st->path, st->have, end - st->have, st->anon.base + st->have);
    if (rc == SDX_OK) st->have = end;
    return rc;
}

/* The GGUF parser's need: header bytes in growing chunks (its entries
 * are small and many), never past the file. */
static int sdx__st_gguf_need(void *user, size_t end) {
    sdx_st *st = (sdx_st *)user;
    size_t chunk = SDX__MAX(st->have, (size_t)65536);
    if (end <= st->have) return SDX_OK;
    return sdx__st_fill(st, SDX__MAX(end, st->size - st->have > chunk ? st->have + chunk : st->size));
}

/* The element types only: safetensors has no block-quantized dtypes. */
static int sdx__dtype_from_name(const char *s, sdx_dtype *out) {
    for (int i = 0; i < SDX_DTYPE_COUNT; i++)
        if (sdx_dtype_size((sdx_dtype)i) && !strcmp(s, sdx_dtype_name((sdx_dtype)i))) { *out = (sdx_dtype)i; return 1; }
    return 0;
}

static uint64_t sdx__hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;          /* FNV-1a */
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ull; }
    return h;
}

static int sdx__st_lookup(const sdx_st *st, const char *name) {
    size_t mask, i;
    if (!st->table_size) return -1;
    mask = st->table_size - 1;
    for (i = (size_t)sdx__hash_str(name) & mask;; i = (i + 1) & mask) {
        int slot = st->table[i];
        if (!slot) return -1;
        if (!strcmp(st->entries[slot - 1].t.name, name)) return slot - 1;
    }
}

static int sdx__st_cmp_begin(const void *a, const void *b) {
    const sdx__st_entry *x = *(const sdx__st_entry *const *)a, *y = *(const sdx__st_entry *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

static int sdx__st_parse_entry(sdx_st *st, const sdx__json *v, sdx__st_entry *e) {
    const char *name = v->key;
    const sdx__json *dt = sdx__json_get(v, "dtype"), *shape = sdx__json_get(v, "shape");
    const sdx__json *offs = sdx__json_get(v, "data_offsets"), *c;
    size_t bytes;
    int i = 0;
    if (v->type != SDX__JSON_OBJECT)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': header entry is not an object", st->path, name);
    if (!dt || dt->type != SDX__JSON_STRING || !shape || shape->type != SDX__JSON_ARRAY ||
        !offs || offs->type != SDX__JSON_ARRAY)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': needs string 'dtype', array 'shape' and array 'data_offsets'", st->path, name);
    if (!sdx__dtype_from_name(dt->str, &e->t.dtype))
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': unsupported dtype '%s' (supported: F32, F16, BF16, F64, I32, I64, U8)", st->path, name, dt->str);
    if (shape->len > SDX_MAX_DIMS)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': %zu dimensions (at most %d supported)", st->path, name, shape->len, SDX_MAX_DIMS);
    for (c = shape->child; c; c = c->next, i++) {
        uint64_t d;
        if (!sdx__json_uint64(c, &d) || d > (uint64_t)INT64_MAX)
            return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': shape entry %d is not a non-negative integer", st->path, name, i);
        e->t.shape[i] = (int64_t)d;
    }
    e->t.ndim = i;
    if (offs->len != 2 || !sdx__json_uint64(offs->child, &e->begin) || !sdx__json_uint64(offs->child->next, &e->end))
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets must be two non-negative integers", st->path, name);
    if (e->begin > e->end)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin", st->path, name,
                         (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > st->data_size)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] outside the data section (%zu bytes)",
                         st->path, name, (unsigned long long)e->begin, (unsigned long long)e->end, st->data_size);
    if (!sdx__shape_bytes(e->t.dtype, e->t.ndim, e->t.shape, &bytes))
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': shape size overflows", st->path, name);
    if ((uint64_t)bytes != e->end - e->begin) {
        char sh[128];
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': shape %s x %s needs %zu bytes, data_offsets span %llu",
                         st->path, name, sdx_shape_str(&e->t, sh, sizeof sh), sdx_dtype_name(e->t.dtype), bytes,
                         (unsigned long long)(e->end - e->begin));
    }
    e->t.name = name;
    e->t.data = (void *)(st->data + e->begin);
    return SDX_OK;
}

/* Data section tiling: sorted by begin, each span starts where the last
 * ended, the last ends at the end of the file. */
static int sdx__st_check_spans(sdx_st *st) {
    sdx__st_entry **order;
    uint64_t pos = 0;
    int rc = SDX_OK;
    if (st->n == 0) {
        if (st->data_size) return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: %zu bytes of data but no tensors", st->path, st->data_size);
        return SDX_OK;
    }
    order = (sdx__st_entry **)sdx__malloc(st->ctx, sizeof *order * (size_t)st->n);
    if (!order) return sdx__nomem(st->ctx, "safetensors index", sizeof *order * (size_t)st->n);
    for (int i = 0; i < st->n; i++) order[i] = &st->entries[i];
    qsort(order, (size_t)st->n, sizeof *order, sdx__st_cmp_begin);
    for (int i = 0; i < st->n && rc == SDX_OK; i++) {
        sdx__st_entry *e = order[i];
        if (e->begin < pos)
            rc = sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] overlap tensor '%s'", st->path,
                           e->t.name, (unsigned long long)e->begin, (unsigned long long)e->end, order[i - 1]->t.name);
        else if (e->begin > pos)
            rc = sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s': data_offsets start at %llu, leaving a gap after byte %llu",
                           st->path, e->t.name, (unsigned long long)e->begin, (unsigned long long)pos);
        pos = e->end;
    }
    if (rc == SDX_OK && pos != st->data_size)
        rc = sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: data section is %zu bytes but tensors cover %llu (truncated or trailing bytes)",
                       st->path, st->data_size, (unsigned long long)pos);
    sdx__free(st->ctx, order);
    return rc;
}

static int sdx__st_build_table(sdx_st *st) {
    size_t size = 16;
    while (size < (size_t)st->n * 2) size *= 2;
    st->table = (int *)sdx__calloc(st->ctx, size, sizeof(int));
    if (!st->table) return sdx__nomem(st->ctx, "safetensors name table", size * sizeof(int));
    st->table_size = size;
    for (int i = 0; i < st->n; i++) {
        size_t mask = size - 1, j;
        for (j = (size_t)sdx__hash_str(st->entries[i].t.name) & mask; st->table[j]; j = (j + 1) & mask)
            if (!strcmp(st->entries[st->table[j] - 1].t.name, st->entries[i].t.name))
                return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor '%s' appears twice in the header", st->path, st->entries[i].t.name);
        st->table[j] = i + 1;
    }
    return SDX_OK;
}

/* Tensors whose data is not aligned for their dtype get an aligned copy
 * (the format does not promise alignment; kernels load elements
 * directly). Quantized blocks are read byte by byte and need none. */
static int sdx__st_align(sdx_st *st) {
    for (int i = 0; i < st->n; i++) {
        sdx_tensor *t = &st->entries[i].t;
        size_t a = sdx_dtype_size(t->dtype), bytes = sdx_tensor_nbytes(t);
        void *copy, **list;
        if (a <= 1 || ((uintptr_t)t->data & (a - 1)) == 0) continue;
        copy = sdx__malloc(st->ctx, bytes);
        list = (void **)sdx__realloc(st->ctx, st->copies, sizeof(void *) * (size_t)(st->n_copies + 1));
        if (!copy || !list) {
            sdx__free(st->ctx, copy);
            if (list) st->copies = list;
            return sdx__nomem(st->ctx, t->name, bytes);
        }
        st->copies = list;
        if (st->read) st->entries[i].kept = 1;   /* read into the copy when needed */
        else memcpy(copy, t->data, bytes);
        st->copies[st->n_copies++] = copy;
        t->data = copy;
    }
    return SDX_OK;
}

/* Compared with its length: a key "__metadata__\u0000x" is not the table. */
static int sdx__st_is_metadata(const sdx__json *v) {
    return v->key_len == 12 && !memcmp(v->key, "__metadata__", 12);
}

/* A GGUF file into the table: its tensors, in file order, and its
 * key/value pairs as metadata text. */
static int sdx__st_parse_gguf(sdx_st *st) {
    sdx__gguf g;
    int rc = sdx__gguf_parse_on_demand(st->ctx, st->base, st->size, st->path, st->read ? sdx__st_gguf_need : NULL, st, &g);
    if (rc != SDX_OK) return rc;
    st->strings = g.strings;
    st->meta_kv = g.meta_kv;
    st->n_meta = g.n_meta;
    st->data = g.data;
    st->data_size = g.data_size;
    g.strings = NULL;
    g.meta_kv = NULL;
    st->entries = (sdx__st_entry *)sdx__calloc(st->ctx, (size_t)(g.n ? g.n : 1), sizeof *st->entries);
    if (!st->entries) rc = sdx__nomem(st->ctx, "GGUF entries", sizeof *st->entries * (size_t)g.n);
    for (int i = 0; rc == SDX_OK && i < g.n; i++) {
        st->entries[i].t = g.tensors[i].t;
        st->entries[i].begin = g.tensors[i].offset;
        st->entries[i].end = g.tensors[i].offset + g.tensors[i].bytes;
    }
    if (rc == SDX_OK) st->n = g.n;
    sdx__gguf_free(&g);
    if (rc == SDX_OK) rc = sdx__st_build_table(st);
    return rc == SDX_OK ? sdx__st_align(st) : rc;
}

static int sdx__st_parse_header(sdx_st *st) {
    uint64_t hlen = 0;
    const sdx__json *root, *v;
    int rc, n = 0;
    if ((rc = sdx__st_fill(st, SDX__MIN(st->size, (size_t)8))) != SDX_OK) return rc;
    if (sdx__gguf_is(st->base, st->size)) return sdx__st_parse_gguf(st);
    if (st->size < 8)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: %zu bytes is too short for a safetensors file (needs an 8-byte header length)", st->path, st->size);
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | st->base[i];
    if (hlen > SDX__ST_MAX_HEADER)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: header length %llu exceeds the %llu-byte limit (not a safetensors or GGUF file?)", st->path,
                         (unsigned long long)hlen, (unsigned long long)SDX__ST_MAX_HEADER);
    if (hlen > st->size - 8)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: header length %llu runs past the end of the %zu-byte file", st->path,
                         (unsigned long long)hlen, st->size);
    if ((rc = sdx__st_fill(st, 8 + (size_t)hlen)) != SDX_OK) return rc;
    st->data = st->base + 8 + hlen;
    st->data_size = st->size - 8 - (size_t)hlen;
    if ((rc = sdx__json_parse_named(st->ctx, (const char *)st->base + 8, (size_t)hlen, st->path, &st->doc)) != SDX_OK) return rc;
    root = st->doc.root;
    if (root->type != SDX__JSON_OBJECT)
        return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: header is not a JSON object", st->path);
    for (v = root->child; v; v = v->next) n += !sdx__st_is_metadata(v);
    st->entries = (sdx__st_entry *)sdx__calloc(st->ctx, (size_t)(n ? n : 1), sizeof *st->entries);
    if (!st->entries) return sdx__nomem(st->ctx, "safetensors entries", sizeof *st->entries * (size_t)n);
    for (v = root->child; v; v = v->next) {
        if (sdx__st_is_metadata(v)) {
            const sdx__json *m;
            if (v->type != SDX__JSON_OBJECT)
                return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: __metadata__ is not an object", st->path);
            if (st->meta_kv)    /* a second table would overrun the first's count */
                return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: __metadata__ appears twice in the header", st->path);
            st->meta_kv = (const char **)sdx__calloc(st->ctx, v->len * 2 + 1, sizeof(char *));
            if (!st->meta_kv) return sdx__nomem(st->ctx, "safetensors metadata", v->len * 2 * sizeof(char *));
            for (m = v->child; m; m = m->next) {
                if (m->type != SDX__JSON_STRING)
                    return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: __metadata__ value '%s' is not a string", st->path, m->key);
                st->meta_kv[2 * st->n_meta] = m->key;
                st->meta_kv[2 * st->n_meta + 1] = m->str;
                st->n_meta++;
            }
            continue;
        }
        if (v->key_len == 0 || strlen(v->key) != v->key_len)
            return sdx__fail(st->ctx, SDX_ERR_FORMAT, "%s: tensor name is empty or contains a NUL byte", st->path);
        if ((rc = sdx__st_parse_entry(st, v, &st->entries[st->n])) != SDX_OK) return rc;
        st->n++;
    }
    if ((rc = sdx__st_build_table(st)) != SDX_OK) return rc;
    if ((rc = sdx__st_check_spans(st)) != SDX_OK) return rc;
    return sdx__st_align(st);
}

SDX_API void sdx_st_close(sdx_st *st) {
    sdx_ctx *ctx;
    if (!st) return;
    ctx = st->ctx;
    if (st->drop_reads) sdx__refill_remove(ctx, &st->refill);
    for (int i = 0; i < st->n_copies; i++) sdx__free(ctx, st->copies[i]);
    sdx__free(ctx, st->copies);
    sdx__unmap_file(&st->map);
    sdx__anon_free(&st->anon);
    sdx__json_free(&st->doc);
    sdx__free(ctx, st->strings);
    sdx__free(ctx, st->entries);
    sdx__free(ctx, st->table);
    sdx__free(ctx, (void *)st->meta_kv);
    sdx__free(ctx, st->path);
    sdx__free(ctx, st);
}

static int sdx__st_new(sdx_ctx *ctx, const char *name, sdx_st **out) {
    sdx_st *st = (sdx_st *)sdx__calloc(ctx, 1, sizeof *st);
    *out = NULL;
    if (!st) return sdx__nomem(ctx, "safetensors file", sizeof *st);
    st->ctx = ctx;
    st->doc.ctx = ctx;
    if (!name) name = "(memory)";
    st->path = sdx__strdup(ctx, name);
    if (!st->path) { sdx__free(ctx, st); return sdx__nomem(ctx, "path", strlen(name) + 1); }
    *out = st;
    return SDX_OK;
}

SDX_API sdx_result sdx_st_open_source(sdx_ctx *ctx, const sdx_source *src, sdx_st **out) {
    sdx_st *st;
    int rc = SDX_OK, kind;
    if (!out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open_source: out is NULL");
    *out = NULL;
    if (!(kind = sdx__source_kind(ctx, src, "sdx_st_open_source"))) return SDX_ERR_INVALID_ARG;
    if ((rc = sdx__st_new(ctx, sdx__source_name(src), &st)) != SDX_OK) return (sdx_result)rc;
    if (kind == SDX__SOURCE_PATH) {
        rc = sdx__map_file(ctx, src->path, &st->map);
        st->base = st->map.base;
        st->size = st->map.size;
    } else if (kind == SDX__SOURCE_DATA) {
        st->base = (const unsigned char *)src->data;
        st->size = src->size;
    } else {
        st->read = src->read;
        st->user = src->user;
        rc = sdx__anon_reserve(ctx, src->size, st->path, &st->anon);
        st->base = st->anon.base;
        st->size = st->anon.size;
    }
    if (rc == SDX_OK) rc = sdx__st_parse_header(st);
    if (rc != SDX_OK) { sdx_st_close(st); return (sdx_result)rc; }
    for (int i = 0; st->read && i < st->n; i++) {   /* tensors the header's reads brought in whole */
        sdx__st_entry *e = &st->entries[i];
        e->read = !e->kept && (size_t)(st->data - st->base) + e->end <= st->have;
    }
    *out = st;
    return SDX_OK;
}

SDX_API sdx_result sdx_st_open_memory(sdx_ctx *ctx, const void *data, size_t size, const char *name, sdx_st **out) {
    sdx_source src;
    if (!out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open_memory: out is NULL");
    *out = NULL;
    if (!data && size) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open_memory: data is NULL");
    memset(&src, 0, sizeof src);
    src.data = data ? data : "";   /* an empty image is a format error, below */
    src.size = size;
    src.name = name;
    return sdx_st_open_source(ctx, &src, out);
}

SDX_API sdx_result sdx_st_open(sdx_ctx *ctx, const char *path, sdx_st **out) {
    sdx_source src;
    if (!out || !path) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_open: path and out are required");
    memset(&src, 0, sizeof src);
    src.path = path;
    return sdx_st_open_source(ctx, &src, out);
}

SDX_API const char *sdx_st_path(const sdx_st *st) { return st ? st->path : ""; }
SDX_API int sdx_st_count(const sdx_st *st) { return st ? st->n : 0; }
SDX_API const sdx_tensor *sdx_st_get(const sdx_st *st, int i) {
    return st && i >= 0 && i < st->n ? &st->entries[i].t : NULL;
}
SDX_API const sdx_tensor *sdx_st_find(const sdx_st *st, const char *name) {
    int i = st && name ? sdx__st_lookup(st, name) : -1;
    return i >= 0 ? &st->entries[i].t : NULL;
}
/* Whether a read callback's tensor is in the memory its bytes are read
 * into (not in an aligned copy). */
static int sdx__st_in_anon(const sdx_st *st, const void *p) {
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)st->anon.base;
    return a >= b && a - b < st->anon.size;
}

/* Drops the bytes under [p, p + n) from the process's memory; the next
 * read of them gives the same bytes. A mapped file's pages go and fault
 * back in from it. From read callbacks in low-memory mode
 * (sdx__st_drop_reads) the tensors wholly inside go, to be read again
 * through the callback at their next use (sdx__st_refill). A file in the
 * caller's memory is the caller's, and the aligned copies of misaligned
 * tensors stay. */
static void sdx__st_release(const sdx_st *cst, const void *p, size_t n) {
    sdx_st *st = (sdx_st *)cst;   /* what was read is state, not contents */
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    if (st && st->map.base) sdx__map_release(&st->map, p, n);
    for (int i = 0; st && st->drop_reads && i < st->n; i++) {
        sdx__st_entry *e = &st->entries[i];
        uintptr_t b = (uintptr_t)e->t.data;
        if (e->read && b >= lo && b <= hi && (size_t)(e->end - e->begin) <= hi - b && sdx__st_in_anon(st, e->t.data)) {
            sdx__anon_drop(&st->anon, e->t.data, (size_t)(e->end - e->begin));
            e->read = 0;
        }
    }
}

/* The entry of tensor t of st (from sdx_st_get/_find), or NULL. */
static sdx__st_entry *sdx__st_entry_of(const sdx_st *st, const sdx_tensor *t) {
    uintptr_t p = (uintptr_t)t, b = (uintptr_t)st->entries;
    size_t i;
    if (!st->n || p < b || p >= b + sizeof *st->entries * (size_t)st->n) return NULL;
    i = (size_t)(p - b) / sizeof *st->entries;
    return &st->entries[i].t == t ? &st->entries[i] : NULL;
}

/* Makes tensor t's bytes present: they are for a file or a buffer; from
 * read callbacks they are read at the first need. keep: something will
 * view them in place (a weight computing from them), so they stay. */
static int sdx__st_need(const sdx_st *cst, const sdx_tensor *t, int keep) {
    sdx_st *st = (sdx_st *)cst;   /* what was read is state, not contents */
    sdx__st_entry *e = st && st->read ? sdx__st_entry_of(st, t) : NULL;
    if (!e) return SDX_OK;
    if (!e->read) {
        int rc = sdx__read_at(st->ctx, st->read, st->user, st->path, (uint64_t)(st->data - st->base) + e->begin,
                              (size_t)(e->end - e->begin), e->t.data);
        if (rc != SDX_OK) return rc;
        e->read = 1;
    }
    if (keep) e->kept = 1;
    return SDX_OK;
}

/* A callback source's tensor nothing views any more (its values went
 * into a converted or uploaded copy): its memory goes back to the OS and
 * the next sdx__st_need reads it again. */
static void sdx__st_forget(const sdx_st *st, const sdx_tensor *t) {
    sdx__st_entry *e = st && st->read ? sdx__st_entry_of(st, t) : NULL;
    if (!e || !e->read || e->kept) return;
    sdx__anon_drop(&st->anon, e->t.data, sdx_tensor_nbytes(&e->t));
    e->read = 0;
}

/* A weight's bytes went into a copy that computes instead: the file's
 * pages go, or a callback source's memory. */
static void sdx__st_copied(const sdx_st *st, const sdx_tensor *t) {
    sdx__st_release(st, t->data, sdx_tensor_nbytes(t));
    sdx__st_forget(st, t);
}

/* A file from read callbacks in low-memory mode: the tensors under
 * [p, p + n) that sdx__st_release gave back, read again (an op's operand,
 * or host code about to read a weight: sdx__refill_need). */
static int sdx__st_refill(void *owner, const unsigned char *p, size_t n) {
    sdx_st *st = (sdx_st *)owner;
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    for (int i = 0; i < st->n; i++) {
        sdx__st_entry *e = &st->entries[i];
        uintptr_t b = (uintptr_t)e->t.data;
        int rc;
        if (!e->read && b < hi && b + (size_t)(e->end - e->begin) > lo && (rc = sdx__st_need(st, &e->t, 0)) != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* Low-memory mode for a file from read callbacks (sdx_model_desc.
 * low_memory): what the models release goes back to the OS as a mapped
 * file's pages do, and the callback reads it again when next needed.
 * Nothing to do for a path (its pages fault back in) or a buffer (the
 * caller's memory). */
static void sdx__st_drop_reads(sdx_st *st) {
    if (!st || !st->read || st->drop_reads) return;
    st->drop_reads = 1;
    st->refill.lo = st->anon.base;
    st->refill.hi = st->anon.base + st->anon.size;
    st->refill.fill = sdx__st_refill;
    st->refill.owner = st;
    sdx__refill_add(st->ctx, &st->refill);
}

/* The whole data section, for what reads all of a file (a LoRA and its
 * hash, saving a checkpoint): from read callbacks in one read, kept. */
static int sdx__st_need_all(const sdx_st *cst) {
    sdx_st *st = (sdx_st *)cst;
    unsigned char *data;
    int rc;
    if (!st || !st->read) return SDX_OK;
    data = st->anon.base + (st->data - st->base);
    if ((rc = sdx__read_at(st->ctx, st->read, st->user, st->path, (uint64_t)(st->data - st->base), st->data_size, data)) != SDX_OK)
        return rc;
    for (int i = 0; i < st->n; i++) {
        sdx__st_entry *e = &st->entries[i];
        if ((unsigned char *)e->t.data != data + e->begin) memcpy(e->t.data, data + e->begin, (size_t)(e->end - e->begin));
        e->read = e->kept = 1;
    }
    return SDX_OK;
}

SDX_API int sdx_st_meta_count(const sdx_st *st) { return st ? st->n_meta : 0; }
SDX_API sdx_result sdx_st_meta_at(const sdx_st *st, int i, const char **key, const char **value) {
    if (!st || i < 0 || i >= st->n_meta) return SDX_ERR_INVALID_ARG;
    if (key) *key = st->meta_kv[2 * i];
    if (value) *value = st->meta_kv[2 * i + 1];
    return SDX_OK;
}
SDX_API const char *sdx_st_meta(const sdx_st *st, const char *key) {
    for (int i = 0; st && i < st->n_meta; i++)
        if (!strcmp(st->meta_kv[2 * i], key)) return st->meta_kv[2 * i + 1];
    return NULL;
}

SDX_API sdx_result sdx_st_read_f32(sdx_ctx *ctx, const sdx_st *st, const char *name, sdx_tensor *out) {
    const sdx_tensor *t = sdx_st_find(st, name);
    int rc;
    memset(out, 0, sizeof *out);
    if (!t) return sdx__fail(ctx, SDX_ERR_MODEL, "%s: no tensor '%s'", st ? st->path : "?", name);
    if ((rc = sdx__st_need(st, t, 0)) != SDX_OK) return (sdx_result)rc;
    if ((rc = sdx_tensor_alloc(ctx, out, SDX_F32, t->ndim, t->shape)) != SDX_OK) return (sdx_result)rc;
    sdx__load_f32(t->data, t->dtype, 0, sdx_tensor_numel(t), (float *)out->data);
    sdx__st_forget(st, t);
    out->name = t->name;
    return SDX_OK;
}

/* ---- writing ---------------------------------------------------------- */

typedef struct sdx__buf { sdx_ctx *ctx; char *p; size_t len, cap; int failed; } sdx__buf;

static void sdx__buf_put(sdx__buf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 256;
        char *np;
        while (cap - b->len < n + 1) cap *= 2;
        np = (char *)sdx__realloc(b->ctx, b->p, cap);
        if (!np) { b->failed = 1; return; }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void sdx__buf_str(sdx__buf *b, const char *s) { sdx__buf_put(b, s, strlen(s)); }

static SDX__PRINTF(2, 3) void sdx__buf_fmt(sdx__buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sdx__buf_put(b, tmp, (size_t)SDX__MIN(n, (int)sizeof tmp - 1));
}

static void sdx__buf_json_string(sdx__buf *b, const char *s) {
    sdx__buf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { char e[2] = { '\\', (char)c }; sdx__buf_put(b, e, 2); }
        else if (c < 0x20) sdx__buf_fmt(b, "\\u%04x", c);
        else sdx__buf_put(b, (const char *)&c, 1);
    }
    sdx__buf_put(b, "\"", 1);
}

/* sdx_st_write with the bytes of tensor i from fill (see sdx__fill_fn)
 * where there is one: a converter writes one tensor at a time. */
static int sdx__st_write_stream(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors, const char *const *meta,
                                int n_meta, sdx__fill_fn fill, void *user) {
    sdx__buf h;
    uint64_t offset = 0;
    sdx__tmpfile f;
    int rc;
    unsigned char len8[8];
    if (!path || (n_tensors && !tensors) || n_tensors < 0 || n_meta < 0 || (n_meta && !meta))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_write: bad arguments");
    for (int i = 0; i < 2 * n_meta; i++)
        if (!meta[i]) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: metadata %s %d is NULL", path, i % 2 ? "value" : "key", i / 2);
    memset(&h, 0, sizeof h);
    h.ctx = ctx;
    sdx__buf_str(&h, "{");
    if (n_meta > 0) {
        sdx__buf_str(&h, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i) sdx__buf_str(&h, ",");
            sdx__buf_json_string(&h, meta[2 * i]);
            sdx__buf_str(&h, ":");
            sdx__buf_json_string(&h, meta[2 * i + 1]);
        }
        sdx__buf_str(&h, "}");
    }
    for (int i = 0; i < n_tensors; i++) {
        const sdx_tensor *t = &tensors[i];
        size_t bytes;
        if (!t->name || !*t->name || !sdx__shape_bytes(t->dtype, t->ndim, t->shape, &bytes)) {
            sdx__free(ctx, h.p);
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: tensor %d has no name or an invalid shape/dtype", path, i);
        }
        if (!sdx_dtype_size(t->dtype)) {
            sdx__free(ctx, h.p);
            return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "%s: tensor '%s' is %s, a block-quantized type safetensors cannot hold", path,
                             t->name, sdx_dtype_name(t->dtype));
        }
        if (n_meta > 0 || i) sdx__buf_str(&h, ",");
        sdx__buf_json_string(&h, t->name);
        sdx__buf_fmt(&h, ":{\"dtype\":\"%s\",\"shape\":[", sdx_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) sdx__buf_fmt(&h, d ? ",%lld" : "%lld", (long long)t->shape[d]);
        sdx__buf_fmt(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset, (unsigned long long)(offset + bytes));
        offset += bytes;
    }
    sdx__buf_str(&h, "}");
    while (!h.failed && h.len % 8) sdx__buf_str(&h, " ");   /* keeps the data section 8-byte aligned */
    if (h.failed) { sdx__free(ctx, h.p); return sdx__nomem(ctx, "safetensors header", h.cap); }
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)h.len >> (8 * i));

    /* a temporary name, then a rename: a failure never leaves half a file */
    rc = sdx__tmpfile_open(ctx, &f, path);
    if (rc == SDX_OK) {
        sdx__tmpfile_write(&f, len8, 8);
        sdx__tmpfile_write(&f, h.p, h.len);
        for (int i = 0; i < n_tensors && rc == SDX_OK; i++) {
            const void *data = tensors[i].data;
            if (fill) rc = fill(user, i, &data);
            if (rc == SDX_OK) sdx__tmpfile_write(&f, data, sdx_tensor_nbytes(&tensors[i]));
        }
        if (rc == SDX_OK) rc = sdx__tmpfile_commit(&f);
        else sdx__tmpfile_abort(&f);
    }
    sdx__free(ctx, h.p);
    return rc;
}

SDX_API sdx_result sdx_st_write(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors,
                         const char *const *meta, int n_meta) {
    return (sdx_result)sdx__st_write_stream(ctx, path, tensors, n_tensors, meta, n_meta, NULL, NULL);
}

/* ---- NaN/Inf scan ------------------------------------------------------ */

/* 1 when float tensor t holds NaN or Inf, counted in *s. */
static int sdx__st_nonfinite(const sdx_tensor *t, sdx__stats *s) {
    if (t->dtype == SDX_F64) {
        int64_t n = sdx_tensor_numel(t), nan = 0, inf = 0;
        for (int64_t j = 0; j < n; j++) {
            double v;
            memcpy(&v, (const char *)t->data + 8 * j, 8);
            nan += isnan(v) != 0;
            inf += isinf(v) != 0;
        }
        s->nan = nan; s->inf = inf; s->count = n;
        return nan || inf;
    }
    if (!sdx__has_nonfinite(t)) return 0;
    sdx__tensor_stats(t, s);
    return 1;
}

SDX_API sdx_result sdx_st_scan_nonfinite(sdx_ctx *ctx, const sdx_st *st, int *n_bad) {
    int bad = 0, rc, nonfinite;
    char names[512];
    size_t used = 0;
    if (n_bad) *n_bad = 0;
    if (!st) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_st_scan_nonfinite: no file");
    names[0] = 0;
    for (int i = 0; i < st->n; i++) {
        const sdx_tensor *t = &st->entries[i].t;
        sdx__stats s;
        if (t->dtype != SDX_F32 && t->dtype != SDX_F16 && t->dtype != SDX_BF16 && t->dtype != SDX_F64 && !sdx__dtype_is_block(t->dtype))
            continue;
        if ((rc = sdx__st_need(st, t, 0)) != SDX_OK) return (sdx_result)rc;
        nonfinite = sdx__st_nonfinite(t, &s);
        sdx__st_forget(st, t);
        if (!nonfinite) continue;
        bad++;
        sdx__log(ctx, SDX_LOG_WARN, "%s: tensor '%s' has %lld NaN and %lld Inf of %lld values", st->path, t->name,
                 (long long)s.nan, (long long)s.inf, (long long)s.count);
        if (used < sizeof names - 1)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s' (%lld NaN, %lld Inf)", bad > 1 ? ", " : "",
                                     t->name, (long long)s.nan, (long long)s.inf);
    }
    if (n_bad) *n_bad = bad;
    if (bad) return sdx__fail(ctx, SDX_ERR_NONFINITE, "%s: %d tensor(s) contain NaN/Inf: %s", st->path, bad, names);
    return SDX_OK;
}

/* ---- weight sets: one model part's view of a checkpoint ---------------- */

/* Each fetched weight gets a slot that the model keeps a pointer to: on
 * the CPU a view of the mapped file, or an owned copy in the policy's
 * weight type; on a device backend a device copy in that storage dtype,
 * uploaded once. A block-quantized matrix stays quantized (a view of the
 * file, zero copy) where the backend's linear multiplies blocks
 * (sdx__wslot_keeps_blocks); any other quantized weight is dequantized
 * into f16. A slot can be rewritten in place and reset to the file
 * (sdx__wslot_set/_reset: how patches such as LoRA reach the weights); a
 * patched quantized matrix is held in f16 until it is reset. */
typedef struct sdx__wslot {
    sdx_tensor t;             /* what the model computes with */
    const sdx_tensor *file;   /* the checkpoint's tensor */
    int owned;                /* t.data is ours: host memory, or device memory when t.device */
    sdx_dtype dtype;          /* t's dtype while it holds the file's values */
} sdx__wslot;

typedef struct sdx__wset {
    sdx_ctx *ctx;
    const sdx_st *st;
    char prefix[128];
    sdx__part part;
    int weight_type;        /* SDX_AUTO or a float dtype */
    sdx__wslot **slots;     /* one per fetched name, stable addresses */
    int n_slots, cap_slots;
    sdx__wslot *block;      /* slots are carved from blocks of SDX__WSLOT_BLOCK: */
    int block_used;         /* the current one, and how many of it are slots */
    int rc;                 /* code of the last failed fetch */
    unsigned writes;        /* values written into slots (LoRA merges, resets): what was made from them is stale */
    /* Optional name translation for files in another layout (diffusers):
     * writes the file's name for the canonical name `name` into out and
     * returns 1, or returns 0 when that layout has no such tensor. */
    int (*map)(const void *user, const char *name, char *out, size_t size);
    const void *map_user;
} sdx__wset;

/* The shape a fetch expects: ndim dims, -1 in a dim = any size, ndim -1 =
 * any shape. Built by value with sdx__s1/s2/4 so call sites read
 * sdx__wget(w, sdx__s4(cout, cin, 3, 3), "conv.weight") in C and C++. */
typedef struct sdx__shape { int ndim; int64_t d[4]; } sdx__shape;

static sdx__shape sdx__s4(int64_t a, int64_t b, int64_t c, int64_t d) {
    sdx__shape s;
    s.ndim = 4; s.d[0] = a; s.d[1] = b; s.d[2] = c; s.d[3] = d;
    return s;
}
static sdx__shape sdx__s1(int64_t a) { sdx__shape s = sdx__s4(a, 0, 0, 0); s.ndim = 1; return s; }
static sdx__shape sdx__s2(int64_t a, int64_t b) { sdx__shape s = sdx__s4(a, b, 0, 0); s.ndim = 2; return s; }
static sdx__shape sdx__s_any(void) { sdx__shape s = sdx__s4(0, 0, 0, 0); s.ndim = -1; return s; }

static void sdx__wset_init(sdx__wset *w, sdx_ctx *ctx, const sdx_st *st, const char *prefix, sdx__part part, int weight_type) {
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->st = st;
    snprintf(w->prefix, sizeof w->prefix, "%s", prefix ? prefix : "");
    w->part = part;
    w->weight_type = weight_type;
}

static void sdx__wslot_drop(sdx__wset *w, sdx__wslot *sl) {
    /* a packed copy of the old values; the slot's buffer, when it has one */
    sdx__weight_changed(w->ctx, &sl->t, sl->owned);
    if (!sl->owned) return;
    if (sl->t.device) sdx__dev_free(w->ctx, sl->t.data, sdx_tensor_nbytes(&sl->t));
    else sdx__free(w->ctx, sl->t.data);
    sl->owned = 0;
}

/* A model has about a thousand weights: one allocation per 64 slots
 * instead of one each (fewer points where a load can fail, too). */
#define SDX__WSLOT_BLOCK 64

static void sdx__wset_free(sdx__wset *w) {
    for (int i = 0; i < w->n_slots; i++) {
        sdx__weight_changed(w->ctx, &w->slots[i]->t, 1);
        sdx__wslot_drop(w, w->slots[i]);
    }
    /* slots are taken in order and never given back, so every block
     * starts at a slot index that is a multiple of the block size, except
     * a current block none of whose slots was taken */
    for (int i = 0; i < w->n_slots; i += SDX__WSLOT_BLOCK) sdx__free(w->ctx, w->slots[i]);
    if (w->block_used == 0) sdx__free(w->ctx, w->block);
    sdx__free(w->ctx, w->slots);
    w->slots = NULL;
    w->block = NULL;
    w->n_slots = w->cap_slots = w->block_used = 0;
}

/* The number of slots fetched so far. Fetches happen in model order, so a
 * part records [mark before, mark after) of a layer's loading to release
 * that layer's weights later (sdx__wset_release). */
static int sdx__wset_mark(const sdx__wset *w) { return w->n_slots; }

/* Gives the OS back the file pages of slots [first, end): what a stage
 * that is done, or a layer in low-memory mode, no longer needs. Views of
 * the file fault back in from it at their next use, unchanged (from read
 * callbacks in low-memory mode: are read again; sdx__st_release). Slots
 * holding their own copy (a converted dtype, LoRA, a device) keep it;
 * the file pages they were filled from go as well. Packed copies for a
 * compute mode (bf16 panels) are freed too: they are as large as the
 * weights and are packed again at the next use. Ranges that touch are
 * merged into one call. */
static void sdx__wset_release(const sdx__wset *w, int first, int end) {
    const unsigned char *lo = NULL, *hi = NULL;
    if (first < 0) first = 0;
    for (int i = first; i < end && i < w->n_slots; i++) {
        const sdx_tensor *f = w->slots[i]->file;
        const unsigned char *b = (const unsigned char *)f->data, *e = b + sdx_tensor_nbytes(f);
        if (w->ctx) sdx__weight_changed(w->ctx, &w->slots[i]->t, 0);
        if (lo && b <= hi && e >= lo) {
            if (b < lo) lo = b;
            if (e > hi) hi = e;
            continue;
        }
        if (lo) sdx__st_release(w->st, lo, (size_t)(hi - lo));
        lo = b;
        hi = e;
    }
    if (lo) sdx__st_release(w->st, lo, (size_t)(hi - lo));
}

static void sdx__wset_release_all(const sdx__wset *w) { sdx__wset_release(w, 0, w->n_slots); }

static const sdx_tensor *sdx__wfind(const sdx__wset *w, char *name, size_t size, const char *fmt, va_list ap) {
    char canonical[512];
    int n = snprintf(name, size, "%s", w->prefix);
    if (n < 0 || (size_t)n >= size) return NULL;
    vsnprintf(name + n, size - (size_t)n, fmt, ap);
    if (w->map) {   /* messages name the file's tensor, or the canonical one when unmapped */
        snprintf(canonical, sizeof canonical, "%s", name);
        if (!w->map(w->map_user, canonical, name, size)) { snprintf(name, size, "%s", canonical); return NULL; }
    }
    return sdx_st_find(w->st, name);
}

static SDX__PRINTF(2, 3) int sdx__whas(const sdx__wset *w, const char *fmt, ...) {
    char name[512];
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wfind(w, name, sizeof name, fmt, ap);
    va_end(ap);
    return t != NULL;
}

/* Writes `values` (f32; NULL: the file tensor's own values) into the
 * slot in its storage dtype, rounding once. The slot's buffer is made on
 * first need and then rewritten in place, so its address stays. A slot
 * that can view the file directly (host, same dtype) does so when reset. */
static int sdx__wslot_fill(sdx__wset *w, sdx__wslot *sl, const float *values) {
    sdx_ctx *ctx = w->ctx;
    /* other values than the file's cannot be blocks: f16 until reset */
    sdx_dtype dtype = values && sdx__dtype_is_block(sl->dtype) ? SDX_F16 : sl->dtype;
    int64_t n = sdx_tensor_numel(&sl->t);
    size_t bytes;
    int view, rc = SDX_OK;
    sdx__weight_changed(ctx, &sl->t, 0);     /* new values: repack on next use */
    if (sl->t.dtype != dtype) {
        sdx__wslot_drop(w, sl);
        sl->t.data = sl->file->data;
        sl->t.dtype = dtype;
    }
    bytes = sdx_tensor_nbytes(&sl->t);
    view = !values && !sl->t.device && sl->t.dtype == sl->file->dtype;
    if (!values && (rc = sdx__st_need(w->st, sl->file, view)) != SDX_OK) return rc;
    if (view) {
        sdx__wslot_drop(w, sl);
        sl->t.data = sl->file->data;
        return SDX_OK;
    }
    if (!sl->owned) {
        sl->t.data = sl->t.device ? sdx__dev_alloc(ctx, bytes) : sdx__malloc(ctx, bytes);
        if (!sl->t.data) { sl->t.data = sl->file->data; return sdx__nomem(ctx, sl->file->name, bytes); }
        sl->owned = 1;
    }
    if (!values && sl->t.dtype == sl->file->dtype) {     /* upload the file bytes as they are */
        rc = ctx->be.upload(ctx->be.user, sl->t.data, sl->file->data, bytes);
        sdx__st_copied(w->st, sl->file);                /* the copy is what computes */
        return rc;
    }
    {
        void *host = sl->t.device ? sdx__malloc(ctx, bytes) : sl->t.data;
        float buf[1024];
        if (!host) return sdx__nomem(ctx, "weight staging", bytes);
        for (int64_t i = 0; i < n; i += 1024) {
            int64_t m = SDX__MIN((int64_t)1024, n - i);
            if (values) memcpy(buf, values + i, (size_t)m * sizeof(float));
            else sdx__load_f32(sl->file->data, sl->file->dtype, i, m, buf);
            /* weights convert with plain IEEE rounding: a weight beyond f16
             * range is a property of the checkpoint, reported by the scan */
            if (sl->t.dtype == SDX_F16) sdx_f32_to_f16_n(buf, (uint16_t *)host + i, (size_t)m);
            else sdx__store_f32(host, sl->t.dtype, i, m, buf);
        }
        if (sl->t.device) {
            rc = ctx->be.upload(ctx->be.user, sl->t.data, host, bytes);
            sdx__free(ctx, host);
        }
    }
    if (!values) sdx__st_copied(w->st, sl->file);   /* read once, into the copy */
    return rc;
}

/* Fills the slot, then tells the backend that holds it of its values,
 * after every write (sdx_backend.weight_added): a cache of the old ones
 * went at the fill's weight_changed, and a backend's own layout is made
 * from the new ones. */
static int sdx__wslot_write(sdx__wset *w, sdx__wslot *sl, const float *values) {
    int rc = sdx__wslot_fill(w, sl, values);
    w->writes++;
    return rc == SDX_OK ? sdx__weight_added(w->ctx, &sl->t, &w->st->map) : rc;
}

/* The slot of a fetched weight by its full key, in the backend's memory
 * (device 1) or the host's (0), or NULL. */
static sdx__wslot *sdx__wset_find_on(const sdx__wset *w, const char *key, int device) {
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i]->t.device == device && strcmp(w->slots[i]->file->name, key) == 0) return w->slots[i];
    return NULL;
}

static sdx__wslot *sdx__wset_find(const sdx__wset *w, const char *key) {
    return sdx__wset_find_on(w, key, sdx__on_device(w->ctx));
}

static int sdx__wslot_set(sdx__wset *w, sdx__wslot *sl, const float *values) { return sdx__wslot_write(w, sl, values); }
static int sdx__wslot_reset(sdx__wset *w, sdx__wslot *sl) { return sdx__wslot_write(w, sl, NULL); }

/* Whether a block-quantized file tensor stays quantized in its slot: a
 * matrix (what linear multiplies; norms and biases go to other kernels)
 * or a convolution (only sdx's own files quantize those) fetched for a
 * kernel, not for host code, of a backend that multiplies blocks there.
 * The CPU's does, dequantizing a block row at a time into its packed
 * panels; the HIP backend's does not, so there the loader dequantizes. */
static int sdx__wslot_keeps_blocks(const sdx__wset *w, const sdx_tensor *t, int host) {
    const sdx_backend *be = &w->ctx->be;
    return !host && ((t->ndim == 2 && be->linear_blocks) || (t->ndim == 4 && be->conv_blocks));
}

/* The slot for a file tensor: found, or made and filled (uploaded or
 * converted when the backend or the policy asks). */
static const sdx_tensor *sdx__wslot_get(sdx__wset *w, const sdx_tensor *t, int host) {
    int device = host ? 0 : sdx__on_device(w->ctx);
    sdx__wslot *sl = sdx__wset_find_on(w, t->name, device), **list;
    int rc;
    if (sl) return &sl->t;
    if (!w->block || w->block_used == SDX__WSLOT_BLOCK) {
        sdx__wslot *block = (sdx__wslot *)sdx__calloc(w->ctx, SDX__WSLOT_BLOCK, sizeof *block);
        if (!block) { w->rc = sdx__nomem(w->ctx, t->name, SDX__WSLOT_BLOCK * sizeof *block); return NULL; }
        w->block = block;
        w->block_used = 0;
    }
    list = w->slots;
    if (w->n_slots == w->cap_slots) {   /* grown by doubling */
        int cap = w->cap_slots ? 2 * w->cap_slots : 64;
        if ((list = (sdx__wslot **)sdx__realloc(w->ctx, w->slots, sizeof *list * (size_t)cap)) != NULL) {
            w->slots = list;
            w->cap_slots = cap;
        }
    }
    if (!list) {
        w->rc = sdx__nomem(w->ctx, t->name, sizeof *list * (size_t)w->cap_slots * 2);
        return NULL;
    }
    sl = &w->block[w->block_used];
    memset(sl, 0, sizeof *sl);
    sl->t = *t;
    sl->t.owned = 0;
    sl->t.device = device;
    sl->file = t;
    if (w->weight_type != SDX_AUTO) sl->t.dtype = (sdx_dtype)w->weight_type;
    else if (sdx__dtype_is_block(t->dtype) && !sdx__wslot_keeps_blocks(w, t, host)) sl->t.dtype = SDX_F16;
    sl->dtype = sl->t.dtype;
    /* a slot that fails is not taken: the next fetch reuses its place */
    if ((rc = sdx__wslot_reset(w, sl)) != SDX_OK) {
        sdx__wslot_drop(w, sl);
        w->rc = rc;
        return NULL;
    }
    w->block_used++;
    w->slots[w->n_slots++] = sl;
    return &sl->t;
}

static const sdx_tensor *sdx__wget_v(sdx__wset *w, int host, sdx__shape shape, const char *fmt, va_list ap) {
    char name[512];
    const sdx_tensor *t = sdx__wfind(w, name, sizeof name, fmt, ap);
    if (!t) {
        w->rc = sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: missing tensor '%s' (%s)", sdx_st_path(w->st), name, sdx__part_name(w->part));
        return NULL;
    }
    if (t->dtype != SDX_F32 && t->dtype != SDX_F16 && t->dtype != SDX_BF16 && !sdx__dtype_is_block(t->dtype)) {
        w->rc = sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: tensor '%s' has dtype %s; weights must be F32, F16, BF16 or block-quantized",
                  sdx_st_path(w->st), name, sdx_dtype_name(t->dtype));
        return NULL;
    }
    if (shape.ndim >= 0) {
        int ndim = shape.ndim, ok = t->ndim == ndim;
        for (int i = 0; ok && i < ndim; i++) ok = shape.d[i] < 0 || shape.d[i] == t->shape[i];
        if (!ok) {
            char want[160], found[160];
            size_t used = 0;
            used += (size_t)snprintf(want, sizeof want, "[");
            for (int i = 0; i < ndim && used < sizeof want; i++)
                used += shape.d[i] < 0 ? (size_t)snprintf(want + used, sizeof want - used, i ? ", *" : "*")
                                       : (size_t)snprintf(want + used, sizeof want - used, i ? ", %lld" : "%lld", (long long)shape.d[i]);
            if (used < sizeof want) snprintf(want + used, sizeof want - used, "]");
            w->rc = sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: tensor '%s': expected shape %s, found %s", sdx_st_path(w->st), name, want,
                      sdx_shape_str(t, found, sizeof found));
            return NULL;
        }
    }
    return sdx__wslot_get(w, t, host);
}

/* The result code for a fetch that returned NULL: SDX_ERR_MODEL for a
 * missing or mis-shaped tensor, SDX_ERR_NOMEM when a conversion failed. */
static int sdx__werr(const sdx__wset *w) { return w->rc ? w->rc : SDX_ERR_MODEL; }

/* See docs/INTERNALS.md: NULL with the error set when missing/mis-shaped. */
static SDX__PRINTF(3, 4) const sdx_tensor *sdx__wget(sdx__wset *w, sdx__shape shape, const char *fmt, ...) {
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wget_v(w, 0, shape, fmt, ap);
    va_end(ap);
    return t;
}

static SDX__PRINTF(2, 3) const sdx_tensor *sdx__wget_any(sdx__wset *w, const char *fmt, ...) {
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wget_v(w, 0, sdx__s_any(), fmt, ap);
    va_end(ap);
    return t;
}

/* A weight that host code reads (embedding tables, small projections):
 * a host slot even when the backend is a device, same shape rules. */
static SDX__PRINTF(3, 4) const sdx_tensor *sdx__wget_host(sdx__wset *w, sdx__shape shape, const char *fmt, ...) {
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wget_v(w, 1, shape, fmt, ap);
    va_end(ap);
    return t;
}
