/* What the example programs sdx (examples/sdx.c) and sdx-server
 * (examples/sdx-server.c) share: the options table's types and parser,
 * the model and run options both take, the model set up from them,
 * images fitted to a size, and PNGs carrying the A1111 "parameters" text.
 *
 * Include it after sdx.h (with SDX_IMPLEMENTATION in one file); define
 * PROG, the program's name in messages, first ("sdx" if not). Portable C:
 * the Windows build of the CLI compiles it too. */
#ifndef SDX_EXAMPLES_COMMON_H
#define SDX_EXAMPLES_COMMON_H

#include "sdx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stddef.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>
#endif
#include <stb/stb_image_write.h>

#ifndef PROG
#define PROG "sdx"
#endif

/* ---- the command line ------------------------------------------------ */

typedef enum { MODE_IMG_GEN, MODE_DECODE, MODE_ENCODE, MODE_UPSCALE } run_mode;
#define MAX_LORAS 64

typedef struct lora_arg { char path[4096]; float unet, te; } lora_arg;

/* the Nth --control-image / -strength / -start / -end go with the Nth --control-net */
#define MAX_CONTROLS 8
typedef struct path_list { const char *path[MAX_CONTROLS]; int n; } path_list;
#define MAX_SCHEDULE 1000       /* --timesteps / --sigmas values */
typedef struct number_list { float value[MAX_CONTROLS]; int n; } number_list;

/* What sdx's command line sets; sdx-server's begins with one (it takes
 * the model and run options below). */
typedef struct options {
    sdx_model_desc model;
    sdx_gen_params gen;
    const char *init_path, *mask_path, *init_latent_path, *output, *latent_output, *latent_input, *preview_path, *backend;
    const char *upscale_model;
    const char *refiner_path;   /* --refiner: loaded as the model is, into gen.refiner */
    int upscale_repeats;
    run_mode mode;
    int threads, verbose, trace, n_taesd, convert, quant_exact, no_graphs;
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

/* How an option stores its value at `at`, an offset into the program's
 * options (`options`, or a struct that begins with one). */
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
 * read these tables. A row with only a heading starts a section of --help;
 * an empty row ends a table. A program's options are a NULL-terminated
 * list of tables, in --help order. */
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
static int in_range(double f, const char *range) {
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

/* ---- the shared options that OPT_CALL */

static int add_lora(options *o, const char *val) {
    if (o->n_loras == MAX_LORAS || !parse_lora(val, &o->loras[o->n_loras])) {
        fprintf(stderr, PROG ": --lora %s: expected FILE[:unet_strength[:clip_strength]] (at most %d)\n", val, MAX_LORAS);
        return -1;
    }
    o->n_loras++;
    return 0;
}

static int add_taesd(options *o, const char *val) {
    if (o->n_taesd == 2) { fprintf(stderr, PROG ": --taesd given more than twice (a decoder and an encoder)\n"); return -1; }
    o->model.taesd[o->n_taesd++] = val;
    return 0;
}

static int taesd_for_previews_only(options *o, const char *val) {
    (void)val;
    o->gen.codec = SDX_CODEC_VAE;
    return 0;
}

static int set_compute(options *o, const char *val) {
    if (!strcmp(val, "f32")) o->model.compute = SDX_COMPUTE_F32;
    else if (!strcmp(val, "bf16")) o->model.compute = SDX_COMPUTE_BF16;
    else { fprintf(stderr, PROG ": --compute %s: valid values are f32, bf16\n", val); return -1; }
    return 0;
}

static int set_activations(options *o, const char *val) {
    if (!strcmp(val, "f32")) o->model.activations = SDX_ACT_F32;
    else if (!strcmp(val, "f16")) o->model.activations = SDX_ACT_F16;
    else if (!strcmp(val, "bf16")) o->model.activations = SDX_ACT_BF16;
    else { fprintf(stderr, PROG ": --activations %s: valid values are f32, f16, bf16\n", val); return -1; }
    return 0;
}

/* The model: what sdx and sdx-server load. */
static const option model_options[] = {
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
      .help = "eps, v, x0 (also 'sample': SDXL-Lightning's 1-step model) or\n"
              "lcm (LCM models, ComfyUI's; sd-cli has none): override the\n"
              "prediction type (default: from the checkpoint)" },
    { .name = "--scan-weights", .alias = "--scan", .kind = OPT_SWITCH, .at = AT(model.scan_nonfinite),
      .help = "check every weight for NaN/Inf at load and name bad tensors" },
    { .name = "--compute", .arg = "{f32,bf16}", .kind = OPT_CALL, .call = set_compute,
      .help = "arithmetic of linear layers and convolutions (default f32; bf16:\n"
              "AMX tiles, or AVX512-BF16 on AMD, about 1e-2 relative error;\n"
              "f32 elsewhere)" },
    { .name = "--activations", .arg = "{f32,f16,bf16}", .kind = OPT_CALL, .call = set_activations,
      .help = "what layer outputs are stored in, every part (default: f32 on the\n"
              "CPU; on a GPU f16, bf16 for SDXL's VAE, f32 text encoders);\n"
              "arithmetic stays f32, f16 stores saturate" },
    { .name = "--quant-exact", .kind = OPT_SWITCH, .at = AT(quant_exact),
      .help = "multiply quantized GGUF weights as if dequantized first, not\n"
              "with int8 dot products (slower where the CPU has them)" },
    { .name = "--no-graphs", .kind = OPT_SWITCH, .at = AT(no_graphs),
      .help = "on a GPU, run every UNet call op by op instead of replaying a\n"
              "recorded CUDA/HIP graph (the same bits, slower)" },
    { .name = "--lora", .arg = "FILE[:U[:C]]", .kind = OPT_CALL, .call = add_lora,
      .help = "apply a LoRA / LyCORIS file with UNet strength U and text-encoder\n"
              "strength C (default 1, C defaults to U); repeatable, in order" },
    { .name = "--lora-model-dir", .arg = "DIR", .kind = OPT_STRING, .at = AT(gen.lora_dir),
      .help = "folder for the prompt's <lora:name:w> / <lora:name:te_w:unet_w> tags\n"
              "(DIR/name.safetensors; the tags are removed from the prompt)" },
    { .name = "--embd-dir", .arg = "DIR", .kind = OPT_STRING, .at = AT(gen.embedding_dir),
      .help = "textual-inversion embeddings (.safetensors), used where the prompt\n"
              "names them: the file name, or embedding:name" },
    { 0 }
};

/* How it runs: the end of sdx's "Output and run" section, and sdx-server's. */
static const option run_options[] = {
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
    { 0 }
};

static int option_ends_table(const option *opt) { return !opt->heading && !opt->name; }

/* The option list for --help: sections, flags, help lines. */
static void print_options(FILE *f, const option *const *tables) {
    for (; *tables; tables++)
        for (const option *opt = *tables; !option_ends_table(opt); opt++) {
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

static const option *find_option(const option *const *tables, const char *name) {
    for (; *tables; tables++)
        for (const option *opt = *tables; !option_ends_table(opt); opt++)
            if (opt->name && (!strcmp(name, opt->name) || (opt->flag && !strcmp(name, opt->flag)) ||
                              (opt->alias && !strcmp(name, opt->alias))))
                return opt;
    return NULL;
}

/* A number for OPT_NUMBER and OPT_NET_NUMBER. */
static int parse_number(const option *opt, const char *name, const char *val, float *out) {
    if (parse_float(val, out) && in_range(*out, opt->range)) return 1;
    if (opt->range) fprintf(stderr, PROG ": %s %s: must be in %s\n", name, val, opt->range);
    else fprintf(stderr, PROG ": %s %s: not a number\n", name, val);
    return 0;
}

/* Stores one option's value (NULL for a switch) into the options at o;
 * name is the flag as the errors show it. Returns as an OPT_CALL
 * function does. */
static int apply_option(void *o, const option *opt, const char *name, const char *val) {
    void *at = (char *)o + opt->at;
    long long n;
    switch (opt->kind) {
    case OPT_SWITCH: *(int *)at = 1; return 0;
    case OPT_STRING: *(const char **)at = val; return 0;
    case OPT_INT:
    case OPT_POSITIVE:
        if (!parse_int(val, -1, 1000000, &n)) { fprintf(stderr, PROG ": %s %s: not an integer in range\n", name, val); return -1; }
        *(int *)at = (int)n;
        if (opt->kind == OPT_POSITIVE && n <= 0) { fprintf(stderr, PROG ": %s %s: must be positive\n", name, val); return -1; }
        return 0;
    case OPT_NUMBER: return parse_number(opt, name, val, (float *)at) ? 0 : -1;
    case OPT_NET_PATH: {
        path_list *list = (path_list *)at;
        if (list->n >= MAX_CONTROLS) { fprintf(stderr, PROG ": %s: at most %d ControlNets\n", name, MAX_CONTROLS); return -1; }
        list->path[list->n++] = val;
        return 0;
    }
    case OPT_NET_NUMBER: {
        number_list *list = (number_list *)at;
        if (list->n >= MAX_CONTROLS) { fprintf(stderr, PROG ": %s: at most %d ControlNets\n", name, MAX_CONTROLS); return -1; }
        if (!parse_number(opt, name, val, &list->value[list->n])) return -1;
        list->n++;
        return 0;
    }
    case OPT_CALL: return opt->call((options *)o, val);
    }
    return -1;
}

/* Applies argv's options to o, as `tables` describe them: 0 done, 1
 * stopped (--help), -1 error (reported). The caller set the defaults. */
static int parse_options(int argc, char **argv, const option *const *tables, void *o) {
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
        opt = find_option(tables, a);
        if (v && (!opt || !opt->arg)) { fprintf(stderr, PROG ": %s takes no value\n", a); return -1; }
        if (!opt) { fprintf(stderr, PROG ": unknown option %s (see --help)\n", a); return -1; }
        if (opt->arg && !v) {
            if (i + 1 == argc) { fprintf(stderr, PROG ": %s needs a value\n", a); return -1; }
            v = argv[++i];
        }
        name = opt->alias && !strcmp(a, opt->alias) ? opt->name : a;   /* errors call an alias by its name in --help */
        rc = apply_option(o, opt, name, v);
        if (rc) return rc;
    }
    return 0;
}

/* ---- the context and the model ------------------------------------------ */

/* sdx logs each failure as it records it. The sdx command prints
 * sdx_last_error wherever a call fails, so it leaves errors out of the
 * log (they were printed twice); sdx-server, whose failures go to its
 * clients, defines LOG_ERRORS to keep them on its console too. */
static void log_to_stderr(sdx_log_level level, const char *msg, void *user) {
    (void)user;
#ifndef LOG_ERRORS
    if (level == SDX_LOG_ERROR) return;
#endif
    fprintf(stderr, PROG ": %s%s\n", level == SDX_LOG_WARN ? "warning: " : "", msg);
}

/* A context with -t's threads, --trace and -v's log level. */
static sdx_ctx *create_context(const options *o) {
    sdx_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.n_threads = o->threads > 0 ? o->threads : 0;
    desc.trace_nonfinite = o->trace;
    desc.quant_exact = o->quant_exact;
    desc.no_graphs = o->no_graphs;
    desc.log = log_to_stderr;
    desc.log_level = o->verbose ? SDX_LOG_INFO : SDX_LOG_WARN;
    return sdx_create(&desc);
}

/* --backend: "cpu", or "hip[:N]" in a GPU build (its default). */
static int select_backend(sdx_ctx *ctx, const char *name) {
    (void)ctx;
#ifdef SDX_WITH_HIP
    int dev = 0;
    if (!name) name = "hip";
    if (!strncmp(name, "hip", 3) && (name[3] == 0 || (name[3] == ':' && (dev = atoi(name + 4)) >= 0))) {
        if (sdx_hip_use(ctx, dev) != SDX_OK) { fprintf(stderr, PROG ": %s (--backend cpu runs on the CPU)\n", sdx_last_error(ctx)); return 0; }
        return 1;
    }
#endif
    if (!name || !strcmp(name, "cpu")) return 1;
    fprintf(stderr, PROG ": --backend %s: valid values are cpu%s\n", name,
#ifdef SDX_WITH_HIP
            ", hip, hip:N"
#else
            " (GPUs need the sdx-hip build: make sdx-hip)"
#endif
    );
    return 0;
}

/* The --lora files, merged into the model in order. */
static int apply_loras(sdx_ctx *ctx, sdx_model *model, const options *o) {
    for (int i = 0; i < o->n_loras; i++)
        if (sdx_model_apply_lora(model, o->loras[i].path, o->loras[i].unet, o->loras[i].te) != SDX_OK) {
            fprintf(stderr, PROG ": %s\n", sdx_last_error(ctx));
            return 0;
        }
    return 1;
}

/* The "parameters" text of a result's image, malloc'd (NULL: out of
 * memory), sized to fit: a long prompt must not lose its end (or half a
 * UTF-8 sequence). */
static char *format_parameters(const sdx_model *model, const sdx_gen_params *gen, int64_t seed) {
    size_t need = 0;
    char *params = sdx_format_parameters(model, gen, seed, NULL, 0, &need) == SDX_OK ? (char *)malloc(need + 1) : NULL;
    if (params && sdx_format_parameters(model, gen, seed, params, need + 1, NULL) != SDX_OK) {
        free(params);
        return NULL;
    }
    return params;
}

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

/* The last '/' or '\\' in path (Windows takes both), or NULL. */
static const char *last_separator(const char *path) {
    const char *sep = NULL;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') sep = p;
    return sep;
}

/* ---- images ---------------------------------------------------------- */

/* Bilinear resize of 8-bit interleaved pixels. */
static unsigned char *resize(const unsigned char *src, int sw, int sh, int c, int dw, int dh) {
    unsigned char *dst = (unsigned char *)malloc((size_t)dw * (size_t)dh * (size_t)c);
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

/* The size an iw x ih image is given for a requested w x h: both 0 keep
 * its size (the library crops it as ComfyUI does); one side 0 takes the
 * image's, rounded down to a multiple of 8. */
static void fit_size(int iw, int ih, int *w, int *h) {
    if (!*w && !*h) {
        *w = iw;
        *h = ih;
    } else {
        if (!*w) *w = iw / 8 * 8;
        if (!*h) *h = ih / 8 * 8;
    }
}

/* Decoded pixels (iw x ih, `channels` each) as an image of w x h, copied
 * or resized into malloc'd memory; 0 when out of memory. */
static int image_from_pixels(const unsigned char *px, int iw, int ih, int channels, int w, int h, sdx_image *out) {
    out->width = w;
    out->height = h;
    out->channels = channels;
    if (iw == w && ih == h) {
        size_t n = (size_t)iw * (size_t)ih * (size_t)channels;
        out->data = (uint8_t *)malloc(n);
        if (out->data) memcpy(out->data, px, n);
    } else {
        out->data = resize(px, iw, ih, channels, w, h);
    }
    return out->data != NULL;
}

/* ---- PNG with the parameters text ----------------------------------------- */

typedef struct { unsigned char *p; size_t len, cap; int failed; } membuf;

static void membuf_put(void *ctx, void *data, int size) {
    membuf *b = (membuf *)ctx;
    if (b->failed || size <= 0) return;
    if (b->cap - b->len < (size_t)size) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        unsigned char *np;
        while (cap - b->len < (size_t)size) cap *= 2;
        np = (unsigned char *)realloc(b->p, cap);
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
    c = (unsigned char *)malloc(12 + body);
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

/* The image as a PNG in memory (out->p, out->len; free out->p), with its
 * parameters (NULL: none) in a text chunk after the header, where A1111
 * puts them. 0 when out of memory (out is then empty). */
static int encode_png(const sdx_image *img, const char *parameters, membuf *out) {
    membuf png = { 0 };
    size_t clen = 0;
    unsigned char *chunk;
    memset(out, 0, sizeof *out);
    stbi_write_png_to_func(membuf_put, &png, img->width, img->height, img->channels, img->data, img->width * img->channels);
    chunk = parameters ? text_chunk("parameters", parameters, &clen) : NULL;
    if (png.failed || png.len < 33 || (parameters && !chunk)) {
        free(png.p);
        free(chunk);
        return 0;
    }
    /* signature + IHDR (8 + 25 bytes), the text chunk, then the rest */
    membuf_put(out, png.p, 33);
    if (chunk) membuf_put(out, chunk, (int)clen);
    membuf_put(out, png.p + 33, (int)(png.len - 33));
    free(png.p);
    free(chunk);
    if (out->failed) { free(out->p); memset(out, 0, sizeof *out); return 0; }
    return 1;
}

#endif
