/* Suite "core": context, tensors, arena, thread pool, tracer, path names. */
#include "test.h"

static int arena_release_returns_to_the_mark_and_reuses_memory(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__arena a;
    sdx__mark m;
    void *p1, *p2, *p3;
    sdx__arena_init(&a, ctx, 4096);
    p1 = sdx__arena_alloc(&a, 100);
    m = sdx__arena_mark(&a);
    p2 = sdx__arena_alloc(&a, 3000);
    (void)sdx__arena_alloc(&a, 10000);        /* forces a second block */
    T_CHECK(p1 && p2 && ((uintptr_t)p1 & 63) == 0 && ((uintptr_t)p2 & 63) == 0, "aligned allocations");
    sdx__arena_release(&a, m);
    p3 = sdx__arena_alloc(&a, 3000);
    T_CHECK(p3 == p2, "memory after the mark is reused");
    T_CHECK(a.peak >= 13000 && a.in_use < 4000, "accounting: peak %zu in use %zu", a.peak, a.in_use);
    {
        size_t reserved;
        sdx__arena_reset(&a);                  /* everything released: one block */
        reserved = a.reserved;
        (void)sdx__arena_alloc(&a, 100);
        (void)sdx__arena_alloc(&a, 3000);
        (void)sdx__arena_alloc(&a, 10000);
        T_CHECK(a.reserved == reserved, "a repeated pass allocates no new blocks");
    }
    sdx__arena_free(&a);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A mark taken with nothing in use outlives the blocks a release inside
 * it consolidates (ASan: `make sanitize`). */
static int arena_marks_with_nothing_in_use_outlive_consolidation(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__arena a;
    sdx__mark outer, inner;
    sdx__arena_init(&a, ctx, 4096);
    (void)sdx__arena_alloc(&a, 100);
    sdx__arena_reset(&a);                      /* one block, nothing in use */
    outer = sdx__arena_mark(&a);
    inner = sdx__arena_mark(&a);
    (void)sdx__arena_alloc(&a, 3000);
    (void)sdx__arena_alloc(&a, 10000);         /* a second block */
    sdx__arena_release(&a, inner);             /* consolidated: the outer mark's block is gone */
    sdx__arena_release(&a, outer);
    T_CHECK(a.in_use == 0 && a.cur == a.head && a.head && !a.head->next && a.head->size >= 13000, "after both releases");
    T_CHECK(sdx__arena_alloc(&a, 13000) != NULL && a.reserved == a.head->size, "the pass again, in the one block");
    sdx__arena_free(&a);
    sdx_destroy(ctx);
    return T_PASS;
}

static int arena_becomes_one_peak_sized_block_after_a_pass(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__arena a;
    sdx__mark m;
    size_t reserved;
    sdx__arena_init(&a, ctx, 4096);
    /* a pass that grows three blocks, with a nested mark/release */
    m = sdx__arena_mark(&a);
    (void)sdx__arena_alloc(&a, 3000);
    {
        sdx__mark inner = sdx__arena_mark(&a);
        (void)sdx__arena_alloc(&a, 10000);
        sdx__arena_release(&a, inner);
    }
    (void)sdx__arena_alloc(&a, 20000);
    (void)sdx__arena_alloc(&a, 9000);
    T_CHECK(a.head && a.head->next, "the first pass used several blocks");
    sdx__arena_release(&a, m);
    T_CHECK(a.head && !a.head->next && a.reserved >= a.peak && a.reserved < a.peak + 4096,
            "after the pass: one block of the peak (%zu reserved, %zu peak)", a.reserved, a.peak);
    reserved = a.reserved;
    for (int pass = 0; pass < 3; pass++) {
        m = sdx__arena_mark(&a);
        (void)sdx__arena_alloc(&a, 3000);
        {
            sdx__mark inner = sdx__arena_mark(&a);
            (void)sdx__arena_alloc(&a, 10000);
            sdx__arena_release(&a, inner);
        }
        T_CHECK(sdx__arena_alloc(&a, 20000) && sdx__arena_alloc(&a, 9000), "allocations");
        T_CHECK(a.reserved == reserved && !a.head->next, "pass %d allocated (%zu -> %zu bytes)", pass, reserved, a.reserved);
        sdx__arena_release(&a, m);
    }
    sdx__arena_free(&a);
    sdx_destroy(ctx);
    return T_PASS;
}

static int arena_rejects_sizes_that_would_wrap_when_aligned(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__arena a;
    sdx__arena_init(&a, ctx, 4096);
    /* rounding SIZE_MAX up to 64 bytes wraps to 0; that must not become
     * a 64-byte allocation the caller then writes SIZE_MAX bytes into */
    T_CHECK(sdx__arena_alloc(&a, SIZE_MAX) == NULL, "SIZE_MAX bytes were 'allocated'");
    T_CHECK(strstr(sdx_last_error(ctx), "out of memory") != NULL, "message: %s", sdx_last_error(ctx));
    T_CHECK(sdx__arena_alloc(&a, SIZE_MAX - 40) == NULL, "SIZE_MAX - 40 bytes were 'allocated'");
    T_CHECK(a.in_use == 0 && a.reserved == 0, "a failed request changed the accounting");
    T_CHECK(sdx__arena_alloc(&a, 100) != NULL, "the arena still works afterwards");
    sdx__arena_free(&a);
    sdx_destroy(ctx);
    return T_PASS;
}

typedef struct { int64_t *hits; } t_pf_arg;
static void t_pf_body(void *varg, int64_t b, int64_t e, int thread) {
    t_pf_arg *arg = (t_pf_arg *)varg;
    (void)thread;
    for (int64_t i = b; i < e; i++) arg->hits[i]++;
}

static int parallel_for_covers_every_index_once(void) {
    sdx_desc d;
    sdx_ctx *ctx;
    int64_t hits[1000];
    t_pf_arg arg = { hits };
    memset(&d, 0, sizeof d);
    d.n_threads = 4;
    ctx = sdx_create(&d);
    for (int rep = 0; rep < 50; rep++) {
        memset(hits, 0, sizeof hits);
        sdx__parallel_for(ctx, 1000 - rep, t_pf_body, &arg);
        for (int i = 0; i < 1000; i++) T_CHECK(hits[i] == (i < 1000 - rep), "index %d hit %lld times", i, (long long)hits[i]);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int tracer_names_op_part_layer_and_counts(void) {
    sdx_ctx *ctx = t_ctx();
    float v[4] = { 1, NAN, INFINITY, -2 };
    sdx_tensor t = sdx__view4(SDX_F32, v, 1, 1, 2, 2);
    T_CHECK(sdx__trace_check(ctx, "conv2d", &t) == SDX_OK, "tracing is off by default");
    sdx_set_trace(ctx, 1);
    sdx__trace_at(ctx, SDX__PART_VAE, "decoder.up.%d.block.%d", 3, 1);
    T_CHECK(sdx__trace_check(ctx, "conv2d", &t) == SDX_ERR_NONFINITE, "non-finite detected");
    T_CHECK(strstr(sdx_last_error(ctx), "conv2d in vae at decoder.up.3.block.1") &&
            strstr(sdx_last_error(ctx), "1 NaN, 1 Inf of 4") && strstr(sdx_last_error(ctx), "min -2 max 1"),
            "message: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

static int f16_activation_store_saturates_instead_of_overflowing(void) {
    float in[3] = { 1e6f, -70000.0f, 1.0f }, out[3];
    uint16_t h[3];
    sdx__store_f32(h, SDX_F16, 0, 3, in);
    sdx__load_f32(h, SDX_F16, 0, 3, out);
    T_CHECK(out[0] == 65504.0f && out[1] == -65504.0f && out[2] == 1.0f, "got %g %g %g", out[0], out[1], out[2]);
    return T_PASS;
}

static void *t_hook_alloc(size_t n, void *user) { (void)user; return malloc(n); }
static char t_hook_msg[256];
static void t_hook_log(sdx_log_level level, const char *msg, void *user) {
    (void)level; (void)user;
    snprintf(t_hook_msg, sizeof t_hook_msg, "%s", msg);
}

static int allocator_hooks_are_all_or_none(void) {
    sdx_desc d;
    memset(&d, 0, sizeof d);
    d.alloc = t_hook_alloc;        /* realloc and free missing */
    d.log = t_hook_log;
    t_hook_msg[0] = 0;
    T_CHECK(sdx_create(&d) == NULL, "a partial set of hooks was accepted");
    T_CHECK(strstr(t_hook_msg, "all three allocator hooks"), "message: '%s'", t_hook_msg);
    return T_PASS;
}

/* A thread count past SDX_MAX_THREADS (a typo such as -t 100000) runs
 * SDX_MAX_THREADS workers, with a warning, instead of starting them all. */
static int thread_counts_past_the_maximum_are_clamped(void) {
    sdx_desc d;
    sdx_ctx *ctx;
    memset(&d, 0, sizeof d);
    d.n_threads = 100000;
    d.log = t_hook_log;
    t_hook_msg[0] = 0;
    ctx = sdx_create(&d);
    T_CHECK(ctx, "sdx_create failed");
    T_CHECK(sdx_threads(ctx) == SDX_MAX_THREADS, "%d threads", sdx_threads(ctx));
    T_CHECK(strstr(t_hook_msg, "SDX_MAX_THREADS"), "message: '%s'", t_hook_msg);
    sdx_destroy(ctx);
    d.n_threads = 3;
    ctx = sdx_create(&d);
    T_CHECK(ctx && sdx_threads(ctx) == 3, "3 threads asked for");
    sdx_destroy(ctx);
    return T_PASS;
}

/* Model, ControlNet and LoRA names: the file name without folder or
 * extension, whichever separator the path was written with. */
static int path_stem_drops_folders_of_either_separator_and_the_extension(void) {
    static const char *const cases[][2] = {
        { "C:\\models\\dream.v1.safetensors", "dream.v1" },
        { "models/sd.1.5/dream.safetensors", "dream" },
        { "../loras\\mixed/style.ckpt", "style" },
        { "plain", "plain" },
        { "dir.d/noext", "noext" },
        { "/models/.hidden", ".hidden" },
        { "C:\\models\\", "" },
    };
    char out[64], small[5];
    for (int i = 0; i < SDX__ARRAY_LEN(cases); i++) {
        sdx__path_stem(cases[i][0], out, sizeof out);
        T_CHECK(!strcmp(out, cases[i][1]), "'%s' gave '%s', not '%s'", cases[i][0], out, cases[i][1]);
    }
    sdx__path_stem("C:\\models\\dream.v1.safetensors", small, sizeof small);
    T_CHECK(!strcmp(small, "drea"), "a short buffer gets the name cut: '%s'", small);
    return T_PASS;
}

static const t_case core_cases[] = {
    { "path_stem_drops_folders_of_either_separator_and_the_extension", path_stem_drops_folders_of_either_separator_and_the_extension },
    { "allocator_hooks_are_all_or_none", allocator_hooks_are_all_or_none },
    { "thread_counts_past_the_maximum_are_clamped", thread_counts_past_the_maximum_are_clamped },
    { "arena_release_returns_to_the_mark_and_reuses_memory", arena_release_returns_to_the_mark_and_reuses_memory },
    { "arena_becomes_one_peak_sized_block_after_a_pass", arena_becomes_one_peak_sized_block_after_a_pass },
    { "arena_marks_with_nothing_in_use_outlive_consolidation", arena_marks_with_nothing_in_use_outlive_consolidation },
    { "arena_rejects_sizes_that_would_wrap_when_aligned", arena_rejects_sizes_that_would_wrap_when_aligned },
    { "parallel_for_covers_every_index_once", parallel_for_covers_every_index_once },
    { "tracer_names_op_part_layer_and_counts", tracer_names_op_part_layer_and_counts },
    { "f16_activation_store_saturates_instead_of_overflowing", f16_activation_store_saturates_instead_of_overflowing },
    { 0, 0 }
};
SDX_TEST_SUITE(core, core_cases)
