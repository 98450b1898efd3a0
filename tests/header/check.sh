#!/bin/sh
# SPDX-License-Identifier: MIT
# Compiles every tests/header/ source against include/trace.h in every language mode
# with every compiler present: C files as C99, C11 and C17, each plain, with
# -D_GNU_SOURCE and with -D_POSIX_C_SOURCE=200809L, under gcc and clang; C++ files as
# C++11 and C++17 under g++ and clang++; at -O0, and again at -O2 for C11 and C++17
# (the posix_trace_event() macro takes another path there).  Warnings are errors
# (-Wall -Wextra -Werror -pedantic, plus -Wundef and -Wshadow, and
# -Wstrict-prototypes for C).  Each object must refer to
# all 50 posix_trace_* functions by their unmangled (C linkage) names.
# Prints one line per combination; exits non-zero if any fails.
# Usage, from the repository root: sh tests/header/check.sh
cd "$(dirname "$0")/../.." || exit 2
dir=tests/header
tmp=$(mktemp -d /tmp/pt_header.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

WARN="-Wall -Wextra -Werror -pedantic -Wundef -Wshadow"
NFUNCS=50
pass=0; fail=0

have() { command -v "$1" >/dev/null 2>&1; }

# run COMPILER FILE FLAGS...
run() {
	cc=$1; src=$2; shift 2
	obj="$tmp/$(basename "$src").o"
	label="$cc $* $(basename "$src")"
	case "$*" in *-O[0-9]*) opt="" ;; *) opt=-O0 ;; esac
	if ! "$cc" "$@" $WARN $opt -Iinclude -c "$src" -o "$obj" >"$tmp/log" 2>&1; then
		echo "FAIL $label"; sed 's/^/     /' "$tmp/log"; fail=$((fail + 1)); return
	fi
	if have nm; then
		n=$(nm -u "$obj" | awk '{print $NF}' | grep -E '^posix_trace_[a-z_]+$' | sort -u | wc -l)
		if [ "$n" -ne "$NFUNCS" ]; then
			echo "FAIL $label: refers to $n of the $NFUNCS functions by their C names"
			fail=$((fail + 1)); return
		fi
	fi
	echo "ok   $label"; pass=$((pass + 1))
}

for cc in gcc clang; do
	have "$cc" || { echo "skip $cc (not installed)"; continue; }
	for std in c99 c11 c17; do
		for def in "" -D_GNU_SOURCE -D_POSIX_C_SOURCE=200809L; do
			for src in "$dir"/*.c; do
				run "$cc" "$src" -std=$std $def -Wstrict-prototypes
			done
		done
	done
	for src in "$dir"/*.c; do
		run "$cc" "$src" -std=c11 -O2 -Wstrict-prototypes
	done
done

for cxx in g++ clang++; do
	have "$cxx" || { echo "skip $cxx (not installed)"; continue; }
	for std in c++11 c++17; do
		for src in "$dir"/*.cc; do
			run "$cxx" "$src" -std=$std
		done
	done
	for src in "$dir"/*.cc; do
		run "$cxx" "$src" -std=c++17 -O2
	done
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
