/* sdx - command-line image generator on top of sdx.h.
 *
 *   sdx -m model.safetensors -p "a lighthouse at dusk" -o out.png
 *
 * Flags follow stable-diffusion.cpp's sd-cli where one exists; see --help.
 * PNG output goes through stb_image_write (Debian libstb-dev) and carries
 * the generation settings in a "parameters" text chunk, as AUTOMATIC1111
 * writes them, so other tools can read them back. */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#ifdef SDX_WITH_HIP             /* `make sdx-hip`: linked with examples/sdx_hip.cu */
#include "sdx_hip.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ctype.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>
#include <io.h>
#include <fcntl.h>
#else
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#endif
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

/* ---- the OS calls the CLI makes itself ------------------------------ */

/* Creates a new file beside `path` (never an existing name or symlink) and
 * opens it for writing; its name goes to tmp. */
static FILE *create_beside(const char *path, char *tmp, size_t size) {
#ifdef _WIN32
    for (int attempt = 0; attempt < 100; attempt++) {
        HANDLE h;
        int fd;
        snprintf(tmp, size, "%s.%lu-%d.tmp", path, (unsigned long)GetCurrentProcessId(), attempt);
        h = CreateFileA(tmp, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
        if (h == INVALID_HANDLE_VALUE) {
            if (GetLastError() == ERROR_FILE_EXISTS) continue;
            errno = EACCES;
            return NULL;
        }
        fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY);
        if (fd < 0) { CloseHandle(h); DeleteFileA(tmp); return NULL; }
        return _fdopen(fd, "wb");
    }
    errno = EEXIST;
    return NULL;
#else
    int fd;
    FILE *f;
    snprintf(tmp, size, "%s.XXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0) return NULL;
    (void)fchmod(fd, 0644);     /* mkstemp creates 0600; an image is for sharing */
    f = fdopen(fd, "wb");
    if (!f) { close(fd); remove(tmp); }
    return f;
#endif
}

/* Moves tmp over path in one step (rename does not replace on Windows). */
static int replace_file(const char *tmp, const char *path) {
#ifdef _WIN32
    if (MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return 1;
    errno = EACCES;
    return 0;
#else
    return rename(tmp, path) == 0;
#endif
}

/* ---- the command line ------------------------------------------------ */

typedef enum { MODE_IMG_GEN, MODE_DECODE, MODE_ENCODE, MODE_UPSCALE } run_mode;
#define MAX_LORAS 64

typedef struct lora_arg { char path[4096]; float unet, te; } lora_arg;

/* the Nth --control-image / -strength / -start / -end go with the Nth --control-net */
#define MAX_CONTROLS 8
typedef struct path_list { const char *path[MAX_CONTROLS]; int n; } path_list;
#define MAX_SCHEDULE 1000       /* --timesteps / --sigmas values */
typedef struct number_list { float value[MAX_CONTROLS]; int n; } number_list;

typedef struct options {
    sdx_model_desc model;
    sdx_gen_params gen;
    const char *init_path, *mask_path, *init_latent_path, *output, *latent_output, *latent_input, *preview_path, *backend;
    const char *upscale_model;
    int upscale_repeats;
    run_mode mode;
    int threads, verbose, trace, n_taesd, convert, quant_exact;
    sdx_convert_params convert_to;  /* -M convert's --type and --tensor-type-rules */
    lora_arg loras[MAX_LORAS];
    int n_loras;
    path_list control_net, control_image;
    number_list control_strength, control_start, control_end;
    int canny;
    float canny_low, canny_high;
    float vae_tile_overlap;     /* accepted for sd-cli scripts; sdx's tiles need none */
    int timesteps[MAX_SCHEDULE];   /* gen.timesteps / gen.sigmas point here */
    float sigmas[MAX_SCHEDULE];
} options;

/* How an option stores its value at `at`, an offset into `options`. */
typedef enum {
    OPT_SWITCH,         /* takes no value: sets an int to 1 */
    OPT_STRING,         /* keeps the value itself (it points into argv) */
    OPT_INT,            /* an integer in -1..1000000 */
    OPT_POSITIVE,       /* the same, above 0 */
    OPT_NUMBER,         /* a float within `range`, written as the error message shows it ("(0, 1]"); no range: any number */
    OPT_NET_PATH,       /* the next entry of a path_list: one per ControlNet */
    OPT_NET_NUMBER,     /* the next entry of a number_list, an OPT_NUMBER: one per ControlNet */
    OPT_CALL            /* call(o, value) does the rest: 0 done, 1 stop (--help), -1 error (reported) */
} option_kind;

/* One row per option: --help, the parser and whether it takes a value all
 * read this table. A row with only a heading starts a section of --help. */
typedef struct option {
    const char *heading;
    const char *flag, *name;    /* "-m" (or NULL), "--model" */
    const char *alias;          /* another spelling, left out of --help: sd-cli's, or an older sdx one */
    const char *arg;            /* the value in --help ("PATH"); NULL: the option takes no value */
    option_kind kind;
    size_t at;
    const char *range;
    int (*call)(options *o, const char *val);
    const char *help;           /* lines after the first are indented under it */
} option;

#define AT(field) offsetof(options, field)

static void usage(FILE *f);
static int on_preview(void *user, int image, int step, int steps, const sdx_image *img);

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int parse_float(const char *s, float *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v == v)) return 0;
    *out = (float)v;
    return 1;
}

/* Whether f lies in an interval written as "(0, 1]" or "[0, 10]"; NULL: any. */
static int in_range(float f, const char *range) {
    char open = '[', close = ']';
    double lo = 0, hi = 0;
    if (!range) return 1;
    sscanf(range, "%c%lf, %lf%c", &open, &lo, &hi, &close);
    return (open == '(' ? f > lo : f >= lo) && (close == ')' ? f < hi : f <= hi);
}

/* FILE[:unet[:te]]: the strengths are taken from the end, so a path may
 * hold ':' itself. */
static int parse_lora(const char *val, lora_arg *out) {
    char buf[4096];
    float v[2];
    int n = 0;
    if (snprintf(buf, sizeof buf, "%s", val) >= (int)sizeof buf) return 0;
    while (n < 2) {
        char *colon = strrchr(buf, ':');
        if (!colon || !parse_float(colon + 1, &v[n])) break;
        *colon = 0;
        n++;
    }
    if (!buf[0]) return 0;
    snprintf(out->path, sizeof out->path, "%s", buf);
    out->unet = n == 0 ? 1.0f : n == 1 ? v[0] : v[1];   /* the first number is the UNet's */
    out->te = n == 2 ? v[0] : out->unet;
    return 1;
}

/* ---- the options that OPT_CALL: one function each */

static int show_help(options *o, const char *val) {
    (void)o;
    (void)val;
    usage(stdout);
    return 1;
}

static int add_lora(options *o, const char *val) {
    if (o->n_loras == MAX_LORAS || !parse_lora(val, &o->loras[o->n_loras])) {
        fprintf(stderr, "sdx: --lora %s: expected FILE[:unet_strength[:clip_strength]] (at most %d)\n", val, MAX_LORAS);
        return -1;
    }
    o->n_loras++;
    return 0;
}

static int add_taesd(options *o, const char *val) {
    if (o->n_taesd == 2) { fprintf(stderr, "sdx: --taesd given more than twice (a decoder and an encoder)\n"); return -1; }
    o->model.taesd[o->n_taesd++] = val;
    return 0;
}

static int taesd_for_previews_only(options *o, const char *val) {
    (void)val;
    o->gen.codec = SDX_CODEC_VAE;
    return 0;
}

static int set_mode(options *o, const char *val) {
    o->convert = 0;
    if (!strcmp(val, "img_gen") || !strcmp(val, "txt2img") || !strcmp(val, "img2img")) o->mode = MODE_IMG_GEN;
    else if (!strcmp(val, "decode")) o->mode = MODE_DECODE;
    else if (!strcmp(val, "encode")) o->mode = MODE_ENCODE;
    else if (!strcmp(val, "convert")) o->mode = MODE_IMG_GEN, o->convert = 1;
    else if (!strcmp(val, "upscale")) o->mode = MODE_UPSCALE;
    else { fprintf(stderr, "sdx: -M %s: valid modes are img_gen, decode, encode, convert, upscale\n", val); return -1; }
    return 0;
}

/* sd-cli's --type names: F32, F16, BF16 and the block types, any case */
static int set_type(options *o, const char *val) {
    char list[256] = "";
    for (int t = 0; t < SDX_DTYPE_COUNT; t++) {
        const char *name = sdx_dtype_name((sdx_dtype)t);
        size_t i = 0, at = strlen(list);
        if (t != SDX_F32 && t != SDX_F16 && t != SDX_BF16 && sdx_dtype_block((sdx_dtype)t, NULL) < 2) continue;
        while (name[i] && tolower((unsigned char)val[i]) == tolower((unsigned char)name[i])) i++;
        if (!name[i] && !val[i]) {
            o->convert_to.type = val;
            return 0;
        }
        /* listed as sd-cli spells them: q4_0, q4_K */
        for (i = 0; name[i] && at + 3 < sizeof list; i++) list[at++] = (char)(name[i] == 'K' ? 'K' : tolower((unsigned char)name[i]));
        if (at + 3 < sizeof list) memcpy(list + at, ", ", 3);
    }
    list[strlen(list) - 2] = 0;
    fprintf(stderr, "sdx: --type %s: valid types are %s\n", val, list);
    return -1;
}

static int set_preview(options *o, const char *val) {
    o->gen.preview = NULL;
    if (!strcmp(val, "tae")) o->gen.preview_codec = SDX_CODEC_TAESD;
    else if (!strcmp(val, "vae")) o->gen.preview_codec = SDX_CODEC_VAE;
    else if (!strcmp(val, "proj")) {
        fprintf(stderr, "sdx: --preview proj (a linear latent-to-RGB projection) is not supported; use tae or vae\n");
        return -1;
    } else if (strcmp(val, "none")) { fprintf(stderr, "sdx: --preview %s: valid values are none, tae, vae\n", val); return -1; }
    if (strcmp(val, "none")) o->gen.preview = on_preview;
    return 0;
}

static int set_compute(options *o, const char *val) {
    if (!strcmp(val, "f32")) o->model.compute = SDX_COMPUTE_F32;
    else if (!strcmp(val, "bf16")) o->model.compute = SDX_COMPUTE_BF16;
    else { fprintf(stderr, "sdx: --compute %s: valid values are f32, bf16\n", val); return -1; }
    return 0;
}

static int set_rng(options *o, const char *val) {
    if (!strcmp(val, "cuda")) o->gen.rng = SDX_RNG_CUDA;
    else if (!strcmp(val, "cpu")) o->gen.rng = SDX_RNG_CPU;
    else { fprintf(stderr, "sdx: --rng %s: valid values are cuda, cpu\n", val); return -1; }
    return 0;
}

static int set_seed(options *o, const char *val) {
    long long n;
    if (!parse_int(val, -1, 0x7fffffffffffffffll, &n)) { fprintf(stderr, "sdx: --seed %s: not an integer >= -1\n", val); return -1; }
    o->gen.seed = n;
    return 0;
}

static int set_encode_seed(options *o, const char *val) {
    long long n;
    if (!parse_int(val, 0, 0x7fffffffffffffffll, &n)) { fprintf(stderr, "sdx: --encode-seed %s: not an integer >= 0\n", val); return -1; }
    o->gen.encode_sample = 1;
    o->gen.encode_seed = n;
    return 0;
}

static int set_mask_blur(options *o, const char *val) {
    long long n;
    if (!parse_int(val, 0, 1000, &n)) { fprintf(stderr, "sdx: --mask-blur %s: not an integer in 0..1000\n", val); return -1; }
    o->gen.mask_blur = n ? (int)n : -1;     /* the library's 0 means its default */
    return 0;
}

/* The next item of a comma-separated list at *p into item, *p moved past
 * it; 0 when the list is done or the item does not fit. */
static int next_item(const char **p, char *item, size_t size) {
    size_t len = *p ? strcspn(*p, ",") : size;
    if (len >= size) return 0;
    memcpy(item, *p, len);
    item[len] = 0;
    *p = (*p)[len] ? *p + len + 1 : NULL;
    return 1;
}

static int set_timesteps(options *o, const char *val) {
    char item[64];
    const char *p = val;
    long long t;
    int n = 0;
    while (p && n < MAX_SCHEDULE && next_item(&p, item, sizeof item) && parse_int(item, 0, 999, &t)) o->timesteps[n++] = (int)t;
    if (p || !n) {
        fprintf(stderr, "sdx: --timesteps %s: expected integers in 0..999 separated by commas (at most %d)\n", val, MAX_SCHEDULE);
        return -1;
    }
    o->gen.timesteps = o->timesteps;
    o->gen.n_timesteps = n;
    return 0;
}

static int set_sigmas(options *o, const char *val) {
    char item[64];
    const char *p = val;
    int n = 0;
    while (p && n < MAX_SCHEDULE && next_item(&p, item, sizeof item) && parse_float(item, &o->sigmas[n])) n++;
    if (p || !n) {
        fprintf(stderr, "sdx: --sigmas %s: expected numbers separated by commas (at most %d)\n", val, MAX_SCHEDULE);
        return -1;
    }
    o->gen.sigmas = o->sigmas;
    o->gen.n_sigmas = n;
    return 0;
}

static int set_eta(options *o, const char *val) {
    if (!parse_float(val, &o->gen.eta) || !in_range(o->gen.eta, "[0, 1]")) {
        fprintf(stderr, "sdx: --eta %s: must be in [0, 1]\n", val);
        return -1;
    }
    o->gen.use_eta = 1;
    return 0;
}

/* sd-cli's [X]x[Y]: width x height, latent pixels */
static int set_vae_tile_size(options *o, const char *val) {
    int tw = 0, th = 0, used = 0;
    if (!((sscanf(val, "%dx%d%n", &tw, &th, &used) == 2 || (sscanf(val, "%d%n", &tw, &used) == 1 && (th = tw))) &&
          !val[used] && tw > 0 && th > 0 && tw <= 100000 && th <= 100000)) {
        fprintf(stderr, "sdx: --vae-tile-size %s: expected N or WxH, positive latent pixels\n", val);
        return -1;
    }
    o->gen.vae_tile_width = tw;
    o->gen.vae_tile_height = th;
    return 0;
}

static const option option_table[] = {
    { .flag = "-M", .name = "--mode", .arg = "MODE", .kind = OPT_CALL, .call = set_mode,
      .help = "img_gen (default), upscale (-i image to -o PNG, see\n"
              "below), decode (a latent file to PNG), encode (an\n"
              "image to a latent file) or convert (write the checkpoint\n"
              "to -o OUT.gguf in --type, see below, or with\n"
              "the --lora files merged to -o OUT.safetensors)" },

    { .heading = "Model" },
    { .flag = "-m", .name = "--model", .arg = "PATH", .kind = OPT_STRING, .at = AT(model.checkpoint),
      .help = "single-file .safetensors or .gguf checkpoint (SD 1.x, 2.x, SDXL)" },
    { .name = "--vae", .arg = "PATH", .kind = OPT_STRING, .at = AT(model.vae),
      .help = "separate VAE replacing the checkpoint's" },
    { .name = "--taesd", .alias = "--tae", .arg = "PATH", .kind = OPT_CALL, .call = add_taesd,
      .help = "TAESD (tiny autoencoder) decoding instead of the VAE: taesd_decoder /\n"
              "taesdxl_decoder, or a diffusers AutoencoderTiny file; given twice\n"
              "(or one file with both halves) it also encodes init images" },
    { .name = "--taesd-preview-only", .kind = OPT_CALL, .call = taesd_for_previews_only,
      .help = "use TAESD for previews only, the VAE for the final image" },
    { .name = "--vocab", .arg = "PATH", .kind = OPT_STRING, .at = AT(model.vocab),
      .help = "CLIP vocabulary: merges.txt, bpe_simple_vocab_16e6.txt.gz\n"
              "or a folder (default: next to the model, then $SDX_VOCAB)" },
    { .name = "--prediction", .arg = "TYPE", .kind = OPT_STRING, .at = AT(model.prediction),
      .help = "eps, v or x0 (also 'sample': SDXL-Lightning's 1-step model):\n"
              "override the prediction type (default: from the checkpoint)" },
    { .name = "--scan-weights", .alias = "--scan", .kind = OPT_SWITCH, .at = AT(model.scan_nonfinite),
      .help = "check every weight for NaN/Inf at load and name bad tensors" },
    { .name = "--compute", .arg = "{f32,bf16}", .kind = OPT_CALL, .call = set_compute,
      .help = "arithmetic of linear layers and convolutions (default f32; bf16:\n"
              "AMX tiles, or AVX512-BF16 on AMD, about 1e-2 relative error;\n"
              "f32 elsewhere)" },
    { .name = "--quant-exact", .kind = OPT_SWITCH, .at = AT(quant_exact),
      .help = "multiply quantized GGUF weights as if dequantized first, not\n"
              "with int8 dot products (slower where the CPU has them)" },
    { .name = "--lora", .arg = "FILE[:U[:C]]", .kind = OPT_CALL, .call = add_lora,
      .help = "apply a LoRA / LyCORIS file with UNet strength U and text-encoder\n"
              "strength C (default 1, C defaults to U); repeatable, in order" },
    { .name = "--lora-model-dir", .arg = "DIR", .kind = OPT_STRING, .at = AT(gen.lora_dir),
      .help = "folder for the prompt's <lora:name:w> / <lora:name:te_w:unet_w> tags\n"
              "(DIR/name.safetensors; the tags are removed from the prompt)" },
    { .name = "--embd-dir", .arg = "DIR", .kind = OPT_STRING, .at = AT(gen.embedding_dir),
      .help = "textual-inversion embeddings (.safetensors), used where the prompt\n"
              "names them: the file name, or embedding:name" },

    { .heading = "Generation" },
    { .flag = "-p", .name = "--prompt", .arg = "TEXT", .kind = OPT_STRING, .at = AT(gen.prompt),
      .help = "prompt; (word:1.2), [word], BREAK as in AUTOMATIC1111" },
    { .flag = "-n", .name = "--negative-prompt", .arg = "T", .kind = OPT_STRING, .at = AT(gen.negative_prompt),
      .help = "negative prompt (default: \"\")" },
    { .flag = "-W", .name = "--width", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.width),
      .help = "width, multiple of 8 (default: 512 SD1, 768 SD2-v, 1024 SDXL)" },
    { .flag = "-H", .name = "--height", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.height),
      .help = "height, multiple of 8 (default: as width)" },
    { .name = "--steps", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.steps),
      .help = "sampling steps (default: 20)" },
    { .name = "--cfg-scale", .alias = "--cfg", .arg = "F", .kind = OPT_NUMBER, .at = AT(gen.cfg_scale),
      .help = "classifier-free guidance scale (default: 7; up to 1 disables\n"
              "it: no negative pass)" },
    { .name = "--sampling-method", .alias = "--sampler", .arg = "S", .kind = OPT_STRING, .at = AT(gen.sampler),
      .help = "sampler, ComfyUI or sd-cli name (default: euler_a)" },
    { .name = "--scheduler", .alias = "--schedule", .arg = "S", .kind = OPT_STRING, .at = AT(gen.scheduler),
      .help = "normal, karras, exponential, sgm_uniform, simple, ddim_uniform,\n"
              "beta, linear_quadratic, kl_optimal, ays, polyexponential, vp;\n"
              "few-step models: sd_turbo, trailing, lcm (default: normal)" },
    { .name = "--timesteps", .arg = "T,T,...", .kind = OPT_CALL, .call = set_timesteps,
      .help = "explicit timesteps instead of --steps and --scheduler (DMD2:\n"
              "999,749,499,249), started from unit-variance noise as diffusers" },
    { .name = "--sigmas", .arg = "S,S,...", .kind = OPT_CALL, .call = set_sigmas,
      .help = "explicit sigmas instead of --steps and --scheduler, as sd-cli\n"
              "(14.61,7.8,3.5,0: end with 0)" },
    { .name = "--eta", .arg = "G", .kind = OPT_CALL, .call = set_eta,
      .help = "tcd's gamma in [0, 1] (default: 0.3, diffusers')" },
    { .flag = "-s", .name = "--seed", .arg = "N", .kind = OPT_CALL, .call = set_seed,
      .help = "seed; -1 picks a random one (default: 42)" },
    { .name = "--rng", .arg = "{cuda,cpu}", .kind = OPT_CALL, .call = set_rng,
      .help = "noise source: cuda = A1111's Philox, cpu = ComfyUI's torch CPU\n"
              "generator (default: cuda)" },
    { .name = "--clip-skip", .arg = "N", .kind = OPT_INT, .at = AT(gen.clip_skip),
      .help = "text encoder layers to skip from the end (default: model's)" },
    { .flag = "-b", .name = "--batch-count", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.batch_count),
      .help = "images with consecutive seeds (default: 1)" },

    { .heading = "img2img and inpainting (as ComfyUI; see README)" },
    { .flag = "-i", .name = "--init-img", .arg = "PATH", .kind = OPT_STRING, .at = AT(init_path),
      .help = "init image; without -W/-H the output takes its size, sides cropped\n"
              "to multiples of 8 as ComfyUI does (with -W/-H it is resized)" },
    { .name = "--init-latent", .arg = "PATH", .kind = OPT_STRING, .at = AT(init_latent_path),
      .help = "start from a latent saved by --output-latent instead of an image" },
    { .name = "--mask", .arg = "PATH", .kind = OPT_STRING, .at = AT(mask_path),
      .help = "inpainting mask, white = repaint, any size (resized to the latent)" },
    { .name = "--strength", .arg = "F", .kind = OPT_NUMBER, .at = AT(gen.strength), .range = "(0, 1]",
      .help = "denoise in (0, 1]: `steps` steps from the tail of a schedule of\n"
              "int(steps / F) steps (default: 0.75)" },
    { .name = "--encode-seed", .arg = "N", .kind = OPT_CALL, .call = set_encode_seed,
      .help = "sample the VAE posterior with noise from seed N (A1111, older\n"
              "ComfyUI) instead of taking its mean" },
    { .name = "--paste-back", .kind = OPT_SWITCH, .at = AT(gen.paste_back),
      .help = "A1111-style: paste the init image back outside the blurred mask" },
    { .name = "--mask-blur", .arg = "N", .kind = OPT_CALL, .call = set_mask_blur,
      .help = "paste-back mask blur in pixels, 0 = none (default: 4)" },

    { .heading = "ControlNet (repeat the group for several; the Nth of each flag goes with the Nth net)" },
    { .name = "--control-net", .arg = "PATH", .kind = OPT_NET_PATH, .at = AT(control_net),
      .help = "ControlNet .safetensors (original, prefix-less or diffusers layout)" },
    { .name = "--control-image", .arg = "PATH", .kind = OPT_NET_PATH, .at = AT(control_image),
      .help = "its control picture (edges, depth, pose...), any size:\n"
              "centre-cropped to the output's aspect and resized (nearest)" },
    { .name = "--control-strength", .arg = "F", .kind = OPT_NET_NUMBER, .at = AT(control_strength), .range = "[0, 10]",
      .help = "scale of its residuals (default: 1)" },
    { .name = "--control-start", .arg = "F", .kind = OPT_NET_NUMBER, .at = AT(control_start), .range = "[0, 1]",
      .help = "fraction of the schedule where it starts (default: 0)" },
    { .name = "--control-end", .arg = "F", .kind = OPT_NET_NUMBER, .at = AT(control_end), .range = "[0, 1]",
      .help = "fraction of the schedule where it ends (default: 1)" },
    { .name = "--canny", .kind = OPT_SWITCH, .at = AT(canny),
      .help = "turn the control pictures into Canny edge maps first" },
    { .name = "--canny-low", .arg = "F", .kind = OPT_NUMBER, .at = AT(canny_low), .range = "[0, 100000]",
      .help = "Canny hysteresis thresholds on the Sobel gradient" },
    { .name = "--canny-high", .arg = "F", .kind = OPT_NUMBER, .at = AT(canny_high), .range = "[0, 100000]",
      .help = "(|dx| + |dy|; default: 100, 200, as OpenCV's users)" },

    { .heading = "Hires fix (A1111's; txt2img at -W x -H, then img2img larger)" },
    { .name = "--hires-scale", .arg = "F", .kind = OPT_NUMBER, .at = AT(gen.hires_scale), .range = "(0, 16]",
      .help = "second pass at F times the size (down to multiples of 8)" },
    { .name = "--hires-width", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.hires_width),
      .help = "second pass width (instead of a scale; alone: by aspect)" },
    { .name = "--hires-height", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.hires_height),
      .help = "second pass height" },
    { .name = "--hires-steps", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.hires_steps),
      .help = "second pass steps (default: --steps)" },
    { .name = "--hires-denoise", .arg = "F", .kind = OPT_NUMBER, .at = AT(gen.hires_denoise), .range = "(0, 1]",
      .help = "second pass denoise strength (default: 0.7)" },
    { .name = "--hires-upscaler", .arg = "U", .kind = OPT_STRING, .at = AT(gen.hires_upscaler),
      .help = "latent (A1111's Latent, bilinear; default), latent-bilinear,\n"
              "latent-nearest, latent-nearest-exact, or an ESRGAN\n"
              "model's .safetensors (decode, upscale, encode)" },
    { .heading = "Upscaling (-M upscale)" },
    { .name = "--upscale-model", .arg = "PATH", .kind = OPT_STRING, .at = AT(upscale_model),
      .help = "ESRGAN-family model (.safetensors): RealESRGAN_x4plus,\n"
              "x4plus_anime_6B, x2plus, old ESRGAN layouts (4x-UltraSharp)" },
    { .name = "--upscale-repeats", .arg = "N", .kind = OPT_POSITIVE, .at = AT(upscale_repeats),
      .help = "upscale N times, each pass from the last one's\n"
              "8-bit image (default: 1)" },

    { .heading = "Converting (-M convert, as sd-cli's; see README)" },
    { .name = "--type", .arg = "TYPE", .kind = OPT_CALL, .call = set_type,
      .help = "f32 f16 bf16 q8_0 q5_1 q5_0 q4_1 q4_0 q6_K..q2_K: the\n"
              "tensors sd-cli converts take it (rows whole blocks; no\n"
              "bias, embedding, time_embed), the rest keep theirs;\n"
              "into .safetensors every float tensor (f32, f16, bf16)" },
    { .name = "--tensor-type-rules", .arg = "R", .kind = OPT_STRING, .at = AT(convert_to.rules),
      .help = "REGEX=TYPE,... types by tensor name, the first match\n"
              "before --type (.gguf only)" },

    { .heading = "Output and run" },
    { .flag = "-o", .name = "--output", .arg = "PATH", .kind = OPT_STRING, .at = AT(output),
      .help = "PNG output (default: output.png; a batch adds _2, _3, ...)" },
    { .name = "--output-latent", .arg = "PATH", .kind = OPT_STRING, .at = AT(latent_output),
      .help = "also write the final latent as safetensors (tensor 'latent')" },
    { .name = "--latent-in", .arg = "PATH", .kind = OPT_STRING, .at = AT(latent_input),
      .help = "latent to decode in -M decode (as --output-latent writes it)" },
    { .name = "--preview", .arg = "MODE", .kind = OPT_CALL, .call = set_preview,
      .help = "live previews of the denoised image: none, tae, vae (default: none)" },
    { .name = "--preview-path", .arg = "PATH", .kind = OPT_STRING, .at = AT(preview_path),
      .help = "where the preview PNG goes (default: preview.png)" },
    { .name = "--preview-interval", .arg = "N", .kind = OPT_POSITIVE, .at = AT(gen.preview_interval),
      .help = "steps between previews (default: 1)" },
    { .name = "--preview-noisy", .kind = OPT_SWITCH, .at = AT(gen.preview_noisy),
      .help = "preview the noisy latent instead of the denoised estimate" },
    { .name = "--vae-tiling", .kind = OPT_SWITCH, .at = AT(gen.vae_tiling),
      .help = "decode/encode in tiles, as exact as untiled (automatic when memory is short)" },
    { .name = "--vae-tile-size", .arg = "N|WxH", .kind = OPT_CALL, .call = set_vae_tile_size,
      .help = "largest tile in latent pixels (default: 32, or from the memory budget)" },
    { .name = "--vae-tile-overlap", .arg = "F", .kind = OPT_NUMBER, .at = AT(vae_tile_overlap), .range = "[0, 1)",
      .help = "accepted for sd-cli scripts; sdx's tiles need no overlap" },
    { .name = "--circular", .kind = OPT_SWITCH, .at = AT(gen.seamless),
      .help = "seamless texture: the image tiles without seams (A1111's Tiling)" },
    { .name = "--low-mem", .alias = "--low-memory", .kind = OPT_SWITCH, .at = AT(model.low_memory),
      .help = "low-memory mode: weights stream layer by layer from the mapped\n"
              "file, the VAE works in small tiles (same latent, slower)" },
    { .flag = "-t", .name = "--threads", .arg = "N", .kind = OPT_INT, .at = AT(threads),
      .help = "worker threads (default: all cores)" },
    { .name = "--backend", .arg = "B", .kind = OPT_STRING, .at = AT(backend),
      .help = "cpu, or hip[:N] for GPU N (default: hip in sdx-hip, else cpu)" },
    { .name = "--trace-nonfinite", .alias = "--trace", .kind = OPT_SWITCH, .at = AT(trace),
      .help = "check every op for NaN/Inf and name the first one that makes it" },
    { .flag = "-v", .name = "--verbose", .kind = OPT_SWITCH, .at = AT(verbose),
      .help = "log model details, per-phase and per-step timings, peak RSS" },
    { .flag = "-h", .name = "--help", .kind = OPT_CALL, .call = show_help,
      .help = "this text" },
};
#define N_OPTIONS (sizeof option_table / sizeof option_table[0])

static void usage(FILE *f) {
    fprintf(f, "usage: sdx -m MODEL -p PROMPT [options]\n"
               "       sdx -M decode (-m MODEL | --taesd FILE) --latent-in LATENT -o out.png\n"
               "       sdx -M encode (-m MODEL | --taesd FILE) -i image.png --output-latent LATENT\n"
               "       sdx -M convert -m MODEL --type TYPE [--tensor-type-rules R] -o OUT.gguf\n"
               "       sdx -M convert -m MODEL --lora FILE[:U[:C]]... -o OUT.safetensors\n"
               "       sdx -M upscale --upscale-model FILE -i IN.png -o OUT.png [--upscale-repeats N]\n"
               "\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option *opt = &option_table[i];
        const char *line = opt->help;
        char spec[64];
        if (opt->heading) { fprintf(f, "\n%s\n", opt->heading); continue; }
        snprintf(spec, sizeof spec, "%s%s%s", opt->name, opt->arg ? " " : "", opt->arg ? opt->arg : "");
        fprintf(f, "  %-2s%s%-21s ", opt->flag ? opt->flag : "", opt->flag ? ", " : "  ", spec);
        for (;;) {     /* the help's further lines go under its first */
            size_t len = strcspn(line, "\n");
            fprintf(f, "%.*s\n", (int)len, line);
            if (!line[len]) break;
            line += len + 1;
            fprintf(f, "%28s", "");
        }
    }
}

static const option *find_option(const char *name) {
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option *opt = &option_table[i];
        if (opt->name && (!strcmp(name, opt->name) || (opt->flag && !strcmp(name, opt->flag)) ||
                          (opt->alias && !strcmp(name, opt->alias))))
            return opt;
    }
    return NULL;
}

/* A number for OPT_NUMBER and OPT_NET_NUMBER. */
static int parse_number(const option *opt, const char *name, const char *val, float *out) {
    if (parse_float(val, out) && in_range(*out, opt->range)) return 1;
    if (opt->range) fprintf(stderr, "sdx: %s %s: must be in %s\n", name, val, opt->range);
    else fprintf(stderr, "sdx: %s %s: not a number\n", name, val);
    return 0;
}

/* Stores one option's value (NULL for a switch); name is the flag as the
 * errors show it. Returns as an OPT_CALL function does. */
static int apply_option(options *o, const option *opt, const char *name, const char *val) {
    void *at = (char *)o + opt->at;
    long long n;
    switch (opt->kind) {
    case OPT_SWITCH: *(int *)at = 1; return 0;
    case OPT_STRING: *(const char **)at = val; return 0;
    case OPT_INT:
    case OPT_POSITIVE:
        if (!parse_int(val, -1, 1000000, &n)) { fprintf(stderr, "sdx: %s %s: not an integer in range\n", name, val); return -1; }
        *(int *)at = (int)n;
        if (opt->kind == OPT_POSITIVE && n <= 0) { fprintf(stderr, "sdx: %s %s: must be positive\n", name, val); return -1; }
        return 0;
    case OPT_NUMBER: return parse_number(opt, name, val, (float *)at) ? 0 : -1;
    case OPT_NET_PATH: {
        path_list *list = at;
        if (list->n >= MAX_CONTROLS) { fprintf(stderr, "sdx: %s: at most %d ControlNets\n", name, MAX_CONTROLS); return -1; }
        list->path[list->n++] = val;
        return 0;
    }
    case OPT_NET_NUMBER: {
        number_list *list = at;
        if (list->n >= MAX_CONTROLS) { fprintf(stderr, "sdx: %s: at most %d ControlNets\n", name, MAX_CONTROLS); return -1; }
        if (!parse_number(opt, name, val, &list->value[list->n])) return -1;
        list->n++;
        return 0;
    }
    case OPT_CALL: return opt->call(o, val);
    }
    return -1;
}

/* The checks that need the whole command line. */
static int check_args(options *o) {
    int output_given = o->output != NULL;
    if (!o->output) o->output = "output.png";
    if (o->gen.scheduler && !strcmp(o->gen.scheduler, "discrete")) o->gen.scheduler = "normal";   /* sd-cli's name for it */
    if (o->mode == MODE_UPSCALE) {
        if (!o->upscale_model || !o->init_path) { fprintf(stderr, "sdx: -M upscale needs --upscale-model PATH and -i IMAGE\n"); return -1; }
        return 0;
    }
    if (o->mode != MODE_IMG_GEN) {
        o->model.codecs_only = 1;
        if (!o->model.checkpoint && !o->n_taesd) {
            fprintf(stderr, "sdx: -M %s needs a model (-m PATH) or a TAESD file (--taesd PATH)\n", o->mode == MODE_DECODE ? "decode" : "encode");
            return -1;
        }
        if (o->mode == MODE_DECODE && !o->latent_input) { fprintf(stderr, "sdx: -M decode needs --latent-in PATH\n"); return -1; }
        if (o->mode == MODE_ENCODE && (!o->init_path || !o->latent_output)) {
            fprintf(stderr, "sdx: -M encode needs -i IMAGE and --output-latent PATH\n");
            return -1;
        }
        return 0;
    }
    if (!o->model.checkpoint) { fprintf(stderr, "sdx: no model given (-m PATH); see --help\n"); return -1; }
    if ((o->convert_to.type || o->convert_to.rules) && !o->convert) {
        fprintf(stderr, "sdx: --type and --tensor-type-rules go with -M convert (generation keeps the file's types)\n");
        return -1;
    }
    if (o->convert) {
        if (!output_given) { fprintf(stderr, "sdx: -M convert needs -o OUT.%s\n", o->n_loras ? "safetensors" : "gguf"); return -1; }
        o->model.no_vocab = 1;
        return 0;
    }
    if (!o->gen.prompt) { fprintf(stderr, "sdx: no prompt given (-p TEXT); see --help\n"); return -1; }
    if (o->init_path && o->init_latent_path) { fprintf(stderr, "sdx: give one of -i/--init-img and --init-latent\n"); return -1; }
    if (o->mask_path && !o->init_path && !o->init_latent_path) { fprintf(stderr, "sdx: --mask needs --init-img or --init-latent\n"); return -1; }
    if (o->gen.paste_back && (!o->mask_path || !o->init_path)) { fprintf(stderr, "sdx: --paste-back needs --init-img and --mask\n"); return -1; }
    if (o->control_image.n != o->control_net.n || o->control_strength.n > o->control_net.n || o->control_start.n > o->control_net.n ||
        o->control_end.n > o->control_net.n) {
        fprintf(stderr, "sdx: %d --control-net but %d --control-image, %d --control-strength, %d --control-start, "
                "%d --control-end: each ControlNet needs one image and at most one of the others\n",
                o->control_net.n, o->control_image.n, o->control_strength.n, o->control_start.n, o->control_end.n);
        return -1;
    }
    for (int i = 0; i < o->control_net.n; i++) {
        float start = i < o->control_start.n ? o->control_start.value[i] : 0, end = i < o->control_end.n ? o->control_end.value[i] : 1;
        if (!(start < end)) { fprintf(stderr, "sdx: ControlNet %d: --control-start %g must be below --control-end %g\n", i + 1, start, end); return -1; }
    }
    return 0;
}

/* Parses argv into o; returns 0 on success, 1 after --help, -1 on error. */
static int parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->gen.seed = 42;
    o->gen.rng = SDX_RNG_CUDA;
    o->preview_path = "preview.png";
    o->canny_low = 100;
    o->canny_high = 200;
    o->upscale_repeats = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL, *name;
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        const option *opt;
        char flag[64];
        int rc;
        if (eq && (size_t)(eq - a) < sizeof flag) {      /* --flag=value */
            memcpy(flag, a, (size_t)(eq - a));
            flag[eq - a] = 0;
            a = flag;
            v = eq + 1;
        }
        opt = find_option(a);
        if (v && (!opt || !opt->arg)) { fprintf(stderr, "sdx: %s takes no value\n", a); return -1; }
        if (!opt) { fprintf(stderr, "sdx: unknown option %s (see --help)\n", a); return -1; }
        if (opt->arg && !v) {
            if (i + 1 == argc) { fprintf(stderr, "sdx: %s needs a value\n", a); return -1; }
            v = argv[++i];
        }
        name = opt->alias && !strcmp(a, opt->alias) ? opt->name : a;   /* errors call an alias by its name in --help */
        rc = apply_option(o, opt, name, v);
        if (rc) return rc;
    }
    return check_args(o);
}

/* ---- images ---------------------------------------------------------- */

/* Bilinear resize of 8-bit interleaved pixels. */
static unsigned char *resize(const unsigned char *src, int sw, int sh, int c, int dw, int dh) {
    unsigned char *dst = malloc((size_t)dw * (size_t)dh * (size_t)c);
    if (!dst) return NULL;
    for (int y = 0; y < dh; y++) {
        float fy = ((float)y + 0.5f) * (float)sh / (float)dh - 0.5f;
        int y0 = fy < 0 ? 0 : (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
        float wy = fy < 0 ? 0 : fy - (float)y0;
        for (int x = 0; x < dw; x++) {
            float fx = ((float)x + 0.5f) * (float)sw / (float)dw - 0.5f;
            int x0 = fx < 0 ? 0 : (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
            float wx = fx < 0 ? 0 : fx - (float)x0;
            for (int k = 0; k < c; k++) {
                float a = src[((size_t)y0 * sw + x0) * c + k], b = src[((size_t)y0 * sw + x1) * c + k];
                float d = src[((size_t)y1 * sw + x0) * c + k], e = src[((size_t)y1 * sw + x1) * c + k];
                float v = (a + (b - a) * wx) * (1 - wy) + (d + (e - d) * wx) * wy;
                dst[((size_t)y * dw + x) * c + k] = (unsigned char)(v + 0.5f);
            }
        }
    }
    return dst;
}

/* Loads an image as `channels` channels, resized to w x h unless both are
 * 0 (then it keeps its size: the library crops it as ComfyUI does); one
 * side 0 takes the image's, rounded down to a multiple of 8. */
static int load_image(const char *path, int channels, int w, int h, sdx_image *out) {
    int iw, ih, ic;
    unsigned char *px = stbi_load(path, &iw, &ih, &ic, channels);
    if (!px) { fprintf(stderr, "sdx: %s: cannot read image: %s\n", path, stbi_failure_reason()); return 0; }
    if (!w && !h) {
        w = iw;
        h = ih;
    } else {
        if (!w) w = iw / 8 * 8;
        if (!h) h = ih / 8 * 8;
    }
    if (channels == 3 && (iw < 8 || ih < 8 || w < 8 || h < 8)) {
        fprintf(stderr, "sdx: %s: image %dx%d is too small\n", path, iw, ih);
        stbi_image_free(px);
        return 0;
    }
    out->width = w;
    out->height = h;
    out->channels = channels;
    if (iw == w && ih == h) {
        size_t n = (size_t)iw * (size_t)ih * (size_t)channels;
        out->data = malloc(n);
        if (out->data) memcpy(out->data, px, n);
    } else {
        out->data = resize(px, iw, ih, channels, w, h);
    }
    stbi_image_free(px);
    if (!out->data) { fprintf(stderr, "sdx: out of memory for %s\n", path); return 0; }
    return 1;
}

/* Reads the tensor 'latent' of a file --output-latent wrote. */
static int load_latent(sdx_ctx *ctx, const char *path, sdx_tensor *out) {
    sdx_st *st;
    int rc;
    if (sdx_st_open(ctx, path, &st) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); return 0; }
    rc = sdx_st_read_f32(ctx, st, "latent", out);
    if (rc != SDX_OK) fprintf(stderr, "sdx: %s: %s (expected a file written by --output-latent)\n", path, sdx_last_error(ctx));
    sdx_st_close(st);
    return rc == SDX_OK;
}

/* A control picture as it is: the library crops and resizes it. */
static int load_control_image(const char *path, sdx_image *out) {
    int iw, ih, ic;
    unsigned char *px = stbi_load(path, &iw, &ih, &ic, 3);
    size_t n;
    if (!px) { fprintf(stderr, "sdx: %s: cannot read image: %s\n", path, stbi_failure_reason()); return 0; }
    n = (size_t)iw * (size_t)ih * 3;
    out->data = malloc(n);
    if (!out->data) { stbi_image_free(px); fprintf(stderr, "sdx: out of memory for %s\n", path); return 0; }
    memcpy(out->data, px, n);
    out->width = iw;
    out->height = ih;
    out->channels = 3;
    stbi_image_free(px);
    return 1;
}

typedef struct { unsigned char *p; size_t len, cap; int failed; } membuf;

static void membuf_put(void *ctx, void *data, int size) {
    membuf *b = ctx;
    if (b->failed || size <= 0) return;
    if (b->cap - b->len < (size_t)size) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        unsigned char *np;
        while (cap - b->len < (size_t)size) cap *= 2;
        np = realloc(b->p, cap);
        if (!np) { b->failed = 1; return; }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, (size_t)size);
    b->len += (size_t)size;
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16); p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

/* A PNG text chunk: tEXt when the text is Latin-1 (A1111/PIL do the
 * same), iTXt with UTF-8 otherwise. Returns a malloc'd chunk. */
static unsigned char *text_chunk(const char *key, const char *text, size_t *len) {
    size_t klen = strlen(key), tlen = strlen(text), body, pos = 0;
    int latin1 = 1;
    unsigned char *c;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s < 0x80) continue;
        if ((*s == 0xc2 || *s == 0xc3) && (s[1] & 0xc0) == 0x80) { s++; continue; }
        latin1 = 0;
        break;
    }
    body = klen + 1 + (latin1 ? tlen : 4 + tlen);
    c = malloc(12 + body);
    if (!c) return NULL;
    put_be32(c, (uint32_t)body);
    memcpy(c + 4, latin1 ? "tEXt" : "iTXt", 4);
    pos = 8;
    memcpy(c + pos, key, klen + 1);
    pos += klen + 1;
    if (latin1) {
        for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
            if (*s >= 0xc2) { c[pos++] = (unsigned char)(((s[0] & 0x03) << 6) | (s[1] & 0x3f)); s++; }
            else c[pos++] = *s;
        }
        body = pos - 8;
        put_be32(c, (uint32_t)body);
    } else {
        memset(c + pos, 0, 4);      /* no compression, method, empty language and translated key */
        pos += 4;
        memcpy(c + pos, text, tlen);
        pos += tlen;
    }
    put_be32(c + pos, crc32_update(0, c + 4, pos - 4));
    *len = pos + 4;
    return c;
}

/* Writes the PNG with its parameters (NULL: none) to a temporary name,
 * then renames, so a failure never leaves half a file at `path`. */
static int write_png(const char *path, const sdx_image *img, const char *parameters) {
    membuf png = { 0 };
    size_t clen = 0;
    unsigned char *chunk;
    char tmp[4200];
    FILE *f;
    int ok;
    stbi_write_png_to_func(membuf_put, &png, img->width, img->height, img->channels, img->data, img->width * img->channels);
    chunk = parameters ? text_chunk("parameters", parameters, &clen) : NULL;
    if (png.failed || png.len < 33 || (parameters && !chunk)) {
        fprintf(stderr, "sdx: %s: PNG encoding failed\n", path);
        free(png.p);
        free(chunk);
        return 0;
    }
    f = create_beside(path, tmp, sizeof tmp);
    if (!f) {
        fprintf(stderr, "sdx: %s: cannot write: %s\n", path, strerror(errno));
        free(png.p);
        free(chunk);
        return 0;
    }
    /* signature + IHDR (8 + 25 bytes), our text chunk, then the rest */
    ok = fwrite(png.p, 1, 33, f) == 33 && (!chunk || fwrite(chunk, 1, clen, f) == clen) &&
         fwrite(png.p + 33, 1, png.len - 33, f) == png.len - 33;
    ok = (fclose(f) == 0) && ok;
    if (ok && !replace_file(tmp, path)) ok = 0;
    if (!ok) { fprintf(stderr, "sdx: %s: cannot write: %s\n", path, strerror(errno)); remove(tmp); }
    free(png.p);
    free(chunk);
    return ok;
}

/* The last '/' or '\\' in path (Windows takes both), or NULL. */
static const char *last_separator(const char *path) {
    const char *sep = NULL;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') sep = p;
    return sep;
}

/* out.png -> out_2.png for the second image of a batch (a dot in a folder's
 * name is no extension). */
static void batch_path(const char *path, int index, char *buf, size_t size) {
    const char *dot = strrchr(path, '.'), *slash = last_separator(path);
    if (index == 0) { snprintf(buf, size, "%s", path); return; }
    if (!dot || (slash && dot < slash)) snprintf(buf, size, "%s_%d", path, index + 1);
    else snprintf(buf, size, "%.*s_%d%s", (int)(dot - path), path, index + 1, dot);
}

/* ---- progress and timings ------------------------------------------- */

static double now_seconds(void) {
#ifdef _WIN32
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
#endif
}

/* -v: seconds of each phase (sdx_gen_params.phase) and step, as sd-cli
 * prints them; the totals go into the summary line. */
typedef struct {
    int verbose;
    int phase, image;                /* the phase running, -1 before the first */
    double phase_start, step_start;
    double load, seconds[SDX_PHASE_DONE];   /* each phase's, all images together */
    int steps;
} progress_state;

static const char *const phase_names[SDX_PHASE_DONE] = { "text encoding", "VAE encode", "sampling", "VAE decode" };

static void on_phase(void *user, sdx_phase phase, int image) {
    progress_state *s = user;
    double t = now_seconds(), dt = t - s->phase_start;
    if (s->phase >= 0) {       /* the phase that just ended */
        s->seconds[s->phase] += dt;
        if (s->verbose && s->phase == SDX_PHASE_TEXT) fprintf(stderr, "sdx: %s: %.3f s\n", phase_names[s->phase], dt);
        else if (s->verbose) fprintf(stderr, "sdx: image %d %s: %.3f s\n", s->image + 1, phase_names[s->phase], dt);
    }
    s->phase = phase == SDX_PHASE_DONE ? -1 : (int)phase;
    s->image = image;
    s->phase_start = s->step_start = t;
}

static int on_progress(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    progress_state *s = user;
    double t = now_seconds(), el = t - s->phase_start;
    char bar[31];
    int filled = steps ? step * 30 / steps : 0;
    (void)latent;
    s->steps++;
    if (s->verbose) {   /* a line per step instead of the bar: the timings */
        fprintf(stderr, "sdx: image %d step %d/%d: %.3f s\n", image + 1, step, steps, t - s->step_start);
        s->step_start = t;
        return 0;
    }
    for (int i = 0; i < 30; i++) bar[i] = i < filled ? '=' : ' ';
    bar[30] = 0;
    fprintf(stderr, "\r  [%s] %d/%d  %.2f it/s  ETA %.0fs ", bar, step, steps, el > 0 ? step / el : 0.0,
            step ? el / step * (steps - step) : 0.0);
    if (step == steps) fprintf(stderr, "\n");
    return 0;
}

/* -v, after a generation: sd-cli's "generate_image completed" line, and
 * the process's peak resident memory. */
static void print_timings(const progress_state *s) {
    const double *t = s->seconds;
    double total = s->load;
    for (int i = 0; i < SDX_PHASE_DONE; i++) total += t[i];
    fprintf(stderr, "sdx: total %.3f s: load %.3f s, text encoding %.3f s, ", total, s->load, t[SDX_PHASE_TEXT]);
    if (t[SDX_PHASE_ENCODE] > 0) fprintf(stderr, "VAE encode %.3f s, ", t[SDX_PHASE_ENCODE]);
    fprintf(stderr, "sampling %.3f s (%.3f s/step), VAE decode %.3f s\n", t[SDX_PHASE_SAMPLE],
            s->steps ? t[SDX_PHASE_SAMPLE] / s->steps : 0.0, t[SDX_PHASE_DECODE]);
    fprintf(stderr, "sdx: peak RSS %.1f MiB\n", (double)sdx_peak_rss() / 1048576.0);
}

/* --preview: the current estimate, overwritten at --preview-path. */
static int on_preview(void *user, int image, int step, int steps, const sdx_image *img) {
    const options *o = user;
    char text[96];
    snprintf(text, sizeof text, "sdx preview: image %d, step %d of %d", image + 1, step, steps);
    return write_png(o->preview_path, img, text) ? 0 : 1;
}

static void log_to_stderr(sdx_log_level level, const char *msg, void *user) {
    (void)user;
    fprintf(stderr, "sdx: %s%s\n", level == SDX_LOG_WARN ? "warning: " : "", msg);
}

/* ---- one stage on files ------------------------------------------------- */

/* -M decode: --latent-in (tensor 'latent', model space) -> PNG. */
static int run_decode(sdx_ctx *ctx, const options *o) {
    sdx_st *st = NULL;
    sdx_model *model = NULL;
    sdx_image img = { 0 };
    const sdx_tensor *latent;
    int status = 1;
    if (sdx_st_open(ctx, o->latent_input, &st) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); return 1; }
    if (!(latent = sdx_st_find(st, "latent"))) {
        fprintf(stderr, "sdx: %s: no tensor 'latent' (write one with --output-latent or -M encode)\n", o->latent_input);
    } else if (sdx_model_load(ctx, &o->model, &model) != SDX_OK ||
               sdx_decode_latent(model, latent, &o->gen, &img) != SDX_OK) {
        fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx));
    } else if (write_png(o->output, &img, sdx_st_meta(st, "parameters"))) {
        fprintf(stderr, "sdx: wrote %s\n", o->output);
        status = 0;
    }
    sdx_image_free(ctx, &img);
    sdx_model_free(model);
    sdx_st_close(st);
    return status;
}

/* -M encode: -i image -> --output-latent (tensor 'latent', model space). */
static int run_encode(sdx_ctx *ctx, const options *o) {
    sdx_model *model = NULL;
    sdx_image img = { 0 };
    sdx_tensor latent = { 0 };
    int status = 1;
    /* with -W/-H resized to them; without, sdx_encode_image crops the sides
     * to multiples of the codec's factor (as ComfyUI's VAEEncode) */
    if (!load_image(o->init_path, 3, o->gen.width, o->gen.height, &img)) goto done;
    if (sdx_model_load(ctx, &o->model, &model) != SDX_OK ||
        sdx_encode_image(model, &img, &o->gen, &latent) != SDX_OK) {
        fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx));
        goto done;
    }
    latent.name = "latent";
    if (sdx_st_write(ctx, o->latent_output, &latent, 1, NULL, 0) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); goto done; }
    fprintf(stderr, "sdx: wrote %s (%lldx%lld latent)\n", o->latent_output, (long long)latent.shape[3], (long long)latent.shape[2]);
    status = 0;
done:
    sdx_tensor_free(ctx, &latent);
    free(img.data);
    sdx_model_free(model);
    return status;
}

/* -M upscale: -i image -> -o PNG, --upscale-repeats passes of the model;
 * the PNG's parameters record it as AUTOMATIC1111's extras do. */
/* What -M convert wrote: its tensors per dtype. */
static void report_converted(sdx_ctx *ctx, const char *path) {
    int count[SDX_DTYPE_COUNT] = { 0 }, n;
    sdx_st *st = NULL;
    if (sdx_st_open(ctx, path, &st) != SDX_OK) { fprintf(stderr, "sdx: wrote %s\n", path); return; }
    n = sdx_st_count(st);
    for (int i = 0; i < n; i++) count[sdx_st_get(st, i)->dtype]++;
    fprintf(stderr, "sdx: wrote %s: %d tensors (", path, n);
    for (int t = 0, first = 1; t < SDX_DTYPE_COUNT; t++)
        if (count[t]) fprintf(stderr, "%s%d %s", first ? "" : ", ", count[t], sdx_dtype_name((sdx_dtype)t)), first = 0;
    fprintf(stderr, ")\n");
    sdx_st_close(st);
}

/* -M convert without --lora: the file's tensors go to the converter as
 * they are, no model built, so any checkpoint or part of one converts. */
static int run_convert(sdx_ctx *ctx, const options *o) {
    sdx_st *st = NULL;
    sdx_tensor *ts = NULL;
    const char **meta = NULL;
    int n, n_meta, status = 1;
    if (sdx_st_open(ctx, o->model.checkpoint, &st) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); return 1; }
    n = sdx_st_count(st);
    n_meta = sdx_st_meta_count(st);
    ts = (sdx_tensor *)malloc(sizeof *ts * (size_t)(n + 1));
    meta = (const char **)malloc(sizeof *meta * (size_t)(2 * n_meta + 1));
    if (!ts || !meta) fprintf(stderr, "sdx: out of memory\n");
    for (int i = 0; ts && i < n; i++) ts[i] = *sdx_st_get(st, i);
    for (int i = 0; meta && i < n_meta; i++) sdx_st_meta_at(st, i, &meta[2 * i], &meta[2 * i + 1]);
    if (ts && meta) {
        if (sdx_convert_write(ctx, o->output, ts, n, meta, n_meta, &o->convert_to) != SDX_OK) fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx));
        else status = 0;
    }
    free(ts);
    free((void *)meta);
    sdx_st_close(st);
    if (!status) report_converted(ctx, o->output);
    return status;
}

static int run_upscale(sdx_ctx *ctx, const options *o) {
    sdx_upscaler *up = NULL;
    sdx_image in = { 0 }, out = { 0 };
    char params[512];
    int status = 1;
    if (!load_control_image(o->init_path, &in)) return 1;    /* any size, as it is */
    if (sdx_upscaler_load(ctx, o->upscale_model, &up) != SDX_OK || sdx_upscale(up, &in, o->upscale_repeats, &out) != SDX_OK) {
        fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx));
    } else {
        snprintf(params, sizeof params, "Postprocess upscale by: %d, Postprocess upscaler: %s", out.width / in.width,
                 sdx_upscaler_name(up));
        if (write_png(o->output, &out, params)) {
            fprintf(stderr, "sdx: wrote %s (%dx%d)\n", o->output, out.width, out.height);
            status = 0;
        }
    }
    sdx_image_free(ctx, &out);
    free(in.data);
    sdx_upscaler_free(up);
    return status;
}

/* --backend: "cpu", or "hip[:N]" in a GPU build (its default). */
static int select_backend(sdx_ctx *ctx, const char *name) {
    (void)ctx;
#ifdef SDX_WITH_HIP
    int dev = 0;
    if (!name) name = "hip";
    if (!strncmp(name, "hip", 3) && (name[3] == 0 || (name[3] == ':' && (dev = atoi(name + 4)) >= 0))) {
        if (sdx_hip_use(ctx, dev) != SDX_OK) { fprintf(stderr, "sdx: %s (--backend cpu runs on the CPU)\n", sdx_last_error(ctx)); return 0; }
        return 1;
    }
#endif
    if (!name || !strcmp(name, "cpu")) return 1;
    fprintf(stderr, "sdx: --backend %s: valid values are cpu%s\n", name,
#ifdef SDX_WITH_HIP
            ", hip, hip:N"
#else
            " (GPUs need the sdx-hip build: make sdx-hip)"
#endif
    );
    return 0;
}

int main(int argc, char **argv) {
    options o;
    sdx_desc desc;
    sdx_ctx *ctx;
    sdx_model *model = NULL;
    sdx_image init = { 0 }, mask = { 0 }, control_image[MAX_CONTROLS];
    sdx_tensor init_latent = { 0 };
    sdx_controlnet *control_net[MAX_CONTROLS] = { 0 };
    sdx_control controls[MAX_CONTROLS];
    sdx_gen_result res;
    progress_state ps;
    int rc, status = 1;
    memset(control_image, 0, sizeof control_image);
    memset(controls, 0, sizeof controls);
    rc = parse_args(argc, argv, &o);
    if (rc) return rc > 0 ? 0 : 2;
    memset(&desc, 0, sizeof desc);
    desc.n_threads = o.threads > 0 ? o.threads : 0;
    desc.trace_nonfinite = o.trace;
    desc.quant_exact = o.quant_exact;
    desc.log = log_to_stderr;
    desc.log_level = o.verbose ? SDX_LOG_INFO : SDX_LOG_WARN;
    ctx = sdx_create(&desc);
    if (!ctx) { fprintf(stderr, "sdx: out of memory\n"); return 1; }
    if (!select_backend(ctx, o.backend)) goto done;
    if (o.mode == MODE_DECODE) { status = run_decode(ctx, &o); sdx_destroy(ctx); return status; }
    if (o.mode == MODE_ENCODE) { status = run_encode(ctx, &o); sdx_destroy(ctx); return status; }
    if (o.mode == MODE_UPSCALE) { status = run_upscale(ctx, &o); sdx_destroy(ctx); return status; }
    if (o.convert && !o.n_loras) { status = run_convert(ctx, &o); sdx_destroy(ctx); return status; }
    if ((o.gen.width && o.gen.width % 8) || (o.gen.height && o.gen.height % 8)) {
        fprintf(stderr, "sdx: size %dx%d: width and height must be multiples of 8\n", o.gen.width, o.gen.height);
        goto done;
    }
    if (o.init_path) {
        /* with -W/-H the image is resized to them (as A1111); without, the
         * library crops it to multiples of 8 (as ComfyUI) */
        if (!load_image(o.init_path, 3, o.gen.width, o.gen.height, &init)) goto done;
        o.gen.init_image = &init;
        if (o.gen.width || o.gen.height) {
            o.gen.width = init.width;
            o.gen.height = init.height;
        }
    }
    if (o.init_latent_path) {
        if (!load_latent(ctx, o.init_latent_path, &init_latent)) goto done;
        o.gen.init_latent = &init_latent;
    }
    if (o.mask_path) {     /* any size: resized to the latent as ComfyUI does */
        if (!load_image(o.mask_path, 1, 0, 0, &mask)) goto done;
        o.gen.mask = &mask;
    }
    for (int i = 0; i < o.control_image.n; i++) {
        if (!load_control_image(o.control_image.path[i], &control_image[i])) goto done;
        if (o.canny) {
            sdx_image edges;
            if (sdx_canny(ctx, &control_image[i], o.canny_low, o.canny_high, &edges) != SDX_OK) {
                fprintf(stderr, "sdx: %s: %s\n", o.control_image.path[i], sdx_last_error(ctx));
                goto done;
            }
            /* keep the picture malloc-owned, like the others */
            memcpy(control_image[i].data, edges.data, (size_t)edges.width * (size_t)edges.height * 3);
            sdx_image_free(ctx, &edges);
        }
    }
    memset(&ps, 0, sizeof ps);
    ps.verbose = o.verbose;
    ps.phase = -1;
    ps.load = now_seconds();
    if (sdx_model_load(ctx, &o.model, &model) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); goto done; }
    ps.load = now_seconds() - ps.load;
    if (o.verbose) fprintf(stderr, "sdx: load: %.3f s\n", ps.load);
    for (int i = 0; i < o.n_loras; i++)
        if (sdx_model_apply_lora(model, o.loras[i].path, o.loras[i].unet, o.loras[i].te) != SDX_OK) {
            fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx));
            goto done;
        }
    if (o.convert) {
        if (sdx_model_save_as(model, o.output, &o.convert_to) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); goto done; }
        fprintf(stderr, "sdx: %d LoRA(s) merged\n", o.n_loras);
        report_converted(ctx, o.output);
        status = 0;
        goto done;
    }
    for (int i = 0; i < o.control_net.n; i++) {
        if (sdx_controlnet_load(model, o.control_net.path[i], &control_net[i]) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); goto done; }
        controls[i].net = control_net[i];
        controls[i].image = &control_image[i];
        controls[i].strength = i < o.control_strength.n ? o.control_strength.value[i] : 1.0f;
        controls[i].start = i < o.control_start.n ? o.control_start.value[i] : 0.0f;
        controls[i].end = i < o.control_end.n ? o.control_end.value[i] : 1.0f;
        controls[i].module = o.canny ? "canny" : NULL;
    }
    o.gen.controls = controls;
    o.gen.n_controls = o.control_net.n;
    o.gen.progress = on_progress;
    o.gen.progress_user = &ps;
    o.gen.phase = on_phase;
    o.gen.phase_user = &ps;
    o.gen.preview_user = &o;
    if (o.gen.seed < 0) fprintf(stderr, "sdx: picking a random seed\n");
    if (sdx_generate(model, &o.gen, &res) != SDX_OK) { fprintf(stderr, "\nsdx: %s\n", sdx_last_error(ctx)); goto done; }
    if (o.verbose) {
        size_t peak;
        print_timings(&ps);
        sdx_device_bytes(ctx, &peak);
        if (strcmp(sdx_backend_name(ctx), "cpu"))
            fprintf(stderr, "sdx: backend %s, peak device memory %.1f MiB\n", sdx_backend_name(ctx), (double)peak / 1048576.0);
    }
    status = 0;
    for (int i = 0; i < res.count; i++) {
        char path[4096];
        /* sized to fit: a long prompt must not lose its end (or half a
         * UTF-8 sequence) in the PNG */
        size_t need = 0;
        char *params = sdx_format_parameters(model, &o.gen, res.seeds[i], NULL, 0, &need) == SDX_OK ? (char *)malloc(need + 1) : NULL;
        int written;
        if (!params || sdx_format_parameters(model, &o.gen, res.seeds[i], params, need + 1, NULL) != SDX_OK) {
            fprintf(stderr, "sdx: out of memory\n"); free(params); status = 1; break;
        }
        batch_path(o.output, i, path, sizeof path);
        written = write_png(path, &res.images[i], params);
        if (!written) { free(params); status = 1; continue; }
        fprintf(stderr, "sdx: wrote %s (seed %lld)\n", path, (long long)res.seeds[i]);
        if (o.latent_output) {
            /* the parameters travel along, for the PNG of -M decode */
            const char *meta[2] = { "parameters", params };
            sdx_tensor t = res.latents[i];
            batch_path(o.latent_output, i, path, sizeof path);
            t.name = "latent";
            if (sdx_st_write(ctx, path, &t, 1, meta, 1) != SDX_OK) { fprintf(stderr, "sdx: %s\n", sdx_last_error(ctx)); status = 1; }
        }
        free(params);
    }
    sdx_gen_result_free(ctx, &res);
done:
    free(init.data);
    free(mask.data);
    sdx_tensor_free(ctx, &init_latent);
    for (int i = 0; i < MAX_CONTROLS; i++) {
        sdx_controlnet_free(control_net[i]);
        free(control_image[i].data);
    }
    sdx_model_free(model);
    sdx_destroy(ctx);
    return status;
}
