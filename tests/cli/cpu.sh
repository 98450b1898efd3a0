#!/bin/sh
# SPDX-License-Identifier: MIT
# The CPU of each event (issue 34): a program pinned to one CPU (taskset)
# then to another, recorded; every user event shows that CPU in dump --cpu
# ([  N] after the thread), dump --format json ("cpu":N), Chrome JSON
# (args.cpu) and CTF (the event context's cpu_id, read by babeltrace2).
# Sourced by tests/cli/run.sh (its helpers and variables).

if [ -z "$EMIT" ] || ! command -v taskset >/dev/null 2>&1; then
	skip "cpu: all checks" "no ptemit or no taskset"
else
	for c in 0 1; do
		taskset -c $c "$PT" record -o cpu$c.ptlog -- "$EMIT" 'cpu.a cpu.b cpu.c' >/dev/null 2>cpu.err
		n=$("$PT" dump --cpu --no-symbols cpu$c.ptlog | grep -c " \[  $c\] cpu\.[abc] ")
		[ "$n" -eq 3 ] && pass "cpu: dump --cpu shows CPU $c for the 3 events" ||
			fail "cpu: dump --cpu shows CPU $c for the 3 events" "$n; $("$PT" dump --cpu --no-symbols cpu$c.ptlog | head -5)"
		n=$("$PT" dump --format json --no-symbols cpu$c.ptlog | grep '"name":"cpu\.[abc]"' | grep -c "\"cpu\":$c,")
		[ "$n" -eq 3 ] && pass "cpu: dump --format json has cpu $c" || fail "cpu: dump --format json has cpu $c" "$n"
		"$PT" convert cpu$c.ptlog --to chrome cpu$c.json 2>>cpu.err
		n=$(grep -o '"name":"cpu\.[abc]"[^}]*' cpu$c.json | grep -c "\"cpu\":$c")
		[ "$n" -eq 3 ] && pass "cpu: chrome args.cpu $c" || fail "cpu: chrome args.cpu $c" "$n"
		if [ $have_bt = 1 ]; then
			rm -rf cpu$c.ctf
			"$PT" convert cpu$c.ptlog --to ctf cpu$c.ctf 2>>cpu.err
			n=$(babeltrace2 cpu$c.ctf 2>&1 | grep -c "cpu\.[abc]: { cpu_id = $c }")
			[ "$n" -eq 3 ] && pass "cpu: babeltrace2 reads cpu_id $c" || fail "cpu: babeltrace2 reads cpu_id $c" "$n; $(babeltrace2 cpu$c.ctf 2>&1 | head -3 | cut -c1-200)"
		else
			skip "cpu: babeltrace2 reads cpu_id $c" "no babeltrace2"
		fi
	done
	# system events have no CPU: [  -] in text, no "cpu" in JSON
	n=$("$PT" dump --cpu --no-symbols cpu0.ptlog | grep -c ' \[  -\] posix_trace_start ')
	[ "$n" -eq 1 ] && pass "cpu: a system event shows no CPU" || fail "cpu: a system event shows no CPU" "$n"
fi
