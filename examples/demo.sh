#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: what a new user would type.  Records an instrumented program
# that forks a child and runs threads (examples/forker), looks at the log
# with posixtrace dump and stats, converts it to CTF and reads it back with
# babeltrace2 when that is installed, catches a crash with the flight
# recorder and shows where its last events came from (function and line),
# converts for Perfetto, rotates a log, archives the files symbols need,
# encodes spans for an OpenTelemetry Collector (from a log and while
# recording), reads two hosts' logs as one, then shows the library used directly
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

step "Perfetto's own format, smaller (compressed: smaller still), with a window and the CPU of each event" \
     "posixtrace convert $OUT/forker.ptlog --to perfetto $OUT/forker.pftrace [--compression deflate]; posixtrace dump --cpu ... | head -n 3"
"$PT" convert "$OUT/forker.ptlog" --to perfetto "$OUT/forker.pftrace"
"$PT" convert "$OUT/forker.ptlog" --to perfetto "$OUT/child.pftrace" --only forker:child
printf '%s bytes of Perfetto protobuf, %s of Chrome JSON; %s bytes with --only forker:child\n' \
	"$(wc -c <"$OUT/forker.pftrace")" "$(wc -c <"$OUT/forker.json")" "$(wc -c <"$OUT/child.pftrace")"
if "$PT" convert "$OUT/forker.ptlog" --to perfetto "$OUT/forker-deflate.pftrace" --compression deflate \
	2>/dev/null; then
	printf '%s bytes with --compression deflate (read by every trace_processor)\n' \
		"$(wc -c <"$OUT/forker-deflate.pftrace")"
else
	echo "(--compression deflate: this posixtrace was built without zlib)"
fi
"$PT" dump --cpu "$OUT/forker.ptlog" | sed -n 2,4p | cut -c1-150
echo "(open $OUT/forker.pftrace in ui.perfetto.dev, or: trace_processor_shell $OUT/forker.pftrace)"

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

step "a long run in rotated files (a new one past 64 KiB, at the end of a drain), the newest 3 kept, read as one trace" \
     "posixtrace record --rotate 64K,3 -o $OUT/rotated -- sh -c 'for i in \$(seq 300); do server -n 300; done'"
"$PT" record --rotate 64K,3 -o "$OUT/rotated" -- \
	sh -c 'for i in $(seq 300); do "$0" -n 300; done' "$BUILD/examples/server" >/dev/null
ls "$OUT/rotated"
"$PT" stats "$OUT/rotated" | sed -n 1,2p

step "the files its call sites need, by build id, to read the log on another machine" \
     "posixtrace archive $OUT/crash.ptlog $OUT/crash.symfs"
"$PT" archive "$OUT/crash.ptlog" "$OUT/crash.symfs"
"$PT" dump "$OUT/crash.ptlog" --symfs "$OUT/crash.symfs" | grep -v posix_trace_ | tail -n 2 | head -n 1 |
	cut -c1-150

step "spans for an OpenTelemetry Collector (here encoded and thrown away: --otlp URL sends them)" \
     "posixtrace export $OUT/crash.ptlog --discard"
"$PT" export "$OUT/crash.ptlog" --discard 2>&1 | cut -c1-150 ||
	echo "(posixtrace was built without libcurl: export says why)"

step "spans sent while recording (here encoded and thrown away: --otlp URL sends each rotated file as it closes)" \
     "posixtrace record --discard -o $OUT/live.d -- server -n 2000"
"$PT" record --discard -o "$OUT/live.d" -- "$BUILD/examples/server" -n 2000 2>&1 >/dev/null | grep otlp | cut -c1-150 ||
	echo "(posixtrace was built without libcurl: record --otlp says why)"

step "two logs read as one time line (the second recorded under another host name when unshare can)" \
     "posixtrace dump $OUT/forker.ptlog $OUT/other.ptlog | head -n 4; posixtrace stats ... | grep host"
if unshare --uts true 2>/dev/null; then
	unshare --uts sh -c 'hostname demo-other && "$0" record -o "$1" -- "$2" -n 200' \
		"$PT" "$OUT/other.ptlog" "$BUILD/examples/server" >/dev/null
else
	"$PT" record -o "$OUT/other.ptlog" -- "$BUILD/examples/server" -n 200 >/dev/null
fi
"$PT" dump "$OUT/forker.ptlog" "$OUT/other.ptlog" | head -n 4 | cut -c1-150
"$PT" stats "$OUT/forker.ptlog" "$OUT/other.ptlog" | grep -i host | head -n 4 | cut -c1-150

step "the library from C: controller, traced threads and analyzer in one process" \
     "$BUILD/examples/demo"
"$BUILD/examples/demo"

step "the library from C: a controller traces another program by its pid" \
     "$BUILD/examples/controller $BUILD/examples/worker"
"$BUILD/examples/controller" "$BUILD/examples/worker"
