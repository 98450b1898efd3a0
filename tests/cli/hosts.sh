#!/bin/sh
# SPDX-License-Identifier: MIT
# Several hosts' logs read as one (README, "Several hosts"; LOG-FORMAT.md,
# host record).  Two logs recorded at once in two UTS namespaces (two host
# names) and two pid namespaces (the same pids on both), by programs whose
# events interleave in a known order (each waits for the other's file:
# a1 b1 a2 b2 a3, each inside a pair q_begin .. q_end of its host); then:
# - dump, dump --format json, stats and convert --to chrome, perfetto and
#   ctf give the events of both in exactly that order; the header says
#   each log's host and that the order is exact (one boot: CLOCK_MONOTONIC);
#   the processes of one pid on the two hosts stay apart (dump's host
#   column, stats' rows and counts per host, Chrome's and Perfetto's pids and
#   process names, a CTF trace per host with its hostname, stats --per-thread
#   rows of the pairs);
# - a copy of one log with its realtime times moved by +10 s (a clock
#   stepped between two recordings of one boot) still merges in the true
#   order, its times on the first log's scale (CLOCK_MONOTONIC);
# - a copy of one log shifted by +10 s to play another host whose clock is
#   off (tests/helpers/ptlogshift.c) merges in the order its clock says,
#   with the uncertainty stated (the sum of the two maxerror, or
#   unsynchronised), and --clock-offset HOST=-10s puts it back in the true
#   order; an offset for a host no log names is refused;
# - a log of version 4 reads as host unknown, and the order's uncertainty
#   is unknown;
# - a host record with a hostile name (escape sequences, a path) is
#   printed escaped and makes no directory outside convert's;
# - export --otlp of two logs sets host.name per log from its host record;
#   record --otlp (sending while recording) each file's, with its host.id.
# Needs root and unshare(1) (UTS and pid namespaces); says SKIP otherwise.
# Sourced by tests/cli/run.sh (its helpers and variables).

SHIFT=$BUILD/tests/helpers/ptlogshift
if [ "$(id -u)" != 0 ] || [ -z "$EMIT" ] || [ ! -x "$SHIFT" ] ||
	! unshare --uts --pid --fork --mount-proc true 2>/dev/null; then
	skip "hosts: logs of two hosts read as one" "needs root, unshare and ptemit"
else
	rm -f hs.s1 hs.s2 hs.s3 hs.s4
	unshare --uts --pid --fork --mount-proc sh -c "hostname hosta &&
		'$PT' record -o hs_a.ptlog -- '$EMIT' 'q_begin a1 ready=hs.s1 wait=hs.s2 a2 ready=hs.s3 wait=hs.s4 a3 q_end'" \
		>hs_a.out 2>&1 & hs_pa=$!
	unshare --uts --pid --fork --mount-proc sh -c "hostname hostb &&
		'$PT' record -o hs_b.ptlog -- '$EMIT' 'wait=hs.s1 q_begin b1 ready=hs.s2 wait=hs.s3 b2 q_end ready=hs.s4'" \
		>hs_b.out 2>&1 & hs_pb=$!
	BG="$BG $hs_pa $hs_pb"
	wait $hs_pa $hs_pb
	HS_ORDER="a1 b1 a2 b2 a3"
	# user events' names in the order a command printed them
	hs_order() { grep -o "$1" "$2" | sed "$3" | tr '\n' ' ' | sed 's/ $//'; }

	"$PT" dump hs_a.ptlog hs_b.ptlog --no-symbols >hs_dump.txt 2>&1
	got=$(hs_order '"[ab][0-9]"$' hs_dump.txt 's/"//g')
	[ "$got" = "$HS_ORDER" ] && pass "hosts: dump merges two hosts' logs in the order they happened" ||
		fail "hosts: dump merges two hosts' logs in the order they happened" "got '$got': $(cat hs_a.out hs_b.out hs_dump.txt | head -30)"
	has "hosts: dump's header names each log's host" "^# log hs_b.ptlog: host hostb" hs_dump.txt
	has "hosts: logs of one boot order exactly (CLOCK_MONOTONIC)" "^# order: exact" hs_dump.txt
	pa=$(grep ' hosta .*"a1"$' hs_dump.txt | awk '{print $4}')
	pb=$(grep ' hostb .*"b1"$' hs_dump.txt | awk '{print $4}')
	[ -n "$pa" ] && [ "$pa" = "$pb" ] && pass "hosts: the two programs have one pid ($pa), each on its host" ||
		fail "hosts: the two programs have one pid, each on its host" "pids '$pa' '$pb'"

	"$PT" dump hs_a.ptlog hs_b.ptlog --no-symbols --format json >hs_dump.jsonl 2>&1
	got=$(hs_order '"host":"host[ab]".*"name":"[ab][0-9]"' hs_dump.jsonl 's/"host":"host\(.\)".*"name":"\(..\)"/\1:\2/')
	[ "$got" = "a:a1 b:b1 a:a2 b:b2 a:a3" ] && head -n 1 hs_dump.jsonl | grep -q '"order":"exact"' &&
		pass "hosts: dump --format json, the hosts first, each event's host" ||
		fail "hosts: dump --format json, the hosts first, each event's host" "got '$got': $(head -n 2 hs_dump.jsonl)"

	"$PT" stats hs_a.ptlog hs_b.ptlog --no-symbols >hs_stats.txt 2>&1
	n=$(grep -c "host host[ab] pid $pa thread" hs_stats.txt)
	[ "$n" = 2 ] && pass "hosts: stats keeps one pid on two hosts apart" ||
		fail "hosts: stats keeps one pid on two hosts apart" "$(cat hs_stats.txt)"
	sed -n '/^events by host:/,/^events by process/p' hs_stats.txt >hs_perhost.txt
	grep -q '^ *9  hosta$' hs_perhost.txt && grep -q '^ *8  hostb$' hs_perhost.txt &&
		pass "hosts: stats counts events per host" || fail "hosts: stats counts events per host" "$(cat hs_stats.txt)"
	grep -q '^ *1  b1$' hs_stats.txt && grep -q '^ *2  posix_trace_start$' hs_stats.txt &&
		grep -q '^ *2  q_begin$' hs_stats.txt &&
		pass "hosts: stats counts types by name across the logs" ||
		fail "hosts: stats counts types by name across the logs" "$(cat hs_stats.txt)"
	"$PT" stats hs_a.ptlog hs_b.ptlog --no-symbols --per-thread >hs_statt.txt 2>&1
	[ "$(grep -c "^  q (host host[ab] pid $pa thread 0x[0-9a-f]*): 1," hs_statt.txt)" = 2 ] &&
		pass "hosts: stats --per-thread pairs each host's begin and end apart" ||
		fail "hosts: stats --per-thread pairs each host's begin and end apart" "$(grep -A3 '^durations' hs_statt.txt)"

	if "$PT" convert hs_a.ptlog hs_b.ptlog --to chrome hs.json --no-symbols 2>hs_chrome.err &&
		[ $have_python = 1 ]; then
		chrome_valid "hosts: chrome output of two hosts follows the format's rules" hs.json
		got=$(python3 - hs.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("ph") == "i" and e["name"][0] in "ab"]
ev.sort(key=lambda e: e["ts"])
names = {(e["pid"]): e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
print(" ".join(e["name"] for e in ev), "|", " ".join(sorted(set(names[e["pid"]].split(":")[0] + "=" + str(e["pid"]) for e in ev))))
PY
)
		case $got in
		"$HS_ORDER | hosta=$pa hostb="*)
			[ "${got##*hostb=}" != "$pa" ] && pass "hosts: chrome, the same order and a process group per host ($got)" ||
				fail "hosts: chrome, a process group per host" "$got" ;;
		*) fail "hosts: chrome, the same order and a process group per host" "$got" ;;
		esac
	else
		skip "hosts: chrome" "convert failed or no python3: $(cat hs_chrome.err)"
	fi

	if command -v protoc >/dev/null 2>&1; then
		"$PT" convert hs_a.ptlog hs_b.ptlog --to perfetto hs.pf --no-symbols 2>/dev/null
		protoc --decode=perfetto.protos.Trace --proto_path="$ROOT/tests/perfetto" \
			"$ROOT/tests/perfetto/trace_subset.proto" <hs.pf >hs_pf.txt 2>&1
		got=$(hs_order '^    name: "[ab][0-9]"$' hs_pf.txt 's/.*"\(..\)"/\1/')
		# "PID NAME" of each process descriptor
		grep -A1 '^      pid:' hs_pf.txt | grep -v '^--' | paste - - |
			sed 's/^ *pid: \([0-9]*\)[[:space:]]*process_name: "\(.*\)"$/\1 \2/' >hs_pf_procs.txt
		np=$(grep -c -e "^$pa hosta: ptemit\$" -e "^$((pa + 4194304)) hostb: ptemit\$" hs_pf_procs.txt)
		[ "$got" = "$HS_ORDER" ] && [ "$np" = 2 ] &&
			pass "hosts: perfetto, the same order and a process per host and pid" ||
			fail "hosts: perfetto, the same order and a process per host and pid" "got '$got', $np named: $(grep -A1 '^      pid:' hs_pf.txt | head -20)"
	else
		skip "hosts: perfetto" "no protoc"
	fi

	if command -v babeltrace2 >/dev/null 2>&1; then
		rm -rf hs_ctf
		"$PT" convert hs_a.ptlog hs_b.ptlog --to ctf hs_ctf --no-symbols 2>/dev/null
		babeltrace2 hs_ctf >hs_bt.txt 2>&1
		got=$(grep -o ' host[ab] [ab][0-9]:' hs_bt.txt | sed 's/ host\(.\) \(..\):/\1:\2/' | tr '\n' ' ' | sed 's/ $//')
		[ "$got" = "a:a1 b:b1 a:a2 b:b2 a:a3" ] && [ -d hs_ctf/host1-hosta ] && [ -d hs_ctf/host2-hostb ] &&
			pass "hosts: ctf, a trace per host with its hostname, babeltrace2 merges them in order" ||
			fail "hosts: ctf, a trace per host with its hostname, babeltrace2 merges them in order" "got '$got': $(ls hs_ctf; head -c 600 hs_bt.txt)"
	else
		skip "hosts: ctf" "no babeltrace2"
	fi

	# the same boot, its realtime clock stepped 10 s between the two
	# recordings: CLOCK_MONOTONIC still orders them, on the first's scale
	"$SHIFT" hs_b.ptlog hs_bstep.ptlog 10 2>/dev/null
	"$PT" dump hs_a.ptlog hs_bstep.ptlog --no-symbols >hs_step.txt 2>&1
	got=$(hs_order '"[ab][0-9]"$' hs_step.txt 's/"//g')
	b1a=$(grep '"b1"$' hs_dump.txt | awk '{print $2}')
	b1s=$(grep '"b1"$' hs_step.txt | awk '{print $2}')
	[ "$got" = "$HS_ORDER" ] && [ -n "$b1a" ] && [ "$b1a" = "$b1s" ] && grep -q '^# order: exact' hs_step.txt &&
		pass "hosts: logs of one boot order by CLOCK_MONOTONIC though realtime was stepped between them" ||
		fail "hosts: logs of one boot order by CLOCK_MONOTONIC though realtime was stepped between them" "got '$got', b1 at '$b1a' and '$b1s': $(head -4 hs_step.txt)"

	# another host, its clock 10 s ahead; both clocks synchronised
	"$SHIFT" hs_a.ptlog hs_as.ptlog 0 --maxerror 2000 2>/dev/null
	"$SHIFT" hs_b.ptlog hs_bs.ptlog 10 --host skewed --boot 0123456789abcdef0123456789abcdef \
		--maxerror 5000 2>/dev/null
	"$PT" dump hs_as.ptlog hs_bs.ptlog --no-symbols >hs_skew.txt 2>&1
	got=$(hs_order '"[ab][0-9]"$' hs_skew.txt 's/"//g')
	[ "$got" = "a1 a2 a3 b1 b2" ] && pass "hosts: a host whose clock is 10 s ahead merges in the order its clock says" ||
		fail "hosts: a host whose clock is 10 s ahead merges in the order its clock says" "got '$got': $(head -5 hs_skew.txt)"
	has "hosts: the uncertainty is the sum of the two maxerror" \
		"^# order: between the 2 hosts' clocks uncertain by up to 0.007000 s" hs_skew.txt
	"$PT" dump hs_as.ptlog hs_bs.ptlog --no-symbols --clock-offset skewed=-10s >hs_fixed.txt 2>&1
	got=$(hs_order '"[ab][0-9]"$' hs_fixed.txt 's/"//g')
	[ "$got" = "$HS_ORDER" ] && grep -q 'host skewed.*--clock-offset -10.000000000 s' hs_fixed.txt &&
		pass "hosts: --clock-offset HOST=-10s puts it back in the true order" ||
		fail "hosts: --clock-offset HOST=-10s puts it back in the true order" "got '$got': $(head -5 hs_fixed.txt)"
	"$PT" stats hs_as.ptlog hs_bs.ptlog --no-symbols --clock-offset skewed=-10000ms >hs_fixst.txt 2>&1
	has "hosts: stats states the uncertainty" "^order: between the 2 hosts' clocks uncertain by up to 0.007000 s" hs_fixst.txt
	"$SHIFT" hs_b.ptlog hs_bu.ptlog 10 --host skewed --boot 0123456789abcdef0123456789abcdef --unsync 2>/dev/null
	"$PT" dump hs_as.ptlog hs_bu.ptlog --no-symbols >hs_unsync.txt 2>&1
	has "hosts: a clock not synchronised makes the order unsynchronised" "^# order: .*unsynchronised" hs_unsync.txt
	refused "hosts: --clock-offset for a host no log names is refused" 1 "no log names host 'nosuch'" \
		"$PT" dump hs_as.ptlog hs_bs.ptlog --no-symbols --clock-offset nosuch=1s
	refused "hosts: a --clock-offset without a duration is a usage error" 2 "bad --clock-offset" \
		"$PT" dump hs_as.ptlog --clock-offset skewed=soon

	# a log of version 4: no host
	"$SHIFT" hs_b.ptlog hs_b4.ptlog 0 --v4 2>/dev/null
	"$PT" dump hs_as.ptlog hs_b4.ptlog --no-symbols >hs_v4.txt 2>&1
	got=$(hs_order '"[ab][0-9]"$' hs_v4.txt 's/"//g')
	grep -q '^# log hs_b4.ptlog: host unknown-1 (the log names no host)' hs_v4.txt &&
		grep -q '^# order: .*unknown' hs_v4.txt && [ "$got" = "$HS_ORDER" ] &&
		pass "hosts: a version 4 log reads as host unknown, the order's uncertainty unknown" ||
		fail "hosts: a version 4 log reads as host unknown, the order's uncertainty unknown" "$(head -4 hs_v4.txt)"

	# a hostile host name: escape sequences and a path
	"$SHIFT" hs_b.ptlog hs_evil.ptlog 0 --host "$(printf '../../\033[31mx\nz')" 2>/dev/null
	"$PT" dump hs_a.ptlog hs_evil.ptlog --no-symbols >hs_evil.txt 2>&1
	rm -rf hs_evil_ctf
	"$PT" convert hs_a.ptlog hs_evil.ptlog --to ctf hs_evil_ctf --no-symbols >/dev/null 2>&1
	! grep -q "$(printf '\033')" hs_evil.txt && grep -q 'host \.\./\.\./\\x1b\[31mx\\x0az' hs_evil.txt &&
		[ "$(ls hs_evil_ctf)" = "$(printf 'host1-hosta\nhost2-.._..___31mx_z')" ] &&
		pass "hosts: a hostile host name is printed escaped and names no path" ||
		fail "hosts: a hostile host name is printed escaped and names no path" "$(head -3 hs_evil.txt | od -c | head; ls hs_evil_ctf)"

	if command -v ot_start >/dev/null 2>&1 && command -v protoc >/dev/null 2>&1 &&
		ot_start hs_ot; then
		timeout 120 "$PT" export hs_a.ptlog hs_bs.ptlog --otlp "http://127.0.0.1:$OT_PORT" \
			--no-symbols >hs_ot.out 2>&1
		ot_stop
		ot_decode hs_ot.rx
		grep -h -A2 'key: "host.name"' hs_ot.rx/*.txt | grep -o 'string_value: "[a-z]*"' | sort -u >hs_ot_hosts.txt
		[ "$(cat hs_ot_hosts.txt | tr '\n' ' ')" = 'string_value: "hosta" string_value: "skewed" ' ] &&
			pass "hosts: export --otlp of two logs names each one's host" ||
			fail "hosts: export --otlp of two logs names each one's host" "$(cat hs_ot_hosts.txt hs_ot.out)"
		# sent while recording: each file's own host, and its host.id
		ot_start hs_otl
		unshare --uts sh -c "hostname hostlive && timeout 120 '$PT' record -o hs_live.d \
			--otlp 'http://127.0.0.1:$OT_PORT' -- '$EMIT' 'l1 l2'" >hs_otl.out 2>&1
		ot_stop
		ot_decode hs_otl.rx
		grep -h -A2 'key: "host.name"' hs_otl.rx/*.txt | grep -o 'string_value: "[a-z]*"' | sort -u >hs_otl_hosts.txt
		[ "$(cat hs_otl_hosts.txt)" = 'string_value: "hostlive"' ] &&
			grep -q 'key: "host.id"' hs_otl.rx/*.txt &&
			pass "hosts: record --otlp names the host each file was written on, with its host.id" ||
			fail "hosts: record --otlp names the host each file was written on, with its host.id" "$(cat hs_otl_hosts.txt hs_otl.out | head -8)"
	else
		skip "hosts: export --otlp names each log's host" "no receiver (python3, protoc, libcurl)"
	fi
fi
