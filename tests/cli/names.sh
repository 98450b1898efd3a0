#!/bin/sh
# SPDX-License-Identifier: MIT
# Names as users read them (UTF-8): event names café:crème_brûlée,
# запрос_begin, 日本語 and one with bytes that are not UTF-8 (0xff 0xc0),
# posted as names and as data, come back in dump's text and JSON, Chrome
# JSON, CTF (babeltrace2) and Perfetto as they were, the invalid bytes as \xHH, each
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
	# Perfetto: protobuf strings are UTF-8; the invalid name as dump prints it
	if command -v protoc >/dev/null 2>&1 && [ $have_python = 1 ]; then
		"$PT" convert utf8.ptlog --to perfetto utf8.pftrace 2>/dev/null
		protoc --decode=perfetto.protos.Trace --proto_path="$ROOT/tests/perfetto" \
			"$ROOT/tests/perfetto/trace_subset.proto" <utf8.pftrace >utf8pf.txt 2>&1
		got=$(python3 -c 'import codecs, re, sys
names = set()
for line in open(sys.argv[1], encoding="ascii"):
    m = re.match(r"\s*name: \"(.*)\"$", line)
    if m:
        names.add(codecs.escape_decode(m.group(1).encode())[0].decode("utf-8"))
print(all(n in names for n in sys.argv[2:]))' utf8pf.txt "$U1" "$U2" "$U3" 'bad\xff\xc0x' 2>&1)
		[ "$got" = True ] && pass "names: Perfetto names are UTF-8 as they are, invalid bytes as \\xHH" ||
			fail "names: Perfetto names are UTF-8 as they are, invalid bytes as \\xHH" "$got $(head -c 300 utf8pf.txt)"
	else
		skip "names: Perfetto round trip" "no protoc or python3"
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

# .gnu_debuglink, where gdb looks: a stripped program whose debug file is
# beside it, in .debug/ beside it, or under DIR/usr/lib/debug/<its
# directory> with --symfs DIR gets its names; a debug file whose CRC is not
# the one the link gives (one byte appended: same build id) is refused
# with a note; a symbolic link, a FIFO, a file over the 512 MiB cap are
# refused as every file a log names is (before: no debuglink was read).
SYMS=$BUILD/tests/cli/sym
if [ ! -x "$SYMS/sym_app" ] || ! command -v objcopy >/dev/null 2>&1; then
	skip "names: .gnu_debuglink" "no sym_app or no objcopy"
else
	chmod 755 "$T"
	mkdir -p dlink && chmod 755 dlink
	cp "$SYMS/sym_app" dlink/symapp
	(cd dlink && objcopy --only-keep-debug symapp symapp.debug &&
		objcopy --strip-all --add-gnu-debuglink=symapp.debug symapp) 2>/dev/null
	mv dlink/symapp.debug dlink.debug
	chmod 644 dlink.debug
	"$PT" record -o dlink.ptlog -- dlink/symapp "$SYMS/sym_plugin.so" >/dev/null 2>&1
	# dlnamed NAME: the program's events named (app_work and its line)
	dlnamed() {
		"$PT" dump dlink.ptlog ${2:+--symfs "$2"} >dl.txt 2>dlerr.txt
		line=$(grep -n "SITE:app_work" "$ROOT/tests/cli/sym/app.c" | cut -d: -f1)
		n=$(grep -c " sym.app " dl.txt)
		good=$(grep " sym.app " dl.txt | grep -c " at app_work+0x[0-9a-f]* app.c:$line\$")
		[ "$n" -gt 0 ] && [ "$good" -eq "$n" ] && pass "$1 ($n events)" ||
			fail "$1" "$(grep ' sym.app ' dl.txt | head -n 2) $(cat dlerr.txt)"
	}
	# dlrefused NAME: none named, the dump ended
	dlrefused() {
		timeout 60 "$PT" dump dlink.ptlog >dl.txt 2>dlerr.txt; rc=$?
		[ $rc -eq 0 ] && grep -q " sym.app .* at symapp+0x[0-9a-f]*\$" dl.txt &&
			! grep -q " sym.app .* at app_work" dl.txt && pass "$1" ||
			fail "$1" "exit $rc: $(grep ' sym.app ' dl.txt | head -n 2) $(cat dlerr.txt)"
	}
	dlrefused "names: a stripped program without its debug file has no names"
	cp dlink.debug dlink/symapp.debug
	dlnamed "names: debuglink beside the program"
	mkdir -p dlink/.debug && mv dlink/symapp.debug dlink/.debug/ && chmod 755 dlink/.debug
	dlnamed "names: debuglink in .debug/ beside the program"
	rm -rf dlink/.debug
	mkdir -p "dlroot/usr/lib/debug$T/dlink" && chmod -R 755 dlroot
	cp dlink.debug "dlroot/usr/lib/debug$T/dlink/symapp.debug"
	dlnamed "names: debuglink under the global debug directory (--symfs DIR/usr/lib/debug)" "$T/dlroot"
	rm -rf dlroot
	cp dlink.debug dlink/symapp.debug && printf x >>dlink/symapp.debug
	dlrefused "names: a debug file with another CRC is refused"
	has "names: its note says why" "symapp.debug not used: its CRC is not the one" dlerr.txt
	rm -f dlink/symapp.debug && ln -s "$T/dlink.debug" dlink/symapp.debug
	dlrefused "names: a debuglink that is a symbolic link is refused"
	rm -f dlink/symapp.debug && mkfifo dlink/symapp.debug
	dlrefused "names: a debuglink that is a FIFO is refused (not opened)"
	rm -f dlink/symapp.debug && truncate -s 600M dlink/symapp.debug
	dlrefused "names: a debuglink over the file cap is refused"
	rm -f dlink/symapp.debug
fi

# Names in a user namespace as outside it: a program installed by real
# root (seen inside as the overflow uid), recorded and dumped by an
# unprivileged user inside `unshare --user --map-root-user`, gets the same
# names as outside (before: every image "symbols given up (the symbolizer
# failed)": the command, root there, had its child take other rights,
# which such a namespace cannot give).  Needs root (to be the other user),
# setpriv and unshare, and user namespaces for unprivileged users.
if [ "$(id -u)" != 0 ] || [ ! -x "$SYMS/sym_app" ] || ! command -v setpriv >/dev/null 2>&1 ||
	! command -v unshare >/dev/null 2>&1 ||
	! setpriv --reuid=65534 --regid=65534 --clear-groups unshare --user --map-root-user true 2>/dev/null; then
	skip "names: a user namespace's names" "needs root, setpriv, and unshare --user for unprivileged users"
else
	chmod 755 "$T"
	mkdir -p nsprog nsuser && chmod 755 nsprog && chown 65534:65534 nsuser
	cp "$SYMS/sym_app" "$SYMS/sym_plugin.so" nsprog/ && chmod 755 nsprog/*
	(cd nsuser && setpriv --reuid=65534 --regid=65534 --clear-groups unshare --user --map-root-user sh -c \
		"'$PT' record -o ns.ptlog -- '$T/nsprog/sym_app' '$T/nsprog/sym_plugin.so' >/dev/null 2>&1
		 stat -c %u '$T/nsprog/sym_app' >owner.txt
		 '$PT' dump ns.ptlog >inside.txt 2>inside.err") 
	(cd nsuser && setpriv --reuid=65534 --regid=65534 --clear-groups "$PT" dump ns.ptlog >outside.txt 2>outside.err)
	line=$(grep -n "SITE:app_work" "$ROOT/tests/cli/sym/app.c" | cut -d: -f1)
	n=$(grep -c " sym.app .* at app_work+0x[0-9a-f]* app.c:$line\$" nsuser/outside.txt)
	[ "$n" -eq 4 ] && pass "names: the same user outside the namespace gets the names" ||
		fail "names: the same user outside the namespace gets the names" "$(cat nsuser/outside.txt nsuser/outside.err | head)"
	[ "$(cat nsuser/owner.txt)" != 0 ] && [ "$(grep ' sym\.' nsuser/inside.txt)" = "$(grep ' sym\.' nsuser/outside.txt)" ] &&
		[ ! -s nsuser/inside.err ] &&
		pass "names: inside the namespace, real root's program (uid $(cat nsuser/owner.txt) there) gets the same names" ||
		fail "names: inside the namespace, real root's program gets the same names" \
			"owner $(cat nsuser/owner.txt); $(grep ' sym.app ' nsuser/inside.txt | head -n 2) $(cat nsuser/inside.err)"
fi
