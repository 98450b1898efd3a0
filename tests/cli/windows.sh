#!/bin/sh
# SPDX-License-Identifier: MIT
# Every converter takes the window dump takes: for each of --since,
# --until, --pid, --tid, --only and --snapshot, and each of chrome, ctf
# and perfetto, the converted events are those of dump with the same
# option, in the same order at the same times (compare.py order for
# chrome, compare.py ctf with babeltrace2, perfetto_check.py), and the
# window holds some of the log's events but not all; an --only name the
# log lacks and a --snapshot past the log's are refused as dump refuses
# them.
# Sourced by tests/cli/run.sh (its helpers and variables; pf_matches from
# perfetto.sh).

if [ -z "$EMIT" ] || [ $have_python = 0 ]; then
	skip "windows: all checks" "needs ptemit and python3"
else
	# two processes, two threads, several names; two snapshots (the
	# trigger's and the end's) of a flight recording
	"$PT" record --flight-recorder=64K --trigger win.snap -o win.ptlog -- "$EMIT" \
		'win.a win.b child=win.kid sleep=50 win.snap sleep=300 win.c win.d win.snap sleep=300 win.e' \
		'count=20,win.t sleep=100 win.t2 sleep=300 count=5,win.t3' >/dev/null 2>&1
	"$PT" dump win.ptlog --format json >win.jsonl 2>/dev/null
	win_all=$(grep -c '"ts_ns"' win.jsonl)
	main_pid=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("name") == "win.a":
        print(e["pid"])' win.jsonl)
	worker_tid=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("name") == "win.t":
        print(e["tid"]); break' win.jsonl)
	# a window keeps the times of the whole log: relative to its first event
	"$PT" dump win.ptlog --since 0.1 >winrel.txt 2>/dev/null
	rel=$(sed -n '1s/^+\([0-9.]*\) .*/\1/p' winrel.txt)
	awk -v r="$rel" 'BEGIN { exit !(r != "" && r + 0 >= 0.1) }' &&
		pass "windows: dump --since 0.1 shows times after the log's first event ($rel)" ||
		fail "windows: dump --since 0.1 shows times after the log's first event" "$(head -n 2 winrel.txt)"
	have_protoc=0; command -v protoc >/dev/null 2>&1 && have_protoc=1
	for opt in "--since 0.1" "--until 0.1" "--pid $main_pid" "--tid $worker_tid" \
	           "--only win.t,win.snap" "--snapshot 2"; do
		# shellcheck disable=SC2086
		"$PT" dump win.ptlog --format json $opt >winw.jsonl 2>/dev/null
		n=$(grep -c '"ts_ns"' winw.jsonl)
		[ "$n" -gt 0 ] && [ "$n" -lt "$win_all" ] && pass "windows: dump $opt holds $n of $win_all events" ||
			fail "windows: dump $opt holds some events, not all" "$n of $win_all"
		rm -f winw.json
		# shellcheck disable=SC2086
		"$PT" convert win.ptlog --to chrome winw.json $opt 2>/dev/null
		out=$($COMPARE order winw.jsonl winw.json 2>&1) && pass "windows: chrome $opt = dump $opt" ||
			fail "windows: chrome $opt = dump $opt" "$out"
		if [ $have_bt = 1 ]; then
			rm -rf winwctf
			# shellcheck disable=SC2086
			"$PT" convert win.ptlog --to ctf winwctf $opt 2>/dev/null
			babeltrace2 --clock-seconds winwctf >winwbt.txt 2>/dev/null
			out=$($COMPARE ctf winw.jsonl winwbt.txt 2>&1) && pass "windows: ctf $opt = dump $opt" ||
				fail "windows: ctf $opt = dump $opt" "$out"
		else
			skip "windows: ctf $opt = dump $opt" "no babeltrace2"
		fi
		if [ $have_protoc = 1 ]; then
			# shellcheck disable=SC2086
			pf_matches "windows: perfetto $opt = dump $opt" win.ptlog $opt
		else
			skip "windows: perfetto $opt = dump $opt" "no protoc"
		fi
	done
	for f in chrome ctf perfetto; do
		refused "windows: $f --only with a name the log lacks" 1 "no event type named 'nosuch'" \
			"$PT" convert win.ptlog --to $f winx.$f --only nosuch
		[ ! -e winx.$f ] && pass "windows: $f writes nothing for an unknown --only name" ||
			fail "windows: $f writes nothing for an unknown --only name"
		rm -rf winx.$f
		"$PT" convert win.ptlog --to $f winx.$f --snapshot 9 >/dev/null 2>winx.err; rc=$?
		[ $rc -eq 1 ] && grep -q "no snapshot 9: the log holds 2" winx.err &&
			pass "windows: $f --snapshot past the log's fails" ||
			fail "windows: $f --snapshot past the log's fails" "exit $rc: $(cat winx.err)"
		rm -rf winx.$f
		refused "windows: $f bad --since" 2 "bad --since" "$PT" convert win.ptlog --to $f winx.$f --since soon
	done
fi
