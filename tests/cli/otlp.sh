# SPDX-License-Identifier: MIT
# export --otlp: logs sent over OTLP/HTTP to a receiver on 127.0.0.1
# (tests/cli/otlp_receiver.py, a free port) that gunzips each body; each
# accepted body is decoded by protoc with the project's subset of the OTLP
# schema (tests/otlp/otlp_subset.proto) and every span, span event and log
# record is checked against dump of the same log (tests/cli/otlp_check.py):
# names, nesting (parent ids, trace ids), times, attributes, resources,
# counts.  Then the receiver fails on purpose: 429 with Retry-After (seconds
# and an HTTP date), 503, 500 (not retried: dropped and counted), a closed
# connection, a stall past --timeout, partial success, a hostile answer
# (1 MiB, a count past the request's, a long message), no receiver at all,
# attempts spent: nothing is lost silently, retries are bounded, the exit
# status and the summary say what happened.  Headers from --header and
# OTEL_EXPORTER_OTLP_HEADERS reach the receiver and are never printed;
# OTEL_EXPORTER_OTLP_ENDPOINT and the per-signal endpoints (used as they
# are); two logs in one export; --batch-bytes.  host.id is the keyed hash systemd-id128 computes.  Every export
# runs under timeout(1); each receiver is killed when its check ends.
# Sourced by tests/cli/run.sh (its helpers and variables).

OT_PROTO_DIR="$ROOT/tests/otlp"
OT_RECEIVER="$HERE/otlp_receiver.py"
OT_CHECK="python3 $HERE/otlp_check.py"
OT_RX_PID=""

# ot_start NAME [FAULTS]: a receiver in directory NAME.rx; its port in OT_PORT
ot_start() {
	rm -rf "$1.rx" && mkdir "$1.rx"
	timeout 300 python3 "$OT_RECEIVER" "$1.rx/port" "$1.rx" "${2:-}" 2>"$1.rx/stderr" &
	OT_RX_PID=$!
	BG="$BG $OT_RX_PID"
	wait_for 20 test -s "$1.rx/port" || { OT_PORT=1; return 1; }
	OT_PORT=$(cat "$1.rx/port")
}
ot_stop() { [ -n "$OT_RX_PID" ] && kill "$OT_RX_PID" 2>/dev/null; wait "$OT_RX_PID" 2>/dev/null; OT_RX_PID=""; }
# ot_decode DIR: each accepted body as text (NNNN-SIGNAL.txt); false if protoc fails
ot_decode() {
	for f in "$1"/*.pb; do
		[ -e "$f" ] || continue
		case $f in *traces.pb) m=ExportTraceServiceRequest ;; *) m=ExportLogsServiceRequest ;; esac
		protoc --decode=posixtrace.otlp.$m --proto_path="$OT_PROTO_DIR" \
			"$OT_PROTO_DIR/otlp_subset.proto" <"$f" >"${f%.pb}.txt" 2>"${f%.pb}.err" || return 1
	done
}
# ot_export NAME LOG [OPTIONS...]: export to NAME's receiver; status in OT_RC
ot_export() {
	n=$1 log=$2; shift 2
	timeout 120 "$PT" export "$log" --otlp "http://127.0.0.1:$OT_PORT" "$@" >"$n.out" 2>"$n.err"
	OT_RC=$?
}
# ot_matches CHECK NAME LOG [CHECKER OPTIONS]: decoded and checked against dump
ot_matches() {
	c=$1 n=$2 log=$3; shift 3
	"$PT" dump "$log" --format json >"$n.jsonl" 2>/dev/null
	if ! ot_decode "$n.rx"; then
		fail "$c" "protoc: $(cat "$n".rx/*.err | head -c 400)"; return
	fi
	if out=$($OT_CHECK "$n.rx" "$n.jsonl" "$@" 2>&1); then pass "$c ($out)"; else fail "$c" "$out"; fi
}

if [ $have_python = 0 ] || ! command -v protoc >/dev/null 2>&1; then
	skip "otlp: all checks" "needs python3 and protoc (protobuf-compiler, scripts/install-deps.sh)"
elif [ -z "$EMIT" ]; then
	skip "otlp: all checks" "no ptemit (cc failed: $(head -c 200 ptemit.err 2>/dev/null))"
elif "$PT" export x --otlp http://127.0.0.1:1 2>&1 | grep -q "built without libcurl"; then
	skip "otlp: all checks" "posixtrace built without libcurl (libcurl4-openssl-dev, scripts/install-deps.sh)"
else
	# four threads and a child process: nested pairs of two kinds, a
	# begin left open inside a pair and one left open at the end, ends with
	# no begin, events in and out of spans, 200 events in one span (128
	# its events, the rest records linked to it), call sites
	"$PT" record -o ot.ptlog -- "$EMIT" \
		'req_begin db:begin db:end req_end lone_begin stray_end outer_begin outer_begin outer_end outer_end child=kid' \
		'a_begin b_begin a_end count=3,tick lock_take lock_give' \
		'x_begin count=200,tock x_end' 'y:begin sleep=20 y:end tail' >/dev/null 2>ot.rec

	ot_start ot1 && ot_export ot1 ot.ptlog --batch-spans 3 --header "Authorization=Bearer tok-secret-1"
	ot_stop
	[ "$OT_RC" = 0 ] && pass "otlp: export exits 0 when all is delivered" ||
		fail "otlp: export exits 0 when all is delivered" "exit $OT_RC: $(cat ot1.err)"
	ot_matches "otlp: spans, nesting, events, records and resources match dump" ot1 ot.ptlog
	[ "$(grep -c '/v1/traces ok application/x-protobuf [0-9]* gzip' ot1.rx/requests.log)" -ge 3 ] &&
		pass "otlp: spans in batches of --batch-spans, gzip, application/x-protobuf" ||
		fail "otlp: spans in batches of --batch-spans, gzip, application/x-protobuf" "$(cat ot1.rx/requests.log)"
	grep -q 'Bearer_tok-secret-1' ot1.rx/requests.log && ! grep -q 'tok-secret' ot1.err &&
		pass "otlp: --header reaches the receiver, never printed" ||
		fail "otlp: --header reaches the receiver, never printed" "$(cat ot1.err)"
	[ "$(grep -ch '^      span_id:' ot1.rx/*logs.txt | paste -sd+ | bc)" = 72 ] &&
		grep -q '72 events past 128 in a span, sent as log records' ot1.err &&
		pass "otlp: a span keeps 128 events, the 72 others are records linked to it" ||
		fail "otlp: a span keeps 128 events, the 72 others are records linked to it" "$(cat ot1.err)"
	if command -v systemd-id128 >/dev/null 2>&1 && [ -s /etc/machine-id ]; then
		want=$(systemd-id128 machine-id --app-specific=863bb4c1be9740f0bb34975751328dcf 2>/dev/null)
		raw=$(tr -d '\n-' </etc/machine-id)
		grep -q "string_value: \"$want\"" ot1.rx/*.txt && ! grep -rq "$raw" ot1.rx/*.txt &&
			pass "otlp: host.id is systemd's app-specific id, the machine id never sent" ||
			fail "otlp: host.id is systemd's app-specific id, the machine id never sent" "want $want"
	else
		skip "otlp: host.id is systemd's app-specific id" "no systemd-id128 or machine id"
	fi

	# the same log again: the same ids (stable)
	ot_start ot2 && ot_export ot2 ot.ptlog --batch-spans 3 --trace-per-log
	ot_stop
	ot_matches "otlp: --trace-per-log: one trace id for the log" ot2 ot.ptlog --trace-per-log
	a=$(grep -h ' span_id:' ot1.rx/*traces.txt | sort | md5sum) b=$(grep -h ' span_id:' ot2.rx/*traces.txt | sort | md5sum)
	[ "$a" = "$b" ] && pass "otlp: span ids are the same when the log is exported again" ||
		fail "otlp: span ids are the same when the log is exported again"

	# two logs in one export (each its summary record), requests bounded
	# by --batch-bytes: each body, uncompressed, at most 4 KiB
	"$PT" record -o ot2nd.ptlog -- "$EMIT" 'p_begin q:begin q:end p_end solo' >/dev/null 2>&1
	ot_start ot2b && ot_export ot2b ot.ptlog --batch-bytes 4K ot2nd.ptlog
	ot_stop
	"$PT" dump ot.ptlog --format json >ot2b-1.jsonl 2>/dev/null
	"$PT" dump ot2nd.ptlog --format json >ot2b-2.jsonl 2>/dev/null
	if [ "$OT_RC" = 0 ] && ot_decode ot2b.rx && out=$($OT_CHECK ot2b.rx ot2b-1.jsonl ot2b-2.jsonl 2>&1); then
		pass "otlp: two logs in one export match their dumps ($out)"
	else
		fail "otlp: two logs in one export match their dumps" "exit $OT_RC: $out $(cat ot2b.err)"
	fi
	# (an item larger than the bound goes alone: the span of 128 events)
	over=""
	for f in ot2b.rx/*.pb; do
		[ "$(wc -c <"$f")" -le 4096 ] && continue
		[ "$(grep -Ec '^    (spans|log_records) \{' "${f%.pb}.txt")" = 1 ] || over="$over $f"
	done
	# (without the bound: 4 requests, one per log and signal)
	[ -z "$over" ] && [ "$(ls ot2b.rx/*.pb | wc -l)" -gt 4 ] &&
		pass "otlp: --batch-bytes 4K: a body over 4096 bytes holds one item alone" ||
		fail "otlp: --batch-bytes 4K: a body over 4096 bytes holds one item alone" "$over"

	# endpoints and headers from the environment: the per-signal endpoints
	# are used as they are (the general one names no receiver here)
	ot_start ot3
	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 \
	OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:$OT_PORT/v1/traces" \
	OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="http://127.0.0.1:$OT_PORT/v1/logs" \
	OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20env-secret-2,X-Tenant=t1" \
		timeout 120 "$PT" export ot.ptlog -v >ot3.out 2>ot3.err
	rc=$?
	ot_stop
	[ $rc = 0 ] && grep -q 'Bearer_env-secret-2' ot3.rx/requests.log && ! grep -q 'secret' ot3.err &&
		pass "otlp: per-signal endpoints used as they are, OTEL_EXPORTER_OTLP_HEADERS decoded" ||
		fail "otlp: per-signal endpoints used as they are, OTEL_EXPORTER_OTLP_HEADERS decoded" "exit $rc: $(cat ot3.err)"
	ot_start ot3b
	OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$OT_PORT/" timeout 120 "$PT" export ot.ptlog >ot3b.out 2>ot3b.err
	rc=$?
	ot_stop
	[ $rc = 0 ] && grep -q '/v1/traces ok' ot3b.rx/requests.log && grep -q '/v1/logs ok' ot3b.rx/requests.log &&
		pass "otlp: OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces and /v1/logs" ||
		fail "otlp: OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces and /v1/logs" "exit $rc: $(cat ot3b.err)"

	# 429 (Retry-After seconds, then an HTTP date), 503 and a stall past
	# --timeout: retried, all delivered
	ot_start ot4 "429:1,503,429:date,stall:6"
	ot_export ot4 ot.ptlog --batch-spans 4 --backoff 0.05 --timeout 2 --attempts 5 -v
	ot_stop
	[ "$OT_RC" = 0 ] && grep -q ' 4 retries' ot4.err && grep -q 'Timeout was reached, attempt 5' ot4.err &&
		pass "otlp: 429, 503, a stall past --timeout: retried (4 retries), exit 0" ||
		fail "otlp: 429, 503, a stall past --timeout: retried (4 retries), exit 0" "exit $OT_RC: $(cat ot4.err)"
	grep -q 'HTTP 429, attempt 2 again in 1.000 s' ot4.err &&
		grep -Eq 'HTTP 429, attempt 4 again in [12]\.[0-9]* s' ot4.err &&
		pass "otlp: Retry-After honoured, in seconds and as an HTTP date" ||
		fail "otlp: Retry-After honoured, in seconds and as an HTTP date" "$(grep 429 ot4.err)"
	ot_matches "otlp: after retries, every span and record once" ot4 ot.ptlog

	# connections closed before any answer (each a new one): retried
	ot_start ot4c "close,close"
	ot_export ot4c ot.ptlog --backoff 0.05 -v
	ot_stop
	[ "$OT_RC" = 0 ] && grep -q ' 2 retries' ot4c.err && [ "$(grep -c 'Server returned nothing' ot4c.err)" = 2 ] &&
		pass "otlp: a connection closed without an answer is retried, exit 0" ||
		fail "otlp: a connection closed without an answer is retried, exit 0" "exit $OT_RC: $(cat ot4c.err)"
	ot_matches "otlp: after closed connections, every span and record once" ot4c ot.ptlog

	# 500: not retried, that request's items dropped and counted, exit 1
	ot_start ot5 "500"
	ot_export ot5 ot.ptlog --batch-spans 4 --backoff 0.05
	ot_stop
	# (the first request is of spans or of records, whichever batch filled first)
	[ "$OT_RC" = 1 ] && [ "$(grep -c '^0 ' ot5.rx/requests.log)" = 1 ] &&
		grep -Eq '4 (spans|log records) dropped: HTTP 500' ot5.err &&
		grep -Eq 'spans: [0-9]* sent, 0 refused by the receiver, (4 dropped; log records: [0-9]* sent, 0 refused, 0|0 dropped; log records: [0-9]* sent, 0 refused, 4) dropped' ot5.err &&
		pass "otlp: 500 is not retried, its 4 items dropped, counted, exit 1" ||
		fail "otlp: 500 is not retried, its 4 items dropped, counted, exit 1" "exit $OT_RC: $(cat ot5.err)"
	ot_matches "otlp: after a 500, the rest is delivered exactly" ot5 ot.ptlog --expect-missing

	# 503 each time: attempts bounded by --attempts
	ot_start ot6 "503,503,503,503,503"
	ot_export ot6 ot.ptlog --backoff 0.01 --attempts 3
	ot_stop
	[ "$OT_RC" = 1 ] && [ "$(grep -c '/v1/traces 503' ot6.rx/requests.log)" = 3 ] &&
		grep -q 'dropped: HTTP 503 after 3 attempts' ot6.err &&
		pass "otlp: 503 retried --attempts times, then dropped and said, exit 1" ||
		fail "otlp: 503 retried --attempts times, then dropped and said, exit 1" "exit $OT_RC: $(cat ot6.err; cat ot6.rx/requests.log)"

	# partial success: the refused count read from the response
	ot_start ot7 "partial:2"
	ot_export ot7 ot.ptlog
	ot_stop
	[ "$OT_RC" = 1 ] && grep -q 'spans: [0-9]* sent, 2 refused by the receiver, 0 dropped' ot7.err &&
		grep -q 'the receiver says: test refused 2' ot7.err &&
		pass "otlp: partial success: 2 refused, said, exit 1" ||
		fail "otlp: partial success: 2 refused, said, exit 1" "exit $OT_RC: $(cat ot7.err)"

	# a hostile answer: 1 MiB of body, 10^12 items rejected, a message of
	# 5,000 bytes: the refused count cut to the request's 4, the message to
	# 200 bytes
	ot_start ot7h "hostile"
	ot_export ot7h ot.ptlog --batch-spans 4
	ot_stop
	long=$(awk 'length > 400' ot7h.err | wc -l)
	[ "$OT_RC" = 1 ] && [ "$long" = 0 ] && grep -q 'the receiver says: mmmm' ot7h.err &&
		grep -Eq '(spans: [0-9]* sent, 4 refused by the receiver, 0 dropped; log records: [0-9]* sent, 0|spans: [0-9]* sent, 0 refused by the receiver, 0 dropped; log records: [0-9]* sent, 4) refused' ot7h.err &&
		pass "otlp: a hostile answer: refused cut to the request's items, message cut, exit 1" ||
		fail "otlp: a hostile answer: refused cut to the request's items, message cut, exit 1" "exit $OT_RC: $(cut -c1-300 ot7h.err)"

	# no receiver at all: bounded attempts, everything dropped and said
	timeout 60 "$PT" export ot.ptlog --otlp http://127.0.0.1:1 --attempts 2 --backoff 0.01 >ot8.out 2>ot8.err
	rc=$?
	[ $rc = 1 ] && grep -q 'spans: 0 sent, 0 refused by the receiver, [1-9][0-9]* dropped' ot8.err &&
		pass "otlp: no receiver: dropped after 2 attempts, exit 1" ||
		fail "otlp: no receiver: dropped after 2 attempts, exit 1" "exit $rc: $(cat ot8.err)"

	# --discard: encoded, not sent; no endpoint is a usage error
	timeout 60 "$PT" export ot.ptlog --discard >ot9.out 2>ot9.err && grep -q 'spans: [1-9][0-9]* encoded.*(discarded)' ot9.err &&
		pass "otlp: --discard encodes and sends nothing" || fail "otlp: --discard encodes and sends nothing" "$(cat ot9.err)"
	env -u OTEL_EXPORTER_OTLP_ENDPOINT -u OTEL_EXPORTER_OTLP_TRACES_ENDPOINT -u OTEL_EXPORTER_OTLP_LOGS_ENDPOINT \
		"$PT" export ot.ptlog >/dev/null 2>ot10.err
	rc=$?
	[ $rc = 2 ] && grep -q 'no receiver' ot10.err && pass "otlp: no endpoint is a usage error" ||
		fail "otlp: no endpoint is a usage error" "exit $rc: $(cat ot10.err)"
fi
