# sdx — see README.md. `make` builds the examples and tests, `make test`
# runs the tests, `make sanitize` runs them under ASan+UBSan, `make tsan`
# runs the cancel suite under ThreadSanitizer (part of `make test`), `make bench`
# runs the benchmarks, `make fuzz` runs the fuzzers (clang; `make fuzz-long`
# to 1e7 executions each), `make soak` runs hundreds of generations in one
# process watching memory and descriptors, `make cross`
# runs the portability checks (tools/cross.sh). GPU: `make check-hip`
# compile-checks sdx_hip.h and `make test-gpu-sim` runs its kernels on the
# CPU (both run by `make test`), `make sdx-hip` builds the CLI for the GPU,
# `make test-gpu` and `make bench-gpu` need one (see README, "GPU").
CC      ?= cc
CFLAGS  ?= -std=c11 -O2 -Wall -Wextra -Werror
CXX     ?= c++
CXXFLAGS ?= -std=c++17 -O2 -Wall -Wextra -Werror
LDLIBS  := -lm -lpthread
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

SRC     := $(wildcard src/*.h src/*.c src/*/*.h src/*/*.c src/*/*.cu src/license.txt)
TESTSRC := $(wildcard tests/*.c tests/*.h) tools/sdx-mkckpt.c
EXAMPLES := examples/sdx examples/minimal examples/texture examples/stepper examples/cpp_host
TOOLS    := tools/sdx-mkckpt tools/sdx-vocab2c
# examples/game needs SDL2 (Debian: libsdl2-dev): built when sdl2-config or
# pkg-config finds it, with game-tsan (the same under ThreadSanitizer, for
# its test); without SDL2 `make` leaves both out
SDL2_CONFIG := $(shell command -v sdl2-config 2>/dev/null)
SDL2_CFLAGS := $(if $(SDL2_CONFIG),$(shell sdl2-config --cflags),$(shell pkg-config --cflags sdl2 2>/dev/null))
SDL2_LIBS   := $(if $(SDL2_CONFIG),$(shell sdl2-config --libs),$(shell pkg-config --libs sdl2 2>/dev/null))
GAME     := $(if $(SDL2_LIBS),examples/game examples/game-tsan)
# examples/sdx-server needs libmicrohttpd and cJSON (Debian: libmicrohttpd-dev,
# libcjson-dev): built when pkg-config finds both; without them `make`
# leaves it out and its test suite skips
SERVER_PKGS := $(shell pkg-config --exists libmicrohttpd libcjson 2>/dev/null && echo libmicrohttpd libcjson)
SERVER   := $(if $(SERVER_PKGS),examples/sdx-server)

.PHONY: all test sanitize tsan bench bench-sdxl fuzz fuzz-long soak demo valgrind cross check-amalgamation clean check-hip sdx-hip game-hip test-gpu test-gpu-sim sanitize-gpu-sim bench-gpu

# `make demo` generates demo.png; the defaults use the tiny test model.
MODEL  ?= ../shared/golden/sd1/model.safetensors
VOCAB  ?= ../shared/vocab
PROMPT ?= a photograph of an astronaut riding a horse

all: sdx.h tests/run $(EXAMPLES) $(GAME) $(SERVER) $(TOOLS)

sdx.h sdx_hip.h: $(SRC) tools/amalgamate.sh
	sh tools/amalgamate.sh

tests/run: sdx.h $(TESTSRC)
	$(CC) $(CFLAGS) -o $@ tests/main.c -lstb $(LDLIBS)

tests/run-san: sdx.h $(TESTSRC)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror $(SAN) -o $@ tests/main.c -lstb $(LDLIBS)

# clang builds for CI, in the same make as the gcc ones. Nothing runs
# them, so the tests are built without optimisation (7 s instead of 56):
# still through code generation, where clang checks that intrinsics are
# called only from functions with their target features. The CLI's own
# code is checked without a second build of the implementation.
CLANG ?= clang
tests/run-clang: sdx.h $(TESTSRC)
	$(CLANG) $(filter-out -O%,$(CFLAGS)) -O0 -o $@ tests/main.c -lstb $(LDLIBS)

build/sdx-clang.ok: examples/sdx.c examples/common.h sdx.h
	@mkdir -p build
	$(CLANG) $(CFLAGS) -I. -fsyntax-only examples/sdx.c && touch $@

examples/%: examples/%.c sdx.h
	$(CC) $(CFLAGS) -I. -o $@ $< -lstb $(LDLIBS)

# what the CLI and the server share
examples/sdx examples/sdx-hip examples/sdx-server: examples/common.h

examples/game: examples/game.c sdx.h
	$(CC) $(CFLAGS) -I. $(SDL2_CFLAGS) -o $@ $< $(SDL2_LIBS) $(LDLIBS)

examples/game-tsan: examples/game.c sdx.h
	$(CC) -std=c11 -Wall -Wextra -Werror $(TSAN) -I. $(SDL2_CFLAGS) -o $@ $< $(SDL2_LIBS) $(LDLIBS)

examples/sdx-server: examples/sdx-server.c sdx.h
	$(CC) $(CFLAGS) -I. $(shell pkg-config --cflags $(SERVER_PKGS)) -o $@ $< -lstb $(shell pkg-config --libs $(SERVER_PKGS)) $(LDLIBS)

# -Wpedantic: tools/cross.sh runs this build as its C++ host check
examples/cpp_host: examples/cpp_host.cpp sdx.h
	$(CXX) $(CXXFLAGS) -Wpedantic -I. -o $@ $< $(LDLIBS)

# The implementation as C++ (tests/t_cpp.cpp): one golden generation.
tests/run-cpp: sdx.h tests/t_cpp.cpp
	$(CXX) $(CXXFLAGS) -o $@ tests/t_cpp.cpp $(LDLIBS)

# check-hip's compiles (a build product: rerun when what they compile
# changed); the simulator (two processes of one thread) and
# ThreadSanitizer's runs side by side, the output of each in one piece;
# then the suite in two processes (a case leaves a core idle much of its
# time), whose summary closes the output
test: tests/run $(EXAMPLES) $(GAME) $(SERVER) build/check-hip.log
	@sed -n 's/^\(ok\|SKIP\|FAIL\) /check-hip: &/p' build/check-hip.log
	$(MAKE) -j2 --output-sync=target test-gpu-sim tsan
	./tests/run -j2

# sdx_cancel from another thread under ThreadSanitizer: the cancel suite's
# random cancels and its cases on which call a cancel reaches, with C11
# atomics, and its random cancels with the lock of SDX_NO_ATOMICS builds
# (the stages' checks, one thread, run natively and under ASan). A
# generation takes some 20 times longer under TSan: TSAN_ROUNDS and
# TSAN_LOCK_ROUNDS say how many rounds of random cancels (natively 300).
# TSan reports two accesses that no synchronisation orders whether or not
# they met in time, so what its rounds need is cancels landing in every
# part of a call (sampling, the VAE, the rest: each round notes where),
# not many tries at a collision.
TSAN := -fsanitize=thread -O2 -g -fno-omit-frame-pointer
TSAN_ROUNDS ?= 30
TSAN_LOCK_ROUNDS ?= 10
tests/run-tsan: sdx.h tests/t_cancel.c tests/test.h
	$(CC) -std=c11 -Wall -Wextra -Werror $(TSAN) -DSDX_TEST_SINGLE -o $@ tests/t_cancel.c -lstb $(LDLIBS)
tests/run-tsan-lock: sdx.h tests/t_cancel.c tests/test.h
	$(CC) -std=c11 -Wall -Wextra -Werror $(TSAN) -DSDX_TEST_SINGLE -DSDX_NO_ATOMICS -o $@ tests/t_cancel.c -lstb $(LDLIBS)
tsan: tests/run-tsan tests/run-tsan-lock
	TSAN_OPTIONS=halt_on_error=1 SDX_TEST_CANCEL_ROUNDS=$(TSAN_ROUNDS) ./tests/run-tsan cancel.random cancel.a_
	TSAN_OPTIONS=halt_on_error=1 SDX_TEST_CANCEL_ROUNDS=$(TSAN_LOCK_ROUNDS) ./tests/run-tsan-lock cancel.random

# Under ASan+UBSan (some 10 times slower): the parsers, the kernels, the
# models' loaders and error paths, the allocation-failure sweeps, and one
# golden of each model part (SD 1.x: text, UNet, VAE, a whole generation;
# tiled VAE, bf16 kernels, the backend seam on the host), the cancel paths
# (20 rounds of random cancels). The f16/bf16 storage variants and the SD
# 2.x/SDXL goldens exercise the same code with other sizes and run
# natively in `make test`. `make sanitize SAN_SUITES= SAN_SKIP=` runs
# everything.
SAN_SUITES ?= core. half. rng. json. safetensors. kernels. precision. tokenizer. prompt. text. unet. vae. \
              sampling. pipeline. robust. backend.host tiling.circular_padding bf16.linear bf16.conv \
              bf16.fallback bf16.rewritten bf16.half_storage gguf. upscale. cancel.
SAN_SKIP ?= --skip pipeline.half_storage --skip pipeline.sd2_ --skip pipeline.sdxl_ --skip pipeline.cli_ \
            --skip text.sd2_ --skip text.sdxl_ --skip text.sd1_f16 --skip text.sd1_bf16 \
            --skip unet.goldens_f16 --skip unet.goldens_bf16 --skip unet.generated_ \
            --skip vae.sd2_ --skip vae.sdxl_ --skip vae.sd1_goldens_f16 --skip vae.sd1_goldens_bf16 \
            --skip vae.tiled_512px --skip vae.tiled_working_set --skip vae.tiles_of_any_size \
            --skip half.f16_random_bits --skip half.bf16_random_bits \
            --skip kernels.conv3x3_winograd_unet_layers --skip robust.controlnet_generation
sanitize: tests/run-san
	SDX_SANITIZE=1 SDX_TEST_CANCEL_ROUNDS=20 ./tests/run-san -j2 $(SAN_SUITES) $(SAN_SKIP)

tools/%: tools/%.c sdx.h
	$(CC) $(CFLAGS) -I. -o $@ $< $(LDLIBS)

# `make bench`: the kernels against a naive loop; a whole SD 1.5 512x512
# generation (2 steps) per compute mode, each in its own process, with
# per-phase times, peak RSS and the UNet's GFLOP/s against the FMA peak
# measured in the same run (bench/bench_gen); one UNet call with and
# without a ControlNet; TAESD against the VAE decoder at 512. `make
# bench-sdxl`: SDXL at 1024x1024, and the decoders at 1024. Random f16
# checkpoints are generated once under $(SDX_BENCH_DIR) (2.1 GB for SD 1.5,
# 6.9 GB for SDXL). BENCH_GEN passes options (--steps N, --threads N,
# --mode NAME=FLAGS, --shrink N; see bench/bench_gen.c).
SDX_BENCH_DIR ?= /tmp
export SDX_BENCH_DIR
BENCH_GEN ?=
# SD_CLI=path/to/sd-cli: stable-diffusion.cpp's command timed beside sdx
# in the same run, on the same file (README, "Beside stable-diffusion.cpp").
SD_CLI ?=
BENCH_SD_CLI = $(if $(SD_CLI),--sd-cli $(SD_CLI))
bench: bench/bench bench/bench_gen bench/bench_unet bench/bench_decode examples/sdx
	./bench/bench
	./bench/bench_gen --family sd15 $(BENCH_SD_CLI) $(BENCH_GEN)
	./bench/bench_unet --only sd15 --calls 1 --control 1
	./bench/bench_decode --sizes 512

bench-sdxl: bench/bench_gen bench/bench_decode examples/sdx
	./bench/bench_gen --family sdxl $(BENCH_SD_CLI) $(BENCH_GEN)
	./bench/bench_decode --sizes 1024

bench/%: bench/%.c sdx.h tools/sdx-mkckpt.c
	$(CC) $(CFLAGS) -march=native -I. -o $@ $< $(LDLIBS)

demo: examples/sdx
	./examples/sdx -m $(MODEL) --vocab $(VOCAB) -p "$(PROMPT)" --steps 20 -s 42 -o demo.png

# memcheck over a tiny end-to-end generation: 0 errors, nothing lost
valgrind: examples/sdx
	$(CC) -std=c11 -O1 -g -I. -o examples/sdx-vg examples/sdx.c -lstb $(LDLIBS)
	valgrind --leak-check=full --errors-for-leak-kinds=all --error-exitcode=9 ./examples/sdx-vg \
	    -m ../shared/golden/sd1/model.safetensors --vocab ../shared/vocab -p "a (red:1.2) fox" -n blurry \
	    -W 64 -H 64 --steps 2 -t 2 -o /tmp/sdx-valgrind.png

fuzz:
	fuzz/run.sh $(or $(FUZZ_SECONDS),60)

# `make soak`: hundreds of mixed generations in one process with the tiny
# golden models (tests/soak.c: txt2img, img2img, inpainting, LoRA, ControlNet,
# TAESD, the stages, cancels from another thread, bad inputs, a model from
# callbacks reloaded), the resident set, open descriptors and sdx's bytes
# sampled after each cycle; fails when they grow after the warm-up or a
# result drifts. Minutes, one thread; not in CI. SOAK passes options
# (--cycles N, --threads N, --slack-mib MiB; tests/soak --help).
SOAK ?=
tests/soak: tests/soak.c sdx.h
	$(CC) $(CFLAGS) -o $@ tests/soak.c $(LDLIBS)
soak: tests/soak
	./tests/soak $(SOAK)

# Each harness until FUZZ_RUNS executions, one after another (hours; not in
# CI; figures in README, "Long runs")
FUZZ_RUNS ?= 10000000
fuzz-long:
	fuzz/run.sh --runs $(FUZZ_RUNS)

# Portability (tools/cross.sh): C99/C11 and C++11/17/20 compiles with gcc,
# clang, g++ and clang++ plus the C++ test; an SDX_NO_SIMD build and its
# tests; the whole suite built with mingw-w64 and run under wine; aarch64
# (NEON) under qemu-user. The builds other than the native one leave out
# what tools/cross.sh lists, and says why (ARM_SUITES, ARM_SKIP,
# NOSIMD_SKIP, WIN_SKIP); `make test` runs everything natively.
# `make cross CROSS="win64 arm64"` runs some steps.
cross: sdx.h
	tools/cross.sh $(CROSS)

check-amalgamation:
	sh tools/amalgamate.sh --check

# ---- GPU (sdx_hip.h) ----------------------------------------------------
# The GPU half is examples/sdx_hip.cu compiled by nvcc (preferred when
# both exist; GPU=hip picks hipcc), linked with C objects of sdx.h.
NVCC    ?= $(or $(shell command -v nvcc),$(wildcard /usr/local/cuda/bin/nvcc))
HIPCC   ?= $(shell command -v hipcc)
# sm_80 runs on every 8.x; sm_90a is Hopper's own code (the wgmma GEMMs:
# H100, H200, GH200, the 9.0 devices there are)
NV_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a
HIP_ARCH ?= --offload-arch=gfx90a --offload-arch=gfx1030
GPU     ?= $(if $(NVCC),cuda,$(if $(HIPCC),hip,none))
GPUCC   := $(if $(filter cuda,$(GPU)),$(NVCC) -O2 -x cu -std=c++17 $(NV_ARCH),$(HIPCC) -O2 -x hip -std=c++17 $(HIP_ARCH))
GPULD   := $(if $(filter cuda,$(GPU)),$(NVCC),$(HIPCC))

check-hip: sdx.h sdx_hip.h
	sh tools/check-hip.sh

# the same as a build product (make test, CI's build section): its output
# kept in build/check-hip.log once it passed
build/check-hip.log: sdx.h sdx_hip.h examples/sdx_hip.cu tests/gpu/t_gpu.c tests/test.h tools/check-hip.sh
	@mkdir -p build
	@sh tools/check-hip.sh > $@.new 2>&1; rc=$$?; cat $@.new; if [ $$rc = 0 ]; then mv $@.new $@; else rm -f $@.new; exit 1; fi

# The gpu suite's kernel cases with sdx_hip.h's kernels run on the CPU by
# the simulator of tests/gpu/sim.h (any C++17 compiler, no GPU): every
# kernel, the matrix-unit paths included, against the CPU kernels, and UNet
# calls replayed from graphs against op by op. The simulated device is a
# Hopper (the 128-tiles on wgmma, a linear's and a stride-1 channels-last
# convolution's fed by the TMA, attention up to head dim 80 on wgmma: the
# simulator's builds turn SDX_HIP_FLASH_WGMMA and SDX_HIP_TMA_CONV on); the
# GEMM and convolution cases run again on a Hopper without the TMA
# (SDX_SIM_NO_TMA: the threads copy) and on an Ampere (SDX_SIM_AMPERE:
# mma.sync), with attention (mma.sync for every head dim). The pipeline goldens and the ControlNet's
# graphs take too long there; `./tests/gpu/run-sim` runs them too.
SIM_CXXFLAGS ?= -std=c++17 -O2 -march=native -U_FORTIFY_SOURCE -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-psabi
test-gpu-sim: tests/gpu/run-sim
	./tests/gpu/run-sim -j2 --skip goldens --skip gguf --skip controlnet
	SDX_SIM_NO_TMA=1 ./tests/gpu/run-sim linear conv residual geglu
	SDX_SIM_AMPERE=1 ./tests/gpu/run-sim linear conv residual loaded geglu attention
SIM_DEPS := tests/gpu/t_gpu.c tests/test.h tests/gpu/sim.h examples/sdx_hip.cu sdx.h sdx_hip.h
tests/gpu/run-sim: tests/gpu/t_gpu-sim.o tests/gpu/sdx_hip-sim.o
	$(CXX) -o $@ $^ $(LDLIBS)
tests/gpu/t_gpu-sim.o: $(SIM_DEPS)
	$(CC) $(CFLAGS) -I. -c tests/gpu/t_gpu.c -o $@
tests/gpu/sdx_hip-sim.o: $(SIM_DEPS)
	$(CXX) $(SIM_CXXFLAGS) -I. -DSDX_HIP_SIM -include tests/gpu/sim.h -x c++ -c examples/sdx_hip.cu -o $@

# The same under ASan+UBSan: a kernel's out-of-bounds global access is a
# report (kernels run on host memory there). About ten times slower, so
# not part of `make test`.
SIM_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -g
sanitize-gpu-sim: tests/gpu/run-sim-san
	./tests/gpu/run-sim-san --skip goldens --skip gguf --skip controlnet
tests/gpu/run-sim-san: tests/gpu/t_gpu-sim-san.o tests/gpu/sdx_hip-sim-san.o
	$(CXX) $(SIM_SAN) -o $@ $^ $(LDLIBS)
tests/gpu/t_gpu-sim-san.o: $(SIM_DEPS)
	$(CC) $(CFLAGS) $(SIM_SAN) -I. -c tests/gpu/t_gpu.c -o $@
tests/gpu/sdx_hip-sim-san.o: $(SIM_DEPS)
	$(CXX) $(SIM_CXXFLAGS) $(SIM_SAN) -I. -DSDX_HIP_SIM -include tests/gpu/sim.h -x c++ -c examples/sdx_hip.cu -o $@

examples/sdx_hip.o: examples/sdx_hip.cu sdx.h sdx_hip.h
	@[ "$(GPU)" != none ] || { echo "no nvcc or hipcc found: install CUDA or Debian's hipcc"; exit 1; }
	$(GPUCC) -I. -c $< -o $@

# the sdx CLI on the GPU (--backend cpu still runs on the CPU)
sdx-hip: examples/sdx-hip
examples/sdx-hip: examples/sdx.c examples/sdx_hip.o sdx.h sdx_hip.h
	$(CC) $(CFLAGS) -I. -DSDX_WITH_HIP -c examples/sdx.c -o examples/sdx-hip.o
	$(GPULD) -o $@ examples/sdx-hip.o examples/sdx_hip.o -lstb $(LDLIBS)

# the game example on the GPU (SDL2)
game-hip: examples/game-hip
examples/game-hip: examples/game.c examples/sdx_hip.o sdx.h sdx_hip.h
	$(CC) $(CFLAGS) -I. -DSDX_WITH_HIP $(SDL2_CFLAGS) -c examples/game.c -o examples/game-hip.o
	$(GPULD) -o $@ examples/game-hip.o examples/sdx_hip.o $(SDL2_LIBS) $(LDLIBS)

# every GPU kernel against the CPU's, stress cases, pipeline goldens
test-gpu: tests/gpu/run
	./tests/gpu/run
tests/gpu/run: tests/gpu/t_gpu.c tests/test.h examples/sdx_hip.o sdx.h sdx_hip.h
	$(CC) $(CFLAGS) -I. -c tests/gpu/t_gpu.c -o tests/gpu/t_gpu.o
	$(GPULD) -o $@ tests/gpu/t_gpu.o examples/sdx_hip.o $(LDLIBS)

# full-size random-weight UNets (SD 1.5 512, SDXL 1024), one CFG step on
# the GPU, beside PyTorch eager fp16 (bench/torch_unet.py) when torch is there
bench-gpu: bench/bench_gpu
	sh bench/bench_gpu.sh
bench/bench_gpu: bench/bench_gpu.c examples/sdx_hip.o sdx.h sdx_hip.h tools/sdx-mkckpt.c
	$(CC) $(CFLAGS) -I. -c bench/bench_gpu.c -o bench/bench_gpu.o
	$(GPULD) -o $@ bench/bench_gpu.o examples/sdx_hip.o $(LDLIBS)

# the same built with other sdx_hip.h macros, for tools/gpu-session.sh's
# side-by-side part: make bench/bench_gpu-NAME GPU_VARIANT="-DMACRO=VALUE"
# (bench_gpu-mma: without Hopper's wgmma GEMMs, the mma.sync 128-tiles)
bench/bench_gpu-mma: GPU_VARIANT = -DSDX_HIP_WGMMA=0
bench/bench_gpu-%: bench/bench_gpu examples/sdx_hip.cu sdx.h sdx_hip.h
	$(GPUCC) -I. $(GPU_VARIANT) -c examples/sdx_hip.cu -o examples/sdx_hip-$*.o
	$(GPULD) -o $@ bench/bench_gpu.o examples/sdx_hip-$*.o $(LDLIBS)
# and the gpu suite on that variant's object (which bench/bench_gpu-NAME builds)
tests/gpu/run-%: tests/gpu/run bench/bench_gpu-%
	$(GPULD) -o $@ tests/gpu/t_gpu.o examples/sdx_hip-$*.o $(LDLIBS)

clean:
	rm -rf build/cross
	rm -f tests/soak tests/run tests/run-san tests/run-tsan tests/run-tsan-lock tests/run-clang tests/run-cpp examples/sdx-vg $(EXAMPLES) $(TOOLS) bench/bench bench/bench_unet bench/bench_decode bench/bench_gen
	rm -f examples/sdx-server examples/game examples/game-tsan examples/game-hip examples/sdx-hip examples/*.o tests/gpu/run tests/gpu/run-* tests/gpu/*.o bench/bench_gpu bench/bench_gpu-* bench/*.o
