#!/bin/sh
# SPDX-License-Identifier: MIT
# posixtrace archive: the files a log's call sites need, by build id, in
# the --symfs layout.  A program and its plug-in recorded, archived as a
# directory and as a tar file, then moved away: dump --symfs ARCHIVE (the
# tar extracted with tar -x) still names their call sites.  A stripped
# program whose debug file its .gnu_debuglink names: the debug file is in
# the archive (.build-id/xx/rest.debug), and names come back after both
# are gone.  --max-size leaves files out, with a note.  (The attacks: a
# log naming files its writer may not read, t_symproc
# archive_copies_what_the_claimant_may_read.)
# Sourced by tests/cli/run.sh (its helpers and variables).

SYMS=$BUILD/tests/cli/sym
if [ ! -x "$SYMS/sym_app" ] || ! "$PT" archive --help >/dev/null 2>&1; then
	skip "archive: all checks" "no sym_app or no archive command"
else
	chmod 755 "$T"
	mkdir -p arch && chmod 755 arch
	cp "$SYMS/sym_app" arch/symapp
	cp "$SYMS/sym_plugin.so" arch/plugin.so
	"$PT" record -o arch.ptlog -- arch/symapp "$T/arch/plugin.so" >/dev/null 2>&1
	# anamed NAME DUMP: the program's and the plug-in's events named
	anamed() {
		la=$(grep -n "SITE:app_work" "$ROOT/tests/cli/sym/app.c" | cut -d: -f1)
		lp=$(grep -n "SITE:plugin_post" "$ROOT/tests/cli/sym/plugin.c" | cut -d: -f1)
		if [ "$(grep -c " sym.app .* at app_work+0x[0-9a-f]* app.c:$la\$" "$2")" -eq 4 ] &&
			grep -q " sym.plugin .* at plugin_post+0x[0-9a-f]* plugin.c:$lp\$" "$2"; then
			pass "$1"
		else
			fail "$1" "$(grep ' sym\.' "$2" | head -n 3)"
		fi
	}
	"$PT" archive arch.ptlog archdir >arch.out 2>arch.err && pass "archive: into a directory" ||
		fail "archive: into a directory" "$(cat arch.err)"
	has "archive: says what it copied" "archive archdir: [1-9][0-9]* files" arch.err
	"$PT" archive arch.ptlog arch.tar 2>archtar.err && pass "archive: into a tar file" ||
		fail "archive: into a tar file" "$(cat archtar.err)"
	idapp=$(readelf -n arch/symapp 2>/dev/null | sed -n 's/.*Build ID: //p')
	if [ -n "$idapp" ]; then
		f=archdir/.build-id/$(echo "$idapp" | cut -c1-2)/$(echo "$idapp" | cut -c3-)
		cmp -s "$f" arch/symapp && pass "archive: the program under .build-id/xx/rest, as it is" ||
			fail "archive: the program under .build-id/xx/rest, as it is" "$(find archdir -type f)"
	fi
	mv arch/symapp arch/symapp.moved
	mv arch/plugin.so arch/plugin.moved
	"$PT" dump arch.ptlog >archgone.txt 2>/dev/null
	! grep -q " at app_work" archgone.txt && pass "archive: without the files, no names" ||
		fail "archive: without the files, no names" "$(grep ' sym.app ' archgone.txt | head -n 2)"
	"$PT" dump arch.ptlog --symfs archdir >archdump.txt 2>archdump.err
	anamed "archive: dump --symfs DIR names the call sites after the files are gone" archdump.txt
	mkdir -p untar && (cd untar && tar -xf ../arch.tar) 2>untar.err &&
		pass "archive: tar -x reads the tar file" || fail "archive: tar -x reads the tar file" "$(cat untar.err)"
	chmod -R a+rX untar
	"$PT" dump arch.ptlog --symfs untar >archtar.txt 2>/dev/null
	anamed "archive: dump --symfs EXTRACTED names them from the tar file" archtar.txt
	"$PT" archive arch.ptlog archnone 2>archnone.err
	# the library the program links stayed where it was
	grep -q "archive archnone: 1 files" archnone.err && grep -q "symapp: no readable regular file" archnone.err &&
		grep -q "plugin.so: no readable regular file" archnone.err &&
		pass "archive: files gone are not copied, a note for each" ||
		fail "archive: files gone are not copied, a note for each" "$(cat archnone.err)"
	mv arch/symapp.moved arch/symapp
	mv arch/plugin.moved arch/plugin.so
	"$PT" archive arch.ptlog archsmall --max-size 20K 2>archsmall.err
	n=$(find archsmall -type f | wc -l)
	[ "$n" -ge 1 ] && [ "$(du -sb archsmall | cut -f1)" -le 40960 ] &&
		grep -q "files left out past --max-size (20480 bytes)" archsmall.err &&
		pass "archive: --max-size bounds the bytes copied ($n files)" ||
		fail "archive: --max-size bounds the bytes copied" "$n files; $(cat archsmall.err)"
	refused "archive: an existing directory is not written into" 1 "exists" "$PT" archive arch.ptlog archdir

	# the debug file a stripped program's .gnu_debuglink names goes in too
	if command -v objcopy >/dev/null 2>&1; then
		mkdir -p archdl && chmod 755 archdl
		cp "$SYMS/sym_app" archdl/symapp
		(cd archdl && objcopy --only-keep-debug symapp symapp.debug &&
			objcopy --strip-all --add-gnu-debuglink=symapp.debug symapp) 2>/dev/null
		chmod 644 archdl/symapp.debug
		"$PT" record -o archdl.ptlog -- archdl/symapp "$T/arch/plugin.so" >/dev/null 2>&1
		"$PT" archive archdl.ptlog archdldir 2>/dev/null
		ls archdldir/.build-id/*/*.debug >/dev/null 2>&1 &&
			pass "archive: a debuglink's debug file is archived as .build-id/xx/rest.debug" ||
			fail "archive: a debuglink's debug file is archived as .build-id/xx/rest.debug" "$(find archdldir -type f)"
		rm -f archdl/symapp archdl/symapp.debug
		"$PT" dump archdl.ptlog --symfs archdldir >archdl.txt 2>/dev/null
		la=$(grep -n "SITE:app_work" "$ROOT/tests/cli/sym/app.c" | cut -d: -f1)
		[ "$(grep -c " sym.app .* at app_work+0x[0-9a-f]* app.c:$la\$" archdl.txt)" -eq 4 ] &&
			pass "archive: a stripped program and its debug file, both gone, named from the archive" ||
			fail "archive: a stripped program and its debug file, both gone, named from the archive" "$(grep ' sym.app ' archdl.txt | head -n 2)"
	else
		skip "archive: debuglink" "no objcopy"
	fi
fi
