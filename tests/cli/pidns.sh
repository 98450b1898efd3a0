#!/bin/sh
# SPDX-License-Identifier: MIT
# A daemon in a pid namespace of its own (unshare -fp --mount-proc), traced
# from outside by its pid there: posixtrace list shows it and posixtrace
# attach PID records its events (before, attach ended "4 events, 0 lost":
# the control block names the process by its pid in its own namespace).
# And record of two daemons, each pid 1 of its own namespace: the log names
# them by their pids here, two different ones (before, both were 1, and
# stats, --pid and Chrome's tracks merged them).
# Needs root and unshare(1); says SKIP otherwise.
# Sourced by tests/cli/run.sh (its helpers and variables).

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 || [ -z "$EMIT" ] ||
	! unshare -fp --mount-proc true 2>/dev/null; then
	skip "pidns: attach to a process in its own pid namespace" "needs root and unshare"
else
	rm -f ns.ready ns.stop
	unshare -fp --mount-proc "$EMIT" "ready=ns.ready until=ns.stop,ns.tick" & ns_unshare=$!
	BG="$BG $ns_unshare"
	wait_for 10 test -e ns.ready
	ns_pid=$(pgrep -P $ns_unshare | head -n 1)
	if [ -z "$ns_pid" ]; then
		fail "pidns: the namespaced daemon runs"
	else
		"$PT" list >nslist.txt 2>&1
		has "pidns: list shows the namespaced daemon" "^ *$ns_pid " nslist.txt
		"$PT" attach "$ns_pid" --duration 1 -o ns.ptlog >nsatt.txt 2>&1; rc=$?
		[ $rc -eq 0 ] && pass "pidns: attach exits 0" || fail "pidns: attach exits 0" "exit $rc: $(cat nsatt.txt)"
		"$PT" dump ns.ptlog >nsdump.txt 2>&1
		n=$(count "ns.tick" nsdump.txt)
		[ "$n" -ge 10 ] && pass "pidns: attach records the daemon's events ($n)" ||
			fail "pidns: attach records the daemon's events" "$n events: $(cat nsatt.txt)"
	fi
	touch ns.stop
	wait $ns_unshare 2>/dev/null
	rm -f ns.stop1 ns.stop2
	"$PT" record -o ns2.ptlog -- sh -c "unshare -fp --mount-proc '$EMIT' 'until=ns.stop1,ns.two' &
		unshare -fp --mount-proc '$EMIT' 'until=ns.stop2,ns.two' & sleep 1; touch ns.stop1 ns.stop2; wait" \
		>ns2rec.txt 2>&1
	"$PT" dump ns2.ptlog 2>&1 | grep ' ns\.two ' | awk '{print $4}' | sort | uniq -c >ns2pids.txt
	pids=$(wc -l <ns2pids.txt)
	[ "$pids" -eq 2 ] && ! grep -q ' 1/' ns2pids.txt &&
		pass "pidns: two namespaced daemons under record have two pids of this namespace" ||
		fail "pidns: two namespaced daemons under record have two pids of this namespace" \
			"$(cat ns2pids.txt ns2rec.txt)"
fi
