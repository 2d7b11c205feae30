/* game.c - textures generated inside a game's frame loop. An SDL2 window
 * keeps rendering at 60 frames a second while a worker thread runs the
 * staged API (sdx_encode_prompt, sdx_sampling_begin / sdx_sampling_step,
 * sdx_decode_latent) and hands the render thread a preview after every
 * step, then the final image; the render thread shows each as a texture.
 * Esc cancels the texture being made (sdx_cancel), Space starts the next
 * one (seed + 1), closing the window quits.
 *   cc -O2 -I. examples/game.c -o game $(sdl2-config --cflags --libs) -lm -lpthread
 *   ./game -m model.safetensors -p "mossy cobblestones, top-down" [--taesd taesd_decoder.safetensors]
 * Previews decode each step's estimate of the final image with TAESD when
 * --taesd is given, else with the VAE (slower); the final image always
 * with the VAE. The GPU build (make game-hip: -DSDX_WITH_HIP, linked with
 * examples/sdx_hip.cu) generates on the GPU.
 * For tests without a screen (under Xvfb): --frames N quits N frames after
 * the first texture is done or cancelled, --screenshot out.bmp saves that
 * last frame, --esc-at-step K presses Esc when step K's preview arrives,
 * --timeout S gives up after S seconds. The last lines printed say where
 * the texture is on screen and the longest frame while it was made. */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#ifdef SDX_WITH_HIP
#include "sdx_hip.h"
#endif
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_W 512
#define WIN_H 320
#define AREA 256          /* the texture's square on screen, at (MARGIN, MARGIN) */
#define MARGIN 32

enum { JOB_NONE, JOB_RUNNING, JOB_DONE, JOB_CANCELLED, JOB_FAILED };
static const char *const job_state_names[] = { "none", "running", "done", "cancelled", "failed" };

/* What the two threads share, under `lock`; each holds it for a few
 * assignments only (a picture changes hands as a pointer), so the worker
 * never stalls a frame. */
typedef struct mailbox {
    SDL_mutex *lock;
    SDL_cond *wake;            /* the worker waits on it for a job */
    /* render thread -> worker */
    int jobs_wanted;           /* jobs asked for so far (Space adds one) */
    int cancel_job;            /* the job Esc cancelled */
    int quit;
    /* worker -> render thread */
    uint8_t *pixels;           /* newest RGB picture not yet taken (malloc) */
    int w, h, final;
    int job, state, step, steps;
    char error[1024];
} mailbox;

typedef struct options {
    sdx_model_desc md;
    sdx_gen_params gp;
    int threads, frames, esc_at_step;
    double timeout;
    const char *screenshot;
} options;

typedef struct app {
    options o;
    sdx_ctx *ctx;
    sdx_model *model;
    mailbox mb;
} app;

/* ---- the worker ------------------------------------------------------------ */

/* Esc for this job, or quitting: the worker checks between its calls, as
 * a cancel made while no call runs does not reach the next one. */
static int stop_requested(app *a, int job) {
    int stop;
    SDL_LockMutex(a->mb.lock);
    stop = a->mb.quit || a->mb.cancel_job == job;
    SDL_UnlockMutex(a->mb.lock);
    return stop;
}

/* Hands a copy of img to the render thread, replacing one it has not
 * taken yet. */
static void post_picture(app *a, const sdx_image *img, int step, int steps, int final) {
    size_t n = (size_t)img->width * (size_t)img->height * 3;
    uint8_t *copy = (uint8_t *)malloc(n), *old;
    if (!copy) return;
    memcpy(copy, img->data, n);
    SDL_LockMutex(a->mb.lock);
    old = a->mb.pixels;
    a->mb.pixels = copy;
    a->mb.w = img->width;
    a->mb.h = img->height;
    a->mb.final = final;
    a->mb.step = step;
    a->mb.steps = steps;
    SDL_UnlockMutex(a->mb.lock);
    free(old);
}

/* Decodes latent with `codec` and posts it, unless the job is stopped. */
static int post_decoded(app *a, int job, const sdx_tensor *latent, sdx_codec codec, int step, int steps, int final) {
    sdx_gen_params p = a->o.gp;
    sdx_image img;
    int rc;
    p.codec = codec;
    if (stop_requested(a, job)) return SDX_ERR_CANCELLED;
    if ((rc = sdx_decode_latent(a->model, latent, &p, &img)) != SDX_OK) return rc;
    post_picture(a, &img, step, steps, final);
    sdx_image_free(a->ctx, &img);
    return SDX_OK;
}

static void run_job(app *a, int job) {
    sdx_gen_params gp = a->o.gp;
    sdx_codec preview = a->o.md.taesd[0] ? SDX_CODEC_TAESD : SDX_CODEC_VAE;
    sdx_cond *cond = NULL;
    sdx_sampling *s = NULL;
    int rc = SDX_OK, shown = 0, total = 0;
    gp.seed += job - 1;
    if (stop_requested(a, job)) rc = SDX_ERR_CANCELLED;
    if (rc == SDX_OK) rc = sdx_encode_prompt(a->model, &gp, &cond);
    if (rc == SDX_OK && stop_requested(a, job)) rc = SDX_ERR_CANCELLED;
    if (rc == SDX_OK) rc = sdx_sampling_begin(a->model, &gp, cond, 0, &s);
    while (rc == SDX_OK && !sdx_sampling_done(s)) {
        int step;
        if (stop_requested(a, job)) { rc = SDX_ERR_CANCELLED; break; }
        if ((rc = sdx_sampling_step(s)) != SDX_OK) break;          /* one model evaluation */
        step = sdx_sampling_steps(s, &total);
        if (step > shown && !sdx_sampling_done(s)) rc = post_decoded(a, job, sdx_sampling_denoised(s), preview, step, total, 0);
        shown = step;
    }
    if (rc == SDX_OK) rc = post_decoded(a, job, sdx_sampling_latent(s), SDX_CODEC_VAE, total, total, 1);
    SDL_LockMutex(a->mb.lock);
    a->mb.state = rc == SDX_OK ? JOB_DONE : rc == SDX_ERR_CANCELLED ? JOB_CANCELLED : JOB_FAILED;
    if (rc != SDX_OK) snprintf(a->mb.error, sizeof a->mb.error, "%s", sdx_last_error(a->ctx));
    SDL_UnlockMutex(a->mb.lock);
    sdx_sampling_free(s);
    sdx_cond_free(cond);
}

static int worker_main(void *arg) {
    app *a = (app *)arg;
    int job = 0;
    for (;;) {
        SDL_LockMutex(a->mb.lock);
        while (!a->mb.quit && a->mb.jobs_wanted == job) SDL_CondWait(a->mb.wake, a->mb.lock);
        if (a->mb.quit) { SDL_UnlockMutex(a->mb.lock); break; }
        a->mb.job = ++job;
        a->mb.state = JOB_RUNNING;
        a->mb.step = 0;
        SDL_UnlockMutex(a->mb.lock);
        run_job(a, job);
    }
    return 0;
}

/* ---- the render thread ------------------------------------------------------ */

typedef struct view {
    SDL_Renderer *r;
    SDL_Texture *tex;
    int tw, th;                /* the texture's size */
    SDL_Rect at;               /* where it is drawn */
    int job, state, step, steps, final;
    char error[1024];
} view;

/* Where a w x h picture goes in the square: the largest whole scale
 * (nearest texels, exact pixels), or scaled down to fit. */
static SDL_Rect place(int w, int h) {
    SDL_Rect r;
    int s = AREA / (w > h ? w : h);
    r.w = s ? w * s : (w >= h ? AREA : AREA * w / h);
    r.h = s ? h * s : (h >= w ? AREA : AREA * h / w);
    r.x = MARGIN + (AREA - r.w) / 2;
    r.y = MARGIN + (AREA - r.h) / 2;
    return r;
}

/* Takes the newest picture and the job's state; the texture upload
 * happens after the lock is released. Returns 1 when a picture came. */
static int take_picture(app *a, view *v) {
    uint8_t *pixels;
    int w, h;
    SDL_LockMutex(a->mb.lock);
    pixels = a->mb.pixels;
    a->mb.pixels = NULL;
    w = a->mb.w;
    h = a->mb.h;
    if (pixels) {
        v->final = a->mb.final;
        v->step = a->mb.step;
        v->steps = a->mb.steps;
    }
    v->job = a->mb.job;
    v->state = a->mb.state;
    memcpy(v->error, a->mb.error, sizeof v->error);
    SDL_UnlockMutex(a->mb.lock);
    if (!pixels) return 0;
    if (!v->tex || v->tw != w || v->th != h) {
        if (v->tex) SDL_DestroyTexture(v->tex);
        v->tex = SDL_CreateTexture(v->r, SDL_PIXELFORMAT_RGB24, SDL_TEXTUREACCESS_STREAMING, w, h);
        if (v->tex) SDL_SetTextureScaleMode(v->tex, SDL_ScaleModeNearest);
        v->tw = w;
        v->th = h;
        v->at = place(w, h);
    }
    if (v->tex) SDL_UpdateTexture(v->tex, NULL, pixels, w * 3);
    free(pixels);
    return 1;
}

static void draw(const view *v, long frame) {
    SDL_Rect area = { MARGIN - 2, MARGIN - 2, AREA + 4, AREA + 4 }, bar = { 2 * MARGIN + AREA, MARGIN, 160, 16 }, fill = bar;
    SDL_Rect blip = { 0, WIN_H - 24, 16, 16 };
    SDL_SetRenderDrawColor(v->r, 24, 26, 32, 255);
    SDL_RenderClear(v->r);
    SDL_SetRenderDrawColor(v->r, 90, 90, 100, 255);
    SDL_RenderDrawRect(v->r, &area);
    if (v->tex) SDL_RenderCopy(v->r, v->tex, NULL, &v->at);
    /* the job's progress, coloured by its state */
    SDL_RenderDrawRect(v->r, &bar);
    fill.w = v->steps ? bar.w * v->step / v->steps : 0;
    if (v->state == JOB_CANCELLED || v->state == JOB_FAILED) SDL_SetRenderDrawColor(v->r, 200, 60, 50, 255);
    else if (v->state == JOB_DONE) SDL_SetRenderDrawColor(v->r, 70, 130, 220, 255);
    else SDL_SetRenderDrawColor(v->r, 80, 200, 100, 255);
    SDL_RenderFillRect(v->r, &fill);
    /* something that moves every frame, so a stalled frame shows */
    blip.x = (int)(frame * 4 % (WIN_W - blip.w));
    SDL_SetRenderDrawColor(v->r, 230, 200, 60, 255);
    SDL_RenderFillRect(v->r, &blip);
}

/* The frame being drawn (before SDL_RenderPresent) as a 24-bit BMP. */
static int save_screenshot(SDL_Renderer *r, const char *path) {
    int w, h, ok = 0;
    uint8_t *px;
    SDL_Surface *s;
    if (SDL_GetRendererOutputSize(r, &w, &h) != 0 || !(px = (uint8_t *)malloc((size_t)w * (size_t)h * 3))) return 0;
    if (SDL_RenderReadPixels(r, NULL, SDL_PIXELFORMAT_RGB24, px, w * 3) == 0 &&
        (s = SDL_CreateRGBSurfaceWithFormatFrom(px, w, h, 24, w * 3, SDL_PIXELFORMAT_RGB24)) != NULL) {
        ok = SDL_SaveBMP(s, path) == 0;
        SDL_FreeSurface(s);
    }
    free(px);
    return ok;
}

static void press_escape(void) {
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.keysym.sym = SDLK_ESCAPE;
    SDL_PushEvent(&e);
}

/* Esc: the job running now stops, between the worker's calls or inside
 * one (sdx_cancel, safe from any thread). */
static void cancel_job(app *a) {
    SDL_LockMutex(a->mb.lock);
    if (a->mb.state == JOB_RUNNING) a->mb.cancel_job = a->mb.job;
    SDL_UnlockMutex(a->mb.lock);
    sdx_cancel(a->ctx);
}

static void new_job(app *a) {
    SDL_LockMutex(a->mb.lock);
    a->mb.jobs_wanted++;
    SDL_CondSignal(a->mb.wake);
    SDL_UnlockMutex(a->mb.lock);
}

/* The frame loop; returns the exit status. */
static int run_frames(app *a, SDL_Window *win, SDL_Renderer *r) {
    view v;
    Uint64 freq = SDL_GetPerformanceFrequency(), start = SDL_GetPerformanceCounter(), prev = start;
    double longest = 0, busy_sum = 0;
    long frame = 0, busy_frames = 0, after_end = -1;
    int title_step = -1, title_state = -1, status = 0;
    memset(&v, 0, sizeof v);
    v.r = r;
    for (;;) {
        Uint64 now = SDL_GetPerformanceCounter();
        double dt = (double)(now - prev) / (double)freq;
        SDL_Event e;
        int last;
        if (frame > 0 && v.state == JOB_RUNNING) {    /* a frame of the loop while the worker generates */
            busy_frames++;
            busy_sum += dt;
            if (dt > longest) longest = dt;
        }
        prev = now;
        while (SDL_PollEvent(&e)) {
            if (e.type == SDL_QUIT) after_end = a->o.frames = 0;
            if (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_ESCAPE) cancel_job(a);
            if (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_SPACE) new_job(a);
        }
        if (take_picture(a, &v)) {
            printf("game: job %d %s %d/%d\n", v.job, v.final ? "final image" : "preview after step", v.step, v.steps);
            if (!v.final && v.step == a->o.esc_at_step) press_escape();
        }
        if (v.state != title_state || v.step != title_step) {
            char title[128];
            snprintf(title, sizeof title, "sdx game - texture %d: %s, step %d/%d", v.job, job_state_names[v.state], v.step, v.steps);
            SDL_SetWindowTitle(win, title);
            if (v.state == JOB_DONE || v.state == JOB_CANCELLED) printf("game: job %d %s at step %d/%d\n", v.job, job_state_names[v.state], v.step, v.steps);
            if (v.state == JOB_FAILED) { printf("game: job %d failed: %s\n", v.job, v.error); status = 1; }
            title_state = v.state;
            title_step = v.step;
        }
        if (after_end < 0 && v.state > JOB_RUNNING && a->o.frames > 0) after_end = 0;
        last = after_end >= a->o.frames || (after_end < 0 && a->o.frames > 0 && a->o.timeout > 0 &&
                                            (double)(now - start) / (double)freq > a->o.timeout);
        draw(&v, frame);
        if (last && a->o.screenshot) {
            if (save_screenshot(r, a->o.screenshot)) printf("game: screenshot %s\n", a->o.screenshot);
            else { fprintf(stderr, "game: screenshot: %s\n", SDL_GetError()); status = 1; }
        }
        SDL_RenderPresent(r);
        frame++;
        if (after_end >= 0) after_end++;
        if (last) break;
        now = SDL_GetPerformanceCounter();   /* 60 frames a second */
        if ((double)(now - prev) / (double)freq < 1.0 / 60) SDL_Delay((Uint32)((1.0 / 60 - (double)(now - prev) / (double)freq) * 1000));
    }
    if (after_end < 0 && a->o.frames > 0) { printf("game: timed out after %g s\n", a->o.timeout); status = 1; }
    if (v.tex) printf("game: texture %dx%d at %d,%d size %dx%d\n", v.tw, v.th, v.at.x, v.at.y, v.at.w, v.at.h);
    printf("game: %ld frames, %ld while generating: longest %.1f ms, mean %.1f ms\n", frame, busy_frames, longest * 1e3,
           busy_frames ? busy_sum / (double)busy_frames * 1e3 : 0.0);
    if (v.tex) SDL_DestroyTexture(v.tex);
    return status;
}

/* ---- setup --------------------------------------------------------------------- */

static int parse(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->gp.prompt = "mossy cobblestones, top-down, game texture";
    o->gp.width = o->gp.height = 512;
    o->gp.steps = 8;
    o->gp.seed = 1;
    o->esc_at_step = -1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!v) takes = 0;
        else if (!strcmp(f, "-m")) o->md.checkpoint = v;
        else if (!strcmp(f, "--vocab")) o->md.vocab = v;
        else if (!strcmp(f, "--taesd")) o->md.taesd[0] = v;
        else if (!strcmp(f, "-p")) o->gp.prompt = v;
        else if (!strcmp(f, "-n")) o->gp.negative_prompt = v;
        else if (!strcmp(f, "-W")) o->gp.width = atoi(v);
        else if (!strcmp(f, "-H")) o->gp.height = atoi(v);
        else if (!strcmp(f, "--steps")) o->gp.steps = atoi(v);
        else if (!strcmp(f, "--cfg")) o->gp.cfg_scale = (float)atof(v);
        else if (!strcmp(f, "--sampler")) o->gp.sampler = v;
        else if (!strcmp(f, "-s")) o->gp.seed = atoll(v);
        else if (!strcmp(f, "-t")) o->threads = atoi(v);
        else if (!strcmp(f, "--frames")) o->frames = atoi(v);
        else if (!strcmp(f, "--screenshot")) o->screenshot = v;
        else if (!strcmp(f, "--esc-at-step")) o->esc_at_step = atoi(v);
        else if (!strcmp(f, "--timeout")) o->timeout = atof(v);
        else takes = 0;
        if (!takes) {
            fprintf(stderr, "usage: %s -m MODEL [--vocab DIR] [--taesd FILE] [-p PROMPT] [-n NEGATIVE] [-W N] [-H N]\n"
                            "       [--steps N] [--cfg F] [--sampler S] [-s SEED] [-t THREADS]\n"
                            "       [--frames N] [--screenshot OUT.bmp] [--esc-at-step K] [--timeout S]\n", argv[0]);
            return 0;
        }
        i++;
    }
    if (!o->md.checkpoint) { fprintf(stderr, "%s: no model given (-m MODEL)\n", argv[0]); return 0; }
    return 1;
}

static int load(app *a) {
    sdx_desc desc;
    memset(&desc, 0, sizeof desc);
    /* one core stays with the frame loop */
    desc.n_threads = a->o.threads > 0 ? a->o.threads : (SDL_GetCPUCount() > 1 ? SDL_GetCPUCount() - 1 : 1);
    if (!(a->ctx = sdx_create(&desc))) return 0;
#ifdef SDX_WITH_HIP
    if (sdx_hip_use(a->ctx, 0) != SDX_OK) fprintf(stderr, "game: %s; generating on the CPU\n", sdx_last_error(a->ctx));
#endif
    if (sdx_model_load(a->ctx, &a->o.md, &a->model) != SDX_OK) {
        fprintf(stderr, "game: %s\n", sdx_last_error(a->ctx));
        return 0;
    }
    printf("game: %s on %s, %d threads\n", sdx_model_name(a->model), sdx_backend_name(a->ctx), sdx_threads(a->ctx));
    return 1;
}

int main(int argc, char **argv) {
    static app a;
    SDL_Window *win = NULL;
    SDL_Renderer *r = NULL;
    SDL_Thread *worker = NULL;
    int status = 1;
    if (!parse(argc, argv, &a.o)) return 2;
    if (SDL_Init(SDL_INIT_VIDEO) != 0) { fprintf(stderr, "game: SDL_Init: %s\n", SDL_GetError()); return 1; }
    if (load(&a) && (a.mb.lock = SDL_CreateMutex()) && (a.mb.wake = SDL_CreateCond()) &&
        (win = SDL_CreateWindow("sdx game", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, WIN_W, WIN_H, 0)) &&
        (r = SDL_CreateRenderer(win, -1, 0)) && (worker = SDL_CreateThread(worker_main, "sdx worker", &a))) {
        new_job(&a);
        status = run_frames(&a, win, r);
        SDL_LockMutex(a.mb.lock);    /* stop the worker: between its calls, and inside one */
        a.mb.quit = 1;
        SDL_CondSignal(a.mb.wake);
        SDL_UnlockMutex(a.mb.lock);
        sdx_cancel(a.ctx);
        SDL_WaitThread(worker, NULL);
    } else if (a.ctx && a.model) {
        fprintf(stderr, "game: SDL: %s\n", SDL_GetError());
    }
    free(a.mb.pixels);
    if (r) SDL_DestroyRenderer(r);
    if (win) SDL_DestroyWindow(win);
    if (a.mb.wake) SDL_DestroyCond(a.mb.wake);
    if (a.mb.lock) SDL_DestroyMutex(a.mb.lock);
    sdx_model_free(a.model);
    sdx_destroy(a.ctx);
    SDL_Quit();
    return status;
}
