/* Suite "embedding": textual-inversion embeddings named in prompts. */
#include "test.h"
#include <sys/stat.h>

#define EMB_DIR t_tmp("sdx_t_embeddings")

/* Writes EMB_DIR/name.safetensors holding the token-embedding rows of
 * `word` (n_extra more copies of its first row appended), in the layout
 * of the model's family; width_delta makes it the wrong width. */
static int emb_write(sdx_model *m, const char *name, const char *word, int n_extra, int width_delta, int *n_vec) {
    sdx_ctx *ctx = m->ctx;
    int32_t *ids;
    int n, rc;
    sdx_tensor t[2];
    float *buf[2] = { NULL, NULL };
    char path[512];
    t_mkdir(EMB_DIR);
    if (sdx_tokenize(ctx, m->tok, word, &ids, &n) != SDX_OK) return 0;
    *n_vec = n + n_extra;
    for (int e = 0; e < m->te.n_enc; e++) {
        const sdx_tensor *tok = m->te.enc[e].tok_emb;
        int64_t W = tok->shape[1], Wf = W + width_delta;
        buf[e] = calloc((size_t)(*n_vec * Wf), sizeof(float));
        for (int v = 0; v < *n_vec; v++) sdx__load_f32(tok->data, tok->dtype, (int64_t)ids[v < n ? v : 0] * W, W, buf[e] + v * Wf);
        t[e] = sdx__view(SDX_F32, buf[e], 2, (const int64_t[]){ *n_vec, Wf });
        t[e].name = m->te.n_enc == 2 ? (e ? "clip_g" : "clip_l") : "emb_params";
    }
    snprintf(path, sizeof path, "%s/%s.safetensors", EMB_DIR, name);
    rc = sdx_st_write(ctx, path, t, m->te.n_enc, NULL, 0);
    free(buf[0]);
    free(buf[1]);
    sdx_tokens_free(ctx, ids);
    return rc == SDX_OK;
}

/* Context of `prompt` (embeddings from EMB_DIR when with_db). */
static int emb_encode(sdx_model *m, const char *prompt, int with_db, sdx_tensor *context, sdx_tensor *pooled, sdx__chunks *keep) {
    sdx__embdb db;
    sdx__chunks ch;
    int width[2] = { m->te.enc[0].width, m->te.n_enc > 1 ? m->te.enc[1].width : 0 }, rc;
    if (with_db && (rc = sdx__embdb_open(m->ctx, m->tok, EMB_DIR, m->te.n_enc, width, &db)) != SDX_OK) return rc;
    rc = sdx__prompt_chunks_emb(m->ctx, m->tok, with_db ? &db : NULL, prompt, &ch, NULL);
    if (rc == SDX_OK) rc = sdx__textenc_encode(m->ctx, &m->te, &m->arena, &ch, 0, context, pooled);
    if (keep) *keep = ch;
    else sdx__chunks_free(m->ctx, &ch);
    if (with_db) sdx__embdb_free(&db);
    return rc;
}

static int an_embedding_of_a_words_token_rows_conditions_like_the_word(void) {
    T_NEED_SHARED(ok, "golden/sd1/model.safetensors");
    static const char *const areas[] = { "sd1", "sd2", "sdxl" };
    sdx_ctx *ctx = t_ctx();
    (void)ok;
    for (int a = 0; a < 3; a++) {
        sdx_model *m = t_model(ctx, areas[a]);
        sdx_tensor c1, c2, p1, p2;
        int nv;
        T_CHECK(m, "%s", sdx_last_error(ctx));
        T_CHECK(emb_write(m, "qzvlighthouse", "lighthouse keeper", 0, 0, &nv), "%s", sdx_last_error(ctx));
        T_CHECK(emb_encode(m, "a photo of a lighthouse keeper, (lighthouse keeper:1.3) BREAK lighthouse keeper", 0, &c1, &p1, NULL) == SDX_OK,
                "%s", sdx_last_error(ctx));
        /* A1111's bare name and ComfyUI's embedding:name */
        T_CHECK(emb_encode(m, "a photo of a qzvlighthouse, (embedding:qzvlighthouse:1.3) BREAK qzvlighthouse", 1, &c2, &p2, NULL) == SDX_OK,
                "%s", sdx_last_error(ctx));
        T_CHECK(sdx_tensor_numel(&c1) == sdx_tensor_numel(&c2) && c1.shape[0] == 2 * 77, "%s: %lld vs %lld rows", areas[a],
                (long long)c1.shape[0], (long long)c2.shape[0]);
        T_CHECK(!memcmp(c1.data, c2.data, sdx_tensor_nbytes(&c1)), "%s: conditioning differs (rel-L2 %.3e)", areas[a],
                t_rel_l2_f32((const float *)c2.data, (const float *)c1.data, (size_t)sdx_tensor_numel(&c1)));
        T_CHECK(!memcmp(p1.data, p2.data, sdx_tensor_nbytes(&p1)), "%s: pooled differs", areas[a]);
        sdx_tensor_free(ctx, &c1); sdx_tensor_free(ctx, &c2); sdx_tensor_free(ctx, &p1); sdx_tensor_free(ctx, &p2);
        sdx_model_free(m);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int a_multi_vector_embedding_takes_its_positions_and_moves_to_the_next_chunk(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    char prompt[1024] = "";
    int nv, n_cat;
    int32_t *ids;
    T_CHECK(emb_write(m, "qzvthree", "fox", 2, 0, &nv) && nv == 3, "three vectors");
    T_CHECK(sdx_tokenize(ctx, m->tok, "cat", &ids, &n_cat) == SDX_OK && n_cat == 1, "'cat' is one token");
    sdx_tokens_free(ctx, ids);
    for (int fill = 72; fill <= 73; fill++) {
        sdx__chunks ch;
        sdx_tensor c, p;
        prompt[0] = 0;
        for (int i = 0; i < fill; i++) strcat(prompt, "cat ");
        strcat(prompt, "(qzvthree:1.5) dog");
        T_CHECK(emb_encode(m, prompt, 1, &c, &p, &ch) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(ch.n_emb == 3, "%d embedding positions", ch.n_emb);
        /* 72 + 3 fit in a chunk; 73 + 3 do not, so the vectors open the next one (A1111) */
        for (int v = 0; v < 3; v++) {
            int want = fill == 72 ? 1 + 72 + v : 77 + 1 + v;
            T_CHECK(ch.emb_pos[v] == want && ch.tokens[want] == 0 && ch.mult[want] == 1.5f, "fill %d: vector %d at %d, want %d",
                    fill, v, ch.emb_pos[v], want);
        }
        T_CHECK(ch.n == 2 && ch.tokens[fill == 72 ? 77 + 1 : 77 + 4] != SDX_TOKEN_EOS, "fill %d: %d chunks, 'dog' after the vectors",
                fill, ch.n);
        if (fill == 73) T_CHECK(ch.tokens[74] == SDX_TOKEN_EOS && ch.tokens[75] == SDX_TOKEN_EOS, "chunk 0 padded after 73 tokens");
        sdx__chunks_free(ctx, &ch);
        sdx_tensor_free(ctx, &c);
        sdx_tensor_free(ctx, &p);
    }
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

static int embeddings_of_the_wrong_width_or_layout_are_refused(void) {
    T_NEED_SHARED(ok, "golden/sdxl/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_model *sd1 = t_model(ctx, "sd1"), *xl = t_model(ctx, "sdxl");
    sdx_tensor c, p;
    int nv;
    (void)ok;
    T_CHECK(sd1 && xl, "%s", sdx_last_error(ctx));
    T_CHECK(emb_write(sd1, "qzvwide", "fox", 0, 8, &nv), "%s", sdx_last_error(ctx));
    T_CHECK(emb_encode(sd1, "a qzvwide", 1, &c, &p, NULL) == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "width"),
            "wrong width: %s", sdx_last_error(ctx));
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(emb_encode(xl, "a qzvwide", 1, &c, &p, NULL) == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "clip_l"),
            "SD1 embedding on SDXL: %s", sdx_last_error(ctx));
    T_NOTE("%s", sdx_last_error(ctx));
    {
        char path[512];
        snprintf(path, sizeof path, "%s/qzvwide.safetensors", EMB_DIR);
        remove(path);
    }
    sdx_model_free(sd1);
    sdx_model_free(xl);
    sdx_destroy(ctx);
    return T_PASS;
}

static int generation_uses_the_embedding_folder(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    sdx_gen_params gp;
    sdx_gen_result r1, r2;
    int nv;
    T_CHECK(emb_write(m, "qzvlighthouse", "lighthouse keeper", 0, 0, &nv), "%s", sdx_last_error(ctx));
    memset(&gp, 0, sizeof gp);
    gp.width = gp.height = 64;
    gp.steps = 1;
    gp.prompt = "a lighthouse keeper";
    gp.negative_prompt = "blurry lighthouse keeper";
    T_CHECK(sdx_generate(m, &gp, &r1) == SDX_OK, "%s", sdx_last_error(ctx));
    gp.prompt = "a qzvlighthouse";
    gp.negative_prompt = "blurry qzvlighthouse";
    gp.embedding_dir = EMB_DIR;
    T_CHECK(sdx_generate(m, &gp, &r2) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(r1.latents[0].data, r2.latents[0].data, sdx_tensor_nbytes(&r1.latents[0])), "latents differ");
    sdx_gen_result_free(ctx, &r1);
    sdx_gen_result_free(ctx, &r2);
    gp.embedding_dir = "/nonexistent/embeddings";
    T_CHECK(sdx_generate(m, &gp, &r1) == SDX_ERR_IO && strstr(sdx_last_error(ctx), "/nonexistent/embeddings"), "%s", sdx_last_error(ctx));
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case embedding_cases[] = {
    { "an_embedding_of_a_words_token_rows_conditions_like_the_word", an_embedding_of_a_words_token_rows_conditions_like_the_word },
    { "a_multi_vector_embedding_takes_its_positions_and_moves_to_the_next_chunk", a_multi_vector_embedding_takes_its_positions_and_moves_to_the_next_chunk },
    { "embeddings_of_the_wrong_width_or_layout_are_refused", embeddings_of_the_wrong_width_or_layout_are_refused },
    { "generation_uses_the_embedding_folder", generation_uses_the_embedding_folder },
    { 0, 0 }
};
SDX_TEST_SUITE(embedding, embedding_cases)
