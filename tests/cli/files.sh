#!/bin/sh
# SPDX-License-Identifier: MIT
# Isolation (item 6 of the isolation issue): every file the command writes
# is created 0600 (directories 0700) with O_EXCL, never through a symbolic
# link; an existing file is refused in one line unless --force, and even
# then only the caller's own regular file with no other link is replaced;
# the default log name, predictable, is never a trap.
# Sourced by tests/cli/run.sh (its helpers and variables).

mkdir files && cd files || exit 2
mode() { stat -c %a "$1"; }
"$PT" record -o new.ptlog -- "$FORKER" -n >/dev/null 2>&1
[ "$(mode new.ptlog)" = 600 ] && pass "files: a log is created 0600" || fail "files: a log is created 0600" "$(mode new.ptlog)"
(umask 0; "$PT" record -o open.ptlog -- "$FORKER" -n >/dev/null 2>&1)
[ "$(mode open.ptlog)" = 600 ] && pass "files: 0600 whatever the umask" || fail "files: 0600 whatever the umask" "$(mode open.ptlog)"
echo precious >mine.ptlog
refused "files: record -o of an existing file refused without --force" 1 "exists; not overwriting it without --force" \
	"$PT" record -o mine.ptlog -- "$FORKER" -n
[ "$(cat mine.ptlog)" = precious ] && pass "files: the refused file is untouched" || fail "files: the refused file is untouched"
"$PT" record -o mine.ptlog --force -- "$FORKER" -n >/dev/null 2>&1 && "$PT" dump mine.ptlog >/dev/null 2>&1 &&
	pass "files: --force replaces the caller's own file" || fail "files: --force replaces the caller's own file"
echo secret >victim; chmod 600 victim
ln -s victim link.ptlog
refused "files: a symbolic link is never followed" 1 "symbolic link" "$PT" record -o link.ptlog --force -- "$FORKER" -n
ln victim hard.ptlog
refused "files: a file with another hard link is not replaced" 1 "hard links" "$PT" record -o hard.ptlog --force -- "$FORKER" -n
mkfifo fifo.ptlog
refused "files: a FIFO is not a log file (- is for pipes)" 1 "not a regular file" "$PT" record -o fifo.ptlog --force -- "$FORKER" -n
[ "$(cat victim)" = secret ] && pass "files: the link targets are untouched" || fail "files: the link targets are untouched"
if [ "$(id -u)" = 0 ]; then
	echo theirs >other.ptlog; chown 65534 other.ptlog
	refused "files: another user's file is not replaced, even with --force" 1 "belongs to another user" \
		"$PT" record -o other.ptlog --force -- "$FORKER" -n
	[ "$(cat other.ptlog)" = theirs ] && pass "files: another user's file is untouched" ||
		fail "files: another user's file is untouched"
else
	skip "files: another user's file" "needs root to make one"
fi

# the default name: a trap laid for it (a link named after the next pids)
# is passed over, the log goes to another name
last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null)
if [ -n "$last" ] && [ -n "$EMIT" ] && [ $have_python = 1 ]; then
	mkdir trap && cd trap || exit 2
	# the machine may start other processes meanwhile: a wide trap
	python3 -c '
import os, sys
for pid in range(int(sys.argv[1]) + 1, int(sys.argv[1]) + 5001):
    os.symlink("../victim", "posixtrace-ptemit-%d.ptlog" % pid)' "$last"
	"$PT" record -- "$EMIT" one >/dev/null 2>rec.err; rc=$?
	log=$(ls posixtrace-ptemit-*-1.ptlog 2>/dev/null)
	if [ $rc -eq 0 ] && [ -n "$log" ] && [ "$(cat ../victim)" = secret ] && [ -f "$log" ] && [ ! -L "$log" ]; then
		pass "files: a taken default name is passed over"
	elif [ $rc -eq 0 ] && [ -z "$log" ] && [ "$(cat ../victim)" = secret ]; then
		skip "files: a taken default name is passed over" "the command's pid fell outside the trap ($(cat rec.err))"
	else
		fail "files: a taken default name is passed over" "exit $rc: $(cat rec.err); $(ls | grep -v -- '-[0-9]*.ptlog$')"
	fi
	[ "$(cat ../victim)" = secret ] && pass "files: the default name never writes through a trap" ||
		fail "files: the default name never writes through a trap"
	cd ..
else
	skip "files: default name trap" "no ns_last_pid, ptemit or python3"
fi

# attach -o
"$FORKER" -n -t 1 -r 400 -s 20 >/dev/null & tgt=$!; BG="$BG $tgt"
wait_for 10 grep -q libposixtrace /proc/$tgt/maps 2>/dev/null
refused "files: attach -o of an existing file refused" 1 "without --force" "$PT" attach $tgt --duration 0.2 -o mine.ptlog
refused "files: attach -o through a link refused" 1 "symbolic link" "$PT" attach $tgt --duration 0.2 -o link.ptlog --force
"$PT" attach $tgt --duration 0.3 -o att.ptlog >/dev/null 2>&1
[ "$(mode att.ptlog)" = 600 ] && pass "files: attach creates its log 0600" || fail "files: attach creates its log 0600" "$(mode att.ptlog)"
kill $tgt 2>/dev/null; wait $tgt 2>/dev/null

# convert: Chrome files and CTF directories
"$PT" convert ../fork.ptlog --to chrome out.json 2>/dev/null
[ "$(mode out.json)" = 600 ] && pass "files: a chrome file is created 0600" || fail "files: a chrome file is created 0600" "$(mode out.json)"
refused "files: convert to an existing chrome file refused" 1 "without --force" "$PT" convert ../fork.ptlog --to chrome out.json
ok "files: convert --force replaces one's own chrome file" "$PT" convert ../fork.ptlog --to chrome --force out.json
refused "files: convert through a link refused" 1 "symbolic link" "$PT" convert ../fork.ptlog --to chrome --force link.ptlog
"$PT" convert ../fork.ptlog --to ctf ctf 2>/dev/null
[ "$(mode ctf)" = 700 ] && [ "$(mode ctf/metadata)" = 600 ] && [ "$(mode ctf/stream_0)" = 600 ] &&
	pass "files: a CTF directory is 0700, its files 0600" || fail "files: a CTF directory is 0700, its files 0600" "$(ls -la ctf)"
refused "files: convert into an existing CTF directory refused" 1 "without --force" "$PT" convert ../fork.ptlog --to ctf ctf
ok "files: --force replaces an earlier CTF conversion" "$PT" convert ../fork.ptlog --to ctf --force ctf
if [ $have_bt = 1 ]; then
	"$PT" convert ../loop.ptlog --to ctf --force ctf 2>/dev/null
	[ "$(babeltrace2 ctf 2>/dev/null | wc -l)" -eq "$("$PT" dump ../loop.ptlog | grep -c '^[-+]')" ] &&
		pass "files: a replaced CTF directory holds only the new trace" || fail "files: a replaced CTF directory holds only the new trace"
fi
echo mine >ctf/notes.txt
refused "files: a directory with other files is not emptied, even with --force" 1 "did not write" \
	"$PT" convert ../fork.ptlog --to ctf --force ctf
[ -f ctf/notes.txt ] && pass "files: the other file is untouched" || fail "files: the other file is untouched"
mkdir realdir; ln -s realdir linkdir
refused "files: a CTF directory through a link refused" 1 "symbolic link" "$PT" convert ../fork.ptlog --to ctf --force linkdir
[ -z "$(ls realdir)" ] && pass "files: nothing written through the link" || fail "files: nothing written through the link"
cd ..
