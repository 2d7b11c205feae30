#pragma once
#include "core.c"

/* ===================================================================== */
/*  Inflate: DEFLATE (RFC 1951) and gzip (RFC 1952) decoding              */
/* ===================================================================== */
/* Only used to read OpenAI's bpe_simple_vocab_16e6.txt.gz, but written for
 * untrusted input: every read is bounds-checked, the output never exceeds
 * a caller-given limit, Huffman tables are validated (over-subscribed code
 * lengths are rejected), back-references must stay inside the output, and
 * gzip's CRC-32 and ISIZE are checked. No recursion. */

typedef struct sdx__bits {
    const uint8_t *src;
    size_t n, pos;        /* next unread byte */
    uint64_t buf;         /* bits not yet consumed, LSB first */
    int count;            /* number of valid bits in buf */
} sdx__bits;

/* Fetches `need` (<= 32) bits, LSB first; -1 when the input ends first. */
static int64_t sdx__bits_get(sdx__bits *b, int need) {
    uint32_t v;
    while (b->count < need) {
        if (b->pos >= b->n) return -1;
        b->buf |= (uint64_t)b->src[b->pos++] << b->count;
        b->count += 8;
    }
    v = (uint32_t)(b->buf & ((need == 32) ? 0xffffffffu : ((1u << need) - 1u)));
    b->buf >>= need;
    b->count -= need;
    return v;
}

/* Canonical Huffman code: count[len] codes of each length, symbols in
 * canonical order. Decoding walks the lengths, so no table can be built
 * from lengths that lie. */
#define SDX__HUFF_MAXBITS 15
#define SDX__HUFF_FAST 9       /* codes up to this long decode by one lookup */
typedef struct sdx__huff {
    uint16_t count[SDX__HUFF_MAXBITS + 1];
    uint16_t symbol[288];
    uint16_t fast[1 << SDX__HUFF_FAST];   /* (length << 9) | symbol, by the next 9 input bits; 0 = longer code */
} sdx__huff;

/* 0 on success, -1 if the lengths over-subscribe the code space. An
 * incomplete code is accepted (RFC 1951 allows one-code distance trees);
 * decoding an unassigned code then fails cleanly. */
static int sdx__huff_build(sdx__huff *h, const uint8_t *lengths, int n) {
    uint16_t offs[SDX__HUFF_MAXBITS + 1];
    int left = 1;
    memset(h->count, 0, sizeof h->count);
    for (int i = 0; i < n; i++) h->count[lengths[i]]++;
    for (int len = 1; len <= SDX__HUFF_MAXBITS; len++) {
        left = (left << 1) - h->count[len];
        if (left < 0) return -1;
    }
    offs[1] = 0;
    for (int len = 1; len < SDX__HUFF_MAXBITS; len++) offs[len + 1] = (uint16_t)(offs[len] + h->count[len]);
    for (int i = 0; i < n; i++)
        if (lengths[i]) h->symbol[offs[lengths[i]]++] = (uint16_t)i;
    /* canonical codes are MSB-first but read LSB-first: index by the
     * bit-reversed code, every completion of the remaining bits */
    memset(h->fast, 0, sizeof h->fast);
    {
        int code = 0, idx = 0;
        for (int len = 1; len <= SDX__HUFF_FAST; len++, code <<= 1)
            for (int k = 0; k < h->count[len]; k++, code++) {
                int rev = 0, sym = h->symbol[idx++];
                for (int bit = 0; bit < len; bit++) rev |= ((code >> bit) & 1) << (len - 1 - bit);
                for (int i = rev; i < (1 << SDX__HUFF_FAST); i += 1 << len) h->fast[i] = (uint16_t)((len << 9) | sym);
            }
    }
    return 0;
}

/* Next symbol, -1 on end of input, -2 on a code not in the table. Works
 * on a local copy of the bit buffer, refilled once per symbol. */
static int sdx__huff_decode(sdx__bits *b, const sdx__huff *h) {
    int code = 0, first = 0, index = 0;
    uint64_t buf;
    while (b->count <= 56 && b->pos < b->n) {
        b->buf |= (uint64_t)b->src[b->pos++] << b->count;
        b->count += 8;
    }
    buf = b->buf;
    {
        int e = h->fast[buf & ((1u << SDX__HUFF_FAST) - 1)];
        if (e && (e >> 9) <= b->count) {
            b->buf >>= e >> 9;
            b->count -= e >> 9;
            return e & 511;
        }
    }
    for (int len = 1; len <= SDX__HUFF_MAXBITS; len++) {
        int cnt = h->count[len];
        if (len > b->count) return -1;
        code |= (int)(buf & 1);
        buf >>= 1;
        if (code - first < cnt) {
            b->buf = buf;
            b->count -= len;
            return h->symbol[index + code - first];
        }
        index += cnt;
        first = (first + cnt) << 1;
        code <<= 1;
    }
    return -2;
}

typedef struct sdx__outbuf {
    sdx_ctx *ctx;
    uint8_t *data;
    size_t len, cap, max;
    size_t start;         /* where the current gzip member's output begins */
} sdx__outbuf;

static int sdx__outbuf_reserve(sdx__outbuf *o, size_t extra, const char *what) {
    size_t need, ncap;
    uint8_t *nd;
    if (extra > o->max - o->len)
        return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: decompressed data exceeds the limit of %zu bytes", what, o->max);
    need = o->len + extra;
    /* allocate on first use even for 0 bytes, so o->data is never NULL
     * once a block has been decoded (NULL + 0 is undefined) */
    if (o->data && need <= o->cap) return SDX_OK;
    ncap = o->cap ? o->cap : 65536;
    while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > o->max) ncap = o->max;
    nd = (uint8_t *)sdx__realloc(o->ctx, o->data, ncap);
    if (!nd) return sdx__nomem(o->ctx, what, ncap);
    o->data = nd;
    o->cap = ncap;
    return SDX_OK;
}

static const uint16_t sdx__len_base[29] = {
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t sdx__len_extra[29] = {
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t sdx__dist_base[30] = {
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t sdx__dist_extra[30] = {
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

#define SDX__INFLATE_TRUNC(what) sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: compressed data ends early (truncated file)", what)

/* Decodes one compressed block's symbols until end-of-block (256). */
static int sdx__inflate_codes(sdx__bits *b, sdx__outbuf *o, const sdx__huff *lit, const sdx__huff *dist,
                              const char *what) {
    for (;;) {
        int sym = sdx__huff_decode(b, lit), rc;
        if (sym == -1) return SDX__INFLATE_TRUNC(what);
        if (sym < 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid literal/length code", what);
        if (sym < 256) {
            if ((rc = sdx__outbuf_reserve(o, 1, what)) != SDX_OK) return rc;
            o->data[o->len++] = (uint8_t)sym;
        } else if (sym == 256) {
            return SDX_OK;
        } else {
            int64_t e1, e2;
            size_t len, d;
            int ds;
            sym -= 257;
            if (sym >= 29) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid length symbol %d", what, sym + 257);
            if ((e1 = sdx__bits_get(b, sdx__len_extra[sym])) < 0) return SDX__INFLATE_TRUNC(what);
            len = sdx__len_base[sym] + (size_t)e1;
            ds = sdx__huff_decode(b, dist);
            if (ds == -1) return SDX__INFLATE_TRUNC(what);
            if (ds < 0 || ds >= 30) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid distance code", what);
            if ((e2 = sdx__bits_get(b, sdx__dist_extra[ds])) < 0) return SDX__INFLATE_TRUNC(what);
            d = sdx__dist_base[ds] + (size_t)e2;
            /* each gzip member is an independent stream */
            if (d > o->len - o->start)
                return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: back-reference distance %zu before the start of the output (%zu bytes)",
                                 what, d, o->len - o->start);
            if ((rc = sdx__outbuf_reserve(o, len, what)) != SDX_OK) return rc;
            /* byte by byte: the source may overlap what is being written */
            for (size_t i = 0; i < len; i++, o->len++) o->data[o->len] = o->data[o->len - d];
        }
    }
}

static int sdx__inflate_stored(sdx__bits *b, sdx__outbuf *o, const char *what) {
    size_t len, nlen;
    int rc;
    b->buf = 0;          /* skip to the byte boundary; whole buffered bytes are returned below */
    b->pos -= (size_t)(b->count / 8);
    b->count = 0;
    if (b->n - b->pos < 4) return SDX__INFLATE_TRUNC(what);
    len = (size_t)b->src[b->pos] | ((size_t)b->src[b->pos + 1] << 8);
    nlen = (size_t)b->src[b->pos + 2] | ((size_t)b->src[b->pos + 3] << 8);
    b->pos += 4;
    if (len != (~nlen & 0xffff)) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: stored block length check failed", what);
    if (b->n - b->pos < len) return SDX__INFLATE_TRUNC(what);
    if ((rc = sdx__outbuf_reserve(o, len, what)) != SDX_OK) return rc;
    memcpy(o->data + o->len, b->src + b->pos, len);
    o->len += len;
    b->pos += len;
    return SDX_OK;
}

static int sdx__inflate_fixed_tables(sdx__huff *lit, sdx__huff *dist) {
    uint8_t lengths[288];
    int i;
    for (i = 0; i < 144; i++) lengths[i] = 8;
    for (; i < 256; i++) lengths[i] = 9;
    for (; i < 280; i++) lengths[i] = 7;
    for (; i < 288; i++) lengths[i] = 8;
    if (sdx__huff_build(lit, lengths, 288) != 0) return -1;
    for (i = 0; i < 30; i++) lengths[i] = 5;
    return sdx__huff_build(dist, lengths, 30);
}

/* Reads the code-length code and the literal/length and distance trees of
 * a dynamic block (RFC 1951 3.2.7). */
static int sdx__inflate_dynamic_tables(sdx__bits *b, sdx__outbuf *o, sdx__huff *lit, sdx__huff *dist,
                                       const char *what) {
    static const uint8_t order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
    uint8_t lengths[288 + 32];
    sdx__huff lencode;
    int64_t hlit = sdx__bits_get(b, 5), hdist = sdx__bits_get(b, 5), hclen = sdx__bits_get(b, 4);
    int nlen, ndist, i = 0;
    if (hlit < 0 || hdist < 0 || hclen < 0) return SDX__INFLATE_TRUNC(what);
    nlen = (int)hlit + 257;
    ndist = (int)hdist + 1;
    if (nlen > 286 || ndist > 30) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: bad dynamic block header", what);
    memset(lengths, 0, sizeof lengths);
    for (int k = 0; k < (int)hclen + 4; k++) {
        int64_t v = sdx__bits_get(b, 3);
        if (v < 0) return SDX__INFLATE_TRUNC(what);
        lengths[order[k]] = (uint8_t)v;
    }
    if (sdx__huff_build(&lencode, lengths, 19) != 0)
        return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid code-length code", what);
    memset(lengths, 0, sizeof lengths);
    while (i < nlen + ndist) {
        int sym = sdx__huff_decode(b, &lencode), repeat, value = 0;
        int64_t extra;
        if (sym == -1) return SDX__INFLATE_TRUNC(what);
        if (sym < 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid code-length symbol", what);
        if (sym < 16) { lengths[i++] = (uint8_t)sym; continue; }
        if (sym == 16) {
            if (i == 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: length repeat with no previous length", what);
            value = lengths[i - 1];
            extra = sdx__bits_get(b, 2); repeat = 3;
        } else if (sym == 17) {
            extra = sdx__bits_get(b, 3); repeat = 3;
        } else {
            extra = sdx__bits_get(b, 7); repeat = 11;
        }
        if (extra < 0) return SDX__INFLATE_TRUNC(what);
        repeat += (int)extra;
        if (i + repeat > nlen + ndist) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: code lengths overrun the table", what);
        while (repeat--) lengths[i++] = (uint8_t)value;
    }
    if (lengths[256] == 0) return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: block has no end-of-block code", what);
    if (sdx__huff_build(lit, lengths, nlen) != 0 || sdx__huff_build(dist, lengths + nlen, ndist) != 0)
        return sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: over-subscribed Huffman code", what);
    return SDX_OK;
}

/* Raw DEFLATE stream at src[0..n) appended to o; *used = bytes consumed. */
static int sdx__inflate_raw(sdx__outbuf *o, const uint8_t *src, size_t n, size_t *used, const char *what) {
    sdx__bits b;
    int last = 0, rc;
    sdx__huff *lit = (sdx__huff *)sdx__malloc(o->ctx, 2 * sizeof(sdx__huff)), *dist;
    if (!lit) return sdx__nomem(o->ctx, what, 2 * sizeof(sdx__huff));
    dist = lit + 1;
    memset(&b, 0, sizeof b);
    b.src = src;
    b.n = n;
    rc = SDX_OK;
    while (!last && rc == SDX_OK) {
        int64_t hdr = sdx__bits_get(&b, 3);
        if (hdr < 0) { rc = SDX__INFLATE_TRUNC(what); break; }
        last = (int)(hdr & 1);
        switch (hdr >> 1) {
        case 0: rc = sdx__inflate_stored(&b, o, what); break;
        case 1:
            if (sdx__inflate_fixed_tables(lit, dist) != 0) { rc = sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: internal table error", what); break; }
            rc = sdx__inflate_codes(&b, o, lit, dist, what);
            break;
        case 2:
            rc = sdx__inflate_dynamic_tables(&b, o, lit, dist, what);
            if (rc == SDX_OK) rc = sdx__inflate_codes(&b, o, lit, dist, what);
            break;
        default: rc = sdx__fail(o->ctx, SDX_ERR_FORMAT, "%s: invalid block type 3", what); break;
        }
    }
    sdx__free(o->ctx, lit);
    *used = b.pos - (size_t)(b.count / 8);   /* unused whole bytes go back */
    return rc;
}

/* CRC-32 (IEEE, reflected 0xEDB88320), a byte at a time. The table is
 * built once per sdx__inflate call, not per gzip member: a file of many
 * empty members would otherwise cost 2k operations per 18 input bytes. */
static void sdx__crc32_table(uint32_t table[256]) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
        table[i] = c;
    }
}

static uint32_t sdx__crc32(const uint32_t table[256], uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = (crc >> 8) ^ table[(crc ^ p[i]) & 255];
    return ~crc;
}

static uint32_t sdx__le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Length of the gzip member header at src (RFC 1952 2.3), 0 if invalid. */
static size_t sdx__gzip_header(const uint8_t *src, size_t n) {
    size_t pos = 10;
    uint8_t flags;
    if (n < 18 || src[0] != 0x1f || src[1] != 0x8b || src[2] != 8) return 0;
    flags = src[3];
    if (flags & 0xe0) return 0;                       /* reserved bits */
    if (flags & 4) {                                  /* FEXTRA */
        size_t xlen;
        if (n - pos < 2) return 0;
        xlen = (size_t)src[pos] | ((size_t)src[pos + 1] << 8);
        pos += 2;
        if (n - pos < xlen) return 0;
        pos += xlen;
    }
    for (int field = 8; field <= 16; field <<= 1) {   /* FNAME, FCOMMENT: NUL-terminated */
        if (!(flags & field)) continue;
        while (pos < n && src[pos]) pos++;
        if (pos >= n) return 0;
        pos++;
    }
    if (flags & 2) pos += 2;                          /* FHCRC */
    return pos <= n ? pos : 0;
}

/* Decompresses src[0..n): a gzip file (magic 1f 8b; every member is
 * decoded and CRC-32/ISIZE checked) or else a raw DEFLATE stream. The two
 * cannot be confused: a DEFLATE stream starting with byte 0x1f would begin
 * with the reserved block type 3. The output is at most max_out bytes and
 * is NUL-terminated one byte past *out_len for convenience; free it with
 * sdx__free. This is the entry point fuzzers call. */
static int sdx__inflate(sdx_ctx *ctx, const uint8_t *src, size_t n, uint8_t **out, size_t *out_len, size_t max_out) {
    static const char what[] = "inflate";
    sdx__outbuf o;
    size_t pos = 0, used = 0;
    int rc = SDX_OK;
    *out = NULL;
    *out_len = 0;
    if (!src && n) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx__inflate: NULL input");
    memset(&o, 0, sizeof o);
    o.ctx = ctx;
    o.max = max_out;
    if (n >= 2 && src[0] == 0x1f && src[1] == 0x8b) {
        uint32_t crc_table[256];
        sdx__crc32_table(crc_table);
        while (rc == SDX_OK && pos < n) {
            size_t hdr = sdx__gzip_header(src + pos, n - pos), start = o.start = o.len;
            if (!hdr) { rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: invalid or truncated member header at byte %zu", pos); break; }
            pos += hdr;
            if ((rc = sdx__inflate_raw(&o, src + pos, n - pos, &used, "gzip")) != SDX_OK) break;
            pos += used;
            if (n - pos < 8) { rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: trailer missing (truncated file)"); break; }
            if (sdx__crc32(crc_table, 0, o.data ? o.data + start : NULL, o.len - start) != sdx__le32(src + pos))
                rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: CRC-32 mismatch (corrupt data)");
            else if ((uint32_t)(o.len - start) != sdx__le32(src + pos + 4))
                rc = sdx__fail(ctx, SDX_ERR_FORMAT, "gzip: ISIZE %u does not match the %zu decompressed bytes",
                               sdx__le32(src + pos + 4), o.len - start);
            pos += 8;
            while (pos < n && src[pos] == 0) pos++;   /* zero padding after the last member */
        }
    } else {
        rc = sdx__inflate_raw(&o, src, n, &used, what);
    }
    if (rc == SDX_OK) rc = sdx__outbuf_reserve(&o, 0, what);
    if (rc == SDX_OK && o.len == o.cap) {             /* room for the terminating NUL */
        uint8_t *nd = (uint8_t *)sdx__realloc(ctx, o.data, o.len + 1);
        if (!nd) rc = sdx__nomem(ctx, what, o.len + 1);
        else { o.data = nd; o.cap = o.len + 1; }
    }
    if (rc != SDX_OK) { sdx__free(ctx, o.data); return rc; }
    o.data[o.len] = 0;
    *out = o.data;
    *out_len = o.len;
    return SDX_OK;
}
