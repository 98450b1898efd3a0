#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Comparisons for tests/cli/run.sh (posixtrace(1)).

compare.py emitted EMITTED DUMP_JSONL GROUP
    EMITTED: lines "emit PID NAME HEX" printed by examples/forker -v.
    GROUP "parent": events of the process that posted forker:start,
    GROUP "children": events of every other process.
    Exit 0 when the dump holds exactly those user events (data cut to
    MAXDATA bytes and marked truncated when longer).
compare.py ctf DUMP_JSONL BABELTRACE_TEXT
    Exit 0 when `babeltrace2 --clock-seconds` lists the same events as the
    dump: time, name, pid, thread, program address, truncation, data.  An
    event written later than its time (its stream's times went back) is
    at its recorded time once its time_raised is taken off.
compare.py order DUMP_JSONL CHROME_JSON
    Exit 0 when the Chrome file holds the dump's dated events in the same
    order (the command reorders nothing: both show the library's order),
    each at its own time: name (the original event name for a slice's
    begin or end), pid, and ts = microseconds after otherData.start (less
    args.time_raised_ns for an event placed later, where its track's times
    went back).
"""
import collections
import json
import re
import sys

MAXDATA = 1024


def dump_events(path):
    events = []
    with open(path) as f:
        for line in f:
            obj = json.loads(line)
            if "summary" not in obj:
                events.append(obj)
    return events


def compare_emitted(emitted_path, dump_path, group):
    emitted = []
    with open(emitted_path) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ")
            if parts[0] == "emit":
                emitted.append((int(parts[1]), parts[2], parts[3] if len(parts) > 3 else ""))
    parent = next((pid for pid, name, _ in emitted if name == "forker:start"), None)
    expected = collections.Counter()
    for pid, name, data in emitted:
        if (pid == parent) != (group == "parent"):
            continue
        trunc = "none"
        if len(data) > 2 * MAXDATA:
            data, trunc = data[: 2 * MAXDATA], "record"
        expected[(pid, name, data, trunc)] += 1
    pids = {key[0] for key in expected}
    got = collections.Counter()
    for e in dump_events(dump_path):
        if e["id"] >= 32 and e["pid"] in pids:
            got[(e["pid"], e["name"], e["data_hex"], e["truncation"])] += 1
    if not expected:
        print("nothing emitted by the %s" % group)
        return 1
    if got != expected:
        print("missing:", list((expected - got).items())[:5])
        print("unexpected:", list((got - expected).items())[:5])
        return 1
    return 0


BT_LINE = re.compile(
    r"^\[(\d+)\.(\d+)\] \(\S+\) (.*?): \{ cpu_id = (-?\d+) \}, \{ pid = (-?\d+), tid = (\S+), "
    r"prog_address = (\S+), truncation = \( \"(\w+)\" : container = \d+ \), "
    r"data_len = (\d+), data = \[ (.*?) ?\], text = .*, time_raised = (\d+) \}$")


def compare_ctf(dump_path, bt_path):
    want = collections.Counter()
    for e in dump_events(dump_path):
        want[(e["ts_ns"], e["name"], e.get("cpu", -1), e["pid"], int(e["thread"], 16),
              int(e["prog_address"], 16), e["truncation"], e["data_hex"])] += 1
    got = collections.Counter()
    with open(bt_path) as f:
        for line in f:
            m = BT_LINE.match(line)
            if not m:
                print("unparsed babeltrace2 line:", line[:120])
                return 1
            sec, nsec, name, cpu, pid, tid, pc, trunc, n, data, raised = m.groups()
            data_bytes = bytes(int(b) for b in re.findall(r"\[\d+\] = (\d+)", data))
            if len(data_bytes) != int(n):
                print("data length mismatch:", line[:120])
                return 1
            got[(int(sec) * 1000000000 + int(nsec) - int(raised), name, int(cpu), int(pid),
                 int(tid, 16),
                 int(pc, 16), trunc, data_bytes.hex())] += 1
    if got != want:
        print("only in dump:", list((want - got).items())[:3])
        print("only in babeltrace2:", list((got - want).items())[:3])
        return 1
    return 0


def compare_order(dump_path, chrome_path):
    with open(chrome_path) as f:
        doc = json.load(f)
    sec, nsec = doc["otherData"]["start"].split(".")
    start = int(sec) * 1000000000 + int(nsec)
    want = [(e["name"], e["pid"], (e["ts_ns"] - start) / 1000.0)
            for e in dump_events(dump_path) if e["ts_ns"] != 0]
    got = [(e["args"].get("event", e["name"]), e["pid"],
            float(e["ts"]) - e["args"].get("time_raised_ns", 0) / 1000.0)
           for e in doc["traceEvents"] if e["ph"] != "M"]
    if len(got) != len(want):
        print("%d events in the dump, %d in the Chrome file" % (len(want), len(got)))
        return 1
    for n, (w, g) in enumerate(zip(want, got)):
        if w[0] != g[0] or w[1] != g[1] or abs(w[2] - g[2]) > 0.0015:
            print("event %d: dump %s, chrome %s" % (n, w, g))
            return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "emitted":
        sys.exit(compare_emitted(sys.argv[2], sys.argv[3], sys.argv[4]))
    if sys.argv[1] == "order":
        sys.exit(compare_order(sys.argv[2], sys.argv[3]))
    sys.exit(compare_ctf(sys.argv[2], sys.argv[3]))
