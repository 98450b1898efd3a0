#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 10: help texts and the man page say what the code does: every option
# a --help lists is accepted by that command and is in the man page, every
# option of the man page is in some --help, and what convert writes is
# described as it is (one CTF stream file per writer thread).
# Sourced by tests/cli/run.sh (its helpers and variables).

MAN=$ROOT/docs/posixtrace.1
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN" >man.txt
"$PT" --help >main-help.txt
for c in record attach dump stats convert archive export; do
	grep -q "^  $c " main-help.txt || fail "help: posixtrace --help lists $c"
	"$PT" $c --help >h-$c.txt 2>&1
	grep -o -- '--[a-z][a-z-]*' h-$c.txt | sort -u >opts-$c.txt
	bad=""
	for opt in $(cat opts-$c.txt); do
		"$PT" $c $opt </dev/null >/dev/null 2>opt.err
		grep -q "unknown option" opt.err && bad="$bad $opt"
	done
	[ -z "$bad" ] && pass "help: every option in '$c --help' is accepted" ||
		fail "help: every option in '$c --help' is accepted" "refused:$bad"
	missing=""
	for opt in $(cat opts-$c.txt); do grep -q -- "$opt" man.txt || missing="$missing $opt"; done
	[ -z "$missing" ] && pass "help: every option in '$c --help' is in the man page" ||
		fail "help: every option in '$c --help' is in the man page" "missing:$missing"
done
cat opts-*.txt | sort -u >all-opts.txt
missing=""
# the man page's options are the tags of its .TP paragraphs
for opt in $(awk '/^\.TP/ { getline; print }' man.txt | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -qx -- "$opt" all-opts.txt || missing="$missing $opt"
done
[ -z "$missing" ] && pass "help: every option of the man page is in some --help" ||
	fail "help: every option of the man page is in some --help" "not in any --help:$missing"
has "help: convert --help: one CTF stream file per writer thread" "stream file per writer thread" h-convert.txt
hasnt "help: convert --help: no 'instant events' only for chrome" "(instant events)" h-convert.txt
has "help: convert --help: begin/end pairs" "NAME_begin" h-convert.txt
has "help: dump --help: - is standard input" "standard input" h-dump.txt
has "help: record --help: -o - and the minimum size" "at least 4K" h-record.txt
has "help: attach --help: children" "children" h-attach.txt
for c in dump stats convert archive; do
	has "help: $c --help: exit status 3" "3 if the log is damaged" h-$c.txt
done
has "help: the man page documents exit status 3" "^\.B 3$" man.txt
"$PT" --version >ver.txt && grep -q "^posixtrace [0-9]*\.[0-9]*\.[0-9]*$" ver.txt &&
	pass "help: --version" || fail "help: --version" "$(cat ver.txt)"
