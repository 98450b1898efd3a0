#!/bin/sh
# SPDX-License-Identifier: MIT
# Tests of posixtrace(1), the command-line tool.  It is given the build
# directory, where the tool is $1/posixtrace, the instrumented example
# programs are $1/examples/* and the test emitter is $1/tests/cli/ptemit
# (built here from tests/cli/ptemit.c if the build did not).  Ends with
# "N passed, N failed".
# Usage: sh tests/cli/run.sh BUILD_DIR
# babeltrace2 (CTF checks) is installed with apt-get when root; otherwise
# those checks say SKIP.  python3 compares recordings (tests/cli/compare.py)
# and checks every Chrome file against the format's rules
# (tests/cli/chrome_check.py).  The checks of each issue item are in their
# own file, sourced at the end (pairs.sh, stdio.sh, damage.sh, order.sh,
# stats.sh, filters.sh, help.sh, files.sh, pidns.sh, hostile.sh, rendezvous.sh,
# flight.sh, symbols.sh, addrspace.sh, static.sh, names.sh, archive.sh, perfetto.sh,
# windows.sh, rotate.sh, otlp.sh, otlp_live.sh, cpu.sh, block.sh, hosts.sh; CLI_ITEMS="names" runs only the files it names).
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PT=$BUILD/posixtrace
FORKER=$BUILD/examples/forker
COMPARE="python3 $HERE/compare.py"
CHROME_CHECK="python3 $HERE/chrome_check.py"
T=$(mktemp -d "${TMPDIR:-/tmp}/pt-cli.XXXXXX") || exit 2
# background processes a check starts are listed here and killed at exit,
# also when a check fails or the script is interrupted; only those that are
# still our children (a pid reaped earlier may belong to someone else now)
BG=""
is_our_child() { [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2)" = "$$" ]; }
cleanup() { for p in $BG; do is_our_child "$p" && kill -9 "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$T" || exit 2
passed=0; failed=0; skipped=0

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/    /' | head -n 12; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1${2:+: $2}"; }
# ok NAME CMD...: the command succeeds
ok() { n=$1; shift; if out=$("$@" 2>&1); then pass "$n"; else fail "$n" "$out"; fi; }
# refused NAME STATUS PATTERN CMD...: exits with STATUS and one stderr line matching PATTERN
refused() {
	n=$1 want=$2 pat=$3; shift 3
	"$@" >/dev/null 2>err.txt; rc=$?
	if [ "$rc" = "$want" ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q -- "$pat" err.txt; then
		pass "$n"
	else
		fail "$n" "exit $rc (want $want); stderr: $(cat err.txt)"
	fi
}
# has NAME PATTERN FILE / hasnt NAME PATTERN FILE
has() { if grep -q -- "$2" "$3"; then pass "$1"; else fail "$1" "no '$2' in $3: $(head -c 600 "$3")"; fi; }
hasnt() { if grep -q -- "$2" "$3"; then fail "$1" "'$2' found in $3"; else pass "$1"; fi; }
count() { grep -c -- "$1" "$2"; }
# chrome_valid NAME FILE: FILE follows the Chrome trace event format's rules
chrome_valid() {
	if [ $have_python = 0 ]; then skip "$1" "no python3"; return; fi
	if out=$($CHROME_CHECK "$2" 2>&1); then pass "$1"; else fail "$1" "$out"; fi
}
# wait_for SECONDS CMD...: polls CMD every 0.1 s; false if it never holds
# (the bound only catches hangs)
wait_for() {
	n=$(($1 * 10)); shift
	while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}
# interrupt PID: Ctrl-C for a background command, and its exit status.  A
# background job of sh starts with SIGINT ignored until the command sets
# its handler, so a SIGINT sent before that would be lost: it is sent once
# the command catches it (SigCgt); a command still running 20 s later is
# killed (status 137), so a lost signal fails the check instead of hanging
# the run.
catches_int() { # SIGINT is signal 2: bit 1 of the mask's last hex digit
	case $(sed -n 's/^SigCgt:.*\(.\)$/\1/p' "/proc/$1/status" 2>/dev/null) in
	2 | 3 | 6 | 7 | a | b | e | f) return 0 ;;
	*) return 1 ;;
	esac
}
running() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
interrupt() {
	wait_for 20 eval 'catches_int '"$1"' || ! running '"$1"
	kill -INT "$1" 2>/dev/null
	wait_for 20 eval '! running '"$1" || kill -9 "$1" 2>/dev/null
	wait "$1"
}

[ -x "$PT" ] || { echo "no $PT (build it first)"; echo "0 passed, 1 failed"; exit 1; }
[ -x "$FORKER" ] || { echo "no $FORKER (build it first)"; echo "0 passed, 1 failed"; exit 1; }
have_python=1; command -v python3 >/dev/null 2>&1 || have_python=0

# babeltrace2, for the CTF checks
if ! command -v babeltrace2 >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing babeltrace2"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq babeltrace2 >/dev/null 2>&1
	fi
fi
have_bt=1; command -v babeltrace2 >/dev/null 2>&1 || have_bt=0

# ptemit (tests/cli/ptemit.c): posts the events its arguments name
EMIT=$BUILD/tests/cli/ptemit
if [ ! -x "$EMIT" ]; then
	EMIT=$T/ptemit
	# built as the library was: a sanitized library needs a sanitized program
	san=""
	for s in address undefined thread; do
		ldd "$BUILD/libposixtrace.so" 2>/dev/null | grep -q "lib$(echo $s | sed 's/address/asan/;s/undefined/ubsan/;s/thread/tsan/')" &&
			san="$san${san:+,}$s"
	done
	${CC:-cc} -D_GNU_SOURCE -std=c11 ${san:+-fsanitize=$san} -I"$ROOT/include" "$HERE/ptemit.c" -o "$EMIT" \
		-L"$BUILD" -Wl,-rpath,"$BUILD" -lposixtrace -lpthread 2>ptemit.err || EMIT=""
fi

# CLI_ITEMS="names symbols": only those item files (below), for a quick run
summary() {
	[ $skipped -gt 0 ] && echo "($skipped checks skipped)"
	echo "$passed passed, $failed failed"
	[ $failed -eq 0 ]
}
if [ -n "$CLI_ITEMS" ]; then
	chmod 755 "$T"
	for item in $CLI_ITEMS; do
		. "$HERE/$item.sh"
	done
	summary
	exit
fi

# ---- help and usage errors -------------------------------------------------
ok "help: posixtrace --help" "$PT" --help
for c in record attach dump stats convert; do
	"$PT" $c --help >help.txt 2>&1 && grep -q "usage: posixtrace $c" help.txt &&
		pass "help: $c --help" || fail "help: $c --help" "$(cat help.txt)"
done
refused "usage: no command" 2 "no command" "$PT"
refused "usage: unknown command" 2 "unknown command" "$PT" frobnicate
refused "record: unknown option" 2 "unknown option" "$PT" record --bogus -- true
refused "record: no command" 2 "no command" "$PT" record -o x.ptlog
refused "record: bad --policy" 2 "bad --policy" "$PT" record --policy append -- true
refused "record: bad --log-policy" 2 "bad --log-policy" "$PT" record --log-policy flush -- true
refused "record: bad --size" 2 "bad --size" "$PT" record --size lots -- true
refused "record: bad --log-size" 2 "bad --log-size" "$PT" record --log-size 0 -- true
refused "record: --filter with --only" 2 "exclude each other" "$PT" record --filter a --only b -- true
refused "record: option without value" 2 "needs a value" "$PT" record -o
refused "record: name too long" 2 "bad --filter" "$PT" record \
	--filter aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa -- true
refused "record: zero size" 2 "bad --size" "$PT" record -o x.ptlog --size 0K -- true
refused "dump: no log" 2 "no LOG" "$PT" dump
refused "dump: bad --format" 2 "bad --format" "$PT" dump x --format xml
refused "dump: bad --since" 2 "bad --since" "$PT" dump x --since soon
refused "stats: no log" 2 "no LOG" "$PT" stats
refused "stats: several logs, each must open" 1 "a: No such file" "$PT" stats a b
refused "convert: no --to" 2 "required" "$PT" convert x out
refused "convert: bad format" 2 "unknown format" "$PT" convert x --to pdf out
refused "convert: no output" 2 "required" "$PT" convert x --to ctf
refused "attach: no pid" 2 "no PID" "$PT" attach
refused "attach: bad pid" 2 "bad PID" "$PT" attach 12ab
refused "attach: bad duration" 2 "bad --duration" "$PT" attach 1 --duration -3

# ---- missing and corrupt logs ----------------------------------------------
refused "dump: missing log" 1 "No such file" "$PT" dump nonexistent.ptlog
: >empty.ptlog
refused "dump: empty log" 1 "not a posixtrace log" "$PT" dump empty.ptlog
head -c 100000 /dev/urandom >random.ptlog
refused "dump: random bytes" 1 "not a posixtrace log" "$PT" dump random.ptlog
refused "stats: random bytes" 1 "not a posixtrace log" "$PT" stats random.ptlog
refused "convert: random bytes" 1 "not a posixtrace log" "$PT" convert random.ptlog --to chrome x.json
mkdir adir
refused "dump: a directory" 1 "directory" "$PT" dump adir

# ---- record: the round trip ------------------------------------------------
"$PT" record -o fork.ptlog -- "$FORKER" -v -r 3 -t 2 >emitted.txt 2>rec.txt; rc=$?
[ $rc -eq 0 ] && pass "record: forker exits 0" || fail "record: forker exits 0" "exit $rc: $(cat rec.txt)"
has "record: summary line" "posixtrace: [0-9]* events, [0-9]* lost, [0-9.]* s, log fork.ptlog ([0-9]* bytes)" rec.txt
"$PT" dump fork.ptlog >dump.txt 2>&1 && pass "dump: text" || fail "dump: text" "$(cat dump.txt)"
has "dump: names" "forker:work" dump.txt
has "dump: printable data as text" '"hello from forker"' dump.txt
has "dump: binary data in hex" "0x00112233445566778899aabbccddeeff" dump.txt
has "dump: truncation mark" "forker:big.*\[truncated when recorded\]" dump.txt
has "dump: system event START" "posix_trace_start" dump.txt
has "dump: relative and absolute time" "^+0\.000000000 [0-9]*\.[0-9]\{9\} " dump.txt
has "dump: summary" "^# [0-9]* events ([0-9]* shown), 0 lost" dump.txt
"$PT" dump fork.ptlog --format json >dump.jsonl
if [ $have_python = 1 ]; then
	if python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' dump.jsonl; then
		pass "dump: json lines parse"; else fail "dump: json lines parse"; fi
	out=$($COMPARE emitted emitted.txt dump.jsonl parent 2>&1) &&
		pass "round trip: record -> dump = what forker emitted" ||
		fail "round trip: record -> dump = what forker emitted" "$out"
	out=$($COMPARE emitted emitted.txt dump.jsonl children 2>&1) &&
		pass "round trip: events of forker's child (inheritance)" ||
		fail "round trip: events of forker's child (inheritance)" "$out"
else
	skip "round trip" "no python3"
fi
n_all=$(grep -c '^+' dump.txt)
"$PT" dump fork.ptlog --only forker:work >only.txt
[ "$(count '^+' only.txt)" -eq "$(count forker:work dump.txt)" ] && ! grep -q forker:start only.txt &&
	pass "dump: --only" || fail "dump: --only" "$(cat only.txt)"
"$PT" dump fork.ptlog --since @9999999999 >late.txt
[ "$(count '^+' late.txt)" -eq 0 ] && has "dump: --since after the end" "($n_all events\|$n_all events (0 shown)" late.txt ||
	fail "dump: --since after the end" "$(cat late.txt)"
"$PT" dump fork.ptlog --until 0 >early.txt
[ "$(count '^+' early.txt)" -ge 1 ] && [ "$(count '^+' early.txt)" -lt "$n_all" ] &&
	pass "dump: --until 0" || fail "dump: --until 0" "$(cat early.txt)"
"$PT" dump fork.ptlog --since 0 --until 1000 >all.txt
[ "$(count '^+' all.txt)" -eq "$n_all" ] && pass "dump: --since/--until around all" ||
	fail "dump: --since/--until around all"

# ---- stats ------------------------------------------------------------------
"$PT" stats fork.ptlog >stats.txt 2>&1 && pass "stats: runs" || fail "stats: runs" "$(cat stats.txt)"
has "stats: per type" "forker:work" stats.txt
has "stats: per thread" "pid [0-9]* thread 0x" stats.txt
has "stats: rate" "events/s" stats.txt
has "stats: lost" "lost events: 0" stats.txt
has "stats: status" "^stream: " stats.txt
has "stats: attributes" "name: forker" stats.txt
has "stats: inheritance default" "inheritance: inherited" stats.txt
has "stats: default policies" "full policy: flush" stats.txt

# ---- record options -----------------------------------------------------------
"$PT" record -o filt.ptlog --filter forker:work -- "$FORKER" -n >/dev/null 2>&1
"$PT" dump filt.ptlog >filt.txt
hasnt "record: --filter drops the name" "forker:work" filt.txt
has "record: --filter keeps the others" "forker:start" filt.txt
"$PT" record -o only.ptlog --only forker:blob,forker:done -- "$FORKER" -n >/dev/null 2>&1
"$PT" dump only.ptlog >only2.txt
hasnt "record: --only drops other names" "forker:work\|forker:start" only2.txt
has "record: --only keeps the names" "forker:blob" only2.txt
has "record: --only keeps system events" "posix_trace_start" only2.txt
"$PT" record -o noinh.ptlog --no-inherit -- "$FORKER" -v >noinh.emit 2>/dev/null
"$PT" dump noinh.ptlog >noinh.txt; "$PT" stats noinh.ptlog >noinh.stats
hasnt "record: --no-inherit: no child events" "forker:child" noinh.txt
has "record: --no-inherit attribute" "inheritance: close for child" noinh.stats
"$PT" record -o loop.ptlog --policy loop --size 64K -- "$FORKER" -n -r 20000 -t 4 >/dev/null 2>loop.err
"$PT" stats loop.ptlog >loop.stats
has "record: --policy loop --size" "stream size: 65536, full policy: loop" loop.stats
grep -q "lost events: [1-9]" loop.stats && pass "record: small loop stream loses events" ||
	fail "record: small loop stream loses events" "$(cat loop.stats)"
"$PT" record -o uf.ptlog --policy until-full -- "$FORKER" -n >/dev/null 2>&1
"$PT" stats uf.ptlog >uf.stats; has "record: --policy until-full" "full policy: until-full" uf.stats
"$PT" record -o ll.ptlog --log-policy loop --log-size 1M -- "$FORKER" -n >/dev/null 2>&1
"$PT" stats ll.ptlog >ll.stats; has "record: --log-policy loop --log-size" "log size: 1048576, full policy: loop" ll.stats
"$PT" record -o lu.ptlog --log-policy until-full --log-size 256K -- "$FORKER" -n -r 20000 -t 2 >/dev/null 2>&1
"$PT" dump lu.ptlog >lu.txt 2>&1; "$PT" stats lu.ptlog >lu.stats
has "record: --log-policy until-full stops at the limit" "log: full" lu.stats
has "record: log until-full ends with an automatic STOP" "posix_trace_stop.*automatic" lu.txt
mkdir dflt && (cd dflt && "$PT" record -- "$FORKER" -n >/dev/null 2>&1)
ls dflt/posixtrace-forker-*.ptlog >/dev/null 2>&1 && pass "record: default log name" ||
	fail "record: default log name" "$(ls dflt)"
"$PT" record -o st.ptlog -- sh -c 'exit 7' >/dev/null 2>&1; rc=$?
[ $rc -eq 7 ] && pass "record: exit status of the command" || fail "record: exit status of the command" "exit $rc"
refused "record: command not found" 127 "no-such-program: No such file" "$PT" record -o nf.ptlog -- ./no-such-program
[ ! -e nf.ptlog ] && pass "record: no log left when the command cannot run" || fail "record: no log left when the command cannot run"
"$PT" record -o true.ptlog -- /bin/true >/dev/null 2>true.err; rc=$?
[ $rc -eq 0 ] && pass "record: uninstrumented /bin/true exits 0" || fail "record: uninstrumented /bin/true exits 0" "$(cat true.err)"
has "record: note for an uninstrumented program" "note: no events from /bin/true" true.err
"$PT" dump true.ptlog >true.txt 2>&1 && pass "record: uninstrumented program gives a valid log" ||
	fail "record: uninstrumented program gives a valid log" "$(cat true.txt)"
[ "$(awk '$5 !~ /^posix_trace_/ && /^\+/' true.txt | wc -l)" -eq 0 ] &&
	pass "record: uninstrumented program: no user events" || fail "record: uninstrumented program: no user events" "$(cat true.txt)"
refused "record: log in a missing directory" 1 "No such file" "$PT" record -o /nonexistent/x.ptlog -- true

# ---- stopping a recording -------------------------------------------------------
# a signal sent to the recorder alone stops the recording and is passed on
"$PT" record -o term.ptlog -- "$FORKER" -n -t 1 -r 100000 -s 10 >/dev/null 2>term.err &
rec=$!; BG="$BG $rec"; sleep 1; kill -TERM $rec; wait $rec; rc=$?
[ $rc -eq 143 ] && pass "record: SIGTERM stops, passed on, status 143" ||
	fail "record: SIGTERM stops, passed on, status 143" "exit $rc: $(cat term.err)"
has "record: SIGTERM: summary" "events, [0-9]* lost" term.err
"$PT" dump term.ptlog >term.txt 2>&1 && grep -q forker:work term.txt &&
	pass "record: SIGTERM keeps the log" || fail "record: SIGTERM keeps the log" "$(tail -n 3 term.txt)"
# SIGINT (Ctrl-C) stops the recording at once; the command (which ignores
# SIGINT here, as background jobs of sh do) runs on and gives the status
"$PT" record -o int.ptlog -- "$FORKER" -n -t 1 -r 150 -s 10 >/dev/null 2>int.err &
rec=$!; BG="$BG $rec"; sleep 0.5; interrupt $rec; rc=$?
[ $rc -eq 0 ] && pass "record: SIGINT stops, status of the command" ||
	fail "record: SIGINT stops, status of the command" "exit $rc: $(cat int.err)"
"$PT" dump int.ptlog >int.txt 2>&1 && n=$(count forker:work int.txt) && [ "$n" -gt 0 ] && [ "$n" -lt 150 ] &&
	pass "record: SIGINT stops recording, keeps the log" || fail "record: SIGINT stops recording, keeps the log" "$(tail -n 3 int.txt)"
"$PT" record -o k9.ptlog -- "$FORKER" -n -t 1 -r 40 -s 25 >/dev/null 2>&1 &
rec=$!; BG="$BG $rec"; sleep 0.5; kill -9 $rec; wait $rec 2>/dev/null; sleep 1.5
"$PT" dump k9.ptlog >k9.txt 2>&1 && grep -q "forker:work" k9.txt &&
	pass "record: log of a recorder killed with SIGKILL opens" || fail "record: log of a recorder killed with SIGKILL opens" "$(tail -n 3 k9.txt)"
size=$(wc -c <fork.ptlog); head -c $((size - 100)) fork.ptlog >cut.ptlog
"$PT" dump cut.ptlog >cut.txt 2>cut.err; rc=$?
[ $rc -eq 0 ] && grep -q "ends early" cut.err && pass "dump: truncated log opens, damage noted" ||
	fail "dump: truncated log opens, damage noted" "exit $rc: $(cat cut.err)"

# ---- attach ----------------------------------------------------------------------
"$FORKER" -n -t 1 -r 400 -s 50 >/dev/null & tgt=$!; BG="$BG $tgt"; sleep 0.3
"$PT" attach $tgt --duration 1 >live.txt 2>live.err; rc=$?
[ $rc -eq 0 ] && grep -q "forker:work" live.txt && pass "attach: live events" ||
	fail "attach: live events" "exit $rc: $(cat live.err) $(head -n 3 live.txt)"
has "attach: live summary" "events, [0-9]* lost" live.err
"$PT" attach $tgt --duration 1 --format json >live.jsonl 2>/dev/null
grep -q '"name":"forker:work"' live.jsonl && pass "attach: --format json" || fail "attach: --format json" "$(head -n 2 live.jsonl)"
"$PT" attach $tgt --duration 0.8 -o att.ptlog >/dev/null 2>att.err
"$PT" dump att.ptlog >att.txt 2>&1 && grep -q forker:work att.txt && pass "attach: -o LOG" ||
	fail "attach: -o LOG" "$(cat att.err) $(tail -n 3 att.txt)"
"$PT" attach $tgt >/dev/null 2>&1 & att=$!; BG="$BG $att"; sleep 0.5; interrupt $att; rc=$?
[ $rc -eq 0 ] && pass "attach: Ctrl-C stops" || fail "attach: Ctrl-C stops" "exit $rc"
kill $tgt 2>/dev/null; wait $tgt 2>/dev/null
sleep 30 & nt=$!; BG="$BG $nt"
refused "attach: not instrumented" 1 "not instrumented" "$PT" attach $nt
kill $nt; wait $nt 2>/dev/null
refused "attach: no such process" 1 "no such process" "$PT" attach 2147483
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	refused "attach: not permitted" 1 "not permitted" setpriv --reuid=65534 --regid=65534 --clear-groups "$PT" attach $$
else
	skip "attach: not permitted" "needs root and setpriv"
fi

# ---- convert: chrome --------------------------------------------------------------
ok "convert: chrome" "$PT" convert fork.ptlog --to chrome fork.json
chrome_valid "convert: chrome follows the format's rules" fork.json
if [ $have_python = 1 ]; then
	n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for e in d["traceEvents"] if e["ph"] in "iBE") + len(d["otherData"].get("undated_events", [])))' fork.json)
	[ "$n" = "$n_all" ] && pass "convert: chrome has every event" || fail "convert: chrome has every event" "$n vs $n_all"
else
	skip "convert: chrome has every event" "no python3"
fi
has "convert: chrome process names" '"process_name"' fork.json
has "convert: chrome thread names" '"thread_name"' fork.json
has "convert: chrome data in args" '"data":"hello from forker"' fork.json
"$PT" convert fork.ptlog --to chrome - >stdout.json && has "convert: chrome to stdout" traceEvents stdout.json
chrome_valid "convert: chrome to stdout follows the format's rules" stdout.json

# ---- convert: CTF -------------------------------------------------------------------
ok "convert: ctf" "$PT" convert fork.ptlog --to ctf ctf
[ -f ctf/metadata ] && head -n 1 ctf/metadata | grep -q "CTF 1.8" && pass "convert: ctf metadata" || fail "convert: ctf metadata"
refused "convert: ctf into a file" 1 "not a directory" "$PT" convert fork.ptlog --to ctf fork.json
if [ $have_bt = 1 ]; then
	babeltrace2 --clock-seconds ctf >bt.txt 2>bt.err && pass "babeltrace2 reads the trace" ||
		fail "babeltrace2 reads the trace" "$(cat bt.err)"
	[ "$(wc -l <bt.txt)" -eq "$n_all" ] && pass "babeltrace2: same event count as dump" ||
		fail "babeltrace2: same event count as dump" "$(wc -l <bt.txt) vs $n_all"
	if [ $have_python = 1 ]; then
		out=$($COMPARE ctf dump.jsonl bt.txt 2>&1) && pass "babeltrace2: same times and fields as dump" ||
			fail "babeltrace2: same times and fields as dump" "$out"
		"$PT" dump loop.ptlog --format json >loop.jsonl
		"$PT" convert loop.ptlog --to ctf ctfloop >/dev/null 2>&1
		babeltrace2 --clock-seconds ctfloop >btloop.txt 2>btloop.err
		out=$($COMPARE ctf loop.jsonl btloop.txt 2>&1) && pass "babeltrace2: a log with losses, same events" ||
			fail "babeltrace2: a log with losses, same events" "$out"
		# Binary 16-byte events (written straight from the batch read
		# ahead) in runs cut by the events that are not (text, no data, a
		# second thread's, a packet's end every ~1,600 events): babeltrace2
		# gives every event with dump's time and fields.
		if [ -n "$EMIT" ]; then
			"$PT" record -o mix.ptlog --no-images -- "$EMIT" \
				'values=3000,0,binary,mix.b values=40,0,text,mix.t values=3000,0,binary,mix.b values=30,0,none,mix.n values=2000,0,binary,mix.b' \
				'values=2500,0,binary,mix.c values=25,0,text,mix.u values=2500,0,binary,mix.c' >/dev/null 2>&1
			"$PT" dump mix.ptlog --format json >mix.jsonl
			"$PT" convert mix.ptlog --to ctf ctfmix >/dev/null 2>&1
			babeltrace2 --clock-seconds ctfmix >btmix.txt 2>btmix.err
			# compare.py counts every event of each (13,095 posted)
			[ "$(wc -l <btmix.txt)" -ge 13095 ] && out=$($COMPARE ctf mix.jsonl btmix.txt 2>&1) &&
				pass "babeltrace2: binary events in runs among others, same events" ||
				fail "babeltrace2: binary events in runs among others, same events" \
					"$(wc -l <btmix.txt) lines; $out $(head -c 300 btmix.err)"
		else
			skip "babeltrace2: binary events in runs among others" "no ptemit"
		fi
	fi
	has "babeltrace2: lost events show as discarded" "discarded [0-9]* events" btloop.err
else
	skip "babeltrace2 checks" "babeltrace2 is not installed (not root?)"
fi

# ---- progress line on a terminal ----------------------------------------------------
if command -v script >/dev/null 2>&1; then
	"$PT" record -o big.ptlog --size 64M -- "$FORKER" -n -t 1 -r 150000 >/dev/null 2>&1
	script -qec "$PT convert big.ptlog --to chrome big.json" /dev/null >tty.txt 2>&1
	has "convert: progress line on a terminal" "converting" tty.txt
	chrome_valid "convert: a large chrome file follows the format's rules" big.json
	"$PT" convert big.ptlog --to chrome --force big.json 2>notty.txt
	hasnt "convert: no progress line when stderr is not a terminal" "converting" notty.txt
	# A log's loss is shared out over its OVERFLOW events once all are
	# counted: by a first pass when a terminal shows progress, else by
	# starting again at the first OVERFLOW.  Both write the same trace.
	script -qec "$PT convert loop.ptlog --to ctf ttyctf" /dev/null >/dev/null 2>&1
	"$PT" convert loop.ptlog --to ctf nottyctf 2>/dev/null
	grep -q posix_trace_overflow ttyctf/metadata && diff -r ttyctf nottyctf >/dev/null &&
		pass "convert: a CTF trace with losses is the same whether the loss is counted first or after" ||
		fail "convert: a CTF trace with losses is the same whether the loss is counted first or after" "$(ls ttyctf nottyctf)"
else
	skip "convert: progress line" "no script(1)"
fi

# ---- the issue items, one file each -----------------------------------------------
for item in pairs stdio damage order stats filters help files pidns hostile rendezvous flight symbols addrspace static \
            names archive perfetto windows rotate otlp otlp_live cpu block hosts; do
	. "$HERE/$item.sh"
done

summary
