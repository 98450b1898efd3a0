#!/bin/sh
# bench/run.sh BUILD - run by `make bench` once build/bench/* are built.
#
# Runs, in one invocation, interleaved repetition by repetition:
#   1. our cases (BUILD/bench/bench_event, one repetition per process),
#      then the Trace Log cases (BUILD/bench/bench_log: log write with a
#      FLUSH stream into an APPEND log file under the mktemp directory, a
#      plain write() of the same bytes, reading a pre-recorded log that is
#      written once per invocation before the repetitions),
#   2. the physical floor (../shared/anchors/floor.c, built here with the
#      same flags as our benchmarks: gcc -O2 -g, one static executable),
#   3. the LTTng-UST peer (../shared/anchors/ust_bench.c + anchors_tp.[ch],
#      built here against Debian's liblttng-ust-dev), with and without the
#      vpid,vtid,ip contexts,
# then prints one table (median, min, max over the repetitions) and the
# issue's targets with their ratios and whether each one is met.
#
# Knobs (environment): REPS [9] repetitions of everything;  SCALE [1]
# multiplies our iteration counts;  N [4000000] events per LTTng run;
# N_DISABLED [20000000] events of the disabled-tracepoint run;
# SKIP_FLOOR=1, SKIP_LTTNG=1;  NO_INSTALL=1 (never call apt-get);
# N_LOGW [8000000] events posted per log-write run (times SCALE);
# N_LOGR [4000000] events of the pre-recorded log read back;  SKIP_LOG=1;
# BT_REPS [3] repetitions that also count the LTTng trace (default channel)
# with babeltrace2 (when installed).
# The floor and the peer are skipped, with a message, when their sources or
# packages are missing.  Nothing is written into the repository: peer
# binaries go to BUILD/bench/peer, traces to a mktemp directory under /tmp.
set -u

BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ANCHORS="$(dirname "$0")/../../shared/anchors"
REPS=${REPS:-9}
SCALE=${SCALE:-1}
N=${N:-4000000}
N_DISABLED=${N_DISABLED:-20000000}
N_LOGW=${N_LOGW:-8000000}
N_LOGR=${N_LOGR:-4000000}
BT_REPS=${BT_REPS:-3}
PEER="$BUILD/bench/peer"
BENCH="$BUILD/bench/bench_event"
BENCH_LOG="$BUILD/bench/bench_log"
WORK=$(mktemp -d /tmp/posixtrace-bench.XXXXXX)
SAMPLES=$WORK/samples   # key <TAB> value <TAB> aux
META=$WORK/meta         # key|name|unit|note, in table order
STARTED_SESSIOND_PID=""
CUR_SESSION=""

log() { printf '[bench] %s\n' "$*" >&2; }

cleanup() {
	set +e
	if [ -n "$CUR_SESSION" ]; then lttng destroy "$CUR_SESSION" >/dev/null 2>&1; fi
	if [ -n "$STARTED_SESSIOND_PID" ]; then
		log "stopping lttng-sessiond pid $STARTED_SESSIOND_PID (started by this script)"
		kill -TERM "$STARTED_SESSIOND_PID" 2>/dev/null
		i=0
		while [ $i -lt 50 ] && kill -0 "$STARTED_SESSIOND_PID" 2>/dev/null &&
			! grep -q '^State:.*Z' "/proc/$STARTED_SESSIOND_PID/status" 2>/dev/null; do
			sleep 0.1; i=$((i + 1))
		done
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ns() { date +%s%N; }
T_START=$(now_ns)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
steal_snapshot() { awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print $9, t}' /proc/stat; }
STEAL0=$(steal_snapshot)

# meta KEY NAME UNIT NOTE: declares a table row (first declaration wins)
meta() { grep -q "^$1|" "$META" 2>/dev/null || printf '%s|%s|%s|%s\n' "$1" "$2" "$3" "$4" >>"$META"; }
sample() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-0}" >>"$SAMPLES"; }
: >"$META"; : >"$SAMPLES"

[ -x "$BENCH" ] || { echo "bench/run.sh: $BENCH not built (run make bench)" >&2; exit 1; }

# ---------------------------------------------------------------- floor
HAVE_FLOOR=0
FLOOR_MSG=""
if [ "${SKIP_FLOOR:-0}" = 1 ]; then
	FLOOR_MSG="floor skipped (SKIP_FLOOR=1)"
elif [ -f "$ANCHORS/floor.c" ] && [ -f "$ANCHORS/floor_tls.c" ]; then
	mkdir -p "$PEER"
	# same flags as build/bench/*: -O2 -g, everything in one executable
	if gcc -O2 -g -o "$PEER/floor" "$ANCHORS/floor.c" "$ANCHORS/floor_tls.c" -lpthread; then
		HAVE_FLOOR=1
	else
		FLOOR_MSG="floor skipped: $ANCHORS/floor.c did not build"
	fi
else
	FLOOR_MSG="floor skipped: $ANCHORS/floor.c not found"
fi
[ -n "$FLOOR_MSG" ] && log "$FLOOR_MSG"

# ---------------------------------------------------------------- LTTng
HAVE_LTTNG=0
LTTNG_MSG=""
lttng_present() {
	command -v lttng >/dev/null 2>&1 && command -v lttng-sessiond >/dev/null 2>&1 &&
		command -v pkg-config >/dev/null 2>&1 && pkg-config --exists lttng-ust 2>/dev/null
}
if [ "${SKIP_LTTNG:-0}" = 1 ]; then
	LTTNG_MSG="LTTng-UST peer skipped (SKIP_LTTNG=1)"
elif [ ! -f "$ANCHORS/ust_bench.c" ] || [ ! -f "$ANCHORS/anchors_tp.h" ] || [ ! -f "$ANCHORS/anchors_tp.c" ]; then
	LTTNG_MSG="LTTng-UST peer skipped: ust_bench.c / anchors_tp.[ch] not found in $ANCHORS"
else
	if ! lttng_present; then
		if [ "$(id -u)" = 0 ] && [ "${NO_INSTALL:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
			log "installing lttng-tools liblttng-ust-dev pkg-config with apt-get"
			apt-get update >/dev/null 2>&1
			DEBIAN_FRONTEND=noninteractive apt-get install -y lttng-tools liblttng-ust-dev pkg-config \
				>/dev/null 2>&1 || log "apt-get install failed"
		fi
	fi
	if ! lttng_present; then
		LTTNG_MSG="LTTng-UST peer SKIPPED: lttng-tools / liblttng-ust-dev not installed (run make bench as root to install them with apt-get)"
	else
		mkdir -p "$PEER"
		cp "$ANCHORS/ust_bench.c" "$ANCHORS/anchors_tp.h" "$ANCHORS/anchors_tp.c" "$PEER/"
		# shellcheck disable=SC2046
		if gcc -O2 -g -I"$PEER" -o "$PEER/ust_bench" "$PEER/ust_bench.c" "$PEER/anchors_tp.c" \
			$(pkg-config --cflags --libs lttng-ust) -lpthread; then
			HAVE_LTTNG=1
		else
			LTTNG_MSG="LTTng-UST peer skipped: ust_bench did not build"
		fi
	fi
fi
if [ "$HAVE_LTTNG" = 1 ]; then
	if [ "$(id -u)" = 0 ]; then PIDFILE=/var/run/lttng/lttng-sessiond.pid
	else PIDFILE=$HOME/.lttng/lttng-sessiond.pid; fi
	if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
		log "using the running lttng-sessiond pid $(cat "$PIDFILE") (left running)"
	elif lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 && [ -f "$PIDFILE" ]; then
		STARTED_SESSIOND_PID=$(cat "$PIDFILE")
		log "started lttng-sessiond pid $STARTED_SESSIOND_PID"
	else
		HAVE_LTTNG=0
		LTTNG_MSG="LTTng-UST peer skipped: lttng-sessiond did not start"
	fi
fi
[ -n "$LTTNG_MSG" ] && log "$LTTNG_MSG"
mkdir -p "$WORK/traces"

# one LTTng session: enabled tracepoint, ctx 0|1; prints "ns bytes_per_event discarded"
lttng_run() {
	ctx=$1 rep=$2
	s="ptbench-$$-$ctx-$rep" out="$WORK/traces/$ctx-$rep"
	CUR_SESSION=$s
	lttng create "$s" --output="$out" >/dev/null || return 1
	lttng enable-event -u -s "$s" anchors:ev >/dev/null
	if [ "$ctx" = 1 ]; then lttng add-context -u -s "$s" -t vpid -t vtid -t ip >/dev/null; fi
	lttng start "$s" >/dev/null
	res=$(taskset -c 1 "$PEER/ust_bench" "$N" 1)
	lttng stop "$s" >/dev/null 2>&1
	disc=$(lttng list "$s" | awk '/Discarded events:/{s+=$3} END{print s+0}')
	lttng destroy "$s" >/dev/null
	CUR_SESSION=""
	ns=$(echo "$res" | sed -n 's/.*ns_per_event=\([0-9.]*\).*/\1/p')
	bytes=$(du -sb "$out" | awk '{print $1}')
	if [ "$ctx" = 0 ] && [ "$HAVE_BT" = 1 ] && [ "$rep" -le "$BT_REPS" ]; then
		# babeltrace2 decodes every event (counter sink, the anchors'
		# command; it prints running totals, the last one counts), pinned
		# like our log reader; the rate includes its process start, as in
		# the anchors
		t0=$(now_ns)
		cnt=$(taskset -c 1 babeltrace2 "$out" -c sink.utils.counter 2>/dev/null |
			awk '$2 == "Event" && $3 == "messages" { c = $1 } END { print c }')
		t1=$(now_ns)
		if [ -n "$cnt" ] && [ "$cnt" -gt 0 ]; then
			sample bt_count "$(awk -v c="$cnt" -v t="$((t1 - t0))" 'BEGIN{ printf "%.3f", c * 1e3 / t }')" "$cnt"
		fi
	fi
	rm -rf "$out"
	awk -v ns="$ns" -v b="$bytes" -v n="$N" -v d="$disc" \
		'BEGIN{ printf "%s %.2f %d\n", ns, (n > d) ? b / (n - d) : 0, d }'
}

# floor ROW|name|med|min|max|note -> sample with our key
floor_rows() {
	"$PEER/floor" 1 1 "$1" | awk -F'|' '$1=="ROW"{print $2 "|" $3}' | while IFS='|' read -r name v; do
		case "$name" in
		"ring/thread vdso, 192KiB") k=floor_vdso ;;
		"ring/thread vdso, 2 thr") k=floor_vdso_2thr ;;
		"ring/thread vdso, 192MiB") k=floor_vdso_big ;;
		"clock_gettime MONOTONIC") k=floor_clock ;;
		*) continue ;;
		esac
		meta "$k" "floor: $name" "ns/ev" "anchors floor.c, gcc -O2 -g"
		sample "$k" "$v"
	done
}

# ---------------------------------------------------------------- Trace Log
# The log cases write into $WORK/log (the file system of /tmp); the log that
# is read back is written once here, without losses (bench_log mklog).
HAVE_LOG=0
LOG_MSG=""
LOGDIR=$WORK/log
READLOG=$LOGDIR/read.log
N_LOGW_S=$(awk -v n="$N_LOGW" -v s="$SCALE" 'BEGIN{ printf "%d", n * s }')
if [ "${SKIP_LOG:-0}" = 1 ]; then
	LOG_MSG="Trace Log cases skipped (SKIP_LOG=1)"
elif [ ! -x "$BENCH_LOG" ]; then
	LOG_MSG="Trace Log cases skipped: $BENCH_LOG not built"
else
	mkdir -p "$LOGDIR"
	if MK=$("$BENCH_LOG" mklog "$READLOG" "$N_LOGR"); then
		HAVE_LOG=1
		READ_EVENTS=$(echo "$MK" | cut -d'|' -f2)
		READ_MB=$(echo "$MK" | awk -F'|' '{ printf "%.0f", $3 / 1e6 }')
		log "pre-recorded log: $READ_EVENTS user events, $READ_MB MB, written in $(echo "$MK" | cut -d'|' -f4) s (lost $(echo "$MK" | cut -d'|' -f5))"
	else
		LOG_MSG="Trace Log cases skipped: bench_log mklog failed"
	fi
fi
[ -n "$LOG_MSG" ] && log "$LOG_MSG"
LOG_FS=$(df -PT "$WORK" 2>/dev/null | awk 'NR == 2 { print $2 " on " $1 }')

# babeltrace2 counting a trace this script recorded (ctx 0, first BT_REPS reps)
HAVE_BT=0
if [ "$HAVE_LTTNG" = 1 ] && command -v babeltrace2 >/dev/null 2>&1; then HAVE_BT=1; fi
# anchors' babeltrace2 count rate (default channel trace), from their README
BT_ANCHOR=$(sed -n 's/.*babeltrace2 count (read) of that trace.* med \([0-9.]*\) Mev\/s.*/\1/p' \
	"$ANCHORS/README.md" 2>/dev/null | head -1)

# ---------------------------------------------------------------- runs
log "REPS=$REPS; each repetition: bench_event, floor, LTTng (N=$N)"
r=1
while [ "$r" -le "$REPS" ]; do
	"$BENCH" 1 "$SCALE" >"$WORK/out" || { echo "bench_event failed" >&2; exit 1; }
	while IFS='|' read -r tag key name med lo hi unit note aux; do
		[ "$tag" = ROW ] || continue
		case "$key" in an_try|an_block|drain_*|mem16) note="" ;; esac
		meta "$key" "$name" "$unit" "$note"
		sample "$key" "$med" "$aux"
	done <"$WORK/out"
	if [ "$HAVE_LOG" = 1 ]; then
		"$BENCH_LOG" run "$LOGDIR" "$N_LOGW_S" "$READLOG" 3 >"$WORK/out" ||
			{ echo "bench_log failed" >&2; exit 1; }
		while IFS='|' read -r tag key name med lo hi unit note aux; do
			[ "$tag" = ROW ] || continue
			case "$key" in
			*_lost) sample "$key" "$(awk -v v="$med" 'BEGIN{ printf "%.2f", v / 1000 }')" "$aux"
				unit="k ev" ;;
			*) sample "$key" "$med" "$aux" ;;
			esac
			meta "$key" "$name" "$unit" ""
		done <"$WORK/out"
	fi
	if [ "$HAVE_FLOOR" = 1 ]; then
		floor_rows "ring/thread vdso, 192KiB"
		floor_rows "ring/thread vdso, 2 thr"
		floor_rows "clock_gettime MONOTONIC"
	fi
	if [ "$HAVE_LTTNG" = 1 ]; then
		v=$(taskset -c 1 "$PEER/ust_bench" "$N_DISABLED" 1 | sed -n 's/.*ns_per_event=\([0-9.]*\).*/\1/p')
		meta lt_off "lttng-ust: tracepoint disabled (no session)" "ns/ev" "$N_DISABLED events"
		sample lt_off "$v"
		for ctx in 0 1; do
			if set -- $(lttng_run "$ctx" "$r") && [ -n "${1:-}" ]; then
				if [ "$ctx" = 0 ]; then
					meta lt_on "lttng-ust: enabled, default channel" "ns/ev" ""
					sample lt_on "$1" "$2"; sample lt_on_disc "$3"
				else
					meta lt_ctx "lttng-ust: + ctx vpid,vtid,ip" "ns/ev" ""
					sample lt_ctx "$1" "$2"; sample lt_ctx_disc "$3"
				fi
			else
				log "LTTng run failed (ctx=$ctx rep=$r)"
			fi
		done
		if grep -q '^bt_count' "$SAMPLES"; then
			meta bt_count "babeltrace2 count (counter sink), default-channel trace" "Mev/s" ""
		fi
	fi
	log "repetition $r/$REPS done"
	r=$((r + 1))
done

# ---------------------------------------------------------------- report
# stats over the samples: "key med min max auxmed auxmin auxmax n"
awk -F'\t' '{ v[$1] = v[$1] " " $2; a[$1] = a[$1] " " $3 }
	function st(s,   n, x, i, j, t, m) {
		n = split(s, x, " ")
		for (i = 2; i <= n; i++) { t = x[i]; for (j = i - 1; j >= 1 && x[j] + 0 > t + 0; j--) x[j + 1] = x[j]; x[j + 1] = t }
		m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		return sprintf("%.2f %.2f %.2f", m, x[1], x[n])
	}
	END { for (k in v) { n = split(v[k], tmp, " "); print k, st(v[k]), st(a[k]), n } }' "$SAMPLES" >"$WORK/stats"
get() { awk -v k="$1" -v f="${2:-2}" '$1 == k { print $f }' "$WORK/stats"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.3f", a / b }'; }

STEAL1=$(steal_snapshot)
T_END=$(now_ns)
echo
echo "== posixtrace bench: $(date -u +%FT%TZ)  host $(uname -n)  kernel $(uname -r)"
echo "   cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs," \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
echo "   $(cc --version | head -1); bench flags -O2 -g, static libposixtrace.a;" \
	"$(dpkg-query -W -f '${Package} ${Version}, ' lttng-tools liblttng-ust-dev 2>/dev/null)"
echo "   REPS=$REPS SCALE=$SCALE, LTTng N=$N; loadavg at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg);" \
	"steal $(echo "$STEAL0 $STEAL1" | awk '{ printf "%.2f%%", ($4 > $2) ? 100 * ($3 - $1) / ($4 - $2) : 0 }');" \
	"wall $(( (T_END - T_START) / 1000000000 )) s"
[ -n "$FLOOR_MSG" ] && echo "   NOTE: $FLOOR_MSG"
[ -n "$LTTNG_MSG" ] && echo "   NOTE: $LTTNG_MSG"
[ -n "$LOG_MSG" ] && echo "   NOTE: $LOG_MSG"
[ "$HAVE_LOG" = 1 ] && echo "   Trace Log: files in $WORK/log ($LOG_FS); log write: $N_LOGW_S posted 16 B events" \
	"per run, writer on CPU1, keeper unpinned; read: $READ_EVENTS-event log ($READ_MB MB), reader on CPU1"
echo
printf '%-54s %9s %9s %9s %-6s %s\n' "benchmark" "median" "min" "max" "unit" "notes"
printf '%-54s %9s %9s %9s %-6s %s\n' "---------" "------" "---" "---" "----" "-----"
while IFS='|' read -r key name unit note; do
	set -- $(awk -v k="$key" '$1 == k' "$WORK/stats")
	[ $# -ge 8 ] || continue
	case "$key" in
	an_try|an_block) note="analyzer on CPU0 read med $5% (min $6%) of the writer's events" ;;
	drain_*) note="backlog read with the writer on CPU1 still recording; idle polls med $5" ;;
	mem16) note="stream mapping bytes / events it held ($(printf %.0f "$5")); record = 24 B header + 16 B" ;;
	lt_on|lt_ctx) note="1 thr, CPU1; trace bytes/ev med $5; discarded med $(get "${key}_disc")" ;;
	logw_16m|logw_def) note="log file med $5 MB (min $6); file bytes / (first event .. shutdown returned)" ;;
	logw_*_plain) note="1 MiB write()s + fdatasync of the log's bytes, same fs; log/plain med $(ratio "$(get "${key%_plain}")" "$2")" ;;
	logw_*_ev) note="user events in the log / elapsed; logged med $(printf %.0f "$5") of $N_LOGW_S posted" ;;
	logw_*_lost) note="$(awk -v l="$2" -v n="$N_LOGW_S" 'BEGIN{ printf "%.1f%%", 100 * l * 1000 / n }') of posted; writer posted at med $5 Mev/s, the keeper drains slower" ;;
	logw_*_keeper) note="busy = sum of FLUSH_STOP - FLUSH_START in the log; busy med $5% of elapsed" ;;
	logw_*_shut) note="final drain + header + fdatasync" ;;
	logr) note="$(printf %.0f "$5") events, $READ_MB MB; median of 3 passes per rep (after 1 untimed); page cache warm" ;;
	bt_count) note="first $BT_REPS reps, trace of 'enabled, default channel' ($(printf %.0f "$5") ev); incl. process start" ;;
	esac
	printf '%-54s %9s %9s %9s %-6s %s\n' "$name" "$2" "$3" "$4" "$unit" "$note"
done <"$META"

# ---------------------------------------------------------------- targets
echo
printf '%-54s %9s %9s %9s  %s\n' "target (medians of this run)" "measured" "limit" "meas/lim" "result"
printf '%-54s %9s %9s %9s  %s\n' "----------------------------" "--------" "-----" "--------" "------"
# target NAME VALUE OP LIMIT: OP is <= or >=
target() {
	if [ -z "$2" ]; then
		printf '%-54s %9s %9s %9s  %s\n' "$1" "-" "$3 $4" "-" "not measured (peer/floor missing)"
		return
	fi
	awk -v n="$1" -v v="$2" -v op="$3" -v l="$4" 'BEGIN {
		ok = (op == "<=") ? (v + 0 <= l + 0) : (v + 0 >= l + 0)
		printf "%-54s %9.2f %9s %9.2f  %s\n", n, v, op " " l, v / l, ok ? "met" : "NOT MET" }'
}
EN16=$(get en16); EN16_2=$(get en16_2thr)
target "16 B event / LTTng-UST + ctx vpid,vtid,ip (ratio)" "$(ratio "$EN16" "$(get lt_ctx)")" "<=" 0.4
target "16 B event / floor ring/thread vdso (ratio)" "$(ratio "$EN16" "$(get floor_vdso)")" "<=" 1.5
target "no stream running (ns/call)" "$(get disabled)" "<=" 2
target "stream running, event filtered (ns/call)" "$(get filtered)" "<=" 5
target "2 threads: aggregate events/s / 1 thread (ratio)" "$(ratio "$EN16" "$EN16_2")" ">=" 1.8
target "analyzer drain, trygetnext (M events/s)" "$(get drain_try)" ">=" 20
target "analyzer drain, getnext (M events/s)" "$(get drain_block)" ">=" 20
target "analyzer drain, trygetnext, UNTIL_FULL (M events/s)" "$(get drain_try_uf)" ">=" 20
target "writer slowdown by a trygetnext analyzer (%)" \
	"$(awk -v a="$(get an_try)" -v b="$(get an_alone)" 'BEGIN{ if (b > 0) printf "%.2f", 100 * (a / b - 1) }')" "<=" 15
target "writer slowdown by a getnext analyzer (%)" \
	"$(awk -v a="$(get an_block)" -v b="$(get an_alone)" 'BEGIN{ if (b > 0) printf "%.2f", 100 * (a / b - 1) }')" "<=" 15
printf '%-54s %9s %9s %9s  %s\n' "payload 0 / 16 / 256 / max B (ns/event)" "" "" "" \
	"reported: $(get en0) / $EN16 / $(get en256) / $(get enmax)"
printf '%-54s %9s %9s %9s  %s\n' "memory per recorded 16 B event (B)" "$(get mem16)" "" "" \
	"reported$( [ -n "$(get lt_on 5)" ] && echo "; LTTng trace on disk: $(get lt_on 5) B/ev without ctx, $(get lt_ctx 5) B/ev with ctx")"
LOGW16=$(get logw_16m); LOGWDEF=$(get logw_def); LOGR=$(get logr)
if [ "$HAVE_LOG" = 1 ]; then
	target "log write / plain write, FLUSH 16 MiB stream (ratio)" "$(ratio "$LOGW16" "$(get logw_16m_plain)")" ">=" 0.8
	target "log write / plain write, FLUSH 4 MiB stream (ratio)" "$(ratio "$LOGWDEF" "$(get logw_def_plain)")" ">=" 0.8
	target "log read, open + getnext (M events/s)" "$LOGR" ">=" 50
	printf '%-54s %9s %9s %9s  %s\n' "log write: events lost, 16 MiB / 4 MiB stream" "" "" "" \
		"reported: $(get logw_16m_lost) / $(get logw_def_lost) k of $N_LOGW_S posted; keeper drain $(get logw_16m_keeper) / $(get logw_def_keeper) Mev/s"
	printf '%-54s %9s %9s %9s  %s\n' "log read vs babeltrace2 count (M events/s)" "" "" "" \
		"reported: ours $LOGR; babeltrace2 $( [ -n "$(get bt_count)" ] && echo "$(get bt_count) (this run)" || echo "not run (no LTTng trace in this run)")$( [ -n "$BT_ANCHOR" ] && echo ", $BT_ANCHOR (anchors README)")"
else
	printf '%-54s %9s %9s %9s  %s\n' "log write / read throughput" "" "" "" "not measured: $LOG_MSG"
fi
