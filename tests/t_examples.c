/* Suite "examples": the example programs build (make) and do what their
 * headers promise, on the tiny test checkpoint. */
#include "test.h"
#include <stb/stb_image.h>

static int ex_run(const char *cmd, char *out, size_t size) {
    static char full[4096];
    snprintf(full, sizeof full, "SDX_VOCAB=%s/vocab %s 2>&1", t_shared_dir(), cmd);
    return t_shell(full, out, size);
}

static int ex_png_size(const char *path, int *w, int *h) {
    int c;
    unsigned char *px = stbi_load(path, w, h, &c, 3);
    if (!px) return 0;
    stbi_image_free(px);
    return 1;
}

static int minimal_writes_one_png(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static char out[4096], cmd[1024];
    int w, h;
    /* 20 steps at the default 512x512 take minutes with the tiny model */
    snprintf(cmd, sizeof cmd, "./examples/minimal %s 'a red fox' '%s' 96", ckpt, t_tmp("sdx_t_ex_minimal.png"));
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "minimal failed: %s", out);
    T_CHECK(ex_png_size(t_tmp("sdx_t_ex_minimal.png"), &w, &h) && w == 96 && h == 96, "minimal's PNG");
    remove(t_tmp("sdx_t_ex_minimal.png"));
    return T_PASS;
}

/* The texture and its 2x2 repeat: the repeat is the texture four times. */
static int texture_writes_a_texture_and_its_repeat(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static char out[4096], cmd[1024];
    int w, h, c, w2, h2;
    unsigned char *a, *b;
    snprintf(cmd, sizeof cmd, "./examples/texture %s 'moss' '%s' 64 3", ckpt, t_tmp("sdx_t_ex_tex.png"));
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "texture failed: %s", out);
    a = stbi_load(t_tmp("sdx_t_ex_tex.png"), &w, &h, &c, 3);
    b = stbi_load(t_tmp("sdx_t_ex_tex-2x2.png"), &w2, &h2, &c, 3);
    T_CHECK(a && b && w == 64 && h == 64 && w2 == 128 && h2 == 128, "texture PNGs");
    for (int y = 0; y < h2; y++)
        for (int x = 0; x < w2; x++)
            T_CHECK(!memcmp(b + ((size_t)y * 128 + (size_t)x) * 3, a + ((size_t)(y % 64) * 64 + (size_t)(x % 64)) * 3, 3),
                    "repeat differs at %d,%d", x, y);
    stbi_image_free(a);
    stbi_image_free(b);
    remove(t_tmp("sdx_t_ex_tex.png"));
    remove(t_tmp("sdx_t_ex_tex-2x2.png"));
    return T_PASS;
}

/* One frame per UNet call, previews every second frame, the final image. */
static int stepper_spreads_a_generation_over_frames(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static char out[8192], cmd[1024];
    int w, h;
    snprintf(cmd, sizeof cmd, "./examples/stepper %s 'a castle' '%s' 4 2", ckpt, t_tmp("sdx_t_ex_step.png"));
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "stepper failed: %s", out);
    T_CHECK(strstr(out, "frame   1 ") && strstr(out, "frame   4 ") && !strstr(out, "frame   5 ") && strstr(out, "step 4/4"),
            "frames: %s", out);
    T_CHECK(ex_png_size(t_tmp("sdx_t_ex_step.png.preview-002.png"), &w, &h) && w == 512, "preview of frame 2");
    T_CHECK(ex_png_size(t_tmp("sdx_t_ex_step.png"), &w, &h) && w == 512 && h == 512, "final image");
    remove(t_tmp("sdx_t_ex_step.png"));
    remove(t_tmp("sdx_t_ex_step.png.preview-002.png"));
    return T_PASS;
}

/* sdx -v prints sd-cli's timings: load, text encoding, every step, each
 * phase per image, the total and the peak RSS. */
static int sdx_verbose_prints_phase_timings_and_peak_rss(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static char out[8192], cmd[1024];
    static const char *const want[] = { "sdx: load: ", "sdx: text encoding: ", "sdx: image 1 step 1/2: ", "sdx: image 1 step 2/2: ",
                                        "sdx: image 1 sampling: ", "sdx: image 1 VAE decode: ", "sdx: total ", "s/step), VAE decode ",
                                        "sdx: peak RSS " };
    double mib = 0;
    const char *rss;
    snprintf(cmd, sizeof cmd, "./examples/sdx -m %s -p 'a fox' -W 64 -H 64 --steps 2 -v -o '%s'", ckpt, t_tmp("sdx_t_ex_verbose.png"));
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "sdx -v failed: %s", out);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) T_CHECK(strstr(out, want[i]), "no '%s' in: %s", want[i], out);
    rss = strstr(out, "sdx: peak RSS ");
    T_CHECK(sscanf(rss + 14, "%lf", &mib) == 1 && mib > 1 && mib < 65536, "peak RSS %g MiB", mib);
    remove(t_tmp("sdx_t_ex_verbose.png"));
    return T_PASS;
}

/* Runs ./examples/sdx with args; its exit status, stdout and stderr in out. */
static int ex_sdx(const char *args, char *out, size_t size) {
    static char cmd[2048];
    snprintf(cmd, sizeof cmd, "./examples/sdx %s", args);
    return ex_run(cmd, out, size);
}

/* A bad command line exits 2 with one line naming the flag, before any
 * file is read (none of these files exist). */
static int sdx_rejects_a_bad_command_line_with_exit_2(void) {
    static const struct { const char *args, *says; } bad[] = {
        { "-p x --bogus", "sdx: unknown option --bogus (see --help)\n" },
        { "-p x stray.png", "sdx: unknown option stray.png (see --help)\n" },
        { "-p x -W=64", "sdx: unknown option -W=64 (see --help)\n" },
        { "-p x --steps", "sdx: --steps needs a value\n" },
        { "-p x --cfg", "sdx: --cfg needs a value\n" },
        { "-p x --circular=1", "sdx: --circular takes no value\n" },
        { "-p x --bogus=1", "sdx: --bogus takes no value\n" },
        { "-p x -W 1000001", "sdx: -W 1000001: not an integer in range\n" },
        { "-p x --height=-2", "sdx: --height -2: not an integer in range\n" },
        { "-p x -b 0", "sdx: -b 0: must be positive\n" },
        { "-p x -t 1.5", "sdx: -t 1.5: not an integer in range\n" },
        { "-p x --cfg 1.5x", "sdx: --cfg-scale 1.5x: not a number\n" },    /* an alias goes by its --help name */
        { "-p x --strength 0", "sdx: --strength 0: must be in (0, 1]\n" },
        { "-p x --vae-tile-overlap 1", "sdx: --vae-tile-overlap 1: must be in [0, 1)\n" },
        { "-p x --canny-high 100001", "sdx: --canny-high 100001: must be in [0, 100000]\n" },
        { "-p x --control-strength 11", "sdx: --control-strength 11: must be in [0, 10]\n" },
        { "-p x -s -2", "sdx: --seed -2: not an integer >= -1\n" },
        { "-p x --encode-seed -1", "sdx: --encode-seed -1: not an integer >= 0\n" },
        { "-p x --mask-blur 1001", "sdx: --mask-blur 1001: not an integer in 0..1000\n" },
        { "-p x --rng gpu", "sdx: --rng gpu: valid values are cuda, cpu\n" },
        { "-p x --timesteps 999,,499", "sdx: --timesteps 999,,499: expected integers in 0..999 separated by commas (at most 1000)\n" },
        { "-p x --timesteps 1000", "sdx: --timesteps 1000: expected integers in 0..999 separated by commas (at most 1000)\n" },
        { "-p x --sigmas 14.6,x,0", "sdx: --sigmas 14.6,x,0: expected numbers separated by commas (at most 1000)\n" },
        { "-p x --eta 1.5", "sdx: --eta 1.5: must be in [0, 1]\n" },
        { "-p x --preview proj", "sdx: --preview proj (a linear latent-to-RGB projection) is not supported; use tae or vae\n" },
        { "-p x --tae a --taesd b --tae c", "sdx: --taesd given more than twice (a decoder and an encoder)\n" },
        { "-p x --mode nope", "sdx: -M nope: valid modes are img_gen, decode, encode, convert, upscale\n" },
        { "-p x --vae-tile-size 0x8", "sdx: --vae-tile-size 0x8: expected N or WxH, positive latent pixels\n" },
        { "-p x --lora a.safetensors:1:2 --lora :1", "sdx: --lora :1: expected FILE[:unet_strength[:clip_strength]] (at most 64)\n" },
        { "-p x --control-net 1 --control-net 2 --control-net 3 --control-net 4 --control-net 5 --control-net 6 "
          "--control-net 7 --control-net 8 --control-net 9", "sdx: --control-net: at most 8 ControlNets\n" },
        { "-p x", "sdx: no model given (-m PATH); see --help\n" },
        { "-m m.safetensors", "sdx: no prompt given (-p TEXT); see --help\n" },
        { "-M convert -m m.safetensors --lora l.safetensors", "sdx: -M convert needs -o OUT.safetensors\n" },
        { "-M decode --taesd t.safetensors", "sdx: -M decode needs --latent-in PATH\n" },
        { "-m m.safetensors -p x --control-net n.safetensors --control-image c.png --control-start 0.5 --control-end 0.5",
          "sdx: ControlNet 1: --control-start 0.5 must be below --control-end 0.5\n" },
    };
    static char out[8192];
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ex_sdx(bad[i].args, out, sizeof out);
        T_CHECK(rc == 2 && !strcmp(out, bad[i].says), "'%s': exit %d, said '%s', not '%s'", bad[i].args, rc, out, bad[i].says);
    }
    return T_PASS;
}

/* Every spelling --help leaves out, and --flag=value, reach the checks of
 * the whole line (here: no model given) instead of "unknown option". */
static int sdx_takes_the_aliases_and_flag_equals_value(void) {
    static char out[8192];
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    T_CHECK(ex_sdx("-p x --sampler=euler --schedule discrete --cfg 5 --tae t.safetensors --scan --trace --low-memory "
                   "--width=64 --prompt= --negative-prompt=a=b --lora=x.safetensors:0.5:1 --control-strength=1",
                   out, sizeof out) == 2 && !strcmp(out, "sdx: no model given (-m PATH); see --help\n"), "%s", out);
    return T_PASS;
}

/* --help lists every option, in sections, the further lines of a help
 * text under its first. */
static int sdx_help_lists_every_option(void) {
    static const char *const listed[] = {
        "  -M, --mode MODE           img_gen (default)", "\nModel\n", "  -m, --model PATH          single-file",
        "      --vae PATH  ", "      --taesd PATH  ", "      --taesd-preview-only  use", "      --vocab PATH  ",
        "      --prediction TYPE  ", "      --scan-weights  ", "      --compute {f32,bf16}  ", "      --lora FILE[:U[:C]]   ",
        "      --lora-model-dir DIR  ", "      --embd-dir DIR  ", "\nGeneration\n", "  -p, --prompt TEXT  ",
        "  -n, --negative-prompt T   ", "  -W, --width N  ", "  -H, --height N  ", "      --steps N  ", "      --cfg-scale F  ",
        "      --sampling-method S   ", "      --scheduler S  ", "      --timesteps T,T,...   ", "      --sigmas S,S,...  ",
        "      --eta G  ", "  -s, --seed N  ", "      --rng {cuda,cpu}  ",
        "      --clip-skip N  ", "  -b, --batch-count N  ", "\nimg2img and inpainting", "  -i, --init-img PATH  ",
        "      --init-latent PATH  ", "      --mask PATH  ", "      --strength F  ", "      --encode-seed N  ",
        "      --paste-back  ", "      --mask-blur N  ", "\nControlNet", "      --control-net PATH  ", "      --control-image PATH  ",
        "      --control-strength F  ", "      --control-start F  ", "      --control-end F  ", "      --canny  ",
        "      --canny-low F  ", "      --canny-high F  ", "\nOutput and run\n", "  -o, --output PATH  ", "      --output-latent PATH  ",
        "      --latent-in PATH  ", "      --preview MODE  ", "      --preview-path PATH  ", "      --preview-interval N  ",
        "      --preview-noisy  ", "      --vae-tiling  ", "      --vae-tile-size N|WxH largest", "      --vae-tile-overlap F  ",
        "      --circular  ", "      --low-mem  ", "  -t, --threads N  ", "      --backend B  ", "      --trace-nonfinite  ", "      --quant-exact  ",
        "  -v, --verbose  ", "  -h, --help                this text\n",
        "\n                            the --lora files merged to -o OUT.safetensors)\n",
        "\nUpscaling (-M upscale)\n", "      --upscale-model PATH  ", "      --upscale-repeats N   ",
    };
    static char out[16384];
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    T_CHECK(ex_sdx("--help", out, sizeof out) == 0 && !strncmp(out, "usage: sdx -m MODEL -p PROMPT [options]\n", 40), "%s", out);
    for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++) T_CHECK(strstr(out, listed[i]), "--help lacks '%s'", listed[i]);
    T_CHECK(ex_sdx("-h --bogus", out, sizeof out) == 0, "-h stops before the rest: %s", out);
    return T_PASS;
}

/* ---- examples/game (SDL2) under Xvfb ------------------------------------------- */

/* Why examples/game cannot run here, or NULL. */
static const char *ex_game_missing(const char *binary) {
    static char out[256];
    if (T_WINDOWS) return "the examples run through a POSIX shell";
    if (!t_file_exists(binary)) return "examples/game not built: no SDL2 (Debian: libsdl2-dev; make builds it when sdl2-config finds it)";
    if (t_shell("command -v xvfb-run", out, sizeof out) != 0) return "no xvfb-run (Debian: xvfb, xauth)";
    return NULL;
}

/* Runs a game binary under Xvfb with the tiny model, 64x64 in 3 steps,
 * more options in `args`: its exit status, its output in out. SDL draws
 * with its software renderer and no GL (exact pixels; Mesa's threads
 * would be noise under ThreadSanitizer). */
static int ex_game(const char *binary, const char *ckpt, const char *args, char *out, size_t size) {
    static char cmd[2048];
    snprintf(cmd, sizeof cmd, "TSAN_OPTIONS=halt_on_error=1 xvfb-run -a -s '-screen 0 640x480x24' env SDL_RENDER_DRIVER=software "
             "SDL_FRAMEBUFFER_ACCELERATION=0 %s -m %s -p 'a castle' -n blurry -W 64 -H 64 --steps 3 -s 5 --timeout 600 %s",
             binary, ckpt, args);
    return ex_run(cmd, out, size);
}

/* The frame loop renders while the worker generates: a preview after each
 * step, then the final image, which is on screen (the screenshot's
 * texels are sdx_generate's image of the same parameters, bit for bit).
 * Notes the longest frame while the worker generated. */
static int game_shows_the_generated_texture_while_rendering(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    const char *missing = ex_game_missing("examples/game");
    static char out[16384];
    char args[1200];
    sdx_gen_params p;
    sdx_gen_result ref;
    const char *at, *frames;
    unsigned char *shot;
    int tw = 0, th = 0, x0 = 0, y0 = 0, w = 0, h = 0, sw, sh, c, worst = 0;
    long n = 0, busy = 0;
    double longest = 0, mean = 0;
    T_SKIP_IF(missing, "%s", missing);
    snprintf(args, sizeof args, "--frames 5 --screenshot '%s'", t_tmp("sdx_t_ex_game.bmp"));
    T_CHECK(ex_game("./examples/game", ckpt, args, out, sizeof out) == 0, "game: %s", out);
    T_CHECK(strstr(out, "game: job 1 preview after step 1/3") && strstr(out, "game: job 1 preview after step 2/3") &&
            strstr(out, "game: job 1 final image 3/3") && strstr(out, "game: job 1 done at step 3/3"), "%s", out);
    at = strstr(out, "game: texture ");
    frames = strstr(out, " while generating: longest ");
    T_CHECK(at && sscanf(at, "game: texture %dx%d at %d,%d size %dx%d", &tw, &th, &x0, &y0, &w, &h) == 6 && tw == 64 && th == 64 &&
            w == 256 && h == 256, "%s", out);
    while (frames && frames > out && frames[-1] != '\n') frames--;   /* "game: N frames, M while generating: ..." */
    T_CHECK(frames && sscanf(frames, "game: %ld frames, %ld while generating: longest %lf ms, mean %lf", &n, &busy, &longest, &mean) == 4,
            "%s", out);
    T_NOTE("%ld of %ld frames while generating a 64x64 texture in 3 steps: longest %.1f ms, mean %.1f ms", busy, n, longest, mean);
    T_CHECK(busy > 0, "no frame while generating: %s", out);
    /* the screenshot's texels against sdx_generate's image */
    memset(&p, 0, sizeof p);
    p.prompt = "a castle";
    p.negative_prompt = "blurry";
    p.width = p.height = 64;
    p.steps = 3;
    p.seed = 5;
    {
        sdx_ctx *ctx = t_ctx();
        sdx_model *m = t_model(ctx, "sd1");
        T_CHECK(m && sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
        shot = stbi_load(t_tmp("sdx_t_ex_game.bmp"), &sw, &sh, &c, 3);
        T_CHECK(shot && sw == 512 && sh == 320, "screenshot %dx%d", sw, sh);
        for (int y = 0; y < 64; y++)
            for (int x = 0; x < 64; x++)
                for (int k = 0; k < 3; k++) {
                    int sx = x0 + x * (w / 64) + w / 128, sy = y0 + y * (h / 64) + h / 128;
                    int d = abs(shot[((size_t)sy * (size_t)sw + (size_t)sx) * 3 + (size_t)k] - ref.images[0].data[((size_t)y * 64 + (size_t)x) * 3 + (size_t)k]);
                    if (d > worst) worst = d;
                }
        stbi_image_free(shot);
        sdx_gen_result_free(ctx, &ref);
        sdx_model_free(m);
        sdx_destroy(ctx);
    }
    T_CHECK(worst == 0, "the texture on screen differs from the generated image by up to %d levels", worst);
    remove(t_tmp("sdx_t_ex_game.bmp"));
    return T_PASS;
}

/* Esc (pressed by the game itself when step 1's preview arrives) cancels
 * the texture with sdx_cancel; run under ThreadSanitizer (game-tsan), with
 * TAESD previews: the hand-offs between the threads do not race. */
static int game_escape_cancels_under_thread_sanitizer(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(taesd, "golden/taesd/taesd_decoder.safetensors");
    const char *missing = ex_game_missing("examples/game-tsan");
    static char out[16384], args[1024];
    T_SKIP_IF(missing, "%s", missing);
    snprintf(args, sizeof args, "--taesd %s --esc-at-step 1 --frames 3", taesd);
    T_CHECK(ex_game("./examples/game-tsan", ckpt, args, out, sizeof out) == 0, "game-tsan: %s", out);
    T_CHECK(strstr(out, "game: job 1 preview after step 1/3") && strstr(out, "game: job 1 cancelled at step 1/3") &&
            !strstr(out, "final image") && !strstr(out, "ThreadSanitizer"), "%s", out);
    return T_PASS;
}

static const t_case examples_cases[] = {
    { "minimal_writes_one_png", minimal_writes_one_png },
    { "texture_writes_a_texture_and_its_repeat", texture_writes_a_texture_and_its_repeat },
    { "stepper_spreads_a_generation_over_frames", stepper_spreads_a_generation_over_frames },
    { "sdx_verbose_prints_phase_timings_and_peak_rss", sdx_verbose_prints_phase_timings_and_peak_rss },
    { "sdx_rejects_a_bad_command_line_with_exit_2", sdx_rejects_a_bad_command_line_with_exit_2 },
    { "sdx_takes_the_aliases_and_flag_equals_value", sdx_takes_the_aliases_and_flag_equals_value },
    { "sdx_help_lists_every_option", sdx_help_lists_every_option },
    { "game_shows_the_generated_texture_while_rendering", game_shows_the_generated_texture_while_rendering },
    { "game_escape_cancels_under_thread_sanitizer", game_escape_cancels_under_thread_sanitizer },
    { 0, 0 }
};
SDX_TEST_SUITE(examples, examples_cases)
