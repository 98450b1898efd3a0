# SPDX-License-Identifier: MIT
# record and attach --otlp: spans and log records sent while recording, to
# a receiver on 127.0.0.1 (tests/cli/otlp_receiver.py, a free port).  What
# the receiver accepted is decoded by protoc with the project's subset of
# the OTLP schema and checked against dump of the log kept
# (tests/cli/otlp_check.py): names, nesting, times, counts, a pair whose
# begin and end are in different files of the rotated log.  Then: the
# receiver holds its first request while the traced program runs (the
# program finishes while it is held: it never waits for the network),
# answers 503 (retries and drops counted in the summary, exit status 1),
# holds a request while --rotate's COUNT removes files not yet read (counted),
# is down from the start (bounded attempts, the log complete), holds
# everything while the recorder is stopped by SIGTERM (the wait at the end
# is bounded by --otlp-wait, the rest said), is stopped by SIGINT with a
# healthy receiver (what was recorded is sent), answers with a body that
# never ends or drips its headers (each attempt bounded by --timeout).
# Every command runs under timeout(1); each receiver is killed when its
# check ends.  Sourced by tests/cli/run.sh (its helpers and variables).

OL_PROTO_DIR="$ROOT/tests/otlp"
OL_RECEIVER="$HERE/otlp_receiver.py"
OL_CHECK="python3 $HERE/otlp_check.py"
OL_RX_PID=""

# ol_start NAME [FAULTS]: a receiver in directory NAME.rx; its port in OL_PORT
ol_start() {
	rm -rf "$1.rx" && mkdir "$1.rx"
	timeout 300 python3 "$OL_RECEIVER" "$1.rx/port" "$1.rx" "${2:-}" 2>"$1.rx/stderr" &
	OL_RX_PID=$!
	BG="$BG $OL_RX_PID"
	wait_for 20 test -s "$1.rx/port" || { OL_PORT=1; return 1; }
	OL_PORT=$(cat "$1.rx/port")
}
ol_stop() { [ -n "$OL_RX_PID" ] && kill "$OL_RX_PID" 2>/dev/null; wait "$OL_RX_PID" 2>/dev/null; OL_RX_PID=""; }
# ol_matches CHECK NAME DIR [CHECKER OPTIONS]: NAME's requests against dump of DIR
ol_matches() {
	c=$1 n=$2 log=$3; shift 3
	"$PT" dump "$log" --format json >"$n.jsonl" 2>/dev/null
	for f in "$n".rx/*.pb; do
		[ -e "$f" ] || continue
		case $f in *traces.pb) m=ExportTraceServiceRequest ;; *) m=ExportLogsServiceRequest ;; esac
		if ! protoc --decode=posixtrace.otlp.$m --proto_path="$OL_PROTO_DIR" \
			"$OL_PROTO_DIR/otlp_subset.proto" <"$f" >"${f%.pb}.txt" 2>"${f%.pb}.err"; then
			fail "$c" "protoc: $(head -c 400 "${f%.pb}.err")"; return
		fi
	done
	if out=$($OL_CHECK "$n.rx" "$n.jsonl" "$@" 2>&1); then pass "$c ($out)"; else fail "$c" "$out"; fi
}
# A 16 KiB stream that writers wait on (--block: the keeper's drains, never
# the network) and files of 64 KiB: a run of ptemit makes several files.
OL_REC="--size 16K --block --rotate 64K"

if [ $have_python = 0 ] || ! command -v protoc >/dev/null 2>&1; then
	skip "otlp live: all checks" "needs python3 and protoc (protobuf-compiler, scripts/install-deps.sh)"
elif [ -z "$EMIT" ]; then
	skip "otlp live: all checks" "no ptemit (cc failed: $(head -c 200 ptemit.err 2>/dev/null))"
elif "$PT" export x --otlp http://127.0.0.1:1 2>&1 | grep -q "built without libcurl"; then
	skip "otlp live: all checks" "posixtrace built without libcurl (libcurl4-openssl-dev, scripts/install-deps.sh)"
else
	# three threads: a pair around 20,000 events (its begin in the first
	# file, its end in the last), nested pairs of two kinds, a begin left
	# open inside a pair and one at the end, an end with no begin, events in
	# and out of spans
	ol_start ol1
	timeout 120 "$PT" record -o ol1.d --otlp "http://127.0.0.1:$OL_PORT" $OL_REC -- "$EMIT" \
		'big_begin count=20000,tick big_end a_begin b_begin a_end solo' \
		'x_begin count=300,tock x_end y_begin' \
		'p:begin q_begin q_end p:end stray_end lone' >ol1.out 2>ol1.err
	rc=$?
	ol_stop
	nfiles=$(ls ol1.d | grep -c '^[0-9]\{8\}\.ptlog$')
	[ $rc = 0 ] && [ "$nfiles" -ge 3 ] &&
		grep -q "otlp: spans: [1-9][0-9]* sent, 0 refused by the receiver, 0 dropped; log records: [1-9][0-9]* sent, 0 refused, 0 dropped" ol1.err &&
		grep -q "otlp: $nfiles files of ol1.d read and sent" ol1.err &&
		pass "otlp live: record --otlp sends every file of the rotated log ($nfiles), exit 0" ||
		fail "otlp live: record --otlp sends every file of the rotated log ($nfiles), exit 0" "exit $rc: $(cat ol1.err)"
	# the file that holds each end of the pair: other threads may still post
	# after big_end, so it need not be the last file
	first= last=
	for f in $(ls ol1.d | grep '^[0-9]\{8\}\.ptlog$'); do
		d=$("$PT" dump "ol1.d/$f" 2>/dev/null)
		case $d in *" big_begin "*) first=$f ;; esac
		case $d in *" big_end "*) last=$f ;; esac
	done
	[ -n "$first" ] && [ -n "$last" ] && [ "$first" != "$last" ] &&
		pass "otlp live: the pair big_begin/big_end spans two files ($first to $last)" ||
		fail "otlp live: the pair big_begin/big_end spans two files ($first to $last)"
	ol_matches "otlp live: spans, nesting, events, records match dump of the kept log" ol1 ol1.d
	grep -q 'name: "big"' ol1.rx/*traces.txt 2>/dev/null &&
		pass "otlp live: the pair across the rotation is one span" ||
		fail "otlp live: the pair across the rotation is one span"

	# the receiver holds its first request until told: the traced program
	# waits until a request is held, posts 20,000 more events and finishes
	# (ready=ol2.done) while the request is still held
	ol_start ol2 "hold:release"
	timeout 120 "$PT" record -o ol2.d --otlp "http://127.0.0.1:$OL_PORT" --timeout 100 $OL_REC -- "$EMIT" \
		"s_begin count=20000,tick wait=ol2.rx/held count=20000,tock s_end ready=ol2.done" \
		>ol2.out 2>ol2.err &
	rec=$!; BG="$BG $rec"
	if wait_for 60 test -e ol2.done && [ ! -e ol2.rx/release ] && running $rec; then
		pass "otlp live: the traced program finishes while the receiver holds a request"
	else
		fail "otlp live: the traced program finishes while the receiver holds a request" "$(cat ol2.err)"
	fi
	touch ol2.rx/release
	wait $rec; rc=$?
	ol_stop
	[ $rc = 0 ] && grep -q 'otlp: spans: 1 sent, 0 refused by the receiver, 0 dropped' ol2.err &&
		pass "otlp live: once the receiver answers, everything is delivered, exit 0" ||
		fail "otlp live: once the receiver answers, everything is delivered, exit 0" "exit $rc: $(cat ol2.err)"
	ol_matches "otlp live: after the held request, every span and record once" ol2 ol2.d

	# 503 for the first five requests, two attempts each: retried, then
	# dropped, counted; what arrived is right; the program's 0 becomes 1
	ol_start ol3 "503,503,503,503,503"
	timeout 120 "$PT" record -o ol3.d --otlp "http://127.0.0.1:$OL_PORT" --attempts 2 --backoff 0.05 \
		$OL_REC -- "$EMIT" 'big_begin count=20000,tick big_end a_begin a_end' >ol3.out 2>ol3.err
	rc=$?
	ol_stop
	[ $rc = 1 ] && grep -q ' requests, 3 retries, ' ol3.err &&
		[ "$(grep -Ec '(spans|log records) dropped: HTTP 503 after 2 attempts' ol3.err)" = 2 ] &&
		[ "$(grep -c ' 503 ' ol3.rx/requests.log)" = 5 ] &&
		pass "otlp live: 503 retried, then dropped and counted in the summary, exit 1" ||
		fail "otlp live: 503 retried, then dropped and counted in the summary, exit 1" "exit $rc: $(cat ol3.err)"
	ol_matches "otlp live: after 503s, what arrived is exact, none twice" ol3 ol3.d --expect-missing

	# --rotate 64K,2 while the receiver holds the first request: the keeper
	# removes the oldest files whether they were sent or not (the program
	# never waits); the sender counts the files it never read, exit 1
	ol_start olc "hold:release"
	timeout 120 "$PT" record -o olc.d --otlp "http://127.0.0.1:$OL_PORT" --timeout 100 \
		--size 16K --block --rotate 64K,2 -- "$EMIT" \
		"s_begin count=20000,tick wait=olc.rx/held count=40000,tock s_end ready=olc.done" \
		>olc.out 2>olc.err &
	rec=$!; BG="$BG $rec"
	wait_for 60 test -e olc.done
	touch olc.rx/release
	wait $rec; rc=$?
	ol_stop
	[ $rc = 1 ] && [ "$(ls olc.d | wc -l)" = 2 ] &&
		grep -Eq 'otlp: [0-9]+ files of olc.d read and sent, [1-9][0-9]* removed \(--rotate.s COUNT\) before they were read' olc.err &&
		pass "otlp live: files removed past --rotate's COUNT before they were read are counted, exit 1" ||
		fail "otlp live: files removed past --rotate's COUNT before they were read are counted, exit 1" "exit $rc: $(cat olc.err)"

	# no receiver from the start: each request tried twice, all dropped,
	# the program runs as usual and the log is complete
	timeout 120 "$PT" record -o ol4.d --otlp http://127.0.0.1:1 --attempts 2 --backoff 0.01 \
		$OL_REC -- "$EMIT" 'big_begin count=20000,tick big_end' >ol4.out 2>ol4.err
	rc=$?
	n=$("$PT" dump ol4.d 2>/dev/null | grep -c ' tick ')
	[ $rc = 1 ] && [ "$n" = 20000 ] &&
		grep -q 'otlp: spans: 0 sent, 0 refused by the receiver, 1 dropped; log records: 0 sent, 0 refused, [1-9][0-9]* dropped' ol4.err &&
		pass "otlp live: no receiver: all dropped after 2 attempts, said, the log complete, exit 1" ||
		fail "otlp live: no receiver: all dropped after 2 attempts, said, the log complete, exit 1" "exit $rc, $n ticks: $(cat ol4.err)"

	# SIGTERM while the receiver holds every request: the recording ends,
	# the wait for the sender lasts --otlp-wait 2, then what is left is
	# given up and said; the command's status is its death by SIGTERM
	holds=$(printf 'hold:never,%.0s' $(seq 1 40))
	ol_start ol5 "$holds"
	timeout 120 "$PT" record -o ol5.d --otlp "http://127.0.0.1:$OL_PORT" --otlp-wait 2 --timeout 100 \
		$OL_REC -- "$EMIT" 'big_begin count=20000,tick until=ol5.stop,tock' >ol5.out 2>ol5.err &
	rec=$!; BG="$BG $rec"
	wait_for 60 test -e ol5.rx/held
	kill -TERM $rec
	wait_for 60 eval '! running '"$rec" || kill -9 $rec
	wait $rec; rc=$?
	touch ol5.stop
	ol_stop
	[ $rc = 143 ] && grep -q 'the wait for the receiver at the end was over' ol5.err &&
		grep -Eq 'otlp: spans: 0 sent, 0 refused by the receiver, 1 dropped; log records: 0 sent, 0 refused, [1-9][0-9]* dropped' ol5.err &&
		"$PT" dump ol5.d >/dev/null 2>&1 &&
		pass "otlp live: SIGTERM, the receiver holding: the wait is bounded, the rest said dropped" ||
		fail "otlp live: SIGTERM, the receiver holding: the wait is bounded, the rest said dropped" "exit $rc: $(cat ol5.err)"

	# SIGINT with a receiver that answers: what was recorded is sent (the
	# span still open at the stop is unfinished)
	ol_start ol6
	timeout 120 "$PT" record -o ol6.d --otlp "http://127.0.0.1:$OL_PORT" $OL_REC -- "$EMIT" \
		'w_begin count=20000,tick ready=ol6.ready until=ol6.stop,tock' >ol6.out 2>ol6.err &
	rec=$!; BG="$BG $rec"
	wait_for 60 test -e ol6.ready
	interrupt $rec; rc=$?
	touch ol6.stop
	ol_stop
	[ $rc = 130 ] && grep -q 'otlp: spans: 1 sent, 0 refused by the receiver, 0 dropped' ol6.err &&
		pass "otlp live: SIGINT: the recording is sent, the open span unfinished" ||
		fail "otlp live: SIGINT: the recording is sent, the open span unfinished" "exit $rc: $(cat ol6.err)"
	ol_matches "otlp live: after SIGINT, every span and record of the kept log" ol6 ol6.d

	# hostile answers: a body that never ends, headers dripped a byte a
	# second: each attempt ends at --timeout 2, two attempts, dropped
	for h in endless drip; do
		ol_start "ol7$h" "$h,$h"
		start=$(date +%s)
		timeout 120 "$PT" record -o "ol7$h.d" --otlp "http://127.0.0.1:$OL_PORT" --timeout 2 --attempts 2 \
			--backoff 0.01 $OL_REC -- "$EMIT" 'a_begin a_end' >"ol7$h.out" 2>"ol7$h.err"
		rc=$?
		took=$(($(date +%s) - start))
		ol_stop
		[ $rc = 1 ] && grep -q 'dropped: Timeout was reached after 2 attempts' "ol7$h.err" &&
			pass "otlp live: a receiver whose answer never ends ($h): bounded by --timeout, dropped ($took s)" ||
			fail "otlp live: a receiver whose answer never ends ($h): bounded by --timeout, dropped" "exit $rc: $(cat "ol7$h.err")"
	done

	# attach --otlp: a running program, its log sent as it is written
	ol_start ol8
	"$EMIT" "ready=ol8.ready wait=ol8.go big_begin count=20000,tick big_end" >/dev/null 2>&1 &
	tgt=$!; BG="$BG $tgt"
	wait_for 20 test -e ol8.ready
	timeout 120 "$PT" attach $tgt -o ol8.d --otlp "http://127.0.0.1:$OL_PORT" --rotate 64K >ol8.out 2>ol8.err &
	att=$!; BG="$BG $att"
	wait_for 20 test -e ol8.d/00000001.ptlog
	sleep 0.5
	touch ol8.go
	wait $tgt
	interrupt $att; rc=$?
	ol_stop
	[ $rc = 0 ] && grep -q 'otlp: spans: [0-9]* sent, 0 refused by the receiver, 0 dropped; log records: [1-9][0-9]* sent, 0 refused, 0 dropped' ol8.err &&
		pass "otlp live: attach --otlp sends while recording, exit 0" ||
		fail "otlp live: attach --otlp sends while recording, exit 0" "exit $rc: $(cat ol8.err)"
	ol_matches "otlp live: attach --otlp: every span and record of the kept log" ol8 ol8.d

	# a quiet program (an event every 20 ms: its 64 KiB file would take
	# about half a minute to fill) is sent while it runs: --otlp ends a
	# file every 10 s (--rotate-every's default), the stream flushed into
	# it first, and the sender sends each file ended
	ol_start olq
	rm -f olq.stop
	timeout 120 "$PT" record -o olq.d --otlp "http://127.0.0.1:$OL_PORT" $OL_REC -- "$EMIT" \
		'q_begin q_end until=olq.stop,tock' >olq.out 2>olq.err &
	rec=$!; BG="$BG $rec"
	if wait_for 40 eval 'ls olq.rx/*.pb >/dev/null 2>&1' && running $rec; then
		pass "otlp live: a quiet program's events are sent while it runs (--rotate-every 10s)"
	else
		fail "otlp live: a quiet program's events are sent while it runs (--rotate-every 10s)" \
			"$(ls olq.rx olq.d 2>&1 | tr '\n' ' '): $(cat olq.err)"
	fi
	touch olq.stop
	wait $rec; rc=$?
	ol_stop
	[ $rc = 0 ] && pass "otlp live: the quiet program's recording ends well" ||
		fail "otlp live: the quiet program's recording ends well" "exit $rc: $(cat olq.err)"
	ol_matches "otlp live: the quiet program: every span and record of the kept log" olq olq.d

	# what --otlp cannot go with
	"$PT" record --otlp http://127.0.0.1:1 --log-policy loop -o x.d -- true >/dev/null 2>ol9.err
	rc=$?
	[ $rc = 2 ] && grep -q 'never complete while it is written' ol9.err &&
		pass "otlp live: a loop log is refused, and why" ||
		fail "otlp live: a loop log is refused, and why" "exit $rc: $(cat ol9.err)"
	"$PT" attach 1 --otlp http://127.0.0.1:1 >/dev/null 2>ol10.err
	rc=$?
	[ $rc = 2 ] && grep -q 'give -o DIR' ol10.err && pass "otlp live: attach --otlp needs -o DIR" ||
		fail "otlp live: attach --otlp needs -o DIR" "exit $rc: $(cat ol10.err)"
fi
