# sdx — see README.md. `make` builds the examples and tests, `make test`
# runs the tests, `make sanitize` runs them under ASan+UBSan, `make bench`
# runs the benchmarks, `make fuzz` runs the fuzzers (clang).
CC      ?= cc
CFLAGS  ?= -std=c11 -O2 -Wall -Wextra -Werror
LDLIBS  := -lm -lpthread
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

SRC     := $(wildcard src/*.h src/*.c src/*/*.h src/*/*.c src/license.txt)
TESTSRC := $(wildcard tests/*.c tests/*.h)
EXAMPLES := examples/sdx examples/minimal examples/texture examples/stepper
TOOLS    := tools/sdx-mkckpt tools/sdx-vocab2c

.PHONY: all test sanitize bench bench-sdxl fuzz demo valgrind check-amalgamation clean

# `make demo` generates demo.png; the defaults use the tiny test model.
MODEL  ?= ../shared/golden/sd1/model.safetensors
VOCAB  ?= ../shared/vocab
PROMPT ?= a photograph of an astronaut riding a horse

all: sdx.h tests/run $(EXAMPLES) $(TOOLS)

sdx.h: $(SRC) tools/amalgamate.sh
	sh tools/amalgamate.sh

tests/run: sdx.h $(TESTSRC)
	$(CC) $(CFLAGS) -o $@ tests/main.c -lstb $(LDLIBS)

tests/run-san: sdx.h $(TESTSRC)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror $(SAN) -o $@ tests/main.c -lstb $(LDLIBS)

# clang builds for CI (same flags, no output kept)
tests/run-clang: sdx.h $(TESTSRC)
	$(CC) $(CFLAGS) -o $@ tests/main.c -lstb $(LDLIBS)

examples/sdx-clang: examples/sdx.c sdx.h
	$(CC) $(CFLAGS) -I. -o $@ $< -lstb $(LDLIBS)

examples/%: examples/%.c sdx.h
	$(CC) $(CFLAGS) -I. -o $@ $< -lstb $(LDLIBS)

test: tests/run $(EXAMPLES)
	./tests/run

sanitize: tests/run-san
	SDX_SANITIZE=1 ./tests/run-san

tools/%: tools/%.c sdx.h
	$(CC) $(CFLAGS) -I. -o $@ $< $(LDLIBS)

# kernels vs a naive loop, one SD 1.5 UNet step at 512x512, then TAESD vs
# VAE decodes at 512 and 1024 (random f16 weights generated once under
# /tmp); `make bench-sdxl` adds SDXL at 1024.
bench: bench/bench bench/bench_unet bench/bench_decode
	./bench/bench
	./bench/bench_unet --only sd15 --calls 2
	./bench/bench_decode

bench-sdxl: bench/bench_unet
	./bench/bench_unet --only sdxl --calls 1

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

check-amalgamation:
	sh tools/amalgamate.sh --check

clean:
	rm -f tests/run tests/run-san tests/run-clang examples/sdx-clang examples/sdx-vg $(EXAMPLES) $(TOOLS) bench/bench bench/bench_unet bench/bench_decode
