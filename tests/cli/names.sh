#!/bin/sh
# SPDX-License-Identifier: MIT
# Names as users read them (UTF-8): event names café:crème_brûlée,
# запрос_begin, 日本語 and one with bytes that are not UTF-8 (0xff 0xc0),
# posted as names and as data, come back in dump's text and JSON, Chrome
# JSON and CTF (babeltrace2) as they were, the invalid bytes as \xHH, each
# name distinct (before: \u00c3\u00a9 in JSON for each byte of é, "?" for
# every byte above 0x7f in the CTF metadata, so names collided).
# Sourced by tests/cli/run.sh (its helpers and variables).

if [ -z "$EMIT" ]; then
	skip "names: UTF-8 round trips" "no ptemit"
else
	U1='café:crème_brûlée' U2='запрос_begin' U3='日本語'
	BAD=$(printf 'bad\377\300x')
	"$PT" record -o utf8.ptlog -- "$EMIT" "$U1 $U2 $U3 $BAD" >/dev/null 2>&1
	"$PT" dump utf8.ptlog >utf8.txt 2>&1
	for n in "$U1" "$U2" "$U3"; do
		grep -q " $n  *\"$n\" " utf8.txt && pass "names: dump text shows $n as it is, name and data" ||
			fail "names: dump text shows $n as it is, name and data" "$(grep -a ptemit utf8.txt)"
	done
	grep -q ' bad\\xff\\xc0x  *0x626164ffc078 ' utf8.txt &&
		pass "names: dump text escapes invalid bytes as \\xHH (data in hex)" ||
		fail "names: dump text escapes invalid bytes as \\xHH (data in hex)" "$(grep -a bad utf8.txt)"
	"$PT" dump utf8.ptlog --format json >utf8.jsonl 2>&1
	"$PT" convert utf8.ptlog --to chrome utf8.json 2>/dev/null
	if [ $have_python = 1 ]; then
		# JSON: the names and texts, decoded, are the names; the invalid
		# bytes the text \xHH
		want="['$U1', '$U2', '$U3', 'bad\\\\xff\\\\xc0x']"
		got=$(python3 -c 'import json,sys
evs=[json.loads(l) for l in open(sys.argv[1]) if "\"ptemit\"" in l]
print([e["name"] for e in evs]); print([e.get("text") for e in evs])' utf8.jsonl 2>&1)
		[ "$got" = "$want
['$U1', '$U2', '$U3', None]" ] && pass "names: dump --format json round-trips UTF-8 (json.loads)" ||
			fail "names: dump --format json round-trips UTF-8 (json.loads)" "$got"
		got=$(python3 -c 'import json,sys
evs=json.load(open(sys.argv[1]))["traceEvents"]
print([e["name"] for e in evs if e.get("ph") == "i" or e.get("ph") == "B" or e.get("ph") == "X"
       if e["name"].startswith(("caf", "з", "日", "bad"))])' utf8.json 2>&1)
		[ "$got" = "$want" ] && pass "names: Chrome JSON round-trips UTF-8" ||
			fail "names: Chrome JSON round-trips UTF-8" "$got"
		python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' utf8.json &&
			python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' utf8.jsonl &&
			pass "names: the JSON files are valid UTF-8" || fail "names: the JSON files are valid UTF-8"
		chrome_valid "names: the Chrome file follows the format's rules" utf8.json
	else
		skip "names: JSON round trips" "no python3"
	fi
	if [ $have_bt = 1 ]; then
		"$PT" convert utf8.ptlog --to ctf utf8ctf 2>/dev/null
		babeltrace2 utf8ctf >utf8bt.txt 2>&1
		for n in "$U1" "$U2" "$U3" 'bad\\xff\\xc0x'; do
			grep -q ") $n: {" utf8bt.txt && pass "names: CTF event named $n (babeltrace2)" ||
				fail "names: CTF event named $n (babeltrace2)" "$(grep -a ptemit utf8bt.txt | cut -c 1-80)"
		done
		grep -q "text = \"$U2\"" utf8bt.txt && pass "names: CTF text field keeps UTF-8 data" ||
			fail "names: CTF text field keeps UTF-8 data" "$(grep -a "$U2" utf8bt.txt | head -c 300)"
	else
		skip "names: CTF round trip" "no babeltrace2"
	fi
fi

# C++ call sites demangled (libstdc++'s demangler, in the confined
# symbolizer): a template method and a template function inlined into it
# (tests/cli/sym/worker.cc, built with g++), as perf and gdb name them;
# --no-demangle keeps the symbols (before, the mangled names were shown).
WORKER=$BUILD/tests/cli/sym/sym_worker
wline() { grep -n "SITE:$1" "$ROOT/tests/cli/sym/worker.cc" | cut -d: -f1; }
if [ ! -x "$WORKER" ]; then
	skip "names: demangled C++ call sites" "no sym_worker (no C++ compiler)"
elif ! "$PT" dump --help | grep -q -- --no-demangle; then
	fail "names: dump takes --no-demangle"
else
	"$PT" record -o cxx.ptlog -- "$WORKER" >/dev/null 2>&1
	"$PT" dump cxx.ptlog >cxx.txt 2>&1
	grep -q " cxx\.run .* at app::Worker<int>::run(int const&)+0x[0-9a-f]* worker\.cc:$(wline run)\$" cxx.txt &&
		pass "names: a template method's call site demangled" ||
		fail "names: a template method's call site demangled" "$(grep cxx cxx.txt)"
	grep -q " cxx\.note .* at app::Worker<int>::run(int const&)+0x[0-9a-f]* worker\.cc:$(wline note), inlined void app::note<int>(unsigned int, int const&)\$" cxx.txt &&
		pass "names: an inlined template function demangled" ||
		fail "names: an inlined template function demangled" "$(grep cxx cxx.txt)"
	"$PT" dump cxx.ptlog --no-demangle >cxxraw.txt 2>&1
	grep -q " cxx\.run .* at _ZN3app6WorkerIiE3runERKi+0x[0-9a-f]* worker\.cc:" cxxraw.txt &&
		grep -q " cxx\.note .*, inlined _ZN3app4noteIiEEvjRKT_\$" cxxraw.txt &&
		pass "names: --no-demangle shows the symbols" ||
		fail "names: --no-demangle shows the symbols" "$(grep cxx cxxraw.txt)"
	"$PT" dump cxx.ptlog --format json >cxx.jsonl 2>&1
	has "names: JSON site demangled" '"site":"app::Worker<int>::run(int const&)+0x' cxx.jsonl
	"$PT" convert cxx.ptlog --to chrome cxx.json 2>/dev/null
	has "names: Chrome site demangled" '"site":"app::Worker<int>::run(int const&)+0x' cxx.json
	"$PT" stats cxx.ptlog >cxxstats.txt 2>&1
	has "names: stats' hottest sites demangled" "app::Worker<int>::run(int const&)+0x" cxxstats.txt
fi
