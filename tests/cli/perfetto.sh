#!/bin/sh
# SPDX-License-Identifier: MIT
# convert --to perfetto: Perfetto's protobuf trace, decoded by protoc with
# the project's subset of Perfetto's schema (tests/perfetto/
# trace_subset.proto) and checked event by event against dump of the same
# log (tests/cli/perfetto_check.py): tracks of processes and threads, names,
# slices from begin/end pairs (nested, unmatched, --no-pair), absolute
# times once the increments are added up, text and binary data, truncation,
# call sites; data values that repeat interned (string_value_iid), unique
# ones inline at no extra cost; logs of several processes and threads, a stream that looped
# and lost events, a log that wrapped, events of 30,000 and 40,000 bytes of
# data (tests/cli/ptbigdata.c); standard output; an existing file;
# memory bounded on a log of a million events.
# Sourced by tests/cli/run.sh (its helpers and variables).

PF_PROTO_DIR="$ROOT/tests/perfetto"
PF_CHECK="python3 $HERE/perfetto_check.py"
# pf_decode TRACE OUT: the trace as text, by protoc and the subset
pf_decode() {
	protoc --decode=perfetto.protos.Trace --proto_path="$PF_PROTO_DIR" \
		"$PF_PROTO_DIR/trace_subset.proto" <"$1" >"$2" 2>"$2.err"
}
# pf_matches NAME LOG [CONVERT OPTIONS...]: converts LOG, decodes it and
# checks it against dump of LOG with the same options (--no-pair for the
# checker's pairing too)
pf_matches() {
	n=$1 log=$2; shift 2
	rm -f pf.out
	if ! "${PF_PT:-$PT}" convert "$log" --to perfetto pf.out "$@" 2>pf.err; then
		fail "$n" "convert failed: $(cat pf.err)"; return
	fi
	# dump takes the window options, not the pairing ones
	dopts=""
	for o in "$@"; do case $o in --no-pair) ;; *) dopts="$dopts $o" ;; esac; done
	"$PT" dump "$log" --format json $dopts >pf.jsonl 2>/dev/null
	if ! pf_decode pf.out pf.txt; then
		fail "$n" "protoc: $(head -c 400 pf.txt.err)"; return
	fi
	pairing=""; case " $* " in *" --no-pair "*) pairing=--no-pair ;; esac
	if out=$($PF_CHECK pf.txt pf.jsonl $pairing 2>&1); then pass "$n ($out)"; else fail "$n" "$out"; fi
}

if [ $have_python = 0 ] || ! command -v protoc >/dev/null 2>&1; then
	skip "perfetto: all checks" "needs python3 and protoc (protobuf-compiler, scripts/install-deps.sh)"
elif [ -z "$EMIT" ]; then
	skip "perfetto: all checks" "no ptemit (cc failed: $(head -c 200 ptemit.err 2>/dev/null))"
else
	# four threads: nesting of two kinds and of one kind, unmatched begins
	# and ends, pairs across threads that never pair; text data, call
	# sites (record keeps the images), a child process
	"$PT" record -o pfpairs.ptlog -- "$EMIT" \
		'req_begin db:begin db:end req_end lone_begin stray_end outer_begin outer_begin outer_end outer_end mix_begin mix:end child=kid' \
		'a_begin b_begin a_end count=50,tick lock_take lock_give' \
		'x_begin sleep=20' 'sleep=40 x_end' >/dev/null 2>pf.rec
	pf_matches "perfetto: slices, instants, tracks, times, data and call sites match dump" pfpairs.ptlog
	grep -q "source_location_iid" pf.txt && grep -q "source_locations {" pf.txt &&
		pass "perfetto: call sites are interned and referred to by iid" ||
		fail "perfetto: call sites are interned and referred to by iid" "$(grep -c source pf.txt)"
	# each sequence cleared once at its start; no event packet spends two
	# bytes on SEQ_NEEDS_INCREMENTAL_STATE (docs/PERFETTO.md, "Size per event")
	nseq=$(sed -n 's/^ *trusted_packet_sequence_id: //p' pf.txt | sort -u | wc -l)
	[ "$(grep -c '^ *sequence_flags: 1$' pf.txt)" -eq "$nseq" ] &&
		[ "$(grep -c '^ *sequence_flags:' pf.txt)" -eq "$nseq" ] &&
		pass "perfetto: each of the $nseq sequences cleared once, no flags on its events" ||
		fail "perfetto: each sequence cleared once, no flags on its events" \
			"$nseq sequences, $(grep -c sequence_flags pf.txt) flags"
	[ "$(grep -c 'TYPE_SLICE_BEGIN' pf.txt)" -eq 5 ] && [ "$(grep -c 'TYPE_SLICE_END' pf.txt)" -eq 5 ] &&
		pass "perfetto: the five pairs of the log are slices" ||
		fail "perfetto: the five pairs of the log are slices" "$(grep -c TYPE_SLICE pf.txt)"
	[ "$(grep -c 'name: "tick"' pf.txt)" -eq 1 ] &&
		pass "perfetto: a name is interned once on its sequence for its 50 events" ||
		fail "perfetto: a name is interned once on its sequence for its 50 events" "$(grep -c '"tick"' pf.txt)"
	pf_matches "perfetto: --no-pair makes every event an instant" pfpairs.ptlog --no-pair
	[ -s pf.txt ] && ! grep -q TYPE_SLICE pf.txt && pass "perfetto: --no-pair leaves no slice" ||
		fail "perfetto: --no-pair leaves no slice" "$(grep -c TYPE_SLICE pf.txt)"
	pf_matches "perfetto: --no-symbols writes no call site" pfpairs.ptlog --no-symbols
	[ -s pf.txt ] && ! grep -q source_location pf.txt && pass "perfetto: --no-symbols, no source location" ||
		fail "perfetto: --no-symbols, no source location" "$(grep -c source_location pf.txt)"

	# data values that repeat on a thread: the first time inline, the second
	# interned (debug_annotation_string_values), later ones by iid alone;
	# 16 values of 16 bytes a thread, text on one, binary (hex) on the
	# other, 20,000 events each.  Every value is checked against dump.
	"$PT" record -o pfrepeat.ptlog --no-images -- "$EMIT" 'values=20000,16,text,rep.t' \
		'values=20000,16,binary,rep.b' >/dev/null 2>&1
	pf_matches "perfetto: repeating data values match dump" pfrepeat.ptlog
	pf_events=$(grep -c '^ *track_event {' pf.txt)
	pf_bpe=$(awk -v s="$(wc -c <pf.out)" -v n="$pf_events" 'BEGIN { printf "%.2f", s / n }')
	byiid=$(grep -c 'string_value_iid:' pf.txt); interned=$(grep -c 'debug_annotation_string_values {' pf.txt)
	# 2 x 16 values interned once each; every later event by iid
	[ "$interned" -eq 32 ] && [ "$byiid" -eq $((40000 - 32)) ] &&
		pass "perfetto: 32 repeating values interned once, $byiid events by iid ($pf_bpe B per event)" ||
		fail "perfetto: repeating values interned once, then by iid" \
			"$interned interned, $byiid by iid, $pf_bpe B per event"
	repeat_bpe=$pf_bpe
	# the same log unique: no value meets itself again, none interned,
	# each written inline as before interning existed
	"$PT" record -o pfunique.ptlog --no-images -- "$EMIT" 'values=20000,0,text,uniq.t' \
		'values=20000,0,binary,uniq.b' >/dev/null 2>&1
	pf_matches "perfetto: unique data values match dump" pfunique.ptlog
	pf_events=$(grep -c '^ *track_event {' pf.txt)
	pf_bpe=$(awk -v s="$(wc -c <pf.out)" -v n="$pf_events" 'BEGIN { printf "%.2f", s / n }')
	! grep -q 'string_value_iid\|debug_annotation_string_values' pf.txt &&
		[ "$(grep -c '^ *string_value: ' pf.txt)" -ge 40000 ] &&
		pass "perfetto: unique values all inline, none interned ($pf_bpe B per event, repeating $repeat_bpe)" ||
		fail "perfetto: unique values all inline" "$(grep -c string_value pf.txt) string values"
	# more distinct values than the recent ones kept (10,000 cycling on a
	# thread, 4,096 slots): values pushed out are written inline again,
	# every one still equal to dump's
	"$PT" record -o pfmany.ptlog --no-images -- "$EMIT" 'values=40000,10000,binary,many' \
		>/dev/null 2>&1
	pf_matches "perfetto: more distinct values than the cache keeps match dump" pfmany.ptlog

	# several processes and threads, text and binary data, data truncated
	# when recorded (forker's big event)
	pf_matches "perfetto: forker's processes, binary and truncated data match dump" fork.ptlog
	grep -q 'name: "truncation"' pf.txt && grep -q "uint_value" pf.txt &&
		pass "perfetto: truncation is an annotation" || fail "perfetto: truncation is an annotation" "$(grep -c truncation pf.txt)"
	# a stream that looped: OVERFLOW events on the system track, the lost
	# events in the summary
	pf_matches "perfetto: a looping stream with losses matches dump" loop.ptlog
	grep -q 'name: "trace system events"' pf.txt && grep -q 'name: "posix_trace_overflow"' pf.txt &&
		pass "perfetto: OVERFLOW events are on the system track" ||
		fail "perfetto: OVERFLOW events are on the system track" "$(grep -c overflow pf.txt)"
	# a log of LOOP policy that wrapped: its oldest blocks overwritten
	"$PT" record -o pfwrap.ptlog --log-policy loop --log-size 1M -- "$EMIT" \
		'count=100000,w.one' 'count=100000,w.two' >/dev/null 2>&1
	# wrapped: fewer of the 200,000 events are left than were posted
	kept=$("$PT" dump pfwrap.ptlog 2>/dev/null | grep -c ' w\.\(one\|two\) ')
	[ "$kept" -gt 0 ] && [ "$kept" -lt 200000 ] && pass "perfetto: the LOOP log wrapped ($kept events of 200000 kept)" ||
		fail "perfetto: the LOOP log wrapped" "$kept events of 200000 kept"
	pf_matches "perfetto: a LOOP log that wrapped matches dump" pfwrap.ptlog

	# events larger than the output buffer's room (30,000 and 300,000 bytes
	# of binary data, 40,000 of text): written from a buffer of their own
	if [ -x "$BUILD/tests/cli/ptbigdata" ] && "$BUILD/tests/cli/ptbigdata" pfbigdata.ptlog 2>pf.err; then
		pf_matches "perfetto: events of 30,000, 40,000 and 300,000 bytes of data match dump" pfbigdata.ptlog
		grep -q 'string_value: "000102' pf.txt && pass "perfetto: 30,000 bytes of binary data in hex" ||
			fail "perfetto: 30,000 bytes of binary data in hex" "$(grep -c string_value pf.txt)"
	else
		skip "perfetto: events larger than the output buffer" "no ptbigdata: $(cat pf.err 2>/dev/null)"
	fi

	# the set of what sequences interned at its bound (6 entries in this
	# build): emptied, every sequence cleared and started again (defaults,
	# clock snapshot, names and sites interned again) at its next event
	if [ -x "$BUILD/tests/cli/posixtrace-small-intern" ]; then
		for l in pfpairs loop pfrepeat; do
			PF_PT=$BUILD/tests/cli/posixtrace-small-intern \
				pf_matches "perfetto: $l.ptlog with the interned set at its bound matches dump" $l.ptlog
			seqs=$(grep -c 'thread {' pf.txt); clears=$(grep -c 'sequence_flags: 1$' pf.txt)
			[ "$clears" -gt $((seqs + 1)) ] &&
				pass "perfetto: sequences started again at the bound ($clears starts, $seqs threads)" ||
				fail "perfetto: sequences started again at the bound" "$clears starts, $seqs threads"
		done
		# the attacker's colliding values: in this build every value's hash
		# is one bit, all share one pair of slots, and 4 values cycling
		# make two of one hash (as a crafted log could): each must still
		# be written as itself, never named by the other's iid
		"$PT" record -o pfcollide.ptlog --no-images -- "$EMIT" 'values=4000,4,text,col.t' \
			'values=4000,4,binary,col.b' >/dev/null 2>&1
		PF_PT=$BUILD/tests/cli/posixtrace-small-intern \
			pf_matches "perfetto: values of colliding hashes match dump" pfcollide.ptlog
		byiid=$(grep -c 'string_value_iid:' pf.txt)
		[ "$byiid" -gt 0 ] && pass "perfetto: colliding values still interned ($byiid by iid)" ||
			fail "perfetto: colliding values still interned" "$byiid by iid"
		rm -f pfcollide.ptlog
	else
		skip "perfetto: the interned set at its bound" "no posixtrace-small-intern (make tests)"
	fi

	# --compression: Perfetto's compressed packets.  Expanded as
	# trace_processor's tokenizer expands them (perfetto_expand.py, which
	# also checks each bundle under 512 KB, one codec, whole frames), each
	# trace is byte for byte the plain one; an event larger than a bundle's
	# 480 KiB of packets (ptbigdata's 300,000 bytes, 600,000 in hex) is
	# written plain between two bundles.
	if "$PT" convert pfpairs.ptlog --to perfetto pfz.bin --force --compression zstd 2>&1 |
		grep -q "built without"; then
		skip "perfetto: --compression" "posixtrace built without zstd (libzstd-dev, scripts/install-deps.sh)"
	elif ! command -v zstd >/dev/null 2>&1; then
		skip "perfetto: --compression" "no zstd program to expand with (zstd, scripts/install-deps.sh)"
	else
		for l in pfpairs pfunique pfbigdata loop; do
			[ -f $l.ptlog ] || continue
			"$PT" convert $l.ptlog --to perfetto pfplain.bin --force 2>/dev/null
			for codec in deflate zstd; do
				n="perfetto: --compression $codec of $l.ptlog expands to the plain trace"
				rm -f pfz.bin pfz.x
				if ! "$PT" convert $l.ptlog --to perfetto pfz.bin --compression $codec 2>pf.err; then
					fail "$n" "convert failed: $(cat pf.err)"
				elif ! got=$(python3 "$HERE/perfetto_expand.py" pfz.bin pfz.x 2>&1); then
					fail "$n" "$got"
				elif ! cmp -s pfplain.bin pfz.x; then
					fail "$n" "differs: $(cmp pfplain.bin pfz.x 2>&1 | head -1)"
				else
					pass "$n ($got: bundles, codec, plain packets, largest bundle; $(wc -c <pfz.bin) of $(wc -c <pfplain.bin) bytes)"
					[ $l = pfbigdata ] && { [ "$(echo "$got" | cut -d' ' -f3)" -ge 1 ] &&
						pass "perfetto: --compression $codec writes the 600,000-byte packet plain" ||
						fail "perfetto: --compression $codec writes the 600,000-byte packet plain" "$got"; }
					if [ $l = pfunique ] && [ $codec = zstd ]; then
						bpe=$(awk -v s="$(wc -c <pfz.bin)" -v n=40000 'BEGIN { printf "%.2f", s / n }')
						plain=$(awk -v s="$(wc -c <pfplain.bin)" -v n=40000 'BEGIN { printf "%.2f", s / n }')
						awk -v b="$bpe" 'BEGIN { exit !(b <= 32) }' &&
							pass "perfetto: unique 16-byte values, zstd: $bpe B per event (plain $plain)" ||
							fail "perfetto: unique 16-byte values, zstd: at most 32 B per event" "$bpe"
					fi
				fi
			done
		done
		refused "perfetto: --compression of an unknown codec is a usage error" 2 "unknown --compression" \
			"$PT" convert pfpairs.ptlog --to perfetto pfz.bin --force --compression lz4
		refused "perfetto: --compression is for --to perfetto only" 2 "is for --to perfetto" \
			"$PT" convert pfpairs.ptlog --to chrome pfz.json --force --compression zstd
		rm -f pfz.bin pfz.x pfplain.bin pfz.json
	fi

	# standard output; an existing file is replaced only with --force
	"$PT" convert pfpairs.ptlog --to perfetto - >pfstdout.bin 2>/dev/null
	"$PT" convert pfpairs.ptlog --to perfetto pfagain.bin 2>/dev/null
	cmp -s pfstdout.bin pfagain.bin && pass "perfetto: FILE - writes the same trace to standard output" ||
		fail "perfetto: FILE - writes the same trace to standard output"
	refused "perfetto: an existing file is kept without --force" 1 "exists" \
		"$PT" convert pfpairs.ptlog --to perfetto pfagain.bin
	ok "perfetto: --force replaces it" "$PT" convert pfpairs.ptlog --to perfetto --force pfagain.bin

	# memory bounded: a million events (two threads), converted in less
	# than 64 MiB of peak RSS while the trace is larger than that would
	# allow to hold (checked: over 12 MiB of output)
	"$PT" record --size 64M -o pfbig.ptlog --no-images -- "$EMIT" 'count=500000,big.a' 'count=500000,big.b' \
		>/dev/null 2>&1
	rss=$(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$PT" convert pfbig.ptlog --to perfetto pfbig.bin) ||
		rss=""
	size=$(wc -c <pfbig.bin 2>/dev/null || echo 0)
	events=$("$PT" dump pfbig.ptlog 2>/dev/null | tail -n 1 | sed 's/# \([0-9]*\) events.*/\1/')
	[ -n "$rss" ] && [ "$rss" -lt 65536 ] && [ "$size" -gt 12000000 ] && [ "$events" -gt 900000 ] &&
		pass "perfetto: $events events in $rss KiB of peak RSS, $size bytes written" ||
		fail "perfetto: bounded memory" "rss ${rss:-?} KiB, $size bytes, ${events:-?} events"
	rm -f pfbig.bin pfbig.ptlog pfrepeat.ptlog pfunique.ptlog pfmany.ptlog
fi
