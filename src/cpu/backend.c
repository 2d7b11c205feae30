#pragma once
#include "conv.c"
#include "elementwise.c"
#include "norm.c"
#include "attention.c"

/* ===================================================================== */
/*  The CPU backend: host memory, the kernels above                       */
/* ===================================================================== */

static void *sdx__cpu_alloc(void *user, size_t bytes) { (void)user; return SDX_MALLOC(bytes); }
static void  sdx__cpu_free(void *user, void *ptr) { (void)user; SDX_FREE(ptr); }
static int sdx__cpu_move(void *user, void *dst, const void *src, size_t bytes) {
    (void)user;
    if (bytes) memcpy(dst, src, bytes);
    return SDX_OK;
}

static sdx_backend sdx__cpu_backend(void) {
    sdx_backend b;
    memset(&b, 0, sizeof b);
    b.name = "cpu";
    b.host_memory = 1;
    b.alloc = sdx__cpu_alloc;
    b.free = sdx__cpu_free;
    b.upload = sdx__cpu_move;
    b.download = sdx__cpu_move;
#define SDX__CPU_OP(name, required, params, args, operands) b.name = sdx__cpu_##name;
    SDX_BACKEND_OPS(SDX__CPU_OP)
#undef SDX__CPU_OP
    return b;
}
