/* Suite "robust": hostile files on disk, allocation failure at every
 * point, and absurd prompts. Every case expects a clean error (code and a
 * message naming the problem and the file), no crash, no leak, and no
 * sanitizer report under `make sanitize`. */
#include "test.h"
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>
#include <time.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif

/* ---- failing allocator ------------------------------------------------
 * Hooks for sdx_desc that fail the fail_at-th allocation (1-based, counted
 * from t_fa_arm) and count live blocks, so a caller can assert that every
 * failure path frees what it took. Thread-safe: kernels may allocate
 * scratch from worker threads. Reusable by any suite in this program:
 *
 *     t_failing_alloc fa;
 *     sdx_ctx *ctx = t_fa_ctx(&fa);      // hooks installed, not failing yet
 *     t_fa_arm(&fa, n);                  // fail the n-th allocation from now
 *     rc = operation(ctx);
 *     sdx_destroy(ctx);                  // fa.live must now be 0
 *
 * t_fa_sweep below runs an operation for n = 1, 2, ... until it succeeds
 * with no failure injected. */
typedef struct t_failing_alloc {
    sdx__mutex mu;      /* the library's own, POSIX or Win32 */
    long fail_at;     /* 0: never fail */
    long calls;       /* allocation attempts since arming (malloc + realloc) */
    long failed;      /* attempts that were made to fail */
    long live;        /* blocks currently allocated (context included) */
    long peak_live;
} t_failing_alloc;

/* 1 if this attempt must fail. Caller holds the lock. */
static int t_fa_should_fail(t_failing_alloc *fa) {
    fa->calls++;
    if (fa->fail_at && fa->calls == fa->fail_at) { fa->failed++; return 1; }
    return 0;
}

static void *t_fa_alloc(size_t size, void *user) {
    t_failing_alloc *fa = (t_failing_alloc *)user;
    void *p = NULL;
    sdx__mutex_lock(&fa->mu);
    if (!t_fa_should_fail(fa)) {
        p = malloc(size);
        if (p && ++fa->live > fa->peak_live) fa->peak_live = fa->live;
    }
    sdx__mutex_unlock(&fa->mu);
    return p;
}

static void *t_fa_realloc(void *ptr, size_t size, void *user) {
    t_failing_alloc *fa = (t_failing_alloc *)user;
    void *p = NULL;
    sdx__mutex_lock(&fa->mu);
    if (!t_fa_should_fail(fa)) {
        p = realloc(ptr, size);
        if (p && !ptr && ++fa->live > fa->peak_live) fa->peak_live = fa->live;
    }
    sdx__mutex_unlock(&fa->mu);
    return p;
}

static void t_fa_free(void *ptr, void *user) {
    t_failing_alloc *fa = (t_failing_alloc *)user;
    sdx__mutex_lock(&fa->mu);
    if (ptr) fa->live--;
    free(ptr);
    sdx__mutex_unlock(&fa->mu);
}

/* Resets the counters and returns a context using the hooks (NULL if the
 * context itself cannot be made). Call t_fa_done when finished. */
static sdx_ctx *t_fa_ctx(t_failing_alloc *fa, int n_threads) {
    sdx_desc d;
    memset(fa, 0, sizeof *fa);
    sdx__mutex_init(&fa->mu);
    memset(&d, 0, sizeof d);
    d.n_threads = n_threads;
    d.alloc = t_fa_alloc;
    d.realloc = t_fa_realloc;
    d.free = t_fa_free;
    d.user = fa;
    return sdx_create(&d);
}

static void t_fa_arm(t_failing_alloc *fa, long fail_at) {
    sdx__mutex_lock(&fa->mu);
    fa->fail_at = fail_at;
    fa->calls = 0;
    fa->failed = 0;
    sdx__mutex_unlock(&fa->mu);
}

static void t_fa_done(t_failing_alloc *fa) { sdx__mutex_destroy(&fa->mu); }

typedef int (*t_fa_op)(sdx_ctx *ctx, void *arg);

/* Runs op on a fresh context failing allocation n, for n = 1, 2, ...
 * until a run needs fewer than n allocations. Every failing run must
 * return SDX_ERR_NOMEM with an "out of memory" message, the last must
 * succeed, and each must leave no block allocated after sdx_destroy.
 * Returns T_PASS/T_FAIL (t_msg set); *n_points = allocations covered. */
static int t_fa_sweep(const char *what, t_fa_op op, void *arg, int n_threads, long max_points, long *n_points) {
    for (long n = 1; n <= max_points; n++) {
        t_failing_alloc fa;
        sdx_ctx *ctx = t_fa_ctx(&fa, n_threads);
        char msg[1024];
        long failed;
        int rc;
        T_CHECK(ctx != NULL, "%s: no context", what);
        t_fa_arm(&fa, n);
        rc = op(ctx, arg);
        failed = fa.failed;
        snprintf(msg, sizeof msg, "%s", sdx_last_error(ctx));
        sdx_destroy(ctx);
        t_fa_done(&fa);
        T_CHECK(fa.live == 0, "%s: failing allocation %ld leaks %ld block(s) (rc %d: %s)", what, n, fa.live, rc, msg);
        if (!failed) {
            T_CHECK(rc == SDX_OK, "%s: fails with no allocation failure (rc %d: %s)", what, rc, msg);
            *n_points = n - 1;
            return T_PASS;
        }
        /* a failure the operation can work around (e.g. no thread pool)
         * may still succeed; anything else must be reported as NOMEM */
        T_CHECK(rc == SDX_OK || rc == SDX_ERR_NOMEM, "%s: failing allocation %ld returns %d (%s), not SDX_ERR_NOMEM",
                what, n, rc, msg);
        T_CHECK(rc == SDX_OK || strstr(msg, "out of memory"), "%s: failing allocation %ld: message '%s'", what, n, msg);
    }
    T_CHECK(0, "%s: still allocating after %ld points", what, max_points);
    return T_FAIL;
}

/* ---- files on disk ---------------------------------------------------- */

static const char *rb_path(const char *name) {
    static char buf[4][256];
    static int slot = 0;
    char *p = buf[slot++ & 3];
    snprintf(p, 256, "%s/sdx_robust_%ld_%s", t_tmp_dir(), (long)getpid(), name);
    return p;
}

static int rb_write(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    size_t w;
    if (!f) return 0;
    w = n ? fwrite(bytes, 1, n, f) : 0;
    return fclose(f) == 0 && w == n;
}

/* A safetensors file: the 8-byte length (hlen, or the header's length
 * when hlen is UINT64_MAX), the header bytes, then data_len data bytes. */
static int rb_write_st(const char *path, uint64_t hlen, const char *header, size_t header_len, size_t data_len) {
    size_t n = 8 + header_len + data_len;
    unsigned char *img = (unsigned char *)calloc(1, n);
    int ok;
    if (!img) return 0;
    if (hlen == UINT64_MAX) hlen = header_len;
    for (int i = 0; i < 8; i++) img[i] = (unsigned char)(hlen >> (8 * i));
    memcpy(img + 8, header, header_len);
    for (size_t i = 0; i < data_len; i++) img[8 + header_len + i] = (unsigned char)(i * 13 + 1);
    ok = rb_write(path, img, n);
    free(img);
    return ok;
}

/* Opens path, expecting failure; copies the message. */
static int rb_open_fails(const char *path, char *msg, size_t size) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = (sdx_st *)(uintptr_t)1;
    int rc = sdx_st_open(ctx, path, &st);
    snprintf(msg, size, "%s", sdx_last_error(ctx));
    if (rc == SDX_OK) sdx_st_close(st);
    else if (st) rc = 1;    /* a failing open must clear *out */
    sdx_destroy(ctx);
    return rc;
}

typedef struct rb_file_case {
    const char *what;
    uint64_t hlen;          /* UINT64_MAX: the header's own length */
    const char *header;
    size_t header_len;      /* 0: strlen(header) */
    size_t data_len;
    int code;
    const char *expect;     /* substring of the message */
} rb_file_case;

#define RB_W(dtype, shape, b, e) "{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"
#define RB_H UINT64_MAX
#define RB_NUL_HEADER "{\"w\":" RB_W("F32", "[1]", 0, 4) "}"   /* sizeof counts its NUL */

static const rb_file_case rb_files[] = {
    { "header length 0", RB_H, "", 0, 16, SDX_ERR_FORMAT, "unexpected end" },
    { "header length 2^63", (uint64_t)1 << 63, "{}", 0, 0, SDX_ERR_FORMAT, "exceeds" },
    { "header length 2^64 - 2", UINT64_MAX - 1, "{}", 0, 0, SDX_ERR_FORMAT, "exceeds" },
    { "header length one past the file", 3, "{}", 0, 0, SDX_ERR_FORMAT, "past the end" },
    { "header cut inside a string", 12, "{\"w\":{\"dtype", 0, 0, SDX_ERR_FORMAT, "unterminated string" },
    { "header is a bare number", RB_H, "12345678", 0, 0, SDX_ERR_FORMAT, "not a JSON object" },
    { "unknown dtype", RB_H, "{\"w\":" RB_W("Q4_0", "[4]", 0, 2) "}", 0, 2, SDX_ERR_FORMAT, "unsupported dtype 'Q4_0'" },
    { "dtype in lower case", RB_H, "{\"w\":" RB_W("f32", "[1]", 0, 4) "}", 0, 4, SDX_ERR_FORMAT, "unsupported dtype 'f32'" },
    { "dtype not a string", RB_H, "{\"w\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, SDX_ERR_FORMAT, "dtype" },
    { "duplicate tensor names", RB_H, "{\"w\":" RB_W("F32", "[1]", 0, 4) ",\"w\":" RB_W("F32", "[1]", 4, 8) "}", 0, 8,
      SDX_ERR_FORMAT, "'w' appears twice" },
    { "duplicate __metadata__", RB_H, "{\"__metadata__\":{\"a\":\"b\"},\"__metadata__\":{\"c\":\"d\",\"e\":\"f\"}}", 0, 0,
      SDX_ERR_FORMAT, "__metadata__ appears twice" },
    { "__metadata__ not an object", RB_H, "{\"__metadata__\":[\"a\"]}", 0, 0, SDX_ERR_FORMAT, "not an object" },
    { "tensor entry not an object", RB_H, "{\"w\":[1,2]}", 0, 0, SDX_ERR_FORMAT, "not an object" },
    { "data section truncated", RB_H, "{\"a\":" RB_W("F32", "[2]", 0, 8) ",\"b\":" RB_W("F32", "[4]", 8, 24) "}", 0, 20,
      SDX_ERR_FORMAT, "outside the data section" },
    { "data section empty", RB_H, "{\"w\":" RB_W("F16", "[8]", 0, 16) "}", 0, 0, SDX_ERR_FORMAT, "outside the data section" },
    { "offsets far outside the file", RB_H, "{\"w\":" RB_W("F32", "[1]", 18446744073709551611, 18446744073709551615) "}", 0, 4,
      SDX_ERR_FORMAT, "outside the data section" },
    { "offset beyond 64 bits", RB_H, "{\"w\":" RB_W("F32", "[1]", 0, 18446744073709551620) "}", 0, 4,
      SDX_ERR_FORMAT, "data_offsets must be two non-negative integers" },
    { "three offsets", RB_H, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 0, 4,
      SDX_ERR_FORMAT, "data_offsets must be two" },
    { "overlapping spans", RB_H, "{\"a\":" RB_W("F32", "[3]", 0, 12) ",\"b\":" RB_W("F32", "[3]", 8, 20) "}", 0, 20,
      SDX_ERR_FORMAT, "overlap" },
    { "identical spans", RB_H, "{\"a\":" RB_W("F32", "[2]", 0, 8) ",\"b\":" RB_W("F32", "[2]", 0, 8) "}", 0, 8,
      SDX_ERR_FORMAT, "overlap" },
    { "non-UTF-8 tensor name", RB_H, "{\"w\xc0\xaf\":" RB_W("F32", "[1]", 0, 4) "}", 0, 4, SDX_ERR_FORMAT, "UTF-8" },
    { "UTF-16 surrogate in a name", RB_H, "{\"w\xed\xa0\x80\":" RB_W("F32", "[1]", 0, 4) "}", 0, 4, SDX_ERR_FORMAT, "UTF-8" },
    { "NUL escaped into a name", RB_H, "{\"w\\u0000x\":" RB_W("F32", "[1]", 0, 4) "}", 0, 4, SDX_ERR_FORMAT, "NUL" },
    { "raw NUL byte in the header", RB_H, RB_NUL_HEADER, sizeof RB_NUL_HEADER, 4, SDX_ERR_FORMAT, "trailing characters" },
    { "negative dimension", RB_H, "{\"w\":" RB_W("F32", "[2,-2]", 0, 16) "}", 0, 16, SDX_ERR_FORMAT, "shape entry 1" },
    { "dimension beyond int64", RB_H, "{\"w\":" RB_W("F32", "[9223372036854775808]", 0, 4) "}", 0, 4, SDX_ERR_FORMAT, "shape entry 0" },
    { "dimension in exponent form", RB_H, "{\"w\":" RB_W("F32", "[1e1]", 0, 40) "}", 0, 40, SDX_ERR_FORMAT, "shape entry 0" },
    { "shape product overflows 64 bits", RB_H, "{\"w\":" RB_W("F32", "[4611686018427387904,8]", 0, 4) "}", 0, 4,
      SDX_ERR_FORMAT, "overflows" },
    { "huge shape with a zero after it", RB_H, "{\"w\":" RB_W("F32", "[9223372036854775807,9223372036854775807,0]", 0, 0) "}", 0, 0,
      SDX_ERR_FORMAT, "overflows" },
    { "shape not an array", RB_H, "{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", 0, 16, SDX_ERR_FORMAT, "shape" },
    { "data but no tensors", RB_H, "{}", 0, 8, SDX_ERR_FORMAT, "no tensors" },
};

static int hostile_files_on_disk_are_rejected_with_a_reason(void) {
    const char *path = rb_path("hostile.safetensors");
    char msg[1024];
    for (int i = 0; i < (int)(sizeof rb_files / sizeof rb_files[0]); i++) {
        const rb_file_case *c = &rb_files[i];
        size_t hl = c->header_len ? c->header_len : strlen(c->header);
        int rc;
        T_CHECK(rb_write_st(path, c->hlen, c->header, hl, c->data_len), "cannot write %s", path);
        rc = rb_open_fails(path, msg, sizeof msg);
        remove(path);
        T_CHECK(rc == c->code, "%s: expected %s, got %d (%s)", c->what, sdx_result_name(c->code), rc, msg);
        T_CHECK(strstr(msg, c->expect), "%s: message '%s' lacks '%s'", c->what, msg, c->expect);
        T_CHECK(strstr(msg, path), "%s: message '%s' does not name the file", c->what, msg);
    }
    return T_PASS;
}

static int deeply_nested_header_on_disk_is_rejected(void) {
    const char *path = rb_path("nested.safetensors");
    size_t n = 1 << 20;                   /* one MiB of '[' */
    char *h = (char *)malloc(n), msg[1024];
    int rc;
    T_CHECK(h != NULL, "malloc");
    memset(h, '[', n);
    h[0] = '{'; memcpy(h + 1, "\"w\":", 4);
    T_CHECK(rb_write_st(path, RB_H, h, n, 0), "cannot write %s", path);
    free(h);
    rc = rb_open_fails(path, msg, sizeof msg);
    remove(path);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(msg, "nesting too deep") && strstr(msg, path), "rc %d: %s", rc, msg);
    return T_PASS;
}

/* A valid file written by sdx_st_write, cut at every interesting length:
 * inside the length field, inside the header, inside the data. */
static int valid_file_truncated_anywhere_is_rejected(void) {
    const char *path = rb_path("cut.safetensors");
    float a[6] = { 1, 2, 3, 4, 5, 6 };
    uint16_t b[2] = { 0x3c00, 0x4000 };
    sdx_tensor ts[2];
    sdx_ctx *ctx = t_ctx();
    struct stat sb;
    off_t full;
    memset(ts, 0, sizeof ts);
    ts[0].dtype = SDX_F32; ts[0].ndim = 2; ts[0].shape[0] = 2; ts[0].shape[1] = 3; ts[0].data = a; ts[0].name = "a";
    ts[1].dtype = SDX_F16; ts[1].ndim = 1; ts[1].shape[0] = 2; ts[1].data = b; ts[1].name = "b";
    T_CHECK(sdx_st_write(ctx, path, ts, 2, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    T_CHECK(stat(path, &sb) == 0, "stat");
    full = sb.st_size;
    for (off_t len = full - 1; len >= 0; len--) {
        char msg[1024];
        int rc;
        T_CHECK(truncate(path, len) == 0, "truncate %s", path);
        rc = rb_open_fails(path, msg, sizeof msg);
        T_CHECK(rc == SDX_ERR_FORMAT, "cut to %lld of %lld bytes: rc %d (%s)", (long long)len, (long long)full, rc, msg);
        T_CHECK(strstr(msg, path), "cut to %lld bytes: message '%s' does not name the file", (long long)len, msg);
    }
    remove(path);
    return T_PASS;
}

static int empty_files_directories_and_devices_are_not_checkpoints(void) {
    const char *dir = rb_path("dir.safetensors"), *empty = rb_path("empty.safetensors");
    char msg[1024];
    int rc;
    T_CHECK(rb_write(empty, "", 0), "cannot write %s", empty);
    rc = rb_open_fails(empty, msg, sizeof msg);
    remove(empty);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(msg, "too short") && strstr(msg, empty), "empty file: rc %d (%s)", rc, msg);
    T_CHECK(t_mkdir(dir) == 0, "mkdir %s", dir);
    rc = rb_open_fails(dir, msg, sizeof msg);
    rmdir(dir);
    T_CHECK(rc == SDX_ERR_IO && strstr(msg, "not a regular file") && strstr(msg, dir), "directory: rc %d (%s)", rc, msg);
    rc = rb_open_fails(T_DEVNULL, msg, sizeof msg);
    T_CHECK(rc == SDX_ERR_IO && strstr(msg, "not a regular file") && strstr(msg, T_DEVNULL), T_DEVNULL ": rc %d (%s)", rc, msg);
    rc = rb_open_fails("", msg, sizeof msg);
    T_CHECK(rc == SDX_ERR_IO, "empty path: rc %d (%s)", rc, msg);
    return T_PASS;
}

/* Opening a named pipe must not wait for a writer that never comes. The
 * open runs in a child with an alarm, so a hang fails this case instead of
 * the whole run. */
static int named_pipe_is_rejected_without_blocking(void) {
#ifdef _WIN32
    T_SKIP_IF(1, "POSIX named pipes (mkfifo, fork)");
#else
    const char *fifo = rb_path("pipe.safetensors");
    pid_t pid;
    int status = 0;
    T_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        char msg[1024];
        int rc;
        alarm(5);
        rc = rb_open_fails(fifo, msg, sizeof msg);
        _exit(rc == SDX_ERR_IO && strstr(msg, "not a regular file") ? 0 : 1);
    }
    T_CHECK(pid > 0, "fork");
    waitpid(pid, &status, 0);
    remove(fifo);
    T_CHECK(!(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM), "sdx_st_open blocked on a FIFO for 5 s");
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "FIFO: expected an I/O error naming it as not a regular file");
    return T_PASS;
#endif
}

/* ---- allocation failure ------------------------------------------------ */

/* open + parse + scan + read + a forced-f16 weight set on a checkpoint */
static int rb_op_checkpoint(sdx_ctx *ctx, void *arg) {
    const char *path = (const char *)arg;
    sdx_st *st;
    sdx__wset w;
    sdx_tensor f;
    const sdx_tensor *t;
    int rc = sdx_st_open(ctx, path, &st);
    if (rc != SDX_OK) return rc;
    if ((rc = sdx_st_scan_nonfinite(ctx, st, NULL)) != SDX_OK) { sdx_st_close(st); return rc; }
    if ((rc = sdx_st_read_f32(ctx, st, sdx_st_get(st, 0)->name, &f)) != SDX_OK) { sdx_st_close(st); return rc; }
    sdx_tensor_free(ctx, &f);
    sdx__wset_init(&w, ctx, st, "", SDX__PART_UNET, SDX_F16);
    for (int i = 0, done = 0; i < sdx_st_count(st) && done < 3 && rc == SDX_OK; i++) {
        if (sdx_st_get(st, i)->dtype != SDX_F32) continue;
        /* sdx__wget reports through the message; recover the code from it */
        t = sdx__wget_any(&w, "%s", sdx_st_get(st, i)->name);
        if (!t) rc = strstr(sdx_last_error(ctx), "out of memory") ? SDX_ERR_NOMEM : SDX_ERR_MODEL;
        done++;
    }
    sdx__wset_free(&w);
    sdx_st_close(st);
    return rc;
}

static int checkpoint_loading_survives_every_allocation_failure(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    long points = 0;
    int r = t_fa_sweep("checkpoint", rb_op_checkpoint, (void *)path, 1, 10000, &points);
    if (r != T_PASS) return r;
    T_NOTE("checkpoint open/scan/read/convert: %ld allocation points, each failed once", points);
    T_CHECK(points >= 5, "only %ld allocations: is the hook in use?", points);
    return T_PASS;
}

/* In-memory images: misaligned data (aligned copies) and metadata. */
static int rb_op_memory_image(sdx_ctx *ctx, void *arg) {
    static unsigned char img[1024];
    const char *h = "{\"__metadata__\":{\"k\":\"v\",\"x\":\"y\"},"
                    "\"a\":" RB_W("F32", "[2]", 0, 8) ",\"b\":" RB_W("F16", "[3]", 8, 14) ",\"c\":" RB_W("F32", "[1]", 14, 18) "}";
    size_t hl = strlen(h);
    sdx_st *st;
    int rc;
    (void)arg;
    memset(img, 0, sizeof img);
    for (int i = 0; i < 8; i++) img[1 + i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(img + 9, h, hl);
    rc = sdx_st_open_memory(ctx, img + 1, 8 + hl + 18, "image.safetensors", &st);   /* odd address */
    if (rc != SDX_OK) return rc;
    rc = sdx_st_meta_count(st) == 2 && sdx_st_count(st) == 3 ? SDX_OK : SDX_ERR_FORMAT;
    sdx_st_close(st);
    return rc;
}

static int memory_images_survive_every_allocation_failure(void) {
    long points = 0;
    int r = t_fa_sweep("memory image", rb_op_memory_image, NULL, 1, 1000, &points);
    if (r != T_PASS) return r;
    T_NOTE("misaligned in-memory image: %ld allocation points", points);
    return T_PASS;
}

/* sdx_st_write then reopen (header buffer growth, temp path). */
static int rb_op_write(sdx_ctx *ctx, void *arg) {
    const char *path = (const char *)arg;
    float a[300];
    sdx_tensor ts[40];
    char names[40][32];
    const char *meta[4] = { "format", "pt", "long", "a value long enough to grow the header buffer more than once ........" };
    sdx_st *st;
    int rc;
    for (int i = 0; i < 300; i++) a[i] = (float)i;
    memset(ts, 0, sizeof ts);
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "layer.%d.weight", i);
        ts[i].dtype = SDX_F32; ts[i].ndim = 1; ts[i].shape[0] = 7; ts[i].data = a + i * 7; ts[i].name = names[i];
    }
    if ((rc = sdx_st_write(ctx, path, ts, 40, meta, 2)) != SDX_OK) return rc;
    rc = sdx_st_open(ctx, path, &st);
    remove(path);
    if (rc != SDX_OK) return rc;
    rc = sdx_st_count(st) == 40 ? SDX_OK : SDX_ERR_FORMAT;
    sdx_st_close(st);
    return rc;
}

static int writing_survives_every_allocation_failure(void) {
    long points = 0;
    int r = t_fa_sweep("write+reopen", rb_op_write, (void *)rb_path("write.safetensors"), 1, 1000, &points);
    if (r != T_PASS) return r;
    T_NOTE("write + reopen: %ld allocation points", points);
    return T_PASS;
}

/* JSON: a document large enough for several node blocks. */
static int rb_op_json(sdx_ctx *ctx, void *arg) {
    const char *text = (const char *)arg;
    sdx__json_doc doc;
    int rc = sdx__json_parse(ctx, text, strlen(text), &doc);
    if (rc != SDX_OK) return rc;
    rc = sdx__json_get(doc.root, "items") && sdx__json_get(doc.root, "items")->len == 2000 ? SDX_OK : SDX_ERR_FORMAT;
    sdx__json_free(&doc);
    return rc;
}

static int json_parse_survives_every_allocation_failure(void) {
    size_t cap = 200000, n = 0;
    char *text = (char *)malloc(cap);
    long points = 0;
    int r;
    T_CHECK(text != NULL, "malloc");
    n += (size_t)snprintf(text + n, cap - n, "{\"name\":\"caf\\u00e9 \\ud83d\\ude00\",\"items\":[");
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(text + n, cap - n, "%s{\"id\":%d,\"v\":[%g,true,null,\"s%d\"]}", i ? "," : "", i, i * 0.25, i);
    snprintf(text + n, cap - n, "]}");
    r = t_fa_sweep("json", rb_op_json, text, 1, 10000, &points);
    free(text);
    if (r != T_PASS) return r;
    T_NOTE("JSON document of 2000 objects: %ld allocation points", points);
    T_CHECK(points >= 3, "expected several node blocks, got %ld allocations", points);
    return T_PASS;
}

/* JSON from a file (read buffer growth), golden data when present. */
static int rb_op_json_file(sdx_ctx *ctx, void *arg) {
    sdx__json_doc doc;
    int rc = sdx__json_parse_file(ctx, (const char *)arg, &doc);
    if (rc == SDX_OK) sdx__json_free(&doc);
    return rc;
}

static int json_file_parse_survives_every_allocation_failure(void) {
    T_NEED_SHARED(path, "golden/prompt/chunks.json");
    long points = 0;
    int r = t_fa_sweep("json file", rb_op_json_file, (void *)path, 1, 10000, &points);
    if (r != T_PASS) return r;
    T_NOTE("%s: %ld allocation points", path, points);
    return T_PASS;
}

/* ---- prompts ------------------------------------------------------------ */

/* Parses and (with the vocabulary) chunks a prompt; checks every weight
 * and multiplier is finite and within the documented clamp. Returns
 * T_PASS/T_FAIL; *seconds = wall time of both. */
static int rb_prompt_ok(const sdx_tokenizer *tok, const char *what, const char *prompt, double *seconds) {
    sdx_ctx *ctx = t_ctx();
    sdx__parsed p;
    sdx__chunks c;
    double t0 = t_now();
    int rc;
    rc = sdx__prompt_parse(ctx, prompt, &p);
    T_CHECK(rc == SDX_OK, "%s: parse rc %d (%s)", what, rc, sdx_last_error(ctx));
    for (int i = 0; i < p.n; i++)
        T_CHECK(isfinite(p.frag[i].weight) && fabs(p.frag[i].weight) <= SDX__PROMPT_WEIGHT_MAX, "%s: fragment %d weight %g",
                what, i, p.frag[i].weight);
    sdx__parsed_free(ctx, &p);
    if (tok) {
        rc = sdx__prompt_chunks(ctx, tok, prompt, &c);
        T_CHECK(rc == SDX_OK && c.n >= 1, "%s: chunks rc %d (%s)", what, rc, sdx_last_error(ctx));
        for (size_t i = 0; i < (size_t)c.n * 77; i++)
            T_CHECK(isfinite(c.mult[i]) && fabsf(c.mult[i]) <= (float)SDX__PROMPT_WEIGHT_MAX, "%s: multiplier %zu = %g", what, i, c.mult[i]);
        sdx__chunks_free(ctx, &c);
    }
    *seconds = t_now() - t0;
    sdx_destroy(ctx);
    return T_PASS;
}

/* The vocabulary for chunking, or NULL (parse-only) when shared/ is absent. */
static sdx_tokenizer *rb_vocab(sdx_ctx *ctx) {
    const char *path = t_shared("vocab/merges.txt");
    sdx_tokenizer *tok = NULL;
    if (path && sdx_tokenizer_load(ctx, path, &tok) != SDX_OK) tok = NULL;
    return tok;
}

/* Weight of the fragment holding `needle`, NAN if none. */
static double rb_weight_of(const char *prompt, const char *needle) {
    sdx_ctx *ctx = t_ctx();
    sdx__parsed p;
    double w = NAN;
    if (sdx__prompt_parse(ctx, prompt, &p) == SDX_OK) {
        for (int i = 0; i < p.n; i++) if (strstr(p.frag[i].text, needle)) { w = p.frag[i].weight; break; }
        sdx__parsed_free(ctx, &p);
    }
    sdx_destroy(ctx);
    return w;
}

static int absurd_prompt_weights_stay_finite_and_clamped(void) {
    double w;
    w = rb_weight_of("a (x:99999999999999999999999999999999999999999) b", "x");
    T_CHECK(w == SDX__PROMPT_WEIGHT_MAX, "42-digit weight: %g, expected the clamp %g", w, SDX__PROMPT_WEIGHT_MAX);
    w = rb_weight_of("a (x:-99999999999999999999999999999999999999999) b", "x");
    T_CHECK(w == -SDX__PROMPT_WEIGHT_MAX, "negative 42-digit weight: %g", w);
    w = rb_weight_of("(x:1e40)", "x");
    T_CHECK(isfinite(w), "(x:1e40): %g", w);
    w = rb_weight_of("(x:nan)", "x");
    T_CHECK(isfinite(w), "(x:nan): %g", w);
    w = rb_weight_of("(x:inf)", "x");
    T_CHECK(isfinite(w), "(x:inf): %g", w);
    w = rb_weight_of("((((((((((x:1000))))))))))", "x");
    T_CHECK(w == SDX__PROMPT_WEIGHT_MAX, "nested products clamp: %g", w);
    {   /* a weight written with 1000 digits after the point */
        static char p[1100];
        size_t n = 0;
        n += (size_t)snprintf(p, sizeof p, "(x:0.");
        memset(p + n, '3', 1000); n += 1000;
        snprintf(p + n, sizeof p - n, ")");
        w = rb_weight_of(p, "x");
        T_CHECK(fabs(w - 1.0 / 3.0) < 1e-12, "1000-digit fraction: %.17g", w);
    }
    return T_PASS;
}

static int hostile_prompts_finish_quickly_with_finite_multipliers(void) {
    sdx_ctx *vctx = t_ctx();
    sdx_tokenizer *tok = rb_vocab(vctx);
    size_t n = 100000;
    char *p = (char *)malloc(3 * n + 64);
    double sec, worst = 0;
    int r;
    T_CHECK(p != NULL, "malloc");
    if (!tok) T_NOTE("vocabulary not found under %s: parsing only, no chunking", t_shared_dir());
    /* 100k characters of words, commas, weights and BREAKs */
    for (size_t i = 0; i < n; i++) p[i] = "ab c,d (e:1.3) [f] BREAK g "[i % 27];
    p[n] = 0;
    if ((r = rb_prompt_ok(tok, "100k characters", p, &sec)) != T_PASS) goto done;
    T_NOTE("100k-character prompt: %.3f s", sec);
    worst = sec > worst ? sec : worst;
    /* 10k nested round brackets, then square ones, then both with a weight inside */
    memset(p, '(', 10000); memcpy(p + 10000, "x", 1); memset(p + 10001, ')', 10000); p[20001] = 0;
    if ((r = rb_prompt_ok(tok, "10k nested ()", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    memset(p, '[', 10000); memset(p + 10001, ']', 10000);
    if ((r = rb_prompt_ok(tok, "10k nested []", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    memset(p, '(', 10000); memcpy(p + 10000, "x:1.5)", 6); memset(p + 10006, ')', 9999); p[20005] = 0;
    if ((r = rb_prompt_ok(tok, "10k nested with a weight", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    memset(p, '(', 30000); p[30000] = 0;           /* never closed */
    if ((r = rb_prompt_ok(tok, "30k unclosed (", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    /* invalid UTF-8 of every kind: stray continuations, overlongs, surrogates, truncated */
    for (size_t i = 0; i < n; i++) p[i] = (char)"\x80\xbf\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82 (\xff:1.1) \xc3"[i % 21];
    p[n] = 0;
    if ((r = rb_prompt_ok(tok, "100k bytes of invalid UTF-8", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    /* 100k backslashes and escapes */
    for (size_t i = 0; i < n; i++) p[i] = "\\\\(\\)x\\"[i % 7];
    p[n] = 0;
    if ((r = rb_prompt_ok(tok, "100k escapes", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    /* 100k characters of one word: one BPE word, no spaces */
    memset(p, 'q', n); p[n] = 0;
    if ((r = rb_prompt_ok(tok, "one 100k-letter word", p, &sec)) != T_PASS) goto done;
    worst = sec > worst ? sec : worst;
    T_NOTE("slowest hostile prompt: %.3f s", worst);
    /* generous: a sanitizer build on a loaded 2-core machine; quadratic work would take minutes */
    T_CHECK(worst < 20.0, "a hostile prompt took %.1f s", worst);
    r = T_PASS;
done:
    free(p);
    sdx_tokenizer_free(tok);
    sdx_destroy(vctx);
    return r;
}

/* A tiny merge list, plain and gzip-compressed (gzip -9 -n), so the
 * allocation sweep over vocabulary loading stays fast. */
static const char rb_merges[] = "#version: 0.2\nc a\nca t</w>\nc u\ncu te</w>\np h\nph o\npho to</w>\nt h\nth e</w>\n";
static const unsigned char rb_merges_gz[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x53, 0x2e, 0x4b, 0x2d, 0x2a, 0xce,
    0xcc, 0xcf, 0xb3, 0x52, 0x30, 0xd0, 0x33, 0xe2, 0x4a, 0x56, 0x48, 0xe4, 0x4a, 0x4e, 0x54, 0x28,
    0xb1, 0xd1, 0x2f, 0xb7, 0x03, 0x72, 0x4a, 0xb9, 0x92, 0x4b, 0x15, 0x4a, 0x52, 0xc1, 0xbc, 0x02,
    0x85, 0x0c, 0xae, 0x82, 0x0c, 0x85, 0x7c, 0x20, 0x91, 0xaf, 0x50, 0x92, 0x0f, 0x16, 0x2b, 0x01,
    0x8a, 0x95, 0x64, 0x28, 0x40, 0x14, 0x00, 0x00, 0x8b, 0x43, 0xc2, 0x7a, 0x4a, 0x00, 0x00, 0x00 };

typedef struct rb_prompt_arg { const void *vocab; size_t vocab_len; const sdx_tokenizer *tok; const char *prompt; int min_chunks; } rb_prompt_arg;

/* Loads the vocabulary from memory (unless a tokenizer is given) and
 * chunks the prompt, all under the failing context. */
static int rb_op_prompt(sdx_ctx *ctx, void *varg) {
    const rb_prompt_arg *arg = (const rb_prompt_arg *)varg;
    sdx_tokenizer *own = NULL;
    sdx__chunks c;
    int rc = SDX_OK;
    if (!arg->tok && (rc = sdx_tokenizer_load_memory(ctx, arg->vocab, arg->vocab_len, &own)) != SDX_OK) return rc;
    rc = sdx__prompt_chunks(ctx, arg->tok ? arg->tok : own, arg->prompt, &c);
    if (rc == SDX_OK) {
        rc = c.n >= arg->min_chunks ? SDX_OK : SDX_ERR_FORMAT;
        sdx__chunks_free(ctx, &c);
    }
    sdx_tokenizer_free(own);
    return rc;
}

static int vocabulary_and_prompts_survive_every_allocation_failure(void) {
    static char long_prompt[28 * 6 + 1];    /* six parts, each closed by BREAK: six chunks */
    rb_prompt_arg arg = { rb_merges, sizeof rb_merges - 1, NULL, "a (cute:1.2) cat, [the] \xe7\x8c\xab BREAK photo \\(x\\)", 2 };
    sdx_ctx *vctx;
    long points = 0;
    int r = t_fa_sweep("merge list + prompt", rb_op_prompt, &arg, 1, 2000, &points);
    if (r != T_PASS) return r;
    T_NOTE("merge list from memory + prompt chunks: %ld allocation points", points);
    arg.vocab = rb_merges_gz;
    arg.vocab_len = sizeof rb_merges_gz;
    r = t_fa_sweep("gzip merge list + prompt", rb_op_prompt, &arg, 1, 2000, &points);
    if (r != T_PASS) return r;
    T_NOTE("gzip merge list + prompt chunks: %ld allocation points", points);
    /* the real vocabulary, loaded once; chunks of a prompt that needs several */
    vctx = t_ctx();
    arg.tok = rb_vocab(vctx);
    if (arg.tok) {
        for (size_t i = 0; i + 1 < sizeof long_prompt; i++) long_prompt[i] = "cute (cat:1.1), [dog] BREAK "[i % 28];
        arg.prompt = long_prompt;
        arg.min_chunks = 6;
        r = t_fa_sweep("real vocabulary: prompt chunks", rb_op_prompt, &arg, 1, 2000, &points);
        T_NOTE("real vocabulary, prompt of 6 chunks: %ld allocation points", points);
        sdx_tokenizer_free((sdx_tokenizer *)(uintptr_t)arg.tok);
    }
    sdx_destroy(vctx);
    return r;
}


/* ---- empty compressed members (found by the inflate fuzzer) ------------ */

static int inflate_of_empty_members_is_well_defined(void) {
    /* a gzip member holding nothing, and a raw stored block of length 0 */
    static const uint8_t empty_gzip[20] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t empty_stored[5] = { 0x01, 0x00, 0x00, 0xff, 0xff };
    sdx_ctx *ctx = t_ctx();
    uint8_t *out = NULL;
    size_t len = 99;
    T_CHECK(sdx__inflate(ctx, empty_gzip, sizeof empty_gzip, &out, &len, 1 << 20) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(out && len == 0 && out[0] == 0, "empty gzip gives an empty, NUL-terminated buffer");
    sdx__free(ctx, out);
    out = NULL;
    T_CHECK(sdx__inflate(ctx, empty_stored, sizeof empty_stored, &out, &len, 1 << 20) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(out && len == 0, "empty stored block");
    sdx__free(ctx, out);
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- a whole generation under allocation failure ------------------------ */

/* Loads the tiny SD 1.x model and generates one 64x64 image with two
 * sampler steps, failing the n-th allocation of the load (phase 0), of
 * the generation (phase 1) or of an inpainting from an odd-sized image
 * with a sampled posterior and paste-back (phase 2). Returns the result
 * code; *done tells whether the run made fewer than n allocations (the
 * sweep is complete). */
static int t_gen_under_failure(const char *ckpt, const char *vocab, int phase, long n, int *done, long *live_after) {
    t_failing_alloc fa;
    sdx_ctx *ctx = t_fa_ctx(&fa, 2);
    sdx_model_desc md;
    sdx_model *m = NULL;
    sdx_gen_params p;
    sdx_gen_result res;
    static uint8_t px[69 * 66 * 3], mk[69 * 66];
    sdx_image init = { 69, 66, 3, px }, mask = { 69, 66, 1, mk };
    int rc;
    for (int i = 0; i < 69 * 66; i++) mk[i] = (uint8_t)(i % 69 * 3);
    memset(&md, 0, sizeof md);
    md.checkpoint = ckpt;
    md.vocab = vocab;
    memset(&p, 0, sizeof p);
    p.prompt = "a (red:1.2) fox, BREAK snow";
    p.negative_prompt = "blurry";
    p.width = p.height = 64;
    p.steps = 2;
    p.sampler = "euler_ancestral";
    if (phase == 2) {
        p.width = p.height = 0;
        p.init_image = &init;
        p.mask = &mask;
        p.encode_sample = 1;
        p.paste_back = 1;
    }
    if (phase == 0) t_fa_arm(&fa, n);
    rc = sdx_model_load(ctx, &md, &m);
    if (rc == SDX_OK) {
        if (phase >= 1) t_fa_arm(&fa, n);
        rc = sdx_generate(m, &p, &res);
        if (rc == SDX_OK) sdx_gen_result_free(ctx, &res);
    }
    *done = fa.failed == 0;
    if (rc != SDX_OK && !strstr(sdx_last_error(ctx), "out of memory")) rc = -1000;   /* wrong message */
    sdx_model_free(m);
    sdx_destroy(ctx);
    *live_after = fa.live;
    t_fa_done(&fa);
    return rc;
}

static int generation_survives_every_allocation_failure(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(vocab, "vocab/merges.txt");
    static const char *const phases[] = { "load", "generate", "inpaint" };
    for (int phase = 0; phase < 3; phase++) {
        long n;
        for (n = 1; n < 20000; n++) {
            int done;
            long live;
            int rc = t_gen_under_failure(ckpt, vocab, phase, n, &done, &live);
            T_CHECK(live == 0, "%s: failing allocation %ld left %ld blocks allocated", phases[phase], n, live);
            if (done) { T_CHECK(rc == SDX_OK, "run without failure: %d", rc); break; }
            T_CHECK(rc == SDX_ERR_NOMEM || rc == SDX_OK, "%s: failing allocation %ld gave %d (expected SDX_ERR_NOMEM with an "
                    "out-of-memory message)", phases[phase], n, rc);
        }
        T_NOTE("%s: %ld allocation points, each failing cleanly", phases[phase], n - 1);
    }
    return T_PASS;
}

/* Loading a ControlNet and a controlled generation (two nets, one step),
 * failing the n-th allocation after the model is loaded. */
static int t_control_under_failure(const char *ckpt, const char *vocab, const char *cn_path, long n, int *done, long *live_after) {
    t_failing_alloc fa;
    sdx_ctx *ctx = t_fa_ctx(&fa, 2);
    sdx_model_desc md;
    sdx_model *m = NULL;
    sdx_controlnet *cn = NULL;
    sdx_gen_params p;
    sdx_gen_result res;
    sdx_control c[2];
    uint8_t px[24 * 16 * 3];
    sdx_image hint = { 24, 16, 3, px };
    int rc;
    for (int i = 0; i < (int)sizeof px; i++) px[i] = (uint8_t)(i * 7);
    memset(&md, 0, sizeof md);
    md.checkpoint = ckpt;
    md.vocab = vocab;
    memset(&p, 0, sizeof p);
    p.prompt = "a fox";
    p.width = p.height = 64;
    p.steps = 1;
    p.sampler = "heun";
    rc = sdx_model_load(ctx, &md, &m);
    if (rc == SDX_OK) {
        t_fa_arm(&fa, n);
        rc = sdx_controlnet_load(m, cn_path, &cn);
    }
    if (rc == SDX_OK) {
        memset(c, 0, sizeof c);
        c[0].net = c[1].net = cn;
        c[0].image = c[1].image = &hint;
        c[0].strength = 1.0f;
        c[1].strength = 0.5f;
        c[1].end = 0.5f;
        p.controls = c;
        p.n_controls = 2;
        rc = sdx_generate(m, &p, &res);
        if (rc == SDX_OK) sdx_gen_result_free(ctx, &res);
    }
    *done = fa.failed == 0;
    if (rc != SDX_OK && !strstr(sdx_last_error(ctx), "out of memory")) rc = -1000;   /* wrong message */
    sdx_controlnet_free(cn);
    sdx_model_free(m);
    sdx_destroy(ctx);
    *live_after = fa.live;
    t_fa_done(&fa);
    return rc;
}

static int controlnet_generation_survives_every_allocation_failure(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(vocab, "vocab/merges.txt");
    T_NEED_SHARED(cn, "golden/controlnet/controlnet.safetensors");
    long n;
    for (n = 1; n < 20000; n++) {
        int done;
        long live;
        int rc = t_control_under_failure(ckpt, vocab, cn, n, &done, &live);
        T_CHECK(live == 0, "failing allocation %ld left %ld blocks allocated", n, live);
        if (done) { T_CHECK(rc == SDX_OK, "run without failure: %d", rc); break; }
        T_CHECK(rc == SDX_ERR_NOMEM || rc == SDX_OK, "failing allocation %ld gave %d (expected SDX_ERR_NOMEM with an "
                "out-of-memory message)", n, rc);
    }
    T_NOTE("ControlNet load + controlled generation: %ld allocation points, each failing cleanly", n - 1);
    return T_PASS;
}

static const t_case robust_cases[] = {
    { "hostile_files_on_disk_are_rejected_with_a_reason", hostile_files_on_disk_are_rejected_with_a_reason },
    { "deeply_nested_header_on_disk_is_rejected", deeply_nested_header_on_disk_is_rejected },
    { "valid_file_truncated_anywhere_is_rejected", valid_file_truncated_anywhere_is_rejected },
    { "empty_files_directories_and_devices_are_not_checkpoints", empty_files_directories_and_devices_are_not_checkpoints },
    { "named_pipe_is_rejected_without_blocking", named_pipe_is_rejected_without_blocking },
    { "checkpoint_loading_survives_every_allocation_failure", checkpoint_loading_survives_every_allocation_failure },
    { "memory_images_survive_every_allocation_failure", memory_images_survive_every_allocation_failure },
    { "writing_survives_every_allocation_failure", writing_survives_every_allocation_failure },
    { "json_parse_survives_every_allocation_failure", json_parse_survives_every_allocation_failure },
    { "json_file_parse_survives_every_allocation_failure", json_file_parse_survives_every_allocation_failure },
    { "absurd_prompt_weights_stay_finite_and_clamped", absurd_prompt_weights_stay_finite_and_clamped },
    { "hostile_prompts_finish_quickly_with_finite_multipliers", hostile_prompts_finish_quickly_with_finite_multipliers },
    { "vocabulary_and_prompts_survive_every_allocation_failure", vocabulary_and_prompts_survive_every_allocation_failure },
    { "inflate_of_empty_members_is_well_defined", inflate_of_empty_members_is_well_defined },
    { "generation_survives_every_allocation_failure", generation_survives_every_allocation_failure },
    { "controlnet_generation_survives_every_allocation_failure", controlnet_generation_survives_every_allocation_failure },
    { 0, 0 }
};
SDX_TEST_SUITE(robust, robust_cases)
