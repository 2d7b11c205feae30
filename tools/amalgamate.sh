#!/bin/sh
# Builds sdx.h from src/. The declaration half is src/api.h expanded, the
# implementation half src/impl.c expanded: each local #include "..." is
# replaced by the file it names, each file once and at its first include,
# so the order of the parts is the order their includes give (what a
# compiler sees when it builds a part alone) and lives in the sources, not
# here. `#pragma once` lines are dropped. Every .c and .h below src/ must
# be reached (src/hip/ feeds sdx_hip.h instead).
#
#   tools/amalgamate.sh              write sdx.h
#   tools/amalgamate.sh -o FILE      write FILE
#   tools/amalgamate.sh --check      exit 1 when the committed sdx.h is stale
#   SDX_ONLY="core/json.c ..." tools/amalgamate.sh -o FILE
#       a header with only those parts (and what they include), for
#       harnesses that need a small build
set -eu
cd "$(dirname "$0")/.."
OUT=sdx.h
if [ "${1:-}" = "-o" ]; then OUT=$2; shift 2; fi

emit() {
    cat src/prologue.h
    ALL=""
    [ -n "${SDX_ONLY:-}" ] || ALL=$(cd src && find . \( -name '*.c' -o -name '*.h' \) ! -path './hip/*' \
        ! -name prologue.h ! -name api.h ! -name impl.c | sed 's|^\./||' | sort | tr '\n' ' ')
    awk -v roots="${SDX_ONLY:-}" -v all="$ALL" '
    function norm(p) {
        while (sub(/(^|\/)\.\//, "/", p)) ;
        sub(/^\//, "", p)
        while (sub(/[^\/.][^\/]*\/\.\.\//, "", p)) ;
        return p
    }
    # prints a file with its includes expanded in place; a root prints
    # only what it includes
    function expand(path, root,    line, inc, dir, rc) {
        if (path in seen) return
        seen[path] = 1
        dir = path; sub(/[^\/]*$/, "", dir)
        while ((rc = (getline line < ("src/" path))) > 0) {
            if (line ~ /^#pragma once[ \t]*$/) continue
            if (line ~ /^#include "[^"]+"/) {
                inc = line; sub(/^#include "/, "", inc); sub(/".*/, "", inc)
                expand(norm(dir inc), 0)
                continue
            }
            if (root) continue
            if (marked != path) {   # a part resumes after the parts it includes
                print ""
                print "/* ---- src/" path ((path in begun) ? " (continued)" : "") " ---- */"
                marked = path; begun[path] = 1
            }
            print line
        }
        if (rc < 0) { print "amalgamate: cannot read src/" path > "/dev/stderr"; failed = 1; exit 2 }
        close("src/" path)
    }
    BEGIN {
        print "#ifndef SDX_H_INCLUDED"
        print "#define SDX_H_INCLUDED"
        expand("api.h", 1)
        print ""
        print "#endif /* SDX_H_INCLUDED */"
        print ""
        print "#if defined(SDX_IMPLEMENTATION) && !defined(SDX_IMPLEMENTATION_DONE)"
        print "#define SDX_IMPLEMENTATION_DONE"
        print "/* Internals are static; not every program uses every one of them. */"
        print "#if defined(__GNUC__) || defined(__clang__)"
        print "#pragma GCC diagnostic push"
        print "#pragma GCC diagnostic ignored \"-Wunused-function\""
        print "#endif"
        if (roots != "") {
            n = split(roots, r, " ")
            for (i = 1; i <= n; i++) expand(norm(r[i]), 0)
        } else expand("impl.c", 1)
        print ""
        print "#if defined(__GNUC__) || defined(__clang__)"
        print "#pragma GCC diagnostic pop"
        print "#endif"
        print "#endif /* SDX_IMPLEMENTATION */"
        n = split(all, a, " ")
        for (i = 1; i <= n; i++)
            if (!(a[i] in seen)) { print "amalgamate: src/" a[i] " is not included from src/impl.c or src/api.h" > "/dev/stderr"; failed = 1 }
        exit failed ? 2 : 0
    }'
    cat src/license.txt
}

if [ "${1:-}" = "--check" ]; then
    tmp=$(mktemp)
    emit > "$tmp" || { rm -f "$tmp"; exit 2; }
    if cmp -s "$tmp" sdx.h; then rm -f "$tmp"; echo "sdx.h is up to date"; exit 0; fi
    rm -f "$tmp"
    echo "sdx.h is out of date: run tools/amalgamate.sh and commit it" >&2
    exit 1
fi
# a private temporary name: several builds may amalgamate at once
emit > "$OUT.tmp.$$" || { rm -f "$OUT.tmp.$$"; exit 2; }
mv "$OUT.tmp.$$" "$OUT"
