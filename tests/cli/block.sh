#!/bin/sh
# SPDX-License-Identifier: MIT
# A writer that may wait (issue 34): four threads posting flat out into a
# 64K FLUSH stream under record --block lose nothing (the summary says
# 0 lost, dump finds every event); the waits record's note counts are the
# log's own, shown by stats and by dump's summary (text and JSON), and by stats
# of a rotated set (its last file's); --block
# with --policy loop is refused.
# Sourced by tests/cli/run.sh (its helpers and variables).

if [ -z "$EMIT" ]; then
	skip "block: all checks" "no ptemit"
else
	flat='count=50000,blk'
	timeout 120 "$PT" record --size 64K --block=10 -o block.ptlog -- "$EMIT" "$flat" "$flat" "$flat" "$flat" \
		>/dev/null 2>block.err
	grep -q ', 0 lost,' block.err && pass "block: record --block --size 64K loses nothing" ||
		fail "block: record --block --size 64K loses nothing" "$(cat block.err)"
	n=$("$PT" dump --no-symbols block.ptlog | grep -c ' blk ')
	[ "$n" -eq 200000 ] && pass "block: dump finds the 200000 events" || fail "block: dump finds the 200000 events" "$n"
	grep -q 'events waited for room' block.err && pass "block: the summary says how long writers waited" ||
		fail "block: the summary says how long writers waited" "$(cat block.err)"
	# The counts in the log: those record's note gave (read live at the end).
	waited=$(sed -n 's/.*note: \([0-9]*\) events waited for room.*/\1/p' block.err)
	"$PT" stats block.ptlog >block-stats.txt 2>&1
	if [ "${waited:-0}" -gt 0 ]; then
		grep -q "^waited for room: $waited events, [0-9.]* s in all, 0 of them lost at the timeout" block-stats.txt &&
			pass "block: stats shows the log's waits" ||
			fail "block: stats shows the log's waits" "note: $waited; $(grep -i wait block-stats.txt)"
		"$PT" dump --no-symbols block.ptlog | tail -n 1 >block-sum.txt
		grep -q "^# 200[0-9]* events ([0-9]* shown), 0 lost; $waited waited for room ([0-9.]* s), 0 of them lost" block-sum.txt &&
			pass "block: dump's summary shows the log's waits" ||
			fail "block: dump's summary shows the log's waits" "note: $waited; $(cat block-sum.txt)"
		"$PT" dump --format json --no-symbols block.ptlog | tail -n 1 >block-sum.json
		grep -q "\"lost\":0,\"waited\":$waited,\"waited_ns\":[1-9][0-9]*,\"waited_lost\":0," block-sum.json &&
			pass "block: dump's JSON summary has the log's waits" ||
			fail "block: dump's JSON summary has the log's waits" "note: $waited; $(cat block-sum.json)"
	else
		# Never seen (4 flat-out writers outrun a 64K stream): then the log
		# says no writer waited either.
		! grep -q "^waited for room" block-stats.txt && pass "block: stats shows no waits (none in the note)" ||
			fail "block: stats shows no waits (none in the note)" "$(grep -i wait block-stats.txt)"
	fi
	# A rotated set: each file counts the waits since the stream began, the
	# set says the most (its last file's), as record's note does.
	rm -rf blockrot
	timeout 120 "$PT" record --size 64K --block=10 --rotate 256K -o blockrot -- "$EMIT" "$flat" "$flat" "$flat" "$flat" \
		>/dev/null 2>blockrot.err
	waited=$(sed -n 's/.*note: \([0-9]*\) events waited for room.*/\1/p' blockrot.err)
	first=$("$PT" stats blockrot/00000001.ptlog 2>/dev/null | sed -n 's/^waited for room: \([0-9]*\) events.*/\1/p')
	"$PT" stats blockrot >blockrot-stats.txt 2>&1
	if [ "${waited:-0}" -gt 0 ]; then
		grep -q "^waited for room: $waited events" blockrot-stats.txt && [ "${first:-0}" -le "$waited" ] &&
			[ "$(ls blockrot | wc -l)" -ge 2 ] &&
			pass "block: stats of a rotated set gives the waits of its last file" ||
			fail "block: stats of a rotated set gives the waits of its last file" \
				"note: $waited, first file: ${first:-none}; $(grep -i wait blockrot-stats.txt); $(ls blockrot | wc -l) files"
	else
		! grep -q "^waited for room" blockrot-stats.txt && pass "block: stats of a rotated set shows no waits (none in the note)" ||
			fail "block: stats of a rotated set shows no waits (none in the note)" "$(grep -i wait blockrot-stats.txt)"
	fi
	"$PT" record --policy loop --block -o block-loop.ptlog -- true >/dev/null 2>block-loop.err
	rc=$?
	[ $rc -eq 2 ] && grep -q 'policy flush only' block-loop.err && pass "block: --block with --policy loop is refused" ||
		fail "block: --block with --policy loop is refused" "rc $rc: $(cat block-loop.err)"
fi
