/* Suite "prompt": AUTOMATIC1111 prompt weighting (parse_prompt_attention),
 * 75-token chunking (tokenize_line) and emphasis, against the webui's own
 * outputs, plus the limits this implementation adds (finite weights,
 * bounded work on hostile prompts). */
#include "test.h"

/* parsed (a JSON [[text, weight], ...]) equals p exactly. */
static int pr_same_parse(const sdx__json *want, const sdx__parsed *p, char *why, size_t why_len) {
    int i = 0;
    for (const sdx__json *f = want->child; f; f = f->next, i++) {
        const sdx__json *t = f->child, *w = t ? t->next : NULL;
        if (i >= p->n) { snprintf(why, why_len, "only %d fragments", p->n); return 0; }
        if (!t || !w || t->len != p->frag[i].len || memcmp(t->str, p->frag[i].text, t->len) != 0 || w->num != p->frag[i].weight) {
            snprintf(why, why_len, "fragment %d: got ['%s', %.17g], want ['%s', %.17g]", i, p->frag[i].text,
                     p->frag[i].weight, t ? t->str : "?", w ? w->num : 0.0);
            return 0;
        }
    }
    if (i != p->n) { snprintf(why, why_len, "%d fragments, want %d", p->n, i); return 0; }
    return 1;
}

static int parse_matches_webui(void) {
    T_NEED_SHARED(path, "golden/prompt/parse.json");
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    int k = 0, errors = 0;
    T_CHECK(sdx__json_parse_file(ctx, path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (const sdx__json *c = doc.root->child; c; c = c->next, k++) {
        const char *text = sdx__json_get(c, "text")->str;
        const sdx__json *want = sdx__json_get(c, "parsed");
        sdx__parsed p;
        char why[512];
        int same;
        T_CHECK(sdx__prompt_parse(ctx, text, &p) == SDX_OK, "case %d: %s", k, sdx_last_error(ctx));
        if (!want) {
            /* the webui raises ValueError on "(cat:1.2.3)"; documented policy:
             * the ':' is text, the ')' closes the bracket */
            errors++;
            T_CHECK(p.n == 1 && !strcmp(p.frag[0].text, "cat:1.2.3") && p.frag[0].weight == 1.1,
                    "case %d (%s): got %d fragments", k, text, p.n);
            sdx__parsed_free(ctx, &p);
            continue;
        }
        same = pr_same_parse(want, &p, why, sizeof why);
        sdx__parsed_free(ctx, &p);
        if (!same) { sdx__json_free(&doc); T_CHECK(0, "case %d (%s): %s", k, text, why); }
    }
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    T_NOTE("%d cases, weights identical as doubles; %d reference error case handled", k, errors);
    T_CHECK(k == 66 && errors == 1, "%d cases, %d error cases", k, errors);
    return T_PASS;
}

static int chunks_match_webui(void) {
    T_NEED_TOKENIZER(tok);
    T_NEED_SHARED(path, "golden/prompt/chunks.json");
    sdx_ctx *ctx = t_tok_ctx;
    sdx__json_doc doc;
    int k = 0;
    T_CHECK(sdx__json_parse_file(ctx, path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (const sdx__json *c = doc.root->child; c; c = c->next, k++) {
        const char *text = sdx__json_get(c, "text")->str;
        const sdx__json *chunks = sdx__json_get(c, "chunks"), *ch;
        sdx__chunks got;
        int count, i = 0, bad = -1;
        T_CHECK(sdx__prompt_chunks_count(ctx, tok, text, &got, &count) == SDX_OK, "case %d: %s", k, sdx_last_error(ctx));
        for (ch = chunks->child; ch && bad < 0; ch = ch->next, i++) {
            const sdx__json *t = sdx__json_get(ch, "tokens")->child, *m = sdx__json_get(ch, "multipliers")->child;
            if (i >= got.n) { bad = 0; break; }
            for (int j = 0; j < 77; j++, t = t->next, m = m->next)
                if (got.tokens[i * 77 + j] != (int32_t)t->num || got.mult[i * 77 + j] != (float)m->num) { bad = i * 77 + j; break; }
        }
        if (bad < 0 && (i != got.n || count != (int)sdx__json_get(c, "token_count")->num)) bad = 1000000;
        sdx__chunks_free(ctx, &got);
        if (bad >= 0) { sdx__json_free(&doc); T_CHECK(0, "case %d (%.60s): chunks differ at flat index %d (%d chunks, count %d)", k, text, bad, got.n, count); }
    }
    sdx__json_free(&doc);
    T_NOTE("%d prompts: chunk ids exact, multipliers equal to (float) of the webui's doubles, token counts equal", k);
    T_CHECK(k == 21, "expected 21 cases, found %d", k);
    return T_PASS;
}

static int emphasis_matches_webui(void) {
    T_NEED_TOKENIZER(tok);
    T_NEED_SHARED(st_path, "golden/prompt/emphasis.safetensors");
    T_NEED_SHARED(js_path, "golden/prompt/emphasis.json");
    sdx_ctx *ctx = t_tok_ctx;
    sdx__json_doc doc;
    sdx_st *st;
    int k = 0;
    double worst_orig = 0, worst_nonorm = 0;
    T_CHECK(sdx_st_open(ctx, st_path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__json_parse_file(ctx, js_path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (const sdx__json *c = sdx__json_get(doc.root, "cases")->child; c; c = c->next, k++) {
        char name[64];
        sdx_tensor z, m, orig, nonorm;
        sdx__chunks chunks;
        int width = (int)sdx__json_get(c, "width")->num, chunk = (int)sdx__json_get(c, "chunk")->num;
        float *a, *b;
        int ok;
        snprintf(name, sizeof name, "case%d_z", k);           T_CHECK(sdx_st_read_f32(ctx, st, name, &z) == SDX_OK, "%s", sdx_last_error(ctx));
        snprintf(name, sizeof name, "case%d_multipliers", k); T_CHECK(sdx_st_read_f32(ctx, st, name, &m) == SDX_OK, "%s", sdx_last_error(ctx));
        snprintf(name, sizeof name, "case%d_original", k);    T_CHECK(sdx_st_read_f32(ctx, st, name, &orig) == SDX_OK, "%s", sdx_last_error(ctx));
        snprintf(name, sizeof name, "case%d_nonorm", k);      T_CHECK(sdx_st_read_f32(ctx, st, name, &nonorm) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(z.shape[1] == 77 && z.shape[2] == width, "case %d: z shape", k);
        /* our chunker gives the very multipliers the webui used */
        T_CHECK(sdx__prompt_chunks(ctx, tok, sdx__json_get(c, "text")->str, &chunks) == SDX_OK && chunk < chunks.n, "chunks");
        ok = !memcmp(chunks.mult + 77 * chunk, m.data, 77 * sizeof(float));
        sdx__chunks_free(ctx, &chunks);
        T_CHECK(ok, "case %d: multipliers differ from the webui's", k);
        a = (float *)malloc(77 * (size_t)width * sizeof(float));
        b = (float *)malloc(77 * (size_t)width * sizeof(float));
        T_CHECK(a && b, "malloc");
        memcpy(a, z.data, 77 * (size_t)width * sizeof(float));
        memcpy(b, z.data, 77 * (size_t)width * sizeof(float));
        sdx__emphasis_original(a, 77, width, (const float *)m.data);
        sdx__emphasis_nonorm(b, 77, width, (const float *)m.data);
        for (int i = 0; i < 77 * width; i++) {
            double want = ((float *)orig.data)[i], d = fabs((double)a[i] - want);
            ok &= d <= 1e-5 + 1e-5 * fabs(want);
            if (d > worst_orig) worst_orig = d;
            if (b[i] != ((float *)nonorm.data)[i]) { ok = 0; worst_nonorm = fabs((double)b[i] - ((float *)nonorm.data)[i]); }
        }
        free(a); free(b);
        sdx_tensor_free(ctx, &z); sdx_tensor_free(ctx, &m); sdx_tensor_free(ctx, &orig); sdx_tensor_free(ctx, &nonorm);
        T_CHECK(ok, "case %d: original max abs err %.3g, nonorm %.3g", k, worst_orig, worst_nonorm);
    }
    sdx__json_free(&doc);
    sdx_st_close(st);
    T_NOTE("%d cases: original max abs err %.3g (tol 1e-5 + 1e-5 rel), nonorm exact", k, worst_orig);
    T_CHECK(k == 3, "expected 3 cases");
    return T_PASS;
}

/* No syntax -> multipliers exactly 1, and emphasis is then a no-op. */
static int plain_prompt_has_unit_multipliers_and_exact_noop(void) {
    T_NEED_TOKENIZER(tok);
    sdx__chunks c;
    float z[77 * 32], ref[77 * 32];
    T_CHECK(sdx__prompt_chunks(t_tok_ctx, tok, "a photo of a cat, 8k, highly detailed", &c) == SDX_OK, "chunks");
    for (int i = 0; i < 77 * c.n; i++) T_CHECK(c.mult[i] == 1.0f, "multiplier %d is %g", i, c.mult[i]);
    t_seed(3);
    t_fill_normal(z, 77 * 32, 3.0);
    memcpy(ref, z, sizeof z);
    sdx__emphasis_original(z, 77, 32, c.mult);
    sdx__chunks_free(t_tok_ctx, &c);
    T_CHECK(!memcmp(z, ref, sizeof z), "emphasis with unit multipliers changed z");
    return T_PASS;
}

/* Hand-computed reference: mean kept, f64 recomputation. */
static int emphasis_original_keeps_the_mean(void) {
    float z[77 * 16], mult[77];
    double before = 0, after = 0;
    t_seed(11);
    t_fill_normal(z, 77 * 16, 2.0);
    for (int i = 0; i < 77 * 16; i++) { z[i] += 0.3f; before += z[i]; }
    for (int t = 0; t < 77; t++) mult[t] = (float)(0.5 + t_uniform());
    sdx__emphasis_original(z, 77, 16, mult);
    for (int i = 0; i < 77 * 16; i++) after += z[i];
    T_NOTE("mean before %.9f after %.9f", before / (77 * 16), after / (77 * 16));
    T_CHECK(fabs(before - after) / (77 * 16) < 1e-5, "mean moved: %g -> %g", before, after);
    /* a zero new mean: the rescale is skipped instead of making Inf */
    for (int i = 0; i < 77 * 16; i++) z[i] = (i % 2) ? 1.0f : -1.0f;
    for (int t = 0; t < 77; t++) mult[t] = 2.0f;
    sdx__emphasis_original(z, 77, 16, mult);
    for (int i = 0; i < 77 * 16; i++) T_CHECK(isfinite(z[i]), "non-finite output at %d", i);
    return T_PASS;
}

/* Weights that would be Inf/NaN downstream are clamped or stay text. */
static int absurd_weights_stay_finite(void) {
    static const struct { const char *text; const char *frag0; double w0; } cases[] = {
        { "(x:99999999999999999999999999999999999999999)", "x", 1000.0 },
        { "(x:-99999999999999999999999999999999999999999)", "x", -1000.0 },
        { "(x:1e40)", "x:1e40", 1.1 },            /* not a number in this grammar */
        { "(x:inf)", "x:inf", 1.1 },
        { "(x:nan)", "x:nan", 1.1 },
        { "(x:.)", "x:.", 1.1 },                  /* float('.') raises: ':' is text */
        { "(x:1.2.3)", "x:1.2.3", 1.1 },
        { "(x:0.30000000000000000000000000001)", "x", 0.3 },
        { "(x:1234.5678)", "x", 1000.0 },
    };
    sdx_ctx *ctx = t_ctx();
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        sdx__parsed p;
        T_CHECK(sdx__prompt_parse(ctx, cases[i].text, &p) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(p.n == 1 && !strcmp(p.frag[0].text, cases[i].frag0) && p.frag[0].weight == cases[i].w0,
                "%s: got %d fragments, first ['%s', %.17g]", cases[i].text, p.n, p.frag[0].text, p.frag[0].weight);
        sdx__parsed_free(ctx, &p);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int pr_all_finite(const sdx__parsed *p, double *max_abs) {
    *max_abs = 0;
    for (int i = 0; i < p->n; i++) {
        if (!isfinite(p->frag[i].weight)) return 0;
        if (fabs(p->frag[i].weight) > *max_abs) *max_abs = fabs(p->frag[i].weight);
    }
    return 1;
}

/* 10k nested brackets (closed, unclosed, with a zero weight inside, and
 * square) parse fast into finite weights. */
static int deep_nesting_is_bounded_and_finite(void) {
    sdx_ctx *ctx = t_ctx();
    size_t depth = 10000, n;
    char *s = (char *)malloc(4 * depth + 64);
    double t0 = t_now(), max_abs;
    T_CHECK(s != NULL, "malloc");
    for (int variant = 0; variant < 4; variant++) {
        sdx__parsed p;
        n = 0;
        for (size_t i = 0; i < depth; i++) { s[n++] = variant == 3 ? '[' : '('; if (variant == 0) s[n++] = 'a'; }
        n += (size_t)sprintf(s + n, variant == 2 ? "(x:0)" : "x");
        if (variant != 1)
            for (size_t i = 0; i < depth; i++) s[n++] = variant == 3 ? ']' : ')';
        s[n] = 0;
        T_CHECK(sdx__prompt_parse(ctx, s, &p) == SDX_OK, "variant %d: %s", variant, sdx_last_error(ctx));
        T_CHECK(pr_all_finite(&p, &max_abs) && max_abs <= 1000.0, "variant %d: weights not finite/clamped (%g)", variant, max_abs);
        sdx__parsed_free(ctx, &p);
    }
    free(s);
    sdx_destroy(ctx);
    T_NOTE("4 prompts with 10k nested brackets parsed in %.3f s", t_now() - t0);
    T_CHECK(t_now() - t0 < 5.0, "too slow");
    return T_PASS;
}

/* A 100k-character prompt full of syntax chunks quickly. */
static int long_prompt_chunks_quickly(void) {
    T_NEED_TOKENIZER(tok);
    static const char piece[] = "(masterpiece:1.2), [bad], \\(x\\) BREAK ((best)) a cat, ";
    size_t n = 100000, len = strlen(piece);
    char *s = (char *)malloc(n + 1);
    sdx__chunks c;
    double t0;
    int count;
    T_CHECK(s != NULL, "malloc");
    for (size_t i = 0; i < n; i++) s[i] = piece[i % len];
    s[n] = 0;
    t0 = t_now();
    T_CHECK(sdx__prompt_chunks_count(t_tok_ctx, tok, s, &c, &count) == SDX_OK, "%s", sdx_last_error(t_tok_ctx));
    T_NOTE("100k-character prompt: %d chunks, %d tokens in %.3f s", c.n, count, t_now() - t0);
    for (int i = 0; i < 77 * c.n; i++) T_CHECK(isfinite(c.mult[i]), "non-finite multiplier");
    sdx__chunks_free(t_tok_ctx, &c);
    free(s);
    T_CHECK(t_now() - t0 < 10.0, "too slow");
    return T_PASS;
}

/* Random byte soup heavy in syntax characters: never a crash, always
 * finite multipliers and 77-id chunks that start with BOS. */
static int random_prompts_never_break(void) {
    T_NEED_TOKENIZER(tok);
    static const char alphabet[] = "()[]:\\ ,.BREAK19ab\xc3\xa9\xff\n&;#";
    char s[257];
    t_seed(5);
    for (int trial = 0; trial < 400; trial++) {
        int n = (int)(t_uniform() * 256);
        sdx__chunks c;
        for (int i = 0; i < n; i++) {
            s[i] = alphabet[(int)(t_uniform() * (sizeof alphabet - 1))];
            if (s[i] == 0) s[i] = 'x';
        }
        s[n] = 0;
        T_CHECK(sdx__prompt_chunks(t_tok_ctx, tok, s, &c) == SDX_OK, "trial %d: %s", trial, sdx_last_error(t_tok_ctx));
        for (int i = 0; i < c.n; i++) {
            T_CHECK(c.tokens[77 * i] == 49406 && c.tokens[77 * i + 76] == 49407, "trial %d: chunk %d framing", trial, i);
            for (int j = 0; j < 77; j++) T_CHECK(isfinite(c.mult[77 * i + j]), "trial %d: multiplier", trial);
        }
        sdx__chunks_free(t_tok_ctx, &c);
    }
    return T_PASS;
}

static const t_case prompt_cases[] = {
    { "parse_matches_webui", parse_matches_webui },
    { "chunks_match_webui", chunks_match_webui },
    { "emphasis_matches_webui", emphasis_matches_webui },
    { "plain_prompt_has_unit_multipliers_and_exact_noop", plain_prompt_has_unit_multipliers_and_exact_noop },
    { "emphasis_original_keeps_the_mean", emphasis_original_keeps_the_mean },
    { "absurd_weights_stay_finite", absurd_weights_stay_finite },
    { "deep_nesting_is_bounded_and_finite", deep_nesting_is_bounded_and_finite },
    { "long_prompt_chunks_quickly", long_prompt_chunks_quickly },
    { "random_prompts_never_break", random_prompts_never_break },
    { "teardown", t_tokenizer_teardown },
    { 0, 0 }
};
SDX_TEST_SUITE(prompt, prompt_cases)
