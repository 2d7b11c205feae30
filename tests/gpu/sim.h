/* tests/gpu/sim.h - runs sdx_hip.h's kernels on the CPU, so the GPU
 * backend's kernel logic is tested on machines without a GPU (make
 * test-gpu-sim). Included (g++ -include) before sdx_hip.h in a C++
 * translation unit built with -DSDX_HIP_SIM; it supplies the subset of the
 * CUDA runtime and device language that sdx_hip.h uses.
 *
 * The model: one block at a time, each GPU thread a fiber on one OS
 * thread, switched only at barriers, so a run is deterministic. A fiber
 * is started once (makecontext) and then serves block after block: at
 * its body's end it parks, and the next block resumes it there. Switches
 * are GCC's __builtin_setjmp/__builtin_longjmp (stack and frame pointers
 * and a label; no signal-mask system call, no unwinding; GCC makes a
 * function that calls __builtin_setjmp save every callee-saved register,
 * so each side's epilogue restores its own), else _setjmp/_longjmp
 * (the simulator built by clang crashed with clang's builtins): build
 * with -U_FORTIFY_SOURCE.
 *   - __shared__ is a function-local static (one block runs at a time);
 *     dynamic shared memory is one buffer, at most 48 KiB unless the
 *     kernel was granted more with hipFuncSetAttribute, as on the GPU.
 *   - __syncthreads waits for every live thread of the block, __syncwarp
 *     and the shuffles for every live lane of the warp. Threads that
 *     wait at barriers nobody else can reach (a divergent barrier) are a
 *     deadlock: the launch fails with an error instead of hanging.
 *   - The PTX instructions ldmatrix .x4 (.trans too) and mma.sync
 *     m16n8k16 are modelled with the fragment layouts the PTX ISA
 *     documents (sdx_sim_ldmatrix_x4, sdx_sim_mma_m16n8k16), exchanging
 *     rows and fragments through the warp: a wrong lane or register index
 *     in a kernel gives wrong results here too.
 *   - A fiber runs until it blocks, so a thread that reads shared memory
 *     another thread writes, without a barrier between them, reads stale
 *     values: missing barriers show up as wrong results.
 *   - cp.async copies (sdx_sim_cp_async) are queued per thread and land
 *     at the wait that covers their group: reading before waiting reads
 *     the old contents. 16-byte accesses must be 16-byte aligned.
 *   - Hopper's wgmma.mma_async (m64nNk16, operands in shared memory by
 *     descriptor, K-major, or B MN-major (transposed), in core matrices
 *     or the 128-byte swizzle; or A from registers) likewise: each
 *     thread's part is computed at the wgmma.wait_group that covers it,
 *     reading shared memory then (A's registers are read at the issue,
 *     through the warp), so reading the accumulators or rewriting the
 *     operands early fails.
 *   - mbarriers and the TMA's box copies (sdx_sim_mbar_*, sdx_sim_tma_load):
 *     a box is read from global memory when it is issued, its destination
 *     filled with garbage then, and it lands (its bytes counted on its
 *     barrier) only when a thread waits for that barrier: reading a stage
 *     before waiting for it, or reloading a stage its readers still use,
 *     gives wrong results (a plain arrival lets every other thread run
 *     before the arriving one goes on, so a stage let go too early is
 *     reloaded before its reader is done). A thread waiting for a phase that can never
 *     complete is a deadlock, as at the other barriers.
 *   - Graphs: between hipStreamBeginCapture and hipStreamEndCapture
 *     launches and asynchronous copies are recorded, not run (a copy
 *     reads its source when the graph runs, as from pinned memory);
 *     hipGraphLaunch runs them in order. A synchronous copy, hipFree or a
 *     stream synchronisation while capturing fails, as CUDA refuses them.
 * Device memory is host memory (AddressSanitizer sees kernel accesses).
 * Not modelled: timing, occupancy, static shared memory limits, memory
 * ordering beyond barriers, warps of other sizes than 32. */
#ifndef SDX_HIP_SIM_H
#define SDX_HIP_SIM_H
#ifndef __cplusplus
#error "tests/gpu/sim.h is C++"
#endif
#include <ucontext.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <functional>
#include <new>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

/* ---- the machine ---------------------------------------------------------- */

namespace sdx_sim {

enum { RUNNING, AT_BLOCK, AT_WARP, AT_MBAR, DONE };
enum { MAX_THREADS = 1024, MAX_WARPS = MAX_THREADS / 32, STACK = 256 * 1024, SMEM_DEFAULT = 48 * 1024,
       SMEM_MAX = 227 * 1024, MAX_GRANTS = 64, MAX_MBARS = 64 };

/* Where a fiber (or the scheduler) goes on, how it is saved and how it
 * is gone back to: GCC's builtins (five words), or a jmp_buf. */
#if defined(__GNUC__) && !defined(__clang__)
typedef void *switch_buf[5];
#define SDX_SIM_SAVE(jb) __builtin_setjmp(jb)
#define SDX_SIM_BACK(jb) __builtin_longjmp(jb, 1)
#else
typedef jmp_buf switch_buf;
#define SDX_SIM_SAVE(jb) _setjmp(jb)
#define SDX_SIM_BACK(jb) _longjmp(jb, 1)
#endif

/* Goes on at jb's save, which returns nonzero there. Not inlined: GCC
 * refuses __builtin_longjmp in a function that calls __builtin_setjmp. */
__attribute__((noinline, noreturn)) static void jump(switch_buf jb) { SDX_SIM_BACK(jb); }

struct fiber {
    switch_buf jb;
    ucontext_t uc;          /* the first entry only */
    dim3 tid;
    int state, started, lane, warp;
    unsigned xchg;          /* warp exchanges this lane has made: picks the buffer */
    int n_copies, groups;   /* asynchronous copies not yet performed; groups committed */
    struct { void *dst; const void *src; int bytes, valid, group; } copy[256];
    int n_wg, wg_groups;    /* warpgroup products not yet performed; groups committed */
    /* a: A's descriptor, or (regs) A's rows 16 w + g and + 8 from the
     * warp's registers at the issue; tnsp: B is MN-major */
    struct wg_op { float *d; uint64_t a, b; int n, bf16, group, regs, tnsp; float a_rows[2][16]; } wg[16];
    uint32_t mbar;          /* AT_MBAR: the barrier (shared-memory offset) ... */
    int mbar_parity;        /* ... and the parity of the phase waited for */
};

/* An mbarrier (by its offset in shared memory): arrivals still to come in
 * this phase, bytes announced and not landed, phases completed. */
struct mbar {
    uint32_t at;
    int count, pending, tx, phase;
};

/* A TMA box read and waiting to land on its barrier. */
struct landing {
    uint32_t bar;
    unsigned char *dst;
    std::vector<unsigned char> bytes;
};

struct machine {
    dim3 grid, block, bid;
    fiber th[MAX_THREADS];
    int n, cur;
    char *stacks;
    switch_buf main_jb;
    std::function<void()> body;
    alignas(128) unsigned char dyn[SMEM_MAX];
    /* warp exchanges, double-buffered so one barrier per exchange
     * suffices: shuffles (8 bytes a lane), ldmatrix rows and mma operands */
    uint64_t shfl[MAX_WARPS][2][32];
    float mma[MAX_WARPS][2][3][256];
    const void *granted_kernel[MAX_GRANTS];
    int granted_bytes[MAX_GRANTS], n_granted;
    int error;              /* sticky, as a kernel fault is on the GPU */
    char why[256];
    size_t allocated;
    int capturing;          /* a stream capture is on: work goes to `captured` */
    std::vector<std::function<void()>> captured;
    long graph_launches;    /* graphs run (tests read it) */
    mbar bars[MAX_MBARS];   /* this block's mbarriers */
    int n_bars;
    std::vector<landing> landings;
};

static inline machine &M() {
    static machine *m;
    if (!m) {
        m = (machine *)calloc(1, sizeof *m);
        if (!m) abort();
        new (&m->body) std::function<void()>();
        new (&m->captured) std::vector<std::function<void()>>();
        new (&m->landings) std::vector<landing>();
    }
    return *m;
}

static inline fiber &self() { return M().th[M().cur]; }

/* the switches are not inlined: nothing of their callers' lives across
 * a save */
__attribute__((noinline)) static void wait(int kind) {
    M().th[M().cur].state = kind;
    if (!SDX_SIM_SAVE(M().th[M().cur].jb)) jump(M().main_jb);
}

/* A fiber's life: the body of each block it is resumed for, parked as
 * DONE in between. */
static void entry() {
    for (;;) {
        M().body();
        wait(DONE);
    }
}

__attribute__((noinline)) static void resume(int t) {
    M().cur = t;
    if (SDX_SIM_SAVE(M().main_jb)) return;
    if (M().th[t].started) jump(M().th[t].jb);
    M().th[t].started = 1;
    setcontext(&M().th[t].uc);
}

static inline void fail(const char *why) {
    machine &m = M();
    if (!m.error) snprintf(m.why, sizeof m.why, "%s", why);
    m.error = 1;
}

/* Releases the barriers every live waiter has reached; 0 when nothing can
 * move (a deadlock, unless every thread is done). */
static int mbar_passed(uint32_t at, int parity);

/* Lets run the threads whose mbarrier wait is over: those waiting for the
 * barrier at *only, or for any when only is NULL. 1 when one moved. */
static inline int mbar_wake(const uint32_t *only) {
    machine &m = M();
    int moved = 0;
    for (int t = 0; t < m.n; t++)
        if (m.th[t].state == AT_MBAR && (!only || m.th[t].mbar == *only) && mbar_passed(m.th[t].mbar, m.th[t].mbar_parity)) {
            m.th[t].state = RUNNING;
            moved = 1;
        }
    return moved;
}

/* The 128-byte swizzle's address of shared-memory byte `at` (atoms of 8
 * rows of 128 bytes from 1024-byte boundaries): bits 4-6 XORed with bits
 * 7-9, as wgmma reads and the TMA writes. */
static inline uint32_t swizzle128(uint32_t at) { return at ^ (at >> 7 & 7) << 4; }

static inline int release() {
    machine &m = M();
    int moved = 0, live = 0, at_block = 0;
    if (mbar_wake(NULL)) return 1;
    for (int w = 0; w * 32 < m.n; w++) {
        int lanes = 0, waiting = 0;
        for (int t = w * 32; t < m.n && t < w * 32 + 32; t++) {
            if (m.th[t].state == DONE) continue;
            lanes++;
            waiting += m.th[t].state == AT_WARP;
        }
        if (lanes && waiting == lanes) {
            for (int t = w * 32; t < m.n && t < w * 32 + 32; t++)
                if (m.th[t].state == AT_WARP) m.th[t].state = RUNNING;
            moved = 1;
        }
    }
    if (moved) return 1;
    for (int t = 0; t < m.n; t++) {
        if (m.th[t].state == DONE) continue;
        live++;
        at_block += m.th[t].state == AT_BLOCK;
    }
    if (live && at_block == live) {
        for (int t = 0; t < m.n; t++)
            if (m.th[t].state == AT_BLOCK) m.th[t].state = RUNNING;
        return 1;
    }
    return 0;
}

__attribute__((noinline)) static void prepare(int t) {
    fiber &f = M().th[t];
    getcontext(&f.uc);
    /* stack tops 576 bytes apart modulo 64 KiB, so that the fibers' hot
     * frames do not all share cache sets (at STACK's stride they would) */
    f.uc.uc_stack.ss_sp = M().stacks + (size_t)t * STACK;
    f.uc.uc_stack.ss_size = STACK - (size_t)t * 576 % 65536;
    f.uc.uc_link = NULL;        /* entry() never returns */
    makecontext(&f.uc, entry, 0);
}

static inline int run_block() {
    machine &m = M();
    m.n_bars = 0;
    m.landings.clear();
    for (int t = 0; t < m.n; t++) {
        fiber &f = m.th[t];
        f.tid = dim3((unsigned)t % m.block.x, (unsigned)t / m.block.x % m.block.y, (unsigned)t / (m.block.x * m.block.y));
        f.state = RUNNING;
        f.xchg = 0;
        f.n_copies = f.groups = 0;
        f.n_wg = f.wg_groups = 0;
        f.lane = t % 32;
        f.warp = t / 32;
        if (!f.started) prepare(t);     /* else parked at its last body's end */
    }
    for (;;) {
        int ran = 0;
        for (int t = 0; t < m.n; t++) {
            if (m.th[t].state != RUNNING) continue;
            resume(t);
            ran = 1;
        }
        if (ran) continue;
        if (!release()) break;
    }
    for (int t = 0; t < m.n; t++)
        if (m.th[t].state != DONE) {
            char why[200];
            for (int u = 0; u < MAX_THREADS; u++) m.th[u].started = 0;    /* stuck mid-body: each starts afresh */
            snprintf(why, sizeof why, "deadlock in block (%u,%u,%u): thread %d waits at a%s barrier no other thread reaches",
                     m.bid.x, m.bid.y, m.bid.z, t, m.th[t].state == AT_BLOCK ? " block" : m.th[t].state == AT_WARP ? " warp" : "n mbarrier's");
            fail(why);
            return 0;
        }
    return 1;
}

static inline int granted(const void *kernel) {
    machine &m = M();
    for (int i = 0; i < m.n_granted; i++)
        if (m.granted_kernel[i] == kernel) return m.granted_bytes[i];
    return SMEM_DEFAULT;
}

static inline void launch(const void *kernel, dim3 grid, dim3 block, size_t smem, std::function<void()> body) {
    machine &m = M();
    char why[200];
    unsigned n = block.x * block.y * block.z;
    if (m.error) return;
    if (m.capturing) {
        m.captured.push_back([=] { launch(kernel, grid, block, smem, body); });
        return;
    }
    if (n == 0 || n > MAX_THREADS || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535) {
        snprintf(why, sizeof why, "invalid launch: grid (%u,%u,%u), block (%u,%u,%u)", grid.x, grid.y, grid.z, block.x, block.y, block.z);
        fail(why);
        return;
    }
    if (smem > (size_t)granted(kernel)) {
        snprintf(why, sizeof why, "invalid launch: %zu bytes of dynamic shared memory, %d allowed for this kernel", smem, granted(kernel));
        fail(why);
        return;
    }
    if (!m.stacks && !(m.stacks = (char *)malloc((size_t)MAX_THREADS * STACK))) abort();
    m.grid = grid;
    m.block = block;
    m.n = (int)n;
    m.body = std::move(body);
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                m.bid = dim3(x, y, z);
                memset(m.dyn, 0xa5, smem);      /* shared memory starts as garbage */
                if (!run_block()) return;
            }
}

}  /* namespace sdx_sim */

#define threadIdx (sdx_sim::self().tid)
#define blockIdx  (sdx_sim::M().bid)
#define blockDim  (sdx_sim::M().block)
#define gridDim   (sdx_sim::M().grid)

static inline void __syncthreads(void) { sdx_sim::wait(sdx_sim::AT_BLOCK); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)mask; sdx_sim::wait(sdx_sim::AT_WARP); }

template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask) {
    static_assert(sizeof(T) <= 8, "shuffle of at most 8 bytes");
    sdx_sim::fiber &f = sdx_sim::self();
    uint64_t *x = sdx_sim::M().shfl[f.warp][f.xchg++ & 1];
    int lane = f.lane, src = (lane ^ lane_mask) & 31;
    T r;
    memcpy(&x[lane], &v, sizeof v);
    __syncwarp(mask);
    memcpy(&r, &x[src], sizeof r);
    return r;
}

/* ---- half types ------------------------------------------------------------ */

struct __half { uint16_t bits; };

static inline float __uint_as_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t __float_as_uint(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline __half __ushort_as_half(unsigned short u) { __half h; h.bits = u; return h; }
static inline unsigned short __half_as_ushort(__half h) { return h.bits; }

static inline float __half2float(__half h) {
    uint32_t s = (uint32_t)(h.bits >> 15) << 31, e = (h.bits >> 10) & 31, m = h.bits & 1023;
    if (e == 31) return __uint_as_float(s | 0x7f800000u | (m << 13));
    if (e == 0) return (s ? -1.0f : 1.0f) * ldexpf((float)m, -24);
    return __uint_as_float(s | ((e + 112) << 23) | (m << 13));
}

/* round to nearest even, overflow to infinity (the hardware's
 * conversion; sdx's stores saturate before calling it) */
static inline __half __float2half_rn(float f) {
    uint32_t x = __float_as_uint(f), s = (x >> 16) & 0x8000u;
    float a = fabsf(f);
    __half h;
    if (a != a) { h.bits = (uint16_t)(s | 0x7e00u); return h; }
    if (a >= 65520.0f) { h.bits = (uint16_t)(s | 0x7c00u); return h; }
    if (a < 6.103515625e-05f) {                         /* subnormal: multiples of 2^-24 */
        h.bits = (uint16_t)(s | (uint32_t)nearbyintf(a * 16777216.0f));
        return h;
    }
    {
        uint32_t u = __float_as_uint(a), e = (u >> 23) - 112, m = u & 0x7fffffu;
        uint32_t r = (e << 10) | (m >> 13), rest = m & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (r & 1))) r++;
        h.bits = (uint16_t)(s | r);
        return h;
    }
}

/* two halves: x is the low 16 bits of the pair's 32-bit word */
struct __half2 { __half x, y; };
static inline __half2 __floats2half2_rn(float a, float b) { __half2 h; h.x = __float2half_rn(a); h.y = __float2half_rn(b); return h; }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline float __low2float(__half2 h) { return __half2float(h.x); }
static inline float __high2float(__half2 h) { return __half2float(h.y); }

/* A 16-bit value of a matrix operand as f32: f16, or bf16's top half */
static inline float sdx_sim_half_to_float(uint16_t bits, int bf16) {
    return bf16 ? __uint_as_float((uint32_t)bits << 16) : __half2float(__ushort_as_half(bits));
}

/* ---- runtime ------------------------------------------------------------------ */

typedef int hipError_t;
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorMemoryAllocation = 2, hipErrorNoDevice = 100, hipErrorLaunchFailure = 719 };
enum hipMemcpyKind { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2, hipMemcpyDeviceToDevice = 3 };
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8 };

struct hipDeviceProp_t {
    char name[256];
    int major, minor, warpSize, multiProcessorCount;
    size_t totalGlobalMem, sharedMemPerBlockOptin;
};

#define SDX_SIM_MEMORY ((size_t)8 << 30)

static inline hipError_t hipGetLastError(void) {
    sdx_sim::machine &m = sdx_sim::M();
    return m.error ? hipErrorLaunchFailure : hipSuccess;
}
static inline const char *hipGetErrorString(hipError_t e) {
    return e == hipSuccess ? "no error" : e == hipErrorLaunchFailure ? sdx_sim::M().why : e == hipErrorMemoryAllocation ? "out of memory" : "invalid value";
}
static inline hipError_t hipGetDeviceCount(int *n) { *n = 1; return hipSuccess; }
static inline hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : hipErrorInvalidValue; }
static inline hipError_t hipGetDevice(int *d) { *d = 0; return hipSuccess; }
static inline hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d) {
    if (d != 0) return hipErrorInvalidValue;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "sdx simulator (tests/gpu/sim.h)");
    p->major = getenv("SDX_SIM_AMPERE") ? 8 : 9;      /* 8: the host takes no wgmma path */
    p->warpSize = 32;
    p->multiProcessorCount = 4;
    p->totalGlobalMem = SDX_SIM_MEMORY;
    p->sharedMemPerBlockOptin = sdx_sim::SMEM_MAX;
    return hipSuccess;
}
/* Allocations carry their size in front, so the simulated memory is counted. */
static inline hipError_t hipMalloc(void **p, size_t bytes) {
    size_t *b;
    if (sdx_sim::M().allocated + bytes > SDX_SIM_MEMORY || !(b = (size_t *)malloc(bytes + 16))) return hipErrorMemoryAllocation;
    b[0] = bytes;
    sdx_sim::M().allocated += bytes;
    *p = (char *)b + 16;
    return hipSuccess;
}
static inline hipError_t hipFree(void *p) {
    if (p && sdx_sim::M().capturing) { sdx_sim::fail("hipFree while a stream is capturing"); return hipErrorLaunchFailure; }
    if (p) {
        size_t *b = (size_t *)((char *)p - 16);
        sdx_sim::M().allocated -= b[0];
        free(b);
    }
    return hipSuccess;
}
static inline hipError_t hipMemcpy(void *dst, const void *src, size_t bytes, hipMemcpyKind kind) {
    (void)kind;
    if (sdx_sim::M().capturing) sdx_sim::fail("a synchronous copy while a stream is capturing");
    if (sdx_sim::M().error) return hipErrorLaunchFailure;     /* a faulted context fails every call after */
    memmove(dst, src, bytes);
    return hipSuccess;
}
static inline hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total) {
    *total = SDX_SIM_MEMORY;
    *free_bytes = SDX_SIM_MEMORY - sdx_sim::M().allocated;
    return hipSuccess;
}
static inline hipError_t hipDeviceSynchronize(void) { return hipGetLastError(); }

/* Streams and graphs: one stream (everything runs in order), captured as
 * the header says. */
typedef struct sdx_sim_stream *hipStream_t;
typedef std::vector<std::function<void()>> *hipGraph_t;
typedef std::vector<std::function<void()>> *hipGraphExec_t;
enum hipStreamCaptureMode { hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal = 1, hipStreamCaptureModeRelaxed = 2 };
#define hipStreamPerThread ((hipStream_t)2)

static inline hipError_t hipStreamSynchronize(hipStream_t) {
    if (sdx_sim::M().capturing) sdx_sim::fail("a stream synchronisation while the stream is capturing");
    return hipGetLastError();
}
static inline hipError_t hipMemcpyAsync(void *dst, const void *src, size_t bytes, hipMemcpyKind, hipStream_t) {
    sdx_sim::machine &m = sdx_sim::M();
    if (m.error) return hipErrorLaunchFailure;
    if (m.capturing) m.captured.push_back([=] { memmove(dst, src, bytes); });
    else memmove(dst, src, bytes);
    return hipSuccess;
}
static inline hipError_t hipHostMalloc(void **p, size_t bytes, unsigned) {
    return (*p = malloc(bytes)) ? hipSuccess : hipErrorMemoryAllocation;
}
static inline hipError_t hipHostFree(void *p) { free(p); return hipSuccess; }
static inline hipError_t hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode) {
    sdx_sim::machine &m = sdx_sim::M();
    if (m.capturing) return hipErrorInvalidValue;
    m.capturing = 1;
    m.captured.clear();
    return hipSuccess;
}
static inline hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t *graph) {
    sdx_sim::machine &m = sdx_sim::M();
    *graph = NULL;
    if (!m.capturing) return hipErrorInvalidValue;
    m.capturing = 0;
    *graph = new std::vector<std::function<void()>>(std::move(m.captured));
    m.captured.clear();
    return m.error ? hipErrorLaunchFailure : hipSuccess;
}
static inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *exec, hipGraph_t graph, unsigned long long) {
    *exec = new std::vector<std::function<void()>>(*graph);
    return hipSuccess;
}
static inline hipError_t hipGraphDestroy(hipGraph_t graph) { delete graph; return hipSuccess; }
static inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec) { delete exec; return hipSuccess; }
static inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t) {
    sdx_sim::machine &m = sdx_sim::M();
    if (m.capturing) { sdx_sim::fail("a graph launched while a stream is capturing"); return hipErrorLaunchFailure; }
    m.graph_launches++;
    for (auto &f : *exec) f();
    return hipGetLastError();
}

static inline hipError_t hipFuncSetAttribute(const void *kernel, hipFuncAttribute attr, int value) {
    sdx_sim::machine &m = sdx_sim::M();
    if (attr != hipFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > sdx_sim::SMEM_MAX) return hipErrorInvalidValue;
    for (int i = 0; i < m.n_granted; i++)
        if (m.granted_kernel[i] == kernel) { m.granted_bytes[i] = value; return hipSuccess; }
    if (m.n_granted == sdx_sim::MAX_GRANTS) return hipErrorInvalidValue;
    m.granted_kernel[m.n_granted] = kernel;
    m.granted_bytes[m.n_granted++] = value;
    return hipSuccess;
}

/* One block an SM whatever the kernel: the simulator knows no registers.
 * (What sdx_hip.h picks from it is then the GPU's choice at occupancy 1.) */
static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *kernel, int threads, size_t smem) {
    (void)kernel;
    if (!blocks || threads < 1 || threads > 1024 || smem > (size_t)sdx_sim::SMEM_MAX) return hipErrorInvalidValue;
    *blocks = 1;
    return hipSuccess;
}

/* The launch helper sdx_hip.h calls in place of kernel<<<...>>>(...). */
template <typename... P, typename... A>
static inline void sdx_sim_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, A... args) {
    sdx_sim::launch((const void *)kernel, grid, block, smem, [=] { kernel(((P)args)...); });
}

static inline void *sdx_sim_dynamic_smem(void) { return sdx_sim::M().dyn; }

/* Asynchronous copies (cp.async): queued per thread and performed at the
 * wait that covers their group, so a thread that reads the destination
 * before waiting (or another thread's copies before a barrier) reads the
 * old contents. valid 0: the destination is filled with zeros. */
static inline void sdx_sim_cp_async(void *dst, const void *src, int bytes, int valid) {
    sdx_sim::fiber &f = sdx_sim::self();
    if ((uintptr_t)dst % (unsigned)bytes || (valid && (uintptr_t)src % (unsigned)bytes)) {
        sdx_sim::fail("misaligned asynchronous copy");
        return;
    }
    if (f.n_copies == (int)(sizeof f.copy / sizeof f.copy[0])) {
        sdx_sim::fail("more than 256 asynchronous copies in flight in one thread");
        return;
    }
    f.copy[f.n_copies].dst = dst;
    f.copy[f.n_copies].src = src;
    f.copy[f.n_copies].bytes = bytes;
    f.copy[f.n_copies].valid = valid;
    f.copy[f.n_copies++].group = f.groups;
}

static inline void sdx_sim_cp_commit(void) { sdx_sim::self().groups++; }

static inline void sdx_sim_cp_wait(int newest_pending) {
    sdx_sim::fiber &f = sdx_sim::self();
    int keep = 0;
    for (int i = 0; i < f.n_copies; i++) {
        /* groups committed before the newest `newest_pending` ones land now;
         * copies not yet committed stay in flight */
        if (f.copy[i].group < f.groups - newest_pending) {
            if (f.copy[i].valid) memcpy(f.copy[i].dst, f.copy[i].src, (size_t)f.copy[i].bytes);
            else memset(f.copy[i].dst, 0, (size_t)f.copy[i].bytes);
        } else {
            f.copy[keep++] = f.copy[i];
        }
    }
    f.n_copies = keep;
}

/* Vector accesses must be aligned on the GPU; here they would not fault. */
static inline void sdx_sim_check_aligned(const void *p, size_t align) {
    if ((uintptr_t)p % align) {
        char why[120];
        snprintf(why, sizeof why, "misaligned %zu-byte access at %p", align, p);
        sdx_sim::fail(why);
    }
}

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lane l names row l % 8
 * of matrix l / 8 and gets, of each matrix i, row l / 4's 16-bit elements
 * 2 (l % 4) and 2 (l % 4) + 1 (the first in the low half); with .trans
 * the same of the transposed matrix, elements (2 (l % 4), l / 4) and
 * (2 (l % 4) + 1, l / 4). Every lane reads its row into the warp's
 * exchange before anyone takes from it, as the instruction reads all
 * rows at once. */
static inline void sdx_sim_ldmatrix_x4(uint32_t r[4], const uint16_t *row, int trans) {
    sdx_sim::fiber &f = sdx_sim::self();
    float (*x)[256] = sdx_sim::M().mma[f.warp][f.xchg++ & 1];
    uint16_t *rows = (uint16_t *)x[0];      /* 32 rows of 8 */
    int lane = f.lane, g = lane / 4, t = lane % 4;
    sdx_sim_check_aligned(row, 16);
    memcpy(rows + 8 * lane, row, 16);
    __syncwarp();
    for (int i = 0; i < 4; i++) {
        const uint16_t *m = rows + 64 * i;
        uint32_t lo = trans ? m[8 * (2 * t) + g] : m[8 * g + 2 * t], hi = trans ? m[8 * (2 * t + 1) + g] : m[8 * g + 2 * t + 1];
        r[i] = lo | hi << 16;
    }
}

/* A lane's A fragment of a 16 x 16 half operand (mma.sync m16n8k16's,
 * and wgmma's from registers for a warp's 16 rows: a[0] A[g][2q, 2q+1],
 * a[1] A[g+8][2q, 2q+1], a[2] A[g][2q+8, 2q+9], a[3] A[g+8][2q+8,
 * 2q+9], lane 4 g + q) into A[16][16] as floats. */
static inline void sdx_sim_put_a16(float *A, const uint32_t a[4], int lane, int bf16) {
    const int g = lane / 4, q = lane % 4;
    for (int h = 0; h < 2; h++) {
        const uint32_t s = 16 * (uint32_t)h;
        A[g * 16 + 2 * q + h] = sdx_sim_half_to_float((uint16_t)(a[0] >> s), bf16);
        A[(g + 8) * 16 + 2 * q + h] = sdx_sim_half_to_float((uint16_t)(a[1] >> s), bf16);
        A[g * 16 + 2 * q + 8 + h] = sdx_sim_half_to_float((uint16_t)(a[2] >> s), bf16);
        A[(g + 8) * 16 + 2 * q + 8 + h] = sdx_sim_half_to_float((uint16_t)(a[3] >> s), bf16);
    }
}

/* mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: d += a b over the warp,
 * with the PTX ISA's fragments (lane l = 4 g + t):
 *   a[0] A[g][2t, 2t+1]  a[1] A[g+8][2t, 2t+1]  a[2] A[g][2t+8, 2t+9]  a[3] A[g+8][2t+8, 2t+9]
 *   b[0] B[2t, 2t+1][g]  b[1] B[2t+8, 2t+9][g]
 *   d[0, 1] D[g][2t, 2t+1]  d[2, 3] D[g+8][2t, 2t+1]
 * (f32 products of the 16-bit inputs, exact, summed in order k = 0..15). */
static inline void sdx_sim_mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2], int bf16) {
    sdx_sim::fiber &f = sdx_sim::self();
    float (*x)[256] = sdx_sim::M().mma[f.warp][f.xchg++ & 1];
    float *A = x[0], *B = x[1], *C = x[2];     /* A[16][16], B[16][8] (k, n), C[16][8] */
    int lane = f.lane, g = lane / 4, t = lane % 4;
    sdx_sim_put_a16(A, a, lane, bf16);
    for (int h = 0; h < 2; h++) {
        uint32_t s = 16 * (uint32_t)h;
        B[(2 * t + h) * 8 + g] = sdx_sim_half_to_float((uint16_t)(b[0] >> s), bf16);
        B[(2 * t + 8 + h) * 8 + g] = sdx_sim_half_to_float((uint16_t)(b[1] >> s), bf16);
        C[g * 8 + 2 * t + h] = d[h];
        C[(g + 8) * 8 + 2 * t + h] = d[2 + h];
    }
    __syncwarp();
    for (int i = 0; i < 4; i++) {
        int row = g + 8 * (i / 2), col = 2 * t + i % 2;
        float s = C[row * 8 + col];
        for (int k = 0; k < 16; k++) s = fmaf(A[row * 16 + k], B[k * 8 + col], s);
        d[i] = s;
    }
}

/* wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}, A and B from
 * shared memory by descriptor (start, LBO, SBO >> 4 in bits 0, 16 and
 * 32; base offset 0), K-major. Without swizzling (bits 62-63 zero), core
 * matrices of 8 rows x 16 bytes, core matrix (row / 8, k / 8) at start +
 * (row / 8) SBO + (k / 8) LBO. With the 128-byte swizzle (1 there), the
 * 16 bytes of row r from k on at start + (r / 8) SBO + (r % 8) 128 + 2 k,
 * address bits 4-6 XORed with bits 7-9. Thread t of the warpgroup (warp
 * w = t % 128 / 32, lane 4 g + q) holds D[16 w + g + 8 (e / 2)][8 j + 2 q + e % 2] in d[4 j + e]. Queued
 * here, performed (shared memory read, d written) at the wait that
 * covers its group. */
/* Row `row` (16 values of k) of the operand a descriptor names. */
static inline void sdx_sim_wg_row(uint64_t desc, int row, int bf16, float out[16]) {
    const uint32_t start = (uint32_t)(desc & 0x3fff) << 4, lbo = (uint32_t)(desc >> 16 & 0x3fff) << 4;
    const uint32_t sbo = (uint32_t)(desc >> 32 & 0x3fff) << 4;
    const unsigned char *smem = (const unsigned char *)sdx_sim_dynamic_smem();
    const int swizzled = (int)(desc >> 62) == 1;
    if ((desc >> 49 & 7) || (desc >> 62 && !swizzled)) {
        sdx_sim::fail("wgmma: a descriptor with a base offset, or a swizzle other than 128 bytes (not modelled)");
        memset(out, 0, 16 * sizeof *out);
        return;
    }
    for (int half = 0; half < 2; half++) {      /* k 0-7 and 8-15: two core matrices, or two chunks of a row */
        uint32_t at = start + (uint32_t)(row / 8) * sbo +
                      (swizzled ? (uint32_t)(row % 8) * 128 + (uint32_t)half * 16 : (uint32_t)half * lbo + (uint32_t)(row % 8) * 16);
        if (swizzled) at = sdx_sim::swizzle128(at);
        uint16_t v[8];
        if (at + 16 > sdx_sim::SMEM_MAX) {
            sdx_sim::fail("wgmma: an operand past shared memory");
            memset(out, 0, 16 * sizeof *out);
            return;
        }
        memcpy(v, smem + at, 16);
        for (int i = 0; i < 8; i++) out[8 * half + i] = sdx_sim_half_to_float(v[i], bf16);
    }
}

/* Column n (16 values of k) of an MN-major B (wgmma's imm-trans-b):
 * the 128-byte swizzle only, 64 values of n a 128-byte row, k rows 128
 * bytes apart in atoms of 8, value (k, n) at start + (k / 8) SBO + (k %
 * 8) 128 + (n / 64) LBO + 2 (n % 64), then swizzled. */
static inline void sdx_sim_wg_col_mn(uint64_t desc, int n, int bf16, float out[16]) {
    const uint32_t start = (uint32_t)(desc & 0x3fff) << 4, lbo = (uint32_t)(desc >> 16 & 0x3fff) << 4;
    const uint32_t sbo = (uint32_t)(desc >> 32 & 0x3fff) << 4;
    const unsigned char *smem = (const unsigned char *)sdx_sim_dynamic_smem();
    if ((desc >> 49 & 7) || (desc >> 62) != 1) {
        sdx_sim::fail("wgmma: an MN-major operand with a base offset, or not in the 128-byte swizzle (not modelled)");
        memset(out, 0, 16 * sizeof *out);
        return;
    }
    for (int k = 0; k < 16; k++) {
        const uint32_t at = sdx_sim::swizzle128(start + (uint32_t)(k / 8) * sbo + (uint32_t)(k % 8) * 128 + (uint32_t)(n / 64) * lbo +
                                                (uint32_t)(n % 64) * 2);
        uint16_t v;
        if (at + 2 > sdx_sim::SMEM_MAX) {
            sdx_sim::fail("wgmma: an operand past shared memory");
            memset(out, 0, 16 * sizeof *out);
            return;
        }
        memcpy(&v, smem + at, 2);
        out[k] = sdx_sim_half_to_float(v, bf16);
    }
}

/* A product queued for the wait that covers its group: its entry, or
 * NULL (the run has failed). */
static inline sdx_sim::fiber::wg_op *sdx_sim_wg_queue(float *d, int n, uint64_t b, int bf16, int tnsp) {
    sdx_sim::fiber &f = sdx_sim::self();
    if (f.n_wg == (int)(sizeof f.wg / sizeof f.wg[0])) {
        sdx_sim::fail("more than 16 wgmma in flight in one thread");
        return NULL;
    }
    f.wg[f.n_wg].d = d;
    f.wg[f.n_wg].b = b;
    f.wg[f.n_wg].n = n;
    f.wg[f.n_wg].bf16 = bf16;
    f.wg[f.n_wg].tnsp = tnsp;
    f.wg[f.n_wg].regs = 0;
    f.wg[f.n_wg].group = f.wg_groups;
    return &f.wg[f.n_wg++];
}

static inline void sdx_sim_wgmma(float *d, int n, uint64_t a, uint64_t b, int bf16) {
    sdx_sim::fiber::wg_op *e = sdx_sim_wg_queue(d, n, b, bf16, 0);
    if (e) e->a = a;
}

/* wgmma with A from registers (m64nNk16, N up to 256), B K-major or
 * (tnsp) MN-major: a[] holds the thread's fragment, as mma.sync
 * m16n8k16's A for its warp's 16 rows (a[0] A[g][2q, 2q+1], a[1]
 * A[g+8][2q, 2q+1], a[2] A[g][2q+8, 2q+9], a[3] A[g+8][2q+8, 2q+9]). The
 * instruction is .sync.aligned: the warp's lanes meet and exchange their
 * fragments, and each keeps its two rows. */
static inline void sdx_sim_wgmma_rs(float *d, int n, const uint32_t a[4], uint64_t b, int bf16, int tnsp) {
    sdx_sim::fiber &f = sdx_sim::self();
    float *A = sdx_sim::M().mma[f.warp][f.xchg++ & 1][0];     /* A[16][16] */
    const int g = f.lane / 4;
    sdx_sim_put_a16(A, a, f.lane, bf16);
    __syncwarp();
    sdx_sim::fiber::wg_op *e = sdx_sim_wg_queue(d, n, b, bf16, tnsp);
    if (!e) return;
    e->regs = 1;
    memcpy(e->a_rows[0], A + g * 16, 16 * sizeof(float));
    memcpy(e->a_rows[1], A + (g + 8) * 16, 16 * sizeof(float));
}

/* wgmma.commit_group and wgmma.wait_group are .sync.aligned: a warp's
 * lanes meet there, so none runs a step ahead of the others (an mbarrier
 * that lane 0 lets go of for its warp is then let go of for all of it). */
static inline void sdx_sim_wgmma_commit(void) {
    sdx_sim::wait(sdx_sim::AT_WARP);
    sdx_sim::self().wg_groups++;
}

static inline void sdx_sim_wgmma_wait(int newest_pending) {
    sdx_sim::wait(sdx_sim::AT_WARP);
    sdx_sim::fiber &f = sdx_sim::self();
    const int t = (int)(&f - sdx_sim::M().th) % 128, w = t / 32, g = t % 32 / 4, q = t % 4;
    int keep = 0;
    for (int i = 0; i < f.n_wg; i++) {
        if (f.wg[i].group >= f.wg_groups - newest_pending) {
            f.wg[keep++] = f.wg[i];
            continue;
        }
        {
            float a[2][16], b[16];
            if (f.wg[i].regs) {
                memcpy(a, f.wg[i].a_rows, sizeof a);
            } else {
                sdx_sim_wg_row(f.wg[i].a, 16 * w + g, f.wg[i].bf16, a[0]);
                sdx_sim_wg_row(f.wg[i].a, 16 * w + g + 8, f.wg[i].bf16, a[1]);
            }
            for (int c = 0; c < f.wg[i].n; c++) {
                if (c % 8 / 2 != q) continue;           /* this thread's columns: 8 j + 2 q + (0, 1) */
                if (f.wg[i].tnsp) sdx_sim_wg_col_mn(f.wg[i].b, c, f.wg[i].bf16, b);
                else sdx_sim_wg_row(f.wg[i].b, c, f.wg[i].bf16, b);
                for (int h = 0; h < 2; h++) {
                    float *d = &f.wg[i].d[4 * (c / 8) + 2 * h + c % 2];
                    float s = *d;
                    for (int k = 0; k < 16; k++) s = fmaf(a[h][k], b[k], s);
                    *d = s;
                }
            }
        }
    }
    f.n_wg = keep;
}


/* ---- mbarriers and the TMA (Hopper) ------------------------------------------- */

namespace sdx_sim {

static inline uint32_t smem_offset(const void *p, const char *what) {
    const unsigned char *q = (const unsigned char *)p, *base = M().dyn;
    if (q < base || q >= base + SMEM_MAX) {
        char why[120];
        snprintf(why, sizeof why, "%s outside dynamic shared memory", what);
        fail(why);
        return 0;
    }
    return (uint32_t)(q - base);
}

static inline mbar *find_mbar(uint32_t at) {
    machine &m = M();
    for (int i = 0; i < m.n_bars; i++)
        if (m.bars[i].at == at) return &m.bars[i];
    fail("an mbarrier used before mbarrier.init");
    return NULL;
}

/* A phase completes once its arrivals have come and its bytes landed. */
static inline void mbar_complete(mbar *b) {
    if (b->pending == 0 && b->tx == 0) {
        b->phase++;
        b->pending = b->count;
    }
}

/* Lands the boxes counted on barrier `at`, completes its phase if it can,
 * and says whether the phase of parity `parity` is complete. */
static int mbar_passed(uint32_t at, int parity) {
    machine &m = M();
    mbar *b = find_mbar(at);
    if (!b) return 1;       /* failed: let the block run out */
    for (size_t i = 0; i < m.landings.size();) {
        if (m.landings[i].bar != at) { i++; continue; }
        memcpy(m.landings[i].dst, m.landings[i].bytes.data(), m.landings[i].bytes.size());
        b->tx -= (int)m.landings[i].bytes.size();
        m.landings.erase(m.landings.begin() + (long)i);
    }
    mbar_complete(b);
    return (b->phase & 1) != parity;
}

}  /* namespace sdx_sim */

static inline void sdx_sim_mbar_init(uint64_t *bar, int count) {
    sdx_sim::machine &m = sdx_sim::M();
    uint32_t at = sdx_sim::smem_offset(bar, "an mbarrier");
    if (at % 8 || count < 1 || m.n_bars == sdx_sim::MAX_MBARS) {
        sdx_sim::fail("mbarrier.init: misaligned, a count below 1, or too many barriers");
        return;
    }
    m.bars[m.n_bars].at = at;
    m.bars[m.n_bars].count = m.bars[m.n_bars].pending = count;
    m.bars[m.n_bars].tx = m.bars[m.n_bars].phase = 0;
    m.n_bars++;
}

/* mbarrier.arrive, with expect_tx of `bytes` when they are not 0 */
static inline void sdx_sim_mbar_arrive(uint64_t *bar, uint32_t bytes) {
    sdx_sim::mbar *b = sdx_sim::find_mbar(sdx_sim::smem_offset(bar, "an mbarrier"));
    if (!b) return;
    if (b->pending == 0) {
        sdx_sim::fail("mbarrier.arrive: more arrivals than the barrier's count in one phase");
        return;
    }
    b->tx += (int)bytes;
    b->pending--;
    sdx_sim::mbar_complete(b);
    /* A thread letting go (a plain arrival) lets every other thread run
     * before it goes on, those waiting for this barrier first, so that
     * what they do next (reload a stage, say) happens before what the
     * arriving thread does next. A producer announcing bytes goes on:
     * it runs as far ahead as the barriers let it. */
    sdx_sim::mbar_wake(&b->at);
    if (!bytes) sdx_sim::wait(sdx_sim::RUNNING);
}

static inline void sdx_sim_mbar_wait(uint64_t *bar, int parity) {
    uint32_t at = sdx_sim::smem_offset(bar, "an mbarrier");
    while (!sdx_sim::M().error && !sdx_sim::mbar_passed(at, parity)) {
        sdx_sim::self().mbar = at;
        sdx_sim::self().mbar_parity = parity;
        sdx_sim::wait(sdx_sim::AT_MBAR);
    }
}

/* A tensor map as cuTensorMapEncodeTiled makes it, for the kinds sdx
 * asks for: a tensor of `rank` (2 to 4) dimensions of `elem`-byte values,
 * dims[0] values a row, dimension d + 1 strides[d] bytes apart, read in
 * boxes of box[0] x box[1] x ..., 128 bytes a box row (the 128-byte
 * swizzle), zeros past the edges (before them too: coordinates may be
 * negative). The description goes in the map's opaque words: the base,
 * the rank and elem, the dims, the strides, the box, a mark. 0: made; -1:
 * refused, as the driver refuses what it cannot take. */
enum { SDX_SIM_TMAP_MAGIC = 0x7d3a, SDX_SIM_TMAP_RANK = 4 };
static inline int sdx_sim_tmap_encode_nd(uint64_t *map, const void *base, int elem, int rank, const uint64_t *dims,
                                         const uint64_t *strides, const uint32_t *box) {
    if ((uintptr_t)base % 16 || rank < 2 || rank > SDX_SIM_TMAP_RANK || box[0] * (uint32_t)elem != 128) return -1;
    for (int d = 0; d < rank; d++) {
        if (!dims[d] || dims[d] > ((uint64_t)1 << 32) || !box[d] || box[d] > 256) return -1;
        if (d + 1 < rank && (strides[d] % 16 || strides[d] >= ((uint64_t)1 << 40))) return -1;
    }
    memset(map, 0, 128);
    map[0] = (uint64_t)(uintptr_t)base;
    map[1] = (uint64_t)rank | (uint64_t)elem << 8;
    for (int d = 0; d < rank; d++) {
        map[2 + d] = dims[d];
        map[9 + d] = box[d];
        if (d + 1 < rank) map[6 + d] = strides[d];
    }
    map[13] = SDX_SIM_TMAP_MAGIC;
    return 0;
}

/* The encoder as the runtime hands it out: none where the simulated
 * device has no TMA (SDX_SIM_NO_TMA=1). */
static inline void *sdx_sim_tmap_encoder(void) { return getenv("SDX_SIM_NO_TMA") ? NULL : (void *)sdx_sim_tmap_encode_nd; }

/* cp.async.bulk.tensor.Nd ... mbarrier::complete_tx::bytes: the box whose
 * first value is at `at` (one coordinate a dimension) into dst
 * (1024-byte aligned: the swizzle's atoms); box row r (dimension 0's
 * values, dimensions 1 on counting r fastest first) at r 128, its byte o
 * with bits 4-6 XORed with bits 7-9. */
static inline void sdx_sim_tma_load_nd(void *dst, const uint64_t *map, const int *at, uint64_t *bar) {
    sdx_sim::machine &m = sdx_sim::M();
    const uint32_t smem_at = sdx_sim::smem_offset(dst, "a TMA box"), bar_at = sdx_sim::smem_offset(bar, "an mbarrier");
    const int rank = (int)(map[1] & 0xff);
    const uint32_t elem = (uint32_t)(map[1] >> 8), box_cols = (uint32_t)map[9];
    const unsigned char *base = (const unsigned char *)(uintptr_t)map[0];
    uint32_t box_rows = 1, bytes;
    sdx_sim::landing l;
    if (map[13] != SDX_SIM_TMAP_MAGIC) { sdx_sim::fail("cp.async.bulk.tensor: not a tensor map"); return; }
    for (int d = 1; d < rank; d++) box_rows *= (uint32_t)map[9 + d];
    bytes = box_rows * 128;
    if (smem_at % 1024 || smem_at + bytes > sdx_sim::SMEM_MAX) { sdx_sim::fail("cp.async.bulk.tensor: a box misaligned or past shared memory"); return; }
    if (!sdx_sim::find_mbar(bar_at)) return;
    l.bar = bar_at;
    l.dst = (unsigned char *)dst;
    l.bytes.assign(bytes, 0);
    for (uint32_t r = 0; r < box_rows; r++) {
        /* the row's place in dimensions 1 on, and whether it is inside */
        uint64_t offset = 0;
        int inside = 1;
        for (int d = 1, left = (int)r; d < rank; d++) {
            const int64_t g = (int64_t)at[d] + left % (int)map[9 + d];
            left /= (int)map[9 + d];
            inside = inside && g >= 0 && (uint64_t)g < map[2 + d];
            offset += inside ? (uint64_t)g * map[6 + d - 1] : 0;
        }
        for (uint32_t c = 0; c < box_cols && inside; c++) {
            const int64_t gx = (int64_t)at[0] + c;
            const uint32_t o = sdx_sim::swizzle128(r * 128 + c * elem);
            if (gx >= 0 && (uint64_t)gx < map[2]) memcpy(&l.bytes[o], base + offset + (uint64_t)gx * elem, elem);
        }
    }
    memset(dst, 0xa5, bytes);       /* garbage until it lands */
    m.landings.push_back(std::move(l));
}

/* The 2-D box whose first value is (x, y). */
static inline void sdx_sim_tma_load(void *dst, const uint64_t *map, int x, int y, uint64_t *bar) {
    const int at[2] = { x, y };
    sdx_sim_tma_load_nd(dst, map, at, bar);
}

#endif
