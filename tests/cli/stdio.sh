#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 5: "-" is standard input or output wherever it can be: record -o -
# and attach -o - write the log to standard output (a pipe takes the APPEND
# log policy), dump -, stats - and convert - read it from standard input,
# convert --to chrome - writes to standard output.  No file named "-".
# Sourced by tests/cli/run.sh (its helpers and variables).

mkdir stdio && cd stdio || exit 2
"$PT" record -o - -- "$FORKER" -v -r 3 -t 2 2>piped.err | "$PT" dump - >piped.txt 2>dump.err; rc=$?
[ $rc -eq 0 ] && grep -q "forker:work" piped.txt && grep -q "^# [0-9]* events" piped.txt &&
	pass "stdio: record -o - | dump -" || fail "stdio: record -o - | dump -" "exit $rc: $(cat piped.err dump.err)"
[ ! -e ./- ] && pass "stdio: no file named '-'" || fail "stdio: no file named '-'" "$(ls -la)"
grep -q "^emit " piped.err && ! grep -q "^emit " piped.txt &&
	pass "stdio: with -o -, the command's standard output goes to standard error" ||
	fail "stdio: with -o -, the command's standard output goes to standard error" "$(head -n 3 piped.err)"
has "stdio: record -o - summary" "log on standard output" piped.err
if [ $have_python = 1 ]; then
	"$PT" record -o - -- "$FORKER" -v -r 3 -t 2 2>emit.txt | "$PT" dump - --format json >piped.jsonl
	out=$($COMPARE emitted emit.txt piped.jsonl parent 2>&1) && out=$($COMPARE emitted emit.txt piped.jsonl children 2>&1) &&
		pass "stdio: a log through a pipe holds what forker emitted" ||
		fail "stdio: a log through a pipe holds what forker emitted" "$out"
else
	skip "stdio: a log through a pipe holds what forker emitted" "no python3"
fi
"$PT" record -o - --log-policy loop --log-size 1M -- "$FORKER" -n 2>loop.err | cat >/dev/null
[ "$(wc -l <loop.err)" -eq 1 ] && grep -q "takes only --log-policy append" loop.err &&
	pass "stdio: a pipe with --log-policy loop is refused, saying why" ||
	fail "stdio: a pipe with --log-policy loop is refused, saying why" "$(cat loop.err)"
"$PT" stats - <../fork.ptlog >stats.txt 2>&1 && grep -q "log: standard input" stats.txt &&
	pass "stdio: stats - reads standard input" || fail "stdio: stats - reads standard input" "$(head -n 3 stats.txt)"
cat ../fork.ptlog | "$PT" stats - >stats2.txt 2>&1 && grep -q "forker:work" stats2.txt &&
	pass "stdio: stats - reads a pipe" || fail "stdio: stats - reads a pipe" "$(head -n 3 stats2.txt)"
cat ../fork.ptlog | "$PT" convert - --to chrome - >pipe.json 2>conv.err && grep -q traceEvents pipe.json &&
	pass "stdio: convert - --to chrome - (pipe to pipe)" || fail "stdio: convert - --to chrome - (pipe to pipe)" "$(cat conv.err)"
chrome_valid "stdio: chrome output of a piped log follows the format's rules" pipe.json
cmp -s pipe.json ../stdout.json && pass "stdio: a piped log converts as the file does" ||
	fail "stdio: a piped log converts as the file does" "$(diff pipe.json ../stdout.json | head -n 4)"
cat ../fork.ptlog | "$PT" convert - --to ctf pipectf >/dev/null 2>&1 && [ -f pipectf/metadata ] &&
	pass "stdio: convert - --to ctf DIR" || fail "stdio: convert - --to ctf DIR"
refused "stdio: a CTF trace cannot go to standard output" 2 "standard output" "$PT" convert ../fork.ptlog --to ctf -
"$PT" dump - <../fork.ptlog >d.txt && cmp -s d.txt ../dump.txt && pass "stdio: dump - is dump LOG" ||
	fail "stdio: dump - is dump LOG" "$(diff d.txt ../dump.txt | head -n 4)"
refused "stdio: dump - of nothing" 1 "standard input: not a posixtrace log" "$PT" dump - </dev/null
if command -v script >/dev/null 2>&1; then
	script -qec "$PT record -o - -- true" /dev/null >tty.txt 2>&1
	grep -q "standard output is a terminal" tty.txt && pass "stdio: record -o - refuses a terminal" ||
		fail "stdio: record -o - refuses a terminal" "$(cat tty.txt)"
	script -qec "$PT dump -" /dev/null >tty2.txt 2>&1 </dev/null
	grep -q "standard input: is a terminal" tty2.txt && pass "stdio: dump - refuses a terminal" ||
		fail "stdio: dump - refuses a terminal" "$(cat tty2.txt)"
else
	skip "stdio: terminals refused" "no script(1)"
fi
# attach -o -: the log of a running process through a pipe
"$FORKER" -n -t 1 -r 400 -s 20 >/dev/null & tgt=$!; BG="$BG $tgt"
wait_for 10 grep -q libposixtrace /proc/$tgt/maps 2>/dev/null
"$PT" attach $tgt --duration 0.5 -o - 2>att.err | "$PT" dump - >att.txt 2>&1
grep -q "forker:work" att.txt && pass "stdio: attach -o - | dump -" || fail "stdio: attach -o - | dump -" "$(cat att.err; tail -n 2 att.txt)"
kill $tgt 2>/dev/null; wait $tgt 2>/dev/null
cd ..
