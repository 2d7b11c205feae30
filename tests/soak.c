/* make soak: many mixed generations in one process, with the tiny golden
 * models under ../shared, watching for what a long-lived embedder would
 * notice only after hours: memory that grows, file descriptors that stay
 * open, results that drift.
 *
 * One context, two models: A, the SD 1.x checkpoint mapped from its file
 * with TAESD; B, the same model quantized (GGUF q8_0) read through read
 * callbacks in low-memory mode, freed and loaded again every cycle. A
 * cycle is the same list of jobs (txt2img, img2img, inpainting, a LoRA
 * applied and cleared, ControlNet on and off, TAESD decode and previews,
 * the staged API, a cancel from another thread at a random moment through
 * sdx_generate and through the stages, bad inputs that must fail cleanly),
 * so the state after each cycle should be the state after the one before.
 *
 * After each cycle it samples the resident set (/proc/self/statm), the
 * open descriptors (/proc/self/fd) and the bytes sdx holds (through the
 * context's allocator hooks), and prints a row. It fails (exit 1) if,
 * after the warm-up cycles, the descriptors or sdx's bytes are ever above
 * their value at the end of the warm-up (no slack: both are exact
 * counts), if the resident set is above it by more than the slack
 * (--slack-mib, default 4: glibc's heap keeps and trims freed memory at
 * its own moments, so RSS wanders between identical cycles, by at most
 * 0.2 MiB over 100 cycles with one or two threads; 4 MiB is 20 times
 * that, and less than half of what a leak of one 64x64 image per
 * generation, 12 KiB, adds over the 784 generations after the default
 * warm-up), if a job whose result is deterministic gives other bits than
 * in the first cycle, or if a call meant to fail succeeds (or one meant
 * to succeed fails). Linux only (/proc). */
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SK_SIDE 64                       /* every image and generation: 64x64 */
#define SK_PIXELS (SK_SIDE * SK_SIDE * 3)

static double sk_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sk_die(const char *what, const char *why) {
    fprintf(stderr, "soak: %s: %s\n", what, why);
    exit(2);
}

/* ---- what the process holds -------------------------------------------- */

/* sdx's live blocks and the bytes it asked for, counted in the context's
 * allocator hooks (the pool's threads call them too). Each block carries
 * its size in a header of 16 bytes, which keeps malloc's alignment. */
#define SK_HEAD 16
static pthread_mutex_t sk_lock = PTHREAD_MUTEX_INITIALIZER;
static long long sk_live_bytes, sk_live_blocks;

static void sk_count(long long bytes, long blocks) {
    pthread_mutex_lock(&sk_lock);
    sk_live_bytes += bytes;
    sk_live_blocks += blocks;
    pthread_mutex_unlock(&sk_lock);
}
static void *sk_realloc(void *p, size_t n, void *user) {
    unsigned char *h = p ? (unsigned char *)p - SK_HEAD : NULL;
    size_t old = 0;
    (void)user;
    if (h) memcpy(&old, h, sizeof old);
    if (n > SIZE_MAX - SK_HEAD || !(h = (unsigned char *)realloc(h, n + SK_HEAD))) return NULL;
    memcpy(h, &n, sizeof n);
    sk_count((long long)n - (long long)old, !p);
    return h + SK_HEAD;
}
static void *sk_alloc(size_t n, void *user) { return sk_realloc(NULL, n, user); }
static void sk_free(void *p, void *user) {
    size_t n;
    (void)user;
    if (!p) return;
    memcpy(&n, (unsigned char *)p - SK_HEAD, sizeof n);
    sk_count(-(long long)n, -1);
    free((unsigned char *)p - SK_HEAD);
}

typedef struct sk_sample {
    int gens;
    double seconds;
    long long rss, vm, sdx_bytes, sdx_blocks;
    int fds;
} sk_sample;

static int sk_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;   /* not the one opendir holds */
}

static sk_sample sk_take(int gens, double t0) {
    sk_sample s;
    long long pages_vm = 0, pages_rss = 0, page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    memset(&s, 0, sizeof s);
    if (!f || fscanf(f, "%lld %lld", &pages_vm, &pages_rss) != 2) sk_die("/proc/self/statm", "unreadable (Linux only)");
    fclose(f);
    s.gens = gens;
    s.seconds = sk_now() - t0;
    s.rss = pages_rss * page;
    s.vm = pages_vm * page;
    s.fds = sk_fds();
    pthread_mutex_lock(&sk_lock);
    s.sdx_bytes = sk_live_bytes;
    s.sdx_blocks = sk_live_blocks;
    pthread_mutex_unlock(&sk_lock);
    return s;
}

/* ---- the canceller: sleeps the delay it is given, then sdx_cancel ------- */

typedef struct sk_canceller {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    sdx_ctx *ctx;
    long delay_us;
    int armed, quit;
} sk_canceller;

static void *sk_canceller_main(void *arg) {
    sk_canceller *c = (sk_canceller *)arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        struct timespec ts;
        while (!c->armed && !c->quit) pthread_cond_wait(&c->cond, &c->lock);
        if (c->quit) break;
        ts.tv_sec = c->delay_us / 1000000;
        ts.tv_nsec = (c->delay_us % 1000000) * 1000;
        pthread_mutex_unlock(&c->lock);
        nanosleep(&ts, NULL);
        sdx_cancel(c->ctx);
        pthread_mutex_lock(&c->lock);
        c->armed = 0;
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

static void sk_canceller_set(sk_canceller *c, long delay_us, int quit) {
    pthread_mutex_lock(&c->lock);
    c->delay_us = delay_us;
    c->armed = !quit;
    c->quit = quit;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void sk_canceller_wait(sk_canceller *c) {
    pthread_mutex_lock(&c->lock);
    while (c->armed) pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

/* ---- the run ---------------------------------------------------------- */

typedef struct sk_file { unsigned char *bytes; size_t size; } sk_file;

typedef struct sk_run {
    sdx_ctx *ctx;
    sdx_model *a, *b;                    /* file; GGUF from callbacks, low memory */
    sdx_controlnet *cn;
    char path[6][1024];                  /* checkpoint, vocab, taesd, lora, controlnet, gguf */
    sk_file gguf;
    sk_canceller canceller;
    unsigned char init[SK_PIXELS], mask[SK_SIDE * SK_SIDE], hint[SK_PIXELS];
    sdx_image init_img, mask_img, hint_img;
    sdx_control control;
    double gen_seconds;                  /* an undisturbed txt2img, for cancel delays */
    uint64_t rng;
    int gens, ok, cancelled, refused, previews;
    uint64_t *ref;                       /* each job's first hash (0: none yet) */
    const char *failed;                  /* first failure */
    char why[1536];
} sk_run;

enum { SK_CKPT, SK_VOCAB, SK_TAESD, SK_LORA, SK_CNET, SK_GGUF };

static double sk_uniform(sk_run *r) {
    r->rng = r->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->rng >> 11) / 9007199254740992.0;
}

static uint64_t sk_hash(const void *p, size_t n, uint64_t h) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
    return h;
}

static int sk_fail(sk_run *r, const char *job, const char *fmt, const char *detail) {
    if (!r->failed) {
        r->failed = job;
        snprintf(r->why, sizeof r->why, fmt, detail);
    }
    return 0;
}

static size_t sk_read(void *user, uint64_t offset, size_t n, void *dst) {
    const sk_file *f = (const sk_file *)user;
    if (offset > f->size || n > f->size - offset) return 0;
    memcpy(dst, f->bytes + offset, n);
    return n;
}

static sk_file sk_slurp(const char *path) {
    sk_file f = { NULL, 0 };
    FILE *fp = fopen(path, "rb");
    long n;
    if (!fp || fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) sk_die(path, "unreadable");
    f.size = (size_t)n;
    if (!(f.bytes = (unsigned char *)malloc(f.size ? f.size : 1)) || fread(f.bytes, 1, f.size, fp) != f.size) sk_die(path, "unreadable");
    fclose(fp);
    return f;
}

static sdx_model *sk_load_a(sk_run *r) {
    sdx_model_desc md;
    sdx_model *m = NULL;
    memset(&md, 0, sizeof md);
    md.checkpoint = r->path[SK_CKPT];
    md.vocab = r->path[SK_VOCAB];
    md.taesd[0] = r->path[SK_TAESD];
    if (sdx_model_load(r->ctx, &md, &m) != SDX_OK) sk_die(r->path[SK_CKPT], sdx_last_error(r->ctx));
    return m;
}

static int sk_load_b(sk_run *r) {
    sdx_model_desc md;
    memset(&md, 0, sizeof md);
    md.checkpoint_source.read = sk_read;
    md.checkpoint_source.user = &r->gguf;
    md.checkpoint_source.size = r->gguf.size;
    md.checkpoint_source.name = "sd1-q8_0.gguf (callbacks)";
    md.vocab = r->path[SK_VOCAB];
    md.low_memory = 1;
    sdx_model_free(r->b);
    r->b = NULL;
    return sdx_model_load(r->ctx, &md, &r->b) == SDX_OK ? 1 : sk_fail(r, "load B", "%s", sdx_last_error(r->ctx));
}

static sdx_gen_params sk_params(int steps, int64_t seed) {
    sdx_gen_params gp;
    memset(&gp, 0, sizeof gp);
    gp.prompt = "a lighthouse on a cliff at dusk, (waves:1.2)";
    gp.negative_prompt = "blurry";
    gp.width = gp.height = SK_SIDE;
    gp.steps = steps;
    gp.cfg_scale = 5;
    gp.sampler = "euler_a";
    gp.seed = seed;
    return gp;
}

static int sk_preview(void *user, int image, int step, int steps, const sdx_image *preview) {
    sk_run *r = (sk_run *)user;
    (void)image, (void)step, (void)steps;
    r->previews += preview && preview->data && preview->width > 0;
    return 0;
}

/* One generation through the stages; SDX_OK with the image, or the first
 * failure with everything freed. */
static int sk_staged(sdx_model *m, const sdx_gen_params *gp, sdx_image *img) {
    sdx_cond *cond = NULL;
    sdx_sampling *s = NULL;
    int rc = sdx_encode_prompt(m, gp, &cond);
    memset(img, 0, sizeof *img);
    if (rc == SDX_OK) rc = sdx_sampling_begin(m, gp, cond, 0, &s);
    while (rc == SDX_OK && !sdx_sampling_done(s)) rc = sdx_sampling_step(s);
    if (rc == SDX_OK) rc = sdx_decode_latent(m, sdx_sampling_latent(s), gp, img);
    sdx_sampling_free(s);
    sdx_cond_free(cond);
    return rc;
}

/* A finished job: its image's hash must be the one of the first cycle
 * (cancelled jobs that finished compare with their undisturbed twin). */
static int sk_check(sk_run *r, int job, const char *name, const sdx_image *img) {
    uint64_t h = sk_hash(img->data, (size_t)img->width * (size_t)img->height * (size_t)img->channels, 1469598103934665603ull);
    r->gens++;
    r->ok++;
    if (!r->ref[job]) r->ref[job] = h;
    return r->ref[job] == h ? 1 : sk_fail(r, name, "%s", "other bits than in the first cycle");
}

static int sk_generate(sk_run *r, sdx_model *m, int job, const char *name, const sdx_gen_params *gp) {
    sdx_gen_result res;
    int ok;
    if (sdx_generate(m, gp, &res) != SDX_OK) return sk_fail(r, name, "%s", sdx_last_error(r->ctx));
    ok = sk_check(r, job, name, &res.images[0]);
    sdx_gen_result_free(r->ctx, &res);
    return ok;
}

/* A cancel from the other thread after 0 to 1.3 times an undisturbed
 * generation: OK with the undisturbed bits (job `twin`), or CANCELLED. */
static int sk_cancelled(sk_run *r, sdx_model *m, int twin, const char *name, int staged) {
    sdx_gen_params gp = sk_params(3, 42);
    sdx_gen_result res;
    sdx_image img;
    int rc, ok = 1;
    sk_canceller_set(&r->canceller, (long)(sk_uniform(r) * 1.3 * r->gen_seconds * 1e6), 0);
    rc = staged ? sk_staged(m, &gp, &img) : sdx_generate(m, &gp, &res);
    sk_canceller_wait(&r->canceller);
    if (rc == SDX_OK) {
        ok = sk_check(r, twin, name, staged ? &img : &res.images[0]);
        if (staged) sdx_image_free(r->ctx, &img);
        else sdx_gen_result_free(r->ctx, &res);
        return ok;
    }
    r->gens++;
    r->cancelled++;
    return rc == SDX_ERR_CANCELLED ? 1 : sk_fail(r, name, "not cancelled: %s", sdx_last_error(r->ctx));
}

/* Calls that must fail with an error and change nothing. */
static int sk_refused(sk_run *r, const char *name, int rc) {
    r->refused++;
    if (rc == SDX_OK) return sk_fail(r, name, "%s", "succeeded");
    return sdx_last_error(r->ctx)[0] ? 1 : sk_fail(r, name, "%s", "failed without a message");
}

static int sk_bad_inputs(sk_run *r) {
    static const unsigned char junk[64] = { 8, 0, 0, 0, 0, 0, 0, 0, '{', '}' };
    sdx_gen_params gp = sk_params(2, 1);
    sdx_gen_result res;
    sdx_controlnet *cn = NULL;
    sdx_source src;
    sdx_image tiny = { 4, 4, 3, r->init };
    int ok = 1;
    gp.width = 65;
    ok &= sk_refused(r, "width 65", sdx_generate(r->a, &gp, &res));
    gp = sk_params(2, 1);
    gp.sampler = "no_such_sampler";
    ok &= sk_refused(r, "unknown sampler", sdx_generate(r->a, &gp, &res));
    gp = sk_params(2, 1);
    gp.mask = &r->mask_img;            /* a mask needs an init image */
    ok &= sk_refused(r, "mask without init", sdx_generate(r->a, &gp, &res));
    gp = sk_params(2, 1);
    gp.init_image = &tiny;             /* smaller than 8x8 */
    ok &= sk_refused(r, "4x4 init image", sdx_generate(r->a, &gp, &res));
    memset(&src, 0, sizeof src);
    src.data = junk;
    src.size = sizeof junk;
    ok &= sk_refused(r, "LoRA from junk", sdx_model_apply_lora_source(r->a, &src, 1, 1));
    src.size = 9;
    ok &= sk_refused(r, "ControlNet from junk", sdx_controlnet_load_source(r->a, &src, &cn));
    ok &= sk_refused(r, "missing LoRA file", sdx_model_apply_lora(r->a, "/nonexistent/lora.safetensors", 1, 1));
    return ok;
}

/* The jobs of one cycle, in order. */
enum {
    J_TXT2IMG, J_IMG2IMG, J_INPAINT, J_LORA, J_LORA_CLEARED, J_CONTROL, J_CONTROL_OFF, J_TAESD, J_STAGED,
    J_CANCEL, J_CANCEL_STAGED, J_BAD, J_B_TXT2IMG, J_B_IMG2IMG, J_B_CANCEL, J_COUNT
};

static int sk_cycle(sk_run *r) {
    int ok = 1;
    for (int j = 0; j < J_COUNT && ok; j++) {
        sdx_gen_params gp = sk_params(3, 42);
        sdx_image img;
        switch (j) {
        case J_TXT2IMG: ok = sk_generate(r, r->a, j, "txt2img", &gp); break;
        case J_IMG2IMG:
            gp.init_image = &r->init_img;
            gp.strength = 0.6f;
            ok = sk_generate(r, r->a, j, "img2img", &gp);
            break;
        case J_INPAINT:
            gp.init_image = &r->init_img;
            gp.mask = &r->mask_img;
            gp.sampler = "dpmpp_2m";
            ok = sk_generate(r, r->a, j, "inpaint", &gp);
            break;
        case J_LORA:
            if (sdx_model_apply_lora(r->a, r->path[SK_LORA], 0.8f, 0.6f) != SDX_OK) { ok = sk_fail(r, "LoRA", "%s", sdx_last_error(r->ctx)); break; }
            ok = sk_generate(r, r->a, j, "LoRA", &gp);
            break;
        case J_LORA_CLEARED:
            if (sdx_model_clear_loras(r->a) != SDX_OK) { ok = sk_fail(r, "LoRA cleared", "%s", sdx_last_error(r->ctx)); break; }
            ok = sk_generate(r, r->a, J_TXT2IMG, "LoRA cleared", &gp);    /* the plain model's bits */
            break;
        case J_CONTROL:
            gp.controls = &r->control;
            gp.n_controls = 1;
            ok = sk_generate(r, r->a, j, "ControlNet", &gp);
            break;
        case J_CONTROL_OFF: ok = sk_generate(r, r->a, J_TXT2IMG, "ControlNet off", &gp); break;
        case J_TAESD:
            gp.codec = SDX_CODEC_TAESD;
            gp.preview = sk_preview;
            gp.preview_user = r;
            gp.preview_interval = 1;
            gp.preview_codec = SDX_CODEC_TAESD;
            ok = sk_generate(r, r->a, j, "TAESD", &gp);
            break;
        case J_STAGED:
            if (sk_staged(r->a, &gp, &img) != SDX_OK) { ok = sk_fail(r, "staged", "%s", sdx_last_error(r->ctx)); break; }
            ok = sk_check(r, J_TXT2IMG, "staged", &img);          /* as sdx_generate */
            sdx_image_free(r->ctx, &img);
            break;
        case J_CANCEL: ok = sk_cancelled(r, r->a, J_TXT2IMG, "cancel", 0); break;
        case J_CANCEL_STAGED: ok = sk_cancelled(r, r->a, J_TXT2IMG, "cancel (stages)", 1); break;
        case J_BAD: ok = sk_bad_inputs(r); break;
        case J_B_TXT2IMG: ok = sk_load_b(r) && sk_generate(r, r->b, j, "B txt2img", &gp); break;
        case J_B_IMG2IMG:
            gp.init_image = &r->init_img;
            gp.strength = 0.5f;
            ok = sk_generate(r, r->b, j, "B img2img", &gp);
            break;
        default: ok = sk_cancelled(r, r->b, J_B_TXT2IMG, "B cancel", 0); break;
        }
    }
    return ok;
}

static void sk_pictures(sk_run *r) {
    for (int y = 0; y < SK_SIDE; y++)
        for (int x = 0; x < SK_SIDE; x++) {
            unsigned char *p = r->init + (y * SK_SIDE + x) * 3, *h = r->hint + (y * SK_SIDE + x) * 3;
            int dx = x - SK_SIDE / 2, dy = y - SK_SIDE / 2;
            p[0] = (unsigned char)(x * 4);
            p[1] = (unsigned char)(y * 4);
            p[2] = (unsigned char)(128 + dx);
            h[0] = h[1] = h[2] = (x / 8 + y / 8) % 2 ? 255 : 0;
            r->mask[y * SK_SIDE + x] = dx * dx + dy * dy < 20 * 20 ? 255 : 0;
        }
    r->init_img = (sdx_image){ SK_SIDE, SK_SIDE, 3, r->init };
    r->mask_img = (sdx_image){ SK_SIDE, SK_SIDE, 1, r->mask };
    r->hint_img = (sdx_image){ SK_SIDE, SK_SIDE, 3, r->hint };
}

/* A failed check, said (fmt formats one double); returns whether it failed. */
static int sk_verdict(int failed, const char *fmt, double value) {
    if (!failed) return 0;
    printf("FAIL: ");
    printf(fmt, value);
    printf("\n");
    return 1;
}

static void sk_row(const sk_sample *s, const char *note) {
    printf("%6d %8.1f %9.2f %9.1f %5d %11lld %11lld  %s\n", s->gens, s->seconds, s->rss / 1048576.0, s->vm / 1048576.0, s->fds,
           s->sdx_blocks, s->sdx_bytes, note);
    fflush(stdout);
}

int main(int argc, char **argv) {
    static const char *const rel[] = { "golden/sd1/model.safetensors", "vocab/merges.txt", "golden/taesd/taesd_decoder.safetensors",
                                       "golden/lora/loras/sd1_kohya_locon.safetensors", "golden/controlnet/controlnet.safetensors",
                                       "golden/gguf/sd1-q8_0.gguf" };
    const char *shared = getenv("SDX_SHARED") ? getenv("SDX_SHARED") : "../shared";
    int cycles = 60, warmup = 4, threads = 1, bad = 0;
    double slack_mib = 4, t0;
    sk_run r;
    sdx_desc d;
    sdx_gen_params gp;
    sk_sample base, last, worst;
    pthread_t canceller;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc) cycles = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--slack-mib") && i + 1 < argc) slack_mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--shared") && i + 1 < argc) shared = argv[++i];
        else {
            printf("usage: tests/soak [--cycles N (60)] [--warmup N (4)] [--threads N (1)] [--slack-mib MiB (4)] [--shared DIR]\n"
                   "%d generations a cycle; see the top of tests/soak.c\n", J_COUNT - 1);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (cycles <= warmup || warmup < 1) sk_die("--cycles", "must exceed --warmup, which must be at least 1");
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 6; i++) {
        snprintf(r.path[i], sizeof r.path[i], "%s/%s", shared, rel[i]);
        if (access(r.path[i], R_OK) != 0) sk_die(r.path[i], "not found (set SDX_SHARED or --shared)");
    }
    r.gguf = sk_slurp(r.path[SK_GGUF]);
    r.rng = 28;
    if (!(r.ref = (uint64_t *)calloc(J_COUNT, sizeof *r.ref))) sk_die("memory", "out of it");
    sk_pictures(&r);
    memset(&d, 0, sizeof d);
    d.n_threads = threads;
    d.alloc = sk_alloc;
    d.realloc = sk_realloc;
    d.free = sk_free;
    if (!(r.ctx = sdx_create(&d))) sk_die("sdx_create", "failed");
    r.a = sk_load_a(&r);
    if (sdx_controlnet_load(r.a, r.path[SK_CNET], &r.cn) != SDX_OK) sk_die(r.path[SK_CNET], sdx_last_error(r.ctx));
    r.control.net = r.cn;
    r.control.image = &r.hint_img;
    r.control.strength = 1;
    pthread_mutex_init(&r.canceller.lock, NULL);
    pthread_cond_init(&r.canceller.cond, NULL);
    r.canceller.ctx = r.ctx;
    if (pthread_create(&canceller, NULL, sk_canceller_main, &r.canceller) != 0) sk_die("pthread_create", "failed");
    gp = sk_params(3, 42);
    t0 = sk_now();
    if (!sk_generate(&r, r.a, J_TXT2IMG, "timing", &gp)) sk_die(r.failed, r.why);
    r.gen_seconds = sk_now() - t0;
    r.gens = r.ok = 0;
    printf("soak: %d cycles of %d generations (the first %d warm up), %d thread%s, a txt2img %.0f ms\n", cycles, J_COUNT - 1, warmup,
           threads, threads == 1 ? "" : "s", r.gen_seconds * 1e3);
    printf("%6s %8s %9s %9s %5s %11s %11s\n", "gens", "seconds", "RSS MiB", "VM MiB", "fds", "sdx blocks", "sdx bytes");
    t0 = sk_now();
    base = last = worst = sk_take(0, t0);
    sk_row(&base, "start");
    for (int c = 1; c <= cycles && !r.failed; c++) {
        if (!sk_cycle(&r)) break;
        last = sk_take(r.gens, t0);
        if (c == warmup) base = worst = last;
        if (c > warmup) {
            if (last.rss > worst.rss) worst.rss = last.rss;
            if (last.fds > worst.fds) worst.fds = last.fds;
            if (last.sdx_bytes > worst.sdx_bytes) worst.sdx_bytes = last.sdx_bytes;
        }
        sk_row(&last, c == warmup ? "end of warm-up" : c < warmup ? "warm-up" : "");
    }
    sk_canceller_set(&r.canceller, 0, 1);
    pthread_join(canceller, NULL);
    if (r.failed) {
        printf("FAIL: %s: %s\n", r.failed, r.why);
        bad = 1;
    } else {
        double grew = (double)(worst.rss - base.rss) / 1048576.0;
        printf("%d generations in %.1f s (%d finished, %d cancelled; %d bad inputs refused; %d previews)\n", r.gens, last.seconds, r.ok,
               r.cancelled, r.refused, r.previews);
        printf("after warm-up: RSS %.2f MiB, at most %.2f (+%.2f, slack %.1f); fds %d, at most %d; sdx %.2f MiB, at most %.2f\n",
               base.rss / 1048576.0, worst.rss / 1048576.0, grew, slack_mib, base.fds, worst.fds, base.sdx_bytes / 1048576.0,
               worst.sdx_bytes / 1048576.0);
        bad |= sk_verdict(grew > slack_mib, "the resident set grew by %.1f MiB after the warm-up", grew);
        bad |= sk_verdict(worst.fds > base.fds, "%.0f file descriptors more than after the warm-up", (double)(worst.fds - base.fds));
        bad |= sk_verdict(worst.sdx_bytes > base.sdx_bytes, "sdx holds %.0f bytes more than after the warm-up",
                          (double)(worst.sdx_bytes - base.sdx_bytes));
        bad |= sk_verdict(!r.cancelled, "%.0f cancels landed in a call", 0);
        bad |= sk_verdict(!r.previews, "%.0f TAESD previews", 0);
    }
    sdx_controlnet_free(r.cn);
    sdx_model_free(r.a);
    sdx_model_free(r.b);
    sdx_destroy(r.ctx);
    bad |= sk_verdict(sk_live_blocks != 0, "%.0f sdx blocks still held after sdx_destroy", (double)sk_live_blocks);
    pthread_cond_destroy(&r.canceller.cond);
    pthread_mutex_destroy(&r.canceller.lock);
    free(r.ref);
    free(r.gguf.bytes);
    printf("%s\n", bad ? "soak: FAILED" : "soak: ok");
    return bad;
}
