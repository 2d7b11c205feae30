#pragma once
#include "api_core.h"
#include "api_backend.h"

/* ===================================================================== */
/*  Core: allocation, errors, logging, half floats, tensors, arena,       */
/*  thread pool, non-finite tracer                                        */
/* ===================================================================== */

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <errno.h>
#include <time.h>

#if defined(SDX_MALLOC) != defined(SDX_FREE) || defined(SDX_MALLOC) != defined(SDX_REALLOC)
#error "sdx.h: define all of SDX_MALLOC, SDX_REALLOC and SDX_FREE, or none"
#endif
#ifndef SDX_MALLOC
#define SDX_MALLOC(sz)       malloc(sz)
#define SDX_REALLOC(p, sz)   realloc(p, sz)
#define SDX_FREE(p)          free(p)
#endif
#ifndef SDX_ASSERT
#include <assert.h>
#define SDX_ASSERT(x) assert(x)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SDX__LIKELY(x)   __builtin_expect(!!(x), 1)
#define SDX__UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__MINGW32__)
#define SDX__PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))   /* C99 formats, see the prologue */
#else
#define SDX__PRINTF(a, b) __attribute__((format(printf, a, b)))
#endif
#else
#define SDX__LIKELY(x)   (x)
#define SDX__UNLIKELY(x) (x)
#define SDX__PRINTF(a, b)
#endif

/* C99 restrict; C++ has only the compilers' spelling. */
#if !defined(__cplusplus)
#define SDX__RESTRICT restrict
#elif defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER)
#define SDX__RESTRICT __restrict
#else
#define SDX__RESTRICT
#endif

#define SDX__MIN(a, b) ((a) < (b) ? (a) : (b))
#define SDX__MAX(a, b) ((a) > (b) ? (a) : (b))
#define SDX__ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Which model part an op belongs to; selects the storage policy and names
 * the part in tracer messages. */
typedef enum sdx__part {
    SDX__PART_NONE = 0,
    SDX__PART_TEXT,
    SDX__PART_UNET,
    SDX__PART_VAE,
    SDX__PART_CONTROLNET,
    SDX__PART_UPSCALER,
    SDX__PART_COUNT
} sdx__part;

typedef struct sdx__pool sdx__pool;

/* How sdx_cancel's counter is shared between threads (platform.c): 1 C11
 * atomics, 2 the GCC/Clang builtins (C++ and C99 builds), 3 Win32's
 * interlocked functions (MSVC), 0 a lock (SDX_NO_ATOMICS, or none of
 * these). */
#if defined(SDX_NO_ATOMICS)
#define SDX__ATOMICS 0
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__)
#define SDX__ATOMICS 1
#elif defined(__GNUC__) || defined(__clang__)
#define SDX__ATOMICS 2
#elif defined(_WIN32)
#define SDX__ATOMICS 3
#else
#define SDX__ATOMICS 0
#endif
#if SDX__ATOMICS == 1
typedef _Atomic unsigned sdx__counter;
#elif SDX__ATOMICS == 3
typedef volatile long sdx__counter;
#else
typedef unsigned sdx__counter;
#endif
/* Memory that went back to the OS and is filled again on demand: the
 * weights of a checkpoint from read callbacks in low-memory mode
 * (safetensors.c, sdx__st_drop_reads). Every op passes each operand's
 * bytes to `fill` first (ops.c); host code that reads such a weight calls
 * sdx__refill_need. A mapped file needs none: its pages fault back in. */
typedef struct sdx__refill {
    const unsigned char *lo, *hi;     /* the addresses it answers for */
    int (*fill)(void *owner, const unsigned char *p, size_t n);
    void *owner;
    struct sdx__refill *next;
} sdx__refill;

/* A model call recorded by the backend and replayed (see "graphs" below):
 * per slot (a call site: the UNet, each of a generation's first
 * ControlNets) the tape of the recorded call, a hash per op and upload in
 * order. */
#define SDX__GRAPH_CONTROLNETS 2
enum { SDX__GRAPH_UNET, SDX__GRAPH_CONTROLNET, SDX__GRAPH_SLOTS = SDX__GRAPH_CONTROLNET + SDX__GRAPH_CONTROLNETS };
typedef struct {
    uint64_t *tape;
    int n, cap;
    int seen;           /* a call ran: the next may be recorded */
    int recorded;       /* the backend holds the tape's recording */
    int failures;       /* recordings that failed */
    long replays;       /* calls that replayed the recording */
    int off;            /* calls read results back, or recording failed
                           SDX__GRAPH_TRIES times: run as they come */
} sdx__graph_slot;
#define SDX__PLAN_ARENAS 4
typedef struct {
    int state;          /* 0, or what the ops do now: SDX__GRAPH_RECORDING, _CHECKING, _PLANNING */
    int slot, pos;      /* the slot being recorded or checked, and where in its tape */
    sdx__graph_slot slots[SDX__GRAPH_SLOTS];
    struct sdx__arena *planned[SDX__PLAN_ARENAS];   /* the device arenas a call being planned uses (sdx__plan) */
    int n_planned;
} sdx__graph;
enum { SDX__GRAPH_RECORDING = 1, SDX__GRAPH_CHECKING = 2, SDX__GRAPH_PLANNING = 3 };
/* What an op returns while checking: its hash is the tape's (ok to skip
 * it), or it differs (the call runs as it comes). Never leaves sdx. */
#define SDX__GRAPH_CHECKED (-101)
#define SDX__GRAPH_DIFFERS (-102)
#define SDX__GRAPH_TRIES 3

struct sdx_ctx {
    sdx_desc desc;
    int      n_threads;
    sdx__pool *pool;             /* created lazily on first parallel op */
    sdx_backend host;            /* the CPU: host kernels, its own state  */
    sdx_backend be;              /* where tensors live and kernels run:
                                    the host, or a device's backend     */
    size_t   dev_bytes, dev_peak; /* device memory held (not on the CPU)  */
    size_t   be_scratch;         /* the backend's own (sdx_backend_scratch) */
    int      circular;           /* seamless tiling: convolutions wrap    */
    void    *pad_buf;            /* their padded input, backend memory    */
    size_t   pad_cap;
    char     error[1024];
    /* cancellation (cancel.c): sdx_cancel bumps `cancels` from any thread;
     * the running call noted its value as it began, in cancels_seen */
    sdx__counter cancels;
    unsigned cancels_seen;
    /* tracer state: what is running now, for messages */
    int      trace;
    sdx__part part;
    char     layer[192];
    sdx__refill *refills;        /* a list, usually empty */
    sdx__graph graph;            /* recorded calls, on a backend with graphs */
};

/* Bytes [p, p + n) present again where a refill answers for them. */
static int sdx__refill_need(sdx_ctx *ctx, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (const sdx__refill *r = ctx->refills; r; r = r->next)
        if (b >= r->lo && b < r->hi) return r->fill(r->owner, b, n);
    return SDX_OK;
}

static void sdx__refill_add(sdx_ctx *ctx, sdx__refill *r) {
    r->next = ctx->refills;
    ctx->refills = r;
}

static void sdx__refill_remove(sdx_ctx *ctx, const sdx__refill *r) {
    for (sdx__refill **at = &ctx->refills; *at; at = &(*at)->next)
        if (*at == r) { *at = r->next; return; }
}

/* ---- allocation ----------------------------------------------------- */

static void *sdx__malloc(sdx_ctx *ctx, size_t size) {
    if (size == 0) size = 1;
    if (ctx && ctx->desc.alloc) return ctx->desc.alloc(size, ctx->desc.user);
    return SDX_MALLOC(size);
}

static void *sdx__realloc(sdx_ctx *ctx, void *ptr, size_t size) {
    if (size == 0) size = 1;
    if (ctx && ctx->desc.realloc) return ctx->desc.realloc(ptr, size, ctx->desc.user);
    return SDX_REALLOC(ptr, size);
}

static void sdx__free(sdx_ctx *ctx, void *ptr) {
    if (!ptr) return;
    if (ctx && ctx->desc.free) { ctx->desc.free(ptr, ctx->desc.user); return; }
    SDX_FREE(ptr);
}

static void *sdx__calloc(sdx_ctx *ctx, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = sdx__malloc(ctx, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

/* a*b into *out; 0 on overflow. Sizes read from files go through this. */
static int sdx__mul_size(size_t a, size_t b, size_t *out) {
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

static char *sdx__strdup(sdx_ctx *ctx, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)sdx__malloc(ctx, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* A file's name without folder or extension, as people read and type it
 * (the model in the parameters text, <lora:name>): "C:\\models\\dream.v1.safetensors"
 * and "models/dream.v1.safetensors" both give "dream.v1". Both separators
 * on every system, so a name reads the same wherever its path was
 * written; a leading dot (".name") is no extension. */
static const char *sdx__path_base(const char *path) {
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    return base;
}

static void sdx__path_stem(const char *path, char *out, size_t size) {
    const char *base = sdx__path_base(path), *dot = strrchr(base, '.');
    snprintf(out, size, "%.*s", dot && dot != base ? (int)(dot - base) : (int)strlen(base), base);
}

/* ---- errors and logging ---------------------------------------------- */

static void sdx__vlog(sdx_ctx *ctx, sdx_log_level level, const char *fmt, va_list ap) {
    char buf[1024];
    if (!ctx || !ctx->desc.log || (int)level > (int)ctx->desc.log_level) return;
    vsnprintf(buf, sizeof buf, fmt, ap);
    ctx->desc.log(level, buf, ctx->desc.user);
}

static SDX__PRINTF(3, 4) void sdx__log(sdx_ctx *ctx, sdx_log_level level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sdx__vlog(ctx, level, fmt, ap);
    va_end(ap);
}

/* Records a failure and returns its code, so call sites read
 *     return sdx__fail(ctx, SDX_ERR_FORMAT, "%s: ...", path);          */
static sdx_result sdx__vfail(sdx_ctx *ctx, int code, const char *fmt, va_list ap) {
    if (ctx) {
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        sdx__log(ctx, SDX_LOG_ERROR, "%s", ctx->error);
    }
    return (sdx_result)code;
}

static SDX__PRINTF(3, 4) sdx_result sdx__fail(sdx_ctx *ctx, int code, const char *fmt, ...) {
    sdx_result rc;
    va_list ap;
    va_start(ap, fmt);
    rc = sdx__vfail(ctx, code, fmt, ap);
    va_end(ap);
    return rc;
}

static sdx_result sdx__nomem(sdx_ctx *ctx, const char *what, size_t bytes) {
    return sdx__fail(ctx, SDX_ERR_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
}

SDX_API const char *sdx_last_error(const sdx_ctx *ctx) { return ctx ? ctx->error : "no context"; }

SDX_API const char *sdx_result_name(int result) {
    switch (result) {
    case SDX_OK: return "ok";
    case SDX_ERR_INVALID_ARG: return "invalid argument";
    case SDX_ERR_NOMEM: return "out of memory";
    case SDX_ERR_IO: return "i/o error";
    case SDX_ERR_FORMAT: return "malformed file";
    case SDX_ERR_MODEL: return "model error";
    case SDX_ERR_NONFINITE: return "non-finite value";
    case SDX_ERR_CANCELLED: return "cancelled";
    case SDX_ERR_UNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

/* threads, file mapping, temporary files: POSIX or Win32 */
#include "platform.c"
/* sdx_cancel and the checks the long stages make */
#include "cancel.c"

/* ---- dtypes and half floats ----------------------------------------- */

/* the block-quantized types' layouts and dequantizers */
#include "quant.c"

/* One row per dtype: its name (safetensors' spelling for the element
 * types), values per block (1: an element type), bytes per block, and
 * for a block type the function that dequantizes one block. */
typedef struct sdx__dtype_info {
    const char *name;
    int block;
    size_t bytes;
    void (*dequant)(const unsigned char *block, float *out);
} sdx__dtype_info;

static const sdx__dtype_info sdx__dtypes[SDX_DTYPE_COUNT] = {
    { "F32", 1, 4, NULL },   { "F16", 1, 2, NULL },   { "BF16", 1, 2, NULL },  { "F64", 1, 8, NULL },
    { "I32", 1, 4, NULL },   { "I64", 1, 8, NULL },   { "U8", 1, 1, NULL },
    { "Q4_0", 32, 18, sdx__deq_q4_0 },   { "Q4_1", 32, 20, sdx__deq_q4_1 },
    { "Q5_0", 32, 22, sdx__deq_q5_0 },   { "Q5_1", 32, 24, sdx__deq_q5_1 },
    { "Q8_0", 32, 34, sdx__deq_q8_0 },
    { "Q2_K", 256, 84, sdx__deq_q2_k },  { "Q3_K", 256, 110, sdx__deq_q3_k },
    { "Q4_K", 256, 144, sdx__deq_q4_k }, { "Q5_K", 256, 176, sdx__deq_q5_k },
    { "Q6_K", 256, 210, sdx__deq_q6_k },
};

SDX_API size_t sdx_dtype_size(sdx_dtype t) {
    return (unsigned)t < SDX_DTYPE_COUNT && sdx__dtypes[t].block == 1 ? sdx__dtypes[t].bytes : 0;
}

SDX_API int sdx_dtype_block(sdx_dtype t, size_t *block_bytes) {
    int known = (unsigned)t < SDX_DTYPE_COUNT;
    if (block_bytes) *block_bytes = known ? sdx__dtypes[t].bytes : 0;
    return known ? sdx__dtypes[t].block : 0;
}

SDX_API const char *sdx_dtype_name(sdx_dtype t) {
    return (unsigned)t < SDX_DTYPE_COUNT ? sdx__dtypes[t].name : "?";
}

static int sdx__dtype_is_block(sdx_dtype t) { return sdx_dtype_block(t, NULL) > 1; }

/* Dequantizes n values of a block-quantized buffer starting at value
 * `offset`; both are whole blocks (rows are, so any run of rows is). */
static void sdx__dequant(const void *src, sdx_dtype t, int64_t offset, int64_t n, float *dst) {
    const sdx__dtype_info *d;
    const unsigned char *b;
    if (!sdx__dtype_is_block(t)) { SDX_ASSERT(0); return; }
    d = &sdx__dtypes[t];
    b = (const unsigned char *)src + (size_t)(offset / d->block) * d->bytes;
    SDX_ASSERT(offset % d->block == 0 && n % d->block == 0);
    for (int64_t i = 0; i < n; i += d->block, b += d->bytes) d->dequant(b, dst + i);
}

/* A correctly rounded fused multiply-add (rng.c's torch-CPU polynomials,
 * the int8 GEMM's portable kernel, exp and erf below). mingw-w64's fmaf
 * adds in double and rounds twice, so there it is computed here: the
 * product is exact in double, the sum is rounded to odd (Boldo and
 * Melquiond), which makes the final rounding to float correct. Elsewhere
 * the C library's is exact. */
#if defined(__MINGW32__) && !defined(__FMA__)
static float sdx__fmaf(float a, float b, float c) {
    double p = (double)a * (double)b, s = p + (double)c;
    double bv = s - p, err = (p - (s - bv)) + ((double)c - bv);   /* s + err = p + c exactly */
    if (err != 0.0 && isfinite(s)) {
        uint64_t u;
        memcpy(&u, &s, 8);
        if (!(u & 1u)) u += ((err > 0.0) == (s > 0.0)) ? 1 : (uint64_t)-1;   /* toward the exact value: odd */
        memcpy(&s, &u, 8);
    }
    return (float)s;
}
#else
#define sdx__fmaf fmaf
#endif

static uint32_t sdx__f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float    sdx__bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

SDX_API uint16_t sdx_f32_to_f16(float f) {
    uint32_t x = sdx__f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u)                 /* NaN: keep it quiet and NaN */
        return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    if (absx >= 0x477ff000u)                /* rounds to >= 65520: Inf    */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {               /* below 2^-14: subnormal/0  */
        if (absx < 0x33000000u) return (uint16_t)sign;  /* < 2^-25: 0    */
        {
            uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
            /* value = mant * 2^(e-150) and the f16 subnormal unit is
             * 2^-24, so h = mant >> (126 - e), rounded to nearest even */
            int shift = 126 - (int)(absx >> 23);        /* 14..24 */
            uint32_t h = mant >> shift;
            uint32_t rem = mant & ((1u << shift) - 1u);
            uint32_t half = 1u << (shift - 1);
            if (rem > half || (rem == half && (h & 1u))) h++;
            return (uint16_t)(sign | h);
        }
    }
    {
        uint32_t h = ((absx - 0x38000000u) >> 13);      /* rebias 127->15 */
        uint32_t rem = absx & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
}

SDX_API float sdx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) {                      /* Inf, or NaN made quiet    */
        uint32_t quiet = mant ? 0x400000u : 0u;
        return sdx__bits_f32(sign | 0x7f800000u | quiet | (mant << 13));
    }
    if (exp == 0) {
        if (mant == 0) return sdx__bits_f32(sign);
        /* subnormal: mant * 2^-24, exact in f32 */
        {
            float v = (float)mant * 5.9604644775390625e-8f;
            return sign ? -v : v;
        }
    }
    return sdx__bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

SDX_API uint16_t sdx_f32_to_bf16(float f) {
    uint32_t x = sdx__f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)    /* NaN: force a quiet payload */
        return (uint16_t)((x >> 16) | 0x0040u);
    /* round to nearest even; overflow carries into the exponent -> Inf */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

SDX_API float sdx_bf16_to_f32(uint16_t h) { return sdx__bits_f32((uint32_t)h << 16); }

/* Scalar array loops; src/half_simd.c may replace them with F16C/AVX512
 * versions that tests prove bit-identical. */
static void sdx__f32_to_f16_scalar(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_f32_to_f16(src[i]);
}
static void sdx__f16_to_f32_scalar(const uint16_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_f16_to_f32(src[i]);
}
static void sdx__f32_to_bf16_scalar(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_f32_to_bf16(src[i]);
}
static void sdx__bf16_to_f32_scalar(const uint16_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = sdx_bf16_to_f32(src[i]);
}

/* f16 storage of an activation: out-of-range values saturate to +-65504
 * so a stored activation is never Inf when the f32 value was finite. */
static uint16_t sdx__f32_to_f16_sat(float f) {
#ifndef SDX_UNSAFE_F16_OVERFLOW
    if (f > 65504.0f) f = 65504.0f;
    else if (f < -65504.0f) f = -65504.0f;
#endif
    return sdx_f32_to_f16(f);
}

/* the array conversions, with their SIMD paths */
#include "half_simd.c"

/* ---- tensors -------------------------------------------------------- */

SDX_API int64_t sdx_tensor_numel(const sdx_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

SDX_API size_t sdx_tensor_nbytes(const sdx_tensor *t) {
    size_t bytes;
    int block = sdx_dtype_block(t->dtype, &bytes);
    return block ? (size_t)(sdx_tensor_numel(t) / block) * bytes : 0;
}

SDX_API const char *sdx_shape_str(const sdx_tensor *t, char *buf, size_t size) {
    size_t used = 0;
    if (!size) return buf;
    buf[0] = 0;
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < t->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

/* Checks a shape for negative dims and byte-size overflow; a block type
 * also needs its last dimension to be whole blocks. */
static int sdx__shape_bytes(sdx_dtype dtype, int ndim, const int64_t *shape, size_t *bytes) {
    size_t block_bytes, n = 1, row = 1;
    int block = sdx_dtype_block(dtype, &block_bytes);
    if (!block || ndim < 0 || ndim > SDX_MAX_DIMS) return 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > SIZE_MAX) return 0;
        if (!sdx__mul_size(n, (size_t)shape[i], &n)) return 0;
        if (i > 0 || ndim == 1) row *= (size_t)shape[i];    /* <= n, which did not overflow (unused when n is 0) */
    }
    /* a block tensor's rows are whole blocks (api_core.h) */
    if (block > 1 && (ndim == 0 || (n && row % (size_t)block))) return 0;
    return sdx__mul_size(n / (size_t)block, block_bytes, bytes);
}

SDX_API sdx_result sdx_tensor_alloc(sdx_ctx *ctx, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    size_t bytes;
    memset(t, 0, sizeof *t);
    if (!sdx__shape_bytes(dtype, ndim, shape, &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_tensor_alloc: invalid shape or dtype");
    t->data = sdx__calloc(ctx, 1, bytes);
    if (!t->data) return sdx__nomem(ctx, "tensor", bytes);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->owned = 1;
    return SDX_OK;
}

SDX_API void sdx_tensor_free(sdx_ctx *ctx, sdx_tensor *t) {
    if (!t) return;
    if (t->owned) sdx__free(ctx, t->data);
    memset(t, 0, sizeof *t);
}

SDX_API void sdx_image_free(sdx_ctx *ctx, sdx_image *img) {
    if (!img) return;
    sdx__free(ctx, img->data);
    memset(img, 0, sizeof *img);
}

/* Fills a view (not owned). Unused trailing dims are left 0. */
static sdx_tensor sdx__view(sdx_dtype dtype, void *data, int ndim, const int64_t *shape) {
    sdx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.data = data;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++) t.shape[i] = shape[i];
    return t;
}

static sdx_tensor sdx__view4(sdx_dtype dtype, void *data, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t s[4] = { a, b, c, d };
    return sdx__view(dtype, data, 4, s);
}

static int sdx__same_shape(const sdx_tensor *a, const sdx_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++) if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* Widen n elements starting at element `offset` of a float buffer of any
 * storage dtype into f32. */
static void sdx__load_f32(const void *src, sdx_dtype dtype, int64_t offset, int64_t n, float *dst) {
    switch (dtype) {
    case SDX_F32: memcpy(dst, (const float *)src + offset, (size_t)n * sizeof(float)); break;
    case SDX_F16: sdx_f16_to_f32_n((const uint16_t *)src + offset, dst, (size_t)n); break;
    case SDX_BF16: sdx_bf16_to_f32_n((const uint16_t *)src + offset, dst, (size_t)n); break;
    case SDX_F64: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const double *)src)[offset + i]; break;
    case SDX_I32: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const int32_t *)src)[offset + i]; break;
    case SDX_I64: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const int64_t *)src)[offset + i]; break;
    case SDX_U8: for (int64_t i = 0; i < n; i++) dst[i] = (float)((const uint8_t *)src)[offset + i]; break;
    default: sdx__dequant(src, dtype, offset, n, dst);   /* whole blocks; kernels never see these */
    }
}

#define SDX__CHUNK 1024             /* floats per stack buffer            */

/* log2(e), and ln 2 as a high part (its low bits zero: k ln2_hi is exact) and a low one */
#define SDX__EXP_LOG2E  1.44269504f
#define SDX__EXP_LN2_HI 0.693145752f
#define SDX__EXP_LN2_LO 1.42860677e-6f

/* ---- exp and erf within an ulp (SiLU, GELU) ---------------------------- */
/* SiLU, x / (1 + exp(-x)), and GELU, x/2 (1 + erf(x / sqrt 2)), take
 * sdx's own exp and erf in every compute mode, here in portable form (the
 * CPU backend has the same algorithms in AVX2 and AVX-512 with the same
 * bits: sdx__fmaf is the fused multiply-add they issue, so activations do
 * not depend on the CPU; libm's expf and erff per value were 6% of an f32
 * UNet call).
 *
 * exp: within 0.74 ulp of exp in double for every float whose exp is a
 * normal float (checked over all 2^32). k = round(x log2 e) and
 * r = x - k ln 2 in two parts (Cody-Waite; the rounding error of r kept
 * as rl), e^r = 1 + r + r^2 Q(r) with Q Taylor's series to r^5 / 7!
 * (truncation under 0.12 ulp) and 1 + r summed exactly (hi + lo); the
 * result is scaled by 2^k in two exact steps, so it overflows to inf and
 * underflows through the subnormals to 0 as the multiply rounds. NaN
 * stays NaN. (Softmax keeps the faster sdx__exp_n of the CPU backend.)
 *
 * erf: within 0.85 ulp of erf in double for every float (checked over all
 * 2^32). For a = |x|, three intervals: [0, SPLIT1) erf = a + a Q(a^2)
 * (relative accuracy near 0), [SPLIT1, SPLIT2) and [SPLIT2, ONE)
 * erf = P(a - center); at and above ONE erf rounds to 1; the sign is x's,
 * NaN stays NaN. Each polynomial is a least-squares fit in double on
 * Chebyshev nodes with its coefficients rounded to f32 one at a time (the
 * rest refitted), degrees 6, 9 and 9. The table is by coefficient, lowest
 * power first, the intervals' in lanes 0-2, so a vector gathers its
 * lanes' coefficients with one permute. */
#define SDX__EXPF_LO (-104.0f)   /* e^x is 0 in f32 below, inf above HI */
#define SDX__EXPF_HI 89.0f
#define SDX__EXPF_TERMS 6
static const float sdx__expf_q[SDX__EXPF_TERMS] = { 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f };

#define SDX__ERF_SPLIT1 0.921875f
#define SDX__ERF_SPLIT2 2.25f
#define SDX__ERF_ONE    3.9192059f   /* erfc(a) < 2^-25 above */
#define SDX__ERF_TERMS  10
static const float sdx__erf_center[4] = { 0.0f, 1.5859375f, 3.08460283f, 0.0f };
static const float sdx__erf_poly[SDX__ERF_TERMS][4] = {
    { 0.128379166f, 0.975093782f, 0.999987125f, 0.0f },
    { -0.376126319f, 0.0912259519f, 8.3208477e-05f, 0.0f },
    { 0.112836786f, -0.144677922f, -0.000256836182f, 0.0f },
    { -0.026858734f, 0.122560307f, 0.000500558526f, 0.0f },
    { 0.00519976905f, -0.0489733294f, -0.000683524937f, 0.0f },
    { -0.000813116087f, -0.00572640309f, 0.000692903239f, 0.0f },
    { 8.32943915e-05f, 0.0161664933f, -0.000543176138f, 0.0f },
    { 0.0f, -0.00583566958f, 0.000314526638f, 0.0f },
    { 0.0f, -0.00135447877f, -0.000103553422f, 0.0f },
    { 0.0f, 0.00133748376f, 8.08589812e-06f, 0.0f },
};
#define SDX__GELU_RSQRT2 0.70710678118654752f

/* 2^k for k in [-126, 127] */
static float sdx__pow2i(int k) {
    uint32_t bits = (uint32_t)(k + 127) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float sdx__expf1(float x) {
    const float c = fminf(fmaxf(x, SDX__EXPF_LO), SDX__EXPF_HI);
    const float k = rintf(c * SDX__EXP_LOG2E);
    const int ki = (int)k, k1 = ki >= 0 ? ki / 2 : -((1 - ki) / 2);   /* floor(ki / 2), as srai */
    const float r1 = sdx__fmaf(-k, SDX__EXP_LN2_HI, c), r = sdx__fmaf(-k, SDX__EXP_LN2_LO, r1);
    const float rl = sdx__fmaf(-k, SDX__EXP_LN2_LO, r1 - r), hi = 1.0f + r, lo = (1.0f - hi) + r;
    float q = sdx__expf_q[0];
    for (int j = 1; j < SDX__EXPF_TERMS; j++) q = sdx__fmaf(q, r, sdx__expf_q[j]);
    return x != x ? x : (hi + (lo + sdx__fmaf(r * r, q, rl))) * sdx__pow2i(k1) * sdx__pow2i(ki - k1);
}

static float sdx__erf1(float x) {
    const float a = fabsf(x);
    const int i = (a >= SDX__ERF_SPLIT1) + (a >= SDX__ERF_SPLIT2);
    const float t = i == 0 ? a * a : a - sdx__erf_center[i];
    float p = sdx__erf_poly[SDX__ERF_TERMS - 1][i];
    for (int c = SDX__ERF_TERMS - 2; c >= 0; c--) p = sdx__fmaf(p, t, sdx__erf_poly[c][i]);
    return copysignf(a >= SDX__ERF_ONE ? 1.0f : i == 0 ? sdx__fmaf(a, p, a) : p, x);
}

/* The activations of one value: the CPU backend's portable loops call
 * these, and its vector forms give their bits. x sigmoid(s x) is SiLU at
 * s = 1 (-(1 x) is -x) and CLIP ViT-L's quick GELU at s = 1.702. */
#define SDX__QUICK_GELU_SCALE 1.702f
static float sdx__swish1(float x, float s) { return x / (1.0f + sdx__expf1(-(s * x))); }
static float sdx__gelu1(float x) { return 0.5f * x * (1.0f + sdx__erf1(x * SDX__GELU_RSQRT2)); }

/* ---- half-precision emulation (SDX_UNSAFE_*) -------------------------- */
/* Rounds a running value to f16 the way a half-precision kernel would:
 * sums past 65504 become Inf. Only the opt-out builds use it. */
static float sdx__round_f16(float v) { return sdx_f16_to_f32(sdx_f32_to_f16(v)); }


/* Mean and biased variance of n values of a tensor starting at `off`:
 * two passes with double accumulation, so large offsets (|x| ~ 35 over
 * 10^5 elements) cost no precision. */
static void sdx__moments(const sdx_tensor *x, int64_t off, int64_t n, double *mean, double *var) {
    float buf[SDX__CHUNK];
#ifdef SDX_UNSAFE_HALF_NORM_STATS
    float s = 0, q = 0, m;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m2 = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(x->data, x->dtype, off + i, m2, buf);
        for (int64_t j = 0; j < m2; j++) s = sdx__round_f16(s + buf[j]);
    }
    m = sdx__round_f16(s / (float)n);
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t m2 = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        sdx__load_f32(x->data, x->dtype, off + i, m2, buf);
        for (int64_t j = 0; j < m2; j++) q = sdx__round_f16(q + sdx__round_f16((buf[j] - m) * (buf[j] - m)));
    }
    *mean = m;
    *var = sdx__round_f16(q / (float)n);
#else
    double s = 0, q = 0, m;
    float shift = 0.0f;
    if (n) sdx__load_f32(x->data, x->dtype, off, 1, &shift);
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t c = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        /* short f32 partial sums, exact enough and fast, of x minus the
         * first value: a mean far from zero against the spread would
         * otherwise cost the f32 sums their low bits */
        float part = 0;
        sdx__load_f32(x->data, x->dtype, off + i, c, buf);
        for (int64_t j = 0; j < c; j++) part += buf[j] - shift;
        s += part;
    }
    m = n ? (double)shift + s / (double)n : 0.0;
    for (int64_t i = 0; i < n; i += SDX__CHUNK) {
        int64_t c = SDX__MIN((int64_t)SDX__CHUNK, n - i);
        double part = 0;
        sdx__load_f32(x->data, x->dtype, off + i, c, buf);
        for (int64_t j = 0; j < c; j++) { double d = buf[j] - m; part += d * d; }
        q += part;
    }
    *mean = m;
    *var = n ? q / (double)n : 0.0;
#endif
}

/* Narrow n f32 values into an activation buffer of a storage dtype
 * (f16 saturates, see sdx__f32_to_f16_sat). */
static void sdx__store_f32(void *dst, sdx_dtype dtype, int64_t offset, int64_t n, const float *src) {
    switch (dtype) {
    case SDX_F32: memcpy((float *)dst + offset, src, (size_t)n * sizeof(float)); break;
    case SDX_F16: sdx__f32_to_f16_sat_n(src, (uint16_t *)dst + offset, (size_t)n); break;
    case SDX_BF16: sdx_f32_to_bf16_n(src, (uint16_t *)dst + offset, (size_t)n); break;
    default: SDX_ASSERT(0);
    }
}

/* Single-element accessors for code off the hot path. */
static float sdx__get_f32(const sdx_tensor *t, int64_t i) {
    float v;
    sdx__load_f32(t->data, t->dtype, i, 1, &v);
    return v;
}

/* ---- device memory and transfers ------------------------------------ */
/* On the CPU backend device memory is host memory; otherwise it is the
 * backend's, counted here for sdx_device_bytes and -v. */

/* The loader's word to the backend whose memory holds a weight slot (the
 * host's for host slots, whatever the context computes on). */
static const sdx_backend *sdx__weight_owner(const sdx_ctx *ctx, const sdx_tensor *w) {
    return w->device ? &ctx->be : &ctx->host;
}
static int sdx__weight_added(sdx_ctx *ctx, const sdx_tensor *w, const void *file) {
    const sdx_backend *b = sdx__weight_owner(ctx, w);
    return b->weight_added ? b->weight_added(ctx, w, file) : SDX_OK;
}
static void sdx__weight_changed(sdx_ctx *ctx, const sdx_tensor *w, int gone) {
    const sdx_backend *b = sdx__weight_owner(ctx, w);
    if (b->weight_changed) b->weight_changed(ctx, w, gone);
}

static int sdx__on_device(const sdx_ctx *ctx) { return !ctx->be.host_memory; }

static void *sdx__dev_alloc(sdx_ctx *ctx, size_t bytes) {
    void *p;
    if (!sdx__on_device(ctx)) return sdx__malloc(ctx, bytes);
    p = ctx->be.alloc(ctx->be.user, bytes ? bytes : 1);
    if (!p) return NULL;
    ctx->dev_bytes += bytes;
    if (ctx->dev_bytes + ctx->be_scratch > ctx->dev_peak) ctx->dev_peak = ctx->dev_bytes + ctx->be_scratch;
    return p;
}

static void sdx__dev_free(sdx_ctx *ctx, void *p, size_t bytes) {
    if (!p) return;
    if (!sdx__on_device(ctx)) { sdx__free(ctx, p); return; }
    ctx->be.free(ctx->be.user, p);
    ctx->dev_bytes -= SDX__MIN(bytes, ctx->dev_bytes);
}

/* ---- graphs --------------------------------------------------------- */
/* On a backend with a `graph` hook (sdx_hip.h: CUDA and HIP graphs) a
 * model call (sdx__graph_call: one UNet evaluation) runs from its third
 * time on as one recorded launch instead of hundreds. The first call runs
 * as it comes, planned (sdx__plan: its arena gets one block for its peak,
 * so addresses stay put). The second is planned and recorded: each op and
 * upload goes on the slot's tape as a hash of what decides its effect (the
 * op, every operand's address, dtype and shape, the scalar arguments; an
 * upload's destination and size) while the backend captures the kernels
 * instead of running them, and launches the capture at the end. A later
 * call runs the model code with the ops turned into checks: each hash must
 * be the tape's, in order, and the uploads refill the capture's staging;
 * when all agree the backend launches the graph, which then computes
 * exactly what these ops would. When one differs (another shape, other
 * buffers, a changed parameter) nothing has run yet: the call runs as it
 * comes and records again. A download inside the call (the tracer, a host
 * fallback) or an error while recording leaves the slot to run as it comes
 * from then on. */

static uint64_t sdx__fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t sdx__graph_mix_tensor(uint64_t h, const sdx_tensor *t) {
    uintptr_t data = (uintptr_t)(t ? t->data : NULL);
    h = sdx__fnv(h, &data, sizeof data);
    if (!t) return h;
    h = sdx__fnv(h, &t->dtype, sizeof t->dtype);
    h = sdx__fnv(h, &t->ndim, sizeof t->ndim);
    return sdx__fnv(h, t->shape, (size_t)t->ndim * sizeof t->shape[0]);
}

/* Records entry h on the tape, or checks it: SDX_OK (recording: run it),
 * SDX__GRAPH_CHECKED or SDX__GRAPH_DIFFERS (checking: do not). */
static int sdx__graph_step(sdx_ctx *ctx, uint64_t h) {
    sdx__graph_slot *g = &ctx->graph.slots[ctx->graph.slot];
    if (ctx->graph.state == SDX__GRAPH_CHECKING)
        return ctx->graph.pos < g->n && g->tape[ctx->graph.pos++] == h ? SDX__GRAPH_CHECKED : SDX__GRAPH_DIFFERS;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 1024;
        uint64_t *t = (uint64_t *)sdx__realloc(ctx, g->tape, (size_t)cap * sizeof *t);
        if (!t) return sdx__nomem(ctx, "graph tape", (size_t)cap * sizeof *t);
        g->tape = t;
        g->cap = cap;
    }
    g->tape[g->n++] = h;
    return SDX_OK;
}

/* An op while a graph state is on (the dispatchers, ops.c). */
static int sdx__graph_op(sdx_ctx *ctx, const char *name, const sdx_tensor *const *operands, int n, const void *scalars,
                         size_t scalar_bytes) {
    uint64_t h;
    if (ctx->graph.state == SDX__GRAPH_PLANNING) return SDX__GRAPH_CHECKED;     /* nothing runs */
    h = sdx__fnv(1469598103934665603ull, name, strlen(name));
    for (int i = 0; i < n; i++) h = sdx__graph_mix_tensor(h, operands[i]);
    return sdx__graph_step(ctx, sdx__fnv(h, scalars, scalar_bytes));
}

/* A transfer while a graph state is on: an upload is on the tape (and
 * runs: the backend stages it), a download cannot be (nothing computed
 * yet). */
static int sdx__graph_transfer(sdx_ctx *ctx, int upload, const void *dev, size_t bytes) {
    uintptr_t at = (uintptr_t)dev;
    if (!upload) return SDX__GRAPH_DIFFERS;
    return sdx__graph_step(ctx, sdx__fnv(sdx__fnv(0x75706c6f6164ull, &at, sizeof at), &bytes, sizeof bytes));
}

static void sdx__graph_free(sdx_ctx *ctx) {
    for (int i = 0; i < SDX__GRAPH_SLOTS; i++) sdx__free(ctx, ctx->graph.slots[i].tape);
    memset(&ctx->graph, 0, sizeof ctx->graph);
}

static int sdx__plan(sdx_ctx *ctx, int (*fn)(void *arg), void *arg);
static int sdx__planned(sdx_ctx *ctx, int (*fn)(void *arg), void *arg);

/* Runs fn(arg), one model call at call site `slot`, as the comment above
 * says. */
static int sdx__graph_call(sdx_ctx *ctx, int slot, int (*fn)(void *arg), void *arg) {
    sdx__graph_slot *g = &ctx->graph.slots[slot];
    int rc, kept;
    if (!ctx->be.graph || ctx->desc.no_graphs || ctx->trace || g->off || ctx->graph.state) return sdx__planned(ctx, fn, arg);
    if (!g->seen) {
        g->seen = 1;
        return sdx__planned(ctx, fn, arg);
    }
    ctx->graph.slot = slot;
    if (g->recorded) {
        ctx->graph.state = SDX__GRAPH_CHECKING;
        ctx->graph.pos = 0;
        rc = ctx->be.graph(ctx, slot, SDX_GRAPH_CHECK);
        if (rc == SDX_OK) rc = fn(arg);
        ctx->graph.state = 0;
        if (rc == SDX_OK && ctx->graph.pos == g->n && (rc = ctx->be.graph(ctx, slot, SDX_GRAPH_LAUNCH)) != 1) {
            g->replays += rc == SDX_OK;
            return rc;
        }
        if (rc != SDX_OK && rc != 1 && rc != SDX__GRAPH_DIFFERS) {     /* an error before anything ran */
            (void)ctx->be.graph(ctx, slot, SDX_GRAPH_DROP);
            return rc;
        }
        g->recorded = 0;    /* it differs, or the backend's own buffers moved: record again */
    }
    g->n = 0;
    if ((rc = sdx__plan(ctx, fn, arg)) != SDX_OK) return rc;
    ctx->graph.state = SDX__GRAPH_RECORDING;
    if ((rc = ctx->be.graph(ctx, slot, SDX_GRAPH_RECORD)) == SDX_OK) {
        rc = fn(arg);
        ctx->graph.state = 0;
        kept = ctx->be.graph(ctx, slot, rc == SDX_OK ? SDX_GRAPH_KEEP : SDX_GRAPH_DROP);
        if (rc == SDX_OK && kept == SDX_OK) {
            g->recorded = 1;
            sdx__log(ctx, SDX_LOG_INFO, "backend '%s': a model call recorded as a graph of %d ops and uploads; calls that "
                     "repeat them replay it", ctx->be.name, g->n);
            return SDX_OK;
        }
        if (rc == SDX_ERR_CANCELLED) return rc;
    }
    ctx->graph.state = 0;
    /* it reads results back: never again; otherwise (a buffer had to
     * grow, say) this call runs as it comes and the next records again,
     * a few times at most */
    g->off = rc == SDX__GRAPH_DIFFERS || ++g->failures == SDX__GRAPH_TRIES;
    sdx__log(ctx, SDX_LOG_INFO, "backend '%s': a model call could not be recorded as a graph (%s); it runs op by op%s",
             ctx->be.name, rc == SDX__GRAPH_DIFFERS ? "it reads results back" : sdx_last_error(ctx), g->off ? " from now on" : "");
    return fn(arg);
}

/* Host <-> tensor transfers: model code reads or writes the values of an
 * activation or a weight only through these two (f32 on the host side,
 * the tensor's own dtype on the other), since a tensor may live in a
 * device's memory that host code cannot touch. Half-precision tensors
 * are converted on the host, so only their storage bytes cross the bus. */
static int sdx__download(sdx_ctx *ctx, float *dst, const sdx_tensor *src) {
    int64_t n = sdx_tensor_numel(src);
    size_t bytes = sdx_tensor_nbytes(src);
    void *tmp;
    int rc;
    if (!src->device) { sdx__load_f32(src->data, src->dtype, 0, n, dst); return SDX_OK; }
    if (ctx->graph.state) return sdx__graph_transfer(ctx, 0, src->data, bytes);
    if (src->dtype == SDX_F32) return ctx->be.download(ctx->be.user, dst, src->data, bytes);
    if (!(tmp = sdx__malloc(ctx, bytes))) return sdx__nomem(ctx, "device download", bytes);
    rc = ctx->be.download(ctx->be.user, tmp, src->data, bytes);
    if (rc == SDX_OK) sdx__load_f32(tmp, src->dtype, 0, n, dst);
    sdx__free(ctx, tmp);
    return rc;
}

static int sdx__upload(sdx_ctx *ctx, sdx_tensor *dst, const float *src) {
    int64_t n = sdx_tensor_numel(dst);
    size_t bytes = sdx_tensor_nbytes(dst);
    void *tmp;
    int rc;
    if (!dst->device) { sdx__store_f32(dst->data, dst->dtype, 0, n, src); return SDX_OK; }
    if (ctx->graph.state == SDX__GRAPH_PLANNING) return SDX_OK;      /* nothing runs, dst holds no memory */
    if (ctx->graph.state && (rc = sdx__graph_transfer(ctx, 1, dst->data, bytes)) != SDX_OK && rc != SDX__GRAPH_CHECKED)
        return rc;          /* recording or checked, it goes on: the backend stages it */
    if (dst->dtype == SDX_F32) return ctx->be.upload(ctx->be.user, dst->data, src, bytes);
    if (!(tmp = sdx__malloc(ctx, bytes))) return sdx__nomem(ctx, "device upload", bytes);
    sdx__store_f32(tmp, dst->dtype, 0, n, src);
    rc = ctx->be.upload(ctx->be.user, dst->data, tmp, bytes);
    sdx__free(ctx, tmp);
    return rc;
}

/* ---- scratch arena -------------------------------------------------- */
/* A stack of blocks: allocations bump a pointer, sdx__arena_mark and
 * sdx__arena_release free everything allocated since the mark. The first
 * pass grows a chain of blocks; once it has released everything, the
 * chain becomes one block of the peak size, so later passes allocate
 * nothing. The pattern in model code is: allocate the output, mark,
 * compute with temporaries, release.
 *
 * An arena's memory is the backend's (activations live where the kernels
 * run). Host temporaries of model code (tile blending, staging) come from
 * sdx__arena_host_alloc: on the CPU the same chain, on a device backend a
 * host companion arena that the same marks release. */

typedef struct sdx__block {
    struct sdx__block *next;
    size_t size, used;
    unsigned char *dev;   /* device blocks: the data; host blocks: NULL, data follows, 64-byte aligned */
} sdx__block;

typedef struct sdx__arena {
    sdx_ctx    *ctx;
    sdx__block *head;     /* first block */
    sdx__block *cur;      /* block being filled */
    size_t      min_block;
    size_t      in_use, peak, reserved;
    int         device;   /* blocks are device memory */
    struct sdx__arena *host;   /* device arenas: the host companion, made on first use */
    /* a call being planned (sdx__plan): bytes in use as it began, now
     * and at most, counted instead of allocated */
    int         planning;
    size_t      plan_base, plan_in_use, plan_peak;
} sdx__arena;

typedef struct sdx__mark {
    sdx__block *block; size_t used, in_use;
    sdx__block *host_block; size_t host_used, host_in_use;
    size_t plan_in_use;
} sdx__mark;

#define SDX__ARENA_ALIGN 64
#define SDX__BLOCK_HDR ((sizeof(sdx__block) + SDX__ARENA_ALIGN - 1) & ~(size_t)(SDX__ARENA_ALIGN - 1))

/* Default block sizes: 64 MiB on the host; 1 MiB on a device, whose big
 * users are planned (sdx__plan: one block of their peak), so that its
 * other blocks hold a call's inputs and little else. */
#define SDX__ARENA_BLOCK ((size_t)64 << 20)
#define SDX__ARENA_DEVICE_BLOCK ((size_t)1 << 20)

static void sdx__arena_init_on(sdx__arena *a, sdx_ctx *ctx, size_t min_block, int device) {
    memset(a, 0, sizeof *a);
    a->ctx = ctx;
    a->min_block = min_block ? min_block : device ? SDX__ARENA_DEVICE_BLOCK : SDX__ARENA_BLOCK;
    a->device = device;
}

/* An arena in the context's backend memory. */
static void sdx__arena_init(sdx__arena *a, sdx_ctx *ctx, size_t min_block) {
    sdx__arena_init_on(a, ctx, min_block, sdx__on_device(ctx));
}

static void sdx__block_free(sdx__arena *a, sdx__block *b) {
    if (b->dev) sdx__dev_free(a->ctx, b->dev, b->size);
    sdx__free(a->ctx, b);
}

/* A block of `bsize` data bytes, or NULL (nothing set). */
static sdx__block *sdx__block_new(sdx__arena *a, size_t bsize) {
    sdx__block *b;
    if (!a->device) {
        size_t total = bsize + SDX__BLOCK_HDR + SDX__ARENA_ALIGN;
        if (total < bsize) return NULL;   /* huge min_block */
        b = (sdx__block *)sdx__malloc(a->ctx, total);
        if (b) b->dev = NULL;
    } else {
        b = (sdx__block *)sdx__malloc(a->ctx, sizeof *b);
        if (b && !(b->dev = (unsigned char *)sdx__dev_alloc(a->ctx, bsize))) { sdx__free(a->ctx, b); b = NULL; }
    }
    if (!b) return NULL;
    b->next = NULL;
    b->size = bsize;
    b->used = 0;
    return b;
}

static void sdx__arena_free(sdx__arena *a) {
    sdx__block *b = a->head;
    while (b) { sdx__block *n = b->next; sdx__block_free(a, b); b = n; }
    a->head = a->cur = NULL;
    a->in_use = a->reserved = 0;
    if (a->host) { sdx__arena_free(a->host); sdx__free(a->ctx, a->host); a->host = NULL; }
}

static unsigned char *sdx__block_data(sdx__block *b) {
    /* the block pointer itself is only malloc-aligned; align the data */
    uintptr_t p = (uintptr_t)b + SDX__BLOCK_HDR;
    if (b->dev) return b->dev;   /* backends hand out aligned buffers */
    p = (p + SDX__ARENA_ALIGN - 1) & ~(uintptr_t)(SDX__ARENA_ALIGN - 1);
    return (unsigned char *)p;
}

/* Planning (sdx__plan): while a call runs without computing, a device
 * arena counts what it would hand out and returns addresses of no memory
 * (in a page nothing maps: no kernel runs, and host code never touches
 * device memory), laid out as one block would lay them out. */
static int sdx__arena_plans(sdx__arena *a) {
    sdx__graph *g = &a->ctx->graph;
    if (a->planning) return 1;
    if (!a->device || g->state != SDX__GRAPH_PLANNING || g->n_planned == SDX__PLAN_ARENAS) return 0;
    g->planned[g->n_planned++] = a;
    a->planning = 1;
    a->plan_base = a->plan_in_use = a->plan_peak = a->in_use;
    return 1;
}

static void *sdx__arena_plan_alloc(sdx__arena *a, size_t size) {
    void *p = (void *)(uintptr_t)(4096 + a->plan_in_use);
    a->plan_in_use += size;
    if (a->plan_in_use > a->plan_peak) a->plan_peak = a->plan_in_use;
    return p;
}

/* Frees the blocks after `b` (all of them when b is NULL): past the top
 * of the stack, they hold nothing. */
static void sdx__arena_drop_after(sdx__arena *a, sdx__block *b) {
    sdx__block *n = b ? b->next : a->head;
    while (n) {
        sdx__block *next = n->next;
        a->reserved -= n->size;
        sdx__block_free(a, n);
        n = next;
    }
    if (b) b->next = NULL;
    else a->head = NULL;
}

/* Returns 64-byte aligned memory or NULL (error set on the ctx). */
static void *sdx__arena_alloc(sdx__arena *a, size_t size) {
    if (size > SIZE_MAX - SDX__BLOCK_HDR - 2 * SDX__ARENA_ALIGN) {   /* rounding up would wrap */
        sdx__nomem(a->ctx, "activation arena", size);
        return NULL;
    }
    size = (size + SDX__ARENA_ALIGN - 1) & ~(size_t)(SDX__ARENA_ALIGN - 1);
    if (size == 0) size = SDX__ARENA_ALIGN;
    if (sdx__arena_plans(a)) return sdx__arena_plan_alloc(a, size);
    for (;;) {
        sdx__block *b = a->cur;
        if (b && b->size - b->used >= size) {
            void *p = sdx__block_data(b) + b->used;
            b->used += size;
            a->in_use += size;
            if (a->in_use > a->peak) a->peak = a->in_use;
            return p;
        }
        if (b && b->next && b->next->size >= size) {   /* reuse a block kept from before */
            a->cur = b->next;
            a->cur->used = 0;
            continue;
        }
        {
            size_t bsize = SDX__MAX(size, a->min_block);
            sdx__block *nb = sdx__block_new(a, bsize);
            if (!nb) { sdx__nomem(a->ctx, a->device ? "activation arena (device)" : "activation arena", bsize); return NULL; }
            /* blocks after this one stay in the chain for later requests */
            nb->next = b ? b->next : a->head;
            a->reserved += bsize;
            if (b) b->next = nb; else a->head = nb;
            a->cur = nb;
        }
    }
}

/* Host memory released by the arena's marks, for model code's host-side
 * temporaries. */
static void *sdx__arena_host_alloc(sdx__arena *a, size_t size) {
    if (!a->device) return sdx__arena_alloc(a, size);
    if (!a->host) {
        if (!(a->host = (sdx__arena *)sdx__malloc(a->ctx, sizeof *a->host))) {
            sdx__nomem(a->ctx, "host arena", sizeof *a->host);
            return NULL;
        }
        sdx__arena_init_on(a->host, a->ctx, 0, 0);
    }
    return sdx__arena_alloc(a->host, size);
}

static sdx__mark sdx__arena_mark(const sdx__arena *a) {
    sdx__mark m;
    memset(&m, 0, sizeof m);
    m.block = a->cur;
    m.used = a->cur ? a->cur->used : 0;
    m.in_use = a->in_use;
    m.plan_in_use = a->planning ? a->plan_in_use : a->in_use;
    if (a->host) {
        m.host_block = a->host->cur;
        m.host_used = a->host->cur ? a->host->cur->used : 0;
        m.host_in_use = a->host->in_use;
    }
    return m;
}

/* Replaces a chain of blocks by one block the size of the peak. In one
 * contiguous block a stack of allocations needs exactly its in-use bytes,
 * so every later pass that peaks no higher fits without a malloc. Called
 * when everything has been released; on failure the arena is just empty. */
static void sdx__arena_consolidate(sdx__arena *a) {
    sdx__block *b = a->head;
    if (!b || !b->next) return;
    while (b) { sdx__block *n = b->next; sdx__block_free(a, b); b = n; }
    a->head = a->cur = NULL;
    a->reserved = 0;
    if (!(a->head = a->cur = sdx__block_new(a, SDX__MAX(a->peak, a->min_block)))) return;
    a->reserved = a->head->size;
}

/* Back to a mark. A mark with nothing in use below it may name a block
 * that a release inside it has since consolidated away: it rewinds to
 * the start. */
static void sdx__arena_rewind(sdx__arena *a, sdx__block *block, size_t used, size_t in_use) {
    if (!block || in_use == 0) {
        a->cur = a->head;
        if (a->cur) a->cur->used = 0;
    } else {
        a->cur = block;
        a->cur->used = used;
    }
    a->in_use = in_use;
    if (a->in_use == 0) sdx__arena_consolidate(a);
}

static void sdx__arena_release(sdx__arena *a, sdx__mark m) {
    if (a->planning) a->plan_in_use = m.plan_in_use;
    else sdx__arena_rewind(a, m.block, m.used, m.in_use);
    if (a->host) sdx__arena_rewind(a->host, m.host_block, m.host_used, m.host_in_use);
}

static void sdx__arena_reset(sdx__arena *a) {
    sdx__mark m;
    memset(&m, 0, sizeof m);
    sdx__arena_release(a, m);
}

/* After a pass that failed for want of memory: frees the blocks past the
 * one in use (kept for later requests, they would hold the failed pass's
 * memory) and forgets that pass's peak, so that a smaller pass tried
 * next has the memory, and releasing everything later does not ask for
 * one block of the failed size. */
static void sdx__arena_shrink(sdx__arena *a) {
    sdx__arena_drop_after(a, a->cur);
    a->peak = a->in_use;
    if (a->host) sdx__arena_shrink(a->host);
}

/* Frees every block once nothing is allocated, and forgets the peak: a
 * pipeline calls it between stages, so that the next stage's arena is
 * sized by its own peak and the pages a bigger stage touched (the VAE's
 * full-resolution activations, say) do not stay resident meanwhile.
 * Within a stage the arena keeps its block: no malloc per step. */
static void sdx__arena_trim(sdx__arena *a) {
    if (a->in_use || (a->host && a->host->in_use)) return;
    sdx__arena_free(a);
    a->peak = 0;
}

/* Room for `need` more bytes in one block from the top of the stack. The
 * blocks past the current one hold nothing: unless the current block or
 * the next has the room, one block of the size needed replaces them, and
 * allocations go on there. */
static int sdx__arena_room(sdx__arena *a, size_t need) {
    sdx__block *b = a->cur, *nb;
    if (need == 0 || (b && (b->size - b->used >= need || (b->next && b->next->size >= need)))) return SDX_OK;
    sdx__arena_drop_after(a, b);
    if (!(nb = sdx__block_new(a, need))) return sdx__nomem(a->ctx, "activation arena (device)", need);
    a->reserved += need;
    if (b) b->next = nb;
    else a->head = nb;
    a->cur = nb;
    return SDX_OK;
}

/* Plans a model call on a device: fn(arg) runs once without computing
 * (graph state SDX__GRAPH_PLANNING: ops check their operands and return,
 * uploads do nothing, device arenas count instead of allocating), then
 * each device arena it used gets room for that peak in one block. So the
 * call itself takes the device memory of its largest live set, not that
 * plus the unused tails of a chain of blocks grown as it went (about 80
 * MiB of an SDXL UNet call's 384). fn must be a pure model call, as a
 * graph's is: a call that reads results back (a download) cannot be
 * planned and runs as it comes. An error fn returns is the call's. */
static int sdx__plan(sdx_ctx *ctx, int (*fn)(void *arg), void *arg) {
    sdx__graph *g = &ctx->graph;
    int rc, whole;
    if (!sdx__on_device(ctx) || g->state) return SDX_OK;
    g->state = SDX__GRAPH_PLANNING;
    g->n_planned = 0;
    rc = fn(arg);
    g->state = 0;
    whole = rc == SDX_OK;
    if (rc == SDX__GRAPH_DIFFERS) rc = SDX_OK;
    for (int i = 0; i < g->n_planned; i++) {
        sdx__arena *a = g->planned[i];
        a->planning = 0;
        if (whole && rc == SDX_OK) rc = sdx__arena_room(a, a->plan_peak - a->plan_base);
    }
    g->n_planned = 0;
    return rc;
}

/* fn(arg), planned first (sdx__plan). */
static int sdx__planned(sdx_ctx *ctx, int (*fn)(void *arg), void *arg) {
    int rc = sdx__plan(ctx, fn, arg);
    return rc != SDX_OK ? rc : fn(arg);
}

/* A tensor from the arena's memory (host: from its host companion).
 * Returns 0 (error set) on failure. */
static int sdx__arena_tensor_in(sdx__arena *a, int host, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    size_t bytes;
    if (!sdx__shape_bytes(dtype, ndim, shape, &bytes)) {
        sdx__fail(a->ctx, SDX_ERR_INVALID_ARG, "activation shape overflows");
        return 0;
    }
    *t = sdx__view(dtype, NULL, ndim, shape);
    t->data = host ? sdx__arena_host_alloc(a, bytes) : sdx__arena_alloc(a, bytes);
    t->device = host ? 0 : a->device;
    return t->data != NULL;
}

/* An activation tensor, where the backend computes. */
static int sdx__arena_tensor(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    return sdx__arena_tensor_in(a, 0, t, dtype, ndim, shape);
}

/* A host tensor for model code's own host-side work (see sdx__arena_host_alloc). */
static int sdx__arena_host_tensor(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    return sdx__arena_tensor_in(a, 1, t, dtype, ndim, shape);
}

static int sdx__arena_tensor4(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
    int64_t s[4] = { n, c, h, w };
    return sdx__arena_tensor(a, t, dtype, 4, s);
}

static int sdx__arena_tensor3(sdx__arena *a, sdx_tensor *t, sdx_dtype dtype, int64_t n, int64_t c, int64_t w) {
    int64_t s[3] = { n, c, w };
    return sdx__arena_tensor(a, t, dtype, 3, s);
}

/* ---- thread pool ---------------------------------------------------- */
/* sdx__parallel_for(ctx, n, fn, arg) calls fn(arg, begin, end, thread)
 * over disjoint ranges covering [0, n) and returns when all are done.
 * Workers are created on first use and live as long as the context. One
 * job at a time: fn must not call sdx__parallel_for itself. */

typedef void (*sdx__range_fn)(void *arg, int64_t begin, int64_t end, int thread);

typedef struct sdx__worker { sdx__thread thread; sdx__pool *pool; int index; } sdx__worker;

struct sdx__pool {
    sdx_ctx        *ctx;
    int             n;          /* threads including the caller */
    sdx__worker    *workers;    /* n - 1 started threads */
    sdx__mutex      mu;
    sdx__cond       wake, done;
    uint64_t        generation;
    int             pending;
    int             quit;
    /* current job */
    sdx__range_fn   fn;
    void           *arg;
    int64_t         total;
    int64_t         next;       /* next chunk start (dynamic scheduling) */
    int64_t         chunk;
};

/* Threads grab chunks until none are left: balances uneven work. */
static void sdx__pool_run_chunks(sdx__pool *p, int thread) {
    for (;;) {
        int64_t begin, end;
        sdx__mutex_lock(&p->mu);
        begin = p->next;
        p->next = SDX__MIN(p->total, begin + p->chunk);
        sdx__mutex_unlock(&p->mu);
        if (begin >= p->total) break;
        end = SDX__MIN(p->total, begin + p->chunk);
        p->fn(p->arg, begin, end, thread);
    }
}

static void sdx__worker_main(void *varg) {
    const sdx__worker *w = (const sdx__worker *)varg;
    sdx__pool *p = w->pool;
    int index = w->index;
    uint64_t seen = 0;
    for (;;) {
        sdx__mutex_lock(&p->mu);
        while (!p->quit && p->generation == seen) sdx__cond_wait(&p->wake, &p->mu);
        if (p->quit) { sdx__mutex_unlock(&p->mu); return; }
        seen = p->generation;
        sdx__mutex_unlock(&p->mu);
        sdx__pool_run_chunks(p, index);
        sdx__mutex_lock(&p->mu);
        if (--p->pending == 0) sdx__cond_signal(&p->done);
        sdx__mutex_unlock(&p->mu);
    }
}

static void sdx__pool_destroy(sdx__pool *p) {
    if (!p) return;
    sdx__mutex_lock(&p->mu);
    p->quit = 1;
    sdx__cond_broadcast(&p->wake);
    sdx__mutex_unlock(&p->mu);
    for (int i = 0; i < p->n - 1; i++) sdx__thread_join(&p->workers[i].thread);
    sdx__mutex_destroy(&p->mu);
    sdx__cond_destroy(&p->wake);
    sdx__cond_destroy(&p->done);
    sdx__free(p->ctx, p->workers);
    sdx__free(p->ctx, p);
}

/* Creates the pool; on any failure falls back to fewer threads (down to
 * running everything on the caller), never to an error. */
static sdx__pool *sdx__pool_create(sdx_ctx *ctx, int n) {
    sdx__pool *p = (sdx__pool *)sdx__calloc(ctx, 1, sizeof *p);
    if (!p) return NULL;
    p->ctx = ctx;
    p->workers = (sdx__worker *)sdx__calloc(ctx, (size_t)(n > 1 ? n - 1 : 1), sizeof *p->workers);
    if (!p->workers) { sdx__free(ctx, p); return NULL; }
    sdx__mutex_init(&p->mu);
    sdx__cond_init(&p->wake);
    sdx__cond_init(&p->done);
    p->n = 1;
    for (int i = 0; i < n - 1; i++) {
        sdx__worker *w = &p->workers[i];
        w->pool = p;
        w->index = i + 1;
        if (!sdx__thread_start(&w->thread, sdx__worker_main, w)) break;
        p->n++;
    }
    return p;
}

static void sdx__parallel_for(sdx_ctx *ctx, int64_t n, sdx__range_fn fn, void *arg) {
    sdx__pool *p;
    if (n <= 0) return;
    if (ctx->n_threads > 1 && !ctx->pool && n > 1) ctx->pool = sdx__pool_create(ctx, ctx->n_threads);
    p = ctx->pool;
    if (!p || p->n <= 1 || n == 1) { fn(arg, 0, n, 0); return; }
    sdx__mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->total = n;
    p->next = 0;
    /* a few chunks per thread: balance without much locking */
    p->chunk = SDX__MAX((int64_t)1, n / ((int64_t)p->n * 4));
    p->pending = p->n - 1;
    p->generation++;
    sdx__cond_broadcast(&p->wake);
    sdx__mutex_unlock(&p->mu);
    sdx__pool_run_chunks(p, 0);
    sdx__mutex_lock(&p->mu);
    while (p->pending > 0) sdx__cond_wait(&p->done, &p->mu);
    sdx__mutex_unlock(&p->mu);
}

/* ---- non-finite tracer ---------------------------------------------- */
/* Model code names what runs (sdx__trace_at); every kernel calls
 * sdx__trace_check on its output when tracing is on. The first NaN/Inf
 * stops the run with a message naming the op, part, layer and stats. */

static const char *sdx__part_name(sdx__part p) {
    static const char *names[SDX__PART_COUNT] = { "-", "text encoder", "unet", "vae", "controlnet", "upscaler" };
    return (unsigned)p < SDX__PART_COUNT ? names[p] : "?";
}

static SDX__PRINTF(3, 4) void sdx__trace_at(sdx_ctx *ctx, sdx__part part, const char *fmt, ...) {
    va_list ap;
    ctx->part = part;
    if (!ctx->trace) return;    /* names cost a snprintf: only when asked */
    va_start(ap, fmt);
    vsnprintf(ctx->layer, sizeof ctx->layer, fmt, ap);
    va_end(ap);
}

typedef struct sdx__stats {
    double min, max, mean;
    int64_t nan, inf, count;
} sdx__stats;

static void sdx__tensor_stats(const sdx_tensor *t, sdx__stats *s) {
    float buf[256];
    int64_t n = sdx_tensor_numel(t), finite = 0;
    double sum = 0;
    s->min = INFINITY; s->max = -INFINITY; s->nan = s->inf = 0; s->count = n;
    for (int64_t i = 0; i < n; i += 256) {
        int64_t m = SDX__MIN((int64_t)256, n - i);
        sdx__load_f32(t->data, t->dtype, i, m, buf);
        for (int64_t j = 0; j < m; j++) {
            float v = buf[j];
            if (isnan(v)) { s->nan++; continue; }
            if (isinf(v)) { s->inf++; continue; }
            if (v < s->min) s->min = v;
            if (v > s->max) s->max = v;
            sum += v;
            finite++;
        }
    }
    s->mean = finite ? sum / (double)finite : NAN;
}

static int sdx__has_nonfinite(const sdx_tensor *t) {
    float buf[256];
    int64_t n = sdx_tensor_numel(t);
    for (int64_t i = 0; i < n; i += 256) {
        int64_t m = SDX__MIN((int64_t)256, n - i);
        sdx__load_f32(t->data, t->dtype, i, m, buf);
        for (int64_t j = 0; j < m; j++) if (!isfinite(buf[j])) return 1;
    }
    return 0;
}

static int sdx__trace_report(sdx_ctx *ctx, const char *op, const sdx_tensor *out) {
    sdx__stats s;
    char shape[96];
    if (!sdx__has_nonfinite(out)) return SDX_OK;
    sdx__tensor_stats(out, &s);
    return sdx__fail(ctx, SDX_ERR_NONFINITE,
        "non-finite output of %s in %s%s%s %s (%s): %lld NaN, %lld Inf of %lld; finite min %g max %g mean %g",
        op, sdx__part_name(ctx->part), ctx->layer[0] ? " at " : "", ctx->layer,
        sdx_shape_str(out, shape, sizeof shape), sdx_dtype_name(out->dtype),
        (long long)s.nan, (long long)s.inf, (long long)s.count, s.min, s.max, s.mean);
}

/* Returns SDX_OK, or SDX_ERR_NONFINITE with the message set. A device
 * tensor is checked in a host copy (tracing is a debugging mode). */
static int sdx__trace_check(sdx_ctx *ctx, const char *op, const sdx_tensor *out) {
    sdx_tensor host;
    size_t bytes;
    int rc;
    if (!ctx->trace) return SDX_OK;
    if (!out->device) return sdx__trace_report(ctx, op, out);
    host = *out;
    host.dtype = SDX_F32;
    host.device = 0;
    bytes = sdx_tensor_nbytes(&host);
    if (!(host.data = sdx__malloc(ctx, bytes))) return sdx__nomem(ctx, "tracer copy", bytes);
    rc = sdx__download(ctx, (float *)host.data, out);
    if (rc == SDX_OK) rc = sdx__trace_report(ctx, op, &host);
    sdx__free(ctx, host.data);
    return rc;
}
