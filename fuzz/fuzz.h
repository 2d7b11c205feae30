/* Shared by the libFuzzer harnesses in fuzz/: compiles the engine into the
 * harness (so static internals are callable) and provides a quiet,
 * single-threaded context per input. Build and run with fuzz/run.sh. */
#ifndef SDX_FUZZ_H
#define SDX_FUZZ_H

#define SDX_IMPLEMENTATION
#ifdef SDX_FUZZ_HEADER          /* a partial amalgamation, see fuzz/run.sh */
#include SDX_FUZZ_HEADER
#else
#include "../sdx.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define FZ_UNUSED __attribute__((unused))
#else
#define FZ_UNUSED
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One worker: no thread pool, so every finding has one stack. */
FZ_UNUSED static sdx_ctx *fz_ctx(void) {
    sdx_desc d;
    memset(&d, 0, sizeof d);
    d.n_threads = 1;
    return sdx_create(&d);
}

/* A failing call must say why: an empty message is a bug too. */
FZ_UNUSED static void fz_require_message(sdx_ctx *ctx, int rc, const char *what) {
    if (rc != SDX_OK && !sdx_last_error(ctx)[0]) {
        fprintf(stderr, "%s failed with %d (%s) but left no message\n", what, rc, sdx_result_name(rc));
        abort();
    }
}

#define FZ_ASSERT(cond, ...) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: invariant violated: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

/* Reads every byte so ASan sees any out-of-bounds span. */
FZ_UNUSED static unsigned fz_touch(const void *p, size_t n) {
    const volatile unsigned char *b = (const volatile unsigned char *)p;
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++) sum += b[i];
    return sum;
}

#ifdef FZ_NEED_VOCAB
/* The real CLIP vocabulary, loaded once per process from
 * $SDX_SHARED/vocab/merges.txt (default ../shared, relative to the
 * repository root where fuzz/run.sh runs). NULL, with a message printed
 * once, when it is absent. The context lives as long as the process. */
FZ_UNUSED static const sdx_tokenizer *fz_vocab(void) {
    static sdx_ctx *ctx;
    static sdx_tokenizer *tok;
    static int tried;
    if (!tried) {
        const char *dir = getenv("SDX_SHARED");
        char path[1024];
        tried = 1;
        snprintf(path, sizeof path, "%s/vocab/merges.txt", dir && *dir ? dir : "../shared");
        ctx = fz_ctx();
        if (ctx && sdx_tokenizer_load(ctx, path, &tok) != SDX_OK) {
            fprintf(stderr, "fuzz: vocabulary not loaded (%s): %s\n", path, sdx_last_error(ctx));
            tok = NULL;
        }
    }
    return tok;
}

/* Loading the vocabulary takes seconds under the sanitizers and coverage:
 * it happens here, before the first input, so it never counts against
 * libFuzzer's per-input -timeout (a slow CI machine hit it on input 1). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    (void)fz_vocab();
    return 0;
}
#endif

/* The input as a NUL-terminated string (bytes after an embedded NUL are
 * ignored by the string APIs, as they would be for a C caller). */
FZ_UNUSED static char *fz_cstr(const uint8_t *data, size_t size) {
    char *s = (char *)malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

#endif
