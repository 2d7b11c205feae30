#!/bin/sh
# Builds the libFuzzer harnesses fuzz/fuzz_<target>.c with clang
# (-fsanitize=fuzzer,address,undefined) and runs each for a while.
#
#   fuzz/run.sh [seconds] [targets...]      default: 60 s, every target
#   fuzz/run.sh 0 [targets...]              replay seeds and saved crashes only
#   fuzz/run.sh --runs N [targets...]       each target until N executions
#                                           (make fuzz-long: 1e7), one at a time
#
# Seeds: fuzz/corpus/<target>/ (small, committed). New inputs found while
# fuzzing go to fuzz/bin/corpus/<target>/ (ignored by git), crashes to
# fuzz/bin/artifacts/<target>/. Minimised reproducers of fixed bugs live
# in fuzz/crashes/<target>/ and are replayed on every run.
# Environment: CLANG (default clang), FUZZ_FLAGS (extra libFuzzer flags),
# FUZZ_CFLAGS (extra compiler flags, e.g. -fno-sanitize=... to look past a
# known finding),
# FUZZ_FULL=1 (build against the whole sdx.h instead of a partial
# amalgamation of the parts each harness needs),
# SDX_SHARED (golden data; the tokenizer target needs shared/vocab),
# FUZZ_JOBS (harnesses compiled at once, and timed runs; default: one per
# core).
# Exit status: 0 when no target found anything, 1 otherwise, 2 on a
# build failure.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUNS=""
if [ "${1:-}" = --runs ]; then
    RUNS=${2:-}
    case $RUNS in ''|*[!0-9]*) echo "run.sh: --runs needs a number of executions" >&2; exit 2 ;; esac
    SECONDS_EACH=-
    shift 2
else
    SECONDS_EACH=${1:-60}
    [ $# -gt 0 ] && shift
fi
TARGETS=${*:-$(ls fuzz/fuzz_*.c | sed 's|fuzz/fuzz_||; s|\.c$||')}
CLANG=${CLANG:-clang}
BIN=fuzz/bin
CFLAGS="-std=c11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"

# Parts each harness needs (the context to run them, and what they include)
# and its input size limit.
parts() {
    case $1 in
    safetensors|json|gguf) echo "cpu/backend.c core/safetensors.c" ;;
    inflate) echo "cpu/backend.c core/inflate.c" ;;
    tokenizer|prompt|vocab) echo "cpu/backend.c text/prompt.c" ;;
    *) echo "" ;;
    esac
}
max_len() {
    case $1 in
    safetensors|gguf|inflate|vocab) echo 65536 ;;
    json) echo 16384 ;;
    *) echo 4096 ;;
    esac
}

mkdir -p "$BIN"
status=0

# build TARGET: compiles fuzz/fuzz_TARGET.c when it, what it includes or
# the flags changed; its output says what it did
build() {
    t=$1
    src=fuzz/fuzz_$t.c
    exe=$BIN/fuzz_$t
    # Each harness compiles the engine into itself. By default it includes
    # a partial amalgamation of just the src/ parts it needs (same code as
    # sdx.h, a tenth of the compile time); FUZZ_FULL=1 includes sdx.h.
    if [ "${FUZZ_FULL:-0}" = 1 ]; then
        header=sdx.h
        hflag=""
    else
        header=$BIN/sdx_$t.h
        SDX_ONLY=$(parts "$t") sh tools/amalgamate.sh -o "$ROOT/$header.new" || return 1
        if cmp -s "$header.new" "$header"; then rm -f "$header.new"; else mv "$header.new" "$header"; fi
        hflag="-DSDX_FUZZ_HEADER=\"$ROOT/$header\""
    fi
    extra=""
    # the inflate harness compares against zlib when it is installed
    if [ "$t" = inflate ] && echo '#include <zlib.h>' | $CLANG -E -x c - > /dev/null 2>&1; then extra="-DFZ_ZLIB -lz"; fi
    flags="$CFLAGS ${FUZZ_CFLAGS:-} $hflag $extra"
    if [ ! -x "$exe" ] || [ "$header" -nt "$exe" ] || [ "$src" -nt "$exe" ] || [ fuzz/fuzz.h -nt "$exe" ] || [ fuzz/fuzz_st.h -nt "$exe" ] ||
       [ "$flags" != "$(cat "$exe.flags" 2>/dev/null)" ]; then
        echo "== build $t"
        # shellcheck disable=SC2086
        $CLANG $CFLAGS ${FUZZ_CFLAGS:-} $hflag -o "$exe" "$src" $extra -lm -lpthread || return 1
        echo "$flags" > "$exe.flags"
    fi
}

# The harnesses compile FUZZ_JOBS at a time.
for t in $TARGETS; do
    if [ ! -f "fuzz/fuzz_$t.c" ]; then echo "run.sh: no harness fuzz/fuzz_$t.c" >&2; exit 2; fi
done
. tools/batch.sh
# shellcheck disable=SC2086
in_batches build "${FUZZ_JOBS:-$(cores)}" "$BIN/build" $TARGETS || { echo "run.sh: a build failed" >&2; exit 2; }

# fuzz TARGET: replays or fuzzes it; its summary line goes to
# $BIN/TARGET.line, and "found" to $BIN/TARGET.found when it found something
# (the return is 0 either way, so that the other targets still run)
fuzz() {
    t=$1
    exe=$BIN/fuzz_$t
    rm -f "$BIN/$t.line" "$BIN/$t.found"
    mkdir -p "$BIN/corpus/$t" "$BIN/artifacts/$t" "fuzz/corpus/$t" "fuzz/crashes/$t"
    log=$BIN/$t.log
    dict=""
    [ -f "fuzz/dict/$t.dict" ] && dict="-dict=fuzz/dict/$t.dict"
    if [ "$SECONDS_EACH" = 0 ]; then
        echo "== replay $t"
        set -- $(find "fuzz/corpus/$t" "fuzz/crashes/$t" -type f | sort)
        if [ $# -eq 0 ]; then echo "   (no inputs)"; return 0; fi
        if "$exe" -runs=1 "$@" > "$log" 2>&1; then
            line="$t: replayed $# inputs, ok"
        else
            line="$t: REPLAY FAILED (see $log)"; echo found > "$BIN/$t.found"
            tail -n 40 "$log"
        fi
        echo "$line"
        echo "$line" > "$BIN/$t.line"
        return 0
    fi
    before=$(ls "$BIN/artifacts/$t" | wc -l)
    if [ -n "$RUNS" ]; then
        limit="-runs=$RUNS"
        echo "== fuzz $t for $RUNS executions"
    else
        limit="-max_total_time=$SECONDS_EACH"
        echo "== fuzz $t for ${SECONDS_EACH}s"
    fi
    start=$(date +%s)
    # shellcheck disable=SC2086
    nice -n 10 "$exe" $limit -timeout=10 -rss_limit_mb=2048 \
        -max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$BIN/artifacts/$t/" \
        $dict ${FUZZ_FLAGS:-} "$BIN/corpus/$t" "fuzz/corpus/$t" "fuzz/crashes/$t" > "$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(( ${execs:-0} / (took > 0 ? took : 1) ))
    # the fuzzer's corpus at the end (units/size), and the files kept so far
    corpus="$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1 | sed 's/corp: //') ($(ls "$BIN/corpus/$t" | wc -l) files)"
    found=$(( $(ls "$BIN/artifacts/$t" | wc -l) - before ))
    if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
        echo found > "$BIN/$t.found"
        line="$t: ${execs:-?} executions, corpus $corpus, FOUND $found (exit $rc); artifacts in $BIN/artifacts/$t, log $log"
        grep -m1 -E "ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error|invariant violated" "$log"
        grep -E "^ +#[0-9]+ " "$log" | head -n 12
    else
        line="$t: ${execs:-?} executions in ${took}s (${rate}/s), corpus $corpus, no findings"
        # a FUZZ_FLAGS=-max_total_time=S cap can end a --runs run early
        if [ -n "$RUNS" ] && [ "${execs:-0}" -lt "$RUNS" ]; then line="$line, stopped short of $RUNS"; fi
    fi
    echo "$line"
    echo "$line" > "$BIN/$t.line"
}

# Timed runs FUZZ_JOBS at a time (a fuzzer is one process on one core);
# runs to a number of executions and replays one after another.
jobs=1
[ -z "$RUNS" ] && [ "$SECONDS_EACH" != 0 ] && jobs=${FUZZ_JOBS:-$(cores)}
# shellcheck disable=SC2086
in_batches fuzz "$jobs" "$BIN/out" $TARGETS
summary=""
for t in $TARGETS; do
    [ -f "$BIN/$t.line" ] && summary="$summary$(cat "$BIN/$t.line")
"
    [ -f "$BIN/$t.found" ] && status=1
done
echo "== summary"
printf "%s" "$summary"
exit $status
