#!/bin/sh
# SPDX-License-Identifier: MIT
# Item 9: names a traced program chooses are printed escaped.  A program
# whose name (its comm) and event name hold terminal commands and a newline
# followed by a forged line: `list` and `attach`'s text output show them as
# \xHH escapes, never raw (dump and stats of such a log: tests/t_logsec.c).
# Sourced by tests/cli/run.sh (its helpers and variables).

# clean NAME FILE: no control character but the newlines, no forged line
clean() {
	if LC_ALL=C grep -q '[[:cntrl:]]' "$2" || grep -q '^FAKE' "$2" || [ ! -s "$2" ]; then
		fail "$1" "$(od -c "$2" | head -n 8)"
	else
		pass "$1"
	fi
}
if [ -n "$EMIT" ]; then
	mkdir hostile && cd hostile || exit 2
	evil_exe=$(printf 'x\033[2J\033]0;t\007')
	evil_name=$(printf 'e\033]0;owned\007\nFAKE')
	ln -s "$EMIT" "./$evil_exe"
	rm -f go ready
	"./$evil_exe" "ready=ready until=go,$evil_name" >/dev/null 2>&1 & prog=$!; BG="$BG $prog"
	wait_for 10 test -e ready
	wait_for 10 sh -c "\"$PT\" list $prog | grep -q 'FAKE'"
	"$PT" list $prog >list.txt 2>&1
	clean "hostile: list escapes a process's name and its event names" list.txt
	grep -q 'x\\x1b\[2J' list.txt && grep -q 'e\\x1b]0;owned\\x07\\x0aFAKE' list.txt &&
		pass "hostile: list shows the escapes" || fail "hostile: list shows the escapes" "$(cat list.txt)"
	"$PT" attach $prog --duration 0.5 >att.txt 2>att.err
	clean "hostile: attach's text output escapes names" att.txt
	grep -q 'e\\x1b]0;owned\\x07\\x0aFAKE' att.txt &&
		pass "hostile: attach shows the escaped event name" ||
		fail "hostile: attach shows the escaped event name" "$(head -n 3 att.txt)"
	touch go; wait $prog
	cd ..
else
	skip "hostile: list and attach escape names" "no ptemit"
fi
