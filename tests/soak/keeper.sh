#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak: the keeper's budgets against other users and the traced process at
# the sizes docs/SECURITY.md quotes ("The keeper pays for others only from a
# budget"), each with what it cost the keeper:
#  1. rendezvous: user B's chain of 1,000 processes floods the others socket
#     while the traced tree starts 200 children every 50 ms that can join only
#     through the rendezvous (t_isolation rendezvous_others_flood_costs_no_join:
#     joins, events, the keeper's CPU);
#  2. triggers: a writer posts its trigger every 256 events for a second
#     (t_trigger trigger_flood_is_held_off: snapshots, suppressed);
#  3. pid namespaces: a traced process in its own pid namespace starts a
#     traced process (that lives 300 ms) every millisecond (as fast as the
#     shell can) for
#     SECONDS while 2,000 sleep; the keeper's CPU over that time, read from
#     /proc/PID/stat; and t_pidmap's count of /proc scans with 2,000 sleepers;
#  4. the output queue: four streams over pipes nobody reads
#     (t_keeper output_queues_share_a_budget: the keepers' memory).
# Needs root (users, pid namespaces) and the tests built.  `make check` does
# not run this.  Usage: sh tests/soak/keeper.sh [BUILD_DIR [SECONDS]]
# PT_SOAK_PARTS (default "rendezvous triggers pidns queue") picks parts.
BUILD=${1:-build}
SECONDS_NS=${2:-10}
case $SECONDS_NS in *[!0-9]*|'') echo "usage: $0 [BUILD_DIR [SECONDS]]" >&2; exit 2;; esac
for p in t_isolation t_trigger t_keeper t_pidmap cli/ptemit; do
	[ -x "$BUILD/tests/$p" ] || { echo "no $BUILD/tests/$p: run make BUILD=$BUILD all tests" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "keeper soak: skipped (not root)"; exit 0; }
export PT_TEST_HELPERS="$BUILD/tests/helpers"
failed=0
PARTS=${PT_SOAK_PARTS:-rendezvous triggers pidns queue}
part() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }

run() { # NAME PROGRAM CASE: a case of a test program, its lines prefixed
	out=$(CK_RUN_CASE=$3 "$2" 2>&1); rc=$?
	printf '%s\n' "$out" | sed "s|^|[$1] |"
	printf '%s\n' "$out" | grep -q '^100%: Checks: [1-9]' || failed=$((failed + 1))
}

# CPU ticks (utime + stime) of a process; empty when gone.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}'; }

# 1. The chain is built one process after another: minutes under load.
part rendezvous && CK_TIMEOUT_MULTIPLIER=20 PT_SOAK_RDV_CHAIN=1000 PT_SOAK_RDV_CHILDREN=200 \
	run rendezvous "$BUILD/tests/t_isolation" others_flood
# 2.
part triggers && run triggers "$BUILD/tests/t_trigger" trigger
# 3. The keeper of `posixtrace record` over a tree in its own pid namespace
#    (the shell is its pid 1: when it exits, the kernel ends the sleepers).
pidns() {
tmp=$(mktemp -d /tmp/pt-soak-keeper.XXXXXX) || exit 1
emit=$(cd "$BUILD/tests/cli" && pwd)/ptemit
"$BUILD/posixtrace" record --no-images -o "$tmp/ns.log" -- unshare --pid --fork sh -c '
	i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); sleep 600 & done
	touch "$0/ready"; end=$(($(date +%s) + $2 + 1))
	while [ "$(date +%s)" -lt $end ]; do "$1" "ns.tick sleep=300 ns.tick" & sleep 0.001; done
	exit 0' \
	"$tmp" "$emit" "$SECONDS_NS" > "$tmp/record.out" 2>&1 &
record=$!
waited=0
while [ ! -e "$tmp/ready" ] && [ $waited -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
keeper=$(ps -eo pid=,ppid=,comm= | awk -v p=$record '$2 == p && $3 == "posixtrace-keep" {print $1}' | head -n 1)
before=$(cpu_ticks "$keeper"); t0=$(date +%s)
sleep "$SECONDS_NS"
after=$(cpu_ticks "$keeper"); t1=$(date +%s)
wait $record
hz=$(getconf CLK_TCK)
if [ -n "$keeper" ] && [ -n "$before" ] && [ -n "$after" ]; then
	echo "[pidns] keeper $keeper: $(( (after - before) * 100 / hz / (t1 - t0) )) % of a CPU over $((t1 - t0)) s (2,000 sleeping, a process started every ms at most)"
else
	echo "[pidns] the keeper was not found (record: $(tail -n 3 "$tmp/record.out"))"
	failed=$((failed + 1))
fi
PT_SOAK_PIDMAP_SLEEPERS=2000 run pidmap "$BUILD/tests/t_pidmap" pidmap
rm -rf "$tmp"
}
part pidns && pidns
# 4.
part queue && run queue "$BUILD/tests/t_keeper" queue
echo "keeper soak: $failed failed"
[ $failed -eq 0 ]
