#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: what a new user would type.  Records an instrumented program
# that forks a child and runs threads (examples/forker), looks at the log
# with posixtrace dump and stats, converts it to CTF and reads it back with
# babeltrace2 when that is installed, catches a crash with the flight
# recorder and shows where its last events came from (function and line),
# then shows the library used directly
# from C: one process in all three roles, and a controller tracing another
# process by its pid.
set -e
BUILD=${1:-build}
PT=$BUILD/posixtrace
OUT=$BUILD/demo
rm -rf "$OUT"
mkdir -p "$OUT"

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

step "record a program and its children into a log" \
     "posixtrace record -o $OUT/forker.ptlog -- $BUILD/examples/forker -r 2 -t 2"
"$PT" record -o "$OUT/forker.ptlog" -- "$BUILD/examples/forker" -r 2 -t 2

step "read the log back in another process" "posixtrace dump $OUT/forker.ptlog | cut -c1-150"
"$PT" dump "$OUT/forker.ptlog" | cut -c1-150

step "summarise it" "posixtrace stats $OUT/forker.ptlog"
"$PT" stats "$OUT/forker.ptlog"

step "convert it for the tools of the tracing world" \
     "posixtrace convert $OUT/forker.ptlog --to ctf $OUT/ctf"
"$PT" convert "$OUT/forker.ptlog" --to ctf "$OUT/ctf"
"$PT" convert "$OUT/forker.ptlog" --to chrome "$OUT/forker.json"
if command -v babeltrace2 >/dev/null 2>&1; then
	printf '$ babeltrace2 %s | head -n 8 | cut -c1-150\n' "$OUT/ctf"
	babeltrace2 "$OUT/ctf" | head -n 8 | cut -c1-150
else
	echo "(babeltrace2 is not installed: apt-get install babeltrace2 to read $OUT/ctf)"
fi
echo "(open $OUT/forker.json in Perfetto or chrome://tracing)"

step "a flight recorder catches a crash: the newest events, written when the program dies" \
     "posixtrace record --flight-recorder=1M -o $OUT/crash.ptlog -- $BUILD/examples/server -n 100000 -c 99990"
status=0
"$PT" record --flight-recorder=1M -o "$OUT/crash.ptlog" -- "$BUILD/examples/server" -n 100000 -c 99990 ||
	status=$?
echo "(the server's exit status: $status, killed by SIGSEGV as it was told to be)"

step "its last events, each with the function and line that posted it" \
     "posixtrace dump $OUT/crash.ptlog | grep -v posix_trace_ | tail -n 3"
"$PT" dump "$OUT/crash.ptlog" | grep -v posix_trace_ | tail -n 3

step "request durations and the hottest call sites" \
     "posixtrace stats $OUT/crash.ptlog | sed -n '/^durations/,/^lost/p'"
"$PT" stats "$OUT/crash.ptlog" | sed -n '/^durations/,/^lost/p'

step "the library from C: controller, traced threads and analyzer in one process" \
     "$BUILD/examples/demo"
"$BUILD/examples/demo"

step "the library from C: a controller traces another program by its pid" \
     "$BUILD/examples/controller $BUILD/examples/worker"
"$BUILD/examples/controller" "$BUILD/examples/worker"
