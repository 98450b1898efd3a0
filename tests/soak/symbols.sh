#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak: the symbolizer against the attacks at full size (tests/soak/symsoak.c):
# a compressed .debug_str claiming 1 GiB, 200,000 sites in one image, 20,000
# compile units sharing a 2,000-entry range list, 90,000 functions sharing a
# 1,000-entry list, 1,500 spellings of one program, 4 spellings of a file whose
# .debug_str is a 512 MiB hole.  Each mode prints its sites, seconds, peak
# RSS, work and notes; each runs under a time limit (LIMIT seconds) and in a
# scratch directory removed at the end.  `make check` does not run this.
# Usage: sh tests/soak/symbols.sh [BUILD_DIR [SITES [LIMIT]]]
#        (defaults: build, 200, 600; BUILD_DIR/tests/soak/symsoak must be built)
BUILD=${1:-build}
SITES=${2:-200}
LIMIT=${3:-600}
prog=$BUILD/tests/soak/symsoak
[ -x "$prog" ] || { echo "no $prog: run make BUILD=$BUILD $prog first" >&2; exit 2; }
case $SITES$LIMIT in *[!0-9]*) echo "usage: $0 [BUILD_DIR [SITES [LIMIT]]]" >&2; exit 2;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/symsoak.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT INT TERM
failed=0
for mode in compressed sites units functions spellings hole; do
	# a mode writes files of at most 513 MiB: a cap of 2^21 blocks (1 or 2 GiB)
	( ulimit -f $((1 << 21)); exec timeout -s KILL "$LIMIT" "$prog" "$mode" "$dir" "$SITES" )
	rc=$?
	[ $rc -eq 0 ] || { echo "$mode: exit $rc"; failed=$((failed + 1)); }
	rm -f "$dir"/*
done
echo "$((6 - failed)) of 6 modes ran"
[ $failed -eq 0 ]
