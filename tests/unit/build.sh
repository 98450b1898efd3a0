#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds and runs the unit tests of the trace log component (src/log/) on their own, without
# the rest of the library: from the Makefile's list of the log's files (LOG_SRCS) and of what
# the log needs below it (LOG_BELOW_SRCS).
#
#   sh tests/unit/build.sh              gcc and clang builds (-Werror), each
#                                       run; then a run under ASan + UBSan
#   sh tests/unit/build.sh bench        writer vs plain write(), reader rate
#   sh tests/unit/build.sh fuzz SECONDS libFuzzer over the reader (clang),
#                                       from a corpus of real logs
#
# Output goes to $BUILD (default build-unit) at the top of the repository.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-unit}
mkdir -p "$BUILD"
make_list() { make --no-print-directory -s BUILD="$BUILD" "print-$1"; }
LOG_SRCS=$(make_list LOG_SRCS)
BELOW_SRCS=$(make_list LOG_BELOW_SRCS)
[ -n "$LOG_SRCS" ] && [ -n "$BELOW_SRCS" ] || { echo "build.sh: no file list from the Makefile" >&2; exit 2; }
# the reader is included by the test itself
SRCS=$(for f in $LOG_SRCS $BELOW_SRCS; do [ "$f" = src/log/logread.c ] || echo "$f"; done | tr '\n' ' ')
# the test harness's functions, the part that needs no library (tests/harness.c)
HARNESS_SRCS=tests/harness.c
FLAGS="-std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude"
CHECK=$(pkg-config --cflags --libs check)

build() { # CC OUT EXTRA...
	cc=$1 out=$2
	shift 2
	# shellcheck disable=SC2086
	$cc $FLAGS "$@" $SRCS tests/unit/t_logformat.c $HARNESS_SRCS -o "$out" $CHECK -lpthread
}

mode=${1:-test}
case $mode in
test)
	status=0
	build gcc "$BUILD/t_logformat" -O2 -g
	echo "== t_logformat (gcc -O2)"
	"$BUILD/t_logformat" || status=1
	if command -v clang >/dev/null 2>&1; then
		build clang "$BUILD/t_logformat-clang" -O2 -g
		echo "== t_logformat (clang -O2)"
		"$BUILD/t_logformat-clang" || status=1
	else
		echo "build.sh: clang build SKIPPED (clang not installed)"
	fi
	build gcc "$BUILD/t_logformat-san" -O1 -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all -fno-omit-frame-pointer
	echo "== t_logformat (ASan + UBSan)"
	ASAN_OPTIONS=detect_leaks=1 "$BUILD/t_logformat-san" || status=1
	exit $status
	;;
bench)
	build gcc "$BUILD/t_logformat" -O2 -g
	"$BUILD/t_logformat" bench
	;;
fuzz)
	seconds=${2:-60}
	command -v clang >/dev/null 2>&1 || { echo "build.sh: fuzz SKIPPED (no clang)"; exit 0; }
	build gcc "$BUILD/t_logformat" -O2 -g
	rm -rf "$BUILD/fuzz-corpus"
	mkdir -p "$BUILD/fuzz-corpus"
	"$BUILD/t_logformat" seeds "$BUILD/fuzz-corpus"
	# shellcheck disable=SC2086
	clang $FLAGS -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
		tests/fuzz/fuzz_logread.c $SRCS -o "$BUILD/fuzz_logread" -lpthread
	"$BUILD/fuzz_logread" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=2048 \
		-timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/" "$BUILD/fuzz-corpus"
	;;
*)
	echo "usage: sh tests/unit/build.sh [test | bench | fuzz SECONDS]" >&2
	exit 2
	;;
esac
