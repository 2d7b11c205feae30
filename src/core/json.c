#pragma once
#include "core.c"

/* ===================================================================== */
/*  JSON: a small, strict, non-recursive parser (RFC 8259)                */
/* ===================================================================== */
/* Used for safetensors headers and golden/test data. Input is untrusted:
 * every read is bounds-checked, nesting depth is limited, strings must be
 * valid UTF-8 (escapes included), numbers follow the JSON grammar. The
 * parse builds a tree of nodes allocated in blocks owned by the document. */

typedef enum sdx__json_type {
    SDX__JSON_NULL, SDX__JSON_FALSE, SDX__JSON_TRUE, SDX__JSON_NUMBER,
    SDX__JSON_STRING, SDX__JSON_ARRAY, SDX__JSON_OBJECT
} sdx__json_type;

typedef struct sdx__json {
    sdx__json_type type;
    double num;                    /* NUMBER */
    const char *raw;               /* NUMBER: source text (for exact ints) */
    size_t raw_len;
    const char *str;               /* STRING: decoded, NUL-terminated */
    size_t len;                    /* STRING: bytes; ARRAY/OBJECT: count */
    const char *key;               /* member name inside an OBJECT */
    size_t key_len;
    struct sdx__json *child, *last, *next, *parent;
} sdx__json;

typedef struct sdx__json_block { struct sdx__json_block *next; size_t used, size; } sdx__json_block;

typedef struct sdx__json_doc {
    sdx_ctx *ctx;
    sdx__json *root;
    sdx__json_block *blocks;
} sdx__json_doc;

#define SDX__JSON_MAX_DEPTH 256

static void *sdx__json_alloc(sdx__json_doc *doc, size_t size) {
    sdx__json_block *b = doc->blocks;
    size = (size + 15) & ~(size_t)15;
    if (!b || b->size - b->used < size) {
        size_t bsize = SDX__MAX(size, (size_t)16384);
        size_t hdr = (sizeof(sdx__json_block) + 15) & ~(size_t)15;
        if (bsize > SIZE_MAX - hdr) return NULL;
        b = (sdx__json_block *)sdx__malloc(doc->ctx, hdr + bsize);
        if (!b) return NULL;
        b->next = doc->blocks;
        b->used = hdr;
        b->size = hdr + bsize;
        doc->blocks = b;
    }
    {
        void *p = (unsigned char *)b + b->used;
        b->used += size;
        return p;
    }
}

static void sdx__json_free(sdx__json_doc *doc) {
    sdx__json_block *b = doc->blocks;
    while (b) { sdx__json_block *n = b->next; sdx__free(doc->ctx, b); b = n; }
    doc->blocks = NULL;
    doc->root = NULL;
}

typedef struct sdx__json_parser {
    const char *s, *end, *start;
    sdx__json_doc *doc;
    const char *what;   /* file name for messages */
} sdx__json_parser;

static int sdx__json_err(sdx__json_parser *p, const char *msg) {
    return sdx__fail(p->doc->ctx, SDX_ERR_FORMAT, "%s: invalid JSON at byte %lld: %s",
                     p->what, (long long)(p->s - p->start), msg);
}

static void sdx__json_ws(sdx__json_parser *p) {
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int sdx__utf8_len(const unsigned char *s, const unsigned char *end) {
    unsigned c = s[0];
    int n;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c < 0xc2) return 0;
    if (c < 0xe0) { n = 2; cp = c & 0x1f; }
    else if (c < 0xf0) { n = 3; cp = c & 0x0f; }
    else if (c < 0xf5) { n = 4; cp = c & 0x07; }
    else return 0;
    if (end - s < n) return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static int sdx__json_hex4(const char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static size_t sdx__utf8_put(char *d, uint32_t cp) {
    if (cp < 0x80) { d[0] = (char)cp; return 1; }
    if (cp < 0x800) { d[0] = (char)(0xc0 | (cp >> 6)); d[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | (cp >> 12)); d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        d[2] = (char)(0x80 | (cp & 0x3f)); return 3;
    }
    d[0] = (char)(0xf0 | (cp >> 18)); d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Parses a string at p->s (on the opening quote). Decoded bytes never
 * outnumber the source bytes, so one allocation of the raw length fits. */
static int sdx__json_string(sdx__json_parser *p, const char **out, size_t *out_len) {
    const char *q = p->s + 1;
    size_t raw = 0;
    char *d, *dst;
    while (q + raw < p->end && q[raw] != '"') raw += (q[raw] == '\\' && q + raw + 1 < p->end) ? 2 : 1;
    if (q + raw >= p->end) return sdx__json_err(p, "unterminated string");
    dst = d = (char *)sdx__json_alloc(p->doc, raw + 1);
    if (!d) return sdx__nomem(p->doc->ctx, "JSON string", raw + 1);
    p->s = q;
    while (*p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c < 0x20) return sdx__json_err(p, "control character in string");
        if (c == '\\') {
            char e = p->s[1];
            uint32_t cp;
            p->s += 2;
            switch (e) {
            case '"': *d++ = '"'; break;
            case '\\': *d++ = '\\'; break;
            case '/': *d++ = '/'; break;
            case 'b': *d++ = '\b'; break;
            case 'f': *d++ = '\f'; break;
            case 'n': *d++ = '\n'; break;
            case 'r': *d++ = '\r'; break;
            case 't': *d++ = '\t'; break;
            case 'u':
                if (p->end - p->s < 4 || !sdx__json_hex4(p->s, &cp)) return sdx__json_err(p, "bad \\u escape");
                p->s += 4;
                if (cp >= 0xdc00 && cp <= 0xdfff) return sdx__json_err(p, "lone low surrogate");
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    uint32_t lo;
                    if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u' || !sdx__json_hex4(p->s + 2, &lo) ||
                        lo < 0xdc00 || lo > 0xdfff)
                        return sdx__json_err(p, "lone high surrogate");
                    p->s += 6;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                /* a \uXXXX escape is 6+ source bytes and at most 4 output bytes */
                d += sdx__utf8_put(d, cp);
                break;
            default: return sdx__json_err(p, "bad escape");
            }
        } else {
            int n = sdx__utf8_len((const unsigned char *)p->s, (const unsigned char *)p->end);
            if (!n) return sdx__json_err(p, "invalid UTF-8 in string");
            memcpy(d, p->s, (size_t)n);
            d += n;
            p->s += n;
        }
    }
    *d = 0;
    p->s++;                 /* closing quote */
    *out = dst;
    *out_len = (size_t)(d - dst);
    return SDX_OK;
}

/* strtod reads the locale's decimal point (',' after setlocale(LC_ALL, "")
 * in many locales); JSON always writes '.'. `text` is a private copy. */
static double sdx__json_strtod(char *text) {
    const char *point = localeconv()->decimal_point;
    char *dot = strchr(text, '.');
    if (dot && point && point[0] && !point[1]) *dot = point[0];
    return strtod(text, NULL);
}

static int sdx__json_number(sdx__json_parser *p, sdx__json *v) {
    const char *s = p->s;
    char *copy;
    size_t n;
    if (s < p->end && *s == '-') s++;
    if (s >= p->end) return sdx__json_err(p, "bad number");
    if (*s == '0') s++;
    else if (*s >= '1' && *s <= '9') while (s < p->end && *s >= '0' && *s <= '9') s++;
    else return sdx__json_err(p, "bad number");
    if (s < p->end && *s == '.') {
        s++;
        if (s >= p->end || *s < '0' || *s > '9') return sdx__json_err(p, "bad fraction");
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < p->end && (*s == '+' || *s == '-')) s++;
        if (s >= p->end || *s < '0' || *s > '9') return sdx__json_err(p, "bad exponent");
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    /* the source text may not outlive the document: keep a copy */
    n = (size_t)(s - p->s);
    copy = (char *)sdx__json_alloc(p->doc, n + 1);
    if (!copy) return sdx__nomem(p->doc->ctx, "JSON number", n + 1);
    memcpy(copy, p->s, n);
    copy[n] = 0;
    v->type = SDX__JSON_NUMBER;
    v->raw = copy;
    v->raw_len = n;
    v->num = sdx__json_strtod(copy);
    p->s = s;
    return SDX_OK;
}

static int sdx__json_literal(sdx__json_parser *p, const char *word, sdx__json_type type, sdx__json *v) {
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0) return sdx__json_err(p, "unexpected character");
    p->s += n;
    v->type = type;
    return SDX_OK;
}

static void sdx__json_append(sdx__json *parent, sdx__json *v) {
    v->parent = parent;
    if (parent->last) parent->last->next = v; else parent->child = v;
    parent->last = v;
    parent->len++;
}

/* Iterative parse: containers are linked to their parent as they open, so
 * the "stack" is the parent chain and depth costs no C stack. */
static int sdx__json_parse_named(sdx_ctx *ctx, const char *text, size_t len, const char *what, sdx__json_doc *doc) {
    sdx__json_parser p;
    sdx__json *cur = NULL;   /* innermost open container */
    int depth = 0, rc;
    memset(doc, 0, sizeof *doc);
    doc->ctx = ctx;
    p.s = p.start = text;
    p.end = text + len;
    p.doc = doc;
    p.what = what ? what : "JSON";
    for (;;) {
        sdx__json *v;
        const char *key = NULL;
        size_t key_len = 0;
        sdx__json_ws(&p);
        if (cur) {
            /* inside a container: close it, or expect a separator */
            char close = cur->type == SDX__JSON_ARRAY ? ']' : '}';
            if (p.s < p.end && *p.s == close) {
                p.s++;
                depth--;
                cur = cur->parent;
                if (!cur) break;
                continue;
            }
            if (cur->len > 0) {
                if (p.s >= p.end || *p.s != ',') { rc = sdx__json_err(&p, "expected ',' or closing bracket"); goto fail; }
                p.s++;
                sdx__json_ws(&p);
            }
            if (cur->type == SDX__JSON_OBJECT) {
                if (p.s >= p.end || *p.s != '"') { rc = sdx__json_err(&p, "expected member name"); goto fail; }
                if ((rc = sdx__json_string(&p, &key, &key_len)) != SDX_OK) goto fail;
                sdx__json_ws(&p);
                if (p.s >= p.end || *p.s != ':') { rc = sdx__json_err(&p, "expected ':'"); goto fail; }
                p.s++;
                sdx__json_ws(&p);
            }
        }
        if (p.s >= p.end) { rc = sdx__json_err(&p, "unexpected end of input"); goto fail; }
        v = (sdx__json *)sdx__json_alloc(doc, sizeof *v);
        if (!v) { rc = sdx__nomem(ctx, "JSON node", sizeof *v); goto fail; }
        memset(v, 0, sizeof *v);
        v->key = key;
        v->key_len = key_len;
        switch (*p.s) {
        case '{': case '[':
            if (++depth > SDX__JSON_MAX_DEPTH) { rc = sdx__json_err(&p, "nesting too deep"); goto fail; }
            v->type = *p.s == '{' ? SDX__JSON_OBJECT : SDX__JSON_ARRAY;
            p.s++;
            rc = SDX_OK;
            break;
        case '"':
            v->type = SDX__JSON_STRING;
            rc = sdx__json_string(&p, &v->str, &v->len);
            break;
        case 't': rc = sdx__json_literal(&p, "true", SDX__JSON_TRUE, v); break;
        case 'f': rc = sdx__json_literal(&p, "false", SDX__JSON_FALSE, v); break;
        case 'n': rc = sdx__json_literal(&p, "null", SDX__JSON_NULL, v); break;
        default: rc = sdx__json_number(&p, v); break;
        }
        if (rc != SDX_OK) goto fail;
        if (cur) sdx__json_append(cur, v); else doc->root = v;
        if (v->type == SDX__JSON_OBJECT || v->type == SDX__JSON_ARRAY) cur = v;
        else if (!cur) break;
    }
    sdx__json_ws(&p);
    if (p.s != p.end) { rc = sdx__json_err(&p, "trailing characters after the value"); goto fail; }
    return SDX_OK;
fail:
    sdx__json_free(doc);
    return rc;
}

static int sdx__json_parse(sdx_ctx *ctx, const char *text, size_t len, sdx__json_doc *doc) {
    return sdx__json_parse_named(ctx, text, len, "JSON", doc);
}

/* Member `key` of an object, or NULL. */
static const sdx__json *sdx__json_get(const sdx__json *obj, const char *key) {
    size_t n = strlen(key);
    if (!obj || obj->type != SDX__JSON_OBJECT) return NULL;
    for (const sdx__json *c = obj->child; c; c = c->next)
        if (c->key_len == n && memcmp(c->key, key, n) == 0) return c;
    return NULL;
}

/* Element i of an array, or NULL. */
static const sdx__json *sdx__json_at(const sdx__json *arr, size_t i) {
    const sdx__json *c;
    if (!arr || arr->type != SDX__JSON_ARRAY) return NULL;
    for (c = arr->child; c && i; c = c->next) i--;
    return c;
}

/* A non-negative integer written without fraction or exponent, exactly
 * (doubles lose precision above 2^53). */
static int sdx__json_uint64(const sdx__json *v, uint64_t *out) {
    uint64_t x = 0;
    if (!v || v->type != SDX__JSON_NUMBER || v->raw_len == 0 || v->raw[0] == '-') return 0;
    for (size_t i = 0; i < v->raw_len; i++) {
        unsigned d = (unsigned)(v->raw[i] - '0');
        if (d > 9) return 0;
        if (x > (UINT64_MAX - d) / 10) return 0;
        x = x * 10 + d;
    }
    *out = x;
    return 1;
}

/* Reads a whole file into memory (NUL-terminated). For data files and
 * tests, not checkpoints. */
static int sdx__read_file(sdx_ctx *ctx, const char *path, char **out, size_t *out_len, size_t max_len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (!f) return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        size_t got;
        if (cap - len < 65536) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb;
            if (ncap > max_len + 65536) ncap = max_len + 65536;
            if (ncap <= cap) { fclose(f); sdx__free(ctx, buf); return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: larger than %zu bytes", path, max_len); }
            nb = (char *)sdx__realloc(ctx, buf, ncap + 1);
            if (!nb) { fclose(f); sdx__free(ctx, buf); return sdx__nomem(ctx, path, ncap + 1); }
            buf = nb;
            cap = ncap;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
        if (len > max_len) { fclose(f); sdx__free(ctx, buf); return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: larger than %zu bytes", path, max_len); }
    }
    if (ferror(f)) { fclose(f); sdx__free(ctx, buf); return sdx__fail(ctx, SDX_ERR_IO, "%s: read error", path); }
    fclose(f);
    if (!buf) { buf = (char *)sdx__malloc(ctx, 1); if (!buf) return sdx__nomem(ctx, path, 1); }
    buf[len] = 0;
    *out = buf;
    *out_len = len;
    return SDX_OK;
}

/* Parses a JSON file; everything the tree points at lives in the doc. */
static int sdx__json_parse_file(sdx_ctx *ctx, const char *path, sdx__json_doc *doc) {
    char *text = NULL;      /* initialised: gcc -O1 cannot see that failures return early */
    size_t len = 0;
    int rc = sdx__read_file(ctx, path, &text, &len, (size_t)1 << 30);
    if (rc != SDX_OK) return rc;
    rc = sdx__json_parse_named(ctx, text, len, path, doc);
    sdx__free(ctx, text);
    return rc;
}
