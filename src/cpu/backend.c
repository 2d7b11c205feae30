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
    b.linear = sdx__cpu_linear;
    b.conv2d = sdx__cpu_conv2d_pad;
    b.group_norm = sdx__cpu_group_norm;
    b.layer_norm = sdx__cpu_layer_norm;
    b.softmax = sdx__cpu_softmax;
    b.attention = sdx__cpu_attention;
    b.silu = sdx__cpu_silu;
    b.gelu = sdx__cpu_gelu;
    b.quick_gelu = sdx__cpu_quick_gelu;
    b.geglu = sdx__cpu_geglu;
    b.scale = sdx__cpu_scale;
    b.copy = sdx__cpu_copy;
    b.add = sdx__cpu_add;
    b.mul = sdx__cpu_mul;
    b.add_channel_bias = sdx__cpu_add_channel_bias;
    b.resize_nearest = sdx__cpu_resize_nearest;
    b.pad_circular = sdx__cpu_pad_circular;
    b.concat_channels = sdx__cpu_concat_channels;
    b.nchw_to_nlc = sdx__cpu_nchw_to_nlc;
    b.nlc_to_nchw = sdx__cpu_nlc_to_nchw;
    b.clamp = sdx__cpu_clamp;
    b.tanh_clamp = sdx__cpu_tanh_clamp;
    return b;
}
