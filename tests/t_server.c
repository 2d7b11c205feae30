/* Suite "server": examples/sdx-server on the tiny SD 1.x checkpoint,
 * driven as a client would drive AUTOMATIC1111's API: with curl, and with
 * Python's urllib (tests/server_client.py, whose output lines the cases
 * check). Each case starts the server on a free port (--listen-port 0, the
 * port read from its first line) and stops it with SIGTERM or SIGINT: it
 * must exit 0. POSIX only (fork, signals); the server needs libmicrohttpd
 * and cJSON (make builds it when pkg-config finds them). */
#include "test.h"

#ifdef _WIN32
static int server_is_posix_only(void) {
    T_SKIP_IF(1, "sdx-server is POSIX only");
    return T_PASS;
}
static const t_case server_cases[] = { { "posix_only", server_is_posix_only }, { 0, 0 } };
#else
#include <signal.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

/* The scratch file sdx_t_srv<suffix>; "" names the prefix the client
 * writes its images and infotexts under (sdx_t_srv-1.png, -1.txt, ...). */
static const char *srv_tmp(const char *suffix) {
    char name[128];
    snprintf(name, sizeof name, "sdx_t_srv%s", suffix);
    return t_tmp(name);
}

typedef struct srv {
    pid_t pid;                  /* 0 once stopped */
    int stopped_by;             /* the signal srv_stop sent */
    int exit;                   /* then: its exit status, -1 if a signal killed it or it did not stop */
    char url[64];               /* http://127.0.0.1:PORT */
    char log[1200];             /* its stdout and stderr */
    const char *ckpt;
} srv;

/* Why the suite cannot run here, or NULL. */
static const char *srv_missing(void) {
    static char out[256];
    if (!t_file_exists("examples/sdx-server")) return "examples/sdx-server not built (Debian: libmicrohttpd-dev, libcjson-dev; then make)";
    if (t_shell("command -v curl && command -v python3", out, sizeof out) != 0) return "no curl or python3";
    return NULL;
}

static int srv_log_has(const srv *s, const char *what, char *text, size_t size) {
    FILE *f = fopen(s->log, "r");
    size_t n = f ? fread(text, 1, size - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    return strstr(text, what) != NULL;
}

static char srv_why[1024];

/* Starts examples/sdx-server with the tiny model and args; 0 with the
 * reason in srv_why when it does not come up within 20 s. */
static int srv_start(srv *s, const char *ckpt, const char *args) {
    static char cmd[2048], text[8192];
    const char *at;
    snprintf(s->log, sizeof s->log, "%s_%d.log", srv_tmp(""), (int)getpid());
    snprintf(cmd, sizeof cmd, "exec ./examples/sdx-server -m '%s' --vocab '%s/vocab' --listen-port 0 -t 2 %s >'%s' 2>&1", ckpt,
             t_shared_dir(), args, s->log);
    remove(s->log);
    fflush(NULL);
    if ((s->pid = fork()) < 0) { snprintf(srv_why, sizeof srv_why, "fork failed"); return 0; }
    if (s->pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 2000; i++) {
        int status;
        if (srv_log_has(s, "listening on http://", text, sizeof text) && (at = strstr(text, "127.0.0.1:"))) {
            snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", atoi(at + 10));
            return 1;
        }
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            snprintf(srv_why, sizeof srv_why, "sdx-server exited at start: %s", text);
            s->pid = 0;
            return 0;
        }
        usleep(10000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    snprintf(srv_why, sizeof srv_why, "sdx-server did not come up in 20 s: %s", text);
    return 0;
}

/* Sends sig and waits up to 20 s for the exit status in s->exit (0: a
 * clean stop); -1 if a signal killed it or it did not stop (SIGKILL). */
static void srv_stop(srv *s, int sig) {
    int status = 0;
    s->stopped_by = sig;
    s->exit = -1;
    kill(s->pid, sig);
    for (int i = 0; i < 2000; i++) {
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            s->exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            return;
        }
        usleep(10000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

/* A case: body runs against a server started with args, which is then
 * stopped with sig (unless body stopped it): the case fails if body does,
 * or if the server does not exit 0 saying why it stopped. */
static int srv_case(int (*body)(srv *s), const char *args, int sig) {
    static char log[8192];
    const char *missing = srv_missing();
    srv s;
    int rc;
    memset(&s, 0, sizeof s);
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_SKIP_IF(missing, "%s", missing);
    s.ckpt = ckpt;
    T_CHECK(srv_start(&s, ckpt, args), "%s", srv_why);
    rc = body(&s);
    if (s.pid) srv_stop(&s, sig);
    if (rc != T_PASS) return rc;
    T_CHECK(s.exit == 0 && srv_log_has(&s, s.stopped_by == SIGINT ? "SIGINT: stopping" : "SIGTERM: stopping", log, sizeof log),
            "the server did not stop cleanly (%d): %s", s.exit, log);
    remove(s.log);
    return T_PASS;
}

/* Runs tests/server_client.py with args; its output in out. */
static int srv_client(const char *args, char *out, size_t size) {
    static char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 tests/server_client.py %s 2>&1", args);
    return t_shell(cmd, out, size);
}

/* curl: the HTTP status, the body in out. body: NULL (none) or a file. */
static int srv_curl(const srv *s, const char *method, const char *path, const char *body_file, char *out, size_t size) {
    static char cmd[2048], text[64];
    FILE *f;
    size_t n;
    snprintf(cmd, sizeof cmd, "curl -s -o '%s' -w '%%{http_code}' -X %s %s%s%s '%s%s'", srv_tmp("_reply"), method,
             body_file ? "--data-binary '@" : "", body_file ? body_file : "", body_file ? "'" : "", s->url, path);
    if (t_shell(cmd, text, sizeof text) != 0) return -1;
    f = fopen(srv_tmp("_reply"), "rb");
    n = f ? fread(out, 1, size - 1, f) : 0;
    if (f) fclose(f);
    out[n] = 0;
    return atoi(text);
}

static int srv_write(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    int ok = f && fputs(text, f) >= 0;
    if (f) ok = fclose(f) == 0 && ok;
    return ok;
}

/* The whole file as a string (static; "" if unreadable). */
static const char *srv_read(const char *path) {
    static char text[65536];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    return text;
}

/* Whether two files hold the same bytes. */
static int srv_same_file(const char *a, const char *b) {
    static char cmd[512], out[256];
    snprintf(cmd, sizeof cmd, "cmp '%s' '%s'", a, b);
    return t_shell(cmd, out, sizeof out) == 0;
}

/* ---- cases ------------------------------------------------------------------ */

/* A txt2img batch of two comes back as the CLI makes it: the same PNG
 * bytes (pixels and parameters chunk), each infotext the CLI's text. */
static int txt2img_gives_the_cli_images_and_parameters_body(srv *s) {
    static char out[8192], cmd[2048];
    int w = 0, h = 0, c;
    unsigned char *px;
    snprintf(cmd, sizeof cmd, "generate %s txt2img '{\"prompt\": \"a red fox\", \"negative_prompt\": \"blurry\", \"width\": 64, "
             "\"height\": 64, \"steps\": 2, \"seed\": 42, \"batch_size\": 2}' '%s'", s->url, srv_tmp(""));
    T_CHECK(srv_client(cmd, out, sizeof out) == 0, "%s", out);
    T_CHECK(strstr(out, "status 200\nimage 1 64x64\nimage 2 64x64\nseeds 42,43\necho sampler_name=Euler a scheduler=Automatic"), "%s", out);
    px = stbi_load(srv_tmp("-1.png"), &w, &h, &c, 3);
    T_CHECK(px && w == 64 && h == 64, "the first PNG does not decode to 64x64");
    stbi_image_free(px);
    snprintf(cmd, sizeof cmd, "-m %s --vocab %s/vocab -p 'a red fox' -n blurry -W 64 -H 64 --steps 2 -s 42 -b 2 -o '%s'",
             s->ckpt, t_shared_dir(), srv_tmp("_cli.png"));
    T_CHECK(t_sdx(cmd, out, sizeof out) == 0, "sdx: %s", out);
    T_CHECK(srv_same_file(srv_tmp("-1.png"), srv_tmp("_cli.png")) && srv_same_file(srv_tmp("-2.png"), srv_tmp("_cli_2.png")),
            "the server's PNGs differ from the CLI's");
    T_CHECK(!strncmp(srv_read(srv_tmp("-2.txt")), "a red fox\nNegative prompt: blurry\nSteps: 2, Sampler: Euler a, Schedule type: Automatic, "
                     "CFG scale: 7, Seed: 43, Size: 64x64, Model: model", 120), "infotext: %s", srv_read(srv_tmp("-2.txt")));
    T_CHECK(t_png_has_parameters(srv_tmp("_cli_2.png"), srv_read(srv_tmp("-2.txt"))), "the infotext is not the CLI's parameters text");
    return T_PASS;
}

static int txt2img_gives_the_cli_images_and_parameters(void) {
    return srv_case(txt2img_gives_the_cli_images_and_parameters_body, "", SIGTERM);
}

/* A1111's names, old ones too ("DPM++ 2M Karras"), reach sdx's sampler
 * and scheduler; sdx's own names are taken as well, "" as the default. */
static int a1111_sampler_and_scheduler_names_body(srv *s) {
    static const struct { const char *fields, *says; } names[] = {
        { "\"sampler_name\": \"DPM++ 2M\", \"scheduler\": \"Karras\"", "Sampler: DPM++ 2M, Schedule type: Karras," },
        { "\"sampler_name\": \"DPM++ 2M Karras\"", "Sampler: DPM++ 2M, Schedule type: Karras," },
        { "\"sampler_name\": \"DPM++ 2M Karras\", \"scheduler\": \"exponential\"", "Sampler: DPM++ 2M, Schedule type: Exponential," },
        { "\"sampler_index\": \"Euler\", \"scheduler\": \"sgm_uniform\"", "Sampler: Euler, Schedule type: SGM Uniform," },
        { "\"sampler_name\": \"dpmpp_2m_sde\", \"scheduler\": \"Align Your Steps\"", "Sampler: DPM++ 2M SDE, Schedule type: Align Your Steps," },
        { "\"sampler_name\": \"euler_a\"", "Sampler: Euler a, Schedule type: Automatic," },
        { "\"sampler_name\": \"\", \"scheduler\": \"\"", "Sampler: Euler a, Schedule type: Automatic," },
    };
    static char out[8192], cmd[2048];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(cmd, sizeof cmd, "generate %s txt2img '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, \"steps\": 2, %s}' '%s'",
                 s->url, names[i].fields, srv_tmp(""));
        T_CHECK(srv_client(cmd, out, sizeof out) == 0 && strstr(out, "status 200\n"), "%s: %s", names[i].fields, out);
        T_CHECK(strstr(srv_read(srv_tmp("-1.txt")), names[i].says), "%s: %s", names[i].fields, srv_read(srv_tmp("-1.txt")));
    }
    return T_PASS;
}

static int a1111_sampler_and_scheduler_names(void) {
    return srv_case(a1111_sampler_and_scheduler_names_body, "", SIGINT);
}

/* img2img with an init image and an inpainting mask is the CLI's
 * -i, --mask, --paste-back (A1111 pastes back), --strength. */
static int img2img_with_init_image_and_mask_body(srv *s) {
    static char out[8192], cmd[2048];
    static unsigned char mask[64 * 64];
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++) mask[y * 64 + x] = x >= 16 && x < 48 && y >= 16 && y < 48 ? 255 : 0;
    T_CHECK(stbi_write_png(srv_tmp("_mask.png"), 64, 64, 1, mask, 64), "writing the mask");
    snprintf(cmd, sizeof cmd, "-m %s --vocab %s/vocab -p 'a fox' -W 64 -H 64 --steps 2 -s 5 -o '%s'", s->ckpt, t_shared_dir(),
             srv_tmp("_init.png"));
    T_CHECK(t_sdx(cmd, out, sizeof out) == 0, "sdx: %s", out);
    snprintf(cmd, sizeof cmd, "generate %s img2img '{\"prompt\": \"a cat\", \"steps\": 3, \"seed\": 9, \"denoising_strength\": 0.6}' "
             "'%s' init='%s' mask='%s'", s->url, srv_tmp(""), srv_tmp("_init.png"), srv_tmp("_mask.png"));
    T_CHECK(srv_client(cmd, out, sizeof out) == 0, "%s", out);
    T_CHECK(strstr(out, "status 200\nimage 1 64x64\nseeds 9\necho sampler_name=Euler a scheduler=Automatic init_images=None"), "%s", out);
    snprintf(cmd, sizeof cmd, "-m %s --vocab %s/vocab -p 'a cat' -i '%s' --mask '%s' --paste-back --strength 0.6 --steps 3 -s 9 -o '%s'",
             s->ckpt, t_shared_dir(), srv_tmp("_init.png"), srv_tmp("_mask.png"), srv_tmp("_cli.png"));
    T_CHECK(t_sdx(cmd, out, sizeof out) == 0, "sdx: %s", out);
    T_CHECK(srv_same_file(srv_tmp("-1.png"), srv_tmp("_cli.png")), "the server's img2img differs from the CLI's");
    T_CHECK(strstr(srv_read(srv_tmp("-1.txt")), "Denoising strength: 0.6") && strstr(srv_read(srv_tmp("-1.txt")), "Mask blur: 4"),
            "infotext: %s", srv_read(srv_tmp("-1.txt")));
    return T_PASS;
}

static int img2img_with_init_image_and_mask(void) {
    return srv_case(img2img_with_init_image_and_mask_body, "", SIGTERM);
}

/* While a generation runs /progress says how far it is, with a preview
 * PNG of the current latent; idle, it reports nothing running. */
static int progress_shows_a_running_generation_body(srv *s) {
    static char out[8192], cmd[2048];
    int step = 0, steps = 0, count = 0, pw = 0, ph = 0;
    double progress = 0, eta = -1;
    const char *at;
    snprintf(cmd, sizeof cmd, "progress %s '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, \"steps\": 30}'", s->url);
    T_CHECK(srv_client(cmd, out, sizeof out) == 0, "%s", out);
    at = strstr(out, "running step ");
    T_CHECK(at && sscanf(at, "running step %d of %d, progress %lf, eta %lf, job_count %d, interrupted False, preview %dx%d", &step, &steps,
                         &progress, &eta, &count, &pw, &ph) == 7, "no running report: %s", out);
    T_CHECK(step > 0 && steps == 30 && progress > 0 && progress < 1 && eta >= 0 && count == 1 && pw == 64 && ph == 64, "%s", out);
    T_CHECK(strstr(out, "status 200\nidle progress 0, job_count 0, current_image None"), "%s", out);
    return T_PASS;
}

static int progress_shows_a_running_generation(void) {
    return srv_case(progress_shows_a_running_generation_body, "--preview-interval 1", SIGTERM);
}

/* /interrupt ends the running generation: its request gets 409 with an
 * error JSON before its last step, and the next request is served. */
static int interrupt_ends_a_running_generation_body(srv *s) {
    static char out[8192], cmd[2048];
    int step = 0, steps = 0;
    const char *at;
    snprintf(cmd, sizeof cmd, "interrupt %s '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, \"steps\": 150}'", s->url);
    T_CHECK(srv_client(cmd, out, sizeof out) == 0, "%s", out);
    T_CHECK(strstr(out, "interrupt 200 {}\nstatus 409\n"), "%s", out);
    at = strstr(out, "after step ");
    T_CHECK(at && sscanf(at, "after step %d of %d", &step, &steps) == 2 && step >= 2 && step < 150 && steps == 150, "%s", out);
    snprintf(cmd, sizeof cmd, "generate %s txt2img '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, \"steps\": 2}' '%s'", s->url, srv_tmp(""));
    T_CHECK(srv_client(cmd, out, sizeof out) == 0 && strstr(out, "status 200\nimage 1 64x64"), "after the interrupt: %s", out);
    return T_PASS;
}

static int interrupt_ends_a_running_generation(void) {
    return srv_case(interrupt_ends_a_running_generation_body, "", SIGTERM);
}

/* 20 requests at once wait in the queue: every one is answered, each
 * with its own seed's image. */
static int twenty_concurrent_requests_all_answered_body(srv *s) {
    static char out[8192], cmd[2048];
    snprintf(cmd, sizeof cmd, "concurrent %s 20 '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, \"steps\": 2}'", s->url);
    T_CHECK(srv_client(cmd, out, sizeof out) == 0 && strstr(out, "answered 20 of 20, 20 with their own seed"), "%s", out);
    return T_PASS;
}

static int twenty_concurrent_requests_all_answered(void) {
    return srv_case(twenty_concurrent_requests_all_answered_body, "", SIGTERM);
}

/* SIGTERM during a generation: the server cancels it, answers its
 * request 503 and exits 0. */
static int sigterm_during_a_generation_stops_cleanly_body(srv *s) {
    static char out[8192], cmd[2048];
    int code = 0;
    remove(srv_tmp("_bg.txt"));
    snprintf(cmd, sizeof cmd, "(python3 tests/server_client.py generate %s txt2img '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, "
             "\"steps\": 150}' '%s' > '%s' 2>&1 &) ; for i in $(seq 500); do curl -s %s/sdapi/v1/progress | "
             "grep -q '\"sampling_step\":[1-9]' && exit 0; sleep 0.01; done; exit 1", s->url, srv_tmp(""), srv_tmp("_bg.txt"), s->url);
    T_CHECK(t_shell(cmd, out, sizeof out) == 0, "the generation did not start: %s", out);
    srv_stop(s, SIGTERM);
    for (int i = 0; i < 500 && !strstr(srv_read(srv_tmp("_bg.txt")), "detail"); i++) usleep(10000);
    T_CHECK(sscanf(srv_read(srv_tmp("_bg.txt")), "status %d", &code) == 1 && code == 503 &&
            strstr(srv_read(srv_tmp("_bg.txt")), "shutting down"), "the running request got: %s", srv_read(srv_tmp("_bg.txt")));
    return T_PASS;
}

static int sigterm_during_a_generation_stops_cleanly(void) {
    return srv_case(sigterm_during_a_generation_stops_cleanly_body, "", SIGTERM);
}

/* The listings front-ends read at connect time. */
static int lists_models_samplers_schedulers_options_body(srv *s) {
    static const struct { const char *method, *path, *body, *has; } gets[] = {
        { "GET", "/sdapi/v1/sd-models", NULL, "[{\"title\":\"model.safetensors\",\"model_name\":\"model\"," },
        { "GET", "/sdapi/v1/samplers", NULL, "{\"aliases\":[\"euler_ancestral\"],\"name\":\"Euler a\",\"options\":{}}" },
        { "GET", "/sdapi/v1/samplers", NULL, "{\"aliases\":[\"dpmpp_2m\"],\"name\":\"DPM++ 2M\"" },
        { "GET", "/sdapi/v1/samplers", NULL, "{\"aliases\":[],\"name\":\"tcd\"" },
        { "GET", "/sdapi/v1/schedulers", NULL, "{\"name\":\"karras\",\"label\":\"Karras\",\"aliases\":[]," },
        { "GET", "/sdapi/v1/schedulers", NULL, "{\"name\":\"align_your_steps\",\"label\":\"Align Your Steps\",\"aliases\":[\"ays\"]," },
        { "GET", "/sdapi/v1/options", NULL, "\"sd_model_checkpoint\":\"model.safetensors\"" },
        { "POST", "/sdapi/v1/options", "{\"sd_model_checkpoint\": \"other.safetensors\"}", "null" },
        { "GET", "/sdapi/v1/progress", NULL, "{\"progress\":0,\"eta_relative\":0,\"state\":{\"skipped\":false,\"interrupted\":false," },
    };
    static char out[65536];
    for (size_t i = 0; i < sizeof gets / sizeof gets[0]; i++) {
        int code;
        T_CHECK(!gets[i].body || srv_write(srv_tmp("_body.json"), gets[i].body), "writing a body");
        code = srv_curl(s, gets[i].method, gets[i].path, gets[i].body ? srv_tmp("_body.json") : NULL, out, sizeof out);
        T_CHECK(code == 200 && strstr(out, gets[i].has), "%s %s: %d %.300s", gets[i].method, gets[i].path, code, out);
    }
    return T_PASS;
}

static int lists_models_samplers_schedulers_options(void) {
    return srv_case(lists_models_samplers_schedulers_options_body, "", SIGTERM);
}

/* Each malformed request gets a 4xx with {"error", "detail"} naming what
 * is wrong, and the server goes on serving. */
static int malformed_requests_get_4xx_json_body(srv *s) {
    static const struct { const char *method, *path, *body; int code; const char *detail; } bad[] = {
        { "POST", "/sdapi/v1/txt2img", "{\"prompt\": \"x\",", 400, "the body is not JSON (at byte 14 of 15)" },
        { "POST", "/sdapi/v1/txt2img", "", 400, "the body is not JSON" },
        { "POST", "/sdapi/v1/txt2img", "{} {}", 400, "the body is not JSON (at byte 3 of 5)" },
        { "POST", "/sdapi/v1/txt2img", "[1, 2]", 400, "the body must be a JSON object, not a list" },
        { "POST", "/sdapi/v1/txt2img", "{\"steps\": \"20\"}", 422, "steps: expected a number, got a string" },
        { "POST", "/sdapi/v1/txt2img", "{\"steps\": 2.5}", 422, "steps: expected an integer in [1, 150], got 2.5" },
        { "POST", "/sdapi/v1/txt2img", "{\"prompt\": [\"x\"]}", 422, "prompt: expected a string, got a list" },
        { "POST", "/sdapi/v1/txt2img", "{\"cfg_scale\": true}", 422, "cfg_scale: expected a number, got a boolean" },
        { "POST", "/sdapi/v1/txt2img", "{\"width\": 1000000}", 422, "width: expected an integer in [64, 2048], got 1000000" },
        { "POST", "/sdapi/v1/txt2img", "{\"width\": 100, \"height\": 64}", 422, "width 100: not a multiple of 8" },
        { "POST", "/sdapi/v1/txt2img", "{\"seed\": -2}", 422, "seed: expected an integer in [-1, 4294967295], got -2" },
        { "POST", "/sdapi/v1/txt2img", "{\"batch_size\": 8, \"n_iter\": 3}", 422, "batch_size 8 x n_iter 3: at most 16 images a request" },
        { "POST", "/sdapi/v1/txt2img", "{\"sampler_name\": \"Euler z\"}", 422, "sampler_name 'Euler z': unknown" },
        { "POST", "/sdapi/v1/txt2img", "{\"scheduler\": \"sometimes\"}", 422, "scheduler 'sometimes': unknown" },
        { "POST", "/sdapi/v1/img2img", "{\"prompt\": \"x\"}", 422, "init_images: required (a list of base64 images)" },
        { "POST", "/sdapi/v1/img2img", "{\"init_images\": \"iVBORw0K\"}", 422, "init_images: expected a list of base64 images, got a string" },
        { "POST", "/sdapi/v1/img2img", "{\"init_images\": [\"not*base64\"]}", 422, "init_images[0]: not base64" },
        { "POST", "/sdapi/v1/img2img", "{\"init_images\": [\"aGVsbG8gd29ybGQ=\"]}", 422, "init_images[0]: not an image" },
        { "POST", "/sdapi/v1/img2img", "{\"init_images\": [\"data:image/png;base64,@@@\"]}", 422, "init_images[0]: not base64" },
        { "POST", "/sdapi/v1/img2img", "{\"init_images\": [\"x\"], \"denoising_strength\": 0}", 422,
          "denoising_strength: expected a number in (0, 1], got 0" },
        { "POST", "/sdapi/v1/img2img", "@_big_image.json", 413, "init_images[0]: 4104x8, larger than 4096x4096" },
        { "POST", "/sdapi/v1/txt2img", "@_big_prompt.json", 413, "prompt: 70000 bytes, more than 65536" },
        { "POST", "/sdapi/v1/txt2img", "@_big_body.json", 413, "the body is larger than 50331648 bytes" },
        { "POST", "/sdapi/v1/txt2img", "@_many.json", 413, "the body has 1025 members, more than 1024" },
        { "GET", "/sdapi/v1/txt2img", NULL, 405, "GET /sdapi/v1/txt2img: this endpoint takes POST" },
        { "DELETE", "/sdapi/v1/options", NULL, 405, "this endpoint takes GET, POST" },
        { "GET", "/sdapi/v1/txt2img/", NULL, 404, "/sdapi/v1/txt2img/: no such endpoint" },
        { "GET", "/", NULL, 404, "/: no such endpoint" },
    };
    static unsigned char tall[4104 * 8];
    static char out[65536], cmd[1024];
    FILE *f;
    /* the large bodies: an image too wide, a prompt too long, 49 MiB, 1025 members */
    memset(tall, 128, sizeof tall);
    T_CHECK(stbi_write_png(srv_tmp("_big.png"), 4104, 8, 1, tall, 4104), "writing the wide PNG");
    snprintf(cmd, sizeof cmd, "{ printf '{\"init_images\": [\"'; base64 -w0 '%s'; printf '\"]}'; } > '%s'", srv_tmp("_big.png"),
             srv_tmp("_big_image.json"));
    T_CHECK(t_shell(cmd, out, sizeof out) == 0, "%s", out);
    T_CHECK((f = fopen(srv_tmp("_big_prompt.json"), "wb")) != NULL, "writing the long prompt");
    fputs("{\"prompt\": \"", f);
    for (int i = 0; i < 70000; i++) fputc('x', f);
    fputs("\"}", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "head -c 51380224 /dev/zero > '%s'", srv_tmp("_big_body.json"));
    T_CHECK(t_shell(cmd, out, sizeof out) == 0, "%s", out);
    T_CHECK((f = fopen(srv_tmp("_many.json"), "wb")) != NULL, "writing the many members");
    for (int i = 0; i < 1025; i++) fprintf(f, "%s\"k%d\": %d", i ? ", " : "{", i, i);
    fputs("}", f);
    fclose(f);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *file = !bad[i].body ? NULL : bad[i].body[0] == '@' ? srv_tmp(bad[i].body + 1) : srv_tmp("_body.json");
        int code;
        T_CHECK(!bad[i].body || bad[i].body[0] == '@' || srv_write(srv_tmp("_body.json"), bad[i].body), "writing a body");
        code = srv_curl(s, bad[i].method, bad[i].path, file, out, sizeof out);
        T_CHECK(code == bad[i].code && !strncmp(out, "{\"error\":\"", 10) && strstr(out, "\",\"detail\":\"") && strstr(out, bad[i].detail),
                "%s %s %.60s: %d %.300s (expected %d, '%s')", bad[i].method, bad[i].path, bad[i].body ? bad[i].body : "", code, out,
                bad[i].code, bad[i].detail);
    }
    /* still serving */
    snprintf(cmd, sizeof cmd, "generate %s txt2img '{\"prompt\": \"x\", \"width\": 64, \"height\": 64, \"steps\": 2}' '%s'", s->url, srv_tmp(""));
    T_CHECK(srv_client(cmd, out, sizeof out) == 0 && strstr(out, "status 200\nimage 1 64x64"), "after the bad requests: %s", out);
    remove(srv_tmp("_big_body.json"));
    remove(srv_tmp("_big_image.json"));
    remove(srv_tmp("_big_prompt.json"));
    remove(srv_tmp("_many.json"));
    remove(srv_tmp("_big.png"));
    return T_PASS;
}

static int malformed_requests_get_4xx_json(void) {
    return srv_case(malformed_requests_get_4xx_json_body, "", SIGTERM);
}

/* A bad command line exits 2 with a message, as sdx's does. */
static int bad_command_lines_exit_2(void) {
    static const struct { const char *args, *says; } bad[] = {
        { "", "sdx-server: no model given (-m PATH); see --help\n" },
        { "-m x --listen-port 70000", "sdx-server: --listen-port 70000: must be in 0..65535\n" },
        { "-m x --preview-interval -1", "sdx-server: --preview-interval -1: must be 0 or more\n" },
        { "-m x --bogus", "sdx-server: unknown option --bogus (see --help)\n" },
        { "-m x -p prompt", "sdx-server: unknown option -p (see --help)\n" },
        { "-m x --compute f64", "sdx-server: --compute f64: valid values are f32, bf16\n" },
    };
    static char out[8192], cmd[1024];
    const char *why = srv_missing();
    T_SKIP_IF(why, "%s", why);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc;
        snprintf(cmd, sizeof cmd, "./examples/sdx-server %s 2>&1", bad[i].args);
        rc = t_shell(cmd, out, sizeof out);
        T_CHECK(rc == 2 && !strcmp(out, bad[i].says), "'%s': exit %d, said '%s'", bad[i].args, rc, out);
    }
    T_CHECK(t_shell("./examples/sdx-server --help 2>&1", out, sizeof out) == 0 && strstr(out, "\nModel\n  -m, --model PATH") &&
            strstr(out, "\nServer\n  -l, --listen-ip IP") && strstr(out, "      --listen-port N") && strstr(out, "  -t, --threads N"),
            "--help: %s", out);
    return T_PASS;
}

static const t_case server_cases[] = {
    { "txt2img_gives_the_cli_images_and_parameters", txt2img_gives_the_cli_images_and_parameters },
    { "a1111_sampler_and_scheduler_names", a1111_sampler_and_scheduler_names },
    { "img2img_with_init_image_and_mask", img2img_with_init_image_and_mask },
    { "progress_shows_a_running_generation", progress_shows_a_running_generation },
    { "interrupt_ends_a_running_generation", interrupt_ends_a_running_generation },
    { "twenty_concurrent_requests_all_answered", twenty_concurrent_requests_all_answered },
    { "sigterm_during_a_generation_stops_cleanly", sigterm_during_a_generation_stops_cleanly },
    { "lists_models_samplers_schedulers_options", lists_models_samplers_schedulers_options },
    { "malformed_requests_get_4xx_json", malformed_requests_get_4xx_json },
    { "bad_command_lines_exit_2", bad_command_lines_exit_2 },
    { 0, 0 }
};
#endif
SDX_TEST_SUITE(server, server_cases)
