#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 6: a damaged log.  A log cut at its end (as a crash leaves it): what
# it holds is printed, one note on stderr, exit 0, in every command.
# Damage inside: what could be read is printed, one line on stderr, exit 3.
# The library marks damage inside with POSIX_TRACE_ERROR (EBADMSG) at the
# time of the last good event; a cut end has no marker.
# Sourced by tests/cli/run.sh (its helpers and variables).

mkdir damage && cd damage || exit 2
# cut.ptlog (run.sh): fork.ptlog without its last 100 bytes
for c in dump stats convert; do
	if [ $c = convert ]; then set -- --to chrome cut.json; else set --; fi
	"$PT" $c ../cut.ptlog "$@" >out.txt 2>err.txt; rc=$?
	[ $rc -eq 0 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "note: ../cut.ptlog: the log ends early" err.txt &&
		pass "damage: $c of a log cut at its end: one note, exit 0" ||
		fail "damage: $c of a log cut at its end: one note, exit 0" "exit $rc: $(cat err.txt)"
done
chrome_valid "damage: chrome output of a cut log follows the format's rules" cut.json
"$PT" dump ../cut.ptlog >cut.txt 2>/dev/null
hasnt "damage: a log cut at its end reports no error event (what a crash leaves)" posix_trace_error cut.txt
"$PT" stats ../cut.ptlog >cut.stats 2>/dev/null
has "damage: stats says the log is cut short" "log integrity: cut short" cut.stats
has "damage: dump's summary says the log is cut short" "^# .*, log cut short$" cut.txt
hasnt "damage: dump's summary of a cut log does not call it damaged" "log damaged" cut.txt
"$PT" dump ../cut.ptlog --format json 2>/dev/null | tail -n 1 >cut.json.txt
has "damage: the JSON summary of a cut log: cut_short, not damaged" '"damaged":false,"cut_short":true}' cut.json.txt

# damage inside: a log of many blocks with bytes overwritten in the middle
"$PT" record -o many.ptlog --size 64K -- "$FORKER" -n -t 2 -r 4000 >/dev/null 2>&1
size=$(wc -c <many.ptlog)
cp many.ptlog inside.ptlog
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' | dd of=inside.ptlog bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
n_many=$("$PT" dump many.ptlog 2>/dev/null | grep -c '^[-+]')
"$PT" dump inside.ptlog >inside.txt 2>inside.err; rc=$?
n_inside=$(grep -c '^[-+]' inside.txt)
[ "$n_inside" -gt 1 ] && [ "$n_inside" -lt "$n_many" ] && grep -q "^# .*log damaged" inside.txt &&
	pass "damage: damage inside: what could be read is printed" ||
	fail "damage: damage inside: what could be read is printed" "$n_inside of $n_many events; $(tail -n 1 inside.txt)"
[ $rc -eq 3 ] && [ "$(wc -l <inside.err)" -eq 1 ] && grep -q "damaged inside" inside.err &&
	pass "damage: dump of a log damaged inside: one line, exit 3" ||
	fail "damage: dump of a log damaged inside: one line, exit 3" "exit $rc: $(cat inside.err)"
"$PT" stats inside.ptlog >inside.stats 2>inside.err; rc=$?
[ $rc -eq 3 ] && [ "$(wc -l <inside.err)" -eq 1 ] && grep -q "damaged inside" inside.err &&
	pass "damage: stats of a log damaged inside: one line, exit 3" ||
	fail "damage: stats of a log damaged inside: one line, exit 3" "exit $rc: $(cat inside.err)"
cd ..
