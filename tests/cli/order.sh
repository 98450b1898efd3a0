#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 7: the command sorts no events.  The library delivers them in order
# (each thread's exact order, threads merged by time); dump and the Chrome
# output show that order as it is, and the Chrome rule "ts never goes back
# on a thread" holds because of it (checked by chrome_check.py on every
# Chrome file, so an ordering fault of the library shows instead of being
# hidden).  System events no thread recorded, which the library dates in
# the past (OVERFLOW: the first lost event), go to further tracks of
# process 0 rather than being moved.
# Sourced by tests/cli/run.sh (its helpers and variables).

if [ $have_python = 0 ]; then
	skip "order: all checks" "no python3"
else
	"$PT" record -o busy.ptlog -- "$FORKER" -t 4 -r 300 >/dev/null 2>&1
	"$PT" dump busy.ptlog --format json >busy.jsonl 2>/dev/null
	"$PT" convert busy.ptlog --to chrome busy.json 2>/dev/null
	chrome_valid "order: chrome output of 4 threads and 2 processes follows the format's rules" busy.json
	out=$($COMPARE order busy.jsonl busy.json 2>&1) &&
		pass "order: chrome holds dump's events in dump's order, at their times" ||
		fail "order: chrome holds dump's events in dump's order, at their times" "$out"
	python3 -c '
import json, sys
ts = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "summary" in e or e["pid"] == 0:
        continue
    key = (e["pid"], e["thread"])
    if ts.get(key, 0) > e["ts_ns"]:
        print("thread %s: %d after %d" % (key, e["ts_ns"], ts[key]))
        sys.exit(1)
    ts[key] = e["ts_ns"]' busy.jsonl >order.out 2>&1 &&
		pass "order: dump shows each thread's events in time order (as delivered)" ||
		fail "order: dump shows each thread's events in time order (as delivered)" "$(cat order.out)"
	# loop.ptlog (run.sh): a small LOOP stream that lost events
	"$PT" dump loop.ptlog --format json >loop2.jsonl 2>/dev/null
	"$PT" convert loop.ptlog --to chrome loop.json 2>/dev/null
	chrome_valid "order: chrome output of a log with losses follows the format's rules" loop.json
	out=$($COMPARE order loop2.jsonl loop.json 2>&1) &&
		pass "order: a log with losses: same events, same order, same times as dump" ||
		fail "order: a log with losses: same events, same order, same times as dump" "$out"
	for log in fork filt only noinh uf ll lu term int k9 true; do
		"$PT" convert $log.ptlog --to chrome $log.order.json >/dev/null 2>&1
		chrome_valid "order: chrome output of $log.ptlog follows the format's rules" $log.order.json
	done
fi
