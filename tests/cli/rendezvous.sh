#!/bin/sh
# SPDX-License-Identifier: MIT
# Trace Inherit through Python's subprocess (close_fds=True by default, so
# the children lose every posixtrace descriptor): `posixtrace record --
# python3 ...` starting 20 instrumented children records all 200 of their
# events, through the rendezvous the command puts in the environment
# (before: 0 of 200, and a note that pointed at the library only).  Also a
# child whose environment was cleared too: it runs untraced, record's note
# names that cause, and nothing hangs.  Needs python3 (install-deps installs it).
# Sourced by tests/cli/run.sh (its helpers and variables).

if ! command -v python3 >/dev/null 2>&1 || [ -z "$EMIT" ]; then
	skip "rendezvous: Python's subprocess children are traced" "needs python3"
else
	cat >rdv.py <<'PY'
import subprocess, sys
emit = sys.argv[1]
for i in range(20):
    subprocess.run([emit] + ["rdv.child"] * 10, check=True)
PY
	# the rendezvous directory in a TMPDIR of this check's own: what other
	# programs running meanwhile make in /tmp is not seen
	mkdir rdvtmp
	ls -d "$PWD/rdvtmp"/posixtrace-* 2>/dev/null >rdvdirs.before
	TMPDIR="$PWD/rdvtmp" "$PT" record -o rdv.ptlog -- python3 rdv.py "$EMIT" >rdv.out 2>&1; rc=$?
	ls -d "$PWD/rdvtmp"/posixtrace-* 2>/dev/null >rdvdirs.after
	[ $rc -eq 0 ] && pass "rendezvous: record of python3 exits 0" ||
		fail "rendezvous: record of python3 exits 0" "exit $rc: $(cat rdv.out)"
	"$PT" dump rdv.ptlog >rdv.txt 2>&1
	n=$(count "rdv.child" rdv.txt)
	[ "$n" -eq 200 ] && pass "rendezvous: all 200 events of 20 Python children" ||
		fail "rendezvous: all 200 events of 20 Python children" "$n events: $(cat rdv.out)"
	has "rendezvous: record counts the children that joined" "20 processes had closed" rdv.out
	hasnt "rendezvous: no note that the command may not be linked" "may not be linked" rdv.out
	# A pool of 16 threads starting 400 children at once (a test driver's
	# shape): every child is counted, joined or refused (a joiner waits
	# 100 ms at most, and under such a burst one may give up: it is
	# counted), and every joined child's events are all there.
	cat >rdvpool.py <<'PY'
import subprocess, sys
from concurrent.futures import ThreadPoolExecutor
def run(i):
    subprocess.run([sys.argv[1], "rdv.pool"] * 5, check=True)
with ThreadPoolExecutor(16) as pool:
    list(pool.map(run, range(400)))
PY
	"$PT" record -o rdvpool.ptlog -- python3 rdvpool.py "$EMIT" >rdvpool.out 2>&1; rc=$?
	"$PT" dump rdvpool.ptlog >rdvpool.txt 2>&1
	n=$(count "rdv.pool" rdvpool.txt)
	joined=$(sed -n 's/.*note: \([0-9]*\) processes had closed.*/\1/p' rdvpool.out)
	refused=$(sed -n 's/.*note: \([0-9]*\) processes asked to join.*/\1/p' rdvpool.out)
	joined=${joined:-0} refused=${refused:-0}
	[ $rc -eq 0 ] && [ $((joined + refused)) -eq 400 ] && [ "$joined" -gt 0 ] &&
		pass "rendezvous: 400 children started by 16 threads at once, each counted ($joined joined, $refused refused)" ||
		fail "rendezvous: 400 children started by 16 threads at once, each counted" "exit $rc: $(cat rdvpool.out)"
	[ "$n" -eq $((5 * joined)) ] && pass "rendezvous: every event of the $joined children that joined ($n)" ||
		fail "rendezvous: every event of the children that joined" "$n events for $joined joined: $(cat rdvpool.out)"
	# Environment cleared as well: the child cannot be reached, and says
	# nothing; the command still ends.
	cat >rdvenv.py <<'PY'
import subprocess, sys
subprocess.run([sys.argv[1], "rdv.lost"], env={}, check=True)
PY
	"$PT" record -o rdvenv.ptlog -- python3 rdvenv.py "$EMIT" >rdvenv.out 2>&1; rc=$?
	"$PT" dump rdvenv.ptlog >rdvenv.txt 2>&1
	[ $rc -eq 0 ] && [ "$(count "rdv.lost" rdvenv.txt)" -eq 0 ] &&
		pass "rendezvous: a child with its environment cleared runs untraced" ||
		fail "rendezvous: a child with its environment cleared runs untraced" "exit $rc: $(cat rdvenv.out)"
	has "rendezvous: record says such a child cannot be reached" "descriptors and the environment" rdvenv.out
	grep -vxF -f rdvdirs.before rdvdirs.after >rdvdirs.txt
	[ ! -s rdvdirs.txt ] && pass "rendezvous: record leaves no directory behind" ||
		fail "rendezvous: record leaves no directory behind" "$(cat rdvdirs.txt)"
fi
