#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak: posixtrace's stats and convert at the sizes that cost them before
# they were bounded.  First t_toolbounds with its logs at full size (times
# going back 200,000 times per stream, 200,000 threads, 15 million pairs):
# its checks (stream count, babeltrace2, percentiles, peak memory) and
# each command's peak memory and time.  Then an honest log of 30 million
# events, recorded by `posixtrace record` from a program posting begin/end
# pairs (tests/helpers/wl_post), and dump, stats, convert --to ctf and
# --to chrome of it (to standard output, thrown away), each with its peak
# memory and time (GNU time when installed); with OTHER (another posixtrace command, such as an older
# build) the same commands again with it, to compare.  Needs about 2 GB of
# disk under TMPDIR.  `make check` does not run this.
# Usage: sh tests/soak/toolbounds.sh [BUILD_DIR [EVENTS [OTHER]]]
#        (defaults: build, 30000000; the tests and helpers must be built)
BUILD=${1:-build}
EVENTS=${2:-30000000}
OTHER=${3:-}
PT=$BUILD/posixtrace
prog=$BUILD/tests/t_toolbounds
post=$BUILD/tests/helpers/wl_post
for f in "$PT" "$prog" "$post"; do
	[ -x "$f" ] || { echo "no $f: run make BUILD=$BUILD all tests first" >&2; exit 2; }
done
case $EVENTS in '' | *[!0-9]*) echo "usage: $0 [BUILD_DIR [EVENTS [OTHER]]]" >&2; exit 2;; esac
failed=0

T=$(mktemp -d "${TMPDIR:-/tmp}/pt-soak-tools.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

echo "== t_toolbounds at full size"
PT_TOOLBOUNDS_BACK=200000 PT_TOOLBOUNDS_THREADS=200000 PT_TOOLBOUNDS_PAIRS=15000000 \
	CK_TIMEOUT_MULTIPLIER=10 "$prog" >"$T/tb.txt" 2>&1 || failed=1
grep -v 'no symbols' "$T/tb.txt"
echo "== an honest log of $EVENTS events"
start=$(date +%s)
"$PT" record -o "$T/big.ptlog" --size 64M -- "$post" -c "$EVENTS" -n x_begin -n x_end -a 3600 \
	>/dev/null 2>"$T/record.err" || { cat "$T/record.err"; failed=1; }
echo "recorded in $(( $(date +%s) - start )) s: $(tail -n 1 "$T/record.err")"

# measure LABEL CMD...: peak resident memory and time of CMD, output thrown away
measure() {
	label=$1; shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%M KB %e s" -o "$T/time.txt" "$@" >/dev/null 2>"$T/err.txt" ||
			{ echo "$label: failed: $(tail -n 2 "$T/err.txt")"; failed=1; return; }
		set -- $(cat "$T/time.txt")
		echo "$label: $(( $1 / 1024 )) MB peak, $3 s"
	else
		s=$(date +%s); "$@" >/dev/null 2>"$T/err.txt" || { echo "$label: failed"; failed=1; return; }
		echo "$label: $(( $(date +%s) - s )) s (no /usr/bin/time: peak not measured)"
	fi
}
for cmd in "$PT" $OTHER; do
	echo "-- $cmd"
	measure "dump" "$cmd" dump "$T/big.ptlog"
	measure "stats" "$cmd" stats "$T/big.ptlog"
	rm -rf "$T/big.ctf"
	measure "convert --to ctf" "$cmd" convert "$T/big.ptlog" --to ctf "$T/big.ctf"
	rm -rf "$T/big.ctf"
	measure "convert --to chrome" "$cmd" convert "$T/big.ptlog" --to chrome -
done
[ $failed -eq 0 ] && echo "toolbounds soak passed" || echo "toolbounds soak FAILED"
[ $failed -eq 0 ]
