/* Whole-generation benchmark: one txt2img generation of a full-size
 * random-weight checkpoint (text encoder(s), UNet, VAE; written once by
 * tools/sdx-mkckpt.c under $SDX_BENCH_DIR or /tmp) per compute mode, each
 * in its own process (examples/sdx -v), so every mode's peak RSS is its
 * own. Reported per mode: load, text encoding, each CFG step (cond +
 * uncond UNet calls), VAE decode, total, peak RSS, and the UNet's achieved
 * GFLOP/s (FLOPs counted from the architecture) against the machine's f32
 * FMA peak, measured in the same run by a register-only FMA loop on every
 * thread with the widest vector unit the build targets.
 *
 *   make bench          (SD 1.5 at 512x512, 2 steps)   make bench-sdxl   (SDXL at 1024x1024)
 *   bench/bench_gen [--family sd15|sdxl] [--size PX] [--steps N] [--threads N]
 *                   [--shrink N] [--mode NAME=FLAGS]... [--only NAME] [--sdx PATH] [--vocab PATH]
 *                   [--sd-cli PATH]
 *
 * A mode is a name and the flags it adds to the sdx command line: add one
 * line to bg_modes (or --mode NAME="FLAGS" at run time). --shrink N divides
 * the checkpoint's widths by N (to test the harness quickly; the FLOP count
 * follows). --sd-cli PATH also runs stable-diffusion.cpp's sd-cli on the
 * same file with the same settings (its -v log parsed the same way; its
 * peak RSS from wait4) as the last row, and prints each mode's step time
 * as a multiple of sd-cli's. POSIX only (popen, fork). */
#define _DEFAULT_SOURCE 1
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#define SDX_MKCKPT_NO_MAIN
#include "../tools/sdx-mkckpt.c"
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

typedef struct bg_mode { const char *name, *flags; } bg_mode;

/* The compute modes, one line each: name, flags passed to examples/sdx. */
static const bg_mode bg_modes[] = {
    { "f32", "" },                        /* exact: the goldens' arithmetic   */
    { "bf16", "--compute bf16" },         /* fastest: AVX512-BF16 dot products */
    { "f32 low-mem", "--low-mem" },       /* weights streamed, VAE in tiles    */
};

#define BG_MAX_MODES 16
#define BG_MAX_STEPS 256

static double bg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the machine's f32 FMA peak ---------------------------------------- */

#if defined(__AVX512F__)
#define BG_VEC "AVX-512"
#define BG_LANES 16
typedef __m512 bg_v;
#define BG_SET1(x) _mm512_set1_ps(x)
#define BG_FMA(a, m, c) _mm512_fmadd_ps(a, m, c)
#define BG_SUM(a) _mm512_reduce_add_ps(a)
#elif defined(__FMA__)
#define BG_VEC "AVX2/FMA"
#define BG_LANES 8
typedef __m256 bg_v;
#define BG_SET1(x) _mm256_set1_ps(x)
#define BG_FMA(a, m, c) _mm256_fmadd_ps(a, m, c)
static float bg_sum(__m256 a) { float l[8], s = 0; _mm256_storeu_ps(l, a); for (int i = 0; i < 8; i++) s += l[i]; return s; }
#define BG_SUM(a) bg_sum(a)
#elif defined(__ARM_NEON)
#define BG_VEC "NEON"
#define BG_LANES 4
typedef float32x4_t bg_v;
#define BG_SET1(x) vdupq_n_f32(x)
#define BG_FMA(a, m, c) vfmaq_f32(c, a, m)
#define BG_SUM(a) vaddvq_f32(a)
#else
#define BG_VEC "scalar"
#define BG_LANES 1
typedef float bg_v;
#define BG_SET1(x) (x)
#define BG_FMA(a, m, c) fmaf(a, m, c)
#define BG_SUM(a) (a)
#endif
#define BG_ACCS 12   /* independent chains: more than FMA latency x ports on current cores, fewer than the registers */

typedef struct { long reps; float out; } bg_fma_job;

/* reps x BG_ACCS FMAs on registers only (named accumulators: an array
 * would live in memory). */
static void *bg_fma_thread(void *arg) {
    bg_fma_job *j = (bg_fma_job *)arg;
    bg_v m = BG_SET1(0.9999999f), c = BG_SET1(1e-7f);
    bg_v a0 = BG_SET1(0.0f), a1 = BG_SET1(1.0f), a2 = BG_SET1(2.0f), a3 = BG_SET1(3.0f), a4 = BG_SET1(4.0f), a5 = BG_SET1(5.0f);
    bg_v a6 = BG_SET1(6.0f), a7 = BG_SET1(7.0f), a8 = BG_SET1(8.0f), a9 = BG_SET1(9.0f), a10 = BG_SET1(10.0f), a11 = BG_SET1(11.0f);
    for (long r = 0; r < j->reps; r++) {
        a0 = BG_FMA(a0, m, c); a1 = BG_FMA(a1, m, c); a2 = BG_FMA(a2, m, c); a3 = BG_FMA(a3, m, c);
        a4 = BG_FMA(a4, m, c); a5 = BG_FMA(a5, m, c); a6 = BG_FMA(a6, m, c); a7 = BG_FMA(a7, m, c);
        a8 = BG_FMA(a8, m, c); a9 = BG_FMA(a9, m, c); a10 = BG_FMA(a10, m, c); a11 = BG_FMA(a11, m, c);
    }
    j->out = BG_SUM(a0) + BG_SUM(a1) + BG_SUM(a2) + BG_SUM(a3) + BG_SUM(a4) + BG_SUM(a5) + BG_SUM(a6) + BG_SUM(a7) +
             BG_SUM(a8) + BG_SUM(a9) + BG_SUM(a10) + BG_SUM(a11);
    return NULL;
}

/* Seconds for `threads` threads to run reps each (0 on failure). */
static double bg_fma_run(int threads, long reps) {
    pthread_t tid[256];
    bg_fma_job job[256];
    double t0 = bg_now();
    int started = 0;
    volatile float sink = 0;
    for (int i = 0; i < threads; i++) {
        job[i].reps = reps;
        if (pthread_create(&tid[i], NULL, bg_fma_thread, &job[i]) != 0) break;
        started++;
    }
    for (int i = 0; i < started; i++) { pthread_join(tid[i], NULL); sink += job[i].out; }
    (void)sink;
    return started == threads ? bg_now() - t0 : 0;
}

/* GFLOP/s (2 per FMA lane) of all threads together: best of three ~0.5 s runs. */
static double bg_fma_peak(int threads) {
    double flops_per_rep = 2.0 * BG_LANES * BG_ACCS, best = 0, t;
    long reps = 1000000;
    if (threads > 256) threads = 256;
    t = bg_fma_run(threads, reps);
    if (t <= 0) return 0;
    reps = (long)((double)reps * 0.5 / t) + 1;
    for (int k = 0; k < 3; k++) {
        double g;
        if ((t = bg_fma_run(threads, reps)) <= 0) return 0;
        g = flops_per_rep * (double)reps * threads / t / 1e9;
        if (g > best) best = g;
    }
    return best;
}

/* ---- UNet FLOPs from the architecture ------------------------------------ */

/* Multiply-adds count 2. Convolutions, linears and attention (q k^T and
 * the weighted sum of v); norms, activations and the time embedding are
 * left out (well under 1%). n: tokens of the image, 77 context tokens. */
static double bg_res_flops(double cin, double cout, double n) {
    return 2.0 * n * 9.0 * (cin * cout + cout * cout) + (cin != cout ? 2.0 * n * cin * cout : 0.0);
}

static double bg_attn_flops(const mk_unet_arch *a, double c, int depth, double n) {
    double t = 77.0, f = 2.0 * 2.0 * n * c * c;                 /* proj_in, proj_out */
    for (int d = 0; d < depth; d++) {
        f += 4.0 * 2.0 * n * c * c + 2.0 * 2.0 * n * n * c;      /* self: q k v out; scores and values */
        f += 2.0 * 2.0 * n * c * c + 2.0 * 2.0 * t * a->context_dim * c + 2.0 * 2.0 * n * t * c;  /* cross */
        f += 2.0 * n * 8.0 * c * c + 2.0 * n * 4.0 * c * c;      /* GEGLU feed-forward */
    }
    return f;
}

/* One UNet call on a batch of `batch` latents of h x w. The walk is
 * mk_unet_entries' (LDM's module order). */
static double bg_unet_flops(const mk_unet_arch *a, int batch, int h, int w) {
    double n[MK_MAX_LEVELS] = { 0 }, f, ch = a->model_channels, skips[64];
    int n_skips = 0;
    for (int l = 0; l < a->n_levels; l++) {
        n[l] = (double)h * (double)w;
        h = (h + 1) / 2;
        w = (w + 1) / 2;
    }
    f = 2.0 * n[0] * 9.0 * a->in_channels * ch;
    skips[n_skips++] = ch;
    for (int l = 0; l < a->n_levels; l++) {
        for (int r = 0; r < a->res[l]; r++) {
            double co = (double)a->mult[l] * a->model_channels;
            f += bg_res_flops(ch, co, n[l]);
            ch = co;
            if (a->depth[l] > 0) f += bg_attn_flops(a, ch, a->depth[l], n[l]);
            if (n_skips < 64) skips[n_skips++] = ch;
        }
        if (l < a->n_levels - 1) {
            f += 2.0 * n[l + 1] * 9.0 * ch * ch;
            if (n_skips < 64) skips[n_skips++] = ch;
        }
    }
    if (a->depth_mid >= 0) f += bg_res_flops(ch, ch, n[a->n_levels - 1]);
    if (a->depth_mid > 0) f += bg_attn_flops(a, ch, a->depth_mid, n[a->n_levels - 1]) + bg_res_flops(ch, ch, n[a->n_levels - 1]);
    for (int l = a->n_levels - 1; l >= 0; l--) {
        for (int r = 0; r <= a->res[l]; r++) {
            double co = (double)a->mult[l] * a->model_channels, skip = n_skips > 0 ? skips[--n_skips] : 0;
            f += bg_res_flops(ch + skip, co, n[l]);
            ch = co;
            if (a->depth[l] > 0) f += bg_attn_flops(a, ch, a->depth[l], n[l]);
            if (l > 0 && r == a->res[l]) f += 2.0 * n[l - 1] * 9.0 * ch * ch;
        }
    }
    f += 2.0 * n[0] * 9.0 * ch * a->out_channels;
    return f * batch;
}

/* ---- one mode: examples/sdx -v in a child process ------------------------- */

typedef struct bg_result {
    int ok, n_steps;
    double load, text, decode, total, rss_mib, step[BG_MAX_STEPS];
} bg_result;

static int bg_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The steady step time: the median of steps 2..N (the first pages the
 * weights in), or step 1 alone. */
static double bg_step(const bg_result *r) {
    double s[BG_MAX_STEPS];
    int n = r->n_steps > 1 ? r->n_steps - 1 : r->n_steps;
    if (n < 1) return 0;
    memcpy(s, r->step + (r->n_steps > 1), (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, bg_cmp);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static void bg_parse(const char *line, bg_result *r) {
    int k, steps;
    double v;
    if (sscanf(line, "sdx: load: %lf", &v) == 1) r->load = v;
    else if (sscanf(line, "sdx: text encoding: %lf", &v) == 1) r->text = v;
    else if (sscanf(line, "sdx: image 1 step %d/%d: %lf", &k, &steps, &v) == 3 && k >= 1 && k <= BG_MAX_STEPS) {
        r->step[k - 1] = v;
        if (k > r->n_steps) r->n_steps = k;
    } else if (sscanf(line, "sdx: image 1 VAE decode: %lf", &v) == 1) r->decode = v;
    else if (sscanf(line, "sdx: total %lf", &v) == 1) r->total = v;
    else if (sscanf(line, "sdx: peak RSS %lf", &v) == 1) r->rss_mib = v;
}

static int bg_run_mode(const char *cmd, bg_result *r) {
    char line[4096];
    FILE *p;
    int status;
    memset(r, 0, sizeof *r);
    printf("  $ %s\n", cmd);
    fflush(stdout);
    if (!(p = popen(cmd, "r"))) { fprintf(stderr, "bench_gen: cannot run %s\n", cmd); return 0; }
    while (fgets(line, sizeof line, p)) {
        printf("  | %s", line);   /* the child's -v lines: progress of a run that takes minutes */
        fflush(stdout);
        bg_parse(line, r);
    }
    status = pclose(p);
    r->ok = status == 0 && r->n_steps > 0 && r->rss_mib > 0;
    if (!r->ok) fprintf(stderr, "bench_gen: the run failed (status %d): %s\n", status, cmd);
    return r->ok;
}

/* ---- stable-diffusion.cpp's sd-cli beside it ------------------------------ */

/* One line of sd-cli -v: its loader, conditioner, progress bar ("2/4 -
 * 3.21s/it", or "it/s" when fast) and decode lines. */
static void bg_parse_sdcpp(const char *line, bg_result *r) {
    const char *at;
    int k, steps;
    double v;
    if ((at = strstr(line, "loading tensors completed, taking ")) && sscanf(at + 34, "%lf", &v) == 1) r->load += v;
    else if ((at = strstr(line, "get_learned_condition completed, taking ")) && sscanf(at + 40, "%lf", &v) == 1) r->text = v;
    else if ((at = strstr(line, "decode_first_stage completed, taking ")) && sscanf(at + 37, "%lf", &v) == 1) r->decode = v;
    else if ((at = strstr(line, "generate_image completed in ")) && sscanf(at + 28, "%lf", &v) == 1) r->total = v;
    else if ((at = strstr(line, "| ")) && (strstr(at, "s/it") || strstr(at, "it/s")) &&   /* not the loader's MB/s */
             sscanf(at + 2, "%d/%d - %lf", &k, &steps, &v) == 3 && k >= 1 && k <= BG_MAX_STEPS && v > 0) {
        r->step[k - 1] = strstr(at, "it/s") ? 1.0 / v : v;
        if (k > r->n_steps) r->n_steps = k;
    }
}

/* Runs argv (no shell) with its output parsed line by line (sd-cli ends
 * progress lines with \r); the peak RSS is the child's own, from wait4. */
static int bg_run_sdcpp(char *const *args, bg_result *r) {
    char line[4096], c;
    size_t len = 0;
    int fd[2], status = 0;
    struct rusage ru;
    pid_t pid;
    FILE *in;
    memset(r, 0, sizeof *r);
    printf("  $");
    for (int i = 0; args[i]; i++) printf(" %s", args[i]);
    printf("\n");
    fflush(stdout);
    if (pipe(fd) != 0) return 0;
    if ((pid = fork()) < 0) { close(fd[0]); close(fd[1]); return 0; }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execvp(args[0], args);
        _exit(127);
    }
    close(fd[1]);
    if (!(in = fdopen(fd[0], "r"))) { close(fd[0]); waitpid(pid, &status, 0); return 0; }
    while (fread(&c, 1, 1, in) == 1) {
        if (c != '\n' && c != '\r' && len + 1 < sizeof line) { line[len++] = c; continue; }
        line[len] = 0;
        if (len && !strstr(line, "|#")) printf("  | %s\n", line);   /* not the loader's byte counter */
        fflush(stdout);
        bg_parse_sdcpp(line, r);
        len = 0;
    }
    fclose(in);
    if (wait4(pid, &status, 0, &ru) != pid) return 0;
    r->rss_mib = (double)ru.ru_maxrss / 1024.0;
    r->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->n_steps > 0;
    if (!r->ok) fprintf(stderr, "bench_gen: sd-cli failed (status %d)\n", status);
    return r->ok;
}

/* ---- main ------------------------------------------------------------------- */

static void bg_cpu_name(char *buf, size_t size) {
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, size, "unknown CPU");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon && !strncmp(line, "model name", 10)) {
            snprintf(buf, size, "%s", colon + 2);
            buf[strcspn(buf, "\n")] = 0;
            break;
        }
    }
    fclose(f);
}

static void bg_usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s [--family sd15|sdxl] [--size PX] [--steps N] [--threads N] [--shrink N]\n"
            "          [--mode NAME=FLAGS]... [--only NAME] [--sdx PATH] [--vocab PATH] [--dir DIR]\n"
            "          [--sd-cli PATH]\n", argv0);
}

int main(int argc, char **argv) {
    const char *family = "sd15", *sdx = "./examples/sdx", *vocab = getenv("SDX_VOCAB"), *only = NULL;
    const char *dir = getenv("SDX_BENCH_DIR"), *sd_cli = NULL;
    int size = 0, steps = 2, threads = 0, shrink = 1, n_modes = 0, failed = 0;
    bg_mode modes[BG_MAX_MODES];
    bg_result res[BG_MAX_MODES + 1];   /* and sd-cli's */
    char ckpt[1024], out_png[1024], cmd[4096], cpu[256], err[2048], vocab_flag[1100] = "";
    mk_ckpt ck;
    double peak, unet_flops;
    for (size_t i = 0; i < sizeof bg_modes / sizeof bg_modes[0]; i++) modes[n_modes++] = bg_modes[i];
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { bg_usage(argv[0]); return 2; }
        i++;
        if (!strcmp(o, "--family")) family = v;
        else if (!strcmp(o, "--size")) size = atoi(v);
        else if (!strcmp(o, "--steps")) steps = atoi(v);
        else if (!strcmp(o, "--threads")) threads = atoi(v);
        else if (!strcmp(o, "--shrink")) shrink = atoi(v);
        else if (!strcmp(o, "--sdx")) sdx = v;
        else if (!strcmp(o, "--vocab")) vocab = v;
        else if (!strcmp(o, "--dir")) dir = v;
        else if (!strcmp(o, "--only")) only = v;
        else if (!strcmp(o, "--sd-cli")) sd_cli = v;
        else if (!strcmp(o, "--mode") && strchr(v, '=') && n_modes < BG_MAX_MODES) {
            char *name = strdup(v);
            if (!name) return 1;
            *strchr(name, '=') = 0;
            modes[n_modes].name = name;
            modes[n_modes++].flags = name + strlen(name) + 1;
        } else { bg_usage(argv[0]); return 2; }
    }
    if ((strcmp(family, "sd15") && strcmp(family, "sdxl")) || !mk_ckpt_preset(family, shrink, &ck) || steps < 1 ||
        steps > BG_MAX_STEPS || size < 0 || size % 8) {
        bg_usage(argv[0]);
        return 2;
    }
    if (!size) size = strcmp(family, "sdxl") ? 512 : 1024;
    if (!dir || !*dir) dir = "/tmp";
    if ((!vocab || !*vocab) && access("../shared/vocab/merges.txt", R_OK) == 0) vocab = "../shared/vocab";
    if (shrink > 1) snprintf(ckpt, sizeof ckpt, "%s/sdx_bench_%s_ckpt_f16_shrink%d.safetensors", dir, family, shrink);
    else snprintf(ckpt, sizeof ckpt, "%s/sdx_bench_%s_ckpt_f16.safetensors", dir, family);
    snprintf(out_png, sizeof out_png, "%s/sdx_bench_gen_out.png", dir);
    if (vocab && *vocab) snprintf(vocab_flag, sizeof vocab_flag, "--vocab '%s'", vocab);   /* else sdx looks next to the file */
    if (access(ckpt, R_OK) != 0) {
        double t0 = bg_now();
        printf("generating %s (random f16 %s checkpoint%s, once)...\n", ckpt, family, shrink > 1 ? ", shrunk" : "");
        fflush(stdout);
        if (!mk_write_ckpt(ckpt, &ck, SDX_F16, 1, err, sizeof err)) { fprintf(stderr, "bench_gen: %s\n", err); return 1; }
        printf("  written in %.1f s\n", bg_now() - t0);
    }
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads <= 0) threads = 1;
    bg_cpu_name(cpu, sizeof cpu);
    peak = bg_fma_peak(threads);
    unet_flops = bg_unet_flops(&ck.unet, 2, size / 8, size / 8);
    printf("\n%s, %d threads; f32 FMA peak %.1f GFLOP/s (%s, measured now)\n", cpu, threads, peak, BG_VEC);
    printf("%s %dx%d, %d steps euler, cfg 7 (a step = prompt + negative prompt, one batch-2 UNet call of %.1f GFLOP)\n",
           ckpt, size, size, steps, unet_flops / 1e9);
    for (int m = 0; m < n_modes; m++) {
        if (only && strcmp(only, modes[m].name)) { res[m].ok = -1; continue; }
        printf("\nmode %s\n", modes[m].name);
        snprintf(cmd, sizeof cmd,
                 "%s -m '%s' %s -p 'a lighthouse on a cliff at dusk, oil painting' -n 'blurry' -W %d -H %d "
                 "--steps %d --cfg-scale 7 --sampling-method euler -s 42 -t %d -v -o '%s' %s 2>&1",
                 sdx, ckpt, vocab_flag, size, size, steps, threads, out_png, modes[m].flags);
        failed += !bg_run_mode(cmd, &res[m]);
    }
    if (sd_cli) {
        char w[16], h[16], st[16], th[16];
        char *args[] = { (char *)sd_cli, "-m", ckpt, "-p", "a lighthouse on a cliff at dusk, oil painting", "-n", "blurry",
                         "-W", w, "-H", h, "--steps", st, "--cfg-scale", "7", "--sampling-method", "euler", "-s", "42",
                         "-t", th, "-v", "-o", out_png, NULL };
        snprintf(w, sizeof w, "%d", size); snprintf(h, sizeof h, "%d", size);
        snprintf(st, sizeof st, "%d", steps); snprintf(th, sizeof th, "%d", threads);
        printf("\nstable-diffusion.cpp's sd-cli, same file and settings\n");
        failed += !bg_run_sdcpp(args, &res[n_modes]);
    }
    printf("\n| mode | load s | text s | step 1 s | step s | UNet GFLOP/s | of FMA peak | VAE decode s | total s | peak RSS |%s\n",
           sd_cli ? " sd-cli step s / step s |" : "");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |%s\n", sd_cli ? " --- |" : "");
    for (int m = 0; m < n_modes + (sd_cli != NULL); m++) {
        const bg_result *r = &res[m];
        const char *name = m < n_modes ? modes[m].name : "sd-cli";
        double step = r->ok > 0 ? bg_step(r) : 0, g = step > 0 ? unet_flops / step / 1e9 : 0;
        double theirs = sd_cli && res[n_modes].ok > 0 ? bg_step(&res[n_modes]) : 0;
        if (r->ok < 0) continue;
        if (!r->ok) { printf("| %s | failed | | | | | | | | |%s\n", name, sd_cli ? " |" : ""); continue; }
        printf("| %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f%% | %.2f | %.1f | %.2f GiB |", name, r->load, r->text,
               r->step[0], step, g, peak > 0 ? 100.0 * g / peak : 0.0, r->decode, r->total, r->rss_mib / 1024.0);
        if (sd_cli) printf(theirs > 0 ? " %.2fx |" : " |", theirs / step);
        printf("\n");
    }
    printf("\nstep s: median of steps 2..N (step 1 also pages the weights in); UNet GFLOP/s: %.1f GFLOP / step s.\n"
           "Reproduce: bench/bench_gen --family %s --size %d --steps %d --threads %d", unet_flops / 1e9, family, size, steps,
           threads);
    if (shrink > 1) printf(" --shrink %d", shrink);
    printf(" (make %s runs the defaults)\n", strcmp(family, "sdxl") ? "bench" : "bench-sdxl");
    remove(out_png);
    return failed ? 1 : 0;
}
