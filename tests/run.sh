#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every test program (each test inside it is forked with a timeout by
# Check) and ends with one summary line: "N passed, N failed".
# Usage: BUILD=build sh tests/run.sh [NAME...]   (NAME: t_attr, ...)
BUILD=${BUILD:-build}
# Counts of checks run before this script (make check's script checks).
passed=${PT_EXTRA_PASSED:-0}; failed=${PT_EXTRA_FAILED:-0}; broken=""
only=""
# Each failed test's own line, repeated before the summary so that a log's
# tail names what failed.
failures=""
if [ $# -gt 0 ]; then
	only=none; progs=""
	for n in "$@"; do
		if [ "$n" = cli ]; then only=cli; else progs="$progs $BUILD/tests/$n"; fi
	done
else
	progs=$(ls "$BUILD"/tests/t_* 2>/dev/null)
fi
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-20}
export PT_TEST_HELPERS="$BUILD/tests/helpers"
for p in $progs; do
	name=$(basename "$p")
	out=$("$p" 2>&1); rc=$?
	printf '%s\n' "$out" | sed "s|^|[$name] |"
	bad=$(printf '%s\n' "$out" | grep -E ':[0-9]+:[FE]:' | sed "s|^|[$name] |")
	[ -n "$bad" ] && failures="$failures$bad
"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -n 1)
	if [ -z "$line" ]; then
		failed=$((failed + 1)); broken="$broken $name"; continue
	fi
	n=$(printf '%s' "$line" | sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/')
	set -- $n
	passed=$((passed + $1 - $2 - $3)); failed=$((failed + $2 + $3))
	[ $rc -ne 0 ] && [ $(($2 + $3)) -eq 0 ] && { failed=$((failed + 1)); broken="$broken $name"; }
done
# The posixtrace command's tests (a shell script with its own count).
if [ -z "$only" ] || [ "$only" = cli ]; then
	out=$(sh tests/cli/run.sh "$BUILD" 2>&1); rc=$?
	printf '%s\n' "$out" | sed "s|^|[cli] |"
	bad=$(printf '%s\n' "$out" | grep -E '^FAIL' | sed "s|^|[cli] |")
	[ -n "$bad" ] && failures="$failures$bad
"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then
		failed=$((failed + 1)); broken="$broken cli"
	else
		set -- $line
		passed=$((passed + $1)); failed=$((failed + $3))
		[ $rc -ne 0 ] && [ "$3" -eq 0 ] && { failed=$((failed + 1)); broken="$broken cli"; }
	fi
fi
[ -n "$failures" ] && printf 'failed:\n%s' "$failures"
[ -n "$broken" ] && echo "programs that did not finish cleanly:$broken"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
