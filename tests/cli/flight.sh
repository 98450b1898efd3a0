#!/bin/sh
# SPDX-License-Identifier: MIT
# record --flight-recorder (symbols, durations and a flight recorder, "A
# flight recorder"): a loop stream whose log is written only at snapshots.
# A program that posts more than the ring holds and dies of SIGSEGV: every
# event it posted is in the log or counted lost, the last one is there, in
# order. While the program runs nothing is written; SIGUSR1 to the recorder
# takes a snapshot and recording goes on (a SIGUSR1 that reaches the keeper,
# as pkill -f would send it, ends nothing); dump --snapshot N shows one;
# --trigger NAME takes one when the program posts an event NAME, with the
# same counts, at most one a second (the rest counted as suppressed);
# attach --flight-recorder does the same for a running process.
# Sourced by tests/cli/run.sh (its helpers and variables).

size_of() { wc -c <"$1" | tr -d ' '; }
grew() { [ "$(size_of "$1")" -gt "$2" ]; }
# all_counted WHAT DUMP: the dump's fl.n events plus those it counts lost
# are the 100,000 the program posted
all_counted() {
	n=$(grep -c ' fl\.n ' "$2")
	lost=$(sed -n 's/^# [0-9]* events ([0-9]* shown), \([0-9]*\) lost.*/\1/p' "$2")
	[ "$n" -gt 0 ] && [ $((n + lost)) -eq 100000 ] &&
		pass "flight: $1, events in the log plus those counted lost are all the posted ones ($n + $lost)" ||
		fail "flight: $1, events in the log plus those counted lost are all the posted ones" "$n + $lost: $(tail -n 3 "$2")"
}

if [ -z "$EMIT" ]; then
	skip "flight: all checks" "no ptemit"
else
	"$PT" record --flight-recorder=64K -o fcrash.ptlog -- "$EMIT" "count=100000,fl.n crash=11" \
		>fcrash.out 2>&1; rc=$?
	[ $rc -eq 139 ] && pass "flight: record exits as the command died (128 + SIGSEGV)" ||
		fail "flight: record exits as the command died (128 + SIGSEGV)" "exit $rc: $(cat fcrash.out)"
	has "flight: the summary says what ended the recording" "at the end: the command was killed by signal 11" fcrash.out
	"$PT" dump --no-symbols fcrash.ptlog >fcrash.txt 2>&1
	all_counted "a crash" fcrash.txt
	grep ' fl\.n ' fcrash.txt | sed 's/.*"\([0-9]*\)"$/\1/' >fcrash.seq
	[ "$(tail -n 1 fcrash.seq)" = 99999 ] && sort -n -c fcrash.seq 2>/dev/null &&
		pass "flight: the last event before the crash is there, the events in order" ||
		fail "flight: the last event before the crash is there, the events in order" "$(tail -n 3 fcrash.seq)"

	rm -f fl.ready fl.stop
	"$PT" record --flight-recorder=64K -o fsnap.ptlog -- "$EMIT" "ready=fl.ready until=fl.stop,fl.tick" \
		>fsnap.out 2>&1 & frec=$!
	BG="$BG $frec"
	wait_for 10 test -e fl.ready
	sleep 0.3
	before=$(size_of fsnap.ptlog)
	sleep 0.3
	[ "$(size_of fsnap.ptlog)" -eq "$before" ] && pass "flight: nothing is written while the command runs" ||
		fail "flight: nothing is written while the command runs" "$before -> $(size_of fsnap.ptlog)"
	keeper=$(pgrep -P $frec -x posixtrace-keep | head -n 1)
	[ -n "$keeper" ] && kill -USR1 "$keeper" 2>/dev/null
	kill -USR1 $frec
	wait_for 10 grew fsnap.ptlog "$before" &&
		pass "flight: SIGUSR1 takes a snapshot" || fail "flight: SIGUSR1 takes a snapshot" "$(cat fsnap.out)"
	sleep 0.2
	kill -USR1 $frec
	sleep 0.5
	touch fl.stop
	wait $frec; rc=$?
	[ $rc -eq 0 ] && pass "flight: record goes on after snapshots and exits 0" ||
		fail "flight: record goes on after snapshots and exits 0" "exit $rc: $(cat fsnap.out)"
	has "flight: the summary counts the snapshots" "flight recorder: 3 snapshots" fsnap.out
	has "flight: the summary names the first" "snapshot 1: SIGUSR1 after" fsnap.out
	has "flight: and the one at the end" "snapshot 3: at the end: the command ended" fsnap.out
	total=$("$PT" dump fsnap.ptlog | sed -n 's/^# \([0-9]*\) events.*/\1/p')
	sum=0
	for k in 1 2 3; do
		s=$("$PT" dump --snapshot $k fsnap.ptlog | sed -n 's/^# [0-9]* events (\([0-9]*\) shown).*/\1/p')
		[ "${s:-0}" -gt 0 ] || fail "flight: snapshot $k holds events" "$s"
		sum=$((sum + ${s:-0}))
	done
	[ "$sum" -eq "$total" ] && pass "flight: dump --snapshot 1, 2, 3 show every event once ($total)" ||
		fail "flight: dump --snapshot 1, 2, 3 show every event once" "$sum vs $total"
	# attach --flight-recorder: the same on a running process
	rm -f fa.ready fa.stop
	"$EMIT" "ready=fa.ready until=fa.stop,fa.tick" & fapid=$!
	BG="$BG $fapid"
	wait_for 10 test -e fa.ready
	"$PT" attach $fapid --flight-recorder=64K -o fattach.ptlog --duration 2 >fattach.out 2>&1 & fatt=$!
	BG="$BG $fatt"
	wait_for 10 grep -q "send SIGUSR1" fattach.out
	sleep 0.3 # a tick every 20 ms: events to take
	fbefore=$(size_of fattach.ptlog)
	kill -USR1 $fatt
	wait_for 10 grew fattach.ptlog "$fbefore" &&
		pass "flight: attach takes a snapshot on SIGUSR1" || fail "flight: attach takes a snapshot on SIGUSR1" "$(cat fattach.out)"
	wait $fatt; rc=$?
	touch fa.stop
	wait $fapid
	[ $rc -eq 0 ] && grep -q "flight recorder: 2 snapshots" fattach.out &&
		grep -q "snapshot 2: at the end: the duration was over" fattach.out &&
		pass "flight: attach's summary lists its snapshots" ||
		fail "flight: attach's summary lists its snapshots" "exit $rc: $(cat fattach.out)"
	[ "$("$PT" dump --snapshot 1 fattach.ptlog | grep -c ' fa\.tick ')" -gt 0 ] &&
		pass "flight: attach's first snapshot holds the process's events" ||
		fail "flight: attach's first snapshot holds the process's events" "$("$PT" dump fattach.ptlog | tail -n 3)"
	refused "flight: attach --flight-recorder needs a log" 2 "give -o LOG" \
		"$PT" attach $$ --flight-recorder

	# --trigger: a snapshot at the program's own event, the rest at the end
	"$PT" record --flight-recorder=64K --trigger fl.none,fl.boom -o ftrig.ptlog -- "$EMIT" \
		"count=100000,fl.n fl.boom sleep=200 count=100,fl.m" >ftrig.out 2>&1; rc=$?
	[ $rc -eq 0 ] && pass "flight: record --trigger exits as the command did" ||
		fail "flight: record --trigger exits as the command did" "exit $rc: $(cat ftrig.out)"
	has "flight: the summary counts the trigger's snapshot" "flight recorder: 2 snapshots" ftrig.out
	has "flight: the summary names the trigger" "snapshot 1: trigger fl.boom posted by" ftrig.out
	has "flight: and the snapshot at the end" "snapshot 2: at the end: the command ended" ftrig.out
	"$PT" dump ftrig.ptlog >ftrig.txt 2>&1
	all_counted "a trigger" ftrig.txt
	"$PT" dump --no-symbols --snapshot 1 ftrig.ptlog >ftrig1.txt 2>&1
	last=$(grep ' fl\.' ftrig1.txt | tail -n 1)
	case "$last" in
	*' fl.boom '*) [ "$(grep ' fl\.n ' ftrig1.txt | tail -n 1 | sed 's/.*"\([0-9]*\)"$/\1/')" = 99999 ] &&
		pass "flight: the trigger's snapshot ends with it, after the last event before it" ||
		fail "flight: the trigger's snapshot ends with it, after the last event before it" "$(tail -n 3 ftrig1.txt)" ;;
	*) fail "flight: the trigger's snapshot ends with it, after the last event before it" "$last" ;;
	esac
	[ "$("$PT" dump --snapshot 2 ftrig.ptlog | grep -c ' fl\.m ')" -eq 100 ] &&
		pass "flight: the events after the trigger are in the snapshot at the end" ||
		fail "flight: the events after the trigger are in the snapshot at the end" "$("$PT" dump --snapshot 2 ftrig.ptlog | tail -n 3)"
	refused "flight: --trigger needs --flight-recorder" 2 "takes snapshots of --flight-recorder" \
		"$PT" record --trigger fl.boom -- true

	# a trigger posted again and again: one snapshot a second at most, the
	# rest counted as suppressed, in the summary and in stats
	"$PT" record --flight-recorder=64K --trigger fl.boom -o fheld.ptlog -- "$EMIT" \
		"fl.boom sleep=20 fl.boom sleep=20 fl.boom sleep=20 fl.boom sleep=20 fl.boom" \
		>fheld.out 2>&1
	has "flight: triggers held off are counted in the summary" "trigger events took no snapshot" fheld.out
	"$PT" stats fheld.ptlog >fheld.stats 2>&1
	has "flight: and by stats" "triggers suppressed: " fheld.stats

	refused "flight: dump of a snapshot the log does not hold" 1 "no snapshot 4: the log holds 3" \
		"$PT" dump --snapshot 4 fsnap.ptlog
	refused "flight: --flight-recorder keeps a loop stream" 2 "loop stream" \
		"$PT" record --flight-recorder --policy flush -- true
	refused "flight: a bad snapshot number" 2 "bad --snapshot" "$PT" dump --snapshot 0 fsnap.ptlog
fi
