#pragma once
#include "api_safetensors.h"
#include "safetensors.c"
/* ===================================================================== */
/*  Converting checkpoints: GGUF as stable-diffusion.cpp writes it, or    */
/*  safetensors with the weights dequantized                               */
/* ===================================================================== */
/* sdx_convert_write takes tensors (a file's, or a model's with LoRAs
 * merged) and writes them converted. Into GGUF it does what `sd-cli -M
 * convert --type TYPE --tensor-type-rules RULES` does, so that
 * stable-diffusion.cpp, ComfyUI-GGUF and sdx read the result: the tensors
 * sd-cli leaves out are left out, the rest sorted by name, each
 * converted to the first matching rule's type, else TYPE, where ggml can
 * hold it and sd-cli would (sdx__convert_allows), else kept in its own
 * dtype. Into safetensors every float tensor becomes TYPE (F32, F16 or
 * BF16; without one the block types become F32 and the rest stay).
 * Tensors are converted one at a time, in parallel over blocks, with the
 * quantizers of core/quant.c, and streamed to the file. */

/* Tensors stable-diffusion.cpp drops (its unused_tensors, the names SD
 * checkpoints carry): name prefixes. */
static const char *const sdx__convert_dropped[] = {
    "betas", "alphas_cumprod_prev", "sqrt_alphas_cumprod", "sqrt_one_minus_alphas_cumprod", "log_one_minus_alphas_cumprod",
    "sqrt_recip_alphas_cumprod", "sqrt_recipm1_alphas_cumprod", "posterior_variance", "posterior_log_variance_clipped",
    "posterior_mean_coef1", "posterior_mean_coef2", "cond_stage_model.transformer.text_model.embeddings.position_ids",
    "cond_stage_model.1.model.text_model.embeddings.position_ids", "cond_stage_model.transformer.vision_model.embeddings.position_ids",
    "cond_stage_model.model.logit_scale", "conditioner.embedders.0.transformer.text_model.embeddings.position_ids",
    "conditioner.embedders.0.model.logit_scale", "conditioner.embedders.1.model.logit_scale",
    "model.diffusion_model.time_embedding.cond_proj.weight", "model_ema.decay", "model_ema.num_updates", "model_ema.diffusion_model",
    "embedding_manager", "denoiser.sigmas", "ztsnr", "edm_vpred.sigma_min",
};

/* Tensors sd-cli never converts (ModelLoader::tensor_should_be_converted):
 * names ending in these, and names containing these (FLUX, MMDiT and
 * UNet input layers, embeddings). */
static const char *const sdx__convert_kept_suffix[] = { ".bias", ".scale", ".weight_scale" };
static const char *const sdx__convert_kept_part[] = {
    "img_in.", "txt_in.", "time_in.", "vector_in.", "guidance_in.", "final_layer.", "x_embedder.", "t_embedder.", "y_embedder.",
    "pos_embed", "context_embedder.", "time_embed.", "label_emb.", "embedding",
};

static int sdx__convert_is_dropped(const char *name) {
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__convert_dropped); i++)
        if (!strncmp(name, sdx__convert_dropped[i], strlen(sdx__convert_dropped[i]))) return 1;
    return 0;
}

/* The values t is quantized by, a row at a time: its last dimension
 * (ggml's rows), or when that is not whole blocks of `to`, a 4-D
 * tensor's in_channels x kh x kw (a convolution in sdx's layout). */
static int64_t sdx__convert_row(const sdx_tensor *t, sdx_dtype to) {
    int64_t last = t->ndim ? t->shape[t->ndim - 1] : 1;
    if (t->ndim != 4 || last % sdx_dtype_block(to, NULL) == 0) return last;
    return t->shape[1] * t->shape[2] * t->shape[3];
}

/* Whether t is a convolution quantized in sdx's layout (rows of
 * in_channels x kh x kw, its last dimension not whole blocks). */
static int sdx__convert_is_conv_rows(const sdx_tensor *t) {
    return sdx__dtype_is_block(t->dtype) && t->ndim == 4 && t->shape[3] % sdx_dtype_block(t->dtype, NULL);
}

/* Whether sd-cli converts t to dtype `to`: rows whole blocks of it, and
 * a name it does not keep. With `convolutions`, a 4-D weight converts
 * in sdx's layout where its in_channels x kh x kw are whole blocks. */
static int sdx__convert_allows(const sdx_tensor *t, sdx_dtype to, int convolutions) {
    int64_t row = convolutions ? sdx__convert_row(t, to) : t->ndim ? t->shape[t->ndim - 1] : 1;
    size_t len = strlen(t->name);
    if (row % sdx_dtype_block(to, NULL)) return 0;
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__convert_kept_suffix); i++) {
        size_t n = strlen(sdx__convert_kept_suffix[i]);
        if (len >= n && !strcmp(t->name + len - n, sdx__convert_kept_suffix[i])) return 0;
    }
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__convert_kept_part); i++)
        if (strstr(t->name, sdx__convert_kept_part[i])) return 0;
    return 1;
}

static int sdx__dtype_is_float(sdx_dtype t) { return t == SDX_F32 || t == SDX_F16 || t == SDX_BF16 || t == SDX_F64 || sdx__dtype_is_block(t); }

/* A --type name: F32, F16, BF16 or a block type, any case ("q4_K",
 * "Q8_0"); n bytes of s. -1 when it is none. */
static int sdx__convert_type(const char *s, size_t n) {
    for (int t = 0; t < SDX_DTYPE_COUNT; t++) {
        const char *name = sdx_dtype_name((sdx_dtype)t);
        size_t i = 0;
        if (t != SDX_F32 && t != SDX_F16 && t != SDX_BF16 && !sdx__dtype_is_block((sdx_dtype)t)) continue;
        while (i < n && name[i] && (s[i] == name[i] || (s[i] >= 'a' && s[i] <= 'z' && s[i] - 32 == name[i]))) i++;
        if (i == n && !name[i]) return t;
    }
    return -1;
}

/* ---- --tensor-type-rules patterns: a small regex subset ------------------ */
/* sd-cli matches each pattern with std::regex_search (ECMAScript: a match
 * anywhere in the name). sdx has no regex library to lean on (Windows has
 * no regex.h) and implements what such rules use: literal characters, '.',
 * '\' escapes (\d \w \s and their capitals as classes, a punctuation
 * character as itself), [...] classes with ranges and a leading ^, groups
 * (a|b) with alternatives (also at the top level), a group made optional
 * with '?', the quantifiers * + ? after a single character, and the
 * anchors ^ $. What it does not implement ({n,m}, (?...), lazy
 * quantifiers, backreferences, \b, quantified groups) is refused by
 * name rather than read differently. */

/* The end of the atom at re (re < end), or NULL when it is unterminated. */
static const char *sdx__rx_atom_end(const char *re, const char *end) {
    const char *p = re + 1;
    if (*re == '\\') return p < end ? p + 1 : NULL;
    if (*re == '[') {
        for (; p < end && *p != ']'; p++)
            if (*p == '\\') p++;
        return p < end ? p + 1 : NULL;
    }
    if (*re == '(') {
        while (p < end && *p != ')') {
            if (!(p = sdx__rx_atom_end(p, end))) return NULL;
        }
        return p < end ? p + 1 : NULL;
    }
    return p;
}

/* The next top-level '|' in [re, end), or end. */
static const char *sdx__rx_bar(const char *re, const char *end) {
    while (re < end && *re != '|') re = sdx__rx_atom_end(re, end);
    return re;
}

static int sdx__rx_escape(char e, char c) {
    int digit = c >= '0' && c <= '9', word = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    int space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    switch (e) {
    case 'd': return digit;
    case 'D': return !digit;
    case 'w': return word;
    case 'W': return !word;
    case 's': return space;
    case 'S': return !space;
    case 'n': return c == '\n';
    case 't': return c == '\t';
    case 'r': return c == '\r';
    default: return c == e;
    }
}

/* A [...] class [re, ae) against c. */
static int sdx__rx_class(const char *re, const char *ae, char c) {
    const char *p = re + 1, *last = ae - 1;
    int neg = p < last && *p == '^', hit = 0;
    for (p += neg; p < last;) {
        char lo = *p, hi;
        if (lo == '\\') {
            hit |= sdx__rx_escape(p[1], c);
            p += 2;
            continue;
        }
        hi = lo;
        if (p + 2 < last && p[1] == '-') {
            hi = p[2];
            p += 2;
        }
        hit |= (unsigned char)c >= (unsigned char)lo && (unsigned char)c <= (unsigned char)hi;
        p++;
    }
    return hit != neg;
}

/* Whether the single-character atom [re, ae) takes c (never the end). */
static int sdx__rx_one(const char *re, const char *ae, char c) {
    if (!c) return 0;
    switch (*re) {
    case '.': return c != '\n' && c != '\r';
    case '[': return sdx__rx_class(re, ae, c);
    case '\\': return sdx__rx_escape(re[1], c);
    default: return *re == c;
    }
}

/* What is left to match after a group: [re, end), then next. */
typedef struct sdx__rx_k { const char *re, *end; const struct sdx__rx_k *next; } sdx__rx_k;

static int sdx__rx_alts(const char *re, const char *end, const char *s, const char *begin, const sdx__rx_k *k);

/* Whether [re, end) (no top-level '|'), then k, matches at s. */
static int sdx__rx_here(const char *re, const char *end, const char *s, const char *begin, const sdx__rx_k *k) {
    const char *ae, *rest;
    char q;
    if (re == end) return !k || sdx__rx_here(k->re, k->end, s, begin, k->next);
    if (*re == '^') return s == begin && sdx__rx_here(re + 1, end, s, begin, k);
    if (*re == '$') return !*s && sdx__rx_here(re + 1, end, s, begin, k);
    ae = sdx__rx_atom_end(re, end);
    q = ae < end && (*ae == '*' || *ae == '+' || *ae == '?') ? *ae : 0;
    rest = q ? ae + 1 : ae;
    if (*re == '(') {
        sdx__rx_k after;
        after.re = rest;
        after.end = end;
        after.next = k;
        return sdx__rx_alts(re + 1, ae - 1, s, begin, &after) || (q == '?' && sdx__rx_here(rest, end, s, begin, k));
    }
    {   /* greedy, then backing off one character at a time */
        size_t n = 0, least = q == '*' || q == '?' ? 0 : 1, most = q == '*' || q == '+' ? (size_t)-1 : 1;
        while (n < most && sdx__rx_one(re, ae, s[n])) n++;
        for (; n >= least; n--) {
            if (sdx__rx_here(rest, end, s + n, begin, k)) return 1;
            if (!n) break;
        }
        return 0;
    }
}

static int sdx__rx_alts(const char *re, const char *end, const char *s, const char *begin, const sdx__rx_k *k) {
    for (;;) {
        const char *bar = sdx__rx_bar(re, end);
        if (sdx__rx_here(re, bar, s, begin, k)) return 1;
        if (bar == end) return 0;
        re = bar + 1;
    }
}

/* std::regex_search: [re, end) matches somewhere in s. */
static int sdx__rx_search(const char *re, const char *end, const char *s) {
    for (const char *p = s;; p++) {
        if (sdx__rx_alts(re, end, p, s, NULL)) return 1;
        if (!*p) return 0;
    }
}

/* NULL when [re, end) is in the subset, else what is not. */
static const char *sdx__rx_unsupported(const char *re, const char *end) {
    const char *prev = NULL;       /* the atom before, for quantifiers */
    while (re < end) {
        const char *ae;
        char c = *re;
        if (c == '*' || c == '+' || c == '?') {
            if (!prev) return "a quantifier with nothing to repeat (or a lazy quantifier)";
            if (*prev == '(' && c != '?') return "* or + after a group";
            prev = NULL;
            re++;
            continue;
        }
        if (c == '{' || c == '}') return "{n,m} quantifiers";
        if (c == ')') return "an unmatched ')'";
        if (c == '|' || c == '^' || c == '$') {
            prev = NULL;
            re++;
            continue;
        }
        if (!(ae = sdx__rx_atom_end(re, end))) return c == '(' ? "an unclosed '('" : c == '[' ? "an unclosed '['" : "a trailing '\\'";
        if (c == '\\' && ((re[1] >= '0' && re[1] <= '9') || ((re[1] >= 'a' && re[1] <= 'z') || (re[1] >= 'A' && re[1] <= 'Z'))) &&
            !strchr("dDwWsSntr", re[1]))
            return "this escape (backreferences, \\b and the like)";
        if (c == '(') {
            const char *inner;
            if (re + 1 < ae && re[1] == '?') return "(?...) groups";
            if ((inner = sdx__rx_unsupported(re + 1, ae - 1))) return inner;
        }
        prev = re;
        re = ae;
    }
    return NULL;
}

/* One rule: a pattern, n bytes at re, and its type. */
typedef struct sdx__type_rule { const char *re; size_t n; int type; } sdx__type_rule;

/* Parses "PATTERN=TYPE,..." (empty items skipped, as sd-cli does) into
 * *out (sdx__free it); patterns point into rules. */
static int sdx__convert_rules(sdx_ctx *ctx, const char *rules, sdx__type_rule **out, int *n_out) {
    int n = 0, cap = 1;
    sdx__type_rule *r;
    *out = NULL;
    *n_out = 0;
    if (!rules) return SDX_OK;
    for (const char *p = rules; *p; p++) cap += *p == ',';
    if (!(r = (sdx__type_rule *)sdx__calloc(ctx, (size_t)cap, sizeof *r))) return sdx__nomem(ctx, "type rules", sizeof *r * (size_t)cap);
    for (const char *item = rules; *item;) {
        size_t len = strcspn(item, ","), pat;
        const char *bad;
        if (len) {
            pat = strcspn(item, "=");
            if (pat >= len || !pat) {
                sdx__free(ctx, r);
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "tensor type rule '%.*s' is not PATTERN=TYPE", (int)len, item);
            }
            r[n].re = item;
            r[n].n = pat;
            r[n].type = sdx__convert_type(item + pat + 1, len - pat - 1);
            if (r[n].type < 0 || (bad = sdx__rx_unsupported(item, item + pat))) {
                int rc = r[n].type < 0
                    ? sdx__fail(ctx, SDX_ERR_INVALID_ARG, "tensor type rule '%.*s': '%.*s' is not a type (f32, f16, bf16, q4_0, q4_1, "
                                "q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K)", (int)len, item, (int)(len - pat - 1), item + pat + 1)
                    : sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "tensor type rule '%.*s': sdx's patterns do not take %s (see README: "
                                "GGUF checkpoints)", (int)len, item, bad);
                sdx__free(ctx, r);
                return rc;
            }
            n++;
        }
        item += len + (item[len] == ',');
    }
    *out = r;
    *n_out = n;
    return SDX_OK;
}

/* ---- the conversion ----------------------------------------------------- */

typedef struct sdx__convert {
    sdx_ctx *ctx;
    const sdx_tensor **src;     /* the source of each output tensor */
    sdx_tensor *out;            /* name, shape and the dtype chosen */
    unsigned char *buf;         /* the converted bytes of the current one */
    size_t cap;
    float *rows;                /* a row of f32 per thread (block types) */
    size_t rows_cap;
    /* the tensor being converted, for the workers */
    const sdx_tensor *s;
    sdx_dtype to;
    int64_t n, row;
} sdx__convert;

#define SDX__CONVERT_UNIT 4096      /* values per work item for f32/f16/bf16 */

/* Work items [begin, end) of the current tensor into f32, f16 or bf16
 * (rounded to nearest even, as ggml; no saturation). */
static void sdx__convert_cast(void *arg, int64_t begin, int64_t end, int thread) {
    sdx__convert *c = (sdx__convert *)arg;
    float x[SDX__CONVERT_UNIT];
    (void)thread;
    for (int64_t u = begin; u < end; u++) {
        int64_t at = u * SDX__CONVERT_UNIT, n = SDX__MIN((int64_t)SDX__CONVERT_UNIT, c->n - at);
        sdx__load_f32(c->s->data, c->s->dtype, at, n, x);
        if (c->to == SDX_F16) sdx_f32_to_f16_n(x, (uint16_t *)c->buf + at, (size_t)n);
        else if (c->to == SDX_BF16) sdx_f32_to_bf16_n(x, (uint16_t *)c->buf + at, (size_t)n);
        else memcpy((float *)c->buf + at, x, (size_t)n * sizeof(float));
    }
}

/* Rows [begin, end) of the current tensor quantized: ggml quantizes row
 * by row (Q4_0..Q5_1 weigh by the whole row). */
static void sdx__convert_quantize(void *arg, int64_t begin, int64_t end, int thread) {
    sdx__convert *c = (sdx__convert *)arg;
    float *x = c->rows + (size_t)thread * (size_t)c->row;
    size_t bytes;
    int block = sdx_dtype_block(c->to, &bytes);
    sdx__quant_fn quant = sdx__quantizer(c->to);
    for (int64_t r = begin; r < end; r++) {
        sdx__load_f32(c->s->data, c->s->dtype, r * c->row, c->row, x);
        quant(x, c->row, c->buf + (size_t)(r * (c->row / block)) * bytes);
    }
}

/* Room for n bytes at *p (holding *cap). */
static int sdx__convert_room(sdx_ctx *ctx, void **p, size_t *cap, size_t n, const char *what) {
    if (n <= *cap) return SDX_OK;
    sdx__free(ctx, *p);
    *cap = 0;
    if (!(*p = sdx__malloc(ctx, n))) return sdx__nomem(ctx, what, n);
    *cap = n;
    return SDX_OK;
}

/* sdx__fill_fn: output tensor i, as it is or converted. */
static int sdx__convert_fill(void *user, int i, const void **data) {
    sdx__convert *c = (sdx__convert *)user;
    const sdx_tensor *s = c->src[i];
    int rc;
    *data = s->data;
    if (c->out[i].dtype == s->dtype) return SDX_OK;
    if ((rc = sdx__convert_room(c->ctx, (void **)&c->buf, &c->cap, sdx_tensor_nbytes(&c->out[i]), s->name)) != SDX_OK) return rc;
    c->s = s;
    c->to = c->out[i].dtype;
    c->n = sdx_tensor_numel(s);
    c->row = sdx__convert_row(s, c->to);
    if (!sdx__dtype_is_block(c->to)) {
        sdx__parallel_for(c->ctx, (c->n + SDX__CONVERT_UNIT - 1) / SDX__CONVERT_UNIT, sdx__convert_cast, c);
    } else if (c->n) {
        size_t need = (size_t)c->ctx->n_threads * (size_t)c->row * sizeof(float);
        if ((rc = sdx__convert_room(c->ctx, (void **)&c->rows, &c->rows_cap, need, "quantization rows")) != SDX_OK) return rc;
        sdx__parallel_for(c->ctx, c->n / c->row, sdx__convert_quantize, c);
    }
    *data = c->buf;
    return SDX_OK;
}

/* The dtype tensor t gets in a GGUF file: the first matching rule's type,
 * else `type`, where sd-cli would convert it (or sdx, `convolutions`);
 * else its own. */
static sdx_dtype sdx__convert_gguf_dtype(const sdx_tensor *t, int type, const sdx__type_rule *rules, int n_rules, int convolutions) {
    for (int i = 0; i < n_rules; i++)
        if (sdx__rx_search(rules[i].re, rules[i].re + rules[i].n, t->name)) {
            type = rules[i].type;
            break;
        }
    return type >= 0 && sdx__dtype_is_float(t->dtype) && sdx__convert_allows(t, (sdx_dtype)type, convolutions) ? (sdx_dtype)type
                                                                                                                 : t->dtype;
}

static int sdx__convert_by_name(const void *a, const void *b) {
    return strcmp((*(const sdx_tensor *const *)a)->name, (*(const sdx_tensor *const *)b)->name);
}

/* The output tensors of a GGUF file: sd-cli's, sorted by name. */
static int sdx__convert_plan_gguf(sdx__convert *c, const char *path, const sdx_tensor *t, int n, int type, const char *rules,
                                  int convolutions, int *n_out) {
    sdx__type_rule *r;
    int n_rules, m = 0, rc = sdx__convert_rules(c->ctx, rules, &r, &n_rules);
    if (rc != SDX_OK) return rc;
    for (int i = 0; i < n; i++)
        if (!sdx__convert_is_dropped(t[i].name)) c->src[m++] = &t[i];
    qsort((void *)c->src, (size_t)m, sizeof *c->src, sdx__convert_by_name);
    for (int i = 0; i < m && rc == SDX_OK; i++) {
        c->out[i] = *c->src[i];
        c->out[i].data = NULL;
        c->out[i].owned = 0;
        c->out[i].dtype = sdx__convert_gguf_dtype(c->src[i], type, r, n_rules, convolutions);
        if (i && !strcmp(c->src[i]->name, c->src[i - 1]->name))
            rc = sdx__fail(c->ctx, SDX_ERR_INVALID_ARG, "%s: two tensors are named '%s'", path, c->src[i]->name);
    }
    sdx__free(c->ctx, r);
    *n_out = m;
    return rc;
}

/* The output tensors of a safetensors file: all of them, in order, the
 * float ones in `type` (block types in F32 without one). */
static int sdx__convert_plan_st(sdx__convert *c, const char *path, const sdx_tensor *t, int n, int type, const char *rules) {
    if (rules && *rules)
        return sdx__fail(c->ctx, SDX_ERR_INVALID_ARG, "%s: tensor type rules need a .gguf output (safetensors holds no block types)", path);
    if (type >= 0 && sdx__dtype_is_block((sdx_dtype)type))
        return sdx__fail(c->ctx, SDX_ERR_INVALID_ARG, "%s: safetensors cannot hold %s; write a .gguf file for block types, or convert "
                         "to f32, f16 or bf16", path, sdx_dtype_name((sdx_dtype)type));
    for (int i = 0; i < n; i++) {
        c->src[i] = &t[i];
        c->out[i] = t[i];
        c->out[i].data = NULL;
        c->out[i].owned = 0;
        if (sdx__dtype_is_float(t[i].dtype) && type >= 0) c->out[i].dtype = (sdx_dtype)type;
        else if (sdx__dtype_is_block(t[i].dtype)) c->out[i].dtype = SDX_F32;
    }
    return SDX_OK;
}

static int sdx__ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m) return 0;
    for (size_t i = 0; i < m; i++) {
        char a = s[n - m + i];
        if ((a >= 'A' && a <= 'Z' ? a + 32 : a) != suffix[i]) return 0;
    }
    return 1;
}

SDX_API sdx_result sdx_convert_write(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors, const char *const *meta,
                                     int n_meta, const sdx_convert_params *params) {
    const char *type_name = params ? params->type : NULL, *rules = params ? params->rules : NULL;
    int gguf, type = -1, n_out = n_tensors, convolutions = params && params->convolutions, conv_rows = 0, rc;
    sdx__convert c;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (!path || n_tensors < 0 || (n_tensors && !tensors))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_convert_write: bad arguments");
    for (int i = 0; i < n_tensors; i++)
        if (!tensors[i].name || !*tensors[i].name) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: tensor %d has no name", path, i);
    gguf = sdx__ends_with_ci(path, ".gguf");
    if (type_name && *type_name && (type = sdx__convert_type(type_name, strlen(type_name))) < 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: type '%s' is none of f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, "
                         "q4_K, q5_K, q6_K", path, type_name);
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    c.src = (const sdx_tensor **)sdx__calloc(ctx, (size_t)(n_tensors ? n_tensors : 1), sizeof *c.src);
    c.out = (sdx_tensor *)sdx__calloc(ctx, (size_t)(n_tensors ? n_tensors : 1), sizeof *c.out);
    if (!c.src || !c.out) rc = sdx__nomem(ctx, "conversion plan", sizeof *c.out * (size_t)n_tensors);
    else if (gguf) rc = sdx__convert_plan_gguf(&c, path, tensors, n_tensors, type, rules, convolutions, &n_out);
    else if (convolutions) rc = sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: quantized convolutions need a .gguf output", path);
    else rc = sdx__convert_plan_st(&c, path, tensors, n_tensors, type, rules);
    for (int i = 0; rc == SDX_OK && gguf && i < n_out; i++) conv_rows |= sdx__convert_is_conv_rows(&c.out[i]);
    if (rc == SDX_OK && gguf) rc = sdx__gguf_write(ctx, path, c.out, n_out, conv_rows, sdx__convert_fill, &c);
    else if (rc == SDX_OK) rc = sdx__st_write_stream(ctx, path, c.out, n_out, meta, n_meta, sdx__convert_fill, &c);
    sdx__free(ctx, c.buf);
    sdx__free(ctx, c.rows);
    sdx__free(ctx, (void *)c.src);
    sdx__free(ctx, c.out);
    return (sdx_result)rc;
}
