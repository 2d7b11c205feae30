#pragma once
#include "api_text.h"
#include "../core/core.c"
#include "../core/json.c"
#include "../core/inflate.c"
#include "../core/safetensors.c"
#include "unicode_tables.c"

/* ===================================================================== */
/*  CLIP tokenizer: vocabulary loading, text clean-up, BPE                */
/* ===================================================================== */
/* Reproduces OpenAI CLIP's SimpleTokenizer.encode:
 *   ftfy.fix_text -> html.unescape twice -> strip -> collapse whitespace
 *   -> str.lower -> pre-tokenizer regex -> byte-level BPE.
 * ftfy is reproduced for the fixes prompts actually need (see
 * sdx__ftfy_pass); everything else follows the Python semantics exactly,
 * with Unicode data generated from Python's unicodedata
 * (tools/gen_unicode.py). Text is processed as arrays of code points. */

#define SDX__CLIP_MAX_MERGES (49152 - 256 - 2)
#define SDX__VOCAB_MAX_BYTES ((size_t)256 << 20)

struct sdx_tokenizer {
    sdx_ctx *ctx;
    int32_t n_vocab, n_merges, bos, eos;
    int32_t byte_id[256];       /* id of the character standing for byte b */
    int32_t byte_end_id[256];   /* id of that character + "</w>" */
    /* (left id, right id) -> (rank, merged id), open addressing */
    uint64_t *pair_key;         /* ((left << 32) | right) + 1; 0 = empty */
    int32_t *pair_rank, *pair_id;
    size_t pair_mask;
};

/* ---- code point buffers ---------------------------------------------- */

typedef struct sdx__cps {
    sdx_ctx *ctx;
    uint32_t *v;
    size_t n, cap;
    int oom;            /* a push failed; checked once per pass */
} sdx__cps;

static void sdx__cps_push(sdx__cps *b, uint32_t c) {
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 64;
        uint32_t *nv;
        if (b->oom || ncap > SIZE_MAX / sizeof(uint32_t)) { b->oom = 1; return; }
        nv = (uint32_t *)sdx__realloc(b->ctx, b->v, ncap * sizeof(uint32_t));
        if (!nv) { b->oom = 1; return; }
        b->v = nv;
        b->cap = ncap;
    }
    b->v[b->n++] = c;
}

static void sdx__cps_push_n(sdx__cps *b, const uint32_t *c, size_t n) {
    for (size_t i = 0; i < n; i++) sdx__cps_push(b, c[i]);
}

/* Pushes up to n code points of a zero-padded table entry. */
static void sdx__cps_push_z(sdx__cps *b, const uint32_t *c, int n) {
    for (int i = 0; i < n && c[i]; i++) sdx__cps_push(b, c[i]);
}

/* A pass reads `in` and writes `out`; then the two swap roles. */
static void sdx__cps_swap(sdx__cps *a, sdx__cps *b) {
    sdx__cps t = *a;
    *a = *b;
    *b = t;
    b->n = 0;
}

/* ---- Unicode lookups ----------------------------------------------------- */

static int sdx__in_ranges(const sdx__urange *r, size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < r[mid].lo) hi = mid;
        else if (c > r[mid].hi) lo = mid + 1;
        else return 1;
    }
    return 0;
}
#define SDX__IN(table, c) sdx__in_ranges(table, sizeof(table) / sizeof((table)[0]), c)

/* Entry whose first uint32_t field equals key, in a table sorted by it. */
static const void *sdx__ufind(const void *base, size_t n, size_t stride, uint32_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t k;
        memcpy(&k, (const char *)base + mid * stride, sizeof k);
        if (k < key) lo = mid + 1;
        else if (k > key) hi = mid;
        else return (const char *)base + mid * stride;
    }
    return NULL;
}
#define SDX__UFIND(table, key) sdx__ufind(table, sizeof(table) / sizeof((table)[0]), sizeof((table)[0]), key)

static int sdx__is_letter(uint32_t c) {
    if (c < 128) return (c | 32) >= 'a' && (c | 32) <= 'z';
    return SDX__IN(sdx__uni_letter, c);
}
static int sdx__is_number(uint32_t c) {
    if (c < 128) return c >= '0' && c <= '9';
    return SDX__IN(sdx__uni_number, c);
}
/* \s of the `regex` module (Unicode White_Space). */
static int sdx__is_white_space(uint32_t c) {
    if (c < 128) return c == ' ' || (c >= 9 && c <= 13);
    return SDX__IN(sdx__uni_white_space, c);
}
/* str.isspace(): Python's strip() and re's \s. */
static int sdx__is_py_space(uint32_t c) {
    if (c < 128) return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
    return SDX__IN(sdx__uni_py_space, c);
}
/* Python re's \w. */
static int sdx__is_py_word(uint32_t c) {
    if (c < 128) return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
    return SDX__IN(sdx__uni_py_alnum, c);
}
static uint32_t sdx__ccc(uint32_t c) {
    size_t lo = 0, hi = sizeof sdx__uni_ccc / sizeof sdx__uni_ccc[0];
    if (c < 0x300) return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < sdx__uni_ccc[mid].lo) hi = mid;
        else if (c > sdx__uni_ccc[mid].hi) lo = mid + 1;
        else return sdx__uni_ccc[mid].ccc;
    }
    return 0;
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* Decodes n bytes; a byte that does not start a valid sequence (bad lead,
 * truncated, overlong, surrogate, > U+10FFFF) becomes one U+FFFD. */
static void sdx__utf8_decode(sdx__cps *out, const unsigned char *s, size_t n) {
    const unsigned char *end = s + n;
    while (s < end) {
        int len = sdx__utf8_len(s, end);
        uint32_t c;
        if (len == 0) { sdx__cps_push(out, 0xfffd); s++; continue; }
        c = len == 1 ? s[0] : len == 2 ? (s[0] & 0x1fu) : len == 3 ? (s[0] & 0x0fu) : (s[0] & 0x07u);
        for (int i = 1; i < len; i++) c = (c << 6) | (s[i] & 0x3fu);
        sdx__cps_push(out, c);
        s += len;
    }
}

/* ---- HTML entities --------------------------------------------------------- */

/* Entity named name[0..len) in a table sorted by name, or NULL. */
static const sdx__uentity *sdx__entity_find(const sdx__uentity *t, size_t n, const char *name, size_t len) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = t[mid].name;
        int cmp = strncmp(e, name, len);
        if (cmp == 0) cmp = e[len] ? 1 : 0;
        if (cmp == 0) return &t[mid];
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}
#define SDX__HTML5_FIND(name, len) \
    sdx__entity_find(sdx__html5_entities, sizeof sdx__html5_entities / sizeof sdx__html5_entities[0], name, len)

static int sdx__hex_value(uint32_t c) {
    if (c >= '0' && c <= '9') return (int)(c - '0');
    if ((c | 32) >= 'a' && (c | 32) <= 'f') return (int)((c | 32) - 'a' + 10);
    return -1;
}

/* What html.unescape makes of the numeric reference to `num` (saturated
 * above U+10FFFF): the windows-1252 reading of 0x80..0x9F, U+FFFD for NUL,
 * surrogates and out-of-range values, nothing for control characters and
 * noncharacters. */
static void sdx__push_charref(sdx__cps *out, uint32_t num) {
    if (num == 0) sdx__cps_push(out, 0xfffd);
    else if (num == 0x0d) sdx__cps_push(out, 0x0d);
    else if (num >= 0x80 && num <= 0x9f) sdx__cps_push(out, sdx__cp1252_80[num - 0x80]);
    else if ((num >= 0xd800 && num <= 0xdfff) || num > 0x10ffff) sdx__cps_push(out, 0xfffd);
    else if (SDX__IN(sdx__html_invalid_codepoints, num)) return;
    else sdx__cps_push(out, num);
}

/* Parses the digits of a numeric reference at s[i] (just after "&#").
 * Returns the index after the digits (== i when there are none). */
static size_t sdx__charref_digits(const uint32_t *s, size_t n, size_t i, int hex, uint32_t *num) {
    uint64_t v = 0;
    size_t start = i;
    for (; i < n; i++) {
        int d = hex ? sdx__hex_value(s[i]) : (s[i] >= '0' && s[i] <= '9' ? (int)(s[i] - '0') : -1);
        if (d < 0) break;
        v = v * (hex ? 16 : 10) + (uint64_t)d;
        if (v > 0x110000) v = 0x110000;     /* saturate: all such values mean U+FFFD */
    }
    *num = (uint32_t)v;
    return i == start ? start : i;
}

/* Python's html.unescape: "&#123;", "&#x7b;" (';' optional), named
 * references from the HTML5 table, including the longest-prefix rule for
 * legacy names written without ';' ("&notit;" -> "¬it;"). */
static void sdx__html_unescape(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        char name[34];
        size_t k, len = 0;
        if (s[i] != '&') { sdx__cps_push(out, s[i++]); continue; }
        if (i + 1 < n && s[i + 1] == '#') {
            int hex = i + 2 < n && (s[i + 2] == 'x' || s[i + 2] == 'X');
            uint32_t num;
            size_t start = i + 2 + (size_t)hex;
            /* "&#x" without hex digits may still be decimal-less text */
            k = sdx__charref_digits(s, n, start, hex, &num);
            if (k == start) { sdx__cps_push(out, '&'); i++; continue; }
            if (k < n && s[k] == ';') k++;
            sdx__push_charref(out, num);
            i = k;
            continue;
        }
        for (k = i + 1; k < n && len < 32; k++, len++) {
            uint32_t c = s[k];
            if (c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';') break;
            name[len] = c < 128 ? (char)c : (char)0x7f;   /* never part of an entity name */
        }
        if (len == 0) { sdx__cps_push(out, '&'); i++; continue; }
        if (k < n && s[k] == ';') { name[len++] = ';'; k++; }
        {
            const sdx__uentity *e = SDX__HTML5_FIND(name, len);
            size_t x = len;
            if (!e)
                for (x = len - 1; x >= 2 && !(e = SDX__HTML5_FIND(name, x)); x--) {}
            if (e) {
                sdx__cps_push_z(out, e->cp, 3);
                sdx__cps_push_n(out, s + i + 1 + x, len - x);   /* the part after the matched prefix */
            } else {
                sdx__cps_push_n(out, s + i, k - i);
            }
        }
        i = k;
    }
}

/* ftfy's unescape_html: only complete "&name;" / "&#num;" forms of at most
 * 24 alphanumerics, plus all-caps spellings of lower-case entity names. */
static void sdx__ftfy_unescape(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        char name[28];
        size_t k, len = 0;
        int numeric;
        if (s[i] != '&') { sdx__cps_push(out, s[i++]); continue; }
        numeric = i + 1 < n && s[i + 1] == '#';
        for (k = i + 1 + (size_t)numeric; k < n && len < 24; k++, len++) {
            uint32_t c = s[k];
            if (!(c < 128 && sdx__is_py_word(c) && c != '_')) break;
            name[len] = (char)c;
        }
        if (len == 0 || k >= n || s[k] != ';') { sdx__cps_push(out, s[i++]); continue; }
        name[len] = ';';
        if (numeric) {
            /* html.unescape of the whole match, kept only if it consumed the ';' */
            int hex = name[0] == 'x' || name[0] == 'X';
            uint32_t num;
            size_t start = i + 2 + (size_t)hex;
            if (sdx__charref_digits(s, n, start, hex, &num) != k || k == start) { sdx__cps_push(out, s[i++]); continue; }
            sdx__push_charref(out, num);
        } else {
            const sdx__uentity *e = SDX__HTML5_FIND(name, len + 1);
            if (!e) e = sdx__entity_find(sdx__ftfy_upper_entities,
                                         sizeof sdx__ftfy_upper_entities / sizeof sdx__ftfy_upper_entities[0], name, len + 1);
            if (!e) { sdx__cps_push(out, s[i++]); continue; }
            sdx__cps_push_z(out, e->cp, 3);
        }
        i = k + 1;
    }
}

/* ---- ftfy fixes ------------------------------------------------------------- */

/* The byte a character came from if it is UTF-8 mojibake read as
 * windows-1252 or Latin-1 (bytes >= 0x80 only), else -1. */
static int sdx__mojibake_byte(uint32_t c) {
    if (c >= 0x80 && c <= 0xff) return (int)c;
    if (c >= 0x152 && c <= 0x2122)
        for (int b = 0; b < 32; b++)
            if (sdx__cp1252_80[b] == c) return 0x80 + b;
    return -1;
}

/* ftfy's fix_encoding for its most common case: a run of characters that
 * re-encoded as windows-1252/Latin-1 forms valid multi-byte UTF-8
 * ("cafÃ©" -> "café", "â€™" -> "’"). A run is replaced only if every
 * byte belongs to a valid sequence and the result has no control
 * characters; ASCII never takes part (UTF-8 sequences have no ASCII
 * bytes), so runs are maximal spans of non-ASCII re-encodable characters.
 * ftfy's statistical badness heuristics and rarer codecs are not
 * reproduced. */
static int sdx__mojibake_seq(const uint32_t *s, size_t n, uint32_t *cp) {
    unsigned char b[4];
    size_t m = n < 4 ? n : 4;
    int len;
    for (size_t k = 0; k < m; k++) b[k] = (unsigned char)sdx__mojibake_byte(s[k]);
    len = sdx__utf8_len(b, b + m);
    if (len < 2) return 0;
    *cp = len == 2 ? (b[0] & 0x1fu) : len == 3 ? (b[0] & 0x0fu) : (b[0] & 0x07u);
    for (int q = 1; q < len; q++) *cp = (*cp << 6) | (b[q] & 0x3fu);
    return len;
}

static void sdx__fix_mojibake(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i, p;
        uint32_t c;
        int len = 0;
        while (j < n && sdx__mojibake_byte(s[j]) >= 0) j++;
        if (j - i < 2) { sdx__cps_push(out, s[i++]); continue; }
        for (p = i; p < j; p += (size_t)len)
            if ((len = sdx__mojibake_seq(s + p, j - p, &c)) == 0 || c < 0xa0) break;
        if (p < j) { sdx__cps_push_n(out, s + i, j - i); i = j; continue; }
        for (p = i; p < j; p += (size_t)len) {
            len = sdx__mojibake_seq(s + p, j - p, &c);
            sdx__cps_push(out, c);
        }
        i = j;
    }
}

/* Characters ftfy's remove_control_chars deletes. */
static int sdx__is_ftfy_control(uint32_t c) {
    return c <= 8 || c == 0x0b || (c >= 0x0e && c <= 0x1f) || c == 0x7f ||
           (c >= 0x206a && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffc);
}

/* fix_c1_controls, fix_latin_ligatures, fix_character_width,
 * uncurl_quotes, fix_line_breaks, remove_terminal_escapes and
 * remove_control_chars, in ftfy's order, each a character map except the
 * two multi-character patterns. */
static uint32_t sdx__uncurl(uint32_t c) {
    if (c == 0x2bc || (c >= 0x2018 && c <= 0x201b)) return '\'';
    if (c >= 0x201c && c <= 0x201f) return '"';
    return c;
}

static void sdx__ftfy_charmaps(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s[i];
        const sdx__umap3 *lig;
        const sdx__umap2 *wide;
        if (c >= 0x80 && c <= 0x9f) c = sdx__cp1252_80[c - 0x80];
        if ((lig = (const sdx__umap3 *)SDX__UFIND(sdx__uni_ligatures, c)) != NULL) {
            for (int k = 0; k < 3 && lig->to[k]; k++) sdx__cps_push(out, sdx__uncurl(lig->to[k]));
        } else if ((wide = (const sdx__umap2 *)SDX__UFIND(sdx__uni_width, c)) != NULL) {
            for (int k = 0; k < 2 && wide->to[k]; k++) sdx__cps_push(out, sdx__uncurl(wide->to[k]));
        } else {
            sdx__cps_push(out, sdx__uncurl(c));
        }
    }
}

static void sdx__fix_line_breaks(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s[i];
        if (c == '\r' && i + 1 < n && s[i + 1] == '\n') continue;
        if (c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85) c = '\n';
        sdx__cps_push(out, c);
    }
}

/* Drops ESC '[' [0-9;]* [A-Za-z] sequences, then control characters. */
static void sdx__remove_controls(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '[') {
            size_t j = i + 2;
            while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) j++;
            if (j < n && (s[j] | 32) >= 'a' && (s[j] | 32) <= 'z') { i = j; continue; }
        }
        if (!sdx__is_ftfy_control(s[i])) sdx__cps_push(out, s[i]);
    }
}

/* ---- NFC ------------------------------------------------------------------ */

#define SDX__HANGUL_S 0xac00u
#define SDX__HANGUL_L 0x1100u
#define SDX__HANGUL_V 0x1161u
#define SDX__HANGUL_T 0x11a7u

static void sdx__nfd_push(sdx__cps *out, uint32_t c) {
    const sdx__unfd *d;
    if (c >= SDX__HANGUL_S && c < SDX__HANGUL_S + 11172) {
        uint32_t si = c - SDX__HANGUL_S;
        sdx__cps_push(out, SDX__HANGUL_L + si / 588);
        sdx__cps_push(out, SDX__HANGUL_V + (si % 588) / 28);
        if (si % 28) sdx__cps_push(out, SDX__HANGUL_T + si % 28);
        return;
    }
    if (c >= 0xc0 && (d = (const sdx__unfd *)SDX__UFIND(sdx__uni_nfd, c)) != NULL) sdx__cps_push_z(out, d->d, 4);
    else sdx__cps_push(out, c);
}

/* Canonical ordering: stable sort of each run of non-starters by class.
 * Long runs use a counting sort so hostile input stays linear. */
static int sdx__canonical_order(sdx_ctx *ctx, uint32_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && sdx__ccc(s[j]) != 0) j++;
        if (j - i > 1 && j - i <= 32) {
            for (size_t a = i + 1; a < j; a++) {
                uint32_t c = s[a], cc = sdx__ccc(c);
                size_t b = a;
                while (b > i && sdx__ccc(s[b - 1]) > cc) { s[b] = s[b - 1]; b--; }
                s[b] = c;
            }
        } else if (j - i > 32) {
            size_t count[257] = { 0 }, m = j - i;
            uint32_t *tmp = (uint32_t *)sdx__malloc(ctx, m * sizeof(uint32_t));
            if (!tmp) return sdx__nomem(ctx, "text normalisation", m * sizeof(uint32_t));
            for (size_t a = i; a < j; a++) count[sdx__ccc(s[a]) + 1]++;
            for (int c = 1; c < 257; c++) count[c] += count[c - 1];
            for (size_t a = i; a < j; a++) tmp[count[sdx__ccc(s[a])]++] = s[a];
            memcpy(s + i, tmp, m * sizeof(uint32_t));
            sdx__free(ctx, tmp);
        }
        i = j + 1;
    }
    return SDX_OK;
}

static uint32_t sdx__compose_pair(uint32_t a, uint32_t b) {
    size_t lo = 0, hi = sizeof sdx__uni_compose / sizeof sdx__uni_compose[0];
    if (a >= SDX__HANGUL_L && a < SDX__HANGUL_L + 19 && b >= SDX__HANGUL_V && b < SDX__HANGUL_V + 21)
        return SDX__HANGUL_S + ((a - SDX__HANGUL_L) * 21 + (b - SDX__HANGUL_V)) * 28;
    if (a >= SDX__HANGUL_S && a < SDX__HANGUL_S + 11172 && (a - SDX__HANGUL_S) % 28 == 0 &&
        b > SDX__HANGUL_T && b < SDX__HANGUL_T + 28)
        return a + (b - SDX__HANGUL_T);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sdx__ucomp *p = &sdx__uni_compose[mid];
        if (p->a < a || (p->a == a && p->b < b)) lo = mid + 1;
        else if (p->a > a || p->b > b) hi = mid;
        else return p->c;
    }
    return 0;
}

/* unicodedata.normalize("NFC"): decompose, order, recompose. Text below
 * U+0300 is already NFC and is passed through. */
static int sdx__nfc(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i, starter = 0, w;
    int have_starter = 0;
    uint32_t last_ccc = 0;
    for (i = 0; i < n && s[i] < 0x300; i++) {}
    if (i == n) { sdx__cps_push_n(out, s, n); return out->oom ? SDX_ERR_NOMEM : SDX_OK; }
    for (i = 0; i < n; i++) sdx__nfd_push(out, s[i]);
    if (out->oom) return SDX_ERR_NOMEM;
    if (sdx__canonical_order(out->ctx, out->v, out->n) != SDX_OK) return SDX_ERR_NOMEM;
    for (i = 0, w = 0; i < out->n; i++) {
        uint32_t c = out->v[i], cc = sdx__ccc(c), comp;
        /* c may join the last starter unless a character in between is
         * a starter or has a class >= c's (it is then "blocked") */
        if (have_starter && (w == starter + 1 || (last_ccc != 0 && last_ccc < cc)) &&
            (comp = sdx__compose_pair(out->v[starter], c)) != 0) {
            out->v[starter] = comp;
            continue;
        }
        if (cc == 0) { starter = w; have_starter = 1; last_ccc = 0; }
        else last_ccc = cc;
        out->v[w++] = c;
    }
    out->n = w;
    return SDX_OK;
}

/* ---- the clean-up pipeline ----------------------------------------------- */

/* One ftfy.fix_and_explain round over one line (fix_text works line by
 * line); repeated by the caller until nothing changes. */
static int sdx__ftfy_round(sdx__cps *a, sdx__cps *b, int unescape) {
    if (unescape) { sdx__ftfy_unescape(b, a->v, a->n); sdx__cps_swap(a, b); }
    sdx__fix_mojibake(b, a->v, a->n);    sdx__cps_swap(a, b);
    sdx__ftfy_charmaps(b, a->v, a->n);   sdx__cps_swap(a, b);
    sdx__fix_line_breaks(b, a->v, a->n); sdx__cps_swap(a, b);
    sdx__remove_controls(b, a->v, a->n); sdx__cps_swap(a, b);
    if (a->oom || b->oom) return SDX_ERR_NOMEM;
    if (sdx__nfc(b, a->v, a->n) != SDX_OK || b->oom) return SDX_ERR_NOMEM;
    sdx__cps_swap(a, b);
    return SDX_OK;
}

/* ftfy.fix_text: line by line (each line keeps its '\n'), each line fixed
 * until nothing changes (at most 8 rounds). HTML entities are decoded by
 * ftfy only until a line containing '<' is met (ftfy then treats the text
 * as HTML for the rest of the call). */
static int sdx__ftfy(sdx__cps *text) {
    sdx_ctx *ctx = text->ctx;
    sdx__cps result = { ctx, NULL, 0, 0, 0 }, a = { ctx, NULL, 0, 0, 0 };
    sdx__cps b = { ctx, NULL, 0, 0, 0 }, prev = { ctx, NULL, 0, 0, 0 };
    int unescape = 1, rc = SDX_OK;
    size_t pos = 0;
    while (pos < text->n && rc == SDX_OK) {
        size_t end = pos;
        while (end < text->n && text->v[end] != '\n') end++;
        if (end < text->n) end++;
        for (size_t i = pos; i < end; i++) if (text->v[i] == '<') unescape = 0;
        a.n = 0;
        sdx__cps_push_n(&a, text->v + pos, end - pos);
        for (int round = 0; round < 8 && !a.oom; round++) {
            prev.n = 0;
            sdx__cps_push_n(&prev, a.v, a.n);
            if (prev.oom || (rc = sdx__ftfy_round(&a, &b, unescape)) != SDX_OK) break;
            if (a.n == prev.n && (a.n == 0 || memcmp(a.v, prev.v, a.n * sizeof(uint32_t)) == 0)) break;
        }
        sdx__cps_push_n(&result, a.v, a.n);
        if (a.oom || prev.oom || result.oom) rc = SDX_ERR_NOMEM;
        pos = end;
    }
    sdx__free(ctx, a.v);
    sdx__free(ctx, b.v);
    sdx__free(ctx, prev.v);
    if (rc != SDX_OK) { sdx__free(ctx, result.v); return rc; }
    sdx__free(ctx, text->v);
    *text = result;
    return SDX_OK;
}

/* Python's strip(), then runs of White_Space become one space. The
 * second strip() of whitespace_clean has nothing left to do: White_Space
 * is a subset of str.isspace(), so the ends are not White_Space. */
static void sdx__collapse_space(sdx__cps *out, const uint32_t *s, size_t n) {
    size_t i = 0, end = n;
    while (i < end && sdx__is_py_space(s[i])) i++;
    while (end > i && sdx__is_py_space(s[end - 1])) end--;
    while (i < end) {
        if (sdx__is_white_space(s[i])) {
            while (i < end && sdx__is_white_space(s[i])) i++;
            sdx__cps_push(out, ' ');
        } else {
            sdx__cps_push(out, s[i++]);
        }
    }
}

/* str.lower(): full mapping, incl. U+0130 -> "i\u0307" and the
 * final-sigma rule (Σ -> ς at the end of a word). */
static void sdx__lower(sdx__cps *out, const uint32_t *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t c = s[i];
        const sdx__umap *m;
        if (c < 128) { sdx__cps_push(out, (c >= 'A' && c <= 'Z') ? c + 32 : c); continue; }
        if (c == 0x130) { sdx__cps_push(out, 'i'); sdx__cps_push(out, 0x307); continue; }
        if (c == 0x3a3) {
            size_t j = i;
            int final = 0;
            while (j > 0 && SDX__IN(sdx__uni_case_ignorable, s[j - 1])) j--;
            if (j > 0 && SDX__IN(sdx__uni_cased, s[j - 1])) {
                j = i + 1;
                while (j < n && SDX__IN(sdx__uni_case_ignorable, s[j])) j++;
                final = j == n || !SDX__IN(sdx__uni_cased, s[j]);
            }
            sdx__cps_push(out, final ? 0x3c2 : 0x3c3);
            continue;
        }
        m = (const sdx__umap *)SDX__UFIND(sdx__uni_lower, c);
        sdx__cps_push(out, m ? m->to : c);
    }
}

/* The whole clean-up; `text` holds the decoded input on entry and the
 * cleaned, lower-cased text on return. */
static int sdx__clip_clean(sdx__cps *text) {
    sdx__cps t1 = { text->ctx, NULL, 0, 0, 0 };
    int rc = sdx__ftfy(text);
    if (rc == SDX_OK) {
        t1.n = 0;
        sdx__html_unescape(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        sdx__html_unescape(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        sdx__collapse_space(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        sdx__lower(&t1, text->v, text->n); sdx__cps_swap(text, &t1);
        if (text->oom || t1.oom) rc = SDX_ERR_NOMEM;
    }
    sdx__free(text->ctx, t1.v);
    return rc;
}

/* ---- pre-tokenizer ------------------------------------------------------ */

/* Length of the CLIP regex match at s[i] (case-insensitive, as the regex
 * module runs it), or 0 for whitespace, which no alternative matches:
 *   <|startoftext|> | <|endoftext|> | 's|'t|'re|'ve|'m|'ll|'d
 *   | \p{L}+ | \p{N} | [^\s\p{L}\p{N}]+                                  */
static size_t sdx__pretoken(const uint32_t *s, size_t n, size_t i, int *special) {
    static const char *const specials[2] = { "<|startoftext|>", "<|endoftext|>" };
    static const char *const contractions[7] = { "s", "t", "re", "ve", "m", "ll", "d" };
    size_t j;
    *special = -1;
    if (s[i] == '<') {
        for (int k = 0; k < 2; k++) {
            const char *p = specials[k];
            int exact = 1;
            for (j = 0; p[j] && i + j < n; j++) {
                /* case-insensitive 's' also matches U+017F (long s) */
                if (s[i + j] == (uint32_t)p[j]) continue;
                if (p[j] == 's' && s[i + j] == 0x17f) { exact = 0; continue; }
                break;
            }
            if (!p[j]) { if (exact) *special = k; return j; }
        }
    }
    if (s[i] == '\'' && i + 1 < n) {
        for (int k = 0; k < 7; k++) {
            const char *p = contractions[k];
            for (j = 0; p[j] && i + 1 + j < n; j++)
                if (s[i + 1 + j] != (uint32_t)p[j] && !(p[j] == 's' && s[i + 1 + j] == 0x17f)) break;
            if (!p[j]) return j + 1;
        }
    }
    if (sdx__is_letter(s[i])) {
        for (j = i + 1; j < n && sdx__is_letter(s[j]); j++) {}
        return j - i;
    }
    if (sdx__is_number(s[i])) return 1;
    if (sdx__is_white_space(s[i])) return 0;
    for (j = i + 1; j < n && !sdx__is_white_space(s[j]) && !sdx__is_letter(s[j]) && !sdx__is_number(s[j]); j++) {}
    return j - i;
}

/* ---- BPE ------------------------------------------------------------------- */

static size_t sdx__pair_slot(const sdx_tokenizer *t, uint64_t key) {
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & t->pair_mask;
}

/* Rank of merging (left, right) and the merged id; 0 if not a merge. */
static int sdx__pair_lookup(const sdx_tokenizer *t, int32_t left, int32_t right, int32_t *rank, int32_t *id) {
    uint64_t key = (((uint64_t)(uint32_t)left << 32) | (uint32_t)right) + 1;
    for (size_t s = sdx__pair_slot(t, key);; s = (s + 1) & t->pair_mask) {
        if (t->pair_key[s] == 0) return 0;
        if (t->pair_key[s] == key) { *rank = t->pair_rank[s]; *id = t->pair_id[s]; return 1; }
    }
}

typedef struct sdx__bpe_sym { int32_t id, prev, next; } sdx__bpe_sym;
typedef struct sdx__bpe_cand { int32_t rank, pos, left, right; } sdx__bpe_cand;

/* Scratch reused across the words of one call. */
typedef struct sdx__bpe_work {
    sdx_ctx *ctx;
    unsigned char *bytes;
    sdx__bpe_sym *sym;
    sdx__bpe_cand *heap;
    size_t cap;                /* symbols the arrays hold */
    int32_t *ids;
    size_t n_ids, cap_ids;
} sdx__bpe_work;

static int sdx__cand_less(const sdx__bpe_cand *a, const sdx__bpe_cand *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void sdx__heap_push(sdx__bpe_cand *h, size_t *n, sdx__bpe_cand c) {
    size_t i = (*n)++;
    while (i > 0 && sdx__cand_less(&c, &h[(i - 1) / 2])) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = c;
}

static sdx__bpe_cand sdx__heap_pop(sdx__bpe_cand *h, size_t *n) {
    sdx__bpe_cand top = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && sdx__cand_less(&h[c + 1], &h[c])) c++;
        if (!sdx__cand_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

static void sdx__bpe_consider(const sdx_tokenizer *t, sdx__bpe_work *w, size_t *nh, int32_t pos) {
    int32_t next, rank, id;
    sdx__bpe_cand c;
    if (pos < 0 || (next = w->sym[pos].next) < 0) return;
    if (!sdx__pair_lookup(t, w->sym[pos].id, w->sym[next].id, &rank, &id)) return;
    c.rank = rank; c.pos = pos; c.left = w->sym[pos].id; c.right = w->sym[next].id;
    sdx__heap_push(w->heap, nh, c);
}

static int sdx__bpe_reserve(sdx__bpe_work *w, size_t nsym) {
    unsigned char *b;
    sdx__bpe_sym *s;
    sdx__bpe_cand *h;
    if (nsym <= w->cap) return SDX_OK;
    if (nsym > (size_t)INT32_MAX / 4) return sdx__fail(w->ctx, SDX_ERR_INVALID_ARG, "tokenizer: word of %zu bytes is too long", nsym);
    b = (unsigned char *)sdx__realloc(w->ctx, w->bytes, nsym);
    if (b) w->bytes = b;
    s = b ? (sdx__bpe_sym *)sdx__realloc(w->ctx, w->sym, nsym * sizeof *s) : NULL;
    if (s) w->sym = s;
    h = s ? (sdx__bpe_cand *)sdx__realloc(w->ctx, w->heap, 3 * nsym * sizeof *h) : NULL;
    if (!h) return sdx__nomem(w->ctx, "tokenizer scratch", 3 * nsym * sizeof *h);
    w->heap = h;
    w->cap = nsym;
    return SDX_OK;
}

static int sdx__emit_id(sdx__bpe_work *w, int32_t id) {
    if (w->n_ids == w->cap_ids) {
        size_t ncap = w->cap_ids ? w->cap_ids * 2 : 64;
        int32_t *ni = (int32_t *)sdx__realloc(w->ctx, w->ids, ncap * sizeof(int32_t));
        if (!ni) return sdx__nomem(w->ctx, "token ids", ncap * sizeof(int32_t));
        w->ids = ni;
        w->cap_ids = ncap;
    }
    w->ids[w->n_ids++] = id;
    return SDX_OK;
}

/* BPE of one pre-token: its UTF-8 bytes as byte characters, the last
 * with "</w>"; then repeatedly the lowest-ranked adjacent pair is merged,
 * leftmost first. A heap keyed by (rank, position) with lazy deletion
 * gives the same result as CLIP's rescan-everything loop (equal ranks
 * are the same pair, merged left to right) in O(n log n). */
static int sdx__bpe_word(const sdx_tokenizer *t, sdx__bpe_work *w, const uint32_t *s, size_t n) {
    size_t nb = 0, nh = 0;
    int rc;
    char tmp[4];
    for (size_t i = 0; i < n; i++) nb += sdx__utf8_put(tmp, s[i]);
    if ((rc = sdx__bpe_reserve(w, nb)) != SDX_OK) return rc;
    nb = 0;
    for (size_t i = 0; i < n; i++) nb += sdx__utf8_put((char *)w->bytes + nb, s[i]);
    for (size_t i = 0; i < nb; i++) {
        w->sym[i].id = i + 1 < nb ? t->byte_id[w->bytes[i]] : t->byte_end_id[w->bytes[i]];
        w->sym[i].prev = (int32_t)i - 1;
        w->sym[i].next = i + 1 < nb ? (int32_t)i + 1 : -1;
    }
    for (size_t i = 0; i + 1 < nb; i++) sdx__bpe_consider(t, w, &nh, (int32_t)i);
    while (nh) {
        sdx__bpe_cand c = sdx__heap_pop(w->heap, &nh);
        sdx__bpe_sym *l = &w->sym[c.pos];
        int32_t r = l->next, rank, id;
        if (l->id != c.left || r < 0 || w->sym[r].id != c.right) continue;   /* stale */
        sdx__pair_lookup(t, c.left, c.right, &rank, &id);
        l->id = id;
        l->next = w->sym[r].next;
        if (l->next >= 0) w->sym[l->next].prev = c.pos;
        w->sym[r].id = -1;
        sdx__bpe_consider(t, w, &nh, l->prev);
        sdx__bpe_consider(t, w, &nh, c.pos);
    }
    for (int32_t i = 0; i >= 0; i = w->sym[i].next)
        if ((rc = sdx__emit_id(w, w->sym[i].id)) != SDX_OK) return rc;
    return SDX_OK;
}

/* Encodes cleaned text into w->ids. */
static int sdx__encode_clean(const sdx_tokenizer *t, sdx__bpe_work *w, const uint32_t *s, size_t n) {
    size_t i = 0;
    int rc;
    while (i < n) {
        int special;
        size_t len = sdx__pretoken(s, n, i, &special);
        if (len == 0) { i++; continue; }
        if (special >= 0) rc = sdx__emit_id(w, special == 0 ? t->bos : t->eos);
        else rc = sdx__bpe_word(t, w, s + i, len);
        if (rc != SDX_OK) return rc;
        i += len;
    }
    return SDX_OK;
}

SDX_API sdx_result sdx_tokenize(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t **ids, int *n) {
    sdx__cps cps = { ctx, NULL, 0, 0, 0 };
    sdx__bpe_work w;
    size_t len;
    int rc;
    if (ids) *ids = NULL;
    if (n) *n = 0;
    if (!ctx || !tok || !text || !ids || !n) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenize: NULL argument");
    len = strlen(text);
    if (len > (size_t)INT32_MAX / 8) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenize: text of %zu bytes is too long", len);
    memset(&w, 0, sizeof w);
    w.ctx = ctx;
    sdx__utf8_decode(&cps, (const unsigned char *)text, len);
    rc = cps.oom ? sdx__nomem(ctx, "prompt text", len * 4) : sdx__clip_clean(&cps);
    if (rc == SDX_ERR_NOMEM) rc = sdx__nomem(ctx, "prompt clean-up", len * 16);
    if (rc == SDX_OK) rc = sdx__encode_clean(tok, &w, cps.v, cps.n);
    if (rc == SDX_OK && !w.ids && !(w.ids = (int32_t *)sdx__malloc(ctx, sizeof(int32_t))))
        rc = sdx__nomem(ctx, "token ids", sizeof(int32_t));
    sdx__free(ctx, cps.v);
    sdx__free(ctx, w.bytes);
    sdx__free(ctx, w.sym);
    sdx__free(ctx, w.heap);
    if (rc != SDX_OK) { sdx__free(ctx, w.ids); return (sdx_result)rc; }
    *ids = w.ids;
    *n = (int)w.n_ids;
    return SDX_OK;
}

SDX_API void sdx_tokens_free(sdx_ctx *ctx, int32_t *ids) {
    sdx__free(ctx, ids);
}

SDX_API sdx_result sdx_tokenize_padded(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t pad_id,
                                int32_t out[SDX_TEXT_CONTEXT]) {
    int32_t *ids;
    int n, rc, keep;
    if (!out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenize_padded: NULL output");
    if ((rc = sdx_tokenize(ctx, tok, text, &ids, &n)) != SDX_OK) return (sdx_result)rc;
    keep = SDX__MIN(n, SDX_TEXT_CONTEXT - 2);
    out[0] = tok->bos;
    memcpy(out + 1, ids, (size_t)keep * sizeof(int32_t));
    out[1 + keep] = tok->eos;
    for (int i = keep + 2; i < SDX_TEXT_CONTEXT; i++) out[i] = pad_id;
    sdx_tokens_free(ctx, ids);
    return SDX_OK;
}

SDX_API void sdx_tokenizer_info(const sdx_tokenizer *tok, int *n_vocab, int32_t *bos, int32_t *eos) {
    if (n_vocab) *n_vocab = tok ? tok->n_vocab : 0;
    if (bos) *bos = tok ? tok->bos : -1;
    if (eos) *eos = tok ? tok->eos : -1;
}

/* ---- vocabulary loading ----------------------------------------------------- */

/* GPT-2's bytes_to_unicode: printable bytes stand for themselves, the other
 * 68 (0..32, 127..160, 173) for U+0100.. in byte order. Also returns the
 * character's id (its position in that list). */
static uint32_t sdx__byte_char(int b, int32_t *id) {
    int printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    int below = 0, other = 0;
    for (int k = 0; k < b; k++) {
        int p = (k >= 33 && k <= 126) || (k >= 161 && k <= 172) || k >= 174;
        below += p;
        other += !p;
    }
    *id = printable ? below : 188 + other;
    return printable ? (uint32_t)b : 256u + (uint32_t)other;
}

/* string -> id, only while loading */
typedef struct sdx__vmap {
    sdx_ctx *ctx;
    const char **str;
    uint32_t *len;
    int32_t *id;
    size_t n, cap;
    int32_t *slot;            /* entry index + 1; 0 = empty */
    size_t mask;
    char *arena;              /* storage for derived strings */
    size_t arena_used, arena_cap;
} sdx__vmap;

static uint64_t sdx__str_hash(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static int sdx__vmap_init(sdx__vmap *m, sdx_ctx *ctx, size_t cap, size_t arena_cap) {
    size_t nslots = 1;
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    while (nslots < 2 * cap) nslots *= 2;
    m->str = (const char **)sdx__calloc(ctx, cap, sizeof *m->str);
    m->len = (uint32_t *)sdx__calloc(ctx, cap, sizeof *m->len);
    m->id = (int32_t *)sdx__calloc(ctx, cap, sizeof *m->id);
    m->slot = (int32_t *)sdx__calloc(ctx, nslots, sizeof *m->slot);
    m->arena = (char *)sdx__malloc(ctx, arena_cap);
    if (!m->str || !m->len || !m->id || !m->slot || !m->arena) return sdx__nomem(ctx, "vocabulary map", nslots * 4 + cap * 16);
    m->cap = cap;
    m->mask = nslots - 1;
    m->arena_cap = arena_cap;
    return SDX_OK;
}

static void sdx__vmap_free(sdx__vmap *m) {
    sdx__free(m->ctx, (void *)m->str);
    sdx__free(m->ctx, m->len);
    sdx__free(m->ctx, m->id);
    sdx__free(m->ctx, m->slot);
    sdx__free(m->ctx, m->arena);
}

/* Slot holding s (or the empty slot where it would go). */
static size_t sdx__vmap_slot(const sdx__vmap *m, const char *s, size_t n) {
    size_t i = (size_t)sdx__str_hash(s, n) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        int32_t e = m->slot[i];
        if (e == 0) return i;
        if (m->len[e - 1] == n && memcmp(m->str[e - 1], s, n) == 0) return i;
    }
}

static int32_t sdx__vmap_get(const sdx__vmap *m, const char *s, size_t n) {
    int32_t e = m->slot[sdx__vmap_slot(m, s, n)];
    return e ? m->id[e - 1] : -1;
}

/* Inserts (or, like a Python dict, overwrites) s -> id. s must outlive m. */
static void sdx__vmap_put(sdx__vmap *m, const char *s, size_t n, int32_t id) {
    size_t i = sdx__vmap_slot(m, s, n);
    if (m->slot[i]) { m->id[m->slot[i] - 1] = id; return; }
    if (m->n == m->cap) return;   /* sized by the caller; cannot happen */
    m->str[m->n] = s;
    m->len[m->n] = (uint32_t)n;
    m->id[m->n] = id;
    m->slot[i] = (int32_t)++m->n;
}

/* Copies a+b into the arena (sized by the caller). */
static const char *sdx__vmap_concat(sdx__vmap *m, const char *a, size_t na, const char *b, size_t nb) {
    char *d;
    if (m->arena_cap - m->arena_used < na + nb) return NULL;
    d = m->arena + m->arena_used;
    memcpy(d, a, na);
    memcpy(d + na, b, nb);
    m->arena_used += na + nb;
    return d;
}

/* One merge line "left right". */
typedef struct sdx__merge { const char *left, *right; uint32_t nl, nr; } sdx__merge;

/* Splits the merge list into at most SDX__CLIP_MAX_MERGES pairs. The first
 * line is a header when it contains "#version" (both the OpenAI file and
 * Hugging Face's merges.txt have one). */
static int sdx__parse_merges(sdx_ctx *ctx, const char *text, size_t len, const char *what,
                             sdx__merge **out, int *n_out) {
    const char *p = text, *end = text + len;
    sdx__merge *m = (sdx__merge *)sdx__calloc(ctx, SDX__CLIP_MAX_MERGES, sizeof *m);
    int n = 0, line = 1;
    if (!m) return sdx__nomem(ctx, what, SDX__CLIP_MAX_MERGES * sizeof *m);
    for (; p < end && n < SDX__CLIP_MAX_MERGES; line++) {
        const char *eol = (const char *)memchr(p, '\n', (size_t)(end - p)), *sp, *q;
        if (!eol) eol = end;
        q = eol;
        if (q > p && q[-1] == '\r') q--;
        if (line == 1) {
            int header = 0;
            for (const char *h = p; h + 8 <= q; h++) if (!memcmp(h, "#version", 8)) { header = 1; break; }
            if (header) { p = eol + (eol < end); continue; }
        }
        if (q == p && eol == end) break;          /* final newline */
        sp = (const char *)memchr(p, ' ', (size_t)(q - p));
        if (!sp || sp == p || sp + 1 >= q || memchr(sp + 1, ' ', (size_t)(q - sp - 1))) {
            sdx__free(ctx, m);
            return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: line %d is not a merge 'left right': '%.*s'", what, line,
                             (int)SDX__MIN(q - p, 60), p);
        }
        m[n].left = p; m[n].nl = (uint32_t)(sp - p);
        m[n].right = sp + 1; m[n].nr = (uint32_t)(q - sp - 1);
        n++;
        p = eol + (eol < end);
    }
    if (n == 0) { sdx__free(ctx, m); return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: no merges found", what); }
    *out = m;
    *n_out = n;
    return SDX_OK;
}

/* ids 0..511 (byte characters, then the same with "</w>") and one id per
 * merge from 512 on, as CLIP's SimpleTokenizer builds its encoder. */
static int sdx__vmap_derive(sdx__vmap *m, const sdx__merge *mg, int n) {
    for (int b = 0; b < 256; b++) {
        char u[4];
        int32_t id;
        size_t nu = sdx__utf8_put(u, sdx__byte_char(b, &id));
        const char *plain = sdx__vmap_concat(m, u, nu, "", 0), *end = sdx__vmap_concat(m, u, nu, "</w>", 4);
        if (!plain || !end) return sdx__fail(m->ctx, SDX_ERR_NOMEM, "vocabulary arena too small");
        sdx__vmap_put(m, plain, nu, id);
        sdx__vmap_put(m, end, nu + 4, id + 256);
    }
    for (int r = 0; r < n; r++) {
        const char *s = sdx__vmap_concat(m, mg[r].left, mg[r].nl, mg[r].right, mg[r].nr);
        if (!s) return sdx__fail(m->ctx, SDX_ERR_NOMEM, "vocabulary arena too small");
        sdx__vmap_put(m, s, mg[r].nl + mg[r].nr, 512 + r);
    }
    return SDX_OK;
}

/* vocab.json: {"token": id, ...}. */
static int sdx__vmap_from_json(sdx__vmap *m, const sdx__json *root, const char *what, int32_t *max_id) {
    *max_id = -1;
    if (!root || root->type != SDX__JSON_OBJECT) return sdx__fail(m->ctx, SDX_ERR_FORMAT, "%s: expected a JSON object", what);
    for (const sdx__json *e = root->child; e; e = e->next) {
        uint64_t id;
        if (!sdx__json_uint64(e, &id) || id >= (1u << 24))
            return sdx__fail(m->ctx, SDX_ERR_FORMAT, "%s: id of '%.*s' is not an integer in [0, 2^24)", what,
                             (int)SDX__MIN(e->key_len, 60), e->key);
        sdx__vmap_put(m, e->key, e->key_len, (int32_t)id);
        if ((int32_t)id > *max_id) *max_id = (int32_t)id;
    }
    return SDX_OK;
}

static int sdx__tok_pairs_alloc(sdx_tokenizer *t, int n) {
    size_t nslots = 1;
    while (nslots < 2 * (size_t)n + 2) nslots *= 2;
    t->pair_key = (uint64_t *)sdx__calloc(t->ctx, nslots, sizeof *t->pair_key);
    t->pair_rank = (int32_t *)sdx__calloc(t->ctx, nslots, sizeof *t->pair_rank);
    t->pair_id = (int32_t *)sdx__calloc(t->ctx, nslots, sizeof *t->pair_id);
    if (!t->pair_key || !t->pair_rank || !t->pair_id) return sdx__nomem(t->ctx, "merge table", nslots * 16);
    t->pair_mask = nslots - 1;
    return SDX_OK;
}

/* Resolves every merge and the byte characters to ids through m. */
static int sdx__tok_build(sdx_tokenizer *t, const sdx__vmap *m, const sdx__merge *mg, int n, int from_json,
                          const char *what) {
    char buf[1024];
    int rc;
    for (int b = 0; b < 256; b++) {
        char u[8];
        int32_t id;
        size_t nu = sdx__utf8_put(u, sdx__byte_char(b, &id));
        memcpy(u + nu, "</w>", 4);
        t->byte_id[b] = sdx__vmap_get(m, u, nu);
        t->byte_end_id[b] = sdx__vmap_get(m, u, nu + 4);
        if (t->byte_id[b] < 0 || t->byte_end_id[b] < 0)
            return sdx__fail(t->ctx, SDX_ERR_FORMAT, "%s: the vocabulary lacks the byte character '%.*s' (byte %d)", what,
                             (int)nu, u, b);
    }
    if ((rc = sdx__tok_pairs_alloc(t, n)) != SDX_OK) return rc;
    for (int r = 0; r < n; r++) {
        int32_t l = sdx__vmap_get(m, mg[r].left, mg[r].nl), rt = sdx__vmap_get(m, mg[r].right, mg[r].nr), id;
        uint64_t key;
        size_t s;
        if (mg[r].nl + mg[r].nr > sizeof buf)
            return sdx__fail(t->ctx, SDX_ERR_FORMAT, "%s: merge %d is implausibly long", what, r + 1);
        memcpy(buf, mg[r].left, mg[r].nl);
        memcpy(buf + mg[r].nl, mg[r].right, mg[r].nr);
        id = sdx__vmap_get(m, buf, mg[r].nl + mg[r].nr);
        if (id < 0 && from_json)
            return sdx__fail(t->ctx, SDX_ERR_FORMAT, "%s: vocab.json has no entry for merge %d '%.*s'", what, r + 1,
                             (int)(mg[r].nl + mg[r].nr), buf);
        if (l < 0 || rt < 0) continue;   /* a pair of unknown symbols can never be formed */
        key = (((uint64_t)(uint32_t)l << 32) | (uint32_t)rt) + 1;
        for (s = sdx__pair_slot(t, key); t->pair_key[s] && t->pair_key[s] != key; s = (s + 1) & t->pair_mask) {}
        t->pair_key[s] = key;                 /* a repeated merge keeps its last rank, like dict(zip(...)) */
        t->pair_rank[s] = r;
        t->pair_id[s] = id;
    }
    return SDX_OK;
}

/* Builds a tokenizer from merge-list text; json (may be NULL) is a parsed
 * vocab.json giving the ids. */
static int sdx__tokenizer_from_text(sdx_ctx *ctx, const char *text, size_t len, const sdx__json *json,
                                    const char *what, sdx_tokenizer **out) {
    sdx__merge *mg = NULL;
    sdx__vmap map;
    sdx_tokenizer *t;
    int n = 0, rc;
    int32_t max_id = -1;
    size_t entries;
    if ((rc = sdx__parse_merges(ctx, text, len, what, &mg, &n)) != SDX_OK) return rc;
    entries = json ? json->len + 1 : (size_t)n + 512 + 2;
    rc = sdx__vmap_init(&map, ctx, entries, len + 256 * 16 + 64);
    if (rc == SDX_OK) rc = json ? sdx__vmap_from_json(&map, json, what, &max_id) : sdx__vmap_derive(&map, mg, n);
    t = rc == SDX_OK ? (sdx_tokenizer *)sdx__calloc(ctx, 1, sizeof *t) : NULL;
    if (rc == SDX_OK && !t) rc = sdx__nomem(ctx, "tokenizer", sizeof *t);
    if (rc == SDX_OK) {
        t->ctx = ctx;
        t->n_merges = n;
        rc = sdx__tok_build(t, &map, mg, n, json != NULL, what);
    }
    if (rc == SDX_OK) {
        if (json) {
            t->bos = sdx__vmap_get(&map, "<|startoftext|>", 15);
            t->eos = sdx__vmap_get(&map, "<|endoftext|>", 13);
            t->n_vocab = max_id + 1;
            if (t->bos < 0 || t->eos < 0)
                rc = sdx__fail(ctx, SDX_ERR_FORMAT, "%s: vocab.json lacks <|startoftext|> or <|endoftext|>", what);
        } else {
            t->bos = 512 + n;
            t->eos = 513 + n;
            t->n_vocab = 514 + n;
        }
    }
    sdx__vmap_free(&map);
    sdx__free(ctx, mg);
    if (rc != SDX_OK) { sdx_tokenizer_free(t); return rc; }
    *out = t;
    return SDX_OK;
}

/* A merge list in memory, gzip-compressed or not. */
static int sdx__tokenizer_from_bytes(sdx_ctx *ctx, const uint8_t *data, size_t size, const sdx__json *json,
                                     const char *what, sdx_tokenizer **out) {
    uint8_t *plain;
    size_t plain_len;
    int rc;
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        if ((rc = sdx__inflate(ctx, data, size, &plain, &plain_len, SDX__VOCAB_MAX_BYTES)) != SDX_OK) {
            char msg[sizeof ctx->error];
            memcpy(msg, ctx->error, sizeof msg);
            return sdx__fail(ctx, rc, "%s: %s", what, msg);
        }
        rc = sdx__tokenizer_from_text(ctx, (const char *)plain, plain_len, NULL, what, out);
        sdx__free(ctx, plain);
        return rc;
    }
    if (size && data[0] == '{')
        return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: looks like vocab.json; pass merges.txt (or its directory) instead", what);
    return sdx__tokenizer_from_text(ctx, (const char *)data, size, json, what, out);
}

SDX_API sdx_result sdx_tokenizer_load_memory(sdx_ctx *ctx, const void *data, size_t size, sdx_tokenizer **out) {
    if (!ctx || !out || (!data && size)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load_memory: NULL argument");
    *out = NULL;
    return (sdx_result)sdx__tokenizer_from_bytes(ctx, (const uint8_t *)data, size, NULL, "vocabulary in memory", out);
}

SDX_API sdx_result sdx_tokenizer_load_source(sdx_ctx *ctx, const sdx_source *src, sdx_tokenizer **out) {
    unsigned char *bytes;
    int rc, kind;
    if (!ctx || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load_source: NULL argument");
    *out = NULL;
    if (!(kind = sdx__source_kind(ctx, src, "sdx_tokenizer_load_source"))) return SDX_ERR_INVALID_ARG;
    if (kind == SDX__SOURCE_PATH) return sdx_tokenizer_load(ctx, src->path, out);
    if (kind == SDX__SOURCE_DATA)
        return (sdx_result)sdx__tokenizer_from_bytes(ctx, (const uint8_t *)src->data, src->size, NULL, sdx__source_name(src), out);
    if ((rc = sdx__source_read_all(ctx, src, SDX__VOCAB_MAX_BYTES, &bytes)) != SDX_OK) return (sdx_result)rc;
    rc = sdx__tokenizer_from_bytes(ctx, bytes, src->size, NULL, sdx__source_name(src), out);
    sdx__free(ctx, bytes);
    return (sdx_result)rc;
}

/* The compiled-in vocabulary: a header from tools/sdx-vocab2c. */
#ifdef SDX_EMBED_VOCAB
#include SDX_EMBED_VOCAB
#ifndef SDX_EMBED_VOCAB_NAME
#define SDX_EMBED_VOCAB_NAME clip_vocab
#endif
#define SDX__PASTE(a, b) a##b
#define SDX__SIZE_OF_ARRAY(name) SDX__PASTE(name, _size)
#define SDX__EMBEDDED_VOCAB 1
#else
#define SDX__EMBEDDED_VOCAB 0
#endif

SDX_API sdx_result sdx_tokenizer_load_embedded(sdx_ctx *ctx, sdx_tokenizer **out) {
    if (!ctx || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load_embedded: NULL argument");
    *out = NULL;
#ifdef SDX_EMBED_VOCAB
    return (sdx_result)sdx__tokenizer_from_bytes(ctx, SDX_EMBED_VOCAB_NAME, SDX__SIZE_OF_ARRAY(SDX_EMBED_VOCAB_NAME), NULL,
                                                 "the compiled-in vocabulary (SDX_EMBED_VOCAB)", out);
#else
    return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "no vocabulary is compiled in: build with SDX_EMBED_VOCAB (see tools/sdx-vocab2c)");
#endif
}

static int sdx__is_dir(const char *path) { return sdx__path_kind(path) == SDX__PATH_DIR; }
static int sdx__is_file(const char *path) { return sdx__path_kind(path) == SDX__PATH_FILE; }

SDX_API sdx_result sdx_tokenizer_load(sdx_ctx *ctx, const char *path, sdx_tokenizer **out) {
    static const char *const names[3] = { "merges.txt", "bpe_simple_vocab_16e6.txt.gz", "tokenizer/merges.txt" };
    char file[4096], json_path[4096];
    char *data = NULL, *json_text = NULL;
    size_t size = 0, json_len = 0;
    int folder_len;
    sdx__json_doc doc;
    int rc, have_json = 0;
    if (!ctx || !path || !out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load: NULL argument");
    *out = NULL;
    if (strlen(path) > sizeof file - 64) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tokenizer_load: path too long");
    if (sdx__is_dir(path)) {
        int found = 0;
        for (int i = 0; i < 3 && !found; i++) {
            snprintf(file, sizeof file, "%s/%s", path, names[i]);
            found = sdx__is_file(file);
        }
        if (!found)
            return sdx__fail(ctx, SDX_ERR_IO, "%s: no merges.txt, bpe_simple_vocab_16e6.txt.gz or tokenizer/merges.txt in this directory", path);
    } else {
        snprintf(file, sizeof file, "%s", path);
    }
    if ((rc = sdx__read_file(ctx, file, &data, &size, SDX__VOCAB_MAX_BYTES)) != SDX_OK) return (sdx_result)rc;
    /* a plain merge list may come with the Hugging Face vocab.json beside it */
    folder_len = (int)(sdx__path_base(file) - file);   /* either separator: Windows paths too */
    snprintf(json_path, sizeof json_path, "%.*svocab.json", folder_len, file);
    memset(&doc, 0, sizeof doc);
    if (!(size >= 2 && (uint8_t)data[0] == 0x1f && (uint8_t)data[1] == 0x8b) && sdx__is_file(json_path) &&
        strcmp(json_path, file) != 0) {
        rc = sdx__read_file(ctx, json_path, &json_text, &json_len, SDX__VOCAB_MAX_BYTES);
        if (rc == SDX_OK) rc = sdx__json_parse_named(ctx, json_text, json_len, json_path, &doc);
        have_json = rc == SDX_OK;
    }
    if (rc == SDX_OK) rc = sdx__tokenizer_from_bytes(ctx, (const uint8_t *)data, size, have_json ? doc.root : NULL, file, out);
    if (have_json) sdx__json_free(&doc);
    sdx__free(ctx, json_text);
    sdx__free(ctx, data);
    return (sdx_result)rc;
}

SDX_API void sdx_tokenizer_free(sdx_tokenizer *tok) {
    if (!tok) return;
    sdx__free(tok->ctx, tok->pair_key);
    sdx__free(tok->ctx, tok->pair_rank);
    sdx__free(tok->ctx, tok->pair_id);
    sdx__free(tok->ctx, tok);
}
