/* Suite "sources": model files from memory and from the host's own I/O
 * (sdx_source). A buffer and read callbacks give what the file gives, bit
 * for bit: a whole generation with every part a model takes (checkpoint,
 * separate VAE, TAESD, vocabulary, LoRA, ControlNet) and the upscaler, in
 * normal and low-memory mode; GGUF tensors and a LoRA on a GGUF model,
 * applied and removed. Callbacks read the header at open and each tensor
 * when it is fetched. Hostile buffers and callbacks (truncated, lying
 * sizes, failing, short or overlong reads) fail cleanly, naming the
 * source. The compiled-in vocabulary (SDX_EMBED_VOCAB) is checked by
 * building and running tests/sources_embed.c. */
#include "test.h"

/* A helper's failure, its message as it wrote it. */
#define TS_TRY(call) do { int r_ = (call); if (r_ != T_PASS) return r_; } while (0)

/* A file's bytes behind a read callback that counts what it gives and
 * can misbehave from byte fail_at on (0: never). */
enum { TS_FAIL = 1, TS_SHORT, TS_MORE };
typedef struct ts_reader {
    const unsigned char *bytes;
    size_t size;                 /* of bytes (the source may claim another) */
    size_t calls, total;         /* reads and bytes given */
    uint64_t fail_at;
    int mode;                    /* TS_FAIL: 0 bytes; TS_SHORT: one fewer; TS_MORE: one more */
} ts_reader;

static size_t ts_read(void *user, uint64_t offset, size_t n, void *dst) {
    ts_reader *r = (ts_reader *)user;
    size_t have = offset < r->size ? SDX__MIN(n, r->size - (size_t)offset) : 0;   /* past the end: short */
    r->calls++;
    if (r->fail_at && offset + n > r->fail_at) return r->mode == TS_FAIL ? 0 : r->mode == TS_SHORT ? n - 1 : n + 1;
    if (have) memcpy(dst, r->bytes + offset, have);
    r->total += have;
    return have;
}

/* One file as a path, a buffer or callbacks. */
typedef struct ts_part {
    const char *path;
    unsigned char *bytes;
    size_t size;
    ts_reader r;
} ts_part;

enum { TS_FILE, TS_DATA, TS_READ };

static int ts_part_load(ts_part *p, const char *path) {
    memset(p, 0, sizeof *p);
    p->path = path;
    p->bytes = t_slurp(path, &p->size);
    p->r.bytes = p->bytes;
    p->r.size = p->size;
    return p->bytes != NULL;
}

static void ts_part_free(ts_part *p) { free(p->bytes); }

static sdx_source ts_source(ts_part *p, int how) {
    sdx_source s;
    memset(&s, 0, sizeof s);
    if (how == TS_FILE) {
        s.path = p->path;
    } else if (how == TS_DATA) {
        s.data = p->bytes;
        s.size = p->size;
    } else {
        s.read = ts_read;
        s.user = &p->r;
        s.size = p->size;
    }
    return s;
}

/* ---- a whole generation ---------------------------------------------- */

typedef struct ts_parts { ts_part ckpt, vae, taesd, vocab, lora, cnet, up; } ts_parts;

static int ts_parts_load(ts_parts *P) {
    const char *ckpt = t_shared("golden/sd1/model.safetensors");
    memset(P, 0, sizeof *P);
    return ckpt && ts_part_load(&P->ckpt, ckpt) && ts_part_load(&P->vae, ckpt) &&
           ts_part_load(&P->taesd, t_shared("golden/taesd/taesd_decoder.safetensors")) &&
           ts_part_load(&P->vocab, t_shared("vocab/bpe_simple_vocab_16e6.txt.gz")) &&
           ts_part_load(&P->lora, t_shared("golden/lora/loras/sd1_kohya_locon.safetensors")) &&
           ts_part_load(&P->cnet, t_shared("golden/controlnet/controlnet.safetensors")) &&
           ts_part_load(&P->up, t_shared("golden/upscale/rrdb_x2.safetensors"));
}

static void ts_parts_free(ts_parts *P) {
    ts_part_free(&P->ckpt); ts_part_free(&P->vae); ts_part_free(&P->taesd); ts_part_free(&P->vocab);
    ts_part_free(&P->lora); ts_part_free(&P->cnet); ts_part_free(&P->up);
}

/* What a generation made, in plain memory. */
typedef struct ts_out { unsigned char *image, *taesd, *up; float *latent; size_t image_n, taesd_n, up_n, latent_n; } ts_out;

static unsigned char *ts_keep(const sdx_image *img, size_t *n) {
    unsigned char *p;
    *n = (size_t)img->width * (size_t)img->height * (size_t)img->channels;
    if ((p = (unsigned char *)malloc(*n ? *n : 1)) != NULL && *n) memcpy(p, img->data, *n);
    return p;
}

static void ts_out_free(ts_out *o) { free(o->image); free(o->taesd); free(o->up); free(o->latent); memset(o, 0, sizeof *o); }

static int ts_same_out(const ts_out *a, const ts_out *b) {
    return a->image_n == b->image_n && !memcmp(a->image, b->image, a->image_n) && a->taesd_n == b->taesd_n &&
           !memcmp(a->taesd, b->taesd, a->taesd_n) && a->up_n == b->up_n && !memcmp(a->up, b->up, a->up_n) &&
           a->latent_n == b->latent_n && !memcmp(a->latent, b->latent, a->latent_n * sizeof(float));
}

/* The generations here: a 64x64 fox, `steps` of Euler at cfg 5, the VAE. */
static sdx_gen_params ts_params(int steps, int64_t seed) {
    sdx_gen_params gp;
    memset(&gp, 0, sizeof gp);
    gp.prompt = "a red fox in the snow";
    gp.negative_prompt = "blurry";
    gp.width = gp.height = 64;
    gp.steps = steps;
    gp.cfg_scale = 5;
    gp.sampler = "euler";
    gp.seed = seed;
    gp.codec = SDX_CODEC_VAE;
    return gp;
}

/* Every part from files (through the path fields, as before sources
 * existed) or from `how`: a LoRA and a ControlNet on, the VAE's image,
 * the same latent through TAESD, and the image upscaled. */
static int ts_generate(ts_parts *P, int how, int low_memory, ts_out *o) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_desc md;
    sdx_model *m = NULL;
    sdx_controlnet *cn = NULL;
    sdx_upscaler *up = NULL;
    sdx_source lora = ts_source(&P->lora, how), cnet = ts_source(&P->cnet, how), ups = ts_source(&P->up, how);
    sdx_gen_params gp, tp;
    sdx_gen_result res;
    sdx_control c;
    sdx_image hint = { 64, 64, 3, NULL }, img;
    static unsigned char hint_px[64 * 64 * 3];
    memset(o, 0, sizeof *o);
    memset(&md, 0, sizeof md);
    md.low_memory = low_memory;
    if (how == TS_FILE) {
        md.checkpoint = P->ckpt.path;
        md.vae = P->vae.path;
        md.taesd[0] = P->taesd.path;
        md.vocab = P->vocab.path;
    } else {
        md.checkpoint_source = ts_source(&P->ckpt, how);
        md.vae_source = ts_source(&P->vae, how);
        md.taesd_source[0] = ts_source(&P->taesd, how);
        md.vocab_source = ts_source(&P->vocab, how);
    }
    T_CHECK(sdx_model_load(ctx, &md, &m) == SDX_OK, "load: %s", sdx_last_error(ctx));
    T_CHECK(sdx_model_apply_lora_source(m, &lora, 0.8f, 0.6f) == SDX_OK, "LoRA: %s", sdx_last_error(ctx));
    T_CHECK(sdx_controlnet_load_source(m, &cnet, &cn) == SDX_OK, "ControlNet: %s", sdx_last_error(ctx));
    for (int i = 0; i < 64 * 64 * 3; i++) hint_px[i] = (unsigned char)(((i / 3) % 64 / 8 + (i / 3) / 64 / 8) % 2 ? 255 : 0);
    hint.data = hint_px;
    memset(&c, 0, sizeof c);
    c.net = cn;
    c.image = &hint;
    c.strength = 1;
    gp = ts_params(3, 42);
    gp.controls = &c;
    gp.n_controls = 1;
    T_CHECK(sdx_generate(m, &gp, &res) == SDX_OK, "generate: %s", sdx_last_error(ctx));
    o->image = ts_keep(&res.images[0], &o->image_n);
    o->latent_n = (size_t)sdx_tensor_numel(&res.latents[0]);
    if ((o->latent = (float *)malloc(o->latent_n * sizeof(float))) != NULL)
        memcpy(o->latent, res.latents[0].data, o->latent_n * sizeof(float));
    memset(&tp, 0, sizeof tp);
    tp.codec = SDX_CODEC_TAESD;
    T_CHECK(sdx_decode_latent(m, &res.latents[0], &tp, &img) == SDX_OK, "TAESD: %s", sdx_last_error(ctx));
    o->taesd = ts_keep(&img, &o->taesd_n);
    sdx_image_free(ctx, &img);
    T_CHECK(sdx_upscaler_load_source(ctx, &ups, &up) == SDX_OK, "upscaler: %s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &res.images[0], 1, &img) == SDX_OK, "upscale: %s", sdx_last_error(ctx));
    o->up = ts_keep(&img, &o->up_n);
    sdx_image_free(ctx, &img);
    sdx_upscaler_free(up);
    sdx_gen_result_free(ctx, &res);
    sdx_controlnet_free(cn);
    sdx_model_free(m);
    sdx_destroy(ctx);
    T_CHECK(o->image && o->latent && o->taesd && o->up, "out of memory");
    return T_PASS;
}

static int buffers_and_callbacks_generate_what_the_files_do(void) {
    static const char *const names[] = { "files", "buffers", "callbacks" };
    ts_parts P;
    ts_out want, got;
    int ok = ts_parts_load(&P);
    if (!ok) ts_parts_free(&P);
    T_SKIP_IF(!ok, "golden data under %s not found (sd1, taesd, vocab, lora, controlnet, upscale)", t_shared_dir());
    for (int low = 0; low < 2; low++) {
        TS_TRY(ts_generate(&P, TS_FILE, low, &want));
        for (int how = TS_DATA; how <= TS_READ; how++) {
            ts_part *each[] = { &P.ckpt, &P.vae, &P.taesd, &P.vocab, &P.lora, &P.cnet, &P.up };
            static const int gives_back[] = { 1, 1, 1, 0, 0, 1, 0 };
            for (int i = 0; i < 7; i++) each[i]->r.calls = each[i]->r.total = 0;
            T_NOTE("%s%s", names[how], low ? ", low memory" : "");
            TS_TRY(ts_generate(&P, how, low, &got));
            T_CHECK(ts_same_out(&got, &want), "%s%s: not the files' bits", names[how], low ? ", low memory" : "");
            ts_out_free(&got);
            /* callbacks: each byte read once at most (weights viewed in
             * place stay; in low-memory mode the model's own parts give
             * theirs back and read them again, as in the next case), the
             * whole LoRA and vocabulary, in pieces */
            for (int i = 0; how == TS_READ && i < 7; i++)
                T_CHECK((low && gives_back[i]) || each[i]->r.total <= each[i]->size, "part %d: %zu bytes of a %zu-byte file", i,
                        each[i]->r.total, each[i]->size);
            for (int i = 0; how == TS_READ && i < 7; i++)
                T_CHECK(each[i]->r.calls >= 1, "part %d: %zu reads", i, each[i]->r.calls);
            T_CHECK(how != TS_READ || (P.lora.r.total == P.lora.size && P.vocab.r.total == P.vocab.size), "LoRA, vocabulary read whole");
            T_CHECK(how != TS_READ || P.ckpt.r.calls > 100, "checkpoint in %zu reads", P.ckpt.r.calls);
        }
        ts_out_free(&want);
    }
    ts_parts_free(&P);
    return T_PASS;
}

/* ---- low-memory mode from callbacks ------------------------------------- */

/* Bytes a staged generation read through `r` (NULL: a file) in each call:
 * three encodes, each of four steps, three decodes. The final latent and
 * the first decoded image go to the caller. */
enum { TS_ENC = 0, TS_STEP = 3, TS_DEC = 7, TS_CALLS = 10 };
static int ts_stages(sdx_ctx *ctx, sdx_model *m, const ts_reader *r, size_t *got, float *latent, size_t latent_n,
                     sdx_image *img) {
    sdx_gen_params gp = ts_params(4, 7);
    sdx_cond *cond[3] = { NULL, NULL, NULL };
    sdx_sampling *s = NULL;
    sdx_image more[2];
    int rc = SDX_OK, i;
    size_t before = r ? r->total : 0;
    memset(img, 0, sizeof *img);
    memset(more, 0, sizeof more);
    for (i = 0; i < TS_CALLS && rc == SDX_OK; i++) {
        if (i < TS_STEP) rc = sdx_encode_prompt(m, &gp, &cond[i]);
        else if (i == TS_STEP && (rc = sdx_sampling_begin(m, &gp, cond[0], 0, &s)) != SDX_OK) break;
        if (i >= TS_STEP && i < TS_DEC) rc = sdx_sampling_step(s);
        if (i >= TS_DEC) rc = sdx_decode_latent(m, sdx_sampling_latent(s), &gp, i == TS_DEC ? img : &more[i - TS_DEC - 1]);
        got[i] = (r ? r->total : 0) - before;
        before = r ? r->total : 0;
    }
    if (rc == SDX_OK) memcpy(latent, sdx_sampling_latent(s)->data, latent_n * sizeof(float));
    for (int k = 0; k < 2; k++) sdx_image_free(ctx, &more[k]);
    sdx_sampling_free(s);
    for (int k = 0; k < 3; k++) sdx_cond_free(cond[k]);
    T_CHECK(rc == SDX_OK, "call %d: %s", i - 1, sdx_last_error(ctx));
    return T_PASS;
}

/* In low-memory mode a checkpoint from read callbacks (safetensors, or
 * GGUF, whose quantized matrices compute from the read blocks) gives its
 * weights back as a mapped file gives its pages (each UNet and
 * text-encoder layer after it runs, each stage's weights after the stage)
 * and reads them again at their next use: from the second on, every
 * encode, step and decode reads the same bytes again (the first uses what
 * the load read), where a model in normal mode reads each weight once, at
 * load. The latent and image are the file's bits in low-memory mode. A
 * read that fails then fails the call cleanly, and the next call reads
 * again. (A buffer is the caller's memory: there is nothing to give back.) */
static int ts_low_memory(const char *ckpt) {
    sdx_ctx *ctx = t_ctx();
    sdx_model_desc md;
    sdx_model *m;
    sdx_image img[2];
    sdx_cond *cond = NULL;
    sdx_gen_params gp;
    float latent[2][4 * 8 * 8];
    size_t file[TS_CALLS], low[TS_CALLS], normal[TS_CALLS];
    ts_part p;
    T_CHECK(ts_part_load(&p, ckpt), "%s unreadable", ckpt);
    memset(&md, 0, sizeof md);
    md.low_memory = 1;
    md.checkpoint = ckpt;
    T_CHECK((m = t_model_with(ctx, &md)) != NULL, "file: %s", sdx_last_error(ctx));
    TS_TRY(ts_stages(ctx, m, NULL, file, latent[0], 4 * 8 * 8, &img[0]));
    sdx_model_free(m);

    md.checkpoint = NULL;
    md.checkpoint_source = ts_source(&p, TS_READ);
    T_CHECK((m = t_model_with(ctx, &md)) != NULL, "callbacks: %s", sdx_last_error(ctx));
    TS_TRY(ts_stages(ctx, m, &p.r, low, latent[1], 4 * 8 * 8, &img[1]));
    T_NOTE("%s: bytes read: encodes %zu %zu %zu, steps %zu %zu %zu %zu, decodes %zu %zu %zu (a %zu-byte file)", ckpt, low[0], low[1],
           low[2], low[3], low[4], low[5], low[6], low[7], low[8], low[9], p.size);
    T_CHECK(!memcmp(latent[0], latent[1], sizeof latent[0]), "the latent is not the file's");
    T_CHECK(img[0].width == img[1].width && img[0].height == img[1].height &&
            !memcmp(img[0].data, img[1].data, (size_t)img[0].width * (size_t)img[0].height * 3), "the image is not the file's");
    T_CHECK(low[TS_ENC + 1] > 0 && low[TS_ENC + 2] == low[TS_ENC + 1] && low[TS_ENC] <= low[TS_ENC + 1], "encodes read %zu, %zu, %zu bytes",
            low[TS_ENC], low[TS_ENC + 1], low[TS_ENC + 2]);
    for (int i = TS_STEP + 2; i < TS_DEC; i++)
        T_CHECK(low[TS_STEP + 1] > 0 && low[i] == low[TS_STEP + 1] && low[TS_STEP] <= low[i], "step %d read %zu bytes, step 2 %zu",
                i - TS_STEP + 1, low[i], low[TS_STEP + 1]);
    T_CHECK(low[TS_DEC + 1] > 0 && low[TS_DEC + 2] == low[TS_DEC + 1], "decodes read %zu, %zu, %zu bytes", low[TS_DEC],
            low[TS_DEC + 1], low[TS_DEC + 2]);
    /* each stage reads its own weights, once */
    T_CHECK(low[TS_ENC + 1] + low[TS_STEP + 1] + low[TS_DEC + 1] <= p.size, "a stage read some bytes twice");
    /* a read that fails now fails the encode, which works once reads do */
    memset(&gp, 0, sizeof gp);
    gp.prompt = "a fox";
    p.r.fail_at = 1;
    p.r.mode = TS_FAIL;
    T_CHECK(sdx_encode_prompt(m, &gp, &cond) == SDX_ERR_IO && !cond, "a failing read did not fail the encode");
    T_CHECK(strstr(sdx_last_error(ctx), "read callback"), "message: %s", sdx_last_error(ctx));
    p.r.fail_at = 0;
    T_CHECK(sdx_encode_prompt(m, &gp, &cond) == SDX_OK, "after the failure: %s", sdx_last_error(ctx));
    sdx_cond_free(cond);
    sdx_model_free(m);
    for (int i = 0; i < 2; i++) sdx_image_free(ctx, &img[i]);

    md.low_memory = 0;
    T_CHECK((m = t_model_with(ctx, &md)) != NULL, "callbacks, normal mode: %s", sdx_last_error(ctx));
    TS_TRY(ts_stages(ctx, m, &p.r, normal, latent[1], 4 * 8 * 8, &img[1]));
    for (int i = 0; i < TS_CALLS; i++) T_CHECK(normal[i] == 0, "normal mode: call %d read %zu bytes", i, normal[i]);
    sdx_image_free(ctx, &img[1]);
    sdx_model_free(m);
    ts_part_free(&p);
    sdx_destroy(ctx);
    return T_PASS;
}

static int low_memory_reads_weights_again_at_each_stage_from_callbacks(void) {
    T_NEED_SHARED(st, "golden/sd1/model.safetensors");
    T_NEED_SHARED(gguf, "golden/gguf/sd1-q8_0.gguf");
    TS_TRY(ts_low_memory(st));
    TS_TRY(ts_low_memory(gguf));   /* its quantized matrices compute from the read blocks */
    return T_PASS;
}

/* Latents of generations with LoRAs put on and taken off between them,
 * each after the last gave the weights back in low-memory mode: a merge
 * and a reset read the checkpoint's values again (from callbacks, through
 * them) and must find the file's. */
static int ts_lora_latents(sdx_ctx *ctx, sdx_model *m, const char *lora, float (*latent)[4 * 8 * 8]) {
    sdx_gen_params gp = ts_params(2, 11);
    for (int i = 0; i < 4; i++) {
        sdx_gen_result res;
        int rc = i == 1 ? sdx_model_apply_lora(m, lora, 0.8f, 0.6f)        /* patched from the file's values */
               : i == 2 ? sdx_model_apply_lora(m, lora, -0.3f, 0.5f)       /* merged on the first */
               : i == 3 ? sdx_model_clear_loras(m)                         /* the file's values again */
                        : SDX_OK;
        T_CHECK(rc == SDX_OK, "LoRA %d: %s", i, sdx_last_error(ctx));
        T_CHECK(sdx_generate(m, &gp, &res) == SDX_OK, "generation %d: %s", i, sdx_last_error(ctx));
        memcpy(latent[i], res.latents[0].data, sizeof latent[i]);
        sdx_gen_result_free(ctx, &res);
    }
    return T_PASS;
}

static int low_memory_loras_from_callbacks_merge_the_files_values(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(lora, "golden/lora/loras/sd1_kohya_locon.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_model_desc md;
    sdx_model *m;
    float latent[2][4][4 * 8 * 8];
    ts_part p;
    T_CHECK(ts_part_load(&p, ckpt), "%s unreadable", ckpt);
    for (int how = 0; how < 2; how++) {
        memset(&md, 0, sizeof md);
        md.low_memory = 1;
        if (how) md.checkpoint_source = ts_source(&p, TS_READ);
        else md.checkpoint = ckpt;
        T_CHECK((m = t_model_with(ctx, &md)) != NULL, "%s", sdx_last_error(ctx));
        TS_TRY(ts_lora_latents(ctx, m, lora, latent[how]));
        sdx_model_free(m);
    }
    for (int i = 0; i < 4; i++) T_CHECK(!memcmp(latent[0][i], latent[1][i], sizeof latent[0][i]), "generation %d differs", i);
    T_CHECK(memcmp(latent[0][0], latent[0][1], sizeof latent[0][0]) && !memcmp(latent[0][0], latent[0][3], sizeof latent[0][0]),
            "the LoRA changed nothing, or clearing it did not restore the model");
    ts_part_free(&p);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- what callbacks read ------------------------------------------------ */

/* Every tensor of `path` read through callbacks is the file's, and the
 * open read at most `header_max` bytes. */
static int ts_tensors_match(sdx_ctx *ctx, const char *path, size_t header_max) {
    ts_part p;
    sdx_st *file = NULL, *cb = NULL;
    sdx_source s;
    T_CHECK(ts_part_load(&p, path), "%s: unreadable", path);
    s = ts_source(&p, TS_READ);
    T_CHECK(sdx_st_open(ctx, path, &file) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open_source(ctx, &s, &cb) == SDX_OK, "%s", sdx_last_error(ctx));
    T_NOTE("%s: open read %zu of %zu bytes in %zu reads", path, p.r.total, p.size, p.r.calls);
    T_CHECK(p.r.total <= header_max && p.r.total < p.size, "%s: the open read %zu bytes", path, p.r.total);
    T_CHECK(sdx_st_count(cb) == sdx_st_count(file) && sdx_st_meta_count(cb) == sdx_st_meta_count(file), "%s: the tables differ", path);
    for (int i = 0; i < sdx_st_count(file); i++) {
        const sdx_tensor *t = sdx_st_get(file, i);
        sdx_tensor a, b;
        T_CHECK(sdx_st_read_f32(ctx, file, t->name, &a) == SDX_OK && sdx_st_read_f32(ctx, cb, t->name, &b) == SDX_OK, "%s",
                sdx_last_error(ctx));
        T_CHECK(sdx_tensor_numel(&a) == sdx_tensor_numel(&b) && !memcmp(a.data, b.data, sdx_tensor_nbytes(&a)), "%s: '%s' differs",
                path, t->name);
        sdx_tensor_free(ctx, &a);
        sdx_tensor_free(ctx, &b);
    }
    /* each read forgot its bytes: a second pass reads them again */
    T_CHECK(sdx_st_scan_nonfinite(ctx, cb, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_st_close(file);
    sdx_st_close(cb);
    ts_part_free(&p);
    return T_PASS;
}

static int callbacks_read_the_header_then_each_tensor(void) {
    T_NEED_SHARED(st, "golden/sd1/model.safetensors");
    T_NEED_SHARED(gguf, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(gguf_mixed, "golden/gguf/sdxl-mixed.gguf");
    sdx_ctx *ctx = t_ctx();
    uint64_t hlen = 0;
    ts_part p;
    T_CHECK(ts_part_load(&p, st), "%s", st);
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | p.bytes[i];
    ts_part_free(&p);
    TS_TRY(ts_tensors_match(ctx, st, 8 + (size_t)hlen));   /* exactly the header */
    TS_TRY(ts_tensors_match(ctx, gguf, (size_t)1 << 20));
    TS_TRY(ts_tensors_match(ctx, gguf_mixed, (size_t)1 << 20));
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- LoRA on a GGUF model from callbacks --------------------------------- */

static int ts_same_wset(const sdx__wset *a, const sdx__wset *b) {
    if (a->n_slots != b->n_slots) return 0;
    for (int i = 0; i < a->n_slots; i++) {
        const sdx_tensor *x = &a->slots[i]->t, *y = &b->slots[i]->t;
        if (x->dtype != y->dtype || sdx_tensor_nbytes(x) != sdx_tensor_nbytes(y) || memcmp(x->data, y->data, sdx_tensor_nbytes(x)))
            return 0;
    }
    return 1;
}

static int ts_same_weights(const sdx_model *a, const sdx_model *b) {
    int same = a->te.n_enc == b->te.n_enc && ts_same_wset(&a->unet.w, &b->unet.w) && ts_same_wset(&a->vae.w, &b->vae.w);
    for (int i = 0; same && i < a->te.n_enc; i++) same = ts_same_wset(&a->te.enc[i].w, &b->te.enc[i].w);
    return same;
}

/* A GGUF from callbacks: its quantized matrices stay as the read bytes
 * (the kernels take the blocks), the weights dequantized at load drop
 * theirs once copied and are read again if a LoRA patches them. Either
 * way the merge and its removal match the file's. */
static int lora_on_a_gguf_model_from_callbacks(void) {
    T_NEED_SHARED(gguf, "golden/gguf/sd1-q8_0.gguf");
    T_NEED_SHARED(lora_path, "golden/lora/loras/sd1_kohya_locon.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_model_desc md;
    sdx_model *file, *cb;
    sdx_source s;
    ts_part ck, lo;
    size_t loaded;
    (void)v;
    T_CHECK(ts_part_load(&ck, gguf) && ts_part_load(&lo, lora_path), "unreadable");
    memset(&md, 0, sizeof md);
    md.checkpoint = gguf;
    T_CHECK((file = t_model_with(ctx, &md)) != NULL, "%s", sdx_last_error(ctx));
    memset(&md, 0, sizeof md);
    md.checkpoint_source = ts_source(&ck, TS_READ);
    T_CHECK((cb = t_model_with(ctx, &md)) != NULL, "%s", sdx_last_error(ctx));
    T_CHECK(ts_same_weights(file, cb), "loaded weights differ");
    loaded = ck.r.total;
    T_NOTE("load read %zu of %zu bytes", loaded, ck.size);
    /* each tensor once; the header's last read may reach into one */
    T_CHECK(loaded <= ck.size + ((size_t)128 << 10), "load read %zu bytes of %zu", loaded, ck.size);
    T_CHECK(sdx_model_apply_lora(file, lora_path, 0.7f, 0.9f) == SDX_OK, "%s", sdx_last_error(ctx));
    s = ts_source(&lo, TS_READ);
    T_CHECK(sdx_model_apply_lora_source(cb, &s, 0.7f, 0.9f) == SDX_OK, "%s", sdx_last_error(ctx));
    T_NOTE("the merge read %zu bytes again", ck.r.total - loaded);
    T_CHECK(!strcmp(file->loras[0].hash, cb->loras[0].hash), "LoRA hash %s, from the file %s", cb->loras[0].hash, file->loras[0].hash);
    T_CHECK(ts_same_weights(file, cb), "patched weights differ");
    T_CHECK(sdx_model_clear_loras(file) == SDX_OK && sdx_model_clear_loras(cb) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(ts_same_weights(file, cb), "restored weights differ");
    s = ts_source(&lo, TS_DATA);
    T_CHECK(sdx_model_apply_lora(file, lora_path, -0.5f, 0.25f) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_apply_lora_source(cb, &s, -0.5f, 0.25f) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(ts_same_weights(file, cb), "patched weights differ (LoRA from a buffer)");
    sdx_model_free(file);
    sdx_model_free(cb);
    ts_part_free(&ck);
    ts_part_free(&lo);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Saving reads every tensor: from callbacks the same file as from the
 * checkpoint's path (a LoRA merged in; no vocabulary). */
static int saving_a_model_from_callbacks(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(lora_path, "golden/lora/loras/sd1_kohya_small_bf16.safetensors");
    const char *out[2] = { t_tmp("sdx_t_sources_save_file.safetensors"), t_tmp("sdx_t_sources_save_cb.safetensors") };
    sdx_ctx *ctx = t_ctx();
    ts_part p, l;
    unsigned char *a, *b;
    size_t na, nb;
    T_CHECK(ts_part_load(&p, ckpt) && ts_part_load(&l, lora_path), "unreadable");
    for (int i = 0; i < 2; i++) {
        sdx_model_desc md;
        sdx_model *m = NULL;
        sdx_source s = ts_source(&l, i ? TS_READ : TS_FILE);
        memset(&md, 0, sizeof md);
        md.no_vocab = 1;
        md.checkpoint_source = ts_source(&p, i ? TS_READ : TS_FILE);
        T_CHECK(sdx_model_load(ctx, &md, &m) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_model_apply_lora_source(m, &s, 0.5f, 0.5f) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_model_save(m, out[i]) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx_model_free(m);
    }
    a = t_slurp(out[0], &na);
    b = t_slurp(out[1], &nb);
    T_CHECK(a && b && na == nb && !memcmp(a, b, na), "the saved files differ");
    free(a);
    free(b);
    remove(out[0]);
    remove(out[1]);
    ts_part_free(&p);
    ts_part_free(&l);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- hostile sources ------------------------------------------------------- */

/* The call fails with the code of a bad file, bad arguments or no
 * memory, and its message says `says` (NULL: anything). */
static int ts_says(sdx_ctx *ctx, const char *says) { return !says || strstr(sdx_last_error(ctx), says); }
#define TS_FAILS(call, says) do { \
    int rc_ = (call); \
    T_CHECK(rc_ == SDX_ERR_FORMAT || rc_ == SDX_ERR_IO || rc_ == SDX_ERR_INVALID_ARG || rc_ == SDX_ERR_NOMEM, "%s: rc %d (%s)", #call, rc_, sdx_last_error(ctx)); \
    T_CHECK(ts_says(ctx, says), "%s: '%s' does not say what it should", #call, sdx_last_error(ctx)); \
} while (0)

/* The file p as a buffer and through callbacks that claim `cuts[i]`
 * bytes: each fails to open. */
static int ts_cut_files(sdx_ctx *ctx, ts_part *p, const size_t *cuts, int n_cuts) {
    for (int i = 0; i < n_cuts; i++)
        for (int how = TS_DATA; how <= TS_READ; how++) {
            sdx_source s = ts_source(p, how);
            sdx_st *st = (sdx_st *)&s;
            if (how == TS_DATA && cuts[i] > p->size) continue;   /* a buffer is taken at its word */
            s.size = cuts[i];
            s.name = "hostile.model";
            TS_FAILS(sdx_st_open_source(ctx, &s, &st), "hostile.model");
            T_CHECK(st == NULL, "%s cut at %zu: an sdx_st", p->path, cuts[i]);
        }
    return T_PASS;
}

/* Where tensor `name` of the file image p starts. */
static uint64_t ts_offset(sdx_ctx *ctx, const ts_part *p, const char *name) {
    sdx_st *st = NULL;
    const sdx_tensor *t;
    uint64_t at = 0;
    if (sdx_st_open_memory(ctx, p->bytes, p->size, p->path, &st) == SDX_OK && (t = sdx_st_find(st, name)) != NULL)
        at = (uint64_t)((const unsigned char *)t->data - p->bytes);
    sdx_st_close(st);
    return at;
}

static int hostile_sources_fail_cleanly(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(gguf, "golden/gguf/sd1-slice32-f16.gguf");
    T_NEED_SHARED(gz, "vocab/bpe_simple_vocab_16e6.txt.gz");
    T_NEED_SHARED(up_path, "golden/upscale/rrdb_x2.safetensors");
    T_NEED_SHARED(cn_path, "golden/controlnet/controlnet.safetensors");
    T_NEED_SHARED(lora_path, "golden/lora/loras/sd1_kohya_locon.safetensors");
    static const int modes[] = { TS_FAIL, TS_SHORT, TS_MORE };
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx_source s;
    sdx_model_desc md;
    sdx_model *m = NULL;
    sdx_tokenizer *tok = NULL;
    sdx_upscaler *up = NULL;
    sdx_controlnet *cn = NULL;
    ts_part p, g, v, u, c, l;
    uint64_t hlen = 0, unet_at, vae_at;
    T_CHECK(ts_part_load(&p, ckpt) && ts_part_load(&g, gguf) && ts_part_load(&v, gz) && ts_part_load(&u, up_path) &&
            ts_part_load(&c, cn_path) && ts_part_load(&l, lora_path), "unreadable golden data");
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | p.bytes[i];
    unet_at = ts_offset(ctx, &p, "model.diffusion_model.out.2.weight");
    vae_at = ts_offset(ctx, &p, "first_stage_model.decoder.conv_out.weight");
    T_CHECK(unet_at && vae_at, "the weights the load is to fail at are not in %s", ckpt);

    /* none, two ways, no source */
    memset(&s, 0, sizeof s);
    TS_FAILS(sdx_st_open_source(ctx, &s, &st), "exactly one of path, data or read");
    s = ts_source(&p, TS_READ);
    s.path = ckpt;
    TS_FAILS(sdx_st_open_source(ctx, &s, &st), "exactly one");
    TS_FAILS(sdx_st_open_source(ctx, NULL, &st), "exactly one");
    T_CHECK(st == NULL, "an sdx_st");
    memset(&md, 0, sizeof md);
    md.checkpoint = ckpt;
    md.checkpoint_source = ts_source(&p, TS_DATA);
    TS_FAILS(sdx_model_load(ctx, &md, &m), "both checkpoint and checkpoint_source");

    /* truncated, and sizes that lie (callbacks claiming more than there is) */
    {
        const size_t h = 8 + (size_t)hlen;
        const size_t cuts[] = { 0, 3, 7, 8, 9, 100, h - 1, h, h + 1, p.size / 2, p.size - 1, p.size + 1, p.size + 4096 };
        const size_t gcuts[] = { 0, 3, 4, 23, 24, 25, 100, 1000, 20000, g.size / 2, g.size - 40 };
        TS_TRY(ts_cut_files(ctx, &p, cuts, (int)SDX__ARRAY_LEN(cuts)));
        TS_TRY(ts_cut_files(ctx, &g, gcuts, (int)SDX__ARRAY_LEN(gcuts)));
    }
    /* a size no address space holds */
    s = ts_source(&p, TS_READ);
    s.size = SIZE_MAX / 2;
    TS_FAILS(sdx_st_open_source(ctx, &s, &st), NULL);

    /* callbacks that fail, come up short or claim more: in the header,
     * then at a weight's fetch (the model load fails, nothing leaks) */
    for (int k = 0; k < (int)SDX__ARRAY_LEN(modes); k++) {
        p.r.mode = modes[k];
        p.r.fail_at = 1;
        s = ts_source(&p, TS_READ);
        TS_FAILS(sdx_st_open_source(ctx, &s, &st), "read callback");
        p.r.fail_at = 8 + hlen + 1;
        T_CHECK(sdx_st_open_source(ctx, &s, &st) == SDX_OK, "header only: %s", sdx_last_error(ctx));
        sdx_st_close(st);
        st = NULL;
        memset(&md, 0, sizeof md);
        md.checkpoint_source = s;
        md.vocab = gz;
        p.r.fail_at = unet_at + 1;
        TS_FAILS(sdx_model_load(ctx, &md, &m), "read callback");
        T_CHECK(m == NULL, "a model");
        p.r.fail_at = vae_at + 1;
        md.checkpoint_source.name = "pack.bin";
        md.low_memory = 1;
        TS_FAILS(sdx_model_load(ctx, &md, &m), "pack.bin");
        T_CHECK(m == NULL, "a model");
        p.r.fail_at = 0;

        /* the vocabulary, an upscaler, a ControlNet and a LoRA pass it on */
        v.r.mode = u.r.mode = c.r.mode = l.r.mode = modes[k];
        v.r.fail_at = v.size / 2;
        u.r.fail_at = u.size - 1;
        c.r.fail_at = c.size - 1;
        l.r.fail_at = l.size - 1;
        s = ts_source(&v, TS_READ);
        TS_FAILS(sdx_tokenizer_load_source(ctx, &s, &tok), "read callback");
        s = ts_source(&u, TS_READ);
        TS_FAILS(sdx_upscaler_load_source(ctx, &s, &up), "read callback");
        T_CHECK(!tok && !up, "a tokenizer or an upscaler");
    }
    T_CHECK((m = t_model(ctx, "sd1")) != NULL, "%s", sdx_last_error(ctx));
    for (int k = 0; k < (int)SDX__ARRAY_LEN(modes); k++) {
        c.r.mode = l.r.mode = modes[k];
        s = ts_source(&c, TS_READ);
        TS_FAILS(sdx_controlnet_load_source(m, &s, &cn), "read callback");
        s = ts_source(&l, TS_READ);
        TS_FAILS(sdx_model_apply_lora_source(m, &s, 1, 1), "read callback");
        T_CHECK(!cn && sdx_model_lora_count(m) == 0, "a ControlNet or a LoRA");
    }
    /* cut buffers for them */
    s = ts_source(&v, TS_DATA);
    s.size = v.size / 2;
    TS_FAILS(sdx_tokenizer_load_source(ctx, &s, &tok), NULL);
    s = ts_source(&v, TS_READ);
    s.size = (size_t)300 << 20;
    TS_FAILS(sdx_tokenizer_load_source(ctx, &s, &tok), "(read callback)");
    s = ts_source(&u, TS_DATA);
    s.size = u.size - 5;
    TS_FAILS(sdx_upscaler_load_source(ctx, &s, &up), "an upscaler is read from");
    s = ts_source(&l, TS_DATA);
    s.size = 100;
    TS_FAILS(sdx_model_apply_lora_source(m, &s, 1, 1), "(memory)");
    s = ts_source(&c, TS_DATA);
    s.size = c.size - 1;
    TS_FAILS(sdx_controlnet_load_source(m, &s, &cn), "(memory)");
    T_CHECK(!tok && !up && !cn && sdx_model_lora_count(m) == 0, "something loaded");
    sdx_model_free(m);
    ts_part_free(&p); ts_part_free(&g); ts_part_free(&v); ts_part_free(&u); ts_part_free(&c); ts_part_free(&l);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- the compiled-in vocabulary ------------------------------------------ */

static int compiled_in_vocabulary_tokenizes_as_the_file(void) {
    T_NEED_SHARED(gz, "vocab/bpe_simple_vocab_16e6.txt.gz");
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    static char out[8192], cmd[4096];
    const char *cc = getenv("CC");
    const char *vocab_h = t_tmp("sdx_t_sources/clip_vocab.h"), *embed = t_tmp("sdx_t_sources/embed");
    sdx_ctx *ctx = t_ctx();
    sdx_tokenizer *tok = NULL;
    /* this build has none: a clear error */
    T_CHECK(sdx_tokenizer_load_embedded(ctx, &tok) == SDX_ERR_UNSUPPORTED && !tok && strstr(sdx_last_error(ctx), "SDX_EMBED_VOCAB"),
            "%s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    T_SKIP_IF(T_WINDOWS, "builds a program through a POSIX shell");
    T_SKIP_IF(!t_file_exists("tools/sdx-vocab2c") || !t_file_exists("tests/sources_embed.c"),
              "tools/sdx-vocab2c not built (make all) or not in the repository root");
    t_mkdir(t_tmp("sdx_t_sources"));
    snprintf(cmd, sizeof cmd,
             "tools/sdx-vocab2c %s > '%s' && "
             "%s -std=c11 -O0 -Wall -Wextra -Werror -I. -DSDX_EMBED_VOCAB='\"%s\"' -o '%s' "
             "tests/sources_embed.c -lm -lpthread && '%s' %s %s 2>&1",
             gz, vocab_h, cc && *cc ? cc : "cc", vocab_h, embed, embed, gz, ckpt);
    T_CHECK(t_shell(cmd, out, sizeof out) == 0 && strstr(out, "same tokens, same image"), "%s", out);
    remove(vocab_h);
    remove(embed);
    return T_PASS;
}

static const t_case t_sources_cases[] = {
    { "buffers_and_callbacks_generate_what_the_files_do", buffers_and_callbacks_generate_what_the_files_do },
    { "low_memory_reads_weights_again_at_each_stage_from_callbacks", low_memory_reads_weights_again_at_each_stage_from_callbacks },
    { "low_memory_loras_from_callbacks_merge_the_files_values", low_memory_loras_from_callbacks_merge_the_files_values },
    { "callbacks_read_the_header_then_each_tensor", callbacks_read_the_header_then_each_tensor },
    { "lora_on_a_gguf_model_from_callbacks", lora_on_a_gguf_model_from_callbacks },
    { "saving_a_model_from_callbacks", saving_a_model_from_callbacks },
    { "hostile_sources_fail_cleanly", hostile_sources_fail_cleanly },
    { "compiled_in_vocabulary_tokenizes_as_the_file", compiled_in_vocabulary_tokenizes_as_the_file },
    { NULL, NULL }
};

SDX_TEST_SUITE(sources, t_sources_cases)
