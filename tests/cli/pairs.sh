#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 4: begin/end events of one thread become slices in Chrome output
# (B/E events, nested pairs nested, unmatched ones instants); --pair names
# other pairs, --no-pair turns the default off; CTF keeps them as events;
# stats measures the same pairs.
# Sourced by tests/cli/run.sh (its helpers and variables).

if [ -z "$EMIT" ] || [ $have_python = 0 ]; then
	skip "pairs: all checks" "no ptemit (cc failed: $(head -c 200 ptemit.err 2>/dev/null)) or no python3"
else
	# thread 1: nesting of two kinds, a nested pair of one kind, an
	# unmatched begin and end, and _begin/:end that do not match;
	# thread 2: an end that closes an outer begin past an unclosed inner
	# one, and a pair only --pair makes; threads 3 and 4: a begin and an
	# end of different threads, which never pair
	"$PT" record -o pairs.ptlog -- "$EMIT" \
		'req_begin db:begin db:end req_end lone_begin stray_end outer_begin outer_begin outer_end outer_end mix_begin mix:end' \
		'a_begin b_begin a_end lock_take lock_give' \
		'x_begin sleep=50' 'sleep=100 x_end' >/dev/null 2>pairs.err
	"$PT" convert pairs.ptlog --to chrome pairs.json 2>>pairs.err
	chrome_valid "pairs: chrome output follows the format's rules" pairs.json
	$CHROME_CHECK pairs.json --events >pairs.ev 2>&1
	for want in "B req" "E req" "B db" "E db" "B a" "E a"; do
		[ "$(grep -c " $want\$" pairs.ev)" -eq 1 ] && pass "pairs: one '$want'" ||
			fail "pairs: one '$want'" "$(cat pairs.ev pairs.err)"
	done
	[ "$(grep ' outer$' pairs.ev | cut -d' ' -f3 | tr '\n' ' ')" = "B B E E " ] &&
		pass "pairs: nested pairs of one name nest" || fail "pairs: nested pairs of one name nest" "$(grep outer pairs.ev)"
	for want in "i lone_begin" "i stray_end" "i b_begin" "i x_begin" "i x_end" "i mix_begin" \
	            "i mix:end" "i lock_take" "i lock_give"; do
		[ "$(grep -c " $want\$" pairs.ev)" -eq 1 ] && pass "pairs: unmatched '${want#i }' stays an instant" ||
			fail "pairs: unmatched '${want#i }' stays an instant" "$(grep "${want#i }" pairs.ev)"
	done
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = [e for e in d["traceEvents"] if e["ph"] == "B" and e["name"] == "req"][0]
sys.exit(0 if b["args"]["event"] == "req_begin" and b["args"]["data"] == "req_begin" else 1)' pairs.json &&
		pass "pairs: a slice keeps its begin event's name and data in args" ||
		fail "pairs: a slice keeps its begin event's name and data in args" "$(grep '"req"' pairs.json)"

	"$PT" convert pairs.ptlog --to chrome --pair lock_take=lock_give pairs2.json 2>&1
	chrome_valid "pairs: --pair output follows the format's rules" pairs2.json
	$CHROME_CHECK pairs2.json --events >pairs2.ev 2>&1
	grep -q " B lock$" pairs2.ev && grep -q " E lock$" pairs2.ev && grep -q " B req$" pairs2.ev &&
		pass "pairs: --pair BEGIN=END adds a pair (slice named after their common part)" ||
		fail "pairs: --pair BEGIN=END adds a pair (slice named after their common part)" "$(cat pairs2.ev)"
	"$PT" convert pairs.ptlog --to chrome --no-pair pairs3.json 2>&1
	chrome_valid "pairs: --no-pair output follows the format's rules" pairs3.json
	$CHROME_CHECK pairs3.json --events >pairs3.ev 2>&1
	! grep -q " [BE] " pairs3.ev && grep -q " i req_begin$" pairs3.ev &&
		pass "pairs: --no-pair leaves every event an instant" || fail "pairs: --no-pair leaves every event an instant" "$(cat pairs3.ev)"
	"$PT" convert pairs.ptlog --to chrome --no-pair --pair db:begin=db:end pairs4.json 2>&1
	$CHROME_CHECK pairs4.json --events >pairs4.ev 2>&1
	[ "$(grep -c " [BE] " pairs4.ev)" -eq 2 ] && grep -q " B db$" pairs4.ev &&
		pass "pairs: --no-pair with --pair pairs only the named pair" ||
		fail "pairs: --no-pair with --pair pairs only the named pair" "$(cat pairs4.ev)"

	# stats: the same pairs, measured (symbols, durations and a flight
	# recorder, "Durations"): a row per name with its count, min <= p50 <=
	# p90 <= p99 <= max, at most three slowest, a histogram that holds the
	# count; by name; --pair, --no-pair and --per-thread as above
	"$PT" stats pairs.ptlog >pst.txt 2>&1
	sed -n '/^durations of begin\/end pairs/,/^lost events/p' pst.txt >pdur.txt
	[ "$(grep '^  [^ ]' pdur.txt | sed 's/^ *//; s/:.*//' | tr '\n' ' ')" = "a db outer req " ] &&
		pass "pairs: stats measures the pairs convert makes, by name" ||
		fail "pairs: stats measures the pairs convert makes, by name" "$(cat pst.txt)"
	[ "$(grep -c '^  outer: 2,' pdur.txt)" -eq 1 ] && [ "$(grep -c '^  req: 1,' pdur.txt)" -eq 1 ] &&
		pass "pairs: stats counts each name's pairs (nested ones too)" ||
		fail "pairs: stats counts each name's pairs (nested ones too)" "$(cat pdur.txt)"
	awk 'function ns(v, u) { return v * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }
	     /^  [^ ]/ { n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^(min|p50|p90|p99|max)$/) {
	                     u = $(i + 2); sub(/,$/, "", u); v[n++] = ns($(i + 1), u) }
	                 for (i = 1; i < n; i++) if (v[i] < v[i - 1]) bad++
	                 split($0, c, ": "); want = c[2] + 0; got = 0; rows++; next }
	     /^    slowest:/ { if (split($0, x, ";") > 3 || split($0, x, ";") > want) bad++; next }
	     /\|/ { got += $(NF - 1); if (got > want) bad++ }
	     END { exit bad || rows != 4 }' pdur.txt &&
		pass "pairs: stats' min <= p50 <= p90 <= p99 <= max, three slowest at most, histograms hold the counts" ||
		fail "pairs: stats' min <= p50 <= p90 <= p99 <= max, three slowest at most, histograms hold the counts" "$(cat pdur.txt)"
	"$PT" stats --pair lock_take=lock_give pairs.ptlog >pst2.txt 2>&1
	grep -q '^  lock: 1,' pst2.txt && pass "pairs: stats --pair measures the named pair" ||
		fail "pairs: stats --pair measures the named pair" "$(sed -n '/^durations/,/^lost/p' pst2.txt)"
	"$PT" stats --no-pair pairs.ptlog >pst3.txt 2>&1
	hasnt "pairs: stats --no-pair measures nothing" "^durations of begin" pst3.txt
	"$PT" stats --per-thread pairs.ptlog >pst4.txt 2>&1
	[ "$(grep -c '^  [a-z]* (pid [0-9]* thread 0x[0-9a-f]*): ' pst4.txt)" -eq 4 ] &&
		pass "pairs: stats --per-thread names each row's thread" ||
		fail "pairs: stats --per-thread names each row's thread" "$(sed -n '/^durations/,/^lost/p' pst4.txt)"
	refused "pairs: stats with a bad --pair" 2 "bad --pair" "$PT" stats --pair x pairs.ptlog

	refused "pairs: bad --pair" 2 "bad --pair" "$PT" convert pairs.ptlog --to chrome --pair x x.json
	refused "pairs: --pair with the same name twice" 2 "bad --pair" "$PT" convert pairs.ptlog --to chrome --pair a=a x.json
	refused "pairs: --pair is for chrome only" 2 "for --to chrome" "$PT" convert pairs.ptlog --to ctf --pair a=b xctf
	if [ $have_bt = 1 ]; then
		"$PT" convert pairs.ptlog --to ctf pairsctf >/dev/null 2>&1
		babeltrace2 pairsctf >pairsbt.txt 2>&1
		grep -q "req_begin:" pairsbt.txt && grep -q "req_end:" pairsbt.txt &&
			pass "pairs: CTF keeps begin and end as events" ||
			fail "pairs: CTF keeps begin and end as events" "$(head -n 5 pairsbt.txt)"
	else
		skip "pairs: CTF keeps begin and end as events" "no babeltrace2"
	fi
fi
