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
    snprintf(cmd, sizeof cmd, "./examples/minimal %s 'a red fox' /tmp/sdx_t_ex_minimal.png 96", ckpt);
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "minimal failed: %s", out);
    T_CHECK(ex_png_size("/tmp/sdx_t_ex_minimal.png", &w, &h) && w == 96 && h == 96, "minimal's PNG");
    remove("/tmp/sdx_t_ex_minimal.png");
    return T_PASS;
}

/* The texture and its 2x2 repeat: the repeat is the texture four times. */
static int texture_writes_a_texture_and_its_repeat(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static char out[4096], cmd[1024];
    int w, h, c, w2, h2;
    unsigned char *a, *b;
    snprintf(cmd, sizeof cmd, "./examples/texture %s 'moss' /tmp/sdx_t_ex_tex.png 64 3", ckpt);
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "texture failed: %s", out);
    a = stbi_load("/tmp/sdx_t_ex_tex.png", &w, &h, &c, 3);
    b = stbi_load("/tmp/sdx_t_ex_tex-2x2.png", &w2, &h2, &c, 3);
    T_CHECK(a && b && w == 64 && h == 64 && w2 == 128 && h2 == 128, "texture PNGs");
    for (int y = 0; y < h2; y++)
        for (int x = 0; x < w2; x++)
            T_CHECK(!memcmp(b + ((size_t)y * 128 + (size_t)x) * 3, a + ((size_t)(y % 64) * 64 + (size_t)(x % 64)) * 3, 3),
                    "repeat differs at %d,%d", x, y);
    stbi_image_free(a);
    stbi_image_free(b);
    remove("/tmp/sdx_t_ex_tex.png");
    remove("/tmp/sdx_t_ex_tex-2x2.png");
    return T_PASS;
}

/* One frame per UNet call, previews every second frame, the final image. */
static int stepper_spreads_a_generation_over_frames(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(T_WINDOWS, "the examples run through a POSIX shell");
    static char out[8192], cmd[1024];
    int w, h;
    snprintf(cmd, sizeof cmd, "./examples/stepper %s 'a castle' /tmp/sdx_t_ex_step.png 4 2", ckpt);
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "stepper failed: %s", out);
    T_CHECK(strstr(out, "frame   1 ") && strstr(out, "frame   4 ") && !strstr(out, "frame   5 ") && strstr(out, "step 4/4"),
            "frames: %s", out);
    T_CHECK(ex_png_size("/tmp/sdx_t_ex_step.png.preview-002.png", &w, &h) && w == 512, "preview of frame 2");
    T_CHECK(ex_png_size("/tmp/sdx_t_ex_step.png", &w, &h) && w == 512 && h == 512, "final image");
    remove("/tmp/sdx_t_ex_step.png");
    remove("/tmp/sdx_t_ex_step.png.preview-002.png");
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
    snprintf(cmd, sizeof cmd, "./examples/sdx -m %s -p 'a fox' -W 64 -H 64 --steps 2 -v -o /tmp/sdx_t_ex_verbose.png", ckpt);
    T_CHECK(ex_run(cmd, out, sizeof out) == 0, "sdx -v failed: %s", out);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) T_CHECK(strstr(out, want[i]), "no '%s' in: %s", want[i], out);
    rss = strstr(out, "sdx: peak RSS ");
    T_CHECK(sscanf(rss + 14, "%lf", &mib) == 1 && mib > 1 && mib < 65536, "peak RSS %g MiB", mib);
    remove("/tmp/sdx_t_ex_verbose.png");
    return T_PASS;
}

static const t_case examples_cases[] = {
    { "minimal_writes_one_png", minimal_writes_one_png },
    { "texture_writes_a_texture_and_its_repeat", texture_writes_a_texture_and_its_repeat },
    { "stepper_spreads_a_generation_over_frames", stepper_spreads_a_generation_over_frames },
    { "sdx_verbose_prints_phase_timings_and_peak_rss", sdx_verbose_prints_phase_timings_and_peak_rss },
    { 0, 0 }
};
SDX_TEST_SUITE(examples, examples_cases)
