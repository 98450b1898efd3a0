# SPDX-License-Identifier: MIT
"""Checks what posixtrace export sent against dump of the same log.

Usage: otlp_check.py DECODED_DIR DUMP.jsonl... [--trace-per-log] [--expect-missing]
DECODED_DIR holds the requests the receiver accepted, as protoc --decode
printed them (NNNN-traces.txt, NNNN-logs.txt), of one export of the logs
whose dumps are given (each a summary record).  From dump's events it
builds what export must send, by the rules export documents: begin/end
pairs of a thread (NAME_begin/NAME_end, NAME:begin/NAME:end; an end closes
the innermost open begin of its kind, begins open inside it are left open)
are spans nested by thread; a begin whose end never came is a span marked
posixtrace.unfinished that ends with its enclosing span or at the log's
last time; other user events are events of the innermost open span of
their thread (the first 128 of a span; the others are log records with
the span's trace and span ids), else log records; system events are log records (ERROR
severity 17, OVERFLOW 13, the others 9), plus one summary record.  Every
span (name, times, thread, data, parent, trace id), span event and record
must be there exactly once, with its process's resource.  With
--expect-missing, the requests may lack items (a receiver that failed on
purpose): each one present must still be exactly right, none twice.
Prints the counts; exits 1 with the problems found.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfetto_check import parse_text  # noqa: E402  (protoc's text format)

SYSTEM_IDS = range(1, 9)
ERROR_ID, OVERFLOW_ID = 8, 4
EVENTS_PER_SPAN = 128  # events of a span; the others are records linked to it


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def attrs_of(msg):
    out = {}
    for kv in msg.get("attributes", []):
        v = one(kv, "value", {})
        for k in ("string_value", "int_value", "bool_value"):
            if k in v:
                val = v[k][0]
                if k == "bool_value":
                    val = val in (True, "true", 1)
                elif isinstance(val, bytes):
                    val = val.decode("utf-8", "surrogateescape")
                out[one(kv, "key").decode()] = val
    return out


def role_of(name):
    m = re.fullmatch(r"(.+)([_:])(begin|end)", name)
    if not m:
        return None, None, None
    return m.group(3), m.group(1) + m.group(2), m.group(1)


def paired_indexes(events):
    """The indexes of begins and ends that pair (pairs.c's rules)."""
    stacks, paired = {}, set()
    for i, e in enumerate(events):
        role, kind, _ = role_of(e["name"])
        if role is None or e["id"] in SYSTEM_IDS:
            continue
        st = stacks.setdefault((e["pid"], e["thread"]), [])
        if role == "begin":
            st.append((kind, i))
            continue
        for k in range(len(st) - 1, -1, -1):
            if st[k][0] == kind:
                paired.add(st[k][1])
                paired.add(i)
                del st[k:]
                break
    return paired


def data_attrs(e, prefix="posixtrace."):
    if "text" in e:
        return {prefix + "data": e["text"]}
    if e.get("len"):
        return {prefix + "data_hex": e["data_hex"]}
    return {}


def expected(events):
    """Spans, span events and records export must send for dump's events."""
    paired = paired_indexes(events)
    last = max(e["ts_ns"] for e in events)
    stacks, spans, records = {}, [], []

    def close(st, ns, end=None):
        s = st.pop()
        s["end"] = ns
        if s["unfinished"]:
            s["attrs"]["posixtrace.unfinished"] = True
        elif end is not None:
            s["attrs"]["posixtrace.end"] = end["name"]
            s["attrs"].update(data_attrs(end, "posixtrace.end_"))
        spans.append(s)

    for i, e in enumerate(events):
        st = stacks.setdefault((e["pid"], e["thread"]), [])
        role, _, slice_name = role_of(e["name"])
        system = e["id"] in SYSTEM_IDS
        if i in paired and role == "end":
            while st and st[-1]["unfinished"]:
                close(st, e["ts_ns"])
            close(st, e["ts_ns"], e)
        elif role == "begin" and not system:
            attrs = {"posixtrace.begin": e["name"], "thread.id": e.get("tid")}
            attrs.update(data_attrs(e))
            spans_parent = st[-1] if st else None
            st.append({"name": slice_name, "start": e["ts_ns"], "pid": e["pid"], "tid": e.get("tid"),
                       "unfinished": i not in paired, "attrs": attrs, "events": [],
                       "parent": spans_parent, "site": e.get("site")})
        elif st and not system and len(st[-1]["events"]) < EVENTS_PER_SPAN:
            st[-1]["events"].append((e["ts_ns"], e["name"], tuple(sorted(data_attrs(e).items()))))
        else:
            sev = 17 if e["id"] == ERROR_ID else 13 if e["id"] == OVERFLOW_ID else 9
            linked = span_start(st[-1]) if st and not system else None
            records.append((e["ts_ns"], e["name"], sev, e["pid"], e.get("tid"),
                            tuple(sorted(data_attrs(e).items())), linked))
    for st in stacks.values():
        while st:
            close(st, last)
    return spans, records


def span_start(s):
    return (s["start"], s["tid"], s["name"])


def span_key(s):
    return (s["start"], s["tid"], s["name"])


def read_requests(directory):
    spans, records = [], []
    for f in sorted(os.listdir(directory)):
        if not f.endswith(".txt"):
            continue
        tree = parse_text(open(os.path.join(directory, f), encoding="latin-1").read())
        for rs in tree.get("resource_spans", []) + tree.get("resource_logs", []):
            res = attrs_of(one(rs, "resource", {}))
            for ss in rs.get("scope_spans", []):
                for s in ss.get("spans", []):
                    spans.append((res, s))
            for sl in rs.get("scope_logs", []):
                for r in sl.get("log_records", []):
                    records.append((res, r))
    return spans, records


def check_resource(res, pid, problems, what):
    for k in ("service.name", "host.name", "telemetry.sdk.name"):
        if k not in res:
            problems.append("%s: resource without %s" % (what, k))
    if res.get("process.pid") != pid:
        problems.append("%s: resource process.pid %s, the event's pid %s"
                        % (what, res.get("process.pid"), pid))
    if "host.id" in res and not re.fullmatch(r"[0-9a-f]{32}", res["host.id"]):
        problems.append("%s: host.id %r is not 32 hex digits" % (what, res["host.id"]))


def check_spans(want, got, problems, per_log, missing_ok):
    by_key = {span_key(s): s for s in want}
    if len(by_key) != len(want):
        problems.append("two spans of one thread start at the same time: the check cannot tell")
    by_id, seen = {}, set()
    for res, s in got:
        a = attrs_of(s)
        key = (one(s, "start_time_unix_nano"), a.get("thread.id"), one(s, "name").decode())
        w = by_key.get(key)
        if w is None:
            problems.append("a span dump does not have: %s" % (key,))
            continue
        if key in seen:
            problems.append("span sent twice: %s" % (key,))
        seen.add(key)
        by_id[one(s, "span_id")] = (w, s)
        check_resource(res, w["pid"], problems, "span %s" % (key,))
        if one(s, "end_time_unix_nano") != w["end"]:
            problems.append("span %s ends at %s, not %s" % (key, one(s, "end_time_unix_nano"), w["end"]))
        for k, v in w["attrs"].items():
            if a.get(k) != v:
                problems.append("span %s: attribute %s is %r, not %r" % (key, k, a.get(k), v))
        if a.get("posixtrace.unfinished") and not w["unfinished"]:
            problems.append("span %s marked unfinished" % (key,))
        if w["site"] and a.get("code.function.name") is None:
            problems.append("span %s: no code.function.name (site %s)" % (key, w["site"]))
        evs = sorted((one(e, "time_unix_nano"), one(e, "name").decode(),
                      tuple(sorted((k, v) for k, v in attrs_of(e).items()
                                   if k.startswith("posixtrace.data"))))
                     for e in s.get("events", []))
        if evs != sorted(w["events"]):
            problems.append("span %s: events %s, not %s" % (key, evs[:4], sorted(w["events"])[:4]))
    if not missing_ok and len(seen) != len(want):
        problems.append("%d spans missing: %s" % (len(want) - len(seen),
                                                  [k for k in by_key if k not in seen][:5]))
    traces = set()
    for sid, (w, s) in by_id.items():
        parent = one(s, "parent_span_id")
        if w["parent"] is None:
            if parent:
                problems.append("span %s has a parent, dump's has none" % (span_key(w),))
            traces.add(one(s, "trace_id"))
            continue
        if parent not in by_id:
            if not missing_ok:
                problems.append("span %s: its parent was not sent" % (span_key(w),))
            continue
        pw, ps = by_id[parent]
        if pw is not w["parent"]:
            problems.append("span %s: parent %s, not %s" % (span_key(w), span_key(pw), span_key(w["parent"])))
        if one(ps, "trace_id") != one(s, "trace_id"):
            problems.append("span %s: not in its parent's trace" % (span_key(w),))
    tops = sum(1 for w, _ in by_id.values() if w["parent"] is None)
    if per_log and len(traces) > 1:
        problems.append("--trace-per-log: %d trace ids" % len(traces))
    if not per_log and len(traces) != tops:
        problems.append("%d top-level spans share %d trace ids" % (tops, len(traces)))
    return len(seen), sum(len(w["events"]) for w in want), by_id


def check_records(want, got, problems, missing_ok, logs, spans_by_id):
    left = {}
    for r in want:
        left[r] = left.get(r, 0) + 1
    summaries = 0
    for res, r in got:
        a = attrs_of(r)
        name = one(r, "event_name", b"").decode()
        if name == "posixtrace log summary":
            summaries += 1
            continue
        span = spans_by_id.get(one(r, "span_id"))
        if one(r, "span_id") and (span is None or one(span[1], "trace_id") != one(r, "trace_id")):
            problems.append("record %s at %s: its span or trace id is no span's" % (name, one(r, "time_unix_nano")))
        key = (one(r, "time_unix_nano"), name, one(r, "severity_number"),
               res.get("process.pid"), a.get("thread.id"),
               tuple(sorted((k, v) for k, v in a.items() if k.startswith("posixtrace.data"))),
               span_start(span[0]) if span else None)
        if one(one(r, "body", {}), "string_value", b"").decode() != name:
            problems.append("record %s: body is not its name" % (key,))
        if left.get(key, 0) == 0:
            problems.append("a record dump does not have (or sent twice): %s" % (key,))
            continue
        left[key] -= 1
    if not missing_ok and sum(left.values()):
        problems.append("%d records missing: %s" % (sum(left.values()), [k for k, v in left.items() if v][:4]))
    if not missing_ok and summaries != logs:
        problems.append("%d summary records, not %d" % (summaries, logs))
    return len(want) - sum(left.values()), summaries


def main():
    directory = sys.argv[1]
    dumps = [a for a in sys.argv[2:] if not a.startswith("--")]
    per_log = "--trace-per-log" in sys.argv
    missing_ok = "--expect-missing" in sys.argv
    want_spans, want_records = [], []
    for dump in dumps:
        events = []
        for line in open(dump):
            e = json.loads(line)
            if "summary" not in e:
                events.append(e)
        spans, records = expected(events)
        want_spans += spans
        want_records += records
    got_spans, got_records = read_requests(directory)
    problems = []
    nspans, nevents, by_id = check_spans(want_spans, got_spans, problems, per_log, missing_ok)
    nrecords, nsummaries = check_records(want_records, got_records, problems, missing_ok,
                                         len(dumps), by_id)
    if problems:
        print("\n".join(problems[:20]))
        sys.exit(1)
    print("%d spans (%d unfinished), %d span events, %d records (%d linked to a span) + %d summary match dump"
          % (nspans, sum(1 for s in want_spans if s["unfinished"]), nevents, nrecords,
             sum(1 for r in want_records if r[-1]), nsummaries))


if __name__ == "__main__":
    main()
