#!/bin/sh
# SPDX-License-Identifier: MIT
# Symbols (symbols, durations and a flight recorder, "Symbols"): record
# keeps the images of the traced programs, and dump, stats and convert name
# each event's call site by function+offset and file:line: for a -g PIE
# program (and a function inlined in it), a shared library it links and a
# plug-in it dlopens and unloads
# (tests/cli/sym/, each posting line marked SITE:function).  A program
# rebuilt since it was traced is not used (the note names the build id
# needed) and --symfs finds the original; --no-symbols and --no-images
# show none; run as root, the files are read with the rights of the log's
# owner (tests/t_symproc.c has the confined symbolizer's own checks).
# Sourced by tests/cli/run.sh (its helpers and variables).

SYM=$BUILD/tests/cli/sym
site_line() { grep -n "SITE:$2" "$ROOT/tests/cli/sym/$1" | cut -d: -f1; }
# named NAME EVENT FUNCTION FILE DUMP: every EVENT line of DUMP ends with
# "at FUNCTION+0x... FILE:LINE", LINE that of FILE's SITE:FUNCTION mark
named() {
	line=$(site_line "$4" "$3")
	n=$(grep -c " $2 " "$5")
	good=$(grep " $2 " "$5" | grep -c " at $3+0x[0-9a-f]* $4:$line\$")
	[ "$n" -gt 0 ] && [ "$good" -eq "$n" ] && pass "$1 ($n events at $3, $4:$line)" ||
		fail "$1" "want $3 $4:$line: $(grep " $2 " "$5" | head -n 3)"
}

if [ ! -x "$SYM/sym_app" ] || ! "$PT" dump --help | grep -q -- --symfs; then
	skip "symbols: all checks" "no sym_app"
else
	# Root's dump reads a root log's files as nobody (the images' user
	# unknown, and never root): the directory must be theirs to search.
	chmod 755 "$T"
	cp "$SYM/sym_app" symapp
	"$PT" record -o sym.ptlog -- ./symapp "$SYM/sym_plugin.so" >symrec.txt 2>&1 &&
		pass "symbols: record a program, its library and a plug-in" ||
		fail "symbols: record a program, its library and a plug-in" "$(cat symrec.txt)"
	"$PT" dump sym.ptlog >symdump.txt 2>symerr.txt
	named "symbols: dump names the program's function and line" sym.app app_work app.c symdump.txt
	named "symbols: dump names the linked library's" sym.lib symlib_post symlib.c symdump.txt
	named "symbols: dump names the dlopen'd plug-in's" sym.plugin plugin_post plugin.c symdump.txt
	inl=$(site_line app.c app_inline)
	grep -q " sym.inl .* at main+0x[0-9a-f]* app.c:$inl, inlined app_inline\$" symdump.txt &&
		pass "symbols: an inlined function's event: the function it is in, its own line, its name" ||
		fail "symbols: an inlined function's event: the function it is in, its own line, its name" \
			"want app.c:$inl: $(grep ' sym.inl ' symdump.txt)"
	[ "$(grep -c ' sym.app ' symdump.txt)" -eq 4 ] &&
		pass "symbols: the program's event after the plug-in's dlclose is named too" ||
		fail "symbols: the program's event after the plug-in's dlclose is named too" "$(cat symdump.txt)"
	[ ! -s symerr.txt ] && pass "symbols: no note when every file is there" ||
		fail "symbols: no note when every file is there" "$(cat symerr.txt)"

	# Processes that share their files (docs/LOG-FORMAT.md, IMAGES_COMPACT:
	# each file described once per log, each process by ids and load
	# biases): three runs of the program with its library and plug-in, and
	# two of another program; every event still names its own site.
	"$PT" record -o symmany.ptlog -- sh -c './symapp "$1"; ./symapp "$1"; ./symapp "$1";
		"$2" sym.other; "$2" sym.other' sh "$SYM/sym_plugin.so" "$BUILD/tests/cli/ptemit" \
		>symmanyrec.txt 2>&1 ||
		fail "symbols: record processes that share files" "$(cat symmanyrec.txt)"
	"$PT" dump symmany.ptlog >symmany.txt 2>&1
	named "symbols: three runs of one program each name its function" sym.app app_work app.c symmany.txt
	named "symbols: ... its linked library's" sym.lib symlib_post symlib.c symmany.txt
	named "symbols: ... its dlopen'd plug-in's" sym.plugin plugin_post plugin.c symmany.txt
	[ "$(grep -c ' sym.app ' symmany.txt)" -eq 12 ] &&
		[ "$(grep -c ' sym.other .* at post+0x[0-9a-f]* ptemit.c:[0-9]*$' symmany.txt)" -eq 2 ] &&
		pass "symbols: every run's events are there, another program's named too" ||
		fail "symbols: every run's events are there, another program's named too" "$(cat symmany.txt)"

	"$PT" dump sym.ptlog --format json >symdump.jsonl 2>/dev/null
	has "symbols: dump json has site and source" \
		"\"site\":\"plugin_post+0x[0-9a-f]*\",\"source\":\"plugin.c:$(site_line plugin.c plugin_post)\"" symdump.jsonl

	"$PT" stats sym.ptlog >symstats.txt 2>&1
	sed -n '/^hottest call sites/,/^lost events/p' symstats.txt >symhot.txt
	[ "$(sed -n 2p symhot.txt | awk '{print $1, $3, $4}')" = "4 app_work+0x$(sed -n 2p symhot.txt | sed 's/.*app_work+0x\([0-9a-f]*\).*/\1/') (app.c:$(site_line app.c app_work))" ] &&
		grep -q "^  *4  *sym.app$" symhot.txt && grep -q "symlib_post+0x" symhot.txt &&
		pass "symbols: stats lists the hottest call site first, with its event types" ||
		fail "symbols: stats lists the hottest call site first, with its event types" "$(cat symhot.txt)"

	"$PT" convert sym.ptlog --to chrome sym.json 2>/dev/null
	has "symbols: chrome args carry the site" "\"site\":\"symlib_post+0x[0-9a-f]*\",\"source\":\"symlib.c:" sym.json
	chrome_valid "symbols: the chrome file with sites follows the format" sym.json
	if [ $have_bt = 1 ]; then
		"$PT" convert sym.ptlog --to ctf symctf 2>/dev/null
		babeltrace2 symctf >symbt.txt 2>&1
		has "symbols: CTF events carry site and source (babeltrace2)" \
			"site = \"app_work+0x[0-9a-f]*\", source = \"app.c:$(site_line app.c app_work)\"" symbt.txt
	else
		skip "symbols: CTF site" "no babeltrace2"
	fi

	# The program rebuilt after it was traced: not used, its build id named.
	want=$(readelf -n "$SYM/sym_app" 2>/dev/null | sed -n 's/.*Build ID: //p')
	cp "$SYM/sym_app_rebuilt" symapp
	"$PT" dump sym.ptlog >symre.txt 2>symreerr.txt
	! grep -q " sym.app .* at app_work" symre.txt && grep -q " sym.app .* at symapp+0x[0-9a-f]*$" symre.txt &&
		[ -n "$want" ] && grep -q "symapp: build id $want needed" symreerr.txt &&
		[ "$(wc -l <symreerr.txt)" -eq 1 ] &&
		pass "symbols: a rebuilt program is not used; one note names the build id needed" ||
		fail "symbols: a rebuilt program is not used; one note names the build id needed" \
			"want $want: $(cat symreerr.txt; grep ' sym.app ' symre.txt | head -n 2)"
	named "symbols: the library is still named beside the rebuilt program" sym.lib symlib_post symlib.c symre.txt
	mkdir -p "symfs$PWD" && cp "$SYM/sym_app" "symfs$PWD/symapp"
	"$PT" dump sym.ptlog --symfs symfs >symfs.txt 2>&1
	named "symbols: --symfs finds the program as it was" sym.app app_work app.c symfs.txt

	refused "symbols: --symbol-timeout 0 is a usage error" 2 "bad --symbol-timeout '0'" \
		"$PT" dump --symbol-timeout 0 sym.ptlog
	"$PT" stats --symbol-timeout 0.5 sym.ptlog >symto.txt 2>&1 && grep -q "symlib_post+0x" symto.txt &&
		pass "symbols: stats takes --symbol-timeout" ||
		fail "symbols: stats takes --symbol-timeout" "$(head -n 5 symto.txt)"
	"$PT" dump sym.ptlog --no-symbols >symno.txt 2>&1
	hasnt "symbols: --no-symbols shows no site" " at " symno.txt
	"$PT" record --no-images -o symnoimg.ptlog -- ./symapp "$SYM/sym_plugin.so" >/dev/null 2>&1
	"$PT" dump symnoimg.ptlog >symnoimg.txt 2>symnoimg.err
	! grep -q " at " symnoimg.txt && grep -q "the log holds no images" symnoimg.err &&
		pass "symbols: record --no-images: no sites, and a note says why" ||
		fail "symbols: record --no-images: no sites, and a note says why" "$(cat symnoimg.err; head -n 3 symnoimg.txt)"

	if [ "$(id -u)" = 0 ]; then
		# Root reading a log of user 65534 reads its files as 65534: a
		# file that user may not read gives no names, and a note that
		# tells nothing of the file (no owner, no size, no build id).
		cp "$SYM/sym_app" symapp
		chown 65534 sym.ptlog
		chown 1 symapp
		chmod 0700 symapp
		"$PT" dump sym.ptlog >symown.txt 2>symown.err
		! grep -q " at app_work" symown.txt && grep -q " at symapp+0x" symown.txt &&
			grep -q "symapp: no readable regular file there" symown.err &&
			! grep -q "uid\|bytes\|build id" symown.err &&
			pass "symbols: as root, a file the log's owner may not read is not used" ||
			fail "symbols: as root, a file the log's owner may not read is not used" "$(cat symown.err)"
		chown 65534 symapp
		"$PT" dump sym.ptlog >symown.txt 2>&1
		named "symbols: as root, a file of the log's owner is used" sym.app app_work app.c symown.txt
	else
		skip "symbols: owner checks" "not root"
	fi
fi
