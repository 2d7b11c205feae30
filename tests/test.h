/* Tiny test framework. Each tests/t_*.c file defines a table of cases and
 * ends with SDX_TEST_SUITE(name, table). tests/main.c includes every
 * suite into one program (one compile of sdx.h); a single suite can also
 * be built on its own with -DSDX_TEST_SINGLE for a faster edit loop. */
#ifndef SDX_TEST_H
#define SDX_TEST_H

#define SDX_IMPLEMENTATION
#ifdef SDX_TEST_HEADER          /* a partial amalgamation, see tools/amalgamate.sh */
#include SDX_TEST_HEADER
#else
#include "../sdx.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <errno.h>
#include <dirent.h>
#include <sys/stat.h>

#if defined(__GNUC__) || defined(__clang__)
#define T_UNUSED __attribute__((unused))
#else
#define T_UNUSED
#endif

/* Failure messages are cut to fit t_msg on purpose. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

enum { T_PASS = 0, T_FAIL = 1, T_SKIP = 2 };

/* Windows builds (mingw-w64, run under wine in CI) skip the few cases
 * that need a POSIX shell, fork or named pipes, saying so. */
#ifdef _WIN32
#define T_WINDOWS 1
#include <direct.h>
#define T_DEVNULL "NUL"
#define t_mkdir(path) _mkdir(path)
/* _putenv keeps the string it is given; "NAME=" removes NAME */
T_UNUSED static void t_setenv(const char *name, const char *value) {
    static char buf[8][1024];
    static int slot = 0;
    char *p = buf[slot++ & 7];
    snprintf(p, sizeof buf[0], "%s=%s", name, value ? value : "");
    _putenv(p);
}
#define t_unsetenv(name) t_setenv(name, NULL)
#include <malloc.h>
T_UNUSED static void *t_aligned_alloc(size_t align, size_t bytes) { return _aligned_malloc(bytes ? bytes : 1, align); }
#define t_aligned_free(p) _aligned_free(p)
#else
#define T_WINDOWS 0
#define T_DEVNULL "/dev/null"
#define t_mkdir(path) mkdir(path, 0700)
#define t_setenv(name, value) setenv(name, value, 1)
#define t_unsetenv(name) unsetenv(name)
T_UNUSED static void *t_aligned_alloc(size_t align, size_t bytes) {
    void *p = NULL;
    return posix_memalign(&p, align, bytes ? bytes : 1) == 0 ? p : NULL;
}
#define t_aligned_free(p) free(p)
#endif

/* Runs a shell command line with stdout and stderr captured into out;
 * returns its exit status, or -1 (message in out) where there is no POSIX
 * shell (Windows: the callers skip). */
#ifdef _WIN32
T_UNUSED static int t_shell(const char *cmd, char *out, size_t size) {
    (void)cmd;
    snprintf(out, size, "no POSIX shell");
    return -1;
}
#else
#include <sys/wait.h>
T_UNUSED static int t_shell(const char *cmd, char *out, size_t size) {
    FILE *f = popen(cmd, "r");
    size_t n;
    int status;
    if (!f) { snprintf(out, size, "popen failed"); return -1; }
    n = fread(out, 1, size - 1, f);
    out[n] = 0;
    status = pclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif

/* ---- the run's scratch directory ------------------------------------------ */

/* The files cases write go into one directory per process, made on first
 * use under $TMPDIR (else /tmp; Windows: %TEMP%), so two runs on one
 * machine at once (make test beside CI's run, or beside make sanitize)
 * never write each other's files. t_main removes it when the run passed
 * and keeps it, saying where, when a case failed. */
static char t_tmp_root[1024];

#ifdef _WIN32
#include <process.h>
static int t_tmp_make_root(void) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = getenv("TEMP");
    if (!base || !*base) base = ".";
    for (int i = 0; i < 1000; i++) {            /* no mkdtemp: pid and a counter */
        snprintf(t_tmp_root, sizeof t_tmp_root, "%s/sdx-tests.%d.%d", base, _getpid(), i);
        if (t_mkdir(t_tmp_root) == 0) return 1;
    }
    return 0;
}
#define t_tmp_is_dir(st) (((st).st_mode & _S_IFDIR) != 0)
#define t_tmp_stat stat
#define t_rmdir _rmdir
#else
#include <unistd.h>
static int t_tmp_make_root(void) {
    const char *base = getenv("TMPDIR");
    snprintf(t_tmp_root, sizeof t_tmp_root, "%s/sdx-tests.XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(t_tmp_root) != NULL;
}
#define t_tmp_is_dir(st) S_ISDIR((st).st_mode)
#define t_tmp_stat lstat                        /* a link is removed, never followed */
#define t_rmdir rmdir
#endif

/* The run's scratch directory (made on the first call). */
T_UNUSED static const char *t_tmp_dir(void) {
    if (!t_tmp_root[0] && !t_tmp_make_root()) {
        fprintf(stderr, "cannot make a scratch directory like %s: %s\n", t_tmp_root, strerror(errno));
        exit(2);
    }
    return t_tmp_root;
}

/* The path of file `name` in the scratch directory: the same string for
 * the same name, valid until the run ends. */
typedef struct t_tmp_path { struct t_tmp_path *next; char path[1024]; const char *name; } t_tmp_path;
static t_tmp_path *t_tmp_paths;

T_UNUSED static const char *t_tmp(const char *name) {
    t_tmp_path *p;
    for (p = t_tmp_paths; p; p = p->next)
        if (!strcmp(p->name, name)) return p->path;
    if (!(p = (t_tmp_path *)malloc(sizeof *p))) { fprintf(stderr, "out of memory for a scratch path\n"); exit(2); }
    snprintf(p->path, sizeof p->path, "%s/%s", t_tmp_dir(), name);
    p->name = p->path + strlen(t_tmp_root) + 1;
    p->next = t_tmp_paths;
    t_tmp_paths = p;
    return p->path;
}

/* Removes path and, for a directory, all it holds; 0 when gone. */
static int t_tmp_remove_tree(const char *path) {
    struct stat st;
    DIR *d;
    struct dirent *e;
    int rc = 0;
    if (t_tmp_stat(path, &st) != 0 || !t_tmp_is_dir(st)) return remove(path);
    if (!(d = opendir(path))) return -1;
    while ((e = readdir(d)) != NULL) {
        char sub[2048];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rc |= t_tmp_remove_tree(sub);
    }
    closedir(d);
    return rc | t_rmdir(path);
}

/* At the end of a run: the scratch directory removed when it passed, kept
 * for a look when it did not. */
static void t_tmp_done(int passed) {
    while (t_tmp_paths) {
        t_tmp_path *next = t_tmp_paths->next;
        free(t_tmp_paths);
        t_tmp_paths = next;
    }
    if (!t_tmp_root[0]) return;
    if (!passed) printf("scratch files kept in %s\n", t_tmp_root);
    else if (t_tmp_remove_tree(t_tmp_root) != 0) fprintf(stderr, "could not remove all of %s\n", t_tmp_root);
}

typedef struct t_case { const char *name; int (*fn)(void); } t_case;
typedef struct t_suite { const char *name; const t_case *cases; } t_suite;

/* Message buffer for the current case (printed on failure or skip). */
static char t_msg[2048];

#define T_CHECK(cond, ...) do { if (!(cond)) { \
    snprintf(t_msg, sizeof t_msg, "%s:%d: ", __FILE__, __LINE__); \
    snprintf(t_msg + strlen(t_msg), sizeof t_msg - strlen(t_msg), __VA_ARGS__); \
    return T_FAIL; } } while (0)
#define T_SKIP_IF(cond, ...) do { if (cond) { \
    snprintf(t_msg, sizeof t_msg, __VA_ARGS__); return T_SKIP; } } while (0)
/* Informational line shown with -v (measured tolerances etc.). */
#define T_NOTE(...) do { if (t_verbose) { printf("      "); printf(__VA_ARGS__); printf("\n"); } } while (0)

static int t_verbose = 0;

/* Where the reference data lives: $SDX_SHARED, else ../shared. */
T_UNUSED static const char *t_shared_dir(void) {
    const char *e = getenv("SDX_SHARED");
    return e && *e ? e : "../shared";
}

/* Path under shared/, or NULL when shared/ is absent (the caller skips). */
T_UNUSED static const char *t_shared(const char *rel) {
    static char buf[8][1024];
    static int slot = 0;
    char *p = buf[slot++ & 7];
    FILE *f;
    snprintf(p, 1024, "%s/%s", t_shared_dir(), rel);
    f = fopen(p, "rb");
    if (!f) return NULL;
    fclose(f);
    return p;
}

#define T_NEED_SHARED(var, rel) const char *var = t_shared(rel); \
    T_SKIP_IF(!var, "golden data %s/%s not found (set SDX_SHARED or place shared/ beside the repo)", t_shared_dir(), rel)

T_UNUSED static int t_file_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* The whole file at path in a new buffer (free it), its size in *size;
 * NULL when it cannot be read. */
T_UNUSED static unsigned char *t_slurp(const char *path, size_t *size) {
    FILE *f = path ? fopen(path, "rb") : NULL;
    unsigned char *p = NULL;
    long n;
    *size = 0;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (p = (unsigned char *)malloc((size_t)n + 1)) &&
        fread(p, 1, (size_t)n, f) == (size_t)n)
        *size = (size_t)n;
    else {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

/* The model md describes, with the shared CLIP vocabulary where md names
 * none; NULL when it does not load (sdx_last_error(ctx) says why). */
T_UNUSED static sdx_model *t_model_with(sdx_ctx *ctx, const sdx_model_desc *md) {
    char vocab[1024];
    sdx_model_desc d = *md;
    sdx_model *m = NULL;
    snprintf(vocab, sizeof vocab, "%s/vocab", t_shared_dir());
    if (!d.vocab && !d.vocab_data && !d.vocab_source.path && !d.vocab_source.data && !d.vocab_source.read) d.vocab = vocab;
    return sdx_model_load(ctx, &d, &m) == SDX_OK ? m : NULL;
}

/* A checkpoint loaded with the shared CLIP vocabulary; NULL when it does
 * not load. */
T_UNUSED static sdx_model *t_model_file(sdx_ctx *ctx, const char *ckpt) {
    sdx_model_desc md;
    memset(&md, 0, sizeof md);
    md.checkpoint = ckpt;
    return t_model_with(ctx, &md);
}

/* Path of the tiny golden checkpoint of an area: "sd1", "sd2" or "sdxl"
 * (4 buffers of its own, reused in turn). */
T_UNUSED static const char *t_golden_ckpt(const char *area) {
    static char buf[4][1024];
    static int slot = 0;
    char *p = buf[slot++ & 3];
    snprintf(p, 1024, "%s/golden/%s/model.safetensors", t_shared_dir(), area);
    return p;
}

/* A model description of an area's golden checkpoint, to set more on. */
T_UNUSED static void t_golden_desc(sdx_model_desc *md, const char *area) {
    memset(md, 0, sizeof *md);
    md->checkpoint = t_golden_ckpt(area);
}

/* Gives model `to` the activation storage of model `from`, part by part
 * (a device's default half activations, sdx_model_desc.activations), so
 * a CPU model computes what a device model does. */
T_UNUSED static void t_same_activations(sdx_model *to, const sdx_model *from) {
    to->te.act_type = from->te.act_type;
    to->unet.act_type = from->unet.act_type;
    to->vae.act_type = from->vae.act_type;
    to->taesd.act_type = from->taesd.act_type;
}

/* A UNet of a checkpoint (model.diffusion_model.*) and the inputs of a
 * golden case (x, timesteps, context, on the host), for tests of how a
 * UNet call runs. 0 (the context's message set) when they do not load. */
typedef struct {
    sdx_st *model, *cases;
    sdx__unet *u;
    sdx_tensor x, ts, cx;
} t_unet_inputs;

T_UNUSED static void t_unet_inputs_close(sdx_ctx *ctx, t_unet_inputs *c) {
    sdx_tensor_free(ctx, &c->x);
    sdx_tensor_free(ctx, &c->ts);
    sdx_tensor_free(ctx, &c->cx);
    if (c->u) sdx__unet_free(c->u);
    free(c->u);
    sdx_st_close(c->cases);
    sdx_st_close(c->model);
    memset(c, 0, sizeof *c);
}

T_UNUSED static int t_unet_inputs_open(sdx_ctx *ctx, t_unet_inputs *c, const char *model, const char *cases) {
    memset(c, 0, sizeof *c);
    if (sdx_st_open(ctx, model, &c->model) == SDX_OK && sdx_st_open(ctx, cases, &c->cases) == SDX_OK &&
        (c->u = (sdx__unet *)calloc(1, sizeof *c->u)) && sdx__unet_load(ctx, c->u, c->model, "model.diffusion_model.") == SDX_OK &&
        sdx_st_read_f32(ctx, c->cases, "x", &c->x) == SDX_OK && sdx_st_read_f32(ctx, c->cases, "timesteps", &c->ts) == SDX_OK &&
        sdx_st_read_f32(ctx, c->cases, "context", &c->cx) == SDX_OK)
        return 1;
    t_unet_inputs_close(ctx, c);
    return 0;
}

/* The tiny golden checkpoint of an area, loaded. */
T_UNUSED static sdx_model *t_model(sdx_ctx *ctx, const char *area) { return t_model_file(ctx, t_golden_ckpt(area)); }

/* Declares ctx, a test context, and m, the area's golden model: skips
 * without the golden data, fails when the model does not load. */
#define T_NEED_MODEL(ctx, m, area) \
    T_SKIP_IF(!t_shared("vocab/merges.txt") || !t_file_exists(t_golden_ckpt(area)), \
              "golden data %s/golden/%s not found (set SDX_SHARED or place shared/ beside the repo)", t_shared_dir(), area); \
    sdx_ctx *ctx = t_ctx(); \
    sdx_model *m = t_model(ctx, area); \
    T_CHECK(m, "%s", sdx_last_error(ctx))

/* A float's bit pattern: compares results bit for bit (-0 against 0, one
 * NaN against another). */
T_UNUSED static uint32_t t_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* Deterministic test randomness (xorshift + Box-Muller). */
static uint64_t t_rng_state = 0x9E3779B97F4A7C15ull;
T_UNUSED static void t_seed(uint64_t s) { t_rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
T_UNUSED static double t_uniform(void) {
    uint64_t x = t_rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    t_rng_state = x;
    return ((x >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
T_UNUSED static double t_normal(void) {
    double u = t_uniform(), v = t_uniform();
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}
T_UNUSED static void t_fill_normal(float *x, size_t n, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(t_normal() * scale);
}

/* Writes dst: the checkpoint src with its tensors changed by edit (which
 * may point a tensor's data at its own buffer). */
typedef void (*t_edit_fn)(sdx_tensor *ts, int n, void *arg);
T_UNUSED static int t_write_variant(sdx_ctx *ctx, const char *src, const char *dst, t_edit_fn edit, void *arg) {
    sdx_st *st;
    sdx_tensor *ts;
    int n, rc;
    if ((rc = sdx_st_open(ctx, src, &st)) != SDX_OK) return rc;
    n = sdx_st_count(st);
    ts = (sdx_tensor *)calloc((size_t)n, sizeof *ts);
    if (!ts) { sdx_st_close(st); return SDX_ERR_NOMEM; }
    for (int i = 0; i < n; i++) ts[i] = *sdx_st_get(st, i);
    edit(ts, n, arg);
    rc = sdx_st_write(ctx, dst, ts, n, NULL, 0);
    free(ts);
    sdx_st_close(st);
    return rc;
}

/* An edit for t_write_variant: one NaN in the first convolution of the
 * tiny sd1 UNet's middle block; arg is a float buffer of 64*64*9 for the
 * poisoned copy. */
#define T_POISONED_UNET_WEIGHT "model.diffusion_model.middle_block.0.in_layers.2.weight"
T_UNUSED static void t_poison_unet(sdx_tensor *ts, int n, void *arg) {
    float *w = (float *)arg;
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, T_POISONED_UNET_WEIGHT)) {
            memcpy(w, ts[i].data, sdx_tensor_nbytes(&ts[i]));
            w[17] = NAN;
            ts[i].data = w;
        }
}

/* An edit for t_write_variant: the tiny sd1 UNet's first convolution
 * takes the 9 channels of an inpainting model (latent, mask, masked-image
 * latent), the 5 new ones random (t_normal() * 0.1, seeded by the
 * caller); arg is a float buffer of 32*9*9. */
T_UNUSED static void t_inpainting_unet(sdx_tensor *ts, int n, void *arg) {
    float *w = (float *)arg;                   /* [32, 9, 3, 3] */
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, "model.diffusion_model.input_blocks.0.0.weight")) {
            const float *old = (const float *)ts[i].data;      /* [32, 4, 3, 3] */
            int64_t o = ts[i].shape[0];
            for (int64_t a = 0; a < o; a++)
                for (int c = 0; c < 9; c++)
                    for (int k = 0; k < 9; k++)
                        w[(a * 9 + c) * 9 + k] = c < 4 ? old[(a * 4 + c) * 9 + k] : (float)(t_normal() * 0.1);
            ts[i].shape[1] = 9;
            ts[i].data = w;
        }
}

/* A test context's description: two threads unless SDX_TEST_THREADS says
 * how many, the rest zero (for a case to add to). */
T_UNUSED static sdx_desc t_desc(void) {
    sdx_desc d;
    const char *e = getenv("SDX_TEST_THREADS");
    memset(&d, 0, sizeof d);
    d.n_threads = e ? atoi(e) : 2;
    return d;
}

/* A context for tests (t_desc). */
T_UNUSED static sdx_ctx *t_ctx(void) {
    sdx_desc d = t_desc();
    return sdx_create(&d);
}

/* Allocation hooks (alloc, realloc, free with user = a t_allocs) that
 * count the allocations in `calls` and fail the fail_at-th (counting
 * from 1; 0: none fails), and any that would take the bytes held (`live`,
 * at most `peak` so far) past max_live (0: no limit), as a device whose
 * memory runs out would. Each block carries its size in front. */
typedef struct t_allocs { long calls, fail_at; size_t max_live, live, peak; } t_allocs;
#define T_ALLOCS_INIT { 0, 0, 0, 0, 0 }
#define T_ALLOCS_HDR 16
T_UNUSED static void *t_allocs_take(t_allocs *f, void *old, size_t n) {
    size_t had = old ? *(size_t *)((char *)old - T_ALLOCS_HDR) : 0;
    char *b;
    if (++f->calls == f->fail_at || (f->max_live && f->live - had + n > f->max_live) || n > SIZE_MAX - T_ALLOCS_HDR) return NULL;
    if (!(b = (char *)realloc(old ? (char *)old - T_ALLOCS_HDR : NULL, n + T_ALLOCS_HDR))) return NULL;
    *(size_t *)b = n;
    f->live = f->live - had + n;
    if (f->live > f->peak) f->peak = f->live;
    return b + T_ALLOCS_HDR;
}
T_UNUSED static void *t_allocs_alloc(size_t n, void *user) { return t_allocs_take((t_allocs *)user, NULL, n); }
T_UNUSED static void *t_allocs_realloc(void *p, size_t n, void *user) { return t_allocs_take((t_allocs *)user, p, n); }
T_UNUSED static void t_allocs_free(void *p, void *user) {
    t_allocs *f = (t_allocs *)user;
    if (!p) return;
    f->live -= *(size_t *)((char *)p - T_ALLOCS_HDR);
    free((char *)p - T_ALLOCS_HDR);
}

/* A one-thread context whose allocations go through f. */
T_UNUSED static sdx_ctx *t_allocs_ctx(t_allocs *f) {
    sdx_desc d;
    memset(&d, 0, sizeof d);
    d.n_threads = 1;
    d.alloc = t_allocs_alloc;
    d.realloc = t_allocs_realloc;
    d.free = t_allocs_free;
    d.user = f;
    return sdx_create(&d);
}

/* Fails the 1st, 2nd, ... allocation of run(ctx, arg), ctx made by
 * t_allocs_ctx(f), until a run makes fewer allocations than the one to
 * fail (max tries at most): each failing run must return SDX_ERR_NOMEM
 * saying "out of memory", the whole run SDX_OK. */
T_UNUSED static int t_fail_each_allocation(sdx_ctx *ctx, t_allocs *f, int (*run)(sdx_ctx *ctx, void *arg), void *arg, long max) {
    long n;
    int done = 0;
    for (n = 1; !done && n < max; n++) {
        int rc;
        f->calls = 0;
        f->fail_at = n;
        rc = run(ctx, arg);
        f->fail_at = 0;
        done = f->calls < n;
        T_CHECK(done ? rc == SDX_OK : rc == SDX_ERR_NOMEM && strstr(sdx_last_error(ctx), "out of memory"),
                "failing allocation %ld: rc %d (%s)", n, rc, sdx_last_error(ctx));
    }
    T_NOTE("%ld allocations failed one at a time", n - 2);
    T_CHECK(done, "never completed");
    return T_PASS;
}

/* Relative L2 error ||a - b|| / ||b|| in double. */
T_UNUSED static double t_rel_l2_f32(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

T_UNUSED static double t_max_abs_f32(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m || d != d) m = d;
    }
    return m;
}

/* golden/fewstep's measure for `rows` rows of n floats: the worst row's
 * max abs difference over max(1, max|b row|). */
T_UNUSED static double t_rows_err_scaled(const float *a, const float *b, int rows, size_t n) {
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double peak = 1;
        for (size_t k = 0; k < n; k++) peak = fmax(peak, fabs(b[(size_t)r * n + k]));
        worst = fmax(worst, t_max_abs_f32(a + (size_t)r * n, b + (size_t)r * n, n) / peak);
    }
    return worst;
}

/* Tensor `name` of the safetensors file at `file`, read as f32 into out
 * (allocated; the caller frees it). */
T_UNUSED static int t_read_f32(sdx_ctx *ctx, const char *file, const char *name, sdx_tensor *out) {
    sdx_st *st;
    int rc;
    memset(out, 0, sizeof *out);
    if ((rc = sdx_st_open(ctx, file, &st)) != SDX_OK) return rc;
    rc = sdx_st_read_f32(ctx, st, name, out);
    sdx_st_close(st);
    return rc;
}

/* rel-L2 of the n floats at got against tensor `key` of the open golden
 * file st; NaN (which passes no bound) when the tensor cannot be read or
 * holds another count. */
T_UNUSED static double t_rel_to(sdx_ctx *ctx, const sdx_st *st, const char *key, const float *got, int64_t n) {
    sdx_tensor ref;
    double r = NAN;
    if (sdx_st_read_f32(ctx, st, key, &ref) != SDX_OK) return NAN;
    if (sdx_tensor_numel(&ref) == n) r = t_rel_l2_f32(got, (const float *)ref.data, (size_t)n);
    sdx_tensor_free(ctx, &ref);
    return r;
}

/* The same against the golden file at path (NULL: NaN). */
T_UNUSED static double t_rel_to_file(sdx_ctx *ctx, const char *path, const char *key, const float *got, int64_t n) {
    sdx_st *st = NULL;
    double r;
    if (!path || sdx_st_open(ctx, path, &st) != SDX_OK) return NAN;
    r = t_rel_to(ctx, st, key, got, n);
    sdx_st_close(st);
    return r;
}

/* A copy of an output for *keep (a malloc'd f32 array; NULL keep: none). */
T_UNUSED static void t_keep_f32(float **keep, const sdx_tensor *t) {
    size_t bytes = (size_t)sdx_tensor_numel(t) * sizeof(float);
    if (!keep) return;
    *keep = (float *)malloc(bytes ? bytes : 1);
    if (*keep) memcpy(*keep, t->data, bytes);
}

/* One UNet call of a golden UNet case file (x, timesteps, context, y
 * for SDXL, and the reference "out") through `u`: the output's rel-L2
 * against the reference, and whether it is all finite; with keep, a
 * copy of the output (t_keep_f32). */
T_UNUSED static int t_unet_case_keep(sdx_ctx *ctx, sdx__unet *u, const char *case_path, double *rel, int *finite, float **keep) {
    sdx_st *cs = NULL;
    sdx__arena arena;
    sdx_tensor x, ts, cx, y, ref, out;
    int has_y, rc;
    T_CHECK(sdx_st_open(ctx, case_path, &cs) == SDX_OK, "%s", sdx_last_error(ctx));
    has_y = sdx_st_find(cs, "y") != NULL;
    rc = sdx_st_read_f32(ctx, cs, "x", &x) == SDX_OK && sdx_st_read_f32(ctx, cs, "timesteps", &ts) == SDX_OK &&
         sdx_st_read_f32(ctx, cs, "context", &cx) == SDX_OK && sdx_st_read_f32(ctx, cs, "out", &ref) == SDX_OK &&
         (!has_y || sdx_st_read_f32(ctx, cs, "y", &y) == SDX_OK);
    sdx_st_close(cs);
    T_CHECK(rc, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tensor_alloc(ctx, &out, SDX_F32, 4, ref.shape) == SDX_OK, "alloc");
    sdx__arena_init(&arena, ctx, 0);
    rc = sdx__unet_forward(ctx, u, &arena, &x, (const float *)ts.data, &cx, has_y ? &y : NULL, &out);
    if (rc == SDX_OK) {
        *rel = t_rel_l2_f32((const float *)out.data, (const float *)ref.data, (size_t)sdx_tensor_numel(&ref));
        *finite = !sdx__has_nonfinite(&out);
        t_keep_f32(keep, &out);
    }
    sdx__arena_free(&arena);
    sdx_tensor_free(ctx, &x); sdx_tensor_free(ctx, &ts); sdx_tensor_free(ctx, &cx);
    sdx_tensor_free(ctx, &ref); sdx_tensor_free(ctx, &out);
    if (has_y) sdx_tensor_free(ctx, &y);
    T_CHECK(rc == SDX_OK, "%s: %s", case_path, sdx_last_error(ctx));
    return T_PASS;
}

T_UNUSED static int t_unet_case(sdx_ctx *ctx, sdx__unet *u, const char *case_path, double *rel, int *finite) {
    return t_unet_case_keep(ctx, u, case_path, rel, finite, NULL);
}

/* The VAE decoder of model m on a golden decode case (latent "z", the
 * decoded reference under key): rel-L2 into *r (1e30 when not finite);
 * with keep, a copy of the output (t_keep_f32). */
T_UNUSED static int t_vae_golden_case(sdx_ctx *ctx, sdx_model *m, const char *rel, const char *key, double *r, float **keep) {
    sdx_st *cs = NULL;
    sdx_tensor z, ref, out;
    sdx__arena arena;
    T_CHECK(sdx_st_open(ctx, t_shared(rel), &cs) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_read_f32(ctx, cs, "z", &z) == SDX_OK && sdx_st_read_f32(ctx, cs, key, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_tensor_alloc(ctx, &out, SDX_F32, 4, ref.shape) == SDX_OK, "alloc");
    sdx__arena_init(&arena, ctx, 0);
    T_CHECK(sdx__vae_decode(ctx, &m->vae, &arena, &z, &out, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
    *r = sdx__has_nonfinite(&out) ? 1e30 : t_rel_l2_f32((const float *)out.data, (const float *)ref.data, (size_t)sdx_tensor_numel(&ref));
    t_keep_f32(keep, &out);
    sdx__arena_free(&arena);
    sdx_tensor_free(ctx, &z); sdx_tensor_free(ctx, &ref); sdx_tensor_free(ctx, &out);
    sdx_st_close(cs);
    return T_PASS;
}

/* The text encoder of model m on the golden text case (4 x 77 "tokens",
 * the reference "context"): rel-L2 into *r (1e30 when not finite);
 * with keep, a copy of the output (t_keep_f32). */
T_UNUSED static int t_text_golden_case(sdx_ctx *ctx, sdx_model *m, const char *rel, double *r, float **keep) {
    sdx_st *cs = NULL;
    sdx_tensor tok, context;
    int32_t ids[4 * 77];
    sdx__arena arena;
    T_CHECK(sdx_st_open(ctx, t_shared(rel), &cs) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_read_f32(ctx, cs, "tokens", &tok) == SDX_OK && sdx_tensor_numel(&tok) == 4 * 77, "tokens");
    for (int i = 0; i < 4 * 77; i++) ids[i] = (int32_t)((float *)tok.data)[i];
    sdx_tensor_free(ctx, &tok);
    sdx_st_close(cs);
    sdx__arena_init(&arena, ctx, 0);
    T_CHECK(sdx__textenc_encode_ids(ctx, &m->te, &arena, ids, NULL, 4, 1, &context, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
    *r = sdx__has_nonfinite(&context) ? 1e30 : t_rel_to_file(ctx, t_shared(rel), "context", (const float *)context.data,
                                                             sdx_tensor_numel(&context));
    t_keep_f32(keep, &context);
    sdx_tensor_free(ctx, &context);
    sdx__arena_free(&arena);
    return T_PASS;
}

/* A txt2img case of golden/<area>/index.json ("pipeline_cases"): its
 * parameters and the path of the file holding its final latent and image. */
typedef struct t_golden_case {
    char name[64], prompt[512], negative[512], sampler[64], scheduler[64], file[600];
    int64_t seed;
    int width, height, steps;
    float cfg;
} t_golden_case;

/* Up to `max` cases of `area` into out: their count, or -1 (unreadable). */
T_UNUSED static int t_golden_cases(sdx_ctx *ctx, const char *area, t_golden_case *out, int max) {
    char path[512];
    sdx__json_doc doc;
    const sdx__json *list, *c;
    int n = 0;
    snprintf(path, sizeof path, "%s/golden/%s/index.json", t_shared_dir(), area);
    if (sdx__json_parse_file(ctx, path, &doc) != SDX_OK) return -1;
    list = sdx__json_get(doc.root, "pipeline_cases");
    for (c = list ? list->child : NULL; c && n < max; c = c->next, n++) {
        t_golden_case *g = &out[n];
        memset(g, 0, sizeof *g);
        snprintf(g->name, sizeof g->name, "%s", sdx__json_get(c, "name")->str);
        snprintf(g->prompt, sizeof g->prompt, "%s", sdx__json_get(c, "prompt")->str);
        snprintf(g->negative, sizeof g->negative, "%s", sdx__json_get(c, "negative")->str);
        snprintf(g->sampler, sizeof g->sampler, "%s", sdx__json_get(c, "sampler")->str);
        snprintf(g->scheduler, sizeof g->scheduler, "%s", sdx__json_get(c, "scheduler")->str);
        snprintf(g->file, sizeof g->file, "%s/golden/%s/%s", t_shared_dir(), area, sdx__json_get(c, "file")->str);
        g->seed = (int64_t)sdx__json_get(c, "seed")->num;
        g->width = (int)sdx__json_get(c, "width")->num;
        g->height = (int)sdx__json_get(c, "height")->num;
        g->steps = (int)sdx__json_get(c, "steps")->num;
        g->cfg = (float)sdx__json_get(c, "cfg")->num;
    }
    sdx__json_free(&doc);
    return n;
}

/* The generation parameters of a golden case (CPU noise, as generated). */
T_UNUSED static void t_golden_params(const t_golden_case *c, sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = c->prompt;
    p->negative_prompt = c->negative;
    p->width = c->width;
    p->height = c->height;
    p->steps = c->steps;
    p->cfg_scale = c->cfg;
    p->sampler = c->sampler;
    p->scheduler = c->scheduler;
    p->seed = c->seed;
    p->rng = SDX_RNG_CPU;
}

/* Seconds on a monotonic clock, for timing a case's work. */
T_UNUSED static double t_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One CLIP tokenizer (from the OpenAI .gz) on its own context, loaded by
 * the first case that needs it and shared by the suite's cases; the
 * suite's last case, "teardown", frees both. */
static sdx_ctx *t_tok_ctx;
static sdx_tokenizer *t_tok;

T_UNUSED static sdx_tokenizer *t_tokenizer(void) {
    const char *gz = t_shared("vocab/bpe_simple_vocab_16e6.txt.gz");
    if (t_tok || !gz) return t_tok;
    if (!t_tok_ctx) t_tok_ctx = t_ctx();
    if (sdx_tokenizer_load(t_tok_ctx, gz, &t_tok) != SDX_OK) {
        fprintf(stderr, "tokenizer load failed: %s\n", sdx_last_error(t_tok_ctx));
        t_tok = NULL;
    }
    return t_tok;
}

#define T_NEED_TOKENIZER(tok) sdx_tokenizer *tok = t_tokenizer(); \
    T_SKIP_IF(!t_shared("vocab/bpe_simple_vocab_16e6.txt.gz"), "golden data %s/vocab not found", t_shared_dir()); \
    T_CHECK(tok != NULL, "vocabulary did not load")

T_UNUSED static int t_tokenizer_teardown(void) {
    sdx_tokenizer_free(t_tok);
    t_tok = NULL;
    if (t_tok_ctx) sdx_destroy(t_tok_ctx);
    t_tok_ctx = NULL;
    return T_PASS;
}

/* ---- the sdx command and the PNGs it writes -------------------------------- */

#define T_NEED_SDX_COMMAND() T_SKIP_IF(!t_file_exists("examples/sdx"), "examples/sdx not built (make all)")

/* Runs examples/sdx with args: its exit status, its stdout and stderr in
 * out (-1 where there is no POSIX shell). */
T_UNUSED static int t_sdx(const char *args, char *out, size_t size) {
    static char cmd[16384];
    snprintf(cmd, sizeof cmd, "./examples/sdx %s 2>&1", args);
    return t_shell(cmd, out, size);
}

/* 1 if the PNG at path has a tEXt "parameters" chunk containing expect. */
T_UNUSED static int t_png_has_parameters(const char *path, const char *expect) {
    static char buf[1 << 20];
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    if (n < 8 || memcmp(buf, "\x89PNG\r\n\x1a\n", 8) != 0) return 0;
    for (size_t i = 0; i + 14 < n; i++)
        if (!memcmp(buf + i, "tEXtparameters", 14)) return strstr(buf + i + 15, expect) != NULL;
    return 0;
}

/* Largest difference between two 8-bit images of the same size and
 * channels; 256 when their sizes differ. */
T_UNUSED static int t_image_diff(const sdx_image *a, const sdx_image *b) {
    int worst = 0;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels) return 256;
    for (size_t i = 0; i < (size_t)a->width * (size_t)a->height * (size_t)a->channels; i++)
        worst = abs(a->data[i] - b->data[i]) > worst ? abs(a->data[i] - b->data[i]) : worst;
    return worst;
}

/* The PNG helpers read with stb_image; tests/gpu links without it. */
#ifndef T_NO_STB
#include <stb/stb_image.h>

/* The PNG at path with `channels` 8-bit channels (1 or 3); data is NULL
 * when it cannot be read, else stbi_image_free it. */
T_UNUSED static sdx_image t_png_load(const char *path, int channels) {
    sdx_image img = { 0, 0, channels, NULL };
    int c;
    if (path) img.data = stbi_load(path, &img.width, &img.height, &c, channels);
    return img;
}

/* 1 if the PNG at path can be read; its size in *w, *h. */
T_UNUSED static int t_png_size(const char *path, int *w, int *h) {
    sdx_image img = t_png_load(path, 3);
    *w = img.width;
    *h = img.height;
    stbi_image_free(img.data);
    return img.data != NULL;
}

/* Largest difference between an 8-bit RGB image and the PNG at path;
 * 256 when the PNG cannot be read or has another size. */
T_UNUSED static int t_png_diff(const sdx_image *img, const char *path) {
    sdx_image want = t_png_load(path, 3);
    int worst = want.data ? t_image_diff(img, &want) : 256;
    stbi_image_free(want.data);
    return worst;
}

/* The same between two PNG files. */
T_UNUSED static int t_pngs_diff(const char *a, const char *b) {
    sdx_image got = t_png_load(a, 3);
    int worst = got.data ? t_png_diff(&got, b) : 256;
    stbi_image_free(got.data);
    return worst;
}
#endif

/* Which cases run: those whose "suite.case" name contains one of the
 * patterns (all when there are none) and none of the --skip patterns;
 * with --part K/N, of those the Kth of every N (`selected` counts them).
 * With -j, the workers take those cases (numbered in run order: `seen`)
 * one at a time from a counter they share (`next`), so a worker that got
 * short cases takes more of them; `claim` is the number this one holds,
 * -1 for none. */
typedef struct t_filter {
    const char *only[64], *skip[64];
    int n_only, n_skip, part, parts, selected, workers, seen, claim;
    int *next;
} t_filter;

T_UNUSED static int t_selected(const t_filter *f, const char *full) {
    int hit = f->n_only == 0;
    for (int i = 0; i < f->n_only && !hit; i++) hit = strstr(full, f->only[i]) != NULL;
    for (int i = 0; i < f->n_skip && hit; i++) hit = strstr(full, f->skip[i]) == NULL;
    return hit;
}

/* Checkpoints a case leaves mapped (Linux: mappings of *.safetensors and
 * *.gguf files in /proc/self/maps), counted before and after each case: a case
 * whose model, file or stage is never freed keeps its mapping, and its
 * resident pages then count in later cases' memory measurements. The
 * first such path is copied to `first` (size bytes). -1: unknown here. */
T_UNUSED static int t_checkpoint_mappings(char *first, size_t size) {
#if defined(__linux__)
    char line[4096];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        const char *path = strchr(line, '/');
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (!path || !((len >= 12 && !strcmp(line + len - 12, ".safetensors")) || (len >= 5 && !strcmp(line + len - 5, ".gguf"))))
            continue;
        if (n++ == 0 && first) snprintf(first, size, "%s", path);
    }
    fclose(f);
    return n;
#else
    (void)first; (void)size;
    return -1;
#endif
}

/* The next case number no worker has taken (only -j's POSIX workers share one). */
T_UNUSED static int t_claim_next(int *next) {
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
#else
    return (*next)++;
#endif
}

/* How the lines of a run begin: a case starting (-v, and always in a -j
 * worker: the last one names the case a dead worker was in), its result,
 * and the summary (what CI reads; -j's parent reads the workers' too). */
#define T_STARTS "  ....  "
#define T_OK     "  ok    "
#define T_SKIPS  "  SKIP  "
#define T_FAILS  "  FAIL  "
#define T_SUMMARY "%d passed, %d failed, %d skipped"

T_UNUSED static int t_run_suite(const t_suite *s, t_filter *filter, int *np, int *nf, int *ns) {
    for (const t_case *c = s->cases; c->name; c++) {
        char full[256], leaked[512];
        int r, before, after;
        snprintf(full, sizeof full, "%s.%s", s->name, c->name);
        if (!t_selected(filter, full)) continue;
        if (filter->parts > 1 && filter->selected++ % filter->parts != filter->part - 1) continue;
        if (filter->workers > 1) {    /* claims only grow, so a claim is never behind `seen` */
            int number = filter->seen++;
            if (filter->claim < 0) filter->claim = t_claim_next(filter->next);
            if (number != filter->claim) continue;
            filter->claim = -1;
        }
        t_msg[0] = 0;
        time_t t0;
        if (t_verbose || filter->workers > 1) { printf(T_STARTS "%s\n", full); fflush(stdout); }
        t0 = time(NULL);
        before = t_checkpoint_mappings(NULL, 0);
        r = c->fn();
        after = t_checkpoint_mappings(leaked, sizeof leaked);
        if (r == T_PASS && after > before) {
            r = T_FAIL;
            snprintf(t_msg, sizeof t_msg, "the case leaves %d more checkpoint mapping(s), e.g. %s (a model or file not freed)",
                     after - before, leaked);
        }
        /* whole seconds of wall time, shown from 2 s: where CI's time goes */
        if (r == T_PASS && time(NULL) - t0 >= 2) { (*np)++; printf(T_OK "%s (%lds)\n", full, (long)(time(NULL) - t0)); }
        else if (r == T_PASS) { (*np)++; printf(T_OK "%s\n", full); }
        else if (r == T_SKIP) { (*ns)++; printf(T_SKIPS "%s: %s\n", full, t_msg); }
        else { (*nf)++; printf(T_FAILS "%s: %s\n", full, t_msg); }
        fflush(stdout);
    }
    return 0;
}

#ifndef _WIN32
#include <sys/mman.h>
#include <sys/wait.h>

/* -j N: N processes (fork: nothing has run yet) taking the selected cases
 * from a shared counter (t_filter), each its lines in a file of its own;
 * then each worker's lines in turn and one summary for all. A worker
 * that dies is a failure of the case it was in. */
static int t_run_workers(const t_suite *suites, int nsuites, t_filter *filter) {
    enum { MAX_WORKERS = 16 };
    FILE *log[MAX_WORKERS];
    pid_t pid[MAX_WORKERS];
    int np = 0, nf = 0, ns = 0, n = filter->workers = filter->workers < MAX_WORKERS ? filter->workers : MAX_WORKERS;
    void *shared = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        fprintf(stderr, "run -j: no shared memory for the workers' counter: %s\n", strerror(errno));
        exit(2);
    }
    filter->next = (int *)shared;
    *filter->next = 0;
    filter->claim = -1;
    fflush(stdout);
    for (int w = 0; w < n; w++) {
        if (!(log[w] = tmpfile()) || (pid[w] = fork()) < 0) {
            fprintf(stderr, "run -j: cannot start worker %d: %s\n", w, strerror(errno));
            exit(2);
        }
        if (pid[w] == 0) {
            int p = 0, f = 0, k = 0;
            if (dup2(fileno(log[w]), 1) < 0) _exit(2);
            for (int i = 0; i < nsuites; i++) t_run_suite(&suites[i], filter, &p, &f, &k);
            printf(T_SUMMARY "\n", p, f, k);
            t_tmp_done(f == 0);
            exit(f ? 1 : 0);      /* (LeakSanitizer's check runs at exit) */
        }
    }
    for (int w = 0; w < n; w++) {
        char line[4096], last[512] = "(before its first case)";
        int status = 0, p, f, k, summed = 0;
        while (waitpid(pid[w], &status, 0) < 0 && errno == EINTR) {}
        rewind(log[w]);
        while (fgets(line, sizeof line, log[w])) {
            if (!strncmp(line, T_STARTS, strlen(T_STARTS))) {
                snprintf(last, sizeof last, "%s", line + strlen(T_STARTS));
                last[strcspn(last, "\n")] = 0;
                if (!t_verbose) continue;
            } else if (sscanf(line, T_SUMMARY, &p, &f, &k) == 3) {
                summed = 1;      /* the worker's own count; a dead one leaves none, so the lines are counted */
                continue;
            }
            np += !strncmp(line, T_OK, strlen(T_OK)), nf += !strncmp(line, T_FAILS, strlen(T_FAILS)), ns += !strncmp(line, T_SKIPS, strlen(T_SKIPS));
            fputs(line, stdout);
        }
        fclose(log[w]);
        if (!summed || !WIFEXITED(status)) {
            nf++;
            if (WIFSIGNALED(status)) printf(T_FAILS "%s: worker %d died of signal %d\n", last, w, WTERMSIG(status));
            else printf(T_FAILS "%s: worker %d ended without its summary\n", last, w);
        }
    }
    munmap(shared, sizeof(int));
    printf(T_SUMMARY "\n", np, nf, ns);
    return nf ? 1 : 0;
}
#endif

/* run [-v] [-j N | -jN] [--part K/N] [PATTERN...] [--skip PATTERN]...
 * -j N: the cases shared among N processes (POSIX; a case
 * that uses two threads leaves a core idle a good part of its time).
 * --part K/N: the Kth of every N selected cases, for N runs side by side
 * where -j cannot fork (Windows: tools/cross.sh runs two under wine). */
T_UNUSED static int t_main(int argc, char **argv, const t_suite *suites, int nsuites) {
    int np = 0, nf = 0, ns = 0;
    t_filter filter;
    memset(&filter, 0, sizeof filter);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) t_verbose = 1;
        else if (!strncmp(argv[i], "-j", 2) && argv[i][2] && atoi(argv[i] + 2) > 0) filter.workers = atoi(argv[i] + 2);
        else if (!strcmp(argv[i], "-j") && i + 1 < argc && atoi(argv[i + 1]) > 0) filter.workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--skip") && i + 1 < argc && filter.n_skip < 64) filter.skip[filter.n_skip++] = argv[++i];
        else if (!strcmp(argv[i], "--part") && i + 1 < argc && sscanf(argv[i + 1], "%d/%d", &filter.part, &filter.parts) == 2 &&
                 filter.part >= 1 && filter.part <= filter.parts) i++;
        else if (strcmp(argv[i], "--skip") && strcmp(argv[i], "-j") && strcmp(argv[i], "--part") && filter.n_only < 64)
            filter.only[filter.n_only++] = argv[i];
        else {
            fprintf(stderr, "run: more than 64 patterns, a --skip or -j without its argument, or a --part not K/N with 1 <= K <= N: '%s'\n",
                    argv[i]);
            return 2;
        }
    }
#ifndef _WIN32
    if (filter.workers > 1) return t_run_workers(suites, nsuites, &filter);
#endif
    filter.workers = 1;     /* (Windows: -j runs in this one process) */
    for (int i = 0; i < nsuites; i++) t_run_suite(&suites[i], &filter, &np, &nf, &ns);
    printf(T_SUMMARY "\n", np, nf, ns);
    t_tmp_done(nf == 0);
    return nf ? 1 : 0;
}

#ifdef SDX_TEST_SINGLE
#define SDX_TEST_SUITE(name, table) \
    int main(int argc, char **argv) { t_suite s = { #name, table }; return t_main(argc, argv, &s, 1); }
#else
#define SDX_TEST_SUITE(name, table) \
    static const t_suite t_suite_##name = { #name, table };
#endif

#endif
