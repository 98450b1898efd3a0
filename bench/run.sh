#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/run.sh BUILD: run by `make bench` once BUILD/bench/bench_event,
# bench_log and floor are built.  Everything it needs is in bench/:
#   BUILD/bench/bench_event  posixtrace: recording, filtering, analyzers,
#                            stream memory (one process per repetition)
#   BUILD/bench/bench_log    posixtrace: writing a log, reading one back,
#                            a paced writer; it also times the command
#   BUILD/posixtrace         the command (built here with make, as `make`
#                            builds it): dump and convert of a log
#   BUILD/bench/bench_sites  a program with 1,000 call sites, recorded
#                            with posixtrace record: dump with symbols
#   BUILD/bench/floor        clock costs and a minimal per-thread ring
#   bench/peer/              the LTTng-UST peer, built here into
#                            BUILD/bench/peer against Debian's
#                            liblttng-ust-dev (installed with apt-get when
#                            run as root), run with and without contexts and
#                            with the tracepoint disabled
# Repetitions are interleaved (every program once, then again), so a slow
# phase of the machine hits every row alike.  Prints one table (median, min,
# max over the repetitions) and then the performance targets, each with its
# value from this run, its limit and "met" or "NOT MET".  A target that
# compares two programs (the event and the floor, LTTng-UST, two writers,
# nesting on and off) is the median of its per-pair values, a pair being
# the two programs' runs in one repetition, with their quartiles and range.  Targets are
# measured, not asserted: a target that is not met does not fail the run;
# a program that fails does (after the table).
#
# Knobs (environment): REPS [9] repetitions;  SCALE [1] multiplies every
# event count;  N [4000000] events per enabled LTTng run;  N_DISABLED
# [50000000] calls of the disabled tracepoint;  N_LOGW [8000000] events
# posted per log write;  N_LOGR [4000000] events in the log read back;
# BT_REPS [3] repetitions in which babeltrace2 also counts LTTng's trace
# and prints the CTF conversion of the log read back;  PACED_SECONDS [10]
# of a paced writer, PACED_REPS [3] repetitions that run it;
# SKIP_FLOOR=1, SKIP_LTTNG=1, SKIP_LOG=1, SKIP_PACED=1, SKIP_TOOL=1;
# NO_INSTALL=1 (never apt-get);
# CC [cc] compiles the peer;  RUN_TIMEOUT [300] seconds one program may take;
# BASE_EVENT [396aa2f], BASE_READ [22ad7c4] and BASE_CPU [54e355e], the
# commits of the baseline libraries (SKIP_BASE=1: none);  SKIP_CALLGRIND=1;
# BENCH_CLOCK [cpu]: the clock bench_event, floor and the LTTng peer time
# their loops with (cpu: the timed thread's own CPU time, which leaves out
# the time other jobs of a shared machine took its CPU; mono:
# CLOCK_MONOTONIC).
# Nothing is written into the repository: the peer and the baselines go to
# BUILD/bench, logs and traces to a mktemp directory that is removed at exit.
set -u

BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
REPS=${REPS:-9}
SCALE=${SCALE:-1}
BT_REPS=${BT_REPS:-3}
PACED_SECONDS=${PACED_SECONDS:-10}
PACED_REPS=${PACED_REPS:-3}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
BENCH_CLOCK=${BENCH_CLOCK:-cpu}
export BENCH_CLOCK
CC=${CC:-cc}
BIN=$BUILD/bench
PEER=$BIN/peer
ABS_BUILD_LIB=$(cd "$BUILD" && pwd)
scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN { n = int(n * s); print (n < 1000) ? 1000 : n }'; }
N_EN=$(scaled "${N:-4000000}")
N_OFF=$(scaled "${N_DISABLED:-50000000}")
N_LOGW=$(scaled "${N_LOGW:-8000000}")
N_LOGR=$(scaled "${N_LOGR:-4000000}")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/posixtrace-bench.XXXXXX") || exit 1
SAMPLES=$WORK/samples # key TAB value TAB aux, one line per repetition
META=$WORK/meta       # key|group|name|unit, in the order rows first appear
: >"$SAMPLES"
: >"$META"
STARTED_SESSIOND=""
CUR_SESSION=""
FAILED=""

say() { printf '[bench] %s\n' "$*" >&2; }

cleanup() {
	set +e
	[ -n "$CUR_SESSION" ] && lttng destroy "$CUR_SESSION" >/dev/null 2>&1
	if [ -n "$STARTED_SESSIOND" ]; then
		say "stopping lttng-sessiond $STARTED_SESSIOND (started by this run)"
		kill -TERM "$STARTED_SESSIOND" 2>/dev/null
		i=0
		while [ $i -lt 50 ] && kill -0 "$STARTED_SESSIOND" 2>/dev/null &&
			! grep -q '^State:.*Z' "/proc/$STARTED_SESSIOND/status" 2>/dev/null; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	rm -rf "$WORK"
}
# the EXIT trap also runs when a signal ends the run (a closed pipe too)
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

now_ns() { date +%s%N; }
steal_snapshot() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat; }
T_START=$(now_ns)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
STEAL0=$(steal_snapshot)
if command -v timeout >/dev/null 2>&1; then LIMIT="timeout $RUN_TIMEOUT"; else LIMIT=""; fi
if command -v taskset >/dev/null 2>&1; then ON_CPU1="taskset -c 1"; else ON_CPU1=""; fi

# meta KEY GROUP NAME UNIT: declares a row (the first declaration wins)
meta() { grep -q "^$1|" "$META" || printf '%s|%s|%s|%s\n' "$1" "$2" "$3" "$4" >>"$META"; }
sample() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-0}" >>"$SAMPLES"; }
calc() { awk "BEGIN { $1 }" 2>/dev/null; }

# collect GROUP < ROW lines: ROW|key|name|median|min|max|unit|note|aux
collect() {
	# shellcheck disable=SC2034 # min, max and note are not kept: one repetition
	while IFS='|' read -r tag key name med lo hi unit note aux; do
		[ "$tag" = ROW ] || continue
		meta "$key" "$1" "$name" "$unit"
		sample "$key" "$med" "$aux"
	done
}

# runs a program, its output into $WORK/out; notes a failure
run() {
	what=$1
	shift
	$LIMIT "$@" >"$WORK/out" 2>"$WORK/err"
	status=$?
	if [ "$status" != 0 ]; then
		say "$what failed (exit status $status$([ "$status" = 124 ] && echo ", timed out after $RUN_TIMEOUT s")):"
		sed 's/^/    /' "$WORK/err" >&2
		FAILED="$FAILED $what"
		return 1
	fi
	[ -s "$WORK/err" ] && sed "s|^|[$what] |" "$WORK/err" >&2
	return 0
}

for p in bench_event bench_log; do
	[ -x "$BIN/$p" ] || { echo "bench/run.sh: $BIN/$p is not built (run make bench)" >&2; exit 1; }
done

# ---------------------------------------------------------------- linking
# The rows are meant for programs that call the shared library, as
# applications do.
if ldd "$BIN/bench_event" 2>/dev/null | grep -q 'libposixtrace\.so'; then
	LINKED="libposixtrace.so ($(ldd "$BIN/bench_event" | awk '/libposixtrace/ { print $3; exit }'))"
	LINK_MSG=""
else
	LINKED="libposixtrace linked statically"
	LINK_MSG="bench_event does not use the shared library: the rows that say 'through the shared library' measure a static call instead"
fi

# ---------------------------------------------------------------- clock
# The recorder's clock: raw TSC where the kernel's clocksource is tsc and
# the TSC is invariant (CPUID 0x80000007 EDX bit 8, which Linux shows as
# constant_tsc + nonstop_tsc), clock_gettime elsewhere.  The floor row the
# 16-byte event is held to uses the same clock.
if [ -x "$BIN/floor" ]; then
	CLOCK_LINE=$("$BIN/floor" clock)
else
	src=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
	if [ "$(uname -m)" = x86_64 ] && [ "$src" = tsc ] && grep -qw constant_tsc /proc/cpuinfo &&
		grep -qw nonstop_tsc /proc/cpuinfo; then
		CLOCK_LINE="CLOCK|tsc|clocksource tsc, invariant TSC (cpuinfo flags)"
	else
		CLOCK_LINE="CLOCK|clock_gettime|no invariant TSC clocksource"
	fi
fi
CLOCK=$(echo "$CLOCK_LINE" | cut -d'|' -f2)
CLOCK_WHY=$(echo "$CLOCK_LINE" | cut -d'|' -f3)
if [ "$CLOCK" = tsc ]; then FLOOR_SAME=fl_ring_tsc; else FLOOR_SAME=fl_ring_mono; fi

# ---------------------------------------------------------------- floor
HAVE_FLOOR=0
FLOOR_MSG=""
if [ "${SKIP_FLOOR:-0}" = 1 ]; then
	FLOOR_MSG="floor skipped (SKIP_FLOOR=1)"
elif [ ! -x "$BIN/floor" ]; then
	FLOOR_MSG="floor skipped: $BIN/floor is not built"
else
	HAVE_FLOOR=1
fi
[ -n "$FLOOR_MSG" ] && say "$FLOOR_MSG"

# ---------------------------------------------------------------- LTTng-UST
# What the peer needs, as Debian packages.
lttng_missing() {
	m=""
	command -v lttng >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1 || m="$m lttng-tools"
	command -v pkg-config >/dev/null 2>&1 || m="$m pkg-config"
	pkg-config --exists lttng-ust 2>/dev/null || m="$m liblttng-ust-dev"
	command -v babeltrace2 >/dev/null 2>&1 || m="$m babeltrace2"
	echo "${m# }"
}
HAVE_LTTNG=0
LTTNG_MSG=""
if [ "${SKIP_LTTNG:-0}" = 1 ]; then
	LTTNG_MSG="LTTng-UST peer skipped (SKIP_LTTNG=1)"
else
	missing=$(lttng_missing)
	if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && [ "${NO_INSTALL:-0}" != 1 ] &&
		command -v apt-get >/dev/null 2>&1; then
		say "installing $missing with apt-get"
		apt-get update >/dev/null 2>&1
		# shellcheck disable=SC2086 # one word per package
		DEBIAN_FRONTEND=noninteractive apt-get install -y $missing >/dev/null 2>&1 ||
			say "apt-get install $missing failed"
		missing=$(lttng_missing)
	fi
	case " $missing " in
	*" lttng-tools "* | *" pkg-config "* | *" liblttng-ust-dev "*)
		LTTNG_MSG="LTTng-UST peer SKIPPED: $missing not installed (make bench as root installs them with apt-get, unless NO_INSTALL=1)"
		;;
	*)
		mkdir -p "$PEER"
		# shellcheck disable=SC2046
		# shellcheck disable=SC2086
		if $CC -O2 -g -I"$HERE/peer" -o "$PEER/ust_peer" "$HERE/peer/ust_peer.c" \
			"$HERE/peer/ptpeer_tp.c" $(pkg-config --cflags --libs lttng-ust) -lpthread \
			2>"$WORK/err"; then
			HAVE_LTTNG=1
		else
			sed 's/^/    /' "$WORK/err" >&2
			LTTNG_MSG="LTTng-UST peer SKIPPED: bench/peer/ust_peer.c did not build against liblttng-ust"
		fi
		;;
	esac
fi
if [ "$HAVE_LTTNG" = 1 ]; then
	if [ "$(id -u)" = 0 ]; then PIDFILE=/var/run/lttng/lttng-sessiond.pid
	else PIDFILE=$HOME/.lttng/lttng-sessiond.pid; fi
	if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null &&
		! grep -q '^State:.*Z' "/proc/$(cat "$PIDFILE")/status" 2>/dev/null; then
		say "using the running lttng-sessiond $(cat "$PIDFILE") (left running)"
	elif lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 && [ -f "$PIDFILE" ]; then
		STARTED_SESSIOND=$(cat "$PIDFILE")
		say "started lttng-sessiond $STARTED_SESSIOND"
	else
		HAVE_LTTNG=0
		LTTNG_MSG="LTTng-UST peer SKIPPED: lttng-sessiond did not start"
	fi
fi
[ -n "$LTTNG_MSG" ] && say "$LTTNG_MSG"
HAVE_BT=0
[ "$HAVE_LTTNG" = 1 ] && command -v babeltrace2 >/dev/null 2>&1 && HAVE_BT=1
mkdir -p "$WORK/traces"

# lttng_enabled CTX REP: one session (CTX 1: + vpid,vtid,ip), the peer fires
# N_EN events; samples lt_on / lt_ctx (aux: trace bytes per recorded event)
# and their discarded events; babeltrace2 counts the trace in the first
# BT_REPS repetitions without contexts.
lttng_enabled() {
	ctx=$1
	rep=$2
	s="ptbench-$$-$ctx-$rep"
	out="$WORK/traces/$ctx-$rep"
	if [ "$ctx" = 1 ]; then key=lt_ctx; else key=lt_on; fi
	CUR_SESSION=$s
	if ! { lttng create "$s" --output="$out" &&
		lttng enable-event -u -s "$s" ptpeer:event &&
		{ [ "$ctx" = 0 ] || lttng add-context -u -s "$s" -t vpid -t vtid -t ip; } &&
		lttng start "$s"; } >"$WORK/lttng.log" 2>&1; then
		sed 's/^/    /' "$WORK/lttng.log" >&2
		lttng destroy "$s" >/dev/null 2>&1
		CUR_SESSION=""
		FAILED="$FAILED lttng-session"
		return 1
	fi
	run "ust_peer ($key)" "$PEER/ust_peer" "$N_EN"
	ok=$?
	lttng stop "$s" >/dev/null 2>&1
	disc=$(lttng list "$s" 2>/dev/null | awk '/Discarded events:/ { d += $3 } END { print d + 0 }')
	lttng destroy "$s" >/dev/null 2>&1
	CUR_SESSION=""
	if [ "$ok" = 0 ]; then
		ns=$(cut -d'|' -f2 "$WORK/out")
		fired=$(cut -d'|' -f3 "$WORK/out")
		bytes=$(du -sb "$out" | cut -f1)
		if [ "$ctx" = 1 ]; then
			meta lt_ctx lttng "enabled, + contexts vpid,vtid,ip" ns/ev
		else
			meta lt_on lttng "enabled, default channel" ns/ev
		fi
		sample "$key" "$ns" "$(awk -v b="$bytes" -v f="$fired" -v d="$disc" \
			'BEGIN { printf "%.2f", (f > d) ? b / (f - d) : 0 }')"
		sample "${key}_disc" "$disc"
		if [ "$ctx" = 0 ] && [ "$HAVE_BT" = 1 ] && [ "$rep" -le "$BT_REPS" ]; then
			# decodes every event (counter sink); the time includes
			# babeltrace2's start, the count is its last total
			t0=$(now_ns)
			cnt=$($ON_CPU1 babeltrace2 "$out" -c sink.utils.counter 2>/dev/null |
				awk '$2 == "Event" && $3 == "messages" { c = $1 } END { print c + 0 }')
			t1=$(now_ns)
			if [ "$cnt" -gt 0 ]; then
				meta bt_count lttng "babeltrace2 counting that trace (counter sink)" Mev/s
				sample bt_count "$(awk -v c="$cnt" -v t="$((t1 - t0))" \
					'BEGIN { printf "%.3f", c * 1e3 / t }')" "$cnt"
			fi
		fi
	fi
	rm -rf "$out"
}

# ---------------------------------------------------------------- baselines
# The libraries the tree is held to, built from pinned commits of this
# tree's history: 0.2.0 (BASE_EVENT) for the recording path, BASE_READ for
# the readers, BASE_CPU (the merge before the CPU of each event arrived,
# 80c823a) for what that field costs the recording path.  `git archive COMMIT` is unpacked into BUILD/bench/base-COMMIT
# and built there with its own Makefile, once (BUILD/bench/base-COMMIT/built
# marks it done; later runs reuse it).  The benchmark programs are this
# tree's sources (the same loops), compiled in every run against each
# library's own headers with -DBENCH_BASELINE (which leaves out the cases
# the old interface lacks); where that fails, the old tree's own program.
# The command compared is the old tree's.  They run next to the tree's in
# every repetition, in an order that alternates.
BASE_EVENT=${BASE_EVENT:-396aa2f}
BASE_READ=${BASE_READ:-22ad7c4}
BASE_CPU=${BASE_CPU:-54e355e}
REPO=$(cd "$HERE/.." && pwd)
ABS_BIN=$(mkdir -p "$BIN" && cd "$BIN" && pwd)
BASE_MSG=""
BASE_EV_MSG=""
BASE_RD_MSG=""
BASE_EV_DIR=""
BASE_RD_DIR=""
BASE_CPU_DIR=""
BASE_CPU_MSG=""
# base_build COMMIT WITH_TOOL PROGRAM...: BASE_DIR is the directory; BASE_WHY
# says why not when it fails
base_build() {
	BASE_DIR=""
	commit=$1
	with_tool=$2
	shift 2
	d=$ABS_BIN/base-$commit
	if [ ! -f "$d/built" ]; then
		if ! command -v git >/dev/null 2>&1 ||
			! git -C "$REPO" rev-parse -q --verify "$commit^{commit}" >/dev/null 2>&1; then
			BASE_WHY="this tree has no git history holding $commit"
			return 1
		fi
		rm -rf "$d"
		mkdir -p "$d/src"
		if ! git -C "$REPO" archive "$commit" | tar -x -C "$d/src"; then
			BASE_WHY="git archive $commit failed"
			return 1
		fi
		goals="lib"
		[ "$with_tool" = 1 ] && goals="lib $d/build/posixtrace"
		say "building the baseline library of $commit into $d (once)"
		# shellcheck disable=SC2086 # one word per goal
		if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$d/src" -j2 CC="$CC" \
			BUILD="$d/build" $goals >"$d/build.log" 2>&1; then
			BASE_WHY="the build of $commit failed (see $d/build.log)"
			return 1
		fi
		touch "$d/built"
	fi
	for prog in "$@"; do
		if ! $CC -DBENCH_BASELINE -D_GNU_SOURCE -I"$d/src/include" -std=c11 -Wall -Wextra \
			-O2 -g "$HERE/$prog.c" -o "$d/$prog" -L"$d/build" -Wl,-rpath,"$d/build" \
			-lposixtrace -lpthread 2>"$d/$prog.err"; then
			say "baseline $commit: bench/$prog.c does not build against its headers; its own $prog.c instead"
			if ! $CC -D_GNU_SOURCE -I"$d/src/include" -std=c11 -O2 -g "$d/src/bench/$prog.c" \
				-o "$d/$prog" -L"$d/build" -Wl,-rpath,"$d/build" -lposixtrace -lpthread \
				2>>"$d/$prog.err"; then
				BASE_WHY="bench/$prog.c of neither tree builds against $commit (see $d/$prog.err)"
				return 1
			fi
		fi
	done
	BASE_DIR=$d
}
if [ "${SKIP_BASE:-0}" = 1 ]; then
	BASE_MSG="baseline rows skipped (SKIP_BASE=1)"
	BASE_EV_MSG=$BASE_MSG
	BASE_RD_MSG=$BASE_MSG
	BASE_CPU_MSG=$BASE_MSG
else
	if base_build "$BASE_EVENT" 0 bench_event; then
		BASE_EV_DIR=$BASE_DIR
	else
		BASE_EV_MSG="0.2.0 ($BASE_EVENT) rows skipped: $BASE_WHY"
	fi
	if base_build "$BASE_READ" 1 bench_log; then
		BASE_RD_DIR=$BASE_DIR
	else
		BASE_RD_MSG="$BASE_READ rows skipped: $BASE_WHY"
	fi
	if base_build "$BASE_CPU" 0 bench_event; then
		BASE_CPU_DIR=$BASE_DIR
	else
		BASE_CPU_MSG="$BASE_CPU (before the CPU field) rows skipped: $BASE_WHY"
	fi
	BASE_MSG="$BASE_EV_MSG${BASE_EV_MSG:+${BASE_RD_MSG:+; }}$BASE_RD_MSG"
	BASE_MSG="$BASE_MSG${BASE_MSG:+${BASE_CPU_MSG:+; }}$BASE_CPU_MSG"
fi
[ -n "$BASE_MSG" ] && say "$BASE_MSG"

# ---------------------------------------------------------------- untraced, in instructions
# What an event statement costs when nothing traces the process, counted by
# callgrind (the time of half a nanosecond is inside this VM's noise):
# bench/peer/untraced.c built three ways (posix_trace_event through the
# shared library with no stream; LTTng-UST's tracepoint with no session;
# the loop alone), each run for N1 and N2 iterations with only its loop
# counted (--toggle-collect=loop): (Ir(N2) - Ir(N1)) / (N2 - N1) is the
# loop's instructions per iteration.
UNTRACED_MSG=""
CG_PT=""
CG_LT=""
CG_NONE=""
cg_per_iter() {
	a=$(valgrind --tool=callgrind --toggle-collect=loop --callgrind-out-file=/dev/null \
		"$1" 100000 2>&1 | awk '/Collected :/ { print $NF }')
	b=$(valgrind --tool=callgrind --toggle-collect=loop --callgrind-out-file=/dev/null \
		"$1" 300000 2>&1 | awk '/Collected :/ { print $NF }')
	[ -n "$a" ] && [ -n "$b" ] && calc "printf \"%.2f\", ($b - $a) / 200000"
}
UWARN="-std=c11 -Wall -Wextra -Werror -O2 -g"
if [ "${SKIP_CALLGRIND:-0}" = 1 ]; then
	UNTRACED_MSG="instruction counts skipped (SKIP_CALLGRIND=1)"
elif ! command -v valgrind >/dev/null 2>&1; then
	UNTRACED_MSG="instruction counts not measured: valgrind is not installed (Debian's valgrind package)"
else
	mkdir -p "$BIN/untraced"
	# shellcheck disable=SC2086 # the flags are words
	if $CC $UWARN -D_GNU_SOURCE -DUNTRACED_POSIXTRACE -I"$HERE/../include" "$HERE/peer/untraced.c" \
		-o "$BIN/untraced/posixtrace" -L"$ABS_BUILD_LIB" -Wl,-rpath,"$ABS_BUILD_LIB" -lposixtrace \
		-lpthread 2>"$WORK/err" &&
		$CC $UWARN "$HERE/peer/untraced.c" -o "$BIN/untraced/none" 2>>"$WORK/err"; then
		CG_PT=$(cg_per_iter "$BIN/untraced/posixtrace")
		CG_NONE=$(cg_per_iter "$BIN/untraced/none")
	else
		sed 's/^/    /' "$WORK/err" >&2
		UNTRACED_MSG="instruction counts not measured: bench/peer/untraced.c did not build"
	fi
	# shellcheck disable=SC2046,SC2086 # the flags are words
	if [ "$HAVE_LTTNG" = 1 ] &&
		$CC $UWARN -DUNTRACED_LTTNG -I"$HERE/peer" "$HERE/peer/untraced.c" "$HERE/peer/ptpeer_tp.c" \
			-o "$BIN/untraced/lttng" $(pkg-config --cflags --libs lttng-ust) -lpthread 2>"$WORK/err"; then
		CG_LT=$(cg_per_iter "$BIN/untraced/lttng")
	elif [ "$HAVE_LTTNG" = 1 ]; then
		sed 's/^/    /' "$WORK/err" >&2
	fi
	[ -z "$UNTRACED_MSG" ] && [ -z "$CG_PT" ] && UNTRACED_MSG="instruction counts not measured: callgrind gave no count"
	say "untraced, instructions per loop iteration (callgrind): posix_trace_event ${CG_PT:-?}, LTTng-UST ${CG_LT:-?}, the loop alone ${CG_NONE:-?}"
fi
[ -n "$UNTRACED_MSG" ] && say "$UNTRACED_MSG"

# ---------------------------------------------------------------- Trace Log
HAVE_LOG=0
LOG_MSG=""
LOGDIR=$WORK/log
READLOG=$LOGDIR/read.log
READLOG2=$LOGDIR/read2.log
if [ "${SKIP_LOG:-0}" = 1 ]; then
	LOG_MSG="Trace Log rows skipped (SKIP_LOG=1)"
else
	mkdir -p "$LOGDIR"
	if run "bench_log mklog" "$BIN/bench_log" mklog "$READLOG" "$N_LOGR"; then
		HAVE_LOG=1
		IFS='|' read -r _ READ_EVENTS READ_BYTES READ_SECS READ_LOST READ_TOTAL <"$WORK/out"
		READ_MB=$(awk -v b="$READ_BYTES" 'BEGIN { printf "%.0f", b / 1e6 }')
		READ_BPE=$(awk -v b="$READ_BYTES" -v n="$READ_EVENTS" 'BEGIN { if (n > 0) printf "%.2f", b / n }')
		say "log to read back: $READ_EVENTS events, $READ_MB MB, written in $READ_SECS s, $READ_LOST lost"
	else
		LOG_MSG="Trace Log rows skipped: bench_log mklog failed"
	fi
fi
[ -n "$LOG_MSG" ] && say "$LOG_MSG"
# the same events from 2 writer threads, for the informational read row
if [ "$HAVE_LOG" = 1 ] &&
	run "bench_log mklog (2 threads)" "$BIN/bench_log" mklog "$READLOG2" "$N_LOGR" 2; then
	IFS='|' read -r _ READ2_EVENTS READ2_BYTES _ READ2_LOST _ <"$WORK/out"
	READ2_BPE=$(awk -v b="$READ2_BYTES" -v n="$READ2_EVENTS" 'BEGIN { if (n > 0) printf "%.2f", b / n }')
	say "log of 2 writers to read back: $READ2_EVENTS events, $READ2_BPE B/event, $READ2_LOST lost"
else
	READLOG2=""
fi
# The readers' baseline pairs read a log both readers can read: the tree
# writes a newer format than BASE_READ reads (version 4, the CPU record, came
# after 22ad7c4), so BASE_READ's own mklog writes the same events for them;
# without it they read the tree's log (and the baseline's rows fail).
PAIR_LOG=$READLOG
if [ "$HAVE_LOG" = 1 ] && [ -n "$BASE_RD_DIR" ] &&
	run "bench_log mklog ($BASE_READ)" "$BASE_RD_DIR/bench_log" mklog "$LOGDIR/read-base.log" "$N_LOGR"; then
	PAIR_LOG=$LOGDIR/read-base.log
	say "the readers' baseline pairs read a log written by $BASE_READ (format version $(od -An -tu4 -j8 -N4 "$PAIR_LOG" | tr -d ' '))"
fi
LOG_FS=$(df -PT "$WORK" 2>/dev/null | awk 'NR == 2 { print $2 " on " $1 }')

# ---------------------------------------------------------------- paced writer
# A writer below the disk's bandwidth loses nothing: in the first PACED_REPS
# repetitions, for each stream size, bench_log plain first writes for
# PACED_SECONDS (1 MiB write()s, then fdatasync: the disk's sustained rate,
# not the page cache's), then bench_log paced posts for PACED_SECONDS at
# 80 % of that rate (MB/s), divided by the log bytes per event that the
# repetition's bench_log run measured for that stream size (B/event):
# events/s; or at 80 % of the rate its flat-out writer posted at, if that
# is lower (one thread may not post as fast as the disk writes: the pace
# must be one it can hold).  Both files go into the same directory.
HAVE_PACED=0
PACED_MSG=""
if [ "${SKIP_PACED:-0}" = 1 ]; then
	PACED_MSG="paced writer rows skipped (SKIP_PACED=1)"
elif [ "$HAVE_LOG" != 1 ]; then
	PACED_MSG="paced writer rows skipped: no log rows"
else
	HAVE_PACED=1
fi
# paced SFX MIB REP < the repetition's bench_log run output
paced() {
	sfx=$1
	mib=$2
	p_mbs=0
	p_bpe=0
	p_post=0
	# shellcheck disable=SC2034 # the other fields of a ROW line
	while IFS='|' read -r tag key name v rest; do
		[ "$tag" = ROW ] || continue
		case "$key" in
		"logw_${sfx}_bpe") p_bpe=$v ;;
		"logw_${sfx}_lost") p_post=${rest##*|} ;; # aux: Mev/s the flat-out writer posted
		esac
	done
	# the disk's sustained rate, as long as the paced run, same directory.
	# Its file is removed only after the paced run: freeing gigabytes of
	# blocks right before it stalled the file system's writes for a while
	# (0.02 to 0.17 % lost at 16.8 M events/s into 4 MiB after the removal,
	# 0 without it), which the bench, not the writer, caused.
	sync
	if run "bench_log plain ($mib MiB, ${PACED_SECONDS} s)" "$BIN/bench_log" plain \
		"$LOGDIR/plain.dat" "$PACED_SECONDS"; then
		IFS='|' read -r _ p_mbs _ <"$WORK/out"
	fi
	rate=$(calc "if ($p_mbs > 0 && $p_bpe > 0) { r = 0.8 * $p_mbs * 1e6 / $p_bpe;
		if ($p_post > 0 && 0.8 * $p_post * 1e6 < r) r = 0.8 * $p_post * 1e6; printf \"%.0f\", r }")
	if [ -z "$rate" ]; then
		say "paced writer, $mib MiB stream, repetition $3: no plain-write rate (skipped)"
		rm -f "$LOGDIR/plain.dat"
		return 1
	fi
	# a lossless log at that rate; the file is removed once it is read back
	need_kb=$(calc "printf \"%.0f\", $rate * $p_bpe * $PACED_SECONDS / 1024")
	avail_kb=$(df -Pk "$LOGDIR" | awk 'NR == 2 { print $4 + 0 }')
	if [ "${avail_kb:-0}" -lt $((3 * need_kb)) ]; then
		PACED_MSG="paced writer skipped ($mib MiB stream, repetition $3): $((avail_kb / 1024)) MiB free in $LOGDIR, less than 3 x the $((need_kb / 1024)) MiB its log needs"
		say "$PACED_MSG"
		rm -f "$LOGDIR/plain.dat"
		return 1
	fi
	run "bench_log paced ($mib MiB)" "$BIN/bench_log" paced "$LOGDIR/paced.log" "$mib" "$rate" \
		"$PACED_SECONDS" "$p_mbs" && collect paced <"$WORK/out"
	rm -f "$LOGDIR/paced.log" "$LOGDIR/plain.dat"
}

# ---------------------------------------------------------------- the command
# posixtrace dump and convert over the log read back (`make bench` builds
# the command with the bench programs).
TOOL=$BUILD/posixtrace
HAVE_TOOL=0
TOOL_MSG=""
if [ "${SKIP_TOOL:-0}" = 1 ]; then
	TOOL_MSG="posixtrace command rows skipped (SKIP_TOOL=1)"
elif [ "$HAVE_LOG" != 1 ]; then
	TOOL_MSG="posixtrace command rows skipped: no log to read"
elif [ ! -x "$TOOL" ]; then
	TOOL_MSG="posixtrace command rows skipped: $TOOL is not built (run make bench)"
else
	HAVE_TOOL=1
fi
[ -n "$TOOL_MSG" ] && say "$TOOL_MSG"
HAVE_BT2=0
command -v babeltrace2 >/dev/null 2>&1 && HAVE_BT2=1

# tool_timed KEY NAME OUT CMD...: runs CMD through bench_log exec on CPU 1,
# its standard output into OUT; a sample of events of the log read back
# (TT_EVENTS of them if set) per second of wall time (its start
# included); the peak RSS in MiB as aux
tool_timed() {
	key=$1
	name=$2
	out=$3
	shift 3
	run "$name" "$BIN/bench_log" exec 1 "$out" "$@" || return 1
	IFS='|' read -r _ secs rss <"$WORK/out"
	TT_RSS=$(calc "printf \"%.1f\", $rss / 1024")
	meta "$key" tool "$name" Mev/s
	sample "$key" "$(calc "printf \"%.3f\", ${TT_EVENTS:-$READ_TOTAL} / $secs / 1e6")" "$TT_RSS"
}

# per_event BYTES: output bytes per event of the log read back
per_event() { calc "printf \"%.1f\", $1 / $READ_TOTAL"; }
# tool_rows REP: one sample of each command row
tool_rows() {
	tool_timed tool_dump "posixtrace dump LOG > /dev/null" /dev/null "$TOOL" dump "$READLOG"
	rm -rf "$WORK/ctf"
	if tool_timed tool_ctf "posixtrace convert --to ctf LOG DIR" /dev/null \
		"$TOOL" convert --to ctf "$READLOG" "$WORK/ctf"; then
		meta tool_ctf_rss tool "  its peak RSS (wait4's ru_maxrss)" MiB
		sample tool_ctf_rss "$TT_RSS" "$(per_event "$(du -sb "$WORK/ctf" | cut -f1)")"
		if [ "$HAVE_BT2" = 1 ] && [ "$1" -le "$BT_REPS" ]; then
			# the reference: the same events, printed as text
			tool_timed bt_print "  babeltrace2 DIR > /dev/null (that CTF)" /dev/null \
				babeltrace2 "$WORK/ctf"
		fi
	fi
	rm -rf "$WORK/ctf"
	rm -f "$LOGDIR/chrome.json"
	if tool_timed tool_chrome "posixtrace convert --to chrome LOG FILE" /dev/null \
		"$TOOL" convert --to chrome "$READLOG" "$LOGDIR/chrome.json"; then
		meta tool_chrome_rss tool "  its peak RSS (wait4's ru_maxrss)" MiB
		sample tool_chrome_rss "$TT_RSS" "$(per_event "$(wc -c <"$LOGDIR/chrome.json")")"
	fi
	rm -f "$LOGDIR/chrome.json"
	rm -f "$LOGDIR/perfetto.pftrace"
	if tool_timed tool_perfetto "posixtrace convert --to perfetto LOG FILE" /dev/null \
		"$TOOL" convert --to perfetto "$READLOG" "$LOGDIR/perfetto.pftrace"; then
		meta tool_perfetto_rss tool "  its peak RSS (wait4's ru_maxrss)" MiB
		sample tool_perfetto_rss "$TT_RSS" "$(per_event "$(wc -c <"$LOGDIR/perfetto.pftrace")")"
	fi
	rm -f "$LOGDIR/perfetto.pftrace"
	if tool_timed tool_perfetto_zstd "posixtrace convert --to perfetto LOG FILE --compression zstd" \
		/dev/null "$TOOL" convert --to perfetto "$READLOG" "$LOGDIR/perfetto.pftrace" --compression zstd; then
		meta tool_perfetto_zstd_rss tool "  its peak RSS (wait4's ru_maxrss)" MiB
		sample tool_perfetto_zstd_rss "$TT_RSS" "$(per_event "$(wc -c <"$LOGDIR/perfetto.pftrace")")"
	fi
	rm -f "$LOGDIR/perfetto.pftrace"
	if [ "$HAVE_SPANS" = 1 ]; then
		TT_EVENTS=$N_SPANS
		tool_timed tool_otlp "posixtrace export LOG --discard --compression none (M spans/s)" \
			/dev/null "$TOOL" export "$SPANSLOG" --discard --compression none
		tool_timed tool_otlp_gzip "  the same, gzip (the default)" /dev/null \
			"$TOOL" export "$SPANSLOG" --discard
		TT_EVENTS=""
	fi
}

# The OpenTelemetry export: a log of bench_spans (N_SPANS begin/end pairs,
# nested two deep, 16 bytes of text each) encoded as OTLP requests and
# thrown away (--discard: nothing goes over a socket), with and without
# gzip.
SPANSLOG=$WORK/spans.ptlog
N_SPANS=$(scaled 1000000)
HAVE_SPANS=0
if [ "$HAVE_TOOL" = 1 ] && [ -x "$BIN/bench_spans" ] &&
	"$TOOL" export --help 2>&1 | grep -q discard &&
	"$TOOL" record -o "$SPANSLOG" --size 512M -- "$BIN/bench_spans" "$N_SPANS" >/dev/null 2>&1; then
	HAVE_SPANS=1
else
	say "export rows skipped: no log of bench_spans, or a command without export"
fi

# The traced program under record --otlp (issue 35: sending while recording
# costs it nothing measurable): bench_spans times its own posting loop (ns
# per event; N_LIVE pairs, each two events) under record -o LOG and under
# record --otlp --discard (the sender thread follows the rotated log,
# encodes and compresses each file as it is completed, and throws the
# requests away: a sink that discards, no socket), adjacent runs whose
# order alternates from one repetition to the next.
N_LIVE=$(scaled 1000000)
HAVE_LIVE=0
if [ "$HAVE_TOOL" = 1 ] && [ -x "$BIN/bench_spans" ] &&
	"$TOOL" record --help 2>&1 | grep -q -- '--otlp URL'; then
	HAVE_LIVE=1
else
	say "record --otlp rows skipped: no bench_spans, or a command without record --otlp"
fi
live_run() { # KEY NAME RECORD-OPTIONS...
	key=$1 name=$2
	shift 2
	rm -rf "$WORK/live.ptlog" "$WORK/live.d"
	if $LIMIT "$TOOL" record "$@" -- "$BIN/bench_spans" "$N_LIVE" --time >"$WORK/out" 2>"$WORK/err"; then
		meta "$key" tool "$name" ns/ev
		sample "$key" "$(tail -1 "$WORK/out")"
	else
		say "$name failed:"
		sed 's/^/    /' "$WORK/err" >&2
		FAILED="$FAILED live"
	fi
	rm -rf "$WORK/live.ptlog" "$WORK/live.d"
}
live_pair() {
	if [ $(($1 % 2)) = 1 ]; then order="plain otlp"; else order="otlp plain"; fi
	for w in $order; do
		if [ "$w" = plain ]; then
			live_run live_plain "traced program under record -o LOG (bench_spans)" -o "$WORK/live.ptlog"
		else
			live_run live_otlp "  the same under record --otlp (--discard)" -o "$WORK/live.d" --otlp http://127.0.0.1:9 --discard
		fi
	done
}

# Log bytes per short-lived process: N_SHORT runs of bench_sites posting
# one event each, under one posixtrace record, with images and without;
# the difference is what the images of a process cost (IMAGES_COMPACT:
# each file described once per log).
N_SHORT=${N_SHORT:-2000}
short_log_bytes() { # OUT [RECORD-OPTIONS...]
	out=$1
	shift
	rm -f "$out"
	"$TOOL" record -o "$out" "$@" -- sh -c 'i=0; while [ $i -lt "$1" ]; do "$0" 1 >/dev/null; i=$((i + 1)); done' \
		"$BIN/bench_sites" "$N_SHORT" >/dev/null 2>&1 && wc -c <"$out"
}
if [ "$HAVE_TOOL" = 1 ] && [ -x "$BIN/bench_sites" ]; then
	SHORT_WITH=$(short_log_bytes "$WORK/short.ptlog")
	SHORT_WITHOUT=$(short_log_bytes "$WORK/short-noimg.ptlog" --no-images)
	rm -f "$WORK/short.ptlog" "$WORK/short-noimg.ptlog"
	if [ -n "$SHORT_WITH" ] && [ -n "$SHORT_WITHOUT" ]; then
		meta short_proc log "log bytes per short-lived process (1 event; $N_SHORT processes)" B
		sample short_proc "$(calc "printf \"%.1f\", $SHORT_WITH / $N_SHORT")" \
			"$(calc "printf \"%.1f\", ($SHORT_WITH - $SHORT_WITHOUT) / $N_SHORT")"
	fi
fi

# The cost of symbols: a log of bench_sites (a PIE with debug information
# and 1,000 call sites, each a function) recorded by posixtrace record, so
# that it holds the program's images; dump with and without symbols, in
# alternating order, each a new process (its symbol tables read cold; run
# as root, the page cache is dropped before each, so the files are read
# cold too).
SITESLOG=$WORK/sites.ptlog
N_SITES=$(scaled 1000000)
HAVE_SITES=0
if [ "$HAVE_TOOL" = 1 ] && [ -x "$BIN/bench_sites" ] &&
	"$TOOL" record -o "$SITESLOG" -- "$BIN/bench_sites" "$N_SITES" >/dev/null 2>&1; then
	HAVE_SITES=1
	SITES_TOTAL=$("$TOOL" dump --no-symbols "$SITESLOG" | sed -n 's/^# \([0-9]*\) events.*/\1/p')
	"$TOOL" dump "$SITESLOG" 2>/dev/null | grep -q ' at site_s[0-9]*+0x' ||
		say "symbols rows: dump names no site of bench_sites (built without libdw?)"
else
	say "symbols rows skipped: no log of bench_sites"
fi
drop_page_cache() { [ "$(id -u)" = 0 ] && sync && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; }
sites_pair() {
	if [ $(($1 % 2)) = 1 ]; then order="sym raw"; else order="raw sym"; fi
	TT_EVENTS=$SITES_TOTAL
	for w in $order; do
		drop_page_cache
		if [ "$w" = sym ]; then
			tool_timed tool_dump_sym "posixtrace dump LOG, 1,000 call sites, symbols" /dev/null \
				"$TOOL" dump "$SITESLOG"
		else
			tool_timed tool_dump_raw "  the same, --no-symbols" /dev/null \
				"$TOOL" dump --no-symbols "$SITESLOG"
		fi
	done
	TT_EVENTS=""
}

# ---------------------------------------------------------------- nesting
# en16 alone, through the library as built (events from signal handlers
# nested in posix_trace_event recorded) and through one built with
# NESTING=0 (`make bench` builds it into BUILD/nonest): adjacent runs whose
# order alternates from one repetition to the next.
NONEST=$BUILD/nonest/bench/bench_event
HAVE_NONEST=0
[ -x "$NONEST" ] && HAVE_NONEST=1 || say "nesting rows skipped: $NONEST is not built (run make bench)"
nesting_pair() {
	if [ $(($1 % 2)) = 1 ]; then order="on off"; else order="off on"; fi
	for w in $order; do
		[ "$w" = on ] && prog=$BIN/bench_event || prog=$NONEST
		run "bench_event =en16 (nesting $w)" "$prog" 1 "$SCALE" =en16 &&
			sed "s/^ROW|en16|[^|]*|/ROW|en16_nest_$w|16 B event, nesting $w (NESTING=$([ "$w" = on ] && echo 1 || echo 0))|/" \
				"$WORK/out" | collect nesting
	done
}

# ---------------------------------------------------------------- writers that may wait
# --block when the stream is never full: en16_flush (a FLUSH stream with a
# log, larger than the keeper lets it fill) and en16_flush_block (the same
# with posixtrace_attr_setblocking), adjacent, in an order that alternates;
# a repetition counts only when both gave a row (a run in which the stream
# filled after all gives none).  Instructions cannot stand in for time
# here: valgrind (3.19) does not know pidfd_open, which a stream with a log
# needs.
block_pair() {
	if [ $(($1 % 2)) = 1 ]; then order="en16_flush en16_flush_block"; else order="en16_flush_block en16_flush"; fi
	: >"$WORK/blockpair"
	for c in $order; do
		run "bench_event =$c" "$BIN/bench_event" 1 "$SCALE" "=$c" && grep '^ROW|' "$WORK/out" >>"$WORK/blockpair"
	done
	[ "$(grep -c '^ROW|' "$WORK/blockpair")" = 2 ] && collect block <"$WORK/blockpair"
}

# ---------------------------------------------------------------- against the baselines
# base_pair KEY TREE_PROG BASE_PROG REP ARGS...: the same case through the
# tree's program and the baseline's, adjacent, in an order that alternates;
# the ROW of each is sampled as KEY_tree and KEY_base (named NAME (tree) and
# NAME (base), NAME the case's own or BP_NAME when set)
base_pair() {
	bp_key=$1
	bp_tree=$2
	bp_base=$3
	if [ $(($4 % 2)) = 1 ]; then bp_order="tree base"; else bp_order="base tree"; fi
	shift 4
	for bp_w in $bp_order; do
		[ "$bp_w" = tree ] && bp_prog=$bp_tree || bp_prog=$bp_base
		run "$(basename "$bp_prog") $* ($bp_w)" "$bp_prog" "$@" &&
			sed -n "s/^ROW|[^|]*|\([^|]*\)|/ROW|${bp_key}_$bp_w|${BP_NAME:-\1} ($bp_w)|/p" "$WORK/out" |
			head -1 | collect baseline
	done
}
# base_tool_pair KEY NAME REP CMD_ARGS...: the command of the tree and of
# BASE_READ, adjacent, alternating, each timed as tool_timed does (@OUT@ in
# the arguments: a directory for the output, removed after each).  Each
# timed run comes right after an untimed run of the same command on CPU 1:
# on a VM that hands the memory freed a few seconds ago back to its host
# (free page reporting), the first of two runs otherwise found its page
# cache and buffers in pages never touched since (a host fault each) and
# the second in the pages the first had just freed, so the order of the
# pair, not the command, decided a good part of the ratio (PERFORMANCE.md,
# "`convert --to ctf`, the pair's order and the common event").
base_tool_pair() {
	bt_key=$1
	bt_name=$2
	if [ $(($3 % 2)) = 1 ]; then bt_order="tree base"; else bt_order="base tree"; fi
	shift 3
	for bt_w in $bt_order; do
		[ "$bt_w" = tree ] && bt_cmd=$TOOL || bt_cmd=$BASE_RD_DIR/build/posixtrace
		rm -rf "$WORK/ctf"
		# shellcheck disable=SC2046,SC2086 # the words of the command line
		$LIMIT $ON_CPU1 "$bt_cmd" $(echo "$@" | sed "s|@OUT@|$WORK/ctf|") >/dev/null 2>&1
		rm -rf "$WORK/ctf"
		[ -n "${TT_DROP:-}" ] && drop_page_cache
		# shellcheck disable=SC2046 # the words of the command line
		tool_timed "${bt_key}_$bt_w" "$bt_name ($bt_w)" /dev/null "$bt_cmd" \
			$(echo "$@" | sed "s|@OUT@|$WORK/ctf|")
		rm -rf "$WORK/ctf"
	done
}
baseline_pairs() {
	if [ -n "$BASE_CPU_DIR" ]; then
		BP_NAME="16 B event vs $BASE_CPU, before the CPU field"
		base_pair b_cpu "$BIN/bench_event" "$BASE_CPU_DIR/bench_event" "$1" 1 "$SCALE" =en16
		BP_NAME=
	fi
	if [ -n "$BASE_EV_DIR" ]; then
		base_pair b_en16 "$BIN/bench_event" "$BASE_EV_DIR/bench_event" "$1" 1 "$SCALE" =en16
		base_pair b_off "$BIN/bench_event" "$BASE_EV_DIR/bench_event" "$1" 1 "$SCALE" =off_none
	fi
	if [ -n "$BASE_RD_DIR" ] && [ "$HAVE_LOG" = 1 ]; then
		base_pair b_logr "$BIN/bench_log" "$BASE_RD_DIR/bench_log" "$1" read "$PAIR_LOG" 3
		# the same log's floor, next to the pair: its events as the
		# reader just counted them
		FL_EVENTS=$(sed -n 's/^ROW|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|\([0-9.]*\)$/\1/p' "$WORK/out" | head -1)
		if [ "$HAVE_FLOOR" = 1 ] && [ -n "$FL_EVENTS" ]; then
			run "floor readlog" $ON_CPU1 "$BIN/floor" readlog "$PAIR_LOG" "$FL_EVENTS" 3 &&
				collect floor <"$WORK/out"
		fi
		if [ "$HAVE_TOOL" = 1 ]; then
			base_tool_pair b_dump "posixtrace dump --no-symbols LOG" "$1" dump --no-symbols "$PAIR_LOG"
			base_tool_pair b_ctf "posixtrace convert --to ctf LOG DIR" "$1" convert --to ctf "$PAIR_LOG" @OUT@
		fi
		# the sites log is the tree's format: a baseline that cannot read
		# it has no row (said once), rather than a failed program each time
		if [ "$HAVE_SITES" = 1 ] && [ -z "${BASE_SYM_OK:-}" ]; then
			if "$BASE_RD_DIR/build/posixtrace" stats "$SITESLOG" >/dev/null 2>&1; then
				BASE_SYM_OK=1
			else
				BASE_SYM_OK=0
				say "dump with symbols, tree / $BASE_READ: not measured ($BASE_READ cannot read the sites log, format version $(od -An -tu4 -j8 -N4 "$SITESLOG" | tr -d ' '))"
			fi
		fi
		if [ "$HAVE_SITES" = 1 ] && [ "$BASE_SYM_OK" = 1 ]; then
			TT_EVENTS=$SITES_TOTAL
			TT_DROP=1
			base_tool_pair b_sym "posixtrace dump LOG, 1,000 call sites, symbols" "$1" dump "$SITESLOG"
			TT_EVENTS=""
			TT_DROP=""
		fi
	fi
}

# ---------------------------------------------------------------- repetitions
say "bench_event, floor and the LTTng peer time their loops with BENCH_CLOCK=$BENCH_CLOCK" \
	"($( [ "$BENCH_CLOCK" = cpu ] && echo "the thread's CPU time" || echo CLOCK_MONOTONIC))"
say "REPS=$REPS SCALE=$SCALE; a repetition: bench_event, bench_log, the paced writer" \
	"(first $PACED_REPS), posixtrace dump and convert, floor, LTTng-UST"
r=1
while [ "$r" -le "$REPS" ]; do
	run bench_event "$BIN/bench_event" 1 "$SCALE" && collect posixtrace <"$WORK/out"
	if [ "$HAVE_LOG" = 1 ] &&
		run bench_log "$BIN/bench_log" run "$LOGDIR" "$N_LOGW" "$READLOG" 3 "$READLOG2"; then
		cp "$WORK/out" "$WORK/logrun"
		collect log <"$WORK/logrun"
		if [ "$HAVE_PACED" = 1 ] && [ "$r" -le "$PACED_REPS" ]; then
			paced def 4 "$r" <"$WORK/logrun"
			paced 16m 16 "$r" <"$WORK/logrun"
		fi
	fi
	[ "$HAVE_TOOL" = 1 ] && tool_rows "$r"
	[ "$HAVE_SITES" = 1 ] && sites_pair "$r"
	[ "$HAVE_LIVE" = 1 ] && live_pair "$r"
	if [ "$HAVE_FLOOR" = 1 ]; then
		run floor "$BIN/floor" "$SCALE" && collect floor <"$WORK/out"
	fi
	[ "$HAVE_NONEST" = 1 ] && nesting_pair "$r"
	block_pair "$r"
	baseline_pairs "$r"
	if [ "$HAVE_LTTNG" = 1 ]; then
		if run "ust_peer (disabled)" "$PEER/ust_peer" "$N_OFF"; then
			meta lt_off lttng "tracepoint disabled (session daemon running, no session)" ns/ev
			sample lt_off "$(cut -d'|' -f2 "$WORK/out")"
		fi
		lttng_enabled 0 "$r"
		lttng_enabled 1 "$r"
	fi
	say "repetition $r/$REPS done"
	r=$((r + 1))
done

# ---------------------------------------------------------------- statistics
# per key: median min max of the values, then of the aux values, then count
awk -F'\t' '
	function sorted_stats(s,   x, n, i, j, t, m) {
		n = split(s, x, " ")
		for (i = 2; i <= n; i++) {
			t = x[i]
			for (j = i - 1; j >= 1 && x[j] + 0 > t + 0; j--)
				x[j + 1] = x[j]
			x[j + 1] = t
		}
		m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		return sprintf("%.2f %.2f %.2f", m, x[1], x[n])
	}
	{ v[$1] = v[$1] " " $2; a[$1] = a[$1] " " $3; n[$1]++ }
	END { for (k in v) print k, sorted_stats(v[k]), sorted_stats(a[k]), n[k] }' \
	"$SAMPLES" >"$WORK/stats"
# get KEY [FIELD]: 2 median, 3 min, 4 max, 5 aux median, 6 aux min, 7 aux max
get() { awk -v k="$1" -v f="${2:-2}" '$1 == k { print $f }' "$WORK/stats"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && calc "if ($2 > 0) printf \"%.3f\", $1 / $2"; }
# pairs A B OP: the i-th sample of key A with the i-th of key B, for every
# repetition that has both (they ran in the same repetition, next to each
# other): A / B (OP ratio) or A - B (OP diff) per pair; prints "median q1 q3
# min max n" of those values (quartiles by nearest rank), nothing when none
pairs() {
	awk -F'\t' -v a="$1" -v b="$2" -v op="$3" '
		$1 == a { x[++na] = $2 }
		$1 == b { y[++nb] = $2 }
		function rank(p) { i = int(p * m + 0.999999); return v[i < 1 ? 1 : i] }
		END {
			n = na < nb ? na : nb
			for (i = 1; i <= n; i++)
				if (op == "diff") v[++m] = x[i] - y[i]
				else if (y[i] + 0 > 0) v[++m] = x[i] / y[i]
			if (!m) exit
			for (i = 2; i <= m; i++) {
				t = v[i]
				for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]
				v[j + 1] = t
			}
			med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
			printf "%.3f %.3f %.3f %.3f %.3f %d\n", med, rank(0.25), rank(0.75), v[1], v[m], m
		}' "$SAMPLES"
}
# pair_median A B OP; pair_spread A B OP: the median of the per-pair values,
# and what the targets table says of their spread
pair_median() { pairs "$@" | cut -d' ' -f1; }
pair_spread() {
	pairs "$@" | awk '{ printf "median of %d per-pair values; quartiles %s to %s, range %s to %s", $6, $2, $3, $4, $5 }'
}

STEAL1=$(steal_snapshot)
T_END=$(now_ns)

# ---------------------------------------------------------------- report
echo
echo "== posixtrace bench $(date -u +%FT%TZ), $(uname -n), Linux $(uname -r) $(uname -m)"
echo "   cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs;" \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null);" \
	"recorder clock: $CLOCK ($CLOCK_WHY)"
echo "   bench programs: -O2 -g, $LINKED; compiler: $($CC --version 2>/dev/null | head -1)"
command -v dpkg-query >/dev/null 2>&1 && [ "$HAVE_LTTNG" = 1 ] &&
	echo "   $(dpkg-query -W -f '${Package} ${Version}; ' lttng-tools liblttng-ust-dev babeltrace2 2>/dev/null)"
echo "   REPS=$REPS SCALE=$SCALE; load average $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
	"steal $(echo "$STEAL0 $STEAL1" | awk '{ printf "%.2f%%", ($4 > $2) ? 100 * ($3 - $1) / ($4 - $2) : 0 }');" \
	"$(((T_END - T_START) / 1000000000)) s"
[ "$HAVE_LOG" = 1 ] && echo "   log files on $LOG_FS; each log write posts $N_LOGW events;" \
	"the log read back holds $READ_EVENTS events ($READ_MB MB, $READ_BPE B/event, page cache warm)"
[ "$HAVE_LOG" = 1 ] && [ -n "$READLOG2" ] &&
	echo "   the log of 2 writers read back: $READ2_EVENTS events, $READ2_BPE B/event"
[ "$HAVE_TOOL" = 1 ] && echo "   the command: $TOOL, on CPU 1, over the log read back ($READ_TOTAL events" \
	"with the library's own); M events/s = those events / wall time of the command, its start included"
[ -n "$BASE_EV_DIR$BASE_RD_DIR" ] && echo "   baselines: ${BASE_EV_DIR:+$BASE_EV_DIR (the event path)}${BASE_EV_DIR:+${BASE_RD_DIR:+, }}${BASE_RD_DIR:+$BASE_RD_DIR (the readers)}"
for m in "$LINK_MSG" "$FLOOR_MSG" "$LTTNG_MSG" "$LOG_MSG" "$PACED_MSG" "$TOOL_MSG" "$BASE_MSG" "$UNTRACED_MSG"; do
	[ -n "$m" ] && echo "   NOTE: $m"
done
[ -n "$FAILED" ] && echo "   FAILED:$FAILED (their rows lack those repetitions)"

# notes for the table, built from the medians of the aux values
note_of() {
	key=$1
	aux=$(get "$key" 5)
	case "$key" in
	pc_def | pc_16m) echo "pace med $aux Mev/s = 0.8 x min(plain write for $PACED_SECONDS s / log B per event, flat-out posting rate); CPU 1" ;;
	pc_*_plain) echo "the disk's sustained rate: 1 MiB write()s for $PACED_SECONDS s + fdatasync, right before" ;;
	pc_*_post) echo "in $PACED_SECONDS s at most; log med $(printf %.0f "$aux") MB (removed once read)" ;;
	pc_*_live) echo "of those posted; med $(printf %.0f "$aux") events" ;;
	pc_*_lost) echo "of those posted; med $(printf %.0f "$aux") events" ;;
	pc_*_miss) echo "(posted - user events in the log) / posted; med $(printf %.0f "$aux")" ;;
	pc_*_shut) echo "final drain, end of the log, fdatasync (errors: the targets' runs)" ;;
	tool_dump) echo "peak RSS med $aux MiB" ;;
	tool_ctf | tool_chrome | tool_perfetto | tool_perfetto_zstd) echo "includes its start; output written into the temporary directory" ;;
	live_plain | live_otlp) echo "$N_LIVE begin/end pairs posted flat out, the loop timed by the program itself" ;;
	tool_otlp | tool_otlp_gzip) echo "$N_SPANS spans (and their 16-byte texts) encoded into OTLP requests, thrown away; peak RSS med $aux MiB" ;;
	short_proc) echo "of which images med $aux B ($N_SHORT processes with images, minus the same with --no-images, per process)" ;;
	tool_*_rss) echo "output med $aux B per event" ;;
	bt_print) echo "first $BT_REPS repetitions; peak RSS med $aux MiB" ;;
	logr_2w) echo "$(printf %.0f "$aux") events; median of 3 passes, after an untimed one" ;;
	off_none | off_created | filtered) echo "1 writer, CPU 1" ;;
	en16) echo "1 writer, CPU 1, default stream (LOOP, 4 MiB), no reader" ;;
	en16_2thr) echo "CPUs 0 and 1, (last end - first start) / all events" ;;
	en16_nowrap) echo "UNTIL_FULL stream larger than all events; lost med $aux" ;;
	en16_flush | en16_flush_block) echo "1 writer, CPU 1; 64 MiB FLUSH stream, log to /dev/null; nothing lost, nothing waited" ;;
	an_try | an_block) echo "analyzer on CPU 0 read med $aux% ($(get "$key" 6)..$(get "$key" 7)) of the events" ;;
	drain_*) echo "reads that found nothing: med $aux" ;;
	mem16) echo "allocated memfd bytes / events held (med $(printf %.0f "$aux"))" ;;
	logw_16m | logw_def) echo "log file bytes (med $aux MB) / (first event .. shutdown returned)" ;;
	*_plain) echo "log/plain med $(ratio "$(get "${key%_plain}")" "$(get "$key")")" ;;
	*_keeper) echo "sum of FLUSH_START..FLUSH_STOP = med $aux% of elapsed" ;;
	*_lost) echo "writer posted at med $aux Mev/s" ;;
	*_bpe) echo "log file bytes / user events in it" ;;
	logr) echo "$(printf %.0f "$aux") events; median of 3 passes, after an untimed one" ;;
	fl_ring_*) echo "48 B record, 4 MiB ring a thread, no reader" ;;
	lt_on | lt_ctx) echo "1 thread, CPU 1; $(get "$key" 5) trace bytes per event; discarded med $(get "${key}_disc")" ;;
	lt_off) echo "$N_OFF calls, CPU 1" ;;
	bt_count) echo "first $BT_REPS repetitions; $(printf %.0f "$aux") events; includes its start" ;;
	esac
}

echo
printf '%-58s %9s %9s %9s  %-6s %s\n' "benchmark" "median" "min" "max" "unit" "notes"
last_group=""
while IFS='|' read -r key group name unit; do
	# shellcheck disable=SC2046 # the fields of one stats line
	set -- $(awk -v k="$key" '$1 == k' "$WORK/stats")
	[ $# -ge 8 ] || continue
	if [ "$group" != "$last_group" ]; then
		case "$group" in
		posixtrace) title="posixtrace, recording and reading (bench_event)" ;;
		log) title="posixtrace, Trace Log (bench_log)" ;;
		paced) title="posixtrace, paced writer into a log, $PACED_SECONDS s (bench_log paced), first $PACED_REPS repetitions" ;;
		tool) title="posixtrace command ($TOOL), over the log read back" ;;
		floor) title="floor (bench/floor.c)" ;;
		baseline) title="against the baselines: the same case, tree and $BASE_EVENT (event), $BASE_CPU (event, before the CPU field) or $BASE_READ (readers), adjacent" ;;
		block) title="writers that may wait (--block), a FLUSH stream never full, the two adjacent" ;;
		lttng) title="LTTng-UST peer (bench/peer), $N_EN events a run" ;;
		*) title=$group ;;
		esac
		printf '%s\n' "--- $title"
		last_group=$group
	fi
	printf '%-58s %9s %9s %9s  %-6s %s\n' "$name" "$2" "$3" "$4" "$unit" "$(note_of "$key")"
done <"$META"

# ---------------------------------------------------------------- targets
echo
printf '%-58s %9s %11s  %-8s %s\n' "target (medians of this run)" "measured" "limit" "result" "from"
# target NAME VALUE OP LIMIT FROM: OP is <= or >=; an empty VALUE is "not
# measured", an empty LIMIT (it comes from a peer that did not run) "not
# judged", FROM then says why
target() {
	if [ -z "$2" ]; then
		printf '%-58s %9s %11s  %-8s %s\n' "$1" "-" "$3 ${4:-?}" "-" "not measured: $5"
		return
	fi
	if [ -z "$4" ]; then
		printf '%-58s %9.3f %11s  %-8s %s\n' "$1" "$2" "$3 ?" "-" "not judged: $5"
		return
	fi
	awk -v n="$1" -v v="$2" -v op="$3" -v l="$4" -v f="$5" 'BEGIN {
		ok = (op == "<=") ? (v + 0 <= l + 0) : (v + 0 >= l + 0)
		printf "%-58s %9.3f %11s  %-8s %s\n", n, v, op " " l, ok ? "met" : "NOT MET", f }'
}
# reported NAME TEXT: a value the issue asks to see, with no limit
reported() { printf '%-58s %9s %11s  %-8s %s\n' "$1" "" "" "reported" "$2"; }
why() { [ -n "$1" ] && echo "$2" || echo "$3"; }

EN16=$(get en16)
LT_CTX=$(get lt_ctx)
LT_OFF=$(get lt_off)
FL_SAME=$(get "$FLOOR_SAME")
NO_LTTNG="${LTTNG_MSG:-no LTTng sample}"
NO_FLOOR="${FLOOR_MSG:-no floor sample}"

target "16 B event, 1 thread / LTTng-UST + ctx vpid,vtid,ip (x)" "$(pair_median en16 lt_ctx ratio)" \
	"<=" 0.10 "$(why "$LT_CTX" "$(pair_spread en16 lt_ctx ratio); medians $EN16 ns / $LT_CTX ns" \
	"$NO_LTTNG")"
target "16 B event, 1 thread / floor ring with $CLOCK (x)" "$(pair_median en16 "$FLOOR_SAME" ratio)" \
	"<=" 1.2 "$(why "$FL_SAME" "$(pair_spread en16 "$FLOOR_SAME" ratio); medians $EN16 ns / $FL_SAME ns" \
	"$NO_FLOOR")"
# against the baselines: per-pair medians of adjacent runs
NO_BASE_EV=${BASE_EV_MSG:-no baseline sample}
NO_BASE_RD=${BASE_RD_MSG:-no baseline sample}
target "16 B event, tree / $BASE_EVENT (0.2.0) (x)" "$(pair_median b_en16_tree b_en16_base ratio)" "<=" 1.0 \
	"$(why "$(get b_en16_base)" "$(pair_spread b_en16_tree b_en16_base ratio); medians $(get b_en16_tree) / $(get b_en16_base) ns" "$NO_BASE_EV")"
target "the CPU field's cost: 16 B event, tree - $BASE_CPU (ns)" "$(pair_median b_cpu_tree b_cpu_base diff)" "<=" 1 \
	"$(why "$(get b_cpu_base)" "$(pair_spread b_cpu_tree b_cpu_base diff); medians $(get b_cpu_tree) / $(get b_cpu_base) ns; $BASE_CPU: the merge before the CPU field (80c823a), the tree holds later changes too" "${BASE_CPU_MSG:-no baseline sample}")"
target "--block's cost, FLUSH stream never full: with - without (ns)" \
	"$(pair_median en16_flush_block en16_flush diff)" "<=" 0.5 \
	"$(why "$(get en16_flush)" "$(pair_spread en16_flush_block en16_flush diff); medians $(get en16_flush_block) / $(get en16_flush) ns" "no pair in which the stream stayed below full")"
if [ -n "$CG_PT" ] && [ -n "$CG_LT" ]; then
	target "untraced: posix_trace_event - LTTng tracepoint (instructions)" \
		"$(calc "printf \"%.2f\", $CG_PT - $CG_LT")" "<=" 2 \
		"callgrind, per loop iteration: posix_trace_event $CG_PT, LTTng-UST $CG_LT, the loop alone ${CG_NONE:-?} (bench/peer/untraced.c)"
else
	target "untraced: posix_trace_event - LTTng tracepoint (instructions)" "" "<=" 2 \
		"${UNTRACED_MSG:-${LTTNG_MSG:-no LTTng count}}"
fi
if [ -n "$(get b_off_base)" ]; then
	reported "untraced, time: no stream, tree / $BASE_EVENT / LTTng disabled" \
		"$(get b_off_tree) / $(get b_off_base) / ${LT_OFF:--} ns (medians); tree / $BASE_EVENT per pair $(pair_median b_off_tree b_off_base ratio) ($(pair_spread b_off_tree b_off_base ratio))"
else
	reported "untraced, time: no stream, tree / LTTng disabled" \
		"$(get off_none) / ${LT_OFF:--} ns (medians); $NO_BASE_EV"
fi
target "log read, tree / $BASE_READ (x)" "$(pair_median b_logr_tree b_logr_base ratio)" ">=" 3 \
	"$(why "$(get b_logr_base)" "$(pair_spread b_logr_tree b_logr_base ratio); medians $(get b_logr_tree) / $(get b_logr_base) M events/s" "$NO_BASE_RD")"
if [ -n "$(get fl_logread)" ]; then
	FL_RD=$(get fl_logread)
	FL_3X=$([ -n "$(get b_logr_base)" ] && calc "printf \"3 x $BASE_READ is %.1f M events/s, %.2f of the floor's rate\", 3 * $(get b_logr_base), 3 * $(get b_logr_base) / $FL_RD")
	reported "  the log read's floor: pread / pread + CRC-32C (M events/s)" \
		"$(get fl_logpread) / $FL_RD (medians, $(calc "printf \"%.2f\", 1e3 / $FL_RD") ns an event with the CRC); tree / floor per pair $(pair_median b_logr_tree fl_logread ratio) ($(pair_spread b_logr_tree fl_logread ratio)); ${FL_3X:-no baseline sample}"
fi
target "dump --no-symbols, tree / $BASE_READ (x)" "$(pair_median b_dump_tree b_dump_base ratio)" ">=" 1.6 \
	"$(why "$(get b_dump_base)" "$(pair_spread b_dump_tree b_dump_base ratio); medians $(get b_dump_tree) / $(get b_dump_base) M events/s" "${BASE_RD_MSG:-${TOOL_MSG:-no baseline sample}}")"
target "convert --to ctf, tree / $BASE_READ (x)" "$(pair_median b_ctf_tree b_ctf_base ratio)" ">=" 1.6 \
	"$(why "$(get b_ctf_base)" "$(pair_spread b_ctf_tree b_ctf_base ratio); medians $(get b_ctf_tree) / $(get b_ctf_base) M events/s" "${BASE_RD_MSG:-${TOOL_MSG:-no baseline sample}}")"
[ -n "$(get b_sym_base)" ] && reported "dump with symbols, 1,000 call sites, tree / $BASE_READ" \
	"$(pair_median b_sym_tree b_sym_base ratio) ($(pair_spread b_sym_tree b_sym_base ratio))"
OFF_LIMIT=$([ -n "$LT_OFF" ] && calc "printf \"%.2f\", $LT_OFF + 0.5")
target "no stream exists, through the shared library (ns)" "$(get off_none)" "<=" "$OFF_LIMIT" \
	"$(why "$LT_OFF" "LTTng-UST disabled tracepoint $LT_OFF ns + 0.5" "$NO_LTTNG")"
target "a stream created, not started (ns)" "$(get off_created)" "<=" "$OFF_LIMIT" \
	"$(why "$LT_OFF" "LTTng-UST disabled tracepoint $LT_OFF ns + 0.5" "$NO_LTTNG")"
target "stream running, event filtered (ns)" "$(get filtered)" "<=" 3 "empty call: $(get empty) ns"
# the floor's own 2-thread ratio in this run bounds what the machine allows
FL_SCALE=$(pair_median "$FLOOR_SAME" "${FLOOR_SAME}_2thr" ratio)
TWO_LIMIT=1.9
[ -n "$FL_SCALE" ] && TWO_LIMIT=$(calc "l = 0.95 * $FL_SCALE; printf \"%.3f\", l < 1.9 ? l : 1.9")
target "2 writer threads, aggregate / 1 thread (x)" "$(pair_median en16 en16_2thr ratio)" ">=" "$TWO_LIMIT" \
	"$(pair_spread en16 en16_2thr ratio); medians $EN16 ns / $(get en16_2thr) ns; limit min(1.9, 0.95 x the floor's ${FL_SCALE:-?})"
reported "16 B event with a trigger armed / without (x)" \
	"$(pairs en16_trigger en16 ratio | awk '{ printf "%s, ", $1 }')$(pair_spread en16_trigger en16 ratio)"
target "nesting's cost: 16 B event with it - NESTING=0 (ns)" \
	"$(pair_median en16_nest_on en16_nest_off diff)" "<=" 1 \
	"$(why "$(get en16_nest_off)" "$(pair_spread en16_nest_on en16_nest_off diff); medians $(get en16_nest_on) / $(get en16_nest_off) ns" "nesting rows skipped")"
AN_ALONE=$(get an_alone)
for m in try block; do
	v=$(get "an_$m")
	slow=$([ -n "$v" ] && [ -n "$AN_ALONE" ] && calc "printf \"%.2f\", 100 * ($v / $AN_ALONE - 1)")
	[ "$m" = try ] && what="trygetnext loop" || what="getnext (blocking)"
	target "writer slowed by a live analyzer, $what (%)" "$slow" "<=" 10 \
		"$v ns vs $AN_ALONE ns alone; analyzer read $(get "an_$m" 5)% of the events"
done
if [ "$HAVE_LOG" = 1 ]; then
	for s in def 16m; do
		[ "$s" = def ] && size="4 MiB (default)" || size="16 MiB"
		target "log write / plain write, FLUSH $size stream (x)" \
			"$(ratio "$(get "logw_$s")" "$(get "logw_${s}_plain")")" ">=" 0.9 \
			"$(get "logw_$s") MB/s / $(get "logw_${s}_plain") MB/s"
		target "keeper drain / plain write, $size stream (x)" \
			"$(ratio "$(get "logw_${s}_keeper")" "$(get "logw_${s}_plain")")" ">=" 1 \
			"keeper $(get "logw_${s}_keeper") MB/s while busy, disk $(get "logw_${s}_plain") MB/s"
		reported "  events lost by a flat-out writer, $size stream" \
			"$(get "logw_${s}_lost")% of $N_LOGW posted (posting at $(get "logw_${s}_lost" 5) Mev/s)"
	done
	BT=$(get bt_count)
	target "log read, posix_trace_open + getnext (M events/s)" "$(get logr)" ">=" 100 \
		"babeltrace2 on LTTng's CTF: $(why "$BT" "$BT M events/s in this run" "not measured")"
	if [ -n "$(get logr_2w)" ]; then
		reported "  the same, a log written by 2 threads" "$(get logr_2w) M events/s"
	fi
else
	target "log write / plain write (x)" "" ">=" 0.9 "$LOG_MSG"
	target "log read, posix_trace_open + getnext (M events/s)" "" ">=" 100 "$LOG_MSG"
fi
# paced_target SFX SIZE: runs of the paced writer with nothing lost (the
# log's status) and nothing missing (read back), then each run
paced_target() {
	name="paced writer at 80 % of min(disk, its own) loses nothing, $2"
	awk -F'\t' -v k="pc_$1" -v name="$name" -v reps="$PACED_REPS" -v why="${PACED_MSG:-no run}" '
		$1 == k { a[++na] = $2; t[na] = $3 }
		$1 == k "_post" { p[++np] = $2 }
		$1 == k "_live" { s[++ns] = $3 }
		$1 == k "_lost" { l[++nl] = $3 }
		$1 == k "_miss" { m[++nm] = $3 }
		$1 == k "_shut" { d[++nd] = $2; e[nd] = $3 }
		$1 == k "_plain" { pl[++npl] = $2 }
		END {
			if (np == 0) {
				printf "%-58s %9s %11s  %-8s %s\n", name, "-", reps " of " reps, "-", "not measured: " why
				exit
			}
			ok = 0
			for (i = 1; i <= np; i++)
				if (l[i] + 0 == 0 && s[i] + 0 == 0 && m[i] + 0 == 0)
					ok++
			printf "%-58s %9s %11s  %-8s %s\n", name, ok " of " np, reps " of " reps, \
				(ok == reps && np == reps) ? "met" : "NOT MET", \
				"runs with 0 lost (log and live status), 0 missing (read back)"
			for (i = 1; i <= np; i++) {
				err = e[i] == 110 ? "ETIMEDOUT" : e[i] == 5 ? "EIO" : "errno " e[i]
				printf "%-58s %9s %11s  %-8s %s\n", "  run " i, "", "", "reported", \
					sprintf("%.2f M posted at %.2f M/s (pace %.2f, sustained plain write %.0f MB/s); " \
						"lost %.0f (log status), %.0f (live status), %.0f missing; %s", \
						p[i], a[i], t[i], pl[i], l[i], s[i], \
						m[i], e[i] + 0 ? "shutdown or read back FAILED: " err : \
						sprintf("shutdown %.2f s", d[i] / 1000))
			}
		}' "$SAMPLES"
}
if [ "$HAVE_PACED" = 1 ]; then
	paced_target def "4 MiB"
	paced_target 16m "16 MiB"
else
	target "paced writer at 80 % of plain write loses nothing" "" "" "$PACED_REPS of $PACED_REPS" "$PACED_MSG"
fi
if [ "$HAVE_TOOL" = 1 ]; then
	BTP=$(get bt_print)
	target "posixtrace dump LOG > /dev/null (M events/s)" "$(get tool_dump)" ">=" 3 \
		"babeltrace2 printing its CTF conversion: $(why "$BTP" "$BTP M events/s" "not measured")"
	target "posixtrace convert --to chrome (M events/s)" "$(get tool_chrome)" ">=" 1 \
		"peak RSS med $(get tool_chrome_rss) MiB"
	target "posixtrace convert --to ctf (M events/s)" "$(get tool_ctf)" ">=" 5 \
		"peak RSS med $(get tool_ctf_rss) MiB"
	target "posixtrace convert --to perfetto (M events/s)" "$(get tool_perfetto)" ">=" 5 \
		"peak RSS med $(get tool_perfetto_rss) MiB"
	target "posixtrace convert --to perfetto --compression zstd (M events/s)" \
		"$(get tool_perfetto_zstd)" ">=" 5 "peak RSS med $(get tool_perfetto_zstd_rss) MiB"
	# bench_log's payloads are unique (each event's number): written inline
	# in hex, none interned (a value that repeats is: 19 B uncompressed);
	# 16 random bytes a payload take 17.6 B with zstd (docs/PERFETTO.md)
	target "perfetto bytes per event, --compression zstd (16 B binary, unique)" \
		"$(get tool_perfetto_zstd_rss 5)" "<=" 32 \
		"uncompressed $(get tool_perfetto_rss 5) B; Chrome JSON: $(get tool_chrome_rss 5) B per event"
	target "posixtrace export, encoded spans (M spans/s, gzip)" "$(get tool_otlp_gzip)" ">=" 1 \
		"$(why "$(get tool_otlp)" "without compression $(get tool_otlp) M spans/s" "no log of bench_spans")"
	target "traced program, record --otlp / record -o (x)" "$(pair_median live_otlp live_plain ratio)" \
		"<=" 1.05 "$(why "$(get live_otlp)" "$(pair_spread live_otlp live_plain ratio); medians $(get live_otlp) ns / $(get live_plain) ns per event" "no record --otlp sample")"
	target "log bytes of images per short-lived process" "$(get short_proc 5)" "<=" 64 \
		"$(why "$(get short_proc)" "whole log $(get short_proc) B per process" "not measured")"
	target "dump with symbols / without, 1,000 call sites (x)" \
		"$(pair_median tool_dump_sym tool_dump_raw ratio)" ">=" 0.5 \
		"$(why "$(get tool_dump_sym)" "$(pair_spread tool_dump_sym tool_dump_raw ratio); medians $(get tool_dump_sym) / $(get tool_dump_raw) M events/s; page cache $([ "$(id -u)" = 0 ] && echo dropped || echo kept) before each" "no log of bench_sites")"
else
	target "posixtrace dump LOG > /dev/null (M events/s)" "" ">=" 3 "$TOOL_MSG"
	target "posixtrace convert --to chrome (M events/s)" "" ">=" 1 "$TOOL_MSG"
	target "posixtrace convert --to ctf (M events/s)" "" ">=" 5 "$TOOL_MSG"
fi
target "stream bytes per recorded 16 B event" "$(get mem16)" "<=" 32 \
	"$(why "$(get lt_on 5)" "LTTng-UST trace: $(get lt_on 5) bare, $(get lt_ctx 5) with contexts" "16 MiB UNTIL_FULL stream")"
if [ "$HAVE_LOG" = 1 ]; then
	target "log bytes per recorded 16 B event" "$(get logw_def_bpe)" "<=" 32 \
		"log of the 4 MiB stream; lossless log read back: $READ_BPE"
else
	target "log bytes per recorded 16 B event" "" "<=" 32 "$LOG_MSG"
fi

[ -z "$FAILED" ]
