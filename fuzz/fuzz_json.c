/* Fuzzes the JSON parser (src/json.c). An accepted document must form a
 * consistent tree: counts match children, parents link back, strings are
 * NUL-terminated valid UTF-8, members have names, numbers are finite or
 * overflowed to +-Inf (never NaN). The walk is iterative, like the parser. */
#include "fuzz.h"

static void fz_check_string(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    FZ_ASSERT(s[len] == 0, "string of %zu bytes is not NUL-terminated", len);
    while (p < end) {
        int n = sdx__utf8_len(p, end);
        if (!n && *p == 0) n = 1;                  /* \u0000 decodes to a NUL byte */
        FZ_ASSERT(n > 0, "decoded string holds invalid UTF-8 at byte %zu", (size_t)(p - (const unsigned char *)s));
        p += n;
    }
}

static void fz_check_node(const sdx__json *v) {
    switch (v->type) {
    case SDX__JSON_STRING: fz_check_string(v->str, v->len); break;
    case SDX__JSON_NUMBER: {
        uint64_t u;
        FZ_ASSERT(v->raw && v->raw_len && v->raw[v->raw_len] == 0, "number without source text");
        FZ_ASSERT(v->num == v->num, "number '%s' parsed as NaN", v->raw);
        if (sdx__json_uint64(v, &u)) FZ_ASSERT(v->raw[0] != '-', "negative accepted as uint64: %s", v->raw);
        break;
    }
    case SDX__JSON_ARRAY: case SDX__JSON_OBJECT: {
        size_t n = 0;
        for (const sdx__json *c = v->child; c; c = c->next) {
            FZ_ASSERT(c->parent == v, "child does not link to its parent");
            FZ_ASSERT((v->type == SDX__JSON_OBJECT) == (c->key != NULL), "member name presence");
            if (c->key) {
                fz_check_string(c->key, c->key_len);
                FZ_ASSERT(sdx__json_get(v, c->key) != NULL || strlen(c->key) != c->key_len, "member '%s' not found", c->key);
            }
            n++;
        }
        FZ_ASSERT(n == v->len, "container says %zu children, has %zu", v->len, n);
        if (v->type == SDX__JSON_ARRAY && n) FZ_ASSERT(sdx__json_at(v, n - 1) == v->last && !sdx__json_at(v, n), "sdx__json_at");
        break;
    }
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sdx_ctx *ctx = fz_ctx();
    sdx__json_doc doc;
    int rc;
    if (!ctx) return 0;
    rc = sdx__json_parse(ctx, (const char *)data, size, &doc);
    fz_require_message(ctx, rc, "sdx__json_parse");
    if (rc == SDX_OK) {
        const sdx__json *v = doc.root;
        int depth = 0;
        FZ_ASSERT(v && !v->parent, "no root");
        /* pre-order walk through child/next/parent links */
        while (v) {
            fz_check_node(v);
            if (v->child) { v = v->child; depth++; FZ_ASSERT(depth <= SDX__JSON_MAX_DEPTH, "depth %d", depth); continue; }
            while (v && !v->next) { v = v->parent; depth--; }
            if (v) v = v->next;
        }
        sdx__json_free(&doc);
    } else {
        FZ_ASSERT(!doc.root && !doc.blocks, "failed parse left a document behind");
    }
    sdx_destroy(ctx);
    return 0;
}
