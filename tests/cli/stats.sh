#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 8: stats computes rates over user events only and counts system
# events apart; lists threads sorted by pid, then thread; and has a loss
# timeline (OVERFLOW .. RESUME brackets, the total lost from the status).
# Sourced by tests/cli/run.sh (its helpers and variables).

"$PT" stats fork.ptlog >st.txt 2>&1
n_user=$(awk '$5 !~ /^posix_trace_/ && /^[-+]/' dump.txt | wc -l)
n_sys=$(awk '$5 ~ /^posix_trace_/ && /^[-+]/' dump.txt | wc -l)
has "stats: events split into user and system" "^events: $((n_user + n_sys)) ($n_user user, $n_sys system)" st.txt
has "stats: user event count" "^user events: $n_user, first at +" st.txt
has "stats: system events apart, out of the rates" "^system events: $n_sys (not in the rates)" st.txt
# the rate is the user events over their own span (not a timing check: the
# numbers printed must agree with each other)
awk -v n="$n_user" '/^user events:/ {
	for (i = 1; i <= NF; i++) { if ($i == "duration:") d = $(i + 1); if ($i == "rate:") r = $(i + 1) }
	ok = d > 0 && (r * d / n > 0.99 && r * d / n < 1.01) }
	END { exit !ok }' st.txt && pass "stats: rate = user events / their duration" ||
	fail "stats: rate = user events / their duration" "$(grep '^user events' st.txt)"
awk '/^rate of user events over time/ { on = 1; next }
     on && /events\/s$/ { for (i = 2; i <= NF; i++) if ($i == "events") { s += $(i - 1); break }; next }
     on { exit } END { print s + 0 }' st.txt >slices.txt
[ "$(cat slices.txt)" -eq "$n_user" ] && pass "stats: the rate slices hold the user events" ||
	fail "stats: the rate slices hold the user events" "$(cat slices.txt) vs $n_user"
sed -n '/^events by process\/thread:/,/^[a-z]/p' st.txt | grep "pid " |
	awk '{ t = substr($5, 3); while (length(t) < 16) t = "0" t; print $3, t }' >threads.txt
sort -c -k1,1n -k2,2 threads.txt 2>/dev/null && [ "$(wc -l <threads.txt)" -ge 4 ] &&
	pass "stats: threads sorted by pid, then thread" || fail "stats: threads sorted by pid, then thread" "$(cat threads.txt)"
sum=$(sed -n '/^events by type:/,/^events by process/p' st.txt | awk '/^  / { s += $1 } END { print s + 0 }')
[ "$sum" -eq $((n_user + n_sys)) ] && pass "stats: per-type counts add up" || fail "stats: per-type counts add up" "$sum"
hasnt "stats: no loss timeline without losses" "loss timeline" st.txt
# loop.ptlog (run.sh): a small LOOP stream that lost events
"$PT" stats loop.ptlog >stl.txt 2>&1
n_ovf=$("$PT" dump loop.ptlog | grep -c posix_trace_overflow)
has "stats: loss timeline" "^loss timeline ($n_ovf gap" stl.txt
[ "$(grep -c '^  from [-+][0-9.]* ([0-9.]*) to ' stl.txt)" -eq "$n_ovf" ] &&
	pass "stats: one line per OVERFLOW .. RESUME gap" || fail "stats: one line per OVERFLOW .. RESUME gap" "$(sed -n '/^loss/,/^stream/p' stl.txt)"
grep -q "^lost events: [1-9]" stl.txt && pass "stats: total lost from the status" ||
	fail "stats: total lost from the status" "$(grep lost stl.txt)"
# a program that posts a few events in a long run: the rate is over them
if [ -n "$EMIT" ]; then
	"$PT" record -o few.ptlog -- "$EMIT" 'one sleep=300 two' >/dev/null 2>&1
	"$PT" stats few.ptlog >few.txt 2>&1
	has "stats: two user events" "^user events: 2, " few.txt
	awk '/^user events:/ { for (i = 1; i <= NF; i++) if ($i == "duration:") d = $(i + 1); r = 2 / d }
	     /^user events:/ && $0 ~ ("rate: " sprintf("%.1f", r)) { ok = 1 } END { exit !ok }' few.txt &&
		pass "stats: rate of a short recording is over its user events" ||
		fail "stats: rate of a short recording is over its user events" "$(grep '^user events' few.txt)"
else
	skip "stats: rate of a short recording" "no ptemit"
fi
