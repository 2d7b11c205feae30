/* Suite "cancel": sdx_cancel, from another thread at any moment, ends a
 * call with SDX_OK or SDX_ERR_CANCELLED, leaks nothing, and leaves the
 * context as it was: the next generation equals an undisturbed one bit
 * for bit. Then each stage's checks (sampling steps, the VAE's blocks
 * and tiles, the upscaler's tiles and blocks) and which call a cancel
 * reaches. `make tsan` runs this suite under ThreadSanitizer. */
#include "test.h"
#ifdef _WIN32
#include <windows.h>
#endif

/* ---- a context whose live allocations are counted ------------------------ */
/* The hooks may run on the pool's threads; a lock guards the counts. At
 * the cancel_at-th allocation the hook calls sdx_cancel (on the calling
 * thread, deterministically, wherever an allocation happens). */
typedef struct cx_count {
    sdx__mutex lock;
    long live, calls, cancel_at;
    sdx_ctx *ctx;
} cx_count;

static void *cx_alloc(size_t n, void *user) {
    cx_count *c = (cx_count *)user;
    void *p = malloc(n);
    int cancel;
    sdx__mutex_lock(&c->lock);
    c->live += p != NULL;
    cancel = ++c->calls == c->cancel_at;
    sdx__mutex_unlock(&c->lock);
    if (cancel) sdx_cancel(c->ctx);
    return p;
}

static void *cx_realloc(void *p, size_t n, void *user) {
    cx_count *c = (cx_count *)user;
    void *q = realloc(p, n);
    sdx__mutex_lock(&c->lock);
    c->live += q && !p;
    sdx__mutex_unlock(&c->lock);
    return q;
}

static void cx_free(void *p, void *user) {
    cx_count *c = (cx_count *)user;
    if (!p) return;
    free(p);
    sdx__mutex_lock(&c->lock);
    c->live--;
    sdx__mutex_unlock(&c->lock);
}

static long cx_live(cx_count *c) {
    long n;
    sdx__mutex_lock(&c->lock);
    n = c->live;
    sdx__mutex_unlock(&c->lock);
    return n;
}

/* Counting starts from zero; cancel_at 0: no cancel from the hook. */
static void cx_arm(cx_count *c, long cancel_at) {
    sdx__mutex_lock(&c->lock);
    c->calls = 0;
    c->cancel_at = cancel_at;
    sdx__mutex_unlock(&c->lock);
}

static sdx_ctx *cx_ctx(cx_count *c) {
    sdx_desc d;
    memset(c, 0, sizeof *c);
    sdx__mutex_init(&c->lock);
    memset(&d, 0, sizeof d);
    d.n_threads = getenv("SDX_TEST_THREADS") ? atoi(getenv("SDX_TEST_THREADS")) : 2;
    d.alloc = cx_alloc;
    d.realloc = cx_realloc;
    d.free = cx_free;
    d.user = c;
    return c->ctx = sdx_create(&d);
}

#define CX_NEED_MODEL(cnt, ctx, m) \
    T_SKIP_IF(!t_shared("vocab/merges.txt") || !t_file_exists(t_golden_ckpt("sd1")), \
              "golden data %s/golden/sd1 not found (set SDX_SHARED or place shared/ beside the repo)", t_shared_dir()); \
    cx_count cnt; \
    sdx_ctx *ctx = cx_ctx(&cnt); \
    sdx_model *m = ctx ? t_model(ctx, "sd1") : NULL; \
    T_CHECK(m, "%s", ctx ? sdx_last_error(ctx) : "no context")

static void cx_params(sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = "a lighthouse at dusk, (waves:1.3)";
    p->negative_prompt = "blurry";
    p->width = p->height = 64;
    p->steps = 3;
    p->seed = 11;
    p->sampler = "euler_ancestral";
    p->rng = SDX_RNG_CPU;
}

static int cx_same_image(const sdx_image *a, const sdx_image *b) {
    return a->width == b->width && a->height == b->height && a->channels == b->channels &&
           !memcmp(a->data, b->data, (size_t)a->width * (size_t)a->height * (size_t)a->channels);
}

static int cx_same_result(const sdx_gen_result *a, const sdx_gen_result *b) {
    return a->count == 1 && b->count == 1 && cx_same_image(&a->images[0], &b->images[0]) &&
           !memcmp(a->latents[0].data, b->latents[0].data, sdx_tensor_nbytes(&b->latents[0]));
}

static int cx_cancelled_msg(sdx_ctx *ctx) { return !strncmp(sdx_last_error(ctx), "cancelled (sdx_cancel) ", 23); }

/* ---- from another thread, at random moments ------------------------------ */

static void cx_sleep_us(long us) {
#ifdef _WIN32
    Sleep((DWORD)((us + 999) / 1000));
#else
    struct timespec ts;
    ts.tv_sec = us / 1000000;
    ts.tv_nsec = (us % 1000000) * 1000;
    nanosleep(&ts, NULL);
#endif
}

/* The canceller: told a delay, it sleeps that long, calls sdx_cancel and
 * says so; the main thread starts its call right after telling it. */
typedef struct cx_canceller {
    sdx__mutex lock;
    sdx__cond cond;
    sdx_ctx *ctx;
    long delay_us;
    int armed, quit;
} cx_canceller;

static void cx_canceller_main(void *arg) {
    cx_canceller *c = (cx_canceller *)arg;
    sdx__mutex_lock(&c->lock);
    for (;;) {
        long delay;
        while (!c->armed && !c->quit) sdx__cond_wait(&c->cond, &c->lock);
        if (c->quit) break;
        delay = c->delay_us;
        sdx__mutex_unlock(&c->lock);
        if (delay > 0) cx_sleep_us(delay);
        sdx_cancel(c->ctx);
        sdx__mutex_lock(&c->lock);
        c->armed = 0;
        sdx__cond_broadcast(&c->cond);
    }
    sdx__mutex_unlock(&c->lock);
}

static void cx_canceller_arm(cx_canceller *c, long delay_us) {
    sdx__mutex_lock(&c->lock);
    c->delay_us = delay_us;
    c->armed = 1;
    sdx__cond_broadcast(&c->cond);
    sdx__mutex_unlock(&c->lock);
}

/* Waits until the cancel of this round has been made. */
static void cx_canceller_wait(cx_canceller *c) {
    sdx__mutex_lock(&c->lock);
    while (c->armed) sdx__cond_wait(&c->cond, &c->lock);
    sdx__mutex_unlock(&c->lock);
}

/* One generation through the stages: SDX_OK with the image in *img, or
 * the first failure; everything else freed. */
static int cx_staged(sdx_model *m, const sdx_gen_params *p, sdx_image *img) {
    sdx_cond *cond = NULL;
    sdx_sampling *s = NULL;
    int rc = sdx_encode_prompt(m, p, &cond);
    memset(img, 0, sizeof *img);
    if (rc == SDX_OK) rc = sdx_sampling_begin(m, p, cond, 0, &s);
    while (rc == SDX_OK && !sdx_sampling_done(s)) rc = sdx_sampling_step(s);
    if (rc == SDX_OK) rc = sdx_decode_latent(m, sdx_sampling_latent(s), p, img);
    sdx_sampling_free(s);
    sdx_cond_free(cond);
    return rc;
}

/* 300 natively; make cross's scalar (SDX_NO_SIMD) and wine runs, many
 * times slower, do 30. */
#if defined(SDX_NO_SIMD) || defined(_WIN32)
#define CX_ROUNDS 30
#else
#define CX_ROUNDS 300
#endif

static int cx_rounds(void) {
    const char *e = getenv("SDX_TEST_CANCEL_ROUNDS");
    return e && atoi(e) > 0 ? atoi(e) : CX_ROUNDS;
}

/* Rounds of sdx_generate and of the staged calls, each with one cancel
 * from another thread after a random delay (0 to 1.3 times an undisturbed
 * call, so some land before the call notes the counter and some after it
 * ends): every call ends OK, with the undisturbed bits, or CANCELLED,
 * saying so; no round keeps an allocation; afterwards the context
 * generates the undisturbed bits. SDX_TEST_CANCEL_ROUNDS: how many. */
static int random_cancels_from_another_thread(void) {
    CX_NEED_MODEL(cnt, ctx, m);
    cx_canceller c;
    sdx__thread thread;
    sdx_gen_params p;
    sdx_gen_result ref, res;
    sdx_image img;
    long base;
    double t0, took;
    int rounds = cx_rounds(), ok = 0, cancelled = 0, where[3] = { 0, 0, 0 };
    cx_params(&p);
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    t0 = t_now();
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK && cx_same_result(&res, &ref), "undisturbed: %s", sdx_last_error(ctx));
    took = t_now() - t0;
    sdx_gen_result_free(ctx, &res);
    base = cx_live(&cnt);
    memset(&c, 0, sizeof c);
    sdx__mutex_init(&c.lock);
    sdx__cond_init(&c.cond);
    c.ctx = ctx;
    T_CHECK(sdx__thread_start(&thread, cx_canceller_main, &c), "thread");
    t_seed(28);
    for (int r = 0; r < rounds; r++) {
        int staged = r % 3 == 2, rc;
        cx_canceller_arm(&c, (long)(t_uniform() * 1.3 * took * 1e6));
        if (staged) rc = cx_staged(m, &p, &img);
        else rc = sdx_generate(m, &p, &res);
        cx_canceller_wait(&c);
        if (rc == SDX_OK) {
            ok++;
            T_CHECK(staged ? cx_same_image(&img, &ref.images[0]) : cx_same_result(&res, &ref), "round %d: other bits", r);
            if (staged) sdx_image_free(ctx, &img);
            else sdx_gen_result_free(ctx, &res);
        } else {
            const char *msg = sdx_last_error(ctx);
            cancelled++;
            T_CHECK(rc == SDX_ERR_CANCELLED && cx_cancelled_msg(ctx), "round %d: %d %s", r, rc, msg);
            where[strstr(msg, " step") ? 0 : strstr(msg, "VAE") ? 1 : 2]++;
        }
        T_CHECK(cx_live(&cnt) == base, "round %d (%s): %ld allocations kept", r, rc == SDX_OK ? "ok" : "cancelled", cx_live(&cnt) - base);
    }
    sdx__mutex_lock(&c.lock);
    c.quit = 1;
    sdx__cond_broadcast(&c.cond);
    sdx__mutex_unlock(&c.lock);
    sdx__thread_join(&thread);
    T_NOTE("%d rounds (a call %.0f ms): %d ok, %d cancelled (%d in sampling, %d in the VAE, %d elsewhere)", rounds, took * 1e3,
           ok, cancelled, where[0], where[1], where[2]);
    T_CHECK(cancelled > 0 && ok > 0, "%d ok, %d cancelled: the delays miss the calls", ok, cancelled);
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK && cx_same_result(&res, &ref), "afterwards: %s", sdx_last_error(ctx));
    sdx_gen_result_free(ctx, &res);
    sdx_gen_result_free(ctx, &ref);
    sdx__cond_destroy(&c.cond);
    sdx__mutex_destroy(&c.lock);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- which call a cancel reaches ------------------------------------------ */

/* Cancels made while no call runs are dropped by the next call. */
static int a_cancel_before_a_call_does_not_reach_it(void) {
    CX_NEED_MODEL(cnt, ctx, m);
    sdx_gen_params p;
    sdx_gen_result ref, res;
    sdx_image img;
    cx_params(&p);
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_cancel(ctx);
    sdx_cancel(ctx);
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK && cx_same_result(&res, &ref), "%s", sdx_last_error(ctx));
    sdx_cancel(ctx);
    T_CHECK(cx_staged(m, &p, &img) == SDX_OK && cx_same_image(&img, &ref.images[0]), "staged: %s", sdx_last_error(ctx));
    sdx_cancel(NULL);   /* does nothing */
    sdx_image_free(ctx, &img);
    sdx_gen_result_free(ctx, &res);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

typedef struct cx_at_step { sdx_ctx *ctx; int step; } cx_at_step;
static int cx_cancel_at_step(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    cx_at_step *a = (cx_at_step *)user;
    (void)image; (void)steps; (void)latent;
    if (step == a->step) sdx_cancel(a->ctx);
    return 0;
}

static void cx_cancel_at_phase(void *user, sdx_phase phase, int image) {
    (void)image;
    if (phase == SDX_PHASE_DECODE) sdx_cancel((sdx_ctx *)user);
}

/* A preview callback that makes the first allocation after it cancel:
 * that comes in the next step's model call or its preview's decode,
 * after the step's check. */
static int cx_cancel_after_preview(void *user, int image, int step, int steps, const sdx_image *preview) {
    cx_count *c = (cx_count *)user;
    (void)image; (void)steps; (void)preview;
    if (step == 1) {
        sdx__mutex_lock(&c->lock);
        c->cancel_at = c->calls + 1;
        sdx__mutex_unlock(&c->lock);
    }
    return 0;
}

/* A cancel during step 2 stops sampling before step 3, one during the
 * decode between the VAE's blocks, one in step 2 after its check at the
 * decode of step 2's preview; nothing is returned or kept, and the next
 * generation has the undisturbed bits. */
static int a_cancel_stops_sampling_and_the_decode(void) {
    CX_NEED_MODEL(cnt, ctx, m);
    sdx_gen_params p;
    sdx_gen_result ref, res;
    cx_at_step at;
    long base;
    cx_params(&p);
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    base = cx_live(&cnt);
    at.ctx = ctx;
    at.step = 2;
    p.progress = cx_cancel_at_step;
    p.progress_user = &at;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_CANCELLED && res.count == 0 && !res.images, "%s", sdx_last_error(ctx));
    T_CHECK(!strcmp(sdx_last_error(ctx), "cancelled (sdx_cancel) after step 2 of 3"), "%s", sdx_last_error(ctx));
    T_CHECK(cx_live(&cnt) == base, "%ld allocations kept", cx_live(&cnt) - base);
    p.progress = NULL;
    p.phase = cx_cancel_at_phase;
    p.phase_user = ctx;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_CANCELLED, "%s", sdx_last_error(ctx));
    T_CHECK(!strcmp(sdx_last_error(ctx), "cancelled (sdx_cancel) between the VAE's blocks"), "%s", sdx_last_error(ctx));
    T_CHECK(cx_live(&cnt) == base, "%ld allocations kept", cx_live(&cnt) - base);
    p.phase = NULL;
    p.preview = cx_cancel_after_preview;
    p.preview_user = &cnt;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_CANCELLED, "%s", sdx_last_error(ctx));
    T_CHECK(!strcmp(sdx_last_error(ctx), "cancelled (sdx_cancel) after step 2 of 3"), "%s", sdx_last_error(ctx));
    T_CHECK(cx_live(&cnt) == base, "%ld allocations kept", cx_live(&cnt) - base);
    cx_arm(&cnt, 0);
    p.preview = NULL;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK && cx_same_result(&res, &ref), "%s", sdx_last_error(ctx));
    sdx_gen_result_free(ctx, &res);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A session is one call from sdx_sampling_begin: a cancel between two
 * steps ends the next one, and the session stays cancelled; the calls
 * after it (a decode, a new session) are not reached. */
static int a_session_cancelled_between_steps(void) {
    CX_NEED_MODEL(cnt, ctx, m);
    sdx_gen_params p;
    sdx_gen_result ref;
    sdx_cond *cond;
    sdx_sampling *s;
    sdx_image img;
    cx_params(&p);
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_sampling_begin(m, &p, cond, 0, &s) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_sampling_step(s) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_cancel(ctx);
    T_CHECK(sdx_sampling_step(s) == SDX_ERR_CANCELLED, "the step after the cancel: %s", sdx_last_error(ctx));
    T_CHECK(!strcmp(sdx_last_error(ctx), "cancelled (sdx_cancel) after step 1 of 3"), "%s", sdx_last_error(ctx));
    T_CHECK(sdx_sampling_finish(s) == SDX_ERR_CANCELLED && !sdx_sampling_done(s), "the session stays cancelled");
    T_CHECK(sdx_decode_latent(m, sdx_sampling_latent(s), &p, &img) == SDX_OK, "a decode after it: %s", sdx_last_error(ctx));
    sdx_image_free(ctx, &img);
    sdx_sampling_free(s);
    T_CHECK(sdx_sampling_begin(m, &p, cond, 0, &s) == SDX_OK && sdx_sampling_finish(s) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(sdx_sampling_latent(s)->data, ref.latents[0].data, sdx_tensor_nbytes(&ref.latents[0])), "a new session's latent");
    sdx_sampling_free(s);
    sdx_cond_free(cond);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- every check of a stage, deterministically ----------------------------- */
/* The cancel comes from the allocation hook at the 1st, 2nd, ... allocation
 * of a call: each run ends OK with the undisturbed bits or CANCELLED
 * naming where, keeping no allocation; `want` must be among the places. */
typedef int (*cx_call_fn)(sdx_ctx *ctx, void *arg, sdx_image *out);

static int cx_sweep(cx_count *cnt, sdx_ctx *ctx, cx_call_fn call, void *arg, const char *want, long max) {
    sdx_image ref, out;
    long base, n, stopped = 0, seen = 0;
    int done = 0;
    cx_arm(cnt, 0);
    T_CHECK(call(ctx, arg, &ref) == SDX_OK, "undisturbed: %s", sdx_last_error(ctx));
    base = cx_live(cnt);
    for (n = 1; !done && n < max; n++) {
        int rc;
        cx_arm(cnt, n);
        rc = call(ctx, arg, &out);
        done = cnt->calls < n;
        cx_arm(cnt, 0);
        if (rc == SDX_OK) {
            T_CHECK(cx_same_image(&out, &ref), "cancel at allocation %ld: other bits", n);
            sdx_image_free(ctx, &out);
        } else {
            T_CHECK(rc == SDX_ERR_CANCELLED && cx_cancelled_msg(ctx), "cancel at allocation %ld: %d %s", n, rc, sdx_last_error(ctx));
            stopped++;
            seen += strstr(sdx_last_error(ctx), want) != NULL;
        }
        T_CHECK(cx_live(cnt) == base, "cancel at allocation %ld: %ld allocations kept", n, cx_live(cnt) - base);
    }
    T_NOTE("%ld allocations, %ld cancelled runs, %ld %s", n - 1, stopped, seen, want);
    T_CHECK(done, "more than %ld allocations", max);
    T_CHECK(seen > 0, "no run stopped %s", want);
    sdx_image_free(ctx, &ref);
    return T_PASS;
}

typedef struct cx_decode_arg { sdx_model *m; const sdx_tensor *latent; const sdx_gen_params *p; } cx_decode_arg;
static int cx_decode(sdx_ctx *ctx, void *arg, sdx_image *out) {
    const cx_decode_arg *a = (const cx_decode_arg *)arg;
    (void)ctx;
    return sdx_decode_latent(a->m, a->latent, a->p, out);
}

/* The VAE in tiles (and its mid block whole) stops between tiles. */
static int the_tiled_vae_stops_between_tiles(void) {
    CX_NEED_MODEL(cnt, ctx, m);
    sdx_gen_params p;
    sdx_gen_result ref;
    cx_decode_arg a;
    int rc;
    cx_params(&p);
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    p.vae_tiling = 1;
    p.vae_tile_width = p.vae_tile_height = 4;
    a.m = m;
    a.latent = &ref.latents[0];
    a.p = &p;
    rc = cx_sweep(&cnt, ctx, cx_decode, &a, "between the VAE's tiles", 4000);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return rc;
}

typedef struct cx_upscale_arg { sdx_upscaler *up; const sdx_image *in; } cx_upscale_arg;
static int cx_upscale(sdx_ctx *ctx, void *arg, sdx_image *out) {
    const cx_upscale_arg *a = (const cx_upscale_arg *)arg;
    (void)ctx;
    return sdx_upscale(a->up, a->in, 1, out);
}

/* The upscaler stops between its tiles (and its blocks). */
static int the_upscaler_stops_between_tiles(void) {
    T_NEED_SHARED(model, "golden/upscale/rrdb_x1.safetensors");
    T_NEED_SHARED(png, "golden/upscale/images/img_24x24.png");
    cx_count cnt;
    sdx_ctx *ctx = cx_ctx(&cnt);
    sdx_image in = t_png_load(png, 3);
    cx_upscale_arg a;
    int rc;
    T_CHECK(ctx && in.data, "setup");
    T_CHECK(sdx_upscaler_load(ctx, model, &a.up) == SDX_OK && sdx_upscaler_set_tiling(a.up, 8, 4) == SDX_OK, "%s", sdx_last_error(ctx));
    a.in = &in;
    rc = cx_sweep(&cnt, ctx, cx_upscale, &a, "upscaling, before tile", 4000);
    sdx_upscaler_free(a.up);
    stbi_image_free(in.data);
    sdx_destroy(ctx);
    return rc;
}

static const t_case cancel_cases[] = {
    { "random_cancels_from_another_thread", random_cancels_from_another_thread },
    { "a_cancel_before_a_call_does_not_reach_it", a_cancel_before_a_call_does_not_reach_it },
    { "a_cancel_stops_sampling_and_the_decode", a_cancel_stops_sampling_and_the_decode },
    { "a_session_cancelled_between_steps", a_session_cancelled_between_steps },
    { "the_tiled_vae_stops_between_tiles", the_tiled_vae_stops_between_tiles },
    { "the_upscaler_stops_between_tiles", the_upscaler_stops_between_tiles },
    { 0, 0 }
};
SDX_TEST_SUITE(cancel, cancel_cases)
