/* Suite "tokenizer": CLIP BPE against OpenAI's SimpleTokenizer (golden
 * cases), vocabulary loading from every accepted source, and the inflate
 * decoder on real, hand-made and damaged gzip streams. */
#include "test.h"

/* Compares a JSON int array with ids; returns the first mismatch or -1. */
static int tk_diff(const sdx__json *arr, const int32_t *ids, int n) {
    int i = 0;
    const sdx__json *e;
    for (e = arr ? arr->child : NULL; e; e = e->next, i++) {
        if (i >= n || (int32_t)e->num != ids[i]) return i;
    }
    return i == n ? -1 : i;
}

/* Runs every golden case through tok; on failure says which. */
static int tk_check_cases(sdx_ctx *ctx, sdx_tokenizer *tok, const char *path, int *n_cases) {
    sdx__json_doc doc;
    int k = 0;
    T_CHECK(sdx__json_parse_file(ctx, path, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (const sdx__json *c = doc.root->child; c; c = c->next, k++) {
        const char *text = sdx__json_get(c, "text")->str;
        int32_t *ids, pad0[77], pad1[77];
        int n, d0, d1, d2;
        T_CHECK(sdx_tokenize(ctx, tok, text, &ids, &n) == SDX_OK, "case %d: %s", k, sdx_last_error(ctx));
        T_CHECK(sdx_tokenize_padded(ctx, tok, text, 0, pad0) == SDX_OK, "case %d", k);
        T_CHECK(sdx_tokenize_padded(ctx, tok, text, 49407, pad1) == SDX_OK, "case %d", k);
        d0 = tk_diff(sdx__json_get(c, "ids"), ids, n);
        d1 = tk_diff(sdx__json_get(c, "padded_0"), pad0, 77);
        d2 = tk_diff(sdx__json_get(c, "padded_49407"), pad1, 77);
        if (d0 >= 0) {
            char got[256] = "";
            for (int i = 0; i < n && i < 24; i++) snprintf(got + strlen(got), sizeof got - strlen(got), "%d ", ids[i]);
            sdx_tokens_free(ctx, ids);
            sdx__json_free(&doc);
            T_CHECK(0, "case %d (%s): ids differ at %d; got %d ids: %s", k, text, d0, n, got);
        }
        sdx_tokens_free(ctx, ids);
        if (d1 >= 0 || d2 >= 0) { sdx__json_free(&doc); T_CHECK(0, "case %d (%s): padded ids differ at %d/%d", k, text, d1, d2); }
    }
    sdx__json_free(&doc);
    *n_cases = k;
    return T_PASS;
}

static int golden_cases_match_openai_vocab(void) {
    T_NEED_TOKENIZER(tok);
    T_NEED_SHARED(path, "golden/tokenizer/cases.json");
    int n = 0, r = tk_check_cases(t_tok_ctx, tok, path, &n);
    if (r != T_PASS) return r;
    T_CHECK(n == 64, "expected 64 cases, found %d", n);
    T_NOTE("%d cases: ids, padded_0 and padded_49407 identical", n);
    return T_PASS;
}

/* The Hugging Face directory (merges.txt + vocab.json ids) gives the same. */
static int golden_cases_match_hf_directory(void) {
    T_NEED_SHARED(merges, "vocab/merges.txt");
    T_NEED_SHARED(path, "golden/tokenizer/cases.json");
    sdx_ctx *ctx = t_ctx();
    sdx_tokenizer *tok;
    char dir[1024];
    int n = 0, r, nv;
    int32_t bos, eos;
    snprintf(dir, sizeof dir, "%s/vocab", t_shared_dir());
    T_CHECK(sdx_tokenizer_load(ctx, dir, &tok) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_tokenizer_info(tok, &nv, &bos, &eos);
    r = tk_check_cases(ctx, tok, path, &n);
    sdx_tokenizer_free(tok);
    sdx_destroy(ctx);
    if (r != T_PASS) return r;
    T_CHECK(nv == 49408 && bos == 49406 && eos == 49407, "vocab %d bos %d eos %d", nv, bos, eos);
    (void)merges;
    return T_PASS;
}

/* merges.txt loaded from memory: ids derived from the merge order. */
static int merges_from_memory_derive_clip_ids(void) {
    T_NEED_SHARED(merges, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_tokenizer *tok;
    char *data;
    size_t len;
    int32_t *ids, bos, eos;
    int n, nv;
    static const int32_t want[] = { 320, 267, 2242, 2368 };
    T_CHECK(sdx__read_file(ctx, merges, &data, &len, (size_t)1 << 26) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tokenizer_load_memory(ctx, data, len, &tok) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx__free(ctx, data);
    sdx_tokenizer_info(tok, &nv, &bos, &eos);
    T_CHECK(nv == 49408 && bos == 49406 && eos == 49407, "vocab %d bos %d eos %d", nv, bos, eos);
    T_CHECK(sdx_tokenize(ctx, tok, "a , cute cat", &ids, &n) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(n == 4 && !memcmp(ids, want, sizeof want), "a , cute cat -> %d ids, first %d", n, n ? ids[0] : -1);
    sdx_tokens_free(ctx, ids);
    sdx_tokenizer_free(tok);
    sdx_destroy(ctx);
    return T_PASS;
}

static int special_token_strings_map_to_bos_eos(void) {
    T_NEED_TOKENIZER(tok);
    int32_t *ids;
    int n;
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, "<|startoftext|>cat<|endoftext|>", &ids, &n) == SDX_OK, "tokenize");
    T_CHECK(n == 3 && ids[0] == 49406 && ids[1] == 2368 && ids[2] == 49407, "got %d ids", n);
    sdx_tokens_free(t_tok_ctx, ids);
    return T_PASS;
}

static int empty_text_gives_bos_eos_then_padding(void) {
    T_NEED_TOKENIZER(tok);
    int32_t out[77], *ids;
    int n;
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, "", &ids, &n) == SDX_OK && n == 0 && ids, "empty text: n=%d", n);
    sdx_tokens_free(t_tok_ctx, ids);
    T_CHECK(sdx_tokenize_padded(t_tok_ctx, tok, " \t\n", 0, out) == SDX_OK, "padded");
    T_CHECK(out[0] == 49406 && out[1] == 49407 && out[2] == 0 && out[76] == 0, "got %d %d %d", out[0], out[1], out[2]);
    return T_PASS;
}

/* Policy: each byte that does not start valid UTF-8 becomes U+FFFD. */
static int invalid_utf8_becomes_replacement_characters(void) {
    T_NEED_TOKENIZER(tok);
    int32_t *a, *b;
    int na, nb;
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, "\xff\xfe cat \xc3 dog \xe2\x82", &a, &na) == SDX_OK, "%s", sdx_last_error(t_tok_ctx));
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, "\xef\xbf\xbd\xef\xbf\xbd cat \xef\xbf\xbd dog \xef\xbf\xbd\xef\xbf\xbd", &b, &nb) == SDX_OK, "ref");
    T_CHECK(na == nb && !memcmp(a, b, (size_t)na * sizeof *a), "%d vs %d ids", na, nb);
    sdx_tokens_free(t_tok_ctx, a);
    sdx_tokens_free(t_tok_ctx, b);
    return T_PASS;
}

/* Clean-up rules not covered by the goldens, each against what the
 * Python pipeline gives (the expected strings were produced with it). */
static int cleanup_rules_match_python(void) {
    T_NEED_TOKENIZER(tok);
    static const char *const pairs[][2] = {
        { "\xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91\xce\xa3 \xce\xa3", "\xcf\x83\xce\xbf\xcf\x86\xce\xb9\xce\xb1\xcf\x82 \xcf\x83" }, /* final sigma */
        { "e\xcc\x81", "\xc3\xa9" },                       /* NFC: e + U+0301 -> é */
        { "&notit; &amp &#x41; &#65 &#0; &#128;", "\xc2\xacit; & A A \xef\xbf\xbd \xe2\x82\xac" },
        { "\xe2\x80\x9cquoted\xe2\x80\x9d", "\"quoted\"" },
        { "a\xe3\x80\x80" "b", "a b" },                   /* U+3000 */
        { "x\xe2\x80\x8b" "y", "x\xe2\x80\x8by" },        /* U+200B is not whitespace */
        { "\xc3\xa2\xe2\x82\xac\xe2\x84\xa2", "'" },       /* mojibake of U+2019, then uncurled */
    };
    for (int i = 0; i < (int)(sizeof pairs / sizeof pairs[0]); i++) {
        int32_t *a, *b;
        int na, nb, same;
        T_CHECK(sdx_tokenize(t_tok_ctx, tok, pairs[i][0], &a, &na) == SDX_OK, "tokenize");
        T_CHECK(sdx_tokenize(t_tok_ctx, tok, pairs[i][1], &b, &nb) == SDX_OK, "tokenize");
        same = na == nb && !memcmp(a, b, (size_t)na * sizeof *a);
        sdx_tokens_free(t_tok_ctx, a);
        sdx_tokens_free(t_tok_ctx, b);
        T_CHECK(same, "pair %d: '%s' does not clean up like '%s' (%d vs %d ids)", i, pairs[i][0], pairs[i][1], na, nb);
    }
    return T_PASS;
}

/* A 100k-character prompt (one 50k-letter word, many short words, long
 * punctuation and combining-mark runs) stays fast: BPE is O(n log n). */
static int long_prompt_is_fast(void) {
    T_NEED_TOKENIZER(tok);
    size_t n = 100000;
    char *text = (char *)malloc(n + 1);
    int32_t *ids;
    int nids;
    double t0, dt;
    T_CHECK(text != NULL, "malloc");
    for (size_t i = 0; i < n; i++) text[i] = i < 50000 ? "ab"[i % 2] : i < 80000 ? "cat, dog "[i % 9] : '!';
    text[n] = 0;
    t0 = t_now();
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, text, &ids, &nids) == SDX_OK, "%s", sdx_last_error(t_tok_ctx));
    dt = t_now() - t0;
    sdx_tokens_free(t_tok_ctx, ids);
    for (size_t i = 0; i + 1 < n; i += 2) { text[i] = (char)0xcc; text[i + 1] = (char)(0x80 + (i / 2) % 0x30); }
    t0 = t_now();
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, text, &ids, &nids) == SDX_OK, "%s", sdx_last_error(t_tok_ctx));
    dt += t_now() - t0;
    sdx_tokens_free(t_tok_ctx, ids);
    free(text);
    T_NOTE("two 100k-byte prompts tokenized in %.3f s", dt);
    T_CHECK(dt < 10.0, "took %.1f s", dt);
    return T_PASS;
}

/* ---- vocabulary files ---- */

static int directory_without_vocabulary_is_a_clear_error(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_tokenizer *tok = NULL;
    int rc = sdx_tokenizer_load(ctx, "tests", &tok);
    T_CHECK(rc == SDX_ERR_IO && tok == NULL && strstr(sdx_last_error(ctx), "merges.txt"), "rc %d: %s", rc, sdx_last_error(ctx));
    rc = sdx_tokenizer_load_memory(ctx, "{\"a\": 1}", 8, &tok);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "vocab.json"), "rc %d: %s", rc, sdx_last_error(ctx));
    rc = sdx_tokenizer_load_memory(ctx, "#version: 0.2\nab\n", 17, &tok);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "line 2"), "rc %d: %s", rc, sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- inflate ---- */
static const uint8_t gz_stored[60] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x03, 0x01, 0x25, 0x00, 0xda, 0xff, 0x73,
    0x74, 0x6f, 0x72, 0x65, 0x64, 0x20, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x20, 0x74, 0x65, 0x73, 0x74,
    0x3a, 0x20, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x68, 0x65,
    0x6c, 0x6c, 0x6f, 0x0a, 0x4f, 0x17, 0x3c, 0xe4, 0x25, 0x00, 0x00, 0x00,
};
static const uint8_t gz_fixed[25] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xcb, 0xac, 0x48, 0x4d, 0x01,
    0x00, 0x32, 0xce, 0xc9, 0x9e, 0x05, 0x00, 0x00, 0x00,
};
static const uint8_t gz_dynamic[607] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x65, 0x96, 0x4d, 0x8e, 0x5c, 0x31,
    0x08, 0x84, 0xf7, 0x39, 0x45, 0x1f, 0xc1, 0x18, 0x1b, 0x4c, 0x6e, 0x93, 0x45, 0x4b, 0x33, 0x52,
    0x2b, 0x9b, 0xfc, 0x9c, 0x3f, 0x13, 0x75, 0x95, 0x17, 0xd4, 0x16, 0x1e, 0x0f, 0xf8, 0x00, 0xc3,
    0xeb, 0xf3, 0xe7, 0xf3, 0x31, 0xbe, 0x3f, 0x7e, 0x7f, 0x3c, 0x1f, 0x7f, 0x7f, 0xbc, 0xfe, 0x3c,
    0x1f, 0x9f, 0xbf, 0x1e, 0xe3, 0xdb, 0xeb, 0xbf, 0xd8, 0x9a, 0xd8, 0xde, 0xe2, 0xd9, 0xc4, 0xeb,
    0x2d, 0xf6, 0x26, 0xae, 0xb7, 0x78, 0xf5, 0x9f, 0xc4, 0x5b, 0xbe, 0x9b, 0x7c, 0xee, 0xb7, 0x3c,
    0x9a, 0xdc, 0xf1, 0x7d, 0x76, 0xaf, 0xf8, 0xff, 0x69, 0xf2, 0x40, 0x38, 0xd5, 0xe4, 0x07, 0xd1,
    0x5b, 0x4f, 0xd6, 0x06, 0xd3, 0x95, 0x7c, 0x27, 0x6d, 0x7a, 0xca, 0xb6, 0xe0, 0xc5, 0x5c, 0xd2,
    0x43, 0x5c, 0x26, 0x89, 0x17, 0x32, 0x31, 0x49, 0x9d, 0xb9, 0x5b, 0x08, 0x14, 0xda, 0xf4, 0xf4,
    0xe7, 0xa1, 0x9f, 0x0e, 0xc0, 0x27, 0x63, 0x2b, 0x41, 0xc9, 0x0a, 0x76, 0x06, 0x8b, 0x0c, 0x66,
    0x67, 0xb0, 0x16, 0x6d, 0xa4, 0xec, 0x07, 0x7e, 0x66, 0x67, 0xb0, 0x27, 0x62, 0x9b, 0x9d, 0xc1,
    0x4e, 0xe4, 0x33, 0x3b, 0x83, 0x20, 0x83, 0xd9, 0x19, 0xc4, 0xb5, 0xe9, 0x0c, 0xf2, 0xfa, 0xe9,
    0x0c, 0xf2, 0xc6, 0x26, 0x6d, 0xc0, 0x7c, 0xbc, 0x33, 0x28, 0x32, 0xf0, 0xce, 0xa0, 0xc8, 0xcd,
    0x3b, 0x83, 0x99, 0x50, 0x48, 0xf3, 0x4f, 0x28, 0xa4, 0x0b, 0x36, 0x62, 0x76, 0xed, 0x82, 0x03,
    0x8d, 0x74, 0x41, 0xd1, 0xa6, 0x13, 0xf0, 0xa4, 0x9f, 0x23, 0x75, 0x63, 0x68, 0x25, 0xd5, 0x01,
    0x9b, 0xd5, 0x09, 0xc4, 0x70, 0x68, 0x3a, 0x81, 0x20, 0xcf, 0xd5, 0x09, 0x64, 0xc0, 0xcf, 0xea,
    0x08, 0xce, 0x46, 0x6c, 0xab, 0x33, 0x28, 0xe7, 0xdb, 0xd0, 0x19, 0x38, 0x40, 0xaf, 0x90, 0x51,
    0xe4, 0xcf, 0x64, 0x10, 0x0c, 0x8d, 0xb3, 0x64, 0x10, 0x0c, 0x05, 0x5d, 0x25, 0xed, 0x8e, 0xa0,
    0x77, 0x47, 0xb0, 0x07, 0x9f, 0x27, 0x41, 0x70, 0x6d, 0x04, 0x01, 0xfd, 0x6c, 0x41, 0xc0, 0xd8,
    0xb6, 0x20, 0x60, 0x3e, 0x5b, 0x10, 0x80, 0xf4, 0x16, 0x04, 0x8b, 0x3f, 0x13, 0x04, 0x1b, 0x9d,
    0xb3, 0x05, 0x41, 0xa2, 0xa2, 0x5b, 0x10, 0x14, 0x82, 0x0e, 0xed, 0x02, 0x54, 0x27, 0x3a, 0x82,
    0x74, 0xda, 0x4c, 0xa9, 0x35, 0xfc, 0x84, 0x0c, 0x42, 0x22, 0xb6, 0x90, 0x49, 0x18, 0xd4, 0xc8,
    0x24, 0x38, 0x50, 0x87, 0x2e, 0x03, 0xda, 0xa4, 0x14, 0x0e, 0xad, 0x13, 0xb2, 0x10, 0xb8, 0x41,
    0xa2, 0x33, 0x48, 0xd2, 0x49, 0x79, 0x0b, 0x0c, 0xe5, 0xc9, 0xce, 0x80, 0x0f, 0x72, 0xca, 0x4a,
    0xe0, 0x90, 0xa6, 0x4b, 0x45, 0x51, 0xd2, 0x5c, 0x52, 0x04, 0x04, 0x9d, 0xf2, 0x1c, 0x2e, 0xa0,
    0xce, 0x8e, 0x20, 0xaf, 0x4d, 0x47, 0x50, 0xd7, 0xcf, 0x11, 0xd4, 0x4c, 0xa7, 0xa4, 0x75, 0xb8,
    0x46, 0x65, 0x25, 0x18, 0x50, 0x1f, 0x41, 0x90, 0xb4, 0x91, 0x49, 0x58, 0xf0, 0x73, 0xa4, 0x0d,
    0x38, 0x3d, 0x67, 0x49, 0x11, 0xa0, 0x90, 0x2e, 0x58, 0x40, 0x7d, 0x42, 0x42, 0xa3, 0x8d, 0x74,
    0x01, 0xbb, 0xfa, 0xc8, 0x46, 0x08, 0x4c, 0xcf, 0x29, 0xc1, 0x86, 0xa0, 0x4b, 0x2e, 0x03, 0xbe,
    0x94, 0xd5, 0x11, 0xf8, 0xc0, 0xdf, 0x4a, 0xb7, 0x22, 0xb0, 0x95, 0xcb, 0x1e, 0x43, 0xb7, 0x55,
    0x47, 0x70, 0x02, 0x51, 0xd7, 0x96, 0xb7, 0x1a, 0x0a, 0x59, 0x09, 0x8b, 0x3f, 0x93, 0xbb, 0x88,
    0xed, 0x5e, 0x3a, 0x08, 0xe8, 0x9c, 0x92, 0xa5, 0xc8, 0xd5, 0xf3, 0x75, 0x0b, 0x49, 0xa6, 0xd4,
    0x98, 0x4c, 0xe9, 0xbd, 0xa8, 0x04, 0x02, 0x1f, 0x31, 0x1b, 0x42, 0x81, 0x6f, 0xbf, 0x0d, 0xc1,
    0xc0, 0x82, 0xdb, 0x10, 0x0e, 0x37, 0x3e, 0x01, 0x71, 0xef, 0xad, 0x21, 0x24, 0xce, 0xa4, 0x4a,
    0x50, 0x54, 0x52, 0x25, 0xed, 0x60, 0x8c, 0x5d, 0x2f, 0x45, 0xa2, 0x35, 0x39, 0x15, 0x7d, 0xf3,
    0x87, 0x72, 0x2b, 0xee, 0x73, 0xef, 0x4b, 0xd9, 0x0f, 0x6c, 0x23, 0x93, 0x6b, 0xd1, 0xaf, 0x46,
    0xe6, 0x22, 0x6e, 0x80, 0x32, 0x18, 0x75, 0xad, 0xf4, 0x56, 0x22, 0x42, 0x39, 0x18, 0x2b, 0x9c,
    0x2a, 0x79, 0x1e, 0xbe, 0x2e, 0x82, 0x7f, 0x82, 0x3d, 0x98, 0x21, 0x22, 0x0c, 0x00, 0x00,
};

static int inflate_decodes_stored_fixed_and_dynamic_blocks(void) {
    sdx_ctx *ctx = t_ctx();
    uint8_t *out;
    size_t len;
    char want[4096];
    size_t wn = 0;
    T_CHECK(sdx__inflate(ctx, gz_stored, sizeof gz_stored, &out, &len, 1 << 20) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(len == 37 && !memcmp(out, "stored block test: hello hello hello\n", 37), "stored: %zu bytes", len);
    sdx__free(ctx, out);
    T_CHECK(sdx__inflate(ctx, gz_fixed, sizeof gz_fixed, &out, &len, 1 << 20) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(len == 5 && !memcmp(out, "fixed", 5), "fixed: %zu bytes", len);
    sdx__free(ctx, out);
    for (int i = 0; i < 120; i++) wn += (size_t)snprintf(want + wn, sizeof want - wn, "line %d: the value is %d\n", i, i * i % 997);
    T_CHECK(sdx__inflate(ctx, gz_dynamic, sizeof gz_dynamic, &out, &len, 1 << 20) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(len == wn && !memcmp(out, want, wn) && out[len] == 0, "dynamic: %zu bytes, want %zu", len, wn);
    sdx__free(ctx, out);
    sdx_destroy(ctx);
    return T_PASS;
}

static int inflate_real_vocabulary_has_all_lines(void) {
    T_NEED_SHARED(gz, "vocab/bpe_simple_vocab_16e6.txt.gz");
    sdx_ctx *ctx = t_ctx();
    char *data;
    size_t size, len, lines = 0;
    uint8_t *out;
    double t0;
    T_CHECK(sdx__read_file(ctx, gz, &data, &size, (size_t)1 << 26) == SDX_OK, "%s", sdx_last_error(ctx));
    t0 = t_now();
    T_CHECK(sdx__inflate(ctx, (const uint8_t *)data, size, &out, &len, (size_t)1 << 26) == SDX_OK, "%s", sdx_last_error(ctx));
    T_NOTE("inflated %zu -> %zu bytes in %.3f s", size, len, t_now() - t0);
    for (size_t i = 0; i < len; i++) lines += out[i] == '\n';
    T_CHECK(len == 3194984 && lines == 262145, "%zu bytes, %zu newlines", len, lines);
    T_CHECK(!memcmp(out, "\"bpe_simple_vocab_16e6.txt#version: 0.2\ni n\nt h\na n\n", 49), "first merges differ");
    sdx__free(ctx, out);
    /* too small a limit is an error, not a truncated result */
    T_CHECK(sdx__inflate(ctx, (const uint8_t *)data, size, &out, &len, 1000000) == SDX_ERR_FORMAT &&
            strstr(sdx_last_error(ctx), "limit"), "limit: %s", sdx_last_error(ctx));
    sdx__free(ctx, data);
    sdx_destroy(ctx);
    return T_PASS;
}

static int inflate_truncated_stream_says_truncated(void) {
    sdx_ctx *ctx = t_ctx();
    uint8_t *out;
    size_t len;
    for (size_t cut = 0; cut < sizeof gz_dynamic; cut++) {
        int rc = sdx__inflate(ctx, gz_dynamic, cut, &out, &len, 1 << 20);
        T_CHECK(rc == SDX_ERR_FORMAT && out == NULL, "cut at %zu: rc %d", cut, rc);
        T_CHECK(cut < 10 || strstr(sdx_last_error(ctx), "truncated") || strstr(sdx_last_error(ctx), "header"),
                "cut at %zu: '%s'", cut, sdx_last_error(ctx));
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int inflate_corrupt_stream_is_an_error_not_a_crash(void) {
    sdx_ctx *ctx = t_ctx();
    uint8_t buf[sizeof gz_dynamic], *out;
    size_t len;
    int errors = 0;
    memcpy(buf, gz_dynamic, sizeof buf);
    buf[sizeof buf - 8] ^= 1;               /* CRC-32 */
    T_CHECK(sdx__inflate(ctx, buf, sizeof buf, &out, &len, 1 << 20) == SDX_ERR_FORMAT &&
            strstr(sdx_last_error(ctx), "CRC"), "crc: %s", sdx_last_error(ctx));
    memcpy(buf, gz_dynamic, sizeof buf);
    buf[sizeof buf - 4] ^= 1;               /* ISIZE */
    T_CHECK(sdx__inflate(ctx, buf, sizeof buf, &out, &len, 1 << 20) == SDX_ERR_FORMAT &&
            strstr(sdx_last_error(ctx), "ISIZE"), "isize: %s", sdx_last_error(ctx));
    t_seed(7);
    for (int trial = 0; trial < 300; trial++) {
        int rc;
        memcpy(buf, gz_dynamic, sizeof buf);
        for (int k = 0; k < 1 + trial % 3; k++) buf[10 + (size_t)(t_uniform() * (double)(sizeof buf - 18))] ^= (uint8_t)(1u << (int)(t_uniform() * 8));
        rc = sdx__inflate(ctx, buf, sizeof buf, &out, &len, 1 << 20);
        if (rc == SDX_OK) sdx__free(ctx, out);
        else { errors++; T_CHECK(sdx_last_error(ctx)[0], "no message"); }
    }
    T_NOTE("%d of 300 damaged streams rejected (the others hit the CRC or decode to the same bytes)", errors);
    T_CHECK(errors > 250, "only %d of 300 damaged streams rejected", errors);
    /* a raw DEFLATE stream with the reserved block type */
    T_CHECK(sdx__inflate(ctx, (const uint8_t *)"\x07\x00", 2, &out, &len, 100) == SDX_ERR_FORMAT &&
            strstr(sdx_last_error(ctx), "block type"), "btype: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* A fixed-Huffman gzip member decoding to `lits` followed by one copy of
 * length 3 at distance 3, with the CRC-32/ISIZE of `expect`. */
typedef struct tk_bitw { uint8_t *p; size_t n; int bit; } tk_bitw;

static void tk_put(tk_bitw *w, unsigned v, int nbits, int huffman) {
    for (int i = 0; i < nbits; i++) {
        unsigned b = huffman ? (v >> (nbits - 1 - i)) & 1u : (v >> i) & 1u;   /* Huffman codes go MSB first */
        if (w->bit == 0) w->p[w->n++] = 0;
        w->p[w->n - 1] |= (uint8_t)(b << w->bit);
        w->bit = (w->bit + 1) & 7;
    }
}

static size_t tk_fixed_member(uint8_t *out, const char *lits, const char *expect) {
    static const uint8_t header[10] = { 0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03 };
    tk_bitw w = { out, 0, 0 };
    uint32_t table[256], crc, isize = (uint32_t)strlen(expect);
    memcpy(out, header, 10);
    w.n = 10;
    tk_put(&w, 1, 1, 0);                                    /* BFINAL */
    tk_put(&w, 1, 2, 0);                                    /* BTYPE = fixed */
    for (const char *c = lits; *c; c++) tk_put(&w, 0x30u + (unsigned char)*c, 8, 1);
    tk_put(&w, 1, 7, 1);                                    /* length symbol 257: 3 bytes */
    tk_put(&w, 2, 5, 1);                                    /* distance symbol 2: 3 back */
    tk_put(&w, 0, 7, 1);                                    /* end of block */
    sdx__crc32_table(table);
    crc = sdx__crc32(table, 0, (const uint8_t *)expect, isize);
    for (int i = 0; i < 4; i++) out[w.n++] = (uint8_t)(crc >> (8 * i));
    for (int i = 0; i < 4; i++) out[w.n++] = (uint8_t)(isize >> (8 * i));
    return w.n;
}

/* Each gzip member is its own DEFLATE stream: a back-reference may reach
 * back over this member's output only, not into the previous member's. */
static int inflate_back_reference_stays_inside_its_member(void) {
    sdx_ctx *ctx = t_ctx();
    uint8_t gz[128], *out;
    size_t n, len;
    memcpy(gz, gz_fixed, sizeof gz_fixed);
    n = sizeof gz_fixed + tk_fixed_member(gz + sizeof gz_fixed, "abc", "abcabc");
    T_CHECK(sdx__inflate(ctx, gz, n, &out, &len, 1 << 20) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(len == 11 && !memcmp(out, "fixedabcabc", 11), "two members: %zu bytes '%.*s'", len, (int)len, (char *)out);
    sdx__free(ctx, out);
    /* the same copy with nothing before it in its member, trailer made
     * for what a decoder sharing the window across members would give */
    n = sizeof gz_fixed + tk_fixed_member(gz + sizeof gz_fixed, "", "xed");
    T_CHECK(sdx__inflate(ctx, gz, n, &out, &len, 1 << 20) == SDX_ERR_FORMAT && out == NULL &&
            strstr(sdx_last_error(ctx), "back-reference"), "copy into the previous member: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* A long run of mojibake is repaired as a whole, not only up to some
 * buffer size (U+00E6 U+2014 U+00A5 is the UTF-8 of U+65E5 read as
 * windows-1252). */
static int long_mojibake_run_is_repaired(void) {
    T_NEED_TOKENIZER(tok);
    char bad[40 * 7 + 1] = "", good[40 * 3 + 1] = "";
    int32_t *a, *b;
    int na, nb, same;
    for (int i = 0; i < 40; i++) {
        strcat(bad, "\xc3\xa6\xe2\x80\x94\xc2\xa5");
        strcat(good, "\xe6\x97\xa5");
    }
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, bad, &a, &na) == SDX_OK, "%s", sdx_last_error(t_tok_ctx));
    T_CHECK(sdx_tokenize(t_tok_ctx, tok, good, &b, &nb) == SDX_OK, "%s", sdx_last_error(t_tok_ctx));
    same = na == nb && !memcmp(a, b, (size_t)na * sizeof *a);
    sdx_tokens_free(t_tok_ctx, a);
    sdx_tokens_free(t_tok_ctx, b);
    T_CHECK(same, "120-byte mojibake run: %d ids, the repaired text gives %d", na, nb);
    return T_PASS;
}

static int gzip_vocabulary_from_memory_equals_file(void) {
    T_NEED_TOKENIZER(file_tok);
    sdx_ctx *ctx = t_ctx();
    sdx_tokenizer *tok;
    char *data;
    size_t size;
    int32_t a[77], b[77];
    const char *prompt = "masterpiece, best quality, a photograph of an astronaut riding a horse on mars";
    T_CHECK(sdx__read_file(ctx, t_shared("vocab/bpe_simple_vocab_16e6.txt.gz"), &data, &size, (size_t)1 << 26) == SDX_OK, "read");
    T_CHECK(sdx_tokenizer_load_memory(ctx, data, size, &tok) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tokenize_padded(ctx, tok, prompt, 0, a) == SDX_OK, "tokenize");
    T_CHECK(sdx_tokenize_padded(t_tok_ctx, file_tok, prompt, 0, b) == SDX_OK, "tokenize");
    T_CHECK(!memcmp(a, b, sizeof a), "memory and file tokenizers differ");
    data[size / 2] ^= 0x10;
    sdx_tokenizer_free(tok);
    tok = NULL;
    T_CHECK(sdx_tokenizer_load_memory(ctx, data, size, &tok) == SDX_ERR_FORMAT && !tok, "corrupt .gz accepted");
    T_NOTE("corrupt .gz: %s", sdx_last_error(ctx));
    sdx__free(ctx, data);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Every allocation failure during load and tokenize is reported as
 * SDX_ERR_NOMEM with a message, and leaks nothing (checked under ASan). */
static int tokenizer_allocation_failures_are_reported(void) {
    static const char merges[] = "#version: 0.2\nh e\nl l\nhe ll\no</w> ,</w>\nc a\nca t</w>\n";
    int failures = 0;
    for (long k = 1; k < 400; k++) {
        t_allocs f = T_ALLOCS_INIT;
        sdx_ctx *ctx = t_allocs_ctx(&f);
        sdx_tokenizer *tok = NULL;
        int32_t *ids = NULL;
        int n, rc;
        T_CHECK(ctx != NULL, "context");
        f.calls = 0;
        f.fail_at = k;
        rc = sdx_tokenizer_load_memory(ctx, merges, sizeof merges - 1, &tok);
        if (rc == SDX_OK) rc = sdx_tokenize(ctx, tok, "Hello, cat &amp; caf\xc3\x83\xc2\xa9 \xe1\x84\x80\xe1\x85\xa1 <|endoftext|>", &ids, &n);
        if (rc == SDX_OK) {
            sdx__chunks c;
            sdx_tokens_free(ctx, ids);
            rc = sdx__prompt_chunks(ctx, tok, "(a:1.2) [b] BREAK c", &c);
            if (rc == SDX_OK) sdx__chunks_free(ctx, &c);
        }
        f.fail_at = 0;
        sdx_tokenizer_free(tok);
        if (rc != SDX_OK) {
            failures++;
            T_CHECK(rc == SDX_ERR_NOMEM && sdx_last_error(ctx)[0], "failing allocation %ld: rc %d '%s'", k, rc, sdx_last_error(ctx));
        }
        sdx_destroy(ctx);
        if (rc == SDX_OK) break;
    }
    T_NOTE("%d distinct allocation failures checked", failures);
    T_CHECK(failures > 10, "only %d allocation points", failures);
    return T_PASS;
}

static const t_case tokenizer_cases[] = {
    { "golden_cases_match_openai_vocab", golden_cases_match_openai_vocab },
    { "golden_cases_match_hf_directory", golden_cases_match_hf_directory },
    { "merges_from_memory_derive_clip_ids", merges_from_memory_derive_clip_ids },
    { "special_token_strings_map_to_bos_eos", special_token_strings_map_to_bos_eos },
    { "empty_text_gives_bos_eos_then_padding", empty_text_gives_bos_eos_then_padding },
    { "invalid_utf8_becomes_replacement_characters", invalid_utf8_becomes_replacement_characters },
    { "cleanup_rules_match_python", cleanup_rules_match_python },
    { "long_prompt_is_fast", long_prompt_is_fast },
    { "directory_without_vocabulary_is_a_clear_error", directory_without_vocabulary_is_a_clear_error },
    { "inflate_decodes_stored_fixed_and_dynamic_blocks", inflate_decodes_stored_fixed_and_dynamic_blocks },
    { "inflate_real_vocabulary_has_all_lines", inflate_real_vocabulary_has_all_lines },
    { "inflate_truncated_stream_says_truncated", inflate_truncated_stream_says_truncated },
    { "inflate_corrupt_stream_is_an_error_not_a_crash", inflate_corrupt_stream_is_an_error_not_a_crash },
    { "inflate_back_reference_stays_inside_its_member", inflate_back_reference_stays_inside_its_member },
    { "long_mojibake_run_is_repaired", long_mojibake_run_is_repaired },
    { "gzip_vocabulary_from_memory_equals_file", gzip_vocabulary_from_memory_equals_file },
    { "tokenizer_allocation_failures_are_reported", tokenizer_allocation_failures_are_reported },
    { "teardown", t_tokenizer_teardown },
    { 0, 0 }
};
SDX_TEST_SUITE(tokenizer, tokenizer_cases)
