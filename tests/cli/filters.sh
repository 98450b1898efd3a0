#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 9: dump --pid/--tid filters, wall-clock times (--clock-date,
# --clock-gmt), attach following the children of the attached process,
# dump --only of a name the log does not have, --size below the minimum.
# Sourced by tests/cli/run.sh (its helpers and variables).

# dump.txt (run.sh): the dump of fork.ptlog, a parent and a child process
child=$(awk '$5 == "forker:child" { print $3; exit }' dump.txt)
"$PT" dump fork.ptlog --pid "$child" >pid.txt
[ -n "$child" ] && [ "$(grep -c '^[-+]' pid.txt)" -eq "$(awk -v p="$child" '/^[-+]/ && $3 == p' dump.txt | wc -l)" ] &&
	[ "$(awk -v p="$child" '/^[-+]/ && $3 != p' pid.txt | wc -l)" -eq 0 ] &&
	pass "filters: dump --pid" || fail "filters: dump --pid" "$(head -n 3 pid.txt)"
parent=$(awk '$5 == "forker:start" { print $3; exit }' dump.txt)
"$PT" dump fork.ptlog --pid "$parent,$child" >pids.txt
[ "$(grep -c '^[-+]' pids.txt)" -eq "$(awk -v p="$child" -v q="$parent" '/^[-+]/ && ($3 == p || $3 == q)' dump.txt | wc -l)" ] &&
	pass "filters: dump --pid A,B" || fail "filters: dump --pid A,B" "$(tail -n 1 pids.txt)"
# the thread column: kernel thread id, then /name
thread=$(awk '$5 == "forker:work" { split($4, t, "/"); print t[1]; exit }' dump.txt)
"$PT" dump fork.ptlog --tid "$thread" >tid.txt
[ "$(grep -c '^[-+]' tid.txt)" -eq "$(awk -v t="$thread" '/^[-+]/ { split($4, c, "/") } /^[-+]/ && c[1] == t' dump.txt | wc -l)" ] &&
	[ "$(awk -v t="$thread" '/^[-+]/ { split($4, c, "/") } /^[-+]/ && c[1] != t' tid.txt | wc -l)" -eq 0 ] && grep -q forker:work tid.txt &&
	pass "filters: dump --tid (the thread column)" || fail "filters: dump --tid (the thread column)" "$thread: $(head -n 3 tid.txt)"
"$PT" dump fork.ptlog --pid "$child" --only forker:child >both.txt
[ "$(grep -c '^[-+]' both.txt)" -eq "$(count forker:child dump.txt)" ] &&
	pass "filters: --pid with --only" || fail "filters: --pid with --only" "$(cat both.txt)"
refused "filters: bad --pid" 2 "bad --pid" "$PT" dump fork.ptlog --pid abc
refused "filters: bad --tid" 2 "bad --tid" "$PT" dump fork.ptlog --tid 0xzz

# wall-clock times
"$PT" dump fork.ptlog --clock-gmt >gmt.txt
sec=$(awk '/^[-+]/ { split($2, t, "."); print t[1]; exit }' dump.txt)
want=$(date -u -d "@$sec" '+%Y-%m-%d %H:%M:%S' 2>/dev/null)
first=$(grep -m1 '^[-+]' gmt.txt)
case "$first" in
"+0.000000000 $want."[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]" "*) pass "filters: --clock-gmt prints the UTC date and time" ;;
*) fail "filters: --clock-gmt prints the UTC date and time" "want $want: $first" ;;
esac
TZ=UTC "$PT" dump fork.ptlog --clock-date >date.txt
cmp -s date.txt gmt.txt && pass "filters: --clock-date is local time (TZ=UTC: as --clock-gmt)" ||
	fail "filters: --clock-date is local time (TZ=UTC: as --clock-gmt)" "$(diff date.txt gmt.txt | head -n 4)"
"$PT" dump fork.ptlog --clock-date --format json >date.jsonl
grep -q '"date":"[0-9-]* [0-9:]*\.[0-9]\{9\}"' date.jsonl && pass "filters: --clock-date in json" ||
	fail "filters: --clock-date in json" "$(head -n 1 date.jsonl)"

# --only of a name the log does not have
refused "filters: dump --only NOSUCH" 1 "no event type named 'NOSUCH'" "$PT" dump fork.ptlog --only NOSUCH
refused "filters: dump --only with one unknown name" 1 "no event type named 'forker:wrok'" "$PT" dump fork.ptlog --only forker:work,forker:wrok
cat fork.ptlog | "$PT" dump - --only NOSUCH >nosuch.txt 2>nosuch.err; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <nosuch.err)" -eq 1 ] && grep -q "no event type named 'NOSUCH'" nosuch.err &&
	pass "filters: dump - --only NOSUCH (a pipe)" || fail "filters: dump - --only NOSUCH (a pipe)" "exit $rc: $(cat nosuch.err)"
"$PT" dump fork.ptlog --only posix_trace_start >sysonly.txt 2>&1 && [ "$(grep -c '^[-+]' sysonly.txt)" -ge 1 ] &&
	pass "filters: dump --only a system event name" || fail "filters: dump --only a system event name" "$(cat sysonly.txt)"

# --size below the command's minimum (4K)
refused "filters: record --size 1 refused, the minimum stated" 2 "smallest stream is 4K" "$PT" record -o s1.ptlog --size 1 -- true
refused "filters: record --size 4095 refused" 2 "smallest stream is 4K" "$PT" record -o s1.ptlog --size 4095 -- true
[ ! -e s1.ptlog ] && pass "filters: no log for a refused --size" || fail "filters: no log for a refused --size"
ok "filters: record --size 64K accepted" "$PT" record -o s64.ptlog --size 64K -- "$FORKER" -n
grep -q '4K\|4 KiB' "$ROOT/docs/posixtrace.1" && pass "filters: the man page states the minimum size" ||
	fail "filters: the man page states the minimum size"

# attach follows the children the process forks after the stream exists:
# the program posts "tick" until told to go on, then forks a child that
# posts "kid", then posts "after"
attach_children() { # NAME ATTACH-OPTIONS...
	name=$1; shift
	rm -f go ready
	"$EMIT" 'ready=ready until=go,tick child=kid after wait=end' >/dev/null 2>&1 & prog=$!; BG="$BG $prog"
	wait_for 10 test -e ready
	"$PT" attach $prog "$@" >att.txt 2>att.err & att=$!; BG="$BG $att"
	wait_for 20 grep -q ' tick ' att.txt && touch go && wait_for 10 grep -q ' after ' att.txt
	interrupt $att
	touch end; wait $prog
	rm -f end
}
if [ -n "$EMIT" ]; then
	attach_children follow
	kid=$(awk '$5 == "kid" { print $3 }' att.txt)
	prog_pid=$(awk '$5 == "tick" { print $3; exit }' att.txt)
	[ -n "$kid" ] && [ "$kid" != "$prog_pid" ] && grep -q ' after ' att.txt &&
		pass "filters: attach follows a child forked after it attached" ||
		fail "filters: attach follows a child forked after it attached" "$(cat att.err; grep -v tick att.txt)"
	attach_children nofollow --no-inherit
	grep -q ' after ' att.txt && ! grep -q ' kid ' att.txt &&
		pass "filters: attach --no-inherit does not follow children" ||
		fail "filters: attach --no-inherit does not follow children" "$(cat att.err; grep -v tick att.txt)"
else
	skip "filters: attach follows children" "no ptemit"
fi
