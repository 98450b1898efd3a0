#!/bin/sh
# SPDX-License-Identifier: MIT
# A writer that may wait (issue 34): four threads posting flat out into a
# 64K FLUSH stream under record --block lose nothing (the summary says
# 0 lost, dump finds every event); --block with --policy loop is refused.
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
	"$PT" record --policy loop --block -o block-loop.ptlog -- true >/dev/null 2>block-loop.err
	rc=$?
	[ $rc -eq 2 ] && grep -q 'policy flush only' block-loop.err && pass "block: --block with --policy loop is refused" ||
		fail "block: --block with --policy loop is refused" "rc $rc: $(cat block-loop.err)"
fi
