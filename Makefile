# sdx — see README.md. `make` builds the examples and tests, `make test`
# runs the tests, `make sanitize` runs them under ASan+UBSan, `make bench`
# runs the benchmarks, `make fuzz` runs the fuzzers (clang).
CC      ?= cc
CFLAGS  ?= -std=c11 -O2 -Wall -Wextra -Werror
LDLIBS  := -lm -lpthread
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

SRC     := $(wildcard src/*.h src/*.c src/license.txt)
TESTSRC := $(wildcard tests/*.c tests/*.h)
EXAMPLES := examples/sdx examples/minimal

.PHONY: all test sanitize bench fuzz check-amalgamation clean
all: sdx.h tests/run $(EXAMPLES)

sdx.h: $(SRC) tools/amalgamate.sh
	sh tools/amalgamate.sh

tests/run: sdx.h $(TESTSRC)
	$(CC) $(CFLAGS) -o $@ tests/main.c $(LDLIBS)

tests/run-san: sdx.h $(TESTSRC)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror $(SAN) -o $@ tests/main.c $(LDLIBS)

examples/%: examples/%.c sdx.h
	$(CC) $(CFLAGS) -I. -o $@ $< $(LDLIBS)

test: tests/run
	./tests/run

sanitize: tests/run-san
	SDX_SANITIZE=1 ./tests/run-san

bench: bench/bench
	./bench/bench

bench/bench: bench/bench.c sdx.h
	$(CC) $(CFLAGS) -march=native -I. -o $@ bench/bench.c $(LDLIBS)

check-amalgamation:
	sh tools/amalgamate.sh --check

clean:
	rm -f tests/run tests/run-san $(EXAMPLES) bench/bench
