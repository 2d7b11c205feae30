/* sdx-server - AUTOMATIC1111's HTTP API (the part front-ends use) on top
 * of sdx.h, for SillyTavern, Open WebUI and scripts:
 *
 *   sdx-server -m model.safetensors [--listen-port 7860]
 *
 * POST /sdapi/v1/txt2img and /img2img, GET /sdapi/v1/progress (with a
 * preview), POST /sdapi/v1/interrupt, GET /sdapi/v1/sd-models, /samplers,
 * /schedulers, /options (POST /options is accepted and ignored). The model
 * flags are sdx's; see --help and README, "Server".
 *
 * HTTP is libmicrohttpd's (Debian libmicrohttpd-dev), JSON cJSON's
 * (libcjson-dev). One model, one context: requests wait in a queue and a
 * worker thread generates them one at a time; each connection has a
 * thread of its own (libmicrohttpd's thread-per-connection mode), which
 * waits for its job. POSIX only (threads, signals). */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#define PROG "sdx-server"
#define LOG_ERRORS 1   /* see log_to_stderr */
#include "common.h"

#include <stdarg.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <netdb.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <cjson/cJSON.h>
#include <stb/stb_image.h>
#include <ctype.h>
#include <unistd.h>

/* ---- limits (README, "Server") ------------------------------------------ */

#define MAX_BODY        (48u << 20)  /* request body bytes (init image and mask in base64) */
#define MAX_PROMPT      65536        /* bytes of the prompt, and of the negative prompt */
#define MAX_IMAGE_SIDE  4096         /* an init image or mask, decoded */
#define MAX_IMAGES      16           /* batch_size * n_iter */
#define MAX_QUEUE       64           /* requests waiting; more get 503 */
#define MAX_CONNECTIONS 128          /* each has a thread */
#define MAX_MEMBERS     1024         /* members of a request object (A1111's have some 50) */
#define STR_(x) #x
#define STR(x) STR_(x)                /* MAX_PROMPT as "65536", in the field table's ranges */

/* The statuses it answers with (libmicrohttpd's names for 413 and 422
 * changed between versions). */
enum {
    HTTP_OK = 200,
    HTTP_BAD_REQUEST = 400,         /* the body is not a JSON object */
    HTTP_NOT_FOUND = 404,
    HTTP_METHOD_NOT_ALLOWED = 405,
    HTTP_CONFLICT = 409,            /* interrupted */
    HTTP_TOO_LARGE = 413,           /* beyond the limits above */
    HTTP_UNPROCESSABLE = 422,       /* a field of the wrong type or out of range */
    HTTP_INTERNAL_ERROR = 500,
    HTTP_UNAVAILABLE = 503          /* out of memory, queue full, shutting down */
};

/* ---- the command line ---------------------------------------------------- */

/* sdx's options (the model and run rows set them) and the server's own. */
typedef struct server_options {
    options o;                  /* first: the shared rows' offsets are into it */
    const char *listen_ip;
    int listen_port;
} server_options;

#define SERVER_AT(field) offsetof(server_options, field)

static void usage(FILE *f);

static int show_help(options *o, const char *val) {
    (void)o;
    (void)val;
    usage(stdout);
    return 1;
}

static const option server_rows[] = {
    { .heading = "Server" },
    { .flag = "-l", .name = "--listen-ip", .arg = "IP", .kind = OPT_STRING, .at = SERVER_AT(listen_ip),
      .help = "address to listen on (default: 127.0.0.1; 0.0.0.0 or :: for every\n"
              "interface: the API has no authentication)" },
    { .name = "--listen-port", .arg = "N", .kind = OPT_INT, .at = SERVER_AT(listen_port),
      .help = "port (default: 7860, A1111's; 0: any free one, printed at start)" },
    { .name = "--preview-interval", .arg = "N", .kind = OPT_INT, .at = AT(gen.preview_interval),
      .help = "decode a preview for /progress every N steps (default: 5; 0: none;\n"
              "TAESD, --taesd, makes them cheap)" },
    { 0 }
};

static const option help_row[] = {
    { .flag = "-h", .name = "--help", .kind = OPT_CALL, .call = show_help, .help = "this text" },
    { 0 }
};

static const option *const option_tables[] = { model_options, server_rows, run_options, help_row, NULL };

static void usage(FILE *f) {
    fprintf(f, "usage: sdx-server -m MODEL [options]\n"
               "  serves AUTOMATIC1111's API at http://IP:PORT/sdapi/v1/ (README, \"Server\")\n");
    print_options(f, option_tables);
}

/* 0 to run, 1 after --help, -1 on error (reported). */
static int parse_args(int argc, char **argv, server_options *so) {
    int rc;
    memset(so, 0, sizeof *so);
    so->listen_ip = "127.0.0.1";
    so->listen_port = 7860;
    so->o.gen.preview_interval = 5;
    so->o.gen.rng = SDX_RNG_CUDA;      /* A1111's default noise */
    if ((rc = parse_options(argc, argv, option_tables, so)) != 0) return rc;
    if (!so->o.model.checkpoint) { fprintf(stderr, PROG ": no model given (-m PATH); see --help\n"); return -1; }
    if (so->listen_port < 0 || so->listen_port > 65535) {
        fprintf(stderr, PROG ": --listen-port %d: must be in 0..65535\n", so->listen_port);
        return -1;
    }
    if (so->o.gen.preview_interval < 0) {
        fprintf(stderr, PROG ": --preview-interval %d: must be 0 or more\n", so->o.gen.preview_interval);
        return -1;
    }
    return 0;
}

/* ---- base64 -------------------------------------------------------------- */

static const char base64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* malloc'd, NUL-terminated; NULL when out of memory */
static char *base64_encode(const unsigned char *p, size_t n) {
    char *out = n < SIZE_MAX / 2 ? (char *)malloc((n + 2) / 3 * 4 + 1) : NULL, *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *o++ = base64_digits[v >> 18];
        *o++ = base64_digits[(v >> 12) & 63];
        *o++ = i + 1 < n ? base64_digits[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? base64_digits[v & 63] : '=';
    }
    *o = 0;
    return out;
}

/* The bytes of base64 text (whitespace skipped, padding optional),
 * malloc'd; NULL with *bad set when the text is not base64, NULL with
 * *bad clear when out of memory. */
static unsigned char *base64_decode(const char *s, size_t *len, int *bad) {
    size_t n = strlen(s), bits = 0, pad = 0;
    unsigned char *out = (unsigned char *)malloc(n / 4 * 3 + 3), *o = out;
    uint32_t acc = 0;
    *bad = 0;
    if (!out) return NULL;
    for (; *s; s++) {
        const char *d = strchr(base64_digits, *s);
        if (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t') continue;
        if (*s == '=' && pad < 2) { pad++; continue; }
        if (!d || pad) { free(out); *bad = 1; return NULL; }     /* a digit after '=' too */
        acc = acc << 6 | (uint32_t)(d - base64_digits);
        if ((bits += 6) >= 8) { bits -= 8; *o++ = (unsigned char)(acc >> bits); }
    }
    if (bits >= 6 || o == out) { free(out); *bad = 1; return NULL; }     /* a lone digit at the end, or nothing */
    *len = (size_t)(o - out);
    return out;
}

/* ---- the server's state ---------------------------------------------------- */

typedef struct reply {
    unsigned status;
    char *body;                 /* malloc'd JSON; NULL: out of memory (a fixed 503 goes out) */
} reply;

/* What a request asked for, absent fields at their defaults. */
typedef struct request {
    const char *prompt, *negative_prompt, *sampler_name, *sampler_index, *scheduler, *init_image, *mask;
    double steps, cfg_scale, width, height, seed, batch_size, n_iter, denoising_strength, mask_blur, inpainting_mask_invert;
} request;

/* One txt2img or img2img request, from its handler's thread to the worker
 * and back. The strings in gen point into `request`. */
typedef struct job {
    struct job *next;
    cJSON *request;
    int img2img;
    sdx_gen_params gen;
    sdx_image init, mask;
    int batch_size;             /* images per "job" in A1111's words; gen.batch_count is all of them */
    const char *sampler, *scheduler;   /* the sdx names, gen's */
    request rq;                 /* the fields read, for the echo */
    int done;
    reply out;
} job;

typedef struct server {
    const server_options *so;
    sdx_ctx *ctx;
    sdx_model *model;
    char model_title[256];      /* the checkpoint's file name, A1111's "title" */
    pthread_mutex_t lock;
    pthread_cond_t changed;     /* a job queued or done, or stopping */
    job *head, *tail;
    int queued, stopping;
    int open_requests;          /* begun and not yet answered to the end (on_completed) */
    /* the running job, for /progress and /interrupt */
    job *running;
    int interrupted, image, step, steps;
    double started;
    char timestamp[16];
    sdx_image preview;          /* the latest preview (data malloc'd; NULL: none yet) */
} server;

/* ---- replies --------------------------------------------------------------- */

static void reply_json(reply *r, unsigned status, cJSON *json) {
    r->status = status;
    r->body = json ? cJSON_PrintUnformatted(json) : NULL;
    cJSON_Delete(json);
}

/* {"error": the status's reason, "detail": the message} */
static void reply_error(reply *r, unsigned status, const char *fmt, ...) {
    char detail[1024];
    cJSON *o = cJSON_CreateObject();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (o && (!cJSON_AddStringToObject(o, "error", MHD_get_reason_phrase_for(status)) || !cJSON_AddStringToObject(o, "detail", detail))) {
        cJSON_Delete(o);
        o = NULL;
    }
    reply_json(r, status, o);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, reply *r, const char *allow) {
    static const char nomem[] = "{\"error\":\"Service Unavailable\",\"detail\":\"out of memory\"}";
    struct MHD_Response *resp;
    enum MHD_Result ok;
    if (r->body) resp = MHD_create_response_from_buffer(strlen(r->body), r->body, MHD_RESPMEM_MUST_FREE);
    else resp = MHD_create_response_from_buffer(sizeof nomem - 1, (void *)nomem, MHD_RESPMEM_PERSISTENT);
    if (!resp) { free(r->body); return MHD_NO; }
    if (!r->body) r->status = HTTP_UNAVAILABLE;
    r->body = NULL;             /* the response owns it */
    if (MHD_add_response_header(resp, "Content-Type", "application/json") != MHD_YES ||
        (allow && MHD_add_response_header(resp, "Allow", allow) != MHD_YES)) {
        MHD_destroy_response(resp);
        return MHD_NO;
    }
    ok = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* ---- names: A1111's and sdx's --------------------------------------------- */

/* The first n bytes of a equal b (NULL: never), ignoring case, with ' ' and '_' the
 * same ("SGM Uniform" is A1111's label of its scheduler "sgm_uniform"). */
static int same_name(const char *a, size_t n, const char *b) {
    size_t i = 0;
    if (!b) return 0;
    for (; i < n && b[i]; i++) {
        int x = tolower((unsigned char)a[i]), y = tolower((unsigned char)b[i]);
        if (x != y && !((x == ' ' || x == '_') && (y == ' ' || y == '_'))) return 0;
    }
    return i == n && !b[i];
}

/* The sdx name of a scheduler given by sdx's name or A1111's label or
 * name (n bytes); Align Your Steps by A1111's name is "ays", whose table
 * the model family picks. NULL: none. */
static const char *scheduler_named(const char *name, size_t n) {
    for (int s = 0; s < SDX_SCHED_COUNT; s++)
        if (same_name(name, n, sdx_scheduler_name((sdx_scheduler)s))) return sdx_scheduler_name((sdx_scheduler)s);
    for (int s = 0; s < SDX_SCHED_COUNT; s++)
        if (same_name(name, n, sdx_scheduler_a1111_name((sdx_scheduler)s)))
            return s == SDX_SCHED_AYS_SD1 || s == SDX_SCHED_AYS_SDXL ? "ays" : sdx_scheduler_name((sdx_scheduler)s);
    return same_name(name, n, "ays") ? "ays" : NULL;
}

/* A1111's label of a scheduler scheduler_named gave; sdx's name where
 * A1111 has none. */
static const char *scheduler_label(const char *sdx_name) {
    for (int s = 0; s < SDX_SCHED_COUNT; s++)
        if (!strcmp(sdx_name, sdx_scheduler_name((sdx_scheduler)s)) || (!strcmp(sdx_name, "ays") && s == SDX_SCHED_AYS_SD1))
            return sdx_scheduler_a1111_name((sdx_scheduler)s) ? sdx_scheduler_a1111_name((sdx_scheduler)s) : sdx_name;
    return sdx_name;
}

/* The sdx name of a sampler given by sdx's name or alias, or A1111's. */
static const char *sampler_named(const char *name, size_t n) {
    char buf[64];
    sdx_sampler id;
    for (int s = 0; s < SDX_SAMPLER_COUNT; s++)
        if (same_name(name, n, sdx_sampler_name((sdx_sampler)s)) || same_name(name, n, sdx_sampler_a1111_name((sdx_sampler)s)))
            return sdx_sampler_name((sdx_sampler)s);
    if (n >= sizeof buf) return NULL;
    memcpy(buf, name, n);       /* sdx's other spellings (euler_a, dpm++2m); no context: no message */
    buf[n] = 0;
    return sdx_sampler_from_name(NULL, buf, &id) == SDX_OK ? sdx_sampler_name(id) : NULL;
}

static const char *sampler_label(const char *sdx_name) {
    for (int s = 0; s < SDX_SAMPLER_COUNT; s++)
        if (!strcmp(sdx_name, sdx_sampler_name((sdx_sampler)s)) && sdx_sampler_a1111_name((sdx_sampler)s))
            return sdx_sampler_a1111_name((sdx_sampler)s);
    return sdx_name;
}

/* A sampler_name; older A1111 names carry a scheduler ("DPM++ 2M
 * Karras"), which sets *scheduler unless the request chose one. */
static const char *resolve_sampler(const char *name, const char **scheduler, int scheduler_chosen) {
    const char *s = sampler_named(name, strlen(name)), *space = strrchr(name, ' '), *sched;
    if (s || !space || !(sched = scheduler_named(space + 1, strlen(space + 1)))) return s;
    if ((s = sampler_named(name, (size_t)(space - name))) && !scheduler_chosen) *scheduler = sched;
    return s;
}

/* ---- requests: the fields and their checks ------------------------------- */

enum { TXT2IMG = 1, IMG2IMG = 2, BOTH = 3 };
typedef enum { FIELD_TEXT, FIELD_INT, FIELD_NUMBER, FIELD_IMAGES, FIELD_IMAGE } field_kind;

/* One row per field the server reads; it ignores the others, as A1111
 * does. JSON null is the default. The defaults are sdx's (the CLI's),
 * but for the seed: random, as A1111's. */
typedef struct field {
    const char *name;
    field_kind kind;
    int endpoints;
    const char *range;          /* a number's, as the CLI writes ranges; a text's bytes */
    size_t at;                  /* into request */
    double number;              /* the default of a number */
    const char *text;           /* the default of a text (NULL: none) */
} field;

#define RQ(f) offsetof(request, f)
#define DEFAULT_SAMPLER "Euler a"       /* sdx's default (euler_a), by A1111's name */
#define DEFAULT_SCHEDULER "Automatic"   /* sdx's (normal), by A1111's label */
#define PROMPT_BYTES "[0, " STR(MAX_PROMPT) "]"
#define IMAGES "[1, " STR(MAX_IMAGES) "]"

static const field fields[] = {
    { "prompt",                 FIELD_TEXT,   BOTH,    PROMPT_BYTES, RQ(prompt),                 0, "" },
    { "negative_prompt",        FIELD_TEXT,   BOTH,    PROMPT_BYTES, RQ(negative_prompt),        0, "" },
    { "sampler_name",           FIELD_TEXT,   BOTH,    "[0, 63]",    RQ(sampler_name),           0, NULL },
    { "sampler_index",          FIELD_TEXT,   BOTH,    "[0, 63]",    RQ(sampler_index),          0, DEFAULT_SAMPLER },   /* older A1111 */
    { "scheduler",              FIELD_TEXT,   BOTH,    "[0, 63]",    RQ(scheduler),              0, DEFAULT_SCHEDULER },
    { "steps",                  FIELD_INT,    BOTH,    "[1, 150]",   RQ(steps),                  20, NULL },
    { "cfg_scale",              FIELD_NUMBER, BOTH,    "[0, 30]",    RQ(cfg_scale),              7, NULL },
    { "width",                  FIELD_INT,    BOTH,    "[64, 2048]", RQ(width),                  0, NULL },   /* 0: the model's */
    { "height",                 FIELD_INT,    BOTH,    "[64, 2048]", RQ(height),                 0, NULL },
    { "seed",                   FIELD_INT,    BOTH,    "[-1, 4294967295]", RQ(seed),             -1, NULL },
    { "batch_size",             FIELD_INT,    BOTH,    IMAGES,       RQ(batch_size),             1, NULL },
    { "n_iter",                 FIELD_INT,    BOTH,    IMAGES,       RQ(n_iter),                 1, NULL },
    { "denoising_strength",     FIELD_NUMBER, IMG2IMG, "(0, 1]",     RQ(denoising_strength),     0.75, NULL },
    { "init_images",            FIELD_IMAGES, IMG2IMG, NULL,         RQ(init_image),             0, NULL },
    { "mask",                   FIELD_IMAGE,  IMG2IMG, NULL,         RQ(mask),                   0, NULL },
    { "mask_blur",              FIELD_INT,    IMG2IMG, "[0, 64]",    RQ(mask_blur),              4, NULL },
    { "inpainting_mask_invert", FIELD_INT,    IMG2IMG, "[0, 1]",     RQ(inpainting_mask_invert), 0, NULL },
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

/* The row of a field the endpoint reads, or NULL. */
static const field *field_named(const char *name, int endpoint) {
    for (size_t i = 0; i < N_FIELDS; i++)
        if ((fields[i].endpoints & endpoint) && !strcmp(name, fields[i].name)) return &fields[i];
    return NULL;
}

static const char *json_type(const cJSON *v) {
    return cJSON_IsString(v) ? "a string" : cJSON_IsNumber(v) ? "a number" : cJSON_IsBool(v) ? "a boolean" :
           cJSON_IsArray(v) ? "a list" : cJSON_IsObject(v) ? "an object" : "null";
}

/* Reads one field's value into rq; 0 with a 4xx in r when it is wrong. */
static int read_field(const field *f, const cJSON *v, request *rq, reply *r) {
    void *at = (char *)rq + f->at;
    double lo = 0, hi = 0;
    if (f->range) sscanf(f->range + 1, "%lf, %lf", &lo, &hi);
    switch (f->kind) {
    case FIELD_TEXT:
        if (!cJSON_IsString(v)) { reply_error(r, HTTP_UNPROCESSABLE, "%s: expected a string, got %s", f->name, json_type(v)); return 0; }
        if ((double)strlen(v->valuestring) > hi) {
            reply_error(r, HTTP_TOO_LARGE, "%s: %zu bytes, more than %.0f", f->name, strlen(v->valuestring), hi);
            return 0;
        }
        *(const char **)at = v->valuestring;
        return 1;
    case FIELD_INT:
    case FIELD_NUMBER:
        if (!cJSON_IsNumber(v)) {
            reply_error(r, HTTP_UNPROCESSABLE, "%s: expected a number, got %s", f->name, json_type(v));
            return 0;
        }
        if ((f->kind == FIELD_INT && v->valuedouble != floor(v->valuedouble)) || !in_range(v->valuedouble, f->range)) {
            reply_error(r, HTTP_UNPROCESSABLE, "%s: expected %s in %s, got %.17g", f->name,
                        f->kind == FIELD_INT ? "an integer" : "a number", f->range, v->valuedouble);
            return 0;
        }
        *(double *)at = v->valuedouble;
        return 1;
    case FIELD_IMAGES:          /* A1111 takes the first for every image of a batch */
        if (!cJSON_IsArray(v) || !cJSON_GetArraySize(v) || !cJSON_IsString(cJSON_GetArrayItem(v, 0))) {
            reply_error(r, HTTP_UNPROCESSABLE, "%s: expected a list of base64 images, got %s%s", f->name, json_type(v),
                        !cJSON_IsArray(v) ? "" : cJSON_GetArraySize(v) ? " not of strings" : ", empty");
            return 0;
        }
        *(const char **)at = cJSON_GetArrayItem(v, 0)->valuestring;
        return 1;
    case FIELD_IMAGE:
        if (!cJSON_IsString(v)) { reply_error(r, HTTP_UNPROCESSABLE, "%s: expected a base64 image, got %s", f->name, json_type(v)); return 0; }
        *(const char **)at = v->valuestring;
        return 1;
    }
    return 0;
}

static int read_request(const cJSON *body, int endpoint, request *rq, reply *r) {
    memset(rq, 0, sizeof *rq);
    if (cJSON_GetArraySize(body) > MAX_MEMBERS) {
        reply_error(r, HTTP_TOO_LARGE, "the body has %d members, more than %d", cJSON_GetArraySize(body), MAX_MEMBERS);
        return 0;
    }
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *f = &fields[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, f->name);
        if (f->kind == FIELD_INT || f->kind == FIELD_NUMBER) *(double *)((char *)rq + f->at) = f->number;
        else *(const char **)((char *)rq + f->at) = f->text;
        if ((f->endpoints & endpoint) && v && !cJSON_IsNull(v) && !read_field(f, v, rq, r)) return 0;
    }
    if (fmod(rq->width, 8) != 0 || fmod(rq->height, 8) != 0) {
        int w = fmod(rq->width, 8) != 0;
        reply_error(r, HTTP_UNPROCESSABLE, "%s %.0f: not a multiple of 8", w ? "width" : "height", w ? rq->width : rq->height);
        return 0;
    }
    if (rq->batch_size * rq->n_iter > MAX_IMAGES) {
        reply_error(r, HTTP_UNPROCESSABLE, "batch_size %.0f x n_iter %.0f: at most %d images a request", rq->batch_size,
                    rq->n_iter, MAX_IMAGES);
        return 0;
    }
    if (endpoint == IMG2IMG && !rq->init_image) {
        reply_error(r, HTTP_UNPROCESSABLE, "init_images: required (a list of base64 images)");
        return 0;
    }
    return 1;
}

/* A base64 image (a data: URL too) decoded with `channels` channels and
 * fitted to w x h as the CLI's -i (fit_size); 0 with a 4xx in r when it
 * is not an image or too large. */
static int decode_image(const char *name, const char *text, int channels, int w, int h, sdx_image *out, reply *r) {
    const char *comma = strchr(text, ',');
    unsigned char *bytes, *px = NULL;
    size_t len = 0;
    int bad, iw = 0, ih = 0, ic, ok;
    if (!strncmp(text, "data:", 5) && comma) text = comma + 1;
    if (!(bytes = base64_decode(text, &len, &bad))) {
        if (bad) reply_error(r, HTTP_UNPROCESSABLE, "%s: not base64", name);
        else reply_error(r, HTTP_UNAVAILABLE, "%s: out of memory", name);
        return 0;
    }
    if (len > INT32_MAX || !stbi_info_from_memory(bytes, (int)len, &iw, &ih, &ic)) {
        reply_error(r, HTTP_UNPROCESSABLE, "%s: not an image (PNG, JPEG, BMP, ...)", name);
    } else if (iw > MAX_IMAGE_SIDE || ih > MAX_IMAGE_SIDE) {
        reply_error(r, HTTP_TOO_LARGE, "%s: %dx%d, larger than %dx%d", name, iw, ih, MAX_IMAGE_SIDE, MAX_IMAGE_SIDE);
    } else if (iw < 8 || ih < 8) {
        reply_error(r, HTTP_UNPROCESSABLE, "%s: %dx%d, smaller than 8x8", name, iw, ih);
    } else if (!(px = stbi_load_from_memory(bytes, (int)len, &iw, &ih, &ic, channels))) {
        reply_error(r, HTTP_UNPROCESSABLE, "%s: cannot decode it: %s", name, stbi_failure_reason());
    }
    free(bytes);
    if (!px) return 0;
    fit_size(iw, ih, &w, &h);
    ok = image_from_pixels(px, iw, ih, channels, w, h, out);
    stbi_image_free(px);
    if (!ok) reply_error(r, HTTP_UNAVAILABLE, "%s: out of memory", name);
    return ok;
}

static void job_free(job *j) {
    if (!j) return;
    cJSON_Delete(j->request);
    free(j->init.data);
    free(j->mask.data);
    free(j->out.body);
    free(j);
}

/* Parses the body as a JSON object (cJSON tells no syntax error from
 * running out of memory: both are 400); 0 with a 4xx in r. */
static int parse_body(const char *body, size_t len, cJSON **out, reply *r) {
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    while (*out && end < body + len && strchr(" \t\r\n", *end)) end++;
    if (*out && end == body + len && cJSON_IsObject(*out)) return 1;
    if (!*out || end != body + len) reply_error(r, HTTP_BAD_REQUEST, "the body is not JSON (at byte %td of %zu)",
                                                     end ? end - body : 0, len);
    else reply_error(r, HTTP_BAD_REQUEST, "the body must be a JSON object, not %s", json_type(*out));
    cJSON_Delete(*out);
    *out = NULL;
    return 0;
}

/* The generation parameters of a read request. */
static void set_params(const server_options *so, const request *rq, job *j) {
    j->gen = so->o.gen;        /* the command line's: lora_dir, embedding_dir, codec, rng, preview_interval */
    j->gen.prompt = rq->prompt;
    j->gen.negative_prompt = rq->negative_prompt;
    j->gen.sampler = j->sampler;
    j->gen.scheduler = j->scheduler;
    j->gen.steps = (int)rq->steps;
    j->gen.cfg_scale = (float)rq->cfg_scale;
    j->gen.width = (int)rq->width;
    j->gen.height = (int)rq->height;
    j->gen.seed = (int64_t)rq->seed;
    j->batch_size = (int)rq->batch_size;
    j->gen.batch_count = (int)(rq->batch_size * rq->n_iter);
    if (!j->img2img) return;
    j->gen.init_image = &j->init;
    j->gen.strength = (float)rq->denoising_strength;
    if (j->mask.data) {         /* A1111 pastes the init image back outside the blurred mask */
        j->gen.mask = &j->mask;
        j->gen.paste_back = 1;
        j->gen.mask_blur = rq->mask_blur ? (int)rq->mask_blur : -1;
    }
}

/* The job a request body asks for; NULL with a 4xx (or 503) in r. */
static job *job_from_body(const server *s, const char *body, size_t len, int img2img, reply *r) {
    request rq;
    const char *sampler;
    job *j = (job *)calloc(1, sizeof *j);
    if (!j) { reply_error(r, HTTP_UNAVAILABLE, "out of memory"); return NULL; }
    j->img2img = img2img;
    if (!parse_body(body, len, &j->request, r) || !read_request(j->request, img2img ? IMG2IMG : TXT2IMG, &rq, r)) goto fail;
    if (!*rq.scheduler) rq.scheduler = DEFAULT_SCHEDULER;     /* "" as A1111 takes it */
    if (!(j->scheduler = scheduler_named(rq.scheduler, strlen(rq.scheduler)))) {
        reply_error(r, HTTP_UNPROCESSABLE, "scheduler '%s': unknown (GET /sdapi/v1/schedulers lists them)", rq.scheduler);
        goto fail;
    }
    sampler = rq.sampler_name && *rq.sampler_name ? rq.sampler_name : *rq.sampler_index ? rq.sampler_index : DEFAULT_SAMPLER;
    if (!(j->sampler = resolve_sampler(sampler, &j->scheduler, !same_name(DEFAULT_SCHEDULER, strlen(DEFAULT_SCHEDULER), rq.scheduler)))) {
        reply_error(r, HTTP_UNPROCESSABLE, "sampler_name '%s': unknown (GET /sdapi/v1/samplers lists them)", sampler);
        goto fail;
    }
    if (img2img && (!decode_image("init_images[0]", rq.init_image, 3, (int)rq.width, (int)rq.height, &j->init, r) ||
                    (rq.mask && !decode_image("mask", rq.mask, 1, 0, 0, &j->mask, r))))
        goto fail;
    for (size_t i = 0; rq.inpainting_mask_invert && i < (size_t)j->mask.width * (size_t)j->mask.height; i++)
        j->mask.data[i] = (uint8_t)(255 - j->mask.data[i]);
    j->rq = rq;
    set_params(s->so, &rq, j);
    return j;
fail:
    job_free(j);
    return NULL;
}

/* path without its folders */
static const char *file_name(const char *path) {
    const char *sep = last_separator(path);
    return sep ? sep + 1 : path;
}

/* ---- replies built with cJSON ---------------------------------------------- */

/* cJSON's constructors and adders return NULL or 0 when out of memory:
 * these note it, so a reply is built in a row and checked once. */
typedef struct builder { int failed; } builder;

static cJSON *put(builder *b, cJSON *obj, const char *name, cJSON *item) {
    cJSON_bool ok = item && obj && (name ? cJSON_AddItemToObject(obj, name, item) : cJSON_AddItemToArray(obj, item));
    if (ok) return item;
    cJSON_Delete(item);
    b->failed = 1;
    return NULL;
}

/* replaces obj's member name, if any */
static void replace(builder *b, cJSON *obj, const char *name, cJSON *item) {
    if (obj) cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
    put(b, obj, name, item);
}

static cJSON *text_or_null(const char *text) { return text ? cJSON_CreateString(text) : cJSON_CreateNull(); }

/* The image as base64 of a PNG with its parameters text (NULL: none). */
static cJSON *png_base64(const sdx_image *img, const char *parameters) {
    membuf png;
    char *b64;
    cJSON *item;
    if (!encode_png(img, parameters, &png)) return NULL;
    b64 = base64_encode(png.p, png.len);
    free(png.p);
    item = b64 ? cJSON_CreateString(b64) : NULL;
    free(b64);
    return item;
}

/* The request echoed as A1111 echoes it: the members as sent, the fields
 * the server reads as it used them, the images left out (null). */
static cJSON *echo_request(builder *b, const job *j, const sdx_gen_result *res) {
    cJSON *o = cJSON_CreateObject();
    int endpoint = j->img2img ? IMG2IMG : TXT2IMG;
    b->failed = b->failed || !o;
    for (const cJSON *v = j->request->child; o && v; v = v->next)     /* at most MAX_MEMBERS */
        if (!field_named(v->string, endpoint) && !cJSON_GetObjectItemCaseSensitive(o, v->string))
            put(b, o, v->string, cJSON_Duplicate(v, 1));
    for (size_t i = 0; o && i < N_FIELDS; i++) {
        const field *f = &fields[i];
        const void *at = (const char *)&j->rq + f->at;
        if (!(f->endpoints & endpoint)) continue;
        if (f->kind == FIELD_TEXT) replace(b, o, f->name, text_or_null(*(const char *const *)at));
        else if (f->kind == FIELD_INT || f->kind == FIELD_NUMBER) replace(b, o, f->name, cJSON_CreateNumber(*(const double *)at));
        else replace(b, o, f->name, cJSON_CreateNull());
    }
    replace(b, o, "sampler_name", cJSON_CreateString(sampler_label(j->sampler)));
    replace(b, o, "sampler_index", cJSON_CreateString(sampler_label(j->sampler)));
    replace(b, o, "scheduler", cJSON_CreateString(scheduler_label(j->scheduler)));
    replace(b, o, "width", cJSON_CreateNumber(res->images[0].width));
    replace(b, o, "height", cJSON_CreateNumber(res->images[0].height));
    return o;
}

/* A1111's "info": the generation as it was made, with each image's
 * parameters text in "infotexts". */
static cJSON *info_json(builder *b, const server *s, const job *j, const sdx_gen_result *res, char *const *params) {
    cJSON *o = cJSON_CreateObject(), *prompts, *negatives, *seeds, *subseeds, *texts, *extra;
    const char *vae = s->so->o.model.vae;
    b->failed = b->failed || !o;
    put(b, o, "prompt", cJSON_CreateString(j->gen.prompt));
    prompts = put(b, o, "all_prompts", cJSON_CreateArray());
    put(b, o, "negative_prompt", cJSON_CreateString(j->gen.negative_prompt));
    negatives = put(b, o, "all_negative_prompts", cJSON_CreateArray());
    put(b, o, "seed", cJSON_CreateNumber((double)res->seeds[0]));
    seeds = put(b, o, "all_seeds", cJSON_CreateArray());
    put(b, o, "subseed", cJSON_CreateNumber(-1));
    subseeds = put(b, o, "all_subseeds", cJSON_CreateArray());
    put(b, o, "subseed_strength", cJSON_CreateNumber(0));
    put(b, o, "width", cJSON_CreateNumber(res->images[0].width));
    put(b, o, "height", cJSON_CreateNumber(res->images[0].height));
    put(b, o, "sampler_name", cJSON_CreateString(sampler_label(j->sampler)));
    put(b, o, "cfg_scale", cJSON_CreateNumber(j->gen.cfg_scale));
    put(b, o, "steps", cJSON_CreateNumber(j->gen.steps));
    put(b, o, "batch_size", cJSON_CreateNumber(j->batch_size));
    put(b, o, "restore_faces", cJSON_CreateFalse());
    put(b, o, "face_restoration_model", cJSON_CreateNull());
    put(b, o, "sd_model_name", cJSON_CreateString(sdx_model_name(s->model)));
    put(b, o, "sd_model_hash", cJSON_CreateNull());
    put(b, o, "sd_vae_name", text_or_null(vae ? file_name(vae) : NULL));
    put(b, o, "sd_vae_hash", cJSON_CreateNull());
    put(b, o, "seed_resize_from_w", cJSON_CreateNumber(-1));
    put(b, o, "seed_resize_from_h", cJSON_CreateNumber(-1));
    put(b, o, "denoising_strength", j->img2img ? cJSON_CreateNumber(j->gen.strength) : cJSON_CreateNull());
    extra = put(b, o, "extra_generation_params", cJSON_CreateObject());
    put(b, extra, "Schedule type", cJSON_CreateString(scheduler_label(j->scheduler)));
    put(b, o, "index_of_first_image", cJSON_CreateNumber(0));
    texts = put(b, o, "infotexts", cJSON_CreateArray());
    put(b, o, "styles", cJSON_CreateArray());
    put(b, o, "job_timestamp", cJSON_CreateString(s->timestamp));
    put(b, o, "clip_skip", cJSON_CreateNumber(j->gen.clip_skip > 1 ? j->gen.clip_skip : 1));
    put(b, o, "is_using_inpainting_conditioning", cJSON_CreateFalse());
    put(b, o, "version", cJSON_CreateString("sdx " SDX_VERSION_STRING));
    for (int i = 0; i < res->count; i++) {
        put(b, prompts, NULL, cJSON_CreateString(j->gen.prompt));
        put(b, negatives, NULL, cJSON_CreateString(j->gen.negative_prompt));
        put(b, seeds, NULL, cJSON_CreateNumber((double)res->seeds[i]));
        put(b, subseeds, NULL, cJSON_CreateNumber(-1));
        put(b, texts, NULL, cJSON_CreateString(params[i]));
    }
    return o;
}

/* {"images": [base64 PNG...], "parameters": {...}, "info": "{...}"} */
static void reply_images(const server *s, job *j, const sdx_gen_result *res) {
    char *params[MAX_IMAGES] = { 0 }, *info_text = NULL;
    builder b = { 0 };
    cJSON *root = cJSON_CreateObject(), *images = put(&b, root, "images", cJSON_CreateArray()), *info;
    for (int i = 0; i < res->count && !b.failed; i++) {
        if (!(params[i] = format_parameters(s->model, &j->gen, res->seeds[i]))) b.failed = 1;
        else put(&b, images, NULL, png_base64(&res->images[i], params[i]));
    }
    if (!b.failed) {
        put(&b, root, "parameters", echo_request(&b, j, res));
        info = info_json(&b, s, j, res, params);
        info_text = info && !b.failed ? cJSON_PrintUnformatted(info) : NULL;
        cJSON_Delete(info);
        put(&b, root, "info", info_text ? cJSON_CreateString(info_text) : NULL);
    }
    free(info_text);
    for (int i = 0; i < res->count; i++) free(params[i]);
    if (b.failed || !root) {
        cJSON_Delete(root);
        reply_error(&j->out, HTTP_UNAVAILABLE, "out of memory for the reply");
    } else {
        reply_json(&j->out, HTTP_OK, root);
    }
}

/* ---- the worker: one generation at a time ----------------------------------- */

static int on_progress(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    server *s = (server *)user;
    int stop;
    (void)latent;
    pthread_mutex_lock(&s->lock);
    s->image = image;
    s->step = step;
    s->steps = steps;
    stop = s->interrupted || s->stopping;   /* the flag, not only sdx_cancel: a cancel made before sdx_generate began misses it */
    pthread_mutex_unlock(&s->lock);
    return stop;
}

/* Keeps a copy of the latest preview for /progress; one that cannot be
 * copied is skipped (the generation goes on). */
static int on_preview(void *user, int image, int step, int steps, const sdx_image *img) {
    server *s = (server *)user;
    size_t n = (size_t)img->width * (size_t)img->height * (size_t)img->channels;
    uint8_t *copy = (uint8_t *)malloc(n), *old;
    (void)image;
    (void)step;
    (void)steps;
    if (!copy) return 0;
    memcpy(copy, img->data, n);
    pthread_mutex_lock(&s->lock);
    old = s->preview.data;
    s->preview = *img;
    s->preview.data = copy;
    pthread_mutex_unlock(&s->lock);
    free(old);
    return 0;
}

static void run_job(server *s, job *j) {
    sdx_gen_result res;
    double t0 = now_seconds();
    int rc, stopping, interrupted, step, steps;
    j->gen.progress = on_progress;
    j->gen.progress_user = s;
    j->gen.preview = j->gen.preview_interval > 0 ? on_preview : NULL;
    j->gen.preview_user = s;
    rc = sdx_generate(s->model, &j->gen, &res);
    pthread_mutex_lock(&s->lock);
    stopping = s->stopping;
    interrupted = s->interrupted;
    step = s->step;
    steps = s->steps;
    pthread_mutex_unlock(&s->lock);
    if (rc == SDX_OK) reply_images(s, j, &res);
    else if (rc == SDX_ERR_CANCELLED && stopping) reply_error(&j->out, HTTP_UNAVAILABLE, "the server is shutting down");
    else if (rc == SDX_ERR_CANCELLED && interrupted)
        reply_error(&j->out, HTTP_CONFLICT, "interrupted (POST /sdapi/v1/interrupt) after step %d of %d; no images", step, steps);
    else if (rc == SDX_ERR_INVALID_ARG || rc == SDX_ERR_UNSUPPORTED) reply_error(&j->out, HTTP_UNPROCESSABLE, "%s", sdx_last_error(s->ctx));
    else reply_error(&j->out, rc == SDX_ERR_NOMEM ? HTTP_UNAVAILABLE : HTTP_INTERNAL_ERROR, "%s", sdx_last_error(s->ctx));
    if (rc == SDX_OK) sdx_gen_result_free(s->ctx, &res);
    fprintf(stderr, PROG ": %s, %d step(s), %d image(s): %u %s in %.2f s\n", j->img2img ? "img2img" : "txt2img", j->gen.steps,
            j->gen.batch_count, j->out.status, MHD_get_reason_phrase_for(j->out.status), now_seconds() - t0);
}

static void *worker_main(void *arg) {
    server *s = (server *)arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        job *j;
        time_t now = time(NULL);
        struct tm tm;
        while (!s->head && !s->stopping) pthread_cond_wait(&s->changed, &s->lock);
        if (s->stopping) break;
        j = s->head;
        if (!(s->head = j->next)) s->tail = NULL;
        s->queued--;
        s->running = j;
        s->interrupted = s->image = s->step = 0;
        s->steps = j->gen.steps;
        s->started = now_seconds();
        strftime(s->timestamp, sizeof s->timestamp, "%Y%m%d%H%M%S", localtime_r(&now, &tm));
        pthread_mutex_unlock(&s->lock);
        run_job(s, j);
        pthread_mutex_lock(&s->lock);
        s->running = NULL;
        free(s->preview.data);
        memset(&s->preview, 0, sizeof s->preview);
        j->done = 1;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Queues the job and waits for its reply in j->out. */
static void submit(server *s, job *j) {
    pthread_mutex_lock(&s->lock);
    if (s->stopping) {
        reply_error(&j->out, HTTP_UNAVAILABLE, "the server is shutting down");
        j->done = 1;
    } else if (s->queued >= MAX_QUEUE) {
        reply_error(&j->out, HTTP_UNAVAILABLE, "%d requests are waiting already; try again later", MAX_QUEUE);
        j->done = 1;
    } else {
        if (s->tail) s->tail->next = j;
        else s->head = j;
        s->tail = j;
        s->queued++;
        pthread_cond_broadcast(&s->changed);
    }
    while (!j->done) pthread_cond_wait(&s->changed, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

/* SIGINT/SIGTERM: the running job is cancelled, the queued ones answered
 * 503, the worker ends. */
static void stop_worker(server *s, pthread_t worker) {
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    if (s->running) sdx_cancel(s->ctx);
    for (job *j = s->head, *next; j; j = next) {
        next = j->next;
        reply_error(&j->out, HTTP_UNAVAILABLE, "the server is shutting down");
        j->done = 1;
    }
    s->head = s->tail = NULL;
    s->queued = 0;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    pthread_join(worker, NULL);
}

/* ---- the endpoints ------------------------------------------------------------ */

/* What a handler is given: the server, the connection (for the query)
 * and the body. */
typedef struct http_call {
    server *s;
    struct MHD_Connection *c;
    const char *body;
    size_t len;
} http_call;

typedef void (*handler_fn)(const http_call *in, reply *r);

/* 200 with json, or 503 when building it ran out of memory */
static void reply_built(reply *r, const builder *b, cJSON *json) {
    if (b->failed) {
        cJSON_Delete(json);
        json = NULL;
    }
    reply_json(r, HTTP_OK, json);
}

static void handle_generate(server *s, const char *body, size_t len, int img2img, reply *r) {
    job *j = job_from_body(s, body, len, img2img, r);
    if (!j) return;
    submit(s, j);
    *r = j->out;
    j->out.body = NULL;
    job_free(j);
}

static void handle_txt2img(const http_call *in, reply *r) {
    handle_generate(in->s, in->body, in->len, 0, r);
}

static void handle_img2img(const http_call *in, reply *r) {
    handle_generate(in->s, in->body, in->len, 1, r);
}

/* A1111's progress: the running request's share done, the seconds left
 * as A1111 estimates them, its state and the latest preview. */
static void handle_progress(const http_call *in, reply *r) {
    server *s = in->s;
    const char *skip = MHD_lookup_connection_value(in->c, MHD_GET_ARGUMENT_KIND, "skip_current_image");
    int running, image, step, steps, count = 0, interrupted, img2img = 0;
    double elapsed, progress = 0;
    char timestamp[16];
    sdx_image preview = { 0 };
    builder b = { 0 };
    cJSON *root = cJSON_CreateObject(), *state;
    pthread_mutex_lock(&s->lock);
    running = s->running != NULL;
    if (running) count = s->running->gen.batch_count, img2img = s->running->img2img;
    image = s->image;
    step = s->step;
    steps = s->steps;
    interrupted = s->interrupted;
    elapsed = running ? now_seconds() - s->started : 0;
    memcpy(timestamp, s->timestamp, sizeof timestamp);
    if (running && s->preview.data && !(skip && !strcmp(skip, "true"))) {
        size_t n = (size_t)s->preview.width * (size_t)s->preview.height * (size_t)s->preview.channels;
        preview = s->preview;
        if ((preview.data = (uint8_t *)malloc(n))) memcpy(preview.data, s->preview.data, n);
        else b.failed = 1;
    }
    pthread_mutex_unlock(&s->lock);
    if (running && count) progress = (image + (steps ? (double)step / steps : 0)) / count;
    put(&b, root, "progress", cJSON_CreateNumber(progress));
    put(&b, root, "eta_relative", cJSON_CreateNumber(progress > 0 ? elapsed / progress - elapsed : 0));
    state = put(&b, root, "state", cJSON_CreateObject());
    put(&b, state, "skipped", cJSON_CreateFalse());
    put(&b, state, "interrupted", cJSON_CreateBool(running && interrupted));
    put(&b, state, "job", cJSON_CreateString(!running ? "" : img2img ? "img2img" : "txt2img"));
    put(&b, state, "job_count", cJSON_CreateNumber(count));
    put(&b, state, "job_timestamp", cJSON_CreateString(running ? timestamp : "0"));
    put(&b, state, "job_no", cJSON_CreateNumber(running ? image : 0));
    put(&b, state, "sampling_step", cJSON_CreateNumber(running ? step : 0));
    put(&b, state, "sampling_steps", cJSON_CreateNumber(running ? steps : 0));
    put(&b, root, "current_image", preview.data ? png_base64(&preview, NULL) : cJSON_CreateNull());
    put(&b, root, "textinfo", cJSON_CreateNull());
    free(preview.data);
    reply_built(r, &b, root);
}

/* Ends the running request (A1111's interrupt; queued ones go on): it
 * answers 409 with an error JSON, without the images of its batch. */
static void handle_interrupt(const http_call *in, reply *r) {
    server *s = in->s;
    pthread_mutex_lock(&s->lock);
    if (s->running) {
        s->interrupted = 1;
        sdx_cancel(s->ctx);
    }
    pthread_mutex_unlock(&s->lock);
    reply_json(r, HTTP_OK, cJSON_CreateObject());
}

static void handle_models(const http_call *in, reply *r) {
    server *s = in->s;
    builder b = { 0 };
    cJSON *list = cJSON_CreateArray(), *m = put(&b, list, NULL, cJSON_CreateObject());
    put(&b, m, "title", cJSON_CreateString(s->model_title));
    put(&b, m, "model_name", cJSON_CreateString(sdx_model_name(s->model)));
    put(&b, m, "hash", cJSON_CreateNull());
    put(&b, m, "sha256", cJSON_CreateNull());
    put(&b, m, "filename", cJSON_CreateString(s->so->o.model.checkpoint));
    put(&b, m, "config", cJSON_CreateNull());
    reply_built(r, &b, list);
}

/* Every sdx sampler, by A1111's name where it has one (sdx's an alias). */
static void handle_samplers(const http_call *in, reply *r) {
    builder b = { 0 };
    cJSON *list = cJSON_CreateArray();
    (void)in;
    for (int i = 0; i < SDX_SAMPLER_COUNT; i++) {
        const char *name = sdx_sampler_name((sdx_sampler)i), *label = sampler_label(name);
        cJSON *row = put(&b, list, NULL, cJSON_CreateObject()), *aliases = put(&b, row, "aliases", cJSON_CreateArray());
        put(&b, row, "name", cJSON_CreateString(label));
        if (strcmp(label, name)) put(&b, aliases, NULL, cJSON_CreateString(name));
        put(&b, row, "options", cJSON_CreateObject());
    }
    reply_built(r, &b, list);
}

/* Every sdx scheduler as A1111 lists its own: name (its label in
 * lower case, '_' for ' '), label, sdx's name an alias; Align Your Steps
 * once (the model family picks its table). */
static void handle_schedulers(const http_call *in, reply *r) {
    builder b = { 0 };
    cJSON *list = cJSON_CreateArray();
    (void)in;
    for (int i = 0; i < SDX_SCHED_COUNT; i++) {
        const char *sdx_name = i == SDX_SCHED_AYS_SD1 ? "ays" : sdx_scheduler_name((sdx_scheduler)i), *label = scheduler_label(sdx_name);
        char name[64];
        size_t k = 0;
        cJSON *row, *aliases;
        if (i == SDX_SCHED_AYS_SDXL) continue;
        for (; label[k] && k + 1 < sizeof name; k++) name[k] = label[k] == ' ' ? '_' : (char)tolower((unsigned char)label[k]);
        name[k] = 0;
        row = put(&b, list, NULL, cJSON_CreateObject());
        put(&b, row, "name", cJSON_CreateString(name));
        put(&b, row, "label", cJSON_CreateString(label));
        aliases = put(&b, row, "aliases", cJSON_CreateArray());
        if (strcmp(name, sdx_name)) put(&b, aliases, NULL, cJSON_CreateString(sdx_name));
        put(&b, row, "default_rho", cJSON_CreateNumber(-1));
        put(&b, row, "need_inner_model", cJSON_CreateFalse());
    }
    reply_built(r, &b, list);
}

/* The few A1111 options that describe this server. */
static void handle_options(const http_call *in, reply *r) {
    server *s = in->s;
    builder b = { 0 };
    cJSON *o = cJSON_CreateObject();
    const char *vae = s->so->o.model.vae;
    int every = s->so->o.gen.preview_interval;
    put(&b, o, "sd_model_checkpoint", cJSON_CreateString(s->model_title));
    put(&b, o, "sd_checkpoint_hash", cJSON_CreateNull());
    put(&b, o, "sd_vae", cJSON_CreateString(vae ? file_name(vae) : "Automatic"));
    put(&b, o, "samples_format", cJSON_CreateString("png"));
    put(&b, o, "CLIP_stop_at_last_layers", cJSON_CreateNumber(1));
    put(&b, o, "live_previews_enable", cJSON_CreateBool(every > 0));
    put(&b, o, "show_progress_every_n_steps", cJSON_CreateNumber(every > 0 ? every : -1));
    reply_built(r, &b, o);
}

/* Accepted (a JSON object) and ignored: one model, settings fixed at
 * start. A1111 answers null. */
static void handle_set_options(const http_call *in, reply *r) {
    cJSON *o;
    if (!parse_body(in->body, in->len, &o, r)) return;
    cJSON_Delete(o);
    reply_json(r, HTTP_OK, cJSON_CreateNull());
}

typedef struct endpoint { const char *method, *path; handler_fn handle; } endpoint;

static const endpoint endpoints[] = {
    { "POST", "/sdapi/v1/txt2img",    handle_txt2img },
    { "POST", "/sdapi/v1/img2img",    handle_img2img },
    { "GET",  "/sdapi/v1/progress",   handle_progress },
    { "POST", "/sdapi/v1/interrupt",  handle_interrupt },
    { "GET",  "/sdapi/v1/sd-models",  handle_models },
    { "GET",  "/sdapi/v1/samplers",   handle_samplers },
    { "GET",  "/sdapi/v1/schedulers", handle_schedulers },
    { "GET",  "/sdapi/v1/options",    handle_options },
    { "POST", "/sdapi/v1/options",    handle_set_options },
};
#define N_ENDPOINTS (sizeof endpoints / sizeof endpoints[0])

/* ---- HTTP (libmicrohttpd) ---------------------------------------------------------- */

/* A request's body as it arrives. */
typedef struct upload {
    membuf body;
    int too_big;
} upload;

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    server *s = (server *)cls;
    upload *u = (upload *)*con_cls;
    (void)c;
    (void)toe;
    if (u) {
        free(u->body.p);
        pthread_mutex_lock(&s->lock);
        s->open_requests--;
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
    }
    free(u);
    *con_cls = NULL;
}

/* At shutdown, after the worker: the requests it answered are sent to the
 * end before the daemon closes their connections (at most `seconds`). */
static void wait_for_replies(server *s, int seconds) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&s->lock);
    while (s->open_requests > 0 && pthread_cond_timedwait(&s->changed, &s->lock, &until) == 0) {}
    pthread_mutex_unlock(&s->lock);
}

/* The endpoint's reply, or 404 / 405 (with the methods it takes). */
static enum MHD_Result route(server *s, struct MHD_Connection *c, const char *url, const char *method, const upload *u) {
    char allow[32] = "";
    reply r = { 0, NULL };
    for (size_t i = 0; i < N_ENDPOINTS; i++) {
        const endpoint *e = &endpoints[i];
        if (strcmp(url, e->path)) continue;
        if (!strcmp(method, e->method)) {
            http_call in = { s, c, u->body.p ? (const char *)u->body.p : "", u->body.len };
            e->handle(&in, &r);
            return send_reply(c, &r, NULL);
        }
        snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s", allow[0] ? ", " : "", e->method);
    }
    if (allow[0]) reply_error(&r, HTTP_METHOD_NOT_ALLOWED, "%s %s: this endpoint takes %s", method, url, allow);
    else reply_error(&r, HTTP_NOT_FOUND, "%s: no such endpoint (sdx-server serves part of /sdapi/v1: README, \"Server\")", url);
    return send_reply(c, &r, allow[0] ? allow : NULL);
}

/* libmicrohttpd calls it when the headers are in, for each piece of the
 * body, then once more: the body collects in memory up to MAX_BODY. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
                                  const char *data, size_t *size, void **con_cls) {
    upload *u = (upload *)*con_cls;
    reply r = { 0, NULL };
    (void)version;
    if (!u) {
        const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        server *s = (server *)cls;
        if (!(u = (upload *)calloc(1, sizeof *u))) return MHD_NO;
        *con_cls = u;
        pthread_mutex_lock(&s->lock);
        s->open_requests++;
        pthread_mutex_unlock(&s->lock);
        if (length && strtoull(length, NULL, 10) > MAX_BODY) u->too_big = 1;
        else return MHD_YES;
    } else if (*size) {
        if (!u->too_big && u->body.len + *size > MAX_BODY) {
            u->too_big = 1;
            free(u->body.p);
            memset(&u->body, 0, sizeof u->body);
        }
        if (!u->too_big) membuf_put(&u->body, (void *)data, (int)*size);
        *size = 0;              /* taken (or dropped: it is answered when it is all in) */
        return MHD_YES;
    }
    if (u->too_big) reply_error(&r, HTTP_TOO_LARGE, "the body is larger than %u bytes", MAX_BODY);
    else if (u->body.failed) reply_error(&r, HTTP_UNAVAILABLE, "out of memory for the body");
    else return route((server *)cls, c, url, method, u);
    return send_reply(c, &r, NULL);
}

/* Listens on --listen-ip and --listen-port; *port: the port it got. */
static struct MHD_Daemon *start_daemon(server *s, const server_options *so, unsigned *port) {
    struct addrinfo hints, *ai = NULL;
    struct MHD_Daemon *d;
    const union MHD_DaemonInfo *info;
    char service[16];
    int err;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(service, sizeof service, "%d", so->listen_port);
    if ((err = getaddrinfo(so->listen_ip, service, &hints, &ai)) != 0) {
        fprintf(stderr, PROG ": --listen-ip %s: %s\n", so->listen_ip, gai_strerror(err));
        return NULL;
    }
    d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                         (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
                         (uint16_t)so->listen_port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                         MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) { fprintf(stderr, PROG ": cannot listen on %s port %d\n", so->listen_ip, so->listen_port); return NULL; }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : (unsigned)so->listen_port;
    return d;
}

/* ---- main ----------------------------------------------------------------------- */

int main(int argc, char **argv) {
    server_options so;
    server s;
    sigset_t stop;
    pthread_t worker;
    struct MHD_Daemon *d = NULL;
    unsigned port = 0;
    int rc, sig, status = 1, locks = 0, worker_started = 0;
    rc = parse_args(argc, argv, &so);
    if (rc) return rc > 0 ? 0 : 2;
    /* SIGINT and SIGTERM wait for sigwait below: blocked before any thread
     * starts (the context's too), every thread inherits the mask */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    memset(&s, 0, sizeof s);
    s.so = &so;
    snprintf(s.model_title, sizeof s.model_title, "%s", file_name(so.o.model.checkpoint));
    if (!(s.ctx = create_context(&so.o))) { fprintf(stderr, PROG ": out of memory\n"); return 1; }
    if (!select_backend(s.ctx, so.o.backend)) goto done;
    if (sdx_model_load(s.ctx, &so.o.model, &s.model) != SDX_OK) { fprintf(stderr, PROG ": %s\n", sdx_last_error(s.ctx)); goto done; }
    if (!apply_loras(s.ctx, s.model, &so.o)) goto done;
    if (pthread_mutex_init(&s.lock, NULL) || (pthread_cond_init(&s.changed, NULL) && (pthread_mutex_destroy(&s.lock), 1))) {
        fprintf(stderr, PROG ": cannot make a lock\n");
        goto done;
    }
    locks = 1;
    if (pthread_create(&worker, NULL, worker_main, &s)) { fprintf(stderr, PROG ": cannot start the worker thread\n"); goto done; }
    worker_started = 1;
    if (!(d = start_daemon(&s, &so, &port))) goto done;
    fprintf(stderr, PROG ": listening on http://%s%s%s:%u/ (model %s)\n", strchr(so.listen_ip, ':') ? "[" : "", so.listen_ip,
            strchr(so.listen_ip, ':') ? "]" : "", port, sdx_model_name(s.model));
    while (sigwait(&stop, &sig) != 0) {}
    fprintf(stderr, PROG ": %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    status = 0;
done:
    if (d) {
        int fd = MHD_quiesce_daemon(d);     /* no new connections */
        if (fd >= 0) close(fd);
    }
    if (worker_started) stop_worker(&s, worker);
    if (d) {
        wait_for_replies(&s, 10);     /* the jobs are answered: let the answers out */
        MHD_stop_daemon(d);
    }
    if (locks) {
        pthread_cond_destroy(&s.changed);
        pthread_mutex_destroy(&s.lock);
    }
    sdx_model_free(s.model);
    sdx_destroy(s.ctx);
    return status;
}
