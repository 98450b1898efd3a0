#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak: the workload tests (t_workload, t_wlthreads) at a larger scale, several rounds.
# PT_WORKLOAD_SCALE multiplies their counts (a shell loop of 2,000 x SCALE
# processes, 200 x SCALE build jobs, 5,000 x SCALE requests per server worker,
# 2,000 x SCALE short-lived threads, 60 x SCALE events per thread of 1,000,
# 50 x SCALE fork-first runs, an idle phase of 5 x SCALE seconds) and Check's
# timeouts are stretched to match.  `make check` does not run this.
# Usage: sh tests/soak/workload.sh [BUILD_DIR [SCALE [ROUNDS]]]
#        (defaults: build, 5, 3; the tests and helpers must be built)
BUILD=${1:-build}
SCALE=${2:-5}
ROUNDS=${3:-3}
progs="$BUILD/tests/t_workload $BUILD/tests/t_wlthreads"
for prog in $progs; do
	[ -x "$prog" ] || { echo "no $prog: run make BUILD=$BUILD all tests first" >&2; exit 2; }
done
case $SCALE$ROUNDS in *[!0-9]*) echo "usage: $0 [BUILD_DIR [SCALE [ROUNDS]]]" >&2; exit 2;; esac
export PT_TEST_HELPERS="$BUILD/tests/helpers"
export PT_WORKLOAD_SCALE=$SCALE
export CK_TIMEOUT_MULTIPLIER=$((SCALE * 2))
failed=0
round=1
while [ "$round" -le "$ROUNDS" ]; do
	start=$(date +%s)
	rc=0
	for prog in $progs; do
		out=$("$prog" 2>&1) || rc=$?
		printf '%s\n' "$out" | sed "s|^|[round $round] |"
	done
	echo "[round $round] exit $rc after $(( $(date +%s) - start )) s"
	[ $rc -eq 0 ] || failed=$((failed + 1))
	round=$((round + 1))
done
echo "$((ROUNDS - failed)) of $ROUNDS rounds passed (scale $SCALE)"
[ $failed -eq 0 ]
