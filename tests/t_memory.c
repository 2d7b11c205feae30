/* Suite "memory": peak RSS is measured, stages give their weight pages
 * back without changing any result, the low-memory mode changes memory
 * and nothing else, and forward passes stop allocating after the first. */
#include "test.h"

#if !defined(_WIN32)
#include <limits.h>
#endif

static sdx_model *tm_model(sdx_ctx *ctx, const char *area, int low_memory) {
    sdx_model_desc md;
    t_golden_desc(&md, area);
    md.low_memory = low_memory;
    return t_model_with(ctx, &md);
}

static void tm_params(sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = "a lighthouse at dusk, (waves:1.3)";
    p->negative_prompt = "blurry";
    p->width = 64;
    p->height = 48;
    p->steps = 3;
    p->seed = 11;
    p->sampler = "euler_ancestral";
    p->rng = SDX_RNG_CPU;
}

/* Resident KiB of the process's mappings of `path` (Linux: the Rss lines
 * of /proc/self/smaps under each mapping of that file), or -1 when that
 * cannot be read here. With `base`, only the mapping starting there: one
 * model's own, whatever else maps the same file. */
static long tm_mapped_kib_at(const char *path, const void *base) {
#if defined(__linux__)
    char real[PATH_MAX], line[PATH_MAX + 256];
    long total = 0;
    int inside = 0;
    FILE *f;
    if (!realpath(path, real) || !(f = fopen("/proc/self/smaps", "r"))) return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        long kib;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {   /* a mapping's header; its path, if any, ends the line */
            const char *slash = strchr(line, '/');
            inside = slash && !strcmp(slash, real) && (!base || lo == (unsigned long)(uintptr_t)base);
        } else if (inside && sscanf(line, "Rss: %ld kB", &kib) == 1) {
            total += kib;
        }
    }
    fclose(f);
    return total;
#else
    (void)path; (void)base;
    return -1;
#endif
}

static long tm_mapped_kib(const char *path) { return tm_mapped_kib_at(path, NULL); }

static size_t tm_file_bytes(const char *path) {
    FILE *f = fopen(path, "rb");
    long n;
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fclose(f);
    return n > 0 ? (size_t)n : 0;
}

/* sdx_peak_rss is the process's high-water mark: plausible, and it rises
 * past memory the process touches. Linux must report it; elsewhere 0
 * means unknown and the case skips. */
static int peak_rss_is_measured_and_rises_with_use(void) {
    size_t before = sdx_peak_rss(), after, big = (size_t)96 << 20;
    unsigned char *p;
#if defined(__linux__)
    T_CHECK(before > 0, "sdx_peak_rss() is 0 on Linux");
#endif
    T_SKIP_IF(before == 0, "peak RSS is unknown on this system");
    T_CHECK(before > ((size_t)1 << 20) && before < ((size_t)1 << 40), "implausible peak RSS %zu bytes", before);
    p = (unsigned char *)malloc(big);
    T_CHECK(p, "malloc");
    memset(p, 1, big);
    after = sdx_peak_rss();
    T_NOTE("peak RSS %zu MiB, after touching %zu MiB more: %zu MiB", before >> 20, big >> 20, after >> 20);
    T_CHECK(after >= before && after >= big, "peak RSS %zu bytes after touching %zu bytes", after, big);
    free(p);
    return T_PASS;
}

/* Releasing a mapped file's pages takes them out of the process's memory
 * and the bytes read afterwards are the same. */
static int released_pages_leave_memory_and_read_back_unchanged(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    size_t bytes = tm_file_bytes(path);
    uint64_t sum[2] = { 0, 0 };
    long kib[3] = { 0, 0, 0 };
    T_SKIP_IF(tm_mapped_kib(path) < 0, "no /proc/self/smaps here");
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < sdx_st_count(st); i++) {
            const sdx_tensor *t = sdx_st_get(st, i);
            const unsigned char *d = (const unsigned char *)t->data;
            for (size_t j = 0; j < sdx_tensor_nbytes(t); j++) sum[pass] = sum[pass] * 31 + d[j];
        }
        kib[pass == 0 ? 0 : 2] = tm_mapped_kib(path);
        if (pass == 0) {
            sdx__st_release(st, st->data, st->data_size);
            kib[1] = tm_mapped_kib(path);
        }
    }
    T_NOTE("%zu KiB file: %ld KiB resident after reading, %ld after release, %ld after reading again", bytes >> 10, kib[0],
           kib[1], kib[2]);
    T_CHECK(kib[0] * 1024 > (long)(bytes * 9 / 10), "reading the tensors made only %ld KiB resident", kib[0]);
    T_CHECK(kib[1] * 1024 < (long)(bytes / 20), "%ld KiB still resident after the release", kib[1]);
    T_CHECK(sum[0] == sum[1], "the bytes differ after the release");
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* After each stage its weights go back to the OS; the next generation
 * reads them again from the file and gives the same image bit for bit. */
static int generating_after_the_release_gives_identical_images(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m = tm_model(ctx, "sd1", 0);
    sdx_gen_params p;
    sdx_gen_result a, b;
    long left;
    size_t n;
    (void)v;
    T_CHECK(m, "%s", sdx_last_error(ctx));
    tm_params(&p);
    T_CHECK(sdx_generate(m, &p, &a) == SDX_OK, "%s", sdx_last_error(ctx));
    left = tm_mapped_kib(path);
    T_NOTE("checkpoint %zu KiB, resident after a generation: %ld KiB", tm_file_bytes(path) >> 10, left);
    if (left >= 0) T_CHECK(left * 1024 < (long)(tm_file_bytes(path) / 20), "%ld KiB of the checkpoint still resident", left);
    T_CHECK(sdx_generate(m, &p, &b) == SDX_OK, "%s", sdx_last_error(ctx));
    n = (size_t)sdx_tensor_numel(&a.latents[0]);
    T_CHECK(!memcmp(a.latents[0].data, b.latents[0].data, n * sizeof(float)), "the second latent differs");
    T_CHECK(!memcmp(a.images[0].data, b.images[0].data, (size_t)a.images[0].width * a.images[0].height * 3),
            "the second image differs");
    sdx_gen_result_free(ctx, &a);
    sdx_gen_result_free(ctx, &b);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* What a progress callback sees of the checkpoint's residency between
 * sampler steps, and of the allocations made from step 2 to the last. */
typedef struct tm_watch {
    const char *path;
    const void *base;    /* the model's mapping of the checkpoint */
    long max_kib;
    t_allocs allocs;     /* counted, none failing */
    long allocs_at_step2, allocs_at_last;
} tm_watch;

static int tm_on_step(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    tm_watch *w = (tm_watch *)user;
    long kib = tm_mapped_kib_at(w->path, w->base);
    (void)image; (void)latent;
    if (kib > w->max_kib) w->max_kib = kib;
    if (step == 2) w->allocs_at_step2 = w->allocs.calls;
    if (step == steps) w->allocs_at_last = w->allocs.calls;
    return 0;
}

/* One generation on a fresh context that counts allocations; the latent
 * and image are copied out (malloc) before everything is freed. */
static int tm_watched_generation(const char *path, int low_memory, tm_watch *w, float **latent, size_t *n,
                                 unsigned char **image, size_t *bytes) {
    sdx_desc d;
    sdx_ctx *ctx;
    sdx_model *m;
    sdx_gen_params p;
    sdx_gen_result res;
    memset(w, 0, sizeof *w);
    w->path = path;
    w->max_kib = -1;
    memset(&d, 0, sizeof d);
    d.n_threads = 2;
    d.alloc = t_allocs_alloc;
    d.realloc = t_allocs_realloc;
    d.free = t_allocs_free;
    d.user = &w->allocs;
    ctx = sdx_create(&d);
    T_CHECK(ctx, "sdx_create");
    m = tm_model(ctx, "sd1", low_memory);
    T_CHECK(m, "%s", sdx_last_error(ctx));
    w->base = m->ckpt->map.base;
    tm_params(&p);
    p.steps = 4;
    p.progress = tm_on_step;
    p.progress_user = w;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    *n = (size_t)sdx_tensor_numel(&res.latents[0]);
    *bytes = (size_t)res.images[0].width * (size_t)res.images[0].height * 3;
    *latent = (float *)malloc(*n * sizeof(float));
    *image = (unsigned char *)malloc(*bytes);
    T_CHECK(*latent && *image, "malloc");
    memcpy(*latent, res.latents[0].data, *n * sizeof(float));
    memcpy(*image, res.images[0].data, *bytes);
    sdx_gen_result_free(ctx, &res);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The low-memory mode streams the weights: between sampler steps next to
 * nothing of the checkpoint is resident (the default mode keeps the UNet
 * there), and the latent and image are the default mode's, bit for bit
 * (at this size the VAE fits the low-memory budget untiled). In both
 * modes the sampling steps after the first allocate nothing. */
static int low_memory_mode_streams_weights_and_changes_no_result(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    tm_watch w[2];
    float *latent[2] = { NULL, NULL };
    unsigned char *image[2] = { NULL, NULL };
    size_t n[2], bytes[2], file = tm_file_bytes(path);
    int r = T_PASS;
    (void)v;
    for (int low = 0; low < 2 && r == T_PASS; low++) {
        r = tm_watched_generation(path, low, &w[low], &latent[low], &n[low], &image[low], &bytes[low]);
        if (r == T_PASS)
            T_NOTE("%s mode: at most %ld KiB of the %zu KiB checkpoint resident between steps; %ld allocations in steps 3-4",
                   low ? "low-memory" : "default", w[low].max_kib, file >> 10, w[low].allocs_at_last - w[low].allocs_at_step2);
    }
    if (r == T_PASS) {
        T_CHECK(n[0] == n[1] && !memcmp(latent[0], latent[1], n[0] * sizeof(float)), "the low-memory latent differs");
        T_CHECK(bytes[0] == bytes[1] && !memcmp(image[0], image[1], bytes[0]), "the low-memory image differs");
        for (int low = 0; low < 2; low++)
            T_CHECK(w[low].allocs_at_last == w[low].allocs_at_step2, "%s mode: %ld allocations during steps 3-4",
                    low ? "low-memory" : "default", w[low].allocs_at_last - w[low].allocs_at_step2);
        if (w[0].max_kib >= 0) {
            T_CHECK(w[0].max_kib * 1024 > (long)(file / 4), "default mode: only %ld KiB resident between steps", w[0].max_kib);
            T_CHECK(w[1].max_kib * 1024 < (long)(file / 20), "low-memory mode: %ld KiB of %zu KiB resident between steps",
                    w[1].max_kib, file >> 10);
        }
    }
    for (int i = 0; i < 2; i++) { free(latent[i]); free(image[i]); }
    return r;
}

/* Low-memory mode bounds the VAE: a decode whose activations exceed its
 * budget is planned in tiles that fit, where the default mode would not
 * tile it; vae_tiling -1 still turns tiling off. */
static int low_memory_mode_tiles_the_vae_within_its_budget(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    sdx_ctx *ctx = t_ctx();
    sdx_model *dm = tm_model(ctx, "sd1", 0), *lm = tm_model(ctx, "sd1", 1);
    sdx_gen_params p;
    sdx__vae_tiling td, tl;
    int64_t side = 8, tile = 0, overlap = 0;
    (void)v;
    T_CHECK(dm && lm, "%s", sdx_last_error(ctx));
    memset(&p, 0, sizeof p);
    /* the smallest square latent over the low-memory budget */
    while (sdx__vae_decode_bytes(&lm->vae, side, side) <= SDX_LOW_MEMORY_VAE_BUDGET) side *= 2;
    td = sdx__tiling(dm, &p);
    tl = sdx__tiling(lm, &p);
    T_CHECK(!sdx__vae_plan_tiles(ctx, &dm->vae, &td, sdx__vae_dec_bytes_latent, side, side, &tile, &overlap) ||
                sdx__vae_decode_bytes(&dm->vae, side, side) > SDX_VAE_TILE_BUDGET,
            "the default mode tiles a %lldx%lld latent", (long long)side, (long long)side);
    T_CHECK(sdx__vae_plan_tiles(ctx, &lm->vae, &tl, sdx__vae_dec_bytes_latent, side, side, &tile, &overlap),
            "the low-memory mode does not tile a %lldx%lld latent (%zu MB untiled)", (long long)side, (long long)side,
            sdx__vae_decode_bytes(&lm->vae, side, side) >> 20);
    T_NOTE("%lldx%lld latent: %zu MB untiled, low-memory tiles of %lld (%zu MB)", (long long)side, (long long)side,
           sdx__vae_decode_bytes(&lm->vae, side, side) >> 20, (long long)tile, sdx__vae_decode_bytes(&lm->vae, tile, tile) >> 20);
    T_CHECK(tile < side && sdx__vae_decode_bytes(&lm->vae, tile, tile) <= SDX_LOW_MEMORY_VAE_BUDGET, "tile %lld", (long long)tile);
    p.vae_tiling = -1;
    tl = sdx__tiling(lm, &p);
    T_CHECK(!sdx__vae_plan_tiles(ctx, &lm->vae, &tl, sdx__vae_dec_bytes_latent, side, side, &tile, &overlap),
            "vae_tiling -1 still tiles in low-memory mode");
    sdx_model_free(dm);
    sdx_model_free(lm);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The UNet's feed-forward runs over token rows in passes: any pass size
 * gives the one-pass result bit for bit (rows are independent). */
static int feed_forward_passes_over_rows_change_nothing(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    T_NEED_SHARED(cpath, "golden/sd1/cases/unet_case0.safetensors");
    sdx_ctx *ctx = t_ctx();
    t_unet_inputs c;
    sdx__arena arena;
    sdx_tensor out[3];
    static const int64_t chunks[3] = { 1 << 30, 7, 64 };
    T_CHECK(ctx && t_unet_inputs_open(ctx, &c, path, cpath), "%s", sdx_last_error(ctx));
    sdx__arena_init(&arena, ctx, 0);
    for (int i = 0; i < 3; i++) {
        int64_t shape[4] = { c.x.shape[0], c.u->out_channels, c.x.shape[2], c.x.shape[3] };
        c.u->ff_chunk_rows = chunks[i];
        T_CHECK(sdx_tensor_alloc(ctx, &out[i], SDX_F32, 4, shape) == SDX_OK, "alloc");
        T_CHECK(sdx__unet_forward(ctx, c.u, &arena, &c.x, (const float *)c.ts.data, &c.cx, NULL, &out[i]) == SDX_OK, "%s",
                sdx_last_error(ctx));
        if (i) T_CHECK(!memcmp(out[0].data, out[i].data, sdx_tensor_nbytes(&out[0])), "passes of %lld rows differ from one pass",
                       (long long)chunks[i]);
    }
    for (int i = 0; i < 3; i++) sdx_tensor_free(ctx, &out[i]);
    sdx__arena_free(&arena);
    t_unet_inputs_close(ctx, &c);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A conditioning's cross-attention keys and values, kept (what a device
 * does), give the UNet's bits; they are kept while the UNet, its weights
 * and the context stay, and a UNet call refuses them once a weight was
 * written (a LoRA merged) until they are made again. */
static int kept_cross_attention_keys_and_values_change_nothing(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    T_NEED_SHARED(cpath, "golden/sd1/cases/unet_case0.safetensors");
    sdx_ctx *ctx = t_ctx();
    t_unet_inputs c;
    sdx__unet_kv kv;
    sdx__arena arena;
    sdx_tensor out[2];
    void *first;
    memset(&kv, 0, sizeof kv);
    T_CHECK(ctx && t_unet_inputs_open(ctx, &c, path, cpath), "%s", sdx_last_error(ctx));
    sdx__arena_init(&arena, ctx, 0);
    for (int i = 0; i < 2; i++) {
        int64_t shape[4] = { c.x.shape[0], c.u->out_channels, c.x.shape[2], c.x.shape[3] };
        T_CHECK(sdx_tensor_alloc(ctx, &out[i], SDX_F32, 4, shape) == SDX_OK, "alloc");
    }
    T_CHECK(sdx__unet_forward(ctx, c.u, &arena, &c.x, (const float *)c.ts.data, &c.cx, NULL, &out[0]) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__unet_kv_make(ctx, c.u, &c.cx, &kv) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(kv.n > 0 && kv.n == sdx__unet_xblocks(c.u, NULL, 0), "%d keys and values for %d transformer blocks", kv.n,
            sdx__unet_xblocks(c.u, NULL, 0));
    for (int call = 0; call < 2; call++) {
        memset(out[1].data, 0, sdx_tensor_nbytes(&out[1]));
        T_CHECK(sdx__unet_forward_control(ctx, c.u, &arena, &c.x, (const float *)c.ts.data, &c.cx, NULL, NULL, &kv, &out[1]) == SDX_OK,
                "%s", sdx_last_error(ctx));
        T_CHECK(!memcmp(out[0].data, out[1].data, sdx_tensor_nbytes(&out[0])), "call %d with kept keys and values differs", call);
    }
    first = kv.t[0].data;
    T_CHECK(sdx__unet_kv_make(ctx, c.u, &c.cx, &kv) == SDX_OK && kv.t[0].data == first, "kept keys and values were made again");
    c.u->w.writes++;        /* as a LoRA merge does */
    T_CHECK(sdx__unet_forward_control(ctx, c.u, &arena, &c.x, (const float *)c.ts.data, &c.cx, NULL, NULL, &kv, &out[1]) ==
                SDX_ERR_INVALID_ARG, "stale keys and values were used");
    T_CHECK(sdx__unet_kv_make(ctx, c.u, &c.cx, &kv) == SDX_OK && kv.writes == c.u->w.writes, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__unet_forward_control(ctx, c.u, &arena, &c.x, (const float *)c.ts.data, &c.cx, NULL, NULL, &kv, &out[1]) == SDX_OK &&
                !memcmp(out[0].data, out[1].data, sdx_tensor_nbytes(&out[0])), "remade keys and values: %s", sdx_last_error(ctx));
    sdx__unet_kv_free(ctx, &kv);
    for (int i = 0; i < 2; i++) sdx_tensor_free(ctx, &out[i]);
    sdx__arena_free(&arena);
    t_unet_inputs_close(ctx, &c);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case memory_cases[] = {
    { "peak_rss_is_measured_and_rises_with_use", peak_rss_is_measured_and_rises_with_use },
    { "released_pages_leave_memory_and_read_back_unchanged", released_pages_leave_memory_and_read_back_unchanged },
    { "generating_after_the_release_gives_identical_images", generating_after_the_release_gives_identical_images },
    { "low_memory_mode_streams_weights_and_changes_no_result", low_memory_mode_streams_weights_and_changes_no_result },
    { "low_memory_mode_tiles_the_vae_within_its_budget", low_memory_mode_tiles_the_vae_within_its_budget },
    { "feed_forward_passes_over_rows_change_nothing", feed_forward_passes_over_rows_change_nothing },
    { "kept_cross_attention_keys_and_values_change_nothing", kept_cross_attention_keys_and_values_change_nothing },
    { 0, 0 }
};
SDX_TEST_SUITE(memory, memory_cases)
