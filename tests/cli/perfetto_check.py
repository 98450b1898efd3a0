#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a Perfetto trace written by `posixtrace convert --to perfetto`
against `posixtrace dump --format json` of the same log (and window), for
tests/cli/perfetto.sh.

perfetto_check.py DECODED DUMP_JSONL [--no-pair]
    DECODED: the trace as `protoc --decode=perfetto.protos.Trace` prints it
    with tests/perfetto/trace_subset.proto.  Replays the trace as Perfetto
    reads it: each sequence's incremental state (cleared by its first
    packet, interned names and call sites, defaults, its incremental clock
    anchored by a clock snapshot), then checks event by event, in order,
    that the trace holds the dump's events: the absolute time (undated
    events marked so), the track (a thread's, its process's for a system
    event a thread posted, the system track for the others; one track per
    thread, named with its pid, tid and pthread_t), the name, the slice
    begin/end pairs NAME_begin/NAME_end and NAME:begin/NAME:end of one
    thread make (nested ones nested, unmatched ones instants; none with
    --no-pair), the data (text or hex; inline, or an iid resolved through
    the sequence's interned values), truncation, the call site; then
    that the last packet is the log summary with the dump's lost count.
    A field the subset does not name (protoc prints its number) fails.
    Prints "ok: N events" and exits 0, or the first problems and exits 1.
"""
import json
import re
import sys

MAX_PROBLEMS = 8
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQUENCE_CLOCK = 64
REALTIME = 1
SYSTEM_IDS = range(1, 9)

ESCAPES = {"n": 10, "t": 9, "r": 13, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8, "f": 12, "v": 11}


def unescape(s):
    """protoc's text format string (C escapes, octal for other bytes) to bytes."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(ord(c))
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        elif n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            out.append(ESCAPES[n])
            i += 2
    return bytes(out)


def parse_text(text):
    """protoc's text format to nested dicts: each field a list of values."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            if line[:-1].strip().isdigit():
                raise ValueError("a field the subset does not name: %s" % line)
            node = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(node)
            stack.append(node)
        else:
            key, value = line.split(":", 1)
            if key.strip().isdigit():
                raise ValueError("a field the subset does not name: %s" % line)
            value = value.strip()
            if value.startswith('"'):
                value = unescape(value[1:-1])
            elif re.fullmatch(r"-?\d+", value):
                value = int(value)
            stack[-1].setdefault(key.strip(), []).append(value)
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


class Sequence:
    def __init__(self):
        self.names, self.locations, self.annotation_names = {}, {}, {}
        self.values = {}  # interned data values (debug_annotation_string_values)
        self.clock_id, self.track = None, None
        self.clock = None  # the incremental clock's value
        self.cleared = False


def location_text(loc):
    fn = one(loc, "function_name", b"").decode("utf-8", "replace")
    f = one(loc, "file_name", b"").decode("utf-8", "replace")
    line = one(loc, "line_number")
    return fn, ("%s:%d" % (f, line)) if line else f


class Replay:
    """The trace as Perfetto reads it: events with absolute times."""

    def __init__(self, trace):
        self.seqs = {}
        self.tracks = {}
        self.events = []
        self.problems = []
        self.interned_values = 0  # annotations whose value is an iid
        for n, packet in enumerate(trace.get("packet", [])):
            self.packet(n, packet)

    def problem(self, text):
        self.problems.append(text)

    def packet(self, n, p):
        seq_id = one(p, "trusted_packet_sequence_id")
        if seq_id is None:
            return self.problem("packet %d: no trusted_packet_sequence_id" % n)
        seq = self.seqs.setdefault(seq_id, Sequence())
        flags = one(p, "sequence_flags", 0)
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            self.seqs[seq_id] = seq = Sequence()
            seq.cleared = True
        if "trace_packet_defaults" in p:
            d = one(p, "trace_packet_defaults")
            seq.clock_id = one(d, "timestamp_clock_id")
            seq.track = one(one(d, "track_event_defaults", {}), "track_uuid")
        for interned in p.get("interned_data", []):
            for e in interned.get("event_names", []):
                seq.names[one(e, "iid")] = one(e, "name")
            for e in interned.get("debug_annotation_names", []):
                seq.annotation_names[one(e, "iid")] = one(e, "name").decode()
            for e in interned.get("source_locations", []):
                seq.locations[one(e, "iid")] = e
            for e in interned.get("debug_annotation_string_values", []):
                seq.values[one(e, "iid")] = one(e, "str", b"")
        if "clock_snapshot" in p:
            self.snapshot(n, seq, one(p, "clock_snapshot"))
        if "track_descriptor" in p:
            self.descriptor(n, one(p, "track_descriptor"))
        if "track_event" in p:
            # trace_processor reads a sequence's interned data and
            # defaults only once its state was cleared (proto_trace_reader.cc);
            # SEQ_NEEDS_INCREMENTAL_STATE, which the events need not carry,
            # would only make it skip them otherwise
            if not seq.cleared:
                self.problem("packet %d: an event without incremental state" % n)
            self.event(n, seq, p, one(p, "track_event"))

    def snapshot(self, n, seq, snap):
        clocks = {one(c, "clock_id"): c for c in snap.get("clocks", [])}
        if one(snap, "primary_trace_clock") != "BUILTIN_CLOCK_REALTIME" or REALTIME not in clocks:
            return self.problem("packet %d: the snapshot does not anchor REALTIME" % n)
        mine = clocks.get(SEQUENCE_CLOCK)
        if mine is None or one(mine, "is_incremental") != "true":
            return self.problem("packet %d: no incremental clock %d" % (n, SEQUENCE_CLOCK))
        # the translation between the two clocks; 0 as written here
        seq.offset = one(clocks[REALTIME], "timestamp") - one(mine, "timestamp")
        seq.clock = one(mine, "timestamp")

    def descriptor(self, n, d):
        uuid = one(d, "uuid")
        if uuid in self.tracks:
            return self.problem("packet %d: track %d described twice" % (n, uuid))
        if "thread" in d:
            t = one(d, "thread")
            self.tracks[uuid] = ("thread", one(t, "pid"), one(t, "tid"), one(t, "thread_name").decode())
        elif "process" in d:
            pr = one(d, "process")
            self.tracks[uuid] = ("process", one(pr, "pid"), None, one(pr, "process_name").decode())
        else:
            self.tracks[uuid] = ("global", None, None, one(d, "name").decode())

    def event(self, n, seq, p, te):
        if seq.clock_id != SEQUENCE_CLOCK or seq.clock is None:
            return self.problem("packet %d: an event with no incremental clock" % n)
        seq.clock = (seq.clock + one(p, "timestamp", 0)) % (1 << 64)
        ev = {"packet": n, "ts": seq.clock + seq.offset, "type": one(te, "type"),
              "track": one(te, "track_uuid", seq.track), "annotations": {}}
        if "name_iid" in te:
            iid = one(te, "name_iid")
            if iid not in seq.names:
                self.problem("packet %d: name iid %d not interned on its sequence" % (n, iid))
            ev["name"] = seq.names.get(iid, b"?").decode("utf-8", "replace")
        elif "name" in te:
            ev["name"] = one(te, "name").decode("utf-8", "replace")
        if "source_location_iid" in te:
            iid = one(te, "source_location_iid")
            if iid not in seq.locations:
                self.problem("packet %d: source location %d not interned" % (n, iid))
            else:
                ev["site"] = location_text(seq.locations[iid])
        elif "source_location" in te:
            ev["site"] = location_text(one(te, "source_location"))
        for a in te.get("debug_annotations", []):
            name = seq.annotation_names.get(one(a, "name_iid"))
            if name is None:
                self.problem("packet %d: annotation name not interned" % n)
                continue
            for k in ("string_value", "uint_value", "bool_value"):
                if k in a:
                    ev["annotations"][name] = one(a, k)
            if "string_value_iid" in a:
                # trace_processor: the sequence's interned value
                # (util/proto_to_args_parser.cc, string_value_iid)
                iid = one(a, "string_value_iid")
                if iid not in seq.values:
                    self.problem("packet %d: string value iid %d not interned on its sequence" % (n, iid))
                else:
                    ev["annotations"][name] = seq.values[iid]
                    self.interned_values += 1
        self.events.append(ev)


def pairing_roles(events, pairing):
    """The role of each dump event: pairs.c's default rules, unbounded."""
    roles = ["i"] * len(events)
    slices = [None] * len(events)
    if not pairing:
        return roles, slices
    stacks = {}
    for i, e in enumerate(events):
        if e["id"] in SYSTEM_IDS or not e.get("ts_ns") or not (e["pid"] or e["thread"] != "0x0" or e.get("tid")):
            continue
        m = re.fullmatch(r"(.+)([_:])(begin|end)", e["name"])
        if not m:
            continue
        key, thread = m.group(1) + m.group(2), (e["pid"], e["thread"])
        stack = stacks.setdefault(thread, [])
        if m.group(3) == "begin":
            stack.append((key, i, m.group(1)))
            continue
        for j in range(len(stack) - 1, -1, -1):
            if stack[j][0] == key:
                roles[stack[j][1]], roles[i] = "B", "E"
                slices[stack[j][1]] = stack[j][2]
                del stack[j:]
                break
    return roles, slices


def check_event(n, d, ev, role, slice_name, tracks, thread_tracks, problems):
    where = "event %d (%s at %s)" % (n, d["name"], d.get("ts_ns"))
    want_type = {"i": "TYPE_INSTANT", "B": "TYPE_SLICE_BEGIN", "E": "TYPE_SLICE_END"}[role]
    if ev["type"] != want_type:
        problems.append("%s: %s, not %s" % (where, ev["type"], want_type))
    if d.get("ts_ns"):
        if ev["ts"] != d["ts_ns"]:
            problems.append("%s: time %d, not %d" % (where, ev["ts"], d["ts_ns"]))
    elif ev["annotations"].get("undated") != "true":
        problems.append("%s: an undated event not marked undated" % where)
    want_name = slice_name if role == "B" else (None if role == "E" else d["name"])
    if ev.get("name") != want_name:
        problems.append("%s: name %r, not %r" % (where, ev.get("name"), want_name))
    track = tracks.get(ev["track"])
    has_thread = d["pid"] or d["thread"] != "0x0" or d.get("tid")
    if track is None:
        problems.append("%s: track %s not described" % (where, ev["track"]))
    elif not has_thread:
        if track[0] != "global" or track[3] != "trace system events":
            problems.append("%s: not on the system track: %s" % (where, track))
    elif d["id"] in SYSTEM_IDS:
        if track[0] != "process" or track[1] != d["pid"]:
            problems.append("%s: a system event not on its process track: %s" % (where, track))
    else:
        key = (d["pid"], d["thread"])
        if thread_tracks.setdefault(key, ev["track"]) != ev["track"]:
            problems.append("%s: a second track for thread %s" % (where, key))
        tid_ok = track[2] == d["tid"] if d.get("tid") else track[2] >= 1 << 22
        if track[0] != "thread" or track[1] != d["pid"] or not tid_ok or d["thread"] not in track[3]:
            problems.append("%s: track %s is not thread %s/%s/%s" % (where, track, d["pid"], d.get("tid"), d["thread"]))
    prefix = "end_" if role == "E" else ""
    a = ev["annotations"]
    if "text" in d:
        got = a.get(prefix + "data")
        if got is None or got.decode("utf-8", "replace") != d["text"]:
            problems.append("%s: data %r, not %r" % (where, got, d["text"]))
    elif d["len"]:
        got = a.get(prefix + "data_hex")
        if got is None or got.decode() != d["data_hex"]:
            problems.append("%s: data_hex %r, not %r" % (where, got, d["data_hex"]))
    elif prefix + "data" in a or prefix + "data_hex" in a:
        problems.append("%s: data where the event has none" % where)
    if (d["truncation"] != "none") != (prefix + "truncation" in a):
        problems.append("%s: truncation %s vs %s" % (where, d["truncation"], a.get(prefix + "truncation")))
    if "site" in d:
        fn = d["site"] if not d.get("inlined") else "%s (inlined into %s)" % (d["inlined"], d["site"])
        if ev.get("site") != (fn, d.get("source", "")):
            problems.append("%s: call site %s, not %s" % (where, ev.get("site"), (fn, d.get("source"))))
    elif "site" in ev:
        problems.append("%s: a call site where the dump has none" % where)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    with open(sys.argv[1], encoding="latin-1") as f:
        try:
            replay = Replay(parse_text(f.read()))
        except ValueError as err:
            print(err)
            return 1
    dump, summary = [], None
    with open(sys.argv[2]) as f:
        for line in f:
            obj = json.loads(line)
            if "summary" in obj:
                summary = obj["summary"]
            else:
                dump.append(obj)
    problems = replay.problems
    events = replay.events
    if not events or events[-1].get("name") != "posixtrace log summary":
        problems.append("the last event is not the log summary")
    else:
        last = events.pop()
        if summary and last["annotations"].get("lost_events") != summary["lost"]:
            problems.append("summary: lost %s, dump says %s" % (last["annotations"].get("lost_events"), summary["lost"]))
    if len(events) != len(dump):
        problems.append("%d events in the trace, %d in the dump" % (len(events), len(dump)))
    roles, slices = pairing_roles(dump, "--no-pair" not in sys.argv[3:])
    thread_tracks = {}
    for n, (d, ev) in enumerate(zip(dump, events)):
        check_event(n, d, ev, roles[n], slices[n], replay.tracks, thread_tracks, problems)
        if len(problems) > MAX_PROBLEMS:
            break
    for p in problems[:MAX_PROBLEMS]:
        print(p)
    if problems:
        return 1
    print("ok: %d events, %d slices, %d tracks, %d values by iid"
          % (len(events), roles.count("B"), len(replay.tracks), replay.interned_values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
