#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every test program (each test inside it is forked with a timeout by
# Check) and the command's checks (cli), and ends with one summary line:
# "N passed, N failed".
# Usage: BUILD=build sh tests/run.sh [-j JOBS] [NAME...]   (NAME: t_attr, ..., cli)
# Programs run JOBS at a time (-j, else $PT_JOBS, else the number of CPUs):
# much of the suite's time is spent waiting (sleeps, children, timeouts).
# Each program's output is kept apart and printed whole, in the order of the
# names, once it and those before it have ended.  The programs in SERIAL
# run alone, before the others.  PT_RUN_TIMES=1: each program's wall time
# is printed after its output.
BUILD=${BUILD:-build}

# Programs that must not run beside others: they create users (t_isolation,
# t_symproc, t_images: useradd locks /etc/passwd), count jumps per second
# and time a shutdown (t_sigjump), plant objects in /dev/shm that
# t_xproc counts (t_isolation), take a pid back through ns_last_pid
# (t_xproc), start thousands of processes in seconds (t_workload), which
# would use up the pids another check predicts (cli's files.sh), or bound
# a timestamp against the clocks read around it and wait at most 5 s for
# another process's events (t_clock: under ASan beside others it once
# gave up at 1144 of 1500), or take timer signals at 50 kHz (t_signal:
# under ASan beside another program a handler outlasts the 20 us period,
# the next signal is already pending, and the loop never runs again
# before the test's timeout).
SERIAL="t_isolation t_symproc t_images t_sigjump t_xproc t_workload t_clock t_signal"
# Started first among the others: the longest (as PT_RUN_TIMES=1 showed
# them), so that the last to end does not begin late.
LONGEST="t_keeper cli t_consumerbounds t_wlthreads t_toolbounds t_log t_logdamage t_logsec"

jobs=${PT_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
if [ "$1" = -j ]; then jobs=$2; shift 2; fi
case $jobs in ''|*[!0-9]*|0) echo "run.sh: -j needs a number of jobs above 0" >&2; exit 2 ;; esac

# Counts of checks run before this script (make check's script checks).
passed=${PT_EXTRA_PASSED:-0}; failed=${PT_EXTRA_FAILED:-0}; broken=""
# Each failed test's own line, repeated before the summary so that a log's
# tail names what failed.
failures=""
if [ $# -gt 0 ]; then
	names="$*"
else
	names="$(for p in "$BUILD"/tests/t_*; do [ -x "$p" ] && basename "$p"; done) cli"
fi
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-20}
export PT_TEST_HELPERS="$BUILD/tests/helpers"

out_dir=$(mktemp -d "${TMPDIR:-/tmp}/pt-run.XXXXXX") || exit 2
pids=""
stop() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$out_dir"; }
trap stop EXIT
trap 'exit 130' INT TERM

in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

# Runs one program (or cli) to its end: its output in NAME.out, then its
# exit status in NAME.rc (written last, whole).
run_one() {
	t0=$(date +%s)
	if [ "$1" = cli ]; then sh tests/cli/run.sh "$BUILD"; else "$BUILD/tests/$1"; fi \
		> "$out_dir/$1.out" 2>&1
	rc=$?
	[ -n "$PT_RUN_TIMES" ] && echo "$1: $(($(date +%s) - t0)) s" >> "$out_dir/$1.out"
	echo $rc > "$out_dir/$1.rc.new" && mv "$out_dir/$1.rc.new" "$out_dir/$1.rc"
}

# The counts of a Check program's output.
count_program() { # NAME RC
	bad=$(grep -E ':[0-9]+:[FE]:' "$out_dir/$1.out" | sed "s|^|[$1] |")
	[ -n "$bad" ] && failures="$failures$bad
"
	line=$(grep -E '^[0-9]+%: Checks: ' "$out_dir/$1.out" | tail -n 1)
	if [ -z "$line" ]; then
		failed=$((failed + 1)); broken="$broken $1"; return
	fi
	set -- "$1" "$2" $(printf '%s' "$line" |
		sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/')
	passed=$((passed + $3 - $4 - $5)); failed=$((failed + $4 + $5))
	[ "$2" -ne 0 ] && [ $(($4 + $5)) -eq 0 ] && { failed=$((failed + 1)); broken="$broken $1"; }
}

# The counts of the command's checks (a shell script with its own count).
count_cli() { # RC
	bad=$(grep -E '^FAIL' "$out_dir/cli.out" | sed "s|^|[cli] |")
	[ -n "$bad" ] && failures="$failures$bad
"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out_dir/cli.out" | tail -n 1)
	if [ -z "$line" ]; then
		failed=$((failed + 1)); broken="$broken cli"; return
	fi
	set -- "$1" $line
	passed=$((passed + $2)); failed=$((failed + $4))
	[ "$1" -ne 0 ] && [ "$4" -eq 0 ] && { failed=$((failed + 1)); broken="$broken cli"; }
}

# (The functions' variables have names of their own: sh has no locals.)
# Prints and counts, in the order of the names, every program that has
# ended and has no unfinished one before it.
to_print=$names
print_ended() {
	for p_name in $to_print; do
		[ -f "$out_dir/$p_name.rc" ] || return 0
		sed "s|^|[$p_name] |" "$out_dir/$p_name.out"
		p_rc=$(cat "$out_dir/$p_name.rc")
		if [ "$p_name" = cli ]; then count_cli "$p_rc"; else count_program "$p_name" "$p_rc"; fi
		to_print=${to_print#*"$p_name"}
	done
}

running() { # how many started programs have not ended
	ended=0
	for r_name in $started; do [ -f "$out_dir/$r_name.rc" ] && ended=$((ended + 1)); done
	echo $(($(echo $started | wc -w) - ended))
}

# The serial programs first, one at a time; then the others, the longest
# first, JOBS at a time (with one job: in the order given).
started=""
for n in $names; do
	in_list "$n" "$SERIAL" || continue
	run_one "$n"; started="$started $n"; print_ended
done
if [ "$jobs" -eq 1 ]; then
	order=$names
else
	order="$(for n in $LONGEST; do in_list "$n" "$names" && echo "$n"; done) $names"
fi
for n in $order; do
	in_list "$n" "$SERIAL $started" && continue
	while [ "$(running)" -ge "$jobs" ]; do
		print_ended
		sleep 0.2
	done
	run_one "$n" &
	pids="$pids $!"; started="$started $n"
done
wait
pids=""
print_ended
[ -n "$failures" ] && printf 'failed:\n%s' "$failures"
[ -n "$broken" ] && echo "programs that did not finish cleanly:$broken"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
