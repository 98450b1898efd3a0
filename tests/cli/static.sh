# SPDX-License-Identifier: MIT
# Sourced by run.sh.  A program linked -static with libposixtrace.a shows no
# libposixtrace in its mappings: `attach` finds it the way `list` does (its
# control block, through the library), and records its events, live and
# into a log.  ptemit-static (the Makefile's CLI_STATIC) posts static:tick
# every 20 ms until static.stop exists, 30 s at most.
STATIC_EMIT=$BUILD/tests/cli/ptemit-static
if [ -x "$STATIC_EMIT" ]; then
	rm -f static.stop static.ptlog
	"$STATIC_EMIT" "until=static.stop,static:tick" >/dev/null 2>&1 & static_pid=$!; BG="$BG $static_pid"
	if wait_for 20 eval '"$PT" list '"$static_pid"' 2>/dev/null | grep -q static:tick'; then
		pass "static: list shows the static program and its event type"
		"$PT" attach $static_pid --duration 1 >static.live 2>static.err; rc=$?
		[ $rc -eq 0 ] && grep -q "static:tick" static.live && pass "static: attach records its events live" ||
			fail "static: attach records its events live" "exit $rc: $(cat static.err) $(head -n 3 static.live)"
		"$PT" attach $static_pid --duration 1 -o static.ptlog >/dev/null 2>static.err; rc=$?
		"$PT" dump static.ptlog >static.txt 2>&1 && [ $rc -eq 0 ] && grep -q "static:tick" static.txt &&
			pass "static: attach -o LOG records its events" ||
			fail "static: attach -o LOG records its events" "exit $rc: $(cat static.err) $(tail -n 3 static.txt)"
	else
		fail "static: list shows the static program and its event type" "$("$PT" list $static_pid 2>&1)"
	fi
	touch static.stop
	wait $static_pid 2>/dev/null
else
	fail "static: a program linked -static" "no $STATIC_EMIT (build the tests)"
fi
