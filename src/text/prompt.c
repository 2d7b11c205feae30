#pragma once
#include "tokenizer.c"
#include "embedding.c"

/* ===================================================================== */
/*  Prompt weighting (AUTOMATIC1111 syntax), 75-token chunks, emphasis    */
/* ===================================================================== */
/* Reproduces stable-diffusion-webui:
 *   modules/extra_networks.py parse_prompt <lora:>     -> sdx__lora_tags
 *   modules/prompt_parser.py  parse_prompt_attention   -> sdx__prompt_parse
 *   modules/sd_hijack_clip.py tokenize_line             -> sdx__prompt_chunks
 *   modules/sd_emphasis.py    EmphasisOriginal(NoNorm)  -> sdx__emphasis_*
 * Weights are doubles multiplied one factor at a time in bracket-closing
 * order, so they equal the webui's bit for bit.
 *
 * Where the webui crashes or lets numbers run away, this code differs
 * (documented policy):
 *   - a weight that float() rejects ("(cat:1.2.3)", "(x:.)") is not a
 *     weight: its ':' is text and scanning resumes after it, so
 *     "(cat:1.2.3)" is ["cat:1.2.3", 1.1];
 *   - every weight and every product is clamped to +-SDX__PROMPT_WEIGHT_MAX,
 *     so no multiplier is ever Inf or NaN ("(x:1e400 digits)", 10k
 *     nested parentheses); "inf"/"nan"/"1e40" are not numbers in this
 *     grammar anyway and stay text;
 *   - only the first SDX__PROMPT_MAX_DEPTH open brackets (round and square
 *     together) weigh; deeper ones still group but multiply by nothing.
 *     This bounds the work by text length x depth limit;
 *   - the weight number takes ASCII digits only (Python's \d also takes
 *     other scripts' digits).
 * No recursion anywhere; work is linear in the prompt length. */

#define SDX__PROMPT_WEIGHT_MAX 1000.0
#define SDX__PROMPT_MAX_DEPTH  256
#define SDX__CHUNK_TOKENS      75    /* content tokens per 77-token chunk */
#define SDX__COMMA_TOKEN       267   /* ",</w>" */
#define SDX__COMMA_BACKTRACK   20    /* webui's comma_padding_backtrack default */

/* Prompt chunks: n chunks of 77 ids (BOS, 75 tokens padded with EOS 49407,
 * EOS) and their 77 f32 multipliers, row-major [n][77]. For OpenCLIP the
 * caller replaces ids after the first EOS with its pad id (0), as the
 * webui does. */
typedef struct sdx__chunks {
    int n;
    int32_t *tokens;
    float *mult;
    /* textual-inversion vectors: position emb_pos[i] (chunk * 77 + index)
     * takes emb_vec[i] (all encoders' parts side by side, owned by the
     * sdx__embdb) instead of its token's embedding; its id is 0 */
    int n_emb;
    int32_t *emb_pos;
    const float **emb_vec;
} sdx__chunks;

/* One parsed fragment; text is NUL-terminated. A BREAK marker is text
 * "BREAK" with weight exactly -1. */
typedef struct sdx__pfrag { const char *text; size_t len; double weight; } sdx__pfrag;
typedef struct sdx__parsed { int n; sdx__pfrag *frag; char *buf; } sdx__parsed;

static void sdx__parsed_free(sdx_ctx *ctx, sdx__parsed *p) {
    sdx__free(ctx, p->frag);
    sdx__free(ctx, p->buf);
    memset(p, 0, sizeof *p);
}

/* ---- extra networks: <lora:name:te[:unet]> ------------------------------ */

/* A1111's extra-network tag <lora:name[:te_multiplier[:unet_multiplier]]>,
 * also te=F / unet=F named; found in prompt order. */
typedef struct sdx__lora_tag { char name[256]; float te, unet; } sdx__lora_tag;

/* Parses the tag at s (which starts with "<lora:"); returns its length or
 * 0 when it is not a well-formed tag (then it stays text). */
static size_t sdx__lora_tag_parse(const char *s, sdx__lora_tag *tag) {
    const char *end = strchr(s, '>'), *p = s + 6, *q;
    int pos = 0;
    float v;
    if (!end) return 0;
    tag->te = tag->unet = 1.0f;
    tag->name[0] = 0;
    while (p < end) {
        char field[256], *e;
        size_t n;
        q = (const char *)memchr(p, ':', (size_t)(end - p));
        if (!q) q = end;
        n = (size_t)(q - p);
        if (n >= sizeof field) return 0;
        memcpy(field, p, n);
        field[n] = 0;
        if (pos == 0) {
            if (!n) return 0;
            memcpy(tag->name, field, n + 1);
        } else if (!strncmp(field, "te=", 3) || !strncmp(field, "unet=", 5)) {
            char *num = strchr(field, '=') + 1;
            v = strtof(num, &e);
            if (e == num || *e) return 0;
            if (field[0] == 't') tag->te = v; else tag->unet = v;
        } else {
            v = strtof(field, &e);
            if (e == field || *e) return 0;
            if (pos == 1) tag->te = tag->unet = v;
            else if (pos == 2) tag->unet = v;
        }
        pos++;
        p = q + 1;
    }
    return (size_t)(end - s) + 1;
}

/* Removes every <lora:...> tag from prompt into *clean (owned) and lists
 * the tags. */
static int sdx__lora_tags(sdx_ctx *ctx, const char *prompt, char **clean, sdx__lora_tag **tags, int *n_tags) {
    size_t n = strlen(prompt), used = 0;
    int cap = 0;
    *tags = NULL;
    *n_tags = 0;
    if (!(*clean = (char *)sdx__malloc(ctx, n + 1))) return sdx__nomem(ctx, "prompt", n + 1);
    for (size_t i = 0; i < n;) {
        sdx__lora_tag tag;
        size_t len = !strncmp(prompt + i, "<lora:", 6) ? sdx__lora_tag_parse(prompt + i, &tag) : 0;
        if (!len) { (*clean)[used++] = prompt[i++]; continue; }
        if (*n_tags == cap) {
            int ncap = cap ? cap * 2 : 4;
            sdx__lora_tag *nt = (sdx__lora_tag *)sdx__realloc(ctx, *tags, sizeof *nt * (size_t)ncap);
            if (!nt) { sdx__free(ctx, *clean); sdx__free(ctx, *tags); *clean = NULL; *tags = NULL; return sdx__nomem(ctx, "LoRA tags", 0); }
            *tags = nt;
            cap = ncap;
        }
        (*tags)[(*n_tags)++] = tag;
        i += len;
    }
    (*clean)[used] = 0;
    return SDX_OK;
}

/* ---- parse_prompt_attention ------------------------------------------ */

static const char sdx__break_text[] = "BREAK";

/* Code point at s[i] (U+FFFD for invalid UTF-8) and its length. */
static uint32_t sdx__cp_at(const char *s, size_t n, size_t i, size_t *len) {
    const unsigned char *p = (const unsigned char *)s + i, *end = (const unsigned char *)s + n;
    int l = sdx__utf8_len(p, end);
    uint32_t c;
    if (l == 0) { *len = 1; return 0xfffd; }
    *len = (size_t)l;
    c = l == 1 ? p[0] : l == 2 ? (p[0] & 0x1fu) : l == 3 ? (p[0] & 0x0fu) : (p[0] & 0x07u);
    for (int k = 1; k < l; k++) c = (c << 6) | (p[k] & 0x3fu);
    return c;
}

/* Code point ending at s[i] (i > 0): steps back over continuation bytes. */
static uint32_t sdx__cp_before(const char *s, size_t n, size_t i, size_t *start) {
    size_t j = i - 1, len;
    uint32_t c;
    while (j > 0 && i - j < 4 && ((unsigned char)s[j] & 0xc0) == 0x80) j--;
    c = sdx__cp_at(s, n, j, &len);
    if (j + len != i) { j = i - 1; c = 0xfffd; }
    *start = j;
    return c;
}

typedef struct sdx__pstate {
    sdx_ctx *ctx;
    sdx__pfrag *frag;
    size_t n, cap;
    size_t round[SDX__PROMPT_MAX_DEPTH], square[SDX__PROMPT_MAX_DEPTH];
    int n_round, n_square;          /* open brackets that weigh */
    size_t inert_round, inert_square; /* open brackets past the depth limit */
    int oom;
} sdx__pstate;

static void sdx__frag_add(sdx__pstate *st, const char *text, size_t len, double w) {
    if (st->n == st->cap) {
        size_t ncap = st->cap ? st->cap * 2 : 16;
        sdx__pfrag *nf = st->oom ? NULL : (sdx__pfrag *)sdx__realloc(st->ctx, st->frag, ncap * sizeof *nf);
        if (!nf) { st->oom = 1; return; }
        st->frag = nf;
        st->cap = ncap;
    }
    st->frag[st->n].text = text;
    st->frag[st->n].len = len;
    st->frag[st->n].weight = w;
    st->n++;
}

static double sdx__clamp_weight(double w) {
    if (w > SDX__PROMPT_WEIGHT_MAX) return SDX__PROMPT_WEIGHT_MAX;
    if (w < -SDX__PROMPT_WEIGHT_MAX) return -SDX__PROMPT_WEIGHT_MAX;
    return w;
}

static void sdx__multiply_range(sdx__pstate *st, size_t from, double factor) {
    for (size_t i = from; i < st->n; i++) st->frag[i].weight = sdx__clamp_weight(st->frag[i].weight * factor);
}

/* Emits a text token split on \s*\bBREAK\b\s* (Python re semantics) with
 * ["BREAK", -1] markers between the parts; empty parts are kept. */
static void sdx__emit_text(sdx__pstate *st, const char *s, size_t n) {
    size_t part = 0, i = 0;
    while (i + 5 <= n) {
        size_t b = i, before, after = i + 5, len, start = i;
        const char *hit = (const char *)memchr(s + i, 'B', n - i);
        if (!hit || (size_t)(hit - s) + 5 > n) break;
        b = (size_t)(hit - s);
        i = b + 1;
        if (memcmp(s + b, "BREAK", 5) != 0) continue;
        if (b > 0 && sdx__is_py_word(sdx__cp_before(s, n, b, &before))) continue;
        after = b + 5;
        if (after < n && sdx__is_py_word(sdx__cp_at(s, n, after, &len))) continue;
        /* widen over the blanks on both sides, not before the previous match */
        start = b;
        while (start > part) {
            uint32_t c = sdx__cp_before(s, n, start, &before);
            if (!sdx__is_py_space(c)) break;
            start = before;
        }
        while (after < n) {
            uint32_t c = sdx__cp_at(s, n, after, &len);
            if (!sdx__is_py_space(c)) break;
            after += len;
        }
        sdx__frag_add(st, s + part, start - part, 1.0);
        sdx__frag_add(st, sdx__break_text, 5, -1.0);
        part = i = after;
    }
    sdx__frag_add(st, s + part, n - part, 1.0);
}

/* Length of ":" \s* [+-]?[.\d]+ \s* ")" at s[i], or 0. *num and *num_len give
 * the number's text. */
static size_t sdx__match_weight(const char *s, size_t n, size_t i, size_t *num, size_t *num_len) {
    size_t j = i + 1, len;
    while (j < n && sdx__is_py_space(sdx__cp_at(s, n, j, &len))) j += len;
    *num = j;
    if (j < n && (s[j] == '+' || s[j] == '-')) j++;
    if (j >= n || !(s[j] == '.' || (s[j] >= '0' && s[j] <= '9'))) return 0;
    while (j < n && (s[j] == '.' || (s[j] >= '0' && s[j] <= '9'))) j++;
    *num_len = j - *num;
    while (j < n && sdx__is_py_space(sdx__cp_at(s, n, j, &len))) j += len;
    return j < n && s[j] == ')' ? j + 1 - i : 0;
}

/* Python float() of [+-]?[.\d]+: 0 if it raises (no digit, or two dots).
 * Correctly rounded and locale-independent: short decimals are one exact
 * integer / power-of-ten division; others go through strtod with the
 * locale's decimal point (beyond 400 characters the excess fraction
 * digits are dropped). */
static int sdx__parse_weight(const char *s, size_t n, double *out) {
    static const double pow10[23] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    char buf[420];
    const char *point = localeconv()->decimal_point;
    size_t i = 0, k = 0, pl = strlen(point);
    int neg = 0, dots = 0, digits = 0, frac = 0;
    uint64_t m = 0;
    if (n && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i++; }
    for (size_t j = i; j < n; j++) {
        if (s[j] == '.') { dots++; continue; }
        digits++;
        if (m < ((uint64_t)1 << 53) / 10) { m = m * 10 + (uint64_t)(s[j] - '0'); frac += dots; }
        else m = UINT64_MAX;
    }
    if (digits == 0 || dots > 1) return 0;
    if (m < ((uint64_t)1 << 53) && frac <= 22) {
        double v = (double)m / pow10[frac];
        *out = neg ? -v : v;
        return 1;
    }
    for (size_t j = 0; j < n && k + pl < sizeof buf - 1; j++) {
        if (s[j] == '.') { memcpy(buf + k, point, pl); k += pl; }
        else buf[k++] = s[j];
    }
    buf[k] = 0;
    if (k >= 400 && !memchr(buf, point[0], k)) {      /* a huge integer: clamped anyway */
        *out = neg ? -HUGE_VAL : HUGE_VAL;
        return 1;
    }
    *out = strtod(buf, NULL);
    return 1;
}

/* Opens a bracket; past the depth limit it only counts. */
static void sdx__open_bracket(sdx__pstate *st, int square) {
    if (st->n_round + st->n_square < SDX__PROMPT_MAX_DEPTH && !st->inert_round && !st->inert_square) {
        if (square) st->square[st->n_square++] = st->n;
        else st->round[st->n_round++] = st->n;
    } else if (square) {
        st->inert_square++;
    } else {
        st->inert_round++;
    }
}

/* Closes the innermost bracket of a kind, multiplying what it holds.
 * Returns 0 if none is open (the caller then emits text). */
static int sdx__close_bracket(sdx__pstate *st, int square, double factor) {
    if (square) {
        if (st->inert_square) { st->inert_square--; return 1; }
        if (!st->n_square) return 0;
        sdx__multiply_range(st, st->square[--st->n_square], factor);
    } else {
        if (st->inert_round) { st->inert_round--; return 1; }
        if (!st->n_round) return 0;
        sdx__multiply_range(st, st->round[--st->n_round], factor);
    }
    return 1;
}

/* Concatenates runs of exactly equal weights into owned, NUL-terminated
 * texts. */
static int sdx__parse_finish(sdx__pstate *st, size_t text_len, sdx__parsed *out) {
    size_t n = 0, used = 0;
    char *buf = (char *)sdx__malloc(st->ctx, text_len + st->n + 1);
    if (!buf) return sdx__nomem(st->ctx, "parsed prompt", text_len + st->n + 1);
    for (size_t i = 0; i < st->n; i++) {
        if (n > 0 && st->frag[n - 1].weight == st->frag[i].weight) {
            used--;   /* drop the NUL, append */
            memcpy(buf + used, st->frag[i].text, st->frag[i].len);
            st->frag[n - 1].len += st->frag[i].len;
        } else {
            memcpy(buf + used, st->frag[i].text, st->frag[i].len);
            st->frag[n].text = buf + used;
            st->frag[n].len = st->frag[i].len;
            st->frag[n].weight = st->frag[i].weight;
            n++;
        }
        used += st->frag[i].len;
        buf[used++] = 0;
    }
    out->n = (int)n;
    out->frag = st->frag;
    out->buf = buf;
    st->frag = NULL;
    return SDX_OK;
}

/* parse_prompt_attention(text) -> fragments with weights (see the top of
 * this file for where it deliberately differs). */
static int sdx__prompt_parse(sdx_ctx *ctx, const char *text, sdx__parsed *out) {
    sdx__pstate *st;
    size_t n = strlen(text), i = 0;
    int rc;
    memset(out, 0, sizeof *out);
    if (n > (size_t)INT32_MAX / 2) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "prompt of %zu bytes is too long", n);
    st = (sdx__pstate *)sdx__calloc(ctx, 1, sizeof *st);
    if (!st) return sdx__nomem(ctx, "prompt parser", sizeof *st);
    st->ctx = ctx;
    while (i < n && !st->oom) {
        char c = text[i];
        size_t num, num_len, len;
        double w;
        if (c == '\\') {
            int escaped = i + 1 < n && strchr("()[]\\", text[i + 1]) != NULL;
            sdx__frag_add(st, text + i + 1, (size_t)escaped, 1.0);   /* a lone '\' leaves "" */
            i += 1 + (size_t)escaped;
        } else if (c == '(' || c == '[') {
            sdx__open_bracket(st, c == '[');
            i++;
        } else if (c == ':' && (len = sdx__match_weight(text, n, i, &num, &num_len)) != 0) {
            if (!st->n_round && !st->inert_round) { sdx__emit_text(st, text + i, len); i += len; }
            else if (sdx__parse_weight(text + num, num_len, &w)) {
                sdx__close_bracket(st, 0, sdx__clamp_weight(w));
                i += len;
            } else {
                sdx__emit_text(st, text + i, 1);   /* float() would raise: the ':' is text */
                i++;
            }
        } else if (c == ')' || c == ']') {
            if (!sdx__close_bracket(st, c == ']', c == ']' ? 1.0 / 1.1 : 1.1)) sdx__emit_text(st, text + i, 1);
            i++;
        } else if (c == ':') {
            sdx__emit_text(st, text + i, 1);
            i++;
        } else {
            size_t j = i;
            while (j < n && !strchr("\\()[]:", text[j])) j++;
            sdx__emit_text(st, text + i, j - i);
            i = j;
        }
    }
    for (int k = 0; k < st->n_round; k++) sdx__multiply_range(st, st->round[k], 1.1);
    for (int k = 0; k < st->n_square; k++) sdx__multiply_range(st, st->square[k], 1.0 / 1.1);
    if (st->n == 0) sdx__frag_add(st, "", 0, 1.0);
    rc = st->oom ? sdx__nomem(ctx, "prompt fragments", st->cap * 2 * sizeof(sdx__pfrag)) : sdx__parse_finish(st, n, out);
    sdx__free(ctx, st->frag);
    sdx__free(ctx, st);
    return rc;
}

/* ---- tokenize_line: 75-token chunks --------------------------------------- */

typedef struct sdx__chunker {
    sdx_ctx *ctx;
    const sdx_tokenizer *tok;
    sdx__chunks *out;
    size_t cap, emb_cap;               /* chunks / embedding positions the arrays hold */
    int32_t cur[SDX__CHUNK_TOKENS];    /* the open chunk */
    float cur_mult[SDX__CHUNK_TOKENS];
    const float *cur_vec[SDX__CHUNK_TOKENS];   /* embedding vector or NULL */
    int len, last_comma, token_count;
} sdx__chunker;

static int sdx__chunks_add_emb(sdx__chunker *c, int32_t pos, const float *vec) {
    sdx__chunks *o = c->out;
    if ((size_t)o->n_emb == c->emb_cap) {
        size_t ncap = c->emb_cap ? c->emb_cap * 2 : 16;
        int32_t *np = (int32_t *)sdx__realloc(c->ctx, o->emb_pos, ncap * sizeof *np);
        const float **nv;
        if (!np) return sdx__nomem(c->ctx, "embedding positions", ncap * sizeof *np);
        o->emb_pos = np;
        nv = (const float **)sdx__realloc(c->ctx, (void *)o->emb_vec, ncap * sizeof *nv);
        if (!nv) return sdx__nomem(c->ctx, "embedding positions", ncap * sizeof *nv);
        o->emb_vec = nv;
        c->emb_cap = ncap;
    }
    o->emb_pos[o->n_emb] = pos;
    o->emb_vec[o->n_emb++] = vec;
    return SDX_OK;
}

/* Closes the open chunk: pad to 75 with EOS, add BOS/EOS (multiplier 1). */
static int sdx__next_chunk(sdx__chunker *c, int is_last) {
    sdx__chunks *o = c->out;
    int32_t *ids;
    float *mult;
    c->token_count += is_last ? c->len : SDX__CHUNK_TOKENS;
    if ((size_t)o->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 2;
        int32_t *nt = (int32_t *)sdx__realloc(c->ctx, o->tokens, ncap * 77 * sizeof(int32_t));
        float *nm;
        if (!nt) return sdx__nomem(c->ctx, "prompt chunks", ncap * 77 * sizeof(int32_t));
        o->tokens = nt;
        nm = (float *)sdx__realloc(c->ctx, o->mult, ncap * 77 * sizeof(float));
        if (!nm) return sdx__nomem(c->ctx, "prompt chunks", ncap * 77 * sizeof(float));
        o->mult = nm;
        c->cap = ncap;
    }
    ids = o->tokens + (size_t)o->n * 77;
    mult = o->mult + (size_t)o->n * 77;
    ids[0] = c->tok->bos;
    mult[0] = 1.0f;
    for (int i = 0; i < SDX__CHUNK_TOKENS; i++) {
        ids[1 + i] = i < c->len ? c->cur[i] : c->tok->eos;
        mult[1 + i] = i < c->len ? c->cur_mult[i] : 1.0f;
        if (i < c->len && c->cur_vec[i]) {
            int rc = sdx__chunks_add_emb(c, (int32_t)(o->n * 77 + 1 + i), c->cur_vec[i]);
            if (rc != SDX_OK) return rc;
        }
    }
    ids[76] = c->tok->eos;
    mult[76] = 1.0f;
    o->n++;
    c->len = 0;
    c->last_comma = -1;
    return SDX_OK;
}

/* Before a token: moves the words after a recent comma to a new chunk or
 * closes a full one, as the webui does. Embedding vectors move with their
 * positions (the webui leaves them at the old offsets). */
static int sdx__chunk_make_room(sdx__chunker *c, int32_t token) {
    int rc;
    if (token == SDX__COMMA_TOKEN) {
        c->last_comma = c->len;
    } else if (c->len == SDX__CHUNK_TOKENS && c->last_comma != -1 && c->len - c->last_comma <= SDX__COMMA_BACKTRACK) {
        int32_t moved[SDX__CHUNK_TOKENS];
        float moved_mult[SDX__CHUNK_TOKENS];
        const float *moved_vec[SDX__CHUNK_TOKENS];
        int keep = c->last_comma + 1, n_moved = c->len - keep;
        memcpy(moved, c->cur + keep, (size_t)n_moved * sizeof(int32_t));
        memcpy(moved_mult, c->cur_mult + keep, (size_t)n_moved * sizeof(float));
        memcpy((void *)moved_vec, (const void *)(c->cur_vec + keep), (size_t)n_moved * sizeof(float *));
        c->len = keep;
        if ((rc = sdx__next_chunk(c, 0)) != SDX_OK) return rc;
        memcpy(c->cur, moved, (size_t)n_moved * sizeof(int32_t));
        memcpy(c->cur_mult, moved_mult, (size_t)n_moved * sizeof(float));
        memcpy((void *)c->cur_vec, (const void *)moved_vec, (size_t)n_moved * sizeof(float *));
        c->len = n_moved;
    }
    if (c->len == SDX__CHUNK_TOKENS && (rc = sdx__next_chunk(c, 0)) != SDX_OK) return rc;
    return SDX_OK;
}

static void sdx__chunk_put(sdx__chunker *c, int32_t token, float mult, const float *vec) {
    c->cur[c->len] = token;
    c->cur_mult[c->len] = mult;
    c->cur_vec[c->len] = vec;
    c->len++;
}

/* The tokens of one fragment, with embeddings from db (may be NULL) where
 * their names appear: an embedding of n vectors that does not fit in the
 * open chunk starts the next one (tokenize_line). */
static int sdx__chunk_fragment(sdx__chunker *c, sdx__embdb *db, const int32_t *ids, int n_ids, float mult) {
    int t = 0, rc = SDX_OK;
    while (t < n_ids && rc == SDX_OK) {
        int covered = 0;
        sdx__embedding *e;
        if ((rc = sdx__chunk_make_room(c, ids[t])) != SDX_OK) break;
        e = sdx__embdb_match(db, ids + t, n_ids - t, &covered);
        if (!e) { sdx__chunk_put(c, ids[t++], mult, NULL); continue; }
        if ((rc = sdx__embdb_load(db, e)) != SDX_OK) break;
        if (c->len + e->n_vec > SDX__CHUNK_TOKENS && (rc = sdx__next_chunk(c, 0)) != SDX_OK) break;
        for (int v = 0; v < e->n_vec; v++) sdx__chunk_put(c, 0, mult, e->vec + (size_t)v * (size_t)db->dim);
        t += covered;
    }
    return rc;
}

/* tokenize_line: parse, tokenize every fragment on its own, chunk.
 * *token_count is the webui's token count (75 per closed chunk + the
 * last chunk's length). */
static void sdx__chunks_free(sdx_ctx *ctx, sdx__chunks *c);

static int sdx__prompt_chunks_emb(sdx_ctx *ctx, const sdx_tokenizer *tok, sdx__embdb *db, const char *prompt,
                                  sdx__chunks *out, int *token_count) {
    sdx__parsed parsed;
    sdx__chunker *c;
    int rc;
    memset(out, 0, sizeof *out);
    if (!ctx || !tok || !prompt) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "prompt chunks: NULL argument");
    if ((rc = sdx__prompt_parse(ctx, prompt, &parsed)) != SDX_OK) return rc;
    c = (sdx__chunker *)sdx__calloc(ctx, 1, sizeof *c);
    if (!c) { sdx__parsed_free(ctx, &parsed); return sdx__nomem(ctx, "prompt chunker", sizeof *c); }
    c->ctx = ctx;
    c->tok = tok;
    c->out = out;
    c->last_comma = -1;
    for (int f = 0; f < parsed.n && rc == SDX_OK; f++) {
        const sdx__pfrag *fr = &parsed.frag[f];
        int32_t *ids;
        int n_ids;
        if (fr->weight == -1.0 && fr->len == 5 && !memcmp(fr->text, "BREAK", 5)) { rc = sdx__next_chunk(c, 0); continue; }
        if ((rc = sdx_tokenize(ctx, tok, fr->text, &ids, &n_ids)) != SDX_OK) break;
        rc = sdx__chunk_fragment(c, db, ids, n_ids, (float)fr->weight);
        sdx_tokens_free(ctx, ids);
    }
    if (rc == SDX_OK && (c->len > 0 || out->n == 0)) rc = sdx__next_chunk(c, 1);
    if (token_count) *token_count = c->token_count;
    sdx__free(ctx, c);
    sdx__parsed_free(ctx, &parsed);
    if (rc != SDX_OK) sdx__chunks_free(ctx, out);
    return rc;
}

static int sdx__prompt_chunks_count(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *prompt, sdx__chunks *out,
                                    int *token_count) {
    return sdx__prompt_chunks_emb(ctx, tok, NULL, prompt, out, token_count);
}

/* The text encoder's entry point: A1111 prompt -> chunks. A prompt
 * without weighting syntax gets multipliers that are all exactly 1.0f. */
static int sdx__prompt_chunks(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *prompt, sdx__chunks *out) {
    return sdx__prompt_chunks_count(ctx, tok, prompt, out, NULL);
}

static void sdx__chunks_free(sdx_ctx *ctx, sdx__chunks *c) {
    if (!c) return;
    sdx__free(ctx, c->tokens);
    sdx__free(ctx, c->mult);
    sdx__free(ctx, c->emb_pos);
    sdx__free(ctx, (void *)c->emb_vec);
    memset(c, 0, sizeof *c);
}

/* ---- emphasis ---------------------------------------------------------------- */

/* EmphasisOriginalNoNorm: z[t, :] *= mult[t] (one f32 multiply). */
static void sdx__emphasis_nonorm(float *z, int n_tokens, int width, const float *mult) {
    for (int t = 0; t < n_tokens; t++)
        for (int k = 0; k < width; k++) z[(size_t)t * (size_t)width + (size_t)k] *= mult[t];
}

/* EmphasisOriginal on one chunk z[n_tokens, width], in place: multiply,
 * then rescale so the mean over the chunk is what it was. Means are f32
 * values (summed in double, then rounded), the ratio is an f32 division
 * as in torch. All-one multipliers leave z bit-identical; if the new mean
 * is 0 or the ratio is not finite the rescale is skipped. */
static void sdx__emphasis_original(float *z, int n_tokens, int width, const float *mult) {
    size_t count = (size_t)n_tokens * (size_t)width;
    double before = 0, after = 0;
    float mean_before, mean_after, ratio;
    int all_one = 1;
    for (int t = 0; t < n_tokens; t++) all_one &= mult[t] == 1.0f;
    if (all_one || count == 0) return;
    for (size_t i = 0; i < count; i++) before += z[i];
    sdx__emphasis_nonorm(z, n_tokens, width, mult);
    for (size_t i = 0; i < count; i++) after += z[i];
    mean_before = (float)(before / (double)count);
    mean_after = (float)(after / (double)count);
    if (mean_after == 0.0f) return;
    ratio = mean_before / mean_after;
    if (!isfinite(ratio)) return;
    for (size_t i = 0; i < count; i++) z[i] *= ratio;
}
